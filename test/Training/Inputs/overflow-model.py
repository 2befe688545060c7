"""overflow-model.py DIR: a pointwise model whose gradients are mostly large
(overflow-sums.test), DIR/big.tcir, its parameters DIR/params.npz, and
batches of (x, target) as .npy files: DIR/data (3 finite batches), DIR/nan
and DIR/inf (one batch each).

    out = Tanh(x * a^T + c^T) * d^T + e^T      x: [2, 70000]

a, c [70000, 2] (140000 elements) and d [70000, 1] (70000) have large
gradients (more than 2^16 elements: the overflow check sums each alone),
e [1, 2] a small one. In fp16 the batches of DIR/nan and DIR/inf overflow
in ONE element of a's gradient, da = (dy * x)^T, and nowhere else, not in
the loss: in DIR/nan x[0, 7] = 1e5 is +inf in f16, its tanh is 1, so
dy = 0 there and da = 0 * inf = NaN; in DIR/inf x[1, 69990] = 20 with
a[69990, 1] = 0.001 (tanh's argument small) and a target of 1e4 there:
dy is about -5e3 (the loss scale 65536 times the MSE's gradient) and
da = dy * 20 is past f16's largest, -inf."""
import os
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(5)
N = 70000
params = {"a": rng.uniform(-1, 1, (N, 2)), "c": rng.uniform(-0.5, 0.5, (N, 2)),
          "d": rng.uniform(0.5, 1, (N, 1)), "e": rng.uniform(-1, 1, (1, 2))}
params["a"][69990, 1] = 0.001
params = {k: v.astype(np.float32) for k, v in params.items()}
os.makedirs(out, exist_ok=True)
np.savez(os.path.join(out, "params.npz"), **params)


def const(name, v):
    text = ", ".join("%.9g" % x for x in v.ravel())
    dims = ",".join(str(d) for d in v.shape)
    return '    %%%s = const f32[%s] [%s] loc("big.onnx":"%s")\n' % (name, dims, text, name)


with open(os.path.join(out, "big.tcir"), "w") as f:
    f.write("module @big {\n  func @main(%%x: f32[2,%d]) -> (f32[2,%d]) {\n" % (N, N))
    for k, v in params.items():
        f.write(const(k, v))
    for k, shape in [("a", "2,%d" % N), ("c", "2,%d" % N), ("d", "1,%d" % N), ("e", "2,1")]:
        f.write('    %%%st = Transpose(%%%s) {perm = [1, 0]} : f32[%s] loc("big.onnx":"%st")\n'
                % (k, k, shape, k))
    f.write('    %%m = Mul(%%x, %%at) : f32[2,%d] loc("big.onnx":"mul")\n' % N +
            '    %%y = Add(%%m, %%ct) : f32[2,%d] loc("big.onnx":"add")\n' % N +
            '    %%t = Tanh(%%y) : f32[2,%d] loc("big.onnx":"tanh")\n' % N +
            '    %%s = Mul(%%t, %%dt) : f32[2,%d] loc("big.onnx":"scale")\n' % N +
            '    %%o = Add(%%s, %%et) : f32[2,%d] loc("big.onnx":"shift")\n' % N +
            "    return %o\n  }\n}\n")


def batch(d, x, target):
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "x.npy"), x.astype(np.float32))
    np.save(os.path.join(d, "target.npy"), target.astype(np.float32))


for b in range(3):
    batch(os.path.join(out, "data", "test_data_set_%d" % b), rng.uniform(-1, 1, (2, N)),
          rng.uniform(-1, 1, (2, N)))
x, target = rng.uniform(-1, 1, (2, N)), rng.uniform(-1, 1, (2, N))
nan_x = x.copy()
nan_x[0, 7] = 1e5
batch(os.path.join(out, "nan", "test_data_set_0"), nan_x, target)
inf_x, inf_t = x.copy(), target.copy()
inf_x[1, 69990], inf_t[1, 69990] = 20, 1e4
batch(os.path.join(out, "inf", "test_data_set_0"), inf_x, inf_t)
