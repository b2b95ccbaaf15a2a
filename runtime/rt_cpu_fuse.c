/*
 * rt_cpu_fuse.c — node fusion in the CPU executor (rt_session.c).
 *
 * Conv, Gemm and MatMul nodes (f32) with constant weights run with those
 * weights packed once here into the GEMM's panel layout (dml_cpu_prepack)
 * instead of on every call; so do QLinearConv nodes (int8 panels,
 * runtime/cpu/cpu_qgemm.c) and RNN, GRU and LSTM nodes (W and R,
 * dml_cpu_rnn_prepack). A Conv whose output feeds only a
 * BatchNormalization in inference mode with constant scale/B/mean/var,
 * and/or a Conv, Gemm or MatMul whose (or whose BN's) output feeds only a
 * Relu, runs as one node with an epilogue (dml_cpu_run_fused) writing
 * straight into the last node's output; the folded nodes are skipped. A
 * Conv's (or its BN's) output read only by an Add that the fuse pass put in
 * the Conv's group (passes/fuse.c: the fuse_group attribute; a package
 * without it folds no Add), whose other input has the output's f32 shape,
 * folds too, that input becoming the epilogue's residual (then a Relu may
 * still follow): ResNet's Conv + BatchNormalization + Add + Relu. The
 * epilogue rounds each step as the separate kernels do, so the outputs are
 * the same bits as unfused; the gain is two passes over memory per folded
 * node.
 *
 * Two or more consecutive elementwise nodes over one f32 shape that no
 * fold took run as a chain, block by block (dml_rt_cpu_run_chain): the
 * same bits, one pass over memory.
 *
 * With DMLC_CPU_NCHWC=1 on AVX-512 (dml_cpu_nchwc_available), a layout
 * pass (plan_nchwc) keeps the values between fused Convs that have NCHWc
 * kernels in the channel-blocked layout (runtime/cpu/cpu_nchwc.c), the
 * reorders at a run's edges done inside the edge Convs.
 *
 * Only for sessions whose weights cannot change (no function assigns
 * globals: the BN constants are read once here). The nodes must run back
 * to back (then every other value live in between is read by one of them).
 * The fused node writes the last node's output while the Conv's inputs are
 * still read: where the memory plan put that output over an input (the
 * input dies at the Conv), the output moves into the Conv's own output
 * buffer when no value made before the output's last use takes it, else
 * into a buffer of its own beside the arena (extra_bytes).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h" /* dml_cpu_parallel_for */
#include "dml_cpu.h"
#include "rt_internal.h"

static int is_const(const dml_pkg_function_t *f, uint32_t v) {
  return v != DML_PKG_NO_VALUE && f->values[v].storage == DML_PKG_STORAGE_CONST;
}

static int overlaps(const dml_pkg_value_t *a, const dml_pkg_value_t *b) {
  return a->offset < b->offset + b->bytes && b->offset < a->offset + a->bytes;
}

/* The constant value `v` as a tensor (static dims). */
static dml_tensor_t weight_view(const dml_pkg_function_t *f, const uint8_t *weights,
                                uint32_t v) {
  const dml_pkg_value_t *pv = &f->values[v];
  dml_tensor_t t;
  memset(&t, 0, sizeof t);
  t.dtype = pv->type.dtype;
  t.rank = pv->type.rank;
  for (int32_t d = 0; d < t.rank; d++) t.dims[d] = pv->type.dims[d].value;
  t.data = (void *)(uintptr_t)(weights + pv->offset);
  return t;
}

/* 1 when node `k` exists, is `op` and reads `v` as input 0. */
static int reads_first(const dml_pkg_function_t *f, uint32_t k, dml_op_t op, uint32_t v) {
  return k < f->n_nodes && f->nodes[k].op == op && f->nodes[k].n_inputs >= 1 &&
         f->nodes[k].inputs[0] == v && f->nodes[k].n_outputs >= 1;
}

/* BatchNormalization node `n` in inference mode with constant float
 * parameters of [C] and no extra outputs. */
static int bn_foldable(const dml_pkg_function_t *f, const dml_pkg_node_t *n, int64_t C) {
  if (n->n_inputs != 5 || dml_attr_int(n->attrs, n->n_attrs, "training_mode", 0) != 0)
    return 0;
  for (uint32_t j = 1; j < n->n_outputs; j++)
    if (n->outputs[j] != DML_PKG_NO_VALUE) return 0;
  for (uint32_t j = 1; j < 5; j++) {
    if (!is_const(f, n->inputs[j])) return 0;
    const dml_type_t *t = &f->values[n->inputs[j]].type;
    if (!dml_dtype_is_float(t->dtype) || t->rank != 1 || t->dims[0].sym >= 0 ||
        t->dims[0].value != C)
      return 0;
  }
  return 1;
}

