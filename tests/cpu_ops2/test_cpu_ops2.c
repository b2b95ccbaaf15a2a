/*
 * test_cpu_ops2.c — the issue #3 kernels (runtime/cpu/cpu_axis_ops.c,
 * cpu_shrink_isinf_bitshift.c) against hand-computed values. Tolerances:
 * 1e-6 absolute for f32 results of O(1) (float rounding of a few
 * operations), 1e-12 for f64, 1e-3 for f16 (half precision has an 11-bit
 * significand); integer results exact.
 */
#include <math.h>
#include <stdint.h>

#include "cpu_test_util.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* y = op(x) for a 1-D f32 tensor. */
static dml_status_t run_unary_f32(dml_op_t op, const float *x, float *y, int64_t n,
                                  const dml_attr_t *attrs, uint32_t nattrs) {
  dml_tensor_t in = tens(DML_DTYPE_F32, (void *)x, 1, n);
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 1, n);
  return run_op(op, &in, 1, &out, 1, attrs, nattrs);
}

/* ---- elementwise ---- */

static void test_trig_f32_f64(void) {
  static const struct {
    dml_op_t op;
    double (*f)(double);
    float x[4];
  } cases[] = {
      {DML_OP_ACOS, acos, {-0.9f, -0.25f, 0.0f, 0.75f}},
      {DML_OP_ASIN, asin, {-0.9f, -0.25f, 0.0f, 0.75f}},
      {DML_OP_ATAN, atan, {-3.0f, -0.25f, 0.0f, 10.0f}},
      {DML_OP_TAN, tan, {-1.2f, -0.25f, 0.0f, 1.0f}},
      {DML_OP_ACOSH, acosh, {1.0f, 1.5f, 3.0f, 10.0f}},
      {DML_OP_ASINH, asinh, {-3.0f, -0.25f, 0.0f, 2.0f}},
      {DML_OP_ATANH, atanh, {-0.9f, -0.25f, 0.0f, 0.5f}},
      {DML_OP_COSH, cosh, {-2.0f, -0.25f, 0.0f, 1.5f}},
      {DML_OP_SINH, sinh, {-2.0f, -0.25f, 0.0f, 1.5f}},
  };
  for (size_t k = 0; k < N_OF(cases); k++) {
    float y[4];
    CHECK_OK(run_unary_f32(cases[k].op, cases[k].x, y, 4, NULL, 0));
    double x64[4], y64[4];
    for (int i = 0; i < 4; i++) {
      double want = cases[k].f(cases[k].x[i]);
      CHECK_NEAR(y[i], want, 1e-6 * (1 + fabs(want)));
      x64[i] = cases[k].x[i];
    }
    dml_tensor_t in = tens(DML_DTYPE_F64, x64, 1, D(4));
    dml_tensor_t out = tens(DML_DTYPE_F64, y64, 1, D(4));
    CHECK_OK(run_op(cases[k].op, &in, 1, &out, 1, NULL, 0));
    for (int i = 0; i < 4; i++) CHECK_NEAR(y64[i], cases[k].f(x64[i]), 1e-12);
  }
  /* Out of the domain: NaN, as in libm. */
  float x = 2.0f, y = 0;
  CHECK_OK(run_unary_f32(DML_OP_ACOS, &x, &y, 1, NULL, 0));
  CHECK(isnan(y));
}

static void test_trig_f16_and_int_rejected(void) {
  uint16_t x[2] = {dml_f32_to_f16(0.5f), dml_f32_to_f16(-1.0f)}, y[2];
  dml_tensor_t in = tens(DML_DTYPE_F16, x, 1, D(2));
  dml_tensor_t out = tens(DML_DTYPE_F16, y, 1, D(2));
  CHECK_OK(run_op(DML_OP_SINH, &in, 1, &out, 1, NULL, 0));
  CHECK_NEAR(dml_f16_to_f32(y[0]), sinh(0.5), 1e-3);
  CHECK_NEAR(dml_f16_to_f32(y[1]), sinh(-1.0), 1e-3);
  int32_t xi[2] = {1, 2}, yi[2];
  dml_tensor_t ini = tens(DML_DTYPE_I32, xi, 1, D(2));
  dml_tensor_t outi = tens(DML_DTYPE_I32, yi, 1, D(2));
  CHECK_ERROR(run_op(DML_OP_TAN, &ini, 1, &outi, 1, NULL, 0), DML_STATUS_UNIMPLEMENTED,
              "input dtype i32 is not supported by Tan");
}

