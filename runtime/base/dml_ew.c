/* dml_ew.c — attributes of the elementwise formula table (dml_ew.h). */
#include "dml_ew.h"

#include <math.h>
#include <string.h>

int dml_ew_has(dml_op_t op) {
  switch (op) {
#define DML_EW(e, attrs, value, grad) case DML_OP_##e:
#include "ew_ops.def"
#undef DML_EW
    return 1;
    default: return 0;
  }
}

int dml_ewn_has(dml_op_t op) {
  switch (op) {
#define DML_EWN(e, ints, value, grad) case DML_OP_##e:
#include "ew_ops.def"
#undef DML_EWN
    return 1;
    default: return 0;
  }
}

int dml_ewn_ints(dml_op_t op) {
  switch (op) {
#define DML_EWN(e, ints, value, grad) \
  case DML_OP_##e:                    \
    return ints;
#include "ew_ops.def"
#undef DML_EWN
    default: return 0;
  }
}

int dml_ew2_has(dml_op_t op) {
  switch (op) {
#define DML_EW2(e, attrs, ints, value, dx, dy) case DML_OP_##e:
#include "ew_ops.def"
#undef DML_EW2
    return 1;
    default: return 0;
  }
}

/* The DML_EWN and DML_EW2 formulas in double with libm's functions (as the
 * CPU kernel's f64 forms, runtime/cpu/cpu_ew_table.c and
 * cpu_elementwise.c). */
static double ew_sigmoid_f64(double x) {
  return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
}
static double ew_pmod_f64(double x, double y) {
  double r = fmod(x, y);
  if (r == 0) return copysign(0.0, y);
  return (r < 0) != (y < 0) ? r + y : r;
}
#define X x
#define Y y
#define A0 a[0]
#define IFA(k, u, v) (a[k] != 0 ? (u) : (v))
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
#define GE(u, v) ((u) >= (v))
#define EQ(u, v) ((u) == (v))
#define SEL(c, u, v) ((c) ? (u) : (v))
#define EXP(u) exp(u)
#define LOG(u) log(u)
#define SQRT(u) sqrt(u)
#define TANH(u) tanh(u)
#define SIGMOID(u) ew_sigmoid_f64(u)
#define SIN(u) sin(u)
#define COS(u) cos(u)
#define FLOOR(u) floor(u)
#define CEIL(u) ceil(u)
#define ROUND(u) nearbyint(u)
#define POW(u, v) pow(u, v)
#define FMOD(u, v) fmod(u, v)
#define PMOD(u, v) ew_pmod_f64(u, v)
#define DML_EW_ATTR_F(name, dflt, nonzero)
double dml_ew_f64(dml_op_t op, const double *a, double x, double y) {
  static const double no_attrs[DML_EW_MAX_ATTRS] = {0, 0, 0};
  if (!a) a = no_attrs;
  (void)y;
  switch (op) {
#define DML_EWN(e, ints, value, grad) \
  case DML_OP_##e:                    \
    return value;
#include "ew_ops.def"
#undef DML_EWN

#define DML_EW2(e, attrs, ints, value, dx, dy) \
  case DML_OP_##e:                             \
    return value;
#include "ew_ops.def"
#undef DML_EW2
    default: return NAN;
  }
}
#undef X
#undef Y
#undef A0
#undef IFA
#undef K
#undef ADD
#undef SUB
#undef MUL
#undef DIV
#undef NEG
#undef ABS
#undef LT
#undef LE
#undef GT
#undef GE
#undef EQ
#undef SEL
#undef EXP
#undef LOG
#undef SQRT
#undef TANH
#undef SIGMOID
#undef SIN
#undef COS
#undef FLOOR
#undef CEIL
#undef ROUND
#undef POW
#undef FMOD
#undef PMOD
#undef DML_EW_ATTR_F

dml_status_t dml_ew_attrs(dml_op_t op, const dml_attr_t *attrs, size_t n_attrs,
                          double out[DML_EW_MAX_ATTRS]) {
  const char *opn = dml_op_name(op);
  int k = 0;
  for (int i = 0; i < DML_EW_MAX_ATTRS; i++) out[i] = 0;
#define DML_EW_ATTR_F(name, dflt, nonzero)                                         \
  {                                                                                \
    double v_ = dml_attr_float(attrs, n_attrs, name, dflt);                        \
    if ((nonzero) && v_ == 0)                                                      \
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, opn, "%s must not be 0", \
                             name);                                                \
    out[k++] = v_;                                                                 \
  }
#define DML_EW_ATTR_S(name, first, second)                                             \
  {                                                                                    \
    const char *s_ = dml_attr_string(attrs, n_attrs, name, first);                     \
    if (strcmp(s_, first) && strcmp(s_, second))                                       \
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, opn,                         \
                             "attribute %s is \"%s\", not \"%s\" or \"%s\"", name, s_, \
                             first, second);                                           \
    out[k++] = strcmp(s_, first) != 0;                                                 \
  }
  switch (op) {
#define DML_EW(e, attrs_, value, grad) \
  case DML_OP_##e: {                   \
    attrs_ break;                      \
  }
#include "ew_ops.def"
#undef DML_EW

#define DML_EW2(e, attrs_, ints, value, dx, dy) \
  case DML_OP_##e: {                            \
    attrs_ break;                               \
  }
#include "ew_ops.def"
#undef DML_EW2
    default:
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, opn,
                             "not an op of the elementwise table (ew_ops.def)");
  }
  (void)k;
  return DML_OK;
}
