#!/usr/bin/env python3
"""Op-coverage models: one small ONNX model per op family, each op form a node
of its own (named for the form) whose result is a model output, the forms
real exports produce (torch dynamo / TorchScript, timm, transformers).

    python3 models/make_coverage_models.py OUTDIR [FAMILY...]  # writes OUTDIR/<family>.onnx

test/CodeGen/op-coverage.test compiles every family for each target with
--stats and requires the host steps to be exactly the forms listed in
test/CodeGen/Inputs/op-coverage-host.txt (so a kernel that lands removes its
line, and a form that falls back to the host fails the test), and runs the
CPU artifacts against the reference executor. Index operands are constants in
range; the inputs are random floats in [-1, 1) without 0.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

F = T.FLOAT
rng = np.random.default_rng(0)


class Family:
    """A model under construction: inputs x4 f32[N,8,16,16], x3 f32[N,16,32],
    ids i64[N,16] (token ids: random integers in [1, 9]), lens i32[N]
    (sequence lengths: random integers in [1, 9])."""

    def __init__(self, name, opset=18):
        self.name, self.opset = name, opset
        self.nodes, self.inits, self.outputs = [], [], []

    def const(self, form, name, value, dtype=None):
        arr = np.array(value, dtype=dtype)
        full = f"{form}_{name}"
        self.inits.append(nh.from_array(arr, full))
        return full

    def form(self, form, op, inputs, n_out=1, out_type=F, **attrs):
        """One node `form` of op type `op`; its first n_out results are outputs."""
        outs = [f"{form}_y{i}" for i in range(n_out)]
        self.nodes.append(h.make_node(op, inputs, outs, name=form, **attrs))
        for o in outs:
            self.outputs.append(h.make_tensor_value_info(o, out_type if o == outs[0] else T.INT64, None))
        return outs[0]

    def chain(self, form, steps, out_type=F):
        """A chain of nodes named form/0, form/1 ...: steps are (op, inputs, attrs);
        '$k' in inputs names step k's result. The last result is an output."""
        names = []
        for k, (op, inputs, attrs) in enumerate(steps):
            ins = [names[int(i[1:])] if i.startswith("$") else i for i in inputs]
            out = f"{form}_t{k}"
            self.nodes.append(h.make_node(op, ins, [out], name=f"{form}/{k}", **attrs))
            names.append(out)
        self.outputs.append(h.make_tensor_value_info(names[-1], out_type, None))

    def model(self):
        ins = [h.make_tensor_value_info("x4", F, ["N", 8, 16, 16]),
               h.make_tensor_value_info("x3", F, ["N", 16, 32]),
               h.make_tensor_value_info("ids", T.INT64, ["N", 16]),
               h.make_tensor_value_info("lens", T.INT32, ["N"])]
        used = {i for n in self.nodes for i in n.input}
        ins = [i for i in ins if i.name in used]
        g = h.make_graph(self.nodes, self.name, ins, self.outputs, initializer=self.inits)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", self.opset)])
        m.ir_version = 10
        return m


