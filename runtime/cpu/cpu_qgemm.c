/*
 * cpu_qgemm.c — the fast int8 path of QLinearConv (ONNX opset 10): u8 or s8
 * activations, u8 or s8 weights, int32 accumulation, requantization in the
 * epilogue. cpu_quant.c's reference kernel checks the call and hands 2-D
 * (and 1-D) convolutions here; the results are the reference's bits.
 *
 * Operands. The integer GEMM multiplies u8 activations by s8 weights: an s8
 * x is read as x' = x + 128 (u8, xor 0x80) with x_zero_point + 128, a u8 w
 * as w' = w - 128 (s8) with w_zero_point - 128; the products of the shifted
 * values are the same. With K the reduction length (C/group * kernel size),
 *   acc[m, n] = sum_k (x'[k, n] - zx')(w'[m, k] - zw'[m])
 *             = sum_k x' w'  - zw'[m] colsum[n] - zx' rowsum[m] + K zx' zw'[m],
 * where sum_k x' w' is what the micro-kernels compute (int32, exact for K <=
 * 65,536: |x' w'| <= 255 * 128; larger K take the reference kernel) and
 * colsum is only formed when some zw' is not 0 (quantize_static's int8
 * weights are symmetric: zw = 0). Padding reads zx' (contributes 0).
 *
 * Requantization: y = clamp(rint((acc + B[m]) * (x_scale * w_scale[m] /
 * y_scale)) + zy, lo, hi), in double exactly as the reference kernel
 * (rint: round half to even), then stored as u8/s8; [lo, hi] is y's range
 * narrowed by dml_clamp (a Relu/Clip folded by the qdq-fuse pass). The
 * AVX-512 form adds the constant and clamps in int32 where every value the
 * call can produce has |acc + c0| and |(acc + c0) sc| below 2^30 (qc_t's
 * i32; the product and rint stay double, so the same bits), else clamps in
 * double before the rounding conversion.
 *
 * Layouts. Weights (the GEMM's A) are packed per group into panels of 8
 * rows: [ceil(Mg/8)][Kq][8][4] bytes with Kq = ceil(K/4), rows and k past
 * the end 0; then rowsum int32 [M]. Activations (B) into panels of 16
 * columns (output pixels): [Kq][16][4] bytes, k past K read zx'. The
 * micro-kernels compute an 8 x 32 int32 tile (two B panels):
 *  - AVX-512 VNNI: vpdpbusd (u8 x s8 quads summed into int32 lanes, no
 *    intermediate saturation), 16 accumulators, the weight quad broadcast;
 *  - AVX2: vpmaddubsw would saturate (255 * 127 * 2 > 32,767), so the
 *    widening form: u8 -> i16 (vpmovzxbw) and s8 -> i16 then vpmaddwd
 *    (i16 pairs summed into int32, exact), pairs of k added by vphaddd at
 *    the end;
 *  - arm64 dot product (sdot, where HWCAP_ASIMDDP says so; built with the
 *    dotprod target attribute by GCC, or where __ARM_FEATURE_DOTPROD is on):
 *    x' read as x' - 128 and 128 * sum_k w added back;
 *  - portable C, always there.
 * The path is picked once from CPUID / HWCAP (dml_cpu_qgemm_set_kernel forces one
 * for tests). With VNNI, convolutions of more than one tap whose C/group is a
 * multiple of 4 (tap-major k) and whose weights are symmetric may read B in
 * place from the image interleaved by 4 channels and split into stride
 * phases (d4_task; the qc_t's d4 comment); 1x1-pixel images (a Gemm as a
 * 1x1 conv) take the images as columns (image_task). Depthwise convolutions (group == C
 * == M) take a direct kernel: from 8 channels with the channels in the vector lanes
 * (dwl_task: blocks of 16 channels transposed to pixels of 16 bytes), below per (image,
 * channel) plane (dw_task), int32 accumulators of (x - zx)(w - zw) over the taps
 * (padding contributes 0).
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3", "no-trapping-math")
#endif
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "cpu_internal.h"

#if DML_CPU_X86
#include <immintrin.h>
#endif

#define QMR 8  /* rows of a weight panel */
#define QNR 16 /* columns of an activation panel */

/* ---- kernel choice ------------------------------------------------------ */

typedef void (*quk_fn)(int64_t kq, const int8_t *a, const uint8_t *b0, const uint8_t *b1,
                       int32_t *c);

static void uk_c(int64_t kq, const int8_t *a, const uint8_t *b0, const uint8_t *b1,
                 int32_t *c) {
  /* c: [8][32]; columns 16..31 from b1. */
  int32_t acc[QMR][2 * QNR];
  memset(acc, 0, sizeof acc);
  for (int64_t k = 0; k < kq; k++) {
    const int8_t *ak = a + k * QMR * 4;
    const uint8_t *bk[2] = {b0 + k * QNR * 4, b1 + k * QNR * 4};
    for (int r = 0; r < QMR; r++)
      for (int h = 0; h < 2; h++)
        for (int j = 0; j < QNR; j++) {
          const uint8_t *x = bk[h] + j * 4;
          const int8_t *w = ak + r * 4;
          acc[r][h * QNR + j] += (int32_t)x[0] * w[0] + (int32_t)x[1] * w[1] +
                                 (int32_t)x[2] * w[2] + (int32_t)x[3] * w[3];
        }
  }
  memcpy(c, acc, sizeof acc);
}

#if DML_CPU_X86
__attribute__((target("avx2"))) static void uk_avx2(int64_t kq, const int8_t *a,
                                                    const uint8_t *b0, const uint8_t *b1,
                                                    int32_t *c) {
  for (int h = 0; h < 2; h++) {
    const uint8_t *b = h ? b1 : b0;
    for (int r = 0; r < QMR; r += 2) {
      __m256i s[2][4];
      for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++) s[i][j] = _mm256_setzero_si256();
      for (int64_t k = 0; k < kq; k++) {
        const uint8_t *bk = b + k * QNR * 4;
        __m256i x0 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)bk));
        __m256i x1 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(bk + 16)));
        __m256i x2 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(bk + 32)));
        __m256i x3 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(bk + 48)));
        for (int i = 0; i < 2; i++) {
          int32_t q;
          memcpy(&q, a + (k * QMR + r + i) * 4, 4);
          __m256i w = _mm256_broadcastq_epi64(_mm_cvtepi8_epi16(_mm_cvtsi32_si128(q)));
          s[i][0] = _mm256_add_epi32(s[i][0], _mm256_madd_epi16(x0, w));
          s[i][1] = _mm256_add_epi32(s[i][1], _mm256_madd_epi16(x1, w));
          s[i][2] = _mm256_add_epi32(s[i][2], _mm256_madd_epi16(x2, w));
          s[i][3] = _mm256_add_epi32(s[i][3], _mm256_madd_epi16(x3, w));
        }
      }
      for (int i = 0; i < 2; i++) {
        /* hadd: [p0 p1 p4 p5 | p2 p3 p6 p7] -> permute to p0..p7. */
        __m256i lo = _mm256_permute4x64_epi64(_mm256_hadd_epi32(s[i][0], s[i][1]), 0xD8);
        __m256i hi = _mm256_permute4x64_epi64(_mm256_hadd_epi32(s[i][2], s[i][3]), 0xD8);
        _mm256_storeu_si256((__m256i *)(c + (r + i) * 2 * QNR + h * QNR), lo);
        _mm256_storeu_si256((__m256i *)(c + (r + i) * 2 * QNR + h * QNR + 8), hi);
      }
    }
  }
}

/* The 8 x 32 VNNI tile: C[8][32] (i32) = A (8 rows of kq quads, s8) times B
 * (kq quads of 32 u8 columns). B's quad k is the 128 bytes at b0 + k * 64
 * and b1 + k * 64 (two packed 16-column panels), or, with off, at b0 +
 * off[k] (64 bytes, then the next 64). Inlined into its two callers, where
 * off is a constant NULL or not. */
