#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-19 and runs each for SECONDS
# (default 180), seeded from the lit tests and the committed models.
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_EACH=${1:-180}
BUILD=build-fuzz
CC=clang-19 CXX=clang++-19 cmake -S . -B $BUILD -G Ninja -DTC_FUZZ=ON -DTC_BUILD_TESTS=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build $BUILD --target tc-ParserFuzzer tc-BytecodeFuzzer tc-OnnxImportFuzzer
corpus=$BUILD/corpus
mkdir -p $corpus/tcir $corpus/tcbc $corpus/onnx
cp test/IR/*.tcir test/Transforms/*.tcir $corpus/tcir/
if [ -x build/bin/tc-opt ]; then
  for f in test/IR/roundtrip.tcir test/Transforms/dce.tcir; do
    build/bin/tc-opt --passes=verify "$f" -o $corpus/tcbc/$(basename "$f").tcbc
  done
fi
cp models/ci/*.onnx $corpus/onnx/
cp test/Import/*.onnxtxt $corpus/onnx/ 2>/dev/null || true
export ASAN_OPTIONS=detect_leaks=1
for t in ParserFuzzer:tcir BytecodeFuzzer:tcbc OnnxImportFuzzer:onnx; do
  name=${t%%:*}; dir=$corpus/${t##*:}
  echo "== $name for ${SECONDS_EACH}s"
  $BUILD/bin/tc-$name -max_total_time=$SECONDS_EACH -max_len=65536 -timeout=10 -rss_limit_mb=4096 \
    -print_final_stats=1 $dir 2>&1 | grep -E "stat::number_of_executed_units|ERROR|SUMMARY|crash-|Done" || true
done
