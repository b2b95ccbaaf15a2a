/*
 * cpu_pool.c — MaxPool (ONNX opset 12), AveragePool (opset 11, dilations
 * as in opset 19 accepted), GlobalAveragePool and GlobalMaxPool (opset 1),
 * N-D. f32 has a direct path; other dtypes go through double. Col2Im (opset
 * 18), the sum of sliding blocks back into an image, is at the end.
 */
#if defined(__GNUC__) && !defined(__clang__)
/* Before the includes, so the inline helpers get the same options. */
#pragma GCC optimize("O3", "no-trapping-math")
#endif
#include <math.h>
#include <string.h>

#include "cpu_internal.h"
#if DML_CPU_X86
#include <immintrin.h>
#endif

#define SP_MAX (DML_MAX_RANK - 2)

typedef struct {
  int r;
  int64_t NC;
  int64_t in[SP_MAX], out[SP_MAX], k[SP_MAX], s[SP_MAX], d[SP_MAX], pb[SP_MAX],
      pe[SP_MAX];
  int64_t in_sz, out_sz, k_sz;
} pool_geo_t;

static int64_t floor_div(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

static dml_status_t pool_geo(const dml_cpu_call_t *c, pool_geo_t *g) {
  const dml_tensor_t *x = &c->inputs[0], *y = &c->outputs[0];
  memset(g, 0, sizeof *g);
  if (x->rank < 3 || y->rank != x->rank || y->dims[0] != x->dims[0] ||
      y->dims[1] != x->dims[1])
    return dml_cpu_err_shapes(c,
                              "X and Y must be [N, C, spatial...] of the same rank >= 3");
  int r = g->r = x->rank - 2;
  g->NC = x->dims[0] * x->dims[1];
  size_t nks, ns, nd, np;
  const int64_t *ks = dml_cpu_get_ints(c, "kernel_shape", &nks);
  const int64_t *st = dml_cpu_get_ints(c, "strides", &ns);
  const int64_t *dl = dml_cpu_get_ints(c, "dilations", &nd);
  const int64_t *pads = dml_cpu_get_ints(c, "pads", &np);
  if (!ks || nks != (size_t)r)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "kernel_shape must have %d values", r);
  if ((st && ns != (size_t)r) || (dl && nd != (size_t)r) || (pads && np != 2 * (size_t)r))
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "strides/dilations/pads have the wrong length");
  const char *ap = dml_cpu_get_string(c, "auto_pad", "NOTSET");
  int su = strcmp(ap, "SAME_UPPER") == 0, sl = strcmp(ap, "SAME_LOWER") == 0;
  int valid = strcmp(ap, "VALID") == 0;
  if (!su && !sl && !valid && strcmp(ap, "NOTSET") != 0)
    return dml_cpu_error(c, DML_STATUS_UNIMPLEMENTED, "auto_pad '%s' is not supported",
                         ap);
  int ceil_mode = dml_cpu_get_int(c, "ceil_mode", 0) != 0;
  g->in_sz = g->out_sz = g->k_sz = 1;
  for (int i = 0; i < r; i++) {
    g->in[i] = x->dims[2 + i];
    g->out[i] = y->dims[2 + i];
    g->k[i] = ks[i];
    g->s[i] = st ? st[i] : 1;
    g->d[i] = dl ? dl[i] : 1;
    if (g->k[i] < 1 || g->s[i] < 1 || g->d[i] < 1)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "kernel_shape, strides and dilations must be >= 1");
    int64_t ek = (g->k[i] - 1) * g->d[i] + 1;
    int64_t e1, e2; /* accepted output sizes */
    if (su || sl) {
      e1 = e2 = (g->in[i] + g->s[i] - 1) / g->s[i];
      int64_t total = DML_CPU_MAX(0, (e1 - 1) * g->s[i] + ek - g->in[i]);
      g->pb[i] = su ? total / 2 : total - total / 2;
      g->pe[i] = total - g->pb[i];
    } else if (valid) {
      e1 = e2 = g->in[i] >= ek ? (g->in[i] - ek) / g->s[i] + 1 : 0;
    } else {
      g->pb[i] = pads ? pads[i] : 0;
      g->pe[i] = pads ? pads[r + i] : 0;
      int64_t span = g->in[i] + g->pb[i] + g->pe[i] - ek;
      e1 = floor_div(span, g->s[i]) + 1;
      e2 = e1;
      if (ceil_mode) {
        e1 = -floor_div(-span, g->s[i]) + 1;
        /* PyTorch/ONNX Runtime drop a last window that starts in the end
         * padding; accept both. */
        e2 = ((e1 - 1) * g->s[i] >= g->in[i] + g->pb[i]) ? e1 - 1 : e1;
      }
    }
    if (g->out[i] != e1 && g->out[i] != e2)
      return dml_cpu_err_shapes(c, "spatial dim %d: output %lld, expected %lld", i,
                                (long long)g->out[i], (long long)e1);
    g->in_sz *= g->in[i];
    g->out_sz *= g->out[i];
    g->k_sz *= g->k[i];
  }
  return DML_OK;
}

typedef enum { P_MAX, P_AVG_EXCL, P_AVG_INCL } pool_kind_t;

dml_status_t dml_cpu_pool_geometry(const dml_cpu_call_t *call, int64_t *k, int64_t *s,
                                   int64_t *d, int64_t *pb, int64_t *pe, int include_pad,
                                   int64_t *const *cnt) {
  pool_geo_t g;
  DML_RETURN_IF_ERROR(pool_geo(call, &g));
  for (int i = 0; i < g.r; i++) {
    k[i] = g.k[i], s[i] = g.s[i], d[i] = g.d[i], pb[i] = g.pb[i], pe[i] = g.pe[i];
    for (int64_t o = 0; cnt && o < g.out[i]; o++) { /* pool_window_f64's divisor */
      int64_t n = 0;
      for (int64_t t = 0; t < g.k[i]; t++) {
        int64_t p = o * g.s[i] - g.pb[i] + t * g.d[i];
        n += include_pad ? p >= -g.pb[i] && p < g.in[i] + g.pe[i] : p >= 0 && p < g.in[i];
      }
      cnt[i][o] = n;
    }
  }
  return DML_OK;
}

