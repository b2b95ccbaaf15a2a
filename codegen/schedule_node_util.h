/* schedule_node_util.h — helpers of the scheduler's one-kernel-per-node
 * files (schedule_index.c, schedule_math.c): output lookup, static shapes,
 * flat indices, index dtypes, the value checks, the elementwise kernel
 * frame (one invocation per element), work estimates and constant scalar
 * inputs. codegen/ only. */
#ifndef DML_SCHEDULE_NODE_UTIL_H_
#define DML_SCHEDULE_NODE_UTIL_H_

#include <string.h>

#include "schedule_internal.h"
#include "schedule_ops_util.h"

#define WG 256

/* ---- helpers (the same as schedule.c's, on the public builders) ---- */

static inline const dml_pkg_value_t *output(const sched_t *s, const dml_pkg_node_t *n,
                                            uint32_t k) {
  return k < n->n_outputs ? val(s, n->outputs[k]) : NULL;
}

static inline int is_static(const dml_type_t *t) {
  for (int32_t d = 0; d < t->rank; d++)
    if (t->dims[d].sym >= 0) return 0;
  return 1;
}

static inline int64_t static_numel(const dml_type_t *t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->rank; d++) n *= t->dims[d].value;
  return n;
}

static inline int overlap(const dml_pkg_value_t *a, const dml_pkg_value_t *b) {
  if (a->storage == DML_PKG_STORAGE_CONST || b->storage == DML_PKG_STORAGE_CONST)
    return 0;
  return a->offset < b->offset + b->bytes && b->offset < a->offset + a->bytes;
}

/* Flat index of coordinates `c` in t (row-major). */
static inline const dml_kidx_t *flat_of(sched_t *s, const dml_type_t *t,
                                        const dml_kidx_t *const *c) {
  const dml_kidx_t *idx = kc(s, 0), *stride = kc(s, 1);
  for (int32_t d = t->rank - 1; d >= 0; d--) {
    idx = kadd(s, idx, kmul(s, c[d], stride));
    stride = kmul(s, stride, dim_idx(s, t->dims[d]));
  }
  return idx;
}

static inline void lin_add(dml_klin_t *acc, dml_klin_t x, int64_t mul) {
  dml_ksched_lin_add(acc, x, mul);
}

static inline int64_t norm_axis(int64_t a, int32_t rank) {
  return a < 0 ? a + rank : a;
}

/* An i64 value of index expression i. */
static inline const dml_kval_t *vi64(sched_t *s, const dml_kidx_t *i) {
  return dml_kv_idx(s->pool, DML_KT_I64, i);
}

/* Integer value v (any integer dtype) as i64, a negative one counted from
 * the end of a dim of length `len` (v + len). */
static inline const dml_kval_t *wrap_neg(sched_t *s, const dml_kval_t *v,
                                         const dml_kval_t *len) {
  dml_kpool_t *p = s->pool;
  v = dml_kv_cast(p, DML_KT_I64, v);
  return dml_kv_select(p, dml_kv_fn(p, DML_KF_LT, v, dml_kv_zero(p, DML_KT_I64)),
                       dml_kv_fn(p, DML_KF_ADD, v, len), v);
}

static inline int is_index_dtype(const dml_pkg_value_t *v) {
  return v && typed_ok(v) &&
         (v->type.dtype == DML_DTYPE_I64 || v->type.dtype == DML_DTYPE_I32);
}

/* Why node `n` cannot be a kernel of this file, or NULL: every present
 * operand held by kernels (aligned), its element count a dml_klin_t
 * (dml_ksched_numel: several symbols, one of them squared), no dim
 * computed from run-time data, and no result overlapping an operand in the
 * memory plan (an operand at the result's own offset with its element size
 * is fine when `same_elem`: the invocation reads it before storing). */
static inline const char *check_values(sched_t *s, const dml_pkg_node_t *n,
                                       int same_elem) {
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
static inline const dml_kidx_t *elem_kernel(sched_t *s, uint32_t node,
                                            dml_kernel_kind_t kind, const dml_type_t *t,
                                            dml_kernel_t **out_k,
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
static inline void elem_finish(sched_t *s, dml_kernel_t *K, const dml_type_t *t,
                               const dml_kidx_t *gid, dml_kstmt_t *body) {
  dml_klin_t numel;
  numel_syms(t, &numel);
  K->body = if_lt(s, gid, dml_ki_lin(s->pool, numel), body);
}

/* Adds `bytes_per` bytes per element of t to K's traffic and `flops_per`
 * operations per element to its work. */
static inline void account(dml_kernel_t *K, const dml_type_t *t, int64_t bytes_per,
                           int64_t flops_per) {
  dml_klin_t numel;
  if (!numel_syms(t, &numel)) return;
  lin_add(&K->bytes, numel, bytes_per);
  if (flops_per) lin_add(&K->flops, numel, flops_per);
}

/* The scalar integer input k of n (i64/i32, one element, any storage) as an
 * i64 value; `dflt` when absent. NULL with *why set when it is of another
 * form. */
static inline const dml_kval_t *int_scalar(sched_t *s, const dml_pkg_node_t *n,
                                           uint32_t k, int64_t dflt, const char **why) {
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
static inline int const_int(sched_t *s, const dml_pkg_node_t *n, uint32_t k,
                            int64_t *out) {
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

/* Strides (elements) of static type t. */
static inline void strides_of(const dml_type_t *t, int64_t *st) {
  int64_t k = 1;
  for (int32_t d = t->rank - 1; d >= 0; d--) {
    st[d] = k;
    k *= t->dims[d].value;
  }
}

/* Flat index into `in` (broadcast to `out`, numpy rules) of the output
 * element with coordinates `coord`. */
static inline const dml_kidx_t *bcast_index(sched_t *s, const dml_type_t *in,
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

#endif /* DML_SCHEDULE_NODE_UTIL_H_ */
