/* Tests for Gemm, MatMul, Conv and ConvTranspose against naive loops
 * (computed in double). Tolerance: 1e-4 absolute on values of magnitude
 * ~sqrt(K) (f32 accumulation of K terms in [-1, 1]). */
#include <time.h> /* nanosleep */

#include "cpu_internal.h" /* dml_cpu_sgemm */
#include "cpu_test_util.h"

/* ---- Gemm ------------------------------------------------------------- */

static void naive_gemm(int ta, int tb, int64_t M, int64_t N, int64_t K, double alpha,
                       const float *A, const float *B, double beta, const float *C,
                       int c_kind, float *Y) {
  /* c_kind: 0 none, 1 full MxN, 2 row [N], 3 column [M,1], 4 scalar */
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double s = 0;
      for (int64_t k = 0; k < K; k++) {
        double a = ta ? A[k * M + i] : A[i * K + k];
        double b = tb ? B[j * K + k] : B[k * N + j];
        s += a * b;
      }
      double cv = 0;
      if (c_kind == 1) cv = C[i * N + j];
      if (c_kind == 2) cv = C[j];
      if (c_kind == 3) cv = C[i];
      if (c_kind == 4) cv = C[0];
      Y[i * N + j] = (float)(alpha * s + (c_kind ? beta * cv : 0));
    }
}

static void gemm_case(int64_t M, int64_t N, int64_t K, int ta, int tb, int c_kind,
                      double alpha, double beta) {
  float *A = frand_buf((size_t)(M * K)), *B = frand_buf((size_t)(K * N));
  float *C = frand_buf((size_t)(M * N));
  float *Y = (float *)malloc((size_t)(M * N + 1) * 4),
        *R = (float *)malloc((size_t)(M * N + 1) * 4);
  for (int64_t i = 0; i < M * N; i++) Y[i] = NAN; /* output garbage must not leak */
  dml_tensor_t in[3];
  in[0] =
      ta ? tens(DML_DTYPE_F32, A, 2, D(K), D(M)) : tens(DML_DTYPE_F32, A, 2, D(M), D(K));
  in[1] =
      tb ? tens(DML_DTYPE_F32, B, 2, D(N), D(K)) : tens(DML_DTYPE_F32, B, 2, D(K), D(N));
  switch (c_kind) {
    case 1: in[2] = tens(DML_DTYPE_F32, C, 2, D(M), D(N)); break;
    case 2: in[2] = tens(DML_DTYPE_F32, C, 1, D(N)); break;
    case 3: in[2] = tens(DML_DTYPE_F32, C, 2, D(M), D(1)); break;
    case 4: in[2] = tens(DML_DTYPE_F32, C, 0); break;
    default: break;
  }
  dml_tensor_t out = tens(DML_DTYPE_F32, Y, 2, D(M), D(N));
  dml_attr_t at[4] = {attr_i("transA", ta), attr_i("transB", tb), attr_f("alpha", alpha),
                      attr_f("beta", beta)};
  CHECK_OK(run_op(DML_OP_GEMM, in, c_kind ? 3 : 2, &out, 1, at, 4));
  naive_gemm(ta, tb, M, N, K, alpha, A, B, beta, C, c_kind, R);
  double err = max_abs_diff(Y, R, (size_t)(M * N));
  if (!(err <= 1e-4))
    fprintf(stderr, "gemm M=%lld N=%lld K=%lld ta=%d tb=%d c=%d: err %g\n", (long long)M,
            (long long)N, (long long)K, ta, tb, c_kind, err);
  CHECK(err <= 1e-4);
  free(A), free(B), free(C), free(Y), free(R);
}

static void test_gemm_sizes(void) {
  static const int64_t sz[][3] = {{1, 1, 1},     {7, 13, 5},  {65, 130, 33},
                                  {2, 40, 300},  {1, 100, 7}, {96, 32, 256},
                                  {33, 17, 513}, {9, 2049, 3}};
  for (size_t s = 0; s < sizeof sz / sizeof sz[0]; s++)
    for (int ta = 0; ta < 2; ta++)
      for (int tb = 0; tb < 2; tb++)
        gemm_case(sz[s][0], sz[s][1], sz[s][2], ta, tb, (int)((s + (size_t)ta) % 5), 1.0,
                  1.0);
  gemm_case(7, 13, 5, 0, 0, 1, 0.5, 2.0);
  gemm_case(65, 130, 33, 1, 0, 2, -1.5, 0.25);
  gemm_case(1, 130, 33, 0, 1, 1, 2.0, 0.0);
}

static void test_gemm_threads(void) {
  dml_cpu_set_num_threads(3);
  CHECK(dml_cpu_get_num_threads() == 3);
  gemm_case(65, 130, 33, 0, 0, 1, 1.0, 1.0);
  gemm_case(200, 300, 100, 1, 1, 2, 1.0, 1.0);
  gemm_case(2, 3000, 100, 0, 1, 0, 1.0, 1.0);
  gemm_case(130, 20, 600, 0, 0, 0, 1.0, 1.0);
  dml_cpu_set_num_threads(1);
  CHECK(dml_cpu_get_num_threads() == 1);
}

/* Row independence (docs/serving.md relies on it): row r of a batch of M
 * rows equals, bit for bit, the same row computed alone (M = 1) and inside
 * another batch, for every M (unpacked M <= 2 path, edge and full
 * micro-kernel tiles), K across several KC blocks, transposes, alpha/beta,
 * and one or three threads. Exact comparison (memcmp): no tolerance. */
static void rows_case(int64_t M, int64_t N, int64_t K, int ta, int tb, int c_kind,
                      double alpha, double beta) {
  float *A = frand_buf((size_t)(M * K)), *B = frand_buf((size_t)(K * N));
  float *C = frand_buf((size_t)(M * N));
  float *Y = (float *)malloc((size_t)(M * N) * 4), *Y1 = (float *)malloc((size_t)N * 4);
  float *A1 = (float *)malloc((size_t)K * 4);
  dml_attr_t at[4] = {attr_i("transA", ta), attr_i("transB", tb), attr_f("alpha", alpha),
                      attr_f("beta", beta)};
  dml_tensor_t in[3];
  in[0] =
      ta ? tens(DML_DTYPE_F32, A, 2, D(K), D(M)) : tens(DML_DTYPE_F32, A, 2, D(M), D(K));
  in[1] =
      tb ? tens(DML_DTYPE_F32, B, 2, D(N), D(K)) : tens(DML_DTYPE_F32, B, 2, D(K), D(N));
  in[2] = c_kind == 1 ? tens(DML_DTYPE_F32, C, 2, D(M), D(N))
                      : tens(DML_DTYPE_F32, C, 1, D(N));
  dml_tensor_t out = tens(DML_DTYPE_F32, Y, 2, D(M), D(N));
  CHECK_OK(run_op(DML_OP_GEMM, in, c_kind ? 3 : 2, &out, 1, at, 4));
  int bad = 0;
  for (int64_t r = 0; r < M; r++) {
    for (int64_t k = 0; k < K; k++) A1[k] = ta ? A[k * M + r] : A[r * K + k];
    dml_tensor_t in1[3] = {
        ta ? tens(DML_DTYPE_F32, A1, 2, D(K), D(1))
           : tens(DML_DTYPE_F32, A1, 2, D(1), D(K)),
        in[1], c_kind == 1 ? tens(DML_DTYPE_F32, C + r * N, 2, D(1), D(N)) : in[2]};
    dml_tensor_t out1 = tens(DML_DTYPE_F32, Y1, 2, D(1), D(N));
    CHECK_OK(run_op(DML_OP_GEMM, in1, c_kind ? 3 : 2, &out1, 1, at, 4));
    if (memcmp(Y1, Y + r * N, (size_t)N * 4) != 0) bad++;
  }
  /* The same product without scratch takes the unpacked path for every M
   * (the fall-back for scratch sized for another shape): same bits. */
  float *Y2 = (float *)malloc((size_t)(M * N) * 4);
  for (int64_t r = 0; r < M; r++)
    memcpy(Y2 + r * N, c_kind == 1 ? C + r * N : C, (size_t)N * 4);
  dml_cpu_sgemm(ta, tb, M, N, K, (float)alpha, A, ta ? M : K, B, tb ? K : N,
                c_kind ? (float)beta : 0.0f, Y2, N, NULL, 0);
  if (memcmp(Y2, Y, (size_t)(M * N) * 4) != 0) bad++;
  free(Y2);
  if (bad)
    fprintf(stderr, "gemm rows M=%lld N=%lld K=%lld ta=%d tb=%d c=%d: %d rows differ\n",
            (long long)M, (long long)N, (long long)K, ta, tb, c_kind, bad);
  CHECK(bad == 0);
  free(A), free(B), free(C), free(Y), free(Y1), free(A1);
}

static void test_gemm_rows_independent(void) {
  static const int64_t ms[] = {1, 2, 3, 5, 8, 9, 17, 33, 100};
  for (int threads = 1; threads <= 3; threads += 2) {
    dml_cpu_set_num_threads(threads);
    for (size_t m = 0; m < sizeof ms / sizeof ms[0]; m++)
      for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
          rows_case(ms[m], 37, 300, ta, tb, 2, 1.0, 1.0);
          rows_case(ms[m], 70, 600, ta, tb, 1, 0.5, 0.3);
        }
    rows_case(64, 256, 784, 0, 1, 2, 1.0, 1.0); /* fashion_mlp's first layer */
    rows_case(40, 3000, 100, 0, 0, 0, 1.0, 0.0);
  }
  dml_cpu_set_num_threads(1);
}

/* The pool: many short jobs back to back (late workers of a job must not
 * take tasks of the next), each task run exactly once, on 2 and 4
 * threads. */
typedef struct {
  int counts[64];
  int64_t n;
  int tid_seen; /* a task ran on a worker (test_pool_backoff) */
} pool_job_t;
static void pool_task(void *ctx, int64_t i, int tid) {
  pool_job_t *j = (pool_job_t *)ctx;
  (void)tid;
  if (i >= 0 && i < j->n) __atomic_fetch_add(&j->counts[i], 1, __ATOMIC_RELAXED);
}
static void test_pool_jobs(void) {
  for (int threads = 2; threads <= 4; threads += 2) {
    dml_cpu_set_num_threads(threads);
    int bad = 0;
    for (int rep = 0; rep < 20000; rep++) {
      pool_job_t j;
      memset(&j, 0, sizeof j);
      j.n = 1 + rep % 37;
      dml_cpu_parallel_for(j.n, threads, pool_task, &j);
      for (int64_t i = 0; i < j.n; i++) bad += j.counts[i] != 1;
    }
    CHECK(bad == 0);
  }
  dml_cpu_set_num_threads(1);
}

/* The straggler back-off: a job whose worker task sleeps 20 ms (the
 * caller's 1 ms, CPU time about 0) ends far later than the caller alone would have,
 * so the next 4 jobs run on the caller alone (every task on tid 0), and
 * every task still runs once. */
static void slow_worker_task(void *ctx, int64_t i, int tid) {
  pool_job_t *j = (pool_job_t *)ctx;
  j->counts[i]++;
  /* 1 ms on the caller, so that an awake worker takes tasks */
  struct timespec ts = {0, (tid != 0 ? 20 : 1) * 1000 * 1000};
  if (tid != 0) j->tid_seen = 1;
  nanosleep(&ts, NULL);
}

static void test_pool_backoff(void) {
  int was = dml_cpu_pool_backoff_set(1);
  dml_cpu_set_num_threads(2);
  pool_job_t j;
  memset(&j, 0, sizeof j);
  j.n = 2;
  dml_cpu_parallel_for(j.n, 2, slow_worker_task, &j); /* lost: back off */
  CHECK(j.counts[0] == 1 && j.counts[1] == 1);
  for (int rep = 0; rep < 4; rep++) {
    memset(&j, 0, sizeof j);
    j.n = 8;
    dml_cpu_parallel_for(j.n, 2, slow_worker_task, &j);
    CHECK(!j.tid_seen);
    for (int64_t i = 0; i < j.n; i++) CHECK(j.counts[i] == 1);
  }
  dml_cpu_set_num_threads(1);
  dml_cpu_pool_backoff_set(was);
}

