#!/usr/bin/env python3
"""check_grown_cache.py DIR POSITION END CAPACITY: a fixed-capacity decode's
--output-dir (tc-run --decode: the first step's inputs, the last step's
outputs) after a bucket crossing: every cache (inputs 2.., outputs 1..) now
holds CAPACITY slots, slots 0..POSITION-1 are the first step's (carried over
the crossing), and slots END.. are zero (the grown tail, never written)."""
import sys
import numpy as np
import onnx
from onnx import numpy_helper

d, pos, end, cap = sys.argv[1], *map(int, sys.argv[2:])
load = lambda name: numpy_helper.to_array(onnx.load_tensor(f"{d}/{name}.pb"))
bad = 0
for i in range(1, 100):
    try:
        out = load(f"output_{i}")
    except FileNotFoundError:
        break
    first = load(f"input_{i + 1}")
    ok = (out.shape[2] == cap and np.array_equal(out[:, :, :pos], first[:, :, :pos])
          and not out[:, :, end:].any())
    bad += not ok
    print(f"cache {i}: {list(first.shape)} -> {list(out.shape)} {'ok' if ok else 'WRONG'}")
print(f"{i - 1} caches, {bad} wrong")
sys.exit(1 if bad else 0)
