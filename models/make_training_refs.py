#!/usr/bin/env python3
"""PyTorch autograd's gradients and loss curves for tc's training tests
(test/Training/pytorch-reference.test), made where torch is installed:

    python3 models/make_training_refs.py models/training [NAME...]

For each small model (a CNN with batch norm, bert_tiny with a masked-LM loss,
gpt2_tiny and tiny_llama with an LM loss, a small ViT; NAMEs: only those),
dropout off:
  NAME.onnx                      the logits model (TorchScript exporter, opset 17,
                                 no constant folding: initializers are the parameters)
  NAME/test_data_set_0..3/       batches: input_0.pb the input, input_1.pb the labels
  NAME.ref.npz                   loss and per-parameter gradients on batch 0
                                 ("grad:" + ONNX initializer name), and the 20-step
                                 loss curves of SGD (lr 0.05, momentum 0.9) and AdamW
                                 (lr 1e-3, weight decay 0.01) over the batches cycled
Batch norm trains with batch statistics; cross-entropy with ignore_index -100.
Each parameter gets a little noise before the export (see main()).
"""
import os
import sys

import numpy as np
import torch
from onnx import numpy_helper

torch.backends.cudnn.allow_tf32 = False
STEPS = 20
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from training_models import ONES_MASK, Logits, loss_of as _loss, perturb  # noqa: E402


class Cnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 8, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 16, 3, padding=1, stride=2)
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x):
        x = torch.nn.functional.max_pool2d(torch.relu(self.bn1(self.conv1(x))), 2)
        x = torch.relu(self.conv2(x)).mean(dim=(2, 3))
        return self.fc(x)


def models():
    import torchvision
    import transformers as tr
    g = torch.Generator().manual_seed(0)
    tokens = lambda v, b, s: (lambda: torch.randint(0, v, (b, s), generator=g))
    torch.manual_seed(0)
    yield "cnn", Cnn(), lambda: torch.randn(4, 1, 8, 8, generator=g), lambda: torch.randint(0, 10, (4,), generator=g)
    torch.manual_seed(0)  # each model's initial weights, whichever NAMEs are made
    bert = tr.BertForMaskedLM(tr.BertConfig(vocab_size=256, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                            intermediate_size=64, max_position_embeddings=32, hidden_dropout_prob=0.0,
                                            attention_probs_dropout_prob=0.0, attn_implementation="eager"))

    def masked():
        y = torch.randint(0, 256, (2, 12), generator=g)
        y[torch.rand(2, 12, generator=g) > 0.3] = -100
        return y
    yield "bert_tiny", bert, tokens(256, 2, 12), masked
    # Untied: torch.export's exporter writes a tied LM head as a second initializer.
    torch.manual_seed(0)  # each model's initial weights, whichever NAMEs are made
    gpt2 = tr.GPT2LMHeadModel(tr.GPT2Config(vocab_size=256, n_embd=32, n_layer=2, n_head=2, n_positions=32,
                                            tie_word_embeddings=False,
                                            resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                                            attn_implementation="eager"))
    yield "gpt2_tiny", gpt2, tokens(256, 2, 12), tokens(256, 2, 12)
    torch.manual_seed(0)  # each model's initial weights, whichever NAMEs are made
    llama = tr.LlamaForCausalLM(tr.LlamaConfig(vocab_size=256, hidden_size=32, intermediate_size=64,
                                               num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                               max_position_embeddings=32, attn_implementation="eager"))
    yield "tiny_llama", llama, tokens(256, 2, 12), tokens(256, 2, 12)
    torch.manual_seed(0)  # each model's initial weights, whichever NAMEs are made
    vit = torchvision.models.VisionTransformer(image_size=16, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32,
                                               mlp_dim=64, num_classes=10)
    yield "vit_tiny", vit, lambda: torch.randn(2, 3, 16, 16, generator=g), lambda: torch.randint(0, 10, (2,), generator=g)


def loss_of(model, x, y):
    return _loss(model(x), y)


def curve(model, init, batches, make_opt):
    model.load_state_dict(init)
    model.train()
    opt = make_opt(model.parameters())
    out = []
    for i in range(STEPS):
        x, y = batches[i % len(batches)]
        loss = loss_of(model, x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        out.append(loss.item())
    return np.array(out)


def main(out, only):
    os.makedirs(out, exist_ok=True)
    for name, m, mk_x, mk_y in models():
        torch.manual_seed(0)
        if hasattr(m, "config"):
            m.config.use_cache = False
        model = Logits(m, name in ONES_MASK)
        perturb(model)
        batches = [(mk_x(), mk_y()) for _ in range(4)]  # drawn for every model: same data either way
        if only and name not in only:
            continue
        init = {k: v.detach().clone() for k, v in model.state_dict().items()}
        path = os.path.join(out, name + ".onnx")
        model.eval()
        try:
            torch.onnx.export(model, (batches[0][0],), path, opset_version=17, dynamo=False,
                              do_constant_folding=False, input_names=["x"], output_names=["logits"])
        except Exception as e:  # newer transformers' masks (aten::diff): torch.export's exporter
            print(name, "TorchScript exporter failed (%s): torch.export" % str(e).splitlines()[0], file=sys.stderr)
            torch.onnx.export(model, (batches[0][0],), path, opset_version=18, dynamo=True, optimize=False,
                              input_names=["x"], output_names=["logits"], external_data=False)
        for i, (x, y) in enumerate(batches):
            d = os.path.join(out, name, "test_data_set_%d" % i)
            os.makedirs(d, exist_ok=True)
            for k, t in enumerate((x, y)):
                with open(os.path.join(d, "input_%d.pb" % k), "wb") as f:
                    f.write(numpy_helper.from_array(t.numpy()).SerializeToString())
        ref = {}
        model.load_state_dict(init)
        model.train()
        loss = loss_of(model, *batches[0])
        loss.backward()
        ref["loss"] = np.array(loss.item(), np.float32)
        for k, p in model.named_parameters():
            if p.grad is not None:
                ref["grad:" + k] = p.grad.numpy()
        ref["sgd"] = curve(model, init, batches, lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9))
        ref["adamw"] = curve(model, init, batches, lambda p: torch.optim.AdamW(p, lr=1e-3, weight_decay=0.01))
        np.savez_compressed(os.path.join(out, name + ".ref.npz"), **ref)
        print(name, "loss %.6f" % ref["loss"], "grads", sum(k.startswith("grad:") for k in ref))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "training"), sys.argv[2:])
