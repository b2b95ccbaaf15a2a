/* schedule_ops1.c — more of the scheduler's kernel forms
 * (schedule_internal.h), each one kernel per node and one invocation per
 * output element unless said otherwise, following the CPU reference
 * (runtime/cpu/) element for element:
 *
 *   - Trilu (k from input 1, constant or fed at run time), EyeLike (k),
 *     IsInf (detect_positive/detect_negative), IsNaN (x != x): selects on
 *     the element's coordinates or value; BitShift on u8/u16/u32/u64
 *     (x * 2^s and x / 2^s, 0 for shifts of the bit width or more);
 *   - CumSum (exclusive, reverse; the axis input constant or fed at run
 *     time: one guarded loop per possible axis): each element sums its
 *     prefix (suffix) along the axis;
 *   - ScatterElements (and Scatter, which the importer maps to it) and
 *     ScatterND with reduction none/add/mul/max/min: each output element
 *     starts from the data and walks every update in order, applying those
 *     whose (negative-corrected) index addresses it, so duplicates resolve
 *     as the CPU's sequential loop does (the last wins for "none"). The
 *     cost is numel(data) x numel(indices) compares: meant for the small
 *     scatters of models and tests, not for large embedding updates;
 *   - GatherND (batch_dims) and ReverseSequence: a load at a data-driven
 *     coordinate, bounds-checked (an index out of range, an error on the
 *     CPU, gives 0 instead of an access outside the data);
 *   - LRN (across channels) and MeanVarianceNormalization (over `axes`,
 *     mean then the mean squared deviation, two loops; f32 sums where the
 *     CPU sums in double);
 *   - Det of [*, M, M] with a static M <= 4 by cofactor expansion (the CPU
 *     uses LU with partial pivoting in double: the same value up to f32
 *     rounding);
 *   - Einsum (dml_einsum_parse: explicit or implicit output, ellipsis,
 *     diagonals, broadcasting of size-1 dims): per output element a loop
 *     nest over the summed labels accumulating the product of the inputs;
 *   - Adagrad, Momentum (standard, nesterov) and Adam (ai.onnx.preview.
 *     training): one kernel per node, invocation i updating element i of
 *     every optimized tensor (its loads all before its first store, so
 *     results may share memory with the inputs they replace).
 *
 * The dtypes are the kernels' (f32, i64, i32, bool, u8, i8) where the CPU
 * reference accepts them; the float formulas (LRN, MVN, Det, optimizers)
 * are f32 only. Shapes are static except where said (Trilu, EyeLike, IsInf,
 * IsNaN, CumSum, ScatterElements, GatherND, ReverseSequence and the
 * optimizers take symbolic dims, several per value: dml_ksched_numel). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dml_einsum.h"
#include "schedule_internal.h"
#include "schedule_ops_util.h"

#define WG 256

/* ---- helpers (the same as schedule.c's, on the public builders) ---- */

static const dml_pkg_value_t *output(const sched_t *s, const dml_pkg_node_t *n,
                                     uint32_t k) {
  return k < n->n_outputs ? val(s, n->outputs[k]) : NULL;
}

static int is_static(const dml_type_t *t) {
  for (int32_t d = 0; d < t->rank; d++)
    if (t->dims[d].sym >= 0) return 0;
  return 1;
}

static int64_t static_numel(const dml_type_t *t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->rank; d++) n *= t->dims[d].value;
  return n;
}

static int overlap(const dml_pkg_value_t *a, const dml_pkg_value_t *b) {
  if (a->storage == DML_PKG_STORAGE_CONST || b->storage == DML_PKG_STORAGE_CONST)
    return 0;
  return a->offset < b->offset + b->bytes && b->offset < a->offset + a->bytes;
}

/* Flat index of coordinates `c` in t (row-major). */
static const dml_kidx_t *flat_of(sched_t *s, const dml_type_t *t,
                                 const dml_kidx_t *const *c) {
  const dml_kidx_t *idx = kc(s, 0), *stride = kc(s, 1);
  for (int32_t d = t->rank - 1; d >= 0; d--) {
    idx = kadd(s, idx, kmul(s, c[d], stride));
    stride = kmul(s, stride, dim_idx(s, t->dims[d]));
  }
  return idx;
}

static void lin_add(dml_klin_t *acc, dml_klin_t x, int64_t mul) {
  dml_ksched_lin_add(acc, x, mul);
}

static int64_t norm_axis(int64_t a, int32_t rank) {
  return a < 0 ? a + rank : a;
}

/* An i64 value of index expression i. */
static const dml_kval_t *vi64(sched_t *s, const dml_kidx_t *i) {
  return dml_kv_idx(s->pool, DML_KT_I64, i);
}

/* Integer value v (any integer dtype) as i64, a negative one counted from
 * the end of a dim of length `len` (v + len). */
static const dml_kval_t *wrap_neg(sched_t *s, const dml_kval_t *v,
                                  const dml_kval_t *len) {
  dml_kpool_t *p = s->pool;
  v = dml_kv_cast(p, DML_KT_I64, v);
  return dml_kv_select(p, dml_kv_fn(p, DML_KF_LT, v, dml_kv_zero(p, DML_KT_I64)),
                       dml_kv_fn(p, DML_KF_ADD, v, len), v);
}

static int is_index_dtype(const dml_pkg_value_t *v) {
  return v && typed_ok(v) &&
         (v->type.dtype == DML_DTYPE_I64 || v->type.dtype == DML_DTYPE_I32);
}

/* Why node `n` cannot be a kernel of this file, or NULL: every present
 * operand held by kernels (aligned), its element count a dml_klin_t
 * (dml_ksched_numel: several symbols, one of them squared), no dim
 * computed from run-time data, and no result overlapping an operand in the
 * memory plan (an operand at the result's own offset with its element size
 * is fine when `same_elem`: the invocation reads it before storing). */
static const char *check_values(sched_t *s, const dml_pkg_node_t *n, int same_elem) {
  for (uint32_t i = 0; i < n->n_inputs + n->n_outputs; i++) {
    const dml_pkg_value_t *v =
        i < n->n_inputs ? input(s, n, i) : output(s, n, i - n->n_inputs);
    dml_klin_t l;
    if (!v) continue;
    if (!typed_ok(v)) return "a dtype kernels do not hold, or a misaligned value";
    if (data_dependent(s, &v->type)) return "a dim computed from run-time data";
    if (!numel_syms(&v->type, &l)) return "a symbol in three dims or two squared symbols";
  }
  for (uint32_t o = 0; o < n->n_outputs; o++) {
    const dml_pkg_value_t *y = output(s, n, o);
    if (!y) continue;
    for (uint32_t i = 0; i < n->n_inputs; i++) {
      const dml_pkg_value_t *x = input(s, n, i);
      if (!x || !overlap(x, y)) continue;
      if (same_elem && x->offset == y->offset &&
          dml_dtype_size(x->type.dtype) == dml_dtype_size(y->type.dtype))
        continue;
      return "its result overlaps its operands in the memory plan";
    }
  }
  return NULL;
}

/* A 1-D kernel of kind `kind` holding `node`, one invocation per element
 * of `t`; sets coord to the element's coordinates (when not NULL), returns
 * the invocation id (NULL when out of memory). */
static const dml_kidx_t *elem_kernel(sched_t *s, uint32_t node, dml_kernel_kind_t kind,
                                     const dml_type_t *t, dml_kernel_t **out_k,
                                     const dml_kidx_t **coord) {
  dml_kernel_t *K = dml_ksched_kernel(s, kind, node);
  if (!K) return NULL;
  dml_klin_t numel;
  numel_syms(t, &numel);
  K->local[0] = WG;
  K->items[0] = numel;
  const dml_kidx_t *gid = dml_ki_var(s->pool, DML_KVAR_GID_X);
  if (coord) coords_of(s, t, gid, coord);
  *out_k = K;
  return gid;
}

/* body under the bounds check of t's element count */
static void elem_finish(sched_t *s, dml_kernel_t *K, const dml_type_t *t,
                        const dml_kidx_t *gid, dml_kstmt_t *body) {
  dml_klin_t numel;
  numel_syms(t, &numel);
  K->body = if_lt(s, gid, dml_ki_lin(s->pool, numel), body);
}

/* Adds `bytes_per` bytes per element of t to K's traffic and `flops_per`
 * operations per element to its work. */
