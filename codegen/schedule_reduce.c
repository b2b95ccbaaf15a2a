/* schedule_reduce.c — the scheduler's reductions: the Reduce* ops and
 * ArgMax/ArgMin over any axes (static or fed at run time; one invocation
 * per output element, or the cooperative row form of schedule_rows.c for
 * long rows, with the fused elementwise chain after the reduction),
 * Softmax and LogSoftmax, Hardmax, and the losses
 * NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss. Moved from
 * schedule.c unchanged. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dml_cpu.h"
#include "dml_ew.h"
#include "schedule_common.h"

/* ---- reductions ---- */

/* Sets red[d] to 1 for each reduced dim of node `n` (input rank `rank`),
 * or, when the axes come from a 1-D integer input that is not a constant
 * (fed at run time), every red[d] to -1 and s->rt_axes to that input (the
 * kernel reads it, dml_ksched_emit_reduce_group). An empty axes input (a static
 * length 0) reduces every dim, or none with noop_with_empty_axes (Sum,
 * Mean, Max, Min, Prod: the output is the input). NULL, or why not. */
const char *dml_ksched_reduce_axes(sched_t *s, const dml_pkg_node_t *n, int32_t rank,
                                   int *red) {
  s->rt_axes = NULL;
  int noop = (int)dml_attr_int(n->attrs, n->n_attrs, "noop_with_empty_axes", 0);
  if (n->op == DML_OP_GLOBAL_AVERAGE_POOL || n->op == DML_OP_GLOBAL_MAX_POOL) {
    if (rank < 3) return "global pool of rank < 3";
    for (int32_t d = 0; d < rank; d++) red[d] = d >= 2;
    return NULL;
  }
  int64_t axes[DML_MAX_RANK];
  size_t na = 0;
  const int64_t *aa = dml_attr_ints(n->attrs, n->n_attrs, "axes", &na);
  if (aa) {
    if (na > DML_MAX_RANK) return "too many axes";
    memcpy(axes, aa, na * sizeof *aa);
  } else if (n->n_inputs > 1 && n->inputs[1] != DML_PKG_NO_VALUE) {
    const dml_pkg_value_t *av = val(s, n->inputs[1]);
    if (av && av->storage != DML_PKG_STORAGE_CONST && av->type.rank == 1 &&
        av->type.dims[0].sym < 0 &&
        (av->type.dtype == DML_DTYPE_I64 || av->type.dtype == DML_DTYPE_I32) &&
        typed_ok(av) && av->type.dims[0].value > 0) {
      if (av->type.dims[0].value > rank) return "more axes than dims";
      for (int32_t d = 0; d < rank; d++) red[d] = -1;
      s->rt_axes = av;
      return NULL;
    }
    if (av && av->type.rank == 1 && av->type.dims[0].sym < 0 &&
        av->type.dims[0].value == 0) {
      na = 0; /* empty: every dim, or none (noop_with_empty_axes) */
      goto have_axes;
    }
    if (!av || av->storage != DML_PKG_STORAGE_CONST || av->type.dtype != DML_DTYPE_I64 ||
        av->type.rank != 1 || av->type.dims[0].value > DML_MAX_RANK)
      return "axes must be a constant or a 1-D integer input of static length";
    na = (size_t)av->type.dims[0].value;
    if (av->offset + 8 * na > s->weights_size) return "axes outside the weights";
    memcpy(axes, s->weights + av->offset, 8 * na);
  }
have_axes:
  for (int32_t d = 0; d < rank; d++) red[d] = na == 0 && !noop;
  if (na == 0 && noop && n->op != DML_OP_REDUCE_SUM && n->op != DML_OP_REDUCE_MEAN &&
      n->op != DML_OP_REDUCE_MAX && n->op != DML_OP_REDUCE_MIN &&
      n->op != DML_OP_REDUCE_PROD)
    return "noop_with_empty_axes";
  for (size_t i = 0; i < na; i++) {
    int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank) return "axis out of range";
    red[a] = 1;
  }
  return NULL;
}

/* bool: some entry of `axes` (a 1-D integer value, negative entries
 * counted from `rank`) names dim d. */
static const dml_kval_t *reduced_at(sched_t *s, const dml_pkg_value_t *axes, int32_t rank,
                                    int32_t d) {
  dml_kpool_t *p = s->pool;
  const dml_kval_t *f = dml_kv_zero(p, DML_KT_BOOL);
  for (int64_t i = 0; i < axes->type.dims[0].value; i++) {
    const dml_kval_t *a = param_i64(s, axes, i);
    const dml_kval_t *hit = dml_kv_fn(
        p, DML_KF_OR, dml_kv_fn(p, DML_KF_EQ, a, dml_kv_iconst(p, DML_KT_I64, d)),
        dml_kv_fn(p, DML_KF_EQ, a, dml_kv_iconst(p, DML_KT_I64, d - rank)));
    f = dml_kv_fn(p, DML_KF_OR, f, hit);
  }
  return f;
}

/* Element index in x of reduced element `j` (row-major over the reduced
 * dims) of output element `row` (row-major over the kept dims) of a
 * reduction over `red` (dml_ksched_reduce_axes); *out_R the reduced count (an index
 * expression: run-time axes make it one). */
static const dml_kidx_t *reduce_x_index(sched_t *s, const dml_pkg_value_t *x,
                                        const int *red, const dml_kidx_t *row,
                                        const dml_kidx_t *j, const dml_kidx_t **out_R) {
  dml_kpool_t *p = s->pool;
  /* kept dims from row, reduced dims from j (both row-major) */
  const dml_kidx_t *xcoord[DML_MAX_RANK];
  const dml_kidx_t *rest_o = row, *rest_r = j, *R = dml_ki_const(p, 1);
  /* the outermost kept and reduced dims take what is left (row < rows and
   * j < R: no remainder needed), unless axes come at run time */
  int32_t first[2] = {-1, -1};
  for (int32_t d = x->type.rank - 1; d >= 0; d--)
    if (red[d] >= 0) first[red[d] ? 1 : 0] = d;
  for (int32_t d = 0; d < x->type.rank; d++)
    if (red[d] < 0) first[0] = first[1] = -1;
  for (int32_t d = x->type.rank - 1; d >= 0; d--) {
    const dml_kidx_t *e = dim_idx(s, x->type.dims[d]);
    if (red[d] < 0) {
      /* axes fed at run time: dim d is reduced when an axis names it; the
       * kept extent is then 1 and the reduced one the dim, else the other
       * way round (so the output's flat index is the kept dims' row-major
       * one, with keepdims or without) */
      const dml_kval_t *f = reduced_at(s, s->rt_axes, x->type.rank, d);
      const dml_kval_t *X = dml_kv_idx(p, DML_KT_I64, e),
                       *one = dml_kv_one(p, DML_KT_I64);
      const dml_kidx_t *ek = dml_ki_val(p, dml_kv_select(p, f, one, X));
      const dml_kidx_t *er = dml_ki_val(p, dml_kv_select(p, f, X, one));
      xcoord[d] = dml_ki_bin(p, DML_KI_ADD, dml_ki_bin(p, DML_KI_MOD, rest_o, ek),
                             dml_ki_bin(p, DML_KI_MOD, rest_r, er));
      rest_o = dml_ki_bin(p, DML_KI_DIV, rest_o, ek);
      rest_r = dml_ki_bin(p, DML_KI_DIV, rest_r, er);
      R = dml_ki_bin(p, DML_KI_MUL, R, er);
      continue;
    }
    const dml_kidx_t **rest = red[d] ? &rest_r : &rest_o;
    xcoord[d] = first[red[d] ? 1 : 0] == d ? *rest : dml_ki_bin(p, DML_KI_MOD, *rest, e);
    *rest = dml_ki_bin(p, DML_KI_DIV, *rest, e);
    if (red[d]) R = dml_ki_bin(p, DML_KI_MUL, R, e);
  }
  *out_R = R;
  return bcast_index(s, &x->type, &x->type, xcoord);
}

/* Element j of a cooperative reduction's row (dml_krow_reduce): x at
 * reduced element j of output element `row`, through `fn` (abs, square,
 * exp(x - m) with m in register `mreg`, or none). */
