"""tc's fp16 gradients (tc-opt --train --optimizer=none --precision fp16
--loss-scale 1024, on the reference executor) against amp-refs.py's PyTorch
fp32 and CPU autocast ones: per parameter, the largest error relative to the
gradient's largest element, tc's beside autocast's, worst ratio first, and the
worst parameter's most-off elements. tc-import/tc-opt/tc-run on PATH.

    python3 utils/numerics/amp-compare.py OUTDIR NAME [tc-opt flags: -O0, --freeze RE, ...]"""
import os, re, subprocess, sys, numpy as np
from onnx import TensorProto, numpy_helper
d, name, flags = sys.argv[1], sys.argv[2], sys.argv[3:]
ref = np.load(os.path.join(d, name + ".ref.npz"))
t = os.path.join(d, "out-" + name); os.makedirs(t, exist_ok=True)
run = lambda c: subprocess.run(c, check=True, capture_output=True, text=True).stdout
tcbc = os.path.join(t, "in.tcbc")
if not os.path.exists(tcbc):
    run(["tc-import", os.path.join(d, name + ".onnx"), "-o", tcbc])
tag = re.sub(r"[^a-z0-9]+", "_", "".join(flags))[:40]
ir = os.path.join(t, tag + ".tcir")
run(["tc-opt", "--train", "--optimizer=none", "--precision", "fp16", "--loss-scale", "1024", *flags, tcbc, "-S", "-o", ir])
outd = os.path.join(t, tag + ".out")
run(["tc-run", "--target=ref", ir, "--inputs", os.path.join(d, name, "test_data_set_0"), "--output-dir", outd])
txt = open(ir).read()
keys = re.search(r'meta "tc.train.keys" = "([^"]*)"', txt).group(1).split("\\0A")
grads = int(re.search(r'meta "tc.train" = "[^"]*grads=(\d+)', txt).group(1))
def out(i):
    p = TensorProto(); p.ParseFromString(open(os.path.join(outd, "output_%d.pb" % i), "rb").read()); return numpy_helper.to_array(p)
print("loss tc %.6f fp32 %.6f torch-amp %.6f" % (float(out(0)), float(ref["loss"]), float(ref["amploss"])))
rows = []
for i in range(grads):
    k = keys[i]; r = ref["grad:" + k]; a = ref["amp:" + k]; g = out(1 + i).astype(np.float64) / 1024.0
    if g.shape != r.shape: print("shape", k, g.shape, r.shape); continue
    scale = max(float(np.abs(r).max()), 1e-30)
    e_tc = float(np.abs(g - r).max()) / scale; e_pt = float(np.abs(a - r).max()) / scale
    rows.append((e_tc, e_pt, k, scale))
rows.sort(key=lambda x: -x[0] / max(x[1], 1e-4))
print("worst tc/torch-amp ratios (err rel to max|ref|):")
for e_tc, e_pt, k, sc in rows[:14]:
    print("  %-60s tc %.2e  torch-amp %.2e  max|g| %.2e" % (k, e_tc, e_pt, sc))
print("median tc %.2e torch %.2e" % (np.median([r[0] for r in rows]), np.median([r[1] for r in rows])))
k = rows[0][2]; i = keys.index(k)
g = out(1 + i).astype(np.float64).ravel() / 1024.0; r = ref["grad:" + k].ravel(); a = ref["amp:" + k].ravel()
o = np.argsort(-np.abs(g - r))[:6]
for j in o: print("   elem %d ref %.4e torch-amp %.4e tc %.4e" % (j, r[j], a[j], g[j]))
