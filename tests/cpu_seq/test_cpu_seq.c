/*
 * test_cpu_seq.c — RNN/GRU/LSTM, the loss ops and the quantization ops
 * against independent naive references written out from the ONNX spec
 * equations, and against the spec's worked examples.
 *
 * Tolerances: recurrent f32 outputs within 1e-5 of a double reference
 * (with W and R packed beforehand, dml_cpu_rnn_prepack: the same bits as
 * packed per call)
 * (the f32 fused cell rounds in f32) and within 2e-5 * (1 + |ref|) of the f64
 * kernel (the reference loops in double) on random and edge values; f64
 * within 1e-12; loss
 * values within 1e-5 relative; quantized values exact.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h" /* dml_cpu_vsigmoid_f32, dml_cpu_vtanh_f32 */
#include "cpu_test_util.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static dml_attr_t attr_strs(const char *name, const char *const *v, size_t n) {
  dml_attr_t a;
  memset(&a, 0, sizeof a);
  a.name = name, a.kind = DML_ATTR_STRINGS, a.strings = v, a.n = n;
  return a;
}
static dml_attr_t attr_fs(const char *name, const double *v, size_t n) {
  dml_attr_t a;
  memset(&a, 0, sizeof a);
  a.name = name, a.kind = DML_ATTR_FLOATS, a.floats = v, a.n = n;
  return a;
}

static double sigm(double x) {
  return 1.0 / (1.0 + exp(-x));
}

/* ==== LSTM reference: one direction, layout 0, spec equations ========== */

/* X [S,B,I], W [4H,I], R [4H,H], Bias [8H] or NULL, P [3H] or NULL,
 * h0/c0 [B,H] or NULL. Y [S,B,H] (0 where t >= len[b]), Yh/Yc [B,H]. */
static void ref_lstm(int S, int B, int I, int H, const float *X, const float *W,
                     const float *R, const float *Bias, const float *P, const float *h0,
                     const float *c0, const int *len, int reverse, int input_forget,
                     double clip, double *Y, double *Yh, double *Yc) {
  for (int b = 0; b < B; b++) {
    double h[16], cc[16];
    for (int j = 0; j < H; j++) {
      h[j] = h0 ? h0[b * H + j] : 0;
      cc[j] = c0 ? c0[b * H + j] : 0;
    }
    for (int t = 0; t < S; t++)
      for (int j = 0; j < H; j++) Y[(t * B + b) * H + j] = 0;
    int L = len ? len[b] : S;
    for (int s = 0; s < L; s++) {
      int t = reverse ? L - 1 - s : s;
      double pre[4][16];
      for (int g = 0; g < 4; g++)
        for (int j = 0; j < H; j++) {
          int row = g * H + j;
          double v = Bias ? (double)Bias[row] + Bias[4 * H + row] : 0;
          for (int i = 0; i < I; i++)
            v += (double)X[(t * B + b) * I + i] * W[row * I + i];
          for (int i = 0; i < H; i++) v += h[i] * R[row * H + i];
          pre[g][j] = v;
        }
      double hn[16];
      for (int j = 0; j < H; j++) {
#define CL(v) (clip > 0 ? fmin(clip, fmax(-clip, (v))) : (v))
        double it = sigm(CL(pre[0][j] + (P ? P[j] * cc[j] : 0)));
        double ft =
            input_forget ? 1 - it : sigm(CL(pre[2][j] + (P ? P[2 * H + j] * cc[j] : 0)));
        double ct = tanh(CL(pre[3][j]));
        double Ct = ft * cc[j] + it * ct;
        double ot = sigm(CL(pre[1][j] + (P ? P[H + j] * Ct : 0)));
#undef CL
        cc[j] = Ct;
        hn[j] = ot * tanh(Ct);
      }
      for (int j = 0; j < H; j++) {
        h[j] = hn[j];
        Y[(t * B + b) * H + j] = h[j];
      }
    }
    for (int j = 0; j < H; j++) {
      Yh[b * H + j] = h[j];
      Yc[b * H + j] = cc[j];
    }
  }
}

/* Bidirectional LSTM with every optional input, sequence_lens and clip,
 * layout 0 and layout 1. */
static void test_lstm_bidirectional(void) {
  enum { S = 4, B = 3, I = 3, H = 2, ND = 2 };
  float *X = frand_buf(S * B * I), *W = frand_buf(ND * 4 * H * I);
  float *R = frand_buf(ND * 4 * H * H), *Bi = frand_buf(ND * 8 * H);
  float *P = frand_buf(ND * 3 * H), *h0 = frand_buf(ND * B * H),
        *c0 = frand_buf(ND * B * H);
  int32_t lens[B] = {4, 2, 3};
  int lensi[B] = {4, 2, 3};
  for (int layout = 0; layout < 2; layout++) {
    /* layout 1: X [B,S,I], states [B,ND,H], Y [B,S,ND,H] */
    float Xl[S * B * I], h0l[ND * B * H], c0l[ND * B * H];
    for (int t = 0; t < S; t++)
      for (int b = 0; b < B; b++)
        for (int i = 0; i < I; i++)
          Xl[layout ? (b * S + t) * I + i : (t * B + b) * I + i] = X[(t * B + b) * I + i];
    for (int d = 0; d < ND; d++)
      for (int b = 0; b < B; b++)
        for (int j = 0; j < H; j++) {
          int src = (d * B + b) * H + j, dst = layout ? (b * ND + d) * H + j : src;
          h0l[dst] = h0[src];
          c0l[dst] = c0[src];
        }
    float Y[S * ND * B * H], Yh[ND * B * H], Yc[ND * B * H];
    dml_tensor_t in[8] = {
        layout ? tens(DML_DTYPE_F32, Xl, 3, D(B), D(S), D(I))
               : tens(DML_DTYPE_F32, Xl, 3, D(S), D(B), D(I)),
        tens(DML_DTYPE_F32, W, 3, D(ND), D(4 * H), D(I)),
        tens(DML_DTYPE_F32, R, 3, D(ND), D(4 * H), D(H)),
        tens(DML_DTYPE_F32, Bi, 2, D(ND), D(8 * H)),
        tens(DML_DTYPE_I32, lens, 1, D(B)),
        layout ? tens(DML_DTYPE_F32, h0l, 3, D(B), D(ND), D(H))
               : tens(DML_DTYPE_F32, h0l, 3, D(ND), D(B), D(H)),
        layout ? tens(DML_DTYPE_F32, c0l, 3, D(B), D(ND), D(H))
               : tens(DML_DTYPE_F32, c0l, 3, D(ND), D(B), D(H)),
        tens(DML_DTYPE_F32, P, 2, D(ND), D(3 * H)),
    };
    dml_tensor_t out[3] = {
        layout ? tens(DML_DTYPE_F32, Y, 4, D(B), D(S), D(ND), D(H))
               : tens(DML_DTYPE_F32, Y, 4, D(S), D(ND), D(B), D(H)),
        layout ? tens(DML_DTYPE_F32, Yh, 3, D(B), D(ND), D(H))
               : tens(DML_DTYPE_F32, Yh, 3, D(ND), D(B), D(H)),
        layout ? tens(DML_DTYPE_F32, Yc, 3, D(B), D(ND), D(H))
               : tens(DML_DTYPE_F32, Yc, 3, D(ND), D(B), D(H)),
    };
    dml_attr_t at[4] = {attr_s("direction", "bidirectional"), attr_i("hidden_size", H),
                        attr_i("layout", layout), attr_f("clip", 0.7)};
    CHECK_OK(run_op(DML_OP_LSTM, in, 8, out, 3, at, 4));
    for (int d = 0; d < ND; d++) {
      double rY[S * B * H], rYh[B * H], rYc[B * H];
      ref_lstm(S, B, I, H, X, W + d * 4 * H * I, R + d * 4 * H * H, Bi + d * 8 * H,
               P + d * 3 * H, h0 + d * B * H, c0 + d * B * H, lensi, d == 1, 0, 0.7, rY,
               rYh, rYc);
      double err = 0;
      for (int t = 0; t < S; t++)
        for (int b = 0; b < B; b++)
          for (int j = 0; j < H; j++) {
            int yi =
                layout ? ((b * S + t) * ND + d) * H + j : ((t * ND + d) * B + b) * H + j;
            err = fmax(err, fabs(Y[yi] - rY[(t * B + b) * H + j]));
          }
      for (int b = 0; b < B; b++)
        for (int j = 0; j < H; j++) {
          int si = layout ? (b * ND + d) * H + j : (d * B + b) * H + j;
          err = fmax(err, fabs(Yh[si] - rYh[b * H + j]));
          err = fmax(err, fabs(Yc[si] - rYc[b * H + j]));
        }
      CHECK_NEAR(err, 0, 1e-5);
    }
  }
  free(X), free(W), free(R), free(Bi), free(P), free(h0), free(c0);
}

