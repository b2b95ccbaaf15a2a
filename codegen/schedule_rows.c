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

/* dml_krow_reduce in init's dtype, through tile `tile` of that dtype. */
static void krow_reduce(sched_t *s, dml_kblock_t *b, const dml_kidx_t *n, int32_t var,
                        dml_kfn_t comb, const dml_kval_t *init, dml_krow_value_fn value,
                        void *ctx, uint32_t reg, uint32_t tile) {
  dml_kpool_t *p = s->pool;
  dml_kdtype_t t = init ? init->dtype : DML_KT_F32;
  const dml_kidx_t *lid = dml_ki_var(p, DML_KVAR_LID_X);
  const int64_t span = (int64_t)DML_KROW_WG * ROW_UNROLL;
  for (uint32_t u = 0; u < ROW_UNROLL; u++)
    dml_kblock_add(b, assign(s, DML_KS_LET, reg + u, init));
  /* no bounds check when the row is a static multiple of the span */
  int exact = n->kind == DML_KI_CONST && n->c % span == 0;
  dml_kblock_t loop = {0};
  const dml_kidx_t *base = dml_ki_bin(
      p, DML_KI_ADD, dml_ki_bin(p, DML_KI_MUL, dml_ki_var(p, var), kc(s, span)), lid);
  for (uint32_t u = 0; u < ROW_UNROLL; u++) {
    const dml_kidx_t *j =
        u ? dml_ki_bin(p, DML_KI_ADD, base, kc(s, (int64_t)u * DML_KROW_WG)) : base;
    dml_kstmt_t *st =
        assign(s, DML_KS_SET, reg + u,
               row_comb(s, comb, dml_kv_reg_t(p, reg + u, t), value(s, j, ctx)));
    dml_kblock_add(&loop, exact ? st : if_lt(s, j, n, st));
  }
  const dml_kidx_t *steps = dml_ki_bin(
      p, DML_KI_DIV, dml_ki_bin(p, DML_KI_ADD, n, kc(s, span - 1)), kc(s, span));
  dml_kblock_add(b, for_loop(s, var, steps, loop.first));
  dml_kblock_add(b, assign(s, DML_KS_SET, reg,
                           row_comb(s, comb,
                                    row_comb(s, comb, dml_kv_reg_t(p, reg, t),
                                             dml_kv_reg_t(p, reg + 1, t)),
                                    row_comb(s, comb, dml_kv_reg_t(p, reg + 2, t),
                                             dml_kv_reg_t(p, reg + 3, t)))));
  dml_krow_combine(s, b, comb, t, reg, tile);
}

void dml_krow_reduce(sched_t *s, dml_kblock_t *b, const dml_kidx_t *n, int32_t var,
                     dml_kfn_t comb, float init, dml_krow_value_fn value, void *ctx,
                     uint32_t reg, uint32_t tile) {
  krow_reduce(s, b, n, var, comb, dml_kv_const(s->pool, init), value, ctx, reg, tile);
}

void dml_krow_combine(sched_t *s, dml_kblock_t *b, dml_kfn_t comb, dml_kdtype_t t,
                      uint32_t reg, uint32_t tile) {
  dml_kpool_t *p = s->pool;
  const dml_kidx_t *lid = dml_ki_var(p, DML_KVAR_LID_X);
  dml_kstmt_t *ts = dml_ks_new(p, DML_KS_TILE_STORE);
  if (ts) {
    ts->tile = tile;
    ts->idx = lid;
    ts->val = dml_kv_reg_t(p, reg, t);
  }
  dml_kblock_add(b, ts);
  dml_kblock_add(b, dml_ks_new(p, DML_KS_BARRIER));
  for (int64_t h = DML_KROW_WG / 2; h >= 1; h /= 2) {
    dml_kstmt_t *st = dml_ks_new(p, DML_KS_TILE_STORE);
    if (st) {
      st->tile = tile;
      st->idx = lid;
      st->val =
          row_comb(s, comb, dml_kv_tile_t(p, tile, lid, t),
                   dml_kv_tile_t(p, tile, dml_ki_bin(p, DML_KI_ADD, lid, kc(s, h)), t));
    }
    dml_kblock_add(b, if_lt(s, lid, kc(s, h), st));
    dml_kblock_add(b, dml_ks_new(p, DML_KS_BARRIER));
  }
  dml_kblock_add(b, assign(s, DML_KS_SET, reg, dml_kv_tile_t(p, tile, kc(s, 0), t)));
  /* every invocation has read the result before the tile is written again */
  dml_kblock_add(b, dml_ks_new(p, DML_KS_BARRIER));
}

