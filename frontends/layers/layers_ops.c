/* layers_ops.c — the layers of the layer API (dml_layers.h): each checks its
 * inputs, adds its parameters and its ONNX nodes, and runs shape inference
 * on them; a failure undoes the call (layers_fail). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "layers_internal.h"

#define TBUF 160

/* ==== checks ============================================================ */

static dml_status_t need_f32(layers_txn_t *tx, const dml_ir_value_t *v,
                             const char *what) {
  if (v->type.dtype == DML_DTYPE_F32) return DML_OK;
  char t[TBUF];
  return dml_status_detail(layers_err(tx, "%s must be f32, got %s", what,
                                      layers_type_str(tx->L, v, t, sizeof t)),
                           "layer '%s', input '%s'", tx->layer, v->name ? v->name : "");
}

/* Checks x is rank `rank` (or >= -rank when rank < 0) f32 with static dims
 * from `first_static` on. `hint` (may be NULL) is added to a rank error. */
static dml_status_t need_shape(layers_txn_t *tx, const dml_ir_value_t *x, int32_t rank,
                               int32_t first_static, const char *expect,
                               const char *hint) {
  char t[TBUF];
  int bad_rank = rank >= 0 ? x->type.rank != rank : x->type.rank < -rank;
  if (bad_rank) {
    dml_status_t s =
        layers_err(tx, "%s needs a %s input, got %s", tx->op + strlen("layers."), expect,
                   layers_type_str(tx->L, x, t, sizeof t));
    s = dml_status_detail(s, "layer '%s', input '%s'", tx->layer, x->name ? x->name : "");
    if (hint) s = dml_status_detail(s, "%s", hint);
    return s;
  }
  DML_RETURN_IF_ERROR(need_f32(tx, x, "the input"));
  for (int32_t d = first_static; d < x->type.rank; d++)
    if (x->type.dims[d].sym >= 0)
      return dml_status_detail(layers_err(tx, "dim %d of the input %s must be static",
                                          (int)d, layers_type_str(tx->L, x, t, sizeof t)),
                               "layer '%s': only the batch dim (0) may be symbolic",
                               tx->layer);
  return DML_OK;
}

static int finite_(double v) {
  return v == v && v - v == 0;
}

/* ==== activations ======================================================= */

static const char *act_kind(dml_layers_activation_t act) {
  switch (act) {
    case DML_LAYERS_ACT_RELU: return "relu";
    case DML_LAYERS_ACT_LEAKY_RELU: return "leaky_relu";
    case DML_LAYERS_ACT_SIGMOID: return "sigmoid";
    case DML_LAYERS_ACT_TANH: return "tanh";
    case DML_LAYERS_ACT_GELU: return "gelu";
    case DML_LAYERS_ACT_SOFTMAX: return "softmax";
    case DML_LAYERS_ACT_LOG_SOFTMAX: return "log_softmax";
    case DML_LAYERS_ACT_ELU: return "elu";
    default: return NULL;
  }
}

/* One single-node activation. */
static dml_status_t simple(layers_txn_t *tx, dml_op_t op, dml_ir_value_t *x,
                           const char *nm, dml_ir_node_t **out_node) {
  dml_ir_node_t *n = NULL;
  DML_RETURN_IF_ERROR(layers_node(tx, op, nm, 1, &x, &n));
  *out_node = n;
  return DML_OK;
}

/* GELU (exact): 0.5 * x * (1 + erf(x * (1/sqrt 2))), as PyTorch's CPU
 * kernel computes it (aten GeluKernel: x * 0.5 * (1 + erf(x * M_SQRT1_2))).
 * Constants are "<layer>.<cprefix>sqrt1_2", "...one", "...half". */
static dml_status_t gelu_nodes(layers_txn_t *tx, dml_ir_value_t *x, const char *nm,
                               const char *cprefix, dml_ir_value_t **out) {
  dml_layers_model_t *L = tx->L;
  dml_ir_value_t *c_r2 = NULL, *c_one = NULL, *c_half = NULL;
  DML_RETURN_IF_ERROR(layers_add_scalar(tx, layers_join(L, cprefix, "", "sqrt1_2"),
                                        (float)0.70710678118654752440, &c_r2));
  DML_RETURN_IF_ERROR(
      layers_add_scalar(tx, layers_join(L, cprefix, "", "one"), 1.0f, &c_one));
  DML_RETURN_IF_ERROR(
      layers_add_scalar(tx, layers_join(L, cprefix, "", "half"), 0.5f, &c_half));
  static const struct {
    dml_op_t op;
    const char *suffix;
  } steps[5] = {{DML_OP_MUL, "/scale"},
                {DML_OP_ERF, "/erf"},
                {DML_OP_ADD, "/add_one"},
                {DML_OP_MUL, "/mul_x"},
                {DML_OP_MUL, ""}};
  dml_ir_value_t *cur = x;
  for (int i = 0; i < 5; i++) {
    dml_ir_value_t *in[2] = {cur, NULL};
    uint32_t nin = 2;
    switch (i) {
      case 0: in[1] = c_r2; break;
      case 1: nin = 1; break;
      case 2: in[1] = c_one; break;
      case 3:
        in[0] = x;
        in[1] = cur;
        break;
      default: in[1] = c_half; break;
    }
    const char *node_name = layers_join(L, nm, "", steps[i].suffix);
    dml_ir_node_t *n = NULL;
    DML_RETURN_IF_ERROR(layers_node(tx, steps[i].op, node_name, nin, in, &n));
    DML_RETURN_IF_ERROR(layers_finish_node(tx, n, node_name));
    cur = n->outputs[0];
  }
  *out = cur;
  return DML_OK;
}

