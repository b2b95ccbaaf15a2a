/*
 * test_cpu_wqgemm.c — MatMulWQ (runtime/cpu/cpu_wq_gemm.c: portable C,
 * AVX2+FMA, AVX-512 micro-kernels; 1 and 2 threads) against the
 * dequantize-then-GEMM form it replaces: the blocked DequantizeLinear
 * kernel, then the f32 MatMul kernel, on the same inputs.
 *
 * Tolerance: both sum the same f32 products (the weights dequantized by one
 * formula, (float)(q - z) * s) in different orders, so
 *   |y - y_ref| <= 1e-5 * sum_k |a[m, k] * dq(k, n)|   (+ 1e-37 for denormals)
 * (a worst-case f32 summation bound for K <= 100 is ~6e-6; random signs
 * measure ~1e-7); NaN and infinities must sit at the same elements.
 * Shapes: rows 1, 7, 32, 130 (past a 128-row task), K not a multiple of
 * the group (and a group longer than K), K past the 256-long K block, N odd
 * and not a multiple of the 32-column panel, N = 1, K = 0, rank-3 a; int8
 * (i8 symmetric, u8 with zero points) and int4 (with and without zero
 * points); NaN, +inf and -inf in activations; denormal scales.
 */
#include <math.h>
#include <stdio.h>

#include "cpu_internal.h"
#include "cpu_test_util.h"
#include "dml_wq.h"

typedef struct {
  int64_t M, K, N, bs;
  int bits;    /* 8 or 4 */
  int zp;      /* with zero points */
  int u8;      /* bits 8: u8 weights (with zp) */
  int special; /* NaN/inf in a, denormal scales */
  int rank3;   /* a as [2, M/2, K] */
} wcase_t;

static uint32_t g_s = 1u;
static uint32_t rnd(void) {
  g_s = g_s * 1664525u + 1013904223u;
  return g_s >> 8;
}

