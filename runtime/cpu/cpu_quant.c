/*
 * cpu_quant.c — linear quantization ops (ONNX operator spec):
 * QuantizeLinear and DequantizeLinear (opset 13: per-tensor or per-axis
 * scale/zero point), DynamicQuantizeLinear (11), MatMulInteger (10),
 * ConvInteger (10), QLinearMatMul (10) and QLinearConv (10).
 *
 * Quantized tensors are u8 or i8 (DequantizeLinear also takes i32 with a
 * zero point of 0); scales are f32. Rounding is to nearest, ties to even
 * (rint in the default rounding mode), then saturation to the target
 * range. Integer accumulation is exact (int64, stored as i32 for the
 * *Integer ops); requantization is done in double.
 */
#include <math.h>
#include <string.h>

#include "cpu_internal.h"

static int is_q8(dml_dtype_t dt) {
  return dt == DML_DTYPE_U8 || dt == DML_DTYPE_I8;
}
static inline int64_t ldq(dml_dtype_t dt, const void *p, int64_t i) {
  return dt == DML_DTYPE_U8 ? (int64_t)((const uint8_t *)p)[i]
                            : (int64_t)((const int8_t *)p)[i];
}
/* Rounds half to even and saturates to dt's range, then stores. */
static inline void stq(dml_dtype_t dt, void *p, int64_t i, double v) {
  double lo = dt == DML_DTYPE_U8 ? 0 : -128, hi = dt == DML_DTYPE_U8 ? 255 : 127;
  v = rint(v);
  if (!(v >= lo)) v = lo; /* NaN saturates low */
  if (v > hi) v = hi;
  if (dt == DML_DTYPE_U8)
    ((uint8_t *)p)[i] = (uint8_t)v;
  else
    ((int8_t *)p)[i] = (int8_t)v;
}

/* The output range [lo, hi] of QLinearConv / QLinearMatMul: y's dtype range,
 * narrowed by dmlc's attribute dml_clamp = [lo, hi] (set by the qdq-fuse
 * pass, passes/qdq_fuse.c, for a Relu or Clip folded into the
 * requantization: both are clamps of the quantized output). */
dml_status_t dml_cpu_qclamp(const dml_cpu_call_t *c, dml_dtype_t dt, int32_t *lo,
                            int32_t *hi) {
  *lo = dt == DML_DTYPE_U8 ? 0 : -128;
  *hi = *lo + 255;
  size_t n = 0;
  const int64_t *r = dml_cpu_get_ints(c, "dml_clamp", &n);
  if (!r) return DML_OK;
  if (n != 2 || r[0] > r[1] || r[0] < *lo || r[1] > *hi)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "dml_clamp must be [lo, hi] within y's range");
  *lo = (int32_t)r[0];
  *hi = (int32_t)r[1];
  return DML_OK;
}

/* stq, then the clamp to [lo, hi] (inside dt's range). */
static inline void stq_c(dml_dtype_t dt, void *p, int64_t i, double v, int32_t lo,
                         int32_t hi) {
  v = rint(v);
  if (!(v >= lo)) v = lo;
  if (v > hi) v = hi;
  stq(dt, p, i, v);
}

/* Per-tensor or per-axis parameters: element index -> parameter index. */
typedef struct {
  int64_t inner, n; /* per-axis: (i / inner) % n; n == 1: per-tensor */
} qaxis_t;

static dml_status_t q_axis(const dml_cpu_call_t *c, const dml_tensor_t *x,
                           const dml_tensor_t *scale, const dml_tensor_t *zp,
                           qaxis_t *q) {
  q->inner = 1;
  q->n = 1;
  int64_t ns = dml_cpu_numel(scale);
  if (zp && (zp->rank != scale->rank || dml_cpu_numel(zp) != ns))
    return dml_cpu_err_shapes(c, "zero point and scale must have the same shape");
  if (scale->rank == 0 || (scale->rank == 1 && ns == 1 && x->rank == 0)) return DML_OK;
  if (scale->rank != 1)
    return dml_cpu_err_shapes(c, "scale must be a scalar or 1-D (per axis)");
  int64_t ax;
  if (dml_cpu_norm_axis(dml_cpu_get_int(c, "axis", 1), x->rank, &ax))
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "axis %lld is out of range",
                         (long long)dml_cpu_get_int(c, "axis", 1));
  if (x->dims[ax] != ns) {
    if (ns == 1) return DML_OK;
    return dml_cpu_err_shapes(c, "scale has %lld elements, axis %lld has %lld",
                              (long long)ns, (long long)ax, (long long)x->dims[ax]);
  }
  for (int32_t i = (int32_t)ax + 1; i < x->rank; i++) q->inner *= x->dims[i];
  q->n = ns;
  return DML_OK;
}
static inline int64_t q_idx(const qaxis_t *q, int64_t i) {
  return q->n == 1 ? 0 : (i / q->inner) % q->n;
}

/* A float8 zero point must be 0 (onnx.reference's DequantizeLinear refuses
 * any other; QuantizeLinear-19's float8 form has no zero-point term). */
static dml_status_t f8_zero_point(const dml_cpu_call_t *c, const dml_tensor_t *zp,
                                  const char *what) {
  if (!zp) return DML_OK;
  if (!dml_dtype_is_float8(zp->dtype)) return dml_cpu_err_dtype(c, what, zp->dtype);
  for (int64_t i = 0; i < dml_cpu_numel(zp); i++)
    if (dml_load_f64(zp->dtype, zp->data, (size_t)i) != 0.0)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "%s[%lld] is %g: a float8 zero point must be 0", what,
                           (long long)i, dml_load_f64(zp->dtype, zp->data, (size_t)i));
  return DML_OK;
}

