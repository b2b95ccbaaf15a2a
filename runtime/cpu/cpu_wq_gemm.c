/*
 * cpu_wq_gemm.c — MatMulWQ (dmlc's op, ops.def): f32 activations times
 * int8 / int4 weights dequantized per group in the GEMM's load stage
 * (issue 19 part 4). The weights stay in the package's layout
 * (runtime/base/dml_wq.h): nothing is unpacked at load time and no f32 copy
 * of a weight exists, so a GEMV (one row, memory bound) reads 1/4 (int8) or
 * 1/8 (int4) of the f32 weight's bytes.
 *
 * Blocking: the output is cut into tasks of (up to WQ_MC rows) x (one panel
 * of WQ_NR = 32 columns); a task walks K in blocks of WQ_KC, dequantizes
 * the block's kc x 32 weights into a per-thread f32 buffer
 * (dq = (float)(q - z) * scale: DequantizeLinear's formula, so the same f32
 * weights as the dequantize-then-MatMul form) and runs a register-tile
 * micro-kernel over its rows with f32 fused multiply-adds: AVX-512 (8 x 32)
 * or AVX2 + FMA (6 x 16, twice per panel) on x86-64, picked once from CPUID;
 * NEON (6 x 16 with fused multiply-adds, NEON dequantization) on arm64;
 * else portable C (4 x 32). Per output element: for each K block in
 * order, acc = sum over its k in order from 0, then C = acc (first block)
 * or C + acc; the sum order differs from the f32 GEMM's, so results agree
 * with dequantize-then-MatMul within f32 rounding (tests/cpu/test_cpu_wqgemm.c
 * states the bound), not bit for bit. Row independence holds: a row's
 * roundings do not depend on M, its tile or the thread split.
 */
#if defined(__GNUC__) && !defined(__clang__)
/* Before the includes, so the inline helpers get the same options. */
#pragma GCC optimize("O3", "no-trapping-math")
#endif
#include <string.h>

#include "cpu_internal.h"
#include "dml_wq.h"

#if DML_CPU_X86
#include <immintrin.h>
#endif
#if defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#define WQ_NEON 1 /* AArch64: NEON is always there */
#else
#define WQ_NEON 0
#endif

#define WQ_KC 256
#define WQ_MC 128
#define WQ_NR DML_WQ_PANEL /* 32 */
#define WQ_BUF_FLOATS (WQ_KC * WQ_NR)

typedef struct {
  const float *A;
  int64_t M, K, N, bs, wrow; /* wrow: bytes per panel row (dml_wq.h) */
  const uint8_t *w;
  int bits, wsigned; /* bits 8: w i8 (1) or u8 (0); bits 4: nibbles, zp i8 */
  const float *s;
  const uint8_t *z; /* NULL: zero */
  float *C;
  int64_t n_panels, n_mblk;
  int isa; /* 0 C, 1 NEON (arm64), 2 AVX2+FMA, 3 AVX-512 */
  float *buf[64];
} wq_ctx_t;

/* ---- load stage: dequantize W[pc:pc+kc, j0:j0+32] into buf[kc][32] ----- */

static inline int32_t wq_zero(const wq_ctx_t *g, int64_t grp, int64_t j) {
  if (!g->z) return 0;
  size_t i = (size_t)(grp * g->N + j);
  return g->bits == 4 || g->wsigned ? (int32_t)((const int8_t *)g->z)[i] : g->z[i];
}

static inline int32_t wq_q(const wq_ctx_t *g, int64_t k, int64_t j) {
  const uint8_t *p = g->w + dml_wq_offset(g->K, g->bits, k, j);
  if (g->bits == 4) return ((*p >> dml_wq_shift(g->bits, j)) & 15) - 8;
  return g->wsigned ? (int32_t) * (const int8_t *)p : (int32_t)*p;
}

/* Any panel (the last may have fewer than 32 columns: the rest are 0). */
static void dequant_any(const wq_ctx_t *g, int64_t pc, int64_t kc, int64_t j0,
                        float *restrict buf) {
  int64_t cols = DML_CPU_MIN((int64_t)WQ_NR, g->N - j0);
  for (int64_t k = 0; k < kc; k++) {
    int64_t kk = pc + k, grp = kk / g->bs;
    const float *sp = g->s + grp * g->N + j0;
    float *b = buf + k * WQ_NR;
    int64_t j = 0;
    for (; j < cols; j++)
      b[j] = (float)(wq_q(g, kk, j0 + j) - wq_zero(g, grp, j0 + j)) * sp[j];
    for (; j < WQ_NR; j++) b[j] = 0.0f;
  }
}

/* The zero points of group grp, columns j0..j0+31, as floats, plus 8 for
 * 4-bit weights (a nibble u is q = u - 8): dq = ((float)u - zf) * s, the
 * same value as (float)(q - z) * s (both differences are exact). */
static void zero_floats(const wq_ctx_t *g, int64_t grp, int64_t j0, float *zf) {
  float off = g->bits == 4 ? 8.0f : 0.0f;
  for (int j = 0; j < WQ_NR; j++) zf[j] = (float)wq_zero(g, grp, j0 + j) + off;
}

