// The "tc.train" metadata record (tc/IR/TrainSignature.h).
#include "tc/IR/TrainSignature.h"
#include "tc/Support/Error.h"
#include <sstream>

namespace tc {

std::optional<TrainSignature> trainSignature(const Module &m) {
  auto it = m.metadata.find(kTrainMetadataKey);
  if (it == m.metadata.end())
    return std::nullopt;
  TrainSignature s;
  std::istringstream is(it->second);
  std::string field;
  while (is >> field) {
    size_t eq = field.find('=');
    std::string k = field.substr(0, eq);
    unsigned long long v = 0;
    try {
      v = eq == std::string::npos ? throw Error("") : std::stoull(field.substr(eq + 1));
    } catch (const std::exception &) {
      fail("module metadata ", kTrainMetadataKey, ": bad field '", field, "'");
    }
    if (k == "state")
      s.state = v;
    else if (k == "params")
      s.params = v;
    else if (k == "buffers")
      s.buffers = v;
    else if (k == "grads")
      s.grads = v;
    else if (k == "step")
      s.step = v != 0;
    else if (k == "accumulate")
      s.accumulate = v;
    else if (k == "eval")
      s.eval = v != 0;
    else if (k == "metrics")
      s.metrics = v;
    else
      fail("module metadata ", kTrainMetadataKey, ": unknown field '", k, "'");
  }
  const Function &f = m.main();
  const Function *init = m.lookup(kTrainInitFunction);
  if (s.accumulate < 1 || (s.accumulate > 1 && !s.step))
    fail("module metadata ", kTrainMetadataKey, ": accumulate=", s.accumulate,
         " needs a train step");
  if (s.eval && (s.step || s.grads || s.params + s.buffers != s.state))
    fail("module metadata ", kTrainMetadataKey,
         ": an eval step has parameters and buffers as "
         "state, no gradients and no update");
  if (s.params + s.buffers > s.state || s.grads > s.params || s.state > f.args.size())
    fail("module metadata ", kTrainMetadataKey, " '", it->second, "' does not fit @", f.name, " (",
         f.args.size(), " arguments)");
  if (!init || !init->args.empty() || init->results.size() != s.state)
    fail("a training module needs @", kTrainInitFunction, " () returning its ", s.state,
         " state values");
  size_t need = 1 + s.grads + s.metrics + (s.step ? s.state : s.eval ? 0 : s.buffers);
  if (f.results.size() < need)
    fail("@", f.name, " returns ", f.results.size(), " values; its training record needs ", need);
  size_t first = f.args.size() - s.state;
  for (size_t i = 0; i < s.state; ++i) {
    const TensorType &t = f.args[first + i]->type;
    if (!(init->results[i]->type == t))
      fail("state value ", i, " (%", f.args[first + i]->name, "): @", kTrainInitFunction, " gives ",
           init->results[i]->type.str(), ", @", f.name, " takes ", t.str());
    // Its new value: in a step, each state value's; before, each buffer's.
    const Value *update = nullptr;
    if (s.step)
      update = f.results[f.results.size() - s.state + i];
    else if (!s.eval && i >= s.params && i < s.params + s.buffers)
      update = f.results[f.results.size() - s.buffers + (i - s.params)];
    if (update && !(update->type == t))
      fail("state value ", i, " (%", f.args[first + i]->name, ") is updated with ",
           update->type.str(), ", not ", t.str());
  }
  return s;
}

void setTrainSignature(Module &m, const TrainSignature &s) {
  std::ostringstream os;
  os << "state=" << s.state << " params=" << s.params << " buffers=" << s.buffers
     << " grads=" << s.grads << " step=" << int(s.step);
  if (s.accumulate > 1)
    os << " accumulate=" << s.accumulate;
  if (s.eval)
    os << " eval=1 metrics=" << s.metrics;
  m.metadata[kTrainMetadataKey] = os.str();
}

Function *trainInit(Module &m, bool create) {
  if (Function *f = m.lookup(kTrainInitFunction))
    return f;
  return create ? m.addFunction(kTrainInitFunction) : nullptr;
}

std::vector<std::string> stateKeys(const Module &m) {
  std::vector<std::string> keys;
  auto it = m.metadata.find(kTrainKeysMetadataKey);
  if (it != m.metadata.end()) {
    std::istringstream is(it->second);
    for (std::string line; std::getline(is, line);)
      keys.push_back(line);
  }
  std::optional<TrainSignature> s = trainSignature(m);
  if (!s || keys.size() != s->state)
    fail("module metadata ", kTrainKeysMetadataKey, " names ", keys.size(), " state values, not ",
         s ? s->state : 0);
  return keys;
}

void setStateKeys(Module &m, const std::vector<std::string> &keys) {
  std::string text;
  for (const std::string &k : keys) {
    if (k.find('\n') != std::string::npos)
      fail("a state value's name holds a line break: '", k, "'");
    text += (text.empty() ? "" : "\n") + k;
  }
  m.metadata[kTrainKeysMetadataKey] = text;
}

std::vector<std::pair<std::string, std::string>> derivedState(const Module &m) {
  std::vector<std::pair<std::string, std::string>> out;
  auto it = m.metadata.find(kTrainDerivedMetadataKey);
  if (it == m.metadata.end())
    return out;
  std::istringstream is(it->second);
  for (std::string line; std::getline(is, line);) {
    size_t tab = line.find('\t');
    if (tab == std::string::npos)
      fail("module metadata ", kTrainDerivedMetadataKey, ": line '", line,
           "' is not key<TAB>source");
    out.push_back({line.substr(0, tab), line.substr(tab + 1)});
  }
  return out;
}

void setDerivedState(Module &m, const std::vector<std::pair<std::string, std::string>> &derived) {
  std::string text;
  for (const auto &[key, source] : derived)
    text += (text.empty() ? "" : "\n") + key + "\t" + source;
  if (text.empty())
    m.metadata.erase(kTrainDerivedMetadataKey);
  else
    m.metadata[kTrainDerivedMetadataKey] = text;
}

} // namespace tc