/* The scale: f32, f16 or bf16, per tensor or per axis (q_axis). */
static dml_status_t f8_scale(const dml_cpu_call_t *c, const dml_tensor_t *x,
                             const dml_tensor_t *s, const char *what, qaxis_t *q) {
  if (s->dtype != DML_DTYPE_F32 && s->dtype != DML_DTYPE_F16 &&
      s->dtype != DML_DTYPE_BF16)
    return dml_cpu_err_dtype(c, what, s->dtype);
  return q_axis(c, x, s, NULL, q);
}

/* QuantizeLinear-19 to float8 (the zero point's dtype): y = float8(x /
 * y_scale) with x / y_scale in x's dtype (f32 division, then rounded to
 * f16/bf16 for those, as NumPy computes the reference), converted by
 * dml_f8_from_f64 with the node's `saturate` (default 1). */
static dml_status_t quantize_f8(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0], *s = &c->inputs[1], *zp = dml_cpu_in(c, 2);
  dml_tensor_t *y = &c->outputs[0];
  if (x->dtype != s->dtype) return dml_cpu_err_dtype(c, "x", x->dtype);
  if (y->dtype != zp->dtype) return dml_cpu_err_dtype(c, "y", y->dtype);
  if (dml_cpu_numel(y) != dml_cpu_numel(x))
    return dml_cpu_err_shapes(c, "y must have x's shape");
  qaxis_t q;
  DML_RETURN_IF_ERROR(f8_scale(c, x, s, "y_scale", &q));
  DML_RETURN_IF_ERROR(f8_zero_point(c, zp, "y_zero_point"));
  int sat = dml_cpu_get_int(c, "saturate", 1) != 0;
  uint8_t *yd = (uint8_t *)y->data;
  for (int64_t i = 0; i < dml_cpu_numel(x); i++) {
    float v = (float)dml_load_f64(x->dtype, x->data, (size_t)i) /
              (float)dml_load_f64(s->dtype, s->data, (size_t)q_idx(&q, i));
    double r = v;
    if (x->dtype == DML_DTYPE_F16) r = dml_f16_to_f32(dml_f32_to_f16(v));
    if (x->dtype == DML_DTYPE_BF16) r = dml_bf16_to_f32(dml_f32_to_bf16(v));
    yd[i] = dml_f8_from_f64(y->dtype, r, sat, DML_F8_ROUND_UP);
  }
  return DML_OK;
}

/* DequantizeLinear-19 of float8 x: y = float(x) * x_scale in f32, stored
 * in the scale's dtype (f32, f16 or bf16). */
static dml_status_t dequantize_f8(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0], *s = &c->inputs[1], *zp = dml_cpu_in(c, 2);
  dml_tensor_t *y = &c->outputs[0];
  if (dml_cpu_get_int(c, "block_size", 0) != 0)
    return dml_cpu_error(c, DML_STATUS_UNIMPLEMENTED,
                         "block_size with float8 x is not supported");
  if (y->dtype != s->dtype) return dml_cpu_err_dtype(c, "y", y->dtype);
  if (dml_cpu_numel(y) != dml_cpu_numel(x))
    return dml_cpu_err_shapes(c, "y must have x's shape");
  qaxis_t q;
  DML_RETURN_IF_ERROR(f8_scale(c, x, s, "x_scale", &q));
  if (zp && zp->dtype != x->dtype) return dml_cpu_err_dtype(c, "x_zero_point", zp->dtype);
  DML_RETURN_IF_ERROR(f8_zero_point(c, zp, "x_zero_point"));
  for (int64_t i = 0; i < dml_cpu_numel(x); i++) {
    float v = (float)dml_load_f64(x->dtype, x->data, (size_t)i) *
              (float)dml_load_f64(s->dtype, s->data, (size_t)q_idx(&q, i));
    dml_store_f64(y->dtype, y->data, (size_t)i, v);
  }
  return DML_OK;
}

/* QuantizeLinear: y = saturate(round(x / y_scale) + y_zero_point); y has
 * the zero point's dtype (u8 without one). x f32 or i32. A float8 zero
 * point: quantize_f8. */
dml_status_t dml_cpuk_QuantizeLinear(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0], *s = &c->inputs[1], *zp = dml_cpu_in(c, 2);
  dml_tensor_t *y = &c->outputs[0];
  if (zp && dml_dtype_is_float8(zp->dtype)) return quantize_f8(c);
  if (x->dtype != DML_DTYPE_F32 && x->dtype != DML_DTYPE_I32)
    return dml_cpu_err_dtype(c, "x", x->dtype);
  if (s->dtype != DML_DTYPE_F32) return dml_cpu_err_dtype(c, "y_scale", s->dtype);
  dml_dtype_t yt = zp ? zp->dtype : DML_DTYPE_U8;
  if (!is_q8(yt) || y->dtype != yt) return dml_cpu_err_dtype(c, "y", y->dtype);
  if (dml_cpu_numel(y) != dml_cpu_numel(x))
    return dml_cpu_err_shapes(c, "y must have x's shape");
  qaxis_t q;
  DML_RETURN_IF_ERROR(q_axis(c, x, s, zp, &q));
  const float *sc = (const float *)s->data;
  int64_t n = dml_cpu_numel(x);
  if (q.n == 1 && x->dtype == DML_DTYPE_F32) { /* the same formula, vectorized */
    dml_cpu_quantize_f32((const float *)x->data, n, sc[0],
                         zp ? (int32_t)ldq(zp->dtype, zp->data, 0) : 0,
                         yt == DML_DTYPE_U8, y->data);
    return DML_OK;
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t k = q_idx(&q, i);
    double xv = dml_load_f64(x->dtype, x->data, (size_t)i);
    /* x / scale in the input precision (f32), as the spec's reference. */
    double v = x->dtype == DML_DTYPE_F32 ? (double)(float)((float)xv / sc[k])
                                         : xv / (double)sc[k];
    v = rint(v) + (double)(zp ? ldq(zp->dtype, zp->data, k) : 0);
    stq(yt, y->data, i, v);
  }
  return DML_OK;
}

