/* schedule_attention.c — the scheduler's fused attention form
 * (schedule_internal.h): ONNX Attention (opset 23) as one FlashAttention
 * style kernel (Dao et al. 2022, "FlashAttention: Fast and Memory-Efficient
 * Exact Attention with IO-Awareness", algorithm 1), in the kernel IR, so
 * every renderer (GLSL -> SPIR-V, MSL, CUDA C) takes it.
 *
 * One workgroup of ATT_BQ invocations per (batch * query head, tile of
 * ATT_BQ query rows): invocation x holds query row i = tile * ATT_BQ + x,
 * its D values (times scale) in registers, its output accumulators o[Dv],
 * the running maximum m and the running sum l, all f32 whatever the
 * operands' dtype. The keys and values go through shared memory in tiles
 * of BK rows (loaded by the whole workgroup); per tile each invocation
 * writes its BK scores s_j = q . k_j (+ softcap, + mask, -inf where causal
 * or past the mask's last dim) into its row of a third shared tile, takes
 * their maximum mt, then m' = max(m, mt), c = exp(m - m'), l = l c +
 * sum_j exp(s_j - m'), o = o c + sum_j exp(s_j - m') v_j; at the end y =
 * o / l. m' = -inf (every score so far -inf) is replaced by 0 in the
 * exponents, so such a row keeps l = 0 and o = 0. A flag register notes
 * whether some key of the row is not masked (its mask value not -inf, not
 * causal-masked): a row without one (every key masked) gives y = 0, any
 * other y = o / l, so a row whose scores are -inf of themselves (inf in Q
 * or K) gives 0 / 0 = NaN, as the CPU's reference (runtime/cpu/
 * cpu_attention.c) and ONNX Runtime 1.31 do; with dmlc_nan_rows_zero
 * (the attn-fuse pass's, for Where(IsNaN(softmax), 0, softmax)) a row
 * whose l is NaN gives 0 too. The query and key
 * sequences may be symbolic (the grid's x counts query rows; the key loop
 * runs over ceil(T / BK) tiles at run time). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schedule_ops_util.h"

#define ATT_BQ 64     /* query rows (invocations) per workgroup */
#define ATT_MAX_D 256 /* head sizes held in registers */

/* One of Q/K/V/Y: 4-D [B, H, S, D] or 3-D [B, S, H * D]. */
typedef struct {
  const dml_pkg_value_t *v;
  int three_d;
  int64_t h, d;        /* heads, head size (static) */
  const dml_kidx_t *s; /* sequence length (run time) */
} att_view_t;

static const char *att_view(sched_t *s, const dml_pkg_value_t *v, int64_t heads,
                            att_view_t *o) {
  const dml_type_t *t = &v->type;
  o->v = v;
  if (t->rank == 4) {
    if (t->dims[1].sym >= 0 || t->dims[3].sym >= 0)
      return "heads and head size must be static";
    o->three_d = 0, o->h = t->dims[1].value, o->d = t->dims[3].value;
    o->s = dim_idx(s, t->dims[2]);
    return NULL;
  }
  if (t->rank != 3 || heads <= 0 || t->dims[2].sym >= 0 || t->dims[2].value % heads)
    return "3-D Q/K/V need q_num_heads/kv_num_heads dividing a static last dim";
  o->three_d = 1, o->h = heads, o->d = t->dims[2].value / heads;
  o->s = dim_idx(s, t->dims[1]);
  return NULL;
}

/* Flat index of element (b, head, pos, k) of view a. */
static const dml_kidx_t *att_idx(sched_t *s, const att_view_t *a, const dml_kidx_t *b,
                                 const dml_kidx_t *head, const dml_kidx_t *pos,
                                 const dml_kidx_t *k) {
  const dml_kidx_t *r =
      a->three_d
          ? kmul(s, kadd(s, kmul(s, kadd(s, kmul(s, b, a->s), pos), kc(s, a->h)), head),
                 kc(s, a->d))
          : kmul(s, kadd(s, kmul(s, kadd(s, kmul(s, b, kc(s, a->h)), head), a->s), pos),
                 kc(s, a->d));
  return kadd(s, r, k);
}

static int att_same_dim(dml_dim_t a, dml_dim_t b) {
  return a.value == b.value && a.sym == b.sym;
}

static const dml_pkg_value_t *att_out(const sched_t *s, const dml_pkg_node_t *n,
                                      uint32_t k) {
  return k < n->n_outputs ? val(s, n->outputs[k]) : NULL;
}

/* Flat element i of v as f32 (f16/bf16 widen exactly). */
static const dml_kval_t *load_f32_at(sched_t *s, const dml_pkg_value_t *v,
                                     const dml_kidx_t *i) {
  const dml_kval_t *x = load_at(s, v, i);
  return kdt(v) == DML_KT_F32 ? x : dml_kv_cast(s->pool, DML_KT_F32, x);
}

