#!/usr/bin/env bash
# The zoo on a machine with several GPUs, in one device call (docs/zoo.md).
# Models are dealt round-robin to the GPUs; each GPU's worker exports one
# model (utils/bench-gpu.py --export-for-bench) and times it at once with
# tc-bench beside PyTorch (eager and torch.compile reduce-overhead, AMP;
# tc in cudagraphs), so a sweep cut short by its time limit still leaves
# every finished model's row. One database and one log per GPU; all of it
# ends in ONE tarball, $OUT/sweep-NAME.tar.xz (the device tool brings back
# at most 8 files), written before LIMIT seconds have passed.
#
#   SHA=<commit> [GPUS=1,2,3] [PROFILE=1] [BATCH=N] [TUNE=1] utils/gpu-zoo-sweep.sh NAME LIMIT_S [MODEL ...]
#
# MODEL: a zoo model of models/manifest.json (its `suite` gives the batch);
# none: every model of the vision, text and generative suites. GPUS: the
# GPUs to use (default all); PROFILE=1 also keeps tc-prof's per-kernel CSV
# and verdict of each model's artifact; BATCH=N: every model at batch N
# (images, or sequences of 128 tokens) instead of its suite's; TUNE=1:
# tc-codegen --tune (one tuning cache per GPU; rows under run id
# zoo-tune-SHA, compile time includes the tuning); TRAIN=1: the training
# suites instead (train-zoo-vision, -text, -generative of the manifest; MODEL
# names from them): each model exported by utils/bench-train.py
# --export-for-train and its train step timed by tc-bench --train beside
# PyTorch eager and torch.compile (PRECS, default amp; STEPS, default 30),
# rows under run id train-zoo-SHA; PREFETCH=N exports N models at a time
# ahead of the workers. OPT_ARGS="--flag ...": more tc-opt flags for tc's
# compiles (tc-bench --opt-arg), with TAG=NAME in the run ids (train-zoo-NAME-SHA,
# zoo-NAME-SHA) so their rows stay apart. BENCH_ARGS="...": more tc-bench
# flags for TRAIN=1 (e.g. --torch-modes eager for an A/B of tc flags whose
# torch.compile times the untagged sweep of the same call already has). A GPU
# named more than once (GPUS=0,0,0,0) runs that many workers on it side by side:
# a pass/fail check of many models in one call (with TAG=check BENCH_ARGS="--torch-modes
# eager"), whose times and compile times are contended: never merge them as timings. tc must be in
# /tmp/src/build/bin (the devkit's two commands). Here, afterwards:
#   tar -xJf sweep-NAME.tar.xz && build/bin/tc-bench --merge gpu*.db -o NAME.db
set -uo pipefail
cd "$(dirname "$0")/.."
name=$1 limit=$2
shift 2
M=${MODELS_DIR:-/tmp/${TRAIN:+train-}bench-models${BATCH:+-b$BATCH}}
BIN=${BIN:-/tmp/src/build/bin}
OUT=${OUT:-/tmp/gpu-zoo-out}
W=/tmp/sweep-$name
rm -rf "$W" && mkdir -p "$M" "$W" "$OUT"
export LD_LIBRARY_PATH=/tmp/kit/usr/lib/x86_64-linux-gnu:/usr/local/cuda/lib64
start=$(date +%s)
# "suite model" lines, the suites interleaved (a sweep cut short still has
# some of each), each in manifest order; named models in the order given.
TRAIN=${TRAIN:-} python3 - "$@" > "$W/plan.txt" <<'EOF'
import json, os, sys
m = json.load(open("models/manifest.json"))
want = sys.argv[1:]
suites = ("vision", "text", "generative")
if os.environ["TRAIN"]:
    suites = ("train-zoo-vision", "train-zoo-text", "train-zoo-generative")
    rows = [(s, n) for s in suites for n in m["suites"][s]["models"]]
else:
    rows = [(e["suite"], e["name"]) for e in m["models"] if e.get("suite") in suites]
seen = {}
for i, r in enumerate(rows):
    seen[r] = sum(1 for q in rows[:i] if q[0] == r[0])
rows.sort(key=lambda r: (seen[r], suites.index(r[0])))
if want:
    unknown = set(want) - {n for _, n in rows}
    if unknown:
        sys.exit("gpu-zoo-sweep: not zoo models: " + ", ".join(sorted(unknown)))
    # Named models run in the order given (a sweep cut short by LIMIT
    # still has the first ones), not interleaved by suite.
    rows = sorted((r for r in rows if r[1] in want), key=lambda r: want.index(r[1]))
for s, n in rows:
    print(s, n)
