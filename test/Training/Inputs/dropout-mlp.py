#!/usr/bin/env python3
"""A small MLP with two Dropouts, exported by torch.onnx.export after
model.train() (so the export keeps its Dropout nodes, training_mode true),
and data to train it on.

    dropout-mlp.py model OUT.onnx   # needs torch (committed: dropout-mlp.onnx)
    dropout-mlp.py data DIR         # DIR/test_data_set_*/input_{0,1}.pb: x f32[32,16], target i64[32]

The classes are a fixed function of x (the argmax of a fixed projection), so
the loss of a model that learns falls.
"""
import os
import sys

import numpy as np

BATCH, IN, HID, CLASSES = 32, 16, 32, 4


def model(out):
    import torch

    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Linear(IN, HID), torch.nn.ReLU(), torch.nn.Dropout(0.3),
        torch.nn.Linear(HID, HID), torch.nn.ReLU(), torch.nn.Dropout(0.5),
        torch.nn.Linear(HID, CLASSES))
    net.train()
    torch.onnx.export(net, (torch.zeros(BATCH, IN),), out, input_names=["x"], output_names=["logits"],
                      training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      opset_version=17, dynamo=False)


def data(out):
    from onnx import numpy_helper

    rng = np.random.default_rng(3)
    proj = rng.standard_normal((IN, CLASSES)).astype(np.float32)
    for b in range(8):
        x = rng.standard_normal((BATCH, IN)).astype(np.float32)
        y = np.argmax(x @ proj, axis=1).astype(np.int64)
        d = os.path.join(out, "test_data_set_%02d" % b)
        os.makedirs(d, exist_ok=True)
        for i, t in enumerate((x, y)):
            with open(os.path.join(d, "input_%d.pb" % i), "wb") as f:
                f.write(numpy_helper.from_array(t).SerializeToString())


if __name__ == "__main__":
    {"model": model, "data": data}[sys.argv[1]](sys.argv[2])
