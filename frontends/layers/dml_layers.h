/*
 * dml_layers.h — the C layer API: build a model layer by layer (as with
 * Keras' functional API or PyTorch's nn modules) instead of importing ONNX.
 *
 * A model is a graph of tensors. dml_layers_input() makes a graph input;
 * every layer function takes tensor handles and returns a new one; each
 * check runs when the layer is added, so a shape mismatch is reported by the
 * call that causes it. dml_layers_output() marks results. Then
 * dml_layers_model_to_ir() gives a dmlc IR module (ir/dml_ir.h) that the
 * compiler turns into a package like an imported ONNX model:
 *
 *   dml_layers_model_t *m;   dml_layers_tensor_t *x, *h, *y;
 *   dml_layers_model_create(NULL, &m);                 // seed 0, batch <= 64
 *   int64_t shape[2] = {-1, 784};
 *   dml_layers_input(m, "input", DML_DTYPE_F32, 2, shape, &x);
 *   dml_layers_dense(m, x, 256, NULL, &h);             // "dense"
 *   dml_layers_relu(m, h, &h);
 *   dml_layers_dense(m, h, 10, NULL, &y);              // "dense_1"
 *   dml_layers_output(m, y, "logits");
 *   dml_ir_module_t *ir;  dml_layers_model_to_ir(m, &ir);
 *   dml_compile_module(ir, "mlp", "mlp.dmlpkg", NULL, NULL);  // dml_driver.h
 *
 * The IR (what every later pass, the training pass included, sees):
 *   - one function `forward`; arguments are the inputs, results the
 *     outputs, in the order they were declared;
 *   - a -1 in an input's shape (dim 0 only) is the symbolic batch dim: the
 *     module symbol "batch" (the name the ONNX exporter gives it and the
 *     ONNX importer keeps; dml_onnx.h) with the bound `batch_bound`; all
 *     inputs share it;
 *   - layers are ONNX ops of runtime/base/ops.def with ONNX's attribute
 *     names (Gemm, Conv, MaxPool, ...); each layer function says which;
 *   - parameters are module globals with initial data: trainable ones
 *     flagged DML_IR_GLOBAL_PARAM, BatchNorm's running statistics
 *     DML_IR_GLOBAL_STATE, other constants (Dropout's ratio, GELU's
 *     factors) no flag.
 *
 * Names. Each layer has a name: the one given in its options, or the kind
 * followed by a counter, as Keras does: "dense", "dense_1", "dense_2",
 * "conv2d", ... (a generated name skips names already taken). A layer's
 * parameters are "<layer>.<param>" with PyTorch's state_dict keys and
 * shapes: "dense.weight" [units, in], "dense.bias" [units], "conv2d.weight"
 * [filters, in/groups, kh, kw], "batch_norm.running_mean", ... so
 * checkpoints key on stable, readable names. A layer's IR node carries the
 * layer name (dmlc summary shows it).
 *
 * Initialization (seeded, reproducible): parameter k of the model (k = 0,
 * 1, ... in creation order, state included) draws from Philox stream k of
 * the model's seed at step 0 (runtime/base/dml_philox.h), element i from the
 * 32-bit layout's element i. PyTorch 1.13's defaults, from the documentation
 * of each module (https://pytorch.org/docs/1.13/nn.html):
 *   - Linear, Conv2d (torch.nn.Linear / torch.nn.Conv2d, "Variables"):
 *     weight and bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)); fan_in =
 *     in_features (Linear), in_channels/groups * kh * kw (Conv2d). For the
 *     weight this is reset_parameters()' kaiming_uniform_(a=sqrt(5)): gain
 *     sqrt(2/(1+a^2)) = sqrt(1/3), bound = gain * sqrt(3/fan_in).
 *     Value = (2u - 1) * bound with u the Philox uniform in [0,1).
 *   - BatchNorm2d (torch.nn.BatchNorm2d): weight 1, bias 0, running_mean 0,
 *     running_var 1. LayerNorm (torch.nn.LayerNorm): weight 1, bias 0.
 *   - Embedding (torch.nn.Embedding, "Variables"): weight ~ N(0, 1), by
 *     Box-Muller from Philox uniforms (dml_philox_normal_f32).
 * Values can be replaced from user data with dml_layers_set_param().
 *
 * Training: compile the module with dml_compile_options_t.train set
 * (compiler/dml_driver.h, passes/dml_train.h) to add train_step and
 * eval_step; the package's globals keep the parameter names, so trained
 * values come back with dml_layers_set_param() (docs/layers.md).
 *
 * Errors are dml_status_t with op "layers.<layer kind>" (e.g.
 * "layers.dense"), the reason and details naming the layer and the shapes;
 * a failed layer call leaves the model as it was. All tensors are f32
 * except embedding indices (i64 or i32).
 *
 * Ownership: the model owns every tensor handle and string it returns;
 * they stay valid until dml_layers_model_release(). A module from
 * dml_layers_model_to_ir() belongs to the caller (dml_ir_module_release).
 * A model is not thread-safe.
 */
