/*
 * test_onnx_import.c — the ONNX importer on small fixtures
 * (tests/onnx/fixtures, made by scripts/gen_onnx_fixtures.py): every
 * initializer storage form, external data, Constant nodes, older-opset
 * normalizations, and every user-facing error with its message.
 */
#include "dml_ir_infer.h"
#include "onnx_test_util.h"

static const dml_ir_value_t *global(const dml_ir_module_t *m, const char *name) {
  const dml_ir_value_t *g = dml_ir_module_find_global(m, name);
  if (!g) fprintf(stderr, "no global '%s'\n", name);
  return g;
}

static int is_i64_const(const dml_ir_value_t *v, const int64_t *want, size_t n) {
  if (!v || v->kind != DML_IR_VALUE_GLOBAL || v->type.dtype != DML_DTYPE_I64 ||
      v->type.rank != 1 || v->type.dims[0].value != (int64_t)n || !v->data)
    return 0;
  return n == 0 || memcmp(v->data, want, n * sizeof(int64_t)) == 0;
}

static int is_f32_scalar(const dml_ir_value_t *v, float want) {
  return v && v->kind == DML_IR_VALUE_GLOBAL && v->type.dtype == DML_DTYPE_F32 &&
         v->type.rank == 0 && v->data && *(const float *)v->data == want;
}

static const char *attr_s(const dml_ir_node_t *n, const char *name) {
  return dml_attr_string(n->attrs, n->n_attrs, name, "<absent>");
}

/* ---- initializers ---- */

static void test_typed_fields(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(import_fixture("typed_fields.onnx", &m));
  if (!m) return;
  dml_ir_function_t *f = fwd(m);
  CHECK(m->n_globals == 18);
  const dml_ir_value_t *g;
  if ((g = global(m, "w_f32"))) {
    const float want[4] = {1.5f, -2.0f, 3.25f, 4.0f};
    CHECK(g->type.dtype == DML_DTYPE_F32 && g->type.rank == 2 && g->data_bytes == 16);
    CHECK(memcmp(g->data, want, 16) == 0);
    CHECK(g->global_flags == DML_IR_GLOBAL_PARAM);
  }
  if ((g = global(m, "w_f64"))) {
    const double want[3] = {0.5, -1.25, 1e10};
    CHECK(g->type.dtype == DML_DTYPE_F64 && memcmp(g->data, want, 24) == 0);
    CHECK(g->global_flags == DML_IR_GLOBAL_PARAM);
  }
  if ((g = global(m, "w_i32"))) {
    const int32_t want[3] = {7, -8, 2147483647};
    CHECK(g->type.dtype == DML_DTYPE_I32 && memcmp(g->data, want, 12) == 0);
    CHECK(g->global_flags == 0);
  }
  if ((g = global(m, "w_i16"))) {
    const int16_t want[2] = {-300, 300};
    CHECK(g->type.dtype == DML_DTYPE_I16 && memcmp(g->data, want, 4) == 0);
  }
  if ((g = global(m, "w_i8"))) {
    const int8_t want[3] = {-128, 0, 127};
    CHECK(g->type.dtype == DML_DTYPE_I8 && memcmp(g->data, want, 3) == 0);
  }
  if ((g = global(m, "w_u16"))) {
    const uint16_t want[2] = {65535, 1};
    CHECK(g->type.dtype == DML_DTYPE_U16 && memcmp(g->data, want, 4) == 0);
  }
  if ((g = global(m, "w_u8"))) {
    const uint8_t want[3] = {0, 200, 255};
    CHECK(g->type.dtype == DML_DTYPE_U8 && memcmp(g->data, want, 3) == 0);
  }
  if ((g = global(m, "w_bool"))) {
    const uint8_t want[4] = {1, 0, 0, 1};
    CHECK(g->type.dtype == DML_DTYPE_BOOL && memcmp(g->data, want, 4) == 0);
    CHECK(g->global_flags == 0);
  }
  if ((g = global(m, "w_f16"))) {
    CHECK(g->type.dtype == DML_DTYPE_F16 && g->data_bytes == 6);
    const uint16_t *h = (const uint16_t *)g->data;
    CHECK(dml_f16_to_f32(h[0]) == 1.0f && dml_f16_to_f32(h[1]) == -2.0f &&
          dml_f16_to_f32(h[2]) == 0.5f);
    CHECK(g->global_flags == DML_IR_GLOBAL_PARAM);
  }
  if ((g = global(m, "w_bf16"))) {
    CHECK(g->type.dtype == DML_DTYPE_BF16 && g->data_bytes == 6);
    const uint16_t *h = (const uint16_t *)g->data;
    CHECK(dml_bf16_to_f32(h[0]) == 1.0f && dml_bf16_to_f32(h[1]) == -2.0f &&
          dml_bf16_to_f32(h[2]) == 0.5f);
  }
  if ((g = global(m, "w_i64"))) {
    const int64_t want[2] = {-(INT64_C(1) << 40), INT64_C(1) << 62};
    CHECK(g->type.dtype == DML_DTYPE_I64 && memcmp(g->data, want, 16) == 0);
  }
  if ((g = global(m, "w_u32"))) {
    const uint32_t want[2] = {4000000000u, 5};
    CHECK(g->type.dtype == DML_DTYPE_U32 && memcmp(g->data, want, 8) == 0);
  }
  if ((g = global(m, "w_u64"))) {
    const uint64_t want[2] = {UINT64_MAX, 3};
    CHECK(g->type.dtype == DML_DTYPE_U64 && memcmp(g->data, want, 16) == 0);
  }
  if ((g = global(m, "w_scalar"))) {
    CHECK(g->type.rank == 0 && g->data && *(const float *)g->data == 42.0f);
  }
  if ((g = global(m, "w_empty"))) {
    CHECK(g->type.rank == 2 && g->type.dims[0].value == 0 && g->type.dims[1].value == 3);
    CHECK(g->data != NULL && g->data_bytes == 0);
  }
  if ((g = global(m, "w_raw"))) {
    const float want[6] = {0, 0.25f, 0.5f, 0.75f, 1.0f, 1.25f};
    CHECK(g->type.dtype == DML_DTYPE_F32 && memcmp(g->data, want, 24) == 0);
  }
  if ((g = global(m, "w_raw_i64"))) {
    const int64_t want[4] = {1, -1, 2, -2};
    CHECK(g->type.dtype == DML_DTYPE_I64 && memcmp(g->data, want, 32) == 0);
  }
  if ((g = global(m, "w_raw_bool"))) {
    const uint8_t want[3] = {1, 0, 1};
    CHECK(g->type.dtype == DML_DTYPE_BOOL && g->data_bytes == 3 &&
          memcmp(g->data, want, 3) == 0);
  }
  /* Graph outputs that are an initializer or the input get an Identity node
   * whose result carries the output's name. */
  CHECK(f->n_args == 1 && f->n_results == 3);
  CHECK(dml_ir_function_num_nodes(f) == 3);
  CHECK(count_op(f, DML_OP_IDENTITY) == 2);
  if (f->n_results == 3) {
    for (int i = 0; i < 3; i++) CHECK(f->results[i]->kind == DML_IR_VALUE_RESULT);
    CHECK(strcmp(f->results[0]->name, "y") == 0);
    CHECK(f->results[0]->def->op == DML_OP_ADD);
    CHECK(f->results[0]->def->name && strcmp(f->results[0]->def->name, "add0") == 0);
    CHECK(strcmp(f->results[1]->name, "w_f64") == 0);
    CHECK(f->results[1]->def->op == DML_OP_IDENTITY &&
          f->results[1]->def->inputs[0] == global(m, "w_f64"));
    CHECK(strcmp(f->results[2]->name, "x") == 0);
    CHECK(f->results[2]->def->op == DML_OP_IDENTITY &&
          f->results[2]->def->inputs[0] == f->args[0]);
  }
  dml_ir_module_release(m);
}

