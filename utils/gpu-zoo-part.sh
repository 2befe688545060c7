#!/usr/bin/env bash
# One part of the zoo on the GPU machine (docs/zoo.md), in the time of one
# device call: the models exported by four exporters side by side (each model
# once per machine), then timed by tc-bench one at a time beside PyTorch
# (eager and torch.compile reduce-overhead, AMP), rows into $OUT/NAME.db.
#
#   utils/gpu-zoo-part.sh export SUITE BATCH a,b,c          # needs only PyTorch
#   SHA=... utils/gpu-zoo-part.sh bench SUITE BATCH a,b,c NAME  # and tc in /tmp/src/build/bin (devkit)
#
# tc runs in its best mode (cudagraphs, fp16 AMP); eager, default and fp32
# are tc-bench's other modes when there is time for them.
set -euo pipefail
cd "$(dirname "$0")/.."
what=$1 suite=$2 batch=$3 models=$4
M=/tmp/bench-models
OUT=${OUT:-/tmp/gpu-zoo-out}
mkdir -p "$M" "$OUT"
IFS=, read -ra all <<< "$models"
todo=()
for m in "${all[@]}"; do [ -f "$M/$m/model.onnx" ] || todo+=("$m"); done
pids=()
for ((p = 0; p < 4; p++)); do
  list=""
  for ((i = p; i < ${#todo[@]}; i += 4)); do list+="${todo[i]},"; done
  [ -z "$list" ] && continue
  OMP_NUM_THREADS=4 python3 utils/bench-gpu.py --export-for-bench "$M" --models "${list%,}" \
    --batches "$batch" > "$OUT/export-$suite-$p.log" 2>&1 &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || true; done
echo "exported: $(ls "$M" | tr '\n' ' ')"
[ "$what" = bench ] || exit 0
export LD_LIBRARY_PATH=/tmp/kit/usr/lib/x86_64-linux-gnu:/usr/local/cuda/lib64
/tmp/src/build/bin/tc-bench --suite "$suite" --models "$models" --run-id "zoo-${SHA:-unknown}" \
  --commit "${SHA:-unknown}" --target cuda --modes cudagraphs --precisions amp \
  --torch-modes eager,reduce-overhead --models-dir "$M" --manifest models/manifest.json \
  --torch-script utils/bench-gpu.py --python python3 --timeout 240 --db "$OUT/$5.db"
