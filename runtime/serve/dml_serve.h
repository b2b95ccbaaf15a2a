/*
 * dml_serve.h — batched, concurrent inference over one loaded package.
 *
 *   dml_serve_config_t cfg;   dml_serve_t *srv;   dml_tensor_t *y;
 *   dml_serve_config_init(&cfg);
 *   cfg.batch_size = 32; cfg.batch_timeout_ms = 2; cfg.instances = 2;
 *   dml_serve_create(model, &cfg, &srv);
 *   dml_serve_run(srv, &x, 1, &y);     // any thread: x holds this caller's rows
 *   ... y[0] holds exactly x's rows of output 0 ...
 *   dml_serve_outputs_free(y);
 *   dml_serve_release(srv);            // finishes what is queued, then stops
 *
 * Built only on the public runtime API (dml_rt.h) and pthreads. Each model
 * instance is one dml_rt_session with one worker thread; every caller's
 * request goes into one FIFO queue, and a free worker packs the rows of the
 * requests at its head into one run (see docs/serving.md):
 *
 * Batching. The batch dim is the leading dim of every input and output,
 * one symbol (multiplier 1) shared by all of them, every other dim static.
 * A worker waits until batch_size rows are queued or the oldest queued
 * request has waited batch_timeout_ms, then takes up to batch_size rows in
 * arrival order; a request that does not fit in what is left of a batch
 * (or has more rows than batch_size) is split: its first rows go into this
 * run, the rest into the next ones, and its reply is put together in
 * order. Rows are computed independently (the CPU kernels give a row the
 * same bits whatever the batch around it), so a reply equals the
 * single-request answer bit for bit. A package without such a batch dim
 * is served one request per run (batch_size is then 1 and requests are
 * passed to the session as they are), and so is a package whose rows are
 * not independent (meta "rows-independent" not 1: a Softmax or reduction
 * over the batch axis, ...; dml_rt_model_check_chunks), so that a reply
 * never depends on another request's rows.
 *
 * Threading and ownership. The serving object is thread-safe: submit, run
 * and stats may be called from any thread at once. The model is lent and
 * must outlive the serving object. Inputs are read during the call
 * (dml_serve_submit copies them; dml_serve_run reads them until it
 * returns). Outputs are handed to the caller as one malloc'd block
 * (dml_serve_outputs_free). Completion callbacks run on a worker thread or
 * on the thread calling dml_serve_shutdown; they must not block for long
 * and must not call dml_serve_shutdown or dml_serve_release.
 *
 * Shut-down. dml_serve_shutdown stops accepting requests (later submits
 * fail with FAILED_PRECONDITION), then either drains the queue (every
 * queued request runs) or fails the requests whose rows have not started
 * with FAILED_PRECONDITION "shut down before it ran"; runs in progress
 * always finish. Every accepted request gets exactly one completion. It
 * returns once the workers have exited.
 *
 * Errors are dml_status_t with op "serve.create", "serve.submit" or
 * "serve.run" (a session's own error, annotated, for a failed run; every
 * request with rows in that run gets it).
 */
#ifndef DML_SERVE_H_
#define DML_SERVE_H_

#include <stdint.h>

#include "dml_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dml_serve dml_serve_t;

typedef struct dml_serve_config {
  /* The most rows in one run, in [1, the package's batch bound]; 0 means
   * the bound. Ignored (1) for a package without a batch dim. */
  int64_t batch_size;
  /* How long the oldest queued request waits for others to fill a batch,
   * in milliseconds, >= 0; 0 runs whatever is queued at once. */
  double batch_timeout_ms;
  /* "cpu" or NULL (the CPU), as dml_rt_session_create. */
  const char *device;
  /* Model instances (sessions, each with a worker thread), in [1, 256]. */
  int instances;
  /* Most rows waiting in the queue before dml_serve_submit refuses with
   * RESOURCE_EXHAUSTED ("queue full"); 0: no limit. */
  int64_t max_queued_rows;
} dml_serve_config_t;

/* Defaults: batch_size 0 (the bound), batch_timeout_ms 1, device NULL,
 * instances 1, max_queued_rows 0. */
void dml_serve_config_init(dml_serve_config_t *cfg);

/* Creates the sessions and starts the workers. `model` is lent (it must
 * outlive the serving object). Errors (op "serve.create"):
 * INVALID_ARGUMENT for a config value out of range (batch_size above the
 * package's batch bound names the bound), a session's error from
 * dml_rt_session_create, RESOURCE_EXHAUSTED. */
dml_status_t dml_serve_create(const dml_rt_model_t *model, const dml_serve_config_t *cfg,
                              dml_serve_t **out_serve);