EOF
[ -s "$W/plan.txt" ] || { echo "gpu-zoo-sweep: nothing to run"; exit 2; }
IFS=, read -ra ids <<< "${GPUS:-$(seq -s, 0 $(($(nvidia-smi -L | wc -l) - 1)))}"
gpus=${#ids[@]}
threads=$(($(nproc) / gpus))
opt=()
for a in ${OPT_ARGS:-}; do opt+=("--opt-arg=$a"); done
batch_of() { python3 -c "import json,sys; print(json.load(open('models/manifest.json'))['suites'][sys.argv[1]]['batch'])" "$1"; }
train_one() { # GPU g, SUITE, MODEL: its train step (TRAIN=1), at the suite's batch or BATCH
  local g=$1 suite=$2 model=$3
  if [ -n "${PREFETCH:-}" ]; then # the prefetcher exports it (or has given up on it)
    while [ ! -f "$W/exported-$model" ]; do sleep 1; done
  elif [ ! -f "$M/$model/model.onnx" ]; then
    OMP_NUM_THREADS=$threads python3 utils/bench-train.py --export-for-train "$M" --models "$model" \
      ${BATCH:+--batch $BATCH} < /dev/null 2>&1 | tail -5
  fi
  "$BIN/tc-bench" --train --suite "$suite" --models "$model" --run-id "train-zoo-${TAG:+$TAG-}${SHA:-unknown}" "${opt[@]}" \
    --commit "${SHA:-unknown}" --target cuda --precisions "${PRECS:-amp}" --steps "${STEPS:-30}" \
    --warmup 5 --models-dir "$M" --timeout 240 --db "$W/gpu$g.db" --work-dir "$W/work" ${BENCH_ARGS:-} < /dev/null 2>&1
  rm -rf "$W/work/$model"
}
worker() { # GPU g: every gpus-th line of the plan from line g
  local g=$1 i=0 suite model
  while read -r suite model; do
    if ((i++ % gpus != g)); then continue; fi
    local b
    b=${BATCH:-$(batch_of "$suite")}
    echo "== $(date +%T) $suite $model (batch $b)"
    if [ -n "${TRAIN:-}" ]; then
      train_one "$g" "$suite" "$model"
      continue
    fi
    if [ ! -f "$M/$model/model.onnx" ]; then
      OMP_NUM_THREADS=$threads python3 utils/bench-gpu.py --export-for-bench "$M" \
        --models "$model" --batches "$b" < /dev/null 2>&1 | tail -5
    fi
    local tune=()
    [ -n "${TUNE:-}" ] && tune=(--codegen-arg=--tune "--codegen-arg=--tuning-cache=$W/tuning-gpu$g.cache")
    "$BIN/tc-bench" --suite "$suite" --models "$model" --run-id "zoo-${TUNE:+tune-}${TAG:+$TAG-}${SHA:-unknown}" "${tune[@]}" "${opt[@]}" \
      --commit "${SHA:-unknown}" --batch "$b" --target cuda --modes cudagraphs --precisions amp \
      --torch-modes eager,reduce-overhead --models-dir "$M" --manifest models/manifest.json \
      --torch-script utils/bench-gpu.py --python python3 --timeout 240 --db "$W/gpu$g.db" \
      --work-dir "$W/work" < /dev/null 2>&1
    # PROFILE=1: where tc's time goes (tc-prof's per-kernel CSV and verdict).
    local art
    art=$(ls "$W/work/$model"/*.tcx 2>/dev/null | head -1)
    if [ -n "${PROFILE:-}" ] && [ -n "$art" ]; then
      "$BIN/tc-prof" "$art" --inputs "$(ls -d "$M/$model"/test_data_set_* | head -1)" --format csv \
        > "$W/prof-$model.csv" 2> "$W/prof-$model.err" < /dev/null
      "$BIN/tc-prof" "$art" --inputs "$(ls -d "$M/$model"/test_data_set_* | head -1)" 2>&1 < /dev/null |
        tail -4 > "$W/prof-$model.txt"
    fi
    rm -f "$W/work/$model"/*.tcx "$W/work/$model"/*.tcbc
  done < "$W/plan.txt"
  echo "== $(date +%T) gpu $g done"
}
# PREFETCH=N (TRAIN=1): the exports run ahead on the CPUs, N at a time in plan
# order, so a GPU's worker does not wait on its model's export (one GPU: the
# export was a third of each model's time).
if [ -n "${TRAIN:-}" ] && [ -n "${PREFETCH:-}" ]; then
  (cut -d' ' -f2 "$W/plan.txt" | xargs -P "$PREFETCH" -I{} sh -c \
    '[ -f "$0/{}/model.onnx" ] || OMP_NUM_THREADS=2 python3 utils/bench-train.py --export-for-train "$0" --models {} \
       ${1:+--batch $1} < /dev/null > "$2/export-{}.log" 2>&1; touch "$2/exported-{}"' "$M" "${BATCH:-}" "$W") &
  prefetcher=$!
fi
pids=()
for ((g = 0; g < gpus; g++)); do
  CUDA_VISIBLE_DEVICES=${ids[g]} worker "$g" > "$W/gpu$g.log" 2>&1 &
  pids+=($!)
done
# Past the deadline the workers stop (a model half done is lost, the rows
# before it stay); 40 s are left for the tarball.
deadline=$((start + limit - 40))
alive() { for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }
while (($(date +%s) < deadline)) && alive; do sleep 5; done
for p in "${pids[@]}" ${prefetcher:-}; do pkill -TERM -P "$p" 2>/dev/null; kill "$p" 2>/dev/null; done
sleep 2
for f in "$W"/gpu*.log; do echo "--- $f"; tail -15 "$f"; done
# Databases, logs and profiles only: the work folder (artifacts, reference
# data) would take minutes to pack and pass the device tool's size limit.
(cd "$W" && tar -cJf "$OUT/sweep-$name.tar.xz" plan.txt gpu*.db gpu*.log $(ls prof-* 2>/dev/null)) && ls -la "$OUT"