static void test_celu_thresholded_relu(void) {
  /* Celu-12: max(0,x) + min(0, alpha*(exp(x/alpha)-1)); alpha = 2. */
  float x[4] = {-1.0f, 0.0f, 3.0f, -4.0f}, y[4];
  dml_attr_t a = attr_f("alpha", 2.0);
  CHECK_OK(run_unary_f32(DML_OP_CELU, x, y, 4, &a, 1));
  CHECK_NEAR(y[0], 2.0 * (exp(-0.5) - 1.0), 1e-6); /* -0.786938680574733 */
  CHECK_NEAR(y[1], 0.0, 1e-7);
  CHECK_NEAR(y[2], 3.0, 1e-7);
  CHECK_NEAR(y[3], 2.0 * (exp(-2.0) - 1.0), 1e-6);
  /* default alpha 1: celu(-1) = e^-1 - 1 */
  CHECK_OK(run_unary_f32(DML_OP_CELU, x, y, 1, NULL, 0));
  CHECK_NEAR(y[0], -0.6321205588285577, 1e-6);
  dml_attr_t z = attr_f("alpha", 0.0);
  CHECK_ERROR(run_unary_f32(DML_OP_CELU, x, y, 4, &z, 1), DML_STATUS_INVALID_ARGUMENT,
              "alpha must not be 0");
  /* ThresholdedRelu-10: x > alpha ? x : 0, alpha default 1. */
  float t[5] = {-1.0f, 0.5f, 1.0f, 1.5f, 2.0f}, u[5];
  CHECK_OK(run_unary_f32(DML_OP_THRESHOLDED_RELU, t, u, 5, NULL, 0));
  const float want[5] = {0, 0, 0, 1.5f, 2.0f};
  for (int i = 0; i < 5; i++) CHECK(u[i] == want[i]);
  dml_attr_t a15 = attr_f("alpha", 1.5);
  CHECK_OK(run_unary_f32(DML_OP_THRESHOLDED_RELU, t, u, 5, &a15, 1));
  CHECK(u[3] == 0.0f && u[4] == 2.0f);
}

static void test_shrink(void) {
  /* Shrink-9: x < -lambd ? x + bias : x > lambd ? x - bias : 0. */
  float x[5] = {-2.0f, -1.0f, 0.0f, 1.0f, 2.0f}, y[5];
  dml_attr_t at[2] = {attr_f("lambd", 1.5), attr_f("bias", 0.5)};
  CHECK_OK(run_unary_f32(DML_OP_SHRINK, x, y, 5, at, 2));
  const float want[5] = {-1.5f, 0, 0, 0, 1.5f};
  for (int i = 0; i < 5; i++) CHECK_NEAR(y[i], want[i], 1e-7);
  /* defaults lambd 0.5, bias 0 (hard shrink) */
  CHECK_OK(run_unary_f32(DML_OP_SHRINK, x, y, 5, NULL, 0));
  CHECK(y[0] == -2.0f && y[2] == 0.0f && y[3] == 1.0f);
  /* integers: computed in double, truncated toward zero. */
  int32_t xi[5] = {-3, -1, 0, 1, 3}, yi[5];
  dml_attr_t ai[2] = {attr_f("lambd", 1.5), attr_f("bias", 1.0)};
  dml_tensor_t in = tens(DML_DTYPE_I32, xi, 1, D(5));
  dml_tensor_t out = tens(DML_DTYPE_I32, yi, 1, D(5));
  CHECK_OK(run_op(DML_OP_SHRINK, &in, 1, &out, 1, ai, 2));
  const int32_t wi[5] = {-2, 0, 0, 0, 2};
  for (int i = 0; i < 5; i++) CHECK(yi[i] == wi[i]);
  uint8_t xu[3] = {0, 1, 200}, yu[3];
  dml_tensor_t inu = tens(DML_DTYPE_U8, xu, 1, D(3));
  dml_tensor_t outu = tens(DML_DTYPE_U8, yu, 1, D(3));
  CHECK_OK(run_op(DML_OP_SHRINK, &inu, 1, &outu, 1, ai, 2));
  CHECK(yu[0] == 0 && yu[1] == 0 && yu[2] == 199);
}

