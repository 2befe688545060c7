#!/usr/bin/env python3
"""The memory-bound kernel microbenchmark: one-op models of the kernels that
bound CNNs and transformers by memory bandwidth, compiled for CUDA with each
given tool directory and timed with tc-run (device_ms median), in GB/s (the
bytes each model must read and write, once, over its time).

    utils/bandwidth-bench.py [--bins main=/work/main/build/bin,new=build/bin]
                             [--iterations 50] [--work DIR]
                             [--compile-only | --run-only [--tc-run PATH]]

--compile-only writes WORK/<model>.<tag>.tcx with each tool directory's
tc-opt and tc-codegen (the cubins are compiled here, no GPU needed);
--run-only times those artifacts with one tc-run (default: the last tool
directory's; the runtime reads each artifact's own launch table), so a
machine with a GPU needs only WORK and one tc-run.

Models (f16):
  transpose_nchw_nhwc  Transpose [32,256,56,56] perm 0,2,3,1
  transpose_nhwc_nchw  Transpose [32,56,56,256] perm 0,3,1,2
  bn_relu              Mul + Add (per-channel [1,256,1,1]) + Relu, [32,256,56,56]
  bn_relu_7x7          the same on [1024,512,7,7] (rows not a multiple of 8)
  concat_c             Concat of two [32,128,28,28] along C (26 MB: partly in L2)
  concat_c_b128        the same at batch 128
  concat_nhwc          Concat of two [128,28,28,128] along the last axis (tc's CUDA layout)
  qkv_permute          Transpose [32,197,3,12,64] perm 2,0,3,1,4 (last axis kept)
  ln_vit               Cast + LayerNorm (f32 scale, bias) + Cast, rows of 768 [32,197,768]
  ln_convnext          the same over rows of 96 [32,56,56,96]
  add_ln_gpt2          Add (residual) + Cast + LayerNorm + Cast, [8,128,768]
  softmax_deberta      Cast + Softmax to f32, rows of 128 [8,12,128,128]
  softmax_swin         Cast + Softmax + Cast, rows of 49 [2048,3,49,49]
  instnorm_poolformer  Cast + InstanceNormalization to f32 (GroupNorm(1)), [32,1,200704]
  instnorm_62720       the same on [32,1,62720]
  se_mean_112          ReduceMean over H, W of NHWC [32,112,112,32] (an SE block's
                       squeeze: the `columns` kernel); se_mean_56 [32,56,56,96],
                       se_mean_14 [32,14,14,480], se_mean_7 [32,7,7,1152]
  gn_poolformer        GroupNorm(1) on NHWC as canonicalize leaves it: Cast + LayerNorm
                       over axes 1.. + Cast + per-channel Mul, Add, [32,56,56,64] (`split`)
  mixer_gn_64          poolformer's token mixer into the next GroupNorm(1):
                       x + s * (p - n) (per-channel s), then gn_poolformer's ops,
                       [32,56,56,64]; mixer_gn_320 the same on [32,14,14,320]
Prints one line per model and tool directory, then a table."""
import argparse, json, os, subprocess, sys, tempfile

ap = argparse.ArgumentParser()
here = os.path.dirname(os.path.abspath(__file__))
ap.add_argument("--bins", default="main=/work/main/build/bin,new=" +
                os.path.join(here, "..", "build", "bin"))
ap.add_argument("--iterations", type=int, default=50)
ap.add_argument("--work", default=None)
ap.add_argument("--compile-only", action="store_true")
ap.add_argument("--run-only", action="store_true")
ap.add_argument("--tc-run", default=None)
args = ap.parse_args()
bins = [b.split("=", 1) for b in args.bins.split(",")]
work = args.work or tempfile.mkdtemp(prefix="tc-bandwidth-")
os.makedirs(work, exist_ok=True)


def shape(dims):
    return "f16[%s]" % ",".join(map(str, dims))


def n(dims):
    k = 1
    for d in dims:
        k *= d
    return k


def transpose(x, perm):
    y = [x[p] for p in perm]
    body = "    %%y = Transpose(%%x) {perm = [%s]} : %s\n" % (", ".join(map(str, perm)), shape(y))
    return [("x", x)], y, body, 2 * 2 * n(x)


