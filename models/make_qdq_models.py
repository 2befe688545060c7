#!/usr/bin/env python3
"""QDQ-quantized models as onnxruntime's static quantizer writes them: a
small CNN (Conv + Relu, strided Conv, a residual Add, global average pool,
Gemm) and a transformer block (LayerNorm, q/k/v MatMuls, scaled
Softmax(q k^T) v over 2 heads, output projection, residual, a Gelu MLP).
Built in f32 with the onnx package, then quantized by
onnxruntime.quantization.quantize_static (QDQ format, u8 activations per
tensor, i8 weights per output channel, i32 biases) on random calibration
data. The results are committed (models/quantized/qdq_cnn.onnx,
qdq_transformer.onnx: not models/ci, whose models utils/committed_models.py
walks at fp16 too, where a fused half epilogue and the reference's per-op
half rounding may quantize one value a step apart); rerun this to remake
them:

    python3 models/make_qdq_models.py models/quantized

test/Runtime/cuda-fake-quantize.test and test/Transforms/qdq-models.test
compile them with --no-host-fallback for both targets.
"""
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

rng = np.random.default_rng(0)


def init(name, shape, scale=0.2):
    return nh.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def cnn():
    nodes = [
        h.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        h.make_node("Relu", ["c1"], ["r1"]),
        h.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2]),
        h.make_node("Relu", ["c2"], ["r2"]),
        h.make_node("Conv", ["r2", "w3", "b3"], ["c3"], pads=[1, 1, 1, 1]),
        h.make_node("Add", ["c3", "r2"], ["s"]),
        h.make_node("Relu", ["s"], ["r3"]),
        h.make_node("GlobalAveragePool", ["r3"], ["p"]),
        h.make_node("Flatten", ["p"], ["f"]),
        h.make_node("Gemm", ["f", "wf", "bf"], ["y"], transB=1),
    ]
    inits = [init("w1", [8, 3, 3, 3]), init("b1", [8], 0.1), init("w2", [16, 8, 3, 3], 0.1),
             init("b2", [16], 0.1), init("w3", [16, 16, 3, 3], 0.1), init("b3", [16], 0.1),
             init("wf", [10, 16]), init("bf", [10], 0.1)]
    g = h.make_graph(nodes, "qdq_cnn", [h.make_tensor_value_info("x", T.FLOAT, ["N", 3, 16, 16])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["N", 10])], inits)
    return g, {"x": [2, 3, 16, 16]}


def transformer():
    S, D, H = 8, 32, 2
    dh = D // H
    heads = lambda t: [  # [N, S, D] -> [N, H, S, dh]
        h.make_node("Reshape", [t, "split_shape"], [t + "_r"]),
        h.make_node("Transpose", [t + "_r"], [t + "_h"], perm=[0, 2, 1, 3])]
    nodes = [h.make_node("LayerNormalization", ["x", "g1", "be1"], ["n1"], axis=-1)]
    for t in "qkv":
        nodes.append(h.make_node("MatMul", ["n1", "w" + t], [t + "0"]))
        nodes.append(h.make_node("Add", [t + "0", "b" + t], [t]))
        nodes += heads(t)
    nodes += [
        h.make_node("Transpose", ["k_h"], ["kt"], perm=[0, 1, 3, 2]),
        h.make_node("MatMul", ["q_h", "kt"], ["sc0"]),
        h.make_node("Mul", ["sc0", "scale"], ["sc"]),
        h.make_node("Softmax", ["sc"], ["pr"], axis=-1),
        h.make_node("MatMul", ["pr", "v_h"], ["at"]),
        h.make_node("Transpose", ["at"], ["at_t"], perm=[0, 2, 1, 3]),
        h.make_node("Reshape", ["at_t", "merge_shape"], ["at_m"]),
        h.make_node("MatMul", ["at_m", "wo"], ["o0"]),
        h.make_node("Add", ["o0", "bo"], ["o"]),
        h.make_node("Add", ["x", "o"], ["x1"]),
        h.make_node("LayerNormalization", ["x1", "g2", "be2"], ["n2"], axis=-1),
        h.make_node("MatMul", ["n2", "w_up"], ["u0"]),
        h.make_node("Add", ["u0", "b_up"], ["u"]),
        h.make_node("Gelu", ["u"], ["ge"]),
        h.make_node("MatMul", ["ge", "w_down"], ["d0"]),
        h.make_node("Add", ["d0", "b_down"], ["d"]),
        h.make_node("Add", ["x1", "d"], ["y"]),
    ]
    inits = [nh.from_array(np.ones(D, np.float32), "g1"), nh.from_array(np.zeros(D, np.float32), "be1"),
             nh.from_array(np.ones(D, np.float32), "g2"), nh.from_array(np.zeros(D, np.float32), "be2"),
             nh.from_array(np.array([0, S, H, dh], np.int64), "split_shape"),
             nh.from_array(np.array([0, S, D], np.int64), "merge_shape"),
             nh.from_array(np.float32(1 / np.sqrt(dh)), "scale"),
             init("w_up", [D, 4 * D]), init("b_up", [4 * D], 0.05),
             init("w_down", [4 * D, D], 0.1), init("b_down", [D], 0.05),
             init("wo", [D, D]), init("bo", [D], 0.05)]
    for t in "qkv":
        inits += [init("w" + t, [D, D]), init("b" + t, [D], 0.05)]
    g = h.make_graph(nodes, "qdq_transformer", [h.make_tensor_value_info("x", T.FLOAT, ["N", S, D])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["N", S, D])], inits)
    return g, {"x": [2, S, D]}


class Reader(CalibrationDataReader):
    def __init__(self, shapes):
        self.batches = iter([{k: rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
                             for _ in range(8)])

    def get_next(self):
        return next(self.batches, None)


if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for make in (cnn, transformer):
        g, shapes = make()
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 20)])
        m.ir_version = 9
        onnx.checker.check_model(m)
        with tempfile.TemporaryDirectory() as tmp:
            f32 = os.path.join(tmp, "f32.onnx")
            onnx.save(m, f32)
            path = os.path.join(out, g.name + ".onnx")
            quantize_static(f32, path, Reader(shapes), quant_format=QuantFormat.QDQ, per_channel=True,
                            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
        print(path)
