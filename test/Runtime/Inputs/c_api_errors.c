/* Every C API call with bad arguments: each prints its result and
 * tc_last_error() (c-api-cuda.test). argv[1]: a CPU artifact of one f32
 * input and one output; argv[2]: a CUDA artifact of the same signature
 * (the stand-in driver loaded); argv[3]: argv[1] with its object section
 * damaged. */
#include <tc/Runtime/tc_runtime.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The call first, then its message (printf's arguments have no order). */
#define SHOW(call)                                                                                 \
  do {                                                                                             \
    int r_ = (int)(call);                                                                          \
    printf("%s = %d: %s\n", #call, r_, tc_last_error());                                           \
  } while (0)
#define SHOWP(call)                                                                                \
  do {                                                                                             \
    const void *p_ = (call);                                                                       \
    printf("%s = %s: %s\n", #call, p_ ? "ptr" : "NULL", tc_last_error());                          \
  } while (0)

int main(int argc, char **argv) {
  if (argc != 4)
    return 2;
  tc_load_options small = {4, 0, 0, 0}, noVerify = TC_LOAD_OPTIONS_INIT;
  noVerify.no_verify = 1;
  SHOWP(tc_model_load(NULL, 0));
  SHOWP(tc_model_load("/nonexistent.tcx", 0));
  SHOWP(tc_model_load_ex(argv[1], &small));
  SHOWP(tc_model_load(argv[3], 0));
  SHOWP(tc_model_load_ex(argv[3], &noVerify));
  /* Version 2's options (no no_verify): read, and verified. */
  tc_load_options v2 = TC_LOAD_OPTIONS_INIT;
  v2.size = offsetof(tc_load_options, no_verify);
  SHOWP(tc_model_load_ex(argv[3], &v2));
  /* Version 4's attention: a CUDA run option, checked at load. */
  tc_load_options flash = TC_LOAD_OPTIONS_INIT;
  flash.attention = "flash";
  SHOWP(tc_model_load_ex(argv[2], &flash));
  SHOW(tc_model_num_inputs(NULL));
  SHOW(tc_model_num_outputs(NULL));
  SHOWP(tc_model_backend(NULL));
  SHOW(tc_model_device_bytes(NULL, NULL, NULL));
  SHOW(tc_model_run(NULL, NULL, 0, NULL, 0));
  SHOW(tc_model_run_on_stream(NULL, NULL, NULL, 0, NULL, 0));
  SHOW(tc_model_set_communicator(NULL, NULL));

  tc_model *cpu = tc_model_load(argv[1], 1);
  tc_model *cuda = tc_model_load_ex(argv[2], NULL);
  if (!cpu || !cuda) {
    printf("load failed: %s\n", tc_last_error());
    return 1;
  }
  printf("backends: %s %s\n", tc_model_backend(cpu), tc_model_backend(cuda));
  int notAComm = 0;
  SHOW(tc_model_set_communicator(cpu, &notAComm));
  SHOW(tc_model_input(cpu, 5, NULL, NULL));
  SHOW(tc_model_output(cuda, -1, NULL, NULL));

  tc_tensor in, out[2];
  float x[10] = {0};
  tc_model_input(cpu, 0, NULL, &in);
  in.dims[0] = 2;
  in.data = x;
  in.bytes = 8 * sizeof(float);
  memset(out, 0, sizeof out);
  SHOW(tc_model_run(cpu, &in, 2, out, 1));
  SHOW(tc_model_run(cpu, &in, 1, out, 0));
  SHOW(tc_model_run_on_stream(cpu, (void *)&in, &in, 1, out, 1));
  in.memory = TC_MEMORY_DEVICE;
  SHOW(tc_model_run(cpu, &in, 1, out, 1));
  in.memory = (tc_memory)7;
  SHOW(tc_model_run(cuda, &in, 1, out, 1));
  in.memory = TC_MEMORY_HOST;
  in.dtype = "f99";
  SHOW(tc_model_run(cuda, &in, 1, out, 1));
  in.dtype = "f32";
  in.bytes = 12;
  SHOW(tc_model_run(cuda, &in, 1, out, 1));

  /* Device buffers: the stand-in driver's device memory is host memory. */
  in.memory = TC_MEMORY_DEVICE;
  SHOW(tc_model_run(cuda, &in, 1, out, 1));
  in.bytes = 8 * sizeof(float);
  in.data = NULL;
  SHOW(tc_model_run(cuda, &in, 1, out, 1));
  in.data = x;
  in.dims[1] = 5;
  in.bytes = sizeof x;
  SHOW(tc_model_run(cuda, &in, 1, out, 1));
  in.dims[1] = 4;
  in.bytes = 8 * sizeof(float);
  float y[8];
  out[0] = (tc_tensor){.memory = TC_MEMORY_DEVICE, .data = y, .bytes = 4};
  SHOW(tc_model_run_on_stream(cuda, NULL, &in, 1, out, 1));
  out[0] = (tc_tensor){.memory = TC_MEMORY_DEVICE, .data = y, .bytes = sizeof y};
  SHOW(tc_model_run_on_stream(cuda, NULL, &in, 1, out, 1));
  printf("out: %s rank %d [%lld,%lld] %zu bytes, %s memory, %s\n", out[0].dtype, out[0].rank,
         (long long)out[0].dims[0], (long long)out[0].dims[1], out[0].bytes,
         out[0].memory == TC_MEMORY_DEVICE ? "device" : "host",
         out[0].data == y ? "the caller's buffer" : "another buffer");
  tc_model_free(cpu);
  tc_model_free(cuda);
  tc_model_free(NULL);
  return 0;
}
