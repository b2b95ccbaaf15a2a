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
/* Items a Unique may have (its first-of-group flags: one f32 shared tile
 * of 16 KiB at most, the least every Vulkan device has). */
#define UNIQUE_MAX_ITEMS 4096

int dml_ksched_dyn_handles(dml_op_t op) {
  switch (op) {
    case DML_OP_NON_ZERO:
    case DML_OP_COMPRESS:
    case DML_OP_UNIQUE:
    case DML_OP_NON_MAX_SUPPRESSION: return 1;
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

/* ---- NonMaxSuppression ---- */

static const dml_kval_t *fsel_max(dml_kpool_t *p, const dml_kval_t *a,
                                  const dml_kval_t *b) {
  return dml_kv_select(p, dml_kv_fn(p, DML_KF_GT, a, b), a, b); /* DML_CPU_MAX */
}

static const dml_kval_t *fsel_min(dml_kpool_t *p, const dml_kval_t *a,
                                  const dml_kval_t *b) {
  return dml_kv_select(p, dml_kv_fn(p, DML_KF_LT, a, b), a, b); /* DML_CPU_MIN */
}

/* The corners [x_min, y_min, x_max, y_max] of box b[0..3] (cpu_dynamic.c's
 * box_corners). */
static void nms_corners(dml_kpool_t *p, const dml_kval_t *b[4], int center,
                        const dml_kval_t *out[4]) {
  if (center) {
    const dml_kval_t *two = dml_kv_const(p, 2.0f);
    const dml_kval_t *hw = dml_kv_fn(p, DML_KF_DIV, b[2], two),
                     *hh = dml_kv_fn(p, DML_KF_DIV, b[3], two);
    out[0] = dml_kv_fn(p, DML_KF_SUB, b[0], hw);
    out[2] = dml_kv_fn(p, DML_KF_ADD, b[0], hw);
    out[1] = dml_kv_fn(p, DML_KF_SUB, b[1], hh);
    out[3] = dml_kv_fn(p, DML_KF_ADD, b[1], hh);
  } else {
    out[0] = fsel_min(p, b[1], b[3]);
    out[2] = fsel_max(p, b[1], b[3]);
    out[1] = fsel_min(p, b[0], b[2]);
    out[3] = fsel_max(p, b[0], b[2]);
  }
}

static const dml_kval_t *band(dml_kpool_t *p, const dml_kval_t *a, const dml_kval_t *b) {
  return dml_kv_fn(p, DML_KF_AND, a, b);
}

/* NonMaxSuppression (opset 11), as cpu_dynamic.c: one invocation walks
 * every (batch, class) in order; per class it enumerates the candidates
 * (score > score_threshold when given) in descending score order, ties by
 * the lower box index (each step picks the best candidate after the
 * previous pick: O(boxes^2) per class), keeps one unless its IoU with a
 * box kept for the class (read back from the output rows) exceeds
 * iou_threshold, at most max_output_boxes_per_class, and appends its row
 * (batch, class, box). f32 arithmetic as the CPU's. Static shapes. */
static void emit_nms(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *bx = input(s, n, 0), *sc = input(s, n, 1), *mo = input(s, n, 2),
                        *io = input(s, n, 3), *th = input(s, n, 4);
  const dml_pkg_value_t *y = n->n_outputs ? val(s, n->outputs[0]) : NULL;
  int ok = 0;
  uint32_t bits = node_symbols(s, node, &ok);
  const char *why = NULL;
  if (!bx || !sc || !y || bx->type.dtype != DML_DTYPE_F32 ||
      sc->type.dtype != DML_DTYPE_F32 || y->type.dtype != DML_DTYPE_I64 || !typed_ok(y) ||
      (mo && (!typed_ok(mo) || dml_kdtype_is_float(kdt(mo)))) ||
      (io && io->type.dtype != DML_DTYPE_F32) || (th && th->type.dtype != DML_DTYPE_F32))
    why = "f32 boxes, scores and thresholds, an integer max_output_boxes_per_class";
  else if (bx->type.rank != 3 || sc->type.rank != 3 || bx->type.dims[2].value != 4)
    why = "boxes must be [batches, boxes, 4] and scores [batches, classes, boxes]";
  else if (!ok || !bits)
    why = "its count needs a symbol of the dims slot (at most 32 symbols)";
  const dml_pkg_value_t *all[5] = {bx, sc, mo, io, th};
  for (int k = 0; !why && k < 5; k++)
    for (int32_t d = 0; all[k] && d < all[k]->type.rank; d++)
      if (all[k]->type.dims[d].sym >= 0) why = "symbolic input dims";
  if (why) {
    dml_ksched_unsupported(s, node, why);
    return;
  }
  int64_t nb = bx->type.dims[0].value, nbox = bx->type.dims[1].value,
          nc = sc->type.dims[1].value;
  if (sc->type.dims[0].value != nb || sc->type.dims[2].value != nbox) {
    dml_ksched_unsupported(s, node, "boxes and scores disagree");
    return;
  }
  int64_t one = 1;
  for (int32_t d = 0; mo && d < mo->type.rank; d++) one *= mo->type.dims[d].value;
  if (mo && !one) mo = NULL;
  one = 1;
  for (int32_t d = 0; io && d < io->type.rank; d++) one *= io->type.dims[d].value;
  if (io && !one) io = NULL;
  one = 1;
  for (int32_t d = 0; th && d < th->type.rank; d++) one *= th->type.dims[d].value;
  if (th && !one) th = NULL;
  int center = dml_attr_int(n->attrs, n->n_attrs, "center_point_box", 0) != 0;
  dml_kernel_t *K = dml_ksched_kernel(s, DML_KK_MOVE, node);
  if (!K) return;
  K->local[0] = 1;
  K->items[0] = (dml_klin_t){1, -1, 0, 0};
  K->n_regs = 14;
  int32_t vb = DML_KVAR_FIRST_LOOP, vc = vb + 1, vt = vb + 2, vi = vb + 3, vq = vb + 4;
  const dml_kidx_t *B = dml_ki_var(p, vb), *C = dml_ki_var(p, vc), *I = dml_ki_var(p, vi),
                   *Q = dml_ki_var(p, vq);
  enum { TOT, MAXO, IOU, THR, NK, START, PS, PI, HAVE, FOUND, BS, BI, KEEP, KB };
  const dml_kval_t *f0 = dml_kv_const(p, 0.0f);
  dml_kblock_t b = {0}, cls = {0}, step = {0}, scan = {0}, pick = {0}, chk = {0},
               keep = {0};
  dml_kblock_add(&b, assign(s, DML_KS_LET, TOT, i32c(s, 0)));
  /* max_out = max(min(max_output_boxes_per_class, boxes), 0) */
  const dml_kval_t *m = mo ? dml_kv_cast(p, DML_KT_I64, load_at(s, mo, kc(s, 0)))
                           : dml_kv_iconst(p, DML_KT_I64, 0);
  const dml_kval_t *nbv = dml_kv_iconst(p, DML_KT_I64, nbox);
  m = dml_kv_select(p, dml_kv_fn(p, DML_KF_LT, m, nbv), m, nbv);
  m = dml_kv_select(p, dml_kv_fn(p, DML_KF_GT, m, dml_kv_iconst(p, DML_KT_I64, 0)), m,
                    dml_kv_iconst(p, DML_KT_I64, 0));
  dml_kblock_add(&b, assign(s, DML_KS_LET, MAXO, dml_kv_cast(p, DML_KT_I32, m)));
  dml_kblock_add(&b, assign(s, DML_KS_LET, IOU, io ? load_at(s, io, kc(s, 0)) : f0));
  dml_kblock_add(&b, assign(s, DML_KS_LET, THR, th ? load_at(s, th, kc(s, 0)) : f0));
  /* registers used in the loops, defined once */
  dml_kblock_add(&b, assign(s, DML_KS_LET, NK, i32c(s, 0)));
  dml_kblock_add(&b, assign(s, DML_KS_LET, START, i32c(s, 0)));
  dml_kblock_add(&b, assign(s, DML_KS_LET, PS, f0));
  dml_kblock_add(&b, assign(s, DML_KS_LET, PI, i32c(s, 0)));
  dml_kblock_add(&b, assign(s, DML_KS_LET, HAVE, dml_kv_zero(p, DML_KT_BOOL)));
  dml_kblock_add(&b, assign(s, DML_KS_LET, FOUND, dml_kv_zero(p, DML_KT_BOOL)));
  dml_kblock_add(&b, assign(s, DML_KS_LET, BS, f0));
  dml_kblock_add(&b, assign(s, DML_KS_LET, BI, i32c(s, 0)));
  dml_kblock_add(&b, assign(s, DML_KS_LET, KEEP, dml_kv_zero(p, DML_KT_BOOL)));
  dml_kblock_add(&b, assign(s, DML_KS_LET, KB, i32c(s, 0)));
  /* per class */
  dml_kblock_add(&cls, assign(s, DML_KS_SET, NK, i32c(s, 0)));
  dml_kblock_add(&cls, assign(s, DML_KS_SET, START, ireg(s, TOT)));
  dml_kblock_add(&cls, assign(s, DML_KS_SET, HAVE, dml_kv_zero(p, DML_KT_BOOL)));
  /* one step: the best candidate after the previous pick */
  dml_kblock_add(&step, assign(s, DML_KS_SET, FOUND, dml_kv_zero(p, DML_KT_BOOL)));
  const dml_kidx_t *srow = kmul(s, kadd(s, kmul(s, B, kc(s, nc)), C), kc(s, nbox));
  const dml_kval_t *sv = load_at(s, sc, kadd(s, srow, I));
  const dml_kval_t *iv = dml_kv_idx(p, DML_KT_I32, I);
  const dml_kval_t *ps = dml_kv_reg_t(p, PS, DML_KT_F32),
                   *bs = dml_kv_reg_t(p, BS, DML_KT_F32);
  const dml_kval_t *have = dml_kv_reg_t(p, HAVE, DML_KT_BOOL),
                   *found = dml_kv_reg_t(p, FOUND, DML_KT_BOOL);
  const dml_kval_t *after =
      dml_kv_fn(p, DML_KF_OR, dml_kv_fn(p, DML_KF_NOT, have, NULL),
                dml_kv_fn(p, DML_KF_OR, dml_kv_fn(p, DML_KF_LT, sv, ps),
                          band(p, dml_kv_fn(p, DML_KF_EQ, sv, ps),
                               dml_kv_fn(p, DML_KF_GT, iv, ireg(s, PI)))));
  const dml_kval_t *cand =
      th ? band(p, dml_kv_fn(p, DML_KF_GT, sv, dml_kv_reg_t(p, THR, DML_KT_F32)), after)
         : after;
  dml_kblock_add(&scan, assign(s, DML_KS_LET, 14, cand));
  const dml_kval_t *candr = dml_kv_reg_t(p, 14, DML_KT_BOOL);
  dml_kblock_add(
      &scan, assign(s, DML_KS_LET, 15,
                    band(p, candr,
                         dml_kv_fn(p, DML_KF_OR, dml_kv_fn(p, DML_KF_NOT, found, NULL),
                                   dml_kv_fn(p, DML_KF_GT, sv, bs)))));
  const dml_kval_t *better = dml_kv_reg_t(p, 15, DML_KT_BOOL);
  dml_kblock_add(&scan, assign(s, DML_KS_SET, BS, dml_kv_select(p, better, sv, bs)));
  dml_kblock_add(&scan,
                 assign(s, DML_KS_SET, BI, dml_kv_select(p, better, iv, ireg(s, BI))));
  dml_kblock_add(&scan,
                 assign(s, DML_KS_SET, FOUND, dml_kv_fn(p, DML_KF_OR, found, better)));
  dml_kblock_add(&step, for_loop(s, vi, kc(s, nbox), scan.first));
  /* the pick against the class's kept boxes */
  dml_kblock_add(&pick, assign(s, DML_KS_SET, KEEP, dml_kv_one(p, DML_KT_BOOL)));
  const dml_kidx_t *krow = kadd(s, ri(s, START), Q);
  const dml_kidx_t *kbi = kadd(s, kmul(s, krow, kc(s, 3)), kc(s, 2));
  dml_kblock_add(
      &chk, assign(s, DML_KS_SET, KB, dml_kv_cast(p, DML_KT_I32, load_at(s, y, kbi))));
  const dml_kidx_t *bb = kmul(s, B, kc(s, nbox * 4));
  const dml_kval_t *b1[4], *b2[4], *pc[4], *qc[4];
  for (int k = 0; k < 4; k++) {
    b1[k] = load_at(s, bx, kadd(s, bb, kadd(s, kmul(s, ri(s, BI), kc(s, 4)), kc(s, k))));
    b2[k] = load_at(s, bx, kadd(s, bb, kadd(s, kmul(s, ri(s, KB), kc(s, 4)), kc(s, k))));
  }
  nms_corners(p, b1, center, pc);
  nms_corners(p, b2, center, qc);
  const dml_kval_t *ix0 = fsel_max(p, pc[0], qc[0]), *ix1 = fsel_min(p, pc[2], qc[2]);
  const dml_kval_t *iy0 = fsel_max(p, pc[1], qc[1]), *iy1 = fsel_min(p, pc[3], qc[3]);
  const dml_kval_t *inter = dml_kv_fn(p, DML_KF_MUL, dml_kv_fn(p, DML_KF_SUB, ix1, ix0),
                                      dml_kv_fn(p, DML_KF_SUB, iy1, iy0));
  const dml_kval_t *a1 = dml_kv_fn(p, DML_KF_MUL, dml_kv_fn(p, DML_KF_SUB, pc[2], pc[0]),
                                   dml_kv_fn(p, DML_KF_SUB, pc[3], pc[1]));
  const dml_kval_t *a2 = dml_kv_fn(p, DML_KF_MUL, dml_kv_fn(p, DML_KF_SUB, qc[2], qc[0]),
                                   dml_kv_fn(p, DML_KF_SUB, qc[3], qc[1]));
  dml_kblock_add(&chk, assign(s, DML_KS_LET, 16, inter));
  dml_kblock_add(&chk, assign(s, DML_KS_LET, 17, a1));
  dml_kblock_add(&chk, assign(s, DML_KS_LET, 18, a2));
  const dml_kval_t *ri_ = dml_kv_reg_t(p, 16, DML_KT_F32),
                   *ra1 = dml_kv_reg_t(p, 17, DML_KT_F32),
                   *ra2 = dml_kv_reg_t(p, 18, DML_KT_F32);
  dml_kblock_add(
      &chk, assign(s, DML_KS_LET, 19,
                   dml_kv_fn(p, DML_KF_SUB, dml_kv_fn(p, DML_KF_ADD, ra1, ra2), ri_)));
  const dml_kval_t *uni = dml_kv_reg_t(p, 19, DML_KT_F32);
  const dml_kval_t *sup = band(
      p,
      band(p,
           band(p, dml_kv_fn(p, DML_KF_GT, ix1, ix0), dml_kv_fn(p, DML_KF_GT, iy1, iy0)),
           band(p, dml_kv_fn(p, DML_KF_GT, ri_, f0), dml_kv_fn(p, DML_KF_GT, ra1, f0))),
      band(p, band(p, dml_kv_fn(p, DML_KF_GT, ra2, f0), dml_kv_fn(p, DML_KF_GT, uni, f0)),
           dml_kv_fn(p, DML_KF_GT, dml_kv_fn(p, DML_KF_DIV, ri_, uni),
                     dml_kv_reg_t(p, IOU, DML_KT_F32))));
  dml_kblock_add(&chk, assign(s, DML_KS_SET, KEEP,
                              band(p, dml_kv_reg_t(p, KEEP, DML_KT_BOOL),
                                   dml_kv_fn(p, DML_KF_NOT, sup, NULL))));
  /* a kept row past the planned bytes was not stored: nothing to read */
  dml_kblock_add(&pick,
                 for_loop(s, vq, ri(s, NK), if_lt(s, kbi, kc(s, cap_of(y)), chk.first)));
  const dml_kidx_t *row = kmul(s, ri(s, TOT), kc(s, 3));
  dml_kblock_add(&keep, store_cap(s, y, row, dml_kv_idx(p, DML_KT_I64, B)));
  dml_kblock_add(&keep,
                 store_cap(s, y, kadd(s, row, kc(s, 1)), dml_kv_idx(p, DML_KT_I64, C)));
  dml_kblock_add(&keep, store_cap(s, y, kadd(s, row, kc(s, 2)),
                                  dml_kv_cast(p, DML_KT_I64, ireg(s, BI))));
  dml_kblock_add(&keep, inc(s, TOT, i32c(s, 1)));
  dml_kblock_add(&keep, inc(s, NK, i32c(s, 1)));
  dml_kblock_add(&pick, if_true(s, dml_kv_reg_t(p, KEEP, DML_KT_BOOL), keep.first));
  dml_kblock_add(
      &step,
      if_true(s, band(p, found, dml_kv_fn(p, DML_KF_LT, ireg(s, NK), ireg(s, MAXO))),
              pick.first));
  dml_kblock_add(&step, assign(s, DML_KS_SET, PS, dml_kv_select(p, found, bs, ps)));
  dml_kblock_add(&step, assign(s, DML_KS_SET, PI,
                               dml_kv_select(p, found, ireg(s, BI), ireg(s, PI))));
  dml_kblock_add(&step,
                 assign(s, DML_KS_SET, HAVE, dml_kv_fn(p, DML_KF_OR, have, found)));
  dml_kblock_add(&cls, for_loop(s, vt, kc(s, nbox), step.first));
  dml_kblock_add(&b, for_loop(s, vb, kc(s, nb), for_loop(s, vc, kc(s, nc), cls.first)));
  store_dims(s, &b, bits, ireg(s, TOT));
  K->n_regs = 20;
  K->body = b.first;
  K->flops = (dml_klin_t){nb * nc * nbox * nbox * 2, -1, 0, 0};
  K->bytes = (dml_klin_t){nb * nc * nbox * nbox * 4, -1, 0, 0};
}

/* ---- Unique ---- */

/* Invocations of Unique's one workgroup. */
#define UNIQUE_WG 256

/* A Unique under construction: x viewed as [outer, n, inner] (items along
 * n, of S = outer * inner elements each), registers and loop variables
 * handed out in order. */
typedef struct uq {
  sched_t *s;
  const dml_pkg_value_t *x;
  int64_t n, inner, S;
  uint32_t reg;
  int32_t var;
} uq_t;

static uint32_t uq_reg(uq_t *u) {
  return u->reg++;
}

static int32_t uq_var(uq_t *u) {
  return DML_KVAR_FIRST_LOOP + u->var++;
}

/* Element t (< S) of item k. */
static const dml_kval_t *uq_elem(uq_t *u, const dml_kidx_t *k, const dml_kidx_t *t) {
  sched_t *s = u->s;
  const dml_kidx_t *o = dml_ki_bin(s->pool, DML_KI_DIV, t, kc(s, u->inner)),
                   *q = dml_ki_bin(s->pool, DML_KI_MOD, t, kc(s, u->inner));
  return load_at(
      s, u->x, kadd(s, kmul(s, kadd(s, kmul(s, o, kc(s, u->n)), k), kc(s, u->inner)), q));
}

/* cpu_dynamic.c's elem_cmp as bools: NaNs equal each other and sort after
 * every number. */
static const dml_kval_t *uq_eeq(uq_t *u, const dml_kval_t *a, const dml_kval_t *b) {
  dml_kpool_t *p = u->s->pool;
  const dml_kval_t *e = dml_kv_fn(p, DML_KF_EQ, a, b);
  if (!dml_kdtype_is_float(kdt(u->x))) return e;
  const dml_kval_t *na = dml_kv_fn(p, DML_KF_NOT, dml_kv_fn(p, DML_KF_EQ, a, a), NULL),
                   *nb = dml_kv_fn(p, DML_KF_NOT, dml_kv_fn(p, DML_KF_EQ, b, b), NULL);
  return dml_kv_fn(p, DML_KF_OR, e, band(p, na, nb));
}

static const dml_kval_t *uq_elt(uq_t *u, const dml_kval_t *a, const dml_kval_t *b) {
  dml_kpool_t *p = u->s->pool;
  const dml_kval_t *l = dml_kv_fn(p, DML_KF_LT, a, b);
  if (!dml_kdtype_is_float(kdt(u->x))) return l;
  const dml_kval_t *nb = dml_kv_fn(p, DML_KF_NOT, dml_kv_fn(p, DML_KF_EQ, b, b), NULL);
  return dml_kv_fn(p, DML_KF_OR, l, band(p, dml_kv_fn(p, DML_KF_EQ, a, a), nb));
}

/* Adds to blk the statements leaving in the returned (bool) register
 * whether items k and i are equal (every element). */
static uint32_t uq_eq(uq_t *u, dml_kblock_t *blk, const dml_kidx_t *k,
                      const dml_kidx_t *i) {
  sched_t *s = u->s;
  dml_kpool_t *p = s->pool;
  uint32_t r = uq_reg(u);
  int32_t v = uq_var(u);
  const dml_kidx_t *t = dml_ki_var(p, v);
  const dml_kval_t *rv = dml_kv_reg_t(p, r, DML_KT_BOOL);
  dml_kblock_add(blk, assign(s, DML_KS_LET, r, dml_kv_one(p, DML_KT_BOOL)));
  dml_kblock_add(
      blk, for_loop(s, v, kc(s, u->S),
                    assign(s, DML_KS_SET, r,
                           band(p, rv, uq_eeq(u, uq_elem(u, k, t), uq_elem(u, i, t))))));
  return r;
}

/* Likewise: whether item k sorts before item i (lexicographic over the
 * elements in order, as cpu_dynamic.c's item_cmp). */
static uint32_t uq_lt(uq_t *u, dml_kblock_t *blk, const dml_kidx_t *k,
                      const dml_kidx_t *i) {
  sched_t *s = u->s;
  dml_kpool_t *p = s->pool;
  uint32_t rd = uq_reg(u), rl = uq_reg(u);
  int32_t v = uq_var(u);
  const dml_kidx_t *t = dml_ki_var(p, v);
  const dml_kval_t *d = dml_kv_reg_t(p, rd, DML_KT_BOOL),
                   *l = dml_kv_reg_t(p, rl, DML_KT_BOOL);
  const dml_kval_t *a = uq_elem(u, k, t), *b = uq_elem(u, i, t);
  dml_kblock_t body = {0};
  dml_kblock_add(blk, assign(s, DML_KS_LET, rd, dml_kv_zero(p, DML_KT_BOOL)));
  dml_kblock_add(blk, assign(s, DML_KS_LET, rl, dml_kv_zero(p, DML_KT_BOOL)));
  dml_kblock_add(&body,
                 assign(s, DML_KS_SET, rl, dml_kv_select(p, d, l, uq_elt(u, a, b))));
  dml_kblock_add(
      &body,
      assign(s, DML_KS_SET, rd,
             dml_kv_fn(p, DML_KF_OR, d,
                       dml_kv_fn(p, DML_KF_OR, uq_elt(u, a, b), uq_elt(u, b, a)))));
  dml_kblock_add(blk, for_loop(s, v, kc(s, u->S), body.first));
  return rl;
}

/* Adds the statements leaving in the returned (i32) register the position
 * of item i's group among the distinct items (i any item of the group
 * when sorted, its first one otherwise): sorted, the first items (tile 0's
 * flags) that sort before item i; else the first items before i. */
static uint32_t uq_rank(uq_t *u, dml_kblock_t *blk, const dml_kidx_t *i, int sorted) {
  sched_t *s = u->s;
  dml_kpool_t *p = s->pool;
  uint32_t r = uq_reg(u);
  int32_t v = uq_var(u);
  const dml_kidx_t *k = dml_ki_var(p, v);
  const dml_kval_t *flag = dml_kv_cast(p, DML_KT_I32, dml_kv_tile(p, 0, k));
  dml_kblock_t body = {0};
  dml_kblock_add(blk, assign(s, DML_KS_LET, r, i32c(s, 0)));
  const dml_kval_t *before;
  if (sorted) {
    uint32_t rl = uq_lt(u, &body, k, i);
    before = dml_kv_reg_t(p, rl, DML_KT_BOOL);
  } else {
    before = dml_kv_fn(p, DML_KF_LT, dml_kv_idx(p, DML_KT_I32, k),
                       dml_kv_idx(p, DML_KT_I32, i));
  }
  dml_kblock_add(&body, inc(s, r, dml_kv_select(p, before, flag, i32c(s, 0))));
  dml_kblock_add(blk, for_loop(s, v, kc(s, u->n), body.first));
  return r;
}

/* Unique (opset 11), as cpu_dynamic.c, in one workgroup of UNIQUE_WG
 * invocations, each taking items i = lid, lid + UNIQUE_WG, ...: (1) item i
 * is the first of its group when no earlier item equals it (a flag in tile
 * 0); barrier; (2) the distinct count u is the flags' sum (invocation 0
 * stores it in the dims slot); each first item i finds its position r
 * (sorted: the first items sorting before it; else the first items before
 * it) and its count (the items equal to it), and writes Y[o, r, q] =
 * x[o, i, q], indices[r] = i, counts[r]; (3) each item j's inverse index is
 * the position of its group (sorted: from j itself; else from the first
 * item equal to j). Comparisons: O(n^2) item compares per phase, so items
 * are at most UNIQUE_MAX_ITEMS (tile 0's entries). Static shapes. */
static void emit_unique(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0);
  const dml_pkg_value_t *y = n->n_outputs > 0 ? val(s, n->outputs[0]) : NULL,
                        *oi = n->n_outputs > 1 ? val(s, n->outputs[1]) : NULL,
                        *ov = n->n_outputs > 2 ? val(s, n->outputs[2]) : NULL,
                        *oc = n->n_outputs > 3 ? val(s, n->outputs[3]) : NULL;
  int ok = 0;
  uint32_t bits = node_symbols(s, node, &ok);
  const char *why = NULL;
  if (!x || !y || !typed_ok(x) || !typed_ok(y) || y->type.dtype != x->type.dtype ||
      kdt(x) == DML_KT_F16 || kdt(x) == DML_KT_BF16)
    why = "x of a kernel dtype but f16/bf16, y of x's";
  else if ((oi && (oi->type.dtype != DML_DTYPE_I64 || !typed_ok(oi))) ||
           (ov && (ov->type.dtype != DML_DTYPE_I64 || !typed_ok(ov))) ||
           (oc && (oc->type.dtype != DML_DTYPE_I64 || !typed_ok(oc))))
    why = "indices, inverse_indices and counts must be i64";
  else if (!ok || !bits)
    why = "its count needs a symbol of the dims slot (at most 32 symbols)";
  for (int32_t d = 0; !why && d < x->type.rank; d++)
    if (x->type.dims[d].sym >= 0) why = "symbolic input dims";
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
    if (nn > UNIQUE_MAX_ITEMS) why = "more than 4096 items";
  }
  if (why) {
    dml_ksched_unsupported(s, node, why);
    return;
  }
  int sorted = dml_attr_int(n->attrs, n->n_attrs, "sorted", 1) != 0;
  dml_kernel_t *K = dml_ksched_kernel(s, DML_KK_MOVE, node);
  if (!K) return;
  K->local[0] = UNIQUE_WG;
  K->items[0] = (dml_klin_t){UNIQUE_WG, -1, 0, 0};
  K->n_tiles = 1;
  K->tile_elems[0] = (uint32_t)(nn ? nn : 1);
  uq_t u = {s, x, nn, inner, outer * inner, 0, 0};
  const dml_kidx_t *lid = dml_ki_var(p, DML_KVAR_LID_X);
  const int64_t steps = (nn + UNIQUE_WG - 1) / UNIQUE_WG;
  dml_kblock_t b = {0}, pa = {0}, pb = {0}, pc = {0}, st0 = {0};
  /* (1) first-of-group flags */
  int32_t va = uq_var(&u);
  const dml_kidx_t *ia = kadd(s, kmul(s, dml_ki_var(p, va), kc(s, UNIQUE_WG)), lid);
  {
    uint32_t rf = uq_reg(&u);
    int32_t vj = uq_var(&u);
    const dml_kidx_t *j = dml_ki_var(p, vj);
    dml_kblock_t scan = {0};
    dml_kblock_add(&pa, assign(s, DML_KS_LET, rf, dml_kv_one(p, DML_KT_BOOL)));
    uint32_t re = uq_eq(&u, &scan, j, ia);
    dml_kblock_add(
        &scan,
        assign(s, DML_KS_SET, rf,
               band(p, dml_kv_reg_t(p, rf, DML_KT_BOOL),
                    dml_kv_fn(p, DML_KF_NOT, dml_kv_reg_t(p, re, DML_KT_BOOL), NULL))));
    dml_kblock_add(&pa, for_loop(s, vj, ia, scan.first)); /* j < i */
    dml_kstmt_t *ts = dml_ks_new(p, DML_KS_TILE_STORE);
    if (ts) {
      ts->tile = 0;
      ts->idx = ia;
      ts->val = dml_kv_select(p, dml_kv_reg_t(p, rf, DML_KT_BOOL), dml_kv_const(p, 1.0f),
                              dml_kv_const(p, 0.0f));
    }
    dml_kblock_add(&pa, ts);
  }
  dml_kblock_add(&b, for_loop(s, va, kc(s, steps), if_lt(s, ia, kc(s, nn), pa.first)));
  dml_kblock_add(&b, dml_ks_new(p, DML_KS_BARRIER));
  /* (2) the count, then each group's outputs */
  uint32_t ru = uq_reg(&u);
  {
    int32_t vk = uq_var(&u);
    dml_kblock_add(&b, assign(s, DML_KS_LET, ru, i32c(s, 0)));
    dml_kblock_add(
        &b,
        for_loop(s, vk, kc(s, nn),
                 inc(s, ru,
                     dml_kv_cast(p, DML_KT_I32, dml_kv_tile(p, 0, dml_ki_var(p, vk))))));
    store_dims(s, &st0, bits, ireg(s, ru));
    dml_kblock_add(&b, if_lt(s, lid, kc(s, 1), st0.first));
  }
  int32_t vb = uq_var(&u);
  const dml_kidx_t *ib = kadd(s, kmul(s, dml_ki_var(p, vb), kc(s, UNIQUE_WG)), lid);
  {
    dml_kblock_t grp = {0}, cnt = {0}, copy = {0};
    uint32_t rr = uq_rank(&u, &grp, ib, sorted);
    uint32_t rc = uq_reg(&u);
    int32_t vk = uq_var(&u);
    dml_kblock_add(&grp, assign(s, DML_KS_LET, rc, i32c(s, 0)));
    uint32_t re = uq_eq(&u, &cnt, dml_ki_var(p, vk), ib);
    dml_kblock_add(
        &cnt, inc(s, rc, dml_kv_cast(p, DML_KT_I32, dml_kv_reg_t(p, re, DML_KT_BOOL))));
    dml_kblock_add(&grp, for_loop(s, vk, kc(s, nn), cnt.first));
    int32_t vt = uq_var(&u);
    const dml_kidx_t *t = dml_ki_var(p, vt);
    const dml_kidx_t *o = dml_ki_bin(p, DML_KI_DIV, t, kc(s, inner)),
                     *q = dml_ki_bin(p, DML_KI_MOD, t, kc(s, inner));
    const dml_kidx_t *dst =
        kadd(s, kmul(s, kadd(s, kmul(s, o, ri(s, ru)), ri(s, rr)), kc(s, inner)), q);
    dml_kblock_add(&copy, store_cap(s, y, dst, uq_elem(&u, ib, t)));
    dml_kblock_add(&grp, for_loop(s, vt, kc(s, outer * inner), copy.first));
    if (oi)
      dml_kblock_add(&grp, store_cap(s, oi, ri(s, rr), dml_kv_idx(p, DML_KT_I64, ib)));
    if (oc)
      dml_kblock_add(
          &grp, store_cap(s, oc, ri(s, rr), dml_kv_cast(p, DML_KT_I64, ireg(s, rc))));
    dml_kblock_add(
        &pb,
        if_true(s, dml_kv_fn(p, DML_KF_GT, dml_kv_tile(p, 0, ib), dml_kv_const(p, 0.0f)),
                grp.first));
  }
  dml_kblock_add(&b, for_loop(s, vb, kc(s, steps), if_lt(s, ib, kc(s, nn), pb.first)));
  /* (3) inverse indices */
  if (ov) {
    int32_t vc = uq_var(&u);
    const dml_kidx_t *ic = kadd(s, kmul(s, dml_ki_var(p, vc), kc(s, UNIQUE_WG)), lid);
    uint32_t rr;
    if (sorted) {
      rr = uq_rank(&u, &pc, ic, 1);
    } else {
      /* the first item equal to item j: the last one found scanning down */
      uint32_t rg = uq_reg(&u);
      int32_t vi = uq_var(&u);
      const dml_kidx_t *down =
          dml_ki_bin(p, DML_KI_SUB, kc(s, nn - 1), dml_ki_var(p, vi));
      dml_kblock_t scan = {0};
      dml_kblock_add(&pc, assign(s, DML_KS_LET, rg, i32c(s, 0)));
      uint32_t re = uq_eq(&u, &scan, down, ic);
      dml_kblock_add(&scan,
                     assign(s, DML_KS_SET, rg,
                            dml_kv_select(p, dml_kv_reg_t(p, re, DML_KT_BOOL),
                                          dml_kv_idx(p, DML_KT_I32, down), ireg(s, rg))));
      dml_kblock_add(&pc, for_loop(s, vi, kc(s, nn), scan.first));
      rr = uq_rank(&u, &pc, ri(s, rg), 0);
    }
    dml_kblock_add(&pc, store_cap(s, ov, ic, dml_kv_cast(p, DML_KT_I64, ireg(s, rr))));
    dml_kblock_add(&b, for_loop(s, vc, kc(s, steps), if_lt(s, ic, kc(s, nn), pc.first)));
  }
  K->n_regs = u.reg;
  K->body = b.first;
  int64_t w = nn * nn * outer * inner;
  K->flops = (dml_klin_t){3 * w, -1, 0, 0};
  K->bytes = (dml_klin_t){6 * w * (int64_t)dml_kdtype_size(kdt(x)), -1, 0, 0};
}

void dml_ksched_dyn_emit(sched_t *s, uint32_t node) {
  switch (s->fn->nodes[node].op) {
    case DML_OP_NON_ZERO: emit_nonzero(s, node); break;
    case DML_OP_COMPRESS: emit_compress(s, node); break;
    case DML_OP_NON_MAX_SUPPRESSION: emit_nms(s, node); break;
    case DML_OP_UNIQUE: emit_unique(s, node); break;
    default: dml_ksched_unsupported(s, node, "no kernel form yet"); break;
  }
}
