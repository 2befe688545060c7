"""A chain of 150 `tanh(x * w + b)` layers, w and b of 64 elements, then a
MatMul: 301 parameters. Written to argv[1]/many.onnx."""
import os
import sys

import numpy as np
import onnx
from onnx import helper as h, numpy_helper as nh, TensorProto as T
L = 150
rng = np.random.default_rng(0)
nodes, inits = [], []
x = "x"
for i in range(L):
    inits += [nh.from_array((1 + 0.1 * rng.standard_normal(64)).astype(np.float32), "w%d" % i),
              nh.from_array((0.1 * rng.standard_normal(64)).astype(np.float32), "b%d" % i)]
    nodes += [h.make_node("Mul", [x, "w%d" % i], ["m%d" % i]), h.make_node("Add", ["m%d" % i, "b%d" % i], ["a%d" % i]),
              h.make_node("Tanh", ["a%d" % i], ["t%d" % i])]
    x = "t%d" % i
inits.append(nh.from_array((0.1 * rng.standard_normal((64, 10))).astype(np.float32), "head"))
nodes.append(h.make_node("MatMul", [x, "head"], ["logits"]))
g = h.make_graph(nodes, "many", [h.make_tensor_value_info("x", T.FLOAT, [8, 64])],
                 [h.make_tensor_value_info("logits", T.FLOAT, [8, 10])], inits)
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), os.path.join(sys.argv[1], "many.onnx"))