/* Makes tile `tile` of K DML_KROW_WG elements of dtype t. */
static void krow_tile(dml_kernel_t *K, uint32_t tile, dml_kdtype_t t) {
  if (K->n_tiles < tile + 1) K->n_tiles = tile + 1;
  K->tile_elems[tile] = DML_KROW_WG;
  K->tile_dtype[tile] = t;
}

void dml_krow_reduce_t(sched_t *s, dml_kernel_t *K, dml_kblock_t *b, const dml_kidx_t *n,
                       int32_t var, dml_kfn_t comb, const dml_kval_t *init,
                       dml_krow_value_fn value, void *ctx, uint32_t reg, uint32_t tile) {
  if (!init) return;
  krow_tile(K, tile, init->dtype);
  krow_reduce(s, b, n, var, comb, init, value, ctx, reg, tile);
}

/* Appends to `b`: register r + 3 = the rounding error of the f32 product
 * q = x * y (registers r .. r + 2 scratch), exactly (Dekker's TwoProduct:
 * x = xh + xl with xh of 12 significant bits, each partial product exact). */
static void two_prod_err(sched_t *s, dml_kblock_t *b, const dml_kval_t *x,
                         const dml_kval_t *y, const dml_kval_t *q, uint32_t r) {
  dml_kpool_t *p = s->pool;
  const dml_kval_t *k4096 = dml_kv_const(p, 4096.0f);
#define FN(f, a, c) dml_kv_fn(p, DML_KF_##f, (a), (c))
  /* r: x * 4096 + x (x * 4097 rounded, the same with or without an fma);
   * r = xh; r + 1 = xl; likewise r + 2, r + 3 for y, then the error */
  dml_kblock_add(b, assign(s, DML_KS_LET, r, FN(ADD, FN(MUL, x, k4096), x)));
  dml_kblock_add(b, assign(s, DML_KS_SET, r,
                           FN(SUB, dml_kv_reg(p, r), FN(SUB, dml_kv_reg(p, r), x))));
  dml_kblock_add(b, assign(s, DML_KS_LET, r + 1, FN(SUB, x, dml_kv_reg(p, r))));
  dml_kblock_add(b, assign(s, DML_KS_LET, r + 2, FN(ADD, FN(MUL, y, k4096), y)));
  dml_kblock_add(b,
                 assign(s, DML_KS_SET, r + 2,
                        FN(SUB, dml_kv_reg(p, r + 2), FN(SUB, dml_kv_reg(p, r + 2), y))));
  dml_kblock_add(b, assign(s, DML_KS_LET, r + 3, FN(SUB, y, dml_kv_reg(p, r + 2))));
  const dml_kval_t *xh = dml_kv_reg(p, r), *xl = dml_kv_reg(p, r + 1),
                   *yh = dml_kv_reg(p, r + 2), *yl = dml_kv_reg(p, r + 3);
  const dml_kval_t *e = FN(SUB, FN(MUL, xh, yh), q);
  e = FN(ADD, e, FN(MUL, xh, yl));
  e = FN(ADD, e, FN(MUL, xl, yh));
  e = FN(ADD, e, FN(MUL, xl, yl));
  dml_kblock_add(b, assign(s, DML_KS_SET, r + 3, e));
#undef FN
}

