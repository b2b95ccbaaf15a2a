/* schedule_elementwise.c — the scheduler's elementwise forms: each
 * elementwise op's value in the kernel IR (ew_value: the formulas of
 * dml_ew.h plus Pow's sign rules, NaN-keeping Max/Min, Clip, Where,
 * OneHot, Expand, casts), the dtype and attribute checks (ew_reject), the
 * chain of a fuse group's elementwise nodes after its anchor
 * (dml_ksched_emit_chain, used by the GEMM, Conv and reduction kernels), the
 * kernel of a group of elementwise nodes only (one invocation per output
 * element, unrolled over large outputs), Dropout, the random ops of
 * schedule_random.c and the generators (Range, ConstantOfShape, Hann,
 * Hamming and Blackman windows); dml_ksched_ew_node for the eager kernel
 * library. Moved from schedule.c unchanged. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dml_cpu.h"
#include "dml_ew.h"
#include "schedule_common.h"

/* ---- elementwise ops ---- */

/* The elementwise ops composed from kernel_math.c's functions. */
static int ew_op_more(dml_op_t op) {
  /* the formula table's (ew_ops.def) */
  if (dml_ew_has(op) || dml_ewn_has(op) || dml_ew2_has(op)) return 1;
  switch (op) {
    case DML_OP_SHRINK:
    case DML_OP_SUM:
    case DML_OP_MEAN: return 1;
    default: return 0;
  }
}

/* Value of ew_op_more's node `n` given its operands `x` (formulas of the
 * ONNX operator specs, defaults included). */
static const dml_kval_t *ew_value_more(sched_t *s, const dml_pkg_node_t *n,
                                       const dml_kval_t *const *x) {
  dml_kpool_t *p = s->pool;
#define F1(f, a) dml_kv_fn(p, DML_KF_##f, a, NULL)
#define F2(f, a, b) dml_kv_fn(p, DML_KF_##f, a, b)
#define K(c) dml_kv_const(p, (float)(c))
#define ATTR(name, def) dml_attr_float(n->attrs, n->n_attrs, name, def)
  const dml_kval_t *a = x[0];
  switch (n->op) {
    case DML_OP_SHRINK: {
      /* x < -lambd ? x + bias : x > lambd ? x - bias : 0, as ONNX's spec
       * and reference (NaN is "otherwise": 0) and the CPU; selects, not
       * step() products (inf * 0 made +-inf and NaN inputs NaN) */
      double l = ATTR("lambd", 0.5), b = ATTR("bias", 0.0);
      if (s->ew_attrs) { /* the eager kernels: lambd, bias read at dispatch
                          * (dml_eager_lib.h DML_EAGER_PC_ATTR) */
        const dml_kval_t *lv = s->ew_attrs[0], *bv = s->ew_attrs[1];
        return dml_kv_select(p, F2(LT, a, F1(NEG, lv)), F2(ADD, a, bv),
                             dml_kv_select(p, F2(GT, a, lv), F2(SUB, a, bv), K(0)));
      }
      return dml_kv_select(p, F2(LT, a, K(-l)), F2(ADD, a, K(b)),
                           dml_kv_select(p, F2(GT, a, K(l)), F2(SUB, a, K(b)), K(0)));
    }
    case DML_OP_SUM:
    case DML_OP_MEAN: {
      const dml_kval_t *y = a;
      for (uint32_t i = 1; i < n->n_inputs; i++) y = F2(ADD, y, x[i]);
      return n->op == DML_OP_MEAN ? F2(DIV, y, K(n->n_inputs)) : y;
    }
    default: return NULL;
  }
#undef F1
#undef F2
#undef K
#undef ATTR
}

int dml_ksched_ew_op(dml_op_t op) {
  switch (op) {
    case DML_OP_CLIP:
    case DML_OP_BATCH_NORMALIZATION:
    /* typed */
    case DML_OP_NOT:
    case DML_OP_CAST:
    case DML_OP_EQUAL:
    case DML_OP_LESS:
    case DML_OP_LESS_OR_EQUAL:
    case DML_OP_GREATER:
    case DML_OP_GREATER_OR_EQUAL:
    case DML_OP_AND:
    case DML_OP_OR:
    case DML_OP_XOR:
    case DML_OP_WHERE:
    case DML_OP_EXPAND:
    case DML_OP_ONE_HOT: return 1;
    default: return ew_op_more(op);
  }
}

static int const_scalar(sched_t *s, const dml_pkg_node_t *n, uint32_t k, double *out);

/* Pow of f32 values with a compile-time exponent `e`: the exact special
 * forms (x*x, ..., each C99 pow's result for every x, NaN and infinities
 * included: x*x is pow(x, 2) rounded once, x*x*x within one rounding
 * more), else the general dml_kv_pow. */
static const dml_kval_t *pow_const(dml_kpool_t *p, const dml_kval_t *a, double e) {
  if (e == 0.0) return dml_kv_const(p, 1.0f);
  if (e == 1.0) return a;
  if (e == 2.0) return dml_kv_fn(p, DML_KF_MUL, a, a);
  if (e == 3.0) return dml_kv_fn(p, DML_KF_MUL, dml_kv_fn(p, DML_KF_MUL, a, a), a);
  if (e == 0.5) /* sqrt(-0) is -0 and sqrt(-inf) NaN, pow gives +0 and +inf */
    return dml_kv_select(
        p, dml_kv_fn(p, DML_KF_EQ, a, dml_kv_const(p, -INFINITY)),
        dml_kv_const(p, INFINITY),
        dml_kv_select(p, dml_kv_fn(p, DML_KF_EQ, a, dml_kv_const(p, 0.0f)),
                      dml_kv_const(p, 0.0f), dml_kv_fn(p, DML_KF_SQRT, a, NULL)));
  return dml_kv_pow(p, a, dml_kv_const(p, (float)e));
}

/* Pow (ONNX Pow-15: base and exponent of any numeric dtypes, the output
 * the base's), as the CPU computes it: a float operand makes it a float
 * power (computed in f32 with C99 pow semantics, dml_kv_pow; f64 is not
 * emitted), two integer ones the wrapping integer power (i32 when both
 * fit in 32 bits, else i64). An integer base with an integral float
 * exponent takes the integer power too: the CPU's double pow is exact
 * there, f32 pow is not. A constant f32 scalar exponent takes pow_const's
 * special forms. */