typedef struct {
  const dml_pkg_value_t *x;
  const int *red;
  const dml_kidx_t *row;
  dml_op_t op;
  /* 0: x through op's function, 1: exp(x - reg mreg), 2: x with NaN as
   * the identity of ArgMax (-inf) / ArgMin (+inf), 3 / 4: j / 4096 as f32
   * where x equals reg mreg, else 2^24 / -1 (of the first / last index
   * holding it), 5 / 6: j % 4096 where besides j / 4096 equals reg hreg,
   * else 4096 / -1 (exact f32 values for any 32-bit j), 7: |x|, 8: (x /
   * reg hreg)^2 (ReduceL2's scaled squares) */
  int mode;
  uint32_t mreg, hreg;
  dml_kdtype_t t; /* x's (register) dtype */
} red_row_t;

/* A load of x at flat element i for a reduction: f16/bf16 (the global
 * pools of dmlc compile --precision) widen exactly, the accumulation is f32
 * (red_acc_dtype) and the result is rounded once to y's dtype. */
static const dml_kval_t *red_load(sched_t *s, const dml_pkg_value_t *x,
                                  const dml_kidx_t *i) {
  const dml_kval_t *v = load_at(s, x, i);
  return kdt(x) == DML_KT_F16 || kdt(x) == DML_KT_BF16
             ? dml_kv_cast(s->pool, DML_KT_F32, v)
             : v;
}

static const dml_kval_t *red_row_value(sched_t *s, const dml_kidx_t *j, void *vctx) {
  const red_row_t *c = vctx;
  dml_kpool_t *p = s->pool;
  const dml_kidx_t *R;
  const dml_kval_t *xv =
      red_load(s, c->x, reduce_x_index(s, c->x, c->red, c->row, j, &R));
  if (c->mode == 1)
    return dml_kv_fn(p, DML_KF_EXP,
                     dml_kv_fn(p, DML_KF_SUB, xv, dml_kv_reg_t(p, c->mreg, c->t)), NULL);
  if (c->mode == 2) {
    if (!dml_kdtype_is_float(c->t)) return xv;
    return dml_kv_select(
        p, dml_kv_fn(p, DML_KF_EQ, xv, xv), xv,
        dml_kv_fconst(p, c->t, c->op == DML_OP_ARG_MAX ? -INFINITY : INFINITY));
  }
  if (c->mode == 7) return dml_kv_fn(p, DML_KF_ABS, xv, NULL);
  if (c->mode == 8) {
    const dml_kval_t *q = dml_kv_fn(p, DML_KF_DIV, xv, dml_kv_reg_t(p, c->hreg, c->t));
    return dml_kv_fn(p, DML_KF_MUL, q, q);
  }
  if (c->mode >= 3) {
    const dml_kval_t *hit = dml_kv_fn(p, DML_KF_EQ, xv, dml_kv_reg_t(p, c->mreg, c->t));
    const dml_kval_t *hi =
        dml_kv_idx(p, DML_KT_F32, dml_ki_bin(p, DML_KI_DIV, j, dml_ki_const(p, 4096)));
    if (c->mode <= 4)
      return dml_kv_select(p, hit, hi,
                           dml_kv_const(p, c->mode == 3 ? 16777216.0f : -1.0f));
    hit = dml_kv_fn(p, DML_KF_AND, hit,
                    dml_kv_fn(p, DML_KF_EQ, hi, dml_kv_reg(p, c->hreg)));
    return dml_kv_select(
        p, hit,
        dml_kv_idx(p, DML_KT_F32, dml_ki_bin(p, DML_KI_MOD, j, dml_ki_const(p, 4096))),
        dml_kv_const(p, c->mode == 5 ? 4096.0f : -1.0f));
  }
  if (c->op == DML_OP_REDUCE_L1) return dml_kv_fn(p, DML_KF_ABS, xv, NULL);
  if (c->op == DML_OP_REDUCE_L2 || c->op == DML_OP_REDUCE_SUM_SQUARE)
    return dml_kv_fn(p, DML_KF_MUL, xv, xv);
  return xv;
}

/* Largest reduced count of a reduction over `red` of x (at the bounds;
 * run-time axes: every element). */
static int64_t reduce_count_max(const sched_t *s, const dml_pkg_value_t *x,
                                const int *red) {
  int64_t m = 1;
  for (int32_t d = 0; d < x->type.rank; d++) {
    if (!red[d]) continue;
    dml_klin_t l = {x->type.dims[d].value, x->type.dims[d].sym, 0, 0};
    int64_t e = lin_max(s, l);
    if (__builtin_mul_overflow(m, e, &m)) return INT64_MAX;
  }
  return m;
}

