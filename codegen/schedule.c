/* schedule.c — turns a planned function into kernels (dml_kernel.h).
 *
 * One pass over the nodes in execution order. Which nodes share a kernel is
 * decided by the compiler's `fuse` pass (passes/fuse.c), which gives them
 * the same DML_FUSE_GROUP_ATTR: an optional anchor (Gemm/MatMul, Conv, a
 * reduction) followed by elementwise nodes that all produce the group's
 * output type; every invocation computes one output element, so values
 * inside the group stay in registers and are stored only when used outside
 * it or returned. A node joins the open kernel only when it is of the same
 * fuse group and the kernel's forms allow it: it consumes a value of the
 * kernel, has the kernel's output type, and the memory plan puts none of
 * the kernel's results over a value the kernel reads at another element
 * (the planner reuses dead values' memory, which is safe between kernels
 * but not inside one; mem-plan keeps a group's reads live for this). A
 * node emitted in a form of its own (schedule_index.c, schedule_math.c,
 * schedule_spatial.c, ..., a batched MatMul) ends the kernel, and the rest
 * of its group starts another. A package without fuse groups gets one
 * kernel per node. Softmax/LogSoftmax are single kernels; a view at its
 * input's offset aliases it, any other view is a copy kernel.
 * Assign(@global, value) stores into the weights buffer (binding 1) at the
 * global's offset: inside the group that computes the value (the
 * optimizer's update then writes the parameter in place) when the group
 * reads the global at no other element, else as a copy kernel. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dml_cpu.h"
#include "dml_ew.h"
#include "schedule_common.h"

/* Numel of a type as c * sym * (the symbols of `more`) (dml_klin_t): the
 * symbols of its symbolic dims as a multiset, each symbol once in `more`
 * and a symbol of two dims (attention's [batch, heads, seq, seq] scores)
 * also in `sym`; else the first symbol in `sym`. 0 when a symbol's index
 * is 32 or above, a symbol occurs in more than two dims, or two symbols
 * occur twice (counts dml_klin_t cannot hold). */
int dml_ksched_numel(const dml_type_t *t, dml_klin_t *out) {
  dml_klin_t l = {1, -1, 0, 0};
  uint32_t once = 0, twice = 0;
  int32_t first = -1;
  for (int32_t d = 0; d < t->rank; d++) {
    l.c *= t->dims[d].value;
    int32_t sy = t->dims[d].sym;
    if (sy < 0) continue;
    if (sy >= 32 || (twice >> sy & 1u)) return 0;
    if (first < 0) first = sy;
    if (once >> sy & 1u)
      twice |= 1u << sy;
    else
      once |= 1u << sy;
  }
  if (twice & (twice - 1u)) return 0;
  if (twice) {
    l.sym = __builtin_ctz(twice);
    l.more = once;
  } else if (first >= 0) {
    l.sym = first;
    l.more = once & ~(1u << first);
  }
  *out = l;
  return 1;
}

int dml_ksched_sym_repeats(const dml_type_t *t) {
  for (int32_t d = 0; d < t->rank; d++)
    for (int32_t e = d + 1; e < t->rank; e++)
      if (t->dims[d].sym >= 0 && t->dims[d].sym == t->dims[e].sym) return 1;
  return 0;
}

/* l / (extent of dim d): one occurrence of d's symbol taken out of the
 * product and c divided by d's static factor (d must be a dim of the type l
 * counts). */
dml_klin_t dml_ksched_lin_div_dim(dml_klin_t l, dml_dim_t d) {
  if (d.value) l.c /= d.value;
  if (d.sym < 0) return l;
  if (l.sym == d.sym) {
    if (l.more >> d.sym & 1u) {
      l.more &= ~(1u << d.sym); /* a square: one stays in sym */
    } else if (l.more) {
      l.sym = __builtin_ctz(l.more);
      l.more &= l.more - 1u;
    } else {
      l.sym = -1;
    }
  } else if (d.sym < 32) {
    l.more &= ~(1u << d.sym);
  }
  return l;
}

/* Why the output dims of node `node` cannot be known on the host when a
 * run starts, or NULL. A node whose output dims follow from the values of
 * a shape input (it produces data-dependent symbols, ir/dml_ir.h) is
 * emitted when the runtime can compute those dims before the device runs
 * (rt_session.c, with the CPU's shape rules, dml_cpu_output_dims): every
 * input the rule reads is a constant, an input of the function, or a small
 * static value computed from those by nodes the host runs first with the
 * CPU kernels (dml_pkg_host_value: `Range(0, Cast(size), 1)`). A value
 * that needs the device's results (of a node with symbolic dims, a random
 * op, ...) is refused. An op without such a rule counts the extent in its
 * kernel (NonZero, ...: schedule_dyn.c, the runtime reads it back) or is
 * refused. */
