/*
 * cpu_conv.c — Conv and ConvTranspose (ONNX opset 11), N-D.
 *
 * f32: im2col + the GEMM core (2-D: im2col written straight into the
 * GEMM's packed-B panels; 1x1 stride-1 unpadded convolutions read the image
 * as B); on AVX-512, 2-D group-1 convolutions without im2col where they
 * fit: cv_tiles (strides 1-2, rows of at least 16 or exactly 4 or 8
 * outputs, small images: 16 output channels x 16 positions, broadcast
 * inputs), direct_tiles (stride 1, rows of at least 10 floats; pointwise
 * convolutions with small images, read in place; 1x1 strided ones after a
 * gather of their inputs, pws_*) and flat_tiles (strides up to 4, narrow
 * stride-1 rows: flattened phase planes), each with the epilogue applied
 * in registers;
 * depthwise 2-D convolutions a direct vectorized kernel (AVX-512,
 * AVX2, portable) with the epilogue fused; ConvTranspose is GEMM +
 * col2im. With several threads, (image, group, output-column chunk) tasks
 * are spread over the pool (one scratch slot per thread). The CPU
 * executor's fusion (dml_cpu_run_fused) passes packed weights and a
 * bias/BatchNormalization/Relu epilogue. f64/f16/bf16: a direct loop in
 * double. Every path pads with zeros that are multiplied by the weight
 * (0 * w: NaN for an infinite or NaN weight on a padded tap, as ONNX
 * Runtime's im2col).
 */
#if defined(__GNUC__) && !defined(__clang__)
/* Before the includes, so the inline helpers get the same options. */
#pragma GCC optimize("O3", "no-trapping-math")
#endif
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "dml_shape.h"
#if DML_CPU_X86
#include <immintrin.h>
#endif

#define SP_MAX (DML_MAX_RANK - 2)

typedef struct {
  int r; /* spatial rank */
  int64_t N, C, M, group, Cg, Mg;
  int64_t in[SP_MAX], out[SP_MAX], k[SP_MAX], s[SP_MAX], d[SP_MAX], pb[SP_MAX];
  int64_t in_sz, out_sz, k_sz;
  int pointwise; /* 1x1, stride 1, no padding */
} conv_geo_t;

static int64_t ceil_div(int64_t a, int64_t b) {
  return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

/* Reads the attributes and checks shapes. transpose: ConvTranspose. */
static dml_status_t conv_geo(const dml_cpu_call_t *c, int transpose, conv_geo_t *g) {
  const dml_tensor_t *x = &c->inputs[0], *w = &c->inputs[1], *b = dml_cpu_in(c, 2);
  const dml_tensor_t *y = &c->outputs[0];
  memset(g, 0, sizeof *g);
  if (x->rank < 3 || w->rank != x->rank || y->rank != x->rank)
    return dml_cpu_err_shapes(c, "X, W and Y must have the same rank >= 3");
  int r = g->r = x->rank - 2;
  g->N = x->dims[0], g->C = x->dims[1];
  g->group = dml_cpu_get_int(c, "group", 1);
  if (g->group < 1 || g->C % g->group)
    return dml_cpu_err_shapes(c, "group %lld does not divide the channels",
                              (long long)g->group);
  g->Cg = g->C / g->group;
  if (!transpose) {
    g->M = w->dims[0];
    if (w->dims[1] != g->Cg || g->M % g->group)
      return dml_cpu_err_shapes(c, "W does not match X's channels and group");
  } else {
    if (w->dims[0] != g->C)
      return dml_cpu_err_shapes(c, "W's first dim must equal X's channels");
    g->M = w->dims[1] * g->group;
  }
  g->Mg = g->M / g->group;
  if (y->dims[0] != g->N || y->dims[1] != g->M)
    return dml_cpu_err_shapes(c, "Y must be [N, %lld, ...]", (long long)g->M);
  if (b && (b->rank != 1 || b->dims[0] != g->M))
    return dml_cpu_err_shapes(c, "B must be [%lld]", (long long)g->M);
  size_t nks, ns, nd, np, nop;
  const int64_t *ks = dml_cpu_get_ints(c, "kernel_shape", &nks);
  const int64_t *st = dml_cpu_get_ints(c, "strides", &ns);
  const int64_t *dl = dml_cpu_get_ints(c, "dilations", &nd);
  const int64_t *pads = dml_cpu_get_ints(c, "pads", &np);
  const int64_t *opad = dml_cpu_get_ints(c, "output_padding", &nop);
  if ((ks && nks != (size_t)r) || (st && ns != (size_t)r) || (dl && nd != (size_t)r) ||
      (pads && np != 2 * (size_t)r) || (opad && nop != (size_t)r))
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "kernel_shape/strides/dilations/pads/output_padding have the "
                         "wrong length for %d spatial dims",
                         r);
  const char *ap = dml_cpu_get_string(c, "auto_pad", "NOTSET");
  int same_upper = strcmp(ap, "SAME_UPPER") == 0,
      same_lower = strcmp(ap, "SAME_LOWER") == 0;
  int valid = strcmp(ap, "VALID") == 0;
  if (!same_upper && !same_lower && !valid && strcmp(ap, "NOTSET") != 0)
    return dml_cpu_error(c, DML_STATUS_UNIMPLEMENTED, "auto_pad '%s' is not supported",
                         ap);
  int explicit_oshape = dml_attr_find(c->attrs, c->n_attrs, "output_shape") != NULL;
  g->in_sz = g->out_sz = g->k_sz = 1;
  for (int i = 0; i < r; i++) {
    g->in[i] = x->dims[2 + i];
    g->out[i] = y->dims[2 + i];
    g->k[i] = w->dims[2 + i];
    if (ks && ks[i] != g->k[i])
      return dml_cpu_err_shapes(c, "kernel_shape differs from W");
    g->s[i] = st ? st[i] : 1;
    g->d[i] = dl ? dl[i] : 1;
    if (g->s[i] < 1 || g->d[i] < 1)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "strides and dilations must be >= 1");
    int64_t ek = (g->k[i] - 1) * g->d[i] + 1;
    int64_t expect;
    if (!transpose) {
      if (same_upper || same_lower) {
        expect = ceil_div(g->in[i], g->s[i]);
        g->pb[i] = dml_shape_same_pad_begin(g->in[i], ek, g->s[i], same_upper, NULL);
      } else if (valid) {
        expect = g->in[i] >= ek ? (g->in[i] - ek) / g->s[i] + 1 : 0;
        g->pb[i] = 0;
      } else {
        int64_t pb = pads ? pads[i] : 0, pe = pads ? pads[r + i] : 0;
        g->pb[i] = pb;
        int64_t span = g->in[i] + pb + pe - ek;
        expect = span >= 0 ? span / g->s[i] + 1 : 0;
      }
    } else {
      int64_t op = opad ? opad[i] : 0;
      int64_t full = g->s[i] * (g->in[i] - 1) + op + ek;
      if (pads && !same_upper && !same_lower && !explicit_oshape) {
        g->pb[i] = pads[i];
        expect = full - pads[i] - pads[r + i];
      } else if (valid) {
        g->pb[i] = 0;
        expect = full;
      } else {
        /* output_shape or SAME_*: the pads follow from the output size. */
        int64_t total = full - g->out[i];
        if (total < 0) total = 0;
        g->pb[i] = same_upper ? total / 2 : total - total / 2;
        expect = g->out[i];
      }
    }
    if (expect != g->out[i])
      return dml_cpu_err_shapes(c, "spatial dim %d: output %lld, expected %lld", i,
                                (long long)g->out[i], (long long)expect);
    g->in_sz *= g->in[i];
    g->out_sz *= g->out[i];
    g->k_sz *= g->k[i];
  }
  g->pointwise = !transpose;
  for (int i = 0; i < r; i++)
    if (g->k[i] != 1 || g->s[i] != 1 || g->pb[i] != 0 || g->in[i] != g->out[i])
      g->pointwise = 0;
  return DML_OK;
}

/* Depthwise: one input channel per output channel, 2-D (direct kernel). */
static int is_depthwise(const conv_geo_t *g) {
  return g->r == 2 && g->group == g->C && g->Cg == 1 && g->Mg == 1;
}

/* ---- im2col / col2im -------------------------------------------------- */

/* col[(c, k...), o...] for one image and one group: x points at the
 * group's first channel. */
static void im2col(const conv_geo_t *g, const float *x, float *col) {
  if (g->r == 2) {
    int64_t H = g->in[0], W = g->in[1], OH = g->out[0], OW = g->out[1];
    for (int64_t ch = 0; ch < g->Cg; ch++)
      for (int64_t kh = 0; kh < g->k[0]; kh++)
        for (int64_t kw = 0; kw < g->k[1]; kw++) {
          const float *xc = x + ch * H * W;
          for (int64_t oh = 0; oh < OH; oh++) {
            int64_t ih = oh * g->s[0] - g->pb[0] + kh * g->d[0];
            float *dst = col + oh * OW;
            if (ih < 0 || ih >= H) {
              memset(dst, 0, (size_t)OW * sizeof(float));
              continue;
            }
            const float *row = xc + ih * W;
            int64_t off = kw * g->d[1] - g->pb[1];
            if (g->s[1] == 1) {
              /* valid ow range: 0 <= ow + off < W */
              int64_t lo = DML_CPU_MAX((int64_t)0, -off), hi = DML_CPU_MIN(OW, W - off);
              if (hi < lo) hi = lo;
              for (int64_t ow = 0; ow < lo && ow < OW; ow++) dst[ow] = 0.0f;
              if (hi > lo)
                memcpy(dst + lo, row + lo + off, (size_t)(hi - lo) * sizeof(float));
              for (int64_t ow = hi; ow < OW; ow++) dst[ow] = 0.0f;
            } else {
              for (int64_t ow = 0; ow < OW; ow++) {
                int64_t iw = ow * g->s[1] + off;
                dst[ow] = iw >= 0 && iw < W ? row[iw] : 0.0f;
              }
            }
          }
          col += OH * OW;
        }
    return;
  }
  /* Generic N-D. */
  int r = g->r;
  for (int64_t ch = 0; ch < g->Cg; ch++) {
    const float *xc = x + ch * g->in_sz;
    for (int64_t kk = 0; kk < g->k_sz; kk++) {
      int64_t kidx[SP_MAX], rem = kk;
      for (int i = r - 1; i >= 0; i--) kidx[i] = rem % g->k[i], rem /= g->k[i];
      int64_t oidx[SP_MAX] = {0};
      for (int64_t o = 0; o < g->out_sz; o++) {
        int64_t off = 0, inb = 1;
        for (int i = 0; i < r; i++) {
          int64_t p = oidx[i] * g->s[i] - g->pb[i] + kidx[i] * g->d[i];
          if (p < 0 || p >= g->in[i]) {
            inb = 0;
            break;
          }
          off = off * g->in[i] + p;
        }
        col[o] = inb ? xc[off] : 0.0f;
        for (int i = r - 1; i >= 0; i--) {
          if (++oidx[i] < g->out[i]) break;
          oidx[i] = 0;
        }
      }
      col += g->out_sz;
    }
  }
}

/* im2col of one image and group (2-D), output columns [j_begin, j_end),
 * written in the GEMM's packed-B layout (cpu_internal.h, DML_CPU_GEMM_KC):
 * the bytes dml_cpu_sgemm_pack_b would make of im2col's matrix. Each row k
 * = (channel, kh, kw) is built in `rowbuf` (DML_CPU_GEMM_NC floats, in L1)
 * from one copy per output row, then cut into its panels, so the expanded
 * matrix never goes through memory. */
DML_CPU_CLONES static void im2col_packed(const conv_geo_t *g, const float *x, float *dst,
                                         int nr, int64_t j_begin, int64_t j_end,
                                         float *restrict rowbuf) {
  int64_t H = g->in[0], W = g->in[1], OW = g->out[1], KW = g->k[1];
  int64_t K = g->Cg * g->k_sz, N = j_end - j_begin, s1 = g->s[1];
  for (int64_t jc = 0; jc < N; jc += DML_CPU_GEMM_NC) {
    int64_t nc = DML_CPU_MIN((int64_t)DML_CPU_GEMM_NC, N - jc);
    int64_t ncp = (nc + nr - 1) / nr * nr;
    for (int64_t k = 0; k < K; k++) {
      int64_t pc = k / DML_CPU_GEMM_KC * DML_CPU_GEMM_KC, kk = k - pc;
      int64_t kc = DML_CPU_MIN((int64_t)DML_CPU_GEMM_KC, K - pc);
      int64_t ch = k / g->k_sz, kh = (k % g->k_sz) / KW, kw = k % KW;
      const float *xc = x + ch * H * W;
      int64_t off = kw * g->d[1] - g->pb[1];
      /* valid ow: 0 <= ow*s1 + off < W */
      int64_t lo = off >= 0 ? 0 : (-off + s1 - 1) / s1;
      int64_t hi = W - off > 0 ? (W - off + s1 - 1) / s1 : 0;
      if (hi > OW) hi = OW;
      if (lo > hi) lo = hi;
      /* rowbuf[j] = column j_begin + jc + j of row k */
      int64_t oh = (j_begin + jc) / OW, ow0 = (j_begin + jc) % OW;
      for (int64_t j = 0; j < nc; oh++, ow0 = 0) {
        int64_t n = DML_CPU_MIN(OW - ow0, nc - j), e = ow0 + n;
        int64_t ih = oh * g->s[0] - g->pb[0] + kh * g->d[0];
        float *d = rowbuf + j - ow0; /* d[ow] for ow in [ow0, e) */
        if (ih < 0 || ih >= H) {
          memset(d + ow0, 0, (size_t)n * sizeof(float));
        } else {
          const float *row = xc + ih * W;
          int64_t v0 = DML_CPU_MAX(ow0, lo), v1 = DML_CPU_MIN(e, hi);
          if (v1 < v0) v0 = v1 = e;
          for (int64_t ow = ow0; ow < v0; ow++) d[ow] = 0.0f;
          if (s1 == 1)
            memcpy(d + v0, row + v0 + off, (size_t)(v1 - v0) * sizeof(float));
          else
            for (int64_t ow = v0; ow < v1; ow++) d[ow] = row[ow * s1 + off];
          for (int64_t ow = v1; ow < e; ow++) d[ow] = 0.0f;
        }
        j += n;
      }
      for (int64_t j = nc; j < ncp; j++) rowbuf[j] = 0.0f; /* the last panel's padding */
      float *blk = dst + jc * K + pc * ncp + kk * nr;
      if (nr == 32)
        for (int64_t p = 0; p < ncp; p += 32) memcpy(blk + p * kc, rowbuf + p, 32 * 4);
      else
        for (int64_t p = 0; p < ncp; p += nr) memcpy(blk + p * kc, rowbuf + p, 16 * 4);
    }
  }
}

/* 1 when conv_task writes the GEMM's packed B itself (im2col_packed). */
static int packs_col(const conv_geo_t *g) {
  return g->r == 2 && !g->pointwise && dml_cpu_sgemm_packs(g->Mg);
}

/* ConvTranspose: y[m, o] += col[(m, k), i] where o = i*s - pb + k*d. Here
 * "in" is the transpose conv's input (col's columns). */
static void col2im(const conv_geo_t *g, const float *col, float *y) {
  int r = g->r;
  for (int64_t m = 0; m < g->Mg; m++) {
    float *ym = y + m * g->out_sz;
    for (int64_t kk = 0; kk < g->k_sz; kk++) {
      int64_t kidx[SP_MAX], rem = kk;
      for (int i = r - 1; i >= 0; i--) kidx[i] = rem % g->k[i], rem /= g->k[i];
      const float *src = col + (m * g->k_sz + kk) * g->in_sz;
      if (r == 2) {
        for (int64_t ih = 0; ih < g->in[0]; ih++) {
          int64_t oh = ih * g->s[0] - g->pb[0] + kidx[0] * g->d[0];
          if (oh < 0 || oh >= g->out[0]) continue;
          float *yrow = ym + oh * g->out[1];
          const float *srow = src + ih * g->in[1];
          int64_t off = kidx[1] * g->d[1] - g->pb[1];
          for (int64_t iw = 0; iw < g->in[1]; iw++) {
            int64_t ow = iw * g->s[1] + off;
            if (ow >= 0 && ow < g->out[1]) yrow[ow] += srow[iw];
          }
        }
        continue;
      }
      int64_t iidx[SP_MAX] = {0};
      for (int64_t i = 0; i < g->in_sz; i++) {
        int64_t off = 0, inb = 1;
        for (int d = 0; d < r; d++) {
          int64_t p = iidx[d] * g->s[d] - g->pb[d] + kidx[d] * g->d[d];
          if (p < 0 || p >= g->out[d]) {
            inb = 0;
            break;
          }
          off = off * g->out[d] + p;
        }
        if (inb) ym[off] += src[i];
        for (int d = r - 1; d >= 0; d--) {
          if (++iidx[d] < g->in[d]) break;
          iidx[d] = 0;
        }
      }
    }
  }
}

/* ---- scratch layout --------------------------------------------------- */

static size_t align64(size_t x) {
  return (x + 63) & ~(size_t)63;
}

typedef struct {
  size_t col_bytes, gemm_bytes, slot_bytes;
  int batch_parallel; /* slots = threads, one (image, group, column chunk) per task */
} conv_mem_t;

/* 1 when a task may take a chunk of an image's output columns (the GEMM
 * reads B with a leading dimension: 1x1 convolutions and im2col_packed). */
static int splits_cols(const conv_geo_t *g) {
  return g->pointwise || packs_col(g);
}

static conv_mem_t conv_mem(const conv_geo_t *g, int transpose, int threads) {
  conv_mem_t m = {0, 0, 0, 0};
  int64_t gm, gn, gk;
  if (!transpose) {
    m.col_bytes = g->pointwise ? 0 : align64((size_t)(g->Cg * g->k_sz * g->out_sz) * 4);
    if (packs_col(g))
      m.col_bytes =
          align64(dml_cpu_sgemm_packed_b_floats(g->out_sz, g->Cg * g->k_sz) * 4);
    gm = g->Mg, gn = g->out_sz, gk = g->Cg * g->k_sz;
  } else {
    m.col_bytes = align64((size_t)(g->Mg * g->k_sz * g->in_sz) * 4);
    gm = g->Mg * g->k_sz, gn = g->in_sz, gk = g->Cg;
  }
  /* One image (and group) per thread, when there is enough work to pay for
   * waking the pool. */
  double macs = (double)gm * (double)gn * (double)gk * (double)(g->N * g->group);
  m.batch_parallel = threads > 1 && !transpose &&
                     (g->N * g->group >= 2 || splits_cols(g)) &&
                     macs >= DML_CPU_CONV_PARALLEL_MIN_MACS;
  if (transpose)
    m.batch_parallel =
        threads > 1 && g->N * g->group >= 2 && macs >= DML_CPU_PARALLEL_MIN_MACS;
  m.gemm_bytes =
      align64(dml_cpu_sgemm_scratch(gm, gn, gk, m.batch_parallel ? 1 : threads));
  m.slot_bytes = m.col_bytes + m.gemm_bytes;
  return m;
}

/* ---- direct 2-D convolution, stride 1 (AVX-512) ---------------------- */

/* Where it runs: group 1, 2-D, stride 1, dilation 1, a kernel larger than
 * 1x1, output rows filling at least 5/8 of their 16-float vectors (at half,
 * e.g. 8x8 images, im2col + GEMM was faster), the
 * padded image within DIRECT_MAX_FLOATS, on the AVX-512 micro-kernel.
 * Elsewhere im2col + GEMM. */
#define DIRECT_MAX_FLOATS (4 << 20)
/* Pointwise convolutions (1x1, stride 1, unpadded: any rank) take it too,
 * on their image read in place as one row of out_sz floats (pw_flatten):
 * no im2col, no packing of B, the epilogue in registers. There X is read
 * once per 8 output channels, so only where one image's X is at most
 * PW_MAX_FLOATS (it stays in L2) and K at most PW_MAX_K; elsewhere the
 * GEMM. */
#define PW_MAX_FLOATS (64 << 10)
#define PW_MAX_K 512
/* Up to this many input channels pw_tiles copies its position chunks into
 * a contiguous block first (pw_tiles' comment says why). */
#define PW_PACK_K 16
static int direct_ok(const conv_geo_t *g) {
#if DML_CPU_X86
  if (g->pointwise) {
    int64_t nv = (g->out_sz + 15) / 16;
    return g->group == 1 && g->C <= PW_MAX_K &&
           (double)g->C * (double)g->in_sz <= PW_MAX_FLOATS &&
           8 * g->out_sz >= 5 * 16 * nv && dml_cpu_sgemm_isa() == 3;
  }
  if (g->r != 2 || g->group != 1 || g->k_sz == 1) return 0;
  if (g->s[0] != 1 || g->s[1] != 1 || g->d[0] != 1 || g->d[1] != 1) return 0;
  int64_t OW = g->out[1], nv = (OW + 15) / 16;
  if (8 * OW < 5 * 16 * nv) return 0;
  int64_t hp = g->out[0] + g->k[0] - 1, wp = OW + g->k[1] - 1;
  if ((double)g->C * (double)hp * (double)wp > DIRECT_MAX_FLOATS) return 0;
  return dml_cpu_sgemm_isa() == 3;
#else
  (void)g;
  return 0;
#endif
}

/* A pointwise geometry as the direct path reads it: 2-D, one row of
 * out_sz positions, a 1x1 kernel (the same sums: each output reads its own
 * position of every channel). Other geometries are left as they are. */
static void pw_flatten(conv_geo_t *g) {
  if (!g->pointwise) return;
  g->r = 2;
  g->in[0] = g->out[0] = 1;
  g->in[1] = g->out[1] = g->out_sz;
  g->k[0] = g->k[1] = g->s[0] = g->s[1] = g->d[0] = g->d[1] = 1;
  g->pb[0] = g->pb[1] = 0;
}

/* Scratch of the direct path: the weights packed (when not given packed),
 * then one zero-padded image per slot (none for pointwise: X is read in
 * place). */
static size_t direct_apack_bytes(const conv_geo_t *g) {
  return align64(dml_cpu_sgemm_packed_a_floats(g->M, g->C * g->k_sz) * 4);
}
static size_t direct_slot_bytes(const conv_geo_t *g) {
  if (g->pointwise) return 0;
  int64_t hp = g->out[0] + g->k[0] - 1, wp = g->out[1] + g->k[1] - 1;
  return align64((size_t)(g->C * hp * wp) * 4);
}
static int direct_slots(const conv_geo_t *g, int threads) {
  double macs =
      (double)g->M * (double)(g->C * g->k_sz) * (double)g->out_sz * (double)g->N;
  return threads > 1 && g->N >= 2 && macs >= DML_CPU_CONV_PARALLEL_MIN_MACS
             ? (int)DML_CPU_MIN((int64_t)threads, g->N)
             : 1;
}

/* ---- strided pointwise: 1x1, stride > 1, unpadded (AVX-512) ---------- */

/* ResNet's shortcuts (1x1 stride 2): each image's strided inputs
 * X[c, oh*s0, ow*s1] are gathered once into a contiguous [C][OH*OW] buffer
 * (stride 2 in width: two loads and a permute per 16 outputs, flat_row_s2),
 * then pw_tiles runs on it as on a stride-1 pointwise image (6 output
 * channels x 64 positions, plain loads). The same sums as cv_tiles (one
 * chain of fused multiply-adds per output over k in order from 0, the
 * epilogue in registers), so the same bits. pws_geo gives the pointwise
 * geometry pw_tiles reads (C, M, out_sz); pws_ok where direct_ok takes
 * that geometry (every position read lies inside X) and K <= PW_PACK_K:
 * with 32 input channels (resnet_small's 32 -> 64 shortcut, 8x8 output)
 * the gather lost 10 us of 65 in the model at batch 32 (per-node minimum,
 * three alternations) and gained nothing in cpu_kernel_bench. */
