/* test_vulkan_edges.c — elementwise ops at the edges of f32 (NaN, +-inf,
 * +-0, subnormals, +-1e+-30, negative bases, integral and non-integral
 * exponents) on the default Vulkan device (Mesa's lavapipe in CI) against
 * the CPU, and the CPU against a double / long double reference:
 *   - Pow of every pair of edge bases and exponents (C99 Annex F pow), and
 *     Pow by the constant exponents 2, 3, 0.5 and -1 (the scheduler's
 *     special forms);
 *   - Softplus (log(1 + e^x) without overflow or cancellation) and Sign
 *     (NaN and +-0 kept) on edge values and a sweep of [-100, 100];
 *   - Conv (2-D and 3-D, pads 1) with an infinite weight on a tap that is
 *     padded for every output but the last: 0 * inf = NaN there, as ONNX
 *     Runtime's im2col (1.31: [nan nan nan inf], seven NaN then inf).
 * Agreement: both NaN, or the same infinity, or the same zero (sign
 * included), or |got - want| <= tol * |want| (edge_tol below: relative,
 * documented in docs/kernels.md). The GPU may flush subnormal inputs to
 * zero (Vulkan allows it unless shaderDenormPreserveFloat32): its result
 * is also accepted when it matches the reference at the inputs with
 * subnormals replaced by zeros of their sign. Skips (77) without a Vulkan
 * device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen_test_util.h"
#include "dml_dtype.h"
#include "gpu_test_util.h"
#include "vulkan_forms.h"

/* 1 when `got` agrees with `want` (see the header) within relative `tol`. */
static int edge_agree(double got, double want, double tol) {
  if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
  if (isinf(want) || isinf(got)) return got == want;
  /* zeros and subnormals (a result flushed to zero): the same sign */
  if (fabs(want) < 1.1754943508222875e-38 && fabs(got) < 1.1754943508222875e-38)
    return !signbit(got) == !signbit(want) && (got == want || got == 0 || want == 0);
  return fabs(got - want) <= tol * fabs(want);
}

static float flush(float x) {
  return fabsf(x) < 1.17549435e-38f ? copysignf(0.0f, x) : x;
}

/* Runs `m`'s sessions on the f32 inputs `in[0..n_in)` of `len` elements each
 * and copies output `o` of both into cpu_out / gpu_out. */
static void run_both(dml_rt_session_t *cpu, dml_rt_session_t *vk, int n_in,
                     const float *const *in, int64_t len, int n_out, float **cpu_out,
                     float **gpu_out) {
  dml_rt_session_t *ss[2] = {cpu, vk};
  for (int k = 0; k < 2; k++) {
    for (int i = 0; i < n_in; i++) {
      dml_tensor_t t;
      memset(&t, 0, sizeof t);
      t.dtype = DML_DTYPE_F32;
      t.rank = 1;
      t.dims[0] = len;
      t.data = (void *)in[i];
      CHECK_OK(dml_rt_session_set_input(ss[k], (uint32_t)i, &t));
    }
    CHECK_OK(dml_rt_session_run(ss[k]));
    for (int o = 0; o < n_out; o++) {
      dml_tensor_t y;
      memset(&y, 0, sizeof y);
      CHECK_OK(dml_rt_session_get_output(ss[k], (uint32_t)o, &y));
      CHECK(y.dtype == DML_DTYPE_F32 && y.rank == 1 && y.dims[0] == len);
      if (y.data && y.dims[0] == len)
        memcpy(k ? gpu_out[o] : cpu_out[o], y.data, (size_t)len * sizeof(float));
    }
  }
}

static const float k_bases[] = {
    NAN,     INFINITY, -INFINITY, 0.0f,  -0.0f,  1.0f,    -1.0f,  0.5f,   -0.5f,
    2.0f,    -2.0f,    3.7f,      -3.7f, 1e-30f, -1e-30f, 1e30f,  -1e30f, 1e-40f,
    -1e-40f, 0.999f,   -1.001f,   10.0f, -10.0f, 7.25f,   -0.125f};
static const float k_exps[] = {NAN,     INFINITY, -INFINITY, 0.0f,   -0.0f, 1.0f,
                               -1.0f,   2.0f,     3.0f,      -2.0f,  -3.0f, 0.5f,
                               -0.5f,   2.5f,     1e30f,     -1e30f, 7.0f,  1e-30f,
                               -1e-30f, 1e10f,    0.333f,    4.0f,   -5.0f, 31.0f};

#define N_B (sizeof k_bases / sizeof k_bases[0])
#define N_E (sizeof k_exps / sizeof k_exps[0])

/* Pow: CPU vs C's double pow rounded to f32 (1 ulp), Vulkan vs the CPU
 * (relative 4e-6: lavapipe's pow is exp2(y log2 x) in f32; the constant
 * forms x*x and x*x*x round once or twice). */
static void test_pow(void) {
  dml_rt_session_t *cpu = NULL, *vk = NULL;
  enum { N = (int)(N_B * N_E) };
  char text[2048];
  snprintf(text, sizeof text,
           "global @two : f32[] = dense<[2.0]>\n"
           "global @three : f32[] = dense<[3.0]>\n"
           "global @half : f32[] = dense<[0.5]>\n"
           "global @minus1 : f32[] = dense<[-1.0]>\n"
           "global @e7 : f32[] = dense<[7.0]>\n"
           "func @forward(%%a: f32[%d], %%b: f32[%d]) -> (f32[%d], f32[%d], f32[%d], "
           "f32[%d], f32[%d], f32[%d]) {\n"
           "  %%p = Pow(%%a, %%b) : f32[%d]\n"
           "  %%p2 = Pow(%%a, @two) : f32[%d]\n"
           "  %%p3 = Pow(%%a, @three) : f32[%d]\n"
           "  %%ph = Pow(%%a, @half) : f32[%d]\n"
           "  %%pm = Pow(%%a, @minus1) : f32[%d]\n"
           "  %%p7 = Pow(%%a, @e7) : f32[%d]\n"
           "  return %%p, %%p2, %%p3, %%ph, %%pm, %%p7\n}\n",
           N, N, N, N, N, N, N, N, N, N, N, N, N, N);
  dml_rt_model_t *m = vk_open_pair(text, &cpu, &vk);
  if (!cpu || !vk) {
    gpu_test_close(m, cpu, vk);
    return;
  }
  static float a[N], b[N], co[6][N], go[6][N];
  for (int i = 0; i < (int)N_B; i++)
    for (int j = 0; j < (int)N_E; j++) {
      a[i * (int)N_E + j] = k_bases[i];
      b[i * (int)N_E + j] = k_exps[j];
    }
  const float *in[2] = {a, b};
  float *cpo[6], *gpo[6];
  for (int o = 0; o < 6; o++) {
    cpo[o] = co[o];
    gpo[o] = go[o];
  }
  run_both(cpu, vk, 2, in, N, 6, cpo, gpo);
  static const double cexp[6] = {0, 2, 3, 0.5, -1, 7};
  static const char *const names[6] = {"Pow",         "Pow(x, 2)",  "Pow(x, 3)",
                                       "Pow(x, 0.5)", "Pow(x, -1)", "Pow(x, 7)"};
  int bad = 0;
  for (int o = 0; o < 6; o++)
    for (int i = 0; i < N; i++) {
      double e = o ? cexp[o] : (double)b[i];
      float want = (float)pow((double)a[i], e);
      float want_ftz = (float)pow((double)flush(a[i]), o ? e : (double)flush(b[i]));
      int cpu_ok = edge_agree(co[o][i], want, 1.2e-7);
      int gpu_ok =
          edge_agree(go[o][i], co[o][i], 4e-6) || edge_agree(go[o][i], want_ftz, 4e-6);
      if ((!cpu_ok || !gpu_ok) && bad++ < 40)
        fprintf(stderr, "  %s(%g, %g): cpu %g vulkan %g, want %g\n", names[o],
                (double)a[i], e, (double)co[o][i], (double)go[o][i], (double)want);
    }
  CHECK(bad == 0);
  gpu_test_close(m, cpu, vk);
}

