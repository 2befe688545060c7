#!/usr/bin/env python3
"""CPU benchmark: every committed model, plus full-size torchvision resnet50
and mobilenet_v2 (random weights, batch 1), compiled by tc (-O2,
--target=cpu) and run by tc-run, and the same ONNX model run by onnxruntime
on the CPU, in ONE run with the same threads and inputs: median latency of N
iterations after warm-up, the ratio onnxruntime/tc per model (> 1: tc is
faster), the geomean, and tc's compile time (import + opt + codegen).

    utils/bench-cpu.py [--bin build/bin] [--baseline-bin DIR] [--threads 2] [--iterations 20]
        [--rounds 3] [--full-size DIR | --no-full-size] [--models a,b] [--markdown docs/cpu-bench.md]

--baseline-bin: another tc's binaries (e.g. main's build/bin, copied aside)
compiled and run on the same models and inputs, alternating with tc and
onnxruntime in every round, so that before and after share the machine's
load; its column is the baseline's median. --rounds: each runtime's median
is the median of its per-round medians. The full-size models are exported
once into --full-size DIR (default build/bench-cpu-models) by
models/export_torch_models.py with --torch-python (needs torch and
torchvision); their test data is PyTorch's output.
"""
import argparse, json, math, os, statistics, subprocess, sys, tempfile, time

from committed_models import ROOT, committed_models, name_of

FULL_SIZE = ["resnet50", "mobilenet_v2"]


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def ort_session(model, data, threads):
    import onnx, onnxruntime as ort
    from onnx import numpy_helper
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    feeds = {}
    for i, inp in enumerate(sess.get_inputs()):
        t = onnx.TensorProto()
        t.ParseFromString(open(os.path.join(data, "input_%d.pb" % i), "rb").read())
        feeds[inp.name] = numpy_helper.to_array(t)
    return sess, feeds


def ort_median(session, iterations, warmup):
    sess, feeds = session
    for _ in range(warmup):
        sess.run(None, feeds)
    ms = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        ms.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ms)


def full_size_models(args):
    """DIR/<name>/model.onnx for the full-size CNNs, exported when missing."""
    missing = [n for n in FULL_SIZE if not os.path.exists(os.path.join(args.full_size, n, "model.onnx"))]
    if missing:
        if not os.path.exists(args.torch_python):
            sys.exit("bench-cpu: error: exporting %s needs torch: no %s (make it with `python3 -m venv "
                     "/work/venv && /work/venv/bin/pip install torch torchvision onnx onnxscript`, "
                     "or pass --torch-python, or --no-full-size)" % (",".join(missing), args.torch_python))
        print("exporting %s into %s" % (",".join(missing), args.full_size), file=sys.stderr)
        sh([args.torch_python, os.path.join(ROOT, "models", "export_torch_models.py"), args.full_size,
            ",".join(missing), "--batch", "1", "--exporters", "torchscript", "--layout", "dir"],
           env=dict(os.environ, TORCH_THREADS=str(args.threads)))
    return [(n, os.path.join(args.full_size, n, "model.onnx")) for n in FULL_SIZE]


def compile_tc(bindir, model, base):
    tool = lambda t: os.path.join(bindir, t)
    t0 = time.perf_counter()
    sh([tool("tc-import"), model, "-o", base + ".tcbc"])
    sh([tool("tc-opt"), "-O2", base + ".tcbc", "-o", base + ".o2.tcbc"])
    sh([tool("tc-codegen"), "--target=cpu", base + ".o2.tcbc", "-o", base + ".tcx"])
    return time.perf_counter() - t0


def test_data(bindir, model, base):
    """The model's test data, or batch-2 random inputs (the same for every runtime)."""
    data = os.path.join(os.path.dirname(model), "test_data_set_0")
    if model.endswith("model.onnx") and os.path.isdir(data):
        return data
    tool = lambda t: os.path.join(bindir, t)
    data = base + ".data"
    ir = sh([tool("tc-opt"), "--passes=verify", "-S", base + ".tcbc"]).stdout
    sig = ir[ir.index("func @main("):ir.index(") ->")]
    syms = sorted(set(w for w in sig.replace("[", ",").replace("]", ",").split(",")
                      if w.isidentifier() and not w.startswith("%")))
    dims = sum((["--dim", "%s=2" % s] for s in syms if s not in ("f32", "i64", "i32", "f16")), [])
    sh([tool("tc-run"), "--target=ref", base + ".tcbc", "--random-inputs", "--seed", "1",
        "--output-dir", data] + dims)
    return data


