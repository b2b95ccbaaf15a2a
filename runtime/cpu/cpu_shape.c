/*
 * cpu_shape.c — shape and data-movement ops: the views (Reshape, Flatten,
 * Squeeze, Unsqueeze, Identity), Dropout (inference), Transpose, Concat,
 * Split, Slice, Gather, Shape, Size, Expand, Tile, Pad, ConstantOfShape and
 * Range. Data movement works on every dtype by element size.
 */
#include <math.h>
#include <string.h>

#include "cpu_internal.h"
#include "dml_shape.h"

static int same_dims(const dml_tensor_t *a, const int64_t *dims, int32_t rank) {
  return a->rank == rank && !memcmp(a->dims, dims, sizeof(int64_t) * (size_t)rank);
}

/* Copies n elements of size es with source stride `ss` (elements). */
static void strided_copy(char *dst, const char *src, int64_t n, int64_t ss, size_t es) {
  if (ss == 1) {
    memcpy(dst, src, (size_t)n * es);
    return;
  }
  switch (es) {
    case 1:
      for (int64_t i = 0; i < n; i++) dst[i] = src[i * ss];
      return;
    case 2: {
      uint16_t *d = (uint16_t *)(void *)dst;
      const uint16_t *s = (const uint16_t *)(const void *)src;
      for (int64_t i = 0; i < n; i++) d[i] = s[i * ss];
      return;
    }
    case 4: {
      uint32_t *d = (uint32_t *)(void *)dst;
      const uint32_t *s = (const uint32_t *)(const void *)src;
      for (int64_t i = 0; i < n; i++) d[i] = s[i * ss];
      return;
    }
    case 8: {
      uint64_t *d = (uint64_t *)(void *)dst;
      const uint64_t *s = (const uint64_t *)(const void *)src;
      for (int64_t i = 0; i < n; i++) d[i] = s[i * ss];
      return;
    }
    default:
      for (int64_t i = 0; i < n; i++)
        memcpy(dst + (size_t)i * es, src + (size_t)(i * ss) * es, es);
  }
}

/* Copies an N-D strided view: out (contiguous, dims[]) from src with
 * element strides sstr[] and base offset. */
static void copy_view(char *dst, const char *src, int64_t base, const int64_t *dims,
                      const int64_t *sstr, int32_t rank, size_t es) {
  int64_t total = dml_dims_numel(dims, rank);
  if (total <= 0) return;
  if (rank == 0) {
    memcpy(dst, src + (size_t)base * es, es);
    return;
  }
  int64_t inner = dims[rank - 1], outer = total / inner;
  int64_t idx[DML_MAX_RANK] = {0};
  for (int64_t o = 0; o < outer; o++) {
    int64_t off = base;
    for (int32_t d = 0; d < rank - 1; d++) off += idx[d] * sstr[d];
    strided_copy(dst, src + (size_t)off * es, inner, sstr[rank - 1], es);
    dst += (size_t)inner * es;
    for (int32_t d = rank - 2; d >= 0; d--) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
}

/* ======================================================================
 * Views: Reshape (14), Flatten (13), Squeeze (13), Unsqueeze (13),
 * Identity (16). The output dims are the caller's; the bytes are copied.
 * ====================================================================== */

dml_status_t dml_cpuk_View(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  if (y->dtype != x->dtype) return dml_cpu_err_dtype(c, "output", y->dtype);
  if (dml_cpu_numel(y) != dml_cpu_numel(x))
    return dml_cpu_err_shapes(c, "output has %lld elements, input %lld",
                              (long long)dml_cpu_numel(y), (long long)dml_cpu_numel(x));
  if (y->data != x->data) memcpy(y->data, x->data, dml_tensor_bytes(x));
  return DML_OK;
}

/* Dropout (ONNX opset 13), inference: output = data, mask all true. In
 * training mode: random masks, cpu_random.c. */
dml_status_t dml_cpuk_Dropout(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0], *tm = dml_cpu_in(c, 2),
                     *ratio = dml_cpu_in(c, 1);
  dml_tensor_t *y = &c->outputs[0], *mask = dml_cpu_out(c, 1);
  int training = tm && dml_cpu_numel(tm) > 0 && dml_load_i64(tm->dtype, tm->data, 0) != 0;
  double r = ratio ? dml_cpu_scalar_f64(ratio) : dml_cpu_get_float(c, "ratio", 0.5);
  if (training) return dml_cpu_dropout_train(c, r);
  if (y->dtype != x->dtype) return dml_cpu_err_dtype(c, "output", y->dtype);
  if (dml_cpu_numel(y) != dml_cpu_numel(x))
    return dml_cpu_err_shapes(c, "output size differs");
  memcpy(y->data, x->data, dml_tensor_bytes(x));
  if (mask) {
    if (mask->dtype != DML_DTYPE_BOOL) return dml_cpu_err_dtype(c, "mask", mask->dtype);
    if (dml_cpu_numel(mask) != dml_cpu_numel(x))
      return dml_cpu_err_shapes(c, "mask size differs");
    memset(mask->data, 1, (size_t)dml_cpu_numel(mask));
  }
  return DML_OK;
}