/* ---- the formula table's binary ops (ew_ops.def's DML_EW2) ---- */

typedef long double ld2;
static ld2 r2_add(ld2 x, ld2 y) {
  return x + y;
}
static ld2 r2_sub(ld2 x, ld2 y) {
  return x - y;
}
static ld2 r2_mul(ld2 x, ld2 y) {
  return x * y;
}
static ld2 r2_div(ld2 x, ld2 y) {
  return x / y;
}
static ld2 r2_fmod(ld2 x, ld2 y) {
  return fmodl(x, y);
}
/* NaN of either operand; ties (+-0) give y, as the table's formula */
static ld2 r2_max(ld2 x, ld2 y) {
  return isnan(x) || isnan(y) ? NAN : x > y ? x : y;
}
static ld2 r2_min(ld2 x, ld2 y) {
  return isnan(x) || isnan(y) ? NAN : x < y ? x : y;
}
static ld2 r2_prelu(ld2 x, ld2 y) {
  return x < 0 ? y * x : x;
}

/* Add, Sub, Mul, Div, Mod (fmod = 1), Max, Min and PRelu of every pair of the
 * edge values (k_bases x k_exps: NaN, +-inf, +-0, subnormals, +-1e+-30,
 * ...) and of 70,000 random pairs over 1e-3 .. 1e3 of both signs: the
 * CPU against the long double result rounded to f32 (exact for Add, Sub,
 * Mul, Div, Mod, Max/Min and PRelu: relative 0), Vulkan against the CPU (Div 3
 * ulp: GLSL's division need not be correctly rounded; Mod 1e-6 relative
 * plus 1e-6 |y| absolute where |x / y| < 2^20: the GPUs' fmod is x - y
 * trunc(x / y) in f32, not exact beyond; others exact), a result at the
 * inputs with subnormals flushed to zero also accepted on the GPU. */
static void test_binary_edges(void) {
  enum { NE = (int)(N_B * N_E), NR = 70000, N = NE + NR };
  static const struct {
    const char *op, *attrs;
    ld2 (*ref)(ld2, ld2);
    double gpu_rel;
  } ops[] = {{"Add", "", r2_add, 0},
             {"Sub", "", r2_sub, 0},
             {"Mul", "", r2_mul, 0},
             {"Div", "", r2_div, 3.6e-7},
             {"Mod", " {fmod = 1}", r2_fmod, 1e-6},
             {"Max", "", r2_max, 0},
             {"PRelu", "", r2_prelu, 0},
             {"Min", "", r2_min, 0}};
  enum { NO = (int)(sizeof ops / sizeof ops[0]) };
  char text[2048];
  int len = snprintf(text, sizeof text,
                     "func @forward(%%a: f32[%d], %%b: f32[%d]) -> (f32[%d]", N, N, N);
  for (int o = 1; o < NO; o++)
    len += snprintf(text + len, sizeof text - (size_t)len, ", f32[%d]", N);
  len += snprintf(text + len, sizeof text - (size_t)len, ") {\n");
  for (int o = 0; o < NO; o++)
    len +=
        snprintf(text + len, sizeof text - (size_t)len,
                 "  %%y%d = %s(%%a, %%b)%s : f32[%d]\n", o, ops[o].op, ops[o].attrs, N);
  len += snprintf(text + len, sizeof text - (size_t)len, "  return %%y0");
  for (int o = 1; o < NO; o++)
    len += snprintf(text + len, sizeof text - (size_t)len, ", %%y%d", o);
  snprintf(text + len, sizeof text - (size_t)len, "\n}\n");
  dml_rt_session_t *cpu = NULL, *vk = NULL;
  dml_rt_model_t *m = vk_open_pair(text, &cpu, &vk);
  if (!cpu || !vk) {
    gpu_test_close(m, cpu, vk);
    return;
  }
  static float a[N], b[N], co[NO][N], go[NO][N];
  for (int i = 0; i < (int)N_B; i++)
    for (int j = 0; j < (int)N_E; j++) {
      a[i * (int)N_E + j] = k_bases[i];
      b[i * (int)N_E + j] = k_exps[j];
    }
  uint64_t r = 12345;
  for (int i = NE; i < N; i++)
    for (int k = 0; k < 2; k++) {
      r = r * 6364136223846793005ull + 1442695040888963407ull;
      double u = (double)(r >> 11) / 9007199254740992.0; /* [0, 1) */
      float v = (float)(pow(10.0, -3.0 + 6.0 * u) * ((r >> 7) & 1 ? -1 : 1));
      (k ? b : a)[i] = v;
    }
  const float *in[2] = {a, b};
  float *cpo[NO], *gpo[NO];
  for (int o = 0; o < NO; o++) {
    cpo[o] = co[o];
    gpo[o] = go[o];
  }
  run_both(cpu, vk, 2, in, N, NO, cpo, gpo);
  int bad = 0;
  for (int o = 0; o < NO; o++)
    for (int i = 0; i < N; i++) {
      float want = (float)ops[o].ref(a[i], b[i]);
      float want_ftz = (float)ops[o].ref(flush(a[i]), flush(b[i]));
      int cpu_ok = edge_agree(co[o][i], want, 0);
      int gpu_ok;
      if (ops[o].ref == r2_fmod) {
        /* beyond |x / y| >= 2^20 and for infinite/NaN operands only the
         * NaN results are compared */
        double q = fabs((double)a[i] / (double)b[i]);
        if (isnan(want) || !(q < 1048576.0))
          gpu_ok = !isnan(want) || isnan(go[o][i]);
        else
          gpu_ok = fabs((double)go[o][i] - (double)co[o][i]) <=
                       1e-6 * fabs((double)co[o][i]) + 1e-6 * fabs((double)b[i]) ||
                   edge_agree(go[o][i], want_ftz, 0);
      } else {
        gpu_ok = edge_agree(go[o][i], co[o][i], ops[o].gpu_rel) ||
                 edge_agree(go[o][i], want_ftz, ops[o].gpu_rel);
      }
      if ((!cpu_ok || !gpu_ok) && bad++ < 40)
        fprintf(stderr, "  %s(%g, %g): cpu %g vulkan %g, want %g\n", ops[o].op,
                (double)a[i], (double)b[i], (double)co[o][i], (double)go[o][i],
                (double)want);
    }
  CHECK(bad == 0);
  gpu_test_close(m, cpu, vk);
}

