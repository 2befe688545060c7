/* Runs a compiled tc artifact (CPU, or CUDA on device 0) through the C API
 * with its inputs in host memory (example_io.h fills them), and prints each
 * output's type and first values.
 *
 *   cmake --install build --prefix $PREFIX
 *   cc run_model.c -I$PREFIX/include -L$PREFIX/lib -ltcrt -Wl,-rpath,$PREFIX/lib -o run_model
 *   ./run_model model.tcx 2        # symbolic dims of the inputs set to 2
 */
#include "example_io.h"

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s model.tcx [size of symbolic dims]\n", argv[0]);
    return 2;
  }
  int64_t dynamic = argc > 2 ? atoll(argv[2]) : 1;
  tc_model *model = tc_model_load(argv[1], 0);
  if (!model) {
    fprintf(stderr, "run_model: %s\n", tc_last_error());
    return 1;
  }
  int n = tc_model_num_inputs(model), m = tc_model_num_outputs(model);
  tc_tensor *inputs = calloc((size_t)n + 1, sizeof(tc_tensor));
  tc_tensor *outputs = calloc((size_t)m + 1, sizeof(tc_tensor));
  int status = 0;
  for (int i = 0; i < n && !status; ++i)
    status = !(inputs[i].data = example_input(model, i, dynamic, &inputs[i]));
  /* The outputs' data is the model's, valid until the next run. A size the
   * model does not support (past its guards) is refused here, one line. */
  if (!status && tc_model_run(model, inputs, n, outputs, m) != 0) {
    fprintf(stderr, "run_model: %s\n", tc_last_error());
    status = 1;
  }
  for (int i = 0; i < m && !status; ++i)
    example_print(model, i, &outputs[i], outputs[i].data);
  for (int i = 0; i < n; ++i)
    free(inputs[i].data);
  free(inputs);
  free(outputs);
  tc_model_free(model);
  return status;
}