static void test_external_data(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(import_fixture("external.onnx", &m));
  if (!m) return;
  const dml_ir_value_t *g;
  if ((g = global(m, "w"))) {
    const float want[6] = {1, 2, 3, 4, 5, 6};
    CHECK(g->data_bytes == 24 && memcmp(g->data, want, 24) == 0);
  }
  if ((g = global(m, "tail"))) {
    const int64_t want[2] = {10, 20};
    CHECK(g->type.dtype == DML_DTYPE_I64 && g->data_bytes == 16 &&
          memcmp(g->data, want, 16) == 0);
  }
  /* A dim with neither value nor param gets its own symbol. */
  dml_ir_function_t *f = fwd(m);
  int32_t s = dml_ir_module_find_symbol(m, "x_dim0");
  CHECK(s >= 0);
  if (s >= 0) CHECK(m->symbols[s].bound == 64);
  CHECK(f->args[0]->type.dims[0].sym == s && f->args[0]->type.dims[1].value == 2);
  dml_ir_module_release(m);
}

static void test_external_data_errors(void) {
  dml_ir_module_t *m = NULL;
  CHECK_ERROR(
      import_fixture("external_escape.onnx", &m), DML_STATUS_INVALID_ARGUMENT,
      "initializer 'w': external data location '../fixtures/external.bin' is absolute "
      "or escapes the model directory");
  CHECK_ERROR(import_fixture("external_absolute.onnx", &m), DML_STATUS_INVALID_ARGUMENT,
              "external data location '/etc/hostname' is absolute or escapes the model "
              "directory");
  CHECK_ERROR(import_fixture("external_range.onnx", &m), DML_STATUS_INVALID_ARGUMENT,
              "external data range is beyond the end of 'external.bin'");
  CHECK_ERROR(import_fixture("external_range.onnx", &m), DML_STATUS_INVALID_ARGUMENT,
              "offset 40 + length 24 > file size 56");
  CHECK_ERROR(import_fixture("external_missing.onnx", &m), DML_STATUS_NOT_FOUND,
              "initializer 'w': cannot open external data file 'missing.bin'");
  CHECK_ERROR(import_fixture("external_badlen.onnx", &m), DML_STATUS_INVALID_ARGUMENT,
              "external data length does not match the tensor's dims");
  CHECK_ERROR(import_fixture("external_badlen.onnx", &m), DML_STATUS_INVALID_ARGUMENT,
              "length 20 bytes, dims and dtype need 24");
  /* From memory with no base directory, external data is refused. */
  char path[1024];
  size_t len = 0;
  uint8_t *bytes = read_all(fixture("external.onnx", path, sizeof(path)), &len);
  CHECK(bytes != NULL);
  if (bytes) {
    CHECK_ERROR(
        dml_onnx_import_memory(bytes, len, NULL, NULL, &m), DML_STATUS_INVALID_ARGUMENT,
        "initializer 'w': external data not allowed: the model was loaded from memory "
        "without a base directory");
    free(bytes);
  }
  CHECK(m == NULL);
}

static void test_constants(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(import_fixture("constants.onnx", &m));
  if (!m) return;
  dml_ir_function_t *f = fwd(m);
  CHECK(m->n_globals == 5);
  /* No Constant node: Mul, Add, Reshape and two Identity for outputs. */
  CHECK(dml_ir_function_num_nodes(f) == 5);
  const dml_ir_value_t *g;
  if ((g = global(m, "c_tensor"))) {
    const float want[2] = {2, 3};
    CHECK(g->type.rank == 2 && g->type.dims[0].value == 1 && g->type.dims[1].value == 2);
    CHECK(memcmp(g->data, want, 8) == 0 && g->global_flags == 0);
  }
  CHECK(is_f32_scalar(global(m, "c_float"), 0.25f));
  if ((g = global(m, "c_floats"))) {
    const float want[3] = {1, 2, 3};
    CHECK(g->type.dtype == DML_DTYPE_F32 && g->type.rank == 1 &&
          memcmp(g->data, want, 12) == 0);
  }
  if ((g = global(m, "c_int"))) {
    CHECK(g->type.dtype == DML_DTYPE_I64 && g->type.rank == 0 &&
          *(const int64_t *)g->data == 7);
  }
  const int64_t ints[2] = {-1, 2};
  CHECK(is_i64_const(global(m, "c_ints"), ints, 2));
  dml_ir_node_t *r = node_named(f, "reshape");
  CHECK(r && r->op == DML_OP_RESHAPE && r->inputs[1] == global(m, "c_ints"));
  dml_ir_node_t *mul = node_named(f, "mul");
  CHECK(mul && mul->inputs[0] == f->args[0] && mul->inputs[1] == global(m, "c_tensor"));
  CHECK(f->n_results == 3 && strcmp(f->results[1]->name, "c_int") == 0 &&
        f->results[1]->kind == DML_IR_VALUE_RESULT);
  dml_ir_module_release(m);
}