static void account(dml_kernel_t *K, const dml_type_t *t, int64_t bytes_per,
                    int64_t flops_per) {
  dml_klin_t numel;
  if (!numel_syms(t, &numel)) return;
  lin_add(&K->bytes, numel, bytes_per);
  if (flops_per) lin_add(&K->flops, numel, flops_per);
}

/* The scalar integer input k of n (i64/i32, one element, any storage) as an
 * i64 value; `dflt` when absent. NULL with *why set when it is of another
 * form. */
static const dml_kval_t *int_scalar(sched_t *s, const dml_pkg_node_t *n, uint32_t k,
                                    int64_t dflt, const char **why) {
  const dml_pkg_value_t *v = input(s, n, k);
  if (!v) return dml_kv_iconst(s->pool, DML_KT_I64, dflt);
  if (!is_index_dtype(v) || !is_static(&v->type) || static_numel(&v->type) != 1) {
    *why = "its scalar parameter must be one i64 or i32 value";
    return NULL;
  }
  return dml_kv_cast(s->pool, DML_KT_I64, load_at(s, v, kc(s, 0)));
}

/* The constant integer scalar input k of n when it is a constant, into
 * *out (1), else 0. */
static int const_int(sched_t *s, const dml_pkg_node_t *n, uint32_t k, int64_t *out) {
  const dml_pkg_value_t *v = input(s, n, k);
  if (!v || v->storage != DML_PKG_STORAGE_CONST || !is_index_dtype(v) ||
      !is_static(&v->type) || static_numel(&v->type) != 1)
    return 0;
  size_t w = v->type.dtype == DML_DTYPE_I64 ? 8 : 4;
  if (v->offset + w > s->weights_size) return 0;
  if (w == 8) {
    memcpy(out, s->weights + v->offset, 8);
  } else {
    int32_t t;
    memcpy(&t, s->weights + v->offset, 4);
    *out = t;
  }
  return 1;
}

/* ---- Trilu, EyeLike, IsInf, IsNaN ---- */

/* Trilu-14: y = x where j - i >= k (upper, default) or j - i <= k (lower)
 * over the last two dims, else 0; k from input 1 (constant or fed at run
 * time; default 0). */
static const char *emit_trilu(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0), *y = output(s, n, 0);
  if (!x || !y || x->type.dtype != y->type.dtype) return "Y must have X's dtype";
  int32_t r = x->type.rank;
  if (r < 2) return "input must have rank >= 2";
  const char *why = NULL;
  const dml_kval_t *k = int_scalar(s, n, 1, 0, &why);
  if (why) return why;
  int upper = dml_attr_int(n->attrs, n->n_attrs, "upper", 1) != 0;
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK];
  const dml_kidx_t *gid = elem_kernel(s, node, DML_KK_MOVE, &y->type, &K, c);
  if (!gid) return NULL;
  const dml_kval_t *d = dml_kv_fn(p, DML_KF_SUB, vi64(s, c[r - 1]), vi64(s, c[r - 2]));
  const dml_kval_t *keep = dml_kv_fn(p, upper ? DML_KF_GE : DML_KF_LE, d, k);
  elem_finish(
      s, K, &y->type, gid,
      store_at(s, y, gid,
               dml_kv_select(p, keep, load_at(s, x, gid), dml_kv_zero(p, kdt(y)))));
  account(K, &y->type, 2 * (int64_t)dml_dtype_size(y->type.dtype), 0);
  return NULL;
}

/* EyeLike-9: 1 where j - i == k (attribute), else 0, in y's dtype. */
static const char *emit_eye_like(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *y = output(s, n, 0);
  if (!y || y->type.rank != 2) return "input and output must be 2-D";
  int64_t k = dml_attr_int(n->attrs, n->n_attrs, "k", 0);
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK];
  const dml_kidx_t *gid = elem_kernel(s, node, DML_KK_MOVE, &y->type, &K, c);
  if (!gid) return NULL;
  dml_kdtype_t t = kdt(y);
  const dml_kval_t *d = dml_kv_fn(p, DML_KF_SUB, vi64(s, c[1]), vi64(s, c[0]));
  const dml_kval_t *hit = dml_kv_fn(p, DML_KF_EQ, d, dml_kv_iconst(p, DML_KT_I64, k));
  elem_finish(
      s, K, &y->type, gid,
      store_at(s, y, gid, dml_kv_select(p, hit, dml_kv_one(p, t), dml_kv_zero(p, t))));
  account(K, &y->type, (int64_t)dml_dtype_size(y->type.dtype), 0);
  return NULL;
}

/* IsInf-10 (x == +inf when detect_positive, x == -inf when detect_negative,
 * both default 1) and IsNaN-9 (x != x): f32 in, bool out. */
static const char *emit_is_special(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0), *y = output(s, n, 0);
  if (!x || !y || x->type.dtype != DML_DTYPE_F32 || y->type.dtype != DML_DTYPE_BOOL)
    return "only f32 in, bool out is emitted";
  dml_kernel_t *K;
  const dml_kidx_t *gid = elem_kernel(s, node, DML_KK_ELEMENTWISE, &y->type, &K, NULL);
  if (!gid) return NULL;
  const dml_kval_t *v = load_at(s, x, gid), *r;
  if (n->op == DML_OP_IS_NAN) {
    r = dml_kv_fn(p, DML_KF_NOT, dml_kv_fn(p, DML_KF_EQ, v, v), NULL);
  } else {
    int pos = dml_attr_int(n->attrs, n->n_attrs, "detect_positive", 1) != 0;
    int neg = dml_attr_int(n->attrs, n->n_attrs, "detect_negative", 1) != 0;
    const dml_kval_t *ip = dml_kv_fn(p, DML_KF_EQ, v, dml_kv_const(p, INFINITY));
    const dml_kval_t *in = dml_kv_fn(p, DML_KF_EQ, v, dml_kv_const(p, -INFINITY));
    r = pos && neg ? dml_kv_fn(p, DML_KF_OR, ip, in)
        : pos      ? ip
        : neg      ? in
                   : dml_kv_zero(p, DML_KT_BOOL);
  }
  elem_finish(s, K, &y->type, gid, store_at(s, y, gid, r));
  account(K, &y->type, 5, 1);
  return NULL;
}

/* Flat index into `in` (broadcast to `out`, numpy rules) of the output
 * element with coordinates `coord`. */
static const dml_kidx_t *bcast_index(sched_t *s, const dml_type_t *in,
                                     const dml_type_t *out,
                                     const dml_kidx_t *const *coord) {
  const dml_kidx_t *idx = kc(s, 0), *stride = kc(s, 1);
  for (int32_t d = in->rank - 1; d >= 0; d--) {
    int32_t od = out->rank - in->rank + d;
    if (!(in->dims[d].value == 1 && in->dims[d].sym < 0))
      idx = kadd(s, idx, kmul(s, coord[od], stride));
    stride = kmul(s, stride, dim_idx(s, in->dims[d]));
  }
  return idx;
}

/* BitShift-11 on unsigned integers (u8, u16, u32, u64 of one dtype): x << s
 * is x * 2^s (the result wraps to the dtype), x >> s is x / 2^s, and a
 * shift by the bit width or more gives 0, as on the CPU; numpy
 * broadcasting. 2^s is a chain of selects over the bit width. */
