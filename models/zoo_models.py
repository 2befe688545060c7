"""The model zoo: full-size recipes in three suites, like PyTorch's compiler
dashboard -- `vision` (torchvision / TIMM), `text` (HuggingFace encoders) and
`generative` (decoders) -- all with random weights (nothing downloaded).

Imported by models/export_torch_models.py (which exports them: see its
docstring) and so by utils/bench-gpu.py. Each recipe builds its model at full
size, or with `small=True` at a tiny config / small image with the same op
forms (the coverage survey, utils/zoo-coverage.py). `tiny_models()` are the
hidden-32..64 variants committed under models/zoo-small for CI.
"""
from dataclasses import dataclass, field
from typing import Callable

import torch


@dataclass
class Recipe:
    suite: str                      # vision | text | generative
    source: str                     # what it is, for the manifest
    make: Callable                  # make(small) -> nn.Module
    kind: str                       # image | tokens | audio | wave
    full: tuple                     # input 0's shape after the batch, full size
    small: tuple                    # ... with small=True
    vocab: int = 0                  # tokens: ids drawn below this
    small_vocab: int = 1000         # ... with small=True
    seq_dynamic: bool = False       # the sequence dim may be symbolic (--dynamic-seq)
    note: str = ""                  # where it differs from the real model
    mask: bool = False              # tokens: a second input, the attention mask (see padded_mask)

    def inputs(self, small, batch=2, generator=None):
        shape = (batch,) + (self.small if small else self.full)
        if self.kind == "tokens":
            ids = torch.randint(0, self.small_vocab if small else self.vocab, shape, generator=generator)
            return (ids, padded_mask(shape, generator)) if self.mask else (ids,)
        return (torch.randn(*shape, generator=generator),)


