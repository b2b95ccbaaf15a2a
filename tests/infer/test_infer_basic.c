/* Shape inference of the basic ops: elementwise, Gemm, MatMul, Conv,
 * pooling, normalization, Flatten, Dropout, Cast; and the shape-infer pass. */
#include "infer_util.h"

static void test_unary_and_identity(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,16]");
  dml_ir_node_t *r = tnode(&t, DML_OP_RELU, "relu", 1, &x, 1);
  dml_ir_node_t *id = tnode(&t, DML_OP_IDENTITY, "id", 1, &r->outputs[0], 1);
  INFER_OK(&t, r);
  INFER_OK(&t, id);
  CHECK_TYPE(&t, r->outputs[0], "f32[batch,16]");
  CHECK_TYPE(&t, id->outputs[0], "f32[batch,16]");
  /* Sigmoid of an integer tensor is ill-typed. */
  dml_ir_value_t *xi = targ(&t, "xi", "i64[3]");
  dml_ir_node_t *s = tnode(&t, DML_OP_SIGMOID, "sig", 1, &xi, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, s), DML_STATUS_INVALID_ARGUMENT,
              "input 0 must have a float dtype, got i64");
  dml_ir_node_t *nt = tnode(&t, DML_OP_NOT, "not", 1, &xi, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, nt), DML_STATUS_INVALID_ARGUMENT, "must have bool");
  tm_free(&t);
}

static void test_cast(void) {
  static const struct {
    int64_t code;
    const char *want;
  } cases[] = {{1, "f32[batch,4]"},  {2, "u8[batch,4]"},   {3, "i8[batch,4]"},
               {4, "u16[batch,4]"},  {5, "i16[batch,4]"},  {6, "i32[batch,4]"},
               {7, "i64[batch,4]"},  {9, "bool[batch,4]"}, {10, "f16[batch,4]"},
               {11, "f64[batch,4]"}, {12, "u32[batch,4]"}, {13, "u64[batch,4]"},
               {16, "bf16[batch,4]"}};
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,4]");
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    dml_ir_node_t *n = tnode(&t, DML_OP_CAST, "cast", 1, &x, 1);
    CHECK_OK(dml_ir_node_set_attr_int(n, "to", cases[i].code));
    INFER_OK(&t, n);
    CHECK_TYPE(&t, n->outputs[0], cases[i].want);
  }
  /* 8 (STRING) is a dmlc dtype (string tensors, CPU only); 14 (COMPLEX64) not */
  dml_ir_node_t *str = tnode(&t, DML_OP_CAST, "cast8", 1, &x, 1);
  CHECK_OK(dml_ir_node_set_attr_int(str, "to", 8));
  INFER_OK(&t, str);
  CHECK_TYPE(&t, str->outputs[0], "str[batch,4]");
  dml_ir_node_t *bad = tnode(&t, DML_OP_CAST, "cast14", 1, &x, 1);
  CHECK_OK(dml_ir_node_set_attr_int(bad, "to", 14));
  CHECK_ERROR(dml_ir_infer_node(t.m, bad), DML_STATUS_UNIMPLEMENTED, "ONNX dtype code");
  dml_ir_node_t *none = tnode(&t, DML_OP_CAST, "castnone", 1, &x, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, none), DML_STATUS_INVALID_ARGUMENT,
              "attribute 'to' is required");
  dml_ir_node_t *wrong = tnode(&t, DML_OP_CAST, "castf", 1, &x, 1);
  CHECK_OK(dml_ir_node_set_attr_float(wrong, "to", 1.0));
  CHECK_ERROR(dml_ir_infer_node(t.m, wrong), DML_STATUS_INVALID_ARGUMENT,
              "must be an int (ONNX dtype code), got float");
  tm_free(&t);
}