static const char *dims_reject(const sched_t *s, uint32_t node) {
  uint32_t fi = (uint32_t)(s->fn - s->g->functions);
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  for (uint32_t k = 0; k < s->g->n_symbols; k++) {
    const dml_pkg_symbol_t *sy = &s->g->symbols[k];
    if (sy->origin != DML_PKG_SYMBOL_NODE || sy->function != fi || sy->node != node)
      continue;
    if (dml_cpu_output_dims_reads(n->op, 0) < 0)
      return dml_ksched_dyn_handles(n->op)
                 ? NULL /* its kernel counts them (schedule_dyn.c) */
                 : "its output dims are counted from data on the device";
    for (uint32_t j = 0; j < n->n_inputs; j++) {
      const dml_pkg_value_t *x = val(s, n->inputs[j]);
      if (x && dml_cpu_output_dims_reads(n->op, j) > 0 &&
          !dml_pkg_host_value(s->fn, n->inputs[j]))
        return "its output dims depend on values computed on the device (shape inputs "
               "must be inputs of the function, constants, or small static values the "
               "host computes from those: dml_pkg_host_value)";
    }
    return NULL;
  }
  return NULL;
}

int64_t dml_ksched_lin_max(const sched_t *s, dml_klin_t l) {
  return lin_max(s, l);
}

const dml_kval_t *dml_ksched_nan_max(dml_kpool_t *p, const dml_kval_t *a,
                                     const dml_kval_t *b, int is_max) {
  return nan_max(p, a, b, is_max);
}

/* Node n's fuse group (passes/fuse.c), -1 when it has none. */
static int64_t fuse_gid(const dml_pkg_node_t *n) {
  int64_t g = dml_attr_int(n->attrs, n->n_attrs, DML_FUSE_GROUP_ATTR, -1);
  return g < 0 ? -1 : g;
}

/* 1 when node n belongs to the IR fuse group of the open kernel G. */
static int in_fuse_group(const group_t *G, const dml_pkg_node_t *n) {
  return G->n > 0 && G->gid >= 0 && fuse_gid(n) == G->gid;
}

/* 1 when no result of G (every node's output, conservatively) overlaps a
 * value G reads at another element than the invocation's own. */
static int group_safe(const sched_t *s, const group_t *G) {
  for (uint32_t i = 0; i < G->n; i++) {
    const dml_pkg_node_t *n = &s->fn->nodes[G->nodes[i]];
    int anchor = i == 0 && G->anchor != ANCHOR_NONE;
    for (uint32_t k = 0; k < n->n_inputs; k++) {
      const dml_pkg_value_t *x = val(s, n->inputs[k]);
      if (!x || producer_in(s, G, n->inputs[k]) >= 0) continue;
      int same_elem = !anchor && same_shape(&x->type, G->out);
      for (uint32_t j = 0; j < G->n; j++) {
        const dml_pkg_node_t *o = &s->fn->nodes[G->nodes[j]];
        const dml_pkg_value_t *y = o->n_outputs ? val(s, o->outputs[0]) : NULL;
        if (!y || !overlap(x, y)) continue;
        if (same_elem && x->offset == y->offset &&
            dml_dtype_size(x->type.dtype) == dml_dtype_size(y->type.dtype))
          continue;
        return 0;
      }
    }
  }
  return 1;
}

void dml_ksched_lin_add(dml_klin_t *acc, dml_klin_t x, int64_t mul) {
  lin_add(acc, x, mul);
}

/* Counts, for every value produced in G, its consumers outside G
 * (s->n_uses_outside; declared in schedule_common.h). */
void dml_ksched_count_outside(sched_t *s, const group_t *G) {
  for (uint32_t i = 0; i < G->n; i++) {
    if (!s->fn->nodes[G->nodes[i]].n_outputs) continue; /* Assign */
    uint32_t v = s->fn->nodes[G->nodes[i]].outputs[0];
    s->n_uses_outside[v] = 0;
    for (uint32_t k = 0; k < s->fn->n_nodes; k++) {
      if (in_group(G, k)) continue;
      const dml_pkg_node_t *n = &s->fn->nodes[k];
      for (uint32_t j = 0; j < n->n_inputs; j++)
        if (n->inputs[j] == v) s->n_uses_outside[v]++;
    }
  }
}

/* ---- Assign ---- */

