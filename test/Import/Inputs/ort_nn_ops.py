"""Differential test of the normalization, pooling, reduction and resampling
ops against onnxruntime, across the opsets whose forms the importer converts:
random single-op models (Reduce* with axes as attribute or input and
noop_with_empty_axes, ArgMax/ArgMin, MaxPool with indices, AveragePool,
LpPool, global pools, ConvTranspose, BatchNormalization (spatial = 0 too),
Instance/Layer/Group/Lp/MeanVariance normalization, LRN, Hardmax, CumSum,
TopK, Resize from opset 10 to 19, Upsample, Pad from opset 7 to 19, Einsum).

    ort_nn_ops.py SEED COUNT WORKDIR

Each case: build the model with onnx.helper (compile-time inputs as
initializers), tc-import it, let tc-run make random inputs, run onnxruntime
on them (utils/ort_reference.py), compare. Prints one line per failing case
and "nn random ops: P passed, F failed".
"""
import os
import random
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "utils"))
from ort_reference import run_step  # noqa: E402
F, I64, I32 = TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def ints(name, values, dtype=np.int64):
    return numpy_helper.from_array(np.array(values, dtype), name)


def floats(name, values):
    return numpy_helper.from_array(np.array(values, np.float32), name)


def rng(r):
    return np.random.default_rng(r.randint(0, 1 << 30))


# Each case returns (nodes, inputs, initializers, opset).