/* softplus in long double: log1p(e^x), as x + log1p(e^-x) for x > 0 */
static double ref_softplus(double x) {
  long double l = (long double)x;
  return (double)(x > 0 ? l + log1pl(expl(-l)) : log1pl(expl(l)));
}

static double ref_sign(double x) {
  return x > 0 ? 1.0 : x < 0 ? -1.0 : x;
}

/* Softplus and Sign: CPU vs the long double reference (2 ulp), Vulkan vs
 * the CPU within relative 2e-6 + |x| 2^-23 (lavapipe's exp(x) is exp2(x
 * log2 e) with x log2 e rounded to f32: its relative error grows as |x|). */
static void test_softplus_sign(void) {
  enum { N = 2048 };
  static float x[N], co[2][N], go[2][N];
  static const float edges[] = {NAN,     INFINITY, -INFINITY, 0.0f,    -0.0f,   1e-40f,
                                -1e-40f, 1e-30f,   -1e-30f,   1e30f,   -1e30f,  -20.0f,
                                20.0f,   30.0f,    88.0f,     89.0f,   100.0f,  -87.0f,
                                -88.0f,  -89.0f,   -103.0f,   -104.0f, -110.0f, 1e-7f,
                                -1e-7f,  0.5f,     -0.5f,     16.0f,   17.0f,   -16.0f};
  int ne = (int)(sizeof edges / sizeof edges[0]);
  for (int i = 0; i < N; i++)
    x[i] = i < ne ? edges[i] : -100.0f + 200.0f * (float)(i - ne) / (float)(N - ne);
  char text[512];
  snprintf(text, sizeof text,
           "func @forward(%%x: f32[%d]) -> (f32[%d], f32[%d]) {\n"
           "  %%s = Softplus(%%x) : f32[%d]\n"
           "  %%g = Sign(%%x) : f32[%d]\n"
           "  return %%s, %%g\n}\n",
           N, N, N, N, N);
  dml_rt_session_t *cpu = NULL, *vk = NULL;
  dml_rt_model_t *m = vk_open_pair(text, &cpu, &vk);
  if (!cpu || !vk) {
    gpu_test_close(m, cpu, vk);
    return;
  }
  const float *in[1] = {x};
  float *cpo[2] = {co[0], co[1]}, *gpo[2] = {go[0], go[1]};
  run_both(cpu, vk, 1, in, N, 2, cpo, gpo);
  int bad = 0;
  for (int i = 0; i < N; i++) {
    double tol = 2e-6 + fabs((double)x[i]) * 1.2e-7;
    double ws = (float)ref_softplus(x[i]), wg = ref_sign(x[i]);
    double ws0 = (float)ref_softplus(flush(x[i])), wg0 = ref_sign(flush(x[i]));
    int ok[4] = {edge_agree(co[0][i], ws, 2.4e-7), edge_agree(co[1][i], wg, 0),
                 edge_agree(go[0][i], co[0][i], tol) || edge_agree(go[0][i], ws0, tol),
                 edge_agree(go[1][i], co[1][i], 0) || edge_agree(go[1][i], wg0, 0)};
    for (int k = 0; k < 4; k++)
      if (!ok[k] && bad++ < 40)
        fprintf(stderr, "  %s(%g) on %s: %g, want %g\n", k % 2 ? "Sign" : "Softplus",
                (double)x[i], k < 2 ? "cpu" : "vulkan",
                (double)(k < 2 ? co[k % 2][i] : go[k % 2][i]),
                k < 2 ? (k ? wg : ws) : (double)co[k % 2][i]);
  }
  CHECK(bad == 0);
  gpu_test_close(m, cpu, vk);
}

/* SoftmaxCrossEntropyLoss (and its log_prob) at the edges, CPU and Vulkan
 * against the f64 values of ONNX's definition: a row of two equal maxima
 * 1e15 (log_prob (x - max) - log(sum): -log 2, where x - (max + log(sum))
 * gave 0 on the GPUs), rows whose target is ignore_index holding +inf and
 * NaN scores (loss +0 and left out of the sums, as the CPU's and ONNX's
 * reference; the GPUs' -logp * 0 made the mean NaN), an ordinary row. */