static const dml_kval_t *pow_value(sched_t *s, const dml_pkg_node_t *n,
                                   const dml_kval_t *const *x) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_value_t *y = val(s, n->outputs[0]);
  dml_kdtype_t yt = kdt(y), et = x[1]->dtype;
  if (dml_kdtype_is_float(yt)) {
    const dml_kval_t *a = dml_kv_cast(p, DML_KT_F32, x[0]), *r;
    double ce;
    const dml_pkg_value_t *ev = val(s, n->inputs[1]);
    if (ev && ev->type.dtype == DML_DTYPE_F32 && const_scalar(s, n, 1, &ce))
      r = pow_const(p, a, ce);
    else
      r = dml_kv_pow(p, a, dml_kv_cast(p, DML_KT_F32, x[1]));
    return dml_kv_cast(p, yt, r);
  }
  int wide = dml_kdtype_size(yt) > 4 || dml_kdtype_size(et) > 4 || yt == DML_KT_U32 ||
             dml_kdtype_is_float(et);
  dml_kdtype_t it = wide ? DML_KT_I64 : DML_KT_I32;
  const dml_kval_t *ip = dml_kv_cast(
      p, yt,
      dml_kv_fn(p, DML_KF_IPOW, dml_kv_cast(p, it, x[0]), dml_kv_cast(p, it, x[1])));
  if (!dml_kdtype_is_float(et)) return ip;
  const dml_kval_t *e32 = dml_kv_cast(p, DML_KT_F32, x[1]);
  const dml_kval_t *fp =
      dml_kv_cast(p, yt, dml_kv_pow(p, dml_kv_cast(p, DML_KT_F32, x[0]), e32));
  return dml_kv_select(
      p, dml_kv_fn(p, DML_KF_EQ, dml_kv_fn(p, DML_KF_FLOOR, e32, NULL), e32), ip, fp);
}

/* The typed elementwise value of node `n` (out dtype `t`), or NULL for
 * the f32-only ops. */
static const dml_kval_t *ew_typed_value(sched_t *s, const dml_pkg_node_t *n,
                                        dml_kdtype_t t, const dml_kval_t *const *x) {
  dml_kpool_t *p = s->pool;
  switch (n->op) {
    case DML_OP_NOT: return dml_kv_fn(p, DML_KF_NOT, x[0], NULL);
    case DML_OP_CAST: return dml_kv_cast(p, t, x[0]);
    case DML_OP_EQUAL: return dml_kv_fn(p, DML_KF_EQ, x[0], x[1]);
    case DML_OP_LESS: return dml_kv_fn(p, DML_KF_LT, x[0], x[1]);
    case DML_OP_LESS_OR_EQUAL: return dml_kv_fn(p, DML_KF_LE, x[0], x[1]);
    case DML_OP_GREATER: return dml_kv_fn(p, DML_KF_GT, x[0], x[1]);
    case DML_OP_GREATER_OR_EQUAL: return dml_kv_fn(p, DML_KF_GE, x[0], x[1]);
    case DML_OP_AND: return dml_kv_fn(p, DML_KF_AND, x[0], x[1]);
    case DML_OP_OR: return dml_kv_fn(p, DML_KF_OR, x[0], x[1]);
    case DML_OP_XOR: return dml_kv_fn(p, DML_KF_XOR, x[0], x[1]);
    case DML_OP_WHERE: return dml_kv_select(p, x[0], x[1], x[2]);
    case DML_OP_EXPAND: return x[0]; /* numpy broadcast of x[0] (the loads) */
    default: return NULL;
  }
}

/* The elementwise value of node `n` given its operands' values `x`. */
static const dml_kval_t *ew_value(sched_t *s, const dml_pkg_node_t *n,
                                  const dml_kval_t *const *x) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_value_t *y = val(s, n->outputs[0]);
  if (dml_ew_has(n->op) && y) {
    /* the formula table's ops (ew_ops.def): computed in f32, rounded to
     * the output's dtype (f16, bf16) once; dml_ksched_ew_reject checked the
     * attributes */
    double av[DML_EW_MAX_ATTRS];
    dml_status_t st = dml_ew_attrs(n->op, n->attrs, n->n_attrs, av);
    if (st) {
      dml_status_free(st);
      return NULL;
    }
    const dml_kval_t *xf = dml_kv_cast(p, DML_KT_F32, x[0]);
    return dml_kv_cast(p, kdt(y),
                       s->ew_attrs ? dml_kv_ew_v(p, n->op, xf, s->ew_attrs)
                                   : dml_kv_ew(p, n->op, xf, av));
  }
  /* the table's unary ops in their dtype (ew_ops.def's DML_EWN) */
  if (dml_ewn_has(n->op)) return dml_kv_ewn(p, n->op, x[0]);
  /* its binary ops (DML_EW2; Max and Min of more operands folded), but
   * Pow: pow_value's dtype rules (exponent of another dtype, constant
   * exponents) around the table's POW (dml_kv_pow) */
  if (dml_ew2_has(n->op) && n->op != DML_OP_POW) {
    double av[DML_EW_MAX_ATTRS];
    dml_status_t st = dml_ew_attrs(n->op, n->attrs, n->n_attrs, av);
    if (st) {
      dml_status_free(st);
      return NULL;
    }
    const dml_kval_t *r = x[0];
    for (uint32_t i = 1; i < n->n_inputs; i++)
      r = s->ew_attrs ? dml_kv_ew2_v(p, n->op, r, x[i], s->ew_attrs)
                      : dml_kv_ew2(p, n->op, r, x[i], av);
    return r;
  }
  const dml_kval_t *tv = ew_typed_value(s, n, y ? kdt(y) : DML_KT_F32, x);
  if (tv) return tv;
  switch (n->op) {
    case DML_OP_CLIP: {
      /* y = x < min ? min : x; y > max ? max : y (the CPU's dml_cpuk_Clip
       * and ONNX Runtime's: a NaN x stays NaN, a NaN bound is ignored, -0
       * is kept against a +0 bound), whether the bounds are constants
       * (nan_max's constant form is this select) or operands (the eager
       * library's Clip) */
      const dml_kval_t *y = x[0];
      if (n->n_inputs > 1 && x[1])
        y = dml_kv_select(p, dml_kv_fn(p, DML_KF_LT, y, x[1]), x[1], y);
      if (n->n_inputs > 2 && x[2])
        y = dml_kv_select(p, dml_kv_fn(p, DML_KF_GT, y, x[2]), x[2], y);
      return y;
    }
    case DML_OP_POW: return pow_value(s, n, x);
    case DML_OP_BATCH_NORMALIZATION: {
      /* inference (ONNX BatchNormalization-15, epsilon default 1e-5), per
       * channel in the affine form of ONNX Runtime's CPU kernel and
       * dml_cpu_bn_affine, all in f32: a = (1 / sqrt(var + epsilon)) *
       * scale, off = B - mean * a, y = x * a + off (so an infinite a gives
       * x * inf - inf = NaN, as ORT; the spec's (x - mean) * a + B would give
       * inf); f16/bf16 operands widen exactly and the result is rounded once */
      double eps = dml_attr_float(n->attrs, n->n_attrs, "epsilon", 1e-5);
      return dml_ksched_bn_value(p, x, dml_kv_const(p, (float)eps));
    }
    default: return ew_value_more(s, n, x);
  }
}

