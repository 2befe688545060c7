#include "tc/Bench/Manifest.h"
#include "tc/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include <algorithm>
#include <filesystem>

namespace fs = std::filesystem;

namespace tc::bench {

namespace {
llvm::json::Value parseFile(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf)
    fail(path, ": cannot read the manifest: ", buf.getError().message());
  auto v = llvm::json::parse((*buf)->getBuffer());
  if (!v)
    fail(path, ": not JSON: ", llvm::toString(v.takeError()));
  if (!v->getAsObject())
    fail(path, ": the manifest is not a JSON object");
  return std::move(*v);
}

const llvm::json::Object &suitesOf(const llvm::json::Object &root, const std::string &path) {
  const llvm::json::Object *suites = root.getObject("suites");
  if (!suites)
    fail(path, ": no \"suites\" object");
  return *suites;
}

std::vector<fs::path> exportedCandidates(const std::string &name, const std::string &modelsDir) {
  std::vector<fs::path> out;
  for (const std::string &c : {name, name + ".onnx", name + ".dynamo.onnx"})
    out.push_back(fs::path(modelsDir) / c);
  return out;
}

// The first candidate that is an ONNX file (or a folder with model.onnx),
// with the test data sets beside it.
bool locateIn(BenchModel &m, const std::vector<fs::path> &candidates) {
  for (const fs::path &c : candidates) {
    fs::path onnx = fs::is_directory(c) ? c / "model.onnx" : c;
    if (!fs::is_regular_file(onnx))
      continue;
    m.onnxPath = onnx.string();
    m.missing.clear();
    m.dataDirs.clear();
    if (onnx.filename() == "model.onnx")
      for (const fs::directory_entry &e : fs::directory_iterator(onnx.parent_path()))
        if (e.path().filename().string().rfind("test_data_set_", 0) == 0 &&
            fs::is_regular_file(e.path() / "output_0.pb"))
          m.dataDirs.push_back(e.path().string());
    std::sort(m.dataDirs.begin(), m.dataDirs.end());
    return true;
  }
  return false;
}

// Where the ONNX file (and its test data) of model `name` is.
void locate(BenchModel &m, const llvm::json::Object &entry, const fs::path &root,
            const std::string &modelsDir) {
  std::vector<fs::path> candidates;
  if (auto committed = entry.getString("committed"))
    candidates.push_back(root / committed->str());
  else if (!modelsDir.empty())
    candidates = exportedCandidates(m.name, modelsDir);
  if (locateIn(m, candidates))
    return;
  if (candidates.empty())
    m.missing = "not committed and no --models-dir given (export it with "
                "models/export_torch_models.py)";
  else
    m.missing = "no ONNX file at " + candidates.front().string() +
                (candidates.size() > 1 ? " (nor .onnx, .dynamo.onnx)" : "");
}
} // namespace

bool locateExported(BenchModel &m, const std::string &modelsDir) {
  return locateIn(m, exportedCandidates(m.name, modelsDir));
}

std::vector<std::string> suiteNames(const std::string &path) {
  llvm::json::Value v = parseFile(path);
  const llvm::json::Object &root = *v.getAsObject();
  std::vector<std::string> names;
  for (const auto &kv : suitesOf(root, path))
    names.push_back(kv.first.str());
  if (const llvm::json::Array *models = root.getArray("models"))
    for (const llvm::json::Value &mv : *models)
      if (const llvm::json::Object *e = mv.getAsObject())
        if (auto s = e->getString("suite"))
          names.push_back(s->str());
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

Suite loadSuite(const std::string &path, const std::string &suiteName,
                const std::string &modelsDir) {
  llvm::json::Value v = parseFile(path);
  const llvm::json::Object &root = *v.getAsObject();
  const llvm::json::Object *suite = suitesOf(root, path).getObject(suiteName);
  std::vector<std::string> known = suiteNames(path);
  if (std::find(known.begin(), known.end(), suiteName) == known.end()) {
    std::string list;
    for (const std::string &n : known)
      list += (list.empty() ? "" : ", ") + n;
    fail(path, ": no suite '", suiteName, "' (", list, ")");
  }
  // A suite is its entry in "suites" (models, groups, batch sizes), the
  // models whose "suite" field names it, or both; without an entry it runs
  // at batch 1.
  static const llvm::json::Object kNoEntry;
  if (!suite)
    suite = &kNoEntry;
  Suite s;
  s.name = suiteName;
  s.batch = suite->getInteger("batch").value_or(1);
  if (const llvm::json::Array *bs = suite->getArray("dynamic_batches"))
    for (const llvm::json::Value &b : *bs)
      if (auto n = b.getAsInteger())
        s.dynamicBatches.push_back(*n);
  std::vector<std::string> names, groups;
  if (const llvm::json::Array *a = suite->getArray("models"))
    for (const llvm::json::Value &n : *a)
      if (auto str = n.getAsString())
        names.push_back(str->str());
  if (const llvm::json::Array *a = suite->getArray("groups"))
    for (const llvm::json::Value &g : *a)
      if (auto str = g.getAsString())
        groups.push_back(str->str());
  const llvm::json::Array *models = root.getArray("models");
  if (!models)
    fail(path, ": no \"models\" array");
  fs::path repoRoot = fs::absolute(path).parent_path().parent_path();
  auto inSuite = [&](const std::string &name, const std::string &group,
                     const std::string &modelSuite) {
    return modelSuite == suiteName || std::find(names.begin(), names.end(), name) != names.end() ||
           std::find(groups.begin(), groups.end(), group) != groups.end();
  };
  for (const llvm::json::Value &mv : *models) {
    const llvm::json::Object *e = mv.getAsObject();
    if (!e || !e->getString("name"))
      fail(path, ": a model entry without a \"name\"");
    BenchModel m;
    m.name = e->getString("name")->str();
    m.group = e->getString("group").value_or("").str();
    if (!inSuite(m.name, m.group, e->getString("suite").value_or("").str()))
      continue;
    m.recipe = e->getString("recipe").value_or("").str();
    m.rtol = e->getNumber("rtol").value_or(m.rtol);
    m.atol = e->getNumber("atol").value_or(m.atol);
    if (e->get("amp_rtol") || e->get("amp_atol"))
      fail(path, ": model '", m.name,
           "': amp_rtol/amp_atol are gone: amp is held to \"amp_err\" (relative max error)");
    m.ampErr = e->getNumber("amp_err").value_or(m.ampErr);
    m.tf32Err = e->getNumber("tf32_err").value_or(m.tf32Err);
    m.trainBatch = e->getInteger("train_batch").value_or(0);
    if (const llvm::json::Array *a = e->getArray("train_args"))
      for (const llvm::json::Value &f : *a)
        if (auto str = f.getAsString())
          m.trainArgs.push_back(str->str());
    locate(m, *e, repoRoot, modelsDir);
    s.models.push_back(std::move(m));
  }
  // A name the suite lists but no model entry has is a manifest bug.
  for (const std::string &n : names)
    if (std::none_of(s.models.begin(), s.models.end(),
                     [&](const BenchModel &m) { return m.name == n; }))
      fail(path, ": suite '", suiteName, "' names model '", n, "', which has no entry");
  return s;
}

} // namespace tc::bench
