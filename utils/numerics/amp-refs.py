"""One AMP gradient of full-size suite models at CPU-sized inputs, as references
for tc's fp16 train step (docs/training.md, session 55: how nfnet_l0's weight
standardization and esm2's rotary tables were found):

    python3 utils/numerics/amp-refs.py OUTDIR [NAME...]     # where torch, timm, transformers are
    python3 utils/numerics/amp-compare.py OUTDIR NAME [tc-opt flags...]

For each model: OUTDIR/NAME.onnx (TorchScript exporter, dropouts off),
OUTDIR/NAME/test_data_set_0 (the batch and labels), and OUTDIR/NAME.ref.npz:
PyTorch fp32 autograd's loss and gradients ("grad:" + parameter) and PyTorch
CPU autocast(float16)'s with the loss scaled by S ("amp:" + parameter,
unscaled), so tc's error can be read against autocast's own. Batch-norm nets
at these batches are too noisy to compare (both sides' gradients are
percents off); nets without batch statistics compare well."""
import os, sys, torch, numpy as np
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "models"))
from training_models import Logits, loss_of as _loss, perturb, no_dropout
from onnx import numpy_helper
S = 1024.0

def models():
    import timm, torchvision
    import transformers as tr
    g = torch.Generator().manual_seed(0)
    img = lambda b, s: (lambda: torch.randn(b, 3, s, s, generator=g))
    lab = lambda b: (lambda: torch.randint(0, 10, (b,), generator=g))
    for name in ["nfnet_l0", "repvgg_a2"]:
        torch.manual_seed(0)
        yield name, timm.create_model(name, num_classes=10), img(4, 64), lab(4)
    torch.manual_seed(0)
    yield "efficientnet_v2_s", torchvision.models.efficientnet_v2_s(num_classes=10), img(4, 64), lab(4)
    torch.manual_seed(0)
    cfg = tr.EsmConfig(vocab_size=33, hidden_size=480, num_hidden_layers=12, num_attention_heads=20, intermediate_size=1920,
                       max_position_embeddings=1026, position_embedding_type="rotary", pad_token_id=1, mask_token_id=32,
                       hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, token_dropout=False, attn_implementation="eager")
    yield "esm2_t12", tr.EsmForMaskedLM(cfg), (lambda: torch.randint(4, 30, (2, 32), generator=g)), (lambda: torch.randint(4, 30, (2, 32), generator=g))

def main(out, only):
    os.makedirs(out, exist_ok=True)
    for name, m, mk_x, mk_y in models():
        if only and name not in only:
            continue
        torch.manual_seed(0)
        if hasattr(m, "config"):
            m.config.use_cache = False
        model = Logits(no_dropout(m) or m, False)
        perturb(model)
        x, y = mk_x(), mk_y()
        init = {k: v.detach().clone() for k, v in model.state_dict().items()}
        path = os.path.join(out, name + ".onnx")
        model.eval()
        torch.onnx.export(model, (x,), path, opset_version=17, dynamo=False, do_constant_folding=False,
                          input_names=["x"], output_names=["logits"])
        d = os.path.join(out, name, "test_data_set_0")
        os.makedirs(d, exist_ok=True)
        for k, t in enumerate((x, y)):
            open(os.path.join(d, "input_%d.pb" % k), "wb").write(numpy_helper.from_array(t.numpy()).SerializeToString())
        ref = {}
        model.load_state_dict(init); model.train()
        loss = _loss(model(x), y); loss.backward()
        ref["loss"] = np.array(loss.item(), np.float32)
        for k, p in model.named_parameters():
            if p.grad is not None:
                ref["grad:" + k] = p.grad.numpy().copy()
        model.zero_grad(set_to_none=True)
        model.load_state_dict(init); model.train()
        with torch.autocast("cpu", dtype=torch.float16):
            logits = model(x)
        loss = _loss(logits.float(), y)
        (loss * S).backward()
        ref["amploss"] = np.array(loss.item(), np.float32)
        for k, p in model.named_parameters():
            if p.grad is not None:
                ref["amp:" + k] = (p.grad / S).numpy()
        np.savez_compressed(os.path.join(out, name + ".ref.npz"), **ref)
        print(name, "loss %.6f amp %.6f" % (ref["loss"], ref["amploss"]), flush=True)

main(sys.argv[1], sys.argv[2:])
