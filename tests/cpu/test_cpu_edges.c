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
 *     Runtime 1.31 gives for f32 and f16 (it has no f64 Conv);
 *   - TopK with NaN: a NaN counts as above every number (first for
 *     largest, last for smallest), as numpy's sort and torch.topk order it
 *     and the GPU kernels do; ORT 1.31 agrees for largest on a short row
 *     ([nan inf 3] of the row below) but has no consistent order (smallest
 *     gave [nan -inf 1], a 37-element row lost its NaN);
 *   - BatchNormalization in ONNX Runtime's affine form x * a + (B - mean *
 *     a), a = (1 / sqrt(var + eps)) * scale, in float for f32 and f16, in
 *     double for f64: ORT 1.31's values for the inputs below;
 *   - Attention (opset 23) of rows whose scores are -inf or NaN of
 *     themselves (NaN, as ORT 1.31) and of rows whose every key the mask
 *     masks (0, as ORT 1.31).
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

/* TopK along a row of 6 and one of 40 (several merge passes), largest and
 * smallest, k = 3: NaN first for largest, last for smallest; ties keep the
 * lower index first. */
static void test_topk_nan(void) {
  float row[6] = {1, NAN, INFINITY, 3, -INFINITY, 2};
  float big[40];
  for (int i = 0; i < 40; i++) big[i] = (float)(i % 7);
  big[5] = NAN, big[17] = INFINITY, big[30] = NAN, big[33] = -INFINITY;
  struct {
    float *x;
    int n, largest;
    float want[3];
    int64_t wi[3];
  } cs[4] = {{row, 6, 1, {NAN, INFINITY, 3}, {1, 2, 3}},
             {row, 6, 0, {-INFINITY, 1, 2}, {4, 0, 5}},
             {big, 40, 1, {NAN, NAN, INFINITY}, {5, 30, 17}},
             {big, 40, 0, {-INFINITY, 0, 0}, {33, 0, 7}}};
  for (int c = 0; c < 4; c++) {
    int64_t kv = 3, idx[3];
    float v[3];
    dml_tensor_t in[2] = {tens(DML_DTYPE_F32, cs[c].x, 2, D(1), D(cs[c].n)),
                          tens(DML_DTYPE_I64, &kv, 1, D(1))};
    dml_tensor_t out[2] = {tens(DML_DTYPE_F32, v, 2, D(1), D(3)),
                           tens(DML_DTYPE_I64, idx, 2, D(1), D(3))};
    dml_attr_t a = attr_i("largest", cs[c].largest);
    CHECK_OK(run_op(DML_OP_TOP_K, in, 2, out, 2, &a, 1));
    for (int j = 0; j < 3; j++) {
      int ok = (isnan(cs[c].want[j]) ? isnan(v[j]) : v[j] == cs[c].want[j]) &&
               idx[j] == cs[c].wi[j];
      if (!ok)
        fprintf(stderr, "  case %d, %d: %g at %lld, want %g at %lld\n", c, j, v[j],
                (long long)idx[j], cs[c].want[j], (long long)cs[c].wi[j]);
      CHECK(ok);
    }
  }
}

/* BatchNormalization of x = [1, 1, 2.5] (channels 0..2), scale [inf, H, 2]
 * (H = 3e38, 65504 for f16), B [0, 1, 1], mean [0, 0, 0.5], var [1, 0, 4],
 * eps 1e-5. ORT 1.31: f32 [nan nan 2.9999976] (a = inf in float: 1 * inf
 * + (1 - 0 * inf)), f64 [nan 9.4868331e+40 2.9999975], f16 [nan inf 3]
 * (a = 2.07e7 in float, the result rounded to f16). */
