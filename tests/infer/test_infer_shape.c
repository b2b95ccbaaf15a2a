/* Shape inference of the shape-manipulation ops, reductions, and symbolic
 * contents (sym_data) of shape chains. */
#include "infer_util.h"

static dml_ir_node_t *unary_axes(tmod_t *t, dml_op_t op, const char *name,
                                 dml_ir_value_t *x, const int64_t *axes, size_t n) {
  dml_ir_value_t *ins[2] = {x, ti64(t, axes, n, 0)};
  return tnode(t, op, name, 2, ins, 1);
}

/* The PyTorch exporter's flatten: Shape -> Gather(0) -> Unsqueeze(0) ->
 * Concat([.., -1]) -> Reshape. */
static void test_exporter_chain(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,1,28,28]");
  dml_ir_node_t *sh = tnode(&t, DML_OP_SHAPE, "shape", 1, &x, 1);
  int64_t zero = 0, minus1 = -1, ax0 = 0;
  dml_ir_value_t *gi[2] = {sh->outputs[0], ti64(&t, &zero, 1, 1)};
  dml_ir_node_t *ga = tnode(&t, DML_OP_GATHER, "gather", 2, gi, 1);
  dml_ir_node_t *un = unary_axes(&t, DML_OP_UNSQUEEZE, "unsq", ga->outputs[0], &ax0, 1);
  dml_ir_value_t *ci[2] = {un->outputs[0], ti64(&t, &minus1, 1, 0)};
  dml_ir_node_t *cc = tnode(&t, DML_OP_CONCAT, "concat", 2, ci, 1);
  CHECK_OK(dml_ir_node_set_attr_int(cc, "axis", 0));
  dml_ir_value_t *ri[2] = {x, cc->outputs[0]};
  dml_ir_node_t *re = tnode(&t, DML_OP_RESHAPE, "reshape", 2, ri, 1);
  CHECK_OK(dml_pass_shape_infer(t.m, NULL));
  CHECK_TYPE(&t, sh->outputs[0], "i64[4]");
  CHECK_TYPE(&t, ga->outputs[0], "i64[]");
  CHECK_TYPE(&t, un->outputs[0], "i64[1]");
  CHECK_TYPE(&t, cc->outputs[0], "i64[2]");
  CHECK_TYPE(&t, re->outputs[0], "f32[batch,784]");
  const dml_ir_sym_data_t *sd = cc->outputs[0]->sym_data;
  CHECK(sd && sd->n == 2);
  if (sd && sd->n == 2) {
    CHECK(sd->elems[0].sym == t.batch && sd->elems[0].value == 1);
    CHECK(sd->elems[1].sym < 0 && sd->elems[1].value == -1);
  }
  const dml_type_t *rt = &re->outputs[0]->type;
  CHECK(rt->dims[0].sym == t.batch && rt->dims[0].value == 1);
  CHECK(rt->dims[1].sym < 0 && rt->dims[1].value == 784);
  tm_free(&t);
}

static dml_ir_node_t *reshape(tmod_t *t, dml_ir_value_t *x, const int64_t *shape,
                              size_t n, const char *name) {
  dml_ir_value_t *ins[2] = {x, ti64(t, shape, n, 0)};
  return tnode(t, DML_OP_RESHAPE, name, 2, ins, 1);
}

static void test_reshape(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,6,4]");
  static const struct {
    int64_t s[4];
    size_t n;
    const char *want;
  } ok[] = {
      {{0, -1}, 2, "f32[batch,24]"},         {{-1, 8}, 2, "f32[3*batch,8]"},
      {{0, 2, 3, 4}, 4, "f32[batch,2,3,4]"}, {{-1}, 1, "f32[24*batch]"},
      {{0, 0, -1}, 3, "f32[batch,6,4]"},     {{-1, 24}, 2, "f32[batch,24]"},
  };
  for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
    dml_ir_node_t *n = reshape(&t, x, ok[i].s, ok[i].n, "r");
    INFER_OK(&t, n);
    CHECK_TYPE(&t, n->outputs[0], ok[i].want);
  }
  int64_t s1[2] = {-1, 5};
  dml_ir_node_t *n = reshape(&t, x, s1, 2, "r5");
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_UNIMPLEMENTED,
              "the -1 dim would be (24*batch)/(5)");
  int64_t s2[2] = {-1, -1};
  n = reshape(&t, x, s2, 2, "r11");
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT, "more than one -1");
  int64_t s3[2] = {7, 4};
  dml_ir_value_t *xs = targ(&t, "xs", "f32[6,4]");
  n = reshape(&t, xs, s3, 2, "r74");
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "cannot reshape f32[6,4] (24 elements) into [7,4] (28 elements)");
  int64_t s4[2] = {-1, 7};
  n = reshape(&t, xs, s4, 2, "rm7");
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "cannot reshape f32[6,4] (24 elements) into [-1,7]");
  int64_t s5[2] = {64, 24};
  n = reshape(&t, x, s5, 2, "rbound");
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "(24*batch elements) into [64,24]");
  int64_t s6[3] = {
      0,
      0,
      0,
  };
  dml_ir_value_t *x2 = targ(&t, "x2", "f32[3,4]");
  n = reshape(&t, x2, s6, 3, "r000");
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "0 at index 2 copies");
  /* allowzero: 0 is a real zero */
  dml_ir_value_t *x0 = targ(&t, "x0", "f32[0,4]");
  int64_t s7[2] = {4, 0};
  n = reshape(&t, x0, s7, 2, "rz");
  CHECK_OK(dml_ir_node_set_attr_int(n, "allowzero", 1));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[4,0]");
  int64_t s8[2] = {-2, 12};
  n = reshape(&t, x2, s8, 2, "rneg");
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT, "invalid dim -2");
  /* a target shape computed at run time: data-dependent dims, each <= the
   * element count of x (a static length gives the rank) */
  dml_ir_value_t *dyn = targ(&t, "dyn_shape", "i64[2]");
  dml_ir_value_t *di[2] = {x, dyn};
  n = tnode(&t, DML_OP_RESHAPE, "rdyn", 2, di, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[rdyn.d0,rdyn.d1]");
  {
    int32_t s0 = dml_ir_module_find_symbol(t.m, "rdyn.d0");
    CHECK(s0 >= 0 && (t.m->symbols[s0].flags & DML_IR_SYMBOL_DATA_DEPENDENT) &&
          t.m->symbols[s0].bound == dml_ir_type_numel_bound(t.m, &x->type));
    /* planned at most at x's element count, not the product of the bounds */
    CHECK(dml_ir_value_max_elements(t.m, n->outputs[0]) ==
          dml_ir_type_numel_bound(t.m, &x->type));
  }
  /* a target shape whose length is only known at run time: the rank would
   * depend on data */
  dml_ir_value_t *di2[2] = {x, targ(&t, "dyn_len", "i64[batch]")};
  n = tnode(&t, DML_OP_RESHAPE, "rdyn2", 2, di2, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_UNIMPLEMENTED,
              "the output rank of Reshape 'rdyn2' depends on run-time data");
  tm_free(&t);
}