def reduce_case(r):
    op = r.choice(["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                   "ReduceL2", "ReduceLogSumExp", "ReduceSumSquare"])
    rank = r.randint(1, 4)
    shape = [r.randint(1, 4) for _ in range(rank)]
    axes = sorted(r.sample(range(-rank, rank), r.randint(0, rank)), key=lambda a: a % rank)
    axes = list({a % rank: a for a in axes}.values())
    since = 13 if op == "ReduceSum" else 18
    opset = r.choice([11, since - 1 if since == 18 else 11, since, 19])
    attrs = {"keepdims": r.randint(0, 1)}
    inits, inputs = [], ["x"]
    if opset < since:
        if axes:
            attrs["axes"] = axes
    else:
        if axes or r.random() < 0.3:
            inits.append(ints("axes", axes))
            inputs.append("axes")
        if r.random() < 0.3:
            attrs["noop_with_empty_axes"] = 1
    return [helper.make_node(op, inputs, ["y"], **attrs)], [vi("x", F, shape)], inits, opset


def arg_case(r):
    rank = r.randint(1, 4)
    shape = [r.randint(1, 4) for _ in range(rank)]
    opset = r.choice([11, 12, 13])
    attrs = {"axis": r.randint(-rank, rank - 1), "keepdims": r.randint(0, 1)}
    if opset >= 12:
        attrs["select_last_index"] = r.randint(0, 1)
    elem = r.choice([F, I32])
    return ([helper.make_node(r.choice(["ArgMax", "ArgMin"]), ["x"], ["y"], **attrs)],
            [vi("x", elem, shape)], [], opset)


def pool_attrs(r, sp, opset, op):
    k = [r.randint(1, 3) for _ in range(sp)]
    attrs = {"kernel_shape": k}
    dil_ok = (op == "MaxPool" and opset >= 10) or (op == "AveragePool" and opset >= 19) or \
        (op == "LpPool" and opset >= 18)
    auto_pad = r.choice(["NOTSET", "NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"])
    if auto_pad.startswith("SAME"):
        # onnxruntime rejects the negative padding of a stride above the kernel.
        k = [max(kk, 2) for kk in k]
        attrs["kernel_shape"] = k
    # onnxruntime has no dilated SAME pooling.
    dil_ok = dil_ok and not auto_pad.startswith("SAME")
    dil = [r.randint(1, 2) if dil_ok and r.random() < 0.5 else 1 for _ in range(sp)]
    if dil_ok and any(d > 1 for d in dil):
        attrs["dilations"] = dil
    strides = [r.randint(1, 3) for _ in range(sp)]
    if auto_pad.startswith("SAME"):
        strides = [min(s, kk) for s, kk in zip(strides, k)]
    attrs["strides"] = strides
    if auto_pad == "NOTSET":
        # ONNX: pads smaller than the kernel.
        attrs["pads"] = [r.randint(0, kk - 1) for kk in k + k]
    else:
        attrs["auto_pad"] = auto_pad
    if (op != "LpPool" and opset >= 10 or opset >= 18) and r.random() < 0.4:
        attrs["ceil_mode"] = 1
    size = [r.randint(d * (kk - 1) + 1, 6) for d, kk in zip(dil, k)]
    return attrs, size


def pool_case(r):
    op = r.choice(["MaxPool", "MaxPool", "AveragePool", "LpPool"])
    sp = r.choice([1, 2, 2, 3])
    opset = r.choice([11, 12, 18, 19]) if op != "MaxPool" else r.choice([8, 11, 12, 18])
    attrs, size = pool_attrs(r, sp, opset, op)
    if op == "MaxPool" and opset < 10:
        attrs.pop("ceil_mode", None)
        attrs.pop("dilations", None)
    if op == "AveragePool" and r.random() < 0.5:
        attrs["count_include_pad"] = 1
    if op == "LpPool":
        attrs["p"] = r.choice([1, 2, 3])
    outs = ["y"]
    if op == "MaxPool" and r.random() < 0.4 and "ceil_mode" not in attrs:
        outs.append("i")
        if sp == 2 and r.random() < 0.5:
            attrs["storage_order"] = 1
    x = vi("x", F, [r.randint(1, 2), r.randint(1, 3)] + size)
    return [helper.make_node(op, ["x"], outs, **attrs)], [x], [], opset


def global_pool_case(r):
    op = r.choice(["GlobalAveragePool", "GlobalMaxPool"])
    shape = [r.randint(1, 2), r.randint(1, 3)] + [r.randint(1, 4) for _ in range(r.randint(1, 3))]
    return [helper.make_node(op, ["x"], ["y"])], [vi("x", F, shape)], [], 13


def conv_transpose_case(r):
    sp = r.choice([1, 2, 2, 3])
    group = r.choice([1, 1, 2])
    cg, mg = r.randint(1, 2), r.randint(1, 3)
    k = [r.randint(1, 3) for _ in range(sp)]
    strides = [r.randint(1, 3) for _ in range(sp)]
    dil = [r.randint(1, 2) for _ in range(sp)]
    size = [r.randint(1, 4) for _ in range(sp)]
    attrs = {"kernel_shape": k, "strides": strides, "dilations": dil, "group": group}
    mode = r.choice(["pads", "pads", "output_shape", "SAME_UPPER", "VALID"])
    if mode == "SAME_UPPER":
        # onnxruntime shrinks the result when the kernel is shorter than the
        # stride (negative total padding); ONNX says in * stride.
        dil = [1] * sp
        strides = [min(s, kk) for s, kk in zip(strides, k)]
        attrs["strides"] = strides
    # (ONNX allows up to max(stride, dilation) - 1, onnxruntime stride - 1.)
    outpad = [r.randint(0, s - 1) for s in strides]
    if any(outpad) and mode not in ("SAME_UPPER", "output_shape"):
        attrs["output_padding"] = outpad
    if mode == "pads":
        # (a result of at least one element: onnxruntime rejects empty ones)
        full = [s * (n - 1) + d * (kk - 1) + 1 for s, n, d, kk in zip(strides, size, dil, k)]
        pads = [r.randint(0, kk - 1) for kk in k]
        attrs["pads"] = pads + [r.randint(0, max(0, min(kk - 1, f - p - 1)))
                                for kk, f, p in zip(k, full, pads)]
    elif mode == "output_shape":
        full = [s * (n - 1) + d * (kk - 1) + 1 for s, n, d, kk in zip(strides, size, dil, k)]
        attrs["output_shape"] = [f - r.randint(0, kk - 1) for f, kk in zip(full, k)]
    else:
        attrs["auto_pad"] = mode
        attrs["dilations"] = dil
    w = numpy_helper.from_array(rng(r).standard_normal([cg * group, mg] + k).astype(np.float32), "w")
    inits, inputs = [w], ["x", "w"]
    if r.random() < 0.5:
        inits.append(floats("b", np.linspace(-1, 1, mg * group)))
        inputs.append("b")
    x = vi("x", F, [r.randint(1, 2), cg * group] + size)
    return [helper.make_node("ConvTranspose", inputs, ["y"], **attrs)], [x], inits, 11


def batch_norm_case(r):
    opset = r.choice([7, 9, 14, 15])
    c = r.randint(1, 4)
    shape = [r.randint(1, 3), c] + [r.randint(1, 3) for _ in range(r.randint(0, 2))]
    attrs = {"epsilon": r.choice([1e-5, 0.01])}
    pshape = [c]
    if opset == 7 and r.random() < 0.5:
        attrs["spatial"] = 0
        pshape = shape[1:]
    g = rng(r)
    inits = [floats("s", g.standard_normal(pshape)), floats("b", g.standard_normal(pshape)),
             floats("m", g.standard_normal(pshape)), floats("v", g.random(pshape) + 0.5)]
    if opset >= 7:
        attrs["momentum"] = 0.9
    return ([helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], **attrs)],
            [vi("x", F, shape)], inits, opset)


