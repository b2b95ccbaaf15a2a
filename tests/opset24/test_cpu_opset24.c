/*
 * test_cpu_opset24.c — the CPU reference kernels of the forms ONNX opsets
 * 24..28 added, against values computed here from the ONNX operator text:
 * BitShift-28 (signed), Mod-28 (floats with fmod=0 and their edge cases),
 * SpaceToDepth-28 (mode CRD), CumProd-26, BitCast-26, TensorScatter-24 and
 * Attention-24/25 (nonpad_kv_seqlen, left/right_window_size). Integers and
 * bit patterns exact; f32 attention 1e-6 * (1 + |want|).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu_test_util.h"

static void test_bitshift_signed(void) {
  /* i8: right shifts are arithmetic, left shifts wrap, a shift < 0 or >= 8
   * is the sign fill alone (ONNX BitShift-28). */
  int8_t x[8] = {-128, -5, 5, 64, -1, 3, -7, 100};
  int8_t s[8] = {1, 1, 1, 1, 8, -1, 9, 2};
  int8_t want_r[8] = {-64, -3, 2, 32, -1, 0, -1, 25};
  int8_t want_l[8] = {0, -10, 10, -128, 0, 0, 0, -112};
  int8_t z[8];
  dml_tensor_t in[2] = {tens(DML_DTYPE_I8, x, 1, D(8)), tens(DML_DTYPE_I8, s, 1, D(8))};
  dml_tensor_t out = tens(DML_DTYPE_I8, z, 1, D(8));
  dml_attr_t right = attr_s("direction", "RIGHT"), left = attr_s("direction", "LEFT");
  CHECK_OK(run_op(DML_OP_BIT_SHIFT, in, 2, &out, 1, &right, 1));
  for (int i = 0; i < 8; i++) CHECK(z[i] == want_r[i]);
  CHECK_OK(run_op(DML_OP_BIT_SHIFT, in, 2, &out, 1, &left, 1));
  for (int i = 0; i < 8; i++) CHECK(z[i] == want_l[i]);
  /* i64 extremes */
  int64_t x64[3] = {INT64_MIN, INT64_MIN, -1}, s64[3] = {63, 64, 63}, z64[3];
  dml_tensor_t in64[2] = {tens(DML_DTYPE_I64, x64, 1, D(3)),
                          tens(DML_DTYPE_I64, s64, 1, D(3))};
  dml_tensor_t out64 = tens(DML_DTYPE_I64, z64, 1, D(3));
  CHECK_OK(run_op(DML_OP_BIT_SHIFT, in64, 2, &out64, 1, &right, 1));
  CHECK(z64[0] == -1 && z64[1] == -1 && z64[2] == -1);
  CHECK_OK(run_op(DML_OP_BIT_SHIFT, in64, 2, &out64, 1, &left, 1));
  CHECK(z64[0] == 0 && z64[1] == 0 && z64[2] == INT64_MIN);
  /* unsigned as before: a shift >= the width gives 0 */
  uint16_t u[2] = {0x8001, 3}, us[2] = {15, 16}, uz[2];
  dml_tensor_t inu[2] = {tens(DML_DTYPE_U16, u, 1, D(2)),
                         tens(DML_DTYPE_U16, us, 1, D(2))};
  dml_tensor_t outu = tens(DML_DTYPE_U16, uz, 1, D(2));
  CHECK_OK(run_op(DML_OP_BIT_SHIFT, inu, 2, &outu, 1, &left, 1));
  CHECK(uz[0] == 0x8000 && uz[1] == 0);
}