def movement():
    f = Family("movement", opset=19)  # Pad mode "wrap"
    f.form("gather_elements", "GatherElements", ["x3", f.const("gather_elements", "i", rng.integers(0, 32, (2, 16, 5)))], axis=2)
    f.form("gather_nd", "GatherND", ["x3", f.const("gather_nd", "i", [[0, 1], [1, 15], [0, 3]])])
    f.form("scatter_nd", "ScatterND", ["x3", f.const("scatter_nd", "i", [[1], [0]]),
                                       f.const("scatter_nd", "u", rng.standard_normal((2, 16, 32)), np.float32)])
    f.form("scatter_elements", "ScatterElements", ["x3", f.const("scatter_elements", "i", rng.integers(0, 32, (2, 16, 3))),
                                                   f.const("scatter_elements", "u", rng.standard_normal((2, 16, 3)), np.float32)], axis=2)
    f.form("slice_step2", "Slice", ["x3", f.const("slice_step2", "s", [1]), f.const("slice_step2", "e", [32]),
                                    f.const("slice_step2", "a", [2]), f.const("slice_step2", "st", [2])])
    f.form("slice_reverse", "Slice", ["x3", f.const("slice_reverse", "s", [-1]), f.const("slice_reverse", "e", [-1000]),
                                      f.const("slice_reverse", "a", [1]), f.const("slice_reverse", "st", [-1])])
    # torch.roll as exported: two Slices and a Concat.
    f.chain("roll", [("Slice", ["x3", f.const("roll", "s0", [29]), f.const("roll", "e0", [32]), f.const("roll", "a", [2])], {}),
                     ("Slice", ["x3", f.const("roll", "s1", [0]), f.const("roll", "e1", [29]), "roll_a"], {}),
                     ("Concat", ["$0", "$1"], {"axis": 2})])
    f.form("pad_reflect", "Pad", ["x4", f.const("pad_reflect", "p", [0, 0, 1, 2, 0, 0, 2, 1])], mode="reflect")
    f.form("pad_edge", "Pad", ["x4", f.const("pad_edge", "p", [0, 0, 1, 1, 0, 0, 1, 1])], mode="edge")
    f.form("pad_constant", "Pad", ["x4", f.const("pad_constant", "p", [0, 0, 1, 0, 0, 0, 0, 3]),
                                   f.const("pad_constant", "v", 0.5, np.float32)])
    f.form("trilu_lower", "Trilu", ["x3"], upper=0)
    f.form("trilu_upper_k", "Trilu", ["x3", f.const("trilu_upper_k", "k", 1)], upper=1)
    f.form("depth_to_space", "DepthToSpace", ["x4"], blocksize=2, mode="CRD")
    f.form("depth_to_space_dcr", "DepthToSpace", ["x4"], blocksize=2, mode="DCR")
    f.form("space_to_depth", "SpaceToDepth", ["x4"], blocksize=2)
    f.form("resize_nearest", "Resize", ["x4", "", f.const("resize_nearest", "sc", [1, 1, 2, 2], np.float32)], mode="nearest")
    f.form("resize_linear", "Resize", ["x4", "", f.const("resize_linear", "sc", [1, 1, 2, 2], np.float32)],
           mode="linear", coordinate_transformation_mode="half_pixel")
    f.form("resize_linear_align", "Resize", ["x4", "", f.const("resize_linear_align", "sc", [1, 1, 1.5, 1.5], np.float32)],
           mode="linear", coordinate_transformation_mode="align_corners")
    f.form("resize_cubic", "Resize", ["x4", "", f.const("resize_cubic", "sc", [1, 1, 2, 2], np.float32)],
           mode="cubic", cubic_coeff_a=-0.75, coordinate_transformation_mode="half_pixel")
    f.form("expand", "Expand", ["x3", f.const("expand", "s", [3, 1, 16, 32])])
    # DeepLab's upsampling: sizes = Concat(Shape(x)[0:2], [H, W]) with a symbolic batch.
    f.chain("resize_shape_sizes", [("Shape", ["x4"], {"start": 0, "end": 2}),
                                   ("Concat", ["$0", f.const("resize_shape_sizes", "hw", [24, 20])], {"axis": 0}),
                                   ("Resize", ["x4", "", "", "$1"], {"mode": "linear", "coordinate_transformation_mode": "half_pixel"})])
    # torch.ones(x.shape): an Expand of a scalar constant (DeBERTa, OPT) ...
    f.chain("ones_expand", [("Shape", ["x3"], {}), ("Expand", [f.const("ones_expand", "one", 1.0, np.float32), "$0"], {}),
                            ("Add", ["$1", "x3"], {})])
    # ... and T5's full_like on i64, then read as data.
    f.chain("full_like_int", [("Shape", ["ids"], {}), ("Expand", [f.const("full_like_int", "v", 5, np.int64), "$0"], {}),
                              ("Min", ["ids", "$1"], {}), ("Cast", ["$2"], {"to": F})])
    f.form("tile", "Tile", ["x3", f.const("tile", "r", [1, 2, 2])])
    # Broadcast over a middle axis (grouped-query attention's key/value repeat).
    f.chain("expand_mid", [("Unsqueeze", ["x3", f.const("expand_mid", "a", [1])], {}),
                           ("Expand", ["$0", f.const("expand_mid", "s", [1, 3, 16, 32])], {})])
    f.form("pad_wrap", "Pad", ["x4", f.const("pad_wrap", "p", [0, 0, 2, 1, 0, 0, 1, 3])], mode="wrap")
    # Integer moves of token ids (rank-2 i64: tensor data, not shapes).
    f.chain("int_tile", [("Tile", ["ids", f.const("int_tile", "r", [2, 3])], {}), ("Cast", ["$0"], {"to": F})])
    f.chain("int_expand", [("Unsqueeze", ["ids", f.const("int_expand", "a", [1])], {}),
                           ("Expand", ["$0", f.const("int_expand", "s", [1, 4, 16])], {}), ("Cast", ["$1"], {"to": F})])
    f.chain("int_pad_reflect", [("Pad", ["ids", f.const("int_pad_reflect", "p", [0, 2, 0, 3])], {"mode": "reflect"}),
                                ("Cast", ["$0"], {"to": F})])
    f.form("where", "Where", [f.form("where_cond", "Greater", ["x3", f.const("where", "z", 0.0, np.float32)], out_type=T.BOOL),
                              "x3", f.const("where", "v", -1.0, np.float32)])
    return f


