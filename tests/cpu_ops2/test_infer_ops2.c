/*
 * test_infer_ops2.c — shape and dtype functions of the issue #3 ops
 * (ir/infer.c), symbolic dims included, and their user-facing errors.
 */
#include "infer_util.h"

static dml_ir_node_t *node1(tmod_t *t, dml_op_t op, dml_ir_value_t *x) {
  return tnode(t, op, "n", 1, &x, 1);
}
static dml_ir_node_t *node2(tmod_t *t, dml_op_t op, dml_ir_value_t *a,
                            dml_ir_value_t *b) {
  dml_ir_value_t *ins[2] = {a, b};
  return tnode(t, op, "n", 2, ins, 1);
}

static void test_elementwise(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,3]");
  dml_ir_value_t *h = targ(&t, "h", "f16[2]");
  dml_ir_value_t *i = targ(&t, "i", "i32[batch,3]");
  static const dml_op_t fl[] = {DML_OP_ACOS,
                                DML_OP_ACOSH,
                                DML_OP_ASIN,
                                DML_OP_ASINH,
                                DML_OP_ATAN,
                                DML_OP_ATANH,
                                DML_OP_TAN,
                                DML_OP_COSH,
                                DML_OP_SINH,
                                DML_OP_CELU,
                                DML_OP_THRESHOLDED_RELU};
  for (size_t k = 0; k < sizeof(fl) / sizeof(fl[0]); k++) {
    dml_ir_node_t *n = node1(&t, fl[k], x);
    INFER_OK(&t, n);
    CHECK_TYPE(&t, n->outputs[0], "f32[batch,3]");
    n = node1(&t, fl[k], h);
    INFER_OK(&t, n);
    CHECK_TYPE(&t, n->outputs[0], "f16[2]");
    n = node1(&t, fl[k], i);
    CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
                "input 0 must have a float dtype, got i32");
  }
  dml_ir_node_t *n = node1(&t, DML_OP_SHRINK, i);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "i32[batch,3]");
  n = node1(&t, DML_OP_IS_INF, x);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "bool[batch,3]");
  n = node1(&t, DML_OP_IS_NAN, h);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "bool[2]");
  n = node1(&t, DML_OP_IS_NAN, i);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT, "float dtype");
  tm_free(&t);
}

static void test_bitshift_castlike(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *a = targ(&t, "a", "u8[batch,1]");
  dml_ir_value_t *b = targ(&t, "b", "u8[4]");
  dml_ir_node_t *n = node2(&t, DML_OP_BIT_SHIFT, a, b);
  CHECK_OK(dml_ir_node_set_attr_string(n, "direction", "LEFT"));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "u8[batch,4]");
  n = node2(&t, DML_OP_BIT_SHIFT, a, b);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "attribute 'direction' must be \"LEFT\" or \"RIGHT\", got none");
  CHECK_OK(dml_ir_node_set_attr_string(n, "direction", "UP"));
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT, "got UP");
  dml_ir_value_t *s = targ(&t, "s", "f32[4]");
  n = node2(&t, DML_OP_BIT_SHIFT, s, s);
  CHECK_OK(dml_ir_node_set_attr_string(n, "direction", "RIGHT"));
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "input 0 must have an integer dtype, got f32"); /* signed: opset 28 */
  dml_ir_value_t *u16 = targ(&t, "u16", "u16[4]");
  n = node2(&t, DML_OP_BIT_SHIFT, b, u16);
  CHECK_OK(dml_ir_node_set_attr_string(n, "direction", "RIGHT"));
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "inputs 0 and 1 must have the same dtype");
  /* CastLike: x's shape, the dtype of input 1 */
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,3]");
  dml_ir_value_t *like = targ(&t, "like", "i64[]");
  n = node2(&t, DML_OP_CAST_LIKE, x, like);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "i64[batch,3]");
  tm_free(&t);
}