static void test_initializer_also_input(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(import_fixture("init_as_input.onnx", &m));
  if (!m) return;
  dml_ir_function_t *f = fwd(m);
  CHECK(f->n_args == 1 && strcmp(f->args[0]->name, "x") == 0);
  const dml_ir_value_t *w = global(m, "w");
  CHECK(w && w->global_flags == DML_IR_GLOBAL_PARAM);
  dml_ir_node_t *mm = node_named(f, "mm");
  CHECK(mm && mm->inputs[1] == w);
  dml_ir_module_release(m);
}

/* ---- older opsets ---- */

static void test_opset11_attribute_forms(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(import_fixture("opset11.onnx", &m));
  if (!m) return;
  dml_ir_function_t *f = fwd(m);
  const int64_t zero[1] = {0}, rm_axes[2] = {1, -1}, two[1] = {2}, split[2] = {1, 2};
  dml_ir_node_t *n;
  if ((n = node_named(f, "unsq"))) {
    CHECK(n->op == DML_OP_UNSQUEEZE && n->n_inputs == 2 &&
          is_i64_const(n->inputs[1], zero, 1));
    CHECK(dml_ir_node_attr(n, "axes") == NULL);
  } else
    CHECK(!"unsq");
  if ((n = node_named(f, "sq"))) {
    CHECK(n->op == DML_OP_SQUEEZE && n->n_inputs == 2 &&
          is_i64_const(n->inputs[1], zero, 1));
  } else
    CHECK(!"sq");
  if ((n = node_named(f, "sq_all"))) CHECK(n->n_inputs == 1);
  if ((n = node_named(f, "rmean"))) {
    CHECK(n->op == DML_OP_REDUCE_MEAN && n->n_inputs == 2 &&
          is_i64_const(n->inputs[1], rm_axes, 2));
    CHECK(dml_attr_int(n->attrs, n->n_attrs, "keepdims", 1) == 0);
    CHECK(dml_ir_node_attr(n, "axes") == NULL);
  } else
    CHECK(!"rmean");
  if ((n = node_named(f, "rsum"))) {
    CHECK(n->op == DML_OP_REDUCE_SUM && n->n_inputs == 2 &&
          is_i64_const(n->inputs[1], two, 1));
  } else
    CHECK(!"rsum");
  if ((n = node_named(f, "rmax"))) CHECK(n->op == DML_OP_REDUCE_MAX && n->n_inputs == 1);
  if ((n = node_named(f, "split"))) {
    CHECK(n->op == DML_OP_SPLIT && n->n_inputs == 2 &&
          is_i64_const(n->inputs[1], split, 2));
    CHECK(n->n_outputs == 2 && strcmp(n->outputs[0]->name, "sp0") == 0 &&
          strcmp(n->outputs[1]->name, "sp1") == 0);
    CHECK(dml_attr_int(n->attrs, n->n_attrs, "axis", 0) == 1);
    CHECK(dml_ir_node_attr(n, "split") == NULL);
  } else
    CHECK(!"split");
  if ((n = node_named(f, "resize"))) {
    CHECK(n->op == DML_OP_RESIZE && n->n_inputs == 3);
    CHECK(strcmp(attr_s(n, "mode"), "linear") == 0);
  } else
    CHECK(!"resize");
  CHECK(module_well_formed(m));
  dml_ir_module_release(m);
}

static void test_opset7_attribute_forms(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(import_fixture("opset7.onnx", &m));
  if (!m) return;
  dml_ir_function_t *f = fwd(m);
  dml_ir_node_t *n;
  if ((n = node_named(f, "bn"))) {
    CHECK(n->op == DML_OP_BATCH_NORMALIZATION && n->n_inputs == 5);
    CHECK(dml_ir_node_attr(n, "spatial") == NULL);
    CHECK_NEAR(dml_attr_float(n->attrs, n->n_attrs, "epsilon", 0), 1e-3, 1e-9);
    CHECK(n->inputs[3]->global_flags == DML_IR_GLOBAL_STATE);
    CHECK(n->inputs[1]->global_flags == DML_IR_GLOBAL_PARAM);
  } else
    CHECK(!"bn");
  if ((n = node_named(f, "clip"))) {
    CHECK(n->op == DML_OP_CLIP && n->n_inputs == 3);
    CHECK(is_f32_scalar(n->inputs[1], -1.0f) && is_f32_scalar(n->inputs[2], 6.0f));
    CHECK(n->n_attrs == 0);
  } else
    CHECK(!"clip");
  if ((n = node_named(f, "clip_hi"))) {
    CHECK(n->n_inputs == 3 && n->inputs[1] == NULL && is_f32_scalar(n->inputs[2], 3.0f));
  } else
    CHECK(!"clip_hi");
  if ((n = node_named(f, "slice"))) {
    const int64_t st[2] = {0, 1}, en[2] = {1, 3}, ax[2] = {0, 2};
    CHECK(n->op == DML_OP_SLICE && n->n_inputs == 4);
    CHECK(is_i64_const(n->inputs[1], st, 2) && is_i64_const(n->inputs[2], en, 2) &&
          is_i64_const(n->inputs[3], ax, 2));
    CHECK(n->n_attrs == 0);
  } else
    CHECK(!"slice");
  if ((n = node_named(f, "pad"))) {
    const int64_t pads[8] = {0, 0, 1, 1, 0, 0, 1, 1};
    CHECK(n->op == DML_OP_PAD && n->n_inputs == 3);
    CHECK(is_i64_const(n->inputs[1], pads, 8) && is_f32_scalar(n->inputs[2], 1.5f));
    CHECK(strcmp(attr_s(n, "mode"), "constant") == 0);
    CHECK(dml_ir_node_attr(n, "pads") == NULL && dml_ir_node_attr(n, "value") == NULL);
  } else
    CHECK(!"pad");
  if ((n = node_named(f, "drop"))) {
    CHECK(n->op == DML_OP_DROPOUT && n->n_inputs == 2 &&
          is_f32_scalar(n->inputs[1], 0.25f));
    CHECK(dml_ir_node_attr(n, "ratio") == NULL);
  } else
    CHECK(!"drop");
  if ((n = node_named(f, "up"))) {
    CHECK(n->op == DML_OP_RESIZE && n->n_inputs == 3 && n->inputs[1] == NULL);
    const dml_ir_value_t *s = n->inputs[2];
    const float want[4] = {1, 1, 2, 2};
    CHECK(s && s->type.dtype == DML_DTYPE_F32 && s->type.rank == 1 && s->data &&
          memcmp(s->data, want, 16) == 0);
    CHECK(strcmp(attr_s(n, "mode"), "nearest") == 0);
    CHECK(strcmp(attr_s(n, "coordinate_transformation_mode"), "asymmetric") == 0);
    CHECK(strcmp(attr_s(n, "nearest_mode"), "floor") == 0);
    CHECK(dml_ir_node_attr(n, "scales") == NULL);
  } else
    CHECK(!"up");
  /* Softmax-1 on a node result of unknown rank: the 2-D coercion, spelled
   * out. */
  dml_ir_node_t *y = producer(f, "y");
  CHECK(y && y->op == DML_OP_RESHAPE);
  if (y) {
    dml_ir_node_t *sm = y->inputs[0]->def, *shape = y->inputs[1]->def;
    CHECK(sm && sm->op == DML_OP_SOFTMAX &&
          dml_attr_int(sm->attrs, sm->n_attrs, "axis", 0) == 1);
    CHECK(shape && shape->op == DML_OP_SHAPE);
    dml_ir_node_t *flat = sm ? sm->inputs[0]->def : NULL;
    CHECK(flat && flat->op == DML_OP_FLATTEN &&
          dml_attr_int(flat->attrs, flat->n_attrs, "axis", 0) == 1);
    if (flat && shape) CHECK(flat->inputs[0] == shape->inputs[0]);
    CHECK(f->n_results == 1 && f->results[0] == y->outputs[0]);
  }
  CHECK(module_well_formed(m));
  dml_ir_module_release(m);
}

