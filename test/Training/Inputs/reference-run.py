"""One model of pytorch-reference.test: reference-run.py MODELS OUTDIR NAME "EXTRA tc-opt FLAGS"."""
import os
import shlex
import subprocess
import sys

models, out, name, extra = sys.argv[1], sys.argv[2], sys.argv[3], shlex.split(sys.argv[4])
here = os.path.dirname(os.path.abspath(__file__))
compare = [sys.executable, os.path.join(here, "compare-reference.py")]
ref, data = os.path.join(models, name + ".ref.npz"), os.path.join(models, name)
tcbc, grad, outdir = (os.path.join(out, name + s) for s in (".tcbc", ".grad.tcir", ".outputs"))


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        sys.exit("%s: %s" % (" ".join(cmd), r.stderr.strip()))
    return r.stdout


run(["tc-import", os.path.join(models, name + ".onnx"), "-o", tcbc])
run(["tc-opt", "--train", "--optimizer=none", *extra, "-O0", tcbc, "-S", "-o", grad])
run(["tc-run", "--target=ref", grad, "--inputs", os.path.join(data, "test_data_set_0"), "--output-dir", outdir])
print(name + ": " + run(compare + ["grads", ref, grad, outdir, "1e-4"]), end="")
for opt in ("sgd:lr=0.05,momentum=0.9", "adamw:lr=1e-3,weight-decay=0.01"):
    kind = opt.split(":")[0]
    step, tcx, log = (os.path.join(out, "%s.%s%s" % (name, kind, s)) for s in (".tcbc", ".tcx", ".log"))
    run(["tc-opt", "--train", "--optimizer=" + opt, *extra, "-O2", tcbc, "-o", step])
    run(["tc-codegen", "--target=cpu", step, "-o", tcx])
    with open(log, "w") as f:
        f.write(run(["tc-run", tcx, "--train", "20", "--log-every", "1", "--data", data]))
    print(name + " " + run(compare + ["curve", ref, kind, log, "1e-4"]), end="")