/* 1 when global `gl` (in the weights) overlaps value `x`. */
static int weights_overlap(const dml_pkg_value_t *gl, const dml_pkg_value_t *x) {
  return x->storage == DML_PKG_STORAGE_CONST && x->offset < gl->offset + gl->bytes &&
         gl->offset < x->offset + x->bytes;
}

/* 1 when some node of G reads global `gl` at another element than the
 * invocation's own (the anchor's operands, broadcast reads, BatchNorm's
 * per-channel parameters): storing into it inside G would race. */
static int reads_other_element(sched_t *s, const group_t *G, const dml_pkg_value_t *gl) {
  for (uint32_t i = 0; i < G->n; i++) {
    const dml_pkg_node_t *n = &s->fn->nodes[G->nodes[i]];
    if (n->op == DML_OP_ASSIGN) continue;
    for (uint32_t k = 0; k < n->n_inputs; k++) {
      const dml_pkg_value_t *x = val(s, n->inputs[k]);
      if (!x || !weights_overlap(gl, x)) continue;
      if ((i == 0 && G->anchor != ANCHOR_NONE) ||
          (n->op == DML_OP_BATCH_NORMALIZATION && k > 0) ||
          !same_shape(&x->type, G->out) || x->offset != gl->offset)
        return 1;
    }
  }
  return 0;
}

void dml_ksched_unsupported(sched_t *s, uint32_t node, const char *why) {
  unsupported(s, node, "%s", why);
}

dml_kernel_t *dml_ksched_kernel(sched_t *s, dml_kernel_kind_t kind, uint32_t node) {
  dml_kernel_t *K = new_kernel(s, kind);
  if (!K) return NULL;
  group_t G = {.anchor = ANCHOR_NONE, .n = 1, .nodes = {node}};
  set_nodes(s, K, &G);
  return K;
}

int dml_kschedule_handles(dml_op_t op) {
  const dml_op_info_t *info = dml_op_info(op);
  if (!info) return 0;
  if (dml_ksched_spatial_handles(op)) return 1;
  if (dml_ksched_index_handles(op)) return 1;
  if (dml_ksched_math_handles(op)) return 1;
  if (dml_ksched_dyn_handles(op)) return 1;
  if (dml_ksched_topk_dft_tfidf_handles(op)) return 1;
  if (dml_ksched_wq_handles(op)) return 1;
  if (dml_ksched_attn_handles(op)) return 1;
  if (dml_ksched_ew_op(op) || dml_ksched_move_op(op) || (info->flags & DML_OPF_VIEW))
    return 1;
  switch (op) {
    case DML_OP_ASSIGN:
    case DML_OP_GEMM:
    case DML_OP_MATMUL:
    case DML_OP_REDUCE_SUM:
    case DML_OP_REDUCE_MEAN:
    case DML_OP_REDUCE_MAX:
    case DML_OP_REDUCE_MIN:
    case DML_OP_REDUCE_PROD:
    case DML_OP_REDUCE_L1:
    case DML_OP_REDUCE_L2:
    case DML_OP_REDUCE_LOG_SUM:
    case DML_OP_REDUCE_LOG_SUM_EXP:
    case DML_OP_REDUCE_SUM_SQUARE:
    case DML_OP_LAYER_NORMALIZATION:
    case DML_OP_INSTANCE_NORMALIZATION:
    case DML_OP_HARDMAX:
    case DML_OP_CONV_TRANSPOSE:
    case DML_OP_CONV_WEIGHT_GRAD:
    case DML_OP_CONV_INPUT_GRAD:
    case DML_OP_MAX_POOL_GRAD:
    case DML_OP_AVERAGE_POOL_GRAD:
    case DML_OP_GATHER:
    case DML_OP_GATHER_ELEMENTS:
    case DML_OP_NEGATIVE_LOG_LIKELIHOOD_LOSS:
    case DML_OP_SOFTMAX_CROSS_ENTROPY_LOSS:
    case DML_OP_SOFTMAX:
    case DML_OP_LOG_SOFTMAX:
    case DML_OP_CONV:
    case DML_OP_MAX_POOL:
    case DML_OP_AVERAGE_POOL:
    case DML_OP_GLOBAL_AVERAGE_POOL:
    case DML_OP_GLOBAL_MAX_POOL:
    case DML_OP_ARG_MAX:
    case DML_OP_ARG_MIN:
    case DML_OP_SHAPE:
    case DML_OP_SIZE:
    case DML_OP_DROPOUT:
    case DML_OP_RANGE:
    case DML_OP_CONSTANT_OF_SHAPE:
    case DML_OP_HANN_WINDOW:
    case DML_OP_HAMMING_WINDOW:
    case DML_OP_BLACKMAN_WINDOW:
    case DML_OP_RNN:
    case DML_OP_GRU:
    case DML_OP_LSTM: return 1;
    default: return dml_ksched_random_op(op);
  }
}

