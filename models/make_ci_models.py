#!/usr/bin/env python3
"""Builds the small models committed under models/ci/ (random weights, fixed
seed) with the onnx package. They are shaped like the real thing: a CNN
stem, an MLP head, and a multi-head attention block, with a symbolic batch.

    python3 models/make_ci_models.py   # rewrites models/ci/*.onnx
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ci")
rng = np.random.default_rng(0)


def w(name, *shape, scale=0.1):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def i64(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def save(graph, name, opset=17):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="tc make_ci_models.py")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(OUT, name))
    print("wrote", name, os.path.getsize(os.path.join(OUT, name)), "bytes")


def mlp():
    nodes = [
        helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h1"], name="/fc1/Gemm", transB=1),
        helper.make_node("Relu", ["h1"], ["a1"], name="/act1/Relu"),
        helper.make_node("Gemm", ["a1", "fc2.weight", "fc2.bias"], ["h2"], name="/fc2/Gemm", transB=1),
        helper.make_node("Tanh", ["h2"], ["a2"], name="/act2/Tanh"),
        helper.make_node("Gemm", ["a2", "fc3.weight", "fc3.bias"], ["logits"], name="/fc3/Gemm", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="/Softmax", axis=-1),
    ]
    g = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 64])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["N", 10])],
        [w("fc1.weight", 128, 64), w("fc1.bias", 128), w("fc2.weight", 64, 128), w("fc2.bias", 64),
         w("fc3.weight", 10, 64), w("fc3.bias", 10)])
    save(g, "mlp.onnx")


def cnn():
    nodes = [
        helper.make_node("Conv", ["x", "conv1.weight", "conv1.bias"], ["c1"], name="/conv1/Conv",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="/relu1/Relu"),
        helper.make_node("Conv", ["r1", "conv2.weight", "conv2.bias"], ["c2"], name="/conv2/Conv",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c2"], ["r2"], name="/relu2/Relu"),
        helper.make_node("Conv", ["r2", "dw.weight"], ["c3"], name="/dw/Conv",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=16),
        helper.make_node("Add", ["c3", "r2"], ["res"], name="/residual/Add"),
        helper.make_node("Sigmoid", ["res"], ["sg"], name="/act/Sigmoid"),
        helper.make_node("Mul", ["res", "sg"], ["silu"], name="/act/Mul"),
        helper.make_node("Flatten", ["silu"], ["flat"], name="/Flatten", axis=1),
        helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["logits"], name="/fc/Gemm", transB=1),
    ]
    g = helper.make_graph(
        nodes, "cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, 16, 16])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])],
        [w("conv1.weight", 8, 3, 3, 3), w("conv1.bias", 8), w("conv2.weight", 16, 8, 3, 3),
         w("conv2.bias", 16), w("dw.weight", 16, 1, 3, 3), w("fc.weight", 10, 16 * 8 * 8, scale=0.02),
         w("fc.bias", 10)])
    g.node[0].input[0] = "image"
    save(g, "cnn.onnx")


def attention():
    d, heads = 32, 4
    hd = d // heads
    nodes = [
        helper.make_node("MatMul", ["x", "q.weight"], ["q0"], name="/attn/q/MatMul"),
        helper.make_node("Add", ["q0", "q.bias"], ["q1"], name="/attn/q/Add"),
        helper.make_node("MatMul", ["x", "k.weight"], ["k0"], name="/attn/k/MatMul"),
        helper.make_node("MatMul", ["x", "v.weight"], ["v0"], name="/attn/v/MatMul"),
        helper.make_node("Reshape", ["q1", "heads_shape"], ["q2"], name="/attn/q/Reshape"),
        helper.make_node("Reshape", ["k0", "heads_shape"], ["k2"], name="/attn/k/Reshape"),
        helper.make_node("Reshape", ["v0", "heads_shape"], ["v2"], name="/attn/v/Reshape"),
        helper.make_node("Transpose", ["q2"], ["q3"], name="/attn/q/Transpose", perm=[0, 2, 1, 3]),
        helper.make_node("Transpose", ["k2"], ["k3"], name="/attn/k/Transpose", perm=[0, 2, 3, 1]),
        helper.make_node("Transpose", ["v2"], ["v3"], name="/attn/v/Transpose", perm=[0, 2, 1, 3]),
        helper.make_node("MatMul", ["q3", "k3"], ["s0"], name="/attn/scores/MatMul"),
        helper.make_node("Div", ["s0", "scale"], ["s1"], name="/attn/scores/Div"),
        helper.make_node("Softmax", ["s1"], ["p"], name="/attn/Softmax", axis=-1),
        helper.make_node("MatMul", ["p", "v3"], ["o0"], name="/attn/out/MatMul"),
        helper.make_node("Transpose", ["o0"], ["o1"], name="/attn/out/Transpose", perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["o1", "merge_shape"], ["o2"], name="/attn/out/Reshape"),
        helper.make_node("MatMul", ["o2", "o.weight"], ["o3"], name="/attn/o/MatMul"),
        helper.make_node("Add", ["o3", "x"], ["r"], name="/residual/Add"),
        helper.make_node("Mul", ["r", "r"], ["sq"], name="/ffn/sq/Mul"),
        helper.make_node("Mul", ["sq", "r"], ["cube"], name="/ffn/cube/Mul"),
        helper.make_node("Mul", ["cube", "gelu_c"], ["t0"], name="/ffn/gelu/Mul"),
        helper.make_node("Add", ["r", "t0"], ["t1"], name="/ffn/gelu/Add"),
        helper.make_node("Mul", ["t1", "sqrt_2_over_pi"], ["t1s"], name="/ffn/gelu/Mul_3"),
        helper.make_node("Tanh", ["t1s"], ["t2"], name="/ffn/gelu/Tanh"),
        helper.make_node("Add", ["t2", "one"], ["t3"], name="/ffn/gelu/Add_1"),
        helper.make_node("Mul", ["r", "t3"], ["t4"], name="/ffn/gelu/Mul_1"),
        helper.make_node("Mul", ["t4", "half"], ["y"], name="/ffn/gelu/Mul_2"),
    ]
    g = helper.make_graph(
        nodes, "attention",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16, d])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 16, d])],
        [w("q.weight", d, d), w("q.bias", d), w("k.weight", d, d), w("v.weight", d, d),
         w("o.weight", d, d), i64("heads_shape", [0, 0, heads, hd]), i64("merge_shape", [0, 0, d]),
         numpy_helper.from_array(np.array(np.sqrt(hd), dtype=np.float32), "scale"),
         numpy_helper.from_array(np.array(0.044715, dtype=np.float32), "gelu_c"),
         numpy_helper.from_array(np.array(np.sqrt(2 / np.pi), dtype=np.float32), "sqrt_2_over_pi"),
         numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one"),
         numpy_helper.from_array(np.array(0.5, dtype=np.float32), "half")])
    save(g, "attention.onnx")


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    mlp()
    cnn()
    attention()