static void test_opset9_10_forms(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(import_fixture("opset9.onnx", &m));
  if (m) {
    dml_ir_node_t *n = node_named(fwd(m), "up");
    CHECK(n && n->op == DML_OP_RESIZE && n->n_inputs == 3 && n->inputs[1] == NULL &&
          n->inputs[2] == global(m, "scales"));
    if (n) {
      CHECK(strcmp(attr_s(n, "mode"), "linear") == 0);
      CHECK(strcmp(attr_s(n, "coordinate_transformation_mode"), "asymmetric") == 0);
    }
    dml_ir_module_release(m);
    m = NULL;
  }
  CHECK_OK(import_fixture("opset10.onnx", &m));
  if (m) {
    dml_ir_function_t *f = fwd(m);
    dml_ir_node_t *n = node_named(f, "rz");
    CHECK(n && n->op == DML_OP_RESIZE && n->n_inputs == 3 && n->inputs[1] == NULL &&
          n->inputs[2] == global(m, "scales"));
    if (n) {
      CHECK(strcmp(attr_s(n, "mode"), "nearest") == 0);
      CHECK(strcmp(attr_s(n, "coordinate_transformation_mode"), "asymmetric") == 0);
      CHECK(strcmp(attr_s(n, "nearest_mode"), "floor") == 0);
    }
    n = node_named(f, "slice");
    CHECK(n && n->op == DML_OP_SLICE && n->n_inputs == 4 &&
          n->inputs[3] == global(m, "axes"));
    n = node_named(f, "drop");
    CHECK(n && n->op == DML_OP_DROPOUT && n->n_inputs == 2 &&
          is_f32_scalar(n->inputs[1], 0.5f));
    CHECK(module_well_formed(m));
    dml_ir_module_release(m);
  }
}

/* Most supported ops in their opset-13 form: one IR node each, operands and
 * attributes as in the file. */
