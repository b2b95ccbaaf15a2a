/*
 * cpu_gemm.c — the single-precision GEMM core used by MatMul, Gemm, Conv
 * and ConvTranspose.
 *
 * Goto/BLIS-style blocking: op(B) is packed in KC x NC blocks into panels
 * of NR columns (scratch), op(A) in MC x KC blocks into panels of MR rows
 * (scratch, one buffer per thread), and an MR x NR register-tile
 * micro-kernel runs over the panels. The micro-kernel is picked at run time:
 * AVX-512 (8x32) or AVX2+FMA (6x16) on x86-64, else portable C (4x16) that
 * the compiler vectorizes. Rows with M <= 2 take a path with no packing.
 * Work is spread over the thread pool by (MC block, NR panels). Either
 * operand may come packed beforehand (dml_cpu_sgemm_pre: weights packed
 * once at session creation, Conv's im2col written in the packed-B layout),
 * with the same bits.
 *
 * Row independence: C[i,j] is computed by the same sequence of roundings
 * whatever M, the row's position in its tile and the thread split are, so
 * one row gives the same bits alone or inside a batch (what the serving
 * layer's batching relies on, docs/serving.md). Per element, for each KC
 * block in order: acc = sum over k in order (fused multiply-adds when the
 * micro-kernel fuses, else multiply then add), then C = alpha*acc on the
 * first block when beta == 0, else C = alpha*acc + beta_eff*C (fused when
 * the micro-kernel fuses; beta_eff is beta on the first block, 1 after).
 * Edge tiles and the unpacked small-M path reproduce exactly that.
 */
#if defined(__GNUC__) && !defined(__clang__)
/* Before the includes, so the inline helpers get the same options. */
#pragma GCC optimize("O3", "no-trapping-math")
#endif
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "cpu_internal.h"

#if DML_CPU_X86
#include <immintrin.h>
#endif

#define KC DML_CPU_GEMM_KC
#define MC 96 /* multiple of every MR */
#define NC DML_CPU_GEMM_NC
#define MR_MAX 8
#define NR_MAX 32
#define ALIGN_F 16 /* floats: 64 bytes */

typedef void (*ukernel_fn)(int64_t kc, const float *a, const float *b, float *c,
                           int64_t ldc, float alpha, float beta);

/* ---- portable micro-kernel: 4 x 16 ----------------------------------- */

static void ukernel_c(int64_t kc, const float *restrict a, const float *restrict b,
                      float *restrict c, int64_t ldc, float alpha, float beta) {
  float acc[4][16];
  memset(acc, 0, sizeof acc);
  for (int64_t k = 0; k < kc; k++) {
    const float *bk = b + k * 16;
    const float *ak = a + k * 4;
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 16; j++) acc[i][j] += ak[i] * bk[j];
  }
  for (int i = 0; i < 4; i++) {
    float *ci = c + i * ldc;
    if (beta == 0.0f)
      for (int j = 0; j < 16; j++) ci[j] = alpha * acc[i][j];
    else
      for (int j = 0; j < 16; j++) ci[j] = alpha * acc[i][j] + beta * ci[j];
  }
}

#if DML_CPU_X86
/* ---- AVX2 + FMA micro-kernel: 6 x 16 --------------------------------- */

__attribute__((target("avx2,fma"))) static void ukernel_avx2(int64_t kc, const float *a,
                                                             const float *b, float *c,
                                                             int64_t ldc, float alpha,
                                                             float beta) {
  __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
  __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
  __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
  __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
  __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
  __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
  for (int64_t k = 0; k < kc; k++) {
    __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
    __m256 x;
    x = _mm256_broadcast_ss(a + 0);
    c00 = _mm256_fmadd_ps(x, b0, c00);
    c01 = _mm256_fmadd_ps(x, b1, c01);
    x = _mm256_broadcast_ss(a + 1);
    c10 = _mm256_fmadd_ps(x, b0, c10);
    c11 = _mm256_fmadd_ps(x, b1, c11);
    x = _mm256_broadcast_ss(a + 2);
    c20 = _mm256_fmadd_ps(x, b0, c20);
    c21 = _mm256_fmadd_ps(x, b1, c21);
    x = _mm256_broadcast_ss(a + 3);
    c30 = _mm256_fmadd_ps(x, b0, c30);
    c31 = _mm256_fmadd_ps(x, b1, c31);
    x = _mm256_broadcast_ss(a + 4);
    c40 = _mm256_fmadd_ps(x, b0, c40);
    c41 = _mm256_fmadd_ps(x, b1, c41);
    x = _mm256_broadcast_ss(a + 5);
    c50 = _mm256_fmadd_ps(x, b0, c50);
    c51 = _mm256_fmadd_ps(x, b1, c51);
    a += 6;
    b += 16;
  }
  __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
  __m256 r[12] = {c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51};
  for (int i = 0; i < 6; i++) {
    float *ci = c + i * ldc;
    for (int h = 0; h < 2; h++) {
      __m256 v = _mm256_mul_ps(va, r[2 * i + h]);
      if (beta != 0.0f) v = _mm256_fmadd_ps(vb, _mm256_loadu_ps(ci + 8 * h), v);
      _mm256_storeu_ps(ci + 8 * h, v);
    }
  }
}

