/*
 * schedule_dyn.c — kernels of the ops whose output extents are counted from
 * data on the device (docs/kernels.md "Data-dependent output sizes"):
 * NonZero, Compress, Unique and NonMaxSuppression, each as
 * runtime/cpu/cpu_dynamic.c computes it.
 *
 * Each is one kernel that computes its outputs, stores them in row-major
 * order for the actual extents (as the CPU's kernels do), and stores each
 * extent it decides as a u32 at word `sym` of the dims slot past the arena
 * (dml_kpkg_dims_slot_offset). The GPU backends end a segment of the plan
 * after such a kernel, read the slot back and run the later kernels with
 * those symbol values. Stores past the bytes planned for an output (below
 * its size at the bound under --dynamic-max-elements) are skipped; the
 * session then reports the CPU's OUT_OF_RANGE error.
 */
#include <string.h>

#include "dml_kpkg.h"
#include "schedule_ops_util.h"

/* Invocations of the one workgroup of NonZero and Compress. */
#define DYN_WG 256
/* Shared-tile entries a Unique may use (f32: 16 KiB per tile). */
#define UNIQUE_MAX_ITEMS 4096

int dml_ksched_dyn_handles(dml_op_t op) {
  switch (op) {
    case DML_OP_NON_ZERO:
    case DML_OP_COMPRESS: return 1;
    default: return 0;
  }
}

/* if (b) body, for a bool value b. */
static dml_kstmt_t *if_true(sched_t *s, const dml_kval_t *b, dml_kstmt_t *body) {
  return if_lt(s, kc(s, 0), dml_ki_val(s->pool, dml_kv_cast(s->pool, DML_KT_I32, b)),
               body);
}

/* x != 0 for a value of dtype t (NaN counts as non-zero, as on the CPU). */
static const dml_kval_t *nonzero(sched_t *s, const dml_kval_t *x, dml_kdtype_t t) {
  dml_kpool_t *p = s->pool;
  return dml_kv_fn(p, DML_KF_NOT, dml_kv_fn(p, DML_KF_EQ, x, dml_kv_zero(p, t)), NULL);
}

/* An i32 register value as an index. */
static const dml_kidx_t *ri(sched_t *s, uint32_t reg) {
  return dml_ki_val(s->pool, dml_kv_reg_t(s->pool, reg, DML_KT_I32));
}

static const dml_kval_t *ireg(sched_t *s, uint32_t reg) {
  return dml_kv_reg_t(s->pool, reg, DML_KT_I32);
}

static const dml_kval_t *i32c(sched_t *s, int64_t c) {
  return dml_kv_iconst(s->pool, DML_KT_I32, c);
}

/* reg += v (i32) */
static dml_kstmt_t *inc(sched_t *s, uint32_t reg, const dml_kval_t *v) {
  return assign(s, DML_KS_SET, reg, dml_kv_fn(s->pool, DML_KF_ADD, ireg(s, reg), v));
}

/* Elements of value v that its planned bytes hold. */
static int64_t cap_of(const dml_pkg_value_t *v) {
  return (int64_t)(v->bytes / dml_kdtype_size(kdt(v)));
}

/* store y[i] = v when i is inside y's planned bytes. */
static dml_kstmt_t *store_cap(sched_t *s, const dml_pkg_value_t *y, const dml_kidx_t *i,
                              const dml_kval_t *v) {
  return if_lt(s, i, kc(s, cap_of(y)), store_at(s, y, i, v));
}

/* The symbols node `node` produces, as a bit set; 0 when one is past the
 * dims slot (more than DML_KPKG_MAX_SYMBOLS symbols). */
static uint32_t node_symbols(const sched_t *s, uint32_t node, int *ok) {
  uint32_t fi = (uint32_t)(s->fn - s->g->functions), bits = 0;
  *ok = 1;
  for (uint32_t k = 0; k < s->g->n_symbols; k++) {
    const dml_pkg_symbol_t *sy = &s->g->symbols[k];
    if (sy->origin != DML_PKG_SYMBOL_NODE || sy->function != fi || sy->node != node)
      continue;
    if (k >= DML_KPKG_MAX_SYMBOLS)
      *ok = 0;
    else
      bits |= 1u << k;
  }
  return bits;
}