/* Blocked DequantizeLinear (opset 21): x [.., D, ..] with D along `axis`,
 * scale and zero point [.., ceil(D / block), ..]: element d along the axis
 * uses parameter d / block (the last block may be shorter). */
static dml_status_t dequantize_blocked(const dml_cpu_call_t *c, int64_t block) {
  const dml_tensor_t *x = &c->inputs[0], *s = &c->inputs[1], *zp = dml_cpu_in(c, 2);
  int64_t ax;
  if (block < 0) return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "block_size < 0");
  if (dml_cpu_norm_axis(dml_cpu_get_int(c, "axis", 1), x->rank, &ax))
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "axis is out of range");
  const int64_t D = x->dims[ax], nb = (D + block - 1) / block;
  int64_t outer = 1, inner = 1;
  for (int32_t i = 0; i < (int32_t)ax; i++) outer *= x->dims[i];
  for (int32_t i = (int32_t)ax + 1; i < x->rank; i++) inner *= x->dims[i];
  for (int k = 0; k < 2; k++) {
    const dml_tensor_t *p = k ? zp : s;
    if (!p) continue;
    int ok = p->rank == x->rank;
    for (int32_t i = 0; ok && i < x->rank; i++)
      ok = p->dims[i] == (i == (int32_t)ax ? nb : x->dims[i]);
    if (!ok)
      return dml_cpu_err_shapes(
          c, "%s must have x's shape but ceil(d / %lld) on axis %lld",
          k ? "zero point" : "scale", (long long)block, (long long)ax);
  }
  const float *sc = (const float *)s->data;
  float *yd = (float *)c->outputs[0].data;
  if (x->dtype == DML_DTYPE_I8 && !zp) { /* the symmetric weights' form, vectorizable */
    const int8_t *xd = (const int8_t *)x->data;
    for (int64_t o = 0; o < outer; o++)
      for (int64_t d = 0; d < D; d++) {
        const float *sp = sc + (o * nb + d / block) * inner;
        const int8_t *xp = xd + (o * D + d) * inner;
        float *yp = yd + (o * D + d) * inner;
        for (int64_t i = 0; i < inner; i++) yp[i] = (float)xp[i] * sp[i];
      }
    return DML_OK;
  }
  for (int64_t o = 0; o < outer; o++)
    for (int64_t d = 0; d < D; d++) {
      int64_t pi = (o * nb + d / block) * inner, xi = (o * D + d) * inner;
      for (int64_t i = 0; i < inner; i++) {
        int64_t xv = dml_load_i64(x->dtype, x->data, (size_t)(xi + i));
        int64_t z = zp ? dml_load_i64(zp->dtype, zp->data, (size_t)(pi + i)) : 0;
        yd[xi + i] = (float)(xv - z) * sc[pi + i];
      }
    }
  return DML_OK;
}

/* DequantizeLinear: y = (x - x_zero_point) * x_scale, f32; blocked with a
 * block_size attribute (dequantize_blocked). float8 x: dequantize_f8. */
dml_status_t dml_cpuk_DequantizeLinear(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0], *s = &c->inputs[1], *zp = dml_cpu_in(c, 2);
  dml_tensor_t *y = &c->outputs[0];
  if (dml_dtype_is_float8(x->dtype)) return dequantize_f8(c);
  if (!is_q8(x->dtype) && x->dtype != DML_DTYPE_I32)
    return dml_cpu_err_dtype(c, "x", x->dtype);
  if (s->dtype != DML_DTYPE_F32) return dml_cpu_err_dtype(c, "x_scale", s->dtype);
  if (zp && zp->dtype != x->dtype) return dml_cpu_err_dtype(c, "x_zero_point", zp->dtype);
  if (y->dtype != DML_DTYPE_F32) return dml_cpu_err_dtype(c, "y", y->dtype);
  if (dml_cpu_numel(y) != dml_cpu_numel(x))
    return dml_cpu_err_shapes(c, "y must have x's shape");
  int64_t block = dml_cpu_get_int(c, "block_size", 0);
  if (block != 0) return dequantize_blocked(c, block);
  qaxis_t q;
  DML_RETURN_IF_ERROR(q_axis(c, x, s, zp, &q));
  const float *sc = (const float *)s->data;
  float *yd = (float *)y->data;
  int64_t n = dml_cpu_numel(x);
  if (is_q8(x->dtype)) { /* the same formula, vectorized per block of one parameter */
    int64_t blk = q.n == 1 ? n : q.inner, esz = 1;
    for (int64_t i = 0; i < n; i += blk) {
      int64_t k = q_idx(&q, i);
      dml_cpu_dequantize_q8((const uint8_t *)x->data + i * esz, DML_CPU_MIN(blk, n - i),
                            sc[k], zp ? (int32_t)ldq(zp->dtype, zp->data, k) : 0,
                            x->dtype == DML_DTYPE_U8, yd + i);
    }
    return DML_OK;
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t k = q_idx(&q, i);
    int64_t xv = dml_load_i64(x->dtype, x->data, (size_t)i);
    int64_t z = zp ? dml_load_i64(zp->dtype, zp->data, (size_t)k) : 0;
    yd[i] = (float)(xv - z) * sc[k];
  }
  return DML_OK;
}