static void test_gemm_f64_i32(void) {
  double a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1}, y[4];
  dml_tensor_t in[2] = {tens(DML_DTYPE_F64, a, 2, D(2), D(3)),
                        tens(DML_DTYPE_F64, b, 2, D(3), D(2))};
  dml_tensor_t out = tens(DML_DTYPE_F64, y, 2, D(2), D(2));
  CHECK_OK(run_op(DML_OP_GEMM, in, 2, &out, 1, NULL, 0));
  CHECK(y[0] == 4 && y[1] == 5 && y[2] == 10 && y[3] == 11);
  int32_t ai[6] = {1, 2, 3, 4, 5, 6}, bi[6] = {1, 0, 0, 1, 1, 1}, yi[4];
  dml_tensor_t in2[2] = {tens(DML_DTYPE_I32, ai, 2, D(2), D(3)),
                         tens(DML_DTYPE_I32, bi, 2, D(3), D(2))};
  dml_tensor_t out2 = tens(DML_DTYPE_I32, yi, 2, D(2), D(2));
  CHECK_OK(run_op(DML_OP_MATMUL, in2, 2, &out2, 1, NULL, 0));
  CHECK(yi[0] == 4 && yi[1] == 5 && yi[2] == 10 && yi[3] == 11);
}

static void test_gemm_errors(void) {
  float a[6], b[6], y[4];
  dml_tensor_t in[2] = {tens(DML_DTYPE_F32, a, 2, D(2), D(3)),
                        tens(DML_DTYPE_F32, b, 2, D(2), D(3))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 2, D(2), D(2));
  CHECK_ERROR(run_op(DML_OP_GEMM, in, 2, &out, 1, NULL, 0), DML_STATUS_INVALID_ARGUMENT,
              "[2,3]");
  uint8_t ab[4] = {0}, bb[4] = {0}, yb[4];
  dml_tensor_t in2[2] = {tens(DML_DTYPE_BOOL, ab, 2, D(2), D(2)),
                         tens(DML_DTYPE_BOOL, bb, 2, D(2), D(2))};
  dml_tensor_t out2 = tens(DML_DTYPE_BOOL, yb, 2, D(2), D(2));
  CHECK_ERROR(run_op(DML_OP_MATMUL, in2, 2, &out2, 1, NULL, 0), DML_STATUS_UNIMPLEMENTED,
              "rt.cpu.MatMul");
}

/* ---- MatMul ----------------------------------------------------------- */

static void test_matmul_batched(void) {
  /* A [2,1,3,4] x B [3,4,5] -> [2,3,3,5] */
  float *A = frand_buf(2 * 3 * 4), *B = frand_buf(3 * 4 * 5);
  float Y[2 * 3 * 3 * 5], R[2 * 3 * 3 * 5];
  for (int b0 = 0; b0 < 2; b0++)
    for (int b1 = 0; b1 < 3; b1++)
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++) {
          double s = 0;
          for (int k = 0; k < 4; k++)
            s += (double)A[b0 * 12 + i * 4 + k] * B[b1 * 20 + k * 5 + j];
          R[((b0 * 3 + b1) * 3 + i) * 5 + j] = (float)s;
        }
  dml_tensor_t in[2] = {tens(DML_DTYPE_F32, A, 4, D(2), D(1), D(3), D(4)),
                        tens(DML_DTYPE_F32, B, 3, D(3), D(4), D(5))};
  dml_tensor_t out = tens(DML_DTYPE_F32, Y, 4, D(2), D(3), D(3), D(5));
  CHECK_OK(run_op(DML_OP_MATMUL, in, 2, &out, 1, NULL, 0));
  CHECK(max_abs_diff(Y, R, 90) < 1e-5);
  /* folded batches: A [2,3,4] x B [4,5] */
  float Y2[30], R2[30];
  for (int b = 0; b < 2; b++)
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 5; j++) {
        double s = 0;
        for (int k = 0; k < 4; k++) s += (double)A[b * 12 + i * 4 + k] * B[k * 5 + j];
        R2[(b * 3 + i) * 5 + j] = (float)s;
      }
  dml_tensor_t in2[2] = {tens(DML_DTYPE_F32, A, 3, D(2), D(3), D(4)),
                         tens(DML_DTYPE_F32, B, 2, D(4), D(5))};
  dml_tensor_t out2 = tens(DML_DTYPE_F32, Y2, 3, D(2), D(3), D(5));
  CHECK_OK(run_op(DML_OP_MATMUL, in2, 2, &out2, 1, NULL, 0));
  CHECK(max_abs_diff(Y2, R2, 30) < 1e-5);
  free(A), free(B);
}

static void test_matmul_1d(void) {
  float a[3] = {1, 2, 3}, b[6] = {1, 2, 3, 4, 5, 6}, y[2], s;
  /* [3] x [3,2] -> [2] */
  dml_tensor_t in[2] = {tens(DML_DTYPE_F32, a, 1, D(3)),
                        tens(DML_DTYPE_F32, b, 2, D(3), D(2))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 1, D(2));
  CHECK_OK(run_op(DML_OP_MATMUL, in, 2, &out, 1, NULL, 0));
  CHECK(y[0] == 22 && y[1] == 28);
  /* [2,3] x [3] -> [2] */
  dml_tensor_t in2[2] = {tens(DML_DTYPE_F32, b, 2, D(2), D(3)),
                         tens(DML_DTYPE_F32, a, 1, D(3))};
  CHECK_OK(run_op(DML_OP_MATMUL, in2, 2, &out, 1, NULL, 0));
  CHECK(y[0] == 14 && y[1] == 32);
  /* [3] x [3] -> [] */
  dml_tensor_t in3[2] = {tens(DML_DTYPE_F32, a, 1, D(3)),
                         tens(DML_DTYPE_F32, a, 1, D(3))};
  dml_tensor_t out3 = tens(DML_DTYPE_F32, &s, 0);
  CHECK_OK(run_op(DML_OP_MATMUL, in3, 2, &out3, 1, NULL, 0));
  CHECK(s == 14);
  /* mismatch */
  dml_tensor_t out4 = tens(DML_DTYPE_F32, y, 1, D(3));
  CHECK_ERROR(run_op(DML_OP_MATMUL, in, 2, &out4, 1, NULL, 0),
              DML_STATUS_INVALID_ARGUMENT, "MatMul");
}

/* ---- Conv ------------------------------------------------------------- */

typedef struct {
  int r;
  int64_t N, C, M, group;
  int64_t in[3], k[3], s[3], d[3], pb[3], pe[3], out[3];
} cgeo_t;

/* mag (NULL: not wanted): per output, |b| + the sum of |x * w| over the
 * taps, the scale an f32 sum's rounding error is relative to. */
static int g_conv_patch; /* naive_conv's mag: Winograd's scale (below) */
static void naive_conv(const cgeo_t *g, const float *x, const float *w, const float *b,
                       float *y, double *mag) {
  int64_t Cg = g->C / g->group, Mg = g->M / g->group;
  int64_t in_sz = 1, out_sz = 1, k_sz = 1;
  for (int i = 0; i < g->r; i++) in_sz *= g->in[i], out_sz *= g->out[i], k_sz *= g->k[i];
  for (int64_t n = 0; n < g->N; n++)
    for (int64_t m = 0; m < g->M; m++)
      for (int64_t o = 0; o < out_sz; o++) {
        int64_t oi[3], rem = o;
        for (int i = g->r - 1; i >= 0; i--) oi[i] = rem % g->out[i], rem /= g->out[i];
        double s = b ? b[m] : 0, sa = b ? fabs(b[m]) : 0;
        int64_t gr = m / Mg;
        for (int64_t c = 0; c < Cg; c++)
          for (int64_t kk = 0; kk < k_sz; kk++) {
            int64_t ki[3], kr = kk, off = 0, ok = 1;
            for (int i = g->r - 1; i >= 0; i--) ki[i] = kr % g->k[i], kr /= g->k[i];
            for (int i = 0; i < g->r; i++) {
              int64_t p = oi[i] * g->s[i] - g->pb[i] + ki[i] * g->d[i];
              if (p < 0 || p >= g->in[i]) ok = 0;
              off = off * g->in[i] + p;
            }
            if (ok) {
              double t = (double)x[(n * g->C + gr * Cg + c) * in_sz + off] *
                         w[(m * Cg + c) * k_sz + kk];
              s += t;
              sa += fabs(t);
            }
          }
        y[(n * g->M + m) * out_sz + o] = (float)s;
        if (mag && g_conv_patch && g->r == 2) {
          /* Winograd F(2x2, 3x3)'s scale: over c, max |w[m, c, :]| times the
           * sum of |x| over the 4x4 padded patch of the output's 2x2 tile. */
          sa = b ? fabs(b[m]) : 0;
          int64_t h0 = oi[0] - oi[0] % 2 - g->pb[0], w0 = oi[1] - oi[1] % 2 - g->pb[1];
          for (int64_t c = 0; c < Cg; c++) {
            double wm = 0, xs = 0;
            for (int64_t kk = 0; kk < k_sz; kk++)
              wm = fmax(wm, fabs(w[(m * Cg + c) * k_sz + kk]));
            for (int64_t i = h0; i < h0 + 4; i++)
              for (int64_t j = w0; j < w0 + 4; j++)
                if (i >= 0 && i < g->in[0] && j >= 0 && j < g->in[1])
                  xs += fabs(x[((n * g->C + gr * Cg + c) * g->in[0] + i) * g->in[1] + j]);
            sa += wm * xs;
          }
        }
        if (mag) mag[(n * g->M + m) * out_sz + o] = sa;
      }
}

/* When set, conv_case puts edge values among X's random ones (NaN, +-inf,
 * -0, a denormal, +-1e30) and compares NaN with NaN, infinities exactly,
 * the rest within 1e-4 relative to max(1, sum of |x * w| over the taps):
 * +-1e30 terms that cancel leave an f32 sum's rounding error at that
 * scale. */
static int g_conv_edges;
/* When nonzero, conv_case instead checks every output within g_conv_rel
 * relative to its own sum of |x * w| (no floor of 1; with g_conv_patch set,
 * naive_conv's Winograd scale instead) and records the
 * largest such error in g_conv_rel_max; g_conv_finite_edges puts only the
 * finite edge values (-0, a denormal, +-1e30) among X's. */
static double g_conv_rel, g_conv_rel_max;
static int g_conv_finite_edges;
/* conv_case's last output (malloc'd, g_conv_last_n floats), for tests that
 * compare two runs bit for bit. */
static float *g_conv_last;
static size_t g_conv_last_n;

