"""Runs ONNX backend node tests (libonnx-testdata layout) through tc-import
and tc-run --target=ref, for test cases whose graph inputs are all run-time
data (no freezing; see run_nn_node_tests.py for the ops that need it).

    run_node_tests.py NODE_DIR [EXPECTED_FAILURE=IMPORT_ERROR_PIECE ...]

Every test in NODE_DIR must pass, except those named on the command line,
which must fail at import with an error containing the given piece. Prints
one line per failure, then "node tests: P passed, X expected failures, F
failed"; exits 1 on F > 0.
"""
import os
import subprocess
import sys
import tempfile


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return r.returncode, (r.stdout + r.stderr).strip()


def check(test_dir, expected, tmp):
    """None when the test behaves as expected, else what went wrong."""
    name = os.path.basename(test_dir)
    ir = os.path.join(tmp, name + ".tcbc")
    rc, out = run(["tc-import", os.path.join(test_dir, "model.onnx"), "-o", ir])
    if name in expected:
        if rc == 0:
            return "imports, but is listed as an expected failure"
        return None if expected[name] in out else "fails differently: " + out
    if rc != 0:
        return "import: " + out
    for ds in sorted(d for d in os.listdir(test_dir) if d.startswith("test_data_set_")):
        d = os.path.join(test_dir, ds)
        rc, out = run(["tc-run", "--target=ref", ir, "--inputs", d, "--compare", d,
                       "--rtol", "1e-3", "--atol", "1e-6"])
        if rc != 0:
            return ds + ": " + out
    return None


def main():
    node_dir = sys.argv[1]
    expected = dict(a.split("=", 1) for a in sys.argv[2:])
    passed = xfail = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in sorted(os.listdir(node_dir)):
            err = check(os.path.join(node_dir, name), expected, tmp)
            if err:
                failed += 1
                print(f"FAIL {name}: {err}")
            elif name in expected:
                xfail += 1
            else:
                passed += 1
    print(f"node tests: {passed} passed, {xfail} expected failures, {failed} failed")
    sys.exit(1 if failed else 0)


main()
