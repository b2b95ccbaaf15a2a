/*
 * cpu_index.c — indexing ops: GatherElements, ScatterElements (and
 * Scatter-9), GatherND, ScatterND, OneHot, DepthToSpace, SpaceToDepth, TopK,
 * ReverseSequence and MaxUnpool. Data moves by element size, so every dtype
 * works; index inputs are i32 or i64 (negative indices count from the end
 * where the spec allows them; out of range -> OUT_OF_RANGE).
 */
#include "cpu_index.h"

#include <math.h>
#include <string.h>

/* ---- helpers ---------------------------------------------------------- */

static int is_index_dtype(dml_dtype_t dt) {
  return dt == DML_DTYPE_I32 || dt == DML_DTYPE_I64;
}

static inline int64_t idx_at(const dml_tensor_t *t, int64_t i) {
  return t->dtype == DML_DTYPE_I64 ? ((const int64_t *)t->data)[i]
                                   : (int64_t)((const int32_t *)t->data)[i];
}

static inline void copy_elem(char *dst, int64_t di, const char *src, int64_t si,
                             size_t es) {
  switch (es) {
    case 1: dst[di] = src[si]; return;
    case 2:
      ((uint16_t *)(void *)dst)[di] = ((const uint16_t *)(const void *)src)[si];
      return;
    case 4:
      ((uint32_t *)(void *)dst)[di] = ((const uint32_t *)(const void *)src)[si];
      return;
    case 8:
      ((uint64_t *)(void *)dst)[di] = ((const uint64_t *)(const void *)src)[si];
      return;
    default: memcpy(dst + (size_t)di * es, src + (size_t)si * es, es);
  }
}

static int same_dims(const dml_tensor_t *a, const int64_t *dims, int32_t rank) {
  return a->rank == rank && !memcmp(a->dims, dims, sizeof(int64_t) * (size_t)rank);
}

/* Advances a row-major multi-index over dims; returns 0 after the last. */
static inline int next_index(int64_t *idx, const int64_t *dims, int32_t rank) {
  for (int32_t d = rank - 1; d >= 0; d--) {
    if (++idx[d] < dims[d]) return 1;
    idx[d] = 0;
  }
  return 0;
}

/* Scatter reductions (ScatterElements-16/18, ScatterND-16/18). */
typedef enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN } red_t;

static int parse_reduction(const dml_cpu_call_t *c, red_t *out) {
  const char *r = dml_cpu_get_string(c, "reduction", "none");
  if (!strcmp(r, "none"))
    *out = RED_NONE;
  else if (!strcmp(r, "add"))
    *out = RED_ADD;
  else if (!strcmp(r, "mul"))
    *out = RED_MUL;
  else if (!strcmp(r, "max"))
    *out = RED_MAX;
  else if (!strcmp(r, "min"))
    *out = RED_MIN;
  else
    return -1;
  return 0;
}

/* dst[di] = dst[di] (red) src[si] in dtype dt. */
static void reduce_elem(dml_dtype_t dt, red_t red, char *dst, int64_t di, const char *src,
                        int64_t si, size_t es) {
  if (red == RED_NONE) {
    copy_elem(dst, di, src, si, es);
    return;
  }
  if (dt == DML_DTYPE_F32) {
    float *d = (float *)(void *)dst + di, s = ((const float *)(const void *)src)[si];
    *d = red == RED_ADD   ? *d + s
         : red == RED_MUL ? *d * s
         : red == RED_MAX ? (s > *d ? s : *d)
                          : (s < *d ? s : *d);
    return;
  }
  if (dml_dtype_is_float(dt)) {
    double d = dml_load_f64(dt, dst, (size_t)di), s = dml_load_f64(dt, src, (size_t)si);
    d = red == RED_ADD   ? d + s
        : red == RED_MUL ? d * s
        : red == RED_MAX ? (s > d ? s : d)
                         : (s < d ? s : d);
    dml_store_f64(dt, dst, (size_t)di, d);
    return;
  }
  if (dt == DML_DTYPE_BOOL) {
    char d = dst[di] != 0, s = src[si] != 0;
    dst[di] = (char)(red == RED_ADD || red == RED_MAX ? (d | s) : (d & s));
    return;
  }
  int64_t d = dml_load_i64(dt, dst, (size_t)di), s = dml_load_i64(dt, src, (size_t)si);
  int64_t r;
  if (red == RED_ADD) {
    r = (int64_t)((uint64_t)d + (uint64_t)s);
  } else if (red == RED_MUL) {
    r = (int64_t)((uint64_t)d * (uint64_t)s);
  } else {
    int s_gt = dml_cpu_is_unsigned(dt) ? (uint64_t)s > (uint64_t)d : s > d;
    r = (red == RED_MAX) == s_gt ? s : d;
  }
  dml_store_i64(dt, dst, (size_t)di, r);
}

