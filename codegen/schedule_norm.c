/* schedule_norm.c — the scheduler's LayerNormalization and
 * InstanceNormalization form (schedule_internal.h): one kernel per node,
 * one invocation per normalized row, or one workgroup per row beyond
 * DML_KROW_MIN elements (schedule_rows.c); mean, then the mean squared
 * deviation, then the normalized row (docs/kernels.md). Moved out of
 * schedule.c unchanged. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schedule_internal.h"
#include "schedule_node_util.h"

/* ---- normalizations: one invocation per normalized row ---- */

/* LayerNormalization (ONNX opset 17: over the dims from `axis` on, Mean and
 * InvStdDev outputs optional) and InstanceNormalization (over the spatial
 * dims of each (n, c), scale and B per channel): mean, then the variance
 * of x - mean (two passes), then y = (x - mean) / sqrt(var + epsilon) *
 * scale + B. Both passes work on x - x0, x0 the row's first element (the
 * shifted-data algorithm, Chan, Golub and LeVeque 1983): a row of equal
 * values gives x - mean = 0 exactly, hence y = B, where an f32 mean
 * rounded off x would be amplified by 1 / sqrt(epsilon) (dml_graphgen seeds
 * 934 and 1530: 2e-4 and 7e-3 from the CPU's double). The normalized dims may be symbolic
 * (wav2vec2's feature encoder normalizes over its frames): the row length is then the
 * product of the run-time symbol values, the form chosen at its bound. */
/* A normalization row (emit_norm): element j of row `row` at row * L + j;
 * y = (x - mean) * inv * scale + B, scale and B per channel (Instance) or
 * broadcast to the normalized dims `nt` (Layer). */
typedef struct {
  const dml_pkg_value_t *x, *y, *sc, *b;
  const dml_type_t *nt;
  const dml_kidx_t *row, *C; /* C: channels (Instance), else NULL */
  const dml_kidx_t *L;       /* the row's length */
  uint32_t mean, inv;        /* registers: the mean of x - x0, 1 / sqrt(var + eps) */
  uint32_t shift;            /* register: x0, the row's first element */
} norm_row_t;

/* A load of value v at element index i (at() applied) as an f32 value:
 * f16/bf16 words widen exactly. */
static const dml_kval_t *norm_load_f32(sched_t *s, const dml_pkg_value_t *v,
                                       const dml_kidx_t *i) {
  const dml_kval_t *x = dml_kv_load_t(s->pool, buf_of(v), kdt(v), i);
  return kdt(v) == DML_KT_F32 ? x : dml_kv_cast(s->pool, DML_KT_F32, x);
}

/* f32 value `v` as a value of y's dtype (f16/bf16: rounded once). */
static const dml_kval_t *as_dtype(sched_t *s, const dml_pkg_value_t *y,
                                  const dml_kval_t *v) {
  return kdt(y) == DML_KT_F32 ? v : dml_kv_cast(s->pool, kdt(y), v);
}

static const dml_kidx_t *norm_elem(sched_t *s, const norm_row_t *c, const dml_kidx_t *j) {
  return dml_ki_bin(s->pool, DML_KI_ADD, dml_ki_bin(s->pool, DML_KI_MUL, c->row, c->L),
                    j);
}

/* f16/bf16 values widen exactly: the mean, the variance and the normalized
 * value are computed in f32, the result rounded once to y's dtype
 * (norm_row_store). */
static const dml_kval_t *norm_shifted(sched_t *s, const norm_row_t *c,
                                      const dml_kidx_t *j) {
  return dml_kv_fn(s->pool, DML_KF_SUB,
                   norm_load_f32(s, c->x, at(s, c->x, norm_elem(s, c, j))),
                   dml_kv_reg(s->pool, c->shift));
}

static const dml_kval_t *norm_dev(sched_t *s, const norm_row_t *c, const dml_kidx_t *j) {
  return dml_kv_fn(s->pool, DML_KF_SUB, norm_shifted(s, c, j),
                   dml_kv_reg(s->pool, c->mean));
}

