// tc-opt with one deliberately wrong pass, `break-add` (every Add of @main
// becomes a Sub), built only with the tests: the numerics bisection
// (--verify-numerics) must stop at it and name the first Add's result.
#include "tc/Tools/Drivers.h"
#include "tc/Transforms/Pass.h"

namespace {

bool runBreakAdd(tc::Module &m, const tc::PassOptions &) {
  bool changed = false;
  for (auto &op : m.main().ops)
    if (op->is(tc::OpKind::Add)) {
      op->kind = tc::OpKind::Sub;
      changed = true;
    }
  return changed;
}

} // namespace

int main(int argc, char **argv) {
  tc::registerExtraPass({"break-add", runBreakAdd, "Test only: turns every Add into a Sub.", {}});
  return tc::tools::tcOptMain(argc, argv);
}