/* ======================================================================
 * Transpose (ONNX opset 13): out.dims[i] = in.dims[perm[i]]; perm defaults
 * to reversed.
 * ====================================================================== */

dml_status_t dml_cpuk_Transpose(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  if (y->dtype != x->dtype) return dml_cpu_err_dtype(c, "output", y->dtype);
  int32_t r = x->rank;
  size_t np;
  const int64_t *pa = dml_cpu_get_ints(c, "perm", &np);
  int64_t perm[DML_MAX_RANK];
  int seen[DML_MAX_RANK] = {0};
  if (pa && np != (size_t)r)
    return dml_cpu_err_shapes(c, "perm has %zu values for rank %d", np, (int)r);
  for (int32_t i = 0; i < r; i++) {
    perm[i] = pa ? pa[i] : r - 1 - i;
    if (perm[i] < 0 || perm[i] >= r || seen[perm[i]]++)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "perm is not a permutation");
  }
  if (y->rank != r) return dml_cpu_err_shapes(c, "output rank differs");
  int64_t istr[DML_MAX_RANK], sstr[DML_MAX_RANK];
  dml_cpu_strides(x->dims, r, istr);
  for (int32_t i = 0; i < r; i++) {
    if (y->dims[i] != x->dims[perm[i]])
      return dml_cpu_err_shapes(c, "output dims do not match perm");
    sstr[i] = istr[perm[i]];
  }
  size_t es = dml_dtype_size(x->dtype);
  if (es == 4 && r == 2 && x->dims[0] > 8 && x->dims[1] > 8) {
    /* Blocked 2-D transpose. */
    int64_t R = x->dims[0], C = x->dims[1];
    const uint32_t *s = (const uint32_t *)x->data;
    uint32_t *d = (uint32_t *)y->data;
    for (int64_t i0 = 0; i0 < R; i0 += 32)
      for (int64_t j0 = 0; j0 < C; j0 += 32)
        for (int64_t i = i0; i < DML_CPU_MIN(R, i0 + 32); i++)
          for (int64_t j = j0; j < DML_CPU_MIN(C, j0 + 32); j++)
            d[j * R + i] = s[i * C + j];
    return DML_OK;
  }
  copy_view((char *)y->data, (const char *)x->data, 0, y->dims, sstr, r, es);
  return DML_OK;
}

/* ======================================================================
 * Concat (ONNX opset 13) and Split (opset 13/18: `split` attribute or
 * input, else equal parts / num_outputs).
 * ====================================================================== */

