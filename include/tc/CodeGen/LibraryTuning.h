// Measured library algorithm choice (tc-codegen --target=cuda --tune) and
// the TF32 switch (--allow-tf32): what the artifact's "tuning" section
// records, the timing cache file (--tuning-cache), and how a winner is
// picked. No GPU code here: the timing itself is the CUDA runtime's
// (lib/Runtime/CUDA/LibraryTuner.cpp); this is what tc-codegen, the runtime
// and the tests share.
#pragma once
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tc {

// The artifact section: "allow-tf32 conv", "env <key>", then one
// "call <key>\t<choice>\t<us>" line per tuned library call.
inline constexpr const char *kSectionTuning = "tuning";

// Which fp32 library calls may use TF32 tensor cores (10-bit mantissas):
// none, convolutions (cuDNN; PyTorch's default), or convolutions and GEMMs.
enum class Tf32 { None, Conv, All };
inline constexpr const char *kTf32Names[] = {"none", "conv", "all"};
// "conv" -> Tf32::Conv; nullopt for another word.
std::optional<Tf32> parseTf32(std::string_view s);
const char *tf32Name(Tf32 t);

// Whether an fp32 artifact's library calls may round through TF32: its
// section allows TF32 for convs and a group calls cuDNN, or for all and a
// group calls cuBLASLt (the library is a CUDA kernel table line's last
// field, CudaLaunch.h). False without the section (CPU, older artifacts).
struct Artifact;
bool mayRoundThroughTf32(const Artifact &a);

// What a recorded choice depends on: the same op may have another best
// algorithm (or the recorded one may not exist) on another GPU or library.
struct TuningEnv {
  std::string gpu;         // "NVIDIA H100 80GB HBM3"
  int cc = 0;              // compute capability, 90
  size_t cudnn = 0;        // cudnnGetVersion(); 0: not loadable
  size_t cublasLt = 0;     // cublasLtGetVersion(); 0: not loadable
  int driver = 0;          // cuDriverGetVersion()
  std::string key() const; // "NVIDIA H100 80GB HBM3|sm_90|cudnn 91000|cublaslt 130100|driver 13000"
};

// One library call's winner: `choice` in the library's words
// ("cublaslt heuristic=2", "cudnn-graph fused cfg=A:1 engine=12",
// "cudnn algo=1 math=1"), its mean device time.
struct TunedCall {
  std::string choice;
  double us = 0;
};

struct LibraryTuning {
  Tf32 tf32 = Tf32::None;                 // an artifact without the section: no TF32
  std::string env;                        // TuningEnv::key() it was tuned on; "": not tuned
  std::map<std::string, TunedCall> calls; // by call key (the runtime's description)
};
std::string writeTuningSection(const LibraryTuning &t);
// A tc::Error naming `file` for a malformed section.
LibraryTuning readTuningSection(std::string_view text, const std::string &file);

// The timing cache: a text file of "tc-tuning-cache 1" then tab-separated
// "<env key>\t<call key>\t<choice>\t<us>" lines (# comments). Entries of
// other environments are kept (one file may serve several machines) but
// never used for this one.
struct TuningCache {
  struct Entry {
    std::string env, call;
    TunedCall tuned;
  };
  std::vector<Entry> entries;
  // This env's entry for `call`, or nullptr.
  const TunedCall *find(const std::string &env, const std::string &call) const;
  // Adds or replaces this env's entry for `call`.
  void put(const std::string &env, const std::string &call, const TunedCall &t);
  void erase(const std::string &env, const std::string &call);
  // Entries for another environment than `env`.
  size_t othersThan(const std::string &env) const;
};
// A missing file is an empty cache; a malformed one a tc::Error
// "tuning cache FILE:LINE: ...".
TuningCache readTuningCache(const std::string &path);
std::string writeTuningCache(const TuningCache &c);

// The fastest of `count` candidates by `timeMs` (< 0: the candidate failed
// or is not correct for the op; never picked); `times` gets each one's.
// nullopt when all failed. Ties keep the earlier (the heuristic's order).
std::optional<size_t> pickFastest(size_t count, const std::function<double(size_t)> &timeMs,
                                  std::vector<double> *times = nullptr);

// A generated kernel's key (tc/Runtime/CudaLaunch.h, kernelTuningKey:
// "kernel reduction:<hash> [dims]..."), not a library call's; the section
// and the cache hold both, the choice being the variant's name.
inline bool isKernelTuningKey(std::string_view key) { return key.starts_with("kernel "); }

// What --tune did, for --stats and the note lines.
struct TuningSummary {
  bool requested = false;
  std::string kept;   // why the heuristic choice stayed ("no GPU"); "" when tuned
  size_t shapes = 0;  // library calls tuned or taken from the cache
  size_t hits = 0;    // of those, from the cache
  size_t kernels = 0; // generated kernels whose variants were timed or taken from the cache
  size_t kernelHits = 0;
  double timingMs = 0; // device time of the candidates' runs
  // "tuning: 3 shapes, 1 cache hits, 12.5 ms timing" and, with kernels,
  // "; 2 kernels with variants, 1 cache hits".
  std::string statsLine() const;
};

} // namespace tc