/* ======================================================================
 * GatherElements (ONNX opset 13): out[i][j][k] = data[index[i][j][k]][j][k]
 * for axis 0 (likewise for other axes); out has the indices' shape.
 * ScatterElements (opset 16/18; Scatter-9/11 without reduction): out = data,
 * then out[index[i][j]][j] (reduction)= updates[i][j].
 * ====================================================================== */

static dml_status_t elements_check(const dml_cpu_call_t *c, const dml_tensor_t *x,
                                   const dml_tensor_t *ind, int64_t *out_axis) {
  if (!is_index_dtype(ind->dtype)) return dml_cpu_err_dtype(c, "indices", ind->dtype);
  int32_t r = x->rank;
  if (r < 1 || dml_cpu_norm_axis(dml_cpu_get_int(c, "axis", 0), r, out_axis))
    return dml_cpu_err_shapes(c, "axis out of range");
  if (ind->rank != r) return dml_cpu_err_shapes(c, "indices must have the data's rank");
  for (int32_t d = 0; d < r; d++)
    if (d != *out_axis && ind->dims[d] > x->dims[d])
      return dml_cpu_err_shapes(c, "indices dim %d exceeds the data's", (int)d);
  return DML_OK;
}

dml_status_t dml_cpu_elements_check(const dml_cpu_call_t *call, int64_t *axis) {
  return elements_check(call, &call->inputs[0], &call->inputs[1], axis);
}

static dml_status_t index_oob(const dml_cpu_call_t *c, int64_t v, int64_t n,
                              int64_t pos) {
  return dml_cpu_error(c, DML_STATUS_OUT_OF_RANGE,
                       "index %lld (at position %lld) is out of range [-%lld, %lld]",
                       (long long)v, (long long)pos, (long long)n, (long long)(n - 1));
}

dml_status_t dml_cpuk_GatherElements(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0], *ind = &c->inputs[1];
  dml_tensor_t *y = &c->outputs[0];
  if (y->dtype != x->dtype) return dml_cpu_err_dtype(c, "output", y->dtype);
  int64_t axis;
  DML_RETURN_IF_ERROR(elements_check(c, x, ind, &axis));
  if (!same_dims(y, ind->dims, ind->rank))
    return dml_cpu_err_shapes(c, "output dims must equal the indices' dims");
  int64_t n = dml_cpu_numel(ind);
  if (n == 0) return DML_OK;
  int32_t r = x->rank;
  int64_t xs[DML_MAX_RANK], idx[DML_MAX_RANK] = {0}, N = x->dims[axis];
  dml_cpu_strides(x->dims, r, xs);
  size_t es = dml_dtype_size(x->dtype);
  for (int64_t i = 0; i < n; i++, next_index(idx, ind->dims, r)) {
    int64_t v = idx_at(ind, i);
    if (v < -N || v >= N) return index_oob(c, v, N, i);
    if (v < 0) v += N;
    int64_t off = 0;
    for (int32_t d = 0; d < r; d++) off += (d == axis ? v : idx[d]) * xs[d];
    copy_elem((char *)y->data, i, (const char *)x->data, off, es);
  }
  return DML_OK;
}

