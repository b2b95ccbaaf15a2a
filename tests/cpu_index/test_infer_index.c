/* Shape and dtype functions of the indexing, sampling and Einsum ops
 * (ir/infer.c), symbolic dims included, and their user-facing errors. */
#include "infer_util.h"

static dml_ir_node_t *node2(tmod_t *t, dml_op_t op, dml_ir_value_t *a, dml_ir_value_t *b,
                            uint32_t nout) {
  dml_ir_value_t *ins[2] = {a, b};
  return tnode(t, op, "n", 2, ins, nout);
}

static void test_gather_scatter(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,5,4]");
  dml_ir_value_t *i = targ(&t, "i", "i64[batch,2,4]");
  dml_ir_node_t *n = node2(&t, DML_OP_GATHER_ELEMENTS, x, i, 1);
  CHECK_OK(dml_ir_node_set_attr_int(n, "axis", 1));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,2,4]");
  dml_ir_value_t *bad = targ(&t, "bad", "i64[2,4]");
  n = node2(&t, DML_OP_GATHER_ELEMENTS, x, bad, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "indices must have the data's rank 3");
  dml_ir_value_t *u = targ(&t, "u", "f32[batch,2,4]");
  dml_ir_value_t *si[3] = {x, i, u};
  n = tnode(&t, DML_OP_SCATTER_ELEMENTS, "se", 3, si, 1);
  CHECK_OK(dml_ir_node_set_attr_string(n, "reduction", "add"));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,5,4]");
  CHECK_OK(dml_ir_node_set_attr_string(n, "reduction", "xor"));
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "attribute 'reduction' = \"xor\" is not supported");
  si[2] = targ(&t, "u2", "f32[batch,3,4]");
  n = tnode(&t, DML_OP_SCATTER_ELEMENTS, "se2", 3, si, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "updates f32[batch,3,4] must have the indices' shape i64[batch,2,4]");
  tm_free(&t);
}

static void test_nd(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,5,4,3]");
  dml_ir_node_t *n = node2(&t, DML_OP_GATHER_ND, x, targ(&t, "i", "i64[batch,7,2]"), 1);
  CHECK_OK(dml_ir_node_set_attr_int(n, "batch_dims", 1));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,7,3]");
  n = node2(&t, DML_OP_GATHER_ND, x, targ(&t, "j", "i32[6,1]"), 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[6,5,4,3]");
  n = node2(&t, DML_OP_GATHER_ND, x, targ(&t, "k", "i64[6,5]"), 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "indices' last dim 5 must be a static value in [1, 4]");
  dml_ir_value_t *d = targ(&t, "d", "f32[8,3]");
  dml_ir_value_t *si[3] = {d, targ(&t, "si", "i64[batch,1]"),
                           targ(&t, "su", "f32[batch,3]")};
  n = tnode(&t, DML_OP_SCATTER_ND, "snd", 3, si, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[8,3]");
  si[2] = targ(&t, "su2", "f32[batch]");
  n = tnode(&t, DML_OP_SCATTER_ND, "snd2", 3, si, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "must have shape indices[:-1] + data[1:]");
  tm_free(&t);
}

static void test_one_hot(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *ind = targ(&t, "ind", "i64[batch,3]");
  int64_t depth = 10;
  float vals[2] = {0, 1};
  dml_ir_value_t *ins[3] = {ind, ti64(&t, &depth, 1, 1), tf32(&t, vals, 2)};
  dml_ir_node_t *n = tnode(&t, DML_OP_ONE_HOT, "oh", 3, ins, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,3,10]");
  CHECK_OK(dml_ir_node_set_attr_int(n, "axis", 1));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,10,3]");
  /* depth as a float constant */
  float fd = 4;
  ins[1] = tf32(&t, &fd, 1);
  n = tnode(&t, DML_OP_ONE_HOT, "ohf", 3, ins, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,3,4]");
  ins[1] = targ(&t, "depth", "i64[]");
  n = tnode(&t, DML_OP_ONE_HOT, "oh2", 3, ins, 1);
  INFER_OK(&t, n); /* depth at run time */
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,3,oh2.d2]");
  tm_free(&t);
}

