/* schedule_ops_util.h — small helpers shared by the scheduler's op files
 * (schedule_index.c, schedule_math.c, schedule_spatial.c, ...): value
 * lookups, index arithmetic on the scheduler's pool, typed loads/stores at
 * a value's element, guards. */
#ifndef DML_SCHEDULE_OPS_UTIL_H_
#define DML_SCHEDULE_OPS_UTIL_H_

#include "schedule_internal.h"

static inline const dml_pkg_value_t *val(const sched_t *s, uint32_t v) {
  return v == DML_PKG_NO_VALUE || v >= s->fn->n_values ? NULL : &s->fn->values[v];
}

static inline const dml_pkg_value_t *input(const sched_t *s, const dml_pkg_node_t *n,
                                           uint32_t k) {
  return k < n->n_inputs ? val(s, n->inputs[k]) : NULL;
}

static inline dml_kdtype_t kdt(const dml_pkg_value_t *v) {
  dml_kdtype_t t = DML_KT_F32;
  dml_kdtype_of(v->type.dtype, &t);
  return t;
}

/* 1 when kernels hold v's dtype and v is aligned to its element size. */
static inline int typed_ok(const dml_pkg_value_t *v) {
  dml_kdtype_t t;
  return dml_kdtype_of(v->type.dtype, &t) && v->offset % dml_kdtype_size(t) == 0;
}

/* Numel as c * sym (at most one symbolic dim); 0 when more. */
static inline int numel_of(const dml_type_t *t, dml_klin_t *out) {
  dml_klin_t l = {1, -1, 0, 0};
  for (int32_t d = 0; d < t->rank; d++) {
    l.c *= t->dims[d].value;
    if (t->dims[d].sym >= 0) {
      if (l.sym >= 0) return 0;
      l.sym = t->dims[d].sym;
    }
  }
  *out = l;
  return 1;
}

/* Numel of t as c * sym * (the symbols of `more`) (dml_klin_t; any number
 * of symbolic dims, a symbol of two dims included: dml_ksched_numel). 0
 * when dml_klin_t cannot hold it. */
static inline int numel_syms(const dml_type_t *t, dml_klin_t *out) {
  return dml_ksched_numel(t, out);
}

/* 1 when a dim of t is computed from run-time data (a node's symbol). */
static inline int data_dependent(const sched_t *s, const dml_type_t *t) {
  for (int32_t d = 0; d < t->rank; d++)
    if (t->dims[d].sym >= 0 && (uint32_t)t->dims[d].sym < s->g->n_symbols &&
        s->g->symbols[t->dims[d].sym].origin == DML_PKG_SYMBOL_NODE)
      return 1;
  return 0;
}

static inline const dml_kidx_t *dim_idx(sched_t *s, dml_dim_t d) {
  dml_klin_t l = {d.value, d.sym, 0, 0};
  return dml_ki_lin(s->pool, l);
}

static inline const dml_kidx_t *kc(sched_t *s, int64_t c) {
  return dml_ki_const(s->pool, c);
}

static inline const dml_kidx_t *kadd(sched_t *s, const dml_kidx_t *a,
                                     const dml_kidx_t *b) {
  return dml_ki_bin(s->pool, DML_KI_ADD, a, b);
}

static inline const dml_kidx_t *kmul(sched_t *s, const dml_kidx_t *a,
                                     const dml_kidx_t *b) {
  return dml_ki_bin(s->pool, DML_KI_MUL, a, b);
}

static inline dml_kbuf_t buf_of(const dml_pkg_value_t *v) {
  return v->storage == DML_PKG_STORAGE_CONST ? DML_KBUF_WEIGHTS : DML_KBUF_ARENA;
}

/* Element index of value v's flat element i (in the view of v's dtype). */
static inline const dml_kidx_t *at(sched_t *s, const dml_pkg_value_t *v,
                                   const dml_kidx_t *i) {
  return kadd(s, kc(s, (int64_t)(v->offset / dml_kdtype_size(kdt(v)))), i);
}

static inline const dml_kval_t *load_at(sched_t *s, const dml_pkg_value_t *v,
                                        const dml_kidx_t *i) {
  return dml_kv_load_t(s->pool, buf_of(v), kdt(v), at(s, v, i));
}

static inline dml_kstmt_t *store_at(sched_t *s, const dml_pkg_value_t *y,
                                    const dml_kidx_t *i, const dml_kval_t *v) {
  dml_kstmt_t *w = dml_ks_new(s->pool, DML_KS_STORE);
  if (w) {
    w->buf = DML_KBUF_ARENA;
    w->dtype = kdt(y);
    w->idx = at(s, y, i);
    w->val = v;
  }
  return w;
}

static inline dml_kstmt_t *if_lt(sched_t *s, const dml_kidx_t *lhs, const dml_kidx_t *hi,
                                 dml_kstmt_t *body) {
  dml_kstmt_t *st = dml_ks_new(s->pool, DML_KS_IF_LT);
  if (st) {
    st->lhs = lhs;
    st->hi = hi;
    st->body = body;
  }
  return st;
}

/* if (lo <= lhs < hi) body (lo NULL: 0) */
static inline dml_kstmt_t *if_in(sched_t *s, const dml_kidx_t *lhs, const dml_kidx_t *lo,
                                 const dml_kidx_t *hi, dml_kstmt_t *body) {
  dml_kstmt_t *st = if_lt(s, lhs, hi, body);
  if (st && lo && !(lo->kind == DML_KI_CONST && lo->c == 0)) st->lo = lo;
  return st;
}

static inline dml_kstmt_t *for_loop(sched_t *s, int32_t var, const dml_kidx_t *hi,
                                    dml_kstmt_t *body) {
  dml_kstmt_t *st = dml_ks_new(s->pool, DML_KS_FOR);
  if (st) {
    st->var = var;
    st->hi = hi;
    st->step = 1;
    st->body = body;
  }
  return st;
}

/* reg = v (kind LET or SET) */
static inline dml_kstmt_t *assign(sched_t *s, dml_kstmt_kind_t k, uint32_t reg,
                                  const dml_kval_t *v) {
  dml_kstmt_t *st = dml_ks_new(s->pool, k);
  if (st) {
    st->reg = reg;
    st->val = v;
  }
  return st;
}

/* Coordinates of flat element i of t (row-major). */
static inline void coords_of(sched_t *s, const dml_type_t *t, const dml_kidx_t *i,
                             const dml_kidx_t **coord) {
  const dml_kidx_t *rest = i;
  for (int32_t d = t->rank - 1; d >= 0; d--) {
    const dml_kidx_t *e = dim_idx(s, t->dims[d]);
    coord[d] = d == 0 ? rest : dml_ki_bin(s->pool, DML_KI_MOD, rest, e);
    rest = dml_ki_bin(s->pool, DML_KI_DIV, rest, e);
  }
}

#endif /* DML_SCHEDULE_OPS_UTIL_H_ */