/* Reverse, input_forget, no bias/peepholes/initial state, f64. */
static void test_lstm_reverse_input_forget_f64(void) {
  enum { S = 3, B = 2, I = 2, H = 3 };
  float *X = frand_buf(S * B * I), *W = frand_buf(4 * H * I), *R = frand_buf(4 * H * H);
  double Xd[S * B * I], Wd[4 * H * I], Rd[4 * H * H], Y[S * B * H], Yh[B * H], Yc[B * H];
  for (int i = 0; i < S * B * I; i++) Xd[i] = X[i];
  for (int i = 0; i < 4 * H * I; i++) Wd[i] = W[i];
  for (int i = 0; i < 4 * H * H; i++) Rd[i] = R[i];
  dml_tensor_t in[3] = {tens(DML_DTYPE_F64, Xd, 3, D(S), D(B), D(I)),
                        tens(DML_DTYPE_F64, Wd, 3, D(1), D(4 * H), D(I)),
                        tens(DML_DTYPE_F64, Rd, 3, D(1), D(4 * H), D(H))};
  dml_tensor_t out[3] = {tens(DML_DTYPE_F64, Y, 4, D(S), D(1), D(B), D(H)),
                         tens(DML_DTYPE_F64, Yh, 3, D(1), D(B), D(H)),
                         tens(DML_DTYPE_F64, Yc, 3, D(1), D(B), D(H))};
  dml_attr_t at[2] = {attr_s("direction", "reverse"), attr_i("input_forget", 1)};
  CHECK_OK(run_op(DML_OP_LSTM, in, 3, out, 3, at, 2));
  double rY[S * B * H], rYh[B * H], rYc[B * H];
  ref_lstm(S, B, I, H, X, W, R, NULL, NULL, NULL, NULL, NULL, 1, 1, 0, rY, rYh, rYc);
  for (int i = 0; i < B * H; i++) {
    CHECK_NEAR(Yh[i], rYh[i], 1e-12);
    CHECK_NEAR(Yc[i], rYc[i], 1e-12);
  }
  for (int i = 0; i < S * B * H; i++) CHECK_NEAR(Y[i], rY[i], 1e-12);
  free(X), free(W), free(R);
}

/* ==== GRU reference (spec equations, both linear_before_reset forms) === */

static void test_gru(void) {
  enum { S = 3, B = 2, I = 3, H = 4 };
  float *X = frand_buf(S * B * I), *W = frand_buf(3 * H * I), *R = frand_buf(3 * H * H);
  float *Bi = frand_buf(6 * H), *h0 = frand_buf(B * H);
  for (int lbr = 0; lbr < 2; lbr++) {
    float Y[S * B * H], Yh[B * H];
    dml_tensor_t in[6] = {tens(DML_DTYPE_F32, X, 3, D(S), D(B), D(I)),
                          tens(DML_DTYPE_F32, W, 3, D(1), D(3 * H), D(I)),
                          tens(DML_DTYPE_F32, R, 3, D(1), D(3 * H), D(H)),
                          tens(DML_DTYPE_F32, Bi, 2, D(1), D(6 * H)),
                          absent(),
                          tens(DML_DTYPE_F32, h0, 3, D(1), D(B), D(H))};
    dml_tensor_t out[2] = {tens(DML_DTYPE_F32, Y, 4, D(S), D(1), D(B), D(H)),
                           tens(DML_DTYPE_F32, Yh, 3, D(1), D(B), D(H))};
    dml_attr_t at[2] = {attr_i("hidden_size", H), attr_i("linear_before_reset", lbr)};
    CHECK_OK(run_op(DML_OP_GRU, in, 6, out, 2, at, 2));
    double err = 0;
    for (int b = 0; b < B; b++) {
      double h[H];
      for (int j = 0; j < H; j++) h[j] = h0[b * H + j];
      for (int t = 0; t < S; t++) {
        const float *x = X + (t * B + b) * I;
        double z[H], r[H], hn[H];
        for (int j = 0; j < H; j++) {
          double az = Bi[j] + Bi[3 * H + j], ar = Bi[H + j] + Bi[4 * H + j];
          for (int i = 0; i < I; i++) {
            az += x[i] * W[j * I + i];
            ar += x[i] * W[(H + j) * I + i];
          }
          for (int i = 0; i < H; i++) {
            az += h[i] * R[j * H + i];
            ar += h[i] * R[(H + j) * H + i];
          }
          z[j] = sigm(az);
          r[j] = sigm(ar);
        }
        for (int j = 0; j < H; j++) {
          double xh = Bi[2 * H + j], rh = Bi[5 * H + j];
          for (int i = 0; i < I; i++) xh += x[i] * W[(2 * H + j) * I + i];
          if (lbr) {
            for (int i = 0; i < H; i++) rh += h[i] * R[(2 * H + j) * H + i];
            hn[j] = tanh(xh + r[j] * rh);
          } else {
            for (int i = 0; i < H; i++) rh += r[i] * h[i] * R[(2 * H + j) * H + i];
            hn[j] = tanh(xh + rh);
          }
        }
        for (int j = 0; j < H; j++) {
          h[j] = (1 - z[j]) * hn[j] + z[j] * h[j];
          err = fmax(err, fabs(Y[(t * B + b) * H + j] - h[j]));
        }
      }
      for (int j = 0; j < H; j++) err = fmax(err, fabs(Yh[b * H + j] - h[j]));
    }
    CHECK_NEAR(err, 0, 1e-5);
  }
  free(X), free(W), free(R), free(Bi), free(h0);
}

/* The vectorized exp (Softmax), Erf and activations of the fused cell
 * against libm in double: Erf equal to erf() rounded to f32; exp(x - m) within 2e-6
 * relative (0 below -87.3), sigmoid within 1e-6 relative (x >= -87; below, within 1e-37
 * absolute), tanh within 2e-6 relative; NaN stays NaN, tanh(-0) = -0, +-inf saturate;
 * every length 0..40 (the tails), nothing past n written. The Sigmoid op's kernel
 * likewise (below). */
