/*
 * cpu_test_util.h — helpers for the CPU kernel tests: tensor descriptors,
 * attributes, and a runner that sizes scratch the way the runtime does.
 */
#ifndef DML_CPU_TEST_UTIL_H_
#define DML_CPU_TEST_UTIL_H_

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dml_cpu.h"
#include "dml_test.h"

/* tens(dtype, data, rank, d0, d1, ...) */
static inline dml_tensor_t tens(dml_dtype_t dt, void *data, int rank, ...) {
  dml_tensor_t t;
  memset(&t, 0, sizeof t);
  t.dtype = dt;
  t.rank = rank;
  t.data = data;
  va_list ap;
  va_start(ap, rank);
  for (int i = 0; i < rank; i++) t.dims[i] = va_arg(ap, int64_t);
  va_end(ap);
  return t;
}
#define D(x) ((int64_t)(x))

static inline dml_tensor_t absent(void) {
  dml_tensor_t t;
  memset(&t, 0, sizeof t);
  return t;
}

static inline dml_attr_t attr_i(const char *name, int64_t v) {
  dml_attr_t a;
  memset(&a, 0, sizeof a);
  a.name = name, a.kind = DML_ATTR_INT, a.i = v;
  return a;
}
static inline dml_attr_t attr_f(const char *name, double v) {
  dml_attr_t a;
  memset(&a, 0, sizeof a);
  a.name = name, a.kind = DML_ATTR_FLOAT, a.f = v;
  return a;
}
static inline dml_attr_t attr_s(const char *name, const char *v) {
  dml_attr_t a;
  memset(&a, 0, sizeof a);
  a.name = name, a.kind = DML_ATTR_STRING, a.s = v;
  return a;
}
static inline dml_attr_t attr_ints(const char *name, const int64_t *v, size_t n) {
  dml_attr_t a;
  memset(&a, 0, sizeof a);
  a.name = name, a.kind = DML_ATTR_INTS, a.ints = v, a.n = n;
  return a;
}

/* A call of `op` (node `node_name`) on inputs in[0..nin), outputs
 * out[0..nout) and attributes attrs[0..nattrs); every other field zero (no
 * scratch, no output capacities, RNG seed 0). */
static inline dml_cpu_call_t cpu_call(dml_op_t op, const char *node_name,
                                      const dml_tensor_t *in, uint32_t nin,
                                      dml_tensor_t *out, uint32_t nout,
                                      const dml_attr_t *attrs, uint32_t nattrs) {
  dml_cpu_call_t c;
  memset(&c, 0, sizeof c);
  c.op = op;
  c.node_name = node_name;
  c.inputs = in;
  c.n_inputs = nin;
  c.outputs = out;
  c.n_outputs = nout;
  c.attrs = attrs;
  c.n_attrs = nattrs;
  return c;
}

/* Runs one op with scratch sized by dml_cpu_scratch_bytes. */
static inline dml_status_t run_op(dml_op_t op, const dml_tensor_t *in, uint32_t nin,
                                  dml_tensor_t *out, uint32_t nout,
                                  const dml_attr_t *attrs, uint32_t nattrs) {
  dml_cpu_call_t c = cpu_call(op, "test_node", in, nin, out, nout, attrs, nattrs);
  size_t sb = dml_cpu_scratch_bytes(&c);
  void *scratch = sb ? malloc(sb) : NULL;
  if (scratch) memset(scratch, 0xff, sb); /* garbage: kernels must not rely on it */
  c.scratch = scratch;
  c.scratch_bytes = sb;
  dml_status_t s = dml_cpu_run(&c);
  free(scratch);
  return s;
}

/* Deterministic pseudo-random floats in [-1, 1). */
static uint32_t g_rng = 12345u;
static inline float frand(void) {
  g_rng = g_rng * 1664525u + 1013904223u;
  return (float)((g_rng >> 8) & 0xffffff) / 8388608.0f - 1.0f;
}
static inline float *frand_buf(size_t n) {
  float *p = (float *)malloc((n ? n : 1) * sizeof(float));
  for (size_t i = 0; i < n; i++) p[i] = frand();
  return p;
}

/* Max |a-b| over n floats. */
static inline double max_abs_diff(const float *a, const float *b, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; i++) {
    double d = fabs((double)a[i] - (double)b[i]);
    if (d > m || d != d) m = d != d ? 1e30 : d;
  }
  return m;
}

#endif /* DML_CPU_TEST_UTIL_H_ */
