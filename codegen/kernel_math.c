/* kernel_math.c — scalar functions composed from the kernel IR's primitive
 * functions (kernel_internal.h), so every renderer (GLSL, CUDA C, MSL through
 * SPIR-V) gets them without a library of its own. Accuracy is noted per
 * function; the GPU tests compare with the CPU's libm within 1e-4. */
#include <math.h>

#include "dml_ew.h"
#include "kernel_internal.h"

static const dml_kval_t *f1(dml_kpool_t *p, dml_kfn_t f, const dml_kval_t *a) {
  return dml_kv_fn(p, f, a, NULL);
}
static const dml_kval_t *f2(dml_kpool_t *p, dml_kfn_t f, const dml_kval_t *a,
                            const dml_kval_t *b) {
  return dml_kv_fn(p, f, a, b);
}
static const dml_kval_t *k(dml_kpool_t *p, double c) {
  return dml_kv_const(p, (float)c);
}

const dml_kval_t *dml_kv_step(dml_kpool_t *p, const dml_kval_t *x) {
  /* ceil(max(x, 0)) is 0 for x <= 0 and >= 1 for x > 0 (the smallest
   * subnormal included): exact for every finite x */
  return f2(p, DML_KF_MIN, f1(p, DML_KF_CEIL, f2(p, DML_KF_MAX, x, k(p, 0.0))),
            k(p, 1.0));
}

const dml_kval_t *dml_kv_sign(dml_kpool_t *p, const dml_kval_t *x) {
  return f2(p, DML_KF_SUB, dml_kv_step(p, x), dml_kv_step(p, f1(p, DML_KF_NEG, x)));
}

const dml_kval_t *dml_kv_select_pos(dml_kpool_t *p, const dml_kval_t *c,
                                    const dml_kval_t *a, const dml_kval_t *b) {
  /* step(c) * a + (1 - step(c)) * b: exact when both branches are finite
   * (an infinite branch not taken gives NaN) */
  const dml_kval_t *s = dml_kv_step(p, c);
  return f2(p, DML_KF_ADD, f2(p, DML_KF_MUL, s, a),
            f2(p, DML_KF_MUL, f2(p, DML_KF_SUB, k(p, 1.0), s), b));
}

const dml_kval_t *dml_kv_erf(dml_kpool_t *p, const dml_kval_t *x) {
  /* Abramowitz & Stegun 7.1.26 on |x|, odd: absolute error below 1.5e-7
   * (5.3e-7 measured in f32) */
  const dml_kval_t *a = f1(p, DML_KF_ABS, x);
  const dml_kval_t *t =
      f1(p, DML_KF_RECIP,
         f2(p, DML_KF_ADD, k(p, 1.0), f2(p, DML_KF_MUL, k(p, 0.3275911), a)));
  static const double c[5] = {0.254829592, -0.284496736, 1.421413741, -1.453152027,
                              1.061405429};
  const dml_kval_t *poly = k(p, c[4]);
  for (int i = 3; i >= 0; i--)
    poly = f2(p, DML_KF_ADD, k(p, c[i]), f2(p, DML_KF_MUL, t, poly));
  poly = f2(p, DML_KF_MUL, t, poly);
  const dml_kval_t *e = f1(p, DML_KF_EXP, f1(p, DML_KF_NEG, f2(p, DML_KF_MUL, a, a)));
  const dml_kval_t *y = f2(p, DML_KF_SUB, k(p, 1.0), f2(p, DML_KF_MUL, poly, e));
  return f2(p, DML_KF_MUL, dml_kv_sign(p, x), y);
}

const dml_kval_t *dml_kv_atan(dml_kpool_t *p, const dml_kval_t *x) {
  /* odd; on z = min(|x|, 1/|x|) in [0, 1] a degree-11 odd minimax polynomial
   * (absolute error 1.8e-6), and atan(a) = pi/2 - atan(1/a) for a > 1 */
  const dml_kval_t *a = f1(p, DML_KF_ABS, x);
  const dml_kval_t *z = f2(p, DML_KF_MIN, a, f1(p, DML_KF_RECIP, a));
  const dml_kval_t *z2 = f2(p, DML_KF_MUL, z, z);
  static const double c[6] = {0.99997726,  -0.33262347, 0.19354346,
                              -0.11643287, 0.05265332,  -0.01172120};
  const dml_kval_t *poly = k(p, c[5]);
  for (int i = 4; i >= 0; i--)
    poly = f2(p, DML_KF_ADD, k(p, c[i]), f2(p, DML_KF_MUL, z2, poly));
  const dml_kval_t *r = f2(p, DML_KF_MUL, z, poly);
  const dml_kval_t *big =
      dml_kv_select_pos(p, f2(p, DML_KF_SUB, a, k(p, 1.0)),
                        f2(p, DML_KF_SUB, k(p, 1.57079632679489662), r), r);
  return f2(p, DML_KF_MUL, dml_kv_sign(p, x), big);
}

const dml_kval_t *dml_kv_asin(dml_kpool_t *p, const dml_kval_t *x) {
  /* atan(x / sqrt(1 - x^2)); +-1 give +-inf, atan's pi/2 */
  return dml_kv_atan(
      p, f2(p, DML_KF_DIV, x,
            f1(p, DML_KF_SQRT, f2(p, DML_KF_SUB, k(p, 1.0), f2(p, DML_KF_MUL, x, x)))));
}