dml_status_t dml_cpuk_ScatterElements(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0], *ind = &c->inputs[1], *upd = &c->inputs[2];
  dml_tensor_t *y = &c->outputs[0];
  if (y->dtype != x->dtype) return dml_cpu_err_dtype(c, "output", y->dtype);
  if (upd->dtype != x->dtype) return dml_cpu_err_dtype(c, "updates", upd->dtype);
  red_t red;
  if (parse_reduction(c, &red))
    return dml_cpu_error(c, DML_STATUS_UNIMPLEMENTED, "reduction '%s' is not supported",
                         dml_cpu_get_string(c, "reduction", ""));
  int64_t axis;
  DML_RETURN_IF_ERROR(elements_check(c, x, ind, &axis));
  if (!same_dims(upd, ind->dims, ind->rank))
    return dml_cpu_err_shapes(c, "updates must have the indices' shape");
  if (!same_dims(y, x->dims, x->rank))
    return dml_cpu_err_shapes(c, "output dims must equal the data's dims");
  int32_t r = x->rank;
  int64_t n = dml_cpu_numel(ind), N = x->dims[axis];
  /* Validate every index first so the output is untouched on error. */
  for (int64_t i = 0; i < n; i++) {
    int64_t v = idx_at(ind, i);
    if (v < -N || v >= N) return index_oob(c, v, N, i);
  }
  memcpy(y->data, x->data, dml_tensor_bytes(x));
  if (n == 0) return DML_OK;
  int64_t xs[DML_MAX_RANK], idx[DML_MAX_RANK] = {0};
  dml_cpu_strides(x->dims, r, xs);
  size_t es = dml_dtype_size(x->dtype);
  for (int64_t i = 0; i < n; i++, next_index(idx, ind->dims, r)) {
    int64_t v = idx_at(ind, i);
    if (v < 0) v += N;
    int64_t off = 0;
    for (int32_t d = 0; d < r; d++) off += (d == axis ? v : idx[d]) * xs[d];
    reduce_elem(x->dtype, red, (char *)y->data, off, (const char *)upd->data, i, es);
  }
  return DML_OK;
}

/* ======================================================================
 * GatherND (ONNX opset 13, batch_dims from 12) and ScatterND (opset 16/18
 * reductions). The last indices dim m addresses the leading dims of data
 * (after batch_dims); each tuple selects a slice of data.dims[b+m:].
 * ====================================================================== */

/* Offset (in elements of data) of the slice addressed by tuple `t` (m
 * values) within batch block `base`; -1 when out of range. */
static int64_t nd_offset(const dml_tensor_t *ind, int64_t t0, int64_t m,
                         const int64_t *ddims, const int64_t *dstr, int64_t *bad) {
  int64_t off = 0;
  for (int64_t k = 0; k < m; k++) {
    int64_t v = idx_at(ind, t0 + k), n = ddims[k];
    if (v < -n || v >= n) {
      *bad = v;
      return -1;
    }
    if (v < 0) v += n;
    off += v * dstr[k];
  }
  return off;
}

dml_status_t dml_cpuk_GatherND(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0], *ind = &c->inputs[1];
  dml_tensor_t *y = &c->outputs[0];
  if (y->dtype != x->dtype) return dml_cpu_err_dtype(c, "output", y->dtype);
  if (!is_index_dtype(ind->dtype)) return dml_cpu_err_dtype(c, "indices", ind->dtype);
  int64_t b = dml_cpu_get_int(c, "batch_dims", 0);
  int32_t r = x->rank, q = ind->rank;
  if (r < 1 || q < 1 || b < 0 || b >= q || b >= r)
    return dml_cpu_err_shapes(c, "batch_dims %lld must be below both ranks",
                              (long long)b);
  int64_t m = ind->dims[q - 1];
  if (m < 1 || m > r - b)
    return dml_cpu_err_shapes(c, "indices' last dim %lld must be in [1, %lld]",
                              (long long)m, (long long)(r - b));
  for (int64_t d = 0; d < b; d++)
    if (ind->dims[d] != x->dims[d])
      return dml_cpu_err_shapes(c, "batch dim %lld differs", (long long)d);
  int64_t ed[2 * DML_MAX_RANK];
  int32_t er = 0;
  for (int32_t d = 0; d < q - 1; d++) ed[er++] = ind->dims[d];
  for (int32_t d = (int32_t)(b + m); d < r; d++) ed[er++] = x->dims[d];
  if (er > DML_MAX_RANK || !same_dims(y, ed, er))
    return dml_cpu_err_shapes(c, "output dims must be indices[:-1] + data[b+m:]");
  int64_t xs[DML_MAX_RANK];
  dml_cpu_strides(x->dims, r, xs);
  int64_t nb = 1, per_b = 1, slice = 1;
  for (int64_t d = 0; d < b; d++) nb *= x->dims[d];
  for (int32_t d = (int32_t)b; d < q - 1; d++) per_b *= ind->dims[d];
  for (int32_t d = (int32_t)(b + m); d < r; d++) slice *= x->dims[d];
  int64_t bstride = b > 0 ? xs[b - 1] : 0;
  size_t es = dml_dtype_size(x->dtype), row = (size_t)slice * es;
  char *dst = (char *)y->data;
  const char *src = (const char *)x->data;
  for (int64_t bi = 0; bi < nb; bi++)
    for (int64_t j = 0; j < per_b; j++) {
      int64_t t = bi * per_b + j, bad = 0;
      int64_t off = nd_offset(ind, t * m, m, x->dims + b, xs + b, &bad);
      if (off < 0) return index_oob(c, bad, x->dims[b], t * m);
      if (row)
        memcpy(dst + (size_t)t * row, src + (size_t)(bi * bstride + off) * es, row);
    }
  return DML_OK;
}

