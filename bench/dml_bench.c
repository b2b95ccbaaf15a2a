/*
 * dml_bench.c — times dmlc's CPU runtime on one package and one .npy input.
 *
 *   dml_bench PKG INPUT.npy [--iterations N] [--warmup N] [--threads N]
 *
 * Prints one JSON line {"min_ms":..,"median_ms":..,"max_ms":..}: wall time
 * of dml_rt_session_set_input + dml_rt_session_run per iteration (ms),
 * the same span ONNX Runtime's session.run covers in cpu_bench.py.
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

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(
        stderr,
        "usage: dml_bench PKG INPUT.npy [--iterations N] [--warmup N] [--threads N]\n");
    return 2;
  }
  int iterations = 200, warmup = 20, threads = 1;
  for (int i = 3; i + 1 < argc; i += 2) {
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
  dml_tensor_t input;
  void *buf = NULL;
  dml_status_t s = dml_rt_model_load_file(argv[1], &model);
  if (!s) s = dml_npy_read_file(argv[2], &input, &buf);
  if (!s) s = dml_rt_session_create(model, "cpu", &sess);
  if (s) {
    dml_rt_model_release(model);
    free(buf);
    return fail(s);
  }
  double *times = (double *)malloc(sizeof(double) * (size_t)iterations);
  for (int i = 0; i < warmup + iterations && !s; i++) {
    double t0 = now_ms();
    s = dml_rt_session_set_input(sess, 0, &input);
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
  free(buf);
  return rc;
}
