#!/usr/bin/env python3
"""Exports real PyTorch models (random weights, no downloads) to ONNX with both
exporters, for the import breadth check on the GPU machine (which has torch,
torchvision, timm and transformers):

    python3 models/export_torch_models.py OUTDIR [name,name,...]

Writes OUTDIR/<model>.<exporter>.onnx for exporter in {dynamo (opset 20, IR
10), torchscript (opset 17)}, with a symbolic batch dim, plus one
OUTDIR/<model>.<exporter>.in/input_N.pb set of random inputs. A model that
fails to export is reported and skipped (the run goes on).
"""
import os
import sys
import traceback

import numpy as np
import torch
from onnx import numpy_helper

torch.manual_seed(0)


def models():
    import torchvision
    out = {
        "resnet18": (lambda: torchvision.models.resnet18(), lambda: (torch.randn(2, 3, 224, 224),)),
        "mobilenet_v3_small": (lambda: torchvision.models.mobilenet_v3_small(),
                               lambda: (torch.randn(2, 3, 224, 224),)),
        "efficientnet_b0": (lambda: torchvision.models.efficientnet_b0(), lambda: (torch.randn(2, 3, 224, 224),)),
    }

    def vit():
        import timm
        return timm.create_model("vit_tiny_patch16_224", pretrained=False)
    out["vit_tiny"] = (vit, lambda: (torch.randn(2, 3, 224, 224),))

    def bert():
        from transformers import BertConfig, BertModel
        cfg = BertConfig(hidden_size=128, num_hidden_layers=2, num_attention_heads=2, intermediate_size=512,
                         vocab_size=1000)
        return BertModel(cfg)
    out["bert_tiny"] = (bert, lambda: (torch.randint(0, 1000, (2, 16)),))

    def gpt2():
        from transformers import GPT2Config, GPT2Model
        cfg = GPT2Config(n_embd=128, n_layer=2, n_head=2, vocab_size=1000, n_positions=64)
        return GPT2Model(cfg)
    out["gpt2_tiny"] = (gpt2, lambda: (torch.randint(0, 1000, (2, 16)),))
    # The full-size suite (models/manifest.json); checked on the GPU machine.
    out["resnet50"] = (lambda: torchvision.models.resnet50(), lambda: (torch.randn(1, 3, 224, 224),))
    out["mobilenet_v2"] = (lambda: torchvision.models.mobilenet_v2(), lambda: (torch.randn(1, 3, 224, 224),))

    def vit_b16():
        import timm
        return timm.create_model("vit_base_patch16_224", pretrained=False)
    out["vit_b_16"] = (vit_b16, lambda: (torch.randn(1, 3, 224, 224),))

    def bert_base():
        from transformers import BertConfig, BertModel
        return BertModel(BertConfig())
    out["bert_base"] = (bert_base, lambda: (torch.randint(0, 30000, (1, 128)),))

    def gpt2_full():
        from transformers import GPT2Config, GPT2Model
        return GPT2Model(GPT2Config())
    out["gpt2"] = (gpt2_full, lambda: (torch.randint(0, 50000, (1, 64)),))

    # Small models committed under models/small with PyTorch's own outputs.
    out["small_cnn"] = (SmallCNN, lambda: (torch.randn(2, 3, 32, 32),))
    return out


class SmallCNN(torch.nn.Module):
    """A ResNet-style stem and two residual blocks with BatchNorm: the op mix
    of torchvision CNNs in about 100 KB of weights."""

    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        self.b1 = nn.Sequential(nn.Conv2d(16, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
                                nn.Conv2d(16, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16))
        self.b2 = nn.Sequential(nn.Conv2d(16, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.Hardswish(),
                                nn.Conv2d(32, 32, 3, 1, 1, groups=32, bias=False), nn.BatchNorm2d(32))
        self.down = nn.Sequential(nn.Conv2d(16, 32, 1, 2, bias=False), nn.BatchNorm2d(32))
        self.head = nn.Linear(32, 10)
        for m in self.modules():  # non-trivial BatchNorm statistics
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.data.uniform_(0.5, 1.5)
                m.bias.data.uniform_(-0.2, 0.2)

    def forward(self, x):
        x = self.stem(x)
        x = torch.relu(x + self.b1(x))
        x = torch.relu(self.down(x) + self.b2(x))
        return self.head(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1))


class FirstOutput(torch.nn.Module):
    """HF models return dataclasses; export the first tensor output."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        y = self.m(x)
        if isinstance(y, torch.Tensor):
            return y
        return y[0]


def export(name, make, make_inputs, outdir):
    # eval() on the wrapper: the legacy exporter restores the wrapper's mode
    # recursively, which would leave a train-mode wrapper's model in train mode.
    model = FirstOutput(make()).eval()
    inputs = make_inputs()
    for exporter in os.environ.get("EXPORTERS", "dynamo,torchscript").split(","):
        path = os.path.join(outdir, f"{name}.{exporter}.onnx")
        try:
            with torch.no_grad():
                if exporter == "dynamo":
                    batch = torch.export.Dim("batch", min=1, max=64)
                    torch.onnx.export(model, inputs, path, dynamo=True, opset_version=20,
                                      dynamic_shapes={"x": {0: batch}}, external_data=False)
                else:
                    torch.onnx.export(model, inputs, path, dynamo=False, opset_version=17,
                                      input_names=[f"input_{i}" for i in range(len(inputs))],
                                      dynamic_axes={f"input_{i}": {0: "batch"} for i in range(len(inputs))})
            ind = os.path.join(outdir, f"{name}.{exporter}.in")
            os.makedirs(ind, exist_ok=True)
            for i, x in enumerate(inputs):
                with open(os.path.join(ind, f"input_{i}.pb"), "wb") as f:
                    f.write(numpy_helper.from_array(x.numpy()).SerializeToString())
            # PyTorch's own outputs: the reference a committed model is checked against.
            with torch.no_grad():
                y = model(*inputs)
            with open(os.path.join(ind, "torch_output_0.pb"), "wb") as f:
                f.write(numpy_helper.from_array(y.numpy()).SerializeToString())
            print(f"export: {name}.{exporter}: ok ({os.path.getsize(path) >> 10} KiB)", flush=True)
        except Exception as e:  # keep going: one model failing is a data point
            print(f"export: {name}.{exporter}: FAILED {type(e).__name__}: {str(e).splitlines()[0][:200]}",
                  flush=True)
            traceback.print_exc(limit=2, file=sys.stderr)


def main():
    outdir = sys.argv[1]
    want = sys.argv[2].split(",") if len(sys.argv) > 2 else None
    os.makedirs(outdir, exist_ok=True)
    for name, (make, make_inputs) in models().items():
        if want is None or name in want:
            export(name, make, make_inputs, outdir)


if __name__ == "__main__":
    main()
