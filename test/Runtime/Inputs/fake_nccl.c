// A stand-in libnccl.so.2 for testing the CUDA runtime's collective steps
// and tc-run --gpus without GPUs, beside fake_libcuda.c (device memory is
// host memory). The ranks are processes: the unique id names a directory,
// and each collective is an exchange of files there (rank r's buffer of the
// k-th collective in k.r, written whole by a rename), combined in rank order
// in double (as the reference executor's Collectives.cpp), so results match
// `tc-run --ranks N` on the reference. A rank waits at most 60 s for the
// others: then ncclSystemError, never a hang.
// FAKE_NCCL_FAIL_RANK=R: rank R's ncclCommInitRank fails (a rank that dies).
#include "fake_half.h"
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct { char internal[128]; } ncclUniqueId;
typedef struct {
  int rank, n;
  char dir[128];
  unsigned long seq;
} Comm;
enum { kSuccess = 0, kSystemError = 2, kInternalError = 3, kInvalidArgument = 4 };

int ncclGetVersion(int *v) { *v = 22809; return kSuccess; }
const char *ncclGetErrorString(int r) {
  return r == kSystemError ? "unhandled system error" : r == kInvalidArgument ? "invalid argument"
                                                                              : "internal error";
}
int ncclGetUniqueId(ncclUniqueId *id) {
  const char *tmp = getenv("TMPDIR");
  memset(id, 0, sizeof *id);
  snprintf(id->internal, sizeof id->internal, "%s/fake-nccl-XXXXXX", tmp ? tmp : "/tmp");
  return mkdtemp(id->internal) ? kSuccess : kSystemError;
}
int ncclCommInitRank(Comm **comm, int n, ncclUniqueId id, int rank) {
  const char *fail = getenv("FAKE_NCCL_FAIL_RANK");
  struct stat st;
  if (fail && atoi(fail) == rank)
    return kSystemError;
  if (n < 1 || rank < 0 || rank >= n || stat(id.internal, &st) != 0)
    return kInvalidArgument;
  Comm *c = calloc(1, sizeof *c);
  c->rank = rank;
  c->n = n;
  memcpy(c->dir, id.internal, sizeof c->dir);
  *comm = c;
  fprintf(stderr, "fake nccl: rank %d of %d\n", rank, n);
  return kSuccess;
}
int ncclCommDestroy(Comm *c) { free(c); return kSuccess; }
int ncclCommCount(const Comm *c, int *n) { *n = c->n; return kSuccess; }
int ncclCommUserRank(const Comm *c, int *r) { *r = c->rank; return kSuccess; }

// ncclDataType_t: int8 0, uint8 1, int32 2, uint32 3, int64 4, uint64 5,
// float16 6, float32 7, float64 8, bfloat16 9.
static size_t typeSize(int t) {
  static const size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
  return t >= 0 && t < 10 ? sizes[t] : 0;
}
static double get(const void *p, int t, size_t i) {
  switch (t) {
  case 0: return ((const int8_t *)p)[i];
  case 1: return ((const uint8_t *)p)[i];
  case 2: return ((const int32_t *)p)[i];
  case 3: return ((const uint32_t *)p)[i];
  case 4: return (double)((const int64_t *)p)[i];
  case 5: return (double)((const uint64_t *)p)[i];
  case 8: return ((const double *)p)[i];
  default: return getAs(p, t, 6, 9, (int64_t)i);
  }
}
static void put(void *p, int t, size_t i, double v) {
  switch (t) {
  case 0: ((int8_t *)p)[i] = (int8_t)v; break;
  case 1: ((uint8_t *)p)[i] = (uint8_t)v; break;
  case 2: ((int32_t *)p)[i] = (int32_t)v; break;
  case 3: ((uint32_t *)p)[i] = (uint32_t)v; break;
  case 4: ((int64_t *)p)[i] = (int64_t)v; break;
  case 5: ((uint64_t *)p)[i] = (uint64_t)v; break;
  case 8: ((double *)p)[i] = v; break;
  default: putAs(p, t, 6, 9, (int64_t)i, (float)v);
  }
}

// Every rank's `bytes` at `send`, in rank order, in one malloc'd block.
static int exchange(Comm *c, const void *send, size_t bytes, char **all) {
  char path[256], tmp[300];
  unsigned long k = ++c->seq;
  snprintf(path, sizeof path, "%s/%lu.%d", c->dir, k, c->rank);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "wb");
  if (!f || fwrite(send, 1, bytes, f) != bytes || fclose(f) != 0 || rename(tmp, path) != 0)
    return kSystemError;
  *all = malloc(bytes * (size_t)c->n + 1);
  for (int r = 0; r < c->n; ++r) {
    snprintf(path, sizeof path, "%s/%lu.%d", c->dir, k, r);
    for (int waited = 0;; ++waited) {
      FILE *in = fopen(path, "rb");
      if (in) {
        size_t got = fread(*all + bytes * (size_t)r, 1, bytes, in);
        fclose(in);
        if (got != bytes)
          return kInvalidArgument; // the ranks disagree on the size
        break;
      }
      if (waited > 60000)
        return kSystemError;
      struct timespec ms = {0, 1000000};
      nanosleep(&ms, 0);
    }
  }
  // Every rank wrote collective k after reading all of k - 1: ours can go.
  snprintf(path, sizeof path, "%s/%lu.%d", c->dir, k - 1, c->rank);
  unlink(path);
  return kSuccess;
}

static double combine(const char *all, size_t stride, int n, int t, size_t i, int op) {
  double v = get(all, t, i);
  for (int r = 1; r < n; ++r) {
    double x = get(all + stride * (size_t)r, t, i);
    v = op == 0 ? v + x : op == 2 ? (x > v ? x : v) : (x < v ? x : v);
  }
  return v;
}

int ncclAllReduce(const void *send, void *recv, size_t count, int t, int op, Comm *c, void *s) {
  char *all;
  size_t bytes = count * typeSize(t);
  int rc = exchange(c, send, bytes, &all);
  if (rc)
    return rc;
  for (size_t i = 0; i < count; ++i)
    put(recv, t, i, combine(all, bytes, c->n, t, i, op));
  free(all);
  return kSuccess;
}
int ncclAllGather(const void *send, void *recv, size_t count, int t, Comm *c, void *s) {
  char *all;
  size_t bytes = count * typeSize(t);
  int rc = exchange(c, send, bytes, &all);
  if (rc)
    return rc;
  memcpy(recv, all, bytes * (size_t)c->n);
  free(all);
  return kSuccess;
}
int ncclReduceScatter(const void *send, void *recv, size_t count, int t, int op, Comm *c, void *s) {
  char *all;
  size_t bytes = count * (size_t)c->n * typeSize(t);
  int rc = exchange(c, send, bytes, &all);
  if (rc)
    return rc;
  for (size_t i = 0; i < count; ++i)
    put(recv, t, i, combine(all, bytes, c->n, t, count * (size_t)c->rank + i, op));
  free(all);
  return kSuccess;
}
