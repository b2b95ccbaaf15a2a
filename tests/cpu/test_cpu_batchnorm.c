/* Tests for BatchNormalization with training_mode=1 (ONNX opset 14/15,
 * "Output case #1": Y, running_mean, running_var) against a plain
 * reference computed in double: batch mean and population variance
 * (divided by the count, not count - 1) over every dim but 1;
 *   running_mean = input_mean * momentum + mean * (1 - momentum)
 *   running_var  = input_var * momentum + var * (1 - momentum). */
#include <math.h>

#include "cpu_test_util.h"

/* x is [N, C, sp] flattened (sp: the product of dims 2..); outputs in
 * double. */
static void ref_bn_train(const double *x, int64_t N, int64_t C, int64_t sp,
                         const double *sc, const double *b, const double *mean,
                         const double *var, double mom, double eps, double *y,
                         double *rmean, double *rvar) {
  int64_t total = N * C * sp;
  for (int64_t c = 0; c < C; c++) {
    double s = 0, cnt = 0;
    for (int64_t i = 0; i < total; i++)
      if ((i / sp) % C == c) s += x[i], cnt += 1;
    double m = s / cnt, q = 0;
    for (int64_t i = 0; i < total; i++)
      if ((i / sp) % C == c) q += (x[i] - m) * (x[i] - m);
    double v = q / cnt;
    rmean[c] = mean[c] * mom + m * (1 - mom);
    rvar[c] = var[c] * mom + v * (1 - mom);
    for (int64_t i = 0; i < total; i++)
      if ((i / sp) % C == c) y[i] = (x[i] - m) / sqrt(v + eps) * sc[c] + b[c];
  }
}

static double *to_f64(const float *p, size_t n) {
  double *d = (double *)malloc((n ? n : 1) * sizeof(double));
  for (size_t i = 0; i < n; i++) d[i] = p[i];
  return d;
}

static double max_abs_diff_fd(const float *a, const double *b, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; i++) {
    double d = fabs((double)a[i] - b[i]);
    if (d > m || d != d) m = d != d ? 1e30 : d;
  }
  return m;
}

/* ONNX's test_batchnorm_example_training_mode data, checked by hand:
 * batch variance 2/3 in both channels (population, not 1). */
static void test_example(void) {
  float x[6] = {-1, 0, 1, 2, 3, 4}, sc[2] = {1, 1.5f}, b[2] = {0, 1}, m[2] = {0, 3},
        v[2] = {1, 1.5f}, y[6], rm[2], rv[2];
  dml_tensor_t in[5] = {tens(DML_DTYPE_F32, x, 4, D(1), D(2), D(1), D(3)),
                        tens(DML_DTYPE_F32, sc, 1, D(2)), tens(DML_DTYPE_F32, b, 1, D(2)),
                        tens(DML_DTYPE_F32, m, 1, D(2)), tens(DML_DTYPE_F32, v, 1, D(2))};
  dml_tensor_t out[3] = {tens(DML_DTYPE_F32, y, 4, D(1), D(2), D(1), D(3)),
                         tens(DML_DTYPE_F32, rm, 1, D(2)),
                         tens(DML_DTYPE_F32, rv, 1, D(2))};
  dml_attr_t tm = attr_i("training_mode", 1);
  CHECK_OK(run_op(DML_OP_BATCH_NORMALIZATION, in, 5, out, 3, &tm, 1));
  double s = sqrt(2.0 / 3.0 + 1e-5);
  CHECK_NEAR(y[0], -1 / s, 1e-5);
  CHECK_NEAR(y[1], 0, 1e-6);
  CHECK_NEAR(y[2], 1 / s, 1e-5);
  CHECK_NEAR(y[3], 1.5 * -1 / s + 1, 1e-5);
  CHECK_NEAR(y[5], 1.5 * 1 / s + 1, 1e-5);
  CHECK_NEAR(rm[0], 0, 1e-6);
  CHECK_NEAR(rm[1], 3, 1e-6);
  CHECK_NEAR(rv[0], 0.9 * 1 + 0.1 * (2.0 / 3.0), 1e-6);
  CHECK_NEAR(rv[1], 0.9 * 1.5 + 0.1 * (2.0 / 3.0), 1e-6);
}