/* 1 when node j is in node k's fuse group (the fuse pass's attribute). */
static int same_fuse_group(const dml_pkg_function_t *f, uint32_t k, uint32_t j) {
  const dml_pkg_node_t *a = &f->nodes[k], *b = &f->nodes[j];
  int64_t ga = dml_attr_int(a->attrs, a->n_attrs, DML_FUSE_GROUP_ATTR, -1);
  return ga >= 0 && dml_attr_int(b->attrs, b->n_attrs, DML_FUSE_GROUP_ATTR, -1) == ga;
}

static int same_type(const dml_type_t *a, const dml_type_t *b);

/* The residual of node `a` (Add) fused into Conv node k's epilogue when it
 * reads `fin` (the Conv's or its BN's output): its other input, of fin's
 * and the Add's f32 type (the same dims, symbolic ones by symbol: no
 * broadcast), when the fuse pass grouped the Add with the Conv; else
 * DML_PKG_NO_VALUE. */
static uint32_t residual_of(const dml_pkg_function_t *f, uint32_t k, uint32_t a,
                            uint32_t fin) {
  if (a >= f->n_nodes || !same_fuse_group(f, k, a)) return DML_PKG_NO_VALUE;
  const dml_pkg_node_t *n = &f->nodes[a];
  if (n->op != DML_OP_ADD || n->n_inputs != 2 || n->n_outputs != 1 ||
      n->outputs[0] == DML_PKG_NO_VALUE)
    return DML_PKG_NO_VALUE;
  uint32_t r = n->inputs[0] == fin ? n->inputs[1] : n->inputs[0];
  if ((n->inputs[0] != fin && n->inputs[1] != fin) || r == fin || r == DML_PKG_NO_VALUE)
    return DML_PKG_NO_VALUE;
  const dml_type_t *t = &f->values[fin].type;
  if (t->dtype != DML_DTYPE_F32 || !same_type(&f->values[r].type, t) ||
      !same_type(&f->values[n->outputs[0]].type, t))
    return DML_PKG_NO_VALUE;
  return r;
}

/* ---- elementwise chains ------------------------------------------------ */

/* Ops an elementwise chain may hold: each output position a function of the
 * inputs' values at that position (or of a single value), so a slice of
 * positions computes the slice of the result, the same bits. */
static int chain_op(dml_op_t op) {
  switch (op) {
    case DML_OP_ADD:
    case DML_OP_SUB:
    case DML_OP_MUL:
    case DML_OP_DIV:
    case DML_OP_ERF:
    case DML_OP_RELU:
    case DML_OP_SIGMOID:
    case DML_OP_TANH:
    case DML_OP_NEG:
    case DML_OP_ABS:
    case DML_OP_EXP:
    case DML_OP_SQRT: return 1;
    default: return 0;
  }
}

static int same_type(const dml_type_t *a, const dml_type_t *b) {
  if (a->dtype != b->dtype || a->rank != b->rank) return 0;
  for (int32_t d = 0; d < a->rank; d++)
    if (a->dims[d].sym != b->dims[d].sym ||
        (a->dims[d].sym < 0 && a->dims[d].value != b->dims[d].value))
      return 0;
  return 1;
}

/* 1 when t is f32 with one element (static dims of 1, or rank 0). */
static int single_f32(const dml_type_t *t) {
  if (t->dtype != DML_DTYPE_F32) return 0;
  for (int32_t d = 0; d < t->rank; d++)
    if (t->dims[d].sym >= 0 || t->dims[d].value != 1) return 0;
  return 1;
}

/* 1 when node k can join a chain whose values are typed `shape` (f32). */
static int chain_node(const dml_pkg_function_t *f, const dml_rt_cpu_fuse_t *p, uint32_t k,
                      const dml_type_t *shape) {
  const dml_pkg_node_t *n = &f->nodes[k];
  if (!chain_op(n->op) || n->n_outputs != 1 || n->n_inputs < 1 || n->n_inputs > 2 ||
      p->role[k])
    return 0;
  uint32_t o = n->outputs[0];
  if (o == DML_PKG_NO_VALUE || f->values[o].storage != DML_PKG_STORAGE_ARENA ||
      !same_type(&f->values[o].type, shape))
    return 0;
  for (uint32_t j = 0; j < n->n_inputs; j++) {
    uint32_t v = n->inputs[j];
    if (v == DML_PKG_NO_VALUE) return 0;
    const dml_type_t *t = &f->values[v].type;
    if (!same_type(t, shape) && !single_f32(t)) return 0;
  }
  return 1;
}

/* Node q's output slot in the chain [k, k + len) when it is read only by the
 * chain's nodes (uses[]: the reads of each value, a function output's
 * counted twice more): 1 + its index among such outputs; 0 when the value
 * goes to the arena. */
static void chain_slots(const dml_pkg_function_t *f, const uint32_t *uses, uint32_t k,
                        uint32_t len, uint8_t *slot) {
  uint8_t next = 0;
  for (uint32_t q = k; q < k + len; q++) {
    uint32_t o = f->nodes[q].outputs[0], reads = 0;
    for (uint32_t r = q + 1; r < k + len; r++)
      for (uint32_t j = 0; j < f->nodes[r].n_inputs; j++)
        reads += f->nodes[r].inputs[j] == o;
    slot[q - k] = reads == uses[o] ? ++next : 0;
  }
}

