"""tc's gradients and loss curves against PyTorch autograd's (models/training/NAME.ref.npz).
   compare-reference.py grads REF.npz IR.tcir OUTDIR RTOL   (tc-run --output-dir of a step without optimizer)
   compare-reference.py curve REF.npz sgd|adamw LOG RTOL    (tc-run --train --log-every 1)"""
import os
import re
import sys

import numpy as np
from onnx import TensorProto, numpy_helper


def fail(msg):
    sys.exit(msg)


ref = np.load(sys.argv[2])
if sys.argv[1] == "grads":
    ir, out, rtol = open(sys.argv[3]).read(), sys.argv[4], float(sys.argv[5])
    keys = re.search(r'meta "tc.train.keys" = "([^"]*)"', ir).group(1).split("\\0A")
    grads = int(re.search(r'meta "tc.train" = "[^"]*grads=(\d+)', ir).group(1))

    def output(i):
        t = TensorProto()
        t.ParseFromString(open(os.path.join(out, "output_%d.pb" % i), "rb").read())
        return numpy_helper.to_array(t)
    loss = float(output(0))
    if not abs(loss - float(ref["loss"])) <= rtol * abs(float(ref["loss"])):
        fail("loss %r, PyTorch %r" % (loss, float(ref["loss"])))
    worst = 0.0
    for i in range(grads):
        g, r = output(1 + i), ref.get("grad:" + keys[i])
        if r is None:
            fail("%s: PyTorch has no gradient for it" % keys[i])
        if g.shape != r.shape:
            fail("%s: tc's gradient is %s, PyTorch's %s" % (keys[i], g.shape, r.shape))
        # Relative to the gradient's largest element, plus 1e-5 absolute: a
        # bias before a batch norm or a key's bias has a gradient of 0 (noise).
        err = float(np.max(np.abs(g - r))) / (rtol * float(np.max(np.abs(r))) + 1e-5)
        if not err <= 1:
            fail("%s: max error %.3g of the tolerance (rtol %g of its largest element + 1e-5)" % (keys[i], err, rtol))
        worst = max(worst, err)
    missing = sorted(k[5:] for k in ref.files if k.startswith("grad:") and k[5:] not in keys[:grads])
    if missing:
        fail("PyTorch trains %s, tc does not" % missing)
    print("loss and %d gradients match PyTorch (worst %.2f of the tolerance, rtol %g)" % (grads, worst, rtol))
else:
    curve, log, rtol = ref[sys.argv[3]], open(sys.argv[4]).read(), float(sys.argv[5])
    tc = np.array([float(m) for m in re.findall(r"^step \d+/\d+  loss (\S+)", log, re.M)])
    if tc.shape != curve.shape:
        fail("%d losses against PyTorch's %d" % (len(tc), len(curve)))
    rel = np.abs(tc - curve) / np.abs(curve)
    if not np.all(rel <= rtol):
        k = int(np.argmax(rel))
        fail("step %d: loss %r, PyTorch %r" % (k + 1, tc[k], curve[k]))
    print("%s: %d losses match PyTorch (worst %.1e, rtol %g)" % (sys.argv[3], len(tc), float(rel.max()), rtol))
