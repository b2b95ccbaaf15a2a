/*
 * test_onnx_scan_runtime.c — a Scan over a symbolic length T (opset 17)
 * imported as a run-time Loop (frontends/onnx/onnx_loop.c): trip count
 * Gather(Shape(x), axis), a body function taking element `iter` of each scan
 * input (reversed beforehand for scan_input_directions 1), scan outputs
 * reversed and transposed after the Loop. Fixtures and onnxruntime's
 * outputs from scripts/gen_scan_runtime_fixtures.py (scan_rt_ref.h): a
 * cumulative sum, an RNN cell over time (batch first, scan and output axis
 * 1) and two scan inputs with reverse directions and a non-zero output
 * axis, each at T = 5 and 37 from one compiled model; values within 1e-5
 * (absolute + relative), shapes exactly. With T static the Scan stays
 * unrolled (no Loop node); 70,000 static steps run as a Loop; Scan-8 over a
 * symbolic T is refused. A scan output has length T (the Loop's trip
 * count), so it combines with a value of length T (the residual model).
 */
#include <math.h>

#include "onnx_run_util.h"
#include "scan_rt_ref.h"

/* Output `w` of the last run of `s` (model m) against onnxruntime's
 * (onnx_run_util.h check_ref_output). */
static void check_ref(dml_rt_model_t *m, dml_rt_session_t *s, const char *cname,
                      const scan_rt_tensor_t *w) {
  check_ref_output(m, s, cname, w->name, w->rank, w->dims, w->f, NULL);
}

/* Runs case c on session s and compares every output. */
static void run_on(dml_rt_model_t *m, dml_rt_session_t *s, const scan_rt_case_t *c) {
  dml_rt_session_clear_inputs(s); /* T changes between cases */
  for (uint32_t i = 0; i < c->n_in; i++) {
    const scan_rt_tensor_t *t = &c->in[i];
    dml_tensor_t v = {DML_DTYPE_F32, t->rank, {0}, (void *)t->f};
    for (int32_t d = 0; d < t->rank; d++) v.dims[d] = t->dims[d];
    CHECK_OK(dml_rt_session_set_input_by_name(s, t->name, &v));
  }
  dml_status_t st = dml_rt_session_run(s);
  CHECK_OK(st);
  for (uint32_t o = 0; !st && o < c->n_out; o++) check_ref(m, s, c->name, &c->out[o]);
}

/* Every case of model `model`, all on one session (T changes between
 * runs), or on a fresh session each when `fresh`. */
static void run_model(const char *model, int fresh) {
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.batch_bound = 64; /* T and batch */
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = NULL;
  int n = 0;
  for (size_t i = 0; i < sizeof scan_rt_cases / sizeof scan_rt_cases[0]; i++) {
    if (strcmp(scan_rt_cases[i].model, model)) continue;
    fprintf(stderr, "case %s\n", scan_rt_cases[i].name);
    if (!s) s = session_of(model, &o, &m);
    if (!s) break;
    run_on(m, s, &scan_rt_cases[i]);
    if (fresh) {
      release(s, m);
      s = NULL;
      m = NULL;
    }
    n++;
  }
  CHECK(n == 2);
  release(s, m);
}

static void test_cumsum(void) {
  run_model("scan_rt_cumsum.onnx", 0);
}
static void test_rnn(void) {
  run_model("scan_rt_rnn.onnx", 0);
}
static void test_two(void) {
  /* One session for both lengths: the body's two captures share T, so
   * the body session's inputs of the last run must be unbound before the
   * first capture at the new T is bound (runtime/rt_session.c run_loop);
   * then a fresh session per length. */
  run_model("scan_rt_two.onnx", 0);
  run_model("scan_rt_two.onnx", 1);
}

/* The IR: one Loop node naming the body function "scan_rnn.body"; no
 * unrolled copies of the body (one Tanh, in the body). */
