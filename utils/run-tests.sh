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
# CI (.ci/run) sets TC_CI_DEADLINE. With less than 25 minutes left (the
# sanitizer suite's tests took 23 alone, session 41) its lit leaves out
# the slowest tests of utils/sanitize-slow-tests.txt, and with less than 12
# its lit does not run at all, rather than running CI past its limit, where
# nothing lands. Each says so in one line.
skip=()
if [ "${1:-}" = "--sanitize" ] && [ -n "${TC_CI_DEADLINE:-}" ]; then
  left=$((TC_CI_DEADLINE - $(date +%s)))
  if [ "$left" -lt 720 ]; then
    skip=(-E '^lit$')
    echo "run-tests: $((left / 60)) minutes of CI's budget left: the sanitizer build runs its" \
      "unit and conformance tests, not its lit"
  elif [ "$left" -lt 1500 ]; then
    LIT_FILTER_OUT="$(grep -v '^#' utils/sanitize-slow-tests.txt | paste -sd'|')"
    export LIT_FILTER_OUT
    echo "run-tests: $((left / 60)) minutes of CI's budget left: the sanitizer lit leaves out" \
      "the $(grep -vc '^#' utils/sanitize-slow-tests.txt) tests of utils/sanitize-slow-tests.txt"
  fi
fi
ctest --test-dir "$BUILD" --output-on-failure "${skip[@]}"