const dml_kval_t *dml_ksched_bn_value(dml_kpool_t *p, const dml_kval_t *const *x,
                                      const dml_kval_t *eps) {
  dml_kdtype_t t = x[0]->dtype;
  const dml_kval_t *f[5];
  for (int k = 0; k < 5; k++)
    f[k] = x[k]->dtype == DML_KT_F32 ? x[k] : dml_kv_cast(p, DML_KT_F32, x[k]);
  const dml_kval_t *inv =
      dml_kv_fn(p, DML_KF_DIV, dml_kv_const(p, 1.0f),
                dml_kv_fn(p, DML_KF_SQRT, dml_kv_fn(p, DML_KF_ADD, f[4], eps), NULL));
  const dml_kval_t *a = dml_kv_fn(p, DML_KF_MUL, inv, f[1]);
  const dml_kval_t *off =
      dml_kv_fn(p, DML_KF_SUB, f[2], dml_kv_fn(p, DML_KF_MUL, f[3], a));
  const dml_kval_t *y = dml_kv_fn(p, DML_KF_ADD, dml_kv_fn(p, DML_KF_MUL, f[0], a), off);
  return t == DML_KT_F32 ? y : dml_kv_cast(p, t, y);
}

static int is_int(dml_dtype_t d) {
  return dml_dtype_is_int(d);
}

/* Why the dtypes of elementwise node `n` (output y) are not emitted, or
 * NULL: the float functions take f32; arithmetic, Sign, Clip, Max/Min and
 * Mod take f32, i64 or i32 (one dtype throughout); compares take two
 * operands of one dtype (Equal: bool too) and give bool; Not/And/Or/Xor
 * are bool; Where takes a bool condition; Cast any of the four dtypes;
 * OneHot i64/i32 indices and values of y's dtype. */
static const char *ew_dtype_reject(sched_t *s, const dml_pkg_node_t *n,
                                   const dml_pkg_value_t *y) {
  dml_dtype_t yt = y->type.dtype;
  const dml_pkg_value_t *x0 = n->n_inputs ? val(s, n->inputs[0]) : NULL;
  const dml_pkg_value_t *x1 = n->n_inputs > 1 ? val(s, n->inputs[1]) : NULL;
  switch (n->op) {
    case DML_OP_CAST:
      return !x0 || !typed_ok(x0) ? "Cast from a dtype kernels do not hold" : NULL;
    case DML_OP_EQUAL:
    case DML_OP_LESS:
    case DML_OP_LESS_OR_EQUAL:
    case DML_OP_GREATER:
    case DML_OP_GREATER_OR_EQUAL:
      if (yt != DML_DTYPE_BOOL || !x0 || !x1 || x0->type.dtype != x1->type.dtype)
        return "compare of mixed dtypes";
      if (x0->type.dtype == DML_DTYPE_BOOL && n->op != DML_OP_EQUAL)
        return "ordering compare of bool";
      return NULL;
    case DML_OP_NOT:
    case DML_OP_AND:
    case DML_OP_OR:
    case DML_OP_XOR:
      for (uint32_t i = 0; i < n->n_inputs; i++) {
        const dml_pkg_value_t *x = val(s, n->inputs[i]);
        if (!x || x->type.dtype != DML_DTYPE_BOOL) return "logic op on non-bool";
      }
      return yt == DML_DTYPE_BOOL ? NULL : "logic op on non-bool";
    case DML_OP_WHERE: {
      const dml_pkg_value_t *x2 = val(s, n->inputs[2]);
      if (!x0 || !x1 || !x2 || x0->type.dtype != DML_DTYPE_BOOL || x1->type.dtype != yt ||
          x2->type.dtype != yt)
        return "Where needs a bool condition and operands of the output's dtype";
      return NULL;
    }
    case DML_OP_EXPAND:
      return x0 && x0->type.dtype == yt ? NULL : "Expand changes the dtype";
    case DML_OP_ONE_HOT: {
      const dml_pkg_value_t *x2 = n->n_inputs > 2 ? val(s, n->inputs[2]) : NULL;
      if (!x0 || !x2 || (!is_int(x0->type.dtype) && x0->type.dtype != DML_DTYPE_F32) ||
          !typed_ok(x0))
        return "OneHot indices must be i64, i32 or f32";
      if (x2->type.dtype != yt || !typed_ok(x2) || x2->type.rank != 1 ||
          x2->type.dims[0].value != 2 || x2->type.dims[0].sym >= 0)
        return "OneHot values must be [2] of the output's dtype";
      int64_t axis = dml_attr_int(n->attrs, n->n_attrs, "axis", -1);
      if (axis < 0) axis += y->type.rank;
      if (axis < 0 || axis >= y->type.rank || x0->type.rank != y->type.rank - 1)
        return "OneHot axis out of range";
      return yt == DML_DTYPE_BOOL ? "OneHot to bool" : NULL;
    }
    case DML_OP_CLIP:
    numeric:
      if (yt == DML_DTYPE_BOOL) return "arithmetic on bool";
      for (uint32_t i = 0; i < n->n_inputs; i++) {
        const dml_pkg_value_t *x = val(s, n->inputs[i]);
        if (x && x->type.dtype != yt) return "operands of mixed dtypes";
      }
      if (n->op == DML_OP_MOD && dml_dtype_is_float(yt) &&
          !dml_attr_int(n->attrs, n->n_attrs, "fmod", 0))
        return "Mod of floats needs fmod = 1";
      return NULL;
    case DML_OP_POW:
      if (!x0 || !x1 || x0->type.dtype != yt || yt == DML_DTYPE_BOOL ||
          x1->type.dtype == DML_DTYPE_BOOL)
        return "Pow needs a numeric base of the output's dtype";
      if (yt == DML_DTYPE_F64 || x1->type.dtype == DML_DTYPE_F64)
        return "f64 Pow is not emitted (f32, f16, bf16 and integers are)";
      return NULL;
    default:
      /* the table's binary ops but Pow: any number dtype, one throughout */
      if (dml_ew2_has(n->op)) goto numeric;
      if (dml_ewn_ints(n->op)) /* Abs, Neg, Relu, Sign: any number dtype */
        return yt == DML_DTYPE_BOOL         ? "arithmetic on bool"
               : x0 && x0->type.dtype != yt ? "operands of mixed dtypes"
                                            : NULL;
      /* the float functions: f32; f16 and bf16 (computed in f32, rounded)
       * for the one-function ops; f64 for those the renderers have in
       * double precision */
      for (uint32_t i = 0; i < n->n_inputs; i++) {
        const dml_pkg_value_t *x = val(s, n->inputs[i]);
        if (x && x->type.dtype != yt) return "operands of mixed dtypes";
      }
      if (yt == DML_DTYPE_F32) return NULL;
      if (dml_ew_has(n->op))
        return yt == DML_DTYPE_F16 || yt == DML_DTYPE_BF16
                   ? NULL
                   : "f64 of this op is not emitted (f32, f16 and bf16 are)";
      if ((yt == DML_DTYPE_F16 || yt == DML_DTYPE_BF16) &&
          (n->op == DML_OP_SIGMOID || n->op == DML_OP_TANH || n->op == DML_OP_EXP ||
           n->op == DML_OP_LOG || n->op == DML_OP_SQRT || n->op == DML_OP_FLOOR ||
           n->op == DML_OP_CEIL || n->op == DML_OP_RECIPROCAL || n->op == DML_OP_SIN ||
           n->op == DML_OP_COS || n->op == DML_OP_ROUND ||
           n->op == DML_OP_BATCH_NORMALIZATION))
        return NULL;
      if (yt == DML_DTYPE_F64 &&
          (n->op == DML_OP_SQRT || n->op == DML_OP_FLOOR || n->op == DML_OP_CEIL ||
           n->op == DML_OP_RECIPROCAL || n->op == DML_OP_EXP || n->op == DML_OP_LOG ||
           n->op == DML_OP_SIGMOID || n->op == DML_OP_TANH))
        return NULL;
      return "only f32 is emitted for this op";
  }
}

