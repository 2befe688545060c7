// A stand-in libcublasLt.so.13 for testing the CUDA runtime's cuBLASLt path
// without a GPU, beside fake_libcuda.c (device memory is host memory): it
// keeps the descriptors' attributes and computes cublasLtMatmul as cuBLASLt
// defines it (column-major, op(A) per TRANSA/TRANSB, strided batches, the
// BIAS/RELU epilogues), f32/f16/bf16 (accumulating in double, rounding
// once) and f64 (CUBLAS_COMPUTE_64F with double alpha/beta; no epilogue, as
// cuBLASLt's epilogues are not given f64), naively. So the runtime's mapping of
// row-major ONNX MatMul/Gemm onto cuBLASLt (the swapped operands, leading
// dims, batch strides, bias) is checked against the reference executor.
// Enum values as cublasLt.h has them (CUDA 13).
#include "fake_half.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kTransA = 3, kTransB = 4, kEpilogue = 7, kBiasPointer = 8 };
enum { kBatchCount = 5, kBatchStride = 6 };
enum { kRelu = 2, kBias = 4 };
typedef struct { int transa, transb, epilogue, f64; const void *bias; } Desc;
typedef struct { int type; uint64_t rows, cols; int64_t ld; int32_t batch; int64_t stride; } Layout;
typedef struct { uint64_t data[8]; } Algo;
// CUDA_R_16F 2, CUDA_R_16BF 14
// CUDA_R_64F 1: doubles, read and written whole.
#define get(p, t, i) ((t) == 1 ? ((const double *)(p))[i] : getAs(p, t, 2, 14, i))
#define put(p, t, i, v) ((t) == 1 ? (void)(((double *)(p))[i] = (v)) : putAs(p, t, 2, 14, i, (float)(v)))
typedef struct { Algo algo; size_t workspaceSize; int state; float waves; int reserved[4]; } Result;

