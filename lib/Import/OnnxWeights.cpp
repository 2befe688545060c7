#include "OnnxWeights.h"
#include "tc/Runtime/Safetensors.h"
#include "tc/Runtime/TensorIO.h"
#include "tc/Support/Error.h"
#include <map>

namespace tc {

namespace {

// The initializer's type as tc prints types (f32[10,32]), or its ONNX code.
std::string describe(const onnx::TensorProto &t) {
  std::optional<DType> dt = dtypeFromOnnx(t.data_type());
  std::string s = dt ? std::string(dtypeName(*dt)) : "ONNX type " + std::to_string(t.data_type());
  s += "[";
  for (int i = 0; i < t.dims_size(); ++i)
    s += (i ? "," : "") + std::to_string(t.dims(i));
  return s + "]";
}

} // namespace

size_t applyWeights(onnx::ModelProto &model, const std::string &weightsPath,
                    const std::string &modelFile) {
  SafetensorsFile w = readSafetensors(weightsPath);
  std::map<std::string, onnx::TensorProto *> byName;
  for (onnx::TensorProto &t : *model.mutable_graph()->mutable_initializer())
    byName.emplace(t.name(), &t);
  // Every tensor is checked before any initializer changes.
  std::vector<std::pair<onnx::TensorProto *, onnx::TensorProto>> replacements;
  for (const NamedTensor &nt : w.tensors) {
    auto it = byName.find(nt.name);
    if (it == byName.end())
      fail(weightsPath, ": tensor '", nt.name, "' is no initializer of ", modelFile);
    onnx::TensorProto fresh;
    if (!fresh.ParseFromString(serializeTensorProto(nt.tensor, nt.name)))
      fail(weightsPath, ": tensor '", nt.name, "' has no ONNX form");
    const onnx::TensorProto &old = *it->second;
    bool same = fresh.data_type() == old.data_type() && fresh.dims_size() == old.dims_size();
    for (int i = 0; same && i < old.dims_size(); ++i)
      same = fresh.dims(i) == old.dims(i);
    if (!same)
      fail(weightsPath, ": tensor '", nt.name, "' is ", nt.tensor.type().str(), ", ", modelFile,
           "'s initializer is ", describe(old));
    replacements.emplace_back(it->second, std::move(fresh));
  }
  for (auto &[slot, fresh] : replacements) {
    // Keep the initializer's doc string and metadata; replace its data.
    std::string doc = slot->doc_string();
    *slot = std::move(fresh);
    if (!doc.empty())
      slot->set_doc_string(doc);
  }
  return replacements.size();
}

} // namespace tc
