/*
 * dml_serve.c — the serving object of dml_serve.h: one FIFO queue of
 * requests, one worker thread per model instance (session), rows of
 * several requests packed into one run and split back.
 *
 * Locking: `mu` guards the queue, the accept/stop flags and each queued
 * request's `taken`; `stats_mu` guards the statistics. A request's rows
 * are finished by whichever workers ran them; the atomic `remaining` count
 * makes exactly one of them (or the shutting-down thread) complete it, and
 * its fetch_sub orders every earlier worker's writes into the outputs
 * before the completion reads them.
 */
#include "dml_serve.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SERVE_MAX_INSTANCES 256
#define SERVE_ALIGN 64
#define HIST_SUB 64                  /* buckets per power of two */
#define HIST_N ((64 - 5) * HIST_SUB) /* values up to 2^64 ns */

typedef struct req {
  struct req *next;
  dml_serve_done_fn done;
  void *user;
  dml_tensor_t *in; /* n_in tensors (data copied, or lent by dml_serve_run) */
  int64_t rows;     /* leading dim (1 when not batched) */
  int64_t taken;    /* rows handed to runs so far (under mu) */
  atomic_llong remaining;
  _Atomic(dml_status_t) err; /* the first failure */
  dml_tensor_t *out;         /* outputs block (batched: allocated at submit) */
  uint64_t t_submit;         /* ns, CLOCK_MONOTONIC */
} req_t;

typedef struct {
  req_t *r;
  int64_t r_off, rows, b_off;
} slice_t;

typedef struct {
  struct dml_serve *s;
  pthread_t th;
  int started;
  dml_rt_session_t *sess;
  void **stage;    /* per input: batch_size rows */
  slice_t *slices; /* batch_size */
} worker_t;

typedef struct {
  uint64_t n, sum_ns, max_ns;
  uint64_t b[HIST_N];
} hist_t;

struct dml_serve {
  const dml_rt_model_t *model;
  uint32_t n_in, n_out;
  dml_rt_io_info_t *in_info, *out_info;
  size_t *in_row_bytes, *out_row_bytes; /* bytes of one row (batched) */
  int batched;
  int64_t batch_size, bound;
  uint64_t timeout_ns;
  int64_t max_queued_rows;

  pthread_mutex_t mu;
  pthread_cond_t cv;
  req_t *head, *tail;
  int64_t queued_rows, queued_requests;
  int accepting, stopping, drain, joined;

  int n_workers;
  worker_t *workers;

  pthread_mutex_t stats_mu;
  uint64_t st_requests, st_failed, st_rows, st_runs, st_run_rows;
  uint64_t st_runs_by_rows[DML_SERVE_ROWS_BUCKETS];
  hist_t lat, queue;
};

/* ---- small helpers ----------------------------------------------------- */

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static size_t align_up(size_t x) {
  return (x + SERVE_ALIGN - 1) / SERVE_ALIGN * SERVE_ALIGN;
}

static int hist_index(uint64_t v) {
  if (v < HIST_SUB) return (int)v;
  int e = 63 - __builtin_clzll(v); /* >= 6 */
  int sub = (int)((v >> (e - 6)) & (HIST_SUB - 1));
  return (e - 5) * HIST_SUB + sub;
}

/* Midpoint of bucket i, in ns. */
static double hist_value(int i) {
  if (i < HIST_SUB) return (double)i;
  int e = i / HIST_SUB + 5, sub = i % HIST_SUB;
  double lo = ldexp((double)(HIST_SUB + sub), e - 6);
  return lo + ldexp(1.0, e - 6) / 2;
}

static void hist_add(hist_t *h, uint64_t v) {
  h->n++;
  h->sum_ns += v;
  if (v > h->max_ns) h->max_ns = v;
  h->b[hist_index(v)]++;
}

/* The q-quantile (0 < q <= 1) in milliseconds; 0 when empty. */
static double hist_quantile_ms(const hist_t *h, double q) {
  if (!h->n) return 0;
  uint64_t want = (uint64_t)ceil(q * (double)h->n), seen = 0;
  if (want < 1) want = 1;
  for (int i = 0; i < HIST_N; i++) {
    seen += h->b[i];
    if (seen >= want) /* a bucket's midpoint may pass the largest value */
      return (hist_value(i) < (double)h->max_ns ? hist_value(i) : (double)h->max_ns) /
             1e6;
  }
  return (double)h->max_ns / 1e6;
}

