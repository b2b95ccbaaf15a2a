/*
 * cpu_vmath.c — vectorized f32 exp-based activations for the fused kernels
 * (the recurrent cells of cpu_rnn.c): logistic sigmoid and tanh over arrays.
 *
 * Written with GCC/Clang vector extensions (16 lanes) and compiled per
 * instruction set by DML_CPU_CLONES (AVX-512, AVX2, baseline; one portable
 * build elsewhere, arm64 included).
 *
 * exp: Cephes' expf (S. Moshier, cephes/single/expf.c): x = n ln2 + r with
 * |r| <= ln2/2 (n rounded to nearest by the 1.5 * 2^23 shift, ln2 split in
 * two for the reduction), e^r by its degree-7 minimax polynomial, 2^n put
 * into the exponent bits. x is clamped to [-87.3, 88.3] first (2^n stays a
 * normal float): exp is 0 below -87.3 (exact at -inf; the subnormal results
 * flushed, an absolute error under 1.2e-38), about 2.1e38 above 88.3 (never
 * inf). Relative error about 2 ulp inside the range.
 * exp(x - m) over an array (Softmax's rows): NaN where x - m is NaN.
 * sigmoid(x) = 1 / (1 + exp(-x)): within 3e-7 relative of the exact value for
 * x >= -87 (1 at +inf, about 5e-39 at -inf, 0.5 at ±0). The Sigmoid op's
 * f32 kernel (dml_cpu_sigmoid_f32) takes it too, with libm's e^x below -87
 * (the exact value rounded there, subnormals and 0 at -inf included).
 * tanh(x) = sign(x) (1 - e) / (1 + e), e = exp(-2|x|), for |x| >= 0.1 (within
 * 1e-6 relative); x - x^3/3 + 2x^5/15 - 17x^7/315 + 62x^9/2835 (Taylor) below
 * (within 2 ulp), so tanh(-0) = -0 and denormals stay as they are.
 * NaN in gives NaN out (the NaN input itself).
 *
 * erf (f32 in, f32 out, computed in double on 8 lanes): erf(x) = x g(x^2)
 * with g(t) = erf(sqrt t) / sqrt t, an entire function, as its degree-24
 * Chebyshev interpolant on t in [0, 16] written in monomials of u = t/8 - 1
 * (scripts/gen_erf_cheb.py: 7.9e-15 relative), summed by Horner's rule
 * (fused multiply-adds where the instruction set has them);
 * +-1 for |x| > 4 (erf(4) rounds to 1 in f32). One rounding to f32 at the
 * end: the f32 result is libm's double erf rounded, but for values within
 * about 1e-14 of a rounding tie. -0, NaN and subnormals keep their
 * sign/value class.
 */
#include <math.h>
#include <string.h>

#include "cpu_internal.h"

typedef float v16f __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));
typedef uint32_t v16u __attribute__((vector_size(64))); /* wrapping bit arithmetic */

#define VL 16

/* Multiply-adds contracted to fused ones where the instruction set has
 * them (GCC; ISO C mode leaves them apart): dml_cpu_verf_f32 only. */
#if defined(__GNUC__) && !defined(__clang__)
#define DML_VMATH_CONTRACT __attribute__((optimize("fp-contract=fast")))
#else
#define DML_VMATH_CONTRACT
#endif

/* Statement s for u_ = 0, 1, ... NU - 1 (NU a constant from 1 to 4), in
 * that order; s indexes its arrays with [u_] and has no top-level comma. */
#define EACH(NU, s)           \
  do {                        \
    {                         \
      enum { u_ = 0 };        \
      s;                      \
    }                         \
    if ((NU) > 1) {           \
      enum { u_ = 1 % (NU) }; \
      s;                      \
    }                         \
    if ((NU) > 2) {           \
      enum { u_ = 2 % (NU) }; \
      s;                      \
    }                         \
    if ((NU) > 3) {           \
      enum { u_ = 3 % (NU) }; \
      s;                      \
    }                         \
  } while (0)

