"""numpy twin of ref-model.tcir: an independent oracle for tc-run.

    numpy_model.py gen DIR              writes x.npy and w.npy (N = 3)
    numpy_model.py eval IN OUT [--perturb]
        reads input_N.pb or NAME.npy from IN, writes output_0.pb, i.npy and
        output_2.pb to OUT; --perturb shifts one value of output 0 by 1e-3.
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

f32 = np.float32


def load(d, n, name):
    pb = os.path.join(d, f"input_{n}.pb")
    if os.path.exists(pb):
        t = onnx.TensorProto()
        with open(pb, "rb") as f:
            t.ParseFromString(f.read())
        return numpy_helper.to_array(t)
    return np.load(os.path.join(d, name + ".npy"))


def model(x, w):
    # Each op rounds its result to f32, as the IR says.
    b = np.array([0.5, -0.25, 1], f32)
    a = ((x.astype(np.float64) @ w.astype(np.float64)).astype(f32) + b).astype(f32)
    erf = np.vectorize(math.erf)
    g = (0.5 * a.astype(np.float64) * (1 + erf(a.astype(np.float64) / math.sqrt(2)))).astype(f32)
    e = np.exp(g.astype(np.float64) - g.max(axis=-1, keepdims=True))
    s = (e / e.sum(axis=-1, keepdims=True)).astype(f32)
    sel = np.where(a > 0, a, s)
    i = np.trunc(sel * f32(10)).astype(np.int32)
    return s, i, s.T.copy()


def main():
    if sys.argv[1] == "gen":
        rng = np.random.default_rng(3)
        os.makedirs(sys.argv[2], exist_ok=True)
        np.save(os.path.join(sys.argv[2], "x.npy"), rng.standard_normal((3, 4)).astype(f32))
        np.save(os.path.join(sys.argv[2], "w.npy"), rng.standard_normal((4, 3)).astype(f32))
        return
    src, out = sys.argv[2], sys.argv[3]
    s, i, t = model(load(src, 0, "x"), load(src, 1, "w"))
    if "--perturb" in sys.argv:
        s = s.copy()
        s[0, 1] += f32(1e-3)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(s, "s").SerializeToString())
    np.save(os.path.join(out, "i.npy"), i)
    with open(os.path.join(out, "output_2.pb"), "wb") as f:
        f.write(numpy_helper.from_array(t, "t").SerializeToString())


main()