/* A copy of `st` (code, op, reason, details) for another request. */
static dml_status_t status_copy(dml_status_t st) {
  dml_status_t c = dml_status_make(dml_status_code(st), dml_status_op(st), "%s",
                                   dml_status_reason(st));
  const char *d = dml_status_details(st);
  while (d && *d) {
    const char *nl = strchr(d, '\n');
    size_t len = nl ? (size_t)(nl - d) : strlen(d);
    while (len && d[0] == ' ') d++, len--;
    if (len) c = dml_status_detail(c, "%.*s", (int)len, d);
    d = nl ? nl + 1 : NULL;
  }
  return c;
}

/* Records `st` as r's failure if it has none yet (else frees st). */
static void req_fail(req_t *r, dml_status_t st) {
  dml_status_t expected = NULL;
  if (!atomic_compare_exchange_strong(&r->err, &expected, st)) dml_status_free(st);
}

/* ---- completion -------------------------------------------------------- */

static void req_complete(dml_serve_t *s, req_t *r) {
  uint64_t lat = now_ns() - r->t_submit;
  dml_status_t err = atomic_load(&r->err);
  pthread_mutex_lock(&s->stats_mu);
  s->st_requests++;
  if (err) s->st_failed++;
  s->st_rows += (uint64_t)r->rows;
  hist_add(&s->lat, lat);
  pthread_mutex_unlock(&s->stats_mu);
  dml_tensor_t *out = r->out;
  if (err) {
    free(out);
    out = NULL;
  }
  dml_serve_done_fn done = r->done;
  void *user = r->user;
  uint32_t n_out = s->n_out;
  free(r);
  done(user, err, out, err ? 0 : n_out);
}

/* `rows` of r are done (run, failed or abandoned); the last rows complete. */
static void req_finish_rows(dml_serve_t *s, req_t *r, int64_t rows) {
  if (atomic_fetch_sub(&r->remaining, (long long)rows) == (long long)rows)
    req_complete(s, r);
}

/* ---- outputs blocks ---------------------------------------------------- */

/* One malloc'd block: n tensors, then each tensor's data (64-aligned).
 * dims[i] gives output i's dims (rank from info). */
static dml_tensor_t *outputs_alloc(const dml_serve_t *s,
                                   const int64_t (*dims)[DML_MAX_RANK]) {
  size_t hdr = align_up(sizeof(dml_tensor_t) * (s->n_out ? s->n_out : 1)), total = hdr;
  size_t bytes[256];
  for (uint32_t o = 0; o < s->n_out; o++) {
    dml_tensor_t t = {s->out_info[o].dtype, s->out_info[o].rank, {0}, NULL};
    memcpy(t.dims, dims[o], sizeof t.dims);
    size_t b = dml_tensor_bytes(&t);
    if (b == SIZE_MAX || b > SIZE_MAX / 2 - total) return NULL;
    bytes[o] = b;
    total += align_up(b ? b : 1);
  }
  char *blk = (char *)aligned_alloc(SERVE_ALIGN, total);
  if (!blk) return NULL;
  dml_tensor_t *t = (dml_tensor_t *)blk;
  size_t off = hdr;
  for (uint32_t o = 0; o < s->n_out; o++) {
    t[o].dtype = s->out_info[o].dtype;
    t[o].rank = s->out_info[o].rank;
    memcpy(t[o].dims, dims[o], sizeof t[o].dims);
    t[o].data = blk + off;
    off += align_up(bytes[o] ? bytes[o] : 1);
  }
  return t;
}

void dml_serve_outputs_free(dml_tensor_t *outputs) {
  free(outputs);
}

/* ---- runs -------------------------------------------------------------- */

static void fail_slices(dml_serve_t *s, const slice_t *sl, int ns, dml_status_t st) {
  for (int i = 0; i < ns; i++) req_fail(sl[i].r, status_copy(st));
  dml_status_free(st);
}

/* Packs the slices' rows into one run of worker w's session and copies
 * each slice's output rows back. */