const dml_kval_t *dml_kv_round_even(dml_kpool_t *p, const dml_kval_t *x) {
  /* r = floor(x + 1/2) (x + 1/2 is exact for |x| < 2^23), minus 1 on a tie
   * (x + 1/2 == r) when r is odd; |x| >= 2^23 is already an integer (the
   * bound was 2^22, which left x.5 in [2^22, 2^23) unrounded). (The
   * shorter (x + 1.5*2^23) - 1.5*2^23 is folded to x by shader compilers.) */
  const dml_kval_t *h = f2(p, DML_KF_ADD, x, k(p, 0.5));
  const dml_kval_t *r = f1(p, DML_KF_FLOOR, h);
  const dml_kval_t *tie =
      f2(p, DML_KF_SUB, k(p, 1.0), dml_kv_step(p, f2(p, DML_KF_SUB, h, r)));
  const dml_kval_t *odd = f2(
      p, DML_KF_SUB, r,
      f2(p, DML_KF_MUL, k(p, 2.0), f1(p, DML_KF_FLOOR, f2(p, DML_KF_MUL, r, k(p, 0.5)))));
  const dml_kval_t *y = f2(p, DML_KF_SUB, r, f2(p, DML_KF_MUL, tie, odd));
  return dml_kv_select_pos(p, f2(p, DML_KF_SUB, k(p, 8388608.0), f1(p, DML_KF_ABS, x)), y,
                           x);
}

/* Small builders of bool-valued tests (DML_KF_EQ & co give bool). */
static const dml_kval_t *b2(dml_kpool_t *p, dml_kfn_t f, const dml_kval_t *a,
                            const dml_kval_t *b) {
  return dml_kv_fn(p, f, a, b);
}
static const dml_kval_t *not_(dml_kpool_t *p, const dml_kval_t *a) {
  return dml_kv_fn(p, DML_KF_NOT, a, NULL);
}

const dml_kval_t *dml_kv_pow(dml_kpool_t *p, const dml_kval_t *a, const dml_kval_t *b) {
  /* C99 Annex F.10.4.4 (IEEE 754 pow), built on the renderers' pow only
   * for a positive finite base and a finite exponent (GLSL's and Metal's
   * pow are undefined for a < 0 and for a = 0, b <= 0):
   *   b = +-0 or a = 1: 1 (NaN operands included); -1 ** +-inf: 1;
   *   else a NaN operand: NaN;
   *   |a| = 0 or inf, or |b| = inf: (|a| < 1) == (b > 0) ? +0 : +inf,
   *     except that an odd integral b keeps a's sign: b > 0 ? a : 1 / a;
   *   a < 0 finite: NaN for a non-integral b, else -+ |a| ** b by b's parity.
   * b is odd when floor(b) == b and floor(b / 2) * 2 != b (every |b| >=
   * 2^24 is even). */
  if (!a || !b) return NULL;
  const dml_kval_t *zero = k(p, 0.0), *one = k(p, 1.0), *inf = k(p, (double)INFINITY);
  const dml_kval_t *m = f1(p, DML_KF_ABS, a);
  const dml_kval_t *bint = b2(p, DML_KF_EQ, f1(p, DML_KF_FLOOR, b), b);
  const dml_kval_t *odd =
      b2(p, DML_KF_AND, bint,
         not_(p, b2(p, DML_KF_EQ,
                    f2(p, DML_KF_MUL,
                       f1(p, DML_KF_FLOOR, f2(p, DML_KF_MUL, b, k(p, 0.5))), k(p, 2.0)),
                    b)));
  const dml_kval_t *m0 = b2(p, DML_KF_EQ, m, zero), *minf = b2(p, DML_KF_EQ, m, inf);
  const dml_kval_t *binf = b2(p, DML_KF_EQ, f1(p, DML_KF_ABS, b), inf);
  const dml_kval_t *bpos = b2(p, DML_KF_GT, b, zero);
  const dml_kval_t *ext = b2(p, DML_KF_OR, b2(p, DML_KF_OR, m0, minf), binf);
  const dml_kval_t *ext_mag = dml_kv_select(
      p, not_(p, b2(p, DML_KF_XOR, b2(p, DML_KF_LT, m, one), bpos)), zero, inf);
  /* a subnormal |a| is scaled by 2^64 first (lavapipe's pow reads it as
   * about 2^-127): m^b = (m 2^64)^b (2^-64)^b */
  const dml_kval_t *sub = b2(p, DML_KF_LT, m, k(p, 1.1754943508222875e-38));
  const dml_kval_t *ms =
      dml_kv_select(p, sub, f2(p, DML_KF_MUL, m, k(p, 18446744073709551616.0)), m);
  const dml_kval_t *pw = f2(p, DML_KF_POW, ms, b);
  pw = dml_kv_select(
      p, sub, f2(p, DML_KF_MUL, pw, f2(p, DML_KF_POW, k(p, 5.42101086242752217e-20), b)),
      pw);
  const dml_kval_t *mag = dml_kv_select(p, ext, ext_mag, pw);
  const dml_kval_t *neg = b2(p, DML_KF_LT, a, zero);
  const dml_kval_t *r =
      dml_kv_select(p, neg,
                    dml_kv_select(p, b2(p, DML_KF_OR, bint, minf),
                                  dml_kv_select(p, odd, f1(p, DML_KF_NEG, mag), mag),
                                  k(p, (double)NAN)),
                    mag);
  r = dml_kv_select(p, b2(p, DML_KF_AND, odd, b2(p, DML_KF_OR, m0, minf)),
                    dml_kv_select(p, bpos, a, f1(p, DML_KF_RECIP, a)), r);
  const dml_kval_t *nan_in =
      b2(p, DML_KF_OR, not_(p, b2(p, DML_KF_EQ, a, a)), not_(p, b2(p, DML_KF_EQ, b, b)));
  r = dml_kv_select(p, nan_in, f2(p, DML_KF_ADD, a, b), r);
  const dml_kval_t *unit = b2(
      p, DML_KF_OR, b2(p, DML_KF_OR, b2(p, DML_KF_EQ, b, zero), b2(p, DML_KF_EQ, a, one)),
      b2(p, DML_KF_AND, b2(p, DML_KF_EQ, m, one), binf));
  return dml_kv_select(p, unit, one, r);
}

