// Numerical bisection of a pass pipeline (tc-opt --verify-numerics): the
// reference executor runs the module before any pass and again after every
// pass that changed it; the first pass whose outputs leave the tolerance is
// named, with the first intermediate value (in execution order) that differs
// between the IR before and after that pass.
#pragma once
#include "tc/Runtime/HostTensor.h"
#include "tc/Transforms/Pass.h"
#include <string>
#include <vector>

namespace tc {

struct NumericsCheckOptions {
  double rtol = 1e-4, atol = 1e-5;
  // When set, the IR before and after the failing pass is written here as
  // before-<pass>.tcir and after-<pass>.tcir.
  std::string dumpFailingDir;
};

class NumericsChecker {
public:
  // Runs `m` (before any pass) on `inputs`: those outputs are the expectation.
  NumericsChecker(const Module &m, std::vector<HostTensor> inputs, NumericsCheckOptions opts);
  // The PassManager hook: throws tc::Error describing the divergence when
  // the outputs after `inv` differ from the expectation.
  void afterPass(const PassInvocation &inv, size_t index, const Module &m, bool changed);
  size_t passesChecked() const { return checked_; }

private:
  std::vector<HostTensor> inputs_, expected_;
  NumericsCheckOptions opts_;
  std::string lastGood_; // the IR after the last pass that kept the numbers
  size_t checked_ = 0;
};

} // namespace tc
