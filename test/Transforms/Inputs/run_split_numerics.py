#!/usr/bin/env python3
"""Runs every `// -----` chunk of a .tcir file through the reference executor
before and after `tc-opt --passes=PASSES` on the same random inputs and fails
unless the outputs match: the numerics half of a pass's lit test.

    run_split_numerics.py FILE.tcir TMPDIR [--passes fuse] [--dim N=3]
"""
import argparse, os, subprocess, sys

ap = argparse.ArgumentParser()
ap.add_argument("file")
ap.add_argument("tmp")
ap.add_argument("--passes", default="fuse")
ap.add_argument("--dim", action="append", default=["N=3"])
ap.add_argument("--rtol", default="1e-5")
ap.add_argument("--atol", default="1e-6")
args = ap.parse_args()
os.makedirs(args.tmp, exist_ok=True)
chunks = open(args.file).read().split("// -----")
for i, chunk in enumerate(chunks):
    src = os.path.join(args.tmp, "chunk%d.tcir" % i)
    opt = os.path.join(args.tmp, "chunk%d.opt.tcbc" % i)
    ref = os.path.join(args.tmp, "chunk%d.ref" % i)
    open(src, "w").write(chunk)
    dims = sum((["--dim", d] for d in args.dim), [])
    subprocess.run(["tc-opt", "--passes=" + args.passes, src, "-o", opt], check=True)
    subprocess.run(["tc-run", "--target=ref", src, "--random-inputs", "--seed", "7",
                    "--output-dir", ref] + dims, check=True, stdout=subprocess.DEVNULL)
    p = subprocess.run(["tc-run", "--target=ref", opt, "--inputs", ref, "--compare", ref,
                        "--rtol", args.rtol, "--atol", args.atol] + dims, text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        sys.exit("chunk %d differs after --passes=%s:\n%s" % (i, args.passes, p.stdout))
print("%d chunks match after --passes=%s" % (len(chunks), args.passes))