/* 1 when a's and b's planned bytes meet (both in the arena). */
static int att_overlap(const dml_pkg_value_t *a, const dml_pkg_value_t *b) {
  if (a->storage == DML_PKG_STORAGE_CONST || b->storage == DML_PKG_STORAGE_CONST)
    return 0;
  return a->offset < b->offset + b->bytes && b->offset < a->offset + a->bytes;
}

static const dml_kval_t *f2(sched_t *s, dml_kfn_t f, const dml_kval_t *a,
                            const dml_kval_t *b) {
  return dml_kv_fn(s->pool, f, a, b);
}

/* One Attention node's operands and attributes, and the registers its
 * kernels share: q 0 .. D-1 (times scale), o D .. D+Dv-1, then the
 * scalars. */
typedef struct {
  const dml_pkg_value_t *q, *k, *v, *mask, *y;
  att_view_t Q, Kv, V, Y;
  double scale, softcap;
  int causal, nan_zero;
  dml_kdtype_t dt;
  uint32_t RO, RM, RL, RS, RMT, RMS, RC, RP, RB;
  uint32_t RA, RU; /* RA: 1 once some key is unmasked; RU: key j's */
} att_t;

/* Appends to `sc` what turns the dot product in register RS into the score
 * of key j for query row i: the softcap, the mask (-inf past its last dim),
 * -inf where causal and j > i. */
static void att_score_tail(sched_t *s, const att_t *a, dml_kblock_t *sc,
                           const dml_kidx_t *b, const dml_kidx_t *h, const dml_kidx_t *i,
                           const dml_kidx_t *j) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_value_t *mask = a->mask;
  const dml_kval_t *ninf = dml_kv_const(p, -INFINITY), *zero = dml_kv_const(p, 0.0f);
  const uint32_t RS = a->RS, RB = a->RB;
  if (a->softcap > 0) {
    const dml_kval_t *cap = dml_kv_const(p, (float)a->softcap);
    dml_kblock_add(sc,
                   assign(s, DML_KS_SET, RS,
                          f2(s, DML_KF_MUL, cap,
                             dml_kv_tanh(p, f2(s, DML_KF_DIV, dml_kv_reg(p, RS), cap)))));
  }
  if (mask) {
    int32_t r = mask->type.rank;
    const dml_kidx_t *coord[4] = {b, h, i, j}, *off = kc(s, 0);
    for (int32_t d = 0; d < r; d++) {
      dml_dim_t md = mask->type.dims[d];
      const dml_kidx_t *c = md.sym < 0 && md.value == 1 ? kc(s, 0) : coord[4 - r + d];
      off = kadd(s, kmul(s, off, dim_idx(s, md)), c);
    }
    const dml_kval_t *mv;
    if (mask->type.dtype == DML_DTYPE_BOOL)
      mv = dml_kv_select(p, load_at(s, mask, off), zero, ninf);
    else
      mv = load_f32_at(s, mask, off);
    dml_kblock_add(sc, assign(s, DML_KS_SET, RB, ninf));
    dml_kblock_add(sc, if_lt(s, j, dim_idx(s, mask->type.dims[r - 1]),
                             assign(s, DML_KS_SET, RB, mv)));
    dml_kblock_add(sc, assign(s, DML_KS_SET, RS,
                              f2(s, DML_KF_ADD, dml_kv_reg(p, RS), dml_kv_reg(p, RB))));
  }
  /* RU: key j is not masked (its mask value is not -inf, nor j > i causal) */
  const dml_kval_t *one = dml_kv_const(p, 1.0f);
  dml_kblock_add(
      sc,
      assign(s, DML_KS_SET, a->RU,
             mask ? dml_kv_select(p, f2(s, DML_KF_EQ, dml_kv_reg(p, RB), ninf), zero, one)
                  : one));
  if (a->causal) { /* -inf where j > i */
    dml_kblock_add(sc, if_lt(s, i, j, assign(s, DML_KS_SET, RS, ninf)));
    dml_kblock_add(sc, if_lt(s, i, j, assign(s, DML_KS_SET, a->RU, zero)));
  }
  dml_kblock_add(sc,
                 assign(s, DML_KS_SET, a->RA,
                        f2(s, DML_KF_MAX, dml_kv_reg(p, a->RA), dml_kv_reg(p, a->RU))));
}

/* Appends to `out` the stores of query row i: y = o / l, 0 where every key
 * is masked (RA = 0; ONNX Runtime's rule) or, with nan_zero, where l is
 * NaN. Scores all -inf or NaN from Q and K give NaN, as in ONNX Runtime. */
static void att_store(sched_t *s, const att_t *a, dml_kblock_t *out, const dml_kidx_t *b,
                      const dml_kidx_t *h, const dml_kidx_t *i) {
  dml_kpool_t *p = s->pool;
  const dml_kval_t *zero = dml_kv_const(p, 0.0f);
  const dml_kval_t *l0 = f2(s, DML_KF_EQ, dml_kv_reg(p, a->RA), zero);
  if (a->nan_zero) /* l != l: NaN */
    l0 =
        f2(s, DML_KF_OR, l0,
           dml_kv_fn(p, DML_KF_NOT,
                     f2(s, DML_KF_EQ, dml_kv_reg(p, a->RL), dml_kv_reg(p, a->RL)), NULL));
  for (int64_t d = 0; d < a->V.d; d++) {
    const dml_kval_t *yv = dml_kv_select(
        p, l0, zero,
        f2(s, DML_KF_DIV, dml_kv_reg(p, a->RO + (uint32_t)d), dml_kv_reg(p, a->RL)));
    if (a->dt != DML_KT_F32) yv = dml_kv_cast(p, a->dt, yv);
    dml_kblock_add(out, store_at(s, a->y, att_idx(s, &a->Y, b, h, i, kc(s, d)), yv));
  }
}