/* Why node `n` cannot be an elementwise node of a kernel, or NULL. */
const char *dml_ksched_ew_reject(sched_t *s, const dml_pkg_node_t *n) {
  if (!dml_ksched_ew_op(n->op)) return "not elementwise";
  if (n->n_outputs != 1) return "more than one output";
  const dml_pkg_value_t *y = val(s, n->outputs[0]);
  if (!y) return "absent output";
  if (!typed_ok(y)) return "only numeric and bool values (aligned) are emitted";
  dml_klin_t l;
  if (!type_numel(&y->type, &l)) return TOO_MANY_SYMS;
  if (n->n_inputs > 8) return "more than 8 inputs";
  const char *why = ew_dtype_reject(s, n, y);
  if (why) return why;
  if (dml_ew_has(n->op)) {
    double av[DML_EW_MAX_ATTRS];
    dml_status_t st = dml_ew_attrs(n->op, n->attrs, n->n_attrs, av);
    if (st) {
      dml_status_free(st);
      return "an attribute value the op does not accept";
    }
  }
  if (n->op == DML_OP_BATCH_NORMALIZATION) {
    if (dml_attr_int(n->attrs, n->n_attrs, "training_mode", 0))
      return "BatchNormalization in training mode";
    if (y->type.rank < 2 || y->type.dims[1].sym >= 0)
      return "BatchNormalization needs a static channel dim";
    for (uint32_t i = 1; i < n->n_inputs; i++) {
      const dml_pkg_value_t *x = val(s, n->inputs[i]);
      if (!x || x->type.rank != 1 || x->type.dims[0].sym >= 0 ||
          x->type.dims[0].value != y->type.dims[1].value)
        return "BatchNormalization parameters must be [C]";
    }
  }
  for (uint32_t i = 0; i < n->n_inputs; i++) {
    const dml_pkg_value_t *x = val(s, n->inputs[i]);
    if (!x) {
      if (n->op == DML_OP_CLIP) continue;
      return "absent input";
    }
    if (n->op == DML_OP_EXPAND && i == 1) continue; /* the shape: y's dims */
    if (n->op == DML_OP_ONE_HOT) continue;          /* checked in ew_dtype_reject */
    if (!typed_ok(x)) return "only numeric and bool values (aligned) are emitted";
    if (x->type.rank > y->type.rank) return "input of higher rank";
  }
  return NULL;
}

/* OneHot (ONNX OneHot-11) at output coordinates `coord`: the index at the
 * coordinates without `axis`, negative ones counted from depth (the
 * output's static dim on `axis`); values[1] where it equals the coordinate
 * on the axis, values[0] elsewhere (also for indices out of range). */
static const dml_kval_t *one_hot_value(sched_t *s, dml_kernel_t *K,
                                       const dml_pkg_node_t *n,
                                       const dml_kidx_t *const *coord) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_value_t *ix = val(s, n->inputs[0]), *vals = val(s, n->inputs[2]);
  const dml_pkg_value_t *y = val(s, n->outputs[0]);
  int64_t axis = dml_attr_int(n->attrs, n->n_attrs, "axis", -1);
  if (axis < 0) axis += y->type.rank;
  /* the depth: static, or a data-dependent symbol (a depth input fed at
   * run time, its value a push constant) */
  const dml_kval_t *depth = dml_kv_idx(p, DML_KT_I64, dim_idx(s, y->type.dims[axis]));
  const dml_kidx_t *c[DML_MAX_RANK];
  for (int32_t d = 0, j = 0; d < y->type.rank; d++)
    if (d != axis) c[j++] = coord[d];
  const dml_kval_t *i =
      dml_kv_cast(p, DML_KT_I64, load_at(s, ix, bcast_index(s, &ix->type, &ix->type, c)));
  i = dml_kv_select(p, dml_kv_fn(p, DML_KF_LT, i, dml_kv_zero(p, DML_KT_I64)),
                    dml_kv_fn(p, DML_KF_ADD, i, depth), i);
  const dml_kval_t *hit =
      dml_kv_fn(p, DML_KF_EQ, i, dml_kv_idx(p, DML_KT_I64, coord[axis]));
  dml_klin_t l;
  if (type_numel(&ix->type, &l))
    lin_add(&K->bytes, l, (int64_t)dml_dtype_size(ix->type.dtype));
  return dml_kv_select(p, hit, load_at(s, vals, dml_ki_const(p, 1)),
                       load_at(s, vals, dml_ki_const(p, 0)));
}

/* Appends the elementwise nodes of G after the anchor's value `acc`
 * (NULL when G has no anchor) at output coordinates `coord` and flat index
 * `flat`: registers reg0 .. reg0 + G->n - 1, then a store of every value
 * used outside G. */