/* ---- the pass ---- */

static void close_group(sched_t *s, group_t *G, const gemm_shape_t *gs, const int *red,
                        const win_shape_t *ws) {
  if (G->n == 0) return;
  dml_ksched_count_outside(s, G);
  if (G->anchor == ANCHOR_GEMM) {
    uint32_t k = s->n_kernels;
    dml_ksched_emit_gemm_group(s, G, gs);
    /* the tensor-core renderers need a static K; a small M keeps its
     * K-split form (a 128-row tile would be mostly empty) */
    if (s->n_kernels == k + 1 && gs->ksym < 0 && lin_max(s, gs->m) > GEMM_SMALL_M)
      dml_ksched_attach_gemm(s, &s->kernels[k], G, gs);
  } else if (G->anchor == ANCHOR_CONV)
    dml_ksched_emit_conv_group(s, G, ws);
  else if (G->anchor == ANCHOR_REDUCE)
    dml_ksched_emit_reduce_group(s, G, red);
  else
    dml_ksched_emit_ew_group(s, G);
  G->n = 0;
}

static int consumes_group(const sched_t *s, const group_t *G, const dml_pkg_node_t *n) {
  for (uint32_t k = 0; k < n->n_inputs; k++)
    if (n->inputs[k] != DML_PKG_NO_VALUE && producer_in(s, G, n->inputs[k]) >= 0)
      return 1;
  return 0;
}

static int is_view_alias(const sched_t *s, const dml_pkg_node_t *n) {
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *y = val(s, n->outputs[0]);
  return x && y && x->storage != DML_PKG_STORAGE_CONST && x->offset == y->offset;
}

/* Host node `node` (dml_kschedule_host): appended to the plan's last entry
 * when that is a host entry, else a new one. */
static void emit_host(sched_t *s, uint32_t node) {
  dml_kernel_t *L = s->n_kernels ? &s->kernels[s->n_kernels - 1] : NULL;
  if (L && L->kind == DML_KK_HOST) {
    uint32_t *nodes =
        (uint32_t *)dml_kpool_alloc(s->pool, (L->n_nodes + 1) * sizeof(uint32_t));
    if (!nodes) return; /* pool->failed: out of memory */
    memcpy(nodes, L->nodes, L->n_nodes * sizeof(uint32_t));
    nodes[L->n_nodes++] = node;
    L->nodes = nodes;
    s->group_of[node] = s->n_kernels;
    return;
  }
  dml_ksched_kernel(s, DML_KK_HOST, node);
}

dml_status_t dml_kschedule(const dml_pkg_graph_t *g, uint32_t fn, const uint8_t *weights,
                           uint64_t weights_size, dml_kplan_t **out_plan) {
  return dml_kschedule_host(g, fn, weights, weights_size, NULL, NULL, out_plan);
}

