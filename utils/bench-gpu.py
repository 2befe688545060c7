#!/usr/bin/env python3
"""GPU benchmark, ONE command on the GPU machine: the suite of
models/manifest.json (resnet50, mobilenet_v2, bert_base, vit_b_16, gpt2, random
weights, seed 0) exported to ONNX (dynamo, opset 20, symbolic batch), compiled
ONCE each by tc at fp16 (`tc-opt -O2 --target=cuda --precision fp16`,
`tc-codegen --target=cuda`), then per batch size: tc's outputs checked against
PyTorch's fp32 outputs, and tc timed against PyTorch eager, torch.compile and
torch.compile(mode="reduce-overhead"), AMP fp16, in this one process.

    source .devkit/env.sh && python3 utils/bench-gpu.py --bin .devkit/bin --out $OUT \
        [--models resnet50,...] [--batches 32,1] [--modes eager,inductor,inductor-cg] \
        [--markdown docs/cuda-bench.md]

Batch sizes and timing follow ../shared/bench/torch_baseline.py: B images, or
max(1, B // 4) sequences of 128 tokens; median of 50 runs timed with CUDA
events after 5 warm-ups; peak memory = max_memory_allocated (PyTorch) and the
runtime's own device allocations (tc). tc is timed by `tc-run --iterations`
(CUDA events around each run of the plan, inputs already on the device).
A model that fails (export, compile, run, numerics) fails alone, with why.

`--precision fp32` runs the same comparison in fp32: tc compiled without
`--precision` (f32 kernels, TF32 convolutions as PyTorch's cuDNN default)
against PyTorch without autocast (cuDNN TF32 on, matmul TF32 off: its
defaults); the bound is 2e-2 or 1.5x PyTorch's own error with those
defaults against TF32 off (torch_amp_err holds it in such rows).

`--baseline-bin DIR` compiles and times a second tc build beside `--bin` (a
refactor's before/after, same process, same inputs): each is timed twice,
alternating, the lower median kept; rows gain tc_base_ms and base/tc, and the
summary the geomean and the worst model of base/tc. `--tc-opt-args=FLAGS` and
`--baseline-tc-opt-args=FLAGS` add tc-opt flags to either compile, so one build
A/Bs an optimizer switch (`--bin B --baseline-bin B --tc-opt-args=--conv-gemm=always
--baseline-tc-opt-args=--conv-gemm=never`).

`--torch-only` times only PyTorch, for one model on an input of a given
shape, and prints one JSON object: tc-bench's PyTorch baseline
(lib/Bench/TorchBaseline.cpp) on the same models and batch as tc's rows:

    python3 utils/bench-gpu.py --torch-only --models resnet50 --input-shape 32,3,224,224 \
        --input-dtype f32 --precision amp --modes eager,inductor

`--export-for-bench DIR` writes the models for `tc-bench --models-dir DIR`
(docs/bench.md): DIR/NAME/model.onnx exported as above, and one
DIR/NAME/test_data_set_N per --batches size with PyTorch's fp32 outputs
(computed on the CPU, no TF32): tc-bench's reference for full-size models,
where the exact reference executor would take minutes.

    python3 utils/bench-gpu.py --export-for-bench /tmp/bench-models \
        --models resnet50,mobilenet_v2 --batches 32,1,8
(`--models zoo-vision`, `zoo-text`, `zoo-generative`: a zoo suite of
models/zoo_models.py, for `tc-bench --suite zoo-vision` etc.)
"""
import argparse, json, math, os, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "models"))
SEQ = 128
# fp16 outputs vs PyTorch's fp32: max |tc - torch| over max |torch|, at most
# 2e-2 or 1.5x PyTorch's own AMP error on the same inputs (calibrated
# BatchNorms make resnet50's logits sensitive: AMP itself is 3e-2 off).
TOLERANCE = 2e-2


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# Token models and their vocabulary size (random token ids stay below it).
VOCAB = {"bert_tiny": 1000, "gpt2_tiny": 1000}


def zoo_recipe(name):
    """The model's models/zoo_models.py recipe (input kind, shape, vocabulary), or None."""
    import zoo_models
    return zoo_models.ZOO.get(name)


def model_names(arg):
    """--models: names, or zoo-vision / zoo-text / zoo-generative for a zoo suite's models."""
    out = []
    for n in arg.split(","):
        if n.startswith("zoo-"):
            import zoo_models
            out += [m for m, r in zoo_models.ZOO.items() if r.suite == n[4:]]
        else:
            out.append(n)
    return out


