/*
 * test_symdims.c — symbolic dims anywhere, bounded (dml_ir.h
 * DML_IR_SYMBOL_DERIVED): ONNX models with symbolic N, H, W (Conv, pooling,
 * Flatten, Gemm) and a symbolic sequence length S (MatMul, Softmax,
 * Reshape/Transpose of S) compile once and run at several sizes within the
 * bounds on the CPU, matching onnxruntime's saved outputs
 * (tests/symdims/gen_symdims.py) within 1e-4 * max(1, |ref|); a size above a
 * bound and one too small for the model's windows fail with errors naming
 * the dim; the derived symbols survive the package and the IR text.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_driver.h"
#include "dml_ir.h"
#include "dml_ir_text.h"
#include "dml_npy.h"
#include "dml_rt.h"
#include "dml_test.h"

static uint8_t *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = (uint8_t *)malloc(n > 0 ? (size_t)n : 1);
  if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  *len = (size_t)n;
  return b;
}

static const char *fixture(const char *name, char *buf, size_t cap) {
  char rel[256];
  snprintf(rel, sizeof rel, "tests/symdims/%s", name);
  return dml_test_path("DMLC_SOURCE_DIR", rel, buf, cap);
}

/* Compiles fixture `model`.onnx with the given bounds into a loaded model. */
static dml_rt_model_t *compile(const char *model, const dml_onnx_dim_bound_t *b,
                               size_t nb, const char *targets) {
  char path[1024], file[256];
  snprintf(file, sizeof file, "%s.onnx", model);
  size_t len = 0;
  uint8_t *bytes = read_file(fixture(file, path, sizeof path), &len);
  CHECK(bytes != NULL);
  if (!bytes) return NULL;
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.targets = targets;
  o.dim_bounds = b;
  o.n_dim_bounds = nb;
  void *pkg = NULL;
  size_t n = 0;
  dml_status_t st = dml_compile_onnx_memory(bytes, len, NULL, file, &o, &pkg, &n, NULL);
  free(bytes);
  CHECK_OK(st);
  if (st) return NULL;
  dml_rt_model_t *m = NULL;
  CHECK_OK(dml_rt_model_load_memory(pkg, n, &m));
  free(pkg);
  return m;
}

/* Runs case `tag` of `model` on session `s` and compares with the saved
 * onnxruntime output. */
static void check_case(dml_rt_session_t *s, const char *model, const char *tag) {
  char path[1024], file[256];
  dml_tensor_t x, want, got;
  void *xb = NULL, *wb = NULL;
  snprintf(file, sizeof file, "%s.%s.x.npy", model, tag);
  CHECK_OK(dml_npy_read_file(fixture(file, path, sizeof path), &x, &xb));
  snprintf(file, sizeof file, "%s.%s.y.npy", model, tag);
  CHECK_OK(dml_npy_read_file(fixture(file, path, sizeof path), &want, &wb));
  if (!xb || !wb) goto done;
  CHECK_OK(dml_rt_session_set_input(s, 0, &x));
  CHECK_OK(dml_rt_session_run(s));
  CHECK_OK(dml_rt_session_get_output(s, 0, &got));
  CHECK(got.rank == want.rank);
  if (got.rank != want.rank) goto done;
  for (int32_t d = 0; d < got.rank; d++) CHECK(got.dims[d] == want.dims[d]);
  if (memcmp(got.dims, want.dims, sizeof(int64_t) * (size_t)got.rank) != 0) goto done;
  int64_t n = dml_dims_numel(got.dims, got.rank), bad = 0;
  double worst = 0;
  for (int64_t i = 0; i < n; i++) {
    double g = ((const float *)got.data)[i], w = ((const float *)want.data)[i];
    double err = fabs(g - w) / fmax(1.0, fabs(w));
    if (!(err <= 1e-4)) bad++;
    if (err > worst || err != err) worst = err;
  }
  if (bad)
    fprintf(stderr, "%s.%s: %lld of %lld off, worst %g\n", model, tag, (long long)bad,
            (long long)n, worst);
  CHECK(bad == 0);
done:
  free(xb);
  free(wb);
}

