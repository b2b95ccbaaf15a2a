/*
 * test_cpu_opset23.c — the reference kernels of ONNX opsets 18..23
 * (runtime/cpu/cpu_norm.c RMSNormalization, cpu_attention.c Attention and
 * RotaryEmbedding, cpu_bitwise.c) against values computed here in double
 * from the ONNX operator definitions. Tolerance: 1e-6 * (1 + |want|) for
 * f32 results (a few float roundings); integers exact.
 */
#include <math.h>
#include <stdint.h>

#include "cpu_test_util.h"

static void test_rms_normalization(void) {
  /* X [2, 3], axis -1: y = x / sqrt(mean(x^2) + eps) * scale. */
  float x[6] = {1, -2, 3, 0.5f, 0, -0.25f}, s[3] = {1, 2, -1}, y[6];
  dml_tensor_t in[2] = {tens(DML_DTYPE_F32, x, 2, D(2), D(3)),
                        tens(DML_DTYPE_F32, s, 1, D(3))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 2, D(2), D(3));
  dml_attr_t a = attr_f("epsilon", 1e-3);
  CHECK_OK(run_op(DML_OP_RMS_NORMALIZATION, in, 2, &out, 1, &a, 1));
  for (int r = 0; r < 2; r++) {
    double ms = 0;
    for (int j = 0; j < 3; j++) ms += (double)x[r * 3 + j] * x[r * 3 + j];
    double inv = 1.0 / sqrt(ms / 3 + 1e-3);
    for (int j = 0; j < 3; j++) {
      double want = x[r * 3 + j] * inv * s[j];
      CHECK_NEAR(y[r * 3 + j], want, 1e-6 * (1 + fabs(want)));
    }
  }
  /* A zero row stays zero (no NaN: epsilon > 0). */
  float z[3] = {0, 0, 0}, yz[3];
  dml_tensor_t in2[2] = {tens(DML_DTYPE_F32, z, 1, D(3)),
                         tens(DML_DTYPE_F32, s, 1, D(3))};
  dml_tensor_t out2 = tens(DML_DTYPE_F32, yz, 1, D(3));
  CHECK_OK(run_op(DML_OP_RMS_NORMALIZATION, in2, 2, &out2, 1, NULL, 0));
  for (int j = 0; j < 3; j++) CHECK(yz[j] == 0.0f);
}

/* Reference attention for one (b, h): q [Sq, D], k [T, D], v [T, Dv]. */
static void ref_attention(const float *q, const float *k, const float *v, int64_t Sq,
                          int64_t T, int64_t Dd, int64_t Dv, int causal, int64_t past,
                          double scale, double *y) {
  for (int64_t i = 0; i < Sq; i++) {
    double s[16], mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < T; j++) {
      double a = 0;
      for (int64_t d = 0; d < Dd; d++) a += (double)q[i * Dd + d] * k[j * Dd + d];
      s[j] = a * scale + (causal && j > i + past ? -INFINITY : 0.0);
      if (s[j] > mx) mx = s[j];
    }
    for (int64_t j = 0; j < T; j++) sum += (s[j] = exp(s[j] - mx));
    for (int64_t d = 0; d < Dv; d++) {
      double acc = 0;
      for (int64_t j = 0; j < T; j++) acc += s[j] / sum * v[j * Dv + d];
      y[i * Dv + d] = acc;
    }
  }
}

