/* test_vulkan_rows.c — reductions, Softmax, LogSoftmax, LayerNormalization,
 * InstanceNormalization, ArgMax/ArgMin, Hardmax and max-pooling over long rows, many
 * rows and NaN/±inf on the default Vulkan device (Mesa's lavapipe in CI;
 * codegen/schedule_rows.c's cooperative form, docs/kernels.md "Long
 * rows"). Lavapipe stops the loops of an invocation after 65,535 iterations
 * in all, so a serial loop over a row of 4M values summed 65,535 of them
 * (issue 15): rows of 1, 257, 65,535, 65,536, 100,000, 4M and 2^24 + 5,
 * 65,537 rows (more rows than a grid dimension counts workgroups), and
 * grids of more than 65,535 workgroups (dispatched in parts).
 *
 * References and tolerances: long rows against an f64 reference computed
 * here, |vulkan - ref| <= 2e-5 * max(1, |ref|) (f32 sums in 4 accumulators
 * per invocation and a tree: about length / 1024 additions in sequence;
 * the inputs are positive, so that bound is relative to the sum of |x|);
 * indices exactly; NaN where the reference has NaN, ±inf equal. The NaN
 * cases (ReduceMax/Min, pools, ArgMax/ArgMin) against the CPU session
 * element for element (NaN propagates in max/min and max-pooling; ArgMax
 * skips NaN after element 0 on both). Skips (77) without a Vulkan device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen_test_util.h"
#include "gpu_test_util.h"
#include "vulkan_forms.h"

#define TOL 2e-5

static dml_tensor_t tensor_f32(float *x, int32_t rank, const int64_t *dims) {
  dml_tensor_t t;
  memset(&t, 0, sizeof t);
  t.dtype = DML_DTYPE_F32;
  t.rank = rank;
  for (int32_t d = 0; d < rank; d++) t.dims[d] = dims[d];
  t.data = x;
  return t;
}

/* 1 when a (f32) and reference r agree: both NaN, equal, or within TOL. */
static int close_to(double a, double r, double tol) {
  if (isnan(r) || isnan(a)) return isnan(r) && isnan(a);
  if (isinf(r) || isinf(a)) return a == r;
  return fabs(a - r) <= tol * fmax(1.0, fabs(r));
}

/* Checks output `o` (f32 or i64, n elements) of `s` against ref[]. */
static void check_output(const char *what, dml_rt_session_t *s, uint32_t o,
                         const double *ref, int64_t n, double tol) {
  dml_tensor_t t;
  memset(&t, 0, sizeof t);
  CHECK_OK(dml_rt_session_get_output(s, o, &t));
  CHECK(dml_dims_numel(t.dims, t.rank) == n);
  if (dml_dims_numel(t.dims, t.rank) != n || !t.data) return;
  int64_t bad = 0;
  double worst = 0;
  for (int64_t i = 0; i < n; i++) {
    double a = t.dtype == DML_DTYPE_I64 ? (double)((const int64_t *)t.data)[i]
                                        : (double)((const float *)t.data)[i];
    int ok = t.dtype == DML_DTYPE_I64 ? a == ref[i] : close_to(a, ref[i], tol);
    if (!isnan(ref[i]) && !isinf(ref[i]) && !isnan(a))
      worst = fmax(worst, fabs(a - ref[i]) / fmax(1.0, fabs(ref[i])));
    if (!ok && bad++ < 4)
      fprintf(stderr, "  %s output %u element %lld: %.9g, want %.9g\n", what, o,
              (long long)i, a, ref[i]);
  }
  printf("%-44s output %u: %lld elements, max scaled error %.2e\n", what, o, (long long)n,
         worst);
  CHECK(bad == 0);
}

/* Compiles `text` for cpu,vulkan, runs both on the inputs and returns the
 * model and sessions (NULL on a failure). */
static dml_rt_model_t *run_pair(const char *text, const dml_tensor_t *in, uint32_t n_in,
                                dml_rt_session_t **cpu, dml_rt_session_t **vk) {
  dml_rt_model_t *m = vk_open_pair(text, cpu, vk);
  if (!m || !*cpu || !*vk) return m;
  for (uint32_t i = 0; i < n_in; i++) {
    CHECK_OK(dml_rt_session_set_input(*cpu, i, &in[i]));
    CHECK_OK(dml_rt_session_set_input(*vk, i, &in[i]));
  }
  CHECK_OK(dml_rt_session_run(*cpu));
  CHECK_OK(dml_rt_session_run(*vk));
  return m;
}

