/* schedule_topk_dft_tfidf.c — the scheduler's row-wise search, signal
 * and text forms
 * (schedule_internal.h): TopK, DFT and TfIdfVectorizer, one kernel per
 * node, each following its CPU reference (runtime/cpu/) value for value:
 *
 *   - TopK (runtime/cpu/cpu_index.c): one invocation per input element
 *     computes the element's rank in its row, the number of elements of
 *     the row that come before it in the order (value, then index: ties
 *     keep the lower index first, the spec's rule; largest or smallest),
 *     and stores the value and its index at that position when the rank is
 *     below k. k is the output's axis dim: a constant, or a data-dependent
 *     symbol the session computes on the host before the run (an input
 *     fed at run time; docs/kernels.md "Run-time dims"). O(n) compares per
 *     element, O(n^2) per row of n elements: meant for the rows of models
 *     and tests (a few thousand), not for sorting long vectors. The CPU's
 *     results are always sorted (sorted = 0 allows it); so are these. NaN
 *     counts as above every number, here as on the CPU;
 *   - DFT (opset 17, runtime/cpu/cpu_signal.c): one invocation per output
 *     bin, a direct O(n) sum over the (zero-padded or truncated) signal in
 *     f64, as the CPU's double sums; the twiddle of sample j and bin k
 *     comes from the exact integer phase j k mod n (a register stepped by
 *     k), reduced to a quarter turn and an angle of at most pi/4 in
 *     integers, then an f64 Taylor series (emit_dft): within a few 1e-16 of
 *     the CPU's cos/sin, so f32 results are the CPU's floats (but for rare
 *     rounding ties) and f64 results within about 1e-15; real or complex
 *     input ([..., 1|2]) of f32 or f64, inverse (1/n), onesided (n/2 + 1
 *     bins), dft_length (a constant), the axis attribute. The kernel holds
 *     f64 values: Vulkan devices need shaderFloat64;
 *   - TfIdfVectorizer (runtime/cpu/cpu_text.c): one invocation per (row,
 *     output coordinate) sums, over the pool n-grams mapped to that
 *     coordinate (in pool order, as the CPU adds them), the n-gram's
 *     weighted count; the count scans every start position and skip
 *     distance of the row. The pool, the n-grams' levels and positions,
 *     the coordinate -> n-gram lists and the weights are the kernel's
 *     constant tables (dml_kctab_t). i32/i64 tokens, [C] or [N, C] (N may
 *     be symbolic); string pools are refused (dmlc has no string dtype).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dml_tfidf.h"
#include "schedule_internal.h"
#include "schedule_ops_util.h"

#define WG 256

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ---- small helpers of this file ---- */

static const dml_pkg_value_t *output3(const sched_t *s, const dml_pkg_node_t *n,
                                      uint32_t k) {
  return k < n->n_outputs ? val(s, n->outputs[k]) : NULL;
}

/* 1 when a and b (arena values) share bytes in the memory plan. */
static int shares_memory(const dml_pkg_value_t *a, const dml_pkg_value_t *b) {
  if (a->storage == DML_PKG_STORAGE_CONST || b->storage == DML_PKG_STORAGE_CONST)
    return 0;
  return a->offset < b->offset + b->bytes && b->offset < a->offset + a->bytes;
}

/* l scaled by m (a count of work per element). */
static dml_klin_t lin_scaled(dml_klin_t l, int64_t m) {
  l.c *= m;
  l.c0 *= m;
  return l;
}

/* The product of t's dims [from, to) as an index expression. */
static const dml_kidx_t *dims_product(sched_t *s, const dml_type_t *t, int32_t from,
                                      int32_t to) {
  const dml_kidx_t *e = kc(s, 1);
  for (int32_t d = from; d < to; d++) e = kmul(s, e, dim_idx(s, t->dims[d]));
  return e;
}

/* A 1-D kernel holding `node` with `items` invocations of WG per workgroup;
 * returns the invocation id (NULL when out of memory). */
static const dml_kidx_t *row_kernel(sched_t *s, uint32_t node, dml_kernel_kind_t kind,
                                    dml_klin_t items, dml_kernel_t **out_k) {
  dml_kernel_t *K = dml_ksched_kernel(s, kind, node);
  if (!K) return NULL;
  K->local[0] = WG;
  K->items[0] = items;
  *out_k = K;
  return dml_ki_var(s->pool, DML_KVAR_GID_X);
}

/* The value of the constant integer scalar input k of n into *out (1), 0
 * when it is absent or not a one-element i64/i32 constant. */
static int const_scalar(const sched_t *s, const dml_pkg_node_t *n, uint32_t k,
                        int64_t *out) {
  const dml_pkg_value_t *v = input(s, n, k);
  dml_klin_t l;
  if (!v || v->storage != DML_PKG_STORAGE_CONST || !numel_of(&v->type, &l) ||
      l.sym >= 0 || l.c != 1 ||
      (v->type.dtype != DML_DTYPE_I64 && v->type.dtype != DML_DTYPE_I32))
    return 0;
  size_t w = v->type.dtype == DML_DTYPE_I64 ? 8 : 4;
  if (!s->weights || v->offset + w > s->weights_size) return 0;
  if (w == 8) {
    memcpy(out, s->weights + v->offset, 8);
  } else {
    int32_t t;
    memcpy(&t, s->weights + v->offset, 4);
    *out = t;
  }
  return 1;
}

