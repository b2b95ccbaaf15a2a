/*
 * test_symdims_train.c — training a fully-convolutional model with symbolic
 * N, H, W from one package (tests/symdims/fcn_pool.onnx: Conv stride 2,
 * MaxPool, Conv stride 1 dilation 2, GlobalAveragePool, Gemm; dmlc compile
 * --train, Adam): train_step at two image sizes gives the losses and the
 * forward outputs after the steps of packages compiled for each size
 * statically (the same initial weights) within 1e-5 * max(1, |x|), and
 * one session alternating the two sizes lowers the loss at both.
 */
#include "dml_train.h"
#include "symdims_util.h"

/* Compiles fcn_pool for training, symbolic (static_dims NULL) or with
 * x's shape fixed to static_dims. */
static dml_rt_model_t *compile_train(const int64_t *static_dims) {
  char path[1400];
  size_t len = 0;
  uint8_t *bytes = read_file(fixture("fcn_pool.onnx", path, sizeof path), &len);
  CHECK(bytes != NULL);
  if (!bytes) return NULL;
  dml_train_config_t cfg;
  dml_train_config_init(&cfg);
  cfg.optimizer = DML_OPTIMIZER_ADAM;
  dml_onnx_dim_bound_t b[] = {{"N", 4}, {"H", 64}, {"W", 64}};
  dml_onnx_input_shape_t sh = {"x", 4, static_dims};
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.train = &cfg;
  if (static_dims) {
    o.input_shapes = &sh;
    o.n_input_shapes = 1;
  } else {
    o.dim_bounds = b;
    o.n_dim_bounds = 3;
  }
  void *pkg = NULL;
  size_t n = 0;
  dml_rt_model_t *m = NULL;
  dml_status_t st =
      dml_compile_onnx_memory(bytes, len, NULL, "fcn_pool.onnx", &o, &pkg, &n, NULL);
  CHECK_OK(st);
  free(bytes);
  if (!st) CHECK_OK(dml_rt_model_load_memory(pkg, n, &m));
  free(pkg);
  return m;
}

typedef struct batch {
  int64_t dims[4];
  float *x;
  int64_t y[4];
  float lr;
} batch_t;

static void make_batch(batch_t *b, int64_t n, int64_t h, int64_t w) {
  b->dims[0] = n, b->dims[1] = 3, b->dims[2] = h, b->dims[3] = w;
  int64_t k = n * 3 * h * w;
  b->x = (float *)malloc((size_t)k * sizeof(float));
  for (int64_t i = 0; i < k; i++) b->x[i] = (float)((i * 7919) % 1000) / 500.0f - 1.0f;
  for (int64_t i = 0; i < n; i++) b->y[i] = (i * 3 + h) % 5;
  b->lr = 1e-2f;
}

/* One train_step; its loss. */
static float step(dml_rt_session_t *tr, const batch_t *b) {
  dml_tensor_t tx = dml_test_tensor(DML_DTYPE_F32, 4, b->dims, b->x);
  dml_tensor_t ty = dml_test_tensor(DML_DTYPE_I64, 1, b->dims, b->y);
  dml_tensor_t tl = dml_test_tensor(DML_DTYPE_F32, 0, NULL, &b->lr);
  dml_rt_session_clear_inputs(tr); /* the batch may change size */
  CHECK_OK(dml_rt_session_set_input_by_name(tr, "x", &tx));
  CHECK_OK(dml_rt_session_set_input_by_name(tr, "target", &ty));
  CHECK_OK(dml_rt_session_set_input_by_name(tr, "lr", &tl));
  CHECK_OK(dml_rt_session_run(tr));
  dml_tensor_t lo;
  CHECK_OK(dml_rt_session_get_output(tr, 0, &lo));
  return lo.data ? *(const float *)lo.data : NAN;
}

static int near(double a, double b) {
  return fabs(a - b) <= 1e-5 * fmax(1.0, fabs(b));
}

/* Three steps at size (n, h, w) on the symbolic package and on a static
 * one: equal losses, then equal forward outputs. */
static void compare_at(dml_rt_model_t *sym, int64_t n, int64_t h, int64_t w) {
  int64_t dims[4] = {n, 3, h, w};
  dml_rt_model_t *st = compile_train(dims);
  dml_rt_session_t *tr[2] = {NULL, NULL}, *fw[2] = {NULL, NULL};
  dml_rt_model_t *ms[2] = {sym, st};
  for (int k = 0; k < 2 && ms[k]; k++) {
    CHECK_OK(dml_rt_session_create_function(ms[k], "cpu", "train_step", NULL, &tr[k]));
    CHECK_OK(dml_rt_session_create_function(ms[k], "cpu", NULL, tr[k], &fw[k]));
  }
  if (!tr[0] || !tr[1] || !fw[0] || !fw[1]) goto done;
  batch_t b;
  make_batch(&b, n, h, w);
  for (int i = 0; i < 3; i++) {
    float l0 = step(tr[0], &b), l1 = step(tr[1], &b);
    if (!near(l0, l1))
      fprintf(stderr, "%lldx%lld step %d: loss %.9g (symbolic) vs %.9g (static)\n",
              (long long)h, (long long)w, i, l0, l1);
    CHECK(near(l0, l1));
  }
  dml_tensor_t tx = dml_test_tensor(DML_DTYPE_F32, 4, b.dims, b.x), y[2];
  for (int k = 0; k < 2; k++) {
    CHECK_OK(dml_rt_session_set_input(fw[k], 0, &tx));
    CHECK_OK(dml_rt_session_run(fw[k]));
    CHECK_OK(dml_rt_session_get_output(fw[k], 0, &y[k]));
  }
  CHECK(y[0].rank == 2 && y[0].dims[0] == n && y[0].dims[1] == 5);
  for (int64_t i = 0; i < n * 5 && y[0].data && y[1].data; i++)
    CHECK(near(((const float *)y[0].data)[i], ((const float *)y[1].data)[i]));
  free(b.x);
done:
  for (int k = 0; k < 2; k++) {
    dml_rt_session_release(fw[k]);
    dml_rt_session_release(tr[k]);
  }
  dml_rt_model_release(st);
}

static void test_matches_static(void) {
  dml_rt_model_t *m = compile_train(NULL);
  if (!m) return;
  compare_at(m, 2, 20, 20);
  compare_at(m, 3, 37, 27);
  dml_rt_model_release(m);
}

static void test_two_sizes_one_session(void) {
  dml_rt_model_t *m = compile_train(NULL);
  dml_rt_session_t *tr = NULL;
  if (m) CHECK_OK(dml_rt_session_create_function(m, "cpu", "train_step", NULL, &tr));
  if (!tr) goto done;
  batch_t a, b;
  make_batch(&a, 4, 24, 31);
  make_batch(&b, 2, 45, 19);
  float a0 = step(tr, &a), b0 = step(tr, &b), a1 = a0, b1 = b0;
  for (int i = 0; i < 20; i++) {
    a1 = step(tr, &a);
    b1 = step(tr, &b);
  }
  if (!(a1 < a0 && b1 < b0))
    fprintf(stderr, "losses: 24x31 %g -> %g, 45x19 %g -> %g\n", a0, a1, b0, b1);
  CHECK(a1 < a0 && b1 < b0);
  free(a.x);
  free(b.x);
done:
  dml_rt_session_release(tr);
  dml_rt_model_release(m);
}

int main(void) {
  RUN(test_matches_static);
  RUN(test_two_sizes_one_session);
  return dml_test_finish();
}
