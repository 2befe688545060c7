"""For c-api-train.test:
    c_api_train.py batches DIR OUT.bin   DIR's test_data_set_* (input_N.pb, in name order) as
                                         raw bytes, batch after batch (train_model.c reads them)
    c_api_train.py regression DIR        3 batches of x f32[8,4] and target tanh(0.3 x) as
                                         DIR/test_data_set_*/input_N.pb
    c_api_train.py sums LOG CKPT         LOG's 'state KEY TYPE sum S' lines against the tensors
                                         of CKPT and its .optimizer.safetensors"""
import glob
import os
import re
import sys

import numpy as np
from onnx import TensorProto, numpy_helper

if sys.argv[1] == "batches":
    with open(sys.argv[3], "wb") as out:
        for d in sorted(glob.glob(os.path.join(sys.argv[2], "test_data_set_*"))):
            for pb in sorted(glob.glob(os.path.join(d, "input_*.pb")), key=lambda p: int(p[p.rindex("_") + 1:-3])):
                t = TensorProto()
                t.ParseFromString(open(pb, "rb").read())
                out.write(np.ascontiguousarray(numpy_helper.to_array(t)).tobytes())
elif sys.argv[1] == "regression":
    rng = np.random.default_rng(0)
    for b in range(3):
        d = os.path.join(sys.argv[2], "test_data_set_%d" % b)
        os.makedirs(d, exist_ok=True)
        x = rng.standard_normal((8, 4)).astype(np.float32)
        for i, (name, arr) in enumerate([("x", x), ("target", np.tanh(0.3 * x).astype(np.float32))]):
            open(os.path.join(d, "input_%d.pb" % i), "wb").write(numpy_helper.from_array(arr, name).SerializeToString())
elif sys.argv[1] == "sums":
    from safetensors.numpy import load_file
    ckpt = sys.argv[3]
    tensors = dict(load_file(ckpt), **load_file(ckpt.replace(".safetensors", ".optimizer.safetensors")))
    seen = 0
    for m in re.finditer(r"^state (\S+) (\S+)(?: sum (\S+))?$", open(sys.argv[2]).read(), re.M):
        key, typ, total = m.group(1), m.group(2), m.group(3)
        t = tensors.pop(key, None)
        if t is None:
            sys.exit("%s: not in the checkpoint" % key)
        shape = "[%s]" % ",".join(str(d) for d in t.shape)
        if typ != "f32" + shape or t.dtype != np.float32:
            sys.exit("%s: %s, the checkpoint's is %s%s" % (key, typ, t.dtype, shape))
        want = float(t.astype(np.float64).sum())
        if abs(float(total) - want) > 1e-5 * max(1.0, abs(want)):
            sys.exit("%s: sum %s, the checkpoint's %r" % (key, total, want))
        seen += 1
    if tensors:
        sys.exit("not printed: %s" % sorted(tensors))
    print("%d state tensors match" % seen)
