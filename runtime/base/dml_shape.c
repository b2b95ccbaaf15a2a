/* dml_shape.c — shape formulas over int64 extents (dml_shape.h). */
#include "dml_shape.h"

#include <math.h>
#include <string.h>

int dml_shape_window_extent(int64_t in, int64_t ek, int64_t stride, int64_t pb,
                            int64_t pe, dml_shape_pad_t pad, int ceil_mode,
                            int64_t *out) {
  if (pad == DML_SHAPE_PAD_SAME) {
    *out = in / stride + (in % stride != 0);
    return DML_SHAPE_OK;
  }
  if (pad == DML_SHAPE_PAD_VALID) pb = pe = 0;
  int64_t padded;
  if (__builtin_add_overflow(in, pb, &padded) ||
      __builtin_add_overflow(padded, pe, &padded))
    return DML_SHAPE_OVERFLOW;
  if (padded < ek) return DML_SHAPE_KERNEL_TOO_LARGE;
  int64_t num = padded - ek, o = num / stride + 1;
  if (ceil_mode && pad != DML_SHAPE_PAD_VALID && num % stride != 0) {
    o++;
    if ((o - 1) * stride >= in + pb) o--; /* the last window starts in the end pad */
  }
  *out = o;
  return DML_SHAPE_OK;
}

int64_t dml_shape_same_pad_begin(int64_t in, int64_t ek, int64_t stride, int upper,
                                 int64_t *out_total) {
  int64_t out = in / stride + (in % stride != 0);
  int64_t total = (out - 1) * stride + ek - in;
  if (total < 0) total = 0;
  if (out_total) *out_total = total;
  return upper ? total / 2 : total - total / 2;
}

void dml_shape_conv_input_grad_pads(int64_t in, int64_t out, int64_t ek, int64_t s,
                                    int64_t pb, int64_t *pe, int64_t *op) {
  int64_t full = s * (out - 1) + ek;
  int64_t e = full - pb - in;
  if (e < 0) e = 0;
  *pe = e;
  *op = in + pb + e - full;
}

int64_t dml_shape_slice(int64_t dim, int64_t start, int64_t end, int64_t step,
                        int64_t *first) {
  if (start < 0) start += dim; /* dim >= 0: no overflow */
  if (end < 0) end += dim;
  if (step > 0) {
    start = start < 0 ? 0 : start > dim ? dim : start;
    end = end < 0 ? 0 : end > dim ? dim : end;
  } else {
    start = start < 0 ? 0 : start > dim - 1 ? dim - 1 : start;
    end = end < -1 ? -1 : end > dim - 1 ? dim - 1 : end;
  }
  *first = start;
  if (step > 0) return end > start ? (end - start - 1) / step + 1 : 0;
  if (step == INT64_MIN) return start > end ? 1 : 0;
  return start > end ? (start - end - 1) / (-step) + 1 : 0;
}

int dml_shape_range_count_i64(int64_t start, int64_t limit, int64_t delta, int64_t *n) {
  if (delta == 0) return -1;
  __int128 diff = (__int128)limit - start, d = delta;
  __int128 q = diff / d + ((diff % d != 0) && ((diff > 0) == (d > 0)));
  if (q > INT64_MAX) return -1;
  *n = q > 0 ? (int64_t)q : 0;
  return 0;
}

int dml_shape_range_count_f64(double start, double limit, double delta, int64_t *n) {
  if (delta == 0 || !isfinite(start) || !isfinite(limit) || !isfinite(delta)) return -1;
  double q = ceil((limit - start) / delta);
  if (!(q < 9.0e18)) return -1;
  *n = q > 0 ? (int64_t)q : 0;
  return 0;
}

int dml_shape_rnn_directions(const char *direction) {
  if (!direction) return 0;
  if (!strcmp(direction, "forward") || !strcmp(direction, "reverse")) return 1;
  return !strcmp(direction, "bidirectional") ? 2 : 0;
}