def is_tokens(name):
    r = zoo_recipe(name)
    return r.kind == "tokens" if r else name in VOCAB


def bench_shape(name, b):
    """Input 0's full-size shape at batch b (tc-bench's batch: the leading dim);
    token models' sequences are SEQ long (--seq)."""
    if is_tokens(name):
        return (b, SEQ)
    r = zoo_recipe(name)
    return (b,) + r.full if r else (b, 3, 224, 224)


def random_input(name, shape, integer, dev):
    """The model's inputs (a tuple) with input 0 of `shape`: a recipe with an
    attention mask (zoo_models.padded_mask) takes the mask as its second."""
    import torch
    g = torch.Generator().manual_seed(1)
    if integer:
        r = zoo_recipe(name)
        ids = torch.randint(0, r.vocab if r and r.vocab else VOCAB.get(name, 1000), tuple(shape), generator=g)
        if r and r.mask:
            import zoo_models
            return (ids.to(dev), zoo_models.padded_mask(tuple(shape), g).to(dev))
        return (ids.to(dev),)
    return (torch.randn(*shape, generator=g).to(dev),)


def inputs_for(name, batch, dev):
    if is_tokens(name):
        return random_input(name, bench_shape(name, max(1, batch // 4)), True, dev)
    return random_input(name, bench_shape(name, batch), False, dev)


def save_inputs(xs, data):
    for i, x in enumerate(xs):
        save_pb(x, os.path.join(data, "input_%d.pb" % i))


def make_model(name):
    """The recipe's model in eval mode (first output only), BatchNorms calibrated."""
    import torch
    from export_torch_models import FirstOutput, models as recipes
    torch.manual_seed(0)
    model = FirstOutput(recipes()[name][0]()).eval()
    if not is_tokens(name):
        import zoo_models
        zoo_models.calibrate_batchnorm(model, inputs_for(name, 8, "cpu")[0])
    return model


def export(name, model, xs, path):
    """The dynamo exporter; where torch.export cannot trace the model (clip_text
    under PyTorch 2.11), the TorchScript one (opset 17), said on stderr.
    xs: the inputs (x, and a recipe's attention mask: the same batch dim)."""
    import torch
    batch = torch.export.Dim("batch", min=1, max=64)
    names = ["x", "mask"][:len(xs)]
    with torch.no_grad():
        try:
            torch.onnx.export(model, tuple(xs), path, dynamo=True, opset_version=20,
                              dynamic_shapes={n: {0: batch} for n in names}, external_data=False)
            return
        except Exception as e:
            first = str(e).splitlines()[0][:200] if str(e) else type(e).__name__
            log("%s: dynamo export failed (%s); exporting with TorchScript" % (name, first))
        torch.onnx.export(model, tuple(xs), path, dynamo=False, opset_version=17, input_names=names,
                          dynamic_axes={n: {0: "batch"} for n in names})


def save_pb(t, path):
    from onnx import numpy_helper
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(t.detach().cpu().numpy()).SerializeToString())


def load_pb(path):
    import onnx
    from onnx import numpy_helper
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def rel_err(got, want):
    import numpy as np
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape or not np.isfinite(got).all():
        return float("inf")
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))


def time_torch(fn, xs, iters):
    """Sorted times (ms) of `iters` runs on the inputs xs after 5 warm-ups:
    CUDA events on the GPU, wall time on the CPU."""
    import torch
    cuda = xs[0].is_cuda
    for _ in range(5):
        fn(*xs)
    if cuda:
        torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        if not cuda:
            t0 = time.perf_counter()
            fn(*xs)
            ts.append((time.perf_counter() - t0) * 1e3)
            continue
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        fn(*xs)
        e.record()
        torch.cuda.synchronize()
        ts.append(s.elapsed_time(e))
    return sorted(ts)


