/* The tc runtime's C API: load a compiled artifact (.tcx), bind inputs, run,
 * read outputs. Link with -ltcrt (installed by `cmake --install`); example:
 * docs/examples/run_model.c. Every call is safe to make with bad input: it
 * fails with -1 or NULL and tc_last_error() says why. A model is not
 * thread-safe: run it from one thread at a time (it splits kernels over its
 * own thread pool). */
#ifndef TC_RUNTIME_H
#define TC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tc_model tc_model;

#define TC_MAX_RANK 8

typedef struct tc_tensor {
  const char *dtype; /* "f32", "f16", "i64", "bool", ... as in the IR */
  int rank;
  int64_t dims[TC_MAX_RANK]; /* row-major; -1 for a symbolic dim in a signature */
  void *data;
  size_t bytes;
} tc_tensor;

/* Loads and checks an artifact; `threads` 0 = one per hardware thread. */
tc_model *tc_model_load(const char *path, unsigned threads);
void tc_model_free(tc_model *model);
/* The message of this thread's last failed call ("" if none). */
const char *tc_last_error(void);

int tc_model_num_inputs(const tc_model *model);
int tc_model_num_outputs(const tc_model *model);
/* Name and declared type (dims -1 where symbolic; data NULL) of input or
 * output i; -1 when i is out of range. */
int tc_model_input(const tc_model *model, int i, const char **name, tc_tensor *type);
int tc_model_output(const tc_model *model, int i, const char **name, tc_tensor *type);

/* Runs on `inputs` (in signature order; their data is only read). Fills
 * outputs[0 .. num_outputs); their data belongs to the model and stays valid
 * until the next run or tc_model_free. Returns 0, or -1 on error. */
int tc_model_run(tc_model *model, const tc_tensor *inputs, int num_inputs, tc_tensor *outputs,
                 int capacity);

#ifdef __cplusplus
}
#endif

#endif /* TC_RUNTIME_H */
