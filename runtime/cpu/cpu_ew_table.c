/*
 * cpu_ew_table.c — the CPU kernel of every op of the elementwise formula
 * table (runtime/base/ew_ops.def): DML_EW's formulas expanded in double
 * with libm's functions, f32, f16 and bf16 results rounded once on store;
 * DML_EWN's in the input's dtype (f32 in float, the others in double,
 * integers in wrapping 64-bit arithmetic).
 */
#if defined(__GNUC__) && !defined(__clang__)
/* Before the includes, so the inline helpers get the same options. */
#pragma GCC optimize("O3", "no-trapping-math")
#endif
#include <math.h>

#include "cpu_internal.h"
#include "dml_ew.h"

/* 1 / (1 + e^-x) without overflow: e^x / (1 + e^x) below 0. */
static inline double ew_sigmoid(double x) {
  return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
}

#define X x
#define A0 a[0]
#define A1 a[1]
#define A2 a[2]
#define K(c) ((double)(c))
#define ADD(u, v) ((u) + (v))
#define SUB(u, v) ((u) - (v))
#define MUL(u, v) ((u) * (v))
#define DIV(u, v) ((u) / (v))
#define NEG(u) (-(u))
#define ABS(u) fabs(u)
#define LT(u, v) ((u) < (v))
#define LE(u, v) ((u) <= (v))
#define GT(u, v) ((u) > (v))
#define EQ(u, v) ((u) == (v))
#define SEL(c, u, v) ((c) ? (u) : (v))
#define IFA(k, u, v) (a[k] != 0 ? (u) : (v))
#define EXP(u) exp(u)
#define EXPM1(u) expm1(u)
#define LOG(u) log(u)
#define LOG1P(u) log1p(u)
#define SQRT(u) sqrt(u)
#define TANH(u) tanh(u)
#define ERF(u) erf(u)
#define ERFC(u) erfc(u)
#define SIN(u) sin(u)
#define COS(u) cos(u)
#define TAN(u) tan(u)
#define SINH(u) sinh(u)
#define COSH(u) cosh(u)
#define ASIN(u) asin(u)
#define ACOS(u) acos(u)
#define ATAN(u) atan(u)
#define ASINH(u) asinh(u)
#define ACOSH(u) acosh(u)
#define ATANH(u) atanh(u)
#define SIGMOID(u) ew_sigmoid(u)
#define FLOOR(u) floor(u)
#define CEIL(u) ceil(u)
#define ROUND(u) nearbyint(u)
#define OP(e, u) ew_##e(u, NULL)
#define DML_EW_ATTR_F(name, dflt, nonzero)
#define DML_EW_ATTR_S(name, first, second)

/* ew_<OP>(x, a): the op's value at x with attribute values a (NULL for
 * an op without attributes), in double. */
#define DML_EW(e, attrs, value, grad)                      \
  static inline double ew_##e(double x, const double *a) { \
    (void)a;                                               \
    return value;                                          \
  }
#include "ew_ops.def"
#undef DML_EW

/* ewn_d_<OP>(x): a DML_EWN op's value in double (f64, f16, bf16). */
#define DML_EWN(e, ints, value, grad)        \
  static inline double ewn_d_##e(double x) { \
    return value;                            \
  }
#include "ew_ops.def"
#undef DML_EWN

/* f32 in double, rounded once: exact to the f32 rounding where libm's
 * double functions are (float intermediates lose bits in cancellations
 * and subnormals, e.g. Gelu's x/2 erfc(-x/sqrt 2) at x = -6 by 1.6e-6) */
DML_CPU_CLONES
static void ew_f32(dml_op_t op, const double *a, const float *restrict in,
                   float *restrict out, int64_t n) {
  switch (op) {
#define DML_EW(e, attrs, value, grad)                                 \
  case DML_OP_##e:                                                    \
    for (int64_t i = 0; i < n; i++) out[i] = (float)ew_##e(in[i], a); \
    break;
#include "ew_ops.def"
#undef DML_EW
    default: break;
  }
}

