/* dml_shape.c — shape formulas over int64 extents (dml_shape.h). */
#include "dml_shape.h"

#include <math.h>

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