static void test_ops13(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(import_fixture("ops13.onnx", &m));
  if (!m) return;
  dml_ir_function_t *f = fwd(m);
  static const struct {
    const char *node;
    dml_op_t op;
    uint32_t n_in, n_attrs;
  } want[] = {
      {"conv", DML_OP_CONV, 3, 3},
      {"ct", DML_OP_CONV_TRANSPOSE, 2, 1},
      {"ap", DML_OP_AVERAGE_POOL, 1, 2},
      {"mp", DML_OP_MAX_POOL, 1, 2},
      {"gap", DML_OP_GLOBAL_AVERAGE_POOL, 1, 0},
      {"lr", DML_OP_LEAKY_RELU, 1, 1},
      {"sg", DML_OP_SIGMOID, 1, 0},
      {"th", DML_OP_TANH, 1, 0},
      {"er", DML_OP_ERF, 1, 0},
      {"cl", DML_OP_CLIP, 3, 0},
      {"sq", DML_OP_SQRT, 1, 0},
      {"ex", DML_OP_EXP, 1, 0},
      {"lg", DML_OP_LOG, 1, 0},
      {"sub", DML_OP_SUB, 2, 0},
      {"mul", DML_OP_MUL, 2, 0},
      {"div", DML_OP_DIV, 2, 0},
      {"pw", DML_OP_POW, 2, 0},
      {"relu", DML_OP_RELU, 1, 0},
      {"shape", DML_OP_SHAPE, 1, 0},
      {"gather", DML_OP_GATHER, 2, 1},
      {"unsq", DML_OP_UNSQUEEZE, 2, 0},
      {"concat", DML_OP_CONCAT, 2, 1},
      {"reshape", DML_OP_RESHAPE, 2, 0},
      {"tr", DML_OP_TRANSPOSE, 1, 1},
      {"mm", DML_OP_MATMUL, 2, 0},
      {"gemm", DML_OP_GEMM, 3, 2},
      {"smx", DML_OP_SOFTMAX, 1, 1},
      {"lsm", DML_OP_LOG_SOFTMAX, 1, 1},
      {"slice", DML_OP_SLICE, 4, 0},
      {"rsum", DML_OP_REDUCE_SUM, 2, 1},
      {"rmean", DML_OP_REDUCE_MEAN, 2, 0},
      {"rmax", DML_OP_REDUCE_MAX, 2, 1},
      {"sqz", DML_OP_SQUEEZE, 2, 0},
      {"eq", DML_OP_EQUAL, 2, 0},
      {"where", DML_OP_WHERE, 3, 0},
      {"cast", DML_OP_CAST, 1, 1},
      {"gshape", DML_OP_SHAPE, 1, 0},
      {"cos", DML_OP_CONSTANT_OF_SHAPE, 1, 1},
      {"expand", DML_OP_EXPAND, 2, 0},
      {"add", DML_OP_ADD, 2, 0},
      {"resize", DML_OP_RESIZE, 3, 3},
      {"flat", DML_OP_FLATTEN, 1, 1},
      {"ident", DML_OP_IDENTITY, 1, 0},
  };
  size_t n_want = sizeof(want) / sizeof(want[0]);
  CHECK(dml_ir_function_num_nodes(f) == n_want);
  for (size_t i = 0; i < n_want; i++) {
    dml_ir_node_t *n = node_named(f, want[i].node);
    if (!n) {
      fprintf(stderr, "missing node '%s'\n", want[i].node);
      CHECK(n != NULL);
      continue;
    }
    if (n->op != want[i].op || n->n_inputs != want[i].n_in ||
        n->n_attrs != want[i].n_attrs) {
      fprintf(stderr, "node '%s': op %s inputs %u attrs %u\n", want[i].node,
              dml_op_name(n->op), n->n_inputs, n->n_attrs);
      CHECK(!"node as in the file");
    }
    CHECK(n->n_outputs == 1 && n->outputs[0]->name &&
          n->outputs[0]->type.rank == DML_RANK_UNKNOWN);
  }
  dml_ir_node_t *n;
  if ((n = node_named(f, "cast")))
    CHECK(dml_attr_int(n->attrs, n->n_attrs, "to", 0) == 7);
  if ((n = node_named(f, "cos"))) {
    const dml_attr_t *v = dml_ir_node_attr(n, "value");
    CHECK(v && v->kind == DML_ATTR_TENSOR && v->tensor.dtype == DML_DTYPE_F32 &&
          v->tensor.rank == 1 && v->tensor.dims[0] == 1 && v->tensor.data &&
          *(const float *)v->tensor.data == 0.5f);
  }
  if ((n = node_named(f, "lr")))
    CHECK_NEAR(dml_attr_float(n->attrs, n->n_attrs, "alpha", 0), 0.1, 1e-7);
  if ((n = node_named(f, "tr"))) {
    size_t k = 0;
    const int64_t *perm = dml_attr_ints(n->attrs, n->n_attrs, "perm", &k);
    CHECK(perm && k == 2 && perm[0] == 1 && perm[1] == 0);
  }
  if ((n = node_named(f, "resize")))
    CHECK(strcmp(attr_s(n, "nearest_mode"), "floor") == 0);
  if ((n = node_named(f, "rmean"))) {
    const int64_t one[1] = {1};
    CHECK(is_i64_const(n->inputs[1], one, 1));
  }
  CHECK(f->n_args == 1 && f->n_results == 9);
  CHECK(module_well_formed(m));
  dml_ir_module_release(m);
}

static void test_softmax_opset12(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(import_fixture("softmax12.onnx", &m));
  if (!m) return;
  dml_ir_function_t *f = fwd(m);
  CHECK(dml_ir_function_num_nodes(f) == 5);
  /* axis=1 of a rank-3 input: Shape, Flatten(axis=1), Softmax(axis=1),
   * Reshape back. */
  dml_ir_node_t *sm = node_named(f, "sm"), *flat = node_named(f, "sm/flatten"),
                *shape = node_named(f, "sm/shape"), *re = node_named(f, "sm/reshape");
  CHECK(sm && flat && shape && re);
  if (sm && flat && shape && re) {
    CHECK(sm->op == DML_OP_SOFTMAX &&
          dml_attr_int(sm->attrs, sm->n_attrs, "axis", 0) == 1);
    CHECK(flat->op == DML_OP_FLATTEN && flat->inputs[0] == f->args[0] &&
          dml_attr_int(flat->attrs, flat->n_attrs, "axis", 0) == 1);
    CHECK(sm->inputs[0] == flat->outputs[0]);
    CHECK(shape->op == DML_OP_SHAPE && shape->inputs[0] == f->args[0]);
    CHECK(re->op == DML_OP_RESHAPE && re->inputs[0] == sm->outputs[0] &&
          re->inputs[1] == shape->outputs[0]);
    CHECK(strcmp(re->outputs[0]->name, "y") == 0 && f->results[0] == re->outputs[0]);
  }
  /* axis=2 is the input's last dim: one LogSoftmax(axis=-1). */
  dml_ir_node_t *lsm = node_named(f, "lsm");
  CHECK(lsm && lsm->op == DML_OP_LOG_SOFTMAX && lsm->inputs[0] == f->args[0]);
  if (lsm) {
    CHECK(dml_attr_int(lsm->attrs, lsm->n_attrs, "axis", 0) == -1);
    CHECK(f->results[1] == lsm->outputs[0]);
  }
  dml_ir_module_release(m);
}

static void test_unsorted_graph_is_sorted(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(import_fixture("unsorted.onnx", &m));
  if (!m) return;
  dml_ir_function_t *f = fwd(m);
  const char *want[3] = {"first", "second", "third"};
  int i = 0;
  for (dml_ir_node_t *n = f->first; n; n = n->next, i++)
    CHECK(i < 3 && n->name && strcmp(n->name, want[i]) == 0);
  CHECK(i == 3);
  CHECK(module_well_formed(m));
  dml_ir_module_release(m);
}

static void test_batch_bound_option(void) {
  dml_ir_module_t *m = NULL;
  char path[1024];
  dml_onnx_import_options_t opts = {.batch_bound = 8};
  CHECK_OK(
      dml_onnx_import_file(fixture("softmax12.onnx", path, sizeof(path)), &opts, &m));
  if (m) {
    int32_t s = dml_ir_module_find_symbol(m, "batch");
    CHECK(s >= 0 && m->symbols[s].bound == 8);
    dml_ir_module_release(m);
    m = NULL;
  }
  opts.batch_bound = -1;
  CHECK_ERROR(dml_onnx_import_file(path, &opts, &m), DML_STATUS_INVALID_ARGUMENT,
              "batch_bound must be positive, got -1");
}

/* ---- errors ---- */

