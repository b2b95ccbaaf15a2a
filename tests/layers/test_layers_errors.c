/*
 * test_layers_errors.c — every user-facing error of the layer API
 * (dml_layers.h) and of dml_compile_module: the code and the text, and that a
 * failed layer call leaves the model as it was.
 */
#include <stdlib.h>
#include <string.h>

#include "dml_driver.h"
#include "dml_layers.h"
#include "dml_test.h"

#define INVALID DML_STATUS_INVALID_ARGUMENT

typedef struct {
  dml_layers_model_t *m;
  dml_layers_tensor_t *img; /* f32[batch,1,28,28] */
  dml_layers_tensor_t *vec; /* f32[batch,784] */
  dml_layers_tensor_t *idx; /* i64[batch,4] */
} fx_t;

static fx_t make(void) {
  fx_t f;
  memset(&f, 0, sizeof f);
  CHECK_OK(dml_layers_model_create(NULL, &f.m));
  int64_t s4[4] = {-1, 1, 28, 28}, s2[2] = {-1, 784}, si[2] = {-1, 4};
  CHECK_OK(dml_layers_input(f.m, "image", DML_DTYPE_F32, 4, s4, &f.img));
  CHECK_OK(dml_layers_input(f.m, "vec", DML_DTYPE_F32, 2, s2, &f.vec));
  CHECK_OK(dml_layers_input(f.m, "idx", DML_DTYPE_I64, 2, si, &f.idx));
  return f;
}

static void test_shape_mismatch(void) {
  fx_t f = make();
  dml_layers_tensor_t *y = NULL, *c = NULL;
  /* dense on a 4-D tensor without flatten */
  CHECK_ERROR(dml_layers_dense(f.m, f.img, 10, NULL, &y), INVALID,
              "layers.dense: dense needs a 2-D [batch, features] input, got "
              "f32[batch,1,28,28]");
  CHECK_ERROR(dml_layers_dense(f.m, f.img, 10, NULL, &y), INVALID,
              "flatten the input first");
  CHECK_ERROR(dml_layers_dense(f.m, f.img, 10, NULL, &y), INVALID,
              "layer 'dense', input 'image'");
  /* conv channel mismatch (PyTorch's Conv2d(3, ...) on a 1-channel image) */
  dml_layers_conv2d_options_t co = dml_layers_conv2d_defaults();
  co.in_channels = 3;
  CHECK_ERROR(dml_layers_conv2d(f.m, f.img, 8, 3, 3, &co, &y), INVALID,
              "conv2d expects 3 input channels, got 1 (input f32[batch,1,28,28])");
  dml_layers_dense_options_t dop = dml_layers_dense_defaults();
  dop.in_features = 100;
  CHECK_ERROR(dml_layers_dense(f.m, f.vec, 10, &dop, &y), INVALID,
              "dense expects 100 input features, got 784 (input f32[batch,784])");
  /* conv on a 2-D tensor */
  CHECK_ERROR(dml_layers_conv2d(f.m, f.vec, 8, 3, 3, NULL, &y), INVALID,
              "conv2d needs a 4-D [N, C, H, W] input, got f32[batch,784]");
  CHECK_ERROR(dml_layers_max_pool2d(f.m, f.vec, 2, 2, NULL, &y), INVALID,
              "max_pool2d needs a 4-D [N, C, H, W] input, got f32[batch,784]");
  CHECK_ERROR(dml_layers_global_avg_pool2d(f.m, f.vec, &y), INVALID,
              "global_avg_pool2d needs a 4-D [N, C, H, W] input");
  /* groups that do not divide the channels */
  co = dml_layers_conv2d_defaults();
  CHECK_OK(dml_layers_conv2d(f.m, f.img, 8, 3, 3, &co, &c)); /* [batch,8,26,26] */
  co.groups = 3;
  CHECK_ERROR(dml_layers_conv2d(f.m, c, 9, 3, 3, &co, &y), INVALID,
              "groups 3 must divide the input channels (8) and filters (9)");
  /* a kernel larger than the (padded) input */
  CHECK_ERROR(dml_layers_conv2d(f.m, f.img, 4, 29, 3, NULL, &y), INVALID,
              "the kernel 29x3 (dilations 1x1) does not fit input f32[batch,1,28,28] "
              "with pads [0,0,0,0]");
  CHECK_ERROR(dml_layers_avg_pool2d(f.m, f.img, 30, 30, NULL, &y), INVALID,
              "the window 30x30 does not fit input f32[batch,1,28,28]");
  /* add / concat of different shapes */
  CHECK_ERROR(dml_layers_add(f.m, f.img, c, &y), INVALID,
              "add needs two tensors of one shape, got f32[batch,1,28,28] and "
              "f32[batch,8,26,26]");
  dml_layers_tensor_t *two[2] = {f.img, c};
  CHECK_ERROR(dml_layers_concat(f.m, two, 2, 1, &y), INVALID,
              "concat along axis 1: input 1 is f32[batch,8,26,26], input 0 is "
              "f32[batch,1,28,28]");
  dml_layers_tensor_t *same2[2] = {f.img, f.img};
  CHECK_ERROR(dml_layers_concat(f.m, same2, 2, 0, &y), INVALID, "concat along axis 0");
  /* activations and norms on bad axes or dtypes */
  CHECK_ERROR(dml_layers_softmax(f.m, f.vec, 2, &y), INVALID,
              "layers.softmax: axis 2 is out of range for f32[batch,784]");
  CHECK_ERROR(dml_layers_relu(f.m, f.idx, &y), INVALID,
              "the input of an activation must be f32, got i64[batch,4]");
  dml_layers_norm_options_t no = dml_layers_norm_defaults();
  no.axis = 0;
  CHECK_ERROR(dml_layers_layer_norm(f.m, f.vec, &no, &y), INVALID,
              "axis 0 of f32[batch,784] covers the symbolic batch dim");
  no.axis = 2;
  CHECK_ERROR(dml_layers_layer_norm(f.m, f.vec, &no, &y), INVALID,
              "axis 2 is out of range for f32[batch,784]");
  CHECK_ERROR(dml_layers_embedding(f.m, f.vec, 10, 4, NULL, &y), INVALID,
              "embedding indices must be i64 or i32, got f32[batch,784]");
  CHECK_ERROR(dml_layers_dense(f.m, f.idx, 3, NULL, &y), INVALID,
              "the input must be f32, got i64[batch,4]");
  dml_layers_model_release(f.m);
}

