/*
 * cpu_axis_ops.c — ops along axes (added for issue #3): Hardmax, ReduceL1/L2/
 * LogSum/LogSumExp/SumSquare, CumSum, Trilu, EyeLike, LRN and
 * MeanVarianceNormalization.
 *
 * Float statistics accumulate in double; f32 data is read and written
 * directly, other float dtypes through dml_load_f64/dml_store_f64.
 * Integer sums (ReduceL1, ReduceSumSquare, CumSum) are 64-bit wrapping.
 */
#if defined(__GNUC__) && !defined(__clang__)
/* Before the includes, so the inline helpers get the same options. */
#pragma GCC optimize("O3", "no-trapping-math")
#endif
#include <math.h>
#include <string.h>

#include "cpu_internal.h"

static int same_shape(const dml_tensor_t *a, const dml_tensor_t *b) {
  return a->dtype == b->dtype && a->rank == b->rank &&
         !memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank);
}

/* ======================================================================
 * Reduced/kept index boxes shared by the reductions and MVN: x's dims
 * split by a mask into the kept box (row-major, the output's order) and
 * the reduced box, each with x's strides.
 * ====================================================================== */

typedef struct {
  int nk, nr;
  int64_t kext[DML_MAX_RANK], kstr[DML_MAX_RANK];
  int64_t rext[DML_MAX_RANK], rstr[DML_MAX_RANK];
  int64_t kcount, rcount;
} boxes_t;

static void make_boxes(const dml_tensor_t *x, const int *red, boxes_t *b) {
  int64_t str[DML_MAX_RANK];
  dml_cpu_strides(x->dims, x->rank, str);
  b->nk = b->nr = 0;
  b->kcount = b->rcount = 1;
  for (int32_t d = 0; d < x->rank; d++) {
    if (red[d]) {
      b->rext[b->nr] = x->dims[d], b->rstr[b->nr++] = str[d];
      b->rcount *= x->dims[d];
    } else {
      b->kext[b->nk] = x->dims[d], b->kstr[b->nk++] = str[d];
      b->kcount *= x->dims[d];
    }
  }
}

/* Runs `body` with `off` set to each offset (in x) of the reduced box
 * from `base`, in row-major order (an odometer; no allocation). */
#define FOR_BOX(b, base, off, body)                                         \
  do {                                                                      \
    int64_t idx_[DML_MAX_RANK] = {0};                                       \
    for (int64_t r_ = 0; r_ < (b)->rcount; r_++) {                          \
      int64_t off = (base);                                                 \
      for (int i_ = 0; i_ < (b)->nr; i_++) off += idx_[i_] * (b)->rstr[i_]; \
      body;                                                                 \
      for (int i_ = (b)->nr - 1; i_ >= 0; i_--) {                           \
        if (++idx_[i_] < (b)->rext[i_]) break;                              \
        idx_[i_] = 0;                                                       \
      }                                                                     \
    }                                                                       \
  } while (0)

/* Offset in x of kept-box element k. */
static int64_t kept_base(const boxes_t *b, int64_t k) {
  int64_t off = 0;
  for (int i = b->nk - 1; i >= 0; i--) {
    off += (k % b->kext[i]) * b->kstr[i];
    k /= b->kext[i];
  }
  return off;
}

/* Axes from attribute `axes` or else input 1 into red[]; *out_empty is set
 * when none were given (or the list is empty). */
static dml_status_t read_axes_mask(const dml_cpu_call_t *c, int32_t rank, int *red,
                                   int *out_empty) {
  int64_t axes[DML_MAX_RANK * 2];
  int64_t na = 0;
  size_t nattr = 0;
  const int64_t *aa = dml_cpu_get_ints(c, "axes", &nattr);
  const dml_tensor_t *ai = dml_cpu_in(c, 1);
  if (aa) {
    if (nattr > (size_t)DML_MAX_RANK * 2)
      return dml_cpu_err_shapes(c, "too many axes (%zu)", nattr);
    for (size_t i = 0; i < nattr; i++) axes[i] = aa[i];
    na = (int64_t)nattr;
  } else if (ai) {
    na = dml_cpu_read_ints(ai, axes, DML_MAX_RANK * 2);
    if (na < 0)
      return dml_cpu_err_shapes(c, "axes must be a 1-D integer tensor of <= %d values",
                                DML_MAX_RANK * 2);
  }
  for (int32_t d = 0; d < rank; d++) red[d] = 0;
  *out_empty = na == 0;
  for (int64_t i = 0; i < na; i++) {
    int64_t a;
    if (dml_cpu_norm_axis(axes[i], rank, &a))
      return dml_cpu_err_shapes(c, "axis %lld is out of range for rank %d",
                                (long long)axes[i], (int)rank);
    red[a] = 1;
  }
  return DML_OK;
}