dml_status_t dml_cpuk_ScatterND(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0], *ind = &c->inputs[1], *upd = &c->inputs[2];
  dml_tensor_t *y = &c->outputs[0];
  if (y->dtype != x->dtype) return dml_cpu_err_dtype(c, "output", y->dtype);
  if (upd->dtype != x->dtype) return dml_cpu_err_dtype(c, "updates", upd->dtype);
  if (!is_index_dtype(ind->dtype)) return dml_cpu_err_dtype(c, "indices", ind->dtype);
  red_t red;
  if (parse_reduction(c, &red))
    return dml_cpu_error(c, DML_STATUS_UNIMPLEMENTED, "reduction '%s' is not supported",
                         dml_cpu_get_string(c, "reduction", ""));
  int32_t r = x->rank, q = ind->rank;
  if (r < 1 || q < 1)
    return dml_cpu_err_shapes(c, "data and indices must have rank >= 1");
  int64_t m = ind->dims[q - 1];
  if (m < 1 || m > r)
    return dml_cpu_err_shapes(c, "indices' last dim %lld must be in [1, %d]",
                              (long long)m, (int)r);
  int64_t ed[2 * DML_MAX_RANK];
  int32_t er = 0;
  for (int32_t d = 0; d < q - 1; d++) ed[er++] = ind->dims[d];
  for (int32_t d = (int32_t)m; d < r; d++) ed[er++] = x->dims[d];
  if (er > DML_MAX_RANK || !same_dims(upd, ed, er))
    return dml_cpu_err_shapes(c, "updates must have shape indices[:-1] + data[m:]");
  if (!same_dims(y, x->dims, r))
    return dml_cpu_err_shapes(c, "output dims must equal the data's dims");
  int64_t xs[DML_MAX_RANK];
  dml_cpu_strides(x->dims, r, xs);
  int64_t nt = 1, slice = 1;
  for (int32_t d = 0; d < q - 1; d++) nt *= ind->dims[d];
  for (int32_t d = (int32_t)m; d < r; d++) slice *= x->dims[d];
  for (int64_t t = 0; t < nt; t++) {
    int64_t bad = 0;
    if (nd_offset(ind, t * m, m, x->dims, xs, &bad) < 0)
      return index_oob(c, bad, x->dims[0], t * m);
  }
  memcpy(y->data, x->data, dml_tensor_bytes(x));
  size_t es = dml_dtype_size(x->dtype);
  for (int64_t t = 0; t < nt; t++) {
    int64_t bad = 0;
    int64_t off = nd_offset(ind, t * m, m, x->dims, xs, &bad);
    if (red == RED_NONE) {
      if (slice)
        memcpy((char *)y->data + (size_t)off * es,
               (const char *)upd->data + (size_t)(t * slice) * es, (size_t)slice * es);
      continue;
    }
    for (int64_t k = 0; k < slice; k++)
      reduce_elem(x->dtype, red, (char *)y->data, off + k, (const char *)upd->data,
                  t * slice + k, es);
  }
  return DML_OK;
}

/* ======================================================================
 * OneHot (ONNX opset 11): out has rank(indices)+1 with `depth` inserted at
 * axis; out[..., j, ...] = values[1] where j == indices[...] (negative
 * indices count from depth), values[0] elsewhere; indices outside
 * [-depth, depth) give an all-off row.
 * ====================================================================== */