static void test_isinf_isnan(void) {
  float x[5] = {-INFINITY, INFINITY, NAN, 1.0f, -0.0f};
  uint8_t y[5];
  dml_tensor_t in = tens(DML_DTYPE_F32, x, 1, D(5));
  dml_tensor_t out = tens(DML_DTYPE_BOOL, y, 1, D(5));
  CHECK_OK(run_op(DML_OP_IS_INF, &in, 1, &out, 1, NULL, 0));
  CHECK(y[0] == 1 && y[1] == 1 && y[2] == 0 && y[3] == 0 && y[4] == 0);
  dml_attr_t neg0 = attr_i("detect_negative", 0);
  CHECK_OK(run_op(DML_OP_IS_INF, &in, 1, &out, 1, &neg0, 1));
  CHECK(y[0] == 0 && y[1] == 1);
  dml_attr_t pos0 = attr_i("detect_positive", 0);
  CHECK_OK(run_op(DML_OP_IS_INF, &in, 1, &out, 1, &pos0, 1));
  CHECK(y[0] == 1 && y[1] == 0);
  CHECK_OK(run_op(DML_OP_IS_NAN, &in, 1, &out, 1, NULL, 0));
  CHECK(y[0] == 0 && y[1] == 0 && y[2] == 1 && y[3] == 0 && y[4] == 0);
  double xd[2] = {NAN, -INFINITY};
  dml_tensor_t ind = tens(DML_DTYPE_F64, xd, 1, D(2));
  dml_tensor_t outd = tens(DML_DTYPE_BOOL, y, 1, D(2));
  CHECK_OK(run_op(DML_OP_IS_NAN, &ind, 1, &outd, 1, NULL, 0));
  CHECK(y[0] == 1 && y[1] == 0);
  dml_tensor_t wrong = tens(DML_DTYPE_F32, y, 1, D(5));
  CHECK_ERROR(run_op(DML_OP_IS_NAN, &in, 1, &wrong, 1, NULL, 0), DML_STATUS_UNIMPLEMENTED,
              "output dtype f32");
}

static void test_bitshift(void) {
  uint8_t x[4] = {16, 4, 1, 255}, s[4] = {1, 2, 3, 1}, z[4];
  dml_tensor_t in[2] = {tens(DML_DTYPE_U8, x, 1, D(4)), tens(DML_DTYPE_U8, s, 1, D(4))};
  dml_tensor_t out = tens(DML_DTYPE_U8, z, 1, D(4));
  dml_attr_t left = attr_s("direction", "LEFT"), right = attr_s("direction", "RIGHT");
  CHECK_OK(run_op(DML_OP_BIT_SHIFT, in, 2, &out, 1, &left, 1));
  CHECK(z[0] == 32 && z[1] == 16 && z[2] == 8 && z[3] == 254); /* 510 mod 256 */
  CHECK_OK(run_op(DML_OP_BIT_SHIFT, in, 2, &out, 1, &right, 1));
  CHECK(z[0] == 8 && z[1] == 1 && z[2] == 0 && z[3] == 127);
  /* broadcasting [2,1] against [3], u32; shifts of >= 32 bits give 0. */
  uint32_t a[2] = {0x80000001u, 6}, b[3] = {0, 1, 40}, c[6];
  dml_tensor_t in2[2] = {tens(DML_DTYPE_U32, a, 2, D(2), D(1)),
                         tens(DML_DTYPE_U32, b, 1, D(3))};
  dml_tensor_t out2 = tens(DML_DTYPE_U32, c, 2, D(2), D(3));
  CHECK_OK(run_op(DML_OP_BIT_SHIFT, in2, 2, &out2, 1, &left, 1));
  const uint32_t want[6] = {0x80000001u, 2, 0, 6, 12, 0};
  for (int i = 0; i < 6; i++) CHECK(c[i] == want[i]);
  uint64_t p = 1ull << 63, q = 63, r = 0;
  dml_tensor_t in3[2] = {tens(DML_DTYPE_U64, &p, 0), tens(DML_DTYPE_U64, &q, 0)};
  dml_tensor_t out3 = tens(DML_DTYPE_U64, &r, 0);
  CHECK_OK(run_op(DML_OP_BIT_SHIFT, in3, 2, &out3, 1, &right, 1));
  CHECK(r == 1);
  CHECK_ERROR(run_op(DML_OP_BIT_SHIFT, in, 2, &out, 1, NULL, 0),
              DML_STATUS_INVALID_ARGUMENT, "direction must be \"LEFT\" or \"RIGHT\"");
  /* signed (BitShift-28) in tests/opset24; floats refused */
  float xs[1] = {1}, ss[1] = {1}, zs[1];
  dml_tensor_t ins[2] = {tens(DML_DTYPE_F32, xs, 1, D(1)),
                         tens(DML_DTYPE_F32, ss, 1, D(1))};
  dml_tensor_t outs = tens(DML_DTYPE_F32, zs, 1, D(1));
  CHECK_ERROR(run_op(DML_OP_BIT_SHIFT, ins, 2, &outs, 1, &left, 1),
              DML_STATUS_UNIMPLEMENTED, "input dtype f32");
}