/* Random f32 [2, 3, 4, 5] with momentum and epsilon set, all 3 outputs. */
static void test_random_f32(void) {
  enum { N = 2, C = 3, H = 4, W = 5, T = N * C * H * W };
  float *x = frand_buf(T), *sc = frand_buf(C), *b = frand_buf(C), *m = frand_buf(C),
        *v = frand_buf(C);
  for (int i = 0; i < C; i++) v[i] = fabsf(v[i]) + 0.1f;
  for (int i = 0; i < T; i++) x[i] = x[i] * 3 + (float)(i % 7); /* offset mean */
  float y[T], rm[C], rv[C];
  dml_tensor_t in[5] = {tens(DML_DTYPE_F32, x, 4, D(N), D(C), D(H), D(W)),
                        tens(DML_DTYPE_F32, sc, 1, D(C)), tens(DML_DTYPE_F32, b, 1, D(C)),
                        tens(DML_DTYPE_F32, m, 1, D(C)), tens(DML_DTYPE_F32, v, 1, D(C))};
  dml_tensor_t out[3] = {tens(DML_DTYPE_F32, y, 4, D(N), D(C), D(H), D(W)),
                         tens(DML_DTYPE_F32, rm, 1, D(C)),
                         tens(DML_DTYPE_F32, rv, 1, D(C))};
  dml_attr_t at[3] = {attr_i("training_mode", 1), attr_f("momentum", 0.8),
                      attr_f("epsilon", 1e-2)};
  CHECK_OK(run_op(DML_OP_BATCH_NORMALIZATION, in, 5, out, 3, at, 3));
  double *xd = to_f64(x, T), *scd = to_f64(sc, C), *bd = to_f64(b, C), *md = to_f64(m, C),
         *vd = to_f64(v, C);
  double ry[T], rrm[C], rrv[C];
  ref_bn_train(xd, N, C, H * W, scd, bd, md, vd, 0.8, 1e-2, ry, rrm, rrv);
  CHECK(max_abs_diff_fd(y, ry, T) < 1e-5);
  CHECK(max_abs_diff_fd(rm, rrm, C) < 1e-5);
  CHECK(max_abs_diff_fd(rv, rrv, C) < 1e-5);
  /* Only Y: the running statistics are optional. */
  float y1[T];
  dml_tensor_t o1 = tens(DML_DTYPE_F32, y1, 4, D(N), D(C), D(H), D(W));
  CHECK_OK(run_op(DML_OP_BATCH_NORMALIZATION, in, 5, &o1, 1, at, 3));
  CHECK(max_abs_diff_fd(y1, ry, T) < 1e-5);
  free(x), free(sc), free(b), free(m), free(v);
  free(xd), free(scd), free(bd), free(md), free(vd);
}

/* f64 X [3, 2, 7] (rank 3), output 1 absent, running_var only. */
static void test_f64_partial(void) {
  enum { N = 3, C = 2, S = 7, T = N * C * S };
  double x[T], sc[C] = {0.5, -2}, b[C] = {1, 0.25}, m[C] = {0.1, -0.3}, v[C] = {2, 0.7};
  for (int i = 0; i < T; i++) x[i] = (double)frand() * (1 + i % 3);
  double y[T], rv[C], ry[T], rrm[C], rrv[C];
  dml_tensor_t in[5] = {tens(DML_DTYPE_F64, x, 3, D(N), D(C), D(S)),
                        tens(DML_DTYPE_F64, sc, 1, D(C)), tens(DML_DTYPE_F64, b, 1, D(C)),
                        tens(DML_DTYPE_F64, m, 1, D(C)), tens(DML_DTYPE_F64, v, 1, D(C))};
  dml_tensor_t out[3] = {tens(DML_DTYPE_F64, y, 3, D(N), D(C), D(S)), absent(),
                         tens(DML_DTYPE_F64, rv, 1, D(C))};
  dml_attr_t tm = attr_i("training_mode", 1);
  CHECK_OK(run_op(DML_OP_BATCH_NORMALIZATION, in, 5, out, 3, &tm, 1));
  ref_bn_train(x, N, C, S, sc, b, m, v, 0.9, 1e-5, ry, rrm, rrv);
  double d = 0;
  for (int i = 0; i < T; i++) d = fmax(d, fabs(y[i] - ry[i]));
  CHECK(d < 1e-12);
  CHECK_NEAR(rv[0], rrv[0], 1e-12);
  CHECK_NEAR(rv[1], rrv[1], 1e-12);
}