def time_torch_modes(model, xs, modes, iterations, amp=True):
    """PyTorch in each mode (eager, inductor = torch.compile(), inductor-cg =
    reduce-overhead) on the inputs xs, autocast fp16 when `amp`: per mode a
    dict with ms (median), p10_ms, p90_ms, compile_s, peak_bytes, or error."""
    import torch
    cuda = xs[0].is_cuda
    out = {}
    for mode in modes:
        torch._dynamo.reset()
        if cuda:
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
        try:
            with torch.inference_mode(), torch.autocast(xs[0].device.type, dtype=torch.float16, enabled=amp):
                if mode == "eager":
                    fn, ct = model, 0.0
                else:
                    fn = torch.compile(model, mode="reduce-overhead" if mode == "inductor-cg" else None)
                    t0 = time.perf_counter()
                    fn(*xs)
                    if cuda:
                        torch.cuda.synchronize()
                    ct = time.perf_counter() - t0
                ts = time_torch(fn, xs, iterations)
            r = dict(ms=statistics.median(ts), p10_ms=ts[int(0.1 * len(ts))],
                     p90_ms=ts[min(len(ts) - 1, int(0.9 * len(ts)))], compile_s=ct)
            if cuda:
                r["peak_bytes"] = torch.cuda.max_memory_allocated()
            out[mode] = r
        except Exception as e:
            out[mode] = dict(error=str(e).splitlines()[0][:200] if str(e) else type(e).__name__)
    return out


def export_for_bench(args):
    """Models and reference data for tc-bench --models-dir (see the top).
    Exit status 1 when a model failed; its line is the last on stderr
    (tc-bench --export records it as the model's reason)."""
    import torch
    failed = 0
    for name in model_names(args.models):
        d = os.path.join(args.export_for_bench, name)
        os.makedirs(d, exist_ok=True)
        try:
            model = make_model(name)
            export(name, model, inputs_for(name, 8, "cpu"), os.path.join(d, "model.onnx"))
            for i, b in enumerate(int(b) for b in args.batches.split(",")):
                # tc-bench's batch is the leading dim: b images, or b sequences.
                text = is_tokens(name)
                xs = random_input(name, bench_shape(name, b), text, "cpu")
                data = os.path.join(d, "test_data_set_%d" % i)
                os.makedirs(data, exist_ok=True)
                save_inputs(xs, data)
                with torch.inference_mode():
                    save_pb(model(*xs).float(), os.path.join(data, "output_0.pb"))
            log("%s: exported to %s (batches %s)" % (name, d, args.batches))
        except Exception as e:  # one model failing is a line, not the end of the run
            failed += 1
            log("%s: FAILED to export: %s" % (name, str(e).splitlines()[0][:300] if str(e) else type(e).__name__))
    return 1 if failed else 0


def amp_error(model, xs, amp=True):
    """PyTorch's own error on inputs xs and the fp32 output (numpy): autocast fp16 vs
    fp32 (amp), or its default TF32 convolutions vs fp32 (not amp), rel_err.
    The fp32 reference runs with TF32 off: cuDNN convolutions default to it,
    and its 10-bit mantissa would make the "fp32" reference itself fp16-like."""
    import torch
    tf32 = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    try:
        with torch.inference_mode():
            want = model(*xs).float().cpu().numpy()
            if not amp:
                torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = tf32
                return rel_err(model(*xs).float().cpu().numpy(), want), want
            with torch.autocast(xs[0].device.type, dtype=torch.float16):
                return rel_err(model(*xs).float().cpu().numpy(), want), want
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = tf32


def torch_only(args):
    """One model, one input: PyTorch's times as one JSON line; with --inputs
    DIR (tc-bench's input_0.pb) and amp, also amp_err: AMP's own error on it,
    the basis of tc's amp bound (lib/Bench/AmpRule.h). --modes "": no timing."""
    import torch
    name = args.models
    torch.backends.cudnn.benchmark = True  # as the full benchmark (main) times PyTorch
    model = make_model(name).to(args.device)
    if args.inputs:
        xs, i = [], 0  # every input_N.pb tc's run reads (ids, and a recipe's mask)
        while os.path.exists(os.path.join(args.inputs, "input_%d.pb" % i)):
            xs.append(torch.from_numpy(load_pb(os.path.join(args.inputs, "input_%d.pb" % i)).copy()).to(args.device))
            i += 1
        shape = list(xs[0].shape)
    else:
        shape = [int(d) for d in args.input_shape.split(",")]
        xs = random_input(name, shape, args.input_dtype.startswith(("i", "u")), args.device)
    modes = [m for m in args.modes.split(",") if m]
    res = time_torch_modes(model, xs, modes, args.iterations, args.precision == "amp")
    if args.inputs and args.precision == "amp":
        res["amp_err"] = amp_error(model, xs)[0]
    res.update(model=name, shape=shape, precision=args.precision, torch=torch.__version__)
    print(json.dumps(res), flush=True)