static const char *emit_bit_shift(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0), *sh = input(s, n, 1), *y = output(s, n, 0);
  dml_kdtype_t t = y ? kdt(y) : DML_KT_F32;
  if (!x || !sh || !y || x->type.dtype != y->type.dtype ||
      sh->type.dtype != y->type.dtype ||
      (t != DML_KT_U8 && t != DML_KT_U16 && t != DML_KT_U32 && t != DML_KT_U64))
    return "only u8, u16, u32 and u64 of one dtype are emitted for this op";
  const char *dir = dml_attr_string(n->attrs, n->n_attrs, "direction", "");
  int left = !strcmp(dir, "LEFT");
  if (!left && strcmp(dir, "RIGHT")) return "direction must be \"LEFT\" or \"RIGHT\"";
  int bits = 8 * (int)dml_kdtype_size(t);
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK];
  const dml_kidx_t *gid = elem_kernel(s, node, DML_KK_ELEMENTWISE, &y->type, &K, c);
  if (!gid) return NULL;
  K->n_regs = 2;
  const dml_kval_t *xv = load_at(s, x, bcast_index(s, &x->type, &y->type, c));
  const dml_kval_t *sv = load_at(s, sh, bcast_index(s, &sh->type, &y->type, c));
  const dml_kval_t *sr = dml_kv_reg_t(p, 0, t);
  const dml_kval_t *pw = dml_kv_iconst(p, t, 1);
  for (int b = 1; b < bits; b++)
    pw = dml_kv_select(p, dml_kv_fn(p, DML_KF_EQ, sr, dml_kv_iconst(p, t, b)),
                       dml_kv_iconst(p, t, (int64_t)((uint64_t)1 << b)), pw);
  const dml_kval_t *pr = dml_kv_reg_t(p, 1, t);
  const dml_kval_t *r = dml_kv_fn(p, left ? DML_KF_MUL : DML_KF_DIV, xv, pr);
  dml_kblock_t body = {0};
  dml_kblock_add(&body, assign(s, DML_KS_LET, 0, sv));
  dml_kblock_add(&body, assign(s, DML_KS_LET, 1, pw));
  dml_kblock_add(
      &body,
      store_at(s, y, gid,
               dml_kv_select(p, dml_kv_fn(p, DML_KF_GE, sr, dml_kv_iconst(p, t, bits)),
                             dml_kv_zero(p, t), r)));
  elem_finish(s, K, &y->type, gid, body.first);
  account(K, &y->type, 3 * (int64_t)dml_kdtype_size(t), 1);
  return NULL;
}

/* ---- CumSum ---- */

/* CumSum-14 (CumProd-26: products, starting from 1):
 * y[.., i, ..] = sum of x[.., j, ..] over j <= i (j < i when
 * exclusive; j >= i, j > i when reverse) along the axis of input 1. A
 * constant axis gives one loop; an axis fed at run time one loop per
 * possible axis, each under a check of the (negative-corrected) axis
 * value. Integer sums wrap, as the CPU's 64-bit sums stored in the dtype. */
static const char *emit_cum_sum(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0), *y = output(s, n, 0);
  if (!x || !y || x->type.dtype != y->type.dtype) return "y must have x's dtype";
  dml_kdtype_t t = kdt(y);
  if (t == DML_KT_BOOL) return "CumSum/CumProd of bool";
  int prod = n->op == DML_OP_CUM_PROD; /* CumProd-26: products, from 1 */
  int32_t r = x->type.rank;
  if (r == 0) return "a 0-D input";
  const char *why = NULL;
  const dml_kval_t *axv = int_scalar(s, n, 1, 0, &why);
  if (why) return why;
  int64_t cax = 0;
  int has_const = const_int(s, n, 1, &cax);
  if (has_const) {
    cax = norm_axis(cax, r);
    if (cax < 0 || cax >= r) return "axis out of range";
  }
  int excl = dml_attr_int(n->attrs, n->n_attrs, "exclusive", 0) != 0;
  int rev = dml_attr_int(n->attrs, n->n_attrs, "reverse", 0) != 0;
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK];
  const dml_kidx_t *gid = elem_kernel(s, node, DML_KK_REDUCE, &y->type, &K, c);
  if (!gid) return NULL;
  K->n_regs = 1;
  int32_t j = DML_KVAR_FIRST_LOOP;
  const dml_kidx_t *jv = dml_ki_var(p, j);
  /* (axis + r) % r: the axis for any value in [-r, r) */
  const dml_kidx_t *axis_idx = dml_ki_bin(
      p, DML_KI_MOD,
      dml_ki_val(p, dml_kv_fn(p, DML_KF_ADD, axv, dml_kv_iconst(p, DML_KT_I64, r))),
      kc(s, r));
  dml_kblock_t body = {0};
  dml_kblock_add(&body,
                 assign(s, DML_KS_LET, 0, prod ? dml_kv_one(p, t) : dml_kv_zero(p, t)));
  for (int32_t a = 0; a < r; a++) {
    if (has_const && a != cax) continue;
    const dml_kidx_t *lo, *hi, *xc[DML_MAX_RANK];
    const dml_kidx_t *one = kc(s, 1), *len = dim_idx(s, x->type.dims[a]);
    if (!rev) {
      lo = kc(s, 0);
      hi = excl ? c[a] : kadd(s, c[a], one);
    } else {
      lo = excl ? kadd(s, c[a], one) : c[a];
      hi = dml_ki_bin(p, DML_KI_SUB, len, lo); /* lo <= len */
    }
    for (int32_t d = 0; d < r; d++) xc[d] = d == a ? kadd(s, lo, jv) : c[d];
    dml_kstmt_t *loop = for_loop(
        s, j, hi,
        assign(s, DML_KS_SET, 0,
               dml_kv_fn(p, prod ? DML_KF_MUL : DML_KF_ADD, dml_kv_reg_t(p, 0, t),
                         load_at(s, x, flat_of(s, &x->type, xc)))));
    dml_kblock_add(&body,
                   has_const ? loop : if_in(s, axis_idx, kc(s, a), kc(s, a + 1), loop));
  }
  dml_kblock_add(&body, store_at(s, y, gid, dml_kv_reg_t(p, 0, t)));
  elem_finish(s, K, &y->type, gid, body.first);
  account(K, &y->type, 2 * (int64_t)dml_dtype_size(y->type.dtype), 1);
  return NULL;
}

/* ---- scatters and gathers ---- */

typedef enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN } red_t;

static const char *parse_reduction(const dml_pkg_node_t *n, dml_kdtype_t t, red_t *out) {
  const char *r = dml_attr_string(n->attrs, n->n_attrs, "reduction", "none");
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
    return "unknown reduction";
  if (*out != RED_NONE && t == DML_KT_BOOL) return "a reduction over bool";
  return NULL;
}

/* acc (red)= u */
static const dml_kval_t *reduce_val(dml_kpool_t *p, red_t red, const dml_kval_t *acc,
                                    const dml_kval_t *u) {
  switch (red) {
    case RED_ADD: return dml_kv_fn(p, DML_KF_ADD, acc, u);
    case RED_MUL: return dml_kv_fn(p, DML_KF_MUL, acc, u);
    case RED_MAX: /* the CPU's u > acc ? u : acc */
      return dml_kv_select(p, dml_kv_fn(p, DML_KF_GT, u, acc), u, acc);
    case RED_MIN: return dml_kv_select(p, dml_kv_fn(p, DML_KF_LT, u, acc), u, acc);
    default: return u;
  }
}

/* ScatterElements-18 (Scatter-11): y = data, then y[.., idx[i], ..] (red)=
 * updates[i] for every element i of indices in order. Invocation e walks
 * every i whose coordinates off the axis equal its own and whose index
 * (negative-corrected) equals its coordinate on the axis. */
static const char *emit_scatter_elements(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0), *ind = input(s, n, 1), *u = input(s, n, 2);
  const dml_pkg_value_t *y = output(s, n, 0);
  if (!x || !u || !y || x->type.dtype != y->type.dtype || u->type.dtype != y->type.dtype)
    return "data, updates and output of one dtype";
  if (!is_index_dtype(ind)) return "indices must be i64 or i32";
  int32_t r = x->type.rank;
  int64_t axis = norm_axis(dml_attr_int(n->attrs, n->n_attrs, "axis", 0), r);
  if (r < 1 || axis < 0 || axis >= r) return "axis out of range";
  if (ind->type.rank != r || u->type.rank != r)
    return "indices and updates of the data's rank";
  if (x->type.dims[axis].sym >= 0) return "an axis of symbolic length";
  red_t red;
  const char *why = parse_reduction(n, kdt(y), &red);
  if (why) return why;
  dml_kdtype_t t = kdt(y);
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK], *ic[DML_MAX_RANK];
  const dml_kidx_t *gid = elem_kernel(s, node, DML_KK_MOVE, &y->type, &K, c);
  if (!gid) return NULL;
  K->n_regs = 1;
  const dml_kidx_t *iv = dml_ki_var(p, DML_KVAR_FIRST_LOOP);
  coords_of(s, &ind->type, iv, ic);
  const dml_kval_t *v = wrap_neg(s, load_at(s, ind, iv),
                                 dml_kv_iconst(p, DML_KT_I64, x->type.dims[axis].value));
  dml_kstmt_t *inner =
      if_in(s, dml_ki_val(p, v), c[axis], kadd(s, c[axis], kc(s, 1)),
            assign(s, DML_KS_SET, 0,
                   reduce_val(p, red, dml_kv_reg_t(p, 0, t), load_at(s, u, iv))));
  for (int32_t d = r - 1; d >= 0; d--)
    if (d != axis) inner = if_in(s, ic[d], c[d], kadd(s, c[d], kc(s, 1)), inner);
  dml_klin_t ni;
  numel_syms(&ind->type, &ni);
  dml_kblock_t body = {0};
  dml_kblock_add(&body, assign(s, DML_KS_LET, 0, load_at(s, x, gid)));
  dml_kblock_add(&body, for_loop(s, DML_KVAR_FIRST_LOOP, dml_ki_lin(p, ni), inner));
  dml_kblock_add(&body, store_at(s, y, gid, dml_kv_reg_t(p, 0, t)));
  elem_finish(s, K, &y->type, gid, body.first);
  account(K, &y->type, 2 * (int64_t)dml_dtype_size(y->type.dtype), 0);
  return NULL;
}