static void test_castlike(void) {
  float x[3] = {1.7f, -2.5f, 3.0f};
  int32_t like = 0, y[3];
  dml_tensor_t in[2] = {tens(DML_DTYPE_F32, x, 1, D(3)), tens(DML_DTYPE_I32, &like, 0)};
  dml_tensor_t out = tens(DML_DTYPE_I32, y, 1, D(3));
  CHECK_OK(run_op(DML_OP_CAST_LIKE, in, 2, &out, 1, NULL, 0));
  CHECK(y[0] == 1 && y[1] == -2 && y[2] == 3); /* toward zero, as Cast */
  double yd[3];
  dml_tensor_t outd = tens(DML_DTYPE_F64, yd, 1, D(3));
  CHECK_ERROR(run_op(DML_OP_CAST_LIKE, in, 2, &outd, 1, NULL, 0),
              DML_STATUS_UNIMPLEMENTED, "output dtype f64");
}

/* ---- axis ops ---- */

static void test_hardmax(void) {
  float x[6] = {1, 3, 3, 2, 1, 0}, y[6];
  dml_tensor_t in = tens(DML_DTYPE_F32, x, 2, D(2), D(3));
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 2, D(2), D(3));
  CHECK_OK(run_op(DML_OP_HARDMAX, &in, 1, &out, 1, NULL, 0)); /* axis -1 */
  const float w1[6] = {0, 1, 0, 1, 0, 0};                     /* first max wins */
  for (int i = 0; i < 6; i++) CHECK(y[i] == w1[i]);
  dml_attr_t a0 = attr_i("axis", 0);
  CHECK_OK(run_op(DML_OP_HARDMAX, &in, 1, &out, 1, &a0, 1));
  const float w0[6] = {0, 1, 1, 1, 0, 0};
  for (int i = 0; i < 6; i++) CHECK(y[i] == w0[i]);
  dml_attr_t a2 = attr_i("axis", 2);
  CHECK_ERROR(run_op(DML_OP_HARDMAX, &in, 1, &out, 1, &a2, 1),
              DML_STATUS_INVALID_ARGUMENT, "axis 2 out of range");
  double xd[3] = {-1, -0.5, -2}, yd[3];
  dml_tensor_t ind = tens(DML_DTYPE_F64, xd, 1, D(3));
  dml_tensor_t outd = tens(DML_DTYPE_F64, yd, 1, D(3));
  CHECK_OK(run_op(DML_OP_HARDMAX, &ind, 1, &outd, 1, NULL, 0));
  CHECK(yd[0] == 0 && yd[1] == 1 && yd[2] == 0);
}

static dml_status_t reduce(dml_op_t op, dml_tensor_t *x, dml_tensor_t *y,
                           const int64_t *axes, size_t na, int keep) {
  dml_attr_t at[2] = {attr_ints("axes", axes, na), attr_i("keepdims", keep)};
  return run_op(op, x, 1, y, 1, axes ? at : at + 1, axes ? 2 : 1);
}