def padded_mask(shape, generator=None):
    """[batch, seq] int64 attention mask of right-padded sequences: row i keeps
    its first len_i positions (1) and pads the rest (0); the first row is whole,
    the others between half and all of seq, so every batch has padding."""
    b, t = shape
    lens = torch.randint(t // 2, t + 1, (b,), generator=generator)
    lens[0] = t
    if b > 1:
        lens[1] = min(int(lens[1]), t - 1)
    return (torch.arange(t)[None, :] < lens[:, None]).to(torch.int64)


def calibrate_batchnorm(model, x):
    """Random weights leave BatchNorm's running statistics at 0/1 while the
    activations shrink layer by layer (mobilenet_v2's output is ~1e-9, below
    fp16's range: every fp16 result would be 0 and nothing checked; GoogLeNet's
    logits are its bias alone). One forward pass in training mode sets them to
    the data's statistics, as a trained model's are; weights are untouched.
    utils/bench-gpu.py's models and export_torch_models.py's exports."""
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None  # a cumulative average: exactly this batch's statistics
    if bns:
        model.train()
        with torch.no_grad():
            model(x)
    model.eval()


ZOO = {}
TINY = {}  # the models/zoo-small models: built with small=True, hidden 32..64, 1..2 layers


def recipe(name, suite, source, kind, full, small, into=ZOO, **kw):
    def add(make):
        into[name] = Recipe(suite, source, make, kind, full, small, **kw)
        return make
    return add


IMG, IMG_SMALL = (3, 224, 224), (3, 64, 64)

# -- vision: torchvision ------------------------------------------------------
for _name in ["resnet50", "resnet18", "resnext50_32x4d", "wide_resnet50_2", "densenet121", "mobilenet_v2",
              "mobilenet_v3_large", "efficientnet_b0", "efficientnet_v2_s", "regnet_y_800mf", "convnext_tiny"]:
    # Full width at both sizes (torchvision has no depth/width knobs for most):
    # small only shrinks the image.
    recipe(_name, "vision", f"torchvision.models.{_name}", "image", IMG, IMG_SMALL)(
        lambda small, _n=_name: getattr(__import__("torchvision").models, _n)())


class SegOut(torch.nn.Module):
    """torchvision segmentation models return {'out': ..., 'aux': ...}: 'out'."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)["out"]


@recipe("deeplabv3_mobilenet_v3_large", "vision", "torchvision deeplabv3_mobilenet_v3_large, output 'out'",
        "image", (3, 520, 520), (3, 128, 128))
def _deeplab(small):
    from torchvision.models.segmentation import deeplabv3_mobilenet_v3_large
    return SegOut(deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None, aux_loss=False))


class DetectionRaw(torch.nn.Module):
    """SSDlite's backbone + head without anchors or post-processing: the
    per-anchor box regressions and class logits, concatenated [B, A, 4 + 91]."""

    def __init__(self, m):
        super().__init__()
        self.backbone, self.head = m.backbone, m.head

    def forward(self, x):
        feats = list(self.backbone(x).values())
        h = self.head(feats)
        return torch.cat([h["bbox_regression"], h["cls_logits"]], -1)


@recipe("ssdlite320_mobilenet_v3_large", "vision",
        "torchvision ssdlite320_mobilenet_v3_large backbone+head, raw outputs (no anchors/NMS)",
        "image", (3, 320, 320), (3, 160, 160))
def _ssdlite(small):
    from torchvision.models.detection import ssdlite320_mobilenet_v3_large
    return DetectionRaw(ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None))


# -- vision: timm -----------------------------------------------------------
def random_zero_head(m):
    """timm starts some heads at zero (MLP-Mixer's, Hiera's): every logit would
    be its bias and no numeric check could fail. A random head makes them a check."""
    head = m.get_classifier() if hasattr(m, "get_classifier") else None
    if isinstance(head, torch.nn.Linear) and not head.weight.detach().any():
        with torch.no_grad():
            torch.nn.init.normal_(head.weight, std=0.02)
    return m


def _timm(arch, small_kw, full_kw=None):
    def make(small):
        import timm
        return random_zero_head(timm.create_model(arch, pretrained=False,
                                                  **(small_kw if small else (full_kw or {}))))
    return make


_VIT_SMALL = dict(img_size=64, embed_dim=64, depth=2, num_heads=2)
for _name, _arch, _kw in [
        ("vit_b_16", "vit_base_patch16_224", _VIT_SMALL),
        ("deit_small_patch16_224", "deit_small_patch16_224", _VIT_SMALL),
        ("beit_base_patch16_224", "beit_base_patch16_224", _VIT_SMALL)]:
    recipe(_name, "vision", f"timm {_arch}", "image", IMG, IMG_SMALL)(_timm(_arch, _kw))


@recipe("mixer_b16_224", "vision", "timm mixer_b16_224", "image", IMG, IMG_SMALL)
def _mixer(small):
    import timm
    if small:  # mixer_b16_224 sets embed_dim/num_blocks itself: build the class
        from timm.models.mlp_mixer import MlpMixer
        return random_zero_head(MlpMixer(img_size=64, patch_size=16, num_blocks=2, embed_dim=64))
    return _timm("mixer_b16_224", {})(False)
recipe("swin_tiny_patch4_window7_224", "vision", "timm swin_tiny_patch4_window7_224", "image", IMG, (3, 128, 128))(
    _timm("swin_tiny_patch4_window7_224",
          dict(img_size=128, window_size=4, embed_dim=32, depths=(2, 2, 2, 2), num_heads=(1, 2, 4, 8))))
recipe("maxvit_tiny_tf_224", "vision", "timm maxvit_tiny_tf_224", "image", IMG, IMG)(
    _timm("maxvit_tiny_tf_224", {}))
recipe("mobilevit_s", "vision", "timm mobilevit_s", "image", (3, 256, 256), IMG_SMALL)(_timm("mobilevit_s", {}))
recipe("poolformer_s12", "vision", "timm poolformer_s12", "image", IMG, IMG_SMALL)(_timm("poolformer_s12", {}))


# -- text: HuggingFace encoders ---------------------------------------------
def _hf(model_cls, config_cls, full, small, **common):
    """A transformers model from a config; `small` overrides for the survey."""
    def make(is_small):
        import transformers
        cfg = getattr(transformers, config_cls)(**common, **(small if is_small else full))
        if hasattr(cfg, "use_cache"):
            cfg.use_cache = False
        if "." in model_cls:  # a class not exported at the top level: module.Class
            mod, cls = model_cls.rsplit(".", 1)
            return getattr(__import__(mod, fromlist=[cls]), cls)(cfg)
        return getattr(transformers, model_cls)(cfg)
    return make


# Encoders' small config: hidden 64, 2 layers, 2 heads, vocab 1000.
ENC = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128, vocab_size=1000,
           max_position_embeddings=128)
TOK, TOK_SMALL = (128,), (16,)
recipe("bert_base", "text", "transformers BertModel(BertConfig())", "tokens", TOK, TOK_SMALL, vocab=30000,
       seq_dynamic=True)(_hf("BertModel", "BertConfig", {}, ENC))
recipe("roberta_base", "text", "transformers RobertaModel(RobertaConfig()), roberta-base", "tokens", TOK, TOK_SMALL,
       vocab=50265, seq_dynamic=True)(_hf("RobertaModel", "RobertaConfig", dict(vocab_size=50265,
                                                                              max_position_embeddings=514), ENC))
recipe("distilbert", "text", "transformers DistilBertModel(DistilBertConfig())", "tokens", TOK, TOK_SMALL,
       vocab=30522, seq_dynamic=True)(
    _hf("DistilBertModel", "DistilBertConfig", {}, dict(dim=64, n_layers=2, n_heads=2, hidden_dim=128,
                                                        vocab_size=1000, max_position_embeddings=128)))
recipe("albert_base", "text", "transformers AlbertModel, albert-base-v2 config", "tokens", TOK, TOK_SMALL,
       vocab=30000, seq_dynamic=True)(
    _hf("AlbertModel", "AlbertConfig", dict(hidden_size=768, num_attention_heads=12, intermediate_size=3072),
        dict(ENC, embedding_size=32)))
recipe("electra_base", "text", "transformers ElectraForPreTraining (discriminator), electra-base config",
       "tokens", TOK, TOK_SMALL, vocab=30522, seq_dynamic=True)(
    _hf("ElectraForPreTraining", "ElectraConfig",
        dict(hidden_size=768, num_attention_heads=12, intermediate_size=3072, embedding_size=768),
        dict(ENC, embedding_size=64)))
_DEBERTA = dict(relative_attention=True, pos_att_type=["p2c", "c2p"], position_biased_input=False,
                norm_rel_ebd="layer_norm", share_att_key=True, max_relative_positions=-1)
recipe("deberta_v3_base", "text", "transformers DebertaV2Model, deberta-v3-base config", "tokens", TOK, TOK_SMALL,
       vocab=128100, seq_dynamic=True)(
    _hf("DebertaV2Model", "DebertaV2Config", dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                                                  intermediate_size=3072, vocab_size=128100,
                                                  max_position_embeddings=512, position_buckets=256),
        dict(ENC, position_buckets=16), **_DEBERTA))
recipe("t5_small_encoder", "text", "transformers T5EncoderModel, t5-small config", "tokens", TOK, TOK_SMALL,
       vocab=32128, seq_dynamic=True)(
    _hf("T5EncoderModel", "T5Config", dict(d_model=512, d_ff=2048, num_layers=6, num_heads=8, d_kv=64,
                                           vocab_size=32128),
        dict(d_model=64, d_ff=128, num_layers=2, num_heads=2, d_kv=32, vocab_size=1000)))
recipe("clip_text", "text", "transformers CLIPTextModel(CLIPTextConfig())", "tokens", (77,), TOK_SMALL,
       vocab=49408, seq_dynamic=True)(
    _hf("CLIPTextModel", "CLIPTextConfig", {}, dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                                                    intermediate_size=128, vocab_size=1000)))
recipe("clip_vision", "text", "transformers CLIPVisionModel(CLIPVisionConfig())", "image", IMG, IMG_SMALL)(
    _hf("CLIPVisionModel", "CLIPVisionConfig", {}, dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                                                        intermediate_size=128, image_size=64, patch_size=16)))
recipe("whisper_base_encoder", "text", "transformers WhisperEncoder, whisper-base config; features [B, 80, 3000]",
       "audio", (80, 3000), (80, 100))(
    _hf("transformers.models.whisper.modeling_whisper.WhisperEncoder", "WhisperConfig",
        dict(d_model=512, encoder_layers=6, encoder_attention_heads=8, encoder_ffn_dim=2048),
        dict(d_model=64, encoder_layers=2, encoder_attention_heads=2, encoder_ffn_dim=128,
             max_source_positions=50), num_mel_bins=80))
recipe("wav2vec2_base", "text", "transformers Wav2Vec2Model(Wav2Vec2Config()), wav2vec2-base; samples [B, 16000]",
       "wave", (16000,), (4000,))(
    _hf("Wav2Vec2Model", "Wav2Vec2Config", {},
        dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128,
             conv_dim=(32,) * 7, num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4)))

# -- generative: decoders (use_cache=False; logits, or the last hidden state) --
DEC = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, vocab_size=1000,
           max_position_embeddings=128)
GQA = dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=8, num_attention_heads=16,
           num_key_value_heads=4, vocab_size=32000, max_position_embeddings=2048)
SEQ, SEQ_SMALL = (128,), (16,)
recipe("gpt2", "generative", "transformers GPT2Model(GPT2Config()), last hidden state", "tokens", SEQ, SEQ_SMALL,
       vocab=50000, seq_dynamic=True)(
    _hf("GPT2Model", "GPT2Config", {}, dict(n_embd=64, n_layer=2, n_head=4, vocab_size=1000, n_positions=128)))
recipe("gpt_neo_125m", "generative", "transformers GPTNeoForCausalLM, gpt-neo-125m config (global+local attention)",
       "tokens", SEQ, SEQ_SMALL, vocab=50257, seq_dynamic=True)(
    _hf("GPTNeoForCausalLM", "GPTNeoConfig", dict(hidden_size=768, num_layers=12, num_heads=12,
                                                  attention_types=[[["global", "local"], 6]]),
        dict(hidden_size=64, num_layers=2, num_heads=4, attention_types=[[["global", "local"], 1]], window_size=8,
             vocab_size=1000, max_position_embeddings=128)))
recipe("opt_125m", "generative", "transformers OPTForCausalLM, opt-125m config", "tokens", SEQ, SEQ_SMALL,
       vocab=50272, seq_dynamic=True)(
    _hf("OPTForCausalLM", "OPTConfig", dict(hidden_size=768, ffn_dim=3072, num_hidden_layers=12,
                                            num_attention_heads=12, word_embed_proj_dim=768),
        dict(hidden_size=64, ffn_dim=128, num_hidden_layers=2, num_attention_heads=4, word_embed_proj_dim=64,
             vocab_size=1000, max_position_embeddings=128)))
_GQA_SMALL = dict(DEC, num_key_value_heads=2)
recipe("llama", "generative", "transformers LlamaForCausalLM: hidden 1024, 8 layers, 16 heads, 4 KV heads (GQA), "
       "RMSNorm, rotary, vocab 32000", "tokens", SEQ, SEQ_SMALL, vocab=32000, seq_dynamic=True)(
    _hf("LlamaForCausalLM", "LlamaConfig", GQA, _GQA_SMALL))
recipe("mistral", "generative", "transformers MistralForCausalLM, the llama recipe's sizes, sliding window 4096",
       "tokens", SEQ, SEQ_SMALL, vocab=32000, seq_dynamic=True)(
    _hf("MistralForCausalLM", "MistralConfig", dict(GQA, sliding_window=4096), dict(_GQA_SMALL, sliding_window=8)))
recipe("qwen2", "generative", "transformers Qwen2ForCausalLM, the llama recipe's sizes (QKV bias), vocab 32000 "
       "(Qwen2's is 151936)", "tokens", SEQ, SEQ_SMALL, vocab=32000, seq_dynamic=True)(
    _hf("Qwen2ForCausalLM", "Qwen2Config", GQA, _GQA_SMALL))
recipe("phi", "generative", "transformers PhiForCausalLM: hidden 1024, 8 layers, 16 heads, partial rotary 0.5 "
       "(phi-2 is 2560 x 32)", "tokens", SEQ, SEQ_SMALL, vocab=51200, seq_dynamic=True)(
    _hf("PhiForCausalLM", "PhiConfig", dict(hidden_size=1024, intermediate_size=4096, num_hidden_layers=8,
                                            num_attention_heads=16, vocab_size=51200),
        dict(DEC, partial_rotary_factor=0.5)))
recipe("bloom_560m", "generative", "transformers BloomForCausalLM, bloom-560m config (ALiBi) with vocab 32000 "
       "(250880 makes a 2.2 GB file, past protobuf's 2 GB)", "tokens", SEQ, SEQ_SMALL, vocab=32000,
       seq_dynamic=True)(
    _hf("BloomForCausalLM", "BloomConfig", dict(hidden_size=1024, n_layer=24, n_head=16, vocab_size=32000),
        dict(hidden_size=64, n_layer=2, n_head=4, vocab_size=1000)))
recipe("pythia_160m", "generative", "transformers GPTNeoXForCausalLM, pythia-160m config (rotary 25%, parallel "
       "residual)", "tokens", SEQ, SEQ_SMALL, vocab=50304, seq_dynamic=True)(
    _hf("GPTNeoXForCausalLM", "GPTNeoXConfig", dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                                                    intermediate_size=3072, vocab_size=50304, rotary_pct=0.25),
        dict(DEC, rotary_pct=0.25)))
recipe("gptj", "generative", "transformers GPTJForCausalLM: n_embd 1024, 8 layers, 16 heads, rotary_dim 64 "
       "(gpt-j-6b is 4096 x 28)", "tokens", SEQ, SEQ_SMALL, vocab=50400, seq_dynamic=True)(
    _hf("GPTJForCausalLM", "GPTJConfig", dict(n_embd=1024, n_layer=8, n_head=16, rotary_dim=64, n_positions=2048),
        dict(n_embd=64, n_layer=2, n_head=4, rotary_dim=8, vocab_size=1000, n_positions=128)))
recipe("falcon", "generative", "transformers FalconForCausalLM: hidden 1024, 8 layers, 16 heads, multi-query, "
       "parallel attention, rotary (falcon-7b is 4544 x 32)", "tokens", SEQ, SEQ_SMALL, vocab=65024,
       seq_dynamic=True)(
    _hf("FalconForCausalLM", "FalconConfig", dict(hidden_size=1024, num_hidden_layers=8, num_attention_heads=16),
        dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, vocab_size=1000)))



# == The zoo's second half (issue 36): families the first 43 models did not have ==
# Chosen for op forms and shapes the kernels were never tuned on: reparameterized and
# NAS CNNs, hybrid and hierarchical/efficient transformers, video (3-D) convs,
# relative-position and audio encoders, encoder-decoders run whole, newer decoders.

# -- vision: timm CNNs (any image size: small only shrinks the image) ---------
for _name, _why in [
        ("repvgg_a2", "RepVGG: 3x3 + 1x1 + identity branches (train-time form)"),
        ("mobileone_s1", "MobileOne: over-parameterized depthwise/pointwise branches"),
        ("fbnetc_100", "FBNet-C (NAS)"),
        ("ghostnet_100", "GhostNet: cheap depthwise 'ghost' features concatenated"),
        ("lcnet_100", "PP-LCNet: hard-swish depthwise separable, SE"),
        ("rexnet_100", "ReXNet: channel-increasing inverted residuals, partial residual adds"),
        ("mixnet_s", "MixNet: mixed depthwise kernel sizes (3/5/7/9) split over channels"),
        ("nfnet_l0", "NFNet-L0: normalizer-free, scaled weight standardization, gamma-scaled SiLU"),
        ("cspdarknet53", "CSPDarkNet-53: cross-stage partial blocks, LeakyReLU"),
        ("dla34", "DLA-34: deep layer aggregation trees"),
        ("dpn68", "DPN-68: dual path (residual + dense) grouped convs"),
        ("hrnet_w18_small", "HRNet-W18-small: parallel resolutions, nearest upsample fusion"),
        ("res2net50_26w_4s", "Res2Net-50: hierarchical split 3x3 convs"),
        ("resnest14d", "ResNeSt-14d: split attention (softmax over radix groups)"),
        ("skresnet18", "SKNet-18: selective kernel attention over two branches"),
        ("ese_vovnet19b_dw", "VoVNet-19 dw: one-shot aggregation, effective SE"),
        ("convnextv2_atto", "ConvNeXt-V2 atto: global response normalization"),
        ("inception_next_tiny", "InceptionNeXt: depthwise convs split into square/band kernels"),
        ("inception_v3", "Inception-v3: asymmetric 1x7/7x1 convs, average-pooled branches"),
        ("xception41", "Xception-41: separable convs in entry/middle/exit flows")]:
    _small_img = (3, 96, 96) if _name == "inception_v3" else IMG_SMALL
    recipe(_name, "vision", f"timm {_name}: {_why}", "image", (3, 299, 299) if _name == "inception_v3" else IMG,
           _small_img)(_timm(_name, {}))

# -- vision: timm hybrids and hierarchical / efficient transformers -----------
# small: the image where the model takes another size (img_size), else full size.
for _name, _why, _full, _small, _kw in [
        ("levit_128", "LeViT: conv stem, attention with BatchNorm'd projections and bias tables, "
         "Hardswish", IMG, (3, 128, 128), dict(img_size=128)),
        ("coatnet_0_rw_224", "CoAtNet-0: MBConv stages then relative-position attention", IMG, (3, 128, 128),
         dict(img_size=128)),
        ("efficientformer_l1", "EfficientFormer-L1: pool mixers, a last stage of attention", IMG, IMG, {}),
        ("fastvit_t8", "FastViT-T8: reparameterized RepMixer, large-kernel conv positional encoding", IMG,
         IMG_SMALL, {}),
        ("convit_tiny", "ConViT-tiny: gated positional self-attention", IMG, IMG_SMALL, dict(img_size=64)),
        ("cait_xxs24_224", "CaiT-XXS24: talking-heads attention, class-attention layers, layer scale", IMG,
         IMG_SMALL, dict(img_size=64)),
        ("xcit_tiny_12_p16_224", "XCiT-T12: cross-covariance attention over channels, local patch "
         "interaction convs", IMG, IMG_SMALL, dict(img_size=64)),
        ("pvt_v2_b0", "PVT-v2-b0: spatial-reduction attention, overlapping patch embeds", IMG, IMG_SMALL, {}),
        ("twins_svt_small", "Twins-SVT-S: locally-grouped and global sub-sampled attention", IMG, IMG, {}),
        ("edgenext_small", "EdgeNeXt-S: split depthwise transposed attention (SDTA)", IMG, IMG_SMALL, {}),
        ("mobilevitv2_050", "MobileViT-v2 0.5: separable linear attention", (3, 256, 256), IMG_SMALL, {}),
        ("tiny_vit_5m_224", "TinyViT-5M: MBConv stage, windowed attention with bias tables", IMG, IMG, {}),
        ("pit_s_224", "PiT-S: pooling-based ViT (depthwise conv pooling between stages)", IMG, IMG, {}),
        ("focalnet_tiny_srf", "FocalNet-T: focal modulation (gated depthwise context)", IMG, IMG_SMALL, {}),
        ("swinv2_tiny_window8_256", "Swin-V2-T: cosine attention, log-spaced continuous position bias", (3, 256, 256),
         (3, 128, 128), dict(img_size=128, window_size=4)),
        ("eva02_tiny_patch14_224", "EVA-02-Ti: rotary position embedding, SwiGLU MLP", IMG, IMG, {}),
        ("hiera_tiny_224", "Hiera-T: mask-unit attention, unrolled token order, pooled queries", IMG, IMG, {}),
        ("mvitv2_tiny", "MViT-v2-T: pooling attention with decomposed relative positions", IMG, IMG, {})]:
    # num_classes: tiny_vit's default head is ImageNet-22k's, eva02_tiny's none.
    recipe(_name, "vision", f"timm {_name}: {_why}", "image", _full, _small)(
        _timm(_name, dict(_kw, num_classes=1000), dict(num_classes=1000)))

# -- vision: torchvision (classic CNNs, segmentation, video) ------------------
for _name, _why in [("squeezenet1_1", "SqueezeNet 1.1: fire modules, no linear head"),
                    ("shufflenet_v2_x1_0", "ShuffleNet-v2 1.0: channel split and shuffle"),
                    ("googlenet", "GoogLeNet: inception branches (eval: no aux heads)")]:
    recipe(_name, "vision", f"torchvision.models.{_name}: {_why}", "image", IMG, IMG_SMALL)(
        lambda small, _n=_name: getattr(__import__("torchvision").models, _n)(
            **(dict(aux_logits=False, init_weights=True) if _n == "googlenet" else {})))


@recipe("fcn_resnet50", "vision", "torchvision fcn_resnet50 (dilated ResNet-50, bilinear upsampling), output 'out'",
        "image", (3, 520, 520), (3, 128, 128))
def _fcn(small):
    from torchvision.models.segmentation import fcn_resnet50
    return SegOut(fcn_resnet50(weights=None, weights_backbone=None, aux_loss=False))


# Video classifiers: clips [B, 3, 16, 112, 112] (Kinetics-400's input), 3-D convs.
for _name, _why in [("r3d_18", "R3D-18: 3x3x3 convs"),
                    ("r2plus1d_18", "R(2+1)D-18: (1x3x3 then 3x1x1) factorized convs"),
                    ("s3d", "S3D: separable 3-D inception blocks, 3-D max pools")]:
    _clip = (3, 16, 224, 224) if _name == "s3d" else (3, 16, 112, 112)
    recipe(_name, "vision", f"torchvision.models.video.{_name}: {_why}; clips [B, 3, 16, H, W]", "video", _clip,
           _clip if _name == "s3d" else (3, 8, 56, 56))(
        lambda small, _n=_name: getattr(__import__("torchvision.models.video", fromlist=[_n]), _n)())


# -- text: more encoders, encoder-decoders run whole, audio -------------------
class Seq2SeqWhole(torch.nn.Module):
    """An encoder-decoder run whole from one input: the decoder reads the same ids
    (teacher forcing, causal) and cross-attends to the encoder; the decoder's last
    hidden state is the output. One input keeps tc-bench's single-input protocol."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(input_ids=x, decoder_input_ids=x)[0]


def _seq2seq(model_cls, config_cls, full, small, **common):
    inner = _hf(model_cls, config_cls, full, small, **common)
    return lambda is_small: Seq2SeqWhole(inner(is_small))


recipe("deberta_base", "text", "transformers DebertaModel, deberta-base config (v1 disentangled attention, "
       "c2p + p2c relative positions)", "tokens", TOK, TOK_SMALL, vocab=50265, seq_dynamic=True)(
    _hf("DebertaModel", "DebertaConfig", dict(vocab_size=50265, relative_attention=True, pos_att_type=["c2p", "p2c"],
                                              max_relative_positions=-1, position_biased_input=False),
        dict(ENC, relative_attention=True, pos_att_type=["c2p", "p2c"], position_biased_input=False)))
recipe("mpnet_base", "text", "transformers MPNetModel(MPNetConfig()): bucketed relative position bias",
       "tokens", TOK, TOK_SMALL, vocab=30527, seq_dynamic=True)(_hf("MPNetModel", "MPNetConfig", {}, ENC))
recipe("convbert_base", "text", "transformers ConvBertModel(ConvBertConfig()): span-based dynamic convolution "
       "heads beside self-attention", "tokens", TOK, TOK_SMALL, vocab=30522, seq_dynamic=True)(
    _hf("ConvBertModel", "ConvBertConfig", {}, dict(ENC, embedding_size=64)))
recipe("esm2_t12", "text", "transformers EsmModel, esm2_t12_35M config (rotary, pre-LN protein encoder)",
       "tokens", TOK, TOK_SMALL, vocab=33, small_vocab=33, seq_dynamic=True)(
    _hf("EsmModel", "EsmConfig", dict(hidden_size=480, num_hidden_layers=12, num_attention_heads=20,
                                      intermediate_size=1920, max_position_embeddings=1026, vocab_size=33),
        dict(ENC, vocab_size=33), position_embedding_type="rotary", pad_token_id=1,
        mask_token_id=32, emb_layer_norm_before=False, token_dropout=False))
recipe("bart_base", "text", "transformers BartModel, bart-base config, run whole (decoder reads the same ids)",
       "tokens", TOK, TOK_SMALL, vocab=50265, seq_dynamic=True)(
    _seq2seq("BartModel", "BartConfig", {}, dict(d_model=64, encoder_layers=2, decoder_layers=2,
                                                 encoder_attention_heads=2, decoder_attention_heads=2,
                                                 encoder_ffn_dim=128, decoder_ffn_dim=128, vocab_size=1000,
                                                 max_position_embeddings=128)))
recipe("t5_small", "text", "transformers T5Model, t5-small config, run whole (decoder reads the same ids)",
       "tokens", TOK, TOK_SMALL, vocab=32128, seq_dynamic=True)(
    _seq2seq("T5Model", "T5Config", dict(d_model=512, d_ff=2048, num_layers=6, num_heads=8, d_kv=64, vocab_size=32128),
             dict(d_model=64, d_ff=128, num_layers=2, num_heads=2, d_kv=32, vocab_size=1000)))
_SPEECH_SMALL = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128,
                     conv_dim=(32,) * 7, num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4)