/* ======================================================================
 * ReduceL1 (sum |x|), ReduceL2 (sqrt(sum x^2)), ReduceLogSum (log(sum x)),
 * ReduceLogSumExp (log(sum exp(x)), computed as max + log(sum exp(x -
 * max)); an infinite max is the result, a NaN gives NaN), ReduceSumSquare
 * (sum x^2): ONNX opset 13 definitions (axes
 * attribute, keepdims 1) with opset 18's axes input 1 and
 * noop_with_empty_axes. Empty reductions give 0, 0, -inf, -inf, 0.
 * T: float16, float, double, bfloat16, int32, int64, uint32, uint64 (all
 * integer dtypes accepted); integer L2/LogSum/LogSumExp truncate toward
 * zero.
 * ====================================================================== */

typedef enum { R2_L1, R2_L2, R2_LOG_SUM, R2_LOG_SUM_EXP, R2_SUM_SQUARE } r2kind_t;

static r2kind_t r2_kind(dml_op_t op) {
  switch (op) {
    case DML_OP_REDUCE_L1: return R2_L1;
    case DML_OP_REDUCE_L2: return R2_L2;
    case DML_OP_REDUCE_LOG_SUM: return R2_LOG_SUM;
    case DML_OP_REDUCE_LOG_SUM_EXP: return R2_LOG_SUM_EXP;
    default: return R2_SUM_SQUARE;
  }
}

/* f32, one contiguous reduced run per output element (inner == 1). */
static void r2_rows_f32(r2kind_t k, const float *x, float *y, int64_t outer, int64_t R) {
  for (int64_t o = 0; o < outer; o++) {
    const float *xo = x + o * R;
    double s = 0.0;
    switch (k) {
      case R2_L1:
        for (int64_t i = 0; i < R; i++) s += fabsf(xo[i]);
        break;
      case R2_L2:
      case R2_SUM_SQUARE:
        for (int64_t i = 0; i < R; i++) s += (double)xo[i] * xo[i];
        break;
      case R2_LOG_SUM:
        for (int64_t i = 0; i < R; i++) s += xo[i];
        break;
      case R2_LOG_SUM_EXP: {
        float m = -INFINITY;
        for (int64_t i = 0; i < R; i++) m = xo[i] > m || xo[i] != xo[i] ? xo[i] : m;
        if (isinf(m)) {
          y[o] = m;
          continue;
        }
        for (int64_t i = 0; i < R; i++) s += exp((double)xo[i] - m);
        s = m + log(s);
        break;
      }
    }
    y[o] = (float)(k == R2_L2 ? sqrt(s) : k == R2_LOG_SUM ? log(s) : s);
  }
}

