/*
 * test_onnx_optional.c — ONNX optionals lowered by the importer
 * (onnx_optional.c): present or none at compile time. Fixtures from
 * scripts/gen_onnx_fixtures.py (gen_optional); each model is compiled with
 * the driver and run on the cpu runtime, optional graph inputs present or
 * none through the import option optional_inputs, and every refusal is
 * checked by its message. Also the OptionalProto reader.
 */
#include "onnx_run_util.h"

/* Output `name` of the last run is the bool scalar `want`. */
static void check_bool(dml_rt_model_t *m, dml_rt_session_t *s, const char *name,
                       int want) {
  int32_t k = dml_rt_model_find_output(m, name);
  CHECK(k >= 0);
  if (k < 0) return;
  dml_tensor_t got;
  CHECK_OK(dml_rt_session_get_output(s, (uint32_t)k, &got));
  CHECK(got.dtype == DML_DTYPE_BOOL && got.rank == 0);
  if (got.dtype == DML_DTYPE_BOOL) CHECK((*(const uint8_t *)got.data != 0) == want);
}

static void test_ops(void) {
  /* No IR node stands for an optional: HasElement is a constant. */
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = session_of("opt_ops.onnx", NULL, &m);
  if (!s) return;
  const float x[2] = {1, 2};
  set_f32(s, "x", x, 1, 2, 0, 0);
  CHECK_OK(dml_rt_session_run(s));
  check_bool(m, s, "has_x", 1);
  check_bool(m, s, "has_none", 0);
  check_out(m, s, "gx", 1, 2, 0, 0, x);
  check_out(m, s, "ox", 1, 2, 0, 0, x);
  int32_t k = dml_rt_model_find_output(m, "len");
  CHECK(k >= 0);
  if (k >= 0) {
    dml_tensor_t len;
    CHECK_OK(dml_rt_session_get_output(s, (uint32_t)k, &len));
    CHECK(len.dtype == DML_DTYPE_I64 && *(const int64_t *)len.data == 2);
  }
  /* The none output "none2" has no result. */
  CHECK(dml_rt_model_find_output(m, "none2") < 0);
  CHECK(dml_rt_model_find_output(m, "none2.0") < 0);
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

static void test_inputs(void) {
  const int64_t d0[1] = {3}, d1[1] = {1};
  const dml_onnx_input_shape_t el[2] = {{"so", 1, d0}, {"so", 1, d1}};
  const dml_onnx_sequence_input_t si = {"so", 2, el};
  dml_onnx_optional_input_t oi[2] = {{"o", 1}, {"so", 1}};
  dml_compile_options_t o;
  memset(&o, 0, sizeof(o));
  o.sequence_inputs = &si;
  o.n_sequence_inputs = 1;
  o.optional_inputs = oi;
  o.n_optional_inputs = 2;
  /* Both present: o is a tensor input, so inputs "so.0" and "so.1"; the If
   * (cond Not(has_o), constant false) gives its else branch: y = o. */
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = session_of("opt_inputs.onnx", &o, &m);
  if (s) {
    const float ov[2] = {5, 6}, s0[3] = {1, 2, 3}, s1[1] = {4};
    set_f32(s, "o", ov, 1, 2, 0, 0);
    set_f32(s, "so.0", s0, 1, 3, 0, 0);
    set_f32(s, "so.1", s1, 1, 1, 0, 0);
    CHECK_OK(dml_rt_session_run(s));
    check_bool(m, s, "has_o", 1);
    check_bool(m, s, "has_so", 1);
    check_out(m, s, "y", 1, 2, 0, 0, ov);
    dml_rt_session_release(s);
    dml_rt_model_release(m);
  }
  /* Both none: no inputs; y is none (no result). */
  oi[0].present = oi[1].present = 0;
  m = NULL;
  s = session_of("opt_inputs.onnx", &o, &m);
  if (s) {
    CHECK(dml_rt_model_find_output(m, "y") < 0);
    CHECK_OK(dml_rt_session_run(s));
    check_bool(m, s, "has_o", 0);
    check_bool(m, s, "has_so", 0);
    dml_rt_session_release(s);
    dml_rt_model_release(m);
  }
}

static void test_errors(void) {
  dml_ir_module_t *m = NULL;
  CHECK_ERROR(import_fixture("opt_get_none.onnx", &m), DML_STATUS_INVALID_ARGUMENT,
              "node 'get_none' (OptionalGetElement): input 0 ('n') is an optional "
              "without a value");
  CHECK_ERROR(import_fixture("opt_none_consumed.onnx", &m), DML_STATUS_UNIMPLEMENTED,
              "node 'relu_none' (Relu): input 0 ('n') is an optional without a value, "
              "which this op cannot read");
  CHECK_ERROR(import_fixture("opt_inputs.onnx", &m), DML_STATUS_UNIMPLEMENTED,
              "graph input 'o' is an optional; whether it holds a value must be given "
              "at compile time");
  /* A present optional of a sequence needs sequence_inputs too. */
  const dml_onnx_optional_input_t oi[2] = {{"o", 1}, {"so", 1}};
  dml_onnx_import_options_t o;
  memset(&o, 0, sizeof(o));
  o.optional_inputs = oi;
  o.n_optional_inputs = 2;
  char path[1024];
  CHECK_ERROR(
      dml_onnx_import_file(fixture("opt_inputs.onnx", path, sizeof(path)), &o, &m),
      DML_STATUS_UNIMPLEMENTED,
      "graph input 'so' is a sequence; its element count and shapes must be given");
  CHECK(m == NULL);
}

/* The OptionalProto reader (the conformance runner's). */
static void test_optional_proto(void) {
  /* TensorProto f32[2] {1, 2} with raw_data. */
  static const uint8_t t0[] = {0x08, 0x02, 0x10, 0x01, 0x4a, 0x08, 0,
                               0,    0x80, 0x3f, 0,    0,    0,    0x40};
  uint8_t buf[64];
  size_t len = 0;
  /* OptionalProto{elem_type: TENSOR, tensor_value: t0}. */
  buf[len++] = 0x10;
  buf[len++] = 0x01;
  buf[len++] = 0x1a;
  buf[len++] = (uint8_t)sizeof(t0);
  memcpy(buf + len, t0, sizeof(t0));
  len += sizeof(t0);
  dml_onnx_optional_value_t v;
  CHECK_OK(dml_onnx_optional_read_memory(buf, len, &v));
  CHECK(v.kind == DML_ONNX_OPTIONAL_TENSOR && v.tensor.rank == 1 &&
        v.tensor.dims[0] == 2);
  if (v.kind == DML_ONNX_OPTIONAL_TENSOR)
    CHECK(((const float *)v.tensor.data)[1] == 2.0f);
  dml_onnx_optional_free(&v);
  CHECK_ERROR(dml_onnx_optional_read_memory(buf, len - 3, &v), DML_STATUS_DATA_LOSS,
              "not an onnx.OptionalProto");
  /* OptionalProto{elem_type: SEQUENCE, sequence_value: {elem_type: 1,
   * tensor_values: [t0]}}. */
  len = 0;
  buf[len++] = 0x10;
  buf[len++] = 0x03;
  buf[len++] = 0x2a;
  buf[len++] = (uint8_t)(sizeof(t0) + 4);
  buf[len++] = 0x10;
  buf[len++] = 0x01;
  buf[len++] = 0x1a;
  buf[len++] = (uint8_t)sizeof(t0);
  memcpy(buf + len, t0, sizeof(t0));
  len += sizeof(t0);
  CHECK_OK(dml_onnx_optional_read_memory(buf, len, &v));
  CHECK(v.kind == DML_ONNX_OPTIONAL_SEQUENCE && v.n == 1 && v.elems[0].dims[0] == 2);
  dml_onnx_optional_free(&v);
  /* A sequence under elem_type TENSOR contradicts it. */
  buf[1] = 0x01;
  CHECK_ERROR(dml_onnx_optional_read_memory(buf, len, &v), DML_STATUS_DATA_LOSS,
              "OptionalProto of elem_type 1 holds a sequence");
  /* None: elem_type only. */
  CHECK_OK(dml_onnx_optional_read_memory(buf, 2, &v));
  CHECK(v.kind == DML_ONNX_OPTIONAL_NONE);
  dml_onnx_optional_free(&v);
  /* A map_value (field 6) is refused. */
  const uint8_t map[] = {0x10, 0x04, 0x32, 0x00};
  CHECK_ERROR(dml_onnx_optional_read_memory(map, sizeof(map), &v),
              DML_STATUS_UNIMPLEMENTED, "OptionalProto holds a sparse tensor, map");
}

int main(void) {
  RUN(test_ops);
  RUN(test_inputs);
  RUN(test_errors);
  RUN(test_optional_proto);
  return dml_test_finish();
}