static void test_unsupported_ops_listed_at_once(void) {
  dml_ir_module_t *m = NULL;
  const char *want[] = {
      /* NonMaxSuppression in the fixture is supported since it was made. */
      "error: onnx.import: model uses 1 unsupported op (opset 13): Foo; "
      "and 1 unsupported attribute: Relu.bogus",
      "node 'foo_a' (Foo)",
      "node 'foo_b' (Foo)",
      "node 'relu' (Relu): unknown attribute 'bogus'",
  };
  for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
    CHECK_ERROR(import_fixture("unsupported.onnx", &m), DML_STATUS_UNIMPLEMENTED,
                want[i]);
  /* (its Cast to=STRING imports: string tensors run on the CPU) */
  const char *want2[] = {
      "model uses 1 unsupported op (opset 13): com.microsoft.FusedGemm",
      "node 'fg' (FusedGemm): domain 'com.microsoft' is not supported",
  };
  for (size_t i = 0; i < sizeof(want2) / sizeof(want2[0]); i++)
    CHECK_ERROR(import_fixture("custom_domain.onnx", &m), DML_STATUS_UNIMPLEMENTED,
                want2[i]);
  CHECK(m == NULL);
}

/* Opset 1..6 forms normalized by the importer (onnx_ops.c). */
static void test_legacy_forms(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(import_fixture("legacy6.onnx", &m));
  if (!m) return;
  dml_ir_function_t *f = fwd(m);
  for (dml_ir_node_t *x = f->first; x; x = x->next) CHECK_OK(dml_ir_infer_node(m, x));
  dml_ir_node_t *n;
  char buf[128];
  if ((n = node_named(f, "prelu"))) {
    /* The per-channel slope [3] is unsqueezed to [3,1,1] against X [2,3,4,5]. */
    CHECK(n->op == DML_OP_PRELU && n->inputs[1]->kind == DML_IR_VALUE_RESULT);
    CHECK(strcmp(dml_ir_type_str(m, &n->inputs[1]->type, buf, sizeof(buf)),
                 "f32[3,1,1]") == 0);
    CHECK(strcmp(dml_ir_type_str(m, &n->outputs[0]->type, buf, sizeof(buf)),
                 "f32[2,3,4,5]") == 0);
  } else
    CHECK(!"prelu");
  if ((n = node_named(f, "bn"))) {
    CHECK(n->op == DML_OP_BATCH_NORMALIZATION && dml_ir_node_attr(n, "is_test") == NULL);
  } else
    CHECK(!"bn");
  if ((n = node_named(f, "drop"))) {
    CHECK(n->op == DML_OP_DROPOUT && n->n_inputs == 2 &&
          is_f32_scalar(n->inputs[1], 0.25f));
    CHECK(dml_ir_node_attr(n, "is_test") == NULL);
  } else
    CHECK(!"drop");
  dml_ir_module_release(m);
  m = NULL;

  CHECK_OK(import_fixture("legacy1.onnx", &m));
  if (!m) return;
  f = fwd(m);
  for (dml_ir_node_t *x = f->first; x; x = x->next) CHECK_OK(dml_ir_infer_node(m, x));
  const int64_t shape[2] = {3, 4};
  if ((n = node_named(f, "concat")))
    CHECK(dml_attr_int(n->attrs, n->n_attrs, "axis", -9) == 1);
  else
    CHECK(!"concat");
  if ((n = node_named(f, "reshape"))) {
    CHECK(n->n_inputs == 2 && is_i64_const(n->inputs[1], shape, 2));
    CHECK(dml_ir_node_attr(n, "shape") == NULL);
  } else
    CHECK(!"reshape");
  if ((n = node_named(f, "cast")))
    CHECK(dml_attr_int(n->attrs, n->n_attrs, "to", 0) == 11 /* DOUBLE */);
  else
    CHECK(!"cast");
  if ((n = node_named(f, "split"))) {
    /* Split-1's f64 lengths input is cast to i64. */
    CHECK(n->n_inputs == 2 && n->inputs[1]->type.dtype == DML_DTYPE_I64);
    CHECK(strcmp(dml_ir_type_str(m, &n->outputs[0]->type, buf, sizeof(buf)),
                 "f64[1,4]") == 0);
    CHECK(strcmp(dml_ir_type_str(m, &n->outputs[1]->type, buf, sizeof(buf)),
                 "f64[2,4]") == 0);
  } else
    CHECK(!"split");
  dml_ir_module_release(m);
  m = NULL;

  CHECK_ERROR(
      import_fixture("bn6_train.onnx", &m), DML_STATUS_UNIMPLEMENTED,
      "model uses 1 unsupported attribute (opset 6): BatchNormalization is_test=0 "
      "(training mode)");
  CHECK_ERROR(import_fixture("dropout6_train.onnx", &m), DML_STATUS_UNIMPLEMENTED,
              "node 'train' (Dropout): unsupported is_test=0 (training mode)");
  CHECK(m == NULL);
}

static void test_unsupported_values(void) {
  dml_ir_module_t *m = NULL;
  CHECK_ERROR(
      import_fixture("bn_spatial0.onnx", &m), DML_STATUS_UNIMPLEMENTED,
      "model uses 1 unsupported attribute (opset 7): BatchNormalization spatial=0");
  CHECK_ERROR(import_fixture("bn_spatial0.onnx", &m), DML_STATUS_UNIMPLEMENTED,
              "node 'bn' (BatchNormalization): unsupported spatial=0");
  const char *want[] = {
      /* Cast to=STRING and value_string import (string tensors) */
      "model uses 1 unsupported attribute (opset 13): Constant sparse_value (sparse "
      "constants)",
      "node 'const_sparse' (Constant): unsupported sparse_value (sparse constants)",
  };
  for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
    CHECK_ERROR(import_fixture("bad_values.onnx", &m), DML_STATUS_UNIMPLEMENTED, want[i]);
  /* QuantizeLinear to 4 bits refused (it would saturate at the 8-bit
   * range); a 4-bit DequantizeLinear weight imports, widened to i8 */
  CHECK_ERROR(import_fixture("q_int4.onnx", &m), DML_STATUS_UNIMPLEMENTED,
              "node 'q_int4' (QuantizeLinear): unsupported y_zero_point of type INT4");
  CHECK_ERROR(import_fixture("q_int4.onnx", &m), DML_STATUS_UNIMPLEMENTED,
              "node 'q_uint4' (QuantizeLinear): unsupported y_zero_point of type UINT4");
  CHECK(m == NULL);
  CHECK_OK(import_fixture("dq_int4.onnx", &m));
  dml_ir_module_release(m);
  m = NULL;
  CHECK_ERROR(
      import_fixture("sequence_input.onnx", &m), DML_STATUS_UNIMPLEMENTED,
      "graph input 'xs' is a sequence; its element count and shapes must be given at "
      "compile time");
  CHECK(m == NULL);
}