int dml_shape_pad_extent(int64_t in, int64_t pb, int64_t pe, int64_t *out) {
  __int128 r = (__int128)in + pb + pe;
  if (r < 0) return DML_SHAPE_NEGATIVE;
  if (r > INT64_MAX) return DML_SHAPE_OVERFLOW;
  *out = (int64_t)r;
  return DML_SHAPE_OK;
}

int dml_shape_tile_extent(int64_t in, int64_t repeats, int64_t *out) {
  if (repeats < 0) return DML_SHAPE_BAD_VALUE;
  int64_t r;
  if (__builtin_mul_overflow(in, repeats, &r)) return DML_SHAPE_OVERFLOW;
  *out = r;
  return DML_SHAPE_OK;
}

int dml_shape_broadcast_extent(int64_t a, int64_t b, int64_t *out) {
  if (a != b && a != 1 && b != 1) return DML_SHAPE_BAD_VALUE;
  *out = a == 1 ? b : a;
  return DML_SHAPE_OK;
}

int dml_shape_reshape_entry(int64_t v, int32_t i, int32_t in_rank, int allowzero) {
  if (v == -1) return DML_SHAPE_RESHAPE_INFER;
  if (v < 0) return DML_SHAPE_RESHAPE_NEGATIVE;
  if (v == 0 && !allowzero)
    return i < in_rank ? DML_SHAPE_RESHAPE_COPY : DML_SHAPE_RESHAPE_NO_DIM;
  return DML_SHAPE_RESHAPE_DIM;
}

int dml_shape_reshape(const int64_t *in, int32_t in_rank, const int64_t *shape, int32_t n,
                      int allowzero, int64_t *out, int32_t *bad) {
  int64_t known = 1, total = 1;
  int32_t infer = -1;
  if (bad) *bad = -1;
  for (int32_t i = 0; i < n; i++) {
    int k = dml_shape_reshape_entry(shape[i], i, in_rank, allowzero);
    if (k == DML_SHAPE_RESHAPE_INFER) {
      if (infer >= 0) {
        if (bad) *bad = i;
        return DML_SHAPE_RESHAPE_TWO_INFER;
      }
      infer = i;
      continue;
    }
    if (k == DML_SHAPE_RESHAPE_NEGATIVE || k == DML_SHAPE_RESHAPE_NO_DIM) {
      if (bad) *bad = i;
      return DML_SHAPE_RESHAPE_BAD_ENTRY;
    }
    out[i] = k == DML_SHAPE_RESHAPE_COPY ? in[i] : shape[i];
    if (__builtin_mul_overflow(known, out[i], &known)) {
      if (bad) *bad = i;
      return DML_SHAPE_OVERFLOW;
    }
  }
  for (int32_t d = 0; d < in_rank; d++)
    if (__builtin_mul_overflow(total, in[d], &total)) return DML_SHAPE_OVERFLOW;
  if (infer >= 0) {
    if (bad) *bad = infer;
    if (known == 0) return DML_SHAPE_RESHAPE_INFER_ZERO;
    if (total % known) return DML_SHAPE_RESHAPE_INDIVISIBLE;
    out[infer] = total / known;
    if (bad) *bad = -1;
  } else if (known != total) {
    return DML_SHAPE_RESHAPE_MISMATCH;
  }
  return DML_SHAPE_OK;
}

int dml_shape_resize_scaled(int64_t in, double scale, int64_t *out) {
  if (!(scale > 0) || !isfinite(scale)) return DML_SHAPE_BAD_VALUE;
  double v = floor((double)in * scale);
  if (!(v < 9.0e18)) return DML_SHAPE_OVERFLOW;
  *out = (int64_t)v;
  return DML_SHAPE_OK;
}

double dml_shape_resize_aspect_scale(const int64_t *in, const int64_t *sizes, int32_t n,
                                     int not_smaller) {
  double scale = not_smaller ? 0 : INFINITY;
  for (int32_t i = 0; i < n; i++) {
    double q = in[i] ? (double)sizes[i] / (double)in[i] : 0;
    scale = not_smaller ? (q > scale ? q : scale) : (q < scale ? q : scale);
  }
  return scale;
}

int64_t dml_shape_resize_aspect_extent(int64_t in, double scale) {
  return (int64_t)floor(scale * (double)in + 0.5);
}
