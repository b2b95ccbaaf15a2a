/* schedule_index.c — the scheduler's index-map, scan and scatter/gather
 * forms (schedule_internal.h), each one kernel per node and one invocation
 * per output element, following the CPU reference (runtime/cpu/) element
 * for element:
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
 *     CPU, gives 0 instead of an access outside the data).
 *
 * The dtypes are the kernels' (f32, i64, i32, bool, u8, i8) where the CPU
 * reference accepts them. Trilu, EyeLike, IsInf, IsNaN, CumSum,
 * ScatterElements, GatherND and ReverseSequence take symbolic dims,
 * several per value (dml_ksched_numel), ScatterND symbolic index tuples
 * (not data dims); the others static shapes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schedule_internal.h"
#include "schedule_node_util.h"

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

/* 1 for a constant flag (f32) that is not 0, 0 for one that is, -1 for a
 * value known at dispatch only. */
static int const_flag(const dml_kval_t *f) {
  return f->kind == DML_KV_CONST ? f->c != 0 : -1;
}
/* hit where flag (f32) is not 0, the flag read at run time */
static const dml_kval_t *when_flag(dml_kpool_t *p, const dml_kval_t *flag,
                                   const dml_kval_t *hit) {
  const dml_kval_t *on = dml_kv_fn(
      p, DML_KF_NOT, dml_kv_fn(p, DML_KF_EQ, flag, dml_kv_const(p, 0.0f)), NULL);
  return dml_kv_fn(p, DML_KF_AND, hit, on);
}

/* IsInf-10 (x == +inf when detect_positive `pos`, x == -inf when
 * detect_negative `neg`, both default 1; f32 flags, constants or values
 * known at dispatch) and IsNaN-9 (x != x) of f32 v: bool. */
static const dml_kval_t *is_special_value(dml_kpool_t *p, dml_op_t op,
                                          const dml_kval_t *v, const dml_kval_t *pos,
                                          const dml_kval_t *neg) {
  if (op == DML_OP_IS_NAN)
    return dml_kv_fn(p, DML_KF_NOT, dml_kv_fn(p, DML_KF_EQ, v, v), NULL);
  const dml_kval_t *ip = dml_kv_fn(p, DML_KF_EQ, v, dml_kv_const(p, INFINITY));
  const dml_kval_t *in = dml_kv_fn(p, DML_KF_EQ, v, dml_kv_const(p, -INFINITY));
  int cp = const_flag(pos), cn = const_flag(neg);
  if (cp < 0 || cn < 0)
    return dml_kv_fn(p, DML_KF_OR, when_flag(p, pos, ip), when_flag(p, neg, in));
  return cp && cn ? dml_kv_fn(p, DML_KF_OR, ip, in)
         : cp     ? ip
         : cn     ? in
                  : dml_kv_zero(p, DML_KT_BOOL);
}

/* IsInf-10 and IsNaN-9 kernels: f32 in, bool out (is_special_value). */
static const char *emit_is_special(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0), *y = output(s, n, 0);
  if (!x || !y || x->type.dtype != DML_DTYPE_F32 || y->type.dtype != DML_DTYPE_BOOL)
    return "only f32 in, bool out is emitted";
  dml_kernel_t *K;
  const dml_kidx_t *gid = elem_kernel(s, node, DML_KK_ELEMENTWISE, &y->type, &K, NULL);
  if (!gid) return NULL;
  const dml_kval_t *v = load_at(s, x, gid);
  const dml_kval_t *pos = dml_kv_const(
      p, dml_attr_int(n->attrs, n->n_attrs, "detect_positive", 1) != 0 ? 1.0f : 0.0f);
  const dml_kval_t *neg = dml_kv_const(
      p, dml_attr_int(n->attrs, n->n_attrs, "detect_negative", 1) != 0 ? 1.0f : 0.0f);
  elem_finish(s, K, &y->type, gid,
              store_at(s, y, gid, is_special_value(p, n->op, v, pos, neg)));
  account(K, &y->type, 5, 1);
  return NULL;
}

/* 2^sr of unsigned dtype t (sr below the bit width): a chain of selects. */
static const dml_kval_t *pow2_value(dml_kpool_t *p, dml_kdtype_t t,
                                    const dml_kval_t *sr) {
  const dml_kval_t *pw = dml_kv_iconst(p, t, 1);
  for (int b = 1; b < 8 * (int)dml_kdtype_size(t); b++)
    pw = dml_kv_select(p, dml_kv_fn(p, DML_KF_EQ, sr, dml_kv_iconst(p, t, b)),
                       dml_kv_iconst(p, t, (int64_t)((uint64_t)1 << b)), pw);
  return pw;
}

