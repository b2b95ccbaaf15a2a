/*
 * train.c — builds train_step and eval_step from forward (dml_train.h):
 * loss insertion, training-mode rewrites, reverse-mode autodiff
 * (autodiff.c), gradient clipping and the optimizer update, all as IR ops.
 *
 * Sources of the formulas:
 *   losses      torch.nn.functional: cross_entropy (with label_smoothing),
 *               nll_loss, binary_cross_entropy_with_logits (log(1+e^x) - x t,
 *               with Softplus), binary_cross_entropy (logs clamped at -100),
 *               mse_loss, l1_loss, huber_loss; reduction 'mean'.
 *   optimizers  the algorithm boxes of the torch.optim docs (2.x): SGD
 *               (momentum with dampening 0, nesterov), Adam, AdamW
 *               (decoupled decay p *= 1 - lr*wd first), RMSprop (centered
 *               off), Adagrad (lr_decay 0, initial accumulator 0); weight
 *               decay g += wd * p for all but AdamW.
 *   clipping    torch.nn.utils.clip_grad_norm_ (coef = max / (norm + 1e-6),
 *               clamped to 1) and clip_grad_value_; by value first when
 *               both are asked for.
 *   batch norm  ONNX BatchNormalization-15 training mode: batch mean and
 *               (biased) variance normalize; running = running * momentum +
 *               batch * (1 - momentum), with the unbiased variance for the
 *               running variance as PyTorch does.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_autodiff.h"
#include "dml_ir_infer.h"
#include "dml_train.h"

#define OP "train"

typedef dml_ir_value_t V;

void dml_train_config_init(dml_train_config_t *c) {
  memset(c, 0, sizeof *c);
  c->loss = DML_TRAIN_DEFAULT_LOSS;
  c->optimizer = DML_TRAIN_DEFAULT_OPTIMIZER;
}

static const char *const k_loss_names[] = {
    "cross_entropy", "nll", "bce_with_logits", "bce", "mse", "mae", "huber"};
static const char *const k_opt_names[] = {"sgd",   "momentum", "nesterov", "adam",
                                          "adamw", "rmsprop",  "adagrad"};
#define N_LOSSES (sizeof k_loss_names / sizeof k_loss_names[0])
#define N_OPTS (sizeof k_opt_names / sizeof k_opt_names[0])

const char *dml_loss_kind_name(dml_loss_kind_t k) {
  return (size_t)k < N_LOSSES ? k_loss_names[k] : "?";
}
const char *dml_optimizer_kind_name(dml_optimizer_kind_t k) {
  return (size_t)k < N_OPTS ? k_opt_names[k] : "?";
}

dml_status_t dml_loss_kind_parse(const char *s, dml_loss_kind_t *out) {
  for (size_t i = 0; s && i < N_LOSSES; i++)
    if (!strcmp(s, k_loss_names[i])) {
      *out = (dml_loss_kind_t)i;
      return DML_OK;
    }
  if (s && !strcmp(s, "l1")) {
    *out = DML_LOSS_MAE;
    return DML_OK;
  }
  return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                         "unknown loss '%s' (known: cross_entropy, nll, bce_with_logits, "
                         "bce, mse, mae or l1, huber)",
                         s ? s : "");
}

dml_status_t dml_train_outputs_parse(const char *spec, char *buf, size_t cap,
                                     dml_train_output_t *out, uint32_t *n) {
  if (!spec || !buf || !out || !n || strlen(spec) >= cap)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "loss per output '%.200s': empty or longer than %zu bytes",
                           spec ? spec : "", cap ? cap - 1 : 0);
  strcpy(buf, spec);
  uint32_t k = 0;
  for (char *p = buf; p;) {
    char *end = strchr(p, ',');
    if (end) *end = 0;
    char *eq = strchr(p, '='), *colon = eq ? strchr(eq + 1, ':') : NULL;
    if (!eq || eq == p)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                             "loss per output: '%s' is not OUT=LOSS[:WEIGHT]", p);
    if (k == DML_TRAIN_MAX_OUTPUTS)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                             "loss per output: more than %d outputs",
                             DML_TRAIN_MAX_OUTPUTS);
    *eq = 0;
    dml_train_output_t *o = &out[k++];
    o->name = p;
    o->weight = 1;
    if (colon) {
      *colon = 0;
      char *e2 = NULL;
      o->weight = strtod(colon + 1, &e2);
      if (!colon[1] || *e2 || !isfinite(o->weight) || o->weight < 0)
        return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                               "loss per output: weight '%s' of output '%s' must be a "
                               "finite number >= 0",
                               colon + 1, p);
    }
    dml_status_t st = dml_loss_kind_parse(eq + 1, &o->loss);
    if (st) return dml_status_annotate(st, "parsing the loss of output '%s'", p);
    p = end ? end + 1 : NULL;
  }
  *n = k;
  return DML_OK;
}

dml_status_t dml_optimizer_kind_parse(const char *s, dml_optimizer_kind_t *out) {
  for (size_t i = 0; s && i < N_OPTS; i++)
    if (!strcmp(s, k_opt_names[i])) {
      *out = (dml_optimizer_kind_t)i;
      return DML_OK;
    }
  return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                         "unknown optimizer '%s' (known: sgd, momentum, nesterov, adam, "
                         "adamw, rmsprop, adagrad)",
                         s ? s : "");
}

/* ---- emitting nodes (as in autodiff.c) ------------------------------------- */

typedef struct tb {
  dml_ir_module_t *m;
  dml_ir_function_t *f;
  dml_status_t st;
  const char *name;
  /* Assigns that must come last (after every read of their globals). */
  V *assign_target[1024];
  V *assign_value[1024];
  uint32_t n_assign;
  /* The run-time hyper-parameters made so far ("hyper.NAME" globals). */
  V *hyper[16];
  uint32_t n_hyper;
} tb_t;

