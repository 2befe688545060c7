"""A small model through the ops whose gradient rules came after the digits CNN's (grad-ops.test):
GroupNormalization, a reflect Pad, ConvTranspose, Resize (linear and nearest), Slice with steps 2
and -1, an edge Pad, GatherElements, CumSum, Einsum, ReduceMax, Selu; every weight trainable. Writes
DIR/model.onnx and DIR/train/test_data_set_*/input_{0,1}.pb (x, target) for an MSE loss.
   grad-ops-model.py DIR"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

B = 2


def main(out):
    rng = np.random.default_rng(0)

    def w(*shape):
        return (rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]) if len(shape) > 1 else 1)).astype(np.float32)

    inits = {
        "conv.weight": w(4, 3, 3, 3),
        "conv.bias": w(4),
        "gn.weight": (1 + 0.1 * rng.standard_normal(4)).astype(np.float32),
        "gn.bias": (0.1 * rng.standard_normal(4)).astype(np.float32),
        "down.weight": w(4, 4, 3, 3),
        "up.weight": w(4, 2, 2, 2),
        "up.bias": w(2),
        "mix.weight": w(2, 5),
    }
    consts = {
        "scales2": np.array([1, 1, 2, 2], np.float32),
        "sl.starts": np.array([0, -1], np.int64),
        "sl.ends": np.array([100, -100], np.int64),
        "sl.axes": np.array([2, 3], np.int64),
        "sl.steps": np.array([2, -1], np.int64),
        "pad.reflect": np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64),
        "pad.edge": np.array([0, 0, 0, 1, 0, 0, 2, 0], np.int64),
        "ge.idx": rng.integers(-4, 4, size=(B, 5, 3, 3)).astype(np.int64),
        "cs.axis": np.array(3, np.int64),
        "rm.axes": np.array([2], np.int64),
    }
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "conv.weight", "conv.bias"], ["c1"], pads=[1, 1, 1, 1], name="conv"),
        n("GroupNormalization", ["c1", "gn.weight", "gn.bias"], ["g1"], num_groups=2, name="gn"),
        n("Selu", ["g1"], ["a1"], name="selu"),
        n("Pad", ["a1", "pad.reflect"], ["p1"], mode="reflect", name="pad_reflect"),
        n("Conv", ["p1", "down.weight"], ["d1"], strides=[2, 2], name="down"),          # [B,4,4,4]
        n("Resize", ["d1", "", "scales2"], ["r1"], mode="linear", name="resize_linear"),  # [B,4,8,8]
        n("ConvTranspose", ["r1", "up.weight", "up.bias"], ["u1"], strides=[2, 2], name="up"),  # [B,2,16,16]
        n("Slice", ["u1", "sl.starts", "sl.ends", "sl.axes", "sl.steps"], ["s1"], name="slice"),  # [B,2,8,16]
        n("Resize", ["s1", "", "scales2"], ["n1"], mode="nearest", coordinate_transformation_mode="asymmetric",
          nearest_mode="floor", name="resize_nearest"),                                   # [B,2,16,32]
        n("Einsum", ["n1", "mix.weight"], ["e1"], equation="bchw,cd->bdhw", name="mix"),  # [B,5,16,32]
        n("Pad", ["e1", "pad.edge"], ["p2"], mode="edge", name="pad_edge"),              # [B,5,18,33]
        n("MaxPool", ["p2"], ["m1"], kernel_shape=[4, 4], strides=[4, 4], name="pool"),  # [B,5,4,8]
        n("CumSum", ["m1", "cs.axis"], ["k1"], reverse=1, name="cumsum"),
        n("GatherElements", ["k1", "ge.idx"], ["ge"], axis=3, name="gather_elements"),  # [B,5,3,3]
        n("ReduceMax", ["ge", "rm.axes"], ["y"], keepdims=0, name="reduce_max"),         # [B,5,3]
    ]
    tensors = [numpy_helper.from_array(v, k) for k, v in {**inits, **consts}.items()]
    graph = helper.make_graph(
        nodes, "grad_ops",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [B, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [B, 5, 3])], tensors)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    os.makedirs(out, exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))
    for b in range(3):
        d = os.path.join(out, "train", "test_data_set_%d" % b)
        os.makedirs(d, exist_ok=True)
        arrays = [("x", rng.standard_normal((B, 3, 8, 8)).astype(np.float32)),
                  ("target", rng.standard_normal((B, 5, 3)).astype(np.float32))]
        for i, (name, arr) in enumerate(arrays):
            with open(os.path.join(d, "input_%d.pb" % i), "wb") as f:
                f.write(numpy_helper.from_array(arr, name).SerializeToString())


if __name__ == "__main__":
    main(sys.argv[1])