static void test_ir(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(import_fixture("scan_rt_rnn.onnx", &m));
  if (!m) return;
  dml_ir_function_t *f = fwd(m);
  CHECK(f && count_op(f, DML_OP_LOOP) == 1 && count_op(f, DML_OP_TANH) == 0 &&
        count_op(f, DML_OP_TRANSPOSE) == 1);
  dml_ir_function_t *b = dml_ir_module_find_function(m, "scan_rnn.body");
  CHECK(b && count_op(b, DML_OP_TANH) == 1 && count_op(b, DML_OP_GATHER) == 1);
  CHECK(module_well_formed(m));
  dml_ir_module_release(m);
}

/* With T static (--input-shape), the Scan stays unrolled: no Loop, one
 * Tanh per step; the values are still onnxruntime's. */
static void test_static_unrolled(void) {
  const scan_rt_case_t *c = NULL;
  for (size_t i = 0; i < sizeof scan_rt_cases / sizeof scan_rt_cases[0]; i++)
    if (!strcmp(scan_rt_cases[i].name, "rnn_5")) c = &scan_rt_cases[i];
  CHECK(c != NULL);
  if (!c) return;
  static const int64_t xd[3] = {2, 5, 8}, hd[2] = {2, 6};
  dml_onnx_input_shape_t shp[2] = {{"x", 3, xd}, {"h0", 2, hd}};
  dml_onnx_import_options_t io;
  memset(&io, 0, sizeof io);
  io.input_shapes = shp;
  io.n_input_shapes = 2;
  char path[1024];
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_onnx_import_file(fixture(c->model, path, sizeof(path)), &io, &m));
  dml_ir_function_t *f = fwd(m);
  CHECK(f && count_op(f, DML_OP_LOOP) == 0 && count_op(f, DML_OP_TANH) == 5);
  CHECK(m && m->n_functions == 1);
  dml_ir_module_release(m);
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.input_shapes = shp;
  o.n_input_shapes = 2;
  dml_rt_model_t *rm = NULL;
  dml_rt_session_t *s = session_of(c->model, &o, &rm);
  if (s) run_on(rm, s, c);
  release(s, rm);
}

/* Static, but longer than unrolling takes (70,000 steps > 65,536): a
 * run-time Loop too. Integer-valued sums, exact in f32. */
static void test_long(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(import_fixture("scan_rt_long.onnx", &m));
  dml_ir_function_t *f = m ? fwd(m) : NULL;
  CHECK(f && count_op(f, DML_OP_LOOP) == 1 && count_op(f, DML_OP_ADD) == 0);
  dml_ir_module_release(m);
  enum { T = 70000 };
  float *x = (float *)malloc(sizeof(float) * T * 4);
  CHECK(x != NULL);
  if (!x) return;
  static const float s0[4] = {0, 1, 2, 3};
  float want[4] = {0, 1, 2, 3}, last_y[4];
  for (int t = 0; t < T; t++)
    for (int d = 0; d < 4; d++) {
      x[t * 4 + d] = (float)(t % 3 - 1 + d);
      want[d] += x[t * 4 + d];
      last_y[d] = want[d];
    }
  /* The Loop's scan output has the trip count's length, static here (no
   * --dynamic-dim-bound needed). */
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  dml_rt_model_t *rm = NULL;
  dml_rt_session_t *s = session_of("scan_rt_long.onnx", &o, &rm);
  if (s) {
    set_f32(s, "s0", s0, 1, 4, 0, 0);
    set_f32(s, "x", x, 2, T, 4, 0);
    CHECK_OK(dml_rt_session_run(s));
    check_out(rm, s, "s_final", 1, 4, 0, 0, want);
    int32_t k = dml_rt_model_find_output(rm, "y");
    dml_tensor_t y;
    CHECK(k >= 0 && !dml_rt_session_get_output(s, (uint32_t)k, &y));
    if (k >= 0 && y.rank == 2 && y.dims[0] == T)
      CHECK(!memcmp((const float *)y.data + (T - 1) * 4, last_y, sizeof last_y));
    else
      CHECK(!"y has the shape [70000, 4]");
  }
  release(s, rm);
  free(x);
}