__attribute__((always_inline, target("avx512f,avx512bw,avx512vnni"))) static inline void
vnni_tile(int64_t kq, const int8_t *a, const uint8_t *b0, const uint8_t *b1,
          const int32_t *off, int32_t *c) {
  __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0,
          c6 = c0, c7 = c0, d0 = c0, d1 = c0, d2 = c0, d3 = c0, d4 = c0, d5 = c0, d6 = c0,
          d7 = c0;
  for (int64_t k = 0; k < kq; k++) {
    const uint8_t *p0 = off ? b0 + off[k] : b0 + k * 64,
                  *p1 = off ? p0 + 64 : b1 + k * 64;
    __m512i x0 = _mm512_loadu_si512((const void *)p0);
    __m512i x1 = _mm512_loadu_si512((const void *)p1);
    const int8_t *ak = a + k * 32;
#define QSTEP(r)                             \
  {                                          \
    int32_t wq;                              \
    memcpy(&wq, ak + 4 * r, 4);              \
    __m512i w = _mm512_set1_epi32(wq);       \
    c##r = _mm512_dpbusd_epi32(c##r, x0, w); \
    d##r = _mm512_dpbusd_epi32(d##r, x1, w); \
  }
    QSTEP(0) QSTEP(1) QSTEP(2) QSTEP(3) QSTEP(4) QSTEP(5) QSTEP(6) QSTEP(7)
#undef QSTEP
  }
#define QST(r)                                     \
  _mm512_storeu_si512((void *)(c + r * 32), c##r); \
  _mm512_storeu_si512((void *)(c + r * 32 + 16), d##r);
  QST(0) QST(1) QST(2) QST(3) QST(4) QST(5) QST(6) QST(7)
#undef QST
}

__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void uk_vnni(
    int64_t kq, const int8_t *a, const uint8_t *b0, const uint8_t *b1, int32_t *c) {
  vnni_tile(kq, a, b0, b1, NULL, c);
}
#endif

#if DML_CPU_X86
/* uk_vnni with B read in place: k quad k's 32 columns are the 128 bytes at
 * xb + off[k] (the stride-1 path's channel-interleaved image). */
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void uk_vnni_d4(
    int64_t kq, const int8_t *a, const uint8_t *xb, const int32_t *off, int32_t *c) {
  vnni_tile(kq, a, xb, NULL, off, c);
}
#endif

#if defined(__aarch64__) && \
    (defined(__ARM_FEATURE_DOTPROD) || (defined(__GNUC__) && !defined(__clang__)))
#define DML_QDOT 1
#include <arm_neon.h>
#include <sys/auxv.h>
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif
#if defined(__ARM_FEATURE_DOTPROD)
#define DML_QDOT_TARGET
#else
#define DML_QDOT_TARGET __attribute__((target("arch=armv8.2-a+dotprod")))
#endif
/* arm64 dot product: sdot is s8 x s8, so x' (u8) is read as x' - 128 (xor
 * 0x80) and 128 * sum_k w[m, k] added back (that sum by sdot against ones).
 * vdotq_laneq_s32 multiplies 4 pixels' quads by row r's quad (lane r of the
 * 16-byte load of 4 rows' quads); 8 rows x 8 pixels per pass. */
DML_QDOT_TARGET static void uk_sdot(int64_t kq, const int8_t *a, const uint8_t *b0,
                                    const uint8_t *b1, int32_t *c) {
  const uint8x16_t fl = vdupq_n_u8(0x80);
  const int8x16_t ones = vdupq_n_s8(1);
  int32x4_t ws0 = vdupq_n_s32(0), ws1 = vdupq_n_s32(0);
  for (int64_t k = 0; k < kq; k++) {
    ws0 = vdotq_s32(ws0, vld1q_s8(a + k * 32), ones);
    ws1 = vdotq_s32(ws1, vld1q_s8(a + k * 32 + 16), ones);
  }
  int32_t wsum[8];
  vst1q_s32(wsum, vshlq_n_s32(ws0, 7));
  vst1q_s32(wsum + 4, vshlq_n_s32(ws1, 7));
  for (int h = 0; h < 2; h++) {
    const uint8_t *b = h ? b1 : b0;
    for (int g = 0; g < 4; g += 2) {
      int32x4_t z = vdupq_n_s32(0);
      int32x4_t c00 = z, c01 = z, c10 = z, c11 = z, c20 = z, c21 = z, c30 = z, c31 = z;
      int32x4_t c40 = z, c41 = z, c50 = z, c51 = z, c60 = z, c61 = z, c70 = z, c71 = z;
      for (int64_t k = 0; k < kq; k++) {
        int8x16_t a0 = vld1q_s8(a + k * 32), a1 = vld1q_s8(a + k * 32 + 16);
        const uint8_t *bk = b + k * 64 + g * 16;
        int8x16_t x0 = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(bk), fl));
        int8x16_t x1 = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(bk + 16), fl));
        c00 = vdotq_laneq_s32(c00, x0, a0, 0), c01 = vdotq_laneq_s32(c01, x1, a0, 0);
        c10 = vdotq_laneq_s32(c10, x0, a0, 1), c11 = vdotq_laneq_s32(c11, x1, a0, 1);
        c20 = vdotq_laneq_s32(c20, x0, a0, 2), c21 = vdotq_laneq_s32(c21, x1, a0, 2);
        c30 = vdotq_laneq_s32(c30, x0, a0, 3), c31 = vdotq_laneq_s32(c31, x1, a0, 3);
        c40 = vdotq_laneq_s32(c40, x0, a1, 0), c41 = vdotq_laneq_s32(c41, x1, a1, 0);
        c50 = vdotq_laneq_s32(c50, x0, a1, 1), c51 = vdotq_laneq_s32(c51, x1, a1, 1);
        c60 = vdotq_laneq_s32(c60, x0, a1, 2), c61 = vdotq_laneq_s32(c61, x1, a1, 2);
        c70 = vdotq_laneq_s32(c70, x0, a1, 3), c71 = vdotq_laneq_s32(c71, x1, a1, 3);
      }
#define QSD(r)                                                          \
  {                                                                     \
    int32x4_t wv = vdupq_n_s32(wsum[r]);                                \
    vst1q_s32(c + (r)*32 + h * 16 + g * 4, vaddq_s32(c##r##0, wv));     \
    vst1q_s32(c + (r)*32 + h * 16 + g * 4 + 4, vaddq_s32(c##r##1, wv)); \
  }
      QSD(0) QSD(1) QSD(2) QSD(3) QSD(4) QSD(5) QSD(6) QSD(7)
#undef QSD
    }
  }
}
#endif

static quk_fn g_quk;
static int g_quk_id; /* 1 C, 2 AVX2, 3 VNNI */
static int g_q_ref;  /* 1: the fast path is off (tests) */
static pthread_once_t g_quk_once = PTHREAD_ONCE_INIT;

static void pick(void) {
  g_quk = uk_c, g_quk_id = 1;
#ifdef DML_QDOT
  if (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) g_quk = uk_sdot, g_quk_id = 4;
#endif
#if DML_CPU_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl"))
    g_quk = uk_vnni, g_quk_id = 3;
  else if (__builtin_cpu_supports("avx2"))
    g_quk = uk_avx2, g_quk_id = 2;
#endif
}

int dml_cpu_qgemm_set_kernel(int which) {
  pthread_once(&g_quk_once, pick);
  g_q_ref = which < 0;
  if (which <= 0) {
    pick();
    return which < 0 ? 0 : g_quk_id;
  }
  if (which == 1) {
    g_quk = uk_c, g_quk_id = 1;
    return 1;
  }
#ifdef DML_QDOT
  if (which == 4 && (getauxval(AT_HWCAP) & HWCAP_ASIMDDP)) {
    g_quk = uk_sdot, g_quk_id = 4;
    return 4;
  }
#endif
#if DML_CPU_X86
  if (which == 2 && __builtin_cpu_supports("avx2")) {
    g_quk = uk_avx2, g_quk_id = 2;
    return 2;
  }
  if (which == 3 && __builtin_cpu_supports("avx512vnni") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")) {
    g_quk = uk_vnni, g_quk_id = 3;
    return 3;
  }
#endif
  pick();
  return -1;
}

static quk_fn kernel(void) {
  pthread_once(&g_quk_once, pick);
  return g_quk;
}

/* ---- weight packing ------------------------------------------------------ */

static int64_t rup(int64_t v, int64_t m) {
  return (v + m - 1) / m * m;
}

/* The GEMM's k order: tap-major, k = (kh * KW + kw) * Cg + c, when Cg is a
 * multiple of 4 and the kernel has more than one tap (then each quad of k
 * is 4 channels of one tap: the stride-1 path reads it straight from a
 * channel-interleaved image); else channel-major, k = (c * KH + kh) * KW +
 * kw (the weights' own order). One fact for the packing of both operands. */
static int tap_major(int64_t Cg, int64_t taps) {
  return Cg % 4 == 0 && taps > 1;
}

/* Bytes of the packed weights of w [M, C/group, k...] for `group`. */
size_t dml_cpu_qconv_prepack_bytes(const dml_tensor_t *w, int64_t group) {
  if (!w || w->rank < 3 || group < 1 || w->dims[0] % group ||
      (w->dtype != DML_DTYPE_U8 && w->dtype != DML_DTYPE_I8))
    return 0;
  int64_t M = w->dims[0], Mg = M / group, K = dml_cpu_numel(w) / (M ? M : 1);
  if (M == 0 || K == 0 || K > 65536) return 0;
  if (Mg == 1 && w->dims[1] == 1 && K <= 64) return 0; /* depthwise: direct kernel */
  return (size_t)(group * rup(Mg, QMR) * rup(K, 4) + M * 4);
}

void dml_cpu_qconv_prepack(const dml_tensor_t *w, int64_t group, void *dst) {
  size_t bytes = dml_cpu_qconv_prepack_bytes(w, group);
  if (!bytes) return;
  int64_t M = w->dims[0], Mg = M / group, K = dml_cpu_numel(w) / M;
  int64_t Kq = rup(K, 4) / 4, gbytes = rup(Mg, QMR) * Kq * 4;
  int8_t *d = (int8_t *)dst;
  int32_t *rowsum = (int32_t *)(void *)(d + group * gbytes);
  memset(d, 0, (size_t)(group * gbytes));
  int u8 = w->dtype == DML_DTYPE_U8;
  const int64_t Cg = w->dims[1], taps = K / Cg;
  const int tm = tap_major(Cg, taps);
  for (int64_t m = 0; m < M; m++) {
    int64_t g = m / Mg, mg = m % Mg;
    int8_t *pg = d + g * gbytes + (mg / QMR) * Kq * QMR * 4 + (mg % QMR) * 4;
    int32_t s = 0;
    for (int64_t k = 0; k < K; k++) {
      int v = u8 ? (int)((const uint8_t *)w->data)[m * K + k] - 128
                 : (int)((const int8_t *)w->data)[m * K + k];
      int64_t kk = tm ? (k % taps) * Cg + k / taps : k; /* w's k = c * taps + tap */
      pg[(kk / 4) * QMR * 4 + kk % 4] = (int8_t)v;
      s += v;
    }
    rowsum[m] = s;
  }
}

/* ---- activation packing ----------------------------------------------- */

/* Packs columns [0, nc) of the k-major matrix src (K rows, row stride lds,
 * column j of row k at src[k * lds + j]) into panels of QNR columns, each
 * byte xor `flip`; k past K and columns past nc read `pad`. */
static void pack_b(const uint8_t *src, int64_t lds, int64_t K, int64_t nc, uint8_t flip,
                   uint8_t pad, uint8_t *dst) {
  int64_t Kq = rup(K, 4) / 4;
  for (int64_t p0 = 0; p0 < nc; p0 += QNR) {
    uint8_t *pd = dst + (p0 / QNR) * Kq * QNR * 4;
#if DML_CPU_X86
    int full = p0 + QNR <= nc;
#endif
    for (int64_t kq = 0; kq < Kq; kq++) {
      uint8_t *o = pd + kq * QNR * 4;
#if DML_CPU_X86
      if (full && kq * 4 + 4 <= K) {
        const uint8_t *r = src + kq * 4 * lds + p0;
        __m128i f = _mm_set1_epi8((char)flip);
        __m128i a = _mm_xor_si128(_mm_loadu_si128((const __m128i *)r), f);
        __m128i b = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(r + lds)), f);
        __m128i cc = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(r + 2 * lds)), f);
        __m128i dd = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(r + 3 * lds)), f);
        __m128i ab0 = _mm_unpacklo_epi8(a, b), ab1 = _mm_unpackhi_epi8(a, b);
        __m128i cd0 = _mm_unpacklo_epi8(cc, dd), cd1 = _mm_unpackhi_epi8(cc, dd);
        _mm_storeu_si128((__m128i *)o, _mm_unpacklo_epi16(ab0, cd0));
        _mm_storeu_si128((__m128i *)(o + 16), _mm_unpackhi_epi16(ab0, cd0));
        _mm_storeu_si128((__m128i *)(o + 32), _mm_unpacklo_epi16(ab1, cd1));
        _mm_storeu_si128((__m128i *)(o + 48), _mm_unpackhi_epi16(ab1, cd1));
        continue;
      }
#endif
      for (int64_t j = 0; j < QNR; j++)
        for (int64_t i = 0; i < 4; i++) {
          int64_t k = kq * 4 + i, col = p0 + j;
          o[j * 4 + i] = k < K && col < nc ? (uint8_t)(src[k * lds + col] ^ flip) : pad;
        }
    }
  }
}

/* ---- the call ------------------------------------------------------------ */

typedef struct {
  /* geometry (2-D; 1-D has H = KH = 1) */
  int64_t N, C, H, W, M, group, Cg, Mg, KH, KW, OH, OW, sh, sw, dh, dw, pt, pl, K, Kq;
  int depthwise, one_by_one;
  int dwl; /* depthwise with the channels in the vector lanes (dwl_task) */
  int tm;  /* tap_major k order */
  /* d4: the in-place path (VNNI, Cg a multiple of 4, more than one tap
   * (tap-major; 1x1 kernels read x with less work through pack_b or the
   * direct packing: measured), symmetric weights): B read in place from the image group
   * as x' interleaved by 4 channels and split into sh x sw phases, [sh *
   * sw][Cg/4][Hg][Wg][4] with padded pixel (r, c) at phase (r % sh, c % sw), position (r
   * / sh, c / sw) and zx' around, so that each tap reads one phase at a fixed offset; the
   * outputs are computed on the phase grid (column j = oh * Wg + ow; ow >= OW computed
   * and dropped); tasks of d4_rows output rows. d4_ok: the geometry allows it (scratch
   * sizing). */
  int d4, d4_ok;
  /* by_image: 1x1 pixel images (a Gemm as a 1x1 QLinearConv, passes/
   * qdq_fuse.c) take the images as the GEMM's columns, x [N][K] -> y
   * [N][M], tasks of nc images */
  int by_image;
  int64_t d4_rows, Hg, Wg;
  int direct; /* pack B straight from a zero-point-padded copy of the image */
  int64_t Hp, Wp;
  const uint8_t *x;
  uint8_t flip;     /* 0x80 for s8 x */
  int32_t zx;       /* x's zero point as read (x' for the GEMM: zx ^ flip) */
  const void *wraw; /* depthwise: w as given */
  int w_u8;
  const int8_t *pa; /* packed weights */
  const int32_t *rowsum;
  const double *sc, *c0, *zw; /* per m: scale, constant term, zw' */
  int need_colsum;
  /* i32: every t = acc + c0 the call can produce has |t| and |t sc| below
   * 2^30 (and no colsum): the AVX-512 requantization adds c0 and clamps in
   * int32 (rq16_i32) */
  int i32;
  int32_t zy, lo, hi;
  uint8_t *y;
  int64_t nc; /* columns per task */
  int64_t n_chunks;
  uint8_t *slots;
  size_t slot_bytes;
  quk_fn uk;
} qc_t;

