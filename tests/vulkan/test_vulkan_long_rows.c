/* test_vulkan_long_rows.c — scans and the reductions of other dtypes than
 * f32 over rows longer than 65,535 on the default Vulkan device (Mesa's
 * lavapipe in CI), against an f64 / int64 reference computed here and
 * against dmlc's CPU (issue 15). Lavapipe stops the loops of an invocation
 * after 65,535 iterations in all, so the per-invocation forms stopped
 * there with no error: CumSum over 70,001 elements and the i32/i64
 * ReduceSum of a longer row used the first 65,535. Also ReduceL2 of values
 * near 1e20 (the squares overflow f32: the GPU gave inf) and near 1e-30
 * (they underflow), and ReduceProd over long rows (the CPU's f32 running
 * product drifted by 2e-4).
 *
 * Cases: one row of 65,535, 65,536, 70,001 and 200,003 elements (CumSum
 * f32 inclusive and exclusive + reverse, CumSum i64 and i32, ReduceSum
 * i32/i64/f64, ReduceMax i32, ArgMin i32 with a tie (the first index),
 * ArgMax f64, ReduceProd f32, ReduceL2 f32 of huge and tiny values), a
 * CumSum and an i32 ReduceSum/ArgMax over more than 2^24 elements
 * (CumSum along axis 0 of [65,537, 257]: strided rows; a row of
 * 2^24 + 3 i32 values); ReduceL2/ReduceProd at the edges (zeros, inf, NaN,
 * ±1e20, negative factors) in the per-invocation and cooperative forms.
 * SoftmaxCrossEntropyLoss over 70,001 classes (weights, ignore_index,
 * log_prob; none and mean).
 * The forms still serial over a row (TopK, DFT, CumSum
 * with a run-time axis) refuse rows longer than 65,535 with a clear error.
 *
 * Tolerances (each the bound on the error divided by its scale, printed):
 * integers exactly (wrapping sums are order-independent); CumSum f32:
 * |y - ref| <= 1e-5 * sum of |x| up to the element on Vulkan (f32 tree
 * within a chunk of 1,024, the chunks' carry added in sequence), 1e-7 on
 * the CPU (f64 sums, rounded once); ReduceL2 f32: relative 2e-5 on Vulkan
 * (f32 tree), 1e-6 on the CPU; ReduceProd f32: relative 1e-6 on both (the
 * GPU's product is compensated, the CPU's in f64); f64 sums: 1e-12 of the
 * sum of |x|.
 * Skips (77) without a Vulkan device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen_test_util.h"
#include "gpu_test_util.h"
#include "vulkan_forms.h"

static dml_tensor_t tensor_of(dml_dtype_t dt, void *x, int32_t rank,
                              const int64_t *dims) {
  dml_tensor_t t;
  memset(&t, 0, sizeof t);
  t.dtype = dt;
  t.rank = rank;
  for (int32_t d = 0; d < rank; d++) t.dims[d] = dims[d];
  t.data = x;
  return t;
}

/* Element i of tensor t as a double (f32, f64) or an int64 (integers). */
static double elem_f(const dml_tensor_t *t, int64_t i) {
  return t->dtype == DML_DTYPE_F64 ? ((const double *)t->data)[i]
                                   : (double)((const float *)t->data)[i];
}
static int64_t elem_i(const dml_tensor_t *t, int64_t i) {
  switch (t->dtype) {
    case DML_DTYPE_I64:
    case DML_DTYPE_U64: return ((const int64_t *)t->data)[i];
    case DML_DTYPE_U8: return ((const uint8_t *)t->data)[i];
    case DML_DTYPE_I8: return ((const int8_t *)t->data)[i];
    case DML_DTYPE_I16: return ((const int16_t *)t->data)[i];
    default: return ((const int32_t *)t->data)[i];
  }
}

/* What output o is checked against: integers exactly (iref), floats as
 * |y - ref| <= tol * scale (scale NULL: |ref|), tol_cpu for the CPU,
 * tol_vk for Vulkan. */
typedef struct {
  const char *name;
  const double *ref, *scale;
  const int64_t *iref;
  int64_t n;
  double tol_cpu, tol_vk;
} out_ref_t;

