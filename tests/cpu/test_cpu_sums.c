/*
 * test_cpu_sums.c — the CPU's long sums and softmax numerics (issue 15)
 * against f64 references computed here:
 *   - LogSoftmax of large logits: rows of 4 x 1e8 give -log(4) (they gave
 *     0: x - (max + log(sum)) in f32 loses log(sum)), rows near 1e6 within
 *     2e-7 of the reference (the error was 6e-3); Softmax of the same;
 *   - sums of millions of f32 values (ReduceSum/ReduceMean over a row of
 *     2^22 + 3 and over the outer axis of [2^19 + 7, 5], GlobalAveragePool
 *     over 2048 x 2048, Softmax over a row of 2^20): relative error below
 *     1e-6 of the f64 sum of the same f32 values (a sequential f32 sum
 *     drifted by 0.7%);
 *   - NaN: ReduceMax/ReduceMin, ReduceLogSumExp and max-pooling propagate
 *     it (an infinite max is LogSumExp's result); edge rows of 1;
 * and prints the ReduceSum throughput over 2^24 values (a speed check by
 * eye: `ctest -V -R test_cpu_sums`).
 */
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "cpu_test_util.h"

static double rel_err(double a, double ref) {
  return fabs(a - ref) / fmax(fabs(ref), 1e-30);
}

static void test_log_softmax_large_logits(void) {
  const float bigs[3] = {1e8f, 1e6f, -3e7f};
  for (int b = 0; b < 3; b++) {
    float x[8], y[8], ys[8];
    for (int i = 0; i < 8; i++) x[i] = bigs[b] + (b == 1 ? 0.25f * (float)(i % 4) : 0.0f);
    dml_tensor_t in = tens(DML_DTYPE_F32, x, 2, D(2), D(4));
    dml_tensor_t out = tens(DML_DTYPE_F32, y, 2, D(2), D(4));
    dml_tensor_t outs = tens(DML_DTYPE_F32, ys, 2, D(2), D(4));
    dml_attr_t ax = attr_i("axis", 1);
    CHECK_OK(run_op(DML_OP_LOG_SOFTMAX, &in, 1, &out, 1, &ax, 1));
    CHECK_OK(run_op(DML_OP_SOFTMAX, &in, 1, &outs, 1, &ax, 1));
    for (int r = 0; r < 2; r++) {
      double m = -INFINITY, s = 0;
      for (int i = 0; i < 4; i++) m = fmax(m, x[r * 4 + i]);
      for (int i = 0; i < 4; i++) s += exp((double)x[r * 4 + i] - m);
      for (int i = 0; i < 4; i++) {
        double want = (double)x[r * 4 + i] - m - log(s);
        if (fabs(y[r * 4 + i] - want) > 2e-7 || fabs(ys[r * 4 + i] - exp(want)) > 2e-7)
          fprintf(stderr, "  logits %g: (log)softmax[%d] = %.9g, %.9g, want %.9g\n",
                  (double)bigs[b], r * 4 + i, y[r * 4 + i], ys[r * 4 + i], want);
        CHECK(fabs(y[r * 4 + i] - want) <= 2e-7);
        CHECK(fabs(ys[r * 4 + i] - exp(want)) <= 2e-7);
      }
    }
    if (b == 0) CHECK(fabs(y[0] + log(4.0)) <= 2e-7);
  }
}

/* x[i] in [0.5, 1.5): every term positive, so the relative error of the
 * sum is the relative error against sum |x|. */
static float *positive_buf(int64_t n) {
  float *p = frand_buf((size_t)n);
  for (int64_t i = 0; p && i < n; i++) p[i] = 1.0f + 0.5f * p[i];
  return p;
}

