"""probe-bgrad.py: whether cuBLASLt's bias-gradient epilogue (BGRADB) can
take a train step's weight-gradient GEMMs as tc emits them, and what it
costs (issue 35: the bias gradients' column sums, 589 us of roberta_base's
step). Run on the GPU machine (PyTorch there allocates and times):

    python3 utils/gpu-session/probe-bgrad.py

Per shape (T tokens, `out` x `in` weight): dW[out, in] = dY^T X, dY [T, out]
and X [T, in] f16, as CublasLtCall lays it out (cuBLASLt's A = X, its B = dY
transposed: bias = columns of its D = out, summed over k = T: BGRADB), D in
f16 and in f32 (GemmDesc::castF32). Prints, per variant, whether the
heuristic offers an algorithm, the GEMM's time alone and with the epilogue,
torch's dY.sum(0) time, and the bias gradient's largest error against
torch's f32 sum."""
import ctypes

import torch

L = ctypes.CDLL("libcublasLt.so.13")
COMPUTE_32F, R16F, R32F = 68, 2, 0
TRANSA, TRANSB, EPILOGUE, BIAS_POINTER, BIAS_DATA_TYPE = 3, 4, 7, 8, 26
DEFAULT, BGRADB = 1, 512
N, T = 0, 1


class Heur(ctypes.Structure):
    _fields_ = [("algo", ctypes.c_uint64 * 8), ("ws", ctypes.c_size_t), ("state", ctypes.c_int),
                ("waves", ctypes.c_float), ("reserved", ctypes.c_int * 4)]


def ck(s, what):
    if s != 0:
        raise RuntimeError("%s: status %d" % (what, s))


h = ctypes.c_void_p()
ck(L.cublasLtCreate(ctypes.byref(h)), "create")
WS = 32 << 20
ws = torch.empty(WS, dtype=torch.uint8, device="cuda")


def setd(desc, attr, value, ctype=ctypes.c_int32):
    v = ctype(value)
    ck(L.cublasLtMatmulDescSetAttribute(desc, attr, ctypes.byref(v), ctypes.sizeof(v)), "set %d" % attr)


def layout(t, rows, cols, ld):
    l = ctypes.c_void_p()
    ck(L.cublasLtMatrixLayoutCreate(ctypes.byref(l), t, ctypes.c_uint64(rows), ctypes.c_uint64(cols),
                                    ctypes.c_int64(ld)), "layout")
    return l


def timed(fn, reps=200):
    for _ in range(10):
        fn()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(reps):
        fn()
    e.record()
    torch.cuda.synchronize()
    return s.elapsed_time(e) * 1000 / reps


def probe(tok, out, inn, dout, epi):
    dY = torch.randn(tok, out, device="cuda", dtype=torch.float16)
    X = torch.randn(tok, inn, device="cuda", dtype=torch.float16)
    D = torch.empty(out, inn, device="cuda", dtype=dout)
    db = torch.zeros(out, device="cuda", dtype=dout)
    desc = ctypes.c_void_p()
    ck(L.cublasLtMatmulDescCreate(ctypes.byref(desc), COMPUTE_32F, R32F), "desc")
    setd(desc, TRANSA, N)
    setd(desc, TRANSB, T)
    setd(desc, EPILOGUE, epi)
    if epi != DEFAULT:
        p = ctypes.c_void_p(db.data_ptr())
        ck(L.cublasLtMatmulDescSetAttribute(desc, BIAS_POINTER, ctypes.byref(p), ctypes.sizeof(p)), "bias")
    td = R32F if dout == torch.float32 else R16F
    a = layout(R16F, inn, tok, inn)   # X [T, in] row-major: col-major in x T
    b = layout(R16F, out, tok, out)   # dY [T, out]: col-major out x T, transposed
    d = layout(td, inn, out, inn)     # dW [out, in]: col-major in x out
    pref = ctypes.c_void_p()
    ck(L.cublasLtMatmulPreferenceCreate(ctypes.byref(pref)), "pref")
    w = ctypes.c_uint64(WS)
    ck(L.cublasLtMatmulPreferenceSetAttribute(pref, 1, ctypes.byref(w), ctypes.sizeof(w)), "pref ws")
    res = (Heur * 4)()
    found = ctypes.c_int(0)
    s = L.cublasLtMatmulAlgoGetHeuristic(h, desc, a, b, d, d, pref, 4, res, ctypes.byref(found))
    if s != 0 or found.value == 0:
        return None
    alpha, beta = ctypes.c_float(1), ctypes.c_float(0)
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)

    def run():
        ck(L.cublasLtMatmul(h, desc, ctypes.byref(alpha), ctypes.c_void_p(X.data_ptr()), a,
                            ctypes.c_void_p(dY.data_ptr()), b, ctypes.byref(beta),
                            ctypes.c_void_p(D.data_ptr()), d, ctypes.c_void_p(D.data_ptr()), d,
                            ctypes.byref(res[0].algo), ctypes.c_void_p(ws.data_ptr()),
                            ctypes.c_size_t(WS), stream), "matmul")
    us = timed(run)
    torch.cuda.synchronize()
    werr = (D.float() - dY.float().t() @ X.float()).abs().max().item()
    berr = (db.float() - dY.float().sum(0)).abs().max().item() if epi != DEFAULT else 0.0
    return us, werr, berr


print("%-22s %-5s %-7s %10s %10s %10s" % ("T x out x in", "D", "epi", "us", "dW err", "db err"))
for tok, out, inn in [(1024, 768, 768), (1024, 3072, 768), (1024, 768, 3072), (4096, 768, 768),
                      (6304, 768, 768), (6304, 3072, 768), (4096, 4096, 4096)]:
    dY = torch.randn(tok, out, device="cuda", dtype=torch.float16)
    sum_us = timed(lambda: dY.sum(0, dtype=torch.float32))
    for dout in (torch.float16, torch.float32):
        for name, epi in (("none", DEFAULT), ("BGRADB", BGRADB)):
            r = probe(tok, out, inn, dout, epi)
            tag = "%dx%dx%d" % (tok, out, inn)
            dn = "f16" if dout == torch.float16 else "f32"
            if r is None:
                print("%-22s %-5s %-7s %10s" % (tag, dn, name, "no algo"))
            else:
                print("%-22s %-5s %-7s %10.1f %10.3g %10.3g" % (tag, dn, name, r[0], r[1], r[2]))
    print("%-22s torch dY.sum(0) f32: %.1f us" % ("", sum_us))