static void test_broadcast(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *a = targ(&t, "a", "f32[batch,1,4]");
  dml_ir_value_t *b = targ(&t, "b", "f32[3,1]");
  dml_ir_value_t *ins[2] = {a, b};
  dml_ir_node_t *add = tnode(&t, DML_OP_ADD, "add", 2, ins, 1);
  INFER_OK(&t, add);
  CHECK_TYPE(&t, add->outputs[0], "f32[batch,3,4]");
  /* symbolic vs static 1 gives the symbolic dim, either order */
  dml_ir_value_t *one = targ(&t, "one", "f32[1,4]");
  dml_ir_value_t *xs = targ(&t, "xs", "f32[batch,4]");
  dml_ir_value_t *i2[2] = {one, xs};
  dml_ir_node_t *mul = tnode(&t, DML_OP_MUL, "mul", 2, i2, 1);
  INFER_OK(&t, mul);
  CHECK_TYPE(&t, mul->outputs[0], "f32[batch,4]");
  /* comparison gives bool */
  dml_ir_node_t *lt = tnode(&t, DML_OP_LESS, "lt", 2, i2, 1);
  INFER_OK(&t, lt);
  CHECK_TYPE(&t, lt->outputs[0], "bool[batch,4]");
  /* static mismatch */
  dml_ir_value_t *c = targ(&t, "c", "f32[5,4]");
  dml_ir_value_t *i3[2] = {xs, c};
  dml_ir_node_t *bad = tnode(&t, DML_OP_ADD, "bad_add", 2, i3, 1);
  CHECK_ERROR(
      dml_ir_infer_node(t.m, bad), DML_STATUS_INVALID_ARGUMENT,
      "cannot broadcast f32[batch,4] and f32[5,4]: dim 0 is batch vs 5 (a symbolic");
  CHECK_ERROR(dml_ir_infer_node(t.m, bad), DML_STATUS_INVALID_ARGUMENT,
              "node 'bad_add' (Add)");
  CHECK_ERROR(dml_ir_infer_node(t.m, bad), DML_STATUS_INVALID_ARGUMENT,
              "input types: f32[batch,4], f32[5,4]");
  dml_ir_value_t *d = targ(&t, "d", "f32[3,4]");
  dml_ir_value_t *e = targ(&t, "e", "f32[2,4]");
  dml_ir_value_t *i4[2] = {d, e};
  dml_ir_node_t *bad2 = tnode(&t, DML_OP_SUB, "sub", 2, i4, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, bad2), DML_STATUS_INVALID_ARGUMENT,
              "cannot broadcast f32[3,4] and f32[2,4]: dim 0 is 3 vs 2");
  /* two different symbols */
  int32_t seq;
  CHECK_OK(dml_ir_module_add_symbol(t.m, "seq", 128, &seq));
  dml_ir_value_t *p = targ(&t, "p", "f32[batch]");
  dml_ir_value_t *q = targ(&t, "q", "f32[seq]");
  dml_ir_value_t *i5[2] = {p, q};
  dml_ir_node_t *bad3 = tnode(&t, DML_OP_ADD, "add_syms", 2, i5, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, bad3), DML_STATUS_INVALID_ARGUMENT,
              "dim 0 is batch vs seq");
  /* dtype mismatch */
  dml_ir_value_t *li = targ(&t, "li", "i64[batch,4]");
  dml_ir_value_t *i6[2] = {xs, li};
  dml_ir_node_t *bad4 = tnode(&t, DML_OP_ADD, "add_dt", 2, i6, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, bad4), DML_STATUS_INVALID_ARGUMENT,
              "inputs 0 and 1 must have the same dtype, got f32 and i64");
  /* And of non-bool */
  dml_ir_node_t *bad5 = tnode(&t, DML_OP_AND, "and", 2, i2, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, bad5), DML_STATUS_INVALID_ARGUMENT,
              "must have bool");
  /* Where: 3-way */
  dml_ir_value_t *cond = targ(&t, "cond", "bool[batch,1]");
  dml_ir_value_t *wx = targ(&t, "wx", "f32[1,4]");
  dml_ir_value_t *wy = targ(&t, "wy", "f32[]");
  dml_ir_value_t *i7[3] = {cond, wx, wy};
  dml_ir_node_t *wh = tnode(&t, DML_OP_WHERE, "where", 3, i7, 1);
  INFER_OK(&t, wh);
  CHECK_TYPE(&t, wh->outputs[0], "f32[batch,4]");
  /* Sum of three */
  dml_ir_value_t *i8[3] = {xs, one, wy};
  dml_ir_node_t *sum = tnode(&t, DML_OP_SUM, "sum", 3, i8, 1);
  INFER_OK(&t, sum);
  CHECK_TYPE(&t, sum->outputs[0], "f32[batch,4]");
  tm_free(&t);
}

