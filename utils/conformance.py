#!/usr/bin/env python3
"""ONNX conformance driver: runs the ONNX backend test cases shipped by Debian's
libonnx-testdata (data/node, data/pytorch-converted, data/pytorch-operator,
data/simple) through `tc-import` and the reference executor (`tc-run
--target=ref --compare`), classifies every case and checks the result against
the expected-failure list, so CI catches any regression. Every case that
passes there also goes through the CPU backend (`tc-opt -O2 | tc-codegen
--target=cpu`, then the artifact against the same expected outputs), checked
against its own expected-failure list. A CPU artifact that matches but ran a
step on the reference kernels (tc-run: `steps: ... N on the reference kernels`,
the CPU's host step) is `host`, checked against its own list of expected host
cases. `--backends cpu,cuda` (on the GPU machine) adds the CUDA backend the same
way (`tc-opt -O2 --target=cuda | tc-codegen --target=cuda`; tc-run's `N on the
host (reference kernels)` makes a case `host`), with its own two lists.
`cuda-codegen` (any machine, CI too) compiles for CUDA up to the kernel source
(`--emit source`: no NVRTC, no GPU) and makes a case `host` when codegen leaves
a group on the host (a model that stores no shape plan runs op by op, its
kernels and library calls on the device: CudaStepByStep.cpp); it runs nothing.
Both CUDA backends compile with `tc-codegen --allow-tf32=none`: the default
lets cuDNN's fp32 convs round through TF32 (as PyTorch), which misses the
tests' fp32 tolerances (the Conv3d cases: max rel err up to 6e-2 on the H200).

    utils/conformance.py --bin build/bin [--backends cpu[,cuda]] [--report docs/conformance.md]

Exit status 1 when a case outside test/conformance/expected-failures.txt fails,
or a case outside a backend's expected-failures-BACKEND.txt fails there, or one
outside its expected-host-BACKEND.txt needs a host step; a listed case that now
passes is reported (remove it from the list) and, with --strict, also fails the
run. The lists may only shrink.
"""
import argparse
import concurrent.futures as cf
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = "/usr/share/libonnx-testdata/data"
SUITES = ["node", "pytorch-converted", "pytorch-operator", "simple"]
XFAIL = os.path.join(ROOT, "test", "conformance", "expected-failures.txt")
# cuda-codegen: the CUDA backend's compile only (kernel source, no NVRTC, no
# GPU): which groups codegen leaves on the host, checked on any machine (CI).
BACKENDS = ("cpu", "cuda", "cuda-codegen")


def xfail_path(backend):
    return os.path.join(ROOT, "test", "conformance", "expected-failures-%s.txt" % backend)


def xhost_path(backend):
    return os.path.join(ROOT, "test", "conformance", "expected-host-%s.txt" % backend)


# The ONNX backend test suite's default tolerances.
RTOL, ATOL = "1e-3", "1e-7"


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=timeout, errors="replace")
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return 124, "timed out after %ss" % timeout


def first_error(text):
    for line in text.splitlines():
        if ": error: " in line:
            return line.split(": error: ", 1)[1].strip()
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[-1].strip() if lines else "(no output)"


def classify(case, bindir, tmp, timeout):
    """Returns (status, detail): pass | unsupported | import | run | mismatch."""
    model = os.path.join(case, "model.onnx")
    name = os.path.relpath(case, DATA)
    ir = os.path.join(tmp, name.replace("/", "__") + ".tcbc")
    rc, out = run([os.path.join(bindir, "tc-import"), model, "-o", ir], timeout)
    if rc != 0:
        err = first_error(out)
        return ("unsupported" if "unsupported ops:" in err else "import"), err
    sets = sorted(d for d in os.listdir(case) if d.startswith("test_data_set_"))
    if not sets:
        return "run", "no test_data_set folders"
    for s in sets:
        d = os.path.join(case, s)
        rc, out = run([os.path.join(bindir, "tc-run"), "--target=ref", ir, "--inputs", d,
                       "--compare", d, "--rtol", RTOL, "--atol", ATOL,
                       # Older test data stores bf16 tensors as uint16.
                       "--bf16-as-u16"], timeout)
        if rc != 0:
            status = "mismatch" if "MISMATCH" in out else "run"
            return status, "%s: %s" % (s, first_error(out) if status == "run" else
                                       next((l for l in out.splitlines() if "MISMATCH" in l), ""))
    return "pass", ""