/* Scan-8 (batch axis, sequence_lens) over a symbolic T: only unrolled, so
 * refused with UNIMPLEMENTED naming the node and saying why. */
static void test_scan8_refused(void) {
  dml_ir_module_t *m = NULL;
  dml_status_t st = import_fixture("scan_rt_v8.onnx", &m);
  CHECK(dml_status_code(st) == DML_STATUS_UNIMPLEMENTED);
  const char *msg = st ? dml_status_reason(st) : "";
  const char *det = st ? dml_status_details(st) : "";
  int ok = strstr(msg, "scan8") && strstr(msg, "not known at compile time") &&
           strstr(det, "Scan-8");
  if (!ok) fprintf(stderr, "scan8: %s\n%s\n", msg, det);
  CHECK(ok);
  dml_status_free(st);
  dml_ir_module_release(m);
}

/* A scan output's length is the trip count's dim, T (ir/infer.c
 * loop_trip_dim: the run-time Scan's Loop has no cond that can stop it), so
 * Add(y, x) with x of length T types and runs: onnxruntime's values at T =
 * 5 and 37 on one session, and the Loop's scan output typed [T,4] in the
 * IR. */
static void test_resid(void) {
  run_model("scan_rt_resid.onnx", 0);
  dml_ir_module_t *m = NULL;
  CHECK_OK(import_fixture("scan_rt_resid.onnx", &m));
  dml_ir_function_t *f = m ? fwd(m) : NULL;
  const dml_ir_node_t *loop = NULL;
  for (const dml_ir_node_t *n = f ? f->first : NULL; n; n = n->next)
    if (n->op == DML_OP_LOOP) loop = n;
  CHECK(loop && loop->n_outputs == 2);
  if (loop && loop->n_outputs == 2) {
    char ts[128];
    dml_ir_type_str(m, &loop->outputs[1]->type, ts, sizeof ts);
    int ok = !strcmp(ts, "f32[T,4]");
    if (!ok) fprintf(stderr, "resid: the scan output is %s\n", ts);
    CHECK(ok);
  }
  dml_ir_module_release(m);
}

/* x [T, 3] and w [3, U]: the model's dims leave T and U apart, ONNX Scan
 * needs them equal. T = U gives case two_5's outputs; T = 5, U = 7 is
 * refused at run time (not w cut off at 5 steps), and the session then
 * runs the T = U case again. */
static void test_lengths(void) {
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.batch_bound = 64;
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = session_of("scan_rt_two_lens.onnx", &o, &m);
  const scan_rt_case_t *c = NULL;
  for (size_t i = 0; i < sizeof scan_rt_cases / sizeof scan_rt_cases[0]; i++)
    if (!strcmp(scan_rt_cases[i].name, "two_5")) c = &scan_rt_cases[i];
  CHECK(s && c);
  if (s && c) {
    run_on(m, s, c);
    float w7[21] = {0};
    dml_tensor_t w = {DML_DTYPE_F32, 2, {3, 7}, w7};
    for (uint32_t i = 0; i < c->n_in; i++) {
      const scan_rt_tensor_t *t = &c->in[i];
      if (!strcmp(t->name, "w")) continue;
      dml_tensor_t v = {DML_DTYPE_F32, t->rank, {0}, (void *)t->f};
      for (int32_t d = 0; d < t->rank; d++) v.dims[d] = t->dims[d];
      CHECK_OK(dml_rt_session_set_input_by_name(s, t->name, &v));
    }
    CHECK_OK(dml_rt_session_set_input_by_name(s, "w", &w));
    CHECK_ERROR(dml_rt_session_run(s), DML_STATUS_INVALID_ARGUMENT,
                "scan input 1 has length 7 along axis 1, scan input 0 has 5");
    run_on(m, s, c);
  }
  release(s, m);
}

int main(void) {
  RUN(test_cumsum);
  RUN(test_lengths);
  RUN(test_rnn);
  RUN(test_two);
  RUN(test_ir);
  RUN(test_static_unrolled);
  RUN(test_long);
  RUN(test_scan8_refused);
  RUN(test_resid);
  return dml_test_finish();
}
