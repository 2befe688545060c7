"""multi-tensor-model.py DIR: a pointwise-only model whose parameters have
uneven sizes (multi-tensor.test), DIR/uneven.tcir, and 3 batches of (x,
target) in DIR/data/test_data_set_*/ as .npy files. The parameters reach the
model through Transposes (so each update is a group of its own, not the
epilogue of its gradient's reduction): a [1030, 6] (6180 elements, several
CUDA blocks), b [1030, 1] (not a multiple of 4, the 16-byte vector) and e
[1, 6] (one partial vector), so each tensor of a multi-tensor launch ends
mid-vector or mid-block."""
import os
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(7)


def const(name, shape):
    v = rng.uniform(-1, 1, size=shape).astype(np.float32)
    text = ", ".join("%.6g" % x for x in v.ravel())
    dims = ",".join(str(d) for d in shape)
    return '    %%%s = const f32[%s] [%s] loc("uneven.onnx":"%s")\n' % (name, dims, text, name)


os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "uneven.tcir"), "w") as f:
    f.write("module @uneven {\n  func @main(%x: f32[6,1030]) -> (f32[6,1030]) {\n")
    for name, shape in [("a", (1030, 6)), ("b", (1030, 1)), ("e", (1, 6))]:
        f.write(const(name, shape))
    f.write('    %at = Transpose(%a) {perm = [1, 0]} : f32[6,1030] loc("uneven.onnx":"at")\n'
            '    %bt = Transpose(%b) {perm = [1, 0]} : f32[1,1030] loc("uneven.onnx":"bt")\n'
            '    %et = Transpose(%e) {perm = [1, 0]} : f32[6,1] loc("uneven.onnx":"et")\n'
            '    %m = Mul(%x, %at) : f32[6,1030] loc("uneven.onnx":"mul")\n'
            '    %y = Add(%m, %bt) : f32[6,1030] loc("uneven.onnx":"add")\n'
            '    %t = Tanh(%y) : f32[6,1030] loc("uneven.onnx":"tanh")\n'
            '    %s = Add(%t, %et) : f32[6,1030] loc("uneven.onnx":"shift")\n'
            "    return %s\n  }\n}\n")
for b in range(3):
    d = os.path.join(out, "data", "test_data_set_%d" % b)
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "x.npy"), rng.uniform(-1, 1, size=(6, 1030)).astype(np.float32))
    np.save(os.path.join(d, "target.npy"), rng.uniform(-1, 1, size=(6, 1030)).astype(np.float32))