/* DynamicQuantizeLinear (opset 11): u8 with
 *   scale = (max(0, max x) - min(0, min x)) / 255,
 *   zero_point = saturate(round(0 - min / scale)),
 *   y = saturate(round(x / scale) + zero_point), in f32 as the spec's
 * reference; an all-zero x gives scale 0, zero point 0, y 0. */
dml_status_t dml_cpuk_DynamicQuantizeLinear(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  if (x->dtype != DML_DTYPE_F32) return dml_cpu_err_dtype(c, "x", x->dtype);
  dml_tensor_t *y = dml_cpu_out(c, 0), *ys = dml_cpu_out(c, 1), *yz = dml_cpu_out(c, 2);
  if ((y && (y->dtype != DML_DTYPE_U8 || dml_cpu_numel(y) != dml_cpu_numel(x))) ||
      (ys && (ys->dtype != DML_DTYPE_F32 || dml_cpu_numel(ys) != 1)) ||
      (yz && (yz->dtype != DML_DTYPE_U8 || dml_cpu_numel(yz) != 1)))
    return dml_cpu_err_shapes(c, "outputs must be u8 like x, f32 scalar, u8 scalar");
  const float *xd = (const float *)x->data;
  int64_t n = dml_cpu_numel(x);
  float mn = 0, mx = 0;
  for (int64_t i = 0; i < n; i++) {
    if (xd[i] < mn) mn = xd[i];
    if (xd[i] > mx) mx = xd[i];
  }
  float scale = (mx - mn) / 255.0f;
  float zpf = scale > 0 ? rintf(0.0f - mn / scale) : 0.0f;
  zpf = zpf < 0 ? 0 : zpf > 255 ? 255 : zpf;
  if (ys) ((float *)ys->data)[0] = scale;
  if (yz) ((uint8_t *)yz->data)[0] = (uint8_t)zpf;
  if (y)
    for (int64_t i = 0; i < n; i++)
      stq(DML_DTYPE_U8, y->data, i, scale > 0 ? (double)rintf(xd[i] / scale) + zpf : zpf);
  return DML_OK;
}

/* ==== matmul ============================================================ */

/* Batched integer matmul geometry (numpy matmul broadcasting). */
typedef struct {
  int64_t M, N, K, batch;
  int32_t rank; /* output batch rank */
  int64_t odims[DML_MAX_RANK], astr[DML_MAX_RANK], bstr[DML_MAX_RANK];
  int64_t abatch, bbatch; /* batch counts of A and B */
} mm_t;

static dml_status_t mm_geo(const dml_cpu_call_t *c, const dml_tensor_t *a,
                           const dml_tensor_t *b, const dml_tensor_t *y, mm_t *g) {
  memset(g, 0, sizeof *g);
  if (a->rank < 1 || b->rank < 1) return dml_cpu_err_shapes(c, "A and B must be >= 1-D");
  int32_t ar = a->rank, br = b->rank;
  g->M = ar == 1 ? 1 : a->dims[ar - 2];
  g->K = a->dims[ar - 1];
  g->N = br == 1 ? 1 : b->dims[br - 1];
  int64_t kb = br == 1 ? b->dims[0] : b->dims[br - 2];
  if (kb != g->K) return dml_cpu_err_shapes(c, "inner dims differ");
  int32_t ab = ar > 2 ? ar - 2 : 0, bb = br > 2 ? br - 2 : 0;
  g->rank = ab > bb ? ab : bb;
  int64_t sa = g->M * g->K, sb = g->K * g->N;
  g->abatch = g->bbatch = g->batch = 1;
  for (int32_t i = g->rank - 1; i >= 0; i--) {
    int32_t ia = i - (g->rank - ab), ib = i - (g->rank - bb);
    int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    if (da != db && da != 1 && db != 1)
      return dml_cpu_err_shapes(c, "batch dims do not broadcast");
    g->odims[i] = da > db ? da : db;
    g->astr[i] = da == 1 ? 0 : sa;
    g->bstr[i] = db == 1 ? 0 : sb;
    sa *= da;
    sb *= db;
    g->batch *= g->odims[i];
    g->abatch *= da;
    g->bbatch *= db;
  }
  if (dml_cpu_numel(y) != g->batch * g->M * g->N)
    return dml_cpu_err_shapes(c, "output has the wrong size");
  return DML_OK;
}

/* Offsets of A and B for output batch index bi. */
static void mm_offs(const mm_t *g, int64_t bi, int64_t *ao, int64_t *bo) {
  *ao = *bo = 0;
  for (int32_t i = g->rank - 1; i >= 0; i--) {
    int64_t k = bi % g->odims[i];
    bi /= g->odims[i];
    *ao += k * g->astr[i];
    *bo += k * g->bstr[i];
  }
}