/* 1 when value v of the chain [k, k + len) lives in the arena while the
 * chain runs: not a constant, not in a buffer of its own beside the arena
 * (value_extra), not a block-buffer output. */
static int chain_in_arena(const dml_pkg_function_t *f, const dml_rt_cpu_fuse_t *p,
                          uint32_t k, uint32_t len, const uint8_t *slot, uint32_t v) {
  if (f->values[v].storage == DML_PKG_STORAGE_CONST || p->value_extra[v]) return 0;
  for (uint32_t q = k; q < k + len; q++)
    if (f->nodes[q].outputs[0] == v) return slot[q - k] == 0;
  return 1;
}

/* The chain runs block by block, so the arena values it reads and writes
 * may not overlap but for one exactly over another (a result planned in
 * place: every earlier read of that block has happened when it is
 * written). */
static int chain_fits(const dml_pkg_function_t *f, const dml_rt_cpu_fuse_t *p, uint32_t k,
                      uint32_t len, const uint8_t *slot) {
  uint32_t vs[3 * 64], nvs = 0;
  for (uint32_t q = k; q < k + len && nvs + 3 <= 3 * 64; q++) {
    const dml_pkg_node_t *n = &f->nodes[q];
    for (uint32_t j = 0; j <= n->n_inputs; j++) {
      uint32_t v = j < n->n_inputs ? n->inputs[j] : n->outputs[0];
      if (chain_in_arena(f, p, k, len, slot, v)) vs[nvs++] = v;
    }
  }
  for (uint32_t a = 0; a < nvs; a++)
    for (uint32_t b = a + 1; b < nvs; b++) {
      /* where the session puts them (value_offset: moved by a fusion) */
      dml_pkg_value_t pa = f->values[vs[a]], pb = f->values[vs[b]];
      if (p->value_offset[vs[a]]) pa.offset = p->value_offset[vs[a]] - 1;
      if (p->value_offset[vs[b]]) pb.offset = p->value_offset[vs[b]] - 1;
      if (vs[a] != vs[b] && overlaps(&pa, &pb) &&
          (pa.offset != pb.offset || pa.bytes != pb.bytes))
        return 0;
    }
  return 1;
}

/* Marks the elementwise chains among the nodes no other fusion took: runs
 * of at least 2 consecutive chain ops whose values share one f32 shape
 * (other inputs: single values), up to 64 nodes. Returns the most block
 * buffers one chain needs. */
static uint32_t plan_chains(const dml_pkg_function_t *f, const uint32_t *uses,
                            dml_rt_cpu_fuse_t *p, int *any) {
  uint32_t nn = f->n_nodes, most = 0;
  uint8_t slot[64];
  for (uint32_t k = 0; k + 1 < nn; k++) {
    const dml_pkg_node_t *n = &f->nodes[k];
    if (p->role[k] || !chain_op(n->op) || n->n_outputs != 1 ||
        n->outputs[0] == DML_PKG_NO_VALUE)
      continue;
    const dml_type_t *shape = &f->values[n->outputs[0]].type;
    if (shape->dtype != DML_DTYPE_F32) continue;
    uint32_t len = 0;
    while (k + len < nn && len < 64 && chain_node(f, p, k + len, shape)) len++;
    for (; len >= 2; len--) {
      chain_slots(f, uses, k, len, slot);
      if (chain_fits(f, p, k, len, slot)) break;
    }
    if (len < 2) continue;
    p->role[k] = 1;
    p->final_value[k] = n->outputs[0];
    p->chain_len[k] = len;
    for (uint32_t q = 0; q < len; q++) {
      if (q) p->role[k + q] = 2;
      p->chain_slot[k + q] = slot[q];
      if (slot[q] > most) most = slot[q];
    }
    *any = 1;
    k += len - 1;
  }
  return most;
}

/* ---- the NCHWc layout pass --------------------------------------------- */

/* 1 when value type t is f32 [*, C, H, W] with static C, H, W. */
static int static_chw(const dml_type_t *t) {
  if (t->dtype != DML_DTYPE_F32 || t->rank != 4) return 0;
  for (int d = 1; d < 4; d++)
    if (t->dims[d].sym >= 0 || t->dims[d].value <= 0) return 0;
  return 1;
}

/* 1 when node q's read of value v as input j is one an NCHWc kernel makes
 * with v blocked: input 0 of a Conv with an NCHWc kernel (cand) whose Y is
 * blocked too if it adds a residual, or the residual of such a Conv (its
 * folded Add) whose Y is blocked. */