double dml_cpu_ew_f64(dml_op_t op, const double *a, double x) {
  switch (op) {
#define DML_EW(e, attrs, value, grad) \
  case DML_OP_##e:                    \
    return ew_##e(x, a);
#include "ew_ops.def"
#undef DML_EW

#define DML_EWN(e, ints, value, grad) \
  case DML_OP_##e:                    \
    return ewn_d_##e(x);
#include "ew_ops.def"
#undef DML_EWN
    default: return x;
  }
}

/* ---- DML_EWN's ops in f32: the formulas expanded in float, one loop per
 * op (the compiler's vector loops: the CPU's fast paths) ---- */
static inline float ewn_sigmoidf(float x) {
  return x >= 0.0f ? 1.0f / (1.0f + expf(-x)) : expf(x) / (1.0f + expf(x));
}
#undef K
#undef ABS
#undef EXP
#undef LOG
#undef SQRT
#undef TANH
#undef SIN
#undef COS
#undef SIGMOID
#undef FLOOR
#undef CEIL
#undef ROUND
#define K(c) ((float)(c))
#define ABS(u) fabsf(u)
#define EXP(u) expf(u)
#define LOG(u) logf(u)
#define SQRT(u) sqrtf(u)
#define TANH(u) tanhf(u)
#define SIN(u) sinf(u)
#define COS(u) cosf(u)
#define SIGMOID(u) ewn_sigmoidf(u)
#define FLOOR(u) floorf(u)
#define CEIL(u) ceilf(u)
#define ROUND(u) nearbyintf(u)
#define DML_EWN(e, ints, value, grad)                                                 \
  DML_CPU_CLONES static void ewn_f_##e(const float *restrict in, float *restrict out, \
                                       int64_t n) {                                   \
    for (int64_t i = 0; i < n; i++) {                                                 \
      float x = in[i];                                                                \
      out[i] = value;                                                                 \
    }                                                                                 \
  }
#include "ew_ops.def"
#undef DML_EWN

/* ---- DML_EWN's integer forms (INTS 1): wrapping 64-bit arithmetic,
 * signed (ewn_i_) and unsigned (ewn_u_) ---- */
static inline int64_t ewn_iabs(int64_t v) {
  return v >= 0 ? v : (int64_t)(0 - (uint64_t)v);
}
static inline int ewn_ult(uint64_t u, uint64_t v) {
  return u < v;
}
static inline int ewn_ugt(uint64_t u, uint64_t v) {
  return u > v;
}
#undef K
#undef ABS
#undef NEG
#undef LT
#undef GT
#define K(c) ((int64_t)(c))
#define ABS(u) ewn_iabs(u)
#define NEG(u) ((int64_t)(0 - (uint64_t)(u)))
#define LT(u, v) ((u) < (v))
#define GT(u, v) ((u) > (v))
#define DML_EWN_INT_0(e, value)
#define DML_EWN_INT_1(e, value)                \
  static inline int64_t ewn_i_##e(int64_t x) { \
    return value;                              \
  }
#define DML_EWN(e, ints, value, grad) DML_EWN_INT_##ints(e, value)
#include "ew_ops.def"
#undef DML_EWN
#undef DML_EWN_INT_1
#undef K
#undef ABS
#undef NEG
#undef LT
#undef GT
#define K(c) ((uint64_t)(c))
#define ABS(u) (u)
#define NEG(u) (0 - (uint64_t)(u))
#define LT(u, v) ewn_ult(u, v)
#define GT(u, v) ewn_ugt(u, v)
#define DML_EWN_INT_1(e, value)                  \
  static inline uint64_t ewn_u_##e(uint64_t x) { \
    return value;                                \
  }
#define DML_EWN(e, ints, value, grad) DML_EWN_INT_##ints(e, value)
#include "ew_ops.def"
#undef DML_EWN
#undef DML_EWN_INT_1