static void check_one(const char *dev, dml_rt_session_t *s, uint32_t o,
                      const out_ref_t *r) {
  dml_tensor_t t;
  memset(&t, 0, sizeof t);
  CHECK_OK(dml_rt_session_get_output(s, o, &t));
  CHECK(dml_dims_numel(t.dims, t.rank) == r->n);
  if (dml_dims_numel(t.dims, t.rank) != r->n || !t.data) return;
  int cpu = !strcmp(dev, "cpu");
  double tol = cpu ? r->tol_cpu : r->tol_vk, worst = 0;
  int64_t bad = 0;
  for (int64_t i = 0; i < r->n; i++) {
    int ok;
    if (r->iref) {
      int64_t a = elem_i(&t, i);
      ok = a == r->iref[i];
      if (!ok && bad < 4)
        fprintf(stderr, "  %s on %s element %lld: %lld, want %lld\n", r->name, dev,
                (long long)i, (long long)a, (long long)r->iref[i]);
    } else {
      double a = elem_f(&t, i), want = r->ref[i];
      double sc = r->scale ? r->scale[i] : fabs(want);
      double e = fabs(a - want) / (sc > 0 ? sc : 1e-300);
      ok = isnan(want) ? isnan(a) : isinf(want) ? a == want : isfinite(a) && e <= tol;
      if (isfinite(e)) worst = fmax(worst, e);
      if (!ok && bad < 4)
        fprintf(stderr, "  %s on %s element %lld: %.9g, want %.9g (error %.2e of %.2e)\n",
                r->name, dev, (long long)i, a, want, e, tol);
    }
    if (!ok) bad++;
  }
  if (r->iref)
    printf("  %-36s %-6s %lld elements exact%s\n", r->name, dev, (long long)r->n,
           bad ? ": NO" : "");
  else
    printf("  %-36s %-6s %lld elements, max error %.2e (bound %.0e)\n", r->name, dev,
           (long long)r->n, worst, tol);
  CHECK(bad == 0);
}

/* Compiles `text` for cpu,vulkan, runs both on `in` and checks every
 * output against refs[]. */
static void run_and_check(const char *what, const char *text, const dml_tensor_t *in,
                          uint32_t n_in, const out_ref_t *refs, uint32_t n_out) {
  printf("%s\n", what);
  dml_rt_session_t *cpu = NULL, *vk = NULL;
  dml_rt_model_t *m = vk_open_pair(text, &cpu, &vk);
  if (!m || !cpu || !vk) {
    fprintf(stderr, "  (%s did not compile or open)\n", what);
    gpu_test_close(m, cpu, vk);
    return;
  }
  CHECK(dml_rt_model_num_outputs(m) == n_out);
  for (uint32_t i = 0; i < n_in; i++) {
    CHECK_OK(dml_rt_session_set_input(cpu, i, &in[i]));
    CHECK_OK(dml_rt_session_set_input(vk, i, &in[i]));
  }
  CHECK_OK(dml_rt_session_run(cpu));
  CHECK_OK(dml_rt_session_run(vk));
  for (uint32_t o = 0; o < n_out; o++) {
    check_one("cpu", cpu, o, &refs[o]);
    check_one("vulkan", vk, o, &refs[o]);
  }
  gpu_test_close(m, cpu, vk);
}

/* A random integer in [lo, hi]. */
static int64_t irand(int64_t lo, int64_t hi) {
  double u = 0.5 * ((double)gpu_test_frand() + 1.0);
  int64_t v = lo + (int64_t)(u * (double)(hi - lo + 1));
  return v > hi ? hi : v;
}

#define N_OUT 14