/* Runs one case with micro-kernel `isa` and `threads`; 0 when it agrees. */
static int run_case(const wcase_t *w, int isa, int threads) {
  g_s = 99u + (uint32_t)(w->M * 7 + w->K * 13 + w->N * 17 + w->bits + w->zp * 3);
  const int64_t M = w->M, K = w->K, N = w->N, G = K > 0 ? dml_wq_groups(K, w->bs) : 0;
  /* Quantized values q [K, N] (as ints), zero points z [G, N], scales s. */
  int32_t *q = malloc((size_t)(K * N + 1) * sizeof(int32_t));
  int32_t *z = malloc((size_t)(G * N + 1) * sizeof(int32_t));
  float *s = malloc((size_t)(G * N + 1) * sizeof(float));
  int sgn = w->bits == 4 ? 1 : !w->u8;
  for (int64_t i = 0; i < K * N; i++)
    q[i] = w->bits == 4 ? (int32_t)(rnd() % 16) - 8
           : sgn        ? (int32_t)(rnd() % 255) - 127
                        : (int32_t)(rnd() % 256);
  for (int64_t i = 0; i < G * N; i++) {
    z[i] = !w->zp         ? 0
           : w->bits == 4 ? (int32_t)(rnd() % 16) - 8
           : sgn          ? (int32_t)(rnd() % 256) - 128
                          : (int32_t)(rnd() % 256);
    s[i] = 0.001f * (float)(1 + (int)(rnd() % 100));
    if (w->special && i % 5 == 1) s[i] = 1e-40f; /* denormal scale */
  }
  float *a = frand_buf((size_t)(M * K));
  if (w->special && K > 3 && M > 3) {
    a[0 * K + 1] = NAN;
    a[1 * K + 2] = INFINITY;
    a[2 * K + 0] = -INFINITY;
    a[3 * K + K - 1] = INFINITY;
    a[3 * K + 0] = -INFINITY; /* row 3: +inf and -inf */
  }
  /* The op's operands (dml_wq.h) and DequantizeLinear's (x [K, N] blocked
   * along axis 0, x's dtype for the zero point). */
  const int64_t P = dml_wq_panels(N), rb = DML_WQ_ROW_BYTES(w->bits);
  uint8_t *wp = calloc((size_t)(P * K * rb + 1), 1), *zp = malloc((size_t)(G * N + 1));
  int8_t *xq = malloc((size_t)(K * N + 1));
  uint8_t *xz = malloc((size_t)(G * N + 1));
  for (int64_t k = 0; k < K; k++)
    for (int64_t n = 0; n < N; n++) {
      int32_t v = q[k * N + n];
      xq[k * N + n] = (int8_t)v;
      uint8_t *b = wp + dml_wq_offset(K, w->bits, k, n);
      if (w->bits == 4)
        *b |= (uint8_t)((v + 8) << dml_wq_shift(4, n));
      else
        *b = (uint8_t)v;
    }
  for (int64_t i = 0; i < G * N; i++) zp[i] = xz[i] = (uint8_t)z[i];
  dml_dtype_t wdt = w->bits == 4 ? DML_DTYPE_U8 : sgn ? DML_DTYPE_I8 : DML_DTYPE_U8;
  dml_dtype_t qdt = sgn ? DML_DTYPE_I8 : DML_DTYPE_U8;
  dml_dtype_t zdt = w->bits == 4 ? DML_DTYPE_I8 : wdt;
  float *y = malloc((size_t)(M * N + 1) * sizeof(float));
  float *yr = malloc((size_t)(M * N + 1) * sizeof(float));
  float *wf = malloc((size_t)(K * N + 1) * sizeof(float));
  int rc = 0;

  /* MatMulWQ */
  dml_tensor_t in[4] = {w->rank3 ? tens(DML_DTYPE_F32, a, 3, D(2), D(M / 2), D(K))
                                 : tens(DML_DTYPE_F32, a, 2, D(M), D(K)),
                        tens(wdt, wp, 3, D(P), D(K), D(rb)),
                        tens(DML_DTYPE_F32, s, 2, D(G), D(N)),
                        tens(zdt, zp, 2, D(G), D(N))};
  dml_tensor_t out = w->rank3 ? tens(DML_DTYPE_F32, y, 3, D(2), D(M / 2), D(N))
                              : tens(DML_DTYPE_F32, y, 2, D(M), D(N));
  dml_attr_t at[2] = {attr_i("bits", w->bits), attr_i("block_size", w->bs)};
  CHECK(dml_cpu_wq_set_isa(isa) == 0);
  dml_cpu_set_num_threads(threads);
  dml_status_t st = run_op(DML_OP_MAT_MUL_WQ, in, w->zp ? 4 : 3, &out, 1, at, 2);
  dml_cpu_set_num_threads(1);
  dml_cpu_wq_set_isa(-1);
  if (st) {
    char *msg = dml_status_format(st);
    fprintf(stderr, "MatMulWQ failed: %s\n", msg);
    free(msg);
    dml_status_free(st);
    rc = 1;
    goto out;
  }
  /* DequantizeLinear (blocked along K) then MatMul. */
  if (K > 0) {
    dml_tensor_t din[3] = {tens(qdt, xq, 2, D(K), D(N)),
                           tens(DML_DTYPE_F32, s, 2, D(G), D(N)),
                           tens(qdt, xz, 2, D(G), D(N))};
    dml_tensor_t dout = tens(DML_DTYPE_F32, wf, 2, D(K), D(N));
    dml_attr_t dat[2] = {attr_i("axis", 0), attr_i("block_size", w->bs)};
    CHECK_OK(run_op(DML_OP_DEQUANTIZE_LINEAR, din, w->zp ? 3 : 2, &dout, 1, dat, 2));
  }
  dml_tensor_t min[2] = {tens(DML_DTYPE_F32, a, 2, D(M), D(K)),
                         tens(DML_DTYPE_F32, wf, 2, D(K), D(N))};
  dml_tensor_t mout = tens(DML_DTYPE_F32, yr, 2, D(M), D(N));
  CHECK_OK(run_op(DML_OP_MATMUL, min, 2, &mout, 1, NULL, 0));
  double worst = 0;
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++) {
      double mag = 0;
      for (int64_t k = 0; k < K; k++) mag += fabs((double)a[m * K + k] * wf[k * N + n]);
      float u = y[m * N + n], r = yr[m * N + n];
      int bad;
      if (isnan(r) || isinf(r) || isnan(u) || isinf(u))
        bad = !(isnan(r) && isnan(u)) && !(u == r);
      else {
        double d = fabs((double)u - (double)r);
        bad = d > 1e-5 * mag + 1e-37;
        if (mag > 0 && d / mag > worst) worst = d / mag;
      }
      if (bad && rc < 3) {
        fprintf(stderr,
                "M=%lld K=%lld N=%lld bs=%lld bits=%d zp=%d u8=%d isa=%d threads=%d: "
                "y[%lld,%lld] = %.9g, dequantize+MatMul %.9g\n",
                (long long)M, (long long)K, (long long)N, (long long)w->bs, w->bits,
                w->zp, w->u8, isa, threads, (long long)m, (long long)n, u, r);
      }
      if (bad) rc++;
    }
  if (w->special && K > 3 && M > 3 && N > 0) {
    /* The rows with NaN, or +inf and -inf against nonzero weights, are NaN. */
    CHECK(isnan(y[0]));
    int anyinf = 0;
    for (int64_t n = 0; n < N; n++) anyinf |= isinf(y[1 * N + n]) || isnan(y[1 * N + n]);
    CHECK(anyinf);
  }
  printf("  M=%lld K=%lld N=%lld bs=%lld int%d%s%s isa=%d threads=%d: max rel err %.2e\n",
         (long long)M, (long long)K, (long long)N, (long long)w->bs, w->bits,
         w->zp ? " zp" : "", w->u8 ? " u8" : "", isa, threads, worst);