static void test_hardmax_reduce(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,3,4]");
  dml_ir_node_t *n = node1(&t, DML_OP_HARDMAX, x);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,3,4]");
  CHECK_OK(dml_ir_node_set_attr_int(n, "axis", 3));
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "axis 3 is out of range for rank 3");
  static const dml_op_t red[] = {DML_OP_REDUCE_L1, DML_OP_REDUCE_L2,
                                 DML_OP_REDUCE_LOG_SUM, DML_OP_REDUCE_LOG_SUM_EXP,
                                 DML_OP_REDUCE_SUM_SQUARE};
  int64_t ax[2] = {-1, 1};
  for (size_t k = 0; k < sizeof(red) / sizeof(red[0]); k++) {
    n = node2(&t, red[k], x, ti64(&t, ax, 2, 0));
    INFER_OK(&t, n);
    CHECK_TYPE(&t, n->outputs[0], "f32[batch,1,1]");
    CHECK_OK(dml_ir_node_set_attr_int(n, "keepdims", 0));
    INFER_OK(&t, n);
    CHECK_TYPE(&t, n->outputs[0], "f32[batch]");
    n = node1(&t, red[k], x);
    INFER_OK(&t, n);
    CHECK_TYPE(&t, n->outputs[0], "f32[1,1,1]");
  }
  tm_free(&t);
}

static void test_cumsum_trilu_eyelike(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,3]");
  int64_t one = 1, two = 2;
  dml_ir_node_t *n = node2(&t, DML_OP_CUM_SUM, x, ti64(&t, &one, 1, 1));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,3]");
  n = node2(&t, DML_OP_CUM_SUM, x, ti64(&t, &two, 1, 1));
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "axis 2 is out of range for rank 2");
  dml_ir_value_t *ax2 = targ(&t, "ax2", "i64[2]");
  n = node2(&t, DML_OP_CUM_SUM, x, ax2);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "axis (input 1) must be an integer scalar, got i64[2]");
  dml_ir_value_t *axr = targ(&t, "axr", "i32[]");
  n = node2(&t, DML_OP_CUM_SUM, x, axr); /* unknown at compile time: fine */
  INFER_OK(&t, n);
  /* Trilu */
  n = node1(&t, DML_OP_TRILU, x);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,3]");
  n = node2(&t, DML_OP_TRILU, x, ti64(&t, &one, 1, 1));
  INFER_OK(&t, n);
  dml_ir_value_t *v = targ(&t, "v", "f32[3]");
  n = node1(&t, DML_OP_TRILU, v);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "input 0 must have rank >= 2, got f32[3]");
  /* EyeLike: dtype default the input's, else the ONNX code */
  n = node1(&t, DML_OP_EYE_LIKE, x);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,3]");
  CHECK_OK(dml_ir_node_set_attr_int(n, "dtype", 7)); /* INT64 */
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "i64[batch,3]");
  CHECK_OK(dml_ir_node_set_attr_int(n, "dtype", 8)); /* STRING */
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_UNIMPLEMENTED,
              "attribute 'dtype' = 8 is not a supported ONNX dtype code");
  dml_ir_value_t *x3 = targ(&t, "x3", "f32[2,3,4]");
  n = node1(&t, DML_OP_EYE_LIKE, x3);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "input 0 must have rank 2");
  tm_free(&t);
}

static void test_lrn_mvn(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,8,5,5]");
  dml_ir_node_t *n = node1(&t, DML_OP_LRN, x);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "attribute 'size' is required and must be >= 1, got 0");
  CHECK_OK(dml_ir_node_set_attr_int(n, "size", 3));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,8,5,5]");
  n = node1(&t, DML_OP_MEAN_VARIANCE_NORMALIZATION, x);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,8,5,5]");
  dml_ir_value_t *x3 = targ(&t, "x3", "f32[2,3,4]");
  n = node1(&t, DML_OP_MEAN_VARIANCE_NORMALIZATION, x3);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "axis 3 is out of range for rank 3");
  int64_t ax[2] = {1, 2};
  CHECK_OK(dml_ir_node_set_attr_ints(n, "axes", ax, 2));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[2,3,4]");
  tm_free(&t);
}

int main(void) {
  RUN(test_elementwise);
  RUN(test_bitshift_castlike);
  RUN(test_hardmax_reduce);
  RUN(test_cumsum_trilu_eyelike);
  RUN(test_lrn_mvn);
  return dml_test_finish();
}
