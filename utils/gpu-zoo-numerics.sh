#!/usr/bin/env bash
# Issue 16's correctness floor on every zoo model, in one device call: the
# zoo's small configs exported here (models/export_torch_models.py --small,
# dynamo; PyTorch's fp32 CPU outputs beside the inputs), JOBS exporters at
# once, then utils/zoo-coverage.py --check compiles each for CUDA and CPU at
# fp32 and compares its outputs with PyTorch's (max relative error <= 1e-3;
# CUDA_PRECISION=fp16: the CUDA artifacts at fp16, <= 2e-2). Writes
# $OUT/numerics-NAME.tar.xz (markdown, JSON, export log).
#
#   [JOBS=8] [CUDA_PRECISION=fp32] [TARGETS=cuda,cpu] [MODELS=a,b] utils/gpu-zoo-numerics.sh NAME
#
# tc must be in /tmp/src/build/bin (the devkit's two commands); without a
# GPU: BIN=build/bin TARGETS=cpu (and PATH's python3 with torch).
set -uo pipefail
cd "$(dirname "$0")/.."
name=$1
jobs=${JOBS:-8}
BIN=${BIN:-/tmp/src/build/bin}
OUT=${OUT:-/tmp/gpu-zoo-out}
Z=/tmp/zoo-numerics-$name
rm -rf "$Z" && mkdir -p "$Z" "$OUT"
export LD_LIBRARY_PATH=/tmp/kit/usr/lib/x86_64-linux-gnu:/usr/local/cuda/lib64
names=$(python3 models/export_torch_models.py "$Z" --list 2>/dev/null | awk '$2 ~ /^(vision|text|generative)$/ {print $1}')
[ -z "${MODELS:-}" ] || names=$(echo "$MODELS" | tr , '\n')
# JOBS exporters, every JOBS-th model each (one process exports its models in
# turn; each writes its own status file, joined below).
for k in $(seq 0 $((jobs - 1))); do
  part=$(echo "$names" | awk -v k="$k" -v n="$jobs" 'NR % n == k' | paste -sd,)
  [ -n "$part" ] || continue
  mkdir -p "$Z/p$k"
  OMP_NUM_THREADS=2 python3 models/export_torch_models.py "$Z/p$k" "$part" --small --exporters dynamo \
    > "$Z/export-$k.log" 2>&1 &
done
wait
mkdir -p "$Z/all"
for k in "$Z"/p*; do mv "$k"/*.dynamo.* "$Z/all/" 2>/dev/null; done
python3 - "$Z" <<'PY'
import glob, json, sys
z = sys.argv[1]
st = {}
for f in glob.glob(z + "/p*/export-status.json"):
    st.update(json.load(open(f)))
json.dump(st, open(z + "/all/export-status.json", "w"), indent=1)
PY
python3 utils/zoo-coverage.py "$Z/all" "$BIN" --check --cuda-precision "${CUDA_PRECISION:-fp32}" \
  --targets "${TARGETS:-cuda,cpu}" --models "$(echo "$names" | paste -sd,)" -j "$jobs" \
  --md "$Z/numerics-$name.md" --json "$Z/numerics-$name.json" 2>&1 | tee "$Z/check.log" | grep -v "numerics ok"
cat "$Z"/export-*.log > "$Z/export.log"
tar -cJf "$OUT/numerics-$name.tar.xz" -C "$Z" "numerics-$name.md" "numerics-$name.json" check.log export.log
grep -c "numerics ok" "$Z/check.log" | sed 's/$/ model-targets with numerics ok/'
