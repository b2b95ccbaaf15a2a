/*
 * Tests of the serving object (runtime/serve/dml_serve.h) on fashion_mlp
 * (../shared/models, else examples/), compiled in the test.
 *
 * The acceptance test: 64 threads x 1,000 requests of 1-8 rows each (a
 * tenth of them asynchronous), every reply compared bit for bit (memcmp,
 * no tolerance) with the answer of a plain session to the same request
 * alone, and every request answered exactly once. CTest runs it in the
 * normal, AddressSanitizer and ThreadSanitizer builds (scripts/test.sh).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_driver.h"
#include "dml_rt.h"
#include "dml_serve.h"
#include "dml_test.h"

#define POOL 256 /* distinct input rows */
#define MAXN 8   /* rows per request, 1..MAXN */
#define THREADS 64
#define PER_THREAD 1000
#define FEAT 784
#define CLASSES 10

static float g_pool[POOL + 64][FEAT];
/* g_ref[start][n-1]: a plain session's answer to rows [start, start+n). */
static float *g_ref[POOL][MAXN];

/* fashion_mlp compiled with `o` (NULL: defaults) and loaded. */
static dml_rt_model_t *load_mlp(const dml_compile_options_t *o) {
  char path[2048];
  const char *shared = getenv("DMLC_SHARED_DIR"), *src = getenv("DMLC_SOURCE_DIR");
  size_t len = 0;
  uint8_t *bytes = NULL;
  if (shared) {
    snprintf(path, sizeof path, "%s/models/fashion_mlp.onnx", shared);
    bytes = (uint8_t *)dml_test_read_file(path, &len);
  }
  if (!bytes) {
    snprintf(path, sizeof path, "%s/examples/fashion_mlp.onnx", src ? src : ".");
    bytes = (uint8_t *)dml_test_read_file(path, &len);
  }
  CHECK(bytes != NULL);
  if (!bytes) return NULL;
  void *pkg = NULL;
  size_t pkg_size = 0;
  dml_status_t st = dml_compile_onnx_memory(bytes, len, NULL, "fashion_mlp.onnx", o, &pkg,
                                            &pkg_size, NULL);
  free(bytes);
  CHECK_OK(st);
  if (st) return NULL;
  dml_rt_model_t *m = NULL;
  CHECK_OK(dml_rt_model_load_memory(pkg, pkg_size, &m));
  free(pkg);
  return m;
}

static dml_tensor_t rows_tensor(int start, int n) {
  dml_tensor_t t = {DML_DTYPE_F32, 2, {n, FEAT}, g_pool[start]};
  return t;
}

/* Fills the pool (deterministic pseudo-random pixels in [0, 1)) and the
 * reference answers, one plain-session run per distinct request. */
static int make_refs(dml_rt_model_t *m) {
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (int r = 0; r < POOL + 64; r++)
    for (int k = 0; k < FEAT; k++) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      g_pool[r][k] = (float)(x >> 40) / (float)(1u << 24);
    }
  dml_rt_session_t *se = NULL;
  CHECK_OK(dml_rt_session_create(m, "cpu", &se));
  if (!se) return -1;
  int ok = 1;
  for (int start = 0; start < POOL && ok; start++)
    for (int n = 1; n <= MAXN && ok; n++) {
      dml_tensor_t t = rows_tensor(start, n), y;
      dml_status_t st = dml_rt_session_set_input(se, 0, &t);
      if (!st) st = dml_rt_session_run(se);
      if (!st) st = dml_rt_session_get_output(se, 0, &y);
      CHECK_OK(st);
      if (st) ok = 0;
      if (!ok) break;
      g_ref[start][n - 1] = (float *)malloc(sizeof(float) * (size_t)(n * CLASSES));
      memcpy(g_ref[start][n - 1], y.data, sizeof(float) * (size_t)(n * CLASSES));
    }
  dml_rt_session_release(se);
  return ok ? 0 : -1;
}

static void free_refs(void) {
  for (int s = 0; s < POOL; s++)
    for (int n = 0; n < MAXN; n++) {
      free(g_ref[s][n]);
      g_ref[s][n] = NULL;
    }
}