/* Every output of `vk` against `cpu`'s (NaN positions, ±inf, indices
 * exactly; finite values within TOL). */
static void check_against_cpu(const char *what, dml_rt_model_t *m, dml_rt_session_t *cpu,
                              dml_rt_session_t *vk) {
  for (uint32_t o = 0; cpu && vk && o < dml_rt_model_num_outputs(m); o++) {
    dml_tensor_t c;
    memset(&c, 0, sizeof c);
    CHECK_OK(dml_rt_session_get_output(cpu, o, &c));
    int64_t n = dml_dims_numel(c.dims, c.rank);
    double *ref = malloc(sizeof(double) * (size_t)(n ? n : 1));
    for (int64_t i = 0; ref && c.data && i < n; i++)
      ref[i] = c.dtype == DML_DTYPE_I64 ? (double)((const int64_t *)c.data)[i]
                                        : (double)((const float *)c.data)[i];
    if (ref) check_output(what, vk, o, ref, n, TOL);
    free(ref);
  }
}

/* One row of n elements: Sum, Mean, Max, Min, L2, LogSumExp, ArgMax,
 * ArgMin against f64 references; x[i] in [0.5, 1.5) with the max at
 * n - 3 and the min at n / 3 (n > 3). */
static void check_long_row(int64_t n) {
  char text[2048];
  snprintf(text, sizeof text,
           "func @forward(%%x: f32[%lld]) -> (f32[], f32[], f32[], f32[], f32[], f32[], "
           "i64[], i64[]) {\n"
           "  %%s = ReduceSum(%%x) {keepdims = 0} : f32[]\n"
           "  %%m = ReduceMean(%%x) {keepdims = 0} : f32[]\n"
           "  %%mx = ReduceMax(%%x) {keepdims = 0} : f32[]\n"
           "  %%mn = ReduceMin(%%x) {keepdims = 0} : f32[]\n"
           "  %%l2 = ReduceL2(%%x) {keepdims = 0} : f32[]\n"
           "  %%lse = ReduceLogSumExp(%%x) {keepdims = 0} : f32[]\n"
           "  %%am = ArgMax(%%x) {axis = 0, keepdims = 0} : i64[]\n"
           "  %%an = ArgMin(%%x) {axis = 0, keepdims = 0} : i64[]\n"
           "  return %%s, %%m, %%mx, %%mn, %%l2, %%lse, %%am, %%an\n}\n",
           (long long)n);
  float *x = malloc(sizeof(float) * (size_t)n);
  if (!x) return;
  gpu_test_seed(7);
  double sum = 0, sq = 0, mx = -INFINITY, lse = 0;
  for (int64_t i = 0; i < n; i++) {
    x[i] = 1.0f + 0.5f * gpu_test_frand();
    if (i == n - 3) x[i] = 3.0f;
    if (i == n / 3) x[i] = 0.25f;
  }
  for (int64_t i = 0; i < n; i++) {
    sum += x[i];
    sq += (double)x[i] * x[i];
    mx = fmax(mx, x[i]);
  }
  for (int64_t i = 0; i < n; i++) lse += exp(x[i] - mx);
  double ref[8] = {sum,
                   sum / (double)n,
                   3.0,
                   0.25,
                   sqrt(sq),
                   log(lse) + mx,
                   (double)(n - 3),
                   (double)(n / 3)};
  dml_tensor_t t = tensor_f32(x, 1, &n);
  dml_rt_session_t *cpu = NULL, *vk = NULL;
  dml_rt_model_t *m = run_pair(text, &t, 1, &cpu, &vk);
  char what[64];
  snprintf(what, sizeof what, "reductions, one row of %lld", (long long)n);
  for (uint32_t o = 0; vk && o < 8; o++) check_output(what, vk, o, &ref[o], 1, TOL);
  gpu_test_close(m, cpu, vk);
  free(x);
}