static void test_long_sums(void) {
  const int64_t n = (1 << 22) + 3;
  float *x = positive_buf(n);
  if (!x) return;
  double ref = 0;
  for (int64_t i = 0; i < n; i++) ref += x[i];
  float s = 0, mean = 0;
  dml_tensor_t in = tens(DML_DTYPE_F32, x, 1, n);
  dml_tensor_t out = tens(DML_DTYPE_F32, &s, 0), outm = tens(DML_DTYPE_F32, &mean, 0);
  dml_attr_t kd = attr_i("keepdims", 0);
  CHECK_OK(run_op(DML_OP_REDUCE_SUM, &in, 1, &out, 1, &kd, 1));
  CHECK_OK(run_op(DML_OP_REDUCE_MEAN, &in, 1, &outm, 1, &kd, 1));
  printf("ReduceSum over %lld: relative error %.2e; ReduceMean %.2e\n", (long long)n,
         rel_err(s, ref), rel_err(mean, ref / (double)n));
  CHECK(rel_err(s, ref) <= 1e-6);
  CHECK(rel_err(mean, ref / (double)n) <= 1e-6);
  /* the outer axis of [2^20 + 7, 5]: column sums */
  const int64_t R = (1 << 19) + 7, C = 5;
  float cs[5], cm[5];
  double cref[5] = {0};
  for (int64_t r = 0; r < R; r++)
    for (int64_t c = 0; c < C; c++) cref[c] += x[r * C + c];
  dml_tensor_t in2 = tens(DML_DTYPE_F32, x, 2, R, C);
  dml_tensor_t o2 = tens(DML_DTYPE_F32, cs, 1, C), o3 = tens(DML_DTYPE_F32, cm, 1, C);
  int64_t ax0[1] = {0};
  dml_attr_t a2[2] = {attr_ints("axes", ax0, 1), kd};
  CHECK_OK(run_op(DML_OP_REDUCE_SUM, &in2, 1, &o2, 1, a2, 2));
  CHECK_OK(run_op(DML_OP_REDUCE_MEAN, &in2, 1, &o3, 1, a2, 2));
  double worst = 0;
  for (int64_t c = 0; c < C; c++) {
    worst = fmax(worst, rel_err(cs[c], cref[c]));
    worst = fmax(worst, rel_err(cm[c], cref[c] / (double)R));
  }
  printf("ReduceSum/Mean over axis 0 of [%lld, 5]: relative error %.2e\n", (long long)R,
         worst);
  CHECK(worst <= 1e-6);
  /* GlobalAveragePool over 2048 x 2048 */
  float gp = 0;
  double gref = 0;
  for (int64_t i = 0; i < 2048 * 2048; i++) gref += x[i];
  gref /= 2048.0 * 2048.0;
  dml_tensor_t in3 = tens(DML_DTYPE_F32, x, 4, D(1), D(1), D(2048), D(2048));
  dml_tensor_t o4 = tens(DML_DTYPE_F32, &gp, 4, D(1), D(1), D(1), D(1));
  CHECK_OK(run_op(DML_OP_GLOBAL_AVERAGE_POOL, &in3, 1, &o4, 1, NULL, 0));
  printf("GlobalAveragePool over 2048 x 2048: relative error %.2e\n", rel_err(gp, gref));
  CHECK(rel_err(gp, gref) <= 1e-6);
  free(x);
}

/* Softmax over a row of 2^20 (values in [0.5, 1.5)): each output within
 * 1e-6 relative of the f64 softmax. */
static void test_softmax_long_row(void) {
  const int64_t n = 1 << 20;
  float *x = positive_buf(n), *y = malloc(sizeof(float) * (size_t)n);
  if (!x || !y) goto out;
  double m = -INFINITY, s = 0, worst = 0;
  for (int64_t i = 0; i < n; i++) m = fmax(m, x[i]);
  for (int64_t i = 0; i < n; i++) s += exp((double)x[i] - m);
  dml_tensor_t in = tens(DML_DTYPE_F32, x, 2, D(1), n),
               o = tens(DML_DTYPE_F32, y, 2, D(1), n);
  dml_attr_t ax = attr_i("axis", 1);
  CHECK_OK(run_op(DML_OP_SOFTMAX, &in, 1, &o, 1, &ax, 1));
  for (int64_t i = 0; i < n; i++)
    worst = fmax(worst, rel_err(y[i], exp((double)x[i] - m) / s));
  printf("Softmax over a row of %lld: relative error %.2e\n", (long long)n, worst);
  CHECK(worst <= 1e-6);
out:
  free(x);
  free(y);
}

