#!/usr/bin/env python3
"""Checks of dropout masks written by tc-run --output-dir (dropout.test).

    check-dropout.py inputs DIR SEED OFFSET   # DIR/input_{0,1,2}.pb: ones f32[512,1024], seed, offset
    check-dropout.py stats DIR RATIO...       # per output_i: its fraction of zeros against RATIO i
                                              # (within 0.005), kept values == f32(1 / (1 - RATIO))
    check-dropout.py masks DIR:I DIR:J        # whether two outputs drop the same elements
    check-dropout.py state OPT.safetensors    # its rng.seed and rng.offset
    check-dropout.py set-offset OPT.safetensors K   # rng.offset := K, in place
    check-dropout.py falls LOG                # the first and last loss of a tc-run --train log:
                                              # "falls" when the last is below half the first
"""
import json
import re
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def load(d, i):
    return numpy_helper.to_array(onnx.load_tensor(os.path.join(d, "output_%d.pb" % i)))


def save(d, i, a):
    with open(os.path.join(d, "input_%d.pb" % i), "wb") as f:
        f.write(numpy_helper.from_array(a).SerializeToString())


cmd = sys.argv[1]
if cmd == "inputs":
    d = sys.argv[2]
    os.makedirs(d, exist_ok=True)
    save(d, 0, np.ones((512, 1024), np.float32))
    save(d, 1, np.array(int(sys.argv[3]), np.int64))
    save(d, 2, np.array(int(sys.argv[4]), np.int64))
elif cmd == "stats":
    d = sys.argv[2]
    for i, r in enumerate(sys.argv[3:]):
        p = float(r)
        y = load(d, i)
        zeros = float(np.mean(y == 0))
        kept = np.unique(y[y != 0])
        want = np.float32(np.float32(1) / (np.float32(1) - np.float32(p)))
        scaled = kept.size == 1 and kept[0] == want
        print("output %d: %d elements, zeros %.4f (ratio %s: %s), kept values %s (%s)" %
              (i, y.size, zeros, r, "ok" if abs(zeros - p) < 0.005 else "FAR",
               kept[:3].tolist(), "scaled" if scaled else "NOT SCALED"))
elif cmd == "masks":
    (da, ia), (db, ib) = (a.rsplit(":", 1) for a in sys.argv[2:4])
    a, b = load(da, int(ia)) == 0, load(db, int(ib)) == 0
    n = int(np.sum(a != b))
    print("masks equal" if n == 0 else "masks differ in %.3f of the elements" % (n / a.size))
elif cmd in ("state", "set-offset"):
    path = sys.argv[2]
    raw = bytearray(open(path, "rb").read())
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    at = lambda k: 8 + n + header[k]["data_offsets"][0]
    if cmd == "state":
        for k in ("rng.seed", "rng.offset"):
            print(k, header[k]["dtype"], int.from_bytes(raw[at(k):at(k) + 8], "little", signed=True))
    else:
        raw[at("rng.offset"):at("rng.offset") + 8] = int(sys.argv[3]).to_bytes(8, "little", signed=True)
        open(path, "wb").write(raw)
elif cmd == "falls":
    losses = [float(x) for x in re.findall(r"^step \d+/\d+  loss (\S+)", open(sys.argv[2]).read(), re.M)]
    print("loss %s from %.3f to %.3f" % ("falls" if losses[-1] < 0.5 * losses[0] else "does NOT fall",
                                         losses[0], losses[-1]))