static int nchwc_reader(const dml_pkg_function_t *f, const dml_rt_cpu_fuse_t *p,
                        const uint8_t *cand, const uint8_t *blk, uint32_t q, uint32_t j,
                        uint32_t v) {
  if (p->role[q] == 1)
    return cand[q] && j == 0 && (!p->residual[q] || blk[p->final_value[q]]);
  if (p->role[q] != 2) return 0;
  uint32_t h = q;
  while (h > 0 && p->role[h] == 2) h--;
  return p->role[h] == 1 && cand[h] && p->residual[h] == v + 1 &&
         blk[p->final_value[h]] && f->nodes[q].op == DML_OP_ADD;
}

/* The layout pass: with dml_cpu_nchwc_available, the fused Conv heads with
 * constant weights that have an NCHWc kernel (dml_cpu_nchwc_conv_kind;
 * X and Y of static C, H, W) keep a value blocked (NCHW16c) when every
 * reader of it is such a kernel (a fixpoint: a value loses the layout when
 * a reader cannot take it, a Y when its residual is not blocked). Each
 * Conv that reads or writes a blocked value gets ep->nchwc (its NCHW side
 * reordered per image in the work buffer) and its weights' packed size in
 * psize[k]. Returns 0, or -1 when out of memory. */
static int plan_nchwc(const dml_pkg_function_t *f, const uint8_t *weights,
                      dml_rt_cpu_fuse_t *p, size_t *psize) {
  if (!dml_cpu_nchwc_available()) return 0;
  uint32_t nn = f->n_nodes, nv = f->n_values;
  uint8_t *cand = (uint8_t *)calloc(nn ? nn : 1, 1),
          *blk = (uint8_t *)calloc(nv ? nv : 1, 1);
  if (!cand || !blk) {
    free(cand);
    free(blk);
    return -1;
  }
  for (uint32_t k = 0; k < nn; k++) {
    const dml_pkg_node_t *n = &f->nodes[k];
    if (p->role[k] != 1 || p->chain_len[k] || n->op != DML_OP_CONV || n->n_inputs < 2 ||
        n->inputs[0] == DML_PKG_NO_VALUE || !is_const(f, n->inputs[1]) ||
        (n->n_inputs > 2 && n->inputs[2] != DML_PKG_NO_VALUE &&
         f->values[n->inputs[2]].type.dtype != DML_DTYPE_F32))
      continue;
    const dml_type_t *xt = &f->values[n->inputs[0]].type;
    const dml_type_t *yt = &f->values[p->final_value[k]].type;
    dml_tensor_t w = weight_view(f, weights, n->inputs[1]);
    if (!static_chw(xt) || !static_chw(yt) ||
        !dml_cpu_nchwc_conv_kind(&w, n->attrs, n->n_attrs, xt->dims[1].value,
                                 xt->dims[2].value, xt->dims[3].value))
      continue;
    cand[k] = 1;
    uint32_t v = p->final_value[k];
    int out = 0;
    for (uint32_t j = 0; j < f->n_outputs; j++) out |= f->outputs[j] == v;
    blk[v] = !out && f->values[v].storage == DML_PKG_STORAGE_ARENA;
  }
  for (int changed = 1; changed;) {
    changed = 0;
    for (uint32_t q = 0; q < nn; q++)
      for (uint32_t j = 0; j < f->nodes[q].n_inputs; j++) {
        uint32_t v = f->nodes[q].inputs[j];
        if (v != DML_PKG_NO_VALUE && blk[v] && !nchwc_reader(f, p, cand, blk, q, j, v))
          blk[v] = 0, changed = 1;
      }
    for (uint32_t k = 0; k < nn; k++)
      if (cand[k] && p->residual[k] && blk[p->final_value[k]] && !blk[p->residual[k] - 1])
        blk[p->final_value[k]] = 0, changed = 1;
  }
  for (uint32_t k = 0; k < nn; k++) {
    if (!cand[k]) continue;
    const dml_pkg_node_t *n = &f->nodes[k];
    int lay = (blk[n->inputs[0]] ? DML_CPU_NCHWC_X : 0) |
              (blk[p->final_value[k]] ? DML_CPU_NCHWC_Y : 0);
    if (!lay) continue;
    p->ep[k].nchwc = DML_CPU_NCHWC_ON | lay;
    dml_tensor_t w = weight_view(f, weights, n->inputs[1]);
    psize[k] = dml_cpu_nchwc_prepack_bytes(&w);
    const dml_type_t *xt = &f->values[n->inputs[0]].type;
    size_t wf = dml_cpu_nchwc_work_floats(&w, n->attrs, n->n_attrs, xt->dims[1].value,
                                          xt->dims[2].value, xt->dims[3].value, lay);
    if (wf > p->nchwc_work_floats) p->nchwc_work_floats = wf;
  }
  free(cand);
  free(blk);
  if (p->nchwc_work_floats) {
    void *b = NULL;
    if (posix_memalign(&b, 64, p->nchwc_work_floats * sizeof(float)) != 0) return -1;
    p->nchwc_work = (float *)b;
    p->nchwc_work_threads = 1;
  }
  return 0;
}