dml_status_t dml_cpuk_Concat(const dml_cpu_call_t *c) {
  dml_tensor_t *y = &c->outputs[0];
  int32_t r = y->rank;
  int64_t axis;
  if (r == 0 || dml_cpu_norm_axis(dml_cpu_get_int(c, "axis", 0), r, &axis))
    return dml_cpu_err_shapes(c, "axis out of range");
  int64_t sum = 0;
  for (uint32_t i = 0; i < c->n_inputs; i++) {
    const dml_tensor_t *t = &c->inputs[i];
    if (t->dtype != y->dtype) return dml_cpu_err_dtype(c, "input", t->dtype);
    if (t->rank != r) return dml_cpu_err_shapes(c, "input %u has another rank", i);
    for (int32_t d = 0; d < r; d++)
      if (d != axis && t->dims[d] != y->dims[d])
        return dml_cpu_err_shapes(c, "input %u differs outside the axis", i);
    sum += t->dims[axis];
  }
  if (sum != y->dims[axis])
    return dml_cpu_err_shapes(c, "inputs do not add up to the output");
  size_t es = dml_dtype_size(y->dtype);
  int64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < axis; d++) outer *= y->dims[d];
  for (int32_t d = (int32_t)axis + 1; d < r; d++) inner *= y->dims[d];
  char *dst = (char *)y->data;
  for (int64_t o = 0; o < outer; o++)
    for (uint32_t i = 0; i < c->n_inputs; i++) {
      const dml_tensor_t *t = &c->inputs[i];
      size_t chunk = (size_t)(t->dims[axis] * inner) * es;
      if (chunk) memcpy(dst, (const char *)t->data + (size_t)o * chunk, chunk);
      dst += chunk;
    }
  return DML_OK;
}

dml_status_t dml_cpuk_Split(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  int32_t r = x->rank;
  int64_t axis;
  if (r == 0 || dml_cpu_norm_axis(dml_cpu_get_int(c, "axis", 0), r, &axis))
    return dml_cpu_err_shapes(c, "axis out of range");
  /* The output dims are the caller's; a `split` given must agree. */
  int64_t split[64];
  int64_t ns = -1;
  size_t na;
  const int64_t *sa = dml_cpu_get_ints(c, "split", &na);
  if (sa) {
    if (na > 64) return dml_cpu_err_shapes(c, "too many outputs");
    for (size_t i = 0; i < na; i++) split[i] = sa[i];
    ns = (int64_t)na;
  } else if (dml_cpu_in(c, 1)) {
    ns = dml_cpu_read_ints(dml_cpu_in(c, 1), split, 64);
    if (ns < 0) return dml_cpu_err_shapes(c, "split must be a 1-D integer tensor");
  }
  if (ns >= 0 && ns != (int64_t)c->n_outputs)
    return dml_cpu_err_shapes(c, "split has %lld values for %u outputs", (long long)ns,
                              c->n_outputs);
  int64_t sum = 0;
  for (uint32_t i = 0; i < c->n_outputs; i++) {
    const dml_tensor_t *t = &c->outputs[i];
    if (t->dtype != x->dtype) return dml_cpu_err_dtype(c, "output", t->dtype);
    if (t->rank != r) return dml_cpu_err_shapes(c, "output %u has another rank", i);
    for (int32_t d = 0; d < r; d++)
      if (d != axis && t->dims[d] != x->dims[d])
        return dml_cpu_err_shapes(c, "output %u differs outside the axis", i);
    if (ns >= 0 && split[i] != t->dims[axis])
      return dml_cpu_err_shapes(c, "output %u does not match split", i);
    sum += t->dims[axis];
  }
  if (sum != x->dims[axis])
    return dml_cpu_err_shapes(c, "outputs do not add up to the input");
  size_t es = dml_dtype_size(x->dtype);
  int64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < axis; d++) outer *= x->dims[d];
  for (int32_t d = (int32_t)axis + 1; d < r; d++) inner *= x->dims[d];
  const char *src = (const char *)x->data;
  for (int64_t o = 0; o < outer; o++)
    for (uint32_t i = 0; i < c->n_outputs; i++) {
      dml_tensor_t *t = &c->outputs[i];
      size_t chunk = (size_t)(t->dims[axis] * inner) * es;
      if (chunk && t->data) memcpy((char *)t->data + (size_t)o * chunk, src, chunk);
      src += chunk;
    }
  return DML_OK;
}

/* ======================================================================
 * Slice (ONNX opset 13): starts, ends, axes, steps as inputs; negative
 * starts/ends count from the end; clamped as dml_shape_slice() (dml_shape.h)
 * says, the rule shape inference uses.
 * ====================================================================== */

