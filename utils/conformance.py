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
cases.

    utils/conformance.py --bin build/bin [--report docs/conformance.md]

Exit status 1 when a case outside test/conformance/expected-failures.txt fails,
or a case outside test/conformance/expected-host-cpu.txt needs a step on the
reference kernels; a listed case that now passes is reported (remove it from
the list) and, with --strict, also fails the run. The lists may only shrink.
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
XFAIL_CPU = os.path.join(ROOT, "test", "conformance", "expected-failures-cpu.txt")
XHOST_CPU = os.path.join(ROOT, "test", "conformance", "expected-host-cpu.txt")
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


def classify_cpu(case, bindir, tmp, timeout):
    """The CPU backend on a case the reference passes: (status, detail);
    `host` when it matched but ran steps on the reference kernels."""
    name = os.path.relpath(case, DATA)
    base = os.path.join(tmp, name.replace("/", "__"))
    rc, out = run([os.path.join(bindir, "tc-opt"), "-O2", base + ".tcbc", "-o", base + ".o2.tcbc"], timeout)
    if rc != 0:
        return "opt", first_error(out)
    rc, out = run([os.path.join(bindir, "tc-codegen"), "--target=cpu", base + ".o2.tcbc", "-o",
                   base + ".tcx"], timeout)
    if rc != 0:
        return "codegen", first_error(out)
    reasons = host_reasons(out)
    on_ref = 0
    for s in sorted(d for d in os.listdir(case) if d.startswith("test_data_set_")):
        d = os.path.join(case, s)
        rc, out = run([os.path.join(bindir, "tc-run"), base + ".tcx", "--threads", "1", "--inputs", d,
                       "--compare", d, "--rtol", RTOL, "--atol", ATOL, "--bf16-as-u16"], timeout)
        if rc != 0:
            status = "mismatch" if "MISMATCH" in out else "run"
            return status, "%s: %s" % (s, first_error(out) if status == "run" else
                                       next((l for l in out.splitlines() if "MISMATCH" in l), ""))
        m = re.search(r"steps: .*?(\d+) on the reference kernels", out)
        on_ref = max(on_ref, int(m.group(1)) if m else 0)
    if on_ref:
        return "host", "%d on the reference kernels: %s" % (
            on_ref, "; ".join(reasons) or "(no codegen warning)")
    return "pass", ""


