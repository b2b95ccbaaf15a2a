/*
 * dce.c — dead code elimination.
 *
 * A node none of whose results is read (by a node or as a function result)
 * is removed; removing it can make its operands' definers dead in turn.
 * Nodes are in execution order, so one walk from the last node to the first,
 * counting uses as it goes, reaches the fixpoint. Then globals that no
 * function uses any more are dropped (parameters and state stay: a package
 * carries them). Nodes that write state (ops flagged DML_OPF_SIDE_EFFECT:
 * Assign) are always live.
 */
#include <stdint.h>

#include "dml_passes.h"

/* Use counts of node results live in value->user (as uintptr_t). */
static uintptr_t uses(const dml_ir_value_t *v) {
  return (uintptr_t)v->user;
}

static void add_use(dml_ir_value_t *v, int delta) {
  if (!v || v->kind != DML_IR_VALUE_RESULT) return;
  v->user = (void *)(uintptr_t)((intptr_t)uses(v) + delta);
}

static void dce_function(dml_ir_function_t *f) {
  for (dml_ir_node_t *n = f->first; n; n = n->next)
    for (uint32_t i = 0; i < n->n_outputs; i++) n->outputs[i]->user = NULL;
  for (dml_ir_node_t *n = f->first; n; n = n->next)
    for (uint32_t i = 0; i < n->n_inputs; i++) add_use(n->inputs[i], 1);
  for (uint32_t i = 0; i < f->n_results; i++) add_use(f->results[i], 1);

  dml_ir_node_t *n = f->last;
  while (n) {
    dml_ir_node_t *prev = n->prev;
    int live = (dml_op_info(n->op)->flags & DML_OPF_SIDE_EFFECT) != 0;
    for (uint32_t i = 0; i < n->n_outputs && !live; i++) live = uses(n->outputs[i]) != 0;
    if (!live) {
      for (uint32_t i = 0; i < n->n_inputs; i++) add_use(n->inputs[i], -1);
      dml_ir_node_erase(n);
    }
    n = prev;
  }
  for (dml_ir_node_t *k = f->first; k; k = k->next)
    for (uint32_t i = 0; i < k->n_outputs; i++) k->outputs[i]->user = NULL;
}

dml_status_t dml_pass_dce(dml_ir_module_t *m, dml_pass_options_t *o) {
  (void)o;
  for (uint32_t i = 0; i < m->n_functions; i++) dce_function(m->functions[i]);
  dml_ir_module_drop_unused_globals(m);
  return DML_OK;
}
