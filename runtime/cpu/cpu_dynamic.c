/*
 * cpu_dynamic.c — ops whose output shape depends on input values: NonZero,
 * Unique, Compress, NonMaxSuppression (ONNX operator spec, opset 17).
 *
 * Each has an output dim that is a data-dependent symbol in the IR (dml_ir.h,
 * DML_IR_SYMBOL_DATA_DEPENDENT). The caller passes those outputs at the
 * symbol's bound; the kernel writes the actual extent into the output's
 * dims (never more than it was given) and the data in C order for the
 * actual dims (dml_cpu.h, "data-dependent dims").
 */
#include <string.h>

#include "cpu_internal.h"

/* ======================================================================
 * Shared: element comparison, stable merge sort of int64 keys
 * ====================================================================== */

/* Three-way comparison of elements i and j of `x` (dtype dt). NaNs sort after
 * every number and equal each other, so the order is total. */
static int elem_cmp(dml_dtype_t dt, const void *x, int64_t i, int64_t j) {
  if (dt == DML_DTYPE_I64) {
    int64_t a = ((const int64_t *)x)[i], b = ((const int64_t *)x)[j];
    return (a > b) - (a < b);
  }
  if (dt == DML_DTYPE_U64) {
    uint64_t a = ((const uint64_t *)x)[i], b = ((const uint64_t *)x)[j];
    return (a > b) - (a < b);
  }
  double a = dml_load_f64(dt, x, (size_t)i), b = dml_load_f64(dt, x, (size_t)j);
  if (a < b) return -1;
  if (a > b) return 1;
  if (a == b) return 0;
  return (a != a) - (b != b);
}

typedef int (*key_cmp_fn)(const void *ctx, int64_t a, int64_t b);

/* Sorts keys a[0..n) stably by cmp, using tmp[0..n). */
static void merge_sort(int64_t *a, int64_t *tmp, int64_t n, key_cmp_fn cmp,
                       const void *ctx) {
  int64_t *src = a, *dst = tmp;
  for (int64_t w = 1; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = DML_CPU_MIN(lo + w, n), hi = DML_CPU_MIN(lo + 2 * w, n);
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi)
        dst[k++] = cmp(ctx, src[j], src[i]) < 0 ? src[j++] : src[i++];
      while (i < mid) dst[k++] = src[i++];
      while (j < hi) dst[k++] = src[j++];
    }
    int64_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != a) memcpy(a, src, (size_t)n * sizeof(int64_t));
}

static int is_nonzero(dml_dtype_t dt, const void *x, int64_t i) {
  if (dml_dtype_is_float(dt)) return dml_load_f64(dt, x, (size_t)i) != 0.0;
  return dml_load_i64(dt, x, (size_t)i) != 0;
}

/* ======================================================================
 * NonZero: indices of the non-zero elements, [rank, nnz] i64, row-major
 * order (ONNX NonZero-13; a 0-D input counts as [1]).
 * ====================================================================== */

dml_status_t dml_cpuk_NonZero(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = dml_cpu_in(c, 0);
  dml_tensor_t *y = dml_cpu_out(c, 0);
  int64_t n = dml_cpu_numel(x), nnz = 0;
  int32_t r = x->rank ? x->rank : 1;
  if (y->dtype != DML_DTYPE_I64 || y->rank != 2 || y->dims[0] != r)
    return dml_cpu_err_shapes(c, "output must be i64 [%d, nnz]", (int)r);
  for (int64_t i = 0; i < n; i++) nnz += is_nonzero(x->dtype, x->data, i);
  if (nnz > y->dims[1])
    return dml_cpu_err_shapes(c, "%lld non-zero elements exceed the output's bound",
                              (long long)nnz);
  int64_t *out = (int64_t *)y->data, k = 0;
  for (int64_t i = 0; i < n; i++) {
    if (!is_nonzero(x->dtype, x->data, i)) continue;
    int64_t rem = i;
    for (int32_t d = r - 1; d >= 0; d--) {
      int64_t ext = x->rank ? x->dims[d] : 1;
      out[d * nnz + k] = rem % ext;
      rem /= ext;
    }
    k++;
  }
  y->dims[1] = nnz;
  return DML_OK;
}

/* ======================================================================
 * Unique (ONNX Unique-11): the distinct items of X (elements, or slices
 * along `axis`), sorted ascending (sorted=1) or in order of first
 * occurrence (sorted=0); outputs Y, indices (first occurrence),
 * inverse_indices, counts.
 * ====================================================================== */

typedef struct items {
  dml_dtype_t dt;
  const void *x;
  int64_t outer, n, inner; /* X viewed as [outer, n, inner]; items along n */
} items_t;