/* One row of n elements: every case of the header. */
static void check_row(int64_t n) {
  char text[4096];
  snprintf(
      text, sizeof text,
      "global @a0 : i64[] = dense<[0]>\n"
      "func @forward(%%x: f32[%1$lld], %%p: f32[%1$lld], %%h: f32[%1$lld], "
      "%%t: f32[%1$lld], %%i: i32[%1$lld], %%l: i64[%1$lld], %%d: f64[%1$lld]) -> "
      "(f32[%1$lld], f32[%1$lld], i64[%1$lld], i32[%1$lld], i32[], i64[], i32[], "
      "i64[], f32[], f32[], f32[], f64[], i64[], i64[]) {\n"
      "  %%cs = CumSum(%%x, @a0) : f32[%1$lld]\n"
      "  %%ce = CumSum(%%x, @a0) {exclusive = 1, reverse = 1} : f32[%1$lld]\n"
      "  %%cl = CumSum(%%l, @a0) : i64[%1$lld]\n"
      "  %%ci = CumSum(%%i, @a0) {reverse = 1} : i32[%1$lld]\n"
      "  %%si = ReduceSum(%%i) {keepdims = 0} : i32[]\n"
      "  %%sl = ReduceSum(%%l) {keepdims = 0} : i64[]\n"
      "  %%mi = ReduceMax(%%i) {keepdims = 0} : i32[]\n"
      "  %%ai = ArgMin(%%i) {axis = 0, keepdims = 0} : i64[]\n"
      "  %%pr = ReduceProd(%%p) {keepdims = 0} : f32[]\n"
      "  %%lh = ReduceL2(%%h) {keepdims = 0} : f32[]\n"
      "  %%lt = ReduceL2(%%t) {keepdims = 0} : f32[]\n"
      "  %%sd = ReduceSum(%%d) {keepdims = 0} : f64[]\n"
      "  %%ad = ArgMax(%%d) {axis = 0, keepdims = 0} : i64[]\n"
      "  %%al = ArgMin(%%l) {axis = 0, keepdims = 0, select_last_index = 1} : i64[]\n"
      "  return %%cs, %%ce, %%cl, %%ci, %%si, %%sl, %%mi, %%ai, %%pr, %%lh, %%lt, %%sd, "
      "%%ad, %%al\n}\n",
      (long long)n);
  size_t N = (size_t)n;
  float *x = malloc(4 * N), *pv = malloc(4 * N), *h = malloc(4 * N), *tv = malloc(4 * N);
  int32_t *iv = malloc(4 * N);
  int64_t *lv = malloc(8 * N), *cl = malloc(8 * N), *ci = malloc(8 * N);
  double *d = malloc(8 * N), *cs = malloc(8 * N), *ce = malloc(8 * N),
         *csa = malloc(8 * N), *cea = malloc(8 * N);
  if (!x || !pv || !h || !tv || !iv || !lv || !cl || !ci || !d || !cs || !ce || !csa ||
      !cea) {
    CHECK(0);
    goto done;
  }
  gpu_test_seed(15 + (uint64_t)n);
  for (size_t k = 0; k < N; k++) {
    x[k] = gpu_test_frand();
    pv[k] = 1.0f + 1e-3f * gpu_test_frand();
    h[k] = 1e20f * (1.5f + 0.5f * gpu_test_frand());
    tv[k] = 1e-30f * (1.5f + 0.5f * gpu_test_frand());
    iv[k] = (int32_t)irand(-1000, 1000);
    lv[k] = irand(-((int64_t)1 << 40), (int64_t)1 << 40);
    d[k] = gpu_test_frand();
  }
  /* beyond 65,535: the max of i and d, the min of i twice (the first
   * wins), the min of l twice (select_last_index: the last) */
  iv[N - 2] = 5000;
  iv[N / 3 + 40000] = -5000;
  iv[N - 5] = -5000;
  d[N - 7] = 2.0;
  lv[N - 100] = -((int64_t)1 << 50);
  lv[65536 % N] = -((int64_t)1 << 50);
  int64_t imin_first = (int64_t)(N / 3 + 40000 < N - 5 ? N / 3 + 40000 : N - 5);
  int64_t lmin_last = (int64_t)(N - 100 > 65536 % N ? N - 100 : 65536 % N);
  double s = 0, sa = 0, prod = 1, sh = 0, st = 0, sd = 0, sda = 0;
  int64_t si = 0, sl = 0, acc = 0, acc32 = 0;
  for (size_t k = 0; k < N; k++) {
    s += x[k];
    sa += fabs(x[k]);
    cs[k] = s;
    csa[k] = sa;
    acc += lv[k];
    cl[k] = acc;
    si += iv[k];
    sl += lv[k];
    prod *= pv[k];
    sh += ((double)h[k] * 1e-20) * ((double)h[k] * 1e-20);
    st += ((double)tv[k] * 1e30) * ((double)tv[k] * 1e30);
    sd += d[k];
    sda += fabs(d[k]);
  }
  /* exclusive reverse: the sum of the elements after k */
  s = sa = 0;
  for (size_t k = N; k-- > 0;) {
    ce[k] = s;
    cea[k] = sa;
    s += x[k];
    sa += fabs(x[k]);
    acc32 += iv[k];
    ci[k] = (int64_t)(int32_t)acc32;
  }
  double ref_pr = prod, ref_lh = 1e20 * sqrt(sh), ref_lt = 1e-30 * sqrt(st), ref_sd = sd;
  int64_t ref_si = (int32_t)si, ref_sl = sl, ref_mi = 5000, ref_ai = imin_first,
          ref_ad = (int64_t)N - 7, ref_al = lmin_last;
  out_ref_t refs[N_OUT] = {
      {"CumSum f32", cs, csa, NULL, n, 1e-7, 1e-5},
      {"CumSum f32 exclusive reverse", ce, cea, NULL, n, 1e-7, 1e-5},
      {"CumSum i64", NULL, NULL, cl, n, 0, 0},
      {"CumSum i32 reverse", NULL, NULL, ci, n, 0, 0},
      {"ReduceSum i32", NULL, NULL, &ref_si, 1, 0, 0},
      {"ReduceSum i64", NULL, NULL, &ref_sl, 1, 0, 0},
      {"ReduceMax i32", NULL, NULL, &ref_mi, 1, 0, 0},
      {"ArgMin i32 (first of a tie)", NULL, NULL, &ref_ai, 1, 0, 0},
      {"ReduceProd f32", &ref_pr, NULL, NULL, 1, 1e-6, 1e-6},
      {"ReduceL2 f32 of ~1e20", &ref_lh, NULL, NULL, 1, 1e-6, 2e-5},
      {"ReduceL2 f32 of ~1e-30", &ref_lt, NULL, NULL, 1, 1e-6, 2e-5},
      {"ReduceSum f64", &ref_sd, &sda, NULL, 1, 1e-12, 1e-12},
      {"ArgMax f64", NULL, NULL, &ref_ad, 1, 0, 0},
      {"ArgMin i64 (last of a tie)", NULL, NULL, &ref_al, 1, 0, 0},
  };
  dml_tensor_t in[7] = {
      tensor_of(DML_DTYPE_F32, x, 1, &n),  tensor_of(DML_DTYPE_F32, pv, 1, &n),
      tensor_of(DML_DTYPE_F32, h, 1, &n),  tensor_of(DML_DTYPE_F32, tv, 1, &n),
      tensor_of(DML_DTYPE_I32, iv, 1, &n), tensor_of(DML_DTYPE_I64, lv, 1, &n),
      tensor_of(DML_DTYPE_F64, d, 1, &n)};
  char what[64];
  snprintf(what, sizeof what, "one row of %lld", (long long)n);
  run_and_check(what, text, in, 7, refs, N_OUT);
done:
  free(x), free(pv), free(h), free(tv), free(iv), free(lv), free(cl), free(ci);
  free(d), free(cs), free(ce), free(csa), free(cea);
}