/* The window tap kidx of output position oidx: its spatial offset in the
 * image in *off; 0 when it falls in the padding. */
static int tap_offset(const pool_geo_t *g, const int64_t *oidx, const int64_t *kidx,
                      int64_t *off) {
  int inb = 1;
  *off = 0;
  for (int i = 0; i < g->r; i++) {
    int64_t p = oidx[i] * g->s[i] - g->pb[i] + kidx[i] * g->d[i];
    if (p < 0 || p >= g->in[i]) inb = 0;
    *off = *off * g->in[i] + p;
  }
  return inb;
}

/* Steps kidx to the window's next tap (row-major). */
static void tap_next(const pool_geo_t *g, int64_t *kidx) {
  for (int i = g->r - 1; i >= 0; i--) {
    if (++kidx[i] < g->k[i]) break;
    kidx[i] = 0;
  }
}

/* MaxPool of an integer dtype at one output position: the spatial offset
 * of the window's largest element (the first of equals; -1 when the window
 * is empty), compared exactly as integers (u64 as unsigned): a double holds
 * 53 bits, so i64/u64 values past 2^53 would tie or round. */
static int64_t pool_window_max_int(const pool_geo_t *g, dml_dtype_t dt, const void *x,
                                   int64_t base, const int64_t *oidx) {
  int is_u64 = dt == DML_DTYPE_U64;
  int64_t best = -1, bi = 0;
  uint64_t bu = 0;
  int64_t kidx[SP_MAX] = {0};
  for (int64_t kk = 0; kk < g->k_sz; kk++, tap_next(g, kidx)) {
    int64_t off;
    if (!tap_offset(g, oidx, kidx, &off)) continue;
    int64_t v = dml_load_i64(dt, x, (size_t)(base + off));
    if (best < 0 || (is_u64 ? (uint64_t)v > bu : v > bi))
      best = off, bi = v, bu = (uint64_t)v;
  }
  return best;
}

/* One output position: visits the window. Returns the value and, for max,
 * the spatial offset of the winner in *arg (-1 when the window is empty). */
static double pool_window_f64(const pool_geo_t *g, pool_kind_t kind, dml_dtype_t dt,
                              const void *x, int64_t base, const int64_t *oidx,
                              int64_t *arg) {
  int r = g->r;
  double acc = kind == P_MAX ? -INFINITY : 0.0;
  int64_t count = 0, best = -1;
  int64_t kidx[SP_MAX] = {0};
  for (int64_t kk = 0; kk < g->k_sz; kk++, tap_next(g, kidx)) {
    int64_t off;
    if (!tap_offset(g, oidx, kidx, &off)) continue;
    double v = dml_load_f64(dt, x, (size_t)(base + off));
    if (kind == P_MAX) {
      /* NaN propagates (the first NaN of the window wins) */
      if (v > acc || best < 0 || (v != v && acc == acc)) acc = v, best = off;
    } else {
      acc += v;
    }
    count++;
  }
  if (kind == P_MAX) {
    *arg = best;
    return acc;
  }
  if (kind == P_AVG_INCL) {
    /* Divisor: window positions inside the padded input [-pb, in + pe). */
    int64_t n = 1;
    for (int i = 0; i < r; i++) {
      int64_t cnt = 0;
      for (int64_t k = 0; k < g->k[i]; k++) {
        int64_t p = oidx[i] * g->s[i] - g->pb[i] + k * g->d[i];
        if (p >= -g->pb[i] && p < g->in[i] + g->pe[i]) cnt++;
      }
      n *= cnt;
    }
    count = n;
  }
  return count ? acc / (double)count : 0.0;
}

/* f32 2-D path without Indices: row-wise, so the inner loops over output
 * columns vectorize. Dilations supported. */
DML_CPU_CLONES
static void pool_row_max(float *restrict yr, const float *restrict xr, int64_t lo,
                         int64_t hi, int64_t sw, int64_t off) {
  for (int64_t ow = lo; ow < hi; ow++) {
    float v = xr[ow * sw + off];
    yr[ow] = v > yr[ow] || v != v ? v : yr[ow]; /* NaN propagates */
  }
}
DML_CPU_CLONES
static void pool_row_sum(float *restrict yr, const float *restrict xr, int64_t lo,
                         int64_t hi, int64_t sw, int64_t off) {
  for (int64_t ow = lo; ow < hi; ow++) yr[ow] += xr[ow * sw + off];
}

/* MaxPool 2x2, stride 2, no padding or dilation, windows inside the image
 * (the common CNN downsampling): the general loop's updates in the same tap
 * order (so NaN propagates alike), one pass per output row. */
DML_CPU_CLONES
static void pool_max_2x2s2(int64_t planes, int64_t H, int64_t W, int64_t OH, int64_t OW,
                           const float *restrict x, float *restrict y) {
  for (int64_t p = 0; p < planes; p++)
    for (int64_t oh = 0; oh < OH; oh++) {
      const float *r0 = x + (p * H + 2 * oh) * W, *r1 = r0 + W;
      float *yr = y + (p * OH + oh) * OW;
      for (int64_t ow = 0; ow < OW; ow++) {
        /* m = v > m || v != v ? v : m per tap, as two selects (no branch) */
        float t[4] = {r0[2 * ow], r0[2 * ow + 1], r1[2 * ow], r1[2 * ow + 1]};
        float m = -INFINITY;
        for (int i = 0; i < 4; i++) {
          m = t[i] > m ? t[i] : m;
          m = t[i] != t[i] ? t[i] : m;
        }
        yr[ow] = m;
      }
    }
}