/* ---- TopK ---- */

/* 1 when a comes before b in TopK's value order (largest: a > b, else
 * a < b; a float NaN counts as above every number). */
static const dml_kval_t *topk_before(dml_kpool_t *p, const dml_kval_t *a,
                                     const dml_kval_t *b, int largest, int is_float) {
  const dml_kval_t *c = dml_kv_fn(p, largest ? DML_KF_GT : DML_KF_LT, a, b);
  if (!is_float) return c;
  const dml_kval_t *na = dml_kv_fn(p, DML_KF_NOT, dml_kv_fn(p, DML_KF_EQ, a, a), NULL);
  const dml_kval_t *nb = dml_kv_fn(p, DML_KF_NOT, dml_kv_fn(p, DML_KF_EQ, b, b), NULL);
  /* largest: a NaN comes before any number; smallest: after any number */
  const dml_kval_t *nan_first =
      largest ? dml_kv_fn(p, DML_KF_AND, na, dml_kv_fn(p, DML_KF_NOT, nb, NULL))
              : dml_kv_fn(p, DML_KF_AND, nb, dml_kv_fn(p, DML_KF_NOT, na, NULL));
  return dml_kv_fn(p, DML_KF_OR, c, nan_first);
}

/* TopK-11 (and the earlier forms the importer normalizes): Values and
 * Indices (i64 or i32; either output may be absent) of the k largest or
 * smallest elements along `axis`, sorted, ties by the lower index. */
static const char *emit_top_k(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0), *yv = output3(s, n, 0),
                        *yi = output3(s, n, 1);
  if (!x) return "no input";
  if (!yv && !yi) return NULL; /* nothing is read */
  if (!typed_ok(x)) return "a dtype kernels do not hold, or a misaligned input";
  dml_kdtype_t t = kdt(x);
  if (t == DML_KT_BOOL) return "TopK of bool";
  if (data_dependent(s, &x->type)) return "an input dim computed from run-time data";
  dml_klin_t items; /* several symbols (TopK over [batch, seq, vocab]) */
  if (!numel_syms(&x->type, &items))
    return "dims over too many symbols (a symbol in three dims or two squared symbols)";
  int32_t r = x->type.rank;
  int64_t axis = dml_attr_int(n->attrs, n->n_attrs, "axis", -1);
  if (axis < 0) axis += r;
  if (r < 1 || axis < 0 || axis >= r) return "axis out of range";
  if (dml_ksched_lin_max(s, (dml_klin_t){x->type.dims[axis].value, x->type.dims[axis].sym,
                                         0, 0}) > 65535)
    return "a row longer than 65,535 (each element's rank loops over the row: "
           "quadratic, and lavapipe stops an invocation's loops after 65,535 "
           "iterations; the CPU sorts it)";
  const dml_pkg_value_t *outs[2] = {yv, yi};
  for (int o = 0; o < 2; o++) {
    const dml_pkg_value_t *y = outs[o];
    if (!y) continue;
    if (!typed_ok(y)) return "a misaligned output";
    if (o == 0 && y->type.dtype != x->type.dtype) return "Values must have X's dtype";
    if (o == 1 && y->type.dtype != DML_DTYPE_I64 && y->type.dtype != DML_DTYPE_I32)
      return "Indices must be i64 or i32";
    if (y->type.rank != r) return "outputs must have X's rank";
    for (int32_t d = 0; d < r; d++)
      if (d != axis && (y->type.dims[d].value != x->type.dims[d].value ||
                        y->type.dims[d].sym != x->type.dims[d].sym))
        return "outputs must have X's dims but at the axis";
    if (shares_memory(x, y)) return "its result overlaps its operands in the memory plan";
  }
  dml_kernel_t *K;
  const dml_kidx_t *gid = row_kernel(s, node, DML_KK_REDUCE, items, &K);
  if (!gid) return NULL;
  int32_t tv = DML_KVAR_FIRST_LOOP;
  const dml_kidx_t *inner = dims_product(s, &x->type, (int32_t)axis + 1, r);
  const dml_kidx_t *len = dim_idx(s, x->type.dims[axis]);
  const dml_kidx_t *i = dml_ki_bin(p, DML_KI_MOD, gid, inner);
  const dml_kidx_t *rest = dml_ki_bin(p, DML_KI_DIV, gid, inner);
  const dml_kidx_t *j = dml_ki_bin(p, DML_KI_MOD, rest, len);
  const dml_kidx_t *o = dml_ki_bin(p, DML_KI_DIV, rest, len);
  /* element t of the row: base + t * inner, base = gid - j * inner */
  const dml_kidx_t *base = dml_ki_bin(p, DML_KI_SUB, gid, kmul(s, j, inner));
  const dml_kidx_t *tvar = dml_ki_var(p, tv);
  int is_float = dml_kdtype_is_float(t);
  int largest = dml_attr_int(n->attrs, n->n_attrs, "largest", 1) != 0;
  K->n_regs = 3;
  const dml_kval_t *xj = dml_kv_reg_t(p, 0, t), *xt = dml_kv_reg_t(p, 2, t);
  const dml_kval_t *rank = dml_kv_reg_t(p, 1, DML_KT_I32);
  const dml_kval_t *t_lt_j = dml_kv_fn(p, DML_KF_LT, dml_kv_idx(p, DML_KT_I32, tvar),
                                       dml_kv_idx(p, DML_KT_I32, j));
  /* t precedes j: before(x_t, x_j), or a tie (neither before the other)
   * with t < j */
  const dml_kval_t *precedes = dml_kv_fn(
      p, DML_KF_OR, topk_before(p, xt, xj, largest, is_float),
      dml_kv_fn(
          p, DML_KF_AND, t_lt_j,
          dml_kv_fn(p, DML_KF_NOT, topk_before(p, xj, xt, largest, is_float), NULL)));
  dml_kblock_t loop = {0};
  dml_kblock_add(&loop, assign(s, DML_KS_LET, 2,
                               load_at(s, x, kadd(s, base, kmul(s, tvar, inner)))));
  dml_kblock_add(&loop,
                 assign(s, DML_KS_SET, 1,
                        dml_kv_fn(p, DML_KF_ADD, rank,
                                  dml_kv_select(p, precedes, dml_kv_one(p, DML_KT_I32),
                                                dml_kv_zero(p, DML_KT_I32)))));
  dml_kblock_t body = {0};
  dml_kblock_add(&body, assign(s, DML_KS_LET, 0, load_at(s, x, gid)));
  dml_kblock_add(&body, assign(s, DML_KS_LET, 1, dml_kv_zero(p, DML_KT_I32)));
  dml_kblock_add(&body, for_loop(s, tv, len, loop.first));
  /* each output's own k (shape inference may give Values and Indices
   * distinct symbols of one value) */
  const dml_kidx_t *ri = dml_ki_val(p, rank);
  for (int q = 0; q < 2; q++) {
    const dml_pkg_value_t *y = outs[q];
    if (!y) continue;
    const dml_kidx_t *kdim = dim_idx(s, y->type.dims[axis]);
    const dml_kidx_t *yidx = kadd(s, kmul(s, kadd(s, kmul(s, o, kdim), ri), inner), i);
    dml_kblock_add(
        &body,
        if_lt(s, ri, kdim, store_at(s, y, yidx, q == 0 ? xj : dml_kv_idx(p, kdt(y), j))));
  }
  K->body = if_lt(s, gid, dml_ki_lin(p, items), body.first);
  int64_t n_static = x->type.dims[axis].sym < 0 ? x->type.dims[axis].value : 1;
  K->flops = lin_scaled(items, 4 * n_static);
  K->bytes = lin_scaled(items, (int64_t)dml_kdtype_size(t) * (n_static + 2) + 8);
  return NULL;
}