static void run_batched(dml_serve_t *s, worker_t *w, int ns, int64_t n) {
  dml_rt_session_t *se = w->sess;
  const slice_t *sl = w->slices;
  dml_status_t st = DML_OK;
  dml_rt_session_clear_inputs(se);
  for (uint32_t i = 0; i < s->n_in && !st; i++) {
    size_t rb = s->in_row_bytes[i];
    dml_tensor_t t = {s->in_info[i].dtype, s->in_info[i].rank, {0}, NULL};
    memcpy(t.dims, s->in_info[i].dims, sizeof t.dims);
    t.dims[0] = n;
    if (ns == 1) { /* one request's rows: bind them where they are */
      t.data = (char *)sl[0].r->in[i].data + (size_t)sl[0].r_off * rb;
    } else {
      for (int k = 0; k < ns; k++)
        memcpy((char *)w->stage[i] + (size_t)sl[k].b_off * rb,
               (const char *)sl[k].r->in[i].data + (size_t)sl[k].r_off * rb,
               (size_t)sl[k].rows * rb);
      t.data = w->stage[i];
    }
    st = dml_rt_session_set_input(se, i, &t);
  }
  if (!st) st = dml_rt_session_run(se);
  for (uint32_t o = 0; o < s->n_out && !st; o++) {
    dml_tensor_t v;
    st = dml_rt_session_get_output(se, o, &v);
    if (st) break;
    if (v.rank != s->out_info[o].rank || v.dtype != s->out_info[o].dtype ||
        v.dims[0] != n) {
      st = dml_status_make(DML_STATUS_INTERNAL, "serve.run",
                           "output '%s' has %lld rows for a run of %lld",
                           s->out_info[o].name, (long long)v.dims[0], (long long)n);
      break;
    }
    size_t rb = s->out_row_bytes[o];
    for (int k = 0; k < ns; k++)
      memcpy((char *)sl[k].r->out[o].data + (size_t)sl[k].r_off * rb,
             (const char *)v.data + (size_t)sl[k].b_off * rb, (size_t)sl[k].rows * rb);
  }
  if (st)
    fail_slices(s, sl, ns,
                dml_status_annotate(st, "serving a batch of %lld rows from %d requests",
                                    (long long)n, ns));
}

/* A package without a batch dim: request r alone, as given. */
static void run_single(dml_serve_t *s, worker_t *w, req_t *r) {
  dml_rt_session_t *se = w->sess;
  dml_status_t st = DML_OK;
  dml_rt_session_clear_inputs(se);
  for (uint32_t i = 0; i < s->n_in && !st; i++)
    st = dml_rt_session_set_input(se, i, &r->in[i]);
  if (!st) st = dml_rt_session_run(se);
  dml_tensor_t v[256];
  int64_t dims[256][DML_MAX_RANK];
  for (uint32_t o = 0; o < s->n_out && !st; o++) {
    st = dml_rt_session_get_output(se, o, &v[o]);
    if (!st) memcpy(dims[o], v[o].dims, sizeof dims[o]);
  }
  if (!st) {
    r->out = outputs_alloc(s, (const int64_t(*)[DML_MAX_RANK])dims);
    if (!r->out)
      st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "serve.run",
                           "out of memory for the outputs");
  }
  for (uint32_t o = 0; o < s->n_out && !st; o++) {
    size_t b = dml_tensor_bytes(&v[o]);
    if (b) memcpy(r->out[o].data, v[o].data, b);
  }
  if (st) req_fail(r, dml_status_annotate(st, "serving one request"));
}

/* ---- workers ----------------------------------------------------------- */

