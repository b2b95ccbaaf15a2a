/* test_cpu_edges.c — the CPU reference kernels at the edges where the GPU
 * kernels were found wrong (issue 15; tests/vulkan/test_vulkan_edges.c and
 * tests/cuda/edge_cases.py hold the device side): the CPU is the reference
 * `dmlc check` and dml_every_op compare the devices with, so its values
 * there are pinned to ONNX's definitions evaluated in double:
 *   - SoftmaxCrossEntropyLoss of a row with two equal maxima 1e15
 *     (log_prob -log 2, loss log 2) and rows whose target is ignore_index
 *     holding +inf / NaN scores (loss +0, left out of the mean);
 *     LogSoftmax of the same row;
 *   - PRelu with infinite slopes (x >= 0 keeps x), Shrink of +-inf and NaN
 *     (NaN is the spec's "otherwise": 0), Mod with fmod = 1 (C99 fmod:
 *     by +-inf, of a huge ratio, by a subnormal, by 0);
 *   - Conv with an infinite weight on a padded tap, f32, f16 and f64: the
 *     padding is zeros multiplied by the weight (0 * inf = NaN), as ONNX
 *     Runtime 1.31 gives for f32 and f16 (it has no f64 Conv).
 * Exact comparisons except where noted (1e-6 relative). */
#include <math.h>

#include "cpu_test_util.h"

static int near_rel(double got, double want, double rel) {
  return fabs(got - want) <= rel * fabs(want);
}

static void test_sce_and_logsoftmax(void) {
  float x[12] = {1e15f, 1e15f, 0.5f, INFINITY, 1, 2, NAN, 0, 0, 1, 2, 3};
  int64_t t[4] = {0, 1, 1, 2};
  float z[4], lp[12], m;
  const double l2 = 0.69314718055994531, l3 = log(1.0 + exp(-1.0) + exp(-2.0));
  dml_tensor_t in[2] = {tens(DML_DTYPE_F32, x, 2, D(4), D(3)),
                        tens(DML_DTYPE_I64, t, 1, D(4))};
  dml_tensor_t out[2] = {tens(DML_DTYPE_F32, z, 1, D(4)),
                         tens(DML_DTYPE_F32, lp, 2, D(4), D(3))};
  dml_attr_t a[2] = {attr_i("ignore_index", 1), attr_s("reduction", "none")};
  CHECK_OK(run_op(DML_OP_SOFTMAX_CROSS_ENTROPY_LOSS, in, 2, out, 2, a, 2));
  CHECK(near_rel(z[0], l2, 1e-6) && near_rel(z[3], l3, 1e-6));
  CHECK(z[1] == 0 && !signbit(z[1]) && z[2] == 0 && !signbit(z[2]));
  CHECK(near_rel(lp[0], -l2, 1e-6) && near_rel(lp[1], -l2, 1e-6));
  CHECK(near_rel(lp[2], -1e15, 1e-6) && near_rel(lp[11], -l3, 1e-6));
  CHECK(isnan(lp[3]) && isnan(lp[6])); /* exp(inf - inf), a NaN score */
  dml_tensor_t om = tens(DML_DTYPE_F32, &m, 0);
  CHECK_OK(run_op(DML_OP_SOFTMAX_CROSS_ENTROPY_LOSS, in, 2, &om, 1, a, 1));
  CHECK(near_rel(m, (l2 + l3) / 2, 1e-6));
  float y[3];
  dml_tensor_t lin = tens(DML_DTYPE_F32, x, 2, D(1), D(3));
  dml_tensor_t lout = tens(DML_DTYPE_F32, y, 2, D(1), D(3));
  CHECK_OK(run_op(DML_OP_LOG_SOFTMAX, &lin, 1, &lout, 1, NULL, 0));
  CHECK(near_rel(y[0], -l2, 1e-6) && near_rel(y[1], -l2, 1e-6));
}