static void test_vmath(void) {
  enum { N = 20000 + 12 };
  float *x = (float *)malloc(N * sizeof(float)), *ys = (float *)malloc(N * sizeof(float)),
        *yt = (float *)malloc(N * sizeof(float));
  static const float edge[] = {NAN,     INFINITY, -INFINITY, 0.0f,   -0.0f, 1e-40f,
                               -1e-40f, 1e-30f,   88.5f,     -88.5f, 1e30f, -1e30f};
  for (int i = 0; i < 20000; i++)
    x[i] = (float)(-100.0 + i * 0.01) * (i % 3 ? 1.0f : 0.013f);
  memcpy(x + 20000, edge, sizeof edge);
  memcpy(ys, x, N * sizeof(float));
  memcpy(yt, x, N * sizeof(float));
  dml_cpu_vsigmoid_f32(ys, N);
  dml_cpu_vtanh_f32(yt, N);
  double es = 0, et = 0;
  int bad = 0;
  for (int i = 0; i < N; i++) {
    double v = x[i], s = 1.0 / (1.0 + exp(-v)), t = tanh(v);
    if (isnan(v)) {
      bad += !isnan(ys[i]) || !isnan(yt[i]);
      continue;
    }
    if (v >= -87)
      es = fmax(es, fabs(ys[i] - s) / s);
    else
      bad += !(ys[i] >= 0 && ys[i] < 1e-37);
    et = fmax(et, t == 0 ? fabs(yt[i]) : fabs(yt[i] - t) / fabs(t));
  }
  CHECK_NEAR(es, 0, 1e-6);
  CHECK_NEAR(et, 0, 2e-6);
  CHECK(bad == 0);
  /* exp(x - m): 2e-6 relative above -87, 0 below and at -inf, NaN kept */
  double ee = 0;
  float *ye = (float *)malloc(N * sizeof(float));
  dml_cpu_vexp_sub_f32(x, 1.5f, ye, N);
  for (int i = 0; i < N; i++) {
    double v = (double)(x[i] - 1.5f);
    if (isnan(v))
      bad += !isnan(ye[i]);
    else if (v < -87.3f) /* the kernel's f32 bound */
      bad += ye[i] != 0;
    else if (v <= 88)
      ee = fmax(ee, fabs(ye[i] - exp(v)) / exp(v));
  }
  free(ye);
  CHECK_NEAR(ee, 0, 2e-6);
  CHECK(bad == 0);
  /* Erf (the f32 op): libm's double erf rounded to f32, bit for bit */
  float *yf = (float *)malloc(N * sizeof(float));
  dml_tensor_t ein = tens(DML_DTYPE_F32, x, 1, D(N)),
               eout = tens(DML_DTYPE_F32, yf, 1, D(N));
  CHECK_OK(run_op(DML_OP_ERF, &ein, 1, &eout, 1, NULL, 0));
  int erf_bad = 0;
  for (int i = 0; i < N; i++) {
    float r = (float)erf((double)x[i]);
    erf_bad += isnan(r) ? !isnan(yf[i]) : (r != yf[i] || signbit(r) != signbit(yf[i]));
  }
  free(yf);
  CHECK(erf_bad == 0);
  /* The Sigmoid op's kernel (dml_cpu_sigmoid_f32, four vectors at a time):
   * within 1e-6 relative for x >= -87, libm's expf(x) below (subnormals, 0 at
   * -inf), 1 at +inf, 0.5 at -0, NaN kept; in place the same bits; every
   * length 0..140 (the 64-value steps and 16-lane tails), nothing past n
   * written. */
  float *yo = (float *)malloc(N * sizeof(float)),
        *yi = (float *)malloc(N * sizeof(float));
  dml_cpu_sigmoid_f32(x, yo, N);
  memcpy(yi, x, N * sizeof(float));
  dml_cpu_sigmoid_f32(yi, yi, N);
  double eo = 0;
  for (int i = 0; i < N; i++) {
    double v = x[i], r = 1.0 / (1.0 + exp(-v));
    if (isnan(v))
      bad += !isnan(yo[i]);
    else if (v >= -87)
      eo = fmax(eo, fabs(yo[i] - r) / r);
    else
      bad += yo[i] != expf(x[i]);
  }
  bad += memcmp(yo, yi, N * sizeof(float)) != 0;
  CHECK_NEAR(eo, 0, 1e-6);
  CHECK(bad == 0);
  const float sx[] = {INFINITY, -INFINITY, -0.0f, -100.0f, -87.5f, -104.0f, 20.0f};
  float sy[7];
  dml_cpu_sigmoid_f32(sx, sy, 7);
  CHECK(sy[0] == 1.0f && sy[1] == 0.0f && sy[2] == 0.5f);
  CHECK(sy[3] == expf(-100.0f) && sy[3] > 0 && sy[3] < 1.2e-38f); /* subnormal */
  CHECK(sy[4] == expf(-87.5f) && sy[5] == expf(-104.0f) && fabsf(sy[6] - 1.0f) < 1e-7f);
  for (int n = 0; n <= 140; n++) {
    float a[160], b[160];
    for (int i = 0; i < 160; i++) a[i] = (float)(i % 23) - 11.5f, b[i] = 7.0f;
    dml_cpu_sigmoid_f32(a, b, n);
    int ok = 1;
    for (int i = 0; i < 160; i++)
      ok &= i < n ? fabs(b[i] - 1.0 / (1.0 + exp(-(double)a[i]))) < 1e-6 : b[i] == 7.0f;
    CHECK(ok);
  }
  free(yo), free(yi);
  float z = -0.0f;
  dml_cpu_vtanh_f32(&z, 1);
  CHECK(z == 0 && signbit(z));
  for (int n = 0; n <= 40; n++) {
    float a[48];
    for (int i = 0; i < 48; i++) a[i] = 7.0f;
    dml_cpu_vtanh_f32(a, n);
    int ok = 1;
    for (int i = 0; i < 48; i++)
      ok &= i < n ? fabsf(a[i] - 0.99999834f) < 1e-6f : a[i] == 7.0f;
    CHECK(ok);
  }
  free(x), free(ys), free(yt);
}

/* Attention's batched MatMul [B,H,S,D] x [B,H,D,S] (and a broadcast B) on 2
 * threads (products spread over the pool) against 1 thread (in turn): the
 * same GEMM per product, so the same bits; and against a double reference
 * within 1e-5 relative to the row's scale. */
static void test_matmul_batched_threads(void) {
  enum { NB = 3, NH = 4, S = 67, DH = 24 }; /* 1.3M multiply-adds: threaded */
  float *A = frand_buf(NB * NH * S * DH), *Bm = frand_buf(NB * NH * DH * S);
  float *y1 = (float *)malloc(NB * NH * S * S * sizeof(float));
  float *y2 = (float *)malloc(NB * NH * S * S * sizeof(float));
  for (int bcast = 0; bcast < 2; bcast++) {
    dml_tensor_t in[2] = {tens(DML_DTYPE_F32, A, 4, D(NB), D(NH), D(S), D(DH)),
                          bcast ? tens(DML_DTYPE_F32, Bm, 4, D(1), D(NH), D(DH), D(S))
                                : tens(DML_DTYPE_F32, Bm, 4, D(NB), D(NH), D(DH), D(S))};
    for (int th = 1; th <= 2; th++) {
      dml_tensor_t out =
          tens(DML_DTYPE_F32, th == 1 ? y1 : y2, 4, D(NB), D(NH), D(S), D(S));
      dml_cpu_set_num_threads(th);
      CHECK_OK(run_op(DML_OP_MATMUL, in, 2, &out, 1, NULL, 0));
    }
    dml_cpu_set_num_threads(1);
    CHECK(memcmp(y1, y2, NB * NH * S * S * sizeof(float)) == 0);
    double err = 0;
    for (int b = 0; b < NB * NH; b++)
      for (int i = 0; i < S; i++)
        for (int j = 0; j < S; j++) {
          const float *bb = Bm + (bcast ? b % NH : b) * DH * S;
          double r = 0;
          for (int k = 0; k < DH; k++)
            r += (double)A[(b * S + i) * DH + k] * bb[k * S + j];
          err = fmax(err, fabs(y2[(b * S + i) * S + j] - r));
        }
    CHECK_NEAR(err, 0, 1e-5 * DH);
  }
  free(A), free(Bm), free(y1), free(y2);
}

/* LayerNormalization over transformer rows (128 and 37 values: the 8-lane
 * statistics and their tail) against a two-pass double reference within
 * 2e-6 relative to 1 + |ref|; a row offset by 1e4 within 2e-3 (the
 * statistics are in double, but the kernel subtracts the mean rounded to f32:
 * half an f32 step at 1e4 is 5e-4 of the row's deviation 0.58), a NaN row
 * gives NaN there only. */