void dml_krow_prod_comp(sched_t *s, dml_kernel_t *K, dml_kblock_t *b, const dml_kidx_t *n,
                        int32_t var, dml_krow_value_fn value, void *ctx, uint32_t reg,
                        uint32_t tile) {
  dml_kpool_t *p = s->pool;
  krow_tile(K, tile, DML_KT_F32);
  krow_tile(K, tile + 1, DML_KT_F32);
  K->precise = 1;
  const dml_kidx_t *lid = dml_ki_var(p, DML_KVAR_LID_X);
  const int64_t span = (int64_t)DML_KROW_WG * ROW_UNROLL;
  /* reg: p, reg + 1: e, reg + 2: the element or the other pair's p,
   * reg + 3: the product, reg + 4: the other pair's e, reg + 5 .. reg + 8
   * two_prod_err's */
  const dml_kval_t *P = dml_kv_reg(p, reg), *E = dml_kv_reg(p, reg + 1),
                   *A = dml_kv_reg(p, reg + 2), *Q = dml_kv_reg(p, reg + 3),
                   *E2 = dml_kv_reg(p, reg + 4), *ERR = dml_kv_reg(p, reg + 8);
#define FN(f, a, c) dml_kv_fn(p, DML_KF_##f, (a), (c))
  dml_kblock_add(b, assign(s, DML_KS_LET, reg, dml_kv_const(p, 1.0f)));
  dml_kblock_add(b, assign(s, DML_KS_LET, reg + 1, dml_kv_const(p, 0.0f)));
  int exact = n->kind == DML_KI_CONST && n->c % span == 0;
  dml_kblock_t loop = {0};
  const dml_kidx_t *base = dml_ki_bin(
      p, DML_KI_ADD, dml_ki_bin(p, DML_KI_MUL, dml_ki_var(p, var), kc(s, span)), lid);
  for (uint32_t u = 0; u < ROW_UNROLL; u++) {
    const dml_kidx_t *j =
        u ? dml_ki_bin(p, DML_KI_ADD, base, kc(s, (int64_t)u * DML_KROW_WG)) : base;
    /* q = p * a; e = e * a + err(p * a); p = q */
    dml_kblock_t st = {0};
    dml_kblock_add(&st, assign(s, DML_KS_LET, reg + 2, value(s, j, ctx)));
    dml_kblock_add(&st, assign(s, DML_KS_LET, reg + 3, FN(MUL, P, A)));
    two_prod_err(s, &st, P, A, Q, reg + 5);
    dml_kblock_add(&st, assign(s, DML_KS_SET, reg + 1, FN(ADD, FN(MUL, E, A), ERR)));
    dml_kblock_add(&st, assign(s, DML_KS_SET, reg, Q));
    if (exact && st.first) {
      if (loop.last)
        loop.last->next = st.first;
      else
        loop.first = st.first;
      loop.last = st.last;
    } else if (!exact)
      dml_kblock_add(&loop, if_lt(s, j, n, st.first));
  }
  const dml_kidx_t *steps = dml_ki_bin(
      p, DML_KI_DIV, dml_ki_bin(p, DML_KI_ADD, n, kc(s, span - 1)), kc(s, span));
  dml_kblock_add(b, for_loop(s, var, steps, loop.first));
  for (uint32_t h = 0; h < 2; h++) {
    dml_kstmt_t *ts = dml_ks_new(p, DML_KS_TILE_STORE);
    if (ts) {
      ts->tile = tile + h;
      ts->idx = lid;
      ts->val = h ? E : P;
    }
    dml_kblock_add(b, ts);
  }
  dml_kblock_add(b, dml_ks_new(p, DML_KS_BARRIER));
  for (int64_t h = DML_KROW_WG / 2; h >= 1; h /= 2) {
    /* (p, e) of lid and lid + h: q = p p2, e = e p2 + p e2 + err(p p2) */
    const dml_kidx_t *o = dml_ki_bin(p, DML_KI_ADD, lid, kc(s, h));
    dml_kblock_t st = {0};
    dml_kblock_add(&st, assign(s, DML_KS_SET, reg, dml_kv_tile(p, tile, lid)));
    dml_kblock_add(&st, assign(s, DML_KS_SET, reg + 1, dml_kv_tile(p, tile + 1, lid)));
    dml_kblock_add(&st, assign(s, DML_KS_LET, reg + 2, dml_kv_tile(p, tile, o)));
    dml_kblock_add(&st, assign(s, DML_KS_LET, reg + 4, dml_kv_tile(p, tile + 1, o)));
    dml_kblock_add(&st, assign(s, DML_KS_LET, reg + 3, FN(MUL, P, A)));
    two_prod_err(s, &st, P, A, Q, reg + 5);
    dml_kblock_add(&st, assign(s, DML_KS_SET, reg + 1,
                               FN(ADD, FN(ADD, FN(MUL, E, A), FN(MUL, P, E2)), ERR)));
    dml_kstmt_t *t0 = dml_ks_new(p, DML_KS_TILE_STORE),
                *t1 = dml_ks_new(p, DML_KS_TILE_STORE);
    if (t0 && t1) {
      t0->tile = tile;
      t0->idx = lid;
      t0->val = Q;
      t1->tile = tile + 1;
      t1->idx = lid;
      t1->val = E;
    }
    dml_kblock_add(&st, t0);
    dml_kblock_add(&st, t1);
    dml_kblock_add(b, if_lt(s, lid, kc(s, h), st.first));
    dml_kblock_add(b, dml_ks_new(p, DML_KS_BARRIER));
  }
  dml_kblock_add(b, assign(s, DML_KS_SET, reg, dml_kv_tile(p, tile, kc(s, 0))));
  dml_kblock_add(b, assign(s, DML_KS_SET, reg + 1, dml_kv_tile(p, tile + 1, kc(s, 0))));
  /* p + e where e is finite (e - e == 0), else p */
  dml_kblock_add(b, assign(s, DML_KS_SET, reg,
                           dml_kv_select(p, FN(EQ, FN(SUB, E, E), dml_kv_const(p, 0.0f)),
                                         FN(ADD, P, E), P)));
  dml_kblock_add(b, dml_ks_new(p, DML_KS_BARRIER));
#undef FN
}

