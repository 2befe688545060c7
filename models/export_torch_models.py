#!/usr/bin/env python3
"""Exports real PyTorch models (random weights, no downloads) to ONNX with both
exporters, for the import breadth check on the GPU machine (which has torch,
torchvision, timm and transformers):

    python3 models/export_torch_models.py OUTDIR [name,name,...] [--suite vision,text,generative]
        [--small] [--batch 2] [--exporters dynamo,torchscript] [--layout flat|dir] [--list]

The zoo (models/zoo_models.py: vision, text and generative suites, full size
or --small) and the tiny models of models/small. Writes
OUTDIR/<model>.<exporter>.onnx for exporter in {dynamo (opset 20, IR 10),
torchscript (opset 17)}, with a symbolic batch dim, plus one
OUTDIR/<model>.<exporter>.in/ set of random inputs (input_N.pb) and PyTorch's
output (torch_output_0.pb); --layout dir writes OUTDIR/<model>/model.onnx and
test_data_set_0/ instead (models/small's layout). A model that fails to
export is reported with its error (and in OUTDIR/export-status.json) and the
run goes on. Threads: $TORCH_THREADS (default 2).
"""
import argparse
import json
import os
import sys
import time
import traceback

import numpy as np
import torch
from onnx import numpy_helper

torch.manual_seed(0)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_models  # noqa: E402  (the zoo: models/zoo_models.py)