/* Strides (elements) of static type t. */
static void strides_of(const dml_type_t *t, int64_t *st) {
  int64_t k = 1;
  for (int32_t d = t->rank - 1; d >= 0; d--) {
    st[d] = k;
    k *= t->dims[d].value;
  }
}

/* The i64 value sum over k < m of index(t*m + k) (negative-corrected by
 * dims[k]) * mult[k]: the offset an index tuple of ind addresses. */
static const dml_kval_t *tuple_offset(sched_t *s, const dml_pkg_value_t *ind,
                                      const dml_kidx_t *t, int64_t m, const int64_t *dims,
                                      const int64_t *mult) {
  dml_kpool_t *p = s->pool;
  const dml_kval_t *off = dml_kv_zero(p, DML_KT_I64);
  for (int64_t k = 0; k < m; k++) {
    const dml_kval_t *v =
        wrap_neg(s, load_at(s, ind, kadd(s, kmul(s, t, kc(s, m)), kc(s, k))),
                 dml_kv_iconst(p, DML_KT_I64, dims[k]));
    off = dml_kv_fn(p, DML_KF_ADD, off,
                    dml_kv_fn(p, DML_KF_MUL, v, dml_kv_iconst(p, DML_KT_I64, mult[k])));
  }
  return off;
}

/* ScatterND-18: y = data, then for each index tuple t (in order) the slice
 * data[idx(t)] (red)= updates[t]. Invocation e (slice e / S, element
 * e % S, S the slice size) applies every tuple addressing its slice. */
static const char *emit_scatter_nd(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0), *ind = input(s, n, 1), *u = input(s, n, 2);
  const dml_pkg_value_t *y = output(s, n, 0);
  if (!x || !u || !y || x->type.dtype != y->type.dtype || u->type.dtype != y->type.dtype)
    return "data, updates and output of one dtype";
  if (!is_index_dtype(ind)) return "indices must be i64 or i32";
  if (!is_static(&x->type) || !is_static(&ind->type)) return "symbolic dims";
  int32_t r = x->type.rank, q = ind->type.rank;
  if (r < 1 || q < 1) return "data and indices must have rank >= 1";
  int64_t m = ind->type.dims[q - 1].value;
  if (m < 1 || m > r) return "indices' last dim out of range";
  red_t red;
  const char *why = parse_reduction(n, kdt(y), &red);
  if (why) return why;
  int64_t xs[DML_MAX_RANK], mult[DML_MAX_RANK], dims[DML_MAX_RANK], slice = 1, nt = 1;
  strides_of(&x->type, xs);
  for (int32_t d = (int32_t)m; d < r; d++) slice *= x->type.dims[d].value;
  for (int32_t d = 0; d < q - 1; d++) nt *= ind->type.dims[d].value;
  for (int64_t k = 0; k < m; k++) {
    dims[k] = x->type.dims[k].value;
    mult[k] = slice ? xs[k] / slice : 0;
  }
  dml_kdtype_t t = kdt(y);
  dml_kernel_t *K;
  const dml_kidx_t *gid = elem_kernel(s, node, DML_KK_MOVE, &y->type, &K, NULL);
  if (!gid) return NULL;
  K->n_regs = 1;
  const dml_kidx_t *tv = dml_ki_var(p, DML_KVAR_FIRST_LOOP),
                   *S = kc(s, slice ? slice : 1);
  const dml_kidx_t *q0 = dml_ki_bin(p, DML_KI_DIV, gid, S),
                   *kk = dml_ki_bin(p, DML_KI_MOD, gid, S);
  const dml_kval_t *off = tuple_offset(s, ind, tv, m, dims, mult);
  dml_kstmt_t *inner =
      if_in(s, dml_ki_val(p, off), q0, kadd(s, q0, kc(s, 1)),
            assign(s, DML_KS_SET, 0,
                   reduce_val(p, red, dml_kv_reg_t(p, 0, t),
                              load_at(s, u, kadd(s, kmul(s, tv, S), kk)))));
  dml_kblock_t body = {0};
  dml_kblock_add(&body, assign(s, DML_KS_LET, 0, load_at(s, x, gid)));
  dml_kblock_add(&body, for_loop(s, DML_KVAR_FIRST_LOOP, kc(s, nt), inner));
  dml_kblock_add(&body, store_at(s, y, gid, dml_kv_reg_t(p, 0, t)));
  elem_finish(s, K, &y->type, gid, body.first);
  account(K, &y->type, 2 * (int64_t)dml_dtype_size(y->type.dtype), 0);
  return NULL;
}

/* GatherND-13 (batch_dims b): y[t, k] = data[batch(t), idx(t), k] with the
 * index tuple of row t (m values, negative-corrected) addressing dims
 * b .. b+m-1. Any dim but the indices' last (m) may be symbolic (the
 * dynamo exporter's attention masks gather over [batch, seq]): strides,
 * extents and the slice size are products of the run-time symbol values.
 * A tuple value outside its dim (an error on the CPU) gives 0. */
static const char *emit_gather_nd(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0), *ind = input(s, n, 1), *y = output(s, n, 0);
  if (!x || !y || x->type.dtype != y->type.dtype)
    return "output must have the data's dtype";
  if (!is_index_dtype(ind)) return "indices must be i64 or i32";
  int64_t b = dml_attr_int(n->attrs, n->n_attrs, "batch_dims", 0);
  int32_t r = x->type.rank, q = ind->type.rank;
  if (r < 1 || q < 1 || b < 0 || b >= q || b >= r) return "batch_dims out of range";
  if (ind->type.dims[q - 1].sym >= 0) return "indices' last dim of symbolic length";
  int64_t m = ind->type.dims[q - 1].value;
  if (m < 1 || m > r - b) return "indices' last dim out of range";
  dml_klin_t xn = {0, -1, 0, 0};
  numel_syms(&x->type, &xn);
  /* xs[d]: stride of data dim d (elements) */
  const dml_kidx_t *xs[DML_MAX_RANK], *per_b = kc(s, 1), *slice = kc(s, 1);
  const dml_kidx_t *st = kc(s, 1);
  for (int32_t d = r - 1; d >= 0; d--) {
    xs[d] = st;
    st = kmul(s, st, dim_idx(s, x->type.dims[d]));
  }
  for (int32_t d = (int32_t)b; d < q - 1; d++)
    per_b = kmul(s, per_b, dim_idx(s, ind->type.dims[d]));
  for (int32_t d = (int32_t)(b + m); d < r; d++)
    slice = kmul(s, slice, dim_idx(s, x->type.dims[d]));
  dml_kernel_t *K;
  const dml_kidx_t *gid = elem_kernel(s, node, DML_KK_MOVE, &y->type, &K, NULL);
  if (!gid) return NULL;
  /* a static extent 0 empties y (no invocation runs): divide by 1 then */
  const dml_kidx_t *S = slice->kind == DML_KI_CONST && slice->c == 0 ? kc(s, 1) : slice;
  if (per_b->kind == DML_KI_CONST && per_b->c == 0) per_b = kc(s, 1);
  const dml_kidx_t *tv = dml_ki_bin(p, DML_KI_DIV, gid, S),
                   *kk = dml_ki_bin(p, DML_KI_MOD, gid, S);
  const dml_kidx_t *bi = dml_ki_bin(p, DML_KI_DIV, tv, per_b);
  const dml_kval_t *big = vi64(s, dml_ki_lin(p, xn)); /* past the data */
  const dml_kval_t *off = vi64(s, kadd(s, kmul(s, bi, b > 0 ? xs[b - 1] : kc(s, 0)), kk));
  for (int64_t k = 0; k < m; k++) {
    const dml_kval_t *len = vi64(s, dim_idx(s, x->type.dims[b + k]));
    const dml_kval_t *v =
        wrap_neg(s, load_at(s, ind, kadd(s, kmul(s, tv, kc(s, m)), kc(s, k))), len);
    const dml_kval_t *term = dml_kv_select(
        p, dml_kv_fn(p, DML_KF_LT, v, dml_kv_zero(p, DML_KT_I64)), big,
        dml_kv_select(p, dml_kv_fn(p, DML_KF_LT, v, len),
                      dml_kv_fn(p, DML_KF_MUL, v, vi64(s, xs[b + k])), big));
    off = dml_kv_fn(p, DML_KF_ADD, off, term);
  }
  const dml_kidx_t *xi = dml_ki_val(p, off);
  dml_kblock_t body = {0};
  dml_kblock_add(&body, store_at(s, y, gid, dml_kv_zero(p, kdt(y))));
  dml_kblock_add(&body,
                 if_lt(s, xi, dml_ki_lin(p, xn), store_at(s, y, gid, load_at(s, x, xi))));
  elem_finish(s, K, &y->type, gid, body.first);
  account(K, &y->type, 2 * (int64_t)dml_dtype_size(y->type.dtype), 0);
  return NULL;
}