/* 1 when `out` is exactly the reference for (start, n). */
static int reply_ok(const dml_tensor_t *out, uint32_t n_out, int start, int n) {
  return n_out == 1 && out[0].dtype == DML_DTYPE_F32 && out[0].rank == 2 &&
         out[0].dims[0] == n && out[0].dims[1] == CLASSES &&
         memcmp(out[0].data, g_ref[start][n - 1],
                sizeof(float) * (size_t)(n * CLASSES)) == 0;
}

/* ---- the acceptance test ---------------------------------------------- */

typedef struct {
  dml_serve_t *srv;
  int tid;
} client_t;

static atomic_int g_answers[THREADS * PER_THREAD];
static atomic_int g_wrong, g_errors;
static atomic_llong g_rows_sent;

typedef struct {
  int id, start, n;
} async_req_t;

static void async_done(void *user, dml_status_t st, dml_tensor_t *out, uint32_t n_out) {
  async_req_t *a = (async_req_t *)user;
  atomic_fetch_add(&g_answers[a->id], 1);
  if (st) {
    atomic_fetch_add(&g_errors, 1);
    dml_status_free(st);
  } else if (!reply_ok(out, n_out, a->start, a->n)) {
    atomic_fetch_add(&g_wrong, 1);
  }
  dml_serve_outputs_free(out);
  free(a);
}

static void *client(void *arg) {
  client_t *c = (client_t *)arg;
  uint64_t x = 0x2545f4914f6cdd1dull * (uint64_t)(c->tid + 1);
  for (int i = 0; i < PER_THREAD; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    int n = 1 + (int)(x % MAXN), start = (int)((x >> 8) % POOL);
    int id = c->tid * PER_THREAD + i;
    dml_tensor_t t = rows_tensor(start, n);
    atomic_fetch_add(&g_rows_sent, n);
    if (i % 10 == 9) {
      async_req_t *a = (async_req_t *)malloc(sizeof *a);
      *a = (async_req_t){id, start, n};
      dml_status_t st = dml_serve_submit(c->srv, &t, 1, async_done, a);
      if (st) {
        atomic_fetch_add(&g_errors, 1);
        dml_status_free(st);
        free(a);
      }
      continue;
    }
    dml_tensor_t *out = NULL;
    dml_status_t st = dml_serve_run(c->srv, &t, 1, &out);
    atomic_fetch_add(&g_answers[id], 1);
    if (st) {
      atomic_fetch_add(&g_errors, 1);
      dml_status_free(st);
    } else if (!reply_ok(out, 1, start, n)) {
      atomic_fetch_add(&g_wrong, 1);
    }
    dml_serve_outputs_free(out);
  }
  return NULL;
}

static dml_rt_model_t *g_model;

static void test_concurrent_bit_identical(void) {
  dml_serve_config_t cfg;
  dml_serve_config_init(&cfg);
  cfg.batch_size = 32;
  cfg.batch_timeout_ms = 1;
  cfg.instances = 2;
  dml_serve_t *srv = NULL;
  CHECK_OK(dml_serve_create(g_model, &cfg, &srv));
  if (!srv) return;
  CHECK(dml_serve_is_batched(srv) == 1);
  CHECK(dml_serve_batch_size(srv) == 32);
  pthread_t th[THREADS];
  client_t cl[THREADS];
  for (int i = 0; i < THREADS; i++) {
    cl[i] = (client_t){srv, i};
    CHECK(pthread_create(&th[i], NULL, client, &cl[i]) == 0);
  }
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  dml_serve_shutdown(srv, 1); /* drains the asynchronous ones */
  int lost = 0, dup = 0;
  for (int i = 0; i < THREADS * PER_THREAD; i++) {
    int a = atomic_load(&g_answers[i]);
    lost += a == 0;
    dup += a > 1;
  }
  dml_serve_stats_t st;
  dml_serve_get_stats(srv, &st);
  char line[512];
  printf("64 x 1000 requests: %s\n", dml_serve_stats_str(&st, line, sizeof line));
  CHECK(lost == 0);
  CHECK(dup == 0);
  CHECK(atomic_load(&g_wrong) == 0);
  CHECK(atomic_load(&g_errors) == 0);
  CHECK(st.requests == THREADS * PER_THREAD);
  CHECK(st.requests_failed == 0);
  CHECK(st.rows == (uint64_t)atomic_load(&g_rows_sent));
  CHECK(st.run_rows == st.rows);
  CHECK(st.runs >= st.rows / 32 && st.runs < st.requests);
  CHECK(st.mean_rows_per_run > 1.5); /* 64 callers, 2 instances: batches fill */
  CHECK(st.queued_requests == 0 && st.queued_rows == 0);
  CHECK(st.latency_ms_p50 > 0 && st.latency_ms_p50 <= st.latency_ms_p90 &&
        st.latency_ms_p90 <= st.latency_ms_p99 &&
        st.latency_ms_p99 <= st.latency_ms_max * 1.01);
  CHECK(st.queue_ms_p50 <= st.queue_ms_p90 && st.queue_ms_p90 <= st.queue_ms_p99);
  dml_serve_release(srv);
}