static void test_sce_edges(void) {
  static const float x[4][3] = {{1e15f, 1e15f, 0.5f},
                                {INFINITY, 1.0f, 2.0f},
                                {NAN, 0.0f, 0.0f},
                                {1.0f, 2.0f, 3.0f}};
  const double l2 = 0.69314718055994531, l3 = log(1.0 + exp(-1.0) + exp(-2.0));
  /* expected: z (none), mean, sum; log_prob of rows 0 and 3 (rows 1 and 2
   * are NaN: exp(inf - inf), a NaN score) */
  const double want_z[4] = {l2, 0.0, 0.0, l3}, want_mean = (l2 + l3) / 2,
               want_sum = l2 + l3;
  const double want_lp[2][3] = {{-l2, -l2, -1e15}, {-2 - l3, -1 - l3, -l3}};
  const char *text =
      "global @t : i64[4] = dense<[0, 1, 1, 2]>\n"
      "func @forward(%x: f32[4,3]) -> (f32[4], f32[4,3], f32[], f32[]) {\n"
      "  %z, %lp = SoftmaxCrossEntropyLoss(%x, @t) {ignore_index = 1, reduction = "
      "\"none\"} : f32[4], f32[4,3]\n"
      "  %m = SoftmaxCrossEntropyLoss(%x, @t) {ignore_index = 1} : f32[]\n"
      "  %s = SoftmaxCrossEntropyLoss(%x, @t) {ignore_index = 1, reduction = \"sum\"} : "
      "f32[]\n"
      "  return %z, %lp, %m, %s\n}\n";
  dml_rt_session_t *cpu = NULL, *vk = NULL;
  dml_rt_model_t *m = vk_open_pair(text, &cpu, &vk);
  if (!cpu || !vk) {
    gpu_test_close(m, cpu, vk);
    return;
  }
  dml_rt_session_t *ss[2] = {cpu, vk};
  static const char *const side[2] = {"cpu", "vulkan"};
  for (int k = 0; k < 2; k++) {
    dml_tensor_t t;
    memset(&t, 0, sizeof t);
    t.dtype = DML_DTYPE_F32;
    t.rank = 2;
    t.dims[0] = 4;
    t.dims[1] = 3;
    t.data = (void *)x;
    CHECK_OK(dml_rt_session_set_input(ss[k], 0, &t));
    CHECK_OK(dml_rt_session_run(ss[k]));
    dml_tensor_t y[4];
    memset(y, 0, sizeof y);
    for (uint32_t o = 0; o < 4; o++) CHECK_OK(dml_rt_session_get_output(ss[k], o, &y[o]));
    if (!y[0].data || !y[1].data || !y[2].data || !y[3].data) continue;
    const float *z = (const float *)y[0].data, *lp = (const float *)y[1].data;
    for (int r = 0; r < 4; r++) {
      /* +0 exactly for the ignored rows (edge_agree compares zeros' signs) */
      int ok = r == 1 || r == 2 ? z[r] == 0 && !signbit(z[r])
                                : edge_agree(z[r], want_z[r], 1e-6);
      if (!ok)
        fprintf(stderr, "  SCE z[%d] on %s: %g, want %g\n", r, side[k], z[r], want_z[r]);
      CHECK(ok);
    }
    for (int r = 0; r < 4; r++)
      for (int c = 0; c < 3; c++) {
        double want = r == 0 ? want_lp[0][c] : r == 3 ? want_lp[1][c] : NAN;
        int ok = edge_agree(lp[r * 3 + c], want, 1e-6);
        if (!ok)
          fprintf(stderr, "  SCE log_prob[%d,%d] on %s: %g, want %g\n", r, c, side[k],
                  lp[r * 3 + c], want);
        CHECK(ok);
      }
    float mean = *(const float *)y[2].data, sum = *(const float *)y[3].data;
    if (!edge_agree(mean, want_mean, 1e-6) || !edge_agree(sum, want_sum, 1e-6))
      fprintf(stderr, "  SCE mean, sum on %s: %g, %g, want %g, %g\n", side[k], mean, sum,
              want_mean, want_sum);
    CHECK(edge_agree(mean, want_mean, 1e-6));
    CHECK(edge_agree(sum, want_sum, 1e-6));
  }
  gpu_test_close(m, cpu, vk);
}

static void test_conv_padded_taps(void) {
  static const char *const text[2] = {
      "global @w : f32[1,1,3,3] = dense<[inf, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, "
      "0.5]>\n"
      "func @forward(%x: f32[1,1,2,2]) -> (f32[1,1,2,2]) {\n"
      "  %y = Conv(%x, @w) {pads = [1, 1, 1, 1]} : f32[1,1,2,2]\n"
      "  return %y\n}\n",
      "global @w : f32[1,1,3,3,3] = dense<[inf, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, "
      "0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, "
      "0.5, 0.5, 0.5, 0.5]>\n"
      "func @forward(%x: f32[1,1,2,2,2]) -> (f32[1,1,2,2,2]) {\n"
      "  %y = Conv(%x, @w) {pads = [1, 1, 1, 1, 1, 1]} : f32[1,1,2,2,2]\n"
      "  return %y\n}\n"};
  static const float ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  for (int r = 0; r < 2; r++) {
    dml_rt_session_t *cpu = NULL, *vk = NULL;
    dml_rt_model_t *m = vk_open_pair(text[r], &cpu, &vk);
    if (!cpu || !vk) {
      gpu_test_close(m, cpu, vk);
      return;
    }
    int n = r ? 8 : 4;
    dml_rt_session_t *ss[2] = {cpu, vk};
    for (int k = 0; k < 2; k++) {
      dml_tensor_t t;
      memset(&t, 0, sizeof t);
      t.dtype = DML_DTYPE_F32;
      t.rank = r ? 5 : 4;
      for (int d = 0; d < t.rank; d++) t.dims[d] = d < 2 ? 1 : 2;
      t.data = (void *)ones;
      CHECK_OK(dml_rt_session_set_input(ss[k], 0, &t));
      CHECK_OK(dml_rt_session_run(ss[k]));
      dml_tensor_t y;
      memset(&y, 0, sizeof y);
      CHECK_OK(dml_rt_session_get_output(ss[k], 0, &y));
      if (!y.data) continue;
      const float *v = (const float *)y.data;
      for (int i = 0; i < n; i++) {
        int ok = i < n - 1 ? isnan(v[i]) : v[i] == INFINITY;
        if (!ok)
          fprintf(stderr, "  Conv %d-D y[%d] on %s: %g\n", r ? 3 : 2, i,
                  k ? "vulkan" : "cpu", v[i]);
        CHECK(ok);
      }
    }
    gpu_test_close(m, cpu, vk);
  }
}

/* Products by a zero and x - x on infinities and NaN: Mul(x, 0), Mul(0, x)
 * and x * 0 + y (the zero a weight read at run time), Sub(x, x) and
 * LeakyRelu with alpha = 0 (x < 0 ? 0 * x : x, the zero a literal in the
 * kernel) are NaN for x = +-inf or NaN on the CPU (IEEE) and must be on
 * Vulkan too, bit for bit elsewhere (-0 for 0 * -1). On lavapipe, x - x
 * folds to 0 unless the kernel declares SignedZeroInfNanPreserve
 * (codegen/spirv/glsl.c), and a literal zero factor folds to +0 whatever the
 * kernel declares (dml_kv_fn writes z * x as x * (x - x)). With the device's
 * shaderSignedZeroInfNanPreserveFloat32 hidden (DMLC_VULKAN_HIDE_FEATURES)
 * the runtime strips the mode: the kernels must still run; the results
 * that then differ from the CPU are counted, not checked. Returns that
 * count (0 when not hidden), -1 without a session. */
