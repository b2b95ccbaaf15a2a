/* kernel_math.c — scalar functions composed from the kernel IR's primitive
 * functions (kernel_internal.h), so every renderer (GLSL, CUDA C, MSL through
 * SPIR-V) gets them without a library of its own. Accuracy is noted per
 * function; the GPU tests compare with the CPU's libm within 1e-4. */
#include <math.h>

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
  /* r = floor(x + 1/2) (x + 1/2 is exact for |x| < 2^22), minus 1 on a tie
   * (x + 1/2 == r) when r is odd; |x| >= 2^22 is already an integer. (The
   * shorter (x + 1.5*2^23) - 1.5*2^23 is folded to x by shader compilers.) */
  const dml_kval_t *h = f2(p, DML_KF_ADD, x, k(p, 0.5));
  const dml_kval_t *r = f1(p, DML_KF_FLOOR, h);
  const dml_kval_t *tie =
      f2(p, DML_KF_SUB, k(p, 1.0), dml_kv_step(p, f2(p, DML_KF_SUB, h, r)));
  const dml_kval_t *odd = f2(
      p, DML_KF_SUB, r,
      f2(p, DML_KF_MUL, k(p, 2.0), f1(p, DML_KF_FLOOR, f2(p, DML_KF_MUL, r, k(p, 0.5)))));
  const dml_kval_t *y = f2(p, DML_KF_SUB, r, f2(p, DML_KF_MUL, tie, odd));
  return dml_kv_select_pos(p, f2(p, DML_KF_SUB, k(p, 4194304.0), f1(p, DML_KF_ABS, x)), y,
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

const dml_kval_t *dml_kv_softplus(dml_kpool_t *p, const dml_kval_t *x) {
  /* max(x, 0) + log1p(exp(-|x|)): no overflow for large x, no cancellation
   * for x << 0 (softplus(-20) = 2.06e-9, not 0); NaN kept */
  if (!x) return NULL;
  const dml_kval_t *pos = dml_kv_select(p, b2(p, DML_KF_LT, x, k(p, 0.0)), k(p, 0.0), x);
  return f2(p, DML_KF_ADD, pos,
            dml_kv_log1p(p, f1(p, DML_KF_EXP, f1(p, DML_KF_NEG, f1(p, DML_KF_ABS, x)))));
}