recipe("hubert_base", "text", "transformers HubertModel(HubertConfig()), hubert-base; samples [B, 16000]",
       "wave", (16000,), (4000,))(_hf("HubertModel", "HubertConfig", {}, _SPEECH_SMALL))
recipe("wavlm_base", "text", "transformers WavLMModel(WavLMConfig()), wavlm-base (gated relative position "
       "bias); samples [B, 16000]", "wave", (16000,), (4000,))(
    _hf("WavLMModel", "WavLMConfig", {}, dict(_SPEECH_SMALL, num_buckets=32, max_bucket_distance=64)))
recipe("ast", "text", "transformers ASTModel(ASTConfig()), audio spectrogram transformer; features "
       "[B, 1024 frames, 128 mel]", "audio", (1024, 128), (128, 128))(
    _hf("ASTModel", "ASTConfig", {}, dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                                          intermediate_size=128, max_length=128)))

# -- generative: newer decoder families ---------------------------------------
recipe("gemma", "generative", "transformers GemmaForCausalLM: hidden 1024, 8 layers, 8 heads of 256, 1 KV head "
       "(MQA), GeGLU, RMSNorm (1 + w), scaled embeddings, vocab 32000 (gemma-2b is 2048 x 18, vocab 256000)",
       "tokens", SEQ, SEQ_SMALL, vocab=32000, seq_dynamic=True)(
    _hf("GemmaForCausalLM", "GemmaConfig", dict(hidden_size=1024, intermediate_size=4096, num_hidden_layers=8,
                                                num_attention_heads=8, num_key_value_heads=1, head_dim=256,
                                                vocab_size=32000),
        dict(DEC, num_key_value_heads=1, head_dim=16)))
