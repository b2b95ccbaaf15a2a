/* dml_ew.c — attributes of the elementwise formula table (dml_ew.h). */
#include "dml_ew.h"

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