def tc_run(bindir, tcx, data, args):
    return json.loads(sh([os.path.join(bindir, "tc-run"), tcx, "--inputs", data, "--compare", data,
                          "--rtol", "1e-3", "--atol", "1e-4", "--threads", str(args.threads),
                          "--iterations", str(args.iterations), "--warmup", str(args.warmup),
                          "--report=json"]).stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--baseline-bin", help="another tc's bin folder, run beside (e.g. main's)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=1, help="alternating rounds; median of their medians")
    ap.add_argument("--full-size", default=os.path.join(ROOT, "build", "bench-cpu-models"),
                    help="where the full-size CNNs are (exported when missing)")
    ap.add_argument("--no-full-size", action="store_true", help="committed models only")
    ap.add_argument("--torch-python", default="/work/venv/bin/python", help="a python with torch, torchvision")
    ap.add_argument("--models", help="only these (comma-separated names)")
    ap.add_argument("--markdown", help="write the table into this file's generated section")
    args = ap.parse_args()
    models = [(name_of(m), m) for m in committed_models()]
    if not args.no_full_size:
        models += full_size_models(args)
    if args.models:
        models = [(n, m) for n, m in models if n in args.models.split(",")]
    bins = {"tc": args.bin}
    if args.baseline_bin:
        bins["base"] = args.baseline_bin
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, model in models:
            base = os.path.join(tmp, name.replace("/", "_"))
            compile_s = {k: compile_tc(b, model, base + "." + k) for k, b in bins.items()}
            data = test_data(args.bin, model, base + ".tc")
            session = ort_session(model, data, args.threads)
            ms = {k: [] for k in list(bins) + ["ort"]}
            ok = True
            for _ in range(args.rounds):
                for k, b in bins.items():
                    rep = tc_run(b, base + "." + k + ".tcx", data, args)
                    ms[k].append(rep["latency_ms"]["median"])
                    ok &= rep["ok"]
                    if k == "tc":
                        steps = "%d / %d / %d / %d" % (rep["kernel_steps"], rep["library_steps"],
                                                       rep["copy_steps"], rep["fallback_steps"])
                ms["ort"].append(ort_median(session, args.iterations, args.warmup))
            med = {k: statistics.median(v) for k, v in ms.items()}
            rows.append(dict(name=name, compile=compile_s["tc"], ms=med, steps=steps, ok=ok))
            print("%s: %s" % (name, ", ".join("%s %.3f ms" % kv for kv in med.items())), file=sys.stderr)
    has_base = "base" in bins
    lines = ["| model | tc compile (s) | tc median (ms) |" + (" baseline tc (ms) |" if has_base else "") +
             " onnxruntime median (ms) | ort/tc |" + (" ort/baseline |" if has_base else "") +
             " tc steps: kernels / oneDNN / copies / reference | numerics |",
             "|---|---|---|" + ("---|" if has_base else "") + "---|---|" + ("---|" if has_base else "") + "---|---|"]
    for r in rows:
        t, o = r["ms"]["tc"], r["ms"]["ort"]
        lines.append("| %s | %.2f | %.3f |" % (r["name"], r["compile"], t) +
                     (" %.3f |" % r["ms"]["base"] if has_base else "") + " %.3f | %.2f |" % (o, o / t) +
                     (" %.2f |" % (o / r["ms"]["base"]) if has_base else "") +
                     " %s | %s |" % (r["steps"], "ok" if r["ok"] else "MISMATCH"))
    geo = lambda k: math.exp(sum(math.log(r["ms"]["ort"] / r["ms"][k]) for r in rows) / len(rows))
    lines.append("")
    lines.append("geomean onnxruntime/tc: **%.2f**%s (%d threads, median of %d rounds of %d iterations after %d "
                 "warm-up; mean compile %.2f s)" % (
                     geo("tc"), " (baseline %.2f)" % geo("base") if has_base else "", args.threads, args.rounds,
                     args.iterations, args.warmup, sum(r["compile"] for r in rows) / len(rows)))
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        doc = open(args.markdown).read()
        start, end = "<!-- bench-cpu begin -->", "<!-- bench-cpu end -->"
        i, j = doc.index(start) + len(start), doc.index(end)
        open(args.markdown, "w").write(doc[:i] + "\n" + text + "\n" + doc[j:])
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