/* ReverseSequence-10: along time_axis, the first sequence_lens[b] elements
 * of batch b reversed, the rest copied; a length beyond the axis (an error
 * on the CPU) reads 0 where it would leave the data. */
static const char *emit_reverse_sequence(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0), *sl = input(s, n, 1), *y = output(s, n, 0);
  if (!x || !y || x->type.dtype != y->type.dtype)
    return "output must have the data's dtype";
  if (!is_index_dtype(sl)) return "sequence_lens must be i64 or i32";
  int32_t r = x->type.rank;
  int64_t ba = dml_attr_int(n->attrs, n->n_attrs, "batch_axis", 1),
          ta = dml_attr_int(n->attrs, n->n_attrs, "time_axis", 0);
  if (r < 2 || (ba != 0 && ba != 1) || (ta != 0 && ta != 1) || ba == ta)
    return "batch_axis and time_axis must be 0 and 1";
  if (x->type.dims[ta].sym >= 0) return "a time axis of symbolic length";
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK], *xc[DML_MAX_RANK];
  const dml_kidx_t *gid = elem_kernel(s, node, DML_KK_MOVE, &y->type, &K, c);
  if (!gid) return NULL;
  const dml_kval_t *len = dml_kv_cast(p, DML_KT_I64, load_at(s, sl, c[ba]));
  const dml_kval_t *tv = vi64(s, c[ta]);
  const dml_kval_t *src = dml_kv_select(
      p, dml_kv_fn(p, DML_KF_LT, tv, len),
      dml_kv_fn(p, DML_KF_SUB, dml_kv_fn(p, DML_KF_SUB, len, dml_kv_one(p, DML_KT_I64)),
                tv),
      tv);
  for (int32_t d = 0; d < r; d++) xc[d] = d == ta ? dml_ki_val(p, src) : c[d];
  dml_kblock_t body = {0};
  dml_kblock_add(&body, store_at(s, y, gid, dml_kv_zero(p, kdt(y))));
  dml_kblock_add(&body,
                 if_lt(s, xc[ta], dim_idx(s, x->type.dims[ta]),
                       store_at(s, y, gid, load_at(s, x, flat_of(s, &x->type, xc)))));
  elem_finish(s, K, &y->type, gid, body.first);
  account(K, &y->type, 2 * (int64_t)dml_dtype_size(y->type.dtype), 0);
  return NULL;
}

/* ---- LRN, MeanVarianceNormalization ---- */

/* LRN-13: y = x / (bias + alpha / size * sum of x^2 over the channels
 * [c - floor((size-1)/2), c + ceil((size-1)/2)] within [0, C))^beta. */
static const char *emit_lrn(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0), *y = output(s, n, 0);
  if (!x || !y || x->type.dtype != DML_DTYPE_F32 || y->type.dtype != DML_DTYPE_F32)
    return "only f32 is emitted for this op";
  int32_t r = x->type.rank;
  if (r < 2) return "X must be [N, C, ...]";
  int64_t size = dml_attr_int(n->attrs, n->n_attrs, "size", 0);
  if (size < 1) return "attribute 'size' must be >= 1";
  double alpha = dml_attr_float(n->attrs, n->n_attrs, "alpha", 1e-4);
  double beta = dml_attr_float(n->attrs, n->n_attrs, "beta", 0.75);
  double bias = dml_attr_float(n->attrs, n->n_attrs, "bias", 1.0);
  int64_t lo_off = (size - 1) / 2;
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK], *xc[DML_MAX_RANK];
  const dml_kidx_t *gid = elem_kernel(s, node, DML_KK_NORM, &y->type, &K, c);
  if (!gid) return NULL;
  K->n_regs = 1;
  const dml_kidx_t *j = dml_ki_var(p, DML_KVAR_FIRST_LOOP);
  const dml_kidx_t *cj = kadd(s, c[1], j); /* channel + lo_off */
  for (int32_t d = 0; d < r; d++)
    xc[d] = d == 1 ? dml_ki_bin(p, DML_KI_SUB, cj, kc(s, lo_off)) : c[d];
  const dml_kval_t *v = load_at(s, x, flat_of(s, &x->type, xc));
  const dml_kval_t *acc = dml_kv_reg(p, 0);
  dml_kstmt_t *inner =
      if_in(s, cj, kc(s, lo_off), kadd(s, dim_idx(s, x->type.dims[1]), kc(s, lo_off)),
            assign(s, DML_KS_SET, 0,
                   dml_kv_fn(p, DML_KF_ADD, acc, dml_kv_fn(p, DML_KF_MUL, v, v))));
  dml_kblock_t body = {0};
  dml_kblock_add(&body, assign(s, DML_KS_LET, 0, dml_kv_const(p, 0.0f)));
  dml_kblock_add(&body, for_loop(s, DML_KVAR_FIRST_LOOP, kc(s, size), inner));
  /* kernel_math's C99 pow (the renderers' pow is undefined at an
   * infinite or zero base) */
  const dml_kval_t *den = dml_kv_pow(
      p,
      dml_kv_fn(
          p, DML_KF_ADD, dml_kv_const(p, (float)bias),
          dml_kv_fn(p, DML_KF_MUL, dml_kv_const(p, (float)(alpha / (double)size)), acc)),
      dml_kv_const(p, (float)beta));
  dml_kblock_add(&body,
                 store_at(s, y, gid, dml_kv_fn(p, DML_KF_DIV, load_at(s, x, gid), den)));
  elem_finish(s, K, &y->type, gid, body.first);
  account(K, &y->type, 4 * (size + 1), 2 * size + 4);
  return NULL;
}

/* MeanVarianceNormalization-13: over `axes` (default [0, 2, 3]),
 * y = (x - mean) / (sqrt(mean((x - mean)^2)) + 1e-9); each invocation
 * loops over its reduced box twice. */