static void test_rows(void) {
  static const int64_t lens[] = {65535, 65536, 70001, 200003};
  for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) check_row(lens[i]);
}

/* More than 2^24 elements: CumSum (inclusive, and exclusive + reverse)
 * along axis 0 of [65,537, 257] (257 strided rows of 65,537), and the i32
 * ReduceSum, ReduceMin and ArgMax of one row of 2^24 + 3. */
static void test_over_2_24(void) {
  int64_t dims[2] = {65537, 257}, n = dims[0] * dims[1], m = (1 << 24) + 3;
  float *x = malloc(4 * (size_t)n);
  double *cs = malloc(8 * (size_t)n), *csa = malloc(8 * (size_t)n);
  double *ce = malloc(8 * (size_t)n), *cea = malloc(8 * (size_t)n);
  int32_t *iv = malloc(4 * (size_t)m);
  if (!x || !cs || !csa || !ce || !cea || !iv) {
    CHECK(0);
    goto done;
  }
  gpu_test_seed(2424);
  for (int64_t k = 0; k < n; k++) x[k] = gpu_test_frand();
  for (int64_t c = 0; c < dims[1]; c++) {
    double s = 0, sa = 0;
    for (int64_t r = 0; r < dims[0]; r++) {
      int64_t k = r * dims[1] + c;
      s += x[k];
      sa += fabs(x[k]);
      cs[k] = s;
      csa[k] = sa;
    }
    s = sa = 0;
    for (int64_t r = dims[0]; r-- > 0;) {
      int64_t k = r * dims[1] + c;
      ce[k] = s;
      cea[k] = sa;
      s += x[k];
      sa += fabs(x[k]);
    }
  }
  int64_t si = 0;
  for (int64_t k = 0; k < m; k++) iv[k] = (int32_t)irand(-300, 300);
  iv[m - 2] = 1000000;
  iv[m - 9] = -1000000;
  for (int64_t k = 0; k < m; k++) si += iv[k];
  int64_t ref_si = (int32_t)si, ref_mn = -1000000, ref_am = m - 2;
  out_ref_t refs[5] = {
      {"CumSum f32 axis 0 of [65537,257]", cs, csa, NULL, n, 1e-7, 1e-5},
      {"CumSum f32 exclusive reverse", ce, cea, NULL, n, 1e-7, 1e-5},
      {"ReduceSum i32 of 2^24 + 3", NULL, NULL, &ref_si, 1, 0, 0},
      {"ReduceMin i32 of 2^24 + 3", NULL, NULL, &ref_mn, 1, 0, 0},
      {"ArgMax i32 of 2^24 + 3", NULL, NULL, &ref_am, 1, 0, 0},
  };
  dml_tensor_t in[2] = {tensor_of(DML_DTYPE_F32, x, 2, dims),
                        tensor_of(DML_DTYPE_I32, iv, 1, &m)};
  char text[1024];
  snprintf(text, sizeof text,
           "global @a0 : i64[] = dense<[0]>\n"
           "func @forward(%%x: f32[65537,257], %%i: i32[%1$lld]) -> (f32[65537,257], "
           "f32[65537,257], i32[], i32[], i64[]) {\n"
           "  %%cs = CumSum(%%x, @a0) : f32[65537,257]\n"
           "  %%ce = CumSum(%%x, @a0) {exclusive = 1, reverse = 1} : f32[65537,257]\n"
           "  %%si = ReduceSum(%%i) {keepdims = 0} : i32[]\n"
           "  %%mn = ReduceMin(%%i) {keepdims = 0} : i32[]\n"
           "  %%am = ArgMax(%%i) {axis = 0, keepdims = 0} : i64[]\n"
           "  return %%cs, %%ce, %%si, %%mn, %%am\n}\n",
           (long long)m);
  run_and_check("more than 2^24 elements", text, in, 2, refs, 5);
done:
  free(x), free(cs), free(csa), free(ce), free(cea), free(iv);
}

/* ReduceL2 and ReduceProd (f32) at the edges, in the per-invocation form
 * (a row of 100) and the cooperative one (70,001): zeros (0, 0), an inf
 * among values near 1 and three -1 (inf, -inf), a NaN (NaN, NaN), values
 * near ±1e20 (L2 finite), values near 1 with three -1 (a negative
 * product). Plain f32 products of 100 values: relative 1e-5 (n ulp). */