static dml_ir_node_t *slice(tmod_t *t, dml_ir_value_t *x, const int64_t *st,
                            const int64_t *en, const int64_t *ax, const int64_t *sp,
                            size_t n) {
  dml_ir_value_t *ins[5] = {x, ti64(t, st, n, 0), ti64(t, en, n, 0),
                            ax ? ti64(t, ax, n, 0) : NULL, sp ? ti64(t, sp, n, 0) : NULL};
  return tnode(t, DML_OP_SLICE, "slice", sp ? 5 : ax ? 4 : 3, ins, 1);
}

static void test_slice(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,10,20]");
  int64_t st[2] = {1, -5}, en[2] = {INT64_MAX, -1}, ax[2] = {1, 2}, sp[2] = {2, 1};
  dml_ir_node_t *n = slice(&t, x, st, en, ax, sp, 2);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,5,4]");
  /* negative step, clamped */
  int64_t st2[1] = {INT64_MAX}, en2[1] = {INT64_MIN}, ax2[1] = {-1}, sp2[1] = {-3};
  n = slice(&t, x, st2, en2, ax2, sp2, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,10,7]");
  /* out of range start gives empty */
  int64_t st3[1] = {30}, en3[1] = {40}, ax3[1] = {2};
  n = slice(&t, x, st3, en3, ax3, NULL, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,10,0]");
  /* full range on the symbolic dim */
  int64_t st4[1] = {0}, en4[1] = {INT64_MAX};
  n = slice(&t, x, st4, en4, NULL, NULL, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,10,20]");
  int64_t st5[1] = {-1}, en5[1] = {INT64_MIN}, ax5[1] = {0}, sp5[1] = {-1};
  n = slice(&t, x, st5, en5, ax5, sp5, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,10,20]");
  /* from 1 to the end of the symbolic dim: a derived dim batch-1 */
  int64_t st6[1] = {1}, en6[1] = {INT64_MAX};
  n = slice(&t, x, st6, en6, NULL, NULL, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch-1,10,20]");
  /* a partial range whose extent depends on the size: min(3, batch) */
  int64_t st6b[1] = {0}, en6b[1] = {3};
  n = slice(&t, x, st6b, en6b, NULL, NULL, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_UNIMPLEMENTED,
              "Slice of dim 0 of f32[batch,10,20] from 0 to");
  int64_t sp7[1] = {0};
  n = slice(&t, x, st4, en4, ax5, sp7, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT, "step 0 is 0");
  int64_t ax8[1] = {3};
  n = slice(&t, x, st4, en4, ax8, NULL, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "axis 3 is out of range for rank 3");
  /* Slice of a shape: Shape(x)[1:] keeps known contents */
  dml_ir_node_t *sh = tnode(&t, DML_OP_SHAPE, "shape", 1, &x, 1);
  INFER_OK(&t, sh);
  int64_t s9[1] = {1}, e9[1] = {INT64_MAX};
  n = slice(&t, sh->outputs[0], s9, e9, NULL, NULL, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "i64[2]");
  CHECK(n->outputs[0]->sym_data && n->outputs[0]->sym_data->n == 2 &&
        n->outputs[0]->sym_data->elems[0].value == 10 &&
        n->outputs[0]->sym_data->elems[1].value == 20);
  /* ends from the shape: Slice(x, 0, Shape(x)[0]) on the symbolic dim */
  int64_t z = 0;
  dml_ir_value_t *gi[2] = {sh->outputs[0], ti64(&t, &z, 1, 0)};
  dml_ir_node_t *g = tnode(&t, DML_OP_GATHER, "g", 2, gi, 1);
  INFER_OK(&t, g);
  dml_ir_value_t *si[3] = {x, ti64(&t, &z, 1, 0), g->outputs[0]};
  n = tnode(&t, DML_OP_SLICE, "slice_sym", 3, si, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,10,20]");
  /* a static table cut to a symbolic length within it (BERT's position
   * ids [1,64][:, :seq]): the length; a table shorter than the bound is not */
  dml_ir_value_t *pos = targ(&t, "pos", "i64[1,64]");
  int64_t one = 1;
  dml_ir_value_t *pi[4] = {pos, ti64(&t, &z, 1, 0), g->outputs[0], ti64(&t, &one, 1, 0)};
  n = tnode(&t, DML_OP_SLICE, "slice_table", 4, pi, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "i64[1,batch]");
  dml_ir_value_t *pos2 = targ(&t, "pos2", "i64[1,63]");
  dml_ir_value_t *pi2[4] = {pos2, pi[1], pi[2], pi[3]};
  n = tnode(&t, DML_OP_SLICE, "slice_table2", 4, pi2, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_UNIMPLEMENTED, "Slice of dim 1");
  /* [batch+1][:batch] (Whisper's shifted decoder ids): batch */
  dml_dim_t b1;
  int ok1 = 0;
  CHECK_OK(dml_ir_module_derived_dim(t.m, t.batch, -1, 1, 1, 1, &b1, &ok1));
  CHECK(ok1 && b1.sym >= 0);
  int64_t d1[1] = {0};
  dml_type_t ty1 = dml_type_static(DML_DTYPE_F32, 1, d1);
  ty1.dims[0] = b1;
  dml_ir_value_t *sh1 = NULL;
  CHECK_OK(dml_ir_function_add_arg(t.f, "sh1", &ty1, &sh1));
  dml_ir_value_t *ps[4] = {sh1, pi[1], pi[2], ti64(&t, &z, 1, 0)};
  n = tnode(&t, DML_OP_SLICE, "slice_derived", 4, ps, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch]");
  /* a size is never -1 (torch.onnx: Where(Equal(shape, -1), 1, shape)), and
   * batch <= 64 < 65, but batch == 3 depends on the run */
  int64_t cmp[3] = {-1, 65, 3};
  dml_op_t cop[3] = {DML_OP_EQUAL, DML_OP_LESS, DML_OP_EQUAL};
  int want[3] = {0, 1, -1};
  for (int k = 0; k < 3; k++) {
    dml_ir_value_t *ci[2] = {g->outputs[0], ti64(&t, &cmp[k], 1, 0)};
    n = tnode(&t, cop[k], "cmp", 2, ci, 1);
    INFER_OK(&t, n);
    const dml_ir_sym_data_t *sd = n->outputs[0]->sym_data;
    if (want[k] < 0)
      CHECK(!sd);
    else
      CHECK(sd && sd->n == 1 && sd->elems[0].sym < 0 && sd->elems[0].value == want[k]);
  }
  /* a derived dim whose formula is negative for small inputs, here
   * (10 batch - 80) / 320 (-1 at batch 1; wav2vec2's frames (samples - 80)
   * / 320 before the mask's Expand, as torch 2.11's TorchScript export
   * writes it): still a size, never -1 (the Expand's shape was left to the
   * run, and the Add after it refused) */
  dml_dim_t fr;
  int okf = 0;
  CHECK_OK(dml_ir_module_derived_dim(t.m, t.batch, -1, 10, -80, 320, &fr, &okf));
  CHECK(okf && fr.sym >= 0);
  CHECK(dml_ir_symbol_min(t.m, fr.sym) == 0);
  dml_type_t tyf = dml_type_static(DML_DTYPE_F32, 1, d1);
  tyf.dims[0] = fr;
  dml_ir_value_t *xf = NULL;
  CHECK_OK(dml_ir_function_add_arg(t.f, "frames", &tyf, &xf));
  n = tnode(&t, DML_OP_SHAPE, "shape_frames", 1, &xf, 1);
  INFER_OK(&t, n);
  dml_ir_value_t *fi[2] = {n->outputs[0], ti64(&t, &cmp[0], 1, 0)};
  n = tnode(&t, DML_OP_EQUAL, "frames_eq_m1", 2, fi, 1);
  INFER_OK(&t, n);
  const dml_ir_sym_data_t *fsd = n->outputs[0]->sym_data;
  CHECK(fsd && fsd->n == 1 && fsd->elems[0].sym < 0 && fsd->elems[0].value == 0);
  tm_free(&t);
}