def bn_relu(x):
    c = [1, x[1], 1, 1]
    body = ("    %%m = Mul(%%x, %%s) : %s\n    %%a = Add(%%m, %%b) : %s\n"
            "    %%y = Relu(%%a) : %s\n" % (shape(x), shape(x), shape(x)))
    return [("x", x), ("s", c), ("b", c)], x, body, 2 * 2 * n(x) + 2 * 2 * n(c)


def concat(a, b, axis):
    y = list(a)
    y[axis] += b[axis]
    body = "    %%y = Concat(%%x, %%z) {axis = %d} : %s\n" % (axis, shape(y))
    return [("x", a), ("z", b)], y, body, 2 * 2 * n(y)


def f32(dims):
    return "f32[%s]" % ",".join(map(str, dims))


def layernorm(x, residual=False):
    c = [x[-1]]
    body = ""
    src = "x"
    if residual:
        body += "    %%r = Add(%%x, %%z) : %s\n" % shape(x)
        src = "r"
    body += ("    %%c = Cast(%%%s) {to = f32} : %s\n"
             "    %%l = LayerNormalization(%%c, %%s, %%b) {epsilon = 1e-05} : %s\n"
             "    %%y = Cast(%%l) {to = f16} : %s\n" % (src, f32(x), f32(x), shape(x)))
    ins = [("x", x)] + ([("z", x)] if residual else [])
    return ins + [("s", c, "f32"), ("b", c, "f32")], x, body, 2 * (len(ins) + 1) * n(x)


def softmax(x, out16):
    body = ("    %%c = Cast(%%x) {to = f32} : %s\n"
            "    %%%s = Softmax(%%c) {axis = -1} : %s\n" % (f32(x), "l" if out16 else "y", f32(x)))
    if out16:
        body += "    %%y = Cast(%%l) {to = f16} : %s\n" % shape(x)
    return [("x", x)], (x, "f16" if out16 else "f32"), body, (2 + (2 if out16 else 4)) * n(x)


def instnorm(x):
    c = [x[1]]
    body = ("    %%c = Cast(%%x) {to = f32} : %s\n"
            "    %%y = InstanceNormalization(%%c, %%s, %%b) {epsilon = 1e-05} : %s\n" %
            (f32(x), f32(x)))
    return [("x", x), ("s", c, "f32"), ("b", c, "f32")], (x, "f32"), body, 6 * n(x)


def reduce_mean(x):
    y = [x[0], 1, 1, x[3]]
    body = "    %%y = ReduceMean(%%x) {axes = [1, 2]} : %s\n" % shape(y)
    return [("x", x)], y, body, 2 * (n(x) + n(y))


def groupnorm_nhwc(x):
    c = [1, 1, x[-1]]
    body = ("    %%one = const f32[1] [1]\n    %%zero = const f32[1] [0]\n"
            "    %%c = Cast(%%x) {to = f32} : %s\n"
            "    %%l = LayerNormalization(%%c, %%one, %%zero) {axis = 1, epsilon = 1e-05} : %s\n"
            "    %%h = Cast(%%l) {to = f16} : %s\n    %%m = Mul(%%h, %%g) : %s\n"
            "    %%y = Add(%%m, %%b) : %s\n" % (f32(x), f32(x), shape(x), shape(x), shape(x)))
    return [("x", x), ("g", c), ("b", c)], x, body, 2 * 2 * n(x)


def mixer_groupnorm(x):
    c = [1, 1, x[-1]]
    body = ("    %%d = Sub(%%p, %%n) : %s\n    %%e = Mul(%%d, %%s) : %s\n"
            "    %%r = Add(%%x, %%e) : %s\n" % (shape(x), shape(x), shape(x)))
    gn = groupnorm_nhwc(x)[2].replace("Cast(%x)", "Cast(%r)")
    return ([("x", x), ("p", x), ("n", x), ("s", c), ("g", c), ("b", c)], x, body + gn,
            2 * 4 * n(x))


