/*
 * test_onnx_if.c — ONNX If lowered by the importer (onnx_if.c): both
 * branches inline and Where per output, or only the taken branch for a
 * constant cond. Fixtures from scripts/gen_onnx_fixtures.py (gen_if); values
 * are checked by compiling each model with the driver and running it on the
 * cpu runtime (exact: the reference values are small integers and halves),
 * structure by IR inspection, and every refusal by its message.
 */
#include "onnx_run_util.h"

static void set_bool(dml_rt_session_t *s, const char *name, int v) {
  static uint8_t vals[2] = {0, 1};
  dml_tensor_t t = {DML_DTYPE_BOOL, 0, {0}, &vals[v ? 1 : 0]};
  CHECK_OK(dml_rt_session_set_input_by_name(s, name, &t));
}

/* ---- IR structure ---- */

static void test_const_branches_ir(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(import_fixture("if_const_branches.onnx", &m));
  dml_ir_function_t *f = fwd(m);
  if (!f) return;
  CHECK(module_well_formed(m));
  CHECK(count_op(f, DML_OP_WHERE) == 1);
  CHECK(count_op(f, DML_OP_RESHAPE) == 0); /* cond is a rank-0 argument */
  dml_ir_node_t *w = producer(f, "res");
  CHECK(w && w->op == DML_OP_WHERE && w->inputs[0] == f->args[0]);
  CHECK(w && w->inputs[1]->kind == DML_IR_VALUE_GLOBAL &&
        strcmp(w->inputs[1]->name, "then_out") == 0);
  CHECK(w && w->inputs[2]->kind == DML_IR_VALUE_GLOBAL &&
        strcmp(w->inputs[2]->name, "else_out") == 0);
  dml_ir_module_release(m);
}

static void test_outer_scope_ir(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(import_fixture("if_outer.onnx", &m));
  dml_ir_function_t *f = fwd(m);
  if (!f) return;
  CHECK(module_well_formed(m));
  CHECK(count_op(f, DML_OP_WHERE) == 2);
  /* Both branches' initializer "w": two globals with fresh names. */
  const dml_ir_value_t *w0 = dml_ir_module_find_global(m, "w");
  const dml_ir_value_t *w1 = dml_ir_module_find_global(m, "w_1");
  CHECK(w0 && w1 && w0->data && w1->data);
  if (w0 && w1 && w0->data && w1->data) {
    CHECK(((const float *)w0->data)[0] == 1.0f && ((const float *)w1->data)[0] == 10.0f);
    CHECK(w0->global_flags == DML_IR_GLOBAL_PARAM);
  }
  CHECK(dml_ir_module_find_global(m, "k") != NULL); /* the else branch's Constant */
  /* The branches' local "tmp": two values, distinct names. */
  dml_ir_node_t *add = node_named(f, "t_add"), *sub = node_named(f, "e_sub");
  CHECK(add && sub);
  if (add && sub) {
    CHECK(strcmp(add->outputs[0]->name, "tmp") == 0);
    CHECK(strcmp(sub->outputs[0]->name, "tmp_1") == 0);
    CHECK(add->inputs[0] == producer(f, "a")->outputs[0]); /* the outer Relu */
  }
  dml_ir_node_t *z = producer(f, "z");
  CHECK(z && z->op == DML_OP_WHERE && z->inputs[2] == f->args[1]);
  dml_ir_module_release(m);
}

static void test_nested_ir(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(import_fixture("if_nested.onnx", &m));
  dml_ir_function_t *f = fwd(m);
  if (!f) return;
  CHECK(module_well_formed(m));
  CHECK(count_op(f, DML_OP_WHERE) == 2);
  dml_ir_node_t *neg = node_named(f, "t_neg"), *mul = node_named(f, "te_mul");
  CHECK(neg && mul && mul->inputs[0] == neg->outputs[0]);
  dml_ir_node_t *y = producer(f, "y");
  CHECK(y && y->op == DML_OP_WHERE && y->inputs[1]->def &&
        y->inputs[1]->def->op == DML_OP_WHERE);
  dml_ir_module_release(m);
}

static void test_const_cond_ir(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(import_fixture("if_const_cond.onnx", &m));
  dml_ir_function_t *f = fwd(m);
  if (!f) return;
  CHECK(module_well_formed(m));
  CHECK(count_op(f, DML_OP_WHERE) == 0);
  CHECK(node_named(f, "i_neg") && !node_named(f, "i_abs")); /* cond_i is true */
  CHECK(!node_named(f, "c_neg") && node_named(f, "c_abs")); /* cond_c is false */
  dml_ir_node_t *y1 = producer(f, "y1");
  CHECK(y1 && y1->op == DML_OP_IDENTITY);
  dml_ir_module_release(m);
}

/* ---- values ---- */

static void test_const_branches_run(void) {
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = session_of("if_const_branches.onnx", NULL, &m);
  const float t[5] = {1, 2, 3, 4, 5}, e[5] = {5, 4, 3, 2, 1};
  for (int c = 0; c < 2 && s; c++) {
    set_bool(s, "cond", c);
    CHECK_OK(dml_rt_session_run(s));
    check_out_at(s, 0, c ? t : e, 5);
  }
  release(s, m);
}