/* Opset 15's T2: f32 X with f64 input_mean/var gives f64 running stats;
 * rank 2 [N, C] (no spatial dims). */
static void test_mixed_dtypes_rank2(void) {
  enum { N = 5, C = 3, T = N * C };
  float x[T], sc[C] = {1, 2, 3}, b[C] = {0, 0, 1}, y[T];
  double m[C] = {0, 1, 2}, v[C] = {1, 1, 1}, rm[C], rv[C];
  for (int i = 0; i < T; i++) x[i] = frand();
  dml_tensor_t in[5] = {tens(DML_DTYPE_F32, x, 2, D(N), D(C)),
                        tens(DML_DTYPE_F32, sc, 1, D(C)), tens(DML_DTYPE_F32, b, 1, D(C)),
                        tens(DML_DTYPE_F64, m, 1, D(C)), tens(DML_DTYPE_F64, v, 1, D(C))};
  dml_tensor_t out[3] = {tens(DML_DTYPE_F32, y, 2, D(N), D(C)),
                         tens(DML_DTYPE_F64, rm, 1, D(C)),
                         tens(DML_DTYPE_F64, rv, 1, D(C))};
  dml_attr_t tm = attr_i("training_mode", 1);
  CHECK_OK(run_op(DML_OP_BATCH_NORMALIZATION, in, 5, out, 3, &tm, 1));
  double *xd = to_f64(x, T), *scd = to_f64(sc, C), *bd = to_f64(b, C);
  double ry[T], rrm[C], rrv[C];
  ref_bn_train(xd, N, C, 1, scd, bd, m, v, 0.9, 1e-5, ry, rrm, rrv);
  CHECK(max_abs_diff_fd(y, ry, T) < 1e-5);
  for (int c = 0; c < C; c++) {
    CHECK_NEAR(rm[c], rrm[c], 1e-12);
    CHECK_NEAR(rv[c], rrv[c], 1e-12);
  }
  free(xd), free(scd), free(bd);
}

static void test_errors(void) {
  float x[4] = {1, 2, 3, 4}, p[2] = {1, 1}, y[4], rm[2], rv[3];
  dml_tensor_t in[5] = {tens(DML_DTYPE_F32, x, 2, D(2), D(2)),
                        tens(DML_DTYPE_F32, p, 1, D(2)), tens(DML_DTYPE_F32, p, 1, D(2)),
                        tens(DML_DTYPE_F32, p, 1, D(2)), tens(DML_DTYPE_F32, p, 1, D(2))};
  dml_tensor_t out[3] = {tens(DML_DTYPE_F32, y, 2, D(2), D(2)),
                         tens(DML_DTYPE_F32, rm, 1, D(2)),
                         tens(DML_DTYPE_F32, rv, 1, D(2))};
  /* running statistics without training_mode=1 */
  CHECK_ERROR(run_op(DML_OP_BATCH_NORMALIZATION, in, 5, out, 3, NULL, 0),
              DML_STATUS_INVALID_ARGUMENT, "training_mode=1");
  dml_attr_t tm = attr_i("training_mode", 1);
  out[2] = tens(DML_DTYPE_F32, rv, 1, D(3));
  CHECK_ERROR(run_op(DML_OP_BATCH_NORMALIZATION, in, 5, out, 3, &tm, 1),
              DML_STATUS_INVALID_ARGUMENT, "[2]");
  int32_t ri[2];
  out[2] = tens(DML_DTYPE_I32, ri, 1, D(2));
  CHECK_ERROR(run_op(DML_OP_BATCH_NORMALIZATION, in, 5, out, 3, &tm, 1),
              DML_STATUS_UNIMPLEMENTED, "i32");
}

int main(void) {
  RUN(test_example);
  RUN(test_random_f32);
  RUN(test_f64_partial);
  RUN(test_mixed_dtypes_rank2);
  RUN(test_errors);
  return dml_test_finish();
}