def indexing():
    f = Family("indexing")
    f.form("cumsum", "CumSum", ["x3", f.const("cumsum", "a", 2)])
    f.form("cumsum_reverse_exclusive", "CumSum", ["x3", f.const("cumsum_reverse_exclusive", "a", 1)], reverse=1, exclusive=1)
    f.form("argmax_last", "ArgMax", ["x3"], axis=-1, keepdims=0, out_type=T.INT64)
    f.form("argmax_mid", "ArgMax", ["x3"], axis=1, keepdims=1, out_type=T.INT64)
    f.form("argmin", "ArgMin", ["x4"], axis=1, keepdims=0, out_type=T.INT64)
    f.form("topk", "TopK", ["x3", f.const("topk", "k", [4])], n_out=2, axis=-1)
    f.form("topk_smallest", "TopK", ["x3", f.const("topk_smallest", "k", [3])], n_out=2, axis=1, largest=0)
    f.form("onehot", "OneHot", [f.const("onehot", "i", rng.integers(0, 10, (4, 5))), f.const("onehot", "d", 10),
                                f.const("onehot", "v", [0, 1], np.float32)], axis=-1)
    # Position ids from the sequence length (Shape -> Gather -> Range -> Cast).
    f.chain("range_positions", [("Shape", ["x3"], {}), ("Gather", ["$0", f.const("range_positions", "one", 2)], {"axis": 0}),
                                ("Range", [f.const("range_positions", "z", 0), "$1", f.const("range_positions", "d", 1)], {}),
                                ("Cast", ["$2"], {"to": F}), ("Add", ["x3", "$3"], {})])
    # A causal mask (ConstantOfShape -> Trilu -> Where) as decoders export it.
    f.chain("causal_mask", [("Shape", ["x3"], {}), ("Slice", ["$0", f.const("causal_mask", "s", [1]), f.const("causal_mask", "e", [3])], {}),
                            ("Identity", ["$1"], {}),
                            ("ConstantOfShape", ["$2"], {"value": h.make_tensor("v", F, [1], [1.0])}),
                            ("Trilu", ["$3"], {"upper": 0}), ("Equal", ["$4", f.const("causal_mask", "zero", 0.0, np.float32)], {}),
                            ("Where", ["$5", f.const("causal_mask", "ninf", -1e4, np.float32), "x3"], {})])
    # Integer arithmetic on token ids, as decoders export their masks and positions.
    i64 = lambda name, v: f.const("int_mask_arith", name, v, np.int64)
    f.chain("int_mask_arith", [("Sub", ["ids", i64("one", 1)], {}), ("Max", ["$0", i64("zero", 0)], {}),
                               ("LessOrEqual", ["$1", i64("four", 4)], {}), ("Equal", ["ids", i64("three", 3)], {}),
                               ("Not", ["$3"], {}), ("And", ["$2", "$4"], {}), ("Cast", ["$5"], {"to": F})])
    # GPT-2/RoBERTa position ids: a mask's running count (integer CumSum), sliced (rank-2 i64 moves).
    f.chain("int_position_ids", [("Greater", ["ids", f.const("int_position_ids", "t", 3, np.int64)], {}),
                                 ("Cast", ["$0"], {"to": T.INT64}),
                                 ("CumSum", ["$1", f.const("int_position_ids", "a", 1)], {}),
                                 ("Slice", ["$2", f.const("int_position_ids", "s", [1]), f.const("int_position_ids", "e", [16]),
                                            f.const("int_position_ids", "ax", [1])], {}),
                                 ("Cast", ["$3"], {"to": F})])
    # A padded id tensor (rank-2 i64 Pad with a fill other than 0 or 1).
    f.chain("int_pad", [("Pad", ["ids", f.const("int_pad", "p", [0, 1, 0, 2]), f.const("int_pad", "v", 7, np.int64)], {}),
                        ("Cast", ["$0"], {"to": F})])
    # Relative positions as T5 and DeBERTa bucket them: Sign, Abs and Clip on i64.
    i64b = lambda name, v: f.const("int_buckets", name, v, np.int64)
    f.chain("int_buckets", [("Sub", ["ids", i64b("mid", 5)], {}), ("Sign", ["$0"], {}), ("Abs", ["$0"], {}),
                            ("Clip", ["$0", i64b("lo", -2), i64b("hi", 3)], {}), ("Mul", ["$1", "$2"], {}),
                            ("Add", ["$4", "$3"], {}), ("Cast", ["$5"], {"to": F})])
    # A size computed from a symbolic dim (DeBERTa's batch * heads): folds per shape, no kernel.
    f.chain("shape_arith", [("Shape", ["x3"], {"start": 0, "end": 1}), ("Squeeze", ["$0"], {}),
                            ("Mul", ["$1", f.const("shape_arith", "k", 2, np.int64)], {}),
                            ("Unsqueeze", ["$2", f.const("shape_arith", "ax", [0])], {}),
                            ("Concat", ["$3", f.const("shape_arith", "rest", [8, 32])], {"axis": 0}),
                            ("Reshape", ["x3", "$4"], {})])
    # Integer Div by a constant free of zeros: no fault check (a variable divisor's kernel
    # records a zero divisor on both targets: test/Runtime/cuda-int-div-fault.test).
    f.chain("int_positions", [("Mul", ["ids", f.const("int_positions", "k", 3, np.int64)], {}),
                              ("Add", ["$0", f.const("int_positions", "b", [[2]], np.int64)], {}),
                              ("Div", ["$1", f.const("int_positions", "d", 2, np.int64)], {}),
                              ("Cast", ["$2"], {"to": F})])
    f.form("mod_fmod", "Mod", ["x3", f.const("mod_fmod", "m", 0.3, np.float32)], fmod=1)
    f.chain("cast_int_roundtrip", [("Mul", ["x3", f.const("cast_int_roundtrip", "s", 10.0, np.float32)], {}),
                                   ("Cast", ["$0"], {"to": T.INT32}), ("Cast", ["$1"], {"to": F})])
    return f