/* Adds activation `act` of `x` as nodes named `nm` (the last node's value
 * is named `nm` too). */
static dml_status_t act_nodes(layers_txn_t *tx, dml_ir_value_t *x,
                              dml_layers_activation_t act, double alpha, int32_t axis,
                              const char *nm, const char *cprefix, dml_ir_value_t **out) {
  DML_RETURN_IF_ERROR(need_f32(tx, x, "the input of an activation"));
  if (!nm) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, tx->op, "out of memory");
  dml_ir_node_t *n = NULL;
  switch (act) {
    case DML_LAYERS_ACT_RELU:
      DML_RETURN_IF_ERROR(simple(tx, DML_OP_RELU, x, nm, &n));
      break;
    case DML_LAYERS_ACT_SIGMOID:
      DML_RETURN_IF_ERROR(simple(tx, DML_OP_SIGMOID, x, nm, &n));
      break;
    case DML_LAYERS_ACT_TANH:
      DML_RETURN_IF_ERROR(simple(tx, DML_OP_TANH, x, nm, &n));
      break;
    case DML_LAYERS_ACT_LEAKY_RELU:
    case DML_LAYERS_ACT_ELU:
      if (!finite_(alpha)) return layers_err(tx, "alpha must be finite, got %g", alpha);
      DML_RETURN_IF_ERROR(simple(
          tx, act == DML_LAYERS_ACT_ELU ? DML_OP_ELU : DML_OP_LEAKY_RELU, x, nm, &n));
      DML_RETURN_IF_ERROR(dml_ir_node_set_attr_float(n, "alpha", (double)(float)alpha));
      break;
    case DML_LAYERS_ACT_SOFTMAX:
    case DML_LAYERS_ACT_LOG_SOFTMAX: {
      int32_t r = x->type.rank;
      if (r < 1 || axis < -r || axis >= r) {
        char t[TBUF];
        return layers_err(tx, "axis %d is out of range for %s", (int)axis,
                          layers_type_str(tx->L, x, t, sizeof t));
      }
      DML_RETURN_IF_ERROR(
          simple(tx, act == DML_LAYERS_ACT_SOFTMAX ? DML_OP_SOFTMAX : DML_OP_LOG_SOFTMAX,
                 x, nm, &n));
      DML_RETURN_IF_ERROR(dml_ir_node_set_attr_int(n, "axis", axis));
      break;
    }
    case DML_LAYERS_ACT_GELU: return gelu_nodes(tx, x, nm, cprefix, out);
    default: return layers_err(tx, "unknown activation %d", (int)act);
  }
  DML_RETURN_IF_ERROR(layers_finish_node(tx, n, nm));
  *out = n->outputs[0];
  return DML_OK;
}

/* A standalone activation layer. */
static dml_status_t act_layer(dml_layers_model_t *L, dml_layers_tensor_t *x,
                              dml_layers_activation_t act, double alpha, int32_t axis,
                              const char *name, dml_layers_tensor_t **out) {
  const char *kind = act_kind(act);
  char op[48];
  snprintf(op, sizeof op, "layers.%s", kind ? kind : "activation");
  layers_txn_t tx;
  if (!kind) {
    layers_txn_t t0;
    memset(&t0, 0, sizeof t0);
    t0.op = "layers.activation";
    return layers_err(&t0, "unknown activation %d", (int)act);
  }
  /* op strings must outlive the call only for error messages made here. */
  DML_RETURN_IF_ERROR(layers_begin(L, op, kind, name, &tx));
  dml_status_t s = layers_check_tensor(&tx, x, "the input");
  if (!s && !out) s = layers_err(&tx, "NULL output argument");
  dml_ir_value_t *y = NULL;
  if (!s) s = act_nodes(&tx, x->v, act, alpha, axis, tx.layer, "", &y);
  if (!s) s = layers_handle(L, y, out);
  if (s) return layers_fail(&tx, s);
  layers_commit(&tx, kind);
  return DML_OK;
}

dml_status_t dml_layers_activation(dml_layers_model_t *m, dml_layers_tensor_t *x,
                                   dml_layers_activation_t act, const char *name,
                                   dml_layers_tensor_t **out) {
  if (act == DML_LAYERS_ACT_NONE) {
    if (!x || !out || x->model != m)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "layers.activation",
                             "NULL argument or a tensor of another model");
    *out = x;
    return DML_OK;
  }
  double alpha = act == DML_LAYERS_ACT_LEAKY_RELU ? 0.01 : 1.0;
  return act_layer(m, x, act, alpha, -1, name, out);
}