/* ---- DFT ---- */

/* The f64 constant v as the sum of three f32 constants (hi, the nearest
 * f32 of the rest, and of what is left): exact for every double of normal
 * range, since 3 x 24 bits cover its 53 (kernel constants are f32 values). */
static const dml_kval_t *f64_const(dml_kpool_t *p, double v) {
  float hi = (float)v;
  double r = v - (double)hi;
  float mid = (float)r;
  float lo = (float)(r - (double)mid);
  const dml_kval_t *c = dml_kv_fconst(p, DML_KT_F64, hi);
  if (mid != 0.0f) c = dml_kv_fn(p, DML_KF_ADD, c, dml_kv_fconst(p, DML_KT_F64, mid));
  if (lo != 0.0f) c = dml_kv_fn(p, DML_KF_ADD, c, dml_kv_fconst(p, DML_KT_F64, lo));
  return c;
}

/* sin(x) (odd = 1) or cos(x) (odd = 0) of an f64 x with |x| <= pi/4 (x2 =
 * x * x): the Taylor series through x^17 / x^16 in Horner form (the next
 * term is below 2e-18 there). */
static const dml_kval_t *taylor_sincos(dml_kpool_t *p, const dml_kval_t *x,
                                       const dml_kval_t *x2, int odd) {
  double f[20];
  f[0] = 1;
  for (int k = 1; k < 20; k++) f[k] = f[k - 1] * k;
  int top = odd ? 17 : 16;
  const dml_kval_t *acc = f64_const(p, ((top / 2) % 2 ? -1.0 : 1.0) / f[top]);
  for (int k = top - 2; k >= odd; k -= 2)
    acc = dml_kv_fn(p, DML_KF_ADD, f64_const(p, ((k / 2) % 2 ? -1.0 : 1.0) / f[k]),
                    dml_kv_fn(p, DML_KF_MUL, x2, acc));
  return odd ? dml_kv_fn(p, DML_KF_MUL, x, acc) : acc;
}

