#!/usr/bin/env python3
"""The attention microbenchmark of issue 17: tc's fused Attention kernel
beside PyTorch's scaled_dot_product_attention (flash backend) in the same
process, on one GPU, in one command:

    utils/bench-attention.py [--bin build/bin] [--batch 4] [--heads 16]
                             [--seqs 1024,4096] [--dims 64,128]
                             [--attention kernel,cudnn]
                             [--opt=-O3] [--iterations 20] [--dry-run]

Per shape (every sequence x head dim, causal and not) it builds an ONNX
model of the SDPA pattern exporters write (f16 q, k, v [B, H, S, D]:
MatMul(q, Transpose(k)) * d^-1/2 [+ Where(lower triangle, 0, -inf)],
Softmax, MatMul with v), compiles it with
`tc-import | tc-opt <opt> --target=cuda --precision fp16 | tc-codegen
--target=cuda`, checks that attention-fusion formed one Attention op, and
times it with `tc-run --iterations` (the median device time of its JSON
report), once per --attention implementation (tc-run --attention: tc's
generated kernel, cuDNN's fused flash attention through the graph API, or
auto), each a row saying what ran the step (`kernel`, `cudnn engine=N`, or
`kernel (cuDNN: why)` where cuDNN turned the shape down). PyTorch runs the
same inputs (fp16 CUDA tensors, same scale); printed per row: tc ms, torch
ms, their TFLOP/s (FLOPs = 4 B H Sq Skv D, halved when causal), torch / tc,
and tc's max abs difference from torch's output. --dry-run (or no
torch/GPU): build, compile and check the fusion only, no timing."""
import argparse, json, os, subprocess, sys, tempfile
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ap = argparse.ArgumentParser()
ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin"))
ap.add_argument("--batch", type=int, default=4)
ap.add_argument("--heads", type=int, default=16)
ap.add_argument("--seqs", default="1024,4096")
ap.add_argument("--dims", default="64,128")
ap.add_argument("--opt", default="-O3", help="tc-opt's pipeline level (attention-fusion)")
ap.add_argument("--iterations", type=int, default=20)
ap.add_argument("--attention", default="kernel",
                help="tc-run --attention implementations to time, comma-separated "
                     "(kernel, cudnn, auto)")
ap.add_argument("--dry-run", action="store_true", help="compile and check the fusion; no runs")
args = ap.parse_args()
tool = lambda name: os.path.join(args.bin, name)

torch = None
if not args.dry_run:
    try:
        import torch as _torch
        if _torch.cuda.is_available():
            torch = _torch
        else:
            print("(no CUDA device for torch: tc only)")
    except ImportError:
        print("(no torch: tc only)")