static int pws_geo(const conv_geo_t *g, conv_geo_t *gp) {
  if (g->r != 2 || g->group != 1 || g->pointwise || g->k_sz != 1) return 0;
  if (g->pb[0] != 0 || g->pb[1] != 0 || g->out[0] < 1 || g->out[1] < 1) return 0;
  if ((g->out[0] - 1) * g->s[0] >= g->in[0] || (g->out[1] - 1) * g->s[1] >= g->in[1])
    return 0;
  *gp = *g;
  gp->pointwise = 1;
  gp->in[0] = g->out[0], gp->in[1] = g->out[1];
  gp->in_sz = g->out_sz;
  gp->s[0] = gp->s[1] = 1;
  pw_flatten(gp);
  return 1;
}
static int pws_ok(const conv_geo_t *g) {
  conv_geo_t gp;
  return g->C <= PW_PACK_K && pws_geo(g, &gp) && direct_ok(&gp);
}
static size_t pws_slot_bytes(const conv_geo_t *g) {
  return align64((size_t)(g->C * g->out_sz) * 4);
}

/* ---- direct 2-D convolution over flattened phase planes (AVX-512) ---- */

/* For strides > 1 and for stride-1 rows too narrow for direct_tiles
 * (8x8 images): no im2col. Each image is copied once zero-padded and split
 * by phase: for a stride (s0, s1), phase (a, b) holds the padded rows
 * a, a + s0, ... and columns b, b + s1, ... (planes of hq x wq floats, hq =
 * OH + (KH-1)/s0, wq = OW + (KW-1)/s1; only the phases some tap reads).
 * Output (oh, ow) is flattened to position P = oh * wq + ow of that grid, so
 * that tap (kh, kw) of 16 consecutive positions reads 16 consecutive floats
 * of phase (kh % s0, kw % s1) at P + (kh / s0) * wq + kw / s1: positions
 * with ow >= OW are computed and dropped (the cost of the method: wq / OW
 * more work), and no gather is needed. 8 output channels x 2 vectors of
 * positions accumulate in registers over k = (c, kh, kw) in order with
 * fused multiply-adds from 0 (the packed weights, GEMM A panels, as
 * direct_tiles); each vector's row pieces are stored with masks, then the
 * bias and the epilogue per chunk. Each element's roundings are the same
 * whatever the batch, the split and the position of its vector. */
typedef struct {
  int64_t s0, s1, nph, npw; /* strides; phases read (min(s, k)) */
  int64_t hq, wq, plane;    /* phase planes: rows, columns, floats */
  int64_t np, nvec;         /* positions computed (up to the last output), vectors */
  int64_t cstride;          /* floats per channel: nph * npw * plane */
} flat_geo_t;

#define FLAT_MAX_TAPS 64

static int flat_plan(const conv_geo_t *g, flat_geo_t *f) {
  if (g->r != 2 || g->group != 1 || g->pointwise || g->d[0] != 1 || g->d[1] != 1)
    return 0;
  if (g->s[0] < 1 || g->s[0] > 4 || g->s[1] < 1 || g->s[1] > 4) return 0;
  if (g->k_sz > FLAT_MAX_TAPS || g->C < 1 || g->out[0] < 1 || g->out[1] < 1) return 0;
  f->s0 = g->s[0], f->s1 = g->s[1];
  f->nph = DML_CPU_MIN(f->s0, g->k[0]), f->npw = DML_CPU_MIN(f->s1, g->k[1]);
  f->hq = g->out[0] + (g->k[0] - 1) / f->s0;
  f->wq = g->out[1] + (g->k[1] - 1) / f->s1;
  f->plane = f->hq * f->wq;
  f->np = (g->out[0] - 1) * f->wq + g->out[1];
  f->nvec = (f->np + 15) / 16;
  f->cstride = f->nph * f->npw * f->plane;
  return (double)g->C * (double)f->cstride <= DIRECT_MAX_FLOATS;
}

/* Where it runs (AVX-512 only): group 1, 2-D, dilation 1, strides up to 4
 * and kernels up to 64 taps, the planes within DIRECT_MAX_FLOATS; for
 * stride 1 only where direct_tiles does not (rows under 5/8 of their
 * vectors) and at most a quarter of the positions dropped. */
static int flat_ok(const conv_geo_t *g) {
#if DML_CPU_X86
  flat_geo_t f;
  if (dml_cpu_sgemm_isa() != 3 || !flat_plan(g, &f)) return 0;
  if (g->s[0] == 1 && g->s[1] == 1 && (g->k_sz == 1 || direct_ok(g))) return 0;
  return 4 * f.nvec * 16 <= 5 * g->out_sz + 64;
#else
  (void)g;
  return 0;
#endif
}

/* Floats of one image's phase planes, with 32 past the end that the last
 * vectors may read (their positions are dropped). */
static size_t flat_slot_bytes(const conv_geo_t *g) {
  flat_geo_t f;
  if (!flat_plan(g, &f)) return 0;
  return align64((size_t)(g->C * f.cstride + 32) * 4);
}

/* ---- channel-vectorized direct 2-D convolution (AVX-512) ------------- */

/* For strides 1 and 2 and narrow images, where flat_tiles computes dropped
 * positions and rebuilds phase planes: output tiles of 16 output channels x
 * 16 consecutive output positions (a row piece of 16 when OW >= 16, 16 / OW
 * whole rows when OW is 4 or 8). For each k = (c, kh, kw) in order, one
 * vector of the 16 channels' weights (packed [ceil(M/16)][K][16], cv_pack)
 * times the 16 positions' input values broadcast from the zero-padded
 * image (pad_image: rows (OH-1)*s0 + KH, columns (OW-1)*s1 + KW; position
 * (oh, ow) reads (oh*s0 + kh, ow*s1 + kw)): 16 accumulators, one per
 * position, fused multiply-adds from 0 over all of K in order. A 16 x 16
 * transpose in registers then gives each channel's 16 positions, which get
 * the bias and epilogue (tile_ep) and one masked store. No im2col and no
 * phase planes; the roundings are the direct kernels' (one chain per
 * output in k order), whatever the split.
 *
 * Small images (3-wide kernels, OW 3, 5, 6 or 7: ResNet's last layers at
 * 96x96 and 224x224 inputs, which flat_tiles ran with its dropped pad
 * columns and 8-channel x 32-position blocks): tiles of R = 16 / OW whole
 * rows (3 rows when OH = OW = 3), R * OW positions (9 to 15) and as many
 * accumulators; the last tile's rows past OH repeat its last row and are
 * not stored (cvr_rows); for 9 and 12 positions two 16-channel blocks per
 * pass (CV_TILES's NB: 18 or 24 accumulators, each broadcast used by both).
 * The same chains as flat_tiles, so the same bits. */
typedef struct {
  int64_t hp, wp, plane; /* padded image: rows, columns, floats per channel */
  int inplace;           /* no padding needed: X itself (hp, wp = H, W) */
  int64_t R;             /* output rows per tile: 1 (OW >= 16), else R * cols <= 16 */
  int64_t cols;          /* positions per tile row: 16 (R == 1) or OW */
  int64_t tpr, tiles;    /* tiles per output row (R == 1), tiles per image */
  int64_t nb;            /* 16-channel blocks of M */
} cv_geo_t;

#define CV_MAX_TAPS 64

static int cvr_enabled = 1;
int dml_cpu_conv_cvr_set(int on) {
  int was = cvr_enabled;
  cvr_enabled = on;
  return was;
}

/* Rows per tile of the small-image tiles for an OH x OW output (3-wide
 * kernels), 0 where they do not apply: 16 / OW rows for OW in {3, 5, 6, 7},
 * 3 for a 3x3 output (the instances cv_tiles has). */
static int64_t cvr_rows(int64_t OH, int64_t OW, int64_t KW) {
  if (!cvr_enabled || KW != 3 || !(OW == 3 || OW == 5 || OW == 6 || OW == 7)) return 0;
  return OW == 3 && OH == 3 ? 3 : 16 / OW;
}

/* A pointwise geometry is planned as pw_flatten makes it (the caller runs
 * the kernel on that geometry too): one row of out_sz positions. */
static int cv_plan(const conv_geo_t *g0, cv_geo_t *v) {
  conv_geo_t flat;
  const conv_geo_t *g = g0;
  if (g0->pointwise) {
    flat = *g0;
    pw_flatten(&flat);
    g = &flat;
  }
  if (g->r != 2 || g->group != 1 || g->d[0] != 1 || g->d[1] != 1) return 0;
  if (g->s[0] < 1 || g->s[0] > 2 || g->s[1] < 1 || g->s[1] > 2) return 0;
  if (g->k_sz > CV_MAX_TAPS || g->C < 1 || g->out[0] < 1) return 0;
  int64_t OH = g->out[0], OW = g->out[1];
  v->cols = 16;
  if (OW >= 16 || (g0->pointwise && OW > 0)) {
    /* (a flattened pointwise image of fewer than 16 positions: one
     * partial row piece) */
    v->R = 1;
    v->tpr = (OW + 15) / 16;
    v->tiles = OH * v->tpr;
  } else if (OW == 8 || OW == 4) {
    v->R = 16 / OW;
    if (OH % v->R) return 0;
    v->cols = OW;
    v->tpr = 1;
    v->tiles = OH / v->R;
  } else if ((v->R = cvr_rows(OH, OW, g->k[1])) > 0) {
    v->cols = OW;
    v->tpr = 1;
    v->tiles = (OH + v->R - 1) / v->R;
  } else {
    return 0;
  }
  v->hp = (OH - 1) * g->s[0] + g->k[0];
  v->wp = (OW - 1) * g->s[1] + g->k[1];
  /* Every read inside X (no padding, whole tiles): X is read in place. */
  v->inplace = g->pb[0] == 0 && g->pb[1] == 0 && v->hp <= g->in[0] && v->wp <= g->in[1] &&
               (v->R > 1 || OW % 16 == 0);
  if (v->inplace) v->hp = g->in[0], v->wp = g->in[1];
  v->plane = v->hp * v->wp;
  v->nb = (g->M + 15) / 16;
  return (double)g->C * (double)v->plane <= DIRECT_MAX_FLOATS;
}

/* Where it runs (AVX-512 only): cv_plan's geometries (group 1, dilation 1,
 * strides 1-2, OW >= 16 or OW in {4, 8}; with 3-wide kernels also OW in
 * {3, 5, 6, 7}, cvr_rows: resnet18's 512 -> 512 at 3x3 (96x96 export) from
 * flat_tiles, stop 25's zoo section in bench/RESULTS.md); of those that direct_tiles
 * takes, the 3-wide kernels and the others whose padded image is at most
 * CV_DIRECT_MAX_FLOATS (cpu_kernel_bench, 3x3 64->64 at 56x56: cv's 3-wide
 * loop ahead of direct_tiles, its general loop behind; at 16x32x32 both
 * ahead). Pointwise convolutions only where the image has fewer than 16
 * positions and the pointwise kernel declines it (at most 9: less than 5/8
 * of a vector; EfficientNet's and MobileNet's last blocks at 96x96 are 3x3):
 * one tile of 16 positions per 16 output channels instead of im2col-free
 * GEMM panels over 9 columns (3.7M multiply-adds, 320 -> 1280 at 3x3: 193
 * -> 74 us, stop 25 in bench/RESULTS.md; the caller flattens the geometry,
 * pw_flatten, as for the pointwise kernel). */
#define CV_DIRECT_MAX_FLOATS (64 << 10)
static int cv_ok(const conv_geo_t *g) {
#if DML_CPU_X86
  cv_geo_t v;
  if (g->pointwise && (g->out_sz >= 16 || direct_ok(g))) return 0;
  if (dml_cpu_sgemm_isa() != 3 || !cv_plan(g, &v)) return 0;
  if (g->pointwise) return 1;
  return !direct_ok(g) || g->k[1] == 3 ||
         (double)g->C * (double)v.plane <= CV_DIRECT_MAX_FLOATS;
#else
  (void)g;
  return 0;
#endif
}

/* Scratch of the cv path: the packed weights, then one padded image per
 * slot (with 32 floats past its end that a row piece's last tile may read:
 * its positions past OW are dropped). */
static size_t cv_wpack_bytes(const conv_geo_t *g) {
  return align64((size_t)((g->M + 15) / 16 * 16 * g->C * g->k_sz) * 4);
}
static size_t cv_slot_bytes(const conv_geo_t *g) {
  cv_geo_t v;
  if (!cv_plan(g, &v) || v.inplace) return 0;
  return align64((size_t)(g->C * v.plane + 32) * 4);
}

/* dst[b][k][j] = W[16b + j][k] (0 for 16b + j >= M): W as [M][K]. */
static void cv_pack(int64_t M, int64_t K, const float *restrict w, float *restrict dst) {
  int64_t nb = (M + 15) / 16;
  for (int64_t b = 0; b < nb; b++)
    for (int64_t k = 0; k < K; k++)
      for (int64_t j = 0; j < 16; j++) {
        int64_t m = 16 * b + j;
        dst[(b * K + k) * 16 + j] = m < M ? w[m * K + k] : 0.0f;
      }
}

/* dml_cpu_conv_prepack's buffer also holds cv_pack's layout (after the
 * GEMM operand, at cv_prepack_at floats) for group-1 2-D weights of at most
 * CV_MAX_TAPS taps on AVX-512, which the cv path may take whatever the
 * image size. */
static int cv_prepacks(const dml_tensor_t *w, int64_t group) {
  return DML_CPU_X86 && group == 1 && w->rank == 4 &&
         w->dims[2] * w->dims[3] <= CV_MAX_TAPS && dml_cpu_sgemm_isa() == 3;
}
static size_t cv_prepack_at(int64_t M, int64_t K) {
  return (dml_cpu_sgemm_packed_a_floats(M, K) + 15) / 16 * 16;
}

/* ---- Winograd F(2x2, 3x3), stride 1 (AVX-512) ------------------------ */

/* 3x3 stride-1 convolutions with at least WG_MIN_C input channels (ResNet's
 * 64 -> 64 at 8x8; with 32 channels, resnet_small's 32 -> 32 at 16x16, the
 * transforms cost more than the products saved: 3-5% slower than cv_tiles
 * in the model): each image's output in 2x2
 * tiles, the tile's 4x4 padded input patch d and each 3x3 filter g
 * transformed (V = B^T d B, U = G g G^T, G's rows (1,0,0), (1/2,1/2,1/2),
 * (1/2,-1/2,1/2), (0,0,1)), for each of the 16 transform positions xi the
 * product M_xi[m][t] = sum over c in order of U_xi[m][c] V_xi[c][t] (fused
 * multiply-adds from 0; 16 output channels x 16 tiles in registers), then
 * Y = A^T M A (A^T's rows (1,1,1,0), (0,1,-1,-1)) and the epilogue (tile_ep's
 * steps, the residual added after the BatchNormalization) before each
 * store. 16 products per tile of 4 outputs instead of 36: 2.25x fewer
 * multiply-adds, plus the transforms. Not the direct kernels' bits: the
 * transforms round (error bound in docs/cpu.md; test_cpu_linalg checks it
 * against a double-precision loop); the same bits whatever the batch, the
 * thread count and fusion (each image alone, one order). An Inf or NaN in X
 * or W would spread through the transforms (Inf - Inf) where the direct sum
 * gives Inf: calls with one take the cv kernel (wg_finite). */
#define WG_MIN_C 64
typedef struct {
  int64_t hp, wp, plane; /* padded image: rows OH + 2, columns OW + 2 */
  int64_t th, tw, T;     /* tile rows, tile columns, tiles (a multiple of 16) */
  int64_t nb;            /* 16-channel blocks of M */
} wg_geo_t;

static int wg_enabled = 1;
int dml_cpu_conv_wg_set(int on) {
  int was = wg_enabled;
  wg_enabled = on;
  return was;
}

/* The geometries it takes: 2-D, group 1, 3x3, stride 1, dilation 1, even
 * OH and OW with OW / 2 == 4 or a multiple of 8 (a vector of 16 tiles then
 * covers whole tile rows or 8-tile row pieces), 16 | tiles, C >= WG_MIN_C,
 * the transformed image at most WG_MAX_V floats. */
#define WG_MAX_V (256 << 10)
static int wg_plan(const conv_geo_t *g, wg_geo_t *v) {
  if (g->r != 2 || g->group != 1 || g->k[0] != 3 || g->k[1] != 3) return 0;
  if (g->s[0] != 1 || g->s[1] != 1 || g->d[0] != 1 || g->d[1] != 1) return 0;
  if (g->C < WG_MIN_C || g->out[0] % 2 || g->out[1] % 2) return 0;
  v->th = g->out[0] / 2, v->tw = g->out[1] / 2, v->T = v->th * v->tw;
  if (v->T % 16 || (v->tw != 4 && v->tw % 8)) return 0;
  v->hp = g->out[0] + 2, v->wp = g->out[1] + 2, v->plane = v->hp * v->wp;
  v->nb = (g->M + 15) / 16;
  return (double)g->C * (double)v->T * 16.0 <= WG_MAX_V &&
         (double)g->C * (double)v->plane <= DIRECT_MAX_FLOATS;
}

/* Where it runs: wg_plan's geometries on AVX-512, whatever the batch and
 * the thread count (so an image gets the same bits alone or in a batch). */
static int wg_ok(const conv_geo_t *g) {
#if DML_CPU_X86
  wg_geo_t v;
  return wg_enabled && dml_cpu_sgemm_isa() == 3 && wg_plan(g, &v);
#else
  (void)g;
  return 0;
#endif
}

/* 1 when none of the n floats is Inf or NaN. */
static int wg_finite(const float *p, int64_t n) {
  const uint32_t *u = (const uint32_t *)(const void *)p;
  uint32_t bad = 0;
  for (int64_t i = 0; i < n; i++) bad |= (u[i] & 0x7f800000u) == 0x7f800000u;
  return !bad;
}

/* The transformed weights: [16 xi][nb][C][16] floats (0 for m >= M). */
static size_t wg_wpack_floats(int64_t M, int64_t C) {
  return (size_t)(16 * ((M + 15) / 16) * 16 * C);
}
/* Per slot: the padded image (+64 floats read past it), the row-transformed
 * rows of WG_CG channels (8 arrays of (th + 1) * tw + 16 each), V [16][C][T], the
 * products of one block [16 xi][16 m][16 tiles] (WG_MB_BYTES; a single
 * image split over the threads takes one such block per thread after the
 * slot). */
#define WG_MB_BYTES (16 * 256 * 4)
#define WG_CG 8 /* channels per row pass of wg_input */
static size_t wg_slot_bytes(const conv_geo_t *g) {
  wg_geo_t v;
  if (!wg_plan(g, &v)) return 0;
  return align64((size_t)(g->C * v.plane + 64) * 4) +
         align64((size_t)(WG_CG * 8 * ((v.th + 1) * v.tw + 16)) * 4) +
         align64((size_t)(16 * g->C * v.T) * 4) + WG_MB_BYTES;
}

/* U = G g G^T for every (m, c) of W [M][C][3][3], into wg_wpack_floats'
 * layout. */
static void wg_pack(int64_t M, int64_t C, const float *restrict w, float *restrict dst) {
  int64_t nb = (M + 15) / 16;
  for (int64_t b = 0; b < nb; b++)
    for (int64_t c = 0; c < C; c++) {
      float u[16][16]; /* [xi][j]: m = 16b + j */
      for (int64_t j = 0; j < 16; j++) {
        int64_t m = 16 * b + j;
        if (m >= M) {
          for (int xi = 0; xi < 16; xi++) u[xi][j] = 0.0f;
          continue;
        }
        const float *k = w + (m * C + c) * 9;
        float t[4][3]; /* G g */
        for (int q = 0; q < 3; q++) {
          float a = k[q], bb = k[3 + q], e = k[6 + q];
          t[0][q] = a;
          t[1][q] = 0.5f * (a + bb + e);
          t[2][q] = 0.5f * (a - bb + e);
          t[3][q] = e;
        }
        for (int i = 0; i < 4; i++) { /* (G g) G^T */
          float a = t[i][0], bb = t[i][1], e = t[i][2];
          u[i * 4][j] = a;
          u[i * 4 + 1][j] = 0.5f * (a + bb + e);
          u[i * 4 + 2][j] = 0.5f * (a - bb + e);
          u[i * 4 + 3][j] = e;
        }
      }
      for (int xi = 0; xi < 16; xi++)
        memcpy(dst + ((xi * nb + b) * C + c) * 16, u[xi], sizeof u[xi]);
    }
}

/* dml_cpu_conv_prepack's buffer also holds wg_pack's layout (after cv's,
 * at wg_prepack_at floats) for group-1 3x3 weights of at least WG_MIN_C
 * input channels on AVX-512. */
static int wg_prepacks(const dml_tensor_t *w, int64_t group) {
  return cv_prepacks(w, group) && w->dims[2] == 3 && w->dims[3] == 3 &&
         w->dims[1] >= WG_MIN_C;
}
static size_t wg_prepack_at(int64_t M, int64_t K) {
  return cv_prepack_at(M, K) + (size_t)((M + 15) / 16 * 16 * K);
}

#define DW_MAXT 64 /* depthwise taps: larger kernels take dw_plane_generic */
#if DML_CPU_X86
/* The flat depthwise kernel's table (its kernel is below). */
typedef struct {
  int32_t off[2]; /* float offsets of the (stride 2: two) loads from the plane */
  uint16_t m[2];  /* their load masks */
} dwf_tap_t;

/* The taps of every output vector (dwf_table), in the call's scratch. */
#define DWF_TABLE_MAX ((size_t)4 << 20)
static size_t dwf_table_bytes(const conv_geo_t *g) {
  return (size_t)((g->out_sz + 15) / 16) * (size_t)(g->k[0] * g->k[1]) *
         sizeof(dwf_tap_t);
}

/* Nonzero when the flat kernel takes this depthwise geometry. */
static int dwf_ok(const conv_geo_t *g) {
  int64_t OW = g->out[1], s1 = g->s[1];
  if (g->k[0] * g->k[1] > DW_MAXT || g->in[0] * g->in[1] > (int64_t)1 << 30 ||
      dwf_table_bytes(g) > DWF_TABLE_MAX)
    return 0;
  if (s1 == 1) return OW == g->in[1] || OW % 16 == 0;
  return s1 == 2 && OW % 8 == 0;
}

#endif

static size_t conv_scratch(const dml_cpu_call_t *c, int transpose, int threads) {
  conv_geo_t g;
  if (c->inputs[0].dtype != DML_DTYPE_F32) return 0;
  dml_status_t s = conv_geo(c, transpose, &g);
  if (s) {
    dml_status_free(s);
    return 0;
  }
  if (!transpose && is_depthwise(&g)) { /* direct kernel; the flat one's table */
#if DML_CPU_X86
    if (dwf_ok(&g)) return 64 + dwf_table_bytes(&g);
#endif
    return 0;
  }
  if (!transpose && pws_ok(&g))
    return 64 + direct_apack_bytes(&g) +
           (size_t)direct_slots(&g, threads) * pws_slot_bytes(&g);
  if (!transpose && cv_ok(&g)) {
    pw_flatten(&g); /* a pointwise image as cv runs it (cv_ok) */
    size_t cv =
        64 + cv_wpack_bytes(&g) + (size_t)direct_slots(&g, threads) * cv_slot_bytes(&g);
    if (!wg_ok(&g)) return cv;
    /* Winograd, or cv where X or W is not finite. */
    size_t wg = 64 + align64(wg_wpack_floats(g.M, g.C) * 4) +
                (size_t)direct_slots(&g, threads) * wg_slot_bytes(&g) +
                (size_t)threads * WG_MB_BYTES;
    return wg > cv ? wg : cv;
  }
  if (!transpose && direct_ok(&g)) {
    pw_flatten(&g);
    return 64 + direct_apack_bytes(&g) +
           (size_t)direct_slots(&g, threads) * direct_slot_bytes(&g);
  }
  if (!transpose && flat_ok(&g))
    return 64 + direct_apack_bytes(&g) +
           (size_t)direct_slots(&g, threads) * flat_slot_bytes(&g);
  conv_mem_t m = conv_mem(&g, transpose, threads);
  size_t slots = m.batch_parallel ? (size_t)threads : 1;
  if (m.slot_bytes == 0) return 0;
  return 64 + slots * m.slot_bytes;
}

