/*
 * cpu_shrink_isinf_bitshift.c — elementwise ops with a kernel of their own
 * (added for issue #3): Shrink, IsInf and IsNaN, BitShift and CastLike.
 * (The inverse and hyperbolic trigonometric functions, Tan, Celu and
 * ThresholdedRelu are the formula table's: ew_ops.def, cpu_ew_table.c.)
 *
 * f32 has direct float loops; f16/bf16/f64 compute in double and round
 * once on store; Shrink on integers computes in double and truncates
 * toward zero on store (as ONNX's reference does with astype).
 */
#if defined(__GNUC__) && !defined(__clang__)
/* Before the includes, so the inline helpers get the same options. */
#pragma GCC optimize("O3", "no-trapping-math")
#endif
#include <math.h>
#include <string.h>

#include "cpu_internal.h"

/* ======================================================================
 * Shrink-9 (y = x < -lambd ? x + bias : x > lambd ? x - bias : 0, lambd
 * 0.5, bias 0; T: every numeric type). The float functions Acos .. Sinh,
 * Celu and ThresholdedRelu are the formula table's (runtime/base/ew_ops.def,
 * cpu_ew_table.c).
 * ====================================================================== */

typedef struct {
  double alpha, bias;
} u2params_t;

static double u2_f64(dml_op_t op, const u2params_t *p, double x) {
  switch (op) {
    case DML_OP_SHRINK:
      return x < -p->alpha ? x + p->bias : x > p->alpha ? x - p->bias : 0.0;
    default: return x;
  }
}

#define U2_LOOP(expr)               \
  for (int64_t i = 0; i < n; i++) { \
    float x = in[i];                \
    out[i] = (expr);                \
  }

static void u2_f32(dml_op_t op, const u2params_t *p, const float *restrict in,
                   float *restrict out, int64_t n) {
  float a = (float)p->alpha, b = (float)p->bias;
  switch (op) {
    case DML_OP_SHRINK: U2_LOOP(x < -a ? x + b : x > a ? x - b : 0.0f) break;
    default: break;
  }
}

dml_status_t dml_cpuk_Unary2(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  int64_t n = dml_cpu_numel(x);
  if (y->dtype != dt) return dml_cpu_err_dtype(c, "output", y->dtype);
  if (dml_cpu_numel(y) != n)
    return dml_cpu_err_shapes(c, "output size differs from input");
  u2params_t p = {0, 0};
  switch (c->op) {
    case DML_OP_SHRINK:
      p.alpha = dml_cpu_get_float(c, "lambd", 0.5);
      p.bias = dml_cpu_get_float(c, "bias", 0.0);
      break;
    default: break;
  }
  if (dt == DML_DTYPE_F32) {
    u2_f32(c->op, &p, (const float *)x->data, (float *)y->data, n);
    return DML_OK;
  }
  if (dml_dtype_is_float(dt)) {
    for (int64_t i = 0; i < n; i++)
      dml_store_f64(dt, y->data, (size_t)i,
                    u2_f64(c->op, &p, dml_load_f64(dt, x->data, (size_t)i)));
    return DML_OK;
  }
  if (c->op == DML_OP_SHRINK && dml_dtype_is_int(dt)) {
    int uns = dml_cpu_is_unsigned(dt);
    for (int64_t i = 0; i < n; i++) {
      int64_t v = dml_load_i64(dt, x->data, (size_t)i);
      double r = u2_f64(c->op, &p, uns ? (double)(uint64_t)v : (double)v);
      int64_t q = uns && r >= 9223372036854775808.0 ? (int64_t)(uint64_t)r : (int64_t)r;
      dml_store_i64(dt, y->data, (size_t)i, q);
    }
    return DML_OK;
  }
  return dml_cpu_err_dtype(c, "input", dt);
}

/* ======================================================================
 * IsInf-10 (detect_negative, detect_positive: default 1) and IsNaN-9:
 * float input, bool output of the same shape.
 * ====================================================================== */

