"""lse_special_rows.py DIR: inputs of cuda-host-split-logsumexp.tcir at N=4
(input_<i>.pb): row 0 random, row 1 all -inf, row 2 random with one +inf
(late in the row: the running max jumps), row 3 random with one NaN; the
same rows for the f16 input and the log-softmax's."""
import os
import sys

import numpy as np
from onnx import numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(5)


def rows(dtype):
    x = rng.uniform(-8, 8, size=(4, 20000)).astype(dtype)
    x[1, :] = -np.inf
    x[2, 15000] = np.inf
    x[3, 7000] = np.nan
    return x


arrays = [("x", rows(np.float32)), ("t", rng.uniform(-1, 1, size=(4, 1)).astype(np.float32)),
          ("h", rows(np.float16)), ("x2", rows(np.float32))]
for i, (name, a) in enumerate(arrays):
    with open(os.path.join(out, "input_%d.pb" % i), "wb") as f:
        f.write(numpy_helper.from_array(a, name=name).SerializeToString())