const dml_kval_t *dml_kv_sign_nan(dml_kpool_t *p, const dml_kval_t *x) {
  /* x > 0 ? 1 : x < 0 ? -1 : x (the CPU's Sign: +-0 and NaN are kept,
   * where GLSL's sign(NaN) is 0) */
  if (!x) return NULL;
  const dml_kval_t *zero = dml_kv_fconst(p, x->dtype, 0.0f);
  return dml_kv_select(
      p, b2(p, DML_KF_GT, x, zero), dml_kv_fconst(p, x->dtype, 1.0f),
      dml_kv_select(p, b2(p, DML_KF_LT, x, zero), dml_kv_fconst(p, x->dtype, -1.0f), x));
}

const dml_kval_t *dml_kv_log1p(dml_kpool_t *p, const dml_kval_t *x) {
  /* log1p(x) = 2 atanh(s), s = x / (2 + x), for -1/2 <= x <= 1 (|s| <=
   * 1/3): 2 s (1 + s^2/3 + s^4/5 + ... + s^16/17), truncation below 1e-9
   * relative, no cancellation (a form that takes u - 1 with u = 1 + x is
   * undone by shader compilers that reassociate); log(1 + x) elsewhere,
   * where it is >= log 2 in magnitude or x < -1/2 */
  if (!x) return NULL;
  const dml_kval_t *s = f2(p, DML_KF_DIV, x, f2(p, DML_KF_ADD, k(p, 2.0), x));
  const dml_kval_t *s2 = f2(p, DML_KF_MUL, s, s);
  const dml_kval_t *poly = k(p, 1.0 / 17.0);
  for (int i = 7; i >= 0; i--)
    poly = f2(p, DML_KF_ADD, k(p, 1.0 / (2 * i + 1)), f2(p, DML_KF_MUL, s2, poly));
  const dml_kval_t *small = f2(p, DML_KF_MUL, f2(p, DML_KF_ADD, s, s), poly);
  const dml_kval_t *in =
      b2(p, DML_KF_AND, b2(p, DML_KF_GE, x, k(p, -0.5)), b2(p, DML_KF_LE, x, k(p, 1.0)));
  return dml_kv_select(p, in, small, f1(p, DML_KF_LOG, f2(p, DML_KF_ADD, k(p, 1.0), x)));
}

/* Sum of c[i] t^i, i < n (Horner). */
static const dml_kval_t *horner(dml_kpool_t *p, const dml_kval_t *t, const double *c,
                                int n) {
  const dml_kval_t *r = k(p, c[n - 1]);
  for (int i = n - 2; i >= 0; i--)
    r = f2(p, DML_KF_ADD, k(p, c[i]), f2(p, DML_KF_MUL, t, r));
  return r;
}

const dml_kval_t *dml_kv_expm1(dml_kpool_t *p, const dml_kval_t *x) {
  /* |x| < 1/2: Taylor to x^10/10! (truncation < 1e-10 relative); else
   * exp(x) - 1 (no cancellation below -1/2 or above 1/2 worth 1 ulp) */
  static const double c[10] = {1.0,          1.0 / 2,      1.0 / 6,    1.0 / 24,
                               1.0 / 120,    1.0 / 720,    1.0 / 5040, 1.0 / 40320,
                               1.0 / 362880, 1.0 / 3628800};
  if (!x) return NULL;
  const dml_kval_t *small = f2(p, DML_KF_MUL, x, horner(p, x, c, 10));
  return dml_kv_select(p, b2(p, DML_KF_LT, f1(p, DML_KF_ABS, x), k(p, 0.5)), small,
                       f2(p, DML_KF_SUB, f1(p, DML_KF_EXP, x), k(p, 1.0)));
}

