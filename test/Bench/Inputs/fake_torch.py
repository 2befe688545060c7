#!/usr/bin/env python3
"""Stand-in for utils/bench-gpu.py in tests without PyTorch: the same flags
tc-bench passes (lib/Bench/TorchBaseline.cpp), known answers.
  --check-torch                 exit 0 (torch "imports")
  --export-for-bench DIR ...    DIR/NAME/model.onnx: a copy of models/ci/mlp.onnx;
                                model "noexport" fails as a real export does
  --torch-only --models NAME    one JSON line: eager 4 ms, 8 MB peak; inductor 2 ms;
                                inductor-cg 1000 ms, or 1e-5 ms for "cnn" (tc far slower)
      --inputs DIR --precision amp  ... and amp_err (PyTorch AMP's own error): 0.5 for
                                "cnn", 0 otherwise; DIR/input_0.pb must exist
      --modes ""                    no timing (amp_err alone)
"""
import argparse, json, os, shutil, sys

ap = argparse.ArgumentParser()
ap.add_argument("--check-torch", action="store_true")
ap.add_argument("--export-for-bench")
ap.add_argument("--torch-only", action="store_true")
ap.add_argument("--models")
ap.add_argument("--modes", default="eager")
for flag in ("--inputs", "--batches", "--precision", "--input-shape", "--input-dtype", "--iterations", "--device"):
    ap.add_argument(flag)
args = ap.parse_args()
if args.check_torch:
    sys.exit(0)
if args.export_for_bench:
    if args.models == "noexport":
        print("%s: FAILED to export: Unsupported: aten::frobnicate has no ONNX symbolic" % args.models,
              file=sys.stderr)
        sys.exit(1)
    d = os.path.join(args.export_for_bench, args.models)
    os.makedirs(d, exist_ok=True)
    here = os.path.dirname(os.path.abspath(__file__))
    shutil.copy(os.path.join(here, "..", "..", "..", "models", "ci", "mlp.onnx"), os.path.join(d, "model.onnx"))
    sys.exit(0)
if args.torch_only:
    ro = 1e-5 if args.models == "cnn" else 1000.0
    times = {"eager": (4.0, 8000000), "inductor": (2.0, 6000000), "inductor-cg": (ro, 7000000)}
    out = {}
    if args.inputs:
        if not os.path.exists(os.path.join(args.inputs, "input_0.pb")):
            sys.exit("fake_torch.py: no %s/input_0.pb" % args.inputs)
        if args.precision == "amp":
            out["amp_err"] = 0.5 if args.models == "cnn" else 0.0
    for mode in filter(None, args.modes.split(",")):
        ms, peak = times[mode]
        out[mode] = dict(ms=ms, p10_ms=ms * 0.9, p90_ms=ms * 1.1, compile_s=0.5, peak_bytes=peak)
    out.update(model=args.models, precision=args.precision)
    print("torch prints before the JSON line")
    print(json.dumps(out))