/* Zero point / scale of A row m (per tensor, per row [M] or [batch.., M, 1])
 * and of B column n ([N] or [batch.., 1, N]). `ab` is the A (or B) batch
 * index derived from the offset. */
static int64_t row_idx(const dml_tensor_t *t, int64_t ao, const mm_t *g, int64_t m) {
  int64_t n = dml_cpu_numel(t);
  if (n == 1) return 0;
  if (n == g->M) return m;
  return (ao / (g->M * g->K)) * g->M + m;
}
static int64_t col_idx(const dml_tensor_t *t, int64_t bo, const mm_t *g, int64_t nn) {
  int64_t n = dml_cpu_numel(t);
  if (n == 1) return 0;
  if (n == g->N) return nn;
  return (bo / (g->K * g->N)) * g->N + nn;
}
static int zp_shape_ok(const dml_tensor_t *t, const mm_t *g, int row) {
  if (!t) return 1;
  int64_t n = dml_cpu_numel(t);
  return n == 1 || n == (row ? g->M : g->N) ||
         n == (row ? g->abatch * g->M : g->bbatch * g->N);
}

/* acc[m, n] for one batch (int64). */
static int64_t mm_dot(const dml_tensor_t *a, const dml_tensor_t *b, const mm_t *g,
                      int64_t ao, int64_t bo, int64_t m, int64_t n, int64_t za,
                      int64_t zb) {
  int64_t acc = 0;
  for (int64_t k = 0; k < g->K; k++)
    acc += (ldq(a->dtype, a->data, ao + m * g->K + k) - za) *
           (ldq(b->dtype, b->data, bo + k * g->N + n) - zb);
  return acc;
}

/* MatMulInteger (opset 10): i32 Y = (A - a_zero_point) x (B - b_zero_point),
 * zero points per tensor, per row of A, per column of B. */
dml_status_t dml_cpuk_MatMulInteger(const dml_cpu_call_t *c) {
  const dml_tensor_t *a = &c->inputs[0], *b = &c->inputs[1];
  const dml_tensor_t *za = dml_cpu_in(c, 2), *zb = dml_cpu_in(c, 3);
  dml_tensor_t *y = &c->outputs[0];
  if (!is_q8(a->dtype)) return dml_cpu_err_dtype(c, "A", a->dtype);
  if (!is_q8(b->dtype)) return dml_cpu_err_dtype(c, "B", b->dtype);
  if ((za && za->dtype != a->dtype) || (zb && zb->dtype != b->dtype))
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "zero points must have the dtype of A and B");
  if (y->dtype != DML_DTYPE_I32) return dml_cpu_err_dtype(c, "Y", y->dtype);
  mm_t g;
  DML_RETURN_IF_ERROR(mm_geo(c, a, b, y, &g));
  if (!zp_shape_ok(za, &g, 1) || !zp_shape_ok(zb, &g, 0))
    return dml_cpu_err_shapes(c,
                              "zero points must be scalars, per row of A or per "
                              "column of B");
  int32_t *yd = (int32_t *)y->data;
  for (int64_t bi = 0; bi < g.batch; bi++) {
    int64_t ao, bo;
    mm_offs(&g, bi, &ao, &bo);
    for (int64_t m = 0; m < g.M; m++)
      for (int64_t n = 0; n < g.N; n++) {
        int64_t zav = za ? ldq(za->dtype, za->data, row_idx(za, ao, &g, m)) : 0;
        int64_t zbv = zb ? ldq(zb->dtype, zb->data, col_idx(zb, bo, &g, n)) : 0;
        yd[(bi * g.M + m) * g.N + n] = (int32_t)mm_dot(a, b, &g, ao, bo, m, n, zav, zbv);
      }
  }
  return DML_OK;
}

/* QLinearMatMul (opset 10; 21 adds f16/bf16 scales): y = saturate(round(acc * a_scale *
 * b_scale / y_scale) + y_zero_point), clamped to dml_clamp (dml_cpu_qclamp) with acc the
 * integer product of the zero-point-shifted inputs; y has y_zero_point's dtype. */
