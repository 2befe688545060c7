"""The models, batches and loss that tc's training is compared with PyTorch on,
in one place for models/make_training_refs.py (the committed tiny models'
gradients and curves) and utils/bench-train.py (tc-bench --train's PyTorch
side): the logits wrapper, the parameter noise that keeps an exporter from
merging equal initializers, the loss, and each model with its input and label
makers."""
import torch

# Models given an all-ones attention mask (and the zoo's causal LMs): newer
# transformers find packed sequences in the position ids without one
# (aten::diff, which the TorchScript exporter cannot export); the mask
# changes nothing else.
ONES_MASK = {"gpt2_tiny", "gpt2", "llama"}


class Logits(torch.nn.Module):
    """The model's logits whatever it returns."""

    def __init__(self, m, ones_mask=False):
        super().__init__()
        self.m = m
        self.ones_mask = ones_mask

    def forward(self, x):
        out = self.m(x, attention_mask=torch.ones_like(x)) if self.ones_mask else self.m(x)
        return out if torch.is_tensor(out) else out.logits


def perturb(model, scale=0.02):
    """Adds a little noise to every parameter. A fresh model's equal parameters
    (LayerNorm / BatchNorm ones, zero biases) are otherwise merged by the
    exporter into one initializer, which tc would train as ONE tensor where
    PyTorch trains several: the two runs drift apart from the first steps."""
    with torch.no_grad():
        noise = torch.Generator().manual_seed(1)
        for p in model.parameters():
            p.add_(scale * torch.randn(p.shape, generator=noise))


def loss_of(logits, y):
    """tc-opt --loss=cross-entropy: class axis last, ignore_index -100, mean."""
    # Half logits (autocast) in f32, as tc's loss; f64 ones (an f64 reference) stay.
    logits = logits.reshape(-1, logits.shape[-1])
    return torch.nn.functional.cross_entropy(logits.double() if logits.dtype == torch.float64 else logits.float(),
                                             y.reshape(-1), ignore_index=-100)


# The full-size models tc-bench's `train` suite runs (batch: the default of
# each; the manifest's train_batch says the same).
FULL = {"resnet50": 32, "vit_b_16": 32, "bert_base": 8, "gpt2": 8, "llama": 4}


def make_full(name, batch=None):
    """(module, input maker, label maker) of a full-size model at `batch`:
    resnet50 and vit_b_16 (224x224, 1000 classes), bert_base (masked LM over
    128 tokens, 15% of the labels kept, the rest ignore_index), gpt2 (LM, 128
    tokens), llama (LlamaForCausalLM, hidden 1024, 8 layers, GQA; 256 tokens).
    Dropout off, so the steps are deterministic."""
    b = batch or FULL[name]
    g = torch.Generator().manual_seed(1)
    if name in ("resnet50", "vit_b_16"):
        import torchvision
        m = getattr(torchvision.models, name)()
        return m, lambda: torch.randn(b, 3, 224, 224, generator=g), lambda: torch.randint(0, 1000, (b,), generator=g)
    import transformers as tr
    if name == "bert_base":
        m = tr.BertForMaskedLM(tr.BertConfig(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                                             attn_implementation="eager"))
        v, s = 30522, 128
    elif name == "gpt2":
        m = tr.GPT2LMHeadModel(tr.GPT2Config(resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                                             attn_implementation="eager"))
        v, s = 50257, 128
    elif name == "llama":
        m = tr.LlamaForCausalLM(tr.LlamaConfig(hidden_size=1024, intermediate_size=2816, num_hidden_layers=8,
                                               num_attention_heads=16, num_key_value_heads=4, vocab_size=32000,
                                               max_position_embeddings=2048, attn_implementation="eager"))
        v, s = 32000, 256
    else:
        raise KeyError(name)
    m.config.use_cache = False

    def y():
        labels = torch.randint(0, v, (b, s), generator=g)
        if name == "bert_base":
            labels[torch.rand(b, s, generator=g) > 0.15] = -100
        return labels
    return m, lambda: torch.randint(0, v, (b, s), generator=g), y