/* Requantizes n values acc[j] (+ c0 - zw * colsum[j]) into y[j]. */
static void requant_row(const qc_t *q, const int32_t *acc, const int32_t *colsum,
                        double sc, double c0, double zw, int64_t n, uint8_t *y) {
  for (int64_t j = 0; j < n; j++) {
    double t = (double)acc[j] + c0;
    if (colsum) t -= zw * (double)colsum[j];
    double v = rint(t * sc) + (double)q->zy;
    if (!(v >= q->lo)) v = q->lo;
    if (v > q->hi) v = q->hi;
    y[j] = (uint8_t)(int8_t)(int32_t)v;
  }
}

#if DML_CPU_X86
/* 16 values t = acc + c0 (int32, exact where qc_t's i32 holds) requantized
 * as the reference: rint of the double product t * sc (sc0: lanes 0-7, sc1:
 * 8-15; round half to even in the conversion), + zy and the clamp to [lo,
 * hi] in int32 (exact: |t sc| < 2^30), as bytes. Per 16 values 6 double
 * operations instead of the 10 of the double clamp. */
__attribute__((always_inline, target("avx512f,avx512bw,avx512vl"))) static inline __m128i
rq16_i32(__m512i t, __m512d sc0, __m512d sc1, __m512i vzy, __m512i vlo, __m512i vhi) {
  __m512d d0 = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(t)), sc0);
  __m512d d1 = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(t, 1)), sc1);
  __m512i r = _mm512_inserti64x4(
      _mm512_castsi256_si512(
          _mm512_cvt_roundpd_epi32(d0, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)),
      _mm512_cvt_roundpd_epi32(d1, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), 1);
  r = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(r, vzy), vlo), vhi);
  __m128i b = _mm512_cvtepi32_epi8(r);
  __asm__("" : "+v"(b)); /* see requant_row512 */
  return b;
}

__attribute__((target("avx512f,avx512bw,avx512vl"))) static void requant_row512(
    const qc_t *q, const int32_t *acc, const int32_t *colsum, double sc, double c0,
    double zw, int64_t n, uint8_t *y) {
  __m512d vsc = _mm512_set1_pd(sc), vc0 = _mm512_set1_pd(c0), vzw = _mm512_set1_pd(zw);
  /* rint then + zy then the clamp to [lo, hi] = the clamp to the integers
   * [lo - zy, hi - zy], rint (in the conversion), + zy (rint is monotone and
   * keeps integers) */
  __m512d vlo = _mm512_set1_pd((double)q->lo - q->zy),
          vhi = _mm512_set1_pd((double)q->hi - q->zy);
  __m512i vzy = _mm512_set1_epi32(q->zy);
  int64_t j = 0;
  if (q->i32 && !colsum) {
    const __m512i vc0 = _mm512_set1_epi32((int32_t)c0), vl = _mm512_set1_epi32(q->lo),
                  vh = _mm512_set1_epi32(q->hi);
    for (; j < n; j += 16) {
      int64_t m = n - j < 16 ? n - j : 16;
      __mmask16 mk = (__mmask16)((1u << m) - 1);
      __m512i a = _mm512_add_epi32(_mm512_maskz_loadu_epi32(mk, acc + j), vc0);
      __m128i b = rq16_i32(a, vsc, vsc, vzy, vl, vh);
      if (m < 16) {
        _mm_mask_storeu_epi8(y + j, mk, b);
        break;
      }
      _mm_storeu_si128((__m128i *)(y + j), b);
    }
    return;
  }
  for (; j < n; j += 16) {
    int64_t m = n - j < 16 ? n - j : 16;
    __mmask16 mk = (__mmask16)((1u << m) - 1);
    __m512i a = _mm512_maskz_loadu_epi32(mk, acc + j);
    __m512d t0 = _mm512_add_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(a)), vc0);
    __m512d t1 = _mm512_add_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(a, 1)), vc0);
    if (colsum) {
      __m512i s = _mm512_maskz_loadu_epi32(mk, colsum + j);
      t0 = _mm512_sub_pd(
          t0, _mm512_mul_pd(vzw, _mm512_cvtepi32_pd(_mm512_castsi512_si256(s))));
      t1 = _mm512_sub_pd(
          t1, _mm512_mul_pd(vzw, _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(s, 1))));
    }
    t0 = _mm512_min_pd(_mm512_max_pd(_mm512_mul_pd(t0, vsc), vlo), vhi);
    t1 = _mm512_min_pd(_mm512_max_pd(_mm512_mul_pd(t1, vsc), vlo), vhi);
    __m512i r = _mm512_inserti64x4(
        _mm512_castsi256_si512(
            _mm512_cvt_roundpd_epi32(t0, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)),
        _mm512_cvt_roundpd_epi32(t1, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), 1);
    __m128i b = _mm512_cvtepi32_epi8(_mm512_add_epi32(r, vzy));
    /* kept in a register: the compiler would store with vpmovdb to memory,
     * microcoded on AMD Zen 4 (a third of this function's time there) */
    __asm__("" : "+v"(b));
    if (m < 16) {
      _mm_mask_storeu_epi8(y + j, mk, b);
      break;
    }
    _mm_storeu_si128((__m128i *)(y + j), b);
  }
}
#endif

typedef void (*requant_fn)(const qc_t *, const int32_t *, const int32_t *, double, double,
                           double, int64_t, uint8_t *);

static requant_fn requant(void) {
#if DML_CPU_X86
  static int have = -1;
  if (have < 0) {
    __builtin_cpu_init();
    have = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl");
  }
  if (have && g_quk_id == 3) return requant_row512; /* the VNNI path's epilogue */
#endif
  return requant_row;
}

/* The depthwise kernel's padded plane: every tap of every output inside. */
static int64_t dw_hp(const qc_t *q) {
  return DML_CPU_MAX(q->H + q->pt, (q->OH - 1) * q->sh + (q->KH - 1) * q->dh + 1);
}
static int64_t dw_wp(const qc_t *q) {
  return DML_CPU_MAX(q->W + q->pl, (q->OW - 1) * q->sw + (q->KW - 1) * q->dw + 1);
}

/* im2col of columns [n0, n0 + nc) of image n, group g, k-major, into dst
 * (K rows of nc); taps outside the image read zx. */
static void im2col(const qc_t *q, int64_t n, int64_t g, int64_t n0, int64_t nc,
                   uint8_t *dst) {
  const uint8_t *xg = q->x + (n * q->C + g * q->Cg) * q->H * q->W;
  const int zx = (int)(uint8_t)q->zx;
  const int64_t oh0 = n0 / q->OW, ow0 = n0 % q->OW;
  for (int64_t c = 0; c < q->Cg; c++)
    for (int64_t kh = 0; kh < q->KH; kh++)
      for (int64_t kw = 0; kw < q->KW; kw++) {
        uint8_t *o =
            dst +
            (q->tm ? (kh * q->KW + kw) * q->Cg + c : (c * q->KH + kh) * q->KW + kw) * nc;
        const uint8_t *xc = xg + c * q->H * q->W;
        const int64_t off = kw * q->dw - q->pl;
        /* ow with 0 <= ow * sw + off < W: [va, vb) */
        int64_t va = off >= 0 ? 0 : (-off + q->sw - 1) / q->sw;
        int64_t vb = q->W - off <= 0 ? 0 : (q->W - off + q->sw - 1) / q->sw;
        if (vb > q->OW) vb = q->OW;
        if (vb < va) vb = va;
        int64_t p = 0, oh = oh0, ow = ow0;
        while (p < nc) {
          int64_t run = DML_CPU_MIN(q->OW - ow, nc - p);
          int64_t ih = oh * q->sh - q->pt + kh * q->dh;
          uint8_t *od = o + p;
          if (ih < 0 || ih >= q->H) {
            memset(od, zx, (size_t)run);
          } else {
            const uint8_t *row = xc + ih * q->W + off;
            int64_t a = DML_CPU_MAX(ow, va), b = DML_CPU_MIN(ow + run, vb);
            if (b < a) b = a;
            if (a > ow) memset(od, zx, (size_t)DML_CPU_MIN(a - ow, run));
            if (q->sw == 1) {
              if (b > a) memcpy(od + (a - ow), row + a, (size_t)(b - a));
            } else {
              for (int64_t j = a; j < b; j++) od[j - ow] = row[j * q->sw];
            }
            if (ow + run > b && b >= a) memset(od + (b - ow), zx, (size_t)(ow + run - b));
          }
          p += run;
          ow += run;
          if (ow == q->OW) ow = 0, oh++;
        }
      }
}

#if DML_CPU_X86
/* 16 bytes of padded row `r` for the panel's pixels: mode 1, one output row
 * (stride 1: 16 contiguous bytes; 2: the even ones of 32); mode 2, two rows
 * of 8. */
static inline __m128i load16(const uint8_t *r, const int32_t *off, int mode, int64_t sw) {
  if (mode == 1) {
    if (sw == 1) return _mm_loadu_si128((const __m128i *)(r + off[0]));
    __m128i lo = _mm_loadu_si128((const __m128i *)(r + off[0]));
    __m128i hi = _mm_loadu_si128((const __m128i *)(r + off[0] + 16));
    __m128i mk = _mm_set1_epi16(0xff);
    return _mm_packus_epi16(_mm_and_si128(lo, mk), _mm_and_si128(hi, mk));
  }
  if (sw == 1)
    return _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)(r + off[0])),
                              _mm_loadl_epi64((const __m128i *)(r + off[8])));
  __m128i mk = _mm_set1_epi16(0xff);
  __m128i a = _mm_and_si128(_mm_loadu_si128((const __m128i *)(r + off[0])), mk);
  __m128i b = _mm_and_si128(_mm_loadu_si128((const __m128i *)(r + off[8])), mk);
  return _mm_packus_epi16(a, b);
}

/* B panels of columns [n0, n0 + nc) straight from the padded image xp (Cg
 * planes of Hp x Wp, zx around): k = (c, kh, kw) reads xp at base[k] +
 * off[pixel]. */