/* MaxPool 3x3, stride 2, dilation 1, padding 1 at the start (ResNet's stem
 * pool, 64 x 48x48 -> 24x24 per image at 96x96): the general loop's nine
 * updates m = v > m || v != v ? v : m per output, in row-major tap order,
 * regrouped. Folding a sequence with that update gives its last NaN, else
 * its first largest value (of -0 and +0 the first): the same bits for any
 * grouping that keeps the order, so each input row's three column taps are
 * folded once (mp3_hrow; the row is split into its even and odd columns
 * first, so the taps are contiguous loads) and an output row folds its
 * (up to) three rows' results in order. Rows of at most MP3_MAX_W floats;
 * taps in the padding are left out, as in the general loop. */
enum { MP3_MAX_W = 1024 };

static inline float mp3_upd(float m, float v) {
  m = v > m ? v : m;
  return v != v ? v : m;
}

/* h[ow] = the fold of row xr's in-image taps 2ow-1, 2ow, 2ow+1 (OW
 * outputs; -inf for a window with none). E, O: scratch of W/2 + 1 floats. */
static inline __attribute__((always_inline)) void mp3_hrow(const float *restrict xr,
                                                           int64_t W, int64_t OW,
                                                           float *restrict E,
                                                           float *restrict O,
                                                           float *restrict h) {
  int64_t nO = W / 2;
  for (int64_t k = 0; k < nO; k++) E[k] = xr[2 * k], O[k] = xr[2 * k + 1];
  if (W & 1) E[nO] = xr[W - 1];
  /* ow in [1, min(OW, nO)): taps O[ow-1], E[ow], O[ow] all inside */
  int64_t full = OW < nO ? OW : nO;
  for (int64_t ow = 1; ow < full; ow++) h[ow] = mp3_upd(mp3_upd(O[ow - 1], E[ow]), O[ow]);
  for (int64_t ow = 0; ow < OW; ow = ow == 0 && full > 1 ? full : ow + 1) {
    float m = -INFINITY;
    for (int64_t j = 0; j < 3; j++) {
      int64_t iw = 2 * ow - 1 + j;
      if (iw >= 0 && iw < W) m = mp3_upd(m, xr[iw]);
    }
    h[ow] = m;
  }
}

static inline __attribute__((always_inline)) void mp3_vrow(float *restrict yr,
                                                           const float *restrict a,
                                                           const float *restrict b,
                                                           const float *restrict c,
                                                           int64_t OW) {
  if (c)
    for (int64_t ow = 0; ow < OW; ow++) yr[ow] = mp3_upd(mp3_upd(a[ow], b[ow]), c[ow]);
  else if (b)
    for (int64_t ow = 0; ow < OW; ow++) yr[ow] = mp3_upd(a[ow], b[ow]);
  else
    memcpy(yr, a, (size_t)OW * 4);
}

#if DML_CPU_X86
/* pool_max_3x3s2 on AVX-512 (dml_cpu_sgemm_isa() == 3): the same folds,
 * 16 outputs a vector; the taps 2ow-1 and 2ow are the even and odd lanes
 * of 32 floats from 2ow0-1, the tap 2ow+1 the even lanes of 32 from
 * 2ow0+1 (two masked loads and a permute each; nothing read past the
 * taps). */
__attribute__((target("avx512f"), always_inline)) static inline __m512 mp3_upd512(
    __m512 m, __m512 v) {
  m = _mm512_mask_mov_ps(m, _mm512_cmp_ps_mask(v, m, _CMP_GT_OQ), v);
  return _mm512_mask_mov_ps(m, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), v);
}
__attribute__((target("avx512f"), always_inline)) static inline __mmask16 mp3_mask(
    int64_t n) {
  return n >= 16 ? (__mmask16)0xffff : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1);
}
/* The even (idx ie) or odd (io) floats of p[0, n), n <= 32, in lanes from
 * 0 (lanes past them unspecified; p[n..] not read). */
__attribute__((target("avx512f"), always_inline)) static inline __m512 mp3_half(
    const float *p, int64_t n, __m512i idx) {
  __m512 a = _mm512_maskz_loadu_ps(mp3_mask(n), p);
  __m512 b = _mm512_maskz_loadu_ps(mp3_mask(n - 16), p + 16);
  return _mm512_permutex2var_ps(a, idx, b);
}
__attribute__((target("avx512f"))) static void pool_max_3x3s2_avx512(
    const pool_geo_t *g, int64_t p0, int64_t p1, const float *x, float *y) {
  int64_t H = g->in[0], W = g->in[1], OH = g->out[0], OW = g->out[1];
  float hb[3][MP3_MAX_W];
  const __m512i ie = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
                                       28, 30),
                io = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27,
                                       29, 31);
  int64_t full = OW < W / 2 ? OW : W / 2; /* ow in [1, full): taps inside */
  for (int64_t p = p0; p < p1; p++) {
    const float *xp = x + p * H * W;
    int64_t have = -1;
    for (int64_t oh = 0; oh < OH; oh++) {
      float *yr = y + (p * OH + oh) * OW;
      const float *rows[3] = {NULL, NULL, NULL};
      int n = 0;
      for (int64_t i = 0; i < 3; i++) {
        int64_t h = 2 * oh - 1 + i;
        if (h < 0 || h >= H) continue;
        float *hr = hb[h % 3];
        if (h > have) {
          const float *xr = xp + h * W;
          for (int64_t o = 1; o < full; o += 16) {
            int64_t k = full - o < 16 ? full - o : 16;
            /* 2k floats from 2o-1: taps 2ow-1 (even lanes), 2ow (odd) */
            __m512 t0 = mp3_half(xr + 2 * o - 1, 2 * k, ie);
            __m512 t1 = mp3_half(xr + 2 * o - 1, 2 * k, io);
            __m512 t2 = mp3_half(xr + 2 * o + 1, 2 * k - 1, ie);
            _mm512_mask_storeu_ps(hr + o, mp3_mask(k),
                                  mp3_upd512(mp3_upd512(t0, t1), t2));
          }
          for (int64_t ow = 0; ow < OW; ow = ow == 0 && full > 1 ? full : ow + 1) {
            float m = -INFINITY;
            for (int64_t j = 0; j < 3; j++) {
              int64_t iw = 2 * ow - 1 + j;
              if (iw >= 0 && iw < W) m = mp3_upd(m, xr[iw]);
            }
            hr[ow] = m;
          }
          have = h;
        }
        rows[n++] = hr;
      }
      for (int64_t o = 0; o < OW; o += 16) {
        __mmask16 k = mp3_mask(OW - o);
        __m512 m = _mm512_set1_ps(-INFINITY);
        if (n > 0) m = _mm512_maskz_loadu_ps(k, rows[0] + o);
        for (int r = 1; r < n; r++)
          m = mp3_upd512(m, _mm512_maskz_loadu_ps(k, rows[r] + o));
        _mm512_mask_storeu_ps(yr + o, k, m);
      }
    }
  }
}
#endif

