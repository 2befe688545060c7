"""Runs ONNX's backend node tests of the normalization, pooling, reduction and
resampling ops (libonnx-testdata) through tc-import and tc-run --target=ref.

    run_nn_node_tests.py [-v] NODE_DIR

tc needs Reduce* axes, Pad pads, TopK k, CumSum axis and Resize
scales/sizes/roi at compile time; many node tests feed them as graph inputs.
Those inputs are frozen into initializers from the test data set first (the
model then says what tc requires of a real one). Every test whose name
matches PATTERNS must pass, except those in EXPECTED_FAILURES, which must fail
at import with the listed message. Prints one line per failure, then
"nn node tests: P passed, X expected failures, F failed"; exits 1 on F > 0.
"""
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile

import onnx

PATTERNS = [
    r"test_convtranspose.*", r"test_batchnorm.*", r"test_maxpool.*", r"test_averagepool.*",
    r"test_globalaveragepool.*", r"test_globalmaxpool.*", r"test_lppool.*",
    r"test_layer_normalization_\w+(?<!_expanded)", r"test_instancenorm.*",
    r"test_group_normalization.*(?<!_expanded)", r"test_l[p12]normalization.*", r"test_mvn",
    r"test_lrn.*", r"test_reduce_.*", r"test_arg(max|min)_.*", r"test_hardmax.*",
    r"test_cumsum.*", r"test_top_k.*", r"test_resize.*", r"test_upsample.*",
    r"test_(constant|edge|reflect|wrap)_pad", r"test_einsum.*",
]

# Test -> a piece of the import error it must fail with, and why.
EXPECTED_FAILURES = {}

# Tests whose expected values are rounded by hand: the ONNX backend's own
# tolerance (rtol 1e-3) instead of tc-run's.
LOOSE = {"test_averagepool_2d_ceil_last_window_starts_on_pad"}

# Ops whose inputs after the first are compile-time values in tc.
FREEZE_OPS = {
    "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
    "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "Pad", "TopK", "CumSum", "Resize",
    "Upsample",
}


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return r.returncode, (r.stdout + r.stderr).strip()


def prepare(test_dir, data_set, out_dir):
    """Writes model.onnx (frozen) and a data set with the remaining inputs."""
    model = onnx.load(os.path.join(test_dir, "model.onnx"))
    g = model.graph
    inits = {t.name for t in g.initializer}
    graph_inputs = [i.name for i in g.input if i.name not in inits]
    freeze = set()
    for n in g.node:
        if n.op_type in FREEZE_OPS:
            freeze.update(name for name in list(n.input)[1:] if name in graph_inputs)
    src = os.path.join(test_dir, data_set)
    dst = os.path.join(out_dir, data_set)
    os.makedirs(dst)
    kept = 0
    for idx, name in enumerate(graph_inputs):
        pb = os.path.join(src, f"input_{idx}.pb")
        if name in freeze:
            t = onnx.TensorProto()
            with open(pb, "rb") as f:
                t.ParseFromString(f.read())
            t.name = name
            g.initializer.append(t)
        else:
            shutil.copy(pb, os.path.join(dst, f"input_{kept}.pb"))
            kept += 1
    for i in [i for i in g.input if i.name in freeze]:
        g.input.remove(i)
    for f in os.listdir(src):
        if f.startswith("output_"):
            shutil.copy(os.path.join(src, f), dst)
    path = os.path.join(out_dir, "model.onnx")
    onnx.save(model, path)
    return path, dst


def run_test(test_dir, tmp):
    name = os.path.basename(test_dir)
    work = os.path.join(tmp, name)
    sets = sorted(d for d in os.listdir(test_dir) if d.startswith("test_data_set"))
    for ds in sets:
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        model, data = prepare(test_dir, ds, work)
        ir = os.path.join(work, "m.tcbc")
        rc, out = run(["tc-import", model, "-o", ir])
        if rc != 0:
            return name, "import", out
        tol = ["--rtol", "1e-3"] if name in LOOSE else []
        rc, out = run(["tc-run", "--target=ref", ir, "--inputs", data, "--compare", data] + tol)
        if rc != 0:
            return name, "run", f"{ds}: {out}"
    return name, "pass", ""


def main():
    verbose = sys.argv[1] == "-v"
    root = sys.argv[-1]
    if not os.path.isdir(root):
        sys.exit(f"{root}: missing (install libonnx-testdata: utils/install-deps.sh)")
    pattern = re.compile("|".join(f"(?:{p})" for p in PATTERNS) + "$")
    tests = [os.path.join(root, t) for t in sorted(os.listdir(root)) if pattern.match(t)]
    passed = xfailed = failed = 0
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        for name, status, detail in pool.map(lambda t: run_test(t, tmp), tests):
            want = EXPECTED_FAILURES.get(name)
            if want is not None:
                if status == "import" and want in detail:
                    xfailed += 1
                    continue
                failed += 1
                print(f"FAIL {name}: expected an import error with '{want}', got {status}: "
                      f"{detail}")
            elif status == "pass":
                passed += 1
                if verbose:
                    print(f"PASS {name}")
            else:
                failed += 1
                print(f"FAIL {name} ({status}): {detail}")
    print(f"nn node tests: {passed} passed, {xfailed} expected failures, {failed} failed")
    sys.exit(1 if failed else 0)


main()
