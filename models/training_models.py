"""The models, batches and loss that tc's training is compared with PyTorch on,
in one place for models/make_training_refs.py (the committed tiny models'
gradients and curves) and utils/bench-train.py (tc-bench --train's PyTorch
side): the logits wrapper, the parameter noise that keeps an exporter from
merging equal initializers, the loss, and each model with its input and label
makers."""
import os

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

    def forward(self, x, *rest):
        # rest: the recipes with a mask input pass it on (zoo_models.WithMask).
        if rest:
            out = self.m(x, *rest)
        else:
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


# The zoo's models PyTorch trains with a cross-entropy: models/zoo_models.py's
# image classifiers ([B, 1000] logits), its causal LMs ([B, T, vocab] logits,
# next-token style labels) and its text-suite encoders given the head their
# pretraining or fine-tuning puts on them (EncoderHead), the recipes with a
# mask input too (ids and the padding mask are the step's two data inputs; the
# padded positions get no label). Not its segmentation and detection models
# (no class logits to take it over) nor gpt2 (hidden states: the `train`
# suite has GPT-2 with its LM head).
ZOO_NOT_CLASSIFIERS = {"deeplabv3_mobilenet_v3_large", "ssdlite320_mobilenet_v3_large", "fcn_resnet50"}
ZOO_BATCH = 32  # the zoo-vision suite's
ZOO_LM_BATCH = 8  # the zoo-generative and zoo-text suites': sequences of the recipe's length (128)
ZOO_CLASSES = 1000  # the pooled encoders' classes (images, clips)
MLM_KEEP = 0.15  # masked-LM labels: the share of positions with a label (the rest ignore_index)


def no_dropout(m):
    """Every dropout off, so PyTorch's steps are deterministic as tc's: the
    Dropout modules, the rates HF attention reads at run time
    (`self.attention_dropout`, `attn_pdrop`, ...), and what HF configs draw
    at random in training mode only: LayerDrop (skipping whole layers,
    `layerdrop`, `encoder_layerdrop`) and the speech models' SpecAugment
    masks (`mask_time_prob`, `mask_feature_prob`); and stochastic depth,
    which drops whole residual branches in training mode (torchvision's
    StochasticDepth `p`, timm's DropPath `drop_prob`: efficientnet,
    convnext, swin ...) and timm's head dropout (`drop_rate`, read by
    F.dropout: ghostnet)."""
    for mod in m.modules():
        if isinstance(mod, torch.nn.Dropout):
            mod.p = 0.0
        kind = type(mod).__name__
        if "StochasticDepth" in kind or "DropPath" in kind:
            for k in ("p", "drop_prob"):
                if isinstance(getattr(mod, k, None), float):
                    setattr(mod, k, 0.0)
        for k, v in list(vars(mod).items()):
            if isinstance(v, float) and ("dropout" in k or k.endswith("pdrop") or k == "drop_rate"):
                setattr(mod, k, 0.0)
        cfg = getattr(mod, "config", None)
        if cfg is not None and hasattr(cfg, "to_dict"):
            for k, v in cfg.to_dict().items():
                if isinstance(v, float) and ("layerdrop" in k or (k.startswith("mask_") and k.endswith("_prob"))):
                    setattr(cfg, k, 0.0)
            if getattr(cfg, "apply_spec_augment", False):
                cfg.apply_spec_augment = False


def zoo_lm(r, m):
    """A zoo recipe whose module is a causal LM (its output the logits), or
    one under zoo_models.WithMask."""
    hf = m.m if r.mask else m
    return r.suite == "generative" and r.kind == "tokens" and type(hf).__name__.endswith("ForCausalLM")