static void conv_case(cgeo_t g, int use_bias, const char *auto_pad) {
  int64_t in_sz = 1, out_sz = 1, k_sz = 1;
  for (int i = 0; i < g.r; i++) {
    int64_t ek = (g.k[i] - 1) * g.d[i] + 1;
    if (auto_pad && strcmp(auto_pad, "VALID") != 0) {
      g.out[i] = (g.in[i] + g.s[i] - 1) / g.s[i];
      int64_t total = (g.out[i] - 1) * g.s[i] + ek - g.in[i];
      if (total < 0) total = 0;
      g.pb[i] = strcmp(auto_pad, "SAME_UPPER") == 0 ? total / 2 : total - total / 2;
      g.pe[i] = total - g.pb[i];
    } else if (auto_pad) {
      g.pb[i] = g.pe[i] = 0;
      g.out[i] = (g.in[i] - ek) / g.s[i] + 1;
    } else {
      g.out[i] = (g.in[i] + g.pb[i] + g.pe[i] - ek) / g.s[i] + 1;
    }
    in_sz *= g.in[i], out_sz *= g.out[i], k_sz *= g.k[i];
  }
  size_t nx = (size_t)(g.N * g.C * in_sz), nw = (size_t)(g.M * (g.C / g.group) * k_sz);
  size_t ny = (size_t)(g.N * g.M * out_sz);
  float *x = frand_buf(nx), *w = frand_buf(nw), *b = frand_buf((size_t)g.M);
  float *y = (float *)malloc(ny * 4 + 4), *ref = (float *)malloc(ny * 4 + 4);
  if (g_conv_edges) {
    static const float ev[] = {NAN, INFINITY, -INFINITY, -0.0f, 1e-40f, 1e30f, -1e30f};
    for (size_t i = 0; i < nx; i += 97) x[i] = ev[(i / 97) % 7];
  }
  if (g_conv_finite_edges) {
    static const float ev[] = {-0.0f, 1e-40f, 1e30f, -1e30f};
    for (size_t i = 0; i < nx; i += 97) x[i] = ev[(i / 97) % 4];
  }
  double *mag = (double *)malloc(ny * sizeof(double) + 8);
  naive_conv(&g, x, w, use_bias ? b : NULL, ref, mag);
  dml_tensor_t in[3];
  in[0] = tens(DML_DTYPE_F32, x, g.r + 2, g.N, g.C, g.in[0], g.in[1], g.in[2]);
  in[1] = tens(DML_DTYPE_F32, w, g.r + 2, g.M, g.C / g.group, g.k[0], g.k[1], g.k[2]);
  in[2] = tens(DML_DTYPE_F32, b, 1, g.M);
  dml_tensor_t out =
      tens(DML_DTYPE_F32, y, g.r + 2, g.N, g.M, g.out[0], g.out[1], g.out[2]);
  int64_t pads[6];
  for (int i = 0; i < g.r; i++) pads[i] = g.pb[i], pads[g.r + i] = g.pe[i];
  dml_attr_t at[6];
  uint32_t na = 0;
  at[na++] = attr_ints("strides", g.s, (size_t)g.r);
  at[na++] = attr_ints("dilations", g.d, (size_t)g.r);
  at[na++] = attr_i("group", g.group);
  at[na++] = attr_ints("kernel_shape", g.k, (size_t)g.r);
  if (auto_pad)
    at[na++] = attr_s("auto_pad", auto_pad);
  else
    at[na++] = attr_ints("pads", pads, 2 * (size_t)g.r);
  CHECK_OK(run_op(DML_OP_CONV, in, use_bias ? 3 : 2, &out, 1, at, na));
  double err = 0;
  for (size_t i = 0; i < ny && g_conv_edges; i++) {
    double a = y[i], e = ref[i], sc = mag[i] > 1 ? mag[i] : 1;
    if ((a != a && e != e) || a == e) continue;
    double rel = a != a || e != e || isinf(a) || isinf(e) ? INFINITY : fabs(a - e) / sc;
    if (rel > err) err = rel;
  }
  if (!g_conv_edges) err = max_abs_diff(y, ref, ny);
  if (g_conv_rel) {
    err = 0;
    for (size_t i = 0; i < ny; i++) {
      double d = fabs((double)y[i] - ref[i]);
      double rel = d == 0 ? 0 : mag[i] > 0 ? d / mag[i] : INFINITY;
      if (!(rel <= err)) err = rel;
    }
    if (err > g_conv_rel_max) g_conv_rel_max = err;
    err = err <= g_conv_rel ? 0 : err;
  }
  if (!(err < 1e-4))
    fprintf(stderr, "conv r=%d C=%lld M=%lld g=%lld err %g\n", g.r, (long long)g.C,
            (long long)g.M, (long long)g.group, err);
  CHECK(err < 1e-4);
  free(g_conv_last);
  g_conv_last = y, g_conv_last_n = ny;
  free(x), free(w), free(b), free(ref), free(mag);
}

static void test_conv2d_variants(void) {
  /* r, N, C, M, group, in, k, s, d, pb, pe */
  cgeo_t base = {2,         2,         3,         4,         1,         {9, 8, 1},
                 {3, 3, 1}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {0}};
  conv_case(base, 1, NULL);
  cgeo_t p = base;
  p.pb[0] = 1, p.pb[1] = 2, p.pe[0] = 2, p.pe[1] = 0;
  conv_case(p, 1, NULL);
  cgeo_t s = p;
  s.s[0] = 2, s.s[1] = 3;
  conv_case(s, 0, NULL);
  cgeo_t d = base;
  d.d[0] = 2, d.d[1] = 3, d.pb[0] = d.pe[1] = 1;
  conv_case(d, 1, NULL);
  cgeo_t gr = base;
  gr.C = 6, gr.M = 4, gr.group = 2;
  conv_case(gr, 1, NULL);
  cgeo_t dw = base; /* depthwise */
  dw.C = 4, dw.M = 8, dw.group = 4, dw.pb[0] = dw.pb[1] = dw.pe[0] = dw.pe[1] = 1;
  conv_case(dw, 1, NULL);
  cgeo_t pw = base; /* 1x1 */
  pw.k[0] = pw.k[1] = 1;
  pw.C = 16, pw.M = 8;
  conv_case(pw, 1, NULL);
  cgeo_t pwrow = pw; /* 1x1, K 16, 17x17: packed 256-position blocks, then tails */
  pwrow.N = 1, pwrow.M = 10, pwrow.in[0] = pwrow.in[1] = 17;
  conv_case(pwrow, 1, NULL);
  conv_case(pwrow, 0, NULL);
  cgeo_t pwodd = pwrow; /* packed path, K 13, M 7 (a partial 4-row tile), 19x23 */
  pwodd.C = 13, pwodd.M = 7, pwodd.in[0] = 19, pwodd.in[1] = 23;
  conv_case(pwodd, 1, NULL);
  pwodd.C = 3, pwodd.M = 33, pwodd.N = 2; /* K 3, M 33 */
  conv_case(pwodd, 1, NULL);
  cgeo_t pwdeep = pw; /* 1x1 with K = 300: two KC blocks of the packed weights */
  pwdeep.C = 300, pwdeep.M = 7;
  conv_case(pwdeep, 1, NULL);
  cgeo_t big = base; /* ResNet-like */
  big.N = 1, big.C = 16, big.M = 32, big.in[0] = big.in[1] = 16,
  big.pb[0] = big.pb[1] = 1, big.pe[0] = big.pe[1] = 1;
  conv_case(big, 1, NULL);
  cgeo_t wide = base; /* 2500 output pixels: over the GEMM's 2048-column block */
  wide.N = 1, wide.in[0] = wide.in[1] = 50, wide.pb[0] = wide.pb[1] = 1;
  wide.pe[0] = wide.pe[1] = 1;
  conv_case(wide, 1, NULL);
  cgeo_t deep = base; /* K = 300 * 9: several KC blocks, with stride and dilation */
  deep.N = 1, deep.C = 300, deep.M = 5, deep.s[1] = 2, deep.d[0] = 2;
  conv_case(deep, 1, NULL);
  conv_case(base, 1, "SAME_UPPER");
  conv_case(s, 1, "SAME_LOWER");
  conv_case(s, 1, "VALID");
  dml_cpu_set_num_threads(2);
  conv_case(big, 1, NULL);
  conv_case(gr, 1, NULL);
  cgeo_t big1 = big;
  big1.N = 3;
  conv_case(big1, 1, "SAME_UPPER");
  /* One image above the split threshold: its output columns are spread over
   * the threads (23x23 = 529 columns, not a multiple of the panel width);
   * a 1x1 one the same way, and stride 2. */
  cgeo_t one = big;
  one.C = 32, one.M = 64, one.in[0] = one.in[1] = 23;
  conv_case(one, 1, NULL);
  cgeo_t one_pw = one;
  one_pw.k[0] = one_pw.k[1] = 1, one_pw.C = 128, one_pw.pb[0] = one_pw.pb[1] = 0;
  one_pw.pe[0] = one_pw.pe[1] = 0;
  conv_case(one_pw, 0, NULL);
  cgeo_t one_s2 = one;
  one_s2.s[0] = one_s2.s[1] = 2, one_s2.in[0] = one_s2.in[1] = 47;
  conv_case(one_s2, 1, NULL);
  dml_cpu_set_num_threads(3);
  conv_case(one, 1, NULL);
  dml_cpu_set_num_threads(1);
}

/* The channel-vectorized direct kernel's geometries (cpu_conv.c, cv_plan,
 * on AVX-512): tiles of one row piece (OW >= 16, a partial last piece), of
 * 2 rows (OW 8) and 4 rows (OW 4), strides 1 and 2, output channels not a
 * multiple of 16, X read in place (no padding, whole tiles), and one image
 * split over 2 threads; pointwise images of fewer than 10 positions;
 * elsewhere these take the other paths, the same check. */
static void test_conv_cv(void) {
  /* r, N, C, M, group, in, k, s, d, pb, pe */
  cgeo_t r2 = {2,         2,         5,         20,        1,         {8, 8, 1},
               {3, 3, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 0}, {1, 1, 0}, {0}};
  conv_case(r2, 1, NULL);
  conv_case(r2, 0, NULL);
  cgeo_t r4 = r2; /* 8x8 -> 4x4, stride 2 */
  r4.s[0] = r4.s[1] = 2, r4.M = 7;
  conv_case(r4, 1, NULL);
  cgeo_t piece = r2; /* 21 columns: a 16-piece and a 5-piece, stride 2 */
  piece.in[0] = 9, piece.in[1] = 41, piece.s[0] = piece.s[1] = 2, piece.M = 33;
  conv_case(piece, 1, NULL);
  cgeo_t inpl = r2; /* 1x1 stride 2 unpadded: X in place, 2-row tiles */
  inpl.k[0] = inpl.k[1] = 1, inpl.in[0] = inpl.in[1] = 16, inpl.s[0] = inpl.s[1] = 2;
  inpl.pb[0] = inpl.pb[1] = inpl.pe[0] = inpl.pe[1] = 0;
  conv_case(inpl, 1, NULL);
  cgeo_t inpl1 = inpl; /* 3x3 stride 1 unpadded 18x18 -> 16x16: in place */
  inpl1.k[0] = inpl1.k[1] = 3, inpl1.in[0] = inpl1.in[1] = 18;
  inpl1.s[0] = inpl1.s[1] = 1;
  conv_case(inpl1, 1, NULL);
  /* 1x1 stride > 1 unpadded (the strided pointwise path for K <= 16:
   * gathered, then pointwise tiles): 21x21 -> 11x11 (a partial last
   * vector, the last column read), stride 3 (the scalar gather), strides
   * (2, 1), 16x16 -> 8x16 (the 256-position block read without a copy),
   * K 40 (the cv kernel), and one image split over 2 threads. */
  cgeo_t pws = inpl;
  pws.in[0] = pws.in[1] = 21, pws.C = 12, pws.M = 13;
  conv_case(pws, 1, NULL);
  pws.s[0] = pws.s[1] = 3, pws.in[0] = 20, pws.in[1] = 23;
  conv_case(pws, 1, NULL);
  pws.s[0] = 2, pws.s[1] = 1, pws.in[0] = pws.in[1] = 16, pws.C = 16;
  conv_case(pws, 0, NULL);
  pws.C = 40;
  conv_case(pws, 1, NULL);
  dml_cpu_set_num_threads(2);
  cgeo_t pws1 = pws; /* 16 x 64 x 64 -> 128 x 32 x 32: 2M multiply-adds */
  pws1.N = 1, pws1.C = 16, pws1.M = 128, pws1.in[0] = pws1.in[1] = 64;
  pws1.s[0] = pws1.s[1] = 2;
  conv_case(pws1, 1, NULL);
  dml_cpu_set_num_threads(1);
  /* Pointwise images of fewer than 10 positions (the pointwise kernel
   * declines them; on AVX-512 the cv kernel's one partial tile, elsewhere
   * the GEMM): 3x3 (EfficientNet's last blocks at 96x96) with K 320 and M
   * 33 (a partial channel block), 2x2, 1x1, 3x1 and a 1-D 7, a batch of 5
   * over 2 threads and one image of 256 -> 512 at 3x3 over 2 threads. */
  cgeo_t pwsmall = inpl;
  pwsmall.s[0] = pwsmall.s[1] = 1, pwsmall.in[0] = pwsmall.in[1] = 3;
  pwsmall.C = 320, pwsmall.M = 33;
  conv_case(pwsmall, 1, NULL);
  conv_case(pwsmall, 0, NULL);
  pwsmall.C = 7, pwsmall.M = 16, pwsmall.in[0] = pwsmall.in[1] = 2;
  conv_case(pwsmall, 1, NULL);
  pwsmall.in[0] = pwsmall.in[1] = 1, pwsmall.M = 17;
  conv_case(pwsmall, 1, NULL);
  pwsmall.in[0] = 3, pwsmall.in[1] = 1, pwsmall.C = 40;
  conv_case(pwsmall, 1, NULL);
  cgeo_t pw1d = pwsmall;
  pw1d.r = 1, pw1d.in[0] = 7, pw1d.C = 24, pw1d.M = 20;
  conv_case(pw1d, 1, NULL);
  dml_cpu_set_num_threads(2);
  pwsmall.N = 5, pwsmall.in[0] = pwsmall.in[1] = 3, pwsmall.C = 64, pwsmall.M = 48;
  conv_case(pwsmall, 1, NULL);
  pwsmall.N = 1, pwsmall.C = 256, pwsmall.M = 512;
  conv_case(pwsmall, 1, NULL);
  dml_cpu_set_num_threads(1);
  cgeo_t odd = r2; /* 6 output rows of 8: not whole 2-row tiles (another path) */
  odd.in[0] = 6;
  conv_case(odd, 1, NULL);
  dml_cpu_set_num_threads(2);
  cgeo_t one = r2; /* one image of 64x8x8, 64 outputs: tiles over the threads */
  one.N = 1, one.C = 64, one.M = 64;
  conv_case(one, 1, NULL);
  one.N = 3;
  conv_case(one, 1, NULL);
  dml_cpu_set_num_threads(1);
}