static void test_prelu_shrink_fmod(void) {
  float px[6] = {2, 0, -0.0f, -3, INFINITY, NAN};
  float sl[6] = {INFINITY, INFINITY, -INFINITY, 0.5f, INFINITY, 1};
  float py[6];
  dml_tensor_t pin[2] = {tens(DML_DTYPE_F32, px, 1, D(6)),
                         tens(DML_DTYPE_F32, sl, 1, D(6))};
  dml_tensor_t pout = tens(DML_DTYPE_F32, py, 1, D(6));
  CHECK_OK(run_op(DML_OP_PRELU, pin, 2, &pout, 1, NULL, 0));
  CHECK(py[0] == 2 && py[1] == 0 && !signbit(py[1]) && py[2] == 0 && signbit(py[2]));
  CHECK(py[3] == -1.5f && py[4] == INFINITY && isnan(py[5]));
  float sx[4] = {INFINITY, -INFINITY, NAN, 0.25f}, sy[4];
  dml_tensor_t sin_ = tens(DML_DTYPE_F32, sx, 1, D(4));
  dml_tensor_t sout = tens(DML_DTYPE_F32, sy, 1, D(4));
  dml_attr_t sa[2] = {attr_f("lambd", 0.5), attr_f("bias", 0.125)};
  CHECK_OK(run_op(DML_OP_SHRINK, &sin_, 1, &sout, 1, sa, 2));
  CHECK(sy[0] == INFINITY && sy[1] == -INFINITY && sy[2] == 0 && sy[3] == 0);
  float ma[7] = {3e38f, -1e15f, 7.5f, -7.5f, 1e-40f, 5, INFINITY};
  float mb[7] = {1e-30f, 3, INFINITY, -INFINITY, 3e-41f, 0, 2};
  float my[7];
  dml_tensor_t min_[2] = {tens(DML_DTYPE_F32, ma, 1, D(7)),
                          tens(DML_DTYPE_F32, mb, 1, D(7))};
  dml_tensor_t mout = tens(DML_DTYPE_F32, my, 1, D(7));
  dml_attr_t fm = attr_i("fmod", 1);
  CHECK_OK(run_op(DML_OP_MOD, min_, 2, &mout, 1, &fm, 1));
  for (int i = 0; i < 7; i++) {
    double want = fmod((double)ma[i], (double)mb[i]); /* exact: C99 F.10.7.1 */
    int ok = isnan(want) ? isnan(my[i]) : my[i] == (float)want;
    if (!ok) fprintf(stderr, "  fmod(%g, %g): %g, want %g\n", ma[i], mb[i], my[i], want);
    CHECK(ok);
  }
}

/* Conv(x = ones [1, 1, 2, 2], w = 0.5 [1, 1, 3, 3] with w[0, 0] = inf,
 * pads 1): tap (0, 0) is padded for outputs (0, 0), (0, 1) and (1, 0),
 * so they are 0 * inf = NaN; output (1, 1) reads x there: inf. ONNX
 * Runtime 1.31 (CPUExecutionProvider, f32 and f16): [nan nan nan inf]. */
static void test_conv_padded_taps(void) {
  const dml_dtype_t dts[3] = {DML_DTYPE_F32, DML_DTYPE_F16, DML_DTYPE_F64};
  for (int d = 0; d < 3; d++) {
    double xb[4], wb[9], yb[4]; /* room for 4, 9 and 4 elements of any dtype */
    for (int i = 0; i < 4; i++) dml_store_f64(dts[d], xb, (size_t)i, 1.0);
    for (int i = 0; i < 9; i++) dml_store_f64(dts[d], wb, (size_t)i, i ? 0.5 : INFINITY);
    dml_tensor_t in[2] = {tens(dts[d], xb, 4, D(1), D(1), D(2), D(2)),
                          tens(dts[d], wb, 4, D(1), D(1), D(3), D(3))};
    dml_tensor_t out = tens(dts[d], yb, 4, D(1), D(1), D(2), D(2));
    const int64_t pads[4] = {1, 1, 1, 1};
    dml_attr_t a = attr_ints("pads", pads, 4);
    CHECK_OK(run_op(DML_OP_CONV, in, 2, &out, 1, &a, 1));
    for (int i = 0; i < 3; i++) CHECK(isnan(dml_load_f64(dts[d], yb, (size_t)i)));
    CHECK(dml_load_f64(dts[d], yb, 3) == INFINITY);
  }
}

int main(void) {
  RUN(test_sce_and_logsoftmax);
  RUN(test_prelu_shrink_fmod);
  RUN(test_conv_padded_taps);
  return dml_test_finish();
}
