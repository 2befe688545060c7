#include "tc/Runtime/CudaLaunch.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <sstream>

namespace tc {

std::vector<CudaKernelEntry> parseCudaKernelTable(std::string_view text, const std::string &file) {
  std::vector<CudaKernelEntry> entries;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    CudaKernelEntry e;
    std::string kind, launch, rest;
    bool ok = bool(fields >> e.group >> e.symbol >> kind >> launch >> e.block >> e.vec);
    if (ok && fields >> e.library)
      ok = (e.library == "cublaslt" || e.library == "cudnn") && !(fields >> rest);
    // Only the row-reduction family launches per row, only the reduction
    // family per result element.
    std::optional<KernelKind> family = parseKernelKind(kind);
    bool launchOk = launch == "pointwise" ||
                    (launch == "rows" &&
                     (family == KernelKind::RowReduction || family == KernelKind::Reduction)) ||
                    (launch == "reduce" && family == KernelKind::Reduction);
    bool kernelOk =
        family && launchOk && e.block > 0 && e.block <= 1024 && e.block % 32 == 0 && e.vec > 0;
    // A library group without an epilogue has no kernel: "- - - 0 0".
    bool noKernel = !e.library.empty() && e.symbol == "-" && kind == "-" && launch == "-" &&
                    e.block == 0 && e.vec == 0;
    if (!ok || !(kernelOk || noKernel) || (e.library.empty() && e.symbol == "-"))
      fail(file, ": malformed CUDA kernel table line '", line.substr(0, 60), "'");
    e.kind = family.value_or(KernelKind::Pointwise);
    e.launch = launch == "rows"     ? LaunchKind::Rows
               : launch == "reduce" ? LaunchKind::Reduce
                                    : LaunchKind::Pointwise;
    entries.push_back(std::move(e));
  }
  return entries;
}

std::optional<LaunchDims> launchDims(const CudaKernelEntry &k, const std::vector<int64_t> &domain) {
  int64_t n = 1;
  for (int64_t d : domain)
    n *= d;
  if (n <= 0)
    return std::nullopt;
  int64_t inner = domain.empty() ? 1 : domain.back(), rows = n / inner;
  constexpr int64_t kMaxGrid = (int64_t(1) << 31) - 1;
  if (k.launch == LaunchKind::Rows) {
    // About 4 elements per thread, whole warps, at most `block` threads.
    int64_t warps = std::clamp<int64_t>((inner + 127) / 128, 1, k.block / 32);
    return LaunchDims{unsigned(std::min(rows, kMaxGrid)), unsigned(warps * 32)};
  }
  if (k.launch == LaunchKind::Reduce) // one block per result element
    return LaunchDims{unsigned(std::min(n, kMaxGrid)), k.block};
  int64_t perBlock = int64_t(k.block) * k.vec;
  return LaunchDims{unsigned(std::clamp<int64_t>((n + perBlock - 1) / perBlock, 1, kMaxGrid)),
                    k.block};
}

std::vector<uint64_t> packKernelParams(const std::vector<uint64_t> &bufs,
                                       const std::vector<int64_t> &dims) {
  std::vector<uint64_t> p(bufs);
  for (int64_t d : dims)
    p.push_back(uint64_t(d));
  if (dims.empty()) // dims[1]: C++ has no empty arrays
    p.push_back(0);
  return p;
}

std::optional<std::string> pickCubinArch(const std::vector<std::string> &arches, int major,
                                         int minor) {
  std::optional<std::string> best;
  int bestMinor = -1;
  for (const std::string &a : arches) {
    if (a.size() < 5 || a.rfind("sm_", 0) != 0)
      continue;
    int sm = std::atoi(a.c_str() + 3);
    if (sm / 10 == major && sm % 10 <= minor && sm % 10 > bestMinor) {
      best = a;
      bestMinor = sm % 10;
    }
  }
  return best;
}

} // namespace tc