/* BitShift-11 of xv by sr (unsigned dtype t) with pr = 2^sr (pow2_value):
 * x << s is x * 2^s (wrapping to the dtype), x >> s is x / 2^s, a shift by
 * the bit width or more 0, as on the CPU; `left` (f32) 1 for LEFT, 0 for
 * RIGHT, a constant or a value known at dispatch. */
static const dml_kval_t *bit_shift_value(dml_kpool_t *p, dml_kdtype_t t,
                                         const dml_kval_t *xv, const dml_kval_t *sr,
                                         const dml_kval_t *pr, const dml_kval_t *left) {
  int cl = const_flag(left);
  const dml_kval_t *r =
      cl >= 0 ? dml_kv_fn(p, cl ? DML_KF_MUL : DML_KF_DIV, xv, pr)
              : dml_kv_select(p, dml_kv_fn(p, DML_KF_EQ, left, dml_kv_const(p, 0.0f)),
                              dml_kv_fn(p, DML_KF_DIV, xv, pr),
                              dml_kv_fn(p, DML_KF_MUL, xv, pr));
  return dml_kv_select(
      p, dml_kv_fn(p, DML_KF_GE, sr, dml_kv_iconst(p, t, 8 * (int)dml_kdtype_size(t))),
      dml_kv_zero(p, t), r);
}

/* BitShift-11 on unsigned integers (u8, u16, u32, u64 of one dtype),
 * numpy broadcasting (bit_shift_value). */
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
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK];
  const dml_kidx_t *gid = elem_kernel(s, node, DML_KK_ELEMENTWISE, &y->type, &K, c);
  if (!gid) return NULL;
  K->n_regs = 2;
  const dml_kval_t *xv = load_at(s, x, bcast_index(s, &x->type, &y->type, c));
  const dml_kval_t *sv = load_at(s, sh, bcast_index(s, &sh->type, &y->type, c));
  const dml_kval_t *sr = dml_kv_reg_t(p, 0, t);
  const dml_kval_t *pr = dml_kv_reg_t(p, 1, t);
  dml_kblock_t body = {0};
  dml_kblock_add(&body, assign(s, DML_KS_LET, 0, sv));
  dml_kblock_add(&body, assign(s, DML_KS_LET, 1, pow2_value(p, t, sr)));
  dml_kblock_add(&body, store_at(s, y, gid,
                                 bit_shift_value(p, t, xv, sr, pr,
                                                 dml_kv_const(p, left ? 1.0f : 0.0f))));
  elem_finish(s, K, &y->type, gid, body.first);
  account(K, &y->type, 3 * (int64_t)dml_kdtype_size(t), 1);
  return NULL;
}

const char *dml_ksched_index_ew_value(sched_t *s, const dml_pkg_node_t *n,
                                      const dml_kval_t *const *x,
                                      const dml_kval_t *const *attrs,
                                      const dml_kval_t **out_value) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_value_t *x0 = input(s, n, 0), *y = output(s, n, 0);
  if (!x0 || !y) return "absent operand";
  if (n->op == DML_OP_IS_NAN || n->op == DML_OP_IS_INF) {
    if (x0->type.dtype != DML_DTYPE_F32 || y->type.dtype != DML_DTYPE_BOOL)
      return "only f32 in, bool out is emitted";
    const dml_kval_t *pos = attrs ? attrs[0] : NULL, *neg = attrs ? attrs[1] : NULL;
    if (!attrs) {
      pos = dml_kv_const(
          p, dml_attr_int(n->attrs, n->n_attrs, "detect_positive", 1) != 0 ? 1.0f : 0.0f);
      neg = dml_kv_const(
          p, dml_attr_int(n->attrs, n->n_attrs, "detect_negative", 1) != 0 ? 1.0f : 0.0f);
    }
    *out_value = is_special_value(p, n->op, x[0], pos, neg);
    return *out_value ? NULL : "out of memory";
  }
  if (n->op != DML_OP_BIT_SHIFT) return "not elementwise";
  const dml_pkg_value_t *sh = input(s, n, 1);
  dml_kdtype_t t = kdt(y);
  if (!sh || x0->type.dtype != y->type.dtype || sh->type.dtype != y->type.dtype ||
      (t != DML_KT_U8 && t != DML_KT_U16 && t != DML_KT_U32 && t != DML_KT_U64))
    return "only u8, u16, u32 and u64 of one dtype are emitted for this op";
  const dml_kval_t *left = attrs ? attrs[0] : NULL;
  if (!attrs) {
    const char *dir = dml_attr_string(n->attrs, n->n_attrs, "direction", "");
    if (strcmp(dir, "LEFT") && strcmp(dir, "RIGHT"))
      return "direction must be \"LEFT\" or \"RIGHT\"";
    left = dml_kv_const(p, !strcmp(dir, "LEFT") ? 1.0f : 0.0f);
  }
  *out_value = bit_shift_value(p, t, x[0], x[1], pow2_value(p, t, x[1]), left);
  return *out_value ? NULL : "out of memory";
}