static void test_gemm_matmul(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,784]");
  dml_ir_value_t *w = tw(&t, "fc.weight", "f32[256,784]");
  dml_ir_value_t *b = tw(&t, "fc.bias", "f32[256]");
  dml_ir_value_t *ins[3] = {x, w, b};
  dml_ir_node_t *g = tnode(&t, DML_OP_GEMM, "fc", 3, ins, 1);
  CHECK_OK(dml_ir_node_set_attr_int(g, "transB", 1));
  INFER_OK(&t, g);
  CHECK_TYPE(&t, g->outputs[0], "f32[batch,256]");
  dml_ir_node_t *g2 = tnode(&t, DML_OP_GEMM, "fc_not", 3, ins, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, g2), DML_STATUS_INVALID_ARGUMENT,
              "Gemm inner dims differ");
  dml_ir_value_t *bad_bias = tw(&t, "bb", "f32[10]");
  dml_ir_value_t *ins3[3] = {x, w, bad_bias};
  dml_ir_node_t *g3 = tnode(&t, DML_OP_GEMM, "fc_bias", 3, ins3, 1);
  CHECK_OK(dml_ir_node_set_attr_int(g3, "transB", 1));
  CHECK_ERROR(dml_ir_infer_node(t.m, g3), DML_STATUS_INVALID_ARGUMENT,
              "cannot broadcast");

  /* MatMul: batched broadcast and 1-D promotion */
  dml_ir_value_t *a = targ(&t, "a", "f32[batch,1,3,4]");
  dml_ir_value_t *bm = targ(&t, "bm", "f32[5,4,6]");
  dml_ir_value_t *mi[2] = {a, bm};
  dml_ir_node_t *mm = tnode(&t, DML_OP_MATMUL, "mm", 2, mi, 1);
  INFER_OK(&t, mm);
  CHECK_TYPE(&t, mm->outputs[0], "f32[batch,5,3,6]");
  dml_ir_value_t *v = targ(&t, "v", "f32[4]");
  dml_ir_value_t *mv[2] = {a, v};
  dml_ir_node_t *mm2 = tnode(&t, DML_OP_MATMUL, "mv", 2, mv, 1);
  INFER_OK(&t, mm2);
  CHECK_TYPE(&t, mm2->outputs[0], "f32[batch,1,3]");
  dml_ir_value_t *v3 = targ(&t, "v3", "f32[3]");
  dml_ir_value_t *vm[2] = {v3, a};
  dml_ir_node_t *mm3 = tnode(&t, DML_OP_MATMUL, "vm", 2, vm, 1);
  INFER_OK(&t, mm3);
  CHECK_TYPE(&t, mm3->outputs[0], "f32[batch,1,4]");
  dml_ir_value_t *vv[2] = {v, v};
  dml_ir_node_t *dot = tnode(&t, DML_OP_MATMUL, "dot", 2, vv, 1);
  INFER_OK(&t, dot);
  CHECK_TYPE(&t, dot->outputs[0], "f32[]");
  dml_ir_value_t *bad[2] = {a, a};
  dml_ir_node_t *mm4 = tnode(&t, DML_OP_MATMUL, "mm_bad", 2, bad, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, mm4), DML_STATUS_INVALID_ARGUMENT,
              "MatMul inner dims differ: 4 of f32[batch,1,3,4] vs 3 of");
  tm_free(&t);
}

