#!/usr/bin/env python3
"""Checks a tc-prof trace: valid Chrome trace JSON (object format), compile
and run events present, every kernel event labelled, flows paired, and the
per-kernel totals consistent with the runs' wall time and, when given,
with tc-run's median latency (--tc-run JSON) within noise.

    check_trace.py TRACE [--tc-run TC_RUN_JSON] [--tc-run-steps STDERR] [--tolerance 3]

--tc-run: tc-run --report json (its median latency vs the trace's wall);
--tc-run-steps: tc-run --print-steps --iterations N's stderr (each step's
mean time vs the same step's row).
--train: a train step's trace: every step event says its phase, phase spans
(forward, backward, optimizer) lie in each run, and each fwd-bwd flow goes
from a forward step event to a later backward one of the same run naming
one of its ONNX nodes.
"""
import argparse, json, sys


def fail(msg):
    print("check_trace: FAIL: " + msg)
    sys.exit(1)


ap = argparse.ArgumentParser()
ap.add_argument("trace")
ap.add_argument("--tc-run")
ap.add_argument("--tc-run-steps")
ap.add_argument("--tolerance", type=float, default=3.0,
                help="allowed factor between tc-prof's and tc-run's run times")
ap.add_argument("--train", action="store_true")
args = ap.parse_args()
d = json.load(open(args.trace))
if not isinstance(d, dict) or not isinstance(d.get("traceEvents"), list):
    fail("no traceEvents array")
events = d["traceEvents"]
for e in events:
    ph = e.get("ph")
    if ph not in ("X", "M", "s", "f"):
        fail("unexpected phase %r" % ph)
    if not isinstance(e.get("pid"), int):
        fail("event without an integer pid: %r" % e)
    if ph == "X":
        for k in ("name", "ts", "dur", "tid"):
            if k not in e:
                fail("X event without %s: %r" % (k, e))
        if not (isinstance(e["ts"], (int, float)) and e["dur"] >= 0):
            fail("bad ts/dur: %r" % e)
# Slices on one thread nest or follow each other (viewers drop the others);
# within 1 ns, as viewers round to it (a start plus a shift rounds apart).
threads = {}
for e in events:
    if e.get("ph") == "X":
        threads.setdefault((e["pid"], e["tid"]), []).append(e)
for key, slices in threads.items():
    slices.sort(key=lambda e: (e["ts"], -e["dur"]))
    stack = []
    for e in slices:
        while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"] + 1e-3:
            stack.pop()
        if stack and e["ts"] + e["dur"] > stack[-1]["ts"] + stack[-1]["dur"] + 1e-3:
            fail("on %r, %r overlaps %r without nesting" % (key, e["name"], stack[-1]["name"]))
        stack.append(e)
compile_ev = [e for e in events if e.get("cat") == "compile"]
runs = [e for e in events if e.get("cat") == "run"]
steps = [e for e in events if e.get("ph") == "X" and "step" in e.get("args", {})]
if not compile_ev:
    fail("no compile events")
if not runs:
    fail("no run events")
if not steps:
    fail("no step events")
for e in steps:
    a = e["args"]
    for k in ("group", "kind", "onnx_nodes", "op_types", "signature", "dtype", "bytes", "flops"):
        if k not in a:
            fail("step event without args.%s: %r" % (k, e))
    if a["kind"] in ("library", "fallback") and e["tid"] == 1 and not e["name"].startswith("[" + a["kind"] + "]"):
        fail("a %s step not labelled as such: %r" % (a["kind"], e["name"]))
starts = {e["id"] for e in events if e.get("ph") == "s"}
ends = {e["id"] for e in events if e.get("ph") == "f"}
if starts != ends:
    fail("unpaired flow events")
# Runs start after the compile ends (they read side by side).
if min(e["ts"] for e in runs) < max(e["ts"] + e["dur"] for e in compile_ev):
    fail("run events overlap the compile")
report = d.get("otherData", {}).get("tc_report")
if not report or not report.get("rows"):
    fail("no otherData.tc_report with rows")
wall = report["wall_ms"]
kernels = sum(r["us_per_run"] for r in report["rows"]) / 1e3
if not 0 < kernels <= wall * 1.05:
    fail("kernel time per run %.4f ms vs wall %.4f ms" % (kernels, wall))
# The run events' median agrees with the report's wall.
# (less the tracer's own collecting inside each run, category "tracing")
tracing = {}
for e in events:
    if e.get("cat") == "tracing":
        tracing[e["args"]["run"]] = tracing.get(e["args"]["run"], 0) + e["dur"]