/* The case: the sum of 4,194,304 values of -1 (exact in f32). */
static void test_sum_of_minus_ones(void) {
  int64_t n = 4194304;
  float *x = malloc(sizeof(float) * (size_t)n);
  if (!x) return;
  for (int64_t i = 0; i < n; i++) x[i] = -1.0f;
  dml_tensor_t t = tensor_f32(x, 1, &n);
  dml_rt_session_t *cpu = NULL, *vk = NULL;
  dml_rt_model_t *m = run_pair(
      "func @forward(%x: f32[4194304]) -> (f32[]) {\n"
      "  %s = ReduceSum(%x) {keepdims = 0} : f32[]\n  return %s\n}\n",
      &t, 1, &cpu, &vk);
  double want = -4194304.0;
  if (vk) check_output("sum of 4194304 x -1", vk, 0, &want, 1, 0.0);
  gpu_test_close(m, cpu, vk);
  free(x);
}

static void test_long_rows(void) {
  static const int64_t lens[] = {257, 65535, 65536, 100000};
  for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) check_long_row(lens[i]);
}

/* ReduceSum, ReduceMax, ReduceMin, ArgMax, ArgMin (first and last) over a
 * row of 2^24 + 5 values: ones, 2 at the end (index 16,777,220, not an
 * exact f32), 0.5 at element 5 (partial sums exact in f32; the sum rounds
 * once, within 1e-7 of the f64 sum; indices exactly). */
static void test_row_over_2_24(void) {
  int64_t n = (1 << 24) + 5;
  float *x = malloc(sizeof(float) * (size_t)n);
  if (!x) return;
  for (int64_t i = 0; i < n; i++) x[i] = 1.0f;
  x[n - 1] = 2.0f;
  x[5] = 0.5f;
  char text[1024];
  snprintf(
      text, sizeof text,
      "func @forward(%%x: f32[%lld]) -> (f32[], f32[], f32[], i64[], i64[], i64[]) {\n"
      "  %%s = ReduceSum(%%x) {keepdims = 0} : f32[]\n"
      "  %%mx = ReduceMax(%%x) {keepdims = 0} : f32[]\n"
      "  %%mn = ReduceMin(%%x) {keepdims = 0} : f32[]\n"
      "  %%am = ArgMax(%%x) {axis = 0, keepdims = 0} : i64[]\n"
      "  %%an = ArgMin(%%x) {axis = 0, keepdims = 0} : i64[]\n"
      "  %%al = ArgMin(%%x) {axis = 0, keepdims = 0, select_last_index = 1} : i64[]\n"
      "  return %%s, %%mx, %%mn, %%am, %%an, %%al\n}\n",
      (long long)n);
  dml_tensor_t t = tensor_f32(x, 1, &n);
  dml_rt_session_t *cpu = NULL, *vk = NULL;
  dml_rt_model_t *m = run_pair(text, &t, 1, &cpu, &vk);
  double want[6] = {(double)n + 0.5, 2.0, 0.5, (double)(n - 1), 5.0, 5.0};
  for (uint32_t o = 0; vk && o < 6; o++)
    check_output("row of 2^24 + 5", vk, o, &want[o], 1, 1e-7);
  gpu_test_close(m, cpu, vk);
  free(x);
}

/* Softmax and LogSoftmax of 5 rows of 100,000: a spike at 77,777, 70,000
 * leading -inf, every element -inf (NaN, as on the CPU: -inf - -inf), a NaN
 * (NaN everywhere), random values; against f64 references. */