size_t dml_cpus_Conv(const dml_cpu_call_t *c, int threads) {
  return conv_scratch(c, 0, threads);
}
size_t dml_cpus_ConvTranspose(const dml_cpu_call_t *c, int threads) {
  return conv_scratch(c, 1, threads);
}

/* ---- f32 execution ---------------------------------------------------- */

typedef struct {
  const conv_geo_t *g;
  int transpose;
  const float *x, *w, *b;
  float *y;
  char *base;
  conv_mem_t mem;
  const dml_cpu_epilogue_t *ep; /* NULL: plain Conv */
  int64_t chunks, chunk_cols;   /* output-column chunks per (image, group) */
} conv_run_t;

/* The run of one Conv call: its operands' data, no output-column chunks
 * (chunks 1, a chunk the whole output). */
static conv_run_t conv_run_of(const conv_geo_t *g, int transpose, const dml_tensor_t *x,
                              const dml_tensor_t *w, const dml_tensor_t *b,
                              dml_tensor_t *y, char *base, conv_mem_t mem,
                              const dml_cpu_epilogue_t *ep) {
  conv_run_t r = {g,
                  transpose,
                  (const float *)x->data,
                  (const float *)w->data,
                  b ? (const float *)b->data : NULL,
                  (float *)y->data,
                  base,
                  mem,
                  ep,
                  1,
                  g->out_sz};
  return r;
}

/* One output row of n values: y += bv (has_b), y = y * a + off (bn), y = y <
 * 0 ? 0 : y (relu), in one pass (vectorized), each step rounded alone. */
DML_CPU_CLONES static void conv_epilogue_row(float *restrict y, int64_t n, int has_b,
                                             float bv, int bn, float a, float off,
                                             int relu) {
  if (has_b && bn && relu) {
    for (int64_t o = 0; o < n; o++) {
      float v = (y[o] + bv) * a + off;
      y[o] = v < 0.0f ? 0.0f : v;
    }
    return;
  }
  for (int64_t o = 0; o < n; o++) {
    float v = y[o];
    if (has_b) v = v + bv;
    if (bn) v = v * a + off;
    if (relu) v = v < 0.0f ? 0.0f : v;
    y[o] = v;
  }
}

/* The residual step of a row: y = y + res[o], then y = y < 0 ? 0 : y
 * (relu); res may be y itself. */
DML_CPU_CLONES static void conv_residual_row(float *y, int64_t n, const float *res,
                                             int relu) {
  for (int64_t o = 0; o < n; o++) {
    float v = y[o] + res[o];
    y[o] = relu && v < 0.0f ? 0.0f : v;
  }
}

/* The bias and the fused epilogue (dml_cpu_conv_fused) on y[m, 0:n] for
 * output channels m0 .. m0+mn-1 (y points at channel m0), applied while the
 * tile is in cache. Each step is rounded as the separate node rounds it:
 * Conv's y += B[m]; BatchNormalization's f32 y = x * a + off
 * (dml_cpu_bn_affine); Relu's y = x < 0 ? 0 : x (NaN and -0 kept). */
static void conv_epilogue(const conv_run_t *r, float *y, int64_t m0, int64_t mn,
                          int64_t n, int64_t ld) {
  const dml_cpu_epilogue_t *ep = r->ep;
  int bn = ep && ep->scale, relu = ep && ep->relu;
  const float *res = ep ? ep->residual : NULL;
  if (!r->b && !bn && !relu && !res) return;
  for (int64_t m = 0; m < mn; m++) {
    float bv = r->b ? r->b[m0 + m] : 0.0f;
    float a = bn ? ep->scale[m0 + m] : 1.0f, off = bn ? ep->shift[m0 + m] : 0.0f;
    float *ym = y + m * ld;
    conv_epilogue_row(ym, n, r->b != NULL, bv, bn, a, off, relu && !res);
    if (res) conv_residual_row(ym, n, res + (ym - r->y), relu);
  }
}

#if DML_CPU_X86
/* conv_epilogue's steps on one vector of output channel m, in registers
 * before the store (the same roundings: add, then multiply and add
 * unfused, then max(0, v), which keeps NaN and -0 as v < 0 ? 0 : v does). */
__attribute__((target("avx512f"), always_inline)) static inline __m512 tile_ep(
    const conv_run_t *r, int64_t m, __m512 v) {
  const dml_cpu_epilogue_t *ep = r->ep;
  if (r->b) v = _mm512_add_ps(v, _mm512_set1_ps(r->b[m]));
  if (ep && ep->scale)
    v = _mm512_add_ps(_mm512_mul_ps(v, _mm512_set1_ps(ep->scale[m])),
                      _mm512_set1_ps(ep->shift[m]));
  if (ep && ep->relu) v = _mm512_max_ps(_mm512_setzero_ps(), v);
  return v;
}

/* tile_ep with the residual res (r->ep->residual, laid out as y, read
 * once by the caller; NULL: none) added after the BatchNormalization step,
 * for the vector stored at dst (a place in r->y) with mask k: the lanes k
 * leaves out load 0. */
__attribute__((target("avx512f"), always_inline)) static inline __m512 tile_ep_at(
    const conv_run_t *r, const float *res, int64_t m, __m512 v, const float *dst,
    __mmask16 k) {
  const dml_cpu_epilogue_t *ep = r->ep;
  if (!res) return tile_ep(r, m, v);
  if (r->b) v = _mm512_add_ps(v, _mm512_set1_ps(r->b[m]));
  if (ep->scale)
    v = _mm512_add_ps(_mm512_mul_ps(v, _mm512_set1_ps(ep->scale[m])),
                      _mm512_set1_ps(ep->shift[m]));
  v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(k, res + (dst - r->y)));
  if (ep->relu) v = _mm512_max_ps(_mm512_setzero_ps(), v);
  return v;
}
#endif

/* ---- depthwise (group == C == M, 2-D): direct ------------------------ */

/* One (image, channel) plane: y[oh, ow] = sum over (kh, kw) in order of
 * x[oh*s0 - p0 + kh*d0, ow*s1 - p1 + kw*d1] * w[kh, kw], accumulated from 0,
 * with x zero outside the image (zero padding: a padded tap adds 0 * w, as
 * the im2col + GEMM path computes it); then, on each vector of outputs
 * before it is stored, the bias and the fused epilogue (conv_epilogue's
 * steps and roundings). The AVX-512 and AVX2 paths fuse each multiply-add
 * (one rounding), the portable path (every other CPU, arm64 included:
 * GCC's vector extensions, NEON there) multiplies then adds; the two agree
 * within the usual f32 accumulation error (tests/cpu/test_cpu_linalg.c).
 *
 * Data layout: a strip of output rows at a time, the input rows it reads
 * are copied zero-padded into `buf`, split by phase for a width stride s1:
 * padded row r, phase q holds at i the padded column i*s1 + q (input
 * column i*s1 + q - p1). Output column ow's tap kw then reads phase
 * (kw*d1) % s1 at i = ow + (kw*d1) / s1: 16 consecutive outputs read 16
 * consecutive floats for every stride and dilation, with no gather. Four
 * output rows of 16 columns accumulate at a time (four independent
 * chains). Planes whose one-output-row strip does not fit DW_BUF floats
 * take dw_plane_generic. */
#define DW_BUF 8192
#define DW_ROWS 4
/* 16 floats: one AVX-512 register, two AVX2 or four SSE/NEON ones. */
typedef float dw_v16 __attribute__((vector_size(64)));
typedef int32_t dw_i16 __attribute__((vector_size(64)));

static void dw_plane_generic(const conv_geo_t *g, const float *x, const float *w,
                             float *y) {
  int64_t H = g->in[0], W = g->in[1], OH = g->out[0], OW = g->out[1];
  int64_t KH = g->k[0], KW = g->k[1];
  for (int64_t oh = 0; oh < OH; oh++)
    for (int64_t ow = 0; ow < OW; ow++) {
      float acc = 0.0f;
      for (int64_t kh = 0; kh < KH; kh++)
        for (int64_t kw = 0; kw < KW; kw++) {
          int64_t ih = oh * g->s[0] - g->pb[0] + kh * g->d[0];
          int64_t iw = ow * g->s[1] - g->pb[1] + kw * g->d[1];
          float xv = ih >= 0 && ih < H && iw >= 0 && iw < W ? x[ih * W + iw] : 0.0f;
          acc += xv * w[kh * KW + kw];
        }
      y[oh * OW + ow] = acc;
    }
}

/* The strip geometry of a plane: row stride of buf (floats, per phase),
 * padded input rows per output row. */
typedef struct {
  int64_t rs;    /* floats per (row, phase): OW + widest tap shift, rounded up to 16 */
  int64_t strip; /* output rows per strip */
  int64_t span0; /* padded input rows one output row reads: (KH-1)*d0 + 1 */
} dw_geo_t;

static int dw_plan(const conv_geo_t *g, dw_geo_t *d) {
  int64_t OW = g->out[1], s0 = g->s[0], s1 = g->s[1];
  d->rs = (OW + (g->k[1] - 1) * g->d[1] / s1 + 15) / 16 * 16;
  d->span0 = (g->k[0] - 1) * g->d[0] + 1;
  if (g->k[0] * g->k[1] > DW_MAXT || d->rs * s1 * d->span0 > DW_BUF) return 0;
  /* rows for `strip` output rows: (strip-1)*s0 + span0 */
  int64_t fit = (DW_BUF / (d->rs * s1) - d->span0) / s0 + 1;
  d->strip = DML_CPU_MAX((int64_t)1, DML_CPU_MIN(fit, g->out[0]));
  return 1;
}

/* dst[0:n) = 0, then dst[i] = src[i - p] for i in [p, p + w) within [0, n):
 * one padded row (16-float vector copies; n is a multiple of 16). */
static inline __attribute__((always_inline)) void dw_pad_row(float *restrict dst,
                                                             const float *restrict src,
                                                             int64_t n, int64_t p,
                                                             int64_t w) {
  const dw_v16 z = {0};
  for (int64_t i = 0; i < n; i += 16) memcpy(dst + i, &z, sizeof z);
  int64_t lo = DML_CPU_MAX((int64_t)0, p), hi = DML_CPU_MIN(n, p + w);
  int64_t i = lo;
  for (; i + 16 <= hi; i += 16) {
    dw_v16 v;
    memcpy(&v, src + (i - p), sizeof v);
    memcpy(dst + i, &v, sizeof v);
  }
  for (; i < hi; i++) dst[i] = src[i - p];
}

/* Padded input rows [r0, r0 + nrows) of the plane into buf (layout above).
 * Stride 2: 16 columns of both phases from 32 consecutive input floats
 * (two loads, two shuffles) where they lie inside the row, else one by one. */
static inline __attribute__((always_inline)) void dw_fill(const conv_geo_t *g,
                                                          const dw_geo_t *d,
                                                          const float *restrict x,
                                                          int64_t r0, int64_t nrows,
                                                          float *restrict buf) {
  int64_t H = g->in[0], W = g->in[1], s1 = g->s[1], p1 = g->pb[1], rs = d->rs;
#ifndef __clang__
  const dw_i16 ev = {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30};
  const dw_i16 od = ev + 1;
#endif
  for (int64_t r = 0; r < nrows; r++) {
    int64_t ih = r0 + r - g->pb[0];
    float *dst = buf + r * s1 * rs;
    const float *row = x + (ih >= 0 && ih < H ? ih : 0) * W;
    int64_t w = ih >= 0 && ih < H ? W : 0;
    if (s1 == 1) {
      dw_pad_row(dst, row, rs, p1, w);
      continue;
    }
    for (int64_t i = 0; i < rs; i += 16) {
      int64_t c = i * s1 - p1; /* input column of (i, phase 0) */
      if (s1 == 2 && c >= 0 && c + 32 <= w) {
        dw_v16 v0, v1;
        memcpy(&v0, row + c, sizeof v0);
        memcpy(&v1, row + c + 16, sizeof v1);
#ifdef __clang__
        dw_v16 e = __builtin_shufflevector(v0, v1, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20,
                                           22, 24, 26, 28, 30),
               o = __builtin_shufflevector(v0, v1, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21,
                                           23, 25, 27, 29, 31);
#else
        dw_v16 e = __builtin_shuffle(v0, v1, ev), o = __builtin_shuffle(v0, v1, od);
#endif
        memcpy(dst + i, &e, sizeof e);
        memcpy(dst + rs + i, &o, sizeof o);
        continue;
      }
      for (int64_t q = 0; q < s1; q++)
        for (int64_t l = 0; l < 16; l++) {
          int64_t cl = c + l * s1 + q;
          dst[q * rs + i + l] = cl >= 0 && cl < w ? row[cl] : 0.0f;
        }
    }
  }
}

/* The per-channel epilogue of a plane (see conv_epilogue). */
typedef struct {
  int has_bias, has_bn, relu;
  float bias, a, off;
} dw_ep_t;

/* The plane loop, instantiated per path with its multiply-add MULADD(acc, x,
 * w) and the function attributes ATTR. */
/* 16 outputs of DW_ROWS rows: the NT taps in order (offsets toff). */
#define DW_BLOCK(MULADD, NT)                     \
  for (int64_t t = 0; t < (NT); t++) {           \
    dw_v16 wv = (dw_v16){0} + w[t];              \
    for (int j = 0; j < DW_ROWS; j++) {          \
      dw_v16 xv;                                 \
      memcpy(&xv, rowp[j] + toff[t], sizeof xv); \
      MULADD(acc[j], xv, wv);                    \
    }                                            \
  }

#define DW_PLANE_BODY(MULADD, FILL)                                                 \
  int64_t OH = g->out[0], OW = g->out[1], KW = g->k[1], nt = g->k[0] * g->k[1];     \
  int64_t s0 = g->s[0], s1 = g->s[1], d0 = g->d[0], d1 = g->d[1], rs = d->rs;       \
  int64_t toff[DW_MAXT]; /* tap (kh, kw): its offset in buf from the row's first */ \
  for (int64_t t = 0, kh = 0, kw = 0, sq = 0, sr = 0; t < nt; t++) {                \
    /* sq, sr: (kw * d1) / s1, (kw * d1) % s1, no division per plane */             \
    toff[t] = (kh * d0 * s1 + sr) * rs + sq;                                        \
    if (++kw == KW) {                                                               \
      kw = sq = sr = 0, kh++;                                                       \
    } else {                                                                        \
      for (sr += d1; sr >= s1; sr -= s1) sq++;                                      \
    }                                                                               \
  }                                                                                 \
  for (int64_t oh0 = 0; oh0 < OH; oh0 += d->strip) {                                \
    int64_t nh = DML_CPU_MIN(d->strip, OH - oh0);                                   \
    FILL(g, d, x, oh0 *s0, (nh - 1) * s0 + d->span0, buf);                          \
    for (int64_t oh = 0; oh < nh; oh += DW_ROWS) {                                  \
      int64_t nr = DML_CPU_MIN((int64_t)DW_ROWS, nh - oh);                          \
      const float *rowp[DW_ROWS];                                                   \
      for (int j = 0; j < DW_ROWS; j++)                                             \
        rowp[j] = buf + (oh + (j < nr ? j : nr - 1)) * s0 * s1 * rs;                \
      for (int64_t ow0 = 0; ow0 < OW; ow0 += 16) {                                  \
        dw_v16 acc[DW_ROWS];                                                        \
        for (int j = 0; j < DW_ROWS; j++) acc[j] = (dw_v16){0};                     \
        if (nt == 9)                                                                \
          DW_BLOCK(MULADD, 9)                                                       \
        else                                                                        \
          DW_BLOCK(MULADD, nt)                                                      \
        int64_t n = DML_CPU_MIN((int64_t)16, OW - ow0);                             \
        for (int j = 0; j < nr; j++) {                                              \
          dw_v16 v = acc[j];                                                        \
          if (ep->has_bias) v = v + ep->bias;                                       \
          if (ep->has_bn) v = v * ep->a + ep->off;                                  \
          if (ep->relu) /* v < 0 ? 0 : v, NaN and -0 kept */                        \
            v = (dw_v16)((dw_i16)v & ~(v < (dw_v16){0}));                           \
          float *yr = y + (oh0 + oh + j) * OW + ow0;                                \
          if (n == 16)                                                              \
            memcpy(yr, &v, sizeof v);                                               \
          else                                                                      \
            memcpy(yr, &v, (size_t)n * sizeof(float));                              \
        }                                                                           \
        for (int j = 0; j < DW_ROWS; j++) rowp[j] += 16;                            \
      }                                                                             \
    }                                                                               \
  }

#define DW_MUL_ADD(acc, xv, wv) ((acc) = (acc) + (xv) * (wv))
DML_CPU_CLONES static void dw_plane_c(const conv_geo_t *g, const dw_geo_t *d,
                                      const float *restrict x, const float *restrict w,
                                      float *restrict y, float *restrict buf,
                                      const dw_ep_t *ep) {
  DW_PLANE_BODY(DW_MUL_ADD, dw_fill)
}

#if DML_CPU_X86
#define DW_FMA512(acc, xv, wv) \
  ((acc) = (dw_v16)_mm512_fmadd_ps((__m512)(xv), (__m512)(wv), (__m512)(acc)))
/* 16 floats of an input row from column c, 0 outside [0, w). */
__attribute__((target("avx512f"), always_inline)) static inline __m512 dw_load512(
    const float *row, int64_t c, int64_t w) {
  int64_t lo = DML_CPU_MIN((int64_t)16, DML_CPU_MAX((int64_t)0, -c));
  int64_t hi = DML_CPU_MIN((int64_t)16, DML_CPU_MAX((int64_t)0, w - c));
  __mmask16 m = hi > lo ? (__mmask16)((1u << hi) - (1u << lo)) : 0;
  /* masked lanes are not read: the address may lie outside the row */
  return _mm512_maskz_loadu_ps(m, (const void *)((uintptr_t)row + (uintptr_t)(c * 4)));
}

/* dw_ep_t's steps on one vector before its store (conv_epilogue's
 * roundings: add, then multiply and add unfused, then v < 0 ? 0 : v, which
 * keeps NaN and -0). */
__attribute__((target("avx512f"), always_inline)) static inline __m512 dw_ep512(
    const dw_ep_t *ep, __m512 o) {
  if (ep->has_bias) o = _mm512_add_ps(o, _mm512_set1_ps(ep->bias));
  if (ep->has_bn)
    o = _mm512_add_ps(_mm512_mul_ps(o, _mm512_set1_ps(ep->a)), _mm512_set1_ps(ep->off));
  if (ep->relu)
    o = _mm512_maskz_mov_ps(~_mm512_cmp_ps_mask(o, _mm512_setzero_ps(), _CMP_LT_OQ), o);
  return o;
}

/* dw_fill with masked loads at the row's ends (AVX-512; any stride). */
__attribute__((target("avx512f"), always_inline)) static inline void dw_fill_avx512(
    const conv_geo_t *g, const dw_geo_t *d, const float *restrict x, int64_t r0,
    int64_t nrows, float *restrict buf) {
  int64_t H = g->in[0], W = g->in[1], s1 = g->s[1], p1 = g->pb[1], rs = d->rs;
  const __m512i ev =
      _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i od = _mm512_add_epi32(ev, _mm512_set1_epi32(1));
  if (s1 > 2) {
    dw_fill(g, d, x, r0, nrows, buf);
    return;
  }
  for (int64_t r = 0; r < nrows; r++) {
    int64_t ih = r0 + r - g->pb[0];
    float *dst = buf + r * s1 * rs;
    const float *row = x + (ih >= 0 && ih < H ? ih : 0) * W;
    int64_t w = ih >= 0 && ih < H ? W : 0;
    for (int64_t i = 0; i < rs; i += 16) {
      if (s1 == 1) {
        _mm512_store_ps(dst + i, dw_load512(row, i - p1, w));
        continue;
      }
      int64_t c = 2 * i - p1;
      __m512 v0 = dw_load512(row, c, w), v1 = dw_load512(row, c + 16, w);
      _mm512_store_ps(dst + i, _mm512_permutex2var_ps(v0, ev, v1));
      _mm512_store_ps(dst + rs + i, _mm512_permutex2var_ps(v0, od, v1));
    }
  }
}

__attribute__((target("avx512f"))) static void dw_plane_avx512(
    const conv_geo_t *g, const dw_geo_t *d, const float *restrict x,
    const float *restrict w, float *restrict y, float *restrict buf, const dw_ep_t *ep) {
  DW_PLANE_BODY(DW_FMA512, dw_fill_avx512)
}

/* acc += xv * wv, fused, as two AVX2 halves (by pointer: a 64-byte vector
 * is not passed in registers without AVX-512). */
__attribute__((target("avx2,fma"), always_inline)) static inline void dw_fma_avx2(
    dw_v16 *acc, const dw_v16 *xv, const dw_v16 *wv) {
  const float *a = (const float *)acc, *x = (const float *)xv, *w = (const float *)wv;
  __m256 a0 = _mm256_fmadd_ps(_mm256_loadu_ps(x), _mm256_loadu_ps(w), _mm256_loadu_ps(a));
  __m256 a1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + 8), _mm256_loadu_ps(w + 8),
                              _mm256_loadu_ps(a + 8));
  _mm256_storeu_ps((float *)acc, a0);
  _mm256_storeu_ps((float *)acc + 8, a1);
}
#define DW_FMA256(acc, xv, wv) dw_fma_avx2(&(acc), &(xv), &(wv))
__attribute__((target("avx2,fma"))) static void dw_plane_avx2(
    const conv_geo_t *g, const dw_geo_t *d, const float *restrict x,
    const float *restrict w, float *restrict y, float *restrict buf, const dw_ep_t *ep) {
  DW_PLANE_BODY(DW_FMA256, dw_fill)
}
#endif

static void dw_task(void *vctx, int64_t t, int tid) {
  (void)tid;
  conv_run_t *r = (conv_run_t *)vctx;
  const conv_geo_t *g = r->g;
  int64_t ch = t % g->C;
  float *y = r->y + t * g->out_sz;
  const float *x = r->x + t * g->in_sz, *w = r->w + ch * g->k_sz;
  dw_geo_t d;
  if (!dw_plan(g, &d)) {
    dw_plane_generic(g, x, w, y);
    conv_epilogue(r, y, ch, 1, g->out_sz, g->out_sz);
    return;
  }
  const dml_cpu_epilogue_t *e = r->ep;
  dw_ep_t ep = {r->b != NULL,
                e && e->scale,
                e && e->relu,
                r->b ? r->b[ch] : 0.0f,
                e && e->scale ? e->scale[ch] : 0.0f,
                e && e->scale ? e->shift[ch] : 0.0f};
  /* 16 floats past the last row: the last vector of a row may read them. */
  float buf[DW_BUF] __attribute__((aligned(64)));
#if DML_CPU_X86
  int isa = dml_cpu_sgemm_isa();
  if (isa == 3) {
    dw_plane_avx512(g, &d, x, w, y, buf, &ep);
    return;
  }
  if (isa == 2) {
    dw_plane_avx2(g, &d, x, w, y, buf, &ep);
    return;
  }
#endif
  dw_plane_c(g, &d, x, w, y, buf, &ep);
}

/* ---- depthwise, AVX-512: flattened output vectors, no copy ------------ */

/* The output plane taken as one flat row of OH*OW floats in vectors of 16:
 * tap (kh, kw) of vector v reads its input lanes straight from the plane
 * with masked loads (no padded copy), when the lanes' inputs are evenly
 * spaced: stride 1 with OW == W (the whole plane: input index = output
 * index + a constant per tap) or OW a multiple of 16 (a vector within one
 * output row); stride 2 with OW a multiple of 8 (each half of a vector
 * within one row: 16 consecutive floats per half, the even ones picked by
 * one permute). Lanes whose tap falls in the padding (or past the plane's
 * end) load 0, so each output is the same fused multiply-adds in tap order
 * from 0 as dw_plane_avx512 (the same bits). The loads' offsets and masks
 * are computed once per call (dwf_table, in the scratch) for every plane;
 * a task runs DWF_CB channels of one image, DWF_VC vectors of each plane
 * at a time. Against the strip kernel (cpu_kernel_bench --dw-strip, 1
 * thread, loaded machine) it gains most on small planes: 8x8 2.6x, 16x16
 * stride 2 1.9x, 16x16 1.3x; 56x56 about the same. */