static dml_ir_node_t *mk(tb_t *b, dml_op_t op, uint32_t n_in, V *const *ins,
                         uint32_t n_out) {
  if (b->st) return NULL;
  for (uint32_t i = 0; i < n_in; i++)
    if (!ins[i] && (int)i < dml_op_info(op)->min_inputs) {
      b->st = dml_status_make(DML_STATUS_INTERNAL, OP, "%s: operand %u is missing",
                              dml_op_name(op), i);
      return NULL;
    }
  dml_ir_node_t *n = NULL;
  b->st = dml_ir_node_create(b->f, op, b->name, n_in, ins, n_out, NULL, &n);
  return b->st ? NULL : n;
}
static V *fin(tb_t *b, dml_ir_node_t *n) {
  if (b->st || !n) return NULL;
  b->st = dml_ir_infer_node(b->m, n);
  return b->st ? NULL : n->outputs[0];
}
static V *op1(tb_t *b, dml_op_t op, V *x) {
  return x ? fin(b, mk(b, op, 1, &x, 1)) : NULL;
}
static V *op2(tb_t *b, dml_op_t op, V *x, V *y) {
  if (!x || !y) return NULL;
  V *in[2] = {x, y};
  return fin(b, mk(b, op, 2, in, 1));
}
static V *op3(tb_t *b, dml_op_t op, V *x, V *y, V *z) {
  if (!x || !y || !z) return NULL;
  V *in[3] = {x, y, z};
  return fin(b, mk(b, op, 3, in, 1));
}
static void set_int(tb_t *b, dml_ir_node_t *n, const char *k, int64_t v) {
  if (!b->st && n) b->st = dml_ir_node_set_attr_int(n, k, v);
}
static void set_ints(tb_t *b, dml_ir_node_t *n, const char *k, const int64_t *v,
                     size_t c) {
  if (!b->st && n) b->st = dml_ir_node_set_attr_ints(n, k, v, c);
}
static V *cst(tb_t *b, dml_dtype_t dt, double v) {
  if (b->st) return NULL;
  uint8_t buf[8];
  dml_store_f64(dt, buf, 0, v);
  dml_type_t t = dml_type_static(dt, 0, NULL);
  V *g = NULL;
  b->st = dml_ir_module_add_constant(b->m, "train.c", &t, buf, dml_dtype_size(dt), &g);
  return g;
}
static V *cst_i64(tb_t *b, const int64_t *v, int64_t n) {
  if (b->st) return NULL;
  dml_type_t t = dml_type_static(DML_DTYPE_I64, 1, &n);
  V *g = NULL;
  b->st = dml_ir_module_add_constant(b->m, "train.i", &t, v, (size_t)n * 8, &g);
  return g;
}
static V *reduce(tb_t *b, dml_op_t op, V *x, const int64_t *axes, size_t n, int keep) {
  if (!x) return NULL;
  dml_ir_node_t *nd = mk(b, op, 1, &x, 1);
  if (n) set_ints(b, nd, "axes", axes, n);
  set_int(b, nd, "keepdims", keep);
  return fin(b, nd);
}
static V *mean_all(tb_t *b, V *x) {
  return reduce(b, DML_OP_REDUCE_MEAN, x, NULL, 0, 0);
}
static V *cast_to(tb_t *b, V *x, dml_dtype_t dt) {
  if (!x) return NULL;
  dml_ir_node_t *n = mk(b, DML_OP_CAST, 1, &x, 1);
  set_int(b, n, "to", dml_dtype_onnx_code(dt));
  return fin(b, n);
}
static V *mul(tb_t *b, V *x, V *y) {
  return op2(b, DML_OP_MUL, x, y);
}
static V *add(tb_t *b, V *x, V *y) {
  return op2(b, DML_OP_ADD, x, y);
}
static V *sub(tb_t *b, V *x, V *y) {
  return op2(b, DML_OP_SUB, x, y);
}
static V *divv(tb_t *b, V *x, V *y) {
  return op2(b, DML_OP_DIV, x, y);
}
static V *mulc(tb_t *b, V *x, double c) {
  return x ? mul(b, x, cst(b, x->type.dtype, c)) : NULL;
}

/* A run-time hyper-parameter: the f32 scalar global "hyper.NAME" (flagged
 * state, so checkpoints and the saved package keep it), holding the
 * compiled value `v` until the trainer writes another at fit
 * (dml_fit_options_t.hyper); cast to `dt` when that is not f32. */
static V *hp(tb_t *b, const char *name, double v, dml_dtype_t dt) {
  if (b->st) return NULL;
  char full[64];
  snprintf(full, sizeof full, "hyper.%s", name);
  V *g = NULL;
  for (uint32_t i = 0; i < b->n_hyper && !g; i++)
    if (!strcmp(b->hyper[i]->name, full)) g = b->hyper[i];
  if (!g) {
    if (b->n_hyper == sizeof b->hyper / sizeof b->hyper[0]) {
      b->st = dml_status_make(DML_STATUS_INTERNAL, OP, "too many hyper-parameters");
      return NULL;
    }
    float f = (float)v;
    dml_type_t t = dml_type_static(DML_DTYPE_F32, 0, NULL);
    b->st =
        dml_ir_module_add_global(b->m, full, &t, &f, sizeof f, DML_IR_GLOBAL_STATE, &g);
    if (b->st) return NULL;
    b->hyper[b->n_hyper++] = g;
  }
  return dt == DML_DTYPE_F32 ? g : cast_to(b, g, dt);
}
/* x * hyper-parameter NAME */
static V *mulh(tb_t *b, V *x, const char *name, double v) {
  return x ? mul(b, x, hp(b, name, v, x->type.dtype)) : NULL;
}

static void defer_assign(tb_t *b, V *target, V *value) {
  if (b->st || !value) return;
  if (b->n_assign == sizeof b->assign_target / sizeof b->assign_target[0]) {
    b->st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP,
                            "more than %u state updates in train_step", b->n_assign);
    return;
  }
  b->assign_target[b->n_assign] = target;
  b->assign_value[b->n_assign++] = value;
}

/* A fresh zero-initialized state global "<param>.<slot>" typed as `like`. */
static V *state_global(tb_t *b, const V *like, const char *slot) {
  if (b->st) return NULL;
  char name[512];
  snprintf(name, sizeof name, "%s.%s", like->name, slot);
  V *g = NULL;
  b->st =
      dml_ir_module_add_global(b->m, name, &like->type, NULL, 0, DML_IR_GLOBAL_STATE, &g);
  if (b->st)
    b->st = dml_status_annotate(b->st, "adding optimizer state for parameter '%s'",
                                like->name);
  return g;
}

/* ---- cloning forward -------------------------------------------------------- */

typedef struct clone {
  V **map; /* by old value id */
  uint32_t n;
} clone_t;

static V *mapped(const clone_t *c, V *v) {
  if (!v || v->kind == DML_IR_VALUE_GLOBAL) return v;
  return v->id < c->n ? c->map[v->id] : NULL;
}

