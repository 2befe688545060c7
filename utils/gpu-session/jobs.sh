# GPU jobs after call2.sh (utils/gpu-session/split-kit.sh): bash jobs.sh JOB... (bert gpt2 llama vit
# resnet: tc-bench --train of one model; conf: CUDA conformance; rnn: bench-rnn.py; prof: tc-prof
# of the bert_base, resnet50 and vit_b_16 steps; profc: the same from steps compiled here, no
# tc-bench run first (PROF_MODELS, default resnet50 vit_b_16); agemm: fp32 steps with
# attention-grad-gemms on and off, profiled (AG_MODELS); convt: resnet50's step with NHWC ConvTranspose
# against NCHW, output by output; grid: utils/kernel-grid.py points per `columns` geometry,
# GRID_TUNES); cudnn: resnet50's fp32 step with f32 convs on cuDNN's legacy API, its graph API
# and --tune; vgrid: kernel-grid points with default and tuned (--tune) kernel variants; results
# under /tmp/res, packed into $OUT/res-<first job>.tar.xz.
export LD_LIBRARY_PATH=/tmp/kit/usr/lib/x86_64-linux-gnu:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1
B=/tmp/build/bin; SHA=$(cat .kit/p2/sha /tmp/build/sha 2>/dev/null | head -1); SHA=${SHA:-unknown}; R=/tmp/res; mkdir -p $R
T0=$(date +%s)
el() { echo "[$(( $(date +%s)-T0 )) s]"; }
# An export call1.sh started: done (its line in export.log), else waited for while its export
# loop runs (up to 600 s); with the loop gone, the model's file decides at once (a lost
# export.log no longer means a 600 s wait).
wait_export() {
  for i in $(seq 300); do
    grep -qs "exported $1 " $R/export.log && return 0
    if ! pgrep -f "bench-train.py --export-for-train" > /dev/null; then
      [ -f /tmp/train-models/$1/model.onnx ] && return 0
      break
    fi
    sleep 2
  done
  echo "export of $1 not done"; return 1
}
train() { # MODEL CAP STEPS [extra tc-bench flags]; PREC (fp32,amp by default) from the job's ":amp"
  local m=$1 cap=$2 steps=$3; shift 3
  wait_export $m || return
  echo "$(el) train $m"
  timeout $cap $B/tc-bench --train --suite train --models $m --run-id train-$SHA --commit $SHA --target cuda \
    --precisions ${PREC:-fp32,amp} --steps $steps --warmup 10 --models-dir /tmp/train-models --timeout 240 \
    --db $R/train-$m.db --work-dir /tmp/work/$m "$@" > $R/train-$m.log 2>&1
  echo "$(el) train $m rc=$?"; grep -v "^\s*$" $R/train-$m.log | tail -12
}
profile() { # ARTIFACT DATA MODEL PREC CAP: tc-prof of 20 replays, table and gzipped trace under $R
  timeout $5 $B/tc-prof $1 --inputs $2 --iterations 20 --summary --trace $R/prof-$3-$4.json > $R/prof-$3-$4.txt 2>&1
  echo "prof $3 $4 rc=$?"; gzip -f $R/prof-$3-$4.json
}
step() { # MODEL OUT PREC [tc-opt flags]: OUT.tcx, the model's train step compiled as tc-bench
  # compiles it (AdamW lr 1e-4, wd 0.01; fp32 without TF32); log in OUT.log
  local m=$1 o=$2 p=$3; shift 3
  ( $B/tc-import /tmp/train-models/$m/model.onnx -o $o.in.tcbc && \
    $B/tc-opt --train --loss=cross-entropy --optimizer=adamw:lr=0.0001,weight-decay=0.01 -O2 --target=cuda \
      $( [ $p = amp ] && echo --precision=fp16 ) "$@" $o.in.tcbc -o $o.tcbc && \
    $B/tc-codegen --target=cuda $( [ $p = fp32 ] && echo --allow-tf32=none ) $o.tcbc -o $o.tcx ) > $o.log 2>&1
}
# A job starts only if its cap ends before the call's deadline (DEADLINE s after the start, default 560).
DL=$(( T0 + ${DEADLINE:-560} ))
fits() { [ $(( $(date +%s) + $1 )) -le $DL ] || { echo "$(el) SKIPPED $job (cap $1 s)"; echo $job >> $R/skipped; return 1; }; }
# A training job may name one precision: gpt2:amp (and then a cap half the size).
for spec in "$@"; do job=${spec%%:*}; PREC=; [ "$spec" = "$job" ] || PREC=${spec#*:}; c=${PREC:+130}; case $job in
  bert) fits ${c:-230} && train bert_base ${c:-230} 100 ;;
  gpt2) fits ${c:-230} && train gpt2 ${c:-230} 100 ;;
  llama) fits ${c:-230} && train llama ${c:-230} 100 ;;
  vit) fits ${c:-230} && train vit_b_16 ${c:-230} 100 ;;
  resnet) fits ${c:-350} && train resnet50 ${c:-350} 100 --f64-reference ;;
  conf) fits 250 || continue; echo "$(el) conformance"
    for d in .kit/p3/*.deb; do [ -f "$d" ] && dpkg -x "$d" /; done  # the test data (carry .kit/p3)
    timeout 250 python3 utils/conformance.py --bin $B --backends cuda --jobs 16 --timeout 120 --report $R/conformance.md > $R/conformance.log 2>&1; echo "$(el) conformance rc=$?"; tail -25 $R/conformance.log ;;
  rnn) fits 150 || continue; echo "$(el) rnn"; timeout 150 python3 utils/bench-rnn.py --bin $B --out /tmp/rnn > $R/rnn.log 2>&1; echo "$(el) rnn rc=$?"; tail -12 $R/rnn.log ;;
  prof) fits 120 || continue; echo "$(el) prof"
    for m in bert_base resnet50 vit_b_16; do for p in amp fp32; do
      a=$(ls /tmp/work/$m/train.*/train.$p.tcx 2>/dev/null | head -1); d=$(find /tmp/train-models/$m -maxdepth 2 -type d -name 'test_data_set_*' | sort | head -1)
      [ -n "$a" ] && [ -n "$d" ] || { echo "prof $m $p: no artifact/data"; continue; }
      profile $a $d $m $p 30
    done; done; head -60 $R/prof-bert_base-amp.txt ;;
  profc) fits 200 || continue; echo "$(el) profc"
    # Per-kernel profiles without tc-bench's PyTorch side: each model's train step compiled
    # (step), all in parallel, then tc-prof of each alone. Models: PROF_MODELS (default
    # resnet50 vit_b_16); precisions PROF_PRECS (default amp fp32); PROF_FLAGS: extra tc-opt
    # flags, PROF_TAG: a suffix for the profiles' names.
    for m in ${PROF_MODELS:-resnet50 vit_b_16}; do wait_export $m || continue; W=/tmp/profc/$m; mkdir -p $W
      for p in ${PROF_PRECS:-amp fp32}; do step $m $W/$p $p $PROF_FLAGS & done; done; wait; echo "$(el) profc compiled"
    for m in ${PROF_MODELS:-resnet50 vit_b_16}; do for p in ${PROF_PRECS:-amp fp32}; do
      a=/tmp/profc/$m/$p.tcx; d=$(find /tmp/train-models/$m -maxdepth 2 -type d -name 'test_data_set_*' | sort | head -1)
      [ -f $a ] && [ -n "$d" ] || { echo "profc $m $p: no artifact/data"; tail -3 /tmp/profc/$m/$p.log; continue; }
      profile $a $d $m $p$PROF_TAG 40; grep -A6 "per phase" $R/prof-$m-$p$PROF_TAG.txt
    done; done ;;
  agemm) fits 320 || continue; echo "$(el) agemm"
    # The f32 attention as batched GEMMs (attention-grad-gemms: the backward since session 35,
    # the train step's forward since 46) against the f32 kernels: each model's fp32 step
    # compiled with --attention-grad-gemms on, backward (the forward's kernel) and off (in
    # parallel), then tc-prof of each alone. Models: AG_MODELS (default vit_b_16 bert_base).
    for m in ${AG_MODELS:-vit_b_16 bert_base}; do wait_export $m || continue; W=/tmp/agemm/$m; mkdir -p $W
      for v in on backward off; do step $m $W/$v fp32 --attention-grad-gemms=$v & done; done; wait
    echo "$(el) agemm compiled"
    for m in ${AG_MODELS:-vit_b_16 bert_base}; do for v in on backward off; do
      a=/tmp/agemm/$m/$v.tcx; d=$(find /tmp/train-models/$m -maxdepth 2 -type d -name 'test_data_set_*' | sort | head -1)
      [ -f $a ] && [ -n "$d" ] || { echo "agemm $m $v: no artifact/data"; tail -3 /tmp/agemm/$m/$v.log; continue; }
      profile $a $d $m fp32-ag-$v 40; grep -A6 "per phase" $R/prof-$m-fp32-ag-$v.txt
    done; done ;;
  convt) fits 200 || continue; wait_export resnet50 || continue; echo "$(el) convt"
    # Which of resnet50's ConvTransposes goes wrong in NHWC on the GPU (session 33: the train
    # step diverged with --nhwc-conv-transpose=on): one SGD step (lr 1: the update is the
    # gradient) from the same state and batch, NHWC against NCHW, every output compared.
    W=/tmp/convt; mkdir -p $W; $B/tc-import /tmp/train-models/resnet50/model.onnx -o $W/m.tcbc
    for v in on off; do ( $B/tc-opt --train --loss=cross-entropy --optimizer=sgd:lr=1 -O2 --target=cuda \
      --nhwc-conv-transpose=$v $W/m.tcbc -o $W/$v.tcbc && $B/tc-codegen --target=cuda --allow-tf32=none \
      $W/$v.tcbc -o $W/$v.tcx ) > $W/$v.log 2>&1 & done; wait
    d=/tmp/train-models/resnet50/test_data_set_0
    timeout 60 $B/tc-run $W/off.tcx --inputs $d --output-dir $W/nchw > /dev/null 2>&1
    timeout 60 $B/tc-run $W/on.tcx --inputs $d --compare $W/nchw --print-steps > $R/convt.txt 2>&1
    echo "$(el) convt rc=$?"; grep -c "\[ok\]" $R/convt.txt; grep "MISMATCH" $R/convt.txt | head -20 ;;
  cudnn) fits 200 || continue; wait_export resnet50 || continue; echo "$(el) cudnn"
    # f32 convs through cuDNN's legacy API (the default) against its graph API (TC_CUDNN_API=
    # all-graph: engines that round f32 operands left out, as TF32 is off) and against the
    # legacy algorithms timed (tc-codegen --tune): resnet50's fp32 step, tc-prof of each.
    W=/tmp/cudnn; mkdir -p $W; step resnet50 $W/fp32 fp32
    ( cd $W && $B/tc-codegen --target=cuda --allow-tf32=none --tune --stats fp32.tcbc -o tuned.tcx > tune.log 2>&1 )
    echo "$(el) cudnn compiled"; tail -3 $W/tune.log; d=/tmp/train-models/resnet50/test_data_set_0
    profile $W/fp32.tcx $d resnet50 fp32-legacy 40; grep -A6 "per phase" $R/prof-resnet50-fp32-legacy.txt
    TC_CUDNN_API=all-graph profile $W/fp32.tcx $d resnet50 fp32-graph 40; grep -A6 "per phase" $R/prof-resnet50-fp32-graph.txt
    profile $W/tuned.tcx $d resnet50 fp32-tuned 40; grep -A6 "per phase" $R/prof-resnet50-fp32-tuned.txt ;;
  grid) fits 120 || continue; echo "$(el) grid"
    # utils/kernel-grid.py over GRID_MATCH (a point-name substring, default the columns
    # reductions) once per `columns` geometry of GRID_TUNES (TC_COLUMNS_TUNE values, "-" the
    # built-in one; PyTorch beside the first only); one report each, then one over all.
    n=0; for tune in ${GRID_TUNES:--}; do n=$((n+1)); fits 60 || break
      t=$([ "$tune" = - ] && echo "" || echo "$tune"); tg=$(echo "${t:-default}" | tr ',=' '_-')
      TC_COLUMNS_TUNE=$t timeout $(( DL - $(date +%s) - 20 )) python3 utils/kernel-grid.py --bin $B --target cuda --jobs 16 \
        --families ${GRID_FAMILIES:-reduce} --dtypes ${GRID_DTYPES:-f16,f32} --max-points 0 --match "${GRID_MATCH:-axes=columns}" \
        $([ $n -gt 1 ] && echo --torch off) --out $R/grid-$tg.jsonl --report $R/grid-$tg.md > $R/grid-$tg.log 2>&1
      echo "$(el) grid $tg rc=$?"; python3 -c "import json,sys