#define DWF_VC 32 /* vectors per chunk (512 outputs) */
#define DWF_CB 16 /* channels per task */

static int dwf_enabled = 1;
int dml_cpu_dw_flat_set(int on) {
  int was = dwf_enabled;
  dwf_enabled = on;
  return was;
}

#if DML_CPU_X86
/* The even bits of 16 from the low 8 (bit i -> bit 2i). */
static inline uint32_t dwf_spread8(uint32_t x) {
  x &= 0xff;
  x = (x | x << 4) & 0x0f0f;
  x = (x | x << 2) & 0x3333;
  return (x | x << 1) & 0x5555;
}

/* The taps of vectors v0 .. v0+nv-1 into tab[(v - v0) * nt + t]. */
__attribute__((target("avx512f"))) static void dwf_table(const conv_geo_t *g, int64_t v0,
                                                         int64_t nv, dwf_tap_t *tab) {
  int64_t H = g->in[0], W = g->in[1], OW = g->out[1], tot = g->out[0] * OW;
  int64_t KH = g->k[0], KW = g->k[1], nt = KH * KW, s0 = g->s[0], s1 = g->s[1];
  for (int64_t v = v0; v < v0 + nv; v++) {
    int32_t oh[16], ow[16];
    int64_t p = v * 16, h = p / OW, w = p % OW;
    uint32_t live = 0;
    for (int l = 0; l < 16; l++) {
      oh[l] = (int32_t)h, ow[l] = (int32_t)w;
      if (p + l < tot) live |= 1u << l;
      if (++w == OW) w = 0, h++;
    }
    __m512i voh = _mm512_loadu_si512(oh), vow = _mm512_loadu_si512(ow);
    __m512i ih0 = _mm512_mullo_epi32(voh, _mm512_set1_epi32((int)s0));
    __m512i iw0 = _mm512_mullo_epi32(vow, _mm512_set1_epi32((int)s1));
    dwf_tap_t *tv = tab + (v - v0) * nt;
    for (int64_t kh = 0, t = 0; kh < KH; kh++) {
      int64_t dh = kh * g->d[0] - g->pb[0];
      __m512i ih = _mm512_add_epi32(ih0, _mm512_set1_epi32((int)dh));
      __mmask16 rok = _mm512_cmpge_epi32_mask(ih, _mm512_setzero_si512()) &
                      _mm512_cmplt_epi32_mask(ih, _mm512_set1_epi32((int)H)) &
                      (__mmask16)live;
      for (int64_t kw = 0; kw < KW; kw++, t++) {
        int64_t dw = kw * g->d[1] - g->pb[1];
        __m512i iw = _mm512_add_epi32(iw0, _mm512_set1_epi32((int)dw));
        uint32_t ok = rok & _mm512_cmpge_epi32_mask(iw, _mm512_setzero_si512()) &
                      _mm512_cmplt_epi32_mask(iw, _mm512_set1_epi32((int)W));
        /* lane 0's (and lane 8's) input index, valid or not */
        int64_t a = ((int64_t)oh[0] * s0 + dh) * W + (int64_t)ow[0] * s1 + dw;
        int64_t b = ((int64_t)oh[8] * s0 + dh) * W + (int64_t)ow[8] * s1 + dw;
        tv[t].off[0] = (int32_t)a, tv[t].off[1] = (int32_t)b;
        if (s1 == 1) {
          tv[t].m[0] = (uint16_t)ok, tv[t].m[1] = 0;
        } else {
          tv[t].m[0] = (uint16_t)dwf_spread8(ok),
          tv[t].m[1] = (uint16_t)dwf_spread8(ok >> 8);
        }
      }
    }
  }
}

/* One tap's 16 inputs of a vector (masked lanes 0; their addresses are not
 * read, so they may lie outside the plane). */
#define DWF_LOAD1(xp, tp) \
  _mm512_maskz_loadu_ps(  \
      (tp)->m[0],         \
      (const void *)((uintptr_t)(xp) + (uintptr_t)((int64_t)(tp)->off[0] * 4)))
#define DWF_LOAD2(xp, tp)                                                            \
  _mm512_permutex2var_ps(                                                            \
      _mm512_maskz_loadu_ps(                                                         \
          (tp)->m[0],                                                                \
          (const void *)((uintptr_t)(xp) + (uintptr_t)((int64_t)(tp)->off[0] * 4))), \
      ev,                                                                            \
      _mm512_maskz_loadu_ps(                                                         \
          (tp)->m[1],                                                                \
          (const void *)((uintptr_t)(xp) + (uintptr_t)((int64_t)(tp)->off[1] * 4))))

/* The vectors of NC consecutive channels' planes (x, w, y: the first
 * channel's; xs, os: floats from one plane to the next) NV at a time (NC x
 * NV accumulators), from vector v0 (tab: their taps): each tap's offset
 * and mask are read once for the NC channels, and the NC x NV independent
 * chains keep both FMA pipes busy on small planes (8x8: 4 vectors). */
#define DWF_BODY(LOAD, NV, NC)                                                           \
  for (int64_t v = 0; v + (NV) <= nv; v += (NV)) {                                       \
    __m512 acc[NC][NV];                                                                  \
    _Pragma("GCC unroll 16") for (int c = 0; c < (NC); c++)                              \
        _Pragma("GCC unroll 16") for (int j = 0; j < (NV); j++) acc[c][j] =              \
            _mm512_setzero_ps();                                                         \
    const dwf_tap_t *tp = tab + v * nt;                                                  \
    for (int64_t t = 0; t < nt; t++, tp++) {                                             \
      __m512 wv[NC];                                                                     \
      _Pragma("GCC unroll 16") for (int c = 0; c < (NC); c++) wv[c] =                    \
          _mm512_set1_ps(w[c * nt + t]);                                                 \
      _Pragma("GCC unroll 16") for (int j = 0; j < (NV); j++)                            \
          _Pragma("GCC unroll 16") for (int c = 0; c < (NC); c++) acc[c][j] =            \
              _mm512_fmadd_ps(LOAD(x + c * xs, tp + j * nt), wv[c], acc[c][j]);          \
    }                                                                                    \
    _Pragma("GCC unroll 16") for (int c = 0; c < (NC); c++)                              \
        _Pragma("GCC unroll 16") for (int j = 0; j < (NV); j++) {                        \
      __m512 o = acc[c][j];                                                              \
      if (ep[c].has_bias) o = _mm512_add_ps(o, _mm512_set1_ps(ep[c].bias));              \
      if (ep[c].has_bn)                                                                  \
        o = _mm512_add_ps(_mm512_mul_ps(o, _mm512_set1_ps(ep[c].a)),                     \
                          _mm512_set1_ps(ep[c].off));                                    \
      if (ep[c].relu) /* o < 0 ? 0 : o, NaN and -0 kept */                               \
        o = _mm512_maskz_mov_ps(~_mm512_cmp_ps_mask(o, _mm512_setzero_ps(), _CMP_LT_OQ), \
                                o);                                                      \
      int64_t p = (v0 + v + j) * 16;                                                     \
      __mmask16 sm =                                                                     \
          p + 16 <= tot ? (__mmask16)0xffff : (__mmask16)((1u << (tot - p)) - 1);        \
      _mm512_mask_storeu_ps(y + c * os + p, sm, o);                                      \
    }                                                                                    \
  }

/* Vectors [v0, v0 + nv) of NC channels (NC channels' ep), stride s1. */
#define DWF_PLANES(NC)                                                                 \
  __attribute__((target("avx512f"))) static void dwf_plane##NC(                        \
      const conv_geo_t *g, const dwf_tap_t *tab, int64_t v0, int64_t nv,               \
      const float *restrict x, int64_t xs, const float *restrict w, float *restrict y, \
      int64_t os, const dw_ep_t *ep) {                                                 \
    int64_t nt = g->k[0] * g->k[1], tot = g->out[0] * g->out[1];                       \
    const __m512i ev =                                                                 \
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);  \
    int64_t n4 = nv / 4 * 4;                                                           \
    if (g->s[1] == 1) {                                                                \
      DWF_BODY(DWF_LOAD1, 4, NC)                                                       \
    } else {                                                                           \
      DWF_BODY(DWF_LOAD2, 4, NC)                                                       \
    }                                                                                  \
    tab += n4 * nt, v0 += n4, nv -= n4;                                                \
    if (g->s[1] == 1) {                                                                \
      DWF_BODY(DWF_LOAD1, 1, NC)                                                       \
    } else {                                                                           \
      DWF_BODY(DWF_LOAD2, 1, NC)                                                       \
    }                                                                                  \
    (void)ev;                                                                          \
  }
DWF_PLANES(1)
DWF_PLANES(4)

/* Task t: image t / cb, channels (t % cb) * DWF_CB ... (cb blocks per
 * image), a chunk of DWF_VC vectors of each plane at a time; r->base holds
 * the taps of every vector (dwf_table, made once per call). */
static void dwf_task(void *vctx, int64_t t, int tid) {
  (void)tid;
  conv_run_t *r = (conv_run_t *)vctx;
  const conv_geo_t *g = r->g;
  int64_t cb = (g->C + DWF_CB - 1) / DWF_CB, n = t / cb, c0 = t % cb * DWF_CB;
  int64_t c1 = DML_CPU_MIN(g->C, c0 + DWF_CB), nt = g->k[0] * g->k[1];
  int64_t nvec = (g->out_sz + 15) / 16;
  const dml_cpu_epilogue_t *e = r->ep;
  const dwf_tap_t *tab = (const dwf_tap_t *)r->base;
  dw_ep_t ep[DWF_CB];
  for (int64_t ch = c0; ch < c1; ch++)
    ep[ch - c0] = (dw_ep_t){r->b != NULL,
                            e && e->scale,
                            e && e->relu,
                            r->b ? r->b[ch] : 0.0f,
                            e && e->scale ? e->scale[ch] : 0.0f,
                            e && e->scale ? e->shift[ch] : 0.0f};
  for (int64_t v0 = 0; v0 < nvec; v0 += DWF_VC) {
    int64_t nv = DML_CPU_MIN((int64_t)DWF_VC, nvec - v0);
    for (int64_t ch = c0; ch < c1;) {
      int64_t pl = n * g->C + ch;
      const float *x = r->x + pl * g->in_sz, *w = r->w + ch * nt;
      float *y = r->y + pl * g->out_sz;
      if (ch + 4 <= c1) {
        dwf_plane4(g, tab + v0 * nt, v0, nv, x, g->in_sz, w, y, g->out_sz,
                   ep + (ch - c0));
        ch += 4;
      } else {
        dwf_plane1(g, tab + v0 * nt, v0, nv, x, g->in_sz, w, y, g->out_sz,
                   ep + (ch - c0));
        ch++;
      }
    }
  }
}

/* ---- depthwise 3x3, AVX-512: output rows in registers ----------------- */

/* For 3x3 kernels, dilation 1, strides 1 and 2 (both ways), output rows of
 * at least 16: a plane is taken 16 output columns at a time (a vector;
 * the last masked to OW) and, for those columns, DWR_R(S) output rows at
 * a time (that many accumulators). The block's input rows are walked once
 * in order; each row's three tap vectors (stride 1: three masked loads at
 * the columns kw - p1 + ow; stride 2: four masked loads and three
 * permutes, the even and odd columns) are made once and multiplied into
 * every output row of the block that reads them (a row is read by up to
 * three output rows), with the nine weights held in registers. With one
 * column of padding and rows of whole vectors (stride 2: of two) the taps
 * come from plain loads of the row's own vectors and register shifts
 * (alignr; stride 2 two permutes and one alignr): masked and unaligned
 * loads cost more here (Zen 5). Lanes outside the image and rows in the
 * padding are 0 and still add 0 * w, and each accumulator takes its taps
 * in order (kh, then kw) from 0: the same fused multiply-adds as
 * dw_plane_avx512 and dwf_plane (the same bits); then the bias and
 * epilogue (dw_ep_t) in registers and one masked store per vector. Rows
 * per block: 4 at stride 1, 2 at stride 2 (cpu_kernel_bench, 1 thread: 8
 * rows were 10-35% slower, 2 and 1 slower too). */
#define DWR_R(S) ((S) == 1 ? 4 : 2)

static int dwr_ok(const conv_geo_t *g) {
  return g->k[0] == 3 && g->k[1] == 3 && g->d[0] == 1 && g->d[1] == 1 &&
         g->s[0] == g->s[1] && (g->s[0] == 1 || g->s[0] == 2) && g->out[1] >= 16 &&
         g->in[1] <= ((int64_t)1 << 24);
}

/* Lanes l of a 16-float load at column c that lie in [0, w). */
static inline __mmask16 dwr_mask(int64_t c, int64_t w) {
  int64_t lo = DML_CPU_MIN((int64_t)16, DML_CPU_MAX((int64_t)0, -c));
  int64_t hi = DML_CPU_MIN((int64_t)16, DML_CPU_MAX((int64_t)0, w - c));
  return hi > lo ? (__mmask16)((1u << hi) - (1u << lo)) : 0;
}
#define DWR_LD(row, c, m) \
  _mm512_maskz_loadu_ps((m), (const void *)((uintptr_t)(row) + (uintptr_t)((c)*4)))

/* R output rows from oh at columns ow0 (store mask sm), stride S (see
 * above: cs the load columns, mk their masks, wv the weights). */
#define DWR_BLOCK(R, S, A)                                                               \
  {                                                                                      \
    __m512 acc[R];                                                                       \
    _Pragma("GCC unroll 8") for (int j = 0; j < (R); j++) acc[j] = _mm512_setzero_ps();  \
    _Pragma("GCC unroll 17") for (int i = 0; i < ((R)-1) * (S) + 3; i++) {               \
      int64_t ir = oh * (S)-p0 + i;                                                      \
      __m512 x0 = _mm512_setzero_ps(), x1 = x0, x2 = x0;                                 \
      if (ir >= 0 && ir < H) {                                                           \
        const float *row = x + ir * W;                                                   \
        if ((A) && (S) == 1) { /* x0, x2: the row shifted by one, in registers */        \
          x1 = _mm512_loadu_ps(row + ow0);                                               \
          __m512 pv = ow0 > 0 ? _mm512_loadu_ps(row + ow0 - 16) : _mm512_setzero_ps();   \
          __m512 nx =                                                                    \
              ow0 + 16 < W ? _mm512_loadu_ps(row + ow0 + 16) : _mm512_setzero_ps();      \
          x0 = _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(x1),          \
                                                       _mm512_castps_si512(pv), 15));    \
          x2 = _mm512_castsi512_ps(                                                      \
              _mm512_alignr_epi32(_mm512_castps_si512(nx), _mm512_castps_si512(x1), 1)); \
        } else if (A) { /* even and odd columns; x0: the odd ones shifted by one */      \
          __m512 a = _mm512_loadu_ps(row + 2 * ow0),                                     \
                 b = _mm512_loadu_ps(row + 2 * ow0 + 16);                                \
          __m512 pv =                                                                    \
              ow0 > 0 ? _mm512_loadu_ps(row + 2 * ow0 - 16) : _mm512_setzero_ps();       \
          x1 = _mm512_permutex2var_ps(a, ev, b);                                         \
          x2 = _mm512_permutex2var_ps(a, od, b);                                         \
          x0 = _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(x2),          \
                                                       _mm512_castps_si512(pv), 15));    \
        } else if ((S) == 1) {                                                           \
          x0 = DWR_LD(row, cs[0], mk[0]);                                                \
          x1 = DWR_LD(row, cs[1], mk[1]);                                                \
          x2 = DWR_LD(row, cs[2], mk[2]);                                                \
        } else {                                                                         \
          __m512 a = DWR_LD(row, cs[0], mk[0]), b = DWR_LD(row, cs[1], mk[1]);           \
          __m512 c = DWR_LD(row, cs[2], mk[2]), d = DWR_LD(row, cs[3], mk[3]);           \
          x0 = _mm512_permutex2var_ps(a, ev, b);                                         \
          x1 = _mm512_permutex2var_ps(a, od, b);                                         \
          x2 = _mm512_permutex2var_ps(c, ev, d);                                         \
        }                                                                                \
      }                                                                                  \
      /* kw outer, rows inner: consecutive multiply-adds are independent                 \
       * (each row's chain still takes kw = 0, 1, 2 in order) */                         \
      _Pragma("GCC unroll 3") for (int kw = 0; kw < 3; kw++) {                           \
        __m512 xk = kw == 0 ? x0 : kw == 1 ? x1 : x2;                                    \
        _Pragma("GCC unroll 8") for (int j = 0; j < (R); j++) {                          \
          int kh = i - j * (S);                                                          \
          if (kh < 0 || kh > 2) continue;                                                \
          acc[j] = _mm512_fmadd_ps(xk, wv[kh * 3 + kw], acc[j]);                         \
        }                                                                                \
      }                                                                                  \
    }                                                                                    \
    _Pragma("GCC unroll 8") for (int j = 0; j < (R); j++) {                              \
      _mm512_mask_storeu_ps(y + (oh + j) * OW + ow0, sm, dw_ep512(ep, acc[j]));          \
    }                                                                                    \
  }

#define DWR_PLANE(S)                                                                     \
  __attribute__((target("avx512f"))) static void dwr_plane##S(                           \
      const conv_geo_t *g, const float *restrict x, const float *restrict w,             \
      float *restrict y, const dw_ep_t *ep) {                                            \
    int64_t H = g->in[0], W = g->in[1], OH = g->out[0], OW = g->out[1];                  \
    int64_t p0 = g->pb[0], p1 = g->pb[1];                                                \
    const __m512i ev =                                                                   \
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);    \
    const __m512i od = _mm512_add_epi32(ev, _mm512_set1_epi32(1));                       \
    __m512 wv[9];                                                                        \
    for (int t = 0; t < 9; t++) wv[t] = _mm512_set1_ps(w[t]);                            \
    /* one column of padding each side, rows of whole vectors (stride 2: of              \
     * two): every load lies in its row, plain, and the shifted taps come                \
     * from registers */                                                                 \
    int al = p1 == 1 && W == (S)*OW && W % (16 * (S)) == 0;                              \
    for (int64_t ow0 = 0; ow0 < OW; ow0 += 16) {                                         \
      int64_t cs[4];                                                                     \
      __mmask16 mk[4];                                                                   \
      if ((S) == 1) {                                                                    \
        for (int q = 0; q < 3; q++) cs[q] = ow0 - p1 + q;                                \
        cs[3] = 0;                                                                       \
      } else {                                                                           \
        cs[0] = 2 * ow0 - p1, cs[1] = cs[0] + 16, cs[2] = cs[0] + 2, cs[3] = cs[0] + 18; \
      }                                                                                  \
      for (int q = 0; q < 4; q++) mk[q] = dwr_mask(cs[q], W);                            \
      int64_t n = DML_CPU_MIN((int64_t)16, OW - ow0);                                    \
      __mmask16 sm = (__mmask16)((1u << n) - 1u);                                        \
      int64_t oh = 0;                                                                    \
      if (al) {                                                                          \
        for (; oh + DWR_R(S) <= OH; oh += DWR_R(S)) DWR_BLOCK(DWR_R(S), S, 1)            \
        for (; oh < OH; oh++) DWR_BLOCK(1, S, 1)                                         \
      } else {                                                                           \
        for (; oh + DWR_R(S) <= OH; oh += DWR_R(S)) DWR_BLOCK(DWR_R(S), S, 0)            \
        for (; oh < OH; oh++) DWR_BLOCK(1, S, 0)                                         \
      }                                                                                  \
    }                                                                                    \
    (void)ev, (void)od;                                                                  \
  }
DWR_PLANE(1)
DWR_PLANE(2)

/* ---- depthwise 3x3 with output rows of 8 (AVX-512) --------------------- */

/* 8x8 output planes (MobileNet's last stages), pads of 1 before: a vector
 * is two output rows (v: rows 2v, 2v+1; OH even), so no lane is wasted,
 * and every input lane comes from plain loads of whole rows and register
 * shuffles, no masked or unaligned load:
 * - stride 1, W == OW == 8, H == OH: R(r), the 16 floats of input rows r
 *   and r + 1, is one load for even r and an alignr of its neighbours for
 *   odd r (R(-1): row 0 alone in the upper half); the taps kw = 0 and 2
 *   are R shifted by one lane with lanes 0, 8 (or 7, 15), the padding,
 *   zeroed. Output vector v reads R(2v-1), R(2v), R(2v+1) for kh = 0, 1,
 *   2: per vector one load, one alignr and four shifts for 9 FMAs.
 * - stride 2, W == 16: the taps of output rows 2v and 2v+1 for kh are the
 *   even / odd columns of input rows 4v-1+kh and 4v+1+kh, one two-source
 *   permute each (kw = 0: the odd columns shifted by one, lanes 0 and 8
 *   zeroed); the five input rows of a vector are loaded once.
 * Rows past the image load 0 and padded lanes are 0, multiplied by their
 * weight like the other kernels' (0 * w), each accumulator takes the taps
 * in order from 0: the same bits as dwf_plane and dw_plane_avx512; the
 * epilogue (dw_ep_t) in registers, one full store per vector. */
static int dw8_ok(const conv_geo_t *g) {
  if (g->k[0] != 3 || g->k[1] != 3 || g->d[0] != 1 || g->d[1] != 1 || g->pb[0] != 1 ||
      g->pb[1] != 1 || g->out[1] != 8 || g->out[0] % 2 != 0 || g->s[0] != g->s[1])
    return 0;
  if (g->s[0] == 1) return g->in[1] == 8 && g->in[0] == g->out[0];
  return g->s[0] == 2 && g->in[1] == 16;
}

#define DW8_EP(acc, dst)                          \
  do {                                            \
    _mm512_storeu_ps((dst), dw_ep512(ep, (acc))); \
  } while (0)

/* R's taps kw = 0 and 2 (row pieces of 8 shifted by one, padding 0). */
#define DW8_K0(R)                                                               \
  _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(0xfefe, _mm512_castps_si512(R), \
                                                _mm512_castps_si512(R), 15))
#define DW8_K2(R)                                                               \
  _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(0x7f7f, _mm512_castps_si512(R), \
                                                _mm512_castps_si512(R), 1))

__attribute__((target("avx512f"))) static void dw8_plane1(const conv_geo_t *g,
                                                          const float *restrict x,
                                                          const float *restrict w,
                                                          float *restrict y,
                                                          const dw_ep_t *ep) {
  int64_t OH = g->out[0];
  __m512 wv[9];
  for (int t = 0; t < 9; t++) wv[t] = _mm512_set1_ps(w[t]);
  const __m512 z = _mm512_setzero_ps();
  __m512 rb = _mm512_loadu_ps(x); /* R(0) */
  __m512 ra = _mm512_castsi512_ps(/* R(-1): row 0 in lanes 8..15 */
                                  _mm512_alignr_epi32(_mm512_castps_si512(rb),
                                                      _mm512_castps_si512(z), 8));
  __m512 a0 = DW8_K0(ra), a2 = DW8_K2(ra);
  for (int64_t v = 0; v < OH / 2; v++) {
    __m512 rn = 2 * v + 2 < OH ? _mm512_loadu_ps(x + 16 * (v + 1)) : z; /* R(2v+2) */
    __m512 rc = _mm512_castsi512_ps(                                    /* R(2v+1) */
                                    _mm512_alignr_epi32(_mm512_castps_si512(rn),
                                                        _mm512_castps_si512(rb), 8));
    __m512 b0 = DW8_K0(rb), b2 = DW8_K2(rb), c0 = DW8_K0(rc), c2 = DW8_K2(rc);
    __m512 acc = _mm512_fmadd_ps(a0, wv[0], z);
    acc = _mm512_fmadd_ps(ra, wv[1], acc);
    acc = _mm512_fmadd_ps(a2, wv[2], acc);
    acc = _mm512_fmadd_ps(b0, wv[3], acc);
    acc = _mm512_fmadd_ps(rb, wv[4], acc);
    acc = _mm512_fmadd_ps(b2, wv[5], acc);
    acc = _mm512_fmadd_ps(c0, wv[6], acc);
    acc = _mm512_fmadd_ps(rc, wv[7], acc);
    acc = _mm512_fmadd_ps(c2, wv[8], acc);
    DW8_EP(acc, y + 16 * v);
    ra = rc, a0 = c0, a2 = c2, rb = rn;
  }
}