#ifndef DML_LAYERS_H_
#define DML_LAYERS_H_

#include <stddef.h>
#include <stdint.h>

#include "dml_dtype.h"
#include "dml_ir.h"
#include "dml_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dml_layers_model dml_layers_model_t;
/* A tensor of the model under construction (an SSA value of `forward`). */
typedef struct dml_layers_tensor dml_layers_tensor_t;

/* ---- model ---- */

typedef struct dml_layers_model_options {
  /* Seed of the parameter initialization (see above). */
  uint64_t seed;
  /* Upper bound of the batch dim; 0 means 64 (as `dmlc compile`). */
  int64_t batch_bound;
} dml_layers_model_options_t;

/* Creates an empty model. `opts` may be NULL (seed 0, batch bound 64).
 * Errors: INVALID_ARGUMENT (batch_bound < 0 or > 2^31, NULL out),
 * RESOURCE_EXHAUSTED. */
dml_status_t dml_layers_model_create(const dml_layers_model_options_t *opts,
                                     dml_layers_model_t **out_model);
/* Frees the model and every handle it returned. NULL is a no-op. */
void dml_layers_model_release(dml_layers_model_t *model);

/* A copy of the model as an IR module: function `forward` with the inputs
 * and outputs declared so far, globals holding the parameters' current
 * values. Node results are typed (shape inference ran as layers were
 * added). The caller owns the module; the model stays usable. Errors:
 * FAILED_PRECONDITION when no output is marked, RESOURCE_EXHAUSTED. */
dml_status_t dml_layers_model_to_ir(const dml_layers_model_t *model,
                                    dml_ir_module_t **out_module);

/* ---- tensors ---- */

/* A tensor's dtype and shape. A batch dim has dims[d] = -1 (times
 * `batch_multiple[d]`, e.g. 1); static dims have batch_multiple 0. */
typedef struct dml_layers_shape {
  dml_dtype_t dtype;
  int32_t rank;
  int64_t dims[DML_MAX_RANK];
  int64_t batch_multiple[DML_MAX_RANK];
} dml_layers_shape_t;

/* Fills *out with `t`'s dtype and shape. Errors: INVALID_ARGUMENT (NULL). */
dml_status_t dml_layers_tensor_shape(const dml_layers_tensor_t *t,
                                     dml_layers_shape_t *out);
/* The name of the tensor's value in the IR ("dense", "relu_1", an input's
 * or output's name). */
const char *dml_layers_tensor_name(const dml_layers_tensor_t *t);

/* ---- inputs and outputs ---- */

/* Declares graph input `name` of `dtype` (F32, or I64/I32 for embedding
 * indices) and shape dims[0..rank): dims[0] may be -1, the batch; others
 * must be >= 1. Errors: INVALID_ARGUMENT (duplicate name, bad dtype, rank
 * outside 1..8, -1 elsewhere than dim 0, a dim < 1, a layer already added:
 * inputs come first). */
dml_status_t dml_layers_input(dml_layers_model_t *m, const char *name, dml_dtype_t dtype,
                              int32_t rank, const int64_t *dims,
                              dml_layers_tensor_t **out);