static void check_edges(int64_t n) {
  char text[2048];
  snprintf(text, sizeof text,
           "func @forward(%%z: f32[%1$lld], %%a: f32[%1$lld], %%b: f32[%1$lld], "
           "%%c: f32[%1$lld], %%d: f32[%1$lld]) -> (f32[], f32[], f32[], f32[], f32[], "
           "f32[], f32[], f32[]) {\n"
           "  %%lz = ReduceL2(%%z) {keepdims = 0} : f32[]\n"
           "  %%pz = ReduceProd(%%z) {keepdims = 0} : f32[]\n"
           "  %%la = ReduceL2(%%a) {keepdims = 0} : f32[]\n"
           "  %%pa = ReduceProd(%%a) {keepdims = 0} : f32[]\n"
           "  %%lb = ReduceL2(%%b) {keepdims = 0} : f32[]\n"
           "  %%pb = ReduceProd(%%b) {keepdims = 0} : f32[]\n"
           "  %%lc = ReduceL2(%%c) {keepdims = 0} : f32[]\n"
           "  %%pd = ReduceProd(%%d) {keepdims = 0} : f32[]\n"
           "  return %%lz, %%pz, %%la, %%pa, %%lb, %%pb, %%lc, %%pd\n}\n",
           (long long)n);
  size_t N = (size_t)n;
  float *z = calloc(N, 4), *a = malloc(4 * N), *b = malloc(4 * N), *c = malloc(4 * N),
        *d = malloc(4 * N);
  if (!z || !a || !b || !c || !d) {
    CHECK(0);
    goto done;
  }
  gpu_test_seed(99 + (uint64_t)n);
  for (size_t k = 0; k < N; k++) {
    a[k] = 1.0f + 1e-3f * gpu_test_frand();
    b[k] = gpu_test_frand();
    c[k] = 1e20f * gpu_test_frand();
    d[k] = 1.0f + 1e-3f * gpu_test_frand();
  }
  for (size_t k = 1; k <= 3; k++) a[N - 10 * k] = d[N - 10 * k] = -1.0f;
  a[N - 2] = INFINITY;
  b[N / 2] = NAN;
  double sc = 0, pd = 1;
  for (size_t k = 0; k < N; k++) {
    sc += ((double)c[k] * 1e-20) * ((double)c[k] * 1e-20);
    pd *= d[k];
  }
  double r_lz = 0, r_pz = 0, r_la = INFINITY, r_pa = -INFINITY, r_nan = NAN,
         r_lc = 1e20 * sqrt(sc), r_pd = pd;
  double ptol = n <= 256 ? 1e-5 : 1e-6;
  out_ref_t refs[8] = {
      {"ReduceL2 of zeros", &r_lz, NULL, NULL, 1, 0, 0},
      {"ReduceProd of zeros", &r_pz, NULL, NULL, 1, 0, 0},
      {"ReduceL2 with an inf", &r_la, NULL, NULL, 1, 0, 0},
      {"ReduceProd with an inf and three -1", &r_pa, NULL, NULL, 1, 0, 0},
      {"ReduceL2 with a NaN", &r_nan, NULL, NULL, 1, 0, 0},
      {"ReduceProd with a NaN", &r_nan, NULL, NULL, 1, 0, 0},
      {"ReduceL2 of +-1e20", &r_lc, NULL, NULL, 1, 1e-6, 2e-5},
      {"ReduceProd with three -1", &r_pd, NULL, NULL, 1, 1e-6, ptol},
  };
  dml_tensor_t in[5] = {
      tensor_of(DML_DTYPE_F32, z, 1, &n), tensor_of(DML_DTYPE_F32, a, 1, &n),
      tensor_of(DML_DTYPE_F32, b, 1, &n), tensor_of(DML_DTYPE_F32, c, 1, &n),
      tensor_of(DML_DTYPE_F32, d, 1, &n)};
  char what[64];
  snprintf(what, sizeof what, "edges, one row of %lld", (long long)n);
  run_and_check(what, text, in, 5, refs, 8);
done:
  free(z), free(a), free(b), free(c), free(d);
}

static void test_edges(void) {
  check_edges(100);
  check_edges(70001);
}

/* The narrow and unsigned integers over a row of 70,001 (their shared
 * tile holds i32 registers; stores wrap): ReduceSum u8 (wraps mod 256),
 * ReduceMax u8, ReduceMin i8, ReduceSum i16 (wraps), ReduceMax u64 (an
 * unsigned compare: 2^63 + 5 is the max), ArgMax u8; exactly. */