static void run_outer(const char *name) {
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = session_of(name, NULL, &m);
  const float x[6] = {-1, 2, -3, 4, -5, 6};
  const float a[6] = {0, 2, 0, 4, 0, 6};
  const float y_then[6] = {-1, 8, -9, 20, -10, 54};    /* (a + [1,2,3]) * x */
  const float y_else[6] = {-5, -9, -15, -3, -10, -12}; /* (a - [10,20,30]) / 2 */
  for (int c = 0; c < 2 && s; c++) {
    set_bool(s, "cond", c);
    set_f32(s, "x", x, 2, 2, 3, 0);
    CHECK_OK(dml_rt_session_run(s));
    check_out_at(s, 0, c ? y_then : y_else, 6);
    check_out_at(s, 1, c ? a : x, 6);
  }
  release(s, m);
}

static void test_outer_scope_run(void) {
  run_outer("if_outer.onnx");
}

static void test_unsorted_run(void) {
  run_outer("if_unsorted.onnx");
}

static void test_nested_run(void) {
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = session_of("if_nested.onnx", NULL, &m);
  const float x[3] = {1, -2, 3};
  const float tt[3] = {99, 202, 297}, te[3] = {-1, -4, -9}, e[3] = {1, 2, 3};
  for (int c = 0; c < 4 && s; c++) {
    set_bool(s, "cond", c & 1);
    set_bool(s, "cond2", c & 2);
    set_f32(s, "x", x, 1, 3, 0, 0);
    CHECK_OK(dml_rt_session_run(s));
    check_out_at(s, 0, !(c & 1) ? e : (c & 2) ? tt : te, 3);
  }
  release(s, m);
}

static void test_const_cond_run(void) {
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = session_of("if_const_cond.onnx", NULL, &m);
  const float x[2] = {-1.5f, 2}, neg[2] = {1.5f, -2}, abs_[2] = {1.5f, 2};
  if (s) {
    set_f32(s, "x", x, 1, 2, 0, 0);
    CHECK_OK(dml_rt_session_run(s));
    check_out_at(s, 0, neg, 2);
    check_out_at(s, 1, abs_, 2);
  }
  release(s, m);
}

/* ---- refusals ---- */

static void test_errors(void) {
  dml_ir_module_t *m = NULL;
  /* Ranks that differ (the else branch's ReduceSum gives a scalar, whatever
   * its declared [3]) in an If output that the graph returns. */
  CHECK_ERROR(import_fixture("if_shape_mismatch.onnx", &m), DML_STATUS_UNIMPLEMENTED,
              "node 'sel' (If): output 'y0' is f32[2,3] when then_branch runs but f32[] "
              "when else_branch runs; an output of the graph must have one rank");
  CHECK_ERROR(import_fixture("if_dtype_mismatch.onnx", &m), DML_STATUS_INVALID_ARGUMENT,
              "node 'sel' (If): output 0 has dtype FLOAT in then_branch ('a') but INT64 "
              "in else_branch ('b')");
  /* A random op in a branch is no error: the If runs at run time, the
   * untaken branch draws nothing (test_onnx_if_runtime runs one). */
  CHECK_OK(import_fixture("if_random.onnx", &m));
  dml_ir_function_t *f = fwd(m);
  CHECK(f && count_op(f, DML_OP_IF) == 1 && count_op(f, DML_OP_WHERE) == 0 &&
        count_op(f, DML_OP_RANDOM_UNIFORM_LIKE) == 0);
  CHECK(m && count_op(dml_ir_module_find_function(m, "sel.else"),
                      DML_OP_RANDOM_UNIFORM_LIKE) == 1);
  dml_ir_module_release(m);
  m = NULL;
  CHECK_ERROR(import_fixture("if_sequence.onnx", &m), DML_STATUS_UNIMPLEMENTED,
              "node 'sel' (If): then_branch output 's' is a sequence; the If lowering "
              "(both branches and Where) supports tensor outputs only");
  CHECK_ERROR(import_fixture("if_output_count.onnx", &m), DML_STATUS_INVALID_ARGUMENT,
              "node 'sel' (If) has 1 outputs, but its then_branch has 1 and its "
              "else_branch 2");
  CHECK_ERROR(import_fixture("if_undefined.onnx", &m), DML_STATUS_INVALID_ARGUMENT,
              "node 't_relu' (Relu): input 0 names undefined tensor 'nowhere'");
  CHECK_ERROR(import_fixture("if_undefined.onnx", &m), DML_STATUS_INVALID_ARGUMENT,
              "importing the then_branch of node 'sel' (If)");
  CHECK_ERROR(import_fixture("if_unsupported.onnx", &m), DML_STATUS_UNIMPLEMENTED,
              "model uses 1 unsupported op (opset 13): Foo");
  CHECK(m == NULL);
}

int main(void) {
  RUN(test_const_branches_ir);
  RUN(test_outer_scope_ir);
  RUN(test_nested_ir);
  RUN(test_const_cond_ir);
  RUN(test_const_branches_run);
  RUN(test_outer_scope_run);
  RUN(test_unsorted_run);
  RUN(test_nested_run);
  RUN(test_const_cond_run);
  RUN(test_errors);
  return dml_test_finish();
}
