/* graphgen_io.h — what the random-graph tester's two halves agree on: the
 * runs of a graph (the values of its symbols in each), its random inputs and
 * how a device's outputs are compared with the CPU's. One definition for
 * dml_graphgen (tests/vulkan/graphgen.c: generates, compiles, runs cpu and
 * vulkan, or with --pack writes packages and the CPU's outputs for another
 * machine) and dml_graphs_check (tests/cuda/graphs_check.c: runtime only,
 * runs those packages on a GPU machine against the saved CPU outputs).
 * Needs only the runtime (dml_rt.h). docs/kernels.md "Random graphs". */
#ifndef DML_TESTS_GRAPHGEN_IO_H
#define DML_TESTS_GRAPHGEN_IO_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_rt.h"

/* Norm-wise tolerance of a device's output against the CPU's:
 * max |dev - cpu| <= GG_TOL * max(1, max |cpu|) (f32 sums in other orders,
 * the GPUs' exp/tanh). */
#define GG_TOL 1e-4
#define GG_MAX_SYMS 8

/* The symbols of a model's inputs, in order of first appearance. */
typedef struct {
  const char *sym[GG_MAX_SYMS];
  int n;
} gg_syms_t;

static inline void gg_syms_of(const dml_rt_model_t *m, gg_syms_t *s) {
  s->n = 0;
  for (uint32_t i = 0; m && i < dml_rt_model_num_inputs(m); i++) {
    dml_rt_io_info_t io;
    if (dml_rt_model_input_info(m, i, &io)) continue;
    for (int d = 0; d < io.rank; d++) {
      int k = 0;
      while (io.dim_symbol[d] && k < s->n && strcmp(s->sym[k], io.dim_symbol[d])) k++;
      if (io.dim_symbol[d] && k == s->n && s->n < GG_MAX_SYMS)
        s->sym[s->n++] = io.dim_symbol[d];
    }
  }
}

/* How many runs a graph gets at most: run 0 sets every symbol to 1, run 1
 * the k-th to min(3 + 4k, bound) (distinct values when a graph has several),
 * and, with two or more symbols, run 2 each to its bound. A graph without
 * symbols runs once (gg_input's *any_sym tells). */
static inline int gg_max_runs(const gg_syms_t *s) {
  return s->n > 1 ? 3 : 2;
}

/* Run `run`'s name for messages: "batch 1", "batch 3", "the symbols at their
 * bounds". */
static inline const char *gg_run_name(int run, char *buf, size_t cap) {
  if (run < 2)
    snprintf(buf, cap, "batch %d", run ? 3 : 1);
  else
    snprintf(buf, cap, "the symbols at their bounds");
  return buf;
}

/* The input stream of a graph (xorshift64*, seeded by the graph's seed; a
 * saved graph replays with seed 0). */
static inline uint64_t gg_input_stream(uint64_t seed) {
  return seed * 0x2545F4914F6CDD1Dull + 1;
}

/* Input i of model m for run `run`: f32 dims from the model's input type
 * (symbols per gg_max_runs), values uniform in [-2, 2) drawn from *rs (which
 * advances: inputs are drawn in order, run after run). t->data is malloc'ed
 * (the caller frees it); *any_sym is set when a dim is symbolic. Returns 0,
 * or -1 when the input's type cannot be read or memory runs out. */
static inline int gg_input(const dml_rt_model_t *m, uint32_t i, int run,
                           const gg_syms_t *s, uint64_t *rs, dml_tensor_t *t,
                           int *any_sym) {
  dml_rt_io_info_t io;
  memset(t, 0, sizeof *t);
  if (dml_rt_model_input_info(m, i, &io)) return -1;
  t->dtype = DML_DTYPE_F32;
  t->rank = io.rank;
  for (int d = 0; d < io.rank; d++) {
    *any_sym |= io.dim_symbol[d] != NULL;
    int64_t v = 1;
    int k = 0;
    while (io.dim_symbol[d] && k < s->n && strcmp(s->sym[k], io.dim_symbol[d])) k++;
    int64_t mul = io.dim_multiplier[d] > 0 ? io.dim_multiplier[d] : 1;
    if (io.dim_symbol[d] && run == 1) v = 3 + 4 * (int64_t)k;
    if (io.dim_symbol[d] && (run == 2 || v * mul > io.dim_bound[d]))
      v = io.dim_bound[d] / mul;
    t->dims[d] = io.dim_symbol[d] ? mul * v : io.dims[d];
  }
  int64_t cnt = dml_dims_numel(t->dims, t->rank);
  float *x = (float *)malloc((size_t)(cnt ? cnt : 1) * 4);
  if (!x) return -1;
  uint64_t r = *rs;
  for (int64_t k = 0; k < cnt; k++) {
    r ^= r >> 12, r ^= r << 25, r ^= r >> 27;
    x[k] = (float)((double)((r * 2685821657736338717ull) >> 11) *
                       (4.0 / 9007199254740992.0) -
                   2.0);
  }
  *rs = r;
  t->data = x;
  return 0;
}

/* The largest norm-wise error of a against b (f32 tensors of one shape):
 * max |a - b| / max(1, max |b|) over b's finite elements; 1e9 for a NaN or
 * infinity where the other has none (or another infinity), or another shape
 * or dtype. */
static inline double gg_out_err(const dml_tensor_t *a, const dml_tensor_t *b) {
  if (a->dtype != DML_DTYPE_F32 || b->dtype != DML_DTYPE_F32 || a->rank != b->rank)
    return 1e9;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return 1e9;
  int64_t n = dml_dims_numel(a->dims, a->rank);
  const float *x = (const float *)a->data, *y = (const float *)b->data;
  double scale = 1, worst = 0;
  for (int64_t i = 0; i < n; i++)
    if (isfinite(y[i]) && fabs(y[i]) > scale) scale = fabs(y[i]);
  for (int64_t i = 0; i < n; i++) {
    if (isnan(x[i]) || isnan(y[i]) || isinf(x[i]) || isinf(y[i])) {
      if (!(x[i] == y[i] || (isnan(x[i]) && isnan(y[i])))) return 1e9;
      continue;
    }
    double e = fabs((double)x[i] - y[i]) / scale;
    if (e > worst) worst = e;
  }
  return worst;
}

#endif
