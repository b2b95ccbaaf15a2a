/*
 * fuse.c — groups nodes into GPU kernels (the `fuse` pass).
 *
 * Walks each function in execution order and gives the nodes of one fused
 * kernel the same integer attribute `fuse_group` (DML_FUSE_GROUP_ATTR,
 * numbered 0, 1, ... per function in execution order). A group is
 *   - an anchor: Gemm, MatMul, Conv, a reduction (ops flagged
 *     DML_OPF_REDUCTION: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/
 *     LogSumExp/SumSquare, ArgMax, ArgMin) or GlobalAveragePool /
 *     GlobalMaxPool, or a fusable elementwise node (below), followed by
 *   - the fusable elementwise nodes that read a value the group computes
 *     and whose result has the group's output dims (the anchor's or the
 *     first node's result: one invocation per output element), and
 *   - an Assign(@global, value) whose value the group computes at those
 *     dims (the kernel stores it into the weights in place).
 * Fusable elementwise: ops flagged DML_OPF_ELEMENTWISE that draw no random
 * numbers and have one result, Expand, and BatchNormalization in inference
 * form (training_mode 0). OneHot may start a group but joins none (its
 * output dims are not its inputs'). A view (DML_OPF_VIEW) neither joins nor
 * ends a group (it aliases its input when the memory plan lets it; where
 * it does not, the scheduler ends the kernel before its copy); any other
 * node ends the open group. A value computed in a group and also read
 * outside it, or returned, stays a group member: the kernel stores it (the
 * scheduler counts its uses outside). Groups of one node carry no
 * attribute; neither does a node of no group. Running the pass again
 * recomputes every group.
 *
 * Readers: mem-plan (for packages with a GPU target keeps every value a
 * group reads live until the group's last node) and the GPU scheduler
 * (codegen/schedule.c), which emits each group as one kernel. The
 * scheduler still checks each group against its forms and the memory plan
 * and ends a kernel early where they do not allow the next node (a node it
 * emits in a form of its own, a result planned over a value the kernel
 * reads at another element, more than 255 nodes); it never joins nodes
 * that the pass did not group. The CPU executor (runtime/rt_cpu_fuse.c)
 * folds an Add into a Conv's epilogue as its residual only where this pass
 * put the Add in the Conv's group; its other folds it plans at load time
 * (docs/cpu.md).
 *
 * No prologue fusion: elementwise nodes before an anchor form their own
 * kernel (the anchor reads their stored result).
 *
 * Errors: RESOURCE_EXHAUSTED when out of memory; nodes whose types are not
 * known (shape-infer not run) are left ungrouped.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dml_passes.h"

static dml_status_t oom(void) {
  return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "pass:fuse", "out of memory");
}

int dml_fuse_is_anchor(dml_op_t op) {
  const dml_op_info_t *info = dml_op_info(op);
  if (info && (info->flags & DML_OPF_REDUCTION)) return 1;
  return op == DML_OP_GEMM || op == DML_OP_MATMUL || op == DML_OP_CONV ||
         op == DML_OP_GLOBAL_AVERAGE_POOL || op == DML_OP_GLOBAL_MAX_POOL;
}

int dml_fuse_is_elementwise(const dml_ir_node_t *n) {
  const dml_op_info_t *info = dml_op_info(n->op);
  if (!info || n->n_outputs < 1 || !n->outputs[0]) return 0;
  if (n->op == DML_OP_EXPAND || n->op == DML_OP_ONE_HOT) return n->n_outputs == 1;
  if (n->op == DML_OP_BATCH_NORMALIZATION) {
    const dml_attr_t *a = dml_ir_node_attr(n, "training_mode");
    return !(a && a->kind == DML_ATTR_INT && a->i != 0);
  }
  return (info->flags & DML_OPF_ELEMENTWISE) &&
         !(info->flags & (DML_OPF_RANDOM | DML_OPF_SIDE_EFFECT)) && n->n_outputs == 1;
}

int64_t dml_fuse_group_of(const dml_ir_node_t *n) {
  const dml_attr_t *a = n ? dml_ir_node_attr(n, DML_FUSE_GROUP_ATTR) : NULL;
  return a && a->kind == DML_ATTR_INT && a->i >= 0 ? a->i : -1;
}

static int same_dims(const dml_type_t *a, const dml_type_t *b) {
  if (a->rank != b->rank || a->rank < 0) return 0;
  for (int32_t d = 0; d < a->rank; d++)
    if (a->dims[d].value != b->dims[d].value || a->dims[d].sym != b->dims[d].sym)
      return 0;
  return 1;
}

/* The open group: its nodes, its output dims and a tag its results carry in
 * value->user while it is open. */