/* Training-mode BatchNormalization (ONNX 15, training_mode = 1) as
 * primitive ops; the running statistics' updates are deferred Assigns. */
static V *bn_train(tb_t *b, const dml_ir_node_t *n, V *x) {
  V *scale = n->inputs[1], *bias = n->inputs[2], *rm = n->inputs[3], *rv = n->inputs[4];
  const dml_attr_t *ea = dml_ir_node_attr(n, "epsilon"),
                   *ma = dml_ir_node_attr(n, "momentum");
  double eps = ea && ea->kind == DML_ATTR_FLOAT ? ea->f : 1e-5;
  double mom = ma && ma->kind == DML_ATTR_FLOAT ? ma->f : 0.9;
  int32_t r = x->type.rank;
  dml_dim_t C = x->type.dims[1];
  if (r < 2 || C.sym >= 0) {
    b->st =
        dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                        "BatchNormalization '%s': training needs a static channel dim",
                        n->name ? n->name : "");
    return NULL;
  }
  int64_t axes[DML_MAX_RANK], na = 0, cshape[DML_MAX_RANK];
  axes[na++] = 0;
  cshape[0] = 1;
  cshape[1] = C.value;
  for (int32_t i = 2; i < r; i++) axes[na++] = i, cshape[i] = 1;
  dml_dtype_t dt = x->type.dtype;
  V *mean = reduce(b, DML_OP_REDUCE_MEAN, x, axes, (size_t)na, 1);
  V *xc = sub(b, x, mean);
  V *var = reduce(b, DML_OP_REDUCE_MEAN, mul(b, xc, xc), axes, (size_t)na, 1);
  V *inv = op1(b, DML_OP_RECIPROCAL, op1(b, DML_OP_SQRT, add(b, var, cst(b, dt, eps))));
  V *shp = cst_i64(b, cshape, r);
  V *y = add(b, mul(b, mul(b, xc, inv), op2(b, DML_OP_RESHAPE, scale, shp)),
             op2(b, DML_OP_RESHAPE, bias, shp));
  if (rm->kind == DML_IR_VALUE_GLOBAL && rv->kind == DML_IR_VALUE_GLOBAL &&
      (rm->global_flags & DML_IR_GLOBAL_STATE) &&
      (rv->global_flags & DML_IR_GLOBAL_STATE)) {
    int64_t c1 = C.value;
    V *cs = cst_i64(b, &c1, 1);
    /* elements per channel: numel(x) / C, symbolic batch included */
    V *cnt = cast_to(
        b, divv(b, op1(b, DML_OP_SIZE, x), cst(b, DML_DTYPE_I64, (double)c1)), dt);
    V *unbiased =
        mul(b, op2(b, DML_OP_RESHAPE, var, cs), divv(b, cnt, sub(b, cnt, cst(b, dt, 1))));
    defer_assign(
        b, rm,
        add(b, mulc(b, rm, mom), mulc(b, op2(b, DML_OP_RESHAPE, mean, cs), 1 - mom)));
    defer_assign(b, rv, add(b, mulc(b, rv, mom), mulc(b, unbiased, 1 - mom)));
  }
  return y;
}

/* Training-mode FakeQuantize with an observed range (a state global, the
 * QAT form of compiler/dml_quantize.h): the range follows the batches as
 * an exponential moving average, PyTorch's MovingAverageMinMaxObserver
 * (averaging_constant 0.01): range = range + 0.01 (batch - range) with
 * batch = [min(x), max(x)]; a bound stays as it was where the batch's
 * NaN or +-inf would make it NaN or infinite. The update is a
 * deferred Assign and this batch is fake-quantized with the new range, as
 * PyTorch's FakeQuantize observes before it quantizes. The range carries
 * no gradient (autodiff.c's vjp_fake_quantize). */
static V *fq_train(tb_t *b, const dml_ir_node_t *n, V *x, V *range) {
  const double c = 0.01;
  int64_t one = 1;
  V *shp = cst_i64(b, &one, 1);
  V *in[2] = {op2(b, DML_OP_RESHAPE, reduce(b, DML_OP_REDUCE_MIN, x, NULL, 0, 0), shp),
              op2(b, DML_OP_RESHAPE, reduce(b, DML_OP_REDUCE_MAX, x, NULL, 0, 0), shp)};
  dml_ir_node_t *cn = in[0] && in[1] ? mk(b, DML_OP_CONCAT, 2, in, 1) : NULL;
  set_int(b, cn, "axis", 0);
  V *batch = fin(b, cn);
  V *ema = add(b, range, mulc(b, sub(b, batch, range), c));
  V *bad = op2(b, DML_OP_OR, op1(b, DML_OP_IS_NAN, ema), op1(b, DML_OP_IS_INF, ema));
  V *upd = op3(b, DML_OP_WHERE, bad, range, ema);
  defer_assign(b, range, upd);
  V *ins[2] = {x, upd};
  dml_ir_node_t *k = upd ? mk(b, DML_OP_FAKE_QUANTIZE, 2, ins, 1) : NULL;
  for (uint32_t i = 0; k && i < n->n_attrs && !b->st; i++)
    b->st = dml_ir_node_set_attr(k, &n->attrs[i]);
  return fin(b, k);
}

/* LayerNormalization (ONNX 17) as primitive ops (Y only). */
static V *ln_decompose(tb_t *b, const dml_ir_node_t *n, V *x, V *scale, V *bias) {
  const dml_attr_t *ea = dml_ir_node_attr(n, "epsilon"),
                   *aa = dml_ir_node_attr(n, "axis");
  double eps = ea && ea->kind == DML_ATTR_FLOAT ? ea->f : 1e-5;
  int64_t axis = aa && aa->kind == DML_ATTR_INT ? aa->i : -1;
  int32_t r = x->type.rank;
  if (axis < 0) axis += r;
  int64_t axes[DML_MAX_RANK];
  size_t na = 0;
  for (int64_t i = axis; i < r; i++) axes[na++] = i;
  dml_dtype_t dt = x->type.dtype;
  V *mean = reduce(b, DML_OP_REDUCE_MEAN, x, axes, na, 1);
  V *xc = sub(b, x, mean);
  V *var = reduce(b, DML_OP_REDUCE_MEAN, mul(b, xc, xc), axes, na, 1);
  V *y = mul(
      b,
      mul(b, xc,
          op1(b, DML_OP_RECIPROCAL, op1(b, DML_OP_SQRT, add(b, var, cst(b, dt, eps))))),
      scale);
  return bias ? add(b, y, bias) : y;
}

