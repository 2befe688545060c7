// The runtime half of the registry (tc/Target/Executable.h): Targets.def's
// backends as loaders, in the library libtcrt links.
#include "tc/Target/Executable.h"
#include "tc/Support/Error.h"

namespace tc {

const std::vector<RuntimeTarget> &runtimeTargets() {
  static const std::vector<RuntimeTarget> all = {
#define TC_TARGET(Id, name, title, summary, levelFlag, levels, optPipeline, graphsFlag, gpu)       \
  {name, title, gpu, Id##RunOptions, load##Id##Executable, Id##DeviceName, Id##OpenDevice},
#include "tc/Target/Targets.def"
  };
  return all;
}

const RuntimeTarget &runtimeTargetOf(std::string_view name, const std::string &file) {
  std::string names;
  for (const RuntimeTarget &t : runtimeTargets()) {
    if (name == t.name)
      return t;
    names += (names.empty() ? "" : ", ") + std::string(t.name);
  }
  fail(file, ": the artifact's target '", name, "' is none of this runtime's (", names, ")");
}

void Executable::runOn(void *, const std::vector<RunInput> &inputs,
                       std::vector<RunOutput> &outputs) {
  std::vector<HostTensor> host;
  for (const RunInput &in : inputs)
    host.push_back(*in.host);
  std::vector<HostTensor> results = run(host);
  outputs.resize(results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    outputs[i].shape = results[i].shape();
    outputs[i].bytes = results[i].byteSize();
    outputs[i].host = std::move(results[i]);
  }
}

void Executable::copyToHost(void *, DeviceAddress, void *, size_t) {
  fail("copyToHost: this model holds no device memory");
}

void Executable::setCommunicator(void *) {
  fail("a communicator: this target runs no collectives (a multi-rank program compiles for a GPU "
       "target)");
}

} // namespace tc
