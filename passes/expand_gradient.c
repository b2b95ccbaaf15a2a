/*
 * expand_gradient.c — lowers Gradient nodes (ONNX ai.onnx.preview.training
 * Gradient, version 1; ops.def: compile-only) into reverse-mode autodiff.
 *
 * For each Gradient(y, x_1..x_n) node, in execution order, dml_autodiff()
 * builds the gradient of y with respect to every x_i from the nodes before
 * it (y precedes the node, so everything the sweep reads does too). ONNX
 * types each output as its x, so for a y of more than one element the
 * result is the gradient of sum(y): the sweep is seeded with ones of y's
 * type (ConstantOfShape(Shape(y)), value 1). An x that y does not depend on
 * gets zeros of its type (ConstantOfShape(Shape(x)), value 0). The new nodes
 * are moved to where the Gradient node was, uses of its outputs are
 * rewritten to the gradients (a function result keeps its name through an
 * Identity), and the node is erased. A later Gradient whose y is computed
 * from an earlier one's outputs (higher-order derivatives) differentiates
 * the already expanded nodes.
 *
 * Needs types (shape-infer first). Errors: FAILED_PRECONDITION for untyped
 * operands; dml_autodiff's errors (UNIMPLEMENTED for ops on the path from
 * an x to y without a VJP rule), each annotated with the Gradient node.
 */
#include <stdio.h>
#include <string.h>

#include "dml_autodiff.h"
#include "dml_ir_infer.h"
#include "dml_passes.h"

#define OP "expand-gradient"

typedef struct {
  dml_ir_module_t *m;
  dml_ir_function_t *f;
  const dml_ir_node_t *grad; /* the Gradient node being expanded */
} eg_t;

static const char *node_name(const dml_ir_node_t *n) {
  return n->name ? n->name : "";
}

/* A typed node appended to the function, named after the Gradient node. */
static dml_status_t emit(eg_t *e, dml_op_t op, const char *suffix, uint32_t n_in,
                         dml_ir_value_t *const *in, dml_ir_node_t **out) {
  char nm[256];
  snprintf(nm, sizeof nm, "%s.%s", e->grad->name ? e->grad->name : "gradient", suffix);
  const char *name = dml_ir_strdup(e->m, nm);
  if (!name) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  DML_RETURN_IF_ERROR(dml_ir_node_create(e->f, op, name, n_in, in, 1, NULL, out));
  return DML_OK;
}

/* `like`-typed tensor filled with `v`: ConstantOfShape(Shape(like)). */
static dml_status_t filled_like(eg_t *e, dml_ir_value_t *like, double v,
                                const char *suffix, dml_ir_value_t **out) {
  dml_ir_node_t *shape = NULL, *fill = NULL;
  DML_RETURN_IF_ERROR(emit(e, DML_OP_SHAPE, "shape", 1, &like, &shape));
  DML_RETURN_IF_ERROR(dml_ir_infer_node(e->m, shape));
  DML_RETURN_IF_ERROR(
      emit(e, DML_OP_CONSTANT_OF_SHAPE, suffix, 1, shape->outputs, &fill));
  uint8_t buf[8] = {0};
  dml_store_f64(like->type.dtype, buf, 0, v);
  dml_tensor_t t;
  memset(&t, 0, sizeof t);
  t.dtype = like->type.dtype;
  t.rank = 1;
  t.dims[0] = 1;
  t.data = buf;
  DML_RETURN_IF_ERROR(dml_ir_node_set_attr_tensor(fill, "value", &t));
  DML_RETURN_IF_ERROR(dml_ir_infer_node(e->m, fill));
  if (!dml_type_equal(&fill->outputs[0]->type, &like->type))
    return dml_status_make(DML_STATUS_INTERNAL, OP, "node '%s': %s of '%s' is mistyped",
                           node_name(e->grad), suffix, like->name ? like->name : "");
  *out = fill->outputs[0];
  return DML_OK;
}