static int zero_products(int hidden) {
  static const char text[] =
      "global @z : f32[] = dense<[0.0]>\n"
      "func @forward(%x: f32[12], %y: f32[12]) -> (f32[12], f32[12], f32[12], "
      "f32[12], f32[12]) {\n"
      "  %a = Mul(%x, @z) : f32[12]\n"
      "  %b = Mul(@z, %x) : f32[12]\n"
      "  %t = Mul(%x, @z) : f32[12]\n"
      "  %c = Add(%t, %y) : f32[12]\n"
      "  %d = Sub(%x, %x) : f32[12]\n"
      "  %e = LeakyRelu(%x) {alpha = 0.0} : f32[12]\n"
      "  return %a, %b, %c, %d, %e\n}\n";
  static const float x[12] = {INFINITY, -INFINITY, NAN,   -NAN,   1.0f,   -1.0f,
                              0.0f,     -0.0f,     3e38f, -3e38f, 1e-40f, 2.5f};
  static const float y[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, -12};
  dml_rt_session_t *cpu = NULL, *vk = NULL;
  if (hidden)
    setenv("DMLC_VULKAN_HIDE_FEATURES", "shaderSignedZeroInfNanPreserveFloat32", 1);
  dml_rt_model_t *m = vk_open_pair(text, &cpu, &vk);
  if (hidden) unsetenv("DMLC_VULKAN_HIDE_FEATURES");
  int differ = 0;
  if (!cpu || !vk) {
    gpu_test_close(m, cpu, vk);
    return -1;
  }
  static float co[5][12], go[5][12];
  const float *in[2] = {x, y};
  float *cpo[5] = {co[0], co[1], co[2], co[3], co[4]},
        *gpo[5] = {go[0], go[1], go[2], go[3], go[4]};
  run_both(cpu, vk, 2, in, 12, 5, cpo, gpo);
  static const char *const name[5] = {"Mul(x, 0)", "Mul(0, x)", "x * 0 + y", "Sub(x, x)",
                                      "LeakyRelu alpha 0"};
  for (int o = 0; o < 5; o++)
    for (int i = 0; i < 12; i++) {
      float c = co[o][i], g = go[o][i];
      /* the CPU: NaN exactly for the infinite and NaN x */
      if (o < 4) CHECK((isnan(c) != 0) == (isinf(x[i]) || isnan(x[i])));
      /* a subnormal x may be flushed to a zero of its sign: the same zero */
      int same = isnan(c) ? isnan(g) != 0 : !memcmp(&c, &g, sizeof c);
      if (same) continue;
      if (hidden) {
        differ++;
        continue;
      }
      fprintf(stderr, "  %s at x = %g%s: cpu %g vulkan %g\n", name[o], (double)x[i],
              hidden ? " (float controls hidden)" : "", (double)c, (double)g);
      CHECK(same);
    }
  gpu_test_close(m, cpu, vk);
  return differ;
}

static void test_zero_products(void) {
  CHECK(zero_products(0) == 0);
  int differ = zero_products(1);
  CHECK(differ >= 0);
  printf("  without SignedZeroInfNanPreserve: %d of 60 results differ from the CPU\n",
         differ);
}

/* ---- every op of the elementwise formula table (runtime/base/ew_ops.def) ---- */

typedef long double ld;

static ld r_softplus(ld x) {
  return x > 0 ? x + log1pl(expl(-x)) : log1pl(expl(x));
}
static ld r_clamp01(ld t) {
  return isnan(t) ? t : t < 0 ? 0 : t > 1 ? 1 : t;
}
static ld r_leaky_relu(ld x) {
  return x < 0 ? 0.01L * x : x;
}
static ld r_elu(ld x) {
  return x < 0 ? expm1l(x) : x;
}
static ld r_selu(ld x) {
  return 1.05070102214813232421875L *
         (x > 0 ? x : 1.67326319217681884765625L * expm1l(x));
}
static ld r_celu(ld x) {
  return x > 0 ? x : expm1l(x);
}
static ld r_hard_sigmoid(ld x) {
  return r_clamp01(0.2L * x + 0.5L);
}
static ld r_hard_swish(ld x) {
  return x * r_clamp01(x / 6 + 0.5L);
}
static ld r_softsign(ld x) {
  return isinf(x) ? (x > 0 ? 1 : -1) : x / (1 + fabsl(x));
}
static ld r_thresholded_relu(ld x) {
  return isnan(x) ? x : x > 1 ? x : 0;
}
static ld r_mish(ld x) {
  return x == -INFINITY ? -0.0L : x * tanhl(r_softplus(x));
}
static ld r_gelu(ld x) {
  return x == -INFINITY ? -0.0L : 0.5L * x * erfcl(-x / sqrtl(2.0L));
}
static ld r_gelu_tanh(ld x) {
  /* x/2 (1 + tanh u) = x e^2u / (1 + e^2u) below 0 (no cancellation) */
  if (x == -INFINITY) return -0.0L;
  ld u =
      sqrtl(2.0L / 3.14159265358979323846264338327950288L) * (x + 0.044715L * x * x * x);
  if (u >= 0) return 0.5L * x * (1 + tanhl(u));
  ld e = expl(2 * u);
  return x * e / (1 + e);
}
static ld r_erf(ld x) {
  return erfl(x);
}
static ld r_tan(ld x) {
  return tanl(x);
}
static ld r_sinh(ld x) {
  return sinhl(x);
}
static ld r_cosh(ld x) {
  return coshl(x);
}
static ld r_asin(ld x) {
  return asinl(x);
}
static ld r_acos(ld x) {
  return acosl(x);
}
static ld r_atan(ld x) {
  return atanl(x);
}
static ld r_asinh(ld x) {
  return asinhl(x);
}
static ld r_acosh(ld x) {
  return acoshl(x);
}
static ld r_atanh(ld x) {
  return atanhl(x);
}

static ld r_tanh(ld x) {
  return tanhl(x);
}
static ld r_sigmoid(ld x) {
  return 1 / (1 + expl(-x));
}
static ld r_exp(ld x) {
  return expl(x);
}
static ld r_log(ld x) {
  return logl(x);
}
static ld r_sqrt(ld x) {
  return sqrtl(x);
}
static ld r_recip(ld x) {
  return 1 / x;
}
static ld r_sin(ld x) {
  return sinl(x);
}
static ld r_cos(ld x) {
  return cosl(x);
}
static ld r_floor(ld x) {
  return floorl(x);
}
static ld r_ceil(ld x) {
  return ceill(x);
}
static ld r_round(ld x) {
  return nearbyintl(x);
}
static ld r_abs(ld x) {
  return fabsl(x);
}
static ld r_neg(ld x) {
  return -x;
}
static ld r_relu(ld x) {
  return x < 0 ? 0 : x;
}
static ld r_sign_ld(ld x) {
  return x > 0 ? 1 : x < 0 ? -1 : x;
}

