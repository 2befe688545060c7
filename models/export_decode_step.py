"""Export one KV-cache decode step of a LLaMA-style decoder (transformers
LlamaForCausalLM, random weights, seed 0) with the torch dynamo exporter.

    inputs   input_ids [batch, 1] (i64), then per layer N
             past_key_values.N.key / .value  [batch, kv_heads, past, head_dim] (f32)
    outputs  logits [batch, 1, vocab], then per layer N
             present.N.key / .value          [batch, kv_heads, past + 1, head_dim]

`batch` and `past` are symbolic. The new token's position is `past` (no
attention mask, no position ids: every sequence of the batch has the same
length), so present.N of one step is past_key_values.N of the next -- what
`tc-run --decode N` feeds back (docs/user-guide.md, "KV-cache decoding").

    /work/venv/bin/python models/export_decode_step.py OUTDIR            # small (committed)
    /work/venv/bin/python models/export_decode_step.py OUTDIR --full     # >= 8 layers, hidden 1024, GQA

--small (the default): hidden 64, 2 layers, 4 query heads / 2 KV heads (GQA),
vocab 256: models/zoo-small/tiny_llama_decode, with test_data_set_0 (past 8)
and test_data_set_1 (past 19) holding PyTorch's outputs at batch 1.
--full: the zoo's llama recipe (models/zoo_models.py GQA: hidden 1024, 8
layers, 16 heads, 4 KV heads, vocab 32000; ~1 GB of f32 weights, written as
external data next to model.onnx); test data at --past (default 1024) and
--batch (default 1).
"""
import argparse
import os
import sys

import torch
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from zoo_models import GQA, _GQA_SMALL  # noqa: E402

SMALL = dict(_GQA_SMALL, vocab_size=256, max_position_embeddings=4096)
FULL = dict(GQA, max_position_embeddings=4096)


class DecodeStep(torch.nn.Module):
    """LlamaForCausalLM over a cache given as flat tensors (the ONNX signature)."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.layers = model.config.num_hidden_layers

    def forward(self, input_ids, *past):
        from transformers import DynamicCache
        cache = DynamicCache(config=self.model.config)
        for i in range(self.layers):
            cache.update(past[2 * i], past[2 * i + 1], i)
        out = self.model(input_ids=input_ids, past_key_values=cache, use_cache=True)
        present = []
        for layer in out.past_key_values.layers[:self.layers]:
            present += [layer.keys, layer.values]
        return (out.logits, *present)


def make(full):
    import transformers
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(**(FULL if full else SMALL))
    return DecodeStep(transformers.LlamaForCausalLM(cfg).eval())


def names(layers):
    kv = [f"{i}.{t}" for i in range(layers) for t in ("key", "value")]
    return ["input_ids"] + [f"past_key_values.{n}" for n in kv], ["logits"] + [f"present.{n}" for n in kv]


def inputs(step, batch, past, seed):
    cfg = step.model.config
    g = torch.Generator().manual_seed(seed)
    heads, hd = cfg.num_key_value_heads, cfg.hidden_size // cfg.num_attention_heads
    ids = torch.randint(0, cfg.vocab_size, (batch, 1), generator=g)
    return (ids, *[torch.randn(batch, heads, past, hd, generator=g) for _ in range(2 * step.layers)])


def write_tensor(path, t):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(t.detach().numpy()).SerializeToString())


def write_test_data(step, outdir, index, batch, past):
    d = os.path.join(outdir, f"test_data_set_{index}")
    os.makedirs(d, exist_ok=True)
    args = inputs(step, batch, past, seed=index + 1)
    with torch.no_grad():
        outs = step(*args)
    for i, t in enumerate(args):
        write_tensor(os.path.join(d, f"input_{i}.pb"), t)
    for i, t in enumerate(outs):
        write_tensor(os.path.join(d, f"output_{i}.pb"), t)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--full", action="store_true", help="the zoo llama recipe's sizes (default: the small one)")
    ap.add_argument("--batch", type=int, default=1, help="test data's batch")
    ap.add_argument("--past", type=int, default=0, help="test data's past length (default: 8 and 19 small, "
                    "1024 full)")
    a = ap.parse_args()
    step = make(a.full)
    os.makedirs(a.outdir, exist_ok=True)
    in_names, out_names = names(step.layers)
    batch, past = torch.export.Dim("batch", min=1, max=1024), torch.export.Dim("past", min=1, max=4095)
    example = inputs(step, 2, 8, seed=0)
    dims = {"input_ids": {0: batch}, "past": tuple({0: batch, 2: past} for _ in range(2 * step.layers))}
    torch.onnx.export(step, example, os.path.join(a.outdir, "model.onnx"), dynamo=True, opset_version=20,
                      input_names=in_names, output_names=out_names, dynamic_shapes=dims,
                      external_data=a.full)
    pasts = [a.past] if a.past else ([1024] if a.full else [8, 19])
    for i, p in enumerate(pasts):
        write_test_data(step, a.outdir, i, a.batch, p)


if __name__ == "__main__":
    main()
