/* Tests of the pass manager's C API: the table from passes.def, pipeline
 * errors (nothing runs when a name is wrong), IR dumps to a FILE, error
 * annotation with the pass name, and the arena size reported back. */
#include <stdio.h>
#include <string.h>

#include "dml_ir.h"
#include "dml_passes.h"
#include "dml_test.h"

static void test_table(void) {
  size_t n = 0;
  const dml_pass_info_t *p = dml_pass_list(&n);
  CHECK(n == 11);
  CHECK(p && strcmp(p[0].name, "shape-infer") == 0);
  for (size_t i = 0; i < n; i++) {
    CHECK(dml_pass_find(p[i].name) == &p[i]);
    CHECK(p[i].summary && p[i].summary[0] && p[i].run);
  }
  CHECK(dml_pass_find("nope") == NULL);
  CHECK(dml_pass_find(NULL) == NULL);
  CHECK(strcmp(dml_pass_default_pipeline(),
               "shape-infer,expand-gradient,qdq-fuse,wq-fuse,"
               "const-fold,cse,dce,attn-fuse,precision,fuse,mem-plan") == 0);
}

/* forward(x: f32[8]) { a = Relu(x); dead = Neg(a); return a } */
static dml_ir_module_t *small_module(dml_ir_node_t **out_dead) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_ir_module_create(&m));
  dml_ir_function_t *f = NULL;
  CHECK_OK(dml_ir_function_create(m, "forward", &f));
  int64_t eight = 8;
  dml_type_t t = dml_type_static(DML_DTYPE_F32, 1, &eight);
  dml_ir_value_t *x = NULL;
  CHECK_OK(dml_ir_function_add_arg(f, "x", &t, &x));
  dml_ir_node_t *a = NULL, *dead = NULL;
  CHECK_OK(dml_ir_node_create(f, DML_OP_RELU, "a", 1, &x, 1, NULL, &a));
  CHECK_OK(dml_ir_node_create(f, DML_OP_NEG, "dead", 1, &a->outputs[0], 1, NULL, &dead));
  CHECK_OK(dml_ir_function_set_results(f, 1, &a->outputs[0]));
  if (out_dead) *out_dead = dead;
  return m;
}

static void test_unknown_pass_runs_nothing(void) {
  dml_ir_module_t *m = small_module(NULL);
  dml_pass_options_t o;
  memset(&o, 0, sizeof(o));
  CHECK_ERROR(
      dml_pass_run_pipeline(m, "dce, bogus", &o), DML_STATUS_INVALID_ARGUMENT,
      "unknown pass 'bogus' in the pipeline\n  valid passes: shape-infer, "
      "expand-gradient, qdq-fuse, wq-fuse, const-fold, cse, dce, attn-fuse, precision, "
      "fuse, mem-plan");
  CHECK(dml_ir_function_num_nodes(m->functions[0]) == 2); /* dce did not run */
  o.print_ir_after = "dce,typo";
  CHECK_ERROR(dml_pass_run_pipeline(m, "dce", &o), DML_STATUS_INVALID_ARGUMENT,
              "unknown pass 'typo' in --print-ir-after");
  CHECK(dml_ir_function_num_nodes(m->functions[0]) == 2);
  o.print_ir_after = NULL;
  CHECK_OK(dml_pass_run_pipeline(m, "", &o)); /* empty: nothing to do */
  CHECK_OK(dml_pass_run_pipeline(m, NULL, NULL));
  dml_ir_module_release(m);
}

static void test_dumps_and_arena(void) {
  dml_ir_module_t *m = small_module(NULL);
  FILE *dump = tmpfile();
  CHECK(dump != NULL);
  if (!dump) return;
  dml_pass_options_t o;
  memset(&o, 0, sizeof(o));
  o.dump = dump;
  o.print_ir_after = "mem-plan";
  o.verify_each = 1;
  CHECK_OK(dml_pass_run_pipeline(m, " shape-infer , cse,dce,mem-plan", &o));
  CHECK(o.out_arena_bytes == 64 * 2); /* x and a, 32 bytes each, aligned */
  CHECK(m->functions[0]->arena_bytes == 128);
  char buf[4096];
  size_t n = (size_t)ftell(dump);
  rewind(dump);
  n = fread(buf, 1, n < sizeof(buf) - 1 ? n : sizeof(buf) - 1, dump);
  buf[n] = 0;
  CHECK(strncmp(buf, "// -----// IR Dump After mem-plan //----- //\nmodule {", 53) == 0);
  CHECK(strstr(buf, "IR Dump After dce") == NULL);
  CHECK(strstr(buf, "arena(128)") != NULL);
  CHECK(strstr(buf, "Neg") == NULL);
  fclose(dump);
  dml_ir_module_release(m);
}

static void test_errors_name_the_pass(void) {
  dml_ir_module_t *m = small_module(NULL);
  /* Types of node results are unknown: mem-plan cannot size them. */
  dml_pass_options_t o;
  memset(&o, 0, sizeof(o));
  CHECK_ERROR(dml_pass_run_pipeline(m, "dce,mem-plan", &o),
              DML_STATUS_FAILED_PRECONDITION, "while running pass 'mem-plan'");
  dml_ir_module_release(m);
}

int main(void) {
  RUN(test_table);
  RUN(test_unknown_pass_runs_nothing);
  RUN(test_dumps_and_arena);
  RUN(test_errors_name_the_pass);
  return dml_test_finish();
}