/* DFT-17: input [..., n, 1|2] (f32 or f64), dft_length (an optional
 * constant scalar), attributes axis (default 1), inverse, onesided. The
 * sums are f64 (as the CPU's double sums). The twiddle of the exact phase
 * ph = j k mod n (an i32 register stepped by k) is computed in f64 from
 * integers: q = round(4 ph / n) quarter turns and the rest t = 4 ph - q n
 * (|t| <= n/2), the angle t pi / (2 n) (|.| <= pi/4) through
 * taylor_sincos, then rotated by q quarter turns: within a few 1e-16 of
 * the CPU's cos/sin of 2 pi ph / n, for any n below 2^26. */
static const char *emit_dft(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0), *y = output3(s, n, 0);
  if (!x || !y) return "no input or output";
  if ((x->type.dtype != DML_DTYPE_F32 && x->type.dtype != DML_DTYPE_F64) ||
      y->type.dtype != x->type.dtype)
    return "only f32 and f64 signals (the output of the input's dtype) are emitted";
  if (!typed_ok(x) || !typed_ok(y)) return "a misaligned value";
  if (data_dependent(s, &x->type) || data_dependent(s, &y->type))
    return "a dim computed from run-time data";
  int32_t r = x->type.rank;
  if (r < 2 || x->type.dims[r - 1].sym >= 0 ||
      (x->type.dims[r - 1].value != 1 && x->type.dims[r - 1].value != 2))
    return "input must be [..., n, 1 or 2]";
  if (input(s, n, 2)) return "axis fed as input 2 (DFT-20) is not emitted";
  int64_t axis = dml_attr_int(n->attrs, n->n_attrs, "axis", 1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r - 2) return "axis out of range";
  int inverse = dml_attr_int(n->attrs, n->n_attrs, "inverse", 0) != 0;
  int onesided = dml_attr_int(n->attrs, n->n_attrs, "onesided", 0) != 0;
  if (onesided && inverse) return "onesided inverse DFT (the CPU refuses it too)";
  if (x->type.dims[axis].sym >= 0) return "a symbolic signal length";
  int64_t in_n = x->type.dims[axis].value, nn = in_n;
  if (input(s, n, 1) && !const_scalar(s, n, 1, &nn))
    return "dft_length must be a constant integer scalar";
  if (nn < 1 || nn >= ((int64_t)1 << 26)) return "dft_length out of range [1, 2^26)";
  if ((in_n < nn ? in_n : nn) > 65535)
    return "a signal longer than 65,535 (each bin's direct sum loops over it: lavapipe "
           "stops an invocation's loops after 65,535 iterations; the CPU computes it)";
  int64_t bins = onesided ? nn / 2 + 1 : nn;
  if (y->type.rank != r || y->type.dims[axis].sym >= 0 ||
      y->type.dims[axis].value != bins || y->type.dims[r - 1].sym >= 0 ||
      y->type.dims[r - 1].value != 2)
    return "output must have the bins on the axis and last dim 2";
  for (int32_t d = 0; d < r - 1; d++)
    if (d != axis && (y->type.dims[d].value != x->type.dims[d].value ||
                      y->type.dims[d].sym != x->type.dims[d].sym))
      return "output dims differ from the input's";
  if (shares_memory(x, y)) return "its result overlaps its operands in the memory plan";
  dml_klin_t ynum;
  if (!numel_of(&y->type, &ynum)) return "more than one symbolic dim";
  dml_klin_t items = {ynum.c / 2, ynum.sym, ynum.c0 / 2, 0};

  dml_kernel_t *K;
  const dml_kidx_t *gid = row_kernel(s, node, DML_KK_REDUCE, items, &K);
  if (!gid) return NULL;
  int32_t jv = DML_KVAR_FIRST_LOOP;
  const dml_kidx_t *jx = dml_ki_var(p, jv);
  int64_t ce = x->type.dims[r - 1].value, m = in_n < nn ? in_n : nn;
  const dml_kidx_t *inner = dims_product(s, &x->type, (int32_t)axis + 1, r - 1);
  const dml_kidx_t *i = dml_ki_bin(p, DML_KI_MOD, gid, inner);
  const dml_kidx_t *rest = dml_ki_bin(p, DML_KI_DIV, gid, inner);
  const dml_kidx_t *kb = dml_ki_bin(p, DML_KI_MOD, rest, kc(s, bins));
  const dml_kidx_t *o = dml_ki_bin(p, DML_KI_DIV, rest, kc(s, bins));
  /* sample j of the row: ((o * in_n + j) * inner + i) * ce */
  const dml_kidx_t *xe = kmul(
      s, kadd(s, kmul(s, kadd(s, kmul(s, o, kc(s, in_n)), jx), inner), i), kc(s, ce));
  enum { R_RE, R_IM, R_PH, R_Q, R_X, R_X2, R_SR, R_CR, R_XR, R_XI, R_C, R_S, R_N };
  K->n_regs = R_N;
  const dml_kdtype_t F = DML_KT_F64, I = DML_KT_I32;