void dml_rt_cpu_nchwc_work(dml_rt_cpu_fuse_t *p, dml_cpu_epilogue_t *ep) {
  int threads = dml_cpu_get_num_threads();
  if (!p->nchwc_work) return;
  if (threads > p->nchwc_work_threads) {
    void *b = NULL;
    if (posix_memalign(&b, 64, (size_t)threads * p->nchwc_work_floats * sizeof(float)) ==
        0) {
      free(p->nchwc_work);
      p->nchwc_work = (float *)b;
      p->nchwc_work_threads = threads;
    } /* else: the threads it has buffers for */
  }
  ep->work = p->nchwc_work;
  ep->work_floats = p->nchwc_work_floats;
  ep->work_threads = p->nchwc_work_threads;
}

void dml_rt_cpu_fuse_free(dml_rt_cpu_fuse_t *p) {
  if (!p) return;
  free(p->role);
  free(p->final_value);
  free(p->ep);
  free(p->coef);
  free(p->value_offset);
  free(p->value_extra);
  free(p->packed);
  free(p->chain_len);
  free(p->chain_slot);
  free(p->chain_buf);
  free(p->residual);
  free(p->nchwc_work);
  free(p);
}

dml_status_t dml_rt_cpu_fuse_plan(const dml_pkg_function_t *f, const uint8_t *weights,
                                  dml_rt_cpu_fuse_t **out) {
  *out = NULL;
  if (getenv("DMLC_CPU_NO_FUSE")) return DML_OK; /* A/B comparisons */
  uint32_t nn = f->n_nodes, nv = f->n_values;
  uint32_t *uses = (uint32_t *)calloc(nv ? nv : 1, sizeof(uint32_t));
  size_t *psize = (size_t *)calloc(nn ? nn : 1, sizeof(size_t)); /* packed bytes */
  dml_rt_cpu_fuse_t *p = (dml_rt_cpu_fuse_t *)calloc(1, sizeof *p);
  size_t coef_n = 0;
  if (p) {
    p->role = (uint8_t *)calloc(nn ? nn : 1, 1);
    p->final_value = (uint32_t *)calloc(nn ? nn : 1, sizeof(uint32_t));
    p->ep = (dml_cpu_epilogue_t *)calloc(nn ? nn : 1, sizeof(dml_cpu_epilogue_t));
    p->value_offset = (uint64_t *)calloc(nv ? nv : 1, sizeof(uint64_t));
    p->value_extra = (uint64_t *)calloc(nv ? nv : 1, sizeof(uint64_t));
    p->chain_len = (uint32_t *)calloc(nn ? nn : 1, sizeof(uint32_t));
    p->chain_slot = (uint8_t *)calloc(nn ? nn : 1, 1);
    p->residual = (uint32_t *)calloc(nn ? nn : 1, sizeof(uint32_t));
  }
  if (!uses || !psize || !p || !p->role || !p->final_value || !p->ep ||
      !p->value_offset || !p->value_extra || !p->chain_len || !p->chain_slot ||
      !p->residual) {
    free(uses);
    free(psize);
    dml_rt_cpu_fuse_free(p);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "rt.session", "out of memory");
  }
  for (uint32_t k = 0; k < nn; k++)
    for (uint32_t j = 0; j < f->nodes[k].n_inputs; j++)
      if (f->nodes[k].inputs[j] != DML_PKG_NO_VALUE) uses[f->nodes[k].inputs[j]]++;
  for (uint32_t j = 0; j < f->n_outputs; j++) uses[f->outputs[j]] += 2; /* never fold */

  /* Pass 1: roles, and the coefficient count. */
  int any = 0;
  size_t packed_n = 0;
  for (uint32_t k = 0; k < nn; k++) {
    const dml_pkg_node_t *n = &f->nodes[k];
    if (n->op == DML_OP_QLINEAR_CONV && n->n_inputs >= 8 && n->n_outputs == 1 &&
        is_const(f, n->inputs[3])) {
      /* int8 Conv: its weights packed once (no epilogue to fold). */
      dml_tensor_t w = weight_view(f, weights, n->inputs[3]);
      size_t pk = dml_cpu_prepack_bytes(n->op, &w, n->attrs, n->n_attrs);
      if (pk == 0) continue;
      p->role[k] = 1;
      p->final_value[k] = n->outputs[0];
      psize[k] = pk;
      any = 1;
      continue;
    }
    if ((n->op == DML_OP_RNN || n->op == DML_OP_GRU || n->op == DML_OP_LSTM) &&
        n->n_inputs >= 3 && n->n_outputs >= 1 && is_const(f, n->inputs[1]) &&
        is_const(f, n->inputs[2])) {
      /* f32 recurrent op: W and R packed once (the gate math is its own
       * epilogue). */
      dml_tensor_t w = weight_view(f, weights, n->inputs[1]);
      dml_tensor_t r = weight_view(f, weights, n->inputs[2]);
      size_t pk = dml_cpu_rnn_prepack_bytes(n->op, &w, &r, n->attrs, n->n_attrs);
      if (pk == 0) continue;
      p->role[k] = 1;
      p->final_value[k] = n->outputs[0]; /* may be absent: outputs stay as planned */
      psize[k] = pk;
      any = 1;
      continue;
    }
    if ((n->op != DML_OP_CONV && n->op != DML_OP_GEMM && n->op != DML_OP_MATMUL) ||
        n->n_outputs != 1 || n->n_inputs < 2)
      continue;
    uint32_t v = n->outputs[0];
    const dml_type_t *t = &f->values[v].type;
    if (t->dtype != DML_DTYPE_F32 || (n->op == DML_OP_CONV && t->rank < 3)) continue;
    int64_t C = t->rank >= 2 && t->dims[1].sym < 0 ? t->dims[1].value : -1;
    /* Constant weights: packed once below. */
    size_t pk = 0;
    if (is_const(f, n->inputs[1])) {
      dml_tensor_t w = weight_view(f, weights, n->inputs[1]);
      pk = dml_cpu_prepack_bytes(n->op, &w, n->attrs, n->n_attrs);
    }
    uint32_t last = k, fin = v, res = DML_PKG_NO_VALUE;
    int bn = 0, relu = 0;
    if (n->op == DML_OP_CONV && C >= 0 && uses[fin] == 1 &&
        reads_first(f, last + 1, DML_OP_BATCH_NORMALIZATION, fin) &&
        bn_foldable(f, &f->nodes[last + 1], C)) {
      bn = 1;
      last++;
      fin = f->nodes[last].outputs[0];
    }
    if (n->op == DML_OP_CONV && uses[fin] == 1 &&
        (res = residual_of(f, k, last + 1, fin)) != DML_PKG_NO_VALUE) {
      last++;
      fin = f->nodes[last].outputs[0];
    }
    if (uses[fin] == 1 && reads_first(f, last + 1, DML_OP_RELU, fin) &&
        f->nodes[last + 1].n_outputs == 1) {
      relu = 1;
      last++;
      fin = f->nodes[last].outputs[0];
    }
    const dml_pkg_value_t *fv = &f->values[fin];
    if (last != k &&
        (fv->storage != DML_PKG_STORAGE_ARENA || fv->type.dtype != DML_DTYPE_F32)) {
      last = k, fin = v, bn = relu = 0, fv = &f->values[v];
      res = DML_PKG_NO_VALUE;
    }
    if (last == k && pk == 0) continue;
    int clash = 0;
    for (uint32_t j = 0; j < n->n_inputs && last != k; j++) {
      uint32_t in = n->inputs[j];
      if (in != DML_PKG_NO_VALUE && !is_const(f, in) && overlaps(fv, &f->values[in]))
        clash = 1;
    }
    /* The residual is read at the place each output is written: the output
     * may lie exactly over it, not partly. */
    if (res != DML_PKG_NO_VALUE && !is_const(f, res) && !p->value_extra[res]) {
      dml_pkg_value_t rv = f->values[res]; /* where the session puts it */
      if (p->value_offset[res]) rv.offset = p->value_offset[res] - 1;
      if (overlaps(fv, &rv) && (fv->offset != rv.offset || fv->bytes != rv.bytes))
        clash = 1;
    }
    if (clash) {
      /* The planner gave the last output the Conv's input buffer (the input
       * dies at the Conv). Move that value into the Conv's own output
       * buffer instead, if no value made before its last use takes that
       * buffer (the Conv's output dies at the chain, so the planner may
       * reuse it). A function output is used until the function returns:
       * no value made after the chain may take the buffer. */
      const dml_pkg_value_t *cv = &f->values[v];
      uint32_t last_use = last;
      for (uint32_t q = last + 1; q < nn; q++)
        for (uint32_t j = 0; j < f->nodes[q].n_inputs; j++)
          if (f->nodes[q].inputs[j] == fin) last_use = q;
      for (uint32_t j = 0; j < f->n_outputs; j++)
        if (f->outputs[j] == fin && nn > 0) last_use = nn - 1;
      int taken = cv->storage != DML_PKG_STORAGE_ARENA || cv->bytes < fv->bytes;
      for (uint32_t q = last + 1; q <= last_use && !taken; q++)
        for (uint32_t j = 0; j < f->nodes[q].n_outputs; j++) {
          uint32_t o = f->nodes[q].outputs[j];
          if (o != DML_PKG_NO_VALUE && f->values[o].storage == DML_PKG_STORAGE_ARENA &&
              overlaps(cv, &f->values[o]))
            taken = 1;
        }
      if (!taken) {
        p->value_offset[fin] = cv->offset + 1;
      } else {
        /* Else a buffer of its own, beside the arena. */
        p->value_extra[fin] = p->extra_bytes + 1;
        p->extra_bytes += (fv->bytes + 63) & ~(uint64_t)63;
      }
    }
    p->role[k] = 1;
    for (uint32_t j = k + 1; j <= last; j++) p->role[j] = 2;
    p->final_value[k] = fin;
    p->ep[k].relu = relu;
    if (res != DML_PKG_NO_VALUE) p->residual[k] = res + 1;
    if (bn) {
      p->ep[k].scale =
          (const float *)(uintptr_t)(coef_n + 1); /* 1 + index until pass 2 */
      coef_n += 2 * (size_t)C;
    }
    psize[k] = pk;
    any = 1;
    k = last;
  }
  uint32_t chain_bufs = plan_chains(f, uses, p, &any);
  p->chain_slots = chain_bufs;
  p->chain_buf_threads = 1;
  free(uses);
  if (any && plan_nchwc(f, weights, p, psize) != 0) {
    free(psize);
    dml_rt_cpu_fuse_free(p);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "rt.session", "out of memory");
  }
  /* The packed weights' offsets (1 + offset until pass 2). */
  for (uint32_t k = 0; k < nn; k++) {
    if (!psize[k]) continue;
    p->ep[k].packed = (const void *)(uintptr_t)(packed_n + 1);
    packed_n += (psize[k] + 63) & ~(size_t)63;
  }
  free(psize);
  if (!any) {
    dml_rt_cpu_fuse_free(p);
    return DML_OK;
  }
  /* Pass 2: BatchNormalization's affine coefficients (dml_cpu_bn_affine),
   * the packed weights. */
  p->coef = (float *)malloc((coef_n ? coef_n : 1) * sizeof(float));
  if (packed_n && posix_memalign(&p->packed, 64, packed_n) != 0) p->packed = NULL;
  void *cb = NULL;
  if (chain_bufs &&
      posix_memalign(&cb, 64, (size_t)chain_bufs * DML_RT_CHAIN_BLOCK * sizeof(float)) !=
          0)
    cb = NULL;
  p->chain_buf = (float *)cb;
  if (!p->coef || (packed_n && !p->packed) || (chain_bufs && !p->chain_buf)) {
    dml_rt_cpu_fuse_free(p);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "rt.session", "out of memory");
  }
  for (uint32_t k = 0; k < nn; k++) {
    if (p->role[k] != 1) continue;
    const dml_pkg_node_t *n = &f->nodes[k];
    if (p->ep[k].packed) {
      void *dst = (char *)p->packed + ((size_t)(uintptr_t)p->ep[k].packed - 1);
      dml_tensor_t w =
          weight_view(f, weights, n->inputs[n->op == DML_OP_QLINEAR_CONV ? 3 : 1]);
      if (n->op == DML_OP_RNN || n->op == DML_OP_GRU || n->op == DML_OP_LSTM) {
        dml_tensor_t r = weight_view(f, weights, n->inputs[2]);
        dml_cpu_rnn_prepack(n->op, &w, &r, n->attrs, n->n_attrs, dst);
      } else if (p->ep[k].nchwc) {
        dml_cpu_nchwc_prepack(&w, (float *)dst);
      } else {
        dml_cpu_prepack(n->op, &w, n->attrs, n->n_attrs, dst);
      }
      p->ep[k].packed = dst;
    }
    if (!p->ep[k].scale) continue;
    const dml_pkg_node_t *b = &f->nodes[k + 1];
    float *sc = p->coef + ((size_t)(uintptr_t)p->ep[k].scale - 1);
    int64_t C = f->values[b->inputs[1]].type.dims[0].value;
    double eps = dml_attr_float(b->attrs, b->n_attrs, "epsilon", 1e-5);
    const void *d[4];
    dml_dtype_t dt[4];
    for (int j = 0; j < 4; j++) {
      const dml_pkg_value_t *pv = &f->values[b->inputs[1 + j]];
      d[j] = weights + pv->offset;
      dt[j] = pv->type.dtype;
    }
    for (int64_t ch = 0; ch < C; ch++)
      dml_cpu_bn_affine(dml_load_f64(dt[0], d[0], (size_t)ch),
                        dml_load_f64(dt[1], d[1], (size_t)ch),
                        dml_load_f64(dt[2], d[2], (size_t)ch),
                        dml_load_f64(dt[3], d[3], (size_t)ch), eps, &sc[ch], &sc[C + ch]);
    p->ep[k].scale = sc;
    p->ep[k].shift = sc + C;
  }
  *out = p;
  return DML_OK;
}

