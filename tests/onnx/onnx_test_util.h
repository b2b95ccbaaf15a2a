/*
 * onnx_test_util.h — helpers shared by the ONNX frontend tests.
 */
#ifndef ONNX_TEST_UTIL_H_
#define ONNX_TEST_UTIL_H_

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_ir.h"
#include "dml_onnx.h"
#include "dml_test.h"

static inline const char *fixture(const char *name, char *buf, size_t cap) {
  char rel[256];
  snprintf(rel, sizeof(rel), "tests/onnx/fixtures/%s", name);
  return dml_test_path("DMLC_SOURCE_DIR", rel, buf, cap);
}

static inline dml_status_t import_fixture(const char *name, dml_ir_module_t **out) {
  char path[1024];
  return dml_onnx_import_file(fixture(name, path, sizeof(path)), NULL, out);
}

/* The module's only function, "forward". */
static inline dml_ir_function_t *fwd(dml_ir_module_t *m) {
  return m ? dml_ir_module_find_function(m, "forward") : NULL;
}

static inline int count_op(const dml_ir_function_t *f, dml_op_t op) {
  int n = 0;
  for (const dml_ir_node_t *x = f ? f->first : NULL; x; x = x->next) n += x->op == op;
  return n;
}

static inline dml_ir_node_t *node_named(const dml_ir_function_t *f, const char *name) {
  for (dml_ir_node_t *x = f ? f->first : NULL; x; x = x->next)
    if (x->name && strcmp(x->name, name) == 0) return x;
  return NULL;
}

/* The node whose output `name` is. */
static inline dml_ir_node_t *producer(const dml_ir_function_t *f, const char *name) {
  for (dml_ir_node_t *x = f ? f->first : NULL; x; x = x->next)
    for (uint32_t i = 0; i < x->n_outputs; i++)
      if (x->outputs[i]->name && strcmp(x->outputs[i]->name, name) == 0) return x;
  return NULL;
}

static inline int64_t global_numel(const dml_ir_module_t *m, const dml_ir_value_t *g) {
  return dml_ir_type_numel_bound(m, &g->type);
}

/* Reads a whole file (malloc'd; dml_test_read_file). */
static inline uint8_t *read_all(const char *path, size_t *out_len) {
  return (uint8_t *)dml_test_read_file(path, out_len);
}

/* Structural check of an imported module: every operand of every node is a
 * global, an argument of `forward`, or a result of an earlier node; every
 * result is a node result with a name. Returns 1 when it holds. */
static inline int module_well_formed(const dml_ir_module_t *m) {
  const dml_ir_function_t *f = fwd((dml_ir_module_t *)m);
  if (!f) return 0;
  for (const dml_ir_node_t *n = f->first; n; n = n->next) {
    for (uint32_t i = 0; i < n->n_inputs; i++) {
      const dml_ir_value_t *v = n->inputs[i];
      if (!v) continue;
      if (v->kind == DML_IR_VALUE_GLOBAL) {
        if (dml_ir_module_find_global(m, v->name) != v) return 0;
      } else if (v->kind == DML_IR_VALUE_ARG) {
        int found = 0;
        for (uint32_t a = 0; a < f->n_args; a++) found |= f->args[a] == v;
        if (!found) return 0;
      } else {
        const dml_ir_node_t *p = f->first;
        while (p && p != n && p != v->def) p = p->next;
        if (p != v->def) return 0; /* defined later, or elsewhere */
      }
    }
  }
  for (uint32_t i = 0; i < f->n_results; i++)
    if (f->results[i]->kind != DML_IR_VALUE_RESULT || !f->results[i]->name) return 0;
  return 1;
}

#endif /* ONNX_TEST_UTIL_H_ */