class EncoderHead(torch.nn.Module):
    """A zoo encoder (hidden states out) with the head it trains under. Token
    encoders and the encoder-decoders run whole: a masked-LM decoder over the
    vocabulary, tied to the input embedding where the widths agree (as
    BertForMaskedLM's), its own Linear where they do not (ALBERT's factorized
    embedding); [B, T, vocab] logits. Image, audio and waveform encoders: the
    hidden states averaged over the sequence and a Linear over ZOO_CLASSES
    classes (sequence classification, as HF's ...ForSequenceClassification
    pools); [B, classes] logits."""

    def __init__(self, m, lm):
        super().__init__()
        # ELECTRA's discriminator: the encoder under its replaced-token head.
        self.m = m.electra if hasattr(m, "electra") else m
        hf = self.m.m if hasattr(self.m, "m") else self.m  # Seq2SeqWhole holds the HF model as .m
        cfg = hf.config
        hidden = next(getattr(cfg, k) for k in ("hidden_size", "d_model", "dim") if hasattr(cfg, k))
        self.pool = not lm
        emb = hf.get_input_embeddings().weight if lm else None
        self.head = torch.nn.Linear(hidden, emb.shape[0] if lm else ZOO_CLASSES)
        if lm and emb.shape[1] == hidden:
            self.head.weight = emb
        # T5 scales the decoder's input by d_model^-1/2 where the head is the
        # embedding (T5ForConditionalGeneration): its logits are ~30 without.
        self.scale = hidden ** -0.5 if cfg.model_type == "t5" else None

    def forward(self, x, *rest):
        out = self.m(x, *rest)
        h = out if torch.is_tensor(out) else out[0]
        if self.scale:
            h = h * self.scale
        return self.head(h.mean(1) if self.pool else h)


def make_zoo(name, batch=None, small=False):
    """(module, input maker, label maker) of a zoo model at `batch`: an image
    classifier (its full-size image, 1000 classes), a causal LM (`batch`
    sequences of the recipe's length, next-token labels over its vocabulary)
    or a text-suite encoder under its EncoderHead (masked-LM labels, MLM_KEEP
    of the positions, over the vocabulary; or one class of ZOO_CLASSES per
    sample); every dropout off. A recipe with a mask input makes (ids, mask)
    pairs (zoo_models.padded_mask) and the labels of the last pair made, none
    on its padded positions. `small`: the recipe's small config (the coverage
    survey's; TC_TRAIN_SMALL=1 to bench-train.py)."""
    import zoo_models
    r = zoo_models.ZOO.get(name)
    if r is None or name in ZOO_NOT_CLASSIFIERS:
        raise KeyError(name)
    m = r.make(small)
    encoder = r.suite == "text"
    if r.kind == "tokens" and not encoder and not zoo_lm(r, m):
        raise KeyError(name)
    if r.kind != "image" and r.kind != "tokens" and not encoder:
        raise KeyError(name)
    vocab = (r.small_vocab if small else r.vocab) if r.kind == "tokens" else 0
    if encoder:
        m = EncoderHead(m, r.kind == "tokens")
    no_dropout(m)
    g = torch.Generator().manual_seed(1)
    shape = (batch or (ZOO_LM_BATCH if r.kind == "tokens" or encoder else ZOO_BATCH),) + \
        tuple(r.small if small else r.full)
    if r.kind == "tokens":
        # Masked-LM labels for encoders; every position for causal LMs and the
        # encoder-decoders (teacher forcing).
        masked = encoder and not isinstance(m.m, zoo_models.Seq2SeqWhole)
        last = {}

        def inputs():
            ids = torch.randint(0, vocab, shape, generator=g)
            if not r.mask:
                return ids
            last["mask"] = zoo_models.padded_mask(shape, g)
            return ids, last["mask"]

        def labels():
            y = torch.randint(0, vocab, shape, generator=g)
            if masked:
                y[torch.rand(shape, generator=g) > MLM_KEEP] = -100
            if r.mask:
                y[last["mask"] == 0] = -100
            return y
        return m, inputs, labels
    classes = ZOO_CLASSES if encoder else 1000
    return m, lambda: torch.randn(shape, generator=g), lambda: torch.randint(0, classes, shape[:1], generator=g)


def make(name, batch=None):
    """The logits module of `name` (a full-size model, a zoo image
    classifier, or one of make_training_refs.py's tiny ones), perturbed as
    its export was, with its input and label makers."""
    torch.manual_seed(0)
    if name in FULL:
        m, x, y = make_full(name, batch)
    elif name in __import__("zoo_models").ZOO:
        m, x, y = make_zoo(name, batch, small=os.environ.get("TC_TRAIN_SMALL") == "1")
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
    model = Logits(m, name in ONES_MASK or bool(zoo and zoo.suite == "generative" and not zoo.mask))
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
