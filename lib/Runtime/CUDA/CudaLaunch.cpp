#include "tc/Runtime/CudaLaunch.h"
#include "tc/CodeGen/Artifact.h"
#include "tc/CodeGen/KernelTable.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace tc {

namespace {

// A decimal field of at most `max`.
bool number(const std::string &field, unsigned max, unsigned &out) {
  char *end = nullptr;
  unsigned long n = std::strtoul(field.c_str(), &end, 10);
  out = unsigned(std::min<unsigned long>(n, max));
  return !field.empty() && std::isdigit((unsigned char)field[0]) && *end == 0 && n <= max;
}

} // namespace

std::vector<CudaKernelEntry> parseCudaKernelTable(std::string_view text, const std::string &file) {
  std::vector<CudaKernelEntry> entries;
  for (const KernelTableLine &line : splitKernelTable(text)) {
    const std::vector<std::string> &f = line.fields;
    CudaKernelEntry e;
    std::optional<KernelKind> family;
    bool ok = (f.size() == 6 || f.size() == 7) && parseKernelKindField(f[2], f[1], family);
    const std::string launch = ok ? f[3] : "";
    if (ok) {
      e.group = f[0];
      e.symbol = f[1];
      ok = number(f[4], 1024, e.block) && number(f[5], 1 << 16, e.vec);
      if (f.size() == 7)
        e.library = f[6];
      ok = ok && (e.library.empty() || e.library == "cublaslt" || e.library == "cudnn");
    }
    // Only the row-reduction family launches per row (`lanes`: a power of
    // two up to 32 lanes a row), only the reduction family per result
    // element or split (and the data-movement family's ScatterND: two
    // passes), it and the attention family's split-key kernel over a fixed
    // grid (`columns`); multi-tensor runs are pointwise or full reductions.
    bool launchOk =
        launch == "pointwise" ||
        (launch == "rows" &&
         (family == KernelKind::RowReduction || family == KernelKind::Reduction)) ||
        (launch == "lanes" && family == KernelKind::RowReduction && e.vec <= 32 &&
         (e.vec & (e.vec - 1)) == 0) ||
        ((launch == "reduce" || launch == "split") && family == KernelKind::Reduction) ||
        (launch == "split" && family == KernelKind::DataMovement) ||
        (launch == "compact" && family == KernelKind::Compaction) ||
        (launch == "multi-tensor" &&
         (family == KernelKind::Pointwise || family == KernelKind::Reduction)) ||
        (launch == "columns" &&
         (family == KernelKind::Reduction || family == KernelKind::Attention));
    bool kernelOk = family && launchOk && e.block > 0 && e.block % 32 == 0 && e.vec > 0;
    // A library group without an epilogue has no kernel: "- - - 0 0".
    bool noKernel = !e.library.empty() && !family && launch == "-" && e.block == 0 && e.vec == 0;
    if (!ok || !(kernelOk || noKernel))
      failKernelTableLine(file, "CUDA", line);
    e.kind = family.value_or(KernelKind::Pointwise);
    e.launch = launch == "rows"           ? LaunchKind::Rows
               : launch == "reduce"       ? LaunchKind::Reduce
               : launch == "columns"      ? LaunchKind::Columns
               : launch == "lanes"        ? LaunchKind::Lanes
               : launch == "split"        ? LaunchKind::Split
               : launch == "compact"      ? LaunchKind::Compact
               : launch == "multi-tensor" ? LaunchKind::MultiTensor
                                          : LaunchKind::Pointwise;
    entries.push_back(std::move(e));
  }
  return entries;
}

std::vector<CudaKernelVariant> parseCudaKernelVariants(std::string_view text,
                                                       const std::string &file) {
  std::vector<CudaKernelVariant> out;
  for (const KernelTableLine &line : splitKernelTable(text)) {
    const std::vector<std::string> &f = line.fields;
    CudaKernelVariant v;
    if (f.size() != 9 || !number(f[1], 1 << 16, v.index) || f[0].empty() || f[2].empty())
      fail(file, ": malformed ", kSectionKernelVariants, " line '", line.text,
           "' (expected <key> <index> <name> <group> <symbol> <kind> <launch> <block> <vec>)");
    v.key = f[0];
    v.name = f[2];
    std::string entry;
    for (size_t i = 3; i < f.size(); ++i)
      entry += f[i] + (i + 1 < f.size() ? " " : "\n");
    v.entry = parseCudaKernelTable(entry, file).at(0);
    out.push_back(std::move(v));
  }
  return out;
}

std::string kernelTuningKey(const std::string &key, const std::vector<std::vector<int64_t>> &dims) {
  std::string s = "kernel " + key;
  for (const std::vector<int64_t> &d : dims) {
    s += " [";
    for (size_t i = 0; i < d.size(); ++i)
      s += (i ? "," : "") + std::to_string(d[i]);
    s += "]";
  }
  return s;
}

std::optional<LaunchDims> launchDims(const CudaKernelEntry &k, const std::vector<int64_t> &domain) {
  if (k.launch == LaunchKind::Compact) // one block, both passes (the count may be 0)
    return LaunchDims{1, k.block, 2, true};
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
  if (k.launch == LaunchKind::Lanes) { // block / vec rows a block
    int64_t perBlock = std::max<int64_t>(k.block / k.vec, 1);
    return LaunchDims{unsigned(std::clamp<int64_t>((rows + perBlock - 1) / perBlock, 1, kMaxGrid)),
                      k.block};
  }
  if (k.launch == LaunchKind::Split) // `vec` passes of a fixed grid
    return LaunchDims{kSplitGrid, k.block, k.vec, true};
  if (k.launch == LaunchKind::Columns) // a fixed grid: the kernel splits its work
    return LaunchDims{k.vec, k.block};
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