void dml_ksched_emit_reduce_group(sched_t *s, const group_t *G, const int *red) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[G->nodes[0]];
  const dml_pkg_value_t *x = val(s, n->inputs[0]);
  dml_kernel_t *K = new_kernel(s, DML_KK_REDUCE);
  if (!K) return;
  set_nodes(s, K, G);
  dml_klin_t numel;
  type_numel(G->out, &numel);
  dml_kdtype_t t = kdt(x) == DML_KT_F16 || kdt(x) == DML_KT_BF16 ? DML_KT_F32 : kdt(x);
  int is_arg = n->op == DML_OP_ARG_MAX || n->op == DML_OP_ARG_MIN;
  /* long rows: one workgroup per output element (schedule_rows.c), for f32
   * through the f32 tile 0, for f64 and the integers through a tile of
   * their dtype (tile 1) */
  int64_t rmax = reduce_count_max(s, x, red);
  int coop =
      t != DML_KT_BOOL && t != DML_KT_F16 && t != DML_KT_BF16 && dml_krow_wanted(s, rmax);
  uint32_t vtile = t == DML_KT_F32 ? 0 : 1;
  /* the identities of max and min in x's dtype (the scheduler's switch
   * leaves Sum, Max, Min and ArgMax/ArgMin to the dtypes other than f32
   * and f64) */
  int64_t lo = t == DML_KT_I32             ? INT32_MIN
               : t == DML_KT_I8            ? INT8_MIN
               : t == DML_KT_I16           ? INT16_MIN
               : dml_kdtype_is_unsigned(t) ? 0
                                           : INT64_MIN;
  int64_t hi = t == DML_KT_I32   ? INT32_MAX
               : t == DML_KT_U8  ? UINT8_MAX
               : t == DML_KT_I8  ? INT8_MAX
               : t == DML_KT_I16 ? INT16_MAX
               : t == DML_KT_U16 ? UINT16_MAX
               : t == DML_KT_U32 ? (int64_t)UINT32_MAX
               : t == DML_KT_U64 ? -1 /* all ones */
                                 : INT64_MAX;
  int32_t r = DML_KVAR_FIRST_LOOP;
  const dml_kidx_t *gid =
      coop ? dml_krow_setup(s, K, numel, r + 1, 0) : dml_ki_var(p, DML_KVAR_GID_X);
  if (!coop) {
    K->local[0] = WG;
    K->items[0] = numel;
  }
  const dml_kidx_t *rv = dml_ki_var(p, r);
  const dml_kidx_t *R;
  const dml_kidx_t *xi = reduce_x_index(s, x, red, gid, rv, &R);
  uint32_t acc = G->n;
  const dml_kidx_t *coord[DML_MAX_RANK];
  coords_of(s, G->out, gid, coord);
  dml_kblock_t body = {0};
  if (is_arg) {
    /* best value in register acc + 1, its index (i64) in acc; the first
     * (or with select_last_index the last) extremum wins */
    int last = (int)dml_attr_int(n->attrs, n->n_attrs, "select_last_index", 0);
    dml_kfn_t better = n->op == DML_OP_ARG_MAX ? (last ? DML_KF_GE : DML_KF_GT)
                                               : (last ? DML_KF_LE : DML_KF_LT);
    const dml_kval_t *xv = load_at(s, x, xi);
    const dml_kval_t *best = dml_kv_reg_t(p, acc + 1, t);
    const dml_kval_t *hit = dml_kv_reg_t(p, acc + 2, DML_KT_BOOL);
    dml_kblock_t loop = {0};
    dml_kblock_add(&loop, assign(s, DML_KS_LET, acc + 2, dml_kv_fn(p, better, xv, best)));
    dml_kblock_add(&loop,
                   assign(s, DML_KS_SET, acc + 1, dml_kv_select(p, hit, xv, best)));
    dml_kblock_add(&loop, assign(s, DML_KS_SET, acc,
                                 dml_kv_select(p, hit, dml_kv_idx(p, DML_KT_I64, rv),
                                               dml_kv_reg_t(p, acc, DML_KT_I64))));
    /* start from element 0 (its compare with itself keeps index 0) */
    if (!coop)
      dml_kblock_add(&body, assign(s, DML_KS_LET, acc, dml_kv_zero(p, DML_KT_I64)));
    const dml_kidx_t *x0c[DML_MAX_RANK] = {0};
    const dml_kidx_t *rest = gid;
    for (int32_t d = x->type.rank - 1; d >= 0; d--) {
      const dml_kidx_t *e = dim_idx(s, x->type.dims[d]);
      if (red[d]) {
        x0c[d] = dml_ki_const(p, 0);
      } else {
        x0c[d] = dml_ki_bin(p, DML_KI_MOD, rest, e);
        rest = dml_ki_bin(p, DML_KI_DIV, rest, e);
      }
    }
    const dml_kval_t *x0 = load_at(s, x, bcast_index(s, &x->type, &x->type, x0c));
    if (coop) {
      /* the best value m ignoring NaN (registers acc + 4 ..), then the
       * first (last) index holding m in two exact f32 parts, j / 4096
       * (registers acc ..) and j % 4096 (acc + 8 ..); a NaN element 0
       * gives 0, as the CPU's compares (which skip NaN after element 0) do */
      int is_amax = n->op == DML_OP_ARG_MAX;
      red_row_t rc = {x, red, gid, n->op, 2, acc + 4, acc, t};
      const dml_kval_t *vinit = dml_kdtype_is_float(t)
                                    ? dml_kv_fconst(p, t, is_amax ? -INFINITY : INFINITY)
                                    : dml_kv_iconst(p, t, is_amax ? lo : hi);
      if (t == DML_KT_F32)
        dml_krow_reduce(s, &body, R, r, is_amax ? DML_KF_MAX : DML_KF_MIN,
                        is_amax ? -INFINITY : INFINITY, red_row_value, &rc, acc + 4, 0);
      else
        dml_krow_reduce_t(s, K, &body, R, r, is_amax ? DML_KF_MAX : DML_KF_MIN, vinit,
                          red_row_value, &rc, acc + 4, vtile);
      rc.mode = last ? 4 : 3;
      dml_krow_reduce(s, &body, R, r, last ? DML_KF_MAX : DML_KF_MIN,
                      last ? -1.0f : 16777216.0f, red_row_value, &rc, acc, 0);
      rc.mode = last ? 6 : 5;
      dml_krow_reduce(s, &body, R, r, last ? DML_KF_MAX : DML_KF_MIN,
                      last ? -1.0f : 4096.0f, red_row_value, &rc, acc + 8, 0);
      const dml_kval_t *at_idx = dml_kv_fn(
          p, DML_KF_ADD,
          dml_kv_fn(p, DML_KF_MUL, dml_kv_cast(p, DML_KT_I64, dml_kv_reg(p, acc)),
                    dml_kv_iconst(p, DML_KT_I64, 4096)),
          dml_kv_cast(p, DML_KT_I64, dml_kv_reg(p, acc + 8)));
      const dml_kval_t *ix = dml_kv_select(p, dml_kv_fn(p, DML_KF_EQ, x0, x0), at_idx,
                                           dml_kv_zero(p, DML_KT_I64));
      dml_kblock_t tail = {0};
      uint32_t nr = K->n_regs;
      dml_kblock_add(&tail, assign(s, DML_KS_LET, acc + 12, ix));
      dml_ksched_emit_chain(s, K, G, &tail, dml_kv_reg_t(p, acc + 12, DML_KT_I64), coord,
                            gid);
      dml_kblock_add(
          &body, if_lt(s, dml_ki_var(p, DML_KVAR_LID_X), dml_ki_const(p, 1), tail.first));
      K->body = dml_krow_finish(s, numel, r + 1, body.first);
      K->n_regs = nr > acc + 13 ? nr : acc + 13;
    } else {
      dml_kblock_add(&body, assign(s, DML_KS_LET, acc + 1, x0));
      dml_kblock_add(&body, for_loop(s, r, R, loop.first));
      dml_ksched_emit_chain(s, K, G, &body, dml_kv_reg_t(p, acc, DML_KT_I64), coord, gid);
      K->body = if_lt(s, gid, dml_ki_lin(p, numel), body.first);
      K->n_regs = acc + 3;
    }
    dml_klin_t xl;
    if (type_numel(&x->type, &xl)) {
      lin_add(&K->flops, xl, 1);
      lin_add(&K->bytes, xl, (int64_t)dml_dtype_size(x->type.dtype));
    }
    return;
  }
  int is_max = n->op == DML_OP_REDUCE_MAX || n->op == DML_OP_GLOBAL_MAX_POOL,
      is_min = n->op == DML_OP_REDUCE_MIN;
  int is_mean = n->op == DML_OP_REDUCE_MEAN || n->op == DML_OP_GLOBAL_AVERAGE_POOL;
  int is_prod = n->op == DML_OP_REDUCE_PROD, is_lse = n->op == DML_OP_REDUCE_LOG_SUM_EXP;
  int is_l2 = n->op == DML_OP_REDUCE_L2;
  const dml_kval_t *init = dml_kdtype_is_float(t) ? dml_kv_fconst(p, t,
                                                                  is_max    ? -INFINITY
                                                                  : is_min  ? INFINITY
                                                                  : is_prod ? 1.0f
                                                                            : 0.0f)
                                                  : dml_kv_iconst(p, t,
                                                                  is_max    ? lo
                                                                  : is_min  ? hi
                                                                  : is_prod ? 1
                                                                            : 0);
  const dml_kval_t *xv = red_load(s, x, xi);
  /* the max of LogSumExp: register acc + 1, or acc + 4 in the cooperative
   * form (whose sums use acc .. acc + 3) */
  uint32_t mreg = coop ? acc + 4 : acc + 1;
  /* ReduceL2 as s * sqrt(sum((x / s)^2)), s = max |x| (1 where that is 0,
   * infinite or NaN; register acc + 5): squares of |x| > 1.8e19 overflow
   * f32 (and of |x| < 1e-23 underflow) where the norm does not */
  const dml_kval_t *l2s = NULL;
  if (is_l2) {
    const dml_kval_t *m = dml_kv_reg_t(p, mreg, t);
    l2s = dml_kv_select(
        p,
        dml_kv_fn(p, DML_KF_AND, dml_kv_fn(p, DML_KF_GT, m, dml_kv_zero(p, t)),
                  dml_kv_fn(p, DML_KF_LT, m, dml_kv_fconst(p, t, INFINITY))),
        m, dml_kv_one(p, t));
  }
  uint32_t sreg = coop ? acc + 5 : acc + 2;
  if (coop) {
    red_row_t rc = {x, red, gid, n->op, 0, mreg, sreg, t};
    if (is_lse || is_l2) {
      rc.mode = is_l2 ? 7 : 0;
      if (t == DML_KT_F32)
        dml_krow_reduce(s, &body, R, r, DML_KF_MAX, -INFINITY, red_row_value, &rc, mreg,
                        0);
      else
        dml_krow_reduce_t(s, K, &body, R, r, DML_KF_MAX, dml_kv_fconst(p, t, -INFINITY),
                          red_row_value, &rc, mreg, vtile);
      rc.mode = is_l2 ? 8 : 1;
      if (is_l2) dml_kblock_add(&body, assign(s, DML_KS_LET, sreg, l2s));
    }
    dml_kfn_t comb = is_max    ? DML_KF_MAX
                     : is_min  ? DML_KF_MIN
                     : is_prod ? DML_KF_MUL
                               : DML_KF_ADD;
    if (t == DML_KT_F32 && is_prod)
      /* compensated: a plain f32 product drifts by sqrt(length) ulp */
      dml_krow_prod_comp(s, K, &body, R, r, red_row_value, &rc, acc, 1);
    else if (t == DML_KT_F32)
      dml_krow_reduce(s, &body, R, r, comb,
                      is_max    ? -INFINITY
                      : is_min  ? INFINITY
                      : is_prod ? 1.0f
                                : 0.0f,
                      red_row_value, &rc, acc, 0);
    else
      dml_krow_reduce_t(s, K, &body, R, r, comb, init, red_row_value, &rc, acc, vtile);
  }
  /* f32 and f64 only (the scheduler's switch): L1, L2, SumSquare,
   * LogSum and LogSumExp, the last as log(sum(exp(x - m))) + m with m the
   * max (register acc + 1) */
  if (coop) {
    /* done above: red_row_value applies the functions */
  } else if (is_lse) {
    dml_kblock_add(&body, assign(s, DML_KS_LET, acc + 1, dml_kv_fconst(p, t, -INFINITY)));
    dml_kblock_add(&body,
                   for_loop(s, r, R,
                            assign(s, DML_KS_SET, acc + 1,
                                   nan_max(p, dml_kv_reg_t(p, acc + 1, t), xv, 1))));
    xv = dml_kv_fn(p, DML_KF_EXP,
                   dml_kv_fn(p, DML_KF_SUB, xv, dml_kv_reg_t(p, acc + 1, t)), NULL);
  } else if (n->op == DML_OP_REDUCE_L1) {
    xv = dml_kv_fn(p, DML_KF_ABS, xv, NULL);
  } else if (is_l2) {
    dml_kblock_add(&body, assign(s, DML_KS_LET, acc + 1, dml_kv_fconst(p, t, -INFINITY)));
    dml_kblock_add(&body,
                   for_loop(s, r, R,
                            assign(s, DML_KS_SET, acc + 1,
                                   nan_max(p, dml_kv_reg_t(p, acc + 1, t),
                                           dml_kv_fn(p, DML_KF_ABS, xv, NULL), 1))));
    dml_kblock_add(&body, assign(s, DML_KS_LET, sreg, l2s));
    const dml_kval_t *q = dml_kv_fn(p, DML_KF_DIV, xv, dml_kv_reg_t(p, sreg, t));
    xv = dml_kv_fn(p, DML_KF_MUL, q, q);
  } else if (n->op == DML_OP_REDUCE_SUM_SQUARE) {
    xv = dml_kv_fn(p, DML_KF_MUL, xv, xv);
  }
  if (!coop) {
    dml_kblock_add(&body, assign(s, DML_KS_LET, acc, init));
    /* float max/min keep NaN as the CPU does */
    const dml_kval_t *a = dml_kv_reg_t(p, acc, t);
    dml_kblock_add(
        &body,
        for_loop(s, r, R,
                 assign(s, DML_KS_SET, acc,
                        is_max || is_min
                            ? nan_max(p, a, xv, is_max)
                            : dml_kv_fn(p, is_prod ? DML_KF_MUL : DML_KF_ADD, a, xv))));
  }
  const dml_kval_t *res = dml_kv_reg_t(p, acc, t);
  if (is_l2)
    res = dml_kv_fn(p, DML_KF_MUL, dml_kv_reg_t(p, sreg, t),
                    dml_kv_fn(p, DML_KF_SQRT, res, NULL));
  if (n->op == DML_OP_REDUCE_LOG_SUM) res = dml_kv_fn(p, DML_KF_LOG, res, NULL);
  if (is_lse) {
    /* an infinite max is the result (the CPU's rule: exp(inf - inf) is
     * NaN), a NaN max gives NaN */
    const dml_kval_t *m = dml_kv_reg_t(p, mreg, t);
    res = dml_kv_select(
        p,
        dml_kv_fn(p, DML_KF_OR, dml_kv_fn(p, DML_KF_EQ, m, dml_kv_fconst(p, t, INFINITY)),
                  dml_kv_fn(p, DML_KF_EQ, m, dml_kv_fconst(p, t, -INFINITY))),
        m, dml_kv_fn(p, DML_KF_ADD, dml_kv_fn(p, DML_KF_LOG, res, NULL), m));
  }
  if (is_mean) {
    /* divide by the reduced count (an index expression: convert via a
     * constant when static) */
    int64_t cnt = 1;
    int sym = 0;
    for (int32_t d = 0; d < x->type.rank; d++)
      if (red[d]) {
        cnt *= x->type.dims[d].value;
        sym |= x->type.dims[d].sym >= 0 || red[d] < 0;
      }
    /* over a symbolic dim, the count is the run-time index expression R */
    res = dml_kv_fn(p, DML_KF_DIV, dml_kv_reg_t(p, acc, t),
                    sym ? dml_kv_idx(p, t, R) : dml_kv_fconst(p, t, (float)cnt));
  }
  if (t != kdt(x)) res = dml_kv_cast(p, kdt(x), res); /* f16/bf16: rounded once */
  if (coop) {
    /* invocation 0 of the workgroup runs the epilogue */
    dml_kblock_t tail = {0};
    uint32_t nr = K->n_regs;
    dml_ksched_emit_chain(s, K, G, &tail, res, coord, gid);
    dml_kblock_add(
        &body, if_lt(s, dml_ki_var(p, DML_KVAR_LID_X), dml_ki_const(p, 1), tail.first));
    K->body = dml_krow_finish(s, numel, r + 1, body.first);
    uint32_t used = acc + (is_prod ? 12 : 8);
    K->n_regs = nr > used ? nr : used;
  } else {
    dml_ksched_emit_chain(s, K, G, &body, res, coord, gid);
    K->body = if_lt(s, gid, dml_ki_lin(p, numel), body.first);
    K->n_regs = acc + (is_l2 ? 3 : is_lse ? 2 : 1);
  }
  dml_klin_t xl;
  if (type_numel(&x->type, &xl)) {
    lin_add(&K->flops, xl, 1);
    lin_add(&K->bytes, xl, (int64_t)dml_dtype_size(x->type.dtype));
  }
}

