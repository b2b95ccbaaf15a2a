// dmlc kernel k1_reduce (reduce)
#define DML_NSYM 1
/* dmlc CUDA prelude: no CUDA headers (compiled with -nocudainc -nocudalib) */
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define DML_DEV static __device__ __attribute__((always_inline)) inline
typedef struct dml_syms { unsigned sym[DML_NSYM]; } dml_syms_t;
/* x, which the compiler cannot see as a constant (c_emit.h opaque_pre):
 * no min/max instruction made of a select with a zero arm */
DML_DEV float dml_opaque(float x) {
  __asm__("" : "+f"(x));
  return x;
}
DML_DEV double dml_opaque(double x) {
  __asm__("" : "+d"(x));
  return x;
}
/* exp(x) = 2^h * 2^l with h = fl(x*log2 e) and l its rounding error (fma):
 * ex2.approx's 2^-22.5 relative error, not x*log2 e's rounding */
DML_DEV float dml_exp(float x) {
  float h = x * 1.44269504f;
  float l = __builtin_fabsf(x) < 88.0f
                ? __builtin_fmaf(x, 1.44269504f, -h) + x * 1.92596299e-8f : 0.0f;
  return __nvvm_ex2_approx_f(h) * (1.0f + l * 0.693147181f);
}
/* lg2.approx: absolute error of log below 2^-22 * ln 2 */
DML_DEV float dml_log(float x) { return __nvvm_lg2_approx_f(x) * 0.693147181f; }
DML_DEV float dml_sigmoid(float x) { return 1.0f / (1.0f + dml_exp(-x)); }
/* odd Taylor series below 0.125 (error < 1e-9), else 1 - 2/(e^2|x| + 1) */
DML_DEV float dml_tanh(float x) {
  float a = __builtin_fabsf(x);
  if (a < 0.125f) {
    float x2 = x * x;
    return x * (1.0f + x2 * (-0.333333333f + x2 * (0.133333333f + x2 * -0.0539682540f)));
  }
  float t = 1.0f - 2.0f / (dml_exp(2.0f * a) + 1.0f);
  return x < 0.0f ? -t : t;
}
/* 2/pi's first 224 fraction bits, after a zero word */
DML_DEV unsigned dml_2opi(int i) {
  const unsigned t[8] = {0u, 0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u,
                         0xF534DDC0u, 0xDB629599u, 0x3C439041u, 0xFE5163ABu};
  return t[i];
}
/* Payne-Hanek for 2^20 <= |x| < inf: |x| = m 2^E (m < 2^24) times 2/pi
 * mod 4 from a 96-bit window of 2/pi's bits (those before it add
 * multiples of 4): the quadrant *q and the reduced argument in
 * [-pi/4, pi/4] */
DML_DEV float dml_reduce_big(float x, float *q) {
  unsigned u = __builtin_bit_cast(unsigned, x);
  int e = (int)((u >> 23) & 0xffu) - 150, pos = e + 30, k = pos >> 5, sh = pos & 31;
  unsigned long long m = (u & 0x7fffffu) | 0x800000u;
  unsigned w[3];
  for (int i = 0; i < 3; i++)
    w[i] = sh ? (dml_2opi(k + i) << sh) | (dml_2opi(k + i + 1) >> (32 - sh))
              : dml_2opi(k + i);
  unsigned long long p2 = m * w[2], p1 = m * w[1] + (p2 >> 32);
  unsigned long long p0 = m * w[0] + (p1 >> 32);
  unsigned long long R = (p0 << 32) + (p1 & 0xffffffffull);
  unsigned long long n = (R + (1ull << 61)) >> 62;
  float r = (float)((double)(long long)(R - (n << 62)) * 3.4061215800865545e-19);
  float fn = (float)(n & 3u);
  if (u >> 31) {
    r = -r;
    fn = fn == 0.0f ? 0.0f : 4.0f - fn;
  }
  *q = fn;
  return r;
}
/* sin (q0 0) and cos (q0 1): x = j pi/2 + r, by Cody-Waite with pi/2 in
 * four f32 parts (exact products in the fmas) for |x| <= 2^20, by
 * dml_reduce_big beyond; then Cephes' sinf/cosf polynomials on
 * [-pi/4, pi/4] by quadrant. Within 1.7e-7 relative of glibc's sinf and
 * cosf, and tan = sin/cos within 2.8e-7 of tanf, over 60M arguments of
 * every magnitude (simulated on the host); sin/cos.approx, used before,
 * made tan 0.2% off near its poles and -inf at 1e30. */