out:
  free(q);
  free(z);
  free(s);
  free(a);
  free(wp);
  free(zp);
  free(xq);
  free(xz);
  free(y);
  free(yr);
  free(wf);
  return rc;
}

/* Row independence: a row's output has the same bits alone (M = 1, 2, 3:
 * the few-rows path on AVX-512) as inside a batch of 9 (the tile path),
 * for each micro-kernel; what the serving layer's batching relies on. */
static void test_row_independence(void) {
  const int64_t K = 300, N = 200, bs = 32, G = dml_wq_groups(K, bs), P = dml_wq_panels(N);
  int isas[4] = {0, 1, 2, 3};
  for (int bits = 4; bits <= 8; bits += 4) {
    int64_t rb = DML_WQ_ROW_BYTES(bits);
    uint8_t *w = malloc((size_t)(P * K * rb));
    for (int64_t i = 0; i < P * K * rb; i++) w[i] = (uint8_t)rnd();
    float *s = frand_buf((size_t)(G * N)), *a = frand_buf((size_t)(9 * K));
    float *y9 = malloc((size_t)(9 * N) * sizeof(float)), *y = malloc((size_t)(3 * N) * 4);
    dml_attr_t at[2] = {attr_i("bits", bits), attr_i("block_size", bs)};
    for (int i = 0; i < 4; i++) {
      if (dml_cpu_wq_set_isa(isas[i]) != 0) continue;
      dml_tensor_t in[3] = {
          tens(DML_DTYPE_F32, a, 2, D(9), D(K)),
          tens(bits == 4 ? DML_DTYPE_U8 : DML_DTYPE_I8, w, 3, D(P), D(K), D(rb)),
          tens(DML_DTYPE_F32, s, 2, D(G), D(N))};
      dml_tensor_t out = tens(DML_DTYPE_F32, y9, 2, D(9), D(N));
      CHECK_OK(run_op(DML_OP_MAT_MUL_WQ, in, 3, &out, 1, at, 2));
      for (int64_t m = 1; m <= 3; m++) {
        in[0] = tens(DML_DTYPE_F32, a, 2, D(m), D(K));
        out = tens(DML_DTYPE_F32, y, 2, D(m), D(N));
        CHECK_OK(run_op(DML_OP_MAT_MUL_WQ, in, 3, &out, 1, at, 2));
        CHECK(memcmp(y, y9, (size_t)(m * N) * sizeof(float)) == 0);
      }
    }
    dml_cpu_wq_set_isa(-1);
    free(w);
    free(s);
    free(a);
    free(y9);
    free(y);
  }
}

