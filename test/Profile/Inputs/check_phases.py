#!/usr/bin/env python3
"""Checks a tc-prof --format=json report of a train step: every step row has
a phase, the per-phase totals (forward, backward, optimizer) add up to the
rows, and the backward rows name the model's ONNX nodes, most of them nodes
that forward rows name too (the forward op each differentiates).

    check_phases.py REPORT.json MODEL.onnx
"""
import json, sys

import onnx


def fail(msg):
    print("check_phases: FAIL: " + msg)
    sys.exit(1)


r = json.load(open(sys.argv[1]))
nodes = {n.name for n in onnx.load(sys.argv[2]).graph.node}
rows = r["rows"]
phases = {p["phase"]: p for p in r.get("phases", [])}
if [p["phase"] for p in r.get("phases", [])][:3] != ["forward", "backward", "optimizer"]:
    fail("phases %r" % list(phases))
for row in rows:
    if row["step"] >= 0 and row.get("phase") not in ("forward", "backward", "optimizer"):
        fail("row without a phase: %r" % row)
for name, p in phases.items():
    mine = [k for k in rows if (k.get("phase") or "other") == name]
    if p["kernels"] != len(mine) or not mine and name != "other":
        fail("%s: %d kernels, %d rows" % (name, p["kernels"], len(mine)))
    us = sum(k["us_per_run"] for k in mine)
    if abs(us - p["us_per_run"]) > 1e-6 * max(1, us):
        fail("%s: %g us/run vs rows' %g" % (name, p["us_per_run"], us))
if abs(sum(p["share"] for p in phases.values()) - 1) > 1e-6:
    fail("phase shares do not add up to 1")
forward_nodes = {n for k in rows if k["phase"] == "forward" for n in k["nodes"]}
backward = [k for k in rows if k["phase"] == "backward"]
linked = 0
for k in backward:
    named = [n for n in k["nodes"] if n]
    # "(loss)": append-loss's ops and their gradient (TrainSignature.h's kLossNode).
    if not named or not set(named) <= nodes | {"(loss)"}:
        fail("backward row %s names %r, not the model's nodes" % (k["name"], k["nodes"]))
    linked += bool(set(named) & forward_nodes)
if 2 * linked < len(backward):
    fail("only %d of %d backward rows name a forward row's node" % (linked, len(backward)))
print("phases ok: " + ", ".join("%s %d kernels" % (p, phases[p]["kernels"])
                                for p in ("forward", "backward", "optimizer")))