#define RG(r) dml_kv_reg_t(p, (r), F)
#define OP(f, a, b) dml_kv_fn(p, DML_KF_##f, (a), (b))
#define IC(c) dml_kv_iconst(p, I, (c))
  const dml_kval_t *ph = dml_kv_reg_t(p, R_PH, I), *q = dml_kv_reg_t(p, R_Q, I);
  dml_kblock_t loop = {0};
  /* q = floor((8 ph + n) / 2n), the nearest quarter turn (0 .. 4) */
  const dml_kidx_t *qi =
      dml_ki_bin(p, DML_KI_DIV, kadd(s, kmul(s, dml_ki_val(p, ph), kc(s, 8)), kc(s, nn)),
                 kc(s, 2 * nn));
  dml_kblock_add(&loop, assign(s, DML_KS_SET, R_Q, dml_kv_idx(p, I, qi)));
  /* x = (4 ph - q n) pi / (2 n) */
  const dml_kval_t *t = OP(SUB, OP(MUL, ph, IC(4)), OP(MUL, q, IC(nn)));
  dml_kblock_add(&loop, assign(s, DML_KS_SET, R_X,
                               OP(MUL, dml_kv_cast(p, F, t),
                                  f64_const(p, M_PI / (2.0 * (double)nn)))));
  dml_kblock_add(&loop, assign(s, DML_KS_SET, R_X2, OP(MUL, RG(R_X), RG(R_X))));
  dml_kblock_add(&loop,
                 assign(s, DML_KS_SET, R_SR, taylor_sincos(p, RG(R_X), RG(R_X2), 1)));
  dml_kblock_add(&loop,
                 assign(s, DML_KS_SET, R_CR, taylor_sincos(p, RG(R_X), RG(R_X2), 0)));
  /* rotated by q quarter turns: (c, s), (-s, c), (-c, -s), (s, -c) */
  const dml_kval_t *qm = OP(IMOD, q, IC(4));
  const dml_kval_t *q1 = OP(EQ, qm, IC(1)), *q2 = OP(EQ, qm, IC(2)),
                   *q3 = OP(EQ, qm, IC(3));
  const dml_kval_t *sr = RG(R_SR), *cr0 = RG(R_CR);
  const dml_kval_t *nsr = OP(NEG, sr, NULL), *ncr = OP(NEG, cr0, NULL);
  const dml_kval_t *cq =
      dml_kv_select(p, q1, nsr, dml_kv_select(p, q2, ncr, dml_kv_select(p, q3, sr, cr0)));
  const dml_kval_t *sq =
      dml_kv_select(p, q1, cr0, dml_kv_select(p, q2, nsr, dml_kv_select(p, q3, ncr, sr)));
  dml_kblock_add(&loop, assign(s, DML_KS_SET, R_C, cq));
  /* the forward transform's angle is -2 pi ph / n */
  dml_kblock_add(&loop, assign(s, DML_KS_SET, R_S, inverse ? sq : OP(NEG, sq, NULL)));
  dml_kblock_add(&loop,
                 assign(s, DML_KS_SET, R_XR, dml_kv_cast(p, F, load_at(s, x, xe))));
  const dml_kval_t *xr = RG(R_XR), *xi = RG(R_XI), *cr = RG(R_C), *ci = RG(R_S);
  if (ce == 2) {
    dml_kblock_add(&loop,
                   assign(s, DML_KS_SET, R_XI,
                          dml_kv_cast(p, F, load_at(s, x, kadd(s, xe, kc(s, 1))))));
    dml_kblock_add(&loop,
                   assign(s, DML_KS_SET, R_RE,
                          OP(ADD, RG(R_RE), OP(SUB, OP(MUL, xr, cr), OP(MUL, xi, ci)))));
    dml_kblock_add(&loop,
                   assign(s, DML_KS_SET, R_IM,
                          OP(ADD, RG(R_IM), OP(ADD, OP(MUL, xr, ci), OP(MUL, xi, cr)))));
  } else {
    dml_kblock_add(&loop,
                   assign(s, DML_KS_SET, R_RE, OP(ADD, RG(R_RE), OP(MUL, xr, cr))));
    dml_kblock_add(&loop,
                   assign(s, DML_KS_SET, R_IM, OP(ADD, RG(R_IM), OP(MUL, xr, ci))));
  }
  /* the next sample's phase: (ph + k) mod n, with k < n */
  dml_kblock_add(&loop, assign(s, DML_KS_SET, R_PH, OP(ADD, ph, dml_kv_idx(p, I, kb))));
  dml_kblock_add(&loop,
                 assign(s, DML_KS_SET, R_PH,
                        dml_kv_select(p, OP(GE, ph, IC(nn)), OP(SUB, ph, IC(nn)), ph)));
  dml_kblock_t body = {0};
  for (int32_t g = 0; g < R_N; g++)
    dml_kblock_add(&body,
                   assign(s, DML_KS_LET, (uint32_t)g,
                          g == R_PH || g == R_Q ? dml_kv_zero(p, I) : dml_kv_zero(p, F)));
  dml_kblock_add(&body, for_loop(s, jv, kc(s, m), loop.first));
  const dml_kval_t *fre = RG(R_RE), *fim = RG(R_IM);
  if (inverse) {
    const dml_kval_t *fn = dml_kv_fconst(p, F, (float)nn); /* exact: nn < 2^24 */
    fre = OP(DIV, fre, fn);
    fim = OP(DIV, fim, fn);
  }
  dml_kdtype_t yt = kdt(y);
  const dml_kidx_t *ye = kmul(s, gid, kc(s, 2));
  dml_kblock_add(&body, store_at(s, y, ye, dml_kv_cast(p, yt, fre)));
  dml_kblock_add(&body, store_at(s, y, kadd(s, ye, kc(s, 1)), dml_kv_cast(p, yt, fim)));