dml_status_t dml_cpuk_Slice(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  int32_t r = x->rank;
  if (y->dtype != x->dtype) return dml_cpu_err_dtype(c, "output", y->dtype);
  int64_t starts[DML_MAX_RANK], ends[DML_MAX_RANK], axes[DML_MAX_RANK],
      steps[DML_MAX_RANK];
  int64_t n = dml_cpu_read_ints(&c->inputs[1], starts, DML_MAX_RANK);
  int64_t ne = dml_cpu_read_ints(&c->inputs[2], ends, DML_MAX_RANK);
  if (n < 0 || ne != n)
    return dml_cpu_err_shapes(
        c, "starts and ends must be 1-D integer tensors of equal length <= %d",
        DML_MAX_RANK);
  const dml_tensor_t *ta = dml_cpu_in(c, 3), *ts = dml_cpu_in(c, 4);
  if (ta) {
    if (dml_cpu_read_ints(ta, axes, DML_MAX_RANK) != n)
      return dml_cpu_err_shapes(c, "axes must match starts");
  } else {
    for (int64_t i = 0; i < n; i++) axes[i] = i;
  }
  if (ts) {
    if (dml_cpu_read_ints(ts, steps, DML_MAX_RANK) != n)
      return dml_cpu_err_shapes(c, "steps must match starts");
  } else {
    for (int64_t i = 0; i < n; i++) steps[i] = 1;
  }
  int64_t st[DML_MAX_RANK], sp[DML_MAX_RANK], cnt[DML_MAX_RANK];
  int seen[DML_MAX_RANK] = {0};
  for (int32_t d = 0; d < r; d++) st[d] = 0, sp[d] = 1, cnt[d] = x->dims[d];
  for (int64_t i = 0; i < n; i++) {
    int64_t a;
    if (dml_cpu_norm_axis(axes[i], r, &a) || seen[a]++)
      return dml_cpu_err_shapes(c, "axis %lld is out of range or repeated",
                                (long long)axes[i]);
    int64_t dim = x->dims[a], s = starts[i], e = ends[i], step = steps[i];
    if (step == 0)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "step must not be 0");
    int64_t count = dml_shape_slice(dim, s, e, step, &s);
    st[a] = s, sp[a] = step, cnt[a] = count;
  }
  if (!same_dims(y, cnt, r))
    return dml_cpu_err_shapes(c, "output dims do not match the slice");
  if (dml_cpu_numel(y) == 0) return DML_OK;
  int64_t istr[DML_MAX_RANK], sstr[DML_MAX_RANK], base = 0;
  dml_cpu_strides(x->dims, r, istr);
  for (int32_t d = 0; d < r; d++) base += st[d] * istr[d], sstr[d] = sp[d] * istr[d];
  copy_view((char *)y->data, (const char *)x->data, base, y->dims, sstr, r,
            dml_dtype_size(x->dtype));
  return DML_OK;
}

/* ======================================================================
 * Gather (ONNX opset 13): out = data[..., indices, ...] along axis;
 * negative indices count from the end; out of range -> OUT_OF_RANGE.
 * ====================================================================== */