static void emit_chain_at(sched_t *s, dml_kernel_t *K, const group_t *G, dml_kblock_t *b,
                          const dml_kval_t *acc, const dml_kidx_t *const *coord,
                          const dml_kidx_t *flat, uint32_t reg0) {
  dml_kpool_t *p = s->pool;
  uint32_t start = G->anchor != ANCHOR_NONE ? 1 : 0;
  /* values read from memory so far: each counts once in K->bytes, however
   * many nodes of G read it (the bytes a run moves, for dmlc bench) */
  uint32_t counted[32], n_counted = 0;
  /* register of each group node's output = its position in G */
  for (uint32_t i = 0; i < G->n; i++) {
    const dml_pkg_node_t *n = &s->fn->nodes[G->nodes[i]];
    if (n->op == DML_OP_ASSIGN) {
      /* the global's new value, from the register of its producer in G */
      const dml_pkg_value_t *gl = val(s, n->inputs[0]);
      int64_t pr = producer_in(s, G, n->inputs[1]);
      uint32_t r = 0;
      for (uint32_t j = 0; j < G->n; j++)
        if (G->nodes[j] == (uint32_t)pr) r = j;
      dml_kstmt_t *w = dml_ks_new(p, DML_KS_STORE);
      if (w) {
        w->buf = DML_KBUF_WEIGHTS;
        w->dtype = kdt(gl);
        w->idx = at(s, gl, flat);
        w->val = dml_kv_reg_t(p, reg0 + r, kdt(gl));
      }
      dml_kblock_add(b, w);
      K->writes_weights = 1;
      dml_klin_t l;
      if (type_numel(&gl->type, &l)) lin_add(&K->bytes, l, 4);
      continue;
    }
    const dml_pkg_value_t *y = val(s, n->outputs[0]);
    const dml_kval_t *v;
    if (i < start) {
      v = acc;
    } else if (n->op == DML_OP_ONE_HOT) {
      v = one_hot_value(s, K, n, coord);
    } else {
      const dml_kval_t *x[8] = {0};
      for (uint32_t k = 0; k < n->n_inputs && k < 8; k++) {
        const dml_pkg_value_t *xv = val(s, n->inputs[k]);
        if (!xv) continue;
        if (n->op == DML_OP_EXPAND && k == 1) continue; /* the shape */
        int64_t pr = producer_in(s, G, n->inputs[k]);
        if (pr >= 0) {
          for (uint32_t j = 0; j < G->n; j++)
            if (G->nodes[j] == (uint32_t)pr) x[k] = dml_kv_reg_t(p, reg0 + j, kdt(xv));
        } else {
          /* BatchNormalization's parameters follow the channel (dim 1) */
          const dml_kidx_t *ix = n->op == DML_OP_BATCH_NORMALIZATION && k > 0 ? coord[1]
                                 : same_shape(&xv->type, G->out)
                                     ? flat
                                     : bcast_index(s, &xv->type, G->out, coord);
          x[k] = load_at(s, xv, ix);
          int seen = 0;
          for (uint32_t c = 0; c < n_counted; c++) seen |= counted[c] == n->inputs[k];
          dml_klin_t l;
          if (!seen && type_numel(&xv->type, &l))
            lin_add(&K->bytes, l, (int64_t)dml_dtype_size(xv->type.dtype));
          if (!seen && n_counted < 32) counted[n_counted++] = n->inputs[k];
        }
      }
      v = ew_value(s, n, x);
      dml_klin_t l;
      if (type_numel(y ? &y->type : G->out, &l)) lin_add(&K->flops, l, 1);
    }
    dml_kstmt_t *st = dml_ks_new(p, DML_KS_LET);
    if (st) {
      st->reg = reg0 + i;
      st->val = v;
    }
    dml_kblock_add(b, st);
    if (y && (s->n_uses_outside[n->outputs[0]] || s->is_output[n->outputs[0]])) {
      dml_kblock_add(b, store_at(s, y, flat, dml_kv_reg_t(p, reg0 + i, kdt(y))));
      dml_klin_t l;
      if (type_numel(&y->type, &l))
        lin_add(&K->bytes, l, (int64_t)dml_dtype_size(y->type.dtype));
    }
  }
  K->n_regs = reg0 + G->n > K->n_regs ? reg0 + G->n : K->n_regs;
}

void dml_ksched_emit_chain(sched_t *s, dml_kernel_t *K, const group_t *G, dml_kblock_t *b,
                           const dml_kval_t *acc, const dml_kidx_t *const *coord,
                           const dml_kidx_t *flat) {
  emit_chain_at(s, K, G, b, acc, coord, flat, 0);
}

/* Elements per invocation of a large elementwise kernel, at gid + j * S
 * (S = numel / EW_UNROLL): the invocation loads all of them before its
 * first store, so EW_UNROLL loads per invocation are in flight. One f32
 * per invocation leaves a GPU's memory under-used: an H200 needs about
 * bandwidth x latency = 4 TB/s x ~0.7 us = 2.8 MB in flight, and 2048
 * resident invocations per SM x 132 SMs x 4 bytes is 1.1 MB (Little's
 * law). Neighbouring invocations still touch neighbouring elements, so the
 * accesses stay coalesced. */
#define EW_UNROLL 4
#define EW_UNROLL_MIN_ELEMS 65536

/* The unroll factor for an elementwise kernel of `numel` elements: 1, or
 * EW_UNROLL when numel divides evenly at every symbol value and is large
 * at the bound. */
static int ew_unroll(const sched_t *s, dml_klin_t numel) {
  if (numel.c % EW_UNROLL || numel.c0 % EW_UNROLL) return 1;
  return lin_max(s, numel) >= EW_UNROLL_MIN_ELEMS ? EW_UNROLL : 1;
}

/* Moves the statements of `from` into `lets` (register definitions) and
 * `stores` (everything else), keeping their order. */
static void split_lets(dml_kblock_t *from, dml_kblock_t *lets, dml_kblock_t *stores) {
  dml_kstmt_t *st = from->first;
  while (st) {
    dml_kstmt_t *next = st->next;
    st->next = NULL;
    dml_kblock_add(st->kind == DML_KS_LET ? lets : stores, st);
    st = next;
  }
}

/* A purely elementwise group: one invocation per output element, or per
 * EW_UNROLL elements S apart (ew_unroll). */
void dml_ksched_emit_ew_group(sched_t *s, const group_t *G) {
  dml_kpool_t *p = s->pool;
  dml_kernel_t *K = new_kernel(s, DML_KK_ELEMENTWISE);
  if (!K) return;
  set_nodes(s, K, G);
  dml_klin_t numel;
  type_numel(G->out, &numel);
  int u = ew_unroll(s, numel);
  dml_klin_t per = {numel.c / u, numel.sym, numel.c0 / u, numel.more};
  K->local[0] = WG;
  K->items[0] = per;
  const dml_kidx_t *gid = dml_ki_var(p, DML_KVAR_GID_X), *N = dml_ki_lin(p, numel);
  const dml_kidx_t *S = dml_ki_lin(p, per);
  dml_kblock_t lets = {0}, stores = {0};
  dml_klin_t flops = K->flops, bytes = K->bytes;
  /* When the grid covers the elements exactly (the count per invocation a
   * multiple of the workgroup size at every symbol value) no bounds check
   * is needed; the checks cost Vulkan on NVIDIA a quarter of its bandwidth
   * (2.9 vs 4.0 TB/s on 2^26 floats, bench/RESULTS.md). */
  const int exact = per.c % WG == 0 && per.c0 % WG == 0;
  for (int j = 0; j < u; j++) {
    const dml_kidx_t *idx =
        j ? dml_ki_bin(p, DML_KI_ADD, gid,
                       dml_ki_bin(p, DML_KI_MUL, dml_ki_const(p, j), S))
          : gid;
    const dml_kidx_t *coord[DML_MAX_RANK];
    coords_of(s, G->out, idx, coord);
    dml_kblock_t inner = {0}, l = {0}, w = {0};
    emit_chain_at(s, K, G, &inner, NULL, coord, idx, (uint32_t)j * G->n);
    if (j == 0) flops = K->flops, bytes = K->bytes; /* the work of one chain */
    if (u == 1) {
      K->body = exact ? inner.first : if_lt(s, gid, N, inner.first);
      return;
    }
    split_lets(&inner, &l, &w);
    block_append(&lets, &l);
    block_append(&stores, &w);
  }
  K->flops = flops;
  K->bytes = bytes;
  dml_kblock_add(&lets, stores.first);
  /* An invocation past S (the grid's last workgroup is partial) has no
   * elements: checking each gid + j * S against numel instead would let
   * invocation S + t redo element S + t, invocation t's second; in place
   * (the output planned over an input), one of the two then reads the
   * other's result (issue 23: a DenseNet block's BatchNorm+Relu applied
   * twice on lavapipe, whose workgroups run in order). gid < S implies
   * gid + j * S < numel for every j < u, as numel = u * S. */
  K->body = exact ? lets.first : if_lt(s, gid, S, lets.first);
}