def norm_case(r):
    kind = r.choice(["Instance", "Layer", "Layer", "Group18", "Group21", "Lp", "MVN", "LRN"])
    g = rng(r)
    if kind == "Instance":
        c = r.randint(1, 3)
        shape = [r.randint(1, 2), c] + [r.randint(1, 4) for _ in range(r.randint(1, 2))]
        return ([helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], epsilon=0.01)],
                [vi("x", F, shape)],
                [floats("s", g.standard_normal(c)), floats("b", g.standard_normal(c))], 6)
    if kind == "Layer":
        rank = r.randint(1, 4)
        shape = [r.randint(1, 4) for _ in range(rank)]
        axis = r.randint(-rank, rank - 1)
        norm = shape[axis % rank:]
        sshape = norm[r.randint(0, len(norm) - 1):] if r.random() < 0.3 else norm
        inits = [floats("s", g.standard_normal(sshape))]
        inputs = ["x", "s"]
        if r.random() < 0.5:
            inits.append(floats("b", g.standard_normal(norm)))
            inputs.append("b")
        outs = ["y", "mean", "inv"][:r.randint(1, 3)]
        return ([helper.make_node("LayerNormalization", inputs, outs, axis=axis, epsilon=1e-3)],
                [vi("x", F, shape)], inits, 17)
    if kind.startswith("Group"):
        groups = r.randint(1, 3)
        c = groups * r.randint(1, 2)
        shape = [r.randint(1, 2), c] + [r.randint(1, 3) for _ in range(r.randint(0, 2))]
        n = c if kind == "Group21" else groups
        return ([helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"],
                                  num_groups=groups, epsilon=1e-3)],
                [vi("x", F, shape)],
                [floats("s", g.standard_normal(n)), floats("b", g.standard_normal(n))],
                21 if kind == "Group21" else 18)
    rank = r.randint(1, 4) if kind == "Lp" else 4
    # (onnxruntime's MeanVarianceNormalization gives NaN for one-element
    # groups, ONNX 0.)
    shape = [r.randint(1 if kind != "MVN" else 2, 3) for _ in range(rank)]
    if kind == "Lp":
        return ([helper.make_node("LpNormalization", ["x"], ["y"], axis=r.randint(-rank, rank - 1),
                                  p=r.randint(1, 2))], [vi("x", F, shape)], [], 13)
    if kind == "MVN":
        axes = sorted(r.sample(range(4), r.randint(1, 3)))
        return ([helper.make_node("MeanVarianceNormalization", ["x"], ["y"], axes=axes)],
                [vi("x", F, shape)], [], 13)
    return ([helper.make_node("LRN", ["x"], ["y"], size=r.choice([1, 3, 5]), alpha=0.01, beta=0.7,
                              bias=1.5)], [vi("x", F, shape)], [], 13)


def hardmax_case(r):
    rank = r.randint(1, 4)
    shape = [r.randint(1, 4) for _ in range(rank)]
    opset = r.choice([11, 13])
    axis = rank - 1 if opset < 13 else r.randint(-rank, rank - 1)
    return ([helper.make_node("Hardmax", ["x"], ["y"], axis=axis)], [vi("x", F, shape)], [], opset)