/* Calls that do not fit the op's facts are errors, not garbage. */
static void bad_calls(void) {
  float a[8] = {0}, s[4] = {1, 1, 1, 1}, y[8];
  uint8_t w[128] = {0};
  dml_tensor_t in[3] = {tens(DML_DTYPE_F32, a, 2, D(2), D(4)),
                        tens(DML_DTYPE_I8, w, 3, D(1), D(4), D(32)),
                        tens(DML_DTYPE_F32, s, 2, D(2), D(2))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 2, D(2), D(2));
  dml_attr_t at[2] = {attr_i("bits", 8), attr_i("block_size", 2)};
  CHECK_OK(run_op(DML_OP_MAT_MUL_WQ, in, 3, &out, 1, at, 2));
  dml_attr_t bad_bits[2] = {attr_i("bits", 5), attr_i("block_size", 2)};
  dml_status_t st = run_op(DML_OP_MAT_MUL_WQ, in, 3, &out, 1, bad_bits, 2);
  CHECK(st && dml_status_code(st) == DML_STATUS_INVALID_ARGUMENT);
  dml_status_free(st);
  dml_attr_t bad_bs[2] = {attr_i("bits", 8), attr_i("block_size", 3)}; /* G would be 2 */
  in[2] = tens(DML_DTYPE_F32, s, 2, D(1), D(2));
  st = run_op(DML_OP_MAT_MUL_WQ, in, 3, &out, 1, bad_bs, 2);
  CHECK(st && dml_status_code(st) == DML_STATUS_INVALID_ARGUMENT);
  dml_status_free(st);
  in[2] = tens(DML_DTYPE_F32, s, 2, D(2), D(2));
  in[1] = tens(DML_DTYPE_I8, w, 2, D(4), D(2)); /* [K, N]: not the panel layout */
  st = run_op(DML_OP_MAT_MUL_WQ, in, 3, &out, 1, at, 2);
  CHECK(st && dml_status_code(st) == DML_STATUS_INVALID_ARGUMENT);
  dml_status_free(st);
  in[1] = tens(DML_DTYPE_I8, w, 3, D(1), D(4), D(32));
  dml_attr_t four[2] = {attr_i("bits", 4), attr_i("block_size", 2)}; /* w i8: not 4-bit */
  st = run_op(DML_OP_MAT_MUL_WQ, in, 3, &out, 1, four, 2);
  CHECK(st && dml_status_code(st) == DML_STATUS_UNIMPLEMENTED);
  dml_status_free(st);
}

static void test_against_dequantize_matmul(void) {
  const wcase_t cases[] = {
      {1, 40, 24, 32, 8, 0, 0, 0, 0},
      {1, 40, 24, 32, 4, 0, 0, 0, 0},
      {32, 100, 33, 16, 8, 0, 0, 0, 0},
      {32, 100, 33, 16, 4, 0, 0, 0, 0},
      {32, 100, 33, 16, 8, 1, 1, 0, 0},
      {32, 100, 33, 16, 4, 1, 0, 0, 0},
      {32, 100, 33, 16, 8, 1, 0, 0, 0},
      {7, 300, 67, 32, 4, 0, 0, 1, 0},
      {7, 300, 67, 32, 8, 0, 0, 1, 0},
      {130, 64, 31, 64, 4, 0, 0, 0, 0},
      {130, 64, 31, 64, 8, 1, 1, 0, 0},
      {1, 1, 1, 1, 8, 0, 0, 0, 0},
      {1, 1, 1, 1, 4, 1, 0, 0, 0},
      {3, 40, 5, 64, 4, 0, 0, 0, 0},
      {4, 0, 5, 32, 8, 0, 0, 0, 0},
      {32, 768, 96, 128, 4, 0, 0, 1, 1},
      {32, 768, 96, 32, 8, 0, 0, 0, 1},
      {1, 768, 3072, 32, 4, 0, 0, 0, 0},
      {128, 512, 520, 32, 4, 0, 0, 1, 0},
      {128, 512, 520, 32, 8, 1, 1, 0, 0},
      /* few rows (the AVX-512 4-panel path) with a panel left over and a tail */
      {2, 300, 160, 32, 4, 1, 0, 0, 0},
      {3, 520, 257, 64, 8, 1, 0, 0, 0},
      {1, 100, 290, 16, 8, 1, 1, 0, 0},
  };
  int isas[4] = {0, 1, 2, 3};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (int i = 0; i < 4; i++) {
      if (dml_cpu_wq_set_isa(isas[i]) != 0) {
        printf("  isa %d: not on this machine, SKIPPED\n", isas[i]);
        continue;
      }
      dml_cpu_wq_set_isa(-1);
      int big = cases[c].M * cases[c].K * cases[c].N >= 32000000;
      for (int t = 1; t <= (big ? 2 : 1); t++)
        CHECK(run_case(&cases[c], isas[i], t) == 0);
    }
}

int main(void) {
  RUN(test_against_dequantize_matmul);
  RUN(test_row_independence);
  RUN(bad_calls);
  return dml_test_finish();
}