/* Copies forward's args and nodes into b->f. train: training-mode rewrites
 * (Dropout on, BatchNormalization with batch statistics, LayerNormalization
 * decomposed); else Dropout off. */
static dml_status_t clone_forward(tb_t *b, const dml_ir_function_t *fwd, int train,
                                  clone_t *c) {
  c->n = b->m->next_value_id;
  c->map = (V **)calloc(c->n ? c->n : 1, sizeof(V *));
  if (!c->map) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  for (uint32_t i = 0; i < fwd->n_args && !b->st; i++) {
    V *a = fwd->args[i], *na = NULL;
    b->st = dml_ir_function_add_arg(b->f, a->name, &a->type, &na);
    if (!b->st) c->map[a->id] = na;
  }
  V *yes = NULL;
  for (const dml_ir_node_t *n = fwd->first; n && !b->st; n = n->next) {
    b->name = n->name;
    V *ins[64];
    if (n->n_inputs > 64) {
      b->st = dml_status_make(DML_STATUS_UNIMPLEMENTED, OP, "node '%s' has %u inputs",
                              n->name ? n->name : "", n->n_inputs);
      break;
    }
    for (uint32_t i = 0; i < n->n_inputs; i++) ins[i] = mapped(c, n->inputs[i]);
    if (train && n->op == DML_OP_BATCH_NORMALIZATION) {
      if (n->n_outputs > 1) {
        b->st = dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                                "BatchNormalization '%s' already in training mode",
                                n->name ? n->name : "");
        break;
      }
      V *y = bn_train(b, n, ins[0]);
      if (y) c->map[n->outputs[0]->id] = y;
      continue;
    }
    if (train && n->op == DML_OP_FAKE_QUANTIZE && n->n_inputs > 1 && ins[1] &&
        ins[1]->kind == DML_IR_VALUE_GLOBAL &&
        (ins[1]->global_flags & DML_IR_GLOBAL_STATE)) {
      V *y = fq_train(b, n, ins[0], ins[1]);
      if (y) c->map[n->outputs[0]->id] = y;
      continue;
    }
    if (train && n->op == DML_OP_LAYER_NORMALIZATION && n->n_outputs == 1) {
      V *y = ln_decompose(b, n, ins[0], ins[1], n->n_inputs > 2 ? ins[2] : NULL);
      if (y) c->map[n->outputs[0]->id] = y;
      continue;
    }
    uint32_t n_in = n->n_inputs, n_out = n->n_outputs;
    if (n->op == DML_OP_DROPOUT) {
      if (train) {
        if (!yes) {
          uint8_t one = 1;
          dml_type_t t = dml_type_static(DML_DTYPE_BOOL, 0, NULL);
          b->st = dml_ir_module_add_constant(b->m, "train.on", &t, &one, 1, &yes);
        }
        if (n_in < 2 || !ins[1]) ins[1] = cst(b, n->inputs[0]->type.dtype, 0.5);
        ins[2] = yes;
        n_in = 3;
        n_out = 2;
      } else if (n_in > 2) {
        n_in = 2; /* training_mode absent: inference, the identity */
      }
    }
    dml_ir_node_t *k = mk(b, n->op, n_in, ins, n_out);
    for (uint32_t i = 0; k && i < n->n_attrs && !b->st; i++)
      b->st = dml_ir_node_set_attr(k, &n->attrs[i]);
    if (!k || b->st) break;
    b->st = dml_ir_infer_node(b->m, k);
    for (uint32_t i = 0; i < n->n_outputs && !b->st; i++) {
      k->outputs[i]->name = n->outputs[i]->name;
      c->map[n->outputs[i]->id] = k->outputs[i];
    }
  }
  return b->st;
}

/* ---- losses ----------------------------------------------------------------- */

/* The mean loss of output y against target t; sets *correct and *total for the
 * classification losses. */
