/*
 * cpu_outdims.c — output dims computed from input values at run time
 * (value-dependent shapes, dml_cpu.h `output_capacity`).
 *
 * When a shape input (Reshape's shape, Slice's starts, Resize's scales,
 * ...) is computed at run time, shape inference gives the dims it decides
 * data-dependent symbols with upper bounds (ir/dml_ir.h) and memory is
 * planned for them. The executor then passes such a node's outputs with
 * dims at their bounds and the planned bytes as capacity; this file
 * computes the actual dims with the ONNX shape rules of each op (opset 17
 * text, the same rules as ir/infer.c), checks them against the bounds and
 * the capacity, and writes them into the call's outputs before the kernel
 * runs. The kernels then check the dims as for any call. Which rule an op
 * takes (and which inputs it reads; the eager path's rule) is its line of
 * runtime/base/op_rules.def, not a switch here.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cpu_internal.h"
#include "dml_ew.h"
#include "dml_shape.h"

/* Input i, present, with a sane descriptor and data (NULL otherwise). */
static const dml_tensor_t *in_ok(const dml_cpu_call_t *c, uint32_t i) {
  const dml_tensor_t *t = dml_cpu_in(c, i);
  if (!t || t->rank < 0 || t->rank > DML_MAX_RANK || (int)t->dtype < 0 ||
      t->dtype >= DML_DTYPE_COUNT_)
    return NULL;
  if (dml_tensor_bytes(t) == SIZE_MAX || (!t->data && dml_tensor_bytes(t) > 0))
    return NULL;
  return t;
}

static dml_status_t bad_input(const dml_cpu_call_t *c, uint32_t i, const char *what) {
  return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                       "%s (input %u) is absent or not a valid tensor", what, i);
}

/* Integer values of input i (a 0-D or 1-D integer tensor of <= cap
 * elements); *out_n is 0 on an error. */
static dml_status_t ints_of(const dml_cpu_call_t *c, uint32_t i, const char *what,
                            int64_t *out, int64_t cap, int64_t *out_n) {
  *out_n = 0; /* set on every path: its callers' counts are always defined */
  const dml_tensor_t *t = in_ok(c, i);
  if (!t) return bad_input(c, i, what);
  int64_t n = t->rank <= 1 ? dml_cpu_read_ints(t, out, cap) : -1;
  if (n < 0)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "%s (input %u) must be a 0-D or 1-D integer tensor of at most "
                         "%lld values",
                         what, i, (long long)cap);
  *out_n = n;
  return DML_OK;
}

/* Adopts dims[0..r) as output o's dims: the rank must be the one passed,
 * each dim at most the one passed (its bound), the bytes at most the
 * capacity. */
static dml_status_t adopt(const dml_cpu_call_t *c, uint32_t o, const int64_t *dims,
                          int32_t r) {
  if (o >= c->n_outputs) return DML_OK;
  dml_tensor_t *y = &c->outputs[o];
  if (y->dtype == DML_DTYPE_INVALID) return DML_OK; /* absent optional output */
  if (y->rank == DML_RANK_UNKNOWN) { /* an eager call (dml_cpu_eager_outputs) */
    y->rank = r;
    memcpy(y->dims, dims, sizeof(int64_t) * (size_t)r);
    return DML_OK;
  }
  char got[160];
  dml_dims_str(dims, r, got, sizeof got);
  if (y->rank != r)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "output %u has rank %d at run time (shape %s), but was compiled "
                         "with rank %d",
                         o, (int)r, got, (int)y->rank);
  for (int32_t d = 0; d < r; d++) {
    if (dims[d] < 0)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "output %u would have negative dim %d (%lld; shape %s)", o,
                           (int)d, (long long)dims[d], got);
    if (dims[d] > y->dims[d])
      return dml_cpu_error(c, DML_STATUS_OUT_OF_RANGE,
                           "output %u dim %d is %lld at run time (shape %s), above its "
                           "compiled bound %lld; recompile with a larger "
                           "--dynamic-dim-bound or bind the shape input",
                           o, (int)d, (long long)dims[d], got, (long long)y->dims[d]);
  }
  uint64_t es = dml_dtype_size(y->dtype), n = 1;
  for (int32_t d = 0; d < r; d++) n *= (uint64_t)dims[d]; /* each <= its bound */
  if (n * es > c->output_capacity[o])
    return dml_cpu_error(c, DML_STATUS_OUT_OF_RANGE,
                         "output %u of shape %s needs %llu bytes at run time, above the "
                         "%llu bytes planned for it; recompile with a larger "
                         "--dynamic-max-elements",
                         o, got, (unsigned long long)(n * es),
                         (unsigned long long)c->output_capacity[o]);
  memcpy(y->dims, dims, sizeof(int64_t) * (size_t)r);
  return DML_OK;
}

/* Axes (attribute `axes`, else input ai) normalized against `rank` into a
 * mask; *n gets the count. Repeated or out-of-range axes are errors. */
static dml_status_t axes_mask(const dml_cpu_call_t *c, uint32_t ai, int32_t rank,
                              int *mask, int64_t *n) {
  int64_t ax[DML_MAX_RANK * 2];
  size_t na;
  const int64_t *aa = dml_cpu_get_ints(c, "axes", &na);
  if (aa) {
    if (na > (size_t)DML_MAX_RANK * 2) return dml_cpu_err_shapes(c, "too many axes");
    for (size_t i = 0; i < na; i++) ax[i] = aa[i];
    *n = (int64_t)na;
  } else if (dml_cpu_in(c, ai)) {
    DML_RETURN_IF_ERROR(ints_of(c, ai, "axes", ax, DML_MAX_RANK * 2, n));
  } else {
    *n = 0;
  }
  for (int32_t d = 0; d < rank; d++) mask[d] = 0;
  for (int64_t i = 0; i < *n; i++) {
    int64_t a;
    if (dml_cpu_norm_axis(ax[i], rank, &a) || mask[a])
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "axis %lld is out of range for rank %d or repeated",
                           (long long)ax[i], (int)rank);
    mask[a] = 1;
  }
  return DML_OK;
}

/* Reshape: dml_shape_reshape (runtime/base/dml_shape.h), the rule
 * ir/infer.c reads entry by entry. */
static dml_status_t dims_reshape(const dml_cpu_call_t *c, const dml_tensor_t *x) {
  int64_t s[DML_MAX_RANK], o[DML_MAX_RANK] = {0}, n;
  DML_RETURN_IF_ERROR(ints_of(c, 1, "shape", s, DML_MAX_RANK, &n));
  int allowzero = dml_cpu_get_int(c, "allowzero", 0) != 0;
  int32_t bad = -1;
  int r = dml_shape_reshape(x->dims, x->rank, s, (int32_t)n, allowzero, o, &bad);
  long long b = bad >= 0 ? (long long)s[bad] : 0, known = 1;
  for (int64_t i = 0; i < n; i++) /* the dims the error names: no overflow */
    if (i != bad &&
        (r == DML_SHAPE_RESHAPE_INFER_ZERO || r == DML_SHAPE_RESHAPE_INDIVISIBLE ||
         r == DML_SHAPE_RESHAPE_MISMATCH))
      known *= o[i];
  switch (r) {
    case DML_SHAPE_OK: return adopt(c, 0, o, (int32_t)n);
    case DML_SHAPE_RESHAPE_TWO_INFER:
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "shape has more than one -1");
    case DML_SHAPE_RESHAPE_BAD_ENTRY:
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           b == 0 ? "shape[%d] = %lld copies an input dim the input lacks"
                                  : "shape[%d] = %lld is invalid",
                           (int)bad, b);
    case DML_SHAPE_RESHAPE_INFER_ZERO:
    case DML_SHAPE_RESHAPE_INDIVISIBLE:
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "cannot reshape %lld elements with a -1 dim (the others make "
                           "%lld)",
                           (long long)dml_cpu_numel(x), known);
    case DML_SHAPE_RESHAPE_MISMATCH:
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "cannot reshape %lld elements into %lld",
                           (long long)dml_cpu_numel(x), known);
    default: return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "shape overflows");
  }
}

