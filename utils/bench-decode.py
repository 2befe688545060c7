#!/usr/bin/env python3
"""KV-cache decoding, tc vs PyTorch, ONE command on the GPU machine: the
LLaMA-style decode step of models/export_decode_step.py (--full: the zoo's
llama sizes, hidden 1024, 8 layers, 16 heads / 4 KV heads, vocab 32000;
random weights, seed 0) exported once, compiled by tc at fp16
(`tc-opt -O2 --target=cuda --precision fp16`, `tc-codegen --target=cuda`),
then per batch: `tc-run --decode N --past P --dim batch=B` (its tokens/s and
per-token p50/p90: each step's wall time, argmax fed back, caches kept on the
device; with --cache static the steps that planned the bucket or recorded
its graph are left out, as PyTorch's warm-ups are, and the "tc run" column
gives all steps' figures too). --cache static (the default) exports the fixed-capacity step
(export_decode_step.py --static) and runs it with one cache bucket of
PyTorch's capacity (P + N + 8, --decode-buckets): one planned shape, one CUDA
graph replayed per token; --cache dynamic the growing-cache step (a new
shape, i.e. a new plan, every token). PyTorch in this process on the same
model (the same weights either way): a StaticCache of
P + N + 8 positions filled by an untimed prefill of P random tokens, then N
decode steps (argmax fed back, one synchronize per token, as tc-run does), in
eager and torch.compile(mode="reduce-overhead") (CUDA graphs), fp16 weights
(model.half()).

    source .devkit/env.sh && python3 utils/bench-decode.py --bin .devkit/bin --out $OUT --full \
        [--batches 1,8] [--past 1024] [--steps 64] [--modes eager,inductor-cg]

Without --full: the small config (a check that the script runs; --device cpu
times PyTorch on the CPU and tc's CPU artifact). Prints one markdown table.
"""
import argparse, contextlib, os, re, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "models"))


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def run(cmd, timeout=3600):
    log("+ " + " ".join(cmd))
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode:
        raise RuntimeError(f"{cmd[0]} failed ({p.returncode}): {p.stderr.strip()[-2000:]}")
    return p


def export(args, path):
    """models/export_decode_step.py's model and ONNX file (no test data)."""
    from export_decode_step import export_onnx, make
    step = make(args.full, static=args.cache == "static")
    if not os.path.exists(path):
        export_onnx(step, path, external_data=args.full)
    return step.model


def tc_compile(args, onnx, out):
    target = "cuda" if args.device == "cuda" else "cpu"
    b = args.bin
    run([os.path.join(b, "tc-import"), onnx, "-o", out + ".tcbc"])
    # fp16 with f16 inputs and outputs on the GPU: PyTorch's side is model.half(),
    # whose StaticCache holds f16 keys and values.
    prec = ["--precision", "fp16", "--low-precision-io"] if target == "cuda" else []
    run([os.path.join(b, "tc-opt"), "-O2", f"--target={target}", *prec, out + ".tcbc", "-o", out + ".opt.tcbc"])
    run([os.path.join(b, "tc-codegen"), f"--target={target}", out + ".opt.tcbc", "-o", out + ".tcx"])
    return out + ".tcx"


def tc_decode(args, tcx, batch):
    static = ["--decode-buckets", str(capacity(args))] if args.cache == "static" else []
    p = run([os.path.join(args.bin, "tc-run"), tcx, "--decode", str(args.steps), "--past", str(args.past),
             "--dim", f"batch={batch}", *static])
    log(p.stderr.strip())
    num = r"([0-9.e+-]+)"
    tps = float(re.search(r"tokens/s: " + num, p.stderr).group(1))
    p50, p90 = map(float, re.search(rf"p50 {num} ms, p90 {num} ms", p.stderr).groups())
    if static:  # one bucket: plans, graphs recorded, graph launches
        plans, graphs, launches = map(int, re.search(
            r"bucket \d+: \d+ steps, (\d+) plans, (\d+) graphs recorded, (\d+) graph launches", p.stderr).groups())
        note = f"{plans} plan, {graphs} graph, {launches} launches"
        # Without the steps that planned the bucket or recorded its graph, as
        # PyTorch's side leaves out its warm-ups (compile, graph record).
        steady = re.search(rf"steady .*: tokens/s {num}, p50 {num} ms, p90 {num} ms", p.stderr)
        if steady:
            note += f"; all {args.steps} steps: {tps:.1f} tok/s, p50 {p50:.3f} ms"
            tps, p50, p90 = map(float, steady.groups())
    else:
        note = re.search(r"\(planned\): median " + num, p.stderr).group(1) + " ms planned"
    return {"tokens_s": tps, "p50": p50, "p90": p90, "note": note}


