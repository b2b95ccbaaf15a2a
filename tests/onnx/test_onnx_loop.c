/*
 * test_onnx_loop.c — ONNX Loop and Scan unrolled by the importer
 * (onnx_loop.c). Fixtures from scripts/gen_onnx_fixtures.py (gen_loop); each
 * model is compiled with the driver and run on the cpu runtime (exact
 * comparisons: small integer-valued floats), and every refusal is checked by
 * its message.
 */
#include "onnx_run_util.h"

static const float kX[2] = {1, 2}, kY0[2] = {0, 0};

/* y <- y + x three times; scan output i is y * i. */
static void run_loop_sum(const char *name, const dml_compile_options_t *o) {
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = session_of(name, o, &m);
  if (!s) return;
  set_f32(s, "x", kX, 1, 2, 0, 0);
  set_f32(s, "y0", kY0, 1, 2, 0, 0);
  CHECK_OK(dml_rt_session_run(s));
  static const float y[2] = {3, 6}, scans[6] = {0, 0, 2, 4, 6, 12};
  check_out(m, s, "y_final", 1, 2, 0, 0, y);
  check_out(m, s, "scans", 2, 3, 2, 0, scans);
  release(s, m);
}

static void test_loop_ir(void) {
  /* Unrolled: no Loop node; three copies of the body's Add. */
  dml_ir_module_t *mod = NULL;
  CHECK_OK(import_fixture("loop_sum.onnx", &mod));
  if (!mod) return;
  CHECK(module_well_formed(mod));
  CHECK(count_op(fwd(mod), DML_OP_ADD) == 3);
  CHECK(count_op(fwd(mod), DML_OP_CONCAT) == 1);
  dml_ir_module_release(mod);
}

static void test_loop_run(void) {
  run_loop_sum("loop_sum.onnx", NULL);
}

static void test_loop_bound_m(void) {
  /* M fed as a graph input and bound at compile time. */
  int64_t three = 3;
  dml_tensor_t mt = {DML_DTYPE_I64, 0, {0}, &three};
  dml_onnx_binding_t b = {"m", &mt};
  dml_compile_options_t o;
  memset(&o, 0, sizeof(o));
  o.bind = &b;
  o.n_bind = 1;
  run_loop_sum("loop_dynamic_m.onnx", &o);
}

static void test_loop_zero(void) {
  /* No iteration: the initial value, and an empty scan output. */
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = session_of("loop_zero.onnx", NULL, &m);
  if (!s) return;
  static const float y0[2] = {5, 7};
  set_f32(s, "x", kX, 1, 2, 0, 0);
  set_f32(s, "y0", y0, 1, 2, 0, 0);
  CHECK_OK(dml_rt_session_run(s));
  check_out(m, s, "y_final", 1, 2, 0, 0, y0);
  check_out(m, s, "scans", 2, 0, 2, 0, NULL);
  release(s, m);
}

static void test_scan_run(void) {
  /* Running sum over the columns of x; outputs stacked along axis 1, reversed. */
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = session_of("scan_sum.onnx", NULL, &m);
  if (!s) return;
  static const float s0[2] = {0, 0}, x[6] = {1, 2, 3, 4, 5, 6};
  set_f32(s, "s0", s0, 1, 2, 0, 0);
  set_f32(s, "x", x, 2, 2, 3, 0);
  CHECK_OK(dml_rt_session_run(s));
  static const float fin[2] = {6, 15}, ys[6] = {6, 3, 1, 15, 9, 4};
  check_out(m, s, "s_final", 1, 2, 0, 0, fin);
  check_out(m, s, "ys", 2, 2, 3, 0, ys);
  release(s, m);
}

static void test_scan8_run(void) {
  /* Scan-8: per batch element, the rows of x read in reverse. */
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = session_of("scan8_sum.onnx", NULL, &m);
  if (!s) return;
  static const float s0[4] = {0, 0, 100, 100},
                     x[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  set_f32(s, "s0", s0, 2, 2, 2, 0);
  set_f32(s, "x", x, 3, 2, 3, 2);
  CHECK_OK(dml_rt_session_run(s));
  static const float fin[4] = {9, 12, 127, 130},
                     ys[12] = {5, 6, 8, 10, 9, 12, 111, 112, 120, 122, 127, 130};
  check_out(m, s, "s_final", 2, 2, 2, 0, fin);
  check_out(m, s, "ys", 3, 2, 3, 2, ys);
  release(s, m);
}

/* ---- refusals ---- */

static void test_errors(void) {
  dml_ir_module_t *m = NULL;
  /* A run-time trip count or a condition that can turn false: not
   * unrolled, a Loop node run by the CPU executor (test_onnx_if_runtime
   * checks its values). */
  static const char *const rt[] = {"loop_dynamic_m.onnx", "loop_cond_false.onnx"};
  for (int i = 0; i < 2; i++) {
    CHECK_OK(import_fixture(rt[i], &m));
    CHECK(count_op(fwd(m), DML_OP_LOOP) == 1 && m && m->n_functions == 2);
    dml_ir_module_release(m);
    m = NULL;
  }
  CHECK_ERROR(import_fixture("loop_too_many.onnx", &m), DML_STATUS_UNIMPLEMENTED,
              "node 'loop' (Loop): 70000 iterations; at most 65536 are supported");
  CHECK_ERROR(import_fixture("loop_too_many_nodes.onnx", &m), DML_STATUS_UNIMPLEMENTED,
              "node 'loop' (Loop): unrolling would import more than 100000 body nodes");
  CHECK(m == NULL);
}

int main(void) {
  RUN(test_loop_ir);
  RUN(test_loop_run);
  RUN(test_loop_bound_m);
  RUN(test_loop_zero);
  RUN(test_scan_run);
  RUN(test_scan8_run);
  RUN(test_errors);
  return dml_test_finish();
}
