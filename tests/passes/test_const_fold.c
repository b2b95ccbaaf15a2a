/* Tests of const-fold (with dce where the pass leaves dead code for it):
 * folding with the reference kernels, what is not folded (parameters,
 * function results), Identity/Dropout forwarding, Reshape targets resolved
 * from inferred types, symbolic contents turned into constants, and kernel
 * errors reported with the node. Types are set by hand, as shape inference
 * would set them. */
#include <stdint.h>
#include <string.h>

#include "dml_ir.h"
#include "dml_passes.h"
#include "dml_test.h"

static dml_type_t ty(dml_dtype_t dt, int32_t rank, const int64_t *dims) {
  return dml_type_static(dt, rank, dims);
}

static dml_ir_node_t *node(dml_ir_function_t *f, dml_op_t op, const char *name,
                           uint32_t n_in, dml_ir_value_t *const *in, dml_type_t out) {
  dml_ir_node_t *n = NULL;
  CHECK_OK(dml_ir_node_create(f, op, name, n_in, in, 1, NULL, &n));
  if (n) n->outputs[0]->type = out;
  return n;
}

static dml_ir_value_t *global(dml_ir_module_t *m, const char *name, dml_type_t t,
                              const void *data, size_t bytes, uint32_t flags) {
  dml_ir_value_t *g = NULL;
  CHECK_OK(dml_ir_module_add_global(m, name, &t, data, bytes, flags, &g));
  return g;
}

static dml_pass_options_t no_opts(void) {
  dml_pass_options_t o;
  memset(&o, 0, sizeof(o));
  return o;
}

static void test_folds_constant_chain(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_ir_module_create(&m));
  int64_t four = 4;
  dml_type_t t = ty(DML_DTYPE_F32, 1, &four);
  float ad[4] = {1, 2, 3, 4}, bd[4] = {10, 20, 30, 40};
  dml_ir_value_t *a = global(m, "a", t, ad, sizeof(ad), 0);
  dml_ir_value_t *b = global(m, "b", t, bd, sizeof(bd), 0);
  dml_ir_function_t *f = NULL;
  CHECK_OK(dml_ir_function_create(m, "forward", &f));
  dml_ir_value_t *x = NULL;
  CHECK_OK(dml_ir_function_add_arg(f, "x", &t, &x));
  dml_ir_value_t *ab[2] = {a, b};
  dml_ir_node_t *add = node(f, DML_OP_ADD, "add", 2, ab, t);
  dml_ir_node_t *neg = node(f, DML_OP_NEG, "neg", 1, &add->outputs[0], t);
  dml_ir_value_t *xm[2] = {x, neg->outputs[0]};
  dml_ir_node_t *mul = node(f, DML_OP_MUL, "mul", 2, xm, t);
  CHECK_OK(dml_ir_function_set_results(f, 1, &mul->outputs[0]));

  dml_pass_options_t o = no_opts();
  CHECK_OK(dml_pass_const_fold(m, &o));
  CHECK(dml_ir_function_num_nodes(f) == 1);
  CHECK(f->first == mul);
  const dml_ir_value_t *c = mul->inputs[1];
  CHECK(c->kind == DML_IR_VALUE_GLOBAL && c->data && c->data_bytes == 16);
  CHECK(dml_type_equal(&c->type, &t));
  if (c->data) {
    const float *v = (const float *)c->data;
    CHECK(v[0] == -11 && v[1] == -22 && v[2] == -33 && v[3] == -44);
  }
  CHECK_OK(dml_pass_dce(m, &o));
  CHECK(m->n_globals == 1 && m->globals[0] == c); /* a and b are gone */
  dml_ir_module_release(m);
}

static void test_keeps_params_and_results(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_ir_module_create(&m));
  int64_t two = 2;
  dml_type_t t = ty(DML_DTYPE_F32, 1, &two);
  float wd[2] = {-1, 1};
  dml_ir_value_t *w = global(m, "w", t, wd, sizeof(wd), DML_IR_GLOBAL_PARAM);
  dml_ir_value_t *k = global(m, "k", t, wd, sizeof(wd), 0);
  dml_ir_function_t *f = NULL;
  CHECK_OK(dml_ir_function_create(m, "forward", &f));
  /* Relu(param): a parameter changes during training, so it stays. */
  dml_ir_node_t *r = node(f, DML_OP_RELU, "r", 1, &w, t);
  /* Abs(constant) is a function result: it keeps its node (and name). */
  dml_ir_node_t *ab = node(f, DML_OP_ABS, "abs", 1, &k, t);
  dml_ir_value_t *res[2] = {r->outputs[0], ab->outputs[0]};
  CHECK_OK(dml_ir_function_set_results(f, 2, res));
  dml_pass_options_t o = no_opts();
  CHECK_OK(dml_pass_const_fold(m, &o));
  CHECK(dml_ir_function_num_nodes(f) == 2);
  CHECK(m->n_globals == 2);
  dml_ir_module_release(m);
}

