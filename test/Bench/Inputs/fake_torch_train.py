#!/usr/bin/env python3
"""Stand-in for utils/bench-train.py (tc-bench --train's PyTorch side) in
tests without PyTorch: the flags tc-bench passes (lib/Bench/TorchTrainer.cpp),
PyTorch's real losses read from train/torch_losses.json (made by the real
script on the CPU), so tc's real CPU train step is checked against them.
  --check-torch                      exit 0
  --export-for-train DIR --models M  DIR/M/model.onnx and its batches: a copy of
                                     models/training/cnn.onnx and cnn/; M "noexport" fails
  --torch-train --models M ...       one JSON line: eager (4 ms a step, 8 MB peak) and
                                     compile (2 ms, 6 MB, compile 0.5 s) with the
                                     committed losses of M ("exported": cnn's);
                                     "cnn_diverged": cnn's, the last 1% higher (tc's
                                     then differ: its rows fail); amp adds the fp32 ones;
                                     TC_FAKE_TORCH_DIVERGE=M does that to M;
                                     --f64-reference (fp32): f64_eager_losses, the
                                     committed ones (undiverged)
"""
import argparse, json, os, shutil, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("--check-torch", action="store_true")
ap.add_argument("--export-for-train")
ap.add_argument("--torch-train", action="store_true")
ap.add_argument("--models")
ap.add_argument("--steps", type=int)
ap.add_argument("--precision")
ap.add_argument("--modes")
ap.add_argument("--f64-reference", action="store_true")
for flag in ("--batch", "--onnx", "--data", "--warmup", "--device", "--lr", "--weight-decay", "--threads"):
    ap.add_argument(flag)
a = ap.parse_args()
if a.check_torch:
    sys.exit(0)
if a.export_for_train:
    if a.models == "noexport":
        sys.exit("noexport: FAILED to export: Unsupported: aten::frobnicate has no ONNX symbolic")
    training = os.path.join(HERE, "..", "..", "..", "models", "training")
    d = os.path.join(a.export_for_train, a.models)
    shutil.copytree(os.path.join(training, "cnn"), d, dirs_exist_ok=True)
    shutil.copy(os.path.join(training, "cnn.onnx"), os.path.join(d, "model.onnx"))
    sys.exit(0)
if a.torch_train:
    with open(os.path.join(HERE, "train", "torch_losses.json")) as f:
        known = json.load(f)
    name = {"exported": "cnn", "cnn_diverged": "cnn"}.get(a.models, a.models)
    losses = lambda p: known["%s.%s" % (name, p)][:a.steps]
    mine = losses(a.precision)
    if a.models == "cnn_diverged" or os.environ.get("TC_FAKE_TORCH_DIVERGE") == a.models:
        mine[-1] *= 1.01
    out = {"model": a.models, "precision": a.precision, "init": "10/11"}
    times = {"eager": (4.0, 8000000, None), "compile": (2.0, 6000000, 0.5)}
    for mode in filter(None, a.modes.split(",")):
        ms, peak, compile_s = times[mode]
        out[mode] = dict(losses=mine, ms=ms, p10_ms=ms * 0.9, p90_ms=ms * 1.1, peak_bytes=peak)
        if compile_s:
            out[mode]["compile_s"] = compile_s
    if a.precision == "amp":
        out["fp32_eager_losses"] = losses("fp32")
    if a.f64_reference and a.precision == "fp32":
        out["f64_eager_losses"] = losses("fp32")
    print("torch prints before the JSON line")
    print(json.dumps(out))