/* ---- softmax ---- */

/* A cooperative Softmax/LogSoftmax row (schedule_rows.c): element j at
 * base + j * inner of x and y; m (the max) in register 4, the sum in 0. */
typedef struct {
  const dml_pkg_value_t *x, *y;
  const dml_kidx_t *base, *inner;
  int shifted, log;
} sm_row_t;

static const dml_kidx_t *sm_elem(sched_t *s, const sm_row_t *c, const dml_kidx_t *j) {
  return dml_ki_bin(s->pool, DML_KI_ADD, c->base,
                    dml_ki_bin(s->pool, DML_KI_MUL, j, c->inner));
}

static const dml_kval_t *sm_row_value(sched_t *s, const dml_kidx_t *j, void *vctx) {
  const sm_row_t *c = vctx;
  dml_kpool_t *p = s->pool;
  const dml_kval_t *xv = dml_kv_load(p, buf_of(c->x), at(s, c->x, sm_elem(s, c, j)));
  if (!c->shifted) return xv;
  return dml_kv_fn(p, DML_KF_EXP, dml_kv_fn(p, DML_KF_SUB, xv, dml_kv_reg(p, 4)), NULL);
}

static dml_kstmt_t *sm_row_store(sched_t *s, const dml_kidx_t *j, void *vctx) {
  const sm_row_t *c = vctx;
  dml_kpool_t *p = s->pool;
  const dml_kidx_t *e = sm_elem(s, c, j);
  const dml_kval_t *d = dml_kv_fn(
      p, DML_KF_SUB, dml_kv_load(p, buf_of(c->x), at(s, c->x, e)), dml_kv_reg(p, 4));
  /* LogSoftmax: x - m - log(sum); Softmax: exp(x - m) * (1 / sum) */
  const dml_kval_t *out =
      c->log
          ? dml_kv_fn(p, DML_KF_SUB, d, dml_kv_reg(p, 8))
          : dml_kv_fn(p, DML_KF_MUL, dml_kv_fn(p, DML_KF_EXP, d, NULL), dml_kv_reg(p, 8));
  dml_kstmt_t *st = dml_ks_new(p, DML_KS_STORE);
  if (st) {
    st->buf = DML_KBUF_ARENA;
    st->idx = at(s, c->y, e);
    st->val = out;
  }
  return st;
}