dml_status_t dml_layers_relu(dml_layers_model_t *m, dml_layers_tensor_t *x,
                             dml_layers_tensor_t **out) {
  return act_layer(m, x, DML_LAYERS_ACT_RELU, 0, -1, NULL, out);
}
dml_status_t dml_layers_leaky_relu(dml_layers_model_t *m, dml_layers_tensor_t *x,
                                   double alpha, dml_layers_tensor_t **out) {
  return act_layer(m, x, DML_LAYERS_ACT_LEAKY_RELU, alpha, -1, NULL, out);
}
dml_status_t dml_layers_sigmoid(dml_layers_model_t *m, dml_layers_tensor_t *x,
                                dml_layers_tensor_t **out) {
  return act_layer(m, x, DML_LAYERS_ACT_SIGMOID, 0, -1, NULL, out);
}
dml_status_t dml_layers_tanh(dml_layers_model_t *m, dml_layers_tensor_t *x,
                             dml_layers_tensor_t **out) {
  return act_layer(m, x, DML_LAYERS_ACT_TANH, 0, -1, NULL, out);
}
dml_status_t dml_layers_gelu(dml_layers_model_t *m, dml_layers_tensor_t *x,
                             dml_layers_tensor_t **out) {
  return act_layer(m, x, DML_LAYERS_ACT_GELU, 0, -1, NULL, out);
}
dml_status_t dml_layers_elu(dml_layers_model_t *m, dml_layers_tensor_t *x, double alpha,
                            dml_layers_tensor_t **out) {
  return act_layer(m, x, DML_LAYERS_ACT_ELU, alpha, -1, NULL, out);
}
dml_status_t dml_layers_softmax(dml_layers_model_t *m, dml_layers_tensor_t *x,
                                int32_t axis, dml_layers_tensor_t **out) {
  return act_layer(m, x, DML_LAYERS_ACT_SOFTMAX, 0, axis, NULL, out);
}
dml_status_t dml_layers_log_softmax(dml_layers_model_t *m, dml_layers_tensor_t *x,
                                    int32_t axis, dml_layers_tensor_t **out) {
  return act_layer(m, x, DML_LAYERS_ACT_LOG_SOFTMAX, 0, axis, NULL, out);
}

/* The activation an option asks for, after a layer's node: node "<layer>/<act>". */
static dml_status_t fused_act(layers_txn_t *tx, dml_ir_value_t *y,
                              dml_layers_activation_t act, dml_ir_value_t **out) {
  if (act == DML_LAYERS_ACT_NONE) {
    *out = y;
    return DML_OK;
  }
  const char *kind = act_kind(act);
  if (!kind) return layers_err(tx, "unknown activation %d", (int)act);
  double alpha = act == DML_LAYERS_ACT_LEAKY_RELU ? 0.01 : 1.0;
  return act_nodes(tx, y, act, alpha, -1, layers_join(tx->L, tx->layer, "/", kind),
                   layers_join(tx->L, kind, ".", ""), out);
}

/* ==== dense ============================================================= */

dml_layers_dense_options_t dml_layers_dense_defaults(void) {
  dml_layers_dense_options_t o;
  memset(&o, 0, sizeof o);
  o.use_bias = 1;
  return o;
}

dml_status_t dml_layers_dense(dml_layers_model_t *L, dml_layers_tensor_t *x,
                              int64_t units, const dml_layers_dense_options_t *opts,
                              dml_layers_tensor_t **out) {
  dml_layers_dense_options_t o = opts ? *opts : dml_layers_dense_defaults();
  layers_txn_t tx;
  DML_RETURN_IF_ERROR(layers_begin(L, "layers.dense", "dense", o.name, &tx));
  dml_status_t s = layers_check_tensor(&tx, x, "the input");
  if (!s && !out) s = layers_err(&tx, "NULL output argument");
  if (!s)
    s = need_shape(&tx, x->v, 2, 1, "2-D [batch, features]",
                   "flatten the input first (dml_layers_flatten)");
  if (!s && units < 1)
    s = layers_err(&tx, "units must be >= 1, got %lld", (long long)units);
  if (!s && o.in_features && o.in_features != x->v->type.dims[1].value) {
    char t[TBUF];
    s = dml_status_detail(
        layers_err(&tx, "dense expects %lld input features, got %lld (input %s)",
                   (long long)o.in_features, (long long)x->v->type.dims[1].value,
                   layers_type_str(L, x->v, t, sizeof t)),
        "layer '%s', input '%s'", tx.layer, x->v->name ? x->v->name : "");
  }
  int64_t in = s ? 0 : x->v->type.dims[1].value;
  dml_ir_value_t *w = NULL, *b = NULL, *y = NULL;
  double bound = s ? 0 : 1.0 / sqrt((double)in);
  if (!s) {
    int64_t wd[2] = {units, in};
    s = layers_add_param(&tx, "weight", 2, wd, LAYERS_INIT_UNIFORM, bound,
                         DML_IR_GLOBAL_PARAM, &w);
  }
  if (!s && o.use_bias)
    s = layers_add_param(&tx, "bias", 1, &units, LAYERS_INIT_UNIFORM, bound,
                         DML_IR_GLOBAL_PARAM, &b);
  dml_ir_node_t *n = NULL;
  if (!s) {
    dml_ir_value_t *ins[3] = {x->v, w, b};
    s = layers_node(&tx, DML_OP_GEMM, tx.layer, b ? 3 : 2, ins, &n);
  }
  if (!s) s = dml_ir_node_set_attr_int(n, "transB", 1);
  if (!s) s = layers_finish_node(&tx, n, tx.layer);
  if (!s) s = fused_act(&tx, n->outputs[0], o.activation, &y);
  if (!s) s = layers_handle(L, y, out);
  if (s) return layers_fail(&tx, s);
  layers_commit(&tx, "dense");
  return DML_OK;
}