recipe("qwen3", "generative", "transformers Qwen3ForCausalLM, the llama recipe's sizes (q/k RMSNorm per head)",
       "tokens", SEQ, SEQ_SMALL, vocab=32000, seq_dynamic=True)(
    _hf("Qwen3ForCausalLM", "Qwen3Config", dict(GQA, head_dim=64), dict(_GQA_SMALL, head_dim=16)))
recipe("starcoder2", "generative", "transformers Starcoder2ForCausalLM: the llama recipe's sizes, LayerNorm, "
       "GELU MLP with biases, sliding window 4096, vocab 49152", "tokens", SEQ, SEQ_SMALL, vocab=49152,
       seq_dynamic=True)(
    _hf("Starcoder2ForCausalLM", "Starcoder2Config", dict(GQA, vocab_size=49152, sliding_window=4096,
                                                          intermediate_size=4096),
        dict(_GQA_SMALL, sliding_window=8)))
recipe("gpt_bigcode", "generative", "transformers GPTBigCodeForCausalLM(GPTBigCodeConfig()): multi-query "
       "attention, santacoder-style", "tokens", SEQ, SEQ_SMALL, vocab=50257, seq_dynamic=True)(
    _hf("GPTBigCodeForCausalLM", "GPTBigCodeConfig", {}, dict(n_embd=64, n_layer=2, n_head=4, vocab_size=1000,
                                                              n_positions=128)))