static void pack_direct(const qc_t *q, const uint8_t *xp, const int32_t *base, int64_t n0,
                        int64_t nc, uint8_t *dst) {
  const uint8_t flip = q->flip, zxp = (uint8_t)((uint8_t)q->zx ^ flip);
  const __m128i f = _mm_set1_epi8((char)flip), zv = _mm_set1_epi8((char)zxp);
  int32_t off[QNR];
  int64_t oh[QNR];
  for (int64_t p0 = 0; p0 < nc; p0 += QNR) {
    uint8_t *pd = dst + (p0 / QNR) * q->Kq * QNR * 4;
    int valid = 1;
    for (int j = 0; j < QNR; j++) {
      int64_t p = n0 + p0 + j;
      if (p0 + j >= nc) {
        valid = 0;
        off[j] = 0, oh[j] = -1;
        continue;
      }
      oh[j] = p / q->OW;
      off[j] = (int32_t)(oh[j] * q->sh * q->Wp + (p % q->OW) * q->sw);
    }
    int mode = 0;
    if (valid && oh[0] == oh[QNR - 1])
      mode = 1;
    else if (valid && oh[0] == oh[7] && oh[8] == oh[15] && off[7] - off[0] == 7 * q->sw &&
             off[15] - off[8] == 7 * q->sw)
      mode = 2;
    /* Else up to 4 runs of pixels in one output row each: lane j of run s
     * reads r[src[s] + j * sw] (a window load at src[s], which may start up
     * to 30 bytes before the plane: the slot has slack there), blended by
     * masks; pixels past nc read zx'. */
    int nseg = 0;
    int32_t src[4];
    __m128i msk[4], minv = _mm_setzero_si128();
    if (!mode) {
      uint8_t mb[QNR];
      for (int j = 0; j < QNR; j++) mb[j] = oh[j] < 0 ? 0xff : 0;
      minv = _mm_loadu_si128((const __m128i *)mb);
      for (int j = 0; j < QNR && oh[j] >= 0 && nseg <= 4;) {
        int e = j + 1;
        while (e < QNR && oh[e] == oh[j]) e++;
        if (nseg < 4) {
          for (int i = 0; i < QNR; i++) mb[i] = i >= j && i < e ? 0xff : 0;
          msk[nseg] = _mm_loadu_si128((const __m128i *)mb);
          src[nseg] = off[j] - j * (int32_t)q->sw;
        }
        nseg++;
        j = e;
      }
      if (nseg <= 4) mode = 3;
    }
    for (int64_t kq = 0; kq < q->Kq; kq++) {
      uint8_t *o = pd + kq * QNR * 4;
      __m128i v[4];
      for (int i = 0; i < 4; i++) {
        int64_t k = kq * 4 + i;
        if (k >= q->K) {
          v[i] = zv;
        } else if (mode == 3) {
          __m128i a = _mm_and_si128(zv, minv);
          for (int sg = 0; sg < nseg; sg++) {
            __m128i w = _mm_xor_si128(load16(xp + base[k], &src[sg], 1, q->sw), f);
            a = _mm_or_si128(a, _mm_and_si128(w, msk[sg]));
          }
          v[i] = a;
        } else if (mode) {
          v[i] = _mm_xor_si128(load16(xp + base[k], off, mode, q->sw), f);
        } else {
          uint8_t b[QNR];
          for (int j = 0; j < QNR; j++)
            b[j] = oh[j] < 0 ? zxp : (uint8_t)(xp[base[k] + off[j]] ^ flip);
          v[i] = _mm_loadu_si128((const __m128i *)b);
        }
      }
      __m128i ab0 = _mm_unpacklo_epi8(v[0], v[1]), ab1 = _mm_unpackhi_epi8(v[0], v[1]);
      __m128i cd0 = _mm_unpacklo_epi8(v[2], v[3]), cd1 = _mm_unpackhi_epi8(v[2], v[3]);
      _mm_storeu_si128((__m128i *)o, _mm_unpacklo_epi16(ab0, cd0));
      _mm_storeu_si128((__m128i *)(o + 16), _mm_unpackhi_epi16(ab0, cd0));
      _mm_storeu_si128((__m128i *)(o + 32), _mm_unpacklo_epi16(ab1, cd1));
      _mm_storeu_si128((__m128i *)(o + 48), _mm_unpackhi_epi16(ab1, cd1));
    }
  }
}
#endif

/* The by_image task: images [n0, n0 + nc) as columns. */
static void image_task(void *ctx, int64_t t, int tid) {
  const qc_t *q = (const qc_t *)ctx;
  const int64_t K = q->K, Kq = q->Kq, n0 = t * q->nc, nc = DML_CPU_MIN(q->nc, q->N - n0);
  uint8_t *pb = q->slots + (size_t)tid * q->slot_bytes;
  int32_t *colsum = (int32_t *)(void *)(pb + Kq * 4 * q->nc);
  int32_t *acc = colsum + q->nc;
  uint8_t *yt = (uint8_t *)(acc + 2 * QMR * QNR);
  const uint8_t zxp = (uint8_t)((uint8_t)q->zx ^ q->flip);
  for (int64_t j = 0; j < rup(nc, QNR); j++) { /* column j: image n0 + j's K bytes */
    uint8_t *o = pb + (j / QNR) * Kq * QNR * 4 + (j % QNR) * 4;
    const uint8_t *xr = q->x + (n0 + j) * K;
    int32_t sum = 0;
    for (int64_t k = 0; k < Kq * 4; k++) {
      uint8_t v = j < nc && k < K ? (uint8_t)(xr[k] ^ q->flip) : zxp;
      o[(k / 4) * QNR * 4 + k % 4] = v;
      if (k < K) sum += v;
    }
    if (j < nc) colsum[j] = sum;
  }
  requant_fn rq = requant();
  for (int64_t j0 = 0; j0 < nc; j0 += 2 * QNR) {
    const uint8_t *b0 = pb + (j0 / QNR) * Kq * QNR * 4;
    const uint8_t *b1 = j0 + QNR < nc ? b0 + Kq * QNR * 4 : b0;
    int64_t w = DML_CPU_MIN(2 * QNR, nc - j0);
    for (int64_t m0 = 0; m0 < q->M; m0 += QMR) {
      q->uk(Kq, q->pa + m0 * Kq * 4, b0, b1, acc);
      for (int64_t r = 0; r < QMR && m0 + r < q->M; r++) {
        int64_t m = m0 + r;
        rq(q, acc + r * 2 * QNR, q->need_colsum ? colsum + j0 : NULL, q->sc[m], q->c0[m],
           q->zw[m], w, yt);
        for (int64_t jj = 0; jj < w; jj++) q->y[(n0 + j0 + jj) * q->M + m] = yt[jj];
      }
    }
  }
}

static void gemm_task(void *ctx, int64_t t, int tid) {
  const qc_t *q = (const qc_t *)ctx;
  int64_t chunk = t % q->n_chunks, ng = t / q->n_chunks;
  int64_t g = ng % q->group, n = ng / q->group;
  int64_t P = q->OH * q->OW, n0 = chunk * q->nc, nc = DML_CPU_MIN(q->nc, P - n0);
  uint8_t *slot = q->slots + (size_t)tid * q->slot_bytes;
  uint8_t *pb = slot;
  int32_t *colsum = (int32_t *)(void *)(pb + q->Kq * 4 * q->nc);
  int32_t *acc = colsum + q->nc;
  uint8_t *tmp = (uint8_t *)(acc + 2 * QMR * QNR);
  const uint8_t *src;
  int64_t lds;
  uint8_t zxp = (uint8_t)((uint8_t)q->zx ^ q->flip);
#if DML_CPU_X86
  if (q->direct) {
    /* the image group zero-point padded, then the panels from it */
    tmp += 64; /* slack before the plane for mode 3's window loads */
    int32_t *base = (int32_t *)(void *)(tmp + rup(q->Cg * q->Hp * q->Wp, 64) + 64);
    const uint8_t *xg = q->x + (n * q->C + g * q->Cg) * q->H * q->W;
    memset(tmp, (int)(uint8_t)q->zx, (size_t)(q->Cg * q->Hp * q->Wp));
    for (int64_t c = 0; c < q->Cg; c++)
      for (int64_t h = 0; h < q->H; h++)
        memcpy(tmp + (c * q->Hp + h + q->pt) * q->Wp + q->pl, xg + (c * q->H + h) * q->W,
               (size_t)q->W);
    for (int64_t c = 0; c < q->Cg; c++)
      for (int64_t kh = 0; kh < q->KH; kh++)
        for (int64_t kw = 0; kw < q->KW; kw++)
          base[q->tm ? (kh * q->KW + kw) * q->Cg + c : (c * q->KH + kh) * q->KW + kw] =
              (int32_t)((c * q->Hp + kh * q->dh) * q->Wp + kw * q->dw);
    pack_direct(q, tmp, base, n0, nc, pb);
    if (q->need_colsum) /* over the packed k < K */
      for (int64_t j = 0; j < nc; j++) {
        const uint8_t *pp = pb + (j / QNR) * q->Kq * QNR * 4 + (j % QNR) * 4;
        int32_t s = 0;
        for (int64_t kk = 0; kk < q->K; kk++) s += pp[(kk / 4) * QNR * 4 + kk % 4];
        colsum[j] = s;
      }
  } else
#endif
  {
    if (q->one_by_one) {
      src = q->x + (n * q->C + g * q->Cg) * P + n0;
      lds = P;
    } else {
      im2col(q, n, g, n0, nc, tmp);
      src = tmp;
      lds = nc;
    }
    pack_b(src, lds, q->K, nc, q->flip, zxp, pb);
    if (q->need_colsum)
      for (int64_t j = 0; j < nc; j++) {
        int32_t s = 0;
        for (int64_t k = 0; k < q->K; k++) s += (uint8_t)(src[k * lds + j] ^ q->flip);
        colsum[j] = s;
      }
  }
  requant_fn rq = requant();
  int64_t Mp = rup(q->Mg, QMR);
  const int8_t *ag = q->pa + g * Mp * q->Kq * 4;
  for (int64_t j0 = 0; j0 < nc; j0 += 2 * QNR) {
    const uint8_t *b0 = pb + (j0 / QNR) * q->Kq * QNR * 4;
    const uint8_t *b1 = j0 + QNR < nc ? b0 + q->Kq * QNR * 4 : b0;
    int64_t w = DML_CPU_MIN(2 * QNR, nc - j0);
    for (int64_t m0 = 0; m0 < q->Mg; m0 += QMR) {
      q->uk(q->Kq, ag + m0 * q->Kq * 4, b0, b1, acc);
      for (int64_t r = 0; r < QMR && m0 + r < q->Mg; r++) {
        int64_t m = g * q->Mg + m0 + r;
        rq(q, acc + r * 2 * QNR, q->need_colsum ? colsum + j0 : NULL, q->sc[m], q->c0[m],
           q->zw[m], w, q->y + (n * q->M + m) * P + n0 + j0);
      }
    }
  }
}

