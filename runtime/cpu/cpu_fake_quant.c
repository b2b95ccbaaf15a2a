/*
 * cpu_fake_quant.c — FakeQuantize and FakeQuantizeGrad (ops.def), the
 * fake quantization of quantization-aware training, with the formulas of
 * runtime/base/dml_fake_quant.h (PyTorch's FakeQuantize forward and its
 * straight-through estimator; ONNX QuantizeLinear's rounding):
 *
 *   FakeQuantize(X, range)      per tensor: scale, zero point from range
 *                               [min, max]; Y = X when min > max or a bound
 *                               is NaN (nothing observed yet)
 *   FakeQuantize(X)             per channel along `axis`: scale = max |x|
 *                               over the channel's finite values / quant_max
 *                               (dml_fq_weight_scale), zero point 0
 *   FakeQuantizeGrad(dY, X[, range])  dY where X's q is within
 *                               [quant_min, quant_max], else 0
 *
 * f32 only (the shape rule refuses other dtypes).
 */
#include <math.h>
#include <string.h>

#include "cpu_internal.h"
#include "dml_fake_quant.h"

/* Runs either op: grad 0 writes Y = fq(X), grad 1 writes dX = STE(dY). */
static dml_status_t fake_quant(const dml_cpu_call_t *c, int grad) {
  const dml_tensor_t *x = &c->inputs[grad ? 1 : 0];
  const dml_tensor_t *dy = grad ? &c->inputs[0] : NULL;
  const dml_tensor_t *r =
      c->n_inputs > (uint32_t)(grad ? 2 : 1) && c->inputs[grad ? 2 : 1].data
          ? &c->inputs[grad ? 2 : 1]
          : NULL;
  dml_tensor_t *y = &c->outputs[0];
  if (x->dtype != DML_DTYPE_F32) return dml_cpu_err_dtype(c, "x", x->dtype);
  if (dy && dy->dtype != DML_DTYPE_F32) return dml_cpu_err_dtype(c, "dy", dy->dtype);
  int64_t n = dml_cpu_numel(x);
  if (dml_cpu_numel(y) != n || (dy && dml_cpu_numel(dy) != n))
    return dml_cpu_err_shapes(c, "x, dy and the output must have one size");
  float qmin = (float)dml_cpu_get_int(c, "quant_min", -128);
  float qmax = (float)dml_cpu_get_int(c, "quant_max", 127);
  const float *xs = (const float *)x->data;
  const float *g = dy ? (const float *)dy->data : NULL;
  float *out = (float *)y->data;
  if (r) {
    if (r->dtype != DML_DTYPE_F32 || dml_cpu_numel(r) != 2)
      return dml_cpu_err_shapes(c, "range must be f32 [2]");
    const float *rv = (const float *)r->data;
    if (!(rv[0] <= rv[1])) { /* unobserved: the identity */
      if (g)
        memmove(out, g, (size_t)n * sizeof(float));
      else
        memmove(out, xs, (size_t)n * sizeof(float));
      return DML_OK;
    }
    float s;
    int32_t zp;
    dml_fq_act_qparams(rv[0], rv[1], &s, &zp);
    float z = (float)zp;
    if (g) {
      for (int64_t i = 0; i < n; i++)
        out[i] = dml_fq_pass(xs[i], s, z, qmin, qmax) ? g[i] : 0.0f;
    } else {
      for (int64_t i = 0; i < n; i++) out[i] = dml_fq_value(xs[i], s, z, qmin, qmax);
    }
    return DML_OK;
  }
  int64_t axis = dml_cpu_get_int(c, "axis", 0);
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis >= x->rank)
    return dml_cpu_err_shapes(c, "axis %lld outside x's rank %d", (long long)axis,
                              x->rank);
  int64_t outer = 1, C = x->dims[axis], inner = 1;
  for (int32_t d = 0; d < axis; d++) outer *= x->dims[d];
  for (int32_t d = (int32_t)axis + 1; d < x->rank; d++) inner *= x->dims[d];
  for (int64_t ch = 0; ch < C; ch++) {
    float amax = 0;
    for (int64_t o = 0; o < outer; o++) {
      const float *p = xs + (o * C + ch) * inner;
      for (int64_t i = 0; i < inner; i++) {
        float a = fabsf(p[i]);
        if (isfinite(a) && a > amax) amax = a;
      }
    }
    float s = dml_fq_weight_scale(amax, qmax);
    for (int64_t o = 0; o < outer; o++) {
      int64_t base = (o * C + ch) * inner;
      for (int64_t i = 0; i < inner; i++) {
        float v = xs[base + i];
        out[base + i] = g ? (dml_fq_pass(v, s, 0, qmin, qmax) ? g[base + i] : 0.0f)
                          : dml_fq_value(v, s, 0, qmin, qmax);
      }
    }
  }
  return DML_OK;
}

dml_status_t dml_cpuk_FakeQuantize(const dml_cpu_call_t *c) {
  return fake_quant(c, 0);
}

dml_status_t dml_cpuk_FakeQuantizeGrad(const dml_cpu_call_t *c) {
  return fake_quant(c, 1);
}
