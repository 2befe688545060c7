/* Runs a CUDA artifact through the C API with its inputs and outputs in
 * device memory and all its work on a stream of this program's, then
 * prints each output's type and first values (example_io.h fills the
 * inputs) and the device memory used.
 *
 * It links no CUDA library: the few driver calls it makes (allocate, copy,
 * a stream) are opened with dlopen, as tc itself does. An application with
 * the CUDA toolkit would call cudaMalloc, cudaMemcpyAsync and
 * cudaStreamCreate instead: a model uses the device's primary context, the
 * one the CUDA runtime API uses.
 *
 *   cmake --install build --prefix $PREFIX
 *   cc run_cuda_model.c -I$PREFIX/include -L$PREFIX/lib -ltcrt -ldl -Wl,-rpath,$PREFIX/lib \
 *      -o run_cuda_model
 *   ./run_cuda_model model.tcx 2 0   # symbolic dims of the inputs set to 2; device 0
 */
#include "example_io.h"
#include <dlfcn.h>

/* The driver API's types and the entry points used (cuda.h's _v2 names). */
typedef unsigned long long CUdeviceptr;
typedef void *CUstream;
static int (*cuMemAlloc)(CUdeviceptr *ptr, size_t bytes);
static int (*cuMemFree)(CUdeviceptr ptr);
static int (*cuMemcpyHtoDAsync)(CUdeviceptr dst, const void *src, size_t bytes, CUstream s);
static int (*cuMemcpyDtoHAsync)(void *dst, CUdeviceptr src, size_t bytes, CUstream s);
static int (*cuStreamCreate)(CUstream *s, unsigned flags);
static int (*cuStreamDestroy)(CUstream s);
static int (*cuStreamSynchronize)(CUstream s);

static int open_driver(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return 0;
  *(void **)&cuMemAlloc = dlsym(lib, "cuMemAlloc_v2");
  *(void **)&cuMemFree = dlsym(lib, "cuMemFree_v2");
  *(void **)&cuMemcpyHtoDAsync = dlsym(lib, "cuMemcpyHtoDAsync_v2");
  *(void **)&cuMemcpyDtoHAsync = dlsym(lib, "cuMemcpyDtoHAsync_v2");
  *(void **)&cuStreamCreate = dlsym(lib, "cuStreamCreate");
  *(void **)&cuStreamDestroy = dlsym(lib, "cuStreamDestroy_v2");
  *(void **)&cuStreamSynchronize = dlsym(lib, "cuStreamSynchronize");
  return cuMemAlloc && cuMemFree && cuMemcpyHtoDAsync && cuMemcpyDtoHAsync && cuStreamCreate &&
         cuStreamDestroy && cuStreamSynchronize;
}

#define CU(call)                                                                                   \
  do {                                                                                             \
    int r_ = (call);                                                                               \
    if (r_ != 0) {                                                                                 \
      fprintf(stderr, "run_cuda_model: %s failed: CUDA error %d\n", #call, r_);                    \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s model.tcx [size of symbolic dims] [device]\n", argv[0]);
    return 2;
  }
  int64_t dynamic = argc > 2 ? atoll(argv[2]) : 1;
  tc_load_options options = TC_LOAD_OPTIONS_INIT;
  options.device = argc > 3 ? atoi(argv[3]) : 0;
  tc_model *model = tc_model_load_ex(argv[1], &options);
  if (!model) {
    fprintf(stderr, "run_cuda_model: %s\n", tc_last_error());
    return 1;
  }
  if (strcmp(tc_model_backend(model), "cuda") != 0) {
    fprintf(stderr, "run_cuda_model: %s is a %s artifact; run_model.c runs those\n", argv[1],
            tc_model_backend(model));
    return 1;
  }
  /* The load made the device's primary context current on this thread. */
  if (!open_driver()) {
    fprintf(stderr, "run_cuda_model: cannot open the CUDA driver's entry points\n");
    return 1;
  }
  CUstream stream;
  CU(cuStreamCreate(&stream, 1 /* CU_STREAM_NON_BLOCKING */));

  int n = tc_model_num_inputs(model), m = tc_model_num_outputs(model);
  tc_tensor *inputs = calloc((size_t)n + 1, sizeof(tc_tensor));
  tc_tensor *outputs = calloc((size_t)m + 1, sizeof(tc_tensor));
  void **host = calloc((size_t)n + 1, sizeof(void *));
  for (int i = 0; i < n; ++i) {
    if (!(host[i] = example_input(model, i, dynamic, &inputs[i])))
      return 1;
    CUdeviceptr buf = 0;
    if (inputs[i].bytes) {
      CU(cuMemAlloc(&buf, inputs[i].bytes));
      CU(cuMemcpyHtoDAsync(buf, host[i], inputs[i].bytes, stream));
    }
    inputs[i].memory = TC_MEMORY_DEVICE;
    inputs[i].data = (void *)(uintptr_t)buf;
  }

  /* First run: outputs left in the model's device memory (data NULL), which
   * also tells their sizes. Nothing here waits for the stream. */
  for (int i = 0; i < m; ++i)
    outputs[i] = (tc_tensor){.memory = TC_MEMORY_DEVICE, .data = NULL};
  if (tc_model_run_on_stream(model, stream, inputs, n, outputs, m) != 0) {
    fprintf(stderr, "run_cuda_model: %s\n", tc_last_error());
    return 1;
  }
  /* Second run: into device buffers of this program's. */
  CUdeviceptr *mine = calloc((size_t)m + 1, sizeof(CUdeviceptr));
  for (int i = 0; i < m; ++i) {
    size_t bytes = outputs[i].bytes;
    if (bytes)
      CU(cuMemAlloc(&mine[i], bytes));
    outputs[i] =
        (tc_tensor){.memory = TC_MEMORY_DEVICE, .data = (void *)(uintptr_t)mine[i], .bytes = bytes};
  }
  if (tc_model_run_on_stream(model, stream, inputs, n, outputs, m) != 0) {
    fprintf(stderr, "run_cuda_model: %s\n", tc_last_error());
    return 1;
  }
  /* Read them back after the work on the stream, then print. */
  void **results = calloc((size_t)m + 1, sizeof(void *));
  for (int i = 0; i < m; ++i) {
    results[i] = malloc(outputs[i].bytes + 1);
    if (outputs[i].bytes)
      CU(cuMemcpyDtoHAsync(results[i], mine[i], outputs[i].bytes, stream));
  }
  CU(cuStreamSynchronize(stream));
  printf("backend: %s\n", tc_model_backend(model));
  for (int i = 0; i < m; ++i)
    example_print(model, i, &outputs[i], results[i]);
  uint64_t planned = 0, peak = 0;
  tc_model_device_bytes(model, &planned, &peak);
  printf("device bytes: planned %llu, peak %llu\n", (unsigned long long)planned,
         (unsigned long long)peak);

  for (int i = 0; i < m; ++i) {
    free(results[i]);
    if (mine[i])
      CU(cuMemFree(mine[i]));
  }
  for (int i = 0; i < n; ++i) {
    free(host[i]);
    if (inputs[i].data)
      CU(cuMemFree((CUdeviceptr)(uintptr_t)inputs[i].data));
  }
  /* The stream and buffers belong to the context the model holds: free
   * them first. */
  CU(cuStreamDestroy(stream));
  tc_model_free(model);
  free(results);
  free(mine);
  free(host);
  free(inputs);
  free(outputs);
  return 0;
}
