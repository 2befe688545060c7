"""Data for accumulate.test: a small MLP and the same samples as full batches
and as half batches (micro-batches).
   accumulate.py make DIR: DIR/full.onnx (batch 8), DIR/half.onnx (batch 4,
       the same weights), DIR/full/test_data_set_0..2, DIR/half/test_data_set_0..5
       (set 2i and 2i+1 are the halves of full set i)
   accumulate.py compare A.safetensors B.safetensors TOL: every tensor of A
       matches B's within TOL (relative to the largest magnitude)."""
import os
import sys

import numpy as np


def make(out):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((6, 5)).astype(np.float32) * 0.5
    b1 = rng.standard_normal(5).astype(np.float32) * 0.1
    w2 = rng.standard_normal((5, 3)).astype(np.float32) * 0.5
    b2 = rng.standard_normal(3).astype(np.float32) * 0.1
    inits = [numpy_helper.from_array(a, n) for a, n in ((w1, "fc1.weight"), (b1, "fc1.bias"),
                                                        (w2, "fc2.weight"), (b2, "fc2.bias"))]
    for name, batch in (("full", 8), ("half", 4)):
        nodes = [helper.make_node("MatMul", ["x", "fc1.weight"], ["h0"]),
                 helper.make_node("Add", ["h0", "fc1.bias"], ["h1"]),
                 helper.make_node("Relu", ["h1"], ["h2"]),
                 helper.make_node("MatMul", ["h2", "fc2.weight"], ["h3"]),
                 helper.make_node("Add", ["h3", "fc2.bias"], ["logits"])]
        g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 6])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, 3])], inits)
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]),
                  os.path.join(out, name + ".onnx"))
    for i in range(3):
        x = rng.standard_normal((8, 6)).astype(np.float32)
        y = rng.integers(0, 3, 8).astype(np.int64)
        sets = [("full", i, x, y), ("half", 2 * i, x[:4], y[:4]), ("half", 2 * i + 1, x[4:], y[4:])]
        for kind, k, xs, ys in sets:
            d = os.path.join(out, kind, "test_data_set_%d" % k)
            os.makedirs(d, exist_ok=True)
            for j, t in enumerate((xs, ys)):
                with open(os.path.join(d, "input_%d.pb" % j), "wb") as f:
                    f.write(numpy_helper.from_array(t).SerializeToString())


def compare(a, b, tol):
    from safetensors.numpy import load_file
    ta, tb = load_file(a), load_file(b)
    worst = 0.0
    for k, v in ta.items():
        if k not in tb:
            sys.exit("%s: no tensor %s" % (b, k))
        d = float(np.max(np.abs(v.astype(np.float64) - tb[k]))) / max(1e-30, float(np.max(np.abs(v))))
        if not np.isfinite(d) or d > tol:
            sys.exit("%s differs by %g" % (k, d))
        worst = max(worst, d)
    print("%d tensors within %g" % (len(ta), tol))


if sys.argv[1] == "make":
    make(sys.argv[2])
else:
    compare(sys.argv[2], sys.argv[3], float(sys.argv[4]))