/* Marks `t` as result `name` of `forward` (results keep this order). An
 * input, or a tensor already marked, is passed through an Identity node.
 * Errors: INVALID_ARGUMENT (name taken by an input, output or layer, NULL
 * or empty name, a tensor of another model). */
dml_status_t dml_layers_output(dml_layers_model_t *m, dml_layers_tensor_t *t,
                               const char *name);

/* ---- activations ---- */

typedef enum dml_layers_activation {
  DML_LAYERS_ACT_NONE = 0,
  DML_LAYERS_ACT_RELU,        /* Relu */
  DML_LAYERS_ACT_LEAKY_RELU,  /* LeakyRelu, alpha 0.01 (PyTorch's default) */
  DML_LAYERS_ACT_SIGMOID,     /* Sigmoid */
  DML_LAYERS_ACT_TANH,        /* Tanh */
  DML_LAYERS_ACT_GELU,        /* exact GELU, see dml_layers_gelu */
  DML_LAYERS_ACT_SOFTMAX,     /* Softmax, axis -1 */
  DML_LAYERS_ACT_LOG_SOFTMAX, /* LogSoftmax, axis -1 */
  DML_LAYERS_ACT_ELU,         /* Elu, alpha 1.0 */
} dml_layers_activation_t;

/* Applies `act` with its default parameter (above) to `x`: a layer named
 * after the activation ("relu", "relu_1", ...), or `name` when not NULL.
 * ACT_NONE returns `x` itself. Errors: INVALID_ARGUMENT (unknown act, x
 * not f32, NULL). */
dml_status_t dml_layers_activation(dml_layers_model_t *m, dml_layers_tensor_t *x,
                                   dml_layers_activation_t act, const char *name,
                                   dml_layers_tensor_t **out);
/* max(x, 0) (ONNX Relu). */
dml_status_t dml_layers_relu(dml_layers_model_t *m, dml_layers_tensor_t *x,
                             dml_layers_tensor_t **out);
/* x >= 0 ? x : alpha * x (ONNX LeakyRelu, attribute alpha); alpha finite. */
dml_status_t dml_layers_leaky_relu(dml_layers_model_t *m, dml_layers_tensor_t *x,
                                   double alpha, dml_layers_tensor_t **out);
/* 1 / (1 + exp(-x)) (ONNX Sigmoid). */
dml_status_t dml_layers_sigmoid(dml_layers_model_t *m, dml_layers_tensor_t *x,
                                dml_layers_tensor_t **out);
/* tanh(x) (ONNX Tanh). */
dml_status_t dml_layers_tanh(dml_layers_model_t *m, dml_layers_tensor_t *x,
                             dml_layers_tensor_t **out);
/* Exact GELU, PyTorch's torch.nn.GELU(approximate='none'):
 * 0.5 * x * (1 + erf(x / sqrt(2))), as ONNX Mul, Erf, Add, Mul, Mul nodes
 * (what torch.onnx.export emits before opset 20, which has no Gelu). */
dml_status_t dml_layers_gelu(dml_layers_model_t *m, dml_layers_tensor_t *x,
                             dml_layers_tensor_t **out);
/* x > 0 ? x : alpha * (exp(x) - 1) (ONNX Elu, attribute alpha). */
dml_status_t dml_layers_elu(dml_layers_model_t *m, dml_layers_tensor_t *x, double alpha,
                            dml_layers_tensor_t **out);
/* exp(x) / sum(exp(x)) along `axis` (negative counts from the end; ONNX
 * Softmax opset 13, attribute axis). Errors: INVALID_ARGUMENT (axis out of
 * range). */
dml_status_t dml_layers_softmax(dml_layers_model_t *m, dml_layers_tensor_t *x,
                                int32_t axis, dml_layers_tensor_t **out);
/* log(softmax(x)) along `axis` (ONNX LogSoftmax opset 13). */
dml_status_t dml_layers_log_softmax(dml_layers_model_t *m, dml_layers_tensor_t *x,
                                    int32_t axis, dml_layers_tensor_t **out);