__attribute__((target("avx512f"))) static void dw8_plane2(const conv_geo_t *g,
                                                          const float *restrict x,
                                                          const float *restrict w,
                                                          float *restrict y,
                                                          const dw_ep_t *ep) {
  int64_t H = g->in[0], OH = g->out[0];
  __m512 wv[9];
  for (int t = 0; t < 9; t++) wv[t] = _mm512_set1_ps(w[t]);
  const __m512 z = _mm512_setzero_ps();
  const __m512i iev =
      _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i iod = _mm512_add_epi32(iev, _mm512_set1_epi32(1));
  const __m512i ish = _mm512_sub_epi32(iev, _mm512_set1_epi32(1)); /* lanes 0, 8 masked */
  __m512 lp = z; /* input row 4v - 1 (row -1: padding) */
  for (int64_t v = 0; v < OH / 2; v++) {
    __m512 L[5];
    L[0] = lp;
    for (int i = 1; i < 5; i++) {
      int64_t r = 4 * v - 1 + i;
      L[i] = r < H ? _mm512_loadu_ps(x + 16 * r) : z;
    }
    __m512 acc = z;
    for (int kh = 0; kh < 3; kh++) {
      __m512 A = L[kh], B = L[kh + 2];
      acc = _mm512_fmadd_ps(_mm512_maskz_permutex2var_ps(0xfefe, A, ish, B), wv[kh * 3],
                            acc);
      acc = _mm512_fmadd_ps(_mm512_permutex2var_ps(A, iev, B), wv[kh * 3 + 1], acc);
      acc = _mm512_fmadd_ps(_mm512_permutex2var_ps(A, iod, B), wv[kh * 3 + 2], acc);
    }
    DW8_EP(acc, y + 16 * v);
    lp = L[4];
  }
}

/* Task t: image t / cb, channels (t % cb) * DWF_CB ... (cb blocks per
 * image), one plane at a time: dw8_plane where dw8_ok, else dwr_plane. */
static void dwr_task(void *vctx, int64_t t, int tid) {
  (void)tid;
  conv_run_t *r = (conv_run_t *)vctx;
  const conv_geo_t *g = r->g;
  int64_t cb = (g->C + DWF_CB - 1) / DWF_CB, n = t / cb, c0 = t % cb * DWF_CB;
  int64_t c1 = DML_CPU_MIN(g->C, c0 + DWF_CB);
  const dml_cpu_epilogue_t *e = r->ep;
  int eight = dw8_ok(g);
  for (int64_t ch = c0; ch < c1; ch++) {
    dw_ep_t ep = {r->b != NULL,
                  e && e->scale,
                  e && e->relu,
                  r->b ? r->b[ch] : 0.0f,
                  e && e->scale ? e->scale[ch] : 0.0f,
                  e && e->scale ? e->shift[ch] : 0.0f};
    int64_t pl = n * g->C + ch;
    const float *x = r->x + pl * g->in_sz, *w = r->w + ch * 9;
    float *y = r->y + pl * g->out_sz;
    if (eight && g->s[0] == 1)
      dw8_plane1(g, x, w, y, &ep);
    else if (eight)
      dw8_plane2(g, x, w, y, &ep);
    else if (g->s[0] == 1)
      dwr_plane1(g, x, w, y, &ep);
    else
      dwr_plane2(g, x, w, y, &ep);
  }
}
#endif

/* The padded image xp[c][r][q] = x[c][r - pb0][q - pb1] (0 outside), rows
 * OH + KH - 1, columns OW + KW - 1 (stride 1: direct_tiles). */
static void pad_image(const conv_geo_t *g, int64_t hp, int64_t wp,
                      const float *restrict x, float *restrict xp);
static void direct_pad(const conv_geo_t *g, const float *restrict x, float *restrict xp) {
  pad_image(g, g->out[0] + g->k[0] - 1, g->out[1] + g->k[1] - 1, x, xp);
}

/* xp[c][r][q] = x[c][r - pb0][q - pb1] (0 outside the image), r < hp, q < wp. */
static void pad_image(const conv_geo_t *g, int64_t hp, int64_t wp,
                      const float *restrict x, float *restrict xp) {
  int64_t H = g->in[0], W = g->in[1];
  int64_t lo = DML_CPU_MIN(wp, DML_CPU_MAX((int64_t)0, g->pb[1]));
  int64_t hi = DML_CPU_MAX(lo, DML_CPU_MIN(wp, W + g->pb[1]));
  for (int64_t c = 0; c < g->C; c++)
    for (int64_t r = 0; r < hp; r++) {
      float *d = xp + (c * hp + r) * wp;
      int64_t ih = r - g->pb[0];
      if (ih < 0 || ih >= H) {
        memset(d, 0, (size_t)wp * sizeof(float));
        continue;
      }
      if (lo > 0) memset(d, 0, (size_t)lo * sizeof(float));
      memcpy(d + lo, x + (c * H + ih) * W + lo - g->pb[1],
             (size_t)(hi - lo) * sizeof(float));
      if (hi < wp) memset(d + hi, 0, (size_t)(wp - hi) * sizeof(float));
    }
}

#if DML_CPU_X86
/* Output vectors [v0, v1) of one image (vector v: output row v / nv,
 * columns (v % nv) * 16 .. + 15 masked to OW; nv = ceil(OW / 16)), all M
 * channels: 8 channels x 2 vectors accumulate in registers over k = (c, kh,
 * kw) in order, reading the packed weights ap (dml_cpu_sgemm_pack_a's
 * layout, mr 8) and the padded image xp, with fused multiply-adds from 0
 * (one chain over all of K); y gets the sums with r's bias and epilogue
 * (tile_ep) applied in registers. */
__attribute__((target("avx512f"))) static void direct_tiles(
    const conv_run_t *r, const conv_geo_t *g, const float *restrict xp,
    const float *restrict ap, float *restrict y, int64_t v0, int64_t v1) {
  int64_t OW = g->out[1], nv = (OW + 15) / 16, KH = g->k[0], KW = g->k[1];
  int64_t hp = g->out[0] + KH - 1, wp = OW + KW - 1, plane = hp * wp;
  int64_t K = g->C * g->k_sz, mpad = (g->M + 7) / 8 * 8;
  const float *res = r->ep ? r->ep->residual : NULL;
  for (int64_t m0 = 0; m0 < g->M; m0 += 8) {
    int rows = (int)DML_CPU_MIN((int64_t)8, g->M - m0);
    for (int64_t v = v0; v < v1; v += 2) {
      int two = v + 1 < v1;
      int64_t vb = two ? v + 1 : v;
      int64_t oh0 = v / nv, ow0 = v % nv * 16, oh1 = vb / nv, ow1 = vb % nv * 16;
      int64_t n0 = DML_CPU_MIN((int64_t)16, OW - ow0),
              n1 = DML_CPU_MIN((int64_t)16, OW - ow1);
      __mmask16 k0 = (__mmask16)((1u << n0) - 1u),
                k1 = two ? (__mmask16)((1u << n1) - 1u) : 0;
      const float *b0 = xp + oh0 * wp + ow0, *b1 = xp + oh1 * wp + ow1;
      __m512 acc[8][2];
#pragma GCC unroll 8
      for (int i = 0; i < 8; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
      int64_t off = 0, kw = 0, kh = 0;
      for (int64_t pc = 0; pc < K; pc += DML_CPU_GEMM_KC) {
        int64_t kc = DML_CPU_MIN((int64_t)DML_CPU_GEMM_KC, K - pc);
        const float *a = ap + pc * mpad + m0 * kc;
        for (int64_t k = 0; k < kc; k++) {
          __m512 x0 = _mm512_maskz_loadu_ps(k0, b0 + off);
          __m512 x1 = _mm512_maskz_loadu_ps(k1, b1 + off);
#pragma GCC unroll 8
          for (int i = 0; i < 8; i++) {
            __m512 av = _mm512_set1_ps(a[i]);
            acc[i][0] = _mm512_fmadd_ps(av, x0, acc[i][0]);
            acc[i][1] = _mm512_fmadd_ps(av, x1, acc[i][1]);
          }
          a += 8;
          /* next (c, kh, kw) */
          off++;
          if (++kw == KW) {
            kw = 0, off += wp - KW;
            if (++kh == KH) kh = 0, off += plane - KH * wp;
          }
        }
      }
      /* constant indices, so acc stays in registers */
#pragma GCC unroll 8
      for (int i = 0; i < 8; i++) {
        if (i >= rows) break;
        float *ym = y + (m0 + i) * g->out_sz;
        float *d0 = ym + oh0 * OW + ow0, *d1 = ym + oh1 * OW + ow1;
        _mm512_mask_storeu_ps(d0, k0, tile_ep_at(r, res, m0 + i, acc[i][0], d0, k0));
        _mm512_mask_storeu_ps(d1, k1, tile_ep_at(r, res, m0 + i, acc[i][1], d1, k1));
      }
    }
  }
}
#endif

#if DML_CPU_X86
/* Pointwise convolutions (pw_flatten's geometry: one row of HW = out_sz
 * positions, K = C, X read in place): output vectors [v0, v1) of one
 * image, PW_NV vectors (64 positions) x PW_MR output channels at a time in
 * 24 accumulators, the position chunk outer (its K x 64 inputs stay in L1
 * while every channel block reads them), the channel blocks inner. Per
 * input channel k: PW_NV loads of X and PW_MR weights broadcast (read from
 * the packed operand, dml_cpu_sgemm_pack_a's layout, mr 8, through one
 * pointer per row: any MR rows of it), PW_NV x PW_MR fused multiply-adds:
 * 10 loads per 24 multiply-adds (direct_tiles: 10 per 16). Each output is
 * one chain of fused multiply-adds over k in order from 0 and gets the
 * bias and epilogue in registers (tile_ep_at): direct_tiles' roundings, so
 * the same bits. A last partial vector is masked. */
#define PW_MR 6
/* Output channels per tile in the packed path (K <= PW_PACK_K): 4 x 64
 * positions (16 accumulators). With 16 or fewer multiply-adds per output
 * the 6-row tiles' waste for M = 32 (36 rows computed, the last block's 4
 * rows never stored) was 11% of the work; 4 divides mobilenet_tiny's 32
 * and 64 (cpu_kernel_bench, 16 -> 32 at 32x32 b32, alternated: 184-188 ->
 * 193-197 GFLOP/s; 8 x 32 tiles 175-178). */
#define PW_PMR 4
#define PW_NV 4
#define PW_SC 4
#define PW_BLOCK_MR(MR, NV, FULL)                                               \
  {                                                                             \
    __mmask16 km[NV];                                                           \
    _Pragma("GCC unroll 4") for (int j = 0; j < (NV); j++) {                    \
      int64_t n = DML_CPU_MIN((int64_t)16, HW - (v + j) * 16);                  \
      km[j] = (__mmask16)((1u << n) - 1u);                                      \
    }                                                                           \
    for (int64_t m0 = mlo; m0 < M_; m0 += (MR)) {                               \
      int rows = (int)DML_CPU_MIN((int64_t)(MR), M - m0);                       \
      __m512 acc[(MR)][NV];                                                     \
      _Pragma("GCC unroll 6") for (int i = 0; i < (MR); i++)                    \
          _Pragma("GCC unroll 4") for (int j = 0; j < (NV); j++) acc[i][j] =    \
              _mm512_setzero_ps();                                              \
      for (int64_t pc = 0; pc < K; pc += DML_CPU_GEMM_KC) {                     \
        int64_t kc = DML_CPU_MIN((int64_t)DML_CPU_GEMM_KC, K - pc);             \
        const float *arow[(MR)];                                                \
        _Pragma("GCC unroll 6") for (int i = 0; i < (MR); i++) {                \
          int64_t m = DML_CPU_MIN(m0 + i, M - 1); /* rows past M: not stored */ \
          arow[i] = ap + pc * mpad + m / 8 * 8 * kc + m % 8;                    \
        }                                                                       \
        const float *xk = xb + pc * xs;                                         \
        for (int64_t k = 0; k < kc; k++, xk += xs) {                            \
          __m512 xv[NV];                                                        \
          _Pragma("GCC unroll 4") for (int j = 0; j < (NV); j++) xv[j] =        \
              (FULL) ? _mm512_loadu_ps(xk + 16 * j)                             \
                     : _mm512_maskz_loadu_ps(km[j], xk + 16 * j);               \
          _Pragma("GCC unroll 6") for (int i = 0; i < (MR); i++) {              \
            __m512 av = _mm512_set1_ps(arow[i][k * 8]);                         \
            _Pragma("GCC unroll 4") for (int j = 0; j < (NV); j++) acc[i][j] =  \
                _mm512_fmadd_ps(av, xv[j], acc[i][j]);                          \
          }                                                                     \
        }                                                                       \
      }                                                                         \
      _Pragma("GCC unroll 6") for (int i = 0; i < (MR); i++) {                  \
        if (i >= rows) break;                                                   \
        float *ym = y + (m0 + i) * HW + v * 16;                                 \
        _Pragma("GCC unroll 4") for (int j = 0; j < (NV); j++) {                \
          __m512 o = tile_ep_at(r, res, m0 + i, acc[i][j], ym + 16 * j, km[j]); \
          if (FULL)                                                             \
            _mm512_storeu_ps(ym + 16 * j, o);                                   \
          else                                                                  \
            _mm512_mask_storeu_ps(ym + 16 * j, km[j], o);                       \
        }                                                                       \
      }                                                                         \
    }                                                                           \
  }

#define PW_BLOCK(NV, FULL) PW_BLOCK_MR(PW_MR, NV, FULL)

__attribute__((target("avx512f"))) static void pw_tiles(
    const conv_run_t *r, const conv_geo_t *g, const float *restrict x,
    const float *restrict ap, float *restrict y, int64_t v0, int64_t v1) {
  int64_t HW = g->out_sz, K = g->C, M = g->M, mpad = (M + 7) / 8 * 8;
  const float *res = r->ep ? r->ep->residual : NULL;
  /* Up to PW_PACK_K input channels, PW_SC chunks' K x 256 inputs are
   * first copied into a contiguous buffer and the channel blocks taken
   * outer over them (each block writes its rows 1 KB at a time)
   * (cpu_kernel_bench, batch 32: 16 -> 32 at 32x32 146 -> 162-168
   * GFLOP/s with one chunk copied, 169 -> 174-176 with four; 32 -> 32 at
   * 32x32, 32 -> 64 at 16x16 and 64 -> 64 lost 3-7% with the copy, so
   * they read X in place). */
  float xpk[PW_PACK_K * PW_SC * PW_NV * 16] __attribute__((aligned(64)));
  int64_t v = v0, M_ = M, mlo = 0;
  if (K <= PW_PACK_K) /* PW_SC chunks at a time: packed, then channel blocks outer */
    for (; v + PW_SC * PW_NV <= v1 && (v + PW_SC * PW_NV) * 16 <= HW;
         v += PW_SC * PW_NV) {
      const int64_t xs = PW_SC * PW_NV * 16, vs = v;
      /* An image of exactly one such block (the strided pointwise path's
       * 16x16 gathers) is that layout already. */
      const float *xk0 = HW == xs ? x : xpk;
      if (HW != xs)
        for (int64_t k = 0; k < K; k++)
          for (int j = 0; j < PW_SC * PW_NV; j++)
            _mm512_store_ps(xpk + k * xs + 16 * j,
                            _mm512_loadu_ps(x + vs * 16 + k * HW + 16 * j));
      for (int64_t mb = 0; mb < M; mb += PW_PMR) {
        mlo = mb, M_ = DML_CPU_MIN(M, mb + PW_PMR);
        for (int c = 0; c < PW_SC; c++) {
          const float *xb = xk0 + c * PW_NV * 16;
          v = vs + c * PW_NV;
          PW_BLOCK_MR(PW_PMR, PW_NV, 1)
        }
      }
      v = vs, mlo = 0, M_ = M;
    }
  for (; v + PW_NV <= v1 && (v + PW_NV) * 16 <= HW; v += PW_NV) {
    const float *xb = x + v * 16;
    int64_t xs = HW;
    PW_BLOCK(PW_NV, 1)
  }
  for (; v < v1; v++) {
    const float *xb = x + v * 16;
    int64_t xs = HW;
    PW_BLOCK(1, 0)
  }
}
#endif

typedef struct {
  const conv_run_t *run;
  const float *ap;
  char *slots;
  size_t slot_bytes;
  int64_t n, chunks; /* direct_chunk_task: the image, its vector chunks */
} direct_ctx_t;

/* One image: pad it into this thread's slot (pointwise: read in place),
 * all tiles with the epilogue. */
static void direct_task(void *vctx, int64_t n, int tid) {
#if DML_CPU_X86
  const direct_ctx_t *d = (const direct_ctx_t *)vctx;
  const conv_run_t *r = d->run;
  const conv_geo_t *g = r->g;
  float *xp = (float *)(void *)(d->slots + (size_t)tid * d->slot_bytes);
  float *y = r->y + n * g->M * g->out_sz;
  const float *x = r->x + n * g->C * g->in_sz;
  int64_t nvec = g->out[0] * ((g->out[1] + 15) / 16);
  if (g->pointwise) {
    pw_tiles(r, g, x, d->ap, y, 0, nvec);
    return;
  }
  direct_pad(g, x, xp);
  direct_tiles(r, g, xp, d->ap, y, 0, nvec);
#else
  (void)vctx, (void)n, (void)tid;
#endif
}

/* Chunk t of image d->n's output vectors (its image padded in slot 0
 * beforehand, or read in place when pointwise): those tiles with the
 * epilogue. */
static void direct_chunk_task(void *vctx, int64_t t, int tid) {
#if DML_CPU_X86
  (void)tid;
  const direct_ctx_t *d = (const direct_ctx_t *)vctx;
  const conv_run_t *r = d->run;
  const conv_geo_t *g = r->g;
  int64_t OW = g->out[1], nv = (OW + 15) / 16, V = g->out[0] * nv;
  int64_t v0 = V * t / d->chunks, v1 = V * (t + 1) / d->chunks;
  if (v0 >= v1) return;
  float *y = r->y + d->n * g->M * g->out_sz;
  const float *xp = g->pointwise ? r->x + d->n * g->C * g->in_sz
                                 : (const float *)(const void *)d->slots;
  if (g->pointwise)
    pw_tiles(r, g, xp, d->ap, y, v0, v1);
  else
    direct_tiles(r, g, xp, d->ap, y, v0, v1);
#else
  (void)vctx, (void)t, (void)tid;
#endif
}

#if DML_CPU_X86
/* Rows d0[q] = src[c0 + 2q] and (d1 set) d1[q] = src[c0 + 1 + 2q], q in
 * [0, wq), 0 outside [0, W): the two stride-2 phase rows of one padded row,
 * 16 columns of each from two masked loads and two permutes. */
__attribute__((target("avx512f"))) static void flat_row_s2(const float *restrict src,
                                                           int64_t W, int64_t c0,
                                                           float *restrict d0,
                                                           float *restrict d1,
                                                           int64_t wq) {
  const __m512i ev =
      _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i od =
      _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  for (int64_t q0 = 0; q0 < wq; q0 += 16) {
    int64_t c = c0 + 2 * q0, n = DML_CPU_MIN((int64_t)16, wq - q0);
    __mmask16 m = (__mmask16)((1u << n) - 1u);
    __m512 v0 = dw_load512(src, c, W);
    __m512 v1 = 2 * n > 16 ? dw_load512(src, c + 16, W) : _mm512_setzero_ps();
    _mm512_mask_storeu_ps(d0 + q0, m, _mm512_permutex2var_ps(v0, ev, v1));
    if (d1) _mm512_mask_storeu_ps(d1 + q0, m, _mm512_permutex2var_ps(v0, od, v1));
  }
}
#endif

/* Strided pointwise (pws_geo and pws_ok above): the gather and the tasks. */
#if DML_CPU_X86
/* The strided inputs of image x (geometry g) into xs, [C][OH][OW]: stride
 * 2 in width with rows of whole vectors two plain loads and a permute per
 * 16 outputs, other stride-2 rows flat_row_s2 (masked), other strides a
 * scalar loop. */
__attribute__((target("avx512f"))) static void pws_gather(const conv_geo_t *g,
                                                          const float *restrict x,
                                                          float *restrict xs) {
  int64_t W = g->in[1], OH = g->out[0], OW = g->out[1], s0 = g->s[0], s1 = g->s[1];
  const __m512i ev =
      _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  int whole = s1 == 2 && OW % 16 == 0 && 2 * OW <= W;
  for (int64_t c = 0; c < g->C; c++)
    for (int64_t oh = 0; oh < OH; oh++) {
      const float *src = x + c * g->in_sz + oh * s0 * W;
      float *dst = xs + c * g->out_sz + oh * OW;
      if (whole) {
        for (int64_t q = 0; q < OW; q += 16)
          _mm512_storeu_ps(dst + q,
                           _mm512_permutex2var_ps(_mm512_loadu_ps(src + 2 * q), ev,
                                                  _mm512_loadu_ps(src + 2 * q + 16)));
      } else if (s1 == 2) {
        flat_row_s2(src, W, 0, dst, NULL, OW);
      } else {
        for (int64_t ow = 0; ow < OW; ow++) dst[ow] = src[ow * s1];
      }
    }
}

typedef struct {
  const conv_run_t *run; /* its g: the pointwise geometry (pws_geo) */
  const conv_geo_t *g0;  /* the call's own geometry */
  const float *ap;
  char *slots;
  size_t slot_bytes;
  int64_t n, chunks; /* pws_chunk_task: the image, its vector chunks */
} pws_ctx_t;

/* One image: gathered into this thread's slot, all tiles. */
static void pws_task(void *vctx, int64_t n, int tid) {
  const pws_ctx_t *d = (const pws_ctx_t *)vctx;
  const conv_run_t *r = d->run;
  const conv_geo_t *g = r->g;
  float *xs = (float *)(void *)(d->slots + (size_t)tid * d->slot_bytes);
  pws_gather(d->g0, r->x + n * d->g0->C * d->g0->in_sz, xs);
  pw_tiles(r, g, xs, d->ap, r->y + n * g->M * g->out_sz, 0, (g->out_sz + 15) / 16);
}

/* Chunk t of image d->n's output vectors (gathered in slot 0 beforehand). */
static void pws_chunk_task(void *vctx, int64_t t, int tid) {
  (void)tid;
  const pws_ctx_t *d = (const pws_ctx_t *)vctx;
  const conv_run_t *r = d->run;
  const conv_geo_t *g = r->g;
  int64_t V = (g->out_sz + 15) / 16;
  int64_t v0 = V * t / d->chunks, v1 = V * (t + 1) / d->chunks;
  if (v0 < v1)
    pw_tiles(r, g, (const float *)(const void *)d->slots, d->ap,
             r->y + d->n * g->M * g->out_sz, v0, v1);
}
#endif

/* The phase planes of image x (flat_plan's layout) into xq. */
static void flat_pad(const conv_geo_t *g, const flat_geo_t *f, const float *restrict x,
                     float *restrict xq) {
  int64_t H = g->in[0], W = g->in[1];
#if DML_CPU_X86
  /* Stride 2 in width: both column phases of a row in one pass. */
  int pair = f->s1 == 2;
#else
  int pair = 0;
#endif
  for (int64_t c = 0; c < g->C; c++)
    for (int64_t a = 0; a < f->nph; a++)
      for (int64_t b = 0; b < (pair ? 1 : f->npw); b++) {
        float *pl = xq + c * f->cstride + (a * f->npw + b) * f->plane;
        float *pl1 = pair && f->npw == 2 ? pl + f->plane : NULL;
        for (int64_t r = 0; r < f->hq; r++) {
          float *d = pl + r * f->wq;
          int64_t ih = r * f->s0 + a - g->pb[0];
          if (ih < 0 || ih >= H) {
            memset(d, 0, (size_t)f->wq * sizeof(float));
            if (pl1) memset(pl1 + r * f->wq, 0, (size_t)f->wq * sizeof(float));
            continue;
          }
          const float *src = x + (c * H + ih) * W;
          /* column q reads iw = q * s1 + b - pb1 */
          int64_t off = b - g->pb[1];
          if (f->s1 == 1) {
            int64_t lo = DML_CPU_MIN(f->wq, DML_CPU_MAX((int64_t)0, -off));
            int64_t hi = DML_CPU_MAX(lo, DML_CPU_MIN(f->wq, W - off));
            if (lo > 0) memset(d, 0, (size_t)lo * sizeof(float));
            if (hi > lo)
              memcpy(d + lo, src + lo + off, (size_t)(hi - lo) * sizeof(float));
            if (hi < f->wq) memset(d + hi, 0, (size_t)(f->wq - hi) * sizeof(float));
            continue;
          }
#if DML_CPU_X86
          if (pair) {
            flat_row_s2(src, W, off, d, pl1 ? pl1 + r * f->wq : NULL, f->wq);
            continue;
          }
#endif
          for (int64_t q = 0; q < f->wq; q++) {
            int64_t iw = q * f->s1 + off;
            d[q] = iw >= 0 && iw < W ? src[iw] : 0.0f;
          }
        }
      }
  memset(xq + g->C * f->cstride, 0, 32 * sizeof(float));
}

#if DML_CPU_X86
/* Position vectors [v0, v1) of one image, all M channels, into y (the
 * sums with r's bias and epilogue, tile_ep). */
__attribute__((target("avx512f"))) static void flat_tiles(
    const conv_run_t *r, const conv_geo_t *g, const flat_geo_t *f,
    const float *restrict xq, const float *restrict ap, float *restrict y, int64_t v0,
    int64_t v1) {
  int64_t OW = g->out[1], KW = g->k[1], taps = g->k_sz;
  int64_t K = g->C * taps, mpad = (g->M + 7) / 8 * 8;
  int64_t toff[FLAT_MAX_TAPS];
  for (int64_t t = 0; t < taps; t++) {
    int64_t kh = t / KW, kw = t % KW;
    toff[t] =
        ((kh % f->s0) * f->npw + kw % f->s1) * f->plane + kh / f->s0 * f->wq + kw / f->s1;
  }
  for (int64_t v = v0; v < v1; v += 2) {
    int two = v + 1 < v1;
    /* The row pieces of the (one or two) vectors: lanes [la, lb) of
     * vector j go to output index dst (minus la). */
    int64_t seg_dst[2][17];
    int seg_a[2][17], seg_b[2][17], nseg[2] = {0, 0};
    for (int j = 0; j < 1 + two; j++) {
      int64_t q0 = (v + j) * 16, q1 = DML_CPU_MIN(q0 + 16, f->np);
      for (int64_t p = q0; p < q1;) {
        int64_t oh = p / f->wq, ow = p % f->wq, rowend = (oh + 1) * f->wq;
        int64_t e = DML_CPU_MIN(q1, oh * f->wq + OW);
        if (ow < OW && e > p) {
          seg_a[j][nseg[j]] = (int)(p - q0);
          seg_b[j][nseg[j]] = (int)(e - q0);
          seg_dst[j][nseg[j]] = oh * OW + ow - (p - q0);
          nseg[j]++;
        }
        p = rowend;
      }
    }
    const float *b0 = xq + v * 16, *b1 = xq + (two ? v + 1 : v) * 16;
    for (int64_t m0 = 0; m0 < g->M; m0 += 8) {
      int rows = (int)DML_CPU_MIN((int64_t)8, g->M - m0);
      __m512 acc[8][2];
#pragma GCC unroll 8
      for (int i = 0; i < 8; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
      int64_t c = 0, t = 0;
      for (int64_t pc = 0; pc < K; pc += DML_CPU_GEMM_KC) {
        int64_t kc = DML_CPU_MIN((int64_t)DML_CPU_GEMM_KC, K - pc);
        const float *a = ap + pc * mpad + m0 * kc;
        for (int64_t k = 0; k < kc; k++) {
          int64_t off = c * f->cstride + toff[t];
          __m512 x0 = _mm512_loadu_ps(b0 + off);
          __m512 x1 = _mm512_loadu_ps(b1 + off);
#pragma GCC unroll 8
          for (int i = 0; i < 8; i++) {
            __m512 av = _mm512_set1_ps(a[i]);
            acc[i][0] = _mm512_fmadd_ps(av, x0, acc[i][0]);
            acc[i][1] = _mm512_fmadd_ps(av, x1, acc[i][1]);
          }
          a += 8;
          if (++t == taps) t = 0, c++;
        }
      }
#pragma GCC unroll 8
      for (int i = 0; i < 8; i++) {
        if (i >= rows) break;
        float *ym = y + (m0 + i) * g->out_sz;
        acc[i][0] = tile_ep(r, m0 + i, acc[i][0]);
        acc[i][1] = tile_ep(r, m0 + i, acc[i][1]);
        for (int s = 0; s < nseg[0]; s++) {
          __mmask16 mk =
              (__mmask16)(((1u << seg_b[0][s]) - 1u) & ~((1u << seg_a[0][s]) - 1u));
          _mm512_mask_storeu_ps(ym + seg_dst[0][s], mk, acc[i][0]);
        }
        for (int s = 0; s < (two ? nseg[1] : 0); s++) {
          __mmask16 mk =
              (__mmask16)(((1u << seg_b[1][s]) - 1u) & ~((1u << seg_a[1][s]) - 1u));
          _mm512_mask_storeu_ps(ym + seg_dst[1][s], mk, acc[i][1]);
        }
      }
    }
  }
}
#endif

typedef struct {
  const conv_run_t *run;
  const flat_geo_t *f;
  const float *ap;
  char *slots;
  size_t slot_bytes;
  int64_t n, chunks; /* flat_chunk_task: the image, its vector chunks */
} flat_ctx_t;

/* Vectors [v0, v1) of image n (its planes at xq), with the epilogue. */
static void flat_span(const flat_ctx_t *d, const float *xq, int64_t n, int64_t v0,
                      int64_t v1) {
#if DML_CPU_X86
  const conv_run_t *r = d->run;
  const conv_geo_t *g = r->g;
  float *y = r->y + n * g->M * g->out_sz;
  flat_tiles(r, g, d->f, xq, d->ap, y, v0, v1);
#else
  (void)d, (void)xq, (void)n, (void)v0, (void)v1;
#endif
}

/* One image: its planes into this thread's slot, all vectors. */
static void flat_task(void *vctx, int64_t n, int tid) {
  const flat_ctx_t *d = (const flat_ctx_t *)vctx;
  const conv_geo_t *g = d->run->g;
  float *xq = (float *)(void *)(d->slots + (size_t)tid * d->slot_bytes);
  flat_pad(g, d->f, d->run->x + n * g->C * g->in_sz, xq);
  flat_span(d, xq, n, 0, d->f->nvec);
}

/* Chunk t of image d->n's vectors (its planes in slot 0 beforehand). */
static void flat_chunk_task(void *vctx, int64_t t, int tid) {
  (void)tid;
  const flat_ctx_t *d = (const flat_ctx_t *)vctx;
  int64_t V = d->f->nvec, v0 = V * t / d->chunks, v1 = V * (t + 1) / d->chunks;
  if (v0 < v1) flat_span(d, (const float *)(const void *)d->slots, d->n, v0, v1);
}

#if DML_CPU_X86
/* r[i][j] -> r[j][i] for a 16 x 16 block of floats. */
__attribute__((target("avx512f"), always_inline)) static inline void cv_transpose(
    __m512 r[16]) {
  __m512 t[16], u[16];
#pragma GCC unroll 8
  for (int i = 0; i < 8; i++) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; i++) {
    __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]);
    __m512d c = _mm512_castps_pd(t[4 * i + 2]), d = _mm512_castps_pd(t[4 * i + 3]);
    u[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    u[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    u[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    u[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  /* u[4g + c] lane L: column 4L + c of rows 4g .. 4g + 3 */
#pragma GCC unroll 4
  for (int c = 0; c < 4; c++) {
    __m512 v0 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x88);
    __m512 w0 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xDD);
    __m512 v1 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x88);
    __m512 w1 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xDD);
    r[c] = _mm512_shuffle_f32x4(v0, v1, 0x88);
    r[8 + c] = _mm512_shuffle_f32x4(v0, v1, 0xDD);
    r[4 + c] = _mm512_shuffle_f32x4(w0, w1, 0x88);
    r[12 + c] = _mm512_shuffle_f32x4(w0, w1, 0xDD);
  }
}

