// libFuzzer target: loading a .tcx artifact from arbitrary bytes, as far as
// a load goes without running any of its code (the CPU shared object is
// never dlopen'ed, no cubin reaches a driver): the section table, the
// checksums, the header, --print-info, the module's bytecode and the CUDA
// kernel table. Each input is read verified (what a load does) and with
// ArtifactCheck::None (--no-verify), so the parsers behind the checksums
// are fuzzed too: random bytes rarely carry valid checksums.
#include "tc/CodeGen/Artifact.h"
#include "tc/IR/Bytecode.h"
#include "tc/Runtime/CudaLaunch.h"
#include "tc/Support/Error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto buf = tc::MemoryBuffer::copy({reinterpret_cast<const char *>(data), size}, "fuzz.tcx");
  for (tc::ArtifactCheck check : {tc::ArtifactCheck::All, tc::ArtifactCheck::None}) {
    try {
      tc::Artifact a = tc::readArtifact(buf, check);
      (void)tc::artifactInfo(a);
      if (const tc::MemoryBuffer *k = a.section(tc::kSectionKernels); k && a.target == "cuda")
        (void)tc::parseCudaKernelTable(k->str(), a.file);
      if (a.section(tc::kSectionModule))
        (void)tc::readBytecode(a.share(tc::kSectionModule));
    } catch (const tc::Error &) {
    }
  }
  return 0;
}