static dml_ir_node_t *conv(tmod_t *t, dml_ir_value_t *x, dml_ir_value_t *w,
                           const char *name, const int64_t *strides, const int64_t *pads,
                           const int64_t *dilations) {
  dml_ir_value_t *ins[2] = {x, w};
  dml_ir_node_t *n = tnode(t, DML_OP_CONV, name, 2, ins, 1);
  if (strides) CHECK_OK(dml_ir_node_set_attr_ints(n, "strides", strides, 2));
  if (pads) CHECK_OK(dml_ir_node_set_attr_ints(n, "pads", pads, 4));
  if (dilations) CHECK_OK(dml_ir_node_set_attr_ints(n, "dilations", dilations, 2));
  return n;
}

static void test_conv(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,3,32,32]");
  dml_ir_value_t *w = tw(&t, "w", "f32[16,3,3,3]");
  dml_ir_value_t *b = tw(&t, "b", "f32[16]");
  int64_t s2[2] = {2, 2}, p1[4] = {1, 1, 1, 1}, d2[2] = {2, 2}, pa[4] = {0, 1, 2, 3};
  dml_ir_node_t *n = conv(&t, x, w, "c0", NULL, NULL, NULL);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,16,30,30]");
  n = conv(&t, x, w, "c1", s2, p1, NULL);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,16,16,16]");
  n = conv(&t, x, w, "c2", NULL, p1, d2);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,16,30,30]");
  /* asymmetric pads: H gets 0+2, W gets 1+3 */
  n = conv(&t, x, w, "c3", s2, pa, NULL);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,16,16,17]");
  /* with bias */
  dml_ir_value_t *ins[3] = {x, w, b};
  n = tnode(&t, DML_OP_CONV, "cb", 3, ins, 1);
  CHECK_OK(dml_ir_node_set_attr_string(n, "auto_pad", "SAME_UPPER"));
  CHECK_OK(dml_ir_node_set_attr_ints(n, "strides", s2, 2));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,16,16,16]");
  n = tnode(&t, DML_OP_CONV, "cv", 3, ins, 1);
  CHECK_OK(dml_ir_node_set_attr_string(n, "auto_pad", "VALID"));
  CHECK_OK(dml_ir_node_set_attr_ints(n, "strides", s2, 2));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,16,15,15]");
  /* group conv: depthwise */
  dml_ir_value_t *xd = targ(&t, "xd", "f32[2,8,10,10]");
  dml_ir_value_t *wd = tw(&t, "wd", "f32[8,1,3,3]");
  dml_ir_value_t *gi[2] = {xd, wd};
  n = tnode(&t, DML_OP_CONV, "dw", 2, gi, 1);
  CHECK_OK(dml_ir_node_set_attr_int(n, "group", 8));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[2,8,8,8]");
  /* channel mismatch */
  n = conv(&t, xd, w, "cbad", NULL, NULL, NULL);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "input channels of f32[2,8,10,10] do not match the weights f32[16,3,3,3]");
  /* kernel larger than input */
  dml_ir_value_t *xs = targ(&t, "xs", "f32[1,3,2,2]");
  n = conv(&t, xs, w, "csmall", NULL, NULL, NULL);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "exceeds the padded input extent 2");
  /* symbolic spatial dims: a derived symbol (floor((batch-3)/1)+1) */
  dml_ir_value_t *xsym = targ(&t, "xsym", "f32[1,3,batch,8]");
  n = conv(&t, xsym, w, "csym", NULL, NULL, NULL);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[1,16,batch-2,6]");
  /* bad attributes never crash */
  n = conv(&t, x, w, "cattr", NULL, NULL, NULL);
  CHECK_OK(dml_ir_node_set_attr_ints(n, "strides", s2, 1));
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "attribute 'strides' must have 2 values, got 1");
  int64_t z[2] = {0, 1};
  CHECK_OK(dml_ir_node_set_attr_ints(n, "strides", z, 2));
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT, "must be >= 1");
  CHECK_OK(dml_ir_node_set_attr_string(n, "strides", "x"));
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "must be a list of ints, got string");
  int64_t huge[2] = {INT64_MAX, INT64_MAX};
  CHECK_OK(dml_ir_node_set_attr_ints(n, "strides", s2, 2));
  CHECK_OK(dml_ir_node_set_attr_ints(n, "dilations", huge, 2));
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT, "overflows");
  int64_t hp[4] = {INT64_MAX, 0, 0, 0};
  dml_ir_node_remove_attr(n, "dilations");
  CHECK_OK(dml_ir_node_set_attr_ints(n, "pads", hp, 4));
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT, "overflows");
  tm_free(&t);
}

