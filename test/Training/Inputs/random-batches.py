"""Writes OUT/test_data_set_0..N-1, each NAME.npy per input: uniform [-1, 1)
f32 data of the given shapes (tc-run --train --data OUT).

    random-batches.py OUT N x=2,2,3,3 target=2,3,2,2
"""
import os
import sys

import numpy as np

out, n = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(7)
for b in range(n):
    d = os.path.join(out, "test_data_set_%d" % b)
    os.makedirs(d, exist_ok=True)
    for spec in sys.argv[3:]:
        name, shape = spec.split("=")
        size = tuple(int(s) for s in shape.split(","))
        np.save(os.path.join(d, name + ".npy"), rng.uniform(-1, 1, size=size).astype(np.float32))
