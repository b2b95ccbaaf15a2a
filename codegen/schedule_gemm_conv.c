/* schedule_gemm_conv.c — the scheduler's GEMM and window forms: Gemm and
 * MatMul (the K-split form for small M, the small transposed-B form, the
 * shared-memory tiled form, the tensor-core attachment the CUDA renderer
 * reads, batched MatMul), Conv (direct, with its fused elementwise
 * epilogue), MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool,
 * ConvTranspose, and the training gradients ConvWeightGrad, ConvInputGrad
 * MaxPoolGrad and AveragePoolGrad. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dml_cpu.h"
#include "dml_ew.h"
#include "dml_shape.h"
#include "schedule_common.h"

const char *dml_ksched_gemm_reject(sched_t *s, const dml_pkg_node_t *n, gemm_shape_t *o) {
  memset(o, 0, sizeof *o);
  o->ksym = -1;
  const dml_pkg_value_t *y = val(s, n->outputs[0]);
  o->a = val(s, n->inputs[0]);
  o->b = val(s, n->inputs[1]);
  o->c = n->n_inputs > 2 ? val(s, n->inputs[2]) : NULL;
  o->y = y;
  if (!o->a || !o->b || !y) return "absent input";
  dml_dtype_t t = y->type.dtype;
  if (t != DML_DTYPE_F32 && t != DML_DTYPE_F16 && t != DML_DTYPE_BF16)
    return "only f32, f16 and bf16 are emitted";
  if (o->a->type.dtype != t || o->b->type.dtype != t || (o->c && o->c->type.dtype != t))
    return "operands of mixed dtypes";
  if (!typed_ok(o->a) || !typed_ok(o->b) || (o->c && !typed_ok(o->c)) || !typed_ok(y))
    return "misaligned value";
  o->alpha = 1.0;
  o->beta = 1.0;
  if (n->op == DML_OP_GEMM) {
    o->ta = (int)dml_attr_int(n->attrs, n->n_attrs, "transA", 0);
    o->tb = (int)dml_attr_int(n->attrs, n->n_attrs, "transB", 0);
    o->alpha = dml_attr_float(n->attrs, n->n_attrs, "alpha", 1.0);
    o->beta = dml_attr_float(n->attrs, n->n_attrs, "beta", 1.0);
    if (o->a->type.rank != 2 || o->b->type.rank != 2) return "Gemm operands must be 2-D";
    const dml_dim_t *ad = o->a->type.dims;
    o->m = (dml_klin_t){ad[o->ta ? 1 : 0].value, ad[o->ta ? 1 : 0].sym, 0, 0};
    o->ksym = ad[o->ta ? 0 : 1].sym;
    o->k = ad[o->ta ? 0 : 1].value;
  } else {
    /* MatMul: A [..., M, K] (leading dims folded into M), B [K, N]. */
    if (o->b->type.rank != 2) return "MatMul with a batched right operand";
    if (o->a->type.rank < 2) return "MatMul with a 1-D left operand";
    dml_type_t lead = o->a->type;
    lead.rank--;
    /* M may be a product of symbols (batch * sequence length): counts and
     * bounds checks take the run-time product */
    if (!type_numel(&lead, &o->m)) return "a symbol used by two dims or too many symbols";
    const dml_dim_t kd = o->a->type.dims[o->a->type.rank - 1];
    o->ksym = kd.sym;
    o->k = kd.value;
  }
  const dml_dim_t *bd = o->b->type.dims;
  if (bd[o->tb ? 0 : 1].sym >= 0) return "symbolic N";
  o->n = bd[o->tb ? 0 : 1].value;
  if (bd[o->tb ? 1 : 0].value != o->k || bd[o->tb ? 1 : 0].sym != o->ksym)
    return "K mismatch";
  /* the work estimates are affine in one symbol */
  if (o->ksym >= 0 && o->m.sym >= 0) return "symbolic M and K";
  if (o->c && o->c->type.rank > 2) return "bias of rank > 2";
  return NULL;
}
#define GEMM_SPLIT 8  /* small form: K chunks = rows per workgroup */
#define GEMM_SCOLS 32 /* small form: columns per workgroup */

typedef struct gemm_cfg {
  int64_t bm, bn, tm, tn, bk, threads;
} gemm_cfg_t;

static const dml_kidx_t *kadd(dml_kpool_t *p, const dml_kidx_t *a, const dml_kidx_t *b) {
  return dml_ki_bin(p, DML_KI_ADD, a, b);
}
static const dml_kidx_t *kmul(dml_kpool_t *p, const dml_kidx_t *a, int64_t c) {
  return dml_ki_bin(p, DML_KI_MUL, a, dml_ki_const(p, c));
}
static const dml_kidx_t *kaddc(dml_kpool_t *p, const dml_kidx_t *a, int64_t c) {
  return dml_ki_bin(p, DML_KI_ADD, a, dml_ki_const(p, c));
}

/* K as an index expression (k, or k * its symbol's value). */
static const dml_kidx_t *gemm_k(dml_kpool_t *p, const gemm_shape_t *gs) {
  return dml_ki_lin(p, (dml_klin_t){gs->k, gs->ksym, 0, 0});
}

/* ceil(K / d): a constant, or (K + d - 1) / d from the push constants. */
static const dml_kidx_t *gemm_k_ceil(dml_kpool_t *p, const gemm_shape_t *gs, int64_t d) {
  if (gs->ksym < 0) return dml_ki_const(p, (gs->k + d - 1) / d);
  return dml_ki_bin(p, DML_KI_DIV, kaddc(p, gemm_k(p, gs), d - 1), dml_ki_const(p, d));
}

/* 1 when K may not be a multiple of d (K symbolic, or K % d != 0). */
static int gemm_k_ragged(const gemm_shape_t *gs, int64_t d) {
  return gs->ksym >= 0 || gs->k % d != 0;
}

/* The value of the anchor at (row, col) from its accumulator `acc`:
 * alpha * acc + beta * C (Gemm's bias, broadcast), in f32, then rounded to
 * the output's dtype (f16/bf16: nearest even, once, as the CPU's store of
 * its double sum). */
static const dml_kval_t *gemm_result(sched_t *s, const gemm_shape_t *gs,
                                     const dml_kval_t *acc, const dml_kidx_t *row,
                                     const dml_kidx_t *col) {
  dml_kpool_t *p = s->pool;
  const dml_kval_t *r = acc;
  if (gs->alpha != 1.0)
    r = dml_kv_fn(p, DML_KF_MUL, dml_kv_const(p, (float)gs->alpha), r);
  if (gs->c && gs->beta != 0.0) {
    dml_type_t out2 = {DML_DTYPE_F32, 2, {{gs->m.c, gs->m.sym}, {gs->n, -1}}};
    const dml_kidx_t *coord[2] = {row, col};
    const dml_kval_t *cv =
        load_f32(s, gs->c, at(s, gs->c, bcast_index(s, &gs->c->type, &out2, coord)));
    if (gs->beta != 1.0)
      cv = dml_kv_fn(p, DML_KF_MUL, dml_kv_const(p, (float)gs->beta), cv);
    r = dml_kv_fn(p, DML_KF_ADD, r, cv);
  }
  return kdt(gs->y) == DML_KT_F32 ? r : dml_kv_cast(p, kdt(gs->y), r);
}

/* Appends the epilogue of output element (row, col): the result, then the
 * group's chain (its nodes see the result as 2-D [M, N]: their operands
 * broadcast against the group's output type, whose trailing dim is N),
 * inside the bounds checks asked for. The chain's work estimate is counted
 * by the first call only (`*counted`). */
static void gemm_epilogue(sched_t *s, dml_kernel_t *K, const group_t *G,
                          const gemm_shape_t *gs, dml_kblock_t *b, const dml_kval_t *acc,
                          const dml_kidx_t *row, const dml_kidx_t *col, int check_m,
                          int check_n, int *counted) {
  dml_kpool_t *p = s->pool;
  const dml_kidx_t *flat = kadd(p, kmul(p, row, gs->n), col);
  if (gs->bat) flat = kadd(p, kmul(p, gs->bat, gs->m.c * gs->n), flat);
  const dml_kidx_t *ecoord[DML_MAX_RANK];
  coords_of(s, G->out, flat, ecoord);
  dml_kblock_t epi = {0};
  dml_klin_t fl = K->flops, by = K->bytes;
  dml_ksched_emit_chain(s, K, G, &epi, gemm_result(s, gs, acc, row, col), ecoord, flat);
  if (*counted) K->flops = fl, K->bytes = by;
  *counted = 1;
  if (!check_m && !check_n) {
    block_append(b, &epi);
    return;
  }
  dml_kstmt_t *st = epi.first;
  if (check_n) st = if_lt(s, col, dml_ki_const(p, gs->n), st);
  if (check_m) st = if_lt(s, row, dml_ki_lin(p, gs->m), st);
  dml_kblock_add(b, st);
}

/* Element index of A at (row m, column k) and of B at (row k, column n). */
static const dml_kidx_t *a_index(sched_t *s, const gemm_shape_t *gs, const dml_kidx_t *m,
                                 const dml_kidx_t *k) {
  dml_kpool_t *p = s->pool;
  const dml_kidx_t *e =
      gs->ta ? kadd(p, dml_ki_bin(p, DML_KI_MUL, k, dml_ki_lin(p, gs->m)), m)
             : kadd(p, dml_ki_bin(p, DML_KI_MUL, m, gemm_k(p, gs)), k);
  if (gs->bat) e = kadd(p, kmul(p, gs->bat, gs->m.c * gs->k), e);
  return at(s, gs->a, e);
}
static const dml_kidx_t *b_index(sched_t *s, const gemm_shape_t *gs, const dml_kidx_t *k,
                                 const dml_kidx_t *n) {
  dml_kpool_t *p = s->pool;
  const dml_kidx_t *e = gs->tb ? kadd(p, dml_ki_bin(p, DML_KI_MUL, n, gemm_k(p, gs)), k)
                               : kadd(p, kmul(p, k, gs->n), n);
  if (gs->bat) e = kadd(p, kmul(p, gs->bat, gs->k * gs->n), e);
  return at(s, gs->b, e);
}

/* reg = load, or 0 outside the bounds (each check `lhs < hi` when lhs is
 * not NULL). */
static void guarded_load(sched_t *s, dml_kblock_t *b, uint32_t reg, const dml_kval_t *v,
                         const dml_kidx_t *l0, const dml_kidx_t *h0, const dml_kidx_t *l1,
                         const dml_kidx_t *h1) {
  dml_kpool_t *p = s->pool;
  if (!l0 && !l1) {
    dml_kblock_add(b, assign(s, DML_KS_SET, reg, v));
    return;
  }
  dml_kblock_add(b, assign(s, DML_KS_SET, reg, dml_kv_const(p, 0.0f)));
  dml_kstmt_t *st = assign(s, DML_KS_SET, reg, v);
  if (l1) st = if_lt(s, l1, h1, st);
  if (l0) st = if_lt(s, l0, h0, st);
  dml_kblock_add(b, st);
}

/* v[0] + ... + v[n-1] as a balanced tree (a short dependency chain). */
static const dml_kval_t *sum_tree(dml_kpool_t *p, const dml_kval_t *const *v, int64_t n) {
  if (n == 1) return v[0];
  return dml_kv_fn(p, DML_KF_ADD, sum_tree(p, v, n / 2),
                   sum_tree(p, v + n / 2, n - n / 2));
}

/* The K loop of the small-M forms: for each K step t (0 <= t < T), k(t) =
 * base + t * stride; b = B[k, col] (or B[col, k] transposed), and for each
 * of the R rows, acc_r += A[row0 + r, k] * b. With K static the steps are
 * unrolled in groups of GEMM_KU (all T of them when T <= GEMM_KU_FULL):
 * a group first loads its B values into registers, then each row's
 * products, so that the loads of a group are in flight together (batch-1
 * inference is bound by load latency, not bandwidth); only the steps that
 * can pass K (t >= n_safe) carry a bounds check. A symbolic K keeps one
 * step per iteration. Registers: acc .. acc + R - 1 the sums, breg ..
 * breg + GEMM_KU_FULL - 1 the B values. */
#define GEMM_KU 8       /* K steps per unrolled group */
#define GEMM_KU_FULL 32 /* at most this many steps: no loop at all */
static void ksplit_steps(sched_t *s, dml_kblock_t *out, const gemm_shape_t *gs,
                         const dml_kidx_t *const *k, const int *check, int n,
                         const dml_kidx_t *row0, const dml_kidx_t *col, int64_t R,
                         int check_m, uint32_t acc, uint32_t breg) {
  dml_kpool_t *p = s->pool;
  const dml_kidx_t *M = dml_ki_lin(p, gs->m), *Kk = gemm_k(p, gs);
  for (int j = 0; j < n; j++) {
    const dml_kval_t *b = load_f32(s, gs->b, b_index(s, gs, k[j], col));
    if (check[j]) {
      dml_kblock_add(out,
                     assign(s, DML_KS_SET, breg + (uint32_t)j, dml_kv_const(p, 0.0f)));
      dml_kblock_add(out,
                     if_lt(s, k[j], Kk, assign(s, DML_KS_SET, breg + (uint32_t)j, b)));
    } else {
      dml_kblock_add(out, assign(s, DML_KS_SET, breg + (uint32_t)j, b));
    }
  }
  for (int64_t r = 0; r < R; r++) {
    const dml_kidx_t *row = kaddc(p, row0, r);
    dml_kblock_t rb = {0};
    for (int j = 0; j < n; j++) {
      const dml_kval_t *prod =
          dml_kv_fn(p, DML_KF_MUL, load_f32(s, gs->a, a_index(s, gs, row, k[j])),
                    dml_kv_reg(p, breg + (uint32_t)j));
      dml_kstmt_t *st =
          assign(s, DML_KS_SET, acc + (uint32_t)r,
                 dml_kv_fn(p, DML_KF_ADD, dml_kv_reg(p, acc + (uint32_t)r), prod));
      dml_kblock_add(&rb, check[j] ? if_lt(s, k[j], Kk, st) : st);
    }
    if (check_m)
      dml_kblock_add(out, if_lt(s, row, M, rb.first));
    else
      block_append(out, &rb);
  }
}