static void test_layer_norm_rows(void) {
  static const int widths[] = {128, 37};
  for (int w = 0; w < 2; w++) {
    const int R = 5, C = widths[w];
    float *x = frand_buf((size_t)R * C), *sc = frand_buf(C), *bi = frand_buf(C);
    float *y = (float *)malloc((size_t)R * C * sizeof(float));
    for (int j = 0; j < C; j++) x[2 * C + j] = 1e4f + x[2 * C + j];
    x[4 * C + 5] = NAN;
    dml_tensor_t in[3] = {tens(DML_DTYPE_F32, x, 2, D(R), D(C)),
                          tens(DML_DTYPE_F32, sc, 1, D(C)),
                          tens(DML_DTYPE_F32, bi, 1, D(C))};
    dml_tensor_t out = tens(DML_DTYPE_F32, y, 2, D(R), D(C));
    CHECK_OK(run_op(DML_OP_LAYER_NORMALIZATION, in, 3, &out, 1, NULL, 0));
    double err = 0, err_off = 0;
    int nan_ok = 1;
    for (int r = 0; r < R; r++) {
      double mu = 0, var = 0;
      for (int j = 0; j < C; j++) mu += x[r * C + j];
      mu /= C;
      for (int j = 0; j < C; j++) var += (x[r * C + j] - mu) * (x[r * C + j] - mu);
      var /= C;
      for (int j = 0; j < C; j++) {
        double ref = (x[r * C + j] - mu) / sqrt(var + 1e-5) * sc[j] + bi[j];
        double e = fabs(y[r * C + j] - ref) / (1 + fabs(ref));
        if (r == 4)
          nan_ok &= isnan(y[r * C + j]) != 0;
        else if (r == 2)
          err_off = fmax(err_off, e);
        else
          err = fmax(err, e);
      }
    }
    CHECK_NEAR(err, 0, 2e-6);
    CHECK_NEAR(err_off, 0, 2e-3);
    CHECK(nan_ok);
    free(x), free(sc), free(bi), free(y);
  }
}

/* ==== f32 fused cell against the f64 reference loops ==================== */

/* One call of op on f32 and on f64 (the same values): the f32 path (input
 * projection GEMM, per-step GEMM, vectorized gates) against the f64 loops.
 * Tolerance: 2e-5 * (1 + |ref|) (f32 roundings of sums over I + H terms of
 * magnitude <= 1), 1e-4 * (1 + |ref|) with edges (terms up to 50: sums of
 * about 1000 in f32 before a tanh); a NaN in the reference must be NaN in f32 and the
 * other way round. edges: about 1 in 8 X values replaced by NaN, +-inf, +-1e30, -0, a
 * denormal, +-50. */
typedef struct {
  dml_op_t op;
  int S, B, I, H;
  const char *dir;
  int layout, lbr, input_forget, lens, init, peep, edges;
  double clip;
} rnn_case_t;

/* run_op with W and R packed beforehand (dml_cpu_rnn_prepack, as the CPU
 * executor does at session creation) through dml_cpu_run_fused. */
static dml_status_t run_op_packed(dml_op_t op, const dml_tensor_t *in, uint32_t nin,
                                  dml_tensor_t *out, uint32_t nout,
                                  const dml_attr_t *attrs, uint32_t nattrs) {
  size_t pb = dml_cpu_rnn_prepack_bytes(op, &in[1], &in[2], attrs, nattrs);
  CHECK(pb > 0);
  void *pk = NULL;
  if (posix_memalign(&pk, 64, pb ? pb : 64) != 0) pk = NULL;
  CHECK(pk != NULL);
  if (!pk) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "test", "no memory");
  dml_cpu_rnn_prepack(op, &in[1], &in[2], attrs, nattrs, pk);
  dml_cpu_call_t c = cpu_call(op, "test_node", in, nin, out, nout, attrs, nattrs);
  size_t sb = dml_cpu_scratch_bytes(&c);
  void *scratch = sb ? malloc(sb) : NULL;
  if (scratch) memset(scratch, 0xff, sb);
  c.scratch = scratch;
  c.scratch_bytes = sb;
  dml_cpu_epilogue_t ep;
  memset(&ep, 0, sizeof ep);
  ep.packed = pk;
  dml_status_t s = dml_cpu_run_fused(&c, &ep);
  free(scratch);
  free(pk);
  return s;
}

static void rnn_pair(const rnn_case_t *k) {
  const int G = k->op == DML_OP_RNN ? 1 : k->op == DML_OP_GRU ? 3 : 4;
  const int nd = strcmp(k->dir, "bidirectional") == 0 ? 2 : 1;
  const int S = k->S, B = k->B, I = k->I, H = k->H, lstm = k->op == DML_OP_LSTM;
  const size_t n[8] = {(size_t)S * B * I,
                       (size_t)nd * G * H * I,
                       (size_t)nd * G * H * H,
                       (size_t)nd * 2 * G * H,
                       0,
                       (size_t)nd * B * H,
                       (size_t)nd * B * H,
                       (size_t)nd * 3 * H};
  const size_t no[3] = {(size_t)S * nd * B * H, (size_t)nd * B * H, (size_t)nd * B * H};
  static const float edge[] = {NAN,   INFINITY, -INFINITY, 1e30f, -1e30f,
                               -0.0f, 1e-40f,   50.0f,     -50.0f};
  float *f[8];
  double *g[8];
  for (int i = 0; i < 8; i++) {
    f[i] = frand_buf(n[i]);
    g[i] = (double *)malloc((n[i] ? n[i] : 1) * sizeof(double));
    for (size_t e = 0; i == 0 && k->edges && e < n[0]; e++)
      if ((g_rng >> 9) % 8 == 0 || frand() > 0.75f)
        f[0][e] = edge[(g_rng >> 4) % (sizeof edge / sizeof edge[0])];
    for (size_t e = 0; e < n[i]; e++) g[i][e] = f[i][e];
  }
  int32_t lens[64];
  for (int b = 0; b < B; b++) lens[b] = k->lens ? (int32_t)((g_rng >> 7) % (S + 1)) : S;
  if (k->lens) lens[0] = S;
  float *fy[3];
  double *gy[3];
  for (int i = 0; i < 3; i++) {
    fy[i] = (float *)malloc((no[i] ? no[i] : 1) * sizeof(float));
    gy[i] = (double *)malloc((no[i] ? no[i] : 1) * sizeof(double));
  }
  dml_attr_t at[6] = {attr_s("direction", k->dir), attr_i("hidden_size", H),
                      attr_i("layout", k->layout),
                      attr_i(lstm ? "input_forget" : "linear_before_reset",
                             lstm ? k->input_forget : k->lbr),
                      attr_f("clip", k->clip)};
  uint32_t nat = k->clip > 0 ? 5 : 4;
  if (k->op == DML_OP_RNN) nat = k->clip > 0 ? 5 : 3, at[3] = at[4];
  for (int pass = 0; pass < 2; pass++) {
    dml_dtype_t dt = pass ? DML_DTYPE_F64 : DML_DTYPE_F32;
    void *d[8], *o[3];
    for (int i = 0; i < 8; i++) d[i] = pass ? (void *)g[i] : (void *)f[i];
    for (int i = 0; i < 3; i++) o[i] = pass ? (void *)gy[i] : (void *)fy[i];
    int64_t s0 = k->layout ? B : nd, s1 = k->layout ? nd : B;
    dml_tensor_t in[8] = {k->layout ? tens(dt, d[0], 3, D(B), D(S), D(I))
                                    : tens(dt, d[0], 3, D(S), D(B), D(I)),
                          tens(dt, d[1], 3, D(nd), D(G * H), D(I)),
                          tens(dt, d[2], 3, D(nd), D(G * H), D(H)),
                          tens(dt, d[3], 2, D(nd), D(2 * G * H)),
                          k->lens ? tens(DML_DTYPE_I32, lens, 1, D(B)) : absent(),
                          k->init ? tens(dt, d[5], 3, s0, s1, D(H)) : absent(),
                          k->init ? tens(dt, d[6], 3, s0, s1, D(H)) : absent(),
                          k->peep ? tens(dt, d[7], 2, D(nd), D(3 * H)) : absent()};
    dml_tensor_t out[3] = {k->layout ? tens(dt, o[0], 4, D(B), D(S), D(nd), D(H))
                                     : tens(dt, o[0], 4, D(S), D(nd), D(B), D(H)),
                           tens(dt, o[1], 3, s0, s1, D(H)),
                           tens(dt, o[2], 3, s0, s1, D(H))};
    CHECK_OK(run_op(k->op, in, lstm ? 8 : 6, out, lstm ? 3 : 2, at, nat));
    if (pass == 0) {
      /* Weights packed once (the executor's path): the same bits. */
      float *keep[3];
      for (int i = 0; i < 3; i++) {
        keep[i] = (float *)malloc((no[i] ? no[i] : 1) * sizeof(float));
        memcpy(keep[i], fy[i], no[i] * sizeof(float));
        memset(fy[i], 0x7f, no[i] * sizeof(float));
      }
      CHECK_OK(run_op_packed(k->op, in, lstm ? 8 : 6, out, lstm ? 3 : 2, at, nat));
      for (int i = 0; i < (lstm ? 3 : 2); i++)
        CHECK(memcmp(keep[i], fy[i], no[i] * sizeof(float)) == 0);
      if (k->op != DML_OP_RNN) {
        /* The LSTM's and the GRU's one-pass cells (dml_cpu_lstm_cell_f32,
         * dml_cpu_gru_gates_f32 / dml_cpu_gru_cell_f32, on above) against
         * the per-gate loops: the same bits, edge values, clip, peepholes
         * and linear_before_reset both ways included. */
        int nout = lstm ? 3 : 2, prev = dml_cpu_rnn_fused_set(0);
        for (int i = 0; i < nout; i++) memset(fy[i], 0x7f, no[i] * sizeof(float));
        CHECK_OK(run_op(k->op, in, lstm ? 8 : 6, out, nout, at, nat));
        dml_cpu_rnn_fused_set(prev);
        for (int i = 0; i < nout; i++)
          CHECK(memcmp(keep[i], fy[i], no[i] * sizeof(float)) == 0);
      }
      for (int i = 0; i < (lstm ? 3 : 2); i++) free(keep[i]);
      if (!lstm) free(keep[2]);
    }
  }
  double err = 0;
  int nan_bad = 0;
  for (int i = 0; i < (lstm ? 3 : 2); i++)
    for (size_t e = 0; e < no[i]; e++) {
      double ref = gy[i][e], got = fy[i][e];
      if (isnan(ref) || isnan(got)) {
        nan_bad += isnan(ref) != isnan(got);
        continue;
      }
      err = fmax(err, fabs(got - ref) / (1 + fabs(ref)));
    }
  double tol = k->edges ? 1e-4 : 2e-5;
  if (err > tol || nan_bad)
    fprintf(stderr, "  %s S=%d B=%d I=%d H=%d %s layout=%d lbr=%d lens=%d edges=%d\n",
            k->op == DML_OP_RNN   ? "RNN"
            : k->op == DML_OP_GRU ? "GRU"
                                  : "LSTM",
            S, B, I, H, k->dir, k->layout, k->lbr, k->lens, k->edges);
  CHECK_NEAR(err, 0, tol);
  CHECK(nan_bad == 0);
  for (int i = 0; i < 8; i++) free(f[i]), free(g[i]);
  for (int i = 0; i < 3; i++) free(fy[i]), free(gy[i]);
}