const dml_kval_t *dml_kv_erfc(dml_kpool_t *p, const dml_kval_t *x) {
  /* Numerical Recipes' erfcc (Chebyshev fit, fractional error < 1.2e-7 for
   * every x >= 0): t = 1 / (1 + |x|/2), erfc(|x|) = t exp(-x^2 + P(t)),
   * erfc(x) = 2 - erfc(-x) below 0 */
  static const double c[10] = {-1.26551223, 1.00002368, 0.37409196,  0.09678418,
                               -0.18628806, 0.27886807, -1.13520398, 1.48851587,
                               -0.82215223, 0.17087277};
  if (!x) return NULL;
  const dml_kval_t *z = f1(p, DML_KF_ABS, x);
  const dml_kval_t *t =
      f1(p, DML_KF_RECIP, f2(p, DML_KF_ADD, k(p, 1.0), f2(p, DML_KF_MUL, k(p, 0.5), z)));
  const dml_kval_t *e =
      f2(p, DML_KF_ADD, f1(p, DML_KF_NEG, f2(p, DML_KF_MUL, z, z)), horner(p, t, c, 10));
  const dml_kval_t *r = f2(p, DML_KF_MUL, t, f1(p, DML_KF_EXP, e));
  return dml_kv_select(p, b2(p, DML_KF_LT, x, k(p, 0.0)), f2(p, DML_KF_SUB, k(p, 2.0), r),
                       r);
}

/* erf(x) below |x| < 1: 2/sqrt(pi) sum (-1)^n x^(2n+1) / (n! (2n+1)) to
 * n = 11 (relative truncation < 1e-10), where A&S's 1 - P e^(-x^2)
 * cancels (relative error 5e-7 at 0.5). */
static const dml_kval_t *erf_small(dml_kpool_t *p, const dml_kval_t *x) {
  double c[12], f = 1;
  for (int n = 0; n < 12; n++) {
    if (n) f *= n;
    c[n] = (n % 2 ? -1.0 : 1.0) / (f * (2 * n + 1));
  }
  return f2(p, DML_KF_MUL, k(p, 1.1283791670955126),
            f2(p, DML_KF_MUL, x, horner(p, f2(p, DML_KF_MUL, x, x), c, 12)));
}

/* The table's functions on the GPU (ew_ops.def's ERF .. ATANH). */
static const dml_kval_t *ew_erf(dml_kpool_t *p, const dml_kval_t *x) {
  return dml_kv_select(p, b2(p, DML_KF_LT, f1(p, DML_KF_ABS, x), k(p, 1.0)),
                       erf_small(p, x), dml_kv_erf(p, x));
}
/* e^|x| / 2 as e^(|x|/2) (e^(|x|/2) / 2): finite up to |x| = 89.4 (e^|x|
 * alone overflows above 88.7) */
static const dml_kval_t *half_exp_abs(dml_kpool_t *p, const dml_kval_t *x) {
  const dml_kval_t *h =
      f1(p, DML_KF_EXP, f2(p, DML_KF_MUL, f1(p, DML_KF_ABS, x), k(p, 0.5)));
  return f2(p, DML_KF_MUL, h, f2(p, DML_KF_MUL, h, k(p, 0.5)));
}
static const dml_kval_t *ew_sinh(dml_kpool_t *p, const dml_kval_t *x) {
  /* (expm1(x) - expm1(-x)) / 2 (no cancellation near 0) below |x| < 80,
   * sign(x) e^|x| / 2 above */
  const dml_kval_t *mid =
      f2(p, DML_KF_MUL, k(p, 0.5),
         f2(p, DML_KF_SUB, dml_kv_expm1(p, x), dml_kv_expm1(p, f1(p, DML_KF_NEG, x))));
  const dml_kval_t *big =
      dml_kv_select(p, b2(p, DML_KF_LT, x, k(p, 0.0)),
                    f1(p, DML_KF_NEG, half_exp_abs(p, x)), half_exp_abs(p, x));
  return dml_kv_select(p, b2(p, DML_KF_GT, f1(p, DML_KF_ABS, x), k(p, 80.0)), big, mid);
}
static const dml_kval_t *ew_cosh(dml_kpool_t *p, const dml_kval_t *x) {
  const dml_kval_t *mid = f2(
      p, DML_KF_MUL, k(p, 0.5),
      f2(p, DML_KF_ADD, f1(p, DML_KF_EXP, x), f1(p, DML_KF_EXP, f1(p, DML_KF_NEG, x))));
  return dml_kv_select(p, b2(p, DML_KF_GT, f1(p, DML_KF_ABS, x), k(p, 80.0)),
                       half_exp_abs(p, x), mid);
}
const dml_kval_t *dml_kv_tanh(dml_kpool_t *p, const dml_kval_t *x) {
  /* e / (e + 2), e = expm1(2x): no cancellation near 0 (the renderers'
   * tanh loses it: lavapipe's tanh(2e-9) is 3e-8); +-1 beyond |x| > 10 */
  const dml_kval_t *e = dml_kv_expm1(p, f2(p, DML_KF_ADD, x, x));
  const dml_kval_t *t = f2(p, DML_KF_DIV, e, f2(p, DML_KF_ADD, e, k(p, 2.0)));
  return dml_kv_select(
      p, b2(p, DML_KF_GT, f1(p, DML_KF_ABS, x), k(p, 10.0)),
      dml_kv_select(p, b2(p, DML_KF_GT, x, k(p, 0.0)), k(p, 1.0), k(p, -1.0)), t);
}
/* f(x) with f(+-0) = +-0 kept (kernel_math's atan/asin multiply by a sign
 * that is 0 there) */