/* Last k (exclusive, relative to pc) of the group that holds k = pc + k0. */
static int64_t group_end(const wq_ctx_t *g, int64_t pc, int64_t k0, int64_t kc) {
  int64_t grp = (pc + k0) / g->bs;
  return DML_CPU_MIN(kc, (grp + 1) * g->bs - pc);
}

/* A full panel of 32 columns, portable (loops the compiler vectorizes):
 * the same values as dequant_any. */
static void dequant_full_c(const wq_ctx_t *g, int64_t pc, int64_t kc, int64_t j0,
                           float *restrict buf) {
  for (int64_t k = 0; k < kc;) {
    int64_t grp = (pc + k) / g->bs, kend = group_end(g, pc, k, kc);
    const float *restrict sp = g->s + grp * g->N + j0;
    float zf[WQ_NR];
    zero_floats(g, grp, j0, zf);
    for (; k < kend; k++) {
      const uint8_t *row = g->w + dml_wq_offset(g->K, g->bits, pc + k, j0);
      float *restrict b = buf + k * WQ_NR;
      if (g->bits == 4) {
        const uint8_t *q = row;
        for (int j = 0; j < 16; j++) {
          b[j] = ((float)(q[j] & 15) - zf[j]) * sp[j];
          b[16 + j] = ((float)(q[j] >> 4) - zf[16 + j]) * sp[16 + j];
        }
      } else if (g->wsigned) {
        const int8_t *q = (const int8_t *)row;
        for (int j = 0; j < WQ_NR; j++) b[j] = ((float)q[j] - zf[j]) * sp[j];
      } else {
        const uint8_t *q = row;
        for (int j = 0; j < WQ_NR; j++) b[j] = ((float)q[j] - zf[j]) * sp[j];
      }
    }
  }
}

#if DML_CPU_X86
/* AVX-512: a row of 32 weights is 2 conversions from 16 bytes (4 bits) or
 * 2 x 16 bytes (8 bits), 2 subtractions, 2 multiplications. */
__attribute__((target("avx512f"))) static void dequant_full_avx512(const wq_ctx_t *g,
                                                                   int64_t pc, int64_t kc,
                                                                   int64_t j0,
                                                                   float *buf) {
  const __m512i m15 = _mm512_set1_epi32(15);
  for (int64_t k = 0; k < kc;) {
    int64_t grp = (pc + k) / g->bs, kend = group_end(g, pc, k, kc);
    const float *sp = g->s + grp * g->N + j0;
    float zf[WQ_NR];
    zero_floats(g, grp, j0, zf);
    __m512 s0 = _mm512_loadu_ps(sp), s1 = _mm512_loadu_ps(sp + 16);
    __m512 z0 = _mm512_loadu_ps(zf), z1 = _mm512_loadu_ps(zf + 16);
    const uint8_t *row = g->w + dml_wq_offset(g->K, g->bits, pc + k, j0);
    float *b = buf + k * WQ_NR;
    if (g->bits == 4) {
      for (; k < kend; k++, row += g->wrow, b += WQ_NR) {
        __m512i u = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)row));
        __m512 lo = _mm512_cvtepi32_ps(_mm512_and_si512(u, m15));
        __m512 hi = _mm512_cvtepi32_ps(_mm512_srli_epi32(u, 4));
        _mm512_store_ps(b, _mm512_mul_ps(_mm512_sub_ps(lo, z0), s0));
        _mm512_store_ps(b + 16, _mm512_mul_ps(_mm512_sub_ps(hi, z1), s1));
      }
    } else {
      for (; k < kend; k++, row += g->wrow, b += WQ_NR) {
        __m128i r0 = _mm_loadu_si128((const __m128i *)row);
        __m128i r1 = _mm_loadu_si128((const __m128i *)(row + 16));
        __m512i q0 = g->wsigned ? _mm512_cvtepi8_epi32(r0) : _mm512_cvtepu8_epi32(r0);
        __m512i q1 = g->wsigned ? _mm512_cvtepi8_epi32(r1) : _mm512_cvtepu8_epi32(r1);
        _mm512_store_ps(b, _mm512_mul_ps(_mm512_sub_ps(_mm512_cvtepi32_ps(q0), z0), s0));
        _mm512_store_ps(b + 16,
                        _mm512_mul_ps(_mm512_sub_ps(_mm512_cvtepi32_ps(q1), z1), s1));
      }
    }
  }
}

