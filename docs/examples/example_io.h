/* What the examples share: an input of the model's signature filled with
 * values on the host, and an output printed. Inputs: f32 element k is
 * (k % 11) / 8 - 0.5, i64 element k is k % 3 (test/Runtime/Inputs/
 * c_api_inputs.py writes the same for the reference executor). */
#ifndef TC_EXAMPLE_IO_H
#define TC_EXAMPLE_IO_H

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

/* Input i's type (symbolic dims at `dynamic`) into *t, and its values in
 * host memory (malloc'd; t->bytes set); NULL, said on stderr, for a dtype
 * the examples do not fill. */
static void *example_input(const tc_model *model, int i, int64_t dynamic, tc_tensor *t) {
  const char *name;
  tc_model_input(model, i, &name, t);
  for (int d = 0; d < t->rank; ++d)
    if (t->dims[d] < 0)
      t->dims[d] = dynamic;
  size_t n = elements(t);
  if (strcmp(t->dtype, "f32") == 0) {
    float *p = malloc(n * sizeof *p + 1);
    for (size_t k = 0; k < n; ++k)
      p[k] = (float)(k % 11) / 8 - 0.5f;
    t->bytes = n * sizeof *p;
    return p;
  }
  if (strcmp(t->dtype, "i64") == 0) {
    int64_t *p = malloc(n * sizeof *p + 1);
    for (size_t k = 0; k < n; ++k)
      p[k] = (int64_t)(k % 3);
    t->bytes = n * sizeof *p;
    return p;
  }
  fprintf(stderr, "input '%s' has dtype %s, which the examples do not fill\n", name, t->dtype);
  return NULL;
}

/* "output 0 'y': f32[3,4] v0 v1 ..." with the first 8 values of an f32
 * output; `values`: its bytes in host memory. */
static void example_print(const tc_model *model, int i, const tc_tensor *t, const void *values) {
  const char *name;
  tc_model_output(model, i, &name, NULL);
  printf("output %d '%s': %s[", i, name, t->dtype);
  for (int d = 0; d < t->rank; ++d)
    printf("%s%lld", d ? "," : "", (long long)t->dims[d]);
  printf("]");
  if (strcmp(t->dtype, "f32") == 0)
    for (size_t k = 0; k < elements(t) && k < 8; ++k)
      printf(" %.6f", ((const float *)values)[k]);
  printf("\n");
}

#endif /* TC_EXAMPLE_IO_H */