#if DML_CPU_X86
/* The in-place path's task: (image, group, rows [oh0, oh1)). */
__attribute__((target("avx512f,avx512bw"))) static void d4_task(void *ctx, int64_t t,
                                                                int tid) {
  const qc_t *q = (const qc_t *)ctx;
  int64_t chunk = t % q->n_chunks, ng = t / q->n_chunks;
  int64_t g = ng % q->group, n = ng / q->group;
  const int64_t Wp = q->Wp, Wg = q->Wg, HWg = q->Hg * Wg, Cq = q->Cg / 4;
  const int64_t sh = q->sh, sw = q->sw;
  int64_t oh0 = chunk * q->d4_rows, oh1 = DML_CPU_MIN(q->OH, oh0 + q->d4_rows);
  uint8_t *slot = q->slots + (size_t)tid * q->slot_bytes;
  int32_t *acc = (int32_t *)(void *)slot;
  int32_t *off = acc + 2 * QMR * QNR;
  uint8_t *yt = (uint8_t *)(off + rup(q->Kq, 16));
  uint8_t *row = yt + 64; /* a padded row's quads before the phase split */
  uint8_t *xp = row + rup(Wp * 4, 64);
  /* padded rows [oh0 sh, (oh1 - 1) sh + (KH - 1) dh] are read */
  const int64_t r0 = oh0 * sh, r1 = (oh1 - 1) * sh + (q->KH - 1) * q->dh + 1;
  const uint8_t zxp = (uint8_t)((uint8_t)q->zx ^ q->flip);
  const __m128i f = _mm_set1_epi8((char)q->flip);
  const uint8_t *xg = q->x + (n * q->C + g * q->Cg) * q->H * q->W;
  /* the phases some tap reads (a 3x3 kernel of dilation 2 and stride 2
   * reads one of 4) */
  uint32_t need_r = 0, need_c = 0;
  for (int64_t kh = 0; kh < q->KH; kh++) need_r |= 1u << ((kh * q->dh) % sh);
  for (int64_t kw = 0; kw < q->KW; kw++) need_c |= 1u << ((kw * q->dw) % sw);
  for (int64_t cq = 0; cq < Cq; cq++) {
    for (int64_t r = r0; r < r1; r++) {
      if (!(need_r >> (r % sh) & 1)) continue;
      /* stride 1 in width: the row's quads straight into its plane */
      uint8_t *o = sw == 1 ? xp + (((r % sh) * Cq + cq) * HWg + (r / sh) * Wg) * 4 : row;
      int64_t h = r - q->pt;
      if (h < 0 || h >= q->H) {
        memset(o, zxp, (size_t)(Wp * 4));
      } else {
        memset(o, zxp, (size_t)(q->pl * 4));
        memset(o + (q->pl + q->W) * 4, zxp, (size_t)((Wp - q->pl - q->W) * 4));
        const uint8_t *s0 = xg + (4 * cq * q->H + h) * q->W, *s1 = s0 + q->H * q->W,
                      *s2 = s1 + q->H * q->W, *s3 = s2 + q->H * q->W;
        o += q->pl * 4;
        int64_t w = 0;
        for (; w + 16 <= q->W; w += 16) {
          __m128i a = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(s0 + w)), f);
          __m128i b = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(s1 + w)), f);
          __m128i cc = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(s2 + w)), f);
          __m128i dd = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(s3 + w)), f);
          __m128i ab0 = _mm_unpacklo_epi8(a, b), ab1 = _mm_unpackhi_epi8(a, b);
          __m128i cd0 = _mm_unpacklo_epi8(cc, dd), cd1 = _mm_unpackhi_epi8(cc, dd);
          _mm_storeu_si128((__m128i *)(o + w * 4), _mm_unpacklo_epi16(ab0, cd0));
          _mm_storeu_si128((__m128i *)(o + w * 4 + 16), _mm_unpackhi_epi16(ab0, cd0));
          _mm_storeu_si128((__m128i *)(o + w * 4 + 32), _mm_unpacklo_epi16(ab1, cd1));
          _mm_storeu_si128((__m128i *)(o + w * 4 + 48), _mm_unpackhi_epi16(ab1, cd1));
        }
        for (; w < q->W; w++) {
          o[w * 4] = s0[w] ^ q->flip, o[w * 4 + 1] = s1[w] ^ q->flip;
          o[w * 4 + 2] = s2[w] ^ q->flip, o[w * 4 + 3] = s3[w] ^ q->flip;
        }
      }
      if (sw > 1) /* the row's quads to their phases */
        for (int64_t pw = 0; pw < sw; pw++) {
          if (!(need_c >> pw & 1)) continue;
          uint8_t *d =
              xp + (((r % sh) * sw + pw) * Cq + cq) * HWg * 4 + (r / sh) * Wg * 4;
          int64_t c = pw, i = 0;
          if (sw == 2) { /* 16 quads of every other one from 32 */
            const __m512i ix =
                _mm512_add_epi32(_mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20,
                                                   22, 24, 26, 28, 30),
                                 _mm512_set1_epi32((int)pw));
            for (; c + 32 <= Wp; c += 32, i += 16) {
              __m512i a = _mm512_loadu_si512((const void *)(row + (c - pw) * 4));
              __m512i b = _mm512_loadu_si512((const void *)(row + (c - pw) * 4 + 64));
              _mm512_storeu_si512((void *)(d + i * 4),
                                  _mm512_permutex2var_epi32(a, ix, b));
            }
          }
          for (; c < Wp; c += sw, i++) memcpy(d + i * 4, row + c * 4, 4);
        }
    }
  }
  /* k quad (tap, cq) reads column j at xp + off[kq] + 4 j */
  for (int64_t kh = 0; kh < q->KH; kh++)
    for (int64_t kw = 0; kw < q->KW; kw++)
      for (int64_t cq = 0; cq < Cq; cq++) {
        int64_t ph = ((kh * q->dh) % sh) * sw + (kw * q->dw) % sw;
        off[(kh * q->KW + kw) * Cq + cq] =
            (int32_t)(((ph * Cq + cq) * HWg + (kh * q->dh) / sh * Wg +
                       (kw * q->dw) / sw) *
                      4);
      }
  requant_fn rq = requant();
  const int64_t Mp = rup(q->Mg, QMR), P = q->OH * q->OW;
  const int8_t *ag = q->pa + g * Mp * q->Kq * 4;
  const int64_t j1 = (oh1 - 1) * Wg + q->OW; /* past the last valid column */
  for (int64_t j0 = oh0 * Wg; j0 < j1; j0 += 2 * QNR) {
    int64_t w = DML_CPU_MIN(2 * QNR, j1 - j0);
    for (int64_t m0 = 0; m0 < q->Mg; m0 += QMR) {
      uk_vnni_d4(q->Kq, ag + m0 * q->Kq * 4, xp + j0 * 4, off, acc);
      for (int64_t r = 0; r < QMR && m0 + r < q->Mg; r++) {
        int64_t m = g * q->Mg + m0 + r;
        rq(q, acc + r * 2 * QNR, NULL, q->sc[m], q->c0[m], 0, w, yt);
        uint8_t *ym = q->y + (n * q->M + m) * P;
        /* the valid columns' runs: ow < OW of each row */
        for (int64_t jj = 0; jj < w;) {
          int64_t j = j0 + jj, oh = j / Wg, ow = j % Wg;
          int64_t run = DML_CPU_MIN(w - jj, Wg - ow);
          if (ow < q->OW)
            memcpy(ym + oh * q->OW + ow, yt + jj, (size_t)DML_CPU_MIN(run, q->OW - ow));
          jj += run;
        }
      }
    }
  }
}
#endif

/* acc[oh, ow] = sum over taps of xp[oh * sh + kh * dh, ow * sw + kw * dw] *
 * wk[kh, kw] (the compiler vectorizes the rows; cloned per ISA). */
DML_CPU_CLONES
static void dw_acc(const int16_t *restrict xp, int64_t Wp, const int32_t *restrict wk,
                   int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh, int64_t sw,
                   int64_t dh, int64_t dw, int32_t *restrict acc) {
  for (int64_t oh = 0; oh < OH; oh++) {
    int32_t *restrict a = acc + oh * OW;
    for (int64_t j = 0; j < OW; j++) a[j] = 0;
    for (int64_t kh = 0; kh < KH; kh++) {
      const int16_t *row = xp + (oh * sh + kh * dh) * Wp;
      for (int64_t kw = 0; kw < KW; kw++) {
        const int32_t wv = wk[kh * KW + kw];
        const int16_t *restrict r = row + kw * dw;
        if (sw == 1)
          for (int64_t j = 0; j < OW; j++) a[j] += (int32_t)r[j] * wv;
        else if (sw == 2)
          for (int64_t j = 0; j < OW; j++) a[j] += (int32_t)r[2 * j] * wv;
        else
          for (int64_t j = 0; j < OW; j++) a[j] += (int32_t)r[j * sw] * wv;
      }
    }
  }
}

#if DML_CPU_X86
/* dw_acc for strides 1 and 2 with AVX-512: 16 outputs of a row in one
 * register over all taps (masked at the row's end). */
__attribute__((target("avx512f,avx512bw,avx512vl"))) static void dw_acc512(
    const int16_t *xp, int64_t Wp, const int32_t *wk, int64_t OH, int64_t OW, int64_t KH,
    int64_t KW, int64_t sh, int64_t sw, int64_t dh, int64_t dw, int32_t *acc) {
  for (int64_t oh = 0; oh < OH; oh++)
    for (int64_t j0 = 0; j0 < OW; j0 += 16) {
      int64_t rem = OW - j0 < 16 ? OW - j0 : 16;
      __mmask16 m16 = (__mmask16)((1u << rem) - 1);
      __mmask32 m32 = (__mmask32)(rem == 16 ? 0xffffffffu : (1u << (2 * rem)) - 1);
      __m512i a = _mm512_setzero_si512();
      for (int64_t kh = 0; kh < KH; kh++) {
        const int16_t *row = xp + (oh * sh + kh * dh) * Wp + j0 * sw;
        for (int64_t kw = 0; kw < KW; kw++) {
          const int16_t *r = row + kw * dw;
          __m512i x;
          if (sw == 1) {
            x = _mm512_cvtepi16_epi32(_mm256_maskz_loadu_epi16(m16, r));
          } else {
            __m512i v = _mm512_maskz_loadu_epi16(m32, r);
            x = _mm512_srai_epi32(_mm512_slli_epi32(v, 16), 16); /* even elements */
          }
          /* vpmulld then add: vpdpwssd and vpmaddwd measured slower here
           * (mobilenet_tiny's depthwise layers, loaded machine) */
          a = _mm512_add_epi32(
              a, _mm512_mullo_epi32(x, _mm512_set1_epi32(wk[kh * KW + kw])));
        }
      }
      _mm512_mask_storeu_epi32(acc + oh * OW + j0, m16, a);
    }
}

/* Stride 1 on the padded plane's grid: acc[j], j = oh * Wp + ow, over all
 * J = (OH - 1) * Wp + OW columns in vectors of 16 (ow >= OW computed and
 * dropped), then the rows moved together (acc holds OH * Wp values). Fewer
 * vectors than dw_acc512's rows where OW is not a multiple of 16 (8x8
 * planes: 5 against 8). */
__attribute__((target("avx512f,avx512bw,avx512vl"))) static void dw_grid512(
    const int16_t *xp, int64_t Wp, const int32_t *wk, int64_t OH, int64_t OW, int64_t KH,
    int64_t KW, int64_t dh, int64_t dw, int32_t *acc) {
  const int64_t J = (OH - 1) * Wp + OW;
  for (int64_t j0 = 0; j0 < J; j0 += 16) {
    int64_t rem = J - j0 < 16 ? J - j0 : 16;
    __mmask16 m16 = (__mmask16)((1u << rem) - 1);
    __m512i a = _mm512_setzero_si512();
    for (int64_t kh = 0; kh < KH; kh++)
      for (int64_t kw = 0; kw < KW; kw++) {
        __m512i x = _mm512_cvtepi16_epi32(
            _mm256_maskz_loadu_epi16(m16, xp + j0 + kh * dh * Wp + kw * dw));
        a = _mm512_add_epi32(a,
                             _mm512_mullo_epi32(x, _mm512_set1_epi32(wk[kh * KW + kw])));
      }
    _mm512_mask_storeu_epi32(acc + j0, m16, a);
  }
  for (int64_t oh = 1; oh < OH; oh++)
    memmove(acc + oh * OW, acc + oh * Wp, (size_t)OW * sizeof(int32_t));
}
#endif

#if DML_CPU_X86
/* The depthwise plane's rows: o[h * Wp + j] = (x[h][j] ^ flip) - zx, 32 at
 * a time (masked at the row's end). */
__attribute__((target("avx512f,avx512bw,avx512vl"))) static void dw_plane512(
    const uint8_t *x, int64_t H, int64_t W, uint8_t flip, int32_t zx, int16_t *o,
    int64_t Wp) {
  const __m256i f = _mm256_set1_epi8((char)flip);
  const __m512i z = _mm512_set1_epi16((short)zx);
  for (int64_t h = 0; h < H; h++)
    for (int64_t j = 0; j < W; j += 32) {
      int64_t rem = W - j < 32 ? W - j : 32;
      __mmask32 m = (__mmask32)(rem == 32 ? 0xffffffffu : (1u << rem) - 1);
      __m256i v = _mm256_xor_si256(_mm256_maskz_loadu_epi8(m, x + h * W + j), f);
      _mm512_mask_storeu_epi16(o + h * Wp + j, m,
                               _mm512_sub_epi16(_mm512_cvtepu8_epi16(v), z));
    }
}
#endif

/* The depthwise accumulators' length: the grid of dw_grid512 (OH * Wp)
 * covers the OH * OW outputs. */
static int64_t dw_acc_len(const qc_t *q) {
  return rup(q->OH * dw_wp(q), 16);
}

/* Depthwise: the channel's plane as int16 (x - zx) with the padding 0 (it
 * reads zx), then per output row and tap a contiguous (stride 1) or strided
 * multiply-add into int32 accumulators over the whole plane, requantized
 * at once. */