static int item_cmp(const void *ctx, int64_t i, int64_t j) {
  const items_t *it = (const items_t *)ctx;
  for (int64_t o = 0; o < it->outer; o++)
    for (int64_t q = 0; q < it->inner; q++) {
      int64_t base = o * it->n * it->inner + q;
      int r = elem_cmp(it->dt, it->x, base + i * it->inner, base + j * it->inner);
      if (r) return r;
    }
  return 0;
}

/* Views X as [outer, n, inner]; returns 0 when `axis` is out of range. */
static int unique_view(const dml_cpu_call_t *c, const dml_tensor_t *x, items_t *it,
                       int64_t *out_axis) {
  it->dt = x->dtype;
  it->x = x->data;
  it->outer = it->inner = 1;
  *out_axis = -1;
  if (!dml_attr_find(c->attrs, c->n_attrs, "axis")) {
    it->n = dml_cpu_numel(x);
    return 1;
  }
  if (dml_cpu_norm_axis(dml_cpu_get_int(c, "axis", 0), x->rank, out_axis) != 0) return 0;
  it->n = x->dims[*out_axis];
  for (int32_t d = 0; d < *out_axis; d++) it->outer *= x->dims[d];
  for (int32_t d = (int32_t)*out_axis + 1; d < x->rank; d++) it->inner *= x->dims[d];
  return 1;
}

size_t dml_cpus_Unique(const dml_cpu_call_t *c, int threads) {
  (void)threads;
  items_t it;
  int64_t axis;
  if (!unique_view(c, &c->inputs[0], &it, &axis) || it.n < 0) return 0;
  if ((uint64_t)it.n > SIZE_MAX / 64) return SIZE_MAX;
  return (size_t)it.n * 7 * sizeof(int64_t);
}

dml_status_t dml_cpuk_Unique(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = dml_cpu_in(c, 0);
  dml_tensor_t *y = dml_cpu_out(c, 0), *o_idx = dml_cpu_out(c, 1),
               *o_inv = dml_cpu_out(c, 2), *o_cnt = dml_cpu_out(c, 3);
  items_t it;
  int64_t axis;
  if (!unique_view(c, x, &it, &axis))
    return dml_cpu_err_shapes(c, "axis %lld is out of range",
                              (long long)dml_cpu_get_int(c, "axis", 0));
  int sorted = dml_cpu_get_int(c, "sorted", 1) != 0;
  int64_t n = it.n;
  if (n == 0) { /* nothing to sort: every output is empty */
    for (uint32_t k = 0; k < 4; k++)
      if (dml_cpu_out(c, k)) c->outputs[k].dims[k == 0 ? (axis < 0 ? 0 : axis) : 0] = 0;
    return DML_OK;
  }
  int64_t *idx = (int64_t *)c->scratch, *tmp = idx + n, *grp = tmp + n, *first = grp + n,
          *count = first + n, *ord = count + n, *pos = ord + n;
  for (int64_t i = 0; i < n; i++) idx[i] = i;
  merge_sort(idx, tmp, n, item_cmp, &it);
  int64_t u = 0;
  for (int64_t k = 0; k < n; k++) {
    if (k == 0 || item_cmp(&it, idx[k - 1], idx[k]) != 0) {
      first[u] = idx[k]; /* stable: the smallest original index of the group */
      count[u++] = 0;
    }
    grp[idx[k]] = u - 1;
    count[u - 1]++;
  }
  if (sorted) {
    for (int64_t g = 0; g < u; g++) ord[g] = g;
  } else { /* groups in order of first occurrence */
    for (int64_t i = 0; i < n; i++) tmp[i] = -1;
    for (int64_t g = 0; g < u; g++) tmp[first[g]] = g;
    int64_t p = 0;
    for (int64_t i = 0; i < n; i++)
      if (tmp[i] >= 0) ord[p++] = tmp[i];
  }
  for (int64_t p = 0; p < u; p++) pos[ord[p]] = p;
  /* Y: [u] (flattened) or X's shape with dims[axis] = u. */
  int32_t ya = axis < 0 ? 0 : (int32_t)axis;
  if (y->dtype != x->dtype || y->rank != (axis < 0 ? 1 : x->rank) || y->dims[ya] < u)
    return dml_cpu_err_shapes(c, "output 0 does not fit %lld unique items", (long long)u);
  size_t es = dml_dtype_size(x->dtype), row = (size_t)it.inner * es;
  for (int64_t o = 0; o < it.outer; o++)
    for (int64_t p = 0; p < u; p++)
      memcpy(
          (char *)y->data + ((size_t)o * (size_t)u + (size_t)p) * row,
          (const char *)x->data + ((size_t)o * (size_t)n + (size_t)first[ord[p]]) * row,
          row);
  y->dims[ya] = u;
  dml_tensor_t *per_item[2] = {o_idx, o_cnt};
  for (int k = 0; k < 2; k++) {
    dml_tensor_t *t = per_item[k];
    if (!t) continue;
    if (t->dtype != DML_DTYPE_I64 || t->rank != 1 || t->dims[0] < u)
      return dml_cpu_err_shapes(c, "output %d must be i64 [u]", k ? 3 : 1);
    for (int64_t p = 0; p < u; p++)
      ((int64_t *)t->data)[p] = k ? count[ord[p]] : first[ord[p]];
    t->dims[0] = u;
  }
  if (o_inv) {
    if (o_inv->dtype != DML_DTYPE_I64 || o_inv->rank != 1 || o_inv->dims[0] != n)
      return dml_cpu_err_shapes(c, "output 2 must be i64 [%lld]", (long long)n);
    for (int64_t i = 0; i < n; i++) ((int64_t *)o_inv->data)[i] = pos[grp[i]];
  }
  return DML_OK;
}

