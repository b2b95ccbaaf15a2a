/*
 * test_onnx_bind.c — what the conformance runner relies on: TensorProto
 * files (dml_onnx_tensor_read_file), model descriptions, the in-memory
 * compile (dml_compile_onnx_memory) and compile-time binding of shape
 * inputs (the import option `bind`), declared input shapes replaced (the
 * import option `input_shapes`), with every user-facing error.
 * Fixtures: tests/conformance/gen_fixtures.py.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_driver.h"
#include "dml_onnx.h"
#include "dml_rt.h"
#include "dml_test.h"

static char path_buf[4096];
static const char *fixture(const char *name) {
  char rel[256];
  snprintf(rel, sizeof(rel), "tests/conformance/fixtures/%s", name);
  return dml_test_path("DMLC_SOURCE_DIR", rel, path_buf, sizeof(path_buf));
}

static uint8_t *model_bytes(size_t *out_len) {
  FILE *f = fopen(fixture("reshape_input.onnx"), "rb");
  if (!f) return NULL;
  uint8_t *b = (uint8_t *)malloc(4096);
  *out_len = b ? fread(b, 1, 4096, f) : 0;
  fclose(f);
  return b;
}

static void test_tensor_read(void) {
  const char *files[] = {"shape.pb", "shape_typed.pb"};
  for (int i = 0; i < 2; i++) {
    dml_tensor_t t;
    void *buf = NULL;
    CHECK_OK(dml_onnx_tensor_read_file(fixture(files[i]), &t, &buf));
    CHECK(t.dtype == DML_DTYPE_I64 && t.rank == 1 && t.dims[0] == 2);
    CHECK(buf && t.data == buf);
    if (buf) CHECK(((int64_t *)t.data)[0] == 3 && ((int64_t *)t.data)[1] == 2);
    free(buf);
  }
}

static void test_tensor_read_errors(void) {
  dml_tensor_t t;
  void *buf = NULL;
  CHECK_ERROR(dml_onnx_tensor_read_file(fixture("missing.pb"), &t, &buf),
              DML_STATUS_NOT_FOUND, "cannot open");
  CHECK_ERROR(dml_onnx_tensor_read_file(fixture("sequence.pb"), &t, &buf),
              DML_STATUS_DATA_LOSS, "not an onnx.TensorProto");
  static const uint8_t garbage[] = {0xff, 0xff, 0xff};
  CHECK_ERROR(dml_onnx_tensor_read_memory(garbage, sizeof(garbage), &t, &buf),
              DML_STATUS_DATA_LOSS, "malformed or truncated");
}

static void test_describe(void) {
  size_t len = 0;
  uint8_t *bytes = model_bytes(&len);
  CHECK(bytes != NULL);
  if (!bytes) return;
  dml_onnx_model_desc_t *d = NULL;
  CHECK_OK(dml_onnx_model_describe(bytes, len, &d));
  if (d) {
    CHECK(d->opset == 13);
    CHECK(d->n_inputs == 2 && d->n_outputs == 1 && d->n_nodes == 1);
    CHECK(!strcmp(d->inputs[1].name, "shape") && d->inputs[1].dtype == DML_DTYPE_I64);
    CHECK(d->inputs[1].kind == DML_ONNX_VALUE_TENSOR && d->inputs[1].rank == 1);
    CHECK(d->inputs[0].rank == 2 && d->inputs[0].dims[0] == 2 &&
          d->inputs[0].dims[1] == 3);
    CHECK(!strcmp(d->nodes[0].op_type, "Reshape") && d->nodes[0].n_inputs == 2);
    CHECK(!strcmp(d->nodes[0].inputs[1], "shape"));
  }
  dml_onnx_model_desc_release(d);
  CHECK(dml_onnx_op_is_supported("Reshape", 13));
  CHECK(!dml_onnx_op_is_supported("NoSuchOp", 13));
  static const uint8_t garbage[] = {0x0a, 0xff};
  d = NULL;
  CHECK_ERROR(dml_onnx_model_describe(garbage, sizeof(garbage), &d), DML_STATUS_DATA_LOSS,
              "not a valid ONNX model");
  free(bytes);
}

static const dml_onnx_input_shape_t *g_shapes; /* input_shapes of compile_with */
static size_t g_n_shapes;

