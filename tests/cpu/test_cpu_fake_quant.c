/*
 * test_cpu_fake_quant.c — FakeQuantize / FakeQuantizeGrad (runtime/cpu/
 * cpu_fake_quant.c) against a reference written here in double: PyTorch's
 * fake_quantize_per_tensor_affine / _per_channel_affine forward
 *   y = (clamp(rint(x / s) + zp, qmin, qmax) - zp) * s
 * and its straight-through estimator (dx = dy where qmin <= rint(x / s) + zp
 * <= qmax, else 0), with ORT's compute_scale_zp for the per-tensor scale and
 * max|w| / 127 per channel. Values at and beyond the clamp edges, halfway
 * points, -0, denormals, +-inf and NaN. Tolerance: y within 1 ulp of the
 * reference (the reference rounds the same f32 quotient; the product
 * (q - zp) * s is one f32 rounding), dx exact.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>

#include "cpu_test_util.h"

static int ulp_close(float a, double ref) {
  if (isnan(ref)) return isnan(a);
  if (isinf(ref)) return a == ref;
  double tol = fmax(fabs(ref) * FLT_EPSILON, FLT_MIN);
  return fabs((double)a - ref) <= tol;
}

/* reference of one element: sets *pass */
static double ref_fq(float x, float s, double zp, double qmin, double qmax, int *pass) {
  float quot = x / s; /* the f32 division ONNX QuantizeLinear does */
  double q = rint((double)quot) + zp;
  *pass = q >= qmin && q <= qmax; /* false for NaN */
  if (isnan(q)) return NAN;
  if (q < qmin) q = qmin;
  if (q > qmax) q = qmax;
  return (q - zp) * (double)s;
}

static void run(dml_op_t op, dml_tensor_t *in, uint32_t nin, dml_tensor_t *out,
                const dml_attr_t *a, uint32_t na) {
  dml_cpu_call_t c = cpu_call(op, "fq", in, nin, out, 1, a, na);
  CHECK_OK(dml_cpu_run(&c));
}

static void test_per_tensor(void) {
  const float lo = -1.0f, hi = 2.0f;
  float s = (float)((hi - lo) / 255.0);
  double zp = rint(-128.0 - lo / s); /* -43 */
  CHECK(zp == -43);
  float x[] = {0.0f,
               -0.0f,
               1.0f,
               -1.0f,
               2.0f,
               (float)((-128 - zp) * s), /* q = qmin exactly */
               (float)((-129 - zp) * s), /* one step below: clamped, no grad */
               (float)((127 - zp) * s),  /* q = qmax */
               (float)((128 - zp) * s),  /* one step above */
               (float)(0.5 * s),         /* halfway: ties to even */
               (float)(1.5 * s),
               (float)(-2.5 * s),
               1e-40f, /* denormal */
               -3.0f,
               100.0f,
               INFINITY,
               -INFINITY,
               NAN,
               FLT_MAX,
               -FLT_MIN};
  enum { N = sizeof x / sizeof x[0] };
  float y[N], dy[N], dx[N], range[2] = {lo, hi};
  for (int i = 0; i < N; i++) dy[i] = (float)(i + 1);
  dml_attr_t a[2] = {attr_i("quant_min", -128), attr_i("quant_max", 127)};
  dml_tensor_t in[2] = {tens(DML_DTYPE_F32, x, 1, D(N)),
                        tens(DML_DTYPE_F32, range, 1, D(2))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 1, D(N));
  run(DML_OP_FAKE_QUANTIZE, in, 2, &out, a, 2);
  dml_tensor_t gin[3] = {tens(DML_DTYPE_F32, dy, 1, D(N)), in[0], in[1]};
  dml_tensor_t gout = tens(DML_DTYPE_F32, dx, 1, D(N));
  run(DML_OP_FAKE_QUANTIZE_GRAD, gin, 3, &gout, a, 2);
  int bad = 0;
  for (int i = 0; i < N; i++) {
    int pass;
    double r = ref_fq(x[i], s, zp, -128, 127, &pass);
    if (!ulp_close(y[i], r) || dx[i] != (pass ? dy[i] : 0.0f)) {
      printf("per tensor x=%g: y %.9g ref %.9g, dx %g (pass %d)\n", (double)x[i],
             (double)y[i], r, (double)dx[i], pass);
      bad++;
    }
  }
  CHECK(bad == 0);
  /* spot values: the edges pass, one step beyond does not */
  CHECK(dx[5] == dy[5] && dx[6] == 0 && dx[7] == dy[7] && dx[8] == 0);
  CHECK(isnan(y[17]) && dx[17] == 0);              /* NaN: value kept, no gradient */
  CHECK(dx[15] == 0 && dx[16] == 0);               /* +-inf saturate */
  CHECK(ulp_close(y[15], (127 - zp) * (double)s)); /* inf -> the top of the grid */
  CHECK(y[0] == 0.0f && y[9] == 0.0f);             /* 0.5 rounds to 0 (even) */

  /* a range not observed yet (min > max): the identity, every gradient passes */
  float unobs[2] = {INFINITY, -INFINITY};
  in[1] = tens(DML_DTYPE_F32, unobs, 1, D(2));
  gin[2] = in[1];
  run(DML_OP_FAKE_QUANTIZE, in, 2, &out, a, 2);
  run(DML_OP_FAKE_QUANTIZE_GRAD, gin, 3, &gout, a, 2);
  for (int i = 0; i < N; i++) {
    CHECK(memcmp(&y[i], &x[i], 4) == 0);
    CHECK(dx[i] == dy[i]);
  }
  /* an all-zero range: scale 1, zero point 0 (ORT's rule) */
  float zr[2] = {0, 0};
  in[1] = tens(DML_DTYPE_F32, zr, 1, D(2));
  run(DML_OP_FAKE_QUANTIZE, in, 2, &out, a, 2);
  CHECK(y[2] == 1.0f && y[14] == 100.0f && y[13] == -3.0f && y[12] == 0.0f);
}