DML_DEV float dml_sincos(float x, float q0) {
  float r, q;
  if (!(__builtin_fabsf(x) <= 1048576.0f)) {
    if (!(__builtin_fabsf(x) <= 3.40282347e38f)) return x - x; /* NaN, inf */
    r = dml_reduce_big(x, &q);
  } else {
    float j = __builtin_rintf(x * 0.636619772f);
    r = __builtin_fmaf(-j, 1.5703125f, x);
    r = __builtin_fmaf(-j, 4.83751297e-4f, r);
    r = __builtin_fmaf(-j, 7.54979013e-8f, r);
    r = __builtin_fmaf(-j, -1.71512451e-15f, r);
    q = j - 4.0f * __builtin_floorf(j * 0.25f);
  }
  q += q0;
  if (q >= 4.0f) q -= 4.0f;
  float z = r * r;
  float ps = __builtin_fmaf(z, -1.9515295891e-4f, 8.3321608736e-3f);
  ps = __builtin_fmaf(r * z, __builtin_fmaf(z, ps, -1.6666654611e-1f), r);
  float pc = __builtin_fmaf(z, 2.443315711809948e-5f, -1.388731625493765e-3f);
  pc = __builtin_fmaf(z, pc, 4.166664568298827e-2f);
  pc = __builtin_fmaf(z * z, pc, __builtin_fmaf(-0.5f, z, 1.0f));
  float v = (q == 0.0f || q == 2.0f) ? ps : pc;
  v = q >= 2.0f ? -v : v;
  return (q0 == 0.0f && x == 0.0f) ? x : v; /* sin(-0) = -0 */
}
DML_DEV float dml_sin(float x) { return dml_sincos(x, 0.0f); }
DML_DEV float dml_cos(float x) { return dml_sincos(x, 1.0f); }
/* as C's powf for finite operands: negative bases need integral exponents */
DML_DEV float dml_pow(float a, float b) {
  if (b == 0.0f) return 1.0f;
  float r = __nvvm_ex2_approx_f(b * __nvvm_lg2_approx_f(__builtin_fabsf(a)));
  if (a < 0.0f) {
    if (__builtin_floorf(b) != b) return __builtin_nanf("");
    if (__builtin_fmodf(b, 2.0f) != 0.0f) r = -r;
  }
  return r;
}
#define DML_FMOD_FN(QUAL, T, NANV, ABS, ISINF) \
  QUAL T dml_fmod(T a, T b) { \
    T x = ABS(a), y = ABS(b); \
    if (!(x == x) || !(y == y) || ISINF(x) || y == T(0)) return NANV; \
    if (x < y) return a; \
    T t = y; \
    while (t + t <= x) t = t + t; \
    while (x >= y) { \
      if (t <= x) x = x - t; \
      t = t * T(0.5); \
    } \
    return a < T(0) ? -x : x; \
  }
