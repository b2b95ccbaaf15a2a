/*
 * shape_infer.c — the shape-infer pass: dtype and shape (bounded symbolic
 * dims included) of every node result, in program order. Function
 * arguments and globals carry their types already; each node's shape
 * function (ir/infer.c) reads its inputs' types and known contents.
 */
#include "dml_ir_infer.h"
#include "dml_passes.h"

dml_status_t dml_pass_shape_infer(dml_ir_module_t *m, dml_pass_options_t *o) {
  (void)o;
  for (uint32_t fi = 0; fi < m->n_functions; fi++) {
    dml_ir_function_t *f = m->functions[fi];
    for (dml_ir_node_t *n = f->first; n; n = n->next) {
      dml_status_t st = dml_ir_infer_node(m, n);
      if (st) return dml_status_annotate(st, "inferring function @%s", f->name);
    }
  }
  return DML_OK;
}