static void test_narrow_ints(void) {
  int64_t n = 70001;
  size_t N = (size_t)n;
  uint8_t *u = malloc(N);
  int8_t *i8 = malloc(N);
  int16_t *i16 = malloc(2 * N);
  uint64_t *u64 = malloc(8 * N);
  if (!u || !i8 || !i16 || !u64) {
    CHECK(0);
    goto done;
  }
  gpu_test_seed(8);
  uint64_t su = 0, s16 = 0;
  for (size_t k = 0; k < N; k++) {
    u[k] = (uint8_t)irand(0, 200);
    i8[k] = (int8_t)irand(-100, 100);
    i16[k] = (int16_t)irand(-30000, 30000);
    u64[k] = (uint64_t)irand(0, (int64_t)1 << 62);
  }
  u[N - 4] = 255;
  i8[N - 6] = -128;
  u64[N - 8] = ((uint64_t)1 << 63) + 5;
  for (size_t k = 0; k < N; k++) su += u[k], s16 += (uint64_t)(int64_t)i16[k];
  int64_t r_su = (uint8_t)su, r_mu = 255, r_m8 = -128, r_s16 = (int16_t)(uint16_t)s16,
          r_m64 = (int64_t)(((uint64_t)1 << 63) + 5), r_am = n - 4;
  out_ref_t refs[6] = {
      {"ReduceSum u8 (wraps)", NULL, NULL, &r_su, 1, 0, 0},
      {"ReduceMax u8", NULL, NULL, &r_mu, 1, 0, 0},
      {"ReduceMin i8", NULL, NULL, &r_m8, 1, 0, 0},
      {"ReduceSum i16 (wraps)", NULL, NULL, &r_s16, 1, 0, 0},
      {"ReduceMax u64", NULL, NULL, &r_m64, 1, 0, 0},
      {"ArgMax u8", NULL, NULL, &r_am, 1, 0, 0},
  };
  dml_tensor_t in[4] = {
      tensor_of(DML_DTYPE_U8, u, 1, &n), tensor_of(DML_DTYPE_I8, i8, 1, &n),
      tensor_of(DML_DTYPE_I16, i16, 1, &n), tensor_of(DML_DTYPE_U64, u64, 1, &n)};
  run_and_check("narrow and unsigned integers, one row of 70001",
                "func @forward(%u: u8[70001], %b: i8[70001], %h: i16[70001], "
                "%w: u64[70001]) -> (u8[], u8[], i8[], i16[], u64[], i64[]) {\n"
                "  %su = ReduceSum(%u) {keepdims = 0} : u8[]\n"
                "  %mu = ReduceMax(%u) {keepdims = 0} : u8[]\n"
                "  %mb = ReduceMin(%b) {keepdims = 0} : i8[]\n"
                "  %sh = ReduceSum(%h) {keepdims = 0} : i16[]\n"
                "  %mw = ReduceMax(%w) {keepdims = 0} : u64[]\n"
                "  %am = ArgMax(%u) {axis = 0, keepdims = 0} : i64[]\n"
                "  return %su, %mu, %mb, %sh, %mw, %am\n}\n",
                in, 4, refs, 6);
done:
  free(u), free(i8), free(i16), free(u64);
}

/* The losses' reductions over many rows (one invocation looped over
 * every row; now a workgroup, rows t, t + 256, ... per invocation):
 * SoftmaxCrossEntropyLoss mean over [70001, 10] with ignore_index 3, and
 * NegativeLogLikelihoodLoss sum over [2, 5, 40000], against f64:
 * relative 1e-6 (Vulkan: f32 losses, a tree of partial sums; measured
 * 5e-8). The single invocation gave 2.6e-4 and a sum of 65,774 for
 * 80,297 (it stopped after 65,535 rows). */
static void test_losses(void) {
  int64_t dx[2] = {70001, 10}, dt = 70001, dn[3] = {2, 5, 40000}, dtn[2] = {2, 40000};
  float *x = malloc(4 * 70001 * 10), *xn = malloc(4 * 2 * 5 * 40000);
  int64_t *t = malloc(8 * 70001), *tn = malloc(8 * 2 * 40000);
  if (!x || !xn || !t || !tn) {
    CHECK(0);
    goto done;
  }
  gpu_test_seed(77);
  for (int64_t k = 0; k < 70001 * 10; k++) x[k] = 3.0f * gpu_test_frand();
  for (int64_t k = 0; k < 2 * 5 * 40000; k++) xn[k] = -1.0f - gpu_test_frand();
  for (int64_t k = 0; k < 70001; k++) t[k] = irand(0, 9);
  for (int64_t k = 0; k < 2 * 40000; k++) tn[k] = irand(0, 4);
  double ls = 0, ws = 0, nl = 0;
  for (int64_t r = 0; r < 70001; r++) {
    if (t[r] == 3) continue;
    double m = -INFINITY, se = 0;
    for (int c = 0; c < 10; c++) m = fmax(m, x[r * 10 + c]);
    for (int c = 0; c < 10; c++) se += exp(x[r * 10 + c] - m);
    ls += -((x[r * 10 + t[r]] - m) - log(se));
    ws += 1;
  }
  for (int64_t b = 0; b < 2; b++)
    for (int64_t d = 0; d < 40000; d++)
      nl += -xn[(b * 5 + tn[b * 40000 + d]) * 40000 + d];
  double r_sce = ls / ws, r_nll = nl;
  out_ref_t refs[2] = {
      {"SoftmaxCrossEntropyLoss mean", &r_sce, NULL, NULL, 1, 1e-6, 1e-6},
      {"NegativeLogLikelihoodLoss sum", &r_nll, NULL, NULL, 1, 1e-6, 1e-6},
  };
  dml_tensor_t in[4] = {
      tensor_of(DML_DTYPE_F32, x, 2, dx), tensor_of(DML_DTYPE_I64, t, 1, &dt),
      tensor_of(DML_DTYPE_F32, xn, 3, dn), tensor_of(DML_DTYPE_I64, tn, 2, dtn)};
  run_and_check(
      "losses over 70,001 and 80,000 rows",
      "func @forward(%x: f32[70001,10], %t: i64[70001], %xn: f32[2,5,40000], "
      "%tn: i64[2,40000]) -> (f32[], f32[]) {\n"
      "  %l = SoftmaxCrossEntropyLoss(%x, %t) {ignore_index = 3} : f32[]\n"
      "  %n = NegativeLogLikelihoodLoss(%xn, %tn) {reduction = \"sum\"} : f32[]\n"
      "  return %l, %n\n}\n",
      in, 4, refs, 2);
done:
  free(x), free(xn), free(t), free(tn);
}