dml_status_t dml_cpuk_Reduce2(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  r2kind_t k = r2_kind(c->op);
  if (!dml_dtype_is_float(dt) && !dml_dtype_is_int(dt))
    return dml_cpu_err_dtype(c, "input", dt);
  if (y->dtype != dt) return dml_cpu_err_dtype(c, "output", y->dtype);
  int red[DML_MAX_RANK], empty = 0;
  DML_RETURN_IF_ERROR(read_axes_mask(c, x->rank, red, &empty));
  int keep = dml_cpu_get_int(c, "keepdims", 1) != 0;
  if (empty) {
    if (dml_cpu_get_int(c, "noop_with_empty_axes", 0)) {
      if (!same_shape(x, y))
        return dml_cpu_err_shapes(c, "no-op reduction changes shape");
      memcpy(y->data, x->data, dml_tensor_bytes(x));
      return DML_OK;
    }
    for (int32_t d = 0; d < x->rank; d++) red[d] = 1;
  }
  /* Output shape: x's with reduced dims 1 (keepdims) or dropped. */
  int64_t e[DML_MAX_RANK];
  int32_t r = 0;
  for (int32_t d = 0; d < x->rank; d++)
    if (!red[d] || keep) e[r++] = red[d] ? 1 : x->dims[d];
  if (r != y->rank || memcmp(e, y->dims, sizeof(int64_t) * (size_t)r))
    return dml_cpu_err_shapes(c, "output shape does not match the reduction");
  boxes_t b;
  make_boxes(x, red, &b);
  if (b.kcount == 0) return DML_OK;
  /* f32 fast path: the reduced dims are the trailing ones. */
  int trailing = 1;
  for (int32_t d = 0, seen = 0; d < x->rank; d++) {
    if (red[d]) seen = 1;
    if (seen && !red[d] && x->dims[d] != 1) trailing = 0;
  }
  if (dt == DML_DTYPE_F32 && trailing) {
    r2_rows_f32(k, (const float *)x->data, (float *)y->data, b.kcount, b.rcount);
    return DML_OK;
  }
  int isf = dml_dtype_is_float(dt), uns = dml_cpu_is_unsigned(dt);
  for (int64_t o = 0; o < b.kcount; o++) {
    int64_t base = kept_base(&b, o);
    if (!isf && (k == R2_L1 || k == R2_SUM_SQUARE)) {
      uint64_t acc = 0;
      FOR_BOX(&b, base, off, {
        uint64_t v = (uint64_t)dml_load_i64(dt, x->data, (size_t)off);
        if (k == R2_L1)
          acc += (uns || (int64_t)v >= 0) ? v : 0 - v;
        else
          acc += v * v;
      });
      dml_store_i64(dt, y->data, (size_t)o, (int64_t)acc);
      continue;
    }
    double s = 0.0, m = -INFINITY;
#define LDV(off)                                                      \
  (isf   ? dml_cpu_ld(dt, x->data, off)                               \
   : uns ? (double)(uint64_t)dml_load_i64(dt, x->data, (size_t)(off)) \
         : (double)dml_load_i64(dt, x->data, (size_t)(off)))
    switch (k) {
      case R2_L1: FOR_BOX(&b, base, off, s += fabs(LDV(off))); break;
      case R2_L2:
        /* sc * sqrt(sum((x / sc)^2)), sc the power of two at or below
         * max |x| (exact scaling; 1 where the max is 0, inf or NaN):
         * squares of |x| > 1.3e154 overflow double where the norm does
         * not (f64 inputs) */
        FOR_BOX(&b, base, off, {
          double v = fabs(LDV(off));
          m = v > m || v != v ? v : m;
        });
        m = m > 0 && m < INFINITY ? ldexp(1.0, ilogb(m)) : 1.0;
        FOR_BOX(&b, base, off, {
          double v = LDV(off) / m;
          s += v * v;
        });
        break;
      case R2_SUM_SQUARE:
        FOR_BOX(&b, base, off, {
          double v = LDV(off);
          s += v * v;
        });
        break;
      case R2_LOG_SUM: FOR_BOX(&b, base, off, s += LDV(off)); break;
      case R2_LOG_SUM_EXP:
        FOR_BOX(&b, base, off, {
          double v = LDV(off);
          m = v > m || v != v ? v : m; /* NaN propagates */
        });
        if (!isinf(m)) FOR_BOX(&b, base, off, s += exp(LDV(off) - m));
        break;
    }
#undef LDV
    double res = k == R2_L2            ? m * sqrt(s)
                 : k == R2_LOG_SUM     ? log(s)
                 : k == R2_LOG_SUM_EXP ? (isinf(m) ? m : m + log(s))
                                       : s;
    if (isf)
      dml_cpu_st(dt, y->data, o, res);
    else
      dml_store_i64(dt, y->data, (size_t)o, (int64_t)res);
  }
  return DML_OK;
}

/* ======================================================================
 * Hardmax-13: 1 at the first maximum along `axis` (default -1), 0
 * elsewhere. T: float16, float, double, bfloat16. (The opset < 13 2-D
 * coercion is the importer's, as for Softmax.)
 * ====================================================================== */