models = {
    "transpose_nchw_nhwc": transpose([32, 256, 56, 56], [0, 2, 3, 1]),
    "transpose_nhwc_nchw": transpose([32, 56, 56, 256], [0, 3, 1, 2]),
    "bn_relu": bn_relu([32, 256, 56, 56]),
    "bn_relu_7x7": bn_relu([1024, 512, 7, 7]),
    "concat_c": concat([32, 128, 28, 28], [32, 128, 28, 28], 1),
    "concat_c_b128": concat([128, 128, 28, 28], [128, 128, 28, 28], 1),
    "concat_nhwc": concat([128, 28, 28, 128], [128, 28, 28, 128], 3),
    "qkv_permute": transpose([32, 197, 3, 12, 64], [2, 0, 3, 1, 4]),
    "ln_vit": layernorm([32, 197, 768]),
    "ln_convnext": layernorm([32, 56, 56, 96]),
    "add_ln_gpt2": layernorm([8, 128, 768], residual=True),
    "softmax_deberta": softmax([8, 12, 128, 128], False),
    "softmax_swin": softmax([2048, 3, 49, 49], True),
    "instnorm_poolformer": instnorm([32, 1, 200704]),
    "instnorm_62720": instnorm([32, 1, 62720]),
    "se_mean_112": reduce_mean([32, 112, 112, 32]),
    "se_mean_56": reduce_mean([32, 56, 56, 96]),
    "se_mean_14": reduce_mean([32, 14, 14, 480]),
    "se_mean_7": reduce_mean([32, 7, 7, 1152]),
    "gn_poolformer": groupnorm_nhwc([32, 56, 56, 64]),
    "mixer_gn_64": mixer_groupnorm([32, 56, 56, 64]),
    "mixer_gn_320": mixer_groupnorm([32, 14, 14, 320]),
}


def typed(dims, dtype="f16"):
    return "%s[%s]" % (dtype, ",".join(map(str, dims)))

results = {}
for name, (ins, y, body, nbytes) in models.items():
    src = os.path.join(work, name + ".tcir")
    with open(src, "w") as f:
        # Inputs (name, dims[, dtype]) and the result (dims or (dims, dtype)): f16 unless given.
        f.write("module @m {\n  func @main(%s) -> (%s) {\n%s    return %%y\n  }\n}\n" %
                (", ".join("%%%s: %s" % (a[0], typed(*a[1:])) for a in ins),
                 typed(*y) if isinstance(y, tuple) else shape(y), body))
    for tag, b in bins:
        tool = lambda t: os.path.join(b, t)
        base = os.path.join(work, "%s.%s" % (name, tag))
        tc_run = args.tc_run or os.path.join(bins[-1][1], "tc-run")
        try:
            if not args.run_only:
                subprocess.run([tool("tc-opt"), "-O2", "--target=cuda", src, "-o",
                                base + ".tcbc"], check=True)
                subprocess.run([tool("tc-codegen"), "--target=cuda", base + ".tcbc", "-o",
                                base + ".tcx"], check=True)
            if args.compile_only:
                continue
            out = subprocess.run([tc_run, base + ".tcx", "--random-inputs", "--iterations",
                                  str(args.iterations), "--report=json"],
                                 check=True, capture_output=True, text=True).stdout
            ms = json.loads(out)["device_ms"]["median"]
        except (subprocess.CalledProcessError, KeyError, ValueError) as e:
            print("%s %s: failed (%s)" % (name, tag, e), file=sys.stderr)
            ms = None
        results[(name, tag)] = ms
        gbs = nbytes / (ms * 1e-3) / 1e9 if ms else 0
        print("%-20s %-6s %s ms  %.0f GB/s" % (name, tag, "%.4f" % ms if ms else "-", gbs),
              flush=True)

if args.compile_only:
    print("artifacts in " + work)
    sys.exit(0)
print("\n| model | MB moved | " + " | ".join("%s ms | %s GB/s" % (t, t) for t, _ in bins) + " |")
print("|---|---|" + "---|---|" * len(bins))
for name, (_, _, _, nbytes) in models.items():
    row = "| %s | %.1f |" % (name, nbytes / 1e6)
    for tag, _ in bins:
        ms = results[(name, tag)]
        row += " %s | %s |" % ("%.4f" % ms if ms else "-",
                               "%.0f" % (nbytes / (ms * 1e-3) / 1e9) if ms else "-")
    print(row)
