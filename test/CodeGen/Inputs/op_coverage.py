#!/usr/bin/env python3
"""op_coverage.py WORKDIR [--target cpu|cuda]...: the op-coverage models
(models/make_coverage_models.py) through tc-import | tc-opt -O2 | tc-codegen
for each target, and every output checked:

- host steps: each `runs on the host` warning is mapped to its op form (the
  node name up to '/'); the set of "target form" pairs must equal
  Inputs/op-coverage-host.txt, so a form that newly falls back fails, and a
  kernel that lands must delete its line;
- cpu: the artifact's outputs against the reference executor (rtol 1e-4);
- cuda: the generated kernels compiled for the host (run_cuda_on_host.py)
  against the reference executor.
Prints one line per family and target, then "coverage: ok" or the diff."""
import os
import re
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", "..", ".."))
work = sys.argv[1]
targets = [a for i, a in enumerate(sys.argv) if i > 1 and sys.argv[i - 1] == "--target"] or ["cpu", "cuda"]
# --no-cuda-numerics: compile the CUDA kernels without running them on the host.
cuda_numerics = "--no-cuda-numerics" not in sys.argv
os.makedirs(work, exist_ok=True)


def sh(cmd):
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


rc, out = sh(f"{sys.executable} {root}/models/make_coverage_models.py {work}")
if rc:
    sys.exit(out)
families = sorted(f[:-5] for f in os.listdir(work) if f.endswith(".onnx"))
host, bad = set(), []
for fam in families:
    onnx_path = os.path.join(work, fam + ".onnx")
    for t in targets:
        base = os.path.join(work, f"{fam}.{t}")
        opt = f"tc-import {onnx_path} | tc-opt -O2 --target={t}"
        rc, out = sh(f"{opt} -o {base}.tcbc && tc-codegen --target={t} {base}.tcbc -o {base}.tcx")
        if rc:
            bad.append(f"{fam} {t}: compile failed: {out.strip()}")
            continue
        nodes = [n for line in out.splitlines() if "runs on the host" in line
                 for n in re.findall(r"([\w/]+) \(\w+(?:, \w+)*\)", line.split("): nodes ", 1)[1])]
        forms = {re.sub(r"/.*", "", n) for n in nodes}
        host |= {f"{t} {f}" for f in forms}
        if t == "cpu":
            ref = base + ".ref"
            rc, out = sh(f"tc-run --target=ref {base}.tcbc --random-inputs --dim N=3 --output-dir {ref} && "
                         f"tc-run {base}.tcx --inputs {ref} --compare {ref}")
            verdict = "outputs match the reference" if rc == 0 else "MISMATCH"
            if rc:
                bad.append(f"{fam} cpu: {out.strip()[-400:]}")
        elif not cuda_numerics:
            verdict = "compiled"
        else:
            rc, out = sh(f"tc-opt {base}.tcbc -S -o {base}.tcir && "
                         f"{sys.executable} {here}/run_cuda_on_host.py {base}.tcir {base}.host 3")
            m = re.search(r"^\d+ kernels ran, \d+ outputs match$", out, re.M)
            verdict = m.group(0) if m else "FAILED"
            if rc or not m or "MISMATCH" in out:
                bad.append(f"{fam} cuda (on the host): {out.strip()[-600:]}")
        print(f"{fam} {t}: {len(forms)} forms on the host; {verdict}")

listed = {l.strip() for l in open(os.path.join(here, "op-coverage-host.txt")) if l.strip() and not l.startswith("#")}
listed = {l for l in listed if l.split()[0] in targets}
for l in sorted(host - listed):
    bad.append(f"falls back to the host (not in op-coverage-host.txt): {l}")
for l in sorted(listed - host):
    bad.append(f"has a kernel now: delete from op-coverage-host.txt: {l}")
print("\n".join(bad) if bad else "coverage: ok")
sys.exit(1 if bad else 0)