/* One op (with attributes `attrs`, IR text) of the table: its long double
 * reference and tolerances. Agreement: NaN, infinities and zeros (signed)
 * exactly; else |got - want| <= max(rel |want|, abs). The CPU's f32 result
 * is compared with the reference rounded to f32 (cpu_rel, cpu_abs), its f64
 * result with the reference (f64_rel, f64_abs); Vulkan's f32 result with
 * the CPU's (gpu_rel, gpu_abs) for |x| <= gpu_range (beyond it only NaN and
 * infinite inputs: the GPUs' sin/cos reduce arguments to [-pi, pi] in f32),
 * its f16 and bf16 results with the CPU's within one rounding step of the
 * dtype. The values and their reasons: docs/kernels.md. */
typedef struct {
  const char *op, *attrs;
  ld (*ref)(ld x);
  double cpu_rel, cpu_abs, f64_rel, f64_abs, gpu_rel, gpu_abs, gpu_range;
  const char *f64_refusal; /* Vulkan's f64 refusal (NULL: f64 is emitted) */
} ew_case_t;

#define EW_ALL INFINITY
#define EW_TABLE_F64 "f64 of this op is not emitted"
/* The CPU comparisons' absolute floor: steps of the subnormal range (a
 * result there has fewer significant bits; libm's double functions with a
 * subnormal intermediate, e^x of x < -708 in Gelu-tanh, lose several). */
#define EW_F32_SUB3 4.3e-45
#define EW_F64_SUB3 1e-322
static const ew_case_t k_ew_cases[] = {
    /* op, attrs, reference, cpu_rel, cpu_abs, f64_rel, f64_abs, gpu_rel, gpu_abs,
     * gpu_range */
    {"LeakyRelu", "", r_leaky_relu, 1.2e-7, 0, 2.3e-16, 0, 2.4e-7, 0, EW_ALL,
     EW_TABLE_F64},
    {"Elu", "", r_elu, 1.2e-7, 0, 4.5e-16, 0, 1e-6, 1e-7, EW_ALL, EW_TABLE_F64},
    {"Selu", "", r_selu, 1.2e-7, 0, 6.7e-16, 0, 1e-6, 1e-7, EW_ALL, EW_TABLE_F64},
    {"Celu", "", r_celu, 1.2e-7, 0, 4.5e-16, 0, 1e-6, 1e-7, EW_ALL, EW_TABLE_F64},
    {"HardSigmoid", "", r_hard_sigmoid, 1.2e-7, 0, 4.5e-16, 1.2e-16, 2.4e-7, 6e-8, EW_ALL,
     EW_TABLE_F64},
    {"HardSwish", "", r_hard_swish, 1.2e-7, 0, 6.7e-16, 1.2e-16, 2.4e-7, 6e-8, EW_ALL,
     EW_TABLE_F64},
    {"Softplus", "", r_softplus, 1.2e-7, 0, 4.5e-16, 0, 1e-5, 0, EW_ALL, EW_TABLE_F64},
    {"Softsign", "", r_softsign, 1.2e-7, 0, 4.5e-16, 0, 2.4e-7, 0, EW_ALL, EW_TABLE_F64},
    {"ThresholdedRelu", "", r_thresholded_relu, 0, 0, 0, 0, 0, 0, EW_ALL, EW_TABLE_F64},
    {"Mish", "", r_mish, 1.2e-7, 0, 8.9e-16, 2e-320, 2e-6, 1e-7, EW_ALL, EW_TABLE_F64},
    {"Gelu", "", r_gelu, 1.2e-7, 0, 2e-13, 0, 1e-6, 1e-7, EW_ALL, EW_TABLE_F64},
    {"Gelu", " {approximate = \"tanh\"}", r_gelu_tanh, 1.2e-7, 0, 4e-13, 0, 1e-6, 1e-7,
     EW_ALL, EW_TABLE_F64},
    {"Erf", "", r_erf, 1.2e-7, 0, 4.5e-16, 0, 5e-7, 0, EW_ALL, EW_TABLE_F64},
    {"Tan", "", r_tan, 1.2e-7, 0, 8.9e-16, 0, 1e-6, 1e-6, 10, EW_TABLE_F64},
    {"Sinh", "", r_sinh, 1.2e-7, 0, 4.5e-16, 0, 1.2e-5, 0, EW_ALL, EW_TABLE_F64},
    {"Cosh", "", r_cosh, 1.2e-7, 0, 4.5e-16, 0, 1.2e-5, 0, EW_ALL, EW_TABLE_F64},
    {"Asin", "", r_asin, 1.2e-7, 0, 4.5e-16, 0, 1e-6, 4e-6, EW_ALL, EW_TABLE_F64},
    {"Acos", "", r_acos, 1.2e-7, 0, 4.5e-16, 0, 1e-6, 4e-6, EW_ALL, EW_TABLE_F64},
    {"Atan", "", r_atan, 1.2e-7, 0, 4.5e-16, 0, 1e-6, 2e-6, EW_ALL, EW_TABLE_F64},
    {"Asinh", "", r_asinh, 1.2e-7, 0, 4.5e-16, 0, 1e-6, 0, EW_ALL, EW_TABLE_F64},
    {"Acosh", "", r_acosh, 1.2e-7, 0, 4.5e-16, 0, 1e-6, 0, EW_ALL, EW_TABLE_F64},
    {"Atanh", "", r_atanh, 1.2e-7, 0, 4.5e-16, 0, 1e-6, 0, EW_ALL, EW_TABLE_F64},
    /* the hand-written unary ops (codegen/schedule.c, cpu_elementwise.c) */
    /* Tanh and Sigmoid of f64 are emitted (kernel_math.c's f64 forms; their
     * GPU results: test_tensor_vulkan's typed rows) */
    {"Tanh", "", r_tanh, 2.4e-7, 0, 4.5e-16, 0, 1e-6, 0, EW_ALL, NULL},
    {"Sigmoid", "", r_sigmoid, 3.6e-7, 0, 4.5e-16, 0, 1e-5, 0, EW_ALL, NULL},
    {"Exp", "", r_exp, 1.2e-7, 0, 4.5e-16, 0, 1e-5, 0, EW_ALL, NULL},
    {"Log", "", r_log, 1.2e-7, 0, 4.5e-16, 0, 1e-6, 0, EW_ALL, NULL},
    {"Sqrt", "", r_sqrt, 1.2e-7, 0, 2.3e-16, 0, 2.4e-7, 0, EW_ALL, NULL},
    {"Reciprocal", "", r_recip, 1.2e-7, 0, 2.3e-16, 0, 2.4e-7, 0, EW_ALL, NULL},
    {"Sin", "", r_sin, 1.2e-7, 0, 4.5e-16, 0, 1e-6, 1e-6, 10, "only f32 is emitted"},
    {"Cos", "", r_cos, 1.2e-7, 0, 4.5e-16, 0, 1e-6, 1e-6, 10, "only f32 is emitted"},
    {"Floor", "", r_floor, 0, 0, 0, 0, 0, 0, EW_ALL, NULL},
    {"Ceil", "", r_ceil, 0, 0, 0, 0, 0, 0, EW_ALL, NULL},
    {"Round", "", r_round, 0, 0, 0, 0, 0, 0, EW_ALL, "only f32 is emitted"},
    {"Abs", "", r_abs, 0, 0, 0, 0, 0, 0, EW_ALL, NULL},
    {"Neg", "", r_neg, 0, 0, 0, 0, 0, 0, EW_ALL, NULL},
    {"Relu", "", r_relu, 0, 0, 0, 0, 0, 0, EW_ALL, NULL},
    {"Sign", "", r_sign_ld, 0, 0, 0, 0, 0, 0, EW_ALL, NULL},
};
#define N_EW_CASES (sizeof k_ew_cases / sizeof k_ew_cases[0])