/* Concat whose extent along the axis sums data-dependent ones (per-class
 * detections after TopK): the sum of the inputs' extents; the other dims
 * are the first input's (the kernel checks that they agree). */
static dml_status_t dims_concat(const dml_cpu_call_t *c, const dml_tensor_t *x) {
  int64_t a, d[DML_MAX_RANK];
  if (dml_cpu_norm_axis(dml_cpu_get_int(c, "axis", 0), x->rank, &a))
    return dml_cpu_err_shapes(c, "axis is out of range for rank %d", (int)x->rank);
  for (int32_t k = 0; k < x->rank; k++) d[k] = x->dims[k];
  for (uint32_t i = 1; i < c->n_inputs; i++) {
    const dml_tensor_t *t = in_ok(c, i);
    if (!t) return bad_input(c, i, "input");
    if (t->rank != x->rank || __builtin_add_overflow(d[a], t->dims[a], &d[a]))
      return dml_cpu_err_shapes(c, "input %u does not concatenate with input 0", i);
  }
  return adopt(c, 0, d, x->rank);
}

static dml_status_t dims_squeeze(const dml_cpu_call_t *c, const dml_tensor_t *x) {
  int mask[DML_MAX_RANK];
  int64_t n, o[DML_MAX_RANK];
  int32_t r = 0;
  DML_RETURN_IF_ERROR(axes_mask(c, 1, x->rank, mask, &n));
  for (int32_t d = 0; d < x->rank; d++) {
    if (n == 0) mask[d] = x->dims[d] == 1;
    if (mask[d] && x->dims[d] != 1)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "cannot squeeze dim %d of extent %lld", (int)d,
                           (long long)x->dims[d]);
    if (!mask[d]) o[r++] = x->dims[d];
  }
  return adopt(c, 0, o, r);
}

static dml_status_t dims_unsqueeze(const dml_cpu_call_t *c, const dml_tensor_t *x) {
  int64_t ax[DML_MAX_RANK], n, o[DML_MAX_RANK];
  size_t na;
  const int64_t *aa = dml_cpu_get_ints(c, "axes", &na);
  if (aa) {
    if (na > DML_MAX_RANK) return dml_cpu_err_shapes(c, "too many axes");
    for (size_t i = 0; i < na; i++) ax[i] = aa[i];
    n = (int64_t)na;
  } else {
    DML_RETURN_IF_ERROR(ints_of(c, 1, "axes", ax, DML_MAX_RANK, &n));
  }
  int64_t r = x->rank + n;
  if (r > DML_MAX_RANK)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "output rank %lld exceeds %d",
                         (long long)r, DML_MAX_RANK);
  int mask[DML_MAX_RANK] = {0};
  for (int64_t i = 0; i < n; i++) {
    int64_t a;
    if (dml_cpu_norm_axis(ax[i], r, &a) || mask[a])
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "axis %lld is out of range for rank %lld or repeated",
                           (long long)ax[i], (long long)r);
    mask[a] = 1;
  }
  for (int64_t d = 0, k = 0; d < r; d++) o[d] = mask[d] ? 1 : x->dims[k++];
  return adopt(c, 0, o, (int32_t)r);
}

static dml_status_t dims_expand(const dml_cpu_call_t *c, const dml_tensor_t *x) {
  int64_t s[DML_MAX_RANK], n, o[DML_MAX_RANK];
  DML_RETURN_IF_ERROR(ints_of(c, 1, "shape", s, DML_MAX_RANK, &n));
  int32_t r = (int32_t)DML_CPU_MAX((int64_t)x->rank, n);
  for (int32_t d = 0; d < r; d++) {
    int32_t ix = d - (r - x->rank), is = d - (r - (int32_t)n);
    int64_t a = ix >= 0 ? x->dims[ix] : 1, b = is >= 0 ? s[is] : 1;
    if (dml_shape_broadcast_extent(a, b, &o[d]))
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "shape value %lld does not broadcast with input dim %lld",
                           (long long)b, (long long)a);
  }
  return adopt(c, 0, o, r);
}

static dml_status_t dims_tile(const dml_cpu_call_t *c, const dml_tensor_t *x) {
  int64_t rep[DML_MAX_RANK], n, o[DML_MAX_RANK];
  DML_RETURN_IF_ERROR(ints_of(c, 1, "repeats", rep, DML_MAX_RANK, &n));
  if (n != x->rank)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "repeats has %lld values for rank %d", (long long)n,
                         (int)x->rank);
  for (int32_t d = 0; d < x->rank; d++) {
    if (dml_shape_tile_extent(x->dims[d], rep[d], &o[d]))
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "repeats[%d] = %lld is negative or overflows", (int)d,
                           (long long)rep[d]);
  }
  return adopt(c, 0, o, x->rank);
}

static dml_status_t dims_slice(const dml_cpu_call_t *c, const dml_tensor_t *x) {
  int64_t st[DML_MAX_RANK], en[DML_MAX_RANK], ax[DML_MAX_RANK], sp[DML_MAX_RANK];
  int64_t n, ne, k, o[DML_MAX_RANK];
  DML_RETURN_IF_ERROR(ints_of(c, 1, "starts", st, DML_MAX_RANK, &n));
  DML_RETURN_IF_ERROR(ints_of(c, 2, "ends", en, DML_MAX_RANK, &ne));
  if (ne != n)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "starts has %lld values, ends %lld", (long long)n,
                         (long long)ne);
  for (int64_t i = 0; i < n; i++) ax[i] = i, sp[i] = 1;
  if (dml_cpu_in(c, 3)) {
    DML_RETURN_IF_ERROR(ints_of(c, 3, "axes", ax, DML_MAX_RANK, &k));
    if (k != n)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "axes must match starts");
  }
  if (dml_cpu_in(c, 4)) {
    DML_RETURN_IF_ERROR(ints_of(c, 4, "steps", sp, DML_MAX_RANK, &k));
    if (k != n)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "steps must match starts");
  }
  int seen[DML_MAX_RANK] = {0};
  for (int32_t d = 0; d < x->rank; d++) o[d] = x->dims[d];
  for (int64_t i = 0; i < n; i++) {
    int64_t a;
    if (dml_cpu_norm_axis(ax[i], x->rank, &a) || seen[a]++)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "axis %lld is out of range or repeated", (long long)ax[i]);
    int64_t dim = x->dims[a], s = st[i], e = en[i], step = sp[i];
    if (step == 0)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "step must not be 0");
    int64_t first;
    o[a] = dml_shape_slice(dim, s, e, step, &first);
  }
  return adopt(c, 0, o, x->rank);
}

