#!/usr/bin/env python3
"""host_check_models.py OUTDIR: every CUDA kernel of every committed model
(utils/committed_models.py), at fp32 and fp16 and batch 2, run on the host
(run_cuda_on_host.py) against the reference executor; one line per model."""
import json, os, re, subprocess, sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "..", "utils"))
from committed_models import committed_models, name_of

out = sys.argv[1]
checked = failed = 0
for model in committed_models():
    for precision in ("fp32", "fp16"):
        work = os.path.join(out, name_of(model).replace("/", "_") + "." + precision)
        os.makedirs(work, exist_ok=True)
        # Every symbolic dim of the inputs at 2, so every group's shapes are known.
        summary = json.loads(subprocess.run(f"tc-import {model} | tc-prof --summary --format=json",
                                            shell=True, check=True, capture_output=True).stdout)
        dims = {d for i in summary["inputs"] for d in re.findall(r"[A-Za-z_]\w*", i["type"][4:])}
        fused = os.path.join(work, "fused.tcir")
        subprocess.run(f"tc-import {model} | tc-opt -O2 --target=cuda --precision {precision} "
                       + "".join(f" --dim {d}=2" for d in sorted(dims))
                       + f" | tc-opt --passes='fuse{{singles=1,moves=1}}' -S -o {fused}",
                       shell=True, check=True)
        groups = os.path.join(work, "groups.tcir")
        with open(groups, "w") as f:
            subprocess.run([sys.executable, os.path.join(here, "kernel_groups.py"), fused],
                           stdout=f, check=True)
        r = subprocess.run([sys.executable, os.path.join(here, "run_cuda_on_host.py"), groups,
                            os.path.join(work, "host")], capture_output=True, text=True)
        lines = r.stdout.splitlines()
        bad = [l for l in lines if "MISMATCH" in l]
        summary = lines[-1] if r.returncode == 0 and lines else "FAILED\n" + r.stderr[-2000:]
        print(f"{name_of(model)} {precision}: {summary}" + "".join("\n  " + l for l in bad))
        checked += 1
        failed += bool(bad) or r.returncode != 0
print(f"{checked} compiled models checked, {failed} with a failure")