def capacity(args):
    """PyTorch's StaticCache length, and tc's one bucket with --cache static."""
    return args.past + args.steps + 8


def torch_decode(args, model, batch, mode):
    """N decode steps over a StaticCache after an untimed prefill of P tokens."""
    import torch
    from transformers import StaticCache
    dev = torch.device(args.device)
    model = model.to(dev).eval()
    cfg = model.config
    g = torch.Generator().manual_seed(1)
    # fp16 on the GPU as the model itself (model.half()), not autocast: under
    # autocast the rotary keys stay f32 and the values f16, and the
    # StaticCache (typed by the first keys) refuses the values (index_copy_).
    if args.device == "cuda":
        model = model.half()
    cache = StaticCache(config=cfg, max_cache_len=capacity(args))
    amp = contextlib.nullcontext()

    def step(ids, pos):
        return model(input_ids=ids, cache_position=pos, past_key_values=cache, use_cache=True).logits

    fn = torch.compile(step, mode="reduce-overhead") if mode == "inductor-cg" else step
    sync = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)
    ms = []
    with torch.no_grad(), amp:
        prompt = torch.randint(0, cfg.vocab_size, (batch, args.past), generator=g).to(dev)
        model(input_ids=prompt, cache_position=torch.arange(args.past, device=dev), past_key_values=cache,
              use_cache=True)
        ids = torch.randint(0, cfg.vocab_size, (batch, 1), generator=g).to(dev)
        for s in range(-3, args.steps):  # 3 warm-ups (compile, graph record) at the first position
            pos = torch.tensor([args.past + max(s, 0)], device=dev)
            sync()
            t0 = time.perf_counter()
            ids = fn(ids, pos)[:, -1:].argmax(-1)
            sync()
            if s >= 0:
                ms.append((time.perf_counter() - t0) * 1000)
    ms.sort()
    return {"tokens_s": batch * len(ms) / (sum(ms) / 1000), "p50": statistics.median(ms),
            "p90": ms[min(len(ms) - 1, int(0.9 * len(ms)))]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True, help="tc's bin folder (tc-import, tc-opt, tc-codegen, tc-run)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--full", action="store_true", help="the zoo llama sizes (default: the small config)")
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--past", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=64)
    ap.add_argument("--modes", default="eager,inductor-cg", help="PyTorch: eager, inductor-cg (reduce-overhead)")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--cache", default="static", choices=["static", "dynamic"],
                    help="tc's export: a fixed-capacity cache (one shape, one CUDA graph) or a growing one")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    name = ("llama_decode" if args.full else "tiny_llama_decode") + ("_static" if args.cache == "static" else "")
    model = export(args, os.path.join(args.out, name + ".onnx"))
    tcx = tc_compile(args, os.path.join(args.out, name + ".onnx"), os.path.join(args.out, name))
    modes = [m for m in args.modes.split(",") if m]
    rows = []
    for b in [int(x) for x in args.batches.split(",")]:
        row = {"batch": b, "tc": tc_decode(args, tcx, b)}
        for m in modes:
            try:
                row[m] = torch_decode(args, model, b, m)
            except Exception as e:  # one mode failing leaves the others
                log(f"{m} at batch {b}: {type(e).__name__}: {e}")
        rows.append(row)
    head = ["batch", "tc tok/s", "tc p50 ms", "tc p90 ms", "tc run"] + [f"{m} tok/s" for m in modes] + \
        [f"tc / {m}" for m in modes]
    print(f"{name}, past {args.past}, {args.steps} steps, {args.device}, {args.cache} cache"
          + (f" (capacity {capacity(args)})" if args.cache == "static" else "") + "\n")
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for r in rows:
        tc = r["tc"]
        cells = [str(r["batch"]), f"{tc['tokens_s']:.1f}", f"{tc['p50']:.3f}", f"{tc['p90']:.3f}", tc["note"]]
        cells += [f"{r[m]['tokens_s']:.1f}" if m in r else "failed" for m in modes]
        cells += [f"{tc['tokens_s'] / r[m]['tokens_s']:.2f}x" if m in r else "-" for m in modes]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