static dml_status_t dims_pad(const dml_cpu_call_t *c, const dml_tensor_t *x) {
  int64_t p[2 * DML_MAX_RANK], n, o[DML_MAX_RANK];
  size_t na;
  const int64_t *pa = dml_cpu_get_ints(c, "pads", &na);
  if (pa) {
    if (na > 2 * DML_MAX_RANK) return dml_cpu_err_shapes(c, "too many pads");
    for (size_t i = 0; i < na; i++) p[i] = pa[i];
    n = (int64_t)na;
  } else {
    DML_RETURN_IF_ERROR(ints_of(c, 1, "pads", p, 2 * DML_MAX_RANK, &n));
  }
  if (n != 2 * x->rank)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "pads has %lld values for rank %d", (long long)n, (int)x->rank);
  for (int32_t d = 0; d < x->rank; d++) {
    if (dml_shape_pad_extent(x->dims[d], p[d], p[x->rank + d], &o[d]))
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "pads (%lld, %lld) of dim %d give a negative or overflowing "
                           "extent",
                           (long long)p[d], (long long)p[x->rank + d], (int)d);
  }
  return adopt(c, 0, o, x->rank);
}

static dml_status_t dims_range(const dml_cpu_call_t *c, const dml_tensor_t *x) {
  (void)x;
  const dml_tensor_t *t[3];
  for (uint32_t i = 0; i < 3; i++) {
    t[i] = in_ok(c, i);
    if (!t[i] || dml_cpu_numel(t[i]) != 1) return bad_input(c, i, "a Range scalar");
  }
  dml_dtype_t dt = t[0]->dtype;
  int64_t n = 0;
  if (dml_dtype_is_float(dt)) {
    double s = dml_load_f64(dt, t[0]->data, 0),
           l = dml_load_f64(t[1]->dtype, t[1]->data, 0),
           d = dml_load_f64(t[2]->dtype, t[2]->data, 0);
    if (dml_shape_range_count_f64(s, l, d, &n))
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "Range start %g, limit %g, delta %g gives no valid length", s,
                           l, d);
  } else if (dml_shape_range_count_i64(dml_load_i64(dt, t[0]->data, 0),
                                       dml_load_i64(t[1]->dtype, t[1]->data, 0),
                                       dml_load_i64(t[2]->dtype, t[2]->data, 0), &n)) {
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "Range delta must not be 0 and the length must fit int64");
  }
  return adopt(c, 0, &n, 1);
}

static dml_status_t dims_resize(const dml_cpu_call_t *c, const dml_tensor_t *x) {
  /* opset 10 form: (X, scales); opset 11+: (X, roi, scales, sizes). */
  uint32_t isc = c->n_inputs == 2 ? 1 : 2;
  const dml_tensor_t *sc = in_ok(c, isc), *sz = c->n_inputs > 3 ? in_ok(c, 3) : NULL;
  int32_t r = x->rank, axes[DML_MAX_RANK], na = r;
  size_t nattr;
  const int64_t *aa = dml_cpu_get_ints(c, "axes", &nattr);
  if (aa) {
    int mask[DML_MAX_RANK];
    int64_t k;
    DML_RETURN_IF_ERROR(axes_mask(c, UINT32_MAX, r, mask, &k));
    na = (int32_t)k;
    for (int32_t i = 0; i < na; i++) {
      int64_t a;
      dml_cpu_norm_axis(aa[i], r, &a);
      axes[i] = (int32_t)a;
    }
  } else {
    for (int32_t i = 0; i < r; i++) axes[i] = i;
  }
  int64_t o[DML_MAX_RANK];
  for (int32_t d = 0; d < r; d++) o[d] = x->dims[d];
  if (sz && dml_cpu_numel(sz) > 0) {
    int64_t s[DML_MAX_RANK], n;
    DML_RETURN_IF_ERROR(ints_of(c, 3, "sizes", s, DML_MAX_RANK, &n));
    if (n != na)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "sizes has %lld values for %d axes", (long long)n, (int)na);
    const char *pol = dml_cpu_get_string(c, "keep_aspect_ratio_policy", "stretch");
    if (!strcmp(pol, "stretch")) {
      for (int32_t i = 0; i < na; i++) o[axes[i]] = s[i];
    } else {
      int64_t in[DML_MAX_RANK];
      for (int32_t i = 0; i < na; i++) in[i] = x->dims[axes[i]];
      double scale =
          dml_shape_resize_aspect_scale(in, s, na, !strcmp(pol, "not_smaller"));
      for (int32_t i = 0; i < na; i++)
        o[axes[i]] = dml_shape_resize_aspect_extent(in[i], scale);
    }
  } else if (sc && dml_cpu_numel(sc) > 0) {
    if (!dml_dtype_is_float(sc->dtype) || dml_cpu_numel(sc) != na)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "scales must have one float per resized axis (%d)", (int)na);
    for (int32_t i = 0; i < na; i++) {
      double s = dml_load_f64(sc->dtype, sc->data, (size_t)i);
      if (dml_shape_resize_scaled(x->dims[axes[i]], s, &o[axes[i]]))
        return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                             "scales[%d] = %g must be positive and finite", (int)i, s);
    }
  } else {
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "Resize needs exactly one of scales and sizes");
  }
  return adopt(c, 0, o, r);
}

static dml_status_t dims_reduce(const dml_cpu_call_t *c, const dml_tensor_t *x) {
  int mask[DML_MAX_RANK];
  int64_t n, o[DML_MAX_RANK];
  int32_t r = 0;
  DML_RETURN_IF_ERROR(axes_mask(c, 1, x->rank, mask, &n));
  if (n == 0) {
    if (dml_cpu_get_int(c, "noop_with_empty_axes", 0))
      return adopt(c, 0, x->dims, x->rank);
    for (int32_t d = 0; d < x->rank; d++) mask[d] = 1;
  }
  int keep = dml_cpu_get_int(c, "keepdims", 1) != 0;
  for (int32_t d = 0; d < x->rank; d++)
    if (!mask[d])
      o[r++] = x->dims[d];
    else if (keep)
      o[r++] = 1;
  return adopt(c, 0, o, r);
}

static dml_status_t dims_split(const dml_cpu_call_t *c, const dml_tensor_t *x) {
  int64_t axis, sp[64], n, sum = 0;
  if (x->rank < 1 || dml_cpu_norm_axis(dml_cpu_get_int(c, "axis", 0), x->rank, &axis))
    return dml_cpu_err_shapes(c, "axis out of range");
  if (!dml_cpu_in(c, 1)) return DML_OK; /* equal parts: static */
  DML_RETURN_IF_ERROR(ints_of(c, 1, "split", sp, 64, &n));
  if (n != (int64_t)c->n_outputs)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "split has %lld values for %u outputs", (long long)n,
                         c->n_outputs);
  for (int64_t i = 0; i < n; i++) {
    if (sp[i] < 0 || sp[i] > x->dims[axis])
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "split[%lld] = %lld is invalid", (long long)i,
                           (long long)sp[i]);
    sum += sp[i];
  }
  if (sum != x->dims[axis])
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "split sizes add up to %lld, but the axis has %lld",
                         (long long)sum, (long long)x->dims[axis]);
  for (int64_t i = 0; i < n; i++) {
    int64_t o[DML_MAX_RANK];
    memcpy(o, x->dims, sizeof(int64_t) * (size_t)x->rank);
    o[axis] = sp[i];
    DML_RETURN_IF_ERROR(adopt(c, (uint32_t)i, o, x->rank));
  }
  return DML_OK;
}

