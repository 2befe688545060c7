// CudaModel's generated-kernel variants (tc-codegen --tune; the artifact's
// "kernel-variants" section, tc/Runtime/CudaLaunch.h): each variant's
// function loaded beside the kernel table's, and the one a plan's step
// launches, chosen as a library call's algorithm is (CudaModelTuning.cpp:
// the recorded choice, or under tune() the fastest of a timing).
#include "CudaShapePlan.h"
#include "tc/Support/Error.h"

namespace tc {

void CudaModel::loadVariants() {
  const MemoryBuffer *section = artifact_.section(kSectionKernelVariants);
  if (!section)
    return;
  for (CudaKernelVariant &line : parseCudaKernelVariants(section->str(), artifact_.file)) {
    const std::string &group = line.entry.group;
    auto k = kernels_.find(group);
    Variants &v = variants_[group];
    // Variant 0 is the table's kernel; each runs as it does (no pass
    // field, the same scratch or none).
    auto same = [&](const CudaKernelEntry &e) {
      return readsScratch(e.launch) == readsScratch(k->second.entry.launch) &&
             e.launch != LaunchKind::Split && e.launch != LaunchKind::Compact &&
             e.launch != LaunchKind::MultiTensor;
    };
    if (k == kernels_.end() || !k->second.entry.library.empty() || line.index != v.kernels.size() ||
        (line.index && line.key != v.key) ||
        (line.index == 0 && line.entry.symbol != k->second.entry.symbol) || !same(line.entry))
      fail(artifact_.file, ": ", kSectionKernelVariants, ": variant ", line.index, " of @", group,
           " does not follow its kernel table entry and variants 0 .. ", line.index, " - 1");
    v.key = line.key;
    v.names.push_back(line.name);
    v.kernels.push_back({line.entry, functionOf(line.entry.symbol)});
  }
}

std::string CudaModel::pickVariant(const Variants &v, const Op &op,
                                   const std::vector<int64_t> &domain, Step &s) {
  std::vector<std::vector<int64_t>> dims;
  for (const auto *list : {&op.operands, &op.results})
    for (const Value *x : *list)
      dims.push_back(staticDims(x->type.shape));
  std::string key = kernelTuningKey(v.key, dims);
  std::vector<LaunchDims> launches;
  for (const Kernel &k : v.kernels)
    launches.push_back(launchDims(k.entry, domain).value_or(s.launch));
  cuda::CallTuning t = callTuning(key);
  t.kernel = true;
  std::optional<size_t> i = t.pick(
      v.kernels.size(), [&](size_t i) { return v.names[i]; },
      [&](size_t i) { // on the plan's arena, in the step's place
        Step c;
        c.fn = v.kernels[i].fn;
        c.launch = launches[i];
        c.params = s.params;
        c.launchKernel(work_);
      });
  s.fn = v.kernels[*i].fn;
  s.launch = launches[*i];
  return "kernel " + v.kernels[*i].entry.symbol + " <<<" + std::to_string(s.launch.grid) + ", " +
         std::to_string(s.launch.block) + ">>>" + tunedText(key, t);
}

} // namespace tc