def host_reasons(codegen_output):
    """Why codegen left groups on the host: each warning's reason, with value
    and group names dropped so that equal reasons read the same."""
    reasons = []
    for line in codegen_output.splitlines():
        m = re.search(r"runs on the host \((.*)\): nodes ", line)
        if m:
            r = re.sub(r"@[\w.]+: ", "", m.group(1))
            r = re.sub(r"%[\w.]+", "%v", r)
            if r not in reasons:
                reasons.append(r)
    return reasons


def classify_backend(case, bindir, tmp, timeout, backend):
    """A compiling backend on a case the reference passes: (status, detail);
    `host` when it matched but ran steps on the reference kernels."""
    name = os.path.relpath(case, DATA)
    base = os.path.join(tmp, name.replace("/", "__"))
    arch = "cuda" if backend.startswith("cuda") else backend
    target = ["--target=cuda"] if arch == "cuda" else []
    rc, out = run([os.path.join(bindir, "tc-opt"), "-O2"] + target + [base + ".tcbc", "-o",
                                                                     base + "." + backend + ".tcbc"], timeout)
    if rc != 0:
        return "opt", first_error(out)
    emit = ["--emit", "source", "--stats"] if backend == "cuda-codegen" else []
    # fp32 tolerances: no TF32 in the library calls (the docstring).
    tf32 = ["--allow-tf32=none"] if arch == "cuda" else []
    rc, out = run([os.path.join(bindir, "tc-codegen"), "--target=" + arch, base + "." + backend + ".tcbc"] + tf32 + emit +
                  ["-o", base + "." + backend + ".tcx"], timeout)
    if rc != 0:
        return "codegen", first_error(out)
    reasons = host_reasons(out)
    if backend == "cuda-codegen":
        return ("host", "codegen: " + "; ".join(reasons)) if reasons else ("pass", "")
    on_ref = 0
    for s in sorted(d for d in os.listdir(case) if d.startswith("test_data_set_")):
        d = os.path.join(case, s)
        threads = ["--threads", "1"] if backend == "cpu" else []
        rc, out = run([os.path.join(bindir, "tc-run"), base + "." + backend + ".tcx"] + threads +
                      ["--inputs", d, "--compare", d, "--rtol", RTOL, "--atol", ATOL, "--bf16-as-u16"], timeout)
        if rc != 0:
            status = "mismatch" if "MISMATCH" in out else "run"
            return status, "%s: %s" % (s, first_error(out) if status == "run" else
                                       next((l for l in out.splitlines() if "MISMATCH" in l), ""))
        # CPU: `N on the reference kernels`; CUDA: `N on the host (reference kernels)`.
        m = re.search(r"steps: .*?(\d+) on the (?:host \()?reference kernels", out)
        on_ref = max(on_ref, int(m.group(1)) if m else 0)
    if on_ref:
        return "host", "%d on the reference kernels: %s" % (
            on_ref, "; ".join(reasons) or "(no codegen warning)")
    return "pass", ""


def classify_all(case, bindir, tmp, timeout, backends):
    status, detail = classify(case, bindir, tmp, timeout)
    per_backend = {}
    if status == "pass":
        for b in backends:
            per_backend[b] = classify_backend(case, bindir, tmp, timeout, b)
    base = os.path.join(tmp, os.path.relpath(case, DATA).replace("/", "__"))
    for ext in [".tcbc"] + ["." + b + e for b in backends for e in (".tcbc", ".tcx")]:
        if os.path.exists(base + ext):
            os.remove(base + ext)
    return (status, detail), per_backend


def write_xfail(path, title, results):
    with open(path, "w") as f:
        f.write("# %s\n# Generated by utils/conformance.py --update-xfail; shrink it, never grow it "
                "silently.\n" % title)
        for name, (status, detail) in sorted(results.items()):
            if status != "pass":
                f.write("%s  # %s: %s\n" % (name, status, detail[:150].replace("\n", " ")))