/* ---- dense ---- */

typedef struct dml_layers_dense_options {
  const char *name;                   /* NULL: "dense", "dense_1", ... */
  int use_bias;                       /* default 1 */
  dml_layers_activation_t activation; /* applied after; default NONE */
  /* Expected input features, as torch.nn.Linear(in_features, ...); 0 (the
   * default) takes them from the input. A mismatch is an error. */
  int64_t in_features;
} dml_layers_dense_options_t;

/* Defaults: name NULL, use_bias 1, activation NONE. */
dml_layers_dense_options_t dml_layers_dense_defaults(void);

/* Fully connected layer, torch.nn.Linear: y = x W^T + b for x [batch, in]
 * (2-D: flatten an image first), W "<name>.weight" [units, in], b
 * "<name>.bias" [units]; y [batch, units]. One ONNX Gemm (transB = 1).
 * `opts` may be NULL (defaults). Errors: INVALID_ARGUMENT (x not 2-D, not
 * f32, a symbolic feature dim, units < 1, in_features set and not the
 * input's, name taken). */
dml_status_t dml_layers_dense(dml_layers_model_t *m, dml_layers_tensor_t *x,
                              int64_t units, const dml_layers_dense_options_t *opts,
                              dml_layers_tensor_t **out);

/* ---- convolution and pooling (NCHW) ---- */

typedef struct dml_layers_conv2d_options {
  const char *name;   /* NULL: "conv2d", "conv2d_1", ... */
  int64_t strides[2]; /* default {1, 1} */
  /* Explicit zero padding {top, left, bottom, right} (ONNX pads order:
   * begins then ends); default 0. Ignored when `same` is set. */
  int64_t pads[4];
  /* 1: "same" padding: output H, W = ceil(H / stride), the total padding
   * (out-1)*stride + (k-1)*dilation + 1 - in split with the extra pixel at
   * the end (ONNX SAME_UPPER; PyTorch's padding='same' for stride 1),
   * written as explicit pads. */
  int same;
  int64_t dilations[2];               /* default {1, 1} */
  int64_t groups;                     /* default 1; divides in and filters */
  int use_bias;                       /* default 1 */
  dml_layers_activation_t activation; /* default NONE */
  /* Expected input channels, as torch.nn.Conv2d(in_channels, ...); 0 (the
   * default) takes them from the input. A mismatch is an error. */
  int64_t in_channels;
} dml_layers_conv2d_options_t;

dml_layers_conv2d_options_t dml_layers_conv2d_defaults(void);

/* 2-D convolution, torch.nn.Conv2d: x [N, C, H, W] -> [N, filters, H', W'],
 * H' = floor((H + pad_top + pad_bottom - dilation*(kh-1) - 1) / stride) + 1.
 * Weight "<name>.weight" [filters, C/groups, kh, kw], bias "<name>.bias"
 * [filters]. One ONNX Conv (kernel_shape, strides, pads, dilations, group).
 * Errors: INVALID_ARGUMENT (x not 4-D f32, symbolic C/H/W, in_channels set and
 * not C, C or filters not a multiple of groups, kernel/stride/dilation < 1, negative
 * pads, an output size < 1, name taken). */
dml_status_t dml_layers_conv2d(dml_layers_model_t *m, dml_layers_tensor_t *x,
                               int64_t filters, int64_t kernel_h, int64_t kernel_w,
                               const dml_layers_conv2d_options_t *opts,
                               dml_layers_tensor_t **out);

typedef struct dml_layers_pool2d_options {
  const char *name;   /* NULL: "max_pool2d", "avg_pool2d", with counters */
  int64_t strides[2]; /* 0: the kernel size (PyTorch's default) */
  int64_t pads[4];    /* {top, left, bottom, right}, at most half the kernel */
  int ceil_mode;      /* default 0 */
  /* Average pool only: count the padding in the divisor. Default 1, as
   * torch.nn.AvgPool2d (ONNX's default is 0). */
  int count_include_pad;
} dml_layers_pool2d_options_t;

