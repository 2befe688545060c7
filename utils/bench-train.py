#!/usr/bin/env python3
"""The PyTorch side of `tc-bench --train` (lib/Bench/TorchTrainer.cpp runs it;
docs/bench.md, "Training"): the models (models/training_models.py) exported
for tc with the batches both sides train on, and PyTorch's own train steps
(eager, torch.compile default mode) from the SAME initial weights (the ONNX
file's initializers) on the SAME batches with the optimizer, loss and
precision tc-bench gives.

  --check-torch                         exit 0 when torch imports
  --export-for-train DIR --models NAME [--batch B]
        DIR/NAME/model.onnx (TorchScript exporter, opset 17, no constant
        folding: the initializers are the parameters, named as state_dict
        names them) and DIR/NAME/test_data_set_0..3 (input_0.pb the input,
        input_1.pb the labels; a recipe with a mask input: input_0.pb the
        ids, input_1.pb the mask, input_2.pb the labels); TC_TRAIN_SMALL=1 in the environment: the
        zoo's models at their small configs (here and in --torch-train,
        which tc-bench runs: set it for both)
  --torch-train --models NAME --onnx FILE --data DIR --steps N --warmup W
        --precision fp32|amp --modes eager,compile --device cpu|cuda --lr LR --weight-decay WD
        [--threads N: torch.set_num_threads, tc-bench --threads]
        one JSON line: per mode {losses, ms, p10_ms, p90_ms (the steps after
        the first W), compile_s (torch.compile: its first step), peak_bytes
        (CUDA: max_memory_allocated)}; amp also fp32_eager_losses (PyTorch
        fp32 eager on the same batches: AMP's distance from fp32 is the
        rule's scale); init "k/n" (state tensors set from the ONNX file)
        [--f64-reference: fp32 also f64_eager_losses, PyTorch eager in f64,
        which fp32's are held to (lib/Bench/LossRule.h)]

Every step reads its loss back (a sync per step, as tc-run --train --log-every 1
does): the losses are compared step by step. fp32 with TF32 off. AdamW
(foreach), cross-entropy with ignore_index -100; amp: autocast(float16) and
GradScaler, the loss in fp32.
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "models"))


def save_pb(t, path):
    from onnx import numpy_helper
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(t.numpy()).SerializeToString())


def load_batches(data):
    import torch
    from onnx import TensorProto, numpy_helper

    def read(p):
        t = TensorProto()
        with open(p, "rb") as f:
            t.ParseFromString(f.read())
        return torch.from_numpy(numpy_helper.to_array(t).copy())
    sets = sorted(d for d in os.listdir(data) if d.startswith("test_data_set_"))
    batches = []
    for d in sets:
        n = sum(1 for f in os.listdir(os.path.join(data, d)) if f.startswith("input_") and f.endswith(".pb"))
        parts = [read(os.path.join(data, d, "input_%d.pb" % i)) for i in range(n)]
        batches.append((tuple(parts[:-1]), parts[-1]))  # the model's inputs, then the labels
    return batches


def export(out, name, batch, count=4):
    import torch
    from training_models import make
    model, mk_x, mk_y = make(name, batch)
    # A model with a mask input takes (ids, mask): input_0, input_1, the labels last.
    batches = []
    for _ in range(count):
        x = mk_x()
        batches.append((x if isinstance(x, tuple) else (x,), mk_y()))
    d = os.path.join(out, name)
    for i, (xs, y) in enumerate(batches):
        s = os.path.join(d, "test_data_set_%d" % i)
        os.makedirs(s, exist_ok=True)
        for k, x in enumerate(xs + (y,)):
            save_pb(x, os.path.join(s, "input_%d.pb" % k))
    names = ["x", "mask"][:len(batches[0][0])]
    path = os.path.join(d, "model.onnx")
    torch.onnx.export(model.eval(), batches[0][0], path, opset_version=17,
                      dynamo=False, do_constant_folding=False, input_names=names, output_names=["logits"])
    # What PyTorch does not train (float buffers: ESM's rotary inv_freq; parameters
    # without requires_grad: Whisper's positional table) tc does not either:
    # tc-import keeps this entry and train-state leaves those initializers constants.
    frozen = [k for k, b in model.named_buffers() if b.is_floating_point()]
    frozen += [k for k, p in model.named_parameters() if not p.requires_grad]
    if frozen:
        import onnx
        proto = onnx.load(path, load_external_data=False)  # external weights stay where they are
        entry = proto.metadata_props.add()
        entry.key, entry.value = "tc.frozen", "\n".join(frozen)
        onnx.save(proto, path)


def train(model, batches, a, compile_, amp):
    import numpy as np
    import torch
    from training_models import loss_of
    dev = a.device
    model = model.to(dev).train()
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=a.weight_decay, eps=1e-8, foreach=True)
    fwd = torch.compile(model) if compile_ else model
    scaler = torch.amp.GradScaler(dev, enabled=amp)

    def step(xs, y):
        with torch.autocast(dev, dtype=torch.float16, enabled=amp):
            loss = loss_of(fwd(*xs), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        return loss

    cuda = dev == "cuda"
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    on_dev = [(tuple(x.to(dev) for x in xs), y.to(dev)) for xs, y in batches]
    losses, ms, scales = [], [], []
    for i in range(a.steps):
        x, y = on_dev[i % len(on_dev)]
        t0 = time.perf_counter()
        losses.append(step(x, y).item())  # syncs: the step's time includes its loss read
        ms.append((time.perf_counter() - t0) * 1e3)
        if amp:  # after the timing: the scale after the step (halved: that step overflowed)
            scales.append(scaler.get_scale())
    timed = ms[a.warmup:] if a.steps > a.warmup else ms[-1:]
    row = {"losses": losses, "ms": float(np.median(timed)), "p10_ms": float(np.percentile(timed, 10)),
           "p90_ms": float(np.percentile(timed, 90))}
    if amp:
        row["scales"] = scales
    if compile_:
        row["compile_s"] = ms[0] / 1e3
    if cuda:
        row["peak_bytes"] = int(torch.cuda.max_memory_allocated())
    return row


def draws_at_random(model, xs, dev):
    """A reason if the model's training-mode forward is random (a dropout or
    drop-path that training_models.no_dropout missed: tc's step has none),
    else None: two forwards of one batch under different seeds must agree
    (to 1e-3 of the output's scale: GPU reductions may reorder)."""
    import torch
    model = model.to(dev).train()
    outs = []
    for seed in (1, 2):
        torch.manual_seed(seed)
        with torch.no_grad():  # the logits, as train()'s loss_of reads them
            outs.append(model(*(x.to(dev) for x in xs)).double())
    d = (outs[0] - outs[1]).abs().max().item()
    if d > 1e-3 * (outs[0].abs().max().item() + 1e-6):
        return "the model draws at random in training mode (outputs under two seeds %.3g apart)" % d
    return None


def torch_train(a):
    import torch
    from training_models import load_initializers, make
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model, _, _ = make(a.models)
    found, total = load_initializers(model, a.onnx)
    init = {k: v.detach().clone() for k, v in model.state_dict().items()}
    batches = load_batches(a.data)
    amp = a.precision == "amp"
    out = {"model": a.models, "precision": a.precision, "init": "%d/%d" % (found, total)}
    random = draws_at_random(model, batches[0][0], a.device)
    for mode in filter(None, a.modes.split(",")):
        if random:  # its losses would differ from tc's by the draws, not by the arithmetic
            out[mode] = {"error": random}
            continue
        model.load_state_dict(init)
        if mode == "compile":
            torch._dynamo.reset()
        try:
            out[mode] = train(model, batches, a, mode == "compile", amp)
        except Exception as e:  # a mode that fails is that row's reason
            out[mode] = {"error": "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")}
    if amp:
        model.load_state_dict(init)
        out["fp32_eager_losses"] = train(model, batches, a, False, False)["losses"]
    if a.f64_reference and not amp:
        model.load_state_dict(init)
        wide = [(tuple(x.double() if x.is_floating_point() else x for x in xs), y) for xs, y in batches]
        out["f64_eager_losses"] = train(model.double(), wide, a, False, False)["losses"]
    print(json.dumps(out), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check-torch", action="store_true")
    ap.add_argument("--export-for-train", metavar="DIR")
    ap.add_argument("--torch-train", action="store_true")
    ap.add_argument("--models")
    ap.add_argument("--batch", type=int)
    ap.add_argument("--onnx")
    ap.add_argument("--data")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--precision", choices=["fp32", "amp"], default="fp32")
    ap.add_argument("--modes", default="eager,compile")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--weight-decay", type=float, default=0.01)
    ap.add_argument("--threads", type=int)
    ap.add_argument("--f64-reference", action="store_true")
    a = ap.parse_args()
    if a.check_torch:
        import torch  # noqa: F401
        return
    if a.export_for_train:
        export(a.export_for_train, a.models, a.batch)
    elif a.torch_train:
        torch_train(a)
    else:
        ap.error("give --check-torch, --export-for-train or --torch-train")


if __name__ == "__main__":
    main()
