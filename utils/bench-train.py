#!/usr/bin/env python3
"""Training side by side with PyTorch (GPU machine): for each model, one process
runs PyTorch eager and torch.compile train steps and tc's compiled train step
(tc-opt --train | tc-codegen --target=cuda | tc-run --train) from the SAME initial
weights (the ONNX export of the PyTorch module) on the SAME batches, fp32 with
TF32 off on both sides, cross-entropy and AdamW (lr 1e-4, weight decay 0.01);
prints one JSON row per model: per-step losses of each, the relative loss
difference at the last step, ms per step (median over steps after the 10th),
compile time (tc: tc-opt + tc-codegen; torch.compile: its first step), peak
device memory. Every step of every side reads its loss back (a sync per step on
both sides: the losses are compared step by step).

--precision fp16 compares AMP: PyTorch's autocast(float16) + GradScaler against
tc's `--precision fp16` (f16 forward and backward, f32 master weights, dynamic
loss scale on the device). AMP's losses cannot equal fp32's, so the row also
carries PyTorch fp32 eager's losses: `amp_spread_torch` is PyTorch AMP's own
relative distance from them at the last step, `amp_spread_tc` tc's; tc tracks
when its distance is within a few times PyTorch's own.

    bench-train.py --bin BUILD/bin --out DIR [--steps 100] [--precision fp16] resnet50,bert_base,gpt2,vit_b_16,llama

Models: resnet50 (b32), vit_b_16 (b32), bert_base (masked LM, 8x128, 15% of the
labels kept, the rest ignore_index -100), gpt2 (LM, 8x128), llama (the zoo's
LlamaForCausalLM: hidden 1024, 8 layers, GQA; 4x256). Dropout off (both sides)
so the steps are deterministic; batch norm in training mode on both sides.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

import numpy as np
import torch
from onnx import numpy_helper

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
DEV = "cuda"
LR, WD = 1e-4, 0.01
BATCHES = 4  # distinct batches, cycled by both sides
TIMEOUT = int(os.environ.get("TC_BENCH_TIMEOUT", "240"))  # per tc command


sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models"))
from make_training_refs import Logits, perturb  # noqa: E402

# Given an all-ones attention mask (newer transformers otherwise look for packed
# sequences with aten::diff, which the TorchScript exporter cannot export).
ONES_MASK = {"gpt2", "llama"}


def make(name):
    """(module, batch dims, input maker, number of classes, label maker)."""
    g = torch.Generator().manual_seed(1)
    if name in ("resnet50", "vit_b_16"):
        import torchvision
        m = getattr(torchvision.models, name)()
        x = lambda: torch.randn(32, 3, 224, 224, generator=g)
        y = lambda: torch.randint(0, 1000, (32,), generator=g)
        return m, x, y
    import transformers as tr
    if name == "bert_base":
        m = tr.BertForMaskedLM(tr.BertConfig(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                                             attn_implementation="eager"))
        v, b, s = 30522, 8, 128
    elif name == "gpt2":
        m = tr.GPT2LMHeadModel(tr.GPT2Config(resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                                             attn_implementation="eager"))
        v, b, s = 50257, 8, 128
    elif name == "llama":
        m = tr.LlamaForCausalLM(tr.LlamaConfig(hidden_size=1024, intermediate_size=2816, num_hidden_layers=8,
                                               num_attention_heads=16, num_key_value_heads=4, vocab_size=32000,
                                               max_position_embeddings=2048, attn_implementation="eager"))
        v, b, s = 32000, 4, 256
    else:
        sys.exit("unknown model " + name)
    m.config.use_cache = False
    x = lambda: torch.randint(0, v, (b, s), generator=g)

    def y():
        labels = torch.randint(0, v, (b, s), generator=g)
        if name == "bert_base":
            labels[torch.rand(b, s, generator=g) > 0.15] = -100
        return labels
    return m, x, y


def save_pb(t, path):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(t.numpy()).SerializeToString())


def torch_run(model, batches, steps, compile_, amp=False):
    model = model.to(DEV).train()
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=WD, eps=1e-8, foreach=True)
    lossf = torch.nn.CrossEntropyLoss(ignore_index=-100)
    fwd = torch.compile(model) if compile_ else model
    scaler = torch.amp.GradScaler("cuda", enabled=amp)

    def step(x, y):
        with torch.autocast("cuda", dtype=torch.float16, enabled=amp):
            logits = fwd(x)
            loss = lossf(logits.reshape(-1, logits.shape[-1]).float(), y.reshape(-1))
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        return loss

    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    losses, ms, first = [], [], 0.0
    dev_batches = [(x.to(DEV), y.to(DEV)) for x, y in batches]
    for i in range(steps):
        x, y = dev_batches[i % len(dev_batches)]
        t0 = time.perf_counter()
        loss = step(x, y)
        losses.append(loss.item())  # syncs: the step's time includes its loss read
        dt = (time.perf_counter() - t0) * 1e3
        if i == 0:
            first = dt
        ms.append(dt)
    return {"losses": losses, "ms": float(np.median(ms[10:])) if steps > 12 else ms[-1], "first_ms": first,
            "peak_mib": torch.cuda.max_memory_allocated() / 2**20}


def note(*a):
    print("bench-train: %.1fs:" % (time.perf_counter() - T0), *a, file=sys.stderr, flush=True)


T0 = time.perf_counter()


def tc_run(name, out, bin_, steps, precision):
    onnx_path, data = os.path.join(out, name + ".onnx"), os.path.join(out, name + "_data")
    tcx = os.path.join(out, name + ".train.%s.tcx" % precision)
    t0 = time.perf_counter()
    opt = subprocess.run("%s/tc-import %s | %s/tc-opt --train --loss=cross-entropy "
                         "--optimizer=adamw:lr=%g,weight-decay=%g --precision %s -O2 --target=cuda | "
                         "%s/tc-codegen --target=cuda --allow-tf32=none --stats -o %s"
                         % (bin_, onnx_path, bin_, LR, WD, precision, bin_, tcx),
                         shell=True, capture_output=True, text=True, timeout=TIMEOUT)
    compile_s = time.perf_counter() - t0
    note(name, "tc compiled in %.1f s, rc %d" % (compile_s, opt.returncode))
    host = [l for l in opt.stderr.splitlines() if "runs on the host" in l]
    if opt.returncode:
        return {"error": opt.stderr.strip().splitlines()[-1] if opt.stderr.strip() else "compile failed"}
    row = {"compile_s": compile_s, "host_steps": len(host), "host_step_lines": host[:5]}
    # One run: every step's loss read back (a sync per step, as PyTorch's side does).
    r = subprocess.run([bin_ + "/tc-run", tcx, "--train", str(steps), "--log-every", "1", "--data", data],
                       capture_output=True, text=True, timeout=TIMEOUT)
    note(name, "tc run, rc %d: %s" % (r.returncode, r.stderr.strip().splitlines()[-1:] if r.stderr else ""))
    if r.returncode:
        row["error"] = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "run failed"
        return row
    row["losses"] = [float(m) for m in re.findall(r"^step \d+/\d+  loss (\S+)", r.stdout, re.M)]
    rates = [float(m) for m in re.findall(r"  (\S+) samples/s$", r.stdout, re.M)]
    samples = int(re.search(r"steps of (\d+) samples", r.stderr).group(1)) if "steps of" in r.stderr else 1
    if len(rates) > 12:
        row["ms"] = 1e3 * samples / float(np.median(rates[10:]))
    elif rates:
        row["ms"] = 1e3 * samples / rates[-1]
    peak = re.search(r"peak device memory (\S+) MiB", r.stderr)
    if peak:
        row["peak_mib"] = float(peak.group(1))
    row["run_note"] = r.stderr.strip().splitlines()[-1:] if r.stderr else []
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models")
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--skip-compile", action="store_true", help="no torch.compile column")
    ap.add_argument("--precision", choices=["fp32", "fp16"], default="fp32")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for name in a.models.split(","):
        torch.manual_seed(0)
        m, mk_x, mk_y = make(name)
        m = Logits(m, name in ONES_MASK)
        perturb(m)
        batches = [(mk_x(), mk_y()) for _ in range(BATCHES)]
        init = {k: v.detach().clone() for k, v in m.state_dict().items()}
        data = os.path.join(a.out, name + "_data")
        for i, (x, y) in enumerate(batches):
            d = os.path.join(data, "test_data_set_%02d" % i)
            os.makedirs(d, exist_ok=True)
            save_pb(x, os.path.join(d, "input_0.pb"))
            save_pb(y, os.path.join(d, "input_1.pb"))
        t0 = time.perf_counter()
        torch.onnx.export(m.eval(), (batches[0][0],), os.path.join(a.out, name + ".onnx"),
                          opset_version=17, dynamo=False, do_constant_folding=False,
                          input_names=["x"], output_names=["logits"])
        row = {"model": name, "precision": a.precision, "export_s": time.perf_counter() - t0}
        note(name, "exported")
        try:
            row["tc"] = tc_run(name, a.out, a.bin, a.steps, a.precision)
        except subprocess.TimeoutExpired as e:
            row["tc"] = {"error": "timed out: " + str(e.cmd)[:200]}
            note(name, row["tc"]["error"])
        amp = a.precision == "fp16"
        m.load_state_dict(init)
        row["eager"] = torch_run(m, batches, a.steps, False, amp)
        note(name, "eager done")
        if not a.skip_compile:
            m.load_state_dict(init)
            torch._dynamo.reset()
            row["compile"] = torch_run(m, batches, a.steps, True, amp)
        tl, el = row["tc"].get("losses"), row["eager"]["losses"]

        def rel(a_, b_):
            return [abs(t - e) / max(abs(e), 1e-12) for t, e in zip(a_, b_)]
        if amp:
            m.load_state_dict(init)
            ref = torch_run(m, batches, a.steps, False)["losses"]
            row["fp32_eager_losses"] = ref
            row["amp_spread_torch"] = rel(el, ref)[-1]
            if tl and len(tl) == len(ref):
                row["amp_spread_tc"] = rel(tl, ref)[-1]
                row["loss_rel_diff_last"] = rel(tl, el)[-1]
        elif tl and len(tl) == len(el):
            r_ = rel(tl, el)
            row["loss_rel_diff_last"], row["loss_rel_diff_max"] = r_[-1], max(r_)
        if "ms" in row["tc"]:
            row["tc_vs_eager"] = row["eager"]["ms"] / row["tc"]["ms"]
            if "compile" in row:
                row["tc_vs_compile"] = row["compile"]["ms"] / row["tc"]["ms"]
        print(json.dumps(row), flush=True)
        del m
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