dml_status_t dml_cpuk_Gather(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0], *ind = &c->inputs[1];
  dml_tensor_t *y = &c->outputs[0];
  if (y->dtype != x->dtype) return dml_cpu_err_dtype(c, "output", y->dtype);
  if (ind->dtype != DML_DTYPE_I64 && ind->dtype != DML_DTYPE_I32)
    return dml_cpu_err_dtype(c, "indices", ind->dtype);
  int32_t r = x->rank;
  int64_t axis;
  if (r == 0 || dml_cpu_norm_axis(dml_cpu_get_int(c, "axis", 0), r, &axis))
    return dml_cpu_err_shapes(c, "axis out of range");
  int64_t ed[DML_MAX_RANK * 2];
  int32_t er = 0;
  for (int32_t d = 0; d < axis; d++) ed[er++] = x->dims[d];
  for (int32_t d = 0; d < ind->rank; d++) ed[er++] = ind->dims[d];
  for (int32_t d = (int32_t)axis + 1; d < r; d++) ed[er++] = x->dims[d];
  if (er > DML_MAX_RANK || !same_dims(y, ed, er))
    return dml_cpu_err_shapes(
        c, "output dims do not match data[:axis] + indices + data[axis+1:]");
  int64_t outer = 1, inner = 1, N = x->dims[axis], ni = dml_cpu_numel(ind);
  for (int32_t d = 0; d < axis; d++) outer *= x->dims[d];
  for (int32_t d = (int32_t)axis + 1; d < r; d++) inner *= x->dims[d];
  for (int64_t j = 0; j < ni; j++) {
    int64_t v = dml_load_i64(ind->dtype, ind->data, (size_t)j);
    if (v < -N || v >= N)
      return dml_cpu_error(
          c, DML_STATUS_OUT_OF_RANGE,
          "index %lld (at position %lld) is out of range [-%lld, %lld] for axis "
          "%lld",
          (long long)v, (long long)j, (long long)N, (long long)(N - 1), (long long)axis);
  }
  size_t es = dml_dtype_size(x->dtype), row = (size_t)inner * es;
  char *dst = (char *)y->data;
  const char *src = (const char *)x->data;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < ni; j++) {
      int64_t v = dml_load_i64(ind->dtype, ind->data, (size_t)j);
      if (v < 0) v += N;
      if (row) memcpy(dst, src + ((size_t)(o * N + v)) * row, row);
      dst += row;
    }
  return DML_OK;
}

/* ======================================================================
 * Shape (ONNX opset 15: start/end attributes, clamped) and Size (13).
 * ====================================================================== */

dml_status_t dml_cpuk_Shape(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  if (y->dtype != DML_DTYPE_I64) return dml_cpu_err_dtype(c, "output", y->dtype);
  int64_t r = x->rank;
  int64_t s = dml_cpu_get_int(c, "start", 0), e = dml_cpu_get_int(c, "end", r);
  if (s < 0) s += r;
  if (e < 0) e += r;
  s = DML_CPU_MAX((int64_t)0, DML_CPU_MIN(s, r));
  e = DML_CPU_MAX((int64_t)0, DML_CPU_MIN(e, r));
  int64_t n = e > s ? e - s : 0;
  if (y->rank != 1 || y->dims[0] != n)
    return dml_cpu_err_shapes(c, "output must be [%lld]", (long long)n);
  for (int64_t i = 0; i < n; i++) ((int64_t *)y->data)[i] = x->dims[s + i];
  return DML_OK;
}

dml_status_t dml_cpuk_Size(const dml_cpu_call_t *c) {
  dml_tensor_t *y = &c->outputs[0];
  if (y->dtype != DML_DTYPE_I64) return dml_cpu_err_dtype(c, "output", y->dtype);
  if (dml_cpu_numel(y) != 1) return dml_cpu_err_shapes(c, "output must be a scalar");
  *(int64_t *)y->data = dml_cpu_numel(&c->inputs[0]);
  return DML_OK;
}

/* ======================================================================
 * Expand (ONNX opset 13): broadcast input to broadcast(input.shape, shape).
 * Tile (13): out.dims[i] = in.dims[i] * repeats[i].
 * ====================================================================== */

dml_status_t dml_cpuk_Expand(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  if (y->dtype != x->dtype) return dml_cpu_err_dtype(c, "output", y->dtype);
  int64_t shp[DML_MAX_RANK];
  int64_t ns = dml_cpu_read_ints(&c->inputs[1], shp, DML_MAX_RANK);
  if (ns < 0)
    return dml_cpu_err_shapes(c, "shape must be a 1-D integer tensor of <= %d values",
                              DML_MAX_RANK);
  /* expected = broadcast(x.dims, shape) */
  int32_t er = (int32_t)DML_CPU_MAX((int64_t)x->rank, ns);
  int64_t ed[DML_MAX_RANK];
  for (int32_t d = 0; d < er; d++) {
    int32_t ix = d - (er - x->rank), is = d - (er - (int32_t)ns);
    int64_t a = ix >= 0 ? x->dims[ix] : 1, b = is >= 0 ? shp[is] : 1;
    if (a != b && a != 1 && b != 1)
      return dml_cpu_err_shapes(c, "shape does not broadcast with the input");
    ed[d] = a == 1 ? b : a;
  }
  if (!same_dims(y, ed, er))
    return dml_cpu_err_shapes(c, "output dims differ from the broadcast shape");
  if (dml_cpu_broadcast_copy(x, y))
    return dml_cpu_err_shapes(c, "input does not broadcast");
  return DML_OK;
}