static void dw_task(void *ctx, int64_t t, int tid) {
  const qc_t *q = (const qc_t *)ctx;
  int64_t m = t % q->M, n = t / q->M;
  const int64_t OH = q->OH, OW = q->OW, KH = q->KH, KW = q->KW, sw = q->sw;
  const int64_t Hp = dw_hp(q), Wp = dw_wp(q);
  int32_t *restrict acc = (int32_t *)(void *)(q->slots + (size_t)tid * q->slot_bytes);
  int16_t *restrict xp = (int16_t *)(void *)(acc + dw_acc_len(q));
  const uint8_t *xc = q->x + (n * q->C + m) * q->H * q->W;
  const int32_t zx = (int32_t)(uint8_t)((uint8_t)q->zx ^ q->flip);
  const uint8_t flip = q->flip;
  memset(xp, 0, (size_t)(Hp * Wp) * sizeof(int16_t));
#if DML_CPU_X86
  if (g_quk_id == 3)
    dw_plane512(xc, q->H, q->W, flip, zx, xp + q->pt * Wp + q->pl, Wp);
  else
#endif
    for (int64_t h = 0; h < q->H; h++) {
      const uint8_t *r = xc + h * q->W;
      int16_t *o = xp + (h + q->pt) * Wp + q->pl;
      for (int64_t j = 0; j < q->W; j++)
        o[j] = (int16_t)((int32_t)(uint8_t)(r[j] ^ flip) - zx);
    }
  int32_t wk[64];
  int64_t taps = KH * KW;
  for (int64_t i = 0; i < taps; i++) {
    int32_t wv = q->w_u8 ? (int32_t)((const uint8_t *)q->wraw)[m * taps + i] - 128
                         : (int32_t)((const int8_t *)q->wraw)[m * taps + i];
    wk[i] = wv - (int32_t)q->zw[m];
  }
#if DML_CPU_X86
  if (g_quk_id == 3 && sw == 1 && q->sh == 1 &&
      ((OH - 1) * Wp + OW + 15) / 16 < OH * ((OW + 15) / 16))
    dw_grid512(xp, Wp, wk, OH, OW, KH, KW, q->dh, q->dw, acc);
  else if (g_quk_id == 3 && (sw == 1 || sw == 2))
    dw_acc512(xp, Wp, wk, OH, OW, KH, KW, q->sh, sw, q->dh, q->dw, acc);
  else
#endif
    dw_acc(xp, Wp, wk, OH, OW, KH, KW, q->sh, sw, q->dh, q->dw, acc);
  requant()(q, acc, NULL, q->sc[m], q->c0[m], 0, OH * OW,
            q->y + (n * q->M + m) * OH * OW);
}

/* ---- depthwise with the channels in the vector lanes --------------------
 * Per (image, block of QDL = 16 channels): the block's planes transposed
 * into one padded image of pixels of 16 channel bytes, x' = x ^ flip (u8),
 * [Hp][Wp][16], the padding zx'; per output row the int32 accumulators
 * [OW][16] of sum over the taps of x' * (w - zw) (lane l = channel l of the
 * block; lanes past C read zx' and weights 0), requantized with
 * c0 = B - zx' * sum_taps (w - zw) (so that acc + c0 = the reference's
 * sum of (x - zx)(w - zw) + B, exact) into [OH * OW][16] bytes, transposed
 * back into the 16 output planes. Any stride, dilation and padding; the
 * transposes are 16x16-byte blocks (SSE2 on x86, C elsewhere). */
#define QDL 16

static int g_dw_lanes = 1; /* tests: 0 forces the per-plane kernel */

int dml_cpu_qdw_lanes_set(int on) {
  int old = g_dw_lanes;
  g_dw_lanes = on;
  return old;
}

/* The lanes kernel's slot: the padded image, a row of accumulators, the
 * output block, the per-tap weight vectors (64 taps at most). */
static size_t dwl_bytes(const qc_t *q) {
  return (size_t)(rup(q->Hp * q->Wp * QDL, 64) + rup(q->OW * QDL * 4, 64) +
                  rup(q->OH * q->OW * QDL, 64) + 64 * QDL * 4 + 64);
}

/* A 16x16 byte block: dst row i (16 bytes at dst[i]) = column i of the 16
 * source rows src[0..15], each byte xor flip. */
static inline void tr16(const uint8_t *const src[QDL], uint8_t *const dst[QDL],
                        uint8_t flip) {
#if DML_CPU_X86
  /* Four rounds of the perfect shuffle (row r, column c as the 8 bits
   * r3..r0 c3..c0, each round rotates them left by one): the transpose. */
  __m128i a[16], b[16];
  const __m128i f = _mm_set1_epi8((char)flip);
  for (int i = 0; i < 16; i++)
    a[i] = _mm_xor_si128(_mm_loadu_si128((const __m128i *)src[i]), f);
  for (int round = 0; round < 4; round++) {
    __m128i *in = round % 2 ? b : a, *out = round % 2 ? a : b;
    for (int i = 0; i < 8; i++) {
      out[2 * i] = _mm_unpacklo_epi8(in[i], in[i + 8]);
      out[2 * i + 1] = _mm_unpackhi_epi8(in[i], in[i + 8]);
    }
  }
  for (int i = 0; i < 16; i++) _mm_storeu_si128((__m128i *)dst[i], a[i]);
#else
  uint8_t t[QDL][QDL];
  for (int i = 0; i < QDL; i++)
    for (int j = 0; j < QDL; j++) t[j][i] = (uint8_t)(src[i][j] ^ flip);
  for (int i = 0; i < QDL; i++) memcpy(dst[i], t[i], QDL);
#endif
}

/* acc[ow][l] = sum over taps of xr[(kh * dh * Wp + ow * sw + kw * dw) * 16
 * + l] * wv[tap][l] for one output row (xr: its first padded row). */
DML_CPU_CLONES
static void dwl_row(const uint8_t *restrict xr, int64_t Wp, const int32_t *restrict wv,
                    int64_t OW, int64_t KH, int64_t KW, int64_t sw, int64_t dh,
                    int64_t dw, int32_t *restrict acc) {
  for (int64_t ow = 0; ow < OW; ow++) {
    int32_t a[QDL] = {0};
    for (int64_t kh = 0; kh < KH; kh++)
      for (int64_t kw = 0; kw < KW; kw++) {
        const uint8_t *restrict p = xr + (kh * dh * Wp + ow * sw + kw * dw) * QDL;
        const int32_t *restrict w = wv + (kh * KW + kw) * QDL;
        for (int l = 0; l < QDL; l++) a[l] += (int32_t)p[l] * w[l];
      }
    memcpy(acc + ow * QDL, a, sizeof a);
  }
}

#if DML_CPU_X86
/* dwl_row with AVX-512 VNNI: 16 lanes per register, 4 output pixels at a
 * time; vpdpwssd on x' zero-extended to int32 (high halves 0) and w - zw
 * sign-extended: x' (w - zw) + 0, exact. */
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) static void dwl_row512(
    const uint8_t *xr, int64_t Wp, const int32_t *wv, int64_t OW, int64_t KH, int64_t KW,
    int64_t sw, int64_t dh, int64_t dw, int32_t *acc) {
  const int64_t ps = sw * QDL;
  int64_t ow = 0;
  for (; ow + 4 <= OW; ow += 4) {
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t kh = 0; kh < KH; kh++)
      for (int64_t kw = 0; kw < KW; kw++) {
        const uint8_t *p = xr + (kh * dh * Wp + ow * sw + kw * dw) * QDL;
        __m512i w = _mm512_loadu_si512((const void *)(wv + (kh * KW + kw) * QDL));
        a0 = _mm512_dpwssd_epi32(
            a0, _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)p)), w);
        a1 = _mm512_dpwssd_epi32(
            a1, _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(p + ps))), w);
        a2 = _mm512_dpwssd_epi32(
            a2, _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(p + 2 * ps))), w);
        a3 = _mm512_dpwssd_epi32(
            a3, _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(p + 3 * ps))), w);
      }
    _mm512_storeu_si512((void *)(acc + ow * QDL), a0);
    _mm512_storeu_si512((void *)(acc + (ow + 1) * QDL), a1);
    _mm512_storeu_si512((void *)(acc + (ow + 2) * QDL), a2);
    _mm512_storeu_si512((void *)(acc + (ow + 3) * QDL), a3);
  }
  for (; ow < OW; ow++) {
    __m512i a0 = _mm512_setzero_si512();
    for (int64_t kh = 0; kh < KH; kh++)
      for (int64_t kw = 0; kw < KW; kw++) {
        const uint8_t *p = xr + (kh * dh * Wp + ow * sw + kw * dw) * QDL;
        __m512i w = _mm512_loadu_si512((const void *)(wv + (kh * KW + kw) * QDL));
        a0 = _mm512_dpwssd_epi32(
            a0, _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)p)), w);
      }
    _mm512_storeu_si512((void *)(acc + ow * QDL), a0);
  }
}

/* dwl_row with AVX2: two registers of 8 lanes per pixel, 2 pixels at a
 * time; vpmaddwd as above (x' (w - zw) + 0). */
__attribute__((target("avx2"))) static void dwl_row256(const uint8_t *xr, int64_t Wp,
                                                       const int32_t *wv, int64_t OW,
                                                       int64_t KH, int64_t KW, int64_t sw,
                                                       int64_t dh, int64_t dw,
                                                       int32_t *acc) {
  const int64_t ps = sw * QDL;
  int64_t ow = 0;
  for (; ow < OW; ow += 2) {
    const int two = ow + 1 < OW;
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, b0 = a0, b1 = a0;
    for (int64_t kh = 0; kh < KH; kh++)
      for (int64_t kw = 0; kw < KW; kw++) {
        const uint8_t *p = xr + (kh * dh * Wp + ow * sw + kw * dw) * QDL;
        const int32_t *wt = wv + (kh * KW + kw) * QDL;
        __m256i w0 = _mm256_loadu_si256((const __m256i *)wt);
        __m256i w1 = _mm256_loadu_si256((const __m256i *)(wt + 8));
        a0 = _mm256_add_epi32(
            a0, _mm256_madd_epi16(
                    _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p)), w0));
        a1 = _mm256_add_epi32(
            a1, _mm256_madd_epi16(
                    _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(p + 8))), w1));
        if (two) {
          b0 = _mm256_add_epi32(
              b0,
              _mm256_madd_epi16(
                  _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(p + ps))), w0));
          b1 = _mm256_add_epi32(
              b1, _mm256_madd_epi16(_mm256_cvtepu8_epi32(
                                        _mm_loadl_epi64((const __m128i *)(p + ps + 8))),
                                    w1));
        }
      }
    _mm256_storeu_si256((__m256i *)(acc + ow * QDL), a0);
    _mm256_storeu_si256((__m256i *)(acc + ow * QDL + 8), a1);
    if (two) {
      _mm256_storeu_si256((__m256i *)(acc + (ow + 1) * QDL), b0);
      _mm256_storeu_si256((__m256i *)(acc + (ow + 1) * QDL + 8), b1);
    }
  }
}
#endif

/* Requantizes n pixels of 16 lanes: y[j][l] = clamp(rint((acc[j][l] +
 * c0[l]) * sc[l]) + zy, lo, hi), the reference's double formula. */
DML_CPU_CLONES
static void dwl_requant(const int32_t *restrict acc, const double *restrict c0,
                        const double *restrict sc, int32_t zy, int32_t lo, int32_t hi,
                        int64_t n, uint8_t *restrict y) {
  for (int64_t j = 0; j < n; j++)
    for (int l = 0; l < QDL; l++) {
      double v = rint(((double)acc[j * QDL + l] + c0[l]) * sc[l]) + (double)zy;
      if (!(v >= lo)) v = lo;
      if (v > hi) v = hi;
      y[j * QDL + l] = (uint8_t)(int8_t)(int32_t)v;
    }
}

#if DML_CPU_X86
/* 16 lanes of accumulators requantized with per-lane c0 (double, and as
 * int32 in c0i where q->i32) and sc: rq16_i32 where q->i32 holds, else as
 * requant_row512 (the clamp to [lo - zy, hi - zy] before the rounding
 * conversion, + zy in int32). */
