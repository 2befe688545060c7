// A stand-in libcuda.so.1 for testing CudaModel::run without a GPU: device
// memory is host memory, copies are memcpy, and a kernel launch logs its
// grid and block to stderr. With FAKE_CUDA_KERNELS=K.so (host_kernels.py:
// the artifact's kernels built for the host) a launch runs the kernel with
// at most 3 blocks (grid-stride loops cover the rest; FAKE_CUDA_MAX_BLOCKS=N:
// N, as many as a kernel whose grid decides its sums' order, `split`,
// takes on the GPU); without, nothing runs. Built by the lit test, found through LD_LIBRARY_PATH.
// FAKE_CUDA_DEVICES=N: N devices (default 1; 0: "no usable GPU").
// FAKE_CUDA_STREAMS=1: every copy, launch and synchronize logs its stream
// ("on stream 2": streams are numbered from 1 as created).
// A module is its image: cuModuleGetFunction finds only the kernels an ELF
// cubin names (NOT_FOUND for another program's), as the driver does.
// FAKE_CUDA_KERNEL_US="SUB=US,...,*=US" (with -DFAKE_CUDA_EVENTS): a
// virtual clock that events read: each launch of a kernel whose symbol
// contains SUB (the first that matches; `*` any) advances it by US
// microseconds, so timings are deterministic (kernel-variants.test).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned long long CUdeviceptr;
static int ctx;
static double virtual_us; // FAKE_CUDA_KERNEL_US's clock