static void test_softmax_long(void) {
  const int64_t R = 5, L = 100000;
  int64_t dims[2] = {R, L};
  float *x = malloc(sizeof(float) * (size_t)(R * L));
  double *ref = malloc(sizeof(double) * (size_t)(R * L)),
         *lref = malloc(sizeof(double) * (size_t)(R * L));
  if (!x || !ref || !lref) goto out;
  gpu_test_seed(11);
  for (int64_t i = 0; i < R * L; i++) {
    int64_t r = i / L, j = i % L;
    x[i] = r == 0   ? (j == 77777 ? 30.0f : 0.0f)
           : r == 1 ? (j < 70000 ? -INFINITY : 0.5f)
           : r == 2 ? -INFINITY
           : r == 3 ? (j == 123 ? NAN : 1.0f)
                    : 4.0f * gpu_test_frand();
  }
  for (int64_t r = 0; r < R; r++) {
    const float *xr = x + r * L;
    double m = -INFINITY, s = 0;
    int nan = 0;
    for (int64_t j = 0; j < L; j++) m = fmax(m, xr[j]), nan |= isnan(xr[j]);
    for (int64_t j = 0; j < L; j++) s += exp((double)xr[j] - m);
    for (int64_t j = 0; j < L; j++) {
      double d = (double)xr[j] - m;
      ref[r * L + j] = nan || isinf(m) ? NAN : exp(d) / s;
      lref[r * L + j] = nan || isinf(m) ? NAN : d - log(s);
    }
  }
  dml_tensor_t t = tensor_f32(x, 2, dims);
  dml_rt_session_t *cpu = NULL, *vk = NULL;
  dml_rt_model_t *m = run_pair(
      "func @forward(%x: f32[5,100000]) -> (f32[5,100000], "
      "f32[5,100000]) {\n"
      "  %s = Softmax(%x) {axis = 1} : f32[5,100000]\n"
      "  %l = LogSoftmax(%x) {axis = -1} : f32[5,100000]\n"
      "  return %s, %l\n}\n",
      &t, 1, &cpu, &vk);
  if (vk) check_output("softmax, 5 rows of 100000", vk, 0, ref, R * L, TOL);
  if (vk) check_output("log-softmax, 5 rows of 100000", vk, 1, lref, R * L, TOL);
  gpu_test_close(m, cpu, vk);
out:
  free(x), free(ref), free(lref);
}

/* Hardmax over rows of 100,000 (a spike, 70,000 leading -inf, all -inf,
 * a NaN, ties at the max) and of 3 (NaN, ties), against the CPU: 1 at the
 * first max, or at the first NaN of a row holding one. */
static void test_hardmax(void) {
  const int64_t R = 5, L = 100000;
  int64_t dims[2] = {R, L}, ds[2] = {4, 3};
  float *x = malloc(sizeof(float) * (size_t)(R * L));
  float z[12] = {1, NAN, 3, 2, 2, 1, -INFINITY, -INFINITY, -INFINITY, NAN, 5, NAN};
  if (!x) return;
  gpu_test_seed(17);
  for (int64_t i = 0; i < R * L; i++) {
    int64_t r = i / L, j = i % L;
    x[i] = r == 0   ? (j == 77777 ? 30.0f : 0.0f)
           : r == 1 ? (j < 70000 ? -INFINITY : (j == 99999 ? 2.0f : 0.5f))
           : r == 2 ? -INFINITY
           : r == 3 ? (j == 50123 ? NAN : (j == 7 ? 9.0f : 1.0f))
                    : (j % 1000 == 999 ? 3.0f : gpu_test_frand());
  }
  dml_tensor_t t[2] = {tensor_f32(x, 2, dims), tensor_f32(z, 2, ds)};
  dml_rt_session_t *cpu = NULL, *vk = NULL;
  dml_rt_model_t *m = run_pair(
      "func @forward(%x: f32[5,100000], %z: f32[4,3]) -> "
      "(f32[5,100000], f32[4,3]) {\n"
      "  %h = Hardmax(%x) {axis = 1} : f32[5,100000]\n"
      "  %hz = Hardmax(%z) {axis = 1} : f32[4,3]\n"
      "  return %h, %hz\n}\n",
      t, 2, &cpu, &vk);
  check_against_cpu("hardmax, rows of 100000 and of 3", m, cpu, vk);
  gpu_test_close(m, cpu, vk);
  free(x);
}

/* 65,537 rows of 257 (more rows than 65,535 workgroups: workgroup 0 and 1
 * take two turns) and 100,000 rows of 3 (one invocation per row, a NaN):
 * ReduceSum over the rows and ReduceMax over the 65,537 (the turns of
 * Softmax and the norms are the same code, schedule_rows.c), ReduceMax and
 * Softmax over the short rows, against the CPU. */