static const char *emit_mvn(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0), *y = output(s, n, 0);
  if (!x || !y || x->type.dtype != DML_DTYPE_F32 || y->type.dtype != DML_DTYPE_F32)
    return "only f32 is emitted for this op";
  int32_t r = x->type.rank;
  size_t na = 0;
  const int64_t *aa = dml_attr_ints(n->attrs, n->n_attrs, "axes", &na);
  static const int64_t dflt[3] = {0, 2, 3};
  if (!aa) aa = dflt, na = 3;
  int red[DML_MAX_RANK] = {0};
  for (size_t i = 0; i < na; i++) {
    int64_t a = norm_axis(aa[i], r);
    if (a < 0 || a >= r) return "axis out of range";
    red[a] = 1;
  }
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK], *xc[DML_MAX_RANK];
  const dml_kidx_t *gid = elem_kernel(s, node, DML_KK_NORM, &y->type, &K, c);
  if (!gid) return NULL;
  K->n_regs = 3;
  const dml_kidx_t *count = kc(s, 1);
  for (int32_t d = 0; d < r; d++) {
    xc[d] = red[d] ? dml_ki_var(p, DML_KVAR_FIRST_LOOP + d) : c[d];
    if (red[d]) count = kmul(s, count, dim_idx(s, x->type.dims[d]));
  }
  const dml_kval_t *v = load_at(s, x, flat_of(s, &x->type, xc));
  const dml_kval_t *sum = dml_kv_reg(p, 0), *mean = dml_kv_reg(p, 1),
                   *v2 = dml_kv_reg(p, 2);
  const dml_kval_t *dv = dml_kv_fn(p, DML_KF_SUB, v, mean);
  dml_kstmt_t *pass1 = assign(s, DML_KS_SET, 0, dml_kv_fn(p, DML_KF_ADD, sum, v));
  dml_kstmt_t *pass2 = assign(
      s, DML_KS_SET, 2, dml_kv_fn(p, DML_KF_ADD, v2, dml_kv_fn(p, DML_KF_MUL, dv, dv)));
  for (int32_t d = r - 1; d >= 0; d--) {
    if (!red[d]) continue;
    pass1 = for_loop(s, DML_KVAR_FIRST_LOOP + d, dim_idx(s, x->type.dims[d]), pass1);
    pass2 = for_loop(s, DML_KVAR_FIRST_LOOP + d, dim_idx(s, x->type.dims[d]), pass2);
  }
  const dml_kval_t *cnt = dml_kv_idx(p, DML_KT_F32, count);
  dml_kblock_t body = {0};
  dml_kblock_add(&body, assign(s, DML_KS_LET, 0, dml_kv_const(p, 0.0f)));
  dml_kblock_add(&body, assign(s, DML_KS_LET, 2, dml_kv_const(p, 0.0f)));
  dml_kblock_add(&body, pass1);
  dml_kblock_add(&body, assign(s, DML_KS_LET, 1, dml_kv_fn(p, DML_KF_DIV, sum, cnt)));
  dml_kblock_add(&body, pass2);
  const dml_kval_t *den = dml_kv_fn(
      p, DML_KF_ADD, dml_kv_fn(p, DML_KF_SQRT, dml_kv_fn(p, DML_KF_DIV, v2, cnt), NULL),
      dml_kv_const(p, 1e-9f));
  dml_kblock_add(
      &body,
      store_at(s, y, gid,
               dml_kv_fn(p, DML_KF_DIV,
                         dml_kv_fn(p, DML_KF_SUB, load_at(s, x, gid), mean), den)));
  elem_finish(s, K, &y->type, gid, body.first);
  account(K, &y->type, 8, 8);
  return NULL;
}

/* ---- Det ---- */

#define DET_MAX 4

/* Determinant of the sub-matrix of registers `a` (m x m, row-major) made of
 * rows row0.. and the columns in `cols` (cofactor expansion along the
 * first row). */
static const dml_kval_t *det_expand(dml_kpool_t *p, const dml_kval_t *const *a, int m,
                                    int row0, const int *cols, int nc) {
  if (nc == 1) return a[row0 * m + cols[0]];
  const dml_kval_t *sum = NULL;
  for (int j = 0; j < nc; j++) {
    int sub[DET_MAX], k = 0;
    for (int i = 0; i < nc; i++)
      if (i != j) sub[k++] = cols[i];
    const dml_kval_t *term = dml_kv_fn(p, DML_KF_MUL, a[row0 * m + cols[j]],
                                       det_expand(p, a, m, row0 + 1, sub, k));
    sum = !sum ? term : dml_kv_fn(p, j % 2 ? DML_KF_SUB : DML_KF_ADD, sum, term);
  }
  return sum;
}

/* Det-11: one invocation per matrix of [*, M, M] (M static, <= 4) loads it
 * into registers and expands along the first row. */
static const char *emit_det(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0), *y = output(s, n, 0);
  if (!x || !y || x->type.dtype != DML_DTYPE_F32 || y->type.dtype != DML_DTYPE_F32)
    return "only f32 is emitted for this op";
  int32_t r = x->type.rank;
  if (r < 2 || y->type.rank != r - 2) return "input must be [*, M, M]";
  dml_dim_t dm = x->type.dims[r - 1];
  if (dm.sym >= 0 || x->type.dims[r - 2].sym >= 0 ||
      x->type.dims[r - 2].value != dm.value)
    return "input must be [*, M, M] with a static M";
  int m = (int)dm.value;
  if (m < 1 || m > DET_MAX) return "M above 4 (cofactor expansion)";
  dml_kernel_t *K;
  const dml_kidx_t *gid = elem_kernel(s, node, DML_KK_REDUCE, &y->type, &K, NULL);
  if (!gid) return NULL;
  K->n_regs = (uint32_t)(m * m);
  const dml_kval_t *a[DET_MAX * DET_MAX];
  const dml_kidx_t *base = kmul(s, gid, kc(s, (int64_t)m * m));
  dml_kblock_t body = {0};
  for (int i = 0; i < m * m; i++) {
    dml_kblock_add(&body, assign(s, DML_KS_LET, (uint32_t)i,
                                 load_at(s, x, kadd(s, base, kc(s, i)))));
    a[i] = dml_kv_reg(p, (uint32_t)i);
  }
  int cols[DET_MAX] = {0, 1, 2, 3};
  dml_kblock_add(&body, store_at(s, y, gid, det_expand(p, a, m, 0, cols, m)));
  elem_finish(s, K, &y->type, gid, body.first);
  account(K, &y->type, 4 * ((int64_t)m * m + 1), 2 * m * m * m);
  return NULL;
}

/* ---- Einsum ---- */

/* Einsum-12: per output element, a loop nest over the labels absent from
 * the output summing the product of the inputs at the labels' values (a
 * repeated label reads a diagonal; a size-1 dim against a longer label
 * broadcasts). Static shapes. */