/* Winograd F(2x2, 3x3) (cpu_conv.c, wg_plan: 3x3 stride 1, >= 64 input
 * channels, tile columns 4 or a multiple of 8, on AVX-512), against the
 * double-precision loop within 1e-5 of each output's scale sum over c of
 * max |w[m, c, :]| times the sum of |x| over its tile's 4x4 input patch
 * (a +-1e30 input is carried through the transforms by every output of
 * the tiles whose patch holds it, and cancels in A^T M A: the error is
 * relative to the patch, not to the output's own taps): 8x8
 * (tw 4), 16x16 with 20 output channels (a partial channel block), 32x32
 * (tw 16), 16x16 unpadded from 18x18, 8x16 with 70 channels and 33
 * outputs, 16x8 padded (0, 2) in height, X with +-1e30, -0 and denormals,
 * images over 2 threads and one image's blocks over 2 threads; then X with
 * Inf and NaN (those calls take the direct kernel: the same check as the
 * other paths); and each case against the direct kernel
 * (dml_cpu_conv_wg_set(0)) within the same bound. Elsewhere (no AVX-512)
 * the direct or GEMM paths answer the same checks. */
static void test_conv_winograd(void) {
  /* r, N, C, M, group, in, k, s, d, pb, pe */
  cgeo_t a = {2,         2,         64,        64,        1,         {8, 8, 1},
              {3, 3, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 0}, {1, 1, 0}, {0}};
  cgeo_t b = a;
  b.N = 1, b.M = 20, b.in[0] = b.in[1] = 16;
  cgeo_t c = a;
  c.N = 1, c.M = 16, c.in[0] = c.in[1] = 32;
  cgeo_t d = b;
  d.in[0] = d.in[1] = 18, d.pb[0] = d.pb[1] = d.pe[0] = d.pe[1] = 0;
  cgeo_t e = a; /* 8 rows of 16: tw 8, th 4; 16 rows of 8 with pads (0, 2) */
  e.N = 3, e.C = 70, e.M = 33, e.in[1] = 16;
  cgeo_t f = a;
  f.N = 1, f.in[0] = 16, f.pb[0] = 0, f.pe[0] = 2;
  cgeo_t cases[] = {a, b, c, d, e, f};
  g_conv_rel = 1e-5;
  g_conv_rel_max = 0;
  g_conv_patch = 1;
  for (int wg = 1; wg >= 0; wg--) {
    dml_cpu_conv_wg_set(wg);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      conv_case(cases[i], 1, NULL);
      conv_case(cases[i], 0, NULL);
      g_conv_finite_edges = 1;
      conv_case(cases[i], 1, NULL);
      g_conv_finite_edges = 0;
    }
    dml_cpu_set_num_threads(2);
    conv_case(a, 1, NULL); /* 2 images over 2 threads */
    cgeo_t one = c;        /* one image: its blocks over 2 threads */
    one.M = 64;
    conv_case(one, 1, NULL);
    dml_cpu_set_num_threads(1);
    fprintf(stderr, "%s: largest error %.3g of the Winograd scale\n",
            wg ? "winograd" : "direct", g_conv_rel_max);
    g_conv_rel_max = 0;
  }
  dml_cpu_conv_wg_set(1);
  g_conv_patch = 0;
  g_conv_rel = 0;
  g_conv_edges = 1;
  conv_case(a, 1, NULL);
  conv_case(b, 0, NULL);
  g_conv_edges = 0;
}

/* Depthwise (group == C == M): the direct kernel against the naive loop,
 * on edge geometries: kernel wider than the padded input's valid part,
 * strides and dilations with pads on both sides, 1-pixel images, long rows
 * (the vector loop's tails), several threads over enough planes to split. */
static void test_conv_depthwise(void) {
  /* r, N, C, M, group, in, k, s, d, pb, pe */
  cgeo_t b = {2,         2,         5,         5,         5,         {7, 9, 1},
              {3, 3, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 0}, {1, 1, 0}, {0}};
  conv_case(b, 1, NULL);
  conv_case(b, 0, NULL);
  cgeo_t s2 = b;
  s2.s[0] = 2, s2.s[1] = 2;
  conv_case(s2, 1, NULL);
  cgeo_t s3 = b;
  s3.s[1] = 3, s3.d[0] = 2, s3.d[1] = 2, s3.pb[1] = 3, s3.pe[1] = 2;
  conv_case(s3, 1, NULL);
  cgeo_t k5 = b;
  k5.k[0] = k5.k[1] = 5, k5.pb[0] = k5.pb[1] = k5.pe[0] = k5.pe[1] = 4;
  conv_case(k5, 1, NULL);
  cgeo_t one = b;
  one.in[0] = one.in[1] = 1;
  conv_case(one, 1, NULL);
  cgeo_t wide = b;
  wide.N = 1, wide.in[0] = 3, wide.in[1] = 131, wide.pb[1] = 2, wide.pe[1] = 0;
  conv_case(wide, 1, NULL);
  cgeo_t wider = wide; /* rows over the direct kernel's row buffer: the generic loop */
  wider.in[1] = 1100, wider.C = wider.M = wider.group = 2;
  conv_case(wider, 1, NULL);
  cgeo_t k7 = b; /* 7x7 with stride 2 and dilation */
  k7.k[0] = k7.k[1] = 7, k7.in[0] = k7.in[1] = 21, k7.s[0] = k7.s[1] = 2, k7.d[1] = 2;
  k7.pb[0] = k7.pb[1] = k7.pe[0] = k7.pe[1] = 3;
  conv_case(k7, 1, NULL);
  conv_case(b, 1, "SAME_UPPER");
  conv_case(s2, 1, "SAME_LOWER");
  conv_case(s2, 1, "VALID");
  dml_cpu_set_num_threads(2);
  cgeo_t big = b; /* 32 images x 64 channels x 56x56: above the split threshold */
  big.N = 32, big.C = big.M = big.group = 64, big.in[0] = big.in[1] = 56;
  conv_case(big, 1, NULL);
  dml_cpu_set_num_threads(1);
}

/* dml_cpu_conv_fused against Conv, then BatchNormalization, then Relu run
 * as separate kernels: the same bits (each step rounds alike), NaN, -0 and
 * infinities among the inputs included; plain, grouped, depthwise and 1x1
 * geometries, 1 and 2 threads. */
/* Stride of fused_case's convolutions (both axes). */
static int64_t g_fused_stride = 1;
/* fused_case's residual: 0 none; 1 an Add of a tensor of the output's
 * shape after the BatchNormalization (the epilogue's residual, in a buffer
 * of its own); 2 the same, the residual in the fused output's buffer (the
 * memory plan may put the result exactly over it). */
static int g_fused_res = 0;

static void fused_case(int64_t N, int64_t C, int64_t M, int64_t group, int64_t k,
                       int64_t hw, int bn, int relu, int pack) {
  int64_t Cg = C / group, pad = k / 2, st = g_fused_stride;
  int64_t oh = (hw + 2 * pad - k) / st + 1; /* output height and width */
  size_t nx = (size_t)(N * C * hw * hw), nw = (size_t)(M * Cg * k * k);
  size_t ny = (size_t)(N * M * oh * oh);
  float *x = frand_buf(nx), *w = frand_buf(nw), *b = frand_buf((size_t)M);
  x[0] = NAN, x[nx / 2] = -0.0f, x[nx - 1] = INFINITY;
  float *sc = frand_buf((size_t)M), *bb = frand_buf((size_t)M),
        *mu = frand_buf((size_t)M), *var = frand_buf((size_t)M);
  for (int64_t m = 0; m < M; m++) var[m] = var[m] * var[m] + 0.01f;
  float *y1 = (float *)malloc(ny * 4), *y2 = (float *)malloc(ny * 4),
        *y3 = (float *)malloc(ny * 4), *yf = (float *)malloc(ny * 4);
  dml_tensor_t in[3] = {tens(DML_DTYPE_F32, x, 4, N, C, hw, hw),
                        tens(DML_DTYPE_F32, w, 4, M, Cg, k, k),
                        tens(DML_DTYPE_F32, b, 1, M)};
  int64_t ks[2] = {k, k}, pads[4] = {pad, pad, pad, pad}, sts[2] = {st, st};
  dml_attr_t at[4] = {attr_i("group", group), attr_ints("kernel_shape", ks, 2),
                      attr_ints("pads", pads, 4), attr_ints("strides", sts, 2)};
  dml_tensor_t o1 = tens(DML_DTYPE_F32, y1, 4, N, M, oh, oh);
  CHECK_OK(run_op(DML_OP_CONV, in, 3, &o1, 1, at, 4));
  const float *cur = y1;
  float *scale = (float *)malloc((size_t)M * 4), *shift = (float *)malloc((size_t)M * 4);
  if (bn) {
    dml_tensor_t bin[5] = {tens(DML_DTYPE_F32, y1, 4, N, M, oh, oh),
                           tens(DML_DTYPE_F32, sc, 1, M), tens(DML_DTYPE_F32, bb, 1, M),
                           tens(DML_DTYPE_F32, mu, 1, M), tens(DML_DTYPE_F32, var, 1, M)};
    dml_tensor_t o2 = tens(DML_DTYPE_F32, y2, 4, N, M, oh, oh);
    dml_attr_t eps = attr_f("epsilon", 1e-3);
    CHECK_OK(run_op(DML_OP_BATCH_NORMALIZATION, bin, 5, &o2, 1, &eps, 1));
    for (int64_t m = 0; m < M; m++)
      dml_cpu_bn_affine(sc[m], bb[m], mu[m], var[m], 1e-3, &scale[m], &shift[m]);
    cur = y2;
  }
  float *rs = g_fused_res ? frand_buf(ny) : NULL, *ya = (float *)malloc(ny * 4);
  if (rs) {
    rs[0] = -0.0f, rs[ny / 3] = NAN, rs[ny - 1] = -INFINITY;
    dml_tensor_t ain[2] = {tens(DML_DTYPE_F32, (void *)cur, 4, N, M, oh, oh),
                           tens(DML_DTYPE_F32, rs, 4, N, M, oh, oh)};
    dml_tensor_t o4 = tens(DML_DTYPE_F32, ya, 4, N, M, oh, oh);
    CHECK_OK(run_op(DML_OP_ADD, ain, 2, &o4, 1, NULL, 0));
    cur = ya;
  }
  if (relu) {
    dml_tensor_t rin = tens(DML_DTYPE_F32, (void *)cur, 4, N, M, oh, oh);
    dml_tensor_t o3 = tens(DML_DTYPE_F32, y3, 4, N, M, oh, oh);
    CHECK_OK(run_op(DML_OP_RELU, &rin, 1, &o3, 1, NULL, 0));
    cur = y3;
  }
  dml_tensor_t of = tens(DML_DTYPE_F32, yf, 4, N, M, oh, oh);
  dml_cpu_call_t call = cpu_call(DML_OP_CONV, "fused", in, 3, &of, 1, at, 4);
  size_t sb = dml_cpu_scratch_bytes(&call);
  call.scratch = sb ? malloc(sb) : NULL;
  call.scratch_bytes = sb;
  size_t pb = pack ? dml_cpu_prepack_bytes(DML_OP_CONV, &in[1], at, 4) : 0;
  void *packed = pb ? malloc(pb) : NULL;
  if (packed) dml_cpu_prepack(DML_OP_CONV, &in[1], at, 4, packed);
  CHECK(!pack || group == C || packed); /* depthwise has no packed form */
  dml_cpu_epilogue_t ep = {.scale = bn ? scale : NULL,
                           .shift = bn ? shift : NULL,
                           .relu = relu,
                           .packed = packed,
                           .residual = rs};
  if (g_fused_res == 2) {
    memcpy(yf, rs, ny * 4);
    ep.residual = yf;
  }
  CHECK_OK(dml_cpu_run_fused(&call, &ep));
  free(packed);
  size_t bad = 0;
  for (size_t i = 0; i < ny; i++) {
    uint32_t u, v;
    memcpy(&u, &cur[i], 4);
    memcpy(&v, &yf[i], 4);
    if (u != v && !(cur[i] != cur[i] && yf[i] != yf[i])) bad++;
  }
  if (bad)
    fprintf(stderr,
            "fused conv C=%lld M=%lld g=%lld k=%lld s=%lld hw=%lld bn=%d res=%d relu=%d: "
            "%zu differ\n",
            (long long)C, (long long)M, (long long)group, (long long)k, (long long)st,
            (long long)hw, bn, g_fused_res, relu, bad);
  CHECK(bad == 0);
  free(call.scratch);
  free(x), free(w), free(b), free(sc), free(bb), free(mu), free(var);
  free(y1), free(y2), free(y3), free(yf), free(scale), free(shift), free(rs), free(ya);
}

