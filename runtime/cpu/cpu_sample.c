/*
 * cpu_sample.c — GridSample (ONNX opsets 16, 20: N-D), AffineGrid (opset
 * 20) and RoiAlign (opset 16; the opset-10 form is imported with
 * coordinate_transformation_mode "output_half_pixel"). Float dtypes;
 * computed in double.
 */
#include <math.h>
#include <string.h>

#include "cpu_index.h"

static inline double ldf(const dml_tensor_t *t, int64_t i) {
  return t->dtype == DML_DTYPE_F32 ? (double)((const float *)t->data)[i]
                                   : dml_load_f64(t->dtype, t->data, (size_t)i);
}
static inline void stf(dml_tensor_t *t, int64_t i, double v) {
  if (t->dtype == DML_DTYPE_F32)
    ((float *)t->data)[i] = (float)v;
  else
    dml_store_f64(t->dtype, t->data, (size_t)i, v);
}

/* ======================================================================
 * GridSample (ONNX opsets 16 and 20): X [N,C,D1..Dr], grid [N,O1..Or,r]
 * of normalized coordinates in [-1, 1], innermost dim first ((x, y) for
 * 2-D, (x, y, z) for 3-D); Y [N,C,O1..Or]. Modes linear (bilinear),
 * nearest (round half to even), cubic (bicubic: Keys, A = -0.75, per dim);
 * padding_mode zeros, border, reflection; align_corners. Follows the
 * spec's reference implementation (onnx/reference/ops/op_grid_sample.py)
 * but for one edge: a location outside in any dim is clamped (border) in
 * every dim, as before opset 20 and as the GPU kernels do (ONNX 1.23's
 * reference clamps only the dims outside; they differ for a coordinate in
 * [-0.5, 0) or (n-1, n-0.5) without align_corners, with bicubic); samples
 * read outside the image then use the same padding rule per dim (zeros: a
 * sample with any index outside is 0).
 * Linear and cubic interpolation are separable, so the result is the sum
 * over the 2^r (4^r) taps of the product of the per-dim weights.
 * ====================================================================== */

#define GS_MAX_R (DML_MAX_RANK - 2)

typedef struct gs {
  const dml_tensor_t *x;
  int r;                 /* spatial rank */
  int64_t ext[GS_MAX_R]; /* spatial extents D1..Dr */
  int64_t base;
  int pad; /* 0 zeros, 1 border, 2 reflection */
  double lo[GS_MAX_R], hi[GS_MAX_R];
} gs_t;

