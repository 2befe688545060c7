#!/usr/bin/env python3
"""Counts the Transpose ops left in the optimized IR of CNNs (issue 18 item 1:
channels-last end to end), fused callees included.

  python3 utils/count-transposes.py --zoo /tmp/zoo/small --bin build/bin \
      [--base OTHER/bin] [--models a,b] [--args "-O2 --target=cuda --precision fp16"]

For each model M, imports M.dynamo.onnx with --bin's tc-import (into a
temporary folder) and runs `tc-opt ARGS M.tcbc -S` with each bin folder's tc-opt and prints a markdown table of Transpose counts (the IR's
`= Transpose(` lines); with --base, the first column is the base's.
"""
import argparse
import os
import subprocess
import sys
import tempfile

CNNS = [
    "resnet50", "resnet18", "resnext50_32x4d", "wide_resnet50_2", "densenet121", "mobilenet_v2",
    "mobilenet_v3_large", "efficientnet_b0", "efficientnet_v2_s", "regnet_y_800mf",
    "convnext_tiny", "deeplabv3_mobilenet_v3_large", "ssdlite320_mobilenet_v3_large",
    "mobilevit_s", "poolformer_s12",
]


def count(tc_opt, model, args):
    r = subprocess.run([tc_opt] + args.split() + [model, "-S"], capture_output=True, text=True)
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["?"])[-1]
        return None, last
    return sum(1 for line in r.stdout.splitlines() if "= Transpose(" in line), ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--zoo", default="/tmp/zoo/small")
    ap.add_argument("--bin", default="build/bin", help="folder of the tc-opt to measure")
    ap.add_argument("--base", help="folder of a baseline tc-opt (a 'before' column)")
    ap.add_argument("--models", help="comma-separated names (default: the CNNs)")
    ap.add_argument("--args", default="-O2 --target=cuda --precision fp16")
    a = ap.parse_args()
    models = a.models.split(",") if a.models else CNNS
    cols = ([("before", a.base)] if a.base else []) + [("after" if a.base else "transposes", a.bin)]
    print("| model | " + " | ".join(c for c, _ in cols) + " |")
    print("|---|" + "---|" * len(cols))
    failed = False
    tmp = tempfile.TemporaryDirectory()
    for m in models:
        path = os.path.join(tmp.name, m + ".tcbc")
        r = subprocess.run([os.path.join(a.bin, "tc-import"),
                            os.path.join(a.zoo, m + ".dynamo.onnx"), "-o", path],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(f"| {m} | import failed: {r.stderr.strip()[-200:]} |")
            failed = True
            continue
        cells = []
        for _, b in cols:
            n, err = count(os.path.join(b, "tc-opt"), path, a.args)
            cells.append(str(n) if n is not None else "error: " + err)
            failed |= n is None
        print(f"| {m} | " + " | ".join(cells) + " |", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
