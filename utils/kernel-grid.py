#!/usr/bin/env python3
"""The kernel-family grid benchmark (issue 36, item 1): every family of
generated kernels over a generated grid of shapes and dtypes, each point a
one-op (or small-chain) tcir model, checked against the reference executor,
timed with tc-prof, and reported as a fraction of its roofline, beside the
same op in PyTorch (eager and torch.compile) in the same process.

    utils/kernel-grid.py [--bin build/bin] [--target cuda|cpu]
                         [--families a,b] [--dtypes f32,f16,bf16]
                         [--max-points N] [--budget-mb MB] [--jobs N]
                         [--iterations N] [--out grid.jsonl] [--report grid.md]
                         [--peak-gbps G] [--peak-tflops T] [--peak-tflops-simt T]
                         [--smoke] [--work DIR] [--list]

Per point (named family/dtype/shape, stable across runs):
  1. write WORK/<name>.tcir; `tc-opt -O2 --target=T | tc-codegen --target=T`
     (in parallel, --jobs), and the reference outputs: `tc-run --target=ref`
     of the tcir on `--random-inputs --seed S`;
  2. (serially) `tc-run <artifact> --random-inputs --seed S --compare REF`
     with the dtype's tolerance: a mismatch is status `mismatch`, not timed;
  3. `tc-prof --random-inputs --warmup W --iterations N --format=json`: the
     point's time is the sum of its rows' us_per_run (every step: kernels,
     library calls, copies; CUPTI memcpy/memset rows of the run's own input
     and output transfers are left out and recorded as `memcpy_us`);
  4. roofline fraction = max(bytes / peak bandwidth, flops / peak FLOP/s) /
     time, with bytes the minimum traffic (every input read once, every
     output written once) and flops the family's count; the FLOP peak is the
     tensor-core one (--peak-tflops) for points whose FLOPs run on tensor
     cores (attention in f16/bf16), the non-tensor one (--peak-tflops-simt)
     for the rest. A point is memory-bound when its bytes term is the larger.
  5. with torch and a CUDA device (target cuda only): the family's torch
     function on tensors of the same shapes and dtypes, eager and
     torch.compile() (default mode), median of CUDA-event timings after
     warm-up; speedup = torch ms / tc ms.

One table (FAMILIES) maps each family to its shape generator and its
builder, and each builder returns both the tcir body and the torch function
of a point: one source of truth. Shapes: extents from geometric sequences
(ratio 2.83: 1, 3, 8, 23, 64, 181, 512, ...: odd and power-of-two sizes
alike), the free extent filling the byte budget (--budget-mb, and an eighth
of it), crossed with the dtypes; --max-points keeps N evenly spaced points
per family and dtype.

Output: one JSON line per point (--out) and a markdown report (--report):
per family, points, failures, median and worst roofline fraction, the
memory-bound points with >= 16 MB of traffic below 35% and 70% of the
roofline (issue 36's floor), median tc/eager and tc/compile, then the worst
points and the failures. Exit status: 0 when every point ran (failures are
results), 1 on a bad flag or a missing tool.

Peaks (H200 defaults): 4800 GB/s HBM3e; 989 TFLOP/s dense f16/bf16 tensor
core; 67 TFLOP/s f32 non-tensor (the SIMT peak used for every non-tensor-core
FLOP). On the CPU give the machine's own (--peak-gbps, --peak-tflops-simt):
the defaults make CPU fractions small but well defined."""
import argparse, collections, concurrent.futures, json, math, os, shlex, shutil, statistics
import platform, subprocess, sys, tempfile
import numpy as np

ELEM = {"f32": 4, "f16": 2, "bf16": 2, "i64": 8}
TOL = {"f32": (1e-3, 1e-4), "f16": (2e-2, 2e-2), "bf16": (8e-2, 8e-2)}  # rtol, atol
MB = 1 << 20


# ---- shapes ---------------------------------------------------------------

def geom(lo, hi, ratio=2.83):
    """lo, lo*r, lo*r^2, ... <= hi, rounded: 1, 3, 8, 23, 64, 181, 512, ..."""
    out, x = [], float(lo)
    while round(x) <= hi:
        if not out or round(x) != out[-1]:
            out.append(int(round(x)))
        x *= ratio
    return out


