"""Damaged and mismatched variants of a model checkpoint: bad-checkpoints.py CKPT OUTDIR."""
import os
import shutil
import sys

from safetensors.numpy import load_file, save_file

src, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
opt = src.replace(".safetensors", ".optimizer.safetensors")
t = load_file(src)
variants = {
    "missing": {k: v for k, v in t.items() if k != "fc.bias"},
    "extra": dict(t, stray=t["fc.bias"]),
    "shape": dict(t, **{"fc.weight": t["fc.weight"].T.copy()}),
}
for name, tensors in variants.items():
    save_file(tensors, os.path.join(out, name + ".safetensors"))
    shutil.copy(opt, os.path.join(out, name + ".optimizer.safetensors"))
data = open(src, "rb").read()
open(os.path.join(out, "truncated.safetensors"), "wb").write(data[: len(data) // 2])
shutil.copy(opt, os.path.join(out, "truncated.optimizer.safetensors"))