dml_status_t dml_cpuk_Hardmax(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  if (!dml_dtype_is_float(dt)) return dml_cpu_err_dtype(c, "input", dt);
  if (!same_shape(x, y)) return dml_cpu_err_shapes(c, "Y must have X's shape and dtype");
  if (x->rank == 0) {
    dml_cpu_st(dt, y->data, 0, 1.0);
    return DML_OK;
  }
  int64_t axis;
  if (dml_cpu_norm_axis(dml_cpu_get_int(c, "axis", -1), x->rank, &axis))
    return dml_cpu_err_shapes(c, "axis %lld out of range",
                              (long long)dml_cpu_get_int(c, "axis", -1));
  int64_t outer = 1, n = x->dims[axis], inner = 1;
  for (int32_t i = 0; i < axis; i++) outer *= x->dims[i];
  for (int32_t i = (int32_t)axis + 1; i < x->rank; i++) inner *= x->dims[i];
  if (n == 0) return DML_OK;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      int64_t base = o * n * inner + in, best = 0;
      double bv = dml_cpu_ld(dt, x->data, base);
      for (int64_t i = 1; i < n; i++) {
        double v = dml_cpu_ld(dt, x->data, base + i * inner);
        if (v > bv || (v != v && bv == bv)) bv = v, best = i;
      }
      for (int64_t i = 0; i < n; i++)
        dml_cpu_st(dt, y->data, base + i * inner, i == best);
    }
  return DML_OK;
}

/* ======================================================================
 * CumSum-14: running sum of x along the axis held by input 1 (a 0-D or
 * 1-element integer tensor), `exclusive` (start from 0, skip the current
 * element) and `reverse` (sum from the end). T: float16, float, double,
 * bfloat16, int32, int64, uint32, uint64 (all integer dtypes accepted).
 * CumProd-26: the same with products (exclusive starts from 1).
 * ====================================================================== */

static dml_status_t cum_scan(const dml_cpu_call_t *c, int prod) {
  const dml_tensor_t *x = &c->inputs[0], *ax = &c->inputs[1];
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  if (!dml_dtype_is_float(dt) && !dml_dtype_is_int(dt))
    return dml_cpu_err_dtype(c, "input", dt);
  if (!same_shape(x, y)) return dml_cpu_err_shapes(c, "y must have x's shape and dtype");
  int64_t a;
  if (!dml_dtype_is_int(ax->dtype) || dml_cpu_numel(ax) != 1 || ax->rank > 1)
    return dml_cpu_err_shapes(c, "axis must be an integer scalar");
  if (x->rank == 0) {
    memcpy(y->data, x->data, dml_tensor_bytes(x));
    if (dml_cpu_get_int(c, "exclusive", 0)) {
      if (!prod)
        memset(y->data, 0, dml_tensor_bytes(y));
      else if (dml_dtype_is_float(dt))
        dml_store_f64(dt, y->data, 0, 1.0);
      else
        dml_store_i64(dt, y->data, 0, 1);
    }
    return DML_OK;
  }
  int64_t av = dml_load_i64(ax->dtype, ax->data, 0);
  if (dml_cpu_norm_axis(av, x->rank, &a))
    return dml_cpu_err_shapes(c, "axis %lld is out of range", (long long)av);
  int excl = dml_cpu_get_int(c, "exclusive", 0) != 0;
  int rev = dml_cpu_get_int(c, "reverse", 0) != 0;
  int64_t outer = 1, n = x->dims[a], inner = 1;
  for (int32_t i = 0; i < a; i++) outer *= x->dims[i];
  for (int32_t i = (int32_t)a + 1; i < x->rank; i++) inner *= x->dims[i];
  int isf = dml_dtype_is_float(dt);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      int64_t base = o * n * inner + in;
      double s = prod ? 1.0 : 0.0;
      uint64_t si = prod ? 1 : 0;
      for (int64_t j = 0; j < n; j++) {
        int64_t i = rev ? n - 1 - j : j, off = base + i * inner;
        if (dt == DML_DTYPE_F32 && !prod) {
          const float v = ((const float *)x->data)[off];
          if (excl) ((float *)y->data)[off] = (float)s;
          s += v;
          if (!excl) ((float *)y->data)[off] = (float)s;
        } else if (isf) {
          /* f32 products in double, rounded once per element */
          double v = dml_load_f64(dt, x->data, (size_t)off);
          if (excl) dml_store_f64(dt, y->data, (size_t)off, s);
          s = prod ? s * v : s + v;
          if (!excl) dml_store_f64(dt, y->data, (size_t)off, s);
        } else {
          uint64_t v = (uint64_t)dml_load_i64(dt, x->data, (size_t)off);
          if (excl) dml_store_i64(dt, y->data, (size_t)off, (int64_t)si);
          si = prod ? si * v : si + v;
          if (!excl) dml_store_i64(dt, y->data, (size_t)off, (int64_t)si);
        }
      }
    }
  return DML_OK;
}