static const dml_kval_t *norm_out(sched_t *s, const norm_row_t *c, const dml_kidx_t *j) {
  dml_kpool_t *p = s->pool;
  const dml_kval_t *sv, *bv = NULL;
  if (c->C) {
    const dml_kidx_t *ch = dml_ki_bin(p, DML_KI_MOD, c->row, c->C);
    sv = norm_load_f32(s, c->sc, at(s, c->sc, ch));
    bv = norm_load_f32(s, c->b, at(s, c->b, ch));
  } else {
    const dml_kidx_t *nc[DML_MAX_RANK];
    coords_of(s, c->nt, j, nc);
    sv = norm_load_f32(s, c->sc, at(s, c->sc, bcast_index(s, &c->sc->type, c->nt, nc)));
    if (c->b)
      bv = norm_load_f32(s, c->b, at(s, c->b, bcast_index(s, &c->b->type, c->nt, nc)));
  }
  return dml_ksched_norm_affine(p, norm_dev(s, c, j), dml_kv_reg(p, c->inv), sv, bv);
}

const dml_kval_t *dml_ksched_norm_affine(dml_kpool_t *p, const dml_kval_t *dev,
                                         const dml_kval_t *inv, const dml_kval_t *scale,
                                         const dml_kval_t *b) {
  const dml_kval_t *out =
      dml_kv_fn(p, DML_KF_MUL, dml_kv_fn(p, DML_KF_MUL, dev, inv), scale);
  return b ? dml_kv_fn(p, DML_KF_ADD, out, b) : out;
}

const dml_kval_t *dml_ksched_norm_inv(dml_kpool_t *p, const dml_kval_t *sumsq,
                                      const dml_kval_t *Lf, const dml_kval_t *eps) {
  return dml_kv_fn(
      p, DML_KF_RECIP,
      dml_kv_fn(p, DML_KF_SQRT,
                dml_kv_fn(p, DML_KF_ADD, dml_kv_fn(p, DML_KF_DIV, sumsq, Lf), eps), NULL),
      NULL);
}

static const dml_kval_t *norm_row_x(sched_t *s, const dml_kidx_t *j, void *vctx) {
  return norm_shifted(s, vctx, j);
}

static const dml_kval_t *norm_row_sq(sched_t *s, const dml_kidx_t *j, void *vctx) {
  const dml_kval_t *d = norm_dev(s, vctx, j);
  return dml_kv_fn(s->pool, DML_KF_MUL, d, d);
}

static dml_kstmt_t *norm_row_store(sched_t *s, const dml_kidx_t *j, void *vctx) {
  const norm_row_t *c = vctx;
  return store_at(s, c->y, norm_elem(s, c, j), as_dtype(s, c->y, norm_out(s, c, j)));
}