void dml_krow_scan(sched_t *s, dml_kernel_t *K, dml_kblock_t *b, const dml_kidx_t *n,
                   int32_t var, dml_kfn_t comb, const dml_kval_t *init, int exclusive,
                   dml_krow_value_fn value, dml_krow_store_fn store, void *ctx,
                   uint32_t reg, uint32_t tile) {
  dml_kpool_t *p = s->pool;
  if (!init) return;
  dml_kdtype_t t = init->dtype;
  krow_tile(K, tile, t);
  const int64_t span = (int64_t)DML_KROW_WG * ROW_UNROLL;
  const dml_kidx_t *lid = dml_ki_var(p, DML_KVAR_LID_X);
  const dml_kidx_t *wg = kc(s, DML_KROW_WG);
  /* registers: reg the carry of the chunks before, reg + 1 .. reg + 4 the
   * invocation's 4 prefixes, reg + 5 a tree step's value, reg + 6 the
   * exclusive prefix of the invocations before, reg + 7 the chunk's total,
   * reg + 8 the carry combined with reg + 6 */
#define R(i) dml_kv_reg_t(p, reg + (i), t)
#define C(a, b) dml_kv_fn(p, comb, (a), (b))
  dml_kblock_add(b, assign(s, DML_KS_LET, reg, init));
  dml_kblock_t loop = {0};
  const dml_kidx_t *base = dml_ki_bin(
      p, DML_KI_ADD, dml_ki_bin(p, DML_KI_MUL, dml_ki_var(p, var), kc(s, span)),
      dml_ki_bin(p, DML_KI_MUL, lid, kc(s, ROW_UNROLL)));
  const dml_kidx_t *j[ROW_UNROLL];
  for (uint32_t u = 0; u < ROW_UNROLL; u++) {
    j[u] = u ? dml_ki_bin(p, DML_KI_ADD, base, kc(s, u)) : base;
    dml_kblock_add(&loop, assign(s, DML_KS_LET, reg + 1 + u, init));
    dml_kblock_add(&loop, if_lt(s, j[u], n,
                                assign(s, DML_KS_SET, reg + 1 + u, value(s, j[u], ctx))));
  }
  for (uint32_t u = 1; u < ROW_UNROLL; u++)
    dml_kblock_add(&loop, assign(s, DML_KS_SET, reg + 1 + u, C(R(u), R(1 + u))));
  dml_kstmt_t *ts = dml_ks_new(p, DML_KS_TILE_STORE);
  if (ts) {
    ts->tile = tile;
    ts->idx = lid;
    ts->val = R(ROW_UNROLL);
  }
  dml_kblock_add(&loop, ts);
  dml_kblock_add(&loop, dml_ks_new(p, DML_KS_BARRIER));
  /* inclusive scan of the totals: tile[t] = total(0) .. total(t) */
  for (int64_t h = 1; h < DML_KROW_WG; h *= 2) {
    dml_kblock_add(&loop, assign(s, DML_KS_LET, reg + 5, dml_kv_tile_t(p, tile, lid, t)));
    dml_kblock_add(
        &loop,
        if_in(
            s, lid, kc(s, h), wg,
            assign(s, DML_KS_SET, reg + 5,
                   C(dml_kv_tile_t(p, tile, dml_ki_bin(p, DML_KI_SUB, lid, kc(s, h)), t),
                     R(5)))));
    dml_kblock_add(&loop, dml_ks_new(p, DML_KS_BARRIER));
    dml_kstmt_t *st = dml_ks_new(p, DML_KS_TILE_STORE);
    if (st) {
      st->tile = tile;
      st->idx = lid;
      st->val = R(5);
    }
    dml_kblock_add(&loop, st);
    dml_kblock_add(&loop, dml_ks_new(p, DML_KS_BARRIER));
  }
  dml_kblock_add(&loop, assign(s, DML_KS_LET, reg + 6, init));
  dml_kblock_add(
      &loop,
      if_in(s, lid, kc(s, 1), wg,
            assign(s, DML_KS_SET, reg + 6,
                   dml_kv_tile_t(p, tile, dml_ki_bin(p, DML_KI_SUB, lid, kc(s, 1)), t))));
  dml_kblock_add(&loop, assign(s, DML_KS_LET, reg + 7,
                               dml_kv_tile_t(p, tile, kc(s, DML_KROW_WG - 1), t)));
  dml_kblock_add(&loop, assign(s, DML_KS_LET, reg + 8, C(R(0), R(6))));
  for (uint32_t u = 0; u < ROW_UNROLL; u++) {
    const dml_kval_t *v = exclusive ? (u ? C(R(8), R(u)) : R(8)) : C(R(8), R(1 + u));
    dml_kblock_add(&loop, if_lt(s, j[u], n, store(s, j[u], v, ctx)));
  }
  /* every invocation has read the tile before the next chunk writes it */
  dml_kblock_add(&loop, dml_ks_new(p, DML_KS_BARRIER));
  dml_kblock_add(&loop, assign(s, DML_KS_SET, reg, C(R(0), R(7))));
#undef R
#undef C
  const dml_kidx_t *steps = dml_ki_bin(
      p, DML_KI_DIV, dml_ki_bin(p, DML_KI_ADD, n, kc(s, span - 1)), kc(s, span));
  dml_kblock_add(b, for_loop(s, var, steps, loop.first));
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

const dml_kidx_t *dml_kdot_setup(sched_t *s, dml_kernel_t *K, const dml_type_t *t,
                                 int64_t n_max, int32_t row_var, dml_kdot_t *d) {
  d->coop = n_max > DML_KLOOP_MAX;
  d->row_var = row_var;
  numel_syms(t, &d->rows);
  if (d->coop) return dml_krow_setup(s, K, d->rows, row_var, 0);
  K->local[0] = DML_KROW_WG;
  K->items[0] = d->rows;
  return dml_ki_var(s->pool, DML_KVAR_GID_X);
}

void dml_kdot_sum(sched_t *s, dml_kernel_t *K, const dml_kdot_t *d, dml_kblock_t *b,
                  const dml_kidx_t *n, int32_t var, const dml_kval_t *init,
                  dml_krow_value_fn value, void *ctx, uint32_t reg) {
  dml_kpool_t *p = s->pool;
  if (!init) return;
  uint32_t used = reg + (d->coop ? ROW_UNROLL : 1);
  if (K->n_regs < used) K->n_regs = used;
  if (d->coop) {
    dml_krow_reduce_t(s, K, b, n, var, DML_KF_ADD, init, value, ctx, reg, 0);
    return;
  }
  dml_kblock_add(b, assign(s, DML_KS_LET, reg, init));
  dml_kblock_add(
      b, for_loop(s, var, n,
                  assign(s, DML_KS_SET, reg,
                         dml_kv_fn(p, DML_KF_ADD, dml_kv_reg_t(p, reg, init->dtype),
                                   value(s, dml_ki_var(p, var), ctx)))));
}

void dml_kdot_finish(sched_t *s, dml_kernel_t *K, const dml_kdot_t *d,
                     const dml_kidx_t *out, dml_kblock_t *b, dml_kstmt_t *tail) {
  dml_kpool_t *p = s->pool;
  if (!d->coop) {
    dml_kblock_add(b, tail);
    K->body = if_lt(s, out, dml_ki_lin(p, d->rows), b->first);
    return;
  }
  dml_kblock_add(b, if_lt(s, dml_ki_var(p, DML_KVAR_LID_X), kc(s, 1), tail));
  K->body = dml_krow_finish(s, d->rows, d->row_var, b->first);
}

void dml_kdot_fold(sched_t *s, dml_kernel_t *K, const dml_kdot_t *d, dml_kblock_t *b,
                   const dml_kidx_t *n, int32_t var, dml_krow_stmt_fn body, void *ctx,
                   uint32_t reg, dml_kdtype_t t) {
  dml_kpool_t *p = s->pool;
  if (K->n_regs < reg + 1) K->n_regs = reg + 1;
  if (!d->coop) {
    dml_kblock_add(b, for_loop(s, var, n, body(s, dml_ki_var(p, var), ctx)));
    return;
  }
  krow_tile(K, 0, t);
  const int64_t ch = DML_KLOOP_MAX / 2;
  const dml_kidx_t *lid = dml_ki_var(p, DML_KVAR_LID_X), *st = dml_ki_var(p, var);
  const dml_kidx_t *j = kadd(s, kmul(s, st, kc(s, ch)), dml_ki_var(p, var + 1));
  /* lavapipe runs a workgroup's invocations as SIMD lanes (8 or 16 to a
   * group) and counts a loop's iterations per group: stage st goes to
   * invocation (st % 32) * 8 + st / 32 % 8, so 32 stages in a row fall in
   * different groups of 8 */
  const dml_kidx_t *mine =
      kadd(s, kmul(s, dml_ki_bin(p, DML_KI_MOD, st, kc(s, 32)), kc(s, 8)),
           dml_ki_bin(p, DML_KI_MOD, dml_ki_bin(p, DML_KI_DIV, st, kc(s, 32)), kc(s, 8)));
  /* stage st goes on from the tile's value (stage 0: its own register)
   * over terms st * ch .. st * ch + ch - 1 */
  const dml_kidx_t *stages =
      dml_ki_bin(p, DML_KI_DIV, kadd(s, n, kc(s, ch - 1)), kc(s, ch));
  dml_kblock_t stage = {0};
  dml_kblock_add(&stage,
                 if_in(s, st, kc(s, 1), stages,
                       assign(s, DML_KS_SET, reg, dml_kv_tile_t(p, 0, kc(s, 0), t))));
  dml_kblock_add(&stage,
                 for_loop(s, var + 1, kc(s, ch), if_lt(s, j, n, body(s, j, ctx))));
  dml_kstmt_t *ts = dml_ks_new(p, DML_KS_TILE_STORE);
  if (ts) {
    ts->tile = 0;
    ts->idx = kc(s, 0);
    ts->val = dml_kv_reg_t(p, reg, t);
  }
  dml_kblock_add(&stage, ts);
  dml_kblock_t each = {0};
  dml_kblock_add(&each, if_in(s, lid, mine, kadd(s, mine, kc(s, 1)), stage.first));
  dml_kblock_add(&each, dml_ks_new(p, DML_KS_BARRIER));
  dml_kblock_add(b, for_loop(s, var, stages, each.first));
  /* the last stage's result (none: the register as it was), read by every
   * invocation before a next row's stage 0 writes the tile */
  dml_kblock_add(b, if_lt(s, kc(s, 0), stages,
                          assign(s, DML_KS_SET, reg, dml_kv_tile_t(p, 0, kc(s, 0), t))));
  dml_kblock_add(b, dml_ks_new(p, DML_KS_BARRIER));
}