static void test_reduce_f32(void) {
  float x[6] = {1, -2, 3, 4, 5, -6}, y[3];
  dml_tensor_t in = tens(DML_DTYPE_F32, x, 2, D(2), D(3));
  int64_t ax1 = 1, ax0 = 0;
  /* L1 over axis 1: |1|+|-2|+|3| = 6, 4+5+6 = 15 */
  dml_tensor_t o2 = tens(DML_DTYPE_F32, y, 1, D(2));
  CHECK_OK(reduce(DML_OP_REDUCE_L1, &in, &o2, &ax1, 1, 0));
  CHECK_NEAR(y[0], 6, 1e-6);
  CHECK_NEAR(y[1], 15, 1e-6);
  /* L2 over axis 0 (keepdims): sqrt(17), sqrt(29), sqrt(45) */
  dml_tensor_t o13 = tens(DML_DTYPE_F32, y, 2, D(1), D(3));
  CHECK_OK(reduce(DML_OP_REDUCE_L2, &in, &o13, &ax0, 1, 1));
  CHECK_NEAR(y[0], sqrt(17.0), 1e-6);
  CHECK_NEAR(y[1], sqrt(29.0), 1e-6);
  CHECK_NEAR(y[2], sqrt(45.0), 1e-6);
  /* LogSum over everything (no axes): log(1-2+3+4+5-6) = log 5 */
  dml_tensor_t o11 = tens(DML_DTYPE_F32, y, 2, D(1), D(1));
  CHECK_OK(reduce(DML_OP_REDUCE_LOG_SUM, &in, &o11, NULL, 0, 1));
  CHECK_NEAR(y[0], log(5.0), 1e-6);
  /* LogSumExp over axis 1 */
  CHECK_OK(reduce(DML_OP_REDUCE_LOG_SUM_EXP, &in, &o2, &ax1, 1, 0));
  CHECK_NEAR(y[0], log(exp(1.0) + exp(-2.0) + exp(3.0)), 1e-6);
  CHECK_NEAR(y[1], log(exp(4.0) + exp(5.0) + exp(-6.0)), 1e-6);
  /* SumSquare over everything, keepdims 0: 1+4+9+16+25+36 = 91 */
  dml_tensor_t o0 = tens(DML_DTYPE_F32, y, 0);
  CHECK_OK(reduce(DML_OP_REDUCE_SUM_SQUARE, &in, &o0, NULL, 0, 0));
  CHECK_NEAR(y[0], 91, 1e-5);
  /* A middle axis (the generic path): [2,3,2] over axis 1. */
  float z[12];
  for (int i = 0; i < 12; i++) z[i] = (float)(i - 5);
  dml_tensor_t in3 = tens(DML_DTYPE_F32, z, 3, D(2), D(3), D(2));
  float w[4];
  dml_tensor_t o4 = tens(DML_DTYPE_F32, w, 2, D(2), D(2));
  CHECK_OK(reduce(DML_OP_REDUCE_L1, &in3, &o4, &ax1, 1, 0));
  /* z: [[-5,-4],[-3,-2],[-1,0]], [[1,2],[3,4],[5,6]] */
  CHECK_NEAR(w[0], 9, 1e-6);
  CHECK_NEAR(w[1], 6, 1e-6);
  CHECK_NEAR(w[2], 9, 1e-6);
  CHECK_NEAR(w[3], 12, 1e-6);
  CHECK_OK(reduce(DML_OP_REDUCE_LOG_SUM_EXP, &in3, &o4, &ax1, 1, 0));
  CHECK_NEAR(w[0], log(exp(-5.0) + exp(-3.0) + exp(-1.0)), 1e-6);
  CHECK_NEAR(w[3], log(exp(2.0) + exp(4.0) + exp(6.0)), 1e-6);
  /* axes as input 1 (opset 18 form), negative */
  int64_t axm1 = -1;
  dml_tensor_t ins[2] = {in, tens(DML_DTYPE_I64, &axm1, 1, D(1))};
  CHECK_OK(run_op(DML_OP_REDUCE_SUM_SQUARE, ins, 2, &o2, 1,
                  (dml_attr_t[]){attr_i("keepdims", 0)}, 1));
  CHECK_NEAR(y[0], 14, 1e-6);
  CHECK_NEAR(y[1], 77, 1e-6);
  /* wrong output shape */
  CHECK_ERROR(reduce(DML_OP_REDUCE_L1, &in, &o13, &ax1, 1, 0),
              DML_STATUS_INVALID_ARGUMENT, "output shape does not match");
}

static void test_reduce_other_dtypes(void) {
  /* f64 LogSumExp of large values (stable form): log(e^1000 + e^1000) */
  double x[2] = {1000, 1000}, y = 0;
  dml_tensor_t in = tens(DML_DTYPE_F64, x, 1, D(2));
  dml_tensor_t out = tens(DML_DTYPE_F64, &y, 0);
  CHECK_OK(reduce(DML_OP_REDUCE_LOG_SUM_EXP, &in, &out, NULL, 0, 0));
  CHECK_NEAR(y, 1000 + log(2.0), 1e-12);
  /* integers: L1 and SumSquare exact, L2 truncated */
  int32_t xi[4] = {-3, 4, 2, -2}, yi[2];
  dml_tensor_t ini = tens(DML_DTYPE_I32, xi, 2, D(2), D(2));
  dml_tensor_t outi = tens(DML_DTYPE_I32, yi, 1, D(2));
  int64_t ax1 = 1;
  CHECK_OK(reduce(DML_OP_REDUCE_L1, &ini, &outi, &ax1, 1, 0));
  CHECK(yi[0] == 7 && yi[1] == 4);
  CHECK_OK(reduce(DML_OP_REDUCE_SUM_SQUARE, &ini, &outi, &ax1, 1, 0));
  CHECK(yi[0] == 25 && yi[1] == 8);
  CHECK_OK(reduce(DML_OP_REDUCE_L2, &ini, &outi, &ax1, 1, 0));
  CHECK(yi[0] == 5 && yi[1] == 2); /* sqrt(8) = 2.83 -> 2 */
  /* empty axes with noop_with_empty_axes: a copy */
  float xf[3] = {1, 2, 3}, yf[3];
  dml_tensor_t inf_ = tens(DML_DTYPE_F32, xf, 1, D(3));
  dml_tensor_t outf = tens(DML_DTYPE_F32, yf, 1, D(3));
  dml_attr_t noop = attr_i("noop_with_empty_axes", 1);
  CHECK_OK(run_op(DML_OP_REDUCE_LOG_SUM, &inf_, 1, &outf, 1, &noop, 1));
  CHECK(yf[0] == 1 && yf[1] == 2 && yf[2] == 3);
  /* empty reduction: LogSum -> -inf, L1 -> 0 */
  float ye[2];
  dml_tensor_t ine = tens(DML_DTYPE_F32, xf, 2, D(2), D(0));
  dml_tensor_t oute = tens(DML_DTYPE_F32, ye, 1, D(2));
  CHECK_OK(reduce(DML_OP_REDUCE_LOG_SUM_EXP, &ine, &oute, &ax1, 1, 0));
  CHECK(isinf(ye[0]) && ye[0] < 0);
  CHECK_OK(reduce(DML_OP_REDUCE_L1, &ine, &oute, &ax1, 1, 0));
  CHECK(ye[0] == 0 && ye[1] == 0);
}