/* A 1-D view of n f32 values at data. */
static dml_tensor_t flat_f32(void *data, int64_t n) {
  dml_tensor_t t;
  memset(&t, 0, sizeof t);
  t.dtype = DML_DTYPE_F32;
  t.rank = 1;
  t.dims[0] = n;
  t.data = data;
  return t;
}

/* One chain run: its blocks go to the pool's threads. */
typedef struct {
  const dml_rt_cpu_fuse_t *p;
  const dml_pkg_function_t *f;
  uint32_t k;
  const dml_tensor_t *vals;
  const dml_cpu_call_t *calls;
  int64_t n;
  pthread_mutex_t mu;
  dml_status_t st; /* the first error of a block */
} chain_run_t;

/* The chain's nodes over positions [i0, i0 + DML_RT_CHAIN_BLOCK) (fewer at
 * the end), its block-buffer values at buf. */
static dml_status_t chain_block(const chain_run_t *x, int64_t i0, float *buf) {
  const dml_pkg_function_t *f = x->f;
  const uint8_t *slot = x->p->chain_slot;
  uint32_t k = x->k, len = x->p->chain_len[k];
  int64_t bs = x->n - i0 < DML_RT_CHAIN_BLOCK ? x->n - i0 : DML_RT_CHAIN_BLOCK;
  for (uint32_t q = k; q < k + len; q++) {
    const dml_pkg_node_t *nd = &f->nodes[q];
    dml_tensor_t in[2], out;
    for (uint32_t j = 0; j < nd->n_inputs; j++) {
      uint32_t v = nd->inputs[j];
      const dml_tensor_t *t = &x->vals[v];
      uint32_t r = k;
      while (r < q && f->nodes[r].outputs[0] != v) r++;
      if (r < q && slot[r])
        in[j] = flat_f32(buf + (size_t)(slot[r] - 1) * DML_RT_CHAIN_BLOCK, bs);
      else if (single_f32(&f->values[v].type) &&
               !same_type(&f->values[v].type, &f->values[nd->outputs[0]].type)) {
        in[j] = *t;
        in[j].rank = 0; /* one value, broadcast */
      } else
        in[j] = flat_f32((float *)t->data + i0, bs);
    }
    if (slot[q])
      out = flat_f32(buf + (size_t)(slot[q] - 1) * DML_RT_CHAIN_BLOCK, bs);
    else
      out = flat_f32((float *)x->vals[nd->outputs[0]].data + i0, bs);
    dml_cpu_call_t c = x->calls[q];
    c.inputs = in;
    c.outputs = &out;
    c.output_capacity = NULL;
    dml_status_t st = dml_cpu_run(&c);
    if (st)
      return q == k ? st
                    : dml_status_annotate(st, "in node #%" PRIu32 " '%s' (%s) of a chain",
                                          q, nd->name, nd->op_name);
  }
  return DML_OK;
}