static dml_status_t dims_top_k(const dml_cpu_call_t *c, const dml_tensor_t *x) {
  int64_t axis, k, n, o[DML_MAX_RANK];
  if (x->rank < 1 || dml_cpu_norm_axis(dml_cpu_get_int(c, "axis", -1), x->rank, &axis))
    return dml_cpu_err_shapes(c, "axis out of range");
  DML_RETURN_IF_ERROR(ints_of(c, 1, "K", &k, 1, &n));
  if (n != 1 || k < 0 || k > x->dims[axis])
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "K = %lld is out of range for an axis of extent %lld",
                         (long long)(n == 1 ? k : -1), (long long)x->dims[axis]);
  memcpy(o, x->dims, sizeof(int64_t) * (size_t)x->rank);
  o[axis] = k;
  DML_RETURN_IF_ERROR(adopt(c, 0, o, x->rank));
  return adopt(c, 1, o, x->rank);
}

static dml_status_t dims_one_hot(const dml_cpu_call_t *c, const dml_tensor_t *ind) {
  const dml_tensor_t *dep = in_ok(c, 1);
  if (!dep || dml_cpu_numel(dep) != 1 ||
      (!dml_dtype_is_int(dep->dtype) && !dml_dtype_is_float(dep->dtype)))
    return bad_input(c, 1, "depth (one number)");
  double dv = dml_load_f64(dep->dtype, dep->data, 0);
  if (!(dv >= 1 && dv < 9.0e18))
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "depth %g must be >= 1", dv);
  int32_t q = ind->rank;
  int64_t axis, o[DML_MAX_RANK];
  if (q + 1 > DML_MAX_RANK ||
      dml_cpu_norm_axis(dml_cpu_get_int(c, "axis", -1), q + 1, &axis))
    return dml_cpu_err_shapes(c, "axis out of range");
  for (int32_t d = 0, j = 0; d < q + 1; d++)
    o[d] = d == axis ? (int64_t)dv : ind->dims[j++];
  return adopt(c, 0, o, q + 1);
}

/* Col2Im: [N, C*B, L] -> [N, C, image_shape...], B = prod(block_shape). */
static dml_status_t dims_col2im(const dml_cpu_call_t *c, const dml_tensor_t *x) {
  int64_t img[DML_MAX_RANK], blk[DML_MAX_RANK], ni, nb, o[DML_MAX_RANK];
  DML_RETURN_IF_ERROR(ints_of(c, 1, "image_shape", img, DML_MAX_RANK - 2, &ni));
  DML_RETURN_IF_ERROR(ints_of(c, 2, "block_shape", blk, DML_MAX_RANK - 2, &nb));
  if (x->rank != 3 || ni != nb || ni < 1)
    return dml_cpu_err_shapes(c,
                              "input must be [N, C*B, L] and image_shape, block_shape "
                              "of one length");
  int64_t B = 1;
  for (int64_t i = 0; i < nb; i++) {
    if (blk[i] < 1 || img[i] < 0 || __builtin_mul_overflow(B, blk[i], &B))
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "block_shape must be >= 1 and image_shape >= 0");
    o[2 + i] = img[i];
  }
  if (x->dims[1] % B)
    return dml_cpu_err_shapes(c,
                              "dim 1 (%lld) is not a multiple of prod(block_shape) %lld",
                              (long long)x->dims[1], (long long)B);
  o[0] = x->dims[0], o[1] = x->dims[1] / B;
  return adopt(c, 0, o, (int32_t)ni + 2);
}

/* AffineGrid: size [N, C, (D,) H, W] -> [N, (D,) H, W, 2 or 3]. */
static dml_status_t dims_affine_grid(const dml_cpu_call_t *c, const dml_tensor_t *th) {
  int64_t s[5], n, o[DML_MAX_RANK];
  DML_RETURN_IF_ERROR(ints_of(c, 1, "size", s, 5, &n));
  if ((n != 4 && n != 5) || th->rank != 3 || th->dims[0] != s[0])
    return dml_cpu_err_shapes(c, "size must hold 4 or 5 values, the first theta's N");
  o[0] = s[0];
  for (int64_t i = 2; i < n; i++) {
    if (s[i] < 0) return dml_cpu_err_shapes(c, "size must not be negative");
    o[i - 1] = s[i];
  }
  o[n - 1] = n - 2;
  return adopt(c, 0, o, (int32_t)n);
}

/* DFT-20 with axis (input 2) fed at run time, onesided: the dim at the
 * axis becomes n/2+1 (forward) or 2*(n-1) (inverse); no dft_length. */
static dml_status_t dims_dft(const dml_cpu_call_t *c, const dml_tensor_t *x) {
  int64_t axis, n, o[DML_MAX_RANK];
  if (c->n_inputs < 3 || !dml_cpu_in(c, 2)) return DML_OK;
  DML_RETURN_IF_ERROR(ints_of(c, 2, "axis", &axis, 1, &n));
  int32_t r = x->rank;
  if (n != 1 || r < 2) return dml_cpu_err_shapes(c, "axis must be one integer");
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r - 2) return dml_cpu_err_shapes(c, "axis out of range");
  int one = dml_cpu_get_int(c, "onesided", 0) != 0,
      inv = dml_cpu_get_int(c, "inverse", 0) != 0;
  for (int32_t d = 0; d < r; d++) o[d] = x->dims[d];
  o[r - 1] = one && inv ? 1 : 2;
  if (one) o[axis] = inv ? 2 * (x->dims[axis] - 1) : x->dims[axis] / 2 + 1;
  return adopt(c, 0, o, r);
}

/* STFT with frame_step or frame_length fed at run time: [batch,
 * (len - flen) / step + 1, bins, 2], flen from frame_length or the window. */
static dml_status_t dims_stft(const dml_cpu_call_t *c, const dml_tensor_t *x) {
  int64_t step, flen = -1, n, o[4];
  if (!dml_cpu_in(c, 1)) return bad_input(c, 1, "frame_step");
  DML_RETURN_IF_ERROR(ints_of(c, 1, "frame_step", &step, 1, &n));
  if (n != 1 || step < 1 || x->rank != 3)
    return dml_cpu_err_shapes(c, "frame_step must be one integer >= 1");
  const dml_tensor_t *w = c->n_inputs > 2 ? dml_cpu_in(c, 2) : NULL;
  if (c->n_inputs > 3 && dml_cpu_in(c, 3))
    DML_RETURN_IF_ERROR(ints_of(c, 3, "frame_length", &flen, 1, &n));
  else if (w && w->rank == 1)
    flen = w->dims[0];
  if (flen < 1 || flen > x->dims[1])
    return dml_cpu_err_shapes(c, "frame_length must be in [1, signal length]");
  o[0] = x->dims[0], o[1] = (x->dims[1] - flen) / step + 1;
  o[2] = dml_cpu_get_int(c, "onesided", 1) ? flen / 2 + 1 : flen, o[3] = 2;
  return adopt(c, 0, o, 4);
}

/* MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins]. */
static dml_status_t dims_mel(const dml_cpu_call_t *c, const dml_tensor_t *x) {
  (void)x;
  int64_t nmel, dftl, n, o[2];
  DML_RETURN_IF_ERROR(ints_of(c, 0, "num_mel_bins", &nmel, 1, &n));
  if (n != 1 || nmel < 1) return dml_cpu_err_shapes(c, "num_mel_bins must be >= 1");
  DML_RETURN_IF_ERROR(ints_of(c, 1, "dft_length", &dftl, 1, &n));
  if (n != 1 || dftl < 1) return dml_cpu_err_shapes(c, "dft_length must be >= 1");
  o[0] = dftl / 2 + 1, o[1] = nmel;
  return adopt(c, 0, o, 2);
}