def run(cmd, timeout):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode:
        last = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
        raise RuntimeError("%s: %s" % (os.path.basename(cmd[0]), last[:300]))
    return p, time.perf_counter() - t0


def tc_compile(bindir, base, out, precision="amp", opt_args="", codegen_args=""):
    """base.onnx -> out.tcx with the tc build in `bindir` (extra tc-opt flags
    `opt_args`, tc-codegen flags `codegen_args`); the three tools' seconds."""
    tool = lambda t: os.path.join(bindir, t)
    _, t_imp = run([tool("tc-import"), base + ".onnx", "-o", out + ".tcbc"], 600)
    lower = ["--precision", "fp16"] if precision == "amp" else []
    _, t_opt = run([tool("tc-opt"), "-O2", "--target=cuda"] + lower + opt_args.split()
                   + [out + ".tcbc", "-o", out + ".o2.tcbc"], 600)
    _, t_cg = run([tool("tc-codegen"), "--target=cuda", "--arch=sm_90", "--stats"] + codegen_args.split()
                  + [out + ".o2.tcbc", "-o", out + ".tcx"], 900)
    return t_imp, t_opt, t_cg


def device_ms(rep):
    return rep.get("device_ms", rep["latency_ms"])["median"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/tc-bench-gpu"))
    ap.add_argument("--models", default="resnet50,mobilenet_v2,bert_base,vit_b_16,gpt2")
    ap.add_argument("--batches", default="32,1")
    ap.add_argument("--modes", default="eager,inductor,inductor-cg")
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--baseline-bin", help="a second tc build to compile and time beside --bin (before/after)")
    ap.add_argument("--tc-run-args", default="", help="extra tc-run flags (e.g. --cuda-graphs=off)")
    ap.add_argument("--baseline-tc-run-args", default="",
                    help="extra tc-run flags for --baseline-bin's runs (--baseline-tc-run-args=--attention=kernel)")
    ap.add_argument("--tc-opt-args", default="",
                    help="extra tc-opt flags for --bin's compile (spelled with '=': "
                         "--tc-opt-args=--conv-gemm=always)")
    ap.add_argument("--baseline-tc-opt-args", default="",
                    help="extra tc-opt flags for --baseline-bin's compile: an A/B of one build "
                         "(--bin B --baseline-bin B --baseline-tc-opt-args=--conv-gemm=never)")
    ap.add_argument("--tc-codegen-args", default="",
                    help="extra tc-codegen flags for --bin's compile (--tc-codegen-args=--allow-tf32=all)")
    ap.add_argument("--baseline-tc-codegen-args", default="", help="extra tc-codegen flags for --baseline-bin's")
    ap.add_argument("--seq", type=int, default=SEQ,
                    help="token models: sequence length (default %d); --seq 256 --batches 16,4 = 4x256, 1x256" % SEQ)
    ap.add_argument("--markdown", help="write the table to this file")
    ap.add_argument("--render", nargs="+", metavar="JSON",
                    help="no run: merge the bench-gpu.json of several runs into one table")
    ap.add_argument("--torch-only", action="store_true",
                    help="time PyTorch alone on one model (--models NAME) and --input-shape; one JSON line")
    ap.add_argument("--input-shape", help="--torch-only: input shape, e.g. 32,3,224,224")
    ap.add_argument("--input-dtype", default="f32", help="--torch-only: f32, or i64 for token ids")
    ap.add_argument("--inputs", metavar="DIR",
                    help="--torch-only: the input is DIR/input_0.pb (tc's); amp: report amp_err too")
    ap.add_argument("--precision", default="amp", choices=["amp", "fp32"], help="autocast fp16 and tc at --precision fp16 (amp), or neither (fp32); --torch-only too")
    ap.add_argument("--device", default="cuda", help="--torch-only: cuda (cpu for a check without a GPU)")
    ap.add_argument("--check-torch", action="store_true",
                    help="exit 0 when torch imports (tc-bench's check before timing PyTorch)")
    ap.add_argument("--export-for-bench", metavar="DIR",
                    help="export --models with test data at --batches for tc-bench --models-dir DIR")
    args = ap.parse_args()
    globals()["SEQ"] = args.seq  # bench_shape's sequence length
    if args.render:
        return render_files(args.render, args.markdown)
    if args.check_torch:
        import torch  # noqa: F401 (fails with exit 1 when absent)
        return 0
    if args.torch_only:
        return torch_only(args)
    if args.export_for_bench:
        return export_for_bench(args)
    import torch

    torch.backends.cudnn.benchmark = True
    os.makedirs(args.out, exist_ok=True)
    rows = []

    def save():
        with open(os.path.join(args.out, "bench-gpu.json"), "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(), torch=torch.__version__, tc_opt_args=args.tc_opt_args,
                           baseline_tc_opt_args=args.baseline_tc_opt_args, tc_codegen_args=args.tc_codegen_args,
                           baseline_tc_codegen_args=args.baseline_tc_codegen_args, seq=args.seq, tc_run_args=args.tc_run_args,
                           baseline_tc_run_args=args.baseline_tc_run_args, rows=rows), f, indent=1)
    for name in args.models.split(","):
        base = os.path.join(args.out, name)
        try:
            model = make_model(name)
            # The ONNX file (fp32 weights, symbolic batch) and tc's compile.
            t0 = time.perf_counter()
            # 8 images or 2 sequences: torch.export specializes a dim of size 1.
            export(name, model, inputs_for(name, 8, "cpu"), base + ".onnx")
            export_s = time.perf_counter() - t0
            t_imp, t_opt, t_cg = tc_compile(args.bin, base, base, args.precision, args.tc_opt_args,
                                            args.tc_codegen_args)
            if args.baseline_bin:
                tc_compile(args.baseline_bin, base, base + ".base", args.precision,
                           args.baseline_tc_opt_args, args.baseline_tc_codegen_args)
            compile_s = t_imp + t_opt + t_cg
            log("%s: exported in %.1f s; tc compile %.1f s (import %.1f, opt %.1f, codegen %.1f)"
                % (name, export_s, compile_s, t_imp, t_opt, t_cg))
        except Exception as e:  # one model failing is a row, not the end of the run
            log("%s: FAILED to export/compile: %s" % (name, e))
            rows.append(dict(model=name, batch=None, error=str(e)))
            continue
        model = model.to("cuda")
        for batch in [int(b) for b in args.batches.split(",")]:
            row = dict(model=name, batch=batch, tc_compile_s=round(compile_s, 1))
            if args.precision != "amp":
                row["precision"] = args.precision
            rows.append(row)
            xs = inputs_for(name, batch, "cuda")
            data = "%s.b%d" % (base, batch)
            os.makedirs(data, exist_ok=True)
            save_inputs(xs, data)
            # fp32: PyTorch's own TF32 error is the bound's basis, as AMP's is at amp.
            row["torch_amp_err"], want = amp_error(model, xs, args.precision == "amp")
            try:
                # Alternating runs, the lower median each: a before/after
                # comparison should not hinge on which build ran first.
                bins = [(args.bin, base, data + ".tc", args.tc_run_args)]
                if args.baseline_bin:
                    bins.append((args.baseline_bin, base + ".base", data + ".base.tc",
                                 args.baseline_tc_run_args))
                reps = {}
                for _ in range(2 if args.baseline_bin else 1):
                    for b, art, outdir, run_args in bins:
                        p, _ = run([os.path.join(b, "tc-run"), art + ".tcx", "--inputs", data, "--output-dir", outdir,
                                    "--iterations", str(args.iterations), "--warmup", "5", "--report=json"]
                                   + run_args.split(), 600)
                        r = json.loads(p.stdout)
                        # By artifact: --bin and --baseline-bin may be one build.
                        if art not in reps or device_ms(r) < device_ms(reps[art]):
                            reps[art] = r
                if args.baseline_bin:
                    rb = reps[base + ".base"]
                    row["tc_base_ms"] = device_ms(rb)
                    row["tc_base_err"] = rel_err(load_pb(os.path.join(data + ".base.tc", "output_0.pb")), want)
                    row["tc_base_steps"] = {k: rb.get(k) for k in ("kernel_steps", "library_steps", "fallback_steps")}
                p = None
                rep = reps[base]
                row["tc_err"] = rel_err(load_pb(os.path.join(data + ".tc", "output_0.pb")), want)
                row["ok"] = row["tc_err"] <= max(TOLERANCE, 1.5 * row["torch_amp_err"])
                row["tc_ms"] = device_ms(rep)
                row["tc_host_ms"] = rep["latency_ms"]["median"]
                row["tc_peak_mib"] = round(rep.get("peak_device_bytes", 0) / 2**20)
                row["tc_planned_mib"] = round(rep.get("planned_device_bytes", 0) / 2**20)
                row["tc_steps"] = {k: rep.get(k) for k in ("kernel_steps", "library_steps", "fallback_steps")}
            except Exception as e:
                row["ok"] = False
                row["error"] = str(e)
            for mode, r in time_torch_modes(model, xs, args.modes.split(","), args.iterations,
                                            args.precision == "amp").items():
                if "error" in r:
                    row[mode + "_error"] = r["error"]
                    continue
                row[mode + "_ms"] = r["ms"]
                row[mode + "_compile_s"] = round(r["compile_s"], 1)
                row[mode + "_peak_mib"] = round(r["peak_bytes"] / 2**20)
            log(json.dumps(row))
            save()  # after every row: a run cut short keeps what it measured
    save()
    table = render(rows, args.modes.split(","))
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table + "\n")


