// Compiling generated CUDA C++ in-process with NVRTC (the toolkit's runtime
// compiler library): no nvcc, no temporary files, no GPU, and no libcuda.
// A tc built without the CUDA toolkit says so (tc::Error) instead.
#pragma once
#include "tc/CodeGen/Artifact.h"
#include "tc/Support/CompileCache.h"
#include <string>
#include <vector>

namespace tc {

// The NVRTC version, "13.0"; "" when tc was built without NVRTC.
std::string cudaCompilerVersion();

// What a CUDA artifact records it was built with: tc, NVRTC, and the
// toolkit's, cuDNN's and cuBLASLt's header versions (those the kernels and
// the runtime's calls were written against; "" for a header not found).
BuildInfo cudaBuildInfo();

// "sm_80,sm_90" -> {"sm_80", "sm_90"} (duplicates dropped), each an arch
// this NVRTC compiles cubin for; throws tc::Error naming the ones it knows.
std::vector<std::string> parseCudaArchs(const std::string &list);

enum class CudaOutput { Cubin, Ptx };

// Compiles `source` (C++17) for `arch` ("sm_90"): cubin, or PTX for the
// matching virtual arch, read back from the compile cache when it holds
// them (`use` says; Support/CompileCache.h). Throws tc::Error with NVRTC's
// log when it fails.
std::string compileCuda(const std::string &source, const std::string &arch, CudaOutput out,
                        CacheUse *use = nullptr);

} // namespace tc