/* got agrees with want within max(rel |want|, abs) (NaN, inf, signed
 * zeros exactly); `flush`: a result below FLT_MIN may be a zero of its
 * sign (a GPU flushing subnormals). */
static int ew_agree(double got, double want, double rel, double abs, int flush) {
  if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
  if (isinf(want) || isinf(got)) return got == want;
  if (got == 0 && want == 0) return !signbit(got) == !signbit(want);
  if (flush && fabs(want) < 1.1754943508222875e-38 && fabs(got) < 1.1754943508222875e-38)
    return !signbit(got) == !signbit(want);
  return fabs(got - want) <= fmax(rel * fabs(want), abs);
}

enum { EW_N = 70001 }; /* more than 65,535 elements: a grid of two dims */

/* The f32 inputs: the edge values, then random ones (uniform in [-10, 10]
 * and [-1, 1], and log-uniform magnitudes 1e-30 .. 1e30 of either sign).
 * *zero_pos / *zero_neg: the indices of +0 and -0. */
static void ew_inputs(float *x, int *zero_pos, int *zero_neg) {
  static const float edges[] = {
      NAN,           -NAN,           INFINITY, -INFINITY, 0.0f,    -0.0f,   1e-40f,
      -1e-40f,       1e-45f,         -1e-45f,  1e-30f,    -1e-30f, 1e30f,   -1e30f,
      3.4028235e38f, -3.4028235e38f, 1.0f,     -1.0f,     0.5f,    -0.5f,   2.0f,
      -2.0f,         3.0f,           -3.0f,    6.0f,      -6.0f,   20.0f,   -20.0f,
      88.0f,         -88.0f,         89.0f,    -89.0f,    100.0f,  -100.0f, 1e-7f,
      -1e-7f,        0.999f,         -0.999f,  1.001f,    -1.001f, 1e-3f,   -1e-3f,
      4095.0f,       4097.0f,        -4097.0f, 1e5f,      -1e5f,   0.25f,   -0.25f};
  int ne = (int)(sizeof edges / sizeof edges[0]);
  gpu_test_seed(20261206);
  for (int i = 0; i < EW_N; i++) {
    if (i < ne) {
      x[i] = edges[i];
      continue;
    }
    float u = gpu_test_frand(); /* [0, 1) */
    switch (i % 4) {
      case 0: x[i] = -10.0f + 20.0f * u; break;
      case 1: x[i] = -1.0f + 2.0f * u; break;
      default: {
        float m = powf(10.0f, -30.0f + 60.0f * u);
        x[i] = (i % 8) < 4 ? m : -m;
      }
    }
  }
  *zero_pos = 4;
  *zero_neg = 5;
}

static int ew_bad_ = 0, ew_bad_case_ = 0;

static void ew_report(const char *what, const ew_case_t *c, double x, double got,
                      double want) {
  ew_bad_++;
  if (ew_bad_case_++ < 6)
    fprintf(stderr, "  %s%s(%.9g) %s: %.9g, want %.9g\n", c->op, c->attrs, x, what, got,
            want);
}

/* Runs a one-node model of case c on dtype `dt` (IR name `dn`), `n`
 * elements of x (converted to dt), on the CPU and Vulkan; the outputs as
 * doubles in cpu_out / gpu_out. Returns 0 when the model did not run. */
static int ew_run(const ew_case_t *c, dml_dtype_t dt, const char *dn, const float *x,
                  int n, double *cpu_out, double *gpu_out) {
  char text[512];
  snprintf(text, sizeof text,
           "func @forward(%%x: %s[%d]) -> (%s[%d]) {\n"
           "  %%y = %s(%%x)%s : %s[%d]\n  return %%y\n}\n",
           dn, n, dn, n, c->op, c->attrs, dn, n);
  dml_rt_session_t *cpu = NULL, *vk = NULL;
  dml_rt_model_t *m = vk_open_pair(text, &cpu, &vk);
  if (!cpu || !vk) {
    fprintf(stderr, "  (%s%s on %s)\n", c->op, c->attrs, dn);
    gpu_test_close(m, cpu, vk);
    return 0;
  }
  size_t es = dml_dtype_size(dt);
  void *in = malloc(es * (size_t)(n ? n : 1));
  for (int i = 0; i < n; i++) dml_store_f64(dt, in, (size_t)i, (double)x[i]);
  dml_rt_session_t *ss[2] = {cpu, vk};
  int ok = 1;
  for (int k = 0; k < 2; k++) {
    dml_tensor_t t;
    memset(&t, 0, sizeof t);
    t.dtype = dt;
    t.rank = 1;
    t.dims[0] = n;
    t.data = in;
    CHECK_OK(dml_rt_session_set_input(ss[k], 0, &t));
    CHECK_OK(dml_rt_session_run(ss[k]));
    dml_tensor_t y;
    memset(&y, 0, sizeof y);
    CHECK_OK(dml_rt_session_get_output(ss[k], 0, &y));
    CHECK(y.dtype == dt && y.rank == 1 && y.dims[0] == n);
    if (y.dtype != dt || y.rank != 1 || y.dims[0] != n || (n && !y.data)) {
      ok = 0;
      continue;
    }
    for (int i = 0; i < n; i++)
      (k ? gpu_out : cpu_out)[i] = dml_load_f64(dt, y.data, (size_t)i);
  }
  free(in);
  gpu_test_close(m, cpu, vk);
  return ok;
}