void dml_ksched_emit_softmax(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *y = val(s, n->outputs[0]);
  int32_t rank = x->type.rank;
  int64_t axis = dml_attr_int(n->attrs, n->n_attrs, "axis", -1);
  if (axis < 0) axis += rank;
  if (rank == 0 || axis < 0 || axis >= rank) {
    unsupported(s, node, "axis out of range", NULL);
    return;
  }
  /* L: the row's length, static or symbolic (attention's scores over a
   * sequence: the run-time value; the form is chosen at the bound) */
  dml_dim_t Ld = x->type.dims[axis];
  int64_t L = Ld.value, inner = 1;
  if (Ld.sym >= 0) L = dml_ksched_lin_max(s, (dml_klin_t){Ld.value, Ld.sym, 0, 0});
  for (int32_t d = (int32_t)axis + 1; d < rank; d++) {
    if (x->type.dims[d].sym >= 0) {
      unsupported(s, node, "symbolic dim after the axis", NULL);
      return;
    }
    inner *= x->type.dims[d].value;
  }
  dml_klin_t numel;
  type_numel(&x->type, &numel);
  dml_klin_t rows = dml_ksched_lin_div_dim(numel, Ld);
  dml_kernel_t *K = new_kernel(s, DML_KK_SOFTMAX);
  if (!K) return;
  group_t G = {.anchor = ANCHOR_NONE, .n = 1, .nodes = {node}};
  set_nodes(s, K, &G);
  if (dml_krow_wanted(s, L)) {
    /* a workgroup per row: the max, the sum of exp(x - max), the outputs */
    int32_t j = DML_KVAR_FIRST_LOOP;
    const dml_kidx_t *row = dml_krow_setup(s, K, rows, j + 1, 0);
    const dml_kidx_t *in = dml_ki_const(p, inner), *Lx = dim_idx(s, Ld);
    sm_row_t c = {x,
                  y,
                  dml_ki_bin(p, DML_KI_ADD,
                             dml_ki_bin(p, DML_KI_MUL, dml_ki_bin(p, DML_KI_DIV, row, in),
                                        dml_ki_bin(p, DML_KI_MUL, Lx, in)),
                             dml_ki_bin(p, DML_KI_MOD, row, in)),
                  in,
                  0,
                  n->op == DML_OP_LOG_SOFTMAX};
    if (inner == 1) c.base = dml_ki_bin(p, DML_KI_MUL, row, Lx);
    dml_kblock_t body = {0};
    dml_krow_reduce(s, &body, Lx, j, DML_KF_MAX, -INFINITY, sm_row_value, &c, 4, 0);
    c.shifted = 1;
    dml_krow_reduce(s, &body, Lx, j, DML_KF_ADD, 0.0f, sm_row_value, &c, 0, 0);
    dml_kblock_add(&body, assign(s, DML_KS_LET, 8,
                                 dml_kv_fn(p, c.log ? DML_KF_LOG : DML_KF_RECIP,
                                           dml_kv_reg(p, 0), NULL)));
    dml_kblock_add(&body, dml_krow_each(s, Lx, j, sm_row_store, &c));
    K->body = dml_krow_finish(s, rows, j + 1, body.first);
    K->n_regs = 9;
    lin_add(&K->flops, numel, 5);
    lin_add(&K->bytes, numel, 8);
    return;
  }
  K->local[0] = 64;
  K->items[0] = rows;
  K->n_regs = 3;
  const dml_kidx_t *gid = dml_ki_var(p, DML_KVAR_GID_X);
  const dml_kidx_t *in = dml_ki_const(p, inner);
  /* base = (gid / inner) * L * inner + gid % inner; element j at base + j*inner */
  const dml_kidx_t *Lx = dim_idx(s, Ld);
  const dml_kidx_t *base =
      dml_ki_bin(p, DML_KI_ADD,
                 dml_ki_bin(p, DML_KI_MUL, dml_ki_bin(p, DML_KI_DIV, gid, in),
                            dml_ki_bin(p, DML_KI_MUL, Lx, in)),
                 dml_ki_bin(p, DML_KI_MOD, gid, in));
  int32_t j = DML_KVAR_FIRST_LOOP;
  const dml_kidx_t *e =
      dml_ki_bin(p, DML_KI_ADD, base, dml_ki_bin(p, DML_KI_MUL, dml_ki_var(p, j), in));
  const dml_kval_t *xv = dml_kv_load(p, buf_of(x), at(s, x, e));
  const dml_kval_t *m = dml_kv_reg(p, 0), *sum = dml_kv_reg(p, 1);
  const dml_kval_t *d = dml_kv_fn(p, DML_KF_SUB, xv, m);
  dml_kblock_t body = {0};
  dml_kblock_add(&body, assign(s, DML_KS_LET, 0, dml_kv_const(p, -INFINITY)));
  dml_kblock_add(
      &body,
      for_loop(s, j, Lx, assign(s, DML_KS_SET, 0, dml_kv_fn(p, DML_KF_MAX, m, xv))));
  dml_kblock_add(&body, assign(s, DML_KS_LET, 1, dml_kv_const(p, 0.0f)));
  dml_kblock_add(
      &body,
      for_loop(s, j, Lx,
               assign(s, DML_KS_SET, 1,
                      dml_kv_fn(p, DML_KF_ADD, sum, dml_kv_fn(p, DML_KF_EXP, d, NULL)))));
  const dml_kval_t *out;
  if (n->op == DML_OP_LOG_SOFTMAX) {
    dml_kblock_add(&body, assign(s, DML_KS_LET, 2, dml_kv_fn(p, DML_KF_LOG, sum, NULL)));
    out = dml_kv_fn(p, DML_KF_SUB, d, dml_kv_reg(p, 2));
  } else {
    dml_kblock_add(&body,
                   assign(s, DML_KS_LET, 2, dml_kv_fn(p, DML_KF_RECIP, sum, NULL)));
    out = dml_kv_fn(p, DML_KF_MUL, dml_kv_fn(p, DML_KF_EXP, d, NULL), dml_kv_reg(p, 2));
  }
  dml_kstmt_t *st = dml_ks_new(p, DML_KS_STORE);
  if (st) {
    st->buf = DML_KBUF_ARENA;
    st->idx = at(s, y, e);
    st->val = out;
  }
  dml_kblock_add(&body, for_loop(s, j, Lx, st));
  K->body = if_lt(s, gid, dml_ki_lin(p, rows), body.first);
  lin_add(&K->flops, numel, 5);
  lin_add(&K->bytes, numel, 8);
}

/* ---- Hardmax and inference Dropout ---- */

/* bool: x is Hardmax's max m (kept NaN: any NaN x when m is NaN) */
static const dml_kval_t *hm_hit(dml_kpool_t *p, const dml_kval_t *x,
                                const dml_kval_t *m) {
  return dml_kv_fn(p, DML_KF_OR, dml_kv_fn(p, DML_KF_EQ, x, m),
                   dml_kv_fn(p, DML_KF_NOT,
                             dml_kv_fn(p, DML_KF_OR, dml_kv_fn(p, DML_KF_EQ, x, x),
                                       dml_kv_fn(p, DML_KF_EQ, m, m)),
                             NULL));
}

/* Hardmax's cooperative row (sm_row_t, the max in register 4): element j
 * as an f32 index where it is the row's max (any NaN where the max is
 * NaN), else 2^24; the first such index is the min (register 0). */
static const dml_kval_t *hm_row_index(sched_t *s, const dml_kidx_t *j, void *vctx) {
  const sm_row_t *c = vctx;
  dml_kpool_t *p = s->pool;
  const dml_kval_t *xv = dml_kv_load(p, buf_of(c->x), at(s, c->x, sm_elem(s, c, j)));
  return dml_kv_select(p, hm_hit(p, xv, dml_kv_reg(p, 4)), dml_kv_idx(p, DML_KT_F32, j),
                       dml_kv_const(p, 16777216.0f));
}

/* y_j = (j == the first index of the max, register 0) */
static dml_kstmt_t *hm_row_store(sched_t *s, const dml_kidx_t *j, void *vctx) {
  const sm_row_t *c = vctx;
  dml_kpool_t *p = s->pool;
  return store_at(
      s, c->y, sm_elem(s, c, j),
      dml_kv_select(
          p, dml_kv_fn(p, DML_KF_EQ, dml_kv_idx(p, DML_KT_F32, j), dml_kv_reg(p, 0)),
          dml_kv_const(p, 1.0f), dml_kv_const(p, 0.0f)));
}

/* Hardmax along one static axis (ONNX Hardmax-13; older opsets arrive
 * coerced to 2-D): one invocation per row finds the max, then the first
 * index holding it (a float index counted in a register, exact below 2^24),
 * then writes 1 there and 0 elsewhere. */