static void test_depth_space(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,8,2,3]");
  dml_ir_node_t *n = tnode(&t, DML_OP_DEPTH_TO_SPACE, "d2s", 1, &x, 1);
  CHECK_OK(dml_ir_node_set_attr_int(n, "blocksize", 2));
  CHECK_OK(dml_ir_node_set_attr_string(n, "mode", "CRD"));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,2,4,6]");
  dml_ir_node_t *s = tnode(&t, DML_OP_SPACE_TO_DEPTH, "s2d", 1, &n->outputs[0], 1);
  CHECK_OK(dml_ir_node_set_attr_int(s, "blocksize", 2));
  INFER_OK(&t, s);
  CHECK_TYPE(&t, s->outputs[0], "f32[batch,8,2,3]");
  CHECK_OK(dml_ir_node_set_attr_int(s, "blocksize", 4));
  CHECK_ERROR(dml_ir_infer_node(t.m, s), DML_STATUS_INVALID_ARGUMENT,
              "dim 3 of f32[batch,2,4,6] is not divisible by blocksize 4");
  CHECK_OK(dml_ir_node_set_attr_int(n, "blocksize", 3));
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "channels of f32[batch,8,2,3] are not divisible by blocksize^2 = 9");
  tm_free(&t);
}

static void test_top_k(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,10]");
  int64_t k = 3;
  dml_ir_node_t *n = node2(&t, DML_OP_TOP_K, x, ti64(&t, &k, 1, 0), 2);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,3]");
  CHECK_TYPE(&t, n->outputs[1], "i64[batch,3]");
  k = 11;
  n = node2(&t, DML_OP_TOP_K, x, ti64(&t, &k, 1, 0), 2);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "K = 11 is out of range for axis 1 of extent 10");
  n = node2(&t, DML_OP_TOP_K, x, targ(&t, "k", "i64[1]"), 2);
  INFER_OK(&t, n); /* K at run time: <= the axis's extent */
  CHECK(n->outputs[0]->type.dims[1].sym >= 0 && n->outputs[1]->type.dims[1].sym >= 0 &&
        t.m->symbols[n->outputs[0]->type.dims[1].sym].bound == 10 &&
        n->outputs[1]->type.dtype == DML_DTYPE_I64);
  n = node2(&t, DML_OP_TOP_K, x, targ(&t, "k2", "i64[2]"), 2);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "K (input 1) must have one element");
  tm_free(&t);
}

static dml_ir_node_t *einsum(tmod_t *t, const char *eq, dml_ir_value_t *a,
                             dml_ir_value_t *b) {
  dml_ir_value_t *ins[2] = {a, b};
  dml_ir_node_t *n = tnode(t, DML_OP_EINSUM, "ein", b ? 2 : 1, ins, 1);
  CHECK_OK(dml_ir_node_set_attr_string(n, "equation", eq));
  return n;
}

static void test_einsum(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *a = targ(&t, "a", "f32[batch,2,3]"),
                 *b = targ(&t, "b", "f32[batch,3,4]");
  dml_ir_node_t *n = einsum(&t, "bij,bjk->bik", a, b);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,2,4]");
  n = einsum(&t, "bij,bjk", a, b); /* implicit: labels once, sorted: b? no: i,k */
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[2,4]");
  n = einsum(&t, "...ij,...jk->...ik", a, targ(&t, "c", "f32[3,4]"));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,2,4]");
  n = einsum(&t, "...ii->...i", targ(&t, "sq", "f32[batch,5,5]"), NULL);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,5]");
  n = einsum(&t, "ii", targ(&t, "m", "f32[5,5]"), NULL);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[]");
  n = einsum(&t, "bij,bjk->bik", a, targ(&t, "d", "f32[batch,4,4]"));
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "subscript 'j' has extents 3 and 4");
  n = einsum(&t, "bij,bjk->bik", a, NULL);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "equation has more terms than the 1 inputs");
  n = einsum(&t, "bi.j->b", a, NULL);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "'.' must be part of an ellipsis");
  n = einsum(&t, "bij->bii", a, NULL);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "output subscript 'i' is repeated");
  tm_free(&t);
}