def cumsum_case(r):
    rank = r.randint(1, 3)
    shape = [r.randint(1, 4) for _ in range(rank)]
    axis = ints("axis", r.randint(-rank, rank - 1), r.choice([np.int64, np.int32]))
    attrs = {"exclusive": r.randint(0, 1), "reverse": r.randint(0, 1)}
    elem = r.choice([F, I64, TensorProto.DOUBLE])
    return ([helper.make_node("CumSum", ["x", "axis"], ["y"], **attrs)], [vi("x", elem, shape)],
            [axis], r.choice([11, 14]))


def topk_case(r):
    rank = r.randint(1, 3)
    shape = [r.randint(1, 5) for _ in range(rank)]
    axis = r.randint(-rank, rank - 1)
    k = r.randint(0, shape[axis])
    opset = r.choice([9, 10, 11])
    elem = F if opset < 11 else r.choice([F, I64])
    if opset < 10:
        return ([helper.make_node("TopK", ["x"], ["v", "i"], axis=axis % rank, k=max(k, 1))],
                [vi("x", elem, shape)], [], opset)
    attrs = {"axis": axis if opset >= 11 else axis % rank}
    if opset >= 11:
        attrs["largest"] = r.randint(0, 1)
    return ([helper.make_node("TopK", ["x", "k"], ["v", "i"], **attrs)], [vi("x", elem, shape)],
            [ints("k", [k])], opset)


def resize_case(r):
    opset = r.choice([10, 11, 13, 18, 19, 19])
    rank = r.randint(1, 4)
    shape = [r.randint(1, 5) for _ in range(rank)]
    mode = r.choice(["nearest", "linear", "cubic"] if opset >= 11 else ["nearest", "linear"])
    if mode != "nearest" and rank == 1:
        mode = "nearest"
    if mode == "cubic" and rank not in (2, 4):
        mode = "linear"
    # onnxruntime resizes at most the 2 innermost axes for linear and cubic.
    resized = list(range(rank)) if mode == "nearest" else list(range(max(0, rank - 2), rank))
    scales = [1.0] * rank
    for a in resized:
        # (binary fractions: onnxruntime computes coordinates in f32)
        scales[a] = r.choice([0.5, 0.625, 1.0, 1.5, 2.0, 3.0, 0.75, 1.75])
    if opset == 10:
        if mode == "nearest" and any(s > 1 for s in scales) and any(s < 1 for s in scales):
            scales = [max(s, 1.0) for s in scales]
        return ([helper.make_node("Resize", ["x", "s"], ["y"], mode=mode)], [vi("x", F, shape)],
                [floats("s", scales)], 10)
    attrs = {"mode": mode}
    coords = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
              "tf_crop_and_resize"]
    if opset >= 19:
        coords.append("half_pixel_symmetric")
    if opset == 11 and mode == "nearest":
        coords.append("tf_half_pixel_for_nn")
    attrs["coordinate_transformation_mode"] = coord = r.choice(coords)
    if mode == "nearest":
        attrs["nearest_mode"] = r.choice(["round_prefer_floor", "round_prefer_ceil", "floor",
                                          "ceil"])
    if mode == "cubic":
        attrs["cubic_coeff_a"] = r.choice([-0.75, -0.5])
        attrs["exclude_outside"] = r.randint(0, 1)
    inits = []
    roi = ""
    if coord == "tf_crop_and_resize":
        # onnxruntime leaves axes that keep their size alone whatever their
        # roi (ONNX crops them too).
        moved = [a in resized and max(1, int(shape[a] * scales[a] + 0.5)) != shape[a]
                 for a in range(rank)]
        # (binary fractions: onnxruntime computes coordinates in f32, and a
        # nearest rounding must not hinge on that)
        starts = [r.choice([0.0, 0.125, 0.25]) if moved[a] else 0.0 for a in range(rank)]
        ends = [r.choice([1.0, 0.75, 0.875]) if moved[a] else 1.0 for a in range(rank)]
        inits.append(floats("roi", starts + ends))
        roi = "roi"
        attrs["extrapolation_value"] = r.choice([0.0, 5.0])
    # align_corners and tf_crop_and_resize divide by the unrounded output
    # size (ONNX's reference); onnxruntime by the rounded one: with sizes the
    # two agree.
    use_sizes = r.random() < 0.5 or coord in ("align_corners", "tf_crop_and_resize")
    axes = None
    if opset >= 18 and r.random() < 0.4 and mode == "nearest" and coord != "tf_crop_and_resize":
        axes = sorted(r.sample(range(rank), r.randint(1, rank)))
        attrs["axes"] = axes
    if opset >= 18 and mode != "nearest" and r.random() < 0.3 and coord != "tf_crop_and_resize":
        attrs["antialias"] = 1
    listed = axes if axes is not None else list(range(rank))
    if use_sizes:
        sizes = [max(1, int(shape[a] * scales[a] + 0.5)) for a in listed]
        # (one scale for all listed axes: onnxruntime's linear and cubic allow
        # no batch or channel scaling, and align_corners needs sizes exact.)
        if opset >= 18 and r.random() < 0.4 and mode == "nearest" and \
                coord not in ("tf_crop_and_resize", "align_corners"):
            attrs["keep_aspect_ratio_policy"] = r.choice(["not_larger", "not_smaller"])
        inits.append(ints("sizes", sizes))
        inputs = ["x", roi, "", "sizes"]
    else:
        inits.append(floats("scales", [scales[a] for a in listed]))
        inputs = ["x", roi, "scales"]
    if opset == 11:  # roi and scales are required inputs (maybe empty)
        if not roi:
            inits.append(floats("roi", []))
            inputs[1] = "roi"
        if use_sizes:
            inits.append(floats("noscales", []))
            inputs[2] = "noscales"
    return [helper.make_node("Resize", inputs, ["y"], **attrs)], [vi("x", F, shape)], inits, opset