/* ---- CumSum ---- */

/* A cooperative CumSum/CumProd row (dml_krow_scan): element j of the scan
 * at base + jj * inner of x and y, jj = j (or L - 1 - j when reverse). */
typedef struct {
  const dml_pkg_value_t *x, *y;
  const dml_kidx_t *base, *inner, *last; /* last: L - 1 */
  int rev;
} cum_row_t;

static const dml_kidx_t *cum_elem(sched_t *s, const cum_row_t *c, const dml_kidx_t *j) {
  dml_kpool_t *p = s->pool;
  const dml_kidx_t *jj = c->rev ? dml_ki_bin(p, DML_KI_SUB, c->last, j) : j;
  return dml_ki_bin(p, DML_KI_ADD, c->base, dml_ki_bin(p, DML_KI_MUL, jj, c->inner));
}

static const dml_kval_t *cum_row_value(sched_t *s, const dml_kidx_t *j, void *vctx) {
  const cum_row_t *c = vctx;
  return load_at(s, c->x, cum_elem(s, c, j));
}

static dml_kstmt_t *cum_row_store(sched_t *s, const dml_kidx_t *j, const dml_kval_t *v,
                                  void *vctx) {
  const cum_row_t *c = vctx;
  return store_at(s, c->y, cum_elem(s, c, j), v);
}

/* CumSum/CumProd along constant axis `ax` whose length exceeds
 * DML_KROW_MIN at the bounds: a workgroup per row scans it in chunks of
 * 1,024 (dml_krow_scan, schedule_rows.c), so a row of any length runs
 * length / 1,024 loop iterations per invocation (the per-element form
 * loops over the whole prefix: lavapipe stopped it after 65,535 and its
 * work is quadratic). */
static const char *emit_cum_rows(sched_t *s, uint32_t node, const dml_pkg_value_t *x,
                                 const dml_pkg_value_t *y, int32_t ax, int excl, int rev,
                                 int prod) {
  dml_kpool_t *p = s->pool;
  dml_kdtype_t t = kdt(y);
  dml_dim_t Ld = x->type.dims[ax];
  dml_klin_t numel;
  if (!numel_syms(&x->type, &numel))
    return "a symbol in three dims or two squared symbols";
  dml_klin_t rows = dml_ksched_lin_div_dim(numel, Ld);
  dml_kernel_t *K = dml_ksched_kernel(s, DML_KK_REDUCE, node);
  if (!K) return NULL;
  int32_t j = DML_KVAR_FIRST_LOOP;
  const dml_kidx_t *row = dml_krow_setup(s, K, rows, j + 1, 0);
  const dml_kidx_t *L = dim_idx(s, Ld), *in = kc(s, 1);
  for (int32_t d = ax + 1; d < x->type.rank; d++)
    in = dml_ki_bin(p, DML_KI_MUL, in, dim_idx(s, x->type.dims[d]));
  int inner1 = 1;
  for (int32_t d = ax + 1; d < x->type.rank; d++)
    inner1 &= x->type.dims[d].value == 1 && x->type.dims[d].sym < 0;
  cum_row_t c = {x,
                 y,
                 inner1
                     ? dml_ki_bin(p, DML_KI_MUL, row, L)
                     : kadd(s,
                            dml_ki_bin(p, DML_KI_MUL, dml_ki_bin(p, DML_KI_DIV, row, in),
                                       dml_ki_bin(p, DML_KI_MUL, L, in)),
                            dml_ki_bin(p, DML_KI_MOD, row, in)),
                 in,
                 dml_ki_bin(p, DML_KI_SUB, L, kc(s, 1)),
                 rev};
  dml_kblock_t body = {0};
  dml_krow_scan(s, K, &body, L, j, prod ? DML_KF_MUL : DML_KF_ADD,
                prod ? dml_kv_one(p, t) : dml_kv_zero(p, t), excl, cum_row_value,
                cum_row_store, &c, 0, 0);
  K->body = dml_krow_finish(s, rows, j + 1, body.first);
  K->n_regs = 9;
  account(K, &y->type, 2 * (int64_t)dml_dtype_size(y->type.dtype), 1);
  return NULL;
}

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
  /* a long axis: a workgroup per row; the per-element form below loops over
   * the whole prefix (quadratic work, and lavapipe stops an invocation's
   * loops after 65,535 iterations) */
  for (int32_t a = 0; a < r; a++) {
    if (has_const && a != cax) continue;
    int64_t len = dml_ksched_lin_max(
        s, (dml_klin_t){x->type.dims[a].value, x->type.dims[a].sym, 0, 0});
    if (has_const && dml_krow_wanted(s, len))
      return emit_cum_rows(s, node, x, y, (int32_t)cax, excl, rev, prod);
    if (!has_const && len > 65535)
      return "CumSum/CumProd with the axis fed at run time over a dim longer than "
             "65,535 (a constant axis takes the cooperative scan)";
  }
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
/* One output element of ScatterElements: its coordinates c. */
typedef struct {
  const dml_pkg_value_t *x, *ind, *u;
  red_t red;
  dml_kdtype_t t;
  int32_t axis;
  const dml_kidx_t *c[DML_MAX_RANK];
} scat_el_t;