static void test_attention(void) {
  /* 4-D, B=1, Hq=2, Hkv=1 (grouped), Sq=3, Skv=2 with past 1 (T=3), D=2,
   * Dv=3, causal: query i sees keys j <= i + 1. */
  enum { HQ = 2, SQ = 3, SKV = 2, P = 1, T = 3, DK = 2, DV = 3 };
  float *q = frand_buf(HQ * SQ * DK), *k = frand_buf(SKV * DK), *v = frand_buf(SKV * DV);
  float *pk = frand_buf(P * DK), *pv = frand_buf(P * DV);
  float y[HQ * SQ * DV], ok[T * DK], ov[T * DV], qk[HQ * SQ * T];
  dml_tensor_t in[6] = {tens(DML_DTYPE_F32, q, 4, D(1), D(HQ), D(SQ), D(DK)),
                        tens(DML_DTYPE_F32, k, 4, D(1), D(1), D(SKV), D(DK)),
                        tens(DML_DTYPE_F32, v, 4, D(1), D(1), D(SKV), D(DV)),
                        absent(),
                        tens(DML_DTYPE_F32, pk, 4, D(1), D(1), D(P), D(DK)),
                        tens(DML_DTYPE_F32, pv, 4, D(1), D(1), D(P), D(DV))};
  dml_tensor_t out[4] = {tens(DML_DTYPE_F32, y, 4, D(1), D(HQ), D(SQ), D(DV)),
                         tens(DML_DTYPE_F32, ok, 4, D(1), D(1), D(T), D(DK)),
                         tens(DML_DTYPE_F32, ov, 4, D(1), D(1), D(T), D(DV)),
                         tens(DML_DTYPE_F32, qk, 4, D(1), D(HQ), D(SQ), D(T))};
  dml_attr_t a[2] = {attr_i("is_causal", 1), attr_i("qk_matmul_output_mode", 0)};
  CHECK_OK(run_op(DML_OP_ATTENTION, in, 6, out, 4, a, 2));
  float kk[T * DK], vv[T * DV];
  for (int i = 0; i < T * DK; i++) kk[i] = i < P * DK ? pk[i] : k[i - P * DK];
  for (int i = 0; i < T * DV; i++) vv[i] = i < P * DV ? pv[i] : v[i - P * DV];
  for (int i = 0; i < T * DK; i++) CHECK(ok[i] == kk[i]);
  for (int i = 0; i < T * DV; i++) CHECK(ov[i] == vv[i]);
  double want[SQ * DV], scale = 1 / sqrt((double)DK);
  for (int h = 0; h < HQ; h++) {
    ref_attention(q + h * SQ * DK, kk, vv, SQ, T, DK, DV, 1, P, scale, want);
    for (int i = 0; i < SQ * DV; i++)
      CHECK_NEAR(y[h * SQ * DV + i], want[i], 1e-6 * (1 + fabs(want[i])));
    /* mode 0: the scaled scores, before the causal bias */
    for (int i = 0; i < SQ; i++)
      for (int j = 0; j < T; j++) {
        double s = 0;
        for (int d = 0; d < DK; d++)
          s += (double)q[(h * SQ + i) * DK + d] * kk[j * DK + d];
        CHECK_NEAR(qk[(h * SQ + i) * T + j], s * scale, 1e-6);
      }
  }
  /* A bool mask that masks a whole row gives a zero row (no NaN). */
  uint8_t m[SQ * T] = {0, 0, 0, 1, 1, 1, 1, 0, 1};
  in[3] = tens(DML_DTYPE_BOOL, m, 2, D(SQ), D(T));
  CHECK_OK(run_op(DML_OP_ATTENTION, in, 6, out, 1, NULL, 0));
  for (int h = 0; h < HQ; h++)
    for (int d = 0; d < DV; d++) CHECK(y[h * SQ * DV + d] == 0.0f);
  /* Mismatched head sizes are refused, naming the op. */
  in[1] = tens(DML_DTYPE_F32, k, 4, D(1), D(1), D(1), D(4));
  in[3] = absent();
  CHECK_ERROR(run_op(DML_OP_ATTENTION, in, 3, out, 1, NULL, 0),
              DML_STATUS_INVALID_ARGUMENT, "Attention");
  free(q), free(k), free(v), free(pk), free(pv);
}