/* ---- splitting, errors, shut-down, unbatched -------------------------- */

/* A 37-row request through batches of 4 (split over 10 runs) equals a
 * plain session's 37-row answer bit for bit. */
static void test_split_large_request(void) {
  dml_serve_config_t cfg;
  dml_serve_config_init(&cfg);
  cfg.batch_size = 4;
  cfg.batch_timeout_ms = 0;
  cfg.instances = 3;
  dml_serve_t *srv = NULL;
  CHECK_OK(dml_serve_create(g_model, &cfg, &srv));
  if (!srv) return;
  dml_rt_session_t *se = NULL;
  CHECK_OK(dml_rt_session_create(g_model, NULL, &se));
  dml_tensor_t t = rows_tensor(5, 37), y, *out = NULL;
  CHECK_OK(dml_rt_session_set_input(se, 0, &t));
  CHECK_OK(dml_rt_session_run(se));
  CHECK_OK(dml_rt_session_get_output(se, 0, &y));
  CHECK_OK(dml_serve_run(srv, &t, 1, &out));
  CHECK(out && out[0].dims[0] == 37 && out[0].dims[1] == CLASSES);
  if (out) CHECK(memcmp(out[0].data, y.data, sizeof(float) * 37 * CLASSES) == 0);
  dml_serve_outputs_free(out);
  dml_serve_stats_t st;
  dml_serve_get_stats(srv, &st);
  CHECK(st.runs == 10 && st.run_rows == 37 && st.requests == 1 && st.rows == 37);
  dml_rt_session_release(se);
  dml_serve_release(srv);
}

static void never_called(void *user, dml_status_t st, dml_tensor_t *out, uint32_t n) {
  atomic_fetch_add((atomic_int *)user, 1);
  dml_status_free(st);
  dml_serve_outputs_free(out);
}

static void test_errors(void) {
  dml_serve_config_t cfg;
  dml_serve_config_init(&cfg);
  dml_serve_t *srv = NULL;
  cfg.batch_size = 65;
  CHECK_ERROR(dml_serve_create(g_model, &cfg, &srv), DML_STATUS_INVALID_ARGUMENT,
              "batch size 65 exceeds the package's batch bound 64");
  cfg.batch_size = 8;
  cfg.instances = 0;
  CHECK_ERROR(dml_serve_create(g_model, &cfg, &srv), DML_STATUS_INVALID_ARGUMENT,
              "instances must be in [1, 256], not 0");
  cfg.instances = 1;
  cfg.batch_timeout_ms = -1;
  CHECK_ERROR(dml_serve_create(g_model, &cfg, &srv), DML_STATUS_INVALID_ARGUMENT,
              "batch timeout must be in");
  cfg.batch_timeout_ms = 1;
  cfg.device = "tpu";
  CHECK_ERROR(dml_serve_create(g_model, &cfg, &srv), DML_STATUS_UNIMPLEMENTED,
              "device 'tpu' is not available");
  cfg.device = NULL;
  CHECK(srv == NULL);
  CHECK_OK(dml_serve_create(g_model, &cfg, &srv));
  if (!srv) return;
  atomic_int calls = 0;
  dml_tensor_t *out = NULL, t = rows_tensor(0, 2), two[2] = {t, t};
  CHECK_ERROR(dml_serve_run(srv, two, 2, &out), DML_STATUS_INVALID_ARGUMENT,
              "the model takes 1 inputs, 2 given");
  dml_tensor_t bad = t;
  bad.dtype = DML_DTYPE_F64;
  CHECK_ERROR(dml_serve_run(srv, &bad, 1, &out), DML_STATUS_INVALID_ARGUMENT,
              "input 'input': wrong dtype");
  bad = t;
  bad.dims[1] = 783;
  CHECK_ERROR(dml_serve_submit(srv, &bad, 1, never_called, &calls),
              DML_STATUS_INVALID_ARGUMENT, "expected f32[batch,784], got f32[2,783]");
  bad = t;
  bad.rank = 1;
  CHECK_ERROR(dml_serve_run(srv, &bad, 1, &out), DML_STATUS_INVALID_ARGUMENT,
              "wrong rank");
  bad = t;
  bad.dims[0] = 0;
  CHECK_ERROR(dml_serve_run(srv, &bad, 1, &out), DML_STATUS_INVALID_ARGUMENT,
              "a request needs at least one row");
  bad = t;
  bad.data = NULL;
  CHECK_ERROR(dml_serve_run(srv, &bad, 1, &out), DML_STATUS_INVALID_ARGUMENT, "no data");
  CHECK_ERROR(dml_serve_submit(srv, &t, 1, NULL, NULL), DML_STATUS_INVALID_ARGUMENT,
              "no completion callback");
  dml_serve_shutdown(srv, 1);
  dml_serve_shutdown(srv, 0); /* idempotent */
  CHECK_ERROR(dml_serve_run(srv, &t, 1, &out), DML_STATUS_FAILED_PRECONDITION,
              "the server is shut down");
  CHECK_ERROR(dml_serve_submit(srv, &t, 1, never_called, &calls),
              DML_STATUS_FAILED_PRECONDITION, "the server is shut down");
  CHECK(out == NULL);
  CHECK(atomic_load(&calls) == 0);
  dml_serve_release(srv);
  dml_serve_release(NULL);
}

