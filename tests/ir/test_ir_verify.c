/* test_ir_verify.c — dml_ir_verify accepts valid modules and names the
 * function, node (name and op) and operand of each structural error. */
#include "ir_test_util.h"

typedef struct fixture {
  dml_ir_module_t *m;
  dml_ir_function_t *f;
  dml_ir_value_t *x, *w;
  dml_ir_node_t *n1, *n2; /* n1 = Add(x, w) "add0"; n2 = Relu(n1) "relu0" */
} fixture_t;

static void make(fixture_t *fx) {
  memset(fx, 0, sizeof(*fx));
  CHECK_OK(dml_ir_module_create(&fx->m));
  int32_t b;
  CHECK_OK(dml_ir_module_add_symbol(fx->m, "batch", 8, &b));
  dml_type_t t = dml_type_static(DML_DTYPE_F32, 2, (const int64_t[]){1, 4});
  t.dims[0].sym = b;
  dml_type_t tw = dml_type_static(DML_DTYPE_F32, 1, (const int64_t[]){4});
  float wd[4] = {0};
  CHECK_OK(dml_ir_module_add_global(fx->m, "w", &tw, wd, sizeof(wd), DML_IR_GLOBAL_PARAM,
                                    &fx->w));
  CHECK_OK(dml_ir_function_create(fx->m, "forward", &fx->f));
  CHECK_OK(dml_ir_function_add_arg(fx->f, "x", &t, &fx->x));
  dml_ir_value_t *ins[2] = {fx->x, fx->w};
  CHECK_OK(dml_ir_node_create(fx->f, DML_OP_ADD, "add0", 2, ins, 1, NULL, &fx->n1));
  CHECK_OK(dml_ir_node_create(fx->f, DML_OP_RELU, "relu0", 1, fx->n1->outputs, 1, NULL,
                              &fx->n2));
  fx->n1->outputs[0]->type = t;
  fx->n2->outputs[0]->type = t;
  CHECK_OK(dml_ir_function_set_results(fx->f, 1, fx->n2->outputs));
}

static void test_valid(void) {
  fixture_t fx;
  make(&fx);
  CHECK_OK(dml_ir_verify(fx.m, 0));
  CHECK_OK(dml_ir_verify(fx.m, 1));
  /* What the parser builds verifies too. */
  char *text = print_module_str(fx.m, NULL);
  dml_ir_module_t *m2 = text ? parse_str(text, "fixture") : NULL;
  CHECK(m2 != NULL);
  if (m2) CHECK_OK(dml_ir_verify(m2, 1));
  dml_ir_module_release(m2);
  free(text);
  dml_ir_module_release(fx.m);
}

static void test_use_before_definition(void) {
  fixture_t fx;
  make(&fx);
  dml_ir_node_move_before(fx.n2, fx.n1);
  CHECK_ERROR(dml_ir_verify(fx.m, 0), DML_STATUS_INVALID_ARGUMENT,
              "error: ir.verify: operand 0 (#2) is not defined before this node\n"
              "  function @forward, node 'relu0' (Relu)");
  dml_ir_module_release(fx.m);
}

static void test_operand_from_elsewhere(void) {
  fixture_t fx, other;
  make(&fx);
  make(&other);
  fx.n2->inputs[0] = other.n1->outputs[0];
  CHECK_ERROR(dml_ir_verify(fx.m, 0), DML_STATUS_INVALID_ARGUMENT,
              "operand 0 (#2) belongs to another function\n"
              "  function @forward, node 'relu0' (Relu)");
  fx.n2->inputs[0] = fx.n1->outputs[0];
  fx.n1->inputs[1] = other.w;
  CHECK_ERROR(dml_ir_verify(fx.m, 0), DML_STATUS_INVALID_ARGUMENT,
              "operand 1 (@w) is not a global of this module\n"
              "  function @forward, node 'add0' (Add)");
  fx.n1->inputs[1] = fx.w;
  /* An argument of another function of the same module. */
  dml_ir_function_t *g;
  dml_ir_value_t *ga;
  CHECK_OK(dml_ir_function_create(fx.m, "g", &g));
  CHECK_OK(dml_ir_function_add_arg(g, "y", &fx.x->type, &ga));
  fx.n1->inputs[0] = ga;
  CHECK_ERROR(dml_ir_verify(fx.m, 0), DML_STATUS_INVALID_ARGUMENT,
              "operand 0 (%y) belongs to another function");
  dml_ir_module_release(fx.m);
  dml_ir_module_release(other.m);
}

static void test_arity_and_ops(void) {
  fixture_t fx;
  make(&fx);
  fx.n2->n_inputs = 2; /* Relu takes one operand (the array has room) */
  fx.n2->inputs[1] = fx.x;
  CHECK_ERROR(dml_ir_verify(fx.m, 0), DML_STATUS_INVALID_ARGUMENT,
              "Relu takes 1..1 operands (-1: any number), has 2\n"
              "  function @forward, node 'relu0' (Relu)");
  fx.n2->n_inputs = 1;
  fx.n1->inputs[0] = NULL;
  CHECK_ERROR(dml_ir_verify(fx.m, 0), DML_STATUS_INVALID_ARGUMENT,
              "operand 0 is absent, but Add requires its first 2 operands\n"
              "  function @forward, node 'add0' (Add)");
  fx.n1->inputs[0] = fx.x;
  fx.n1->op = (dml_op_t)9999;
  CHECK_ERROR(dml_ir_verify(fx.m, 0), DML_STATUS_INVALID_ARGUMENT, "invalid op 9999");
  fx.n1->op = DML_OP_ADD;
  fx.n1->n_outputs = 0;
  CHECK_ERROR(dml_ir_verify(fx.m, 0), DML_STATUS_INVALID_ARGUMENT,
              "Add has 1..1 results (-1: any number), has 0");
  fx.n1->n_outputs = 1;
  CHECK_OK(dml_ir_verify(fx.m, 0));
  /* Optional operands may be absent. */
  dml_ir_value_t *ins[3] = {fx.x, fx.w, NULL};
  CHECK_OK(dml_ir_node_create(fx.f, DML_OP_GEMM, NULL, 3, ins, 1, NULL, NULL));
  CHECK_OK(dml_ir_verify(fx.m, 0));
  dml_ir_module_release(fx.m);
}

