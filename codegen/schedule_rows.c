/* schedule_rows.c — cooperative row reductions: one workgroup of
 * DML_KROW_WG invocations per row (reductions, ArgMax/ArgMin, Softmax,
 * LogSoftmax, Hardmax, LayerNormalization, InstanceNormalization over long
 * rows; docs/kernels.md "Long rows").
 *
 * Invocation t of a row's workgroup combines the row's elements t, t + WG,
 * t + 2 WG, ... into 4 accumulators (4 loads in flight, elements 1024 apart
 * in each), adds its 4 accumulators pairwise, and the workgroup combines its
 * WG partial results in a balanced tree through a shared tile (log2 WG
 * barrier steps): f32 sums in a stable order whose error grows with
 * length / 1024 instead of the length. A loop runs length / 1024 times per
 * invocation, so rows of any length stay far below per-invocation loop
 * limits (Mesa's lavapipe stops every loop of an invocation after 65,535
 * iterations in all: a serial loop over a row of 4M elements summed the
 * first 65,535). Rows beyond the grid's 65,535 workgroups per dimension
 * are taken in turns: workgroup g handles rows g, g + 65,535, ... */
#include "schedule_ops_util.h"

/* Workgroups per grid dimension everywhere (Vulkan's minimum
 * maxComputeWorkGroupCount, CUDA's gridDim.y). */
#define ROW_GRID 65535
#define ROW_UNROLL 4

const dml_kidx_t *dml_krow_setup(sched_t *s, dml_kernel_t *K, dml_klin_t rows,
                                 int32_t row_var, uint32_t tile) {
  dml_kpool_t *p = s->pool;
  K->local[0] = DML_KROW_WG;
  if (K->n_tiles < tile + 1) K->n_tiles = tile + 1;
  K->tile_elems[tile] = DML_KROW_WG;
  const dml_kidx_t *wg = dml_ki_var(p, DML_KVAR_WG_X);
  if (dml_ksched_lin_max(s, rows) <= ROW_GRID) {
    K->items[0] = rows;
    K->items[0].c *= DML_KROW_WG;
    K->items[0].c0 *= DML_KROW_WG;
    return wg;
  }
  K->items[0] = (dml_klin_t){0, -1, (int64_t)ROW_GRID * DML_KROW_WG, 0};
  return dml_ki_bin(
      p, DML_KI_ADD,
      dml_ki_bin(p, DML_KI_MUL, dml_ki_var(p, row_var), dml_ki_const(p, ROW_GRID)), wg);
}

dml_kstmt_t *dml_krow_finish(sched_t *s, dml_klin_t rows, int32_t row_var,
                             dml_kstmt_t *body) {
  dml_kpool_t *p = s->pool;
  if (dml_ksched_lin_max(s, rows) <= ROW_GRID) return body; /* the grid is the rows */
  const dml_kidx_t *R = dml_ki_lin(p, rows);
  const dml_kidx_t *turns = dml_ki_bin(
      p, DML_KI_DIV, dml_ki_bin(p, DML_KI_ADD, R, dml_ki_const(p, ROW_GRID - 1)),
      dml_ki_const(p, ROW_GRID));
  const dml_kidx_t *row = dml_ki_bin(
      p, DML_KI_ADD,
      dml_ki_bin(p, DML_KI_MUL, dml_ki_var(p, row_var), dml_ki_const(p, ROW_GRID)),
      dml_ki_var(p, DML_KVAR_WG_X));
  /* the test is uniform over the workgroup, so the barriers inside stay in
   * uniform control flow */
  return for_loop(s, row_var, turns, if_lt(s, row, R, body));
}

/* comb(a, b) of dml_krow_reduce: max/min keep NaN as the CPU does. */
static const dml_kval_t *row_comb(sched_t *s, dml_kfn_t comb, const dml_kval_t *a,
                                  const dml_kval_t *b) {
  if (comb == DML_KF_MAX || comb == DML_KF_MIN)
    return dml_ksched_nan_max(s->pool, a, b, comb == DML_KF_MAX);
  return dml_kv_fn(s->pool, comb, a, b);
}