/* SoftmaxCrossEntropyLoss over 70,001 classes (the workgroup form:
 * schedule_reduce.c's sce_long), with weights, ignore_index and log_prob,
 * reductions none and mean, against f64 references: relative 1e-6 on both
 * (an f32 tree of 70,001 exponentials on Vulkan, f64 on the CPU); an
 * ignored row's loss exactly 0. */
static void test_loss_classes(void) {
  enum { R = 3, C = 70001 };
  int64_t dx[2] = {R, C}, dt = R, dw = C;
  float *x = malloc(4 * (size_t)R * C), *w = malloc(4 * (size_t)C);
  double *lp = malloc(8 * (size_t)R * C);
  int64_t t[R] = {5, 3, C - 2};
  if (!x || !w || !lp) {
    CHECK(0);
    goto done;
  }
  gpu_test_seed(78);
  for (int64_t k = 0; k < (int64_t)R * C; k++) x[k] = 3.0f * gpu_test_frand();
  for (int64_t k = 0; k < C; k++) w[k] = 0.5f + 0.25f * gpu_test_frand();
  double loss[R], ls = 0, ws = 0;
  for (int r = 0; r < R; r++) {
    double m = -INFINITY, se = 0;
    for (int64_t c = 0; c < C; c++) m = fmax(m, x[r * C + c]);
    for (int64_t c = 0; c < C; c++) se += exp(x[r * C + c] - m);
    for (int64_t c = 0; c < C; c++) lp[r * C + c] = (x[r * C + c] - m) - log(se);
    loss[r] = t[r] == 3 ? 0.0 : -lp[r * C + t[r]] * w[t[r]];
    if (t[r] != 3) ls += loss[r], ws += w[t[r]];
  }
  double mean = ls / ws;
  out_ref_t refs[3] = {
      {"SoftmaxCrossEntropyLoss none", loss, NULL, NULL, R, 1e-6, 1e-6},
      {"its log_prob", lp, NULL, NULL, (int64_t)R * C, 1e-6, 1e-6},
      {"SoftmaxCrossEntropyLoss mean", &mean, NULL, NULL, 1, 1e-6, 1e-6},
  };
  dml_tensor_t in[3] = {tensor_of(DML_DTYPE_F32, x, 2, dx),
                        tensor_of(DML_DTYPE_I64, t, 1, &dt),
                        tensor_of(DML_DTYPE_F32, w, 1, &dw)};
  run_and_check("SoftmaxCrossEntropyLoss over 70,001 classes",
                "func @forward(%x: f32[3,70001], %t: i64[3], %w: f32[70001]) -> "
                "(f32[3], f32[3,70001], f32[]) {\n"
                "  %l, %p = SoftmaxCrossEntropyLoss(%x, %t, %w) {ignore_index = 3, "
                "reduction = \"none\"} : f32[3], f32[3,70001]\n"
                "  %m = SoftmaxCrossEntropyLoss(%x, %t, %w) {ignore_index = 3} : f32[]\n"
                "  return %l, %p, %m\n}\n",
                in, 3, refs, 3);
done:
  free(x), free(w), free(lp);
}

/* MeanVarianceNormalization over its default axes [0, 2, 3] of
 * [2, 3, 256, 300] (boxes of 153,600 strided elements: the per-element
 * form looped over the box twice per element) against an f64 reference:
 * |y - ref| <= 2e-5 * max(1, |ref|) on Vulkan (f32 trees), 1e-6 on the
 * CPU (f64 sums). */