/* ---- Dropout ---- */

/* Reads the scalar constant input `k` of node `n` as a double into `*out`
 * (1 when it is absent: `*out` untouched); 0 when it is not a constant
 * f32/f64/bool scalar held in the weights. */
static int const_scalar(sched_t *s, const dml_pkg_node_t *n, uint32_t k, double *out) {
  if (k >= n->n_inputs || n->inputs[k] == DML_PKG_NO_VALUE) return 1;
  const dml_pkg_value_t *v = val(s, n->inputs[k]);
  if (!v || v->storage != DML_PKG_STORAGE_CONST || v->type.rank != 0) return 0;
  size_t sz = dml_dtype_size(v->type.dtype);
  if (!sz || v->offset + sz > s->weights_size) return 0;
  const uint8_t *b = s->weights + v->offset;
  switch (v->type.dtype) {
    case DML_DTYPE_F32: {
      float f;
      memcpy(&f, b, 4);
      *out = f;
      return 1;
    }
    case DML_DTYPE_F64: memcpy(out, b, 8); return 1;
    case DML_DTYPE_BOOL: *out = b[0] != 0; return 1;
    default: return 0;
  }
}

/* A scalar input `k` of node `n` read by the kernel at run time: an f32
 * (or bool) scalar, aligned. */
static int runtime_scalar(sched_t *s, const dml_pkg_node_t *n, uint32_t k,
                          dml_dtype_t dt) {
  const dml_pkg_value_t *v = k < n->n_inputs ? val(s, n->inputs[k]) : NULL;
  return v && v->type.rank == 0 && v->type.dtype == dt && typed_ok(v);
}

/* Why Dropout node `n` (ONNX Dropout-13) has no kernel, or NULL. f32
 * data; ratio (the `ratio` attribute, 0.5, when absent, as the CPU reads
 * it) and training_mode constants or f32 / bool scalars read at run time.
 * `*out_training`: 0 for the inference form (output = data, the optional
 * mask (bool) all true: training_mode absent or false, or a constant
 * ratio of 0, where dml_cpu_dropout_train keeps every element, scaled by
 * 1); 1 for the training form with a constant ratio in [0, 1]; 2 for the
 * form reading ratio and/or training_mode at run time (dml_ksched_emit_dropout). */
const char *dml_ksched_dropout_reject(sched_t *s, const dml_pkg_node_t *n,
                                      int *out_training) {
  const dml_pkg_value_t *x = n->n_inputs ? val(s, n->inputs[0]) : NULL;
  const dml_pkg_value_t *y = n->n_outputs ? val(s, n->outputs[0]) : NULL;
  const dml_pkg_value_t *m = n->n_outputs > 1 && n->outputs[1] != DML_PKG_NO_VALUE
                                 ? val(s, n->outputs[1])
                                 : NULL;
  if (!x || !y) return "absent input or output";
  if (x->type.dtype != DML_DTYPE_F32 || y->type.dtype != DML_DTYPE_F32 || !typed_ok(x) ||
      !typed_ok(y))
    return "only f32 (aligned) data is emitted";
  if (m && (m->type.dtype != DML_DTYPE_BOOL || !typed_ok(m)))
    return "the mask must be bool";
  dml_klin_t l;
  if (!type_numel(&y->type, &l)) return TOO_MANY_SYMS;
  /* element i reads x[i] and writes y[i] and mask[i]: in place only at
   * the same offset */
  if ((overlap(x, y) && x->offset != y->offset) ||
      (m && (overlap(x, m) || overlap(y, m))))
    return "its result overlaps its operands in the memory plan";
  double training = 0.0;
  double ratio = dml_attr_float(n->attrs, n->n_attrs, "ratio", 0.5);
  int run_training = !const_scalar(s, n, 2, &training);
  if (run_training && !runtime_scalar(s, n, 2, DML_DTYPE_BOOL))
    return "training_mode must be a constant or a bool scalar";
  if (!run_training && training == 0.0) {
    *out_training = 0; /* inference: the ratio is not read */
    return NULL;
  }
  int run_ratio = !const_scalar(s, n, 1, &ratio);
  if (run_ratio && !runtime_scalar(s, n, 1, DML_DTYPE_F32))
    return "ratio must be a constant or an f32 scalar";
  if (!run_ratio && !(ratio >= 0.0 && ratio <= 1.0)) return "ratio outside [0, 1]";
  *out_training = run_training || run_ratio ? 2 : ratio != 0.0;
  return NULL;
}

/* Dropout (dml_ksched_dropout_reject), one kernel. Inference: y[i] = x[i] and
 * mask[i] = true. Training (dml_cpu_dropout_train): element i is kept when
 * its uniform u = bits * 2^-24 (the node's Philox stream,
 * dml_ksched_philox24) is >= ratio, i.e. bits >= the integer threshold
 * ceil(ratio * 2^24), so the masks are the CPU's bit for bit; y[i] = kept
 * ? x[i] * (f32)(1 / (1 - ratio)) : 0 (the CPU scales in double: 1 ulp
 * apart at most), mask[i] = kept. With ratio and/or training_mode read at
 * run time (training 2) the kernel computes the threshold from the f32
 * ratio (ratio * 2^24 and its ceiling are exact in f32), keeps everything
 * with scale 1 when training_mode is false, and the scale 1 / (1 - ratio)
 * in f32. A run-time ratio outside [0, 1], which the CPU refuses, is not
 * checked: thresholds clamp to [0, 2^24]. */