def normalization():
    f = Family("normalization", opset=21)
    ones8, zeros8 = np.ones(8, np.float32), np.zeros(8, np.float32)
    f.form("instance_norm", "InstanceNormalization", ["x4", f.const("instance_norm", "s", ones8 * 1.5), f.const("instance_norm", "b", zeros8 + 0.1)])
    f.form("group_norm", "GroupNormalization", ["x4", f.const("group_norm", "s", ones8), f.const("group_norm", "b", zeros8)], num_groups=4)
    f.form("layer_norm_axis1", "LayerNormalization", ["x3", f.const("layer_norm_axis1", "s", np.ones((16, 32), np.float32)),
                                                      f.const("layer_norm_axis1", "b", np.zeros((16, 32), np.float32))], axis=1)
    # ConvNeXt-style channels-first LayerNorm: mean/var over axis 1 by hand.
    f.chain("layer_norm_channels_first", [
        ("ReduceMean", ["x4", f.const("layer_norm_channels_first", "ax", [1])], {}), ("Sub", ["x4", "$0"], {}),
        ("Pow", ["$1", f.const("layer_norm_channels_first", "two", 2.0, np.float32)], {}),
        ("ReduceMean", ["$2", "layer_norm_channels_first_ax"], {}),
        ("Add", ["$3", f.const("layer_norm_channels_first", "eps", 1e-6, np.float32)], {}), ("Sqrt", ["$4"], {}), ("Div", ["$1", "$5"], {})])
    # LLaMA-style RMSNorm as exported: Pow -> ReduceMean -> Add -> Sqrt -> Reciprocal -> Mul -> Mul(weight).
    f.chain("rms_norm", [("Pow", ["x3", f.const("rms_norm", "two", 2.0, np.float32)], {}),
                         ("ReduceMean", ["$0", f.const("rms_norm", "ax", [-1])], {"keepdims": 1}),
                         ("Add", ["$1", f.const("rms_norm", "eps", 1e-6, np.float32)], {}), ("Sqrt", ["$2"], {}),
                         ("Reciprocal", ["$3"], {}), ("Mul", ["x3", "$4"], {}),
                         ("Mul", ["$5", f.const("rms_norm", "w", rng.standard_normal(32), np.float32)], {})])
    # PoolFormer/ConvNeXt-V1's GroupNorm(1 group) as exported: Reshape to [N, 1, -1] and an
    # InstanceNormalization with one-element parameters, Reshape back.
    f.chain("group_norm_one_group", [("Reshape", ["x4", f.const("group_norm_one_group", "s", [0, 1, -1])], {}),
                                     ("InstanceNormalization", ["$0", f.const("group_norm_one_group", "w", [1.5], np.float32),
                                                                f.const("group_norm_one_group", "b", [0.1], np.float32)], {}),
                                     ("Shape", ["x4"], {}), ("Reshape", ["$1", "$2"], {})])
    # DenseNet: BatchNormalization after a Concat (nothing to fold it into), then Relu.
    bn = [f.const("batch_norm_after_concat", n, v, np.float32) for n, v in
          [("s", rng.uniform(0.5, 1.5, 16)), ("b", rng.standard_normal(16)), ("m", rng.standard_normal(16) * 0.1),
           ("v", rng.uniform(0.5, 2, 16))]]
    f.chain("batch_norm_after_concat", [("Concat", ["x4", "x4"], {"axis": 1}),
                                        ("BatchNormalization", ["$0"] + bn, {"epsilon": 1e-5}), ("Relu", ["$1"], {})])
    f.form("softmax_axis1", "Softmax", ["x3"], axis=1)
    f.form("log_softmax_axis1", "LogSoftmax", ["x4"], axis=1)
    f.form("lp_norm", "LpNormalization", ["x3"], axis=-1, p=2)
    f.form("mean_variance_norm", "MeanVarianceNormalization", ["x4"], axes=[0, 2, 3])
    return f