/* Stores the i32 count v into the dims slot's word of every symbol in
 * `bits` (docs/kernels.md "Data-dependent output sizes"). */
static void store_dims(sched_t *s, dml_kblock_t *b, uint32_t bits, const dml_kval_t *v) {
  uint64_t slot = dml_kpkg_dims_slot_offset(s->fn->arena_bytes) / 4;
  for (uint32_t k = 0; k < DML_KPKG_MAX_SYMBOLS; k++) {
    if (!(bits & (1u << k))) continue;
    dml_kstmt_t *w = dml_ks_new(s->pool, DML_KS_STORE);
    if (w) {
      w->buf = DML_KBUF_ARENA;
      w->dtype = DML_KT_U32;
      w->idx = kc(s, (int64_t)(slot + k));
      w->val = dml_kv_cast(s->pool, DML_KT_U32, v);
    }
    dml_kblock_add(b, w);
  }
}

/* The common part of NonZero and Compress: one workgroup of DYN_WG
 * invocations, invocation l taking `len` flags f(i) in its contiguous
 * share [l * chunk, (l + 1) * chunk). Counts its share's true flags into
 * tile 0, then (after a barrier) every invocation sums the tile: its
 * offset (the counts of the invocations before it, r1) and the total
 * (r2), which invocation 0 stores in the dims slot. `flag` gives f(i) for
 * an index i < len; `emit(i)` the statements for the r3-th true flag
 * (r3 counts on from r1) are added by the caller into *body_out, which is
 * run under `if f(i)` for every i of the share. Exact while len < 2^24
 * (the counts meet in an f32 tile). */
typedef const dml_kval_t *(*flag_fn)(sched_t *s, const void *ctx, const dml_kidx_t *i);

static dml_kernel_t *compaction(sched_t *s, uint32_t node, const dml_kidx_t *len,
                                dml_klin_t len_l, uint32_t bits, flag_fn flag,
                                const void *ctx, dml_kblock_t *b, const dml_kidx_t **i2) {
  dml_kpool_t *p = s->pool;
  dml_kernel_t *K = dml_ksched_kernel(s, DML_KK_MOVE, node);
  if (!K) return NULL;
  K->local[0] = DYN_WG;
  K->items[0] = (dml_klin_t){DYN_WG, -1, 0, 0};
  K->n_tiles = 1;
  K->tile_elems[0] = DYN_WG;
  K->n_regs = 6;
  const dml_kidx_t *lid = dml_ki_var(p, DML_KVAR_LID_X);
  int32_t v0 = DML_KVAR_FIRST_LOOP, v1 = v0 + 1, v2 = v0 + 2;
  const dml_kidx_t *chunk =
      dml_ki_bin(p, DML_KI_DIV, kadd(s, len, kc(s, DYN_WG - 1)), kc(s, DYN_WG));
  const dml_kidx_t *base = kmul(s, lid, chunk);
  /* the share's count */
  const dml_kidx_t *e0 = kadd(s, base, dml_ki_var(p, v0));
  dml_kblock_add(b, assign(s, DML_KS_LET, 0, i32c(s, 0)));
  dml_kblock_add(
      b, for_loop(
             s, v0, chunk,
             if_lt(s, e0, len, inc(s, 0, dml_kv_cast(p, DML_KT_I32, flag(s, ctx, e0))))));
  dml_kstmt_t *ts = dml_ks_new(p, DML_KS_TILE_STORE);
  if (ts) {
    ts->tile = 0;
    ts->idx = lid;
    ts->val = dml_kv_cast(p, DML_KT_F32, ireg(s, 0));
  }
  dml_kblock_add(b, ts);
  dml_kblock_add(b, dml_ks_new(p, DML_KS_BARRIER));
  /* offset and total */
  dml_kblock_t sum = {0};
  dml_kblock_add(b, assign(s, DML_KS_LET, 1, i32c(s, 0)));
  dml_kblock_add(b, assign(s, DML_KS_LET, 2, i32c(s, 0)));
  dml_kblock_add(
      &sum, assign(s, DML_KS_LET, 4,
                   dml_kv_cast(p, DML_KT_I32, dml_kv_tile(p, 0, dml_ki_var(p, v1)))));
  dml_kblock_add(&sum, inc(s, 2, ireg(s, 4)));
  dml_kblock_add(
      &sum, inc(s, 1,
                dml_kv_select(
                    p,
                    dml_kv_fn(p, DML_KF_LT, dml_kv_idx(p, DML_KT_I32, dml_ki_var(p, v1)),
                              dml_kv_idx(p, DML_KT_I32, lid)),
                    ireg(s, 4), i32c(s, 0))));
  dml_kblock_add(b, for_loop(s, v1, kc(s, DYN_WG), sum.first));
  dml_kblock_t st0 = {0};
  store_dims(s, &st0, bits, ireg(s, 2));
  dml_kblock_add(b, if_lt(s, lid, kc(s, 1), st0.first));
  dml_kblock_add(b, assign(s, DML_KS_LET, 3, ireg(s, 1)));
  K->flops = len_l;
  K->bytes = len_l;
  *i2 = kadd(s, base, dml_ki_var(p, v2));
  return K;
}

