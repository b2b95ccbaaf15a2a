/*
 * dml_train_bench.c — training throughput of a precompiled training package
 * on any device, with the runtime only (no compiler, no zlib): the GPU
 * machines' side of issues 5 and 6's training benchmark (bench/gpu/
 * train_h200.sh), and the CPU's anywhere.
 *
 *   dml_train_bench PKG.dmlpkg --data DIR [--device cpu|vulkan[:N]|cuda[:N]]
 *                   [--batch-size N] [--epochs N] [--seed N] [--lr F]
 *                   [--threads N] [--limit N] [--no-shuffle]
 *                   [--step-losses N] [--rounds-stdin]
 *
 * PKG: a training package (train_step, eval_step, forward), e.g. from
 * `dmlc compile MODEL.onnx --train --target cpu,cuda,vulkan --batch-bound
 * 256 -o PKG` (docs/training.md). DIR: a folder of plain (uncompressed) IDX
 * files, train-*images* / train-*labels* and t10k-*images* / t10k-*labels*
 * (compiler/dml_train_data.h; this program reads them without zlib), or
 * X.npy,Y.npy (then there is no test split and no test accuracy).
 *
 * Trains --epochs epochs (dml_trainer_fit: shuffled by --seed, constant
 * learning rate --lr, no validation) and evaluates the test split with
 * eval_step. Prints JSON lines on stdout:
 *   {"event":"epoch", ..., "samples_per_s": S, ...}   one per epoch: S is
 *       the trainer's training rows / training time of the epoch (the train
 *       steps, batch upload and loss download included; data loading,
 *       package load and session creation excluded, as bench/train_bench.sh
 *       for `dmlc train`)
 *   {"event":"result", ..., "test_accuracy": A, ...}  once at the end
 * --limit N: only the first N rows of each split (smoke tests).
 * --step-losses N: also a line {"event":"step","step":S,"loss":L} for each
 *   of the first N training steps of the run (the batch's mean loss, as
 *   train_step returned it).
 * --rounds-stdin: instead of --epochs, reads lines from stdin, each a
 *   number of steps K; each is one more epoch (dml_trainer_fit continuing
 *   the same trainer) over the first K * --batch-size training rows (at
 *   most all of them), answered by its epoch line, flushed. "0" or the end
 *   of stdin ends the rounds (then the test split and the result line as
 *   usual). bench/gpu/train_models.py drives it so, interleaving its rounds
 *   with PyTorch's in one process, with the package loaded once.
 * Exit status: 0 on success, 1 on a runtime error (printed on stderr as
 * the runtime's structured status), 2 on bad flags.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "dml_cpu.h"
#include "dml_rt.h"
#include "dml_train_data.h"
#include "dml_trainer.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: dml_train_bench PKG.dmlpkg --data DIR|X.npy,Y.npy [--device D]\n"
          "                       [--batch-size N] [--epochs N] [--seed N] [--lr F]\n"
          "                       [--threads N] [--limit N] [--no-shuffle]\n"
          "                       [--step-losses N] [--rounds-stdin]\n"
          "Trains a precompiled training package (plain IDX or .npy data) and prints\n"
          "per-epoch samples/s and the test accuracy as JSON lines.\n");
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int parse_i64(const char *flag, const char *v, int64_t lo, int64_t hi,
                     int64_t *out) {
  char *end;
  errno = 0;
  long long x = v ? strtoll(v, &end, 10) : 0;
  if (!v || !*v || *end || errno || x < lo || x > hi) {
    fprintf(stderr,
            "error: dml_train_bench: %s needs an integer in [%" PRId64 ", %" PRId64
            "], got '%s'\n",
            flag, lo, hi, v ? v : "");
    return 0;
  }
  *out = (int64_t)x;
  return 1;
}

/* A JSON string of `s` (device names and paths: printable ASCII; anything
 * else is escaped as \u00XX). */
static void json_str(const char *s) {
  putchar('"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      printf("\\%c", c);
    else if (c < 0x20 || c >= 0x7f)
      printf("\\u%04x", c);
    else
      putchar(c);
  }
  putchar('"');
}

/* A JSON number, or null for NaN/inf. */
static void json_num(double v) {
  if (isfinite(v))
    printf("%.9g", v);
  else
    printf("null");
}

typedef struct bench_ctx {
  const char *device;
  int64_t batch_size;
  double sum_sps;
  int n;
  int64_t step_losses; /* --step-losses */
} bench_ctx_t;

static int on_batch(const dml_batch_metrics_t *b, void *user) {
  bench_ctx_t *c = (bench_ctx_t *)user;
  if ((int64_t)b->step <= c->step_losses) {
    printf("{\"event\":\"step\",\"step\":%" PRIu64 ",\"loss\":", b->step);
    json_num(b->loss);
    printf("}\n");
    fflush(stdout);
  }
  return 0;
}