void dml_ksched_emit_dropout(sched_t *s, uint32_t node, int training) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *y = val(s, n->outputs[0]);
  const dml_pkg_value_t *m = n->n_outputs > 1 && n->outputs[1] != DML_PKG_NO_VALUE
                                 ? val(s, n->outputs[1])
                                 : NULL;
  dml_kernel_t *K = new_kernel(s, DML_KK_ELEMENTWISE);
  if (!K) return;
  group_t G = {.anchor = ANCHOR_NONE, .n = 1, .nodes = {node}};
  set_nodes(s, K, &G);
  dml_klin_t numel;
  type_numel(&y->type, &numel);
  K->local[0] = WG;
  K->items[0] = numel;
  lin_add(&K->bytes, numel, 8 + (m ? 1 : 0));
  const dml_kidx_t *gid = dml_ki_var(p, DML_KVAR_GID_X);
  dml_kblock_t body = {0};
  if (!training) {
    dml_kblock_add(&body, store_at(s, y, gid, load_at(s, x, gid)));
    if (m) dml_kblock_add(&body, store_at(s, m, gid, dml_kv_one(p, DML_KT_BOOL)));
  } else {
    double ratio = dml_attr_float(n->attrs, n->n_attrs, "ratio", 0.5);
    double on = 1.0;
    int run_ratio = !const_scalar(s, n, 1, &ratio);
    int run_on = !const_scalar(s, n, 2, &on);
    const dml_kval_t *thr = dml_kv_iconst(p, DML_KT_I32, dml_ksched_u24_threshold(ratio));
    const dml_kval_t *scale =
        dml_kv_const(p, ratio < 1.0 ? (float)(1.0 / (1.0 - ratio)) : 0.0f);
    if (run_ratio) {
      const dml_kval_t *r = load_at(s, val(s, n->inputs[1]), dml_ki_const(p, 0));
      const dml_kval_t *t = dml_kv_fn(
          p, DML_KF_MIN,
          dml_kv_fn(
              p, DML_KF_MAX,
              dml_kv_fn(p, DML_KF_CEIL,
                        dml_kv_fn(p, DML_KF_MUL, r, dml_kv_const(p, 16777216.0f)), NULL),
              dml_kv_const(p, 0.0f)),
          dml_kv_const(p, 16777216.0f));
      thr = dml_kv_cast(p, DML_KT_I32, t);
      scale = dml_kv_fn(p, DML_KF_RECIP,
                        dml_kv_fn(p, DML_KF_SUB, dml_kv_const(p, 1.0f), r), NULL);
    }
    const dml_kval_t *keep =
        dml_kv_fn(p, DML_KF_GE, dml_ksched_philox24(p, s->fn, node, gid), thr);
    if (run_on) {
      const dml_kval_t *t = load_at(s, val(s, n->inputs[2]), dml_ki_const(p, 0));
      keep = dml_kv_fn(p, DML_KF_OR, dml_kv_fn(p, DML_KF_NOT, t, NULL), keep);
      scale = dml_kv_select(p, t, scale, dml_kv_const(p, 1.0f));
    }
    dml_kstmt_t *let = dml_ks_new(p, DML_KS_LET);
    if (let) {
      let->reg = 0;
      let->val = keep;
    }
    K->n_regs = 1;
    const dml_kval_t *kept = dml_kv_reg_t(p, 0, DML_KT_BOOL);
    dml_kblock_add(&body, let);
    dml_kblock_add(
        &body, store_at(s, y, gid,
                        dml_kv_select(p, kept,
                                      dml_kv_fn(p, DML_KF_MUL, load_at(s, x, gid), scale),
                                      dml_kv_const(p, 0.0f))));
    if (m) dml_kblock_add(&body, store_at(s, m, gid, kept));
  }
  K->body = if_lt(s, gid, dml_ki_lin(p, numel), body.first);
}

/* A random op (schedule_random.c) as a kernel of its own: one invocation
 * per output element. */
void dml_ksched_emit_random(sched_t *s, uint32_t node) {
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const char *why = dml_ksched_random_reject(s->fn, node);
  const dml_pkg_value_t *y = why ? NULL : val(s, n->outputs[0]);
  dml_klin_t numel;
  if (!why && !type_numel(&y->type, &numel)) why = TOO_MANY_SYMS;
  if (why) {
    unsupported(s, node, "%s", why);
    return;
  }
  dml_kernel_t *K = new_kernel(s, DML_KK_ELEMENTWISE);
  if (!K) return;
  group_t G = {.anchor = ANCHOR_NONE, .n = 1, .nodes = {node}};
  set_nodes(s, K, &G);
  K->local[0] = WG;
  K->items[0] = numel;
  lin_add(&K->bytes, numel,
          (int64_t)dml_dtype_size(y->type.dtype) + (n->op == DML_OP_BERNOULLI ? 4 : 0));
  const dml_kidx_t *gid = dml_ki_var(s->pool, DML_KVAR_GID_X);
  K->body =
      if_lt(s, gid, dml_ki_lin(s->pool, numel),
            store_at(s, y, gid, dml_ksched_random_value(s->pool, s->fn, node, gid)));
}

/* ---- generators: Range, ConstantOfShape, windows ---- */

/* Range (ONNX opset 11), ConstantOfShape (opset 9) and HannWindow,
 * HammingWindow, BlackmanWindow (opset 17): one invocation per output
 * element i, the count c * s * s' ... (type_numel: static dims, the batch,
 * or the data-dependent symbols their shape inputs fed at run time give,
 * whose values the runtime computes on the host before the run; dims_reject
 * has refused those the device would compute). A zero dim gives no
 * workgroups (the runtimes skip the dispatch) and every store is guarded
 * by i < numel.
 * Range: start + i * delta, start and delta loaded from the scalar inputs
 * (f32 and f64: one multiply-add in the dtype, as the CPU's
 * (float)start + (float)i * (float)delta; integers in the dtype's width,
 * wrapping as the CPU's); ConstantOfShape: attribute `value` converted to
 * the output dtype as the CPU converts it; windows: a0 - a1 cos(2 pi i /
 * N1) + a2 cos(4 pi i / N1), N1 = size (periodic) or size - 1, computed in
 * f32 (the CPU's double values within 1e-6), float outputs only (an integer
 * output truncates, where f32's error could flip a value); the window's
 * size is the output dim (a symbol's run-time value when fed at run time).
 */