/* AVX2: the same in 4 registers of 8 columns. */
__attribute__((target("avx2,fma"))) static void dequant_full_avx2(const wq_ctx_t *g,
                                                                  int64_t pc, int64_t kc,
                                                                  int64_t j0,
                                                                  float *buf) {
  const __m256i m15 = _mm256_set1_epi32(15);
  for (int64_t k = 0; k < kc;) {
    int64_t grp = (pc + k) / g->bs, kend = group_end(g, pc, k, kc);
    const float *sp = g->s + grp * g->N + j0;
    float zf[WQ_NR];
    zero_floats(g, grp, j0, zf);
    __m256 s[4], z[4];
    for (int h = 0; h < 4; h++) {
      s[h] = _mm256_loadu_ps(sp + 8 * h);
      z[h] = _mm256_loadu_ps(zf + 8 * h);
    }
    const uint8_t *row = g->w + dml_wq_offset(g->K, g->bits, pc + k, j0);
    float *b = buf + k * WQ_NR;
    if (g->bits == 4) {
      for (; k < kend; k++, row += g->wrow, b += WQ_NR) {
        __m256i u0 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)row));
        __m256i u1 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(row + 8)));
        __m256i q[4] = {_mm256_and_si256(u0, m15), _mm256_and_si256(u1, m15),
                        _mm256_srli_epi32(u0, 4), _mm256_srli_epi32(u1, 4)};
        for (int h = 0; h < 4; h++)
          _mm256_store_ps(
              b + 8 * h,
              _mm256_mul_ps(_mm256_sub_ps(_mm256_cvtepi32_ps(q[h]), z[h]), s[h]));
      }
    } else {
      for (; k < kend; k++, row += g->wrow, b += WQ_NR)
        for (int h = 0; h < 4; h++) {
          __m128i r = _mm_loadl_epi64((const __m128i *)(row + 8 * h));
          __m256i q = g->wsigned ? _mm256_cvtepi8_epi32(r) : _mm256_cvtepu8_epi32(r);
          _mm256_store_ps(
              b + 8 * h, _mm256_mul_ps(_mm256_sub_ps(_mm256_cvtepi32_ps(q), z[h]), s[h]));
        }
    }
  }
}
#endif

#if WQ_NEON
/* NEON: 32 columns in 8 registers of 4; the values of dequant_full_c. */
static void dequant_full_neon(const wq_ctx_t *g, int64_t pc, int64_t kc, int64_t j0,
                              float *buf) {
  for (int64_t k = 0; k < kc;) {
    int64_t grp = (pc + k) / g->bs, kend = group_end(g, pc, k, kc);
    const float *sp = g->s + grp * g->N + j0;
    float zf[WQ_NR];
    zero_floats(g, grp, j0, zf);
    float32x4_t s[8], z[8];
    for (int h = 0; h < 8; h++) {
      s[h] = vld1q_f32(sp + 4 * h);
      z[h] = vld1q_f32(zf + 4 * h);
    }
    const uint8_t *row = g->w + dml_wq_offset(g->K, g->bits, pc + k, j0);
    float *b = buf + k * WQ_NR;
    for (; k < kend; k++, row += g->wrow, b += WQ_NR) {
      uint32x4_t u[8];
      if (g->bits == 4) {
        uint8x16_t v = vld1q_u8(row);
        uint8x16_t lo = vandq_u8(v, vdupq_n_u8(15)), hi = vshrq_n_u8(v, 4);
        uint16x8_t w[4] = {vmovl_u8(vget_low_u8(lo)), vmovl_u8(vget_high_u8(lo)),
                           vmovl_u8(vget_low_u8(hi)), vmovl_u8(vget_high_u8(hi))};
        for (int h = 0; h < 4; h++) {
          u[2 * h] = vmovl_u16(vget_low_u16(w[h]));
          u[2 * h + 1] = vmovl_u16(vget_high_u16(w[h]));
        }
        for (int h = 0; h < 8; h++)
          vst1q_f32(b + 4 * h, vmulq_f32(vsubq_f32(vcvtq_f32_u32(u[h]), z[h]), s[h]));
      } else if (g->wsigned) {
        for (int half = 0; half < 2; half++) {
          int8x16_t v = vld1q_s8((const int8_t *)row + 16 * half);
          int16x8_t w0 = vmovl_s8(vget_low_s8(v)), w1 = vmovl_s8(vget_high_s8(v));
          int32x4_t q[4] = {vmovl_s16(vget_low_s16(w0)), vmovl_s16(vget_high_s16(w0)),
                            vmovl_s16(vget_low_s16(w1)), vmovl_s16(vget_high_s16(w1))};
          for (int h = 0; h < 4; h++) {
            int o = 4 * half + h;
            vst1q_f32(b + 4 * o, vmulq_f32(vsubq_f32(vcvtq_f32_s32(q[h]), z[o]), s[o]));
          }
        }
      } else {
        for (int half = 0; half < 2; half++) {
          uint8x16_t v = vld1q_u8(row + 16 * half);
          uint16x8_t w0 = vmovl_u8(vget_low_u8(v)), w1 = vmovl_u8(vget_high_u8(v));
          uint32x4_t q[4] = {vmovl_u16(vget_low_u16(w0)), vmovl_u16(vget_high_u16(w0)),
                             vmovl_u16(vget_low_u16(w1)), vmovl_u16(vget_high_u16(w1))};
          for (int h = 0; h < 4; h++) {
            int o = 4 * half + h;
            vst1q_f32(b + 4 * o, vmulq_f32(vsubq_f32(vcvtq_f32_u32(q[h]), z[o]), s[o]));
          }
        }
      }
    }
  }
}