dml_status_t dml_cpuk_OneHot(const dml_cpu_call_t *c) {
  const dml_tensor_t *ind = &c->inputs[0], *dep = &c->inputs[1], *val = &c->inputs[2];
  dml_tensor_t *y = &c->outputs[0];
  if (y->dtype != val->dtype) return dml_cpu_err_dtype(c, "output", y->dtype);
  if (!dml_dtype_is_int(ind->dtype) && !dml_dtype_is_float(ind->dtype))
    return dml_cpu_err_dtype(c, "indices", ind->dtype);
  if (!dml_dtype_is_int(dep->dtype) && !dml_dtype_is_float(dep->dtype))
    return dml_cpu_err_dtype(c, "depth", dep->dtype);
  if (dml_cpu_numel(dep) != 1)
    return dml_cpu_err_shapes(c, "depth must have one element");
  if (dml_cpu_numel(val) != 2)
    return dml_cpu_err_shapes(c, "values must have two elements");
  int64_t depth = dml_dtype_is_float(dep->dtype) ? (int64_t)dml_cpu_scalar_f64(dep)
                                                 : dml_load_i64(dep->dtype, dep->data, 0);
  if (depth < 1)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "depth %lld must be >= 1",
                         (long long)depth);
  int32_t q = ind->rank;
  int64_t axis;
  if (q + 1 > DML_MAX_RANK ||
      dml_cpu_norm_axis(dml_cpu_get_int(c, "axis", -1), q + 1, &axis))
    return dml_cpu_err_shapes(c, "axis out of range");
  int64_t ed[DML_MAX_RANK];
  for (int32_t d = 0, k = 0; d <= q; d++) ed[d] = d == axis ? depth : ind->dims[k++];
  if (!same_dims(y, ed, q + 1))
    return dml_cpu_err_shapes(c, "output dims must be the indices' with depth at axis");
  int64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < axis; d++) outer *= ind->dims[d];
  for (int32_t d = (int32_t)axis; d < q; d++) inner *= ind->dims[d];
  size_t es = dml_dtype_size(val->dtype);
  char *dst = (char *)y->data;
  const char *v = (const char *)val->data;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < depth; j++)
      for (int64_t i = 0; i < inner; i++) {
        int64_t p = o * inner + i;
        /* Float indices truncate toward zero, saturating (dml_load_i64). */
        int64_t k = dml_load_i64(ind->dtype, ind->data, (size_t)p);
        if (k < 0) k += depth;
        copy_elem(dst, (o * depth + j) * inner + i, v, k == j ? 1 : 0, es);
      }
  return DML_OK;
}

/* ======================================================================
 * DepthToSpace (ONNX opset 13, modes DCR and CRD) and SpaceToDepth (13) on
 * NCHW tensors with `blocksize` b.
 *   DCR: y[n, c, h*b+i, w*b+j] = x[n, (i*b+j)*C/b^2 + c, h, w]
 *   CRD: y[n, c, h*b+i, w*b+j] = x[n, c*b^2 + i*b + j, h, w]
 *   SpaceToDepth DCR: y[n, (i*b+j)*C + c, h, w] = x[n, c, h*b+i, w*b+j]
 *   SpaceToDepth CRD (opset 28): y[n, c*b^2 + i*b + j, h, w] = the same x
 * ====================================================================== */

static dml_status_t block_size(const dml_cpu_call_t *c, int64_t *out) {
  int64_t b = dml_cpu_get_int(c, "blocksize", 0);
  if (b < 1)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "blocksize %lld must be >= 1",
                         (long long)b);
  *out = b;
  return DML_OK;
}

dml_status_t dml_cpuk_DepthToSpace(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  if (y->dtype != x->dtype) return dml_cpu_err_dtype(c, "output", y->dtype);
  int64_t b = 1;
  DML_RETURN_IF_ERROR(block_size(c, &b));
  const char *mode = dml_cpu_get_string(c, "mode", "DCR");
  int crd = !strcmp(mode, "CRD");
  if (!crd && strcmp(mode, "DCR"))
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "mode '%s' is not DCR or CRD",
                         mode);
  if (x->rank != 4 || x->dims[1] % (b * b))
    return dml_cpu_err_shapes(c, "input must be NCHW with C divisible by blocksize^2");
  int64_t N = x->dims[0], C = x->dims[1] / (b * b), H = x->dims[2], W = x->dims[3];
  int64_t ed[4] = {N, C, H * b, W * b};
  if (!same_dims(y, ed, 4))
    return dml_cpu_err_shapes(c, "output dims must be [N,C/b^2,H*b,W*b]");
  size_t es = dml_dtype_size(x->dtype);
  int64_t o = 0;
  for (int64_t n = 0; n < N; n++)
    for (int64_t ch = 0; ch < C; ch++)
      for (int64_t hh = 0; hh < H * b; hh++)
        for (int64_t ww = 0; ww < W * b; ww++, o++) {
          int64_t h = hh / b, i = hh % b, w = ww / b, j = ww % b;
          int64_t ic = crd ? ch * b * b + i * b + j : (i * b + j) * C + ch;
          copy_elem((char *)y->data, o, (const char *)x->data,
                    ((n * C * b * b + ic) * H + h) * W + w, es);
        }
  return DML_OK;
}