static const dml_kval_t *keep_zero(dml_kpool_t *p, const dml_kval_t *x,
                                   const dml_kval_t *fx) {
  return dml_kv_select(p, b2(p, DML_KF_EQ, x, k(p, 0.0)), x, fx);
}
static const dml_kval_t *ew_asinh(dml_kpool_t *p, const dml_kval_t *x) {
  /* sign(x) log1p(|x| + x^2 / (1 + sqrt(1 + x^2))) for |x| < 2^12, else
   * sign(x) (log|x| + log 2) (x^2 would overflow) */
  const dml_kval_t *a = f1(p, DML_KF_ABS, x), *x2 = f2(p, DML_KF_MUL, x, x);
  const dml_kval_t *mid =
      dml_kv_log1p(p, f2(p, DML_KF_ADD, a,
                         f2(p, DML_KF_DIV, x2,
                            f2(p, DML_KF_ADD, k(p, 1.0),
                               f1(p, DML_KF_SQRT, f2(p, DML_KF_ADD, k(p, 1.0), x2))))));
  const dml_kval_t *big =
      f2(p, DML_KF_ADD, f1(p, DML_KF_LOG, a), k(p, 0.69314718055994531));
  const dml_kval_t *m = dml_kv_select(p, b2(p, DML_KF_LT, a, k(p, 4096.0)), mid, big);
  return f2(p, DML_KF_MUL, dml_kv_sign_nan(p, x), m);
}
static const dml_kval_t *ew_acosh(dml_kpool_t *p, const dml_kval_t *x) {
  /* t = x - 1 (exact near 1): log1p(t + sqrt(t (x + 1))) below 2^12,
   * log x + log 2 above (x^2 would overflow); NaN below 1 */
  const dml_kval_t *t = f2(p, DML_KF_SUB, x, k(p, 1.0));
  const dml_kval_t *mid = dml_kv_log1p(
      p, f2(p, DML_KF_ADD, t,
            f1(p, DML_KF_SQRT, f2(p, DML_KF_MUL, t, f2(p, DML_KF_ADD, x, k(p, 1.0))))));
  const dml_kval_t *big =
      f2(p, DML_KF_ADD, f1(p, DML_KF_LOG, x), k(p, 0.69314718055994531));
  return dml_kv_select(p, b2(p, DML_KF_LT, x, k(p, 1.0)), k(p, (double)NAN),
                       dml_kv_select(p, b2(p, DML_KF_GE, x, k(p, 4096.0)), big, mid));
}
static const dml_kval_t *ew_atanh(dml_kpool_t *p, const dml_kval_t *x) {
  /* sign(x) log1p(2|x| / (1 - |x|)) / 2: 1 - |x| exact near 1, no
   * cancellation near 0; +-inf at +-1, NaN beyond */
  const dml_kval_t *a = f1(p, DML_KF_ABS, x);
  const dml_kval_t *m = f2(p, DML_KF_MUL, k(p, 0.5),
                           dml_kv_log1p(p, f2(p, DML_KF_DIV, f2(p, DML_KF_ADD, a, a),
                                              f2(p, DML_KF_SUB, k(p, 1.0), a))));
  m = dml_kv_select(p, b2(p, DML_KF_GT, a, k(p, 1.0)), k(p, (double)NAN), m);
  return keep_zero(p, x, f2(p, DML_KF_MUL, dml_kv_sign_nan(p, x), m));
}

/* ew_ops.def's formulas as kernel IR (f32 values): ew_kv_<OP>(p, x, a),
 * the attribute values a[i] f32 kernel values (dml_kv_ew_v). */
#define X x
#define A0 a[0]
#define A1 a[1]
#define A2 a[2]
#define K(c) k(p, (double)(c))
#define ADD(u, v) f2(p, DML_KF_ADD, u, v)
#define SUB(u, v) f2(p, DML_KF_SUB, u, v)
#define MUL(u, v) f2(p, DML_KF_MUL, u, v)
#define DIV(u, v) f2(p, DML_KF_DIV, u, v)
#define NEG(u) f1(p, DML_KF_NEG, u)
#define ABS(u) f1(p, DML_KF_ABS, u)
#define LT(u, v) b2(p, DML_KF_LT, u, v)
#define LE(u, v) b2(p, DML_KF_LE, u, v)
#define GT(u, v) b2(p, DML_KF_GT, u, v)
#define EQ(u, v) b2(p, DML_KF_EQ, u, v)
#define SEL(c, u, v) dml_kv_select(p, c, u, v)
/* a string attribute's form: chosen now for a constant, else by a select
 * at run time (both forms computed) */
#define IFA(i, u, v)                \
  (a[i]->kind == DML_KV_CONST       \
       ? (a[i]->c != 0 ? (u) : (v)) \
       : dml_kv_select(p, b2(p, DML_KF_EQ, a[i], k(p, 0.0)), (v), (u)))
