/* schedule_wq.c — the GPU form of MatMulWQ, dmlc's weight-only-quantized
 * MatMul (runtime/base/dml_wq.h holds its layouts and formula; issue 19).
 *
 * One kernel per node, one invocation per output element y[r, n] (the
 * leading dims of a and y folded into rows r): a loop over k in [0, K)
 * loads a[r, k], the packed weight q(k, n) from the panel layout (bits 8:
 * the i8 / u8 byte; bits 4: the byte's low or high nibble, u - 8), its
 * group's scale s and zero point z (k / block_size), and accumulates
 * a[r, k] * ((float)(q - z) * s) in f32: DequantizeLinear's formula in the
 * load stage, as the CPU kernel (runtime/cpu/cpu_wq_gemm.c) computes it; no
 * f32 copy of the weight exists. The sums run in k order, the CPU kernels'
 * in blocks, so results agree within f32 summation rounding. This is the
 * plain form (no shared-memory tiling): the weight's bytes are read once
 * per output row from the device's caches. A K above DML_KLOOP_MAX
 * takes a workgroup per output element instead (dml_kdot_sum: strided
 * partial sums, then a tree), as lavapipe stops an invocation's loops after
 * 65,535 iterations. */
#include <stdlib.h>

#include "dml_wq.h"
#include "schedule_internal.h"
#include "schedule_node_util.h"

int dml_ksched_wq_handles(dml_op_t op) {
  return op == DML_OP_MAT_MUL_WQ;
}

/* The operands of one output element y[row, col] of MatMulWQ. */
typedef struct {
  const dml_pkg_value_t *a, *w, *sc, *zp;
  const dml_kidx_t *row, *col;
  int64_t K, N, bits, bs;
} wq_ctx_t;

/* a[row, k] * ((float)(q(k, col) - z) * s): the term k of y[row, col]
 * (dml_krow_value_fn). */
static const dml_kval_t *wq_term(sched_t *s, const dml_kidx_t *k, void *ctx) {
  dml_kpool_t *p = s->pool;
  const wq_ctx_t *c = ctx;
  const int64_t bits = c->bits, N = c->N;
  const dml_kidx_t *col = c->col, *g = dml_ki_bin(p, DML_KI_DIV, k, kc(s, c->bs)),
                   *gn = kadd(s, kmul(s, g, kc(s, N)), col);
  /* byte offset of (k, col): dml_wq_offset's formula on indices */
  const int64_t rb = DML_WQ_ROW_BYTES(bits);
  const dml_kidx_t *panel = dml_ki_bin(p, DML_KI_DIV, col, kc(s, DML_WQ_PANEL));
  const dml_kidx_t *off =
      kadd(s, kmul(s, kadd(s, kmul(s, panel, kc(s, c->K)), k), kc(s, rb)),
           dml_ki_bin(p, DML_KI_MOD, col, kc(s, bits == 4 ? 16 : DML_WQ_PANEL)));
  const dml_kval_t *q; /* i32 */
  if (bits == 8) {
    q = dml_kv_cast(p, DML_KT_I32, load_at(s, c->w, off));
  } else {
    /* nibble: byte / 16^(col % 32 >= 16) % 16 (dml_wq_shift), minus 8 */
    const dml_kidx_t *hi = dml_ki_bin(
        p, DML_KI_DIV, dml_ki_bin(p, DML_KI_MOD, col, kc(s, DML_WQ_PANEL)), kc(s, 16));
    const dml_kidx_t *byte =
        dml_ki_val(p, dml_kv_cast(p, DML_KT_I32, load_at(s, c->w, off)));
    const dml_kidx_t *u = dml_ki_bin(
        p, DML_KI_MOD,
        dml_ki_bin(p, DML_KI_DIV, byte, kadd(s, kc(s, 1), kmul(s, hi, kc(s, 15)))),
        kc(s, 16));
    q = dml_kv_fn(p, DML_KF_SUB, dml_kv_idx(p, DML_KT_I32, u),
                  dml_kv_iconst(p, DML_KT_I32, 8));
  }
  if (c->zp)
    q = dml_kv_fn(p, DML_KF_SUB, q, dml_kv_cast(p, DML_KT_I32, load_at(s, c->zp, gn)));
  const dml_kval_t *wv =
      dml_kv_fn(p, DML_KF_MUL, dml_kv_cast(p, DML_KT_F32, q), load_at(s, c->sc, gn));
  const dml_kval_t *av = load_at(s, c->a, kadd(s, kmul(s, c->row, kc(s, c->K)), k));
  return dml_kv_fn(p, DML_KF_MUL, av, wv);
}