dml_status_t dml_cpuk_SpaceToDepth(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  if (y->dtype != x->dtype) return dml_cpu_err_dtype(c, "output", y->dtype);
  int64_t b = 1;
  DML_RETURN_IF_ERROR(block_size(c, &b));
  const char *mode = dml_cpu_get_string(c, "mode", "DCR");
  int crd = !strcmp(mode, "CRD");
  if (!crd && strcmp(mode, "DCR"))
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "mode '%s' is not DCR or CRD",
                         mode);
  if (x->rank != 4 || x->dims[2] % b || x->dims[3] % b)
    return dml_cpu_err_shapes(c,
                              "input must be NCHW with H and W divisible by blocksize");
  int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2] / b, W = x->dims[3] / b;
  int64_t ed[4] = {N, C * b * b, H, W};
  if (!same_dims(y, ed, 4))
    return dml_cpu_err_shapes(c, "output dims must be [N,C*b^2,H/b,W/b]");
  size_t es = dml_dtype_size(x->dtype);
  int64_t o = 0;
  for (int64_t n = 0; n < N; n++)
    for (int64_t oc = 0; oc < C * b * b; oc++)
      for (int64_t h = 0; h < H; h++)
        for (int64_t w = 0; w < W; w++, o++) {
          int64_t blk = crd ? oc % (b * b) : oc / C, ch = crd ? oc / (b * b) : oc % C;
          int64_t i = blk / b, j = blk % b;
          copy_elem((char *)y->data, o, (const char *)x->data,
                    ((n * C + ch) * H * b + h * b + i) * W * b + w * b + j, es);
        }
  return DML_OK;
}

/* ======================================================================
 * TopK (ONNX opset 11; k as input 1 since opset 10): the k largest
 * (largest=1) or smallest elements along axis, as Values and i64 Indices.
 * Equal values keep the lower index first (the spec's tie rule); the result
 * is always sorted, which sorted=0 allows. A float NaN counts as above
 * every number (first for largest, last for smallest), as numpy's sort and
 * PyTorch's topk order it and as the GPU kernels do (codegen/
 * schedule_topk_dft_tfidf.c's topk_before). ONNX does not say; ONNX Runtime
 * 1.31 has no consistent order (a NaN may come first, last or be skipped,
 * by the input's length).
 * ====================================================================== */

typedef struct topk_ent {
  double f;
  int64_t i;
  int64_t idx;
} topk_ent_t;

enum { KEY_F, KEY_S, KEY_U };

static inline int topk_before(const topk_ent_t *a, const topk_ent_t *b, int kind,
                              int largest) {
  if (kind == KEY_F)
    return largest ? a->f > b->f || (isnan(a->f) && !isnan(b->f))
                   : a->f < b->f || (!isnan(a->f) && isnan(b->f));
  if (kind == KEY_U)
    return largest ? (uint64_t)a->i > (uint64_t)b->i : (uint64_t)a->i < (uint64_t)b->i;
  return largest ? a->i > b->i : a->i < b->i;
}

size_t dml_cpus_TopK(const dml_cpu_call_t *c, int threads) {
  const dml_tensor_t *x = &c->inputs[0];
  if (x->rank < 1) return 0;
  int64_t axis;
  if (dml_cpu_norm_axis(dml_cpu_get_int(c, "axis", -1), x->rank, &axis)) return 0;
  int64_t n = x->dims[axis];
  if (n < 0 || (uint64_t)n > SIZE_MAX / (4 * sizeof(topk_ent_t))) return SIZE_MAX;
  return (size_t)n * 2 * sizeof(topk_ent_t);
}

