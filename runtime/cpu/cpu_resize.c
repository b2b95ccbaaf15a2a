/*
 * cpu_resize.c — Resize (ONNX opset 13; opset 18/19's half_pixel_symmetric
 * and `axes` accepted), N-D: modes nearest (every nearest_mode), linear (separable
 * N-linear) and cubic (cubic_coeff_a, exclude_outside); every
 * coordinate_transformation_mode including tf_crop_and_resize (roi,
 * extrapolation_value) and opset 11's tf_half_pixel_for_nn. The output
 * dims are the caller's; the scale per dim comes from `scales` when given,
 * else output/input. The resized length in the coordinate formulas is
 * scale * input length, unrounded when `scales` is given (the ONNX
 * reference implementation's `output_width`; the output has its floor).
 *
 * Each output coordinate of each dim gets up to 4 taps (input index,
 * weight) in scratch; an output element is the sum over the product of its
 * dims' taps. Out-of-range neighbours take the edge value, as in the ONNX
 * reference implementation. antialias (opset 18) stretches the linear and
 * cubic filters when downscaling (resize_antialias).
 */
#include <math.h>
#include <string.h>

#include "cpu_internal.h"

#define TAPS 4

typedef struct {
  int64_t idx[TAPS];
  double w[TAPS];
} tap_t;

static size_t taps_bytes(const dml_cpu_call_t *c) {
  int64_t s = 0;
  for (int32_t d = 0; d < c->outputs[0].rank; d++) s += c->outputs[0].dims[d];
  return s > 0 ? (size_t)s * sizeof(tap_t) : 0;
}

size_t dml_cpus_Resize(const dml_cpu_call_t *c, int threads) {
  return taps_bytes(c);
}

enum {
  CT_HALF_PIXEL,
  CT_HALF_PIXEL_SYM,
  CT_PYTORCH,
  CT_ALIGN,
  CT_ASYM,
  CT_TF_CROP,
  CT_TF_HALF_NN
};
enum { NM_ROUND_FLOOR, NM_ROUND_CEIL, NM_FLOOR, NM_CEIL };
enum { M_NEAREST, M_LINEAR, M_CUBIC };

