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
 * tc_load_options.attention. 5: training (tc_trainer_*). 6: tc_trainer_eval.
 * 7: tc_model_set_communicator. */
#define TC_RUNTIME_API_VERSION 7

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

/* (Since version 7.) A multi-rank CUDA model (a program of tc-opt
 * --tensor-parallel N or --data-parallel N; docs/multi-gpu.md) runs its
 * collectives over `comm`, an NCCL communicator of the caller's (an
 * ncclComm_t on the model's device, of the program's size; the caller keeps
 * it alive while the model runs, and this process's rank in it decides which
 * part of each sharded weight the model takes). Without one, the model's
 * first run makes its own from the launcher's environment (RANK,
 * WORLD_SIZE, LOCAL_RANK, TC_NCCL_ID or TC_NCCL_ID_FILE). Call it before the
 * first run. Returns 0, or -1 (a CPU model, a NULL communicator, one of
 * another size). */
int tc_model_set_communicator(tc_model *model, void *comm);

/* Training (since version 5; docs/training.md). A trainer runs a train step
 * compiled by `tc-opt --train` (main(batch inputs..., state...) -> (loss,
 * new state...)) once per batch, feeding each step's new state to the next.
 * The state (parameters, batch-norm buffers, optimizer moments, the step
 * counter) stays where the model runs: host memory of the trainer's on the
 * CPU; on CUDA, the model's device memory (each step's new state is the next
 * step's device input; no step copies it to the host). Checkpoints are the
 * files `tc-run --train --checkpoint FILE` writes and `--resume FILE` reads:
 * FILE holds the model's parameters and buffers under their ONNX initializer
 * names (safetensors.torch.load_file reads it), FILE's .optimizer.safetensors
 * (x.safetensors -> x.optimizer.safetensors) the optimizer's state.
 * Example: docs/examples/train_model.c. */
typedef struct tc_trainer tc_trainer;

/* Loads a train-step artifact as tc_model_load_ex does (options NULL: the
 * defaults) and sets its state to its initial values (the module's function
 * @init, on the reference executor). An artifact that is no train step is
 * an error ("m.tcx: not a train step (tc-opt --train): this module does not
 * train"). */
tc_trainer *tc_trainer_load(const char *path, const tc_load_options *options);
void tc_trainer_free(tc_trainer *trainer);

/* The trainer's model, to describe its inputs and outputs (tc_model_input
 * ...): inputs 0 .. tc_trainer_num_inputs() - 1 are a batch (the model's
 * inputs, then the loss's target), the rest the state. It belongs to the
 * trainer: neither run nor free it. */
const tc_model *tc_trainer_model(const tc_trainer *trainer);
int tc_trainer_num_inputs(const tc_trainer *trainer);

/* One step on a batch: inputs[0 .. num_inputs) as tc_model_run takes them
 * (host memory or, for a CUDA model, device memory; only read). The step's
 * new state replaces the state. `loss` NULL: the loss is not read back, and
 * a CUDA step on a stream of the caller's does not wait for the device (as
 * tc_model_run_on_stream with device outputs: the next step, read or save
 * is ordered after it on the stream); non-NULL: *loss is set to the step's
 * loss (a CUDA step then waits for its stream). A NaN or infinite loss is
 * returned as it is: the state has taken that step. An argument refused
 * (count, dtype, size) leaves the state as it was; so does any failed CPU
 * step. A CUDA step that fails while it runs, with the state on the device,
 * loses the state: later steps, reads and saves fail until
 * tc_trainer_load_checkpoint. Returns 0 or -1. */
int tc_trainer_step(tc_trainer *trainer, const tc_tensor *inputs, int num_inputs, double *loss);
/* tc_trainer_step with its work on `stream` (tc_model_run_on_stream's: a
 * CUstream / cudaStream_t of the model's device; NULL: the model's own, and
 * the call waits; a CPU model takes only NULL). tc_trainer_read_state and
 * tc_trainer_save_checkpoint copy on the last step's stream: keep it alive
 * until then. */
int tc_trainer_step_on_stream(tc_trainer *trainer, void *stream, const tc_tensor *inputs,
                              int num_inputs, double *loss);

/* (Since version 6.) Evaluates a batch on the trainer's current parameters
 * and buffers, where they are (a CUDA trainer's stay in device memory: no
 * copy): `eval_model` is an eval step (tc-opt --eval with the train step's
 * --loss, --trainable and --freeze; loaded by tc_model_load for the same
 * target and device) whose state must be the trainer's parameters and
 * buffers, key for key and type for type. inputs as tc_trainer_step's (the
 * model's inputs, then the loss's target). Sets *loss, and *hits and
 * *counted to cross-entropy's top-1 hits and the labels it counted (-1 for
 * other losses); each may be NULL. Runs after the trainer's last step (on its
 * stream) and waits for the result; the state is not changed. Returns 0 or
 * -1. */
int tc_trainer_eval(tc_trainer *trainer, tc_model *eval_model, const tc_tensor *inputs,
                    int num_inputs, double *loss, double *hits, double *counted);

/* The state: its number of tensors; tensor i's checkpoint key
 * ("conv1.weight", "conv1.weight.exp_avg", "optimizer.step") and type
 * (data NULL, memory HOST), -1 when i is out of range; and a copy of its
 * current value into `data`, host memory of exactly `bytes` (its size)
 * bytes (CUDA: copied on the last step's stream, which the call waits for). */
int tc_trainer_num_state(const tc_trainer *trainer);
int tc_trainer_state(const tc_trainer *trainer, int i, const char **key, tc_tensor *type);
int tc_trainer_read_state(tc_trainer *trainer, int i, void *data, size_t bytes);

/* Writes the state to `path` and its .optimizer.safetensors file, each
 * atomically (a temporary file renamed over it: a failed write leaves the
 * old file). Returns 0 or -1. */
int tc_trainer_save_checkpoint(tc_trainer *trainer, const char *path);
/* Reads both files and checks them against the model (a damaged file, a
 * tensor missing, extra or of another type: -1 and one line naming the file
 * and tensor) before it replaces the state; on error the state is as it
 * was. The next step continues from the checkpoint. Returns 0 or -1. */
int tc_trainer_load_checkpoint(tc_trainer *trainer, const char *path);

#ifdef __cplusplus
}
#endif

#endif /* TC_RUNTIME_H */