static void test_per_channel(int axis) {
  /* W [3, 4] (axis 0) or its transpose [4, 3] (axis 1): row 0 ordinary,
   * row 1 all zero, row 2 with inf and NaN (left out of max |w|) */
  float w[3][4] = {{0.5f, -1.27f, 0.3f, 1e-40f},
                   {0.0f, -0.0f, 0.0f, 0.0f},
                   {INFINITY, 2.54f, NAN, -0.0101f}};
  float x[12], y[12], dy[12], dx[12];
  for (int c = 0; c < 3; c++)
    for (int k = 0; k < 4; k++) x[axis ? k * 3 + c : c * 4 + k] = w[c][k];
  for (int i = 0; i < 12; i++) dy[i] = (float)(i + 1);
  dml_attr_t a[3] = {attr_i("axis", axis), attr_i("quant_min", -127),
                     attr_i("quant_max", 127)};
  dml_tensor_t in[1] = {axis ? tens(DML_DTYPE_F32, x, 2, D(4), D(3))
                             : tens(DML_DTYPE_F32, x, 2, D(3), D(4))};
  dml_tensor_t out = in[0];
  out.data = y;
  run(DML_OP_FAKE_QUANTIZE, in, 1, &out, a, 3);
  dml_tensor_t gin[2] = {in[0], in[0]};
  gin[0].data = dy;
  dml_tensor_t gout = in[0];
  gout.data = dx;
  run(DML_OP_FAKE_QUANTIZE_GRAD, gin, 2, &gout, a, 3);
  float scales[3] = {1.27f / 127.0f, 1.0f, 2.54f / 127.0f};
  int bad = 0;
  for (int c = 0; c < 3; c++)
    for (int k = 0; k < 4; k++) {
      int i = axis ? k * 3 + c : c * 4 + k, pass;
      double r = ref_fq(x[i], scales[c], 0, -127, 127, &pass);
      if (!ulp_close(y[i], r) || dx[i] != (pass ? dy[i] : 0.0f)) {
        printf("axis %d ch %d x=%g: y %.9g ref %.9g dx %g\n", axis, c, (double)x[i],
               (double)y[i], r, (double)dx[i]);
        bad++;
      }
    }
  CHECK(bad == 0);
}

static void test_per_channel0(void) {
  test_per_channel(0);
}
static void test_per_channel1(void) {
  test_per_channel(1);
}

/* the grid's own points come back exactly (idempotence) */
static void test_idempotent(void) {
  float x[256], y[256], z[256], range[2] = {-0.7f, 3.1f};
  for (int i = 0; i < 256; i++) x[i] = -1.0f + 5.0f * (float)i / 255.0f;
  dml_attr_t a[2] = {attr_i("quant_min", -128), attr_i("quant_max", 127)};
  dml_tensor_t in[2] = {tens(DML_DTYPE_F32, x, 1, D(256)),
                        tens(DML_DTYPE_F32, range, 1, D(2))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 1, D(256));
  run(DML_OP_FAKE_QUANTIZE, in, 2, &out, a, 2);
  in[0].data = y;
  out.data = z;
  run(DML_OP_FAKE_QUANTIZE, in, 2, &out, a, 2);
  for (int i = 0; i < 256; i++) CHECK(y[i] == z[i]);
}

static void test_errors(void) {
  double xd[2] = {0, 1};
  float y[2], range[2] = {0, 1};
  dml_tensor_t in[2] = {tens(DML_DTYPE_F64, xd, 1, D(2)),
                        tens(DML_DTYPE_F32, range, 1, D(2))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 1, D(2));
  dml_cpu_call_t c = cpu_call(DML_OP_FAKE_QUANTIZE, "fq", in, 2, &out, 1, NULL, 0);
  dml_status_t st = dml_cpu_run(&c);
  CHECK(st != DML_OK);
  dml_status_free(st);
  float xf[2] = {0, 1}, r3[3] = {0, 1, 2};
  in[0] = tens(DML_DTYPE_F32, xf, 1, D(2));
  in[1] = tens(DML_DTYPE_F32, r3, 1, D(3));
  st = dml_cpu_run(&c);
  CHECK(st != DML_OK);
  dml_status_free(st);
}

int main(void) {
  RUN(test_per_tensor);
  RUN(test_per_channel0);
  RUN(test_per_channel1);
  RUN(test_idempotent);
  RUN(test_errors);
  return dml_test_finish();
}
