#!/usr/bin/env python3
"""A real dataset for tc's training tests: scikit-learn's digits (1797 8x8
images, 10 classes), split 1500 / 297, and a small CNN with batch norm to
train on it.

    digits-training.py make DIR     # DIR/cnn.onnx, DIR/train/test_data_set_*, DIR/heldout.npz,
                                    # DIR/heldout/test_data_set_* (its whole batches: 250 images)
    digits-training.py accuracy DIR CHECKPOINT
                                    # the checkpoint's weights in cnn.onnx (eval mode, running
                                    # statistics), run by onnxruntime on the held-out images;
                                    # prints the accuracy

The weights come from a fixed seed (PyTorch's default initialization,
uniform in +-1/sqrt(fan_in)), so a run is reproducible.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

BATCH = 50


def init(rng, shape, fan_in):
    bound = 1.0 / np.sqrt(fan_in)
    return rng.uniform(-bound, bound, size=shape).astype(np.float32)


def make_model(rng):
    inits = {
        "conv1.weight": init(rng, (16, 1, 3, 3), 9),
        "conv1.bias": init(rng, (16,), 9),
        "bn1.weight": np.ones(16, np.float32),
        "bn1.bias": np.zeros(16, np.float32),
        "bn1.running_mean": np.zeros(16, np.float32),
        "bn1.running_var": np.ones(16, np.float32),
        "conv2.weight": init(rng, (32, 16, 3, 3), 144),
        "conv2.bias": init(rng, (32,), 144),
        "fc.weight": init(rng, (10, 32), 32),
        "fc.bias": init(rng, (10,), 32),
    }
    nodes = [
        helper.make_node("Conv", ["x", "conv1.weight", "conv1.bias"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("BatchNormalization", ["c1", "bn1.weight", "bn1.bias", "bn1.running_mean",
                                                "bn1.running_var"], ["b1"], name="bn1"),
        helper.make_node("Relu", ["b1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2], name="pool1"),
        helper.make_node("Conv", ["p1", "conv2.weight", "conv2.bias"], ["c2"], pads=[1, 1, 1, 1], name="conv2"),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["logits"], transB=1, name="fc"),
    ]
    graph = helper.make_graph(
        nodes, "digits_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [BATCH, 1, 8, 8])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [BATCH, 10])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


def data():
    from sklearn.datasets import load_digits
    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None]
    y = d.target.astype(np.int64)
    order = np.random.default_rng(0).permutation(len(y))
    return x[order], y[order]


def make(out):
    os.makedirs(out, exist_ok=True)
    onnx.save(make_model(np.random.default_rng(1)), os.path.join(out, "cnn.onnx"))
    x, y = data()
    train = 1500
    for b in range(train // BATCH):
        d = os.path.join(out, "train", "test_data_set_%02d" % b)
        os.makedirs(d, exist_ok=True)
        s = slice(b * BATCH, (b + 1) * BATCH)
        for i, (name, arr) in enumerate([("x", x[s]), ("target", y[s])]):
            with open(os.path.join(d, "input_%d.pb" % i), "wb") as f:
                f.write(numpy_helper.from_array(arr, name).SerializeToString())
    np.savez(os.path.join(out, "heldout.npz"), x=x[train:], y=y[train:])
    # The held-out images as whole batches too (tc-run --eval): 250 of 297.
    for b in range((len(y) - train) // BATCH):
        d = os.path.join(out, "heldout", "test_data_set_%02d" % b)
        os.makedirs(d, exist_ok=True)
        s = slice(train + b * BATCH, train + (b + 1) * BATCH)
        for i, (name, arr) in enumerate([("x", x[s]), ("target", y[s])]):
            with open(os.path.join(d, "input_%d.pb" % i), "wb") as f:
                f.write(numpy_helper.from_array(arr, name).SerializeToString())


def accuracy(out, checkpoint):
    import onnxruntime as ort
    from safetensors.numpy import load_file
    model = onnx.load(os.path.join(out, "cnn.onnx"))
    trained = load_file(checkpoint)
    names = {t.name for t in model.graph.initializer}
    if set(trained) != names:
        sys.exit("checkpoint keys %s differ from the model's initializers %s" % (sorted(trained), sorted(names)))
    for t in model.graph.initializer:
        t.CopyFrom(numpy_helper.from_array(trained[t.name], t.name))
    # Any batch size for the held-out set.
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "N"
    model.graph.output[0].type.tensor_type.shape.dim[0].dim_param = "N"
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    held = np.load(os.path.join(out, "heldout.npz"))
    logits = sess.run(None, {"x": held["x"]})[0]
    print("held-out accuracy %.4f (%d images)" % ((logits.argmax(1) == held["y"]).mean(), len(held["y"])))


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "make":
        make(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "accuracy":
        accuracy(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