/* NEON: R rows x 16 columns (half a panel; b strided by 32), fused
 * multiply-adds in k order from 0 (every row of an arm64 run takes one of
 * these, so a row's bits do not depend on its tile). */
#define WQ_UKNEON(R)                                                              \
  static void ukneon_##R(int64_t kc, const float *a, int64_t lda, const float *b, \
                         float *c, int64_t ldc, int cols, int accum) {            \
    float32x4_t acc[R][4];                                                        \
    for (int i = 0; i < R; i++)                                                   \
      for (int j = 0; j < 4; j++) acc[i][j] = vdupq_n_f32(0.0f);                  \
    for (int64_t k = 0; k < kc; k++) {                                            \
      float32x4_t bv[4];                                                          \
      for (int j = 0; j < 4; j++) bv[j] = vld1q_f32(b + k * WQ_NR + 4 * j);       \
      for (int i = 0; i < R; i++) {                                               \
        float x = a[i * lda + k];                                                 \
        for (int j = 0; j < 4; j++) acc[i][j] = vfmaq_n_f32(acc[i][j], bv[j], x); \
      }                                                                           \
    }                                                                             \
    for (int i = 0; i < R; i++) {                                                 \
      float t[16], *ci = c + i * ldc;                                             \
      for (int j = 0; j < 4; j++) vst1q_f32(t + 4 * j, acc[i][j]);                \
      for (int j = 0; j < cols; j++) ci[j] = accum ? ci[j] + t[j] : t[j];         \
    }                                                                             \
  }
WQ_UKNEON(6)
WQ_UKNEON(4)
WQ_UKNEON(2)
WQ_UKNEON(1)
#endif

static void dequant_full(const wq_ctx_t *g, int64_t pc, int64_t kc, int64_t j0,
                         float *buf) {
#if DML_CPU_X86
  if (g->isa == 3) {
    dequant_full_avx512(g, pc, kc, j0, buf);
    return;
  }
  if (g->isa == 2) {
    dequant_full_avx2(g, pc, kc, j0, buf);
    return;
  }
#endif
#if WQ_NEON
  if (g->isa == 1) {
    dequant_full_neon(g, pc, kc, j0, buf);
    return;
  }
#endif
  dequant_full_c(g, pc, kc, j0, buf);
}

/* ---- micro-kernels: C[0:R, 0:cols] (+)= A[0:R, 0:kc] * buf[kc][32] ----- */

/* Portable: up to 4 rows x 32 columns. */
static void uk_c(int64_t kc, const float *a, int64_t lda, const float *restrict b,
                 float *c, int64_t ldc, int rows, int cols, int accum) {
  float acc[4][WQ_NR];
  memset(acc, 0, sizeof acc);
  for (int64_t k = 0; k < kc; k++) {
    const float *bk = b + k * WQ_NR;
    for (int i = 0; i < rows; i++) {
      float ai = a[i * lda + k];
      for (int j = 0; j < WQ_NR; j++) acc[i][j] += ai * bk[j];
    }
  }
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++)
      c[i * ldc + j] = accum ? c[i * ldc + j] + acc[i][j] : acc[i][j];
}

#if DML_CPU_X86
/* AVX-512: R rows x 32 columns (two registers a row), masked stores. */
#define WQ_UK512(R)                                                                   \
  __attribute__((target("avx512f"))) static void uk512_##R(                           \
      int64_t kc, const float *a, int64_t lda, const float *b, float *c, int64_t ldc, \
      __mmask16 m0, __mmask16 m1, int accum) {                                        \
    __m512 c0[R], c1[R];                                                              \
    for (int i = 0; i < R; i++) c0[i] = c1[i] = _mm512_setzero_ps();                  \
    for (int64_t k = 0; k < kc; k++) {                                                \
      __m512 b0 = _mm512_load_ps(b + k * WQ_NR),                                      \
             b1 = _mm512_load_ps(b + k * WQ_NR + 16);                                 \
      for (int i = 0; i < R; i++) {                                                   \
        __m512 x = _mm512_set1_ps(a[i * lda + k]);                                    \
        c0[i] = _mm512_fmadd_ps(x, b0, c0[i]);                                        \
        c1[i] = _mm512_fmadd_ps(x, b1, c1[i]);                                        \
      }                                                                               \
    }                                                                                 \
    for (int i = 0; i < R; i++) {                                                     \
      float *ci = c + i * ldc;                                                        \
      if (accum) {                                                                    \
        c0[i] = _mm512_add_ps(_mm512_maskz_loadu_ps(m0, ci), c0[i]);                  \
        c1[i] = _mm512_add_ps(_mm512_maskz_loadu_ps(m1, ci + 16), c1[i]);             \
      }                                                                               \
      _mm512_mask_storeu_ps(ci, m0, c0[i]);                                           \
      _mm512_mask_storeu_ps(ci + 16, m1, c1[i]);                                      \
    }                                                                                 \
  }
WQ_UK512(8)
WQ_UK512(4)
WQ_UK512(2)
WQ_UK512(1)