#define EXP(u) f1(p, DML_KF_EXP, u)
#define EXPM1(u) dml_kv_expm1(p, u)
#define LOG(u) f1(p, DML_KF_LOG, u)
#define LOG1P(u) dml_kv_log1p(p, u)
#define SQRT(u) f1(p, DML_KF_SQRT, u)
#define TANH(u) dml_kv_tanh(p, u)
#define SIGMOID(u) f1(p, DML_KF_SIGMOID, u)
#define ERF(u) ew_erf(p, u)
#define ERFC(u) dml_kv_erfc(p, u)
#define SIN(u) f1(p, DML_KF_SIN, u)
#define COS(u) f1(p, DML_KF_COS, u)
#define TAN(u) f2(p, DML_KF_DIV, f1(p, DML_KF_SIN, u), f1(p, DML_KF_COS, u))
#define SINH(u) ew_sinh(p, u)
#define COSH(u) ew_cosh(p, u)
#define ASIN(u) keep_zero(p, u, dml_kv_asin(p, u))
#define ACOS(u) f2(p, DML_KF_SUB, k(p, 1.57079632679489662), dml_kv_asin(p, u))
#define ATAN(u) keep_zero(p, u, dml_kv_atan(p, u))
#define ASINH(u) ew_asinh(p, u)
#define ACOSH(u) ew_acosh(p, u)
#define ATANH(u) ew_atanh(p, u)
#define OP(e, u) ew_kv_##e(p, u, NULL)
#define DML_EW_ATTR_F(name, dflt, nonzero)
#define DML_EW_ATTR_S(name, first, second)
#define DML_EW(e, attrs, value, grad)                                     \
  static const dml_kval_t *ew_kv_##e(dml_kpool_t *p, const dml_kval_t *x, \
                                     const dml_kval_t *const *a) {        \
    (void)a;                                                              \
    if (!x) return NULL;                                                  \
    return value;                                                         \
  }
#include "ew_ops.def"
#undef DML_EW

/* The attribute values a[0 ..] as f32 constants in av; 0 when any is
 * missing (out of memory). */
static int attr_consts(dml_kpool_t *p, const double *a,
                       const dml_kval_t *av[DML_EW_MAX_ATTRS]) {
  for (int i = 0; i < DML_EW_MAX_ATTRS; i++)
    if (!(av[i] = k(p, a ? a[i] : 0.0))) return 0;
  return 1;
}

const dml_kval_t *dml_kv_ew(dml_kpool_t *p, dml_op_t op, const dml_kval_t *x,
                            const double *a) {
  const dml_kval_t *av[DML_EW_MAX_ATTRS];
  return attr_consts(p, a, av) ? dml_kv_ew_v(p, op, x, av) : NULL;
}

const dml_kval_t *dml_kv_ew_v(dml_kpool_t *p, dml_op_t op, const dml_kval_t *x,
                              const dml_kval_t *const *a) {
  for (int i = 0; i < DML_EW_MAX_ATTRS; i++)
    if (!a[i]) return NULL;
  switch (op) {
#define DML_EW(e, attrs, value, grad) \
  case DML_OP_##e:                    \
    return ew_kv_##e(p, x, a);
#include "ew_ops.def"
#undef DML_EW
    default: return NULL;
  }
}

const dml_kval_t *dml_kv_log(dml_kpool_t *p, const dml_kval_t *x) {
  /* log1p(x - 1) on [1/2, 2] (x - 1 exact: lavapipe's log(0.999) is off
   * by 6e-5 relative), log(x 2^64) - 64 log 2 for a subnormal x (lavapipe
   * reads it as about 2^-127), the renderer's log elsewhere */
  if (!x) return NULL;
  const dml_kval_t *near1 =
      b2(p, DML_KF_AND, b2(p, DML_KF_GE, x, k(p, 0.5)), b2(p, DML_KF_LE, x, k(p, 2.0)));
  const dml_kval_t *sub = b2(p, DML_KF_AND, b2(p, DML_KF_GT, x, k(p, 0.0)),
                             b2(p, DML_KF_LT, x, k(p, 1.1754943508222875e-38)));
  const dml_kval_t *scaled =
      f2(p, DML_KF_SUB,
         f1(p, DML_KF_LOG, f2(p, DML_KF_MUL, x, k(p, 18446744073709551616.0))),
         k(p, 44.361419555836500));
  return dml_kv_select(p, near1, dml_kv_log1p(p, f2(p, DML_KF_SUB, x, k(p, 1.0))),
                       dml_kv_select(p, sub, scaled, f1(p, DML_KF_LOG, x)));
}

const dml_kval_t *dml_kv_round_half_even(dml_kpool_t *p, const dml_kval_t *x) {
  /* dml_kv_round_even for |x| < 2^23 (with x's sign on a zero result:
   * Round(-0.3) = -0), x itself beyond (integers, +-inf) and for NaN */
  if (!x) return NULL;
  const dml_kval_t *y = dml_kv_round_even(p, x);
  /* a zero result takes x's sign: -0 below 0, x itself at +-0 (x * 0 is
   * folded to +0 by shader compilers) */
  const dml_kval_t *z =
      dml_kv_select(p, b2(p, DML_KF_LT, x, k(p, 0.0)), k(p, -0.0),
                    dml_kv_select(p, b2(p, DML_KF_EQ, x, k(p, 0.0)), x, k(p, 0.0)));
  y = dml_kv_select(p, b2(p, DML_KF_EQ, y, k(p, 0.0)), z, y);
  return dml_kv_select(p, b2(p, DML_KF_LT, f1(p, DML_KF_ABS, x), k(p, 8388608.0)), y, x);
}