def load_xfail(path=XFAIL):
    xfail = {}
    if os.path.exists(path):
        for line in open(path):
            line = line.split("#", 1)[0].strip()
            if line:
                xfail[line] = True
    return xfail


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--report", help="write a markdown report here")
    ap.add_argument("--update-xfail", action="store_true", help="rewrite the expected-failure list")
    ap.add_argument("--strict", action="store_true", help="fail when an expected failure passes")
    ap.add_argument("--filter", default="", help="regex on case names")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--no-cpu", action="store_true", help="no compiling backend (same as --backends '')")
    ap.add_argument("--backends", default="cpu",
                    help="comma-separated compiling backends to check: cpu, cuda (the GPU machine), cuda-codegen (compile only, any machine)")
    args = ap.parse_args()
    backends = [] if args.no_cpu else [b for b in args.backends.split(",") if b]
    for b in backends:
        if b not in BACKENDS:
            print("conformance: unknown backend '%s' (known: %s)" % (b, ", ".join(BACKENDS)), file=sys.stderr)
            return 1
    if not os.path.isdir(DATA):
        print("conformance: %s not found (apt-get install libonnx-testdata)" % DATA, file=sys.stderr)
        return 1
    cases = []
    for suite in SUITES:
        base = os.path.join(DATA, suite)
        for c in sorted(os.listdir(base)) if os.path.isdir(base) else []:
            path = os.path.join(base, c)
            if os.path.exists(os.path.join(path, "model.onnx")) and re.search(args.filter, suite + "/" + c):
                cases.append(path)
    tmp = os.path.join(os.path.dirname(os.path.abspath(args.bin)), "conformance-tmp")
    os.makedirs(tmp, exist_ok=True)
    t0 = time.time()
    results = {}
    backend_results = {b: {} for b in backends}
    with cf.ThreadPoolExecutor(args.jobs) as ex:
        futs = {ex.submit(classify_all, c, args.bin, tmp, args.timeout, backends): c for c in cases}
        for f in cf.as_completed(futs):
            name = os.path.relpath(futs[f], DATA)
            results[name], per_backend = f.result()
            for b, r in per_backend.items():
                backend_results[b][name] = r
    xfail = load_xfail()
    counts = {}
    by_suite = {}
    regressions, fixed = [], []
    for name, (status, detail) in sorted(results.items()):
        counts[status] = counts.get(status, 0) + 1
        suite = name.split("/")[0]
        by_suite.setdefault(suite, {}).setdefault(status, 0)
        by_suite[suite][status] += 1
        if status != "pass" and name not in xfail:
            regressions.append((name, status, detail))
        if status == "pass" and name in xfail:
            fixed.append(name)
    total = len(results)
    passed = counts.get("pass", 0)
    print("conformance: %d cases in %.0fs: %d pass (%.1f%%), %s" % (
        total, time.time() - t0, passed, 100.0 * passed / max(total, 1),
        ", ".join("%d %s" % (n, s) for s, n in sorted(counts.items()) if s != "pass")))
    for suite, c in sorted(by_suite.items()):
        n = sum(c.values())
        print("  %-18s %4d/%-4d pass" % (suite, c.get("pass", 0), n))
    if args.update_xfail:
        write_xfail(XFAIL, "Conformance cases that are expected to fail, with the reason.", results)
        regressions = []
    failed = bool(regressions) or (args.strict and bool(fixed))
    for name in fixed:
        print("conformance: %s now passes: remove it from %s" % (name, os.path.relpath(XFAIL, ROOT)))
    for name, status, detail in regressions:
        print("conformance: FAIL %s (%s): %s" % (name, status, detail))
    for b in backends:
        failed |= check_backend(b, backend_results[b], args.update_xfail, args.strict)
    if args.report:
        write_report(args.report, results, by_suite, total, passed, backend_results)
    return 1 if failed else 0


OK = ("pass", "host")  # the outputs match


def check_backend(b, res, update, strict):
    """Prints one backend's summary and its differences from its two lists;
    True when the run fails because of them."""
    xf, xh = xfail_path(b), xhost_path(b)
    n_ok = sum(1 for r in res.values() if r[0] in OK)
    n_host = sum(1 for r in res.values() if r[0] == "host")
    print("  %s backend: %d/%d of the cases the reference passes also pass; %d of them ran "
          "steps on the reference kernels" % (b, n_ok, len(res), n_host))
    if update:
        write_xfail(xf, "Cases the reference executor passes but the %s backend does not." % b,
                    {n: r for n, r in res.items() if r[0] != "host"})
        write_xfail(xh, "Cases the %s backend passes with steps on the reference kernels (host steps)." % b,
                    {n: r for n, r in res.items() if r[0] == "host"})
        return False
    xfail, xhost = load_xfail(xf), load_xfail(xh)
    bad = [(n, st, d) for n, (st, d) in sorted(res.items()) if st not in OK and n not in xfail]
    fixed = [n for n, (st, d) in sorted(res.items()) if st in OK and n in xfail]
    host_bad = [(n, d) for n, (st, d) in sorted(res.items()) if st == "host" and n not in xhost]
    host_fixed = [n for n, (st, d) in sorted(res.items()) if st == "pass" and n in xhost]
    for name in fixed:
        print("conformance: %s %s now passes: remove it from %s" % (b, name, os.path.relpath(xf, ROOT)))
    for name, status, detail in bad:
        print("conformance: FAIL %s %s (%s): %s" % (b, name, status, detail))
    for name in host_fixed:
        print("conformance: %s %s now runs no step on the reference kernels: remove it from %s" % (
            b, name, os.path.relpath(xh, ROOT)))
    for name, detail in host_bad:
        print("conformance: FAIL %s %s (host): %s" % (b, name, detail))
    return bool(bad or host_bad) or (strict and bool(fixed or host_fixed))


