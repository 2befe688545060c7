#!/usr/bin/env python3
"""The attention microbenchmark of issue 17: tc's Attention kernel (one op,
lib/CodeGen/Kernels/Attention.cpp) in TFLOP/s, beside PyTorch's
scaled_dot_product_attention (flash backend where it has one) in the same
process when torch and a GPU are there.

    utils/attention-bench.py [--bin build/bin] [--target cuda] [--dtype f16]
                             [--batch 4] [--heads 16] [--seqs 1024,4096]
                             [--dims 64,128] [--iterations 20]

Shapes: every sequence x head dim, causal and not. FLOPs: 4 * B * H * S * S
* D (q k^T and p v), halved when causal. tc's time is tc-run's median
latency (one kernel: launch included)."""
import argparse, json, os, subprocess, sys, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin"))
ap.add_argument("--target", default="cuda")
ap.add_argument("--dtype", default="f16", choices=["f16", "bf16", "f32"])
ap.add_argument("--batch", type=int, default=4)
ap.add_argument("--heads", type=int, default=16)
ap.add_argument("--seqs", default="1024,4096")
ap.add_argument("--dims", default="64,128")
ap.add_argument("--iterations", type=int, default=20)
args = ap.parse_args()
tool = lambda name: os.path.join(args.bin, name)

torch = None
try:
    import torch as _torch
    if args.target == "cuda" and _torch.cuda.is_available():
        torch = _torch
except ImportError:
    pass


def tc_ms(work, b, h, s, d, causal):
    t = "%s[%d,%d,%d,%d]" % (args.dtype, b, h, s, d)
    src = os.path.join(work, "a.tcir")
    with open(src, "w") as f:
        f.write("module @m {\n  func @main(%%q: %s, %%k: %s, %%v: %s) -> (%s) {\n"
                "    %%o = Attention(%%q, %%k, %%v) {causal = %d} : %s\n    return %%o\n  }\n}\n"
                % (t, t, t, t, causal, t))
    subprocess.run([tool("tc-opt"), "-O2", src, "-o", src + ".tcbc"], check=True)
    subprocess.run([tool("tc-codegen"), "--target=" + args.target, src + ".tcbc", "-o",
                    src + ".tcx"], check=True)
    out = subprocess.run([tool("tc-run"), src + ".tcx", "--random-inputs", "--iterations",
                          str(args.iterations), "--report=json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["latency_ms"]["median"]


def torch_ms(b, h, s, d, causal):
    dt = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}[args.dtype]
    q, k, v = (torch.rand(b, h, s, d, device="cuda", dtype=dt) * 2 - 1 for _ in range(3))
    sdpa = torch.nn.functional.scaled_dot_product_attention
    ctx = None
    try:
        from torch.nn.attention import sdpa_kernel, SDPBackend
        ctx = lambda: sdpa_kernel(SDPBackend.FLASH_ATTENTION)
    except ImportError:
        pass
    def run():
        if ctx:
            with ctx():
                return sdpa(q, k, v, is_causal=bool(causal))
        return sdpa(q, k, v, is_causal=bool(causal))
    for _ in range(3):
        run()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(args.iterations):
        start.record()
        run()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


print("| B | H | S | D | causal | tc ms | tc TFLOP/s | torch ms | torch TFLOP/s | tc / torch |")
print("|---|---|---|---|---|---|---|---|---|---|")
with tempfile.TemporaryDirectory() as work:
    for s in map(int, args.seqs.split(",")):
        for d in map(int, args.dims.split(",")):
            for causal in (0, 1):
                b, h = args.batch, args.heads
                flops = 4.0 * b * h * s * s * d / (2 if causal else 1)
                ms = tc_ms(work, b, h, s, d, causal)
                row = [b, h, s, d, causal, "%.3f" % ms, "%.3g" % (flops / ms / 1e9)]
                if torch:
                    tms = torch_ms(b, h, s, d, causal)
                    row += ["%.3f" % tms, "%.3g" % (flops / tms / 1e9), "%.2f" % (tms / ms)]
                else:
                    row += ["-", "-", "-"]
                print("| " + " | ".join(map(str, row)) + " |")
                sys.stdout.flush()