static int mp3_ok(const pool_geo_t *g) {
  return g->k[0] == 3 && g->k[1] == 3 && g->s[0] == 2 && g->s[1] == 2 && g->d[0] == 1 &&
         g->d[1] == 1 && g->pb[0] == 1 && g->pb[1] == 1 && g->in[1] <= MP3_MAX_W &&
         g->out[1] <= MP3_MAX_W;
}

/* (One clone for the whole pooling: the row helpers inlined, no call per
 * row.) */
DML_CPU_CLONES
static void pool_max_3x3s2(const pool_geo_t *g, int64_t p0, int64_t p1,
                           const float *restrict x, float *restrict y) {
  int64_t H = g->in[0], W = g->in[1], OH = g->out[0], OW = g->out[1];
  float E[MP3_MAX_W / 2 + 1], O[MP3_MAX_W / 2 + 1], hb[3][MP3_MAX_W];
  for (int64_t p = p0; p < p1; p++) {
    const float *xp = x + p * H * W;
    int64_t have = -1; /* input row held in hb[have % 3], -1: none */
    for (int64_t oh = 0; oh < OH; oh++) {
      float *yr = y + (p * OH + oh) * OW;
      const float *rows[3] = {NULL, NULL, NULL};
      int n = 0;
      for (int64_t i = 0; i < 3; i++) {
        int64_t h = 2 * oh - 1 + i;
        if (h < 0 || h >= H) continue;
        float *hr = hb[h % 3];
        if (h > have) { /* rows come in increasing order: each folded once */
          mp3_hrow(xp + h * W, W, OW, E, O, hr);
          have = h;
        }
        rows[n++] = hr;
      }
      if (n == 0) {
        for (int64_t ow = 0; ow < OW; ow++) yr[ow] = -INFINITY;
        continue;
      }
      mp3_vrow(yr, rows[0], rows[1], rows[2], OW);
    }
  }
}

/* Planes [t * per, (t + 1) * per) of pool_max_3x3s2 as a pool task (each
 * plane alone: the same bits for any split). */
typedef struct {
  const pool_geo_t *g;
  const float *x;
  float *y;
  int64_t per;
} mp3_task_t;

static void mp3_task(void *vctx, int64_t t, int tid) {
  (void)tid;
  const mp3_task_t *m = (const mp3_task_t *)vctx;
  int64_t p0 = t * m->per, p1 = DML_CPU_MIN(p0 + m->per, m->g->NC);
#if DML_CPU_X86
  if (dml_cpu_sgemm_isa() == 3) {
    pool_max_3x3s2_avx512(m->g, p0, p1, m->x, m->y);
    return;
  }
#endif
  pool_max_3x3s2(m->g, p0, p1, m->x, m->y);
}

static void pool2d_f32(const pool_geo_t *g, pool_kind_t kind, const float *x, float *y) {
  int64_t H = g->in[0], W = g->in[1], OH = g->out[0], OW = g->out[1];
  int64_t kh = g->k[0], kw = g->k[1], sh = g->s[0], sw = g->s[1], dh = g->d[0],
          dw = g->d[1];
  int64_t pt = g->pb[0], pl = g->pb[1];
  if (kind == P_MAX && kh == 2 && kw == 2 && sh == 2 && sw == 2 && dh == 1 && dw == 1 &&
      pt == 0 && pl == 0 && 2 * OH <= H && 2 * OW <= W) {
    pool_max_2x2s2(g->NC, H, W, OH, OW, x, y);
    return;
  }
  if (kind == P_MAX && mp3_ok(g)) {
    /* from 1M input values over the pool's threads, about 8 tasks each
     * (the stem pool at batch 32: 4.7M; at batch 1, 147K, 37 us, serial) */
    int threads = dml_cpu_num_threads();
    int64_t tasks = 1;
    if (threads > 1 && (double)g->NC * (double)(H * W) >= 1048576.0)
      tasks = DML_CPU_MIN((int64_t)threads * 8, g->NC);
    mp3_task_t m = {g, x, y, (g->NC + tasks - 1) / tasks};
    if (tasks > 1)
      dml_cpu_parallel_for((g->NC + m.per - 1) / m.per, threads, mp3_task, &m);
    else
      mp3_task(&m, 0, 0);
    return;
  }
  /* Window widths per output column (the same for every row), cached. */
  enum { WC_CACHE = 512 };
  int32_t wcache[WC_CACHE];
  for (int i = 0; i < WC_CACHE; i++) wcache[i] = -1;
  for (int64_t nc = 0; nc < g->NC; nc++) {
    const float *xc = x + nc * H * W;
    for (int64_t oh = 0; oh < OH; oh++) {
      float *yr = y + (nc * OH + oh) * OW;
      float init = kind == P_MAX ? -INFINITY : 0.0f;
      for (int64_t ow = 0; ow < OW; ow++) yr[ow] = init;
      int64_t hcnt = 0, hcnt_pad = 0;
      for (int64_t i = 0; i < kh; i++) {
        int64_t h = oh * sh - pt + i * dh;
        if (h >= -pt && h < H + g->pe[0]) hcnt_pad++;
        if (h < 0 || h >= H) continue;
        hcnt++;
        const float *xr = xc + h * W;
        for (int64_t j = 0; j < kw; j++) {
          int64_t off = j * dw - pl; /* iw = ow*sw + off */
          int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
          int64_t hi = W - 1 - off >= 0 ? (W - 1 - off) / sw + 1 : 0;
          if (hi > OW) hi = OW;
          if (lo >= hi) continue;
          if (kind == P_MAX)
            pool_row_max(yr, xr, lo, hi, sw, off);
          else
            pool_row_sum(yr, xr, lo, hi, sw, off);
        }
      }
      if (kind == P_MAX) continue;
      int64_t hc = kind == P_AVG_INCL ? hcnt_pad : hcnt;
      for (int64_t ow = 0; ow < OW; ow++) {
        int64_t wc = 0;
        if (ow < WC_CACHE && wcache[ow] >= 0) {
          wc = wcache[ow];
        } else {
          for (int64_t j = 0; j < kw; j++) {
            int64_t iw = ow * sw - pl + j * dw;
            wc += kind == P_AVG_INCL ? (iw >= -pl && iw < W + g->pe[1])
                                     : (iw >= 0 && iw < W);
          }
          if (ow < WC_CACHE) wcache[ow] = (int32_t)wc;
        }
        int64_t cnt = hc * wc;
        yr[ow] = cnt > 0 ? yr[ow] / (float)cnt : 0.0f;
      }
    }
  }
}