static void test_rnn_fused_vs_f64(void) {
  static const int sizes[][4] = {{1, 1, 3, 5}, {5, 3, 7, 17}, {4, 5, 2, 33},
                                 {3, 7, 9, 1}, {0, 2, 3, 4},  {6, 2, 40, 24}};
  static const char *const dirs[] = {"forward", "reverse", "bidirectional"};
  const dml_op_t ops[] = {DML_OP_RNN, DML_OP_GRU, DML_OP_LSTM};
  int n = 0;
  for (int o = 0; o < 3; o++)
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
      for (int v = 0; v < 6; v++) {
        rnn_case_t k = {ops[o],      sizes[z][0],     sizes[z][1], sizes[z][2],
                        sizes[z][3], dirs[v % 3],     v / 3,       v & 1,
                        v == 4,      v >= 2,          v != 1,      v >= 3,
                        0,           v == 5 ? 0.9 : 0};
        rnn_pair(&k);
        k.edges = 1;
        rnn_pair(&k);
        n += 2;
      }
  CHECK(n == 216);
  /* Batches of 32 and more without sequence_lens (above, layout 1 always
   * has them): the input projection made one step at a time before it
   * (from X's strided rows in layout 1), the LSTM cell's 4-vector pass. */
  for (int o = 0; o < 3; o++)
    for (int v = 0; v < 4; v++) {
      rnn_case_t k = {
          ops[o], 3, 32 + v, 7,      17 + 16 * v, dirs[v % 3], v != 1,
          v & 1,  0, 0,      v != 0, v == 2,      0,           v == 3 ? 0.9 : 0};
      rnn_pair(&k);
      k.edges = 1;
      rnn_pair(&k);
    }
}

/* RNN with activations LeakyRelu(alpha) forward / ScaledTanh(alpha, beta)
 * backward: alpha and beta consumed in order. */
static void test_rnn_activations(void) {
  enum { S = 3, B = 2, I = 2, H = 3 };
  float *X = frand_buf(S * B * I), *W = frand_buf(2 * H * I), *R = frand_buf(2 * H * H);
  float Y[S * 2 * B * H], Yh[2 * B * H];
  dml_tensor_t in[3] = {tens(DML_DTYPE_F32, X, 3, D(S), D(B), D(I)),
                        tens(DML_DTYPE_F32, W, 3, D(2), D(H), D(I)),
                        tens(DML_DTYPE_F32, R, 3, D(2), D(H), D(H))};
  dml_tensor_t out[2] = {tens(DML_DTYPE_F32, Y, 4, D(S), D(2), D(B), D(H)),
                         tens(DML_DTYPE_F32, Yh, 3, D(2), D(B), D(H))};
  static const char *const acts[2] = {"LeakyRelu", "ScaledTanh"};
  static const double alpha[2] = {0.3, 1.5}, beta[1] = {0.5};
  dml_attr_t at[5] = {attr_s("direction", "bidirectional"),
                      attr_strs("activations", acts, 2),
                      attr_fs("activation_alpha", alpha, 2),
                      attr_fs("activation_beta", beta, 1), attr_i("hidden_size", H)};
  CHECK_OK(run_op(DML_OP_RNN, in, 3, out, 2, at, 5));
  double err = 0;
  for (int d = 0; d < 2; d++)
    for (int b = 0; b < B; b++) {
      double h[H] = {0};
      for (int s = 0; s < S; s++) {
        int t = d ? S - 1 - s : s;
        double hn[H];
        for (int j = 0; j < H; j++) {
          double v = 0;
          for (int i = 0; i < I; i++)
            v += X[(t * B + b) * I + i] * W[(d * H + j) * I + i];
          for (int i = 0; i < H; i++) v += h[i] * R[(d * H + j) * H + i];
          hn[j] = d == 0 ? (v >= 0 ? v : 0.3 * v) : 1.5 * tanh(0.5 * v);
        }
        memcpy(h, hn, sizeof h);
      }
      for (int j = 0; j < H; j++) err = fmax(err, fabs(Yh[(d * B + b) * H + j] - h[j]));
    }
  CHECK_NEAR(err, 0, 1e-5);
  /* unknown activation name and bad sequence_lens */
  static const char *const bad[2] = {"Swish", "Tanh"};
  dml_attr_t at2[2] = {attr_s("direction", "bidirectional"),
                       attr_strs("activations", bad, 2)};
  CHECK_ERROR(run_op(DML_OP_RNN, in, 3, out, 2, at2, 2), DML_STATUS_UNIMPLEMENTED,
              "activation 'Swish' is not supported");
  int32_t lens[B] = {1, 7};
  dml_tensor_t in2[5] = {in[0], in[1], in[2], absent(),
                         tens(DML_DTYPE_I32, lens, 1, D(B))};
  CHECK_ERROR(run_op(DML_OP_RNN, in2, 5, out, 2, at, 5), DML_STATUS_OUT_OF_RANGE,
              "sequence_lens[1] = 7 is outside [0, 3]");
  free(X), free(W), free(R);
}

static void test_rnn_errors(void) {
  float x[6] = {0}, w[6] = {0}, r[4] = {0}, y[4], yh[4];
  int32_t xi[6] = {0};
  dml_tensor_t in[3] = {tens(DML_DTYPE_F32, x, 3, D(1), D(2), D(3)),
                        tens(DML_DTYPE_F32, w, 3, D(1), D(2), D(3)),
                        tens(DML_DTYPE_F32, r, 3, D(1), D(2), D(2))};
  dml_tensor_t out[2] = {tens(DML_DTYPE_F32, y, 4, D(1), D(1), D(2), D(2)),
                         tens(DML_DTYPE_F32, yh, 3, D(1), D(2), D(2))};
  dml_attr_t hs = attr_i("hidden_size", 3);
  CHECK_ERROR(run_op(DML_OP_RNN, in, 3, out, 2, &hs, 1), DML_STATUS_INVALID_ARGUMENT,
              "hidden_size 3");
  dml_attr_t dir = attr_s("direction", "sideways");
  CHECK_ERROR(run_op(DML_OP_RNN, in, 3, out, 2, &dir, 1), DML_STATUS_INVALID_ARGUMENT,
              "direction 'sideways' is not valid");
  in[0] = tens(DML_DTYPE_I32, xi, 3, D(1), D(2), D(3));
  CHECK_ERROR(run_op(DML_OP_RNN, in, 3, out, 2, NULL, 0), DML_STATUS_UNIMPLEMENTED,
              "X dtype i32 is not supported by RNN");
}

