#!/usr/bin/env python3
"""zoo-table.py DB [--mode cudagraphs] [--precision amp]: docs/zoo.md's tables
from a tc-bench database (one run or a --merge of its parts): per model tc's
latency beside PyTorch eager and torch.compile(mode="reduce-overhead") from
the same command, then per suite the dashboard's four numbers (pass rate,
geomean speedup vs eager and vs reduce-overhead, mean compile time, memory
vs PyTorch) plus host steps and models below 0.5x reduce-overhead.

    python3 utils/zoo-table.py docs/bench/zoo.db > /tmp/tables.md

The newest row of each (model, mode, precision) counts; only models the zoo
has now (models/manifest.json's suites) are listed, older ones are named on
stderr. Speedups are PyTorch's median latency over tc's, both CUDA-event
device times."""
import argparse, math, sqlite3, sys
from committed_models import manifest_zoo

SUITES = ("vision", "text", "generative")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("db")
    ap.add_argument("--mode", default="cudagraphs")
    ap.add_argument("--precision", default="amp")
    a = ap.parse_args()
    con = sqlite3.connect(a.db)
    con.row_factory = sqlite3.Row
    rows = {}
    for r in con.execute("SELECT * FROM results WHERE precision = ? AND suite IN (?, ?, ?) ORDER BY date, id",
                         (a.precision,) + SUITES):
        rows[(r["suite"], r["model"], r["mode"])] = r  # the newest wins
    zoo = {(s, m) for m, s in manifest_zoo().items()}
    gone = sorted({"%s/%s" % (s, m) for s, m, _ in rows if (s, m) not in zoo})
    if gone:
        print("zoo-table: not in the zoo now, left out: %s" % ", ".join(gone), file=sys.stderr)
    models = sorted({(s, m) for s, m, _ in rows if (s, m) in zoo}, key=lambda k: (SUITES.index(k[0]), k[1]))
    print("| suite | model | tc ms | eager ms | RO ms | vs eager | vs RO | host steps | CUDA graph | memory vs torch | compile s | commit | notes |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    per = {s: [] for s in SUITES}
    for s, m in models:
        tc, eager, ro = (rows.get((s, m, k)) for k in (a.mode, "torch-eager", "torch-reduce-overhead"))
        ms = lambda r: "%.3f" % r["latency_ms"] if r is not None and r["status"] == "pass" else "-"
        ok = tc is not None and tc["status"] == "pass"
        ve = eager["latency_ms"] / tc["latency_ms"] if ok and eager is not None and eager["status"] == "pass" else None
        vr = ro["latency_ms"] / tc["latency_ms"] if ok and ro is not None and ro["status"] == "pass" else None
        note = "" if tc is None else ("" if ok else "FAIL %s: %s" % (tc["reason"], tc["error"][:140].replace("|", "/")))
        if tc is None:
            note = "not measured"
        f = lambda x: "%.2fx" % x if x else "-"
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            s, m, ms(tc), ms(eager), ms(ro), f(ve), f(vr),
            "-" if tc is None or tc["host_steps"] is None else tc["host_steps"],
            "-" if tc is None or tc["graph_captured"] is None else ("yes" if tc["graph_captured"] else "NO"),
            "-" if not ok or tc["memory_vs_torch"] is None else "%.2fx" % tc["memory_vs_torch"],
            "-" if tc is None or tc["compile_s"] is None else "%.1f" % tc["compile_s"],
            "-" if tc is None else tc["commit_sha"], note))
        per[s].append((tc, ve, vr))
    print()
    print("| suite | measured | pass rate | geomean vs eager | geomean vs RO | below 0.5x RO | mean compile s | memory vs torch (geomean) | models with host steps |")
    print("|---|---|---|---|---|---|---|---|---|")
    geo = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")
    for s in SUITES:
        got = [x for x in per[s] if x[0] is not None]
        passed = [x for x in got if x[0]["status"] == "pass"]
        ve = [x[1] for x in passed if x[1]]
        vr = [x[2] for x in passed if x[2]]
        comp = [x[0]["compile_s"] for x in passed if x[0]["compile_s"] is not None]
        mem = [x[0]["memory_vs_torch"] for x in passed if x[0]["memory_vs_torch"]]
        host = sum(1 for x in got if (x[0]["host_steps"] or 0) > 0 or (x[0]["fallback_steps"] or 0) > 0)
        print("| %s | %d | %d/%d (%.0f%%) | %.2fx | %.2fx | %d | %.1f | %.2fx | %d |" % (
            s, len(got), len(passed), len(got), 100.0 * len(passed) / max(1, len(got)), geo(ve), geo(vr),
            sum(1 for x in vr if x < 0.5), sum(comp) / max(1, len(comp)), geo(mem), host))


if __name__ == "__main__":
    sys.exit(main())
