/* A run's output fed to the next run as ANOTHER input than the one whose
 * slot it was written in place of (c-api-fed-back.test): s = Add(c, n)
 * lands in c's slot (CudaRun.cpp inPlaceResults); the next run takes c from
 * the host and n = that s. The run must read n before c's upload overwrites
 * the slot: 10 + 3 = 13 each element, not 10 + 10. argv[1]: the artifact
 * (the stand-in driver loaded). */
#include <stdio.h>
#include <string.h>
#include <tc/Runtime/tc_runtime.h>

static tc_tensor host(float *data) {
  tc_tensor t;
  memset(&t, 0, sizeof t);
  t.dtype = "f32";
  t.rank = 1;
  t.dims[0] = 4;
  t.data = data;
  t.bytes = sizeof(float) * 4;
  return t;
}

int main(int argc, char **argv) {
  tc_model *m = argc > 1 ? tc_model_load(argv[1], 0) : NULL;
  if (!m) {
    printf("load: %s\n", tc_last_error());
    return 1;
  }
  float c[4] = {1, 1, 1, 1}, n[4] = {2, 2, 2, 2}, c2[4] = {10, 10, 10, 10}, got[4];
  tc_tensor in[2] = {host(c), host(n)}, out;
  memset(&out, 0, sizeof out);
  out.memory = TC_MEMORY_DEVICE; /* the model's device memory: s stays in c's slot */
  if (tc_model_run_on_stream(m, NULL, in, 2, &out, 1)) {
    printf("run 1: %s\n", tc_last_error());
    return 1;
  }
  tc_tensor again[2] = {host(c2), out}; /* n = the last run's s, on the device */
  tc_tensor res = host(got);
  memset(&res, 0, sizeof res);
  if (tc_model_run(m, again, 2, &res, 1)) {
    printf("run 2: %s\n", tc_last_error());
    return 1;
  }
  const float *s = (const float *)res.data;
  printf("s = %g %g %g %g\n", s[0], s[1], s[2], s[3]);
  tc_model_free(m);
  return 0;
}