/* The direct depthwise kernel on every path this machine has (portable
 * C, AVX2+FMA, AVX-512: they follow dml_cpu_sgemm_set_kernel), with edge
 * values in X, against the naive loop: 3x3 and 5x5, strides 1, 2 and 3,
 * dilation, output widths around the 16-float vector (1, 7, 15, 16, 17,
 * 33, 100), odd heights (the 4-row tiles' tails), several strips of rows
 * (wide rows), and the fall-backs (rows or kernels over the buffer). */
static void test_conv_depthwise_paths(void) {
  int ran = 0;
  for (int which = 1; which <= 3; which++) {
    if (dml_cpu_sgemm_set_kernel(which) != 0) continue;
    ran++;
    g_conv_edges = 1;
    /* r, N, C, M, group, in, k, s, d, pb, pe */
    cgeo_t b = {2,         1,         3,         3,         3,         {7, 9, 1},
                {3, 3, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 0}, {1, 1, 0}, {0}};
    static const int64_t ow[] = {1, 7, 15, 16, 17, 33, 100};
    for (int s = 1; s <= 3; s++)
      for (size_t i = 0; i < 7; i++) {
        cgeo_t c = b;
        c.s[0] = c.s[1] = s;
        c.in[1] = (ow[i] - 1) * s + 1; /* output width ow[i] with pads 1, 1 */
        c.in[1] += s > 1 ? (int64_t)i % 2 : 0;
        c.in[0] = 5 + (int64_t)i;
        conv_case(c, (int)(i & 1), NULL);
        cgeo_t k5 = c;
        k5.k[0] = k5.k[1] = 5, k5.pb[0] = k5.pb[1] = k5.pe[0] = k5.pe[1] = 2;
        conv_case(k5, 1, NULL);
      }
    cgeo_t dl = b; /* dilation 2, asymmetric pads */
    dl.d[0] = dl.d[1] = 2, dl.in[1] = 40, dl.pb[1] = 3, dl.pe[1] = 0, dl.s[1] = 2;
    conv_case(dl, 1, NULL);
    cgeo_t strips = b; /* 600-wide rows: several strips of rows */
    strips.in[0] = 45, strips.in[1] = 600;
    conv_case(strips, 1, NULL);
    strips.s[0] = strips.s[1] = 2;
    conv_case(strips, 1, "SAME_UPPER");
    cgeo_t wide = b; /* one output row's input rows over the buffer: generic loop */
    wide.in[0] = 4, wide.in[1] = 3000, wide.C = wide.M = wide.group = 1;
    conv_case(wide, 1, NULL);
    cgeo_t k9 = b; /* 81 taps: generic loop */
    k9.k[0] = k9.k[1] = 9, k9.in[0] = k9.in[1] = 12, k9.pb[0] = k9.pe[0] = 4;
    conv_case(k9, 1, NULL);
    g_conv_edges = 0;
    for (int bn = 0; bn < 2; bn++)
      for (int relu = 0; relu < 2; relu++) fused_case(2, 6, 6, 6, 3, 10, bn, relu, 0);
  }
  CHECK(ran >= 1);
  CHECK(dml_cpu_sgemm_set_kernel(0) == 0);
}

/* One depthwise case with the AVX-512 flattened-vector kernel and with the
 * strip kernel (dml_cpu_dw_flat_set): each against the naive loop, and the
 * two bit for bit (the same inputs: the generator's seed is reset). */
static void dw_flat_case(cgeo_t g, const char *auto_pad) {
  uint32_t seed = g_rng;
  dml_cpu_dw_flat_set(1);
  conv_case(g, 1, auto_pad);
  float *a = g_conv_last;
  size_t n = g_conv_last_n;
  g_conv_last = NULL;
  g_rng = seed;
  dml_cpu_dw_flat_set(0);
  conv_case(g, 1, auto_pad);
  dml_cpu_dw_flat_set(1);
  int same = n == g_conv_last_n && memcmp(a, g_conv_last, n * sizeof(float)) == 0;
  if (!same)
    fprintf(stderr, "dw flat != strip: C=%lld in %lldx%lld s %lld d %lld\n",
            (long long)g.C, (long long)g.in[0], (long long)g.in[1], (long long)g.s[1],
            (long long)g.d[1]);
  CHECK(same);
  free(a);
}

/* The AVX-512 depthwise kernel over flattened output vectors (taken where
 * the geometry allows, else the strip kernel) against the strip kernel and
 * the naive loop, edge values in X: stride 1 with OW == W (8x8, 16x16,
 * tails of the last vector, 1x1, a 5x5 kernel, dilation 2), stride 1 with
 * OW a multiple of 16 (VALID padding), stride 2 with OW a multiple of 8
 * (vectors over two rows, odd W, asymmetric SAME pads), 17 channels
 * (a channel block's tail), 3 images, 2 threads. The 3x3 planes with
 * output rows of 16 or more take the rows kernel (dwr_plane: 8-row blocks
 * and their tails, partial last vectors, and with one column of padding
 * and whole vectors, 16x16, 6x48, stride 2 32x32 and 10x64, its
 * register-shift loads), those with output rows of 8 the two-row kernel
 * (dw8_plane: 8x8 and 6x8, stride 2 16x16, 15x16 and 12x16), which
 * dml_cpu_dw_flat_set(0) turns off too. */
static void test_conv_depthwise_flat(void) {
  if (dml_cpu_sgemm_set_kernel(3) != 0) return; /* no AVX-512 here */
  g_conv_edges = 1;
  /* r, N, C, M, group, in, k, s, d, pb, pe */
  cgeo_t b = {2,         1,         3,         3,         3,         {8, 8, 1},
              {3, 3, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 0}, {1, 1, 0}, {0}};
  static const int64_t hw[][2] = {{8, 8}, {16, 16}, {7, 9},   {1, 1},  {3, 33}, {5, 100},
                                  {2, 5}, {20, 20}, {11, 37}, {6, 48}, {6, 8}};
  for (size_t i = 0; i < sizeof hw / sizeof hw[0]; i++) {
    cgeo_t c = b;
    c.in[0] = hw[i][0], c.in[1] = hw[i][1];
    dw_flat_case(c, NULL);
    cgeo_t k5 = c;
    k5.k[0] = k5.k[1] = 5, k5.pb[0] = k5.pb[1] = k5.pe[0] = k5.pe[1] = 2;
    dw_flat_case(k5, NULL);
    cgeo_t dl = c;
    dl.d[0] = dl.d[1] = 2, dl.pb[0] = dl.pb[1] = dl.pe[0] = dl.pe[1] = 2;
    dw_flat_case(dl, NULL);
  }
  cgeo_t v = b; /* VALID: OW = 16, 32 != W */
  v.in[0] = 6, v.in[1] = 18;
  dw_flat_case(v, "VALID");
  v.in[1] = 34;
  dw_flat_case(v, "VALID");
  static const int64_t s2[][2] = {{16, 16}, {32, 32}, {15, 15}, {48, 48},
                                  {10, 16}, {9, 31},  {35, 47}, {21, 64},
                                  {10, 64}, {15, 16}, {12, 16}};
  for (size_t i = 0; i < sizeof s2 / sizeof s2[0]; i++) {
    cgeo_t c = b;
    c.s[0] = c.s[1] = 2, c.in[0] = s2[i][0], c.in[1] = s2[i][1];
    dw_flat_case(c, NULL);
    dw_flat_case(c, "SAME_UPPER");
    dw_flat_case(c, "SAME_LOWER");
  }
  cgeo_t many = b; /* channel blocks, images, threads */
  many.N = 3, many.C = many.M = many.group = 17, many.in[0] = many.in[1] = 16;
  dw_flat_case(many, NULL);
  many.s[0] = many.s[1] = 2;
  dw_flat_case(many, NULL);
  dml_cpu_set_num_threads(2);
  many.N = 40, many.C = many.M = many.group = 33; /* above the split size */
  dw_flat_case(many, NULL);
  dml_cpu_set_num_threads(1);
  g_conv_edges = 0;
  for (int bn = 0; bn < 2; bn++)
    for (int relu = 0; relu < 2; relu++) {
      fused_case(2, 6, 6, 6, 3, 10, bn, relu, 0);
      fused_case(2, 6, 6, 6, 3, 20, bn, relu, 0); /* 3x3 rows kernel (OW >= 16) */
      fused_case(2, 6, 6, 6, 3, 8, bn, relu, 0);  /* two-row kernel (OW 8) */
      g_fused_stride = 2;
      fused_case(2, 6, 6, 6, 3, 36, bn, relu, 0);
      fused_case(2, 6, 6, 6, 3, 16, bn, relu, 0);
      g_fused_stride = 1;
    }
  free(g_conv_last);
  g_conv_last = NULL;
  CHECK(dml_cpu_sgemm_set_kernel(0) == 0);
}

/* The direct stride-1 convolution (AVX-512 micro-kernel machines; the
 * other kernels run the same cases through im2col + GEMM), with edge values
 * in X, against the naive loop: output widths 8 (im2col), 10, 12, 16, 28,
 * 31, 47 (masked
 * vectors, pairs of vectors across rows), odd heights, M not a multiple of
 * 8, K over one KC block (C = 32, 3x3), 5x5 with asymmetric pads, several
 * images on 2 threads; then the fused epilogue with packed weights. */