/* ==== conv2d and pooling ================================================ */

dml_layers_conv2d_options_t dml_layers_conv2d_defaults(void) {
  dml_layers_conv2d_options_t o;
  memset(&o, 0, sizeof o);
  o.strides[0] = o.strides[1] = 1;
  o.dilations[0] = o.dilations[1] = 1;
  o.groups = 1;
  o.use_bias = 1;
  return o;
}

dml_layers_pool2d_options_t dml_layers_pool2d_defaults(void) {
  dml_layers_pool2d_options_t o;
  memset(&o, 0, sizeof o);
  o.count_include_pad = 1;
  return o;
}

/* Output extent of a window op along one axis (ONNX's formula; ceil_mode as
 * PyTorch: the last window must start inside the input or the left
 * padding). Returns < 1 when no window fits. */
static int64_t window_out(int64_t in, int64_t k, int64_t s, int64_t d, int64_t p0,
                          int64_t p1, int ceil_mode) {
  int64_t span = in + p0 + p1 - d * (k - 1) - 1;
  if (span < 0) return 0;
  int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  if (ceil_mode && (out - 1) * s >= in + p0) out--;
  return out;
}

dml_status_t dml_layers_conv2d(dml_layers_model_t *L, dml_layers_tensor_t *x,
                               int64_t filters, int64_t kernel_h, int64_t kernel_w,
                               const dml_layers_conv2d_options_t *opts,
                               dml_layers_tensor_t **out) {
  dml_layers_conv2d_options_t o = opts ? *opts : dml_layers_conv2d_defaults();
  layers_txn_t tx;
  DML_RETURN_IF_ERROR(layers_begin(L, "layers.conv2d", "conv2d", o.name, &tx));
  char t[TBUF];
  dml_status_t s = layers_check_tensor(&tx, x, "the input");
  if (!s && !out) s = layers_err(&tx, "NULL output argument");
  if (!s) s = need_shape(&tx, x->v, 4, 1, "4-D [N, C, H, W]", NULL);
  const dml_dim_t *xd = s ? NULL : x->v->type.dims;
  int64_t k[2] = {kernel_h, kernel_w}, pads[4];
  memcpy(pads, o.pads, sizeof pads);
  if (!s && (filters < 1 || k[0] < 1 || k[1] < 1))
    s = layers_err(&tx,
                   "filters and kernel must be >= 1, got filters %lld kernel %lldx%lld",
                   (long long)filters, (long long)k[0], (long long)k[1]);
  if (!s &&
      (o.strides[0] < 1 || o.strides[1] < 1 || o.dilations[0] < 1 || o.dilations[1] < 1))
    s = layers_err(&tx,
                   "strides and dilations must be >= 1, got strides %lldx%lld "
                   "dilations %lldx%lld",
                   (long long)o.strides[0], (long long)o.strides[1],
                   (long long)o.dilations[0], (long long)o.dilations[1]);
  if (!s && o.groups < 1)
    s = layers_err(&tx, "groups must be >= 1, got %lld", (long long)o.groups);
  if (!s && o.in_channels && o.in_channels != xd[1].value)
    s = dml_status_detail(
        layers_err(&tx, "conv2d expects %lld input channels, got %lld (input %s)",
                   (long long)o.in_channels, (long long)xd[1].value,
                   layers_type_str(L, x->v, t, sizeof t)),
        "layer '%s', input '%s'", tx.layer, x->v->name ? x->v->name : "");
  if (!s && (xd[1].value % o.groups || filters % o.groups))
    s = layers_err(&tx,
                   "groups %lld must divide the input channels (%lld) and filters (%lld)",
                   (long long)o.groups, (long long)xd[1].value, (long long)filters);
  for (int i = 0; !s && !o.same && i < 4; i++)
    if (pads[i] < 0)
      s = layers_err(&tx, "pads must be >= 0, got %lld", (long long)pads[i]);
  int64_t osz[2] = {0, 0};
  for (int a = 0; !s && a < 2; a++) {
    int64_t in = xd[2 + a].value, st = o.strides[a], dl = o.dilations[a];
    if (o.same) {
      int64_t want = (in + st - 1) / st;
      int64_t total = (want - 1) * st + (k[a] - 1) * dl + 1 - in;
      if (total < 0) total = 0;
      pads[a] = total / 2;
      pads[2 + a] = total - total / 2;
    }
    osz[a] = window_out(in, k[a], st, dl, pads[a], pads[2 + a], 0);
    if (osz[a] < 1)
      s = dml_status_detail(
          layers_err(&tx,
                     "the kernel %lldx%lld (dilations %lldx%lld) does not fit input %s "
                     "with pads [%lld,%lld,%lld,%lld]",
                     (long long)k[0], (long long)k[1], (long long)o.dilations[0],
                     (long long)o.dilations[1], layers_type_str(L, x->v, t, sizeof t),
                     (long long)pads[0], (long long)pads[1], (long long)pads[2],
                     (long long)pads[3]),
          "layer '%s'", tx.layer);
  }
  dml_ir_value_t *w = NULL, *b = NULL, *y = NULL;
  if (!s) {
    int64_t cin = xd[1].value / o.groups;
    double bound = 1.0 / sqrt((double)(cin * k[0] * k[1]));
    int64_t wd[4] = {filters, cin, k[0], k[1]};
    s = layers_add_param(&tx, "weight", 4, wd, LAYERS_INIT_UNIFORM, bound,
                         DML_IR_GLOBAL_PARAM, &w);
    if (!s && o.use_bias)
      s = layers_add_param(&tx, "bias", 1, &filters, LAYERS_INIT_UNIFORM, bound,
                           DML_IR_GLOBAL_PARAM, &b);
  }
  dml_ir_node_t *n = NULL;
  if (!s) {
    dml_ir_value_t *ins[3] = {x->v, w, b};
    s = layers_node(&tx, DML_OP_CONV, tx.layer, b ? 3 : 2, ins, &n);
  }
  if (!s) s = dml_ir_node_set_attr_ints(n, "kernel_shape", k, 2);
  if (!s) s = dml_ir_node_set_attr_ints(n, "strides", o.strides, 2);
  if (!s) s = dml_ir_node_set_attr_ints(n, "pads", pads, 4);
  if (!s) s = dml_ir_node_set_attr_ints(n, "dilations", o.dilations, 2);
  if (!s) s = dml_ir_node_set_attr_int(n, "group", o.groups);
  if (!s) s = layers_finish_node(&tx, n, tx.layer);
  if (!s) s = fused_act(&tx, n->outputs[0], o.activation, &y);
  if (!s) s = layers_handle(L, y, out);
  if (s) return layers_fail(&tx, s);
  layers_commit(&tx, "conv2d");
  return DML_OK;
}

