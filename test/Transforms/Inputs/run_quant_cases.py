#!/usr/bin/env python3
"""run_quant_cases.py CASES TMP [--target cpu|cuda --fake DIR] [--filter RE] [--atol A]:
every CASES/<case>/model.onnx (quant_cases.py) through tc-import, the
reference executor and `tc-opt -O2 | tc-codegen --no-host-fallback` for the
target, each run compared with the case's expected outputs
(test_data_set_0; a case without one: the reference executor's on random
inputs, symbolic dims at 3), exactly unless --atol says otherwise. CUDA runs on the stand-in driver and libraries in DIR
(fake_libcuda.c, fake_cublaslt.c, fake_cudnn.c), with the artifact's
kernels built for the host (host_kernels.py, FAKE_CUDA_KERNELS). Prints one line per case with
the run's step counts; exits 1 on the first mismatch."""
import argparse, os, re, subprocess, sys

ap = argparse.ArgumentParser()
ap.add_argument("cases")
ap.add_argument("tmp")
ap.add_argument("--target", default="cpu")
ap.add_argument("--fake", default="")
ap.add_argument("--atol", default="0")
ap.add_argument("--filter", default="")
args = ap.parse_args()
here = os.path.dirname(os.path.abspath(__file__))
host_kernels = os.path.join(here, "..", "..", "Runtime", "Inputs", "host_kernels.py")
os.makedirs(args.tmp, exist_ok=True)


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        sys.stdout.write(p.stdout + p.stderr)
        sys.exit("%s: failed (%s)" % (case, " ".join(cmd)))
    return p.stdout + p.stderr


for case in sorted(os.listdir(args.cases)):
    d = os.path.join(args.cases, case)
    if not re.search(args.filter, case) or not os.path.exists(os.path.join(d, "model.onnx")):
        continue
    data = os.path.join(d, "test_data_set_0")
    base = os.path.join(args.tmp, case)
    cmp = ["--inputs", data, "--compare", data, "--rtol", "0", "--atol", args.atol]
    run(["tc-import", os.path.join(d, "model.onnx"), "-o", base + ".tcbc"])
    if not os.path.isdir(data):
        data = base + ".ref"
        cmp = ["--inputs", data, "--compare", data, "--rtol", "0", "--atol", args.atol]
        run(["tc-run", "--target=ref", base + ".tcbc", "--random-inputs", "--dim", "N=3",
             "--output-dir", data])
    run(["tc-run", "--target=ref", base + ".tcbc"] + cmp)
    run(["tc-opt", "-O2", "--target=" + args.target, base + ".tcbc", "-o", base + ".opt.tcbc"])
    run(["tc-codegen", "--target=" + args.target, "--no-host-fallback", base + ".opt.tcbc", "-o",
         base + ".tcx"])
    env = None
    if args.target == "cuda":
        run([sys.executable, host_kernels, base + ".tcx", base + ".so"])
        env = dict(os.environ, FAKE_CUDA_KERNELS=base + ".so", LD_LIBRARY_PATH=args.fake)
    out = run(["tc-run", base + ".tcx", "--print-steps"] + cmp, env=env)
    steps = re.search(r"steps: [^;\n]*", out).group(0)
    print("%s: %s" % (case, steps))
    for line in out.splitlines():  # the library calls
        if line.startswith("step %") and ("cudnn" in line or "cublaslt" in line or "onednn" in line):
            print("  " + line)