/* The form for long key sequences (schedule_rows.c's workgroups): one
 * workgroup of DML_KROW_WG invocations per (query row, batch * head);
 * invocation t takes keys t, t + 256, ... reading K and V from memory, each
 * key updating its own running (m, l, o) as the tiled form's tiles do;
 * then the workgroup's maximum M of the m (a tree through tile 0), each
 * invocation's l and o scaled by exp(m - M) (M replaced by 0 where -inf),
 * and sums of l and of each o[d] by trees; invocation 0 stores. A loop of
 * T / 256 iterations per invocation, where the tiled form's run about
 * (3 + (D + Dv) / 64) T (lavapipe stops an invocation after 65,535). */
static void att_long(sched_t *s, dml_kernel_t *K, const att_t *a, dml_klin_t rows,
                     dml_klin_t bh) {
  dml_kpool_t *p = s->pool;
  const int64_t D = a->Q.d, Dv = a->V.d;
  const uint32_t RO = a->RO, RM = a->RM, RL = a->RL, RS = a->RS, RMT = a->RMT,
                 RMS = a->RMS, RC = a->RC, RP = a->RP;
  const int32_t vj = DML_KVAR_FIRST_LOOP, vr = vj + 1;
  const dml_kidx_t *i = dml_krow_setup(s, K, rows, vr, 0);
  K->local[1] = 1;
  K->items[1] = bh;
  const dml_kidx_t *lid = dml_ki_var(p, DML_KVAR_LID_X),
                   *wy = dml_ki_var(p, DML_KVAR_WG_Y);
  const dml_kidx_t *b = dml_ki_bin(p, DML_KI_DIV, wy, kc(s, a->Q.h)),
                   *h = dml_ki_bin(p, DML_KI_MOD, wy, kc(s, a->Q.h));
  const dml_kidx_t *kh = dml_ki_bin(p, DML_KI_DIV, h, kc(s, a->Q.h / a->Kv.h));
  const dml_kidx_t *T = a->Kv.s;
  const dml_kidx_t *j = kadd(s, kmul(s, dml_ki_var(p, vj), kc(s, DML_KROW_WG)), lid);
  const dml_kval_t *ninf = dml_kv_const(p, -INFINITY), *zero = dml_kv_const(p, 0.0f);
#define R(r) dml_kv_reg(p, (r))
  dml_kblock_t body = {0};
  for (int64_t d = 0; d < D; d++)
    dml_kblock_add(&body,
                   assign(s, DML_KS_LET, (uint32_t)d,
                          f2(s, DML_KF_MUL,
                             load_f32_at(s, a->q, att_idx(s, &a->Q, b, h, i, kc(s, d))),
                             dml_kv_const(p, (float)a->scale))));
  for (int64_t d = 0; d < Dv; d++)
    dml_kblock_add(&body, assign(s, DML_KS_LET, RO + (uint32_t)d, zero));
  dml_kblock_add(&body, assign(s, DML_KS_LET, RM, ninf));
  dml_kblock_add(&body, assign(s, DML_KS_LET, RL, zero));
  const uint32_t lets[] = {RS, RMT, RMS, RC, RP, a->RB, a->RA, a->RU};
  for (size_t r = 0; r < sizeof lets / sizeof lets[0]; r++)
    dml_kblock_add(&body, assign(s, DML_KS_LET, lets[r], zero));
  /* key j: its score s, m' = max(m, s) (NaN kept), ms = m' or 0 where -inf,
   * c = exp(m - ms), p = exp(s - ms), l = l c + p, o = o c + p v_j */
  dml_kblock_t key = {0};
  dml_kblock_add(&key, assign(s, DML_KS_SET, RS, zero));
  for (int64_t d = 0; d < D; d++)
    dml_kblock_add(
        &key,
        assign(s, DML_KS_SET, RS,
               f2(s, DML_KF_ADD, R(RS),
                  f2(s, DML_KF_MUL, R((uint32_t)d),
                     load_f32_at(s, a->k, att_idx(s, &a->Kv, b, kh, j, kc(s, d)))))));
  att_score_tail(s, a, &key, b, h, i, j);
  dml_kblock_add(&key,
                 assign(s, DML_KS_SET, RMT, dml_ksched_nan_max(p, R(RM), R(RS), 1)));
  dml_kblock_add(&key,
                 assign(s, DML_KS_SET, RMS,
                        dml_kv_select(p, f2(s, DML_KF_EQ, R(RMT), ninf), zero, R(RMT))));
  dml_kblock_add(
      &key, assign(s, DML_KS_SET, RC,
                   dml_kv_fn(p, DML_KF_EXP, f2(s, DML_KF_SUB, R(RM), R(RMS)), NULL)));
  dml_kblock_add(
      &key, assign(s, DML_KS_SET, RP,
                   dml_kv_fn(p, DML_KF_EXP, f2(s, DML_KF_SUB, R(RS), R(RMS)), NULL)));
  dml_kblock_add(&key, assign(s, DML_KS_SET, RL,
                              f2(s, DML_KF_ADD, f2(s, DML_KF_MUL, R(RL), R(RC)), R(RP))));
  for (int64_t d = 0; d < Dv; d++) {
    const uint32_t o = RO + (uint32_t)d;
    dml_kblock_add(
        &key,
        assign(s, DML_KS_SET, o,
               f2(s, DML_KF_ADD, f2(s, DML_KF_MUL, R(o), R(RC)),
                  f2(s, DML_KF_MUL, R(RP),
                     load_f32_at(s, a->v, att_idx(s, &a->V, b, kh, j, kc(s, d)))))));
  }
  dml_kblock_add(&key, assign(s, DML_KS_SET, RM, R(RMT)));
  const dml_kidx_t *steps =
      dml_ki_bin(p, DML_KI_DIV, kadd(s, T, kc(s, DML_KROW_WG - 1)), kc(s, DML_KROW_WG));
  dml_kblock_add(&body, for_loop(s, vj, steps, if_lt(s, j, T, key.first)));
  /* the workgroup's M (RMT), c = exp(m - M) (M -inf: 0), then the sums */
  dml_kblock_add(&body, assign(s, DML_KS_SET, RMT, R(RM)));
  dml_krow_combine(s, &body, DML_KF_MAX, DML_KT_F32, RMT, 0);
  dml_krow_combine(s, &body, DML_KF_MAX, DML_KT_F32, a->RA, 0); /* some key unmasked */
  dml_kblock_add(&body,
                 assign(s, DML_KS_SET, RMS,
                        dml_kv_select(p, f2(s, DML_KF_EQ, R(RMT), ninf), zero, R(RMT))));
  dml_kblock_add(
      &body, assign(s, DML_KS_SET, RC,
                    dml_kv_fn(p, DML_KF_EXP, f2(s, DML_KF_SUB, R(RM), R(RMS)), NULL)));
  for (int64_t d = -1; d < Dv; d++) {
    const uint32_t r = d < 0 ? RL : RO + (uint32_t)d;
    dml_kblock_add(&body, assign(s, DML_KS_SET, r, f2(s, DML_KF_MUL, R(r), R(RC))));
    dml_krow_combine(s, &body, DML_KF_ADD, DML_KT_F32, r, 0);
  }
#undef R
  dml_kblock_t out = {0};
  att_store(s, a, &out, b, h, i);
  dml_kblock_add(&body, if_lt(s, lid, kc(s, 1), out.first));
  K->body = dml_krow_finish(s, rows, vr, body.first);
}