/* Tiles [t0, t1) of one image, all channel blocks (cv_geo_t's doc): R
 * output rows of COLS positions per tile (R == 1: a row piece of 16) and
 * width stride S fixed at compile time, so each position's broadcast is
 * one of R row pointers plus a constant (rows past OH in the last tile
 * read its last row and are not stored). W3: the
 * kernel is 3 wide, and each input value of a kernel row is broadcast once
 * for the (up to 3) positions and taps that read it (stride 1: 18
 * broadcasts for 48 multiply-adds instead of 48); each accumulator still
 * takes its taps in k order, so the sums are the same. NB (2 only with
 * W3 and R * COLS <= 12, the registers): 16-channel blocks per pass, each
 * broadcast multiplied by both blocks' weights. */
#define CV_TILES(R, COLS, S, W3, NB)                                                    \
  __attribute__((target("avx512f"))) static void cv_tiles_##R##_##COLS##_##S##_##W3(    \
      const conv_run_t *r, const conv_geo_t *g, const cv_geo_t *v,                      \
      const float *restrict xp, const float *restrict wpk, float *restrict y,           \
      int64_t t0, int64_t t1) {                                                         \
    int64_t OH = g->out[0], OW = g->out[1], KW = g->k[1], taps = g->k_sz, C = g->C;     \
    int64_t rs = g->s[0] * v->wp, K = C * taps;                                         \
    int64_t koff[CV_MAX_TAPS];                                                          \
    const float *res = r->ep ? r->ep->residual : NULL;                                  \
    for (int64_t t = 0; t < taps; t++) koff[t] = t / KW * v->wp + t % KW;               \
    for (int64_t b = 0; b < v->nb; b += (NB)) {                                         \
      /* NB 2: blocks b and b + 1 at once (block b again when b is the                  \
       * last: computed, not stored) */                                                 \
      int two = (NB) == 2 && b + 1 < v->nb;                                             \
      const float *wb = wpk + b * K * 16;                                               \
      const float *wb2 = two ? wb + K * 16 : wb;                                        \
      for (int64_t t = t0; t < t1; t++) {                                               \
        int64_t oh = (R) == 1 ? t / v->tpr : t * (R);                                   \
        int64_t ow0 = (R) == 1 ? t % v->tpr * 16 : 0;                                   \
        int64_t nr = DML_CPU_MIN((int64_t)(R), OH - oh);                                \
        int64_t n = (R) == 1 ? DML_CPU_MIN((int64_t)16, OW - ow0) : nr * (COLS);        \
        const float *x0 = xp + oh * rs + ow0 * (S);                                     \
        int64_t roff[R];                                                                \
        _Pragma("GCC unroll 8") for (int i = 0; i < (R); i++) roff[i] =                 \
            DML_CPU_MIN((int64_t)i, nr - 1) * rs;                                       \
        __m512 acc[NB][16];                                                             \
        _Pragma("GCC unroll 2") for (int e = 0; e < (NB); e++)                          \
            _Pragma("GCC unroll 16") for (int p = 0; p < 16; p++) acc[e][p] =           \
                _mm512_setzero_ps();                                                    \
        const float *wk = wb, *wk2 = wb2;                                               \
        for (int64_t c = 0; c < C; c++) {                                               \
          const float *xc = x0 + c * v->plane;                                          \
          if (W3) {                                                                     \
            for (int64_t kh = 0; kh < g->k[0]; kh++, wk += 48, wk2 += 48) {             \
              __m512 w0 = _mm512_loadu_ps(wk), w1 = _mm512_loadu_ps(wk + 16);           \
              __m512 w2 = _mm512_loadu_ps(wk + 32);                                     \
              __m512 u0 = w0, u1 = w1, u2 = w2;                                         \
              if ((NB) == 2) {                                                          \
                u0 = _mm512_loadu_ps(wk2), u1 = _mm512_loadu_ps(wk2 + 16);              \
                u2 = _mm512_loadu_ps(wk2 + 32);                                         \
              }                                                                         \
              _Pragma("GCC unroll 5") for (int i = 0; i < (R); i++) {                   \
                const float *xr = xc + kh * v->wp + roff[i];                            \
                _Pragma("GCC unroll 40") for (int q = 0; q < (COLS - 1) * (S) + 3;      \
                                              q++) {                                    \
                  __m512 xv = _mm512_set1_ps(xr[q]);                                    \
                  if (q % (S) == 0 && q / (S) < COLS) {                                 \
                    acc[0][i * COLS + q / (S)] =                                        \
                        _mm512_fmadd_ps(xv, w0, acc[0][i * COLS + q / (S)]);            \
                    if ((NB) == 2)                                                      \
                      acc[NB - 1][i * COLS + q / (S)] =                                 \
                          _mm512_fmadd_ps(xv, u0, acc[NB - 1][i * COLS + q / (S)]);     \
                  }                                                                     \
                  if (q >= 1 && (q - 1) % (S) == 0 && (q - 1) / (S) < COLS) {           \
                    acc[0][i * COLS + (q - 1) / (S)] =                                  \
                        _mm512_fmadd_ps(xv, w1, acc[0][i * COLS + (q - 1) / (S)]);      \
                    if ((NB) == 2)                                                      \
                      acc[NB - 1][i * COLS + (q - 1) / (S)] = _mm512_fmadd_ps(          \
                          xv, u1, acc[NB - 1][i * COLS + (q - 1) / (S)]);               \
                  }                                                                     \
                  if (q >= 2 && (q - 2) % (S) == 0 && (q - 2) / (S) < COLS) {           \
                    acc[0][i * COLS + (q - 2) / (S)] =                                  \
                        _mm512_fmadd_ps(xv, w2, acc[0][i * COLS + (q - 2) / (S)]);      \
                    if ((NB) == 2)                                                      \
                      acc[NB - 1][i * COLS + (q - 2) / (S)] = _mm512_fmadd_ps(          \
                          xv, u2, acc[NB - 1][i * COLS + (q - 2) / (S)]);               \
                  }                                                                     \
                }                                                                       \
              }                                                                         \
            }                                                                           \
            continue;                                                                   \
          }                                                                             \
          for (int64_t tp = 0; tp < taps; tp++, wk += 16) {                             \
            const float *xr[R];                                                         \
            _Pragma("GCC unroll 4") for (int i = 0; i < (R); i++) xr[i] =               \
                xc + koff[tp] + roff[i];                                                \
            __m512 wv = _mm512_loadu_ps(wk);                                            \
            _Pragma("GCC unroll 16") for (int p = 0; p < (R) * (COLS); p++) acc[0][p] = \
                _mm512_fmadd_ps(_mm512_set1_ps(xr[p / COLS][p % COLS * (S)]), wv,       \
                                acc[0][p]);                                             \
          }                                                                             \
        }                                                                               \
        __mmask16 km = (__mmask16)((1u << n) - 1u);                                     \
        float *yt = y + oh * OW + ow0;                                                  \
        _Pragma("GCC unroll 2") for (int e = 0; e < (NB); e++) {                        \
          if (e == 1 && !two) break;                                                    \
          int64_t bb = b + e, mn = DML_CPU_MIN((int64_t)16, g->M - 16 * bb);            \
          cv_transpose(acc[e]);                                                         \
          _Pragma("GCC unroll 16") for (int j = 0; j < 16; j++) {                       \
            if (j >= mn) break;                                                         \
            float *yd = yt + (16 * bb + j) * g->out_sz;                                 \
            __m512 o = tile_ep_at(r, res, 16 * bb + j, acc[e][j], yd, km);              \
            _mm512_mask_storeu_ps(yd, km, o);                                           \
          }                                                                             \
        }                                                                               \
      }                                                                                 \
    }                                                                                   \
  }
CV_TILES(1, 16, 1, 0, 1)
CV_TILES(1, 16, 2, 0, 1)
CV_TILES(2, 8, 1, 0, 1)
CV_TILES(2, 8, 2, 0, 1)
CV_TILES(4, 4, 1, 0, 1)
CV_TILES(4, 4, 2, 0, 1)
CV_TILES(1, 16, 1, 1, 1)
CV_TILES(1, 16, 2, 1, 1)
CV_TILES(2, 8, 1, 1, 1)
CV_TILES(2, 8, 2, 1, 1)
CV_TILES(4, 4, 1, 1, 1)
CV_TILES(4, 4, 2, 1, 1)
/* the small-image tiles (cvr_rows; 3-wide kernels only) */
CV_TILES(3, 3, 1, 1, 2)
CV_TILES(3, 3, 2, 1, 2)
CV_TILES(5, 3, 1, 1, 1)
CV_TILES(5, 3, 2, 1, 1)
CV_TILES(3, 5, 1, 1, 1)
CV_TILES(3, 5, 2, 1, 1)
CV_TILES(2, 6, 1, 1, 2)
CV_TILES(2, 6, 2, 1, 2)
CV_TILES(2, 7, 1, 1, 1)
CV_TILES(2, 7, 2, 1, 1)
#undef CV_TILES

typedef void (*cv_tiles_fn)(const conv_run_t *, const conv_geo_t *, const cv_geo_t *,
                            const float *, const float *, float *, int64_t, int64_t);

static void cv_tiles(const conv_run_t *r, const conv_geo_t *g, const cv_geo_t *v,
                     const float *xp, const float *wpk, float *y, int64_t t0,
                     int64_t t1) {
  int two = g->s[1] == 2;
  cv_tiles_fn f;
  if (g->k[1] == 3) {
    switch (v->R * 100 + v->cols) {
      case 116: f = two ? cv_tiles_1_16_2_1 : cv_tiles_1_16_1_1; break;
      case 208: f = two ? cv_tiles_2_8_2_1 : cv_tiles_2_8_1_1; break;
      case 404: f = two ? cv_tiles_4_4_2_1 : cv_tiles_4_4_1_1; break;
      case 303: f = two ? cv_tiles_3_3_2_1 : cv_tiles_3_3_1_1; break;
      case 503: f = two ? cv_tiles_5_3_2_1 : cv_tiles_5_3_1_1; break;
      case 305: f = two ? cv_tiles_3_5_2_1 : cv_tiles_3_5_1_1; break;
      case 206: f = two ? cv_tiles_2_6_2_1 : cv_tiles_2_6_1_1; break;
      default: f = two ? cv_tiles_2_7_2_1 : cv_tiles_2_7_1_1; break; /* 207 */
    }
  } else if (v->R == 1) {
    f = two ? cv_tiles_1_16_2_0 : cv_tiles_1_16_1_0;
  } else if (v->R == 2) {
    f = two ? cv_tiles_2_8_2_0 : cv_tiles_2_8_1_0;
  } else {
    f = two ? cv_tiles_4_4_2_0 : cv_tiles_4_4_1_0;
  }
  f(r, g, v, xp, wpk, y, t0, t1);
}
#endif

/* ---- Winograd F(2x2, 3x3): kernels (wg_plan's comment) -------------- */

#if DML_CPU_X86
/* wg_input for 4 tile columns (8 output columns: padded rows of 10
 * floats): three padded rows per vector in the row pass (rows r .. r + 2
 * are 30 consecutive floats of xp), stored as u_b[r][tx] at ub[b * ul4 + 4r
 * + tx]; the row pass over 16 tiles (4 tile rows) then gathers rows 2ty ..
 * 2ty + 3 of 4 tile rows from two pairs of loads. */
__attribute__((target("avx512f"))) static void wg_input4(const conv_geo_t *g,
                                                         const wg_geo_t *v,
                                                         const float *restrict xp,
                                                         float *restrict ub,
                                                         float *restrict V) {
  const __m512i ie =
      _mm512_setr_epi32(0, 2, 4, 6, 10, 12, 14, 16, 20, 22, 24, 26, 0, 0, 0, 0);
  const __m512i io = _mm512_add_epi32(ie, _mm512_set1_epi32(1));
  const __m512i ie2 = _mm512_add_epi32(ie, _mm512_set1_epi32(2));
  const __m512i io2 = _mm512_add_epi32(ie, _mm512_set1_epi32(3));
  const __m512i ia =
      _mm512_setr_epi32(0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27);
  const __m512i ib = _mm512_add_epi32(ia, _mm512_set1_epi32(4));
  int64_t T = v->T, C = g->C, hp = v->hp, ul4 = hp * 4 + 16;
  for (int64_t c0 = 0; c0 < C; c0 += WG_CG) {
    int64_t cn = DML_CPU_MIN((int64_t)WG_CG, C - c0);
    for (int64_t c = c0; c < c0 + cn; c++) {
      const float *xc = xp + c * v->plane;
      float *ubc = ub + (c - c0) * 4 * ul4;
      /* Lanes 12-15 are overwritten by the next rows (or land in the 16
       * spare floats); reads past the plane stay in xp's 64 spare floats. */
      for (int64_t r = 0; r < hp; r += 3) {
        const float *p = xc + r * 10;
        __m512 a0 = _mm512_loadu_ps(p), a1 = _mm512_loadu_ps(p + 16);
        __m512 e0 = _mm512_permutex2var_ps(a0, ie, a1);
        __m512 o0 = _mm512_permutex2var_ps(a0, io, a1);
        __m512 e1 = _mm512_permutex2var_ps(a0, ie2, a1);
        __m512 o1 = _mm512_permutex2var_ps(a0, io2, a1);
        float *d = ubc + 4 * r;
        _mm512_storeu_ps(d, _mm512_sub_ps(e0, e1));
        _mm512_storeu_ps(d + ul4, _mm512_add_ps(o0, e1));
        _mm512_storeu_ps(d + 2 * ul4, _mm512_sub_ps(e1, o0));
        _mm512_storeu_ps(d + 3 * ul4, _mm512_sub_ps(o0, o1));
      }
    }
    /* (After the group's row passes: see wg_input.) Tiles t0 .. t0 + 15
     * are tile rows t0/4 .. + 3; their padded rows 2ty + a start at 8ty +
     * 4a of u_b, ty counted from t0/4: base 2 t0. */
    for (int64_t c = c0; c < c0 + cn; c++)
      for (int64_t t0 = 0; t0 < T; t0 += 16)
        for (int b = 0; b < 4; b++) {
          const float *u = ub + ((c - c0) * 4 + b) * ul4 + 2 * t0;
          __m512 l0 = _mm512_loadu_ps(u), l1 = _mm512_loadu_ps(u + 16);
          __m512 l2 = _mm512_loadu_ps(u + 8), l3 = _mm512_loadu_ps(u + 24);
          __m512 e0 = _mm512_permutex2var_ps(l0, ia, l1);
          __m512 o0 = _mm512_permutex2var_ps(l0, ib, l1);
          __m512 e1 = _mm512_permutex2var_ps(l2, ia, l3);
          __m512 o1 = _mm512_permutex2var_ps(l2, ib, l3);
          float *d = V + (b * C + c) * T + t0;
          _mm512_storeu_ps(d, _mm512_sub_ps(e0, e1));
          _mm512_storeu_ps(d + 4 * C * T, _mm512_add_ps(o0, e1));
          _mm512_storeu_ps(d + 8 * C * T, _mm512_sub_ps(e1, o0));
          _mm512_storeu_ps(d + 12 * C * T, _mm512_sub_ps(o0, o1));
        }
  }
}

/* One padded image xp (wg_geo_t) into V [16 xi][C][T] (xi = 4a + b: B^T's
 * row a applied over the patch's rows, row b over its columns); ub: the
 * slot's 8 row arrays. */
