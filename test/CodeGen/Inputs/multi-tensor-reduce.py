"""multi-tensor-reduce.py DIR: full sums of uneven tensors (cuda-multi-tensor-
reduce.test) as DIR/sums.tcir, and three input sets: DIR/finite, DIR/inf (one
element +inf near the end of %a, in its last block's chunk) and DIR/nan (one
NaN in the middle of %c). The f16 sums (a Cast, then ReduceSum: the AMP
overflow check's sum of a half gradient) have 140000, 40000 and 16384
elements (a multiple of 8: one multi-tensor launch; 16384 is the shortest
`split` row) and 90001 (not: its own `split` launch); the f32 ones 140000
and 90000 (a second run)."""
import os
import sys

import numpy as np
from onnx import numpy_helper

out = sys.argv[1]
inputs = [("a", "f16", (350, 400)), ("c", "f16", (16384,)), ("d", "f16", (200, 200)),
          ("o", "f16", (90001,)), ("b", "f32", (70000, 2)), ("e", "f32", (300, 300))]
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "sums.tcir"), "w") as f:
    sig = ", ".join("%%%s: %s[%s]" % (n, t, ",".join(map(str, s))) for n, t, s in inputs)
    f.write("module @sums {\n  func @main(%s) -> (%s) {\n" % (sig, ", ".join(["f32[]"] * len(inputs))))
    for n, t, s in inputs:
        dims = ",".join(map(str, s))
        x = "%" + n
        if t == "f16":
            f.write("    %%%s32 = Cast(%%%s) {to = f32} : f32[%s]\n" % (n, n, dims))
            x = "%%%s32" % n
        f.write("    %%%s_sum = ReduceSum(%s) {keepdims = 0} : f32[]\n" % (n, x))
    f.write("    return %s\n  }\n}\n" % ", ".join("%%%s_sum" % n for n, _, _ in inputs))
rng = np.random.default_rng(11)
data = {n: rng.uniform(-1, 1, size=s).astype(np.float16 if t == "f16" else np.float32)
        for n, t, s in inputs}
for case in ["finite", "inf", "nan"]:
    d = os.path.join(out, case)
    os.makedirs(d, exist_ok=True)
    for i, (n, _, _) in enumerate(inputs):
        x = data[n].copy()
        if case == "inf" and n == "a":
            x.reshape(-1)[-3] = np.inf
        if case == "nan" and n == "c":
            x.reshape(-1)[x.size // 2] = np.nan
        open(os.path.join(d, "input_%d.pb" % i), "wb").write(
            numpy_helper.from_array(x, name=n).SerializeToString())