static V *build_loss(tb_t *b, const dml_train_config_t *cfg, dml_loss_kind_t kind, V *y,
                     V *t, V **correct, V **total) {
  dml_dtype_t dt = y->type.dtype;
  *correct = *total = NULL;
  b->name = "loss";
  switch (kind) {
    case DML_LOSS_CROSS_ENTROPY:
    case DML_LOSS_NLL: {
      dml_dim_t C = y->type.dims[1];
      int64_t one = 1;
      V *logp = y;
      if (kind == DML_LOSS_CROSS_ENTROPY) {
        dml_ir_node_t *n = mk(b, DML_OP_LOG_SOFTMAX, 1, &y, 1);
        set_int(b, n, "axis", 1);
        logp = fin(b, n);
      }
      V *dist = t, *label = t;
      if (!cfg->soft_targets) {
        int64_t depth = C.value;
        dml_type_t st = dml_type_static(DML_DTYPE_I64, 0, NULL);
        V *dv = NULL, *vals = NULL;
        if (!b->st)
          b->st = dml_ir_module_add_constant(b->m, "train.depth", &st, &depth, 8, &dv);
        double ov[2] = {0, 1};
        if (!b->st) {
          int64_t two = 2;
          dml_type_t vt = dml_type_static(dt, 1, &two);
          uint8_t buf[16];
          for (int i = 0; i < 2; i++) dml_store_f64(dt, buf, (size_t)i, ov[i]);
          b->st = dml_ir_module_add_constant(b->m, "train.onehot", &vt, buf,
                                             2 * dml_dtype_size(dt), &vals);
        }
        dml_ir_node_t *n = mk(b, DML_OP_ONE_HOT, 3, (V *[]){t, dv, vals}, 1);
        set_int(b, n, "axis", 1);
        dist = fin(b, n);
      }
      if (kind == DML_LOSS_CROSS_ENTROPY && cfg->label_smoothing > 0 && dist)
        dist = add(b, mulc(b, dist, 1 - cfg->label_smoothing),
                   cst(b, dt, cfg->label_smoothing / (double)C.value));
      V *per = reduce(b, DML_OP_REDUCE_SUM, mul(b, dist, logp), &one, 1, 0);
      V *loss = op1(b, DML_OP_NEG, mean_all(b, per));
      dml_ir_node_t *am = mk(b, DML_OP_ARG_MAX, 1, &y, 1);
      set_int(b, am, "axis", 1);
      set_int(b, am, "keepdims", 0);
      V *pred = fin(b, am);
      if (cfg->soft_targets) {
        dml_ir_node_t *tm = mk(b, DML_OP_ARG_MAX, 1, &t, 1);
        set_int(b, tm, "axis", 1);
        set_int(b, tm, "keepdims", 0);
        label = fin(b, tm);
      }
      /* "a row whose scores hold a NaN predicts no class" (dml_metrics.h,
       * as the host metrics): right only where all C scores equal
       * themselves (Equal(y, y) is false only at NaN) */
      V *fin_row =
          op2(b, DML_OP_EQUAL,
              reduce(b, DML_OP_REDUCE_SUM,
                     cast_to(b, op2(b, DML_OP_EQUAL, y, y), DML_DTYPE_I64), &one, 1, 0),
              cst(b, DML_DTYPE_I64, (double)C.value));
      *correct = reduce(
          b, DML_OP_REDUCE_SUM,
          cast_to(b, op2(b, DML_OP_AND, op2(b, DML_OP_EQUAL, pred, label), fin_row),
                  DML_DTYPE_I64),
          NULL, 0, 0);
      *total = op1(b, DML_OP_SIZE, label);
      return loss;
    }
    case DML_LOSS_BCE_WITH_LOGITS:
    case DML_LOSS_BCE: {
      V *loss, *pred;
      if (kind == DML_LOSS_BCE_WITH_LOGITS) {
        loss = mean_all(b, sub(b, op1(b, DML_OP_SOFTPLUS, y), mul(b, y, t)));
        pred = op2(b, DML_OP_GREATER, y, cst(b, dt, 0));
      } else {
        /* -(t log p + (1 - t) log(1 - p)), each log clamped at -100 */
        V *lo = cst(b, dt, -100);
        V *lp = op2(b, DML_OP_CLIP, op1(b, DML_OP_LOG, y), lo);
        V *lq = op2(b, DML_OP_CLIP, op1(b, DML_OP_LOG, sub(b, cst(b, dt, 1), y)), lo);
        loss =
            op1(b, DML_OP_NEG,
                mean_all(b, add(b, mul(b, t, lp), mul(b, sub(b, cst(b, dt, 1), t), lq))));
        pred = op2(b, DML_OP_GREATER, y, cst(b, dt, 0.5));
      }
      V *lab = op2(b, DML_OP_GREATER, t, cst(b, dt, 0.5));
      /* a NaN score predicts no class (dml_metrics.h): never right */
      *correct = reduce(b, DML_OP_REDUCE_SUM,
                        cast_to(b,
                                op2(b, DML_OP_AND, op2(b, DML_OP_EQUAL, pred, lab),
                                    op2(b, DML_OP_EQUAL, y, y)),
                                DML_DTYPE_I64),
                        NULL, 0, 0);
      *total = op1(b, DML_OP_SIZE, t);
      return loss;
    }
    case DML_LOSS_MSE: {
      V *d = sub(b, y, t);
      return mean_all(b, mul(b, d, d));
    }
    case DML_LOSS_MAE: return mean_all(b, op1(b, DML_OP_ABS, sub(b, y, t)));
    case DML_LOSS_HUBER: {
      double delta = cfg->huber_delta > 0 ? cfg->huber_delta : 1.0;
      V *d = sub(b, y, t), *ad = op1(b, DML_OP_ABS, d);
      V *quad = mulc(b, mul(b, d, d), 0.5);
      V *lin = mulc(b, sub(b, ad, cst(b, dt, 0.5 * delta)), delta);
      return mean_all(
          b, op3(b, DML_OP_WHERE, op2(b, DML_OP_LESS, ad, cst(b, dt, delta)), quad, lin));
    }
  }
  return NULL;
}

/* ---- optimizers ---------------------------------------------------------------- */

typedef struct hyper {
  double momentum, beta1, beta2, eps, alpha, wd;
} hyper_t;

static dml_status_t hyper_of(const dml_train_config_t *c, hyper_t *h) {
  h->momentum = c->momentum;
  if (c->optimizer == DML_OPTIMIZER_MOMENTUM || c->optimizer == DML_OPTIMIZER_NESTEROV)
    h->momentum = c->momentum > 0 ? c->momentum : 0.9;
  h->beta1 = c->beta1 > 0 ? c->beta1 : 0.9;
  h->beta2 = c->beta2 > 0 ? c->beta2 : 0.999;
  h->eps = c->epsilon > 0 ? c->epsilon
                          : (c->optimizer == DML_OPTIMIZER_ADAGRAD ? 1e-10 : 1e-8);
  h->alpha = c->alpha > 0 ? c->alpha : 0.99;
  h->wd = c->weight_decay;
  if (c->optimizer == DML_OPTIMIZER_ADAMW)
    h->wd = c->weight_decay < 0 ? 0 : c->weight_decay == 0 ? 1e-2 : c->weight_decay;
  const char *bad = NULL;
  double v = 0;
  if (h->beta1 >= 1) bad = "beta1", v = h->beta1;
  if (h->beta2 >= 1) bad = "beta2", v = h->beta2;
  if (h->alpha >= 1) bad = "alpha", v = h->alpha;
  if (h->momentum < 0 || h->momentum >= 1) bad = "momentum", v = h->momentum;
  if (c->optimizer != DML_OPTIMIZER_ADAMW && h->wd < 0) bad = "weight_decay", v = h->wd;
  if (c->clip_norm < 0) bad = "clip_norm", v = c->clip_norm;
  if (c->clip_value < 0) bad = "clip_value", v = c->clip_value;
  if (c->label_smoothing < 0 || c->label_smoothing >= 1)
    bad = "label_smoothing", v = c->label_smoothing;
  if (bad)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "%s = %g is out of range for optimizer %s", bad, v,
                           dml_optimizer_kind_name(c->optimizer));
  return DML_OK;
}