static const char *emit_wq(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *a = input(s, n, 0), *w = input(s, n, 1), *sc = input(s, n, 2),
                        *zp = n->n_inputs > 3 ? input(s, n, 3) : NULL,
                        *y = output(s, n, 0);
  if (!a || !w || !sc || !y) return "absent operand";
  if (a->type.dtype != DML_DTYPE_F32 || y->type.dtype != DML_DTYPE_F32 ||
      sc->type.dtype != DML_DTYPE_F32)
    return "only f32 activations and scales are emitted";
  int64_t bits = dml_attr_int(n->attrs, n->n_attrs, "bits", 0);
  int64_t bs = dml_attr_int(n->attrs, n->n_attrs, "block_size", 0);
  if (bits != 8 && bits != 4) return "attribute 'bits' must be 8 or 4";
  if (bs < 1) return "attribute 'block_size' must be >= 1";
  if (bits == 4 && w->type.dtype != DML_DTYPE_U8) return "a 4-bit weight must be u8";
  if (bits == 8 && w->type.dtype != DML_DTYPE_I8 && w->type.dtype != DML_DTYPE_U8)
    return "an 8-bit weight must be i8 or u8";
  if (zp && zp->type.dtype != (bits == 4 ? DML_DTYPE_I8 : w->type.dtype))
    return "zero point of another dtype than the layout's";
  if (a->type.rank < 1 || y->type.rank < 1 || sc->type.rank != 2) return "bad ranks";
  dml_dim_t kd = a->type.dims[a->type.rank - 1], nd = y->type.dims[y->type.rank - 1];
  if (kd.sym >= 0 || nd.sym >= 0) return "symbolic K or N";
  const int64_t K = kd.value, N = nd.value, G = dml_wq_groups(K, bs);
  if (sc->type.dims[0].value != G || sc->type.dims[1].value != N)
    return "scale is not [ceil(K / block_size), N]";
  if (!is_static(&w->type) ||
      static_numel(&w->type) != dml_wq_panels(N) * K * DML_WQ_ROW_BYTES(bits))
    return "weight is not in the panel layout";

  dml_kernel_t *K_ = dml_ksched_kernel(s, DML_KK_GEMM, node);
  if (!K_) return NULL;
  dml_kdot_t d;
  const dml_kidx_t *gid = dml_kdot_setup(s, K_, &y->type, K, DML_KVAR_FIRST_LOOP + 1, &d);
  wq_ctx_t c = {a,
                w,
                sc,
                zp,
                dml_ki_bin(p, DML_KI_DIV, gid, kc(s, N)),
                dml_ki_bin(p, DML_KI_MOD, gid, kc(s, N)),
                K,
                N,
                bits,
                bs};
  dml_kblock_t body = {0};
  dml_kdot_sum(s, K_, &d, &body, kc(s, K), DML_KVAR_FIRST_LOOP, dml_kv_const(p, 0.0f),
               wq_term, &c, 0);
  dml_kdot_finish(s, K_, &d, gid, &body, store_at(s, y, gid, dml_kv_reg(p, 0)));
  /* per output element: K activations (4 bytes), K weights (bits / 8),
   * K scales (4); 4 operations per k */
  account(K_, &y->type, K * (8 + bits / 8) + 4, 4 * K);
  return NULL;
}

void dml_ksched_wq_emit(sched_t *s, uint32_t node) {
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const char *why = n->n_outputs ? check_values(s, n, 0) : "no output";
  if (!why) why = emit_wq(s, node);
  if (why) dml_ksched_unsupported(s, node, why);
}