dml_status_t dml_cpuk_Tile(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  if (y->dtype != x->dtype) return dml_cpu_err_dtype(c, "output", y->dtype);
  int32_t r = x->rank;
  int64_t rep[DML_MAX_RANK], ed[DML_MAX_RANK];
  if (dml_cpu_read_ints(&c->inputs[1], rep, DML_MAX_RANK) != r)
    return dml_cpu_err_shapes(c, "repeats must have one value per input dim");
  for (int32_t d = 0; d < r; d++) {
    if (rep[d] < 0)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "repeats must be >= 0");
    ed[d] = x->dims[d] * rep[d];
  }
  if (!same_dims(y, ed, r))
    return dml_cpu_err_shapes(c, "output dims must be input dims * repeats");
  int64_t total = dml_cpu_numel(y);
  size_t es = dml_dtype_size(x->dtype);
  if (total == 0) return DML_OK;
  if (r == 0) {
    memcpy(y->data, x->data, es);
    return DML_OK;
  }
  int64_t istr[DML_MAX_RANK];
  dml_cpu_strides(x->dims, r, istr);
  int64_t in_row = x->dims[r - 1], outer = total / y->dims[r - 1];
  int64_t idx[DML_MAX_RANK] = {0};
  char *dst = (char *)y->data;
  for (int64_t o = 0; o < outer; o++) {
    int64_t off = 0;
    for (int32_t d = 0; d < r - 1; d++) off += (idx[d] % x->dims[d]) * istr[d];
    const char *src = (const char *)x->data + (size_t)off * es;
    for (int64_t k = 0; k < rep[r - 1]; k++) {
      memcpy(dst, src, (size_t)in_row * es);
      dst += (size_t)in_row * es;
    }
    for (int32_t d = r - 2; d >= 0; d--) {
      if (++idx[d] < y->dims[d]) break;
      idx[d] = 0;
    }
  }
  return DML_OK;
}

/* ======================================================================
 * Pad (ONNX opset 13, `pads`/`value` attributes of opset 2 accepted):
 * modes constant, reflect, edge (and wrap, opset 19); negative pads crop.
 * ====================================================================== */

static int64_t pad_sum_out(const dml_cpu_call_t *c) {
  int64_t s = 0;
  for (int32_t d = 0; d < c->outputs[0].rank; d++) s += c->outputs[0].dims[d];
  return s;
}

size_t dml_cpus_Pad(const dml_cpu_call_t *c, int threads) {
  int64_t s = pad_sum_out(c);
  return s > 0 ? (size_t)s * sizeof(int64_t) : 0;
}

int64_t dml_cpu_pad_source(int m, int64_t o, int64_t pb, int64_t n) {
  int64_t i = o - pb;
  if (i >= 0 && i < n) return i;
  if (m == 0 || n <= 0) return -1;
  if (m == 2) return i < 0 ? 0 : n - 1;
  if (m == 3) return ((i % n) + n) % n;
  if (n == 1) return 0;
  int64_t per = 2 * (n - 1);
  i = ((i % per) + per) % per;
  return i >= n ? per - i : i;
}