void dml_ksched_emit_hardmax(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *y = val(s, n->outputs[0]);
  int32_t rank = x->type.rank;
  int64_t axis = norm_axis(dml_attr_int(n->attrs, n->n_attrs, "axis", -1), rank);
  const char *why = NULL;
  if (rank == 0 || axis < 0 || axis >= rank) why = "axis out of range";
  int64_t L = why ? 1 : x->type.dims[axis].value, inner = 1;
  if (!why && x->type.dims[axis].sym >= 0) why = "hardmax along a symbolic dim";
  for (int32_t d = (int32_t)axis + 1; !why && d < rank; d++) {
    if (x->type.dims[d].sym >= 0) why = "symbolic dim after the axis";
    inner *= x->type.dims[d].value;
  }
  if (!why && L >= (1 << 24)) why = "axis longer than 2^24";
  if (why) {
    unsupported(s, node, "%s", why);
    return;
  }
  dml_klin_t numel, rows;
  type_numel(&x->type, &numel);
  rows = numel;
  rows.c /= L ? L : 1;
  rows.c0 /= L ? L : 1;
  dml_kernel_t *K = new_kernel(s, DML_KK_SOFTMAX);
  if (!K) return;
  group_t G = {.anchor = ANCHOR_NONE, .n = 1, .nodes = {node}};
  set_nodes(s, K, &G);
  if (dml_krow_wanted(s, L)) {
    /* a workgroup per row (schedule_rows.c): the max keeping NaN, the
     * first index holding it (the first NaN, as on the CPU), the row */
    int32_t j = DML_KVAR_FIRST_LOOP;
    const dml_kidx_t *row = dml_krow_setup(s, K, rows, j + 1, 0);
    const dml_kidx_t *in = dml_ki_const(p, inner), *Lx = dml_ki_const(p, L);
    sm_row_t c = {x,
                  y,
                  inner == 1 ? dml_ki_bin(p, DML_KI_MUL, row, Lx)
                             : dml_ki_bin(p, DML_KI_ADD,
                                          dml_ki_bin(p, DML_KI_MUL,
                                                     dml_ki_bin(p, DML_KI_DIV, row, in),
                                                     dml_ki_const(p, L * inner)),
                                          dml_ki_bin(p, DML_KI_MOD, row, in)),
                  in,
                  0,
                  0};
    dml_kblock_t body = {0};
    dml_krow_reduce(s, &body, Lx, j, DML_KF_MAX, -INFINITY, sm_row_value, &c, 4, 0);
    dml_krow_reduce(s, &body, Lx, j, DML_KF_MIN, 16777216.0f, hm_row_index, &c, 0, 0);
    dml_kblock_add(&body, dml_krow_each(s, Lx, j, hm_row_store, &c));
    K->body = dml_krow_finish(s, rows, j + 1, body.first);
    K->n_regs = 8;
    lin_add(&K->flops, numel, 4);
    lin_add(&K->bytes, numel, 8);
    return;
  }
  K->local[0] = 64;
  K->items[0] = rows;
  K->n_regs = 3;
  const dml_kidx_t *gid = dml_ki_var(p, DML_KVAR_GID_X), *in = dml_ki_const(p, inner);
  const dml_kidx_t *base =
      dml_ki_bin(p, DML_KI_ADD,
                 dml_ki_bin(p, DML_KI_MUL, dml_ki_bin(p, DML_KI_DIV, gid, in),
                            dml_ki_const(p, L * inner)),
                 dml_ki_bin(p, DML_KI_MOD, gid, in));
  int32_t j = DML_KVAR_FIRST_LOOP;
  const dml_kidx_t *e =
      dml_ki_bin(p, DML_KI_ADD, base, dml_ki_bin(p, DML_KI_MUL, dml_ki_var(p, j), in));
  const dml_kidx_t *Lx = dml_ki_const(p, L);
  const dml_kval_t *xv = dml_kv_load(p, buf_of(x), at(s, x, e));
  const dml_kval_t *m = dml_kv_reg(p, 0), *idx = dml_kv_reg(p, 1), *jf = dml_kv_reg(p, 2);
  const dml_kval_t *one = dml_kv_const(p, 1.0f);
  dml_kblock_t body = {0};
  dml_kblock_add(&body, assign(s, DML_KS_LET, 0, dml_kv_const(p, -INFINITY)));
  dml_kblock_add(&body,
                 for_loop(s, j, Lx, assign(s, DML_KS_SET, 0, nan_max(p, m, xv, 1))));
  /* idx = min over j of (x_j is m ? j : L); a NaN max: the first NaN, as
   * on the CPU */
  dml_kblock_add(&body, assign(s, DML_KS_LET, 1, dml_kv_const(p, (float)L)));
  dml_kblock_add(&body, assign(s, DML_KS_LET, 2, dml_kv_const(p, 0.0f)));
  dml_kstmt_t *find = assign(
      s, DML_KS_SET, 1,
      dml_kv_fn(p, DML_KF_MIN, idx,
                dml_kv_select(p, hm_hit(p, xv, m), jf, dml_kv_const(p, (float)L))));
  dml_kstmt_t *inc = assign(s, DML_KS_SET, 2, dml_kv_fn(p, DML_KF_ADD, jf, one));
  if (find) find->next = inc;
  dml_kblock_add(&body, for_loop(s, j, Lx, find));
  dml_kblock_add(&body, assign(s, DML_KS_SET, 2, dml_kv_const(p, 0.0f)));
  /* y_j = 1 - step(|j - idx|) */
  dml_kstmt_t *st = store_at(
      s, y, e,
      dml_kv_fn(p, DML_KF_SUB, one,
                dml_kv_step(p, dml_kv_fn(p, DML_KF_ABS, dml_kv_fn(p, DML_KF_SUB, jf, idx),
                                         NULL))));
  dml_kstmt_t *inc2 = assign(s, DML_KS_SET, 2, dml_kv_fn(p, DML_KF_ADD, jf, one));
  if (st) st->next = inc2;
  dml_kblock_add(&body, for_loop(s, j, Lx, st));
  K->body = if_lt(s, gid, dml_ki_lin(p, rows), body.first);
  lin_add(&K->flops, numel, 4);
  lin_add(&K->bytes, numel, 8);
}

/* ---- NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss ---- */

/* The losses of runtime/cpu/cpu_loss.c (ONNX opset 13): input/scores
 * [N, C, d...] f32, target [N, d...] i64/i32, weight [C] optional. Per row
 * (n, d): SoftmaxCrossEntropyLoss takes log_softmax over C first (max,
 * sum of exp, log; log_prob stored when asked for); the row's loss is
 * -logp[n, t, d] * w with w = weight[t] (1 without weight) and 0 where
 * t == ignore_index. Reduction "none": one invocation per row stores it;
 * "sum" and "mean" (sum / sum of w): one workgroup, invocation t looping
 * over rows t, t + 256, ..., the partial sums added in a tree.
 * A target outside [0, C) (an error on the CPU) contributes nothing. */
/* log_prob of score v of a row whose max is in register 0 and log of the
 * sum of exp(x - max) in register 2 */
static const dml_kval_t *sce_logp(dml_kpool_t *p, const dml_kval_t *v) {
  return dml_kv_fn(p, DML_KF_SUB, dml_kv_fn(p, DML_KF_SUB, v, dml_kv_reg(p, 0)),
                   dml_kv_reg(p, 2));
}

/* Element j of the workgroup's "row" of partial sums (dml_krow_reduce over
 * 256 elements: element j is invocation j's own): register *ctx. */
static const dml_kval_t *loss_part(sched_t *s, const dml_kidx_t *j, void *ctx) {
  (void)j;
  return dml_kv_reg(s->pool, *(const uint32_t *)ctx);
}

/* One row of sce_long: x's element (n, k, d) is (nb + k) * D + rd. */
typedef struct {
  const dml_pkg_value_t *x, *lp;
  const dml_kidx_t *nb, *rd, *Dx;
} sce_row_t;

static const dml_kidx_t *sce_at(sched_t *s, const sce_row_t *r, const dml_kidx_t *k) {
  return dml_ki_bin(
      s->pool, DML_KI_ADD,
      dml_ki_bin(s->pool, DML_KI_MUL, dml_ki_bin(s->pool, DML_KI_ADD, r->nb, k), r->Dx),
      r->rd);
}

/* x at class j (dml_krow_value_fn) */
static const dml_kval_t *sce_x(sched_t *s, const dml_kidx_t *j, void *ctx) {
  const sce_row_t *r = ctx;
  return load_at(s, r->x, sce_at(s, r, j));
}

