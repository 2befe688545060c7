"""Writes the ONNX backend node tests of some op types from the test-case
definitions of the installed onnx Python package (onnx.backend.test.case),
in libonnx-testdata's layout: DIR/test_NAME/{model.onnx,test_data_set_N/}.
The package's cases are newer than Debian's data: opsets up to the package's
own (GroupNormalization-21, Reduce*-18 with axes inputs, Pad-19 wrap,
Resize-19 antialias/axes/keep_aspect_ratio_policy, pooling dilations, ...).

    gen_onnx_node_tests.py DIR OP_TYPE...

A case is written when one of its nodes has one of the op types.
"""
import os
import shutil
import sys

import onnx
from onnx import numpy_helper
from onnx.backend.test.case import node


def write(path, value, name):
    t = value if isinstance(value, onnx.TensorProto) else numpy_helper.from_array(value, name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


def main():
    out, ops = sys.argv[1], set(sys.argv[2:])
    n = 0
    for case in node.collect_testcases():
        if not {nd.op_type for nd in case.model.graph.node} & ops:
            continue
        d = os.path.join(out, case.name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        g = case.model.graph
        for i, (inputs, outputs) in enumerate(case.data_sets):
            ds = os.path.join(d, f"test_data_set_{i}")
            os.makedirs(ds)
            for j, x in enumerate(inputs):
                write(os.path.join(ds, f"input_{j}.pb"), x, g.input[j].name)
            for j, x in enumerate(outputs):
                write(os.path.join(ds, f"output_{j}.pb"), x, g.output[j].name)
        n += 1
    print(f"wrote {n} node tests")


main()