static void test_squeeze_unsqueeze_transpose(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,1,5,1]");
  int64_t a1[2] = {1, -1};
  dml_ir_node_t *n = unary_axes(&t, DML_OP_SQUEEZE, "sq", x, a1, 2);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,5]");
  int64_t a2[1] = {0};
  n = unary_axes(&t, DML_OP_SQUEEZE, "sq_sym", x, a2, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "cannot squeeze dim 0 of f32[batch,1,5,1]: it is batch, not 1");
  n = tnode(&t, DML_OP_SQUEEZE, "sq_all", 1, &x, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_UNIMPLEMENTED,
              "Squeeze without axes");
  dml_ir_value_t *y = targ(&t, "y", "f32[1,3,1]");
  n = tnode(&t, DML_OP_SQUEEZE, "sq_all2", 1, &y, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[3]");
  /* attribute form (opset < 13) */
  n = tnode(&t, DML_OP_UNSQUEEZE, "unsq_attr", 1, &y, 1);
  int64_t a3[2] = {0, 4};
  CHECK_OK(dml_ir_node_set_attr_ints(n, "axes", a3, 2));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[1,1,3,1,1]");
  int64_t a4[2] = {1, 1};
  n = unary_axes(&t, DML_OP_UNSQUEEZE, "unsq_dup", y, a4, 2);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "axis 1 is repeated");
  int64_t a5[1] = {-1};
  n = unary_axes(&t, DML_OP_UNSQUEEZE, "unsq_neg", x, a5, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,1,5,1,1]");
  n = tnode(&t, DML_OP_UNSQUEEZE, "unsq_none", 1, &x, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "Unsqueeze needs axes");
  n = tnode(&t, DML_OP_TRANSPOSE, "tr", 1, &x, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[1,5,1,batch]");
  int64_t p[4] = {0, 2, 3, 1};
  CHECK_OK(dml_ir_node_set_attr_ints(n, "perm", p, 4));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,5,1,1]");
  int64_t pb[4] = {0, 2, 2, 1};
  CHECK_OK(dml_ir_node_set_attr_ints(n, "perm", pb, 4));
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "not a permutation");
  tm_free(&t);
}