dml_status_t dml_cpuk_QLinearMatMul(const dml_cpu_call_t *c) {
  const dml_tensor_t *a = &c->inputs[0], *as = &c->inputs[1], *za = &c->inputs[2];
  const dml_tensor_t *b = &c->inputs[3], *bs = &c->inputs[4], *zb = &c->inputs[5];
  const dml_tensor_t *ys = &c->inputs[6], *zy = &c->inputs[7];
  dml_tensor_t *y = &c->outputs[0];
  if (!is_q8(a->dtype) || za->dtype != a->dtype)
    return dml_cpu_err_dtype(c, "a", a->dtype);
  if (!is_q8(b->dtype) || zb->dtype != b->dtype)
    return dml_cpu_err_dtype(c, "b", b->dtype);
  if (!is_q8(zy->dtype) || y->dtype != zy->dtype)
    return dml_cpu_err_dtype(c, "y", y->dtype);
  /* Scales: f32 (opset 10), f16 or bf16 too (opset 21), read as double. */
  if (!dml_dtype_is_float(as->dtype) || !dml_dtype_is_float(bs->dtype) ||
      !dml_dtype_is_float(ys->dtype))
    return dml_cpu_err_dtype(c, "scale",
                             !dml_dtype_is_float(as->dtype)   ? as->dtype
                             : !dml_dtype_is_float(bs->dtype) ? bs->dtype
                                                              : ys->dtype);
  mm_t g;
  DML_RETURN_IF_ERROR(mm_geo(c, a, b, y, &g));
  if (!zp_shape_ok(za, &g, 1) || !zp_shape_ok(as, &g, 1) || !zp_shape_ok(zb, &g, 0) ||
      !zp_shape_ok(bs, &g, 0) || dml_cpu_numel(ys) != 1 || dml_cpu_numel(zy) != 1)
    return dml_cpu_err_shapes(c,
                              "scales and zero points must be per tensor, per row "
                              "of a or per column of b (y: per tensor)");
  double ysv = dml_cpu_ld(ys->dtype, ys->data, 0);
  int64_t zyv = ldq(zy->dtype, zy->data, 0);
  int32_t lo, hi;
  DML_RETURN_IF_ERROR(dml_cpu_qclamp(c, y->dtype, &lo, &hi));
  for (int64_t bi = 0; bi < g.batch; bi++) {
    int64_t ao, bo;
    mm_offs(&g, bi, &ao, &bo);
    for (int64_t m = 0; m < g.M; m++)
      for (int64_t n = 0; n < g.N; n++) {
        int64_t ra = row_idx(za, ao, &g, m), cb = col_idx(zb, bo, &g, n);
        int64_t acc = mm_dot(a, b, &g, ao, bo, m, n, ldq(za->dtype, za->data, ra),
                             ldq(zb->dtype, zb->data, cb));
        double sc = dml_cpu_ld(as->dtype, as->data, row_idx(as, ao, &g, m)) *
                    dml_cpu_ld(bs->dtype, bs->data, col_idx(bs, bo, &g, n)) / ysv;
        stq_c(y->dtype, y->data, (bi * g.M + m) * g.N + n, rint((double)acc * sc) + zyv,
              lo, hi);
      }
  }
  return DML_OK;
}

/* ==== convolution ======================================================= */

#define SP_MAX (DML_MAX_RANK - 2)

typedef struct {
  int r;
  int64_t N, C, M, group, Cg, Mg;
  int64_t in[SP_MAX], out[SP_MAX], k[SP_MAX], s[SP_MAX], d[SP_MAX], pb[SP_MAX];
  int64_t in_sz, out_sz, k_sz;
} qconv_t;

/* Conv attributes (auto_pad, dilations, group, kernel_shape, pads,
 * strides) as ONNX Conv; checks Y's spatial dims. */
static dml_status_t qconv_geo(const dml_cpu_call_t *c, const dml_tensor_t *x,
                              const dml_tensor_t *w, const dml_tensor_t *y, qconv_t *g) {
  memset(g, 0, sizeof *g);
  if (x->rank < 3 || w->rank != x->rank || y->rank != x->rank)
    return dml_cpu_err_shapes(c, "x, w and y must have the same rank >= 3");
  int r = g->r = x->rank - 2;
  g->N = x->dims[0], g->C = x->dims[1], g->M = w->dims[0];
  g->group = dml_cpu_get_int(c, "group", 1);
  if (g->group < 1 || g->C % g->group || g->M % g->group)
    return dml_cpu_err_shapes(c, "group %lld does not divide the channels",
                              (long long)g->group);
  g->Cg = g->C / g->group, g->Mg = g->M / g->group;
  if (w->dims[1] != g->Cg || y->dims[0] != g->N || y->dims[1] != g->M)
    return dml_cpu_err_shapes(c, "w must be [M, C/group, k...] and y [N, M, ...]");
  size_t nks, ns, nd, np;
  const int64_t *ks = dml_cpu_get_ints(c, "kernel_shape", &nks);
  const int64_t *st = dml_cpu_get_ints(c, "strides", &ns);
  const int64_t *dl = dml_cpu_get_ints(c, "dilations", &nd);
  const int64_t *pads = dml_cpu_get_ints(c, "pads", &np);
  if ((ks && nks != (size_t)r) || (st && ns != (size_t)r) || (dl && nd != (size_t)r) ||
      (pads && np != 2 * (size_t)r))
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "kernel_shape/strides/dilations/pads have the wrong length");
  const char *ap = dml_cpu_get_string(c, "auto_pad", "NOTSET");
  int su = strcmp(ap, "SAME_UPPER") == 0, sl = strcmp(ap, "SAME_LOWER") == 0;
  int valid = strcmp(ap, "VALID") == 0;
  if (!su && !sl && !valid && strcmp(ap, "NOTSET") != 0)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "auto_pad '%s' is not valid",
                         ap);
  g->in_sz = g->out_sz = g->k_sz = 1;
  for (int i = 0; i < r; i++) {
    g->in[i] = x->dims[2 + i], g->out[i] = y->dims[2 + i], g->k[i] = w->dims[2 + i];
    if (ks && ks[i] != g->k[i])
      return dml_cpu_err_shapes(c, "kernel_shape differs from w");
    g->s[i] = st ? st[i] : 1;
    g->d[i] = dl ? dl[i] : 1;
    if (g->s[i] < 1 || g->d[i] < 1)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "strides and dilations must be >= 1");
    int64_t ek = (g->k[i] - 1) * g->d[i] + 1, expect;
    if (su || sl) {
      expect = (g->in[i] + g->s[i] - 1) / g->s[i];
      int64_t total = DML_CPU_MAX(0, (expect - 1) * g->s[i] + ek - g->in[i]);
      g->pb[i] = su ? total / 2 : total - total / 2;
    } else if (valid) {
      expect = g->in[i] >= ek ? (g->in[i] - ek) / g->s[i] + 1 : 0;
    } else {
      int64_t pb = pads ? pads[i] : 0, pe = pads ? pads[r + i] : 0;
      g->pb[i] = pb;
      int64_t span = g->in[i] + pb + pe - ek;
      expect = span >= 0 ? span / g->s[i] + 1 : 0;
    }
    if (expect != g->out[i])
      return dml_cpu_err_shapes(c, "spatial dim %d: output %lld, expected %lld", i,
                                (long long)g->out[i], (long long)expect);
    g->in_sz *= g->in[i], g->out_sz *= g->out[i], g->k_sz *= g->k[i];
  }
  return DML_OK;
}