static void test_opset_errors(void) {
  dml_ir_module_t *m = NULL;
  CHECK_ERROR(
      import_fixture("opset29.onnx", &m), DML_STATUS_UNIMPLEMENTED,
      "error: onnx.import: model uses opset 29 of the default ONNX domain; supported "
      "opsets are 1..28");
  CHECK_ERROR(import_fixture("opset29.onnx", &m), DML_STATUS_UNIMPLEMENTED,
              "re-export the model with an opset in 1..28");
  CHECK(m == NULL);
  /* Opsets 18..23 import; their forms that dmlc lacks are refused by name. */
  CHECK_OK(import_fixture("opset18.onnx", &m));
  dml_ir_module_release(m);
  m = NULL;
  /* Pad-18's constant axes [1] with pads [1, 1] on [2, 3]: pads for every
   * dim, [0, 1, 0, 1]; axes fed at run time is refused. */
  CHECK_OK(import_fixture("pad18_axes.onnx", &m));
  if (m) {
    const dml_ir_node_t *p = m->functions[0]->first;
    CHECK(p && p->op == DML_OP_PAD && p->n_inputs == 2 && p->inputs[1]->data &&
          p->inputs[1]->type.dims[0].value == 4);
    if (p && p->inputs[1]->data) {
      const int64_t *v = (const int64_t *)p->inputs[1]->data;
      CHECK(v[0] == 0 && v[1] == 1 && v[2] == 0 && v[3] == 1);
    }
  }
  dml_ir_module_release(m);
  m = NULL;
  /* axes fed at run time: Less, Add, Where, Add, Concat, ScatterElements
   * compute the pads of every dim (numbers: the ONNX node tests
   * test_constant_pad_axes and _negative_axes); a symbolic count of axes is
   * refused. */
  CHECK_OK(import_fixture("pad25_axes_input.onnx", &m));
  if (m) {
    static const dml_op_t want[] = {DML_OP_LESS, DML_OP_ADD,    DML_OP_WHERE,
                                    DML_OP_ADD,  DML_OP_CONCAT, DML_OP_SCATTER_ELEMENTS,
                                    DML_OP_PAD};
    const dml_ir_node_t *n = m->functions[0]->first;
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++, n = n ? n->next : NULL)
      CHECK(n && n->op == want[i]);
    CHECK(n == NULL);
  }
  dml_ir_module_release(m);
  m = NULL;
  CHECK_ERROR(
      import_fixture("pad25_axes_symlen.onnx", &m), DML_STATUS_UNIMPLEMENTED,
      "node 'pad' (Pad): Pad-25's input 'axes' needs the data's rank, an i64 'pads' "
      "and an i32/i64 'axes' of static length at import");
  CHECK_ERROR(
      import_fixture("quantize21_block.onnx", &m), DML_STATUS_UNIMPLEMENTED,
      "node 'q' (QuantizeLinear): unsupported block_size=2 (blocked quantization)");
  CHECK_ERROR(
      import_fixture("dequantize23_dtype.onnx", &m), DML_STATUS_UNIMPLEMENTED,
      "node 'dq' (DequantizeLinear): DequantizeLinear-23 output_dtype=FLOAT16 is not "
      "supported");
  CHECK_ERROR(import_fixture("lppool_nokernel.onnx", &m), DML_STATUS_INVALID_ARGUMENT,
              "node 'lp' (LpPool): LpPool needs the 'kernel_shape' attribute");
  CHECK(m == NULL);
  /* Opset 18's reductions take axes as input 1; Split-18 num_outputs. */
  CHECK_OK(import_fixture("reduce_split18.onnx", &m));
  CHECK(m && m->n_functions == 1);
  if (m) {
    const dml_ir_node_t *a = m->functions[0]->first, *b = a ? a->next : NULL;
    CHECK(a && a->op == DML_OP_REDUCE_MAX && a->n_inputs == 2);
    CHECK(b && b->op == DML_OP_SPLIT && b->n_outputs == 2 && !b->next);
  }
  dml_ir_module_release(m);
  m = NULL;
  /* Opsets 24..28: Swish-24 and SwiGLU-28 expand into existing ops, alpha
   * a constant of X's dtype (f32 here, known at import: no CastLike). */
  CHECK_OK(import_fixture("swish28.onnx", &m));
  CHECK(m && m->n_functions == 1);
  if (m) {
    static const dml_op_t want[] = {DML_OP_MUL, DML_OP_SIGMOID, DML_OP_MUL,
                                    DML_OP_MUL, DML_OP_SIGMOID, DML_OP_MUL,
                                    DML_OP_MUL};
    const dml_ir_node_t *n = m->functions[0]->first;
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++, n = n ? n->next : NULL)
      CHECK(n && n->op == want[i]);
    CHECK(n == NULL);
  }
  dml_ir_module_release(m);
  m = NULL;
  /* Cast-24's round_mode (float8e8m0 targets only) is dropped. */
  CHECK_OK(import_fixture("cast24_round.onnx", &m));
  CHECK(m && m->functions[0]->first && m->functions[0]->first->op == DML_OP_CAST &&
        !dml_ir_node_attr(m->functions[0]->first, "round_mode"));
  dml_ir_module_release(m);
  m = NULL;
  CHECK_OK(import_fixture("cast24_e8m0.onnx", &m));
  {
    const dml_ir_node_t *n = m ? m->functions[0]->first : NULL;
    const dml_attr_t *rm = n ? dml_ir_node_attr(n, "round_mode") : NULL;
    CHECK(n && n->op == DML_OP_CAST && rm && rm->s && !strcmp(rm->s, "nearest"));
  }
  dml_ir_module_release(m);
  m = NULL;
  CHECK_ERROR(import_fixture("cast24_bad_round.onnx", &m), DML_STATUS_INVALID_ARGUMENT,
              "node 'c' (Cast): round_mode='sideways' is not up, down or nearest");
  /* Their dtypes that dmlc lacks are refused by name, never reinterpreted. */
  CHECK_ERROR(import_fixture("cast25_int2.onnx", &m), DML_STATUS_UNIMPLEMENTED,
              "node 'c' (Cast): unsupported to=INT2");
  /* float8 dtypes are dmlc dtypes (f8e8m0 one byte) */
  CHECK_OK(import_fixture("input_e8m0.onnx", &m));
  CHECK(m && m->functions[0]->n_args >= 1 &&
        m->functions[0]->args[0]->type.dtype == DML_DTYPE_F8E8M0);
  dml_ir_module_release(m);
  m = NULL;
  CHECK_ERROR(import_fixture("bitcast26_f4.onnx", &m), DML_STATUS_UNIMPLEMENTED,
              "node 'bc' (BitCast): unsupported to=FLOAT4E2M1");
  CHECK_ERROR(import_fixture("range27_stash0.onnx", &m), DML_STATUS_UNIMPLEMENTED,
              "node 'r' (Range): Range-27 stash_type=0 (accumulation in f16) is not "
              "supported");
  CHECK(m == NULL);
  /* Opset 6's Relu has opset 7's meaning: it imports. */
  CHECK_OK(import_fixture("opset6.onnx", &m));
  dml_ir_module_release(m);
}