static void test_concat_split_gather(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *a = targ(&t, "a", "f32[batch,3]");
  dml_ir_value_t *b = targ(&t, "b", "f32[2*batch,3]");
  dml_ir_value_t *c = targ(&t, "c", "f32[batch,5]");
  dml_ir_value_t *ab[2] = {a, b};
  dml_ir_node_t *n = tnode(&t, DML_OP_CONCAT, "cat0", 2, ab, 1);
  CHECK_OK(dml_ir_node_set_attr_int(n, "axis", 0));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[3*batch,3]");
  dml_ir_value_t *ac[2] = {a, c};
  n = tnode(&t, DML_OP_CONCAT, "cat1", 2, ac, 1);
  CHECK_OK(dml_ir_node_set_attr_int(n, "axis", -1));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,8]");
  CHECK_OK(dml_ir_node_set_attr_int(n, "axis", 0));
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "input 1 f32[batch,5] differs from input 0 f32[batch,3] in dim 1");
  dml_ir_value_t *s = targ(&t, "s", "f32[4,3]");
  dml_ir_value_t *as[2] = {a, s};
  n = tnode(&t, DML_OP_CONCAT, "cat_mixed", 2, as, 1);
  CHECK_OK(dml_ir_node_set_attr_int(n, "axis", 0));
  INFER_OK(&t, n); /* batch + 4: a derived dim */
  CHECK_TYPE(&t, n->outputs[0], "f32[batch+4,3]");
  CHECK_OK(dml_ir_module_add_symbol(t.m, "other", 8, NULL));
  dml_ir_value_t *o2 = targ(&t, "o2", "f32[other,3]");
  dml_ir_value_t *ao[2] = {a, o2};
  n = tnode(&t, DML_OP_CONCAT, "cat_two_syms", 2, ao, 1);
  CHECK_OK(dml_ir_node_set_attr_int(n, "axis", 0));
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_UNIMPLEMENTED, "not expressible");
  n = tnode(&t, DML_OP_CONCAT, "cat_noaxis", 2, as, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "attribute 'axis' is required");

  /* Split: sizes from input, attribute, equal parts, uneven last chunk */
  dml_ir_value_t *x = targ(&t, "x", "f32[2*batch,10]");
  int64_t sz[2] = {3, 7};
  dml_ir_value_t *xi[2] = {x, ti64(&t, sz, 2, 0)};
  n = tnode(&t, DML_OP_SPLIT, "split", 2, xi, 2);
  CHECK_OK(dml_ir_node_set_attr_int(n, "axis", 1));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[2*batch,3]");
  CHECK_TYPE(&t, n->outputs[1], "f32[2*batch,7]");
  n = tnode(&t, DML_OP_SPLIT, "split3", 1, &x, 3);
  CHECK_OK(dml_ir_node_set_attr_int(n, "axis", 1));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[2*batch,4]");
  CHECK_TYPE(&t, n->outputs[2], "f32[2*batch,2]");
  n = tnode(&t, DML_OP_SPLIT, "split_sym", 1, &x, 2);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[1], "f32[batch,10]");
  n = tnode(&t, DML_OP_SPLIT, "split_sym3", 1, &x, 3);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_UNIMPLEMENTED, "3 equal parts");
  n = tnode(&t, DML_OP_SPLIT, "split_attr", 1, &x, 2);
  int64_t bad[2] = {3, 8};
  CHECK_OK(dml_ir_node_set_attr_ints(n, "split", bad, 2));
  CHECK_OK(dml_ir_node_set_attr_int(n, "axis", 1));
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "split sizes [3,8] add up to 11, but dim 1 of f32[2*batch,10] is 10");

  /* Gather */
  dml_ir_value_t *emb = tw(&t, "emb", "f32[1000,64]");
  dml_ir_value_t *ids = targ(&t, "ids", "i64[batch,16]");
  dml_ir_value_t *gi[2] = {emb, ids};
  n = tnode(&t, DML_OP_GATHER, "embed", 2, gi, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,16,64]");
  dml_ir_value_t *gi2[2] = {x, ids};
  n = tnode(&t, DML_OP_GATHER, "g1", 2, gi2, 1);
  CHECK_OK(dml_ir_node_set_attr_int(n, "axis", 1));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[2*batch,batch,16]");
  dml_ir_value_t *fi[2] = {emb, x};
  n = tnode(&t, DML_OP_GATHER, "gf", 2, fi, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "input 1 must have i32 or i64, got f32");
  tm_free(&t);
}