static void test_conv_transpose(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,16,7,7]");
  dml_ir_value_t *w = tw(&t, "w", "f32[16,8,3,3]");
  dml_ir_value_t *ins[2] = {x, w};
  int64_t s2[2] = {2, 2}, p1[4] = {1, 1, 1, 1}, op1[2] = {1, 1}, os[2] = {20, 21};
  dml_ir_node_t *n = tnode(&t, DML_OP_CONV_TRANSPOSE, "ct", 2, ins, 1);
  CHECK_OK(dml_ir_node_set_attr_ints(n, "strides", s2, 2));
  CHECK_OK(dml_ir_node_set_attr_ints(n, "pads", p1, 4));
  CHECK_OK(dml_ir_node_set_attr_ints(n, "output_padding", op1, 2));
  INFER_OK(&t, n); /* 2*(7-1) + 1 + 3 - 2 = 14 */
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,8,14,14]");
  n = tnode(&t, DML_OP_CONV_TRANSPOSE, "ct_os", 2, ins, 1);
  CHECK_OK(dml_ir_node_set_attr_ints(n, "strides", s2, 2));
  CHECK_OK(dml_ir_node_set_attr_ints(n, "output_shape", os, 2));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,8,20,21]");
  n = tnode(&t, DML_OP_CONV_TRANSPOSE, "ct_same", 2, ins, 1);
  CHECK_OK(dml_ir_node_set_attr_ints(n, "strides", s2, 2));
  CHECK_OK(dml_ir_node_set_attr_string(n, "auto_pad", "SAME_LOWER"));
  CHECK_OK(dml_ir_node_set_attr_int(n, "group", 2)); /* W [C, M/group, k, k] */
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,16,14,14]");
  dml_ir_value_t *x8 = targ(&t, "x8", "f32[batch,8,7,7]");
  dml_ir_value_t *i8[2] = {x8, w};
  n = tnode(&t, DML_OP_CONV_TRANSPOSE, "ct_bad", 2, i8, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "input channels of f32[batch,8,7,7] do not match the weights");
  tm_free(&t);
}

static dml_ir_node_t *pool(tmod_t *t, dml_op_t op, dml_ir_value_t *x, const char *name,
                           int64_t k, int64_t s, int64_t p, int64_t d, int ceil_mode,
                           uint32_t nout) {
  dml_ir_node_t *n = tnode(t, op, name, 1, &x, nout);
  int64_t kk[2] = {k, k}, ss[2] = {s, s}, pp[4] = {p, p, p, p}, dd[2] = {d, d};
  CHECK_OK(dml_ir_node_set_attr_ints(n, "kernel_shape", kk, 2));
  CHECK_OK(dml_ir_node_set_attr_ints(n, "strides", ss, 2));
  CHECK_OK(dml_ir_node_set_attr_ints(n, "pads", pp, 4));
  if (d != 1) CHECK_OK(dml_ir_node_set_attr_ints(n, "dilations", dd, 2));
  if (ceil_mode) CHECK_OK(dml_ir_node_set_attr_int(n, "ceil_mode", 1));
  return n;
}