static dml_status_t pool2d(dml_layers_model_t *L, dml_layers_tensor_t *x, int is_max,
                           int64_t kh, int64_t kw,
                           const dml_layers_pool2d_options_t *opts,
                           dml_layers_tensor_t **out) {
  dml_layers_pool2d_options_t o = opts ? *opts : dml_layers_pool2d_defaults();
  const char *kind = is_max ? "max_pool2d" : "avg_pool2d";
  layers_txn_t tx;
  DML_RETURN_IF_ERROR(layers_begin(L, is_max ? "layers.max_pool2d" : "layers.avg_pool2d",
                                   kind, o.name, &tx));
  char t[TBUF];
  dml_status_t s = layers_check_tensor(&tx, x, "the input");
  if (!s && !out) s = layers_err(&tx, "NULL output argument");
  if (!s) s = need_shape(&tx, x->v, 4, 1, "4-D [N, C, H, W]", NULL);
  int64_t k[2] = {kh, kw}, st[2] = {o.strides[0], o.strides[1]};
  if (!s && (k[0] < 1 || k[1] < 1))
    s = layers_err(&tx, "kernel must be >= 1, got %lldx%lld", (long long)k[0],
                   (long long)k[1]);
  for (int a = 0; !s && a < 2; a++) {
    if (st[a] == 0) st[a] = k[a];
    if (st[a] < 1)
      s = layers_err(&tx, "strides must be >= 1, got %lld", (long long)st[a]);
  }
  for (int i = 0; !s && i < 4; i++)
    if (o.pads[i] < 0 || 2 * o.pads[i] > k[i % 2])
      s = layers_err(&tx, "pad %lld must be between 0 and half the kernel (%lld)",
                     (long long)o.pads[i], (long long)k[i % 2]);
  for (int a = 0; !s && a < 2; a++) {
    int64_t in = x->v->type.dims[2 + a].value;
    if (window_out(in, k[a], st[a], 1, o.pads[a], o.pads[2 + a], o.ceil_mode) < 1)
      s = dml_status_detail(
          layers_err(&tx, "the window %lldx%lld does not fit input %s", (long long)k[0],
                     (long long)k[1], layers_type_str(L, x->v, t, sizeof t)),
          "layer '%s'", tx.layer);
  }
  dml_ir_node_t *n = NULL;
  if (!s)
    s = layers_node(&tx, is_max ? DML_OP_MAX_POOL : DML_OP_AVERAGE_POOL, tx.layer, 1,
                    &x->v, &n);
  if (!s) s = dml_ir_node_set_attr_ints(n, "kernel_shape", k, 2);
  if (!s) s = dml_ir_node_set_attr_ints(n, "strides", st, 2);
  if (!s) s = dml_ir_node_set_attr_ints(n, "pads", o.pads, 4);
  if (!s && o.ceil_mode) s = dml_ir_node_set_attr_int(n, "ceil_mode", 1);
  if (!s && !is_max)
    s = dml_ir_node_set_attr_int(n, "count_include_pad", o.count_include_pad ? 1 : 0);
  if (!s) s = layers_finish_node(&tx, n, tx.layer);
  if (!s) s = layers_handle(L, n->outputs[0], out);
  if (s) return layers_fail(&tx, s);
  layers_commit(&tx, kind);
  return DML_OK;
}

dml_status_t dml_layers_max_pool2d(dml_layers_model_t *m, dml_layers_tensor_t *x,
                                   int64_t kernel_h, int64_t kernel_w,
                                   const dml_layers_pool2d_options_t *opts,
                                   dml_layers_tensor_t **out) {
  return pool2d(m, x, 1, kernel_h, kernel_w, opts, out);
}

