/* The trainer's calls with bad arguments (c-api-train.test): each prints
 * its result and tc_last_error(). argv[1]: a CPU train step of the digits
 * CNN (batch 50: x f32[50,1,8,8], target i64[50]); argv[2]: an inference
 * artifact; argv[3]: a checkpoint of argv[1] missing a tensor; argv[4]:
 * the model's batches (train_model.c's file). A state that a refused call
 * or a failed run leaves must be the one before it: checked by reading it
 * back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tc/Runtime/tc_runtime.h>

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

enum { kBatch = 50, kPixels = kBatch * 64 };

/* Every state tensor's bytes, concatenated (malloc'd). */
static unsigned char *snapshot(tc_trainer *t, size_t *size) {
  size_t total = 0;
  unsigned char *all = NULL;
  for (int i = 0; i < tc_trainer_num_state(t); ++i) {
    tc_tensor type;
    tc_trainer_state(t, i, NULL, &type);
    size_t n = 4; /* every state tensor of this model is f32 */
    for (int d = 0; d < type.rank; ++d)
      n *= (size_t)type.dims[d];
    all = realloc(all, total + n + 1);
    if (tc_trainer_read_state(t, i, all + total, n) != 0)
      printf("read_state %d: %s\n", i, tc_last_error());
    total += n;
  }
  *size = total;
  return all;
}

static void same_state(tc_trainer *t, const unsigned char *before, size_t size, const char *what) {
  size_t n;
  unsigned char *now = snapshot(t, &n);
  printf("state after %s: %s\n", what,
         n == size && memcmp(now, before, n) == 0 ? "unchanged" : "CHANGED");
  free(now);
}

int main(int argc, char **argv) {
  if (argc != 5)
    return 2;
  SHOWP(tc_trainer_load(NULL, NULL));
  SHOWP(tc_trainer_load(argv[2], NULL));
  SHOWP(tc_trainer_model(NULL));
  SHOW(tc_trainer_num_inputs(NULL));
  SHOW(tc_trainer_num_state(NULL));
  SHOW(tc_trainer_state(NULL, 0, NULL, NULL));
  SHOW(tc_trainer_read_state(NULL, 0, NULL, 0));
  SHOW(tc_trainer_step(NULL, NULL, 0, NULL));
  SHOW(tc_trainer_save_checkpoint(NULL, "x.safetensors"));
  SHOW(tc_trainer_load_checkpoint(NULL, "x.safetensors"));

  tc_trainer *t = tc_trainer_load(argv[1], NULL);
  if (!t) {
    printf("load failed: %s\n", tc_last_error());
    return 1;
  }
  printf("backend %s, %d batch inputs, %d state tensors\n", tc_model_backend(tc_trainer_model(t)),
         tc_trainer_num_inputs(t), tc_trainer_num_state(t));
  SHOW(tc_trainer_state(t, -1, NULL, NULL));
  SHOW(tc_trainer_state(t, tc_trainer_num_state(t), NULL, NULL));
  float one;
  SHOW(tc_trainer_read_state(t, 0, &one, sizeof one));
  SHOW(tc_trainer_read_state(t, 99, &one, sizeof one));
  SHOW(tc_trainer_save_checkpoint(t, NULL));

  size_t size;
  unsigned char *before = snapshot(t, &size);
  SHOW(tc_trainer_load_checkpoint(t, argv[3]));
  same_state(t, before, size, "a bad checkpoint");

  FILE *f = fopen(argv[4], "rb");
  static float x[kPixels];
  static int64_t target[kBatch];
  if (!f || fread(x, sizeof x, 1, f) != 1 || fread(target, sizeof target, 1, f) != 1) {
    printf("cannot read %s\n", argv[4]);
    return 1;
  }
  fclose(f);
  tc_tensor in[2];
  memset(in, 0, sizeof in);
  tc_model_input(tc_trainer_model(t), 0, NULL, &in[0]);
  tc_model_input(tc_trainer_model(t), 1, NULL, &in[1]);
  in[0].data = x;
  in[0].bytes = sizeof x;
  in[1].data = target;
  in[1].bytes = sizeof target;
  double loss = -1;
  SHOW(tc_trainer_step(t, in, 1, &loss));
  SHOW(tc_trainer_step_on_stream(t, (void *)in, in, 2, &loss));
  in[1].bytes = 8;
  SHOW(tc_trainer_step(t, in, 2, &loss));
  in[1].bytes = sizeof target;
  in[0].memory = TC_MEMORY_DEVICE;
  SHOW(tc_trainer_step(t, in, 2, &loss));
  in[0].memory = TC_MEMORY_HOST;
  /* The right bytes for another shape: the run refuses it. */
  in[0].dims[0] = 25;
  in[0].dims[1] = 2;
  SHOW(tc_trainer_step(t, in, 2, &loss));
  same_state(t, before, size, "refused steps");
  in[0].dims[0] = kBatch;
  in[0].dims[1] = 1;

  /* A good step after all that: the first step's loss (train_model's). */
  SHOW(tc_trainer_step(t, in, 2, &loss));
  printf("loss %.6g\n", loss);
  SHOW(tc_trainer_step(t, in, 2, NULL));
  free(before);
  tc_trainer_free(t);
  return 0;
}