static void ksplit_loop(sched_t *s, dml_kblock_t *out, const gemm_shape_t *gs,
                        const dml_kidx_t *base, int64_t stride, const dml_kidx_t *trip,
                        int64_t T, int64_t n_safe, const dml_kidx_t *row0,
                        const dml_kidx_t *col, int64_t R, int check_m, uint32_t acc,
                        uint32_t breg) {
  dml_kpool_t *p = s->pool;
  const int32_t iv = DML_KVAR_FIRST_LOOP;
  const dml_kidx_t *k[GEMM_KU_FULL];
  int check[GEMM_KU_FULL];
  for (int j = 0; j < GEMM_KU_FULL; j++)
    dml_kblock_add(out, assign(s, DML_KS_LET, breg + (uint32_t)j, dml_kv_const(p, 0.0f)));
  if (gs->ksym >= 0) { /* one step per iteration, bounds-checked */
    dml_kblock_t step = {0};
    k[0] = kadd(p, base, kmul(p, dml_ki_var(p, iv), stride));
    check[0] = 1;
    ksplit_steps(s, &step, gs, k, check, 1, row0, col, R, check_m, acc, breg);
    dml_kblock_add(out, for_loop(s, iv, trip, step.first));
    return;
  }
  int64_t groups = T <= GEMM_KU_FULL ? 0 : n_safe / GEMM_KU;
  if (groups > 0) {
    dml_kblock_t step = {0};
    for (int j = 0; j < GEMM_KU; j++) {
      k[j] = kadd(p, base,
                  kmul(p, kaddc(p, kmul(p, dml_ki_var(p, iv), GEMM_KU), j), stride));
      check[j] = 0;
    }
    ksplit_steps(s, &step, gs, k, check, GEMM_KU, row0, col, R, check_m, acc, breg);
    dml_kblock_add(out, for_loop(s, iv, dml_ki_const(p, groups), step.first));
  }
  /* the rest, unrolled: at most GEMM_KU_FULL steps at a time */
  for (int64_t t0 = groups * GEMM_KU; t0 < T; t0 += GEMM_KU_FULL) {
    int n = (int)(T - t0 < GEMM_KU_FULL ? T - t0 : GEMM_KU_FULL);
    for (int j = 0; j < n; j++) {
      k[j] = kadd(p, base, dml_ki_const(p, (t0 + j) * stride));
      check[j] = t0 + j >= n_safe;
    }
    ksplit_steps(s, out, gs, k, check, n, row0, col, R, check_m, acc, breg);
  }
}

/* The small-M form (see above). */
static void emit_gemm_small(sched_t *s, dml_kernel_t *K, const group_t *G,
                            const gemm_shape_t *gs) {
  dml_kpool_t *p = s->pool;
  const int64_t R = GEMM_SPLIT, X = GEMM_SCOLS;
  K->local[0] = (uint32_t)X;
  K->local[1] = (uint32_t)R;
  K->items[0] = (dml_klin_t){gs->n, -1, 0, 0};
  K->items[1] = gs->m; /* ceil(M / 8) workgroups of 8 rows */
  K->n_tiles = 1;
  K->tile_elems[0] = (uint32_t)(R * R * X);
  const dml_kidx_t *col = dml_ki_var(p, DML_KVAR_GID_X),
                   *lx = dml_ki_var(p, DML_KVAR_LID_X),
                   *ly = dml_ki_var(p, DML_KVAR_LID_Y),
                   *wy = dml_ki_var(p, DML_KVAR_WG_Y);
  int check_m = !(gs->m.sym < 0 && (gs->m.c + gs->m.c0) % R == 0);
  int check_n = gs->n % X != 0;
  const dml_kidx_t *chunk = gemm_k_ceil(p, gs, R);
  const uint32_t acc = G->n, breg = acc + (uint32_t)R, sum = breg + GEMM_KU_FULL;
  const dml_kidx_t *row0 = kmul(p, wy, R);
  /* step t of chunk y: k = y * chunk + t, valid for every y while
   * (R - 1) * chunk + t < K */
  const int64_t ch = (gs->k + R - 1) / R, safe = gs->k - (R - 1) * ch;
  dml_kblock_t kloop = {0};
  ksplit_loop(s, &kloop, gs, dml_ki_bin(p, DML_KI_MUL, ly, chunk), 1, chunk, ch,
              safe > 0 ? safe : 0, row0, col, R, check_m, acc, breg);
  dml_kblock_t body = {0};
  for (int64_t r = 0; r < R; r++)
    dml_kblock_add(&body,
                   assign(s, DML_KS_LET, acc + (uint32_t)r, dml_kv_const(p, 0.0f)));
  if (check_n)
    dml_kblock_add(&body, if_lt(s, col, dml_ki_const(p, gs->n), kloop.first));
  else
    block_append(&body, &kloop);
  /* tile0[(y * 8 + r) * 32 + x] = acc_r; row y = sum over the chunks */
  for (int64_t r = 0; r < R; r++) {
    dml_kstmt_t *st = dml_ks_new(p, DML_KS_TILE_STORE);
    if (!st) return;
    st->tile = 0;
    st->idx = kadd(p, kmul(p, ly, R * X), kaddc(p, lx, r * X));
    st->val = dml_kv_reg(p, acc + (uint32_t)r);
    dml_kblock_add(&body, st);
  }
  dml_kblock_add(&body, dml_ks_new(p, DML_KS_BARRIER));
  const dml_kval_t *part[GEMM_SPLIT];
  for (int64_t j = 0; j < R; j++)
    part[j] = dml_kv_tile(p, 0, kadd(p, kmul(p, ly, X), kaddc(p, lx, j * R * X)));
  dml_kblock_add(&body, assign(s, DML_KS_LET, sum, sum_tree(p, part, R)));
  int counted = 0;
  gemm_epilogue(s, K, G, gs, &body, dml_kv_reg(p, sum), kadd(p, row0, ly), col, check_m,
                check_n, &counted);
  K->body = body.first;
  K->n_regs = sum + 1;
}

/* Records K's product and an epilogue at (GID_Y, GID_X) reading register
 * G->n (dml_kgemm_t), for renderers with their own GEMM main loop. The
 * kernel's work estimates and registers are left as they were. */
void dml_ksched_attach_gemm(sched_t *s, dml_kernel_t *K, const group_t *G,
                            const gemm_shape_t *gs) {
  dml_kpool_t *p = s->pool;
  dml_kgemm_t *m = (dml_kgemm_t *)dml_kpool_alloc(p, sizeof *m);
  if (!m) return;
  dml_klin_t flops = K->flops, bytes = K->bytes;
  uint32_t n_regs = K->n_regs;
  K->n_regs = 0;
  dml_kblock_t epi = {0};
  int counted = 0;
  gemm_epilogue(s, K, G, gs, &epi, dml_kv_reg(p, G->n), dml_ki_var(p, DML_KVAR_GID_Y),
                dml_ki_var(p, DML_KVAR_GID_X), 1, 1, &counted);
  m->epilogue = epi.first;
  m->acc_reg = G->n;
  m->n_regs = (K->n_regs > G->n ? K->n_regs : G->n) + 1;
  K->flops = flops;
  K->bytes = bytes;
  K->n_regs = n_regs;
  m->a_buf = buf_of(gs->a);
  m->b_buf = buf_of(gs->b);
  m->dtype = kdt(gs->a);
  m->a_off = (int64_t)(gs->a->offset / dml_kdtype_size(m->dtype));
  m->b_off = (int64_t)(gs->b->offset / dml_kdtype_size(m->dtype));
  m->ta = gs->ta;
  m->tb = gs->tb;
  m->m = gs->m;
  m->m_max = dml_ksched_lin_max(s, gs->m);
  m->n = gs->n;
  m->k = gs->k;
  K->gemm = m;
}

/* The small-M form of a transposed B (B is [N, K], rows contiguous in K):
 * a workgroup of 32 x 8 invocations covers 8 columns and 8 rows; the 32
 * invocations of a column (x) take every 32nd K index, so a warp reads 32
 * adjacent floats of B's row (and of A's rows when A is not transposed);
 * the 32 partial sums of (row, column) meet in a shared tile (rows padded to
 * 33 floats) and invocation (x < 8, y) adds them for row x, column y. */
static void emit_gemm_small_tb(sched_t *s, dml_kernel_t *K, const group_t *G,
                               const gemm_shape_t *gs) {
  dml_kpool_t *p = s->pool;
  const int64_t R = GEMM_SPLIT, L = 32, C = 8, S = L + 1;
  K->local[0] = (uint32_t)L;
  K->local[1] = (uint32_t)C;
  K->items[0] = (dml_klin_t){gs->n * (L / C), -1, 0, 0}; /* ceil(N / 8) workgroups */
  K->items[1] = gs->m;                                   /* ceil(M / 8) workgroups */
  K->n_tiles = 1;
  K->tile_elems[0] = (uint32_t)(C * R * S);
  const dml_kidx_t *lx = dml_ki_var(p, DML_KVAR_LID_X),
                   *ly = dml_ki_var(p, DML_KVAR_LID_Y);
  const dml_kidx_t *col = kadd(p, kmul(p, dml_ki_var(p, DML_KVAR_WG_X), C), ly);
  const dml_kidx_t *row0 = kmul(p, dml_ki_var(p, DML_KVAR_WG_Y), R);
  int check_m = !(gs->m.sym < 0 && (gs->m.c + gs->m.c0) % R == 0);
  int check_n = gs->n % C != 0;
  const uint32_t acc = G->n, breg = acc + (uint32_t)R, sum = breg + GEMM_KU_FULL;
  /* step t: k = t * 32 + x, valid for every x while (t + 1) * 32 <= K */
  dml_kblock_t kloop = {0};
  ksplit_loop(s, &kloop, gs, lx, L, gemm_k_ceil(p, gs, L), (gs->k + L - 1) / L, gs->k / L,
              row0, col, R, check_m, acc, breg);
  dml_kblock_t body = {0};
  for (int64_t r = 0; r < R; r++)
    dml_kblock_add(&body,
                   assign(s, DML_KS_LET, acc + (uint32_t)r, dml_kv_const(p, 0.0f)));
  if (check_n)
    dml_kblock_add(&body, if_lt(s, col, dml_ki_const(p, gs->n), kloop.first));
  else
    block_append(&body, &kloop);
  /* tile0[(y * 8 + r) * 33 + x] = acc_r */
  for (int64_t r = 0; r < R; r++) {
    dml_kstmt_t *st = dml_ks_new(p, DML_KS_TILE_STORE);
    if (!st) return;
    st->tile = 0;
    st->idx = kadd(p, kmul(p, ly, R * S), kaddc(p, lx, r * S));
    st->val = dml_kv_reg(p, acc + (uint32_t)r);
    dml_kblock_add(&body, st);
  }
  dml_kblock_add(&body, dml_ks_new(p, DML_KS_BARRIER));
  /* invocation (x < 8, y): row x, column y */
  const dml_kidx_t *base = kadd(p, kmul(p, ly, R * S), kmul(p, lx, S));
  const dml_kval_t *part[32];
  for (int64_t j = 0; j < L; j++) part[j] = dml_kv_tile(p, 0, kaddc(p, base, j));
  dml_kblock_t fin = {0};
  dml_kblock_add(&fin, assign(s, DML_KS_LET, sum, sum_tree(p, part, L)));
  int counted = 0;
  gemm_epilogue(s, K, G, gs, &fin, dml_kv_reg(p, sum), kadd(p, row0, lx), col, check_m,
                check_n, &counted);
  dml_kblock_add(&body, if_lt(s, lx, dml_ki_const(p, R), fin.first));
  K->body = body.first;
  K->n_regs = sum + 1;
}

/* Row (or column) of micro-tile entry i within the block: two groups of 4
 * adjacent entries, 4 * (lanes) apart. */
static const dml_kidx_t *micro_off(dml_kpool_t *p, const dml_kidx_t *t4, int64_t i,
                                   int64_t lanes, int64_t plus) {
  return kaddc(p, t4, (i / 4) * 4 * lanes + i % 4 + plus);
}