/* ======================================================================
 * Compress (ONNX Compress-11): the slices along `axis` (or the elements of
 * the flattened input) where `condition` is true; a condition shorter than
 * the axis drops the rest.
 * ====================================================================== */

dml_status_t dml_cpuk_Compress(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = dml_cpu_in(c, 0), *cond = dml_cpu_in(c, 1);
  dml_tensor_t *y = dml_cpu_out(c, 0);
  if (cond->rank != 1) return dml_cpu_err_shapes(c, "condition must be 1-D");
  int64_t axis = -1, outer = 1, inner = 1, n;
  if (dml_attr_find(c->attrs, c->n_attrs, "axis")) {
    if (dml_cpu_norm_axis(dml_cpu_get_int(c, "axis", 0), x->rank, &axis) != 0)
      return dml_cpu_err_shapes(c, "axis %lld is out of range",
                                (long long)dml_cpu_get_int(c, "axis", 0));
    n = x->dims[axis];
    for (int32_t d = 0; d < axis; d++) outer *= x->dims[d];
    for (int32_t d = (int32_t)axis + 1; d < x->rank; d++) inner *= x->dims[d];
  } else {
    n = dml_cpu_numel(x);
  }
  int64_t len = DML_CPU_MIN(n, cond->dims[0]), sel = 0;
  for (int64_t i = 0; i < len; i++) sel += is_nonzero(cond->dtype, cond->data, i);
  int32_t ya = axis < 0 ? 0 : (int32_t)axis;
  if (y->dtype != x->dtype || y->rank != (axis < 0 ? 1 : x->rank) || y->dims[ya] < sel)
    return dml_cpu_err_shapes(c, "output does not fit %lld selected items",
                              (long long)sel);
  size_t row = (size_t)inner * dml_dtype_size(x->dtype);
  char *out = (char *)y->data;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < len; i++)
      if (is_nonzero(cond->dtype, cond->data, i)) {
        memcpy(out, (const char *)x->data + ((size_t)o * (size_t)n + (size_t)i) * row,
               row);
        out += row;
      }
  y->dims[ya] = sel;
  return DML_OK;
}

/* ======================================================================
 * NonMaxSuppression (ONNX NonMaxSuppression-11): per batch and class, boxes
 * with score > score_threshold in descending score order (ties: lower box
 * index first), each kept unless its IoU with a kept box of the class
 * exceeds iou_threshold, at most max_output_boxes_per_class of them. Output
 * [num_selected, 3] i64 rows (batch, class, box), in that order. IoU as
 * onnxruntime computes it (non-positive intersection or area: no overlap).
 * ====================================================================== */

typedef struct nms_scores {
  const float *s;
} nms_scores_t;

static int score_cmp(const void *ctx, int64_t a, int64_t b) {
  const float *s = ((const nms_scores_t *)ctx)->s;
  if (s[a] > s[b]) return -1;
  if (s[a] < s[b]) return 1;
  return (a > b) - (a < b);
}

/* The box's [x_min, y_min, x_max, y_max]. */
static void box_corners(const float *b, int center, float *out) {
  if (center) {
    out[0] = b[0] - b[2] / 2.0f;
    out[2] = b[0] + b[2] / 2.0f;
    out[1] = b[1] - b[3] / 2.0f;
    out[3] = b[1] + b[3] / 2.0f;
  } else { /* [y1, x1, y2, x2], corners in either order */
    out[0] = DML_CPU_MIN(b[1], b[3]);
    out[2] = DML_CPU_MAX(b[1], b[3]);
    out[1] = DML_CPU_MIN(b[0], b[2]);
    out[3] = DML_CPU_MAX(b[0], b[2]);
  }
}

