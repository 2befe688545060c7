"""ltprobe.py: cuBLASLt through ctypes for the probes of this folder
(probe-bgrad.py, probe-emu.py): the handle, a workspace, descriptor and
layout helpers, the first heuristic algorithm, and a CUDA-event timer.
Needs PyTorch (allocation, streams, events) on the GPU machine."""
import ctypes

import torch

L = ctypes.CDLL("libcublasLt.so.13")
R16F, R32F = 2, 0
WS = 64 << 20


class Heur(ctypes.Structure):
    _fields_ = [("algo", ctypes.c_uint64 * 8), ("ws", ctypes.c_size_t), ("state", ctypes.c_int),
                ("waves", ctypes.c_float), ("reserved", ctypes.c_int * 4)]


def ck(s, what):
    if s != 0:
        raise RuntimeError("%s: status %d" % (what, s))


handle = ctypes.c_void_p()
ck(L.cublasLtCreate(ctypes.byref(handle)), "create")
workspace = torch.empty(WS, dtype=torch.uint8, device="cuda")


def setd(desc, attr, value, ctype=ctypes.c_int32):
    v = ctype(value)
    ck(L.cublasLtMatmulDescSetAttribute(desc, attr, ctypes.byref(v), ctypes.sizeof(v)), "set %d" % attr)


def layout(t, rows, cols, ld):
    lay = ctypes.c_void_p()
    ck(L.cublasLtMatrixLayoutCreate(ctypes.byref(lay), t, ctypes.c_uint64(rows), ctypes.c_uint64(cols),
                                    ctypes.c_int64(ld)), "layout")
    return lay


def heuristic(desc, a, b, c, d):
    """The heuristic's first algorithm for these descriptors, or None."""
    pref = ctypes.c_void_p()
    ck(L.cublasLtMatmulPreferenceCreate(ctypes.byref(pref)), "pref")
    w = ctypes.c_uint64(WS)
    ck(L.cublasLtMatmulPreferenceSetAttribute(pref, 1, ctypes.byref(w), ctypes.sizeof(w)), "pref ws")
    res = (Heur * 4)()
    found = ctypes.c_int(0)
    s = L.cublasLtMatmulAlgoGetHeuristic(handle, desc, a, b, c, d, pref, 4, res, ctypes.byref(found))
    return res[0] if s == 0 and found.value else None


def matmul(desc, alg, alpha, A, la, B, lb, beta, D, ld):
    """D = alpha op(A) op(B) + beta D on the current stream (A, B, D: tensors)."""
    ck(L.cublasLtMatmul(handle, desc, ctypes.byref(alpha), ctypes.c_void_p(A.data_ptr()), la,
                        ctypes.c_void_p(B.data_ptr()), lb, ctypes.byref(beta),
                        ctypes.c_void_p(D.data_ptr()), ld, ctypes.c_void_p(D.data_ptr()), ld,
                        ctypes.byref(alg.algo), ctypes.c_void_p(workspace.data_ptr()),
                        ctypes.c_size_t(WS), ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)),
       "matmul")


def timed(fn, reps=200, warmup=10):
    """Microseconds a call of fn, averaged over reps after warmup calls."""
    for _ in range(warmup):
        fn()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(reps):
        fn()
    e.record()
    torch.cuda.synchronize()
    return s.elapsed_time(e) * 1000 / reps


def timed_matmul(desc, A, la, B, lb, D, ld, **timing):
    """Microseconds of D = op(A) op(B) with the heuristic's first algorithm,
    or None where it offers none."""
    alg = heuristic(desc, la, lb, ld, ld)
    if alg is None:
        return None
    alpha, beta = ctypes.c_float(1), ctypes.c_float(0)
    us = timed(lambda: matmul(desc, alg, alpha, A, la, B, lb, beta, D, ld), **timing)
    torch.cuda.synchronize()
    return us