static const char *emit_einsum(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *y = output(s, n, 0);
  const char *eq = dml_attr_string(n->attrs, n->n_attrs, "equation", NULL);
  if (!y || !eq) return "attribute 'equation' is required";
  if (n->n_inputs < 1 || n->n_inputs > DML_EINSUM_MAX_IN) return "too many inputs";
  dml_kdtype_t t = kdt(y);
  if (t == DML_KT_BOOL) return "Einsum of bool";
  int32_t ranks[DML_EINSUM_MAX_IN];
  for (uint32_t k = 0; k < n->n_inputs; k++) {
    const dml_pkg_value_t *x = input(s, n, k);
    if (!x || x->type.dtype != y->type.dtype) return "inputs and output of one dtype";
    if (!is_static(&x->type)) return "symbolic dims";
    ranks[k] = x->type.rank;
  }
  if (!is_static(&y->type)) return "symbolic dims";
  dml_einsum_t e;
  char err[160];
  if (dml_einsum_parse(eq, (int)n->n_inputs, ranks, &e, err, sizeof err))
    return "equation does not parse";
  int64_t size[DML_EINSUM_MAX_LABELS];
  for (int l = 0; l < e.n_labels; l++) size[l] = -1;
  for (int k = 0; k < e.n_in; k++) {
    const dml_type_t *xt = &input(s, n, (uint32_t)k)->type;
    for (int32_t d = 0; d < xt->rank; d++) {
      int l = e.in_labels[k][d];
      int64_t v = xt->dims[d].value;
      if (size[l] < 0 || size[l] == 1)
        size[l] = v;
      else if (v != size[l] && v != 1)
        return "a subscript of unequal extents";
    }
  }
  for (int l = 0; l < e.n_labels; l++)
    if (size[l] < 0) size[l] = 1;
  if (e.out_rank != y->type.rank) return "output rank does not match";
  int in_out[DML_EINSUM_MAX_LABELS] = {0};
  for (int d = 0; d < e.out_rank; d++) {
    if (y->type.dims[d].value != size[e.out_labels[d]]) return "output dims do not match";
    in_out[e.out_labels[d]] = 1;
  }
  int n_sum = 0;
  for (int l = 0; l < e.n_labels; l++) n_sum += !in_out[l];
  if (n_sum > 48) return "too many summed labels";
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK];
  const dml_kidx_t *gid = elem_kernel(s, node, DML_KK_REDUCE, &y->type, &K, c);
  if (!gid) return NULL;
  K->n_regs = 1;
  const dml_kidx_t *lab[DML_EINSUM_MAX_LABELS];
  int32_t var[DML_EINSUM_MAX_LABELS];
  for (int l = 0, v = 0; l < e.n_labels; l++) {
    var[l] = -1;
    if (!in_out[l]) {
      var[l] = DML_KVAR_FIRST_LOOP + v++;
      lab[l] = dml_ki_var(p, var[l]);
    }
  }
  for (int d = 0; d < e.out_rank; d++) lab[e.out_labels[d]] = c[d];
  const dml_kval_t *prod = NULL;
  int64_t inner = 1;
  for (int l = 0; l < e.n_labels; l++)
    if (!in_out[l]) inner *= size[l];
  for (int k = 0; k < e.n_in; k++) {
    const dml_pkg_value_t *x = input(s, n, (uint32_t)k);
    int64_t st[DML_MAX_RANK];
    strides_of(&x->type, st);
    const dml_kidx_t *idx = kc(s, 0);
    for (int32_t d = 0; d < x->type.rank; d++) {
      int l = e.in_labels[k][d];
      if (x->type.dims[d].value != size[l]) continue; /* size 1: broadcast */
      idx = kadd(s, idx, kmul(s, lab[l], kc(s, st[d])));
    }
    const dml_kval_t *v = load_at(s, x, idx);
    prod = prod ? dml_kv_fn(p, DML_KF_MUL, prod, v) : v;
  }
  dml_kstmt_t *nest =
      assign(s, DML_KS_SET, 0, dml_kv_fn(p, DML_KF_ADD, dml_kv_reg_t(p, 0, t), prod));
  for (int l = e.n_labels - 1; l >= 0; l--)
    if (!in_out[l]) nest = for_loop(s, var[l], kc(s, size[l]), nest);
  dml_kblock_t body = {0};
  dml_kblock_add(&body, assign(s, DML_KS_LET, 0, dml_kv_zero(p, t)));
  dml_kblock_add(&body, nest);
  dml_kblock_add(&body, store_at(s, y, gid, dml_kv_reg_t(p, 0, t)));
  elem_finish(s, K, &y->type, gid, body.first);
  account(K, &y->type, (int64_t)dml_dtype_size(y->type.dtype) * (1 + e.n_in * inner),
          e.n_in * inner);
  return NULL;
}

/* ---- training-preview optimizers ---- */

/* Adagrad, Momentum and Adam (runtime/cpu/cpu_optim.c's formulas, in f32
 * where the CPU computes in double): inputs R, T, then n tensors X_i, n
 * gradients G_i and the state (H_i; V_i; V_i then H_i), outputs the n new
 * X_i then the new state. Invocation e computes element e of every tensor
 * (those with more than e elements) into registers, then stores. */
