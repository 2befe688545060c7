#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-19 (utils/install-deps.sh installs
# it) and runs each for SECONDS (default 180; .ci/run gives 60), seeded from
# the committed corpora (utils/fuzz/corpus/), the lit tests and the
# committed models. A crash, leak, timeout or out-of-memory fails the script
# (exit 1) and leaves its reproducer in build-fuzz/crashes/<target>/: replay
# it with build-fuzz/bin/tc-<target> <file>.
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_EACH=${1:-180}
BUILD=build-fuzz
targets=(ParserFuzzer:tcir BytecodeFuzzer:tcbc OnnxImportFuzzer:onnx ArtifactFuzzer:artifact)
CC=clang-19 CXX=clang++-19 cmake -S . -B $BUILD -G Ninja -DTC_FUZZ=ON -DTC_BUILD_TESTS=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build $BUILD --target $(for t in "${targets[@]}"; do echo "tc-${t%%:*}"; done)
corpus=$BUILD/corpus # seeds plus what the runs add
mkdir -p $corpus/tcir $corpus/tcbc $corpus/onnx $corpus/artifact
cp test/IR/*.tcir test/Transforms/*.tcir $corpus/tcir/
cp models/ci/*.onnx $corpus/onnx/
cp test/Import/*.onnxtxt $corpus/onnx/ 2>/dev/null || true
cp utils/fuzz/corpus/tcbc/* $corpus/tcbc/
cp utils/fuzz/corpus/artifact/* $corpus/artifact/
export ASAN_OPTIONS=detect_leaks=1
failed=()
for t in "${targets[@]}"; do
  name=${t%%:*}; dir=$corpus/${t##*:}; crashes=$BUILD/crashes/$name
  mkdir -p "$crashes"
  echo "== $name for ${SECONDS_EACH}s"
  if ! $BUILD/bin/tc-$name -max_total_time=$SECONDS_EACH -max_len=65536 -timeout=10 \
      -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$crashes/" "$dir" \
      > "$BUILD/$name.log" 2>&1; then
    failed+=("$name")
    grep -E "ERROR|SUMMARY|Test unit written" "$BUILD/$name.log" | head -5 || true
    echo "== $name FAILED; reproducer(s): $(ls "$crashes")"
  fi
  grep -E "stat::number_of_executed_units|Done" "$BUILD/$name.log" || true
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzers failed: ${failed[*]} (logs: $BUILD/<name>.log)"
  exit 1
fi