/* K's work: 2 (QK) + 2 (PV) flops per (row, key, head element) at T's
 * bound tmax. */
static void att_account(sched_t *s, dml_kernel_t *K, const dml_pkg_value_t *q,
                        int64_t tmax, int64_t D, int64_t Dv, dml_kdtype_t dt) {
  dml_klin_t qn = {0, -1, 0, 0};
  if (numel_syms(&q->type, &qn)) {
    dml_ksched_lin_add(&K->flops, qn, 2 * tmax + 2 * tmax * Dv / D);
    dml_ksched_lin_add(&K->bytes, qn, (int64_t)dml_kdtype_size(dt) * 2);
  }
}

/* The descriptor of operand view a (dml_kattn_op_t): element (b, h, pos,
 * d) at off + b * sb + h * sh + pos * sp + d, for a static sequence S. */
static dml_kattn_op_t att_op(const att_view_t *a, int64_t S) {
  dml_kattn_op_t o = {buf_of(a->v), (int64_t)(a->v->offset / dml_kdtype_size(kdt(a->v))),
                      0, 0, 0};
  if (a->three_d)
    o.sb = S * a->h * a->d, o.sh = a->d, o.sp = a->h * a->d;
  else
    o.sb = a->h * S * a->d, o.sh = S * a->d, o.sp = a->d;
  return o;
}

/* The attention's description for renderers with their own main loop
 * (dml_kattn_t: CUDA's tensor-core form), or NULL where it does not apply:
 * symbolic shapes, f32, head sizes other than 64 and 128 or D != Dv, a
 * softcap. */