static void cubic_coeffs(double t, double A, double *c) {
  double x;
  x = t + 1;
  c[0] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
  x = t;
  c[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
  x = 1 - t;
  c[2] = ((A + 2) * x - (A + 3)) * x * x + 1;
  x = 2 - t;
  c[3] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
}

/* The input coordinate of output index o along a dim (input extent in,
 * output out, scale s, resized length len, roi [rs, re] for
 * tf_crop_and_resize): the spec's coordinate_transformation_mode formulas. */
static double src_coord(int ct, int64_t o, double s, int64_t in, int64_t out, double len,
                        double rs, double re) {
  switch (ct) {
    case CT_HALF_PIXEL: return ((double)o + 0.5) / s - 0.5;
    case CT_HALF_PIXEL_SYM: {
      double adj = (double)out / (s * (double)in);
      double off = (double)in / 2.0 * (1.0 - adj);
      return off + ((double)o + 0.5) / s - 0.5;
    }
    case CT_PYTORCH: return len > 1 ? ((double)o + 0.5) / s - 0.5 : 0.0;
    case CT_ALIGN: return len == 1 ? 0.0 : (double)o * (double)(in - 1) / (len - 1);
    case CT_ASYM: return (double)o / s;
    case CT_TF_HALF_NN: return ((double)o + 0.5) / s;
    default:
      return len > 1 ? rs * (double)(in - 1) +
                           (double)o * (re - rs) * (double)(in - 1) / (len - 1)
                     : 0.5 * (rs + re) * (double)(in - 1);
  }
}

/* Most taps per dim of the antialiased filters (2 * ceil(2 / scale) for
 * cubic): scales down to 1/32. */
#define AA_TAPS 128

/* Resize-18 antialias=1, linear and cubic: per dim, with scale s' =
 * min(scale, 1), the filter is stretched by 1/s' (the spec's reference,
 * onnx/reference/ops/op_resize.py): around x (ratio = x - floor(x), or 1
 * when x is an integer, base = x - ratio) the n = 2 - 2 * start taps at
 * base + start + k, start = floor(-1/s') + 1 (linear) or floor(-2/s') + 1
 * (cubic), weigh max(0, 1 - |t|) (linear) or the Keys cubic of A at
 * t = (start + k - ratio) * s', normalized to sum 1 (exclude_outside then
 * drops taps outside the input and normalizes again); samples outside
 * take the edge value. An output element is the sum over the product of
 * its dims' taps. */
static dml_status_t resize_antialias(const dml_cpu_call_t *c, int mode, int ct,
                                     const double *sc, const double *rs, const double *re,
                                     int have_scales, double A, int excl, double extrap) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  int32_t r = x->rank;
  dml_dtype_t dt = x->dtype;
  int64_t ti[DML_MAX_RANK][AA_TAPS];
  double tw[DML_MAX_RANK][AA_TAPS];
  int nt[DML_MAX_RANK];
  for (int32_t d = 0; d < r; d++) {
    double sp = sc[d] < 1.0 ? sc[d] : 1.0;
    double st = floor((mode == M_LINEAR ? -1.0 : -2.0) / sp) + 1;
    if (!(2 - 2 * st <= AA_TAPS))
      return dml_cpu_error(c, DML_STATUS_UNIMPLEMENTED,
                           "antialias downscaling dim %d by %g needs more than %d taps",
                           (int)d, sc[d], AA_TAPS);
  }
  int64_t istr[DML_MAX_RANK], oidx[DML_MAX_RANK] = {0}, total = dml_cpu_numel(y);
  dml_cpu_strides(x->dims, r, istr);
  for (int64_t o = 0; o < total; o++) {
    double acc = 0.0;
    int outside = 0;
    for (int32_t d = 0; d < r && !outside; d++) {
      int64_t in = x->dims[d], out = y->dims[d];
      double len = have_scales ? sc[d] * (double)in : (double)out;
      double xo = src_coord(ct, oidx[d], sc[d], in, out, len, rs[d], re[d]);
      if (ct == CT_TF_CROP && (xo < 0 || xo > (double)(in - 1))) {
        outside = 1;
        break;
      }
      double fl = floor(xo), ratio = xo == fl ? 1.0 : xo - fl, base = xo - ratio;
      double sp = sc[d] < 1.0 ? sc[d] : 1.0;
      int64_t st = (int64_t)floor((mode == M_LINEAR ? -1.0 : -2.0) / sp) + 1;
      int n = (int)(2 - 2 * st);
      double sum = 0;
      for (int k = 0; k < n; k++) {
        double t = fabs(((double)(st + k) - ratio) * sp), w;
        if (mode == M_LINEAR)
          w = t < 1 ? 1 - t : 0;
        else
          w = t <= 1  ? ((A + 2) * t - (A + 3)) * t * t + 1
              : t < 2 ? ((A * t - 5 * A) * t + 8 * A) * t - 4 * A
                      : 0;
        ti[d][k] = (int64_t)base + st + k;
        tw[d][k] = w;
        sum += w;
      }
      for (int pass = 0; pass < 1 + excl; pass++) {
        if (pass) {
          sum = 0;
          for (int k = 0; k < n; k++) {
            if (ti[d][k] < 0 || ti[d][k] >= in) tw[d][k] = 0;
            sum += tw[d][k];
          }
        }
        if (sum != 0)
          for (int k = 0; k < n; k++) tw[d][k] /= sum;
      }
      for (int k = 0; k < n; k++)
        ti[d][k] = DML_CPU_MAX((int64_t)0, DML_CPU_MIN(ti[d][k], in - 1));
      nt[d] = n;
    }
    if (outside) {
      acc = extrap;
    } else {
      int kidx[DML_MAX_RANK] = {0};
      for (;;) {
        double w = 1.0;
        int64_t off = 0;
        for (int32_t d = 0; d < r; d++) {
          w *= tw[d][kidx[d]];
          off += ti[d][kidx[d]] * istr[d];
        }
        if (w != 0.0) acc += w * dml_load_f64(dt, x->data, (size_t)off);
        int32_t d = r - 1;
        for (; d >= 0; d--) {
          if (++kidx[d] < nt[d]) break;
          kidx[d] = 0;
        }
        if (d < 0) break;
      }
    }
    dml_store_f64(dt, y->data, (size_t)o, dml_dtype_is_float(dt) ? acc : nearbyint(acc));
    for (int32_t d = r - 1; d >= 0; d--) {
      if (++oidx[d] < y->dims[d]) break;
      oidx[d] = 0;
    }
  }
  return DML_OK;
}

