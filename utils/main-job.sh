#!/usr/bin/env bash
# The main job: set up, build everything, and push a bundled model through the
# pipeline as far as it goes today (import → optimize → summary → round trip).
set -euo pipefail
cd "$(dirname "$0")/.."
./utils/install-deps.sh
BUILD=${BUILD:-build}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD"
bin=$BUILD/bin
model=${1:-models/ci/cnn.onnx}
out=${OUT_DIR:-$BUILD/main-job}
mkdir -p "$out"
echo "== tc-import $model | tc-opt -O2 (pass timings below)"
"$bin/tc-import" "$model" -o "$out/model.tcbc"
"$bin/tc-opt" -O2 --time-passes "$out/model.tcbc" -o "$out/model.opt.tcbc"
"$bin/tc-opt" --passes=verify "$out/model.opt.tcbc" -S -o "$out/model.opt.tcir"
echo "== tc-prof --summary"
"$bin/tc-prof" --summary "$out/model.opt.tcbc"
echo "== round trip: text -> bytecode -> text"
"$bin/tc-opt" --passes=verify "$out/model.opt.tcir" -o "$out/rt.tcbc"
"$bin/tc-opt" --passes=verify "$out/rt.tcbc" -S -o "$out/rt.tcir"
cmp "$out/model.opt.tcir" "$out/rt.tcir" && echo "byte-identical ($(wc -c <"$out/rt.tcir") bytes of text)"
echo "main job: ok (outputs in $out)"
