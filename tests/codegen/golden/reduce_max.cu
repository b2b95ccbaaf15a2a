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
/* dml_sin, dml_cos: codegen/kernel_sincos.h, as in GLSL and MSL */
#define DML_SC_FN DML_DEV
#define DML_SC_U unsigned
#define DML_SC_F2U(x) __builtin_bit_cast(unsigned, x)
#define DML_SC_MULHI(a, b) ((unsigned)((unsigned long long)(a) * (b) >> 32))
#define DML_SC_FLOOR(x) __builtin_floorf(x)
#define DML_SC_PRECISE
DML_SC_FN DML_SC_U dml_2opi(DML_SC_U i, DML_SC_U a, DML_SC_U b, DML_SC_U c, DML_SC_U d, DML_SC_U e) { return i == 0u ? a : i == 1u ? b : i == 2u ? c : i == 3u ? d : e; } DML_SC_FN float dml_sincos(float x, float q0) { DML_SC_PRECISE float r; float q; DML_SC_U u = DML_SC_F2U(x) & 0x7fffffffu; if (u <= 0x46000000u) { float j = DML_SC_FLOOR(x * 0.636619772f + 0.5f); DML_SC_PRECISE float t = x - j * 1.5703125f; t = t - j * 4.837512969970703125e-4f; r = t - j * 7.54978995489188216e-8f; q = j - 4.0f * DML_SC_FLOOR(j * 0.25f); } else { DML_SC_U pos = (u >> 23) - 120u; DML_SC_U k = pos >> 5, sh = pos & 31u, sl = 31u - sh; DML_SC_U m = (u & 0x7fffffu) | 0x800000u; DML_SC_U t0 = dml_2opi(k, 0u, 0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u); DML_SC_U t1 = dml_2opi(k, 0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u, 0xDB629599u); DML_SC_U t2 = dml_2opi(k, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u, 0xDB629599u, 0x3C439041u); DML_SC_U t3 = dml_2opi(k, 0xFC2757D1u, 0xF534DDC0u, 0xDB629599u, 0x3C439041u, 0xFE5163ABu); DML_SC_U w0 = (t0 << sh) | ((t1 >> 1u) >> sl); DML_SC_U w1 = (t1 << sh) | ((t2 >> 1u) >> sl); DML_SC_U w2 = (t2 << sh) | ((t3 >> 1u) >> sl); DML_SC_U lo1 = m * w1; DML_SC_U rlo = lo1 + DML_SC_MULHI(m, w2); DML_SC_U rhi = m * w0 + DML_SC_MULHI(m, w1) + (rlo < lo1 ? 1u : 0u) + 0x20000000u; DML_SC_U f = rhi & 0x3fffffffu; DML_SC_U neg = f < 0x20000000u ? 1u : 0u; DML_SC_U mh = neg != 0u ? 0x1fffffffu - f + (rlo == 0u ? 1u : 0u) : f - 0x20000000u; DML_SC_U ml = neg != 0u ? 0u - rlo : rlo; float fh = mh; float fl = ml; r = (fh * 9.31322574615478516e-10f + fl * 2.16840434497100887e-19f) * 1.57079632679489662f; DML_SC_U n = rhi >> 30; if (neg != 0u) r = -r; if (x < 0.0f) { r = -r; n = (4u - n) & 3u; } q = n; } q = q + q0; if (q >= 4.0f) q = q - 4.0f; float z = r * r; float ps = r + r * z * (-1.6666654611e-1f + z * (8.3321608736e-3f + z * (-1.9515295891e-4f))); float pc = 1.0f - 0.5f * z + z * z * (4.166664568298827e-2f + z * (-1.388731625493765e-3f + z * 2.443315711809948e-5f)); float v = (q == 0.0f || q == 2.0f) ? ps : pc; v = q >= 2.0f ? -v : v; v = u >= 0x7f800000u ? x - x : v; return (q0 == 0.0f && x == 0.0f) ? x : v; } DML_SC_FN float dml_sin(float x) { return dml_sincos(x, 0.0f); } DML_SC_FN float dml_cos(float x) { return dml_sincos(x, 1.0f); }
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
/* binary16 <-> f32 by the hardware (c_emit.h dml_cemit_half_helpers) */
DML_DEV unsigned dml_cvt_f2h(float f) {
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
/* dml_cvt_h2f is also the dialect's h2f_arith: a convolution tap's f16
 * load (a NaN canonical after the fma anyway), without dml_h2f's select */
DML_DEV float dml_cvt_h2f(unsigned h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"((unsigned short)h));
  return f;
}
#define DML_F2H_NATIVE(f) dml_cvt_f2h(f)
#define DML_H2F_NATIVE(h) dml_cvt_h2f(h)
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