/* One parameter's update; defers the Assigns. lr: f32 scalar. */
static void update_param(tb_t *b, const dml_train_config_t *cfg, const hyper_t *h, V *p,
                         V *g, V *lr, V *bc1, V *bc2) {
  char nm[512];
  snprintf(nm, sizeof nm, "%s.update", p->name);
  b->name = dml_ir_strdup(b->m, nm);
  dml_dtype_t dt = p->type.dtype;
  if (lr && lr->type.dtype != dt) lr = cast_to(b, lr, dt);
  if (bc1 && bc1->type.dtype != dt) bc1 = cast_to(b, bc1, dt);
  if (bc2 && bc2->type.dtype != dt) bc2 = cast_to(b, bc2, dt);
  V *pn = NULL;
  switch (cfg->optimizer) {
    case DML_OPTIMIZER_SGD:
    case DML_OPTIMIZER_MOMENTUM:
    case DML_OPTIMIZER_NESTEROV: {
      if (h->wd > 0) g = add(b, g, mulh(b, p, "weight_decay", h->wd));
      V *step = g;
      if (cfg->optimizer != DML_OPTIMIZER_SGD) {
        V *buf = state_global(b, p, "momentum_buffer");
        V *nb = add(b, mulh(b, buf, "momentum", h->momentum), g);
        defer_assign(b, buf, nb);
        step = cfg->optimizer == DML_OPTIMIZER_NESTEROV
                   ? add(b, g, mulh(b, nb, "momentum", h->momentum))
                   : nb;
      }
      pn = sub(b, p, mul(b, lr, step));
      break;
    }
    case DML_OPTIMIZER_ADAM:
    case DML_OPTIMIZER_ADAMW: {
      V *p0 = p;
      if (cfg->optimizer == DML_OPTIMIZER_ADAMW) {
        if (h->wd > 0)
          p0 = mul(b, p, sub(b, cst(b, dt, 1), mulh(b, lr, "weight_decay", h->wd)));
      } else if (h->wd > 0) {
        g = add(b, g, mulh(b, p, "weight_decay", h->wd));
      }
      V *m = state_global(b, p, "exp_avg"), *v = state_global(b, p, "exp_avg_sq");
      V *mn = add(b, mulh(b, m, "beta1", h->beta1),
                  mulh(b, g, "one_minus_beta1", 1 - h->beta1));
      V *vn = add(b, mulh(b, v, "beta2", h->beta2),
                  mulh(b, mul(b, g, g), "one_minus_beta2", 1 - h->beta2));
      defer_assign(b, m, mn);
      defer_assign(b, v, vn);
      V *denom = add(b, divv(b, op1(b, DML_OP_SQRT, vn), op1(b, DML_OP_SQRT, bc2)),
                     hp(b, "epsilon", h->eps, dt));
      pn = sub(b, p0, mul(b, divv(b, lr, bc1), divv(b, mn, denom)));
      break;
    }
    case DML_OPTIMIZER_RMSPROP: {
      if (h->wd > 0) g = add(b, g, mulh(b, p, "weight_decay", h->wd));
      V *v = state_global(b, p, "square_avg");
      V *vn = add(b, mulh(b, v, "alpha", h->alpha),
                  mulh(b, mul(b, g, g), "one_minus_alpha", 1 - h->alpha));
      defer_assign(b, v, vn);
      V *avg = add(b, op1(b, DML_OP_SQRT, vn), hp(b, "epsilon", h->eps, dt));
      V *step = divv(b, g, avg);
      if (h->momentum > 0) {
        V *buf = state_global(b, p, "momentum_buffer");
        step = add(b, mulh(b, buf, "momentum", h->momentum), step);
        defer_assign(b, buf, step);
      }
      pn = sub(b, p, mul(b, lr, step));
      break;
    }
    case DML_OPTIMIZER_ADAGRAD: {
      if (h->wd > 0) g = add(b, g, mulh(b, p, "weight_decay", h->wd));
      V *s = state_global(b, p, "sum");
      V *sn = add(b, s, mul(b, g, g));
      defer_assign(b, s, sn);
      pn = sub(
          b, p,
          mul(b, lr,
              divv(b, g, add(b, op1(b, DML_OP_SQRT, sn), hp(b, "epsilon", h->eps, dt)))));
      break;
    }
  }
  defer_assign(b, p, pn);
}

/* ---- building the functions -------------------------------------------------- */

static V *output_of(const dml_ir_function_t *fwd, const dml_train_config_t *cfg,
                    uint32_t *out_index, dml_status_t *st) {
  if (!fwd->n_results) {
    *st = dml_status_make(DML_STATUS_NOT_FOUND, OP, "forward has no results");
    return NULL;
  }
  if (!cfg->output) {
    *out_index = 0;
    return fwd->results[0];
  }
  for (uint32_t i = 0; i < fwd->n_results; i++)
    if (fwd->results[i]->name && !strcmp(fwd->results[i]->name, cfg->output)) {
      *out_index = i;
      return fwd->results[i];
    }
  *st = dml_status_make(DML_STATUS_NOT_FOUND, OP, "forward has no output named '%s'",
                        cfg->output);
  return NULL;
}

/* Checks the output and builds the target's type. */
static dml_status_t target_type(const dml_train_config_t *cfg, dml_loss_kind_t kind,
                                const dml_ir_module_t *m, const V *y, dml_type_t *out) {
  char tb[160];
  int cls = kind == DML_LOSS_CROSS_ENTROPY || kind == DML_LOSS_NLL;
  if (!dml_dtype_is_float(y->type.dtype) || y->type.rank < (cls ? 2 : 1))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "loss %s needs a float output%s; output '%s' is %s",
                           dml_loss_kind_name(kind), cls ? " [N, C, ...]" : "",
                           y->name ? y->name : "", dml_ir_type_str(m, &y->type, tb, 160));
  *out = y->type;
  if (cls && !cfg->soft_targets) {
    if (y->type.dims[1].sym >= 0)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                             "loss %s needs a static class dim; output '%s' is %s",
                             dml_loss_kind_name(kind), y->name ? y->name : "",
                             dml_ir_type_str(m, &y->type, tb, 160));
    out->dtype = DML_DTYPE_I64;
    out->rank = y->type.rank - 1;
    out->dims[0] = y->type.dims[0];
    for (int32_t i = 2; i < y->type.rank; i++) out->dims[i - 1] = y->type.dims[i];
  }
  return DML_OK;
}

/* A trained output: the forward result, its loss, weight, target type and
 * the names of its target input and results. */
typedef struct tout {
  V *y;
  dml_loss_kind_t loss;
  double weight;
  dml_type_t tt;
  const char *target, *loss_name, *correct_name, *total_name;
} tout_t;

static const char *suffixed(dml_ir_module_t *m, const char *pre, const char *name) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s.%s", pre, name);
  return dml_ir_strdup(m, buf);
}

/* The trained outputs of `cfg`: the single `loss` on `output` (multi 0), or
 * cfg->outputs of weight > 0 (multi 1). */