def render_files(files, markdown):
    """Rows of several runs (e.g. one per group of models or modes) joined by
    model and batch; the table says which runs it came from."""
    merged, modes, meta = {}, [], []
    for path in files:
        with open(path) as f:
            run = json.load(f)
        meta.append("%s: %s, torch %s" % (os.path.basename(os.path.dirname(path)) or path, run["device"], run["torch"]))
        for r in run["rows"]:
            if "tc_err" in r and "torch_amp_err" in r:  # today's rule, also for older runs
                r["ok"] = r["tc_err"] <= max(TOLERANCE, 1.5 * r["torch_amp_err"])
            merged.setdefault((r["model"], r["batch"]), {}).update(r)
            for k in r:
                if k.endswith("_ms") and k not in ("tc_ms", "tc_host_ms", "tc_base_ms") and k[:-3] not in modes:
                    modes.append(k[:-3])
    order = ["eager", "inductor", "inductor-cg"]
    modes.sort(key=lambda m: order.index(m) if m in order else len(order))
    table = render(list(merged.values()), modes)
    print(table)
    if markdown:
        with open(markdown, "w") as f:
            f.write(table + "\n")


def geomean(xs):
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def render(rows, modes):
    head = ["model", "batch", "ok (err)", "tc ms"] + ["%s ms" % m for m in modes] + \
           ["%s/tc" % m for m in modes] + ["tc compile s", "tc peak MiB (plan)", "eager peak MiB"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    ratios = {m: [] for m in modes}
    base = any("tc_base_ms" in r for r in rows)
    if base:
        head.insert(4, "base ms")
        head.insert(5, "base/tc")
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    vs_base = []
    for r in rows:
        if r.get("batch") is None:
            out.append("| %s | - | FAILED: %s |" % (r["model"], r.get("error", "")))
            continue
        cells = [r["model"], str(r["batch"]),
                 ("yes" if r.get("ok") else "NO") + " (%.1e)" % r.get("tc_err", float("inf"))
                 + ("" if "error" not in r else " " + r["error"]),
                 "%.3f" % r["tc_ms"] if "tc_ms" in r else "-"]
        if base:
            q = r["tc_base_ms"] / r["tc_ms"] if "tc_base_ms" in r and "tc_ms" in r else None
            cells += ["%.3f" % r["tc_base_ms"] if "tc_base_ms" in r else "-", "%.3f" % q if q else "-"]
            if q:
                vs_base.append((q, "%s b%d" % (r["model"], r["batch"])))
        for m in modes:
            cells.append("%.3f" % r[m + "_ms"] if m + "_ms" in r else r.get(m + "_error", "-"))
        for m in modes:
            if r.get("ok") and m + "_ms" in r:
                q = r[m + "_ms"] / r["tc_ms"]
                ratios[m].append(q)
                cells.append("%.2f" % q)
            else:
                cells.append("-")
        cells += [str(r.get("tc_compile_s", "-")), "%s (%s)" % (r.get("tc_peak_mib", "-"), r.get("tc_planned_mib", "-")),
                  str(r.get("eager_peak_mib", "-"))]
        out.append("| " + " | ".join(cells) + " |")
    ok = [r for r in rows if r.get("batch") is not None]
    out.append("")
    out.append("pass rate %d/%d; geomean speedup of tc over: %s" % (
        sum(1 for r in ok if r.get("ok")), len(ok),
        ", ".join("%s %.2fx" % (m, geomean(ratios[m])) for m in modes)))
    if vs_base:
        worst = min(vs_base)
        out.append("baseline build / this build: geomean %.3fx, worst %.3fx (%s)" % (
            geomean([q for q, _ in vs_base]), worst[0], worst[1]))
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
