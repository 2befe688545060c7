#include "tc/CodeGen/CpuCompiler.h"
#include "tc/Config.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/CodeGen/CodeGenAction.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <clang/Lex/PreprocessorOptions.h>
#include <fstream>
#include <llvm/ADT/SmallString.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/FileUtilities.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/X86TargetParser.h>
#include <mutex>

namespace tc {

namespace {

void initializeLLVM() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

// A new file in the temporary directory for the linker.
llvm::SmallString<128> tempFile(const char *suffix) {
  llvm::SmallString<128> path;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("tc-kernels", suffix, path))
    fail("cannot create a temporary file for the linker: ", ec.message());
  return path;
}

std::string readFile(llvm::StringRef path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  return buf ? (*buf)->getBuffer().str() : std::string();
}

// cc1 arguments: what the driver would pass for -O3 -std=c++17, without
// its header search (the kernels include nothing). No -ffast-math: NaN and
// infinity keep their IEEE meaning, as in the reference kernels. They and
// LLVM's version key the compile cache.
std::vector<std::string> cc1Args(const CpuTarget &target, CompileOutput out) {
  std::vector<std::string> args = {
      "-triple", target.triple, "-target-cpu", target.cpu, "-O3", "-std=c++17", "-x", "c++",
      "-vectorize-loops", "-vectorize-slp",
      // A host whose features list avx10.1-256 (Granite
      // Rapids) makes clang 19 warn that it promotes it to
      // 512: the host's own features, nothing to say.
      "-Wno-invalid-feature-combination", "-mrelocation-model", "pic", "-pic-level", "2",
      out == CompileOutput::Object ? "-emit-obj" : "-S", "tc-kernels.cpp"};
  for (const std::string &f : target.features) {
    args.insert(args.begin() + 4, f);
    args.insert(args.begin() + 4, "-target-feature");
  }
  return args;
}

} // namespace

CpuTarget resolveCpuTarget(const std::string &cpu) {
  initializeLLVM();
  CpuTarget t;
  t.triple = llvm::sys::getProcessTriple();
  if (cpu == "native") {
    t.cpu = llvm::sys::getHostCPUName().str();
    // avx10.1-256 beside avx512f (hosts that report both) is a
    // combination clang 19 warns about on every compile and promotes to
    // avx10.1-512 anyway: leave it out.
    auto features = llvm::sys::getHostCPUFeatures();
    bool avx512 = features.lookup("avx512f");
    for (const auto &f : features)
      if (f.second && !(avx512 && f.first() == "avx10.1-256"))
        t.features.push_back("+" + f.first().str());
    std::sort(t.features.begin(), t.features.end());
    return t;
  }
  std::string err;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(t.triple, err);
  if (!target)
    fail("no LLVM target for ", t.triple, ": ", err);
  if (!llvm::X86::parseArchX86(cpu, /*Only64Bit=*/true) && cpu.rfind("x86-64", 0) != 0)
    fail("unknown --cpu '", cpu,
         "' (native, x86-64, x86-64-v2, x86-64-v3, x86-64-v4 or an LLVM CPU name)");
  t.cpu = cpu;
  llvm::SmallVector<llvm::StringRef, 64> fs;
  llvm::X86::getFeaturesForCPU(cpu, fs, /*NeedPlus=*/true);
  for (llvm::StringRef f : fs)
    t.features.push_back(f.str());
  std::sort(t.features.begin(), t.features.end());
  return t;
}

std::string compileCpp(const std::string &source, const CpuTarget &target, CompileOutput out) {
  initializeLLVM();
  std::string diagText;
  llvm::raw_string_ostream diagOS(diagText);
  auto diagOpts = llvm::makeIntrusiveRefCnt<clang::DiagnosticOptions>();
  auto *printer = new clang::TextDiagnosticPrinter(diagOS, diagOpts.get());
  auto diags = clang::CompilerInstance::createDiagnostics(diagOpts.get(), printer);

  std::vector<std::string> args = cc1Args(target, out);
  std::vector<const char *> argv;
  for (const std::string &a : args)
    argv.push_back(a.c_str());

  auto inv = std::make_shared<clang::CompilerInvocation>();
  if (!clang::CompilerInvocation::CreateFromArgs(*inv, argv, *diags))
    fail("internal error: clang rejected its arguments: ", diagText);
  inv->getPreprocessorOpts().addRemappedFile(
      "tc-kernels.cpp", llvm::MemoryBuffer::getMemBufferCopy(source, "tc-kernels.cpp").release());

  clang::CompilerInstance ci;
  ci.setInvocation(inv);
  ci.setDiagnostics(diags.get());
  // Its "N warnings generated." too: by default on stderr, after every
  // compile with a warning (a libm call in a `vectorize(assume_safety)`
  // loop: -Wpass-failed), where the diagnostics themselves are only shown
  // on failure.
  ci.setVerboseOutputStream(diagOS);
  llvm::SmallString<0> bytes;
  ci.setOutputStream(std::make_unique<llvm::raw_svector_ostream>(bytes));
  std::unique_ptr<clang::CodeGenAction> action;
  if (out == CompileOutput::Object)
    action = std::make_unique<clang::EmitObjAction>();
  else
    action = std::make_unique<clang::EmitAssemblyAction>();
  if (!ci.ExecuteAction(*action) || diags->hasErrorOccurred())
    fail("internal error: the generated kernels do not compile:\n", diagText);
  return std::string(bytes.str());
}

std::string compileSharedObject(const std::string &source, const CpuTarget &target, CacheUse *use) {
  std::string compiler = "clang " TC_LLVM_VERSION;
  for (const std::string &a : cc1Args(target, CompileOutput::Object))
    compiler += " " + a;
  std::string object = cachedCompile(
      compiler, source, [&] { return compileCpp(source, target, CompileOutput::Object); }, use);
  llvm::ErrorOr<std::string> ld = llvm::sys::findProgramByName("ld");
  if (!ld)
    fail("cannot link the kernels: no 'ld' on PATH (install binutils)");
  llvm::SmallString<128> in = tempFile(".o"), out = tempFile(".so"), log = tempFile(".log");
  llvm::FileRemover removeIn(in), removeOut(out), removeLog(log);
  {
    std::ofstream o(in.c_str(), std::ios::binary);
    o.write(object.data(), std::streamsize(object.size()));
    if (!o.flush())
      fail("cannot write ", in.str().str(), " for the linker");
  }
  // The kernels call libc (malloc, memcpy, memset: `nm -u` on the object)
  // and may call libm; --as-needed keeps a library they do not use out.
  llvm::StringRef args[] = {*ld, "-shared", "--as-needed", "-o", out, in, "-lm", "-lc"};
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(log),
                                                llvm::StringRef(log)};
  std::string err;
  if (llvm::sys::ExecuteAndWait(*ld, args, std::nullopt, redirects, 0, 0, &err) != 0)
    fail("cannot link the kernels with ", *ld, ": ", err.empty() ? readFile(log) : err);
  return readFile(out);
}

} // namespace tc
