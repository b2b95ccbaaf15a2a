/*
 * cpu_nchwc.c — f32 convolutions in the channel-blocked layout NCHW16c
 * (dml_cpu.h, "NCHWc"): an activation [N, C, H, W] stored as
 * [N][C/16][H][W][16], 16 channels per AVX-512 vector. The CPU executor's
 * layout pass (runtime/rt_cpu_fuse.c) keeps the values between runs of
 * such convolutions blocked; the kernels here read X and write Y either
 * blocked or NCHW (a run's edges: the image is reordered through the
 * caller's work buffer).
 *
 * - Pointwise (1x1, stride 1, no pads, group 1): tiles of 12 positions x
 *   32 output channels (24 accumulators in registers; 24 x 16 and 4-position
 *   tails); for each input channel c in order one vector of 16 output
 *   channels' weights times the position's X value broadcast, fused
 *   multiply-adds from 0. Weights packed [M/16][C][16].
 * - Depthwise (group == C == M, kernels up to 7x7, strides 1-2, pads
 *   below the kernel size): per 16-channel block, each output a chain of
 *   fused multiply-adds over the taps in (kh, kw) order from 0, 16
 *   channels per vector, a padded tap adding 0 * w (as the NCHW kernels).
 *   3x3 with equal strides (dw3_plane): straight from the unpadded blocked
 *   plane (an NCHW X is reordered into the work buffer first), strips of
 *   12 outputs of one row (4 at the row's end) with the 9 weights and the
 *   accumulators in registers, each input vector of the 3 kernel rows
 *   loaded once and used for every output and tap it feeds; the strips
 *   that touch a pad read a zero vector for the padded taps. Other kernels:
 *   from a zero-padded copy of the plane, 8 outputs at a time. Weights
 *   packed [C/16][KH][KW][16].
 * The epilogue (bias, BatchNormalization's scale and shift, residual, Relu)
 * is cpu_conv.c's: add, multiply then add unfused, add, max(0, v).
 *
 * AVX-512 (x86-64 Linux with GCC, DML_CPU_X86) only: elsewhere
 * dml_cpu_nchwc_available() is 0 and the executor keeps NCHW.
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"

#if DML_CPU_X86
#include <immintrin.h>
#endif

/* Whether the executor plans NCHWc without DMLC_CPU_NCHWC set (docs/cpu.md,
 * "Convolutions", has the measurements behind it). */
#define DML_CPU_NCHWC_DEFAULT 0

/* Geometry of an NCHWc convolution. */
typedef struct {
  int kind; /* DML_CPU_NCHWC_POINTWISE or DML_CPU_NCHWC_DEPTHWISE */
  int64_t C, M, H, W, OH, OW, KH, KW, sh, sw, ph, pw;
} nc_geo_t;

/* Fills g from W's dims, the attributes and X's C, H, W; 1 when the
 * convolution has an NCHWc kernel. */
static int nc_geo(const int64_t wd[4], const dml_attr_t *attrs, uint32_t n, int64_t C,
                  int64_t H, int64_t W, nc_geo_t *g) {
  memset(g, 0, sizeof *g);
  size_t nks, ns, nd, np;
  const int64_t *ks = dml_attr_ints(attrs, n, "kernel_shape", &nks);
  const int64_t *st = dml_attr_ints(attrs, n, "strides", &ns);
  const int64_t *dl = dml_attr_ints(attrs, n, "dilations", &nd);
  const int64_t *pads = dml_attr_ints(attrs, n, "pads", &np);
  const char *ap = dml_attr_string(attrs, n, "auto_pad", "NOTSET");
  int64_t group = dml_attr_int(attrs, n, "group", 1);
  int valid = strcmp(ap, "VALID") == 0;
  if ((!valid && strcmp(ap, "NOTSET") != 0) ||
      (ks && (nks != 2 || ks[0] != wd[2] || ks[1] != wd[3])) || (st && ns != 2) ||
      (pads && np != 4) || (dl && (nd != 2 || dl[0] != 1 || dl[1] != 1)))
    return 0;
  if (C <= 0 || H <= 0 || W <= 0 || C % DML_CPU_NCHWC_BLOCK ||
      wd[0] % DML_CPU_NCHWC_BLOCK)
    return 0;
  g->C = C, g->M = wd[0], g->H = H, g->W = W, g->KH = wd[2], g->KW = wd[3];
  g->sh = st ? st[0] : 1, g->sw = st ? st[1] : 1;
  int64_t pe_h = 0, pe_w = 0;
  if (pads && !valid) g->ph = pads[0], g->pw = pads[1], pe_h = pads[2], pe_w = pads[3];
  if (g->sh < 1 || g->sw < 1 || g->sh > 2 || g->sw > 2 || g->ph < 0 || g->pw < 0 ||
      pe_h < 0 || pe_w < 0 || g->ph >= g->KH || g->pw >= g->KW || pe_h >= g->KH ||
      pe_w >= g->KW)
    return 0;
  g->OH = (H + g->ph + pe_h - g->KH) / g->sh + 1;
  g->OW = (W + g->pw + pe_w - g->KW) / g->sw + 1;
  if (H + g->ph + pe_h < g->KH || W + g->pw + pe_w < g->KW) return 0;
  if (group == 1 && wd[1] == C && g->KH == 1 && g->KW == 1 && g->sh == 1 && g->sw == 1 &&
      g->ph == 0 && g->pw == 0 && pe_h == 0 && pe_w == 0) {
    g->kind = DML_CPU_NCHWC_POINTWISE;
    return 1;
  }
  if (group == C && g->M == C && wd[1] == 1 && g->KH <= 7 && g->KW <= 7) {
    g->kind = DML_CPU_NCHWC_DEPTHWISE;
    return 1;
  }
  return 0;
}

