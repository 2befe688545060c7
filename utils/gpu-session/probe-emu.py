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

L = ctypes.CDLL("libcublasLt.so.13")
R32F = 0
COMPUTES = (("f32", 68), ("tf32", 77), ("bf16x9", 78))
TRANSA, TRANSB, EMULATION_DESCRIPTOR = 3, 4, 38
EMU_STRATEGY, EAGER = 0, 2


class Heur(ctypes.Structure):
    _fields_ = [("algo", ctypes.c_uint64 * 8), ("ws", ctypes.c_size_t), ("state", ctypes.c_int),
                ("waves", ctypes.c_float), ("reserved", ctypes.c_int * 4)]


def ck(s, what):
    if s != 0:
        raise RuntimeError("%s: status %d" % (what, s))


h = ctypes.c_void_p()
ck(L.cublasLtCreate(ctypes.byref(h)), "create")
WS = 64 << 20
ws = torch.empty(WS, dtype=torch.uint8, device="cuda")
emu = ctypes.c_void_p()
have_emu = L.cublasLtEmulationDescCreate(ctypes.byref(emu)) == 0
if have_emu:
    v = ctypes.c_int32(EAGER)
    ck(L.cublasLtEmulationDescSetAttribute(emu, EMU_STRATEGY, ctypes.byref(v), ctypes.sizeof(v)), "emu strategy")


def layout(rows, cols, ld):
    lay = ctypes.c_void_p()
    ck(L.cublasLtMatrixLayoutCreate(ctypes.byref(lay), R32F, ctypes.c_uint64(rows), ctypes.c_uint64(cols),
                                    ctypes.c_int64(ld)), "layout")
    return lay


def timed(fn, reps=50):
    for _ in range(5):
        fn()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(reps):
        fn()
    e.record()
    torch.cuda.synchronize()
    return s.elapsed_time(e) * 1000 / reps


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
    la, lb, ld = layout(n, k, n), layout(k, m, k), layout(n, m, n)
    pref = ctypes.c_void_p()
    ck(L.cublasLtMatmulPreferenceCreate(ctypes.byref(pref)), "pref")
    w = ctypes.c_uint64(WS)
    ck(L.cublasLtMatmulPreferenceSetAttribute(pref, 1, ctypes.byref(w), ctypes.sizeof(w)), "pref ws")
    res = (Heur * 4)()
    found = ctypes.c_int(0)
    s = L.cublasLtMatmulAlgoGetHeuristic(h, desc, la, lb, ld, ld, pref, 4, res, ctypes.byref(found))
    if s != 0 or found.value == 0:
        return None
    alpha, beta = ctypes.c_float(1), ctypes.c_float(0)
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)

    def run():
        ck(L.cublasLtMatmul(h, desc, ctypes.byref(alpha), ctypes.c_void_p(B.data_ptr()), la,
                            ctypes.c_void_p(A.data_ptr()), lb, ctypes.byref(beta),
                            ctypes.c_void_p(D.data_ptr()), ld, ctypes.c_void_p(D.data_ptr()), ld,
                            ctypes.byref(res[0].algo), ctypes.c_void_p(ws.data_ptr()),
                            ctypes.c_size_t(res[0].ws), stream), "matmul")
    us = timed(run)
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