static void test_pool(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,16,28,28]");
  dml_ir_node_t *n = pool(&t, DML_OP_MAX_POOL, x, "mp", 2, 2, 0, 1, 0, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,16,14,14]");
  n = pool(&t, DML_OP_MAX_POOL, x, "mp_idx", 3, 2, 1, 1, 0, 2);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,16,14,14]");
  CHECK_TYPE(&t, n->outputs[1], "i64[batch,16,14,14]");
  /* floor vs ceil: (28 - 3)/2 + 1 = 13 (floor), 14 (ceil) */
  n = pool(&t, DML_OP_MAX_POOL, x, "mp_floor", 3, 2, 0, 1, 0, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,16,13,13]");
  n = pool(&t, DML_OP_MAX_POOL, x, "mp_ceil", 3, 2, 0, 1, 1, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,16,14,14]");
  /* ceil_mode drops a window starting in the padding: in 5, k 2, s 2, p 1:
   * (5+2-2)/2 = 2.5 -> ceil 3 +1 = 4, but window 3 starts at 6 >= 5+1 -> 3 */
  dml_ir_value_t *x5 = targ(&t, "x5", "f32[1,1,5,5]");
  n = pool(&t, DML_OP_MAX_POOL, x5, "mp_drop", 2, 2, 1, 1, 1, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[1,1,3,3]");
  /* dilation: eff kernel (3-1)*2+1 = 5 -> (28-5)/1+1 = 24 */
  n = pool(&t, DML_OP_MAX_POOL, x, "mp_dil", 3, 1, 0, 2, 0, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,16,24,24]");
  n = pool(&t, DML_OP_AVERAGE_POOL, x, "ap", 3, 3, 1, 1, 0, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,16,10,10]");
  n = tnode(&t, DML_OP_MAX_POOL, "mp_nok", 1, &x, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "attribute 'kernel_shape' is required");
  n = pool(&t, DML_OP_MAX_POOL, x, "mp_ap", 3, 2, 0, 1, 0, 1);
  CHECK_OK(dml_ir_node_set_attr_string(n, "auto_pad", "SAME_UPPER"));
  dml_ir_node_remove_attr(n, "pads");
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,16,14,14]");
  CHECK_OK(dml_ir_node_set_attr_string(n, "auto_pad", "BOGUS"));
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "auto_pad \"BOGUS\"");
  dml_ir_node_t *g = tnode(&t, DML_OP_GLOBAL_AVERAGE_POOL, "gap", 1, &x, 1);
  INFER_OK(&t, g);
  CHECK_TYPE(&t, g->outputs[0], "f32[batch,16,1,1]");
  g = tnode(&t, DML_OP_GLOBAL_MAX_POOL, "gmp", 1, &x5, 1);
  INFER_OK(&t, g);
  CHECK_TYPE(&t, g->outputs[0], "f32[1,1,1,1]");
  tm_free(&t);
}

