#include "tc/Transforms/NumericsCheck.h"
#include "tc/IR/Parser.h"
#include "tc/IR/Printer.h"
#include "tc/Runtime/RefExecutor.h"
#include "tc/Runtime/RunHarness.h"
#include "tc/Support/Error.h"
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

namespace tc {

namespace {

// "element [1,0,2] is 0.25, expected 0.5"
std::string describeElement(const HostTensor &actual, const HostTensor &expected, int64_t flat) {
  std::ostringstream os;
  os << "element [";
  std::vector<int64_t> idx(expected.rank());
  int64_t rest = flat;
  for (size_t d = expected.rank(); d-- > 0;) {
    idx[d] = rest % expected.shape()[d];
    rest /= expected.shape()[d];
  }
  for (size_t d = 0; d < idx.size(); ++d)
    os << (d ? "," : "") << idx[d];
  os << "] is " << actual.getDouble(flat) << ", expected " << expected.getDouble(flat);
  return os.str();
}

std::string describeMismatch(const Comparison &c, const HostTensor &actual,
                             const HostTensor &expected) {
  if (!c.typeProblem.empty())
    return c.typeProblem;
  std::ostringstream os;
  os << c.mismatches << " elements differ";
  if (c.extraNaNs)
    os << " (" << c.extraNaNs << " new NaN)";
  os << ", max abs err " << c.maxAbsErr
     << "; first: " << (c.firstBad >= 0 ? describeElement(actual, expected, c.firstBad) : "?");
  return os.str();
}

// Every op result of m's entry function by name.
std::unordered_map<std::string, HostTensor> intermediates(const Module &m,
                                                          const std::vector<HostTensor> &inputs,
                                                          std::vector<std::string> *order) {
  std::unordered_map<std::string, HostTensor> values;
  ValueObserver keep = [&](const Value &v, const HostTensor &t) {
    values[v.name] = t;
    if (order)
      order->push_back(v.name);
  };
  runReference(&m, m.main(), inputs, &keep);
  return values;
}

} // namespace

NumericsChecker::NumericsChecker(const Module &m, std::vector<HostTensor> inputs,
                                 NumericsCheckOptions opts)
    : inputs_(std::move(inputs)), opts_(std::move(opts)), lastGood_(printModuleToString(m)) {
  expected_ = runReference(&m, m.main(), inputs_);
}

void NumericsChecker::afterPass(const PassInvocation &inv, size_t index, const Module &m,
                                bool changed) {
  if (!changed)
    return;
  ++checked_;
  const Function &f = m.main();
  std::vector<HostTensor> got;
  std::string problem;
  try {
    got = runReference(&m, f, inputs_);
  } catch (const Error &e) {
    problem = std::string("the reference executor fails: ") + e.what();
  }
  for (size_t i = 0; problem.empty() && i < got.size() && i < expected_.size(); ++i) {
    Comparison c = compareTensors(got[i], expected_[i], opts_.rtol, opts_.atol);
    if (!c.ok)
      problem = "output " + std::to_string(i) + " '" + f.results[i]->name +
                "': " + describeMismatch(c, got[i], expected_[i]);
  }
  if (problem.empty() && got.size() != expected_.size())
    problem = "the function now returns " + std::to_string(got.size()) + " results, not " +
              std::to_string(expected_.size());
  if (problem.empty()) {
    lastGood_ = printModuleToString(m);
    return;
  }

  // Name the first intermediate whose value changed: same name in the IR
  // before the pass, same type, different numbers.
  std::string firstValue;
  try {
    auto before = parseModule(lastGood_, "<before " + inv.pass->name + ">");
    auto was = intermediates(*before, inputs_, nullptr);
    std::vector<std::string> order;
    auto now = intermediates(m, inputs_, &order);
    std::unordered_map<std::string, const Op *> defs;
    for (const auto &op : f.ops)
      for (const Value *r : op->results)
        defs[r->name] = op.get();
    for (const std::string &name : order) {
      auto it = was.find(name);
      if (it == was.end())
        continue;
      Comparison c = compareTensors(now.at(name), it->second, opts_.rtol, opts_.atol);
      if (c.ok)
        continue;
      firstValue = "; first diverging value: %" + name + " (" + defs.at(name)->where() +
                   "): " + describeMismatch(c, now.at(name), it->second);
      break;
    }
  } catch (const Error &) {
    // The failing IR may not run at all: the outputs' message says so.
  }
  std::string dumped;
  if (!opts_.dumpFailingDir.empty()) {
    namespace fs = std::filesystem;
    fs::create_directories(opts_.dumpFailingDir);
    fs::path b = fs::path(opts_.dumpFailingDir) / ("before-" + inv.pass->name + ".tcir");
    fs::path a = fs::path(opts_.dumpFailingDir) / ("after-" + inv.pass->name + ".tcir");
    std::ofstream(b) << lastGood_;
    std::ofstream(a) << printModuleToString(m);
    dumped = "; IR before and after written to " + b.string() + " and " + a.string();
  }
  fail("--verify-numerics: pass '", inv.spelling(), "' (", index, " of the pipeline) changes the ",
       "results: ", problem, firstValue, dumped);
}

} // namespace tc
