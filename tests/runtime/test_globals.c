/* test_globals.c — globals that functions update in place: the Assign op
 * (shape inference, verifier rules, passes that must keep it), packages
 * with several functions, sessions on a named function sharing globals, and
 * the load-time checks on Assign nodes. */
#include <stdlib.h>
#include <string.h>

#include "dml_ir.h"
#include "dml_ir_text.h"
#include "dml_package_emit.h"
#include "dml_passes.h"
#include "dml_rt.h"
#include "dml_test.h"

/* forward reads w; sgd_step writes w - lr * g and counts its steps. */
static const char *k_module =
    "global @w : f32[3] param = dense<[1.0, 2.0, 3.0]>\n"
    "global @steps : f32[] state = dense<[0.0]>\n"
    "global @one : f32[] = dense<[1.0]>\n"
    "func @forward(%x: f32[3]) -> (?[?]) {\n"
    "  %y = Mul(%x, @w)\n"
    "  return %y\n"
    "}\n"
    "func @sgd_step(%g: f32[3], %lr: f32[]) -> (?[?]) {\n"
    "  %d = Mul(%g, %lr)\n"
    "  %n = Sub(@w, %d)\n"
    "  %s = Add(@steps, @one)\n"
    "  Assign(@w, %n)\n"
    "  Assign(@steps, %s)\n"
    "  return %n\n"
    "}\n";

static dml_ir_module_t *parse(const char *text) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_ir_parse(text, strlen(text), "test.dmlir", &m));
  return m;
}

static void test_passes_keep_assign(void) {
  dml_ir_module_t *m = parse(k_module);
  dml_pass_options_t o;
  memset(&o, 0, sizeof o);
  o.verify_each = 1;
  CHECK_OK(dml_pass_run_pipeline(m, dml_pass_default_pipeline(), &o));
  dml_ir_function_t *f = dml_ir_module_find_function(m, "sgd_step");
  int assigns = 0;
  for (dml_ir_node_t *n = f->first; n; n = n->next) assigns += n->op == DML_OP_ASSIGN;
  CHECK(assigns == 2); /* DCE keeps them though nothing reads them */
  /* @steps + @one was not folded: @steps is state, not a constant. */
  CHECK(dml_ir_module_find_global(m, "steps") != NULL);
  dml_ir_module_release(m);
}

static void test_assign_errors(void) {
  /* Target must be a param/state global. */
  dml_ir_module_t *m = parse(
      "global @c : f32[2] = dense<[1.0, 2.0]>\n"
      "func @f(%x: f32[2]) -> () {\n  Assign(@c, %x)\n  return\n}\n");
  CHECK_ERROR(dml_ir_verify(m, 0), DML_STATUS_INVALID_ARGUMENT,
              "not a global flagged param or state");
  dml_ir_module_release(m);
  /* Read after its Assign. */
  m = parse(
      "global @w : f32[2] param = dense<[1.0, 2.0]>\n"
      "func @f(%x: f32[2]) -> (f32[2]) {\n  Assign(@w, %x)\n"
      "  %y = Add(@w, %x) : f32[2]\n  return %y\n}\n");
  CHECK_ERROR(dml_ir_verify(m, 0), DML_STATUS_INVALID_ARGUMENT,
              "is read after its Assign in @f");
  dml_ir_module_release(m);
  /* Assigned twice. */
  m = parse(
      "global @w : f32[2] param = dense<[1.0, 2.0]>\n"
      "func @f(%x: f32[2]) -> () {\n  Assign(@w, %x)\n  Assign(@w, %x)\n  return\n}\n");
  CHECK_ERROR(dml_ir_verify(m, 0), DML_STATUS_INVALID_ARGUMENT, "is assigned again");
  dml_ir_module_release(m);
  /* Shape mismatch, found by shape inference. */
  m = parse(
      "global @w : f32[2] param = dense<[1.0, 2.0]>\n"
      "func @f(%x: f32[3]) -> () {\n  Assign(@w, %x)\n  return\n}\n");
  dml_pass_options_t o;
  memset(&o, 0, sizeof o);
  CHECK_ERROR(dml_pass_run_pipeline(m, "shape-infer", &o), DML_STATUS_INVALID_ARGUMENT,
              "does not match global 'w'");
  dml_ir_module_release(m);
}

static dml_rt_model_t *load(dml_ir_module_t *m) {
  void *bytes = NULL;
  size_t size = 0;
  CHECK_OK(dml_package_emit_memory(m, NULL, &bytes, &size));
  dml_rt_model_t *model = NULL;
  CHECK_OK(dml_rt_model_load_memory(bytes, size, &model));
  free(bytes);
  return model;
}

static dml_tensor_t vec3(float *d) {
  dml_tensor_t t;
  memset(&t, 0, sizeof t);
  t.dtype = DML_DTYPE_F32;
  t.rank = 1;
  t.dims[0] = 3;
  t.data = d;
  return t;
}