/* Every op of ew_ops.def has a case here (a new op without one fails). */
static void test_ew_every_op_has_a_case(void) {
#define DML_EW(e, attrs, value, grad)                                      \
  {                                                                        \
    int found_ = 0;                                                        \
    for (size_t i = 0; i < N_EW_CASES; i++)                                \
      found_ |= !strcmp(k_ew_cases[i].op, dml_op_name(DML_OP_##e));        \
    if (!found_)                                                           \
      fprintf(stderr, "  op %s of ew_ops.def has no case in k_ew_cases\n", \
              dml_op_name(DML_OP_##e));                                    \
    CHECK(found_);                                                         \
  }
#define DML_EW_ATTR_F(name, dflt, nonzero)
#define DML_EW_ATTR_S(name, first, second)
#include "ew_ops.def"
#undef DML_EW
}

/* f32: the CPU against the reference, Vulkan against the CPU, on EW_N
 * edge and random values; f64: the CPU against the reference; f16 and
 * bf16: Vulkan against the CPU (one rounding step); f64 on Vulkan is
 * refused; an empty tensor on both. */
static void test_ew_table(void) {
  static float x[EW_N];
  static double co[EW_N], go[EW_N];
  int zp, zn;
  ew_inputs(x, &zp, &zn);
  ew_bad_ = 0;
  for (size_t ci = 0; ci < N_EW_CASES; ci++) {
    const ew_case_t *c = &k_ew_cases[ci];
    double worst_cpu = 0, worst_gpu = 0;
    ew_bad_case_ = 0;
    if (ew_run(c, DML_DTYPE_F32, "f32", x, EW_N, co, go)) {
      for (int i = 0; i < EW_N; i++) {
        double want = (float)c->ref((ld)x[i]);
        if (!ew_agree(co[i], want, c->cpu_rel, fmax(c->cpu_abs, EW_F32_SUB3), 0))
          ew_report("on the cpu", c, x[i], co[i], want);
        else if (fabs(want) >= 1.1754943508222875e-38 && isfinite(want) &&
                 fabs(co[i] - want) > c->cpu_abs)
          worst_cpu = fmax(worst_cpu, fabs(co[i] - want) / fabs(want));
        if (!(fabsf(x[i]) <= c->gpu_range) && isfinite(x[i])) continue;
        int sub = x[i] != 0 && fabsf(x[i]) < 1.17549435e-38f;
        double alt = sub ? co[x[i] > 0 ? zp : zn] : co[i];
        if (!ew_agree(go[i], co[i], c->gpu_rel, c->gpu_abs, 1) &&
            !ew_agree(go[i], alt, c->gpu_rel, c->gpu_abs, 1))
          ew_report("on vulkan", c, x[i], go[i], co[i]);
        else if (fabs(co[i]) >= 1.1754943508222875e-38 && isfinite(co[i]) && !sub &&
                 fabs(go[i] - co[i]) > c->gpu_abs)
          worst_gpu = fmax(worst_gpu, fabs(go[i] - co[i]) / fabs(co[i]));
      }
    }
    printf("  %s%s: f32 largest relative error cpu %.3g, vulkan %.3g\n", c->op, c->attrs,
           worst_cpu, worst_gpu);
    /* f64 on the CPU (the GPU refuses it) */
    {
      char text[512];
      snprintf(text, sizeof text,
               "func @forward(%%x: f64[%d]) -> (f64[%d]) {\n"
               "  %%y = %s(%%x)%s : f64[%d]\n  return %%y\n}\n",
               EW_N, EW_N, c->op, c->attrs, EW_N);
      if (c->f64_refusal) vk_check_refused(text, c->f64_refusal);
      size_t n = 0;
      void *bytes = cg_package(text, "cpu", &n);
      dml_rt_model_t *m = NULL;
      dml_rt_session_t *s = NULL;
      if (bytes) CHECK_OK(dml_rt_model_load_memory(bytes, n, &m));
      free(bytes);
      if (m) CHECK_OK(dml_rt_session_create(m, "cpu", &s));
      if (s) {
        double *xd = (double *)malloc(sizeof(double) * EW_N);
        for (int i = 0; i < EW_N; i++) xd[i] = x[i];
        dml_tensor_t t, y;
        memset(&t, 0, sizeof t);
        memset(&y, 0, sizeof y);
        t.dtype = DML_DTYPE_F64;
        t.rank = 1;
        t.dims[0] = EW_N;
        t.data = xd;
        CHECK_OK(dml_rt_session_set_input(s, 0, &t));
        CHECK_OK(dml_rt_session_run(s));
        CHECK_OK(dml_rt_session_get_output(s, 0, &y));
        if (y.data && y.dtype == DML_DTYPE_F64)
          for (int i = 0; i < EW_N; i++) {
            double got = ((const double *)y.data)[i], want = (double)c->ref((ld)xd[i]);
            if (!ew_agree(got, want, c->f64_rel, fmax(c->f64_abs, EW_F64_SUB3), 0))
              ew_report("f64 on the cpu", c, xd[i], got, want);
          }
        free(xd);
      }
      dml_rt_session_release(s);
      dml_rt_model_release(m);
    }
    /* f16 and bf16 on Vulkan against the CPU: one rounding step */
    static const struct {
      dml_dtype_t dt;
      const char *name;
      double step;
    } halves[2] = {{DML_DTYPE_F16, "f16", 9.765625e-4},
                   {DML_DTYPE_BF16, "bf16", 7.8125e-3}};
    for (int h = 0; h < 2; h++) {
      if (!ew_run(c, halves[h].dt, halves[h].name, x, EW_N, co, go)) continue;
      for (int i = 0; i < EW_N; i++) {
        if (!(fabsf(x[i]) <= c->gpu_range) && isfinite(x[i])) continue;
        double tiny = halves[h].dt == DML_DTYPE_F16 ? 6.0e-8 : 0;
        if (!ew_agree(go[i], co[i], halves[h].step * 1.001, fmax(c->gpu_abs, tiny), 1) &&
            !(x[i] != 0 && fabs(x[i]) < 1.2e-38))
          ew_report(halves[h].name, c, x[i], go[i], co[i]);
      }
    }
    /* an empty tensor */
    double e0, e1;
    ew_run(c, DML_DTYPE_F32, "f32", x, 0, &e0, &e1);
  }
  CHECK(ew_bad_ == 0);
}

int main(void) {
  dml_rt_device_info_t d[16];
  uint32_t n = 0;
  if (gpu_test_skip(dml_rt_vulkan_devices(d, 16, &n), "no Vulkan device")) return 77;
  RUN(test_pow);
  RUN(test_binary_edges);
  RUN(test_softplus_sign);
  RUN(test_sce_edges);
  RUN(test_conv_padded_taps);
  RUN(test_zero_products);
  RUN(test_ew_every_op_has_a_case);
  RUN(test_ew_table);
  return dml_test_finish();
}