BACKEND_TITLES = {"cpu": "CPU backend** (`tc-opt -O2 | tc-codegen --target=cpu`",
                  "cuda": "CUDA backend** (`tc-opt -O2 --target=cuda | tc-codegen --target=cuda "
                          "--allow-tf32=none`, on the GPU machine",
                  "cuda-codegen": "CUDA backend's codegen** (`tc-opt -O2 --target=cuda | tc-codegen --target=cuda "
                                  "--allow-tf32=none --emit source`: which groups it leaves on the host, without a GPU"}


def write_report(path, results, by_suite, total, passed, backend_results):
    with open(path, "w") as f:
        f.write("# ONNX conformance\n\n")
        f.write("Generated by `utils/conformance.py --report %s` (import + reference executor,\n"
                "rtol %s, atol %s, every test_data_set of every case).\n\n" % (path, RTOL, ATOL))
        f.write("**%d / %d cases pass (%.1f%%).**\n\n" % (passed, total, 100.0 * passed / max(total, 1)))
        f.write("| suite | pass | unsupported | import | run | mismatch | total |\n|---|---|---|---|---|---|---|\n")
        for suite, c in sorted(by_suite.items()):
            f.write("| %s | %d | %d | %d | %d | %d | %d |\n" % (
                suite, c.get("pass", 0), c.get("unsupported", 0), c.get("import", 0),
                c.get("run", 0), c.get("mismatch", 0), sum(c.values())))
        for b, res in backend_results.items():
            write_backend_report(f, b, res)
        f.write("\n## What does not pass, and why\n\n| case | status | first error |\n|---|---|---|\n")
        for name, (status, detail) in sorted(results.items()):
            if status != "pass":
                f.write("| %s | %s | %s |\n" % (name, status, detail[:200].replace("|", "\\|")))


def write_backend_report(f, b, res):
    n_ok = sum(1 for r in res.values() if r[0] in OK)
    host = [(n, r[1]) for n, r in sorted(res.items()) if r[0] == "host"]
    if b == "cuda-codegen":  # compiled, not run
        f.write("\n**%s): of the %d cases the reference executor passes, **%d compile to generated "
                "kernels and library calls only, %d have groups codegen leaves on the host** (expected "
                "list test/conformance/expected-host-%s.txt, which may only shrink).\n" % (
                    BACKEND_TITLES[b], len(res), n_ok - len(host), len(host), b))
    else:
        f.write("\n**%s, same outputs and tolerances): %d / %d of the cases the reference executor passes; "
                "**%d of them ran entirely as generated kernels and library calls, %d ran steps on the "
                "reference kernels** (host steps: `tc-run`'s steps line; expected list "
                "test/conformance/expected-host-%s.txt, which may only shrink).\n" % (
                    BACKEND_TITLES[b], n_ok, len(res), n_ok - len(host), len(host), b))
    bad = [(n, r) for n, r in sorted(res.items()) if r[0] not in OK]
    if bad:
        f.write("\n| case | %s status | first error |\n|---|---|---|\n" % b)
        for name, (status, detail) in bad:
            f.write("| %s | %s | %s |\n" % (name, status, detail[:200].replace("|", "\\|")))
    if host:
        by_reason = {}
        for name, detail in host:
            for r in detail.split(": ", 1)[1].split("; "):
                by_reason.setdefault(r, []).append(name)
        f.write("\n### %s host steps, by codegen's reason\n\n| cases | reason |\n|---|---|\n" % b.upper())
        for r, names in sorted(by_reason.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            f.write("| %d | %s |\n" % (len(names), r[:200].replace("|", "\\|")))
        f.write("\n<details><summary>The %d cases (%s)</summary>\n\n| case | steps on the reference "
                "kernels, why |\n|---|---|\n" % (len(host), b))
        for name, detail in host:
            f.write("| %s | %s |\n" % (name, detail[:200].replace("|", "\\|")))
        f.write("\n</details>\n")


if __name__ == "__main__":
    sys.exit(main())