/* --rounds-stdin: the next round's steps from a line of stdin; 0 at "0",
 * at the end of stdin or on a line that is not a count (said on stderr). */
static int64_t next_round(void) {
  char line[64];
  if (!fgets(line, sizeof line, stdin)) return 0;
  line[strcspn(line, "\r\n")] = 0;
  char *end;
  errno = 0;
  long long k = strtoll(line, &end, 10);
  while (*end == ' ') end++;
  if (end == line || *end || errno || k < 0) {
    fprintf(
        stderr,
        "error: dml_train_bench: --rounds-stdin: '%.40s' is not a step count; stopping\n",
        line);
    return 0;
  }
  return (int64_t)k;
}

static int on_epoch(dml_epoch_metrics_t *m, void *user) {
  bench_ctx_t *c = (bench_ctx_t *)user;
  printf("{\"event\":\"epoch\",\"device\":");
  json_str(c->device);
  printf(",\"batch_size\":%" PRId64 ",\"epoch\":%d,\"epochs\":%d,\"steps\":%" PRIu64
         ",\"loss\":",
         c->batch_size, m->epoch, m->epochs, m->step);
  json_num(m->loss);
  printf(",\"train_accuracy\":");
  json_num(m->accuracy);
  printf(",\"seconds\":");
  json_num(m->seconds);
  printf(",\"samples_per_s\":");
  json_num(m->samples_per_second);
  printf("}\n");
  fflush(stdout);
  c->sum_sps += m->samples_per_second;
  c->n++;
  return 0;
}

/* The first `limit` rows of `d` (all when limit <= 0 or larger). */
static dml_dataset_t rows(const dml_data_t *d, int64_t limit) {
  dml_dataset_t s = {.x = d->x, .y = d->y};
  if (limit > 0 && limit < s.x.dims[0]) {
    dml_dataset_t v;
    dml_status_t st = dml_dataset_slice(&s, 0, limit, &v);
    if (!st) return v;
    dml_status_free(st);
  }
  return s;
}

static int report(dml_status_t st) {
  char *msg = dml_status_format(st);
  fprintf(stderr, "%s\n", msg ? msg : "error: (out of memory formatting the error)");
  free(msg);
  dml_status_free(st);
  return 1;
}