static void test_conv_direct(void) {
  int ran = 0;
  for (int which = 1; which <= 3; which++) {
    if (dml_cpu_sgemm_set_kernel(which) != 0) continue;
    ran++;
    g_conv_edges = 1;
    /* r, N, C, M, group, in, k, s, d, pb, pe */
    cgeo_t b = {2,         1,         3,         13,        1,         {7, 12, 1},
                {3, 3, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 0}, {1, 1, 0}, {0}};
    static const int64_t w[] = {8, 10, 12, 16, 28, 31, 47};
    for (size_t i = 0; i < 7; i++) {
      cgeo_t c = b;
      c.in[1] = w[i], c.in[0] = 3 + 2 * (int64_t)i, c.M = 5 + 3 * (int64_t)i;
      conv_case(c, (int)(i & 1), NULL);
    }
    cgeo_t deep = b; /* K = 288 > KC */
    deep.C = 32, deep.M = 16, deep.in[0] = 5, deep.in[1] = 16;
    conv_case(deep, 1, NULL);
    cgeo_t k5 = b;
    k5.k[0] = k5.k[1] = 5, k5.in[0] = 9, k5.in[1] = 28, k5.pb[0] = 1, k5.pe[0] = 3;
    k5.pb[1] = 2, k5.pe[1] = 2;
    conv_case(k5, 1, NULL);
    conv_case(k5, 1, "SAME_UPPER");
    cgeo_t many = b;
    many.N = 5, many.C = 16, many.M = 16, many.in[0] = many.in[1] = 16;
    dml_cpu_set_num_threads(2);
    conv_case(many, 1, NULL);
    /* one image over the split threshold: its output vectors split over 2
     * and 3 threads (chunks not a multiple of the 2-vector tile) */
    cgeo_t one = many;
    one.N = 1, one.in[0] = 31, one.in[1] = 30;
    conv_case(one, 1, NULL);
    dml_cpu_set_num_threads(3);
    conv_case(one, 0, NULL);
    dml_cpu_set_num_threads(1);
    g_conv_edges = 0;
    for (int threads = 1; threads <= 2; threads++) {
      dml_cpu_set_num_threads(threads);
      for (int pack = 0; pack < 2; pack++) {
        fused_case(3, 5, 13, 1, 3, 16, 1, 1, pack);
        fused_case(2, 32, 16, 1, 3, 16, 1, 0, pack);
        fused_case(1, 16, 16, 1, 3, 32, 1, 1, pack); /* one image, split */
      }
    }
    dml_cpu_set_num_threads(1);
  }
  CHECK(ran >= 1);
  CHECK(dml_cpu_sgemm_set_kernel(0) == 0);
}

/* The direct convolution over flattened phase planes (strides 2 to 4,
 * 3x3 and 1x1 stride 2, stride-1 rows too narrow for the row kernel: AVX-512
 * micro-kernel machines; the other kernels run the same cases through
 * im2col + GEMM), with edge values in X, against the naive loop: 1x1
 * images, odd channels, padding larger than the kernel, asymmetric pads
 * and strides, output widths around the vector, K over one KC block,
 * several images on 2 threads, one image split over 2 and 3 threads; then
 * the fused epilogue with and without packed weights (the same bits as
 * the separate nodes). */
static void test_conv_flat(void) {
  int ran = 0;
  for (int which = 1; which <= 3; which++) {
    if (dml_cpu_sgemm_set_kernel(which) != 0) continue;
    ran++;
    g_conv_edges = 1;
    /* r, N, C, M, group, in, k, s, d, pb, pe */
    cgeo_t b = {2,         2,         3,         13,        1,         {16, 16, 1},
                {3, 3, 1}, {2, 2, 1}, {1, 1, 1}, {1, 1, 0}, {1, 1, 0}, {0}};
    conv_case(b, 1, NULL); /* 16x16 -> 8x8, stride 2 */
    static const int64_t hw[] = {1, 2, 5, 15, 17, 31, 33, 47};
    for (size_t i = 0; i < 8; i++) {
      cgeo_t c = b;
      c.in[0] = hw[i], c.in[1] = hw[(i + 3) % 8], c.C = 1 + 2 * (int64_t)i;
      c.M = 3 + 5 * (int64_t)i;
      conv_case(c, (int)(i & 1), NULL);
    }
    cgeo_t one = b; /* 1x1 image, 3x3 stride 1 and 2: only the centre tap */
    one.in[0] = one.in[1] = 1, one.s[0] = one.s[1] = 1;
    conv_case(one, 1, NULL);
    one.s[0] = one.s[1] = 2;
    conv_case(one, 0, NULL);
    cgeo_t bigpad = b; /* padding larger than the kernel */
    bigpad.pb[0] = 4, bigpad.pe[0] = 5, bigpad.pb[1] = 3, bigpad.pe[1] = 4;
    bigpad.in[0] = 6, bigpad.in[1] = 7;
    conv_case(bigpad, 1, NULL);
    bigpad.s[0] = bigpad.s[1] = 1;
    conv_case(bigpad, 0, NULL);
    cgeo_t pw = b; /* 1x1 stride 2, unpadded and padded */
    pw.k[0] = pw.k[1] = 1, pw.pb[0] = pw.pb[1] = pw.pe[0] = pw.pe[1] = 0;
    pw.C = 16, pw.M = 32, pw.in[0] = pw.in[1] = 32;
    conv_case(pw, 0, NULL);
    pw.pb[0] = pw.pe[1] = 1, pw.in[0] = 9, pw.in[1] = 11;
    conv_case(pw, 1, NULL);
    cgeo_t odd = b; /* strides (2, 3), (3, 1), (4, 4), a 5x5 and a 2x4 kernel */
    odd.s[1] = 3, odd.in[0] = 19, odd.in[1] = 23;
    conv_case(odd, 1, NULL);
    odd.s[0] = 3, odd.s[1] = 1;
    conv_case(odd, 1, NULL);
    odd.s[0] = odd.s[1] = 4, odd.k[0] = odd.k[1] = 5, odd.pb[0] = 2, odd.pe[1] = 2;
    conv_case(odd, 0, NULL);
    odd.s[0] = odd.s[1] = 2, odd.k[0] = 2, odd.k[1] = 4;
    conv_case(odd, 1, NULL);
    conv_case(b, 1, "SAME_UPPER");
    conv_case(b, 1, "VALID");
    cgeo_t narrow = b; /* stride 1, 8x8 and 4x6 outputs */
    narrow.s[0] = narrow.s[1] = 1, narrow.in[0] = narrow.in[1] = 8;
    narrow.C = 64, narrow.M = 64; /* K = 576 > KC */
    conv_case(narrow, 1, NULL);
    narrow.in[0] = 4, narrow.in[1] = 6, narrow.C = 5, narrow.M = 9;
    conv_case(narrow, 1, NULL);
    cgeo_t deep = b; /* K = 288 > KC */
    deep.C = 32, deep.M = 16, deep.in[0] = 9, deep.in[1] = 16;
    conv_case(deep, 1, NULL);
    cgeo_t many = b;
    many.N = 5, many.C = 16, many.M = 32, many.in[0] = many.in[1] = 32;
    dml_cpu_set_num_threads(2);
    conv_case(many, 1, NULL);
    cgeo_t single = many; /* one image over the split threshold */
    single.N = 1, single.C = 32, single.M = 64, single.in[0] = 45, single.in[1] = 46;
    conv_case(single, 1, NULL);
    dml_cpu_set_num_threads(3);
    conv_case(single, 0, NULL);
    dml_cpu_set_num_threads(1);
    g_conv_edges = 0;
    g_fused_stride = 2;
    for (int threads = 1; threads <= 2; threads++) {
      dml_cpu_set_num_threads(threads);
      for (int pack = 0; pack < 2; pack++) {
        fused_case(3, 5, 13, 1, 3, 16, 1, 1, pack);
        fused_case(2, 16, 32, 1, 1, 32, 1, 0, pack); /* 1x1 stride 2 */
        fused_case(1, 32, 64, 1, 3, 63, 0, 1, pack); /* one image, split */
      }
    }
    g_fused_stride = 1;
    for (int pack = 0; pack < 2; pack++) fused_case(4, 64, 64, 1, 3, 8, 1, 1, pack);
    dml_cpu_set_num_threads(1);
  }
  CHECK(ran >= 1);
  CHECK(dml_cpu_sgemm_set_kernel(0) == 0);
}

/* conv_case twice on the same inputs, the second with the small-image cv
 * tiles off (dml_cpu_conv_cvr_set(0)); exact: that run takes the flat
 * kernel (flat_ok), and the two give the same bits (NaN for NaN); else it
 * takes im2col + GEMM (another order: the naive check only). */
static void cvr_pair(cgeo_t g, int use_bias, const char *auto_pad, int exact) {
  uint32_t seed = g_rng;
  conv_case(g, use_bias, auto_pad);
  size_t n = g_conv_last_n;
  float *on = (float *)malloc(n * 4 + 4);
  memcpy(on, g_conv_last, n * 4);
  g_rng = seed;
  dml_cpu_conv_cvr_set(0);
  conv_case(g, use_bias, auto_pad);
  dml_cpu_conv_cvr_set(1);
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t u, v;
    memcpy(&u, &on[i], 4);
    memcpy(&v, &g_conv_last[i], 4);
    if (u != v && !(on[i] != on[i] && g_conv_last[i] != g_conv_last[i])) bad++;
  }
  if (bad && exact)
    fprintf(stderr,
            "cv small-image tiles C=%lld M=%lld in %lldx%lld s %lld: %zu differ\n",
            (long long)g.C, (long long)g.M, (long long)g.in[0], (long long)g.in[1],
            (long long)g.s[0], bad);
  CHECK(!exact || bad == 0);
  free(on);
}

/* The cv kernel's small-image tiles (cpu_conv.c, cvr_rows: 3-wide kernels,
 * output rows of 3, 5, 6 or 7; resnet18's layer3/layer4 at 96x96 inputs)
 * against the naive loop and, bit for bit, against the flat kernel they
 * replace where it takes the geometry (else im2col + GEMM): 3x3 outputs (stride 1 from
 * 3x3 padded, stride 2 from 6x6 and 5x5 unpadded, X read in place), 6x6 (stride 1, stride
 * 2 from 12x12, SAME_UPPER from 11x11), 5x5 and 7x7 (a last tile of one row), rows of 3
 * with 4 and 5 rows (a partial and a whole 5-row tile), asymmetric pads,
 * 3x1 kernels (kh 1..3), 64..512 channels and odd counts (67 -> 37), edge
 * values (NaN, +-Inf, -0, denormals, +-1e30) in X, batches over 2 threads
 * and one image's tiles over 2 threads; then the fused BatchNormalization /
 * Relu / residual epilogue against the separate kernels bit for bit at 3x3
 * and 6x6, strides 1 and 2, 1 and 2 threads. Elsewhere (no AVX-512) the
 * other paths answer the same checks (the pairs are then equal trivially). */