def upsample_case(r):
    opset = r.choice([7, 9])
    rank = r.randint(2, 4)
    shape = [r.randint(1, 3) for _ in range(rank)]
    mode = r.choice(["nearest", "linear"])
    scales = [1.0] * (rank - 2) + [r.choice([1.0, 2.0, 3.0, 1.5]) for _ in range(2)]
    if opset == 7:
        return ([helper.make_node("Upsample", ["x"], ["y"], mode=mode, scales=scales)],
                [vi("x", F, shape)], [], 7)
    return ([helper.make_node("Upsample", ["x", "s"], ["y"], mode=mode)], [vi("x", F, shape)],
            [floats("s", scales)], 9)


def pad_case(r):
    opset = r.choice([7, 11, 13, 18, 19])
    rank = r.randint(1, 4)
    shape = [r.randint(1, 4) for _ in range(rank)]
    modes = ["constant", "reflect", "edge"] + (["wrap"] if opset >= 19 else [])
    mode = r.choice(modes)
    pads = []
    for d in shape * 2:
        hi = d - 1 if mode == "reflect" else 3
        lo = -1 if mode == "constant" and d > 1 and opset >= 11 else 0
        pads.append(r.randint(lo, max(lo, hi)))
    elem = r.choice([F, I64]) if opset >= 11 else F
    if opset < 11:
        attrs = {"mode": mode, "pads": pads}
        if mode == "constant":
            attrs["value"] = 1.5
        return [helper.make_node("Pad", ["x"], ["y"], **attrs)], [vi("x", F, shape)], [], 7
    inits = [ints("pads", pads)]
    inputs = ["x", "pads"]
    if mode == "constant" and r.random() < 0.7:
        inits.append(numpy_helper.from_array(
            np.array(3 if elem == I64 else -2.5, np.int64 if elem == I64 else np.float32), "v"))
        inputs.append("v")
    if opset >= 18 and r.random() < 0.5:
        axes = sorted(r.sample(range(rank), r.randint(1, rank)))
        inits[0] = ints("pads", [pads[a] for a in axes] + [pads[a + rank] for a in axes])
        while len(inputs) < 3:
            inputs.append("")
        inits.append(ints("axes", [a - rank if r.random() < 0.5 else a for a in axes]))
        inputs.append("axes")
    return ([helper.make_node("Pad", inputs, ["y"], mode=mode)], [vi("x", elem, shape)], inits,
            opset)