/* The register-blocked form with configuration `c` (see above). */
static void emit_gemm_tiled(sched_t *s, dml_kernel_t *K, const group_t *G,
                            const gemm_shape_t *gs0, const gemm_cfg_t *c) {
  dml_kpool_t *p = s->pool;
  gemm_shape_t gb = *gs0;
  const gemm_shape_t *gs = &gb;
  const int64_t BM = c->bm, BN = c->bn, TM = c->tm, TN = c->tn, BK = c->bk,
                T = c->threads;
  const int64_t RG = BM / TM, CG = BN / TN, SA = BM + 4, SB = BN + 4;
  const int64_t QA = BM * BK / T, QB = BN * BK / T;
  const dml_kidx_t *steps = gemm_k_ceil(p, gs, BK);
  K->local[0] = (uint32_t)T;
  if (gs->m.sym >= 0) {
    K->items[0] = gs->m; /* BM == T: ceil(M / BM) workgroups */
  } else {
    K->items[0] = (dml_klin_t){((gs->m.c + gs->m.c0 + BM - 1) / BM) * T, -1, 0, 0};
  }
  K->items[1] = (dml_klin_t){(gs->n + BN - 1) / BN, -1, 0, 0};
  K->n_tiles = 2;
  K->tile_elems[0] = (uint32_t)(BK * SA);
  K->tile_elems[1] = (uint32_t)(BK * SB);
  int check_m = !(gs->m.sym < 0 && (gs->m.c + gs->m.c0) % BM == 0);
  int check_n = gs->n % BN != 0, check_k = gemm_k_ragged(gs, BK);
  const dml_kidx_t *lid = dml_ki_var(p, DML_KVAR_LID_X);
  const dml_kidx_t *row0 = kmul(p, dml_ki_var(p, DML_KVAR_WG_X), BM),
                   *col0 = kmul(p, dml_ki_var(p, DML_KVAR_WG_Y), BN);
  if (gs->nb.c > 0) {
    /* batched (static M): workgroup x = product * MB + row block */
    const int64_t MB = (gs->m.c + BM - 1) / BM;
    const dml_kidx_t *wx = dml_ki_var(p, DML_KVAR_WG_X);
    K->items[0] = gs->nb;
    K->items[0].c *= MB * T;
    K->items[0].c0 *= MB * T;
    row0 = kmul(p, dml_ki_bin(p, DML_KI_MOD, wx, dml_ki_const(p, MB)), BM);
    gb.bat = dml_ki_bin(p, DML_KI_DIV, wx, dml_ki_const(p, MB));
  }
  const dml_kidx_t *M = dml_ki_lin(p, gs->m), *N = dml_ki_const(p, gs->n),
                   *Kk = gemm_k(p, gs);
  const dml_kidx_t *tx4 = kmul(p, dml_ki_bin(p, DML_KI_MOD, lid, dml_ki_const(p, CG)), 4),
                   *ty4 = kmul(p, dml_ki_bin(p, DML_KI_DIV, lid, dml_ki_const(p, CG)), 4);
  /* registers: the group's values, then acc[TM*TN], a[TM], b[TN], the
   * prefetched A[QA] and B[QB] */
  const uint32_t acc = G->n, ra = acc + (uint32_t)(TM * TN), rb = ra + (uint32_t)TM,
                 pa = rb + (uint32_t)TN, pb = pa + (uint32_t)QA;
  int32_t tvar = DML_KVAR_FIRST_LOOP;
  /* Staging element q of this invocation: flat e = lid + T * q of a tile
   * whose fast dim has `inner` entries -> (inner index, outer index). */
#define GEMM_SPLIT_IDX(inner, q, out_in, out_out)                                \
  do {                                                                           \
    if (T % (inner) == 0) {                                                      \
      out_in = dml_ki_bin(p, DML_KI_MOD, lid, dml_ki_const(p, inner));           \
      out_out = kaddc(p, dml_ki_bin(p, DML_KI_DIV, lid, dml_ki_const(p, inner)), \
                      (q) * (T / (inner)));                                      \
    } else {                                                                     \
      out_in = kaddc(p, lid, ((q) % ((inner) / T)) * T);                         \
      out_out = dml_ki_const(p, (q) / ((inner) / T));                            \
    }                                                                            \
  } while (0)
  /* prefetch of the step starting at K index kb: registers pa, pb */
  dml_kblock_t pre[2] = {{0}, {0}};
  const dml_kidx_t *kbase[2] = {dml_ki_const(p, 0),
                                kmul(p, kaddc(p, dml_ki_var(p, tvar), 1), BK)};
  dml_kblock_t store = {0};
  for (int w = 0; w < 2; w++) {
    for (int64_t q = 0; q < QA; q++) {
      const dml_kidx_t *m, *kk;
      if (gs->ta)
        GEMM_SPLIT_IDX(BM, q, m, kk);
      else
        GEMM_SPLIT_IDX(BK, q, kk, m);
      const dml_kidx_t *mg = kadd(p, row0, m), *kg = kadd(p, kbase[w], kk);
      guarded_load(s, &pre[w], pa + (uint32_t)q,
                   load_f32(s, gs->a, a_index(s, gs, mg, kg)), check_m ? mg : NULL, M,
                   check_k ? kg : NULL, Kk);
      if (w == 0) {
        dml_kstmt_t *st = dml_ks_new(p, DML_KS_TILE_STORE);
        if (!st) return;
        st->tile = 0;
        st->idx = kadd(p, kmul(p, kk, SA), m);
        st->val = dml_kv_reg(p, pa + (uint32_t)q);
        dml_kblock_add(&store, st);
      }
    }
    for (int64_t q = 0; q < QB; q++) {
      const dml_kidx_t *n, *kk;
      if (gs->tb)
        GEMM_SPLIT_IDX(BK, q, kk, n);
      else
        GEMM_SPLIT_IDX(BN, q, n, kk);
      const dml_kidx_t *ng = kadd(p, col0, n), *kg = kadd(p, kbase[w], kk);
      guarded_load(s, &pre[w], pb + (uint32_t)q,
                   load_f32(s, gs->b, b_index(s, gs, kg, ng)), check_k ? kg : NULL, Kk,
                   check_n ? ng : NULL, N);
      if (w == 0) {
        dml_kstmt_t *st = dml_ks_new(p, DML_KS_TILE_STORE);
        if (!st) return;
        st->tile = 1;
        st->idx = kadd(p, kmul(p, kk, SB), n);
        st->val = dml_kv_reg(p, pb + (uint32_t)q);
        dml_kblock_add(&store, st);
      }
    }
  }
#undef GEMM_SPLIT_IDX
  /* one K step: stage, barrier, prefetch the next, multiply, barrier */
  dml_kblock_t step = store;
  dml_kblock_add(&step, dml_ks_new(p, DML_KS_BARRIER));
  if (gs->ksym >= 0 || gs->k > BK)
    dml_kblock_add(&step,
                   if_lt(s, kaddc(p, dml_ki_var(p, tvar), 1), steps, pre[1].first));
  for (int64_t kk = 0; kk < BK; kk++) {
    for (int64_t i = 0; i < TM; i++)
      dml_kblock_add(&step, assign(s, DML_KS_SET, ra + (uint32_t)i,
                                   dml_kv_tile(p, 0, micro_off(p, ty4, i, RG, kk * SA))));
    for (int64_t j = 0; j < TN; j++)
      dml_kblock_add(&step, assign(s, DML_KS_SET, rb + (uint32_t)j,
                                   dml_kv_tile(p, 1, micro_off(p, tx4, j, CG, kk * SB))));
    for (int64_t i = 0; i < TM; i++)
      for (int64_t j = 0; j < TN; j++) {
        uint32_t r = acc + (uint32_t)(i * TN + j);
        dml_kblock_add(
            &step,
            assign(s, DML_KS_SET, r,
                   dml_kv_fn(p, DML_KF_ADD, dml_kv_reg(p, r),
                             dml_kv_fn(p, DML_KF_MUL, dml_kv_reg(p, ra + (uint32_t)i),
                                       dml_kv_reg(p, rb + (uint32_t)j)))));
      }
  }
  dml_kblock_add(&step, dml_ks_new(p, DML_KS_BARRIER));
  dml_kblock_t body = {0};
  for (int64_t i = 0; i < TM * TN; i++)
    dml_kblock_add(&body,
                   assign(s, DML_KS_LET, acc + (uint32_t)i, dml_kv_const(p, 0.0f)));
  block_append(&body, &pre[0]);
  dml_kblock_add(&body, for_loop(s, tvar, steps, step.first));
  int counted = 0;
  for (int64_t i = 0; i < TM; i++)
    for (int64_t j = 0; j < TN; j++)
      gemm_epilogue(s, K, G, gs, &body, dml_kv_reg(p, acc + (uint32_t)(i * TN + j)),
                    kadd(p, row0, micro_off(p, ty4, i, RG, 0)),
                    kadd(p, col0, micro_off(p, tx4, j, CG, 0)), check_m, check_n,
                    &counted);
  K->body = body.first;
  K->n_regs = pb + (uint32_t)QB;
}

void dml_ksched_emit_gemm_group(sched_t *s, const group_t *G, const gemm_shape_t *gs) {
  dml_kernel_t *K = new_kernel(s, DML_KK_GEMM);
  if (!K) return;
  set_nodes(s, K, G);
  int64_t mmax = lin_max(s, gs->m);
  if (mmax <= GEMM_SMALL_M) {
    if (gs->tb)
      emit_gemm_small_tb(s, K, G, gs);
    else
      emit_gemm_small(s, K, G, gs);
  } else {
    gemm_cfg_t c;
    if (gs->m.sym >= 0) {
      /* BM == threads: 256 x 64 for large bounds, else 64 x 64 */
      c = mmax >= 1024 ? (gemm_cfg_t){256, 64, 8, 8, 8, 256}
                       : (gemm_cfg_t){64, 64, 8, 8, 8, 64};
    } else {
      int64_t blocks = ((mmax + 127) / 128) * ((gs->n + 127) / 128);
      c = blocks >= 128 ? (gemm_cfg_t){128, 128, 8, 8, 8, 256}
                        : (gemm_cfg_t){64, 64, 4, 4, 8, 256};
    }
    emit_gemm_tiled(s, K, G, gs, &c);
  }
  dml_klin_t fl = gs->m;
  if (gs->ksym >= 0) fl.sym = gs->ksym; /* M is static then */
  fl.c *= 2 * gs->n * gs->k;
  fl.c0 *= 2 * gs->n * gs->k;
  lin_add(&K->flops, fl, 1);
  dml_klin_t ab = gs->m;
  if (gs->ksym >= 0) ab.sym = gs->ksym;
  const int64_t esz = (int64_t)dml_dtype_size(gs->a->type.dtype);
  lin_add(&K->bytes, ab, esz * gs->k);
  lin_add(&K->bytes, (dml_klin_t){gs->k * gs->n, gs->ksym, 0, 0}, esz);
}

/* Fills the window geometry of Conv/MaxPool/AveragePool node `n`, or of
 * ConvWeightGrad(dY, X) -> dW and MaxPoolGrad / AveragePoolGrad(dY, X) ->
 * dX (the geometry of the forward op whose gradient it is: x = X, y = dY;
 * w = dW). */
const char *dml_ksched_win_reject(sched_t *s, const dml_pkg_node_t *n, win_shape_t *o) {
  memset(o, 0, sizeof *o);
  int wgrad = n->op == DML_OP_CONV_WEIGHT_GRAD;
  int conv = n->op == DML_OP_CONV || wgrad;
  if (wgrad || n->op == DML_OP_MAX_POOL_GRAD || n->op == DML_OP_AVERAGE_POOL_GRAD) {
    if (n->n_inputs != 2) return "absent input";
    o->x = val(s, n->inputs[1]);
    o->y = val(s, n->inputs[0]);
    if (wgrad) o->w = val(s, n->outputs[0]);
  } else {
    o->x = val(s, n->inputs[0]);
    o->y = val(s, n->outputs[0]);
  }
  if (n->op == DML_OP_CONV) {
    o->w = val(s, n->inputs[1]);
    o->b = n->n_inputs > 2 ? val(s, n->inputs[2]) : NULL;
  }
  if (!o->x || !o->y || (conv && !o->w)) return "absent input";
  if (n->n_outputs != 1) return "a second (Indices) output";
  /* f16/bf16 (dmlc compile --precision): loaded into f32, the sums in f32,
   * the result rounded once to the output's dtype (conv_load, win_result) */
  dml_dtype_t t = o->y->type.dtype;
  if (t != DML_DTYPE_F32 && t != DML_DTYPE_F16 && t != DML_DTYPE_BF16)
    return "only f32, f16 and bf16 are emitted";
  if (o->x->type.dtype != t || (o->w && o->w->type.dtype != t) ||
      (o->b && o->b->type.dtype != t))
    return "operands of mixed dtypes";
  if (!typed_ok(o->x) || !typed_ok(o->y) || (o->w && !typed_ok(o->w)) ||
      (o->b && !typed_ok(o->b)))
    return "misaligned value";
  /* 1-D windows (NCW) are 2-D ones of height 1 */
  int r = o->x->type.rank, one = r == 3;
  if ((r != 3 && r != 4) || o->y->type.rank != r)
    return "only 1-D (NCW) and 2-D (NCHW) windows are emitted";
  const dml_dim_t *xd = o->x->type.dims, *yd = o->y->type.dims;
  if (xd[1].sym >= 0 || yd[1].sym >= 0) return "symbolic channel dim";
  for (int d = 2; d < r; d++) o->sym_sp |= xd[d].sym >= 0 || yd[d].sym >= 0;
  dml_klin_t lx, ly;
  if (o->sym_sp &&
      (!type_numel(&o->x->type, &lx) || !type_numel(&o->y->type, &ly) ||
       dml_ksched_sym_repeats(&o->x->type) || dml_ksched_sym_repeats(&o->y->type)))
    return "a symbol used by two dims (a square image's H = W) or more than 32 symbols";
  if (xd[0].sym != yd[0].sym || xd[0].value != yd[0].value) return "batch mismatch";
  o->n = (dml_klin_t){xd[0].value, xd[0].sym, 0, 0};
  o->hd = one ? (dml_dim_t){1, -1} : xd[2], o->wd = xd[r - 1];
  o->C = xd[1].value, o->H = one ? 1 : xd[2].value, o->W = xd[r - 1].value;
  o->M = yd[1].value, o->OH = one ? 1 : yd[2].value, o->OW = yd[r - 1].value;
  if (o->sym_sp) o->H = o->W = o->OH = o->OW = 0;
  o->group = conv ? dml_attr_int(n->attrs, n->n_attrs, "group", 1) : 1;
  if (conv) {
    const dml_dim_t *wd = o->w->type.dims;
    if (o->w->type.rank != r || wd[0].sym >= 0 || wd[2].sym >= 0 || wd[r - 1].sym >= 0)
      return "weights must be static [M, C/group, kH, kW]";
    if (wgrad) {
      size_t nk = 0;
      const int64_t *ks = dml_attr_ints(n->attrs, n->n_attrs, "kernel_shape", &nk);
      if (!ks || nk != (size_t)(r - 2) || ks[0] != wd[2].value ||
          ks[nk - 1] != wd[r - 1].value)
        return "kernel_shape does not match dW's dims";
    }
    if (o->group < 1 || o->C % o->group || o->M % o->group ||
        wd[1].value * o->group != o->C || wd[0].value != o->M)
      return "bad group";
    o->kh = one ? 1 : wd[2].value, o->kw = wd[r - 1].value;
    if (o->b && (o->b->type.rank != 1 || o->b->type.dims[0].value != o->M))
      return "bias must be [M]";
  } else {
    size_t nk = 0;
    const int64_t *ks = dml_attr_ints(n->attrs, n->n_attrs, "kernel_shape", &nk);
    if (!ks || nk != (size_t)(r - 2)) return "kernel_shape does not match the rank";
    o->kh = one ? 1 : ks[0], o->kw = ks[nk - 1];
    if (o->M != o->C) return "channel mismatch";
    if ((n->op == DML_OP_AVERAGE_POOL || n->op == DML_OP_AVERAGE_POOL_GRAD) &&
        dml_attr_int(n->attrs, n->n_attrs, "ceil_mode", 0) &&
        dml_attr_int(n->attrs, n->n_attrs, "count_include_pad", 0))
      return "ceil_mode with count_include_pad";
  }
  size_t na = 0, ns = (size_t)(r - 2);
  const int64_t *a = dml_attr_ints(n->attrs, n->n_attrs, "strides", &na);
  o->stride[0] = a && na == ns && !one ? a[0] : 1;
  o->stride[1] = a && na == ns ? a[ns - 1] : 1;
  a = dml_attr_ints(n->attrs, n->n_attrs, "dilations", &na);
  o->dil[0] = a && na == ns && !one ? a[0] : 1, o->dil[1] = a && na == ns ? a[ns - 1] : 1;
  const char *ap = dml_attr_string(n->attrs, n->n_attrs, "auto_pad", "NOTSET");
  if (!strcmp(ap, "NOTSET")) {
    a = dml_attr_ints(n->attrs, n->n_attrs, "pads", &na);
    if (a && na != 2 * ns) return "pads do not match the rank";
    o->pad[0] = a && !one ? a[0] : 0, o->pad[1] = a ? a[ns - 1] : 0;
  } else if (!strcmp(ap, "VALID")) {
    o->pad[0] = o->pad[1] = 0;
  } else if (o->sym_sp) {
    return "SAME auto_pad over a symbolic spatial dim (the pads follow the run-time "
           "size)";
  } else {
    /* SAME_UPPER / SAME_LOWER: total padding from the output size */
    int64_t in[2] = {o->H, o->W}, out[2] = {o->OH, o->OW}, k[2] = {o->kh, o->kw};
    for (int d = 0; d < 2; d++) {
      int64_t total = (out[d] - 1) * o->stride[d] + (k[d] - 1) * o->dil[d] + 1 - in[d];
      if (total < 0) total = 0;
      o->pad[d] = !strcmp(ap, "SAME_LOWER") ? total - total / 2 : total / 2;
    }
  }
  if (o->stride[0] < 1 || o->stride[1] < 1 || o->dil[0] < 1 || o->dil[1] < 1 ||
      o->pad[0] < 0 || o->pad[1] < 0 || o->kh < 1 || o->kw < 1)
    return "bad strides, dilations or pads";
  return NULL;
}