static void test_expand_tile_pad(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,1,4]");
  int64_t sh[3] = {1, 3, 1};
  dml_ir_value_t *ei[2] = {x, ti64(&t, sh, 3, 0)};
  dml_ir_node_t *n = tnode(&t, DML_OP_EXPAND, "expand", 2, ei, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,3,4]");
  int64_t sh2[4] = {2, 1, 1, 1};
  dml_ir_value_t *ei2[2] = {x, ti64(&t, sh2, 4, 0)};
  n = tnode(&t, DML_OP_EXPAND, "expand4", 2, ei2, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[2,batch,1,4]");
  int64_t sh3[3] = {5, 1, 1};
  dml_ir_value_t *ei3[2] = {x, ti64(&t, sh3, 3, 0)};
  n = tnode(&t, DML_OP_EXPAND, "expand_bad", 2, ei3, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "cannot broadcast f32[batch,1,4] and f32[5,1,1]");
  /* Expand to Shape(x) of another tensor (symbolic contents) */
  dml_ir_value_t *y = targ(&t, "y", "f32[batch,7,4]");
  dml_ir_node_t *s = tnode(&t, DML_OP_SHAPE, "shape", 1, &y, 1);
  INFER_OK(&t, s);
  dml_ir_value_t *ei4[2] = {x, s->outputs[0]};
  n = tnode(&t, DML_OP_EXPAND, "expand_sym", 2, ei4, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,7,4]");

  int64_t rep[3] = {2, 3, 1};
  dml_ir_value_t *ti[2] = {x, ti64(&t, rep, 3, 0)};
  n = tnode(&t, DML_OP_TILE, "tile", 2, ti, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[2*batch,3,4]");

  int64_t pads[6] = {0, 1, 2, 0, 3, -1};
  dml_ir_value_t *pi[2] = {x, ti64(&t, pads, 6, 0)};
  n = tnode(&t, DML_OP_PAD, "pad", 2, pi, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,5,5]");
  int64_t pads2[6] = {1, 0, 0, 0, 0, 0};
  dml_ir_value_t *pi2[2] = {x, ti64(&t, pads2, 6, 0)};
  n = tnode(&t, DML_OP_PAD, "pad_sym", 2, pi2, 1);
  INFER_OK(&t, n); /* a derived dim batch+1 */
  CHECK_TYPE(&t, n->outputs[0], "f32[batch+1,1,4]");
  int64_t pads3[6] = {0, 0, -3, 0, 0, -2};
  dml_ir_value_t *pi3[2] = {x, ti64(&t, pads3, 6, 0)};
  n = tnode(&t, DML_OP_PAD, "pad_neg", 2, pi3, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT, "negative");
  tm_free(&t);
}

static void test_constant_of_shape_range(void) {
  tmod_t t;
  tm_init(&t);
  int64_t sh[2] = {3, 4};
  dml_ir_value_t *s = ti64(&t, sh, 2, 0);
  dml_ir_node_t *n = tnode(&t, DML_OP_CONSTANT_OF_SHAPE, "cos", 1, &s, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[3,4]");
  int64_t one = 1;
  dml_tensor_t v = {DML_DTYPE_I64, 1, {1}, &one};
  CHECK_OK(dml_ir_node_set_attr_tensor(n, "value", &v));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "i64[3,4]");
  CHECK_OK(dml_ir_node_set_attr_int(n, "value", 1));
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "attribute 'value' must be a tensor, got int");

  int64_t r0 = 2, r1 = 11, r2 = 3;
  dml_ir_value_t *ri[3] = {ti64(&t, &r0, 1, 1), ti64(&t, &r1, 1, 1), ti64(&t, &r2, 1, 1)};
  n = tnode(&t, DML_OP_RANGE, "range", 3, ri, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "i64[3]");
  CHECK(n->outputs[0]->sym_data && n->outputs[0]->sym_data->n == 3 &&
        n->outputs[0]->sym_data->elems[2].value == 8);
  int64_t m1 = -1;
  dml_ir_value_t *ri2[3] = {ti64(&t, &r1, 1, 1), ti64(&t, &r0, 1, 1),
                            ti64(&t, &m1, 1, 1)};
  n = tnode(&t, DML_OP_RANGE, "range_down", 3, ri2, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "i64[9]");
  float f[3] = {0.0f, 1.0f, 0.25f};
  dml_ir_value_t *rf[3] = {NULL, NULL, NULL};
  int64_t d0[1] = {0};
  for (int i = 0; i < 3; i++) {
    dml_type_t ty = dml_type_static(DML_DTYPE_F32, 0, d0);
    CHECK_OK(dml_ir_module_add_constant(t.m, "rf", &ty, &f[i], 4, &rf[i]));
  }
  n = tnode(&t, DML_OP_RANGE, "range_f", 3, rf, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[4]");
  /* Range(0, Shape(x)[1]) -> symbolic length */
  dml_ir_value_t *x = targ(&t, "x", "f32[3,batch]");
  dml_ir_node_t *sh2 = tnode(&t, DML_OP_SHAPE, "shape", 1, &x, 1);
  CHECK_OK(dml_ir_node_set_attr_int(sh2, "start", 1));
  INFER_OK(&t, sh2);
  CHECK_TYPE(&t, sh2->outputs[0], "i64[1]");
  dml_ir_node_t *sq = tnode(&t, DML_OP_SQUEEZE, "sq", 1, &sh2->outputs[0], 1);
  INFER_OK(&t, sq);
  CHECK_TYPE(&t, sq->outputs[0], "i64[]");
  int64_t zero = 0;
  dml_ir_value_t *ri3[3] = {ti64(&t, &zero, 1, 1), sq->outputs[0], ti64(&t, &one, 1, 1)};
  n = tnode(&t, DML_OP_RANGE, "positions", 3, ri3, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "i64[batch]");
  dml_ir_value_t *dyn = targ(&t, "limit", "i64[]");
  dml_ir_value_t *ri4[3] = {ti64(&t, &zero, 1, 1), dyn, ti64(&t, &one, 1, 1)};
  n = tnode(&t, DML_OP_RANGE, "range_dyn", 3, ri4, 1);
  INFER_OK(&t, n); /* no shape bounds it: the module's dynamic_dim_bound */
  CHECK_TYPE(&t, n->outputs[0], "i64[range_dyn.d0]");
  {
    int32_t s0 = dml_ir_module_find_symbol(t.m, "range_dyn.d0");
    CHECK(s0 >= 0 && t.m->symbols[s0].bound == DML_IR_DYNAMIC_DIM_BOUND_DEFAULT);
    CHECK(dml_ir_value_max_elements(t.m, n->outputs[0]) ==
          DML_IR_DYNAMIC_MAX_ELEMENTS_DEFAULT);
    t.m->dynamic_dim_bound = 100;
    INFER_OK(&t, n); /* re-inference keeps the symbol, takes the new bound */
    CHECK_TYPE(&t, n->outputs[0], "i64[range_dyn.d0]");
    CHECK(t.m->symbols[s0].bound == 100);
    t.m->dynamic_dim_bound = 0;
  }
  tm_free(&t);
}

static void test_resize(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,3,10,15]");
  float sc[4] = {1.0f, 1.0f, 2.0f, 0.5f};
  dml_ir_value_t *ri[3] = {x, NULL, tf32(&t, sc, 4)};
  dml_ir_node_t *n = tnode(&t, DML_OP_RESIZE, "up", 3, ri, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,3,20,7]");
  int64_t sz[4] = {1, 3, 32, 32};
  float empty = 0;
  (void)empty;
  dml_ir_value_t *ri2[4] = {x, NULL, NULL, ti64(&t, sz, 4, 0)};
  n = tnode(&t, DML_OP_RESIZE, "sizes", 4, ri2, 1);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[1,3,32,32]");
  int64_t sz2[2] = {20, 20};
  dml_ir_value_t *ri3[4] = {x, NULL, NULL, ti64(&t, sz2, 2, 0)};
  n = tnode(&t, DML_OP_RESIZE, "sizes_axes", 4, ri3, 1);
  int64_t axes[2] = {2, 3};
  CHECK_OK(dml_ir_node_set_attr_ints(n, "axes", axes, 2));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,3,20,20]");
  CHECK_OK(dml_ir_node_set_attr_string(n, "keep_aspect_ratio_policy", "not_larger"));
  INFER_OK(&t, n); /* scale min(2, 4/3) = 4/3: 10 -> 13, 15 -> 20 */
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,3,13,20]");
  float sc2[4] = {1.5f, 1.0f, 1.0f, 1.0f};
  dml_ir_value_t *ri4[3] = {x, NULL, tf32(&t, sc2, 4)};
  n = tnode(&t, DML_OP_RESIZE, "sym_scale", 3, ri4, 1);
  INFER_OK(&t, n); /* floor(batch * 3/2): a derived dim */
  CHECK_TYPE(&t, n->outputs[0], "f32[(3*batch)/2,3,10,15]");
  float sc3[4] = {1e-10f, 1.0f, 1.0f, 1.0f};
  dml_ir_value_t *ri5[3] = {x, NULL, tf32(&t, sc3, 4)};
  n = tnode(&t, DML_OP_RESIZE, "tiny_scale", 3, ri5, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_UNIMPLEMENTED,
              "scaling symbolic dim 0 of f32[batch,3,10,15] by 1.00000001");
  dml_ir_value_t *both[4] = {x, NULL, tf32(&t, sc, 4), ti64(&t, sz, 4, 0)};
  n = tnode(&t, DML_OP_RESIZE, "both", 4, both, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "exactly one of scales and sizes");
  tm_free(&t);
}