static void test_sessions_share_globals(void) {
  dml_ir_module_t *m = parse(k_module);
  dml_pass_options_t o;
  memset(&o, 0, sizeof o);
  CHECK_OK(dml_pass_run_pipeline(m, dml_pass_default_pipeline(), &o));
  dml_rt_model_t *model = load(m);
  dml_ir_module_release(m);

  /* Globals: sorted by name, with flags; "one" is a constant, not a global. */
  CHECK(dml_rt_model_num_globals(model) == 2);
  dml_rt_global_info_t gi;
  CHECK_OK(dml_rt_model_global_info(model, 0, &gi));
  CHECK(strcmp(gi.name, "steps") == 0 && gi.flags == DML_RT_GLOBAL_STATE && gi.rank == 0);
  CHECK_OK(dml_rt_model_global_info(model, 1, &gi));
  CHECK(strcmp(gi.name, "w") == 0 && gi.flags == DML_RT_GLOBAL_PARAM && gi.dims[0] == 3);
  CHECK(dml_rt_model_find_global(model, "w") == 1);
  CHECK(dml_rt_model_find_global(model, "one") == -1);

  dml_rt_session_t *fwd = NULL, *step = NULL, *other = NULL;
  CHECK_ERROR(dml_rt_session_create_function(model, "cpu", "train", NULL, &step),
              DML_STATUS_NOT_FOUND, "functions: 'forward', 'sgd_step'");
  CHECK_OK(dml_rt_session_create_function(model, "cpu", "sgd_step", NULL, &step));
  CHECK_OK(dml_rt_session_create_function(model, NULL, "forward", step, &fwd));
  CHECK_OK(dml_rt_session_create(model, "cpu", &other)); /* its own copy */
  CHECK(dml_rt_session_globals_writable(step));
  CHECK(dml_rt_session_num_inputs(step) == 2 &&
        dml_rt_session_find_input(step, "lr") == 1);
  CHECK(dml_rt_session_find_input(fwd, "lr") == -1);

  float g[3] = {1, 1, 2}, lr = 0.5f, ones[3] = {1, 1, 1};
  dml_tensor_t tg = vec3(g), tlr;
  memset(&tlr, 0, sizeof tlr);
  tlr.dtype = DML_DTYPE_F32;
  tlr.data = &lr;
  CHECK_OK(dml_rt_session_set_input(step, 0, &tg));
  CHECK_OK(dml_rt_session_set_input_by_name(step, "lr", &tlr));
  CHECK_OK(dml_rt_session_run(step));
  CHECK_OK(dml_rt_session_run(step)); /* w = [1,2,3] - 2 * 0.5 * [1,1,2] */

  dml_tensor_t x = vec3(ones), y;
  CHECK_OK(dml_rt_session_set_input(fwd, 0, &x));
  CHECK_OK(dml_rt_session_run(fwd));
  CHECK_OK(dml_rt_session_get_output(fwd, 0, &y));
  const float *yd = (const float *)y.data;
  CHECK(yd[0] == 0.0f && yd[1] == 1.0f && yd[2] == 1.0f);
  dml_tensor_t sv;
  CHECK_OK(dml_rt_session_global(fwd, 0, &sv));
  CHECK(*(const float *)sv.data == 2.0f);
  /* A session with its own globals still sees the package's values. */
  CHECK_OK(dml_rt_session_set_input(other, 0, &x));
  CHECK_OK(dml_rt_session_run(other));
  CHECK_OK(dml_rt_session_get_output(other, 0, &y));
  yd = (const float *)y.data;
  CHECK(yd[0] == 1.0f && yd[1] == 2.0f && yd[2] == 3.0f);
  /* Writing a global between runs is seen by the next run. */
  CHECK_OK(dml_rt_session_global(step, 1, &sv));
  ((float *)sv.data)[0] = 10.0f;
  CHECK_OK(dml_rt_session_run(fwd));
  CHECK_OK(dml_rt_session_get_output(fwd, 0, &y));
  CHECK(((const float *)y.data)[0] == 10.0f);

  /* The step session outlives the release of the one it shared with. */
  dml_rt_session_release(step);
  CHECK_OK(dml_rt_session_run(fwd));
  dml_rt_session_release(fwd);
  dml_rt_session_release(other);

  /* Another model's session cannot share. */
  dml_ir_module_t *m2 = parse(k_module);
  CHECK_OK(dml_pass_run_pipeline(m2, dml_pass_default_pipeline(), &o));
  dml_rt_model_t *model2 = load(m2);
  dml_ir_module_release(m2);
  CHECK_OK(dml_rt_session_create(model, "cpu", &other));
  CHECK_ERROR(dml_rt_session_create_function(model2, "cpu", NULL, other, &fwd),
              DML_STATUS_FAILED_PRECONDITION, "another model");
  dml_rt_session_release(other);
  dml_rt_model_release(model2);
  dml_rt_model_release(model);
}

static void test_inference_only_reads_in_place(void) {
  dml_ir_module_t *m = parse(
      "global @w : f32[3] param = dense<[1.0, 2.0, 3.0]>\n"
      "func @forward(%x: f32[3]) -> (?[?]) {\n  %y = Mul(%x, @w)\n  return %y\n}\n");
  dml_pass_options_t o;
  memset(&o, 0, sizeof o);
  CHECK_OK(dml_pass_run_pipeline(m, dml_pass_default_pipeline(), &o));
  dml_rt_model_t *model = load(m);
  dml_ir_module_release(m);
  dml_rt_session_t *s = NULL;
  CHECK_OK(dml_rt_session_create(model, "cpu", &s));
  CHECK(!dml_rt_session_globals_writable(s));
  CHECK(dml_rt_model_num_globals(model) == 1);
  dml_rt_session_release(s);
  dml_rt_model_release(model);
}

int main(void) {
  RUN(test_passes_keep_assign);
  RUN(test_assign_errors);
  RUN(test_sessions_share_globals);
  RUN(test_inference_only_reads_in_place);
  return dml_test_finish();
}
