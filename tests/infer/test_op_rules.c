/* The per-op rule table (runtime/base/op_rules.def): every op of ops.def has
 * exactly one shape rule (a line of op_rules.def, or of the formula table
 * ew_ops.def for its float activations), and the VJP column agrees with
 * dml_autodiff_supports(). A new op without its line fails here. */
#include <string.h>

#include "dml_autodiff.h"
#include "dml_ew.h"
#include "dml_ir_infer.h"
#include "dml_test.h"

static int g_line[DML_OP_COUNT_];    /* lines of op_rules.def per op */
static int g_has_vjp[DML_OP_COUNT_]; /* its VJP column is not `none` */

static void count_lines(void) {
  memset(g_line, 0, sizeof g_line);
#define DML_RULE(e, shape, vjp, rows, dims, reads, eager, elems) \
  g_line[DML_OP_##e]++;                                          \
  g_has_vjp[DML_OP_##e] = strcmp(#vjp, "none") != 0;
#include "op_rules.def"
#undef DML_RULE
}

/* The CPU columns agree: READS only with a DIMS rule, EAGER value only
 * with one, and a DIMS rule reads at least one input's values or (Concat)
 * the inputs' dims. */
static void test_cpu_columns(void) {
  int n_dims = 0;
#define DML_RULE(e, shape, vjp, rows, dims, reads, eager, elems)                    \
  {                                                                                 \
    int has_dims = strcmp(#dims, "none") != 0;                                      \
    n_dims += has_dims;                                                             \
    if (!has_dims && (reads) != 0) fprintf(stderr, "%s: READS without DIMS\n", #e); \
    if (!has_dims && !strcmp(#eager, "value"))                                      \
      fprintf(stderr, "%s: EAGER value without DIMS\n", #e);                        \
    CHECK(has_dims || (reads) == 0);                                                \
    CHECK(has_dims || strcmp(#eager, "value") != 0);                                \
    CHECK(!has_dims || (reads) != 0 || DML_OP_##e == DML_OP_CONCAT);                \
  }
#include "op_rules.def"
#undef DML_RULE
  CHECK(n_dims >= 30); /* Reshape, Slice, Pad, the reductions, ... */
}

static void test_every_op_has_one_shape_rule(void) {
  count_lines();
  for (int op = 1; op < DML_OP_COUNT_; op++) {
    int ew = dml_ew_has((dml_op_t)op);
    if (g_line[op] + ew != 1)
      fprintf(stderr, "op %s: %d line(s) in op_rules.def, %s ew_ops.def\n",
              dml_op_name((dml_op_t)op), g_line[op], ew ? "in" : "not in");
    CHECK(g_line[op] + ew == 1);
    CHECK(dml_ir_infer_has_rule((dml_op_t)op));
  }
  CHECK(!dml_ir_infer_has_rule(DML_OP_INVALID));
  CHECK(!dml_ir_infer_has_rule(DML_OP_COUNT_));
}

static void test_vjp_column(void) {
  count_lines();
  int n = 0;
  for (int op = 1; op < DML_OP_COUNT_; op++) {
    int want = dml_ew_has((dml_op_t)op) || g_has_vjp[op];
    if (dml_autodiff_supports((dml_op_t)op) != want)
      fprintf(stderr, "op %s: autodiff says %d, op_rules.def %d\n",
              dml_op_name((dml_op_t)op), dml_autodiff_supports((dml_op_t)op), want);
    CHECK(dml_autodiff_supports((dml_op_t)op) == want);
    n += want;
  }
  /* the set before the table: autodiff.c's switch of 88 ops + the 21 of
   * ew_ops.def */
  CHECK(n >= 109);
  CHECK(!dml_autodiff_supports(DML_OP_INVALID));
  CHECK(!dml_autodiff_supports(DML_OP_EQUAL)); /* boolean result */
  CHECK(dml_autodiff_supports(DML_OP_MATMUL));
  CHECK(dml_autodiff_supports(DML_OP_MISH)); /* from ew_ops.def */
}

int main(void) {
  RUN(test_every_op_has_one_shape_rule);
  RUN(test_vjp_column);
  RUN(test_cpu_columns);
  return dml_test_finish();
}