dml_status_t dml_cpuk_Pad(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  if (y->dtype != dt) return dml_cpu_err_dtype(c, "output", y->dtype);
  int32_t r = x->rank;
  int64_t pads[2 * DML_MAX_RANK];
  size_t na;
  const int64_t *pa = dml_cpu_get_ints(c, "pads", &na);
  int64_t np;
  if (pa) {
    if (na > 2 * DML_MAX_RANK) return dml_cpu_err_shapes(c, "too many pads");
    for (size_t i = 0; i < na; i++) pads[i] = pa[i];
    np = (int64_t)na;
  } else {
    np = dml_cpu_read_ints(&c->inputs[1], pads, 2 * DML_MAX_RANK);
  }
  if (np != 2 * r) return dml_cpu_err_shapes(c, "pads must have %d values", 2 * (int)r);
  const char *mode = dml_cpu_get_string(c, "mode", "constant");
  int m = strcmp(mode, "constant") == 0  ? 0
          : strcmp(mode, "reflect") == 0 ? 1
          : strcmp(mode, "edge") == 0    ? 2
          : strcmp(mode, "wrap") == 0    ? 3
                                         : -1;
  if (m < 0)
    return dml_cpu_error(c, DML_STATUS_UNIMPLEMENTED, "mode '%s' is not supported", mode);
  int64_t ed[DML_MAX_RANK];
  for (int32_t d = 0; d < r; d++) {
    ed[d] = x->dims[d] + pads[d] + pads[r + d];
    if (ed[d] < 0) return dml_cpu_err_shapes(c, "pads crop below zero");
  }
  if (!same_dims(y, ed, r))
    return dml_cpu_err_shapes(c, "output dims must be input dims + pads");
  size_t es = dml_dtype_size(dt);
  char value[16] = {0};
  const dml_tensor_t *cv = dml_cpu_in(c, 2);
  if (dml_attr_find(c->attrs, c->n_attrs, "value")) {
    dml_store_f64(dt, value, 0, dml_cpu_get_float(c, "value", 0.0));
  } else if (cv && dml_cpu_numel(cv) >= 1) {
    if (cv->dtype == dt)
      memcpy(value, cv->data, es);
    else if (dml_dtype_is_float(dt))
      dml_store_f64(dt, value, 0, dml_load_f64(cv->dtype, cv->data, 0));
    else
      dml_store_i64(dt, value, 0, dml_load_i64(cv->dtype, cv->data, 0));
  }
  int64_t total = dml_cpu_numel(y);
  if (total == 0) return DML_OK;
  if (r == 0) {
    memcpy(y->data, x->data, es);
    return DML_OK;
  }
  /* Per-dim maps from output coordinate to input coordinate (-1: pad value). */
  int64_t *maps[DML_MAX_RANK];
  int64_t *mp = (int64_t *)c->scratch;
  for (int32_t d = 0; d < r; d++) {
    maps[d] = mp;
    int64_t n = x->dims[d];
    for (int64_t o = 0; o < y->dims[d]; o++) {
      int64_t i = o - pads[d];
      if ((i < 0 || i >= n) && m != 0 && n == 0)
        return dml_cpu_err_shapes(c, "cannot %s-pad an empty dim", mode);
      mp[o] = dml_cpu_pad_source(m, o, pads[d], n);
    }
    mp += y->dims[d];
  }
  int64_t istr[DML_MAX_RANK];
  dml_cpu_strides(x->dims, r, istr);
  int64_t inner = y->dims[r - 1], outer = total / inner;
  int64_t idx[DML_MAX_RANK] = {0};
  char *dst = (char *)y->data;
  const char *src = (const char *)x->data;
  for (int64_t o = 0; o < outer; o++) {
    int64_t off = 0, fill = 0;
    for (int32_t d = 0; d < r - 1; d++) {
      int64_t i = maps[d][idx[d]];
      if (i < 0) fill = 1;
      off += i * istr[d];
    }
    for (int64_t k = 0; k < inner; k++, dst += es) {
      int64_t i = maps[r - 1][k];
      if (fill || i < 0)
        memcpy(dst, value, es);
      else
        memcpy(dst, src + (size_t)(off + i) * es, es);
    }
    for (int32_t d = r - 2; d >= 0; d--) {
      if (++idx[d] < y->dims[d]) break;
      idx[d] = 0;
    }
  }
  return DML_OK;
}

/* ======================================================================
 * ConstantOfShape (ONNX opset 9): fill with attribute `value` (a
 * one-element tensor; default f32 0), converted to the output dtype.
 * Range (opset 11): start + i*delta for i < max(ceil((limit-start)/delta), 0).
 * ====================================================================== */

