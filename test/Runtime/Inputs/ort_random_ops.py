"""Differential test of tc-run --target=ref against onnxruntime on random
single-op models: Conv (pads, strides, dilations, groups, auto_pad, 1-3
spatial dims), Gemm (transposes, alpha, beta, C shapes), MatMul (batch
broadcasting, 1-D operands), Softmax/LogSoftmax axes, Transpose, Concat,
Flatten, Reshape, Where, Pow, Div, Cast and the unary activations.

    ort_random_ops.py SEED COUNT WORKDIR

Each case: build the model with onnx.helper, tc-import it, let tc-run make
random inputs, run onnxruntime on them (utils/ort_reference.py), compare.
Prints one line per failing case and "random ops: P passed, F failed".
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
F = TensorProto.FLOAT


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def conv_case(r):
    sp = r.choice([1, 2, 2, 3])
    group = r.choice([1, 1, 2, 3])
    cg, mg = r.randint(1, 3), r.randint(1, 3)
    k = [r.randint(1, 3) for _ in range(sp)]
    auto_pad = r.choice(["NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"])
    # onnxruntime has no dilated SAME convolution
    dil = [1 if auto_pad.startswith("SAME") else r.randint(1, 2) for _ in range(sp)]
    strides = [r.randint(1, 3) for _ in range(sp)]
    size = [r.randint(d * (kk - 1) + 1, 7 if sp < 3 else 5) for d, kk in zip(dil, k)]
    attrs = dict(kernel_shape=k, dilations=dil, strides=strides, group=group)
    if auto_pad == "NOTSET":
        attrs["pads"] = [r.randint(0, 2) for _ in range(2 * sp)]
    else:
        attrs["auto_pad"] = auto_pad
    n = r.randint(1, 2)
    x = vi("x", F, [n, cg * group] + size)
    w = numpy_helper.from_array(
        np.random.default_rng(r.randint(0, 1 << 30)).standard_normal(
            [mg * group, cg] + k).astype(np.float32), "w")
    inits, inputs = [w], ["x", "w"]
    if r.random() < 0.5:
        inits.append(numpy_helper.from_array(np.linspace(-1, 1, mg * group, dtype=np.float32), "b"))
        inputs.append("b")
    node = helper.make_node("Conv", inputs, ["y"], **attrs)
    return [node], [x], inits, {}


def gemm_case(r):
    m, k, n = r.randint(1, 5), r.randint(1, 6), r.randint(1, 5)
    ta, tb = r.randint(0, 1), r.randint(0, 1)
    a = vi("a", F, [k, m] if ta else [m, k])
    b = vi("b", F, [n, k] if tb else [k, n])
    inputs, vis = ["a", "b"], [a, b]
    c_shape = r.choice([None, [], [n], [1, n], [m, 1], [m, n], [1, 1]])
    if c_shape is not None:
        vis.append(vi("c", F, c_shape))
        inputs.append("c")
    node = helper.make_node("Gemm", inputs, ["y"], transA=ta, transB=tb,
                            alpha=r.choice([1.0, 0.5, -2.0]), beta=r.choice([1.0, 0.25, 0.0]))
    return [node], vis, [], {}


def matmul_case(r):
    k = r.randint(1, 5)
    shapes = r.choice([
        ([k], [k, 3]), ([2, k], [k]), ([k], [k]), ([2, 3, k], [k, 4]),
        ([2, 1, 3, k], [5, k, 2]), ([1, 2, k], [3, 1, k, 2]), ([4, k], [2, k, 3])])
    node = helper.make_node("MatMul", ["a", "b"], ["y"])
    return [node], [vi("a", F, shapes[0]), vi("b", F, shapes[1])], [], {}


def softmax_case(r):
    rank = r.randint(1, 4)
    shape = [r.randint(1, 4) for _ in range(rank)]
    op = r.choice(["Softmax", "LogSoftmax"])
    node = helper.make_node(op, ["x"], ["y"], axis=r.randint(-rank, rank - 1))
    return [node], [vi("x", F, shape)], [], {}


def shape_case(r):
    kind = r.choice(["Transpose", "Concat", "Flatten", "Reshape"])
    rank = r.randint(1, 4)
    shape = [r.randint(1, 3) for _ in range(rank)]
    if kind == "Transpose":
        perm = list(range(rank))
        r.shuffle(perm)
        return [helper.make_node("Transpose", ["x"], ["y"], perm=perm)], [vi("x", F, shape)], [], {}
    if kind == "Flatten":
        return ([helper.make_node("Flatten", ["x"], ["y"], axis=r.randint(-rank, rank))],
                [vi("x", F, shape)], [], {})
    if kind == "Concat":
        axis = r.randint(-rank, rank - 1)
        other = list(shape)
        other[axis] = r.randint(1, 3)
        return ([helper.make_node("Concat", ["x", "z"], ["y"], axis=axis)],
                [vi("x", F, shape), vi("z", F, other)], [], {})
    total = int(np.prod(shape))
    target = r.choice([[total], [-1], [1, total], [total, 1, -1], [0, -1] if rank > 1 else [-1]])
    s = numpy_helper.from_array(np.array(target, np.int64), "s")
    return [helper.make_node("Reshape", ["x", "s"], ["y"])], [vi("x", F, shape)], [s], {}


def pointwise_case(r):
    a = [r.randint(1, 3) for _ in range(r.randint(0, 3))]
    b = list(a[r.randint(0, len(a)):])
    b = [1 if r.random() < 0.3 else d for d in b]
    if r.random() < 0.5:
        a, b = b, a
    kind = r.choice(["Where", "Pow", "Div", "DivInt", "Cast", "Unary", "Less", "Sub"])
    if kind == "Where":
        return ([helper.make_node("Where", ["c", "a", "b"], ["y"])],
                [vi("c", TensorProto.BOOL, b), vi("a", F, a), vi("b", F, b)], [], {})
    if kind == "Pow":
        return ([helper.make_node("Pow", ["a", "b"], ["y"])],
                [vi("a", F, a), vi("b", TensorProto.INT64, b)], [], {})
    if kind in ("Div", "Sub", "Less"):
        op = kind
        return [helper.make_node(op, ["a", "b"], ["y"])], [vi("a", F, a), vi("b", F, b)], [], {}
    if kind == "DivInt":
        return ([helper.make_node("Div", ["a", "b"], ["y"])],
                [vi("a", TensorProto.INT32, a), vi("b", TensorProto.INT32, b)], [], {})
    if kind == "Cast":
        to = r.choice([TensorProto.INT32, TensorProto.INT64, TensorProto.FLOAT16, TensorProto.DOUBLE,
                       TensorProto.BOOL, TensorProto.INT8])
        return [helper.make_node("Cast", ["a"], ["y"], to=to)], [vi("a", F, a)], [], {}
    op = r.choice(["Relu", "Sigmoid", "Tanh", "Exp", "Abs", "Neg", "Erf", "Sin", "Cos", "Floor",
                   "Ceil", "HardSwish", "LeakyRelu", "HardSigmoid", "Reciprocal"])
    return [helper.make_node(op, ["a"], ["y"])], [vi("a", F, a)], [], {}


CASES = [conv_case, conv_case, gemm_case, matmul_case, softmax_case, shape_case, pointwise_case,
         pointwise_case]


def build(case_fn, r, path):
    nodes, inputs, inits, _ = case_fn(r)
    # The output's type from onnx's shape inference.
    probe = helper.make_model(helper.make_graph(nodes, "case", inputs, [], inits),
                              opset_imports=[helper.make_opsetid("", 17)])
    probe = onnx.shape_inference.infer_shapes(probe, strict_mode=True)
    out = next(v for v in probe.graph.value_info if v.name == "y")
    g = helper.make_graph(nodes, "case", inputs, [out], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, path)
    return nodes[0].op_type


def main():
    seed, count, work = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    os.makedirs(work, exist_ok=True)
    r = random.Random(seed)
    passed = failed = 0
    for i in range(count):
        d = os.path.join(work, f"case{i}")
        os.makedirs(d, exist_ok=True)
        model = os.path.join(d, "model.onnx")
        op = build(CASES[i % len(CASES)], r, model)
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
                msg = out.strip().splitlines()
                print(f"FAIL case{i} ({op}): {os.path.basename(s[0])}: {msg[-1] if msg else ''}")
                break
        else:
            passed += 1
    print(f"random ops: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


main()