dml_status_t dml_cpuk_TopK(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0], *tk = &c->inputs[1];
  dml_tensor_t *vals = dml_cpu_out(c, 0), *inds = dml_cpu_out(c, 1);
  dml_dtype_t dt = x->dtype;
  if (!dml_dtype_is_float(dt) && !dml_dtype_is_int(dt))
    return dml_cpu_err_dtype(c, "input", dt);
  if (vals && vals->dtype != dt) return dml_cpu_err_dtype(c, "Values", vals->dtype);
  if (inds && inds->dtype != DML_DTYPE_I64 && inds->dtype != DML_DTYPE_I32)
    return dml_cpu_err_dtype(c, "Indices", inds->dtype);
  int32_t r = x->rank;
  int64_t axis;
  if (r < 1 || dml_cpu_norm_axis(dml_cpu_get_int(c, "axis", -1), r, &axis))
    return dml_cpu_err_shapes(c, "axis out of range");
  int64_t kv[1];
  if (dml_cpu_read_ints(tk, kv, 1) != 1)
    return dml_cpu_err_shapes(c, "K must be a one-element integer tensor");
  int64_t k = kv[0], n = x->dims[axis];
  if (k < 0 || k > n)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "K = %lld is out of range [0, %lld] for axis %lld", (long long)k,
                         (long long)n, (long long)axis);
  int64_t ed[DML_MAX_RANK];
  memcpy(ed, x->dims, sizeof(int64_t) * (size_t)r);
  ed[axis] = k;
  if ((vals && !same_dims(vals, ed, r)) || (inds && !same_dims(inds, ed, r)))
    return dml_cpu_err_shapes(c, "outputs must have the input's dims with K at axis");
  int largest = dml_cpu_get_int(c, "largest", 1) != 0;
  int kind = dml_dtype_is_float(dt) ? KEY_F : dt == DML_DTYPE_U64 ? KEY_U : KEY_S;
  int64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < axis; d++) outer *= x->dims[d];
  for (int32_t d = (int32_t)axis + 1; d < r; d++) inner *= x->dims[d];
  if (k == 0 || outer * inner == 0) return DML_OK;
  topk_ent_t *a = (topk_ent_t *)c->scratch, *tmp = a + n;
  size_t es = dml_dtype_size(dt);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t base = o * n * inner + i;
      for (int64_t j = 0; j < n; j++) {
        size_t p = (size_t)(base + j * inner);
        if (kind == KEY_F)
          a[j].f = dml_load_f64(dt, x->data, p);
        else
          a[j].i = dml_load_i64(dt, x->data, p);
        a[j].idx = j;
      }
      /* Stable bottom-up merge sort: ties keep the lower index first. */
      topk_ent_t *src = a, *dst = tmp;
      for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
          int64_t mid = DML_CPU_MIN(lo + w, n), hi = DML_CPU_MIN(lo + 2 * w, n);
          int64_t p = lo, q = mid, t = lo;
          while (p < mid && q < hi)
            dst[t++] = topk_before(&src[q], &src[p], kind, largest) ? src[q++] : src[p++];
          while (p < mid) dst[t++] = src[p++];
          while (q < hi) dst[t++] = src[q++];
        }
        topk_ent_t *sw = src;
        src = dst;
        dst = sw;
      }
      for (int64_t j = 0; j < k; j++) {
        int64_t op = (o * k + j) * inner + i;
        if (vals)
          copy_elem((char *)vals->data, op, (const char *)x->data,
                    base + src[j].idx * inner, es);
        if (inds) dml_store_i64(inds->dtype, inds->data, (size_t)op, src[j].idx);
      }
    }
  return DML_OK;
}

/* ======================================================================
 * ReverseSequence (ONNX opset 10): for each batch b, the first
 * sequence_lens[b] elements along time_axis are reversed, the rest copied.
 * ====================================================================== */

dml_status_t dml_cpuk_ReverseSequence(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0], *sl = &c->inputs[1];
  dml_tensor_t *y = &c->outputs[0];
  if (y->dtype != x->dtype) return dml_cpu_err_dtype(c, "output", y->dtype);
  if (!is_index_dtype(sl->dtype)) return dml_cpu_err_dtype(c, "sequence_lens", sl->dtype);
  int32_t r = x->rank;
  int64_t ba = dml_cpu_get_int(c, "batch_axis", 1),
          ta = dml_cpu_get_int(c, "time_axis", 0);
  if (r < 2 || (ba != 0 && ba != 1) || (ta != 0 && ta != 1) || ba == ta)
    return dml_cpu_err_shapes(
        c, "batch_axis and time_axis must be 0 and 1 (in either order)");
  if (sl->rank != 1 || sl->dims[0] != x->dims[ba])
    return dml_cpu_err_shapes(c, "sequence_lens must have one value per batch");
  if (!same_dims(y, x->dims, r)) return dml_cpu_err_shapes(c, "output dims differ");
  int64_t T = x->dims[ta];
  for (int64_t b = 0; b < x->dims[ba]; b++) {
    int64_t len = idx_at(sl, b);
    if (len < 0 || len > T)
      return dml_cpu_error(c, DML_STATUS_OUT_OF_RANGE,
                           "sequence_lens[%lld] = %lld is out of range [0, %lld]",
                           (long long)b, (long long)len, (long long)T);
  }
  int64_t xs[DML_MAX_RANK], idx[DML_MAX_RANK] = {0};
  dml_cpu_strides(x->dims, r, xs);
  int64_t n = dml_cpu_numel(x);
  size_t es = dml_dtype_size(x->dtype);
  for (int64_t o = 0; o < n; o++, next_index(idx, x->dims, r)) {
    int64_t t = idx[ta], len = idx_at(sl, idx[ba]);
    int64_t src = o + (t < len ? (len - 1 - 2 * t) * xs[ta] : 0);
    copy_elem((char *)y->data, o, (const char *)x->data, src, es);
  }
  return DML_OK;
}