int dml_cpu_nchwc_available(void) {
#if DML_CPU_X86
  const char *e = getenv("DMLC_CPU_NCHWC");
  if (!(e ? strcmp(e, "0") != 0 : DML_CPU_NCHWC_DEFAULT)) return 0;
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
#else
  return 0;
#endif
}

int dml_cpu_nchwc_conv_kind(const dml_tensor_t *w, const dml_attr_t *attrs,
                            uint32_t n_attrs, int64_t C, int64_t H, int64_t W) {
  nc_geo_t g;
  if (!w || w->dtype != DML_DTYPE_F32 || w->rank != 4) return 0;
  return nc_geo(w->dims, attrs, n_attrs, C, H, W, &g) ? g.kind : 0;
}

/* Whether a depthwise Conv runs the direct 3x3 kernel (dw3_plane: 3x3,
 * equal strides) rather than the zero-padded plane. */
static int nc_dw3_direct(const nc_geo_t *g) {
  return g->kind == DML_CPU_NCHWC_DEPTHWISE && g->KH == 3 && g->KW == 3 && g->sh == g->sw;
}

/* Work floats per thread of a call with this geometry and layout: the
 * depthwise kernel's zero-padded plane of one 16-channel block (the X
 * reorder goes there; the direct 3x3 kernel: one blocked plane when X is
 * NCHW, else none) or, pointwise, an image of X when X is NCHW; plus an
 * image of Y when Y is NCHW. */
static size_t nc_work(const nc_geo_t *g, int layout) {
  size_t n = 0;
  if (nc_dw3_direct(g)) {
    if (!(layout & DML_CPU_NCHWC_X)) n += (size_t)(16 * g->H * g->W);
  } else if (g->kind == DML_CPU_NCHWC_DEPTHWISE) {
    int64_t Hp = (g->OH - 1) * g->sh + g->KH, Wp = (g->OW - 1) * g->sw + g->KW;
    if (Hp < g->H + g->ph) Hp = g->H + g->ph;
    if (Wp < g->W + g->pw) Wp = g->W + g->pw;
    n += (size_t)(16 * Hp * Wp);
  } else if (!(layout & DML_CPU_NCHWC_X)) {
    n += (size_t)(g->C * g->H * g->W);
  }
  if (!(layout & DML_CPU_NCHWC_Y)) n += (size_t)(g->M * g->OH * g->OW);
  return n;
}

size_t dml_cpu_nchwc_work_floats(const dml_tensor_t *w, const dml_attr_t *attrs,
                                 uint32_t n_attrs, int64_t C, int64_t H, int64_t W,
                                 int layout) {
  nc_geo_t g;
  if (!w || w->dtype != DML_DTYPE_F32 || w->rank != 4 ||
      !nc_geo(w->dims, attrs, n_attrs, C, H, W, &g))
    return 0;
  return nc_work(&g, layout);
}

size_t dml_cpu_nchwc_prepack_bytes(const dml_tensor_t *w) {
  if (!w || w->dtype != DML_DTYPE_F32 || w->rank != 4 || w->dims[0] % DML_CPU_NCHWC_BLOCK)
    return 0;
  return (size_t)(w->dims[0] * w->dims[1] * w->dims[2] * w->dims[3]) * sizeof(float);
}

void dml_cpu_nchwc_prepack(const dml_tensor_t *w, float *dst) {
  if (!dml_cpu_nchwc_prepack_bytes(w)) return;
  const float *src = (const float *)w->data;
  int64_t M = w->dims[0], K = w->dims[1] * w->dims[2] * w->dims[3];
  /* [M/16][K][16]: pointwise K = C (input channels); depthwise K = KH*KW
   * (the channel block is the output block) */
  for (int64_t m = 0; m < M; m++)
    for (int64_t k = 0; k < K; k++)
      dst[(m / 16) * K * 16 + k * 16 + m % 16] = src[m * K + k];
}

