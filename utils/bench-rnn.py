#!/usr/bin/env python3
"""Recurrent nets against PyTorch's cuDNN in one process (GPU machine): for
each model (nn.LSTM / nn.GRU, time-major, no initial state), export it with
torch.onnx.export, compile it with tc (tc-opt -O2 --target=cuda [--precision
fp16] | tc-codegen --target=cuda; lower-recurrent unrolls the steps), time
`tc-run --iterations` (median CUDA-event device time, CUDA graph) and the
module's forward (cuDNN, CUDA events, median) on the same input, and print
one JSON row per model and precision: both times, tc / torch, tc's compile
seconds and step counts (fallback_steps must be 0), and the relative error
of each output against PyTorch fp32.

    bench-rnn.py --bin BUILD/bin [--out DIR] [--models lstm,gru] [--precisions fp32,fp16]
                 [--layers 2] [--hidden 1024] [--batch 32] [--seq 128] [--iterations 50]

fp32 runs with TF32 off on both sides (torch.backends.cudnn.allow_tf32 and
tc-codegen --allow-tf32=none); fp16: the module in half, tc at --precision
fp16 with f32 inputs and outputs. The issue-34 floor is tc within 1.2x of
PyTorch at full size (2 layers, hidden 1024, batch 32 x 128 steps).
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
import onnx
import torch
from onnx import numpy_helper

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
DEV = "cuda"


class Output(torch.nn.Module):
    """The recurrent module's Y only (its states are outputs of the ONNX
    model too, but the comparison reads Y)."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)[0]


def note(*a):
    print("bench-rnn: %.1fs:" % (time.perf_counter() - T0), *a, file=sys.stderr, flush=True)


T0 = time.perf_counter()


def run(cmd, timeout=1800):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, shell=isinstance(cmd, str), capture_output=True, text=True, timeout=timeout)
    if p.returncode:
        raise RuntimeError("%s: %s" % (cmd if isinstance(cmd, str) else " ".join(cmd),
                                       (p.stderr.strip().splitlines() or ["failed"])[-1]))
    return p, time.perf_counter() - t0


def torch_ms(model, x, iterations):
    with torch.no_grad():
        for _ in range(5):
            model(x)
        torch.cuda.synchronize()
        ms = []
        for _ in range(iterations):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            model(x)
            b.record()
            b.synchronize()
            ms.append(a.elapsed_time(b))
    return float(np.median(ms))


def rel_err(got, want):
    return float(np.linalg.norm(got.astype(np.float64) - want) / max(np.linalg.norm(want), 1e-30))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/tc-bench-rnn"))
    ap.add_argument("--models", default="lstm,gru")
    ap.add_argument("--precisions", default="fp32,fp16")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--input", type=int, default=0, help="input features (0: the hidden size)")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--bidirectional", action="store_true")
    ap.add_argument("--iterations", type=int, default=50)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    features = a.input or a.hidden
    for name in a.models.split(","):
        torch.manual_seed(0)
        cls = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU, "rnn": torch.nn.RNN}[name]
        module = Output(cls(features, a.hidden, num_layers=a.layers, bidirectional=a.bidirectional)).to(DEV).eval()
        x = torch.randn(a.seq, a.batch, features, device=DEV)
        base = os.path.join(a.out, name)
        torch.onnx.export(module, (x,), base + ".onnx", opset_version=14, dynamo=False,
                          input_names=["x"], output_names=["y"])
        data = base + "_data"
        os.makedirs(data, exist_ok=True)
        with open(os.path.join(data, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x.cpu().numpy(), "x").SerializeToString())
        with torch.no_grad():
            want = module(x).double().cpu().numpy()
        note(name, "exported")
        for precision in a.precisions.split(","):
            row = {"model": name, "precision": precision, "layers": a.layers, "hidden": a.hidden,
                   "batch": a.batch, "seq": a.seq, "bidirectional": a.bidirectional}
            half = precision == "fp16"
            m, xin = (module.half(), x.half()) if half else (module.float(), x.float())
            row["torch_ms"] = torch_ms(m, xin, a.iterations)
            with torch.no_grad():
                row["torch_err"] = rel_err(m(xin).double().cpu().numpy(), want)
            tcx = "%s.%s.tcx" % (base, precision)
            try:
                _, compile_s = run("%s/tc-import %s.onnx | %s/tc-opt -O2 --target=cuda %s | "
                                   "%s/tc-codegen --target=cuda --stats %s -o %s"
                                   % (a.bin, base, a.bin, "--precision fp16" if half else "", a.bin,
                                      "" if half else "--allow-tf32=none", tcx))
                row["tc_compile_s"] = compile_s
                outdir = "%s.%s.out" % (base, precision)
                p, _ = run([os.path.join(a.bin, "tc-run"), tcx, "--inputs", data, "--output-dir", outdir,
                            "--iterations", str(a.iterations), "--warmup", "5", "--report=json"])
                rep = json.loads(p.stdout)
                row["tc_ms"] = rep.get("device_ms", rep["latency_ms"])["median"]
                row["tc_steps"] = {k: rep.get(k) for k in ("kernel_steps", "library_steps", "fallback_steps")}
                row["tc_over_torch"] = row["tc_ms"] / row["torch_ms"]
                # TensorProto.FromString: numpy_helper.load_tensor_from_string is gone in onnx 1.23.
                with open(os.path.join(outdir, "output_0.pb"), "rb") as f:
                    got = numpy_helper.to_array(onnx.TensorProto.FromString(f.read()))
                row["tc_err"] = rel_err(got, want)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                row["error"] = str(e)[-400:]
            note(name, precision, "done")
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
