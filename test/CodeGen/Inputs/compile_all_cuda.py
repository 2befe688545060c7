#!/usr/bin/env python3
"""compile_all_cuda.py OUTDIR: every committed model (utils/committed_models.py)
through tc-import | tc-opt -O2 --target=cuda [--precision fp16] |
tc-codegen --target=cuda, one line per model and precision, FAILED with
tc's error when one does not compile."""
import os, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "utils"))
from committed_models import committed_models, name_of

out = sys.argv[1]
ok = total = 0
for model in committed_models():
    for precision in ("fp32", "fp16"):
        total += 1
        tcx = os.path.join(out, name_of(model).replace("/", "_") + "." + precision + ".tcx")
        cmd = (f"tc-import {model} | tc-opt -O2 --target=cuda --precision {precision} | "
               f"tc-codegen --target=cuda --stats -o {tcx}")
        r = subprocess.run(cmd, shell=True, capture_output=True, text=True)
        lines = r.stderr.splitlines()
        if r.returncode != 0 or not any(l.strip().startswith("cubin sm_90:") for l in lines):
            print(f"{name_of(model)} {precision}: FAILED\n{r.stderr}")
            continue
        ok += 1
        kernels = next(l for l in lines if l.startswith("kernels:"))
        seconds = next(l.split(": ")[1] for l in lines if "compile kernels (NVRTC" in l)
        print(f"{name_of(model)} {precision}: {kernels}; NVRTC {seconds}")
print(f"compiled {ok} of {total} models to cubin")
