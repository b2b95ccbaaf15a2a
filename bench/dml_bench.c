/*
 * dml_bench.c — times dmlc's CPU runtime on one package and its .npy inputs.
 *
 *   dml_bench PKG INPUT [INPUT...] [--iterations N] [--warmup N] [--threads N]
 *
 * Each INPUT is FILE.npy (the package's next input, in its order: the first
 * is input 0) or NAME=FILE.npy (the input of that name), at most 16; a model
 * of several inputs (a text model's input_ids and attention_mask) takes one
 * each. Prints one JSON line {"min_ms":..,"median_ms":..,"max_ms":..}: wall
 * time of the dml_rt_session_set_input calls + dml_rt_session_run per
 * iteration (ms), the same span ONNX Runtime's session.run covers in
 * cpu_bench.py. Errors (a missing file, an unknown input name, a shape over
 * the package's bounds) print the runtime's structured message and exit 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dml_cpu.h"
#include "dml_npy.h"
#include "dml_rt.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int fail(dml_status_t s) {
  char *msg = dml_status_format(s);
  fprintf(stderr, "%s\n", msg ? msg : "error");
  free(msg);
  dml_status_free(s);
  return 1;
}

enum { MAX_INPUTS = 16 };

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr,
            "usage: dml_bench PKG INPUT [INPUT...] [--iterations N] [--warmup N] "
            "[--threads N]\n  INPUT: FILE.npy (the next input) or NAME=FILE.npy\n");
    return 2;
  }
  int nin = 0;
  const char *in_arg[MAX_INPUTS];
  int argi = 2;
  for (; argi < argc && strncmp(argv[argi], "--", 2) != 0; argi++) {
    if (nin == MAX_INPUTS) {
      fprintf(stderr, "error: dml_bench: at most %d inputs\n", MAX_INPUTS);
      return 2;
    }
    in_arg[nin++] = argv[argi];
  }
  if (nin == 0) {
    fprintf(stderr, "error: dml_bench: no INPUT.npy given\n");
    return 2;
  }
  int iterations = 200, warmup = 20, threads = 1;
  for (int i = argi; i < argc; i += 2) {
    if (i + 1 >= argc) {
      fprintf(stderr, "error: dml_bench: flag '%s' needs a value\n", argv[i]);
      return 2;
    }
    if (!strcmp(argv[i], "--iterations"))
      iterations = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--warmup"))
      warmup = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--threads"))
      threads = atoi(argv[i + 1]);
    else {
      fprintf(stderr, "error: dml_bench: unknown flag '%s'\n", argv[i]);
      return 2;
    }
  }
  if (iterations < 1 || warmup < 0 || threads < 1) {
    fprintf(stderr, "error: dml_bench: iterations >= 1, warmup >= 0, threads >= 1\n");
    return 2;
  }
  dml_cpu_set_num_threads(threads);
  dml_rt_model_t *model = NULL;
  dml_rt_session_t *sess = NULL;
  dml_tensor_t input[MAX_INPUTS];
  void *buf[MAX_INPUTS] = {0};
  char *name[MAX_INPUTS] = {0}; /* NAME of NAME=FILE, else NULL (by position) */
  dml_status_t s = dml_rt_model_load_file(argv[1], &model);
  for (int k = 0; k < nin && !s; k++) {
    const char *file = in_arg[k], *eq = strchr(in_arg[k], '=');
    if (eq) {
      size_t n = (size_t)(eq - in_arg[k]);
      name[k] = (char *)malloc(n + 1);
      memcpy(name[k], in_arg[k], n);
      name[k][n] = 0;
      file = eq + 1;
    }
    s = dml_npy_read_file(file, &input[k], &buf[k]);
  }
  if (!s) s = dml_rt_session_create(model, "cpu", &sess);
  if (s) {
    dml_rt_model_release(model);
    for (int k = 0; k < nin; k++) free(buf[k]), free(name[k]);
    return fail(s);
  }
  double *times = (double *)malloc(sizeof(double) * (size_t)iterations);
  for (int i = 0; i < warmup + iterations && !s; i++) {
    double t0 = now_ms();
    for (int k = 0; k < nin && !s; k++)
      s = name[k] ? dml_rt_session_set_input_by_name(sess, name[k], &input[k])
                  : dml_rt_session_set_input(sess, (uint32_t)k, &input[k]);
    if (!s) s = dml_rt_session_run(sess);
    double t1 = now_ms();
    if (i >= warmup) times[i - warmup] = t1 - t0;
  }
  int rc = 0;
  if (s) {
    rc = fail(s);
  } else {
    qsort(times, (size_t)iterations, sizeof(double), cmp_double);
    printf("{\"min_ms\":%.6f,\"median_ms\":%.6f,\"max_ms\":%.6f}\n", times[0],
           times[iterations / 2], times[iterations - 1]);
  }
  free(times);
  dml_rt_session_release(sess);
  dml_rt_model_release(model);
  for (int k = 0; k < nin; k++) free(buf[k]), free(name[k]);
  return rc;
}
