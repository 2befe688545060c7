/* The tc runtime's C API: load a compiled artifact (.tcx) for the CPU or a
 * CUDA GPU (the artifact says which), bind inputs, run, read outputs. Link
 * with -ltcrt (installed by `cmake --install`); examples:
 * docs/examples/run_model.c (CPU or CUDA, host buffers) and
 * docs/examples/run_cuda_model.c (device buffers, a stream of the caller's).
 *
 * Every call is safe to make with bad input: it fails with -1 or NULL and
 * tc_last_error() says why. A model is not thread-safe: run it from one
 * thread at a time (a CPU model splits kernels over its own thread pool).
 *
 * CUDA: libtcrt never links the CUDA libraries; it opens libcuda.so.1 when
 * a CUDA artifact loads (where it is missing, or sees no GPU, the load fails
 * with "no CUDA device (...)"), cuBLASLt and cuDNN the first time a shape
 * needs them. A model uses the primary context of its device (the one the
 * CUDA runtime API uses, so cudaMalloc'd memory and cudaStream_t streams of
 * that device work with it) and makes it current on the calling thread in
 * tc_model_load* and tc_model_run*. Device pointers are CUdeviceptr values
 * (cudaMalloc's void *) carried in tc_tensor.data. */
#ifndef TC_RUNTIME_H
#define TC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1: CPU artifacts. 2: CUDA artifacts, tc_model_load_ex, device tensors
 * (tc_tensor.memory), tc_model_run_on_stream, tc_model_backend,
 * tc_model_device_bytes. 3: tc_load_options.no_verify. 4:
 * tc_load_options.attention. */
#define TC_RUNTIME_API_VERSION 4

typedef struct tc_model tc_model;

#define TC_MAX_RANK 8

/* Where a tensor's bytes are. Zero (a zeroed tc_tensor) is the host. */
typedef enum tc_memory {
  TC_MEMORY_HOST = 0,
  TC_MEMORY_DEVICE = 1, /* device memory of the model's device (CUDA models) */
} tc_memory;

typedef struct tc_tensor {
  const char *dtype; /* "f32", "f16", "i64", "bool", ... as in the IR */
  int rank;
  tc_memory memory;          /* since version 2, in what was padding: v1 layout kept */
  int64_t dims[TC_MAX_RANK]; /* row-major; -1 for a symbolic dim in a signature */
  void *data;
  size_t bytes;
} tc_tensor;

/* Loads and checks an artifact on the default device: the CPU with
 * `threads` threads (0 = one per hardware thread), or CUDA device 0. The
 * artifact's checksums are verified first: a damaged file is an error
 * ("m.tcx: section 'object' is damaged (checksum ...)"), never run. */
tc_model *tc_model_load(const char *path, unsigned threads);

typedef struct tc_load_options {
  size_t size;      /* sizeof(tc_load_options): later versions add fields */
  unsigned threads; /* CPU: as tc_model_load's; 0 = one per hardware thread */
  int device;       /* CUDA: the device ordinal (as cuDeviceGet counts) */
  int no_verify;    /* since version 3: 1 skips the artifact's checksums (tc-run --no-verify) */
  /* since version 4, CUDA: how Attention groups run, "auto", "kernel" or
   * "cudnn" (tc-run --attention); NULL: auto */
  const char *attention;
} tc_load_options;
#define TC_LOAD_OPTIONS_INIT {sizeof(tc_load_options), 0, 0, 0, 0}

/* tc_model_load with options (NULL: the defaults, TC_LOAD_OPTIONS_INIT).
 * A device the machine lacks fails with "no CUDA device N (...)". */
tc_model *tc_model_load_ex(const char *path, const tc_load_options *options);
void tc_model_free(tc_model *model);
/* The message of this thread's last failed call ("" if none). */
const char *tc_last_error(void);

/* "cpu" or "cuda"; NULL for a NULL model. */
const char *tc_model_backend(const tc_model *model);

int tc_model_num_inputs(const tc_model *model);
int tc_model_num_outputs(const tc_model *model);
/* Name and declared type (dims -1 where symbolic; data NULL, memory HOST) of
 * input or output i; -1 when i is out of range. */
int tc_model_input(const tc_model *model, int i, const char **name, tc_tensor *type);
int tc_model_output(const tc_model *model, int i, const char **name, tc_tensor *type);

/* Runs on `inputs` (in signature order; their data is only read). Each
 * input is on the host or, for a CUDA model, on the device (its `memory`);
 * `bytes` must be exactly its size. Fills outputs[0 .. num_outputs) (what
 * they held is not read); their data is host memory that belongs to the
 * model and stays valid until the next run or tc_model_free. A CUDA model
 * runs on its own stream and returns when the outputs are ready. Returns 0,
 * or -1 on error. */
int tc_model_run(tc_model *model, const tc_tensor *inputs, int num_inputs, tc_tensor *outputs,
                 int capacity);

/* tc_model_run on `stream`, a CUstream / cudaStream_t of the model's device
 * (NULL: the model's own stream, and the call returns when the work is done;
 * the legacy default stream is CU_STREAM_LEGACY, cudaStreamLegacy; a CPU
 * model takes only NULL), each output's destination chosen by what
 * outputs[i] holds on entry:
 *   memory HOST                  host memory of the model's (as tc_model_run)
 *   memory DEVICE, data NULL     device memory of the model's: data is set,
 *                                valid until the next run (which reuses it);
 *                                it may be that next run's DEVICE input (a
 *                                run copies its device inputs first: a KV
 *                                cache's present fed back as the past)
 *   memory DEVICE, data non-NULL the caller's device buffer of `bytes`
 *                                bytes: the output is copied into it
 * and dtype, rank, dims and bytes (the output's size) set on return.
 *
 * Every copy, kernel and library call is enqueued on `stream`; a shape's
 * CUDA graph (recorded at its second run) is replayed on it. The first run
 * of a shape also allocates its device memory (cuMemAlloc) and uploads the
 * weights on the stream. The call waits for the stream (cuStreamSynchronize,
 * never the whole device) only when: the stream is NULL; an output is HOST;
 * a step of the plan runs on the host (tc-run --print-steps shows them; each
 * waits for its operands); or the input shape cannot be planned ahead
 * (data-dependent sizes: every op on the host). Otherwise it returns once
 * the work is enqueued: inputs may be overwritten, and outputs read, only by
 * work ordered after it on the stream, and a kernel's fault shows at the
 * caller's next synchronize. Host inputs are staged before the call
 * returns. Runs of one model share its memory: order runs on different
 * streams yourself. Returns 0 or -1. */
int tc_model_run_on_stream(tc_model *model, void *stream, const tc_tensor *inputs, int num_inputs,
                           tc_tensor *outputs, int capacity);

/* Device memory of a CUDA model (a CPU model: 0 and 0): `planned`, what the
 * memory plan of the last run's shape predicts (its arena and inputs,
 * weights, library workspaces; 0 before a run); `peak`, the most tc's
 * runtime has held at once in this process (all its models). Either pointer
 * may be NULL. Returns 0, or -1 for a NULL model. */
int tc_model_device_bytes(const tc_model *model, uint64_t *planned, uint64_t *peak);

#ifdef __cplusplus
}
#endif

#endif /* TC_RUNTIME_H */