/* AVX2 + FMA: R rows x 16 columns (half a panel; b strided by 32). */
#define WQ_UK256(R)                                                                      \
  __attribute__((target("avx2,fma"))) static void uk256_##R(                             \
      int64_t kc, const float *a, int64_t lda, const float *b, float *c, int64_t ldc,    \
      int cols, int accum) {                                                             \
    __m256 c0[R], c1[R];                                                                 \
    for (int i = 0; i < R; i++) c0[i] = c1[i] = _mm256_setzero_ps();                     \
    for (int64_t k = 0; k < kc; k++) {                                                   \
      __m256 b0 = _mm256_load_ps(b + k * WQ_NR), b1 = _mm256_load_ps(b + k * WQ_NR + 8); \
      for (int i = 0; i < R; i++) {                                                      \
        __m256 x = _mm256_broadcast_ss(a + i * lda + k);                                 \
        c0[i] = _mm256_fmadd_ps(x, b0, c0[i]);                                           \
        c1[i] = _mm256_fmadd_ps(x, b1, c1[i]);                                           \
      }                                                                                  \
    }                                                                                    \
    for (int i = 0; i < R; i++) {                                                        \
      float *ci = c + i * ldc;                                                           \
      if (cols == 16) {                                                                  \
        if (accum) {                                                                     \
          c0[i] = _mm256_add_ps(_mm256_loadu_ps(ci), c0[i]);                             \
          c1[i] = _mm256_add_ps(_mm256_loadu_ps(ci + 8), c1[i]);                         \
        }                                                                                \
        _mm256_storeu_ps(ci, c0[i]);                                                     \
        _mm256_storeu_ps(ci + 8, c1[i]);                                                 \
      } else {                                                                           \
        float t[16];                                                                     \
        _mm256_storeu_ps(t, c0[i]);                                                      \
        _mm256_storeu_ps(t + 8, c1[i]);                                                  \
        for (int j = 0; j < cols; j++) ci[j] = accum ? ci[j] + t[j] : t[j];              \
      }                                                                                  \
    }                                                                                    \
  }
WQ_UK256(6)
WQ_UK256(4)
WQ_UK256(2)
WQ_UK256(1)
#endif

#if DML_CPU_X86 || WQ_NEON
/* The 16-column micro-kernels of one ISA for 6, 4, 2 and 1 rows. */
typedef void (*wq_uk16_t)(int64_t kc, const float *a, int64_t lda, const float *b,
                          float *c, int64_t ldc, int cols, int accum);

/* Rows [0, rows) by the 16-column kernels uk (6, 4, 2, 1 rows) over the
 * two 16-column halves of a panel of `cols` columns. */
static void run_rows16(const wq_uk16_t uk[4], int64_t kc, const float *a, int64_t lda,
                       int64_t rows, const float *buf, float *c, int64_t ldc, int cols,
                       int accum) {
  static const int64_t tile_rows[4] = {6, 4, 2, 1};
  for (int h = 0; h < 2; h++) {
    int hc = DML_CPU_MIN(16, cols - 16 * h);
    if (hc <= 0) break;
    const float *b = buf + 16 * h;
    float *ch = c + 16 * h;
    int64_t i = 0;
    for (; i + 6 <= rows; i += 6)
      uk[0](kc, a + i * lda, lda, b, ch + i * ldc, ldc, hc, accum);
    for (int t = 1; t < 4; t++)
      if (rows - i >= tile_rows[t]) {
        uk[t](kc, a + i * lda, lda, b, ch + i * ldc, ldc, hc, accum);
        i += tile_rows[t];
      }
  }
}
#endif
#if DML_CPU_X86
static const wq_uk16_t k_uk256[4] = {uk256_6, uk256_4, uk256_2, uk256_1};
#endif
#if WQ_NEON
static const wq_uk16_t k_ukneon[4] = {ukneon_6, ukneon_4, ukneon_2, ukneon_1};
#endif

/* Rows [0, rows) of a task over one dequantized K block. */
static void run_rows(const wq_ctx_t *g, int64_t kc, const float *a, int64_t rows,
                     const float *buf, float *c, int cols, int accum) {
  const int64_t lda = g->K, ldc = g->N;
#if DML_CPU_X86
  if (g->isa == 3) {
    __mmask16 m0 = (__mmask16)(cols >= 16 ? 0xffffu : (1u << cols) - 1u);
    __mmask16 m1 = (__mmask16)(cols >= 32  ? 0xffffu
                               : cols > 16 ? (1u << (cols - 16)) - 1u
                                           : 0u);
    int64_t i = 0;
    for (; i + 8 <= rows; i += 8)
      uk512_8(kc, a + i * lda, lda, buf, c + i * ldc, ldc, m0, m1, accum);
    if (rows - i >= 4) {
      uk512_4(kc, a + i * lda, lda, buf, c + i * ldc, ldc, m0, m1, accum);
      i += 4;
    }
    if (rows - i >= 2) {
      uk512_2(kc, a + i * lda, lda, buf, c + i * ldc, ldc, m0, m1, accum);
      i += 2;
    }
    if (rows - i >= 1)
      uk512_1(kc, a + i * lda, lda, buf, c + i * ldc, ldc, m0, m1, accum);
    return;
  }
  if (g->isa == 2) {
    run_rows16(k_uk256, kc, a, lda, rows, buf, c, ldc, cols, accum);
    return;
  }
#endif
#if WQ_NEON
  if (g->isa == 1) {
    run_rows16(k_ukneon, kc, a, lda, rows, buf, c, ldc, cols, accum);
    return;
  }
#endif
  for (int64_t i = 0; i < rows; i += 4)
    uk_c(kc, a + i * lda, lda, buf, c + i * ldc, ldc,
         (int)DML_CPU_MIN((int64_t)4, rows - i), cols, accum);
}

