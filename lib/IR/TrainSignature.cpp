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
    else if (k == "grads")
      s.grads = v;
    else if (k == "step")
      s.step = v != 0;
    else
      fail("module metadata ", kTrainMetadataKey, ": unknown field '", k, "'");
  }
  const Function &f = m.main();
  const Function *init = m.lookup(kTrainInitFunction);
  if (s.params > s.state || s.grads > s.params || s.state > f.args.size())
    fail("module metadata ", kTrainMetadataKey, " '", it->second, "' does not fit @", f.name, " (",
         f.args.size(), " arguments)");
  if (!init || !init->args.empty() || init->results.size() != s.state)
    fail("a training module needs @", kTrainInitFunction, " () returning its ", s.state,
         " state values");
  size_t need = 1 + s.grads + (s.step ? s.state : 0);
  if (f.results.size() < need)
    fail("@", f.name, " returns ", f.results.size(), " values; its training record needs ", need);
  size_t first = f.args.size() - s.state;
  for (size_t i = 0; i < s.state; ++i) {
    const TensorType &t = f.args[first + i]->type;
    if (!(init->results[i]->type == t))
      fail("state value ", i, " (%", f.args[first + i]->name, "): @", kTrainInitFunction, " gives ",
           init->results[i]->type.str(), ", @", f.name, " takes ", t.str());
    if (s.step && !(f.results[f.results.size() - s.state + i]->type == t))
      fail("state value ", i, " (%", f.args[first + i]->name, ") is updated with ",
           f.results[f.results.size() - s.state + i]->type.str(), ", not ", t.str());
  }
  return s;
}

void setTrainSignature(Module &m, const TrainSignature &s) {
  std::ostringstream os;
  os << "state=" << s.state << " params=" << s.params << " grads=" << s.grads
     << " step=" << int(s.step);
  m.metadata[kTrainMetadataKey] = os.str();
}

Function *trainInit(Module &m, bool create) {
  if (Function *f = m.lookup(kTrainInitFunction))
    return f;
  return create ? m.addFunction(kTrainInitFunction) : nullptr;
}

std::string stateKey(const Module &m, size_t i) {
  const Function *init = m.lookup(kTrainInitFunction);
  if (!init || i >= init->results.size())
    fail("no state value ", i);
  const Value *v = init->results[i];
  return v->loc.node.empty() ? v->name : v->loc.node;
}

} // namespace tc
