/*
 * dml_serve_bench — the serving object (runtime/serve/dml_serve.h) under
 * load without HTTP: THREADS callers each send one-row requests (rows of
 * INPUT.npy in turn) through dml_serve_run for SECONDS, then it prints
 * requests per second and the serving statistics as one JSON line.
 *
 *   dml_serve_bench PKG INPUT.npy [--threads 64] [--seconds 10]
 *                   [--batch-size N] [--batch-timeout-ms T] [--instances K]
 *                   [--device cpu|vulkan[:N]]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dml_npy.h"
#include "dml_rt.h"
#include "dml_serve.h"

typedef struct {
  dml_serve_t *srv;
  const dml_tensor_t *x;
  int tid;
} caller_t;

static atomic_int g_stop;
static atomic_llong g_done, g_failed;

static void *caller(void *arg) {
  caller_t *c = (caller_t *)arg;
  int64_t rows = c->x->dims[0];
  size_t row_bytes = dml_tensor_bytes(c->x) / (size_t)rows;
  for (int64_t i = c->tid; !atomic_load(&g_stop); i++) {
    dml_tensor_t t = *c->x;
    t.dims[0] = 1;
    t.data = (char *)c->x->data + (size_t)(i % rows) * row_bytes;
    dml_tensor_t *out = NULL;
    dml_status_t st = dml_serve_run(c->srv, &t, 1, &out);
    if (st) {
      atomic_fetch_add(&g_failed, 1);
      dml_status_free(st);
    } else {
      atomic_fetch_add(&g_done, 1);
    }
    dml_serve_outputs_free(out);
  }
  return NULL;
}

static int fail(dml_status_t st) {
  char *msg = dml_status_format(st);
  fprintf(stderr, "%s\n", msg ? msg : "error");
  free(msg);
  dml_status_free(st);
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr,
            "usage: dml_serve_bench PKG INPUT.npy [--threads N] [--seconds S] "
            "[--batch-size N] [--batch-timeout-ms T] [--instances K] [--device D]\n");
    return 2;
  }
  int threads = 64;
  double seconds = 10;
  dml_serve_config_t cfg;
  dml_serve_config_init(&cfg);
  for (int i = 3; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--threads"))
      threads = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--seconds"))
      seconds = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--batch-size"))
      cfg.batch_size = atoll(argv[i + 1]);
    else if (!strcmp(argv[i], "--batch-timeout-ms"))
      cfg.batch_timeout_ms = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--instances"))
      cfg.instances = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--device"))
      cfg.device = argv[i + 1];
    else {
      fprintf(stderr, "unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  if (threads < 1 || threads > 1024) return 2;
  dml_rt_model_t *m = NULL;
  dml_status_t st = dml_rt_model_load_file(argv[1], &m);
  if (st) return fail(st);
  dml_tensor_t x;
  void *buf = NULL;
  st = dml_npy_read_file(argv[2], &x, &buf);
  if (st) return fail(st);
  dml_serve_t *srv = NULL;
  st = dml_serve_create(m, &cfg, &srv);
  if (st) return fail(st);
  pthread_t *th = (pthread_t *)calloc((size_t)threads, sizeof *th);
  caller_t *cl = (caller_t *)calloc((size_t)threads, sizeof *cl);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < threads; i++) {
    cl[i] = (caller_t){srv, &x, i};
    pthread_create(&th[i], NULL, caller, &cl[i]);
  }
  struct timespec nap = {(time_t)seconds,
                         (long)((seconds - (double)(time_t)seconds) * 1e9)};
  nanosleep(&nap, NULL);
  atomic_store(&g_stop, 1);
  for (int i = 0; i < threads; i++) pthread_join(th[i], NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double el = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  dml_serve_stats_t s;
  dml_serve_get_stats(srv, &s);
  printf(
      "{\"threads\":%d,\"batch_size\":%lld,\"instances\":%d,\"seconds\":%.2f,"
      "\"requests_per_s\":%.0f,\"failed\":%lld,\"rows_per_run\":%.2f,"
      "\"latency_ms\":{\"p50\":%.3f,\"p90\":%.3f,\"p99\":%.3f},"
      "\"queue_ms\":{\"p50\":%.3f,\"p99\":%.3f}}\n",
      threads, (long long)dml_serve_batch_size(srv), cfg.instances, el,
      (double)atomic_load(&g_done) / el, (long long)atomic_load(&g_failed),
      s.mean_rows_per_run, s.latency_ms_p50, s.latency_ms_p90, s.latency_ms_p99,
      s.queue_ms_p50, s.queue_ms_p99);
  dml_serve_release(srv);
  free(th);
  free(cl);
  free(buf);
  dml_rt_model_release(m);
  return 0;
}