static void test_reductions(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,4,5]");
  int64_t ax[2] = {-1, 1};
  dml_ir_node_t *n = unary_axes(&t, DML_OP_REDUCE_SUM, "rs", x, ax, 2);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,1,1]");
  CHECK_OK(dml_ir_node_set_attr_int(n, "keepdims", 0));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch]");
  /* attribute axes (opset < 18), reduce all, noop */
  n = tnode(&t, DML_OP_REDUCE_MEAN, "rm", 1, &x, 1);
  int64_t a0[1] = {0};
  CHECK_OK(dml_ir_node_set_attr_ints(n, "axes", a0, 1));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[1,4,5]");
  n = tnode(&t, DML_OP_REDUCE_MAX, "rall", 1, &x, 1);
  CHECK_OK(dml_ir_node_set_attr_int(n, "keepdims", 0));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[]");
  CHECK_OK(dml_ir_node_set_attr_int(n, "noop_with_empty_axes", 1));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,4,5]");
  int64_t bad[1] = {3};
  n = unary_axes(&t, DML_OP_REDUCE_PROD, "rbad", x, bad, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "axis 3 is out of range for rank 3");
  dml_ir_value_t *dyn = targ(&t, "axes", "i64[1]");
  dml_ir_value_t *di[2] = {x, dyn};
  n = tnode(&t, DML_OP_REDUCE_MIN, "rdyn", 2, di, 1);
  INFER_OK(&t, n); /* keepdims=1: each dim 1 or the input's */
  CHECK_TYPE(&t, n->outputs[0], "f32[rdyn.d0,rdyn.d1,rdyn.d2]");
  CHECK(t.m->symbols[dml_ir_module_find_symbol(t.m, "rdyn.d1")].bound == 4);
  CHECK_OK(dml_ir_node_set_attr_int(n, "keepdims", 0));
  INFER_OK(&t, n); /* one axis removed: rank 2 */
  CHECK(n->outputs[0]->type.rank == 2);
  n = tnode(&t, DML_OP_ARG_MAX, "am", 1, &x, 1);
  CHECK_OK(dml_ir_node_set_attr_int(n, "axis", -1));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "i64[batch,4,1]");
  n = tnode(&t, DML_OP_ARG_MIN, "amin", 1, &x, 1);
  CHECK_OK(dml_ir_node_set_attr_int(n, "keepdims", 0));
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "i64[4,5]");
  tm_free(&t);
}

/* Shape arithmetic: Size, Mul/Div on shape elements, Cast, Shape start/end. */
static void test_sym_arith(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,8,16]");
  dml_ir_node_t *sz = tnode(&t, DML_OP_SIZE, "size", 1, &x, 1);
  INFER_OK(&t, sz);
  CHECK_TYPE(&t, sz->outputs[0], "i64[]");
  CHECK(sz->outputs[0]->sym_data && sz->outputs[0]->sym_data->elems[0].value == 128 &&
        sz->outputs[0]->sym_data->elems[0].sym == t.batch);
  dml_ir_node_t *sh = tnode(&t, DML_OP_SHAPE, "shape", 1, &x, 1);
  CHECK_OK(dml_ir_node_set_attr_int(sh, "end", -1));
  INFER_OK(&t, sh);
  CHECK_TYPE(&t, sh->outputs[0], "i64[2]");
  int64_t k[2] = {2, 4};
  dml_ir_value_t *mi[2] = {sh->outputs[0], ti64(&t, k, 2, 0)};
  dml_ir_node_t *mul = tnode(&t, DML_OP_MUL, "mul", 2, mi, 1);
  INFER_OK(&t, mul);
  dml_ir_node_t *div = tnode(&t, DML_OP_DIV, "div", 2, mi, 1);
  INFER_OK(&t, div);
  dml_ir_node_t *cast = tnode(&t, DML_OP_CAST, "cast", 1, &mul->outputs[0], 1);
  CHECK_OK(dml_ir_node_set_attr_int(cast, "to", 7));
  INFER_OK(&t, cast);
  /* Reshape x into Mul's result: [2*batch, 32] is 64*batch != 128*batch */
  dml_ir_value_t *ri[2] = {x, cast->outputs[0]};
  dml_ir_node_t *r = tnode(&t, DML_OP_RESHAPE, "r", 2, ri, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, r), DML_STATUS_INVALID_ARGUMENT,
              "(128*batch elements) into [2*batch,32] (64*batch elements)");
  /* Div: floor(batch/2) is the derived symbol "batch/2" (and 8/4 = 2), so
   * the Reshape is checked at compile time: batch/2*2 elements are not
   * 128*batch. */
  CHECK(div->outputs[0]->sym_data && div->outputs[0]->sym_data->n == 2 &&
        div->outputs[0]->sym_data->elems[0].sym >= 0 &&
        !strcmp(t.m->symbols[div->outputs[0]->sym_data->elems[0].sym].name, "batch/2") &&
        div->outputs[0]->sym_data->elems[1].value == 2);
  dml_ir_value_t *ri2[2] = {x, div->outputs[0]};
  r = tnode(&t, DML_OP_RESHAPE, "rdiv", 2, ri2, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, r), DML_STATUS_INVALID_ARGUMENT,
              "(128*batch elements) into [batch/2,2]");
  /* Concat [batch*2, 32, 2] from Mul and a constant, then reshape */
  int64_t two = 2;
  dml_ir_value_t *ci[2] = {cast->outputs[0], ti64(&t, &two, 1, 0)};
  dml_ir_node_t *cc = tnode(&t, DML_OP_CONCAT, "cat", 2, ci, 1);
  CHECK_OK(dml_ir_node_set_attr_int(cc, "axis", 0));
  INFER_OK(&t, cc);
  dml_ir_value_t *ri3[2] = {x, cc->outputs[0]};
  r = tnode(&t, DML_OP_RESHAPE, "r3", 2, ri3, 1);
  INFER_OK(&t, r);
  CHECK_TYPE(&t, r->outputs[0], "f32[2*batch,32,2]");
  tm_free(&t);
}

/* A Loop's trip count and cond from float arithmetic (ONNX's Range
 * expansion): Cast(Relu(Ceil(d))) to i64 and to bool record their values. */