dml_status_t dml_cpuk_CumSum(const dml_cpu_call_t *c) {
  return cum_scan(c, 0);
}
dml_status_t dml_cpuk_CumProd(const dml_cpu_call_t *c) {
  return cum_scan(c, 1);
}

/* ======================================================================
 * Trilu-14: keeps the upper (upper=1, default: j - i >= k) or lower
 * (upper=0: j - i <= k) triangle of each of x's last two dims and zeroes
 * the rest; k from the optional 0-D/1-element int64 input 1 (default 0).
 * Every dtype (bytes are copied).
 * ====================================================================== */

dml_status_t dml_cpuk_Trilu(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0], *kt = dml_cpu_in(c, 1);
  dml_tensor_t *y = &c->outputs[0];
  if (!same_shape(x, y)) return dml_cpu_err_shapes(c, "Y must have X's shape and dtype");
  if (x->rank < 2) return dml_cpu_err_shapes(c, "input must have rank >= 2");
  int64_t k = 0;
  if (kt) {
    if (!dml_dtype_is_int(kt->dtype) || dml_cpu_numel(kt) != 1 || kt->rank > 1)
      return dml_cpu_err_shapes(c, "k must be an integer scalar");
    k = dml_load_i64(kt->dtype, kt->data, 0);
  }
  int upper = dml_cpu_get_int(c, "upper", 1) != 0;
  int64_t N = x->dims[x->rank - 2], M = x->dims[x->rank - 1];
  int64_t batch = (N > 0 && M > 0) ? dml_cpu_numel(x) / (N * M) : 0;
  size_t es = dml_dtype_size(x->dtype);
  const char *src = (const char *)x->data;
  char *dst = (char *)y->data;
  for (int64_t b = 0; b < batch; b++)
    for (int64_t i = 0; i < N; i++) {
      size_t row = (size_t)((b * N + i) * M) * es;
      for (int64_t j = 0; j < M; j++) {
        int keepv = upper ? j - i >= k : j - i <= k;
        if (keepv)
          memcpy(dst + row + (size_t)j * es, src + row + (size_t)j * es, es);
        else
          memset(dst + row + (size_t)j * es, 0, es);
      }
    }
  return DML_OK;
}

/* ======================================================================
 * EyeLike-9: a 2-D tensor of input 0's shape with ones on the k-th
 * diagonal (j - i == k, default 0) and zeros elsewhere, in the output's
 * dtype (the `dtype` attribute, default input 0's; the caller sets it).
 * ====================================================================== */

dml_status_t dml_cpuk_EyeLike(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  if (x->rank != 2 || y->rank != 2 || x->dims[0] != y->dims[0] ||
      x->dims[1] != y->dims[1])
    return dml_cpu_err_shapes(c, "input and output must be 2-D of the same shape");
  dml_dtype_t dt = y->dtype;
  if (!dml_dtype_is_float(dt) && !dml_dtype_is_int(dt) && dt != DML_DTYPE_BOOL)
    return dml_cpu_err_dtype(c, "output", dt);
  int64_t k = dml_cpu_get_int(c, "k", 0), N = y->dims[0], M = y->dims[1];
  memset(y->data, 0, dml_tensor_bytes(y));
  for (int64_t i = 0; i < N; i++) {
    int64_t j = i + k;
    if (j < 0 || j >= M) continue;
    if (dml_dtype_is_float(dt))
      dml_cpu_st(dt, y->data, i * M + j, 1.0);
    else
      dml_store_i64(dt, y->data, (size_t)(i * M + j), 1);
  }
  return DML_OK;
}

/* ======================================================================
 * LRN-13 (local response normalization across channels, dim 1):
 *   square_sum[n,c,...] = sum of x[n,i,...]^2 for i in
 *     [max(0, c - floor((size-1)/2)), min(C-1, c + ceil((size-1)/2))],
 *   y = x / (bias + alpha / size * square_sum)^beta,
 * alpha 1e-4, beta 0.75, bias 1, size required. T: float16, float,
 * double, bfloat16.
 * ====================================================================== */

