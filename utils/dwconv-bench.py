#!/usr/bin/env python3
"""The depthwise-conv microbenchmark of issue 18: one NHWC depthwise Conv
(bias fused) per shape, compiled for CUDA twice, by the generated kernel
(lib/CodeGen/Kernels/DepthwiseConv.cpp; tc-codegen --conv-kernels=grouped,
so that the shapes the default rule gives cuDNN are measured too) and by
cuDNN (--conv-kernels=cudnn), and PyTorch's channels-last conv2d in the same
process when torch and a GPU are there. Time: tc-run's median device time
(one step: the conv), torch's mean over back-to-back runs; GB/s: the input
and the result read and written once.

    utils/dwconv-bench.py [--bin build/bin] [--dtype f16|f32] [--shapes convnext,efficientnet]
                          [--iterations 50] [--check]
    utils/dwconv-bench.py --onnx dwconv.onnx   # convnext_tiny's first depthwise conv as ONNX

Shape sets: convnext (convnext_tiny's four 7x7 stages), efficientnet
(efficientnet_b0's 3x3/5x5 ones), mobilenet (mobilenet_v2's 3x3 ones), or
NxCxHxWxKxS (pad K/2, stride S). --check first compares each artifact's
result (the kernel's, cuDNN's) with the reference executor's on the same random inputs
(f16: rtol/atol 1e-2) and stops on a mismatch. --onnx writes an NCHW fp16 model
(32x96x56x56, 7x7, pad 3, group 96, bias) for tc-import | tc-opt -O2
--target=cuda | tc-codegen | tc-run --iterations (the channels-last pass
adds a Transpose in and out)."""
import argparse, json, os, subprocess, sys, tempfile

SETS = {
    "convnext": [(32, 96, 56, 56, 7, 1), (32, 192, 28, 28, 7, 1), (32, 384, 14, 14, 7, 1),
                 (32, 768, 7, 7, 7, 1)],
    "efficientnet": [(32, 32, 112, 112, 3, 1), (32, 96, 112, 112, 3, 2), (32, 144, 56, 56, 5, 2),
                     (32, 240, 28, 28, 5, 1), (32, 672, 14, 14, 5, 1), (32, 1152, 7, 7, 5, 1)],
    "mobilenet": [(32, 32, 112, 112, 3, 1), (32, 144, 56, 56, 3, 1), (32, 192, 28, 28, 3, 1),
                  (32, 576, 14, 14, 3, 1), (32, 960, 7, 7, 3, 1)],
}

ap = argparse.ArgumentParser()
ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin"))
ap.add_argument("--dtype", default="f16", choices=["f16", "f32"])
ap.add_argument("--shapes", default="convnext,efficientnet")
ap.add_argument("--iterations", type=int, default=50)
ap.add_argument("--check", action="store_true", help="compare the kernel with the reference first")
ap.add_argument("--onnx", help="write the ONNX model of convnext's first depthwise conv and stop")
args = ap.parse_args()
tool = lambda name: os.path.join(args.bin, name)


def write_onnx(path):
    import numpy as np
    import onnx
    from onnx import TensorProto as T, helper as h, numpy_helper as nh
    rng = np.random.default_rng(0)
    w = nh.from_array((rng.standard_normal((96, 1, 7, 7)) * 0.1).astype(np.float16), "w")
    b = nh.from_array((rng.standard_normal(96) * 0.1).astype(np.float16), "b")
    node = h.make_node("Conv", ["x", "w", "b"], ["y"], name="dwconv", group=96, pads=[3, 3, 3, 3],
                       kernel_shape=[7, 7])
    g = h.make_graph([node], "dwconv", [h.make_tensor_value_info("x", T.FLOAT16, [32, 96, 56, 56])],
                     [h.make_tensor_value_info("y", T.FLOAT16, [32, 96, 56, 56])], [w, b])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
    m.ir_version = 10
    onnx.save(m, path)


if args.onnx:
    write_onnx(args.onnx)
    sys.exit(0)

