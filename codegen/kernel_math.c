/* kernel_math.c — scalar functions composed from the kernel IR's primitive
 * functions (kernel_internal.h), so every renderer (GLSL, CUDA C, MSL through
 * SPIR-V) gets them without a library of its own. Accuracy is noted per
 * function; the GPU tests compare with the CPU's libm within 1e-4. */
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