static int handle;
// cuBLASLt 13.1.0 unless FAKE_CUBLASLT_VERSION says otherwise.
size_t cublasLtGetVersion(void) {
  const char *v = getenv("FAKE_CUBLASLT_VERSION");
  return v ? strtoul(v, NULL, 10) : 130100;
}
int cublasLtCreate(void **h) { *h = &handle; return 0; }
int cublasLtDestroy(void *h) { return 0; }
const char *cublasLtGetStatusName(int s) { return s ? "CUBLAS_STATUS_NOT_SUPPORTED" : "CUBLAS_STATUS_SUCCESS"; }
int cublasLtMatmulDescCreate(void **d, int compute, int scale) {
  Desc *x = calloc(1, sizeof(Desc));
  x->epilogue = 1;
  *d = x;
  // CUBLAS_COMPUTE_32F or _32F_FAST_TF32 (--allow-tf32=all; computed in
  // f32 here), CUDA_R_32F; CUBLAS_COMPUTE_64F, CUDA_R_64F; else NOT_SUPPORTED.
  x->f64 = compute == 70 && scale == 1;
  return ((compute == 68 || compute == 77) && scale == 0) || x->f64 ? 0 : 15;
}
int cublasLtMatmulDescDestroy(void *d) { free(d); return 0; }
int cublasLtMatmulDescSetAttribute(void *d, int attr, const void *buf, size_t n) {
  Desc *x = d;
  if (attr == kTransA) memcpy(&x->transa, buf, 4);
  else if (attr == kTransB) memcpy(&x->transb, buf, 4);
  else if (attr == kEpilogue) memcpy(&x->epilogue, buf, 4);
  else if (attr == kBiasPointer) memcpy(&x->bias, buf, sizeof(void *));
  else return 15;
  return 0;
}
int cublasLtMatrixLayoutCreate(void **l, int type, uint64_t rows, uint64_t cols, int64_t ld) {
  Layout *x = calloc(1, sizeof(Layout));
  x->type = type, x->rows = rows, x->cols = cols, x->ld = ld, x->batch = 1;
  *l = x;
  return (type == 0 || type == 1 || type == 2 || type == 14) && ld >= (int64_t)rows ? 0 : 7; // INVALID_VALUE
}
int cublasLtMatrixLayoutDestroy(void *l) { free(l); return 0; }
int cublasLtMatrixLayoutSetAttribute(void *l, int attr, const void *buf, size_t n) {
  Layout *x = l;
  if (attr == kBatchCount) memcpy(&x->batch, buf, 4);
  else if (attr == kBatchStride) memcpy(&x->stride, buf, 8);
  else return 15;
  return 0;
}
static int pref;
int cublasLtMatmulPreferenceCreate(void **p) { *p = &pref; return 0; }
int cublasLtMatmulPreferenceDestroy(void *p) { return 0; }
int cublasLtMatmulPreferenceSetAttribute(void *p, int attr, const void *buf, size_t n) { return 0; }
// FAKE_CUBLASLT_NO_F32_D: no algorithm for an f32 D from half A/B;
// FAKE_CUBLASLT_NO_EPILOGUE: none for a bias / ReLU / GELU epilogue (a
// cuBLASLt that lacks one: the runtime must fall back, not go to the host).
int cublasLtMatmulAlgoGetHeuristic(void *h, Desc *op, void *a, void *b, void *c, void *d, void *p,
                                   int requested, Result *r, int *count) {
  memset(r, 0, sizeof *r);
  Layout *la = a, *ld = d;
  if ((getenv("FAKE_CUBLASLT_NO_F32_D") && ld->type == 0 && la->type != 0) ||
      (getenv("FAKE_CUBLASLT_NO_EPILOGUE") && op->epilogue != 1)) {
    *count = 0;
    return 15; // NOT_SUPPORTED
  }
  *count = 1;
  return 0;
}
int cublasLtMatmul(void *h, Desc *op, const void *alpha, const void *A, Layout *a, const void *B,
                   Layout *b, const void *beta, const void *C, Layout *c, void *D, Layout *d,
                   const Algo *algo, void *ws, size_t wsBytes, void *stream) {
  uint64_t m = op->transa ? a->cols : a->rows, k = op->transa ? a->rows : a->cols;
  uint64_t n = op->transb ? b->rows : b->cols;
  if (d->rows != m || d->cols != n || (op->transb ? b->cols : b->rows) != k)
    return 7;
  if (op->epilogue & ~(1 | kRelu | kBias)) // GELU: not here
    return 15;
  // A and B of one type; C and D theirs, or f32 from halves (a folded cast to f32).
  if (a->type != b->type || c->type != d->type ||
      (a->type != d->type && !(d->type == 0 && (a->type == 2 || a->type == 14))))
    return 15;
  int t = a->type, td = d->type;
  // The scale type is the compute type's: f64 operands only with COMPUTE_64F, no epilogue.
  if ((t == 1) != op->f64 || (op->f64 && op->epilogue != 1))
    return 15;
  double al = op->f64 ? *(const double *)alpha : *(const float *)alpha;
  double be = op->f64 ? *(const double *)beta : *(const float *)beta;
  fprintf(stderr, "fake cublasLtMatmul m=%llu n=%llu k=%llu batch=%d epilogue=%d\n",
          (unsigned long long)m, (unsigned long long)n, (unsigned long long)k, d->batch, op->epilogue);
  for (int64_t bt = 0; bt < d->batch; ++bt)
    for (uint64_t j = 0; j < n; ++j)
      for (uint64_t i = 0; i < m; ++i) {
        double s = 0;
        for (uint64_t l = 0; l < k; ++l) {
          double x = get(A, t, op->transa ? bt * a->stride + l + i * a->ld : bt * a->stride + i + l * a->ld);
          double y = get(B, t, op->transb ? bt * b->stride + j + l * b->ld : bt * b->stride + l + j * b->ld);
          s += x * y;
        }
        // f32 and halves: the product rounded to f32 once, then scaled in f32.
        double v = t == 1 ? al * s : (double)((float)al * (float)s);
        if (be != 0)
          v = t == 1 ? v + be * get(C, td, bt * c->stride + i + j * c->ld)
                     : (double)((float)v + (float)be * (float)get(C, td, bt * c->stride + i + j * c->ld));
        if (op->epilogue & kBias)
          v += get(op->bias, td, i);
        if ((op->epilogue & kRelu) && v < 0)
          v = 0;
        put(D, td, bt * d->stride + i + j * d->ld, v);
      }
  return 0;
}