/* Emits the window loops over (kh, kw) of output pixel (oh, ow): calls
 * `inner` with the input element index ih*W + iw (a bounds-checked body);
 * `pre` and `post` (NULL: none) run at every position, before and after
 * that check. */
static dml_kstmt_t *window(sched_t *s, const win_shape_t *ws, const dml_kidx_t *oh,
                           const dml_kidx_t *ow, int32_t vkh, int32_t vkw,
                           dml_kstmt_t *(*inner)(sched_t *, const dml_kidx_t *, void *),
                           void *ctx, dml_kstmt_t *pre, dml_kstmt_t *post) {
  dml_kpool_t *p = s->pool;
  const dml_kidx_t *th = dml_ki_bin(
      p, DML_KI_ADD, dml_ki_bin(p, DML_KI_MUL, oh, dml_ki_const(p, ws->stride[0])),
      dml_ki_bin(p, DML_KI_MUL, dml_ki_var(p, vkh), dml_ki_const(p, ws->dil[0])));
  const dml_kidx_t *tw = dml_ki_bin(
      p, DML_KI_ADD, dml_ki_bin(p, DML_KI_MUL, ow, dml_ki_const(p, ws->stride[1])),
      dml_ki_bin(p, DML_KI_MUL, dml_ki_var(p, vkw), dml_ki_const(p, ws->dil[1])));
  const dml_kidx_t *ph = dml_ki_const(p, ws->pad[0]), *pw = dml_ki_const(p, ws->pad[1]);
  const dml_kidx_t *ih = dml_ki_bin(p, DML_KI_SUB, th, ph),
                   *iw = dml_ki_bin(p, DML_KI_SUB, tw, pw);
  const dml_kidx_t *Wi = dim_idx(s, ws->wd), *Hi = dim_idx(s, ws->hd);
  const dml_kidx_t *e = dml_ki_bin(p, DML_KI_ADD, dml_ki_bin(p, DML_KI_MUL, ih, Wi), iw);
  dml_kstmt_t *in_w = if_lt(s, tw, kaddc(p, Wi, ws->pad[1]), inner(s, e, ctx));
  if (in_w) in_w->lo = pw;
  dml_kstmt_t *in_h = if_lt(s, th, kaddc(p, Hi, ws->pad[0]), in_w);
  if (in_h) in_h->lo = ph;
  dml_kblock_t pos = {0};
  dml_kblock_add(&pos, pre);
  dml_kblock_add(&pos, in_h);
  dml_kblock_add(&pos, post);
  return for_loop(s, vkh, dml_ki_const(p, ws->kh),
                  for_loop(s, vkw, dml_ki_const(p, ws->kw), pos.first));
}

typedef struct conv_ctx {
  const win_shape_t *ws;
  const dml_kidx_t *xbase, *wbase; /* element index of (n, c, 0, 0) and (m, c, 0, 0) */
  int32_t vkh, vkw;
  uint32_t acc;
  dml_kfn_t comb;
  int count; /* AveragePool without pads: count the valid positions */
  uint32_t cnt;
  uint32_t xr; /* Conv: the register of the tap's input value (0 on a padded tap) */
} conv_ctx_t;

/* The value of the window result `r` (f32) stored into y: rounded once to
 * y's dtype when that is f16/bf16 (nearest even, as the CPU's store of its
 * double sum). */
static const dml_kval_t *win_result(sched_t *s, const win_shape_t *ws,
                                    const dml_kval_t *r) {
  return kdt(ws->y) == DML_KT_F32 ? r : dml_kv_cast(s->pool, kdt(ws->y), r);
}

static dml_kstmt_t *conv_inner(sched_t *s, const dml_kidx_t *e, void *vctx) {
  conv_ctx_t *c = (conv_ctx_t *)vctx;
  dml_kpool_t *p = s->pool;
  /* f16/bf16 operands widen exactly: products and sums are f32 (a Conv
   * tap's only use: load_f32_arith) */
  const dml_kidx_t *xi = at(s, c->ws->x, dml_ki_bin(p, DML_KI_ADD, c->xbase, e));
  const dml_kval_t *xv =
      c->wbase ? load_f32_arith(s, c->ws->x, xi) : load_f32(s, c->ws->x, xi);
  /* Conv: the tap's input value into xr (conv_tap adds xr * w) */
  if (c->wbase) return assign(s, DML_KS_SET, c->xr, xv);
  const dml_kval_t *v = xv;
  /* max-pooling keeps NaN as the CPU does */
  const dml_kval_t *a = dml_kv_reg(p, c->acc);
  dml_kstmt_t *st =
      assign(s, DML_KS_SET, c->acc,
             c->comb == DML_KF_MAX ? nan_max(p, a, v, 1) : dml_kv_fn(p, c->comb, a, v));
  if (c->count && st)
    st->next =
        assign(s, DML_KS_SET, c->cnt,
               dml_kv_fn(p, DML_KF_ADD, dml_kv_reg(p, c->cnt), dml_kv_const(p, 1.0f)));
  return st;
}

/* Conv's sum over one window position: acc += xr * w[m, c, kh, kw], where xr
 * is the input value, or 0 on a padded tap. A padded tap adds 0 * w, as the
 * CPU's zero padding (and ONNX Runtime's im2col) does: +-0 for a finite
 * weight, NaN for an infinite or NaN one. */
static dml_kstmt_t *conv_tap(sched_t *s, const conv_ctx_t *c) {
  dml_kpool_t *p = s->pool;
  const dml_kidx_t *wk = dml_ki_bin(
      p, DML_KI_ADD, c->wbase,
      dml_ki_bin(
          p, DML_KI_ADD,
          dml_ki_bin(p, DML_KI_MUL, dml_ki_var(p, c->vkh), dml_ki_const(p, c->ws->kw)),
          dml_ki_var(p, c->vkw)));
  const dml_kval_t *v = dml_kv_fn(p, DML_KF_MUL, dml_kv_reg(p, c->xr),
                                  load_f32_arith(s, c->ws->w, at(s, c->ws->w, wk)));
  return assign(s, DML_KS_SET, c->acc,
                dml_kv_fn(p, DML_KF_ADD, dml_kv_reg(p, c->acc), v));
}

/* Output coordinates (n, m, oh, ow) of flat id `gid` of ws->y. */
static void out_coords(sched_t *s, const win_shape_t *ws, const dml_kidx_t *gid,
                       const dml_kidx_t **coord) {
  const dml_kidx_t *c[DML_MAX_RANK] = {0};
  coords_of(s, &ws->y->type, gid, c);
  int one = ws->y->type.rank == 3; /* 1-D: (n, m, 0, ow) */
  coord[0] = c[0];
  coord[1] = c[1];
  coord[2] = one ? dml_ki_const(s->pool, 0) : c[2];
  coord[3] = one ? c[2] : c[3];
}

static void attach_conv(sched_t *s, dml_kernel_t *K, const group_t *G,
                        const win_shape_t *ws);

/* The direct convolution's unroll hint for its loop over input channels
 * (dml_kstmt_t.unroll): enough channels that one unrolled iteration holds
 * at least CONV_TAPS_IN_FLIGHT taps (each an X and a W load, issued
 * together before the first fma needs one): 8 channels of a 1x1 conv, 4
 * of a 1x2, 3 of a 1x3, 2 below 8 taps; none (the renderer's choice) from
 * 8 taps per channel (a 3x3 window's loops are unrolled whole already).
 * The kernel is bound by the latency of those loads at a small batch (one
 * thread per output, a few warps per SM): clang unrolled the f32 1x1 loop
 * 6 times by itself but the f16 one only twice (its body, with the
 * conversions, looked larger), and the f16 kernel was 2.3x slower on the
 * H100 (bench/RESULTS.md stop 23). f16 and bf16 inputs only: with the hint
 * on f32 too (8 instead of clang's 6), mobilenet_v2's deep-K 1x1
 * projections took 10-17% longer on the H100 (bench/RESULTS.md stop 25). */
#define CONV_TAPS_IN_FLIGHT 8
static int32_t conv_chan_unroll(const win_shape_t *ws) {
  int64_t taps = ws->kh * ws->kw, cg = ws->C / ws->group;
  dml_dtype_t xt = ws->x->type.dtype;
  if (xt != DML_DTYPE_F16 && xt != DML_DTYPE_BF16) return 0;
  if (taps >= CONV_TAPS_IN_FLIGHT || cg < 2) return 0;
  int64_t u = (CONV_TAPS_IN_FLIGHT + taps - 1) / taps;
  return (int32_t)(u < cg ? u : cg);
}