/* out[u] = e^xin[u] lane-wise (see the header) for NU independent vectors
 * (arrays of v16f; out may be xin), each step of the formula for all NU
 * before the next: the NU dependency chains (about 20 operations long)
 * interleave in the instruction stream, which the out-of-order core did
 * not do for chains written one after the other. x not NaN-checked: the
 * caller blends; 0 below -87.3. */
#define VEXP_N(NU, out, xin)                                                \
  do {                                                                      \
    v16f x_[NU], t_[NU], n_[NU], r_[NU], p_[NU];                            \
    v16i lo_[NU], hi_[NU];                                                  \
    EACH(NU, x_[u_] = (xin)[u_]);                                           \
    EACH(NU, lo_[u_] = x_[u_] < -87.3f);                                    \
    EACH(NU, hi_[u_] = x_[u_] > 88.3f);                                     \
    EACH(NU, x_[u_] = (v16f)(((v16i)x_[u_] & ~lo_[u_]) |                    \
                             ((v16i)((v16f){0} - 87.3f) & lo_[u_])));       \
    EACH(NU, x_[u_] = (v16f)(((v16i)x_[u_] & ~hi_[u_]) |                    \
                             ((v16i)((v16f){0} + 88.3f) & hi_[u_])));       \
    EACH(NU, t_[u_] = x_[u_] * 1.44269504088896341f + 12582912.0f);         \
    EACH(NU, n_[u_] = t_[u_] - 12582912.0f);                                \
    EACH(NU, r_[u_] = x_[u_] - n_[u_] * 0.693359375f);                      \
    EACH(NU, r_[u_] = r_[u_] - n_[u_] * -2.12194440e-4f);                   \
    EACH(NU, p_[u_] = r_[u_] * 1.9875691500E-4f + 1.3981999507E-3f);        \
    EACH(NU, p_[u_] = p_[u_] * r_[u_] + 8.3334519073E-3f);                  \
    EACH(NU, p_[u_] = p_[u_] * r_[u_] + 4.1665795894E-2f);                  \
    EACH(NU, p_[u_] = p_[u_] * r_[u_] + 1.6666665459E-1f);                  \
    EACH(NU, p_[u_] = p_[u_] * r_[u_] + 5.0000001201E-1f);                  \
    EACH(NU, p_[u_] = p_[u_] * (r_[u_] * r_[u_]) + r_[u_] + 1.0f);          \
    EACH(NU, t_[u_] = (v16f)((((v16u)t_[u_] - 0x4B400000u) + 127u) << 23)); \
    EACH(NU, (out)[u_] = (v16f)((v16i)(p_[u_] * t_[u_]) & ~lo_[u_]));       \
  } while (0)

/* out = e^xin lane-wise for one vector. */
#define VEXP(out, xin)     \
  do {                     \
    v16f ve_[1] = {(xin)}; \
    VEXP_N(1, ve_, ve_);   \
    (out) = ve_[0];        \
  } while (0)

static inline void vload(v16f *v, const float *p, int64_t n) {
  if (n >= VL) {
    memcpy(v, p, sizeof *v);
  } else {
    float buf[VL] = {0};
    memcpy(buf, p, (size_t)n * sizeof(float));
    memcpy(v, buf, sizeof *v);
  }
}

static inline void vstore(float *p, const v16f *v, int64_t n) {
  if (n >= VL) {
    memcpy(p, v, sizeof *v);
  } else {
    float buf[VL];
    memcpy(buf, v, sizeof buf);
    memcpy(p, buf, (size_t)n * sizeof(float));
  }
}

DML_CPU_CLONES void dml_cpu_vexp_sub_f32(const float *x, float m, float *y, int64_t n) {
  for (int64_t i = 0; i < n; i += VL) {
    v16f v, e;
    vload(&v, x + i, n - i);
    v = v - m;
    VEXP(e, v);
    v16i nan = v != v;
    e = (v16f)(((v16i)e & ~nan) | ((v16i)v & nan));
    vstore(y + i, &e, n - i);
  }
}