static void chain_task(void *ctx, int64_t b, int tid) {
  chain_run_t *x = (chain_run_t *)ctx;
  float *buf = x->p->chain_slots ? x->p->chain_buf + (size_t)tid * x->p->chain_slots *
                                                         DML_RT_CHAIN_BLOCK
                                 : NULL;
  dml_status_t st = chain_block(x, b * DML_RT_CHAIN_BLOCK, buf);
  if (!st) return;
  pthread_mutex_lock(&x->mu);
  if (!x->st)
    x->st = st;
  else
    dml_status_free(st);
  pthread_mutex_unlock(&x->mu);
}

dml_status_t dml_rt_cpu_run_chain(dml_rt_cpu_fuse_t *p, const dml_pkg_function_t *f,
                                  uint32_t k, const dml_tensor_t *vals,
                                  const dml_cpu_call_t *calls) {
  const dml_tensor_t *y0 = &vals[f->nodes[k].outputs[0]];
  int64_t n = 1;
  for (int32_t d = 0; d < y0->rank; d++) n *= y0->dims[d];
  chain_run_t x = {p, f, k, vals, calls, n, PTHREAD_MUTEX_INITIALIZER, DML_OK};
  int64_t nb = (n + DML_RT_CHAIN_BLOCK - 1) / DML_RT_CHAIN_BLOCK;
  int threads = dml_cpu_get_num_threads();
  if (nb < 4) threads = 1; /* under 32K values: waking a worker costs more */
  if (threads > 1 && threads > p->chain_buf_threads) {
    /* block buffers for each thread, kept for the next runs */
    void *nbuf = NULL;
    size_t fl = (size_t)threads * p->chain_slots * DML_RT_CHAIN_BLOCK;
    if (p->chain_slots == 0 ||
        posix_memalign(&nbuf, 64, (fl ? fl : 1) * sizeof(float)) == 0) {
      if (nbuf) {
        free(p->chain_buf);
        p->chain_buf = (float *)nbuf;
      }
      p->chain_buf_threads = threads;
    } else {
      threads = 1; /* out of memory: the one thread's buffers */
    }
  }
  if (threads <= 1) {
    for (int64_t b = 0; b < nb; b++)
      DML_RETURN_IF_ERROR(chain_block(&x, b * DML_RT_CHAIN_BLOCK, p->chain_buf));
    return DML_OK;
  }
  dml_cpu_parallel_for(nb, threads, chain_task, &x);
  pthread_mutex_destroy(&x.mu);
  return x.st;
}