/* Update iv of ScatterElements applied to register 0 where it addresses
 * the output element (dml_krow_stmt_fn). */
static dml_kstmt_t *scat_el_update(sched_t *s, const dml_kidx_t *iv, void *ctx) {
  dml_kpool_t *p = s->pool;
  const scat_el_t *e = ctx;
  const int32_t r = e->x->type.rank, axis = e->axis;
  const dml_kidx_t *ic[DML_MAX_RANK];
  coords_of(s, &e->ind->type, iv, ic);
  const dml_kval_t *v =
      wrap_neg(s, load_at(s, e->ind, iv),
               dml_kv_iconst(p, DML_KT_I64, e->x->type.dims[axis].value));
  dml_kstmt_t *inner = if_in(
      s, dml_ki_val(p, v), e->c[axis], kadd(s, e->c[axis], kc(s, 1)),
      assign(s, DML_KS_SET, 0,
             reduce_val(p, e->red, dml_kv_reg_t(p, 0, e->t), load_at(s, e->u, iv))));
  for (int32_t d = r - 1; d >= 0; d--)
    if (d != axis) inner = if_in(s, ic[d], e->c[d], kadd(s, e->c[d], kc(s, 1)), inner);
  return inner;
}

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
  dml_klin_t ni;
  numel_syms(&ind->type, &ni);
  dml_kernel_t *K = dml_ksched_kernel(s, DML_KK_MOVE, node);
  if (!K) return NULL;
  dml_kdot_t d;
  const dml_kidx_t *gid = dml_kdot_setup(s, K, &y->type, dml_ksched_lin_max(s, ni),
                                         DML_KVAR_FIRST_LOOP + 2, &d);
  scat_el_t sc = {x, ind, u, red, t, (int32_t)axis, {0}};
  coords_of(s, &y->type, gid, sc.c);
  dml_kblock_t body = {0};
  dml_kblock_add(&body, assign(s, DML_KS_LET, 0, load_at(s, x, gid)));
  dml_kdot_fold(s, K, &d, &body, dml_ki_lin(p, ni), DML_KVAR_FIRST_LOOP, scat_el_update,
                &sc, 0, t);
  dml_kdot_finish(s, K, &d, gid, &body, store_at(s, y, gid, dml_kv_reg_t(p, 0, t)));
  account(K, &y->type, 2 * (int64_t)dml_dtype_size(y->type.dtype), 0);
  return NULL;
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

/* One output element of ScatterND: slice q0, element kk of it. */
typedef struct {
  const dml_pkg_value_t *ind, *u;
  red_t red;
  dml_kdtype_t t;
  int64_t m;
  const int64_t *dims, *mult;
  const dml_kidx_t *S, *q0, *kk;
} scat_nd_t;

/* Tuple tv of ScatterND applied to register 0 where it addresses the
 * output element's slice (dml_krow_stmt_fn). */