static void *worker_main(void *arg) {
  worker_t *w = (worker_t *)arg;
  dml_serve_t *s = w->s;
  pthread_mutex_lock(&s->mu);
  for (;;) {
    while (!s->head && !s->stopping) pthread_cond_wait(&s->cv, &s->mu);
    if (!s->head) break; /* stopping, nothing left */
    if (s->batched && !s->stopping && s->timeout_ns && s->queued_rows < s->batch_size) {
      uint64_t deadline = s->head->t_submit + s->timeout_ns, now = now_ns();
      if (now < deadline) {
        struct timespec ts = {(time_t)(deadline / 1000000000u),
                              (long)(deadline % 1000000000u)};
        pthread_cond_timedwait(&s->cv, &s->mu, &ts);
        continue; /* re-check: another worker may have taken the head */
      }
    }
    /* Take up to batch_size rows in arrival order, splitting as needed. */
    uint64_t t_start = now_ns();
    int ns = 0;
    int64_t filled = 0;
    req_t *single = NULL;
    while (s->head && filled < s->batch_size) {
      req_t *r = s->head;
      int64_t take = r->rows - r->taken;
      if (take > s->batch_size - filled) take = s->batch_size - filled;
      if (r->taken == 0) s->queued_requests--;
      w->slices[ns++] = (slice_t){r, r->taken, take, filled};
      r->taken += take;
      filled += take;
      s->queued_rows -= take;
      if (r->taken == r->rows) {
        s->head = r->next;
        if (!s->head) s->tail = NULL;
      }
      if (!s->batched) {
        single = r;
        break;
      }
    }
    pthread_mutex_unlock(&s->mu);

    /* Our slices' requests cannot complete before we finish them. */
    pthread_mutex_lock(&s->stats_mu);
    for (int k = 0; k < ns; k++)
      if (w->slices[k].r_off == 0)
        hist_add(&s->queue, t_start - w->slices[k].r->t_submit);
    s->st_runs++;
    s->st_run_rows += (uint64_t)filled;
    int bkt = 0;
    while (bkt < DML_SERVE_ROWS_BUCKETS - 1 && (int64_t)filled > ((int64_t)1 << bkt))
      bkt++;
    s->st_runs_by_rows[bkt]++;
    pthread_mutex_unlock(&s->stats_mu);

    if (single)
      run_single(s, w, single);
    else
      run_batched(s, w, ns, filled);
    for (int k = 0; k < ns; k++) req_finish_rows(s, w->slices[k].r, w->slices[k].rows);
    pthread_mutex_lock(&s->mu);
  }
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

/* ---- create / release -------------------------------------------------- */

void dml_serve_config_init(dml_serve_config_t *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->batch_timeout_ms = 1.0;
  cfg->instances = 1;
}

/* Finds the batch dim: leading dim of every input and output, one symbol
 * with multiplier 1, all other dims static. Sets s->batched and s->bound. */
static void find_batch(dml_serve_t *s) {
  const char *sym = NULL;
  s->batched = s->n_in > 0 && s->n_out > 0;
  for (uint32_t k = 0; k < s->n_in + s->n_out && s->batched; k++) {
    const dml_rt_io_info_t *io = k < s->n_in ? &s->in_info[k] : &s->out_info[k - s->n_in];
    if (io->rank < 1 || !io->dim_symbol[0] || io->dim_multiplier[0] != 1 ||
        (sym && strcmp(sym, io->dim_symbol[0]) != 0)) {
      s->batched = 0;
      break;
    }
    sym = io->dim_symbol[0];
    for (int32_t d = 1; d < io->rank; d++)
      if (io->dim_symbol[d] || io->dims[d] < 0) s->batched = 0;
  }
  s->bound = 1;
  if (!s->batched) return;
  s->batched = 0;
  for (uint32_t i = 0; i < dml_rt_model_num_symbols(s->model); i++) {
    const char *name;
    int64_t bound;
    dml_status_t st = dml_rt_model_symbol(s->model, i, &name, &bound);
    if (st) {
      dml_status_free(st);
      continue;
    }
    if (!strcmp(name, sym) && bound >= 1) {
      s->batched = 1;
      s->bound = bound;
    }
  }
}

static size_t row_bytes(const dml_rt_io_info_t *io) {
  size_t b = dml_dtype_size(io->dtype);
  for (int32_t d = 1; d < io->rank; d++) b *= (size_t)io->dims[d];
  return b;
}

static void free_serve(dml_serve_t *s) {
  for (int i = 0; i < s->n_workers; i++) {
    worker_t *w = &s->workers[i];
    dml_rt_session_release(w->sess);
    if (w->stage)
      for (uint32_t k = 0; k < s->n_in; k++) free(w->stage[k]);
    free(w->stage);
    free(w->slices);
  }
  free(s->workers);
  free(s->in_info);
  free(s->out_info);
  free(s->in_row_bytes);
  free(s->out_row_bytes);
  pthread_mutex_destroy(&s->mu);
  pthread_mutex_destroy(&s->stats_mu);
  pthread_cond_destroy(&s->cv);
  free(s);
}

static dml_status_t create_err(dml_serve_t *s, dml_status_t st) {
  if (s) {
    dml_serve_shutdown(s, 0);
    free_serve(s);
  }
  return st;
}

#define OOM() \
  dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "serve.create", "out of memory")