/* MaxUnpool with output_shape (input 2): those dims. */
static dml_status_t dims_max_unpool(const dml_cpu_call_t *c, const dml_tensor_t *x) {
  int64_t o[DML_MAX_RANK], n;
  if (c->n_inputs < 3 || !dml_cpu_in(c, 2)) return DML_OK;
  DML_RETURN_IF_ERROR(ints_of(c, 2, "output_shape", o, DML_MAX_RANK, &n));
  if (n != x->rank)
    return dml_cpu_err_shapes(c, "output_shape must have %d values", (int)x->rank);
  for (int64_t i = 0; i < n; i++)
    if (o[i] < 0) return dml_cpu_err_shapes(c, "output_shape must not be negative");
  return adopt(c, 0, o, (int32_t)n);
}

/* HannWindow, HammingWindow, BlackmanWindow: [size]. */
static dml_status_t dims_window(const dml_cpu_call_t *c, const dml_tensor_t *x) {
  (void)x;
  int64_t size, n;
  DML_RETURN_IF_ERROR(ints_of(c, 0, "size", &size, 1, &n));
  if (n != 1 || size < 0)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "size must be one integer >= 0");
  return adopt(c, 0, &size, 1);
}

static dml_status_t dims_constant_of_shape(const dml_cpu_call_t *c,
                                           const dml_tensor_t *x) {
  (void)x;
  int64_t s[DML_MAX_RANK], n;
  DML_RETURN_IF_ERROR(ints_of(c, 0, "shape", s, DML_MAX_RANK, &n));
  return adopt(c, 0, s, (int32_t)n);
}

/* Each op's value-dependent rule and the inputs whose values it reads (a
 * mask), from op_rules.def (DIMS, READS); NULL for `none`. */
#define dims_none NULL
static dml_status_t (*const k_dims[DML_OP_COUNT_])(const dml_cpu_call_t *,
                                                   const dml_tensor_t *) = {
#define DML_RULE(e, shape, vjp, rows, dims, reads, eager, elems) \
  [DML_OP_##e] = dims_##dims,
#include "op_rules.def"
#undef DML_RULE
};
#undef dims_none
static const uint32_t k_reads[DML_OP_COUNT_] = {
#define DML_RULE(e, shape, vjp, rows, dims, reads, eager, elems) [DML_OP_##e] = reads,
#include "op_rules.def"
#undef DML_RULE
};

int dml_cpu_output_dims_reads(dml_op_t op, uint32_t i) {
  if ((int)op <= (int)DML_OP_INVALID || op >= DML_OP_COUNT_ || !k_dims[op]) return -1;
  return i < 32 && ((k_reads[op] >> i) & 1u);
}

dml_status_t dml_cpu_output_dims(const dml_cpu_call_t *c) {
  if (!c || !c->output_capacity || !dml_op_info(c->op) ||
      dml_cpu_output_dims_reads(c->op, 0) < 0)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, "rt.cpu",
                           "no shape rule computes the output dims of %s from its inputs",
                           c && dml_op_info(c->op) ? dml_op_name(c->op) : "this call");
  return dml_cpu_value_dims(c);
}

dml_status_t dml_cpu_value_dims(const dml_cpu_call_t *c) {
  const dml_op_info_t *info = dml_op_info(c->op);
  if (!c->output_capacity || !info || (int)c->n_inputs < info->min_inputs || !c->inputs ||
      !c->outputs || (int)c->n_outputs < info->min_outputs || !k_dims[c->op])
    return DML_OK; /* check_call reports bad calls */
  const dml_tensor_t *x = in_ok(c, 0);
  /* Input 0 is a value the rule reads (Range, the windows, ConstantOfShape,
   * MelWeightMatrix) or the data whose dims it reads, then required. */
  if (!x && !(k_reads[c->op] & 1u)) return DML_OK;
  return k_dims[c->op](c, x);
}

/* ---- eager calls (dml_cpu_eager_outputs) ---- */