for l in open(sys.argv[1]): p=json.loads(l); print('%-45s %-8s %9s us %5s%% c/tc %s' % (p['name'][-45:], p['status'], p.get('tc_us'), round(100*(p.get('roofline') or 0)), p.get('speedup_compile')))" $R/grid-$tg.jsonl
    done ;;
  vgrid) fits 120 || continue; echo "$(el) vgrid"
    # Generated kernels' variants (tc-codegen --tune, docs/cuda-backend.md "Measured algorithm
    # choice"): utils/kernel-grid.py over VGRID_FAMILIES (default reduce,softmax,norm) compiled
    # with the default variants, then with --tune (compiles one at a time: the timings must not
    # share the GPU); per point the two times and the tuned artifact's choices.
    F=${VGRID_FAMILIES:-reduce,softmax,norm}; M=${VGRID_MATCH:-}
    timeout $(( (DL - $(date +%s)) / 3 )) python3 utils/kernel-grid.py --bin $B --target cuda --jobs 16 \
      --families $F --dtypes ${GRID_DTYPES:-f16,f32} --torch off ${M:+--match "$M"} \
      --out $R/vgrid-default.jsonl --report $R/vgrid-default.md > $R/vgrid-default.log 2>&1
    echo "$(el) vgrid default rc=$?"
    timeout $(( DL - $(date +%s) - 20 )) python3 utils/kernel-grid.py --bin $B --target cuda --jobs 1 \
      --families $F --dtypes ${GRID_DTYPES:-f16,f32} --torch off ${M:+--match "$M"} \
      --codegen-arg=--tune --work $R/vgrid-work \
      --out $R/vgrid-tuned.jsonl --report $R/vgrid-tuned.md > $R/vgrid-tuned.log 2>&1
    echo "$(el) vgrid tuned rc=$?"; python3 -c "import json,sys
d={p['name']:p for p in map(json.loads,open(sys.argv[1]))}
for p in map(json.loads,open(sys.argv[2])):
  q=d.get(p['name'],{}); a,b=q.get('tc_us'),p.get('tc_us')
  print('%-50s %9s -> %9s us %s' % (p['name'][-50:], a, b, '%.2fx' % (a/b) if a and b else p['status']))" \
      $R/vgrid-default.jsonl $R/vgrid-tuned.jsonl
    for t in $R/vgrid-work/*.tcx; do $B/tc-run $t --random-inputs --print-steps 2>&1 | grep -o "tuned(.*)" | sed "s|^|$(basename $t): |"; done | head -200 ;;
  *) echo "unknown job $job" ;;
esac; done
tar -cJf $OUT/res-${1%%:*}.tar.xz -C $R . 2>/dev/null; echo "$(el) packed"
