#!/bin/bash
# The GPU session's kit in two parts that each fit a device call beside the
# working tree (64 MiB in all: the tree is ~20 MiB). Run here, from the
# project root, after `../shared/devkit/kit prepare` (which fills .kit/a and
# .kit/b): .kit/p1 (LLVM, clang-cpp), .kit/p2 (the rest, the LLVM headers) and
# .kit/p3 (libonnx-testdata for utils/conformance.py: carried only by a call
# that runs `jobs.sh conf`; p2 with it passed the limit in session 50). Then the device calls, back to
# back (the machine is given back 30 s after a call):
#   1. carry [.kit/p1]:        bash utils/gpu-session/call1.sh   (unpacks, starts the exports)
#   2. carry [.kit/p2]:        bash utils/gpu-session/call2.sh && bash utils/gpu-session/jobs.sh bert rnn
#   3. ...:                    bash utils/gpu-session/jobs.sh gpt2 llama   (and vit resnet conf prof)
# Each jobs.sh call packs /tmp/res (logs, databases, profiles) into $OUT.
# Session 32 (2026-12-03) ran it so: 30 device-minutes for the five training
# models, CUDA conformance and a profile (docs/training.md).
set -euo pipefail
[ -d .kit/a ] && [ -d .kit/b ] || { echo "run ../shared/devkit/kit prepare first"; exit 2; }
rm -rf .kit/p1 .kit/p2 .kit/p3 && mkdir -p .kit/p1 .kit/p2 .kit/p3
mv .kit/a/libllvm19* .kit/a/libclang-cpp19* .kit/p1/
mv .kit/a/*.deb .kit/b/*.deb .kit/b/llvm-dev.tar.xz .kit/p2/
rm -rf .kit/a .kit/b   # src.tar.xz: call2.sh builds the working tree itself
mv .kit/p2/libonnx-testdata* .kit/p3/ 2>/dev/null || (cd .kit/p3 && apt-get download libonnx-testdata >/dev/null 2>&1)
du -sh .kit/p1 .kit/p2 .kit/p3
git rev-parse --short=10 HEAD > .kit/p2/sha