/* 2-D MaxPool of u8 / s8 (a QDQ model's pooling on quantized tensors, passes/
 * qdq_fuse.c): the max over the window's in-image taps (padding never
 * wins), 0 for a window with none, as the generic path. */
DML_CPU_CLONES
static void pool2d_max_q8(const pool_geo_t *g, int s8, const uint8_t *x, uint8_t *y) {
  int64_t H = g->in[0], W = g->in[1], OH = g->out[0], OW = g->out[1];
  uint8_t flip = s8 ? 0x80 : 0; /* s8 order as u8 order */
  if (g->k[0] == 2 && g->k[1] == 2 && g->s[0] == 2 && g->s[1] == 2 && g->d[0] == 1 &&
      g->d[1] == 1 && g->pb[0] == 0 && g->pb[1] == 0 && 2 * OH <= H && 2 * OW <= W) {
    /* 2x2 stride 2 with every window inside (LeNet's pools): the max of 4
     * bytes, a straight loop the compiler vectorizes */
    for (int64_t nc = 0; nc < g->NC; nc++)
      for (int64_t oh = 0; oh < OH; oh++) {
        const uint8_t *r0 = x + (nc * H + 2 * oh) * W, *r1 = r0 + W;
        uint8_t *yr = y + (nc * OH + oh) * OW;
        for (int64_t ow = 0; ow < OW; ow++) {
          uint8_t a = (uint8_t)(r0[2 * ow] ^ flip), b = (uint8_t)(r0[2 * ow + 1] ^ flip);
          uint8_t c = (uint8_t)(r1[2 * ow] ^ flip), d = (uint8_t)(r1[2 * ow + 1] ^ flip);
          uint8_t m0 = a > b ? a : b, m1 = c > d ? c : d;
          yr[ow] = (uint8_t)((m0 > m1 ? m0 : m1) ^ flip);
        }
      }
    return;
  }
  for (int64_t nc = 0; nc < g->NC; nc++) {
    const uint8_t *xc = x + nc * H * W;
    for (int64_t oh = 0; oh < OH; oh++) {
      uint8_t *yr = y + (nc * OH + oh) * OW;
      int any_row = 0;
      for (int64_t ow = 0; ow < OW; ow++) yr[ow] = 0;
      for (int64_t i = 0; i < g->k[0]; i++) {
        int64_t h = oh * g->s[0] - g->pb[0] + i * g->d[0];
        if (h < 0 || h >= H) continue;
        any_row = 1;
        const uint8_t *xr = xc + h * W;
        for (int64_t j = 0; j < g->k[1]; j++) {
          int64_t off = j * g->d[1] - g->pb[1], sw = g->s[1];
          int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
          int64_t hi = W - 1 - off >= 0 ? (W - 1 - off) / sw + 1 : 0;
          if (hi > OW) hi = OW;
          for (int64_t ow = lo; ow < hi; ow++) {
            uint8_t v = (uint8_t)(xr[ow * sw + off] ^ flip);
            yr[ow] = v > yr[ow] ? v : yr[ow];
          }
        }
      }
      /* back to s8; a window with no tap gives 0 */
      for (int64_t ow = 0; ow < OW; ow++) {
        int64_t w0 = ow * g->s[1] - g->pb[1], inside = 0;
        for (int64_t j = 0; j < g->k[1] && !inside; j++)
          inside = w0 + j * g->d[1] >= 0 && w0 + j * g->d[1] < W;
        yr[ow] = any_row && inside ? (uint8_t)(yr[ow] ^ flip) : 0;
      }
    }
  }
}