/* A zero f32 input of dims `d` bound to input 0; returns the buffer. */
static dml_status_t set_zeros(dml_rt_session_t *s, int32_t rank, const int64_t *d,
                              float **buf) {
  int64_t n = dml_dims_numel(d, rank);
  *buf = (float *)calloc((size_t)n, sizeof(float));
  dml_tensor_t t = dml_test_tensor(DML_DTYPE_F32, rank, d, *buf);
  return dml_rt_session_set_input(s, 0, &t);
}

static void test_fcn_pool(void) {
  dml_onnx_dim_bound_t b[] = {{"N", 4}, {"H", 64}, {"W", 64}};
  dml_rt_model_t *m = compile("fcn_pool", b, 3, "cpu");
  dml_rt_session_t *s = NULL;
  if (m) CHECK_OK(dml_rt_session_create(m, "cpu", &s));
  if (!s) goto done;
  /* One package, four sizes, in an order that grows and shrinks. */
  check_case(s, "fcn_pool", "c");
  check_case(s, "fcn_pool", "a");
  check_case(s, "fcn_pool", "b");
  check_case(s, "fcn_pool", "d");
  float *z = NULL;
  /* Above H's bound: the error names the dim and the bound. */
  int64_t big[4] = {1, 3, 65, 20};
  CHECK_ERROR(set_zeros(s, 4, big, &z), DML_STATUS_OUT_OF_RANGE,
              "H 65 exceeds the compiled bound 64");
  free(z);
  /* Below what the windows need (H = 16: the second Conv is empty). */
  int64_t small[4] = {1, 3, 16, 20};
  CHECK_OK(set_zeros(s, 4, small, &z));
  CHECK_ERROR(dml_rt_session_run(s), DML_STATUS_OUT_OF_RANGE, "(H-15)/4 = 0");
  free(z);
  check_case(s, "fcn_pool", "b"); /* still runs after the errors */
done:
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

static void test_fcn_spatial(void) {
  dml_onnx_dim_bound_t b[] = {{"N", 2}, {"H", 64}, {"W", 40}};
  dml_rt_model_t *m = compile("fcn_spatial", b, 3, "cpu");
  dml_rt_session_t *s = NULL;
  if (m) CHECK_OK(dml_rt_session_create(m, "cpu", &s));
  if (!s) goto done;
  check_case(s, "fcn_spatial", "b");
  check_case(s, "fcn_spatial", "a");
  check_case(s, "fcn_spatial", "c");
  float *z = NULL;
  int64_t big[4] = {1, 3, 12, 41};
  CHECK_ERROR(set_zeros(s, 4, big, &z), DML_STATUS_OUT_OF_RANGE,
              "W 41 exceeds the compiled bound 40");
  free(z);
done:
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

static void test_attention(void) {
  dml_onnx_dim_bound_t b[] = {{"N", 2}, {"S", 40}};
  dml_rt_model_t *m = compile("attn", b, 2, "cpu");
  dml_rt_session_t *s = NULL;
  if (m) CHECK_OK(dml_rt_session_create(m, "cpu", &s));
  if (!s) goto done;
  check_case(s, "attn", "c");
  check_case(s, "attn", "a");
  check_case(s, "attn", "b");
  float *z = NULL;
  int64_t big[3] = {1, 41, 8};
  CHECK_ERROR(set_zeros(s, 3, big, &z), DML_STATUS_OUT_OF_RANGE,
              "S 41 exceeds the compiled bound 40");
  free(z);
done:
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

/* Unknown names in dim_bounds are refused, listing the symbolic dims. */
static void test_bad_bound_name(void) {
  char path[1024];
  size_t len = 0;
  uint8_t *bytes = read_file(fixture("fcn_pool.onnx", path, sizeof path), &len);
  CHECK(bytes != NULL);
  if (!bytes) return;
  dml_onnx_dim_bound_t b[] = {{"Q", 4}};
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.dim_bounds = b;
  o.n_dim_bounds = 1;
  void *pkg = NULL;
  size_t n = 0;
  CHECK_ERROR(
      dml_compile_onnx_memory(bytes, len, NULL, "fcn_pool.onnx", &o, &pkg, &n, NULL),
      DML_STATUS_INVALID_ARGUMENT, "symbolic dims: 'N', 'H', 'W'");
  free(pkg);
  /* A promised minimum too small for the windows fails at compile time. */
  int64_t dims[4] = {0, 3, 0, 0}, hi[4] = {4, 0, 64, 64}, lo[4] = {1, 0, 16, 32};
  dml_onnx_input_shape_t sh = {"x", 4, dims, hi, lo};
  memset(&o, 0, sizeof o);
  o.input_shapes = &sh;
  o.n_input_shapes = 1;
  CHECK_ERROR(
      dml_compile_onnx_memory(bytes, len, NULL, "fcn_pool.onnx", &o, &pkg, &n, NULL),
      DML_STATUS_INVALID_ARGUMENT, "(H-15)/4 = 0) at the smallest input sizes");
  lo[2] = 19;
  CHECK_OK(
      dml_compile_onnx_memory(bytes, len, NULL, "fcn_pool.onnx", &o, &pkg, &n, NULL));
  free(pkg);
  free(bytes);
}

/* Derived symbols print and parse back (IR text). */
static void test_ir_text(void) {
  const char *syms =
      "sym H <= 64\nsym W <= 32\nsym \"(H+1)/2\" <= 32 derived(H, _, 1, 1, 2)\n"
      "sym \"H*W\" <= 2048 derived(H, W, 1, 0, 1)\n";
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_ir_parse(syms, strlen(syms), "syms", &m));
  if (!m) return;
  CHECK(m->n_symbols == 4);
  CHECK(m->symbols[2].flags & DML_IR_SYMBOL_DERIVED);
  CHECK(m->symbols[2].src[0] == 0 && m->symbols[2].src[1] == -1 &&
        m->symbols[2].div == 2);
  CHECK(m->symbols[3].src[1] == 1);
  /* The helper finds the parsed symbols by their canonical names. */
  dml_dim_t d;
  int ok = 0;
  CHECK_OK(dml_ir_module_derived_dim(m, 0, -1, 2, 2, 4, &d, &ok)); /* (2H+2)/4 */
  CHECK(ok && d.sym == 2 && d.value == 1);
  CHECK_OK(dml_ir_module_derived_dim(m, 1, 0, 3, 0, 1, &d, &ok)); /* 3*W*H */
  CHECK(ok && d.sym == 3 && d.value == 3);
  CHECK_OK(dml_ir_module_derived_dim(m, 0, -1, 4, 0, 2, &d, &ok)); /* 4H/2 = 2*H */
  CHECK(ok && d.sym == 0 && d.value == 2);
  CHECK_OK(dml_ir_module_derived_dim(m, 2, -1, 1, 3, 2, &d, &ok)); /* ((H+1)/2+3)/2 */
  CHECK(ok && d.sym == 4 && !strcmp(m->symbols[4].name, "(H+7)/4") &&
        m->symbols[4].bound == 17);
  CHECK_OK(dml_ir_module_derived_dim(m, 0, -1, 1, -80, 1, &d, &ok)); /* H-80: empty */
  CHECK(!ok);
  dml_ir_module_release(m);
  /* A bound below the formula at the sources' bounds is refused. */
  const char *low = "sym H <= 64\nsym \"(H+1)/2\" <= 31 derived(H, _, 1, 1, 2)\n";
  m = NULL;
  CHECK_ERROR(dml_ir_parse(low, strlen(low), "low", &m), DML_STATUS_INVALID_ARGUMENT,
              "below its formula");
  dml_ir_module_release(m);
}

int main(void) {
  RUN(test_fcn_pool);
  RUN(test_fcn_spatial);
  RUN(test_attention);
  RUN(test_bad_bound_name);
  RUN(test_ir_text);
  return dml_test_finish();
}
