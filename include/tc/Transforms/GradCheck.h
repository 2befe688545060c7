// The gradient check: a differentiated module's analytic gradients against
// central finite differences of its loss, both on the reference executor in
// f64 (tc-opt --check-gradients; the autodiff tests).
#pragma once
#include "tc/IR/IR.h"
#include "tc/Runtime/HostTensor.h"
#include <cstdint>
#include <ostream>
#include <vector>

namespace tc {

struct GradCheckOptions {
  double rtol = 1e-5, atol = 1e-7;
  int samples = 8;    // elements checked per gradient (all when fewer), plus the largest
  double step = 1e-6; // finite-difference step, relative to max(1, |x|)
  uint64_t seed = 0;
};

// `m`'s main returns the loss, then the gradients: of the trained
// parameters (the training record's, tc/IR/TrainSignature.h), or, without
// one, of every float argument in order (autodiff wrt=args). `inputs` are
// main's non-state arguments. Prints one line per gradient to `os`;
// returns whether every checked element is within atol + rtol * max(|fd|,
// |analytic|) (NaN never is).
bool checkGradients(const Module &m, const std::vector<HostTensor> &inputs,
                    const GradCheckOptions &opts, std::ostream &os);

} // namespace tc
