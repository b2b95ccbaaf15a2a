/*
 * test_onnx_gradient.c — ONNX's ai.onnx.preview.training Gradient: imported
 * as the compile-only IR op Gradient, lowered by the expand-gradient pass
 * (reverse-mode autodiff). Fixtures from scripts/gen_onnx_fixtures.py
 * (gen_gradient). The model is compiled with the driver and run on the cpu
 * runtime; its gradients are compared with the derivatives worked out by
 * hand in double precision. Every refusal is checked by its message.
 */
#include <math.h>

#include "dml_package_emit.h"
#include "dml_passes.h"
#include "onnx_run_util.h"

static const double kW[3][2] = {{0.5, -1.0}, {0.25, 2.0}, {-0.75, 0.125}};

/* Output `name` of the last run: f32 of `rank` dims `dims`; copies its
 * values into out (n of them). Returns 1 when it has that shape. */
static int get_out(dml_rt_model_t *m, dml_rt_session_t *s, const char *name, int32_t rank,
                   const int64_t *dims, float *out, int64_t n) {
  int32_t k = dml_rt_model_find_output(m, name);
  CHECK(k >= 0);
  if (k < 0) return 0;
  dml_tensor_t got;
  CHECK_OK(dml_rt_session_get_output(s, (uint32_t)k, &got));
  CHECK(got.dtype == DML_DTYPE_F32 && got.rank == rank);
  if (got.dtype != DML_DTYPE_F32 || got.rank != rank) return 0;
  for (int32_t r = 0; r < rank; r++) CHECK(got.dims[r] == dims[r]);
  memcpy(out, got.data, (size_t)n * sizeof(float));
  return 1;
}

/* z = tanh(x W + b) for x [N,3]; Gradient(xs = [W, x, u], zs = [b], y = z)
 * gives dW = d(sum z)/dW = x^T (1 - z*z) (ONNX types each gradient as its
 * x, so a non-scalar y is summed), no dx (empty output name), du = 0 (z does
 * not depend on u). Tolerance: 1e-5 relative to max(1, |reference|), float32
 * rounding over sums of at most 5 terms. */
static void run_batch(dml_rt_model_t *m, dml_rt_session_t *s, int64_t n) {
  float x[5 * 3], b[2] = {0.1f, -0.2f}, u[4] = {1, 2, 3, 4};
  for (int64_t i = 0; i < n * 3; i++) x[i] = (float)(0.3 * (double)(i % 7) - 0.8);
  dml_tensor_t tx = {DML_DTYPE_F32, 2, {n, 3}, x};
  dml_tensor_t tb = {DML_DTYPE_F32, 1, {2}, b};
  dml_tensor_t tu = {DML_DTYPE_F32, 1, {4}, u};
  CHECK_OK(dml_rt_session_set_input_by_name(s, "x", &tx));
  CHECK_OK(dml_rt_session_set_input_by_name(s, "b", &tb));
  CHECK_OK(dml_rt_session_set_input_by_name(s, "u", &tu));
  CHECK_OK(dml_rt_session_run(s));
  double z[5][2], dw[3][2] = {{0}};
  for (int64_t i = 0; i < n; i++)
    for (int j = 0; j < 2; j++) {
      double acc = b[j];
      for (int k = 0; k < 3; k++) acc += (double)x[i * 3 + k] * kW[k][j];
      z[i][j] = tanh(acc);
    }
  for (int64_t i = 0; i < n; i++)
    for (int k = 0; k < 3; k++)
      for (int j = 0; j < 2; j++)
        dw[k][j] += (double)x[i * 3 + k] * (1 - z[i][j] * z[i][j]);
  float got_z[5 * 2], got_dw[3 * 2], got_du[4];
  int64_t dz[2] = {n, 2}, ddw[2] = {3, 2}, ddu[1] = {4};
  if (get_out(m, s, "z", 2, dz, got_z, n * 2))
    for (int64_t i = 0; i < n * 2; i++)
      CHECK_NEAR(got_z[i], z[i / 2][i % 2], 1e-5 * fmax(1, fabs(z[i / 2][i % 2])));
  if (get_out(m, s, "dW", 2, ddw, got_dw, 6))
    for (int i = 0; i < 6; i++)
      CHECK_NEAR(got_dw[i], dw[i / 2][i % 2], 1e-5 * fmax(1, fabs(dw[i / 2][i % 2])));
  if (get_out(m, s, "du", 1, ddu, got_du, 4))
    for (int i = 0; i < 4; i++) CHECK(got_du[i] == 0.0f);
}