/* "op: <Op>, reason: shape mismatch, details: lhs [3,4], rhs [5,6]". */
static dml_status_t eager_mismatch(const dml_cpu_call_t *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static dml_status_t eager_mismatch(const dml_cpu_call_t *c, const char *fmt, ...) {
  char why[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  dml_status_t s =
      dml_status_make(DML_STATUS_INVALID_ARGUMENT, dml_op_name(c->op), "shape mismatch");
  if (c->n_inputs == 2 && c->inputs[0].dtype && c->inputs[1].dtype) {
    char a[160], b[160];
    dml_dims_str(c->inputs[0].dims, c->inputs[0].rank, a, sizeof a);
    dml_dims_str(c->inputs[1].dims, c->inputs[1].rank, b, sizeof b);
    s = dml_status_detail(s, "lhs %s, rhs %s", a, b);
  } else {
    for (uint32_t i = 0; i < c->n_inputs; i++) {
      char a[160];
      if (!c->inputs[i].dtype) continue;
      dml_dims_str(c->inputs[i].dims, c->inputs[i].rank, a, sizeof a);
      s = dml_status_detail(s, "input %u %s", i, a);
    }
  }
  return why[0] ? dml_status_detail(s, "%s", why) : s;
}

/* Multidirectional (numpy) broadcast of the present inputs (ONNX
 * "Broadcasting in ONNX"). */
static dml_status_t eager_broadcast(const dml_cpu_call_t *c, int64_t *o, int32_t *r) {
  *r = 0;
  for (uint32_t i = 0; i < c->n_inputs; i++)
    if (c->inputs[i].dtype && c->inputs[i].rank > *r) *r = c->inputs[i].rank;
  for (int32_t d = 0; d < *r; d++) o[d] = 1;
  for (uint32_t i = 0; i < c->n_inputs; i++) {
    const dml_tensor_t *t = &c->inputs[i];
    if (!t->dtype) continue;
    for (int32_t d = 0; d < t->rank; d++) {
      int64_t v = t->dims[d], *w = &o[*r - t->rank + d];
      if (dml_shape_broadcast_extent(*w, v, w))
        return eager_mismatch(c, "dim %d: %lld and %lld do not broadcast",
                              (int)(*r - t->rank + d), (long long)*w, (long long)v);
    }
  }
  return DML_OK;
}

/* MatMul (numpy matmul: 1-D operands promoted and their dim dropped). */
static dml_status_t eager_matmul(const dml_cpu_call_t *c, int64_t *o, int32_t *r) {
  const dml_tensor_t *a = &c->inputs[0], *b = &c->inputs[1];
  if (a->rank < 1 || b->rank < 1) return eager_mismatch(c, "operands must be >= 1-D");
  int64_t k1 = a->dims[a->rank - 1], k2 = b->dims[b->rank >= 2 ? b->rank - 2 : 0];
  if (k1 != k2)
    return eager_mismatch(c, "inner dims %lld and %lld differ", (long long)k1,
                          (long long)k2);
  int32_t ba = a->rank > 2 ? a->rank - 2 : 0, bb = b->rank > 2 ? b->rank - 2 : 0;
  int32_t rb = ba > bb ? ba : bb;
  for (int32_t d = 0; d < rb; d++) {
    int64_t x = d - (rb - ba) >= 0 ? a->dims[d - (rb - ba)] : 1;
    int64_t y = d - (rb - bb) >= 0 ? b->dims[d - (rb - bb)] : 1;
    if (x != y && x != 1 && y != 1)
      return eager_mismatch(c, "batch dim %d: %lld and %lld do not broadcast", (int)d,
                            (long long)x, (long long)y);
    o[d] = x == 1 ? y : x;
  }
  *r = rb;
  if (a->rank >= 2) o[(*r)++] = a->dims[a->rank - 2];
  if (b->rank >= 2) o[(*r)++] = b->dims[b->rank - 1];
  return DML_OK;
}

static dml_status_t eager_gemm(const dml_cpu_call_t *c, int64_t *o, int32_t *r) {
  const dml_tensor_t *a = &c->inputs[0], *b = &c->inputs[1];
  if (a->rank != 2 || b->rank != 2) return eager_mismatch(c, "A and B must be 2-D");
  int ta = dml_cpu_get_int(c, "transA", 0) != 0,
      tb = dml_cpu_get_int(c, "transB", 0) != 0;
  int64_t k1 = a->dims[ta ? 0 : 1], k2 = b->dims[tb ? 1 : 0];
  if (k1 != k2)
    return eager_mismatch(c, "inner dims %lld and %lld differ (transA %d, transB %d)",
                          (long long)k1, (long long)k2, ta, tb);
  o[0] = a->dims[ta ? 1 : 0];
  o[1] = b->dims[tb ? 0 : 1];
  *r = 2;
  return DML_OK;
}

/* Conv and the pools: [N, C or M, spatial...], each spatial extent by the
 * window rule of the ONNX spec (Conv-11, MaxPool-12, AveragePool-19):
 * dml_shape_window_extent() (runtime/base/dml_shape.h), the formula shape
 * inference uses; the kernels check the same extents (cpu_conv.c,
 * cpu_pool.c). */
static dml_status_t eager_window(const dml_cpu_call_t *c, int conv, int64_t *o,
                                 int32_t *r) {
  const dml_tensor_t *x = &c->inputs[0], *w = conv ? &c->inputs[1] : NULL;
  if (x->rank < 3 || (w && w->rank != x->rank))
    return eager_mismatch(c, "X%s must be [N, C, spatial...] of the same rank >= 3",
                          w ? " and W" : "");
  int32_t sp = x->rank - 2;
  size_t nks, ns, nd, np;
  const int64_t *ks = dml_cpu_get_ints(c, "kernel_shape", &nks);
  const int64_t *st = dml_cpu_get_ints(c, "strides", &ns);
  const int64_t *dl = dml_cpu_get_ints(c, "dilations", &nd);
  const int64_t *pads = dml_cpu_get_ints(c, "pads", &np);
  if ((!ks && !w) || (ks && nks != (size_t)sp) || (st && ns != (size_t)sp) ||
      (dl && nd != (size_t)sp) || (pads && np != 2 * (size_t)sp))
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "kernel_shape/strides/dilations/pads have the wrong length for "
                         "%d spatial dims",
                         (int)sp);
  const char *ap = dml_cpu_get_string(c, "auto_pad", "NOTSET");
  int same = !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER");
  int valid = !strcmp(ap, "VALID"), ceil_mode = dml_cpu_get_int(c, "ceil_mode", 0) != 0;
  if (!same && !valid && strcmp(ap, "NOTSET"))
    return dml_cpu_error(c, DML_STATUS_UNIMPLEMENTED, "auto_pad '%s' is not supported",
                         ap);
  o[0] = x->dims[0];
  o[1] = x->dims[1];
  if (w) {
    int64_t g = dml_cpu_get_int(c, "group", 1);
    if (g < 1 || x->dims[1] % g || w->dims[1] * g != x->dims[1])
      return eager_mismatch(c,
                            "W [M, C/group, ...] does not match X's %lld channels "
                            "with group %lld",
                            (long long)x->dims[1], (long long)g);
    o[1] = w->dims[0];
  }
  dml_shape_pad_t pad = same    ? DML_SHAPE_PAD_SAME
                        : valid ? DML_SHAPE_PAD_VALID
                                : DML_SHAPE_PAD_EXPLICIT;
  for (int32_t i = 0; i < sp; i++) {
    int64_t k = w ? w->dims[2 + i] : ks[i], s = st ? st[i] : 1, d = dl ? dl[i] : 1;
    if (k < 1 || s < 1 || d < 1 || (k - 1) > (INT64_MAX - 1) / d)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "kernel, strides and dilations must be >= 1");
    int64_t in = x->dims[2 + i], ek = (k - 1) * d + 1;
    int64_t pb = pads ? pads[i] : 0, pe = pads ? pads[sp + i] : 0;
    if (dml_shape_window_extent(in, ek, s, pb, pe, pad, ceil_mode, &o[2 + i]))
      return eager_mismatch(c,
                            "spatial dim %d: the window (%lld) is larger than the "
                            "padded input",
                            (int)i, (long long)ek);
  }
  *r = x->rank;
  return DML_OK;
}

/* The value-dependent rules above, adopting the rank they give. */
static dml_status_t eager_value_dims(const dml_cpu_call_t *c) {
  for (uint32_t i = 0; i < c->n_outputs; i++) c->outputs[i].rank = DML_RANK_UNKNOWN;
  DML_RETURN_IF_ERROR(dml_cpu_value_dims(c));
  for (uint32_t i = 0; i < c->n_outputs; i++)
    if (c->outputs[i].rank == DML_RANK_UNKNOWN)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, dml_op_name(c->op),
                             "the shape inputs do not give output %u's dims", i);
  return DML_OK;
}

/* The eager rules of op_rules.def's EAGER column. Each writes output 0's
 * dims into o[0..*r), or sets *r = -1 when it wrote the outputs itself. */
static dml_status_t eager_conv(const dml_cpu_call_t *c, int64_t *o, int32_t *r) {
  return eager_window(c, 1, o, r);
}
static dml_status_t eager_pool(const dml_cpu_call_t *c, int64_t *o, int32_t *r) {
  return eager_window(c, 0, o, r);
}
/* The value-dependent rules (dml_cpu_value_dims). */
static dml_status_t eager_value(const dml_cpu_call_t *c, int64_t *o, int32_t *r) {
  (void)o;
  *r = -1;
  return eager_value_dims(c);
}
/* Split: the split input's sizes, else equal parts (opset 18: the last one
 * smaller). */