void dml_ksched_emit_conv_group(sched_t *s, const group_t *G, const win_shape_t *ws) {
  dml_kpool_t *p = s->pool;
  dml_kernel_t *K = new_kernel(s, DML_KK_CONV);
  if (!K) return;
  set_nodes(s, K, G);
  dml_klin_t numel;
  type_numel(G->out, &numel);
  int64_t cg = ws->C / ws->group, mg = ws->M / ws->group;
  int32_t vc = DML_KVAR_FIRST_LOOP, vkh = vc + 1, vkw = vc + 2;
  /* an output element's loop iterations (channels, then the window's two
   * loops); past DML_KLOOP_MAX a workgroup per output element, invocation
   * t taking channels t, t + 256, ..., the sums meeting in a tree */
  int coop = cg * (1 + ws->kh + ws->kh * ws->kw) > DML_KLOOP_MAX;
  const dml_kidx_t *gid, *coord[4], *cv = dml_ki_var(p, vc);
  if (coop) {
    gid = dml_krow_setup(s, K, numel, vkw + 1, 0);
    cv = kadd(p, kmul(p, cv, DML_KROW_WG), dml_ki_var(p, DML_KVAR_LID_X));
  } else {
    K->local[0] = 64;
    K->items[0] = numel;
    gid = dml_ki_var(p, DML_KVAR_GID_X);
  }
  out_coords(s, ws, gid, coord);
  /* input channel = (m / mg) * cg + c */
  const dml_kidx_t *ch = dml_ki_bin(
      p, DML_KI_ADD,
      dml_ki_bin(p, DML_KI_MUL, dml_ki_bin(p, DML_KI_DIV, coord[1], dml_ki_const(p, mg)),
                 dml_ki_const(p, cg)),
      cv);
  const dml_kidx_t *xbase = dml_ki_bin(
      p, DML_KI_MUL,
      dml_ki_bin(p, DML_KI_ADD,
                 dml_ki_bin(p, DML_KI_MUL, coord[0], dml_ki_const(p, ws->C)), ch),
      dml_ki_bin(p, DML_KI_MUL, dim_idx(s, ws->hd), dim_idx(s, ws->wd)));
  const dml_kidx_t *wbase =
      dml_ki_bin(p, DML_KI_MUL,
                 dml_ki_bin(p, DML_KI_ADD,
                            dml_ki_bin(p, DML_KI_MUL, coord[1], dml_ki_const(p, cg)), cv),
                 dml_ki_const(p, ws->kh * ws->kw));
  uint32_t acc = G->n;
  conv_ctx_t c = {ws, xbase, wbase, vkh, vkw, acc, DML_KF_ADD, 0, 0, acc + 1};
  dml_kblock_t body = {0}, tail = {0};
  dml_kblock_add(&body, assign(s, DML_KS_LET, acc, dml_kv_const(p, 0.0f)));
  dml_kblock_add(&body, assign(s, DML_KS_LET, c.xr, dml_kv_const(p, 0.0f)));
  dml_kstmt_t *win =
      window(s, ws, coord[2], coord[3], vkh, vkw, conv_inner, &c,
             assign(s, DML_KS_SET, c.xr, dml_kv_const(p, 0.0f)), conv_tap(s, &c));
  if (coop) {
    dml_kblock_add(
        &body, for_loop(s, vc, dml_ki_const(p, (cg + DML_KROW_WG - 1) / DML_KROW_WG),
                        cg % DML_KROW_WG ? if_lt(s, cv, dml_ki_const(p, cg), win) : win));
    dml_krow_combine(s, &body, DML_KF_ADD, DML_KT_F32, acc, 0);
  } else {
    dml_kstmt_t *chans = for_loop(s, vc, dml_ki_const(p, cg), win);
    if (chans) chans->unroll = conv_chan_unroll(ws);
    dml_kblock_add(&body, chans);
  }
  const dml_kval_t *r = dml_kv_reg(p, acc);
  if (ws->b) r = dml_kv_fn(p, DML_KF_ADD, r, load_f32(s, ws->b, at(s, ws->b, coord[1])));
  const dml_kidx_t *ycoord[DML_MAX_RANK];
  coords_of(s, G->out, gid, ycoord);
  dml_ksched_emit_chain(s, K, G, &tail, win_result(s, ws, r), ycoord, gid);
  if (coop) {
    dml_kblock_add(
        &body, if_lt(s, dml_ki_var(p, DML_KVAR_LID_X), dml_ki_const(p, 1), tail.first));
    K->body = dml_krow_finish(s, numel, vkw + 1, body.first);
  } else {
    block_append(&body, &tail);
    K->body = if_lt(s, gid, dml_ki_lin(p, numel), body.first);
  }
  K->n_regs = c.xr + 1;
  dml_klin_t fl = numel;
  fl.c *= 2 * cg * ws->kh * ws->kw;
  lin_add(&K->flops, fl, 1);
  dml_klin_t xl;
  const int64_t esz = (int64_t)dml_dtype_size(ws->x->type.dtype);
  if (type_numel(&ws->x->type, &xl)) lin_add(&K->bytes, xl, esz);
  lin_add(&K->bytes, (dml_klin_t){ws->M * cg * ws->kh * ws->kw, -1, 0, 0}, esz);
  /* the implicit-GEMM record: f32 (CUDA's TF32 form) and f16/bf16 (its
   * f16/bf16 tensor-core form), X and W of one dtype */
  const dml_kdtype_t xdt = kdt(ws->x);
  if (ws->group == 1 && !ws->sym_sp && !coop && kdt(ws->w) == xdt &&
      (xdt == DML_KT_F32 || xdt == DML_KT_F16 || xdt == DML_KT_BF16))
    attach_conv(s, K, G, ws);
}

/* Records conv kernel K (group 1) as an implicit GEMM (dml_kconv_t in
 * dml_kgemm_t) with its epilogue at (row GID_Y = (n, oh, ow), column GID_X
 * = output channel), for renderers with their own GEMM main loop (CUDA's
 * tensor-core form). The kernel's work estimates and registers are left as
 * they were. */
static void attach_conv(sched_t *s, dml_kernel_t *K, const group_t *G,
                        const win_shape_t *ws) {
  dml_kpool_t *p = s->pool;
  dml_kgemm_t *m = (dml_kgemm_t *)dml_kpool_alloc(p, sizeof *m);
  dml_kconv_t *c = (dml_kconv_t *)dml_kpool_alloc(p, sizeof *c);
  if (!m || !c) return;
  memset(m, 0, sizeof *m);
  *c = (dml_kconv_t){ws->C,
                     ws->H,
                     ws->W,
                     ws->kh,
                     ws->kw,
                     ws->OH,
                     ws->OW,
                     {ws->stride[0], ws->stride[1]},
                     {ws->dil[0], ws->dil[1]},
                     {ws->pad[0], ws->pad[1]}};
  const int64_t ohw = ws->OH * ws->OW;
  dml_klin_t flops = K->flops, bytes = K->bytes;
  uint32_t n_regs = K->n_regs, acc = G->n;
  const dml_kidx_t *row = dml_ki_var(p, DML_KVAR_GID_Y),
                   *col = dml_ki_var(p, DML_KVAR_GID_X);
  const dml_kidx_t *n = dml_ki_bin(p, DML_KI_DIV, row, dml_ki_const(p, ohw)),
                   *q = dml_ki_bin(p, DML_KI_MOD, row, dml_ki_const(p, ohw));
  const dml_kidx_t *flat = kadd(p, kmul(p, kadd(p, kmul(p, n, ws->M), col), ohw), q);
  const dml_kidx_t *yc[DML_MAX_RANK];
  coords_of(s, G->out, flat, yc);
  const dml_kval_t *r = dml_kv_reg(p, acc);
  if (ws->b) r = dml_kv_fn(p, DML_KF_ADD, r, load_f32(s, ws->b, at(s, ws->b, col)));
  dml_kblock_t epi = {0};
  K->n_regs = acc + 1;
  /* as the direct kernel: the f32 sum rounded once to Y's dtype, then the
   * chain */
  dml_ksched_emit_chain(s, K, G, &epi, win_result(s, ws, r), yc, flat);
  dml_klin_t rows = ws->n;
  rows.c *= ohw;
  rows.c0 *= ohw;
  m->epilogue = if_lt(s, row, dml_ki_lin(p, rows),
                      if_lt(s, col, dml_ki_const(p, ws->M), epi.first));
  m->acc_reg = acc;
  m->n_regs = K->n_regs > acc + 1 ? K->n_regs : acc + 1;
  K->flops = flops;
  K->bytes = bytes;
  K->n_regs = n_regs;
  m->a_buf = buf_of(ws->x);
  m->b_buf = buf_of(ws->w);
  m->dtype = kdt(ws->x);
  m->a_off = (int64_t)(ws->x->offset / dml_kdtype_size(m->dtype));
  m->b_off = (int64_t)(ws->w->offset / dml_kdtype_size(m->dtype));
  m->ta = 0;
  m->tb = 1;
  m->m = rows;
  m->m_max = dml_ksched_lin_max(s, rows);
  m->n = ws->M;
  m->k = ws->C * ws->kh * ws->kw;
  m->conv = c;
  K->gemm = m;
}

void dml_ksched_emit_pool(sched_t *s, uint32_t node, const win_shape_t *ws) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  dml_kernel_t *K = new_kernel(s, DML_KK_POOL);
  if (!K) return;
  group_t G = {.anchor = ANCHOR_NONE, .n = 1, .nodes = {node}};
  set_nodes(s, K, &G);
  dml_klin_t numel;
  type_numel(&ws->y->type, &numel);
  K->local[0] = 64;
  K->items[0] = numel;
  K->n_regs = 2;
  const dml_kidx_t *gid = dml_ki_var(p, DML_KVAR_GID_X), *coord[4];
  out_coords(s, ws, gid, coord);
  int is_max = n->op == DML_OP_MAX_POOL;
  int incl = !is_max && dml_attr_int(n->attrs, n->n_attrs, "count_include_pad", 0);
  const dml_kidx_t *xbase = dml_ki_bin(
      p, DML_KI_MUL,
      dml_ki_bin(p, DML_KI_ADD,
                 dml_ki_bin(p, DML_KI_MUL, coord[0], dml_ki_const(p, ws->C)), coord[1]),
      dml_ki_bin(p, DML_KI_MUL, dim_idx(s, ws->hd), dim_idx(s, ws->wd)));
  int32_t vkh = DML_KVAR_FIRST_LOOP, vkw = vkh + 1;
  conv_ctx_t c = {
      ws, xbase, NULL, vkh, vkw, 0, is_max ? DML_KF_MAX : DML_KF_ADD, !is_max && !incl,
      1,  0};
  dml_kblock_t body = {0};
  dml_kblock_add(&body,
                 assign(s, DML_KS_LET, 0, dml_kv_const(p, is_max ? -INFINITY : 0.0f)));
  dml_kblock_add(&body, assign(s, DML_KS_LET, 1, dml_kv_const(p, 0.0f)));
  dml_kblock_add(&body,
                 window(s, ws, coord[2], coord[3], vkh, vkw, conv_inner, &c, NULL, NULL));
  const dml_kval_t *r = dml_kv_reg(p, 0);
  if (!is_max)
    r = dml_kv_fn(p, DML_KF_DIV, r,
                  incl ? dml_kv_const(p, (float)(ws->kh * ws->kw)) : dml_kv_reg(p, 1));
  dml_kblock_add(&body, store_at(s, ws->y, gid, win_result(s, ws, r)));
  K->body = if_lt(s, gid, dml_ki_lin(p, numel), body.first);
  lin_add(&K->flops, numel, ws->kh * ws->kw);
  dml_klin_t xl;
  const int64_t esz = (int64_t)dml_dtype_size(ws->x->type.dtype);
  if (type_numel(&ws->x->type, &xl)) lin_add(&K->bytes, xl, esz);
  lin_add(&K->bytes, numel, esz);
}

/* ---- MaxPoolGrad and AveragePoolGrad (1-D and 2-D) ---- */

typedef struct {
  const win_shape_t *ws;
  const dml_kidx_t *xbase; /* X element of (n, c, 0, 0) */
} pgrad_ctx_t;

/* One position of a MaxPool window (element e = ih*W + iw of X's plane):
 * the argmax as the CPU's pool_window_f64 keeps it, register 1 the best
 * value (f32), register 2 its position (i32, -1 before the first in-bounds
 * one), replaced when v > best, at the first position, or by the window's
 * first NaN. Registers 3 and 4 hold the new pair so both tests read the
 * old one. */
static dml_kstmt_t *pgrad_tap(sched_t *s, const dml_kidx_t *e, void *vctx) {
  const pgrad_ctx_t *c = (const pgrad_ctx_t *)vctx;
  dml_kpool_t *p = s->pool;
  const dml_kval_t *v =
      load_f32(s, c->ws->x, at(s, c->ws->x, dml_ki_bin(p, DML_KI_ADD, c->xbase, e)));
  const dml_kval_t *best = dml_kv_reg(p, 1), *arg = dml_kv_reg_t(p, 2, DML_KT_I32);
  const dml_kval_t *take =
      dml_kv_fn(p, DML_KF_OR,
                dml_kv_fn(p, DML_KF_OR, dml_kv_fn(p, DML_KF_GT, v, best),
                          dml_kv_fn(p, DML_KF_LT, arg, dml_kv_iconst(p, DML_KT_I32, 0))),
                dml_kv_fn(p, DML_KF_AND,
                          dml_kv_fn(p, DML_KF_NOT, dml_kv_fn(p, DML_KF_EQ, v, v), NULL),
                          dml_kv_fn(p, DML_KF_EQ, best, best)));
  dml_kblock_t b = {0};
  dml_kblock_add(&b, assign(s, DML_KS_SET, 3, dml_kv_select(p, take, v, best)));
  dml_kblock_add(&b, assign(s, DML_KS_SET, 4,
                            dml_kv_select(p, take, dml_kv_idx(p, DML_KT_I32, e), arg)));
  dml_kblock_add(&b, assign(s, DML_KS_SET, 1, dml_kv_reg(p, 3)));
  dml_kblock_add(&b, assign(s, DML_KS_SET, 2, dml_kv_reg_t(p, 4, DML_KT_I32)));
  return b.first;
}

/* One in-bounds position of an AveragePool window: its count (register 1)
 * plus one, the CPU's divisor without count_include_pad. */
static dml_kstmt_t *pgrad_count(sched_t *s, const dml_kidx_t *e, void *vctx) {
  (void)e;
  (void)vctx;
  dml_kpool_t *p = s->pool;
  return assign(s, DML_KS_SET, 1,
                dml_kv_fn(p, DML_KF_ADD, dml_kv_reg(p, 1), dml_kv_const(p, 1.0f)));
}

/* MaxPoolGrad / AveragePoolGrad(dY, X) -> dX (X's shape; f32, f16, bf16)
 * of the window geometry `ws` (x = X, y = dY): one invocation per dX
 * element (n, c, ih, iw) visits the windows (oh, ow) that reach it (the
 * ConvTranspose gather's stride-divisibility test) in the CPU's (oh, ow)
 * order and adds, for MaxPool, dY[n, c, oh, ow] where the window's argmax
 * over X (pgrad_tap, as the CPU finds it) is (ih, iw); for AveragePool,
 * dY[n, c, oh, ow] / the window's divisor (its in-bounds positions, or
 * kh * kw with count_include_pad: ceil_mode with it is refused, so every
 * window lies inside the pads). The sum is the CPU's: one add per window
 * in its order (floating-point sums are order-dependent: 1e15 + 86 - 1e15
 * is 0 or 86, and a sum that overflows on the way is inf in one order and
 * finite in another), rounded to dX's dtype after each add as the CPU
 * stores its running sum (f16's range is passed long before f32's). */