static void test_conv_cv_small(void) {
  /* r, N, C, M, group, in, k, s, d, pb, pe */
  cgeo_t a = {2,         2,         64,        64,        1,         {3, 3, 1},
              {3, 3, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 0}, {1, 1, 0}, {0}};
  cvr_pair(a, 1, NULL, 1);
  cvr_pair(a, 0, NULL, 1);
  cgeo_t b = a; /* 6x6 -> 3x3, stride 2, odd channel counts */
  b.in[0] = b.in[1] = 6, b.s[0] = b.s[1] = 2, b.C = 67, b.M = 37;
  cvr_pair(b, 1, NULL, 1);
  cgeo_t inpl = a; /* 5x5 -> 3x3 unpadded: X in place */
  inpl.in[0] = inpl.in[1] = 5, inpl.pb[0] = inpl.pb[1] = inpl.pe[0] = inpl.pe[1] = 0;
  cvr_pair(inpl, 1, NULL, 1);
  cgeo_t c6 = a; /* 6x6, stride 1: 2-row tiles */
  c6.in[0] = c6.in[1] = 6, c6.C = 128, c6.M = 40;
  cvr_pair(c6, 1, NULL, 1);
  cgeo_t s6 = c6; /* 12x12 -> 6x6, stride 2 */
  s6.in[0] = s6.in[1] = 12, s6.s[0] = s6.s[1] = 2, s6.C = 64, s6.M = 128;
  cvr_pair(s6, 1, NULL, 1);
  cvr_pair(s6, 1, "SAME_UPPER", 1);
  cgeo_t u6 = c6; /* 11x11, SAME_UPPER stride 2 -> 6x6 */
  u6.in[0] = u6.in[1] = 11, u6.s[0] = u6.s[1] = 2, u6.C = 19, u6.M = 33;
  cvr_pair(u6, 1, "SAME_UPPER", 1);
  cgeo_t c5 = a; /* 5x5 (3-row tiles), 7x7 (2-row tiles, a last one of 1 row) */
  c5.in[0] = c5.in[1] = 5, c5.C = 24, c5.M = 17;
  cvr_pair(c5, 1, NULL, 0);
  c5.in[0] = c5.in[1] = 7;
  cvr_pair(c5, 0, NULL, 1);
  cgeo_t r3 = a; /* rows of 3: 4 rows (a partial 5-row tile), 5 rows */
  r3.in[0] = 4, r3.C = 33, r3.M = 20;
  cvr_pair(r3, 1, NULL, 0);
  r3.in[0] = 10, r3.s[0] = 2; /* 10 rows, stride (2, 1) -> 5 rows */
  cvr_pair(r3, 1, NULL, 1);
  cgeo_t asym = a; /* pads (0, 1) x (2, 0): 5x5 -> 4x5 */
  asym.in[0] = 5, asym.in[1] = 5, asym.pb[0] = 0, asym.pe[0] = 1, asym.pb[1] = 2,
  asym.pe[1] = 0, asym.C = 20, asym.M = 16;
  cvr_pair(asym, 1, NULL, 1);
  cgeo_t k31 = a; /* 1x3 and 2x3 kernels: any kernel height */
  k31.k[0] = 1, k31.pb[0] = k31.pe[0] = 0, k31.in[0] = 4, k31.C = 10, k31.M = 18;
  cvr_pair(k31, 1, NULL, 0);
  k31.k[0] = 2, k31.in[0] = 4;
  cvr_pair(k31, 1, NULL, 1);
  g_conv_edges = 1;
  cvr_pair(a, 1, NULL, 1);
  cvr_pair(s6, 1, NULL, 1);
  g_conv_edges = 0;
  /* resnet18's layer4 conv at 96x96, 512 -> 512 at 3x3 (K 4608: within
   * 1e-5 of each output's sum of |x * w|) */
  g_conv_rel = 1e-5;
  cgeo_t big = a;
  big.N = 1, big.C = 512, big.M = 512;
  cvr_pair(big, 1, NULL, 1);
  dml_cpu_set_num_threads(2);
  cvr_pair(big, 1, NULL, 1); /* one image: its channel blocks' tiles split */
  cgeo_t l3 = s6;            /* layer3's first conv: 128 -> 256, 12x12 -> 6x6 */
  l3.N = 1, l3.C = 128, l3.M = 256;
  cvr_pair(l3, 1, NULL, 1);
  cgeo_t batch = c6; /* images over the threads */
  batch.N = 5, batch.C = 64, batch.M = 64;
  cvr_pair(batch, 1, NULL, 1);
  cvr_pair(b, 0, NULL, 1);
  g_conv_rel = 0;
  dml_cpu_set_num_threads(1);
  for (int threads = 1; threads <= 2; threads++) {
    dml_cpu_set_num_threads(threads);
    for (g_fused_res = 0; g_fused_res <= 2; g_fused_res++)
      for (int relu = 0; relu < 2; relu++)
        for (int pack = 0; pack < 2; pack++) {
          g_fused_stride = 1;
          fused_case(2, 64, 64, 1, 3, 3, 1, relu, pack);     /* 3x3 */
          fused_case(1, 256, 256, 1, 3, 6, 1, relu, pack);   /* 6x6 */
          fused_case(3, 13, 21, 1, 3, 5, !relu, relu, pack); /* 5x5 */
          g_fused_stride = 2;
          fused_case(1, 256, 512, 1, 3, 6, 1, relu, pack); /* 6x6 -> 3x3 */
          fused_case(2, 64, 128, 1, 3, 12, 1, relu, pack); /* 12x12 -> 6x6 */
        }
  }
  g_fused_res = 0;
  g_fused_stride = 1;
  dml_cpu_set_num_threads(1);
}

/* A residual Add in the epilogue (Conv + BatchNormalization + Add +
 * Relu, ResNet's block end) against the separate kernels, bit for bit, in
 * a buffer of its own and in the output's: the cv kernel (3x3 strides 1
 * and 2, 8x8 and 16x16; 1x1 stride 2 read in place), the direct pointwise
 * kernel (1x1 stride 1), the flat kernel (stride 3), im2col + GEMM
 * (grouped) and depthwise (the last two through the one-pass fall-back),
 * 1 and 2 threads. */
static void test_conv_fused_residual(void) {
  for (int threads = 1; threads <= 2; threads++) {
    dml_cpu_set_num_threads(threads);
    for (g_fused_res = 1; g_fused_res <= 2; g_fused_res++)
      for (int relu = 0; relu < 2; relu++)
        for (int pack = 0; pack < 2; pack++) {
          g_fused_stride = 1;
          fused_case(2, 16, 16, 1, 3, 16, 1, relu, pack);
          fused_case(3, 64, 64, 1, 3, 8, 1, relu, pack);
          fused_case(2, 5, 20, 1, 3, 8, 0, relu, pack);
          fused_case(2, 16, 24, 1, 1, 12, 1, relu, pack); /* pointwise */
          fused_case(3, 40, 35, 1, 1, 3, 1, relu, pack);  /* pointwise 3x3: cv */
          /* pointwise, packed 256-position chunks: mobilenet_tiny's pw0,
           * and odd channel counts with a partial last vector */
          fused_case(2, 16, 32, 1, 1, 32, 1, relu, pack);
          fused_case(2, 11, 13, 1, 1, 17, 1, relu, pack);
          fused_case(3, 8, 8, 2, 3, 7, 1, relu, pack); /* grouped */
          fused_case(2, 6, 6, 6, 3, 10, 1, relu, 0);   /* depthwise */
          fused_case(2, 6, 6, 6, 3, 32, 1, relu, 0);   /* depthwise, rows kernel */
          g_fused_stride = 2;
          fused_case(2, 16, 32, 1, 3, 16, 1, relu, pack);
          fused_case(2, 16, 32, 1, 1, 32, 1, relu, pack); /* 1x1: X in place */
          g_fused_stride = 3;
          fused_case(2, 8, 16, 1, 3, 17, 1, relu, pack);
        }
    g_fused_stride = 1;
    fused_case(1, 64, 64, 1, 3, 32, 1, 1, 1); /* one image, split */
  }
  g_fused_res = 0;
  g_fused_stride = 1;
  dml_cpu_set_num_threads(1);
  /* Error: a residual on a MatMul. */
  float a[4] = {0}, b[4] = {0}, y[4], r[4] = {0};
  dml_tensor_t in[2] = {tens(DML_DTYPE_F32, a, 2, D(2), D(2)),
                        tens(DML_DTYPE_F32, b, 2, D(2), D(2))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 2, D(2), D(2));
  dml_cpu_call_t call = cpu_call(DML_OP_MATMUL, "fused", in, 2, &out, 1, NULL, 0);
  dml_cpu_epilogue_t ep = {.residual = r};
  CHECK_ERROR(dml_cpu_run_fused(&call, &ep), DML_STATUS_INVALID_ARGUMENT, "residual");
}

static void test_conv_fused_epilogue(void) {
  for (int threads = 1; threads <= 2; threads++) {
    dml_cpu_set_num_threads(threads);
    for (int bn = 0; bn < 2; bn++)
      for (int relu = 0; relu < 2; relu++)
        for (int pack = 0; pack < 2; pack++) {
          fused_case(2, 3, 16, 1, 3, 9, bn, relu, pack);
          fused_case(3, 8, 8, 2, 3, 7, bn, relu, pack);
          fused_case(2, 6, 6, 6, 3, 10, bn, relu, pack); /* depthwise */
          fused_case(2, 16, 17, 1, 1, 5, bn, relu, pack);
          fused_case(1, 300, 7, 1, 1, 3, bn, relu, pack); /* K > KC, M < mr */
          /* pointwise, packed 256-position chunks, 4-row tiles: K 16, M 32
           * (mobilenet_tiny's pw0), K 5, M 6 (a partial tile) at 18x18 */
          fused_case(2, 16, 32, 1, 1, 32, bn, relu, pack);
          fused_case(2, 5, 6, 1, 1, 18, bn, relu, pack);
          /* pointwise images of 9 and 4 positions (cv's one partial tile) */
          fused_case(2, 96, 24, 1, 1, 3, bn, relu, pack);
          fused_case(3, 17, 40, 1, 1, 2, bn, relu, pack);
        }
    /* ResNet-like, above the split threshold */
    fused_case(32, 16, 32, 1, 3, 32, 1, 1, 1);
    /* mobilenet_tiny's pw0 at batch 32: images over the threads */
    fused_case(32, 16, 32, 1, 1, 32, 1, 1, 1);
  }
  dml_cpu_set_num_threads(1);
  /* Errors: only one of scale/shift; not a Conv. */
  float x[16] = {0}, w[4] = {0}, y[16], s[1] = {1};
  dml_tensor_t in[2] = {tens(DML_DTYPE_F32, x, 4, D(1), D(1), D(4), D(4)),
                        tens(DML_DTYPE_F32, w, 4, D(1), D(1), D(2), D(2))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 4, D(1), D(1), D(3), D(3));
  dml_cpu_call_t call = cpu_call(DML_OP_CONV, "fused", in, 2, &out, 1, NULL, 0);
  dml_cpu_epilogue_t half = {.scale = s};
  CHECK_ERROR(dml_cpu_run_fused(&call, &half), DML_STATUS_INVALID_ARGUMENT, "shift");
  call.op = DML_OP_RELU;
  CHECK_ERROR(dml_cpu_run_fused(&call, NULL), DML_STATUS_INVALID_ARGUMENT, "Conv");
}

/* Gemm and MatMul with B packed beforehand (dml_cpu_prepack) and a fused
 * Relu against the plain kernels then Relu's formula: the same bits, on
 * sizes around the tiles (1, 7, 17, 255, 257, 300; K over the KC block),
 * both transB, 1 and 2 threads. */
static void packed_gemm_case(dml_op_t op, int64_t M, int64_t N, int64_t K, int tb,
                             int relu) {
  float *A = frand_buf((size_t)(M * K)), *B = frand_buf((size_t)(K * N));
  float *bias = frand_buf((size_t)N);
  float *Y = (float *)malloc((size_t)(M * N) * 4),
        *R = (float *)malloc((size_t)(M * N) * 4);
  A[0] = NAN;
  dml_tensor_t in[3] = {
      tens(DML_DTYPE_F32, A, 2, D(M), D(K)),
      tb ? tens(DML_DTYPE_F32, B, 2, D(N), D(K)) : tens(DML_DTYPE_F32, B, 2, D(K), D(N)),
      tens(DML_DTYPE_F32, bias, 1, D(N))};
  dml_attr_t at[1] = {attr_i("transB", tb)};
  uint32_t nin = op == DML_OP_GEMM ? 3 : 2, na = op == DML_OP_GEMM ? 1 : 0;
  dml_tensor_t out = tens(DML_DTYPE_F32, R, 2, D(M), D(N));
  CHECK_OK(run_op(op, in, nin, &out, 1, at, na));
  if (relu)
    for (int64_t i = 0; i < M * N; i++) R[i] = R[i] < 0.0f ? 0.0f : R[i];
  size_t pb = dml_cpu_prepack_bytes(op, &in[1], at, na);
  CHECK(pb > 0);
  void *packed = malloc(pb ? pb : 1);
  dml_cpu_prepack(op, &in[1], at, na, packed);
  dml_tensor_t out2 = tens(DML_DTYPE_F32, Y, 2, D(M), D(N));
  dml_cpu_call_t call = cpu_call(op, "packed", in, nin, &out2, 1, at, na);
  size_t sb = dml_cpu_scratch_bytes(&call);
  call.scratch = sb ? malloc(sb) : NULL;
  call.scratch_bytes = sb;
  dml_cpu_epilogue_t ep = {.relu = relu, .packed = packed};
  CHECK_OK(dml_cpu_run_fused(&call, &ep));
  size_t bad = 0;
  for (int64_t i = 0; i < M * N; i++)
    if (memcmp(&Y[i], &R[i], 4) != 0 && !(Y[i] != Y[i] && R[i] != R[i])) bad++;
  if (bad)
    fprintf(stderr, "packed %s M=%lld N=%lld K=%lld tb=%d relu=%d: %zu differ\n",
            dml_op_name(op), (long long)M, (long long)N, (long long)K, tb, relu, bad);
  CHECK(bad == 0);
  free(call.scratch), free(packed), free(A), free(B), free(bias), free(Y), free(R);
}