static void wq_task(void *vctx, int64_t t, int tid) {
  const wq_ctx_t *g = (const wq_ctx_t *)vctx;
  int64_t ib = t / g->n_panels, p = t % g->n_panels;
  int64_t i0 = ib * WQ_MC, rows = DML_CPU_MIN((int64_t)WQ_MC, g->M - i0);
  int64_t j0 = p * WQ_NR;
  int cols = (int)DML_CPU_MIN((int64_t)WQ_NR, g->N - j0);
  float *buf = g->buf[tid];
  for (int64_t pc = 0; pc < g->K; pc += WQ_KC) {
    int64_t kc = DML_CPU_MIN((int64_t)WQ_KC, g->K - pc);
    if (cols == WQ_NR)
      dequant_full(g, pc, kc, j0, buf);
    else
      dequant_any(g, pc, kc, j0, buf);
    run_rows(g, kc, g->A + i0 * g->K + pc, rows, buf, g->C + i0 * g->N + j0, cols,
             pc > 0);
  }
}

#if DML_CPU_X86
/* Few rows (M < 4, a GEMV), AVX-512: 4 full panels (128 columns) at a time,
 * dequantized in registers (no buffer) so 8 (one row) or 16 (two rows)
 * accumulator chains hide the FMA latency that one panel's 2 or 4 chains
 * expose. The same values and order per output element as wq_task: per K
 * block of WQ_KC, acc = fma(a[k], dq(k, n), acc) for k in order from 0,
 * with dq = ((float)q - zf) * s as dequant_full_avx512; then C = acc or
 * C + acc. */
#define WQ_GP 4 /* panels a group */
#define WQ_GEMV(R)                                                                     \
  __attribute__((target("avx512f"))) static void gemv512_##R(                          \
      const wq_ctx_t *g, const float *a, float *c, int64_t p0) {                       \
    const __m512i m15 = _mm512_set1_epi32(15);                                         \
    /* without zero points: a nibble u is tab[u] = u - 8 and an 8-bit q needs          \
     * no subtraction (the same values as ((float)u - 8) * s, (q - 0) * s) */          \
    const __m512 tab =                                                                 \
        _mm512_setr_ps(-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7);        \
    const int noz = !g->z;                                                             \
    const int64_t K = g->K, N = g->N, rb = g->wrow, j0 = p0 * WQ_NR;                   \
    const uint8_t *wp = g->w + dml_wq_offset(K, g->bits, 0, j0);                       \
    for (int64_t pc = 0; pc < K; pc += WQ_KC) {                                        \
      int64_t kc = DML_CPU_MIN((int64_t)WQ_KC, K - pc);                                \
      __m512 acc[R][WQ_GP][2];                                                         \
      for (int r = 0; r < R; r++)                                                      \
        for (int q = 0; q < WQ_GP; q++)                                                \
          acc[r][q][0] = acc[r][q][1] = _mm512_setzero_ps();                           \
      for (int64_t k = 0; k < kc;) {                                                   \
        int64_t grp = (pc + k) / g->bs, kend = group_end(g, pc, k, kc);                \
        __m512 sv[WQ_GP][2], zv[WQ_GP][2];                                             \
        for (int q = 0; q < WQ_GP; q++) {                                              \
          float zf[WQ_NR];                                                             \
          zero_floats(g, grp, j0 + q * WQ_NR, zf);                                     \
          const float *sp = g->s + grp * N + j0 + q * WQ_NR;                           \
          sv[q][0] = _mm512_loadu_ps(sp), sv[q][1] = _mm512_loadu_ps(sp + 16);         \
          zv[q][0] = _mm512_loadu_ps(zf), zv[q][1] = _mm512_loadu_ps(zf + 16);         \
        }                                                                              \
        for (; k < kend; k++) {                                                        \
          __m512 x[R];                                                                 \
          for (int r = 0; r < R; r++) x[r] = _mm512_set1_ps(a[r * K + pc + k]);        \
          for (int q = 0; q < WQ_GP; q++) {                                            \
            const uint8_t *row = wp + (q * K + pc + k) * rb;                           \
            __m512 b0, b1;                                                             \
            if (g->bits == 4 && noz) {                                                 \
              __m512i u = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)row)); \
              b0 = _mm512_mul_ps(_mm512_permutexvar_ps(_mm512_and_si512(u, m15), tab), \
                                 sv[q][0]);                                            \
              b1 = _mm512_mul_ps(_mm512_permutexvar_ps(_mm512_srli_epi32(u, 4), tab),  \
                                 sv[q][1]);                                            \
            } else if (g->bits == 4) {                                                 \
              __m512i u = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)row)); \
              b0 = _mm512_cvtepi32_ps(_mm512_and_si512(u, m15));                       \
              b1 = _mm512_cvtepi32_ps(_mm512_srli_epi32(u, 4));                        \
              b0 = _mm512_mul_ps(_mm512_sub_ps(b0, zv[q][0]), sv[q][0]);               \
              b1 = _mm512_mul_ps(_mm512_sub_ps(b1, zv[q][1]), sv[q][1]);               \
            } else {                                                                   \
              __m128i r0 = _mm_loadu_si128((const __m128i *)row);                      \
              __m128i r1 = _mm_loadu_si128((const __m128i *)(row + 16));               \
              b0 = _mm512_cvtepi32_ps(g->wsigned ? _mm512_cvtepi8_epi32(r0)            \
                                                 : _mm512_cvtepu8_epi32(r0));          \
              b1 = _mm512_cvtepi32_ps(g->wsigned ? _mm512_cvtepi8_epi32(r1)            \
                                                 : _mm512_cvtepu8_epi32(r1));          \
              if (!noz) {                                                              \
                b0 = _mm512_sub_ps(b0, zv[q][0]);                                      \
                b1 = _mm512_sub_ps(b1, zv[q][1]);                                      \
              }                                                                        \
              b0 = _mm512_mul_ps(b0, sv[q][0]);                                        \
              b1 = _mm512_mul_ps(b1, sv[q][1]);                                        \
            }                                                                          \
            for (int r = 0; r < R; r++) {                                              \
              acc[r][q][0] = _mm512_fmadd_ps(x[r], b0, acc[r][q][0]);                  \
              acc[r][q][1] = _mm512_fmadd_ps(x[r], b1, acc[r][q][1]);                  \
            }                                                                          \
          }                                                                            \
        }                                                                              \
      }                                                                                \
      for (int r = 0; r < R; r++)                                                      \
        for (int q = 0; q < WQ_GP; q++)                                                \
          for (int h = 0; h < 2; h++) {                                                \
            float *cp = c + r * N + j0 + q * WQ_NR + 16 * h;                           \
            __m512 v = acc[r][q][h];                                                   \
            if (pc > 0) v = _mm512_add_ps(_mm512_loadu_ps(cp), v);                     \
            _mm512_storeu_ps(cp, v);                                                   \
          }                                                                            \
    }                                                                                  \
  }