static const dml_kattn_t *att_describe(sched_t *s, const dml_pkg_value_t *mask,
                                       const att_view_t *Q, const att_view_t *Kv,
                                       const att_view_t *V, const att_view_t *Y,
                                       dml_dim_t Bd, dml_dim_t Sqd, dml_dim_t Td,
                                       dml_kdtype_t dt, double scale, double softcap,
                                       int causal, int nan_zero) {
  if ((dt != DML_KT_F16 && dt != DML_KT_BF16) || softcap > 0) return NULL;
  if (Bd.sym >= 0 || Sqd.sym >= 0 || Td.sym >= 0) return NULL;
  if (Q->d != V->d || (Q->d != 64 && Q->d != 128)) return NULL;
  const dml_pkg_value_t *ops[4] = {Q->v, Kv->v, V->v, Y->v};
  for (int i = 0; i < 4; i++) /* 16-byte aligned bases (cp.async) */
    if ((ops[i]->offset / dml_kdtype_size(dt)) % 8) return NULL;
  if (mask) {
    for (int32_t d = 0; d < mask->type.rank; d++)
      if (mask->type.dims[d].sym >= 0) return NULL;
  }
  dml_kattn_t *a = (dml_kattn_t *)dml_kpool_alloc(s->pool, sizeof *a);
  if (!a) return NULL;
  a->dtype = dt;
  a->B = Bd.value, a->Hq = Q->h, a->Hkv = Kv->h, a->Sq = Sqd.value, a->T = Td.value;
  a->D = Q->d;
  a->scale = scale, a->causal = causal, a->nan_zero = nan_zero;
  a->q = att_op(Q, Sqd.value), a->k = att_op(Kv, Td.value);
  a->v = att_op(V, Td.value), a->y = att_op(Y, Sqd.value);
  if (mask) {
    /* right-aligned over [B, Hq, Sq, T]: row-major strides, 0 where 1 */
    int32_t r = mask->type.rank;
    int64_t st = 1;
    a->has_mask = 1;
    a->mask_bool = mask->type.dtype == DML_DTYPE_BOOL;
    a->m_buf = buf_of(mask);
    a->m_off = (int64_t)(mask->offset / (a->mask_bool ? 1 : dml_kdtype_size(dt)));
    for (int32_t d = r - 1; d >= 0; d--) {
      int64_t n = mask->type.dims[d].value;
      a->m_st[4 - r + d] = n == 1 && d < r - 1 ? 0 : st;
      st *= n;
    }
    a->m_len = mask->type.dims[r - 1].value;
  }
  return a;
}

int dml_ksched_attn_handles(dml_op_t op) {
  return op == DML_OP_ATTENTION;
}

