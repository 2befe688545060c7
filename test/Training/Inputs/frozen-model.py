"""logits = (x * freq) @ w: `freq` a float initializer the exporter marks as
not trained (metadata_props "tc.frozen", as utils/bench-train.py writes
PyTorch's buffers: ESM's rotary inv_freq), `w` a weight. Written to
argv[1]/frozen.onnx; with argv[2] == "unmarked", without the entry."""
import os
import sys

import numpy as np
import onnx
from onnx import helper as h, numpy_helper as nh, TensorProto as T
rng = np.random.default_rng(0)
inits = [nh.from_array((1 + 0.1 * rng.standard_normal(16)).astype(np.float32), "m.rotary.inv_freq"),
         nh.from_array((0.1 * rng.standard_normal((16, 10))).astype(np.float32), "m.head.weight")]
nodes = [h.make_node("Mul", ["x", "m.rotary.inv_freq"], ["s"]), h.make_node("MatMul", ["s", "m.head.weight"], ["logits"])]
g = h.make_graph(nodes, "frozen", [h.make_tensor_value_info("x", T.FLOAT, [4, 16])],
                 [h.make_tensor_value_info("logits", T.FLOAT, [4, 10])], inits)
model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
if sys.argv[2:] != ["unmarked"]:
    entry = model.metadata_props.add()
    entry.key, entry.value = "tc.frozen", "m.rotary.inv_freq\nm.unused.buffer"
onnx.save(model, os.path.join(sys.argv[1], "frozen.onnx"))