__attribute__((target("avx512f"))) static void wg_input(const conv_geo_t *g,
                                                        const wg_geo_t *v,
                                                        const float *restrict xp,
                                                        float *restrict ub,
                                                        float *restrict V) {
  const __m512i ev =
      _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i od = _mm512_add_epi32(ev, _mm512_set1_epi32(1));
  int64_t tw = v->tw, T = v->T, C = g->C, ul = (v->th + 1) * tw + 16;
  if (tw == 4) {
    wg_input4(g, v, xp, ub, V);
    return;
  }
  for (int64_t c0 = 0; c0 < C; c0 += WG_CG) {
    int64_t cn = DML_CPU_MIN((int64_t)WG_CG, C - c0);
    for (int64_t c = c0; c < c0 + cn; c++) {
      const float *xc = xp + c * v->plane;
      float *ubc = ub + (c - c0) * 8 * ul;
      /* u_b[r][tx] = (B^T's row b) . xp[r][2tx .. 2tx + 3], stored at
       * ub[(2b + r % 2) * ul + (r / 2) * tw + tx]; the lanes past tw are
       * overwritten by the next row (or land in the 16 spare floats). */
      for (int64_t r = 0; r < v->hp; r++)
        for (int64_t t0 = 0; t0 < tw; t0 += 16) {
          const float *p = xc + r * v->wp + 2 * t0;
          __m512 a0 = _mm512_loadu_ps(p), a1 = _mm512_loadu_ps(p + 16);
          __m512 c0 = _mm512_loadu_ps(p + 2), c1 = _mm512_loadu_ps(p + 18);
          __m512 e0 = _mm512_permutex2var_ps(a0, ev, a1);
          __m512 o0 = _mm512_permutex2var_ps(a0, od, a1);
          __m512 e1 = _mm512_permutex2var_ps(c0, ev, c1);
          __m512 o1 = _mm512_permutex2var_ps(c0, od, c1);
          float *d = ubc + (r % 2) * ul + (r / 2) * tw + t0;
          _mm512_storeu_ps(d, _mm512_sub_ps(e0, e1));
          _mm512_storeu_ps(d + 2 * ul, _mm512_add_ps(o0, e1));
          _mm512_storeu_ps(d + 4 * ul, _mm512_sub_ps(e1, o0));
          _mm512_storeu_ps(d + 6 * ul, _mm512_sub_ps(o0, o1));
        }
    }
    /* Over the rows: tile (ty, tx) reads rows 2ty .. 2ty + 3, i.e. the even
     * and odd arrays at ty and ty + 1 (tile index t and t + tw). A group of
     * channels' rows first, then these loads: a load right after the
     * overlapping stores of the row pass would wait for them (no store
     * forwarding across several stores: wg_input took a third of the
     * kernel's time that way). */
    for (int64_t c = c0; c < c0 + cn; c++)
      for (int64_t t0 = 0; t0 < T; t0 += 16)
        for (int b = 0; b < 4; b++) {
          const float *ue = ub + ((c - c0) * 8 + 2 * b) * ul + t0, *uo = ue + ul;
          __m512 e0 = _mm512_loadu_ps(ue), o0 = _mm512_loadu_ps(uo);
          __m512 e1 = _mm512_loadu_ps(ue + tw), o1 = _mm512_loadu_ps(uo + tw);
          float *d = V + (b * C + c) * T + t0;
          _mm512_storeu_ps(d, _mm512_sub_ps(e0, e1));
          _mm512_storeu_ps(d + 4 * C * T, _mm512_add_ps(o0, e1));
          _mm512_storeu_ps(d + 8 * C * T, _mm512_sub_ps(e1, o0));
          _mm512_storeu_ps(d + 12 * C * T, _mm512_sub_ps(o0, o1));
        }
  }
}

/* Blocks [p0, p1) of one image (block p: output channels 16 (p / (T/16))
 * .. + 15, tiles 16 (p % (T/16)) .. + 15): V (wg_input) times the
 * transformed weights U, A^T M A, the epilogue, stored into y (this image's
 * output). mb: a product block of this thread's. */
__attribute__((target("avx512f"))) static void wg_image(
    const conv_run_t *r, const conv_geo_t *g, const wg_geo_t *v, const float *restrict V,
    const float *restrict U, float *restrict mb, float *y, int64_t p0, int64_t p1) {
  const __m512i ilo =
      _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i ihi = _mm512_add_epi32(ilo, _mm512_set1_epi32(8));
  int64_t C = g->C, T = v->T, tw = v->tw, OW = g->out[1];
  const float *res = r->ep ? r->ep->residual : NULL;
  for (int64_t p = p0; p < p1; p++) {
    int64_t b = p / (T / 16), t0 = p % (T / 16) * 16;
    int64_t mn = DML_CPU_MIN((int64_t)16, g->M - 16 * b);
    {
      for (int xi = 0; xi < 16; xi++) {
        const float *vx = V + (int64_t)xi * C * T + t0;
        const float *wx = U + ((xi * v->nb + b) * C) * 16;
        __m512 acc[16];
#pragma GCC unroll 16
        for (int j = 0; j < 16; j++) acc[j] = _mm512_setzero_ps();
        for (int64_t c = 0; c < C; c++, wx += 16) {
          __m512 xv = _mm512_loadu_ps(vx + c * T);
#pragma GCC unroll 16
          for (int j = 0; j < 16; j++)
            acc[j] = _mm512_fmadd_ps(_mm512_set1_ps(wx[j]), xv, acc[j]);
        }
#pragma GCC unroll 16
        for (int j = 0; j < 16; j++) _mm512_storeu_ps(mb + (xi * 16 + j) * 16, acc[j]);
      }
      for (int64_t j = 0; j < mn; j++) {
        __m512 q[16];
#pragma GCC unroll 16
        for (int xi = 0; xi < 16; xi++) q[xi] = _mm512_loadu_ps(mb + (xi * 16 + j) * 16);
        __m512 s[2][4]; /* A^T over the rows */
#pragma GCC unroll 4
        for (int c4 = 0; c4 < 4; c4++) {
          __m512 m1 = q[4 + c4], m2 = q[8 + c4];
          s[0][c4] = _mm512_add_ps(_mm512_add_ps(q[c4], m1), m2);
          s[1][c4] = _mm512_sub_ps(_mm512_sub_ps(m1, m2), q[12 + c4]);
        }
        int64_t m = 16 * b + j;
        float *ym = y + m * g->out_sz;
#pragma GCC unroll 2
        for (int i = 0; i < 2; i++) {
          __m512 y0 = _mm512_add_ps(_mm512_add_ps(s[i][0], s[i][1]), s[i][2]);
          __m512 y1 = _mm512_sub_ps(_mm512_sub_ps(s[i][1], s[i][2]), s[i][3]);
#pragma GCC unroll 2
          for (int h = 0; h < 2; h++) {
            /* Tiles t0 + 8h .. + 7, their two outputs of row i side by
             * side: 16 consecutive outputs (tw a multiple of 8) or 8 and 8
             * two output rows apart (tw 4). */
            __m512 o = _mm512_permutex2var_ps(y0, h ? ihi : ilo, y1);
            int64_t t = t0 + 8 * h, ty = t / tw, tx = t % tw;
            float *d = ym + (2 * ty + i) * OW + 2 * tx;
            int64_t gap = tw == 4 ? 2 * OW - 8 : 0;
            if (r->b) o = _mm512_add_ps(o, _mm512_set1_ps(r->b[m]));
            if (r->ep && r->ep->scale)
              o = _mm512_add_ps(_mm512_mul_ps(o, _mm512_set1_ps(r->ep->scale[m])),
                                _mm512_set1_ps(r->ep->shift[m]));
            if (res) {
              const float *rp = res + (d - r->y);
              __m512 rv = _mm512_maskz_loadu_ps(0x00FF, rp);
              rv = _mm512_mask_loadu_ps(rv, 0xFF00, rp + gap);
              o = _mm512_add_ps(o, rv);
            }
            if (r->ep && r->ep->relu) o = _mm512_max_ps(_mm512_setzero_ps(), o);
            _mm512_mask_storeu_ps(d, 0x00FF, o);
            _mm512_mask_storeu_ps(d + gap, 0xFF00, o);
          }
        }
      }
    }
  }
}
#endif

typedef struct {
  const conv_run_t *run;
  const wg_geo_t *v;
  const float *U;
  char *slots, *mbs; /* mbs: WG_MB_BYTES per thread (wg_chunk_task) */
  size_t slot_bytes;
  int64_t n, chunks; /* wg_chunk_task: the image, its block chunks */
} wg_ctx_t;

/* The parts of slot 0: padded image, row arrays, V, product block. */
static void wg_slot(const conv_geo_t *g, const wg_geo_t *v, char *s, float **xp,
                    float **ub, float **V, float **mb) {
  *xp = (float *)(void *)s;
  s += align64((size_t)(g->C * v->plane + 64) * 4);
  *ub = (float *)(void *)s;
  s += align64((size_t)(WG_CG * 8 * ((v->th + 1) * v->tw + 16)) * 4);
  *V = (float *)(void *)s;
  s += align64((size_t)(16 * g->C * v->T) * 4);
  *mb = (float *)(void *)s;
}

/* Image x padded and transformed into the slot's V. */
static void wg_prepare(const conv_geo_t *g, const wg_geo_t *v, const float *x, float *xp,
                       float *ub, float *V) {
#if DML_CPU_X86
  pad_image(g, v->hp, v->wp, x, xp);
  memset(xp + g->C * v->plane, 0, 64 * sizeof(float));
  wg_input(g, v, xp, ub, V);
#else
  (void)g, (void)v, (void)x, (void)xp, (void)ub, (void)V;
#endif
}

/* One image: padded into this thread's slot, transformed, multiplied. */
static void wg_task(void *vctx, int64_t n, int tid) {
#if DML_CPU_X86
  const wg_ctx_t *d = (const wg_ctx_t *)vctx;
  const conv_run_t *r = d->run;
  const conv_geo_t *g = r->g;
  const wg_geo_t *v = d->v;
  float *xp, *ub, *V, *mb;
  wg_slot(g, v, d->slots + (size_t)tid * d->slot_bytes, &xp, &ub, &V, &mb);
  wg_prepare(g, v, r->x + n * g->C * g->in_sz, xp, ub, V);
  wg_image(r, g, v, V, d->U, mb, r->y + n * g->M * g->out_sz, 0, v->nb * (v->T / 16));
#else
  (void)vctx, (void)n, (void)tid;
#endif
}

/* Chunk t of image d->n's blocks (its V made in slot 0 beforehand). */
static void wg_chunk_task(void *vctx, int64_t t, int tid) {
#if DML_CPU_X86
  const wg_ctx_t *d = (const wg_ctx_t *)vctx;
  const conv_run_t *r = d->run;
  const conv_geo_t *g = r->g;
  const wg_geo_t *v = d->v;
  float *xp, *ub, *V, *mb;
  wg_slot(g, v, d->slots, &xp, &ub, &V, &mb);
  int64_t P = v->nb * (v->T / 16), p0 = P * t / d->chunks, p1 = P * (t + 1) / d->chunks;
  if (p0 < p1)
    wg_image(r, g, v, V, d->U, (float *)(void *)(d->mbs + (size_t)tid * WG_MB_BYTES),
             r->y + d->n * g->M * g->out_sz, p0, p1);
#else
  (void)vctx, (void)t, (void)tid;
#endif
}

typedef struct {
  const conv_run_t *run;
  const cv_geo_t *v;
  const float *wpk;
  char *slots;
  size_t slot_bytes;
  int64_t n, chunks; /* cv_chunk_task: the image, its tile chunks */
} cv_ctx_t;

/* The padded image of x into xp, and the 32 floats past it zeroed. */
static void cv_pad(const conv_geo_t *g, const cv_geo_t *v, const float *x, float *xp) {
  pad_image(g, v->hp, v->wp, x, xp);
  memset(xp + g->C * v->plane, 0, 32 * sizeof(float));
}

/* One image: padded into this thread's slot (or read in place), all
 * tiles. */
static void cv_task(void *vctx, int64_t n, int tid) {
#if DML_CPU_X86
  const cv_ctx_t *d = (const cv_ctx_t *)vctx;
  const conv_run_t *r = d->run;
  const conv_geo_t *g = r->g;
  const float *x = r->x + n * g->C * g->in_sz;
  float *xp = (float *)(void *)(d->slots + (size_t)tid * d->slot_bytes);
  if (!d->v->inplace) cv_pad(g, d->v, x, xp);
  cv_tiles(r, g, d->v, d->v->inplace ? x : xp, d->wpk, r->y + n * g->M * g->out_sz, 0,
           d->v->tiles);
#else
  (void)vctx, (void)n, (void)tid;
#endif
}

/* Chunk t of image d->n's tiles (its image padded in slot 0 beforehand, or
 * read in place). */
static void cv_chunk_task(void *vctx, int64_t t, int tid) {
#if DML_CPU_X86
  (void)tid;
  const cv_ctx_t *d = (const cv_ctx_t *)vctx;
  const conv_run_t *r = d->run;
  const conv_geo_t *g = r->g;
  int64_t T = d->v->tiles, t0 = T * t / d->chunks, t1 = T * (t + 1) / d->chunks;
  const float *xp = d->v->inplace ? r->x + d->n * g->C * g->in_sz
                                  : (const float *)(const void *)d->slots;
  if (t0 < t1) cv_tiles(r, g, d->v, xp, d->wpk, r->y + d->n * g->M * g->out_sz, t0, t1);
#else
  (void)vctx, (void)t, (void)tid;
#endif
}

/* One (image, group) pair. */
static void conv_task(void *vctx, int64_t t, int tid) {
  conv_run_t *r = (conv_run_t *)vctx;
  const conv_geo_t *g = r->g;
  int64_t chunk = t % r->chunks;
  t /= r->chunks;
  int64_t n = t / g->group, gr = t % g->group;
  char *slot = r->base + (size_t)tid * r->mem.slot_bytes;
  float *col = (float *)(void *)slot;
  void *gs = slot + r->mem.col_bytes;
  size_t gsb = r->mem.gemm_bytes;
  if (!r->transpose) {
    const float *x = r->x + (n * g->C + gr * g->Cg) * g->in_sz;
    /* Output columns [j0, j1) of this image and group (all when chunks 1). */
    int64_t j0 = chunk * r->chunk_cols, j1 = DML_CPU_MIN(g->out_sz, j0 + r->chunk_cols);
    if (j0 >= j1) return;
    float *y = r->y + (n * g->M + gr * g->Mg) * g->out_sz + j0;
    const float *w = r->w + gr * g->Mg * g->Cg * g->k_sz;
    const float *bm, *bpre = NULL;
    int64_t ldb = g->out_sz;
    if (g->pointwise) {
      bm = x + j0;
    } else if (packs_col(g)) {
      float rowbuf[DML_CPU_GEMM_NC + 32];
      im2col_packed(g, x, col, dml_cpu_sgemm_nr(), j0, j1, rowbuf);
      bm = bpre = col;
      ldb = j1 - j0;
    } else {
      im2col(g, x, col); /* chunks is 1 here */
      bm = col;
    }
    int64_t K = g->Cg * g->k_sz;
    const float *apre =
        r->ep && r->ep->packed
            ? (const float *)r->ep->packed + gr * dml_cpu_sgemm_packed_a_floats(g->Mg, K)
            : NULL;
    dml_cpu_sgemm_pre(0, 0, g->Mg, j1 - j0, K, 1.0f, w, K, bm, ldb, 0.0f, y, g->out_sz,
                      apre, bpre, gs, gsb);
    conv_epilogue(r, y, gr * g->Mg, g->Mg, j1 - j0, g->out_sz);
  } else {
    const float *x = r->x + (n * g->C + gr * g->Cg) * g->in_sz;
    float *y = r->y + (n * g->M + gr * g->Mg) * g->out_sz;
    /* W is [C, Mg, k...]: this group's rows [gr*Cg, (gr+1)*Cg) form a
     * (Cg x Mg*k) matrix; col = W_g^T * X_g. */
    const float *w = r->w + gr * g->Cg * g->Mg * g->k_sz;
    int64_t MK = g->Mg * g->k_sz;
    dml_cpu_sgemm(1, 0, MK, g->in_sz, g->Cg, 1.0f, w, MK, x, g->in_sz, 0.0f, col,
                  g->in_sz, gs, gsb);
    for (int64_t m = 0; m < g->Mg; m++) {
      float bv = r->b ? r->b[gr * g->Mg + m] : 0.0f;
      float *ym = y + m * g->out_sz;
      for (int64_t o = 0; o < g->out_sz; o++) ym[o] = bv;
    }
    col2im(g, col, y);
  }
}

/* ---- generic (double) path -------------------------------------------- */

static void conv_generic(const conv_geo_t *g, int transpose, dml_dtype_t dt,
                         const dml_tensor_t *x, const dml_tensor_t *w,
                         const dml_tensor_t *b, dml_tensor_t *y) {
  int r = g->r;
  int64_t ytotal = g->N * g->M * g->out_sz;
  if (!transpose) {
    for (int64_t yi = 0; yi < ytotal; yi++) {
      int64_t o = yi % g->out_sz, m = (yi / g->out_sz) % g->M,
              n = yi / (g->out_sz * g->M);
      int64_t gr = m / g->Mg;
      int64_t oidx[SP_MAX], rem = o;
      for (int i = r - 1; i >= 0; i--) oidx[i] = rem % g->out[i], rem /= g->out[i];
      double s = b ? dml_load_f64(dt, b->data, (size_t)m) : 0.0;
      for (int64_t ch = 0; ch < g->Cg; ch++)
        for (int64_t kk = 0; kk < g->k_sz; kk++) {
          int64_t krem = kk, off = 0, inb = 1;
          int64_t kidx[SP_MAX];
          for (int i = r - 1; i >= 0; i--) kidx[i] = krem % g->k[i], krem /= g->k[i];
          for (int i = 0; i < r && inb; i++) {
            int64_t p = oidx[i] * g->s[i] - g->pb[i] + kidx[i] * g->d[i];
            if (p < 0 || p >= g->in[i]) inb = 0;
            off = off * g->in[i] + p;
          }
          size_t wi = (size_t)((m * g->Cg + ch) * g->k_sz + kk);
          /* a padded tap adds 0 * w, as the f32 paths' zero padding (and
           * ONNX Runtime's im2col) does: NaN for an infinite or NaN weight */
          double xv = 0.0;
          if (inb)
            xv = dml_load_f64(dt, x->data,
                              (size_t)((n * g->C + gr * g->Cg + ch) * g->in_sz + off));
          s += xv * dml_load_f64(dt, w->data, wi);
        }
      dml_store_f64(dt, y->data, (size_t)yi, s);
    }
    return;
  }
  for (int64_t yi = 0; yi < ytotal; yi++) {
    int64_t m = (yi / g->out_sz) % g->M;
    dml_store_f64(dt, y->data, (size_t)yi,
                  b ? dml_load_f64(dt, b->data, (size_t)m) : 0.0);
  }
  for (int64_t n = 0; n < g->N; n++)
    for (int64_t ch = 0; ch < g->C; ch++) {
      int64_t gr = ch / g->Cg;
      for (int64_t i = 0; i < g->in_sz; i++) {
        double xv = dml_load_f64(dt, x->data, (size_t)((n * g->C + ch) * g->in_sz + i));
        int64_t iidx[SP_MAX], rem = i;
        for (int d = r - 1; d >= 0; d--) iidx[d] = rem % g->in[d], rem /= g->in[d];
        for (int64_t m = 0; m < g->Mg; m++)
          for (int64_t kk = 0; kk < g->k_sz; kk++) {
            int64_t kidx[SP_MAX], krem = kk, off = 0, inb = 1;
            for (int d = r - 1; d >= 0; d--) kidx[d] = krem % g->k[d], krem /= g->k[d];
            for (int d = 0; d < r && inb; d++) {
              int64_t p = iidx[d] * g->s[d] - g->pb[d] + kidx[d] * g->d[d];
              if (p < 0 || p >= g->out[d]) inb = 0;
              off = off * g->out[d] + p;
            }
            if (!inb) continue;
            size_t yi = (size_t)((n * g->M + gr * g->Mg + m) * g->out_sz + off);
            size_t wi = (size_t)((ch * g->Mg + m) * g->k_sz + kk);
            dml_store_f64(
                dt, y->data, yi,
                dml_load_f64(dt, y->data, yi) + xv * dml_load_f64(dt, w->data, wi));
          }
      }
    }
}

/* ---- entry points ----------------------------------------------------- */

static dml_status_t conv_run(const dml_cpu_call_t *c, int transpose,
                             const dml_cpu_epilogue_t *ep) {
  const dml_tensor_t *x = &c->inputs[0], *w = &c->inputs[1], *b = dml_cpu_in(c, 2);
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  if (!dml_dtype_is_float(dt)) return dml_cpu_err_dtype(c, "input", dt);
  if (w->dtype != dt || y->dtype != dt || (b && b->dtype != dt))
    return dml_cpu_err_dtype(c, "W/B/Y", w->dtype != dt ? w->dtype : y->dtype);
  conv_geo_t g;
  DML_RETURN_IF_ERROR(conv_geo(c, transpose, &g));
  if (dml_cpu_numel(y) == 0) return DML_OK;
  if (dt != DML_DTYPE_F32) {
    conv_generic(&g, transpose, dt, x, w, b, y);
    return DML_OK;
  }
  int regs = 0, gemm = 0;
  if (ep && ep->residual) {
    regs = !transpose && !is_depthwise(&g) && (pws_ok(&g) || cv_ok(&g) || direct_ok(&g));
    /* (wg_ok geometries are cv_ok ones: the Winograd kernel adds it in
     * registers too.) */
    gemm = !transpose && !is_depthwise(&g) && !regs && !flat_ok(&g);
  }
  if (ep && ep->residual && !regs && !(gemm && ep->residual != (const float *)y->data)) {
    /* The cv and direct kernels add the residual in registers before each
     * store, the GEMM path after its product (not over y's own buffer,
     * which the product overwrites first); the others add none: the
     * epilogue up to it, then y = y + residual and Relu in one pass (the
     * same roundings), a residual in y's own buffer copied first. */
    dml_cpu_epilogue_t pre = *ep;
    pre.residual = NULL;
    pre.relu = 0;
    size_t numel = dml_cpu_numel(y);
    const float *res = ep->residual;
    float *copy = NULL;
    if (res == (const float *)y->data) {
      copy = (float *)malloc(numel * sizeof(float));
      if (!copy) return dml_cpu_error(c, DML_STATUS_RESOURCE_EXHAUSTED, "out of memory");
      memcpy(copy, res, numel * sizeof(float));
      res = copy;
    }
    dml_status_t st = conv_run(c, transpose, &pre);
    float *yv = (float *)y->data;
    int64_t rows = (int64_t)numel / g.out_sz;
    for (int64_t i = 0; i < rows && !st; i++)
      conv_residual_row(yv + i * g.out_sz, g.out_sz, res + i * g.out_sz, ep->relu);
    free(copy);
    return st;
  }
  int threads = dml_cpu_num_threads();
  if (!transpose && is_depthwise(&g)) {
    conv_run_t run = conv_run_of(&g, 0, x, w, b, y, NULL, (conv_mem_t){0, 0, 0, 0}, ep);
    double macs = (double)(g.N * g.C) * (double)g.out_sz * (double)g.k_sz;
    int nth = macs >= DML_CPU_CONV_PARALLEL_MIN_MACS ? threads : 1;
#if DML_CPU_X86
    if (dwf_enabled && dml_cpu_sgemm_isa() == 3 && (dwr_ok(&g) || dw8_ok(&g))) {
      dml_cpu_parallel_for(g.N * ((g.C + DWF_CB - 1) / DWF_CB), nth, dwr_task, &run);
      return DML_OK;
    }
    char *tb = (char *)(((uintptr_t)c->scratch + 63) & ~(uintptr_t)63);
    if (dwf_enabled && dml_cpu_sgemm_isa() == 3 && dwf_ok(&g) && c->scratch &&
        c->scratch_bytes >= (size_t)(tb - (char *)c->scratch) + dwf_table_bytes(&g)) {
      dwf_table(&g, 0, (g.out_sz + 15) / 16, (dwf_tap_t *)tb);
      run.base = tb;
      dml_cpu_parallel_for(g.N * ((g.C + DWF_CB - 1) / DWF_CB), nth, dwf_task, &run);
      return DML_OK;
    }
#endif
    dml_cpu_parallel_for(g.N * g.C, nth, dw_task, &run);
    return DML_OK;
  }
  char *base = (char *)(((uintptr_t)c->scratch + 63) & ~(uintptr_t)63);
  size_t pad = (size_t)(base - (char *)c->scratch);
  size_t avail = c->scratch && c->scratch_bytes > pad ? c->scratch_bytes - pad : 0;
#if DML_CPU_X86
  conv_geo_t gp;
  if (!transpose && pws_ok(&g) && pws_geo(&g, &gp)) {
    size_t ab = direct_apack_bytes(&g), sb = pws_slot_bytes(&g);
    int slots = direct_slots(&g, threads);
    if (avail < ab + sb)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "scratch too small");
    if (avail < ab + (size_t)slots * sb) slots = 1;
    conv_run_t run = conv_run_of(&gp, 0, x, w, b, y, base, (conv_mem_t){0, 0, 0, 0}, ep);
    const float *ap = ep && ep->packed ? (const float *)ep->packed : (const float *)base;
    if (ap == (const float *)base)
      dml_cpu_sgemm_pack_a(0, g.M, g.C, run.w, g.C, (float *)base);
    pws_ctx_t d = {&run, &g, ap, base + ab, sb, 0, 1};
    double macs = (double)g.M * (double)g.C * (double)g.out_sz;
    if (slots == 1 && threads > 1 && macs >= DML_CPU_CONV_PARALLEL_MIN_MACS) {
      /* One image at a time: gathered once, its output vectors split. */
      d.chunks = 2 * (int64_t)threads;
      for (d.n = 0; d.n < g.N; d.n++) {
        pws_gather(&g, run.x + d.n * g.C * g.in_sz, (float *)(void *)d.slots);
        dml_cpu_parallel_for(d.chunks, threads, pws_chunk_task, &d);
      }
      return DML_OK;
    }
    dml_cpu_parallel_for(g.N, slots, pws_task, &d);
    return DML_OK;
  }