static int is_function_result(const dml_ir_function_t *f, const dml_ir_value_t *v) {
  for (uint32_t i = 0; i < f->n_results; i++)
    if (f->results[i] == v) return 1;
  return 0;
}

/* Builds the gradients of node n and rewrites its uses; the new nodes are
 * appended (the caller moves them). */
static dml_status_t expand_nodes(eg_t *e, dml_ir_node_t *n) {
  dml_ir_value_t *y = n->inputs[0];
  uint32_t nx = n->n_inputs - 1;
  for (uint32_t i = 0; i < n->n_inputs; i++)
    if (!n->inputs[i] || n->inputs[i]->type.rank < 0)
      return dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                             "input %u of the Gradient node is %s; run shape-infer first",
                             i, n->inputs[i] ? "untyped" : "missing");
  if (n->n_outputs != nx)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "%u outputs for %u differentiated tensors", n->n_outputs, nx);
  /* y of one element: seed 1 (dml_autodiff's default); otherwise sum(y). */
  dml_ir_value_t *seed = NULL;
  if (!(dml_type_is_static(&y->type) && dml_ir_type_numel_bound(e->m, &y->type) == 1))
    DML_RETURN_IF_ERROR(filled_like(e, y, 1.0, "seed", &seed));
  dml_ir_value_t **grads = (dml_ir_value_t **)dml_ir_alloc(e->m, nx * sizeof(*grads));
  if (!grads) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  DML_RETURN_IF_ERROR(dml_autodiff(e->f, y, seed, nx, n->inputs + 1, grads));
  for (uint32_t i = 0; i < nx; i++) {
    dml_ir_value_t *out = n->outputs[i];
    if (dml_ir_value_num_uses(e->f, out) == 0) continue;
    dml_ir_value_t *g = grads[i];
    if (!g) DML_RETURN_IF_ERROR(filled_like(e, n->inputs[1 + i], 0.0, "zeros", &g));
    if (is_function_result(e->f, out)) {
      /* The result keeps its name: Identity(g) named as the output. */
      dml_ir_node_t *id = NULL;
      DML_RETURN_IF_ERROR(emit(e, DML_OP_IDENTITY, "result", 1, &g, &id));
      DML_RETURN_IF_ERROR(dml_ir_infer_node(e->m, id));
      id->outputs[0]->name = out->name;
      out->name = NULL;
      g = id->outputs[0];
    }
    dml_ir_value_replace_all_uses(e->f, out, g);
  }
  return DML_OK;
}

static dml_status_t expand_one(dml_ir_module_t *m, dml_ir_function_t *f,
                               dml_ir_node_t *n) {
  eg_t e = {m, f, n};
  dml_ir_node_t *before_new = f->last;
  dml_status_t st = expand_nodes(&e, n);
  /* New nodes go where the Gradient node is (even after an error, so the
   * function stays in a valid order). */
  dml_ir_node_t *p = before_new ? before_new->next : f->first;
  while (p) {
    dml_ir_node_t *next = p->next;
    dml_ir_node_move_before(p, n);
    p = next;
  }
  if (st) {
    st = dml_status_detail(st, "node '%s' (Gradient), y = '%s'", node_name(n),
                           n->inputs[0] && n->inputs[0]->name ? n->inputs[0]->name : "");
    return dml_status_annotate(st, "expanding Gradient node '%s' in @%s", node_name(n),
                               f->name);
  }
  dml_ir_node_erase(n);
  return DML_OK;
}

dml_status_t dml_pass_expand_gradient(dml_ir_module_t *m, dml_pass_options_t *o) {
  (void)o;
  for (uint32_t fi = 0; fi < m->n_functions; fi++) {
    dml_ir_function_t *f = m->functions[fi];
    for (dml_ir_node_t *n = f->first; n;) {
      dml_ir_node_t *next = n->next;
      if (n->op == DML_OP_GRADIENT) DML_RETURN_IF_ERROR(expand_one(m, f, n));
      n = next;
    }
  }
  return DML_OK;
}