/* ======================================================================
 * MaxUnpool (ONNX opset 11): Y = zeros(output dims); Y[I[i]] = X[i]. The
 * default output spatial dims are (in - 1) * stride + kernel - pad_begin -
 * pad_end. With input 2 (output_shape), the indices still address the
 * default shape: each index's N-D coordinates in the default shape are
 * written at the same coordinates of the output_shape tensor (ONNX's test
 * data, test_maxunpool_export_with_output_shape: a [1,1,4,4] unpooling
 * padded to [1,1,5,5]).
 * ====================================================================== */

dml_status_t dml_cpuk_MaxUnpool(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0], *ind = &c->inputs[1], *os = dml_cpu_in(c, 2);
  dml_tensor_t *y = &c->outputs[0];
  if (y->dtype != x->dtype) return dml_cpu_err_dtype(c, "output", y->dtype);
  if (!is_index_dtype(ind->dtype)) return dml_cpu_err_dtype(c, "I", ind->dtype);
  int32_t r = x->rank, ns = r - 2;
  if (r < 3 || !same_dims(ind, x->dims, r))
    return dml_cpu_err_shapes(c, "X must be [N,C,D1,...] and I must have X's shape");
  size_t nk, np, nst;
  const int64_t *ks = dml_cpu_get_ints(c, "kernel_shape", &nk);
  const int64_t *pads = dml_cpu_get_ints(c, "pads", &np);
  const int64_t *st = dml_cpu_get_ints(c, "strides", &nst);
  if (!ks || nk != (size_t)ns || (pads && np != 2 * (size_t)ns) ||
      (st && nst != (size_t)ns))
    return dml_cpu_err_shapes(c, "kernel_shape, pads or strides do not match the rank");
  int64_t dd[DML_MAX_RANK], ed[DML_MAX_RANK];
  dd[0] = x->dims[0], dd[1] = x->dims[1];
  for (int32_t i = 0; i < ns; i++) {
    dd[2 + i] = (x->dims[2 + i] - 1) * (st ? st[i] : 1) + ks[i] -
                (pads ? pads[i] + pads[ns + i] : 0);
    if (dd[2 + i] < 0)
      return dml_cpu_err_shapes(c, "unpooled dim %d is negative", (int)(2 + i));
  }
  memcpy(ed, dd, sizeof(int64_t) * (size_t)r);
  if (os && dml_cpu_read_ints(os, ed, DML_MAX_RANK) != r)
    return dml_cpu_err_shapes(c, "output_shape must have %d values", (int)r);
  if (!same_dims(y, ed, r))
    return dml_cpu_err_shapes(c, "output dims differ from the unpooled shape");
  int remap = !same_dims(y, dd, r);
  int64_t n = dml_cpu_numel(x), total = dml_dims_numel(dd, r), ys[DML_MAX_RANK];
  dml_cpu_strides(y->dims, r, ys);
  size_t es = dml_dtype_size(x->dtype);
  /* Target offsets are validated before anything is written. */
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) memset(y->data, 0, dml_tensor_bytes(y));
    for (int64_t i = 0; i < n; i++) {
      int64_t v = idx_at(ind, i), off = v;
      if (v < 0 || v >= total)
        return dml_cpu_error(c, DML_STATUS_OUT_OF_RANGE,
                             "index %lld (at position %lld) is out of range [0, %lld)",
                             (long long)v, (long long)i, (long long)total);
      if (remap) {
        off = 0;
        for (int32_t d = r - 1; d >= 0; d--) {
          int64_t q = v % dd[d];
          v /= dd[d];
          if (q >= y->dims[d])
            return dml_cpu_error(
                c, DML_STATUS_OUT_OF_RANGE,
                "index %lld (at position %lld) falls outside output_shape",
                (long long)idx_at(ind, i), (long long)i);
          off += q * ys[d];
        }
      }
      if (pass == 1) copy_elem((char *)y->data, off, (const char *)x->data, i, es);
    }
  }
  return DML_OK;
}