static dml_status_t pool_run(const dml_cpu_call_t *c, pool_kind_t kind) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0], *ind = dml_cpu_out(c, 1);
  dml_dtype_t dt = x->dtype;
  int ok = kind == P_MAX ? (dml_dtype_is_float(dt) || dml_dtype_is_int(dt))
                         : dml_dtype_is_float(dt);
  if (!ok) return dml_cpu_err_dtype(c, "input", dt);
  if (y->dtype != dt) return dml_cpu_err_dtype(c, "output", y->dtype);
  if (ind && ind->dtype != DML_DTYPE_I64)
    return dml_cpu_err_dtype(c, "Indices", ind->dtype);
  pool_geo_t g;
  DML_RETURN_IF_ERROR(pool_geo(c, &g));
  if (ind && (ind->rank != y->rank ||
              memcmp(ind->dims, y->dims, sizeof(int64_t) * (size_t)y->rank)))
    return dml_cpu_err_shapes(c, "Indices must have Y's shape");
  int storage_order = (int)dml_cpu_get_int(c, "storage_order", 0);
  if (storage_order != 0 && storage_order != 1)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "storage_order must be 0 or 1");
  if (dml_cpu_numel(y) == 0) return DML_OK;
  if (dt == DML_DTYPE_F32 && g.r == 2 && !ind) {
    pool2d_f32(&g, kind, (const float *)x->data, (float *)y->data);
    return DML_OK;
  }
  if ((dt == DML_DTYPE_U8 || dt == DML_DTYPE_I8) && kind == P_MAX && g.r == 2 && !ind) {
    pool2d_max_q8(&g, dt == DML_DTYPE_I8, (const uint8_t *)x->data, (uint8_t *)y->data);
    return DML_OK;
  }
  int64_t *ip = ind ? (int64_t *)ind->data : NULL;
  for (int64_t nc = 0; nc < g.NC; nc++) {
    int64_t oidx[SP_MAX] = {0};
    for (int64_t o = 0; o < g.out_sz; o++) {
      int64_t arg = -1;
      size_t yi = (size_t)(nc * g.out_sz + o);
      if (kind == P_MAX && dml_dtype_is_int(dt)) {
        /* the winner's bits, 0 for an empty window */
        arg = pool_window_max_int(&g, dt, x->data, nc * g.in_sz, oidx);
        dml_store_i64(
            dt, y->data, yi,
            arg < 0 ? 0 : dml_load_i64(dt, x->data, (size_t)(nc * g.in_sz + arg)));
      } else {
        double v = pool_window_f64(&g, kind, dt, x->data, nc * g.in_sz, oidx, &arg);
        if (kind == P_MAX && arg < 0) v = dml_dtype_is_float(dt) ? -INFINITY : 0;
        dml_store_f64(dt, y->data, yi, v);
      }
      if (ip) {
        int64_t sp = arg < 0 ? 0 : arg;
        if (storage_order && arg >= 0) {
          /* column-major spatial offset */
          int64_t rem = arg, cm = 0, mul = 1;
          int64_t idx[SP_MAX];
          for (int i = g.r - 1; i >= 0; i--) idx[i] = rem % g.in[i], rem /= g.in[i];
          for (int i = 0; i < g.r; i++) cm += idx[i] * mul, mul *= g.in[i];
          sp = cm;
        }
        ip[yi] = nc * g.in_sz + sp;
      }
      for (int i = g.r - 1; i >= 0; i--) {
        if (++oidx[i] < g.out[i]) break;
        oidx[i] = 0;
      }
    }
  }
  return DML_OK;
}

/* ONNX MaxPool (12): max over each window (padding never wins); optional
 * Indices output holds flattened offsets into X (storage_order 0 row-major,
 * 1 column-major over the spatial dims). */
dml_status_t dml_cpuk_MaxPool(const dml_cpu_call_t *c) {
  return pool_run(c, P_MAX);
}

/* ONNX AveragePool (11): mean over each window; the divisor counts padded
 * positions only when count_include_pad = 1. */
dml_status_t dml_cpuk_AveragePool(const dml_cpu_call_t *c) {
  return pool_run(c,
                  dml_cpu_get_int(c, "count_include_pad", 0) ? P_AVG_INCL : P_AVG_EXCL);
}

#if DML_CPU_X86
/* GlobalAveragePool's means of planes [0, n) of sp floats (sp a multiple
 * of 8 below DML_CPU_SUM_BLOCK) on AVX2: dml_cpu_sum_f32's sums (8 f32
 * lanes, lane u adding x[8i + u] in order, then ((s0 + s1) + (s2 + s3)) +
 * ((s4 + s5) + (s6 + s7)) and 0.0 + that in double, here two horizontal
 * adds and the halves' sum: the same additions, the same bits), four
 * planes interleaved so that their add chains overlap (one plane's chain
 * of dependent adds at a time took 40 us for MobileNet's 4096 planes of
 * 64 at batch 32). */
__attribute__((target("avx2"))) static void gap_means_avx2(const float *restrict in,
                                                           float *restrict out, int64_t n,
                                                           int64_t sp) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float *p = in + i * sp;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t j = 0; j < sp; j += 8) {
      a0 = _mm256_add_ps(a0, _mm256_loadu_ps(p + j));
      a1 = _mm256_add_ps(a1, _mm256_loadu_ps(p + sp + j));
      a2 = _mm256_add_ps(a2, _mm256_loadu_ps(p + 2 * sp + j));
      a3 = _mm256_add_ps(a3, _mm256_loadu_ps(p + 3 * sp + j));
    }
    /* [s0+s1, s2+s3, t0+t1, t2+t3 | s4+s5, s6+s7, t4+t5, t6+t7] (s: a0, t: a1) */
    __m256 h01 = _mm256_hadd_ps(a0, a1), h23 = _mm256_hadd_ps(a2, a3);
    /* [(s0+s1)+(s2+s3), (t..), (u..), (v..) | the upper halves' the same] */
    __m256 q = _mm256_hadd_ps(h01, h23);
    /* lanes: planes i, i+1, i+2, i+3 */
    __m128 r = _mm_add_ps(_mm256_castps256_ps128(q), _mm256_extractf128_ps(q, 1));
    float rs[4];
    _mm_storeu_ps(rs, r);
    for (int k = 0; k < 4; k++) out[i + k] = (float)((0.0 + (double)rs[k]) / (double)sp);
  }
  for (; i < n; i++) out[i] = (float)(dml_cpu_sum_f32(in + i * sp, sp) / (double)sp);
}
#endif

/* ONNX GlobalAveragePool / GlobalMaxPool (1): mean / max over all spatial
 * dims; Y is [N, C, 1, ..., 1]. */