static void test_mod_float_floor(void) {
  /* Mod-28, fmod=0 on floats: x - floor(x / y) * y, the sign of y. */
  const double inf = INFINITY;
  double x[12] = {5.5, -5.5, 5.5, -5.5, 0.0, -0.0, inf, 3.0, 3.0, -3.0, 3.0, NAN};
  double y[12] = {2, 2, -2, -2, -3, 3, 2, 0.0, inf, inf, -inf, 1};
  double want[12] = {1.5, 0.5, -0.5, -1.5, -0.0, 0.0, NAN, NAN, 3.0, inf, -inf, NAN};
  double z[12];
  dml_tensor_t in[2] = {tens(DML_DTYPE_F64, x, 1, D(12)),
                        tens(DML_DTYPE_F64, y, 1, D(12))};
  dml_tensor_t out = tens(DML_DTYPE_F64, z, 1, D(12));
  CHECK_OK(run_op(DML_OP_MOD, in, 2, &out, 1, NULL, 0));
  for (int i = 0; i < 12; i++) {
    if (isnan(want[i])) {
      CHECK(isnan(z[i]));
    } else {
      CHECK(z[i] == want[i]);
      CHECK(signbit(z[i]) == signbit(want[i]));
    }
  }
  /* f32 likewise; fmod=1 keeps C's fmod (the sign of x) */
  float xf[2] = {-7.0f, 7.0f}, yf[2] = {3.0f, -3.0f}, zf[2];
  dml_tensor_t inf32[2] = {tens(DML_DTYPE_F32, xf, 1, D(2)),
                           tens(DML_DTYPE_F32, yf, 1, D(2))};
  dml_tensor_t outf = tens(DML_DTYPE_F32, zf, 1, D(2));
  CHECK_OK(run_op(DML_OP_MOD, inf32, 2, &outf, 1, NULL, 0));
  CHECK(zf[0] == 2.0f && zf[1] == -2.0f);
  dml_attr_t fm = attr_i("fmod", 1);
  CHECK_OK(run_op(DML_OP_MOD, inf32, 2, &outf, 1, &fm, 1));
  CHECK(zf[0] == -1.0f && zf[1] == 1.0f);
}

static void test_space_to_depth_crd(void) {
  /* N=1, C=2, H=W=4, b=2: CRD puts channel c's block (i, j) at c*4 + i*2 + j;
   * DepthToSpace CRD takes it back. */
  float x[32], y[32], back[32];
  for (int i = 0; i < 32; i++) x[i] = (float)i;
  dml_tensor_t in = tens(DML_DTYPE_F32, x, 4, D(1), D(2), D(4), D(4));
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 4, D(1), D(8), D(2), D(2));
  dml_attr_t a[2] = {attr_i("blocksize", 2), attr_s("mode", "CRD")};
  CHECK_OK(run_op(DML_OP_SPACE_TO_DEPTH, &in, 1, &out, 1, a, 2));
  for (int c = 0; c < 2; c++)
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 2; j++)
        for (int h = 0; h < 2; h++)
          for (int w = 0; w < 2; w++)
            CHECK(y[((c * 4 + i * 2 + j) * 2 + h) * 2 + w] ==
                  x[(c * 4 + h * 2 + i) * 4 + w * 2 + j]);
  dml_tensor_t bin = tens(DML_DTYPE_F32, y, 4, D(1), D(8), D(2), D(2));
  dml_tensor_t bout = tens(DML_DTYPE_F32, back, 4, D(1), D(2), D(4), D(4));
  CHECK_OK(run_op(DML_OP_DEPTH_TO_SPACE, &bin, 1, &bout, 1, a, 2));
  CHECK(memcmp(back, x, sizeof(x)) == 0);
  /* DCR (the default) differs: channel block (i, j) first */
  CHECK_OK(run_op(DML_OP_SPACE_TO_DEPTH, &in, 1, &out, 1, a, 1));
  CHECK(y[1 * 4] == x[1 * 16]); /* out channel 1 = block (0,0) of c 1 */
  a[1] = attr_s("mode", "XYZ");
  CHECK_ERROR(run_op(DML_OP_SPACE_TO_DEPTH, &in, 1, &out, 1, a, 2),
              DML_STATUS_INVALID_ARGUMENT, "mode 'XYZ' is not DCR or CRD");
}