static dml_status_t compile_with(const uint8_t *bytes, size_t len,
                                 const dml_onnx_binding_t *b, size_t nb,
                                 dml_rt_model_t **out_model) {
  dml_compile_options_t o;
  memset(&o, 0, sizeof(o));
  o.bind = b;
  o.n_bind = nb;
  o.input_shapes = g_shapes;
  o.n_input_shapes = g_n_shapes;
  void *pkg = NULL;
  size_t size = 0;
  dml_compile_report_t r;
  DML_RETURN_IF_ERROR(dml_compile_onnx_memory(bytes, len, NULL, "reshape_input.onnx", &o,
                                              &pkg, &size, &r));
  CHECK(r.package_bytes == size && size > 0);
  dml_status_t s = out_model ? dml_rt_model_load_memory(pkg, size, out_model) : DML_OK;
  free(pkg);
  return s;
}

static void test_bind_compiles_and_runs(void) {
  size_t len = 0;
  uint8_t *bytes = model_bytes(&len);
  if (!bytes) return;
  /* Without the binding the shape is an input at run time: one package
   * serves every target shape of rank 2 (data-dependent dims, ir/dml_ir.h). */
  {
    dml_rt_model_t *dm = NULL;
    CHECK_OK(compile_with(bytes, len, NULL, 0, &dm));
    dml_rt_session_t *s = NULL;
    if (dm) CHECK_OK(dml_rt_session_create(dm, "cpu", &s));
    if (s) {
      float x[6] = {1, 2, 3, 4, 5, 6};
      dml_tensor_t xt = {DML_DTYPE_F32, 2, {2, 3}, x};
      static const int64_t shapes[3][2] = {{3, 2}, {1, -1}, {6, 1}};
      for (int k = 0; k < 3; k++) {
        int64_t sv[2] = {shapes[k][0], shapes[k][1]};
        dml_tensor_t svt = {DML_DTYPE_I64, 1, {2}, sv};
        CHECK_OK(dml_rt_session_set_input_by_name(s, "x", &xt));
        CHECK_OK(dml_rt_session_set_input_by_name(s, "shape", &svt));
        CHECK_OK(dml_rt_session_run(s));
        dml_tensor_t y;
        memset(&y, 0, sizeof(y));
        CHECK_OK(dml_rt_session_get_output(s, 0, &y));
        int64_t want1 = k == 1 ? 6 : shapes[k][1];
        CHECK(y.rank == 2 && y.dims[0] == shapes[k][0] && y.dims[1] == want1);
        if (y.data) CHECK(memcmp(y.data, x, sizeof x) == 0);
      }
      /* 8 elements from 6: the kernel's error names the node */
      int64_t bad[2] = {4, 2};
      dml_tensor_t bt = {DML_DTYPE_I64, 1, {2}, bad};
      CHECK_OK(dml_rt_session_set_input_by_name(s, "shape", &bt));
      CHECK_ERROR(dml_rt_session_run(s), DML_STATUS_INVALID_ARGUMENT,
                  "cannot reshape 6 elements into 8");
      dml_rt_session_release(s);
    }
    dml_rt_model_release(dm);
  }
  int64_t shape[2] = {3, 2};
  dml_tensor_t st = {DML_DTYPE_I64, 1, {2}, shape};
  dml_onnx_binding_t b = {"shape", &st};
  dml_rt_model_t *m = NULL;
  CHECK_OK(compile_with(bytes, len, &b, 1, &m));
  if (m) {
    CHECK(dml_rt_model_num_inputs(m) == 1);
    CHECK(dml_rt_model_find_input(m, "shape") < 0);
    dml_rt_session_t *s = NULL;
    CHECK_OK(dml_rt_session_create(m, "cpu", &s));
    float x[6] = {1, 2, 3, 4, 5, 6};
    dml_tensor_t xt = {DML_DTYPE_F32, 2, {2, 3}, x};
    CHECK_OK(dml_rt_session_set_input_by_name(s, "x", &xt));
    CHECK_OK(dml_rt_session_run(s));
    dml_tensor_t y;
    memset(&y, 0, sizeof(y));
    CHECK_OK(dml_rt_session_get_output(s, 0, &y));
    CHECK(y.rank == 2 && y.dims[0] == 3 && y.dims[1] == 2);
    if (y.data) CHECK(((float *)y.data)[5] == 6.0f);
    dml_rt_session_release(s);
  }
  dml_rt_model_release(m);
  free(bytes);
}

