/*
 * cpu_sample.c — GridSample (ONNX opset 16) and RoiAlign (opset 16; the
 * opset-10 form is imported with coordinate_transformation_mode
 * "output_half_pixel"). Float dtypes; computed in double.
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
 * GridSample (ONNX opset 16): X [N,C,H,W], grid [N,Ho,Wo,2] of normalized
 * (x, y) in [-1, 1]; Y [N,C,Ho,Wo]. Modes bilinear, nearest (round half to
 * even), bicubic (Keys, A = -0.75); padding_mode zeros, border, reflection;
 * align_corners. Follows the spec's reference implementation: out-of-bound
 * locations are first clamped (border) or reflected (reflection), and
 * pixels read outside the image then use the same padding rule.
 * ====================================================================== */

typedef struct gs {
  const dml_tensor_t *x;
  int64_t H, W, base;
  int pad;          /* 0 zeros, 1 border, 2 reflection */
  double border[4]; /* x_min, y_min, x_max, y_max */
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

static double gs_pixel(const gs_t *g, int64_t r, int64_t col) {
  if (g->pad == 0) {
    if (col < 0 || col >= g->W || r < 0 || r >= g->H) return 0;
  } else if (g->pad == 1) {
    col = col < 0 ? 0 : col >= g->W ? g->W - 1 : col;
    r = r < 0 ? 0 : r >= g->H ? g->H - 1 : r;
  } else {
    col = (int64_t)gs_reflect((double)col, g->border[0], g->border[2]);
    r = (int64_t)gs_reflect((double)r, g->border[1], g->border[3]);
    col = col < 0 ? 0 : col >= g->W ? g->W - 1 : col;
    r = r < 0 ? 0 : r >= g->H ? g->H - 1 : r;
  }
  return ldf(g->x, g->base + r * g->W + col);
}

static void cubic_coeffs(double x, double *cf) {
  const double A = -0.75;
  x = fabs(x);
  cf[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
  cf[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
  cf[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
  cf[3] = ((A * (2 - x) - 5 * A) * (2 - x) + 8 * A) * (2 - x) - 4 * A;
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
  if (x->rank != 4 || grid->rank != 4 || grid->dims[0] != x->dims[0] ||
      grid->dims[3] != 2)
    return dml_cpu_err_shapes(c, "X must be [N,C,H,W] and grid [N,Ho,Wo,2] (2-D only)");
  int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
  int64_t Ho = grid->dims[1], Wo = grid->dims[2];
  int64_t ed[4] = {N, C, Ho, Wo};
  if (y->rank != 4 || memcmp(y->dims, ed, sizeof ed))
    return dml_cpu_err_shapes(c, "output dims must be [N,C,Ho,Wo]");
  if (dml_cpu_numel(y) == 0) return DML_OK;
  if (H == 0 || W == 0) return dml_cpu_err_shapes(c, "X has an empty spatial dim");
  gs_t g;
  g.x = x, g.H = H, g.W = W, g.pad = pad;
  double xmin = align ? 0 : -0.5, xmax = align ? (double)W - 1 : (double)W - 0.5;
  double ymin = align ? 0 : -0.5, ymax = align ? (double)H - 1 : (double)H - 0.5;
  g.border[0] = xmin, g.border[1] = ymin, g.border[2] = xmax, g.border[3] = ymax;
  for (int64_t n = 0; n < N; n++)
    for (int64_t ch = 0; ch < C; ch++) {
      g.base = (n * C + ch) * H * W;
      for (int64_t oy = 0; oy < Ho; oy++)
        for (int64_t ox = 0; ox < Wo; ox++) {
          int64_t gi = ((n * Ho + oy) * Wo + ox) * 2;
          double nx = ldf(grid, gi), ny = ldf(grid, gi + 1);
          double fx =
              align ? (nx + 1) / 2 * (double)(W - 1) : ((nx + 1) * (double)W - 1) / 2;
          double fy =
              align ? (ny + 1) / 2 * (double)(H - 1) : ((ny + 1) * (double)H - 1) / 2;
          if (md == 1) fx = nearbyint(fx), fy = nearbyint(fy);
          if (fx < xmin || fx > xmax || fy < ymin || fy > ymax) {
            if (pad == 1) {
              fx = fx < 0 ? 0 : fx > (double)(W - 1) ? (double)(W - 1) : fx;
              fy = fy < 0 ? 0 : fy > (double)(H - 1) ? (double)(H - 1) : fy;
            } else if (pad == 2) {
              fx = gs_reflect(fx, xmin, xmax);
              fy = gs_reflect(fy, ymin, ymax);
            }
          }
          double v;
          if (!isfinite(fx) || !isfinite(fy)) {
            v = NAN;
          } else if (md == 1) {
            v = gs_pixel(&g, (int64_t)fy, (int64_t)fx);
          } else if (md == 0) {
            int64_t x1 = (int64_t)floor(fx), y1 = (int64_t)floor(fy);
            int64_t x2 = x1 + 1, y2 = y1 + 1;
            double p11 = gs_pixel(&g, y1, x1), p12 = gs_pixel(&g, y1, x2);
            double p21 = gs_pixel(&g, y2, x1), p22 = gs_pixel(&g, y2, x2);
            double dx2 = (double)x2 - fx, dx1 = fx - (double)x1;
            double dy2 = (double)y2 - fy, dy1 = fy - (double)y1;
            v = dy2 * (dx2 * p11 + dx1 * p12) + dy1 * (dx2 * p21 + dx1 * p22);
          } else {
            int64_t x0 = (int64_t)floor(fx) - 1, y0 = (int64_t)floor(fy) - 1;
            double cx[4], cy[4], rows[4];
            cubic_coeffs(fx - (double)x0 - 1, cx);
            cubic_coeffs(fy - (double)y0 - 1, cy);
            for (int h = 0; h < 4; h++) {
              rows[h] = 0;
              for (int w = 0; w < 4; w++) rows[h] += cx[w] * gs_pixel(&g, y0 + h, x0 + w);
            }
            v = cy[0] * rows[0] + cy[1] * rows[1] + cy[2] * rows[2] + cy[3] * rows[3];
          }
          stf(y, ((n * C + ch) * Ho + oy) * Wo + ox, v);
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