static const char *emit_optimizer(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  uint32_t per = n->op == DML_OP_ADAM ? 4 : 3;
  if (n->n_inputs < 2 + per || (n->n_inputs - 2) % per) return "wrong number of inputs";
  uint32_t nt = (n->n_inputs - 2) / per;
  if (n->n_outputs != (per - 1) * nt) return "wrong number of outputs";
  const dml_pkg_value_t *R = input(s, n, 0), *T = input(s, n, 1);
  if (!R || R->type.dtype != DML_DTYPE_F32 || !is_static(&R->type) ||
      static_numel(&R->type) != 1)
    return "R must be one f32 value";
  if (!is_index_dtype(T) || !is_static(&T->type) || static_numel(&T->type) != 1)
    return "T must be one i64 or i32 value";
  const dml_type_t *big = NULL;
  for (uint32_t i = 0; i < nt; i++) {
    const dml_pkg_value_t *x = input(s, n, 2 + i);
    if (!x || x->type.dtype != DML_DTYPE_F32) return "only f32 tensors are emitted";
    if (!is_static(&x->type)) return "tensors of symbolic dims";
    int64_t l = static_numel(&x->type);
    for (uint32_t k = 0; k < 2 * per - 1; k++) {
      const dml_pkg_value_t *v = k < per - 1 ? input(s, n, 2 + (k + 1) * nt + i)
                                             : output(s, n, (k - per + 1) * nt + i);
      if (!v && k < per - 1) return "absent input";
      if (!v) continue;
      if (v->type.dtype != DML_DTYPE_F32) return "only f32 tensors are emitted";
      if (!is_static(&v->type) || static_numel(&v->type) != l)
        return "state or result of another shape than X";
    }
    if (!big || l > static_numel(big)) big = &x->type;
  }
  double alpha = 0, beta = 0, eps = 1e-6, decay = 0, nc = 0, ncp = 0;
  int nesterov = 0;
  if (n->op == DML_OP_ADAGRAD) {
    decay = dml_attr_float(n->attrs, n->n_attrs, "decay_factor", 0.0);
    eps = dml_attr_float(n->attrs, n->n_attrs, "epsilon", 1e-6);
    nc = dml_attr_float(n->attrs, n->n_attrs, "norm_coefficient", 0.0);
  } else if (n->op == DML_OP_MOMENTUM) {
    const char *mode = dml_attr_string(n->attrs, n->n_attrs, "mode", NULL);
    if (!dml_attr_find(n->attrs, n->n_attrs, "alpha") ||
        !dml_attr_find(n->attrs, n->n_attrs, "beta") ||
        !dml_attr_find(n->attrs, n->n_attrs, "norm_coefficient") || !mode)
      return "alpha, beta, mode and norm_coefficient are required";
    if (strcmp(mode, "standard") && strcmp(mode, "nesterov"))
      return "mode must be 'standard' or 'nesterov'";
    nesterov = !strcmp(mode, "nesterov");
    alpha = dml_attr_float(n->attrs, n->n_attrs, "alpha", 0.0);
    beta = dml_attr_float(n->attrs, n->n_attrs, "beta", 0.0);
    nc = dml_attr_float(n->attrs, n->n_attrs, "norm_coefficient", 0.0);
  } else {
    alpha = dml_attr_float(n->attrs, n->n_attrs, "alpha", 0.9);
    beta = dml_attr_float(n->attrs, n->n_attrs, "beta", 0.999);
    eps = dml_attr_float(n->attrs, n->n_attrs, "epsilon", 1e-6);
    nc = dml_attr_float(n->attrs, n->n_attrs, "norm_coefficient", 0.0);
    ncp = dml_attr_float(n->attrs, n->n_attrs, "norm_coefficient_post", 0.0);
  }
  dml_kernel_t *K;
  const dml_kidx_t *gid = elem_kernel(s, node, DML_KK_ELEMENTWISE, big, &K, NULL);
  if (!gid) return NULL;
  /* registers: 0 rate, 1 beta_adj (Momentum), then 3 per tensor */
  K->n_regs = 2 + 3 * nt;
  const dml_kval_t *Rv = load_at(s, R, kc(s, 0));
  const dml_kval_t *Tv = dml_kv_cast(p, DML_KT_I64, load_at(s, T, kc(s, 0)));
  const dml_kval_t *Tf = dml_kv_cast(p, DML_KT_F32, Tv);
  const dml_kval_t *tpos = dml_kv_fn(p, DML_KF_GT, Tv, dml_kv_zero(p, DML_KT_I64));
  const dml_kval_t *one = dml_kv_const(p, 1.0f);
  const dml_kval_t *rate = Rv;
  if (n->op == DML_OP_ADAGRAD)
    rate =
        dml_kv_fn(p, DML_KF_DIV, Rv,
                  dml_kv_fn(p, DML_KF_ADD, one,
                            dml_kv_fn(p, DML_KF_MUL, Tf, dml_kv_const(p, (float)decay))));
  if (n->op == DML_OP_ADAM)
    rate = dml_kv_select(
        p, tpos,
        dml_kv_fn(
            p, DML_KF_DIV,
            dml_kv_fn(p, DML_KF_MUL, Rv,
                      dml_kv_fn(p, DML_KF_SQRT,
                                dml_kv_fn(p, DML_KF_SUB, one,
                                          dml_kv_fn(p, DML_KF_POW,
                                                    dml_kv_const(p, (float)beta), Tf)),
                                NULL)),
            dml_kv_fn(p, DML_KF_SUB, one,
                      dml_kv_fn(p, DML_KF_POW, dml_kv_const(p, (float)alpha), Tf))),
        Rv);
  dml_kblock_t body = {0}, stores = {0};
  dml_kblock_add(&body, assign(s, DML_KS_LET, 0, rate));
  dml_kblock_add(&body,
                 assign(s, DML_KS_LET, 1,
                        dml_kv_select(p, tpos, dml_kv_const(p, (float)beta), one)));
  const dml_kval_t *r = dml_kv_reg(p, 0), *badj = dml_kv_reg(p, 1);
  for (uint32_t i = 0; i < nt; i++) {
    const dml_pkg_value_t *x = input(s, n, 2 + i), *gr = input(s, n, 2 + nt + i),
                          *s0 = input(s, n, 2 + 2 * nt + i);
    const dml_pkg_value_t *s1 = per == 4 ? input(s, n, 2 + 3 * nt + i) : NULL;
    uint32_t rx = 2 + 3 * i, ra = rx + 1, rh = rx + 2;
    const dml_kval_t *xv = load_at(s, x, gid), *a = load_at(s, s0, gid);
    const dml_kval_t *g =
        dml_kv_fn(p, DML_KF_ADD, dml_kv_fn(p, DML_KF_MUL, dml_kv_const(p, (float)nc), xv),
                  load_at(s, gr, gid));
    const dml_kval_t *an, *xn, *hn = NULL;
    const dml_kval_t *A = dml_kv_reg(p, ra), *H = dml_kv_reg(p, rh);
    if (n->op == DML_OP_ADAGRAD) {
      an = dml_kv_fn(p, DML_KF_ADD, a, dml_kv_fn(p, DML_KF_MUL, g, g));
      /* X - r * g / (sqrt(H') + epsilon) */
      xn =
          dml_kv_fn(p, DML_KF_SUB, xv,
                    dml_kv_fn(p, DML_KF_DIV, dml_kv_fn(p, DML_KF_MUL, r, g),
                              dml_kv_fn(p, DML_KF_ADD, dml_kv_fn(p, DML_KF_SQRT, A, NULL),
                                        dml_kv_const(p, (float)eps))));
    } else if (n->op == DML_OP_MOMENTUM) {
      an = dml_kv_fn(p, DML_KF_ADD,
                     dml_kv_fn(p, DML_KF_MUL, dml_kv_const(p, (float)alpha), a),
                     dml_kv_fn(p, DML_KF_MUL, badj, g));
      /* X - R * V' (standard), X - R * (g + alpha * V') (nesterov) */
      xn = dml_kv_fn(
          p, DML_KF_SUB, xv,
          dml_kv_fn(p, DML_KF_MUL, r,
                    nesterov ? dml_kv_fn(p, DML_KF_ADD, g,
                                         dml_kv_fn(p, DML_KF_MUL,
                                                   dml_kv_const(p, (float)alpha), A))
                             : A));
    } else {
      an = dml_kv_fn(p, DML_KF_ADD,
                     dml_kv_fn(p, DML_KF_MUL, dml_kv_const(p, (float)alpha), a),
                     dml_kv_fn(p, DML_KF_MUL, dml_kv_const(p, (float)(1.0 - alpha)), g));
      hn = dml_kv_fn(
          p, DML_KF_ADD,
          dml_kv_fn(p, DML_KF_MUL, dml_kv_const(p, (float)beta), load_at(s, s1, gid)),
          dml_kv_fn(p, DML_KF_MUL, dml_kv_const(p, (float)(1.0 - beta)),
                    dml_kv_fn(p, DML_KF_MUL, g, g)));
      /* (1 - norm_coefficient_post) * (X - r * V' / (sqrt(H') + epsilon)) */
      xn = dml_kv_fn(
          p, DML_KF_MUL, dml_kv_const(p, (float)(1.0 - ncp)),
          dml_kv_fn(p, DML_KF_SUB, xv,
                    dml_kv_fn(p, DML_KF_DIV, dml_kv_fn(p, DML_KF_MUL, r, A),
                              dml_kv_fn(p, DML_KF_ADD, dml_kv_fn(p, DML_KF_SQRT, H, NULL),
                                        dml_kv_const(p, (float)eps)))));
    }
    dml_kblock_t tb = {0};
    dml_kblock_add(&tb, assign(s, DML_KS_LET, ra, an));
    if (hn) dml_kblock_add(&tb, assign(s, DML_KS_LET, rh, hn));
    dml_kblock_add(&tb, assign(s, DML_KS_LET, rx, xn));
    dml_klin_t l;
    numel_syms(&x->type, &l);
    const dml_kidx_t *lim = dml_ki_lin(p, l);
    dml_kblock_add(&body, if_lt(s, gid, lim, tb.first));
    dml_kblock_t sb = {0};
    const dml_pkg_value_t *xo = output(s, n, i), *ao = output(s, n, nt + i);
    const dml_pkg_value_t *ho = per == 4 ? output(s, n, 2 * nt + i) : NULL;
    if (xo) dml_kblock_add(&sb, store_at(s, xo, gid, dml_kv_reg(p, rx)));
    if (ao) dml_kblock_add(&sb, store_at(s, ao, gid, A));
    if (ho) dml_kblock_add(&sb, store_at(s, ho, gid, H));
    if (sb.first) dml_kblock_add(&stores, if_lt(s, gid, lim, sb.first));
    account(K, &x->type, 4 * (2 * (int64_t)per - 1), 12);
  }
  dml_kblock_add(&body, stores.first);
  elem_finish(s, K, big, gid, body.first);
  return NULL;
}

/* ---- dispatch ---- */

int dml_ksched_ops1_handles(dml_op_t op) {
  switch (op) {
    case DML_OP_TRILU:
    case DML_OP_EYE_LIKE:
    case DML_OP_IS_INF:
    case DML_OP_IS_NAN:
    case DML_OP_BIT_SHIFT:
    case DML_OP_CUM_SUM:
    case DML_OP_CUM_PROD:
    case DML_OP_SCATTER_ELEMENTS:
    case DML_OP_SCATTER_ND:
    case DML_OP_GATHER_ND:
    case DML_OP_REVERSE_SEQUENCE:
    case DML_OP_LRN:
    case DML_OP_MEAN_VARIANCE_NORMALIZATION:
    case DML_OP_DET:
    case DML_OP_EINSUM:
    case DML_OP_ADAGRAD:
    case DML_OP_MOMENTUM:
    case DML_OP_ADAM: return 1;
    default: return 0;
  }
}

void dml_ksched_ops1_emit(sched_t *s, uint32_t node) {
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  int same_elem = n->op == DML_OP_TRILU || n->op == DML_OP_IS_INF ||
                  n->op == DML_OP_IS_NAN || n->op == DML_OP_ADAGRAD ||
                  n->op == DML_OP_MOMENTUM || n->op == DML_OP_ADAM;
  const char *why = n->n_outputs ? check_values(s, n, same_elem) : "no output";
  if (!why) {
    switch (n->op) {
      case DML_OP_TRILU: why = emit_trilu(s, node); break;
      case DML_OP_EYE_LIKE: why = emit_eye_like(s, node); break;
      case DML_OP_IS_INF:
      case DML_OP_IS_NAN: why = emit_is_special(s, node); break;
      case DML_OP_BIT_SHIFT: why = emit_bit_shift(s, node); break;
      case DML_OP_CUM_SUM:
      case DML_OP_CUM_PROD: why = emit_cum_sum(s, node); break;
      case DML_OP_SCATTER_ELEMENTS: why = emit_scatter_elements(s, node); break;
      case DML_OP_SCATTER_ND: why = emit_scatter_nd(s, node); break;
      case DML_OP_GATHER_ND: why = emit_gather_nd(s, node); break;
      case DML_OP_REVERSE_SEQUENCE: why = emit_reverse_sequence(s, node); break;
      case DML_OP_LRN: why = emit_lrn(s, node); break;
      case DML_OP_MEAN_VARIANCE_NORMALIZATION: why = emit_mvn(s, node); break;
      case DML_OP_DET: why = emit_det(s, node); break;
      case DML_OP_EINSUM: why = emit_einsum(s, node); break;
      default: why = emit_optimizer(s, node); break;
    }
  }
  if (why) dml_ksched_unsupported(s, node, why);
}