/* scripts/gen_erf_cheb.py: degree 24, max relative error 7.9e-15 */
static const double k_erf_poly[25] = {
    1.3787080005716731e-07,  -4.852012501968709e-07,  6.9679431663167193e-07,
    -1.7989910439812744e-06, 7.0447922503799836e-06,  -1.9597165346559065e-05,
    4.7707960038954458e-05,  -0.00011658412072272189, 0.00027559303250433226,
    -0.00061371955775708833, 0.0012926130848069449,   -0.0025778696664792021,
    0.0048535412082086095,   -0.0086063296241357442,  0.014349603442099968,
    -0.022473546632852687,   0.033060631695636833,    -0.045765113121082807,
    0.05988690509618598,     -0.074727865558390616,   0.090208994105492157,
    -0.10771044253453371,    0.13167511689485251,     -0.17657623330131547,
    0.35353099564340429,
};

typedef double v8d __attribute__((vector_size(64)));
typedef float v8f __attribute__((vector_size(32)));
typedef int64_t v8l __attribute__((vector_size(64)));

/* erf of 8 lanes (see the header). */
#define ERF_PRE(j)                                           \
  v8f xf##j;                                                 \
  memcpy(&xf##j, buf + 8 * j, sizeof xf##j);                 \
  v8d xd##j = __builtin_convertvector(xf##j, v8d);           \
  v8d t##j = xd##j * xd##j;                                  \
  v8l sat##j = t##j > 16.0; /* |x| > 4, inf included: +-1 */ \
  t##j = (v8d)(((v8l)t##j & ~sat##j) | ((v8l)k16 & sat##j)); \
  v8d u##j = t##j * 0.125 - 1.0; /* u = t/8 - 1 */           \
  v8d p##j = (v8d){0} + k_erf_poly[0]
#define ERF_STEP(j) p##j = p##j * u##j + c
#define ERF_POST(j)                                         \
  do {                                                      \
    v8d r_ = xd##j * p##j;                                  \
    v8d one_ = (v8d)((v8l)k1 | ((v8l)xd##j & ksign));       \
    r_ = (v8d)(((v8l)r_ & ~sat##j) | ((v8l)one_ & sat##j)); \
    v8f rf_ = __builtin_convertvector(r_, v8f);             \
    memcpy(buf + 8 * j, &rf_, sizeof rf_);                  \
  } while (0)

/* Eight blocks of 8 per iteration: Horner's rule is a chain of dependent
 * multiply-adds, so independent blocks hide its latency (four blocks left
 * the FPU idle: 2.4 ms for transformer_tiny's 1M-value Erf at batch 32).
 * Under GCC the multiply-adds are contracted to fused ones where the
 * instruction set has them (AVX2, AVX-512, arm64; the baseline x86-64
 * clone multiplies then adds): the double result moves by an ulp of double
 * at most, far below the f32 rounding (the f32 result differs only within
 * about 1e-14 of a rounding tie, as before). */
DML_VMATH_CONTRACT DML_CPU_CLONES void dml_cpu_verf_f32(const float *x, float *y,
                                                        int64_t n) {
  const int nc = (int)(sizeof k_erf_poly / sizeof k_erf_poly[0]);
  const v8d k16 = (v8d){0} + 16.0, k1 = (v8d){0} + 1.0;
  const v8l ksign = (v8l){0} + INT64_MIN;
  for (int64_t i = 0; i < n; i += 64) {
    float buf[64] = {0};
    int64_t m = n - i < 64 ? n - i : 64;
    memcpy(buf, x + i, (size_t)m * sizeof(float));
    ERF_PRE(0);
    ERF_PRE(1);
    ERF_PRE(2);
    ERF_PRE(3);
    ERF_PRE(4);
    ERF_PRE(5);
    ERF_PRE(6);
    ERF_PRE(7);
    for (int k = 1; k < nc; k++) {
      const double c = k_erf_poly[k];
      ERF_STEP(0);
      ERF_STEP(1);
      ERF_STEP(2);
      ERF_STEP(3);
      ERF_STEP(4);
      ERF_STEP(5);
      ERF_STEP(6);
      ERF_STEP(7);
    }
    ERF_POST(0);
    ERF_POST(1);
    ERF_POST(2);
    ERF_POST(3);
    ERF_POST(4);
    ERF_POST(5);
    ERF_POST(6);
    ERF_POST(7);
    memcpy(y + i, buf, (size_t)m * sizeof(float));
  }
}

/* The largest of x[0..n) as the loop m = x[0]; m = x[i] > m ? x[i] : m
 * finds it, in 16 lanes (each lane starts at x[0]; the lanes are then
 * folded by the same select): NaN when x[0] is NaN, later NaNs skipped;
 * the same value, but for the sign of a zero maximum when both zeros
 * occur. n >= 1. */
DML_CPU_CLONES float dml_cpu_vmax_f32(const float *x, int64_t n) {
  v16f m = (v16f){0} + x[0];
  int64_t i = 0;
  for (; i + VL <= n; i += VL) {
    v16f v;
    memcpy(&v, x + i, sizeof v);
    v16i gt = v > m;
    m = (v16f)(((v16i)v & gt) | ((v16i)m & ~gt));
  }
  float lanes[VL];
  memcpy(lanes, &m, sizeof lanes);
  float r = lanes[0];
  for (int l = 1; l < VL; l++) r = lanes[l] > r ? lanes[l] : r;
  for (; i < n; i++) r = x[i] > r ? x[i] : r;
  return r;
}

/* x[i] = x[i] < 0 ? 0 : x[i] for n f32 values (Relu's f32 formula: NaN
 * and -0 kept), with lane selects instead of a branch per value. */
DML_CPU_CLONES void dml_cpu_vrelu_f32(float *x, int64_t n) {
  int64_t i = 0;
  for (; i + VL <= n; i += VL) {
    v16f v;
    memcpy(&v, x + i, sizeof v);
    v16i neg = v < 0.0f;
    v = (v16f)((v16i)v & ~neg);
    memcpy(x + i, &v, sizeof v);
  }
  for (; i < n; i++) x[i] = x[i] < 0.0f ? 0.0f : x[i];
}

/* x[i] *= s for n f32 values (each product rounded once). */
DML_CPU_CLONES void dml_cpu_vscale_f32(float *x, float s, int64_t n) {
  for (int64_t i = 0; i < n; i++) x[i] *= s;
}

/* sigmoid(v) = 1 / (1 + e^-v) lane-wise (see the header) in two halves
 * around the exp, so that several exps can run interleaved (VEXP_N):
 * VSIG_ARG(v) is the exp's argument, VSIG_FIN(out, v, ex) the result from
 * ex = e^VSIG_ARG(v); NaN lanes keep v. */
#define VSIG_ARG(v) (-(v))
#define VSIG_FIN(out, v, ex)                                    \
  do {                                                          \
    v16f sv_ = (v), ss_ = 1.0f / (1.0f + (ex));                 \
    v16i snan_ = sv_ != sv_;                                    \
    (out) = (v16f)(((v16i)ss_ & ~snan_) | ((v16i)sv_ & snan_)); \
  } while (0)

/* tanh(v) lane-wise (see the header): sign(v) (1 - e) / (1 + e), e =
 * e^(-2|v|), for |v| >= 0.1, the Taylor polynomial below; NaN lanes keep
 * v. VTANH_ARG(v) is the exp's argument, VTANH_FIN(out, v, ex) the result
 * from ex = e^VTANH_ARG(v). */
#define VTANH_SIGN ((v16i){0} + (int32_t)0x80000000u)
#define VTANH_ARG(v) (-2.0f * (v16f)((v16i)(v) & ~VTANH_SIGN))
#define VTANH_FIN(out, v, ex)                                            \
  do {                                                                   \
    v16f tv_ = (v), te_ = (ex);                                          \
    v16f ta_ = (v16f)((v16i)tv_ & ~VTANH_SIGN);                          \
    v16f big_ = (1.0f - te_) / (1.0f + te_);                             \
    v16f a2_ = ta_ * ta_;                                                \
    v16f sm_ = a2_ * (62.0f / 2835.0f) - 17.0f / 315.0f;                 \
    sm_ = sm_ * a2_ + 2.0f / 15.0f;                                      \
    sm_ = sm_ * a2_ - 1.0f / 3.0f;                                       \
    sm_ = sm_ * (a2_ * ta_) + ta_;                                       \
    v16i use_sm_ = ta_ < 0.1f;                                           \
    v16f res_ = (v16f)(((v16i)sm_ & use_sm_) | ((v16i)big_ & ~use_sm_)); \
    res_ = (v16f)((v16i)res_ | ((v16i)tv_ & VTANH_SIGN));                \
    v16i tnan_ = tv_ != tv_;                                             \
    (out) = (v16f)(((v16i)res_ & ~tnan_) | ((v16i)tv_ & tnan_));         \
  } while (0)

DML_CPU_CLONES void dml_cpu_vsigmoid_f32(float *x, int64_t n) {
  for (int64_t i = 0; i < n; i += VL) {
    v16f v, e;
    vload(&v, x + i, n - i);
    VEXP(e, VSIG_ARG(v));
    VSIG_FIN(v, v, e);
    vstore(x + i, &v, n - i);
  }
}

/* y = sigmoid(*pv) for one vector of n lanes (n <= VL) from x, with *pe
 * its exp computed (VSIG_ARG): VSIG_FIN, and e^x (libm's expf) in the
 * lanes below -87, where the vector exp clamps: there 1 + e^x rounds to 1,
 * so e^x is e^x / (1 + e^x) rounded, subnormal results included. The
 * vectors by address: a v16f argument of a function that is not a clone
 * changes the ABI by the target (gcc -Wpsabi, an error where it is not
 * inlined, as in the ASan build). */
static inline void vsig_store(float *y, const v16f *pv, const v16f *pe, int64_t n) {
  v16f r, v = *pv, e = *pe;
  VSIG_FIN(r, v, e);
  int32_t lo[VL];
  v16i m = v < -87.0f;
  memcpy(lo, &m, sizeof lo);
  int32_t any = 0;
  for (int k = 0; k < VL; k++) any |= lo[k];
  if (any) {
    float xs[VL], rs[VL];
    memcpy(xs, &v, sizeof xs);
    memcpy(rs, &r, sizeof rs);
    for (int k = 0; k < VL; k++)
      if (lo[k]) rs[k] = expf(xs[k]);
    memcpy(&r, rs, sizeof r);
  }
  vstore(y, &r, n);
}

DML_CPU_CLONES void dml_cpu_sigmoid_f32(const float *x, float *y, int64_t n) {
  int64_t i = 0;
  for (; i + 4 * VL <= n; i += 4 * VL) { /* four exps interleaved (VEXP_N) */
    v16f v[4], e[4];
    memcpy(v, x + i, sizeof v);
    EACH(4, e[u_] = VSIG_ARG(v[u_]));
    VEXP_N(4, e, e);
    EACH(4, vsig_store(y + i + u_ * VL, &v[u_], &e[u_], VL));
  }
  for (; i < n; i += VL) {
    v16f v, e;
    vload(&v, x + i, n - i);
    VEXP(e, VSIG_ARG(v));
    vsig_store(y + i, &v, &e, n - i);
  }
}

DML_CPU_CLONES void dml_cpu_vtanh_f32(float *x, int64_t n) {
  for (int64_t i = 0; i < n; i += VL) {
    v16f v, e;
    vload(&v, x + i, n - i);
    VEXP(e, VTANH_ARG(v));
    VTANH_FIN(v, v, e);
    vstore(x + i, &v, n - i);
  }
}

/* v clipped to [-clip, clip] lane-wise when clip > 0 (NaN stays NaN), as
 * cpu_rnn.c's clipf. */
static inline void vclip(v16f *v, float clip) {
  if (clip > 0) {
    v16f x = *v;
    v16i lo = x<-clip, hi = x> clip;
    x = (v16f)(((v16i)x & ~lo) | ((v16i)((v16f){0} - clip) & lo));
    *v = (v16f)(((v16i)x & ~hi) | ((v16i)((v16f){0} + clip) & hi));
  }
}

DML_CPU_CLONES void dml_cpu_lstm_cell_f32(const float *xr, const float *g, const float *P,
                                          float clip, float *c, float *h, int64_t H) {
  for (int64_t j = 0; j < H; j += VL) {
    int64_t n = H - j;
    v16f xi, xo, xf, xc, gi, go, gf, gc, cv, pi, po, pf, a[4], e[4];
    vload(&xi, xr + j, n);
    vload(&xo, xr + H + j, n);
    vload(&xf, xr + 2 * H + j, n);
    vload(&xc, xr + 3 * H + j, n);
    vload(&gi, g + j, n);
    vload(&go, g + H + j, n);
    vload(&gf, g + 2 * H + j, n);
    vload(&gc, g + 3 * H + j, n);
    vload(&cv, c + j, n);
    a[0] = xi + gi; /* i */
    a[1] = xf + gf; /* f */
    a[2] = xc + gc; /* the cell candidate */
    if (P) {
      vload(&pi, P + j, n);
      vload(&pf, P + 2 * H + j, n);
      a[0] = a[0] + pi * cv;
      a[1] = a[1] + pf * cv;
    }
    a[3] = xo + go; /* o, before its peephole term */
    vclip(&a[0], clip);
    vclip(&a[1], clip);
    vclip(&a[2], clip);
    /* Without peepholes o does not wait for C_t: four exps interleaved. */
    e[0] = VSIG_ARG(a[0]);
    e[1] = VSIG_ARG(a[1]);
    e[2] = VTANH_ARG(a[2]);
    if (!P) {
      vclip(&a[3], clip);
      e[3] = VSIG_ARG(a[3]);
      VEXP_N(4, e, e);
    } else {
      VEXP_N(3, e, e);
    }
    VSIG_FIN(a[0], a[0], e[0]);
    VSIG_FIN(a[1], a[1], e[1]);
    VTANH_FIN(a[2], a[2], e[2]);
    cv = a[1] * cv + a[0] * a[2];
    vstore(c + j, &cv, n);
    if (P) {
      vload(&po, P + H + j, n);
      a[3] = a[3] + po * cv;
      vclip(&a[3], clip);
      VEXP(e[3], VSIG_ARG(a[3]));
    }
    VSIG_FIN(a[3], a[3], e[3]);
    vstore(h + j, &a[3], n); /* o until the pass below */
  }
  /* H_t = o (.) tanh(C_t), four vectors' exps interleaved. */
  int64_t j = 0;
  for (; j + 4 * VL <= H; j += 4 * VL) {
    v16f cv[4], o[4], e[4];
    for (int u = 0; u < 4; u++) {
      memcpy(&cv[u], c + j + u * VL, sizeof cv[u]);
      memcpy(&o[u], h + j + u * VL, sizeof o[u]);
      e[u] = VTANH_ARG(cv[u]);
    }
    VEXP_N(4, e, e);
    for (int u = 0; u < 4; u++) {
      VTANH_FIN(e[u], cv[u], e[u]);
      e[u] = o[u] * e[u];
      memcpy(h + j + u * VL, &e[u], sizeof e[u]);
    }
  }
  for (; j < H; j += VL) {
    v16f cv, o, e;
    vload(&cv, c + j, H - j);
    vload(&o, h + j, H - j);
    VEXP(e, VTANH_ARG(cv));
    VTANH_FIN(e, cv, e);
    e = o * e;
    vstore(h + j, &e, H - j);
  }
}

/* z and r of one GRU vector (16 lanes, n of them loaded): from the input
 * projection xr and H_{t-1} R^T g (gate order z, r, h), each clipped,
 * their two exps interleaved. */
#define GRU_ZR(NU, zv, rv, xr, g, j, n)                    \
  do {                                                     \
    EACH(NU, {                                             \
      v16f xz_;                                            \
      v16f gz_;                                            \
      v16f xrr_;                                           \
      v16f grr_;                                           \
      vload(&xz_, (xr) + (j)[u_], (n)[u_]);                \
      vload(&gz_, (g) + (j)[u_], (n)[u_]);                 \
      vload(&xrr_, (xr) + H + (j)[u_], (n)[u_]);           \
      vload(&grr_, (g) + H + (j)[u_], (n)[u_]);            \
      (zv)[u_] = xz_ + gz_;                                \
      (rv)[u_] = xrr_ + grr_;                              \
      vclip(&(zv)[u_], clip);                              \
      vclip(&(rv)[u_], clip);                              \
    });                                                    \
    v16f a_[2 * (NU)];                                     \
    EACH(NU, a_[u_] = VSIG_ARG((zv)[u_]));                 \
    EACH(NU, a_[(NU) + u_] = VSIG_ARG((rv)[u_]));          \
    VEXP_N(2 * (NU), a_, a_);                              \
    EACH(NU, VSIG_FIN((zv)[u_], (zv)[u_], a_[u_]));        \
    EACH(NU, VSIG_FIN((rv)[u_], (rv)[u_], a_[(NU) + u_])); \
  } while (0)

DML_CPU_CLONES void dml_cpu_gru_gates_f32(const float *xr, float *g, float clip,
                                          const float *h, float *rh, int64_t H) {
  for (int64_t j0 = 0; j0 < H; j0 += 2 * VL) {
    int64_t j[2] = {j0, j0 + VL}, n[2] = {H - j0, H - j0 - VL};
    /* zeroed: GRU_ZR(1) leaves [1] unset (never stored then; gcc 13's
     * -Wmaybe-uninitialized cannot tell) */
    v16f zv[2] = {{0}, {0}}, rv[2] = {{0}, {0}};
    if (n[1] > 0) {
      GRU_ZR(2, zv, rv, xr, g, j, n);
    } else {
      GRU_ZR(1, zv, rv, xr, g, j, n);
    }
    for (int u = 0; u < 2 && n[u] > 0; u++) {
      vstore(g + j[u], &zv[u], n[u]);
      vstore(g + H + j[u], &rv[u], n[u]);
      if (rh) {
        v16f hv;
        vload(&hv, h + j[u], n[u]);
        hv = rv[u] * hv;
        vstore(rh + j[u], &hv, n[u]);
      }
    }
  }
}

/* The candidate and H_t of NU vectors: c = tanh(clip(a)) (a made by the
 * caller in cv), h = (1 - z) c + z h. */
#define GRU_HT(NU, zv, cv, h, j, n)                        \
  do {                                                     \
    v16f e_[NU];                                           \
    EACH(NU, vclip(&(cv)[u_], clip));                      \
    EACH(NU, e_[u_] = VTANH_ARG((cv)[u_]));                \
    VEXP_N(NU, e_, e_);                                    \
    EACH(NU, {                                             \
      v16f hv_;                                            \
      VTANH_FIN((cv)[u_], (cv)[u_], e_[u_]);               \
      vload(&hv_, (h) + (j)[u_], (n)[u_]);                 \
      hv_ = (1.0f - (zv)[u_]) * (cv)[u_] + (zv)[u_] * hv_; \
      vstore((h) + (j)[u_], &hv_, (n)[u_]);                \
    });                                                    \
  } while (0)

DML_CPU_CLONES void dml_cpu_gru_cell_f32(const float *xr, const float *g, const float *hh,
                                         const float *Rbh, float clip, float *h,
                                         int64_t H) {
  for (int64_t j0 = 0; j0 < H; j0 += 2 * VL) {
    int64_t j[2] = {j0, j0 + VL}, n[2] = {H - j0, H - j0 - VL};
    const int nu = n[1] > 0 ? 2 : 1;
    v16f zv[2], rv[2], cv[2];
    if (!hh) { /* linear_before_reset: z and r here */
      if (nu == 2)
        GRU_ZR(2, zv, rv, xr, g, j, n);
      else
        GRU_ZR(1, zv, rv, xr, g, j, n);
    }
    for (int u = 0; u < nu; u++) {
      v16f xh, b = {0};
      vload(&xh, xr + 2 * H + j[u], n[u]);
      if (hh) {
        v16f t;
        vload(&zv[u], g + j[u], n[u]);
        vload(&t, hh + j[u], n[u]);
        cv[u] = xh + t;
      } else {
        v16f gh;
        vload(&gh, g + 2 * H + j[u], n[u]);
        if (Rbh) vload(&b, Rbh + j[u], n[u]);
        cv[u] = xh + rv[u] * (gh + b);
      }
    }
    if (nu == 2)
      GRU_HT(2, zv, cv, h, j, n);
    else
      GRU_HT(1, zv, cv, h, j, n);
  }
}