static void test_float_to_count(void) {
  tmod_t t;
  tm_init(&t);
  const float d[1] = {-2.5f}, e[1] = {2.5f};
  for (int k = 0; k < 2; k++) {
    dml_ir_value_t *v = tf32(&t, k ? e : d, 1);
    dml_ir_node_t *c = tnode(&t, DML_OP_CEIL, "ceil", 1, &v, 1);
    INFER_OK(&t, c);
    dml_ir_node_t *r = tnode(&t, DML_OP_RELU, "relu", 1, &c->outputs[0], 1);
    INFER_OK(&t, r);
    dml_ir_node_t *n = tnode(&t, DML_OP_CAST, "to_i64", 1, &r->outputs[0], 1);
    CHECK_OK(dml_ir_node_set_attr_int(n, "to", 7));
    INFER_OK(&t, n);
    dml_ir_node_t *b = tnode(&t, DML_OP_CAST, "to_bool", 1, &r->outputs[0], 1);
    CHECK_OK(dml_ir_node_set_attr_int(b, "to", 9));
    INFER_OK(&t, b);
    const dml_ir_sym_data_t *sn = n->outputs[0]->sym_data, *sb = b->outputs[0]->sym_data;
    CHECK(sn && sn->n == 1 && sn->elems[0].sym < 0 && sn->elems[0].value == (k ? 3 : 0));
    CHECK(sb && sb->n == 1 && sb->elems[0].sym < 0 && sb->elems[0].value == k);
  }
  tm_free(&t);
}

/* Malformed nodes never crash: missing inputs, untyped inputs, wrong kinds. */
static void test_malformed(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,4]");
  dml_ir_node_t *r = tnode(&t, DML_OP_RELU, "relu", 1, &x, 1);
  dml_ir_node_t *r2 = tnode(&t, DML_OP_RELU, "relu2", 1, &r->outputs[0], 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, r2), DML_STATUS_FAILED_PRECONDITION,
              "has no known type");
  dml_ir_value_t *ins[2] = {x, NULL};
  dml_ir_node_t *a = tnode(&t, DML_OP_ADD, "add_null", 2, ins, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, a), DML_STATUS_INVALID_ARGUMENT,
              "required input 1 is missing");
  dml_ir_node_t *sm = tnode(&t, DML_OP_SOFTMAX, "sm", 1, &x, 1);
  CHECK_OK(dml_ir_node_set_attr_floats(sm, "axis", NULL, 0));
  CHECK_ERROR(dml_ir_infer_node(t.m, sm), DML_STATUS_INVALID_ARGUMENT,
              "attribute 'axis' must be an int, got floats");
  dml_ir_node_t *fl = tnode(&t, DML_OP_FLATTEN, "fl", 1, &x, 1);
  CHECK_OK(dml_ir_node_set_attr_int(fl, "axis", INT64_MIN));
  CHECK_ERROR(dml_ir_infer_node(t.m, fl), DML_STATUS_INVALID_ARGUMENT, "out of range");
  dml_ir_value_t *big = targ(&t, "big", "f32[4611686018427387904,4]");
  dml_ir_node_t *fl2 = tnode(&t, DML_OP_FLATTEN, "fl2", 1, &big, 1);
  CHECK_OK(dml_ir_node_set_attr_int(fl2, "axis", 0));
  CHECK_ERROR(dml_ir_infer_node(t.m, fl2), DML_STATUS_INVALID_ARGUMENT, "overflows");
  int64_t huge[2] = {INT64_MAX, INT64_MAX};
  dml_ir_value_t *ti[2] = {x, ti64(&t, huge, 2, 0)};
  dml_ir_node_t *tile = tnode(&t, DML_OP_TILE, "tile", 2, ti, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, tile), DML_STATUS_UNIMPLEMENTED, "overflows");
  dml_ir_value_t *y = targ(&t, "y", "f32[3,4]");
  dml_ir_value_t *ti2[2] = {y, ti64(&t, huge, 2, 0)};
  tile = tnode(&t, DML_OP_TILE, "tile2", 2, ti2, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, tile), DML_STATUS_UNIMPLEMENTED, "overflows");
  int64_t pads[4] = {INT64_MAX, 0, 1, 0};
  dml_ir_value_t *pi[2] = {y, ti64(&t, pads, 4, 0)};
  dml_ir_node_t *pad = tnode(&t, DML_OP_PAD, "pad", 2, pi, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, pad), DML_STATUS_INVALID_ARGUMENT, "overflow");
  int64_t rs[2] = {INT64_MAX, INT64_MAX};
  dml_ir_value_t *rsi[2] = {y, ti64(&t, rs, 2, 0)};
  dml_ir_node_t *re = tnode(&t, DML_OP_RESHAPE, "re", 2, rsi, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, re), DML_STATUS_INVALID_ARGUMENT, "overflows");
  int64_t gidx = 7;
  dml_ir_node_t *sh = tnode(&t, DML_OP_SHAPE, "shape", 1, &y, 1);
  INFER_OK(&t, sh);
  dml_ir_value_t *gi[2] = {sh->outputs[0], ti64(&t, &gidx, 1, 1)};
  dml_ir_node_t *g = tnode(&t, DML_OP_GATHER, "g", 2, gi, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, g), DML_STATUS_INVALID_ARGUMENT,
              "index 7 is out of range for 2 elements");
  tm_free(&t);
}

/* Attention's expansion (ONNX 1.23) decides its K/V repeat count from the
 * head counts: Where(Not(Equal(h, kv)) And Equal(Mod(h, kv), 0), h / kv, 1).
 * Mod, Not and And of known contents record theirs, so Expand's shape is
 * static. Mod (fmod 0) takes the divisor's sign. */
