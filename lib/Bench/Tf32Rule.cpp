#include "tc/Bench/Tf32Rule.h"
#include "tc/Bench/AmpRule.h"
#include "tc/CodeGen/LibraryTuning.h"

namespace tc::bench {

bool heldToTf32Rule(const Artifact &a) { return mayRoundThroughTf32(a); }

std::string describeTf32Check(double err, double bound) {
  return "err " + ampComparison(err, bound) + " (tf32)";
}

} // namespace tc::bench
