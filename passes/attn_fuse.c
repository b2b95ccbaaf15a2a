/*
 * attn_fuse.c — the attention pattern exporters write, rewritten to one
 * ONNX Attention node (opset 23), whose GPU form is the fused
 * FlashAttention-style kernel (codegen/schedule_attention.c,
 * docs/kernels.md "Fused attention"):
 *
 *   S = MatMul(Q, Kt)            Q [B, H, Sq, D], Kt [B, H, D, T]
 *   S = Mul(S, c) | Div(S, c)    optional; c a constant scalar (either side of Mul)
 *   S = Add(S, M)                optional; M broadcasting to S, last dim T
 *   P = Softmax(S)               axis -1 (or 3)
 *   P = Where(IsNaN(P), 0, P)    optional (PyTorch's exported SDPA): then the
 *                                Attention carries dmlc_nan_rows_zero = 1 (a
 *                                row whose softmax is NaN gives 0; the CPU
 *                                and GPU kernels read it)
 *   Y = MatMul(P, V)             V [B, H, T, Dv]
 *
 * becomes Y = Attention(Transpose(Kt, [0, 1, 3, 2]), ...) with Q, V, the
 * mask M (additive, Q's dtype) and scale = c (1 / c for Div, 1 without).
 * Only when each intermediate has this one use (not a function result),
 * the operands are 4-D of one float dtype (f32, f16, bf16) with equal
 * leading dims (no broadcasting between them), and M's last dim is T
 * (Attention reads a shorter mask as padded with -inf, Add would
 * broadcast it). The dims may be symbolic. Runs only for packages with a
 * GPU target (fusion_aware: the CPU keeps its GEMM kernels, which are
 * faster than its reference Attention kernel); DMLC_NO_ATTN_FUSE=1 in the
 * environment turns it off (A/B comparisons). The values are Attention's:
 * the same formula, softmax's sums in another order.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_passes.h"

static int is_float_dt(dml_dtype_t d) {
  return d == DML_DTYPE_F32 || d == DML_DTYPE_F16 || d == DML_DTYPE_BF16;
}

static int same_dim(dml_dim_t a, dml_dim_t b) {
  return a.value == b.value && a.sym == b.sym;
}

/* The node defining v when v is a result used once (not a function
 * result) by an op `op` node; NULL otherwise. */
static dml_ir_node_t *single_def(const dml_ir_function_t *f, const dml_ir_value_t *v,
                                 dml_op_t op) {
  if (!v || v->kind != DML_IR_VALUE_RESULT || !v->def || v->def->op != op) return NULL;
  if (dml_ir_value_num_uses(f, v) != 1) return NULL;
  for (uint32_t i = 0; i < f->n_results; i++)
    if (f->results[i] == v) return NULL;
  return v->def;
}

/* The value of a constant scalar (one element, f32/f64), into *out. */
static int const_scalar(const dml_ir_value_t *v, double *out) {
  if (!v || v->kind != DML_IR_VALUE_GLOBAL || !v->data ||
      (v->global_flags & DML_IR_GLOBAL_STATE) || !dml_type_is_static(&v->type))
    return 0;
  for (int32_t i = 0; i < v->type.rank; i++)
    if (v->type.dims[i].value != 1) return 0;
  if (v->type.dtype == DML_DTYPE_F32)
    *out = ((const float *)v->data)[0];
  else if (v->type.dtype == DML_DTYPE_F64)
    *out = ((const double *)v->data)[0];
  else
    return 0;
  return *out == *out && *out != 0.0;
}

/* 1 when v is a constant scalar 0 of dtype dt (f32). */
static int const_zero(const dml_ir_value_t *v) {
  if (!v || v->kind != DML_IR_VALUE_GLOBAL || !v->data ||
      (v->global_flags & DML_IR_GLOBAL_STATE) || !dml_type_is_static(&v->type) ||
      v->type.dtype != DML_DTYPE_F32)
    return 0;
  for (int32_t i = 0; i < v->type.rank; i++)
    if (v->type.dims[i].value != 1) return 0;
  return ((const float *)v->data)[0] == 0.0f;
}