typedef struct {
  atomic_int calls, ok, cancelled, other, wrong;
} tally_t;
typedef struct {
  tally_t *t;
  int start, n;
} tally_req_t;

static void tally_done(void *user, dml_status_t st, dml_tensor_t *out, uint32_t n_out) {
  tally_req_t *r = (tally_req_t *)user;
  atomic_fetch_add(&r->t->calls, 1);
  if (!st) {
    atomic_fetch_add(&r->t->ok, 1);
    if (!reply_ok(out, n_out, r->start, r->n)) atomic_fetch_add(&r->t->wrong, 1);
  } else if (dml_status_code(st) == DML_STATUS_FAILED_PRECONDITION &&
             strstr(dml_status_reason(st), "shut down before the request ran") && !out) {
    atomic_fetch_add(&r->t->cancelled, 1);
  } else {
    atomic_fetch_add(&r->t->other, 1);
  }
  dml_status_free(st);
  dml_serve_outputs_free(out);
}

/* n asynchronous requests, then shut-down with or without draining:
 * every request is answered exactly once, correctly or "shut down";
 * `cancelled` is the number that must fail (-1: any). */
static void shutdown_case(int drain, int n, int64_t batch, double timeout_ms,
                          int cancelled) {
  dml_serve_config_t cfg;
  dml_serve_config_init(&cfg);
  cfg.batch_size = batch;
  cfg.batch_timeout_ms = timeout_ms;
  dml_serve_t *srv = NULL;
  CHECK_OK(dml_serve_create(g_model, &cfg, &srv));
  if (!srv) return;
  tally_t t;
  memset(&t, 0, sizeof t);
  tally_req_t reqs[50];
  for (int i = 0; i < n && i < 50; i++) {
    reqs[i] = (tally_req_t){&t, i * 3, 1 + i % MAXN};
    dml_tensor_t x = rows_tensor(reqs[i].start, reqs[i].n);
    CHECK_OK(dml_serve_submit(srv, &x, 1, tally_done, &reqs[i]));
  }
  dml_serve_shutdown(srv, drain);
  CHECK(atomic_load(&t.calls) == n);
  CHECK(atomic_load(&t.ok) + atomic_load(&t.cancelled) == n);
  CHECK(atomic_load(&t.other) == 0 && atomic_load(&t.wrong) == 0);
  if (cancelled >= 0) CHECK(atomic_load(&t.cancelled) == cancelled);
  dml_serve_stats_t st;
  dml_serve_get_stats(srv, &st);
  CHECK(st.requests == (uint64_t)n &&
        st.requests_failed == (uint64_t)atomic_load(&t.cancelled));
  dml_serve_release(srv);
  CHECK(atomic_load(&t.calls) == n); /* nothing answered twice */
}