/* exp(x_j - max), the max in register 0 */
static const dml_kval_t *sce_e(sched_t *s, const dml_kidx_t *j, void *ctx) {
  dml_kpool_t *p = s->pool;
  return dml_kv_fn(p, DML_KF_EXP,
                   dml_kv_fn(p, DML_KF_SUB, sce_x(s, j, ctx), dml_kv_reg(p, 0)), NULL);
}

/* log_prob's element j (dml_krow_stmt_fn) */
static dml_kstmt_t *sce_store(sched_t *s, const dml_kidx_t *j, void *ctx) {
  const sce_row_t *r = ctx;
  return store_at(s, r->lp, sce_at(s, r, j), sce_logp(s->pool, sce_x(s, j, ctx)));
}

/* SoftmaxCrossEntropyLoss over rows of many classes (the serial form's
 * loops would run past DML_KLOOP_MAX): a workgroup per row for "none",
 * one workgroup taking the rows in turn for "sum" and "mean"; per row the
 * max and the sum of exp (dml_krow_reduce, into registers 0 and 1, 2 the
 * log of the sum), log_prob stored by the workgroup, and invocation 0
 * storing the row's loss or adding it (and its weight) to registers 3 and
 * 4. The formulas are dml_ksched_emit_loss's. */
static void sce_long(sched_t *s, dml_kernel_t *K, const dml_pkg_value_t *x,
                     const dml_pkg_value_t *tg, const dml_pkg_value_t *wt,
                     const dml_pkg_value_t *y, const dml_pkg_value_t *lp, dml_klin_t rows,
                     int64_t C, int64_t D, int mode, int has_ii, int64_t ii) {
  dml_kpool_t *p = s->pool;
  const int32_t vk = DML_KVAR_FIRST_LOOP, vr = vk + 1;
  const dml_kidx_t *lid = dml_ki_var(p, DML_KVAR_LID_X), *Cx = dml_ki_const(p, C),
                   *Dx = dml_ki_const(p, D);
  const dml_kidx_t *row;
  if (mode == 0) {
    row = dml_krow_setup(s, K, rows, vr, 0);
  } else {
    dml_krow_setup(s, K, (dml_klin_t){1, -1, 0, 0}, vr + 1, 0);
    row = dml_ki_var(p, vr);
  }
  sce_row_t r = {x, lp, dml_ki_bin(p, DML_KI_MUL, dml_ki_bin(p, DML_KI_DIV, row, Dx), Cx),
                 dml_ki_bin(p, DML_KI_MOD, row, Dx), Dx};
  dml_kblock_t rb = {0};
  dml_krow_reduce(s, &rb, Cx, vk, DML_KF_MAX, -INFINITY, sce_x, &r, 5, 0);
  dml_kblock_add(&rb, assign(s, DML_KS_LET, 0, dml_kv_reg(p, 5)));
  dml_krow_reduce(s, &rb, Cx, vk, DML_KF_ADD, 0.0f, sce_e, &r, 5, 0);
  dml_kblock_add(&rb, assign(s, DML_KS_LET, 2, dml_kv_log(p, dml_kv_reg(p, 5))));
  if (lp) dml_kblock_add(&rb, dml_krow_each(s, Cx, vk, sce_store, &r));
  dml_kdtype_t tt = kdt(tg);
  const dml_kval_t *t = load_at(s, tg, row);
  const dml_kval_t *ign = has_ii ? dml_kv_fn(p, DML_KF_EQ, t, dml_kv_iconst(p, tt, ii))
                                 : dml_kv_zero(p, DML_KT_BOOL);
  const dml_kidx_t *ti = dml_ki_val(p, dml_kv_select(p, ign, dml_kv_iconst(p, tt, C), t));
  const dml_kval_t *w = wt ? load_at(s, wt, ti) : dml_kv_const(p, 1.0f);
  const dml_kval_t *loss = dml_kv_fn(
      p, DML_KF_MUL, dml_kv_fn(p, DML_KF_NEG, sce_logp(p, sce_x(s, ti, &r)), NULL), w);
  dml_kblock_t hit = {0}, one = {0};
  if (mode == 0) {
    dml_kblock_add(&one, store_at(s, y, row, dml_kv_const(p, 0.0f)));
    dml_kblock_add(&hit, store_at(s, y, row, loss));
  } else {
    dml_kblock_add(
        &hit, assign(s, DML_KS_SET, 3, dml_kv_fn(p, DML_KF_ADD, dml_kv_reg(p, 3), loss)));
    dml_kblock_add(
        &hit, assign(s, DML_KS_SET, 4, dml_kv_fn(p, DML_KF_ADD, dml_kv_reg(p, 4), w)));
  }
  dml_kblock_add(&one, if_lt(s, ti, Cx, hit.first));
  dml_kblock_add(&rb, if_lt(s, lid, dml_ki_const(p, 1), one.first));
  K->n_regs = 9;
  if (mode == 0) {
    K->body = dml_krow_finish(s, rows, vr, rb.first);
    return;
  }
  dml_kblock_t body = {0};
  dml_kblock_add(&body, assign(s, DML_KS_LET, 3, dml_kv_const(p, 0.0f)));
  dml_kblock_add(&body, assign(s, DML_KS_LET, 4, dml_kv_const(p, 0.0f)));
  dml_kblock_add(&body, for_loop(s, vr, dml_ki_lin(p, rows), rb.first));
  const dml_kval_t *res = dml_kv_reg(p, 3);
  if (mode == 2) res = dml_kv_fn(p, DML_KF_DIV, res, dml_kv_reg(p, 4));
  dml_kblock_add(
      &body, if_lt(s, lid, dml_ki_const(p, 1), store_at(s, y, dml_ki_const(p, 0), res)));
  K->body = body.first;
}