def reduction():
    f = Family("reduction", opset=18)
    f.form("reduce_sum_axis0", "ReduceSum", ["x3", f.const("reduce_sum_axis0", "ax", [0])], keepdims=0)
    f.form("reduce_max_mid", "ReduceMax", ["x3", f.const("reduce_max_mid", "ax", [1])], keepdims=1)
    f.form("reduce_mean_hw", "ReduceMean", ["x4", f.const("reduce_mean_hw", "ax", [2, 3])], keepdims=1)
    f.form("reduce_l2", "ReduceL2", ["x3", f.const("reduce_l2", "ax", [2])], keepdims=1)
    f.form("reduce_sum_square", "ReduceSumSquare", ["x3", f.const("reduce_sum_square", "ax", [-1])], keepdims=0)
    f.form("reduce_log_sum_exp", "ReduceLogSumExp", ["x3", f.const("reduce_log_sum_exp", "ax", [1])], keepdims=0)
    f.form("reduce_min_all", "ReduceMin", ["x4"], keepdims=0)
    f.form("global_max_pool", "GlobalMaxPool", ["x4"])
    f.form("global_average_pool", "GlobalAveragePool", ["x4"])
    # EfficientNet's squeeze-excitation: the SiLU read by the ReduceMean and, past a 1x1 Conv,
    # by the scaling Mul.
    f.chain("se_block", [("Sigmoid", ["x4"], {}), ("Mul", ["x4", "$0"], {}),
                         ("ReduceMean", ["$1", f.const("se_block", "a", [2, 3])], {"keepdims": 1}),
                         ("Conv", ["$2", f.const("se_block", "w", rng.standard_normal((8, 8, 1, 1)) * 0.3, np.float32)], {}),
                         ("Sigmoid", ["$3"], {}), ("Mul", ["$1", "$4"], {})])
    return f