WQ_GEMV(1)
WQ_GEMV(2)

/* Task t of the few-rows path: a group of WQ_GP full panels, or one of the
 * panels after the groups (wq_task's way). */
static void gemv_task(void *vctx, int64_t t, int tid) {
  const wq_ctx_t *g = (const wq_ctx_t *)vctx;
  int64_t n_groups = g->N / WQ_NR / WQ_GP;
  if (t >= n_groups) {
    wq_task(vctx, n_groups * WQ_GP + (t - n_groups), tid); /* n_mblk is 1 */
    return;
  }
  int64_t i = 0;
  for (; i + 2 <= g->M; i += 2) gemv512_2(g, g->A + i * g->K, g->C + i * g->N, t * WQ_GP);
  if (i < g->M) gemv512_1(g, g->A + i * g->K, g->C + i * g->N, t * WQ_GP);
}
#endif

/* ---- the op ------------------------------------------------------------ */

static int g_wq_isa = -1; /* -1: from CPUID */

static int wq_isa(void) {
  if (g_wq_isa >= 0) return g_wq_isa;
#if DML_CPU_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return 3;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return 2;
#endif
#if WQ_NEON
  return 1;
#endif
  return 0;
}

int dml_cpu_wq_set_isa(int which) {
  if (which < 0) {
    g_wq_isa = -1;
    return 0;
  }
#if DML_CPU_X86
  __builtin_cpu_init();
  if (which == 1 || (which == 3 && !__builtin_cpu_supports("avx512f")) ||
      (which == 2 && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))))
    return -1;
#elif WQ_NEON
  if (which != 0 && which != 1) return -1;
#else
  if (which != 0) return -1;
#endif
  if (which != 0 && which != 1 && which != 2 && which != 3) return -1;
  g_wq_isa = which;
  return 0;
}