dml_status_t dml_layers_avg_pool2d(dml_layers_model_t *m, dml_layers_tensor_t *x,
                                   int64_t kernel_h, int64_t kernel_w,
                                   const dml_layers_pool2d_options_t *opts,
                                   dml_layers_tensor_t **out) {
  return pool2d(m, x, 0, kernel_h, kernel_w, opts, out);
}

/* A layer of one parameterless node of `op` on x, named after `kind`. */
static dml_status_t one_node(dml_layers_model_t *L, const char *op_name, const char *kind,
                             const char *name, dml_layers_tensor_t *x, dml_op_t op,
                             int32_t rank, const char *expect, const char *attr,
                             int64_t attr_v, dml_layers_tensor_t **out) {
  layers_txn_t tx;
  DML_RETURN_IF_ERROR(layers_begin(L, op_name, kind, name, &tx));
  dml_status_t s = layers_check_tensor(&tx, x, "the input");
  if (!s && !out) s = layers_err(&tx, "NULL output argument");
  if (!s) s = need_shape(&tx, x->v, rank, 1, expect, NULL);
  dml_ir_node_t *n = NULL;
  if (!s) s = layers_node(&tx, op, tx.layer, 1, &x->v, &n);
  if (!s && attr) s = dml_ir_node_set_attr_int(n, attr, attr_v);
  if (!s) s = layers_finish_node(&tx, n, tx.layer);
  if (!s) s = layers_handle(L, n->outputs[0], out);
  if (s) return layers_fail(&tx, s);
  layers_commit(&tx, kind);
  return DML_OK;
}

dml_status_t dml_layers_global_avg_pool2d(dml_layers_model_t *m, dml_layers_tensor_t *x,
                                          dml_layers_tensor_t **out) {
  return one_node(m, "layers.global_avg_pool2d", "global_avg_pool2d", NULL, x,
                  DML_OP_GLOBAL_AVERAGE_POOL, 4, "4-D [N, C, H, W]", NULL, 0, out);
}

dml_status_t dml_layers_flatten(dml_layers_model_t *m, dml_layers_tensor_t *x,
                                dml_layers_tensor_t **out) {
  return one_node(m, "layers.flatten", "flatten", NULL, x, DML_OP_FLATTEN, -2,
                  "at least 2-D [N, ...]", "axis", 1, out);
}

/* ==== normalization and dropout ========================================= */

dml_layers_norm_options_t dml_layers_norm_defaults(void) {
  dml_layers_norm_options_t o;
  memset(&o, 0, sizeof o);
  o.epsilon = 1e-5;
  o.momentum = 0.1;
  o.axis = -1;
  return o;
}

dml_status_t dml_layers_batch_norm(dml_layers_model_t *L, dml_layers_tensor_t *x,
                                   const dml_layers_norm_options_t *opts,
                                   dml_layers_tensor_t **out) {
  dml_layers_norm_options_t o = opts ? *opts : dml_layers_norm_defaults();
  layers_txn_t tx;
  DML_RETURN_IF_ERROR(layers_begin(L, "layers.batch_norm", "batch_norm", o.name, &tx));
  dml_status_t s = layers_check_tensor(&tx, x, "the input");
  if (!s && !out) s = layers_err(&tx, "NULL output argument");
  if (!s) s = need_shape(&tx, x->v, -2, 1, "at least 2-D [N, C, ...]", NULL);
  if (!s && !(o.epsilon > 0 && finite_(o.epsilon)))
    s = layers_err(&tx, "epsilon must be > 0, got %g", o.epsilon);
  if (!s && !(o.momentum >= 0 && o.momentum <= 1))
    s = layers_err(&tx, "momentum must be in [0, 1], got %g", o.momentum);
  dml_ir_value_t *p[4] = {NULL, NULL, NULL, NULL};
  static const char *const names[4] = {"weight", "bias", "running_mean", "running_var"};
  static const double init[4] = {1.0, 0.0, 0.0, 1.0};
  int64_t c = s ? 0 : x->v->type.dims[1].value;
  for (int i = 0; !s && i < 4; i++)
    s = layers_add_param(&tx, names[i], 1, &c, LAYERS_INIT_CONST, init[i],
                         i < 2 ? DML_IR_GLOBAL_PARAM : DML_IR_GLOBAL_STATE, &p[i]);
  dml_ir_node_t *n = NULL;
  if (!s) {
    dml_ir_value_t *ins[5] = {x->v, p[0], p[1], p[2], p[3]};
    s = layers_node(&tx, DML_OP_BATCH_NORMALIZATION, tx.layer, 5, ins, &n);
  }
  if (!s) s = dml_ir_node_set_attr_float(n, "epsilon", (double)(float)o.epsilon);
  if (!s)
    s = dml_ir_node_set_attr_float(n, "momentum", (double)(float)(1.0 - o.momentum));
  if (!s) s = layers_finish_node(&tx, n, tx.layer);
  if (!s) s = layers_handle(L, n->outputs[0], out);
  if (s) return layers_fail(&tx, s);
  layers_commit(&tx, "batch_norm");
  return DML_OK;
}

