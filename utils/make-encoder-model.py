#!/usr/bin/env python3
"""make-encoder-model.py OUT.onnx [--layers L] [--hidden H] [--vocab V] [--seq S] [--batch B]:
a BERT-style masked-LM encoder built with onnx.helper (no torch): token and
position embeddings, L post-LayerNorm layers (q, k, v and output projections,
a 4H ReLU MLP), an LM head of its own; logits [B, S, V]. Defaults are
distilbert's sizes (6 layers, 768, 30522). For counting what a train step of
real sizes compiles to (docs/training.md, session 49: `tc-opt --train
--loss=cross-entropy --precision fp16 ... | tc-codegen --target=cuda --stats`):
its weights are random, its numerics untested."""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

p = argparse.ArgumentParser()
p.add_argument("out")
p.add_argument("--layers", type=int, default=6)
p.add_argument("--hidden", type=int, default=768)
p.add_argument("--vocab", type=int, default=30522)
p.add_argument("--seq", type=int, default=128)
p.add_argument("--batch", type=int, default=8)
a = p.parse_args()
H, S, B, heads = a.hidden, a.seq, a.batch, max(a.hidden // 64, 1)
rng = np.random.default_rng(0)
inits, nodes = [], []


def w(name, *shape, value=None):
    v = rng.normal(0, 0.02, shape) if value is None else np.full(shape, value)
    inits.append(numpy_helper.from_array(v.astype(np.float32), name))
    return name


def const(name, values):
    inits.append(numpy_helper.from_array(np.array(values, dtype=np.int64), name))
    return name


def op(kind, inputs, out, **attrs):
    nodes.append(helper.make_node(kind, inputs, [out], name=out, **attrs))
    return out


def linear(x, name, n_in, n_out):
    return op("Add", [op("MatMul", [x, w(name + ".weight", n_in, n_out)], name + ".mm"),
                      w(name + ".bias", n_out)], name)


def norm(x, name):
    return op("LayerNormalization", [x, w(name + ".weight", H, value=1.0), w(name + ".bias", H, value=0.0)],
              name, axis=-1, epsilon=1e-12)


heads_shape = const("heads_shape", [B, S, heads, H // heads])
merged_shape = const("merged_shape", [B, S, H])
x = op("Add", [op("Gather", [w("word_embeddings", a.vocab, H), "input_ids"], "tok"),
               w("position_embeddings", S, H)], "emb")
x = norm(x, "emb_norm")
for i in range(a.layers):
    pre = "layer%d." % i
    qkv = [op("Transpose", [op("Reshape", [linear(x, pre + n, H, H), heads_shape], pre + n + ".split")],
              pre + n + ".heads", perm=[0, 2, 1, 3] if n != "k" else [0, 2, 3, 1]) for n in "qkv"]
    scores = op("Mul", [op("MatMul", qkv[:2], pre + "qk"), w(pre + "scale", 1, value=(H // heads) ** -0.5)],
                pre + "scores")
    ctx = op("MatMul", [op("Softmax", [scores], pre + "probs", axis=-1), qkv[2]], pre + "ctx")
    ctx = op("Reshape", [op("Transpose", [ctx], pre + "ctx.t", perm=[0, 2, 1, 3]), merged_shape], pre + "ctx.m")
    x = norm(op("Add", [x, linear(ctx, pre + "o", H, H)], pre + "res1"), pre + "norm1")
    mlp = linear(op("Relu", [linear(x, pre + "ffn1", H, 4 * H)], pre + "act"), pre + "ffn2", 4 * H, H)
    x = norm(op("Add", [x, mlp], pre + "res2"), pre + "norm2")
logits = linear(x, "lm_head", H, a.vocab)
graph = helper.make_graph(nodes, "encoder",
                          [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [B, S])],
                          [helper.make_tensor_value_info(logits, TensorProto.FLOAT, [B, S, a.vocab])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.save(model, a.out)