dml_layers_pool2d_options_t dml_layers_pool2d_defaults(void);

/* torch.nn.MaxPool2d: x [N, C, H, W] -> [N, C, H', W'] (padding counts as
 * -inf; ceil_mode rounds H' up but drops a window that would start in the
 * right padding). One ONNX MaxPool. Errors: INVALID_ARGUMENT (x not 4-D
 * f32, kernel/stride < 1, pads negative or over half the kernel, output
 * size < 1). */
dml_status_t dml_layers_max_pool2d(dml_layers_model_t *m, dml_layers_tensor_t *x,
                                   int64_t kernel_h, int64_t kernel_w,
                                   const dml_layers_pool2d_options_t *opts,
                                   dml_layers_tensor_t **out);
/* torch.nn.AvgPool2d: as max_pool2d, the mean of each window. One ONNX
 * AveragePool (count_include_pad as the options say). */
dml_status_t dml_layers_avg_pool2d(dml_layers_model_t *m, dml_layers_tensor_t *x,
                                   int64_t kernel_h, int64_t kernel_w,
                                   const dml_layers_pool2d_options_t *opts,
                                   dml_layers_tensor_t **out);
/* Mean over H, W: [N, C, H, W] -> [N, C, 1, 1] (ONNX GlobalAveragePool;
 * torch.nn.AdaptiveAvgPool2d(1)). Errors: INVALID_ARGUMENT (x not 4-D f32). */
dml_status_t dml_layers_global_avg_pool2d(dml_layers_model_t *m, dml_layers_tensor_t *x,
                                          dml_layers_tensor_t **out);

/* ---- normalization, dropout ---- */

typedef struct dml_layers_norm_options {
  const char *name; /* NULL: "batch_norm", "layer_norm", with counters */
  double epsilon;   /* default 1e-5 (PyTorch's) */
  /* Batch norm: PyTorch's momentum, the weight of the new batch statistic
   * (running = (1 - momentum) * running + momentum * batch), default 0.1.
   * Stored as ONNX's attribute momentum = 1 - momentum. */
  double momentum;
  /* Layer norm: the first normalized axis (ONNX LayerNormalization's
   * `axis`; negative counts from the end); default -1. */
  int32_t axis;
} dml_layers_norm_options_t;

dml_layers_norm_options_t dml_layers_norm_defaults(void);

/* torch.nn.BatchNorm2d (BatchNorm1d for 2-D x): x [N, C, ...] normalized
 * per channel with the running statistics (inference form):
 * y = (x - running_mean) / sqrt(running_var + epsilon) * weight + bias.
 * Parameters "<name>.weight", "<name>.bias" [C] (PARAM),
 * "<name>.running_mean", "<name>.running_var" [C] (STATE). One ONNX
 * BatchNormalization (epsilon, momentum). Errors: INVALID_ARGUMENT (rank <
 * 2, symbolic C, epsilon <= 0, momentum outside [0, 1]). */
dml_status_t dml_layers_batch_norm(dml_layers_model_t *m, dml_layers_tensor_t *x,
                                   const dml_layers_norm_options_t *opts,
                                   dml_layers_tensor_t **out);
/* torch.nn.LayerNorm(x.shape[axis:]): normalizes over dims axis..rank-1 with
 * the biased variance, y = (x - mean) / sqrt(var + epsilon) * weight + bias,
 * weight and bias of shape x.shape[axis:] ("<name>.weight", "<name>.bias").
 * One ONNX LayerNormalization (axis, epsilon). Errors: INVALID_ARGUMENT
 * (axis out of range or covering the batch dim, epsilon <= 0). */
dml_status_t dml_layers_layer_norm(dml_layers_model_t *m, dml_layers_tensor_t *x,
                                   const dml_layers_norm_options_t *opts,
                                   dml_layers_tensor_t **out);