def classify_both(case, bindir, tmp, timeout, cpu):
    status, detail = classify(case, bindir, tmp, timeout)
    cpu_result = None
    if status == "pass" and cpu:
        cpu_result = classify_cpu(case, bindir, tmp, timeout)
    base = os.path.join(tmp, os.path.relpath(case, DATA).replace("/", "__"))
    for ext in (".tcbc", ".o2.tcbc", ".tcx"):
        if os.path.exists(base + ext):
            os.remove(base + ext)
    return (status, detail), cpu_result


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
    ap.add_argument("--no-cpu", action="store_true", help="skip the CPU backend path")
    args = ap.parse_args()
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
    results, cpu_results = {}, {}
    with cf.ThreadPoolExecutor(args.jobs) as ex:
        futs = {ex.submit(classify_both, c, args.bin, tmp, args.timeout, not args.no_cpu): c
                for c in cases}
        for f in cf.as_completed(futs):
            name = os.path.relpath(futs[f], DATA)
            results[name], cpu = f.result()
            if cpu:
                cpu_results[name] = cpu
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
    cpu_xfail = load_xfail(XFAIL_CPU)
    cpu_xhost = load_xfail(XHOST_CPU)
    ok = ("pass", "host")  # the outputs match
    cpu_pass = sum(1 for r in cpu_results.values() if r[0] in ok)
    cpu_host = sum(1 for r in cpu_results.values() if r[0] == "host")
    cpu_regressions = [(n, st, d) for n, (st, d) in sorted(cpu_results.items())
                       if st not in ok and n not in cpu_xfail]
    cpu_fixed = [n for n, (st, d) in sorted(cpu_results.items()) if st in ok and n in cpu_xfail]
    host_regressions = [(n, d) for n, (st, d) in sorted(cpu_results.items())
                        if st == "host" and n not in cpu_xhost]
    host_fixed = [n for n, (st, d) in sorted(cpu_results.items()) if st == "pass" and n in cpu_xhost]
    if cpu_results:
        print("  cpu backend: %d/%d of the cases the reference passes also pass; %d of them ran "
              "steps on the reference kernels" % (cpu_pass, len(cpu_results), cpu_host))
    if args.update_xfail:
        write_xfail(XFAIL_CPU, "Cases the reference executor passes but the CPU backend does not.",
                    {n: r for n, r in cpu_results.items() if r[0] != "host"})
        write_xfail(XHOST_CPU, "Cases the CPU backend passes with steps on the reference kernels "
                    "(host steps).", {n: r for n, r in cpu_results.items() if r[0] == "host"})
        write_xfail(XFAIL, "Conformance cases that are expected to fail, with the reason.", results)
        regressions, cpu_regressions, host_regressions = [], [], []
    if args.report:
        write_report(args.report, results, by_suite, total, passed, cpu_results)
    for name in fixed:
        print("conformance: %s now passes: remove it from %s" % (name, os.path.relpath(XFAIL, ROOT)))
    for name, status, detail in regressions:
        print("conformance: FAIL %s (%s): %s" % (name, status, detail))
    for name in cpu_fixed:
        print("conformance: cpu %s now passes: remove it from %s" % (name, os.path.relpath(XFAIL_CPU, ROOT)))
    for name, status, detail in cpu_regressions:
        print("conformance: FAIL cpu %s (%s): %s" % (name, status, detail))
    for name in host_fixed:
        print("conformance: cpu %s now runs no step on the reference kernels: remove it from %s" % (
            name, os.path.relpath(XHOST_CPU, ROOT)))
    for name, detail in host_regressions:
        print("conformance: FAIL cpu %s (host): %s" % (name, detail))
    if regressions or cpu_regressions or host_regressions or (
            args.strict and (fixed or cpu_fixed or host_fixed)):
        return 1
    return 0


def write_report(path, results, by_suite, total, passed, cpu_results):
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
        cpu_pass = sum(1 for r in cpu_results.values() if r[0] in ("pass", "host"))
        host = [(n, r[1]) for n, r in sorted(cpu_results.items()) if r[0] == "host"]
        f.write("\n**CPU backend** (`tc-opt -O2 | tc-codegen --target=cpu`, same outputs and tolerances): "
                "%d / %d of the cases the reference executor passes; **%d of them ran entirely as "
                "generated kernels and library calls, %d ran steps on the reference kernels** (host "
                "steps: `tc-run`'s `N on the reference kernels`; expected list "
                "test/conformance/expected-host-cpu.txt, which may only shrink).\n" % (
                    cpu_pass, len(cpu_results), cpu_pass - len(host), len(host)))
        cpu_bad = [(n, r) for n, r in sorted(cpu_results.items()) if r[0] not in ("pass", "host")]
        if cpu_bad:
            f.write("\n| case | cpu status | first error |\n|---|---|---|\n")
            for name, (status, detail) in cpu_bad:
                f.write("| %s | %s | %s |\n" % (name, status, detail[:200].replace("|", "\\|")))
        if host:
            by_reason = {}
            for name, detail in host:
                for r in detail.split(": ", 1)[1].split("; "):
                    by_reason.setdefault(r, []).append(name)
            f.write("\n### CPU host steps, by codegen's reason\n\n| cases | reason |\n|---|---|\n")
            for r, names in sorted(by_reason.items(), key=lambda kv: (-len(kv[1]), kv[0])):
                f.write("| %d | %s |\n" % (len(names), r[:200].replace("|", "\\|")))
            f.write("\n<details><summary>The %d cases</summary>\n\n| case | steps on the reference "
                    "kernels, why |\n|---|---|\n" % len(host))
            for name, detail in host:
                f.write("| %s | %s |\n" % (name, detail[:200].replace("|", "\\|")))
            f.write("\n</details>\n")
        f.write("\n## What does not pass, and why\n\n| case | status | first error |\n|---|---|---|\n")
        for name, (status, detail) in sorted(results.items()):
            if status != "pass":
                f.write("| %s | %s | %s |\n" % (name, status, detail[:200].replace("|", "\\|")))


if __name__ == "__main__":
    sys.exit(main())