static void test_cum_prod(void) {
  float x[6] = {1, 2, 3, 4, 5, 6}, y[6];
  int32_t ax = 1;
  dml_tensor_t in[2] = {tens(DML_DTYPE_F32, x, 2, D(2), D(3)),
                        tens(DML_DTYPE_I32, &ax, 0)};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 2, D(2), D(3));
  CHECK_OK(run_op(DML_OP_CUM_PROD, in, 2, &out, 1, NULL, 0));
  const float w0[6] = {1, 2, 6, 4, 20, 120};
  for (int i = 0; i < 6; i++) CHECK(y[i] == w0[i]);
  dml_attr_t a[2] = {attr_i("exclusive", 1), attr_i("reverse", 1)};
  CHECK_OK(run_op(DML_OP_CUM_PROD, in, 2, &out, 1, a, 2));
  const float w1[6] = {6, 3, 1, 30, 6, 1};
  for (int i = 0; i < 6; i++) CHECK(y[i] == w1[i]);
  /* int64 wraps modulo 2^64 (3^41 overflows) */
  int64_t xi[41], yi[41];
  for (int i = 0; i < 41; i++) xi[i] = 3;
  int64_t ax0 = 0;
  dml_tensor_t ini[2] = {tens(DML_DTYPE_I64, xi, 1, D(41)), tens(DML_DTYPE_I64, &ax0, 0)};
  dml_tensor_t outi = tens(DML_DTYPE_I64, yi, 1, D(41));
  CHECK_OK(run_op(DML_OP_CUM_PROD, ini, 2, &outi, 1, NULL, 0));
  uint64_t p = 1;
  for (int i = 0; i < 41; i++) {
    p *= 3u;
    CHECK(yi[i] == (int64_t)p);
  }
}

static void test_bit_cast(void) {
  float x[4] = {1.0f, -0.0f, INFINITY, NAN};
  int32_t y[4];
  dml_tensor_t in = tens(DML_DTYPE_F32, x, 1, D(4));
  dml_tensor_t out = tens(DML_DTYPE_I32, y, 1, D(4));
  CHECK_OK(run_op(DML_OP_BIT_CAST, &in, 1, &out, 1, NULL, 0));
  for (int i = 0; i < 4; i++) {
    int32_t bits;
    memcpy(&bits, &x[i], 4);
    CHECK(y[i] == bits);
  }
  CHECK(y[1] == INT32_MIN && y[2] == 0x7f800000);
  uint8_t b[3] = {0, 1, 2}, ob[3];
  dml_tensor_t inb = tens(DML_DTYPE_U8, b, 1, D(3));
  dml_tensor_t outb = tens(DML_DTYPE_BOOL, ob, 1, D(3));
  CHECK_ERROR(run_op(DML_OP_BIT_CAST, &inb, 1, &outb, 1, NULL, 0),
              DML_STATUS_INVALID_ARGUMENT,
              "element 2 is the byte 2, which is not a bool");
  dml_tensor_t outw = tens(DML_DTYPE_I16, y, 1, D(3));
  CHECK_ERROR(run_op(DML_OP_BIT_CAST, &inb, 1, &outw, 1, NULL, 0),
              DML_STATUS_INVALID_ARGUMENT,
              "BitCast from u8 to i16: the element sizes differ");
}

static void test_tensor_scatter(void) {
  /* past [2, 1, 4, 2] (axis -2: max 4), update [2, 1, 3, 2] */
  float past[16], upd[12], y[16];
  for (int i = 0; i < 16; i++) past[i] = (float)(100 + i);
  for (int i = 0; i < 12; i++) upd[i] = (float)(-1 - i);
  int64_t wi[2] = {1, 3};
  dml_tensor_t in[3] = {tens(DML_DTYPE_F32, past, 4, D(2), D(1), D(4), D(2)),
                        tens(DML_DTYPE_F32, upd, 4, D(2), D(1), D(3), D(2)),
                        tens(DML_DTYPE_I64, wi, 1, D(2))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 4, D(2), D(1), D(4), D(2));
  dml_attr_t circ = attr_s("mode", "circular");
  CHECK_OK(run_op(DML_OP_TENSOR_SCATTER, in, 3, &out, 1, &circ, 1));
  for (int b = 0; b < 2; b++)
    for (int t = 0; t < 4; t++)
      for (int d = 0; d < 2; d++) {
        float want = past[(b * 4 + t) * 2 + d];
        for (int s = 0; s < 3; s++)
          if ((wi[b] + s) % 4 == t) want = upd[(b * 3 + s) * 2 + d];
        CHECK(y[(b * 4 + t) * 2 + d] == want);
      }
  /* linear: batch 1 writes 3 + 3 > 4 positions */
  CHECK_ERROR(run_op(DML_OP_TENSOR_SCATTER, in, 3, &out, 1, NULL, 0),
              DML_STATUS_OUT_OF_RANGE, "write_indices[1] = 3: 3 updates do not fit");
  wi[1] = 0;
  CHECK_OK(run_op(DML_OP_TENSOR_SCATTER, in, 2, &out, 1, NULL, 0)); /* no indices: 0 */
  CHECK(y[0] == -1 && y[5] == -6 && y[6] == 106 && y[8] == -7);
}

