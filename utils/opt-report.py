#!/usr/bin/env python3
"""The optimizer's three figures per committed model (issue: tc-opt):
kernels-to-be before/after -O2, the memory plan's predicted peak vs the naive
(no-reuse) peak, and numerics after -O2 and after -O2 --precision=fp16
(tc-opt --verify-numerics checks the reference executor after every pass;
the optimized IR is also compared with the model's own reference outputs).

    utils/opt-report.py [--bin build/bin] [--markdown docs/optimizer.md] [--dim batch=2]

Exit status 1 when fusion does not reduce a model's kernel count, the
plan's peak is not below the naive peak, or numerics do not hold.
"""
import argparse, os, re, subprocess, sys, tempfile

from committed_models import ROOT, committed_models, name_of
FP32_TOL = ("1e-4", "1e-5")
FP16_TOL = ("3e-2", "3e-2")


def run(cmd):
    p = subprocess.run(cmd, text=True, capture_output=True)
    return p.returncode, p.stdout + p.stderr


def grab(pattern, text, cast=str):
    m = re.search(pattern, text)
    return cast(m.group(1)) if m else None


def report(model, tool, tmp, dims):
    r = {"model": name_of(model), "problems": []}
    data = os.path.join(os.path.dirname(model), "test_data_set_0")
    data = data if model.endswith("model.onnx") and os.path.isdir(data) else None
    base = os.path.join(tmp, r["model"].replace("/", "_"))
    rc, out = run([tool("tc-import"), model, "-o", base + ".tcbc"])
    if rc:
        r["problems"].append("import: " + out.strip())
        return r
    # The memory plan needs sizes: symbolic dims are specialized to --dim
    # (default 2, the committed test data's batch) with tc-opt --dim.
    rc, ir = run([tool("tc-opt"), "--passes=verify", "-S", base + ".tcbc"])
    sig = re.search(r"func @main\((.*)\) ->", ir)
    symbols = sorted(set(re.findall(r"[\[,]([A-Za-z_][A-Za-z_0-9]*)(?=[,\]])", sig.group(1)))) if sig else []
    given = dict(d.split("=", 1) for d in dims)
    dimflags = sum((["--dim", "%s=%s" % (s, given.get(s, "2"))] for s in symbols), [])
    r["dims"] = ",".join("%s=%s" % (s, given.get(s, "2")) for s in symbols)
    inputs = ["--inputs", data] if data else []
    for prec, tol in (("fp32", FP32_TOL), ("fp16", FP16_TOL)):
        cmd = [tool("tc-opt"), "-O2", "--precision=" + prec, "--stats", "--print-memory-plan",
               "--verify-numerics", "--rtol", tol[0], "--atol", tol[1], base + ".tcbc",
               "-o", base + "." + prec + ".tcbc"] + inputs + dimflags
        rc, out = run(cmd)
        r[prec] = "ok" if rc == 0 else "FAIL"
        if rc:
            r["problems"].append(prec + ": " + out.strip().splitlines()[-1])
            continue
        if prec == "fp32":
            r["kernels"] = (grab(r"kernels: (\d+) ->", out, int), grab(r"kernels: \d+ -> (\d+)", out, int))
            r["arena"] = grab(r"predicted peak \(arena\): ([^(]+)\(", out, str).strip()
            r["naive"] = grab(r"naive peak \(no reuse\):\s+([^(]+)\(", out, str).strip()
            r["arena_b"] = grab(r"predicted peak \(arena\): [^(]+\((\d+) bytes", out, int)
            r["naive_b"] = grab(r"naive peak \(no reuse\):\s+[^(]+\((\d+) bytes", out, int)
        if data:  # the optimized IR against the exporter's own outputs
            rc, out = run([tool("tc-run"), "--target=ref", base + "." + prec + ".tcbc", "--inputs", data,
                           "--compare", data, "--rtol", tol[0], "--atol", tol[1]])
            if rc:
                r[prec] = "FAIL"
                r["problems"].append(prec + " vs reference outputs: " + out.strip().splitlines()[-1])
            else:
                r[prec + "_err"] = grab(r"max abs err (\S+),", out)
    k = r.get("kernels")
    if k and k[0] > 1 and not k[1] < k[0]:
        r["problems"].append("fusion did not reduce kernels (%d -> %d)" % k)
    if r.get("arena_b") is not None and not r["arena_b"] < r["naive_b"]:
        r["problems"].append("planned peak %d is not below naive %d" % (r["arena_b"], r["naive_b"]))
    return r


def table(rows):
    lines = ["| model | kernels before -> after -O2 | planned peak | naive peak | compression | "
             "numerics -O2 (max abs err) | numerics -O2 fp16 (max abs err) |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        k = r.get("kernels") or (None, None)
        comp = "%.2fx" % (r["naive_b"] / r["arena_b"]) if r.get("arena_b") else "-"
        note = " (%s)" % r["dims"] if r.get("dims") else ""
        lines.append("| %s | %s -> %s | %s%s | %s | %s | %s %s | %s %s |" % (
            r["model"], k[0], k[1], r.get("arena", "-"), note, r.get("naive", "-"), comp,
            r.get("fp32", "-"), r.get("fp32_err") or "", r.get("fp16", "-"), r.get("fp16_err") or ""))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--markdown", help="write the table into this file's generated section")
    ap.add_argument("--dim", action="append", default=[])
    args = ap.parse_args()
    tool = lambda t: os.path.join(args.bin, t)
    with tempfile.TemporaryDirectory() as tmp:
        rows = [report(m, tool, tmp, args.dim) for m in committed_models()]
    text = table(rows)
    print(text)
    bad = [(r["model"], p) for r in rows for p in r["problems"]]
    for m, p in bad:
        print("opt-report: %s: %s" % (m, p), file=sys.stderr)
    if args.markdown:
        doc = open(args.markdown).read()
        start, end = "<!-- opt-report begin -->", "<!-- opt-report end -->"
        i, j = doc.index(start) + len(start), doc.index(end)
        open(args.markdown, "w").write(doc[:i] + "\n" + text + "\n" + doc[j:])
    print("opt-report: %d models, %d problems" % (len(rows), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