/* Integer accumulation of one output element; padding reads x_zero_point
 * (contributes 0). */
static int64_t qconv_acc(const qconv_t *g, const dml_tensor_t *x, const dml_tensor_t *w,
                         int64_t n, int64_t m, int64_t o, int64_t zx, int64_t zw) {
  int64_t oi[SP_MAX], rem = o;
  for (int i = g->r - 1; i >= 0; i--) oi[i] = rem % g->out[i], rem /= g->out[i];
  int64_t grp = m / g->Mg, acc = 0;
  for (int64_t kk = 0; kk < g->k_sz; kk++) {
    int64_t ki[SP_MAX], kr = kk, xoff = 0, inside = 1;
    for (int i = g->r - 1; i >= 0; i--) ki[i] = kr % g->k[i], kr /= g->k[i];
    for (int i = 0; i < g->r; i++) {
      int64_t p = oi[i] * g->s[i] - g->pb[i] + ki[i] * g->d[i];
      if (p < 0 || p >= g->in[i]) inside = 0;
      xoff = xoff * g->in[i] + p;
    }
    if (!inside) continue;
    for (int64_t cc = 0; cc < g->Cg; cc++) {
      int64_t ch = grp * g->Cg + cc;
      int64_t xv = ldq(x->dtype, x->data, (n * g->C + ch) * g->in_sz + xoff) - zx;
      int64_t wv = ldq(w->dtype, w->data, (m * g->Cg + cc) * g->k_sz + kk) - zw;
      acc += xv * wv;
    }
  }
  return acc;
}

/* Per-output-channel parameter: scalar or [M]. */
static int per_m_ok(const dml_tensor_t *t, int64_t M) {
  int64_t n = t ? dml_cpu_numel(t) : 1;
  return n == 1 || (t->rank == 1 && n == M);
}

/* ConvInteger (opset 10): i32 y = conv(x - x_zero_point, w - w_zero_point);
 * x_zero_point per tensor, w_zero_point per tensor or per output channel. */
dml_status_t dml_cpuk_ConvInteger(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0], *w = &c->inputs[1];
  const dml_tensor_t *zx = dml_cpu_in(c, 2), *zw = dml_cpu_in(c, 3);
  dml_tensor_t *y = &c->outputs[0];
  if (!is_q8(x->dtype) || (zx && zx->dtype != x->dtype))
    return dml_cpu_err_dtype(c, "x", x->dtype);
  if (!is_q8(w->dtype) || (zw && zw->dtype != w->dtype))
    return dml_cpu_err_dtype(c, "w", w->dtype);
  if (y->dtype != DML_DTYPE_I32) return dml_cpu_err_dtype(c, "y", y->dtype);
  qconv_t g;
  DML_RETURN_IF_ERROR(qconv_geo(c, x, w, y, &g));
  if ((zx && dml_cpu_numel(zx) != 1) || !per_m_ok(zw, g.M))
    return dml_cpu_err_shapes(c,
                              "x_zero_point must be a scalar, w_zero_point a scalar "
                              "or [M]");
  int64_t zxv = zx ? ldq(zx->dtype, zx->data, 0) : 0;
  int32_t *yd = (int32_t *)y->data;
  for (int64_t n = 0; n < g.N; n++)
    for (int64_t m = 0; m < g.M; m++) {
      int64_t zwv = zw ? ldq(zw->dtype, zw->data, dml_cpu_numel(zw) == 1 ? 0 : m) : 0;
      for (int64_t o = 0; o < g.out_sz; o++)
        yd[(n * g.M + m) * g.out_sz + o] =
            (int32_t)qconv_acc(&g, x, w, n, m, o, zxv, zwv);
    }
  return DML_OK;
}

/* QLinearConv (opset 10): y = saturate(round((acc + B) * x_scale * w_scale /
 * y_scale) + y_zero_point), clamped to dml_clamp (dml_cpu_qclamp); w_scale/w_zero_point
 * per tensor or [M], B i32 [M] optional. */
dml_status_t dml_cpuk_QLinearConv(const dml_cpu_call_t *c) {
  return dml_cpu_qlinear_conv(c, NULL);
}

size_t dml_cpus_QLinearConv(const dml_cpu_call_t *c, int threads) {
  return dml_cpu_qconv_scratch(c, threads, 0);
}