/* Draining runs everything, splitting requests over batches of 8. */
static void test_shutdown_drain(void) {
  shutdown_case(1, 50, 8, 50, 0);
}
/* 39 rows queued, waiting for 64 or a minute: all 10 fail at once. */
static void test_shutdown_cancel(void) {
  shutdown_case(0, 10, 64, 60000, 10);
}
/* Running and queued requests (some split) at shut-down: each once. */
static void test_shutdown_racing(void) {
  shutdown_case(0, 50, 8, 0, -1);
}

/* A queue limit refuses with RESOURCE_EXHAUSTED; releasing without
 * draining fails what waits. */
static void test_queue_limit(void) {
  dml_serve_config_t cfg;
  dml_serve_config_init(&cfg);
  cfg.batch_size = 64;
  cfg.batch_timeout_ms = 60000;
  cfg.max_queued_rows = 10;
  dml_serve_t *srv = NULL;
  CHECK_OK(dml_serve_create(g_model, &cfg, &srv));
  if (!srv) return;
  tally_t t;
  memset(&t, 0, sizeof t);
  tally_req_t r = {&t, 0, 8};
  dml_tensor_t x = rows_tensor(0, 8);
  CHECK_OK(dml_serve_submit(srv, &x, 1, tally_done, &r));
  CHECK_ERROR(dml_serve_submit(srv, &x, 1, tally_done, &r), DML_STATUS_RESOURCE_EXHAUSTED,
              "queue full: 8 rows waiting, limit 10");
  dml_serve_stats_t st;
  dml_serve_get_stats(srv, &st);
  CHECK(st.queued_requests == 1 && st.queued_rows == 8 && st.requests == 0);
  dml_serve_shutdown(srv, 0);
  CHECK(atomic_load(&t.calls) == 1 && atomic_load(&t.cancelled) == 1);
  dml_serve_release(srv);
}

/* fashion_mlp compiled for a static [3,784] input: no batch dim, one
 * request per run, passed to the session as given. */
static void test_unbatched(void) {
  int64_t dims[2] = {3, FEAT};
  dml_onnx_input_shape_t shape = {"input", 2, dims};
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.input_shapes = &shape;
  o.n_input_shapes = 1;
  dml_rt_model_t *m = load_mlp(&o);
  if (!m) return;
  dml_serve_config_t cfg;
  dml_serve_config_init(&cfg);
  cfg.batch_size = 16; /* ignored */
  cfg.instances = 2;
  dml_serve_t *srv = NULL;
  CHECK_OK(dml_serve_create(m, &cfg, &srv));
  if (srv) {
    CHECK(dml_serve_is_batched(srv) == 0 && dml_serve_batch_size(srv) == 1);
    for (int i = 0; i < 5; i++) {
      dml_tensor_t x = rows_tensor(i * 7, 3), *out = NULL;
      CHECK_OK(dml_serve_run(srv, &x, 1, &out));
      CHECK(out && reply_ok(out, 1, i * 7, 3));
      dml_serve_outputs_free(out);
    }
    dml_tensor_t x = rows_tensor(0, 2), *out = NULL;
    CHECK_ERROR(dml_serve_run(srv, &x, 1, &out), DML_STATUS_INVALID_ARGUMENT, "input");
    dml_serve_stats_t st;
    dml_serve_get_stats(srv, &st);
    CHECK(st.requests == 6 && st.requests_failed == 1 && st.runs == 6 &&
          st.mean_rows_per_run == 1.0);
    dml_serve_release(srv);
  }
  dml_rt_model_release(m);
}

/* A model whose rows mix (tests/cli/rowsafe/softmax0.onnx: x f32[N,4] ->
 * Softmax(axis=0)): served one request per run, so each reply is the plain
 * session's answer to that request alone, also under concurrent requests
 * that a batching server would have packed into one run. */
typedef struct {
  dml_serve_t *srv;
  float x[3][4], want[3][4];
  int ok;
} mixed_req_t;

static void *mixed_client(void *arg) {
  mixed_req_t *r = (mixed_req_t *)arg;
  dml_tensor_t x = {DML_DTYPE_F32, 2, {3, 4}, r->x}, *out = NULL;
  r->ok = 0;
  for (int k = 0; k < 20; k++) {
    if (dml_serve_run(r->srv, &x, 1, &out) != DML_OK) return NULL;
    int same = out && out[0].rank == 2 && out[0].dims[0] == 3 &&
               !memcmp(out[0].data, r->want, sizeof r->want);
    dml_serve_outputs_free(out);
    if (!same) return NULL;
  }
  r->ok = 1;
  return NULL;
}