void dml_ksched_attn_emit(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *q = input(s, n, 0), *k = input(s, n, 1), *v = input(s, n, 2),
                        *mask = input(s, n, 3), *y = att_out(s, n, 0);
  const char *why = NULL;
  for (uint32_t i = 4; i < n->n_inputs; i++)
    if (input(s, n, i))
      why = "past_key/past_value/nonpad_kv_seqlen (a KV cache) is not fused yet";
  for (uint32_t i = 1; !why && i < n->n_outputs; i++)
    if (att_out(s, n, i))
      why = "present_key/present_value/qk_matmul_output are not fused yet";
  if (!why && (!q || !k || !v || !y)) why = "absent input";
  if (!why && (dml_attr_int(n->attrs, n->n_attrs, "left_window_size", -1) >= 0 ||
               dml_attr_int(n->attrs, n->n_attrs, "right_window_size", -1) >= 0))
    why = "sliding windows (left/right_window_size) are not fused yet";
  dml_kdtype_t dt = DML_KT_F32;
  if (!why) {
    dt = kdt(q);
    if (dt != DML_KT_F32 && dt != DML_KT_F16 && dt != DML_KT_BF16)
      why = "only f32, f16 and bf16 are emitted";
    const dml_pkg_value_t *all[5] = {q, k, v, y, mask};
    for (int i = 0; !why && i < 5; i++) {
      if (!all[i]) continue;
      if (!typed_ok(all[i]))
        why = "misaligned value";
      else if (i < 4 && all[i]->type.dtype != q->type.dtype)
        why = "Q, K, V and Y must have one dtype";
      else if (i == 4 && all[i]->type.dtype != q->type.dtype &&
               all[i]->type.dtype != DML_DTYPE_BOOL)
        why = "attn_mask must be bool or Q's dtype";
      else if (i != 3 && att_overlap(all[i], y))
        why = "its result overlaps its operands in the memory plan";
    }
  }
  att_view_t Q, Kv, V, Y;
  int64_t qh = dml_attr_int(n->attrs, n->n_attrs, "q_num_heads", 0),
          kvh = dml_attr_int(n->attrs, n->n_attrs, "kv_num_heads", 0);
  if (!why && (q->type.rank != k->type.rank || q->type.rank != v->type.rank ||
               q->type.rank != y->type.rank))
    why = "Q, K, V and Y must have one rank (3 or 4)";
  if (!why) why = att_view(s, q, qh, &Q);
  if (!why) why = att_view(s, k, kvh, &Kv);
  if (!why) why = att_view(s, v, kvh, &V);
  if (!why) why = att_view(s, y, qh, &Y);
  int sd = q && q->type.rank == 3 ? 1 : 2; /* the sequence dim */
  if (!why && (!att_same_dim(q->type.dims[0], k->type.dims[0]) ||
               !att_same_dim(q->type.dims[0], v->type.dims[0]) ||
               !att_same_dim(q->type.dims[0], y->type.dims[0]) ||
               !att_same_dim(k->type.dims[sd], v->type.dims[sd]) ||
               !att_same_dim(q->type.dims[sd], y->type.dims[sd]) || Kv.h != V.h ||
               Kv.h <= 0 || Q.h % Kv.h || Q.d != Kv.d || Y.h != Q.h || Y.d != V.d))
    why = "Q/K/V batch, heads, sequences or head sizes do not match";
  if (!why && (Q.d < 1 || V.d < 1 || Q.d > ATT_MAX_D || V.d > ATT_MAX_D))
    why = "head sizes must be 1..256";
  dml_dim_t Bd = q ? q->type.dims[0] : (dml_dim_t){1, -1};
  dml_dim_t Sqd = q ? q->type.dims[sd] : Bd, Td = k ? k->type.dims[sd] : Bd;
  /* attn_mask: right-aligned broadcast to [B, Hq, Sq, T], last dim <= T */
  const dml_dim_t want[4] = {Bd, {Q.h, -1}, Sqd, Td};
  if (!why && mask) {
    int32_t r = mask->type.rank;
    if (r < 1 || r > 4) why = "attn_mask must broadcast to [B, Hq, Sq, <= T]";
    for (int32_t d = 0; !why && d < r - 1; d++) {
      dml_dim_t md = mask->type.dims[d];
      if (!(md.sym < 0 && md.value == 1) && !att_same_dim(md, want[4 - r + d]))
        why = "attn_mask must broadcast to [B, Hq, Sq, <= T]";
    }
    dml_dim_t last = mask->type.dims[r - 1];
    if (!why && !att_same_dim(last, Td) &&
        !(last.sym < 0 && Td.sym < 0 && last.value <= Td.value))
      why = "attn_mask's last dim must be T or a static length <= a static T";
  }
  dml_klin_t rows = {Sqd.value, Sqd.sym, 0, 0};
  dml_klin_t bh = {Bd.value * Q.h, Bd.sym, 0, 0};
  if (!why && q->type.rank == 3 && Bd.sym >= 0 && Sqd.sym == Bd.sym)
    why = "one symbol for batch and sequence";
  if (!why && dml_ksched_lin_max(s, bh) > 65535) why = "more than 65,535 batch x heads";
  if (why) {
    dml_ksched_unsupported(s, node, why);
    return;
  }
  dml_kernel_t *K = dml_ksched_kernel(s, DML_KK_SOFTMAX, node);
  if (!K) return;
  const int64_t D = Q.d, Dv = V.d, BK = D <= 64 && Dv <= 64 ? 32 : 16, BKp = BK + 1;
  double scale = dml_attr_float(n->attrs, n->n_attrs, "scale", 0.0);
  if (!(scale != 0.0)) scale = 1.0 / sqrt((double)D);
  double softcap = dml_attr_float(n->attrs, n->n_attrs, "softcap", 0.0);
  int causal = dml_attr_int(n->attrs, n->n_attrs, "is_causal", 0) != 0;
  int nan_zero = dml_attr_int(n->attrs, n->n_attrs, "dmlc_nan_rows_zero", 0) != 0;
  /* registers: q 0..D-1, o D..D+Dv-1, then the scalars */
  const uint32_t RO = (uint32_t)D, RM = (uint32_t)(D + Dv), RL = RM + 1, RS = RM + 2,
                 RMT = RM + 3, RMS = RM + 4, RC = RM + 5, RP = RM + 6, RB = RM + 7,
                 RA = RM + 8, RU = RM + 9;
  K->n_regs = RU + 1;
  const att_t A = {q,     k,       v,      mask,     y,  Q,  Kv, V,  Y,
                   scale, softcap, causal, nan_zero, dt, RO, RM, RL, RS,
                   RMT,   RMS,     RC,     RP,       RB, RA, RU};
  int64_t tmax =
      Td.sym < 0 ? Td.value : dml_ksched_lin_max(s, (dml_klin_t){Td.value, Td.sym, 0, 0});
  /* the tiled form's loop iterations per invocation at T's bound: per tile
   * of BK keys, the loads of K and V, the scores, their maximum, the sums */
  const int64_t per_tile =
      1 + (BK * D + ATT_BQ - 1) / ATT_BQ + (BK * Dv + ATT_BQ - 1) / ATT_BQ + 3 * BK;
  if ((tmax + BK - 1) / BK * per_tile > DML_KLOOP_MAX) {
    att_long(s, K, &A, rows, bh);
    att_account(s, K, q, tmax, D, Dv, dt);
    /* CUDA's tensor-core form has no such loop limit: it replaces either form */
    K->attn = att_describe(s, mask, &Q, &Kv, &V, &Y, Bd, Sqd, Td, dt, scale, softcap,
                           causal, nan_zero);
    return;
  }
  K->local[0] = ATT_BQ;
  K->items[0] = rows;
  K->local[1] = 1;
  K->items[1] = bh;
  K->n_tiles = 3;
  K->tile_elems[0] = (uint32_t)(BK * D);       /* keys */
  K->tile_elems[1] = (uint32_t)(BK * Dv);      /* values */
  K->tile_elems[2] = (uint32_t)(ATT_BQ * BKp); /* scores, a row per invocation */
  const int32_t vt = DML_KVAR_FIRST_LOOP, ve = vt + 1, vj = vt + 2;
  const dml_kidx_t *lid = dml_ki_var(p, DML_KVAR_LID_X),
                   *i = dml_ki_var(p, DML_KVAR_GID_X), *wy = dml_ki_var(p, DML_KVAR_WG_Y);
  const dml_kidx_t *b = dml_ki_bin(p, DML_KI_DIV, wy, kc(s, Q.h)),
                   *h = dml_ki_bin(p, DML_KI_MOD, wy, kc(s, Q.h));
  const dml_kidx_t *kh = dml_ki_bin(p, DML_KI_DIV, h, kc(s, Q.h / Kv.h));
  const dml_kidx_t *T = Kv.s, *Sq = Q.s;
  const dml_kidx_t *t0 = kmul(s, dml_ki_var(p, vt), kc(s, BK));
  const dml_kidx_t *jj = dml_ki_var(p, vj), *j = kadd(s, t0, jj);
  const dml_kval_t *ninf = dml_kv_const(p, -INFINITY), *zero = dml_kv_const(p, 0.0f);
  dml_kblock_t body = {0}, qload = {0};
  for (int64_t d = 0; d < D; d++) {
    dml_kblock_add(&body, assign(s, DML_KS_LET, (uint32_t)d, zero));
    dml_kblock_add(&qload, assign(s, DML_KS_SET, (uint32_t)d,
                                  f2(s, DML_KF_MUL,
                                     load_f32_at(s, q, att_idx(s, &Q, b, h, i, kc(s, d))),
                                     dml_kv_const(p, (float)scale))));
  }
  dml_kblock_add(&body, if_lt(s, i, Sq, qload.first));
  for (int64_t d = 0; d < Dv; d++)
    dml_kblock_add(&body, assign(s, DML_KS_LET, RO + (uint32_t)d, zero));
  dml_kblock_add(&body, assign(s, DML_KS_LET, RM, ninf));
  dml_kblock_add(&body, assign(s, DML_KS_LET, RL, zero));
  const uint32_t lets[] = {RS, RMT, RMS, RC, RP, RB, RA, RU};
  for (size_t r = 0; r < sizeof lets / sizeof lets[0]; r++)
    dml_kblock_add(&body, assign(s, DML_KS_LET, lets[r], zero));

  /* one tile of keys and values: load, barrier, scores, update */
  dml_kblock_t tile = {0};
  dml_kblock_add(&tile, dml_ks_new(p, DML_KS_BARRIER));
  for (int kv = 0; kv < 2; kv++) {
    const att_view_t *A = kv ? &V : &Kv;
    const int64_t W = A->d, n_el = BK * W;
    const dml_kidx_t *e = kadd(s, kmul(s, dml_ki_var(p, ve), kc(s, ATT_BQ)), lid);
    const dml_kidx_t *row = dml_ki_bin(p, DML_KI_DIV, e, kc(s, W)),
                     *col = dml_ki_bin(p, DML_KI_MOD, e, kc(s, W));
    const dml_kidx_t *key = kadd(s, t0, row);
    dml_kstmt_t *st = dml_ks_new(p, DML_KS_TILE_STORE);
    if (!st) return;
    st->tile = (uint32_t)kv;
    st->idx = e;
    st->val = load_f32_at(s, A->v, att_idx(s, A, b, kh, key, col));
    dml_kstmt_t *guarded = if_lt(s, key, T, st);
    if (n_el % ATT_BQ) guarded = if_lt(s, e, kc(s, n_el), guarded);
    dml_kblock_add(&tile, for_loop(s, ve, kc(s, (n_el + ATT_BQ - 1) / ATT_BQ), guarded));
  }
  dml_kblock_add(&tile, dml_ks_new(p, DML_KS_BARRIER));

  /* scores of this invocation's row: tile2[lid * BKp + jj] */
  const dml_kidx_t *srow = kadd(s, kmul(s, lid, kc(s, BKp)), jj);
  dml_kblock_t sc = {0};
  dml_kblock_add(&sc, assign(s, DML_KS_SET, RS, zero));
  for (int64_t d = 0; d < D; d++)
    dml_kblock_add(
        &sc, assign(s, DML_KS_SET, RS,
                    f2(s, DML_KF_ADD, dml_kv_reg(p, RS),
                       f2(s, DML_KF_MUL, dml_kv_reg(p, (uint32_t)d),
                          dml_kv_tile(p, 0, kadd(s, kmul(s, jj, kc(s, D)), kc(s, d)))))));
  att_score_tail(s, &A, &sc, b, h, i, j);
  dml_kstmt_t *sst = dml_ks_new(p, DML_KS_TILE_STORE);
  if (!sst) return;
  sst->tile = 2, sst->idx = srow, sst->val = dml_kv_reg(p, RS);
  dml_kblock_add(&sc, sst);
  /* keys past T score -inf */
  dml_kstmt_t *pad = dml_ks_new(p, DML_KS_TILE_STORE);
  if (!pad) return;
  pad->tile = 2, pad->idx = srow, pad->val = ninf;
  dml_kblock_t per_key = {0};
  dml_kblock_add(&per_key, pad);
  dml_kblock_add(&per_key, if_lt(s, j, T, sc.first));
  dml_kblock_t row = {0};
  dml_kblock_add(&row, for_loop(s, vj, kc(s, BK), per_key.first));
  /* mt = max_jj s (NaN propagates, as the CPU's sum does) */
  const dml_kval_t *sj = dml_kv_tile(p, 2, srow);
  dml_kblock_add(&row, assign(s, DML_KS_SET, RMT, ninf));
  dml_kblock_add(&row,
                 for_loop(s, vj, kc(s, BK),
                          assign(s, DML_KS_SET, RMT,
                                 dml_ksched_nan_max(p, dml_kv_reg(p, RMT), sj, 1))));
  /* m' = max(m, mt) (RMT), ms = m' or 0 when -inf, c = exp(m - ms) */
  dml_kblock_add(&row,
                 assign(s, DML_KS_SET, RMT,
                        dml_ksched_nan_max(p, dml_kv_reg(p, RM), dml_kv_reg(p, RMT), 1)));
  dml_kblock_add(&row, assign(s, DML_KS_SET, RMS,
                              dml_kv_select(p, f2(s, DML_KF_EQ, dml_kv_reg(p, RMT), ninf),
                                            zero, dml_kv_reg(p, RMT))));
  dml_kblock_add(
      &row,
      assign(s, DML_KS_SET, RC,
             dml_kv_fn(p, DML_KF_EXP,
                       f2(s, DML_KF_SUB, dml_kv_reg(p, RM), dml_kv_reg(p, RMS)), NULL)));
  dml_kblock_add(&row, assign(s, DML_KS_SET, RL,
                              f2(s, DML_KF_MUL, dml_kv_reg(p, RL), dml_kv_reg(p, RC))));
  for (int64_t d = 0; d < Dv; d++)
    dml_kblock_add(&row, assign(s, DML_KS_SET, RO + (uint32_t)d,
                                f2(s, DML_KF_MUL, dml_kv_reg(p, RO + (uint32_t)d),
                                   dml_kv_reg(p, RC))));
  dml_kblock_add(&row, assign(s, DML_KS_SET, RM, dml_kv_reg(p, RMT)));
  /* p_j = exp(s_j - ms); l += p_j; o += p_j v_j */
  dml_kblock_t acc = {0};
  dml_kblock_add(
      &acc,
      assign(s, DML_KS_SET, RP,
             dml_kv_fn(p, DML_KF_EXP, f2(s, DML_KF_SUB, sj, dml_kv_reg(p, RMS)), NULL)));
  dml_kblock_add(&acc, assign(s, DML_KS_SET, RL,
                              f2(s, DML_KF_ADD, dml_kv_reg(p, RL), dml_kv_reg(p, RP))));
  for (int64_t d = 0; d < Dv; d++)
    dml_kblock_add(
        &acc,
        assign(s, DML_KS_SET, RO + (uint32_t)d,
               f2(s, DML_KF_ADD, dml_kv_reg(p, RO + (uint32_t)d),
                  f2(s, DML_KF_MUL, dml_kv_reg(p, RP),
                     dml_kv_tile(p, 1, kadd(s, kmul(s, jj, kc(s, Dv)), kc(s, d)))))));
  /* only keys below T: the tile's other rows hold stale values */
  dml_kblock_add(&row, for_loop(s, vj, kc(s, BK), if_lt(s, j, T, acc.first)));
  dml_kblock_add(&tile, if_lt(s, i, Sq, row.first));
  const dml_kidx_t *n_tiles =
      dml_ki_bin(p, DML_KI_DIV, kadd(s, T, kc(s, BK - 1)), kc(s, BK));
  dml_kstmt_t *tile_body = tile.first;
  if (causal) /* tiles past the workgroup's last row hold no key of its rows
                 (j > i): skipped, uniformly over the workgroup */
    tile_body = if_lt(
        s, t0, kmul(s, kadd(s, dml_ki_var(p, DML_KVAR_WG_X), kc(s, 1)), kc(s, ATT_BQ)),
        tile_body);
  dml_kblock_add(&body, for_loop(s, vt, n_tiles, tile_body));

  dml_kblock_t out = {0};
  att_store(s, &A, &out, b, h, i);
  dml_kblock_add(&body, if_lt(s, i, Sq, out.first));
  K->body = body.first;
  K->attn = att_describe(s, mask, &Q, &Kv, &V, &Y, Bd, Sqd, Td, dt, scale, softcap,
                         causal, nan_zero);
  att_account(s, K, q, tmax, D, Dv, dt);
}