/* PyTorch's exported scaled_dot_product_attention writes Where(IsNaN(P),
 * 0, P) after the Softmax P (rows of NaN, every key masked, become 0):
 * when w is that Where (used once; P used by IsNaN and the Where only),
 * *nan_zero = 1 and the Softmax node is returned, else NULL. */
static dml_ir_node_t *nan_where(const dml_ir_function_t *f, const dml_ir_value_t *w,
                                int *nan_zero) {
  dml_ir_node_t *wh = single_def(f, w, DML_OP_WHERE);
  if (!wh || wh->n_inputs != 3 || !const_zero(wh->inputs[1])) return NULL;
  dml_ir_value_t *p = wh->inputs[2], *c = wh->inputs[0];
  dml_ir_node_t *isn = single_def(f, c, DML_OP_IS_NAN);
  if (!isn || isn->n_inputs != 1 || isn->inputs[0] != p || !p || !p->def ||
      p->def->op != DML_OP_SOFTMAX || dml_ir_value_num_uses(f, p) != 2)
    return NULL;
  for (uint32_t i = 0; i < f->n_results; i++)
    if (f->results[i] == p) return NULL;
  *nan_zero = 1;
  return p->def;
}

static int rank4(const dml_ir_value_t *v, dml_dtype_t dt) {
  return v && v->type.rank == 4 && v->type.dtype == dt;
}

/* 1 when s is MatMul(Q, Kt), optionally times (Mul) or over (Div) a
 * constant scalar, each result used once: *qk the MatMul, *sc the scaling
 * (or NULL), *scale its factor. */
static int match_scores(const dml_ir_function_t *f, const dml_ir_value_t *s,
                        double *scale, dml_ir_node_t **sc, dml_ir_node_t **qk) {
  double c = 1.0;
  dml_ir_node_t *m = single_def(f, s, DML_OP_MUL);
  if (!m) m = single_def(f, s, DML_OP_DIV);
  if (m) {
    if (m->n_inputs != 2) return 0;
    if (const_scalar(m->inputs[1], &c)) {
      s = m->inputs[0];
      if (m->op == DML_OP_DIV) c = 1.0 / c;
    } else if (m->op == DML_OP_MUL && const_scalar(m->inputs[0], &c)) {
      s = m->inputs[1];
    } else {
      return 0;
    }
  }
  dml_ir_node_t *mm = single_def(f, s, DML_OP_MATMUL);
  if (!mm || mm->n_inputs != 2) return 0;
  *scale = c, *sc = m, *qk = mm;
  return 1;
}

