/*
 * test_infer_opset24.c — shape and dtype functions (ir/infer.c) of the
 * forms ONNX opsets 24..28 added: BitShift-28 (signed), SpaceToDepth-28
 * (mode), CumProd-26, BitCast-26, TensorScatter-24 and Attention-24's
 * nonpad_kv_seqlen; symbolic dims included.
 */
#include "infer_util.h"

static void test_shapes(void) {
  tmod_t t;
  tm_init(&t);
  /* BitShift-28: signed integers broadcast like the unsigned ones. */
  dml_ir_value_t *a = targ(&t, "a", "i8[batch,1]"), *b = targ(&t, "b", "i8[4]");
  dml_ir_value_t *ins[7] = {a, b};
  dml_ir_node_t *n = tnode(&t, DML_OP_BIT_SHIFT, "shl", 2, ins, 1);
  CHECK_OK(dml_ir_node_set_attr_string(n, "direction", "LEFT"));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "i8[batch,4]");
  /* SpaceToDepth-28 mode CRD: [N, C*b^2, H/b, W/b]; other modes refused. */
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,3,4,6]");
  n = tnode(&t, DML_OP_SPACE_TO_DEPTH, "s2d", 1, &x, 1);
  CHECK_OK(dml_ir_node_set_attr_int(n, "blocksize", 2));
  CHECK_OK(dml_ir_node_set_attr_string(n, "mode", "CRD"));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,12,2,3]");
  CHECK_OK(dml_ir_node_set_attr_string(n, "mode", "RCD"));
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "attribute 'mode' = \"RCD\" is not supported");
  /* CumProd keeps x's type. */
  dml_ir_value_t *ax = targ(&t, "ax", "i32[]");
  ins[0] = x, ins[1] = ax;
  n = tnode(&t, DML_OP_CUM_PROD, "cp", 2, ins, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,3,4,6]");
  /* BitCast: `to`'s dtype of the same size, x's shape. */
  n = tnode(&t, DML_OP_BIT_CAST, "bc", 1, &x, 1);
  CHECK_OK(dml_ir_node_set_attr_int(n, "to", 6)); /* INT32 */
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "i32[batch,3,4,6]");
  CHECK_OK(dml_ir_node_set_attr_int(n, "to", 7)); /* INT64 */
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "BitCast from f32 to i64: the element sizes differ");
  /* TensorScatter: past's type; update shorter along axis -2. */
  dml_ir_value_t *past = targ(&t, "past", "f16[batch,2,16,8]"),
                 *upd = targ(&t, "upd", "f16[batch,2,3,8]"),
                 *wi = targ(&t, "wi", "i64[batch]");
  ins[0] = past, ins[1] = upd, ins[2] = wi;
  n = tnode(&t, DML_OP_TENSOR_SCATTER, "ts", 3, ins, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f16[batch,2,16,8]");
  dml_ir_value_t *long_upd = targ(&t, "lu", "f16[batch,2,17,8]");
  ins[1] = long_upd;
  n = tnode(&t, DML_OP_TENSOR_SCATTER, "ts_long", 2, ins, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "does not fit past_cache");
  ins[1] = upd;
  n = tnode(&t, DML_OP_TENSOR_SCATTER, "ts_axis0", 2, ins, 1);
  CHECK_OK(dml_ir_node_set_attr_int(n, "axis", 0));
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "axis must not be 0 (the batch dim)");
  /* Attention-24: nonpad_kv_seqlen i64 [batch], never with past_key. */
  dml_ir_value_t *q = targ(&t, "q", "f32[2,4,3,8]"), *k = targ(&t, "k", "f32[2,2,9,8]"),
                 *v = targ(&t, "v", "f32[2,2,9,5]"), *np = targ(&t, "np", "i64[2]");
  dml_ir_value_t *insa[7] = {q, k, v, NULL, NULL, NULL, np};
  n = tnode(&t, DML_OP_ATTENTION, "att", 7, insa, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[2,4,3,5]");
  insa[4] = targ(&t, "pk", "f32[2,2,1,8]"), insa[5] = targ(&t, "pv", "f32[2,2,1,5]");
  n = tnode(&t, DML_OP_ATTENTION, "att_past", 7, insa, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "nonpad_kv_seqlen goes without past_key/past_value");
  tm_free(&t);
}

int main(void) {
  RUN(test_shapes);
  return dml_test_finish();
}