static void test_mvn(void) {
  int64_t dims[4] = {2, 3, 256, 300}, n = 2 * 3 * 256 * 300, box = 2 * 256 * 300;
  float *x = malloc(4 * (size_t)n);
  double *ref = malloc(8 * (size_t)n), *sc = malloc(8 * (size_t)n);
  if (!x || !ref || !sc) {
    CHECK(0);
    goto done;
  }
  gpu_test_seed(31);
  for (int64_t k = 0; k < n; k++) x[k] = 3.0f + gpu_test_frand();
  for (int64_t ch = 0; ch < 3; ch++) {
    double sum = 0, sq = 0;
    for (int64_t b = 0; b < 2; b++)
      for (int64_t k = 0; k < 256 * 300; k++) sum += x[(b * 3 + ch) * 256 * 300 + k];
    double mean = sum / (double)box;
    for (int64_t b = 0; b < 2; b++)
      for (int64_t k = 0; k < 256 * 300; k++) {
        double d = x[(b * 3 + ch) * 256 * 300 + k] - mean;
        sq += d * d;
      }
    double den = sqrt(sq / (double)box) + 1e-9;
    for (int64_t b = 0; b < 2; b++)
      for (int64_t k = 0; k < 256 * 300; k++) {
        int64_t i = (b * 3 + ch) * 256 * 300 + k;
        ref[i] = (x[i] - mean) / den;
        sc[i] = fmax(1.0, fabs(ref[i]));
      }
  }
  out_ref_t refs[1] = {
      {"MeanVarianceNormalization", ref, sc, NULL, n, 1e-6, 2e-5},
  };
  dml_tensor_t in[1] = {tensor_of(DML_DTYPE_F32, x, 4, dims)};
  run_and_check("MeanVarianceNormalization over 153,600-element boxes",
                "func @forward(%x: f32[2,3,256,300]) -> (f32[2,3,256,300]) {\n"
                "  %y = MeanVarianceNormalization(%x) : f32[2,3,256,300]\n"
                "  return %y\n}\n",
                in, 1, refs, 1);
done:
  free(x), free(ref), free(sc);
}

/* The forms still serial over a row refuse rows longer than 65,535 (a
 * clear error; the CPU fall-back runs them) instead of stopping there:
 * TopK, DFT, CumSum with the axis fed at run time. */
static void test_refused(void) {
  vk_check_refused(
      "global @k : i64[1] = dense<[3]>\n"
      "func @forward(%x: f32[2,70001]) -> (f32[2,3], i64[2,3]) {\n"
      "  %v, %i = TopK(%x, @k) {axis = -1} : f32[2,3], i64[2,3]\n"
      "  return %v, %i\n}\n",
      "TopK): a row longer than 65,535");
  vk_check_refused(
      "func @forward(%x: f32[1,70001,1]) -> (f32[1,70001,2]) {\n"
      "  %y = DFT(%x) : f32[1,70001,2]\n  return %y\n}\n",
      "a signal longer than 65,535");
  vk_check_refused(
      "func @forward(%x: f32[70001], %a: i64[]) -> (f32[70001]) {\n"
      "  %y = CumSum(%x, %a) : f32[70001]\n  return %y\n}\n",
      "axis fed at run time over a dim longer than 65,535");
}

/* The new forms (the scan, typed tiles, the compensated product with its
 * `precise` GLSL registers, scaled L2, MVN boxes) also compile for CUDA
 * (PTX through clang-16) and Metal (MSL through SPIRV-Cross). */
static void test_compiles_cuda_metal(void) {
  size_t n = 0;
  void *b = cg_package(
      "global @a0 : i64[] = dense<[0]>\n"
      "func @forward(%x: f32[70001], %i: i32[70001], %m: f32[2,3,256,300]) "
      "-> (f32[], f32[], i32[], i64[], f32[70001], i32[70001], "
      "f32[2,3,256,300]) {\n"
      "  %p = ReduceProd(%x) {keepdims = 0} : f32[]\n"
      "  %l = ReduceL2(%x) {keepdims = 0} : f32[]\n"
      "  %s = ReduceSum(%i) {keepdims = 0} : i32[]\n"
      "  %a = ArgMax(%i) {axis = 0, keepdims = 0} : i64[]\n"
      "  %c = CumSum(%x, @a0) {exclusive = 1, reverse = 1} : f32[70001]\n"
      "  %ci = CumSum(%i, @a0) : i32[70001]\n"
      "  %v = MeanVarianceNormalization(%m) : f32[2,3,256,300]\n"
      "  return %p, %l, %s, %a, %c, %ci, %v\n}\n",
      "cuda,metal", &n);
  CHECK(b != NULL);
  free(b);
}

int main(void) {
  dml_rt_device_info_t d[16];
  uint32_t n = 0;
  if (gpu_test_skip(dml_rt_vulkan_devices(d, 16, &n), "no Vulkan device")) return 77;
  RUN(test_rows);
  RUN(test_over_2_24);
  RUN(test_edges);
  RUN(test_mvn);
  RUN(test_narrow_ints);
  RUN(test_losses);
  RUN(test_loss_classes);
  RUN(test_refused);
  RUN(test_compiles_cuda_metal);
  return dml_test_finish();
}