static void test_norm_dropout_flatten(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,16,4,4]");
  dml_ir_value_t *p16 = tw(&t, "p16", "f32[16]");
  dml_ir_value_t *p8 = tw(&t, "p8", "f32[8]");
  dml_ir_value_t *bi[5] = {x, p16, p16, p16, p16};
  dml_ir_node_t *bn = tnode(&t, DML_OP_BATCH_NORMALIZATION, "bn", 5, bi, 1);
  INFER_OK(&t, bn);
  CHECK_TYPE(&t, bn->outputs[0], "f32[batch,16,4,4]");
  dml_ir_value_t *bb[5] = {x, p16, p8, p16, p16};
  dml_ir_node_t *bn2 = tnode(&t, DML_OP_BATCH_NORMALIZATION, "bn_bad", 5, bb, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, bn2), DML_STATUS_INVALID_ARGUMENT,
              "input 2 f32[8] must be 1-D with the f32[batch,16,4,4]'s channel count");
  /* training_mode=1: running_mean/running_var [C] of input_mean/var's dtype */
  dml_ir_value_t *d16 = tw(&t, "d16", "f64[16]");
  dml_ir_value_t *bt[5] = {x, p16, p16, p16, d16};
  dml_ir_node_t *bn3 = tnode(&t, DML_OP_BATCH_NORMALIZATION, "bn_train", 5, bt, 3);
  CHECK_ERROR(dml_ir_infer_node(t.m, bn3), DML_STATUS_INVALID_ARGUMENT,
              "need training_mode=1");
  CHECK_OK(dml_ir_node_set_attr_int(bn3, "training_mode", 1));
  INFER_OK(&t, bn3);
  CHECK_TYPE(&t, bn3->outputs[0], "f32[batch,16,4,4]");
  CHECK_TYPE(&t, bn3->outputs[1], "f32[16]");
  CHECK_TYPE(&t, bn3->outputs[2], "f64[16]");
  dml_ir_value_t *ii[3] = {x, p16, p16};
  dml_ir_node_t *in = tnode(&t, DML_OP_INSTANCE_NORMALIZATION, "in", 3, ii, 1);
  INFER_OK(&t, in);
  CHECK_TYPE(&t, in->outputs[0], "f32[batch,16,4,4]");

  dml_ir_node_t *fl = tnode(&t, DML_OP_FLATTEN, "flat", 1, &x, 1);
  INFER_OK(&t, fl);
  CHECK_TYPE(&t, fl->outputs[0], "f32[batch,256]");
  CHECK(fl->outputs[0]->type.dims[0].sym == t.batch &&
        fl->outputs[0]->type.dims[0].value == 1);
  CHECK(fl->outputs[0]->type.dims[1].sym < 0 &&
        fl->outputs[0]->type.dims[1].value == 256);
  CHECK_OK(dml_ir_node_set_attr_int(fl, "axis", 2));
  INFER_OK(&t, fl);
  CHECK_TYPE(&t, fl->outputs[0], "f32[16*batch,16]");
  CHECK_OK(dml_ir_node_set_attr_int(fl, "axis", 0));
  INFER_OK(&t, fl);
  CHECK_TYPE(&t, fl->outputs[0], "f32[1,256*batch]");
  CHECK_OK(dml_ir_node_set_attr_int(fl, "axis", -4));
  INFER_OK(&t, fl);
  CHECK_TYPE(&t, fl->outputs[0], "f32[1,256*batch]");
  CHECK_OK(dml_ir_node_set_attr_int(fl, "axis", 4));
  INFER_OK(&t, fl);
  CHECK_TYPE(&t, fl->outputs[0], "f32[256*batch,1]");
  CHECK_OK(dml_ir_node_set_attr_int(fl, "axis", 5));
  CHECK_ERROR(dml_ir_infer_node(t.m, fl), DML_STATUS_INVALID_ARGUMENT,
              "axis 5 is out of range");
  dml_ir_value_t *x2 = targ(&t, "x2", "f32[batch,batch]");
  dml_ir_node_t *fl2 = tnode(&t, DML_OP_FLATTEN, "flat2", 1, &x2, 1);
  CHECK_OK(dml_ir_node_set_attr_int(fl2, "axis", 0));
  INFER_OK(&t, fl2);
  CHECK_TYPE(&t, fl2->outputs[0], "f32[1,batch*batch]");

  dml_ir_node_t *dr = tnode(&t, DML_OP_DROPOUT, "drop", 1, &fl->outputs[0], 2);
  INFER_OK(&t, dr);
  CHECK_TYPE(&t, dr->outputs[0], "f32[256*batch,1]");
  CHECK_TYPE(&t, dr->outputs[1], "bool[256*batch,1]");

  dml_ir_value_t *ln_x = targ(&t, "lnx", "f16[batch,10,32]");
  dml_ir_value_t *ln_s = tw(&t, "lns", "f16[32]");
  dml_ir_value_t *li[2] = {ln_x, ln_s};
  dml_ir_node_t *ln = tnode(&t, DML_OP_LAYER_NORMALIZATION, "ln", 2, li, 3);
  INFER_OK(&t, ln);
  CHECK_TYPE(&t, ln->outputs[0], "f16[batch,10,32]");
  CHECK_TYPE(&t, ln->outputs[1], "f32[batch,10,1]");
  CHECK_TYPE(&t, ln->outputs[2], "f32[batch,10,1]");
  CHECK_OK(
      dml_ir_node_set_attr_int(ln, "axis", 1)); /* Scale [32] broadcasts to [10,32] */
  INFER_OK(&t, ln);
  CHECK_TYPE(&t, ln->outputs[1], "f32[batch,1,1]");
  dml_ir_value_t *li2[2] = {ln_x, tw(&t, "lns10", "f16[10]")};
  dml_ir_node_t *ln2 = tnode(&t, DML_OP_LAYER_NORMALIZATION, "ln_bad", 2, li2, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, ln2), DML_STATUS_INVALID_ARGUMENT,
              "cannot broadcast f16[10] and f16[32]: dim 0 is 10 vs 32");
  dml_ir_node_t *sm = tnode(&t, DML_OP_SOFTMAX, "sm", 1, &x, 1);
  INFER_OK(&t, sm);
  CHECK_TYPE(&t, sm->outputs[0], "f32[batch,16,4,4]");
  CHECK_OK(dml_ir_node_set_attr_int(sm, "axis", -5));
  CHECK_ERROR(dml_ir_infer_node(t.m, sm), DML_STATUS_INVALID_ARGUMENT,
              "axis -5 is out of range");
  tm_free(&t);
}

