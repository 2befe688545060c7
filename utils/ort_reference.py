#!/usr/bin/env python3
"""Runs an ONNX model with onnxruntime on the inputs of a test_data_set folder
and writes what it computes as another one, so that tc can be checked against
an independent implementation:

    tc-run --random-inputs --dim N=2 --output-dir IN model.tcbc
    utils/ort_reference.py model.onnx IN EXPECTED
    tc-run --inputs IN --compare EXPECTED model.tcbc

Reads IN/input_N.pb (N in the order of the graph's inputs, initializers left
out) and writes EXPECTED/output_N.pb named after the graph's outputs. Graph
optimizations are off so that onnxruntime computes what the model says.
"""
import argparse
import os
import subprocess
import sys

import onnx
from onnx import numpy_helper


def write_reference(model_path, inputs, outputs):
    """onnxruntime's outputs of the .onnx at model_path on inputs/input_N.pb,
    written as outputs/output_N.pb; returns how many (run_step calls it in
    the random-op tests' own process)."""
    import onnxruntime as ort

    model = onnx.load(model_path)
    initializers = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in initializers]
    feeds = {}
    for n, name in enumerate(names):
        path = os.path.join(inputs, f"input_{n}.pb")
        if not os.path.exists(path):
            sys.exit(f"ort_reference.py: error: {path}: missing (input '{name}')")
        t = onnx.TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        feeds[name] = numpy_helper.to_array(t)

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(model_path, so, providers=["CPUExecutionProvider"])
    outs = sess.run(None, feeds)

    os.makedirs(outputs, exist_ok=True)
    for n, (meta, value) in enumerate(zip(sess.get_outputs(), outs)):
        t = numpy_helper.from_array(value, meta.name)
        with open(os.path.join(outputs, f"output_{n}.pb"), "wb") as f:
            f.write(t.SerializeToString())
    return len(outs)


def run_step(cmd):
    """One step of a random-op test (test/*/Inputs/ort_*_ops.py): a command,
    or ["onnxruntime", model, inputs, outputs] run in this process, where
    onnxruntime loads once, not per case. Returns (returncode, output)."""
    if cmd[0] == "onnxruntime":
        try:
            write_reference(*cmd[1:])
            return 0, ""
        except (Exception, SystemExit) as e:  # what onnxruntime rejects, a missing input
            return 1, f"onnxruntime: {e}"
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="the .onnx model")
    ap.add_argument("inputs", help="folder with input_N.pb")
    ap.add_argument("outputs", help="folder to write output_N.pb to (created)")
    args = ap.parse_args()
    import onnxruntime as ort

    count = write_reference(args.model, args.inputs, args.outputs)
    print(f"ort_reference.py: {count} outputs from onnxruntime {ort.__version__}")


if __name__ == "__main__":
    main()