static void test_bad_arguments(void) {
  fx_t f = make();
  dml_layers_tensor_t *y = NULL;
  CHECK_ERROR(dml_layers_dense(f.m, f.vec, 0, NULL, &y), INVALID,
              "units must be >= 1, got 0");
  CHECK_ERROR(dml_layers_dense(f.m, NULL, 4, NULL, &y), INVALID,
              "layers.dense: the input is NULL");
  CHECK_ERROR(dml_layers_dense(f.m, f.vec, 4, NULL, NULL), INVALID,
              "NULL output argument");
  CHECK_ERROR(dml_layers_dense(NULL, f.vec, 4, NULL, &y), INVALID, "the model is NULL");
  dml_layers_conv2d_options_t co = dml_layers_conv2d_defaults();
  co.strides[1] = 0;
  CHECK_ERROR(dml_layers_conv2d(f.m, f.img, 4, 3, 3, &co, &y), INVALID,
              "strides and dilations must be >= 1, got strides 1x0 dilations 1x1");
  co = dml_layers_conv2d_defaults();
  co.pads[2] = -1;
  CHECK_ERROR(dml_layers_conv2d(f.m, f.img, 4, 3, 3, &co, &y), INVALID,
              "pads must be >= 0, got -1");
  CHECK_ERROR(dml_layers_conv2d(f.m, f.img, 0, 3, 3, NULL, &y), INVALID,
              "filters and kernel must be >= 1, got filters 0 kernel 3x3");
  co = dml_layers_conv2d_defaults();
  co.groups = 0;
  CHECK_ERROR(dml_layers_conv2d(f.m, f.img, 4, 3, 3, &co, &y), INVALID,
              "groups must be >= 1, got 0");
  dml_layers_pool2d_options_t po = dml_layers_pool2d_defaults();
  po.pads[0] = 2;
  CHECK_ERROR(dml_layers_max_pool2d(f.m, f.img, 3, 3, &po, &y), INVALID,
              "pad 2 must be between 0 and half the kernel (3)");
  po = dml_layers_pool2d_defaults();
  po.strides[0] = -2;
  CHECK_ERROR(dml_layers_avg_pool2d(f.m, f.img, 2, 2, &po, &y), INVALID,
              "strides must be >= 1, got -2");
  CHECK_ERROR(dml_layers_dropout(f.m, f.vec, 1.0, NULL, &y), INVALID,
              "layers.dropout: ratio must be in [0, 1), got 1");
  dml_layers_norm_options_t no = dml_layers_norm_defaults();
  no.epsilon = 0;
  CHECK_ERROR(dml_layers_batch_norm(f.m, f.img, &no, &y), INVALID,
              "epsilon must be > 0, got 0");
  no = dml_layers_norm_defaults();
  no.momentum = 2;
  CHECK_ERROR(dml_layers_batch_norm(f.m, f.img, &no, &y), INVALID,
              "momentum must be in [0, 1], got 2");
  CHECK_ERROR(dml_layers_embedding(f.m, f.idx, 0, 4, NULL, &y), INVALID,
              "vocab and dim must be >= 1, got 0 and 4");
  CHECK_ERROR(dml_layers_leaky_relu(f.m, f.vec, NAN, &y), INVALID,
              "alpha must be finite, got nan");
  CHECK_ERROR(dml_layers_activation(f.m, f.vec, (dml_layers_activation_t)99, NULL, &y),
              INVALID, "unknown activation 99");
  dml_layers_dense_options_t dop = dml_layers_dense_defaults();
  dop.activation = (dml_layers_activation_t)42;
  CHECK_ERROR(dml_layers_dense(f.m, f.vec, 4, &dop, &y), INVALID,
              "unknown activation 42");
  CHECK_ERROR(dml_layers_concat(f.m, NULL, 0, 0, &y), INVALID,
              "concat needs 1..65536 tensors and an output, got 0");

  /* names */
  dop = dml_layers_dense_defaults();
  dop.name = "bad name";
  CHECK_ERROR(dml_layers_dense(f.m, f.vec, 4, &dop, &y), INVALID,
              "invalid name 'bad name'");
  dop.name = "image";
  CHECK_ERROR(dml_layers_dense(f.m, f.vec, 4, &dop, &y), INVALID,
              "name 'image' is already taken");
  dop.name = "";
  CHECK_ERROR(dml_layers_dense(f.m, f.vec, 4, &dop, &y), INVALID,
              "a name must not be empty");

  /* inputs */
  int64_t bad[2] = {4, -1};
  dml_layers_tensor_t *x = NULL;
  CHECK_ERROR(dml_layers_input(f.m, "x2", DML_DTYPE_F32, 2, bad, &x), INVALID,
              "input 'x2' has dim 1 = -1");
  int64_t ok[2] = {-1, 3};
  CHECK_ERROR(dml_layers_input(f.m, "x3", DML_DTYPE_F16, 2, ok, &x), INVALID,
              "input 'x3' has dtype f16");
  CHECK_ERROR(dml_layers_input(f.m, "x4", DML_DTYPE_F32, 9, ok, &x), INVALID,
              "input 'x4' has rank 9; it must be 1..8");
  CHECK_ERROR(dml_layers_input(f.m, "vec", DML_DTYPE_F32, 2, ok, &x), INVALID,
              "name 'vec' is already taken");
  CHECK_OK(dml_layers_relu(f.m, f.vec, &y));
  CHECK_ERROR(dml_layers_input(f.m, "late", DML_DTYPE_F32, 2, ok, &x), INVALID,
              "input 'late' is declared after a layer");

  /* outputs */
  CHECK_ERROR(dml_layers_output(f.m, y, "image"), INVALID,
              "name 'image' is already taken");
  CHECK_ERROR(dml_layers_output(f.m, NULL, "o"), INVALID, "the output tensor is NULL");
  fx_t g = make();
  CHECK_ERROR(dml_layers_output(f.m, g.vec, "o"), INVALID,
              "the output tensor is a tensor of another model");
  CHECK_ERROR(dml_layers_relu(f.m, g.vec, &y), INVALID,
              "the input is a tensor of another model");
  dml_ir_module_t *ir = NULL;
  CHECK_ERROR(dml_layers_model_to_ir(g.m, &ir), DML_STATUS_FAILED_PRECONDITION,
              "the model has no output");
  dml_layers_model_release(g.m);

  /* parameters */
  float w[4] = {0};
  CHECK_ERROR(dml_layers_set_param(f.m, "nope.weight", w, sizeof w), DML_STATUS_NOT_FOUND,
              "the model has no parameter 'nope.weight'");
  CHECK_OK(dml_layers_dense(f.m, f.vec, 4, NULL, &y));
  CHECK_ERROR(dml_layers_set_param(f.m, "dense.weight", w, sizeof w), INVALID,
              "parameter 'dense.weight' is f32[4,784] (12544 bytes), got 16 bytes");
  CHECK_ERROR(dml_layers_set_param(f.m, "nope", w, sizeof w), DML_STATUS_NOT_FOUND,
              "parameters: dense.weight, dense.bias");
  dml_layers_param_info_t pi;
  CHECK_ERROR(dml_layers_param_info(f.m, 2, &pi), DML_STATUS_OUT_OF_RANGE,
              "parameter index 2 is out of range (the model has 2)");

  /* model options */
  dml_layers_model_t *m2 = NULL;
  dml_layers_model_options_t mo = {.seed = 0, .batch_bound = -3};
  CHECK_ERROR(dml_layers_model_create(&mo, &m2), INVALID,
              "batch_bound must be between 1 and 2^31, got -3");
  dml_layers_model_release(f.m);
}

