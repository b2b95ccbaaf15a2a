/*
 * test_onnx_seq_runtime.c — ONNX sequences of run-time length, lowered as
 * stacked sequences (one tensor [n, element dims]; frontends/onnx/
 * onnx_seq.c, onnx_loop.c). Fixtures and onnxruntime's outputs from
 * scripts/gen_seq_runtime_fixtures.py (seq_rt_ref.h), each model at T = 3
 * and 11 on one session: a list built by SequenceInsert in a Loop run at
 * run time, read by ConcatFromSequence (new_axis 0 and 1), SequenceAt at a
 * run-time position and SequenceLength, and one built in a while loop (no
 * trip count, a cond the body computes: a data-dependent length);
 * SplitToSequence along a symbolic dim (keepdims 0 and 1, a scalar split 1)
 * read by SequenceAt, ConcatFromSequence and SequenceLength, and mapped by
 * SequenceMap (a tensor input; two outputs of different element shapes,
 * stacked by ConcatFromSequence). f32 values within 1e-5 (absolute +
 * relative), i64 and shapes exactly. Refused with UNIMPLEMENTED naming the
 * node: a scalar split other than 1 along a symbolic dim, and a stacked
 * sequence given to SequenceInsert.
 */
#include <math.h>

#include "onnx_run_util.h"
#include "seq_rt_ref.h"

/* Output `w` of the last run of `s` (model m) against onnxruntime's
 * (onnx_run_util.h check_ref_output). */
static void check_ref(dml_rt_model_t *m, dml_rt_session_t *s, const char *cname,
                      const seq_rt_tensor_t *w) {
  check_ref_output(m, s, cname, w->name, w->rank, w->dims, w->f, w->is_i64 ? w->i : NULL);
}

/* Runs case c on session s and compares every output. */
static void run_on(dml_rt_model_t *m, dml_rt_session_t *s, const seq_rt_case_t *c) {
  dml_rt_session_clear_inputs(s); /* T changes between cases */
  for (uint32_t i = 0; i < c->n_in; i++) {
    const seq_rt_tensor_t *t = &c->in[i];
    dml_tensor_t v = {t->is_i64 ? DML_DTYPE_I64 : DML_DTYPE_F32,
                      t->rank,
                      {0},
                      t->is_i64 ? (void *)t->i : (void *)t->f};
    for (int32_t d = 0; d < t->rank; d++) v.dims[d] = t->dims[d];
    CHECK_OK(dml_rt_session_set_input_by_name(s, t->name, &v));
  }
  dml_status_t st = dml_rt_session_run(s);
  CHECK_OK(st);
  for (uint32_t o = 0; !st && o < c->n_out; o++) check_ref(m, s, c->name, &c->out[o]);
}

/* Every case of model `model` on one session (T changes between runs). */
static void run_model(const char *model) {
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.batch_bound = 64; /* T */
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = NULL;
  int n = 0;
  for (size_t i = 0; i < sizeof seq_rt_cases / sizeof seq_rt_cases[0]; i++) {
    if (strcmp(seq_rt_cases[i].model, model)) continue;
    fprintf(stderr, "case %s\n", seq_rt_cases[i].name);
    if (!s) s = session_of(model, &o, &m);
    if (!s) break;
    run_on(m, s, &seq_rt_cases[i]);
    n++;
  }
  CHECK(n == 2);
  release(s, m);
}

static void test_loop(void) {
  run_model("seq_rt_loop.onnx");
}
static void test_split(void) {
  run_model("seq_rt_split.onnx");
}

/* The IR of the Loop model: the two Loops' bodies without the sequence
 * (the Loop has no carried value, the stacked sequence is its scan
 * output), typed [T,2,3] for "build" (the trip count's dim: M = len(x),
 * cond constant true) and with a data-dependent length for "while". */
static void test_loop_ir(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(import_fixture("seq_rt_loop.onnx", &m));
  dml_ir_function_t *f = m ? fwd(m) : NULL;
  static const char *const names[2] = {"build", "while"};
  static const char *const want[2] = {"f32[T,2,3]", "f32[while.n0,2,3]"};
  for (int k = 0; k < 2; k++) {
    const dml_ir_node_t *loop = NULL;
    for (const dml_ir_node_t *n = f ? f->first : NULL; n; n = n->next)
      if (n->op == DML_OP_LOOP && n->name && !strcmp(n->name, names[k])) loop = n;
    CHECK(loop && loop->n_outputs == 1);
    if (!loop || loop->n_outputs != 1) continue;
    char ts[128];
    dml_ir_type_str(m, &loop->outputs[0]->type, ts, sizeof ts);
    int ok = !strcmp(ts, want[k]);
    if (!ok) fprintf(stderr, "loop %s: the stacked sequence is %s\n", names[k], ts);
    CHECK(ok);
  }
  CHECK(m && module_well_formed(m));
  dml_ir_module_release(m);
}

/* Import of fixture `name` fails with UNIMPLEMENTED, the message naming
 * `node` and holding `why`. */
static void check_refused(const char *name, const char *node, const char *why) {
  dml_ir_module_t *m = NULL;
  dml_status_t st = import_fixture(name, &m);
  CHECK(dml_status_code(st) == DML_STATUS_UNIMPLEMENTED);
  const char *msg = st ? dml_status_reason(st) : "";
  int ok = strstr(msg, node) && strstr(msg, why);
  fprintf(stderr, "%s: %s\n%s\n", name, msg, st ? dml_status_details(st) : "");
  CHECK(ok);
  dml_status_free(st);
  dml_ir_module_release(m);
}

static void test_refused(void) {
  check_refused("seq_rt_split2.onnx", "split_2", "the last piece may be shorter");
  check_refused("seq_rt_insert.onnx", "insert_after", "run-time length");
}

int main(void) {
  RUN(test_loop);
  RUN(test_split);
  RUN(test_loop_ir);
  RUN(test_refused);
  return dml_test_finish();
}
