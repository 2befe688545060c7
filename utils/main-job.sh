#!/usr/bin/env bash
# The main job: set up, build everything, and push a bundled model through the
# whole pipeline: import → optimize (numerics checked after every pass) →
# compile for this CPU → run the artifact against the exporter's outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
./utils/install-deps.sh
BUILD=${BUILD:-build}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD"
bin=$BUILD/bin
model=${1:-models/small/small_cnn/model.onnx}
data=$(dirname "$model")/test_data_set_0
out=${OUT_DIR:-$BUILD/main-job}
mkdir -p "$out"
echo "== tc-import $model | tc-opt -O2 (pass timings below)"
"$bin/tc-import" "$model" -o "$out/model.tcbc"
verify=(--verify-numerics)
[ -d "$data" ] && verify+=(--inputs "$data")
"$bin/tc-opt" -O2 --time-passes --stats --print-memory-plan "${verify[@]}" "$out/model.tcbc" -o "$out/model.opt.tcbc"
"$bin/tc-opt" --passes=verify "$out/model.opt.tcbc" -S -o "$out/model.opt.tcir"
echo "== tc-prof --summary"
"$bin/tc-prof" --summary "$out/model.opt.tcbc"
echo "== round trip: text -> bytecode -> text"
"$bin/tc-opt" --passes=verify "$out/model.opt.tcir" -o "$out/rt.tcbc"
"$bin/tc-opt" --passes=verify "$out/rt.tcbc" -S -o "$out/rt.tcir"
cmp "$out/model.opt.tcir" "$out/rt.tcir" && echo "byte-identical ($(wc -c <"$out/rt.tcir") bytes of text)"
echo "== tc-codegen --target=cpu | tc-run"
"$bin/tc-codegen" --target=cpu --stats "$out/model.opt.tcbc" -o "$out/model.tcx"
if [ -d "$data" ]; then
  "$bin/tc-run" "$out/model.tcx" --inputs "$data" --compare "$data" --rtol 1e-4 --atol 1e-5 --iterations 10
else
  "$bin/tc-run" "$out/model.tcx" --random-inputs --dim N=2 --iterations 10
fi
echo "== tc-prof: per-kernel table, verdict, and a trace of compile + runs"
inputs=(--random-inputs --dim N=2)
[ -d "$data" ] && inputs=(--inputs "$data")
"$bin/tc-prof" "$out/model.tcx" "${inputs[@]}" --iterations 10 --summary --trace "$out/trace.json"
echo "main job: ok (outputs in $out; open $out/trace.json in ui.perfetto.dev)"