dml_status_t dml_kschedule_host(const dml_pkg_graph_t *g, uint32_t fn,
                                const uint8_t *weights, uint64_t weights_size,
                                const uint8_t *host, uint8_t *refused,
                                dml_kplan_t **out_plan) {
  if (!g || fn >= g->n_functions || !out_plan)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "codegen.schedule",
                           "no such function %u", fn);
  dml_kplan_t *plan = (dml_kplan_t *)calloc(1, sizeof *plan);
  dml_kpool_t *pool = (dml_kpool_t *)calloc(1, sizeof *pool);
  sched_t s;
  memset(&s, 0, sizeof s);
  s.g = g;
  s.fn = &g->functions[fn];
  s.weights = weights;
  s.weights_size = weights ? weights_size : 0;
  s.pool = pool;
  s.host = host;
  s.refused = refused;
  uint32_t nv = s.fn->n_values ? s.fn->n_values : 1,
           nn = s.fn->n_nodes ? s.fn->n_nodes : 1;
  s.n_uses_outside = (uint32_t *)calloc(nv, sizeof(uint32_t));
  s.group_of = (uint32_t *)calloc(nn, sizeof(uint32_t));
  s.is_output = (uint8_t *)calloc(nv, 1);
  if (!plan || !pool || !s.n_uses_outside || !s.group_of || !s.is_output) {
    free(plan);
    free(pool);
    free(s.n_uses_outside);
    free(s.group_of);
    free(s.is_output);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen.schedule",
                           "out of memory");
  }
  for (uint32_t i = 0; i < s.fn->n_outputs; i++)
    if (s.fn->outputs[i] < nv) s.is_output[s.fn->outputs[i]] = 1;

  group_t *G = (group_t *)calloc(1, sizeof *G);
  gemm_shape_t gs;
  win_shape_t ws;
  int red[DML_MAX_RANK] = {0};
  memset(&gs, 0, sizeof gs);
  memset(&ws, 0, sizeof ws);
  for (uint32_t i = 0; G && i < s.fn->n_nodes; i++) {
    const dml_pkg_node_t *n = &s.fn->nodes[i];
    const dml_op_info_t *info = dml_op_info(n->op);
    const dml_pkg_value_t *y = n->n_outputs ? val(&s, n->outputs[0]) : NULL;
    if (s.host && s.host[i]) { /* the CPU fall-back: the host runs it */
      close_group(&s, G, &gs, red, &ws);
      emit_host(&s, i);
      continue;
    }
    const char *dwhy = dims_reject(&s, i);
    if (dwhy) {
      unsupported(&s, i, "%s", dwhy);
      continue;
    }
    if (info && (info->flags & DML_OPF_VIEW)) {
      const dml_pkg_value_t *x = val(&s, n->inputs[0]);
      if (is_view_alias(&s, n)) continue; /* nothing to run */
      close_group(&s, G, &gs, red, &ws);
      dml_klin_t l;
      if (!x || !y || x->type.dtype != y->type.dtype || !typed_ok(x) || !typed_ok(y))
        unsupported(&s, i, "only numeric and bool views (aligned) are emitted", NULL);
      else if (!type_numel(&y->type, &l))
        unsupported(&s, i, TOO_MANY_SYMS, NULL);
      else {
        s.raw16 = 1;
        dml_ksched_emit_copy(&s, i);
        s.raw16 = 0;
      }
      continue;
    }
    if (dml_ksched_spatial_claims(&s, i)) {
      close_group(&s, G, &gs, red, &ws);
      dml_ksched_spatial_emit(&s, i);
      continue;
    }
    if (dml_ksched_index_handles(n->op)) {
      close_group(&s, G, &gs, red, &ws);
      dml_ksched_index_emit(&s, i);
      continue;
    }
    if (dml_ksched_math_handles(n->op)) {
      close_group(&s, G, &gs, red, &ws);
      dml_ksched_math_emit(&s, i);
      continue;
    }
    if (dml_ksched_dyn_handles(n->op)) {
      close_group(&s, G, &gs, red, &ws);
      dml_ksched_dyn_emit(&s, i);
      continue;
    }
    if (dml_ksched_topk_dft_tfidf_handles(n->op)) {
      close_group(&s, G, &gs, red, &ws);
      dml_ksched_topk_dft_tfidf_emit(&s, i);
      continue;
    }
    if (dml_ksched_wq_handles(n->op)) {
      close_group(&s, G, &gs, red, &ws);
      dml_ksched_wq_emit(&s, i);
      continue;
    }
    if (dml_ksched_attn_handles(n->op)) {
      close_group(&s, G, &gs, red, &ws);
      dml_ksched_attn_emit(&s, i);
      continue;
    }
    if (n->op == DML_OP_ASSIGN) {
      const char *why = dml_ksched_assign_reject(&s, n);
      if (why) {
        unsupported(&s, i, "%s", why);
        continue;
      }
      const dml_pkg_value_t *gl = val(&s, n->inputs[0]), *x = val(&s, n->inputs[1]);
      if (in_fuse_group(G, n) && G->n < 255 && producer_in(&s, G, n->inputs[1]) >= 0 &&
          same_shape(&x->type, G->out) && !reads_other_element(&s, G, gl)) {
        G->nodes[G->n++] = i; /* stored by the group that computes it */
        continue;
      }
      close_group(&s, G, &gs, red, &ws);
      dml_ksched_emit_assign_copy(&s, i);
      continue;
    }
    if (dml_ksched_ew_op(n->op)) {
      const char *why = dml_ksched_ew_reject(&s, n);
      if (why) {
        unsupported(&s, i, "%s", why);
        continue;
      }
      int joined = 0;
      if (in_fuse_group(G, n) && G->n < 255 && same_shape(&y->type, G->out) &&
          n->op != DML_OP_ONE_HOT && consumes_group(&s, G, n)) {
        G->nodes[G->n++] = i;
        if (group_safe(&s, G))
          joined = 1;
        else
          G->n--;
      }
      if (!joined) {
        close_group(&s, G, &gs, red, &ws);
        G->anchor = ANCHOR_NONE;
        G->gid = fuse_gid(n);
        G->first = i;
        G->nodes[0] = i;
        G->n = 1;
        G->out = &y->type;
        if (!group_safe(&s, G)) close_group(&s, G, &gs, red, &ws); /* alone it is safe */
      }
      continue;
    }
    close_group(&s, G, &gs, red, &ws);
    switch (n->op) {
      case DML_OP_GEMM:
      case DML_OP_MATMUL: {
        const dml_pkg_value_t *rhs = n->n_inputs > 1 ? val(&s, n->inputs[1]) : NULL;
        if (n->op == DML_OP_MATMUL && rhs && rhs->type.rank > 2) {
          const char *bwhy = dml_ksched_emit_matmul_batched(&s, i);
          if (bwhy) unsupported(&s, i, "%s", bwhy);
          break;
        }
        const char *why = dml_ksched_gemm_reject(&s, n, &gs);
        if (why) {
          unsupported(&s, i, "%s", why);
          break;
        }
        G->anchor = ANCHOR_GEMM;
        G->gid = fuse_gid(n);
        G->first = i;
        G->nodes[0] = i;
        G->n = 1;
        G->out = &y->type;
        if (!group_safe(&s, G)) {
          unsupported(&s, i, "its result overlaps its operands in the memory plan", NULL);
          G->n = 0;
        }
        break;
      }
      case DML_OP_CONV: {
        const char *why = dml_ksched_win_reject(&s, n, &ws);
        if (why) {
          unsupported(&s, i, "%s", why);
          break;
        }
        G->anchor = ANCHOR_CONV;
        G->gid = fuse_gid(n);
        G->first = i;
        G->nodes[0] = i;
        G->n = 1;
        G->out = &y->type;
        if (!group_safe(&s, G)) {
          unsupported(&s, i, "its result overlaps its operands in the memory plan", NULL);
          G->n = 0;
        }
        break;
      }
      case DML_OP_MAX_POOL:
      case DML_OP_AVERAGE_POOL: {
        win_shape_t pw;
        const char *why = dml_ksched_win_reject(&s, n, &pw);
        if (why)
          unsupported(&s, i, "%s", why);
        else
          dml_ksched_emit_pool(&s, i, &pw);
        break;
      }
      case DML_OP_GLOBAL_AVERAGE_POOL:
      case DML_OP_GLOBAL_MAX_POOL:
      case DML_OP_REDUCE_SUM:
      case DML_OP_REDUCE_MEAN:
      case DML_OP_REDUCE_MAX:
      case DML_OP_REDUCE_MIN:
      case DML_OP_REDUCE_PROD:
      case DML_OP_REDUCE_L1:
      case DML_OP_REDUCE_L2:
      case DML_OP_REDUCE_LOG_SUM:
      case DML_OP_REDUCE_LOG_SUM_EXP:
      case DML_OP_REDUCE_SUM_SQUARE:
      case DML_OP_ARG_MAX:
      case DML_OP_ARG_MIN: {
        const dml_pkg_value_t *x = val(&s, n->inputs[0]);
        dml_klin_t l;
        const char *why = NULL;
        int arg = n->op == DML_OP_ARG_MAX || n->op == DML_OP_ARG_MIN;
        if (!x || !y || !typed_ok(x) || !typed_ok(y) ||
            (arg ? y->type.dtype != DML_DTYPE_I64
                 : (x->type.dtype != y->type.dtype || x->type.dtype == DML_DTYPE_BOOL)))
          why = arg ? "only f32, i64 and i32 inputs (aligned) are emitted"
                    : "only f32, i64 and i32 (aligned) are emitted";
        else if (x->type.dtype == DML_DTYPE_BOOL)
          why = "ArgMax/ArgMin of bool";
        else if ((x->type.dtype == DML_DTYPE_F16 || x->type.dtype == DML_DTYPE_BF16) &&
                 n->op != DML_OP_GLOBAL_AVERAGE_POOL && n->op != DML_OP_GLOBAL_MAX_POOL)
          why =
              "f16 and bf16 reductions are not emitted but the global pools' (f32 sums)";
        else if (x->type.dtype != DML_DTYPE_F32 && x->type.dtype != DML_DTYPE_F64 &&
                 x->type.dtype != DML_DTYPE_F16 && x->type.dtype != DML_DTYPE_BF16 &&
                 (n->op == DML_OP_REDUCE_MEAN || n->op == DML_OP_GLOBAL_AVERAGE_POOL ||
                  n->op == DML_OP_GLOBAL_MAX_POOL || n->op == DML_OP_REDUCE_L1 ||
                  n->op == DML_OP_REDUCE_L2 || n->op == DML_OP_REDUCE_LOG_SUM ||
                  n->op == DML_OP_REDUCE_LOG_SUM_EXP ||
                  n->op == DML_OP_REDUCE_SUM_SQUARE))
          why = "only f32 and f64 are emitted for this op";
        else if (!type_numel(&x->type, &l))
          why = TOO_MANY_SYMS;
        else if (arg) {
          int64_t axis = dml_attr_int(n->attrs, n->n_attrs, "axis", 0);
          if (axis < 0) axis += x->type.rank;
          if (axis < 0 || axis >= x->type.rank) {
            why = "axis out of range";
          } else {
            for (int32_t d = 0; d < x->type.rank; d++) red[d] = d == axis;
          }
        } else
          why = dml_ksched_reduce_axes(&s, n, x->type.rank, red);
        if (why) {
          unsupported(&s, i, "%s", why);
          break;
        }
        G->anchor = ANCHOR_REDUCE;
        G->gid = fuse_gid(n);
        G->first = i;
        G->nodes[0] = i;
        G->n = 1;
        G->out = &y->type;
        break;
      }
      case DML_OP_SHAPE:
      case DML_OP_SIZE: {
        const dml_pkg_value_t *x = val(&s, n->inputs[0]);
        dml_klin_t l;
        if (!x || !y || y->type.dtype != DML_DTYPE_I64 || !typed_ok(y))
          unsupported(&s, i, "%s output must be i64", n->op_name);
        else if (!type_numel(&x->type, &l))
          unsupported(&s, i, TOO_MANY_SYMS, NULL);
        else
          dml_ksched_emit_shape_size(&s, i);
        break;
      }
      case DML_OP_SOFTMAX:
      case DML_OP_LOG_SOFTMAX: {
        const dml_pkg_value_t *x = val(&s, n->inputs[0]);
        dml_klin_t l;
        if (!x || !y || x->type.dtype != DML_DTYPE_F32)
          unsupported(&s, i, "only f32 is emitted", NULL);
        else if (!type_numel(&x->type, &l))
          unsupported(&s, i, TOO_MANY_SYMS, NULL);
        else
          dml_ksched_emit_softmax(&s, i);
        break;
      }
      case DML_OP_CONV_TRANSPOSE: dml_ksched_emit_conv_transpose(&s, i); break;
      case DML_OP_CONV_INPUT_GRAD: dml_ksched_emit_conv_input_grad(&s, i); break;
      case DML_OP_MAX_POOL_GRAD:
      case DML_OP_AVERAGE_POOL_GRAD: {
        win_shape_t gw;
        const char *why = dml_ksched_win_reject(&s, n, &gw);
        if (why)
          unsupported(&s, i, "%s", why);
        else
          dml_ksched_emit_pool_grad(&s, i, &gw);
        break;
      }
      case DML_OP_CONV_WEIGHT_GRAD: {
        win_shape_t gw;
        const char *why = dml_ksched_win_reject(&s, n, &gw);
        if (why)
          unsupported(&s, i, "%s", why);
        else
          dml_ksched_emit_conv_wgrad(&s, i, &gw);
        break;
      }
      case DML_OP_GATHER:
      case DML_OP_GATHER_ELEMENTS:
        s.raw16 = 1;
        dml_ksched_emit_gather(&s, i);
        s.raw16 = 0;
        break;
      case DML_OP_NEGATIVE_LOG_LIKELIHOOD_LOSS:
      case DML_OP_SOFTMAX_CROSS_ENTROPY_LOSS: dml_ksched_emit_loss(&s, i); break;
      case DML_OP_RANDOM_UNIFORM:
      case DML_OP_RANDOM_UNIFORM_LIKE:
      case DML_OP_RANDOM_NORMAL:
      case DML_OP_RANDOM_NORMAL_LIKE:
      case DML_OP_BERNOULLI: dml_ksched_emit_random(&s, i); break;
      case DML_OP_DROPOUT: {
        int training = 0;
        const char *why = dml_ksched_dropout_reject(&s, n, &training);
        if (why)
          unsupported(&s, i, "%s", why);
        else
          dml_ksched_emit_dropout(&s, i, training);
        break;
      }
      case DML_OP_LAYER_NORMALIZATION:
      case DML_OP_INSTANCE_NORMALIZATION: dml_ksched_norm_emit(&s, i); break;
      case DML_OP_RNN:
      case DML_OP_GRU:
      case DML_OP_LSTM: dml_ksched_rnn_emit(&s, i); break;
      case DML_OP_RANGE:
      case DML_OP_CONSTANT_OF_SHAPE:
      case DML_OP_HANN_WINDOW:
      case DML_OP_HAMMING_WINDOW:
      case DML_OP_BLACKMAN_WINDOW: {
        double cval = 0;
        const char *why = dml_ksched_gen_reject(&s, n, &cval);
        if (why)
          unsupported(&s, i, "%s", why);
        else
          dml_ksched_emit_generator(&s, i, cval);
        break;
      }
      case DML_OP_HARDMAX: {
        const char *why = dml_ksched_map_reject_f32(&s, n, 1);
        if (why)
          unsupported(&s, i, "%s", why);
        else
          dml_ksched_emit_hardmax(&s, i);
        break;
      }
      default:
        if (dml_ksched_move_op(n->op))
          dml_ksched_emit_move(&s, i);
        else
          unsupported(&s, i, "no GPU kernel for this op", NULL);
        break;
    }
  }
  int g_oom = !G;
  if (G) close_group(&s, G, &gs, red, &ws);
  free(G);
  free(s.n_uses_outside);
  free(s.group_of);
  free(s.is_output);
  dml_status_t err = s.err;
  if (!err && pool->failed)
    err = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen.schedule",
                          "out of memory");
  if (!err && g_oom)
    err = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen.schedule",
                          "out of memory");
  if (err) {
    dml_kpool_free(pool);
    free(pool);
    free(plan);
    return err;
  }
  plan->function = fn;
  plan->n_kernels = s.n_kernels;
  plan->kernels = s.kernels;
  plan->n_symbols = g->n_symbols;
  plan->pool_ = pool;
  *out_plan = plan;
  return DML_OK;
}