#define DML_INT_FNS(T)                                                   \
  DML_DEV T dml_max(T a, T b) { return a > b ? a : b; }                  \
  DML_DEV T dml_min(T a, T b) { return a < b ? a : b; }                  \
  DML_DEV T dml_abs(T a) { return a < 0 ? -a : a; }                      \
  DML_DEV T dml_sign(T a) { return (T)((a > 0) - (a < 0)); }             \
  DML_DEV T dml_idiv(T a, T b) { return b == 0 ? 0 : b == -1 ? -a : a / b; } \
  DML_DEV T dml_fmod(T a, T b) { return (b == 0 || b == -1) ? 0 : a % b; } \
  DML_DEV T dml_imod(T a, T b) {                                         \
    T r = dml_fmod(a, b);                                                \
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;                 \
  }                                                                      \
  DML_DEV T dml_ipow(T a, T e) { /* wraps: unsigned products */          \
    if (e < 0) return a == 1 ? 1 : a == -1 ? ((e & 1) ? -1 : 1) : 0;     \
    unsigned long long r = 1, b = (unsigned long long)a;                 \
    while (e) {                                                          \
      if (e & 1) r *= b;                                                 \
      b *= b;                                                            \
      e >>= 1;                                                           \
    }                                                                    \
    return (T)r;                                                         \
  }
DML_INT_FNS(long long)
DML_INT_FNS(int)
DML_DEV float dml_sign(float x) { return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x; }
DML_FMOD_FN(DML_DEV, float, __builtin_nanf(""), __builtin_fabsf, __builtin_isinf)
DML_DEV double dml_sign(double x) { return x > 0.0 ? 1.0 : x < 0.0 ? -1.0 : x; }
DML_FMOD_FN(DML_DEV, double, __builtin_nan(""), __builtin_fabs, __builtin_isinf)
DML_DEV double dml_abs(double a) { return __builtin_fabs(a); }
#define DML_ORD_FNS(T)                                                   \
  DML_DEV T dml_max(T a, T b) { return a > b ? a : b; }                  \
  DML_DEV T dml_min(T a, T b) { return a < b ? a : b; }
DML_ORD_FNS(double)
/* unsigned (u32, u64): a divisor of 0 gives 0, as on the CPU */
#define DML_UINT_FNS(T)                                                  \
  DML_ORD_FNS(T)                                                         \
  DML_DEV T dml_udiv(T a, T b) { return b == 0 ? 0 : a / b; }           \
  DML_DEV T dml_umod(T a, T b) { return b == 0 ? 0 : a % b; }
DML_UINT_FNS(unsigned)
DML_UINT_FNS(unsigned long long)
#define DML_FN DML_DEV
#define DML_U unsigned
#define DML_F2U(x) __builtin_bit_cast(unsigned, x)
#define DML_U2F(x) __builtin_bit_cast(float, x)
#define DML_DINF __builtin_inf()
#define DML_DNAN __builtin_nan("")
#define DML_FLOOR __builtin_floor
#define DML_EXP2I(k) __builtin_bit_cast(double, (unsigned long long)((k) + 1023) << 52)
#define DML_DEXP(x) ((int)(__builtin_bit_cast(unsigned long long, x) >> 52) - 1023)
extern "C" __global__ void __attribute__((launch_bounds(256)))
k1_reduce(float *__restrict__ arena, const float *__restrict__ weights, dml_syms_t pc) {
  const unsigned lid_x = __nvvm_read_ptx_sreg_tid_x();
  const unsigned lid_y = __nvvm_read_ptx_sreg_tid_y();
  const unsigned wg_x = __nvvm_read_ptx_sreg_ctaid_x();
  const unsigned wg_y = __nvvm_read_ptx_sreg_ctaid_y();
  const unsigned gid_x = wg_x * 256u + lid_x;
  const unsigned gid_y = wg_y * 1u + lid_y;
  (void)gid_x, (void)gid_y, (void)arena, (void)weights, (void)pc;
  float r0 = 0.0f;
  float r1 = 0.0f;
  if (gid_x < pc.sym[0]) {
    r1 = (-__builtin_inff());
    for (unsigned i0 = 0u; i0 < 6u; i0 += 1u) {
      r1 = (((r1 > arena[(128u + (i0 + (gid_x * 6u)))]) || (!(r1 == r1))) ? r1 : arena[(128u + (i0 + (gid_x * 6u)))]);
    }
    r0 = r1;
    arena[(224u + gid_x)] = r0;
  }
}
