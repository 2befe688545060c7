#!/usr/bin/env python3
"""quant_cases.py OUTDIR: small ONNX models of the quantization ops, each in
OUTDIR/<case>/model.onnx with OUTDIR/<case>/test_data_set_0 (inputs and the
expected outputs of onnx.reference's evaluator, an oracle independent of
tc's reference kernels), built with the onnx package only. The data is
random and non-zero, with the values the lowering must get exactly right:
rounding ties (x / scale = k + 0.5, both parities and signs), values far
outside the integer range (saturation), per-axis and blocked scales with a
partial last block, and integer products whose sums exceed 2^24 (an f32
MatMul / Conv over the whole K would round them).

Prints the case names, one a line."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

out = sys.argv[1]
rng = np.random.default_rng(7)
TYPES = {np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8, np.uint16: TensorProto.UINT16,
         np.int16: TensorProto.INT16, np.int32: TensorProto.INT32, np.float32: TensorProto.FLOAT}


def const(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def save(case, nodes, inputs, outputs, inits=(), opset=21, expected=None):
    """inputs: [(name, array)], outputs: [(name, dtype)]; expected: the
    results where onnx.reference gets them wrong."""
    def model(shapes):
        g = helper.make_graph(
            nodes, case,
            [helper.make_tensor_value_info(n, TYPES[a.dtype.type], a.shape) for n, a in inputs],
            [helper.make_tensor_value_info(n, TYPES[t], s) for (n, t), s in zip(outputs, shapes)],
            initializer=list(inits))
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 10
        return m
    feeds = dict(inputs)
    results = expected or ReferenceEvaluator(model([[]] * len(outputs))).run(None, feeds)
    m = model([np.asarray(r).shape for r in results])
    onnx.checker.check_model(m)
    d = os.path.join(out, case)
    ds = os.path.join(d, "test_data_set_0")
    os.makedirs(ds, exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    for i, (n, a) in enumerate(inputs):
        onnx.save_tensor(numpy_helper.from_array(a, n), os.path.join(ds, "input_%d.pb" % i))
    for i, ((n, _), r) in enumerate(zip(outputs, results)):
        onnx.save_tensor(numpy_helper.from_array(np.asarray(r), n), os.path.join(ds, "output_%d.pb" % i))
    print(case)


def with_specials(shape, scale):
    """Random non-zero floats with rounding ties (k + 0.5 times the scale, an
    exact f32 division for a power-of-two scale) and values to saturate."""
    x = (rng.standard_normal(shape) * 40 * scale).astype(np.float32)
    flat = x.reshape(-1)
    ties = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 126.5, -127.5, 3.5, -4.5], np.float32)
    flat[:ties.size] = ties * scale
    flat[ties.size:ties.size + 4] = np.array([1e6, -1e6, 3e4, -3e4], np.float32) * scale
    flat[flat == 0] = scale
    return x


# QuantizeLinear per tensor to each integer type, with saturation and ties;
# DequantizeLinear back.
for t, zp in [(np.uint8, 128), (np.int8, -3), (np.uint16, 1000), (np.int16, -7)]:
    name = np.dtype(t).name
    x = with_specials([4, 37], 0.25)
    save("q_tensor_" + name,
         [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"]),
          helper.make_node("DequantizeLinear", ["y", "s", "z"], ["d"])],
         [("x", x)], [("y", t), ("d", np.float32)],
         [const("s", np.float32(0.25)), const("z", t(zp))])

# Per axis (axis 1 of 3, and the last axis), i8 and u8, scales not powers of two.
x = with_specials([3, 5, 6], 0.125)
save("q_axis",
     [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1),
      helper.make_node("DequantizeLinear", ["y", "s", "z"], ["d"], axis=1),
      helper.make_node("QuantizeLinear", ["x", "s2", "z2"], ["y2"], axis=-1),
      helper.make_node("DequantizeLinear", ["y2", "s2", "z2"], ["d2"], axis=-1)],
     [("x", x)], [("y", np.int8), ("d", np.float32), ("y2", np.uint8), ("d2", np.float32)],
     [const("s", np.array([0.125, 0.3, 0.07, 1.1, 0.5], np.float32)),
      const("z", np.array([0, 3, -5, 100, -128], np.int8)),
      const("s2", np.array([0.2, 0.125, 0.9, 0.03, 0.5, 0.25], np.float32)),
      const("z2", np.array([0, 17, 128, 255, 3, 90], np.uint8))])

# Blocked (opset 21): blocks of 4 along axis 1 of 10 (the last block
# partial), and along axis 0; dequantized back.
x = with_specials([6, 10], 0.25)
s = (rng.uniform(0.05, 0.6, [6, 3])).astype(np.float32)
s[0, 0] = 0.25
z = rng.integers(-20, 20, [6, 3]).astype(np.int8)
s0 = (rng.uniform(0.05, 0.6, [2, 10])).astype(np.float32)
save("q_blocked",
     [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1, block_size=4),
      helper.make_node("DequantizeLinear", ["y", "s", "z"], ["d"], axis=1, block_size=4),
      helper.make_node("QuantizeLinear", ["x", "s0"], ["y0"], axis=0, block_size=3),
      helper.make_node("DequantizeLinear", ["y0", "s0"], ["d0"], axis=0, block_size=3)],
     [("x", x)], [("y", np.int8), ("d", np.float32), ("y0", np.uint8), ("d0", np.float32)],
     [const("s", s), const("z", z), const("s0", s0)])

# DequantizeLinear of run-time data: i8 per axis, i32 (large values, exact
# in f64) per tensor, u16 blocked.
save("dq_inputs",
     [helper.make_node("DequantizeLinear", ["a", "sa", "za"], ["da"], axis=0),
      helper.make_node("DequantizeLinear", ["b", "sb"], ["db"]),
      helper.make_node("DequantizeLinear", ["c", "sc", "zc"], ["dc"], axis=1, block_size=2)],
     [("a", rng.integers(-128, 128, [3, 8]).astype(np.int8)),
      ("b", rng.integers(-2**24, 2**24, [5, 7]).astype(np.int32)),
      ("c", rng.integers(0, 65536, [4, 5]).astype(np.uint16))],
     [("da", np.float32), ("db", np.float32), ("dc", np.float32)],
     [const("sa", np.array([0.5, 0.013, 7.25], np.float32)), const("za", np.array([1, -9, 127], np.int8)),
      const("sb", np.float32(3.3e-5)),
      const("sc", rng.uniform(0.001, 0.1, [4, 3]).astype(np.float32)),
      const("zc", rng.integers(0, 65536, [4, 3]).astype(np.uint16))])

# DynamicQuantizeLinear: a positive, a negative and a mixed tensor.
save("dynamic",
     [helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"]),
      helper.make_node("DynamicQuantizeLinear", ["p"], ["py", "ps", "pz"])],
     [("x", (rng.standard_normal([6, 33]) * 3).astype(np.float32)),
      ("p", rng.uniform(0.5, 9, [40]).astype(np.float32))],
     [("y", np.uint8), ("s", np.float32), ("z", np.uint8), ("py", np.uint8), ("ps", np.float32),
      ("pz", np.uint8)])

# MatMulInteger with K = 2048 of large values: the sums reach 6e7 > 2^24
# (an f32 GEMM over the whole K rounds them; the lowering takes chunks of
# K that each stay exact). a's zero point one value, b's per column.
a = rng.integers(200, 256, [3, 2048]).astype(np.uint8)
b = rng.integers(90, 128, [2048, 5]).astype(np.int8)
save("matmul_integer_deep",
     [helper.make_node("MatMulInteger", ["a", "b", "za", "zb"], ["y"])],
     [("a", a)], [("y", np.int32)],
     [const("b", b), const("za", np.uint8(3)), const("zb", np.array([0, 1, -2, 3, -128], np.int8))])

# Batched, a run-time B, a's zero point per row (ONNX allows it;
# onnx.reference broadcasts it along the wrong axis: numpy's result).
a = rng.integers(0, 256, [2, 4, 7]).astype(np.uint8)
b = rng.integers(0, 256, [2, 7, 3]).astype(np.uint8)
za = np.array([0, 255, 128, 7], np.uint8)
save("matmul_integer_rows",
     [helper.make_node("MatMulInteger", ["a", "b", "za"], ["y"])],
     [("a", a), ("b", b)], [("y", np.int32)], [const("za", za)],
     expected=[np.matmul(a.astype(np.int32) - za.astype(np.int32)[:, None], b.astype(np.int32))])

# ConvInteger: pads, strides, the weights' zero point per output channel;
# and 128 input channels x 3x3 of large values (sums > 2^24: chunks of
# input channels).
save("conv_integer",
     [helper.make_node("ConvInteger", ["x", "w", "zx", "zw"], ["y"], pads=[1, 1, 1, 1], strides=[2, 1])],
     [("x", rng.integers(0, 256, [2, 3, 7, 6]).astype(np.uint8))], [("y", np.int32)],
     [const("w", rng.integers(0, 256, [4, 3, 3, 3]).astype(np.uint8)), const("zx", np.uint8(5)),
      const("zw", np.array([0, 128, 255, 9], np.uint8))])
save("conv_integer_deep",
     [helper.make_node("ConvInteger", ["x", "w"], ["y"], pads=[1, 1, 1, 1])],
     [("x", rng.integers(200, 256, [1, 128, 5, 5]).astype(np.uint8))], [("y", np.int32)],
     [const("w", rng.integers(90, 128, [3, 128, 3, 3]).astype(np.int8))])

# QLinearMatMul: 3-D a, b's scale and zero point per column; QLinearConv:
# groups, an i32 bias, w's scale per output channel, a saturating y_scale.
save("qlinear_matmul",
     [helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"])],
     [("a", rng.integers(0, 256, [2, 3, 40]).astype(np.uint8))], [("y", np.int8)],
     [const("sa", np.float32(0.02)), const("za", np.uint8(120)),
      const("b", rng.integers(-128, 128, [40, 6]).astype(np.int8)),
      const("sb", rng.uniform(0.001, 0.05, [6]).astype(np.float32)),
      const("zb", rng.integers(-5, 5, [6]).astype(np.int8)),
      const("sy", np.float32(0.07)), const("zy", np.int8(-4))], opset=21)
save("qlinear_conv",
     [helper.make_node("QLinearConv", ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy", "B"], ["y"],
                       group=2, pads=[0, 1, 0, 1], dilations=[1, 2])],
     [("x", rng.integers(0, 256, [2, 4, 6, 7]).astype(np.uint8))], [("y", np.uint8)],
     [const("sx", np.float32(0.03)), const("zx", np.uint8(100)),
      const("w", rng.integers(-128, 128, [6, 2, 3, 2]).astype(np.int8)),
      const("sw", rng.uniform(0.002, 0.02, [6]).astype(np.float32)),
      const("zw", np.zeros([6], np.int8)),
      const("sy", np.float32(0.05)), const("zy", np.uint8(130)),
      const("B", rng.integers(-3000, 3000, [6]).astype(np.int32))])