const char *dml_ksched_gen_reject(sched_t *s, const dml_pkg_node_t *n, double *cval) {
  const dml_pkg_value_t *y = n->n_outputs ? val(s, n->outputs[0]) : NULL;
  dml_klin_t l;
  if (!y || !typed_ok(y)) return "output dtype not held by kernels (or misaligned)";
  if (!type_numel(&y->type, &l))
    return "output dims over a symbol of index 32 or more, or one symbol in more than "
           "two "
           "dims";
  if (n->op == DML_OP_RANGE) {
    if (n->n_inputs != 3) return "Range needs start, limit and delta";
    for (uint32_t k = 0; k < 3; k++) {
      const dml_pkg_value_t *x = val(s, n->inputs[k]);
      dml_klin_t xl;
      if (!x || x->type.dtype != y->type.dtype || !typed_ok(x) ||
          !type_numel(&x->type, &xl) || xl.sym >= 0 || xl.c != 1)
        return "start, limit and delta must be scalars of the output dtype";
    }
    dml_dtype_t d = y->type.dtype;
    if (d == DML_DTYPE_F16 || d == DML_DTYPE_BF16 || d == DML_DTYPE_BOOL)
      return "only f32, f64 and integer Range is emitted";
    return NULL;
  }
  if (n->op == DML_OP_CONSTANT_OF_SHAPE) {
    const dml_attr_t *a = dml_attr_find(n->attrs, n->n_attrs, "value");
    *cval = 0;
    if (!a) return NULL;
    if (a->kind != DML_ATTR_TENSOR || a->tensor.rank > 1 || !a->tensor.data ||
        (a->tensor.rank == 1 && a->tensor.dims[0] != 1))
      return "value must be a one-element tensor";
    dml_dtype_t vt = a->tensor.dtype, dt = y->type.dtype;
    if (dml_dtype_is_float(vt) || dml_dtype_is_float(dt)) {
      double v = dml_load_f64(vt, a->tensor.data, 0);
      if (!dml_dtype_is_float(dt)) {
        if (!(v > -9.2e18 && v < 9.2e18)) return "value out of the output dtype's range";
        v = (double)(int64_t)v; /* C conversion truncates */
      }
      if (dml_dtype_is_float(dt) && (double)(float)v != v && v == v)
        return "value not exact in f32 (kernel constants are f32)";
      *cval = v;
    } else {
      *cval = 0;
    }
    return NULL;
  }
  if (!dml_dtype_is_float(y->type.dtype)) return "only float window outputs are emitted";
  if (y->type.rank != 1) return "window output must be 1-D";
  return NULL;
}

void dml_ksched_emit_generator(sched_t *s, uint32_t node, double cval) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *y = val(s, n->outputs[0]);
  dml_kdtype_t t = kdt(y);
  dml_klin_t numel;
  type_numel(&y->type, &numel);
  dml_kernel_t *K = new_kernel(s, DML_KK_ELEMENTWISE);
  if (!K) return;
  group_t G = {.anchor = ANCHOR_NONE, .n = 1, .nodes = {node}};
  set_nodes(s, K, &G);
  K->local[0] = WG;
  K->items[0] = numel;
  lin_add(&K->bytes, numel, (int64_t)dml_dtype_size(y->type.dtype));
  const dml_kidx_t *gid = dml_ki_var(p, DML_KVAR_GID_X), *zero = dml_ki_const(p, 0);
  const dml_kval_t *v;
  if (n->op == DML_OP_RANGE) {
    const dml_kval_t *st = load_at(s, val(s, n->inputs[0]), zero),
                     *de = load_at(s, val(s, n->inputs[2]), zero);
    v = dml_kv_fn(p, DML_KF_ADD, st, dml_kv_fn(p, DML_KF_MUL, dml_kv_idx(p, t, gid), de));
    lin_add(&K->flops, numel, 2);
  } else if (n->op == DML_OP_CONSTANT_OF_SHAPE) {
    const dml_attr_t *a = dml_attr_find(n->attrs, n->n_attrs, "value");
    if (dml_kdtype_is_float(t))
      v = dml_kv_fconst(p, t, (float)cval);
    else if (a && !dml_dtype_is_float(a->tensor.dtype))
      v = dml_kv_iconst(p, t, dml_load_i64(a->tensor.dtype, a->tensor.data, 0));
    else
      v = dml_kv_iconst(p, t, (int64_t)cval);
  } else {
    double a0, a1, a2 = 0;
    if (n->op == DML_OP_HANN_WINDOW) {
      a0 = 0.5, a1 = 0.5;
    } else if (n->op == DML_OP_HAMMING_WINDOW) {
      a0 = 25.0 / 46.0, a1 = 1.0 - 25.0 / 46.0;
    } else {
      a0 = 0.42, a1 = 0.5, a2 = 0.08;
    }
    /* N1 = size (periodic) or size - 1; i / N1 <= 1, so the angles stay
     * within [0, 4 pi] (N1 = 0, a 1-point symmetric window, gives the
     * CPU's cos(nan)) */
    const dml_kidx_t *size = dim_idx(s, y->type.dims[0]);
    const dml_kval_t *n1 = dml_kv_idx(p, DML_KT_F32, size);
    if (!dml_attr_int(n->attrs, n->n_attrs, "periodic", 1))
      n1 = dml_kv_fn(p, DML_KF_SUB, n1, dml_kv_const(p, 1.0f));
    const dml_kval_t *turn = dml_kv_fn(p, DML_KF_DIV, dml_kv_idx(p, DML_KT_F32, gid), n1);
    const dml_kval_t *c1 = dml_kv_fn(
        p, DML_KF_COS,
        dml_kv_fn(p, DML_KF_MUL, turn, dml_kv_const(p, 6.283185307179586f)), NULL);
    const dml_kval_t *c2 = dml_kv_fn(
        p, DML_KF_COS,
        dml_kv_fn(p, DML_KF_MUL, turn, dml_kv_const(p, 12.566370614359172f)), NULL);
    v = dml_kv_fn(p, DML_KF_SUB, dml_kv_const(p, (float)a0),
                  dml_kv_fn(p, DML_KF_MUL, dml_kv_const(p, (float)a1), c1));
    if (a2 != 0)
      v = dml_kv_fn(p, DML_KF_ADD, v,
                    dml_kv_fn(p, DML_KF_MUL, dml_kv_const(p, (float)a2), c2));
    v = dml_kv_cast(p, t, v);
    lin_add(&K->flops, numel, 8);
  }
  K->body = if_lt(s, gid, dml_ki_lin(p, numel), store_at(s, y, gid, v));
}

/* ---- the eager kernel library's formulas (codegen/eager_lib_gen.c) ---- */

const char *dml_ksched_ew_node(dml_kpool_t *pool, const dml_pkg_graph_t *g, uint32_t fn,
                               uint32_t node, const dml_kval_t *const *x,
                               const dml_kval_t *const *attrs,
                               const dml_kval_t **out_value) {
  sched_t s;
  memset(&s, 0, sizeof s);
  s.g = g;
  s.fn = &g->functions[fn];
  s.pool = pool;
  s.ew_attrs = attrs;
  const dml_pkg_node_t *n = &s.fn->nodes[node];
  if (n->op == DML_OP_IS_NAN || n->op == DML_OP_IS_INF || n->op == DML_OP_BIT_SHIFT)
    return dml_ksched_index_ew_value(&s, n, x, attrs, out_value); /* their kernels' */
  const char *why = dml_ksched_ew_reject(&s, n);
  if (why) return why;
  if (n->op == DML_OP_EXPAND || n->op == DML_OP_ONE_HOT ||
      n->op == DML_OP_BATCH_NORMALIZATION)
    return "not a formula of its operands' elements";
  const dml_kval_t *v = ew_value(&s, n, x);
  if (!v) return "no formula";
  *out_value = v;
  return NULL;
}