dml_status_t dml_cpu_qlinear_conv(const dml_cpu_call_t *c, const void *packed) {
  const dml_tensor_t *x = &c->inputs[0], *xs = &c->inputs[1], *zx = &c->inputs[2];
  const dml_tensor_t *w = &c->inputs[3], *ws = &c->inputs[4], *zw = &c->inputs[5];
  const dml_tensor_t *ys = &c->inputs[6], *zy = &c->inputs[7], *bt = dml_cpu_in(c, 8);
  dml_tensor_t *y = &c->outputs[0];
  if (!is_q8(x->dtype) || zx->dtype != x->dtype)
    return dml_cpu_err_dtype(c, "x", x->dtype);
  if (!is_q8(w->dtype) || zw->dtype != w->dtype)
    return dml_cpu_err_dtype(c, "w", w->dtype);
  if (!is_q8(zy->dtype) || y->dtype != zy->dtype)
    return dml_cpu_err_dtype(c, "y", y->dtype);
  if (xs->dtype != DML_DTYPE_F32 || ws->dtype != DML_DTYPE_F32 ||
      ys->dtype != DML_DTYPE_F32)
    return dml_cpu_err_dtype(c, "scale", DML_DTYPE_INVALID);
  if (bt && bt->dtype != DML_DTYPE_I32) return dml_cpu_err_dtype(c, "B", bt->dtype);
  qconv_t g;
  DML_RETURN_IF_ERROR(qconv_geo(c, x, w, y, &g));
  if (dml_cpu_numel(xs) != 1 || dml_cpu_numel(zx) != 1 || dml_cpu_numel(ys) != 1 ||
      dml_cpu_numel(zy) != 1 || !per_m_ok(ws, g.M) || !per_m_ok(zw, g.M) ||
      (bt && (bt->rank != 1 || bt->dims[0] != g.M)))
    return dml_cpu_err_shapes(c,
                              "x/y scales and zero points must be scalars, w's "
                              "scalars or [M], B [M]");
  int64_t zxv = ldq(zx->dtype, zx->data, 0), zyv = ldq(zy->dtype, zy->data, 0);
  double xsv = ((const float *)xs->data)[0], ysv = ((const float *)ys->data)[0];
  int32_t lo, hi;
  DML_RETURN_IF_ERROR(dml_cpu_qclamp(c, y->dtype, &lo, &hi));
  dml_status_t st;
  if (dml_cpu_qconv_fast(c, packed, lo, hi, &st)) return st;
  for (int64_t n = 0; n < g.N; n++)
    for (int64_t m = 0; m < g.M; m++) {
      int64_t zwv = ldq(zw->dtype, zw->data, dml_cpu_numel(zw) == 1 ? 0 : m);
      double wsv = ((const float *)ws->data)[dml_cpu_numel(ws) == 1 ? 0 : m];
      double sc = xsv * wsv / ysv;
      int64_t bias = bt ? ((const int32_t *)bt->data)[m] : 0;
      for (int64_t o = 0; o < g.out_sz; o++) {
        int64_t acc = qconv_acc(&g, x, w, n, m, o, zxv, zwv) + bias;
        stq_c(y->dtype, y->data, (n * g.M + m) * g.out_sz + o,
              rint((double)acc * sc) + zyv, lo, hi);
      }
    }
  return DML_OK;
}

/* QLinearAdd (dmlc's op, ops.def): y = Q(DQ(a) + DQ(b)) in the f32 operations
 * of DequantizeLinear, Add and QuantizeLinear above (per tensor), clamped to
 * dml_clamp. */
dml_status_t dml_cpuk_QLinearAdd(const dml_cpu_call_t *c) {
  const dml_tensor_t *a = &c->inputs[0], *as = &c->inputs[1], *za = &c->inputs[2];
  const dml_tensor_t *b = &c->inputs[3], *bs = &c->inputs[4], *zb = &c->inputs[5];
  const dml_tensor_t *ys = &c->inputs[6], *zy = &c->inputs[7];
  dml_tensor_t *y = &c->outputs[0];
  if (!is_q8(a->dtype) || za->dtype != a->dtype)
    return dml_cpu_err_dtype(c, "a", a->dtype);
  if (!is_q8(b->dtype) || zb->dtype != b->dtype)
    return dml_cpu_err_dtype(c, "b", b->dtype);
  if (!is_q8(zy->dtype) || y->dtype != zy->dtype)
    return dml_cpu_err_dtype(c, "y", y->dtype);
  if (as->dtype != DML_DTYPE_F32 || bs->dtype != DML_DTYPE_F32 ||
      ys->dtype != DML_DTYPE_F32)
    return dml_cpu_err_dtype(c, "scale", DML_DTYPE_INVALID);
  int64_t n = dml_cpu_numel(a);
  if (dml_cpu_numel(b) != n || dml_cpu_numel(y) != n)
    return dml_cpu_err_shapes(c, "a, b and y must have one shape");
  if (dml_cpu_numel(as) != 1 || dml_cpu_numel(za) != 1 || dml_cpu_numel(bs) != 1 ||
      dml_cpu_numel(zb) != 1 || dml_cpu_numel(ys) != 1 || dml_cpu_numel(zy) != 1)
    return dml_cpu_err_shapes(c, "scales and zero points must be per tensor");
  int32_t lo, hi;
  DML_RETURN_IF_ERROR(dml_cpu_qclamp(c, y->dtype, &lo, &hi));
  dml_cpu_qadd(a->data, a->dtype == DML_DTYPE_I8, ((const float *)as->data)[0],
               (int32_t)ldq(za->dtype, za->data, 0), b->data, b->dtype == DML_DTYPE_I8,
               ((const float *)bs->data)[0], (int32_t)ldq(zb->dtype, zb->data, 0),
               ((const float *)ys->data)[0], (int32_t)ldq(zy->dtype, zy->data, 0),
               y->dtype == DML_DTYPE_I8, lo, hi, n, y->data);
  return DML_OK;
}
