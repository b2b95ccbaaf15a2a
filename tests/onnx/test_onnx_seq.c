/*
 * test_onnx_seq.c — ONNX sequences lowered by the importer (onnx_seq.c) into
 * compile-time lists of tensors. Fixtures from scripts/gen_onnx_fixtures.py
 * (gen_seq); each model is compiled with the driver and run on the cpu
 * runtime (exact comparisons: the ops only move values, or add small
 * integers), sequence graph inputs and outputs as "<name>.<k>" tensors, and
 * every refusal is checked by its message.
 */
#include "dml_ir_infer.h"
#include "onnx_run_util.h"

static void test_ops(void) {
  /* No IR node stands for a sequence: Length is a constant, At an Identity. */
  dml_ir_module_t *mod = NULL;
  CHECK_OK(import_fixture("seq_ops.onnx", &mod));
  if (mod) {
    CHECK(module_well_formed(mod));
    CHECK(count_op(fwd(mod), DML_OP_CONCAT) == 1);
    dml_ir_module_release(mod);
  }
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = session_of("seq_ops.onnx", NULL, &m);
  if (!s) return;
  const float a[6] = {1, 2, 3, 4, 5, 6}, b[3] = {7, 8, 9};
  set_f32(s, "a", a, 2, 2, 3, 0);
  set_f32(s, "b", b, 2, 1, 3, 0);
  CHECK_OK(dml_rt_session_run(s));
  /* s4 = [b, a]: length 2, at(-1) = a, concat = [b; a], e2[0] = b. */
  int32_t k = dml_rt_model_find_output(m, "len");
  dml_tensor_t len;
  CHECK(k >= 0);
  if (k >= 0) {
    CHECK_OK(dml_rt_session_get_output(s, (uint32_t)k, &len));
    CHECK(len.dtype == DML_DTYPE_I64 && len.rank == 0 && *(const int64_t *)len.data == 2);
  }
  check_out(m, s, "at", 2, 2, 3, 0, a);
  const float cat[9] = {7, 8, 9, 1, 2, 3, 4, 5, 6};
  check_out(m, s, "cat", 2, 3, 3, 0, cat);
  check_out(m, s, "first", 2, 1, 3, 0, b);
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

static void test_split(void) {
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = session_of("seq_split.onnx", NULL, &m);
  if (!s) return;
  const float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  set_f32(s, "x", x, 2, 4, 2, 0);
  CHECK_OK(dml_rt_session_run(s));
  const float xt[8] = {1, 3, 5, 7, 2, 4, 6, 8};
  check_out(m, s, "xt", 2, 2, 4, 0, xt);
  /* The sequence output "parts": outputs "parts.0" and "parts.1". */
  check_out(m, s, "parts.0", 2, 1, 2, 0, x);
  check_out(m, s, "parts.1", 2, 3, 2, 0, x + 2);
  CHECK(dml_rt_model_find_output(m, "parts.2") < 0);
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

static void test_map(void) {
  /* The sequence input "xs": two elements of different shapes. */
  const int64_t d0[2] = {2, 3}, d1[1] = {3};
  const dml_onnx_input_shape_t el[2] = {{"xs", 2, d0}, {"xs", 1, d1}};
  const dml_onnx_sequence_input_t si = {"xs", 2, el};
  dml_compile_options_t o;
  memset(&o, 0, sizeof(o));
  o.sequence_inputs = &si;
  o.n_sequence_inputs = 1;
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = session_of("seq_map.onnx", &o, &m);
  if (!s) return;
  const float x0[6] = {1, 2, 3, 4, 5, 6}, x1[3] = {-1, -2, -3}, w[3] = {10, 20, 30};
  set_f32(s, "xs.0", x0, 2, 2, 3, 0);
  set_f32(s, "xs.1", x1, 1, 3, 0, 0);
  set_f32(s, "w", w, 1, 3, 0, 0);
  CHECK_OK(dml_rt_session_run(s));
  const float y0[6] = {11, 22, 33, 14, 25, 36}, y1[3] = {9, 18, 27};
  check_out(m, s, "ys.0", 2, 2, 3, 0, y0);
  check_out(m, s, "ys.1", 1, 3, 0, 0, y1);
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

static void test_errors(void) {
  dml_ir_module_t *m = NULL;
  CHECK_ERROR(import_fixture("seq_dynamic_pos.onnx", &m), DML_STATUS_UNIMPLEMENTED,
              "node 'at_dyn' (SequenceAt): the position ('pos') is not known at compile "
              "time: it depends on run-time data");
  CHECK_ERROR(import_fixture("seq_bad_pos.onnx", &m), DML_STATUS_INVALID_ARGUMENT,
              "node 'at_5' (SequenceAt): position 5 is out of range [-1, 0] for a "
              "sequence of 1 elements");
  CHECK_ERROR(import_fixture("seq_consumed.onnx", &m), DML_STATUS_UNIMPLEMENTED,
              "node 'relu_seq' (Relu): input 0 ('s') is a sequence, which this op cannot "
              "read");
  CHECK_ERROR(import_fixture("seq_map.onnx", &m), DML_STATUS_UNIMPLEMENTED,
              "graph input 'xs' is a sequence; its element count and shapes must be "
              "given at compile time");
  /* Split along a symbolic dim into pieces of 1: a stacked sequence of
   * run-time length (test_onnx_seq_runtime runs such models); the Concat
   * gives back [n]. */
  CHECK_OK(import_fixture("seq_split_symbolic.onnx", &m));
  if (m) {
    dml_ir_function_t *f = fwd(m);
    for (dml_ir_node_t *n = f ? f->first : NULL; n; n = n->next)
      CHECK_OK(dml_ir_infer_node(m, n));
    char ts[64] = "";
    if (f && f->n_results == 1) dml_ir_type_str(m, &f->results[0]->type, ts, sizeof ts);
    if (strcmp(ts, "f32[n]")) fprintf(stderr, "seq_split_symbolic: %s\n", ts);
    CHECK(!strcmp(ts, "f32[n]"));
    dml_ir_module_release(m);
    m = NULL;
  }
  CHECK_ERROR(import_fixture("seq_split_dynamic.onnx", &m), DML_STATUS_UNIMPLEMENTED,
              "node 'split_dyn' (SplitToSequence): the split ('sp') is not known at "
              "compile time: the length of the sequence depends on run-time data");
  /* A sequence input's element shapes must be valid. */
  const int64_t d[1] = {3};
  const dml_onnx_input_shape_t el[1] = {{"xs", -1, d}};
  const dml_onnx_sequence_input_t si = {"xs", 1, el};
  dml_onnx_import_options_t o;
  memset(&o, 0, sizeof(o));
  o.sequence_inputs = &si;
  o.n_sequence_inputs = 1;
  char path[1024];
  CHECK_ERROR(dml_onnx_import_file(fixture("seq_map.onnx", path, sizeof(path)), &o, &m),
              DML_STATUS_INVALID_ARGUMENT,
              "sequence input 'xs': element 0 has rank -1, not in 0..");
  CHECK(m == NULL);
}

/* The SequenceProto reader (the conformance runner's): two float tensors. */
static void test_sequence_proto(void) {
  /* SequenceProto{elem_type: 1, tensor_values: [f32[2] {1,2}, f32[1] {3}]},
   * the tensors with raw_data. */
  static const uint8_t t0[] = {0x08, 0x02, 0x10, 0x01, 0x4a, 0x08, 0,
                               0,    0x80, 0x3f, 0,    0,    0,    0x40};
  static const uint8_t t1[] = {0x08, 0x01, 0x10, 0x01, 0x4a, 0x04, 0, 0, 0x40, 0x40};
  uint8_t buf[64];
  size_t len = 0;
  buf[len++] = 0x10;
  buf[len++] = 0x01;
  buf[len++] = 0x1a;
  buf[len++] = (uint8_t)sizeof(t0);
  memcpy(buf + len, t0, sizeof(t0));
  len += sizeof(t0);
  buf[len++] = 0x1a;
  buf[len++] = (uint8_t)sizeof(t1);
  memcpy(buf + len, t1, sizeof(t1));
  len += sizeof(t1);
  size_t n = 0;
  dml_tensor_t *el = NULL;
  void **bufs = NULL;
  CHECK_OK(dml_onnx_sequence_read_memory(buf, len, &n, &el, &bufs));
  CHECK(n == 2);
  if (n == 2) {
    CHECK(el[0].dtype == DML_DTYPE_F32 && el[0].rank == 1 && el[0].dims[0] == 2);
    CHECK(((const float *)el[0].data)[1] == 2.0f);
    CHECK(el[1].rank == 1 && el[1].dims[0] == 1 &&
          ((const float *)el[1].data)[0] == 3.0f);
  }
  dml_onnx_sequence_free(n, el, bufs);
  CHECK_ERROR(dml_onnx_sequence_read_memory(buf, len - 3, &n, &el, &bufs),
              DML_STATUS_DATA_LOSS, "not an onnx.SequenceProto");
  buf[1] = 0x02; /* elem_type SEQUENCE */
  CHECK_ERROR(dml_onnx_sequence_read_memory(buf, len, &n, &el, &bufs),
              DML_STATUS_UNIMPLEMENTED, "only tensors (1) are supported");
}

int main(void) {
  RUN(test_ops);
  RUN(test_split);
  RUN(test_map);
  RUN(test_errors);
  RUN(test_sequence_proto);
  return dml_test_finish();
}
