// Train-step checkpoints (tc/Runtime/TrainCheckpoint.h).
#include "tc/Runtime/TrainCheckpoint.h"
#include "tc/Runtime/RefExecutor.h"
#include "tc/Runtime/Safetensors.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <map>

namespace tc {

namespace {

// The tensors of one file against the state values [from, to).
void checkAgainst(const std::string &file, const std::vector<NamedTensor> &got,
                  const TrainStateLayout &l, size_t from, size_t to) {
  std::map<std::string, const HostTensor *> byName;
  for (const NamedTensor &t : got)
    byName[t.name] = &t.tensor;
  // The values a checkpoint stores: derived ones it does not.
  const size_t stored = size_t(std::count(l.derivedFrom.begin() + std::ptrdiff_t(from),
                                          l.derivedFrom.begin() + std::ptrdiff_t(to), -1));
  for (size_t i = from; i < to; ++i) {
    if (l.derivedFrom[i] >= 0)
      continue;
    auto it = byName.find(l.keys[i]);
    if (it == byName.end())
      fail(file, ": no tensor '", l.keys[i], "' (the model's state has ", stored, " tensors)");
    if (!(it->second->type() == l.types[i]))
      fail(file, ": tensor '", l.keys[i], "' is ", it->second->typeStr(), ", the model's is ",
           l.types[i].str());
    byName.erase(it);
  }
  if (!byName.empty())
    fail(file, ": tensor '", byName.begin()->first, "' is not part of this model's state");
}

// The derived values of `state` from their sources: the casts the step
// computes.
void derive(const TrainStateLayout &l, std::vector<HostTensor> &state) {
  for (size_t i = 0; i < state.size(); ++i)
    if (int64_t from = l.derivedFrom[i]; from >= 0)
      state[i] = convertTo(state[size_t(from)], l.types[i].dtype);
}

} // namespace

TrainStateLayout trainStateLayout(const Module &m, const TrainSignature &sig) {
  TrainStateLayout l{sig, stateKeys(m), {}, {}};
  const Function &f = m.main();
  for (size_t i = f.args.size() - sig.state; i < f.args.size(); ++i)
    l.types.push_back(f.args[i]->type);
  l.derivedFrom.assign(l.keys.size(), -1);
  for (const auto &[key, source] : derivedState(m)) {
    auto at = [&](const std::string &k) {
      auto it = std::find(l.keys.begin(), l.keys.end(), k);
      if (it == l.keys.end())
        fail("module metadata ", kTrainDerivedMetadataKey, ": '", k, "' is no state value");
      return size_t(it - l.keys.begin());
    };
    size_t i = at(key), from = at(source);
    if (l.types[i].shape != l.types[from].shape || !isFloat(l.types[i].dtype) ||
        !isFloat(l.types[from].dtype))
      fail("module metadata ", kTrainDerivedMetadataKey, ": '", key, "' (", l.types[i].str(),
           ") is no cast of '", source, "' (", l.types[from].str(), ")");
    l.derivedFrom[i] = int64_t(from);
  }
  return l;
}

std::string optimizerCheckpointPath(const std::string &checkpoint) {
  std::string stem = checkpoint;
  const std::string ext = ".safetensors";
  if (stem.size() > ext.size() && stem.compare(stem.size() - ext.size(), ext.size(), ext) == 0)
    stem.resize(stem.size() - ext.size());
  return stem + ".optimizer" + ext;
}

void writeTrainCheckpoint(const std::string &path, const TrainStateLayout &l,
                          const std::vector<HostTensor> &state) {
  if (state.size() != l.keys.size())
    fail(path, ": ", state.size(), " state tensors to write, the model has ", l.keys.size());
  std::vector<NamedTensor> model, optim;
  for (size_t i = 0; i < state.size(); ++i)
    if (l.derivedFrom[i] < 0)
      (i < l.modelState() ? model : optim).push_back({l.keys[i], state[i]});
  writeSafetensors(path, model, {{"format", "pt"}});
  writeSafetensors(optimizerCheckpointPath(path), optim, {{"format", "tc-optimizer"}});
}

std::vector<HostTensor> readTrainCheckpoint(const std::string &path, const TrainStateLayout &l) {
  // Both files are read and checked before anything is returned. A state
  // without optimizer values (an eval step's) reads the model's file only.
  SafetensorsFile model = readSafetensors(path);
  SafetensorsFile optim;
  if (l.modelState() < l.sig.state)
    optim = readSafetensors(optimizerCheckpointPath(path));
  checkAgainst(path, model.tensors, l, 0, l.modelState());
  checkAgainst(optimizerCheckpointPath(path), optim.tensors, l, l.modelState(), l.sig.state);
  std::map<std::string, HostTensor> byName;
  for (NamedTensor &t : model.tensors)
    byName[t.name] = std::move(t.tensor);
  for (NamedTensor &t : optim.tensors)
    byName[t.name] = std::move(t.tensor);
  std::vector<HostTensor> state;
  for (const std::string &k : l.keys)
    state.push_back(std::move(byName[k]));
  derive(l, state);
  return state;
}

std::vector<HostTensor> initialTrainState(const Module &m, const TrainStateLayout &l) {
  std::vector<HostTensor> state = runReference(&m, *m.lookup(kTrainInitFunction), {});
  derive(l, state);
  return state;
}

} // namespace tc