def models(small=False):
    """name -> (make(), make_inputs(batch=2)): the zoo (full size, or its small
    configs) and the tiny models committed under models/small."""
    import torchvision
    out = zoo_models.recipes(small)
    out["mobilenet_v3_small"] = (lambda: torchvision.models.mobilenet_v3_small(),
                                 lambda batch=2: (torch.randn(batch, 3, 224, 224),))

    def vit():
        import timm
        return timm.create_model("vit_tiny_patch16_224", pretrained=False)
    out["vit_tiny"] = (vit, lambda batch=2: (torch.randn(batch, 3, 224, 224),))

    def bert():
        from transformers import BertConfig, BertModel
        cfg = BertConfig(hidden_size=128, num_hidden_layers=2, num_attention_heads=2, intermediate_size=512,
                         vocab_size=1000)
        return BertModel(cfg)
    out["bert_tiny"] = (bert, lambda batch=2: (torch.randint(0, 1000, (batch, 16)),))

    def gpt2():
        from transformers import GPT2Config, GPT2Model
        cfg = GPT2Config(n_embd=128, n_layer=2, n_head=2, vocab_size=1000, n_positions=64)
        return GPT2Model(cfg)
    out["gpt2_tiny"] = (gpt2, lambda batch=2: (torch.randint(0, 1000, (batch, 16)),))
    # Small models committed under models/small with PyTorch's own outputs.
    out["small_cnn"] = (SmallCNN, lambda batch=2: (torch.randn(batch, 3, 32, 32),))
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
    """HF models return dataclasses; export the first tensor output. `mask`:
    the second input of the recipes with an attention mask (zoo_models.WithMask)."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x, mask=None):
        y = self.m(x) if mask is None else self.m(x, mask)
        if isinstance(y, torch.Tensor):
            return y
        return y[0]


def error_line(e):
    """The exception's first line, and its cause's (torch.onnx wraps the real error)."""
    def one(x):
        return f"{type(x).__name__}: {(str(x).strip().splitlines() or [''])[0][:200]}"
    return one(e) + (f" <- {one(e.__cause__)}" if e.__cause__ is not None else "")


def save_pb(t, path):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(t.detach().numpy()).SerializeToString())


def export(name, make, make_inputs, outdir, exporters, batch=2, dynamic_seq=False, layout="flat"):
    """Exports one model with each exporter; returns {exporter: status dict}.
    layout flat: OUTDIR/<name>.<exporter>.onnx + .in/ (inputs, torch_output_0.pb);
    layout dir: OUTDIR/<name>/model.onnx + test_data_set_0/ (input_N.pb,
    output_0.pb), the layout of models/small and of tc-bench --models-dir."""
    status = {}
    try:
        # eval() on the wrapper: the legacy exporter restores the wrapper's mode
        # recursively, which would leave a train-mode wrapper's model in train mode.
        torch.manual_seed(0)
        model = FirstOutput(make()).eval()
        inputs = make_inputs(batch)
        if inputs[0].is_floating_point():  # images, clips, features: BatchNorms see data
            zoo_models.calibrate_batchnorm(model, make_inputs(8)[0])
    except Exception as e:
        err = "model: " + error_line(e)
        print(f"export: {name}: FAILED {err}", flush=True)
        return {x: dict(status="failed", error=err) for x in exporters}
    dims = {0: torch.export.Dim("batch", min=1, max=64)}
    if dynamic_seq:
        dims[1] = torch.export.Dim("seq", min=2, max=inputs[0].shape[1] * 4)
    shapes = dict(zip(["x", "mask"], [dims] * len(inputs)))  # a mask has the ids' dims
    for exporter in exporters:
        if layout == "dir":
            ind = os.path.join(outdir, name if len(exporters) == 1 else f"{name}.{exporter}")
            path, ind, out = os.path.join(ind, "model.onnx"), os.path.join(ind, "test_data_set_0"), "output_0.pb"
        else:
            path = os.path.join(outdir, f"{name}.{exporter}.onnx")
            ind, out = os.path.join(outdir, f"{name}.{exporter}.in"), "torch_output_0.pb"
        os.makedirs(ind, exist_ok=True)
        t0 = time.time()
        try:
            with torch.no_grad():
                if exporter == "dynamo":
                    torch.onnx.export(model, inputs, path, dynamo=True, opset_version=20,
                                      dynamic_shapes=shapes, external_data=False)
                else:
                    axes = {0: "batch", 1: "seq"} if dynamic_seq else {0: "batch"}
                    torch.onnx.export(model, inputs, path, dynamo=False, opset_version=17,
                                      input_names=[f"input_{i}" for i in range(len(inputs))],
                                      dynamic_axes={f"input_{i}": axes for i in range(len(inputs))})
            for i, x in enumerate(inputs):
                save_pb(x, os.path.join(ind, f"input_{i}.pb"))
            # PyTorch's own outputs: the reference a committed model is checked against.
            with torch.no_grad():
                save_pb(model(*inputs), os.path.join(ind, out))
            kib = os.path.getsize(path) >> 10
            status[exporter] = dict(status="ok", path=path, kib=kib, seconds=round(time.time() - t0, 1))
            print(f"export: {name}.{exporter}: ok ({kib} KiB, {time.time() - t0:.0f} s)", flush=True)
        except Exception as e:  # keep going: one model failing is a data point
            status[exporter] = dict(status="failed", error=error_line(e), seconds=round(time.time() - t0, 1))
            print(f"export: {name}.{exporter}: FAILED {error_line(e)}", flush=True)
            traceback.print_exc(limit=2, file=sys.stderr)
    return status


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("names", nargs="?", help="comma-separated models (default: all, or --suite's)")
    ap.add_argument("--suite", help="the zoo's vision, text or generative models (comma-separated for several)")
    ap.add_argument("--small", action="store_true", help="the zoo's small configs / images (the coverage survey)")
    ap.add_argument("--batch", type=int, default=2, help="the example inputs' batch (symbolic in the export)")
    ap.add_argument("--dynamic-seq", action="store_true",
                    help="token models whose recipe allows it: the sequence dim symbolic too (tc-bench "
                         "specializes every symbolic dim to its batch: not for tc-bench)")
    ap.add_argument("--exporters", default=os.environ.get("EXPORTERS", "dynamo,torchscript"))
    ap.add_argument("--layout", choices=["flat", "dir"], default="flat", help="see export()")
    ap.add_argument("--list", action="store_true", help="print name, suite and source of every model and exit")
    args = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("TORCH_THREADS", "2")))
    recipes = models(args.small)
    if args.list:
        for n in recipes:
            r = zoo_models.ZOO.get(n)
            print(f"{n:32} {r.suite if r else '-':11} {r.source if r else 'models/small / tiny'}")
        return
    want = args.names.split(",") if args.names else None
    if args.suite:
        suites = args.suite.split(",")
        want = (want or []) + [n for n, r in zoo_models.ZOO.items() if r.suite in suites]
    unknown = [n for n in want or [] if n not in recipes]
    if unknown:
        sys.exit(f"export_torch_models.py: no recipe {', '.join(unknown)} (--list lists them)")
    os.makedirs(args.outdir, exist_ok=True)
    exporters = args.exporters.split(",")
    summary_path = os.path.join(args.outdir, "export-status.json")
    summary = json.load(open(summary_path)) if os.path.exists(summary_path) else {}
    for name in want or list(recipes):
        r = zoo_models.ZOO.get(name)
        st = export(name, *recipes[name], args.outdir, exporters, args.batch,
                    args.dynamic_seq and bool(r and r.seq_dynamic), args.layout)
        summary[name] = dict(suite=r.suite if r else "small", small=args.small, exporters=st)
        with open(summary_path, "w") as f:  # after each model: a run cut short keeps what it did
            json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
