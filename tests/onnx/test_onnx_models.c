/*
 * test_onnx_models.c — imports the shared reference models
 * ($DMLC_SHARED_DIR/models, see its README.md) and checks what the IR holds:
 * node counts by op, globals, parameter element totals, names and symbols.
 */
#include "onnx_test_util.h"

static dml_status_t import_model(const char *name, const dml_onnx_import_options_t *opts,
                                 dml_ir_module_t **out) {
  char rel[256], path[1024];
  snprintf(rel, sizeof(rel), "models/%s", name);
  return dml_onnx_import_file(dml_test_path("DMLC_SHARED_DIR", rel, path, sizeof(path)),
                              opts, out);
}

/* Sums global element counts by flag. */
static void global_totals(const dml_ir_module_t *m, int64_t *param, int64_t *state,
                          int64_t *other) {
  *param = *state = *other = 0;
  for (uint32_t i = 0; i < m->n_globals; i++) {
    const dml_ir_value_t *g = m->globals[i];
    int64_t n = global_numel(m, g);
    if (g->global_flags & DML_IR_GLOBAL_PARAM)
      *param += n;
    else if (g->global_flags & DML_IR_GLOBAL_STATE)
      *state += n;
    else
      *other += n;
  }
}

/* The one argument "input" of type f32[batch, rest...] with batch <= bound,
 * and the one result "logits". */
static void check_io(const dml_ir_module_t *m, int rank, int64_t bound) {
  const dml_ir_function_t *f = fwd((dml_ir_module_t *)m);
  CHECK(f != NULL);
  if (!f) return;
  CHECK(m->n_functions == 1);
  CHECK(f->n_args == 1);
  CHECK(f->n_results == 1);
  if (f->n_args != 1 || f->n_results != 1) return;
  const dml_ir_value_t *in = f->args[0];
  CHECK(strcmp(in->name, "input") == 0);
  CHECK(in->kind == DML_IR_VALUE_ARG);
  CHECK(in->type.dtype == DML_DTYPE_F32);
  CHECK(in->type.rank == rank);
  int32_t batch = dml_ir_module_find_symbol(m, "batch");
  CHECK(batch >= 0);
  CHECK(in->type.dims[0].sym == batch && in->type.dims[0].value == 1);
  if (batch >= 0) CHECK(m->symbols[batch].bound == bound);
  for (int k = 1; k < rank; k++) CHECK(in->type.dims[k].sym < 0);
  const dml_ir_value_t *out = f->results[0];
  CHECK(out->kind == DML_IR_VALUE_RESULT);
  CHECK(out->name && strcmp(out->name, "logits") == 0);
  /* Node results are left for shape inference. */
  CHECK(out->type.rank == DML_RANK_UNKNOWN);
}

static void test_fashion_mlp(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(import_model("fashion_mlp.onnx", NULL, &m));
  if (!m) return;
  check_io(m, 2, 64);
  dml_ir_function_t *f = fwd(m);
  CHECK(dml_ir_function_num_nodes(f) == 6);
  CHECK(count_op(f, DML_OP_FLATTEN) == 1);
  CHECK(count_op(f, DML_OP_GEMM) == 3);
  CHECK(count_op(f, DML_OP_RELU) == 2);
  CHECK(m->n_globals == 6);
  int64_t param, state, other;
  global_totals(m, &param, &state, &other);
  CHECK(param == 235146); /* README: 235,146 parameters */
  CHECK(state == 0 && other == 0);
  /* Attributes are ONNX's, copied. */
  dml_ir_node_t *gemm = producer(f, "logits");
  CHECK(gemm && gemm->op == DML_OP_GEMM);
  if (gemm) {
    CHECK(dml_attr_int(gemm->attrs, gemm->n_attrs, "transB", 0) == 1);
    CHECK(gemm->inputs[1]->kind == DML_IR_VALUE_GLOBAL);
    CHECK(strcmp(gemm->inputs[1]->name, "net.6.weight") == 0);
    CHECK(gemm->inputs[1]->type.rank == 2 && gemm->inputs[1]->type.dims[0].value == 10 &&
          gemm->inputs[1]->type.dims[1].value == 128);
  }
  dml_ir_node_t *flat = node_named(f, "/net/net.0/Flatten");
  CHECK(flat && flat->op == DML_OP_FLATTEN && flat->inputs[0] == f->args[0]);
  if (flat) CHECK(dml_attr_int(flat->attrs, flat->n_attrs, "axis", -99) == 1);
  CHECK(module_well_formed(m));
  dml_ir_module_release(m);
}

