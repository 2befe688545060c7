// A stand-in libcudnn.so.9 for testing the CUDA runtime's cuDNN path without
// a GPU, beside fake_libcuda.c (device memory is host memory): the legacy
// convolution API as cuDNN defines it (strided tensors, NCHW or NHWC
// filters, cross-correlation, pads, strides, dilations, groups;
// cudnnAddTensor with a broadcast bias), f32/f16/bf16 accumulating in
// double, naively. Checks the runtime's descriptor
// numbers against the reference executor. Enum values as cudnn.h has them.
#include "fake_half.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// CUDNN_DATA_HALF 2, CUDNN_DATA_BFLOAT16 9
#define get(p, t, i) getAs(p, t, 2, 9, i)
#define put(p, t, i, v) putAs(p, t, 2, 9, i, v)

typedef struct { int type, nb, dims[5], strides[5]; } Tensor; // tensors and filters
typedef struct { int n, pads[3], strides[3], dil[3], groups, math; } Conv;
typedef struct { int algo, status; float time; size_t memory; int determinism, mathType, reserved[3]; } Perf;

static int handle;
// cuDNN 9.19.0 unless FAKE_CUDNN_VERSION says otherwise (a major mismatch test).
size_t cudnnGetVersion(void) {
  const char *v = getenv("FAKE_CUDNN_VERSION");
  return v ? strtoul(v, NULL, 10) : 91900;
}
int cudnnCreate(void **h) { *h = &handle; return 0; }
int cudnnDestroy(void *h) { return 0; }
int cudnnSetStream(void *h, void *s) { return 0; }
const char *cudnnGetErrorString(int s) { return s ? "CUDNN_STATUS_BAD_PARAM" : "CUDNN_STATUS_SUCCESS"; }
static int create(void **d, size_t n) { *d = calloc(1, n); return 0; }
int cudnnCreateTensorDescriptor(void **d) { return create(d, sizeof(Tensor)); }
int cudnnCreateFilterDescriptor(void **d) { return create(d, sizeof(Tensor)); }
int cudnnCreateConvolutionDescriptor(void **d) { return create(d, sizeof(Conv)); }
int cudnnDestroyTensorDescriptor(void *d) { free(d); return 0; }
int cudnnDestroyFilterDescriptor(void *d) { free(d); return 0; }
int cudnnDestroyConvolutionDescriptor(void *d) { free(d); return 0; }
int cudnnSetTensorNdDescriptor(Tensor *t, int type, int nb, const int *dims, const int *strides) {
  if ((type != 0 && type != 2 && type != 9) || nb < 4 || nb > 5)
    return 3;
  t->type = type, t->nb = nb;
  memcpy(t->dims, dims, nb * sizeof(int));
  memcpy(t->strides, strides, nb * sizeof(int));
  return 0;
}
// Filters: K, C, k... dims; the bytes KCRS (format 0, NCHW) or KRSC (1, NHWC).
int cudnnSetFilterNdDescriptor(Tensor *t, int type, int format, int nb, const int *dims) {
  if ((type != 0 && type != 2 && type != 9) || format > 1 || nb < 4 || nb > 5)
    return 3;
  t->type = type, t->nb = nb;
  memcpy(t->dims, dims, nb * sizeof(int));
  int inner = 1;
  if (format == 1)
    t->strides[1] = 1, inner = dims[1];
  for (int i = nb; i-- > (format == 1 ? 2 : 1);)
    t->strides[i] = inner, inner *= dims[i];
  t->strides[0] = inner;
  return 0;
}
int cudnnSetConvolutionNdDescriptor(Conv *c, int n, const int *pads, const int *strides,
                                    const int *dil, int mode, int compute) {
  if (mode != 1 || compute != 0 || n < 2 || n > 3)
    return 3;
  c->n = n, c->groups = 1;
  memcpy(c->pads, pads, n * sizeof(int));
  memcpy(c->strides, strides, n * sizeof(int));
  memcpy(c->dil, dil, n * sizeof(int));
  return 0;
}
int cudnnSetConvolutionGroupCount(Conv *c, int g) { c->groups = g; return 0; }
int cudnnSetConvolutionMathType(Conv *c, int m) { c->math = m; return 0; }
int cudnnGetConvolutionNdForwardOutputDim(Conv *c, Tensor *x, Tensor *w, int nb, int *out) {
  out[0] = x->dims[0], out[1] = w->dims[0];
  for (int i = 0; i < c->n; ++i)
    out[i + 2] = (x->dims[i + 2] + 2 * c->pads[i] - c->dil[i] * (w->dims[i + 2] - 1) - 1) / c->strides[i] + 1;
  return 0;
}
int cudnnGetConvolutionForwardAlgorithm_v7(void *h, Tensor *x, Tensor *w, Conv *c, Tensor *y,
                                           int requested, int *returned, Perf *perf) {
  memset(perf, 0, sizeof *perf);
  perf->algo = 1, perf->mathType = c->math;
  if (x->type == 0 && c->math != 3) // f32: the runtime must ask for FMA (no TF32)
    perf->status = 3;
  *returned = 1;
  return 0;
}
int cudnnGetConvolutionForwardWorkspaceSize(void *h, Tensor *x, Tensor *w, Conv *c, Tensor *y,
                                            int algo, size_t *bytes) {
  *bytes = 1024;
  return 0;
}
// 4-D as 5-D with D = 1: dims and strides.
static void dims5(const Tensor *t, int d[5], int s[5]) {
  d[0] = t->dims[0], d[1] = t->dims[1], s[0] = t->strides[0], s[1] = t->strides[1];
  d[2] = t->nb == 5 ? t->dims[2] : 1, s[2] = t->nb == 5 ? t->strides[2] : 0;
  d[3] = t->dims[t->nb - 2], d[4] = t->dims[t->nb - 1];
  s[3] = t->strides[t->nb - 2], s[4] = t->strides[t->nb - 1];
}
#define AT(S, a, b, c, d, e) ((a) * S[0] + (b) * S[1] + (c) * S[2] + (d) * S[3] + (e) * S[4])
int cudnnConvolutionForward(void *h, const float *alpha, Tensor *xd, const void *x, Tensor *wd,
                            const void *w, Conv *c, int algo, void *ws, size_t wsBytes,
                            const float *beta, Tensor *yd, void *y) {
  if (!ws || wsBytes < 1024)
    return 3;
  int X[5], W[5], Y[5], XS[5], WS[5], YS[5], p[3] = {0}, s[3] = {1, 1, 1}, dl[3] = {1, 1, 1};
  dims5(xd, X, XS), dims5(wd, W, WS), dims5(yd, Y, YS);
  int off = 3 - c->n; // 2-D: the D axis keeps pad 0, stride 1
  for (int i = 0; i < c->n; ++i)
    p[i + off] = c->pads[i], s[i + off] = c->strides[i], dl[i + off] = c->dil[i];
  int cg = W[1], kg = Y[1] / c->groups;
  for (int n = 0; n < Y[0]; ++n)
    for (int k = 0; k < Y[1]; ++k)
      for (int od = 0; od < Y[2]; ++od)
        for (int oh = 0; oh < Y[3]; ++oh)
          for (int ow = 0; ow < Y[4]; ++ow) {
            double acc = 0;
            for (int ci = 0; ci < cg; ++ci)
              for (int a = 0; a < W[2]; ++a)
                for (int b = 0; b < W[3]; ++b)
                  for (int e = 0; e < W[4]; ++e) {
                    int id = od * s[0] - p[0] + a * dl[0], ih = oh * s[1] - p[1] + b * dl[1],
                        iw = ow * s[2] - p[2] + e * dl[2];
                    if (id < 0 || id >= X[2] || ih < 0 || ih >= X[3] || iw < 0 || iw >= X[4])
                      continue;
                    int cx = (k / kg) * cg + ci;
                    acc += (double)get(x, xd->type, AT(XS, n, cx, id, ih, iw)) *
                           get(w, wd->type, AT(WS, k, ci, a, b, e));
                  }
            int64_t o = AT(YS, n, k, od, oh, ow);
            put(y, yd->type, o, *alpha * (float)acc + (*beta != 0 ? *beta * get(y, yd->type, o) : 0));
          }
  fprintf(stderr, "fake cudnnConvolutionForward groups=%d\n", c->groups);
  return 0;
}
int cudnnAddTensor(void *h, const float *alpha, Tensor *bd, const void *b, const float *beta,
                   Tensor *yd, void *y) {
  int Y[5], YS[5];
  dims5(yd, Y, YS);
  for (int i = 0; i < bd->nb; ++i)
    if (bd->dims[i] != (i == 1 ? Y[1] : 1))
      return 3; // a per-channel bias only, as the runtime adds it
  for (int n = 0; n < Y[0]; ++n)
    for (int k = 0; k < Y[1]; ++k)
      for (int d = 0; d < Y[2]; ++d)
        for (int h = 0; h < Y[3]; ++h)
          for (int w = 0; w < Y[4]; ++w) {
            int64_t o = AT(YS, n, k, d, h, w);
            put(y, yd->type, o, *alpha * get(b, bd->type, k) + *beta * get(y, yd->type, o));
          }
  return 0;
}