void dml_ksched_emit_pool_grad(sched_t *s, uint32_t node, const win_shape_t *ws) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *dx = val(s, n->outputs[0]);
  if (!dx || dx->type.dtype != ws->x->type.dtype || !typed_ok(dx) ||
      !same_shape(&dx->type, &ws->x->type)) {
    unsupported(s, node, "dX must have X's shape and dtype", NULL);
    return;
  }
  int avg = n->op == DML_OP_AVERAGE_POOL_GRAD;
  int incl = avg && dml_attr_int(n->attrs, n->n_attrs, "count_include_pad", 0);
  dml_kernel_t *K = dml_ksched_kernel(s, DML_KK_POOL, node);
  if (!K) return;
  dml_klin_t numel;
  type_numel(&dx->type, &numel);
  K->local[0] = 64;
  K->items[0] = numel;
  K->n_regs = 5;
  int one = dx->type.rank == 3;
  const dml_kidx_t *gid = dml_ki_var(p, DML_KVAR_GID_X), *c[DML_MAX_RANK];
  coords_of(s, &dx->type, gid, c);
  const dml_kidx_t *Hi = dim_idx(s, ws->hd), *Wi = dim_idx(s, ws->wd);
  const dml_dim_t *yd = ws->y->type.dims;
  const dml_kidx_t *OHi = one ? dml_ki_const(p, 1) : dim_idx(s, yd[2]),
                   *OWi = dim_idx(s, yd[ws->y->type.rank - 1]);
  const dml_kidx_t *nc = kadd(p, kmul(p, c[0], ws->C), c[1]);
  const dml_kidx_t *ih = one ? dml_ki_const(p, 0) : c[2], *iw = c[dx->type.rank - 1];
  pgrad_ctx_t pc = {ws, dml_ki_bin(p, DML_KI_MUL, nc, dml_ki_bin(p, DML_KI_MUL, Hi, Wi))};
  int32_t vkh = DML_KVAR_FIRST_LOOP, vkw = vkh + 1, vqh = vkh + 2, vqw = vkh + 3;
  /* the window positions from the last: the windows in the CPU's (oh, ow)
   * order, so that the sums of several dY (overlapping windows) are its
   * f32 sums in its order (1e15 + 86 - 1e15 is order-dependent) */
  const dml_kidx_t *kv[2] = {
      dml_ki_bin(p, DML_KI_SUB, dml_ki_const(p, ws->kh - 1), dml_ki_var(p, vkh)),
      dml_ki_bin(p, DML_KI_SUB, dml_ki_const(p, ws->kw - 1), dml_ki_var(p, vkw))};
  const dml_kidx_t *o2[2] = {ih, iw}, *ext[2] = {OHi, OWi};
  const dml_kidx_t *t[2], *lo[2], *oo[2];
  for (int d = 0; d < 2; d++) {
    t[d] = kaddc(p, o2[d], ws->pad[d]);
    lo[d] = kmul(p, kv[d], ws->dil[d]);
    oo[d] = dml_ki_bin(p, DML_KI_DIV, dml_ki_bin(p, DML_KI_SUB, t[d], lo[d]),
                       dml_ki_const(p, ws->stride[d]));
  }
  /* window (oh, ow): MaxPool: its argmax, then dY added where it is this
   * element; AveragePool: dY over its divisor added */
  dml_kblock_t win = {0};
  const dml_kidx_t *yi = kadd(
      p,
      dml_ki_bin(p, DML_KI_MUL, kadd(p, dml_ki_bin(p, DML_KI_MUL, nc, OHi), oo[0]), OWi),
      oo[1]);
  const dml_kval_t *term = NULL;
  if (avg) {
    if (incl) {
      term = dml_kv_fn(p, DML_KF_DIV, load_f32(s, ws->y, at(s, ws->y, yi)),
                       dml_kv_const(p, (float)(ws->kh * ws->kw)));
    } else {
      dml_kblock_add(&win, assign(s, DML_KS_SET, 1, dml_kv_const(p, 0.0f)));
      dml_kblock_add(
          &win, window(s, ws, oo[0], oo[1], vqh, vqw, pgrad_count, NULL, NULL, NULL));
      term = dml_kv_fn(p, DML_KF_DIV, load_f32(s, ws->y, at(s, ws->y, yi)),
                       dml_kv_reg(p, 1));
    }
  } else {
    dml_kblock_add(&win, assign(s, DML_KS_SET, 1, dml_kv_const(p, -INFINITY)));
    dml_kblock_add(&win, assign(s, DML_KS_SET, 2, dml_kv_iconst(p, DML_KT_I32, -1)));
    dml_kblock_add(&win,
                   window(s, ws, oo[0], oo[1], vqh, vqw, pgrad_tap, &pc, NULL, NULL));
    const dml_kval_t *hit = dml_kv_fn(
        p, DML_KF_EQ, dml_kv_reg_t(p, 2, DML_KT_I32),
        dml_kv_idx(p, DML_KT_I32, kadd(p, dml_ki_bin(p, DML_KI_MUL, ih, Wi), iw)));
    term = dml_kv_select(p, hit, load_f32(s, ws->y, at(s, ws->y, yi)),
                         dml_kv_const(p, 0.0f));
  }
  const dml_kval_t *sum = dml_kv_fn(p, DML_KF_ADD, dml_kv_reg(p, 0), term);
  /* f16/bf16: the running sum rounded to dX's dtype, as the CPU's store */
  if (kdt(dx) != DML_KT_F32)
    sum = dml_kv_cast(p, DML_KT_F32, dml_kv_cast(p, kdt(dx), sum));
  dml_kblock_add(&win, assign(s, DML_KS_SET, 0, sum));
  dml_kstmt_t *inner = win.first;
  /* innermost first: the width's stride test, its range, then the height's */
  for (int d = 1; d >= 0; d--) {
    const dml_kidx_t *rem =
        dml_ki_bin(p, DML_KI_MOD, dml_ki_bin(p, DML_KI_SUB, t[d], lo[d]),
                   dml_ki_const(p, ws->stride[d]));
    inner = if_lt(s, rem, dml_ki_const(p, 1), inner);
    inner = if_in(
        s, t[d], lo[d],
        dml_ki_bin(p, DML_KI_ADD, lo[d],
                   dml_ki_bin(p, DML_KI_MUL, ext[d], dml_ki_const(p, ws->stride[d]))),
        inner);
  }
  dml_kblock_t body = {0};
  dml_kblock_add(&body, assign(s, DML_KS_LET, 0, dml_kv_const(p, 0.0f)));
  dml_kblock_add(&body, assign(s, DML_KS_LET, 1, dml_kv_const(p, -INFINITY)));
  dml_kblock_add(&body, assign(s, DML_KS_LET, 2, dml_kv_iconst(p, DML_KT_I32, -1)));
  dml_kblock_add(&body, assign(s, DML_KS_LET, 3, dml_kv_const(p, 0.0f)));
  dml_kblock_add(&body, assign(s, DML_KS_LET, 4, dml_kv_iconst(p, DML_KT_I32, -1)));
  dml_kblock_add(&body, for_loop(s, vkh, dml_ki_const(p, ws->kh),
                                 for_loop(s, vkw, dml_ki_const(p, ws->kw), inner)));
  dml_kblock_add(&body, store_at(s, dx, gid, win_result(s, ws, dml_kv_reg(p, 0))));
  K->body = if_lt(s, gid, dml_ki_lin(p, numel), body.first);
  lin_add(&K->flops, numel, ws->kh * ws->kw * ws->kh * ws->kw);
  const int64_t esz = (int64_t)dml_dtype_size(ws->x->type.dtype);
  lin_add(&K->bytes, numel, 2 * esz);
}

/* ---- ConvTranspose and ConvInputGrad (1-D and 2-D) ---- */

/* The gather both compute: y[n, m, o] = sum over the group's input
 * channels c and the window k of x[n, c, i] * w[c, m % (M/group), k], where
 * o + pb = i*st + k*dl (+ b[m]): x [N, C, in...], w [C, M/group, k...],
 * y [N, M, out...]. 1-D uses slot 1 (height 1 in slot 0). */
typedef struct {
  const dml_pkg_value_t *x, *w, *b, *y;
  int64_t C, M, group;
  int64_t k[2], st[2], dl[2], pb[2];
  dml_dim_t in[2]; /* x's spatial extents: symbolic ones read at run time */
} tgather_t;

static void emit_tgather(sched_t *s, uint32_t node, const tgather_t *g);

/* ConvTranspose (ONNX opset 11; the CPU kernel's pads rules): one
 * invocation per output element (n, m, oh, ow) gathers
 * x[n, c, ih, iw] * w[c, m % (M/group), kh, kw] over the group's channels
 * and the kernel window, where oh = ih*stride - pad + kh*dilation: the
 * window position is used when oh + pad - kh*dilation lies in
 * [0, H*stride) and is a multiple of the stride. Then + B[m]. */
void dml_ksched_emit_conv_transpose(sched_t *s, uint32_t node) {
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *w = val(s, n->inputs[1]);
  const dml_pkg_value_t *b =
      n->n_inputs > 2 && n->inputs[2] != DML_PKG_NO_VALUE ? val(s, n->inputs[2]) : NULL;
  const dml_pkg_value_t *y = val(s, n->outputs[0]);
  const char *why = dml_ksched_map_reject_f32(s, n, b ? 3 : 2);
  int32_t r = x ? x->type.rank : 0;
  if (!why && ((r != 3 && r != 4) || y->type.rank != r || w->type.rank != r))
    why = "only 1-D and 2-D windows are emitted";
  /* symbolic spatial dims of x and y (read at run time) where the begin
   * pads do not follow the size: explicit pads, VALID, or neither */
  int sym_sp = 0;
  for (int32_t d = 1; !why && d < r; d++) {
    if (w->type.dims[d].sym >= 0 ||
        (d == 1 && (x->type.dims[1].sym >= 0 || y->type.dims[1].sym >= 0)))
      why = "symbolic channel dim or weights";
    if (d >= 2) sym_sp |= x->type.dims[d].sym >= 0 || y->type.dims[d].sym >= 0;
  }
  if (!why && sym_sp &&
      (dml_ksched_sym_repeats(&x->type) || dml_ksched_sym_repeats(&y->type)))
    why = "a symbol used by two dims (a square image's H = W) or more than 32 symbols";
  int64_t group = dml_attr_int(n->attrs, n->n_attrs, "group", 1);
  int64_t C = why ? 1 : x->type.dims[1].value, M = why ? 1 : y->type.dims[1].value;
  if (!why && (w->type.dims[0].sym >= 0 || w->type.dims[0].value != C || group < 1 ||
               C % group || w->type.dims[1].value * group != M))
    why = "weights must be static [C, M/group, kH, kW]";
  if (!why && b && (b->type.rank != 1 || b->type.dims[0].value != M))
    why = "bias must be [M]";
  int ns = r - 2;
  int64_t in[2] = {1, 1}, out[2] = {1, 1}, k[2] = {1, 1}, st[2] = {1, 1}, dl[2] = {1, 1},
          pb[2] = {0, 0};
  size_t na = 0, np = 0, nop = 0;
  const int64_t *sa = dml_attr_ints(n->attrs, n->n_attrs, "strides", &na);
  if (!why && sa && na != (size_t)ns) why = "strides do not match the rank";
  const int64_t *da = dml_attr_ints(n->attrs, n->n_attrs, "dilations", &na);
  if (!why && da && na != (size_t)ns) why = "dilations do not match the rank";
  const int64_t *pads = dml_attr_ints(n->attrs, n->n_attrs, "pads", &np);
  const int64_t *opad = dml_attr_ints(n->attrs, n->n_attrs, "output_padding", &nop);
  if (!why && ((pads && np != 2 * (size_t)ns) || (opad && nop != (size_t)ns)))
    why = "pads or output_padding do not match the rank";
  const char *ap = dml_attr_string(n->attrs, n->n_attrs, "auto_pad", "NOTSET");
  int same_upper = !strcmp(ap, "SAME_UPPER"), same_lower = !strcmp(ap, "SAME_LOWER");
  int valid = !strcmp(ap, "VALID");
  int oshape = dml_attr_find(n->attrs, n->n_attrs, "output_shape") != NULL;
  if (!why && sym_sp && (same_upper || same_lower || oshape))
    why =
        "SAME auto_pad or output_shape over a symbolic spatial dim (the pads follow "
        "the run-time size)";
  dml_dim_t ind[2] = {{1, -1}, {1, -1}};
  for (int i = 0; !why && i < ns; i++) {
    int o = 2 - ns + i; /* 1-D uses slot 1 (height 1 in slot 0) */
    ind[o] = x->type.dims[2 + i];
    in[o] = x->type.dims[2 + i].value;
    out[o] = y->type.dims[2 + i].value;
    k[o] = w->type.dims[2 + i].value;
    st[o] = sa ? sa[i] : 1;
    dl[o] = da ? da[i] : 1;
    if (st[o] < 1 || dl[o] < 1 || k[o] < 1) {
      why = "bad strides, dilations or kernel";
      break;
    }
    int64_t full = st[o] * (in[o] - 1) + (opad ? opad[i] : 0) + (k[o] - 1) * dl[o] + 1;
    int64_t expect;
    if (pads && !same_upper && !same_lower && !oshape) {
      pb[o] = pads[i];
      expect = full - pads[i] - pads[ns + i];
    } else if (valid || (!same_upper && !same_lower && !oshape)) {
      /* VALID, or NOTSET without pads (pads 0) */
      pb[o] = 0;
      expect = full;
    } else {
      int64_t total = full - out[o];
      if (total < 0) total = 0;
      pb[o] = same_upper ? total / 2 : total - total / 2;
      expect = out[o];
    }
    /* a symbolic extent was checked by shape inference */
    int sym = ind[o].sym >= 0 || y->type.dims[2 + i].sym >= 0;
    if ((!sym && expect != out[o]) || pb[o] < 0)
      why = "output size does not match the attributes";
  }
  if (why) {
    unsupported(s, node, "%s", why);
    return;
  }
  tgather_t g = {x,
                 w,
                 b,
                 y,
                 C,
                 M,
                 group,
                 {k[0], k[1]},
                 {st[0], st[1]},
                 {dl[0], dl[1]},
                 {pb[0], pb[1]},
                 {ind[0], ind[1]}};
  emit_tgather(s, node, &g);
}

