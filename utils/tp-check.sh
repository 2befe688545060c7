#!/bin/bash
# tc-opt --tensor-parallel N over exported models, each run on N simulated
# ranks (tc-run --ranks N) against its unsplit -O2 run on the same inputs
# (docs/multi-gpu.md). One line a model: the AllReduces and Attention ops of
# the split program and the outputs that differ (bad=0: all match).
#   N=2 BIN=build/bin utils/tp-check.sh DIR MODEL...
# DIR holds MODEL.dynamo.onnx and MODEL.dynamo.in/ (utils/zoo-coverage.py's
# small exports: models/export_torch_models.py --small --exporters dynamo).
set -uo pipefail
B=${BIN:-build/bin} N=${N:-2} dir=$1
shift
for m in "$@"; do
  w=$(mktemp -d) d=$dir/$m.dynamo.in
  if ! { $B/tc-import "$dir/$m.dynamo.onnx" -o $w/m.tcbc && $B/tc-opt $w/m.tcbc -O2 -o $w/one.tcbc &&
         $B/tc-run $w/one.tcbc --inputs "$d" --output-dir $w/one > /dev/null &&
         $B/tc-opt $w/m.tcbc --tensor-parallel "$N" -O2 -o $w/tp.tcbc; } 2> $w/err; then
    echo "$m failed: $(tail -1 $w/err | cut -c1-160)"
  else
    ir=$($B/tc-opt $w/tp.tcbc -O0 -S)
    bad=$($B/tc-run $w/tp.tcbc --ranks "$N" --inputs "$d" --compare $w/one 2>&1 | grep -c "MISMATCH\|error")
    echo "$m allreduce=$(grep -c '= AllReduce(' <<< "$ir") attention=$(grep -c '= Attention(' <<< "$ir") bad=$bad"
  fi
  rm -rf "$w"
done