dml_status_t dml_cpuk_GlobalPool(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  int is_max = c->op == DML_OP_GLOBAL_MAX_POOL;
  if (!dml_dtype_is_float(dt) && !(is_max && dml_dtype_is_int(dt)))
    return dml_cpu_err_dtype(c, "input", dt);
  if (y->dtype != dt) return dml_cpu_err_dtype(c, "output", y->dtype);
  if (x->rank < 2 || y->rank != x->rank || y->dims[0] != x->dims[0] ||
      y->dims[1] != x->dims[1])
    return dml_cpu_err_shapes(c, "Y must be [N, C, 1, ...]");
  for (int32_t i = 2; i < y->rank; i++)
    if (y->dims[i] != 1) return dml_cpu_err_shapes(c, "Y must be [N, C, 1, ...]");
  int64_t nc = x->dims[0] * x->dims[1], sp = 1;
  for (int32_t i = 2; i < x->rank; i++) sp *= x->dims[i];
  if (dt == DML_DTYPE_F32) {
    const float *in = (const float *)x->data;
    float *out = (float *)y->data;
#if DML_CPU_X86
    if (!is_max && sp > 0 && sp % 8 == 0 && sp < DML_CPU_SUM_BLOCK &&
        dml_cpu_sgemm_isa() >= 2) {
      gap_means_avx2(in, out, nc, sp);
      return DML_OK;
    }
#endif
    for (int64_t i = 0; i < nc; i++) {
      const float *p = in + i * sp;
      if (is_max) {
        float m = sp ? p[0] : -INFINITY;
        for (int64_t j = 1; j < sp; j++) m = p[j] > m || p[j] != p[j] ? p[j] : m;
        out[i] = m;
      } else {
        out[i] = sp ? (float)(dml_cpu_sum_f32(p, sp) / (double)sp) : 0.0f;
      }
    }
    return DML_OK;
  }
  for (int64_t i = 0; i < nc; i++) {
    double acc = is_max ? -INFINITY : 0.0;
    for (int64_t j = 0; j < sp; j++) {
      double v = dml_load_f64(dt, x->data, (size_t)(i * sp + j));
      acc = is_max ? (v > acc || j == 0 || v != v ? v : acc) : acc + v;
    }
    if (!is_max && sp) acc /= (double)sp;
    dml_store_f64(dt, y->data, (size_t)i, acc);
  }
  return DML_OK;
}

/* ---- gradients -------------------------------------------------------- */

/* MaxPoolGrad / AveragePoolGrad (dY, X) -> dX: the VJP of MaxPool (ONNX
 * 12) and AveragePool (ONNX 11) with the forward op's attributes. Max: each
 * dY element is added at its window's argmax (the first maximum in scan
 * order, as pool_window_f64 picks it, PyTorch's choice too); average: each
 * dY element divided by the forward divisor and added to every in-bounds
 * position of its window. Accumulates in double. */
static dml_status_t pool_grad(const dml_cpu_call_t *c, pool_kind_t kind) {
  const dml_tensor_t *dy = &c->inputs[0], *x = &c->inputs[1];
  dml_tensor_t *dx = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  if (!dml_dtype_is_float(dt)) return dml_cpu_err_dtype(c, "X", dt);
  if (dy->dtype != dt || dx->dtype != dt) return dml_cpu_err_dtype(c, "dY/dX", dy->dtype);
  if (dx->rank != x->rank || memcmp(dx->dims, x->dims, sizeof(int64_t) * (size_t)x->rank))
    return dml_cpu_err_shapes(c, "dX must have X's shape");
  dml_cpu_call_t fwd = *c;
  dml_tensor_t in = *x, out = *dy;
  fwd.inputs = &in;
  fwd.n_inputs = 1;
  fwd.outputs = &out;
  fwd.n_outputs = 1;
  pool_geo_t g;
  DML_RETURN_IF_ERROR(pool_geo(&fwd, &g));
  int64_t nx = dml_cpu_numel(x);
  for (int64_t i = 0; i < nx; i++) dml_store_f64(dt, dx->data, (size_t)i, 0.0);
  for (int64_t nc = 0; nc < g.NC; nc++) {
    int64_t oidx[SP_MAX] = {0};
    for (int64_t o = 0; o < g.out_sz; o++) {
      double gy = dml_load_f64(dt, dy->data, (size_t)(nc * g.out_sz + o));
      if (kind == P_MAX) {
        int64_t arg = -1;
        (void)pool_window_f64(&g, kind, dt, x->data, nc * g.in_sz, oidx, &arg);
        if (arg >= 0) {
          size_t xi = (size_t)(nc * g.in_sz + arg);
          dml_store_f64(dt, dx->data, xi, dml_load_f64(dt, dx->data, xi) + gy);
        }
      } else {
        /* Divisor as the forward: in-bounds count, or padded count. */
        int64_t count = 0, padded = 1;
        for (int i = 0; i < g.r; i++) {
          int64_t cnt = 0;
          for (int64_t k = 0; k < g.k[i]; k++) {
            int64_t p = oidx[i] * g.s[i] - g.pb[i] + k * g.d[i];
            if (p >= -g.pb[i] && p < g.in[i] + g.pe[i]) cnt++;
          }
          padded *= cnt;
        }
        int64_t kidx[SP_MAX] = {0};
        for (int pass = 0; pass < 2; pass++) {
          double share = 0.0;
          if (pass == 1) {
            int64_t div = kind == P_AVG_INCL ? padded : count;
            if (div == 0) break;
            share = gy / (double)div;
          }
          for (int64_t kk = 0; kk < g.k_sz; kk++) {
            int64_t off = 0, inb = 1;
            for (int i = 0; i < g.r; i++) {
              int64_t p = oidx[i] * g.s[i] - g.pb[i] + kidx[i] * g.d[i];
              if (p < 0 || p >= g.in[i]) inb = 0;
              off = off * g.in[i] + p;
            }
            if (inb) {
              if (pass == 0) {
                count++;
              } else {
                size_t xi = (size_t)(nc * g.in_sz + off);
                dml_store_f64(dt, dx->data, xi, dml_load_f64(dt, dx->data, xi) + share);
              }
            }
            for (int i = g.r - 1; i >= 0; i--) {
              if (++kidx[i] < g.k[i]) break;
              kidx[i] = 0;
            }
          }
        }
      }
      for (int i = g.r - 1; i >= 0; i--) {
        if (++oidx[i] < g.out[i]) break;
        oidx[i] = 0;
      }
    }
  }
  return DML_OK;
}