/* Attention-24/25 for one (b, h): q [Sq, D], k/v [T, D]; key j is visible
 * when j < nkv, (!causal or j <= i + off) and within the window around
 * p = i + off (lw/rw < 0: open); a row with no key gives 0. */
static void ref_attention(const float *q, const float *k, const float *v, int Sq, int T,
                          int Dd, int nkv, int off, int causal, int lw, int rw,
                          double *y) {
  for (int i = 0; i < Sq; i++) {
    double s[16], mx = -INFINITY, sum = 0;
    int p = i + off;
    for (int j = 0; j < T; j++) {
      int ok = j < nkv && (!causal || j <= p) && (lw < 0 || j >= p - lw) &&
               (rw < 0 || j <= p + rw);
      double a = 0;
      for (int d = 0; d < Dd; d++) a += (double)q[i * Dd + d] * k[j * Dd + d];
      s[j] = ok ? a / sqrt((double)Dd) : -INFINITY;
      if (s[j] > mx) mx = s[j];
    }
    for (int j = 0; j < T; j++) sum += (s[j] = isinf(mx) ? 0 : exp(s[j] - mx));
    for (int d = 0; d < Dd; d++) {
      double acc = 0;
      for (int j = 0; j < T; j++) acc += sum > 0 ? s[j] / sum * v[j * Dd + d] : 0;
      y[i * Dd + d] = acc;
    }
  }
}

static void test_attention_nonpad_window(void) {
  enum { B = 2, SQ = 3, T = 6, DK = 2 };
  float *q = frand_buf(B * SQ * DK), *k = frand_buf(B * T * DK),
        *v = frand_buf(B * T * DK);
  int64_t nonpad[B] = {4, 2}; /* batch 1: offset 2 - 3 = -1, its row 0 sees nothing */
  float y[B * SQ * DK];
  double want[SQ * DK];
  dml_tensor_t in[7] = {tens(DML_DTYPE_F32, q, 4, D(B), D(1), D(SQ), D(DK)),
                        tens(DML_DTYPE_F32, k, 4, D(B), D(1), D(T), D(DK)),
                        tens(DML_DTYPE_F32, v, 4, D(B), D(1), D(T), D(DK)),
                        absent(),
                        absent(),
                        absent(),
                        tens(DML_DTYPE_I64, nonpad, 1, D(B))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 4, D(B), D(1), D(SQ), D(DK));
  static const int cases[3][3] = {{1, -1, -1}, {0, 1, 0}, {1, 1, -1}}; /* causal lw rw */
  for (int t = 0; t < 3; t++) {
    dml_attr_t a[3] = {attr_i("is_causal", cases[t][0]),
                       attr_i("left_window_size", cases[t][1]),
                       attr_i("right_window_size", cases[t][2])};
    CHECK_OK(run_op(DML_OP_ATTENTION, in, 7, &out, 1, a, 3));
    for (int b = 0; b < B; b++) {
      ref_attention(q + b * SQ * DK, k + b * T * DK, v + b * T * DK, SQ, T, DK,
                    (int)nonpad[b], (int)nonpad[b] - SQ, cases[t][0], cases[t][1],
                    cases[t][2], want);
      for (int i = 0; i < SQ * DK; i++)
        CHECK_NEAR(y[b * SQ * DK + i], want[i], 1e-6 * (1 + fabs(want[i])));
    }
    CHECK(y[SQ * DK] == 0 && y[SQ * DK + 1] == 0); /* batch 1, row 0: p = -1 */
  }
  nonpad[0] = 7;
  CHECK_ERROR(run_op(DML_OP_ATTENTION, in, 7, &out, 1, NULL, 0), DML_STATUS_OUT_OF_RANGE,
              "nonpad_kv_seqlen[0] = 7 is not in 0..6");
  free(q);
  free(k);
  free(v);
}

int main(void) {
  RUN(test_bitshift_signed);
  RUN(test_mod_float_floor);
  RUN(test_space_to_depth_crd);
  RUN(test_cum_prod);
  RUN(test_bit_cast);
  RUN(test_tensor_scatter);
  RUN(test_attention_nonpad_window);
  return dml_test_finish();
}