/* ==== losses ============================================================ */

static void test_nll_loss(void) {
  /* input [N=2, C=3, d=2], target [2, 2], weight [3] */
  float x[12], w[3] = {0.5f, 1.0f, 2.0f};
  for (int i = 0; i < 12; i++) x[i] = (float)(i + 1) * 0.1f - 0.7f;
  int64_t tg[4] = {0, 2, 1, -1};
  float none[4], sum, mean;
  dml_tensor_t in[3] = {tens(DML_DTYPE_F32, x, 3, D(2), D(3), D(2)),
                        tens(DML_DTYPE_I64, tg, 2, D(2), D(2)),
                        tens(DML_DTYPE_F32, w, 1, D(3))};
  /* loss[n,d] = -x[n, t, d] * w[t]; ignored: 0 */
  double ref[4] = {-x[0 * 6 + 0 * 2 + 0] * 0.5, -x[0 * 6 + 2 * 2 + 1] * 2.0,
                   -x[1 * 6 + 1 * 2 + 0] * 1.0, 0};
  double wsum = 0.5 + 2.0 + 1.0;
  dml_attr_t at[2] = {attr_s("reduction", "none"), attr_i("ignore_index", -1)};
  dml_tensor_t o = tens(DML_DTYPE_F32, none, 2, D(2), D(2));
  CHECK_OK(run_op(DML_OP_NEGATIVE_LOG_LIKELIHOOD_LOSS, in, 3, &o, 1, at, 2));
  for (int i = 0; i < 4; i++) CHECK_NEAR(none[i], ref[i], 1e-6);
  at[0] = attr_s("reduction", "sum");
  o = tens(DML_DTYPE_F32, &sum, 0);
  CHECK_OK(run_op(DML_OP_NEGATIVE_LOG_LIKELIHOOD_LOSS, in, 3, &o, 1, at, 2));
  CHECK_NEAR(sum, ref[0] + ref[1] + ref[2], 1e-6);
  at[0] = attr_s("reduction", "mean");
  o = tens(DML_DTYPE_F32, &mean, 0);
  CHECK_OK(run_op(DML_OP_NEGATIVE_LOG_LIKELIHOOD_LOSS, in, 3, &o, 1, at, 2));
  CHECK_NEAR(mean, (ref[0] + ref[1] + ref[2]) / wsum, 1e-6);
  /* without ignore_index, -1 is out of range */
  CHECK_ERROR(run_op(DML_OP_NEGATIVE_LOG_LIKELIHOOD_LOSS, in, 3, &o, 1, at, 1),
              DML_STATUS_OUT_OF_RANGE, "target -1 at [1, 1] is outside [0, 3)");
  /* mean without weight: divide by the number of non-ignored targets */
  CHECK_OK(run_op(DML_OP_NEGATIVE_LOG_LIKELIHOOD_LOSS, in, 2, &o, 1, at, 2));
  CHECK_NEAR(mean, (ref[0] / 0.5 + ref[1] / 2.0 + ref[2]) / 3.0, 1e-6);
}

static void test_softmax_cross_entropy(void) {
  /* scores [N=3, C=4] f64, labels [3] i32, reduction mean, log_prob */
  double x[12], lp[12], loss;
  for (int i = 0; i < 12; i++) x[i] = sin(i * 1.3) * 3;
  int32_t lab[3] = {3, 0, 2};
  dml_tensor_t in[2] = {tens(DML_DTYPE_F64, x, 2, D(3), D(4)),
                        tens(DML_DTYPE_I32, lab, 1, D(3))};
  dml_tensor_t out[2] = {tens(DML_DTYPE_F64, &loss, 0),
                         tens(DML_DTYPE_F64, lp, 2, D(3), D(4))};
  CHECK_OK(run_op(DML_OP_SOFTMAX_CROSS_ENTROPY_LOSS, in, 2, out, 2, NULL, 0));
  double ref = 0;
  for (int n = 0; n < 3; n++) {
    double s = 0;
    for (int k = 0; k < 4; k++) s += exp(x[n * 4 + k]);
    for (int k = 0; k < 4; k++) CHECK_NEAR(lp[n * 4 + k], x[n * 4 + k] - log(s), 1e-12);
    ref += -(x[n * 4 + lab[n]] - log(s)) / 3;
  }
  CHECK_NEAR(loss, ref, 1e-12);
  /* without log_prob output (scratch path), sum */
  dml_attr_t at = attr_s("reduction", "sum");
  double sum;
  dml_tensor_t o1 = tens(DML_DTYPE_F64, &sum, 0);
  CHECK_OK(run_op(DML_OP_SOFTMAX_CROSS_ENTROPY_LOSS, in, 2, &o1, 1, &at, 1));
  CHECK_NEAR(sum, ref * 3, 1e-12);
  dml_attr_t bad = attr_s("reduction", "max");
  CHECK_ERROR(run_op(DML_OP_SOFTMAX_CROSS_ENTROPY_LOSS, in, 2, &o1, 1, &bad, 1),
              DML_STATUS_INVALID_ARGUMENT, "reduction 'max' must be none, sum or mean");
}

/* ==== quantization ===================================================== */

static void test_quantize_linear(void) {
  /* per tensor, u8, ties to even, saturation */
  float x[8] = {0.0f, 1.0f, 3.0f, 5.0f, -2.0f, 1000.0f, -1000.0f, 2.9f};
  float s = 2.0f;
  uint8_t zp = 128, y[8];
  dml_tensor_t in[3] = {tens(DML_DTYPE_F32, x, 1, D(8)), tens(DML_DTYPE_F32, &s, 0),
                        tens(DML_DTYPE_U8, &zp, 0)};
  dml_tensor_t o = tens(DML_DTYPE_U8, y, 1, D(8));
  CHECK_OK(run_op(DML_OP_QUANTIZE_LINEAR, in, 3, &o, 1, NULL, 0));
  /* 0, 0.5->0, 1.5->2, 2.5->2, -1, 500->255, -500->0, 1.45->1 */
  const uint8_t ref[8] = {128, 128, 130, 130, 127, 255, 0, 129};
  for (int i = 0; i < 8; i++) CHECK(y[i] == ref[i]);
  /* per axis (axis 1 of [2, 3]), i8 */
  float xa[6] = {1, 2, 3, -4, -5, -600};
  float sa[3] = {1, 2, 4};
  int8_t za[3] = {0, 1, -1}, ya[6];
  dml_tensor_t ina[3] = {tens(DML_DTYPE_F32, xa, 2, D(2), D(3)),
                         tens(DML_DTYPE_F32, sa, 1, D(3)),
                         tens(DML_DTYPE_I8, za, 1, D(3))};
  dml_tensor_t oa = tens(DML_DTYPE_I8, ya, 2, D(2), D(3));
  CHECK_OK(run_op(DML_OP_QUANTIZE_LINEAR, ina, 3, &oa, 1, NULL, 0));
  const int8_t refa[6] = {1, 2, 0, -4, -1, -128};
  for (int i = 0; i < 6; i++) CHECK(ya[i] == refa[i]);
  /* and back */
  float yd[6];
  dml_tensor_t ind[3] = {oa, ina[1], ina[2]};
  dml_tensor_t od = tens(DML_DTYPE_F32, yd, 2, D(2), D(3));
  CHECK_OK(run_op(DML_OP_DEQUANTIZE_LINEAR, ind, 3, &od, 1, NULL, 0));
  const float refd[6] = {1, 2, 4, -4, -4, -508};
  for (int i = 0; i < 6; i++) CHECK_NEAR(yd[i], refd[i], 0);
  /* axis 0 does not match 3 scales */
  dml_attr_t ax = attr_i("axis", 0);
  CHECK_ERROR(run_op(DML_OP_QUANTIZE_LINEAR, ina, 3, &oa, 1, &ax, 1),
              DML_STATUS_INVALID_ARGUMENT, "scale has 3 elements, axis 0 has 2");
}