/* ---- ew_ops.def's DML_EWN ops in the kernel IR, in x's dtype: constants
 * of it, f16/bf16 Tanh, Log and Round through f32 (kernel_math's forms,
 * rounded once), f64 Tanh and Log the renderers' double functions ---- */
static const dml_kval_t *ewn_k(dml_kpool_t *p, const dml_kval_t *x, double c) {
  return dml_kdtype_is_float(x->dtype) ? dml_kv_fconst(p, x->dtype, (float)c)
                                       : dml_kv_iconst(p, x->dtype, (int64_t)c);
}
/* f(u) in f32: u itself when f32, else cast there and back */
static const dml_kval_t *ewn_via_f32(dml_kpool_t *p, const dml_kval_t *u,
                                     const dml_kval_t *(*f)(dml_kpool_t *,
                                                            const dml_kval_t *)) {
  if (!u) return NULL;
  if (u->dtype == DML_KT_F32) return f(p, u);
  return dml_kv_cast(p, u->dtype, f(p, dml_kv_cast(p, DML_KT_F32, u)));
}
/* expm1 of f64 u: u (1 + u/2 (1 + u/3 (1 + ... (1 + u/20)))) for |u| < 1
 * (the Taylor series to u^20/20!, below 2^-60 relative; the constants are
 * small integers, exact in the IR's f32 constants), exp(u) - 1 beyond (no
 * cancellation worth more than 1.6 units there) */
static const dml_kval_t *expm1_f64(dml_kpool_t *p, const dml_kval_t *u) {
  const dml_kval_t *r = dml_kv_fconst(p, DML_KT_F64, 1.0f);
  for (int i = 20; i >= 2; i--)
    r = f2(p, DML_KF_ADD, dml_kv_fconst(p, DML_KT_F64, 1.0f),
           f2(p, DML_KF_MUL, f2(p, DML_KF_DIV, u, dml_kv_fconst(p, DML_KT_F64, (float)i)),
              r));
  const dml_kval_t *small = f2(p, DML_KF_MUL, u, r);
  return dml_kv_select(
      p, b2(p, DML_KF_LT, f1(p, DML_KF_ABS, u), dml_kv_fconst(p, DML_KT_F64, 1.0f)),
      small, f2(p, DML_KF_SUB, f1(p, DML_KF_EXP, u), dml_kv_fconst(p, DML_KT_F64, 1.0f)));
}
/* f64 tanh: e / (e + 2), e = expm1(2x) (dml_kv_tanh's form with an f64
 * expm1); +-1 beyond |x| > 20 (tanh(20) rounds to 1), +-0 kept */
static const dml_kval_t *tanh_f64(dml_kpool_t *p, const dml_kval_t *x) {
  const dml_kval_t *e = expm1_f64(p, f2(p, DML_KF_ADD, x, x));
  const dml_kval_t *t =
      f2(p, DML_KF_DIV, e, f2(p, DML_KF_ADD, e, dml_kv_fconst(p, DML_KT_F64, 2.0f)));
  const dml_kval_t *z = dml_kv_fconst(p, DML_KT_F64, 0.0f);
  const dml_kval_t *one =
      dml_kv_select(p, b2(p, DML_KF_GT, x, z), dml_kv_fconst(p, DML_KT_F64, 1.0f),
                    dml_kv_fconst(p, DML_KT_F64, -1.0f));
  return dml_kv_select(
      p, b2(p, DML_KF_EQ, x, z), x,
      dml_kv_select(
          p, b2(p, DML_KF_GT, f1(p, DML_KF_ABS, x), dml_kv_fconst(p, DML_KT_F64, 20.0f)),
          one, t));
}
static const dml_kval_t *ewn_tanh(dml_kpool_t *p, const dml_kval_t *u) {
  return u && u->dtype == DML_KT_F64 ? tanh_f64(p, u) : ewn_via_f32(p, u, dml_kv_tanh);
}
/* Sigmoid: the renderers' sigmoid of f32 (f16, bf16 through it); of f64
 * the CPU's form (dml_ew.c): 1 / (1 + e^-x) from 0 up, e^x / (1 + e^x)
 * below (NaN takes the first) */