/* A failed call undoes what it added: no parameter, node or name stays, and
 * generated names do not skip. */
static void test_failed_call_changes_nothing(void) {
  fx_t f = make();
  dml_layers_tensor_t *y = NULL, *z = NULL;
  dml_layers_norm_options_t no = dml_layers_norm_defaults();
  no.name = "fc";
  no.epsilon = -1;
  CHECK_ERROR(dml_layers_batch_norm(f.m, f.img, &no, &y), INVALID, "adding layer 'fc'");
  CHECK(dml_layers_num_params(f.m) == 0);
  dml_layers_dense_options_t dop = dml_layers_dense_defaults();
  dop.name = "fc";
  CHECK_OK(dml_layers_dense(f.m, f.vec, 16, &dop, &y)); /* the name is free again */
  CHECK_ERROR(dml_layers_dense(f.m, f.img, 10, NULL, &z), INVALID,
              "adding layer 'dense'");
  CHECK_OK(dml_layers_dense(f.m, y, 10, NULL, &z));
  CHECK(!strcmp(dml_layers_tensor_name(z), "dense")); /* not dense_1 */
  CHECK_OK(dml_layers_dense(f.m, z, 3, NULL, &z));
  CHECK(!strcmp(dml_layers_tensor_name(z), "dense_1"));
  CHECK(dml_layers_num_params(f.m) == 6);
  dml_layers_param_info_t pi;
  CHECK_OK(dml_layers_param_info(f.m, 4, &pi));
  CHECK(!strcmp(pi.name, "dense_1.weight"));
  CHECK_OK(dml_layers_output(f.m, z, "out"));
  dml_ir_module_t *ir = NULL;
  CHECK_OK(dml_layers_model_to_ir(f.m, &ir));
  if (ir) {
    CHECK_OK(dml_ir_verify(ir, 1));
    dml_ir_function_t *fn = dml_ir_module_find_function(ir, "forward");
    CHECK(fn && dml_ir_function_num_nodes(fn) == 3);
    CHECK(ir->n_globals == 6);
    /* dml_compile_module refuses the ONNX-only options. */
    dml_compile_options_t co;
    memset(&co, 0, sizeof co);
    co.n_input_shapes = 1;
    void *pkg = NULL;
    size_t size = 0;
    CHECK_ERROR(dml_compile_module_memory(ir, "x", &co, &pkg, &size, NULL), INVALID,
                "ONNX import options (bind, input_shapes, sequence_inputs, "
                "optional_inputs) do not apply to an IR module");
    memset(&co, 0, sizeof co);
    co.targets = "rocm";
    CHECK_ERROR(dml_compile_module_memory(ir, "x", &co, &pkg, &size, NULL),
                DML_STATUS_UNIMPLEMENTED, "unknown target 'rocm'");
    co.targets = NULL;
    co.batch_bound = -1;
    CHECK_ERROR(dml_compile_module_memory(ir, "x", &co, &pkg, &size, NULL), INVALID,
                "--batch-bound must be between 1 and 2^31, got -1");
    CHECK_ERROR(dml_compile_module(NULL, "x", "/tmp/never.dmlpkg", NULL, NULL), INVALID,
                "dml_compile_module: NULL module");
  }
  dml_ir_module_release(ir);
  dml_layers_model_release(f.m);
}

int main(void) {
  RUN(test_shape_mismatch);
  RUN(test_bad_arguments);
  RUN(test_failed_call_changes_nothing);
  return dml_test_finish();
}