/* The spec's example (onnx__DynamicQuantizeLinear); 0.5 / scale is 25.5 in f32,
 * which rounds to even (26), so the last value is 179 as in ONNX's node test
 * data (the spec text says 178). */
static void test_dynamic_quantize(void) {
  float x[6] = {0, 2, -3, -2.5f, 1.34f, 0.5f};
  uint8_t y[6], zp;
  float sc;
  dml_tensor_t in = tens(DML_DTYPE_F32, x, 1, D(6));
  dml_tensor_t out[3] = {tens(DML_DTYPE_U8, y, 1, D(6)), tens(DML_DTYPE_F32, &sc, 0),
                         tens(DML_DTYPE_U8, &zp, 0)};
  CHECK_OK(run_op(DML_OP_DYNAMIC_QUANTIZE_LINEAR, &in, 1, out, 3, NULL, 0));
  CHECK_NEAR(sc, 5.0 / 255, 1e-7);
  CHECK(zp == 153);
  const uint8_t ref[6] = {153, 255, 0, 26, 221, 179}; /* as ONNX's test data */
  for (int i = 0; i < 6; i++) CHECK(y[i] == ref[i]);
}

/* MatMulInteger: the spec's example; QLinearMatMul against dequantize ->
 * matmul -> quantize in double. */
static void test_matmul_integer(void) {
  uint8_t a[12] = {11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0}, azp = 12;
  uint8_t b[6] = {1, 4, 2, 5, 3, 6}, bzp = 0;
  int32_t y[8];
  dml_tensor_t in[4] = {tens(DML_DTYPE_U8, a, 2, D(4), D(3)),
                        tens(DML_DTYPE_U8, b, 2, D(3), D(2)), tens(DML_DTYPE_U8, &azp, 0),
                        tens(DML_DTYPE_U8, &bzp, 0)};
  dml_tensor_t o = tens(DML_DTYPE_I32, y, 2, D(4), D(2));
  CHECK_OK(run_op(DML_OP_MAT_MUL_INTEGER, in, 4, &o, 1, NULL, 0));
  const int32_t ref[8] = {-38, -83, -44, -98, -50, -113, -56, -128};
  for (int i = 0; i < 8; i++) CHECK(y[i] == ref[i]);
  /* per-row A zero points, i8 B with per-column zero points */
  uint8_t azr[4] = {12, 0, 1, 2};
  int8_t bi[6] = {1, -4, 2, 5, -3, 6}, bzc[2] = {1, -1};
  in[1] = tens(DML_DTYPE_I8, bi, 2, D(3), D(2));
  in[2] = tens(DML_DTYPE_U8, azr, 1, D(4));
  in[3] = tens(DML_DTYPE_I8, bzc, 1, D(2));
  CHECK_OK(run_op(DML_OP_MAT_MUL_INTEGER, in, 4, &o, 1, NULL, 0));
  for (int m = 0; m < 4; m++)
    for (int n = 0; n < 2; n++) {
      int32_t acc = 0;
      for (int k = 0; k < 3; k++)
        acc += (a[m * 3 + k] - azr[m]) * (bi[k * 2 + n] - bzc[n]);
      CHECK(y[m * 2 + n] == acc);
    }
  /* QLinearMatMul, batched [2, 2, 3] x [3, 2] */
  uint8_t qa[12], qb[6] = {10, 200, 30, 40, 250, 0}, za = 100, zb = 120, zy = 50, qy[8];
  for (int i = 0; i < 12; i++) qa[i] = (uint8_t)(i * 21);
  float as = 0.02f, bs = 0.05f, ys = 0.3f;
  dml_tensor_t qi[8] = {tens(DML_DTYPE_U8, qa, 3, D(2), D(2), D(3)),
                        tens(DML_DTYPE_F32, &as, 0),
                        tens(DML_DTYPE_U8, &za, 0),
                        tens(DML_DTYPE_U8, qb, 2, D(3), D(2)),
                        tens(DML_DTYPE_F32, &bs, 0),
                        tens(DML_DTYPE_U8, &zb, 0),
                        tens(DML_DTYPE_F32, &ys, 0),
                        tens(DML_DTYPE_U8, &zy, 0)};
  dml_tensor_t qo = tens(DML_DTYPE_U8, qy, 3, D(2), D(2), D(2));
  CHECK_OK(run_op(DML_OP_QLINEAR_MAT_MUL, qi, 8, &qo, 1, NULL, 0));
  for (int bm = 0; bm < 4; bm++)
    for (int n = 0; n < 2; n++) {
      double acc = 0;
      for (int k = 0; k < 3; k++)
        acc += ((double)qa[bm * 3 + k] - za) * as * (((double)qb[k * 2 + n] - zb) * bs);
      double v = nearbyint(acc / ys) + zy;
      v = v < 0 ? 0 : v > 255 ? 255 : v;
      CHECK(qy[bm * 2 + n] == (uint8_t)v);
    }
}

/* ConvInteger (spec example with padding) and QLinearConv against a direct
 * loop. */
static void test_conv_integer(void) {
  uint8_t x[9] = {2, 3, 4, 5, 6, 7, 8, 9, 10}, xz = 1, w[4] = {1, 1, 1, 1};
  int32_t y[16];
  int64_t pads[4] = {1, 1, 1, 1};
  dml_tensor_t in[3] = {tens(DML_DTYPE_U8, x, 4, D(1), D(1), D(3), D(3)),
                        tens(DML_DTYPE_U8, w, 4, D(1), D(1), D(2), D(2)),
                        tens(DML_DTYPE_U8, &xz, 0)};
  dml_tensor_t o = tens(DML_DTYPE_I32, y, 4, D(1), D(1), D(4), D(4));
  dml_attr_t at = attr_ints("pads", pads, 4);
  CHECK_OK(run_op(DML_OP_CONV_INTEGER, in, 3, &o, 1, &at, 1));
  const int32_t ref[16] = {1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9};
  for (int i = 0; i < 16; i++) CHECK(y[i] == ref[i]);
  /* QLinearConv: 2 output channels, per-channel w scale/zero point, bias,
   * stride 2, SAME_UPPER on a 5x5 input */
  uint8_t qx[25], qw[18], qy[18], qxz = 3, qyz = 7;
  int8_t dummy = 0;
  (void)dummy;
  for (int i = 0; i < 25; i++) qx[i] = (uint8_t)((i * 37) % 256);
  for (int i = 0; i < 18; i++) qw[i] = (uint8_t)((i * 53) % 256);
  float xs = 0.01f, wsc[2] = {0.02f, 0.005f}, ysc = 0.7f;
  uint8_t wz[2] = {128, 100};
  int32_t bias[2] = {100, -2000};
  dml_tensor_t qi[9] = {tens(DML_DTYPE_U8, qx, 4, D(1), D(1), D(5), D(5)),
                        tens(DML_DTYPE_F32, &xs, 0),
                        tens(DML_DTYPE_U8, &qxz, 0),
                        tens(DML_DTYPE_U8, qw, 4, D(2), D(1), D(3), D(3)),
                        tens(DML_DTYPE_F32, wsc, 1, D(2)),
                        tens(DML_DTYPE_U8, wz, 1, D(2)),
                        tens(DML_DTYPE_F32, &ysc, 0),
                        tens(DML_DTYPE_U8, &qyz, 0),
                        tens(DML_DTYPE_I32, bias, 1, D(2))};
  dml_tensor_t qo = tens(DML_DTYPE_U8, qy, 4, D(1), D(2), D(3), D(3));
  int64_t strides[2] = {2, 2};
  dml_attr_t qa[2] = {attr_ints("strides", strides, 2), attr_s("auto_pad", "SAME_UPPER")};
  CHECK_OK(run_op(DML_OP_QLINEAR_CONV, qi, 9, &qo, 1, qa, 2));
  /* SAME_UPPER, in 5, stride 2, k 3: out 3, total pad 2, begin 1 */
  for (int m = 0; m < 2; m++)
    for (int oy = 0; oy < 3; oy++)
      for (int ox = 0; ox < 3; ox++) {
        int64_t acc = bias[m];
        for (int ky = 0; ky < 3; ky++)
          for (int kx = 0; kx < 3; kx++) {
            int iy = oy * 2 - 1 + ky, ix = ox * 2 - 1 + kx;
            if (iy < 0 || iy >= 5 || ix < 0 || ix >= 5) continue;
            acc += (int64_t)(qx[iy * 5 + ix] - qxz) * (qw[m * 9 + ky * 3 + kx] - wz[m]);
          }
        double v = nearbyint((double)acc * ((double)xs * wsc[m] / ysc)) + qyz;
        v = v < 0 ? 0 : v > 255 ? 255 : v;
        CHECK(qy[(m * 3 + oy) * 3 + ox] == (uint8_t)v);
      }
}

