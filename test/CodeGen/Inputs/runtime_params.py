#!/usr/bin/env python3
"""runtime_params.py DIR K AXIS [N]: inputs of runtime-params.tcir in DIR
(input_<i>.pb, as tc-run --inputs reads them): x f32[N, 4, 5] of distinct
values, k and axis i64 scalars."""
import os, sys
import numpy as np
from onnx import numpy_helper

out, k, axis = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
n = int(sys.argv[4]) if len(sys.argv) > 4 else 2
os.makedirs(out, exist_ok=True)
x = (np.arange(n * 4 * 5, dtype=np.float32).reshape(n, 4, 5) + 1) * np.float32(0.5)
for i, a in enumerate([x, np.array(k, dtype=np.int64), np.array(axis, dtype=np.int64)]):
    with open(os.path.join(out, "input_%d.pb" % i), "wb") as f:
        f.write(numpy_helper.from_array(a).SerializeToString())