int main(int argc, char **argv) {
  const char *pkg = NULL, *data = NULL, *device = "cpu";
  int64_t batch = 32, epochs = 1, seed = 0, threads = 1, limit = 0;
  double lr = 1e-3;
  int shuffle = 1, rounds_stdin = 0;
  int64_t step_losses = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--data") && v) {
      data = v;
      i++;
    } else if (!strcmp(a, "--device") && v) {
      device = v;
      i++;
    } else if (!strcmp(a, "--batch-size")) {
      if (!parse_i64(a, v, 1, (int64_t)1 << 31, &batch)) return 2;
      i++;
    } else if (!strcmp(a, "--epochs")) {
      if (!parse_i64(a, v, 1, 1000000, &epochs)) return 2;
      i++;
    } else if (!strcmp(a, "--seed")) {
      if (!parse_i64(a, v, 0, INT64_MAX, &seed)) return 2;
      i++;
    } else if (!strcmp(a, "--threads")) {
      if (!parse_i64(a, v, 1, 64, &threads)) return 2;
      i++;
    } else if (!strcmp(a, "--limit")) {
      if (!parse_i64(a, v, 1, INT64_MAX, &limit)) return 2;
      i++;
    } else if (!strcmp(a, "--lr")) {
      char *end;
      errno = 0;
      lr = v ? strtod(v, &end) : 0;
      if (!v || !*v || *end || errno || !(lr > 0) || !isfinite(lr)) {
        fprintf(stderr, "error: dml_train_bench: --lr needs a positive number\n");
        return 2;
      }
      i++;
    } else if (!strcmp(a, "--step-losses")) {
      if (!parse_i64(a, v, 0, INT64_MAX, &step_losses)) return 2;
      i++;
    } else if (!strcmp(a, "--rounds-stdin")) {
      rounds_stdin = 1;
    } else if (!strcmp(a, "--no-shuffle")) {
      shuffle = 0;
    } else if (a[0] == '-' || pkg) {
      fprintf(stderr, "error: dml_train_bench: unexpected argument '%s'\n", a);
      usage(stderr);
      return 2;
    } else {
      pkg = a;
    }
  }
  if (!pkg || !data) {
    usage(stderr);
    return 2;
  }
  dml_cpu_set_num_threads((int)threads);

  dml_rt_model_t *m = NULL;
  dml_trainer_t *t = NULL;
  dml_data_t train, test;
  memset(&train, 0, sizeof train);
  memset(&test, 0, sizeof test);
  dml_history_t h;
  memset(&h, 0, sizeof h);
  double t0 = now_s();
  dml_status_t st = dml_rt_model_load_file(pkg, &m);
  if (!st) st = dml_trainer_create(m, device, &t);
  if (st) goto out;
  if (batch > dml_trainer_batch_bound(t)) {
    st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, "train_bench",
                         "--batch-size %" PRId64
                         " is above the package's batch bound %" PRId64,
                         batch, dml_trainer_batch_bound(t));
    goto out;
  }
  double t_open = now_s() - t0;

  dml_rt_io_info_t xi, yi;
  dml_trainer_io_info(t, &xi, &yi);
  dml_data_options_t dopt;
  dml_data_options_init(&dopt);
  t0 = now_s();
  st = dml_data_load(data, "train", &dopt, &train);
  if (!st) st = dml_data_adapt(&train, &xi, &yi);
  if (st) {
    st = dml_status_annotate(st, "reading the training split of --data");
    goto out;
  }
  struct stat sb;
  int have_test = stat(data, &sb) == 0 && S_ISDIR(sb.st_mode);
  if (have_test) {
    st = dml_data_load(data, "test", &dopt, &test);
    if (!st) st = dml_data_adapt(&test, &xi, &yi);
    if (st) {
      st = dml_status_annotate(st, "reading the test split of --data");
      goto out;
    }
  }
  double t_data = now_s() - t0;
  dml_dataset_t tr = rows(&train, limit), te = rows(&test, limit);

  bench_ctx_t ctx = {device, batch, 0.0, 0, step_losses};
  dml_fit_options_t o;
  dml_fit_options_init(&o);
  o.epochs = (int32_t)epochs;
  o.validation_split = 0; /* trains on every training row; tests on the test set */
  o.batch_size = batch;
  o.shuffle = shuffle;
  o.seed = (uint64_t)seed;
  o.lr.kind = DML_LR_CONSTANT;
  o.lr.initial = lr;
  o.verbose = 0;
  o.callback = on_epoch;
  if (step_losses > 0) o.batch_callback = on_batch;
  o.user_data = &ctx;
  t0 = now_s();
  if (!rounds_stdin) {
    st = dml_trainer_fit(t, &tr, &o, &h);
  } else {
    /* one fit of one more epoch per line; h keeps the last round's epoch */
    epochs = 0;
    for (int64_t k; !st && (k = next_round()) > 0;) {
      int64_t rows_all = tr.x.dims[0];
      int64_t n = k < (rows_all + batch - 1) / batch ? k * batch : rows_all;
      dml_dataset_t part;
      st = dml_dataset_slice(&tr, 0, n, &part);
      if (st) break;
      o.epochs = (int32_t)++epochs;
      dml_history_free(&h);
      memset(&h, 0, sizeof h);
      st = dml_trainer_fit(t, &part, &o, &h);
    }
  }
  if (st) goto out;
  double t_fit = now_s() - t0;

  double test_loss = NAN, test_acc = NAN, t_eval = 0;
  if (have_test) {
    t0 = now_s();
    st = dml_trainer_evaluate(t, &te, 0, &test_loss, &test_acc);
    if (st) goto out;
    t_eval = now_s() - t0;
  }
  printf("{\"event\":\"result\",\"device\":");
  json_str(device);
  printf(",\"package\":");
  json_str(pkg);
  printf(",\"batch_size\":%" PRId64 ",\"batch_bound\":%" PRId64 ",\"epochs\":%" PRId64
         ",\"seed\":%" PRId64 ",\"lr\":%g,\"train_rows\":%" PRId64
         ",\"test_rows\":%" PRId64,
         batch, dml_trainer_batch_bound(t), epochs, seed, lr, tr.x.dims[0],
         have_test ? te.x.dims[0] : (int64_t)0);
  printf(",\"samples_per_s_mean\":");
  json_num(ctx.n ? ctx.sum_sps / ctx.n : NAN);
  printf(",\"samples_per_s_last\":");
  json_num(h.n_epochs ? h.epochs[h.n_epochs - 1].samples_per_second : NAN);
  printf(",\"final_loss\":");
  json_num(h.n_epochs ? h.epochs[h.n_epochs - 1].loss : NAN);
  printf(",\"test_loss\":");
  json_num(test_loss);
  printf(",\"test_accuracy\":");
  json_num(test_acc);
  printf(",\"open_s\":%.3f,\"data_s\":%.3f,\"fit_s\":%.3f,\"eval_s\":%.3f}\n", t_open,
         t_data, t_fit, t_eval);
out:
  dml_history_free(&h);
  dml_data_free(&train);
  dml_data_free(&test);
  dml_trainer_release(t);
  dml_rt_model_release(m);
  return st ? report(st) : 0;
}