dml_status_t dml_cpuk_IsSpecial(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  int64_t n = dml_cpu_numel(x);
  if (!dml_dtype_is_float(dt)) return dml_cpu_err_dtype(c, "input", dt);
  if (y->dtype != DML_DTYPE_BOOL) return dml_cpu_err_dtype(c, "output", y->dtype);
  if (dml_cpu_numel(y) != n)
    return dml_cpu_err_shapes(c, "output size differs from input");
  uint8_t *out = (uint8_t *)y->data;
  if (c->op == DML_OP_IS_NAN) {
    if (dt == DML_DTYPE_F32) {
      const float *in = (const float *)x->data;
      for (int64_t i = 0; i < n; i++) out[i] = isnan(in[i]) != 0;
    } else {
      for (int64_t i = 0; i < n; i++)
        out[i] = isnan(dml_load_f64(dt, x->data, (size_t)i)) != 0;
    }
    return DML_OK;
  }
  int neg = dml_cpu_get_int(c, "detect_negative", 1) != 0;
  int pos = dml_cpu_get_int(c, "detect_positive", 1) != 0;
  for (int64_t i = 0; i < n; i++) {
    double v = dt == DML_DTYPE_F32 ? (double)((const float *)x->data)[i]
                                   : dml_load_f64(dt, x->data, (size_t)i);
    out[i] = (uint8_t)((pos && v == INFINITY) || (neg && v == -INFINITY));
  }
  return DML_OK;
}

/* ======================================================================
 * BitShift-11/28: Z = X << Y or X >> Y (direction "LEFT"/"RIGHT",
 * required) on integers of one dtype, numpy broadcasting. Unsigned (11): a
 * shift by the bit width or more gives 0 (numpy's result). Signed (28):
 * the right shift is arithmetic (sign-extending), a left shift drops the
 * bits moved past the sign bit (two's complement wrap), and a shift Y < 0
 * or Y >= the bit width gives the sign fill alone: -1 for a right shift
 * of a negative X, else 0.
 * ====================================================================== */

typedef struct {
  dml_dtype_t dt;
  const void *x, *s;
  void *z;
  int64_t sx, ss;
  int left, bits, is_signed;
} shift_ctx_t;

static void shift_row(void *vctx, int64_t oo, const int64_t *offs, int64_t n) {
  shift_ctx_t *g = (shift_ctx_t *)vctx;
  for (int64_t i = 0; i < n; i++) {
    int64_t sv = dml_load_i64(g->dt, g->x, (size_t)(offs[0] + i * g->sx));
    int64_t ss = dml_load_i64(g->dt, g->s, (size_t)(offs[1] + i * g->ss));
    uint64_t v = (uint64_t)sv, s = (uint64_t)ss;
    int64_t r;
    if (!g->is_signed)
      r = (int64_t)(s >= (uint64_t)g->bits ? 0 : g->left ? v << s : v >> s);
    else if (ss < 0 || ss >= g->bits)
      r = !g->left && sv < 0 ? -1 : 0;
    else if (g->left)
      r = (int64_t)(v << s); /* stored truncated to the dtype's width */
    else
      r = sv < 0 ? ~(~sv >> ss) : sv >> ss;
    dml_store_i64(g->dt, g->z, (size_t)(oo + i), r);
  }
}

dml_status_t dml_cpuk_BitShift(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0], *s = &c->inputs[1];
  dml_tensor_t *z = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  if (!dml_dtype_is_int(dt)) return dml_cpu_err_dtype(c, "input", dt);
  if (s->dtype != dt) return dml_cpu_err_dtype(c, "input 1", s->dtype);
  if (z->dtype != dt) return dml_cpu_err_dtype(c, "output", z->dtype);
  const char *dir = dml_cpu_get_string(c, "direction", NULL);
  if (!dir || (strcmp(dir, "LEFT") != 0 && strcmp(dir, "RIGHT") != 0))
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "direction must be \"LEFT\" or \"RIGHT\", got %s%s%s",
                         dir ? "\"" : "", dir ? dir : "none", dir ? "\"" : "");
  dml_cpu_bcast_t bc;
  const dml_tensor_t *ins[2] = {x, s};
  if (dml_cpu_bcast_init(&bc, z->dims, z->rank, ins, 2))
    return dml_cpu_err_shapes(c, "inputs do not broadcast");
  shift_ctx_t g = {dt,
                   x->data,
                   s->data,
                   z->data,
                   bc.strides[0][bc.rank - 1],
                   bc.strides[1][bc.rank - 1],
                   strcmp(dir, "LEFT") == 0,
                   (int)dml_dtype_size(dt) * 8,
                   !dml_cpu_is_unsigned(dt)};
  dml_cpu_bcast_walk(&bc, shift_row, &g);
  return DML_OK;
}

/* ======================================================================
 * CastLike-15: Cast of input 0 to the dtype of input 1 (the output's
 * dtype, which the caller sets); conversions as Cast-13.
 * ====================================================================== */

dml_status_t dml_cpuk_CastLike(const dml_cpu_call_t *c) {
  if (c->outputs[0].dtype != c->inputs[1].dtype)
    return dml_cpu_err_dtype(c, "output", c->outputs[0].dtype);
  return dml_cpuk_Cast(c);
}