static dml_status_t eager_split(const dml_cpu_call_t *c, int64_t *o, int32_t *r) {
  const dml_tensor_t *x = &c->inputs[0];
  if (dml_cpu_in(c, 1)) return eager_value(c, o, r);
  int64_t axis, n = c->n_outputs;
  if (x->rank < 1 || dml_cpu_norm_axis(dml_cpu_get_int(c, "axis", 0), x->rank, &axis))
    return dml_cpu_err_shapes(c, "axis out of range");
  int64_t e = x->dims[axis], part = (e + n - 1) / n;
  for (uint32_t i = 0; i < c->n_outputs; i++) {
    dml_tensor_t *t = &c->outputs[i];
    t->rank = x->rank;
    memcpy(t->dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    int64_t left = e - part * (int64_t)i;
    t->dims[axis] = left < 0 ? 0 : left < part ? left : part;
  }
  *r = -1;
  return DML_OK;
}
static dml_status_t eager_global_pool(const dml_cpu_call_t *c, int64_t *o, int32_t *r) {
  const dml_tensor_t *x = &c->inputs[0];
  if (x->rank < 2) return eager_mismatch(c, "X must be [N, C, ...]");
  *r = x->rank;
  for (int32_t d = 0; d < *r; d++) o[d] = d < 2 ? x->dims[d] : 1;
  return DML_OK;
}
static dml_status_t eager_transpose(const dml_cpu_call_t *c, int64_t *o, int32_t *r) {
  const dml_tensor_t *x = &c->inputs[0];
  size_t np;
  const int64_t *perm = dml_cpu_get_ints(c, "perm", &np);
  int seen[DML_MAX_RANK] = {0};
  if (perm && np != (size_t)x->rank)
    return eager_mismatch(c, "perm has %zu values for rank %d", np, (int)x->rank);
  *r = x->rank;
  for (int32_t d = 0; d < *r; d++) {
    int64_t p = perm ? perm[d] : *r - 1 - d;
    if (p < 0 || p >= *r || seen[p])
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "perm is not a permutation of 0..%d", (int)*r - 1);
    seen[p] = 1;
    o[d] = x->dims[p];
  }
  return DML_OK;
}
static dml_status_t eager_size(const dml_cpu_call_t *c, int64_t *o, int32_t *r) {
  (void)o;
  c->outputs[0].dtype = DML_DTYPE_I64;
  *r = 0;
  return DML_OK;
}
/* GatherElements: the indices' shape. */
static dml_status_t eager_gather_elements(const dml_cpu_call_t *c, int64_t *o,
                                          int32_t *r) {
  *r = c->inputs[1].rank;
  memcpy(o, c->inputs[1].dims, sizeof(int64_t) * (size_t)*r);
  return DML_OK;
}
static dml_status_t eager_flatten(const dml_cpu_call_t *c, int64_t *o, int32_t *r) {
  const dml_tensor_t *x = &c->inputs[0];
  int64_t axis = dml_cpu_get_int(c, "axis", 1);
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis > x->rank) return dml_cpu_err_shapes(c, "axis out of range");
  o[0] = o[1] = 1;
  for (int32_t d = 0; d < x->rank; d++) o[d < axis ? 0 : 1] *= x->dims[d];
  *r = 2;
  return DML_OK;
}
static dml_status_t eager_concat(const dml_cpu_call_t *c, int64_t *o, int32_t *r) {
  const dml_tensor_t *x = &c->inputs[0];
  int64_t axis;
  if (x->rank < 1 || dml_cpu_norm_axis(dml_cpu_get_int(c, "axis", 0), x->rank, &axis))
    return dml_cpu_err_shapes(c, "axis out of range");
  *r = x->rank;
  memcpy(o, x->dims, sizeof(int64_t) * (size_t)*r);
  o[axis] = 0;
  for (uint32_t i = 0; i < c->n_inputs; i++) {
    const dml_tensor_t *t = &c->inputs[i];
    int ok = t->rank == *r && t->dtype == x->dtype;
    for (int32_t d = 0; ok && d < *r; d++) ok = d == axis || t->dims[d] == x->dims[d];
    if (!ok)
      return eager_mismatch(c, "input %u differs from input 0 off axis %lld", i,
                            (long long)axis);
    o[axis] += t->dims[axis];
  }
  return DML_OK;
}
static dml_status_t eager_gather(const dml_cpu_call_t *c, int64_t *o, int32_t *r) {
  const dml_tensor_t *x = &c->inputs[0], *ind = &c->inputs[1];
  int64_t axis;
  if (x->rank < 1 || dml_cpu_norm_axis(dml_cpu_get_int(c, "axis", 0), x->rank, &axis))
    return dml_cpu_err_shapes(c, "axis out of range");
  if (x->rank - 1 + ind->rank > DML_MAX_RANK)
    return eager_mismatch(c, "the output's rank exceeds %d", DML_MAX_RANK);
  *r = 0;
  for (int32_t d = 0; d < axis; d++) o[(*r)++] = x->dims[d];
  for (int32_t d = 0; d < ind->rank; d++) o[(*r)++] = ind->dims[d];
  for (int32_t d = (int32_t)axis + 1; d < x->rank; d++) o[(*r)++] = x->dims[d];
  return DML_OK;
}
static dml_status_t eager_argminmax(const dml_cpu_call_t *c, int64_t *o, int32_t *r) {
  const dml_tensor_t *x = &c->inputs[0];
  c->outputs[0].dtype = DML_DTYPE_I64;
  int64_t axis;
  if (dml_cpu_norm_axis(dml_cpu_get_int(c, "axis", 0), x->rank, &axis))
    return dml_cpu_err_shapes(c, "axis out of range");
  int keep = dml_cpu_get_int(c, "keepdims", 1) != 0;
  *r = 0;
  for (int32_t d = 0; d < x->rank; d++)
    if (d != axis)
      o[(*r)++] = x->dims[d];
    else if (keep)
      o[(*r)++] = 1;
  return DML_OK;
}
/* X's shape: Softmax, LogSoftmax, Hardmax, Identity, the norms, CumSum,
 * Trilu, ScatterElements, ReverseSequence. */
static dml_status_t eager_same(const dml_cpu_call_t *c, int64_t *o, int32_t *r) {
  const dml_tensor_t *x = &c->inputs[0];
  *r = x->rank;
  memcpy(o, x->dims, sizeof(int64_t) * (size_t)*r);
  return DML_OK;
}
/* CastLike: input 1 gives the dtype only; X's shape. */
static dml_status_t eager_cast_like(const dml_cpu_call_t *c, int64_t *o, int32_t *r) {
  c->outputs[0].dtype = c->inputs[1].dtype;
  DML_RETURN_IF_ERROR(eager_broadcast(c, o, r));
  return eager_same(c, o, r);
}
/* PRelu: the slope broadcasts to X (unidirectional): X's shape. */
static dml_status_t eager_prelu(const dml_cpu_call_t *c, int64_t *o, int32_t *r) {
  const dml_tensor_t *x = &c->inputs[0];
  DML_RETURN_IF_ERROR(eager_broadcast(c, o, r));
  if (*r != x->rank || memcmp(o, x->dims, sizeof(int64_t) * (size_t)*r))
    return eager_mismatch(c, "slope does not broadcast to X's shape");
  return eager_same(c, o, r);
}

/* The compares, IsNaN, IsInf: bool, broadcast. */
static dml_status_t eager_compare(const dml_cpu_call_t *c, int64_t *o, int32_t *r) {
  c->outputs[0].dtype = DML_DTYPE_BOOL;
  return eager_broadcast(c, o, r);
}
/* Where: input 1's dtype, broadcast. */
static dml_status_t eager_where(const dml_cpu_call_t *c, int64_t *o, int32_t *r) {
  c->outputs[0].dtype = c->inputs[1].dtype;
  return eager_broadcast(c, o, r);
}
/* Cast: the dtype of `to` (an ONNX code; none: the caller's error). */
static dml_status_t eager_cast(const dml_cpu_call_t *c, int64_t *o, int32_t *r) {
  c->outputs[0].dtype = dml_dtype_from_onnx_code(dml_cpu_get_int(c, "to", 0));
  return eager_broadcast(c, o, r);
}

/* LayerNormalization: X's shape; its optional outputs Mean and InvStdDev
 * (2 or 3 outputs) as the op table's shape rule (ir/infer.c
 * infer_layernorm) gives them: X's dims with those from `axis` on made 1,
 * of the dtype `stash_type` names (an ONNX code, default 1: f32). Errors:
 * "axis out of range" with those outputs; INVALID_ARGUMENT for a
 * stash_type dmlc has no float dtype for. */