int cuInit(unsigned f) { return 0; }
int cuDeviceGetCount(int *n) {
  const char *env = getenv("FAKE_CUDA_DEVICES");
  *n = env ? atoi(env) : 1;
  return 0;
}
int cuDeviceGet(int *d, int i) {
  *d = i;
  return 0;
}
int cuDeviceGetAttribute(int *v, int attr, int d) {
  *v = attr == 75 ? 9 : 0;
  return 0;
}
int cuDeviceGetName(char *name, int len, int d) {
  snprintf(name, len, "fake GPU");
  return 0;
}
/* CUDA 13.0 unless FAKE_CUDA_DRIVER_VERSION says otherwise. */
int cuDriverGetVersion(int *v) {
  const char *s = getenv("FAKE_CUDA_DRIVER_VERSION");
  *v = s ? atoi(s) : 13000;
  return 0;
}
int cuDevicePrimaryCtxRetain(void **c, int d) {
  *c = &ctx;
  return 0;
}
int cuDevicePrimaryCtxRelease_v2(int d) { return 0; }
int cuCtxSetCurrent(void *c) { return 0; }
struct Module {
  const unsigned char *image;
  size_t size;
}; /* size 0: not an ELF cubin */
int cuModuleLoadData(void **m, const void *image) {
  struct Module *mod = calloc(1, sizeof *mod);
  mod->image = image;
  /* An ELF64 file ends with its section headers: e_shoff + e_shnum * e_shentsize. */
  if (!memcmp(image,
              "\x7f"
              "ELF\x02",
              5)) {
    unsigned long long shoff;
    unsigned short shentsize, shnum;
    memcpy(&shoff, mod->image + 0x28, 8);
    memcpy(&shentsize, mod->image + 0x3a, 2);
    memcpy(&shnum, mod->image + 0x3c, 2);
    mod->size = shoff + (size_t)shnum * shentsize;
  }
  *m = mod;
  return 0;
}
int cuModuleUnload(void *m) {
  free(m);
  return 0;
}
/* Whether a cubin names the kernel (its symbol table's strings). */
static int names(const struct Module *mod, const char *name) {
  size_t n = strlen(name) + 1;
  return !mod->size || memmem(mod->image, mod->size, name, n) != 0;
}
typedef void (*HostLaunch)(void *, unsigned, unsigned);
static void *kernels; // FAKE_CUDA_KERNELS, opened
/* A function: its name and, with FAKE_CUDA_KERNELS, its host entry. */
struct Function {
  char name[256];
  HostLaunch host;
  struct Function *next; // every function made, reachable (no leak for LeakSanitizer)
};
static struct Function *functions;
int cuModuleGetFunction(void **f, void *m, const char *name) {
  const char *lib = getenv("FAKE_CUDA_KERNELS");
  if (!names(m, name))
    return 500; // CUDA_ERROR_NOT_FOUND
  HostLaunch host = 0;
  if (lib) {
    char sym[512];
    snprintf(sym, sizeof sym, "host_launch_%s", name);
    void *h = kernels = dlopen(lib, RTLD_NOW);
    host = h ? (HostLaunch)dlsym(h, sym) : 0;
    if (!host)
      return 500; // CUDA_ERROR_NOT_FOUND
  }
  struct Function *fn = calloc(1, sizeof *fn);
  snprintf(fn->name, sizeof fn->name, "%s", name);
  fn->host = host;
  fn->next = functions;
  functions = fn;
  *f = fn;
  return 0;
}
/* FAKE_CUDA_KERNEL_US's microseconds for a launch of `name`. */
static double launch_us(const char *name) {
  const char *spec = getenv("FAKE_CUDA_KERNEL_US");
  char item[256];
  for (const char *p = spec; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
    snprintf(item, sizeof item, "%.*s", (int)strcspn(p, ","), p);
    char *eq = strrchr(item, '=');
    if (!eq)
      continue;
    *eq = 0;
    if (!strcmp(item, "*") || strstr(name, item))
      return atof(eq + 1);
  }
  return 0;
}
/* A module's global (the kernels' fault record): the host kernels' symbol. */
int cuModuleGetGlobal_v2(CUdeviceptr *p, size_t *n, void *m, const char *name) {
  void *s = kernels ? dlsym(kernels, name) : 0;
  if (!s)
    return 500; // CUDA_ERROR_NOT_FOUND
  *p = (CUdeviceptr)s;
  if (n)
    *n = 32;
  return 0;
}
int cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
  if (getenv("FAKE_CUDA_OOM"))
    return 2;
  *p = (CUdeviceptr)aligned_alloc(256, (n + 255) / 256 * 256);
  return 0;
}
int cuMemFree_v2(CUdeviceptr p) {
  free((void *)p);
  return 0;
}
// Streams made by cuStreamCreate (non-blocking ones, as the runtime makes):
// every copy and launch must name a live one (else CUDA_ERROR_INVALID_VALUE,
// 1), so nothing of a run goes to the legacy default stream.
static int streams[8], num_streams;
static int stream_id(void *s) {
  int *p = s;
  return p >= streams && p < streams + num_streams ? *p : 0;
}
static int on_stream(const char *what, void *s) {
  if (!stream_id(s))
    return 0;
  if (getenv("FAKE_CUDA_STREAMS"))
    fprintf(stderr, "fake %s on stream %d\n", what, stream_id(s));
  return 1;
}
int cuStreamCreate(void **s, unsigned flags) {
  if (flags != 1 || num_streams == 8)
    return 1;
  streams[num_streams] = num_streams + 1;
  *s = &streams[num_streams++];
  return 0;
}
int cuStreamDestroy_v2(void *s) {
  if (!stream_id(s))
    return 1;
  *(int *)s = 0;
  return 0;
}
// A kernel that ran __trap (an out-of-range Gather index) fails at the next
// synchronize, as on a GPU.
static int trapped(void) {
  int (*traps)(void) = kernels ? (int (*)(void))dlsym(kernels, "host_traps") : 0;
  return traps && traps() ? 719 : 0;
}
int cuStreamSynchronize(void *s) { return on_stream("synchronize", s) ? trapped() : 1; }
int cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, void *st) {
  if (!on_stream("copy host to device", st))
    return 1;
  memcpy((void *)d, s, n);
  return 0;
}
int cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, void *st) {
  if (!on_stream("copy device to host", st))
    return 1;
  memcpy(d, (void *)s, n);
  return 0;
}
int cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, void *st) {
  if (!on_stream("copy device to device", st))
    return 1;
  memcpy((void *)d, (const void *)s, n);
  return 0;
}
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shared, void *stream, void **params, void **extra) {
  if (!on_stream("launch", stream))
    return 1;
  struct Function *fn = f;
  fprintf(stderr, "fake launch <<<%u, %u>>>\n", gx, bx);
  virtual_us += launch_us(fn->name);
  if (fn->host) {
    const char *most = getenv("FAKE_CUDA_MAX_BLOCKS");
    unsigned m = most ? (unsigned)atoi(most) : 3;
    fn->host(params[0], gx < m ? gx : m, bx);
  }
  return 0;
}
int cuGetErrorName(int e, const char **s) {
  *s = e == 2     ? "CUDA_ERROR_OUT_OF_MEMORY"
       : e == 1   ? "CUDA_ERROR_INVALID_VALUE"
       : e == 719 ? "CUDA_ERROR_LAUNCH_FAILED"
                  : "CUDA_ERROR_UNKNOWN";
  return 0;
}
int cuGetErrorString(int e, const char **s) {
  *s = e == 2     ? "out of memory"
       : e == 1   ? "invalid argument"
       : e == 719 ? "unspecified launch failure"
                  : "unknown error";
  return 0;
}
#ifdef FAKE_CUDA_EVENTS
// Built with -DFAKE_CUDA_EVENTS: CUDA events too, stamped with the host
// clock when recorded (launches run synchronously here), for traces'
// per-step device events (cuda-trace-fake-driver.test).
#include <time.h>
typedef struct {
  double ms;
} FakeEvent;
int cuEventCreate(void **e, unsigned flags) {
  *e = calloc(1, sizeof(FakeEvent));
  return 0;
}
int cuEventDestroy_v2(void *e) {
  free(e);
  return 0;
}
int cuEventRecord(void *e, void *stream) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  ((FakeEvent *)e)->ms =
      getenv("FAKE_CUDA_KERNEL_US") ? virtual_us / 1e3 : t.tv_sec * 1e3 + t.tv_nsec / 1e6;
  return 0;
}
int cuEventElapsedTime_v2(float *ms, void *start, void *end) {
  *ms = (float)(((FakeEvent *)end)->ms - ((FakeEvent *)start)->ms);
  return 0;
}
#endif
