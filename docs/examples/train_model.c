/* Trains a train step compiled by `tc-opt --train` through the C API
 * (CPU, or CUDA on device 0 with batches in host memory), printing each
 * step's loss as `tc-run --train --log-every 1` does ("step K/N  loss L").
 *
 *   tc-import cnn.onnx | tc-opt --train --optimizer=sgd:lr=0.05 -O2 \
 *     | tc-codegen --target=cpu -o cnn.train.tcx
 *   cc train_model.c -I$PREFIX/include -L$PREFIX/lib -ltcrt -Wl,-rpath,$PREFIX/lib -o train_model
 *   ./train_model cnn.train.tcx batches.bin 10 ck.safetensors [resume.safetensors|-] [eval.tcx]
 *
 * batches.bin holds batch after batch, each its inputs (the model's, then
 * the loss's target) as the raw little-endian C-order bytes of their
 * declared types; they are cycled. A resumed run goes on with the batch
 * after the last one trained (the state's optimizer.step), as tc-run
 * --resume does. After the last step it writes the checkpoint ("-": none)
 * and prints each state tensor's key, type and, for f32, the sum of its
 * values (read with tc_trainer_read_state). Given an eval step (tc-opt
 * --eval, same --loss), it then evaluates every batch on the trained state
 * with tc_trainer_eval and prints the mean loss and top-1 as tc-run --eval
 * does ("eval: B batches, S samples  loss L  top-1 A (H/C)").
 *
 * The loss is read back every step here; a loop that logs every N steps
 * passes NULL in between, and a CUDA step on a stream of its own then does
 * not wait for the device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tc/Runtime/tc_runtime.h>

static size_t element_bytes(const char *dtype) {
  static const struct {
    const char *name;
    size_t bytes;
  } sizes[] = {{"f64", 8}, {"f32", 4}, {"f16", 2}, {"bf16", 2}, {"i64", 8},
               {"i32", 4}, {"i16", 2}, {"i8", 1},  {"u8", 1},   {"bool", 1}};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i)
    if (strcmp(sizes[i].name, dtype) == 0)
      return sizes[i].bytes;
  return 0;
}

static size_t tensor_bytes(const tc_tensor *t) {
  size_t n = element_bytes(t->dtype);
  for (int d = 0; d < t->rank; ++d)
    n *= t->dims[d] < 0 ? 0 : (size_t)t->dims[d];
  return n;
}

static void print_type(const tc_tensor *t) {
  printf("%s[", t->dtype);
  for (int d = 0; d < t->rank; ++d)
    printf(d ? ",%lld" : "%lld", (long long)t->dims[d]);
  printf("]");
}

/* The whole file (malloc'd), its size in *size; NULL, said on stderr. */
static unsigned char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  unsigned char *data = NULL;
  long n = -1;
  if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (data = malloc((size_t)n + 1)) && fread(data, 1, (size_t)n, f) == (size_t)n) {
    fclose(f);
    *size = (size_t)n;
    return data;
  }
  fprintf(stderr, "train_model: cannot read %s\n", path);
  free(data);
  if (f)
    fclose(f);
  return NULL;
}