static void test_bind_errors(void) {
  size_t len = 0;
  uint8_t *bytes = model_bytes(&len);
  if (!bytes) return;
  int64_t shape[2] = {3, 2};
  float fshape[2] = {3, 2};
  dml_tensor_t st = {DML_DTYPE_I64, 1, {2}, shape};
  dml_tensor_t ft = {DML_DTYPE_F32, 1, {2}, fshape};
  dml_tensor_t wrong_len = {DML_DTYPE_I64, 1, {1}, shape};
  dml_onnx_binding_t nope = {"nope", &st};
  CHECK_ERROR(compile_with(bytes, len, &nope, 1, NULL), DML_STATUS_INVALID_ARGUMENT,
              "cannot bind 'nope': it is not a graph input");
  dml_onnx_binding_t f = {"shape", &ft};
  CHECK_ERROR(compile_with(bytes, len, &f, 1, NULL), DML_STATUS_INVALID_ARGUMENT,
              "does not match its declared type");
  dml_onnx_binding_t w = {"shape", &wrong_len};
  CHECK_ERROR(compile_with(bytes, len, &w, 1, NULL), DML_STATUS_INVALID_ARGUMENT,
              "declared i64[2], bound i64[1]");
  dml_onnx_binding_t twice[2] = {{"shape", &st}, {"shape", &st}};
  CHECK_ERROR(compile_with(bytes, len, twice, 2, NULL), DML_STATUS_INVALID_ARGUMENT,
              "bound twice");
  free(bytes);
}

/* x is declared f32[2,3]; compiled as f32[3,2] it takes a [3,2] tensor. */
static void test_input_shapes(void) {
  size_t len = 0;
  uint8_t *bytes = model_bytes(&len);
  if (!bytes) return;
  int64_t shape[2] = {2, 3}, xdims[2] = {3, 2};
  dml_tensor_t st = {DML_DTYPE_I64, 1, {2}, shape};
  dml_onnx_binding_t b = {"shape", &st};
  dml_onnx_input_shape_t ov = {"x", 2, xdims};
  g_shapes = &ov;
  g_n_shapes = 1;
  dml_rt_model_t *m = NULL;
  CHECK_OK(compile_with(bytes, len, &b, 1, &m));
  if (m) {
    dml_rt_session_t *s = NULL;
    CHECK_OK(dml_rt_session_create(m, "cpu", &s));
    float x[6] = {1, 2, 3, 4, 5, 6};
    dml_tensor_t xt = {DML_DTYPE_F32, 2, {3, 2}, x};
    CHECK_OK(dml_rt_session_set_input_by_name(s, "x", &xt));
    CHECK_OK(dml_rt_session_run(s));
    dml_tensor_t y;
    memset(&y, 0, sizeof(y));
    CHECK_OK(dml_rt_session_get_output(s, 0, &y));
    CHECK(y.rank == 2 && y.dims[0] == 2 && y.dims[1] == 3);
    dml_rt_session_release(s);
  }
  dml_rt_model_release(m);
  dml_onnx_input_shape_t nope = {"nope", 2, xdims};
  g_shapes = &nope;
  CHECK_ERROR(compile_with(bytes, len, &b, 1, NULL), DML_STATUS_INVALID_ARGUMENT,
              "cannot override the shape of 'nope': it is not a graph input");
  dml_onnx_input_shape_t bad_rank = {"x", 99, xdims};
  g_shapes = &bad_rank;
  CHECK_ERROR(compile_with(bytes, len, &b, 1, NULL), DML_STATUS_INVALID_ARGUMENT,
              "shape override of graph input 'x': rank 99 is not in 0..");
  int64_t neg[2] = {3, -2};
  dml_onnx_input_shape_t bad_dim = {"x", 2, neg};
  g_shapes = &bad_dim;
  CHECK_ERROR(compile_with(bytes, len, &b, 1, NULL), DML_STATUS_INVALID_ARGUMENT,
              "dim 1 is negative (-2)");
  dml_onnx_input_shape_t twice[2] = {{"x", 2, xdims}, {"x", 2, xdims}};
  g_shapes = twice;
  g_n_shapes = 2;
  CHECK_ERROR(compile_with(bytes, len, &b, 1, NULL), DML_STATUS_INVALID_ARGUMENT,
              "the shape of graph input 'x' is overridden twice");
  g_shapes = NULL;
  g_n_shapes = 0;
  free(bytes);
}

int main(void) {
  RUN(test_tensor_read);
  RUN(test_tensor_read_errors);
  RUN(test_describe);
  RUN(test_bind_compiles_and_runs);
  RUN(test_bind_errors);
  RUN(test_input_shapes);
  return dml_test_finish();
}