static void test_cumsum(void) {
  float x[4] = {1, 2, 3, 4}, y[4];
  int64_t axis = 0;
  dml_tensor_t in[2] = {tens(DML_DTYPE_F32, x, 1, D(4)), tens(DML_DTYPE_I64, &axis, 0)};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 1, D(4));
  static const struct {
    int excl, rev;
    float want[4];
  } cases[] = {{0, 0, {1, 3, 6, 10}},
               {1, 0, {0, 1, 3, 6}},
               {0, 1, {10, 9, 7, 4}},
               {1, 1, {9, 7, 4, 0}}};
  for (size_t k = 0; k < N_OF(cases); k++) {
    dml_attr_t at[2] = {attr_i("exclusive", cases[k].excl),
                        attr_i("reverse", cases[k].rev)};
    CHECK_OK(run_op(DML_OP_CUM_SUM, in, 2, &out, 1, at, 2));
    for (int i = 0; i < 4; i++) CHECK(y[i] == cases[k].want[i]);
  }
  /* 2-D int32, axis 0 as a 1-element i32 tensor; then axis -1 */
  int32_t xi[6] = {1, 2, 3, 4, 5, 6}, yi[6], ax32 = 0;
  dml_tensor_t in2[2] = {tens(DML_DTYPE_I32, xi, 2, D(2), D(3)),
                         tens(DML_DTYPE_I32, &ax32, 1, D(1))};
  dml_tensor_t out2 = tens(DML_DTYPE_I32, yi, 2, D(2), D(3));
  CHECK_OK(run_op(DML_OP_CUM_SUM, in2, 2, &out2, 1, NULL, 0));
  const int32_t w0[6] = {1, 2, 3, 5, 7, 9};
  for (int i = 0; i < 6; i++) CHECK(yi[i] == w0[i]);
  ax32 = -1;
  CHECK_OK(run_op(DML_OP_CUM_SUM, in2, 2, &out2, 1, NULL, 0));
  const int32_t w1[6] = {1, 3, 6, 4, 9, 15};
  for (int i = 0; i < 6; i++) CHECK(yi[i] == w1[i]);
  ax32 = 2;
  CHECK_ERROR(run_op(DML_OP_CUM_SUM, in2, 2, &out2, 1, NULL, 0),
              DML_STATUS_INVALID_ARGUMENT, "axis 2 is out of range");
  double xd[3] = {0.5, 0.25, 0.125}, yd[3];
  dml_tensor_t in3[2] = {tens(DML_DTYPE_F64, xd, 1, D(3)), tens(DML_DTYPE_I64, &axis, 0)};
  dml_tensor_t out3 = tens(DML_DTYPE_F64, yd, 1, D(3));
  CHECK_OK(run_op(DML_OP_CUM_SUM, in3, 2, &out3, 1, NULL, 0));
  CHECK(yd[0] == 0.5 && yd[1] == 0.75 && yd[2] == 0.875);
}

