#!/bin/sh
# Stand-in for tc-run --train on the GPU machine: the real tc-run
# ($TC_REAL_TC_RUN), its summary line saying the device peak, as CUDA's does.
"$TC_REAL_TC_RUN" "$@" 2> "$TC_RUN_ERR"
rc=$?
sed 's/ (\([0-9.e+]* samples\/s\), compiled/ (\1, compiled, peak device memory 4 MiB/' "$TC_RUN_ERR" >&2
exit $rc