/* torch.nn.Dropout(ratio): ONNX Dropout (opset 13) with `ratio` a constant
 * f32 scalar input ("<name>.ratio", no flag) and no training_mode input, so
 * it is the identity at inference (the const-fold pass removes it); a
 * training pass sets training_mode to true. `name` may be NULL
 * ("dropout", ...). Errors: INVALID_ARGUMENT (ratio outside [0, 1)). */
dml_status_t dml_layers_dropout(dml_layers_model_t *m, dml_layers_tensor_t *x,
                                double ratio, const char *name,
                                dml_layers_tensor_t **out);

/* ---- shape, merging, embedding ---- */

/* torch.nn.Flatten(): [N, d1, ...] -> [N, d1*...] (ONNX Flatten, axis 1).
 * Errors: INVALID_ARGUMENT (rank < 2). */
dml_status_t dml_layers_flatten(dml_layers_model_t *m, dml_layers_tensor_t *x,
                                dml_layers_tensor_t **out);
/* a + b of the same shape and dtype (ONNX Add), e.g. a residual
 * connection. Errors: INVALID_ARGUMENT (shapes or dtypes differ). */
dml_status_t dml_layers_add(dml_layers_model_t *m, dml_layers_tensor_t *a,
                            dml_layers_tensor_t *b, dml_layers_tensor_t **out);
/* torch.cat(xs, axis) (ONNX Concat): n >= 1 tensors of one dtype and rank,
 * equal except along `axis` (negative counts from the end; not the batch
 * axis). Errors: INVALID_ARGUMENT. */
dml_status_t dml_layers_concat(dml_layers_model_t *m, dml_layers_tensor_t *const *xs,
                               size_t n, int32_t axis, dml_layers_tensor_t **out);
/* torch.nn.Embedding(vocab, dim): indices (i64 or i32, any shape, values in
 * [0, vocab) — checked at run time by Gather) -> indices.shape + [dim];
 * weight "<name>.weight" [vocab, dim] ~ N(0, 1). One ONNX Gather (axis 0).
 * `name` may be NULL ("embedding", ...). Errors: INVALID_ARGUMENT (indices
 * not i64/i32, vocab or dim < 1, rank 8 indices). */
dml_status_t dml_layers_embedding(dml_layers_model_t *m, dml_layers_tensor_t *indices,
                                  int64_t vocab, int64_t dim, const char *name,
                                  dml_layers_tensor_t **out);

/* ---- parameters ---- */

typedef struct dml_layers_param_info {
  const char *name;  /* "dense.weight" (lent by the model) */
  const char *layer; /* "dense" */
  dml_dtype_t dtype; /* F32 */
  int32_t rank;
  int64_t dims[DML_MAX_RANK];
  int64_t numel;
  uint32_t flags; /* DML_IR_GLOBAL_PARAM (trainable) or DML_IR_GLOBAL_STATE */
} dml_layers_param_info_t;

/* Number of parameters and state tensors (what dml_layers_param_info
 * lists), in creation order. */
size_t dml_layers_num_params(const dml_layers_model_t *m);
/* Fills *out for parameter `i`. Errors: OUT_OF_RANGE (i >= count). */
dml_status_t dml_layers_param_info(const dml_layers_model_t *m, size_t i,
                                   dml_layers_param_info_t *out);
/* Sums of numel over trainable (PARAM) and non-trainable (STATE)
 * parameters; either out pointer may be NULL. */
void dml_layers_param_counts(const dml_layers_model_t *m, int64_t *out_trainable,
                             int64_t *out_non_trainable);
/* Replaces the values of parameter `name` with `bytes` bytes at `data`
 * (f32, C order, exactly numel * 4 bytes; PyTorch's layout for the same
 * key). Errors: NOT_FOUND (no such parameter, listing some names),
 * INVALID_ARGUMENT (size mismatch, NULL). */
dml_status_t dml_layers_set_param(dml_layers_model_t *m, const char *name,
                                  const void *data, size_t bytes);
/* Copies the values of parameter `name` into `out` (`bytes` must equal
 * numel * 4). Errors: as set_param. */
dml_status_t dml_layers_get_param(const dml_layers_model_t *m, const char *name,
                                  void *out, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif /* DML_LAYERS_H_ */
