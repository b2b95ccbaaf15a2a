/* dml_trainer_predict over more rows than the batch bound: chunks only
 * when forward is row-independent (meta rows-independent, passes/
 * dml_row_indep.h); a forward whose Softmax runs over axis 0 (the rows) is
 * refused naming the node, and runs whole within the bound. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen_test_util.h"
#include "dml_pkg.h"
#include "dml_rt.h"
#include "dml_test.h"
#include "dml_trainer.h"

/* forward: y = Softmax(x @ w, axis A) over [batch, 2] x [2, 2]; a least
 * squares train_step / eval_step (the trainer needs them). */
#define MODULE(AXIS)                                                              \
  "sym batch <= 4\n"                                                              \
  "global @w : f32[2,2] param = dense<[1.0, 0.5, -0.5, 2.0]>\n"                   \
  "global @two : f32[] = dense<[2.0]>\n"                                          \
  "func @forward(%input: f32[batch,2]) -> (?[?]) {\n"                             \
  "  %m = MatMul(%input, @w)\n"                                                   \
  "  %y = Softmax(%m) {axis = " AXIS                                              \
  "}\n"                                                                           \
  "  return %y\n"                                                                 \
  "}\n"                                                                           \
  "func @eval_step(%input: f32[batch,2], %target: f32[batch,2]) -> (?[?]) {\n"    \
  "  %m = MatMul(%input, @w)\n"                                                   \
  "  %d = Sub(%m, %target)\n"                                                     \
  "  %sq = Mul(%d, %d)\n"                                                         \
  "  %loss = ReduceMean(%sq) {keepdims = 0}\n"                                    \
  "  return %loss\n"                                                              \
  "}\n"                                                                           \
  "func @train_step(%input: f32[batch,2], %target: f32[batch,2], %lr: f32[]) -> " \
  "(?[?]) {\n"                                                                    \
  "  %m = MatMul(%input, @w)\n"                                                   \
  "  %d = Sub(%m, %target)\n"                                                     \
  "  %sq = Mul(%d, %d)\n"                                                         \
  "  %loss = ReduceMean(%sq) {keepdims = 0}\n"                                    \
  "  %xt = Transpose(%input) {perm = [1, 0]}\n"                                   \
  "  %g0 = MatMul(%xt, %d)\n"                                                     \
  "  %g = Mul(%g0, %lr)\n"                                                        \
  "  %nw = Sub(@w, %g)\n"                                                         \
  "  Assign(@w, %nw)\n"                                                           \
  "  return %loss\n"                                                              \
  "}\n"

/* IR text -> the default pipeline -> a package (codegen_test_util.h's
 * cg_package) -> a loaded model. */
static dml_rt_model_t *build(const char *text) {
  size_t size = 0;
  void *bytes = cg_package(text, NULL, &size);
  if (!bytes) return NULL;
  dml_rt_model_t *model = NULL;
  CHECK_OK(dml_rt_model_load_memory(bytes, size, &model));
  free(bytes);
  return model;
}

static float g_x[10 * 2];

/* Softmax over `axis` of x @ w for rows [0, n), row-major [n, 2]. */
static void reference(int axis, int n, const float *w, float *y) {
  float m[20];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < 2; j++)
      m[2 * i + j] = g_x[2 * i] * w[j] + g_x[2 * i + 1] * w[2 + j];
  for (int k = 0; k < (axis ? n : 2); k++) {
    /* axis 1: row k's 2 values; axis 0: column k's n values */
    int cnt = axis ? 2 : n, stride = axis ? 1 : 2, base = axis ? 2 * k : k;
    double s = 0;
    for (int i = 0; i < cnt; i++) s += exp(m[base + i * stride]);
    for (int i = 0; i < cnt; i++)
      y[base + i * stride] = (float)(exp(m[base + i * stride]) / s);
  }
}