dml_status_t dml_serve_create(const dml_rt_model_t *model, const dml_serve_config_t *cfg,
                              dml_serve_t **out_serve) {
  dml_serve_config_t def;
  if (!cfg) {
    dml_serve_config_init(&def);
    cfg = &def;
  }
  if (!model)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "serve.create", "no model given");
  if (cfg->instances < 1 || cfg->instances > SERVE_MAX_INSTANCES)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "serve.create",
                           "instances must be in [1, %d], not %d", SERVE_MAX_INSTANCES,
                           cfg->instances);
  if (!(cfg->batch_timeout_ms >= 0 && cfg->batch_timeout_ms <= 3.6e6))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "serve.create",
                           "batch timeout must be in [0, 3600000] ms, not %g",
                           cfg->batch_timeout_ms);
  if (cfg->batch_size < 0 || cfg->max_queued_rows < 0)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "serve.create",
                           "batch size and queue limit must be >= 0");
  uint32_t n_in = dml_rt_model_num_inputs(model), n_out = dml_rt_model_num_outputs(model);
  if (n_in > 256 || n_out > 256)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, "serve.create",
                           "serving supports at most 256 inputs and 256 outputs (%u, %u)",
                           n_in, n_out);
  dml_serve_t *s = (dml_serve_t *)calloc(1, sizeof *s);
  if (!s) return OOM();
  pthread_mutex_init(&s->mu, NULL);
  pthread_mutex_init(&s->stats_mu, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&s->cv, &ca);
  pthread_condattr_destroy(&ca);
  s->model = model;
  s->n_in = n_in;
  s->n_out = n_out;
  s->accepting = 1;
  s->in_info = (dml_rt_io_info_t *)calloc(n_in + 1, sizeof *s->in_info);
  s->out_info = (dml_rt_io_info_t *)calloc(n_out + 1, sizeof *s->out_info);
  s->in_row_bytes = (size_t *)calloc(n_in + 1, sizeof(size_t));
  s->out_row_bytes = (size_t *)calloc(n_out + 1, sizeof(size_t));
  if (!s->in_info || !s->out_info || !s->in_row_bytes || !s->out_row_bytes)
    return create_err(s, OOM());
  for (uint32_t i = 0; i < n_in; i++) {
    dml_status_t st = dml_rt_model_input_info(model, i, &s->in_info[i]);
    if (st) return create_err(s, st);
  }
  for (uint32_t i = 0; i < n_out; i++) {
    dml_status_t st = dml_rt_model_output_info(model, i, &s->out_info[i]);
    if (st) return create_err(s, st);
  }
  find_batch(s);
  /* Packing several requests' rows into one run is right only when each
   * output row depends on its own input rows alone (the compiler's
   * row-independence analysis, meta "rows-independent: 1"); a model that
   * mixes rows (Softmax over the batch axis, a reduction over it, ...) or a
   * package from before the analysis is served one request per run, so a
   * reply never depends on another client's rows. */
  if (s->batched) {
    dml_status_t rows = dml_rt_model_check_chunks(model, "serve.create", 2, 1);
    if (rows) {
      dml_status_free(rows);
      s->batched = 0;
    }
  }
  if (s->batched) {
    if (cfg->batch_size > s->bound)
      return create_err(
          s, dml_status_make(DML_STATUS_INVALID_ARGUMENT, "serve.create",
                             "batch size %lld exceeds the package's batch bound %lld; "
                             "recompile with --batch-bound",
                             (long long)cfg->batch_size, (long long)s->bound));
    s->batch_size = cfg->batch_size ? cfg->batch_size : s->bound;
    for (uint32_t i = 0; i < n_in; i++) s->in_row_bytes[i] = row_bytes(&s->in_info[i]);
    for (uint32_t i = 0; i < n_out; i++) s->out_row_bytes[i] = row_bytes(&s->out_info[i]);
  } else {
    s->batch_size = 1;
  }
  s->timeout_ns = (uint64_t)(cfg->batch_timeout_ms * 1e6);
  s->max_queued_rows = cfg->max_queued_rows;

  s->workers = (worker_t *)calloc((size_t)cfg->instances, sizeof(worker_t));
  if (!s->workers) return create_err(s, OOM());
  for (int i = 0; i < cfg->instances; i++) {
    worker_t *w = &s->workers[i];
    w->s = s;
    s->n_workers = i + 1;
    dml_status_t st = dml_rt_session_create(model, cfg->device, &w->sess);
    if (st)
      return create_err(s, dml_status_annotate(st, "creating model instance %d", i));
    w->slices = (slice_t *)calloc((size_t)s->batch_size, sizeof(slice_t));
    w->stage = (void **)calloc(n_in + 1, sizeof(void *));
    if (!w->slices || !w->stage) return create_err(s, OOM());
    if (s->batched)
      for (uint32_t k = 0; k < n_in; k++) {
        w->stage[k] = malloc(s->in_row_bytes[k] * (size_t)s->batch_size + 1);
        if (!w->stage[k]) return create_err(s, OOM());
      }
  }
  for (int i = 0; i < s->n_workers; i++) {
    int rc = pthread_create(&s->workers[i].th, NULL, worker_main, &s->workers[i]);
    if (rc)
      return create_err(
          s, dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "serve.create",
                             "cannot start worker thread %d: %s", i, strerror(rc)));
    s->workers[i].started = 1;
  }
  *out_serve = s;
  return DML_OK;
}

