/*
 * test_infer_opset23.c — shape and dtype functions (ir/infer.c) of the ops
 * of ONNX opsets 18..23: RMSNormalization, Attention, RotaryEmbedding,
 * Bitwise*; symbolic dims included.
 */
#include "infer_util.h"

static void test_shapes(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,4,6]"), *s = targ(&t, "s", "f32[6]");
  dml_ir_value_t *ins[6] = {x, s};
  dml_ir_node_t *n = tnode(&t, DML_OP_RMS_NORMALIZATION, "rms", 2, ins, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,4,6]");
  /* Attention, 3-D: q [B, Sq, Hq*D] = [batch,4,6] with q_num_heads 3,
   * kv_num_heads 1: K [batch,5,2], V [batch,5,4] -> Y [batch,4,3*4]. */
  dml_ir_value_t *k = targ(&t, "k", "f32[batch,5,2]"),
                 *v = targ(&t, "v", "f32[batch,5,4]");
  ins[0] = x, ins[1] = k, ins[2] = v;
  n = tnode(&t, DML_OP_ATTENTION, "att", 3, ins, 4);
  CHECK_OK(dml_ir_node_set_attr_int(n, "q_num_heads", 3));
  CHECK_OK(dml_ir_node_set_attr_int(n, "kv_num_heads", 1));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,4,12]");
  CHECK_TYPE(&t, n->outputs[1], "f32[batch,1,5,2]");
  CHECK_TYPE(&t, n->outputs[2], "f32[batch,1,5,4]");
  CHECK_TYPE(&t, n->outputs[3], "f32[batch,3,4,5]");
  /* 4-D with a cache of 7: present [B, Hkv, 7 + Skv, D]. */
  dml_ir_value_t *q4 = targ(&t, "q4", "f32[2,4,3,8]"),
                 *k4 = targ(&t, "k4", "f32[2,2,3,8]");
  dml_ir_value_t *v4 = targ(&t, "v4", "f32[2,2,3,5]"),
                 *pk = targ(&t, "pk", "f32[2,2,7,8]");
  dml_ir_value_t *pv = targ(&t, "pv", "f32[2,2,7,5]");
  dml_ir_value_t *ins4[6] = {q4, k4, v4, NULL, pk, pv};
  n = tnode(&t, DML_OP_ATTENTION, "att4", 6, ins4, 4);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[2,4,3,5]");
  CHECK_TYPE(&t, n->outputs[1], "f32[2,2,10,8]");
  CHECK_TYPE(&t, n->outputs[3], "f32[2,4,3,10]");
  /* 3-D without head counts is refused. */
  n = tnode(&t, DML_OP_ATTENTION, "att_bad", 3, ins, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "3-D Q/K/V need q_num_heads and kv_num_heads");
  /* RotaryEmbedding keeps X's type. */
  dml_ir_value_t *cc = targ(&t, "cc", "f32[16,3]"),
                 *pid = targ(&t, "pid", "i64[batch,4]");
  dml_ir_value_t *insr[4] = {x, cc, cc, pid};
  n = tnode(&t, DML_OP_ROTARY_EMBEDDING, "rope", 4, insr, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,4,6]");
  /* Bitwise: integer broadcast; floats refused. */
  dml_ir_value_t *a = targ(&t, "a", "i32[batch,1]"), *b = targ(&t, "b", "i32[3]");
  dml_ir_value_t *insb[2] = {a, b};
  n = tnode(&t, DML_OP_BITWISE_XOR, "xor", 2, insb, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "i32[batch,3]");
  n = tnode(&t, DML_OP_BITWISE_NOT, "not", 1, &x, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "input 0 must have an integer dtype, got f32");
  /* LpNormalization keeps X's type; p other than 1 or 2 is refused. */
  n = tnode(&t, DML_OP_LP_NORMALIZATION, "lpn", 1, &x, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,4,6]");
  CHECK_OK(dml_ir_node_set_attr_int(n, "p", 3));
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "p must be 1 or 2, got 3");
  /* GroupNormalization: per-channel scale/bias; num_groups divides C. */
  dml_ir_value_t *gx = targ(&t, "gx", "f32[batch,6,5]"), *gs = targ(&t, "gs", "f32[6]");
  dml_ir_value_t *insg[3] = {gx, gs, gs};
  n = tnode(&t, DML_OP_GROUP_NORMALIZATION, "gn", 3, insg, 1);
  CHECK_OK(dml_ir_node_set_attr_int(n, "num_groups", 3));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,6,5]");
  CHECK_OK(dml_ir_node_set_attr_int(n, "num_groups", 4));
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "num_groups 4 must divide the static channel count");
  tm_free(&t);
}

int main(void) {
  RUN(test_shapes);
  return dml_test_finish();
}