static void test_misc(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *m = targ(&t, "m", "f64[batch,3,3]");
  dml_ir_node_t *n = tnode(&t, DML_OP_DET, "det", 1, &m, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f64[batch]");
  dml_ir_value_t *nm = targ(&t, "nm", "f32[3,4]");
  n = tnode(&t, DML_OP_DET, "det2", 1, &nm, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "input f32[3,4] must be [*, M, M]");
  /* ReverseSequence keeps the shape */
  dml_ir_value_t *rs = targ(&t, "rs", "f32[7,batch,4]");
  n = node2(&t, DML_OP_REVERSE_SEQUENCE, rs, targ(&t, "lens", "i64[batch]"), 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[7,batch,4]");
  /* MaxUnpool: default shape, symbolic batch; output_shape constant */
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,3,2,2]");
  dml_ir_value_t *ix = targ(&t, "ix", "i64[batch,3,2,2]");
  n = node2(&t, DML_OP_MAX_UNPOOL, x, ix, 1);
  int64_t ks[2] = {2, 2};
  CHECK_OK(dml_ir_node_set_attr_ints(n, "kernel_shape", ks, 2));
  CHECK_OK(dml_ir_node_set_attr_ints(n, "strides", ks, 2));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,3,4,4]");
  int64_t os[4] = {1, 3, 5, 5};
  dml_ir_value_t *ui[3] = {targ(&t, "x1", "f32[1,3,2,2]"), targ(&t, "i1", "i64[1,3,2,2]"),
                           ti64(&t, os, 4, 0)};
  n = tnode(&t, DML_OP_MAX_UNPOOL, "unpool", 3, ui, 1);
  CHECK_OK(dml_ir_node_set_attr_ints(n, "kernel_shape", ks, 2));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[1,3,5,5]");
  ui[2] = targ(&t, "os", "i64[4]");
  n = tnode(&t, DML_OP_MAX_UNPOOL, "unpool2", 3, ui, 1);
  CHECK_OK(dml_ir_node_set_attr_ints(n, "kernel_shape", ks, 2));
  /* output_shape fed at run time: data-dependent dims (cpu_outdims.c) */
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[unpool2.d0,unpool2.d1,unpool2.d2,unpool2.d3]");
  /* GridSample, RoiAlign */
  n = node2(&t, DML_OP_GRID_SAMPLE, targ(&t, "img", "f32[batch,3,8,8]"),
            targ(&t, "grid", "f32[batch,5,6,2]"), 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,3,5,6]");
  CHECK_OK(dml_ir_node_set_attr_string(n, "padding_mode", "wrap"));
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "attribute 'padding_mode' = \"wrap\" is not supported");
  dml_ir_value_t *ri[3] = {targ(&t, "feat", "f32[2,16,8,8]"),
                           targ(&t, "rois", "f32[batch,4]"),
                           targ(&t, "bi", "i64[batch]")};
  n = tnode(&t, DML_OP_ROI_ALIGN, "roi", 3, ri, 1);
  CHECK_OK(dml_ir_node_set_attr_int(n, "output_height", 7));
  CHECK_OK(dml_ir_node_set_attr_int(n, "output_width", 5));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,16,7,5]");
  tm_free(&t);
}

int main(void) {
  RUN(test_gather_scatter);
  RUN(test_nd);
  RUN(test_one_hot);
  RUN(test_depth_space);
  RUN(test_top_k);
  RUN(test_einsum);
  RUN(test_misc);
  return dml_test_finish();
}