static dml_status_t trained_outputs(dml_ir_module_t *m, const dml_ir_function_t *fwd,
                                    const dml_train_config_t *cfg, tout_t *out,
                                    uint32_t *n_out, int *multi) {
  *n_out = 0;
  *multi = cfg->n_outputs > 0;
  dml_status_t st = DML_OK;
  if (!*multi) {
    if ((size_t)cfg->loss >= N_LOSSES)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "bad loss kind");
    uint32_t oi = 0;
    V *y = output_of(fwd, cfg, &oi, &st);
    if (!y) return st;
    out[0].y = y;
    out[0].loss = cfg->loss;
    out[0].weight = 1;
    out[0].target = "target";
    out[0].loss_name = "loss";
    out[0].correct_name = "correct";
    out[0].total_name = "total";
    *n_out = 1;
    return target_type(cfg, cfg->loss, m, y, &out[0].tt);
  }
  if (cfg->output)
    return dml_status_make(
        DML_STATUS_INVALID_ARGUMENT, OP,
        "output '%s' names the output of a single loss; with a loss per "
        "output (outputs[]) each names its own",
        cfg->output);
  if (cfg->n_outputs > DML_TRAIN_MAX_OUTPUTS || !cfg->outputs)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "%u trained outputs: at most %d, as a list", cfg->n_outputs,
                           DML_TRAIN_MAX_OUTPUTS);
  for (uint32_t i = 0; i < cfg->n_outputs; i++) {
    const dml_train_output_t *o = &cfg->outputs[i];
    if (!o->name || !o->name[0])
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                             "trained output %u has no name", i);
    for (uint32_t j = 0; j < i; j++)
      if (!strcmp(cfg->outputs[j].name, o->name))
        return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                               "output '%s' is given a loss twice", o->name);
    if (!(o->weight >= 0) || !isfinite(o->weight) || (size_t)o->loss >= N_LOSSES)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                             "output '%s': loss weight %g must be finite and >= 0",
                             o->name, o->weight);
    dml_train_config_t one = *cfg;
    one.output = o->name;
    uint32_t oi = 0;
    V *y = output_of(fwd, &one, &oi, &st);
    if (!y) return st;
    if (o->weight == 0) continue; /* not trained: a forward result only */
    tout_t *t = &out[(*n_out)++];
    t->y = y;
    t->loss = o->loss;
    t->weight = o->weight;
    t->target = suffixed(m, "target", o->name);
    t->loss_name = suffixed(m, "loss", o->name);
    t->correct_name = suffixed(m, "correct", o->name);
    t->total_name = suffixed(m, "total", o->name);
    if (!t->target || !t->loss_name || !t->correct_name || !t->total_name)
      return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
    DML_RETURN_IF_ERROR(target_type(cfg, o->loss, m, y, &t->tt));
  }
  if (!*n_out)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "no output has a loss weight > 0: nothing to train");
  return DML_OK;
}

/* Adds the target inputs of `to` (and, when `lr` is not NULL, the f32
 * scalar input "lr") to b->f, builds the losses on forward's outputs mapped
 * by `c`, fills the results (loss first; per output with `multi`) and
 * returns the loss to minimize. */
static V *build_losses(tb_t *b, const dml_train_config_t *cfg, const tout_t *to,
                       uint32_t n_to, int multi, const clone_t *c, V **lr, V **res,
                       const char **res_names, uint32_t *n_res) {
  V *targets[DML_TRAIN_MAX_OUTPUTS];
  for (uint32_t j = 0; j < n_to && !b->st; j++)
    b->st = dml_ir_function_add_arg(b->f, to[j].target, &to[j].tt, &targets[j]);
  if (lr && !b->st) {
    dml_type_t lt = dml_type_static(DML_DTYPE_F32, 0, NULL);
    b->st = dml_ir_function_add_arg(b->f, "lr", &lt, lr);
  }
  V *total_loss = NULL;
  *n_res = 1;
  for (uint32_t j = 0; j < n_to && !b->st; j++) {
    V *correct = NULL, *total = NULL;
    V *l =
        build_loss(b, cfg, to[j].loss, mapped(c, to[j].y), targets[j], &correct, &total);
    if (!multi) {
      total_loss = l;
      if (correct) {
        res[1] = correct, res_names[1] = to[j].correct_name;
        res[2] = total, res_names[2] = to[j].total_name;
        *n_res = 3;
      }
      break;
    }
    V *wl = mulc(b, l, to[j].weight);
    total_loss = total_loss ? add(b, total_loss, wl) : wl;
    res[*n_res] = l, res_names[(*n_res)++] = to[j].loss_name;
    if (correct) {
      res[*n_res] = correct, res_names[(*n_res)++] = to[j].correct_name;
      res[*n_res] = total, res_names[(*n_res)++] = to[j].total_name;
    }
  }
  res[0] = total_loss;
  res_names[0] = "loss";
  return b->st ? NULL : total_loss;
}

static void set_results(tb_t *b, V **res, const char **names, uint32_t n) {
  if (b->st) return;
  for (uint32_t i = 0; i < n; i++)
    if (!res[i]) {
      b->st = dml_status_make(DML_STATUS_INTERNAL, OP, "result %u is missing", i);
      return;
    }
  /* A result must be a node's own value: wrap reused ones in Identity. */
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < i; j++)
      if (res[i] == res[j]) res[i] = op1(b, DML_OP_IDENTITY, res[i]);
  for (uint32_t i = 0; i < n && !b->st; i++) res[i]->name = names[i];
  if (!b->st) b->st = dml_ir_function_set_results(b->f, n, res);
}

