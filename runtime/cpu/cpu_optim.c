/*
 * cpu_optim.c — the optimizers of ONNX's training-preview domain
 * (ai.onnx.preview.training, version 1): Adagrad, Momentum, Adam. ONNX
 * operator spec: https://onnx.ai/onnx/operators/onnx_aionnxpreviewtraining_
 * Adagrad.html, ..._Momentum.html, ..._Adam.html.
 *
 * Inputs R (learning rate, f32/f64 scalar), T (update count, integer
 * scalar), then n tensors X_i, n gradients G_i and the state: H_i (Adagrad),
 * V_i (Momentum), V_i then H_i (Adam). Outputs: the n new X_i, then the new
 * state in input order. Every G_i and state tensor has X_i's shape and dtype
 * (f32 or f64); values are computed in double. Per element, with
 * g = norm_coefficient * x + G:
 *
 *   Adagrad:  r = R / (1 + T * decay_factor)
 *             H' = H + g*g;  X' = X - r * g / (sqrt(H') + epsilon)
 *   Momentum: b = T > 0 ? beta : 1;  V' = alpha * V + b * g
 *             standard: X' = X - R * V'
 *             nesterov: X' = X - R * (g + alpha * V')
 *   Adam:     V' = alpha * V + (1 - alpha) * g
 *             H' = beta * H + (1 - beta) * g*g
 *             r = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R
 *             X' = (1 - norm_coefficient_post) * (X - r * V' / (sqrt(H') + epsilon))
 *
 * Attribute defaults are the schema's (onnx/defs/training/defs.cc):
 * Adagrad decay_factor 0, epsilon 1e-6, norm_coefficient 0; Adam alpha 0.9,
 * beta 0.999, epsilon 1e-6, norm_coefficient and norm_coefficient_post 0.
 * Momentum's alpha, beta, mode and norm_coefficient are required
 * (INVALID_ARGUMENT when absent).
 */
#include <math.h>
#include <string.h>

#include "cpu_internal.h"

static int same_dims(const dml_tensor_t *a, const dml_tensor_t *b) {
  if (a->rank != b->rank) return 0;
  for (int32_t d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d]) return 0;
  return 1;
}

/* A required FLOAT attribute. */
static dml_status_t need_float(const dml_cpu_call_t *c, const char *name, double *out) {
  const dml_attr_t *a = dml_attr_find(c->attrs, c->n_attrs, name);
  if (!a)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "attribute '%s' is required",
                         name);
  *out = dml_cpu_get_float(c, name, 0.0);
  return DML_OK;
}

enum { OPT_ADAGRAD, OPT_MOMENTUM, OPT_NESTEROV, OPT_ADAM };

typedef struct {
  int kind;
  double R;
  int64_t T;
  double alpha, beta, epsilon, decay, nc, ncp;
} hyper_t;

/* One tensor: x, g and state s0 (H or V), s1 (Adam's H) -> x', s0', s1'. */
static void update(const hyper_t *p, dml_dtype_t dt, int64_t n, const void *x,
                   const void *gr, const void *s0, const void *s1, void *xo, void *s0o,
                   void *s1o) {
  double r = p->R;
  if (p->kind == OPT_ADAGRAD) r = p->R / (1.0 + (double)p->T * p->decay);
  if (p->kind == OPT_ADAM && p->T > 0)
    r = p->R * sqrt(1.0 - pow(p->beta, (double)p->T)) /
        (1.0 - pow(p->alpha, (double)p->T));
  double beta_adj = p->T > 0 ? p->beta : 1.0;
  for (int64_t i = 0; i < n; i++) {
    double xv = dml_cpu_ld(dt, x, i), g = p->nc * xv + dml_cpu_ld(dt, gr, i),
           a = dml_cpu_ld(dt, s0, i);
    double xn, an, hn = 0;
    switch (p->kind) {
      case OPT_ADAGRAD:
        an = a + g * g;
        xn = xv - r * g / (sqrt(an) + p->epsilon);
        break;
      case OPT_MOMENTUM:
      case OPT_NESTEROV:
        an = p->alpha * a + beta_adj * g;
        xn = p->kind == OPT_MOMENTUM ? xv - r * an : xv - r * (g + p->alpha * an);
        break;
      default: /* Adam */
        an = p->alpha * a + (1.0 - p->alpha) * g;
        hn = p->beta * dml_cpu_ld(dt, s1, i) + (1.0 - p->beta) * g * g;
        xn = (1.0 - p->ncp) * (xv - r * an / (sqrt(hn) + p->epsilon));
        break;
    }
    if (xo) dml_cpu_st(dt, xo, i, xn);
    if (s0o) dml_cpu_st(dt, s0o, i, an);
    if (s1o) dml_cpu_st(dt, s1o, i, hn);
  }
}