static void test_forwards_identity_and_dropout(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_ir_module_create(&m));
  int64_t three = 3;
  dml_type_t t = ty(DML_DTYPE_F32, 1, &three);
  float ratio = 0.5f;
  dml_ir_value_t *rg = global(m, "ratio", ty(DML_DTYPE_F32, 0, NULL), &ratio, 4, 0);
  dml_ir_function_t *f = NULL;
  CHECK_OK(dml_ir_function_create(m, "forward", &f));
  dml_ir_value_t *x = NULL;
  CHECK_OK(dml_ir_function_add_arg(f, "x", &t, &x));
  dml_ir_node_t *id = node(f, DML_OP_IDENTITY, "id", 1, &x, t);
  dml_ir_value_t *dr_in[2] = {id->outputs[0], rg};
  dml_ir_node_t *dr = node(f, DML_OP_DROPOUT, "drop", 2, dr_in, t);
  dml_ir_node_t *relu = node(f, DML_OP_RELU, "relu", 1, &dr->outputs[0], t);
  /* An Identity that is the function result stays: it carries the name. */
  dml_ir_node_t *out = node(f, DML_OP_IDENTITY, "out", 1, &relu->outputs[0], t);
  CHECK_OK(dml_ir_function_set_results(f, 1, &out->outputs[0]));
  dml_pass_options_t o = no_opts();
  CHECK_OK(dml_pass_const_fold(m, &o));
  CHECK(dml_ir_function_num_nodes(f) == 2);
  CHECK(f->first == relu && relu->inputs[0] == x);
  CHECK(f->last == out);
  dml_ir_module_release(m);
}

/* x: f32[batch,4,4]; Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1]))
 * as exporters write x.view(x.size(0), -1). */
static void test_resolves_reshape_chain(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_ir_module_create(&m));
  int32_t batch = -1;
  CHECK_OK(dml_ir_module_add_symbol(m, "batch", 8, &batch));
  int64_t zero = 0, minus1 = -1, one = 1, three = 3, two = 2;
  dml_ir_value_t *g0 = global(m, "zero", ty(DML_DTYPE_I64, 0, NULL), &zero, 8, 0);
  dml_ir_value_t *ax = global(m, "axes", ty(DML_DTYPE_I64, 1, &one), &zero, 8, 0);
  dml_ir_value_t *m1 = global(m, "m1", ty(DML_DTYPE_I64, 1, &one), &minus1, 8, 0);
  dml_ir_function_t *f = NULL;
  CHECK_OK(dml_ir_function_create(m, "forward", &f));
  int64_t dims[3] = {1, 4, 4};
  dml_type_t xt = ty(DML_DTYPE_F32, 3, dims);
  xt.dims[0].sym = batch;
  dml_ir_value_t *x = NULL;
  CHECK_OK(dml_ir_function_add_arg(f, "x", &xt, &x));
  dml_ir_node_t *sh = node(f, DML_OP_SHAPE, "shape", 1, &x, ty(DML_DTYPE_I64, 1, &three));
  dml_ir_value_t *gi[2] = {sh->outputs[0], g0};
  dml_ir_node_t *ga = node(f, DML_OP_GATHER, "gather", 2, gi, ty(DML_DTYPE_I64, 0, NULL));
  dml_ir_value_t *ui[2] = {ga->outputs[0], ax};
  dml_ir_node_t *un =
      node(f, DML_OP_UNSQUEEZE, "unsq", 2, ui, ty(DML_DTYPE_I64, 1, &one));
  dml_ir_value_t *ci[2] = {un->outputs[0], m1};
  dml_ir_node_t *cc = node(f, DML_OP_CONCAT, "concat", 2, ci, ty(DML_DTYPE_I64, 1, &two));
  CHECK_OK(dml_ir_node_set_attr_int(cc, "axis", 0));
  int64_t rdims[2] = {1, 16};
  dml_type_t rt = ty(DML_DTYPE_F32, 2, rdims);
  rt.dims[0].sym = batch;
  dml_ir_value_t *ri[2] = {x, cc->outputs[0]};
  dml_ir_node_t *rs = node(f, DML_OP_RESHAPE, "reshape", 2, ri, rt);
  dml_ir_node_t *relu = node(f, DML_OP_RELU, "relu", 1, &rs->outputs[0], rt);
  CHECK_OK(dml_ir_function_set_results(f, 1, &relu->outputs[0]));

  dml_pass_options_t o = no_opts();
  CHECK_OK(dml_pass_const_fold(m, &o));
  CHECK_OK(dml_pass_dce(m, &o));
  CHECK(dml_ir_function_num_nodes(f) == 2);
  CHECK(f->first == rs);
  const dml_ir_value_t *s = rs->inputs[1];
  CHECK(s->kind == DML_IR_VALUE_GLOBAL && s->type.dtype == DML_DTYPE_I64 &&
        s->data_bytes == 16);
  if (s->data_bytes == 16) {
    const int64_t *v = (const int64_t *)s->data;
    CHECK(v[0] == -1 && v[1] == 16);
  }
  CHECK(m->n_globals == 1); /* zero, axes and m1 went with the chain */
  dml_ir_module_release(m);
}