recipe("olmo", "generative", "transformers OlmoForCausalLM: hidden 1024, 8 layers, 16 heads, non-parametric "
       "LayerNorm, SwiGLU, vocab 50304 (OLMo-1B is 2048 x 16)", "tokens", SEQ, SEQ_SMALL, vocab=50304,
       seq_dynamic=True)(
    _hf("OlmoForCausalLM", "OlmoConfig", dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=8,
                                              num_attention_heads=16, vocab_size=50304),
        DEC))


# -- several inputs: ids and an attention mask with padding --------------------
class WithMask(torch.nn.Module):
    """HF model called with input_ids and attention_mask (the padding mask)."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x, mask):
        return self.m(input_ids=x, attention_mask=mask)[0]


def _masked(make):
    return lambda is_small: WithMask(make(is_small))


recipe("bert_base_padded", "text", "transformers BertModel(BertConfig()) with an attention mask of right-padded "
       "sequences (inputs: ids, mask)", "tokens", TOK, TOK_SMALL, vocab=30000, seq_dynamic=True, mask=True)(
    _masked(_hf("BertModel", "BertConfig", {}, ENC)))
recipe("llama_padded", "generative", "the llama recipe with an attention mask of right-padded sequences (causal + "
       "padding; inputs: ids, mask)", "tokens", SEQ, SEQ_SMALL, vocab=32000, seq_dynamic=True, mask=True)(
    _masked(_hf("LlamaForCausalLM", "LlamaConfig", GQA, _GQA_SMALL)))

# -- tiny models committed under models/zoo-small (CI): op forms models/ci and
# models/small lack, under 1.5 MB each. Exported with --layout dir.
@recipe("tiny_swin", "zoo-small", "timm swin_tiny_patch4_window7_224 with embed 32, 2 stages of 2 blocks, window 4, "
        "64x64 (shifted windows: roll, window partition, masked relative-position attention)",
        "image", (3, 64, 64), (3, 64, 64), into=TINY)
def _tiny_swin(small):
    import timm
    return timm.create_model("swin_tiny_patch4_window7_224", pretrained=False, img_size=64, window_size=4,
                             embed_dim=32, depths=(2, 2), num_heads=(2, 4), num_classes=10)


@recipe("tiny_convnext", "zoo-small", "torchvision ConvNeXt with 3 stages of 1 block, dims 16/32/64 (depthwise 7x7, "
        "LayerNorm over permuted channels, GELU, layer scale)", "image", (3, 64, 64), (3, 64, 64), into=TINY)
def _tiny_convnext(small):
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt
    return ConvNeXt([CNBlockConfig(16, 32, 1), CNBlockConfig(32, 64, 1), CNBlockConfig(64, None, 1)],
                    num_classes=10)


recipe("tiny_llama", "zoo-small", "transformers LlamaForCausalLM: hidden 64, 2 layers, 4 heads, 2 KV heads (GQA), "
       "RMSNorm, rotary, SiLU gate, vocab 256", "tokens", (16,), (16,), vocab=256, small_vocab=256, into=TINY)(
    _hf("LlamaForCausalLM", "LlamaConfig", {}, dict(_GQA_SMALL, vocab_size=256)))
recipe("tiny_whisper_encoder", "zoo-small", "transformers WhisperEncoder: d_model 64, 2 layers, 80 mel bins x 100 "
       "frames (conv1d front-end, GELU, sinusoidal positions)", "audio", (80, 100), (80, 100), into=TINY)(
    _hf("transformers.models.whisper.modeling_whisper.WhisperEncoder", "WhisperConfig", {},
        dict(d_model=64, encoder_layers=2, encoder_attention_heads=2, encoder_ffn_dim=128, max_source_positions=50),
        num_mel_bins=80))
recipe("tiny_wav2vec2", "zoo-small", "transformers Wav2Vec2Model: hidden 32, 1 layer, conv feature extractor of "
       "7 convs x 32 channels with GroupNorm, grouped positional conv", "wave", (4000,), (4000,), into=TINY)(
    _hf("Wav2Vec2Model", "Wav2Vec2Config", {},
        dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64, conv_dim=(32,) * 7,
             num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4)))


def recipes(small=False):
    """name -> (make(), make_inputs(batch=2)), the form export_torch_models uses."""
    out = {n: ((lambda r=r: r.make(small)), (lambda batch=2, r=r: r.inputs(small, batch))) for n, r in ZOO.items()}
    out.update({n: ((lambda r=r: r.make(True)), (lambda batch=2, r=r: r.inputs(True, batch))) for n, r in TINY.items()})
    return out
