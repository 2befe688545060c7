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

from ltprobe import L, R16F, R32F, ck, layout, setd, timed, timed_matmul

COMPUTE_32F = 68
TRANSA, TRANSB, EPILOGUE, BIAS_POINTER = 3, 4, 7, 8
DEFAULT, BGRADB = 1, 512
N, T = 0, 1


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
    us = timed_matmul(desc, X, a, dY, b, D, d)
    if us is None:
        return None
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