def sdpa_model(path, b, h, s, d, causal):
    """The exporters' SDPA chain in f16; returns the scale it applies."""
    scale = float(np.float16(d ** -0.5))
    t = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT16, [b, h, s, d])
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["q", "kt"], ["qk"]),
             helper.make_node("Mul", ["qk", "scale"], ["scores"])]
    inits = [numpy_helper.from_array(np.array(scale, np.float16), "scale")]
    if causal:
        nodes += [helper.make_node("Where", ["tri", "zero", "ninf"], ["mask"]),
                  helper.make_node("Add", ["scores", "mask"], ["masked"])]
        inits += [numpy_helper.from_array(np.tril(np.ones((s, s), bool)), "tri"),
                  numpy_helper.from_array(np.array(0, np.float16), "zero"),
                  numpy_helper.from_array(np.array(-np.inf, np.float16), "ninf")]
    nodes += [helper.make_node("Softmax", ["masked" if causal else "scores"], ["p"], axis=-1),
              helper.make_node("MatMul", ["p", "v"], ["o"])]
    graph = helper.make_graph(nodes, "sdpa", [t("q"), t("k"), t("v")], [t("o")], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return scale


def compile_tc(work, model):
    """The artifact; fails unless the module has exactly one Attention op."""
    tcbc, tcx = os.path.join(work, "m.tcbc"), os.path.join(work, "m.tcx")
    subprocess.run(f"{tool('tc-import')} {model} | {tool('tc-opt')} {args.opt} --target=cuda "
                   f"--precision fp16 - -o {tcbc}", shell=True, check=True)
    text = subprocess.run([tool("tc-opt"), tcbc, "-S"], check=True, capture_output=True,
                          text=True).stdout
    if text.count("= Attention(") != 1 or "Softmax(" in text:
        sys.exit(f"error: attention-fusion did not form one Attention op ({args.opt})")
    subprocess.run([tool("tc-codegen"), "--target=cuda", tcbc, "-o", tcx], check=True)
    return tcx


def run_tc(work, tcx, qkv, impl):
    """tc's median device ms with `tc-run --attention=impl`, what ran the
    Attention step (its --print-steps words), and its output."""
    ins, outs = os.path.join(work, "in"), os.path.join(work, "out-" + impl)
    os.makedirs(ins, exist_ok=True)
    for i, x in enumerate(qkv):
        onnx.save_tensor(numpy_helper.from_array(x), os.path.join(ins, f"input_{i}.pb"))
    r = subprocess.run([tool("tc-run"), tcx, "--inputs", ins, "--warmup", "3", "--iterations",
                        str(args.iterations), "--report=json", "--output-dir", outs,
                        "--attention=" + impl], check=True, capture_output=True, text=True)
    report = json.loads(r.stdout)
    ms = report.get("device_ms", report["latency_ms"])["median"]
    # One untimed run for the step report (with --iterations, --print-steps
    # would time step by step, without the CUDA graph).
    steps = subprocess.run([tool("tc-run"), tcx, "--inputs", ins, "--attention=" + impl,
                            "--print-steps"], check=True, capture_output=True, text=True).stderr
    ran = "?"
    for line in steps.splitlines():
        if line.startswith("step ") and "attention" in line:
            what = line.split(": ", 1)[1]
            ran = ("cudnn engine=" + what.rsplit("engine=", 1)[1] if what.startswith("cudnn")
                   else "kernel" + (" (cuDNN: " + what.split("(cuDNN: ", 1)[1]
                                    if "(cuDNN: " in what else ""))
    return ms, ran, numpy_helper.to_array(onnx.load_tensor(os.path.join(outs, "output_0.pb")))


def run_torch(qkv, causal, scale):
    """PyTorch's flash SDPA: median ms over CUDA events, and its output."""
    q, k, v = (torch.from_numpy(x).cuda() for x in qkv)
    sdpa = torch.nn.functional.scaled_dot_product_attention
    from torch.nn.attention import SDPBackend, sdpa_kernel
    def run():
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            return sdpa(q, k, v, is_causal=bool(causal), scale=scale)
    for _ in range(3):
        o = run()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(args.iterations):
        start.record()
        run()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2], o.float().cpu().numpy()


print("| B | H | S | D | causal | tc ran | tc ms | torch ms | tc TFLOP/s | torch TFLOP/s "
      "| torch / tc | max abs diff |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
rng = np.random.default_rng(0)
for s in map(int, args.seqs.split(",")):
    for d in map(int, args.dims.split(",")):
        for causal in (0, 1):
            b, h = args.batch, args.heads
            with tempfile.TemporaryDirectory() as work:
                model = os.path.join(work, "m.onnx")
                scale = sdpa_model(model, b, h, s, d, causal)
                tcx = compile_tc(work, model)
                row = [b, h, s, d, causal]
                if args.dry_run:
                    print("| " + " | ".join(map(str, row)) + " | compiled, Attention formed |")
                    continue
                qkv = [(rng.random((b, h, s, d), np.float32) * 2 - 1).astype(np.float16)
                       for _ in range(3)]
                flops = 4.0 * b * h * s * s * d / (2 if causal else 1)
                tflops = lambda t: "%.1f" % (flops / t / 1e9)
                torch_run = run_torch(qkv, causal, scale) if torch else None
                for impl in args.attention.split(","):
                    ms, ran, out = run_tc(work, tcx, qkv, impl)
                    cells = row + [ran]
                    if torch_run:
                        tms, ref = torch_run
                        err = float(np.max(np.abs(out.astype(np.float32) - ref)))
                        cells += ["%.3f" % ms, "%.3f" % tms, tflops(ms), tflops(tms),
                                  "%.2f" % (tms / ms),
                                  "%.2g%s" % (err, "" if err < 2e-2 else " MISMATCH")]
                    else:
                        cells += ["%.3f" % ms, "-", tflops(ms), "-", "-", "-"]
                    print("| " + " | ".join(map(str, cells)) + " |")
                    sys.stdout.flush()