dml_status_t dml_layers_layer_norm(dml_layers_model_t *L, dml_layers_tensor_t *x,
                                   const dml_layers_norm_options_t *opts,
                                   dml_layers_tensor_t **out) {
  dml_layers_norm_options_t o = opts ? *opts : dml_layers_norm_defaults();
  layers_txn_t tx;
  DML_RETURN_IF_ERROR(layers_begin(L, "layers.layer_norm", "layer_norm", o.name, &tx));
  char t[TBUF];
  dml_status_t s = layers_check_tensor(&tx, x, "the input");
  if (!s && !out) s = layers_err(&tx, "NULL output argument");
  if (!s) s = need_f32(&tx, x->v, "the input");
  int32_t r = s ? 0 : x->v->type.rank, ax = o.axis < 0 ? o.axis + r : o.axis;
  if (!s && (ax < 0 || ax >= r))
    s = layers_err(&tx, "axis %d is out of range for %s", (int)o.axis,
                   layers_type_str(L, x->v, t, sizeof t));
  for (int32_t d = ax; !s && d < r; d++)
    if (x->v->type.dims[d].sym >= 0)
      s = dml_status_detail(
          layers_err(&tx, "axis %d of %s covers the symbolic batch dim", (int)o.axis,
                     layers_type_str(L, x->v, t, sizeof t)),
          "layer norm normalizes over static dims (the weight has their shape)");
  if (!s && !(o.epsilon > 0 && finite_(o.epsilon)))
    s = layers_err(&tx, "epsilon must be > 0, got %g", o.epsilon);
  int64_t dims[DML_MAX_RANK];
  for (int32_t d = ax; !s && d < r; d++) dims[d - ax] = x->v->type.dims[d].value;
  dml_ir_value_t *w = NULL, *b = NULL;
  if (!s)
    s = layers_add_param(&tx, "weight", r - ax, dims, LAYERS_INIT_CONST, 1.0,
                         DML_IR_GLOBAL_PARAM, &w);
  if (!s)
    s = layers_add_param(&tx, "bias", r - ax, dims, LAYERS_INIT_CONST, 0.0,
                         DML_IR_GLOBAL_PARAM, &b);
  dml_ir_node_t *n = NULL;
  if (!s) {
    dml_ir_value_t *ins[3] = {x->v, w, b};
    s = layers_node(&tx, DML_OP_LAYER_NORMALIZATION, tx.layer, 3, ins, &n);
  }
  if (!s) s = dml_ir_node_set_attr_int(n, "axis", ax);
  if (!s) s = dml_ir_node_set_attr_float(n, "epsilon", (double)(float)o.epsilon);
  if (!s) s = layers_finish_node(&tx, n, tx.layer);
  if (!s) s = layers_handle(L, n->outputs[0], out);
  if (s) return layers_fail(&tx, s);
  layers_commit(&tx, "layer_norm");
  return DML_OK;
}

dml_status_t dml_layers_dropout(dml_layers_model_t *L, dml_layers_tensor_t *x,
                                double ratio, const char *name,
                                dml_layers_tensor_t **out) {
  layers_txn_t tx;
  DML_RETURN_IF_ERROR(layers_begin(L, "layers.dropout", "dropout", name, &tx));
  dml_status_t s = layers_check_tensor(&tx, x, "the input");
  if (!s && !out) s = layers_err(&tx, "NULL output argument");
  if (!s) s = need_f32(&tx, x->v, "the input");
  if (!s && !(ratio >= 0 && ratio < 1))
    s = layers_err(&tx, "ratio must be in [0, 1), got %g", ratio);
  dml_ir_value_t *r = NULL;
  if (!s) s = layers_add_scalar(&tx, "ratio", (float)ratio, &r);
  dml_ir_node_t *n = NULL;
  if (!s) {
    dml_ir_value_t *ins[2] = {x->v, r};
    s = layers_node(&tx, DML_OP_DROPOUT, tx.layer, 2, ins, &n);
  }
  if (!s) s = layers_finish_node(&tx, n, tx.layer);
  if (!s) s = layers_handle(L, n->outputs[0], out);
  if (s) return layers_fail(&tx, s);
  layers_commit(&tx, "dropout");
  return DML_OK;
}

/* ==== add, concat, embedding ============================================ */

dml_status_t dml_layers_add(dml_layers_model_t *L, dml_layers_tensor_t *a,
                            dml_layers_tensor_t *b, dml_layers_tensor_t **out) {
  layers_txn_t tx;
  DML_RETURN_IF_ERROR(layers_begin(L, "layers.add", "add", NULL, &tx));
  char t1[TBUF], t2[TBUF];
  dml_status_t s = layers_check_tensor(&tx, a, "the first input");
  if (!s) s = layers_check_tensor(&tx, b, "the second input");
  if (!s && !out) s = layers_err(&tx, "NULL output argument");
  if (!s && !dml_type_equal(&a->v->type, &b->v->type))
    s = dml_status_detail(
        layers_err(&tx, "add needs two tensors of one shape, got %s and %s",
                   layers_type_str(L, a->v, t1, sizeof t1),
                   layers_type_str(L, b->v, t2, sizeof t2)),
        "layer '%s', inputs '%s' and '%s'", tx.layer, a->v->name ? a->v->name : "",
        b->v->name ? b->v->name : "");
  dml_ir_node_t *n = NULL;
  if (!s) {
    dml_ir_value_t *ins[2] = {a->v, b->v};
    s = layers_node(&tx, DML_OP_ADD, tx.layer, 2, ins, &n);
  }
  if (!s) s = layers_finish_node(&tx, n, tx.layer);
  if (!s) s = layers_handle(L, n->outputs[0], out);
  if (s) return layers_fail(&tx, s);
  layers_commit(&tx, "add");
  return DML_OK;
}