static void test_gemm_prepacked(void) {
  static const int64_t sz[] = {1, 2, 7, 17, 255, 300};
  for (int threads = 1; threads <= 2; threads++) {
    dml_cpu_set_num_threads(threads);
    for (size_t i = 0; i < 6; i++)
      for (size_t j = 0; j < 5; j++)
        for (size_t k = 0; k < 5; k += 2) {
          packed_gemm_case(DML_OP_GEMM, sz[i], sz[j], sz[k], (int)((i + j) & 1),
                           (int)(k & 2) >> 1);
          packed_gemm_case(DML_OP_MATMUL, sz[i], sz[j], sz[k], 0, (int)((i + k) & 1));
        }
    packed_gemm_case(DML_OP_GEMM, 64, 2100, 600, 1, 1); /* N over the NC block */
    packed_gemm_case(DML_OP_GEMM, 200, 300, 257, 0, 0); /* above the split threshold */
  }
  dml_cpu_set_num_threads(1);
}

/* Every micro-kernel this machine has (portable C always, AVX2+FMA,
 * AVX-512) against the naive double loop (gemm_case, 1e-4) and against
 * each other within 1e-4, on edge sizes; then back to the default. */
static void test_gemm_kernels(void) {
  static const int64_t sz[] = {1, 7, 17, 255};
  int ran = 0;
  for (int which = 1; which <= 3; which++) {
    if (dml_cpu_sgemm_set_kernel(which) != 0) continue;
    ran++;
    for (size_t i = 0; i < 4; i++)
      for (size_t j = 0; j < 4; j++)
        for (size_t k = 0; k < 4; k++)
          gemm_case(sz[i], sz[j], sz[k], (int)(i & 1), (int)(j & 1), (int)(k % 3), 1.0,
                    0.5);
    gemm_case(100, 70, 600, 0, 1, 1, 0.7, 0.3);
    /* packed B read by the small-M path and by the packed path, this kernel */
    for (int64_t m = 1; m <= 3; m++)
      for (int tb = 0; tb < 2; tb++) {
        packed_gemm_case(DML_OP_GEMM, m, 300, 600, tb, tb);
        packed_gemm_case(DML_OP_MATMUL, m, 17, 7, 0, 0);
      }
    dml_cpu_set_num_threads(2);
    gemm_case(300, 400, 300, 1, 0, 2, 1.0, 1.0);
    dml_cpu_set_num_threads(1);
  }
  CHECK(ran >= 1); /* portable C is always there */
  CHECK(dml_cpu_sgemm_set_kernel(0) == 0);
}

static void test_conv_1d_3d(void) {
  cgeo_t c1 = {1,         2,         3,         5,         1,         {17, 1, 1},
               {4, 1, 1}, {2, 1, 1}, {2, 1, 1}, {3, 0, 0}, {1, 0, 0}, {0}};
  conv_case(c1, 1, NULL);
  cgeo_t c3 = {3,         1,         2,         3,         1,         {5, 6, 4},
               {2, 3, 2}, {1, 2, 1}, {1, 1, 2}, {1, 0, 1}, {0, 1, 1}, {0}};
  conv_case(c3, 1, NULL);
}

static void test_conv_f64_and_errors(void) {
  /* f64 1-D: x = [1,2,3,4], w = [1,-1] -> [-1,-1,-1] */
  double x[4] = {1, 2, 3, 4}, w[2] = {1, -1}, y[3];
  dml_tensor_t in[2] = {tens(DML_DTYPE_F64, x, 3, D(1), D(1), D(4)),
                        tens(DML_DTYPE_F64, w, 3, D(1), D(1), D(2))};
  dml_tensor_t out = tens(DML_DTYPE_F64, y, 3, D(1), D(1), D(3));
  CHECK_OK(run_op(DML_OP_CONV, in, 2, &out, 1, NULL, 0));
  CHECK(y[0] == -1 && y[1] == -1 && y[2] == -1);
  dml_tensor_t bad = tens(DML_DTYPE_F64, y, 3, D(1), D(1), D(2));
  CHECK_ERROR(run_op(DML_OP_CONV, in, 2, &bad, 1, NULL, 0), DML_STATUS_INVALID_ARGUMENT,
              "output 2");
  int32_t xi[4] = {0}, wi[2] = {0}, yi[3];
  dml_tensor_t ini[2] = {tens(DML_DTYPE_I32, xi, 3, D(1), D(1), D(4)),
                         tens(DML_DTYPE_I32, wi, 3, D(1), D(1), D(2))};
  dml_tensor_t outi = tens(DML_DTYPE_I32, yi, 3, D(1), D(1), D(3));
  CHECK_ERROR(run_op(DML_OP_CONV, ini, 2, &outi, 1, NULL, 0), DML_STATUS_UNIMPLEMENTED,
              "rt.cpu.Conv");
}

/* ---- ConvTranspose ---------------------------------------------------- */

static void ct_case(int r, int64_t N, int64_t C, int64_t M, int64_t group,
                    const int64_t *in, const int64_t *k, const int64_t *s,
                    const int64_t *d, const int64_t *pads, const int64_t *opad,
                    int threads) {
  int64_t out[3] = {1, 1, 1}, in3[3] = {1, 1, 1}, k3[3] = {1, 1, 1};
  int64_t in_sz = 1, out_sz = 1, k_sz = 1, Cg = C / group, Mg = M / group;
  for (int i = 0; i < r; i++) {
    out[i] = s[i] * (in[i] - 1) + opad[i] + (k[i] - 1) * d[i] + 1 - pads[i] - pads[r + i];
    in3[i] = in[i], k3[i] = k[i];
    in_sz *= in[i], out_sz *= out[i], k_sz *= k[i];
  }
  size_t nx = (size_t)(N * C * in_sz), nw = (size_t)(C * Mg * k_sz),
         ny = (size_t)(N * M * out_sz);
  float *x = frand_buf(nx), *w = frand_buf(nw), *b = frand_buf((size_t)M);
  float *y = (float *)malloc(ny * 4), *ref = (float *)calloc(ny, sizeof(double));
  double *acc = (double *)calloc(ny, sizeof(double));
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t i = 0; i < in_sz; i++)
        for (int64_t m = 0; m < Mg; m++)
          for (int64_t kk = 0; kk < k_sz; kk++) {
            int64_t ii[3], ki[3], rem = i, kr = kk, off = 0, ok = 1;
            for (int q = r - 1; q >= 0; q--) ii[q] = rem % in[q], rem /= in[q];
            for (int q = r - 1; q >= 0; q--) ki[q] = kr % k[q], kr /= k[q];
            for (int q = 0; q < r; q++) {
              int64_t p = ii[q] * s[q] - pads[q] + ki[q] * d[q];
              if (p < 0 || p >= out[q]) ok = 0;
              off = off * out[q] + p;
            }
            if (!ok) continue;
            int64_t oc = (c / Cg) * Mg + m;
            acc[(n * M + oc) * out_sz + off] +=
                (double)x[(n * C + c) * in_sz + i] * w[(c * Mg + m) * k_sz + kk];
          }
  for (size_t i = 0; i < ny; i++)
    ref[i] = (float)(acc[i] + b[(i / (size_t)out_sz) % (size_t)M]);
  dml_tensor_t tin[3] = {tens(DML_DTYPE_F32, x, r + 2, N, C, in3[0], in3[1], in3[2]),
                         tens(DML_DTYPE_F32, w, r + 2, C, Mg, k3[0], k3[1], k3[2]),
                         tens(DML_DTYPE_F32, b, 1, M)};
  dml_tensor_t tout = tens(DML_DTYPE_F32, y, r + 2, N, M, out[0], out[1], out[2]);
  dml_attr_t at[5] = {attr_ints("strides", s, (size_t)r),
                      attr_ints("dilations", d, (size_t)r), attr_i("group", group),
                      attr_ints("pads", pads, 2 * (size_t)r),
                      attr_ints("output_padding", opad, (size_t)r)};
  dml_cpu_set_num_threads(threads);
  CHECK_OK(run_op(DML_OP_CONV_TRANSPOSE, tin, 3, &tout, 1, at, 5));
  dml_cpu_set_num_threads(1);
  CHECK(max_abs_diff(y, ref, ny) < 1e-4);
  free(x), free(w), free(b), free(y), free(ref), free(acc);
}

static void test_conv_transpose(void) {
  int64_t in[3] = {4, 5, 3}, k[3] = {3, 3, 2}, s1[3] = {1, 1, 1}, s2[3] = {2, 3, 2};
  int64_t d1[3] = {1, 1, 1}, d2[3] = {2, 1, 1};
  int64_t p0[6] = {0}, p1[6] = {1, 0, 1, 0, 1, 1};
  int64_t op0[3] = {0}, op1[3] = {1, 2, 0};
  ct_case(2, 1, 2, 3, 1, in, k, s1, d1, p0, op0, 1);
  ct_case(2, 2, 4, 6, 2, in, k, s2, d2, p1, op1, 1);
  ct_case(2, 2, 4, 6, 2, in, k, s2, d2, p1, op1, 2);
  ct_case(1, 2, 3, 2, 1, in, k, s2, d2, p1, op1, 1);
  ct_case(3, 1, 2, 2, 1, in, k, s2, d1, p1, op0, 1);
}

static void test_conv_transpose_output_shape(void) {
  /* 1-D, x=[1,2], w=[1,1,1], stride 2: full output length 5 = [1,1,3,2,2];
   * output_shape [4] with NOTSET: total pad 1 -> pb=1 (begin gets the extra). */
  float x[2] = {1, 2}, w[3] = {1, 1, 1}, y[4];
  int64_t st[1] = {2}, os[1] = {4};
  dml_tensor_t in[2] = {tens(DML_DTYPE_F32, x, 3, D(1), D(1), D(2)),
                        tens(DML_DTYPE_F32, w, 3, D(1), D(1), D(3))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 3, D(1), D(1), D(4));
  dml_attr_t at[2] = {attr_ints("strides", st, 1), attr_ints("output_shape", os, 1)};
  CHECK_OK(run_op(DML_OP_CONV_TRANSPOSE, in, 2, &out, 1, at, 2));
  CHECK(y[0] == 1 && y[1] == 3 && y[2] == 2 && y[3] == 2);
  dml_attr_t at2[2] = {attr_ints("strides", st, 1), attr_s("auto_pad", "SAME_UPPER")};
  CHECK_OK(run_op(DML_OP_CONV_TRANSPOSE, in, 2, &out, 1, at2, 2));
  CHECK(y[0] == 1 && y[1] == 1 && y[2] == 3 && y[3] == 2);
}

int main(void) {
  /* every job offered to the workers: the parallel paths run on a loaded
   * machine too (test_pool_backoff turns the back-off on) */
  dml_cpu_pool_backoff_set(0);
  RUN(test_gemm_sizes);
  RUN(test_gemm_threads);
  RUN(test_gemm_rows_independent);
  RUN(test_pool_jobs);
  RUN(test_pool_backoff);
  RUN(test_gemm_f64_i32);
  RUN(test_gemm_errors);
  RUN(test_matmul_batched);
  RUN(test_matmul_1d);
  RUN(test_conv2d_variants);
  RUN(test_conv_cv);
  RUN(test_conv_cv_small);
  RUN(test_conv_winograd);
  RUN(test_conv_fused_residual);
  RUN(test_conv_depthwise_flat);
  RUN(test_conv_depthwise);
  RUN(test_conv_fused_epilogue);
  RUN(test_conv_depthwise_paths);
  RUN(test_conv_direct);
  RUN(test_conv_flat);
  RUN(test_gemm_prepacked);
  RUN(test_gemm_kernels);
  RUN(test_conv_1d_3d);
  RUN(test_conv_f64_and_errors);
  RUN(test_conv_transpose);
  RUN(test_conv_transpose_output_shape);
  return dml_test_finish();
}
