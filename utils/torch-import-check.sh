#!/usr/bin/env bash
# On a machine with PyTorch (the GPU machine): export real models with both
# exporters, import each with tc, run the reference executor and compare it
# with onnxruntime on the same random inputs. One line per model; the run
# goes on past failures.
#   utils/torch-import-check.sh OUTDIR [models]      (tools on PATH)
set -uo pipefail
out=${1:?usage: torch-import-check.sh OUTDIR [models]}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/models"
python3 "$here/../models/export_torch_models.py" "$out/models" ${2:-} 2>"$out/export.log"
printf "%-32s %-10s %s\n" model status detail
for m in "$out"/models/*.onnx; do
  base=${m%.onnx}; name=$(basename "$base"); tres=""
  if ! err=$(tc-import "$m" -o "$base.tcbc" 2>&1); then
    printf "%-32s %-10s %s\n" "$name" import "${err#*error: }"
    tc-import --list-unsupported "$m" | tail -n +2 | sed 's/^/    /'
    continue
  fi
  python3 "$here/ort_reference.py" "$m" "$base.in" "$base.ort" >/dev/null 2>&1 || {
    printf "%-32s %-10s %s\n" "$name" ort-failed "onnxruntime could not run it"; continue; }
  if [ -f "$base.in/torch_output_0.pb" ]; then
    mkdir -p "$base.torch" && cp "$base.in/torch_output_0.pb" "$base.torch/output_0.pb"
    tres=$(tc-run --target=ref "$base.tcbc" --inputs "$base.in" --compare "$base.torch" --rtol 1e-3 \
           --atol 1e-4 2>&1) && tres="vs torch ok" || tres="vs torch: $(echo "$tres" | grep -m1 -E 'MISMATCH|error')"
  fi
  if res=$(timeout ${TC_RUN_TIMEOUT:-600} tc-run --target=ref "$base.tcbc" --inputs "$base.in" --compare "$base.ort" \
           --rtol 1e-3 --atol 1e-4 2>&1); then
    printf "%-32s %-10s %s; %s\n" "$name" pass "$(echo "$res" | grep -m1 'max abs')" "${tres:-}"
  else
    printf "%-32s %-10s %s\n" "$name" FAIL "$(echo "$res" | grep -m1 -E 'MISMATCH|error')"
  fi
done