static void test_fashion_mlp_untrained_dropout(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(import_model("fashion_mlp_untrained.onnx", NULL, &m));
  if (!m) return;
  check_io(m, 2, 64);
  dml_ir_function_t *f = fwd(m);
  CHECK(count_op(f, DML_OP_DROPOUT) == 1);
  /* The two Constant nodes (ratio, training_mode) are globals, not nodes. */
  CHECK(dml_ir_function_num_nodes(f) == 7);
  CHECK(m->n_globals == 8);
  dml_ir_node_t *d = node_named(f, "/3/Dropout");
  CHECK(d != NULL);
  if (d) {
    CHECK(d->n_inputs == 3);
    CHECK(d->n_outputs == 2);
    const dml_ir_value_t *ratio = d->inputs[1], *training = d->inputs[2];
    CHECK(ratio->kind == DML_IR_VALUE_GLOBAL && ratio->global_flags == 0);
    CHECK(ratio->type.dtype == DML_DTYPE_F32 && ratio->type.rank == 0);
    if (ratio->data) CHECK_NEAR(*(const float *)ratio->data, 0.2, 1e-7);
    CHECK(training->type.dtype == DML_DTYPE_BOOL && training->type.rank == 0);
    if (training->data) CHECK(*(const uint8_t *)training->data == 1);
  }
  int64_t param, state, other;
  global_totals(m, &param, &state, &other);
  CHECK(param == 235146);
  CHECK(other == 2);
  dml_ir_module_release(m);
}

static void test_lenet5(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(import_model("lenet5.onnx", NULL, &m));
  if (!m) return;
  check_io(m, 4, 64);
  dml_ir_function_t *f = fwd(m);
  CHECK(dml_ir_function_num_nodes(f) == 12);
  CHECK(count_op(f, DML_OP_CONV) == 2);
  CHECK(count_op(f, DML_OP_RELU) == 4);
  CHECK(count_op(f, DML_OP_MAX_POOL) == 2);
  CHECK(count_op(f, DML_OP_FLATTEN) == 1);
  CHECK(count_op(f, DML_OP_GEMM) == 3);
  CHECK(m->n_globals == 10);
  int64_t param, state, other;
  global_totals(m, &param, &state, &other);
  CHECK(param == 61706); /* README: 61,706 */
  CHECK(state == 0 && other == 0);
  for (dml_ir_node_t *n = f->first; n; n = n->next)
    if (n->op == DML_OP_CONV) {
      size_t k = 0;
      const int64_t *ks = dml_attr_ints(n->attrs, n->n_attrs, "kernel_shape", &k);
      CHECK(ks && k == 2 && ks[0] == 5 && ks[1] == 5);
    }
  dml_ir_module_release(m);
}

static void test_resnet_small(void) {
  dml_ir_module_t *m = NULL;
  dml_onnx_import_options_t opts = {.batch_bound = 256};
  CHECK_OK(import_model("resnet_small.onnx", &opts, &m));
  if (!m) return;
  check_io(m, 4, 256);
  dml_ir_function_t *f = fwd(m);
  CHECK(dml_ir_function_num_nodes(f) == 31);
  CHECK(count_op(f, DML_OP_CONV) == 9);
  CHECK(count_op(f, DML_OP_BATCH_NORMALIZATION) == 9);
  CHECK(count_op(f, DML_OP_RELU) == 7);
  CHECK(count_op(f, DML_OP_ADD) == 3);
  CHECK(count_op(f, DML_OP_GLOBAL_AVERAGE_POOL) == 1);
  CHECK(count_op(f, DML_OP_FLATTEN) == 1);
  CHECK(count_op(f, DML_OP_GEMM) == 1);
  /* The exporter stored BN weights/biases (and running stats) with equal
   * values once and hands them out through 12 Identity nodes; the importer
   * turns each into its own copy of the weight (no node left). */
  CHECK(count_op(f, DML_OP_IDENTITY) == 0);
  CHECK(m->n_globals == 47);
  /* So the trainable count is PyTorch's parameter count, the README's
   * 78,042; the BatchNormalization running mean/var are STATE. */
  int64_t param, state, other;
  global_totals(m, &param, &state, &other);
  CHECK(param == 78042); /* README: 78,042 */
  CHECK(state == 672);
  CHECK(other == 0);
  int n_state = 0;
  for (uint32_t i = 0; i < m->n_globals; i++)
    if (m->globals[i]->global_flags & DML_IR_GLOBAL_STATE) {
      n_state++;
      CHECK(strstr(m->globals[i]->name, "running_") != NULL ||
            strstr(m->globals[i]->name, "Identity") != NULL);
    }
  CHECK(n_state == 18);
  dml_ir_node_t *bn = node_named(f, "/stem/stem.1/BatchNormalization");
  CHECK(bn && bn->n_inputs == 5);
  if (bn) {
    CHECK_NEAR(dml_attr_float(bn->attrs, bn->n_attrs, "epsilon", 0), 1e-5, 1e-12);
    CHECK(bn->inputs[3]->global_flags == DML_IR_GLOBAL_STATE);
  }
  CHECK(module_well_formed(m));
  dml_ir_module_release(m);
}

int main(void) {
  RUN(test_fashion_mlp);
  RUN(test_fashion_mlp_untrained_dropout);
  RUN(test_lenet5);
  RUN(test_resnet_small);
  return dml_test_finish();
}
