/* Runs a compiled tc artifact through the C API with every input filled
 * with one value, and prints each output's type and first values.
 *
 *   cmake --install build --prefix $PREFIX
 *   cc run_model.c -I$PREFIX/include -L$PREFIX/lib -ltcrt -Wl,-rpath,$PREFIX/lib -o run_model
 *   ./run_model model.tcx 2        # symbolic dims of the inputs set to 2
 */
#include <tc/Runtime/tc_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t elements(const tc_tensor *t) {
  size_t n = 1;
  for (int d = 0; d < t->rank; ++d)
    n *= (size_t)t->dims[d];
  return n;
}

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
  tc_tensor *inputs = calloc((size_t)n, sizeof(tc_tensor));
  tc_tensor *outputs = calloc((size_t)m, sizeof(tc_tensor));
  for (int i = 0; i < n; ++i) {
    const char *name;
    tc_model_input(model, i, &name, &inputs[i]);
    for (int d = 0; d < inputs[i].rank; ++d)
      if (inputs[i].dims[d] < 0)
        inputs[i].dims[d] = dynamic;
    size_t count = elements(&inputs[i]);
    if (strcmp(inputs[i].dtype, "f32") == 0) {
      float *p = malloc(count * sizeof(float));
      for (size_t k = 0; k < count; ++k)
        p[k] = 0.5f;
      inputs[i].data = p;
      inputs[i].bytes = count * sizeof(float);
    } else if (strcmp(inputs[i].dtype, "i64") == 0) {
      int64_t *p = malloc(count * sizeof(int64_t));
      for (size_t k = 0; k < count; ++k)
        p[k] = 1;
      inputs[i].data = p;
      inputs[i].bytes = count * sizeof(int64_t);
    } else {
      fprintf(stderr, "run_model: input '%s' has dtype %s, which this example does not fill\n", name,
              inputs[i].dtype);
      return 1;
    }
  }
  if (tc_model_run(model, inputs, n, outputs, m) != 0) {
    fprintf(stderr, "run_model: %s\n", tc_last_error());
    return 1;
  }
  for (int i = 0; i < m; ++i) {
    const char *name;
    tc_model_output(model, i, &name, NULL);
    printf("output %d '%s': %s[", i, name, outputs[i].dtype);
    for (int d = 0; d < outputs[i].rank; ++d)
      printf("%s%lld", d ? "," : "", (long long)outputs[i].dims[d]);
    printf("]");
    if (strcmp(outputs[i].dtype, "f32") == 0) {
      const float *p = outputs[i].data;
      size_t count = elements(&outputs[i]);
      for (size_t k = 0; k < count && k < 4; ++k)
        printf(" %.6f", p[k]);
    }
    printf("\n");
  }
  for (int i = 0; i < n; ++i)
    free(inputs[i].data);
  free(inputs);
  free(outputs);
  tc_model_free(model);
  return 0;
}