dml_status_t dml_cpuk_LRN(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  if (!dml_dtype_is_float(dt)) return dml_cpu_err_dtype(c, "input", dt);
  if (!same_shape(x, y)) return dml_cpu_err_shapes(c, "Y must have X's shape and dtype");
  if (x->rank < 2) return dml_cpu_err_shapes(c, "X must be [N, C, ...]");
  int64_t size = dml_cpu_get_int(c, "size", 0);
  if (size < 1)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "attribute 'size' must be >= 1, got %lld", (long long)size);
  double alpha = dml_cpu_get_float(c, "alpha", 1e-4);
  double beta = dml_cpu_get_float(c, "beta", 0.75);
  double bias = dml_cpu_get_float(c, "bias", 1.0);
  int64_t N = x->dims[0], C = x->dims[1], S = 1;
  for (int32_t i = 2; i < x->rank; i++) S *= x->dims[i];
  int64_t lo_off = (size - 1) / 2, hi_off = size / 2; /* floor, ceil of (size-1)/2 */
  double scale = alpha / (double)size;
  for (int64_t n = 0; n < N; n++)
    for (int64_t ch = 0; ch < C; ch++) {
      int64_t lo = ch - lo_off < 0 ? 0 : ch - lo_off;
      int64_t hi = ch + hi_off > C - 1 ? C - 1 : ch + hi_off;
      for (int64_t s = 0; s < S; s++) {
        double sq = 0.0;
        for (int64_t i = lo; i <= hi; i++) {
          double v = dml_cpu_ld(dt, x->data, (n * C + i) * S + s);
          sq += v * v;
        }
        int64_t off = (n * C + ch) * S + s;
        dml_cpu_st(dt, y->data, off,
                   dml_cpu_ld(dt, x->data, off) / pow(bias + scale * sq, beta));
      }
    }
  return DML_OK;
}

/* ======================================================================
 * MeanVarianceNormalization-13 (its function body): over `axes` (default
 * [0, 2, 3]), y = (x - mean) / (sqrt(mean(x^2) - mean^2) + 1e-9); the
 * variance is computed as the mean squared deviation (the same quantity,
 * without cancellation), both passes on x - x0, x0 the box's first element
 * (the shifted-data algorithm, Chan, Golub and LeVeque 1983): a box of equal
 * values gives y = 0 exactly, where a double mean rounded off double x
 * would be amplified by 1 / 1e-9 (f32, f16 and bf16 sums are exact there
 * anyway). T: float16, float, double, bfloat16.
 * ====================================================================== */

dml_status_t dml_cpuk_MeanVarianceNormalization(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  if (!dml_dtype_is_float(dt)) return dml_cpu_err_dtype(c, "input", dt);
  if (!same_shape(x, y)) return dml_cpu_err_shapes(c, "Y must have X's shape and dtype");
  int red[DML_MAX_RANK] = {0};
  size_t na = 0;
  const int64_t *aa = dml_cpu_get_ints(c, "axes", &na);
  static const int64_t dflt[3] = {0, 2, 3};
  if (!aa) aa = dflt, na = 3;
  for (size_t i = 0; i < na; i++) {
    int64_t a;
    if (dml_cpu_norm_axis(aa[i], x->rank, &a))
      return dml_cpu_err_shapes(c, "axis %lld is out of range for rank %d",
                                (long long)aa[i], (int)x->rank);
    red[a] = 1;
  }
  boxes_t b;
  make_boxes(x, red, &b);
  if (b.rcount == 0) return DML_OK;
  for (int64_t o = 0; o < b.kcount; o++) {
    int64_t base = kept_base(&b, o);
    double s = 0.0, v2 = 0.0, x0 = dml_cpu_ld(dt, x->data, base);
    FOR_BOX(&b, base, off, s += dml_cpu_ld(dt, x->data, off) - x0);
    double mean = s / (double)b.rcount;
    FOR_BOX(&b, base, off, {
      double d = dml_cpu_ld(dt, x->data, off) - x0 - mean;
      v2 += d * d;
    });
    double den = sqrt(v2 / (double)b.rcount) + 1e-9;
    FOR_BOX(
        &b, base, off,
        dml_cpu_st(dt, y->data, off, (dml_cpu_ld(dt, x->data, off) - x0 - mean) / den));
  }
  return DML_OK;
}
