// The deployable artifact (.tcx): ONE file holding everything tc-run needs
// to run a compiled model on another machine: a header (format version,
// toolchain, target, CPU features), the optimized module (plan order,
// weights aligned for mmap, input/output signature), the object code of the
// generated kernels with their table (CPU: an ELF shared object; CUDA: a cubin per
// arch), the kernel sources, and the compile timeline for tc-prof.
//
// Layout: "TCXA", u32 version, u32 section count, u32 0, then per section
// {char name[24] (NUL-padded), u64 offset, u64 size, u64 checksum}, then a
// u64 checksum of everything before it (the table's), then the sections,
// each at a 64-byte aligned offset. All integers little-endian; checksums
// are hash64 (Support/Hash64.h) of the bytes. What a reader promises:
// docs/cpu-backend.md, "The artifact".
#pragma once
#include "tc/Support/ByteSink.h"
#include "tc/Support/MemoryBuffer.h"
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tc {

constexpr char kArtifactMagic[4] = {'T', 'C', 'X', 'A'};
// 3: checksums and build info (2: CPU kernels as a shared object; 1: an
// ELF object for a JIT).
constexpr uint32_t kArtifactVersion = 3;

// Section names.
inline constexpr const char *kSectionHeader = "header";     // key=value lines
inline constexpr const char *kSectionModule = "module";     // .tcbc of the optimized IR
inline constexpr const char *kSectionObject = "object";     // CPU: ELF shared object of the kernels
inline constexpr const char *kSectionKernels = "kernels";   // kernel table (KernelTable.h)
inline constexpr const char *kSectionSource = "source";     // generated kernel source
inline constexpr const char *kSectionTimeline = "timeline"; // compile timeline (JSON)
// CUDA, tc-codegen --tune: kernels' geometry variants (CudaLaunch.h)
inline constexpr const char *kSectionKernelVariants = "kernel-variants";
// CUDA: the cubins of an arch, one per program the kernels were split into
// for a parallel compile ("cubin.sm_90", then "cubin.sm_90.1", ... while
// present; the kernels that may fault, and the fault record the runtime
// reads, are in the first); the kernel table's lines are "group symbol
// launch block vec" (KernelEmitter.h: the launch rule).
inline std::string cubinSection(const std::string &arch, size_t part = 0) {
  return "cubin." + arch + (part ? "." + std::to_string(part) : "");
}

// What an artifact was built with: versions as "major.minor[.patch]", ""
// where not known or not used.
struct BuildInfo {
  std::string tc;          // tc-codegen's version
  std::string llvm;        // CPU: the clang that compiled the kernels
  std::string cudaToolkit; // CUDA: the toolkit headers' (cuda.h) version
  std::string nvrtc;       // CUDA: the NVRTC that compiled the cubins
  // CUDA: the headers' versions of the libraries the runtime dlopens (what
  // codegen knows; the library a machine has is checked when it is opened).
  std::string cudnn, cublasLt;
};

// Whether readArtifact verifies the checksums. Bounds and names are
// checked either way: neither reads out of bounds.
enum class ArtifactCheck {
  All,  // the table, every section, the padding: before anything is mapped or run
  None, // none (--no-verify)
};

struct Artifact {
  // Header fields (kSectionHeader).
  BuildInfo built;
  std::string target; // "cpu" or "cuda"
  std::string cpu;    // CPU name the code was compiled for (x86-64-v3, znver3, ...)
  std::vector<std::string> cpuFeatures; // "+avx2", ... the code may use
  std::vector<std::string> arches;      // CUDA: "sm_80", "sm_90", ... one cubin each
  // Section bytes by name; views into the file when read.
  std::map<std::string, std::shared_ptr<const MemoryBuffer>, std::less<>> sections;
  // Each section's checksum as the file records it (when read).
  std::map<std::string, uint64_t, std::less<>> checksums;

  const MemoryBuffer *section(std::string_view name) const;
  // The section, or a tc::Error naming the file and the missing section.
  const MemoryBuffer &require(std::string_view name) const;
  // CUDA: the cubins of `arch`, one per program (cubinSection(arch, 0),
  // (arch, 1), ... while present); a tc::Error when there is not even the first.
  std::vector<const MemoryBuffer *> cubins(const std::string &arch) const;
  std::shared_ptr<const MemoryBuffer> share(std::string_view name) const;
  void setSection(const std::string &name, std::string_view bytes);
  void setSection(const std::string &name, std::shared_ptr<const MemoryBuffer> bytes); // no copy

  std::string file; // where it was read from
};

bool isArtifact(std::string_view bytes);
std::string writeArtifact(const Artifact &a);
// The same bytes handed to `sink` in order (sections are not copied into one
// string first); returns their count.
size_t writeArtifact(const Artifact &a, const ByteSink &sink);
// Throws tc::Error "<file>: <what>" for a truncated, corrupt, damaged
// (checksum) or foreign file or one written by another format version;
// never reads out of bounds.
Artifact readArtifact(std::shared_ptr<const MemoryBuffer> buf,
                      ArtifactCheck check = ArtifactCheck::All);

// What `tc-run --print-info` prints: build info, target, sections with
// offsets, sizes and checksums.
std::string artifactInfo(const Artifact &a);

} // namespace tc