void dml_ksched_norm_emit(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *y = val(s, n->outputs[0]);
  const dml_pkg_value_t *sc = n->n_inputs > 1 ? val(s, n->inputs[1]) : NULL;
  const dml_pkg_value_t *b = n->n_inputs > 2 ? val(s, n->inputs[2]) : NULL;
  const dml_pkg_value_t *mo = n->n_outputs > 1 ? val(s, n->outputs[1]) : NULL;
  const dml_pkg_value_t *io = n->n_outputs > 2 ? val(s, n->outputs[2]) : NULL;
  int inst = n->op == DML_OP_INSTANCE_NORMALIZATION;
  const char *why = NULL;
  int32_t r = x ? x->type.rank : 0;
  int64_t axis = inst ? 2 : norm_axis(dml_attr_int(n->attrs, n->n_attrs, "axis", -1), r);
  const dml_pkg_value_t *all[5] = {x, sc, b, mo, io};
  if (!x || !y || !sc) why = "absent input";
  /* f32, or f16/bf16 (dmlc compile --precision) computed in f32: X, Y,
   * scale and B of one dtype, Mean and InvStdDev f32 or that dtype */
  dml_dtype_t dt = x ? x->type.dtype : DML_DTYPE_F32;
  if (dt != DML_DTYPE_F32 && dt != DML_DTYPE_F16 && dt != DML_DTYPE_BF16)
    why = "only f32, f16 and bf16 are emitted";
  for (int i = 0; !why && i < 5; i++) {
    if (!all[i]) continue;
    if (all[i]->type.dtype != dt && !(i >= 3 && all[i]->type.dtype == DML_DTYPE_F32))
      why = "operands of mixed dtypes";
    else if (!typed_ok(all[i]))
      why = "misaligned value";
    else if (i >= 3 &&
             (overlap(all[i], x) || overlap(all[i], sc) || (b && overlap(all[i], b))))
      why = "its result overlaps its operands in the memory plan";
  }
  if (!why && y->type.dtype != dt) why = "operands of mixed dtypes";
  if (!why && (overlap(y, x) || overlap(y, sc) || (b && overlap(y, b))))
    why = "its result overlaps its operands in the memory plan";
  if (!why && (axis < 0 || axis >= r || (inst && r < 3))) why = "axis out of range";
  dml_klin_t numel = {0, -1, 0, 0}, rows = {0, -1, 0, 0};
  if (!why && !dml_ksched_numel(&x->type, &numel)) why = TOO_MANY_SYMS;
  /* the row length: its bound L (the form) and its run-time value Lx */
  int64_t L = 1;
  const dml_kidx_t *Lx = dml_ki_const(p, 1);
  if (!why) {
    rows = numel;
    for (int32_t d = (int32_t)axis; d < r; d++) {
      dml_dim_t dd = x->type.dims[d];
      rows = dml_ksched_lin_div_dim(rows, dd);
      Lx = dml_ki_bin(p, DML_KI_MUL, Lx, dim_idx(s, dd));
      L *= dd.sym < 0 ? dd.value
                      : dml_ksched_lin_max(s, (dml_klin_t){dd.value, dd.sym, 0, 0});
    }
  }
  if (!why && inst &&
      (x->type.dims[1].sym >= 0 || sc->type.rank != 1 ||
       sc->type.dims[0].value != x->type.dims[1].value || !b || b->type.rank != 1 ||
       b->type.dims[0].value != x->type.dims[1].value))
    why = "scale and B must be [C] with a static C";
  /* LayerNormalization's scale and B broadcast to the normalized shape */
  dml_type_t nt = {DML_DTYPE_F32, 0, {{0, -1}}};
  if (!why && !inst) {
    nt.rank = r - (int32_t)axis;
    for (int32_t d = 0; d < nt.rank; d++) nt.dims[d] = x->type.dims[axis + d];
    for (int i = 1; i < 3; i++)
      if (all[i] && (all[i]->type.rank > nt.rank)) why = "scale or B of higher rank";
  }
  if (why) {
    dml_ksched_unsupported(s, node, why);
    return;
  }
  dml_kernel_t *K = dml_ksched_kernel(s, DML_KK_NORM, node);
  if (!K) return;
  double eps = dml_attr_float(n->attrs, n->n_attrs, "epsilon", 1e-5);
  int coop = dml_krow_wanted(s, L);
  int32_t j = DML_KVAR_FIRST_LOOP;
  const dml_kidx_t *gid;
  if (coop) {
    gid = dml_krow_setup(s, K, rows, j + 1, 0);
  } else {
    K->local[0] = 64;
    K->items[0] = rows;
    gid = dml_ki_var(p, DML_KVAR_GID_X);
  }
  /* registers: mean 0, the sum of squares 1 (4 in the cooperative form,
   * whose sums use 4 registers from there), 1 / sqrt(var + eps) 2 (8), the
   * shift x0 3 (9) */
  norm_row_t c = {x,
                  y,
                  sc,
                  b,
                  &nt,
                  gid,
                  inst ? dim_idx(s, x->type.dims[1]) : NULL,
                  Lx,
                  0,
                  coop ? 8 : 2,
                  coop ? 9 : 3};
  uint32_t vr = coop ? 4 : 1;
  const dml_kidx_t *jv = dml_ki_var(p, j);
  /* L as f32 (exact below 2^24): a constant, or the run-time product */
  const dml_kval_t *Lf = Lx->kind == DML_KI_CONST ? dml_kv_const(p, (float)Lx->c)
                                                  : dml_kv_idx(p, DML_KT_F32, Lx);
  const dml_kval_t *mean = dml_kv_reg(p, 0), *var = dml_kv_reg(p, vr),
                   *inv = dml_kv_reg(p, c.inv);
  dml_kblock_t body = {0};
  /* x0 (0 for an empty row, which reads nothing) */
  dml_kblock_add(&body, assign(s, DML_KS_LET, c.shift, dml_kv_const(p, 0.0f)));
  dml_kblock_add(
      &body,
      if_lt(s, dml_ki_const(p, 0), Lx,
            assign(s, DML_KS_SET, c.shift,
                   norm_load_f32(s, x, at(s, x, norm_elem(s, &c, dml_ki_const(p, 0)))))));
  if (coop) {
    dml_krow_reduce(s, &body, Lx, j, DML_KF_ADD, 0.0f, norm_row_x, &c, 0, 0);
  } else {
    dml_kblock_add(&body, assign(s, DML_KS_LET, 0, dml_kv_const(p, 0.0f)));
    dml_kblock_add(
        &body, for_loop(s, j, Lx,
                        assign(s, DML_KS_SET, 0,
                               dml_kv_fn(p, DML_KF_ADD, mean, norm_row_x(s, jv, &c)))));
  }
  dml_kblock_add(&body, assign(s, DML_KS_SET, 0, dml_kv_fn(p, DML_KF_DIV, mean, Lf)));
  if (coop) {
    dml_krow_reduce(s, &body, Lx, j, DML_KF_ADD, 0.0f, norm_row_sq, &c, vr, 0);
  } else {
    dml_kblock_add(&body, assign(s, DML_KS_LET, vr, dml_kv_const(p, 0.0f)));
    dml_kblock_add(
        &body, for_loop(s, j, Lx,
                        assign(s, DML_KS_SET, vr,
                               dml_kv_fn(p, DML_KF_ADD, var, norm_row_sq(s, jv, &c)))));
  }
  dml_kblock_add(&body,
                 assign(s, DML_KS_LET, c.inv,
                        dml_ksched_norm_inv(p, var, Lf, dml_kv_const(p, (float)eps))));
  if (coop) {
    dml_kblock_add(&body, dml_krow_each(s, Lx, j, norm_row_store, &c));
    dml_kblock_t tail = {0};
    if (mo)
      dml_kblock_add(
          &tail,
          store_at(
              s, mo, gid,
              as_dtype(s, mo, dml_kv_fn(p, DML_KF_ADD, mean, dml_kv_reg(p, c.shift)))));
    if (io) dml_kblock_add(&tail, store_at(s, io, gid, as_dtype(s, io, inv)));
    if (tail.first)
      dml_kblock_add(
          &body, if_lt(s, dml_ki_var(p, DML_KVAR_LID_X), dml_ki_const(p, 1), tail.first));
    K->body = dml_krow_finish(s, rows, j + 1, body.first);
    K->n_regs = 10;
    lin_add(&K->flops, numel, 8);
    lin_add(&K->bytes, numel, 3 * (int64_t)dml_dtype_size(dt));
    return;
  }
  K->n_regs = 4;
  dml_kblock_add(&body, for_loop(s, j, Lx, norm_row_store(s, jv, &c)));
  if (mo)
    dml_kblock_add(
        &body,
        store_at(
            s, mo, gid,
            as_dtype(s, mo, dml_kv_fn(p, DML_KF_ADD, mean, dml_kv_reg(p, c.shift)))));
  if (io) dml_kblock_add(&body, store_at(s, io, gid, as_dtype(s, io, inv)));
  K->body = if_lt(s, gid, dml_ki_lin(p, rows), body.first);
  lin_add(&K->flops, numel, 8);
  lin_add(&K->bytes, numel, 3 * (int64_t)dml_dtype_size(dt));
}