static void test_many_rows(void) {
  const int64_t A = 65537, B = 257;
  int64_t d1[2] = {A, B}, d2[2] = {100000, 3};
  float *x = malloc(sizeof(float) * (size_t)(A * B)), *z = malloc(sizeof(float) * 300000);
  const char *text;
  if (!x || !z) goto out;
  gpu_test_seed(5);
  for (int64_t i = 0; i < A * B; i++) x[i] = 1.0f + gpu_test_frand();
  for (int64_t i = 0; i < 300000; i++) z[i] = gpu_test_frand();
  z[7] = NAN;
  dml_tensor_t t[2] = {tensor_f32(x, 2, d1), tensor_f32(z, 2, d2)};
  text =
      "func @forward(%x: f32[65537,257], %z: f32[100000,3]) -> (f32[65537], "
      "f32[257], f32[100000], f32[100000,3]) {\n"
      "  %s = ReduceSum(%x) {axes = [1], keepdims = 0} : f32[65537]\n"
      "  %c = ReduceMax(%x) {axes = [0], keepdims = 0} : f32[257]\n"
      "  %zm = ReduceMax(%z) {axes = [1], keepdims = 0} : f32[100000]\n"
      "  %zs = Softmax(%z) {axis = 1} : f32[100000,3]\n"
      "  return %s, %c, %zm, %zs\n}\n";
  dml_rt_session_t *cpu = NULL, *vk = NULL;
  dml_rt_model_t *m = run_pair(text, t, 2, &cpu, &vk);
  check_against_cpu("65537 rows of 257, 100000 rows of 3", m, cpu, vk);
  gpu_test_close(m, cpu, vk);
out:
  free(x), free(z);
}

/* LayerNormalization over rows of 100,000 (Mean and InvStdDev outputs) and
 * InstanceNormalization over 300 x 300 planes against f64 references. */
static void test_norm_long(void) {
  const int64_t L = 100000, P = 90000;
  int64_t d1[2] = {2, L}, d2[4] = {1, 2, 300, 300};
  float *x = malloc(sizeof(float) * (size_t)(2 * L)), *z = malloc(sizeof(float) * 2 * P);
  double *ry = malloc(sizeof(double) * (size_t)(2 * L)),
         *rz = malloc(sizeof(double) * 2 * P);
  double rm[2], ri[2];
  if (!x || !z || !ry || !rz) goto out;
  gpu_test_seed(3);
  for (int64_t i = 0; i < 2 * L; i++) x[i] = 100.0f + gpu_test_frand();
  for (int64_t i = 0; i < 2 * P; i++) z[i] = 2.0f * gpu_test_frand() - 1.0f;
  for (int r = 0; r < 2; r++) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < L; j++) mean += x[r * L + j];
    mean /= (double)L;
    for (int64_t j = 0; j < L; j++) var += (x[r * L + j] - mean) * (x[r * L + j] - mean);
    double inv = 1.0 / sqrt(var / (double)L + 1e-5);
    for (int64_t j = 0; j < L; j++)
      ry[r * L + j] = (x[r * L + j] - mean) * inv * 2.0 + 0.5;
    rm[r] = mean, ri[r] = inv;
    mean = var = 0;
    for (int64_t j = 0; j < P; j++) mean += z[r * P + j];
    mean /= (double)P;
    for (int64_t j = 0; j < P; j++) var += (z[r * P + j] - mean) * (z[r * P + j] - mean);
    inv = 1.0 / sqrt(var / (double)P + 1e-5);
    for (int64_t j = 0; j < P; j++)
      rz[r * P + j] = (z[r * P + j] - mean) * inv * (r ? -1.0 : 3.0) + (r ? 0.25 : 0.0);
  }
  int64_t ds = L;
  float *sc = malloc(sizeof(float) * (size_t)L);
  if (!sc) goto out;
  for (int64_t j = 0; j < L; j++) sc[j] = 2.0f;
  dml_tensor_t t[3] = {tensor_f32(x, 2, d1), tensor_f32(sc, 1, &ds),
                       tensor_f32(z, 4, d2)};
  dml_rt_session_t *cpu = NULL, *vk = NULL;
  dml_rt_model_t *m = run_pair(
      "global @b : f32[1] = dense<[0.5]>\n"
      "global @is : f32[2] = dense<[3.0, -1.0]>\n"
      "global @ib : f32[2] = dense<[0.0, 0.25]>\n"
      "func @forward(%x: f32[2,100000], %s: f32[100000], %z: f32[1,2,300,300]) -> "
      "(f32[2,100000], f32[2,1], f32[2,1], f32[1,2,300,300]) {\n"
      "  %y, %m, %i = LayerNormalization(%x, %s, @b) {axis = 1} : f32[2,100000], "
      "f32[2,1], "
      "f32[2,1]\n"
      "  %n = InstanceNormalization(%z, @is, @ib) : f32[1,2,300,300]\n"
      "  return %y, %m, %i, %n\n}\n",
      t, 3, &cpu, &vk);
  free(sc);
  if (vk) {
    check_output("layer norm, rows of 100000", vk, 0, ry, 2 * L, 1e-4);
    check_output("layer norm mean", vk, 1, rm, 2, TOL);
    check_output("layer norm inv std dev", vk, 2, ri, 2, 1e-4);
    check_output("instance norm, 300 x 300", vk, 3, rz, 2 * P, 1e-4);
  }
  gpu_test_close(m, cpu, vk);
