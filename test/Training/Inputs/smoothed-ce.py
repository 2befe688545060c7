"""PyTorch's label-smoothed cross-entropy of accumulate.py's MLP on one batch,
in NumPy, against tc's: smoothed-ce.py MODEL.onnx BATCH_DIR EPS TC_OUTPUT.pb"""
import sys

import numpy as np
import onnx
from onnx import numpy_helper as nh

model, batch, eps, got = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
w = {i.name: nh.to_array(i).astype(np.float64) for i in onnx.load(model).graph.initializer}
x = nh.to_array(onnx.load_tensor(batch + "/input_0.pb")).astype(np.float64)
y = nh.to_array(onnx.load_tensor(batch + "/input_1.pb"))
h = np.maximum(x @ w["fc1.weight"] + w["fc1.bias"], 0) @ w["fc2.weight"] + w["fc2.bias"]
logp = h - h.max(1, keepdims=True)
logp -= np.log(np.exp(logp).sum(1, keepdims=True))
want = ((1 - eps) * -logp[np.arange(len(y)), y] + eps * -logp.mean(1)).mean()
have = float(nh.to_array(onnx.load_tensor(got)))
if not abs(have - want) <= 1e-5 * abs(want):
    sys.exit("smoothed loss %r, expected %r" % (have, want))
print("smoothed cross-entropy matches (eps %g)" % eps)