static void test_function_results(void) {
  fixture_t fx, other;
  make(&fx);
  make(&other);
  CHECK_OK(dml_ir_function_set_results(fx.f, 1, other.n2->outputs));
  CHECK_ERROR(dml_ir_verify(fx.m, 0), DML_STATUS_INVALID_ARGUMENT,
              "result 0 (#3) of the function is not defined in it\n  function @forward");
  /* A global is a valid function result. */
  CHECK_OK(dml_ir_function_set_results(fx.f, 1, &fx.w));
  CHECK_OK(dml_ir_verify(fx.m, 1));
  dml_ir_module_release(fx.m);
  dml_ir_module_release(other.m);
}

static void test_globals_and_symbols(void) {
  fixture_t fx;
  make(&fx);
  dml_type_t t = dml_type_static(DML_DTYPE_F32, 1, (const int64_t[]){4});
  dml_ir_value_t *g2;
  CHECK_OK(dml_ir_module_add_global(fx.m, "w2", &t, NULL, 0, 0, &g2));
  g2->name = "w"; /* a pass renaming carelessly */
  CHECK_ERROR(dml_ir_verify(fx.m, 0), DML_STATUS_INVALID_ARGUMENT,
              "two globals are named 'w'");
  g2->name = "w2";
  g2->data = fx.w->data;
  g2->data_bytes = 8;
  CHECK_ERROR(dml_ir_verify(fx.m, 0), DML_STATUS_INVALID_ARGUMENT,
              "global @w2 holds 8 bytes of data for a type of 16 bytes");
  g2->data = NULL;
  g2->data_bytes = 0;
  fx.m->symbols[0].bound = 0;
  CHECK_ERROR(dml_ir_verify(fx.m, 0), DML_STATUS_INVALID_ARGUMENT,
              "symbol 'batch' has bound 0 (bounds are >= 1)");
  fx.m->symbols[0].bound = 8;
  CHECK_OK(dml_ir_verify(fx.m, 1));
  dml_ir_module_release(fx.m);
}

static void test_types(void) {
  fixture_t fx;
  make(&fx);
  dml_ir_value_t *r = fx.n2->outputs[0];
  r->type = dml_type_unknown(DML_DTYPE_F32);
  CHECK_OK(dml_ir_verify(fx.m, 0));
  CHECK_ERROR(dml_ir_verify(fx.m, 1), DML_STATUS_INVALID_ARGUMENT,
              "result 0 #3 has no known shape (run shape inference first)\n"
              "  function @forward, node 'relu0' (Relu)");
  r->type = fx.x->type;
  r->type.dtype = DML_DTYPE_INVALID;
  CHECK_ERROR(dml_ir_verify(fx.m, 1), DML_STATUS_INVALID_ARGUMENT,
              "result 0 #3 has no valid dtype");
  r->type = fx.x->type;
  r->type.dims[1].value = -1;
  CHECK_OK(dml_ir_verify(fx.m, 0));
  CHECK_ERROR(dml_ir_verify(fx.m, 1), DML_STATUS_INVALID_ARGUMENT,
              "result 0 #3: dim 1 is -1 (dims are >= 0)");
  r->type = fx.x->type;
  r->type.dims[0].sym = 5;
  CHECK_ERROR(dml_ir_verify(fx.m, 0), DML_STATUS_INVALID_ARGUMENT,
              "result 0 #3: dim 0 refers to symbol 5, but the module has 1");
  r->type = fx.x->type;
  fx.x->type.rank = 9;
  CHECK_ERROR(dml_ir_verify(fx.m, 0), DML_STATUS_INVALID_ARGUMENT,
              "argument %x has rank 9 (at most 8)\n  function @forward");
  fx.x->type = r->type;
  fx.w->type.dims[0].value = -4;
  CHECK_ERROR(dml_ir_verify(fx.m, 1), DML_STATUS_INVALID_ARGUMENT,
              "global @w: dim 0 is -4 (dims are >= 0)");
  dml_ir_module_release(fx.m);
}

static void test_broken_links(void) {
  fixture_t fx;
  make(&fx);
  fx.n2->next = fx.n1; /* a cycle */
  CHECK_ERROR(dml_ir_verify(fx.m, 0), DML_STATUS_INVALID_ARGUMENT,
              "node list is broken (prev link)");
  fx.n2->next = NULL;
  fx.n2->outputs[0]->def = fx.n1;
  CHECK_ERROR(dml_ir_verify(fx.m, 0), DML_STATUS_INVALID_ARGUMENT,
              "result 0 (#3) does not record this node as its definition\n"
              "  function @forward, node 'relu0' (Relu)");
  dml_ir_module_release(fx.m);
}

int main(void) {
  RUN(test_valid);
  RUN(test_use_before_definition);
  RUN(test_operand_from_elsewhere);
  RUN(test_arity_and_ops);
  RUN(test_function_results);
  RUN(test_globals_and_symbols);
  RUN(test_types);
  RUN(test_broken_links);
  return dml_test_finish();
}