void dml_serve_shutdown(dml_serve_t *s, int drain) {
  if (!s) return;
  pthread_mutex_lock(&s->mu);
  if (s->joined) {
    pthread_mutex_unlock(&s->mu);
    return;
  }
  s->accepting = 0;
  s->stopping = 1;
  req_t *list = NULL;
  if (!drain) { /* detach what no run has taken */
    list = s->head;
    s->head = s->tail = NULL;
    s->queued_rows = s->queued_requests = 0;
  }
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  while (list) {
    req_t *r = list;
    list = r->next;
    int64_t untaken = r->rows - r->taken; /* no worker touches `taken` now */
    req_fail(r, dml_status_make(DML_STATUS_FAILED_PRECONDITION, "serve.run",
                                "the server shut down before the request ran"));
    req_finish_rows(s, r, untaken);
  }
  for (int i = 0; i < s->n_workers; i++)
    if (s->workers[i].started) pthread_join(s->workers[i].th, NULL);
  pthread_mutex_lock(&s->mu);
  s->joined = 1;
  pthread_mutex_unlock(&s->mu);
}

void dml_serve_release(dml_serve_t *s) {
  if (!s) return;
  dml_serve_shutdown(s, 1);
  free_serve(s);
}

int dml_serve_is_batched(const dml_serve_t *s) {
  return s->batched;
}
int64_t dml_serve_batch_size(const dml_serve_t *s) {
  return s->batch_size;
}
uint32_t dml_serve_num_outputs(const dml_serve_t *s) {
  return s->n_out;
}

/* ---- submit ------------------------------------------------------------ */

static dml_status_t bad_input(const dml_serve_t *s, uint32_t i, const dml_tensor_t *t,
                              const char *what) {
  char want[160], got[160];
  dml_rt_io_info_str(&s->in_info[i], want, sizeof want);
  dml_rt_io_info_t g;
  memset(&g, 0, sizeof g);
  g.dtype = t->dtype;
  g.rank = t->rank >= 0 && t->rank <= DML_MAX_RANK ? t->rank : 0;
  for (int32_t d = 0; d < g.rank; d++) g.dims[d] = t->dims[d];
  dml_rt_io_info_str(&g, got, sizeof got);
  return dml_status_detail(dml_status_make(DML_STATUS_INVALID_ARGUMENT, "serve.submit",
                                           "input '%s': %s", s->in_info[i].name, what),
                           "expected %s, got %s", want, got);
}