durs = sorted((e["dur"] - tracing.get(e["args"]["run"], 0)) / 1e3 for e in runs)
med = durs[len(durs) // 2] if len(durs) % 2 else (durs[len(durs) // 2 - 1] + durs[len(durs) // 2]) / 2
if abs(med - wall) > 1e-6 * max(1, wall):
    fail("run events' median %.6f ms != report wall %.6f ms" % (med, wall))
if args.tc_run:
    lat = json.load(open(args.tc_run))["latency_ms"]["median"]
    if not (lat / args.tolerance <= wall <= lat * args.tolerance):
        fail("tc-prof wall %.4f ms vs tc-run median %.4f ms (beyond x%g)" % (wall, lat, args.tolerance))
if args.tc_run_steps:
    import re
    by_result = {r["result"]: r for r in report["rows"]}
    compared = 0
    for line in open(args.tc_run_steps):
        m = re.match(r"step (%\S+) = .*\[([0-9.e+-]+) ms\]$", line.strip())
        if not m or m.group(1) not in by_result:
            continue
        ms, row = float(m.group(2)), by_result[m.group(1)]
        mine = row["us_per_run"] / 1e3
        if not (ms / args.tolerance <= mine <= ms * args.tolerance):
            fail("step %s: tc-prof %.4f ms vs tc-run %.4f ms (beyond x%g)" % (m.group(1), mine, ms, args.tolerance))
        compared += 1
    if not compared:
        fail("no step of tc-run --print-steps matched a row")
if args.train:
    def slice_at(pid, tid, ts):
        # The innermost step slice on (pid, tid) holding ts.
        best = None
        for e in threads.get((pid, tid), []):
            if "step" in e.get("args", {}) and e["ts"] <= ts <= e["ts"] + e["dur"]:
                if best is None or e["dur"] < best["dur"]:
                    best = e
        return best
    for e in steps:
        if e["args"].get("phase") not in ("forward", "backward", "optimizer"):
            fail("step event without a phase: %r" % e)
        if e["args"]["phase"] not in e.get("cat", "").split(","):
            fail("step event's category lacks its phase: %r" % e)
    spans = [e for e in events if e.get("ph") == "X" and e.get("cat") == "phase"]
    per_phase = {}
    for e in spans:
        per_phase.setdefault(e["name"], set()).add(e["args"]["run"])
    for p in ("forward", "backward", "optimizer"):
        if per_phase.get(p) != {r["args"]["run"] for r in runs}:
            fail("runs without a %s span: %r" % (p, per_phase.get(p)))
    flows = {}
    for e in events:
        if e.get("cat") == "fwd_bwd":
            flows.setdefault(e["id"], {})[e["ph"]] = e
    if not flows:
        fail("no fwd-bwd flow events")
    for fid, pair in flows.items():
        if set(pair) != {"s", "f"}:
            fail("fwd-bwd flow %r unpaired" % fid)
        fw = slice_at(pair["s"]["pid"], pair["s"]["tid"], pair["s"]["ts"])
        bw = slice_at(pair["f"]["pid"], pair["f"]["tid"], pair["f"]["ts"])
        if not fw or fw["args"]["phase"] != "forward":
            fail("fwd-bwd flow %r starts at no forward step: %r" % (fid, fw))
        if not bw or bw["args"]["phase"] != "backward":
            fail("fwd-bwd flow %r ends at no backward step: %r" % (fid, bw))
        if fw["args"]["run"] != bw["args"]["run"] or fw["ts"] > bw["ts"]:
            fail("fwd-bwd flow %r goes back in time or across runs" % fid)
        if not set(fw["args"]["onnx_nodes"]) & set(bw["args"]["onnx_nodes"]):
            fail("fwd-bwd flow %r links steps with no node in common: %r, %r" % (fid, fw["name"], bw["name"]))
    backward = {e["args"]["group"] for e in steps if e["args"]["phase"] == "backward"}
    linked = {slice_at(p["f"]["pid"], p["f"]["tid"], p["f"]["ts"])["args"]["group"] for p in flows.values()}
    print("train trace ok: %d fwd-bwd flows, %d of %d backward steps linked, phase spans %s"
          % (len(flows), len(linked), len(backward),
             ", ".join("%s %d" % (p, sum(1 for e in spans if e["name"] == p)) for p in ("forward", "backward", "optimizer"))))
print("trace ok: %d events, %d compile, %d runs, %d step events, kernels %.3f of wall %.3f ms"
      % (len(events), len(compile_ev), len(runs), len(steps), kernels, wall))