static dml_kstmt_t *scat_nd_update(sched_t *s, const dml_kidx_t *tv, void *ctx) {
  dml_kpool_t *p = s->pool;
  const scat_nd_t *e = ctx;
  const dml_kval_t *off = tuple_offset(s, e->ind, tv, e->m, e->dims, e->mult);
  return if_in(s, dml_ki_val(p, off), e->q0, kadd(s, e->q0, kc(s, 1)),
               assign(s, DML_KS_SET, 0,
                      reduce_val(p, e->red, dml_kv_reg_t(p, 0, e->t),
                                 load_at(s, e->u, kadd(s, kmul(s, tv, e->S), e->kk)))));
}

/* ScatterND-18: y = data, then for each index tuple t (in order) the slice
 * data[idx(t)] (red)= updates[t]. Invocation e (slice e / S, element
 * e % S, S the slice size) applies every tuple addressing its slice. The
 * data's dims and the indices' last dim are static; the indices' other
 * dims (the tuples, and so the updates' leading dims) may be symbolic: the
 * gradient of an embedding's Gather over [batch, seq] token ids. */
static const char *emit_scatter_nd(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0), *ind = input(s, n, 1), *u = input(s, n, 2);
  const dml_pkg_value_t *y = output(s, n, 0);
  if (!x || !u || !y || x->type.dtype != y->type.dtype || u->type.dtype != y->type.dtype)
    return "data, updates and output of one dtype";
  if (!is_index_dtype(ind)) return "indices must be i64 or i32";
  if (!is_static(&x->type)) return "data of symbolic dims";
  int32_t r = x->type.rank, q = ind->type.rank;
  if (r < 1 || q < 1) return "data and indices must have rank >= 1";
  if (ind->type.dims[q - 1].sym >= 0) return "indices' last dim of symbolic length";
  dml_klin_t nt;
  if (!numel_syms(&ind->type, &nt)) return "indices of too many symbols";
  int64_t m = ind->type.dims[q - 1].value;
  if (m < 1 || m > r) return "indices' last dim out of range";
  red_t red;
  const char *why = parse_reduction(n, kdt(y), &red);
  if (why) return why;
  int64_t xs[DML_MAX_RANK], mult[DML_MAX_RANK], dims[DML_MAX_RANK], slice = 1;
  strides_of(&x->type, xs);
  for (int32_t d = (int32_t)m; d < r; d++) slice *= x->type.dims[d].value;
  nt.c /= m; /* the tuples: the indices' elements over their last dim */
  for (int64_t k = 0; k < m; k++) {
    dims[k] = x->type.dims[k].value;
    mult[k] = slice ? xs[k] / slice : 0;
  }
  dml_kdtype_t t = kdt(y);
  dml_kernel_t *K = dml_ksched_kernel(s, DML_KK_MOVE, node);
  if (!K) return NULL;
  dml_kdot_t d;
  const dml_kidx_t *gid = dml_kdot_setup(s, K, &y->type, dml_ksched_lin_max(s, nt),
                                         DML_KVAR_FIRST_LOOP + 2, &d);
  const dml_kidx_t *S = kc(s, slice ? slice : 1);
  scat_nd_t sc = {ind,
                  u,
                  red,
                  t,
                  m,
                  dims,
                  mult,
                  S,
                  dml_ki_bin(p, DML_KI_DIV, gid, S),
                  dml_ki_bin(p, DML_KI_MOD, gid, S)};
  dml_kblock_t body = {0};
  dml_kblock_add(&body, assign(s, DML_KS_LET, 0, load_at(s, x, gid)));
  dml_kdot_fold(s, K, &d, &body, dml_ki_lin(p, nt), DML_KVAR_FIRST_LOOP, scat_nd_update,
                &sc, 0, t);
  dml_kdot_finish(s, K, &d, gid, &body, store_at(s, y, gid, dml_kv_reg_t(p, 0, t)));
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

/* ---- dispatch ---- */

int dml_ksched_index_handles(dml_op_t op) {
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
    case DML_OP_REVERSE_SEQUENCE: return 1;
    default: return 0;
  }
}

void dml_ksched_index_emit(sched_t *s, uint32_t node) {
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  int same_elem =
      n->op == DML_OP_TRILU || n->op == DML_OP_IS_INF || n->op == DML_OP_IS_NAN;
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
      default: why = emit_reverse_sequence(s, node); break;
    }
  }
  if (why) dml_ksched_unsupported(s, node, why);
}