static void test_rows_mixed(void) {
  const char *src = getenv("DMLC_SOURCE_DIR");
  char path[2048];
  snprintf(path, sizeof path, "%s/tests/cli/rowsafe/softmax0.onnx", src ? src : ".");
  size_t len = 0;
  uint8_t *bytes = (uint8_t *)dml_test_read_file(path, &len);
  CHECK(bytes != NULL);
  if (!bytes) return;
  void *pkg = NULL;
  size_t pkg_size = 0;
  dml_status_t st = dml_compile_onnx_memory(bytes, len, NULL, "softmax0.onnx", NULL, &pkg,
                                            &pkg_size, NULL);
  free(bytes);
  CHECK_OK(st);
  if (st) return;
  dml_rt_model_t *m = NULL;
  CHECK_OK(dml_rt_model_load_memory(pkg, pkg_size, &m));
  free(pkg);
  if (!m) return;
  enum { NCLIENT = 6 };
  static mixed_req_t req[NCLIENT];
  dml_rt_session_t *plain = NULL;
  CHECK_OK(dml_rt_session_create(m, "cpu", &plain));
  for (int c = 0; c < NCLIENT && plain; c++) {
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 4; j++)
        req[c].x[i][j] = (float)((c * 31 + i * 7 + j * 3) % 11) - 5;
    dml_tensor_t x = {DML_DTYPE_F32, 2, {3, 4}, req[c].x};
    CHECK_OK(dml_rt_session_set_input(plain, 0, &x));
    CHECK_OK(dml_rt_session_run(plain));
    dml_tensor_t y;
    CHECK_OK(dml_rt_session_get_output(plain, 0, &y));
    memcpy(req[c].want, y.data, sizeof req[c].want);
  }
  dml_rt_session_release(plain);
  dml_serve_config_t cfg;
  dml_serve_config_init(&cfg);
  cfg.batch_size = 16;
  cfg.batch_timeout_ms = 20; /* a batching server would pack the clients */
  cfg.instances = 1;
  dml_serve_t *srv = NULL;
  CHECK_OK(dml_serve_create(m, &cfg, &srv));
  if (srv) {
    CHECK(dml_serve_is_batched(srv) == 0 && dml_serve_batch_size(srv) == 1);
    pthread_t th[NCLIENT];
    for (int c = 0; c < NCLIENT; c++) {
      req[c].srv = srv;
      pthread_create(&th[c], NULL, mixed_client, &req[c]);
    }
    for (int c = 0; c < NCLIENT; c++) {
      pthread_join(th[c], NULL);
      CHECK(req[c].ok);
    }
    dml_serve_release(srv);
  }
  dml_rt_model_release(m);
}

static void test_stats_str(void) {
  dml_serve_stats_t st;
  memset(&st, 0, sizeof st);
  st.requests = 12;
  st.rows = 30;
  st.runs = 4;
  st.mean_rows_per_run = 7.5;
  st.latency_ms_p99 = 2.5;
  char buf[512];
  dml_serve_stats_str(&st, buf, sizeof buf);
  CHECK(strstr(buf, "requests 12 (0 failed), rows 30, runs 4, 7.50 rows/run") != NULL);
  CHECK(strstr(buf, "p99 2.500") != NULL);
  char small[8];
  dml_serve_stats_str(&st, small, sizeof small);
  CHECK(strlen(small) == 7);
}

int main(void) {
  g_model = load_mlp(NULL);
  if (!g_model || make_refs(g_model)) {
    fprintf(stderr, "cannot build fashion_mlp and its reference answers\n");
    return 1;
  }
  RUN(test_stats_str);
  RUN(test_errors);
  RUN(test_split_large_request);
  RUN(test_shutdown_drain);
  RUN(test_shutdown_cancel);
  RUN(test_shutdown_racing);
  RUN(test_queue_limit);
  RUN(test_unbatched);
  RUN(test_rows_mixed);
  RUN(test_concurrent_bit_identical);
  free_refs();
  dml_rt_model_release(g_model);
  return dml_test_finish();
}
