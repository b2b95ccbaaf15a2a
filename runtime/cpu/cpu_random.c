/*
 * cpu_random.c — random ops: RandomUniform(Like), RandomNormal(Like),
 * Bernoulli, Multinomial, and Dropout in training mode.
 *
 * Every value comes from Philox4x32-10 through the stream of dml_philox.h:
 * a function of (seed, step, node, element index), where the seed is the
 * node's `seed` attribute when it has one, else the call's rng_seed (the
 * session seed), the step is the call's rng_counter (the session's run
 * count) and the node is the call's rng_stream (its plan index). The
 * results are therefore the same for any thread count and on any backend
 * that implements the same scheme. These ops carry DML_OPF_RANDOM, so the
 * constant folder and CSE never evaluate or merge them.
 */
#include <math.h>
#include <string.h>

#include "cpu_internal.h"
#include "dml_philox.h"

/* The node's stream: its `seed` attribute (ONNX: a float; Dropout: an
 * int), truncated to int64, or else the session seed. */
static void stream_of(const dml_cpu_call_t *c, dml_philox_stream_t *s) {
  uint64_t seed = c->rng_seed;
  const dml_attr_t *a = dml_attr_find(c->attrs, c->n_attrs, "seed");
  if (a && a->kind == DML_ATTR_INT) seed = (uint64_t)a->i;
  if (a && a->kind == DML_ATTR_FLOAT && isfinite(a->f) && fabs(a->f) < 9.2e18)
    seed = (uint64_t)(int64_t)a->f;
  dml_philox_stream_init(s, seed, c->rng_counter, c->rng_stream);
}

static int is_float(dml_dtype_t dt) {
  return dml_dtype_is_float(dt);
}

/* Uniform in [0, 1) in the precision of `dt` (dml_philox.h layouts). */
static double uniform(const dml_philox_stream_t *s, dml_dtype_t dt, int64_t i) {
  return dt == DML_DTYPE_F64 ? dml_philox_uniform_f64(s, (uint64_t)i)
                             : (double)dml_philox_uniform_f32(s, (uint64_t)i);
}

static void store(dml_dtype_t dt, void *p, int64_t i, double v) {
  if (dt == DML_DTYPE_F32)
    ((float *)p)[i] = (float)v;
  else
    dml_store_f64(dt, p, (size_t)i, v);
}

/* ======================================================================
 * RandomUniform-1 / RandomUniformLike-1: y = low + u * (high - low), u
 * uniform in [0, 1); low 0, high 1. RandomNormal-1 / RandomNormalLike-1:
 * y = mean + scale * z, z standard normal (Box-Muller); mean 0, scale 1.
 * The output's shape and dtype (the `shape` attribute or input 0's shape;
 * the `dtype` attribute, default float or input 0's) are set by the
 * caller. T: float16, float, double (bfloat16 too).
 * ====================================================================== */

dml_status_t dml_cpuk_RandomUniform(const dml_cpu_call_t *c) {
  dml_tensor_t *y = &c->outputs[0];
  if (!is_float(y->dtype)) return dml_cpu_err_dtype(c, "output", y->dtype);
  double lo = dml_cpu_get_float(c, "low", 0.0), hi = dml_cpu_get_float(c, "high", 1.0);
  dml_philox_stream_t s;
  stream_of(c, &s);
  int64_t n = dml_cpu_numel(y);
  for (int64_t i = 0; i < n; i++)
    store(y->dtype, y->data, i, lo + uniform(&s, y->dtype, i) * (hi - lo));
  return DML_OK;
}

dml_status_t dml_cpuk_RandomNormal(const dml_cpu_call_t *c) {
  dml_tensor_t *y = &c->outputs[0];
  if (!is_float(y->dtype)) return dml_cpu_err_dtype(c, "output", y->dtype);
  double mean = dml_cpu_get_float(c, "mean", 0.0),
         sc = dml_cpu_get_float(c, "scale", 1.0);
  dml_philox_stream_t s;
  stream_of(c, &s);
  int64_t n = dml_cpu_numel(y);
  int f64 = y->dtype == DML_DTYPE_F64;
  for (int64_t i = 0; i < n; i++) {
    double z = f64 ? dml_philox_normal_f64(&s, (uint64_t)i)
                   : dml_philox_normal_f32(&s, (uint64_t)i);
    store(y->dtype, y->data, i, mean + sc * z);
  }
  return DML_OK;
}

/* ======================================================================
 * Bernoulli-15: y[i] = 1 if u[i] < input[i] else 0, u uniform in [0, 1)
 * in input's precision, so P(y[i] = 1) = input[i] (clamped to [0, 1]).
 * T1 input: float16, float, double; T2 output (`dtype`, default T1): any
 * numeric type or bool.
 * ====================================================================== */