def spatial():
    f = Family("spatial")
    w = lambda form, shape: f.const(form, "w", rng.standard_normal(shape) * 0.2, np.float32)
    f.form("depthwise_conv_5x5", "Conv", ["x4", w("depthwise_conv_5x5", (8, 1, 5, 5))], group=8, pads=[2, 2, 2, 2])
    f.form("depthwise_conv_7x7", "Conv", ["x4", w("depthwise_conv_7x7", (8, 1, 7, 7))], group=8, pads=[3, 3, 3, 3])
    f.form("grouped_conv", "Conv", ["x4", w("grouped_conv", (8, 4, 3, 3))], group=2, pads=[1, 1, 1, 1])
    f.form("conv_1d", "Conv", ["x3", w("conv_1d", (8, 16, 3))], pads=[1, 1], strides=[2])
    f.form("conv_transpose", "ConvTranspose", ["x4", w("conv_transpose", (8, 4, 2, 2))], strides=[2, 2])
    f.form("conv_transpose_1d", "ConvTranspose", ["x3", w("conv_transpose_1d", (16, 8, 4))], strides=[2], pads=[1, 1])
    f.form("max_pool", "MaxPool", ["x4"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    f.form("max_pool_1d", "MaxPool", ["x3"], kernel_shape=[3], strides=[2])
    f.form("avg_pool_ceil", "AveragePool", ["x4"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=0)
    f.form("avg_pool_1d", "AveragePool", ["x3"], kernel_shape=[2], strides=[2])
    f.form("einsum_bij_jk", "Einsum", ["x3", f.const("einsum_bij_jk", "w", rng.standard_normal((32, 8)), np.float32)], equation="bij,jk->bik")
    f.form("einsum_bhid_bhjd", "Einsum", ["x4", "x4"], equation="bhid,bhjd->bhij")
    f.form("einsum_bhij_bhjd", "Einsum", ["x4", "x4"], equation="bhij,bhjd->bhid")
    f.form("lp_pool", "LpPool", ["x4"], kernel_shape=[3, 3], strides=[2, 2], p=2)
    f.form("conv_same_stride2", "Conv", ["x4", w("conv_same_stride2", (8, 8, 3, 3))], auto_pad="SAME_UPPER", strides=[2, 2])
    # Behind a Conv, -O2 --target=cuda runs these NHWC (the channels-last pass):
    # pools with channels_last, a global pool as a spatial ReduceMean; an SE
    # block's mean and scale, a dense block's Concat on C and a Resize.
    f.chain("nhwc_pools", [("Conv", ["x4", w("nhwc_pools", (8, 8, 1, 1))], {}),
                           ("MaxPool", ["$0"], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
                           ("AveragePool", ["$1"], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 0}),
                           ("GlobalAveragePool", ["$2"], {}), ("Flatten", ["$3"], {})])
    f.chain("nhwc_se_concat", [("Conv", ["x4", w("nhwc_se_concat", (8, 8, 1, 1))], {}),
                               ("ReduceMean", ["$0", f.const("nhwc_se_concat", "ax", [2, 3])], {"keepdims": 1}),
                               ("Sigmoid", ["$1"], {}), ("Mul", ["$0", "$2"], {}), ("Concat", ["$0", "$3"], {"axis": 1}),
                               ("Resize", ["$4", "", f.const("nhwc_se_concat", "sc", [1, 1, 2, 2], np.float32)], {"mode": "nearest"})])
    # Depthwise convs (CUDA: the generated DepthwiseConv kernel, epilogue fused; f16 and
    # NCHW: test/CodeGen/cuda-host-depthwise-conv.tcir, the CPU has no f16 kernels).
    b8 = lambda form: f.const(form, "b", rng.standard_normal(8) * 0.2, np.float32)
    f.form("depthwise_conv_3x3_s2", "Conv", ["x4", w("depthwise_conv_3x3_s2", (8, 1, 3, 3))], group=8, pads=[1, 1, 1, 1], strides=[2, 2])
    f.form("depthwise_conv_multiplier", "Conv", ["x4", w("depthwise_conv_multiplier", (16, 1, 3, 3))], group=8, pads=[1, 1, 1, 1])
    f.form("depthwise_conv_dilated", "Conv", ["x4", w("depthwise_conv_dilated", (8, 1, 3, 3))], group=8, pads=[2, 2, 2, 2], dilations=[2, 2])
    f.form("depthwise_conv_asym_pads", "Conv", ["x4", w("depthwise_conv_asym_pads", (8, 1, 3, 3))], group=8, pads=[0, 1, 2, 0])
    f.chain("depthwise_conv_bias_silu", [("Conv", ["x4", w("depthwise_conv_bias_silu", (8, 1, 3, 3)), b8("depthwise_conv_bias_silu")], dict(group=8, pads=[1, 1, 1, 1])),
                                         ("Sigmoid", ["$0"], {}), ("Mul", ["$0", "$1"], {})])
    f.chain("depthwise_conv_residual", [("Conv", ["x4", w("depthwise_conv_residual", (8, 1, 7, 7))], dict(group=8, pads=[3, 3, 3, 3])),
                                        ("Add", ["$0", "x4"], {})])
    f.form("conv_transpose_bias", "ConvTranspose", ["x4", w("conv_transpose_bias", (8, 2, 3, 3)), f.const("conv_transpose_bias", "b", rng.standard_normal(4), np.float32)], strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1], group=2)
    return f


def recurrent():
    """What torch.onnx.export writes for nn.LSTM / nn.GRU / nn.RNN with
    batch_first=True over x3 [N, T = 16, I = 32]: the input transposed to
    time-major, zero initial states made from the batch size (hx=None, a
    dynamic batch), ONNX-order weights (initializers after constant folding),
    each layer's Y [T, D, N, H] made [T, N, D*H] for the next (bidirectional:
    Transpose + Reshape [0, 0, -1]; else Squeeze), the last transposed back to
    batch-major; h_n the layers' Y_h joined. Plus an LSTM reading
    sequence_lens, batch-major through `layout` 1 (other exporters)."""
    f = Family("recurrent", opset=14)
    H = 16
    wts = lambda form, name, shape: f.const(form, name, rng.standard_normal(shape) * 0.2, np.float32)

    def node(form, op, inputs, outs, **attrs):
        f.nodes.append(h.make_node(op, inputs, outs, name=f"{form}/{len(f.nodes)}", **attrs))
        return outs[0]

    def torch_rnn(form, op, gates, layers, dirs, **attrs):
        x = node(form, "Transpose", ["x3"], [f"{form}_xt"], perm=[1, 0, 2])
        shape = node(form, "Shape", ["x3"], [f"{form}_shape"])
        n = node(form, "Gather", [shape, f.const(form, "batch_axis", [0])], [f"{form}_n"], axis=0)
        dims = node(form, "Concat", [f.const(form, "states", [layers * dirs]), n, f.const(form, "hidden", [H])],
                    [f"{form}_dims"], axis=0)
        zeros = node(form, "ConstantOfShape", [dims], [f"{form}_zeros"], value=h.make_tensor("v", F, [1], [0.0]))
        width, hs = 32, []
        for l in range(layers):
            h0 = node(form, "Slice", [zeros, f.const(form, f"start{l}", [l * dirs]),
                                      f.const(form, f"end{l}", [(l + 1) * dirs]), f.const(form, f"axis{l}", [0])],
                      [f"{form}_h0_{l}"])
            ins = [x, wts(form, f"w{l}", (dirs, gates * H, width)), wts(form, f"r{l}", (dirs, gates * H, H)),
                   wts(form, f"b{l}", (dirs, 2 * gates * H)), "", h0] + ([h0] if op == "LSTM" else [])
            y = node(form, op, ins, [f"{form}_y{l}", f"{form}_yh{l}"], hidden_size=H,
                     direction="bidirectional" if dirs == 2 else "forward", **attrs)
            hs.append(f"{form}_yh{l}")
            if dirs == 2:
                t = node(form, "Transpose", [y], [f"{form}_t{l}"], perm=[0, 2, 1, 3])
                x = node(form, "Reshape", [t, f.const(form, f"shape{l}", [0, 0, -1])], [f"{form}_o{l}"])
            else:
                x = node(form, "Squeeze", [y, f.const(form, f"squeeze{l}", [1])], [f"{form}_o{l}"])
            width = dirs * H
        out = node(form, "Transpose", [x], [f"{form}_out"], perm=[1, 0, 2])
        hn = node(form, "Concat", hs, [f"{form}_hn"], axis=0) if len(hs) > 1 else hs[0]
        f.outputs += [h.make_tensor_value_info(v, F, None) for v in (out, hn)]

    torch_rnn("lstm_2layer_bidirectional", "LSTM", 4, 2, 2)
    torch_rnn("gru", "GRU", 3, 1, 1, linear_before_reset=1)
    torch_rnn("rnn_2layer", "RNN", 1, 2, 1)
    form = "lstm_layout1_lens"
    outs = [f"{form}_y", f"{form}_yh", f"{form}_yc"]
    node(form, "LSTM", ["x3", wts(form, "w", (1, 4 * H, 32)), wts(form, "r", (1, 4 * H, H)),
                        wts(form, "b", (1, 8 * H)), "lens"], outs, hidden_size=H, layout=1)
    f.outputs += [h.make_tensor_value_info(v, F, None) for v in outs]
    return f


FAMILIES = [movement, indexing, normalization, reduction, spatial, recurrent]

if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    only = sys.argv[2:]  # family names (all when none given)
    for make in [m for m in FAMILIES if not only or m.__name__ in only]:
        fam = make()
        onnx.save(fam.model(), os.path.join(out, fam.name + ".onnx"))
    print(f"{len(only) or len(FAMILIES)} coverage models in {out}")