/* ---- AVX-512 micro-kernel: 8 x 32 ------------------------------------ */

__attribute__((target("avx512f"))) static void ukernel_avx512(int64_t kc, const float *a,
                                                              const float *b, float *c,
                                                              int64_t ldc, float alpha,
                                                              float beta) {
  __m512 acc[8][2];
  for (int i = 0; i < 8; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; k++) {
    __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
    for (int i = 0; i < 8; i++) {
      __m512 x = _mm512_set1_ps(a[i]);
      acc[i][0] = _mm512_fmadd_ps(x, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(x, b1, acc[i][1]);
    }
    a += 8;
    b += 32;
  }
  __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  for (int i = 0; i < 8; i++) {
    float *ci = c + i * ldc;
    for (int h = 0; h < 2; h++) {
      __m512 v = _mm512_mul_ps(va, acc[i][h]);
      if (beta != 0.0f) v = _mm512_fmadd_ps(vb, _mm512_loadu_ps(ci + 16 * h), v);
      _mm512_storeu_ps(ci + 16 * h, v);
    }
  }
}
#endif

typedef struct {
  int mr, nr;
  int fused; /* the kernel rounds a*b+c once (FMA) */
  ukernel_fn fn;
} uk_t;

static uk_t g_uk;
static pthread_once_t g_uk_once = PTHREAD_ONCE_INIT;

static void pick_kernel(void) {
  g_uk = (uk_t){4, 16, 0, ukernel_c};
#if DML_CPU_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    g_uk = (uk_t){8, 32, 1, ukernel_avx512};
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    g_uk = (uk_t){6, 16, 1, ukernel_avx2};
#endif
}

/* The micro-kernel of this machine, picked once (pthread_once: sessions on
 * several threads may ask first at the same time). */
static const uk_t *kernel(void) {
  pthread_once(&g_uk_once, pick_kernel);
  return &g_uk;
}

int dml_cpu_sgemm_set_kernel(int which) {
  kernel();
  if (which == 0) {
    pick_kernel();
    return 0;
  }
  if (which == 1) {
    g_uk = (uk_t){4, 16, 0, ukernel_c};
    return 0;
  }
#if DML_CPU_X86
  if (which == 2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    g_uk = (uk_t){6, 16, 1, ukernel_avx2};
    return 0;
  }
  if (which == 3 && __builtin_cpu_supports("avx512f")) {
    g_uk = (uk_t){8, 32, 1, ukernel_avx512};
    return 0;
  }
#endif
  return -1;
}

/* ---- packing ---------------------------------------------------------- */

#if DML_CPU_X86
/* A full panel of 8 rows of a row-major A (the AVX-512 kernel's mr): 8 x 8
 * blocks turned in registers, so each row is read 8 floats at a time
 * instead of one float per row per k (a strided gather: 16% of
 * transformer_tiny's time at batch 32 went to packing A). A copy: the same
 * panel as the scalar loop. */
__attribute__((target("avx2"))) static void pack_a8_rows(const float *src, int64_t lda,
                                                         int64_t kc,
                                                         float *restrict dst) {
  int64_t k = 0;
  for (; k + 8 <= kc; k += 8) {
    __m256 r[8], t[8];
    for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(src + i * lda + k);
    for (int i = 0; i < 4; i++) {
      t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
      t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int h = 0; h < 2; h++) {
      __m256 *u = t + 4 * h;
      r[4 * h + 0] = _mm256_shuffle_ps(u[0], u[2], _MM_SHUFFLE(1, 0, 1, 0));
      r[4 * h + 1] = _mm256_shuffle_ps(u[0], u[2], _MM_SHUFFLE(3, 2, 3, 2));
      r[4 * h + 2] = _mm256_shuffle_ps(u[1], u[3], _MM_SHUFFLE(1, 0, 1, 0));
      r[4 * h + 3] = _mm256_shuffle_ps(u[1], u[3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int j = 0; j < 4; j++) {
      _mm256_storeu_ps(dst + (k + j) * 8, _mm256_permute2f128_ps(r[j], r[4 + j], 0x20));
      _mm256_storeu_ps(dst + (k + 4 + j) * 8,
                       _mm256_permute2f128_ps(r[j], r[4 + j], 0x31));
    }
  }
  for (; k < kc; k++)
    for (int i = 0; i < 8; i++) dst[k * 8 + i] = src[i * lda + k];
}
#endif

/* op(A)[i0:i0+mc, p0:p0+kc] into panels of mr rows: panel r holds, for each
 * k, mr consecutive values (zero-padded past mc). */
static void pack_a(int ta, const float *A, int64_t lda, int64_t i0, int64_t mc,
                   int64_t p0, int64_t kc, int mr, float *restrict dst) {
  for (int64_t ir = 0; ir < mc; ir += mr) {
    int64_t rows = DML_CPU_MIN((int64_t)mr, mc - ir);
#if DML_CPU_X86
    /* mr 8: the AVX-512 kernel, so AVX2 is there */
    if (!ta && mr == 8 && rows == 8) {
      pack_a8_rows(A + (i0 + ir) * lda + p0, lda, kc, dst);
      dst += kc * mr;
      continue;
    }
#endif
    if (!ta) {
      const float *src = A + (i0 + ir) * lda + p0;
      for (int64_t k = 0; k < kc; k++) {
        int64_t i = 0;
        for (; i < rows; i++) dst[k * mr + i] = src[i * lda + k];
        for (; i < mr; i++) dst[k * mr + i] = 0.0f;
      }
    } else {
      /* A is stored K x M: op(A)[i,k] = A[k*lda + i]. */
      const float *src = A + p0 * lda + i0 + ir;
      for (int64_t k = 0; k < kc; k++) {
        const float *s = src + k * lda;
        int64_t i = 0;
        for (; i < rows; i++) dst[k * mr + i] = s[i];
        for (; i < mr; i++) dst[k * mr + i] = 0.0f;
      }
    }
    dst += kc * mr;
  }
}

/* op(B)[p0:p0+kc, j0 + panel*nr ...] for panels [pb, pe) into dst (panel
 * pb's data at dst + pb*kc*nr). */
static void pack_b(int tb, const float *B, int64_t ldb, int64_t p0, int64_t kc,
                   int64_t j0, int64_t nc, int nr, int64_t pb, int64_t pe,
                   float *restrict dst) {
  for (int64_t p = pb; p < pe; p++) {
    int64_t jr = p * nr;
    int64_t cols = DML_CPU_MIN((int64_t)nr, nc - jr);
    float *d = dst + p * kc * nr;
    if (!tb) {
      const float *src = B + p0 * ldb + j0 + jr;
      if (cols == nr) {
        for (int64_t k = 0; k < kc; k++)
          memcpy(d + k * nr, src + k * ldb, (size_t)nr * 4);
      } else {
        for (int64_t k = 0; k < kc; k++) {
          int64_t j = 0;
          for (; j < cols; j++) d[k * nr + j] = src[k * ldb + j];
          for (; j < nr; j++) d[k * nr + j] = 0.0f;
        }
      }
    } else {
      /* B is stored N x K: op(B)[k,j] = B[j*ldb + k]. */
      const float *src = B + (j0 + jr) * ldb + p0;
      for (int64_t j = 0; j < cols; j++)
        for (int64_t k = 0; k < kc; k++) d[k * nr + j] = src[j * ldb + k];
      for (int64_t j = cols; j < nr; j++)
        for (int64_t k = 0; k < kc; k++) d[k * nr + j] = 0.0f;
    }
  }
}

/* ---- helpers ---------------------------------------------------------- */

static void scale_row(float *c, int64_t n, float beta) {
  if (beta == 0.0f)
    memset(c, 0, (size_t)n * sizeof(float));
  else if (beta != 1.0f)
    for (int64_t j = 0; j < n; j++) c[j] *= beta;
}

typedef struct {
  int ta, tb;
  int64_t M, N, K;
  float alpha, beta;
  const float *A, *B;
  int64_t lda, ldb, ldc;
  float *C;
  int64_t chunk; /* columns per task (unpacked path) */
  /* packed path */
  const uk_t *uk;
  float *bpack;
  float *apack[64];
  const float *apre, *bpre; /* whole operands packed beforehand, or NULL */
  int64_t mpad;             /* M rounded up to mr (apre's block stride / kc) */
  int64_t kc, nc, pc, jc;
  int64_t n_panels, n_ic, nsplit, panels_per_split;
  float beta_eff;
} gemm_ctx_t;

/* ---- unpacked path (M small, or scratch sized for another shape) ------ */

/* C[i, j0:j1] for rows [0, M) with the packed path's roundings (see the
 * top of the file), columns in strips of 64 so the k loop vectorizes over
 * j without changing any element's order. FMA(a, b, c) is a*b+c rounded
 * once or twice as the micro-kernel does it. */
#define DML_GEMM_EXACT_BODY(FMA)                                                 \
  for (int64_t i = 0; i < g->M; i++)                                             \
    for (int64_t jb = j0; jb < j1; jb += 64) {                                   \
      int64_t w = DML_CPU_MIN((int64_t)64, j1 - jb);                             \
      float *c = g->C + i * g->ldc + jb;                                         \
      for (int64_t pc = 0; pc < g->K; pc += KC) {                                \
        int64_t kc = DML_CPU_MIN((int64_t)KC, g->K - pc);                        \
        float acc[64];                                                           \
        for (int64_t jj = 0; jj < w; jj++) acc[jj] = 0.0f;                       \
        for (int64_t k = pc; k < pc + kc; k++) {                                 \
          float a = g->ta ? g->A[k * g->lda + i] : g->A[i * g->lda + k];         \
          if (!g->tb) {                                                          \
            const float *b = g->B + k * g->ldb + jb;                             \
            for (int64_t jj = 0; jj < w; jj++) acc[jj] = FMA(a, b[jj], acc[jj]); \
          } else {                                                               \
            const float *b = g->B + jb * g->ldb + k;                             \
            for (int64_t jj = 0; jj < w; jj++)                                   \
              acc[jj] = FMA(a, b[jj * g->ldb], acc[jj]);                         \
          }                                                                      \
        }                                                                        \
        float beff = pc == 0 ? g->beta : 1.0f;                                   \
        for (int64_t jj = 0; jj < w; jj++) {                                     \
          float v = g->alpha * acc[jj];                                          \
          c[jj] = beff == 0.0f ? v : FMA(beff, c[jj], v);                        \
        }                                                                        \
      }                                                                          \
    }

#define DML_GEMM_MULADD(a, b, c) ((c) + (a) * (b))
static void exact_cols_c(const gemm_ctx_t *g, int64_t j0, int64_t j1) {
  DML_GEMM_EXACT_BODY(DML_GEMM_MULADD)
}
#if DML_CPU_X86
/* fmaf expands to one vfmadd instruction under this target. */
__attribute__((target("avx2,fma"))) static void exact_cols_fma(const gemm_ctx_t *g,
                                                               int64_t j0, int64_t j1) {
  DML_GEMM_EXACT_BODY(fmaf)
}
#endif

#if DML_CPU_X86
/* In-register transpose: r[i] lane j becomes r[j] lane i. */
__attribute__((target("avx512f"))) static void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 8; i++) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; i++) {
    r[4 * i + 0] = _mm512_shuffle_ps(t[4 * i + 0], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[4 * i + 1] = _mm512_shuffle_ps(t[4 * i + 0], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 2; i++)
    for (int c = 0; c < 4; c++) {
      t[8 * i + c] = _mm512_shuffle_f32x4(r[8 * i + c], r[8 * i + 4 + c], 0x88);
      t[8 * i + 4 + c] = _mm512_shuffle_f32x4(r[8 * i + c], r[8 * i + 4 + c], 0xdd);
    }
  for (int c = 0; c < 8; c++) {
    r[c] = _mm512_shuffle_f32x4(t[c], t[8 + c], 0x88);
    r[8 + c] = _mm512_shuffle_f32x4(t[c], t[8 + c], 0xdd);
  }
}

/* The unpacked path where the AVX-512 micro-kernel runs: 16 columns per
 * register, 4 registers of columns and 2 rows at a time (8 independent
 * accumulator chains), a transposed B turned 16 x 16 at a time in
 * registers; the roundings of ukernel_avx512 (fused multiply-adds in k
 * order from zero, then alpha*acc, then fused beta_eff*C + that). */
__attribute__((target("avx512f"))) static void exact_cols_avx512(const gemm_ctx_t *g,
                                                                 int64_t j0, int64_t j1) {
  for (int64_t jb = j0; jb < j1; jb += 64) {
    __mmask16 wm[4];
    int ng = 0;
    for (int q = 0; q < 4; q++) {
      int64_t w = DML_CPU_MIN((int64_t)16, j1 - (jb + 16 * q));
      wm[q] = w > 0 ? (__mmask16)((1u << w) - 1u) : 0;
      if (w > 0) ng = q + 1;
    }
    for (int64_t i0 = 0; i0 < g->M; i0 += 2) {
      int two = g->M - i0 > 1;
      for (int64_t pc = 0; pc < g->K; pc += KC) {
        int64_t kc = DML_CPU_MIN((int64_t)KC, g->K - pc);
        __m512 acc[4][2];
        for (int q = 0; q < 4; q++) acc[q][0] = acc[q][1] = _mm512_setzero_ps();
        for (int64_t k0 = 0; k0 < kc; k0 += 16) {
          int kn = (int)DML_CPU_MIN((int64_t)16, kc - k0);
          __mmask16 km = (__mmask16)((1u << kn) - 1u);
          for (int q = 0; q < ng; q++) {
            int64_t jq = jb + 16 * q;
            __m512 t[16];
            if (g->tb) {
              for (int l = 0; l < 16; l++)
                t[l] = (wm[q] >> l) & 1
                           ? _mm512_maskz_loadu_ps(km, g->B + (jq + l) * g->ldb + pc + k0)
                           : _mm512_setzero_ps();
              transpose16(t);
            } else {
              for (int kk = 0; kk < kn; kk++)
                t[kk] = _mm512_maskz_loadu_ps(wm[q], g->B + (pc + k0 + kk) * g->ldb + jq);
            }
            for (int kk = 0; kk < kn; kk++) {
              int64_t k = pc + k0 + kk;
              const float *a = g->ta ? g->A + k * g->lda + i0 : g->A + i0 * g->lda + k;
              acc[q][0] = _mm512_fmadd_ps(_mm512_set1_ps(a[0]), t[kk], acc[q][0]);
              if (two)
                acc[q][1] = _mm512_fmadd_ps(_mm512_set1_ps(a[g->ta ? 1 : g->lda]), t[kk],
                                            acc[q][1]);
            }
          }
        }
        float beff = pc == 0 ? g->beta : 1.0f;
        for (int r = 0; r <= two; r++)
          for (int q = 0; q < ng; q++) {
            float *c = g->C + (i0 + r) * g->ldc + jb + 16 * q;
            __m512 v = _mm512_mul_ps(_mm512_set1_ps(g->alpha), acc[q][r]);
            if (beff != 0.0f)
              v = _mm512_fmadd_ps(_mm512_set1_ps(beff), _mm512_maskz_loadu_ps(wm[q], c),
                                  v);
            _mm512_mask_storeu_ps(c, wm[q], v);
          }
      }
    }
  }
}
#endif

/* The small-M path over a B packed beforehand (dml_cpu_sgemm_pack_b):
 * panels read in order, no transposes; the roundings of the unpacked path
 * (fused or not as the micro-kernel, from zero per KC block, then
 * alpha*acc and beta_eff*C). NRC: the panel width, a constant so the column
 * loop vectorizes. Rows i0 and i0+1 (when two) share each load of B. */
#define DML_GEMV_PACKED_BODY(FMA, NRC)                                              \
  for (int64_t jc = 0; jc < g->N; jc += NC) {                                       \
    int64_t nc = DML_CPU_MIN((int64_t)NC, g->N - jc);                               \
    int64_t ncp = (nc + NRC - 1) / NRC * NRC;                                       \
    for (int64_t pc = 0; pc < g->K; pc += KC) {                                     \
      int64_t kc = DML_CPU_MIN((int64_t)KC, g->K - pc);                             \
      float beff = pc == 0 ? g->beta : 1.0f;                                        \
      const float *blk = g->bpre + jc * g->K + pc * ncp;                            \
      for (int64_t p = 0; p * NRC < nc; p++) {                                      \
        const float *bp = blk + p * kc * NRC;                                       \
        int64_t cols = DML_CPU_MIN((int64_t)NRC, nc - p * NRC);                     \
        for (int64_t i0 = 0; i0 < g->M; i0 += 2) {                                  \
          int two = g->M - i0 > 1;                                                  \
          float acc0[NRC], acc1[NRC];                                               \
          for (int jj = 0; jj < NRC; jj++) acc0[jj] = acc1[jj] = 0.0f;              \
          for (int64_t k = 0; k < kc; k++) {                                        \
            int64_t kk = pc + k;                                                    \
            float a0 = g->ta ? g->A[kk * g->lda + i0] : g->A[i0 * g->lda + kk];     \
            float a1 = !two    ? 0.0f                                               \
                       : g->ta ? g->A[kk * g->lda + i0 + 1]                         \
                               : g->A[(i0 + 1) * g->lda + kk];                      \
            const float *b = bp + k * NRC;                                          \
            for (int jj = 0; jj < NRC; jj++) acc0[jj] = FMA(a0, b[jj], acc0[jj]);   \
            if (two)                                                                \
              for (int jj = 0; jj < NRC; jj++) acc1[jj] = FMA(a1, b[jj], acc1[jj]); \
          }                                                                         \
          for (int r = 0; r <= two; r++) {                                          \
            float *c = g->C + (i0 + r) * g->ldc + jc + p * NRC;                     \
            const float *acc = r ? acc1 : acc0;                                     \
            for (int64_t jj = 0; jj < cols; jj++) {                                 \
              float v = g->alpha * acc[jj];                                         \
              c[jj] = beff == 0.0f ? v : FMA(beff, c[jj], v);                       \
            }                                                                       \
          }                                                                         \
        }                                                                           \
      }                                                                             \
    }                                                                               \
  }

static void gemv_packed_c(const gemm_ctx_t *g) {
  DML_GEMV_PACKED_BODY(DML_GEMM_MULADD, 16)
}
#if DML_CPU_X86
__attribute__((target("avx2,fma"))) static void gemv_packed_fma16(const gemm_ctx_t *g) {
  DML_GEMV_PACKED_BODY(fmaf, 16)
}
__attribute__((target("avx512f,fma"))) static void gemv_packed_fma32(
    const gemm_ctx_t *g) {
  DML_GEMV_PACKED_BODY(fmaf, 32)
}
#endif

/* 1 when the small-M path ran over the packed B (g->bpre set). */
static int gemv_packed(const gemm_ctx_t *g) {
  if (!g->bpre) return 0;
#if DML_CPU_X86
  if (g->uk->fused && g->uk->nr == 32) {
    gemv_packed_fma32(g);
    return 1;
  }
  if (g->uk->fused && g->uk->nr == 16) {
    gemv_packed_fma16(g);
    return 1;
  }
#endif
  if (!g->uk->fused && g->uk->nr == 16) {
    gemv_packed_c(g);
    return 1;
  }
  return 0;
}

static void exact_task(void *vctx, int64_t t, int tid) {
  gemm_ctx_t *g = (gemm_ctx_t *)vctx;
  int64_t j0 = t * g->chunk, j1 = DML_CPU_MIN(g->N, j0 + g->chunk);
  if (j0 >= j1) return;
#if DML_CPU_X86
  if (g->uk->fn == ukernel_avx512) {
    exact_cols_avx512(g, j0, j1);
    return;
  }
  if (g->uk->fused) {
    exact_cols_fma(g, j0, j1);
    return;
  }
#endif
  exact_cols_c(g, j0, j1);
}

/* ---- packed path ------------------------------------------------------ */

static void pack_b_task(void *vctx, int64_t t, int tid) {
  gemm_ctx_t *g = (gemm_ctx_t *)vctx;
  int64_t per = (g->n_panels + 7) / 8;
  int64_t pb = t * per, pe = DML_CPU_MIN(g->n_panels, pb + per);
  if (pb < pe)
    pack_b(g->tb, g->B, g->ldb, g->pc, g->kc, g->jc, g->nc, g->uk->nr, pb, pe, g->bpack);
}

static void macro_task(void *vctx, int64_t t, int tid) {
  gemm_ctx_t *g = (gemm_ctx_t *)vctx;
  const uk_t *uk = g->uk;
  int mr = uk->mr, nr = uk->nr;
  int64_t ic_blk = t / g->nsplit, split = t % g->nsplit;
  int64_t ic = ic_blk * MC, mc = DML_CPU_MIN((int64_t)MC, g->M - ic);
  int64_t pb = split * g->panels_per_split,
          pe = DML_CPU_MIN(g->n_panels, pb + g->panels_per_split);
  if (pb >= pe || mc <= 0) return;
  int64_t kc = g->kc;
  const float *ap;
  if (g->apre) {
    ap = g->apre + g->pc * g->mpad + ic * kc; /* dml_cpu_sgemm_pack_a's layout */
  } else {
    pack_a(g->ta, g->A, g->lda, ic, mc, g->pc, kc, mr, g->apack[tid]);
    ap = g->apack[tid];
  }
  float tmp[MR_MAX * NR_MAX];
  for (int64_t p = pb; p < pe; p++) {
    int64_t jr = p * nr;
    int64_t cols = DML_CPU_MIN((int64_t)nr, g->nc - jr);
    const float *bp = g->bpack + p * kc * nr;
    for (int64_t ir = 0; ir < mc; ir += mr) {
      int64_t rows = DML_CPU_MIN((int64_t)mr, mc - ir);
      const float *apn = ap + (ir / mr) * kc * mr;
      float *c = g->C + (ic + ir) * g->ldc + g->jc + jr;
      if (rows == mr && cols == nr) {
        uk->fn(kc, apn, bp, c, g->ldc, g->alpha, g->beta_eff);
      } else {
        uk->fn(kc, apn, bp, tmp, nr, 1.0f, 0.0f);
        /* Rounded as the full tile's kernel rounds (see the top). */
        for (int64_t i = 0; i < rows; i++)
          for (int64_t j = 0; j < cols; j++) {
            float v = g->alpha * tmp[i * nr + j];
            float *cij = c + i * g->ldc + j;
            if (g->beta_eff == 0.0f)
              *cij = v;
            else
              *cij = uk->fused ? fmaf(g->beta_eff, *cij, v) : v + g->beta_eff * *cij;
          }
      }
    }
  }
}

static size_t round_up(size_t x, size_t a) {
  return (x + a - 1) / a * a;
}

static size_t bpack_floats(int64_t N, int64_t K) {
  int64_t kc = DML_CPU_MIN((int64_t)KC, K);
  int64_t nc = DML_CPU_MIN((int64_t)NC, N);
  return round_up((size_t)kc * round_up((size_t)nc, NR_MAX), ALIGN_F);
}
static size_t apack_floats(int64_t M, int64_t K) {
  int64_t kc = DML_CPU_MIN((int64_t)KC, K);
  int64_t mc = DML_CPU_MIN((int64_t)MC, M);
  /* mc rounded up to any kernel's mr (6 does not divide MR_MAX: 7 rows
   * take 12 with the AVX2 kernel). */
  return round_up((size_t)kc * (round_up((size_t)mc, MR_MAX) + MR_MAX), ALIGN_F);
}

static int use_gemv(int64_t M) {
  return M <= 2;
}

/* ---- operands packed beforehand (weights, at load time) -------------- */

static int64_t round_up64(int64_t x, int64_t a) {
  return (x + a - 1) / a * a;
}

size_t dml_cpu_sgemm_packed_a_floats(int64_t M, int64_t K) {
  if (M <= 0 || K <= 0) return 0;
  return (size_t)(round_up64(M, kernel()->mr) * K);
}

/* For each KC block pc of K in order: pack_a of all M rows, i.e. block pc
 * at pc * M_pad, rows [ic, ic+mc) of it at + ic * kc (ic a multiple of mr,
 * as MC is). */
void dml_cpu_sgemm_pack_a(int ta, int64_t M, int64_t K, const float *A, int64_t lda,
                          float *dst) {
  int mr = kernel()->mr;
  int64_t mpad = round_up64(M, mr);
  for (int64_t pc = 0; pc < K; pc += KC)
    pack_a(ta, A, lda, 0, M, pc, DML_CPU_MIN((int64_t)KC, K - pc), mr, dst + pc * mpad);
}

int dml_cpu_sgemm_isa(void) {
  const uk_t *uk = kernel();
  return !uk->fused ? 1 : uk->nr == 32 ? 3 : 2;
}

int dml_cpu_sgemm_nr(void) {
  return kernel()->nr;
}

int dml_cpu_sgemm_packs(int64_t M) {
  return !use_gemv(M);
}

size_t dml_cpu_sgemm_packed_b_floats(int64_t N, int64_t K) {
  if (N <= 0 || K <= 0) return 0;
  int nr = kernel()->nr;
  size_t n = 0;
  for (int64_t jc = 0; jc < N; jc += NC)
    n += (size_t)(round_up64(DML_CPU_MIN((int64_t)NC, N - jc), nr) * K);
  return n;
}

/* For each NC block jc, each KC block pc: pack_b of all its panels, at
 * jc * K + pc * round_up(nc, nr) (every block before the last jc is NC
 * wide, a multiple of nr). */
void dml_cpu_sgemm_pack_b(int tb, int64_t N, int64_t K, const float *B, int64_t ldb,
                          float *dst) {
  int nr = kernel()->nr;
  for (int64_t jc = 0; jc < N; jc += NC) {
    int64_t nc = DML_CPU_MIN((int64_t)NC, N - jc), ncp = round_up64(nc, nr);
    for (int64_t pc = 0; pc < K; pc += KC)
      pack_b(tb, B, ldb, pc, DML_CPU_MIN((int64_t)KC, K - pc), jc, nc, nr, 0,
             (nc + nr - 1) / nr, dst + jc * K + pc * ncp);
  }
}

size_t dml_cpu_sgemm_scratch(int64_t M, int64_t N, int64_t K, int threads) {
  if (M <= 0 || N <= 0 || K <= 0 || use_gemv(M)) return 0;
  int t = DML_CPU_MAX(1, DML_CPU_MIN(threads, 64));
  return (bpack_floats(N, K) + (size_t)t * apack_floats(M, K) + ALIGN_F) * sizeof(float);
}

void dml_cpu_sgemm(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha,
                   const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                   float *C, int64_t ldc, void *scratch, size_t scratch_bytes) {
  dml_cpu_sgemm_pre(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, NULL, NULL,
                    scratch, scratch_bytes);
}

void dml_cpu_sgemm_pre(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha,
                       const float *A, int64_t lda, const float *B, int64_t ldb,
                       float beta, float *C, int64_t ldc, const float *apre,
                       const float *bpre, void *scratch, size_t scratch_bytes) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0 || alpha == 0.0f) {
    for (int64_t i = 0; i < M; i++) scale_row(C + i * ldc, N, beta);
    return;
  }
  int threads = dml_cpu_num_threads();
  double flops = (double)M * (double)N * (double)K;
  if (flops < DML_CPU_PARALLEL_MIN_MACS) threads = 1;
  gemm_ctx_t g;
  memset(&g, 0, sizeof g);
  g.ta = ta, g.tb = tb, g.M = M, g.N = N, g.K = K, g.alpha = alpha, g.beta = beta;
  g.A = A, g.B = B, g.lda = lda, g.ldb = ldb, g.ldc = ldc, g.C = C;

  g.uk = kernel();
  if (use_gemv(M)) {
    /* M tiny: no packing (B's packed form read as it is when given). */
    g.bpre = bpre;
    if (threads == 1 && gemv_packed(&g)) return;
    int64_t tasks = threads > 1 ? DML_CPU_MIN((int64_t)threads * 4, (N + 63) / 64) : 1;
    if (tasks < 1) tasks = 1;
    g.chunk = (N + tasks - 1) / tasks;
    dml_cpu_parallel_for(tasks, threads, exact_task, &g);
    return;
  }
  /* Carve scratch: aligned B pack, then one A pack per thread that fits. */
  uintptr_t base = ((uintptr_t)scratch + 63) & ~(uintptr_t)63;
  size_t avail = scratch_bytes - (size_t)(base - (uintptr_t)scratch);
  size_t bfl = bpack_floats(N, K), afl = apack_floats(M, K);
  if (avail < (bfl + afl) * sizeof(float)) {
    /* Caller sized scratch for another shape: fall back. */
    g.chunk = N;
    exact_task(&g, 0, 0);
    return;
  }
  g.bpack = (float *)base;
  g.apre = apre;
  g.bpre = bpre;
  g.mpad = round_up64(M, g.uk->mr);
  size_t slots = (avail / sizeof(float) - bfl) / afl;
  if (slots > 64) slots = 64;
  if ((size_t)threads > slots) threads = (int)slots;
  for (int t = 0; t < threads; t++) g.apack[t] = g.bpack + bfl + (size_t)t * afl;

  int nr = g.uk->nr;
  for (int64_t jc = 0; jc < N; jc += NC) {
    g.jc = jc;
    g.nc = DML_CPU_MIN((int64_t)NC, N - jc);
    g.n_panels = (g.nc + nr - 1) / nr;
    g.n_ic = (M + MC - 1) / MC;
    if (threads > 1 && g.n_ic < 2 * threads)
      g.nsplit = DML_CPU_MIN(g.n_panels, (2 * threads + g.n_ic - 1) / g.n_ic);
    else
      g.nsplit = 1;
    g.panels_per_split = (g.n_panels + g.nsplit - 1) / g.nsplit;
    for (int64_t pc = 0; pc < K; pc += KC) {
      g.pc = pc;
      g.kc = DML_CPU_MIN((int64_t)KC, K - pc);
      g.beta_eff = pc == 0 ? beta : 1.0f;
      if (bpre)
        g.bpack = (float *)(uintptr_t)(bpre + jc * K + pc * round_up64(g.nc, nr));
      else if (threads > 1)
        dml_cpu_parallel_for(8, threads, pack_b_task, &g);
      else
        pack_b(tb, B, ldb, pc, g.kc, jc, g.nc, nr, 0, g.n_panels, g.bpack);
      dml_cpu_parallel_for(g.n_ic * g.nsplit, threads, macro_task, &g);
    }
  }
}