/* Closes compaction(): the loop over the share running `body` (which ends
 * by counting r3 on) for each true flag. */
static void compaction_end(sched_t *s, dml_kernel_t *K, dml_kblock_t *b,
                           const dml_kidx_t *len, const dml_kidx_t *i2, flag_fn flag,
                           const void *ctx, dml_kblock_t *body) {
  dml_kpool_t *p = s->pool;
  int32_t v2 = DML_KVAR_FIRST_LOOP + 2;
  const dml_kidx_t *chunk =
      dml_ki_bin(p, DML_KI_DIV, kadd(s, len, kc(s, DYN_WG - 1)), kc(s, DYN_WG));
  dml_kblock_add(body, inc(s, 3, i32c(s, 1)));
  dml_kblock_add(b,
                 for_loop(s, v2, chunk,
                          if_lt(s, i2, len, if_true(s, flag(s, ctx, i2), body->first))));
  K->body = b->first;
}

/* ---- NonZero ---- */

static const dml_kval_t *nz_flag(sched_t *s, const void *ctx, const dml_kidx_t *i) {
  const dml_pkg_value_t *x = (const dml_pkg_value_t *)ctx;
  return nonzero(s, load_at(s, x, i), kdt(x));
}

/* NonZero: y [rank, nnz] i64 (rank 1 for a 0-D x), the coordinates of the
 * non-zero elements in row-major order: y[d * nnz + k] for the k-th. */
static void emit_nonzero(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0);
  const dml_pkg_value_t *y = n->n_outputs ? val(s, n->outputs[0]) : NULL;
  dml_klin_t l = {0, -1, 0, 0};
  int ok = 0;
  uint32_t bits = node_symbols(s, node, &ok);
  const char *why = NULL;
  if (!x || !y || !typed_ok(x) || y->type.dtype != DML_DTYPE_I64 || !typed_ok(y))
    why = "x of a kernel dtype, y i64";
  else if (!numel_of(&x->type, &l) || data_dependent(s, &x->type))
    why = "more than one symbolic dim";
  else if (!ok || !bits)
    why = "its count needs a symbol of the dims slot (at most 32 symbols)";
  else if (l.c * (l.sym >= 0 ? s->g->symbols[l.sym].bound : 1) >= (1 << 24))
    why = "more than 2^24 elements";
  if (why) {
    dml_ksched_unsupported(s, node, why);
    return;
  }
  const dml_kidx_t *N = dml_ki_lin(p, l), *i2 = NULL;
  dml_kblock_t b = {0}, body = {0};
  dml_kernel_t *K = compaction(s, node, N, l, bits, nz_flag, x, &b, &i2);
  if (!K) return;
  const dml_kidx_t *coord[DML_MAX_RANK];
  int32_t r = x->type.rank ? x->type.rank : 1;
  if (x->type.rank)
    coords_of(s, &x->type, i2, coord);
  else
    coord[0] = kc(s, 0);
  for (int32_t d = 0; d < r; d++)
    dml_kblock_add(&body, store_cap(s, y, kadd(s, kmul(s, kc(s, d), ri(s, 2)), ri(s, 3)),
                                    dml_kv_idx(p, DML_KT_I64, coord[d])));
  compaction_end(s, K, &b, N, i2, nz_flag, x, &body);
}