static void test_rotary_embedding(void) {
  /* 3-D [B=1, S=2, H*D = 1*4], full rotation, position_ids [[1, 0]]. */
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8];
  float cs[6] = {1, 1, 0.5f, 0.25f, 0, -1}, sn[6] = {0, 0, 0.5f, 0.75f, 1, 0};
  int64_t pid[2] = {1, 0};
  dml_tensor_t in[4] = {
      tens(DML_DTYPE_F32, x, 3, D(1), D(2), D(4)), tens(DML_DTYPE_F32, cs, 2, D(3), D(2)),
      tens(DML_DTYPE_F32, sn, 2, D(3), D(2)), tens(DML_DTYPE_I64, pid, 2, D(1), D(2))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 3, D(1), D(2), D(4));
  dml_attr_t a = attr_i("num_heads", 1);
  CHECK_OK(run_op(DML_OP_ROTARY_EMBEDDING, in, 4, &out, 1, &a, 1));
  for (int s = 0; s < 2; s++) {
    const float *c = cs + pid[s] * 2, *n = sn + pid[s] * 2, *xs = x + s * 4;
    for (int k = 0; k < 2; k++) {
      /* halves: (x[k], x[k + 2]) */
      CHECK_NEAR(y[s * 4 + k], c[k] * xs[k] - n[k] * xs[k + 2], 1e-6);
      CHECK_NEAR(y[s * 4 + k + 2], n[k] * xs[k] + c[k] * xs[k + 2], 1e-6);
    }
  }
  /* interleaved: pairs (x[2k], x[2k + 1]) */
  dml_attr_t a2[2] = {attr_i("num_heads", 1), attr_i("interleaved", 1)};
  CHECK_OK(run_op(DML_OP_ROTARY_EMBEDDING, in, 4, &out, 1, a2, 2));
  for (int s = 0; s < 2; s++) {
    const float *c = cs + pid[s] * 2, *n = sn + pid[s] * 2, *xs = x + s * 4;
    for (int k = 0; k < 2; k++) {
      CHECK_NEAR(y[s * 4 + 2 * k], c[k] * xs[2 * k] - n[k] * xs[2 * k + 1], 1e-6);
      CHECK_NEAR(y[s * 4 + 2 * k + 1], n[k] * xs[2 * k] + c[k] * xs[2 * k + 1], 1e-6);
    }
  }
  pid[0] = 3;
  CHECK_ERROR(run_op(DML_OP_ROTARY_EMBEDDING, in, 4, &out, 1, &a, 1),
              DML_STATUS_INVALID_ARGUMENT, "position id 3 is outside the caches' 3 rows");
}

static void test_bitwise(void) {
  uint8_t a[4] = {0xF0, 0x0F, 0xAA, 0xFF}, b[1] = {0x3C}, y[4];
  dml_tensor_t in[2] = {tens(DML_DTYPE_U8, a, 1, D(4)), tens(DML_DTYPE_U8, b, 1, D(1))};
  dml_tensor_t out = tens(DML_DTYPE_U8, y, 1, D(4));
  CHECK_OK(run_op(DML_OP_BITWISE_AND, in, 2, &out, 1, NULL, 0));
  for (int i = 0; i < 4; i++) CHECK(y[i] == (uint8_t)(a[i] & 0x3C));
  CHECK_OK(run_op(DML_OP_BITWISE_OR, in, 2, &out, 1, NULL, 0));
  for (int i = 0; i < 4; i++) CHECK(y[i] == (uint8_t)(a[i] | 0x3C));
  CHECK_OK(run_op(DML_OP_BITWISE_XOR, in, 2, &out, 1, NULL, 0));
  for (int i = 0; i < 4; i++) CHECK(y[i] == (uint8_t)(a[i] ^ 0x3C));
  int64_t x64[2] = {0, INT64_MIN}, y64[2];
  dml_tensor_t i64 = tens(DML_DTYPE_I64, x64, 1, D(2)),
               o64 = tens(DML_DTYPE_I64, y64, 1, D(2));
  CHECK_OK(run_op(DML_OP_BITWISE_NOT, &i64, 1, &o64, 1, NULL, 0));
  CHECK(y64[0] == -1 && y64[1] == INT64_MAX);
  float f[1] = {1}, g[1];
  dml_tensor_t fi = tens(DML_DTYPE_F32, f, 1, D(1)), fo = tens(DML_DTYPE_F32, g, 1, D(1));
  CHECK_ERROR(run_op(DML_OP_BITWISE_NOT, &fi, 1, &fo, 1, NULL, 0),
              DML_STATUS_UNIMPLEMENTED, "input dtype f32 is not supported by BitwiseNot");
}