/* 1 when node `node` of fn is one of kernel K's. */
static int kernel_holds(const dml_kernel_t *K, uint32_t node) {
  for (uint32_t i = 0; i < K->n_nodes; i++)
    if (K->nodes[i] == node) return 1;
  return 0;
}

/* 1 when kernel K stores value v, a result of one of its nodes: its last
 * node's, one a node outside K reads, or one fn returns (the others stay
 * in registers). */
static int kernel_stores(const dml_pkg_function_t *fn, const dml_kernel_t *K,
                         uint32_t v) {
  const dml_pkg_node_t *last = &fn->nodes[K->nodes[K->n_nodes - 1]];
  if (last->n_outputs && last->outputs[0] == v) return 1;
  for (uint32_t o = 0; o < fn->n_outputs; o++)
    if (fn->outputs[o] == v) return 1;
  for (uint32_t k = 0; k < fn->n_nodes; k++) {
    if (kernel_holds(K, k)) continue;
    for (uint32_t j = 0; j < fn->nodes[k].n_inputs; j++)
      if (fn->nodes[k].inputs[j] == v) return 1;
  }
  return 0;
}

int dml_kernel_in_place(const dml_kplan_t *p, const dml_pkg_graph_t *g, uint32_t k) {
  if (!p || !g || p->function >= g->n_functions || k >= p->n_kernels) return 0;
  const dml_pkg_function_t *fn = &g->functions[p->function];
  const dml_kernel_t *K = &p->kernels[k];
  if (K->kind == DML_KK_HOST || !K->n_nodes) return 0;
  int found = 0;
  for (uint32_t i = 0; i < K->n_nodes && found != 2; i++) {
    const dml_pkg_node_t *w = &fn->nodes[K->nodes[i]];
    for (uint32_t o = 0; o < w->n_outputs && found != 2; o++) {
      uint32_t y = w->outputs[o];
      if (y >= fn->n_values || !kernel_stores(fn, K, y)) continue;
      for (uint32_t j = 0; j < K->n_nodes && found != 2; j++) {
        const dml_pkg_node_t *r = &fn->nodes[K->nodes[j]];
        for (uint32_t q = 0; q < r->n_inputs; q++) {
          uint32_t x = r->inputs[q];
          if (x >= fn->n_values) continue; /* absent */
          int inner = 0;                   /* produced by a node of K */
          for (uint32_t a = 0; a < K->n_nodes && !inner; a++)
            for (uint32_t b = 0; b < fn->nodes[K->nodes[a]].n_outputs; b++)
              inner |= fn->nodes[K->nodes[a]].outputs[b] == x;
          if (inner || !overlap(&fn->values[x], &fn->values[y])) continue;
          found = fn->values[x].offset == fn->values[y].offset ? 1 : 2;
          if (found == 2) break;
        }
      }
    }
  }
  return found;
}

void dml_kplan_release(dml_kplan_t *p) {
  if (!p) return;
  if (p->pool_) {
    dml_kpool_free(p->pool_);
    free(p->pool_);
  }
  free(p);
}
