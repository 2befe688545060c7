#!/usr/bin/env python3
"""Every `// -----` chunk of a .tcir file through tc-opt --fuse and
tc-codegen --target=cpu, then the artifact against the reference executor
on the same random inputs. Prints one line per chunk with its kernel, library and
host-step counts, and fails on any mismatch.

    run_split_cpu.py FILE.tcir TMPDIR [--dim N=3] [--rtol R --atol A] [--cpu-library none]
"""
import argparse, os, re, subprocess, sys

ap = argparse.ArgumentParser()
ap.add_argument("file")
ap.add_argument("tmp")
ap.add_argument("--dim", action="append", default=[])
ap.add_argument("--rtol", default="1e-4")
ap.add_argument("--atol", default="1e-5")
ap.add_argument("--cpu-library", default="onednn")
ap.add_argument("--print-steps", action="store_true", help="print what ran each step")
args = ap.parse_args()
os.makedirs(args.tmp, exist_ok=True)
dims = sum((["--dim", d] for d in args.dim), [])
chunks = open(args.file).read().split("// -----")
for i, chunk in enumerate(chunks):
    base = os.path.join(args.tmp, "chunk%d" % i)
    open(base + ".tcir", "w").write(chunk)
    subprocess.run(["tc-opt", "--fuse", base + ".tcir", "-o", base + ".tcbc"], check=True)
    cg = subprocess.run(["tc-codegen", "--target=cpu", "--cpu-library", args.cpu_library, "--stats",
                         base + ".tcbc", "-o", base + ".tcx"],
                        check=True, capture_output=True, text=True).stderr
    for n in (1, 5):  # two batch sizes, one artifact
        d = dims + ["--dim", "N=%d" % n]
        subprocess.run(["tc-run", "--target=ref", base + ".tcbc", "--random-inputs", "--seed", str(n),
                        "--output-dir", base + ".ref%d" % n] + d, check=True, stdout=subprocess.DEVNULL)
        p = subprocess.run(["tc-run", base + ".tcx", "--inputs", base + ".ref%d" % n, "--compare",
                            base + ".ref%d" % n, "--rtol", args.rtol, "--atol", args.atol]
                           + (["--print-steps"] if args.print_steps else []),
                           capture_output=True, text=True)
        if p.returncode != 0:
            sys.stdout.write(p.stdout + p.stderr)
            sys.exit("chunk %d (N=%d): mismatch" % (i, n))
    steps = re.search(r"steps: .*", p.stderr).group(0)
    stats = next(l for l in cg.splitlines() if l.startswith("kernels:"))
    print("chunk %d: %s; %s" % (i, stats, steps))
    for line in p.stderr.splitlines():
        if line.startswith("step %"):
            print("  " + line)
print("%d chunks match on cpu" % len(chunks))