/* Softmax and LogSoftmax of 2000 rows of 64 (rows spread over the pool at
 * 2 threads), with NaN, inf, -0 and huge values in some rows: the same bits
 * at 1 and 2 threads, and within 2e-6 relative of the f64 softmax on the
 * finite rows (values in [-10, 10)). */
static void test_softmax_rows_threads(void) {
  enum { R = 2000, N = 64 };
  float *x = malloc(sizeof(float) * R * N), *y = malloc(sizeof(float) * R * N * 4);
  if (!x || !y) goto out;
  unsigned rng = 3u;
  for (int i = 0; i < R * N; i++) {
    rng = rng * 1664525u + 1013904223u;
    x[i] = ((float)(rng >> 8) / 16777216.0f - 0.5f) * 20.0f;
  }
  x[5 * N] = NAN, x[7 * N + 3] = NAN, x[9 * N + 1] = INFINITY, x[11 * N + 2] = -INFINITY;
  x[13 * N] = -0.0f, x[15 * N + 4] = 3e38f, x[17 * N + 5] = -3e38f;
  dml_tensor_t in = tens(DML_DTYPE_F32, x, 2, D(R), D(N));
  dml_attr_t ax = attr_i("axis", 1);
  for (int threads = 1; threads <= 2; threads++) {
    dml_cpu_set_num_threads(threads);
    for (int lsm = 0; lsm < 2; lsm++) {
      dml_tensor_t o =
          tens(DML_DTYPE_F32, y + ((threads - 1) * 2 + lsm) * R * N, 2, D(R), D(N));
      CHECK_OK(run_op(lsm ? DML_OP_LOG_SOFTMAX : DML_OP_SOFTMAX, &in, 1, &o, 1, &ax, 1));
    }
  }
  dml_cpu_set_num_threads(1);
  CHECK(memcmp(y, y + 2 * R * N, sizeof(float) * 2 * R * N) == 0);
  double worst = 0;
  for (int r = 20; r < R; r++) {
    double m = -INFINITY, s = 0;
    for (int i = 0; i < N; i++) m = fmax(m, x[r * N + i]);
    for (int i = 0; i < N; i++) s += exp((double)x[r * N + i] - m);
    for (int i = 0; i < N; i++)
      worst = fmax(worst, rel_err(y[r * N + i], exp((double)x[r * N + i] - m) / s));
  }
  printf("Softmax of %d rows of %d at 1 and 2 threads: same bits, relative error %.2e\n",
         R, N, worst);
  /* x - max rounds in f32: up to 20 * 2^-25 absolute in the exponent here,
   * 1.2e-6 relative in the result */
  CHECK(worst <= 2e-6);
  CHECK(isnan(y[5 * N]) && isnan(y[7 * N])); /* a NaN in the row: all NaN */
out:
  free(x);
  free(y);
}

/* NaN propagates through ReduceMax/ReduceMin (the generic and the f32
 * paths), MaxPool and GlobalMaxPool; rows of 1. */