dml_status_t dml_cpuk_ConstantOfShape(const dml_cpu_call_t *c) {
  dml_tensor_t *y = &c->outputs[0];
  int64_t shp[DML_MAX_RANK];
  int64_t ns = dml_cpu_read_ints(&c->inputs[0], shp, DML_MAX_RANK);
  if (ns < 0)
    return dml_cpu_err_shapes(c, "input must be a 1-D integer tensor of <= %d values",
                              DML_MAX_RANK);
  if (!same_dims(y, shp, (int32_t)ns))
    return dml_cpu_err_shapes(c, "output dims differ from the input shape");
  dml_dtype_t dt = y->dtype;
  size_t es = dml_dtype_size(dt);
  char value[16] = {0};
  const dml_attr_t *a = dml_attr_find(c->attrs, c->n_attrs, "value");
  if (a) {
    if (a->kind != DML_ATTR_TENSOR || dml_cpu_numel(&a->tensor) != 1 || !a->tensor.data)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "value must be a one-element tensor");
    dml_dtype_t vt = a->tensor.dtype;
    if (vt == dt)
      memcpy(value, a->tensor.data, es);
    else if (dml_dtype_is_float(vt) || dml_dtype_is_float(dt))
      dml_store_f64(dt, value, 0, dml_load_f64(vt, a->tensor.data, 0));
    else
      dml_store_i64(dt, value, 0, dml_load_i64(vt, a->tensor.data, 0));
  }
  int64_t n = dml_cpu_numel(y);
  char *d = (char *)y->data;
  for (int64_t i = 0; i < n; i++) memcpy(d + (size_t)i * es, value, es);
  return DML_OK;
}

dml_status_t dml_cpuk_Range(const dml_cpu_call_t *c) {
  const dml_tensor_t *ts = &c->inputs[0], *tl = &c->inputs[1], *td = &c->inputs[2];
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = ts->dtype;
  if ((!dml_dtype_is_float(dt) && !dml_dtype_is_int(dt)) || tl->dtype != dt ||
      td->dtype != dt || y->dtype != dt)
    return dml_cpu_err_dtype(c, "input", dt);
  if (dml_cpu_numel(ts) != 1 || dml_cpu_numel(tl) != 1 || dml_cpu_numel(td) != 1)
    return dml_cpu_err_shapes(c, "start, limit and delta must be scalars");
  int64_t n;
  if (dml_dtype_is_float(dt)) {
    double s = dml_load_f64(dt, ts->data, 0), l = dml_load_f64(dt, tl->data, 0),
           d = dml_load_f64(dt, td->data, 0);
    if (d == 0)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "delta must not be 0");
    double q = ceil((l - s) / d);
    n = q > 0 ? (int64_t)q : 0;
    if (y->rank != 1 || y->dims[0] != n)
      return dml_cpu_err_shapes(c, "output must be [%lld]", (long long)n);
    for (int64_t i = 0; i < n; i++) {
      if (dt == DML_DTYPE_F32)
        ((float *)y->data)[i] = (float)s + (float)i * (float)d;
      else
        dml_store_f64(dt, y->data, (size_t)i, s + (double)i * d);
    }
    return DML_OK;
  }
  int64_t s = dml_load_i64(dt, ts->data, 0), l = dml_load_i64(dt, tl->data, 0),
          d = dml_load_i64(dt, td->data, 0);
  if (d == 0) return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "delta must not be 0");
  if (d > 0)
    n = l > s ? (int64_t)(((uint64_t)l - (uint64_t)s + (uint64_t)d - 1) / (uint64_t)d)
              : 0;
  else
    n = s > l
            ? (int64_t)(((uint64_t)s - (uint64_t)l + (uint64_t)(-d) - 1) / (uint64_t)(-d))
            : 0;
  if (y->rank != 1 || y->dims[0] != n)
    return dml_cpu_err_shapes(c, "output must be [%lld]", (long long)n);
  for (int64_t i = 0; i < n; i++)
    dml_store_i64(dt, y->data, (size_t)i,
                  (int64_t)((uint64_t)s + (uint64_t)i * (uint64_t)d));
  return DML_OK;
}