/* ---- Compress ---- */

static const dml_kval_t *cond_flag(sched_t *s, const void *ctx, const dml_kidx_t *i) {
  const dml_pkg_value_t *c = (const dml_pkg_value_t *)ctx;
  return nonzero(s, load_at(s, c, i), kdt(c));
}

/* Compress: x viewed as [outer, n, inner] (n = numel without an axis), the
 * items i < min(n, len(condition)) with a true condition, in order: the
 * k-th selected item i copies x[o, i, q] to y[o, k, q] for every o and q
 * (y [outer, sel, inner]). Static shapes. */
static void emit_compress(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0), *c = input(s, n, 1);
  const dml_pkg_value_t *y = n->n_outputs ? val(s, n->outputs[0]) : NULL;
  int ok = 0;
  uint32_t bits = node_symbols(s, node, &ok);
  const char *why = NULL;
  if (!x || !c || !y || !typed_ok(x) || !typed_ok(c) || !typed_ok(y) ||
      x->type.dtype != y->type.dtype)
    why = "x, condition and y of kernel dtypes (y of x's)";
  else if (c->type.rank != 1)
    why = "condition must be 1-D";
  else if (!ok || !bits)
    why = "its count needs a symbol of the dims slot (at most 32 symbols)";
  for (int32_t d = 0; !why && x && d < x->type.rank; d++)
    if (x->type.dims[d].sym >= 0) why = "symbolic input dims";
  if (!why && c->type.dims[0].sym >= 0) why = "symbolic input dims";
  int64_t axis = -1, outer = 1, inner = 1, nn = 1;
  const dml_attr_t *ax = why ? NULL : dml_attr_find(n->attrs, n->n_attrs, "axis");
  if (!why && ax) {
    axis = ax->i < 0 ? ax->i + x->type.rank : ax->i;
    if (axis < 0 || axis >= x->type.rank) why = "axis out of range";
  }
  if (!why) {
    for (int32_t d = 0; d < x->type.rank; d++) {
      int64_t e = x->type.dims[d].value;
      if (axis < 0)
        nn *= e;
      else if (d < axis)
        outer *= e;
      else if (d == axis)
        nn = e;
      else
        inner *= e;
    }
    if (nn >= (1 << 24)) why = "more than 2^24 items";
  }
  if (why) {
    dml_ksched_unsupported(s, node, why);
    return;
  }
  int64_t len = nn < c->type.dims[0].value ? nn : c->type.dims[0].value;
  dml_klin_t l = {len, -1, 0, 0};
  const dml_kidx_t *L = kc(s, len), *i2 = NULL;
  dml_kblock_t b = {0}, body = {0}, copy = {0};
  dml_kernel_t *K = compaction(s, node, L, l, bits, cond_flag, c, &b, &i2);
  if (!K) return;
  int32_t vt = DML_KVAR_FIRST_LOOP + 3;
  const dml_kidx_t *t = dml_ki_var(p, vt);
  const dml_kidx_t *o = dml_ki_bin(p, DML_KI_DIV, t, kc(s, inner)),
                   *q = dml_ki_bin(p, DML_KI_MOD, t, kc(s, inner));
  const dml_kidx_t *src =
      kadd(s, kmul(s, kadd(s, kmul(s, o, kc(s, nn)), i2), kc(s, inner)), q);
  const dml_kidx_t *dst =
      kadd(s, kmul(s, kadd(s, kmul(s, o, ri(s, 2)), ri(s, 3)), kc(s, inner)), q);
  dml_kblock_add(&copy, store_cap(s, y, dst, load_at(s, x, src)));
  dml_kblock_add(&body, for_loop(s, vt, kc(s, outer * inner), copy.first));
  compaction_end(s, K, &b, L, i2, cond_flag, c, &body);
  K->bytes.c0 += outer * inner * nn;
}

void dml_ksched_dyn_emit(sched_t *s, uint32_t node) {
  switch (s->fn->nodes[node].op) {
    case DML_OP_NON_ZERO: emit_nonzero(s, node); break;
    case DML_OP_COMPRESS: emit_compress(s, node); break;
    default: dml_ksched_unsupported(s, node, "no kernel form yet"); break;
  }
}