#if DML_CPU_X86
/* The epilogue's per-call pointers. */
typedef struct {
  const float *b, *scale, *shift;
  int relu;
} nc_ep_t;

/* cpu_conv.c's epilogue steps on the vector of 16 channels from m0: add
 * the bias, multiply and add (unfused), add the residual r (NULL: none),
 * max(0, v) (keeps NaN and -0). */
__attribute__((target("avx512f"), always_inline)) static inline __m512 nc_ep(
    const nc_ep_t *e, int64_t m0, __m512 v, const float *r) {
  if (e->b) v = _mm512_add_ps(v, _mm512_loadu_ps(e->b + m0));
  if (e->scale)
    v = _mm512_add_ps(_mm512_mul_ps(v, _mm512_loadu_ps(e->scale + m0)),
                      _mm512_loadu_ps(e->shift + m0));
  if (r) v = _mm512_add_ps(v, _mm512_loadu_ps(r));
  if (e->relu) v = _mm512_max_ps(_mm512_setzero_ps(), v);
  return v;
}

/* One pointwise tile: P positions (from x, y, res: the image's blocked
 * planes at the tile's first position) x NV blocks of 16 output channels
 * from block ob. w: the packed weights [M/16][C][16]. */
__attribute__((target("avx512f"), always_inline)) static inline void pw_tile(
    const int NV, const int P, const float *restrict x, int64_t HW, int64_t C,
    const float *restrict w, float *restrict y, const float *res, const nc_ep_t *e,
    int64_t ob) {
  __m512 acc[2][24];
#pragma GCC unroll 2
  for (int v = 0; v < NV; v++)
#pragma GCC unroll 24
    for (int p = 0; p < P; p++) acc[v][p] = _mm512_setzero_ps();
  const float *wb = w + ob * C * 16;
  for (int64_t cb = 0; cb < C / 16; cb++) {
    const float *xp = x + cb * HW * 16;
#pragma GCC unroll 2
    for (int ci = 0; ci < 16; ci++) {
      __m512 wv[2];
#pragma GCC unroll 2
      for (int v = 0; v < NV; v++)
        wv[v] = _mm512_loadu_ps(wb + v * C * 16 + (cb * 16 + ci) * 16);
#pragma GCC unroll 24
      for (int p = 0; p < P; p++) {
        __m512 bx = _mm512_set1_ps(xp[p * 16 + ci]);
#pragma GCC unroll 2
        for (int v = 0; v < NV; v++) acc[v][p] = _mm512_fmadd_ps(bx, wv[v], acc[v][p]);
      }
    }
  }
#pragma GCC unroll 2
  for (int v = 0; v < NV; v++) {
    int64_t at = (ob + v) * HW * 16;
#pragma GCC unroll 24
    for (int p = 0; p < P; p++)
      _mm512_storeu_ps(y + at + p * 16, nc_ep(e, (ob + v) * 16, acc[v][p],
                                              res ? res + at + p * 16 : NULL));
  }
}

#define PW_TILE_FN(NV, P)                                                      \
  __attribute__((target("avx512f"))) static void pw_tile_##NV##_##P(           \
      const float *restrict x, int64_t HW, int64_t C, const float *restrict w, \
      float *restrict y, const float *res, const nc_ep_t *e, int64_t ob) {     \
    pw_tile(NV, P, x, HW, C, w, y, res, e, ob);                                \
  }
PW_TILE_FN(2, 12)
PW_TILE_FN(2, 4)
PW_TILE_FN(2, 1)
PW_TILE_FN(1, 24)
PW_TILE_FN(1, 4)
PW_TILE_FN(1, 1)

