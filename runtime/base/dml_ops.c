#include "dml_ops.h"

#include <string.h>

static const dml_op_info_t k_ops[DML_OP_COUNT_] = {
    [DML_OP_INVALID] = {"<invalid>", 0, 0, 0, 0, 0},
#define DML_OP(e, name, imin, imax, omin, omax, flags) \
  [DML_OP_##e] = {name, imin, imax, omin, omax, flags},
#include "ops.def"
#undef DML_OP
};

const dml_op_info_t *dml_op_info(dml_op_t op) {
  if ((int)op <= 0 || (int)op >= DML_OP_COUNT_) return NULL;
  return &k_ops[op];
}

const char *dml_op_name(dml_op_t op) {
  const dml_op_info_t *i = dml_op_info(op);
  return i ? i->name : "<invalid>";
}

dml_tol_class_t dml_op_tol_class(dml_op_t op) {
  const dml_op_info_t *i = dml_op_info(op);
  uint32_t f = i ? i->flags : 0;
  if (f & (DML_OPF_EXACT | DML_OPF_VIEW)) return DML_TOL_EXACT;
  if (f & DML_OPF_ARITH) return DML_TOL_ARITH;
  if (f & DML_OPF_TRANSC) return DML_TOL_TRANSC;
  return DML_TOL_ACCUM;
}

dml_op_t dml_op_from_name(const char *name, size_t len) {
  for (int i = 1; i < DML_OP_COUNT_; i++) {
    if (strlen(k_ops[i].name) == len && memcmp(k_ops[i].name, name, len) == 0)
      return (dml_op_t)i;
  }
  return DML_OP_INVALID;
}
