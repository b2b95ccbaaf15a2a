/*
 * test_sincos.c — the GPU kernels' sin and cos (codegen/kernel_sincos.h,
 * the text GLSL, MSL and CUDA C carry) compiled on the host and compared
 * with sin and cos of the same f32 in double (glibc's, correctly reduced),
 * rounded to f32:
 *   - every 251st f32 bit pattern of one sign (8.5M arguments of every
 *     magnitude, subnormals to FLT_MAX), both signs;
 *   - the f32 around k pi/2 for k < 2^16 and the f32 nearest k pi/2 times
 *     2^e for e up to 104 (where the reduction cancels most), and the
 *     bf16 and f16 edge values the differential test uses (1e30, 3e38, ...);
 *   - NaN and +-inf give NaN, sin(+-0) = +-0, cos(+-0) = 1.
 * Bounds (measured, with margin): absolute error 2.5e-7 everywhere (the
 * checker's scaled error, dml_rt_check, is absolute below |y| = 1), and
 * within 4 f32 ulp of the result: for |x| > 8192 (Payne–Hanek) every
 * normal result, for |x| <= 8192 (Cody–Waite) where |result| >= 2^-10
 * (nearer the zeros it is accurate absolutely, not relatively: 974 ulp,
 * 1.4e-11, at x = 6715.1543, sin -1.73e-7). The two paths are counted
 * apart.
 * The text itself is checked to be what the renderers emit: it names
 * dml_sincos and no C-only construct (no '[', no "->", no pointers).
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dml_test.h"
#include "kernel_sincos.h"

static uint32_t f2u(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return u;
}
static float u2f(uint32_t u) {
  float x;
  memcpy(&x, &u, 4);
  return x;
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wfloat-conversion"
#pragma GCC diagnostic ignored "-Wunused-function"
#define DML_SRC(...) __VA_ARGS__
#define DML_SC_FN static
#define DML_SC_U uint32_t
#define DML_SC_F2U(x) f2u(x)
#define DML_SC_MULHI(a, b) ((uint32_t)(((uint64_t)(a) * (uint64_t)(b)) >> 32))
#define DML_SC_FLOOR(x) floorf(x)
#define DML_SC_PRECISE
DML_SINCOS_SRC
#undef DML_SRC
#pragma GCC diagnostic pop

#define DML_SRC(...) #__VA_ARGS__
static const char k_text[] = DML_SINCOS_SRC;
#undef DML_SRC

typedef struct {
  double abs_fast, abs_big, ulp_fast, ulp_big;
  float worst_x;
  long n;
} acc_t;

/* Errors of dml_sincos(x, q0) against the double reference, into a. */
static void one(acc_t *a, float x, int cosine) {
  float y = dml_sincos(x, cosine ? 1.0f : 0.0f);
  double ref = cosine ? cos((double)x) : sin((double)x);
  float rf = (float)ref;
  a->n++;
  if (!isfinite(x)) {
    CHECK(isnan(y));
    return;
  }
  double e = fabs((double)y - ref);
  int fast = fabsf(x) <= 8192.0f;
  double *ab = fast ? &a->abs_fast : &a->abs_big;
  if (e > *ab) {
    *ab = e;
    if (e > 2.5e-7) a->worst_x = x;
  }
  /* ulp: Payne–Hanek's for every normal result, Cody–Waite's (whose third
   * part of pi/2 is rounded) where |result| >= 2^-10 */
  if (fast ? fabs(ref) >= 1.0 / 1024 : fabs(ref) >= FLT_MIN) {
    double ulp = nextafterf(fabsf(rf), INFINITY) - fabsf(rf);
    double u = e / ulp;
    double *up = fast ? &a->ulp_fast : &a->ulp_big;
    if (u > *up) *up = u;
  }
}

static void sweep(acc_t *a, int cosine) {
  for (uint64_t b = 0; b < 0x7f800000u; b += 251) {
    one(a, u2f((uint32_t)b), cosine);
    one(a, -u2f((uint32_t)b), cosine);
  }
  /* near k pi/2: the f32 nearest and its neighbours */
  for (int k = 1; k < 65536; k++) {
    float x = (float)(k * 1.5707963267948966);
    for (int d = -2; d <= 2; d++) {
      uint32_t u = f2u(x) + (uint32_t)d;
      one(a, u2f(u), cosine);
    }
  }
  /* near k pi/2 2^e, large e (Payne–Hanek's cancellations) */
  for (int e = 13; e <= 104; e++)
    for (int k = 1; k < 4096; k += 3) {
      float x = (float)ldexp(k * 1.5707963267948966, e);
      if (!isfinite(x)) continue;
      one(a, x, cosine);
      one(a, nextafterf(x, 0), cosine);
      one(a, nextafterf(x, INFINITY), cosine);
    }
  static const float edges[] = {1e30f,   -1e30f,   3e38f,    -3e38f,       1e15f, -1e15f,
                                FLT_MAX, -FLT_MAX, 8192.0f,  8192.0005f,   1.0f,  0.5f,
                                1e-30f,  1.4e-45f, 65504.0f, 3.3895314e38f};
  for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) one(a, edges[i], cosine);
}

static void test_accuracy(void) {
  for (int cosine = 0; cosine < 2; cosine++) {
    acc_t a;
    memset(&a, 0, sizeof a);
    sweep(&a, cosine);
    printf(
        "%s: %ld arguments; |x| <= 8192: abs %.3g, %.3g ulp; beyond: abs %.3g, %.3g "
        "ulp\n",
        cosine ? "cos" : "sin", a.n, a.abs_fast, a.ulp_fast, a.abs_big, a.ulp_big);
    if (a.worst_x != 0.0f) printf("  worst x %.9g\n", (double)a.worst_x);
    CHECK(a.abs_fast <= 2.5e-7);
    CHECK(a.abs_big <= 2.5e-7);
    CHECK(a.ulp_fast <= 4.0);
    CHECK(a.ulp_big <= 4.0);
  }
}

static void test_specials(void) {
  CHECK(isnan(dml_sin(NAN)) && isnan(dml_cos(NAN)));
  CHECK(isnan(dml_sin(INFINITY)) && isnan(dml_sin(-INFINITY)));
  CHECK(isnan(dml_cos(INFINITY)) && isnan(dml_cos(-INFINITY)));
  CHECK(dml_sin(0.0f) == 0.0f && !signbit(dml_sin(0.0f)));
  CHECK(dml_sin(-0.0f) == 0.0f && signbit(dml_sin(-0.0f)));
  CHECK(dml_cos(0.0f) == 1.0f && dml_cos(-0.0f) == 1.0f);
  /* a subnormal: sin(x) = x */
  CHECK(dml_sin(1.4e-45f) == 1.4e-45f);
}

static void test_text(void) {
  CHECK(strstr(k_text, "dml_sincos(float x, float q0)") != NULL);
  CHECK(strstr(k_text, "DML_SC_MULHI(m, w2)") != NULL);
  CHECK(!strchr(k_text, '['));
  CHECK(!strstr(k_text, "->"));
  CHECK(!strstr(k_text, "float *"));
  CHECK(!strstr(k_text, "/*")); /* comments are not carried */
}

int main(void) {
  RUN(test_specials);
  RUN(test_text);
  RUN(test_accuracy);
  return dml_test_finish();
}