static void test_sym_logic_mod(void) {
  tmod_t t;
  tm_init(&t);
  int64_t h = 4, kv = 2, zero = 0, one = 1;
  dml_ir_value_t *hv = ti64(&t, &h, 1, 0), *kvv = ti64(&t, &kv, 1, 0);
  dml_ir_value_t *hk[2] = {hv, kvv};
  dml_ir_node_t *eq = tnode(&t, DML_OP_EQUAL, "eq", 2, hk, 1);
  INFER_OK(&t, eq);
  dml_ir_node_t *nt = tnode(&t, DML_OP_NOT, "not", 1, &eq->outputs[0], 1);
  INFER_OK(&t, nt);
  dml_ir_node_t *md = tnode(&t, DML_OP_MOD, "mod", 2, hk, 1);
  INFER_OK(&t, md);
  dml_ir_value_t *mz[2] = {md->outputs[0], ti64(&t, &zero, 1, 0)};
  dml_ir_node_t *eq0 = tnode(&t, DML_OP_EQUAL, "eq0", 2, mz, 1);
  INFER_OK(&t, eq0);
  dml_ir_value_t *ai[2] = {nt->outputs[0], eq0->outputs[0]};
  dml_ir_node_t *an = tnode(&t, DML_OP_AND, "and", 2, ai, 1);
  INFER_OK(&t, an);
  dml_ir_node_t *dv = tnode(&t, DML_OP_DIV, "div", 2, hk, 1);
  INFER_OK(&t, dv);
  dml_ir_value_t *wi[3] = {an->outputs[0], dv->outputs[0], ti64(&t, &one, 1, 0)};
  dml_ir_node_t *wh = tnode(&t, DML_OP_WHERE, "where", 3, wi, 1);
  INFER_OK(&t, wh);
  const dml_ir_sym_data_t *sd = wh->outputs[0]->sym_data;
  CHECK(sd && sd->n == 1 && sd->elems[0].sym < 0 && sd->elems[0].value == 2);
  sd = nt->outputs[0]->sym_data;
  CHECK(sd && sd->n == 1 && sd->elems[0].value == 1);
  /* Mod's sign: -7 mod 3 = 2, 7 mod -3 = -2, -7 mod -3 = -1 */
  int64_t a[3] = {-7, 7, -7}, b[3] = {3, -3, -3};
  dml_ir_value_t *ab[2] = {ti64(&t, a, 3, 0), ti64(&t, b, 3, 0)};
  dml_ir_node_t *m2 = tnode(&t, DML_OP_MOD, "mod2", 2, ab, 1);
  INFER_OK(&t, m2);
  sd = m2->outputs[0]->sym_data;
  CHECK(sd && sd->n == 3);
  if (sd && sd->n == 3)
    CHECK(sd->elems[0].value == 2 && sd->elems[1].value == -2 &&
          sd->elems[2].value == -1);
  /* fmod = 1 (C's sign rule) is not tracked */
  dml_ir_node_t *m3 = tnode(&t, DML_OP_MOD, "mod3", 2, ab, 1);
  CHECK_OK(dml_ir_node_set_attr_int(m3, "fmod", 1));
  INFER_OK(&t, m3);
  CHECK(m3->outputs[0]->sym_data == NULL);
  tm_free(&t);
}

/* float8: Cast to a float8 `to` code; QuantizeLinear to a float8 zero
 * point's dtype, DequantizeLinear of float8 x to the scale's dtype, and
 * their refusals. */
static void test_float8(void) {
  tmod_t t;
  tm_init(&t);
  dml_ir_value_t *x = targ(&t, "x", "f32[batch,4]");
  dml_ir_node_t *c = tnode(&t, DML_OP_CAST, "c", 1, &x, 1);
  CHECK_OK(dml_ir_node_set_attr_int(c, "to", 18)); /* FLOAT8E4M3FNUZ */
  INFER_OK(&t, c);
  CHECK_TYPE(&t, c->outputs[0], "f8e4m3fnuz[batch,4]");
  dml_ir_value_t *qi[3] = {x, targ(&t, "s", "f32[]"), targ(&t, "z", "f8e5m2[1]")};
  dml_ir_node_t *q = tnode(&t, DML_OP_QUANTIZE_LINEAR, "q", 3, qi, 1);
  INFER_OK(&t, q);
  CHECK_TYPE(&t, q->outputs[0], "f8e5m2[batch,4]");
  dml_ir_value_t *di[2] = {q->outputs[0], targ(&t, "h", "f16[]")};
  dml_ir_node_t *d = tnode(&t, DML_OP_DEQUANTIZE_LINEAR, "d", 2, di, 1);
  INFER_OK(&t, d);
  CHECK_TYPE(&t, d->outputs[0], "f16[batch,4]");
  /* Quantize's x must have the scale's dtype */
  dml_ir_value_t *bi[3] = {x, targ(&t, "s16", "f16[]"), qi[2]};
  dml_ir_node_t *b = tnode(&t, DML_OP_QUANTIZE_LINEAR, "b", 3, bi, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, b), DML_STATUS_INVALID_ARGUMENT,
              "x (f32) must have the scale's dtype (f16)");
  /* the scale is a float of at most 32 bits */
  dml_ir_value_t *ei[2] = {q->outputs[0], targ(&t, "s64", "f64[]")};
  dml_ir_node_t *e = tnode(&t, DML_OP_DEQUANTIZE_LINEAR, "e", 2, ei, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, e), DML_STATUS_INVALID_ARGUMENT,
              "scale must be f32, f16 or bf16, got f64");
  /* blocked float8 dequantization is not supported */
  dml_ir_value_t *ki[2] = {q->outputs[0], qi[1]};
  dml_ir_node_t *k = tnode(&t, DML_OP_DEQUANTIZE_LINEAR, "k", 2, ki, 1);
  CHECK_OK(dml_ir_node_set_attr_int(k, "block_size", 2));
  CHECK_ERROR(dml_ir_infer_node(t.m, k), DML_STATUS_UNIMPLEMENTED,
              "block_size 2 with float8 data is not supported");
  /* Dequantize's zero point has x's dtype */
  dml_ir_value_t *wi[3] = {q->outputs[0], qi[1], targ(&t, "z4", "f8e4m3fn[1]")};
  dml_ir_node_t *w = tnode(&t, DML_OP_DEQUANTIZE_LINEAR, "w", 3, wi, 1);
  CHECK_ERROR(dml_ir_infer_node(t.m, w), DML_STATUS_INVALID_ARGUMENT,
              "zero point must be f8e5m2 as x, got f8e4m3fn");
  /* arithmetic on float8 is refused */
  dml_ir_value_t *ai[2] = {q->outputs[0], q->outputs[0]};
  dml_ir_node_t *a = tnode(&t, DML_OP_ADD, "a", 2, ai, 1);
  dml_status_t st = dml_ir_infer_node(t.m, a);
  CHECK(st != DML_OK);
  dml_status_free(st);
  tm_free(&t);
}

int main(void) {
  RUN(test_exporter_chain);
  RUN(test_reshape);
  RUN(test_slice);
  RUN(test_squeeze_unsqueeze_transpose);
  RUN(test_concat_split_gather);
  RUN(test_expand_tile_pad);
  RUN(test_constant_of_shape_range);
  RUN(test_resize);
  RUN(test_reductions);
  RUN(test_sym_arith);
  RUN(test_float_to_count);
  RUN(test_sym_logic_mod);
  RUN(test_malformed);
  RUN(test_float8);
  return dml_test_finish();
}