static void test_nan_and_edges(void) {
  float x[6] = {NAN, 1.0f, 2.0f, NAN, 3.0f, 4.0f}, y[3];
  dml_tensor_t in = tens(DML_DTYPE_F32, x, 2, D(3), D(2)),
               o = tens(DML_DTYPE_F32, y, 1, D(3));
  int64_t ax1[1] = {1};
  dml_attr_t a[2] = {attr_ints("axes", ax1, 1), attr_i("keepdims", 0)};
  CHECK_OK(run_op(DML_OP_REDUCE_MAX, &in, 1, &o, 1, a, 2));
  CHECK(isnan(y[0]) && isnan(y[1]) && y[2] == 4.0f);
  CHECK_OK(run_op(DML_OP_REDUCE_MIN, &in, 1, &o, 1, a, 2));
  CHECK(isnan(y[0]) && isnan(y[1]) && y[2] == 3.0f);
  CHECK_OK(run_op(DML_OP_REDUCE_LOG_SUM_EXP, &in, 1, &o, 1, a, 2));
  CHECK(isnan(y[0]) && isnan(y[1]) && fabs(y[2] - log(exp(3.0) + exp(4.0))) <= 1e-6);
  float inf2[4] = {-INFINITY, -INFINITY, INFINITY, 1.0f};
  dml_tensor_t ii = tens(DML_DTYPE_F32, inf2, 2, D(2), D(2)),
               io = tens(DML_DTYPE_F32, y, 1, D(2));
  CHECK_OK(run_op(DML_OP_REDUCE_LOG_SUM_EXP, &ii, 1, &io, 1, a, 2));
  CHECK(y[0] == -INFINITY && y[1] == INFINITY);
  float p[8] = {1, NAN, 3, 4, 5, 6, 7, 8}, mp[2], gm[2];
  dml_tensor_t pin = tens(DML_DTYPE_F32, p, 4, D(1), D(2), D(2), D(2));
  dml_tensor_t mpo = tens(DML_DTYPE_F32, mp, 4, D(1), D(2), D(1), D(1));
  dml_tensor_t gmo = tens(DML_DTYPE_F32, gm, 4, D(1), D(2), D(1), D(1));
  int64_t k2[2] = {2, 2};
  dml_attr_t ka = attr_ints("kernel_shape", k2, 2);
  CHECK_OK(run_op(DML_OP_MAX_POOL, &pin, 1, &mpo, 1, &ka, 1));
  CHECK(isnan(mp[0]) && mp[1] == 8.0f);
  CHECK_OK(run_op(DML_OP_GLOBAL_MAX_POOL, &pin, 1, &gmo, 1, NULL, 0));
  CHECK(isnan(gm[0]) && gm[1] == 8.0f);
  /* rows of 1: ReduceSum over an axis of 1, Softmax / LogSoftmax of one */
  float one[3] = {5.0f, -INFINITY, NAN}, r1[3], sm[3], ls[3];
  dml_tensor_t i1 = tens(DML_DTYPE_F32, one, 2, D(3), D(1));
  dml_tensor_t o1 = tens(DML_DTYPE_F32, r1, 1, D(3));
  dml_tensor_t osm = tens(DML_DTYPE_F32, sm, 2, D(3), D(1)),
               ols = tens(DML_DTYPE_F32, ls, 2, D(3), D(1));
  CHECK_OK(run_op(DML_OP_REDUCE_SUM, &i1, 1, &o1, 1, a, 2));
  CHECK(r1[0] == 5.0f && r1[1] == -INFINITY && isnan(r1[2]));
  dml_attr_t ax = attr_i("axis", 1);
  CHECK_OK(run_op(DML_OP_SOFTMAX, &i1, 1, &osm, 1, &ax, 1));
  CHECK_OK(run_op(DML_OP_LOG_SOFTMAX, &i1, 1, &ols, 1, &ax, 1));
  CHECK(sm[0] == 1.0f && ls[0] == 0.0f && isnan(sm[1]) && isnan(ls[2]));
}

/* Throughput of ReduceSum over 2^24 values (printed, not checked). */
static void test_sum_speed(void) {
  const int64_t n = 1 << 24;
  float *x = positive_buf(n), s = 0;
  if (!x) return;
  dml_tensor_t in = tens(DML_DTYPE_F32, x, 1, n), out = tens(DML_DTYPE_F32, &s, 0);
  dml_attr_t kd = attr_i("keepdims", 0);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int r = 0; r < 10; r++)
    CHECK_OK(run_op(DML_OP_REDUCE_SUM, &in, 1, &out, 1, &kd, 1));
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double sec = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  printf("ReduceSum over 2^24 f32: %.2f ms per run, %.1f GB/s\n", sec * 100.0,
         10.0 * 4.0 * (double)n / sec / 1e9);
  free(x);
}

int main(void) {
  RUN(test_log_softmax_large_logits);
  RUN(test_long_sums);
  RUN(test_softmax_long_row);
  RUN(test_softmax_rows_threads);
  RUN(test_nan_and_edges);
  RUN(test_sum_speed);
  return dml_test_finish();
}
