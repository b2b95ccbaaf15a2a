/*
 * test_onnx_ops2.c — ONNX import of the issue #3 forms: opset 1..6 nodes
 * (consumed_inputs dropped, legacy broadcast/axis aligned with Unsqueeze),
 * Hardmax-1's 2-D coercion, and CastLike -> Cast when the target dtype is
 * known at import. Fixtures: tests/cpu_ops2/gen_fixtures.py.
 */
#include "dml_ir.h"
#include "dml_ir_infer.h"
#include "dml_onnx.h"
#include "dml_test.h"

static dml_status_t import(const char *name, dml_ir_module_t **out) {
  char rel[256], path[1024];
  snprintf(rel, sizeof(rel), "tests/cpu_ops2/fixtures/%s", name);
  return dml_onnx_import_file(dml_test_path("DMLC_SOURCE_DIR", rel, path, sizeof(path)),
                              NULL, out);
}

static dml_ir_function_t *fwd(dml_ir_module_t *m) {
  return dml_ir_module_find_function(m, "forward");
}

static int count_op(const dml_ir_function_t *f, dml_op_t op) {
  int n = 0;
  for (const dml_ir_node_t *x = f->first; x; x = x->next) n += x->op == op;
  return n;
}

/* Infers every node in order; returns the last node. */
static dml_ir_node_t *infer_all(dml_ir_module_t *m) {
  dml_ir_node_t *last = NULL;
  for (dml_ir_node_t *x = fwd(m)->first; x; x = x->next) {
    CHECK_OK(dml_ir_infer_node(m, x));
    last = x;
  }
  return last;
}

static const char *type_of(dml_ir_module_t *m, const dml_ir_value_t *v) {
  static char buf[128];
  return dml_ir_type_str(m, &v->type, buf, sizeof(buf));
}

static void test_add6_axis(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(import("add6_axis.onnx", &m));
  if (!m) return;
  dml_ir_function_t *f = fwd(m);
  CHECK(count_op(f, DML_OP_UNSQUEEZE) == 1 && count_op(f, DML_OP_ADD) == 1);
  dml_ir_node_t *add = infer_all(m);
  CHECK(add && add->op == DML_OP_ADD);
  /* B [3] -> [3,1], which numpy-broadcasts against A [2,3,4] at axis 1. */
  CHECK(strcmp(type_of(m, add->inputs[1]), "f32[3,1]") == 0);
  CHECK(strcmp(type_of(m, add->outputs[0]), "f32[2,3,4]") == 0);
  CHECK(dml_ir_node_attr(add, "axis") == NULL &&
        dml_ir_node_attr(add, "broadcast") == NULL);
  dml_ir_module_release(m);
}

static void test_mul1_relu1_hardmax1(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(import("mul1.onnx", &m));
  if (!m) return;
  dml_ir_node_t *mul = infer_all(m);
  CHECK(mul && mul->op == DML_OP_MUL && count_op(fwd(m), DML_OP_UNSQUEEZE) == 0);
  CHECK(mul && dml_ir_node_attr(mul, "consumed_inputs") == NULL);
  CHECK(mul && strcmp(type_of(m, mul->outputs[0]), "f32[2,3]") == 0);
  dml_ir_module_release(m);
  m = NULL;
  CHECK_OK(import("relu1_hardmax1.onnx", &m));
  if (!m) return;
  dml_ir_function_t *f = fwd(m);
  CHECK(count_op(f, DML_OP_RELU) == 1 && count_op(f, DML_OP_HARDMAX) == 1);
  CHECK(count_op(f, DML_OP_FLATTEN) == 1 && count_op(f, DML_OP_RESHAPE) == 1);
  CHECK(dml_ir_node_attr(f->first, "consumed_inputs") == NULL);
  dml_ir_node_t *last = infer_all(m);
  CHECK(last && strcmp(type_of(m, last->outputs[0]), "f32[2,3,4]") == 0);
  dml_ir_module_release(m);
}

static void test_castlike(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(import("castlike.onnx", &m));
  if (!m) return;
  dml_ir_function_t *f = fwd(m);
  CHECK(count_op(f, DML_OP_CAST) == 1 && count_op(f, DML_OP_CAST_LIKE) == 1);
  for (dml_ir_node_t *x = f->first; x; x = x->next) {
    CHECK_OK(dml_ir_infer_node(m, x));
    if (x->op == DML_OP_CAST) {
      const dml_attr_t *to = dml_ir_node_attr(x, "to");
      CHECK(to && to->kind == DML_ATTR_INT && to->i == 7); /* INT64 */
      CHECK(x->n_inputs == 1);
    }
    if (x->op == DML_OP_CAST || x->op == DML_OP_CAST_LIKE)
      CHECK(strcmp(type_of(m, x->outputs[0]), "i64[3]") == 0);
  }
  dml_ir_module_release(m);
}

int main(void) {
  RUN(test_add6_axis);
  RUN(test_mul1_relu1_hardmax1);
  RUN(test_castlike);
  return dml_test_finish();
}