static void test_lp_normalization(void) {
  /* X [2, 2], axis 0 (columns): L2 and L1; a zero column gives 0. */
  float x[4] = {3, 0, -4, 0}, y[4];
  dml_tensor_t in = tens(DML_DTYPE_F32, x, 2, D(2), D(2));
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 2, D(2), D(2));
  dml_attr_t a[2] = {attr_i("axis", 0), attr_i("p", 2)};
  CHECK_OK(run_op(DML_OP_LP_NORMALIZATION, &in, 1, &out, 1, a, 2));
  CHECK_NEAR(y[0], 0.6, 1e-6);
  CHECK_NEAR(y[2], -0.8, 1e-6);
  CHECK(y[1] == 0.0f && y[3] == 0.0f);
  a[1] = attr_i("p", 1);
  CHECK_OK(run_op(DML_OP_LP_NORMALIZATION, &in, 1, &out, 1, a, 2));
  CHECK_NEAR(y[0], 3.0 / 7.0, 1e-6);
  CHECK_NEAR(y[2], -4.0 / 7.0, 1e-6);
  a[1] = attr_i("p", 3);
  CHECK_ERROR(run_op(DML_OP_LP_NORMALIZATION, &in, 1, &out, 1, a, 2),
              DML_STATUS_INVALID_ARGUMENT, "p must be 1 or 2, got 3");
}

static void test_group_normalization(void) {
  /* X [1, 4, 2], 2 groups of 2 channels; scale/bias per channel. */
  float x[8] = {1, 2, 3, 4, -1, 0, 0, 5}, s[4] = {1, 2, 1, -1}, b[4] = {0, 1, 0, 0.5f},
        y[8];
  dml_tensor_t in[3] = {tens(DML_DTYPE_F32, x, 3, D(1), D(4), D(2)),
                        tens(DML_DTYPE_F32, s, 1, D(4)), tens(DML_DTYPE_F32, b, 1, D(4))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 3, D(1), D(4), D(2));
  dml_attr_t a[2] = {attr_i("num_groups", 2), attr_f("epsilon", 1e-5)};
  CHECK_OK(run_op(DML_OP_GROUP_NORMALIZATION, in, 3, &out, 1, a, 2));
  for (int g = 0; g < 2; g++) {
    double m = 0, v = 0;
    for (int i = 0; i < 4; i++) m += x[g * 4 + i];
    m /= 4;
    for (int i = 0; i < 4; i++) v += (x[g * 4 + i] - m) * (x[g * 4 + i] - m);
    double inv = 1 / sqrt(v / 4 + 1e-5);
    for (int i = 0; i < 4; i++) {
      int ch = g * 2 + i / 2;
      double want = (x[g * 4 + i] - m) * inv * s[ch] + b[ch];
      CHECK_NEAR(y[g * 4 + i], want, 1e-6 * (1 + fabs(want)));
    }
  }
  a[0] = attr_i("num_groups", 3);
  CHECK_ERROR(run_op(DML_OP_GROUP_NORMALIZATION, in, 3, &out, 1, a, 2),
              DML_STATUS_INVALID_ARGUMENT, "num_groups must divide the channel count");
}

int main(void) {
  RUN(test_rms_normalization);
  RUN(test_attention);
  RUN(test_rotary_embedding);
  RUN(test_bitwise);
  RUN(test_lp_normalization);
  RUN(test_group_normalization);
  return dml_test_finish();
}