/* One image, blocked to blocked: x [C/16][HW][16], y and res [M/16][HW][16]. */
__attribute__((target("avx512f"))) static void pw_image(const nc_geo_t *g, const float *x,
                                                        const float *w, float *y,
                                                        const float *res,
                                                        const nc_ep_t *e) {
  int64_t HW = g->H * g->W, MB = g->M / 16;
  for (int64_t ob = 0; ob < MB;) {
    int two = ob + 2 <= MB;
    int64_t p = 0;
    if (two) {
      for (; p + 12 <= HW; p += 12)
        pw_tile_2_12(x + p * 16, HW, g->C, w, y + p * 16, res ? res + p * 16 : NULL, e,
                     ob);
      for (; p + 4 <= HW; p += 4)
        pw_tile_2_4(x + p * 16, HW, g->C, w, y + p * 16, res ? res + p * 16 : NULL, e,
                    ob);
      for (; p < HW; p++)
        pw_tile_2_1(x + p * 16, HW, g->C, w, y + p * 16, res ? res + p * 16 : NULL, e,
                    ob);
      ob += 2;
    } else {
      for (; p + 24 <= HW; p += 24)
        pw_tile_1_24(x + p * 16, HW, g->C, w, y + p * 16, res ? res + p * 16 : NULL, e,
                     ob);
      for (; p + 4 <= HW; p += 4)
        pw_tile_1_4(x + p * 16, HW, g->C, w, y + p * 16, res ? res + p * 16 : NULL, e,
                    ob);
      for (; p < HW; p++)
        pw_tile_1_1(x + p * 16, HW, g->C, w, y + p * 16, res ? res + p * 16 : NULL, e,
                    ob);
      ob += 1;
    }
  }
}