static void test_trilu(void) {
  int64_t x[12], y[12];
  for (int i = 0; i < 12; i++) x[i] = i + 1;
  dml_tensor_t in = tens(DML_DTYPE_I64, x, 2, D(3), D(4));
  dml_tensor_t out = tens(DML_DTYPE_I64, y, 2, D(3), D(4));
  /* upper, k = 0 (defaults) */
  CHECK_OK(run_op(DML_OP_TRILU, &in, 1, &out, 1, NULL, 0));
  const int64_t wu[12] = {1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12};
  for (int i = 0; i < 12; i++) CHECK(y[i] == wu[i]);
  /* lower, k = -1 (input 1) */
  int64_t k = -1;
  dml_tensor_t ins[2] = {in, tens(DML_DTYPE_I64, &k, 0)};
  dml_attr_t lower = attr_i("upper", 0);
  CHECK_OK(run_op(DML_OP_TRILU, ins, 2, &out, 1, &lower, 1));
  const int64_t wl[12] = {0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0};
  for (int i = 0; i < 12; i++) CHECK(y[i] == wl[i]);
  /* upper, k = 2, batch of 2 f32 matrices 2x3 */
  float xf[12], yf[12];
  for (int i = 0; i < 12; i++) xf[i] = (float)(i + 1);
  k = 2;
  dml_tensor_t insf[2] = {tens(DML_DTYPE_F32, xf, 3, D(2), D(2), D(3)),
                          tens(DML_DTYPE_I64, &k, 0)};
  dml_tensor_t outf = tens(DML_DTYPE_F32, yf, 3, D(2), D(2), D(3));
  CHECK_OK(run_op(DML_OP_TRILU, insf, 2, &outf, 1, NULL, 0));
  const float wf[12] = {0, 0, 3, 0, 0, 0, 0, 0, 9, 0, 0, 0};
  for (int i = 0; i < 12; i++) CHECK(yf[i] == wf[i]);
  dml_tensor_t in1 = tens(DML_DTYPE_I64, x, 1, D(4));
  dml_tensor_t out1 = tens(DML_DTYPE_I64, y, 1, D(4));
  CHECK_ERROR(run_op(DML_OP_TRILU, &in1, 1, &out1, 1, NULL, 0),
              DML_STATUS_INVALID_ARGUMENT, "rank >= 2");
}

static void test_eyelike(void) {
  float x[12] = {0};
  int32_t y[12];
  dml_tensor_t in = tens(DML_DTYPE_F32, x, 2, D(3), D(4));
  dml_tensor_t out = tens(DML_DTYPE_I32, y, 2, D(3), D(4));
  dml_attr_t k1 = attr_i("k", 1);
  CHECK_OK(run_op(DML_OP_EYE_LIKE, &in, 1, &out, 1, &k1, 1));
  const int32_t w[12] = {0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  for (int i = 0; i < 12; i++) CHECK(y[i] == w[i]);
  float yf[12];
  dml_tensor_t outf = tens(DML_DTYPE_F32, yf, 2, D(3), D(4));
  dml_attr_t km2 = attr_i("k", -2);
  CHECK_OK(run_op(DML_OP_EYE_LIKE, &in, 1, &outf, 1, &km2, 1));
  for (int i = 0; i < 12; i++) CHECK(yf[i] == (i == 8 ? 1.0f : 0.0f));
  uint8_t yb[12];
  dml_tensor_t outb = tens(DML_DTYPE_BOOL, yb, 2, D(3), D(4));
  CHECK_OK(run_op(DML_OP_EYE_LIKE, &in, 1, &outb, 1, NULL, 0));
  for (int i = 0; i < 12; i++) CHECK(yb[i] == (i == 0 || i == 5 || i == 10));
}

static void test_lrn(void) {
  /* x = [1,2,3] over C (shape [1,3,1,1]); alpha/size = 1, beta 1, bias 1:
   * size 3: windows [0,1], [0,2], [1,2] -> 1/(1+5), 2/(1+14), 3/(1+13);
   * size 2: floor(1/2) = 0 before, ceil(1/2) = 1 after -> [0,1], [1,2], [2,2]
   * -> 1/(1+5), 2/(1+13), 3/(1+9). */
  float x[3] = {1, 2, 3}, y[3];
  dml_tensor_t in = tens(DML_DTYPE_F32, x, 4, D(1), D(3), D(1), D(1));
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 4, D(1), D(3), D(1), D(1));
  dml_attr_t a3[4] = {attr_i("size", 3), attr_f("alpha", 3.0), attr_f("beta", 1.0),
                      attr_f("bias", 1.0)};
  CHECK_OK(run_op(DML_OP_LRN, &in, 1, &out, 1, a3, 4));
  CHECK_NEAR(y[0], 1.0 / 6, 1e-6);
  CHECK_NEAR(y[1], 2.0 / 15, 1e-6);
  CHECK_NEAR(y[2], 3.0 / 14, 1e-6);
  dml_attr_t a2[4] = {attr_i("size", 2), attr_f("alpha", 2.0), attr_f("beta", 1.0),
                      attr_f("bias", 1.0)};
  CHECK_OK(run_op(DML_OP_LRN, &in, 1, &out, 1, a2, 4));
  CHECK_NEAR(y[0], 1.0 / 6, 1e-6);
  CHECK_NEAR(y[1], 2.0 / 14, 1e-6);
  CHECK_NEAR(y[2], 3.0 / 10, 1e-6);
  /* defaults alpha 1e-4, beta 0.75, bias 1, size 1: x / (1 + 1e-4 x^2)^0.75 */
  dml_attr_t s1 = attr_i("size", 1);
  CHECK_OK(run_op(DML_OP_LRN, &in, 1, &out, 1, &s1, 1));
  CHECK_NEAR(y[2], 3.0 / pow(1 + 9e-4, 0.75), 1e-6);
  CHECK_ERROR(run_op(DML_OP_LRN, &in, 1, &out, 1, NULL, 0), DML_STATUS_INVALID_ARGUMENT,
              "attribute 'size' must be >= 1");
}