/* Checks the inputs; sets *rows (the common leading dim when batched). */
static dml_status_t check_inputs(const dml_serve_t *s, const dml_tensor_t *in, uint32_t n,
                                 int64_t *rows) {
  if (n != s->n_in || (n && !in))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "serve.submit",
                           "the model takes %u inputs, %u given", s->n_in, n);
  *rows = 1;
  for (uint32_t i = 0; i < n; i++) {
    const dml_tensor_t *t = &in[i];
    if (t->rank < 0 || t->rank > DML_MAX_RANK) return bad_input(s, i, t, "bad rank");
    size_t b = dml_tensor_bytes(t);
    if (b == SIZE_MAX) return bad_input(s, i, t, "bad dims");
    if (b && !t->data) return bad_input(s, i, t, "no data");
    if (!s->batched) continue;
    const dml_rt_io_info_t *io = &s->in_info[i];
    if (t->dtype != io->dtype) return bad_input(s, i, t, "wrong dtype");
    if (t->rank != io->rank) return bad_input(s, i, t, "wrong rank");
    for (int32_t d = 1; d < t->rank; d++)
      if (t->dims[d] != io->dims[d]) return bad_input(s, i, t, "wrong shape");
    if (t->dims[0] < 1) return bad_input(s, i, t, "a request needs at least one row");
    if (i == 0) *rows = t->dims[0];
    if (t->dims[0] != *rows)
      return dml_status_detail(bad_input(s, i, t, "row counts differ between inputs"),
                               "input '%s' has %lld rows", s->in_info[0].name,
                               (long long)*rows);
  }
  return DML_OK;
}

/* Builds a request; `copy` copies the input data, else lends it. */
static dml_status_t req_new(dml_serve_t *s, const dml_tensor_t *in, uint32_t n, int copy,
                            dml_serve_done_fn done, void *user, req_t **out) {
  int64_t rows = 1;
  DML_RETURN_IF_ERROR(check_inputs(s, in, n, &rows));
  size_t total = align_up(sizeof(req_t)) + align_up(sizeof(dml_tensor_t) * (n ? n : 1));
  if (copy)
    for (uint32_t i = 0; i < n; i++) {
      size_t b = dml_tensor_bytes(&in[i]);
      if (b > SIZE_MAX / 4 - total)
        return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "serve.submit",
                               "request too large");
      total += align_up(b ? b : 1);
    }
  char *blk = (char *)aligned_alloc(SERVE_ALIGN, total);
  if (!blk)
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "serve.submit",
                           "out of memory");
  req_t *r = (req_t *)blk;
  memset(r, 0, sizeof *r);
  r->in = (dml_tensor_t *)(blk + align_up(sizeof(req_t)));
  size_t off = align_up(sizeof(req_t)) + align_up(sizeof(dml_tensor_t) * (n ? n : 1));
  for (uint32_t i = 0; i < n; i++) {
    r->in[i] = in[i];
    if (copy) {
      size_t b = dml_tensor_bytes(&in[i]);
      r->in[i].data = blk + off;
      if (b) memcpy(r->in[i].data, in[i].data, b);
      off += align_up(b ? b : 1);
    }
  }
  r->rows = rows;
  r->done = done;
  r->user = user;
  atomic_init(&r->remaining, (long long)rows);
  atomic_init(&r->err, NULL);
  if (s->batched) {
    int64_t dims[256][DML_MAX_RANK];
    for (uint32_t o = 0; o < s->n_out; o++) {
      memcpy(dims[o], s->out_info[o].dims, sizeof dims[o]);
      dims[o][0] = rows;
    }
    r->out = outputs_alloc(s, (const int64_t(*)[DML_MAX_RANK])dims);
    if (!r->out) {
      free(r);
      return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "serve.submit",
                             "out of memory for the outputs of %lld rows",
                             (long long)rows);
    }
  }
  *out = r;
  return DML_OK;
}

static dml_status_t enqueue(dml_serve_t *s, req_t *r) {
  pthread_mutex_lock(&s->mu);
  dml_status_t st = DML_OK;
  if (!s->accepting)
    st = dml_status_make(DML_STATUS_FAILED_PRECONDITION, "serve.submit",
                         "the server is shut down");
  else if (s->max_queued_rows && s->queued_rows + r->rows > s->max_queued_rows)
    st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "serve.submit",
                         "queue full: %lld rows waiting, limit %lld",
                         (long long)s->queued_rows, (long long)s->max_queued_rows);
  if (st) {
    pthread_mutex_unlock(&s->mu);
    free(r->out);
    free(r);
    return st;
  }
  r->t_submit = now_ns();
  if (s->tail)
    s->tail->next = r;
  else
    s->head = r;
  s->tail = r;
  s->queued_rows += r->rows;
  s->queued_requests++;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  return DML_OK;
}