static dml_status_t fuse_one(dml_ir_function_t *f, dml_ir_node_t *pv) {
  if (pv->n_inputs != 2 || pv->n_outputs != 1) return DML_OK;
  dml_ir_value_t *pval = pv->inputs[0], *v = pv->inputs[1], *y = pv->outputs[0];
  int nan_zero = 0;
  dml_ir_node_t *sm = single_def(f, pval, DML_OP_SOFTMAX), *wh = NULL;
  if (!sm && (sm = nan_where(f, pval, &nan_zero)) != NULL) {
    wh = pval->def;
    pval = sm->outputs[0];
  }
  if (!sm || !v || !y || sm->n_inputs != 1) return DML_OK;
  const dml_attr_t *ax = dml_ir_node_attr(sm, "axis");
  if (ax && ax->i != -1 && ax->i != 3) return DML_OK;
  dml_ir_value_t *s = sm->inputs[0], *mask = NULL;
  double scale = 1.0;
  dml_ir_node_t *sc = NULL, *qk = NULL;
  dml_ir_node_t *add = single_def(f, s, DML_OP_ADD);
  if (add && add->n_inputs == 2) {
    /* the scores: the operand that is [Mul/Div of] the MatMul */
    for (int k = 0; k < 2 && !qk; k++)
      if (match_scores(f, add->inputs[k], &scale, &sc, &qk)) mask = add->inputs[1 - k];
  } else {
    add = NULL;
    match_scores(f, s, &scale, &sc, &qk);
  }
  if (!qk) return DML_OK;
  s = qk->outputs[0];
  dml_ir_value_t *q = qk->inputs[0], *kt = qk->inputs[1];
  dml_dtype_t dt = y->type.dtype;
  if (!is_float_dt(dt) || !rank4(q, dt) || !rank4(kt, dt) || !rank4(v, dt) ||
      !rank4(y, dt) || !rank4(s, dt) || !rank4(pval, dt))
    return DML_OK;
  const dml_dim_t *Q = q->type.dims, *Kt = kt->type.dims, *V = v->type.dims;
  for (int d = 0; d < 2; d++)
    if (!same_dim(Q[d], Kt[d]) || !same_dim(Q[d], V[d])) return DML_OK;
  if (!same_dim(Q[3], Kt[2]) || !same_dim(Kt[3], V[2]) || Q[1].sym >= 0 ||
      Q[3].sym >= 0 || V[3].sym >= 0)
    return DML_OK;
  if (mask) {
    const dml_type_t *mt = &mask->type;
    if (mt->dtype != dt || mt->rank < 1 || mt->rank > 4 ||
        !same_dim(mt->dims[mt->rank - 1], Kt[3]))
      return DML_OK;
    const dml_dim_t want[4] = {Q[0], Q[1], Q[2], Kt[3]};
    for (int32_t d = 0; d < mt->rank; d++) {
      dml_dim_t md = mt->dims[d];
      if (!(md.sym < 0 && md.value == 1) && !same_dim(md, want[4 - mt->rank + d]))
        return DML_OK;
    }
  }
  /* K = Transpose(Kt, [0, 1, 3, 2]) */
  dml_ir_node_t *tr, *att;
  DML_RETURN_IF_ERROR(dml_ir_node_create(f, DML_OP_TRANSPOSE, NULL, 1, &kt, 1, pv, &tr));
  {
    int64_t perm[4] = {0, 1, 3, 2};
    DML_RETURN_IF_ERROR(dml_ir_node_set_attr_ints(tr, "perm", perm, 4));
  }
  dml_ir_value_t *k = tr->outputs[0];
  k->type = kt->type;
  k->type.dims[2] = Kt[3];
  k->type.dims[3] = Kt[2];
  dml_ir_value_t *ins[4] = {q, k, v, mask};
  DML_RETURN_IF_ERROR(
      dml_ir_node_create(f, DML_OP_ATTENTION, pv->name, mask ? 4 : 3, ins, 1, pv, &att));
  DML_RETURN_IF_ERROR(dml_ir_node_set_attr_float(att, "scale", scale));
  if (nan_zero)
    DML_RETURN_IF_ERROR(dml_ir_node_set_attr_int(att, "dmlc_nan_rows_zero", 1));
  dml_ir_value_t *out = att->outputs[0];
  out->type = y->type;
  out->name = y->name;
  dml_ir_value_replace_all_uses(f, y, out);
  dml_ir_node_erase(pv);
  if (wh) {
    const dml_ir_node_t *isn = wh->inputs[0]->def;
    dml_ir_node_erase(wh);
    dml_ir_node_erase((dml_ir_node_t *)isn);
  }
  dml_ir_node_erase(sm);
  if (add) dml_ir_node_erase(add);
  if (sc) dml_ir_node_erase(sc);
  dml_ir_node_erase(qk);
  return DML_OK;
}

dml_status_t dml_pass_attn_fuse(dml_ir_module_t *m, dml_pass_options_t *o) {
  if (!o || !o->fusion_aware || getenv("DMLC_NO_ATTN_FUSE")) return DML_OK;
  dml_status_t st = DML_OK;
  for (uint32_t i = 0; i < m->n_functions && !st; i++) {
    dml_ir_function_t *f = m->functions[i];
    for (dml_ir_node_t *n = f->first; n && !st;) {
      dml_ir_node_t *next = n->next;
      if (n->op == DML_OP_MATMUL) st = fuse_one(f, n);
      n = next;
    }
  }
  return st;
}