static double gs_reflect(double x, double lo, double hi) {
  double rng = hi - lo;
  if (x < lo) {
    double dx = lo - x;
    int64_t n = (int64_t)(dx / rng);
    double r = dx - (double)n * rng;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    double dx = x - hi;
    int64_t n = (int64_t)(dx / rng);
    double r = dx - (double)n * rng;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

/* The sample at spatial index idx[0..r-1] (outermost first), padded. */
static double gs_pixel(const gs_t *g, const int64_t *idx) {
  int64_t off = 0;
  for (int d = 0; d < g->r; d++) {
    int64_t i = idx[d], n = g->ext[d];
    if (g->pad == 0) {
      if (i < 0 || i >= n) return 0;
    } else {
      if (g->pad == 2) i = (int64_t)gs_reflect((double)i, g->lo[d], g->hi[d]);
      i = i < 0 ? 0 : i >= n ? n - 1 : i;
    }
    off = off * n + i;
  }
  return ldf(g->x, g->base + off);
}

static void cubic_coeffs(double x, double *cf) {
  const double A = -0.75;
  x = fabs(x);
  cf[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
  cf[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
  cf[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
  cf[3] = ((A * (2 - x) - 5 * A) * (2 - x) + 8 * A) * (2 - x) - 4 * A;
}

/* The value at the denormalized location f[0..r-1] (outermost first) in
 * mode md (0 linear, 1 nearest, 2 cubic), after the border handling. */
static double gs_sample(const gs_t *g, int md, const double *f) {
  int r = g->r;
  int64_t idx[GS_MAX_R], i0[GS_MAX_R];
  for (int d = 0; d < r; d++)
    if (!isfinite(f[d])) return NAN;
  if (md == 1) {
    for (int d = 0; d < r; d++) idx[d] = (int64_t)f[d];
    return gs_pixel(g, idx);
  }
  int taps = md == 0 ? 2 : 4;
  double w[GS_MAX_R][4];
  for (int d = 0; d < r; d++) {
    double fl = floor(f[d]);
    if (md == 0) {
      i0[d] = (int64_t)fl;
      w[d][0] = fl + 1 - f[d];
      w[d][1] = f[d] - fl;
    } else {
      i0[d] = (int64_t)fl - 1;
      cubic_coeffs(f[d] - fl, w[d]);
    }
  }
  int64_t total = 1;
  for (int d = 0; d < r; d++) total *= taps;
  double v = 0;
  for (int64_t t = 0; t < total; t++) {
    double wt = 1;
    int64_t rem = t;
    for (int d = r - 1; d >= 0; d--) {
      int k = (int)(rem % taps);
      rem /= taps;
      idx[d] = i0[d] + k;
      wt *= w[d][k];
    }
    v += wt * gs_pixel(g, idx);
  }
  return v;
}

dml_status_t dml_cpuk_GridSample(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0], *grid = &c->inputs[1];
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  if (!dml_dtype_is_float(dt)) return dml_cpu_err_dtype(c, "X", dt);
  if (!dml_dtype_is_float(grid->dtype)) return dml_cpu_err_dtype(c, "grid", grid->dtype);
  if (y->dtype != dt) return dml_cpu_err_dtype(c, "output", y->dtype);
  const char *mode = dml_cpu_get_string(c, "mode", "bilinear");
  const char *pm = dml_cpu_get_string(c, "padding_mode", "zeros");
  int align = dml_cpu_get_int(c, "align_corners", 0) != 0;
  int md = !strcmp(mode, "bilinear") || !strcmp(mode, "linear") ? 0
           : !strcmp(mode, "nearest")                           ? 1
           : !strcmp(mode, "bicubic") || !strcmp(mode, "cubic") ? 2
                                                                : -1;
  int pad = !strcmp(pm, "zeros")        ? 0
            : !strcmp(pm, "border")     ? 1
            : !strcmp(pm, "reflection") ? 2
                                        : -1;
  if (md < 0)
    return dml_cpu_error(c, DML_STATUS_UNIMPLEMENTED, "mode '%s' is not supported", mode);
  if (pad < 0)
    return dml_cpu_error(c, DML_STATUS_UNIMPLEMENTED,
                         "padding_mode '%s' is not supported", pm);
  int r = x->rank - 2;
  if (r < 1 || r > GS_MAX_R || grid->rank != x->rank || grid->dims[0] != x->dims[0] ||
      grid->dims[r + 1] != r)
    return dml_cpu_err_shapes(c, "X must be [N,C,D1..Dr] and grid [N,O1..Or,r]");
  int64_t N = x->dims[0], C = x->dims[1], in_sp = 1, out_sp = 1;
  int64_t ed[DML_MAX_RANK];
  ed[0] = N, ed[1] = C;
  gs_t g;
  g.x = x, g.r = r, g.pad = pad;
  for (int d = 0; d < r; d++) {
    g.ext[d] = x->dims[2 + d];
    in_sp *= g.ext[d];
    ed[2 + d] = grid->dims[1 + d];
    out_sp *= ed[2 + d];
    g.lo[d] = align ? 0 : -0.5;
    g.hi[d] = align ? (double)g.ext[d] - 1 : (double)g.ext[d] - 0.5;
  }
  if (y->rank != x->rank || memcmp(y->dims, ed, sizeof(int64_t) * (size_t)x->rank))
    return dml_cpu_err_shapes(c, "output dims must be [N,C,O1..Or]");
  if (dml_cpu_numel(y) == 0) return DML_OK;
  if (in_sp == 0) return dml_cpu_err_shapes(c, "X has an empty spatial dim");
  for (int64_t n = 0; n < N; n++)
    for (int64_t ch = 0; ch < C; ch++) {
      g.base = (n * C + ch) * in_sp;
      for (int64_t o = 0; o < out_sp; o++) {
        int64_t gi = (n * out_sp + o) * r;
        double f[GS_MAX_R];
        int inside = 1;
        for (int d = 0; d < r; d++) {
          /* grid component j is spatial dim r-1-j */
          double nv = ldf(grid, gi + (r - 1 - d)), len = (double)g.ext[d];
          double v = align ? (nv + 1) / 2 * (len - 1) : ((nv + 1) * len - 1) / 2;
          if (md == 1) v = nearbyint(v);
          f[d] = v;
          if (v < g.lo[d] || v > g.hi[d]) inside = 0;
        }
        /* A location outside in any dim is clamped (border) or reflected
         * in every dim (as before opset 20's N-D form, and as the GPU
         * kernels do; reflection leaves inside coordinates unchanged) */
        if (!inside)
          for (int d = 0; d < r; d++) {
            if (pad == 1)
              f[d] = f[d] < 0                        ? 0
                     : f[d] > (double)(g.ext[d] - 1) ? (double)(g.ext[d] - 1)
                                                     : f[d];
            else if (pad == 2)
              f[d] = gs_reflect(f[d], g.lo[d], g.hi[d]);
          }
        stf(y, (n * C + ch) * out_sp + o, gs_sample(&g, md, f));
      }
    }
  return DML_OK;
}

/* ======================================================================
 * RoiAlign (ONNX opset 16): X [N,C,H,W], rois [R,4] (x1,y1,x2,y2 in input
 * coordinates before spatial_scale), batch_indices [R]; Y [R,C,oh,ow].
 * Each bin averages (mode avg) or takes the max (mode max) of
 * sampling_ratio^2 bilinear samples (adaptive ceil(roi/bins) when 0).
 * coordinate_transformation_mode half_pixel shifts by -0.5;
 * output_half_pixel (opset 10) does not, and widens rois to >= 1. The
 * sample rule (clamping near the border, zero outside [-1, H] x [-1, W])
 * and max mode (the max of the four weighted corner terms) follow the
 * spec's reference implementation.
 * ====================================================================== */

dml_status_t dml_cpuk_RoiAlign(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0], *rois = &c->inputs[1], *bi = &c->inputs[2];
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  if (!dml_dtype_is_float(dt)) return dml_cpu_err_dtype(c, "X", dt);
  if (!dml_dtype_is_float(rois->dtype)) return dml_cpu_err_dtype(c, "rois", rois->dtype);
  if (bi->dtype != DML_DTYPE_I64 && bi->dtype != DML_DTYPE_I32)
    return dml_cpu_err_dtype(c, "batch_indices", bi->dtype);
  if (y->dtype != dt) return dml_cpu_err_dtype(c, "output", y->dtype);
  const char *mode = dml_cpu_get_string(c, "mode", "avg");
  const char *ctm = dml_cpu_get_string(c, "coordinate_transformation_mode", "half_pixel");
  int is_max = !strcmp(mode, "max");
  if (!is_max && strcmp(mode, "avg"))
    return dml_cpu_error(c, DML_STATUS_UNIMPLEMENTED, "mode '%s' is not supported", mode);
  int half = !strcmp(ctm, "half_pixel");
  if (!half && strcmp(ctm, "output_half_pixel"))
    return dml_cpu_error(c, DML_STATUS_UNIMPLEMENTED,
                         "coordinate_transformation_mode '%s' is not supported", ctm);
  int64_t oh = dml_cpu_get_int(c, "output_height", 1),
          ow = dml_cpu_get_int(c, "output_width", 1);
  int64_t sr = dml_cpu_get_int(c, "sampling_ratio", 0);
  double scale = dml_cpu_get_float(c, "spatial_scale", 1.0);
  if (x->rank != 4 || rois->rank != 2 || rois->dims[1] != 4 || bi->rank != 1 ||
      bi->dims[0] != rois->dims[0] || oh < 1 || ow < 1 || sr < 0)
    return dml_cpu_err_shapes(c, "X must be [N,C,H,W], rois [R,4], batch_indices [R]");
  int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3],
          R = rois->dims[0];
  int64_t ed[4] = {R, C, oh, ow};
  if (y->rank != 4 || memcmp(y->dims, ed, sizeof ed))
    return dml_cpu_err_shapes(c, "output dims must be [R,C,output_height,output_width]");
  double off = half ? 0.5 : 0.0;
  for (int64_t r = 0; r < R; r++) {
    int64_t b = dml_load_i64(bi->dtype, bi->data, (size_t)r);
    if (b < 0 || b >= N)
      return dml_cpu_error(c, DML_STATUS_OUT_OF_RANGE,
                           "batch_indices[%lld] = %lld is out of range [0, %lld)",
                           (long long)r, (long long)b, (long long)N);
    double x1 = ldf(rois, r * 4) * scale - off, y1 = ldf(rois, r * 4 + 1) * scale - off;
    double x2 = ldf(rois, r * 4 + 2) * scale - off,
           y2 = ldf(rois, r * 4 + 3) * scale - off;
    double rw = x2 - x1, rh = y2 - y1;
    if (!half) {
      rw = rw > 1 ? rw : 1;
      rh = rh > 1 ? rh : 1;
    }
    double bh = rh / (double)oh, bw = rw / (double)ow;
    int64_t gh = sr > 0 ? sr : (int64_t)ceil(rh / (double)oh);
    int64_t gw = sr > 0 ? sr : (int64_t)ceil(rw / (double)ow);
    if (gh < 0) gh = 0;
    if (gw < 0) gw = 0;
    double count = (double)(gh * gw > 1 ? gh * gw : 1);
    for (int64_t ch = 0; ch < C; ch++) {
      int64_t base = (b * C + ch) * H * W;
      for (int64_t ph = 0; ph < oh; ph++)
        for (int64_t pw = 0; pw < ow; pw++) {
          double acc = 0;
          int have = 0;
          for (int64_t iy = 0; iy < gh; iy++) {
            double yy = y1 + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
            for (int64_t ix = 0; ix < gw; ix++) {
              double xx = x1 + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
              double w1 = 0, w2 = 0, w3 = 0, w4 = 0;
              int64_t p1 = 0, p2 = 0, p3 = 0, p4 = 0;
              if (!(yy < -1.0 || yy > (double)H || xx < -1.0 || xx > (double)W) &&
                  H > 0 && W > 0) {
                double sy = yy <= 0 ? 0 : yy, sx = xx <= 0 ? 0 : xx;
                int64_t yl = (int64_t)sy, xl = (int64_t)sx, yh, xh;
                if (yl >= H - 1)
                  yh = yl = H - 1, sy = (double)yl;
                else
                  yh = yl + 1;
                if (xl >= W - 1)
                  xh = xl = W - 1, sx = (double)xl;
                else
                  xh = xl + 1;
                double ly = sy - (double)yl, lx = sx - (double)xl, hy = 1 - ly,
                       hx = 1 - lx;
                w1 = hy * hx, w2 = hy * lx, w3 = ly * hx, w4 = ly * lx;
                p1 = yl * W + xl, p2 = yl * W + xh, p3 = yh * W + xl, p4 = yh * W + xh;
              }
              double v1 = w1 ? w1 * ldf(x, base + p1) : 0,
                     v2 = w2 ? w2 * ldf(x, base + p2) : 0;
              double v3 = w3 ? w3 * ldf(x, base + p3) : 0,
                     v4 = w4 ? w4 * ldf(x, base + p4) : 0;
              if (!is_max) {
                acc += v1 + v2 + v3 + v4;
              } else {
                double m = fmax(fmax(v1, v2), fmax(v3, v4));
                acc = have ? fmax(acc, m) : m;
                have = 1;
              }
            }
          }
          stf(y, ((r * C + ch) * oh + ph) * ow + pw, is_max ? acc : acc / count);
        }
    }
  }
  return DML_OK;
}

/* ======================================================================
 * AffineGrid (ONNX opset 20): theta [N, k, k+1] (k = 2 or 3 spatial dims),
 * size [N, C, (D,) H, W]; grid [N, (D,) H, W, k] = theta[n] times the
 * homogeneous coordinates (x_w, y_h, (z_d,) 1) with, along a dim of extent
 * m, coordinate i at -1 + i * 2 / (m - 1) (align_corners) or
 * -1 + 1 / m + i * 2 / m (the spec's reference: start + i * step).
 * Computed in double.
 * ====================================================================== */
static double ag_coord(int64_t i, int64_t m, int align) {
  if (align) return -1.0 + (double)i * (2.0 / (double)(m - 1)); /* m = 1: -1 */
  double step = 2.0 / (double)m;
  return -1.0 + step / 2 + (double)i * step;
}

dml_status_t dml_cpuk_AffineGrid(const dml_cpu_call_t *c) {
  const dml_tensor_t *th = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  if (!dml_dtype_is_float(th->dtype)) return dml_cpu_err_dtype(c, "theta", th->dtype);
  if (y->dtype != th->dtype) return dml_cpu_err_dtype(c, "output", y->dtype);
  int64_t s[5];
  int64_t n = dml_cpu_read_ints(&c->inputs[1], s, 5);
  int k = (int)n - 2;
  if ((n != 4 && n != 5) || th->rank != 3 || th->dims[1] != k || th->dims[2] != k + 1 ||
      th->dims[0] != s[0])
    return dml_cpu_err_shapes(c,
                              "theta must be [N,2,3] with size [N,C,H,W] or [N,3,4] "
                              "with size [N,C,D,H,W]");
  int64_t ext[3] = {1, 1, 1}; /* D, H, W */
  for (int i = 0; i < k; i++) ext[3 - k + i] = s[2 + i];
  if (y->rank != k + 2 || y->dims[0] != s[0] || y->dims[k + 1] != k)
    return dml_cpu_err_shapes(c, "output must be [N, spatial..., %d]", k);
  for (int i = 0; i < k; i++)
    if (y->dims[1 + i] != s[2 + i] || s[2 + i] < 0)
      return dml_cpu_err_shapes(c, "output dims differ from size");
  int align = dml_cpu_get_int(c, "align_corners", 0) != 0;
  int64_t N = s[0], o = 0;
  for (int64_t b = 0; b < N; b++) {
    double t[12];
    for (int i = 0; i < k * (k + 1); i++) t[i] = ldf(th, b * k * (k + 1) + i);
    for (int64_t d = 0; d < ext[0]; d++)
      for (int64_t h = 0; h < ext[1]; h++)
        for (int64_t w = 0; w < ext[2]; w++) {
          double v[4] = {ag_coord(w, ext[2], align), ag_coord(h, ext[1], align),
                         k == 3 ? ag_coord(d, ext[0], align) : 1.0, 1.0};
          for (int j = 0; j < k; j++) {
            double acc = 0;
            for (int q = 0; q <= k; q++) acc += t[j * (k + 1) + q] * v[q];
            stf(y, o++, acc);
          }
        }
  }
  return DML_OK;
}

/* ======================================================================
 * DeformConv (ONNX opset 19, 2-D): Y[n, o, i, j] = B[o] + sum over the
 * input channels c of o's group and the taps (a, b) of
 * W[o, c', a, b] * mask[n, g, a, b, i, j] * X[n, c](h, w), h = i * sH -
 * pT + a * dH + offset[n, g, a, b, 0, i, j], w likewise with offset
 * component 1 (g = c's offset group; offset is [N, og, kH, kW, 2, oH, oW],
 * mask [N, og, kH, kW, oH, oW], 1 when absent), X(h, w) bilinear with
 * zero outside (the spec reference: GridSample, zeros, align_corners).
 * Computed in double.
 * ====================================================================== */
dml_status_t dml_cpuk_DeformConv(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0], *w = &c->inputs[1], *off = &c->inputs[2];
  const dml_tensor_t *b = dml_cpu_in(c, 3), *mk = dml_cpu_in(c, 4);
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  if (!dml_dtype_is_float(dt)) return dml_cpu_err_dtype(c, "X", dt);
  if (w->dtype != dt || off->dtype != dt || y->dtype != dt || (b && b->dtype != dt) ||
      (mk && mk->dtype != dt))
    return dml_cpu_err_dtype(c, "operands", w->dtype);
  if (x->rank != 4 || w->rank != 4 || off->rank != 4 || y->rank != 4)
    return dml_cpu_err_shapes(c, "X, W, offset and Y must be 4-D (2-D DeformConv)");
  int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], Wd = x->dims[3];
  int64_t O = w->dims[0], kH = w->dims[2], kW = w->dims[3];
  int64_t oH = off->dims[2], oW = off->dims[3];
  int64_t group = dml_cpu_get_int(c, "group", 1),
          og = dml_cpu_get_int(c, "offset_group", 1);
  int64_t dil[2] = {1, 1}, str[2] = {1, 1}, pads[4] = {0, 0, 0, 0};
  size_t na;
  const int64_t *a;
  if ((a = dml_cpu_get_ints(c, "dilations", &na)) && na == 2)
    dil[0] = a[0], dil[1] = a[1];
  if ((a = dml_cpu_get_ints(c, "strides", &na)) && na == 2) str[0] = a[0], str[1] = a[1];
  if ((a = dml_cpu_get_ints(c, "pads", &na)) && na == 4)
    for (int i = 0; i < 4; i++) pads[i] = a[i];
  if (group < 1 || og < 1 || C != w->dims[1] * group || O % group || C % og ||
      off->dims[0] != N || off->dims[1] != og * 2 * kH * kW ||
      (b && dml_cpu_numel(b) != O) ||
      (mk && (mk->rank != 4 || mk->dims[0] != N || mk->dims[1] != og * kH * kW ||
              mk->dims[2] != oH || mk->dims[3] != oW)) ||
      y->dims[0] != N || y->dims[1] != O || y->dims[2] != oH || y->dims[3] != oW)
    return dml_cpu_err_shapes(c,
                              "operand shapes disagree with group %lld, offset_group "
                              "%lld",
                              (long long)group, (long long)og);
  int64_t cpg = C / group, opg = O / group, cpog = C / og, kk = kH * kW;
  gs_t g;
  g.x = x, g.r = 2, g.pad = 0;
  g.ext[0] = H, g.ext[1] = Wd;
  g.lo[0] = g.lo[1] = 0, g.hi[0] = (double)H - 1, g.hi[1] = (double)Wd - 1;
  for (int64_t n = 0; n < N; n++)
    for (int64_t o = 0; o < O; o++) {
      int64_t gr = o / opg;
      for (int64_t i = 0; i < oH; i++)
        for (int64_t j = 0; j < oW; j++) {
          double acc = b ? ldf(b, o) : 0.0;
          for (int64_t cc = 0; cc < cpg; cc++) {
            int64_t ch = gr * cpg + cc, ogi = ch / cpog;
            g.base = (n * C + ch) * H * Wd;
            for (int64_t ka = 0; ka < kH; ka++)
              for (int64_t kb = 0; kb < kW; kb++) {
                int64_t t = ka * kW + kb;
                int64_t oo = ((n * og + ogi) * kk + t) * 2;
                double f[2];
                f[0] = (double)(i * str[0] - pads[0] + ka * dil[0]) +
                       ldf(off, (oo * oH + i) * oW + j);
                f[1] = (double)(j * str[1] - pads[1] + kb * dil[1]) +
                       ldf(off, ((oo + 1) * oH + i) * oW + j);
                double m =
                    mk ? ldf(mk, (((n * og + ogi) * kk + t) * oH + i) * oW + j) : 1.0;
                double v = gs_sample(&g, 0, f);
                acc += ldf(w, ((o * cpg + cc) * kH + ka) * kW + kb) * m * v;
              }
          }
          stf(y, ((n * O + o) * oH + i) * oW + j, acc);
        }
    }
  return DML_OK;
}