dml_status_t dml_serve_submit(dml_serve_t *s, const dml_tensor_t *inputs,
                              uint32_t n_inputs, dml_serve_done_fn done, void *user) {
  if (!s || !done)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "serve.submit",
                           "no server or no completion callback given");
  req_t *r;
  DML_RETURN_IF_ERROR(req_new(s, inputs, n_inputs, 1, done, user, &r));
  return enqueue(s, r);
}

typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int done;
  dml_status_t st;
  dml_tensor_t *out;
} waiter_t;

static void wake(void *user, dml_status_t st, dml_tensor_t *out, uint32_t n_out) {
  waiter_t *w = (waiter_t *)user;
  pthread_mutex_lock(&w->mu);
  w->st = st;
  w->out = out;
  w->done = 1;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

dml_status_t dml_serve_run(dml_serve_t *s, const dml_tensor_t *inputs, uint32_t n_inputs,
                           dml_tensor_t **out_outputs) {
  if (!s || !out_outputs)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "serve.submit",
                           "no server or no output pointer given");
  waiter_t w;
  memset(&w, 0, sizeof w);
  req_t *r;
  DML_RETURN_IF_ERROR(req_new(s, inputs, n_inputs, 0, wake, &w, &r));
  pthread_mutex_init(&w.mu, NULL);
  pthread_cond_init(&w.cv, NULL);
  dml_status_t st = enqueue(s, r);
  if (!st) {
    pthread_mutex_lock(&w.mu);
    while (!w.done) pthread_cond_wait(&w.cv, &w.mu);
    pthread_mutex_unlock(&w.mu);
    st = w.st;
    if (!st) *out_outputs = w.out;
  }
  pthread_mutex_destroy(&w.mu);
  pthread_cond_destroy(&w.cv);
  return st;
}

/* ---- statistics -------------------------------------------------------- */

void dml_serve_get_stats(dml_serve_t *s, dml_serve_stats_t *out) {
  memset(out, 0, sizeof *out);
  pthread_mutex_lock(&s->mu);
  out->queued_requests = (uint64_t)s->queued_requests;
  out->queued_rows = (uint64_t)s->queued_rows;
  pthread_mutex_unlock(&s->mu);
  pthread_mutex_lock(&s->stats_mu);
  out->requests = s->st_requests;
  out->requests_failed = s->st_failed;
  out->rows = s->st_rows;
  out->runs = s->st_runs;
  out->run_rows = s->st_run_rows;
  memcpy(out->runs_by_rows, s->st_runs_by_rows, sizeof out->runs_by_rows);
  out->mean_rows_per_run = s->st_runs ? (double)s->st_run_rows / (double)s->st_runs : 0;
  out->latency_ms_mean = s->lat.n ? (double)s->lat.sum_ns / (double)s->lat.n / 1e6 : 0;
  out->latency_ms_p50 = hist_quantile_ms(&s->lat, 0.50);
  out->latency_ms_p90 = hist_quantile_ms(&s->lat, 0.90);
  out->latency_ms_p99 = hist_quantile_ms(&s->lat, 0.99);
  out->latency_ms_max = (double)s->lat.max_ns / 1e6;
  out->queue_ms_mean =
      s->queue.n ? (double)s->queue.sum_ns / (double)s->queue.n / 1e6 : 0;
  out->queue_ms_p50 = hist_quantile_ms(&s->queue, 0.50);
  out->queue_ms_p90 = hist_quantile_ms(&s->queue, 0.90);
  out->queue_ms_p99 = hist_quantile_ms(&s->queue, 0.99);
  pthread_mutex_unlock(&s->stats_mu);
}

const char *dml_serve_stats_str(const dml_serve_stats_t *st, char *buf, size_t cap) {
  if (!cap) return buf;
  snprintf(buf, cap,
           "requests %llu (%llu failed), rows %llu, runs %llu, %.2f rows/run, "
           "latency ms mean %.3f p50 %.3f p90 %.3f p99 %.3f max %.3f, "
           "queue ms mean %.3f p50 %.3f p90 %.3f p99 %.3f",
           (unsigned long long)st->requests, (unsigned long long)st->requests_failed,
           (unsigned long long)st->rows, (unsigned long long)st->runs,
           st->mean_rows_per_run, st->latency_ms_mean, st->latency_ms_p50,
           st->latency_ms_p90, st->latency_ms_p99, st->latency_ms_max, st->queue_ms_mean,
           st->queue_ms_p50, st->queue_ms_p90, st->queue_ms_p99);
  return buf;
}