static int suppressed(const float *b1, const float *b2, int center, float iou_threshold) {
  float p[4], q[4];
  box_corners(b1, center, p);
  box_corners(b2, center, q);
  float ix0 = DML_CPU_MAX(p[0], q[0]), ix1 = DML_CPU_MIN(p[2], q[2]);
  float iy0 = DML_CPU_MAX(p[1], q[1]), iy1 = DML_CPU_MIN(p[3], q[3]);
  if (ix1 <= ix0 || iy1 <= iy0) return 0;
  float inter = (ix1 - ix0) * (iy1 - iy0);
  float a1 = (p[2] - p[0]) * (p[3] - p[1]), a2 = (q[2] - q[0]) * (q[3] - q[1]);
  float uni = a1 + a2 - inter;
  if (inter <= 0.0f || a1 <= 0.0f || a2 <= 0.0f || uni <= 0.0f) return 0;
  return inter / uni > iou_threshold;
}

size_t dml_cpus_NonMaxSuppression(const dml_cpu_call_t *c, int threads) {
  (void)threads;
  const dml_tensor_t *b = &c->inputs[0];
  if (b->rank != 3 || b->dims[1] < 0) return 0;
  if ((uint64_t)b->dims[1] > SIZE_MAX / 64) return SIZE_MAX;
  return (size_t)b->dims[1] * 3 * sizeof(int64_t);
}

dml_status_t dml_cpuk_NonMaxSuppression(const dml_cpu_call_t *c) {
  const dml_tensor_t *boxes = dml_cpu_in(c, 0), *scores = dml_cpu_in(c, 1);
  const dml_tensor_t *t_max = dml_cpu_in(c, 2), *t_iou = dml_cpu_in(c, 3),
                     *t_thr = dml_cpu_in(c, 4);
  dml_tensor_t *y = dml_cpu_out(c, 0);
  if (boxes->dtype != DML_DTYPE_F32) return dml_cpu_err_dtype(c, "boxes", boxes->dtype);
  if (scores->dtype != DML_DTYPE_F32)
    return dml_cpu_err_dtype(c, "scores", scores->dtype);
  if (boxes->rank != 3 || boxes->dims[2] != 4 || scores->rank != 3 ||
      scores->dims[0] != boxes->dims[0] || scores->dims[2] != boxes->dims[1])
    return dml_cpu_err_shapes(
        c, "boxes must be [batches, boxes, 4] and scores [batches, classes, boxes]");
  if (y->dtype != DML_DTYPE_I64 || y->rank != 2 || y->dims[1] != 3)
    return dml_cpu_err_shapes(c, "output must be i64 [selected, 3]");
  int64_t nb = boxes->dims[0], nc = scores->dims[1], n = boxes->dims[1];
  int64_t max_out =
      t_max && dml_cpu_numel(t_max) ? dml_load_i64(t_max->dtype, t_max->data, 0) : 0;
  float iou = t_iou && dml_cpu_numel(t_iou) ? (float)dml_cpu_scalar_f64(t_iou) : 0.0f;
  int has_thr = t_thr && dml_cpu_numel(t_thr);
  float thr = has_thr ? (float)dml_cpu_scalar_f64(t_thr) : 0.0f;
  int center = dml_cpu_get_int(c, "center_point_box", 0) != 0;
  max_out = DML_CPU_MAX(DML_CPU_MIN(max_out, n), 0);
  if (max_out == 0) nb = 0; /* nothing selected; scratch may be empty */
  int64_t *cand = (int64_t *)c->scratch, *tmp = cand + n, *kept = tmp + n;
  int64_t *out = (int64_t *)y->data, total = 0;
  for (int64_t bi = 0; bi < nb; bi++)
    for (int64_t ci = 0; ci < nc; ci++) {
      const float *s = (const float *)scores->data + (bi * nc + ci) * n;
      const float *bx = (const float *)boxes->data + bi * n * 4;
      int64_t nn = 0, nk = 0;
      for (int64_t i = 0; i < n; i++)
        if (!has_thr || s[i] > thr) cand[nn++] = i;
      nms_scores_t ctx = {s};
      merge_sort(cand, tmp, nn, score_cmp, &ctx);
      for (int64_t k = 0; k < nn && nk < max_out; k++) {
        int keep = 1;
        for (int64_t q = 0; q < nk && keep; q++)
          keep = !suppressed(bx + cand[k] * 4, bx + kept[q] * 4, center, iou);
        if (!keep) continue;
        kept[nk++] = cand[k];
        if (total >= y->dims[0])
          return dml_cpu_err_shapes(c, "more selected boxes than the output's bound");
        out[total * 3] = bi;
        out[total * 3 + 1] = ci;
        out[total * 3 + 2] = cand[k];
        total++;
      }
    }
  y->dims[0] = total;
  return DML_OK;
}