static dml_status_t eager_layernorm(const dml_cpu_call_t *c, int64_t *o, int32_t *r) {
  DML_RETURN_IF_ERROR(eager_same(c, o, r));
  if (c->n_outputs < 2) return DML_OK; /* Y only: the kernel checks the axis */
  const dml_tensor_t *x = &c->inputs[0];
  int64_t axis;
  if (dml_cpu_norm_axis(dml_cpu_get_int(c, "axis", -1), x->rank, &axis))
    return dml_cpu_err_shapes(c, "axis out of range");
  const int64_t code = dml_cpu_get_int(c, "stash_type", 1);
  const dml_dtype_t st = dml_dtype_from_onnx_code(code);
  if (st == DML_DTYPE_INVALID || !dml_dtype_is_float(st))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "LayerNormalization",
                           "stash_type %lld is not an ONNX float dtype code",
                           (long long)code);
  for (uint32_t i = 1; i < c->n_outputs; i++) {
    dml_tensor_t *m = &c->outputs[i];
    m->dtype = st;
    m->rank = x->rank;
    for (int32_t d = 0; d < x->rank; d++) m->dims[d] = d < axis ? x->dims[d] : 1;
  }
  return DML_OK;
}

/* RNN, GRU and LSTM (ONNX RNN-14, GRU-14, LSTM-14; ir/infer.c rnn_rule):
 * X [seq, batch, input] (layout 1: [batch, seq, input]), R's dims[2] the
 * hidden size H, D = dml_shape_rnn_directions(direction): Y [seq, D,
 * batch, H] ([batch, seq, D, H]), Y_h and Y_c [D, batch, H] ([batch, D,
 * H]), all of X's dtype; writes every output. The other shape checks are
 * the kernels' (the CPU's rnn_geo; dml_tensor_compose.c's on a GPU).
 * Errors: "shape mismatch" for X, W or R not of rank 3; INVALID_ARGUMENT
 * for a direction or layout ONNX does not define. */
static dml_status_t eager_rnn(const dml_cpu_call_t *c, int64_t *o, int32_t *r) {
  (void)o;
  const dml_tensor_t *x = &c->inputs[0], *rr = &c->inputs[2];
  if (x->rank != 3 || c->inputs[1].rank != 3 || rr->rank != 3)
    return eager_mismatch(c, "X, W and R must each be of rank 3");
  const char *dir = dml_cpu_get_string(c, "direction", "forward");
  const int64_t D = dml_shape_rnn_directions(dir);
  if (!D)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "direction \"%s\" is not forward, reverse or bidirectional",
                         dir);
  const int64_t layout = dml_cpu_get_int(c, "layout", 0);
  if (layout != 0 && layout != 1)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "layout %lld must be 0 or 1",
                         (long long)layout);
  const int64_t S = x->dims[layout ? 1 : 0], B = x->dims[layout ? 0 : 1], H = rr->dims[2];
  const int64_t yd[4] = {layout ? B : S, layout ? S : D, layout ? D : B, H},
                sd[3] = {layout ? B : D, layout ? D : B, H};
  for (uint32_t i = 0; i < c->n_outputs; i++) {
    dml_tensor_t *y = &c->outputs[i];
    y->dtype = x->dtype;
    y->rank = i ? 3 : 4;
    memcpy(y->dims, i ? sd : yd, sizeof(int64_t) * (size_t)y->rank);
  }
  *r = -1;
  return DML_OK;
}

/* Each op's eager rule, from op_rules.def (EAGER); NULL for `none`. The
 * formula table's ops (ew_ops.def) broadcast. */
#define eager_none NULL
static dml_status_t (*const k_eager[DML_OP_COUNT_])(const dml_cpu_call_t *, int64_t *,
                                                    int32_t *) = {
#define DML_RULE(e, shape, vjp, rows, dims, reads, eager, elems) \
  [DML_OP_##e] = eager_##eager,
#include "op_rules.def"
#undef DML_RULE
};
#undef eager_none

static dml_status_t (*eager_rule(dml_op_t op))(const dml_cpu_call_t *, int64_t *,
                                               int32_t *) {
  if ((int)op <= (int)DML_OP_INVALID || op >= DML_OP_COUNT_) return NULL;
  return dml_ew_has(op) ? eager_broadcast : k_eager[op];
}

int dml_cpu_eager_supported(dml_op_t op) {
  return eager_rule(op) != NULL && dml_cpu_supports(op);
}

dml_status_t dml_cpu_eager_outputs(const dml_cpu_call_t *c) {
  const dml_op_info_t *info = dml_op_info(c->op);
  if (!dml_cpu_eager_supported(c->op))
    return dml_status_detail(
        dml_status_make(DML_STATUS_UNIMPLEMENTED, info ? info->name : "eager",
                        "no eager shape rule for this op"),
        "eager ops: the elementwise ops, the reductions, ArgMax/ArgMin, MatMul, Gemm, "
        "Conv, MaxPool, AveragePool, the global pools, TopK, Split, Softmax, LogSoftmax, "
        "Hardmax, RNN, GRU, LSTM, Transpose, Identity, Flatten, Concat, Gather, "
        "GatherElements, "
        "ScatterElements, BatchNormalization (inference), LayerNormalization, "
        "InstanceNormalization, LpNormalization, CumSum, Trilu, ReverseSequence, Size "
        "and the ops whose dims follow from a shape input (Reshape, Slice, ...); "
        "compile a graph for the others");
  if ((int)c->n_inputs < info->min_inputs ||
      (info->max_inputs >= 0 && (int)c->n_inputs > info->max_inputs) ||
      (int)c->n_outputs < info->min_outputs ||
      (info->max_outputs >= 0 && (int)c->n_outputs > info->max_outputs) ||
      c->n_outputs > DML_MAX_EAGER_OUTPUTS)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, info->name,
                           "takes %d to %d inputs and %d to %d outputs (-1: any), got %u "
                           "and %u",
                           info->min_inputs, info->max_inputs, info->min_outputs,
                           info->max_outputs, c->n_inputs, c->n_outputs);
  for (int i = 0; i < info->min_inputs; i++)
    if (!c->inputs[i].dtype)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, info->name,
                             "input %d is required", i);
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t in0 = c->n_inputs ? c->inputs[0].dtype : DML_DTYPE_INVALID;
  y->dtype = in0; /* the rules below set another */
  const int indices = c->op == DML_OP_MAX_POOL || c->op == DML_OP_TOP_K;
  if (c->n_outputs > 1 && !indices && c->op != DML_OP_SPLIT &&
      c->op != DML_OP_LAYER_NORMALIZATION && c->op != DML_OP_RNN && c->op != DML_OP_GRU &&
      c->op != DML_OP_LSTM)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, info->name,
                           "eager %s writes its first output only (asked for %u)",
                           info->name, c->n_outputs);
  for (uint32_t i = 1; i < c->n_outputs;
       i++) { /* MaxPool's, TopK's indices; the rules' */
    c->outputs[i].dtype = indices ? DML_DTYPE_I64 : in0;
    c->outputs[i].rank = DML_RANK_UNKNOWN;
  }
  int64_t o[DML_MAX_RANK];
  int32_t r = 0;
  DML_RETURN_IF_ERROR(eager_rule(c->op)(c, o, &r));
  if (!y->dtype)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, info->name,
                           "cannot tell the output's dtype (Cast needs `to`, an ONNX "
                           "TensorProto.DataType code)");
  if (r < 0) return DML_OK; /* the rule wrote the outputs */
  y->rank = r;
  memcpy(y->dims, o, sizeof(int64_t) * (size_t)r);
  if (c->n_outputs == 2 && c->op == DML_OP_MAX_POOL) { /* Indices: Y's dims */
    c->outputs[1].rank = r;
    memcpy(c->outputs[1].dims, o, sizeof(int64_t) * (size_t)r);
  }
  return DML_OK;
}