dml_status_t dml_layers_concat(dml_layers_model_t *L, dml_layers_tensor_t *const *xs,
                               size_t n_in, int32_t axis, dml_layers_tensor_t **out) {
  layers_txn_t tx;
  DML_RETURN_IF_ERROR(layers_begin(L, "layers.concat", "concat", NULL, &tx));
  char t1[TBUF], t2[TBUF];
  dml_status_t s = DML_OK;
  if (!xs || !n_in || n_in > 65536 || !out)
    s = layers_err(&tx, "concat needs 1..65536 tensors and an output, got %zu", n_in);
  for (size_t i = 0; !s && i < n_in; i++) s = layers_check_tensor(&tx, xs[i], "an input");
  const dml_type_t *t0 = s ? NULL : &xs[0]->v->type;
  int32_t r = t0 ? t0->rank : 0, ax = axis < 0 ? axis + r : axis;
  if (!s && (ax < 0 || ax >= r))
    s = layers_err(&tx, "axis %d is out of range for %s", (int)axis,
                   layers_type_str(L, xs[0]->v, t1, sizeof t1));
  for (size_t i = 0; !s && i < n_in; i++) {
    const dml_type_t *ti = &xs[i]->v->type;
    int ok = ti->dtype == t0->dtype && ti->rank == r && ti->dims[ax].sym < 0;
    for (int32_t d = 0; ok && d < r; d++)
      if (d != ax)
        ok = ti->dims[d].value == t0->dims[d].value && ti->dims[d].sym == t0->dims[d].sym;
    if (!ok)
      s = dml_status_detail(
          layers_err(&tx, "concat along axis %d: input %zu is %s, input 0 is %s", (int)ax,
                     i, layers_type_str(L, xs[i]->v, t1, sizeof t1),
                     layers_type_str(L, xs[0]->v, t2, sizeof t2)),
          "inputs agree in dtype, rank and every dim but the (static) axis");
  }
  dml_ir_node_t *n = NULL;
  dml_ir_value_t **ins =
      s ? NULL : (dml_ir_value_t **)dml_ir_alloc(L->m, n_in * sizeof(dml_ir_value_t *));
  if (!s && !ins)
    s = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, tx.op, "out of memory");
  for (size_t i = 0; !s && i < n_in; i++) ins[i] = xs[i]->v;
  if (!s) s = layers_node(&tx, DML_OP_CONCAT, tx.layer, (uint32_t)n_in, ins, &n);
  if (!s) s = dml_ir_node_set_attr_int(n, "axis", ax);
  if (!s) s = layers_finish_node(&tx, n, tx.layer);
  if (!s) s = layers_handle(L, n->outputs[0], out);
  if (s) return layers_fail(&tx, s);
  layers_commit(&tx, "concat");
  return DML_OK;
}

dml_status_t dml_layers_embedding(dml_layers_model_t *L, dml_layers_tensor_t *indices,
                                  int64_t vocab, int64_t dim, const char *name,
                                  dml_layers_tensor_t **out) {
  layers_txn_t tx;
  DML_RETURN_IF_ERROR(layers_begin(L, "layers.embedding", "embedding", name, &tx));
  char t[TBUF];
  dml_status_t s = layers_check_tensor(&tx, indices, "the indices");
  if (!s && !out) s = layers_err(&tx, "NULL output argument");
  if (!s && indices->v->type.dtype != DML_DTYPE_I64 &&
      indices->v->type.dtype != DML_DTYPE_I32)
    s = layers_err(&tx, "embedding indices must be i64 or i32, got %s",
                   layers_type_str(L, indices->v, t, sizeof t));
  if (!s && indices->v->type.rank >= DML_MAX_RANK)
    s = layers_err(&tx, "indices of rank %d leave no room for the embedding dim",
                   (int)indices->v->type.rank);
  if (!s && (vocab < 1 || dim < 1))
    s = layers_err(&tx, "vocab and dim must be >= 1, got %lld and %lld", (long long)vocab,
                   (long long)dim);
  dml_ir_value_t *w = NULL;
  if (!s) {
    int64_t wd[2] = {vocab, dim};
    s = layers_add_param(&tx, "weight", 2, wd, LAYERS_INIT_NORMAL, 0, DML_IR_GLOBAL_PARAM,
                         &w);
  }
  dml_ir_node_t *n = NULL;
  if (!s) {
    dml_ir_value_t *ins[2] = {w, indices->v};
    s = layers_node(&tx, DML_OP_GATHER, tx.layer, 2, ins, &n);
  }
  if (!s) s = dml_ir_node_set_attr_int(n, "axis", 0);
  if (!s) s = layers_finish_node(&tx, n, tx.layer);
  if (!s) s = layers_handle(L, n->outputs[0], out);
  if (s) return layers_fail(&tx, s);
  layers_commit(&tx, "embedding");
  return DML_OK;
}