static void test_mvn(void) {
  /* [1,2,1,2], default axes [0,2,3]: channel 0 = {1,3} (mean 2, std 1),
   * channel 1 = {2,6} (mean 4, std 2) -> all (-1, 1) up to the 1e-9
   * added to the std. */
  float x[4] = {1, 3, 2, 6}, y[4];
  dml_tensor_t in = tens(DML_DTYPE_F32, x, 4, D(1), D(2), D(1), D(2));
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 4, D(1), D(2), D(1), D(2));
  CHECK_OK(run_op(DML_OP_MEAN_VARIANCE_NORMALIZATION, &in, 1, &out, 1, NULL, 0));
  const float w[4] = {-1, 1, -1, 1};
  for (int i = 0; i < 4; i++) CHECK_NEAR(y[i], w[i], 1e-6);
  /* axes [1]: over the channel: {1,2} and {3,6} */
  int64_t ax1 = 1;
  dml_attr_t a = attr_ints("axes", &ax1, 1);
  CHECK_OK(run_op(DML_OP_MEAN_VARIANCE_NORMALIZATION, &in, 1, &out, 1, &a, 1));
  const float w1[4] = {-1, -1, 1, 1};
  for (int i = 0; i < 4; i++) CHECK_NEAR(y[i], w1[i], 1e-6);
  dml_tensor_t in2 = tens(DML_DTYPE_F32, x, 2, D(2), D(2));
  dml_tensor_t out2 = tens(DML_DTYPE_F32, y, 2, D(2), D(2));
  CHECK_ERROR(run_op(DML_OP_MEAN_VARIANCE_NORMALIZATION, &in2, 1, &out2, 1, NULL, 0),
              DML_STATUS_INVALID_ARGUMENT, "axis 2 is out of range for rank 2");
}

/* A box of equal f64 values normalizes to exactly 0 (the f64 reference:
 * x - mean = 0). Before the shifted sums, the double mean of 42 copies of
 * 1867245.8133047342 was off by 2.3e-10 and 1 / (|x - mean| + 1e-9) made
 * y = +-0.62 (onnxruntime's function body, mean(x^2) - mean^2 in f32,
 * gives 1 or NaN for such boxes). Beside it a box of 42 values near it
 * against the two-pass formula in long double, within 1e-9. */
static void test_mvn_equal_values(void) {
  enum { L = 42 };
  double x[2 * L], y[2 * L];
  for (int i = 0; i < L; i++) {
    x[i] = 1867245.8133047342;
    x[L + i] = 1867245.8133047342 + 0.25 * (i % 7) - 0.5;
  }
  dml_tensor_t in = tens(DML_DTYPE_F64, x, 4, D(1), D(2), D(1), D(L));
  dml_tensor_t out = tens(DML_DTYPE_F64, y, 4, D(1), D(2), D(1), D(L));
  CHECK_OK(run_op(DML_OP_MEAN_VARIANCE_NORMALIZATION, &in, 1, &out, 1, NULL, 0));
  double worst = 0;
  long double mean = 0, var = 0;
  for (int i = 0; i < L; i++) worst = fmax(worst, fabs(y[i]));
  CHECK(worst == 0.0);
  for (int i = 0; i < L; i++) mean += (long double)x[L + i] / L;
  for (int i = 0; i < L; i++) var += (x[L + i] - mean) * (x[L + i] - mean) / L;
  for (int i = 0; i < L; i++)
    CHECK_NEAR(y[L + i], (double)((x[L + i] - mean) / (sqrtl(var) + 1e-9L)), 1e-9);
}

int main(void) {
  RUN(test_trig_f32_f64);
  RUN(test_trig_f16_and_int_rejected);
  RUN(test_celu_thresholded_relu);
  RUN(test_shrink);
  RUN(test_isinf_isnan);
  RUN(test_bitshift);
  RUN(test_castlike);
  RUN(test_hardmax);
  RUN(test_reduce_f32);
  RUN(test_reduce_other_dtypes);
  RUN(test_cumsum);
  RUN(test_trilu);
  RUN(test_eyelike);
  RUN(test_lrn);
  RUN(test_mvn);
  RUN(test_mvn_equal_values);
  return dml_test_finish();
}