def fill(budget, per_unit, lo=1):
    """How many units of per_unit bytes fit the budget (at least lo)."""
    return max(lo, int(budget // max(per_unit, 1)))


def nel(dims):
    return math.prod(dims)


def ty(dims, t):
    return "%s[%s]" % (t, ",".join(map(str, dims)))


class Op:
    """One point's model: inputs (name, dims, dtype), constants (name, tcir
    line, bytes), outputs (name, dims, dtype), the tcir body, FLOPs, whether
    they run on tensor cores, and the torch function (inputs as tensors, in
    order; constants it needs are closed over as numpy arrays)."""

    def __init__(self, inputs, outputs, body, flops, torch_fn, consts=(), tensor_core=False,
                 reads=None):
        self.inputs, self.outputs, self.body = inputs, outputs, body
        self.consts, self.flops, self.torch_fn = list(consts), flops, torch_fn
        self.tensor_core, self.reads = tensor_core, reads

    def bytes(self):
        """The minimum traffic: the inputs and constants read once (or
        `reads`, for ops that read only part of an input: Gather, Slice), the
        outputs written once."""
        reads = self.reads if self.reads is not None else (
            sum(nel(d) * ELEM[t] for _, d, t in self.inputs) + sum(b for _, _, b in self.consts))
        return reads + sum(nel(d) * ELEM[t] for _, d, t in self.outputs)

    def tcir(self):
        args = ", ".join("%%%s: %s" % (n, ty(d, t)) for n, d, t in self.inputs)
        res = ", ".join(ty(d, t) for _, d, t in self.outputs)
        lines = ["    " + line for _, line, _ in self.consts]
        lines += ["    " + line for line in self.body]
        lines.append("    return " + ", ".join("%" + n for n, _, _ in self.outputs))
        return "module @m {\n  func @main(%s) -> (%s) {\n%s\n  }\n}\n" % (args, res,
                                                                       "\n".join(lines))


def const_i64(name, values, dims=None):
    values = [int(v) for v in np.asarray(values).reshape(-1)]
    dims = dims or [len(values)]
    return (name, "%%%s = const %s [%s]" % (name, ty(dims, "i64"), ", ".join(map(str, values))),
            8 * len(values))


def rng_for(name):
    """A generator seeded by the name (stable across runs, unlike hash())."""
    return np.random.default_rng(sum(ord(c) * 31 ** i for i, c in enumerate(name)) % (1 << 32))


# ---- families: shape generators and builders ------------------------------
# A generator yields parameter dicts (ints and short strings) for a byte
# budget; a builder turns one dict and a dtype into an Op. Names come from the
# dict: family/dtype/k=v,k=v.

def sizes(budget):
    """The two total sizes every family is tried at: the budget and 1/8."""
    return [budget, budget / 8]


def gen_pointwise(budget, e):
    for c in geom(1, 4096):
        for b in geom(3, 512, 8):
            for bc in ("last", "mid", "full"):
                for tot in sizes(budget):
                    yield dict(a=fill(tot, (3 if bc == "full" else 2) * b * c * e), b=b, c=c,
                               bcast=bc)


def pointwise(p, t, torch):
    x = [p["a"], p["b"], p["c"]]
    bd = {"last": [1, 1, p["c"]], "mid": [1, p["b"], 1], "full": x}[p["bcast"]]
    return Op([("x", x, t), ("y", bd, t)], [("z", x, t)],
              ["%%s = Add(%%x, %%y) : %s" % ty(x, t), "%%z = Relu(%%s) : %s" % ty(x, t)],
              2 * nel(x), lambda x, y: torch.relu(x + y))


# name: (reduced axes, which of [a, b, c] is the reduced extent k, the kept
# extent c and the filled extent f)
REDUCE = {"last": ([2], "fck"), "middle": ([1], "fkc"), "leading": ([0], "kfc"),
          "several": ([0, 2], "kfc"), "trailing2": ([1, 2], "fkc"), "columns": ([0], "fc")}


def gen_reduce(budget, e):
    # columns: a batch norm's statistics in NHWC (N*H*W rows filling the
    # budget, C kept), also at 1/64 of it (resnet50's are 3-51 MB).
    for c in geom(1, 4096):
        for tot in sizes(budget) + [budget / 64]:
            yield dict(axes="columns", dims="%dx%d" % (fill(tot, c * e), c))
    # and a training step's bias gradients: a token count's rows (8 x 128
    # to 64 x 128) of a transformer's widths, whatever the budget.
    for c in (768, 1024, 3072, 4096):
        for r in (1024, 2048, 4096, 8192):
            yield dict(axes="columns", dims="%dx%d" % (r, c))
    for name, (_, slots) in REDUCE.items():
        if "k" not in slots:
            continue
        for k in geom(3, 65536):
            for c in geom(1, 4096, 8):
                for tot in sizes(budget):
                    ext = dict(k=k, c=c, f=fill(tot, k * c * e))
                    yield dict(axes=name, dims="x".join(str(ext[s]) for s in slots))


def dims_of(p):
    return list(map(int, p["dims"].split("x")))


def reduce(p, t, torch):
    x, axes = dims_of(p), REDUCE[p["axes"]][0]
    y = [1 if i in axes else d for i, d in enumerate(x)]
    return Op([("x", x, t)], [("y", y, t)],
              ["%%y = ReduceMean(%%x) {axes = [%s]} : %s" % (", ".join(map(str, axes)), ty(y, t))],
              nel(x), lambda x: x.mean(dim=axes, keepdim=True))


def gen_rows(budget, e, lo=3, hi=32768, tensors=2):
    for c in geom(lo, hi):
        for tot in sizes(budget):
            yield dict(r=fill(tot, tensors * c * e), c=c)


def softmax(p, t, torch):
    x = [p["r"], p["c"]]
    return Op([("x", x, t)], [("y", x, t)], ["%%y = Softmax(%%x) {axis = -1} : %s" % ty(x, t)],
              5 * nel(x), lambda x: torch.softmax(x, dim=-1))


def gen_norm(budget, e):
    for kind in ("layernorm", "rmsnorm"):
        for p in gen_rows(budget, e, 8, 16384, 4):
            yield dict(kind=kind, **p)


def norm(p, t, torch):
    """Prologue: a residual Add (its sum is an output too, as in a pre-norm
    block); the norm (LayerNormalization, or RMSNorm as exporters write it);
    epilogue: Gelu."""
    F = torch.nn.functional if torch else None
    x, c = [p["r"], p["c"]], [p["c"]]
    X = ty(x, t)
    body = ["%%h = Add(%%x, %%r) : %s" % X]
    if p["kind"] == "layernorm":
        body.append("%%n = LayerNormalization(%%h, %%s, %%b) {epsilon = 1e-05} : %s" % X)
        ins = [("x", x, t), ("r", x, t), ("s", c, t), ("b", c, t)]

        def fn(x, r, s, b):
            h = x + r
            return h, F.gelu(F.layer_norm(h, (p["c"],), s, b, 1e-5))
    else:
        R = ty([p["r"], 1], t)
        body += ["%%q = Mul(%%h, %%h) : %s" % X,
                 "%%m = ReduceMean(%%q) {axes = [-1]} : %s" % R,
                 "%%eps = const %s [1e-06]" % ty([1], t),
                 "%%v = Add(%%m, %%eps) : %s" % R, "%%d = Sqrt(%%v) : %s" % R,
                 "%%i = Div(%%h, %%d) : %s" % X, "%%n = Mul(%%i, %%s) : %s" % X]
        ins = [("x", x, t), ("r", x, t), ("s", c, t)]

        def fn(x, r, s):
            h = x + r
            return h, F.gelu(h / torch.sqrt((h * h).mean(-1, keepdim=True) + 1e-6) * s)
    body.append("%%y = Gelu(%%n) : %s" % X)
    return Op(ins, [("h", x, t), ("y", x, t)], body, 12 * nel(x), fn)


def perms(rank):
    """Generated permutations: reverse, rotate left and right, swap the last
    two, swap the first two, and move the last axis to 1 (NHWC -> NCHW)."""
    r = list(range(rank))
    out = [r[::-1], r[1:] + r[:1], r[-1:] + r[:-1], r[:-2] + [r[-1], r[-2]],
           [r[1], r[0]] + r[2:], [r[0], r[-1]] + r[1:-1]]
    seen = []
    for q in out:
        if q not in seen and q != r:
            seen.append(q)
    return seen


def gen_transpose(budget, e):
    for rank in range(3, 7):
        for last in geom(3, 512, 8):
            for tot in sizes(budget):
                rest = fill(tot, 2 * last * e)
                side = max(2, int(round(rest ** (1.0 / (rank - 1)))))
                dims = [side] * (rank - 1) + [last]
                dims[0] = max(1, rest // side ** (rank - 2))  # the leading axis fills
                for i, q in enumerate(perms(rank)):
                    yield dict(dims="x".join(map(str, dims)), perm="".join(map(str, q)))


def transpose(p, t, torch):
    x, q = dims_of(p), [int(c) for c in p["perm"]]
    y = [x[i] for i in q]
    return Op([("x", x, t)], [("y", y, t)],
              ["%%y = Transpose(%%x) {perm = [%s]} : %s" % (", ".join(map(str, q)), ty(y, t))],
              0, lambda x: x.permute(*q).contiguous())


def gen_gather(budget, e):
    for d in geom(1, 4096, 8):
        for n in geom(64, 16384, 8):
            yield dict(v=fill(budget / 2, d * e, 2), n=n, d=d)


def indices(name, n, hi, unique=False):
    """n indices in [0, hi), seeded by name; unique: one from each of n
    equal strides, shuffled (O(n), for ScatterND's distinct rows)."""
    r = rng_for(name)
    if not unique:
        return r.integers(0, hi, n, dtype=np.int64)
    stride = hi // n
    return r.permutation(np.arange(n, dtype=np.int64) * stride + r.integers(0, stride, n))


def gather(p, t, torch):
    table, y = [p["v"], p["d"]], [p["n"], p["d"]]
    idx = indices("gather%d" % p["n"], p["n"], p["v"])
    return Op([("x", table, t)], [("y", y, t)], ["%%y = Gather(%%x, %%i) {axis = 0} : %s" % ty(y, t)],
              0, lambda x: x[torch.from_numpy(idx).to(x.device)],
              consts=[const_i64("i", idx)], reads=8 * p["n"] + nel(y) * ELEM[t])


def gen_scatter(budget, e):
    for d in geom(1, 4096, 8):
        for k in geom(64, 16384, 8):
            v = fill(budget / 4, d * e, 2 * k)
            yield dict(v=v, k=k, d=d)


def scatter(p, t, torch):
    data, upd = [p["v"], p["d"]], [p["k"], p["d"]]
    idx = indices("scatter%d" % p["k"], p["k"], p["v"], unique=True)

    def fn(x, u):
        y = x.clone()
        y[torch.from_numpy(idx).to(x.device)] = u
        return y
    return Op([("x", data, t), ("u", upd, t)], [("y", data, t)],
              ["%%y = ScatterND(%%x, %%i, %%u) : %s" % ty(data, t)], 0, fn,
              consts=[const_i64("i", idx, [p["k"], 1])])


def gen_joins(budget, e, parts=(2, 3)):
    """Concat and split: 2 or 3 unequal parts along the middle or last axis."""
    for axis in (1, 2):
        for c in geom(3, 4096, 8):
            for n in parts:
                for tot in sizes(budget):
                    p = dict(axis=axis, a=fill(tot, 2 * 16 * c * e), b=16, c=c)
                    yield dict(p, parts=n) if n else p


def gen_slice(budget, e):
    return gen_joins(budget, e, parts=(None,))


def part_sizes(n, parts):
    """Unequal parts, as models split: 1, 2, ... shares of n."""
    w = list(range(1, parts + 1))
    s = [max(1, n * k // sum(w)) for k in w]
    s[-1] = n - sum(s[:-1])
    return s


def dims_with(x, axis, n):
    y = list(x)
    y[axis] = n
    return y


def concat(p, t, torch):
    x, ax = [p["a"], p["b"], p["c"]], p["axis"]
    ins = [("x%d" % i, dims_with(x, ax, s), t) for i, s in enumerate(part_sizes(x[ax], p["parts"]))]
    return Op(ins, [("y", x, t)],
              ["%%y = Concat(%s) {axis = %d} : %s" % (", ".join("%" + n for n, _, _ in ins), ax,
                                                      ty(x, t))],
              0, lambda *xs: torch.cat(xs, dim=ax))


def split(p, t, torch):
    x, ax = [p["a"], p["b"], p["c"]], p["axis"]
    s = part_sizes(x[ax], p["parts"])
    outs = [("y%d" % i, dims_with(x, ax, n), t) for i, n in enumerate(s)]
    return Op([("x", x, t)], outs,
              ["%s = Split(%%x) {axis = %d, split = [%s]} : %s" %
               (", ".join("%" + n for n, _, _ in outs), ax, ", ".join(map(str, s)),
                ", ".join(ty(d, t) for _, d, _ in outs))],
              0, lambda x: [y.contiguous() for y in torch.split(x, s, dim=ax)])


def slice_(p, t, torch):
    """The middle of the axis, one element off each end (odd offsets)."""
    x, ax = [p["a"], p["b"], p["c"]], p["axis"]
    lo, hi = 1, x[ax] - 1
    y = dims_with(x, ax, hi - lo)
    return Op([("x", x, t)], [("y", y, t)], ["%%y = Slice(%%x, %%s, %%e, %%ax) : %s" % ty(y, t)], 0,
              lambda x: x.narrow(ax, lo, hi - lo).contiguous(),
              consts=[const_i64("s", [lo]), const_i64("e", [hi]), const_i64("ax", [ax])],
              reads=nel(y) * ELEM[t])


def gen_conv(budget, e):
    for cpg in (1, 4, 16):   # channels per group: 1 = depthwise
        for k in (3, 5, 7):
            for c in geom(32, 1024, 4):
                for hw in geom(7, 112, 4):
                    yield dict(cpg=cpg, k=k, n=fill(budget / 2, c * hw * hw * e), c=c, hw=hw)


def conv(p, t, torch):
    n, c, hw, k, g = p["n"], p["c"], p["hw"], p["k"], p["c"] // p["cpg"]
    x, w = [n, c, hw, hw], [c, p["cpg"], k, k]
    pad = k // 2
    return Op([("x", x, t), ("w", w, t)], [("y", x, t)],
              ["%%y = Conv(%%x, %%w) {group = %d, pads = [%d, %d, %d, %d]} : %s" %
               (g, pad, pad, pad, pad, ty(x, t))],
              2 * nel(x) * p["cpg"] * k * k,
              lambda x, w: torch.nn.functional.conv2d(x, w, padding=pad, groups=g))


POOLS = {"max2s2": ("MaxPool", 2, 2, 0), "max3s2": ("MaxPool", 3, 2, 1),
         "avg3s1": ("AveragePool", 3, 1, 1), "avg2s2": ("AveragePool", 2, 2, 0)}


def gen_pool(budget, e):
    for kind in POOLS:
        for c in geom(3, 1024, 8):
            for hw in geom(7, 224, 4):
                yield dict(kind=kind, n=fill(budget / 2, c * hw * hw * e), c=c, hw=hw)


def pool(p, t, torch):
    op, k, s, pad = POOLS[p["kind"]]
    x = [p["n"], p["c"], p["hw"], p["hw"]]
    o = (p["hw"] + 2 * pad - k) // s + 1
    y = [p["n"], p["c"], o, o]
    F = torch.nn.functional if torch else None
    fn = ((lambda x: F.max_pool2d(x, k, s, pad)) if op == "MaxPool" else
          (lambda x: F.avg_pool2d(x, k, s, pad, count_include_pad=False)))
    return Op([("x", x, t)], [("y", y, t)],
              ["%%y = %s(%%x) {kernel_shape = [%d, %d], strides = [%d, %d], pads = [%d, %d, %d, %d]}"
               " : %s" % (op, k, k, s, s, pad, pad, pad, pad, ty(y, t))],
              nel(y) * k * k, fn)


def gen_resize(budget, e):
    for mode in ("nearest", "linear"):
        for c in geom(3, 1024, 8):
            for hw in geom(7, 224, 4):
                yield dict(mode=mode, n=fill(budget / 5, c * hw * hw * e), c=c, hw=hw)


def resize(p, t, torch):
    """2x upsampling as PyTorch's interpolate does it: nearest = asymmetric
    floor, linear = half_pixel (bilinear, align_corners=False)."""
    x = [p["n"], p["c"], p["hw"], p["hw"]]
    y = [p["n"], p["c"], 2 * p["hw"], 2 * p["hw"]]
    attrs = ('mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"'
             if p["mode"] == "nearest" else 'mode = "linear"')
    tmode = "nearest" if p["mode"] == "nearest" else "bilinear"
    return Op([("x", x, t)], [("y", y, t)],
              ["%%y = Resize(%%x, none, none, %%sz) {%s} : %s" % (attrs, ty(y, t))],
              (8 if p["mode"] == "linear" else 0) * nel(y),
              lambda x: torch.nn.functional.interpolate(
                  x, scale_factor=2, mode=tmode, **({} if tmode == "nearest" else
                                                     {"align_corners": False})),
              consts=[const_i64("sz", y)])


def gen_attention(budget, e):
    for d in range(16, 257, 24):          # 16, 40, 64, 88, ...: odd head dims
        for s in geom(64, 4096, 4):
            for mask in ("none", "pad", "causal"):
                h = fill(budget / 4, s * d * e)
                yield dict(mask=mask, h=min(h, 64), s=s, d=d)


def attention(p, t, torch):
    """softmax(q k^T / sqrt(d) + mask) v, [1, H, S, D]; mask `pad`: an
    additive [1, 1, S, S] mask input (random values, as every input: the
    mask's traffic and code path, not a sparsity pattern), or causal."""
    q = [1, p["h"], p["s"], p["d"]]
    ins = [("q", q, t), ("k", q, t), ("v", q, t)]
    attrs = " {causal = 1}" if p["mask"] == "causal" else ""
    args = "%q, %k, %v"
    F = torch.nn.functional if torch else None
    if p["mask"] == "pad":
        m = [1, 1, p["s"], p["s"]]
        ins.append(("m", m, t))
        args += ", %m"
    flops = 4 * p["h"] * p["s"] * p["s"] * p["d"] // (2 if p["mask"] == "causal" else 1)

    def fn(q, k, v, m=None):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m,
                                              is_causal=p["mask"] == "causal")
    return Op(ins, [("o", q, t)], ["%%o = Attention(%s)%s : %s" % (args, attrs, ty(q, t))],
              flops, fn, tensor_core=t != "f32")


FAMILIES = {  # name: (shape generator, builder)
    "pointwise": (gen_pointwise, pointwise),
    "reduce": (gen_reduce, reduce),
    "softmax": (gen_rows, softmax),
    "norm": (gen_norm, norm),
    "transpose": (gen_transpose, transpose),
    "gather": (gen_gather, gather),
    "scatter": (gen_scatter, scatter),
    "concat": (gen_joins, concat),
    "split": (gen_joins, split),
    "slice": (gen_slice, slice_),
    "conv": (gen_conv, conv),
    "pool": (gen_pool, pool),
    "resize": (gen_resize, resize),
    "attention": (gen_attention, attention),
}


def point_name(family, dtype, params):
    return "%s/%s/%s" % (family, dtype, ",".join("%s=%s" % kv for kv in params.items()))


def spaced(items, n):
    """n evenly spaced items (all when n is 0 or more than there are)."""
    if not n or n >= len(items):
        return items
    return [items[round(i * (len(items) - 1) / max(n - 1, 1))] for i in range(n)]


def grid(families, dtypes, budget, max_points):
    points = []
    for fam in families:
        gen, build = FAMILIES[fam]
        for t in dtypes:
            seen, mine = set(), []
            for params in gen(budget, ELEM[t]):
                name = point_name(fam, t, params)
                # The generators fill one extent to the budget; points whose other
                # extents alone pass it are dropped.
                if name not in seen and build(params, t, None).bytes() <= budget:
                    seen.add(name)
                    mine.append(dict(name=name, family=fam, dtype=t, params=params))
            points += spaced(mine, max_points)
    return points


# ---- running --------------------------------------------------------------

TIMEOUT = 600  # seconds a tool may take (--timeout)


def run(cmd, **kw):
    """The tool's result; a tool past TIMEOUT is killed and reads as exit 124."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, **kw)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, 124, "", "timed out after %d s" % TIMEOUT)


def last_line(r):
    lines = (r.stderr or r.stdout or "").strip().splitlines()
    return lines[-1] if lines else "exit %d" % r.returncode


class Runner:
    def __init__(self, args):
        self.a = args
        self.tool = lambda n: os.path.join(args.bin, n)
        self.threads = ["--threads", str(args.threads)] if args.target == "cpu" else []

    def prepare(self, pt):
        """Compile and make the reference outputs (parallel-safe: each point
        its own files); adds the point's files, bytes and FLOPs to pt."""
        a, base = self.a, os.path.join(self.a.work, pt["name"].replace("/", "__"))
        op = FAMILIES[pt["family"]][1](pt["params"], pt["dtype"], None)
        pt.update(bytes=op.bytes(), flops=op.flops, tensor_core=op.tensor_core,
                  tcir=base + ".tcir", tcx=base + ".tcx", ref=base + ".ref")
        with open(pt["tcir"], "w") as f:
            f.write(op.tcir())
        q = shlex.quote
        r = run("%s -O2 --target=%s %s | %s --target=%s %s - -o %s" % (
            q(self.tool("tc-opt")), a.target, q(pt["tcir"]), q(self.tool("tc-codegen")), a.target,
            " ".join(map(q, a.codegen_arg)), q(pt["tcx"])), shell=True)
        if r.returncode:
            return dict(status="compile", error=last_line(r))
        if a.compile_only:
            return dict(status="ok", verified=False)
        if a.verify_max_gflop and op.flops > a.verify_max_gflop * 1e9:
            return dict(status="ok", verified=False)
        seed = a.seed + (1 if a.test_mismatch and a.test_mismatch in pt["name"] else 0)
        r = run([self.tool("tc-run"), "--target=ref", pt["tcir"], "--random-inputs", "--seed",
                 str(seed), "--output-dir", pt["ref"]])
        if r.returncode:
            return dict(status="reference", error=last_line(r))
        return dict(status="ok", verified=True)

    def verify(self, pt):
        rtol, atol = TOL[pt["dtype"]]
        r = run([self.tool("tc-run"), pt["tcx"], "--random-inputs", "--seed", str(self.a.seed),
                 "--compare", pt["ref"], "--rtol", str(rtol), "--atol", str(atol)] + self.threads)
        if r.returncode:
            bad = [l for l in (r.stdout + r.stderr).splitlines() if "MISMATCH" in l.upper() or
                   "error" in l]
            return dict(status="mismatch", error=(bad or [last_line(r)])[0].strip())
        return None

    def time_tc(self, pt):
        a = self.a
        r = run([self.tool("tc-prof"), pt["tcx"], "--random-inputs", "--seed", str(a.seed),
                 "--warmup", str(a.warmup), "--iterations", str(a.iterations), "--format=json"] +
                self.threads)
        if r.returncode:
            return dict(status="run", error=last_line(r))
        rep = json.loads(r.stdout)
        rows = rep.get("rows", [])
        memcpy = [x for x in rows if x.get("kind") in ("memcpy", "memset")]
        us = sum(x["us_per_run"] for x in rows if x not in memcpy)
        return dict(tc_us=us, memcpy_us=sum(x["us_per_run"] for x in memcpy),
                    kernels=len(rows) - len(memcpy), device_ms=rep.get("device_ms"),
                    kinds=sorted({x.get("kind", "?") for x in rows}))

    def roofline(self, pt, us):
        a = self.a
        mem = pt["bytes"] / (a.peak_gbps * 1e9)
        peak = a.peak_tflops if pt["tensor_core"] else a.peak_tflops_simt
        comp = pt["flops"] / (peak * 1e12)
        return dict(roofline=max(mem, comp) / (us * 1e-6) if us > 0 else None,
                    bound="memory" if mem >= comp else "compute")


def torch_module(target):
    if target != "cuda":
        return None
    try:
        import torch
        return torch if torch.cuda.is_available() else None
    except ImportError:
        return None


TORCH_DTYPE = {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}


def time_torch(torch, pt, iterations, warmup):
    """Eager and torch.compile() ms (median of CUDA events) of the point's op."""
    op = FAMILIES[pt["family"]][1](pt["params"], pt["dtype"], torch)
    dt = getattr(torch, TORCH_DTYPE[pt["dtype"]])
    xs = [torch.rand(d, device="cuda", dtype=torch.float32).mul_(2).sub_(1).to(dt)
          for _, d, _ in op.inputs]

    def bench(fn):
        for _ in range(warmup):
            fn(*xs)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        times = []
        for _ in range(iterations):
            start.record()
            fn(*xs)
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
        return statistics.median(times)
    out = {}
    try:
        out["eager_ms"] = bench(op.torch_fn)
    except Exception as e:  # noqa: BLE001 - a failure is a result
        out["torch_error"] = "eager: %s" % str(e).splitlines()[0][:200]
        return out
    try:
        torch._dynamo.reset()
        out["compile_ms"] = bench(torch.compile(op.torch_fn))
    except Exception as e:  # noqa: BLE001
        out["torch_error"] = "compile: %s" % str(e).splitlines()[0][:200]
    return out


# ---- the report -------------------------------------------------------------

def fmt(x, f="%.2f"):
    return "-" if x is None else f % x


def report(rows, args):
    big = 16 * MB
    out = ["# Kernel-family grid", "",
           "target %s, peaks %.0f GB/s, %.0f TFLOP/s tensor, %.0f TFLOP/s non-tensor; %d points"
           % (args.target, args.peak_gbps, args.peak_tflops, args.peak_tflops_simt, len(rows)), "",
           "| family | points | failed | median roofline | worst roofline | mem-bound >= 16 MB "
           "| < 35% | < 70% | median tc/eager | median tc/compile |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    med = lambda v: statistics.median(v) if v else None
    for fam in dict.fromkeys(r["family"] for r in rows):
        mine = [r for r in rows if r["family"] == fam]
        ok = [r for r in mine if r["status"] == "ok" and r.get("roofline") is not None]
        roof = [r["roofline"] for r in ok]
        floor = [r for r in ok if r["bound"] == "memory" and r["bytes"] >= big]
        ratio = lambda k: med([r[k] for r in ok if r.get(k)])
        out.append("| %s | %d | %d | %s | %s | %d | %d | %d | %s | %s |" % (
            fam, len(mine), len(mine) - len(ok), fmt(med(roof), "%.3g"),
            fmt(min(roof) if roof else None, "%.3g"), len(floor),
            sum(r["roofline"] < 0.35 for r in floor), sum(r["roofline"] < 0.70 for r in floor),
            fmt(ratio("speedup_eager")), fmt(ratio("speedup_compile"))))
    ok = sorted((r for r in rows if r["status"] == "ok" and r.get("roofline") is not None),
                key=lambda r: r["roofline"])
    floor = [r for r in ok if r["bound"] == "memory" and r["bytes"] >= big]
    vs = [r for r in ok if r.get("speedup_compile")]
    out += ["", "Issue 36's floor: %d of %d memory-bound points with >= 16 MB at >= 70%% of the "
            "roofline (needs >= 90%%), %d below 35%% (needs none); %d of %d points at >= 1.0x "
            "torch.compile (needs all)." % (
                sum(r["roofline"] >= 0.70 for r in floor), len(floor),
                sum(r["roofline"] < 0.35 for r in floor),
                sum(r["speedup_compile"] >= 1.0 for r in vs), len(vs))]
    out += ["", "## Worst points", "",
            "| point | bytes | GFLOP | bound | tc us | roofline | tc/eager | tc/compile |",
            "|---|---|---|---|---|---|---|---|"]
    for r in ok[:args.worst]:
        out.append("| %s | %.1f MB | %.3g | %s | %.1f | %.3g | %s | %s |" % (
            r["name"], r["bytes"] / MB, r["flops"] / 1e9, r["bound"], r["tc_us"], r["roofline"],
            fmt(r.get("speedup_eager")), fmt(r.get("speedup_compile"))))
    bad = [r for r in rows if r["status"] != "ok"]
    out += ["", "## Failures", ""] + (["| point | status | error |", "|---|---|---|"] +
                                       ["| %s | %s | %s |" % (r["name"], r["status"],
                                                              r.get("error", "").replace("|", "/"))
                                        for r in bad] if bad else ["none"])
    unverified = [r["name"] for r in rows if r["status"] == "ok" and not r.get("verified")]
    if unverified:
        out += ["", "Not checked against the reference (over --verify-max-gflop): " +
                ", ".join(unverified)]
    return "\n".join(out) + "\n"


def device_name(target, torch):
    """What the points ran on, recorded in every row (tc-bench --import-grid
    makes it the run's device): the GPU's name, or the CPU's model name."""
    if target == "cuda":
        if torch:
            return torch.cuda.get_device_name(0)
        try:
            return subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                                  capture_output=True, text=True, timeout=30).stdout.splitlines()[0]
        except (OSError, IndexError, subprocess.SubprocessError):
            return "cuda"
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or "cpu"


def measure(runner, torch, row):
    """Check, time and compare one compiled point (serially: the device's alone)."""
    for step in (runner.verify if row["verified"] else lambda pt: None, runner.time_tc):
        row.update(step(row) or {})
        if row["status"] != "ok":
            return
    row.update(runner.roofline(row, row["tc_us"]))
    if torch:
        a = runner.a
        row.update(time_torch(torch, row, a.iterations, a.warmup))
        for k in ("eager", "compile"):
            if row.get(k + "_ms") and row["tc_us"] > 0:
                row["speedup_" + k] = row[k + "_ms"] * 1e3 / row["tc_us"]


def summary(row, compile_only):
    if row["status"] != "ok":
        return "FAIL %s: %s" % (row["status"], row.get("error"))
    if compile_only:
        return "compiled"
    return "%.1f us, roofline %.3g (%s)%s" % (
        row["tc_us"], row["roofline"], row["bound"],
        "".join(", tc/%s %.2fx" % (k, row["speedup_" + k]) for k in ("eager", "compile")
                if row.get("speedup_" + k)))


def main():
    global TIMEOUT
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(here, "..", "build", "bin"))
    ap.add_argument("--target", choices=("cpu", "cuda"), default="cuda")
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--dtypes", default="f32,f16,bf16")
    ap.add_argument("--max-points", type=int, default=12,
                    help="evenly spaced points per family and dtype (0: all)")
    ap.add_argument("--budget-mb", type=float, default=256,
                    help="bytes moved by the largest points (the others: an eighth)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="CPU target: tc's threads")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--peak-gbps", type=float, default=4800.0)
    ap.add_argument("--peak-tflops", type=float, default=989.0,
                    help="dense f16/bf16 tensor-core peak (attention in f16/bf16)")
    ap.add_argument("--peak-tflops-simt", type=float, default=67.0,
                    help="non-tensor (f32 FMA) peak: every other FLOP")
    ap.add_argument("--verify-max-gflop", type=float, default=20.0,
                    help="points with more FLOPs are not checked against the reference "
                         "executor (it runs on the host); 0: check all")
    ap.add_argument("--torch", choices=("auto", "off"), default="auto")
    ap.add_argument("--codegen-arg", action="append", default=[], metavar="ARG",
                    help="one more tc-codegen flag (repeatable), e.g. --codegen-arg=--tune: "
                         "each point's kernel variants timed at compile time (docs/cuda-backend.md)")
    ap.add_argument("--timeout", type=int, default=TIMEOUT,
                    help="seconds one tool may run (then the point fails: status of its step)")
    ap.add_argument("--out", default="kernel-grid.jsonl")
    ap.add_argument("--report", default=None)
    ap.add_argument("--worst", type=int, default=20, help="worst points listed")
    ap.add_argument("--work", default=None, help="keep the models and artifacts here")
    ap.add_argument("--smoke", action="store_true",
                    help="a tiny grid for CI: 1 point per family and dtype, 64 KB budget")
    ap.add_argument("--match", default=None,
                    help="only the points whose name contains this (after --max-points)")
    ap.add_argument("--list", action="store_true", help="print the points and stop")
    ap.add_argument("--from-jsonl", default=None, metavar="FILES",
                    help="no runs: write --report from these JSON lines files (comma-separated: "
                         "the parts of a grid run in several calls)")
    ap.add_argument("--compile-only", action="store_true",
                    help="compile every point (no reference, no runs): checks the grid's "
                         "models on a machine without the device")
    ap.add_argument("--test-mismatch", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    TIMEOUT = a.timeout
    if a.from_jsonl:
        rows = [json.loads(line) for f in a.from_jsonl.split(",") for line in open(f)]
        with open(a.report or "/dev/stdout", "w") as f:
            f.write(report(rows, a))
        return 0
    if a.smoke:
        a.max_points, a.budget_mb, a.iterations, a.warmup = 1, 1 / 16, 3, 1
    families = [f for f in a.families.split(",") if f]
    for f in families:
        if f not in FAMILIES:
            sys.exit("error: unknown family %s (have %s)" % (f, ", ".join(FAMILIES)))
    dtypes = [t for t in a.dtypes.split(",") if t]
    for t in dtypes:
        if t not in TOL:
            sys.exit("error: unknown dtype %s" % t)
    points = [p for p in grid(families, dtypes, a.budget_mb * MB, a.max_points)
              if not a.match or a.match in p["name"]]
    if a.list:
        for p in points:
            print(p["name"])
        return 0
    for t in ("tc-opt", "tc-codegen", "tc-run", "tc-prof"):
        if not os.access(os.path.join(a.bin, t), os.X_OK):
            sys.exit("error: no %s in %s (--bin)" % (t, a.bin))
    keep = a.work is not None
    a.work = a.work or tempfile.mkdtemp(prefix="tc-kernel-grid-")
    os.makedirs(a.work, exist_ok=True)
    torch = torch_module(a.target) if a.torch == "auto" else None
    print("%d points, target %s, torch %s" % (len(points), a.target,
                                              torch.__version__ if torch else "off"), flush=True)
    runner = Runner(a)
    rows = []
    where = dict(target=a.target, device=device_name(a.target, torch))
    with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as pool, open(a.out, "w") as out:
        # Prepared points wait for the serial part in a window of 2 x jobs: their
        # reference outputs (as large as the point's traffic) are removed once used.
        ahead, todo = collections.deque(), iter(points)
        while True:
            while len(ahead) < 2 * max(1, a.jobs):
                pt = next(todo, None)
                if pt is None:
                    break
                ahead.append((pt, pool.submit(runner.prepare, pt)))
            if not ahead:
                break
            pt, prep = ahead.popleft()
            row = dict(pt, **prep.result(), **where)
            if row["status"] == "ok" and not a.compile_only:
                measure(runner, torch, row)
            shutil.rmtree(row.pop("ref"), ignore_errors=True)
            for k in ("tcir", "tcx"):
                row.pop(k)
            rows.append(row)
            out.write(json.dumps(row, sort_keys=True) + "\n")
            out.flush()
            print("%s: %s" % (row["name"], summary(row, a.compile_only)), flush=True)
    if a.report:
        with open(a.report, "w") as f:
            f.write(report(rows, a))
    if not keep:
        shutil.rmtree(a.work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