out:
  free(x), free(z), free(ry), free(rz);
}

/* NaN and ±inf: ReduceMax/ReduceMin over rows [NaN, 1], [1, NaN], all NaN,
 * [-inf, -inf], [inf, 1] (serial form) and rows of 1,000 with NaN (the
 * cooperative form); GlobalMaxPool, MaxPool (2 x 2) with NaN; ArgMax /
 * ArgMin with NaN at element 0 and later; against the CPU (NaN propagates
 * in Max/Min and the pools; ArgMax skips a NaN after element 0, 0 when
 * element 0 is NaN); a ReduceSum over an axis of 1; ReduceMax and
 * ReduceSum over an empty axis (-inf and 0, the identities); ReduceLogSumExp
 * (NaN propagates, an infinite max is the result). */
static void test_nan_rows(void) {
  float a[5][2] = {{NAN, 1}, {1, NAN}, {NAN, NAN}, {-INFINITY, -INFINITY}, {INFINITY, 1}};
  int64_t da[2] = {5, 2}, db[2] = {4, 1000}, dp[4] = {1, 2, 4, 4};
  float *b = malloc(sizeof(float) * 4000), p[32];
  if (!b) return;
  gpu_test_seed(9);
  for (int i = 0; i < 4000; i++) b[i] = gpu_test_frand();
  b[0] = NAN;                                   /* row 0: NaN first */
  b[1000 + 517] = NAN;                          /* row 1: NaN inside */
  for (int i = 2000; i < 3000; i++) b[i] = NAN; /* row 2: all NaN */
  b[3999] = 5.0f;                               /* row 3: no NaN, max last */
  for (int i = 0; i < 32; i++) p[i] = (float)i;
  p[5] = NAN;
  p[16 + 15] = NAN;
  int64_t de[2] = {3, 0};
  dml_tensor_t t[4] = {tensor_f32(&a[0][0], 2, da), tensor_f32(b, 2, db),
                       tensor_f32(p, 4, dp), tensor_f32(p, 2, de)};
  dml_rt_session_t *cpu = NULL, *vk = NULL;
  dml_rt_model_t *m = run_pair(
      "func @forward(%a: f32[5,2], %b: f32[4,1000], %p: f32[1,2,4,4], %e: f32[3,0]) -> "
      "(f32[5], f32[5], "
      "f32[4], f32[4], i64[4], i64[4], i64[4], f32[1,2,1,1], f32[1,2,2,2], i64[5], "
      "f32[2,4,4], f32[3], f32[3], f32[5], f32[4]) {\n"
      "  %amx = ReduceMax(%a) {axes = [1], keepdims = 0} : f32[5]\n"
      "  %amn = ReduceMin(%a) {axes = [1], keepdims = 0} : f32[5]\n"
      "  %bmx = ReduceMax(%b) {axes = [1], keepdims = 0} : f32[4]\n"
      "  %bmn = ReduceMin(%b) {axes = [1], keepdims = 0} : f32[4]\n"
      "  %bam = ArgMax(%b) {axis = 1, keepdims = 0} : i64[4]\n"
      "  %ban = ArgMin(%b) {axis = 1, keepdims = 0} : i64[4]\n"
      "  %bal = ArgMax(%b) {axis = 1, keepdims = 0, select_last_index = 1} : i64[4]\n"
      "  %gm = GlobalMaxPool(%p) : f32[1,2,1,1]\n"
      "  %mp = MaxPool(%p) {kernel_shape = [2, 2], strides = [2, 2]} : f32[1,2,2,2]\n"
      "  %aam = ArgMax(%a) {axis = 1, keepdims = 0} : i64[5]\n"
      "  %one = ReduceSum(%p) {axes = [0], keepdims = 0} : f32[2,4,4]\n"
      "  %emx = ReduceMax(%e) {axes = [1], keepdims = 0} : f32[3]\n"
      "  %alse = ReduceLogSumExp(%a) {axes = [1], keepdims = 0} : f32[5]\n"
      "  %blse = ReduceLogSumExp(%b) {axes = [1], keepdims = 0} : f32[4]\n"
      "  %esm = ReduceSum(%e) {axes = [1], keepdims = 0} : f32[3]\n"
      "  return %amx, %amn, %bmx, %bmn, %bam, %ban, %bal, %gm, %mp, %aam, %one, %emx, "
      "%esm, %alse, %blse\n}\n",
      t, 4, &cpu, &vk);
  check_against_cpu("NaN and inf in rows", m, cpu, vk);
  /* the CPU reference itself: NaN propagates */
  dml_tensor_t o;
  memset(&o, 0, sizeof o);
  if (cpu) {
    CHECK_OK(dml_rt_session_get_output(cpu, 0, &o));
    const float *v = o.data;
    CHECK(v && isnan(v[0]) && isnan(v[1]) && isnan(v[2]) && v[3] == -INFINITY &&
          v[4] == INFINITY);
    CHECK_OK(dml_rt_session_get_output(cpu, 8, &o));
    v = o.data;
    CHECK(v && isnan(v[0]) && v[1] == 7.0f && v[2] == 13.0f && v[3] == 15.0f &&
          v[4] == 21.0f && isnan(v[7]));
    CHECK_OK(dml_rt_session_get_output(cpu, 11, &o));
    v = o.data;
    CHECK(v && v[0] == -INFINITY && v[2] == -INFINITY);
    CHECK_OK(dml_rt_session_get_output(cpu, 13, &o));
    v = o.data;
    CHECK(v && isnan(v[0]) && isnan(v[1]) && isnan(v[2]) && v[3] == -INFINITY &&
          v[4] == INFINITY);
  }
  gpu_test_close(m, cpu, vk);
  free(b);
}