/* The pass over a whole MLP; a known output type is overwritten. */
static void test_pass_mlp(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,1,28,28]");
  dml_ir_node_t *fl = tnode(&t, DML_OP_FLATTEN, "flat", 1, &x, 1);
  dml_ir_value_t *gi[3] = {fl->outputs[0], tw(&t, "w1", "f32[128,784]"),
                           tw(&t, "b1", "f32[128]")};
  dml_ir_node_t *g1 = tnode(&t, DML_OP_GEMM, "fc1", 3, gi, 1);
  CHECK_OK(dml_ir_node_set_attr_int(g1, "transB", 1));
  dml_ir_node_t *r = tnode(&t, DML_OP_RELU, "relu", 1, &g1->outputs[0], 1);
  dml_ir_value_t *g2i[3] = {r->outputs[0], tw(&t, "w2", "f32[10,128]"),
                            tw(&t, "b2", "f32[10]")};
  dml_ir_node_t *g2 = tnode(&t, DML_OP_GEMM, "fc2", 3, g2i, 1);
  CHECK_OK(dml_ir_node_set_attr_int(g2, "transB", 1));
  g2->outputs[0]->type = tty(&t, "f64[7]"); /* stale type, e.g. parsed from text */
  CHECK_OK(dml_ir_function_set_results(t.f, 1, &g2->outputs[0]));
  CHECK_OK(dml_pass_shape_infer(t.m, NULL));
  CHECK_TYPE(&t, g2->outputs[0], "f32[batch,10]");
  /* An error names the function too. */
  CHECK_OK(dml_ir_node_set_attr_int(g2, "transB", 0));
  CHECK_ERROR(dml_pass_shape_infer(t.m, NULL), DML_STATUS_INVALID_ARGUMENT,
              "while inferring function @forward");
  /* On error the previous type is kept. */
  CHECK_TYPE(&t, g2->outputs[0], "f32[batch,10]");
  tm_free(&t);
}

int main(void) {
  RUN(test_unary_and_identity);
  RUN(test_cast);
  RUN(test_broadcast);
  RUN(test_gemm_matmul);
  RUN(test_conv);
  RUN(test_conv_transpose);
  RUN(test_pool);
  RUN(test_norm_dropout_flatten);
  RUN(test_pass_mlp);
  return dml_test_finish();
}
