"""check_collectives.py DIR RANKS: the outputs tc-run --ranks RANKS wrote for
Inputs/collectives.tcir (x [RANKS, 4], rank r's row r) against numpy."""
import os, sys
import numpy as np
import onnx
from onnx import numpy_helper

d, n = sys.argv[1], int(sys.argv[2])
load = lambda f: numpy_helper.to_array(onnx.load_tensor(os.path.join(d, f)))
x = load("input_0.pb")
want = [x, x.sum(0, keepdims=True), x.sum(0, keepdims=True), x.max(0, keepdims=True)]
for i, w in enumerate(want):
    got = load("output_%d.pb" % i)
    ok = got.shape == w.shape and np.allclose(got, w, rtol=1e-6, atol=1e-6)
    print("output %d %s" % (i, "ok" if ok else "MISMATCH %s vs %s" % (got.tolist(), w.tolist())))
