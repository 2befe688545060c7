// A stand-in libcudnn.so.9 for testing the CUDA runtime's cuDNN path without
// a GPU, beside fake_libcuda.c (device memory is host memory): the legacy
// convolution API as cuDNN defines it (strided tensors, NCHW or NHWC
// filters, cross-correlation, pads, strides, dilations, groups; the
// backward-data and backward-filter passes; cudnnAddTensor with a broadcast
// bias), f32/f16/bf16 accumulating in
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
const char *cudnnGetErrorString(int s) {
  return s == 3000 ? "CUDNN_STATUS_NOT_SUPPORTED" : s ? "CUDNN_STATUS_BAD_PARAM" : "CUDNN_STATUS_SUCCESS";
}
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
  // FAKE_CUDNN_WINOGRAD_FIRST: the heuristic rates WINOGRAD_NONFUSED (7)
  // first, then IMPLICIT_PRECOMP_GEMM (1), as cuDNN does for many 3x3
  // convs (an exact conv must not take it; the naive sum below is the same).
  int n = getenv("FAKE_CUDNN_WINOGRAD_FIRST") ? 2 : 1;
  memset(perf, 0, n * sizeof *perf);
  for (int i = 0; i < n; ++i) {
    perf[i].algo = i + 1 == n ? 1 : 7, perf[i].mathType = c->math;
    // f32: the runtime asks for FMA (3, no TF32) or the default math (0,
    // TF32 allowed: --allow-tf32); tensor-op math (1) is not for f32.
    if (x->type == 0 && c->math != 3 && c->math != 0)
      perf[i].status = 3;
  }
  *returned = n;
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
// The backward passes (cudnnConvolutionBackwardData / BackwardFilter) as
// cuDNN documents them: the forward convolution of x by w giving y (the
// descriptors must agree, as for the forward call: x, w and the conv give
// dy's dims), dx = alpha * (the sum of dy through every tap reaching it) +
// beta * dx, dw = alpha * (the sum over n and positions of dy * x) + beta * dw.
static int agrees(Conv *c, Tensor *x, Tensor *w, Tensor *y) {
  int out[5];
  cudnnGetConvolutionNdForwardOutputDim(c, x, w, x->nb, out);
  for (int i = 0; i < x->nb; ++i)
    if (out[i] != y->dims[i])
      return 0;
  return x->dims[1] == w->dims[1] * c->groups && y->dims[1] % c->groups == 0;
}
static int rate(Conv *c, Tensor *x, Tensor *w, Tensor *y, int *returned, Perf *perf) {
  if (!agrees(c, x, w, y))
    return 3; // CUDNN_STATUS_BAD_PARAM
  memset(perf, 0, sizeof *perf);
  perf->algo = 1, perf->mathType = c->math;
  if (x->type == 0 && c->math != 3 && c->math != 0)
    perf->status = 3;
  *returned = 1;
  return 0;
}
int cudnnGetConvolutionBackwardDataAlgorithm_v7(void *h, Tensor *w, Tensor *dy, Conv *c, Tensor *dx,
                                                int requested, int *returned, Perf *perf) {
  return rate(c, dx, w, dy, returned, perf);
}
int cudnnGetConvolutionBackwardFilterAlgorithm_v7(void *h, Tensor *x, Tensor *dy, Conv *c,
                                                  Tensor *dw, int requested, int *returned,
                                                  Perf *perf) {
  return rate(c, x, dw, dy, returned, perf);
}
int cudnnGetConvolutionBackwardDataWorkspaceSize(void *h, Tensor *w, Tensor *dy, Conv *c,
                                                 Tensor *dx, int algo, size_t *bytes) {
  *bytes = 1024;
  return 0;
}
int cudnnGetConvolutionBackwardFilterWorkspaceSize(void *h, Tensor *x, Tensor *dy, Conv *c,
                                                   Tensor *dw, int algo, size_t *bytes) {
  *bytes = 1024;
  return 0;
}
// Accumulates the data (`filter` 0: dx += dy * w) or filter (1: dw += dy *
// x) gradient in doubles over every tap of the forward convolution, then
// writes alpha * sum + beta * old into the result `rd`/`r`.
static int backward(int filter, const float *alpha, Tensor *xd, const void *x, Tensor *wd,
                    const void *w, Tensor *yd, const void *y, Conv *c, void *ws, size_t wsBytes,
                    const float *beta, Tensor *rd, void *r) {
  if (!ws || wsBytes < 1024 || !agrees(c, xd, wd, yd))
    return 3;
  int X[5], W[5], Y[5], XS[5], WS[5], YS[5], R[5], RS[5], p[3] = {0}, s[3] = {1, 1, 1},
                                                          dl[3] = {1, 1, 1};
  dims5(xd, X, XS), dims5(wd, W, WS), dims5(yd, Y, YS), dims5(rd, R, RS);
  int off = 3 - c->n;
  for (int i = 0; i < c->n; ++i)
    p[i + off] = c->pads[i], s[i + off] = c->strides[i], dl[i + off] = c->dil[i];
  int64_t n = (int64_t)R[0] * R[1] * R[2] * R[3] * R[4];
  double *acc = calloc(n, sizeof(double));
  int cg = W[1], kg = Y[1] / c->groups;
  for (int b0 = 0; b0 < Y[0]; ++b0)
    for (int k = 0; k < Y[1]; ++k)
      for (int od = 0; od < Y[2]; ++od)
        for (int oh = 0; oh < Y[3]; ++oh)
          for (int ow = 0; ow < Y[4]; ++ow) {
            double g = get(y, yd->type, AT(YS, b0, k, od, oh, ow));
            for (int ci = 0; ci < cg; ++ci)
              for (int a = 0; a < W[2]; ++a)
                for (int b = 0; b < W[3]; ++b)
                  for (int e = 0; e < W[4]; ++e) {
                    int id = od * s[0] - p[0] + a * dl[0], ih = oh * s[1] - p[1] + b * dl[1],
                        iw = ow * s[2] - p[2] + e * dl[2];
                    if (id < 0 || id >= X[2] || ih < 0 || ih >= X[3] || iw < 0 || iw >= X[4])
                      continue;
                    int cx = (k / kg) * cg + ci;
                    // Dense indices into acc, in the result's dims order.
                    if (filter)
                      acc[(((k * (int64_t)W[1] + ci) * W[2] + a) * W[3] + b) * W[4] + e] +=
                          g * get(x, xd->type, AT(XS, b0, cx, id, ih, iw));
                    else
                      acc[(((b0 * (int64_t)X[1] + cx) * X[2] + id) * X[3] + ih) * X[4] + iw] +=
                          g * get(w, wd->type, AT(WS, k, ci, a, b, e));
                  }
          }
  for (int i0 = 0; i0 < R[0]; ++i0)
    for (int i1 = 0; i1 < R[1]; ++i1)
      for (int i2 = 0; i2 < R[2]; ++i2)
        for (int i3 = 0; i3 < R[3]; ++i3)
          for (int i4 = 0; i4 < R[4]; ++i4) {
            int64_t o = AT(RS, i0, i1, i2, i3, i4);
            double v = acc[(((i0 * (int64_t)R[1] + i1) * R[2] + i2) * R[3] + i3) * R[4] + i4];
            put(r, rd->type, o, *alpha * (float)v + (*beta != 0 ? *beta * get(r, rd->type, o) : 0));
          }
  free(acc);
  fprintf(stderr, "fake cudnnConvolutionBackward%s groups=%d\n", filter ? "Filter" : "Data",
          c->groups);
  return 0;
}
int cudnnConvolutionBackwardData(void *h, const float *alpha, Tensor *wd, const void *w,
                                 Tensor *dyd, const void *dy, Conv *c, int algo, void *ws,
                                 size_t wsBytes, const float *beta, Tensor *dxd, void *dx) {
  return backward(0, alpha, dxd, NULL, wd, w, dyd, dy, c, ws, wsBytes, beta, dxd, dx);
}
int cudnnConvolutionBackwardFilter(void *h, const float *alpha, Tensor *xd, const void *x,
                                   Tensor *dyd, const void *dy, Conv *c, int algo, void *ws,
                                   size_t wsBytes, const float *beta, Tensor *dwd, void *dw) {
  return backward(1, alpha, xd, x, dwd, NULL, dyd, dy, c, ws, wsBytes, beta, dwd, dw);
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

// The graph (backend) API, as far as the runtime's convolution and
// attention graphs use it: generic descriptors keeping their attributes; a
// convolution forward, backward-data or backward-filter op, pointwise ops (add, mul, sub, div, exp, relu,
// tanh, sigmoid, gelu, gelu_tanh, cmp_ge, gen_index, binary_select, log), batched
// matmuls (batch dims broadcast in groups: C's head h reads B's head
// h / (C's heads / B's), as grouped-query attention) and reductions (max,
// add) over strided tensors, virtual ones held in double, pass-by-value
// scalars read from the variant pack's host pointers. The heuristics offer
// two engine configs; the first never finalizes (the runtime must go on to
// the next). FAKE_CUDNN_GRAPH=refuse-fused: plans of graphs of more than a
// convolution and a bias add fail; =refuse: every plan fails; =need-stats:
// plans of attention graphs (matmuls) without softmax's statistics (a log)
// fail, as cuDNN 9.14's did on the H100. FAKE_CUDNN_TENSOR_CORE_ENGINE=N:
// engine N's numerical notes say TENSOR_CORE (f32 without TF32 must not take
// it).
enum { NATTR = 16, ATTRBYTES = 512 };
typedef struct {
  int name, type;
  int64_t count;
  char data[ATTRBYTES];
} Attr;
typedef struct Desc {
  int type, final, nattr;
  Attr attr[NATTR];
  int64_t engine; // engine configs and engines: the index
  struct Desc *graph;
  double *virt; // a virtual tensor's values at execution
} Desc;

// Bytes of one value of attribute type t: BOOLEAN (2) a bool; DATA_TYPE (1),
// FLOAT (4), CONVOLUTION_MODE (7), HEUR_MODE (8), POINTWISE_MODE (14) and
// REDUCTION_OPERATOR_TYPE (18) 4-byte enums or floats; the rest 8.
static int64_t typeBytes(int t) {
  return t == 2 ? 1 : (t == 1 || t == 4 || t == 7 || t == 8 || t == 14 || t == 18) ? 4 : 8;
}
int cudnnBackendCreateDescriptor(int type, Desc **d) {
  *d = calloc(1, sizeof(Desc));
  (*d)->type = type;
  return 0;
}
int cudnnBackendDestroyDescriptor(Desc *d) {
  if (d)
    free(d->virt), free(d);
  return 0;
}
int cudnnBackendSetAttribute(Desc *d, int name, int type, int64_t count, const void *v) {
  if (!d || d->final || count < 0 || count * typeBytes(type) > ATTRBYTES || d->nattr == NATTR)
    return 2000; // CUDNN_STATUS_BAD_PARAM
  Attr *a = &d->attr[d->nattr++];
  a->name = name, a->type = type, a->count = count;
  memcpy(a->data, v, count * typeBytes(type));
  return 0;
}
static Attr *attr(Desc *d, int name) {
  for (int i = d->nattr; i-- > 0;)
    if (d->attr[i].name == name)
      return &d->attr[i];
  return NULL;
}
static Desc *descAttr(Desc *d, int name) {
  Attr *a = attr(d, name);
  return a && a->type == 15 ? *(Desc **)a->data : NULL;
}
static int64_t intAttr(Desc *d, int name, int i) { return ((int64_t *)attr(d, name)->data)[i]; }
static int enumAttr(Desc *d, int name) { return *(int *)attr(d, name)->data; }

// Attributes a descriptor type must have before it finalizes.
static int required(Desc *d, const int *names, int n) {
  for (int i = 0; i < n; ++i)
    if (!attr(d, names[i]))
      return 0;
  return 1;
}
static int graphOps(Desc *plan, Desc ***ops) {
  Desc *g = descAttr(plan, 401)->graph; // the engine config's graph
  Attr *a = attr(g, 801);
  *ops = (Desc **)a->data;
  return (int)a->count;
}
// Operands of a pointwise mode (x; x, b; x, b, t), as cudnn.h numbers them.
static int arity(int mode) {
  if (mode == 601) // binary_select
    return 3;
  if ((mode <= 9 && mode != 4) || (mode >= 300 && mode < 400) || mode == 400 || mode == 401)
    return 2;
  return 1;
}
// A plan's graph is a convolution, perhaps with one add after it.
static int biasOnly(Desc *plan) {
  Desc **ops;
  int n = graphOps(plan, &ops);
  return n == 1 || (n == 2 && enumAttr(descAttr(ops[1], 750), 0) == 0);
}
// A plan's graph has an op of descriptor type `type` (pointwise: of `mode`).
static int hasOp(Desc *plan, int type, int mode) {
  Desc **ops;
  int n = graphOps(plan, &ops);
  for (int k = 0; k < n; ++k)
    if (ops[k]->type == type && (type != 13 || enumAttr(descAttr(ops[k], 750), 0) == mode))
      return 1;
  return 0;
}
int cudnnBackendFinalize(Desc *d) {
  static const int tensor[] = {900, 901, 902, 903, 906}, conv[] = {100, 101, 102, 103, 104, 105, 106},
                   fprop[] = {700, 701, 702, 703, 704, 705}, dgrad[] = {706, 707, 708, 709, 710, 711},
                   wgrad[] = {712, 713, 714, 715, 716, 717}, pw[] = {0, 1}, pwop[] = {750, 751, 753},
                   graph[] = {800, 801}, heur[] = {200, 201}, plan[] = {400, 401},
                   pack[] = {1000, 1001, 1003}, mm[] = {1500}, mmop[] = {1520, 1521, 1522, 1523},
                   red[] = {1600, 1601}, redop[] = {1610, 1611, 1612};
  int ok = 1;
  switch (d->type) {
  case 17:
    ok = required(d, tensor, 5) && attr(d, 902)->count == attr(d, 903)->count;
    break;
  case 1:
    ok = required(d, conv, 7) && enumAttr(d, 101) == 1 /* cross-correlation */;
    break;
  case 10:
    ok = required(d, fprop, 6);
    break;
  case 12:
    ok = required(d, dgrad, 6);
    break;
  case 11:
    ok = required(d, wgrad, 6);
    break;
  case 0:
    ok = required(d, pw, 2);
    break;
  case 13: {
    int mode = enumAttr(descAttr(d, 750), 0);
    ok = required(d, pwop, 3) && (arity(mode) < 2 || attr(d, 752)) && (arity(mode) < 3 || attr(d, 758)) &&
         (mode != 501 || attr(descAttr(d, 750), 9)); // gen_index needs its axis
    break;
  }
  case 18:
    ok = required(d, mm, 1);
    break;
  case 19:
    ok = required(d, mmop, 4);
    break;
  case 21:
    ok = required(d, red, 2);
    break;
  case 22:
    ok = required(d, redop, 3);
    break;
  case 15:
    ok = required(d, graph, 2);
    break;
  case 4:
    ok = required(d, heur, 2);
    break;
  case 5: {
    const char *refuse = getenv("FAKE_CUDNN_GRAPH");
    ok = required(d, plan, 2) && descAttr(d, 401)->engine != 0;
    if (ok && refuse)
      ok = strcmp(refuse, "refuse") && !(strcmp(refuse, "refuse-fused") == 0 && !biasOnly(d)) &&
           !(strcmp(refuse, "need-stats") == 0 && hasOp(d, 19, 0) && !hasOp(d, 13, 15));
    if (!ok && required(d, plan, 2))
      return 3000; // CUDNN_STATUS_NOT_SUPPORTED
    break;
  }
  case 16:
    ok = required(d, pack, 3) && attr(d, 1000)->count == attr(d, 1001)->count;
    break;
  }
  if (!ok)
    return 2000;
  d->final = 1;
  return 0;
}
int cudnnBackendGetAttribute(Desc *d, int name, int type, int64_t requested, int64_t *count, void *out) {
  if (!d->final)
    return 2000;
  if (name == 202) { // heuristic results: two engine configs
    *count = 2;
    for (int64_t i = 0; i < requested && i < 2; ++i) {
      Desc *c = ((Desc **)out)[i];
      c->engine = i, c->graph = descAttr(d, 201), c->final = 1;
    }
    return 0;
  }
  if (name == 402) // the plan's workspace
    return *count = 1, *(int64_t *)out = 2048, 0;
  if (name == 300) // an engine config's engine
    return *count = 1, (*(Desc **)out)->engine = 40 + d->engine, (*(Desc **)out)->final = 1, 0;
  if (name == 1301) // an engine's global index
    return *count = 1, *(int64_t *)out = d->engine, 0;
  if (name == 1303) { // an engine's numerical notes (4-byte enums; TENSOR_CORE 0)
    const char *tc = getenv("FAKE_CUDNN_TENSOR_CORE_ENGINE");
    *count = tc && atoll(tc) == d->engine && requested > 0;
    if (*count)
      *(int *)out = 0;
    return 0;
  }
  return 2000;
}

// A tensor of an execution as a view: dims, strides, its bytes (real ones
// by unique id from the variant pack) or its doubles (virtual).
typedef struct {
  int nb, type;
  int64_t dims[5], strides[5];
  void *data;
  double *virt;
} View;
static View view(Desc *t, Desc *pack) {
  View v = {(int)attr(t, 902)->count, enumAttr(t, 901)};
  int64_t n = 1;
  for (int i = 0; i < v.nb; ++i)
    v.dims[i] = intAttr(t, 902, i), v.strides[i] = intAttr(t, 903, i), n *= v.dims[i];
  Attr *virt = attr(t, 907);
  if (virt && *(char *)virt->data) {
    if (!t->virt)
      t->virt = calloc(n, sizeof(double));
    v.virt = t->virt;
    return v;
  }
  Attr *uids = attr(pack, 1000);
  for (int64_t i = 0; i < uids->count; ++i)
    if (((int64_t *)uids->data)[i] == intAttr(t, 906, 0))
      v.data = ((void **)attr(pack, 1001)->data)[i];
  return v;
}
static double vget(const View *v, int64_t o) { return v->virt ? v->virt[o] : get(v->data, v->type, o); }
static void vput(const View *v, int64_t o, double x) {
  if (v->virt)
    v->virt[o] = x;
  else
    put(v->data, v->type, o, (float)x);
}
// Offset of index `i` (of the output's dims) in `v`, broadcasting its 1s.
static int64_t offset(const View *v, const int64_t *i) {
  int64_t o = 0;
  for (int k = 0; k < v->nb; ++k)
    o += (v->dims[k] == 1 ? 0 : i[k]) * v->strides[k];
  return o;
}
static double pointwise(int mode, double x, double b, double t) {
  switch (mode) {
  case 0: return x + b;
  case 1: return x * b;
  case 6: return x / b;
  case 9: return x - b;
  case 13: return exp(x);
  case 15: return log(x);
  case 303: return x >= b;
  case 601: return t != 0 ? x : b;
  case 100: return x > 0 ? x : 0;
  case 101: return tanh(x);
  case 102: return 1 / (1 + exp(-x));
  case 104: return 0.5 * x * (1 + erf(x / sqrt(2.0)));
  case 107: return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
  }
  return NAN;
}
int cudnnBackendExecute(void *h, Desc *plan, Desc *pack) {
  if (!plan->final || !pack->final || !*(void **)attr(pack, 1003)->data)
    return 2000; // the plan's workspace must be given
  Desc **ops;
  int n = graphOps(plan, &ops);
  for (int k = 0; k < n; ++k) {
    Desc *op = ops[k];
    if (op->type == 10 || op->type == 11 || op->type == 12) {
      // Forward (10): y = conv(x, w); backward data (12): dx from dy and w;
      // backward filter (11): dw from x and dy. One loop over y and the taps.
      int pass = op->type == 10 ? 0 : op->type == 12 ? 1 : 2, base = 700 + 6 * pass;
      View x = view(descAttr(op, pass == 0 ? 704 : pass == 1 ? 710 : 716), pack),
           w = view(descAttr(op, pass == 2 ? 715 : base + 3), pack),
           y = view(descAttr(op, pass == 0 ? 705 : base + 5), pack);
      Desc *c = descAttr(op, base + 2);
      int sp = (int)intAttr(c, 106, 0);
      int64_t p[3] = {0}, s[3] = {1, 1, 1}, dl[3] = {1, 1, 1};
      int off = 3 - sp;
      for (int i = 0; i < sp; ++i)
        p[i + off] = intAttr(c, 105, i), s[i + off] = intAttr(c, 103, i), dl[i + off] = intAttr(c, 102, i);
      // 4-D as 5-D with D = 1 (dims 1, strides 0), as dims5 does.
      View *vs[3] = {&x, &w, &y};
      for (int t = 0; t < 3; ++t)
        if (vs[t]->nb == 4) {
          View *v = vs[t];
          v->dims[4] = v->dims[3], v->strides[4] = v->strides[3], v->dims[3] = v->dims[2],
          v->strides[3] = v->strides[2], v->dims[2] = 1, v->strides[2] = 0, v->nb = 5;
        }
      int64_t cg = w.dims[1], groups = x.dims[1] / cg, kg = y.dims[1] / groups;
      int64_t i[5], wi[5];
      // A backward pass's sums, densely in its result's (dx or dw) dims.
      View *r = pass == 1 ? &x : &w;
      int64_t rn = r->dims[0] * r->dims[1] * r->dims[2] * r->dims[3] * r->dims[4];
      double *sums = pass ? calloc(rn, sizeof(double)) : NULL;
#define DENSE(v, j) ((((j[0] * v->dims[1] + j[1]) * v->dims[2] + j[2]) * v->dims[3] + j[3]) * v->dims[4] + j[4])
      for (i[0] = 0; i[0] < y.dims[0]; ++i[0])
        for (i[1] = 0; i[1] < y.dims[1]; ++i[1])
          for (i[2] = 0; i[2] < y.dims[2]; ++i[2])
            for (i[3] = 0; i[3] < y.dims[3]; ++i[3])
              for (i[4] = 0; i[4] < y.dims[4]; ++i[4]) {
                double acc = 0;
                wi[0] = i[1];
                for (wi[1] = 0; wi[1] < cg; ++wi[1])
                  for (wi[2] = 0; wi[2] < w.dims[2]; ++wi[2])
                    for (wi[3] = 0; wi[3] < w.dims[3]; ++wi[3])
                      for (wi[4] = 0; wi[4] < w.dims[4]; ++wi[4]) {
                        int64_t xi[5] = {i[0], (i[1] / kg) * cg + wi[1]};
                        int in = 1;
                        for (int a = 2; a < 5; ++a) {
                          xi[a] = i[a] * s[a - 2] - p[a - 2] + wi[a] * dl[a - 2];
                          in &= xi[a] >= 0 && xi[a] < x.dims[a];
                        }
                        if (!in)
                          continue;
                        if (pass == 0)
                          acc += vget(&x, offset(&x, xi)) * vget(&w, offset(&w, wi));
                        else if (pass == 1)
                          sums[DENSE(r, xi)] += vget(&y, offset(&y, i)) * vget(&w, offset(&w, wi));
                        else
                          sums[DENSE(r, wi)] += vget(&y, offset(&y, i)) * vget(&x, offset(&x, xi));
                      }
                if (pass == 0)
                  vput(&y, offset(&y, i), acc);
              }
      if (pass) {
        int64_t j[5];
        for (j[0] = 0; j[0] < r->dims[0]; ++j[0])
          for (j[1] = 0; j[1] < r->dims[1]; ++j[1])
            for (j[2] = 0; j[2] < r->dims[2]; ++j[2])
              for (j[3] = 0; j[3] < r->dims[3]; ++j[3])
                for (j[4] = 0; j[4] < r->dims[4]; ++j[4])
                  vput(r, offset(r, j), sums[DENSE(r, j)]);
        free(sums);
      }
#undef DENSE
      fprintf(stderr, "fake cudnnBackendExecute conv%s groups=%d\n",
              pass == 0 ? "" : pass == 1 ? " backward data" : " backward filter", (int)groups);
    } else if (op->type == 19) { // C[.., m, n] = sum_k A[.., m, k] B[.., k, n]
      View a = view(descAttr(op, 1520), pack), b = view(descAttr(op, 1521), pack),
           c = view(descAttr(op, 1522), pack);
      int r = c.nb, K = (int)a.dims[r - 1];
      if (b.dims[r - 2] != K)
        return 2000;
      int64_t i[5] = {0}, ai[5], bi[5], total = 1;
      for (int k2 = 0; k2 < r; ++k2)
        total *= c.dims[k2];
      for (int64_t e = 0; e < total; ++e) {
        for (int64_t rest = e, k2 = r; k2-- > 0; rest /= c.dims[k2])
          i[k2] = rest % c.dims[k2];
        for (int k2 = 0; k2 < r - 2; ++k2) // batch dims: equal, 1, or grouped
          ai[k2] = i[k2] * a.dims[k2] / c.dims[k2], bi[k2] = i[k2] * b.dims[k2] / c.dims[k2];
        double acc = 0;
        ai[r - 2] = i[r - 2], bi[r - 1] = i[r - 1];
        for (int k = 0; k < K; ++k) {
          ai[r - 1] = k, bi[r - 2] = k;
          acc += vget(&a, offset(&a, ai)) * vget(&b, offset(&b, bi));
        }
        vput(&c, offset(&c, i), acc);
      }
      fprintf(stderr, "fake cudnnBackendExecute matmul\n");
    } else if (op->type == 22) { // y = max or sum of x over the axes where y's dim is 1
      int mode = enumAttr(descAttr(op, 1612), 1600);
      View x = view(descAttr(op, 1610), pack), y = view(descAttr(op, 1611), pack);
      int64_t i[5] = {0}, total = 1, ytotal = 1;
      for (int k2 = 0; k2 < x.nb; ++k2)
        total *= x.dims[k2], ytotal *= y.dims[k2];
      double *acc = malloc(ytotal * sizeof(double));
      for (int64_t e = 0; e < ytotal; ++e)
        acc[e] = mode == 3 ? -INFINITY : 0;
      for (int64_t e = 0; e < total; ++e) {
        int64_t yo = 0;
        for (int64_t rest = e, k2 = x.nb; k2-- > 0; rest /= x.dims[k2])
          i[k2] = rest % x.dims[k2];
        for (int k2 = 0; k2 < y.nb; ++k2)
          yo = yo * y.dims[k2] + (y.dims[k2] == 1 ? 0 : i[k2]);
        double v = vget(&x, offset(&x, i));
        acc[yo] = mode == 3 ? (v > acc[yo] ? v : acc[yo]) : acc[yo] + v;
      }
      for (int64_t e = 0; e < ytotal; ++e) {
        for (int64_t rest = e, k2 = y.nb; k2-- > 0; rest /= y.dims[k2])
          i[k2] = rest % y.dims[k2];
        vput(&y, offset(&y, i), acc[e]);
      }
      free(acc);
      fprintf(stderr, "fake cudnnBackendExecute reduction %d\n", mode);
    } else {
      Desc *pw = descAttr(op, 750);
      int mode = enumAttr(pw, 0), n = arity(mode);
      View x = view(descAttr(op, 751), pack), y = view(descAttr(op, 753), pack), b = {0}, t = {0};
      if (n > 1)
        b = view(descAttr(op, 752), pack);
      if (n > 2)
        t = view(descAttr(op, 758), pack);
      int64_t i[5] = {0}, total = 1;
      for (int k2 = 0; k2 < y.nb; ++k2)
        total *= y.dims[k2];
      for (int64_t e = 0; e < total; ++e) {
        for (int64_t r = e, k2 = y.nb; k2-- > 0; r /= y.dims[k2])
          i[k2] = r % y.dims[k2];
        double bv = n > 1 ? vget(&b, offset(&b, i)) : 0, tv = n > 2 ? vget(&t, offset(&t, i)) : 0;
        double v = mode == 501 ? (double)i[intAttr(pw, 9, 0)] // gen_index along its axis
                               : pointwise(mode, vget(&x, offset(&x, i)), bv, tv);
        vput(&y, offset(&y, i), v);
      }
      fprintf(stderr, "fake cudnnBackendExecute pointwise %d\n", mode);
    }
  }
  return 0;
}