dml_status_t dml_cpu_ewn(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  int64_t n = dml_cpu_numel(x);
  if (y->dtype != dt) return dml_cpu_err_dtype(c, "output", y->dtype);
  if (dml_cpu_numel(y) != n)
    return dml_cpu_err_shapes(c, "output size differs from input");
  if (dt == DML_DTYPE_F32) {
    const float *in = (const float *)x->data;
    float *out = (float *)y->data;
    if (c->op == DML_OP_SIGMOID) { /* vectorized exp (cpu_vmath.c) */
      dml_cpu_sigmoid_f32(in, out, n);
      return DML_OK;
    }
    switch (c->op) {
#define DML_EWN(e, ints, value, grad) \
  case DML_OP_##e:                    \
    ewn_f_##e(in, out, n);            \
    return DML_OK;
#include "ew_ops.def"
#undef DML_EWN
      default: break;
    }
  } else if (dml_dtype_is_float(dt)) {
    switch (c->op) {
#define DML_EWN(e, ints, value, grad)                                 \
  case DML_OP_##e:                                                    \
    for (int64_t i = 0; i < n; i++)                                   \
      dml_store_f64(dt, y->data, (size_t)i,                           \
                    ewn_d_##e(dml_load_f64(dt, x->data, (size_t)i))); \
    return DML_OK;
#include "ew_ops.def"
#undef DML_EWN
      default: break;
    }
  } else if (dml_dtype_is_int(dt) && dml_cpu_is_unsigned(dt)) {
#define DML_EWN_INT_1(e, value)                                                          \
  case DML_OP_##e:                                                                       \
    for (int64_t i = 0; i < n; i++)                                                      \
      dml_store_i64(dt, y->data, (size_t)i,                                              \
                    (int64_t)ewn_u_##e((uint64_t)dml_load_i64(dt, x->data, (size_t)i))); \
    return DML_OK;
#define DML_EWN(e, ints, value, grad) DML_EWN_INT_##ints(e, value)
    switch (c->op) {
#include "ew_ops.def"
      default: break;
    }
#undef DML_EWN
#undef DML_EWN_INT_1
  } else if (dml_dtype_is_int(dt)) {
#define DML_EWN_INT_1(e, value)                                       \
  case DML_OP_##e:                                                    \
    for (int64_t i = 0; i < n; i++)                                   \
      dml_store_i64(dt, y->data, (size_t)i,                           \
                    ewn_i_##e(dml_load_i64(dt, x->data, (size_t)i))); \
    return DML_OK;
#define DML_EWN(e, ints, value, grad) DML_EWN_INT_##ints(e, value)
    switch (c->op) {
#include "ew_ops.def"
      default: break;
    }
#undef DML_EWN
#undef DML_EWN_INT_1
  }
  return dml_cpu_err_dtype(c, "input", dt);
}

dml_status_t dml_cpuk_EwTable(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  int64_t n = dml_cpu_numel(x);
  if (!dml_dtype_is_float(dt)) return dml_cpu_err_dtype(c, "input", dt);
  if (y->dtype != dt) return dml_cpu_err_dtype(c, "output", y->dtype);
  if (dml_cpu_numel(y) != n)
    return dml_cpu_err_shapes(c, "output size differs from input");
  double a[DML_EW_MAX_ATTRS];
  dml_status_t s = dml_ew_attrs(c->op, c->attrs, c->n_attrs, a);
  if (s) {
    dml_status_t e = dml_cpu_error(c, dml_status_code(s), "%s", dml_status_reason(s));
    dml_status_free(s);
    return e;
  }
  if (dt == DML_DTYPE_F32 && c->op == DML_OP_ERF) {
    /* Erf's formula vectorized, the same f32 results (cpu_vmath.c) */
    dml_cpu_verf_f32((const float *)x->data, (float *)y->data, n);
    return DML_OK;
  }
  if (dt == DML_DTYPE_F32) {
    ew_f32(c->op, a, (const float *)x->data, (float *)y->data, n);
    return DML_OK;
  }
  for (int64_t i = 0; i < n; i++)
    dml_store_f64(dt, y->data, (size_t)i,
                  dml_cpu_ew_f64(c->op, a, dml_load_f64(dt, x->data, (size_t)i)));
  return DML_OK;
}
