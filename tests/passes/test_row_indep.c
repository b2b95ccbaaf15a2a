/* dml_row_indep_analyze (passes/dml_row_indep.h) on small modules: each
 * case's verdict after the default pipeline, and the node a refusal names.
 * The end-to-end checks (dmlc run refusing / chunking) are in
 * tests/cli/test_rowsafe.sh. */
#include <stdlib.h>
#include <string.h>

#include "dml_ir.h"
#include "dml_ir_text.h"
#include "dml_passes.h"
#include "dml_row_indep.h"
#include "dml_test.h"

#define HEAD                                                                         \
  "sym batch <= 8\n"                                                                 \
  "global @w : f32[4,3] = dense<[1.0, 2.0, 3.0, 4.0, "                               \
  "5.0, 6.0, 7.0, 8.0, 9.0, 1.0, 2.0, 3.0]>\n"                                       \
  "global @a0 : i64[1] = dense<[0]>\n"                                               \
  "global @a1 : i64[1] = dense<[1]>\n"                                               \
  "global @s1 : i64[1] = dense<[1]>\n"                                               \
  "global @e9 : i64[1] = dense<[9]>\n"                                               \
  "global @r3 : i64[3] = dense<[0, 2, 2]>\n"                                         \
  "global @m1 : i64[1] = dense<[-1]>\n"                                              \
  "global @g4 : f32[4] = dense<[1.0, 2.0, 3.0, 4.0]>\n"                              \
  "global @table : f32[10,2] = dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, " \
  "9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0]>\n"

/* `body` of forward over %x f32[batch,4] (and %i i64[batch,3]) returning
 * %y. */
static void expect(const char *body, int want, const char *why_part) {
  char text[4096];
  snprintf(text, sizeof text,
           HEAD
           "func @forward(%%x: f32[batch,4], %%i: i64[batch,3]) -> (?[?]) {\n%s"
           "  return %%y\n}\n",
           body);
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_ir_parse(text, strlen(text), "rows.dmlir", &m));
  if (!m) return;
  dml_pass_options_t o;
  memset(&o, 0, sizeof o);
  dml_status_t st = dml_pass_run_pipeline(m, dml_pass_default_pipeline(), &o);
  CHECK_OK(st);
  if (!st) {
    char why[320];
    int got = dml_row_indep_analyze(m->functions[0], why, sizeof why);
    if (got != want || (why_part && !strstr(why, why_part))) {
      fprintf(stderr, "case:\n%sgot %d (%s), wanted %d (%s)\n", body, got, why, want,
              why_part ? why_part : "");
      CHECK(0);
    }
  }
  dml_ir_module_release(m);
}

static void test_rows_kept(void) {
  expect("  %m = MatMul(%x, @w)\n  %y = Relu(%m)\n", 1, NULL);
  expect("  %y = Softmax(%x) {axis = 1}\n", 1, NULL);
  expect("  %y = Softmax(%x) {axis = -1}\n", 1, NULL);
  expect("  %y = ReduceSum(%x, @a1) {keepdims = 1}\n", 1, NULL);
  expect("  %r = Reshape(%x, @r3)\n  %y = Flatten(%r) {axis = 1}\n", 1, NULL);
  expect("  %t = Unsqueeze(%x, @a1)\n  %y = Flatten(%t) {axis = 1}\n", 1, NULL);
  expect("  %g = Gather(@table, %i) {axis = 0}\n  %y = Flatten(%g) {axis = 1}\n", 1,
         NULL);
  expect("  %y = Slice(%x, @s1, @e9, @a1)\n", 1, NULL);
  expect("  %sp = Slice(%x, @a0, @e9, @a0)\n  %y = Neg(%sp)\n", 1, NULL);
  expect("  %c = Concat(%x, %x) {axis = 1}\n  %y = Sub(%c, %c)\n", 1, NULL);
  expect("  %t = Unsqueeze(%x, @a1)\n  %y = Transpose(%t) {perm = [0, 2, 1]}\n", 1, NULL);
  expect("  %y = LayerNormalization(%x, @g4) {axis = -1}\n", 1, NULL);
}

static void test_rows_mixed(void) {
  expect("  %y = Softmax(%x) {axis = 0}\n", 0, "(Softmax, axis 0) mixes rows");
  expect("  %s = ReduceMean(%x, @a0) {keepdims = 1}\n  %y = Sub(%x, %s)\n", 0,
         "(ReduceMean, axes include 0) mixes rows");
  expect("  %s = ReduceMax(%x) {keepdims = 1}\n  %y = Sub(%x, %s)\n", 0,
         "(ReduceMax over all axes) mixes rows");
  expect("  %t = Transpose(%x) {perm = [1, 0]}\n  %y = Transpose(%t) {perm = [1, 0]}\n",
         0, "(Transpose, perm[0] = 1) mixes rows");
  expect("  %r = Reshape(%x, @m1)\n  %y = Neg(%r)\n", 0,
         "(Reshape, regroups dim 0) mixes rows");
  expect("  %y = Concat(%x, %x) {axis = 0}\n", 0, "(Concat, axis 0) mixes rows");
  expect("  %y = Slice(%x, @s1, @e9, @a0)\n", 0, "mixes rows");
  expect("  %y = CumSum(%x, @a0)\n", 0, "(CumSum, axis 0) mixes rows");
  expect("  %y = ArgMax(%x) {keepdims = 1}\n", 0, "(ArgMax, axis 0) mixes rows");
  expect("  %t = Transpose(%x) {perm = [1, 0]}\n  %y = MatMul(%x, %t)\n", 0,
         "mixes rows");
  /* the row count entering arithmetic: x / N */
  expect(
      "  %sh = Shape(%x)\n  %n = Gather(%sh, @a0) {axis = 0}\n"
      "  %f = Cast(%n) {to = 1}\n  %y = Div(%x, %f)\n",
      0, "an operand computed from the row count");
  expect("  %y = RandomNormalLike(%x)\n", 0, "(RandomNormalLike, random) mixes rows");
}

int main(void) {
  RUN(test_rows_kept);
  RUN(test_rows_mixed);
  return dml_test_finish();
}