#undef RG
#undef OP
#undef IC
  K->body = if_lt(s, gid, dml_ki_lin(p, items), body.first);
  K->flops = lin_scaled(items, 60 * m);
  K->bytes = lin_scaled(items, (int64_t)dml_dtype_size(x->type.dtype) * (ce * m + 2));
  return NULL;
}

/* ---- TfIdfVectorizer ---- */

/* TfIdfVectorizer-9 with an integer pool (dml_tfidf.h). Constant tables:
 * ctab0 (i32) holds, from offset 0, ostart[0..K] (the n-grams of output
 * coordinate k are list[ostart[k] .. ostart[k+1])), list[], the level
 * (length) of each n-gram (0 when its length is outside
 * [min_gram_length, max_gram_length]: never counted), its pool position,
 * and the pool; ctab1 (f32) the weights (IDF and TFIDF). */
static const char *emit_tfidf(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0), *y = output3(s, n, 0);
  dml_tfidf_t t;
  int rc = dml_tfidf_parse(n->attrs, n->n_attrs, &t, NULL, 0);
  if (rc > 0) return "string pools (pool_strings): dmlc has no string dtype";
  if (rc < 0) return "its attributes are invalid (the CPU refuses them too)";
  if (!x || !y) return "no input or output";
  if ((x->type.dtype != DML_DTYPE_I32 && x->type.dtype != DML_DTYPE_I64) ||
      y->type.dtype != DML_DTYPE_F32)
    return "only i32/i64 tokens and an f32 output are emitted";
  if (!typed_ok(x) || !typed_ok(y)) return "a misaligned value";
  if (data_dependent(s, &x->type) || data_dependent(s, &y->type))
    return "a dim computed from run-time data";
  int32_t r = x->type.rank;
  if (r != 1 && r != 2) return "input must be [C] or [N, C]";
  if (x->type.dims[r - 1].sym >= 0) return "a symbolic row length C";
  if (r == 2 && x->type.dims[0].sym >= 0 && x->type.dims[0].value != 1)
    return "a symbolic batch with a coefficient";
  if (y->type.rank != r || y->type.dims[r - 1].sym >= 0 ||
      y->type.dims[r - 1].value != t.out_size ||
      (r == 2 && (y->type.dims[0].value != x->type.dims[0].value ||
                  y->type.dims[0].sym != x->type.dims[0].sym)))
    return "output must be [K] or [N, K] with K = max(ngram_indexes) + 1";
  if (shares_memory(x, y)) return "its result overlaps its operands in the memory plan";
  for (size_t k = 0; k < t.n_pool; k++)
    if (t.pool[k] < INT32_MIN || t.pool[k] > INT32_MAX)
      return "pool values beyond the i32 range";
  int64_t C = x->type.dims[r - 1].value, KO = t.out_size, NG = (int64_t)t.n_ngrams;
  int64_t n_i = (KO + 1) + NG + 2 * NG + (int64_t)t.n_pool;
  int weighted = t.mode != DML_TFIDF_TF;
  if (n_i + (weighted ? NG : 0) > DML_KCTAB_MAX_ENTRIES)
    return "a pool too large for the kernel's constant tables";

  /* the tables */
  int32_t *ci = (int32_t *)dml_kpool_alloc(p, (size_t)n_i * sizeof *ci);
  float *cf = (float *)dml_kpool_alloc(p, (size_t)(NG > 0 ? NG : 1) * sizeof *cf);
  dml_kctab_t *tabs = (dml_kctab_t *)dml_kpool_alloc(p, 2 * sizeof *tabs);
  if (!ci || !cf || !tabs) return NULL;
  int64_t o_start = 0, o_list = KO + 1, o_len = o_list + NG, o_pos = o_len + NG,
          o_pool = o_pos + NG;
  for (int64_t g = 0; g < NG; g++) ci[o_start + t.ngram_indexes[g] + 1]++;
  for (int64_t k = 0; k < KO; k++) ci[o_start + k + 1] += ci[o_start + k];
  {
    int64_t *fill = (int64_t *)calloc((size_t)KO, sizeof *fill);
    if (!fill) return "out of memory";
    for (int64_t g = 0; g < NG; g++) {
      int64_t k = t.ngram_indexes[g];
      ci[o_list + ci[o_start + k] + fill[k]++] = (int32_t)g;
    }
    free(fill);
  }
  int64_t n_hi =
      t.max_gram_length < (int64_t)t.n_levels ? t.max_gram_length : (int64_t)t.n_levels;
  int64_t max_len = 0;
  for (int64_t len = 1; len <= (int64_t)t.n_levels; len++) {
    int64_t start, cnt, first;
    dml_tfidf_level(&t, len, &start, &cnt, &first);
    int active = len >= t.min_gram_length && len <= n_hi;
    for (int64_t q = 0; q < cnt; q++) {
      ci[o_len + first + q] = active ? (int32_t)len : 0;
      ci[o_pos + first + q] = (int32_t)(start + q * len);
    }
    if (active && cnt > 0 && len > max_len) max_len = len;
  }
  for (size_t k = 0; k < t.n_pool; k++) ci[o_pool + (int64_t)k] = (int32_t)t.pool[k];
  for (int64_t g = 0; g < NG; g++) cf[g] = t.weights ? (float)t.weights[g] : 1.0f;
  tabs[0] = (dml_kctab_t){DML_KT_I32, (uint32_t)n_i, NULL, ci};
  tabs[1] = (dml_kctab_t){DML_KT_F32, (uint32_t)(NG > 0 ? NG : 1), cf, NULL};

  int64_t rows = r == 2 ? x->type.dims[0].value : 1;
  int32_t rsym = r == 2 ? x->type.dims[0].sym : -1;
  dml_klin_t items = {KO * rows, rsym, 0, 0};
  dml_kernel_t *K;
  const dml_kidx_t *gid = row_kernel(s, node, DML_KK_REDUCE, items, &K);
  if (!gid) return NULL;
  K->ctabs = tabs;
  K->n_ctabs = weighted ? 2 : 1;
  const dml_kidx_t *row = dml_ki_bin(p, DML_KI_DIV, gid, kc(s, KO));
  const dml_kidx_t *kk = dml_ki_bin(p, DML_KI_MOD, gid, kc(s, KO));
  int32_t ve = DML_KVAR_FIRST_LOOP, vd = ve + 1, vp = ve + 2, vj = ve + 3;
  const dml_kidx_t *ie = dml_ki_var(p, ve), *id = dml_ki_var(p, vd),
                   *ip = dml_ki_var(p, vp), *ij = dml_ki_var(p, vj);
  enum { R_ACC, R_G, R_LEN, R_POS, R_CNT, R_LIM, R_HIT, R_N };
  K->n_regs = R_N;
  const dml_kval_t *acc = dml_kv_reg(p, R_ACC);
  const dml_kval_t *g = dml_kv_reg_t(p, R_G, DML_KT_I32),
                   *len = dml_kv_reg_t(p, R_LEN, DML_KT_I32),
                   *pos = dml_kv_reg_t(p, R_POS, DML_KT_I32),
                   *cnt = dml_kv_reg_t(p, R_CNT, DML_KT_I32),
                   *lim = dml_kv_reg_t(p, R_LIM, DML_KT_I32),
                   *hit = dml_kv_reg_t(p, R_HIT, DML_KT_BOOL);
  const dml_kval_t *zero = dml_kv_zero(p, DML_KT_I32), *one = dml_kv_one(p, DML_KT_I32);