/* Shape of a static tensor is known at compile time (sym_data), and what is
 * computed from it folds in the same walk. */
static void test_materializes_sym_data(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_ir_module_create(&m));
  dml_ir_function_t *f = NULL;
  CHECK_OK(dml_ir_function_create(m, "forward", &f));
  int64_t two = 2, yd[2] = {2, 3};
  dml_type_t yt = ty(DML_DTYPE_F32, 2, yd), vt = ty(DML_DTYPE_F32, 1, &two);
  dml_ir_value_t *y = NULL, *xf = NULL;
  CHECK_OK(dml_ir_function_add_arg(f, "y", &yt, &y));
  CHECK_OK(dml_ir_function_add_arg(f, "xf", &vt, &xf));
  dml_ir_node_t *sh = node(f, DML_OP_SHAPE, "shape", 1, &y, ty(DML_DTYPE_I64, 1, &two));
  dml_ir_sym_data_t *sd = (dml_ir_sym_data_t *)dml_ir_alloc(m, sizeof(*sd));
  sd->n = 2;
  sd->elems = (dml_dim_t *)dml_ir_alloc(m, 2 * sizeof(dml_dim_t));
  sd->elems[0] = (dml_dim_t){2, -1};
  sd->elems[1] = (dml_dim_t){3, -1};
  sh->outputs[0]->sym_data = sd;
  dml_ir_value_t *ai[2] = {sh->outputs[0], sh->outputs[0]};
  dml_ir_node_t *add = node(f, DML_OP_ADD, "add", 2, ai, ty(DML_DTYPE_I64, 1, &two));
  dml_ir_node_t *cast = node(f, DML_OP_CAST, "cast", 1, &add->outputs[0], vt);
  CHECK_OK(dml_ir_node_set_attr_int(cast, "to", 1)); /* TensorProto FLOAT */
  dml_ir_value_t *mi[2] = {xf, cast->outputs[0]};
  dml_ir_node_t *mul = node(f, DML_OP_MUL, "mul", 2, mi, vt);
  CHECK_OK(dml_ir_function_set_results(f, 1, &mul->outputs[0]));
  dml_pass_options_t o = no_opts();
  CHECK_OK(dml_pass_const_fold(m, &o));
  CHECK(dml_ir_function_num_nodes(f) == 1 && f->first == mul);
  const dml_ir_value_t *c = mul->inputs[1];
  CHECK(c->kind == DML_IR_VALUE_GLOBAL && c->data_bytes == 8);
  if (c->data_bytes == 8) {
    const float *v = (const float *)c->data;
    CHECK(v[0] == 4 && v[1] == 6);
  }
  dml_ir_module_release(m);
}

static void test_kernel_error_names_node(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_ir_module_create(&m));
  int64_t three = 3, one = 1, five = 5;
  float d[3] = {1, 2, 3};
  dml_ir_value_t *data = global(m, "data", ty(DML_DTYPE_F32, 1, &three), d, 12, 0);
  dml_ir_value_t *idx = global(m, "idx", ty(DML_DTYPE_I64, 1, &one), &five, 8, 0);
  dml_ir_function_t *f = NULL;
  CHECK_OK(dml_ir_function_create(m, "forward", &f));
  dml_ir_value_t *x = NULL;
  dml_type_t t1 = ty(DML_DTYPE_F32, 1, &one);
  CHECK_OK(dml_ir_function_add_arg(f, "x", &t1, &x));
  dml_ir_value_t *gi[2] = {data, idx};
  dml_ir_node_t *g = node(f, DML_OP_GATHER, "bad_gather", 2, gi, t1);
  dml_ir_value_t *ai[2] = {x, g->outputs[0]};
  dml_ir_node_t *add = node(f, DML_OP_ADD, "add", 2, ai, t1);
  CHECK_OK(dml_ir_function_set_results(f, 1, &add->outputs[0]));
  dml_pass_options_t o = no_opts();
  CHECK_ERROR(dml_pass_const_fold(m, &o), DML_STATUS_OUT_OF_RANGE,
              "evaluating node 'bad_gather' (Gather)");
  dml_ir_module_release(m);
}

int main(void) {
  RUN(test_folds_constant_chain);
  RUN(test_keeps_params_and_results);
  RUN(test_forwards_identity_and_dropout);
  RUN(test_resolves_reshape_chain);
  RUN(test_materializes_sym_data);
  RUN(test_kernel_error_names_node);
  return dml_test_finish();
}
