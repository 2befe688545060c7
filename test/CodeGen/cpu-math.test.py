import subprocess, sys, os, warnings
warnings.simplefilter("ignore")
import numpy as np
from onnx import numpy_helper, TensorProto

tmp = sys.argv[1]
special = [-np.inf, -200, -104, -100, -88.5, -87.4, -87.3, -10, -1, -0.51, -0.49, -0.11, -0.09,
           -1e-3, -1e-30, -0.0, 0.0, 1e-30, 1e-3, 0.09, 0.11, 0.49, 0.51, 1, 10, 88.5, 88.8, 100,
           np.inf, np.nan, -2.5, -0.5, 0.5, 1.5, 2.5]  # ties: Round to even
x = np.concatenate([np.array(special, np.float32), np.linspace(-20, 20, 3992, dtype=np.float32)])
np.save(os.path.join(tmp, "x.npy"), x)
outs = {}
for name, args in (("ref", ["--target=ref", os.path.join(tmp, "m.tcbc")]),
                   ("cpu", [os.path.join(tmp, "m.tcx")])):
    d = os.path.join(tmp, name)
    subprocess.run(["tc-run"] + args + ["--input", "x=" + os.path.join(tmp, "x.npy"), "--output-dir", d],
                   check=True, stdout=subprocess.DEVNULL)
    outs[name] = []
    for i in range(9):
        t = TensorProto()
        t.ParseFromString(open(os.path.join(d, "output_%d.pb" % i), "rb").read())
        outs[name].append(numpy_helper.to_array(t))
bad = 0
for i, (r, c) in enumerate(zip(outs["ref"], outs["cpu"])):
    same_special = (np.isnan(r) == np.isnan(c)) & (np.isinf(r) == np.isinf(c))
    finite = np.isfinite(r) & np.isfinite(c)
    close = np.abs(r - c) <= 4e-7 + 2e-6 * np.abs(r)
    ok = same_special & (~finite | close) & ((finite) | (np.isnan(r)) | (r == c))
    for j in np.nonzero(~ok)[0][:5]:
        print("output %d x=%r: ref %r cpu %r" % (i, x[j], r[j], c[j]))
    bad += int((~ok).sum())
if bad:
    sys.exit("%d values differ" % bad)
print("%d outputs x %d values match" % (len(outs["ref"]), x.size))