dml_status_t dml_cpuk_Resize(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  const dml_tensor_t *roi = dml_cpu_in(c, 1), *scales = dml_cpu_in(c, 2);
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  int32_t r = x->rank;
  if (y->dtype != dt) return dml_cpu_err_dtype(c, "output", y->dtype);
  if (!dml_dtype_is_float(dt) && !dml_dtype_is_int(dt))
    return dml_cpu_err_dtype(c, "input", dt);
  if (y->rank != r) return dml_cpu_err_shapes(c, "output rank differs from input");
  const char *ms = dml_cpu_get_string(c, "mode", "nearest");
  int mode = strcmp(ms, "nearest") == 0  ? M_NEAREST
             : strcmp(ms, "linear") == 0 ? M_LINEAR
             : strcmp(ms, "cubic") == 0  ? M_CUBIC
                                         : -1;
  if (mode < 0)
    return dml_cpu_error(c, DML_STATUS_UNIMPLEMENTED, "mode '%s' is not supported", ms);
  const char *cs = dml_cpu_get_string(c, "coordinate_transformation_mode", "half_pixel");
  int ct = strcmp(cs, "half_pixel") == 0             ? CT_HALF_PIXEL
           : strcmp(cs, "half_pixel_symmetric") == 0 ? CT_HALF_PIXEL_SYM
           : strcmp(cs, "pytorch_half_pixel") == 0   ? CT_PYTORCH
           : strcmp(cs, "align_corners") == 0        ? CT_ALIGN
           : strcmp(cs, "asymmetric") == 0           ? CT_ASYM
           : strcmp(cs, "tf_crop_and_resize") == 0   ? CT_TF_CROP
           : strcmp(cs, "tf_half_pixel_for_nn") == 0 ? CT_TF_HALF_NN
                                                     : -1;
  if (ct < 0)
    return dml_cpu_error(c, DML_STATUS_UNIMPLEMENTED,
                         "coordinate_transformation_mode '%s' is not supported", cs);
  const char *ns = dml_cpu_get_string(c, "nearest_mode", "round_prefer_floor");
  int nm = strcmp(ns, "round_prefer_floor") == 0  ? NM_ROUND_FLOOR
           : strcmp(ns, "round_prefer_ceil") == 0 ? NM_ROUND_CEIL
           : strcmp(ns, "floor") == 0             ? NM_FLOOR
           : strcmp(ns, "ceil") == 0              ? NM_CEIL
                                                  : -1;
  if (nm < 0)
    return dml_cpu_error(c, DML_STATUS_UNIMPLEMENTED,
                         "nearest_mode '%s' is not supported", ns);
  int antialias = dml_cpu_get_int(c, "antialias", 0) != 0 && mode != M_NEAREST;
  double A = dml_cpu_get_float(c, "cubic_coeff_a", -0.75);
  int excl = dml_cpu_get_int(c, "exclude_outside", 0) != 0;
  double extrap = dml_cpu_get_float(c, "extrapolation_value", 0.0);
  double sc[DML_MAX_RANK], rs[DML_MAX_RANK], re[DML_MAX_RANK];
  int have_scales = scales && dml_cpu_numel(scales) > 0;
  /* Resize-18's `axes`: scales and roi give only those dims (in axes'
   * order); the others keep scale 1 and roi [0, 1]. pos[d]: d's index in
   * scales/roi, -1 when not listed. */
  size_t n_axes = 0;
  const int64_t *axes = dml_cpu_get_ints(c, "axes", &n_axes);
  int32_t na = axes ? (int32_t)n_axes : r, pos[DML_MAX_RANK];
  if (na > r) return dml_cpu_err_shapes(c, "axes has more values than the input's rank");
  for (int32_t d = 0; d < r; d++) pos[d] = axes ? -1 : d;
  for (int32_t i = 0; axes && i < na; i++) {
    int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
    if (a < 0 || a >= r || pos[a] >= 0)
      return dml_cpu_err_shapes(c, "axes has an out-of-range or repeated axis");
    pos[a] = i;
  }
  if (have_scales && (dml_cpu_numel(scales) != na || !dml_dtype_is_float(scales->dtype)))
    return dml_cpu_err_shapes(c, "scales must have one float per resized dim");
  if (ct == CT_TF_CROP &&
      (!roi || dml_cpu_numel(roi) != 2 * na || !dml_dtype_is_float(roi->dtype)))
    return dml_cpu_err_shapes(c, "tf_crop_and_resize needs roi with %d floats",
                              2 * (int)na);
  for (int32_t d = 0; d < r; d++) {
    int32_t p = pos[d];
    if (have_scales) {
      sc[d] = p >= 0 ? dml_load_f64(scales->dtype, scales->data, (size_t)p) : 1.0;
      if (!(sc[d] > 0))
        return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "scales must be > 0");
    } else {
      sc[d] = x->dims[d] ? (double)y->dims[d] / (double)x->dims[d] : 1.0;
    }
    int crop = ct == CT_TF_CROP && p >= 0;
    rs[d] = crop ? dml_load_f64(roi->dtype, roi->data, (size_t)p) : 0.0;
    re[d] = crop ? dml_load_f64(roi->dtype, roi->data, (size_t)(na + p)) : 1.0;
  }
  int64_t total = dml_cpu_numel(y);
  if (total == 0) return DML_OK;
  if (dml_cpu_numel(x) == 0)
    return dml_cpu_err_shapes(c, "cannot resize an empty input to a non-empty output");
  if (r == 0) {
    memcpy(y->data, x->data, dml_dtype_size(dt));
    return DML_OK;
  }
  if (antialias)
    return resize_antialias(c, mode, ct, sc, rs, re, have_scales, A, excl, extrap);
  /* Taps per dim. nt[d]: taps used by dim d (1 when every coordinate maps
   * onto an input sample exactly). */
  tap_t *taps[DML_MAX_RANK];
  int nt[DML_MAX_RANK];
  tap_t *tp = (tap_t *)c->scratch;
  for (int32_t d = 0; d < r; d++) {
    taps[d] = tp;
    int64_t in = x->dims[d], out = y->dims[d];
    double s = sc[d];
    /* length_resized of the spec's formulas (see the top) */
    double len = have_scales ? s * (double)in : (double)out;
    int need = 1;
    for (int64_t o = 0; o < out; o++, tp++) {
      double xo = src_coord(ct, o, s, in, out, len, rs[d], re[d]);
      for (int k = 0; k < TAPS; k++) tp->idx[k] = 0, tp->w[k] = 0.0;
      if (ct == CT_TF_CROP && (xo < 0 || xo > (double)(in - 1))) {
        tp->idx[0] = -1; /* extrapolate */
        continue;
      }
      if (mode == M_NEAREST) {
        double f = floor(xo), frac = xo - f;
        int64_t i;
        switch (nm) {
          case NM_ROUND_FLOOR: i = (int64_t)(frac <= 0.5 ? f : f + 1); break;
          case NM_ROUND_CEIL: i = (int64_t)(frac < 0.5 ? f : f + 1); break;
          case NM_FLOOR: i = (int64_t)f; break;
          default: i = (int64_t)ceil(xo); break;
        }
        tp->idx[0] = DML_CPU_MAX((int64_t)0, DML_CPU_MIN(i, in - 1));
        tp->w[0] = 1.0;
        continue;
      }
      double f = floor(xo), t = xo - f;
      int64_t i0 = (int64_t)f;
      if (mode == M_LINEAR) {
        if (t != 0.0) need = DML_CPU_MAX(need, 2);
        /* taps ordered so that tap 0 is exact when t == 0 */
        tp->idx[0] = DML_CPU_MAX((int64_t)0, DML_CPU_MIN(i0, in - 1));
        tp->idx[1] = DML_CPU_MAX((int64_t)0, DML_CPU_MIN(i0 + 1, in - 1));
        tp->w[0] = 1.0 - t;
        tp->w[1] = t;
        continue;
      }
      double cf[4];
      cubic_coeffs(t, A, cf);
      int64_t ids[4] = {i0, i0 - 1, i0 + 1, i0 + 2};
      double ws[4] = {cf[1], cf[0], cf[2], cf[3]};
      double sum = 0.0;
      for (int k = 0; k < 4; k++) {
        if (excl && (ids[k] < 0 || ids[k] >= in)) ws[k] = 0.0;
        sum += ws[k];
      }
      if (excl && sum != 0.0)
        for (int k = 0; k < 4; k++) ws[k] /= sum;
      for (int k = 0; k < 4; k++) {
        tp->idx[k] = DML_CPU_MAX((int64_t)0, DML_CPU_MIN(ids[k], in - 1));
        tp->w[k] = ws[k];
      }
      if (t != 0.0) need = 4;
    }
    nt[d] = mode == M_NEAREST ? 1 : need;
  }
  int64_t istr[DML_MAX_RANK];
  dml_cpu_strides(x->dims, r, istr);
  int64_t oidx[DML_MAX_RANK] = {0};
  int is_f32 = dt == DML_DTYPE_F32, isf = dml_dtype_is_float(dt);
  const float *xf = (const float *)x->data;
  for (int64_t o = 0; o < total; o++) {
    double acc = 0.0;
    int outside = 0;
    for (int32_t d = 0; d < r; d++)
      if (taps[d][oidx[d]].idx[0] < 0) outside = 1;
    if (outside) {
      acc = extrap;
    } else {
      int kidx[DML_MAX_RANK] = {0};
      for (;;) {
        double w = 1.0;
        int64_t off = 0;
        for (int32_t d = 0; d < r; d++) {
          const tap_t *t = &taps[d][oidx[d]];
          w *= t->w[kidx[d]];
          off += t->idx[kidx[d]] * istr[d];
        }
        if (w != 0.0)
          acc += w * (is_f32 ? (double)xf[off] : dml_load_f64(dt, x->data, (size_t)off));
        int32_t d = r - 1;
        for (; d >= 0; d--) {
          if (++kidx[d] < nt[d]) break;
          kidx[d] = 0;
        }
        if (d < 0) break;
      }
    }
    if (is_f32)
      ((float *)y->data)[o] = (float)acc;
    else if (isf || mode == M_NEAREST)
      dml_store_f64(dt, y->data, (size_t)o, acc);
    else
      dml_store_f64(dt, y->data, (size_t)o, nearbyint(acc));
    for (int32_t d = r - 1; d >= 0; d--) {
      if (++oidx[d] < y->dims[d]) break;
      oidx[d] = 0;
    }
  }
  return DML_OK;
}