static void test_graph_errors(void) {
  dml_ir_module_t *m = NULL;
  CHECK_ERROR(import_fixture("undefined_input.onnx", &m), DML_STATUS_INVALID_ARGUMENT,
              "node 'adder' (Add): input 1 names undefined tensor 'nowhere'");
  CHECK_ERROR(import_fixture("cycle.onnx", &m), DML_STATUS_INVALID_ARGUMENT,
              "graph has a cycle: 3 of 3 nodes depend on themselves");
  CHECK_ERROR(import_fixture("defined_twice.onnx", &m), DML_STATUS_INVALID_ARGUMENT,
              "tensor 'a' is defined twice");
  CHECK_ERROR(import_fixture("defined_twice.onnx", &m), DML_STATUS_INVALID_ARGUMENT,
              "node 'r2' (Tanh) defines it again");
  CHECK_ERROR(import_fixture("undefined_output.onnx", &m), DML_STATUS_INVALID_ARGUMENT,
              "graph output 'b' is not defined by any node, graph input or initializer");
  CHECK_ERROR(import_fixture("bad_size.onnx", &m), DML_STATUS_INVALID_ARGUMENT,
              "initializer 'w': data size does not match the dims (raw_data)");
  CHECK_ERROR(import_fixture("bad_size.onnx", &m), DML_STATUS_INVALID_ARGUMENT,
              "15 bytes for 4 elements of 4 bytes");
  CHECK(m == NULL);
  /* a string initializer imports as a string global (copied into the module) */
  CHECK_OK(import_fixture("string.onnx", &m));
  const dml_ir_value_t *sg = m ? dml_ir_module_find_global(m, "s") : NULL;
  CHECK(sg && sg->type.dtype == DML_DTYPE_STRING && sg->data);
  dml_ir_module_release(m);
  m = NULL;
}

static void test_bad_bytes(void) {
  dml_ir_module_t *m = NULL;
  CHECK_ERROR(
      import_fixture("truncated.onnx", &m), DML_STATUS_DATA_LOSS,
      "error: onnx.import: not a valid ONNX model: malformed or truncated protobuf");
  CHECK_ERROR(import_fixture("truncated.onnx", &m), DML_STATUS_DATA_LOSS,
              "length beyond the end of the data");
  CHECK_ERROR(import_fixture("no_such_model.onnx", &m), DML_STATUS_NOT_FOUND,
              "no_such_model.onnx': No such file or directory");
  static const char text[] = "this is not a protobuf at all\n";
  CHECK_ERROR(dml_onnx_import_memory(text, sizeof(text) - 1, NULL, NULL, &m),
              DML_STATUS_DATA_LOSS, "not a valid ONNX model");
  /* Zero bytes decode as an empty ModelProto: no opset. */
  CHECK_ERROR(dml_onnx_import_memory(NULL, 0, NULL, NULL, &m),
              DML_STATUS_INVALID_ARGUMENT,
              "model declares no opset for the default ONNX domain");
  CHECK(m == NULL);
}

/* Graph -> node -> attribute -> graph -> ... nested far deeper than any
 * real model: refused before protobuf-c's recursive unpacker sees it. */
static size_t put_len_field(uint8_t *dst, uint32_t field, const uint8_t *body, size_t n) {
  size_t k = 0;
  dst[k++] = (uint8_t)(field << 3 | 2);
  size_t v = n;
  do {
    dst[k++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
  memmove(dst + k, body, n);
  return k + n;
}

static void test_deep_nesting(void) {
  enum { LEVELS = 2000 };
  size_t cap = (size_t)LEVELS * 3 * 6 + 64;
  uint8_t *a = (uint8_t *)calloc(cap, 1), *b = (uint8_t *)calloc(cap, 1);
  CHECK(a && b);
  if (!a || !b) {
    free(a);
    free(b);
    return;
  }
  size_t n = 0; /* innermost: an empty GraphProto */
  for (int i = 0; i < LEVELS; i++) {
    n = put_len_field(b, 6, a, n); /* AttributeProto.g */
    memcpy(a, b, n);
    n = put_len_field(b, 5, a, n); /* NodeProto.attribute */
    memcpy(a, b, n);
    n = put_len_field(b, 1, a, n); /* GraphProto.node */
    memcpy(a, b, n);
  }
  n = put_len_field(b, 7, a, n); /* ModelProto.graph */
  dml_ir_module_t *m = NULL;
  CHECK_ERROR(dml_onnx_import_memory(b, n, NULL, NULL, &m), DML_STATUS_DATA_LOSS,
              "messages nested too deeply");
  CHECK(m == NULL);
  free(a);
  free(b);
}

int main(void) {
  RUN(test_typed_fields);
  RUN(test_external_data);
  RUN(test_external_data_errors);
  RUN(test_constants);
  RUN(test_initializer_also_input);
  RUN(test_opset11_attribute_forms);
  RUN(test_opset7_attribute_forms);
  RUN(test_opset9_10_forms);
  RUN(test_ops13);
  RUN(test_softmax_opset12);
  RUN(test_unsorted_graph_is_sorted);
  RUN(test_batch_bound_option);
  RUN(test_unsupported_ops_listed_at_once);
  RUN(test_legacy_forms);
  RUN(test_unsupported_values);
  RUN(test_opset_errors);
  RUN(test_graph_errors);
  RUN(test_bad_bytes);
  RUN(test_deep_nesting);
  return dml_test_finish();
}