static dml_status_t read_hyper(const dml_cpu_call_t *c, hyper_t *p) {
  memset(p, 0, sizeof(*p));
  switch (c->op) {
    case DML_OP_ADAGRAD:
      p->kind = OPT_ADAGRAD;
      p->decay = dml_cpu_get_float(c, "decay_factor", 0.0);
      p->epsilon = dml_cpu_get_float(c, "epsilon", 1e-6);
      p->nc = dml_cpu_get_float(c, "norm_coefficient", 0.0);
      return DML_OK;
    case DML_OP_MOMENTUM: {
      DML_RETURN_IF_ERROR(need_float(c, "alpha", &p->alpha));
      DML_RETURN_IF_ERROR(need_float(c, "beta", &p->beta));
      DML_RETURN_IF_ERROR(need_float(c, "norm_coefficient", &p->nc));
      const char *mode = dml_cpu_get_string(c, "mode", NULL);
      if (!mode)
        return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                             "attribute 'mode' is required");
      if (strcmp(mode, "standard") == 0)
        p->kind = OPT_MOMENTUM;
      else if (strcmp(mode, "nesterov") == 0)
        p->kind = OPT_NESTEROV;
      else
        return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                             "mode '%s' must be 'standard' or 'nesterov'", mode);
      return DML_OK;
    }
    default:
      p->kind = OPT_ADAM;
      p->alpha = dml_cpu_get_float(c, "alpha", 0.9);
      p->beta = dml_cpu_get_float(c, "beta", 0.999);
      p->epsilon = dml_cpu_get_float(c, "epsilon", 1e-6);
      p->nc = dml_cpu_get_float(c, "norm_coefficient", 0.0);
      p->ncp = dml_cpu_get_float(c, "norm_coefficient_post", 0.0);
      return DML_OK;
  }
}

dml_status_t dml_cpuk_Optimizer(const dml_cpu_call_t *c) {
  /* Tensors per optimized variable among the inputs: X, G and the state. */
  uint32_t per = c->op == DML_OP_ADAM ? 4 : 3;
  if (c->n_inputs < 2 + per || (c->n_inputs - 2) % per != 0)
    return dml_cpu_err_shapes(
        c, "%u inputs: expected R, T, then %u groups of n tensors (X, G, %s)",
        c->n_inputs, per,
        per == 4                  ? "V, H"
        : c->op == DML_OP_ADAGRAD ? "H"
                                  : "V");
  uint32_t n = (c->n_inputs - 2) / per;
  if (c->n_outputs != (per - 1) * n)
    return dml_cpu_err_shapes(c, "%u outputs for %u optimized tensors: expected %u",
                              c->n_outputs, n, (per - 1) * n);
  const dml_tensor_t *R = &c->inputs[0], *T = &c->inputs[1];
  if (!dml_dtype_is_float(R->dtype) || dml_cpu_numel(R) != 1)
    return dml_cpu_err_shapes(c, "R (input 0) must be a float scalar");
  if (!dml_dtype_is_int(T->dtype) || dml_cpu_numel(T) != 1)
    return dml_cpu_err_shapes(c, "T (input 1) must be an integer scalar");
  hyper_t p;
  DML_RETURN_IF_ERROR(read_hyper(c, &p));
  p.R = dml_cpu_scalar_f64(R);
  p.T = dml_load_i64(T->dtype, T->data, 0);
  for (uint32_t i = 0; i < n; i++) {
    const dml_tensor_t *x = &c->inputs[2 + i];
    dml_dtype_t dt = x->dtype;
    if (dt != DML_DTYPE_F32 && dt != DML_DTYPE_F64) return dml_cpu_err_dtype(c, "X", dt);
    for (uint32_t k = 1; k < per; k++) {
      const dml_tensor_t *t = &c->inputs[2 + k * n + i];
      if (t->dtype != dt || !same_dims(t, x))
        return dml_cpu_err_shapes(c, "input %u must have the dtype and shape of X_%u",
                                  2 + k * n + i, i);
    }
    for (uint32_t k = 0; k + 1 < per; k++) {
      const dml_tensor_t *o = &c->outputs[k * n + i];
      if (o->dtype != DML_DTYPE_INVALID && (o->dtype != dt || !same_dims(o, x)))
        return dml_cpu_err_shapes(c, "output %u must have the dtype and shape of X_%u",
                                  k * n + i, i);
    }
    dml_tensor_t *xo = dml_cpu_out(c, i), *s0o = dml_cpu_out(c, n + i);
    dml_tensor_t *s1o = per == 4 ? dml_cpu_out(c, 2 * n + i) : NULL;
    update(&p, dt, dml_cpu_numel(x), x->data, c->inputs[2 + n + i].data,
           c->inputs[2 + 2 * n + i].data, per == 4 ? c->inputs[2 + 3 * n + i].data : NULL,
           xo ? xo->data : NULL, s0o ? s0o->data : NULL, s1o ? s1o->data : NULL);
  }
  return DML_OK;
}