shapes = []
for part in args.shapes.split(","):
    if part in SETS:
        shapes += SETS[part]
    else:
        shapes.append(tuple(int(v) for v in part.split("x")))

torch = None
try:
    import torch as _torch
    if _torch.cuda.is_available():
        torch = _torch
except ImportError:
    pass


def out_size(i, k, s):
    return (i + 2 * (k // 2) - k) // s + 1


def tc_ms(work, shape, conv_kernels):
    n, c, hh, ww, k, s = shape
    p, oh, ow, t = k // 2, out_size(hh, k, s), out_size(ww, k, s), args.dtype
    src = os.path.join(work, "dw.tcir")
    with open(src, "w") as f:
        f.write(f"module @m {{\n  func @main(%x: {t}[{n},{hh},{ww},{c}], %w: {t}[{c},{k},{k},1], "
                f"%b: {t}[{c}]) -> ({t}[{n},{oh},{ow},{c}]) {{\n"
                f"    %y = Conv(%x, %w, %b) {{channels_last = 1, group = {c}, pads = [{p}, {p}, {p}, {p}], "
                f"strides = [{s}, {s}]}} : {t}[{n},{oh},{ow},{c}]\n    return %y\n  }}\n}}\n")
    tcx = os.path.join(work, f"dw.{conv_kernels}.tcx")
    subprocess.run([tool("tc-opt"), "-O2", src, "-o", src + ".tcbc"], check=True)
    subprocess.run([tool("tc-codegen"), "--target=cuda", "--conv-kernels=" + conv_kernels,
                    src + ".tcbc", "-o", tcx], check=True)
    out = subprocess.run([tool("tc-run"), tcx, "--random-inputs", "--iterations",
                          str(args.iterations), "--report=json"],
                         check=True, capture_output=True, text=True).stdout
    r = json.loads(out)
    if args.check:  # the same random inputs (seed 0) through the reference executor
        ref = os.path.join(work, "ref")
        subprocess.run([tool("tc-run"), "--target=ref", src, "--random-inputs", "--output-dir", ref],
                       check=True, capture_output=True)
        tol = "1e-2" if args.dtype == "f16" else "1e-4"
        subprocess.run([tool("tc-run"), tcx, "--random-inputs", "--compare", ref, "--rtol", tol,
                        "--atol", tol], check=True)
    return (r.get("device_ms") or r["latency_ms"])["median"]


def torch_ms(shape):
    n, c, hh, ww, k, s = shape
    dt = {"f16": torch.float16, "f32": torch.float32}[args.dtype]
    x = torch.rand(n, c, hh, ww, device="cuda", dtype=dt).to(memory_format=torch.channels_last)
    w = torch.rand(c, 1, k, k, device="cuda", dtype=dt)
    b = torch.rand(c, device="cuda", dtype=dt)
    run = lambda: torch.nn.functional.conv2d(x, w, b, stride=s, padding=k // 2, groups=c)
    run()  # cuDNN's algorithm choice, outside the timing
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()  # back to back: the mean, launch gaps included
    for _ in range(args.iterations):
        run()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / args.iterations


print("| N | C | H | W | K | S | tc kernel ms | GB/s | tc cuDNN ms | torch ms | cuDNN / kernel | torch / kernel |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
elem = 2 if args.dtype == "f16" else 4
with tempfile.TemporaryDirectory() as work:
    for shape in shapes:
        n, c, hh, ww, k, s = shape
        moved = (n * c * hh * ww + n * c * out_size(hh, k, s) * out_size(ww, k, s)) * elem
        gen, lib = tc_ms(work, shape, "grouped"), tc_ms(work, shape, "cudnn")
        tms = torch_ms(shape) if torch else None
        row = list(shape) + ["%.4f" % gen, "%.0f" % (moved / gen / 1e6), "%.4f" % lib,
                             "%.4f" % tms if tms else "-", "%.2f" % (lib / gen),
                             "%.2f" % (tms / gen) if tms else "-"]
        print("| " + " | ".join(map(str, row)) + " |")
        sys.stdout.flush()