static void check_predict(int axis, int n, int want_ok) {
  dml_rt_model_t *m = build(axis ? MODULE("1") : MODULE("0"));
  dml_trainer_t *t = NULL;
  CHECK_OK(dml_trainer_create(m, "cpu", &t));
  if (!t) {
    dml_rt_model_release(m);
    return;
  }
  CHECK(dml_trainer_batch_bound(t) == 4);
  dml_tensor_t x;
  memset(&x, 0, sizeof x);
  x.dtype = DML_DTYPE_F32;
  x.rank = 2;
  x.dims[0] = n;
  x.dims[1] = 2;
  x.data = g_x;
  dml_tensor_t out;
  void *buf = NULL;
  if (want_ok) {
    CHECK_OK(dml_trainer_predict(t, &x, 0, &out, &buf));
    const float w[4] = {1.0f, 0.5f, -0.5f, 2.0f};
    float y[20];
    reference(axis, n, w, y);
    CHECK(out.rank == 2 && out.dims[0] == n && out.dims[1] == 2);
    for (int i = 0; buf && i < 2 * n; i++)
      CHECK_NEAR(((const float *)out.data)[i], y[i], 1e-6);
    free(buf);
  } else {
    CHECK_ERROR(
        dml_trainer_predict(t, &x, 0, &out, &buf), DML_STATUS_FAILED_PRECONDITION,
        "rows beyond the batch bound 4 cannot run in chunks: the node of 'y' (Softmax, "
        "axis 0) mixes rows; recompile with --batch-bound >= 10");
  }
  dml_trainer_release(t);
  dml_rt_model_release(m);
}

static void test_predict_chunks(void) {
  check_predict(1, 10, 1); /* Softmax over each row: 3 chunks of <= 4 rows */
  check_predict(0, 10, 0); /* over the rows: refused */
  check_predict(0, 4, 1);  /* within the bound: one run, right */
}

/* A package written before the check (a meta section without
 * rows-independent): chunking refused, as whether rows mix is unknown. */
static void test_old_package(void) {
  const char *text = MODULE("1");
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_ir_parse(text, strlen(text), "rows.dmlir", &m));
  if (!m) return;
  dml_pass_options_t o;
  memset(&o, 0, sizeof o);
  CHECK_OK(dml_pass_run_pipeline(m, dml_pass_default_pipeline(), &o));
  void *bytes = NULL, *old = NULL;
  size_t size = 0, old_size = 0;
  CHECK_OK(dml_package_emit_memory(m, NULL, &bytes, &size));
  dml_ir_module_release(m);
  dml_pkg_t pkg;
  dml_pkg_writer_t *w = NULL;
  CHECK_OK(dml_pkg_parse(bytes, size, &pkg));
  CHECK_OK(dml_pkg_writer_create(&w));
  static const char meta[] = "producer: dmlc 0.1.0\ntargets: cpu\n";
  for (uint32_t i = 0; w && i < pkg.n_sections; i++) {
    const dml_pkg_section_t *sec = &pkg.sections[i];
    int is_meta = !strcmp(sec->tag, "meta");
    CHECK_OK(dml_pkg_writer_add_section(
        w, sec->tag, is_meta ? (const void *)meta : sec->data,
        is_meta ? sizeof meta - 1 : (size_t)sec->size, sec->alignment));
  }
  if (w) CHECK_OK(dml_pkg_writer_finish_memory(w, &old, &old_size));
  dml_pkg_writer_release(w);
  dml_rt_model_t *model = NULL;
  if (old) CHECK_OK(dml_rt_model_load_memory(old, old_size, &model));
  if (model) {
    CHECK_ERROR(dml_rt_model_check_chunks(model, "test", 10, 4),
                DML_STATUS_FAILED_PRECONDITION,
                "the package does not say whether its rows are independent");
    dml_rt_model_release(model);
  }
  dml_rt_model_t *fresh = NULL;
  CHECK_OK(dml_rt_model_load_memory(bytes, size, &fresh));
  if (fresh) CHECK_OK(dml_rt_model_check_chunks(fresh, "test", 10, 4));
  dml_rt_model_release(fresh);
  free(old);
  free(bytes);
}

int main(void) {
  for (int i = 0; i < 20; i++) g_x[i] = (float)((i * 37 % 11) - 5) * 0.25f;
  RUN(test_predict_chunks);
  RUN(test_old_package);
  return dml_test_finish();
}