__attribute__((always_inline, target("avx512f,avx512bw,avx512vl"))) static inline __m128i
rq_lanes512(const qc_t *q, __m512i a, const double *c0, const int32_t *c0i,
            const double *sc) {
  const __m512d sca = _mm512_loadu_pd(sc), scb = _mm512_loadu_pd(sc + 8);
  const __m512i vzy = _mm512_set1_epi32(q->zy);
  if (q->i32)
    return rq16_i32(_mm512_add_epi32(a, _mm512_loadu_si512((const void *)c0i)), sca, scb,
                    vzy, _mm512_set1_epi32(q->lo), _mm512_set1_epi32(q->hi));
  const __m512d vlo = _mm512_set1_pd((double)q->lo - q->zy),
                vhi = _mm512_set1_pd((double)q->hi - q->zy);
  __m512d t0 =
      _mm512_add_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(a)), _mm512_loadu_pd(c0));
  __m512d t1 = _mm512_add_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(a, 1)),
                             _mm512_loadu_pd(c0 + 8));
  t0 = _mm512_min_pd(_mm512_max_pd(_mm512_mul_pd(t0, sca), vlo), vhi);
  t1 = _mm512_min_pd(_mm512_max_pd(_mm512_mul_pd(t1, scb), vlo), vhi);
  __m512i r = _mm512_inserti64x4(
      _mm512_castsi256_si512(
          _mm512_cvt_roundpd_epi32(t0, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)),
      _mm512_cvt_roundpd_epi32(t1, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), 1);
  __m128i b = _mm512_cvtepi32_epi8(_mm512_add_epi32(r, vzy));
  __asm__("" : "+v"(b)); /* see requant_row512 */
  return b;
}

/* dwl_requant with AVX-512. */
__attribute__((target("avx512f,avx512bw,avx512vl"))) static void dwl_requant512(
    const qc_t *q, const int32_t *acc, const double *c0, const int32_t *c0i,
    const double *sc, int64_t n, uint8_t *y) {
  for (int64_t j = 0; j < n; j++)
    _mm_storeu_si128(
        (__m128i *)(y + j * QDL),
        rq_lanes512(q, _mm512_loadu_si512((const void *)(acc + j * QDL)), c0, c0i, sc));
}
#endif

static void dwl_task(void *ctx, int64_t t, int tid) {
  const qc_t *q = (const qc_t *)ctx;
  const int64_t nb = (q->C + QDL - 1) / QDL;
  const int64_t n = t / nb, c0ch = (t % nb) * QDL, nc = DML_CPU_MIN(QDL, q->C - c0ch);
  const int64_t H = q->H, W = q->W, OH = q->OH, OW = q->OW, KH = q->KH, KW = q->KW;
  const int64_t Hp = q->Hp, Wp = q->Wp, taps = KH * KW, P = OH * OW;
  uint8_t *xp = q->slots + (size_t)tid * q->slot_bytes;
  int32_t *acc = (int32_t *)(void *)(xp + rup(Hp * Wp * QDL, 64));
  uint8_t *yb = (uint8_t *)(acc + rup(OW * QDL, 16));
  int32_t *wv = (int32_t *)(void *)(yb + rup(P * QDL, 64));
  const uint8_t zxp = (uint8_t)((uint8_t)q->zx ^ q->flip), flip = q->flip;
  /* weights (w - zw) per tap and lane, c0 and the scales per lane */
  double c0[QDL], sc[QDL];
  int32_t c0i[QDL]; /* c0 as int32 for the AVX-512 requantization */
  for (int l = 0; l < QDL; l++) {
    int64_t m = c0ch + l;
    int32_t ws = 0;
    for (int64_t i = 0; i < taps; i++) {
      int32_t v = 0;
      if (l < nc) {
        int32_t wr = q->w_u8 ? (int32_t)((const uint8_t *)q->wraw)[m * taps + i] - 128
                             : (int32_t)((const int8_t *)q->wraw)[m * taps + i];
        v = wr - (int32_t)q->zw[m];
      }
      wv[i * QDL + l] = v;
      ws += v;
    }
    c0[l] = l < nc ? q->c0[m] - (double)zxp * ws : 0;
    c0i[l] = q->i32 ? (int32_t)c0[l] : 0; /* exact where q->i32 */
    sc[l] = l < nc ? q->sc[m] : 0;
  }
  (void)c0i; /* unused where DML_CPU_X86 is 0 */
  /* the padded image: zx' around, the block's planes transposed inside */
  memset(xp, zxp, (size_t)(Hp * Wp * QDL));
  const uint8_t *xc = q->x + (n * q->C + c0ch) * H * W;
  uint8_t pad_lane[QDL], tmp[QDL][QDL];
  memset(pad_lane, zxp ^ flip, sizeof pad_lane); /* lanes past C: zx' once flipped */
  /* blocks of 16 pixels: of a row, or where rows are shorter of the
   * planes taken flat (each pixel to its place: measured slower for long
   * rows); the rest one by one */
  const int64_t HW = H * W, flat = W < QDL;
  int64_t p0 = 0, h = 0, w = 0; /* (h, w): pixel p0 */
  while (p0 < HW) {
    if (p0 + QDL <= HW && (flat || w + QDL <= W)) {
      const uint8_t *src[QDL];
      uint8_t *dst[QDL];
      for (int l = 0; l < QDL; l++) src[l] = l < nc ? xc + l * HW + p0 : pad_lane;
      if (flat) {
        for (int l = 0; l < QDL; l++) {
          dst[l] = xp + ((h + q->pt) * Wp + q->pl + w) * QDL;
          if (++w == W) w = 0, h++;
        }
      } else {
        uint8_t *o = xp + ((h + q->pt) * Wp + q->pl + w) * QDL;
        for (int l = 0; l < QDL; l++) dst[l] = o + l * QDL;
        w += QDL;
        if (w == W) w = 0, h++;
      }
      tr16(src, dst, flip);
      p0 += QDL;
      continue;
    }
    for (int64_t l = 0; l < nc; l++)
      xp[((h + q->pt) * Wp + q->pl + w) * QDL + l] = (uint8_t)(xc[l * HW + p0] ^ flip);
    if (++w == W) w = 0, h++;
    p0++;
  }
  for (int64_t oh = 0; oh < OH; oh++) {
    const uint8_t *xr = xp + oh * q->sh * Wp * QDL;
#if DML_CPU_X86
    if (g_quk_id == 3)
      dwl_row512(xr, Wp, wv, OW, KH, KW, q->sw, q->dh, q->dw, acc);
    else if (g_quk_id == 2)
      dwl_row256(xr, Wp, wv, OW, KH, KW, q->sw, q->dh, q->dw, acc);
    else
#endif
      dwl_row(xr, Wp, wv, OW, KH, KW, q->sw, q->dh, q->dw, acc);
#if DML_CPU_X86
    if (g_quk_id == 3)
      dwl_requant512(q, acc, c0, c0i, sc, OW, yb + oh * OW * QDL);
    else
#endif
      dwl_requant(acc, c0, sc, q->zy, q->lo, q->hi, OW, yb + oh * OW * QDL);
  }
  /* back into the planes */
  uint8_t *yc = q->y + (n * q->M + c0ch) * P;
  p0 = 0;
  for (; p0 + QDL <= P; p0 += QDL) {
    const uint8_t *src[QDL];
    uint8_t *dst[QDL];
    for (int l = 0; l < QDL; l++) {
      src[l] = yb + (p0 + l) * QDL;
      dst[l] = l < nc ? yc + l * P + p0 : tmp[l];
    }
    tr16(src, dst, 0);
  }
  for (; p0 < P; p0++)
    for (int64_t l = 0; l < nc; l++) yc[l * P + p0] = yb[p0 * QDL + l];
}

/* Geometry of the call when the fast path takes it (0 otherwise). */
static int geo(const dml_cpu_call_t *c, qc_t *q) {
  const dml_tensor_t *x = &c->inputs[0], *w = &c->inputs[3], *y = &c->outputs[0];
  int r = x->rank - 2;
  /* Also called for scratch sizing before the kernel checks the call: an
   * inconsistent one is left to the reference kernel's errors. */
  if (r < 1 || r > 2 || w->rank != x->rank || y->rank != x->rank) return 0;
  for (int i = 0; i < x->rank; i++)
    if (x->dims[i] < 0 || w->dims[i] < 1 || y->dims[i] < 0) return 0;
  memset(q, 0, sizeof *q);
  q->N = x->dims[0], q->C = x->dims[1], q->M = w->dims[0];
  q->H = r == 2 ? x->dims[2] : 1, q->W = x->dims[r + 1];
  q->KH = r == 2 ? w->dims[2] : 1, q->KW = w->dims[r + 1];
  q->OH = r == 2 ? y->dims[2] : 1, q->OW = y->dims[r + 1];
  q->group = dml_cpu_get_int(c, "group", 1);
  if (q->group < 1 || q->C % q->group || q->M % q->group || w->dims[1] != q->C / q->group)
    return 0;
  q->Cg = q->C / q->group, q->Mg = q->M / q->group;
  size_t ns, nd, np;
  const int64_t *st = dml_cpu_get_ints(c, "strides", &ns);
  const int64_t *dl = dml_cpu_get_ints(c, "dilations", &nd);
  const int64_t *pads = dml_cpu_get_ints(c, "pads", &np);
  const char *ap = dml_cpu_get_string(c, "auto_pad", "NOTSET");
  if ((st && ns != (size_t)r) || (dl && nd != (size_t)r) || (pads && np != 2 * (size_t)r))
    return 0;
  q->sh = r == 2 && st ? st[0] : 1, q->sw = st ? st[r - 1] : 1;
  q->dh = r == 2 && dl ? dl[0] : 1, q->dw = dl ? dl[r - 1] : 1;
  if (strcmp(ap, "NOTSET") == 0) {
    q->pt = r == 2 && pads ? pads[0] : 0, q->pl = pads ? pads[r - 1] : 0;
  } else if (strcmp(ap, "VALID") != 0) {
    int su = strcmp(ap, "SAME_UPPER") == 0;
    int64_t tot_h = DML_CPU_MAX(0, (q->OH - 1) * q->sh + (q->KH - 1) * q->dh + 1 - q->H);
    int64_t tot_w = DML_CPU_MAX(0, (q->OW - 1) * q->sw + (q->KW - 1) * q->dw + 1 - q->W);
    q->pt = su ? tot_h / 2 : tot_h - tot_h / 2;
    q->pl = su ? tot_w / 2 : tot_w - tot_w / 2;
  }
  if (q->sh < 1 || q->sw < 1 || q->dh < 1 || q->dw < 1 || q->pt < 0 || q->pl < 0)
    return 0;
  q->K = q->Cg * q->KH * q->KW;
  q->Kq = rup(q->K, 4) / 4;
  q->tm = tap_major(q->Cg, q->KH * q->KW);
  q->depthwise = q->Cg == 1 && q->Mg == 1 && q->KH * q->KW <= 64;
  /* lanes: at least half of them used (measured: see dwl_task) */
  q->dwl = q->depthwise && g_dw_lanes && q->C >= QDL / 2;
  q->one_by_one = q->KH == 1 && q->KW == 1 && q->sh == 1 && q->sw == 1 && q->pt == 0 &&
                  q->pl == 0 && q->OH == q->H && q->OW == q->W;
  if (q->K > 65536 || q->N * q->M * q->OH * q->OW == 0) return 0;
  q->by_image = q->one_by_one && q->H * q->W == 1 && q->group == 1 && q->N > 1;
  q->Hp = dw_hp(q), q->Wp = dw_wp(q);
  q->direct = DML_CPU_X86 && !q->one_by_one && !q->depthwise &&
              (q->sw == 1 || q->sw == 2) && q->Cg * q->Hp * q->Wp <= (4 << 20);
  q->Hg = (q->Hp + q->sh - 1) / q->sh, q->Wg = (q->Wp + q->sw - 1) / q->sw;
  q->d4_ok = DML_CPU_X86 && !q->one_by_one && !q->depthwise && q->Cg % 4 == 0 && q->tm &&
             q->sh <= 8 && q->sw <= 8 &&
             q->sh * q->sw * q->Cg * q->Hg * q->Wg <= (4 << 20);
  int64_t P = q->OH * q->OW;
  q->nc = DML_CPU_MAX(32, DML_CPU_MIN(1024, (96 * 1024 / q->K) / 32 * 32));
  if (q->nc > rup(P, 32)) q->nc = rup(P, 32);
  q->n_chunks = (P + q->nc - 1) / q->nc;
  if (q->by_image) {
    q->nc = DML_CPU_MAX(32, DML_CPU_MIN(1024, (96 * 1024 / q->K) / 32 * 32));
    if (q->nc > rup(q->N, 32)) q->nc = rup(q->N, 32);
    q->n_chunks = (q->N + q->nc - 1) / q->nc;
  }
  return 1;
}