/* ConvInputGrad(dY, W, X) -> dX (ops.def): the gather of dY [N, M, y...]
 * and W [M, C/group, k...] into dX [N, C, x...] (X's shape), with the
 * forward Conv's begin pads (explicit, VALID, or SAME over static spatial
 * dims of X); the end pads and output_padding the CPU derives
 * (dml_shape_conv_input_grad_pads) only size dX, which is X's shape here.
 * Symbolic N and spatial dims are read at run time. f32 only. */
void dml_ksched_emit_conv_input_grad(sched_t *s, uint32_t node) {
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const char *why = n->n_inputs == 3 && n->n_outputs == 1
                        ? dml_ksched_map_reject_f32(s, n, 3)
                        : "absent input";
  const dml_pkg_value_t *dy = why ? NULL : val(s, n->inputs[0]),
                        *w = why ? NULL : val(s, n->inputs[1]),
                        *x = why ? NULL : val(s, n->inputs[2]),
                        *y = why ? NULL : val(s, n->outputs[0]);
  int32_t r = why ? 0 : x->type.rank;
  if (!why && ((r != 3 && r != 4) || y->type.rank != r || w->type.rank != r ||
               dy->type.rank != r))
    why = "only 1-D and 2-D windows are emitted";
  for (int32_t d = 0; !why && d < r; d++)
    if (w->type.dims[d].sym >= 0 ||
        (d == 1 && (dy->type.dims[1].sym >= 0 || y->type.dims[1].sym >= 0)))
      why = "symbolic channel dim or weights";
  if (!why && (dml_ksched_sym_repeats(&dy->type) || dml_ksched_sym_repeats(&y->type)))
    why = "a symbol used by two dims (a square image's H = W) or more than 32 symbols";
  int64_t group = dml_attr_int(n->attrs, n->n_attrs, "group", 1);
  int64_t M = why ? 1 : dy->type.dims[1].value, C = why ? 1 : y->type.dims[1].value;
  if (!why && (w->type.dims[0].value != M || group < 1 || M % group || C % group ||
               w->type.dims[1].value * group != C))
    why = "weights must be static [M, C/group, kH, kW]";
  int ns = r - 2;
  int64_t k[2] = {1, 1}, st[2] = {1, 1}, dl[2] = {1, 1}, pb[2] = {0, 0};
  dml_dim_t in[2] = {{1, -1}, {1, -1}};
  size_t na = 0, np = 0;
  const int64_t *sa = dml_attr_ints(n->attrs, n->n_attrs, "strides", &na);
  if (!why && sa && na != (size_t)ns) why = "strides do not match the rank";
  const int64_t *da = dml_attr_ints(n->attrs, n->n_attrs, "dilations", &na);
  if (!why && da && na != (size_t)ns) why = "dilations do not match the rank";
  const int64_t *pads = dml_attr_ints(n->attrs, n->n_attrs, "pads", &np);
  if (!why && pads && np != 2 * (size_t)ns) why = "pads do not match the rank";
  const char *ap = dml_attr_string(n->attrs, n->n_attrs, "auto_pad", "NOTSET");
  int same_upper = !strcmp(ap, "SAME_UPPER"), same_lower = !strcmp(ap, "SAME_LOWER");
  int valid = !strcmp(ap, "VALID");
  if (!why && !same_upper && !same_lower && !valid && strcmp(ap, "NOTSET"))
    why = "unknown auto_pad";
  for (int i = 0; !why && i < ns; i++) {
    int o = 2 - ns + i; /* 1-D uses slot 1 (height 1 in slot 0) */
    in[o] = dy->type.dims[2 + i];
    k[o] = w->type.dims[2 + i].value;
    st[o] = sa ? sa[i] : 1;
    dl[o] = da ? da[i] : 1;
    if (st[o] < 1 || dl[o] < 1 || k[o] < 1) {
      why = "bad strides, dilations or kernel";
      break;
    }
    if (same_upper || same_lower) {
      const dml_dim_t xd = x->type.dims[2 + i];
      if (xd.sym >= 0) {
        why =
            "SAME auto_pad over a symbolic spatial dim (the pads follow the run-time "
            "size)";
        break;
      }
      pb[o] = dml_shape_same_pad_begin(xd.value, (k[o] - 1) * dl[o] + 1, st[o],
                                       same_upper, NULL);
    } else {
      pb[o] = valid || !pads ? 0 : pads[i];
    }
    if (pb[o] < 0) why = "negative pads";
  }
  if (why) {
    unsupported(s, node, "%s", why);
    return;
  }
  tgather_t g = {dy,
                 w,
                 NULL,
                 y,
                 M,
                 C,
                 group,
                 {k[0], k[1]},
                 {st[0], st[1]},
                 {dl[0], dl[1]},
                 {pb[0], pb[1]},
                 {in[0], in[1]}};
  emit_tgather(s, node, &g);
}

/* The ConvTranspose-form gather of geometry `g` as the kernel of node
 * `node` (f32; see tgather_t). */
static void emit_tgather(sched_t *s, uint32_t node, const tgather_t *g) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_value_t *x = g->x, *w = g->w, *b = g->b, *y = g->y;
  const int64_t *k = g->k, *st = g->st, *dl = g->dl, *pb = g->pb;
  int32_t r = y->type.rank;
  int ns = r - 2;
  int64_t C = g->C, M = g->M, group = g->group;
  /* x's spatial extents (run-time values where symbolic) */
  const dml_kidx_t *in[2] = {dim_idx(s, g->in[0]), dim_idx(s, g->in[1])};
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK];
  const dml_kidx_t *gid = dml_ksched_map_kernel(s, node, &y->type, &K, c);
  if (!gid) return;
  K->kind = DML_KK_CONV;
  snprintf(K->name, sizeof K->name, "k%u_%s", s->n_kernels - 1,
           dml_kernel_kind_name(DML_KK_CONV));
  int64_t cg = C / group, mg = M / group;
  int32_t vc = DML_KVAR_FIRST_LOOP, vkh = vc + 1, vkw = vc + 2;
  /* past DML_KLOOP_MAX loop iterations per output element, a workgroup per
   * output element with the channels strided over it (as the conv above) */
  int coop = cg * (1 + k[0] + k[0] * k[1]) > DML_KLOOP_MAX;
  dml_klin_t numel = {0, -1, 0, 0};
  type_numel(&y->type, &numel);
  const dml_kidx_t *cv = dml_ki_var(p, vc);
  if (coop) {
    gid = dml_krow_setup(s, K, numel, vkw + 1, 0);
    coords_of(s, &y->type, gid, c);
    cv = kadd(p, kmul(p, cv, DML_KROW_WG), dml_ki_var(p, DML_KVAR_LID_X));
  } else {
    K->local[0] = 64;
  }
  const dml_kidx_t *oh = ns == 2 ? c[2] : dml_ki_const(p, 0), *ow = c[r - 1];
  const dml_kidx_t *ch = dml_ki_bin(
      p, DML_KI_ADD,
      dml_ki_bin(p, DML_KI_MUL, dml_ki_bin(p, DML_KI_DIV, c[1], dml_ki_const(p, mg)),
                 dml_ki_const(p, cg)),
      cv);
  const dml_kidx_t *o2[2] = {oh, ow}, *kv[2] = {dml_ki_var(p, vkh), dml_ki_var(p, vkw)};
  const dml_kidx_t *t[2], *lo[2], *ii[2];
  for (int d = 0; d < 2; d++) {
    t[d] = dml_ki_bin(p, DML_KI_ADD, o2[d], dml_ki_const(p, pb[d]));
    lo[d] = dml_ki_bin(p, DML_KI_MUL, kv[d], dml_ki_const(p, dl[d]));
    ii[d] = dml_ki_bin(p, DML_KI_DIV, dml_ki_bin(p, DML_KI_SUB, t[d], lo[d]),
                       dml_ki_const(p, st[d]));
  }
  /* x[(n*C + ch)*H*W + ih*W + iw], w[((ch*mg + m % mg)*kH + kh)*kW + kw] */
  const dml_kidx_t *xi = dml_ki_bin(
      p, DML_KI_ADD,
      dml_ki_bin(p, DML_KI_MUL,
                 dml_ki_bin(p, DML_KI_ADD,
                            dml_ki_bin(p, DML_KI_MUL, c[0], dml_ki_const(p, C)), ch),
                 dml_ki_bin(p, DML_KI_MUL, in[0], in[1])),
      dml_ki_bin(p, DML_KI_ADD, dml_ki_bin(p, DML_KI_MUL, ii[0], in[1]), ii[1]));
  const dml_kidx_t *wi = dml_ki_bin(
      p, DML_KI_ADD,
      dml_ki_bin(
          p, DML_KI_MUL,
          dml_ki_bin(p, DML_KI_ADD, dml_ki_bin(p, DML_KI_MUL, ch, dml_ki_const(p, mg)),
                     dml_ki_bin(p, DML_KI_MOD, c[1], dml_ki_const(p, mg))),
          dml_ki_const(p, k[0] * k[1])),
      dml_ki_bin(p, DML_KI_ADD, dml_ki_bin(p, DML_KI_MUL, kv[0], dml_ki_const(p, k[1])),
                 kv[1]));
  const dml_kval_t *prod =
      dml_kv_fn(p, DML_KF_MUL, dml_kv_load(p, buf_of(x), at(s, x, xi)),
                dml_kv_load(p, buf_of(w), at(s, w, wi)));
  dml_kstmt_t *inner =
      assign(s, DML_KS_SET, 0, dml_kv_fn(p, DML_KF_ADD, dml_kv_reg(p, 0), prod));
  /* innermost first: the width's stride test, its range, then the height's */
  for (int d = 1; d >= 0; d--) {
    const dml_kidx_t *rem = dml_ki_bin(
        p, DML_KI_MOD, dml_ki_bin(p, DML_KI_SUB, t[d], lo[d]), dml_ki_const(p, st[d]));
    inner = if_lt(s, rem, dml_ki_const(p, 1), inner);
    inner = if_in(s, t[d], lo[d],
                  dml_ki_bin(p, DML_KI_ADD, lo[d],
                             dml_ki_bin(p, DML_KI_MUL, in[d], dml_ki_const(p, st[d]))),
                  inner);
  }
  dml_kblock_t body = {0};
  dml_kblock_add(&body, assign(s, DML_KS_LET, 0, dml_kv_const(p, 0.0f)));
  dml_kstmt_t *win = for_loop(s, vkh, dml_ki_const(p, k[0]),
                              for_loop(s, vkw, dml_ki_const(p, k[1]), inner));
  if (coop) {
    dml_kblock_add(
        &body, for_loop(s, vc, dml_ki_const(p, (cg + DML_KROW_WG - 1) / DML_KROW_WG),
                        cg % DML_KROW_WG ? if_lt(s, cv, dml_ki_const(p, cg), win) : win));
    dml_krow_combine(s, &body, DML_KF_ADD, DML_KT_F32, 0, 0);
  } else {
    dml_kblock_add(&body, for_loop(s, vc, dml_ki_const(p, cg), win));
  }
  const dml_kval_t *res = dml_kv_reg(p, 0);
  if (b) res = dml_kv_fn(p, DML_KF_ADD, res, dml_kv_load(p, buf_of(b), at(s, b, c[1])));
  dml_kstmt_t *ys = store_at(s, y, gid, res);
  K->n_regs = 1;
  if (coop) {
    dml_kblock_add(&body,
                   if_lt(s, dml_ki_var(p, DML_KVAR_LID_X), dml_ki_const(p, 1), ys));
    K->body = dml_krow_finish(s, numel, vkw + 1, body.first);
  } else {
    dml_kblock_add(&body, ys);
    dml_ksched_map_finish(s, K, &y->type, gid, body.first);
  }
  lin_add(&K->flops, numel, 2 * cg * k[0] * k[1]);
}

/* ---- ConvWeightGrad (1-D and 2-D) ---- */

/* One term of dW[m, c, kh, kw]'s sum: element j of the flat (n, oh, ow)
 * range of dY. */
typedef struct {
  const win_shape_t *ws;
  const dml_kidx_t *ohw, *ow_n;    /* OH * OW and OW (run-time where symbolic) */
  const dml_kidx_t *ybase, *ystep; /* dY element of (0, m, 0, 0); n's stride M*OH*OW */
  const dml_kidx_t *xbase, *xstep; /* X element of (0, ch, 0, 0); n's stride C*H*W */
  const dml_kidx_t *th0, *tw0;     /* kh * dil0, kw * dil1 */
} wgrad_ctx_t;

/* dY[n, m, oh, ow] * (X[n, ch, oh*s0 + kh*d0 - p0, ow*s1 + kw*d1 - p1], or 0
 * outside X) in f32 for j = (n*OH + oh)*OW + ow. A padded tap multiplies 0,
 * as the CPU's im2col does (dY * 0: NaN for an infinite dY). The load
 * outside X reads a wrapped in-range position ((t + p*(H-1)) % H) whose
 * value the select drops, so no access leaves X. */