dml_status_t dml_train_build(dml_ir_module_t *m, const dml_train_config_t *cfg) {
  dml_ir_function_t *fwd = dml_ir_module_find_function(m, "forward");
  if (!fwd)
    return dml_status_make(DML_STATUS_NOT_FOUND, OP, "the module has no @forward");
  if (dml_ir_module_find_function(m, "train_step") ||
      dml_ir_module_find_function(m, "eval_step"))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "the module already has train_step or eval_step");
  if ((size_t)cfg->optimizer >= N_OPTS)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "bad optimizer kind");
  hyper_t h;
  DML_RETURN_IF_ERROR(hyper_of(cfg, &h));
  tout_t to[DML_TRAIN_MAX_OUTPUTS];
  uint32_t n_to = 0;
  int multi = 0;
  dml_status_t st = trained_outputs(m, fwd, cfg, to, &n_to, &multi);
  if (st) return st;
  for (uint32_t i = 0; i < fwd->n_args; i++) {
    int clash = fwd->args[i]->name && !strcmp(fwd->args[i]->name, "lr");
    for (uint32_t j = 0; j < n_to && !clash; j++)
      clash = fwd->args[i]->name && !strcmp(fwd->args[i]->name, to[j].target);
    if (clash)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                             "forward already has an input named '%s'; rename it",
                             fwd->args[i]->name);
  }

  /* forward: inference mode (training-mode Dropout off). */
  for (dml_ir_node_t *n = fwd->first; n; n = n->next)
    if (n->op == DML_OP_DROPOUT && n->n_inputs > 2) n->inputs[2] = NULL;

  tb_t *b = (tb_t *)calloc(1, sizeof(tb_t));
  clone_t ct = {0}, ce = {0};
  V **params = NULL, **grads = NULL;
  if (!b) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  b->m = m;
  V *res[1 + 3 * DML_TRAIN_MAX_OUTPUTS];
  const char *res_names[1 + 3 * DML_TRAIN_MAX_OUTPUTS];
  uint32_t n_res = 0;

  /* ---- eval_step ---- */
  b->st = dml_ir_function_create(m, "eval_step", &b->f);
  if (!b->st) b->st = clone_forward(b, fwd, 0, &ce);
  if (!b->st) {
    build_losses(b, cfg, to, n_to, multi, &ce, NULL, res, res_names, &n_res);
    set_results(b, res, res_names, n_res);
  }

  /* ---- train_step ---- */
  if (!b->st) b->st = dml_ir_function_create(m, "train_step", &b->f);
  if (!b->st) b->st = clone_forward(b, fwd, 1, &ct);
  V *lr = NULL, *loss = NULL;
  if (!b->st)
    loss = build_losses(b, cfg, to, n_to, multi, &ct, &lr, res, res_names, &n_res);
  /* Parameters that train_step reads. */
  uint32_t np = 0;
  params = (V **)calloc(m->n_globals ? m->n_globals : 1, sizeof(V *));
  grads = (V **)calloc(m->n_globals ? m->n_globals : 1, sizeof(V *));
  if (!params || !grads)
    b->st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "oom");
  for (uint32_t i = 0; !b->st && i < m->n_globals; i++) {
    V *g = m->globals[i];
    if ((g->global_flags & DML_IR_GLOBAL_PARAM) && dml_dtype_is_float(g->type.dtype) &&
        dml_ir_value_num_uses(b->f, g))
      params[np++] = g;
  }
  if (!b->st && np == 0)
    b->st =
        dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                        "the model has no trainable parameters (globals flagged param)");
  if (!b->st) b->st = dml_autodiff(b->f, loss, NULL, np, params, grads);
  /* Clipping. */
  if (!b->st && cfg->clip_value > 0) {
    b->name = "clip_value";
    for (uint32_t i = 0; i < np; i++)
      if (grads[i]) {
        dml_dtype_t dt = grads[i]->type.dtype;
        V *cv = hp(b, "clip_value", cfg->clip_value, dt);
        grads[i] = op3(b, DML_OP_CLIP, grads[i], mulc(b, cv, -1), cv);
      }
  }
  if (!b->st && cfg->clip_norm > 0) {
    b->name = "clip_norm";
    V *sq = NULL;
    for (uint32_t i = 0; i < np; i++)
      if (grads[i]) {
        V *s = reduce(b, DML_OP_REDUCE_SUM_SQUARE, grads[i], NULL, 0, 0);
        if (s && s->type.dtype != DML_DTYPE_F32) s = cast_to(b, s, DML_DTYPE_F32);
        sq = sq ? add(b, sq, s) : s;
      }
    if (sq) {
      V *norm = op1(b, DML_OP_SQRT, sq);
      V *coef = divv(b, hp(b, "clip_norm", cfg->clip_norm, DML_DTYPE_F32),
                     add(b, norm, cst(b, DML_DTYPE_F32, 1e-6)));
      V *in[3] = {coef, NULL, cst(b, DML_DTYPE_F32, 1.0)};
      coef = fin(b, mk(b, DML_OP_CLIP, 3, in, 1));
      for (uint32_t i = 0; i < np; i++)
        if (grads[i])
          grads[i] = mul(b, grads[i],
                         grads[i]->type.dtype == DML_DTYPE_F32
                             ? coef
                             : cast_to(b, coef, grads[i]->type.dtype));
    }
  }
  /* Optimizer. */
  V *bc1 = NULL, *bc2 = NULL;
  if (!b->st &&
      (cfg->optimizer == DML_OPTIMIZER_ADAM || cfg->optimizer == DML_OPTIMIZER_ADAMW)) {
    b->name = "optimizer.step";
    dml_type_t st0 = dml_type_static(DML_DTYPE_F32, 0, NULL);
    V *step = NULL;
    b->st = dml_ir_module_add_global(m, "optimizer.step", &st0, NULL, 0,
                                     DML_IR_GLOBAL_STATE, &step);
    V *t1 = add(b, step, cst(b, DML_DTYPE_F32, 1));
    defer_assign(b, step, t1);
    bc1 = sub(b, cst(b, DML_DTYPE_F32, 1),
              op2(b, DML_OP_POW, hp(b, "beta1", h.beta1, DML_DTYPE_F32), t1));
    bc2 = sub(b, cst(b, DML_DTYPE_F32, 1),
              op2(b, DML_OP_POW, hp(b, "beta2", h.beta2, DML_DTYPE_F32), t1));
  }
  for (uint32_t i = 0; !b->st && i < np; i++)
    if (grads[i]) update_param(b, cfg, &h, params[i], grads[i], lr, bc1, bc2);
  /* The state writes, last. */
  b->name = NULL;
  for (uint32_t i = 0; !b->st && i < b->n_assign; i++) {
    V *in[2] = {b->assign_target[i], b->assign_value[i]};
    dml_ir_node_t *n = mk(b, DML_OP_ASSIGN, 2, in, 0);
    if (n) b->st = dml_ir_infer_node(m, n);
  }
  set_results(b, res, res_names, n_res);
  st = b->st;
  free(ct.map);
  free(ce.map);
  free(params);
  free(grads);
  free(b);
  return st ? dml_status_annotate(st,
                                  "building train_step/eval_step (loss %s, optimizer %s)",
                                  multi ? "per output" : dml_loss_kind_name(cfg->loss),
                                  dml_optimizer_kind_name(cfg->optimizer))
            : DML_OK;
}
