#!/usr/bin/env python3
"""zoo-profile-table.py DIR [--db DB] [--top 3] [--below 1.0]: where each zoo
model's device time goes, from the per-step CSVs a PROFILE=1 sweep brings back
(utils/gpu-zoo-sweep.sh writes DIR/prof-MODEL.csv with `tc-prof --format csv`).

Steps are classed as the library call they make (`cudnn conv`, `cublaslt
gemm`, ...) or the op types of their generated kernel; the input copy
(memcpy rows) is left out: tc-bench's timed runs keep inputs on the device.
With --db (a sweep's merged database) each row also gets tc's speedup vs
torch.compile reduce-overhead, and only models below --below are listed:

    python3 utils/zoo-profile-table.py /tmp/sweep --db zoo.db --below 0.8

That is the profile-based reason docs/zoo.md gives for every slow model."""
import argparse, collections, csv, glob, os, sqlite3


def step_class(r):
    if r["kind"] == "library":
        return " ".join(r["detail"].split()[:2])
    return r["op_types"] or r["kind"]


def speedups(db):
    con = sqlite3.connect(db)
    latest = {}
    for model, mode, status, ms in con.execute(
            "SELECT model, mode, status, latency_ms FROM results WHERE precision = 'amp' ORDER BY date, id"):
        latest[(model, mode)] = ms if status == "pass" else None
    return {m: latest[(m, "torch-reduce-overhead")] / ms
            for (m, mode), ms in latest.items()
            if mode == "cudagraphs" and ms and latest.get((m, "torch-reduce-overhead"))}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--db")
    ap.add_argument("--top", type=int, default=3)
    ap.add_argument("--below", type=float, default=float("inf"))
    a = ap.parse_args()
    vs = speedups(a.db) if a.db else {}
    print("| model | vs RO | device us | steps | where the time goes (share of device time) |")
    print("|---|---|---|---|---|")
    rows = []
    for path in sorted(glob.glob(os.path.join(a.dir, "prof-*.csv"))):
        model = os.path.basename(path)[len("prof-"):-len(".csv")]
        if a.db and not vs.get(model, 0) < a.below:
            continue
        steps = [r for r in csv.DictReader(open(path)) if r["kind"] != "memcpy"]
        total = sum(float(r["us_per_run"]) for r in steps)
        if not total:
            continue
        by = collections.Counter()
        for r in steps:
            by[step_class(r)] += float(r["us_per_run"])
        top = ", ".join("%s %.0f%%" % (k, 100 * v / total) for k, v in by.most_common(a.top))
        rows.append((vs.get(model, 0), "| %s | %s | %.0f | %d | %s |" % (
            model, "%.2fx" % vs[model] if model in vs else "-", total, len(steps), top)))
    for _, line in sorted(rows):
        print(line)


if __name__ == "__main__":
    main()
