#!/usr/bin/env bash
# Measured algorithm choice on the GPU (issue 18 items 2 and 3), ONE command
# on the GPU machine: each model (default resnet50) exported by
# utils/bench-gpu.py, optimized at fp16 (PRECISION=fp32: fp32, TF32 convs),
# then compiled for batch BATCH (default 32) three times: the heuristics'
# choice, --tune with a cold --tuning-cache (every call timed), --tune again
# (the cache's hit rate); the --stats tuning line, tc-prof compile's tuning
# stage, how many steps run a tuned choice, then tc-run timing of the
# heuristic and tuned artifacts alternately (median device ms, two rounds),
# and the tuned artifact's outputs against the heuristic one's (fp32: also
# an artifact without TF32 convs, --allow-tf32=none, timed beside them).
#
#   source .devkit/env.sh && utils/tune-gpu.sh .devkit/bin $OUT
#   ONNX=m.onnx utils/tune-gpu.sh build/bin /tmp/out   # a given model (no export)
set -euo pipefail
BIN=${1:?tool folder}
OUT=${2:?output folder}
MODELS=${MODELS:-resnet50}
BATCH=${BATCH:-32}
PRECISION=${PRECISION:-fp16}
W=$OUT/work
mkdir -p "$W"
if [ -n "${ONNX:-}" ]; then
  MODELS=$(basename "$ONNX" .onnx)
  cp "$ONNX" "$W/$MODELS.onnx"
else
  python3 "$(dirname "$0")/bench-gpu.py" --bin "$BIN" --out "$W" --models "$MODELS" \
    --batches "$BATCH" --modes eager --iterations 5 > "$W/bench.txt" 2> "$W/bench.log" || true
fi
prec=()
[ "$PRECISION" = fp16 ] && prec=(--precision fp16)
for m in ${MODELS//,/ }; do
  base=$W/$m
  [ -f "$base.onnx" ] || { echo "$m: not exported (see $W/bench.log)"; continue; }
  "$BIN/tc-import" "$base.onnx" -o "$base.tcbc"
  "$BIN/tc-opt" -O2 --target=cuda "${prec[@]}" "$base.tcbc" -o "$base.o2.tcbc"
  # The static shape --tune plans: the first symbolic dim of main's inputs at BATCH.
  "$BIN/tc-opt" -S "$base.o2.tcbc" -o "$base.o2.tcir"
  sym=$(grep -m1 'func @main' "$base.o2.tcir" |
    sed -nE 's/^[^[]*\[([A-Za-z_][A-Za-z0-9_]*)[],].*/\1/p')
  dim=()
  [ -n "$sym" ] && dim=(--dim "$sym=$BATCH")
  runs=(heuristic cold warm)
  [ "$PRECISION" = fp32 ] && runs+=(notf32) # fp32: also without TF32 convs
  for run in "${runs[@]}"; do
    flags=()
    case $run in
    cold | warm) flags=(--tune --tuning-cache "$OUT/tuning.cache") ;;
    notf32) flags=(--allow-tf32=none) ;;
    esac
    start=$(date +%s.%N)
    "$BIN/tc-codegen" --target=cuda --arch=sm_90 --stats "${dim[@]}" "${flags[@]}" \
      "$base.o2.tcbc" -o "$base.$run.tcx" 2> "$OUT/$m.$run.stats"
    echo "$m $run: tc-codegen $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $start }") s;" \
      "$(grep -h '^tuning:' "$OUT/$m.$run.stats" || echo 'no tuning')"
    grep -h 'note:' "$OUT/$m.$run.stats" || true
  done
  "$BIN/tc-prof" compile "$base.cold.tcx" | grep -E 'compile time|tune library calls' || true
  data=$base.b$BATCH
  if [ ! -f "$data/input_0.pb" ]; then
    mkdir -p "$data"
    "$BIN/tc-run" --target=ref "$base.heuristic.tcx" --random-inputs --output-dir "$data.rand" \
      > /dev/null 2>&1 || true
    cp "$data.rand"/input_*.pb "$data/" 2> /dev/null || true
  fi
  "$BIN/tc-run" "$base.cold.tcx" --inputs "$data" --print-steps 2>&1 |
    grep -cE 'tuned\(' | sed "s/^/$m: steps running a tuned choice: /" || true
  timed=(heuristic cold)
  [ "$PRECISION" = fp32 ] && timed+=(notf32)
  for round in 1 2; do
    for a in "${timed[@]}"; do
      "$BIN/tc-run" "$base.$a.tcx" --inputs "$data" --iterations 50 --warmup 10 --report=json \
        > "$OUT/$m.$a.$round.json" 2> "$OUT/$m.$a.$round.log" || true
    done
  done
  python3 - "$OUT" "$m" "${timed[@]}" << 'PY'
import json, sys
out, m, timed = sys.argv[1], sys.argv[2], sys.argv[3:]
def median(a, r):
    try:
        rep = json.load(open("%s/%s.%s.%d.json" % (out, m, a, r)))
        return "%.3f" % rep.get("device_ms", rep["latency_ms"])["median"]
    except (OSError, ValueError, KeyError):
        return "failed (%s/%s.%s.%d.log)" % (out, m, a, r)
for a in timed:
    print("%s %s: median device ms %s" % (m, "tuned" if a == "cold" else a,
          " ".join(median(a, r) for r in (1, 2))))
PY
  "$BIN/tc-run" "$base.heuristic.tcx" --inputs "$data" --output-dir "$OUT/$m.heuristic.out" \
    > /dev/null 2>&1 || true
  "$BIN/tc-run" "$base.cold.tcx" --inputs "$data" --compare "$OUT/$m.heuristic.out" \
    --rtol 5e-2 --atol 5e-2 2>&1 | grep -E 'output|error' | sed "s/^/$m tuned vs heuristic: /" || true
done
cp "$OUT/tuning.cache" "$OUT/tuning.cache.txt" 2> /dev/null || true