/* Checks the call against dml_wq.h; fills the context but the buffers. */
static dml_status_t wq_plan(const dml_cpu_call_t *c, wq_ctx_t *g) {
  const dml_tensor_t *a = &c->inputs[0], *w = &c->inputs[1], *s = &c->inputs[2];
  const dml_tensor_t *z = dml_cpu_in(c, 3);
  const dml_tensor_t *y = &c->outputs[0];
  memset(g, 0, sizeof *g);
  int64_t bits = dml_cpu_get_int(c, "bits", 0), bs = dml_cpu_get_int(c, "block_size", 0);
  if ((bits != 4 && bits != 8) || bs < 1)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "bits must be 4 or 8 and block_size >= 1, got %lld and %lld",
                         (long long)bits, (long long)bs);
  if (a->dtype != DML_DTYPE_F32) return dml_cpu_err_dtype(c, "a", a->dtype);
  if (s->dtype != DML_DTYPE_F32) return dml_cpu_err_dtype(c, "scale", s->dtype);
  if (y->dtype != DML_DTYPE_F32) return dml_cpu_err_dtype(c, "y", y->dtype);
  if (bits == 8 && w->dtype != DML_DTYPE_I8 && w->dtype != DML_DTYPE_U8)
    return dml_cpu_err_dtype(c, "w", w->dtype);
  if (bits == 4 && w->dtype != DML_DTYPE_U8) return dml_cpu_err_dtype(c, "w", w->dtype);
  if (a->rank < 1 || w->rank != 3 || s->rank != 2)
    return dml_cpu_err_shapes(c, "a must have rank >= 1, w rank 3 and scale rank 2");
  int64_t K = w->dims[1], N = s->dims[1];
  int ok = a->dims[a->rank - 1] == K && s->dims[0] == dml_wq_groups(K, bs) &&
           w->dims[0] == dml_wq_panels(N) && w->dims[2] == DML_WQ_ROW_BYTES(bits) &&
           y->rank == a->rank && y->dims[y->rank - 1] == N;
  for (int32_t i = 0; ok && i + 1 < a->rank; i++) ok = y->dims[i] == a->dims[i];
  if (z) {
    dml_dtype_t zdt = bits == 4 ? DML_DTYPE_I8 : w->dtype;
    ok = ok && z->dtype == zdt && z->rank == 2 && z->dims[0] == s->dims[0] &&
         z->dims[1] == N;
  }
  if (!ok)
    return dml_cpu_err_shapes(c,
                              "shapes do not fit bits %lld, block_size %lld (dml_wq.h)",
                              (long long)bits, (long long)bs);
  g->A = (const float *)a->data;
  g->K = K;
  g->N = N;
  g->M = K > 0 ? dml_cpu_numel(a) / K : dml_cpu_numel(y) / (N > 0 ? N : 1);
  g->bs = bs;
  g->bits = (int)bits;
  g->wsigned = w->dtype == DML_DTYPE_I8;
  g->w = (const uint8_t *)w->data;
  g->wrow = DML_WQ_ROW_BYTES(bits);
  g->s = (const float *)s->data;
  g->z = z ? (const uint8_t *)z->data : NULL;
  g->C = (float *)y->data;
  g->n_panels = (N + WQ_NR - 1) / WQ_NR;
  g->n_mblk = (g->M + WQ_MC - 1) / WQ_MC;
  return DML_OK;
}

size_t dml_cpus_MatMulWQ(const dml_cpu_call_t *c, int threads) {
  (void)c;
  int t = DML_CPU_MAX(1, DML_CPU_MIN(threads, 64));
  return ((size_t)t * WQ_BUF_FLOATS + 16) * sizeof(float);
}

dml_status_t dml_cpuk_MatMulWQ(const dml_cpu_call_t *c) {
  wq_ctx_t g;
  DML_RETURN_IF_ERROR(wq_plan(c, &g));
  if (g.M <= 0 || g.N <= 0) return DML_OK;
  if (g.K <= 0) {
    memset(g.C, 0, (size_t)(g.M * g.N) * sizeof(float));
    return DML_OK;
  }
  uintptr_t base = ((uintptr_t)c->scratch + 63) & ~(uintptr_t)63;
  size_t avail = c->scratch && c->scratch_bytes > (size_t)(base - (uintptr_t)c->scratch)
                     ? c->scratch_bytes - (size_t)(base - (uintptr_t)c->scratch)
                     : 0;
  int64_t slots = (int64_t)(avail / (WQ_BUF_FLOATS * sizeof(float)));
  if (slots < 1)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "scratch of %zu bytes is too small (need %zu)", c->scratch_bytes,
                         dml_cpus_MatMulWQ(c, 1));
  int threads = dml_cpu_num_threads();
  if ((double)g.M * (double)g.N * (double)g.K < DML_CPU_PARALLEL_MIN_MACS) threads = 1;
  threads = (int)DML_CPU_MIN((int64_t)threads, DML_CPU_MIN(slots, (int64_t)64));
  for (int t = 0; t < threads; t++) g.buf[t] = (float *)base + (size_t)t * WQ_BUF_FLOATS;
  g.isa = wq_isa();
#if DML_CPU_X86
  if (g.isa == 3 && g.M < 4) {
    int64_t n_groups = g.N / WQ_NR / WQ_GP;
    dml_cpu_parallel_for(n_groups + (g.n_panels - n_groups * WQ_GP), threads, gemv_task,
                         &g);
    return DML_OK;
  }
#endif
  dml_cpu_parallel_for(g.n_mblk * g.n_panels, threads, wq_task, &g);
  return DML_OK;
}