static const dml_kval_t *ewn_sigmoid(dml_kpool_t *p, const dml_kval_t *u) {
  if (!u || u->dtype != DML_KT_F64) return f1(p, DML_KF_SIGMOID, u);
  const dml_kval_t *one = dml_kv_fconst(p, DML_KT_F64, 1.0f);
  const dml_kval_t *en = f1(p, DML_KF_EXP, f1(p, DML_KF_NEG, u)),
                   *ep = f1(p, DML_KF_EXP, u);
  return dml_kv_select(p, b2(p, DML_KF_LT, u, dml_kv_fconst(p, DML_KT_F64, 0.0f)),
                       f2(p, DML_KF_DIV, ep, f2(p, DML_KF_ADD, one, ep)),
                       f2(p, DML_KF_DIV, one, f2(p, DML_KF_ADD, one, en)));
}
static const dml_kval_t *ewn_log(dml_kpool_t *p, const dml_kval_t *u) {
  return u && u->dtype == DML_KT_F64 ? f1(p, DML_KF_LOG, u)
                                     : ewn_via_f32(p, u, dml_kv_log);
}
#undef K
#undef TANH
#undef LOG
#undef SIGMOID
#define K(c) ewn_k(p, x, (double)(c))
#define TANH(u) ewn_tanh(p, u)
#define SIGMOID(u) ewn_sigmoid(p, u)
#define LOG(u) ewn_log(p, u)
#define FLOOR(u) f1(p, DML_KF_FLOOR, u)
#define CEIL(u) f1(p, DML_KF_CEIL, u)
#define ROUND(u) ewn_via_f32(p, u, dml_kv_round_half_even)
#define DML_EWN(e, ints, value, grad)                                        \
  static const dml_kval_t *ewn_kv_##e(dml_kpool_t *p, const dml_kval_t *x) { \
    if (!x) return NULL;                                                     \
    return value;                                                            \
  }
#include "ew_ops.def"
#undef DML_EWN

const dml_kval_t *dml_kv_ewn(dml_kpool_t *p, dml_op_t op, const dml_kval_t *x) {
  switch (op) {
#define DML_EWN(e, ints, value, grad) \
  case DML_OP_##e:                    \
    return ewn_kv_##e(p, x);
#include "ew_ops.def"
#undef DML_EWN
    default: return NULL;
  }
}

/* ---- ew_ops.def's DML_EW2 ops in the kernel IR, in the operands' dtype
 * (x's and y's, one dtype) ---- */
static const dml_kval_t *ew2_pow(dml_kpool_t *p, const dml_kval_t *u,
                                 const dml_kval_t *v) {
  if (!u || !v) return NULL;
  return dml_kdtype_is_float(u->dtype) ? dml_kv_pow(p, u, v) : f2(p, DML_KF_IPOW, u, v);
}
/* ew_ops.def's PMOD (Python's remainder, the sign of v): IMOD for
 * integers; for floats from the exact fmod r, as the CPU's ew2_pmod: a zero
 * r is the zero of v's sign, r + v where r and v differ in sign (NaN stays
 * NaN: r is NaN for a NaN operand, an infinite u or v = 0) */
static const dml_kval_t *ew2_pmod(dml_kpool_t *p, const dml_kval_t *u,
                                  const dml_kval_t *v) {
  if (!u || !v) return NULL;
  if (!dml_kdtype_is_float(u->dtype)) return f2(p, DML_KF_IMOD, u, v);
  const dml_kval_t *r = f2(p, DML_KF_FMOD, u, v), *z = dml_kv_fconst(p, u->dtype, 0.0f);
  const dml_kval_t *zero =
      dml_kv_select(p, b2(p, DML_KF_LT, v, z), dml_kv_fconst(p, u->dtype, -0.0f), z);
  const dml_kval_t *flip =
      b2(p, DML_KF_XOR, b2(p, DML_KF_LT, r, z), b2(p, DML_KF_LT, v, z));
  return dml_kv_select(p, b2(p, DML_KF_EQ, r, z), zero,
                       dml_kv_select(p, flip, f2(p, DML_KF_ADD, r, v), r));
}
#define Y y
#define GE(u, v) b2(p, DML_KF_GE, u, v)
#define POW(u, v) ew2_pow(p, u, v)
#define FMOD(u, v) f2(p, DML_KF_FMOD, u, v)
#define PMOD(u, v) ew2_pmod(p, u, v)
#define DML_EW2(e, attrs, ints, value, dx, dy)                                           \
  static const dml_kval_t *ew2_kv_##e(dml_kpool_t *p, const dml_kval_t *x,               \
                                      const dml_kval_t *y, const dml_kval_t *const *a) { \
    (void)a;                                                                             \
    if (!x || !y) return NULL;                                                           \
    return value;                                                                        \
  }
#include "ew_ops.def"
#undef DML_EW2

const dml_kval_t *dml_kv_ew2(dml_kpool_t *p, dml_op_t op, const dml_kval_t *x,
                             const dml_kval_t *y, const double *a) {
  const dml_kval_t *av[DML_EW_MAX_ATTRS];
  return attr_consts(p, a, av) ? dml_kv_ew2_v(p, op, x, y, av) : NULL;
}

const dml_kval_t *dml_kv_ew2_v(dml_kpool_t *p, dml_op_t op, const dml_kval_t *x,
                               const dml_kval_t *y, const dml_kval_t *const *a) {
  for (int i = 0; i < DML_EW_MAX_ATTRS; i++)
    if (!a[i]) return NULL;
  switch (op) {
#define DML_EW2(e, attrs, ints, value, dx, dy) \
  case DML_OP_##e:                             \
    return ew2_kv_##e(p, x, y, a);
#include "ew_ops.def"
#undef DML_EW2
    default: return NULL;
  }
}
