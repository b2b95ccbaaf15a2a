/*
 * test_infer_seq.c — shape and dtype functions of RNN/GRU/LSTM, the loss
 * ops and the quantization ops (ir/infer.c), with symbolic batch dims.
 */
#include "infer_util.h"

static void test_infer_lstm(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *in[8] = {
      targ(&t, "x", "f32[7,batch,3]"),  tw(&t, "w", "f32[2,16,3]"),
      tw(&t, "r", "f32[2,16,4]"),       tw(&t, "b", "f32[2,32]"),
      targ(&t, "sl", "i32[batch]"),     targ(&t, "h0", "f32[2,batch,4]"),
      targ(&t, "c0", "f32[2,batch,4]"), tw(&t, "p", "f32[2,12]")};
  dml_ir_node_t *n = tnode(&t, DML_OP_LSTM, "lstm", 8, in, 3);
  CHECK_OK(dml_ir_node_set_attr_string(n, "direction", "bidirectional"));
  CHECK_OK(dml_ir_node_set_attr_int(n, "hidden_size", 4));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[7,2,batch,4]");
  CHECK_TYPE(&t, n->outputs[1], "f32[2,batch,4]");
  CHECK_TYPE(&t, n->outputs[2], "f32[2,batch,4]");
  /* hidden_size disagreeing with R */
  CHECK_OK(dml_ir_node_set_attr_int(n, "hidden_size", 5));
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT, "hidden_size 5");
  tm_free(&t);
}

static void test_infer_gru_rnn_layout1(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *in[3] = {targ(&t, "x", "f64[batch,5,3]"), tw(&t, "w", "f64[1,6,3]"),
                           tw(&t, "r", "f64[1,6,2]")};
  dml_ir_node_t *g = tnode(&t, DML_OP_GRU, "gru", 3, in, 2);
  CHECK_OK(dml_ir_node_set_attr_int(g, "layout", 1));
  INFER_OK(&t, g);
  CHECK_TYPE(&t, g->outputs[0], "f64[batch,5,1,2]");
  CHECK_TYPE(&t, g->outputs[1], "f64[batch,1,2]");
  dml_ir_value_t *rin[3] = {targ(&t, "x2", "f32[5,batch,3]"), tw(&t, "w2", "f32[1,6,3]"),
                            tw(&t, "r2", "f32[1,6,6]")};
  dml_ir_node_t *r = tnode(&t, DML_OP_RNN, "rnn", 3, rin, 1);
  CHECK_OK(dml_ir_node_set_attr_string(r, "direction", "reverse"));
  INFER_OK(&t, r);
  CHECK_TYPE(&t, r->outputs[0], "f32[5,1,batch,6]");
  CHECK_OK(dml_ir_node_set_attr_string(r, "direction", "up"));
  CHECK_ERROR(dml_ir_infer_node(t.m, r), DML_STATUS_INVALID_ARGUMENT,
              "direction \"up\" is not forward, reverse or bidirectional");
  tm_free(&t);
}

static void test_infer_losses(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *in[3] = {targ(&t, "x", "f32[batch,5,2,3]"),
                           targ(&t, "t", "i64[batch,2,3]"), tw(&t, "w", "f32[5]")};
  dml_ir_node_t *n = tnode(&t, DML_OP_NEGATIVE_LOG_LIKELIHOOD_LOSS, "nll", 3, in, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[]");
  CHECK_OK(dml_ir_node_set_attr_string(n, "reduction", "none"));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,2,3]");
  dml_ir_node_t *s = tnode(&t, DML_OP_SOFTMAX_CROSS_ENTROPY_LOSS, "sce", 2, in, 2);
  INFER_OK(&t, s);
  CHECK_TYPE(&t, s->outputs[0], "f32[]");
  CHECK_TYPE(&t, s->outputs[1], "f32[batch,5,2,3]");
  dml_ir_value_t *bad[2] = {in[0], targ(&t, "t2", "i64[batch,3,2]")};
  dml_ir_node_t *b = tnode(&t, DML_OP_SOFTMAX_CROSS_ENTROPY_LOSS, "sce2", 2, bad, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, b), DML_STATUS_INVALID_ARGUMENT,
              "must be input f32[batch,5,2,3] without dim 1");
  tm_free(&t);
}