dml_status_t dml_cpuk_MaxPoolGrad(const dml_cpu_call_t *c) {
  return pool_grad(c, P_MAX);
}

dml_status_t dml_cpuk_AveragePoolGrad(const dml_cpu_call_t *c) {
  return pool_grad(c,
                   dml_cpu_get_int(c, "count_include_pad", 0) ? P_AVG_INCL : P_AVG_EXCL);
}

/* ======================================================================
 * Col2Im (ONNX opset 18): input [N, C*B, L] holds, for each of the L
 * block positions (row-major over the r spatial dims, Ld = (img_d + pad_b
 * + pad_e - (dil_d * (blk_d - 1) + 1)) / stride_d + 1 per dim) and each
 * channel c and offset b in the block (row-major, B = prod(block)), the
 * value at input[n, c*B + b, l]; output [N, C, image_shape...] is the sum
 * of every value landing on a pixel (position l_d * stride_d - pad_b +
 * b_d * dil_d inside the image), zero elsewhere. Computed in double.
 * ====================================================================== */
dml_status_t dml_cpuk_Col2Im(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  if (!dml_dtype_is_float(dt)) return dml_cpu_err_dtype(c, "input", dt);
  if (y->dtype != dt) return dml_cpu_err_dtype(c, "output", y->dtype);
  int64_t img[DML_MAX_RANK], blk[DML_MAX_RANK];
  int64_t ni = dml_cpu_read_ints(&c->inputs[1], img, DML_MAX_RANK - 2);
  int64_t nb = dml_cpu_read_ints(&c->inputs[2], blk, DML_MAX_RANK - 2);
  if (x->rank != 3 || ni < 1 || ni != nb || y->rank != ni + 2)
    return dml_cpu_err_shapes(c,
                              "input must be [N, C*B, L], image_shape and block_shape "
                              "of one length r, output of rank r + 2");
  int r = (int)ni;
  size_t na;
  const int64_t *a;
  int64_t dil[DML_MAX_RANK], str[DML_MAX_RANK], pb[DML_MAX_RANK], pe[DML_MAX_RANK];
  for (int d = 0; d < r; d++) dil[d] = 1, str[d] = 1, pb[d] = 0, pe[d] = 0;
  if ((a = dml_cpu_get_ints(c, "dilations", &na))) {
    if ((int)na != r) return dml_cpu_err_shapes(c, "dilations must have %d values", r);
    for (int d = 0; d < r; d++) dil[d] = a[d];
  }
  if ((a = dml_cpu_get_ints(c, "strides", &na))) {
    if ((int)na != r) return dml_cpu_err_shapes(c, "strides must have %d values", r);
    for (int d = 0; d < r; d++) str[d] = a[d];
  }
  if ((a = dml_cpu_get_ints(c, "pads", &na))) {
    if ((int)na != 2 * r) return dml_cpu_err_shapes(c, "pads must have %d values", 2 * r);
    for (int d = 0; d < r; d++) pb[d] = a[d], pe[d] = a[r + d];
  }
  int64_t B = 1, L = 1, npix = 1, Ld[DML_MAX_RANK];
  for (int d = 0; d < r; d++) {
    if (blk[d] < 1 || img[d] < 0 || dil[d] < 1 || str[d] < 1 || pb[d] < 0 || pe[d] < 0)
      return dml_cpu_error(
          c, DML_STATUS_INVALID_ARGUMENT,
          "block_shape, dilations, strides must be >= 1, image_shape and "
          "pads >= 0");
    int64_t ext = img[d] + pb[d] + pe[d] - (dil[d] * (blk[d] - 1) + 1);
    Ld[d] = ext < 0 ? 0 : ext / str[d] + 1;
    B *= blk[d], L *= Ld[d], npix *= img[d];
    if (y->dims[2 + d] != img[d]) return dml_cpu_err_shapes(c, "output dims differ");
  }
  int64_t N = x->dims[0], C = B ? x->dims[1] / B : 0;
  if (C * B != x->dims[1] || x->dims[2] != L || y->dims[0] != N || y->dims[1] != C)
    return dml_cpu_err_shapes(c,
                              "input [%lld, %lld, %lld] must be [N, C * %lld, %lld] "
                              "for output [N, C, image_shape]",
                              (long long)x->dims[0], (long long)x->dims[1],
                              (long long)x->dims[2], (long long)B, (long long)L);
  int64_t ny = dml_cpu_numel(y);
  for (int64_t i = 0; i < ny; i++) dml_store_f64(dt, y->data, (size_t)i, 0);
  for (int64_t n = 0; n < N; n++)
    for (int64_t ch = 0; ch < C; ch++) {
      int64_t ybase = (n * C + ch) * npix;
      for (int64_t bi = 0; bi < B; bi++) {
        int64_t bo[DML_MAX_RANK], rem = bi;
        for (int d = r - 1; d >= 0; d--) bo[d] = rem % blk[d], rem /= blk[d];
        int64_t xbase = (n * x->dims[1] + ch * B + bi) * L;
        for (int64_t l = 0; l < L; l++) {
          int64_t off = 0, lr = l, inside = 1, pos[DML_MAX_RANK];
          for (int d = r - 1; d >= 0; d--) {
            int64_t ld = lr % Ld[d];
            lr /= Ld[d];
            pos[d] = ld * str[d] - pb[d] + bo[d] * dil[d];
            if (pos[d] < 0 || pos[d] >= img[d]) inside = 0;
          }
          if (!inside) continue;
          for (int d = 0; d < r; d++) off = off * img[d] + pos[d];
          double v = dml_load_f64(dt, y->data, (size_t)(ybase + off)) +
                     dml_load_f64(dt, x->data, (size_t)(xbase + l));
          dml_store_f64(dt, y->data, (size_t)(ybase + off), v);
        }
      }
    }
  return DML_OK;
}