static const dml_kval_t *wgrad_term(sched_t *s, const dml_kidx_t *j, void *vctx) {
  const wgrad_ctx_t *c = (const wgrad_ctx_t *)vctx;
  const win_shape_t *ws = c->ws;
  dml_kpool_t *p = s->pool;
  int one = ws->y->type.rank == 3;
  const dml_kidx_t *nn = dml_ki_bin(p, DML_KI_DIV, j, c->ohw),
                   *q = dml_ki_bin(p, DML_KI_MOD, j, c->ohw);
  const dml_kidx_t *yi =
      kadd(p, kadd(p, dml_ki_bin(p, DML_KI_MUL, nn, c->ystep), c->ybase), q);
  const dml_kidx_t *Hi = dim_idx(s, ws->hd), *Wi = dim_idx(s, ws->wd);
  const dml_kidx_t *t[2], *ii[2], *ext[2] = {Hi, Wi};
  t[0] = one ? NULL
             : kadd(p, kmul(p, dml_ki_bin(p, DML_KI_DIV, q, c->ow_n), ws->stride[0]),
                    c->th0);
  t[1] = kadd(p, kmul(p, dml_ki_bin(p, DML_KI_MOD, q, c->ow_n), ws->stride[1]), c->tw0);
  const dml_kval_t *inb = NULL;
  for (int d = one; d < 2; d++) {
    int64_t pd = ws->pad[d];
    const dml_kval_t *tv = dml_kv_idx(p, DML_KT_I32, t[d]);
    const dml_kval_t *ok =
        dml_kv_fn(p, DML_KF_LT, tv, dml_kv_idx(p, DML_KT_I32, kaddc(p, ext[d], pd)));
    if (pd)
      ok = dml_kv_fn(p, DML_KF_AND,
                     dml_kv_fn(p, DML_KF_GE, tv, dml_kv_iconst(p, DML_KT_I32, pd)), ok);
    inb = inb ? dml_kv_fn(p, DML_KF_AND, inb, ok) : ok;
    const dml_kidx_t *sh =
        pd ? dml_ki_bin(p, DML_KI_SUB, kadd(p, t[d], kmul(p, ext[d], pd)),
                        dml_ki_const(p, pd))
           : t[d];
    ii[d] = dml_ki_bin(p, DML_KI_MOD, sh, ext[d]);
  }
  const dml_kidx_t *xo =
      one ? ii[1] : kadd(p, dml_ki_bin(p, DML_KI_MUL, ii[0], Wi), ii[1]);
  const dml_kidx_t *xi =
      kadd(p, kadd(p, dml_ki_bin(p, DML_KI_MUL, nn, c->xstep), c->xbase), xo);
  const dml_kval_t *xv =
      dml_kv_select(p, inb, load_f32(s, ws->x, at(s, ws->x, xi)), dml_kv_const(p, 0.0f));
  return dml_kv_fn(p, DML_KF_MUL, load_f32(s, ws->y, at(s, ws->y, yi)), xv);
}

/* ConvWeightGrad(dY, X) -> dW [M, C/group, kH, kW] (1-D: [M, C/group, kW])
 * of the window geometry `ws` (dml_ksched_win_reject: any group, strides,
 * dilations, explicit/VALID pads or SAME over static dims, static or
 * symbolic N and spatial dims; f32, f16, bf16): one output element of dW
 * per workgroup of DML_KROW_WG invocations whenever its sum over
 * (n, oh, ow) has more than DML_KROW_MIN terms at the bounds, summed in f32
 * as dml_krow_reduce does (4 strided accumulators per invocation, then a
 * balanced tree: the error grows with N*OH*OW / 1024, not N*OH*OW, and no
 * invocation loops over more than N*OH*OW / 1024 terms); shorter sums one
 * invocation per element in (n, oh, ow) order. The result is rounded once
 * to dW's dtype. */
void dml_ksched_emit_conv_wgrad(sched_t *s, uint32_t node, const win_shape_t *ws) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_value_t *dw = ws->w;
  if (!ws->sym_sp && (ws->H == 0 || ws->W == 0)) {
    unsupported(s, node, "X with an empty spatial dim", NULL);
    return;
  }
  dml_kernel_t *K = dml_ksched_kernel(s, DML_KK_CONV, node);
  if (!K) return;
  int one = ws->y->type.rank == 3;
  const dml_dim_t *yd = ws->y->type.dims;
  dml_klin_t ly = {0, -1, 0, 0};
  type_numel(&ws->y->type, &ly);
  int64_t jmax = ws->M ? lin_max(s, ly) / ws->M : 0;
  int64_t cg = ws->C / ws->group, mg = ws->M / ws->group;
  dml_kdot_t dot;
  /* the cooperative form past DML_KROW_MIN terms (its blocked sum), not
   * only past the loop limit */
  const dml_kidx_t *gid = dml_kdot_setup(
      s, K, &dw->type, jmax > DML_KROW_MIN ? (int64_t)DML_KLOOP_MAX + 1 : jmax,
      DML_KVAR_FIRST_LOOP + 1, &dot);
  const dml_kidx_t *co[DML_MAX_RANK];
  coords_of(s, &dw->type, gid, co);
  const dml_kidx_t *m = co[0], *cc = co[1], *kh = one ? NULL : co[2],
                   *kw = co[dw->type.rank - 1];
  const dml_kidx_t *ow_n = dim_idx(s, yd[ws->y->type.rank - 1]);
  const dml_kidx_t *ohw = one ? ow_n : dml_ki_bin(p, DML_KI_MUL, dim_idx(s, yd[2]), ow_n);
  const dml_kidx_t *hw =
      one ? dim_idx(s, ws->wd)
          : dml_ki_bin(p, DML_KI_MUL, dim_idx(s, ws->hd), dim_idx(s, ws->wd));
  const dml_kidx_t *ch =
      kadd(p, kmul(p, dml_ki_bin(p, DML_KI_DIV, m, dml_ki_const(p, mg)), cg), cc);
  wgrad_ctx_t c = {ws,
                   ohw,
                   ow_n,
                   dml_ki_bin(p, DML_KI_MUL, m, ohw),
                   kmul(p, ohw, ws->M),
                   dml_ki_bin(p, DML_KI_MUL, ch, hw),
                   kmul(p, hw, ws->C),
                   one ? NULL : kmul(p, kh, ws->dil[0]),
                   kmul(p, kw, ws->dil[1])};
  const dml_kidx_t *terms =
      dml_ki_bin(p, DML_KI_MUL, dim_idx(s, ws->x->type.dims[0]), ohw);
  dml_kblock_t body = {0};
  dml_kdot_sum(s, K, &dot, &body, terms, DML_KVAR_FIRST_LOOP, dml_kv_zero(p, DML_KT_F32),
               wgrad_term, &c, 0);
  dml_kdot_finish(s, K, &dot, gid, &body,
                  store_at(s, dw, gid, win_result(s, ws, dml_kv_reg(p, 0))));
  lin_add(&K->flops, ly, 2 * cg * ws->kh * ws->kw);
  const int64_t esz = (int64_t)dml_dtype_size(ws->x->type.dtype);
  dml_klin_t xl;
  if (type_numel(&ws->x->type, &xl)) lin_add(&K->bytes, xl, esz);
  lin_add(&K->bytes, ly, esz);
  lin_add(&K->bytes, (dml_klin_t){ws->M * cg * ws->kh * ws->kw, -1, 0, 0}, esz);
}

/* ---- MatMul with a batched right operand ---- */

/* MatMul of A [..., M, K] and B [..., K, N] (rank >= 2 each, batch dims
 * broadcast numpy-style) when B has batch dims: one invocation per output
 * element, a loop over K (static, or symbolic: attention's scores times V
 * over a sequence, looping to the run-time value). NULL when emitted, else
 * why not. */
/* The tiled form of a batched MatMul (attention's Q·Kᵀ and P·V): when A
 * [..., M, K], B [..., K, N] and Y have the same batch dims (static or
 * symbolic) and M, N, K are static with M, N >= 16, each product is a GEMM
 * of emit_gemm_tiled's register-blocked form, the products side by side
 * along the grid's x (workgroup x = product * row blocks + row block).
 * Returns 1 when emitted (the per-element form otherwise). */
#define GEMM_BATCHED_MIN 16
static int emit_matmul_batched_tiled(sched_t *s, uint32_t node) {
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *a = val(s, n->inputs[0]), *b = val(s, n->inputs[1]);
  const dml_pkg_value_t *y = val(s, n->outputs[0]);
  int32_t r = y->type.rank;
  if (a->type.rank != r || b->type.rank != r || r < 3) return 0;
  for (int32_t d = 0; d < r - 2; d++)
    if (a->type.dims[d].value != y->type.dims[d].value ||
        a->type.dims[d].sym != y->type.dims[d].sym ||
        b->type.dims[d].value != y->type.dims[d].value ||
        b->type.dims[d].sym != y->type.dims[d].sym)
      return 0;
  const dml_dim_t md = a->type.dims[r - 2], kd = a->type.dims[r - 1],
                  nd = b->type.dims[r - 1];
  if (md.sym >= 0 || kd.sym >= 0 || nd.sym >= 0 || md.value < GEMM_BATCHED_MIN ||
      nd.value < GEMM_BATCHED_MIN || b->type.dims[r - 2].sym >= 0 ||
      b->type.dims[r - 2].value != kd.value)
    return 0;
  gemm_shape_t gs = {.a = a, .b = b, .y = y, .alpha = 1.0, .beta = 1.0, .ksym = -1};
  gs.m = (dml_klin_t){md.value, -1, 0, 0};
  gs.n = nd.value;
  gs.k = kd.value;
  dml_type_t lead = y->type;
  lead.rank -= 2;
  if (!type_numel(&lead, &gs.nb) || gs.nb.c <= 0) return 0;
  group_t G = {.anchor = ANCHOR_GEMM,
               .gid = -1,
               .first = node,
               .nodes = {node},
               .n = 1,
               .out = &y->type};
  dml_ksched_count_outside(s, &G);
  dml_kernel_t *K = new_kernel(s, DML_KK_GEMM);
  if (!K) return 1; /* pool->failed: out of memory */
  set_nodes(s, K, &G);
  int64_t blocks = ((md.value + 127) / 128) * ((nd.value + 127) / 128);
  gemm_cfg_t c = blocks >= 128 ? (gemm_cfg_t){128, 128, 8, 8, 8, 256}
                               : (gemm_cfg_t){64, 64, 4, 4, 8, 256};
  emit_gemm_tiled(s, K, &G, &gs, &c);
  const int64_t esz = (int64_t)dml_dtype_size(y->type.dtype);
  lin_add(&K->flops, gs.nb, 2 * md.value * nd.value * kd.value);
  lin_add(&K->bytes, gs.nb, esz * (md.value * kd.value + kd.value * nd.value));
  return 1;
}

/* One output element of a batched MatMul: its coordinates c. */
typedef struct {
  const dml_pkg_value_t *a, *b, *y;
  const dml_kidx_t *c[DML_MAX_RANK];
} bmm_ctx_t;

/* a(.., i, k) * b(.., k, j) in f32 at output coordinates c
 * (dml_krow_value_fn). */
static const dml_kval_t *bmm_term(sched_t *s, const dml_kidx_t *k, void *vctx) {
  const bmm_ctx_t *x = vctx;
  const dml_pkg_value_t *a = x->a, *b = x->b, *y = x->y;
  const int32_t r = y->type.rank;
  const dml_kidx_t *ac[DML_MAX_RANK], *bc[DML_MAX_RANK];
  for (int32_t d = 0; d < r; d++) ac[d] = bc[d] = x->c[d];
  ac[r - 1] = bc[r - 2] = k;
  return dml_kv_fn(s->pool, DML_KF_MUL,
                   load_f32(s, a, at(s, a, bcast_index(s, &a->type, &y->type, ac))),
                   load_f32(s, b, at(s, b, bcast_index(s, &b->type, &y->type, bc))));
}

const char *dml_ksched_emit_matmul_batched(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const char *why = dml_ksched_map_reject(s, n, 2);
  if (why) return why;
  const dml_pkg_value_t *a = val(s, n->inputs[0]), *b = val(s, n->inputs[1]);
  const dml_pkg_value_t *y = val(s, n->outputs[0]);
  if (y->type.dtype != DML_DTYPE_F32 && y->type.dtype != DML_DTYPE_F16 &&
      y->type.dtype != DML_DTYPE_BF16)
    return "only f32, f16 and bf16 are emitted for this op";
  if (emit_matmul_batched_tiled(s, node)) return NULL;
  int32_t r = y->type.rank;
  if (a->type.rank < 2 || b->type.rank < 2 || r < a->type.rank || r < b->type.rank)
    return "MatMul with a 1-D operand";
  dml_dim_t kd = a->type.dims[a->type.rank - 1], kb = b->type.dims[b->type.rank - 2];
  if (kb.value != kd.value || kb.sym != kd.sym) return "K mismatch";
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK];
  const dml_kidx_t *gid = dml_ksched_map_kernel(s, node, &y->type, &K, c);
  if (!gid) return NULL;
  K->kind = DML_KK_GEMM;
  snprintf(K->name, sizeof K->name, "k%u_%s", s->n_kernels - 1,
           dml_kernel_kind_name(DML_KK_GEMM));
  /* K at its bound: past DML_KLOOP_MAX a workgroup per output element */
  const int64_t kmax =
      kd.sym < 0 ? kd.value : dml_ksched_lin_max(s, (dml_klin_t){kd.value, kd.sym, 0, 0});
  dml_kdot_t dot;
  gid = dml_kdot_setup(s, K, &y->type, kmax, DML_KVAR_FIRST_LOOP + 1, &dot);
  bmm_ctx_t bc = {a, b, y, {0}};
  coords_of(s, &y->type, gid, bc.c);
  dml_kblock_t body = {0};
  dml_kdot_sum(s, K, &dot, &body, dim_idx(s, kd) /* K static or symbolic */,
               DML_KVAR_FIRST_LOOP, dml_kv_const(p, 0.0f), bmm_term, &bc, 0);
  dml_kdot_finish(
      s, K, &dot, gid, &body,
      store_at(s, y, gid,
               kdt(y) == DML_KT_F32 ? dml_kv_reg(p, 0)
                                    : dml_kv_cast(p, kdt(y), dml_kv_reg(p, 0))));
  dml_klin_t numel = {0, -1, 0, 0};
  /* at a symbolic K, the estimate counts K at its bound */
  if (type_numel(&y->type, &numel))
    lin_add(
        &K->flops, numel,
        2 * (kd.sym < 0 ? kd.value
                        : dml_ksched_lin_max(s, (dml_klin_t){kd.value, kd.sym, 0, 0})));
  return NULL;
}