static void test_infer_quant(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *q[3] = {targ(&t, "x", "f32[batch,3]"), tw(&t, "s", "f32[3]"),
                          tw(&t, "z", "i8[3]")};
  dml_ir_node_t *qn = tnode(&t, DML_OP_QUANTIZE_LINEAR, "q", 3, q, 1);
  INFER_OK(&t, qn);
  CHECK_TYPE(&t, qn->outputs[0], "i8[batch,3]");
  dml_ir_node_t *qu = tnode(&t, DML_OP_QUANTIZE_LINEAR, "qu", 2, q, 1);
  INFER_OK(&t, qu);
  CHECK_TYPE(&t, qu->outputs[0], "u8[batch,3]");
  dml_ir_value_t *d[3] = {qn->outputs[0], q[1], q[2]};
  dml_ir_node_t *dn = tnode(&t, DML_OP_DEQUANTIZE_LINEAR, "dq", 3, d, 1);
  INFER_OK(&t, dn);
  CHECK_TYPE(&t, dn->outputs[0], "f32[batch,3]");
  dml_ir_node_t *dy = tnode(&t, DML_OP_DYNAMIC_QUANTIZE_LINEAR, "dyn", 1, q, 3);
  INFER_OK(&t, dy);
  CHECK_TYPE(&t, dy->outputs[0], "u8[batch,3]");
  CHECK_TYPE(&t, dy->outputs[1], "f32[]");
  CHECK_TYPE(&t, dy->outputs[2], "u8[]");
  dml_ir_value_t *mm[2] = {targ(&t, "a", "u8[batch,4,3]"), tw(&t, "b", "i8[3,2]")};
  dml_ir_node_t *mn = tnode(&t, DML_OP_MAT_MUL_INTEGER, "mmi", 2, mm, 1);
  INFER_OK(&t, mn);
  CHECK_TYPE(&t, mn->outputs[0], "i32[batch,4,2]");
  dml_ir_value_t *cv[2] = {targ(&t, "cx", "u8[batch,2,5,5]"),
                           tw(&t, "cw", "u8[4,2,3,3]")};
  dml_ir_node_t *cn = tnode(&t, DML_OP_CONV_INTEGER, "ci", 2, cv, 1);
  int64_t pads[4] = {1, 1, 1, 1};
  CHECK_OK(dml_ir_node_set_attr_ints(cn, "pads", pads, 4));
  INFER_OK(&t, cn);
  CHECK_TYPE(&t, cn->outputs[0], "i32[batch,4,5,5]");
  dml_ir_value_t *ql[8] = {mm[0],
                           tw(&t, "as", "f32[]"),
                           tw(&t, "az", "u8[]"),
                           tw(&t, "qb", "u8[3,2]"),
                           tw(&t, "bs", "f32[]"),
                           tw(&t, "bz", "u8[]"),
                           tw(&t, "ys", "f32[]"),
                           tw(&t, "yz", "i8[]")};
  dml_ir_node_t *qm = tnode(&t, DML_OP_QLINEAR_MAT_MUL, "qmm", 8, ql, 1);
  INFER_OK(&t, qm);
  CHECK_TYPE(&t, qm->outputs[0], "i8[batch,4,2]");
  dml_ir_value_t *badq[2] = {mm[0], q[1]};
  dml_ir_node_t *bq = tnode(&t, DML_OP_QUANTIZE_LINEAR, "bq", 2, badq, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, bq), DML_STATUS_INVALID_ARGUMENT,
              "x must be f32 or i32, got u8");
  tm_free(&t);
}

static void test_infer_signal(void) {
  tmod_t t;
  tm_init(&t);
  int64_t n = 10, dl = 16, nmel = 8;
  dml_ir_value_t *sz = ti64(&t, &n, 1, 1);
  dml_ir_node_t *w = tnode(&t, DML_OP_HANN_WINDOW, "hann", 1, &sz, 1);
  CHECK_OK(dml_ir_node_set_attr_int(w, "output_datatype", 11)); /* DOUBLE */
  INFER_OK(&t, w);
  CHECK_TYPE(&t, w->outputs[0], "f64[10]");
  dml_ir_value_t *d[2] = {targ(&t, "x", "f32[batch,10,1]"), ti64(&t, &dl, 1, 1)};
  dml_ir_node_t *dft = tnode(&t, DML_OP_DFT, "dft", 2, d, 1);
  CHECK_OK(dml_ir_node_set_attr_int(dft, "onesided", 1));
  INFER_OK(&t, dft);
  CHECK_TYPE(&t, dft->outputs[0], "f32[batch,9,2]");
  dml_ir_node_t *dft2 = tnode(&t, DML_OP_DFT, "dft2", 1, d, 1);
  INFER_OK(&t, dft2);
  CHECK_TYPE(&t, dft2->outputs[0], "f32[batch,10,2]");
  dml_ir_value_t *st[3] = {d[0], ti64(&t, (const int64_t[]){2}, 1, 1),
                           tw(&t, "win", "f32[4]")};
  dml_ir_node_t *stft = tnode(&t, DML_OP_STFT, "stft", 3, st, 1);
  INFER_OK(&t, stft);
  CHECK_TYPE(&t, stft->outputs[0], "f32[batch,4,3,2]");
  dml_ir_value_t *mi[5] = {ti64(&t, &nmel, 1, 1), ti64(&t, &dl, 1, 1),
                           ti64(&t, (const int64_t[]){8000}, 1, 1), tw(&t, "lo", "f32[]"),
                           tw(&t, "hi", "f32[]")};
  dml_ir_node_t *mel = tnode(&t, DML_OP_MEL_WEIGHT_MATRIX, "mel", 5, mi, 1);
  INFER_OK(&t, mel);
  CHECK_TYPE(&t, mel->outputs[0], "f32[9,8]");
  /* a window size that is not a constant */
  dml_ir_value_t *dyn = targ(&t, "n", "i64[]");
  dml_ir_node_t *w2 = tnode(&t, DML_OP_BLACKMAN_WINDOW, "bw", 1, &dyn, 1);
  INFER_OK(&t, w2); /* the size at run time */
  CHECK_TYPE(&t, w2->outputs[0], "f32[bw.d0]");
  tm_free(&t);
}

int main(void) {
  RUN(test_infer_lstm);
  RUN(test_infer_gru_rnn_layout1);
  RUN(test_infer_losses);
  RUN(test_infer_quant);
  RUN(test_infer_signal);
  return dml_test_finish();
}