/* The in-place path's slot: acc tile, off[Kq], a row of 32 outputs, a
 * padded row, the phase planes with the slack the last panel's loads read
 * past them. */
static size_t d4_bytes(const qc_t *q) {
  return (size_t)rup(4 * 2 * QMR * QNR + 4 * rup(q->Kq, 16) + 64 + rup(q->Wp * 4, 64) +
                         q->sh * q->sw * q->Cg * q->Hg * q->Wg +
                         4 * ((q->KW - 1) * q->dw + 2 * QNR) + 128,
                     64);
}

static size_t slot_bytes(const qc_t *q) {
  if (q->dwl) return dwl_bytes(q);
  if (q->depthwise) return (size_t)rup(dw_acc_len(q) * 4 + dw_hp(q) * dw_wp(q) * 2, 64);
  if (q->d4) return d4_bytes(q);
  int64_t tmp = q->one_by_one ? 0
                : q->direct   ? 64 + rup(q->Cg * q->Hp * q->Wp, 64) + 64 + 4 * q->K
                              : q->K * q->nc;
  return (size_t)rup(q->Kq * 4 * q->nc + tmp + 4 * q->nc + 4 * QMR * 2 * QNR + 64, 64);
}

/* Shared part of the scratch: sc, c0, zw' per m, and the packed weights when
 * not pre-packed. */
static size_t shared_bytes(const qc_t *q, const dml_tensor_t *w, int prepacked) {
  size_t s = (size_t)rup(3 * 8 * q->M, 64);
  if (!q->depthwise && !prepacked)
    s += (size_t)rup((int64_t)dml_cpu_qconv_prepack_bytes(w, q->group), 64);
  return s;
}

size_t dml_cpu_qconv_scratch(const dml_cpu_call_t *c, int threads, int prepacked) {
  qc_t q;
  if (c->n_inputs < 8 || c->n_outputs < 1 || !geo(c, &q)) return 0;
  size_t slot = slot_bytes(&q);
  if (q.d4_ok && d4_bytes(&q) > slot) slot = d4_bytes(&q);
  return 64 + shared_bytes(&q, &c->inputs[3], prepacked) +
         (size_t)(threads < 1 ? 1 : threads) * slot;
}

int dml_cpu_qconv_fast(const dml_cpu_call_t *c, const void *packed, int32_t lo,
                       int32_t hi, dml_status_t *st) {
  *st = DML_OK;
  pthread_once(&g_quk_once, pick);
  if (g_q_ref) return 0;
  qc_t q;
  if (!geo(c, &q)) return 0;
  const dml_tensor_t *x = &c->inputs[0], *xs = &c->inputs[1], *zxt = &c->inputs[2];
  const dml_tensor_t *w = &c->inputs[3], *ws = &c->inputs[4], *zwt = &c->inputs[5];
  const dml_tensor_t *ys = &c->inputs[6], *zyt = &c->inputs[7];
  const dml_tensor_t *bt = dml_cpu_in(c, 8);
  size_t need_min = 64 + shared_bytes(&q, w, packed != NULL) + slot_bytes(&q);
  if (!c->scratch || c->scratch_bytes < need_min) return 0;
  uint8_t *base = (uint8_t *)(((uintptr_t)c->scratch + 63) & ~(uintptr_t)63);
  double *sc = (double *)(void *)base, *c0 = sc + q.M, *zw = c0 + q.M;
  uint8_t *p = base + rup(3 * 8 * q.M, 64);
  q.x = (const uint8_t *)x->data;
  q.flip = x->dtype == DML_DTYPE_I8 ? 0x80 : 0;
  q.zx = x->dtype == DML_DTYPE_I8 ? (int32_t)((const int8_t *)zxt->data)[0]
                                  : (int32_t)((const uint8_t *)zxt->data)[0];
  int32_t zxp = (int32_t)(uint8_t)((uint8_t)q.zx ^ q.flip);
  q.w_u8 = w->dtype == DML_DTYPE_U8;
  q.wraw = w->data;
  q.zy = zyt->dtype == DML_DTYPE_I8 ? (int32_t)((const int8_t *)zyt->data)[0]
                                    : (int32_t)((const uint8_t *)zyt->data)[0];
  q.lo = lo, q.hi = hi;
  q.y = (uint8_t *)c->outputs[0].data;
  if (!q.depthwise) {
    if (!packed) {
      dml_cpu_qconv_prepack(w, q.group, p);
      packed = p;
      p += rup((int64_t)dml_cpu_qconv_prepack_bytes(w, q.group), 64);
    }
    int64_t Mp = rup(q.Mg, QMR);
    q.pa = (const int8_t *)packed;
    q.rowsum =
        (const int32_t *)(const void *)((const int8_t *)packed + q.group * Mp * q.Kq * 4);
  }
  double xsv = ((const float *)xs->data)[0], ysv = ((const float *)ys->data)[0];
  int64_t nws = dml_cpu_numel(ws), nzw = dml_cpu_numel(zwt);
  for (int64_t m = 0; m < q.M; m++) {
    double wsv = ((const float *)ws->data)[nws == 1 ? 0 : m];
    sc[m] = xsv * wsv / ysv;
    if (!isfinite(sc[m])) return 0; /* the reference's NaN/inf handling */
    int64_t z = nzw == 1 ? 0 : m;
    int32_t zwp = q.w_u8 ? (int32_t)((const uint8_t *)zwt->data)[z] - 128
                         : (int32_t)((const int8_t *)zwt->data)[z];
    zw[m] = zwp;
    if (zwp) q.need_colsum = 1;
    double b = bt ? (double)((const int32_t *)bt->data)[m] : 0;
    /* - zx' rowsum + K zx' zw' + B (exact in double) */
    c0[m] = q.depthwise ? b : -(double)zxp * q.rowsum[m] + (double)q.K * zxp * zwp + b;
  }
  q.sc = sc, q.c0 = c0, q.zw = zw;
  /* the int32 requantization's bound: |acc| <= K 255 * 128 (GEMM: u8 x'
   * times s8 w'), depthwise taps 255 * 255 (x - zx or x' times w - zw)
   * and as much again in the lanes kernels' c0 (zx' sum(w - zw)) */
  q.i32 = !q.need_colsum;
  const double abound =
      q.depthwise ? 2.0 * (double)q.K * 255 * 255 : (double)q.K * 255 * 128;
  for (int64_t m = 0; m < q.M && q.i32; m++) {
    double a = abound + fabs(c0[m]);
    if (a > 0x1p30 || a * fabs(sc[m]) > 0x1p30) q.i32 = 0;
  }
  q.slots = p;
  size_t avail = c->scratch_bytes - (size_t)(p - (uint8_t *)c->scratch);
  q.d4 = q.d4_ok && g_quk_id == 3 && !q.need_colsum && avail >= d4_bytes(&q);
  if (q.d4) { /* rows per task: about q.nc outputs */
    int64_t rows = DML_CPU_MAX(1, DML_CPU_MIN(q.OH, q.nc / q.OW));
    int64_t chunks = (q.OH + rows - 1) / rows, Mp8 = rup(q.Mg, QMR) / QMR;
    /* Only where the padded grid's extra columns cost less than the packing
     * saved: panels of 32 x Mp8 micro-kernel passes, the packing of a panel
     * costs about 2 passes (measured on resnet_small's layers at batch 32:
     * 8x8 images with pads 1 and M = 64 lose 12%, 16x16 and 32x32 win
     * 1.4-1.9x). */
    int64_t d4_cost = chunks * ((rows - 1) * q.Wg + q.OW + 31) / 32 * Mp8 * 10;
    int64_t pack_cost = (q.OH * q.OW + 31) / 32 * (Mp8 * 10 + 20);
    q.d4 = d4_cost <= pack_cost;
    q.d4_rows = rows;
    if (q.d4) q.n_chunks = chunks;
  }
  q.slot_bytes = slot_bytes(&q);
  int slots = (int)DML_CPU_MIN((size_t)64, avail / q.slot_bytes);
  double macs = (double)q.N * q.M * q.OH * q.OW * q.K;
  int threads = macs >= 2e6 ? DML_CPU_MIN(slots, dml_cpu_num_threads()) : 1;
  if (threads < 1) threads = 1;
  q.uk = kernel();
  if (q.dwl)
    dml_cpu_parallel_for(q.N * ((q.C + QDL - 1) / QDL), threads, dwl_task, &q);
  else if (q.depthwise)
    dml_cpu_parallel_for(q.N * q.M, threads, dw_task, &q);
#if DML_CPU_X86
  else if (q.d4)
    dml_cpu_parallel_for(q.N * q.group * q.n_chunks, threads, d4_task, &q);
#endif
  else if (q.by_image)
    dml_cpu_parallel_for(q.n_chunks, threads, image_task, &q);
  else
    dml_cpu_parallel_for(q.N * q.group * q.n_chunks, threads, gemm_task, &q);
  return 1;
}

/* ---- per-tensor QuantizeLinear / DequantizeLinear of the QDQ graph parts
 * left in f32 (Add, pools, ...): the reference kernels' formulas in float,
 * vectorized ---- */

DML_CPU_CLONES
void dml_cpu_quantize_f32(const float *x, int64_t n, float scale, int32_t zp, int u8,
                          void *y) {
  const float lo = u8 ? 0.0f : -128.0f, hi = u8 ? 255.0f : 127.0f, z = (float)zp;
  if (u8) {
    uint8_t *o = (uint8_t *)y;
    for (int64_t i = 0; i < n; i++) {
      float v = rintf(x[i] / scale) + z;
      v = v >= lo ? v : lo; /* NaN saturates low */
      v = v > hi ? hi : v;
      o[i] = (uint8_t)(int32_t)v;
    }
  } else {
    int8_t *o = (int8_t *)y;
    for (int64_t i = 0; i < n; i++) {
      float v = rintf(x[i] / scale) + z;
      v = v >= lo ? v : lo;
      v = v > hi ? hi : v;
      o[i] = (int8_t)(int32_t)v;
    }
  }
}

DML_CPU_CLONES
void dml_cpu_dequantize_q8(const void *x, int64_t n, float scale, int32_t zp, int u8,
                           float *y) {
  if (u8) {
    const uint8_t *p = (const uint8_t *)x;
    for (int64_t i = 0; i < n; i++) y[i] = (float)((int32_t)p[i] - zp) * scale;
  } else {
    const int8_t *p = (const int8_t *)x;
    for (int64_t i = 0; i < n; i++) y[i] = (float)((int32_t)p[i] - zp) * scale;
  }
}

DML_CPU_CLONES
void dml_cpu_qadd(const void *a, int a_s8, float sa, int32_t za, const void *b, int b_s8,
                  float sb, int32_t zb, float sy, int32_t zy, int y_s8, int32_t lo,
                  int32_t hi, int64_t n, void *y) {
  const uint8_t *pa = (const uint8_t *)a, *pb = (const uint8_t *)b;
  const int32_t fa = a_s8 ? 0x80 : 0, fb = b_s8 ? 0x80 : 0;
  /* s8 as u8 + 128 (xor 0x80), zero points shifted alike: the differences
   * are the same integers. */
  const int32_t za2 = za + fa, zb2 = zb + fb;
  const float flo = (float)lo, fhi = (float)hi, fz = (float)zy;
  uint8_t *py = (uint8_t *)y;
  for (int64_t i = 0; i < n; i++) {
    float va = (float)((int32_t)(pa[i] ^ (uint8_t)fa) - za2) * sa;
    float vb = (float)((int32_t)(pb[i] ^ (uint8_t)fb) - zb2) * sb;
    float v = rintf((va + vb) / sy) + fz;
    v = v >= flo ? v : flo;
    v = v > fhi ? fhi : v;
    py[i] = (uint8_t)(int32_t)v; /* s8: the two's complement byte */
  }
  (void)y_s8;
}
