"""embedding-overflow-model.py DIR: a model whose only trained parameter is
an embedding table (embedding-overflow.test), DIR/emb.tcir, the table's
initial values DIR/params.npz, and batches of (tokens, target) as .npy
files: DIR/data (3 finite batches) and DIR/inf (one batch whose step
overflows in the table's gradient alone).

    y = Gather(table, tokens) * w      table [50, 4] trained, w [4] frozen

The table's gradient is a scatter-add of dy * w into zeros, which the AMP
overflow check sums as its updates (AppendOptimizer.cpp). In DIR/inf one
target is 1e4: the loss scale 65536 times the MSE's gradient there is past
f16's largest, so one row of the table's gradient is -inf."""
import os
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(11)
V, D, B, T = 50, 4, 2, 3
table = rng.uniform(-1, 1, (V, D)).astype(np.float32)
w = rng.uniform(0.5, 1, (D,)).astype(np.float32)
os.makedirs(out, exist_ok=True)
np.savez(os.path.join(out, "params.npz"), table=table)


def const(name, v):
    text = ", ".join("%.9g" % x for x in v.ravel())
    dims = ",".join(str(d) for d in v.shape)
    return '    %%%s = const f32[%s] [%s] loc("emb.onnx":"%s")\n' % (name, dims, text, name)


with open(os.path.join(out, "emb.tcir"), "w") as f:
    f.write("module @emb {\n  func @main(%%tokens: i64[%d,%d]) -> (f32[%d,%d,%d]) {\n" % (B, T, B, T, D))
    f.write(const("table", table) + const("w", w))
    f.write('    %%e = Gather(%%table, %%tokens) {axis = 0} : f32[%d,%d,%d] loc("emb.onnx":"gather")\n'
            % (B, T, D))
    f.write('    %%y = Mul(%%e, %%w) : f32[%d,%d,%d] loc("emb.onnx":"scale")\n' % (B, T, D))
    f.write("    return %y\n  }\n}\n")


def batch(d, tokens, target):
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "tokens.npy"), tokens.astype(np.int64))
    np.save(os.path.join(d, "target.npy"), target.astype(np.float32))


for b in range(3):
    batch(os.path.join(out, "data", "test_data_set_%d" % b), rng.integers(0, V, (B, T)),
          rng.uniform(-1, 1, (B, T, D)))
tokens, target = rng.integers(0, V, (B, T)), rng.uniform(-1, 1, (B, T, D))
target[1, 2, 3] = 1e4
batch(os.path.join(out, "inf", "test_data_set_0"), tokens, target)