/* ==== signal ops ======================================================== */

static void test_windows(void) {
  int64_t n = 5;
  float w[5];
  dml_tensor_t in = tens(DML_DTYPE_I64, &n, 0);
  dml_tensor_t o = tens(DML_DTYPE_F32, w, 1, D(5));
  dml_attr_t sym = attr_i("periodic", 0);
  CHECK_OK(run_op(DML_OP_HANN_WINDOW, &in, 1, &o, 1, &sym, 1));
  const double hann[5] = {0, 0.5, 1, 0.5, 0}; /* symmetric: N1 = 4 */
  for (int i = 0; i < 5; i++) CHECK_NEAR(w[i], hann[i], 1e-7);
  CHECK_OK(run_op(DML_OP_HAMMING_WINDOW, &in, 1, &o, 1, NULL, 0));
  for (int i = 0; i < 5; i++)
    CHECK_NEAR(w[i], 25.0 / 46 - 21.0 / 46 * cos(2 * M_PI * i / 5), 1e-7);
  CHECK_OK(run_op(DML_OP_BLACKMAN_WINDOW, &in, 1, &o, 1, NULL, 0));
  for (int i = 0; i < 5; i++)
    CHECK_NEAR(w[i], 0.42 - 0.5 * cos(2 * M_PI * i / 5) + 0.08 * cos(4 * M_PI * i / 5),
               1e-7);
}

/* DFT against the definition, onesided and inverse round trip; STFT frames
 * equal windowed DFTs. */
static void test_dft_stft(void) {
  enum { B = 2, N = 6 };
  double x[B * N], y[B * N * 2], yi[B * N * 2], y1[B * 4 * 2];
  for (int i = 0; i < B * N; i++) x[i] = sin(i * 0.7) + 0.1 * i;
  dml_tensor_t in = tens(DML_DTYPE_F64, x, 3, D(B), D(N), D(1));
  dml_tensor_t o = tens(DML_DTYPE_F64, y, 3, D(B), D(N), D(2));
  CHECK_OK(run_op(DML_OP_DFT, &in, 1, &o, 1, NULL, 0));
  for (int b = 0; b < B; b++)
    for (int k = 0; k < N; k++) {
      double re = 0, im = 0;
      for (int j = 0; j < N; j++) {
        re += x[b * N + j] * cos(2 * M_PI * j * k / N);
        im -= x[b * N + j] * sin(2 * M_PI * j * k / N);
      }
      CHECK_NEAR(y[(b * N + k) * 2], re, 1e-12);
      CHECK_NEAR(y[(b * N + k) * 2 + 1], im, 1e-12);
    }
  dml_attr_t one = attr_i("onesided", 1);
  dml_tensor_t o1 = tens(DML_DTYPE_F64, y1, 3, D(B), D(4), D(2));
  CHECK_OK(run_op(DML_OP_DFT, &in, 1, &o1, 1, &one, 1));
  for (int b = 0; b < B; b++)
    for (int k = 0; k < 4; k++)
      CHECK_NEAR(y1[(b * 4 + k) * 2], y[(b * N + k) * 2], 1e-12);
  dml_attr_t inv = attr_i("inverse", 1);
  dml_tensor_t inc = tens(DML_DTYPE_F64, y, 3, D(B), D(N), D(2));
  dml_tensor_t oi = tens(DML_DTYPE_F64, yi, 3, D(B), D(N), D(2));
  CHECK_OK(run_op(DML_OP_DFT, &inc, 1, &oi, 1, &inv, 1));
  for (int i = 0; i < B * N; i++) {
    CHECK_NEAR(yi[i * 2], x[i], 1e-12);
    CHECK_NEAR(yi[i * 2 + 1], 0, 1e-12);
  }
  /* STFT: frame_length 4, step 2 -> frames 2, bins 3 */
  double win[4] = {0.5, 1, 1, 0.5}, s[B * 2 * 3 * 2];
  int64_t step = 2;
  dml_tensor_t si[3] = {in, tens(DML_DTYPE_I64, &step, 0),
                        tens(DML_DTYPE_F64, win, 1, D(4))};
  dml_tensor_t so = tens(DML_DTYPE_F64, s, 4, D(B), D(2), D(3), D(2));
  CHECK_OK(run_op(DML_OP_STFT, si, 3, &so, 1, NULL, 0));
  for (int b = 0; b < B; b++)
    for (int f = 0; f < 2; f++)
      for (int k = 0; k < 3; k++) {
        double re = 0, im = 0;
        for (int j = 0; j < 4; j++) {
          double v = x[b * N + f * 2 + j] * win[j];
          re += v * cos(2 * M_PI * j * k / 4);
          im -= v * sin(2 * M_PI * j * k / 4);
        }
        CHECK_NEAR(s[((b * 2 + f) * 3 + k) * 2], re, 1e-12);
        CHECK_NEAR(s[((b * 2 + f) * 3 + k) * 2 + 1], im, 1e-12);
      }
  /* onesided inverse (opset 20, numpy's irfft): the half spectrum y1 back
   * to the real signal [B, 2 * (4 - 1) = N, 1]; an odd dft_length 5 keeps
   * bins 0..2 (the definition's sum with the Hermitian extension) */
  dml_attr_t both[2] = {one, inv};
  double xr[B * N];
  dml_tensor_t h = tens(DML_DTYPE_F64, y1, 3, D(B), D(4), D(2));
  dml_tensor_t orr = tens(DML_DTYPE_F64, xr, 3, D(B), D(N), D(1));
  CHECK_OK(run_op(DML_OP_DFT, &h, 1, &orr, 1, both, 2));
  for (int i = 0; i < B * N; i++) CHECK_NEAR(xr[i], x[i], 1e-12);
  int64_t five = 5;
  dml_tensor_t hi[2] = {h, tens(DML_DTYPE_I64, &five, 0)};
  dml_tensor_t o5 = tens(DML_DTYPE_F64, xr, 3, D(B), D(5), D(1));
  CHECK_OK(run_op(DML_OP_DFT, hi, 2, &o5, 1, both, 2));
  for (int b = 0; b < B; b++)
    for (int t = 0; t < 5; t++) {
      double want = 0;
      for (int k = 0; k < 5; k++) {
        int kk = k <= 2 ? k : 5 - k; /* X[5-k] = conj(X[k]) */
        double re = y1[(b * 4 + kk) * 2], im = y1[(b * 4 + kk) * 2 + 1];
        if (k > 2) im = -im;
        want += re * cos(2 * M_PI * k * t / 5) - im * sin(2 * M_PI * k * t / 5);
      }
      CHECK_NEAR(xr[b * 5 + t], want / 5, 1e-12);
    }
}

int main(void) {
  RUN(test_lstm_bidirectional);
  RUN(test_lstm_reverse_input_forget_f64);
  RUN(test_gru);
  RUN(test_vmath);
  RUN(test_matmul_batched_threads);
  RUN(test_layer_norm_rows);
  RUN(test_rnn_fused_vs_f64);
  RUN(test_rnn_activations);
  RUN(test_rnn_errors);
  RUN(test_nll_loss);
  RUN(test_softmax_cross_entropy);
  RUN(test_quantize_linear);
  RUN(test_dynamic_quantize);
  RUN(test_matmul_integer);
  RUN(test_conv_integer);
  RUN(test_windows);
  RUN(test_dft_stft);
  return dml_test_finish();
}