# The zoo's models PyTorch trains with a cross-entropy on their output:
# models/zoo_models.py's image classifiers ([B, 1000] logits) and its causal
# LMs ([B, T, vocab] logits, next-token style labels). Not its segmentation
# and detection models (no class logits to take it over), its encoders and
# gpt2 (hidden states: the `train` suite has GPT-2 with its LM head), nor
# the recipes with a mask input.
ZOO_NOT_CLASSIFIERS = {"deeplabv3_mobilenet_v3_large", "ssdlite320_mobilenet_v3_large", "fcn_resnet50"}
ZOO_BATCH = 32  # the zoo-vision suite's
ZOO_LM_BATCH = 8  # the zoo-generative suite's: sequences of the recipe's length (128)


def no_dropout(m):
    """Every dropout off, so PyTorch's steps are deterministic as tc's: the
    Dropout modules, and the rates HF attention reads at run time
    (`self.attention_dropout`, `attn_pdrop`, ...)."""
    for mod in m.modules():
        if isinstance(mod, torch.nn.Dropout):
            mod.p = 0.0
        for k, v in list(vars(mod).items()):
            if isinstance(v, float) and ("dropout" in k or k.endswith("pdrop")):
                setattr(mod, k, 0.0)


def zoo_lm(r, m):
    """A zoo recipe whose module is a causal LM (its output the logits)."""
    return r.suite == "generative" and r.kind == "tokens" and not r.mask and \
        type(m).__name__.endswith("ForCausalLM")


def make_zoo(name, batch=None):
    """(module, input maker, label maker) of a zoo image classifier at
    `batch` (its full-size image, 1000 classes) or causal LM (`batch`
    sequences of the recipe's length, labels over its vocabulary), every
    dropout off."""
    import zoo_models
    r = zoo_models.ZOO.get(name)
    if r is None or name in ZOO_NOT_CLASSIFIERS or r.kind not in ("image", "tokens"):
        raise KeyError(name)
    m = r.make(False)
    if r.kind == "tokens" and not zoo_lm(r, m):
        raise KeyError(name)
    no_dropout(m)
    g = torch.Generator().manual_seed(1)
    if r.kind == "tokens":
        shape = (batch or ZOO_LM_BATCH,) + tuple(r.full)
        return m, lambda: torch.randint(0, r.vocab, shape, generator=g), \
            lambda: torch.randint(0, r.vocab, shape, generator=g)
    b = batch or ZOO_BATCH
    return m, lambda: torch.randn((b,) + tuple(r.full), generator=g), lambda: torch.randint(0, 1000, (b,), generator=g)


def make(name, batch=None):
    """The logits module of `name` (a full-size model, a zoo image
    classifier, or one of make_training_refs.py's tiny ones), perturbed as
    its export was, with its input and label makers."""
    torch.manual_seed(0)
    if name in FULL:
        m, x, y = make_full(name, batch)
    elif name in __import__("zoo_models").ZOO:
        m, x, y = make_zoo(name, batch)
    else:
        import make_training_refs
        found = [(m, x, y) for n, m, x, y in make_training_refs.models() if n == name]
        if not found:
            raise KeyError(name)
        m, x, y = found[0]
    if hasattr(m, "config"):
        m.config.use_cache = False
    torch.manual_seed(0)
    zoo = __import__("zoo_models").ZOO.get(name)
    model = Logits(m, name in ONES_MASK or bool(zoo and zoo.kind == "tokens"))
    perturb(model)
    return model, x, y


def load_initializers(model, onnx_path):
    """Sets the module's parameters and buffers to the ONNX file's
    initializers of the same name (the exporter names them as state_dict
    does): whatever RNG made the export, both sides start from its weights.
    Returns (set, state tensors)."""
    import onnx
    from onnx import numpy_helper
    state = model.state_dict()
    found = 0
    with torch.no_grad():
        for init in onnx.load(onnx_path).graph.initializer:
            if init.name in state and tuple(init.dims) == tuple(state[init.name].shape):
                state[init.name].copy_(torch.from_numpy(numpy_helper.to_array(init).copy()))
                found += 1
    return found, len(state)
