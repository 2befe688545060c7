"""Writes models whose weights live in side files: one well-formed, and ones
whose data location escapes the model folder (../, absolute) or is missing."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def model(location, write_data=True):
    w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(3, 4), "W")
    raw = w.raw_data
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", "0"), ("length", str(len(raw)))):
        e = w.external_data.add()
        e.key, e.value = k, v
    if write_data and not os.path.isabs(location) and ".." not in location:
        with open(os.path.join(out, location), "wb") as f:
            f.write(raw)
    g = helper.make_graph([helper.make_node("MatMul", ["X", "W"], ["Y"], name="mm")], "ext",
                          [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 4])], [w])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


for name, loc, data in (("good", "weights.bin", True), ("escape", "../weights.bin", False),
                        ("absolute", "/etc/passwd", False), ("missing", "nothere.bin", False)):
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(model(loc, data).SerializeToString())