void dml_ksched_emit_loss(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *tg = val(s, n->inputs[1]);
  const dml_pkg_value_t *wt =
      n->n_inputs > 2 && n->inputs[2] != DML_PKG_NO_VALUE ? val(s, n->inputs[2]) : NULL;
  const dml_pkg_value_t *y = val(s, n->outputs[0]);
  const dml_pkg_value_t *lp = n->n_outputs > 1 && n->outputs[1] != DML_PKG_NO_VALUE
                                  ? val(s, n->outputs[1])
                                  : NULL;
  int sce = n->op == DML_OP_SOFTMAX_CROSS_ENTROPY_LOSS;
  const char *red = dml_attr_string(n->attrs, n->n_attrs, "reduction", "mean");
  int mode = !strcmp(red, "none") ? 0 : !strcmp(red, "sum") ? 1 : 2;
  int has_ii = dml_attr_find(n->attrs, n->n_attrs, "ignore_index") != NULL;
  int64_t ii = dml_attr_int(n->attrs, n->n_attrs, "ignore_index", 0);
  const char *why = NULL;
  const dml_pkg_value_t *f32s[4] = {x, wt, y, lp};
  dml_klin_t l;
  if (!x || !tg || !y) why = "absent input";
  for (int i = 0; !why && i < 4; i++)
    if (f32s[i] && (f32s[i]->type.dtype != DML_DTYPE_F32 || !typed_ok(f32s[i])))
      why = "only f32 is emitted for this op";
  if (!why && (!typed_ok(tg) ||
               (tg->type.dtype != DML_DTYPE_I64 && tg->type.dtype != DML_DTYPE_I32)))
    why = "target must be i64 or i32";
  if (!why && mode == 2 && strcmp(red, "mean")) why = "unknown reduction";
  if (!why && (x->type.rank < 2 || tg->type.rank != x->type.rank - 1))
    why = "input must be [N, C, d...] and target [N, d...]";
  int64_t C = why ? 1 : x->type.dims[1].value, D = 1;
  for (int32_t d = 1; !why && d < x->type.rank; d++) {
    if (x->type.dims[d].sym >= 0) why = "symbolic class or spatial dim";
    if (d >= 2) D *= x->type.dims[d].value;
  }
  if (!why && wt && (wt->type.rank != 1 || wt->type.dims[0].value != C))
    why = "weight must be [C]";
  if (!why && !type_numel(&x->type, &l)) why = TOO_MANY_SYMS;
  const dml_pkg_value_t *ins[3] = {x, tg, wt}, *outs[2] = {y, lp};
  for (int i = 0; !why && i < 3; i++)
    for (int o = 0; o < 2; o++)
      if (ins[i] && outs[o] && overlap(ins[i], outs[o]))
        why = "its result overlaps its operands in the memory plan";
  if (why) {
    unsupported(s, node, "%s", why);
    return;
  }
  dml_klin_t rows;
  type_numel(&tg->type, &rows);
  dml_kernel_t *K = new_kernel(s, DML_KK_SOFTMAX);
  if (!K) return;
  group_t G = {.anchor = ANCHOR_NONE, .n = 1, .nodes = {node}};
  set_nodes(s, K, &G);
  /* the serial form's loop iterations per invocation at the bounds: 2 or
   * 3 loops over C per row, rows / 256 rows for sum and mean */
  int64_t per_row = sce ? (lp ? 3 : 2) * C : 0;
  if (mode != 0) per_row *= (dml_ksched_lin_max(s, rows) + DML_KROW_WG - 1) / DML_KROW_WG;
  if (per_row > DML_KLOOP_MAX) {
    sce_long(s, K, x, tg, wt, y, lp, rows, C, D, mode, has_ii, ii);
    lin_add(&K->flops, l, 5);
    lin_add(&K->bytes, l, 8);
    return;
  }
  K->local[0] = 64;
  K->items[0] = rows;
  K->n_regs = 5;
  const dml_kidx_t *gid = dml_ki_var(p, DML_KVAR_GID_X);
  int32_t vr = DML_KVAR_FIRST_LOOP, vk = vr + 1;
  const dml_kidx_t *row = gid;
  if (mode != 0) {
    /* sum and mean: one workgroup; invocation t takes rows t, t + 256, ...
     * (rows / 256 loop iterations, not rows: lavapipe stops an
     * invocation's loops after 65,535), then the partial sums meet in a
     * tree (schedule_rows.c) */
    dml_krow_setup(s, K, (dml_klin_t){1, -1, 0, 0}, vk + 1, 0);
    row = dml_ki_bin(
        p, DML_KI_ADD,
        dml_ki_bin(p, DML_KI_MUL, dml_ki_var(p, vr), dml_ki_const(p, DML_KROW_WG)),
        dml_ki_var(p, DML_KVAR_LID_X));
  }
  const dml_kidx_t *Dx = dml_ki_const(p, D), *Cx = dml_ki_const(p, C);
  /* element (n, k, d) of x: (row / D * C + k) * D + row % D */
  const dml_kidx_t *nb =
      dml_ki_bin(p, DML_KI_MUL, dml_ki_bin(p, DML_KI_DIV, row, Dx), Cx);
  const dml_kidx_t *rd = dml_ki_bin(p, DML_KI_MOD, row, Dx);
#define XAT(k)              \
  dml_ki_bin(p, DML_KI_ADD, \
             dml_ki_bin(p, DML_KI_MUL, dml_ki_bin(p, DML_KI_ADD, nb, (k)), Dx), rd)
  const dml_kidx_t *kv = dml_ki_var(p, vk);
  const dml_kval_t *xk = load_at(s, x, XAT(kv));
  dml_kblock_t rb = {0}; /* one row's statements */
  if (sce) {
    dml_kblock_add(&rb, assign(s, DML_KS_LET, 0, dml_kv_const(p, -INFINITY)));
    dml_kblock_add(&rb, for_loop(s, vk, Cx,
                                 assign(s, DML_KS_SET, 0,
                                        dml_kv_fn(p, DML_KF_MAX, dml_kv_reg(p, 0), xk))));
    dml_kblock_add(&rb, assign(s, DML_KS_LET, 1, dml_kv_const(p, 0.0f)));
    dml_kblock_add(&rb, for_loop(s, vk, Cx,
                                 assign(s, DML_KS_SET, 1,
                                        dml_kv_fn(p, DML_KF_ADD, dml_kv_reg(p, 1),
                                                  dml_kv_fn(p, DML_KF_EXP,
                                                            dml_kv_fn(p, DML_KF_SUB, xk,
                                                                      dml_kv_reg(p, 0)),
                                                            NULL)))));
    /* log_prob = (x - max) - log(sum), as the CPU's and LogSoftmax's: not
     * x - (max + log(sum)), where a large max absorbs log(sum) (scores
     * [1e15, 1e15, 0.5] gave log_prob 0, not -log 2 = -0.693) */
    dml_kblock_add(&rb, assign(s, DML_KS_LET, 2, dml_kv_log(p, dml_kv_reg(p, 1))));
    if (lp)
      dml_kblock_add(&rb, for_loop(s, vk, Cx, store_at(s, lp, XAT(kv), sce_logp(p, xk))));
  }
  dml_kdtype_t tt = kdt(tg);
  const dml_kval_t *t = load_at(s, tg, row);
  const dml_kval_t *ign = has_ii ? dml_kv_fn(p, DML_KF_EQ, t, dml_kv_iconst(p, tt, ii))
                                 : dml_kv_zero(p, DML_KT_BOOL);
  /* an ignored row takes class C, out of range: it adds nothing and stores
   * +0, as on the CPU (its -logp * 0 was NaN for an infinite or NaN score
   * and -0 otherwise) */
  const dml_kidx_t *ti = dml_ki_val(p, dml_kv_select(p, ign, dml_kv_iconst(p, tt, C), t));
  const dml_kval_t *w = wt ? load_at(s, wt, ti) : dml_kv_const(p, 1.0f);
  const dml_kval_t *logp = load_at(s, x, XAT(ti));
  if (sce) logp = sce_logp(p, logp);
  const dml_kval_t *loss =
      dml_kv_fn(p, DML_KF_MUL, dml_kv_fn(p, DML_KF_NEG, logp, NULL), w);
#undef XAT
  dml_kblock_t hit = {0};
  if (mode == 0) {
    dml_kblock_add(&rb, store_at(s, y, row, dml_kv_const(p, 0.0f)));
    dml_kblock_add(&hit, store_at(s, y, row, loss));
  } else {
    dml_kblock_add(
        &hit, assign(s, DML_KS_SET, 3, dml_kv_fn(p, DML_KF_ADD, dml_kv_reg(p, 3), loss)));
    dml_kblock_add(
        &hit, assign(s, DML_KS_SET, 4, dml_kv_fn(p, DML_KF_ADD, dml_kv_reg(p, 4), w)));
  }
  dml_kblock_add(&rb, if_lt(s, ti, Cx, hit.first));
  dml_kblock_t body = {0};
  if (mode == 0) {
    body = rb;
    K->body = if_lt(s, gid, dml_ki_lin(p, rows), body.first);
  } else {
    dml_kblock_add(&body, assign(s, DML_KS_LET, 3, dml_kv_const(p, 0.0f)));
    dml_kblock_add(&body, assign(s, DML_KS_LET, 4, dml_kv_const(p, 0.0f)));
    const dml_kidx_t *R = dml_ki_lin(p, rows), *W = dml_ki_const(p, DML_KROW_WG);
    dml_kblock_add(
        &body,
        for_loop(
            s, vr,
            dml_ki_bin(p, DML_KI_DIV,
                       dml_ki_bin(p, DML_KI_ADD, R, dml_ki_const(p, DML_KROW_WG - 1)), W),
            if_lt(s, row, R, rb.first)));
    /* the workgroup's sums of registers 3 (loss) and 4 (weight) into 5
     * and 9: a "row" of 256 elements, element t invocation t's register */
    uint32_t r3 = 3, r4 = 4;
    dml_krow_reduce(s, &body, W, vk, DML_KF_ADD, 0.0f, loss_part, &r3, 5, 0);
    dml_krow_reduce(s, &body, W, vk, DML_KF_ADD, 0.0f, loss_part, &r4, 9, 0);
    const dml_kval_t *res = dml_kv_reg(p, 5);
    if (mode == 2) res = dml_kv_fn(p, DML_KF_DIV, res, dml_kv_reg(p, 9));
    dml_kblock_add(&body, if_lt(s, dml_ki_var(p, DML_KVAR_LID_X), dml_ki_const(p, 1),
                                store_at(s, y, dml_ki_const(p, 0), res)));
    K->body = body.first;
    K->n_regs = 13;
  }
  lin_add(&K->flops, l, sce ? 5 : 1);
  lin_add(&K->bytes, l, sce ? 8 : 4);
}
