#!/usr/bin/env bash
# Builds with warnings as errors and runs every test (gtest units + lit) and
# the format check. `--sanitize` does the same in an ASan+UBSan build.
set -euo pipefail
cd "$(dirname "$0")/.."
./utils/install-deps.sh
BUILD=build
flags=(-DTC_WERROR=ON)
if [ "${1:-}" = "--sanitize" ]; then
  BUILD=build-asan
  # -O1 -g1: line tables are enough for sanitizer stack traces, and the
  # build takes far less of CI's time than -O2 -g.
  flags+=(-DTC_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG")
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
cmake -S . -B "$BUILD" -G Ninja "${flags[@]}" >/dev/null
cmake --build "$BUILD"
if [ -z "${1:-}" ]; then
  cmake --build "$BUILD" --target check-format
fi
ctest --test-dir "$BUILD" --output-on-failure