#define CT(off, e) dml_kv_ctab(p, 0, DML_KT_I32, kadd(s, kc(s, (off)), (e)))
  const dml_kval_t *e0 = CT(o_start, kk), *e1 = CT(o_start + 1, kk);
  /* the match of token j of the n-gram at start p, distance d + 1 */
  const dml_kidx_t *tok =
      kadd(s, kmul(s, row, kc(s, C)), kadd(s, ip, kmul(s, ij, kadd(s, id, kc(s, 1)))));
  const dml_kval_t *xv = dml_kv_cast(p, DML_KT_I64, load_at(s, x, tok));
  const dml_kval_t *pv =
      dml_kv_cast(p, DML_KT_I64,
                  dml_kv_ctab(p, 0, DML_KT_I32,
                              kadd(s, kc(s, o_pool), kadd(s, dml_ki_val(p, pos), ij))));
  dml_kstmt_t *jloop =
      for_loop(s, vj, dml_ki_val(p, len),
               assign(s, DML_KS_SET, R_HIT,
                      dml_kv_fn(p, DML_KF_AND, hit, dml_kv_fn(p, DML_KF_EQ, xv, pv))));
  dml_kblock_t pb = {0};
  dml_kblock_add(&pb, assign(s, DML_KS_SET, R_HIT, dml_kv_one(p, DML_KT_BOOL)));
  dml_kblock_add(&pb, jloop);
  dml_kblock_add(&pb,
                 assign(s, DML_KS_SET, R_CNT,
                        dml_kv_fn(p, DML_KF_ADD, cnt, dml_kv_select(p, hit, one, zero))));
  /* lim = the count of start positions: max(0, C - (len - 1) (d + 1)), 0
   * for unigrams past the first distance (counted once) */
  const dml_kval_t *dv = dml_kv_idx(p, DML_KT_I32, kadd(s, id, kc(s, 1)));
  const dml_kval_t *span =
      dml_kv_fn(p, DML_KF_SUB, dml_kv_iconst(p, DML_KT_I32, C),
                dml_kv_fn(p, DML_KF_MUL, dml_kv_fn(p, DML_KF_SUB, len, one), dv));
  const dml_kval_t *uni_skip = dml_kv_fn(p, DML_KF_AND, dml_kv_fn(p, DML_KF_EQ, len, one),
                                         dml_kv_fn(p, DML_KF_GT, dv, one));
  dml_kblock_t db = {0};
  dml_kblock_add(&db, assign(s, DML_KS_SET, R_LIM,
                             dml_kv_select(p, uni_skip, zero,
                                           dml_kv_fn(p, DML_KF_MAX, span, zero))));
  dml_kblock_add(&db, for_loop(s, vp, dml_ki_val(p, lim), pb.first));
  int64_t dmax = (t.max_skip_count < C - 1 ? t.max_skip_count : C - 1) + 1;
  if (dmax < 0) dmax = 0;
  dml_kblock_t eb = {0};
  /* list entry e of coordinate k: list[e0 + e] */
  dml_kblock_add(&eb,
                 assign(s, DML_KS_SET, R_G, CT(o_list, kadd(s, dml_ki_val(p, e0), ie))));
  dml_kblock_add(&eb, assign(s, DML_KS_SET, R_LEN, CT(o_len, dml_ki_val(p, g))));
  dml_kblock_add(&eb, assign(s, DML_KS_SET, R_POS, CT(o_pos, dml_ki_val(p, g))));
  dml_kblock_add(&eb, assign(s, DML_KS_SET, R_CNT, zero));
  if (max_len > 0 && dmax > 0) {
    dml_kblock_add(&eb, if_in(s, dml_ki_val(p, len), kc(s, 1), kc(s, max_len + 1),
                              for_loop(s, vd, kc(s, dmax), db.first)));
  }
  const dml_kval_t *fc = dml_kv_cast(p, DML_KT_F32, cnt);
  const dml_kval_t *w = dml_kv_ctab(p, 1, DML_KT_F32, dml_ki_val(p, g));
  const dml_kval_t *v =
      t.mode == DML_TFIDF_TF ? fc
      : t.mode == DML_TFIDF_IDF
          ? dml_kv_select(p, dml_kv_fn(p, DML_KF_GT, cnt, zero), w, dml_kv_const(p, 0.0f))
          : dml_kv_fn(p, DML_KF_MUL, fc, w);
  dml_kblock_add(&eb, assign(s, DML_KS_SET, R_ACC, dml_kv_fn(p, DML_KF_ADD, acc, v)));