/* 16x16 transpose in registers: r[i] lane j -> r[j] lane i. */
__attribute__((target("avx512f"), always_inline)) static inline void tr16(__m512 r[16]) {
  __m512 t[16];
#pragma GCC unroll 8
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_castpd_ps(
        _mm512_unpacklo_pd(_mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
    r[i + 1] = _mm512_castpd_ps(
        _mm512_unpackhi_pd(_mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
    r[i + 2] = _mm512_castpd_ps(
        _mm512_unpacklo_pd(_mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
    r[i + 3] = _mm512_castpd_ps(
        _mm512_unpackhi_pd(_mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
  }
  /* r[4q + s] now holds rows 4q..4q+3 of column s + 4k in 128-bit lane k */
#pragma GCC unroll 4
  for (int i = 0; i < 4; i++) {
    __m512 a = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
    __m512 b = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xdd);
    __m512 c = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0x88);
    __m512 d = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0xdd);
    t[i] = _mm512_shuffle_f32x4(a, c, 0x88);
    t[i + 8] = _mm512_shuffle_f32x4(a, c, 0xdd);
    t[i + 4] = _mm512_shuffle_f32x4(b, d, 0x88);
    t[i + 12] = _mm512_shuffle_f32x4(b, d, 0xdd);
  }
#pragma GCC unroll 16
  for (int i = 0; i < 16; i++) r[i] = t[i];
}

/* Outputs [ow0, ow0 + cnt) (cnt <= 8; 8 when full) of row oh from the
 * zero-padded plane xp (Wp columns; every tap inside it): each output's
 * taps in (kh, kw) order from 0, fused multiply-adds (a padded tap adds
 * 0 * w, as the NCHW kernels). 3x3 weights in registers. */
__attribute__((target("avx512f"), always_inline)) static inline void dw_block(
    const nc_geo_t *g, const float *xp, int64_t Wp, const float *wb, float *yrow,
    const float *rrow, const nc_ep_t *e, int64_t m0, int64_t oh, int64_t ow0, int cnt,
    const int full) {
  __m512 acc[8];
#pragma GCC unroll 8
  for (int j = 0; j < 8; j++) acc[j] = _mm512_setzero_ps();
  int64_t sw16 = g->sw * 16, W16 = Wp * 16;
  const float *xo = xp + (oh * g->sh * Wp + ow0 * g->sw) * 16;
  if (g->KH == 3 && g->KW == 3) {
#pragma GCC unroll 3
    for (int kh = 0; kh < 3; kh++)
#pragma GCC unroll 3
      for (int kw = 0; kw < 3; kw++) {
        __m512 wv = _mm512_loadu_ps(wb + (kh * 3 + kw) * 16);
#pragma GCC unroll 8
        for (int j = 0; j < 8; j++)
          if (full || j < cnt)
            acc[j] = _mm512_fmadd_ps(_mm512_loadu_ps(xo + kh * W16 + kw * 16 + j * sw16),
                                     wv, acc[j]);
      }
  } else {
    for (int64_t kh = 0; kh < g->KH; kh++)
      for (int64_t kw = 0; kw < g->KW; kw++) {
        __m512 wv = _mm512_loadu_ps(wb + (kh * g->KW + kw) * 16);
#pragma GCC unroll 8
        for (int j = 0; j < 8; j++)
          if (full || j < cnt)
            acc[j] = _mm512_fmadd_ps(_mm512_loadu_ps(xo + kh * W16 + kw * 16 + j * sw16),
                                     wv, acc[j]);
      }
  }
#pragma GCC unroll 8
  for (int j = 0; j < 8; j++)
    if (full || j < cnt)
      _mm512_storeu_ps(yrow + (ow0 + j) * 16,
                       nc_ep(e, m0, acc[j], rrow ? rrow + (ow0 + j) * 16 : NULL));
}

__attribute__((target("avx512f"))) static void dw_block8(
    const nc_geo_t *g, const float *xp, int64_t Wp, const float *wb, float *yrow,
    const float *rrow, const nc_ep_t *e, int64_t m0, int64_t oh, int64_t ow0) {
  dw_block(g, xp, Wp, wb, yrow, rrow, e, m0, oh, ow0, 8, 1);
}

__attribute__((target("avx512f"))) static void dw_block_n(
    const nc_geo_t *g, const float *xp, int64_t Wp, const float *wb, float *yrow,
    const float *rrow, const nc_ep_t *e, int64_t m0, int64_t oh, int64_t ow0, int cnt) {
  dw_block(g, xp, Wp, wb, yrow, rrow, e, m0, oh, ow0, cnt, 0);
}

/* 16 x 16 floats from src (rows ss floats apart) to dst (rows ds apart),
 * transposed, in registers. */
__attribute__((target("avx512f"), always_inline)) static inline void tr16_copy(
    const float *src, int64_t ss, float *dst, int64_t ds) {
  __m512 r[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_ps(src + i * ss);
  tr16(r);
#pragma GCC unroll 16
  for (int i = 0; i < 16; i++) _mm512_storeu_ps(dst + i * ds, r[i]);
}

/* One image [C][HW] (NCHW) to [C/16][HW][16] (to 1) or back (to 0). */
__attribute__((target("avx512f"))) static void nc_reorder(const float *src, float *dst,
                                                          int64_t C, int64_t HW, int to) {
  for (int64_t cb = 0; cb < C / 16; cb++) {
    const float *s = src + cb * 16 * HW;
    float *d = dst + cb * 16 * HW;
    int64_t p = 0;
    /* to blocked: rows are channels (16 positions each); back: rows are
     * positions (16 channels each) */
    if (to)
      for (; p + 16 <= HW; p += 16) tr16_copy(s + p, HW, d + p * 16, 16);
    else
      for (; p + 16 <= HW; p += 16) tr16_copy(s + p * 16, 16, d + p, HW);
    for (; p < HW; p++)
      for (int i = 0; i < 16; i++) {
        if (to)
          d[p * 16 + i] = s[i * HW + p];
        else
          d[i * HW + p] = s[p * 16 + i];
      }
  }
}

/* Zeros for the direct 3x3 kernel: a padded row of a strip (the widest,
 * 12 outputs at stride 2, reads 25 input vectors) and a padded tap. */
static const float nc_zeros[25 * 16] __attribute__((aligned(64)));

/* One strip of the direct 3x3 kernel: NB outputs of one output row with
 * stride S. Each input vector of a kernel row is loaded once and feeds
 * every output and tap that reads it (input column t of the strip feeds
 * output j through tap kw when t = j * S + kw), so each output's taps
 * still run in (kh, kw) order from 0 as fused multiply-adds: the NCHW
 * kernels' order. Unchecked (CK 0): every tap inside X's columns, rp[kh]
 * points at the strip's first input column of kernel row kh (nc_zeros for
 * a padded row); all NB outputs stored. Checked (CK 1): rp[kh] is kernel
 * row kh's input row (NULL: a padded row), W its width, iw0 the strip's
 * first input column (may be < 0); a tap outside X reads nc_zeros (adds
 * 0 * w, as the NCHW kernels); the first cnt outputs stored
 * (the others are computed from in-bounds or zero inputs and dropped). */
__attribute__((target("avx512f"), always_inline)) static inline void dw3_strip(
    const int S, const int NB, const int CK, const float *const rp[3], int64_t W,
    int64_t iw0, int cnt, const float *wb, float *yo, const float *ro, const nc_ep_t *e,
    int64_t m0) {
  __m512 wr[9], acc[12];
#pragma GCC unroll 9
  for (int t = 0; t < 9; t++) wr[t] = _mm512_loadu_ps(wb + t * 16);
#pragma GCC unroll 12
  for (int j = 0; j < NB; j++) acc[j] = _mm512_setzero_ps();
  /* checked: each row's width (0: a padded row) */
  int64_t lim[3];
  if (CK)
    for (int kh = 0; kh < 3; kh++) lim[kh] = rp[kh] ? W : 0;
#pragma GCC unroll 3
  for (int kh = 0; kh < 3; kh++) {
#pragma GCC unroll 25
    for (int t = 0; t < (NB - 1) * S + 3; t++) {
      const float *p;
      if (CK) {
        int64_t iw = iw0 + t;
        p = (uint64_t)iw < (uint64_t)lim[kh] ? rp[kh] + iw * 16 : nc_zeros;
      } else {
        p = rp[kh] + t * 16;
      }
      __m512 xv = _mm512_loadu_ps(p);
#pragma GCC unroll 3
      for (int kw = 0; kw < 3; kw++) {
        int d = t - kw;
        if (d >= 0 && d % S == 0 && d / S < NB)
          acc[d / S] = _mm512_fmadd_ps(xv, wr[kh * 3 + kw], acc[d / S]);
      }
    }
  }
  /* the sums complete here: without the barrier GCC sinks each chain into
   * its conditional store and keeps every loaded input live (spills) */
#pragma GCC unroll 12
  for (int j = 0; j < NB; j++) __asm__("" : "+v"(acc[j]));
#pragma GCC unroll 12
  for (int j = 0; j < NB; j++)
    if (!CK || j < cnt)
      _mm512_storeu_ps(yo + j * 16, nc_ep(e, m0, acc[j], ro ? ro + j * 16 : NULL));
}

#define DW3_STRIP_FN(S, NB, CK)                                                   \
  __attribute__((target("avx512f"))) static void dw3_strip_##S##_##NB##_##CK(     \
      const float *const rp[3], int64_t W, int64_t iw0, int cnt, const float *wb, \
      float *yo, const float *ro, const nc_ep_t *e, int64_t m0) {                 \
    dw3_strip(S, NB, CK, rp, W, iw0, cnt, wb, yo, ro, e, m0);                     \
  }
DW3_STRIP_FN(1, 12, 0)
DW3_STRIP_FN(1, 12, 1)
DW3_STRIP_FN(1, 4, 0)
DW3_STRIP_FN(1, 4, 1)
DW3_STRIP_FN(2, 12, 0)
DW3_STRIP_FN(2, 12, 1)
DW3_STRIP_FN(2, 4, 0)
DW3_STRIP_FN(2, 4, 1)

typedef void (*dw3_strip_fn)(const float *const[3], int64_t, int64_t, int, const float *,
                             float *, const float *, const nc_ep_t *, int64_t);

/* One 16-channel block plane of a 3x3 depthwise Conv with equal strides S
 * (1 or 2), straight from the unpadded blocked plane xb ([H][W][16]): per
 * output row, strips of 12 or 4 outputs; a strip whose taps stay inside
 * X's columns runs unchecked, the others (the row's edges) checked.
 * yb, rb: [OH][OW][16]. */
__attribute__((target("avx512f"))) static void dw3_plane(const nc_geo_t *g,
                                                         const float *xb, const float *wb,
                                                         float *yb, const float *rb,
                                                         const nc_ep_t *e, int64_t m0) {
  const int S = (int)g->sh;
  /* [S][NB 12][CK] */
  const dw3_strip_fn fn[2][2][2] = {
      {{dw3_strip_1_4_0, dw3_strip_1_4_1}, {dw3_strip_1_12_0, dw3_strip_1_12_1}},
      {{dw3_strip_2_4_0, dw3_strip_2_4_1}, {dw3_strip_2_12_0, dw3_strip_2_12_1}}};
  /* inside outputs: [a, b), ow * S - pw >= 0 and ow * S - pw + 2 < W */
  int64_t a = (g->pw + S - 1) / S,
          b = g->W - 3 + g->pw >= 0 ? (g->W - 3 + g->pw) / S + 1 : 0;
  if (b > g->OW) b = g->OW;
  for (int64_t oh = 0; oh < g->OH; oh++) {
    const float *rows[3];
    for (int kh = 0; kh < 3; kh++) {
      int64_t ih = oh * S - g->ph + kh;
      rows[kh] = ih >= 0 && ih < g->H ? xb + ih * g->W * 16 : NULL;
    }
    float *yrow = yb + oh * g->OW * 16;
    const float *rrow = rb ? rb + oh * g->OW * 16 : NULL;
    for (int64_t ow = 0; ow < g->OW;) {
      const float *ro = rrow ? rrow + ow * 16 : NULL;
      int64_t iw0 = ow * S - g->pw;
      int big, ck, cnt;
      if (ow >= a && ow + 4 <= b) { /* inside */
        big = ow + 12 <= b, ck = 0, cnt = big ? 12 : 4;
      } else {
        big = ow + 12 <= g->OW, ck = 1, cnt = g->OW - ow < 4 ? (int)(g->OW - ow) : 4;
        if (big) cnt = 12;
      }
      if (ck) {
        fn[S - 1][big][1](rows, g->W, iw0, cnt, wb, yrow + ow * 16, ro, e, m0);
      } else {
        const float *rp[3];
        for (int kh = 0; kh < 3; kh++) rp[kh] = rows[kh] ? rows[kh] + iw0 * 16 : nc_zeros;
        fn[S - 1][big][0](rp, g->W, iw0, cnt, wb, yrow + ow * 16, ro, e, m0);
      }
      ow += cnt;
    }
  }
}

/* The padded plane of one 16-channel block: Hp x Wp positions, X's H x W at
 * (ph, pw), zeros around; from a blocked plane xb ([H][W][16]) or, when
 * nchw, from X's 16 NCHW channel planes at xb (H*W apart). */
__attribute__((target("avx512f"))) static void dw_pad(const nc_geo_t *g, const float *xb,
                                                      int nchw, float *xp, int64_t Hp,
                                                      int64_t Wp) {
  __m512 z = _mm512_setzero_ps();
  int64_t HW = g->H * g->W;
  for (int64_t r = 0; r < Hp; r++) {
    float *d = xp + r * Wp * 16;
    int64_t ih = r - g->ph;
    if (ih < 0 || ih >= g->H) {
      for (int64_t q = 0; q < Wp; q++) _mm512_storeu_ps(d + q * 16, z);
      continue;
    }
    for (int64_t q = 0; q < g->pw; q++) _mm512_storeu_ps(d + q * 16, z);
    for (int64_t q = g->pw + g->W; q < Wp; q++) _mm512_storeu_ps(d + q * 16, z);
    d += g->pw * 16;
    if (!nchw) {
      memcpy(d, xb + ih * g->W * 16, (size_t)g->W * 16 * sizeof(float));
      continue;
    }
    const float *s = xb + ih * g->W;
    int64_t p = 0;
    for (; p + 16 <= g->W; p += 16) tr16_copy(s + p, HW, d + p * 16, 16);
    for (; p < g->W; p++)
      for (int i = 0; i < 16; i++) d[p * 16 + i] = s[i * HW + p];
  }
}

/* One image of a depthwise Conv: X blocked ([C/16][H][W][16]) or, when
 * nchw, NCHW; y and res [C/16][OH][OW][16]; pad: 16 x Hp x Wp floats. */
__attribute__((target("avx512f"))) static void dw_image(const nc_geo_t *g, const float *x,
                                                        int nchw, const float *w,
                                                        float *y, const float *res,
                                                        const nc_ep_t *e, float *pad) {
  int64_t Hp = (g->OH - 1) * g->sh + g->KH, Wp = (g->OW - 1) * g->sw + g->KW;
  if (Hp < g->H + g->ph) Hp = g->H + g->ph;
  if (Wp < g->W + g->pw) Wp = g->W + g->pw;
  for (int64_t cb = 0; cb < g->C / 16; cb++) {
    const float *wb = w + cb * g->KH * g->KW * 16;
    float *yb = y + cb * g->OH * g->OW * 16;
    const float *rb = res ? res + cb * g->OH * g->OW * 16 : NULL;
    if (nc_dw3_direct(g)) {
      const float *xb = x + cb * g->H * g->W * 16;
      if (nchw) {
        nc_reorder(xb, pad, 16, g->H * g->W, 1);
        xb = pad;
      }
      dw3_plane(g, xb, wb, yb, rb, e, cb * 16);
      continue;
    }
    dw_pad(g, x + cb * g->H * g->W * 16, nchw, pad, Hp, Wp);
    for (int64_t oh = 0; oh < g->OH; oh++) {
      float *yrow = yb + oh * g->OW * 16;
      const float *rrow = rb ? rb + oh * g->OW * 16 : NULL;
      int64_t ow = 0;
      for (; ow + 8 <= g->OW; ow += 8)
        dw_block8(g, pad, Wp, wb, yrow, rrow, e, cb * 16, oh, ow);
      if (ow < g->OW)
        dw_block_n(g, pad, Wp, wb, yrow, rrow, e, cb * 16, oh, ow, (int)(g->OW - ow));
    }
  }
}

typedef struct {
  const nc_geo_t *g;
  const float *x, *w, *res;
  float *y, *work;
  size_t work_floats;
  int layout;
  nc_ep_t e;
} nc_run_t;

static void nc_image(void *ctx, int64_t i, int tid) {
  const nc_run_t *r = (const nc_run_t *)ctx;
  const nc_geo_t *g = r->g;
  size_t xs = (size_t)(g->C * g->H * g->W), ys = (size_t)(g->M * g->OH * g->OW);
  const float *x = r->x + i * xs;
  float *y = r->y + i * ys, *wk = r->work ? r->work + (size_t)tid * r->work_floats : NULL;
  const float *res = r->res ? r->res + i * ys : NULL;
  int xnchw = !(r->layout & DML_CPU_NCHWC_X);
  float *yb = y;
  if (g->kind == DML_CPU_NCHWC_POINTWISE) {
    const float *xb = x;
    if (xnchw) {
      nc_reorder(x, wk, g->C, g->H * g->W, 1);
      xb = wk;
      wk += xs;
    }
    if (!(r->layout & DML_CPU_NCHWC_Y)) yb = wk;
    pw_image(g, xb, r->w, yb, res, &r->e);
  } else {
    float *pad = wk;
    wk += nc_work(g, r->layout | DML_CPU_NCHWC_Y);
    if (!(r->layout & DML_CPU_NCHWC_Y)) yb = wk;
    dw_image(g, x, xnchw, r->w, yb, res, &r->e, pad);
  }
  if (yb != y) nc_reorder(yb, y, g->M, g->OH * g->OW, 0);
}
#endif /* DML_CPU_X86 */

dml_status_t dml_cpu_nchwc_conv(const dml_cpu_call_t *c, const dml_cpu_epilogue_t *ep) {
  const dml_tensor_t *x = &c->inputs[0], *w = &c->inputs[1], *b = dml_cpu_in(c, 2);
  const dml_tensor_t *y = &c->outputs[0];
  if (x->dtype != DML_DTYPE_F32 || w->dtype != DML_DTYPE_F32 ||
      y->dtype != DML_DTYPE_F32 || (b && b->dtype != DML_DTYPE_F32))
    return dml_cpu_err_dtype(c, "NCHWc Conv", x->dtype);
  if (x->rank != 4 || w->rank != 4 || y->rank != 4)
    return dml_cpu_err_shapes(c, "an NCHWc Conv is 2-D: X, W and Y of rank 4");
  nc_geo_t g;
  if (!nc_geo(w->dims, c->attrs, c->n_attrs, x->dims[1], x->dims[2], x->dims[3], &g))
    return dml_cpu_error(
        c, DML_STATUS_UNIMPLEMENTED,
        "no NCHWc kernel for this Conv (1x1 stride 1 unpadded group 1, or "
        "depthwise up to 7x7 with strides 1-2; channels multiples of 16)");
  if (y->dims[0] != x->dims[0] || y->dims[1] != g.M || y->dims[2] != g.OH ||
      y->dims[3] != g.OW)
    return dml_cpu_err_shapes(c, "Y must be [N, %lld, %lld, %lld]", (long long)g.M,
                              (long long)g.OH, (long long)g.OW);
  if (b && (b->rank != 1 || b->dims[0] != g.M))
    return dml_cpu_err_shapes(c, "B must be [%lld]", (long long)g.M);
  if (!ep->packed)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "an NCHWc Conv needs its weights from dml_cpu_nchwc_prepack");
  if (ep->residual && !(ep->nchwc & DML_CPU_NCHWC_Y))
    return dml_cpu_error(c, DML_STATUS_UNIMPLEMENTED,
                         "an NCHWc Conv adds a residual only with a blocked Y");
  if ((!ep->scale) != (!ep->shift))
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "a fused epilogue has both scale and shift or neither");
  size_t need = nc_work(&g, ep->nchwc);
  if (need && (!ep->work || ep->work_floats < need || ep->work_threads < 1))
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "this NCHWc Conv needs %zu work floats per thread, %zu given",
                         need, ep->work ? ep->work_floats : (size_t)0);
#if DML_CPU_X86
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f"))
    return dml_cpu_error(c, DML_STATUS_UNIMPLEMENTED, "NCHWc kernels need AVX-512");
  nc_run_t r;
  memset(&r, 0, sizeof r);
  r.g = &g;
  r.x = (const float *)x->data, r.w = (const float *)ep->packed, r.res = ep->residual;
  r.y = (float *)y->data, r.work = ep->work, r.work_floats = ep->work_floats;
  r.layout = ep->nchwc;
  r.e.b = b ? (const float *)b->data : NULL;
  r.e.scale = ep->scale, r.e.shift = ep->shift, r.e.relu = ep->relu;
  int64_t N = x->dims[0];
  double macs = (double)N * (double)(g.M * g.OH * g.OW) *
                (double)(g.kind == DML_CPU_NCHWC_POINTWISE ? g.C : g.KH * g.KW);
  int threads = dml_cpu_num_threads();
  if (need && threads > ep->work_threads) threads = ep->work_threads;
  if (macs < DML_CPU_CONV_PARALLEL_MIN_MACS || N < 2) threads = 1;
  if (threads <= 1) {
    for (int64_t i = 0; i < N; i++) nc_image(&r, i, 0);
  } else {
    dml_cpu_parallel_for(N, threads, nc_image, &r);
  }
  return DML_OK;
#else
  return dml_cpu_error(c, DML_STATUS_UNIMPLEMENTED,
                       "NCHWc kernels need AVX-512 (x86-64)");
#endif
}