/* Grids beyond 65,535 workgroups (lavapipe's maxComputeWorkGroupCount):
 * an elementwise kernel over 2^24 + 1 elements (65,537 workgroups of 256)
 * and a MaxPool with 2049 x 2049 outputs (65,601 workgroups of 64) run in
 * parts (vkCmdDispatchBase) instead of failing; against the CPU. */
static void test_large_grids(void) {
  int64_t n = (1 << 24) + 1, dp[4] = {1, 1, 2050, 2050};
  float *x = malloc(sizeof(float) * (size_t)n);
  if (!x) return;
  gpu_test_seed(13);
  for (int64_t i = 0; i < n; i++) x[i] = gpu_test_frand();
  x[n - 1] = NAN;
  dml_tensor_t t[2] = {tensor_f32(x, 1, &n), tensor_f32(x, 4, dp)};
  dml_rt_session_t *cpu = NULL, *vk = NULL;
  dml_rt_model_t *m = run_pair(
      "func @forward(%x: f32[16777217], %p: f32[1,1,2050,2050]) -> (f32[16777217], "
      "f32[1,1,2049,2049]) {\n"
      "  %y = Neg(%x) : f32[16777217]\n"
      "  %mp = MaxPool(%p) {kernel_shape = [2, 2], strides = [1, 1]} : "
      "f32[1,1,2049,2049]\n"
      "  return %y, %mp\n}\n",
      t, 2, &cpu, &vk);
  check_against_cpu("grids beyond 65535 workgroups", m, cpu, vk);
  gpu_test_close(m, cpu, vk);
  free(x);
}

int main(void) {
  dml_rt_device_info_t d[16];
  uint32_t n = 0;
  if (gpu_test_skip(dml_rt_vulkan_devices(d, 16, &n), "no Vulkan device")) return 77;
  RUN(test_sum_of_minus_ones);
  RUN(test_long_rows);
  RUN(test_row_over_2_24);
  RUN(test_softmax_long);
  RUN(test_hardmax);
  RUN(test_many_rows);
  RUN(test_norm_long);
  RUN(test_nan_rows);
  RUN(test_large_grids);
  return dml_test_finish();
}
