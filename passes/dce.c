/*
 * dce.c — dead code elimination.
 *
 * A node none of whose results is read (by a node or as a function result)
 * is removed; removing it can make its operands' definers dead in turn.
 * Nodes are in execution order, so one walk from the last node to the first,
 * counting uses as it goes, reaches the fixpoint. Then globals that no
 * function uses any more are dropped (parameters and state stay: a package
 * carries them), and derived symbols that no value uses any more
 * (drop_unused_symbols). Nodes that write state (ops flagged
 * DML_OPF_SIDE_EFFECT: Assign) are always live.
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

/* Calls fn(type) for the type of every value of the module. */
static void each_type(dml_ir_module_t *m, void (*fn)(dml_type_t *, void *), void *arg) {
  for (uint32_t i = 0; i < m->n_globals; i++) fn(&m->globals[i]->type, arg);
  for (uint32_t fi = 0; fi < m->n_functions; fi++) {
    dml_ir_function_t *f = m->functions[fi];
    for (uint32_t i = 0; i < f->n_args; i++) fn(&f->args[i]->type, arg);
    for (dml_ir_node_t *n = f->first; n; n = n->next)
      for (uint32_t i = 0; i < n->n_outputs; i++) fn(&n->outputs[i]->type, arg);
  }
}

static void mark_type(dml_type_t *t, void *arg) {
  uint8_t *used = (uint8_t *)arg;
  for (int32_t d = 0; t->rank > 0 && d < t->rank; d++)
    if (t->dims[d].sym >= 0) used[t->dims[d].sym] = 1;
}

static void remap_type(dml_type_t *t, void *arg) {
  const int32_t *to = (const int32_t *)arg;
  for (int32_t d = 0; t->rank > 0 && d < t->rank; d++)
    if (t->dims[d].sym >= 0) t->dims[d].sym = to[t->dims[d].sym];
}

/* Recorded contents (sym_data, sym_partial) of `v` renumbered; dropped
 * when they name a dropped symbol (they serve shape inference only). */
static void remap_contents(dml_ir_value_t *v, const int32_t *to) {
  dml_ir_sym_data_t **sd[2] = {&v->sym_data, &v->sym_partial};
  for (int k = 0; k < 2; k++) {
    dml_ir_sym_data_t *d = *sd[k];
    if (!d) continue;
    int ok = 1;
    for (uint32_t i = 0; i < d->n && ok; i++) {
      int known = !d->unknown || d->unknown[i] != 1;
      if (known && d->elems[i].sym >= 0) ok = to[d->elems[i].sym] >= 0;
      if (known && d->minus && d->unknown[i] == 2 && d->minus[i].sym >= 0)
        ok = ok && to[d->minus[i].sym] >= 0;
    }
    if (!ok) {
      *sd[k] = NULL;
      continue;
    }
    for (uint32_t i = 0; i < d->n; i++) {
      int known = !d->unknown || d->unknown[i] != 1;
      if (known && d->elems[i].sym >= 0) d->elems[i].sym = to[d->elems[i].sym];
      if (known && d->minus && d->unknown[i] == 2 && d->minus[i].sym >= 0)
        d->minus[i].sym = to[d->minus[i].sym];
    }
  }
}

/* Drops the derived symbols that no value's type uses, directly or as a
 * source of one it uses: the shape arithmetic of exporters leaves
 * intermediate ones ("H-1" of (H-1)//2+1) and every symbol of a package
 * costs a push-constant word on the GPU targets (DML_KPKG_MAX_SYMBOLS).
 * Input and data-dependent symbols stay. The others are renumbered in
 * order (sources still before the symbols derived from them). */
static dml_status_t drop_unused_symbols(dml_ir_module_t *m) {
  uint32_t n = m->n_symbols;
  if (!n) return DML_OK;
  uint8_t *used = (uint8_t *)dml_ir_alloc(m, n);
  int32_t *to = (int32_t *)dml_ir_alloc(m, sizeof(int32_t) * n);
  if (!used || !to)
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "dce", "out of memory");
  each_type(m, mark_type, used);
  for (uint32_t i = n; i-- > 0;) { /* sources come before: one backward walk */
    const dml_ir_symbol_t *s = &m->symbols[i];
    if (!(s->flags & DML_IR_SYMBOL_DERIVED)) used[i] = 1;
    if (!used[i] || !(s->flags & DML_IR_SYMBOL_DERIVED)) continue;
    for (int k = 0; k < 2; k++)
      if (s->src[k] >= 0 && (uint32_t)s->src[k] < n) used[s->src[k]] = 1;
  }
  uint32_t kept = 0;
  for (uint32_t i = 0; i < n; i++) to[i] = used[i] ? (int32_t)kept++ : -1;
  if (kept == n) return DML_OK;
  for (uint32_t i = 0; i < n; i++) {
    if (!used[i]) continue;
    dml_ir_symbol_t s = m->symbols[i];
    for (int k = 0; k < 2; k++)
      if (s.src[k] >= 0) s.src[k] = to[s.src[k]];
    m->symbols[to[i]] = s;
  }
  m->n_symbols = kept;
  each_type(m, remap_type, to);
  for (uint32_t i = 0; i < m->n_globals; i++) remap_contents(m->globals[i], to);
  for (uint32_t fi = 0; fi < m->n_functions; fi++) {
    dml_ir_function_t *f = m->functions[fi];
    for (uint32_t i = 0; i < f->n_args; i++) remap_contents(f->args[i], to);
    for (dml_ir_node_t *nd = f->first; nd; nd = nd->next)
      for (uint32_t i = 0; i < nd->n_outputs; i++) remap_contents(nd->outputs[i], to);
  }
  return DML_OK;
}

dml_status_t dml_pass_dce(dml_ir_module_t *m, dml_pass_options_t *o) {
  (void)o;
  for (uint32_t i = 0; i < m->n_functions; i++) dce_function(m->functions[i]);
  dml_ir_module_drop_unused_globals(m);
  return drop_unused_symbols(m);
}