EINSUMS = [
    ("ij,jk->ik", [["i", "j"], ["j", "k"]]), ("bij,bjk->bik", [["b", "i", "j"], ["b", "j", "k"]]),
    ("ij->ji", [["i", "j"]]), ("ii->i", [["i", "i"]]), ("ii", [["i", "i"]]),
    ("i,i", [["i"], ["i"]]), ("i,j->ij", [["i"], ["j"]]), ("...ij,...jk->...ik", None),
    ("ij->", [["i", "j"]]), ("ijk->kji", [["i", "j", "k"]]), ("bi,bj,bk->bijk", None),
    ("ab,bc", [["a", "b"], ["b", "c"]]),
]


def einsum_case(r):
    eq, dims = r.choice(EINSUMS)
    size = {c: r.randint(1, 4) for c in "abcijk"}
    if eq == "...ij,...jk->...ik":
        batch = [r.randint(1, 3) for _ in range(r.randint(0, 2))]
        shapes = [batch + [size["i"], size["j"]],
                  [1 if r.random() < 0.3 else d for d in batch] + [size["j"], size["k"]]]
    elif eq == "bi,bj,bk->bijk":
        shapes = [[size["b"], size[c]] for c in "ijk"]
    else:
        shapes = [[size[c] for c in d] for d in dims]
    names = [f"x{i}" for i in range(len(shapes))]
    return ([helper.make_node("Einsum", names, ["y"], equation=eq)],
            [vi(n, F, s) for n, s in zip(names, shapes)], [], 12)


CASES = [reduce_case, reduce_case, arg_case, pool_case, pool_case, global_pool_case,
         conv_transpose_case, batch_norm_case, norm_case, norm_case, hardmax_case, cumsum_case,
         topk_case, resize_case, resize_case, resize_case, upsample_case, pad_case, pad_case,
         einsum_case]


def build(case_fn, r, path):
    nodes, inputs, inits, opset = case_fn(r)
    probe = helper.make_model(helper.make_graph(nodes, "case", inputs, [], inits),
                              opset_imports=[helper.make_opsetid("", opset)])
    # GroupNormalization-18 is deprecated: onnx checks and infers it no more.
    legacy = nodes[0].op_type == "GroupNormalization" and opset < 21
    if not legacy:
        probe = onnx.shape_inference.infer_shapes(probe, strict_mode=True)
    known = {v.name: v for v in probe.graph.value_info}
    # (GroupNormalization-21 gets no inferred type: it has its input's.)
    same = onnx.ValueInfoProto()
    same.CopyFrom(inputs[0])
    outs = []
    for o in nodes[-1].output:
        if o:
            same.name = o
            outs.append(known.get(o, onnx.ValueInfoProto.FromString(same.SerializeToString())))
    g = helper.make_graph(nodes, "case", inputs, outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    if not legacy:
        onnx.checker.check_model(m, full_check=True)
    onnx.save(m, path)
    return f"{nodes[0].op_type}-{opset}"


def main():
    seed, count, work = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    os.makedirs(work, exist_ok=True)
    r = random.Random(seed)
    passed = failed = 0
    for i in range(count):
        d = os.path.join(work, f"case{i}")
        os.makedirs(d, exist_ok=True)
        model = os.path.join(d, "model.onnx")
        try:
            op = build(CASES[i % len(CASES)], r, model)
        except Exception as e:  # a case onnx itself rejects: a bug in this script
            failed += 1
            print(f"FAIL case{i}: building the model: {e}".splitlines()[0])
            continue
        ir = os.path.join(d, "model.tcbc")
        steps = [["tc-import", model, "-o", ir],
                 ["tc-run", ir, "--random-inputs", "--seed", str(i), "--output-dir",
                  os.path.join(d, "in")],
                 ["onnxruntime", model, os.path.join(d, "in"), os.path.join(d, "ort")],
                 ["tc-run", ir, "--inputs", os.path.join(d, "in"), "--compare",
                  os.path.join(d, "ort")]]
        for s in steps:
            rc, out = run_step(s)
            if rc != 0:
                failed += 1
                msg = [l for l in out.strip().splitlines()
                       if "MISMATCH" in l or "error" in l.lower()] or \
                    out.strip().splitlines()
                print(f"FAIL case{i} ({op}): {os.path.basename(s[0])}: {msg[-1] if msg else ''}")
                break
        else:
            passed += 1
    print(f"nn random ops: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


main()