static void test_batchnorm_affine(void) {
  const dml_dtype_t dts[3] = {DML_DTYPE_F32, DML_DTYPE_F64, DML_DTYPE_F16};
  const double want1[3] = {NAN, 9.4868331e+40, INFINITY};
  for (int d = 0; d < 3; d++) {
    const double xs[3] = {1, 1, 2.5}, sc[3] = {INFINITY, d == 2 ? 65504 : 3e38, 2},
                 bs[3] = {0, 1, 1}, mu[3] = {0, 0, 0.5}, vs[3] = {1, 0, 4};
    const double *src[5] = {xs, sc, bs, mu, vs};
    double buf[5][3], y[3];
    dml_tensor_t in[5];
    for (int k = 0; k < 5; k++) {
      for (int i = 0; i < 3; i++) dml_store_f64(dts[d], buf[k], (size_t)i, src[k][i]);
      in[k] =
          k ? tens(dts[d], buf[k], 1, D(3)) : tens(dts[d], buf[k], 3, D(1), D(3), D(1));
    }
    dml_tensor_t out = tens(dts[d], y, 3, D(1), D(3), D(1));
    dml_attr_t a = attr_f("epsilon", 1e-5);
    CHECK_OK(run_op(DML_OP_BATCH_NORMALIZATION, in, 5, &out, 1, &a, 1));
    double y0 = dml_load_f64(dts[d], y, 0), y1 = dml_load_f64(dts[d], y, 1),
           y2 = dml_load_f64(dts[d], y, 2);
    CHECK(isnan(y0));
    CHECK(isnan(want1[d])   ? isnan(y1)
          : isinf(want1[d]) ? y1 == want1[d]
                            : near_rel(y1, want1[d], 1e-6));
    CHECK(near_rel(y2, 2.9999976, d == 2 ? 1e-3 : 1e-6));
  }
}

/* Attention(Q [1,1,3,2], K = ones [1,1,4,2], V = 0..7 [1,1,4,2]): Q's row 0
 * -inf, row 1 (NaN, 1), row 2 ones -> ORT 1.31 [[nan nan] [nan nan] [3 4]];
 * Q = ones with a bool mask [3,4] whose row 0 is all false -> ORT
 * [[0 0] [3 4] [3 4]]. */
static void test_attention_edges(void) {
  float q[6] = {-INFINITY, -INFINITY, NAN, 1, 1, 1}, ones[8], v[8], y[6];
  for (int i = 0; i < 8; i++) ones[i] = 1, v[i] = (float)i;
  uint8_t m[12];
  for (int i = 0; i < 12; i++) m[i] = i >= 4;
  dml_tensor_t in[4] = {tens(DML_DTYPE_F32, q, 4, D(1), D(1), D(3), D(2)),
                        tens(DML_DTYPE_F32, ones, 4, D(1), D(1), D(4), D(2)),
                        tens(DML_DTYPE_F32, v, 4, D(1), D(1), D(4), D(2)),
                        tens(DML_DTYPE_BOOL, m, 2, D(3), D(4))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 4, D(1), D(1), D(3), D(2));
  CHECK_OK(run_op(DML_OP_ATTENTION, in, 3, &out, 1, NULL, 0));
  CHECK(isnan(y[0]) && isnan(y[1]) && isnan(y[2]) && isnan(y[3]));
  CHECK(near_rel(y[4], 3, 1e-6) && near_rel(y[5], 4, 1e-6));
  in[0] = tens(DML_DTYPE_F32, ones, 4, D(1), D(1), D(3), D(2));
  CHECK_OK(run_op(DML_OP_ATTENTION, in, 4, &out, 1, NULL, 0));
  CHECK(y[0] == 0 && y[1] == 0);
  for (int r = 1; r < 3; r++)
    CHECK(near_rel(y[2 * r], 3, 1e-6) && near_rel(y[2 * r + 1], 4, 1e-6));
}

int main(void) {
  RUN(test_sce_and_logsoftmax);
  RUN(test_prelu_shrink_fmod);
  RUN(test_conv_padded_taps);
  RUN(test_topk_nan);
  RUN(test_batchnorm_affine);
  RUN(test_attention_edges);
  return dml_test_finish();
}