typedef struct {
  dml_ir_node_t **nodes;
  uint32_t n;
  const dml_type_t *out;
  uintptr_t tag;
  int64_t next_id;
} open_t;

static int produced_in(const open_t *G, const dml_ir_value_t *v) {
  return G->n > 0 && v && v->kind == DML_IR_VALUE_RESULT && (uintptr_t)v->user == G->tag;
}

static void add(open_t *G, dml_ir_node_t *n) {
  G->nodes[G->n++] = n;
  for (uint32_t k = 0; k < n->n_outputs; k++)
    if (n->outputs[k]) n->outputs[k]->user = (void *)G->tag;
}

static dml_status_t close_group(open_t *G) {
  if (G->n >= 2) {
    for (uint32_t i = 0; i < G->n; i++)
      DML_RETURN_IF_ERROR(
          dml_ir_node_set_attr_int(G->nodes[i], DML_FUSE_GROUP_ATTR, G->next_id));
    G->next_id++;
  }
  G->n = 0;
  G->tag++;
  return DML_OK;
}

static dml_status_t fuse_function(dml_ir_function_t *f) {
  uint32_t count = 0;
  for (dml_ir_node_t *n = f->first; n; n = n->next) {
    count++;
    dml_ir_node_remove_attr(n, DML_FUSE_GROUP_ATTR);
    for (uint32_t k = 0; k < n->n_outputs; k++)
      if (n->outputs[k]) n->outputs[k]->user = NULL;
  }
  open_t G;
  memset(&G, 0, sizeof G);
  G.tag = 1;
  G.nodes = (dml_ir_node_t **)calloc(count ? count : 1, sizeof(dml_ir_node_t *));
  if (!G.nodes) return oom();
  dml_status_t s = DML_OK;
  for (dml_ir_node_t *n = f->first; n && !s; n = n->next) {
    const dml_op_info_t *info = dml_op_info(n->op);
    if (info && (info->flags & DML_OPF_VIEW)) continue;
    int ew = dml_fuse_is_elementwise(n);
    if (ew && n->op != DML_OP_ONE_HOT && G.n > 0 &&
        same_dims(&n->outputs[0]->type, G.out)) {
      int consumes = 0;
      for (uint32_t k = 0; k < n->n_inputs && !consumes; k++)
        consumes = produced_in(&G, n->inputs[k]);
      if (consumes) {
        add(&G, n);
        continue;
      }
    }
    if (n->op == DML_OP_ASSIGN && n->n_inputs == 2 && G.n > 0 &&
        produced_in(&G, n->inputs[1]) && same_dims(&n->inputs[1]->type, G.out)) {
      add(&G, n);
      continue;
    }
    s = close_group(&G);
    if (!s && (ew || dml_fuse_is_anchor(n->op)) && n->n_outputs >= 1 && n->outputs[0] &&
        n->outputs[0]->type.rank >= 0) {
      G.out = &n->outputs[0]->type;
      add(&G, n);
    }
  }
  if (!s) s = close_group(&G);
  for (dml_ir_node_t *n = f->first; n; n = n->next)
    for (uint32_t k = 0; k < n->n_outputs; k++)
      if (n->outputs[k]) n->outputs[k]->user = NULL;
  free(G.nodes);
  return s;
}

dml_status_t dml_pass_fuse(dml_ir_module_t *m, dml_pass_options_t *o) {
  (void)o;
  for (uint32_t i = 0; i < m->n_functions; i++)
    DML_RETURN_IF_ERROR(fuse_function(m->functions[i]));
  return DML_OK;
}
