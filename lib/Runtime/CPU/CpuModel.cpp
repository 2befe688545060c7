#include "tc/Runtime/CpuModel.h"
#include "tc/CodeGen/CpuCompiler.h"
#include "tc/IR/Bytecode.h"
#include "tc/Runtime/RefExecutor.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <mutex>
#include <sstream>
#include <thread>

namespace tc {

struct CpuModel::Jit {
  std::unique_ptr<llvm::orc::LLJIT> lljit;
};

CpuModel::~CpuModel() = default;

namespace {

template <typename T> T orFail(llvm::Expected<T> v, const std::string &what) {
  if (!v)
    fail(what, ": ", llvm::toString(v.takeError()));
  return std::move(*v);
}

void orFail(llvm::Error e, const std::string &what) {
  if (e)
    fail(what, ": ", llvm::toString(std::move(e)));
}

} // namespace

std::unique_ptr<CpuModel> CpuModel::load(std::shared_ptr<const MemoryBuffer> file,
                                         unsigned threads) {
  std::unique_ptr<CpuModel> model(new CpuModel());
  model->pool_ = std::make_unique<ThreadPool>(
      threads ? threads : std::max(1u, std::thread::hardware_concurrency()));
  model->artifact_ = readArtifact(file);
  const Artifact &a = model->artifact_;
  if (a.target != "cpu")
    fail(a.file, ": the artifact is for target '", a.target, "', not cpu");
  std::vector<std::string> missing = missingHostFeatures(a.cpuFeatures);
  if (!missing.empty()) {
    std::string list;
    for (const std::string &f : missing)
      list += (list.empty() ? "" : ",") + f;
    fail(a.file, ": compiled for CPU '", a.cpu, "' with features this machine lacks (", list,
         "); recompile with tc-codegen --cpu=native or an older --cpu level");
  }
  model->module_ = readBytecode(a.share(kSectionModule));

  std::istringstream table{std::string(a.require(kSectionKernels).str())};
  std::vector<std::pair<std::string, std::string>> entries;
  for (std::string group, symbol; table >> group >> symbol;) {
    const Function *f = model->module_->lookup(group);
    if (!f)
      fail(a.file, ": the kernel table names group @", group, ", which the module lacks");
    entries.emplace_back(group, symbol);
  }
  if (entries.empty())
    return model;
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  model->jit_ = std::make_unique<Jit>();
  auto &jit = model->jit_->lljit;
  jit = orFail(llvm::orc::LLJITBuilder().create(), a.file + ": cannot start the JIT");
  // Kernels call libm (expf, tanhf, ...): resolve from this process.
  jit->getMainJITDylib().addGenerator(
      orFail(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                 jit->getDataLayout().getGlobalPrefix()),
             a.file + ": cannot search this process's symbols"));
  const MemoryBuffer &obj = a.require(kSectionObject);
  orFail(jit->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(
             llvm::StringRef(obj.data(), obj.size()), a.file + ":object")),
         a.file + ": cannot load the kernels' object code");
  for (const auto &[group, symbol] : entries) {
    auto addr = orFail(jit->lookup(symbol), a.file + ": kernel " + symbol);
    model->kernels_[group] = addr.toPtr<KernelFn>();
  }
  return model;
}

// A Fused step with a kernel: result dims follow from the callee's
// signature with its symbols bound to the operands' actual dims.
std::optional<std::vector<HostTensor>>
CpuModel::runKernel(const Op &op, const std::vector<const HostTensor *> &ins) {
  if (!op.is(OpKind::Fused))
    return std::nullopt;
  auto it = kernels_.find(op.getString("callee"));
  if (it == kernels_.end())
    return std::nullopt;
  const Function &f = *module_->lookup(it->first);
  std::map<std::string, int64_t> sizes;
  std::vector<int64_t> dims;
  for (size_t i = 0; i < f.args.size(); ++i) {
    const Shape &s = f.args[i]->type.shape;
    if (!ins[i] || ins[i]->rank() != s.size())
      return std::nullopt;
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t n = ins[i]->shape()[d];
      if (s[d].isSymbolic() && !sizes.emplace(s[d].symbol, n).second && sizes[s[d].symbol] != n)
        fail(op.where(), ": symbol ", s[d].symbol, " is both ", sizes[s[d].symbol], " and ", n);
      dims.push_back(n);
    }
  }
  std::vector<HostTensor> outs;
  for (const Value *r : f.results) {
    std::vector<int64_t> rd;
    for (const Dim &d : r->type.shape) {
      if (d.isStatic())
        rd.push_back(d.size);
      else if (auto s = sizes.find(d.symbol); d.isSymbolic() && s != sizes.end())
        rd.push_back(s->second);
      else
        return std::nullopt; // a size only the shape rules know: run it on the reference
    }
    dims.insert(dims.end(), rd.begin(), rd.end());
    outs.emplace_back(r->type.dtype, std::move(rd));
  }
  std::vector<void *> bufs;
  for (const HostTensor *t : ins)
    bufs.push_back(const_cast<uint8_t *>(t->bytes()));
  for (HostTensor &t : outs)
    bufs.push_back(t.bytes());
  const std::vector<int64_t> &domain = outs[0].shape();
  int64_t inner = domain.empty() ? 1 : domain.back();
  int64_t rows = inner == 0 ? 0 : outs[0].numElements() / inner;
  // Rows are independent: split them so each chunk has some 16K elements.
  KernelFn kernel = it->second;
  int64_t grain = std::max<int64_t>(1, (int64_t(1) << 14) / std::max<int64_t>(inner, 1));
  pool_->parallelFor(rows, grain, [&](int64_t begin, int64_t end) {
    kernel(bufs.data(), dims.data(), begin, end);
  });
  ++kernelSteps_;
  return outs;
}

std::vector<HostTensor> CpuModel::run(const std::vector<HostTensor> &inputs) {
  kernelSteps_ = fallbackSteps_ = 0;
  OpOverride viaKernels = [this](const Op &op, const std::vector<const HostTensor *> &ins) {
    auto r = runKernel(op, ins);
    if (!r)
      ++fallbackSteps_;
    return r;
  };
  return runReference(module_.get(), module_->main(), inputs, nullptr, &viaKernels);
}

} // namespace tc
