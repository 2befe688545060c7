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
    /work/venv/bin/python models/export_decode_step.py OUTDIR --static   # a fixed-capacity cache

--static: the cache has a fixed capacity (transformers' StaticCache, what
PyTorch's own decoding with CUDA graphs uses), so every step has one shape:

    inputs   input_ids [batch, 1] (i64), cache_position [1] (i64: the new
             token's slot = the number of tokens already cached), then per
             layer N past_key_values.N.key / .value [batch, kv_heads, cap, head_dim]
    outputs  logits [batch, 1, vocab], then per layer N
             present.N.key / .value  [batch, kv_heads, cap, head_dim]

`batch` and `cap` are symbolic. The step writes the new key/value at slot
cache_position (a Where over the one-hot `slots == cache_position`: no
scatter op, elementwise on every backend) and attends over all `cap` slots
with the slots after cache_position masked (an additive 0 / -max mask), so
whatever the tail holds does not matter. Its test data: position 8 in a
capacity of 16 and position 19 in 32 (small; --past P: P in the next power
of two above P), the tail random too: models/zoo-small/tiny_llama_decode_static.

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


def _static_layer_class():
    from transformers.cache_utils import CacheLayerMixin

    class SlotLayer(CacheLayerMixin):
        """One layer of a fixed-capacity cache given as tensors: update()
        writes the new key/value at the one-hot slot, functionally."""
        is_compileable = True
        is_sliding = False

        def __init__(self, keys, values, slot):
            super().__init__()
            self.keys, self.values, self.slot, self.is_initialized = keys, values, slot, True

        def lazy_initialization(self, key_states, value_states):
            pass

        def update(self, key_states, value_states, *args, **kwargs):
            self.keys = torch.where(self.slot, key_states, self.keys)
            self.values = torch.where(self.slot, value_states, self.values)
            return self.keys, self.values

        def get_mask_sizes(self, query_length):
            return self.keys.shape[-2], 0

        def get_seq_length(self):
            return 0  # unused: the step passes position_ids and a 4-D mask

        def get_max_cache_shape(self):
            return self.keys.shape[-2]

        def get_max_length(self):
            return self.keys.shape[-2]

    return SlotLayer


class StaticDecodeStep(torch.nn.Module):
    """LlamaForCausalLM over a fixed-capacity cache (the --static signature)."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.layers = model.config.num_hidden_layers
        self.layer_class = _static_layer_class()

    def forward(self, input_ids, cache_position, *past):
        from transformers.cache_utils import Cache
        cap = past[0].shape[2]
        slots = torch.arange(cap, device=input_ids.device)
        slot = (slots == cache_position).view(1, 1, cap, 1)
        visible = (slots <= cache_position).view(1, 1, 1, cap)
        cache = Cache(layers=[self.layer_class(past[2 * i], past[2 * i + 1], slot) for i in range(self.layers)])
        out = self.model(input_ids=input_ids, position_ids=cache_position.view(1, 1), attention_mask=visible,
                         past_key_values=cache, use_cache=True)  # `cache=` is 5.x only
        present = []
        for layer in cache.layers:
            present += [layer.keys, layer.values]
        return (out.logits, *present)


def make(full, static=False):
    import transformers
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(**(FULL if full else SMALL))
    model = transformers.LlamaForCausalLM(cfg).eval()
    return StaticDecodeStep(model) if static else DecodeStep(model)


def names(layers, static=False):
    kv = [f"{i}.{t}" for i in range(layers) for t in ("key", "value")]
    head = ["input_ids", "cache_position"] if static else ["input_ids"]
    return head + [f"past_key_values.{n}" for n in kv], ["logits"] + [f"present.{n}" for n in kv]


def capacity(past):
    """The static test data's capacity: the next power of two above `past`."""
    return 1 << past.bit_length()


def inputs(step, batch, past, seed):
    """Random ids and caches; a static step's caches hold `capacity(past)`
    slots (all random: the ones after the position must be masked) and its
    position is `past`."""
    cfg = step.model.config
    g = torch.Generator().manual_seed(seed)
    heads, hd = cfg.num_key_value_heads, cfg.hidden_size // cfg.num_attention_heads
    ids = torch.randint(0, cfg.vocab_size, (batch, 1), generator=g)
    static = isinstance(step, StaticDecodeStep)
    slots = capacity(past) if static else past
    head = (ids, torch.tensor([past])) if static else (ids,)
    return (*head, *[torch.randn(batch, heads, slots, hd, generator=g) for _ in range(2 * step.layers)])


def export_onnx(step, path, external_data=False):
    """The step as ONNX (dynamo, opset 20): `batch` and `past` (or `cap`) symbolic."""
    static = isinstance(step, StaticDecodeStep)
    in_names, out_names = names(step.layers, static)
    batch = torch.export.Dim("batch", min=1, max=1024)
    past = torch.export.Dim("cap", min=2, max=4096) if static else torch.export.Dim("past", min=1, max=4095)
    # In forward()'s argument order: the exporter names the axes by position.
    dims = {"input_ids": {0: batch}, **({"cache_position": None} if static else {}),
            "past": tuple({0: batch, 2: past} for _ in range(2 * step.layers))}
    torch.onnx.export(step, inputs(step, 2, 8, seed=0), path, dynamo=True, opset_version=20,
                      input_names=in_names, output_names=out_names, dynamic_shapes=dims,
                      external_data=external_data)


def check_static(step, batch, past):
    """The static step must be the dynamic one: the same logits, the new
    key/value at slot `past`, the other slots untouched."""
    args = inputs(step, batch, past, seed=99)
    ids, pos, caches = args[0], args[1], args[2:]
    with torch.no_grad():
        want = DecodeStep(step.model)(ids, *[c[:, :, :past] for c in caches])
        got = step(*args)
    assert torch.allclose(got[0], want[0], atol=1e-5), "static step: logits differ from the dynamic step's"
    for c, w, g in zip(caches, want[1:], got[1:]):
        assert torch.allclose(g[:, :, :past + 1], w, atol=1e-5), "static step: cache prefix differs"
        assert torch.equal(g[:, :, past + 1:], c[:, :, past + 1:]), "static step: cache tail changed"


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
    ap.add_argument("--static", action="store_true", help="a fixed-capacity cache written at cache_position")
    ap.add_argument("--batch", type=int, default=1, help="test data's batch")
    ap.add_argument("--past", type=int, default=0, help="test data's past length (default: 8 and 19 small, "
                    "1024 full)")
    a = ap.parse_args()
    step = make(a.full, a.static)
    os.makedirs(a.outdir, exist_ok=True)
    export_onnx(step, os.path.join(a.outdir, "model.onnx"), external_data=a.full)
    pasts = [a.past] if a.past else ([1024] if a.full else [8, 19])
    if a.static:
        check_static(step, a.batch, pasts[0])
    for i, p in enumerate(pasts):
        write_test_data(step, a.outdir, i, a.batch, p)


if __name__ == "__main__":
    main()