#undef CT
  dml_kblock_t body = {0};
  dml_kblock_add(&body, assign(s, DML_KS_LET, R_ACC, dml_kv_const(p, 0.0f)));
  dml_kblock_add(&body, assign(s, DML_KS_LET, R_G, zero));
  dml_kblock_add(&body, assign(s, DML_KS_LET, R_LEN, zero));
  dml_kblock_add(&body, assign(s, DML_KS_LET, R_POS, zero));
  dml_kblock_add(&body, assign(s, DML_KS_LET, R_CNT, zero));
  dml_kblock_add(&body, assign(s, DML_KS_LET, R_LIM, zero));
  dml_kblock_add(&body, assign(s, DML_KS_LET, R_HIT, dml_kv_one(p, DML_KT_BOOL)));
  dml_kblock_add(
      &body, for_loop(s, ve, dml_ki_val(p, dml_kv_fn(p, DML_KF_SUB, e1, e0)), eb.first));
  dml_kblock_add(&body, store_at(s, y, gid, acc));
  K->body = if_lt(s, gid, dml_ki_lin(p, items), body.first);
  int64_t per = NG / (KO > 0 ? KO : 1) + 1;
  K->flops = lin_scaled(items, per * dmax * C * (max_len > 0 ? max_len : 1));
  K->bytes = lin_scaled(items, 4 + per * dmax * C * 4);
  return NULL;
}

/* ---- dispatch ---- */

int dml_ksched_topk_dft_tfidf_handles(dml_op_t op) {
  return op == DML_OP_TOP_K || op == DML_OP_DFT || op == DML_OP_TF_IDF_VECTORIZER;
}

void dml_ksched_topk_dft_tfidf_emit(sched_t *s, uint32_t node) {
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const char *why;
  switch (n->op) {
    case DML_OP_TOP_K: why = emit_top_k(s, node); break;
    case DML_OP_DFT: why = emit_dft(s, node); break;
    default: why = emit_tfidf(s, node); break;
  }
  if (why) dml_ksched_unsupported(s, node, why);
}
