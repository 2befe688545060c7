#!/usr/bin/env bash
# The GPU profiles in docs/profiling.md, ONE command on the GPU machine:
# resnet50 and bert_base exported and compiled at fp16 by utils/bench-gpu.py
# (which also checks them against PyTorch), then tc-prof on each at batch 32
# (bert: 8 sequences of 128) with CUDA graphs on and off, and at batch 1
# without graphs (the launch-bound case): summaries, traces, JSON reports,
# the compile breakdown, the graphs-off -> on diff, and tc-run's own timing
# without CUPTI (how much tracing adds), packed into OUT/profiles.tgz (the
# models and data stay in OUT/work).
#
#   source .devkit/env.sh && utils/profile-gpu.sh .devkit/bin $OUT
set -euo pipefail
BIN=${1:?tool folder}
FINAL=${2:?output folder}
OUT=$FINAL/work
MODELS=${MODELS:-resnet50,bert_base}
mkdir -p "$OUT"
python3 "$(dirname "$0")/bench-gpu.py" --bin "$BIN" --out "$OUT" --models "$MODELS" \
  --batches 32,1 --modes eager --iterations 20 > "$OUT/bench.txt" 2> "$OUT/bench.log" || true
for m in ${MODELS//,/ }; do
  [ -f "$OUT/$m.tcx" ] || { echo "$m: not compiled (see bench.log)"; continue; }
  "$BIN/tc-prof" compile "$OUT/$m.tcx" > "$OUT/$m.compile.txt"
  for b in 32 1; do
    for g in on off; do
      tag="$m.b$b.graphs-$g"
      "$BIN/tc-run" "$OUT/$m.tcx" --inputs "$OUT/$m.b$b" --iterations 20 --cuda-graphs=$g \
        --report json > "$OUT/$tag.tc-run.json" 2> /dev/null || true
      "$BIN/tc-prof" "$OUT/$m.tcx" --inputs "$OUT/$m.b$b" --iterations 20 --cuda-graphs=$g \
        --summary --trace "$OUT/$tag.trace.json" > "$OUT/$tag.summary.txt" 2> "$OUT/$tag.log" \
        || echo "$tag: tc-prof failed: $(tail -1 "$OUT/$tag.log")"
    done
    "$BIN/tc-prof" diff "$OUT/$m.b$b.graphs-off.trace.json" "$OUT/$m.b$b.graphs-on.trace.json" \
      > "$OUT/$m.b$b.diff.txt" 2>&1 || true
  done
done
(cd "$OUT" && tar czf "$FINAL/profiles.tgz" bench.txt bench.log bench-gpu.json *.summary.txt \
  *.trace.json *.diff.txt *.compile.txt *.tc-run.json *.log)
for f in "$OUT"/*.summary.txt; do echo "== $f"; head -12 "$f"; tail -4 "$f"; done
rm -rf "$OUT"