void dml_krow_reduce(sched_t *s, dml_kblock_t *b, const dml_kidx_t *n, int32_t var,
                     dml_kfn_t comb, float init, dml_krow_value_fn value, void *ctx,
                     uint32_t reg, uint32_t tile) {
  dml_kpool_t *p = s->pool;
  const dml_kidx_t *lid = dml_ki_var(p, DML_KVAR_LID_X);
  const int64_t span = (int64_t)DML_KROW_WG * ROW_UNROLL;
  for (uint32_t u = 0; u < ROW_UNROLL; u++)
    dml_kblock_add(b, assign(s, DML_KS_LET, reg + u, dml_kv_const(p, init)));
  /* no bounds check when the row is a static multiple of the span */
  int exact = n->kind == DML_KI_CONST && n->c % span == 0;
  dml_kblock_t loop = {0};
  const dml_kidx_t *base = dml_ki_bin(
      p, DML_KI_ADD, dml_ki_bin(p, DML_KI_MUL, dml_ki_var(p, var), kc(s, span)), lid);
  for (uint32_t u = 0; u < ROW_UNROLL; u++) {
    const dml_kidx_t *j =
        u ? dml_ki_bin(p, DML_KI_ADD, base, kc(s, (int64_t)u * DML_KROW_WG)) : base;
    dml_kstmt_t *st = assign(s, DML_KS_SET, reg + u,
                             row_comb(s, comb, dml_kv_reg(p, reg + u), value(s, j, ctx)));
    dml_kblock_add(&loop, exact ? st : if_lt(s, j, n, st));
  }
  const dml_kidx_t *steps = dml_ki_bin(
      p, DML_KI_DIV, dml_ki_bin(p, DML_KI_ADD, n, kc(s, span - 1)), kc(s, span));
  dml_kblock_add(b, for_loop(s, var, steps, loop.first));
  dml_kblock_add(
      b,
      assign(
          s, DML_KS_SET, reg,
          row_comb(s, comb, row_comb(s, comb, dml_kv_reg(p, reg), dml_kv_reg(p, reg + 1)),
                   row_comb(s, comb, dml_kv_reg(p, reg + 2), dml_kv_reg(p, reg + 3)))));
  dml_kstmt_t *ts = dml_ks_new(p, DML_KS_TILE_STORE);
  if (ts) {
    ts->tile = tile;
    ts->idx = lid;
    ts->val = dml_kv_reg(p, reg);
  }
  dml_kblock_add(b, ts);
  dml_kblock_add(b, dml_ks_new(p, DML_KS_BARRIER));
  for (int64_t h = DML_KROW_WG / 2; h >= 1; h /= 2) {
    dml_kstmt_t *st = dml_ks_new(p, DML_KS_TILE_STORE);
    if (st) {
      st->tile = tile;
      st->idx = lid;
      st->val = row_comb(s, comb, dml_kv_tile(p, tile, lid),
                         dml_kv_tile(p, tile, dml_ki_bin(p, DML_KI_ADD, lid, kc(s, h))));
    }
    dml_kblock_add(b, if_lt(s, lid, kc(s, h), st));
    dml_kblock_add(b, dml_ks_new(p, DML_KS_BARRIER));
  }
  dml_kblock_add(b, assign(s, DML_KS_SET, reg, dml_kv_tile(p, tile, kc(s, 0))));
  /* every invocation has read the result before the tile is written again */
  dml_kblock_add(b, dml_ks_new(p, DML_KS_BARRIER));
}

dml_kstmt_t *dml_krow_each(sched_t *s, const dml_kidx_t *n, int32_t var,
                           dml_krow_stmt_fn body, void *ctx) {
  dml_kpool_t *p = s->pool;
  const dml_kidx_t *j = dml_ki_bin(
      p, DML_KI_ADD, dml_ki_bin(p, DML_KI_MUL, dml_ki_var(p, var), kc(s, DML_KROW_WG)),
      dml_ki_var(p, DML_KVAR_LID_X));
  const dml_kidx_t *steps =
      dml_ki_bin(p, DML_KI_DIV, dml_ki_bin(p, DML_KI_ADD, n, kc(s, DML_KROW_WG - 1)),
                 kc(s, DML_KROW_WG));
  int exact = n->kind == DML_KI_CONST && n->c % DML_KROW_WG == 0;
  dml_kstmt_t *st = body(s, j, ctx);
  return for_loop(s, var, steps, exact ? st : if_lt(s, j, n, st));
}

int dml_krow_wanted(const sched_t *s, int64_t row_len_max) {
  (void)s;
  return row_len_max > DML_KROW_MIN;
}