/* Index of the state tensor named `key`, or -1. */
static int state_index(const tc_trainer *trainer, const char *key) {
  for (int i = 0; i < tc_trainer_num_state(trainer); ++i) {
    const char *k;
    if (tc_trainer_state(trainer, i, &k, NULL) == 0 && strcmp(k, key) == 0)
      return i;
  }
  return -1;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s model.tcx batches.bin steps [checkpoint|-] [resume|-] [eval.tcx]\n",
            argv[0]);
    return 2;
  }
  int steps = atoi(argv[3]);
  const char *save = argc > 4 && strcmp(argv[4], "-") != 0 ? argv[4] : NULL;
  const char *resume = argc > 5 && strcmp(argv[5], "-") != 0 ? argv[5] : NULL;
  const char *eval_path = argc > 6 ? argv[6] : NULL;
  tc_trainer *trainer = tc_trainer_load(argv[1], NULL);
  if (!trainer) {
    fprintf(stderr, "train_model: %s\n", tc_last_error());
    return 1;
  }
  const tc_model *model = tc_trainer_model(trainer);
  int n = tc_trainer_num_inputs(trainer), status = 0;
  tc_tensor *inputs = calloc((size_t)n + 1, sizeof(tc_tensor));
  size_t batch_bytes = 0, file_bytes = 0;
  for (int i = 0; i < n; ++i) {
    tc_model_input(model, i, NULL, &inputs[i]);
    inputs[i].bytes = tensor_bytes(&inputs[i]);
    batch_bytes += inputs[i].bytes;
  }
  unsigned char *batches = read_file(argv[2], &file_bytes);
  size_t count = batch_bytes ? file_bytes / batch_bytes : 0;
  if (!batches || !count || count * batch_bytes != file_bytes) {
    if (batches)
      fprintf(stderr, "train_model: %s holds %zu bytes, not whole batches of %zu\n", argv[2],
              file_bytes, batch_bytes);
    status = 1;
  }

  /* A checkpoint replaces the initial state, checked whole first. */
  size_t done = 0;
  if (!status && resume) {
    int at = state_index(trainer, "optimizer.step");
    float step = 0;
    if (tc_trainer_load_checkpoint(trainer, resume) != 0 ||
        (at >= 0 && tc_trainer_read_state(trainer, at, &step, sizeof step) != 0)) {
      fprintf(stderr, "train_model: %s\n", tc_last_error());
      status = 1;
    }
    done = step > 0 ? (size_t)step : 0;
  }

  for (int s = 1; s <= steps && !status; ++s) {
    unsigned char *p = batches + (done + (size_t)s - 1) % count * batch_bytes;
    for (int i = 0; i < n; ++i) {
      inputs[i].data = p;
      p += inputs[i].bytes;
    }
    double loss;
    if (tc_trainer_step(trainer, inputs, n, &loss) != 0) {
      fprintf(stderr, "train_model: %s\n", tc_last_error());
      status = 1;
      break;
    }
    printf("step %d/%d  loss %.6g\n", s, steps, loss);
  }

  if (!status && save && tc_trainer_save_checkpoint(trainer, save) != 0) {
    fprintf(stderr, "train_model: %s\n", tc_last_error());
    status = 1;
  }
  for (int i = 0; i < tc_trainer_num_state(trainer) && !status; ++i) {
    const char *key;
    tc_tensor type;
    tc_trainer_state(trainer, i, &key, &type);
    printf("state %s ", key);
    print_type(&type);
    size_t bytes = tensor_bytes(&type);
    if (strcmp(type.dtype, "f32") == 0) {
      float *values = malloc(bytes + 1);
      double sum = 0;
      if (tc_trainer_read_state(trainer, i, values, bytes) != 0) {
        fprintf(stderr, "train_model: %s\n", tc_last_error());
        status = 1;
      }
      for (size_t k = 0; k < bytes / sizeof *values && !status; ++k)
        sum += values[k];
      printf(" sum %.9g", sum);
      free(values);
    }
    printf("\n");
  }

  /* The eval step on the trained state, batch by batch. */
  tc_model *eval = NULL;
  if (!status && eval_path && !(eval = tc_model_load(eval_path, 0))) {
    fprintf(stderr, "train_model: %s\n", tc_last_error());
    status = 1;
  }
  double loss_sum = 0, hits_sum = 0, counted_sum = 0;
  for (size_t b = 0; eval && !status && b < count; ++b) {
    unsigned char *p = batches + b * batch_bytes;
    for (int i = 0; i < n; ++i) {
      inputs[i].data = p;
      p += inputs[i].bytes;
    }
    double loss, hits, counted;
    if (tc_trainer_eval(trainer, eval, inputs, n, &loss, &hits, &counted) != 0) {
      fprintf(stderr, "train_model: %s\n", tc_last_error());
      status = 1;
    }
    loss_sum += loss, hits_sum += hits, counted_sum += counted;
  }
  if (eval && !status) {
    long long samples = (long long)count * (inputs[0].rank ? inputs[0].dims[0] : 1);
    printf("eval: %zu batches, %lld samples  loss %.6g", count, samples, loss_sum / (double)count);
    if (counted_sum >= 0)
      printf("  top-1 %.4g (%lld/%lld)", counted_sum > 0 ? hits_sum / counted_sum : 0.0,
             (long long)hits_sum, (long long)counted_sum);
    printf("\n");
  }
  if (eval)
    tc_model_free(eval);
  free(batches);
  free(inputs);
  tc_trainer_free(trainer);
  return status;
}
