#!/usr/bin/env python3
"""CPU benchmark: every committed model compiled by tc (-O2, --target=cpu) and
run by tc-run, and the same ONNX model run by onnxruntime on the CPU, in ONE
run with the same threads and inputs: median latency of N iterations after
warm-up, the ratio onnxruntime/tc per model (> 1: tc is faster), the
geomean, and tc's compile time (import + opt + codegen).

    utils/bench-cpu.py [--bin build/bin] [--threads 2] [--iterations 20] [--markdown docs/cpu-bench.md]
"""
import argparse, json, math, os, subprocess, sys, tempfile, time

from committed_models import ROOT, committed_models, name_of


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def ort_median(model, data, threads, iterations, warmup):
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
    for _ in range(warmup):
        sess.run(None, feeds)
    ms = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        ms.append((time.perf_counter() - t0) * 1e3)
    ms.sort()
    return ms[len(ms) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--markdown", help="write the table into this file's generated section")
    args = ap.parse_args()
    tool = lambda t: os.path.join(args.bin, t)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in committed_models():
            name = name_of(model)
            base = os.path.join(tmp, name.replace("/", "_"))
            data = os.path.join(os.path.dirname(model), "test_data_set_0")
            t0 = time.perf_counter()
            sh([tool("tc-import"), model, "-o", base + ".tcbc"])
            sh([tool("tc-opt"), "-O2", base + ".tcbc", "-o", base + ".o2.tcbc"])
            sh([tool("tc-codegen"), "--target=cpu", base + ".o2.tcbc", "-o", base + ".tcx"])
            compile_s = time.perf_counter() - t0
            if not (model.endswith("model.onnx") and os.path.isdir(data)):
                # Batch 2 random inputs, the same for both runtimes.
                data = base + ".data"
                ir = sh([tool("tc-opt"), "--passes=verify", "-S", base + ".tcbc"]).stdout
                sig = ir[ir.index("func @main("):ir.index(") ->")]
                syms = sorted(set(w for w in sig.replace("[", ",").replace("]", ",").split(",")
                                  if w.isidentifier() and not w.startswith("%")))
                dims = sum((["--dim", "%s=2" % s] for s in syms if s not in ("f32", "i64", "i32", "f16")), [])
                sh([tool("tc-run"), "--target=ref", base + ".tcbc", "--random-inputs", "--seed", "1",
                    "--output-dir", data] + dims)
            rep = json.loads(sh([tool("tc-run"), base + ".tcx", "--inputs", data, "--compare", data,
                                 "--rtol", "1e-3", "--atol", "1e-5", "--threads", str(args.threads),
                                 "--iterations", str(args.iterations), "--warmup", str(args.warmup),
                                 "--report=json"]).stdout)
            tc_ms = rep["latency_ms"]["median"]
            ort_ms = ort_median(model, data, args.threads, args.iterations, args.warmup)
            steps = "%d / %d / %d / %d" % (rep["kernel_steps"], rep["library_steps"], rep["copy_steps"],
                                           rep["fallback_steps"])
            rows.append((name, compile_s, tc_ms, ort_ms, steps, rep["ok"]))
    lines = ["| model | tc compile (s) | tc median (ms) | onnxruntime median (ms) | ort/tc "
             "| tc steps: kernels / oneDNN / copies / reference | numerics |",
             "|---|---|---|---|---|---|---|"]
    for name, c, t, o, steps, ok in rows:
        lines.append("| %s | %.2f | %.3f | %.3f | %.2f | %s | %s |" % (name, c, t, o, o / t, steps,
                                                                       "ok" if ok else "MISMATCH"))
    geo = math.exp(sum(math.log(o / t) for _, _, t, o, _, _ in rows) / len(rows))
    lines.append("")
    lines.append("geomean onnxruntime/tc: **%.2f** (%d threads, median of %d after %d warm-up; mean compile %.2f s)" % (
        geo, args.threads, args.iterations, args.warmup, sum(r[1] for r in rows) / len(rows)))
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        doc = open(args.markdown).read()
        start, end = "<!-- bench-cpu begin -->", "<!-- bench-cpu end -->"
        i, j = doc.index(start) + len(start), doc.index(end)
        open(args.markdown, "w").write(doc[:i] + "\n" + text + "\n" + doc[j:])
    return 0 if all(r[5] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