static void test_batch(void) {
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = session_of("grad_batch.onnx", NULL, &m);
  if (!s) return;
  /* The x gradient was not asked for: no output. */
  CHECK(dml_rt_model_find_output(m, "dx") < 0);
  run_batch(m, s, 3);
  run_batch(m, s, 1);
  run_batch(m, s, 5);
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

/* The IR after import: Gradient(y, xs that have an output) named as ONNX's
 * node; after expand-gradient, no Gradient and the outputs keep names. */
static void test_ir(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(import_fixture("grad_batch.onnx", &m));
  if (!m) return;
  dml_ir_function_t *f = fwd(m);
  dml_ir_node_t *g = node_named(f, "grad");
  CHECK(g && g->op == DML_OP_GRADIENT);
  if (g) {
    /* Outputs dW, (unnamed), du: operands z, W, x, u; zs (b) dropped. */
    CHECK(g->n_inputs == 4 && g->n_outputs == 3);
    CHECK(g->inputs[0]->name && strcmp(g->inputs[0]->name, "z") == 0);
    CHECK(g->inputs[1]->kind == DML_IR_VALUE_GLOBAL &&
          strcmp(g->inputs[1]->name, "W") == 0);
    CHECK(g->inputs[3]->name && strcmp(g->inputs[3]->name, "u") == 0);
    CHECK(g->outputs[1]->name == NULL);
    CHECK(dml_ir_node_attr(g, "xs") == NULL && dml_ir_node_attr(g, "y") == NULL);
  }
  dml_pass_options_t po;
  memset(&po, 0, sizeof po);
  po.verify_each = 1;
  CHECK_OK(dml_pass_run_pipeline(m, "shape-infer,expand-gradient", &po));
  CHECK(count_op(f, DML_OP_GRADIENT) == 0);
  CHECK(producer(f, "dW") != NULL && producer(f, "du") != NULL);
  CHECK(f->n_results == 3);
  dml_ir_module_release(m);
}

/* A package never holds a compile-only op: without expand-gradient the
 * writer refuses the module. (The loader's refusal: tests/runtime.) */
static void test_emit_refuses_gradient(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(import_fixture("grad_batch.onnx", &m));
  if (!m) return;
  dml_pass_options_t po;
  memset(&po, 0, sizeof po);
  CHECK_OK(dml_pass_run_pipeline(m, "shape-infer,mem-plan", &po));
  void *bytes = NULL;
  size_t size = 0;
  CHECK_ERROR(dml_package_emit_memory(m, NULL, &bytes, &size),
              DML_STATUS_FAILED_PRECONDITION,
              "node 'grad' (Gradient) in function 'forward' is compile-only");
  free(bytes);
  dml_ir_module_release(m);
}

static dml_status_t compile_fixture(const char *name) {
  char path[1024];
  size_t len = 0;
  uint8_t *bytes = read_all(fixture(name, path, sizeof(path)), &len);
  CHECK(bytes != NULL);
  if (!bytes) return dml_status_make(DML_STATUS_NOT_FOUND, "test", "no fixture %s", name);
  void *pkg = NULL;
  size_t pkg_size = 0;
  dml_status_t st =
      dml_compile_onnx_memory(bytes, len, NULL, name, NULL, &pkg, &pkg_size, NULL);
  free(bytes);
  free(pkg);
  return st;
}

static void test_errors(void) {
  CHECK_ERROR(compile_fixture("grad_unknown_x.onnx"), DML_STATUS_INVALID_ARGUMENT,
              "node 'grad' (Gradient): xs[0] names unknown tensor 'nope'");
  CHECK_ERROR(compile_fixture("grad_y_late.onnx"), DML_STATUS_INVALID_ARGUMENT,
              "node 'grad' (Gradient): y names tensor 'c', which is not computed before "
              "the node");
  CHECK_ERROR(
      compile_fixture("grad_input_differs.onnx"), DML_STATUS_UNIMPLEMENTED,
      "node 'grad' (Gradient): input 0 ('b') is not the tensor xs[0] names ('a')");
  CHECK_ERROR(compile_fixture("grad_y_int.onnx"), DML_STATUS_INVALID_ARGUMENT,
              "y ('ai', input 0) has dtype i64: Gradient differentiates float16, float "
              "and double tensors\n  node 'grad' (Gradient)");
  CHECK_ERROR(compile_fixture("grad_no_rule.onnx"), DML_STATUS_UNIMPLEMENTED,
              "node 'gru' (GRU): no VJP rule\n  node 'grad' (Gradient), y = 'h'\n"
              "  while expanding Gradient node 'grad' in @forward");
}

int main(void) {
  RUN(test_batch);
  RUN(test_ir);
  RUN(test_emit_refuses_gradient);
  RUN(test_errors);
  return dml_test_finish();
}
