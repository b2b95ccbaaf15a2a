/* Tests for the runtime base: status, dtypes, ops table, types. */
#include <stdint.h>
#include <string.h>

#include "dml_dtype.h"
#include "dml_ops.h"
#include "dml_status.h"
#include "dml_test.h"
#include "dml_types.h"

static void test_status_format(void) {
  dml_status_t s = dml_status_make(DML_STATUS_INVALID_ARGUMENT, "onnx.import",
                                   "bad attribute %s", "axis");
  s = dml_status_detail(s, "node 'n1'");
  s = dml_status_annotate(s, "importing graph");
  char *msg = dml_status_format(s);
  CHECK(msg && strcmp(msg,
                      "error: onnx.import: bad attribute axis\n  node 'n1'\n"
                      "  while importing graph") == 0);
  CHECK(dml_status_code(s) == DML_STATUS_INVALID_ARGUMENT);
  CHECK(strcmp(dml_status_op(s), "onnx.import") == 0);
  free(msg);
  dml_status_free(s);
  CHECK(dml_status_format(DML_OK) == NULL);
  CHECK(dml_status_code(DML_OK) == DML_STATUS_OK);
}

static void test_dtype_names(void) {
  for (int i = 1; i < DML_DTYPE_COUNT_; i++) {
    const char *n = dml_dtype_name((dml_dtype_t)i);
    CHECK(dml_dtype_from_name(n, strlen(n)) == (dml_dtype_t)i);
    CHECK(dml_dtype_size((dml_dtype_t)i) > 0);
  }
  CHECK(dml_dtype_from_name("f33", 3) == DML_DTYPE_INVALID);
  CHECK(dml_dtype_from_npy_descr("<f4", 3) == DML_DTYPE_F32);
  CHECK(dml_dtype_from_npy_descr("|b1", 3) == DML_DTYPE_BOOL);
  CHECK(dml_dtype_from_npy_descr(">f4", 3) == DML_DTYPE_INVALID);
}

static void test_half(void) {
  /* Exhaustive f16 -> f32 -> f16 round trip (NaNs keep being NaN). */
  int bad = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    float f = dml_f16_to_f32((uint16_t)h);
    uint16_t back = dml_f32_to_f16(f);
    if (f != f)
      bad += back == 0 || (back & 0x7c00u) != 0x7c00u || !(back & 0x3ffu);
    else
      bad += back != h;
  }
  CHECK(bad == 0);
  CHECK(dml_f16_to_f32(0x3c00) == 1.0f);
  CHECK(dml_f32_to_f16(65520.0f) == 0x7c00); /* rounds to inf */
  CHECK(dml_f32_to_bf16(1.0f) == 0x3f80);
  CHECK(dml_bf16_to_f32(0x4049) == 3.140625f);
}

static void test_ops_table(void) {
  for (int i = 1; i < DML_OP_COUNT_; i++) {
    const dml_op_info_t *info = dml_op_info((dml_op_t)i);
    CHECK(info != NULL);
    CHECK(dml_op_from_name(info->name, strlen(info->name)) == (dml_op_t)i);
    CHECK(info->min_inputs >= 0);
    CHECK(info->max_inputs < 0 || info->max_inputs >= info->min_inputs);
  }
  CHECK(dml_op_from_name("Conv", 4) == DML_OP_CONV);
  CHECK(dml_op_info(DML_OP_INVALID) == NULL);
}

static void test_eval_dims(void) {
  dml_type_t t = {DML_DTYPE_F32, 2, {{16, 0}, {784, -1}}};
  int64_t syms[1] = {3}, dims[2];
  CHECK_OK(dml_type_eval_dims(&t, syms, 1, dims));
  CHECK(dims[0] == 48 && dims[1] == 784);
  t.dims[0].sym = 1;
  CHECK_ERROR(dml_type_eval_dims(&t, syms, 1, dims), DML_STATUS_OUT_OF_RANGE, "symbol");
  int64_t big[2] = {INT64_MAX, 2};
  CHECK(dml_dims_numel(big, 2) == -1);
}

int main(void) {
  RUN(test_status_format);
  RUN(test_dtype_names);
  RUN(test_half);
  RUN(test_ops_table);
  RUN(test_eval_dims);
  return dml_test_finish();
}