/* Called once per accepted request, on success with status DML_OK and
 * `outputs` (n_outputs tensors, in the model's output order, each with
 * this request's rows; one block the callee frees with
 * dml_serve_outputs_free), on failure with the status (the callee frees
 * it) and outputs NULL. */
typedef void (*dml_serve_done_fn)(void *user, dml_status_t status, dml_tensor_t *outputs,
                                  uint32_t n_outputs);

/* Queues a request: `inputs` holds one tensor per model input, in the
 * model's order, each with the same number of rows (leading dim, >= 1) and
 * the package's dtype and other dims. The tensors are copied. `done` is
 * called exactly once, later (possibly before this returns, on another
 * thread). Errors (op "serve.submit"; `done` is then never called):
 * INVALID_ARGUMENT naming the input for a count, dtype, rank or dim
 * mismatch or zero rows; FAILED_PRECONDITION after shut-down;
 * RESOURCE_EXHAUSTED (out of memory, or the queue is full). */
dml_status_t dml_serve_submit(dml_serve_t *s, const dml_tensor_t *inputs,
                              uint32_t n_inputs, dml_serve_done_fn done, void *user);

/* As submit, blocking until the reply: on success *out_outputs is set to
 * dml_serve_num_outputs(s) tensors (free with dml_serve_outputs_free).
 * Errors: those of submit, and the request's failure (op "serve.run"). */
dml_status_t dml_serve_run(dml_serve_t *s, const dml_tensor_t *inputs, uint32_t n_inputs,
                           dml_tensor_t **out_outputs);

/* Frees an outputs block handed out by dml_serve_run or a callback
 * (tensors and their data). NULL is a no-op. */
void dml_serve_outputs_free(dml_tensor_t *outputs);

/* Buckets of dml_serve_stats_t.runs_by_rows (upper bounds 2^0 .. 2^31). */
#define DML_SERVE_ROWS_BUCKETS 32

/* Statistics since create. Percentiles come from a log-scale histogram
 * with 64 buckets per power of two (a value's bucket midpoint is within
 * 0.8% of it). Latency: submit to completion; queue time: submit to the
 * start of the run that takes the request's first rows. */
typedef struct dml_serve_stats {
  uint64_t requests;        /* completed, with success or failure */
  uint64_t requests_failed; /* of those, failed */
  uint64_t rows;            /* rows of the completed requests */
  uint64_t runs;            /* session runs (successful or not) */
  uint64_t run_rows;        /* rows over those runs */
  double mean_rows_per_run; /* run_rows / runs (0 with no run) */
  uint64_t queued_requests; /* waiting now (none of their rows started) */
  uint64_t queued_rows;     /* rows not yet taken by a run */
  double latency_ms_mean, latency_ms_p50, latency_ms_p90, latency_ms_p99, latency_ms_max;
  double queue_ms_mean, queue_ms_p50, queue_ms_p90, queue_ms_p99;
  /* Runs by their rows r: [0] r <= 1, [k] 2^(k-1) < r <= 2^k (k >= 1), so
   * the histogram's upper bounds are 1, 2, 4, ... 2^31 rows
   * (/metrics' dmlc_batch_size). */
  uint64_t runs_by_rows[DML_SERVE_ROWS_BUCKETS];
} dml_serve_stats_t;

/* Fills *out; safe while serving (a consistent snapshot). */
void dml_serve_get_stats(dml_serve_t *s, dml_serve_stats_t *out);

/* Formats the statistics as one line: "requests 10 (0 failed), rows 40,
 * runs 3, 13.3 rows/run, latency ms p50 1.2 p90 ... p99 ..., queue ms ...".
 * Always NUL-terminates (truncating); returns buf. */
const char *dml_serve_stats_str(const dml_serve_stats_t *st, char *buf, size_t cap);

/* Stops accepting requests and waits for the workers to exit: with `drain`
 * every queued request runs first; without, requests none of whose rows
 * started fail (FAILED_PRECONDITION), and a request split across runs
 * whose later rows had not started fails once its started rows finish.
 * Idempotent; must not be called from a completion callback. */
void dml_serve_shutdown(dml_serve_t *s, int drain);

/* dml_serve_shutdown(s, 1) if not done yet, then frees the sessions and
 * the object. NULL is a no-op. */
void dml_serve_release(dml_serve_t *s);

/* 1 when requests are packed along a batch dim, 0 when served one per run. */
int dml_serve_is_batched(const dml_serve_t *s);
/* The effective batch size (rows per run at most; 1 when not batched). */
int64_t dml_serve_batch_size(const dml_serve_t *s);
uint32_t dml_serve_num_outputs(const dml_serve_t *s);

#ifdef __cplusplus
}
#endif
#endif /* DML_SERVE_H_ */
