"""probe-emu.py: whether an f32 GEMM of an fp32 train step can run faster than
cuBLASLt's plain f32 kernels at f32-level accuracy (issue 35's fp32 floor:
vit_b_16's step is 99% f32 GEMMs, 0.97x torch.compile, both on the same FFMA
kernels). Run on the GPU machine (PyTorch there allocates and times):

    python3 utils/gpu-session/probe-emu.py

Per shape (M x N x K, row-major A [M, K] times B [K, N], all f32) and
compute type (COMPUTE_32F; FAST_TF32, which is NOT f32-accurate and is shown
only as a bound; EMULATED_16BFX9 with the EAGER emulation strategy: three
bf16 parts a value, nine products), prints whether the heuristic offers an
algorithm, its time, and the largest error relative to the f64 product's
largest magnitude (f32's own rounding is ~1e-7 there)."""
import ctypes

import torch

from ltprobe import L, R32F, ck, layout, timed_matmul

COMPUTES = (("f32", 68), ("tf32", 77), ("bf16x9", 78))
EMULATION_DESCRIPTOR, EMU_STRATEGY, EAGER = 38, 0, 2

emu = ctypes.c_void_p()
have_emu = L.cublasLtEmulationDescCreate(ctypes.byref(emu)) == 0
if have_emu:
    v = ctypes.c_int32(EAGER)
    ck(L.cublasLtEmulationDescSetAttribute(emu, EMU_STRATEGY, ctypes.byref(v), ctypes.sizeof(v)), "emu strategy")


def probe(m, n, k, compute):
    A = torch.randn(m, k, device="cuda")
    B = torch.randn(k, n, device="cuda")
    D = torch.empty(m, n, device="cuda")
    desc = ctypes.c_void_p()
    ck(L.cublasLtMatmulDescCreate(ctypes.byref(desc), compute, R32F), "desc")
    if compute == 78 and have_emu:
        p = ctypes.c_void_p(emu.value)
        ck(L.cublasLtMatmulDescSetAttribute(desc, EMULATION_DESCRIPTOR, ctypes.byref(p), ctypes.sizeof(p)), "emu")
    # Row-major D = A B is column-major D^T = B^T A^T: cuBLASLt's A is B (n x k), its B is A (k x m).
    la, lb, ld = layout(R32F, n, k, n), layout(R32F, k, m, k), layout(R32F, n, m, n)
    us = timed_matmul(desc, B, la, A, lb, D, ld, reps=50, warmup=5)
    if us is None:
        return None
    ref = A.double() @ B.double()
    err = ((D.double() - ref).abs().max() / ref.abs().max()).item()
    return us, err


print("emulation descriptor:", "yes" if have_emu else "no", "| device:", torch.cuda.get_device_name())
print("%-20s %-7s %10s %10s %9s" % ("M x N x K", "compute", "us", "rel err", "TFLOP/s"))
# vit_b_16 at batch 32 (6304 tokens): qkv, proj, fc1, fc2 forward; their weight gradients (K = tokens).
for m, n, k in [(6304, 2304, 768), (6304, 768, 768), (6304, 3072, 768), (6304, 768, 3072),
                (768, 3072, 6304), (3072, 768, 6304), (4096, 4096, 4096)]:
    for name, c in COMPUTES:
        r = probe(m, n, k, c)
        tag = "%dx%dx%d" % (m, n, k)
        if r is None:
            print("%-20s %-7s %10s" % (tag, name, "no algo"))
        else:
            print("%-20s %-7s %10.1f %10.2e %9.1f" % (tag, name, r[0], r[1], 2 * m * n * k / r[0] / 1e6))
