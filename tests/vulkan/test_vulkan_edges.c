/* test_vulkan_edges.c — elementwise ops at the edges of f32 (NaN, +-inf,
 * +-0, subnormals, +-1e+-30, negative bases, integral and non-integral
 * exponents) on the default Vulkan device (Mesa's lavapipe in CI) against
 * the CPU, and the CPU against a double / long double reference:
 *   - Pow of every pair of edge bases and exponents (C99 Annex F pow), and
 *     Pow by the constant exponents 2, 3, 0.5 and -1 (the scheduler's
 *     special forms);
 *   - Softplus (log(1 + e^x) without overflow or cancellation) and Sign
 *     (NaN and +-0 kept) on edge values and a sweep of [-100, 100].
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

int main(void) {
  dml_rt_device_info_t d[16];
  uint32_t n = 0;
  if (gpu_test_skip(dml_rt_vulkan_devices(d, 16, &n), "no Vulkan device")) return 77;
  RUN(test_pow);
  RUN(test_softplus_sign);
  return dml_test_finish();
}