dml_status_t dml_cpuk_Bernoulli(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  if (!is_float(x->dtype)) return dml_cpu_err_dtype(c, "input", x->dtype);
  if (!is_float(y->dtype) && !dml_dtype_is_int(y->dtype) && y->dtype != DML_DTYPE_BOOL)
    return dml_cpu_err_dtype(c, "output", y->dtype);
  int64_t n = dml_cpu_numel(x);
  if (dml_cpu_numel(y) != n)
    return dml_cpu_err_shapes(c, "output must have input's shape");
  dml_philox_stream_t s;
  stream_of(c, &s);
  for (int64_t i = 0; i < n; i++) {
    double p = dml_load_f64(x->dtype, x->data, (size_t)i);
    int one = uniform(&s, x->dtype, i) < p;
    if (is_float(y->dtype))
      store(y->dtype, y->data, i, one);
    else
      dml_store_i64(y->dtype, y->data, (size_t)i, one);
  }
  return DML_OK;
}

/* ======================================================================
 * Multinomial-7: input [batch, class_size] of unnormalized log
 * probabilities; output [batch, sample_size] (int32 or int64, `dtype`
 * attribute 6 or 7) of class indices drawn independently with
 * P(k) = softmax(input[b])[k]. Sample (b, j) uses the 53-bit uniform of
 * element b * sample_size + j: the first k whose cumulative weight
 * exceeds u * total.
 * ====================================================================== */

dml_status_t dml_cpuk_Multinomial(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  if (!is_float(x->dtype)) return dml_cpu_err_dtype(c, "input", x->dtype);
  if (y->dtype != DML_DTYPE_I32 && y->dtype != DML_DTYPE_I64)
    return dml_cpu_err_dtype(c, "output", y->dtype);
  if (x->rank != 2 || y->rank != 2 || y->dims[0] != x->dims[0])
    return dml_cpu_err_shapes(c,
                              "input must be [batch, class_size], output "
                              "[batch, sample_size]");
  int64_t B = x->dims[0], K = x->dims[1], S = y->dims[1];
  if (K < 1 && B * S > 0) return dml_cpu_err_shapes(c, "class_size must be >= 1");
  dml_philox_stream_t s;
  stream_of(c, &s);
  for (int64_t b = 0; b < B; b++) {
    double mx = -INFINITY, total = 0;
    for (int64_t k = 0; k < K; k++) {
      double v = dml_load_f64(x->dtype, x->data, (size_t)(b * K + k));
      if (v > mx) mx = v;
    }
    for (int64_t k = 0; k < K; k++)
      total += exp(dml_load_f64(x->dtype, x->data, (size_t)(b * K + k)) - mx);
    for (int64_t j = 0; j < S; j++) {
      double t = dml_philox_uniform_f64(&s, (uint64_t)(b * S + j)) * total, acc = 0;
      int64_t pick = K - 1;
      for (int64_t k = 0; k < K; k++) {
        double w = exp(dml_load_f64(x->dtype, x->data, (size_t)(b * K + k)) - mx);
        acc += w;
        if (w > 0) pick = k;
        if (t < acc) break;
      }
      dml_store_i64(y->dtype, y->data, (size_t)(b * S + j), pick);
    }
  }
  return DML_OK;
}

/* ======================================================================
 * Dropout-13 in training mode (called by dml_cpuk_Dropout, cpu_shape.c):
 * element i is kept when u[i] >= ratio (u uniform in [0, 1) in data's
 * precision), so each element is kept with probability 1 - ratio; kept
 * elements are scaled by 1 / (1 - ratio), dropped ones are 0, and the
 * mask (bool, optional) is 1 where kept. ratio must lie in [0, 1]; ratio 1
 * drops everything. T: float16, float, double, bfloat16.
 * ====================================================================== */

dml_status_t dml_cpu_dropout_train(const dml_cpu_call_t *c, double ratio) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0], *mask = dml_cpu_out(c, 1);
  if (!(ratio >= 0.0 && ratio <= 1.0))
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "ratio %g is outside [0, 1]",
                         ratio);
  if (!is_float(x->dtype)) return dml_cpu_err_dtype(c, "data", x->dtype);
  if (y->dtype != x->dtype) return dml_cpu_err_dtype(c, "output", y->dtype);
  int64_t n = dml_cpu_numel(x);
  if (dml_cpu_numel(y) != n) return dml_cpu_err_shapes(c, "output size differs");
  if (mask) {
    if (mask->dtype != DML_DTYPE_BOOL) return dml_cpu_err_dtype(c, "mask", mask->dtype);
    if (dml_cpu_numel(mask) != n) return dml_cpu_err_shapes(c, "mask size differs");
  }
  double scale = ratio < 1.0 ? 1.0 / (1.0 - ratio) : 0.0;
  dml_philox_stream_t s;
  stream_of(c, &s);
  uint8_t *m = mask ? (uint8_t *)mask->data : NULL;
  for (int64_t i = 0; i < n; i++) {
    int keep = ratio < 1.0 && uniform(&s, x->dtype, i) >= ratio;
    double v = keep ? dml_load_f64(x->dtype, x->data, (size_t)i) * scale : 0.0;
    store(y->dtype, y->data, i, v);
    if (m) m[i] = (uint8_t)keep;
  }
  return DML_OK;
}