#endif
  if (!transpose && !cv_ok(&g) && direct_ok(&g)) {
    pw_flatten(&g);
    size_t ab = direct_apack_bytes(&g), sb = direct_slot_bytes(&g);
    int slots = direct_slots(&g, threads);
    if (avail < ab + sb)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "scratch too small");
    if (avail < ab + (size_t)slots * sb) slots = 1;
    conv_run_t run = conv_run_of(&g, 0, x, w, b, y, base, (conv_mem_t){0, 0, 0, 0}, ep);
    const float *ap = ep && ep->packed ? (const float *)ep->packed : (const float *)base;
    if (ap == (const float *)base)
      dml_cpu_sgemm_pack_a(0, g.M, g.C * g.k_sz, run.w, g.C * g.k_sz, (float *)base);
    direct_ctx_t d = {&run, ap, base + ab, sb, 0, 1};
    double macs = (double)g.M * (double)(g.C * g.k_sz) * (double)g.out_sz;
    if (slots == 1 && threads > 1 && macs >= DML_CPU_CONV_PARALLEL_MIN_MACS) {
      /* One image at a time (fewer images than threads): padded once, its
       * output vectors split over the threads. */
      d.chunks = 2 * (int64_t)threads;
      for (d.n = 0; d.n < g.N; d.n++) {
        if (!g.pointwise)
          direct_pad(&g, run.x + d.n * g.C * g.in_sz, (float *)(void *)d.slots);
        dml_cpu_parallel_for(d.chunks, threads, direct_chunk_task, &d);
      }
      return DML_OK;
    }
    dml_cpu_parallel_for(g.N, slots, direct_task, &d);
    return DML_OK;
  }
  if (!transpose && cv_ok(&g) && wg_ok(&g) &&
      wg_finite((const float *)x->data, dml_cpu_numel(x)) &&
      wg_finite((const float *)w->data, dml_cpu_numel(w))) {
    wg_geo_t v;
    wg_plan(&g, &v);
    size_t wb = align64(wg_wpack_floats(g.M, g.C) * 4), sb = wg_slot_bytes(&g);
    int slots = direct_slots(&g, threads);
    if (avail < wb + sb)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "scratch too small");
    if (avail < wb + (size_t)slots * sb) slots = 1;
    conv_run_t run = conv_run_of(&g, 0, x, w, b, y, base, (conv_mem_t){0, 0, 0, 0}, ep);
    const float *U = (const float *)(const void *)base;
    if (ep && ep->packed && wg_prepacks(w, 1))
      U = (const float *)ep->packed + wg_prepack_at(g.M, g.C * g.k_sz);
    else
      wg_pack(g.M, g.C, run.w, (float *)(void *)base);
    wg_ctx_t d = {&run, &v, U, base + wb, base + wb + (size_t)slots * sb, sb, 0, 1};
    double macs = (double)g.M * (double)(g.C * g.k_sz) * (double)g.out_sz;
    int64_t P = v.nb * (v.T / 16);
    if (slots == 1 && threads > 1 && P > 1 && macs >= DML_CPU_CONV_PARALLEL_MIN_MACS &&
        avail >= wb + sb + (size_t)threads * WG_MB_BYTES) {
      /* One image at a time: transformed once, its blocks split. */
      d.chunks = DML_CPU_MIN(2 * (int64_t)threads, P);
      for (d.n = 0; d.n < g.N; d.n++) {
        float *xp, *ub, *V, *mb;
        wg_slot(&g, &v, d.slots, &xp, &ub, &V, &mb);
        wg_prepare(&g, &v, run.x + d.n * g.C * g.in_sz, xp, ub, V);
        dml_cpu_parallel_for(d.chunks, threads, wg_chunk_task, &d);
      }
      return DML_OK;
    }
    dml_cpu_parallel_for(g.N, slots, wg_task, &d);
    return DML_OK;
  }
  if (!transpose && cv_ok(&g)) {
    pw_flatten(&g); /* a pointwise image as one row (cv_ok) */
    cv_geo_t v;
    cv_plan(&g, &v);
    size_t wb = cv_wpack_bytes(&g), sb = cv_slot_bytes(&g);
    int slots = direct_slots(&g, threads);
    if (avail < wb + sb)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "scratch too small");
    if (avail < wb + (size_t)slots * sb) slots = 1;
    conv_run_t run = conv_run_of(&g, 0, x, w, b, y, base, (conv_mem_t){0, 0, 0, 0}, ep);
    const float *wpk = (const float *)(const void *)base;
    if (ep && ep->packed && cv_prepacks(w, 1))
      wpk = (const float *)ep->packed + cv_prepack_at(g.M, g.C * g.k_sz);
    else
      cv_pack(g.M, g.C * g.k_sz, run.w, (float *)(void *)base);
    cv_ctx_t d = {&run, &v, wpk, base + wb, sb, 0, 1};
    double macs = (double)g.M * (double)(g.C * g.k_sz) * (double)g.out_sz;
    if (slots == 1 && threads > 1 && macs >= DML_CPU_CONV_PARALLEL_MIN_MACS) {
      /* One image at a time: padded once, its tiles split. */
      d.chunks = DML_CPU_MIN(2 * (int64_t)threads, v.tiles);
      for (d.n = 0; d.n < g.N; d.n++) {
        if (!v.inplace)
          cv_pad(&g, &v, run.x + d.n * g.C * g.in_sz, (float *)(void *)d.slots);
        dml_cpu_parallel_for(d.chunks, threads, cv_chunk_task, &d);
      }
      return DML_OK;
    }
    dml_cpu_parallel_for(g.N, slots, cv_task, &d);
    return DML_OK;
  }
  if (!transpose && flat_ok(&g)) {
    flat_geo_t f;
    flat_plan(&g, &f);
    size_t ab = direct_apack_bytes(&g), sb = flat_slot_bytes(&g);
    int slots = direct_slots(&g, threads);
    if (avail < ab + sb)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "scratch too small");
    if (avail < ab + (size_t)slots * sb) slots = 1;
    conv_run_t run = conv_run_of(&g, 0, x, w, b, y, base, (conv_mem_t){0, 0, 0, 0}, ep);
    const float *ap = ep && ep->packed ? (const float *)ep->packed : (const float *)base;
    if (ap == (const float *)base)
      dml_cpu_sgemm_pack_a(0, g.M, g.C * g.k_sz, run.w, g.C * g.k_sz, (float *)base);
    flat_ctx_t d = {&run, &f, ap, base + ab, sb, 0, 1};
    double macs = (double)g.M * (double)(g.C * g.k_sz) * (double)g.out_sz;
    if (slots == 1 && threads > 1 && macs >= DML_CPU_CONV_PARALLEL_MIN_MACS) {
      /* One image at a time: its planes made once, its vectors split. */
      d.chunks = DML_CPU_MIN(2 * (int64_t)threads, f.nvec);
      for (d.n = 0; d.n < g.N; d.n++) {
        flat_pad(&g, &f, run.x + d.n * g.C * g.in_sz, (float *)(void *)d.slots);
        dml_cpu_parallel_for(d.chunks, threads, flat_chunk_task, &d);
      }
      return DML_OK;
    }
    dml_cpu_parallel_for(g.N, slots, flat_task, &d);
    return DML_OK;
  }
  conv_mem_t mem = conv_mem(&g, transpose, threads);
  int slots = 1;
  if (mem.batch_parallel) {
    slots = mem.slot_bytes ? (int)DML_CPU_MIN((size_t)threads, avail / mem.slot_bytes)
                           : threads;
    if (slots < 2) {
      mem = conv_mem(&g, transpose, 1);
      slots = 1;
    }
  } else if (mem.slot_bytes > avail) {
    mem = conv_mem(&g, transpose, 1);
  }
  if (mem.slot_bytes > avail) {
    /* Only reachable when the sizes disagree with dml_cpu_scratch_bytes. */
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "scratch too small");
  }
  if (!mem.batch_parallel) mem.gemm_bytes = avail - mem.col_bytes; /* all threads */
  conv_run_t run = conv_run_of(&g, transpose, x, w, b, y, base, mem, ep);
  /* Fewer (image, group) pairs than twice the threads: also split each
   * image's columns, in whole panels of the micro-kernel. */
  int64_t pairs = g.N * g.group;
  if (mem.batch_parallel && !transpose && splits_cols(&g) && pairs < 2 * (int64_t)slots) {
    int64_t nr = dml_cpu_sgemm_nr(), want = (2 * (int64_t)slots + pairs - 1) / pairs;
    int64_t cols = (g.out_sz + want - 1) / want;
    cols = (cols + nr - 1) / nr * nr;
    run.chunk_cols = cols;
    run.chunks = (g.out_sz + cols - 1) / cols;
  }
  dml_cpu_parallel_for(pairs * run.chunks, mem.batch_parallel ? slots : 1, conv_task,
                       &run);
  return DML_OK;
}

/* ONNX Conv (11): Y[n, m, o] = B[m] + sum_{c in group(m), k} X[n, c, o*s - pb + k*d]
 * * W[m, c, k]; auto_pad NOTSET/SAME_UPPER/SAME_LOWER/VALID. */
dml_status_t dml_cpuk_Conv(const dml_cpu_call_t *c) {
  return conv_run(c, 0, NULL);
}

dml_status_t dml_cpu_conv_ep(const dml_cpu_call_t *c, const dml_cpu_epilogue_t *ep) {
  return conv_run(c, 0, ep);
}

/* Conv's W [M, Cg, k...] as Mg x (Cg*k) GEMM A operands, one per group in
 * order, then (cv_prepacks) the cv kernel's [ceil(M/16)][K][16] at
 * cv_prepack_at, then (wg_prepacks) the Winograd kernel's transformed
 * weights [16][ceil(M/16)][C][16] at wg_prepack_at; 0 for depthwise (direct
 * kernel) and non-f32. */
size_t dml_cpu_conv_prepack_floats(const dml_tensor_t *w, int64_t group) {
  if (w->dtype != DML_DTYPE_F32 || w->rank < 3 || group < 1 || w->dims[0] % group)
    return 0;
  if (w->dims[1] == 1 && group == w->dims[0]) return 0; /* depthwise */
  int64_t K = 1, M = w->dims[0];
  for (int32_t i = 1; i < w->rank; i++) K *= w->dims[i];
  if (wg_prepacks(w, group)) return wg_prepack_at(M, K) + wg_wpack_floats(M, w->dims[1]);
  if (cv_prepacks(w, group))
    return cv_prepack_at(M, K) + (size_t)((M + 15) / 16 * 16 * K);
  return (size_t)group * dml_cpu_sgemm_packed_a_floats(M / group, K);
}

void dml_cpu_conv_prepack(const dml_tensor_t *w, int64_t group, float *dst) {
  int64_t K = 1, Mg = w->dims[0] / group;
  for (int32_t i = 1; i < w->rank; i++) K *= w->dims[i];
  size_t per = dml_cpu_sgemm_packed_a_floats(Mg, K);
  for (int64_t gr = 0; gr < group; gr++)
    dml_cpu_sgemm_pack_a(0, Mg, K, (const float *)w->data + gr * Mg * K, K,
                         dst + (size_t)gr * per);
  if (cv_prepacks(w, group))
    cv_pack(Mg, K, (const float *)w->data, dst + cv_prepack_at(Mg, K));
  if (wg_prepacks(w, group))
    wg_pack(Mg, w->dims[1], (const float *)w->data, dst + wg_prepack_at(Mg, K));
}

/* ONNX ConvTranspose (11): the gradient of Conv w.r.t. its input; output
 * size s*(in-1) + output_padding + (k-1)*d + 1 - pads, or given by
 * output_shape / auto_pad (pads then follow from the output size). */
dml_status_t dml_cpuk_ConvTranspose(const dml_cpu_call_t *c) {
  return conv_run(c, 1, NULL);
}

/* ---- ConvWeightGrad --------------------------------------------------- */

/* The Conv call whose weight gradient `c` (ConvWeightGrad(dY, X) -> dW)
 * computes: inputs X and a W-shaped tensor, output dY. */
static void wgrad_as_conv(const dml_cpu_call_t *c, dml_cpu_call_t *conv,
                          dml_tensor_t ins[2], dml_tensor_t *outs) {
  *conv = *c;
  ins[0] = c->inputs[1];
  ins[1] = c->outputs[0];
  *outs = c->inputs[0];
  conv->inputs = ins;
  conv->n_inputs = 2;
  conv->outputs = outs;
  conv->n_outputs = 1;
}

static conv_mem_t wgrad_mem(const conv_geo_t *g) {
  conv_mem_t m = {0, 0, 0, 0};
  m.col_bytes = align64((size_t)(g->Cg * g->k_sz * g->out_sz) * 4);
  m.gemm_bytes = align64(dml_cpu_sgemm_scratch(g->Mg, g->Cg * g->k_sz, g->out_sz, 1));
  m.slot_bytes = m.col_bytes + m.gemm_bytes;
  return m;
}

size_t dml_cpus_ConvWeightGrad(const dml_cpu_call_t *c, int threads) {
  (void)threads;
  if (c->inputs[0].dtype != DML_DTYPE_F32) return 0;
  dml_cpu_call_t conv;
  dml_tensor_t ins[2], out;
  wgrad_as_conv(c, &conv, ins, &out);
  conv_geo_t g;
  dml_status_t s = conv_geo(&conv, 0, &g);
  if (s) {
    dml_status_free(s);
    return 0;
  }
  return 64 + wgrad_mem(&g).slot_bytes;
}

/* dW[m, c, k] = sum_{n, o} dY[n, m, o] * X[n, g(m)*Cg + c, o*s - pb + k*d]:
 * the derivative of Conv's sum (ONNX Conv-11) with respect to W. f32: per
 * image and group, im2col of X then dW_g += dY_g * col^T (GEMM); other
 * float dtypes in double. */
dml_status_t dml_cpuk_ConvWeightGrad(const dml_cpu_call_t *c) {
  const dml_tensor_t *dy = &c->inputs[0], *x = &c->inputs[1];
  dml_tensor_t *dw = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  if (!dml_dtype_is_float(dt)) return dml_cpu_err_dtype(c, "X", dt);
  if (dy->dtype != dt || dw->dtype != dt) return dml_cpu_err_dtype(c, "dY/dW", dy->dtype);
  dml_cpu_call_t conv;
  dml_tensor_t ins[2], out;
  wgrad_as_conv(c, &conv, ins, &out);
  conv_geo_t g;
  DML_RETURN_IF_ERROR(conv_geo(&conv, 0, &g));
  int64_t K = g.Cg * g.k_sz, nw = dml_cpu_numel(dw);
  if (dt != DML_DTYPE_F32) {
    /* each dW element summed over (n, o) in double, rounded once to dt (a
     * sum kept in dW itself would round to f16/bf16 at every term) */
    int r = g.r;
    for (int64_t m = 0; m < g.M; m++) {
      int64_t gr = m / g.Mg;
      for (int64_t ch = 0; ch < g.Cg; ch++)
        for (int64_t kk = 0; kk < g.k_sz; kk++) {
          int64_t kidx[SP_MAX], krem = kk;
          for (int i = r - 1; i >= 0; i--) kidx[i] = krem % g.k[i], krem /= g.k[i];
          double acc = 0;
          for (int64_t n = 0; n < g.N; n++)
            for (int64_t o = 0; o < g.out_sz; o++) {
              int64_t oidx[SP_MAX], rem = o, off = 0, inb = 1;
              for (int i = r - 1; i >= 0; i--) oidx[i] = rem % g.out[i], rem /= g.out[i];
              for (int i = 0; i < r && inb; i++) {
                int64_t p = oidx[i] * g.s[i] - g.pb[i] + kidx[i] * g.d[i];
                if (p < 0 || p >= g.in[i]) inb = 0;
                off = off * g.in[i] + p;
              }
              if (!inb) continue;
              size_t xi = (size_t)((n * g.C + gr * g.Cg + ch) * g.in_sz + off);
              acc += dml_load_f64(dt, dy->data, (size_t)((n * g.M + m) * g.out_sz + o)) *
                     dml_load_f64(dt, x->data, xi);
            }
          dml_store_f64(dt, dw->data, (size_t)((m * g.Cg + ch) * g.k_sz + kk), acc);
        }
    }
    return DML_OK;
  }
  float *w = (float *)dw->data;
  if (g.N == 0 || g.out_sz == 0) {
    memset(w, 0, (size_t)nw * sizeof(float));
    return DML_OK;
  }
  conv_mem_t mem = wgrad_mem(&g);
  char *base = (char *)(((uintptr_t)c->scratch + 63) & ~(uintptr_t)63);
  size_t pad = (size_t)(base - (char *)c->scratch);
  if (!c->scratch || c->scratch_bytes < pad + mem.slot_bytes)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "scratch too small");
  float *col = (float *)(void *)base;
  void *gs = base + mem.col_bytes;
  const float *xp = (const float *)x->data, *yp = (const float *)dy->data;
  for (int64_t n = 0; n < g.N; n++)
    for (int64_t gr = 0; gr < g.group; gr++) {
      im2col(&g, xp + (n * g.C + gr * g.Cg) * g.in_sz, col);
      dml_cpu_sgemm(0, 1, g.Mg, K, g.out_sz, 1.0f, yp + (n * g.M + gr * g.Mg) * g.out_sz,
                    g.out_sz, col, g.out_sz, n ? 1.0f : 0.0f, w + gr * g.Mg * K, K, gs,
                    mem.gemm_bytes);
    }
  return DML_OK;
}

/* ---- ConvInputGrad ---------------------------------------------------- */

/* The ConvTranspose call that computes `c` (ConvInputGrad(dY, W, X) ->
 * dX): inputs dY and W, output dX, the forward's strides, dilations and
 * group, its begin pads (explicit, VALID, or SAME from X's run-time
 * extents) and the end pads and output_padding that give X's extents
 * (dml_shape_conv_input_grad_pads). */
typedef struct {
  dml_attr_t a[6];
  int64_t s[SP_MAX], d[SP_MAX], k[SP_MAX], pads[2 * SP_MAX], op[SP_MAX];
} igrad_attrs_t;

static dml_status_t igrad_as_transpose(const dml_cpu_call_t *c, dml_cpu_call_t *t,
                                       igrad_attrs_t *ia) {
  const dml_tensor_t *dy = &c->inputs[0], *w = &c->inputs[1], *x = &c->inputs[2];
  if (x->rank < 3 || x->rank - 2 > SP_MAX || dy->rank != x->rank || w->rank != x->rank ||
      c->outputs[0].rank != x->rank)
    return dml_cpu_err_shapes(c, "dY, W, X and dX must have one rank in [3, %d]",
                              SP_MAX + 2);
  for (int32_t i = 0; i < x->rank; i++)
    if (c->outputs[0].dims[i] != x->dims[i])
      return dml_cpu_err_shapes(c, "dX must have X's shape");
  int r = x->rank - 2;
  size_t ns, nd, np;
  const int64_t *st = dml_cpu_get_ints(c, "strides", &ns);
  const int64_t *dl = dml_cpu_get_ints(c, "dilations", &nd);
  const int64_t *pads = dml_cpu_get_ints(c, "pads", &np);
  if ((st && ns != (size_t)r) || (dl && nd != (size_t)r) || (pads && np != 2 * (size_t)r))
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "strides/dilations/pads have the wrong length for %d spatial "
                         "dims",
                         r);
  const char *ap = dml_cpu_get_string(c, "auto_pad", "NOTSET");
  int same_upper = !strcmp(ap, "SAME_UPPER"), same_lower = !strcmp(ap, "SAME_LOWER");
  int valid = !strcmp(ap, "VALID");
  if (!same_upper && !same_lower && !valid && strcmp(ap, "NOTSET"))
    return dml_cpu_error(c, DML_STATUS_UNIMPLEMENTED, "auto_pad '%s' is not supported",
                         ap);
  for (int i = 0; i < r; i++) {
    ia->s[i] = st ? st[i] : 1;
    ia->d[i] = dl ? dl[i] : 1;
    ia->k[i] = w->dims[2 + i];
    if (ia->s[i] < 1 || ia->d[i] < 1 || ia->k[i] < 1)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "strides, dilations and kernel dims must be >= 1");
    int64_t ek = (ia->k[i] - 1) * ia->d[i] + 1, in = x->dims[2 + i];
    int64_t pb = same_upper || same_lower
                     ? dml_shape_same_pad_begin(in, ek, ia->s[i], same_upper, NULL)
                 : valid ? 0
                 : pads  ? pads[i]
                         : 0;
    ia->pads[i] = pb;
    dml_shape_conv_input_grad_pads(in, dy->dims[2 + i], ek, ia->s[i], pb,
                                   &ia->pads[r + i], &ia->op[i]);
  }
  static const char *const names[5] = {"strides", "dilations", "kernel_shape", "pads",
                                       "output_padding"};
  const int64_t *vals[5] = {ia->s, ia->d, ia->k, ia->pads, ia->op};
  memset(ia->a, 0, sizeof ia->a);
  for (int j = 0; j < 5; j++) {
    ia->a[j].name = names[j];
    ia->a[j].kind = DML_ATTR_INTS;
    ia->a[j].ints = vals[j];
    ia->a[j].n = j == 3 ? 2 * (size_t)r : (size_t)r;
  }
  ia->a[5].name = "group";
  ia->a[5].kind = DML_ATTR_INT;
  ia->a[5].i = dml_cpu_get_int(c, "group", 1);
  *t = *c;
  t->n_inputs = 2; /* dY, W: X gave its dims */
  t->attrs = ia->a;
  t->n_attrs = 6;
  return DML_OK;
}

size_t dml_cpus_ConvInputGrad(const dml_cpu_call_t *c, int threads) {
  dml_cpu_call_t t;
  igrad_attrs_t ia;
  dml_status_t s = igrad_as_transpose(c, &t, &ia);
  if (s) {
    dml_status_free(s);
    return 0;
  }
  return conv_scratch(&t, 1, threads);
}

/* dX[n, c, i] = sum_{m, o, k: i = o*s - pb + k*d} dY[n, m, o] * W[m, c, k]:
 * the derivative of Conv's sum (ONNX Conv-11) with respect to X, run as the
 * ConvTranspose of igrad_as_transpose (its f32 GEMM + col2im path, other
 * float dtypes in double). */
dml_status_t dml_cpuk_ConvInputGrad(const dml_cpu_call_t *c) {
  dml_cpu_call_t t;
  igrad_attrs_t ia;
  DML_RETURN_IF_ERROR(igrad_as_transpose(c, &t, &ia));
  return conv_run(&t, 1, NULL);
}
