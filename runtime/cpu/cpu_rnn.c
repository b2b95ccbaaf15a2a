/*
 * cpu_rnn.c — RNN, GRU and LSTM (ONNX operator spec, opsets 7 and 14:
 * https://onnx.ai/onnx/operators/onnx__RNN.html, onnx__GRU.html,
 * onnx__LSTM.html).
 *
 * Every attribute is supported: direction (forward, reverse,
 * bidirectional), activations with activation_alpha/activation_beta, clip,
 * hidden_size, linear_before_reset (GRU), input_forget (LSTM) and layout
 * 0/1 (opset 14); optional inputs B, sequence_lens, initial_h, initial_c, P
 * and optional outputs Y, Y_h, Y_c. f32 and f64.
 *
 * f64 runs the reference loops (rnn_dir: plain loops in double, no GEMM).
 * f32 runs the fused cell (rnn_dir_f32), same semantics: the input
 * projection X W^T (+ both biases where they add outside the recurrence) of
 * all time steps is one GEMM (M = seq * batch) before the loop, R is packed
 * once per call, and each step is one GEMM H_{t-1} R^T (batch x G*hidden;
 * GRU without linear_before_reset: batch x 2*hidden, then (r (.) H_{t-1})
 * R_h^T) whose result the gate math reads row by row: clip, activations
 * (sigmoid and tanh vectorized, cpu_vmath.c; the others per element through
 * act_apply), the state update and the Y row. All buffers are in scratch:
 * nothing is allocated per step. The arithmetic is f32 (the GEMM core's
 * accumulation), so results differ from the f64 loops by f32 roundings
 * (test_cpu_seq compares them).
 *
 * Layout 0: X [seq, batch, input], Y [seq, dirs, batch, hidden],
 * states [dirs, batch, hidden]. Layout 1: X [batch, seq, input],
 * Y [batch, seq, dirs, hidden], states [batch, dirs, hidden].
 * With sequence_lens, steps t >= len[b] of batch b are skipped: Y is 0
 * there, Y_h/Y_c hold the state after the last valid step, and the
 * reverse direction starts at step len[b]-1.
 */
#if defined(__GNUC__) && !defined(__clang__)
/* Before the includes, so the inline helpers get the same options: the
 * input projection's bias rows and the gate loops vectorize (scalar at -O2:
 * 30% of an LSTM's time at batch 32 went to them); elementwise, no
 * reassociation, so the same bits. */
#pragma GCC optimize("O3", "no-trapping-math")
#endif
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "cpu_internal.h"

enum { K_RNN, K_GRU, K_LSTM };

/* Activation functions of the RNN family (spec, "Activation functions"). */
enum {
  A_RELU,
  A_TANH,
  A_SIGMOID,
  A_AFFINE,
  A_LEAKY_RELU,
  A_THRESHOLDED_RELU,
  A_SCALED_TANH,
  A_HARD_SIGMOID,
  A_ELU,
  A_SOFTSIGN,
  A_SOFTPLUS,
};

typedef struct {
  int kind;
  dml_op_t op; /* the formula table's op (k_acts) */
  double alpha, beta;
} act_t;

typedef struct {
  const char *name;
  int kind;
  dml_op_t op;        /* the op of ew_ops.def computing it; INVALID: a form */
  int form;           /* dml_cpu_rnn_act_t's form */
  int n_params;       /* alpha only: 1; alpha and beta: 2 */
  double alpha, beta; /* defaults, as the ONNX ops of the same name */
} act_info_t;

/* The activations of the RNN family, one definition for the CPU's kernel
 * and the GPUs' compositions (dml_cpu_rnn_activations). */
static const act_info_t k_acts[] = {
    {"relu", A_RELU, DML_OP_RELU, 0, 0, 0, 0},
    {"tanh", A_TANH, DML_OP_TANH, 0, 0, 0, 0},
    {"sigmoid", A_SIGMOID, DML_OP_SIGMOID, 0, 0, 0, 0},
    {"affine", A_AFFINE, DML_OP_INVALID, DML_CPU_RNN_AFFINE, 2, 1.0, 0.0},
    {"leakyrelu", A_LEAKY_RELU, DML_OP_LEAKY_RELU, 0, 1, 0.01, 0},
    {"thresholdedrelu", A_THRESHOLDED_RELU, DML_OP_THRESHOLDED_RELU, 0, 1, 1.0, 0},
    {"scaledtanh", A_SCALED_TANH, DML_OP_INVALID, DML_CPU_RNN_SCALED_TANH, 2, 1.0, 1.0},
    {"hardsigmoid", A_HARD_SIGMOID, DML_OP_HARD_SIGMOID, 0, 2, 0.2, 0.5},
    {"elu", A_ELU, DML_OP_ELU, 0, 1, 1.0, 0},
    {"softsign", A_SOFTSIGN, DML_OP_SOFTSIGN, 0, 0, 0, 0},
    {"softplus", A_SOFTPLUS, DML_OP_SOFTPLUS, 0, 0, 0, 0},
};

_Static_assert(sizeof k_acts / sizeof k_acts[0] == A_SOFTPLUS + 1,
               "k_acts holds one row per A_ kind, in A_ order");

static double act_apply(const act_t *a, double x) {
  switch (a->kind) {
    case A_RELU: return x > 0 ? x : 0;
    case A_TANH: return tanh(x);
    case A_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case A_AFFINE: return a->alpha * x + a->beta;
    case A_SCALED_TANH: return a->alpha * tanh(a->beta * x);
    default: { /* the formula table's (ew_ops.def), alpha and beta its A0 and A1 */
      const double av[DML_EW_MAX_ATTRS] = {a->alpha, a->beta, 0};
      return dml_cpu_ew_f64(a->op, av, x);
    }
  }
}

static int name_eq_ci(const char *a, const char *b) {
  for (; *a && *b; a++, b++)
    if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
  return *a == *b;
}

#define MAX_ACTS 6

typedef struct {
  int kind; /* K_RNN, K_GRU, K_LSTM */
  int n_gates, n_acts, dirs, reverse_only, layout, lbr, input_forget;
  int64_t S, B, I, H;
  double clip; /* <= 0: none */
  act_t acts[MAX_ACTS];
} rnn_t;

static dml_status_t read_acts(const dml_cpu_call_t *c, rnn_t *r) {
  static const int dflt[3][3] = {
      {A_TANH, 0, 0}, {A_SIGMOID, A_TANH, 0}, {A_SIGMOID, A_TANH, A_TANH}};
  int need = r->n_acts * r->dirs;
  for (int i = 0; i < need; i++) {
    r->acts[i].kind = dflt[r->kind][i % r->n_acts];
    r->acts[i].op = k_acts[r->acts[i].kind].op; /* k_acts is in A_ order */
    r->acts[i].alpha = r->acts[i].beta = 0;
  }
  const dml_attr_t *a = dml_attr_find(c->attrs, c->n_attrs, "activations");
  if (!a) return DML_OK;
  if (a->kind != DML_ATTR_STRINGS)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "attribute 'activations' must be a list of strings");
  /* One list per direction; a single direction's list is reused for both. */
  if (a->n != (size_t)need && !(r->dirs == 2 && a->n == (size_t)r->n_acts))
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "activations has %zu entries, expected %d", a->n, need);
  size_t na = 0, nb = 0;
  const double *al = dml_attr_floats(c->attrs, c->n_attrs, "activation_alpha", &na);
  const double *be = dml_attr_floats(c->attrs, c->n_attrs, "activation_beta", &nb);
  /* alpha and beta values are consumed in the order of the activations
   * that take them; missing ones take the ONNX op's default. */
  size_t ia = 0, ib = 0;
  for (int i = 0; i < need; i++) {
    const char *nm = a->strings[(size_t)i % a->n];
    const act_info_t *info = NULL;
    for (size_t k = 0; k < sizeof k_acts / sizeof k_acts[0]; k++)
      if (nm && name_eq_ci(nm, k_acts[k].name)) info = &k_acts[k];
    if (!info)
      return dml_cpu_error(c, DML_STATUS_UNIMPLEMENTED,
                           "activation '%s' is not supported", nm ? nm : "");
    r->acts[i].kind = info->kind;
    r->acts[i].op = info->op;
    r->acts[i].alpha = info->alpha;
    r->acts[i].beta = info->beta;
    if (info->n_params >= 1 && ia < na) r->acts[i].alpha = al[ia++];
    if (info->n_params >= 2 && ib < nb) r->acts[i].beta = be[ib++];
  }
  return DML_OK;
}

dml_status_t dml_cpu_rnn_activations(const dml_cpu_call_t *c, int dirs,
                                     dml_cpu_rnn_act_t *acts) {
  rnn_t r;
  memset(&r, 0, sizeof r);
  r.kind = c->op == DML_OP_RNN ? K_RNN : c->op == DML_OP_GRU ? K_GRU : K_LSTM;
  r.n_acts = r.kind == K_RNN ? 1 : r.kind == K_GRU ? 2 : 3;
  r.dirs = dirs == 2 ? 2 : 1;
  DML_RETURN_IF_ERROR(read_acts(c, &r));
  for (int i = 0; i < r.n_acts * r.dirs; i++) {
    const act_info_t *info = &k_acts[r.acts[i].kind];
    acts[i].op = info->op;
    acts[i].form = info->form;
    acts[i].n_params = info->n_params;
    acts[i].alpha = r.acts[i].alpha;
    acts[i].beta = r.acts[i].beta;
  }
  return DML_OK;
}

/* Reads attributes and checks every shape. */
static dml_status_t rnn_geo(const dml_cpu_call_t *c, int kind, rnn_t *r) {
  memset(r, 0, sizeof *r);
  r->kind = kind;
  r->n_gates = kind == K_RNN ? 1 : kind == K_GRU ? 3 : 4;
  r->n_acts = kind == K_RNN ? 1 : kind == K_GRU ? 2 : 3;
  const char *dir = dml_cpu_get_string(c, "direction", "forward");
  if (strcmp(dir, "forward") == 0) {
    r->dirs = 1;
  } else if (strcmp(dir, "reverse") == 0) {
    r->dirs = 1;
    r->reverse_only = 1;
  } else if (strcmp(dir, "bidirectional") == 0) {
    r->dirs = 2;
  } else {
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "direction '%s' is not valid",
                         dir);
  }
  r->layout = (int)dml_cpu_get_int(c, "layout", 0);
  if (r->layout != 0 && r->layout != 1)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "layout %d must be 0 or 1",
                         r->layout);
  r->lbr = dml_cpu_get_int(c, "linear_before_reset", 0) != 0;
  r->input_forget = dml_cpu_get_int(c, "input_forget", 0) != 0;
  r->clip = dml_attr_find(c->attrs, c->n_attrs, "clip")
                ? dml_cpu_get_float(c, "clip", 0.0)
                : 0.0;
  if (dml_attr_find(c->attrs, c->n_attrs, "clip") && !(r->clip > 0))
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "clip must be > 0");
  DML_RETURN_IF_ERROR(read_acts(c, r));

  const dml_tensor_t *x = &c->inputs[0], *w = &c->inputs[1], *rr = &c->inputs[2];
  dml_dtype_t dt = x->dtype;
  if (dt != DML_DTYPE_F32 && dt != DML_DTYPE_F64) return dml_cpu_err_dtype(c, "X", dt);
  if (x->rank != 3 || w->rank != 3 || rr->rank != 3)
    return dml_cpu_err_shapes(c, "X, W and R must have rank 3");
  r->S = r->layout ? x->dims[1] : x->dims[0];
  r->B = r->layout ? x->dims[0] : x->dims[1];
  r->I = x->dims[2];
  r->H = rr->dims[2];
  int64_t hs = dml_cpu_get_int(c, "hidden_size", r->H);
  int64_t G = r->n_gates;
  if (hs != r->H || w->dims[0] != r->dirs || w->dims[1] != G * r->H ||
      w->dims[2] != r->I || rr->dims[0] != r->dirs || rr->dims[1] != G * r->H)
    return dml_cpu_err_shapes(c,
                              "W must be [%d, %lld, %lld] and R [%d, %lld, %lld] "
                              "(hidden_size %lld)",
                              r->dirs, (long long)(G * r->H), (long long)r->I, r->dirs,
                              (long long)(G * r->H), (long long)r->H, (long long)hs);
  for (uint32_t i = 1; i < c->n_inputs; i++) {
    const dml_tensor_t *t = dml_cpu_in(c, i);
    if (!t || i == 4) continue;
    if (t->dtype != dt) return dml_cpu_err_dtype(c, "input", t->dtype);
  }
  const dml_tensor_t *b = dml_cpu_in(c, 3), *sl = dml_cpu_in(c, 4);
  if (b && (b->rank != 2 || b->dims[0] != r->dirs || b->dims[1] != 2 * G * r->H))
    return dml_cpu_err_shapes(c, "B must be [%d, %lld]", r->dirs,
                              (long long)(2 * G * r->H));
  if (sl && (!dml_dtype_is_int(sl->dtype) || sl->rank != 1 || sl->dims[0] != r->B))
    return dml_cpu_err_shapes(c, "sequence_lens must be an integer [%lld]",
                              (long long)r->B);
  int64_t s0 = r->layout ? r->B : r->dirs, s1 = r->layout ? r->dirs : r->B;
  uint32_t n_state_in = kind == K_LSTM ? 2 : 1;
  for (uint32_t k = 0; k < n_state_in; k++) {
    const dml_tensor_t *t = dml_cpu_in(c, 5 + k);
    if (t && (t->rank != 3 || t->dims[0] != s0 || t->dims[1] != s1 || t->dims[2] != r->H))
      return dml_cpu_err_shapes(c, "initial state %u must be [%lld, %lld, %lld]", k,
                                (long long)s0, (long long)s1, (long long)r->H);
  }
  if (kind == K_LSTM) {
    const dml_tensor_t *p = dml_cpu_in(c, 7);
    if (p && (p->rank != 2 || p->dims[0] != r->dirs || p->dims[1] != 3 * r->H))
      return dml_cpu_err_shapes(c, "P must be [%d, %lld]", r->dirs,
                                (long long)(3 * r->H));
  }
  const dml_tensor_t *y = dml_cpu_out(c, 0);
  if (y) {
    int64_t e0 = r->layout ? r->B : r->S, e1 = r->layout ? r->S : r->dirs,
            e2 = r->layout ? r->dirs : r->B;
    if (y->dtype != dt || y->rank != 4 || y->dims[0] != e0 || y->dims[1] != e1 ||
        y->dims[2] != e2 || y->dims[3] != r->H)
      return dml_cpu_err_shapes(c, "Y must be [%lld, %lld, %lld, %lld]", (long long)e0,
                                (long long)e1, (long long)e2, (long long)r->H);
  }
  for (uint32_t k = 1; k < c->n_outputs; k++) {
    const dml_tensor_t *t = dml_cpu_out(c, k);
    if (t && (t->dtype != dt || t->rank != 3 || t->dims[0] != s0 || t->dims[1] != s1 ||
              t->dims[2] != r->H))
      return dml_cpu_err_shapes(c, "output %u must be [%lld, %lld, %lld]", k,
                                (long long)s0, (long long)s1, (long long)r->H);
  }
  return DML_OK;
}

static int fast_plan_for(const dml_cpu_call_t *c, int kind, int threads, void *p);

/* Scratch: f32, the fused cell's buffers (fast_plan); f64 (doubles): h, c
 * [B, H]; gates [B, G*H]; rh [B, H] (GRU). */
static size_t rnn_scratch(const dml_cpu_call_t *c, int kind, int threads) {
  const dml_tensor_t *x = &c->inputs[0], *rr = &c->inputs[2];
  if (x->rank != 3 || rr->rank != 3) return 0;
  if (x->dtype == DML_DTYPE_F32) {
    size_t total = 0;
    return fast_plan_for(c, kind, threads, &total) ? total : SIZE_MAX;
  }
  int64_t layout = dml_cpu_get_int(c, "layout", 0);
  int64_t B = layout ? x->dims[0] : x->dims[1], H = rr->dims[2];
  int64_t G = kind == K_RNN ? 1 : kind == K_GRU ? 3 : 4, n;
  if (B < 0 || H < 0 || __builtin_mul_overflow(B, H, &n) ||
      __builtin_mul_overflow(n, G + 4, &n) ||
      __builtin_mul_overflow(n, (int64_t)sizeof(double), &n))
    return SIZE_MAX;
  return (size_t)n;
}

static inline double clipv(const rnn_t *r, double v) {
  if (r->clip > 0) v = v < -r->clip ? -r->clip : v > r->clip ? r->clip : v;
  return v;
}

/* Runs direction d (reverse when rev) over the whole sequence. */
static void rnn_dir(const dml_cpu_call_t *c, const rnn_t *r, int d, int rev,
                    double *scratch) {
  const dml_tensor_t *x = &c->inputs[0], *w = &c->inputs[1], *rw = &c->inputs[2];
  const dml_tensor_t *bt = dml_cpu_in(c, 3), *sl = dml_cpu_in(c, 4);
  const dml_tensor_t *h0 = dml_cpu_in(c, 5);
  const dml_tensor_t *c0 = r->kind == K_LSTM ? dml_cpu_in(c, 6) : NULL;
  const dml_tensor_t *pt = r->kind == K_LSTM ? dml_cpu_in(c, 7) : NULL;
  dml_tensor_t *y = dml_cpu_out(c, 0), *yh = dml_cpu_out(c, 1);
  dml_tensor_t *yc = r->kind == K_LSTM ? dml_cpu_out(c, 2) : NULL;
  dml_dtype_t dt = x->dtype;
  const int64_t S = r->S, B = r->B, I = r->I, H = r->H, G = r->n_gates;
  const int ND = r->dirs;
  double *h = scratch, *cs = h + B * H, *g = cs + B * H, *rh = g + B * G * H,
         *hn = rh + B * H;
  const act_t *f = &r->acts[d * r->n_acts];
  const act_t *ga = r->n_acts > 1 ? &r->acts[d * r->n_acts + 1] : f;
  const act_t *ha = r->n_acts > 2 ? &r->acts[d * r->n_acts + 2] : f;
  const int64_t woff = (int64_t)d * G * H * I, roff = (int64_t)d * G * H * H;
  const int64_t boff = (int64_t)d * 2 * G * H, poff = (int64_t)d * 3 * H;
#define SIDX(b, j) (r->layout ? (((b)*ND + d) * H + (j)) : ((d * B + (b)) * H + (j)))
#define XIDX(t, b, i) (r->layout ? (((b)*S + (t)) * I + (i)) : (((t)*B + (b)) * I + (i)))
#define YIDX(t, b, j)                               \
  (r->layout ? ((((b)*S + (t)) * ND + d) * H + (j)) \
             : ((((t)*ND + d) * B + (b)) * H + (j)))
  for (int64_t b = 0; b < B; b++)
    for (int64_t j = 0; j < H; j++) {
      h[b * H + j] = h0 ? dml_cpu_ld(dt, h0->data, SIDX(b, j)) : 0.0;
      cs[b * H + j] = c0 ? dml_cpu_ld(dt, c0->data, SIDX(b, j)) : 0.0;
    }
  if (y)
    for (int64_t t = 0; t < S; t++)
      for (int64_t b = 0; b < B; b++)
        for (int64_t j = 0; j < H; j++) dml_cpu_st(dt, y->data, YIDX(t, b, j), 0.0);
  for (int64_t step = 0; step < S; step++) {
    for (int64_t b = 0; b < B; b++) {
      int64_t len = sl ? dml_load_i64(sl->dtype, sl->data, (size_t)b) : S;
      if (len > S) len = S;
      if (step >= len) continue;
      int64_t t = rev ? len - 1 - step : step;
      double *gb = g + b * G * H, *hb = h + b * H, *cb = cs + b * H;
      /* gates = X_t W^T + Wb (+ H_{t-1} R^T + Rb, except GRU's h gate) */
      for (int64_t k = 0; k < G * H; k++) {
        double acc = bt ? dml_cpu_ld(dt, bt->data, boff + k) : 0.0;
        for (int64_t i = 0; i < I; i++)
          acc += dml_cpu_ld(dt, x->data, XIDX(t, b, i)) *
                 dml_cpu_ld(dt, w->data, woff + k * I + i);
        int gru_h = r->kind == K_GRU && k >= 2 * H;
        if (!gru_h || r->lbr) {
          /* GRU with linear_before_reset keeps (H R_h^T + Rb_h) apart. */
          double racc = bt ? dml_cpu_ld(dt, bt->data, boff + G * H + k) : 0.0;
          for (int64_t i = 0; i < H; i++)
            racc += hb[i] * dml_cpu_ld(dt, rw->data, roff + k * H + i);
          if (gru_h)
            rh[b * H + (k - 2 * H)] = racc;
          else
            acc += racc;
        }
        gb[k] = acc;
      }
      if (r->kind == K_RNN) {
        for (int64_t j = 0; j < H; j++) hn[b * H + j] = act_apply(f, clipv(r, gb[j]));
      } else if (r->kind == K_GRU) {
        /* gate order z, r, h */
        double *z = gb, *rg = gb + H, *hh = gb + 2 * H;
        for (int64_t j = 0; j < H; j++) {
          z[j] = act_apply(f, clipv(r, z[j]));
          rg[j] = act_apply(f, clipv(r, rg[j]));
        }
        for (int64_t j = 0; j < H; j++) {
          double v = hh[j];
          if (r->lbr) {
            v += rg[j] * rh[b * H + j];
          } else {
            double racc = bt ? dml_cpu_ld(dt, bt->data, boff + G * H + 2 * H + j) : 0.0;
            for (int64_t i = 0; i < H; i++)
              racc +=
                  rg[i] * hb[i] * dml_cpu_ld(dt, rw->data, roff + (2 * H + j) * H + i);
            v += racc;
          }
          double ht = act_apply(ga, clipv(r, v));
          hn[b * H + j] = (1.0 - z[j]) * ht + z[j] * hb[j];
        }
      } else {
        /* gate order i, o, f, c; peepholes P = [Pi, Po, Pf] */
        double *ig = gb, *og = gb + H, *fg = gb + 2 * H, *cg = gb + 3 * H;
        for (int64_t j = 0; j < H; j++) {
          double pi = pt ? dml_cpu_ld(dt, pt->data, poff + j) : 0.0;
          double po = pt ? dml_cpu_ld(dt, pt->data, poff + H + j) : 0.0;
          double pf = pt ? dml_cpu_ld(dt, pt->data, poff + 2 * H + j) : 0.0;
          double iv = act_apply(f, clipv(r, ig[j] + pi * cb[j]));
          double fv =
              r->input_forget ? 1.0 - iv : act_apply(f, clipv(r, fg[j] + pf * cb[j]));
          double cv = act_apply(ga, clipv(r, cg[j]));
          double cn = fv * cb[j] + iv * cv;
          double ov = act_apply(f, clipv(r, og[j] + po * cn));
          cb[j] = cn;
          hn[b * H + j] = ov * act_apply(ha, cn);
        }
      }
      for (int64_t j = 0; j < H; j++) {
        hb[j] = hn[b * H + j];
        if (y) dml_cpu_st(dt, y->data, YIDX(t, b, j), hb[j]);
      }
    }
  }
  for (int64_t b = 0; b < B; b++)
    for (int64_t j = 0; j < H; j++) {
      if (yh) dml_cpu_st(dt, yh->data, SIDX(b, j), h[b * H + j]);
      if (yc) dml_cpu_st(dt, yc->data, SIDX(b, j), cs[b * H + j]);
    }
#undef SIDX
#undef XIDX
#undef YIDX
}

/* ---- f32: the fused cell ---------------------------------------------- */

/* Offsets (floats, each a multiple of 16) of the f32 path's buffers in its
 * scratch, and the GEMM core's scratch at the end (gs, gs_bytes). */
/* The weights of an f32 call packed once (dml_cpu_rnn_prepack), per
 * direction at d * per_dir floats: W_d as the input projection's packed B
 * (GH x I, transposed), R_d's first n0 rows as the step GEMM's packed B
 * (n0 x H), and for a GRU without linear_before_reset R_h (H x H). Offsets
 * in floats, each a multiple of 16 (64 bytes). */
typedef struct {
  size_t w, r0, r1, per_dir;
} rnn_pack_t;

static size_t round16(size_t n) {
  return (n + 15) / 16 * 16;
}

static void rnn_pack_layout(int kind, int lbr, int64_t GH, int64_t I, int64_t H,
                            rnn_pack_t *pk) {
  int64_t n0 = kind == K_GRU && !lbr ? 2 * H : GH;
  pk->w = 0;
  pk->r0 = round16(dml_cpu_sgemm_packed_b_floats(GH, I));
  pk->r1 = pk->r0 + round16(dml_cpu_sgemm_packed_b_floats(n0, H));
  pk->per_dir =
      pk->r1 + (kind == K_GRU && !lbr ? round16(dml_cpu_sgemm_packed_b_floats(H, H)) : 0);
}

typedef struct {
  size_t xw, bias, h, c, hr, rh, hh, rp0, rp1, gs, gs_bytes, total_bytes;
  int64_t n0; /* columns of the per-step GEMM H_{t-1} R^T */
} fast_plan_t;

static int plan_add(size_t *at, size_t n) {
  size_t r = (n + 15) / 16 * 16;
  if (r < n || *at + r < *at) return 0;
  *at += r;
  return 1;
}

/* 0 when the sizes overflow. */
static int fast_plan(int kind, int lbr, int64_t S, int64_t B, int64_t I, int64_t H,
                     int threads, fast_plan_t *p) {
  memset(p, 0, sizeof *p);
  int64_t G = kind == K_RNN ? 1 : kind == K_GRU ? 3 : 4, GH, SB, BG, BH;
  if (S < 0 || B < 0 || I < 0 || H < 0 || __builtin_mul_overflow(G, H, &GH) ||
      __builtin_mul_overflow(S, B, &SB) || __builtin_mul_overflow(B, GH, &BG) ||
      __builtin_mul_overflow(B, H, &BH))
    return 0;
  p->n0 = kind == K_GRU && !lbr ? 2 * H : GH;
  size_t at = 0, xw;
  if (__builtin_mul_overflow((size_t)SB, (size_t)GH, &xw)) return 0;
  p->xw = at;
  if (!plan_add(&at, xw)) return 0;
  p->bias = at;
  if (!plan_add(&at, (size_t)GH)) return 0;
  p->h = at;
  if (!plan_add(&at, (size_t)BH)) return 0;
  p->c = at;
  if (!plan_add(&at, (size_t)BH)) return 0;
  p->hr = at;
  if (!plan_add(&at, (size_t)BG)) return 0;
  p->rh = at;
  if (!plan_add(&at, (size_t)BH)) return 0;
  p->hh = at;
  if (!plan_add(&at, (size_t)BH)) return 0;
  p->rp0 = at;
  if (!plan_add(&at, dml_cpu_sgemm_packed_b_floats(p->n0, H))) return 0;
  p->rp1 = at;
  if (kind == K_GRU && !lbr && !plan_add(&at, dml_cpu_sgemm_packed_b_floats(H, H)))
    return 0;
  p->gs = at;
  size_t g0 = dml_cpu_sgemm_scratch(SB, GH, I, threads);
  size_t g1 = dml_cpu_sgemm_scratch(B, p->n0, H, threads);
  size_t g2 = dml_cpu_sgemm_scratch(B, H, H, threads);
  p->gs_bytes = g0 > g1 ? g0 : g1;
  if (g2 > p->gs_bytes) p->gs_bytes = g2;
  if (at > (SIZE_MAX - 64 - p->gs_bytes) / sizeof(float)) return 0;
  p->total_bytes = at * sizeof(float) + p->gs_bytes + 64;
  return 1;
}

/* The f32 scratch bytes of call c (into *(size_t *)out); 0 on overflow. */
static int fast_plan_for(const dml_cpu_call_t *c, int kind, int threads, void *out) {
  const dml_tensor_t *x = &c->inputs[0], *rr = &c->inputs[2];
  int64_t layout = dml_cpu_get_int(c, "layout", 0);
  int lbr = dml_cpu_get_int(c, "linear_before_reset", 0) != 0;
  int64_t S = layout ? x->dims[1] : x->dims[0], B = layout ? x->dims[0] : x->dims[1];
  fast_plan_t p;
  if (!fast_plan(kind, lbr, S, B, x->dims[2], rr->dims[2], threads, &p)) return 0;
  *(size_t *)out = p.total_bytes;
  return 1;
}

/* The activation a over n values in place. */
static void act_vec(const act_t *a, float *v, int64_t n) {
  if (a->kind == A_SIGMOID) {
    dml_cpu_vsigmoid_f32(v, n);
  } else if (a->kind == A_TANH) {
    dml_cpu_vtanh_f32(v, n);
  } else {
    for (int64_t i = 0; i < n; i++) v[i] = (float)act_apply(a, (double)v[i]);
  }
}

static inline float clipf(float clip, float v) {
  if (clip > 0) v = v < -clip ? -clip : v > clip ? clip : v;
  return v;
}

static int g_rnn_fused = 1;

int dml_cpu_rnn_fused_set(int on) {
  int prev = g_rnn_fused;
  g_rnn_fused = on != 0;
  return prev;
}

/* Direction d (reverse when rev) of an f32 call, with the buffers of plan p
 * at base (64-byte aligned). */
static void rnn_dir_f32(const dml_cpu_call_t *c, const rnn_t *r, int d, int rev,
                        const fast_plan_t *p, float *base, const float *packed) {
  const dml_tensor_t *x = &c->inputs[0], *w = &c->inputs[1], *rw = &c->inputs[2];
  const dml_tensor_t *bt = dml_cpu_in(c, 3), *sl = dml_cpu_in(c, 4);
  const dml_tensor_t *h0 = dml_cpu_in(c, 5);
  const dml_tensor_t *c0 = r->kind == K_LSTM ? dml_cpu_in(c, 6) : NULL;
  const dml_tensor_t *pt = r->kind == K_LSTM ? dml_cpu_in(c, 7) : NULL;
  dml_tensor_t *yt = dml_cpu_out(c, 0), *yh = dml_cpu_out(c, 1);
  dml_tensor_t *yc = r->kind == K_LSTM ? dml_cpu_out(c, 2) : NULL;
  const int64_t S = r->S, B = r->B, I = r->I, H = r->H, G = r->n_gates, GH = G * H;
  const int64_t n0 = p->n0;
  const int ND = r->dirs, gru_lbr0 = r->kind == K_GRU && !r->lbr;
  const float clip = (float)r->clip;
  const float *X = (const float *)x->data;
  const float *W = (const float *)w->data + (int64_t)d * GH * I;
  const float *R = (const float *)rw->data + (int64_t)d * GH * H;
  const float *Wb = bt ? (const float *)bt->data + (int64_t)d * 2 * GH : NULL;
  const float *Rb = Wb ? Wb + GH : NULL;
  const float *P = pt ? (const float *)pt->data + (int64_t)d * 3 * H : NULL;
  float *Y = yt ? (float *)yt->data : NULL;
  float *xw = base + p->xw, *bias = base + p->bias, *h = base + p->h, *cs = base + p->c;
  float *hr = base + p->hr, *rh = base + p->rh, *hh = base + p->hh;
  float *rp0 = base + p->rp0, *rp1 = base + p->rp1;
  const float *wp = NULL; /* W packed at load (NULL: packed by the GEMM) */
  if (packed) {
    rnn_pack_t pk;
    rnn_pack_layout(r->kind, r->lbr, GH, I, H, &pk);
    const float *at = packed + (size_t)d * pk.per_dir;
    wp = at + pk.w;
    rp0 = (float *)(uintptr_t)(at + pk.r0);
    rp1 = (float *)(uintptr_t)(at + pk.r1);
  }
  void *gs = base + p->gs;
  const act_t *f = &r->acts[d * r->n_acts];
  const act_t *ga = r->n_acts > 1 ? &r->acts[d * r->n_acts + 1] : f;
  const act_t *ha = r->n_acts > 2 ? &r->acts[d * r->n_acts + 2] : f;
  /* The LSTM's gate math in one vector pass (cpu_vmath.c) where the
   * activations are the defaults. */
  const int lstm_fused = g_rnn_fused && r->kind == K_LSTM && !r->input_forget &&
                         f->kind == A_SIGMOID && ga->kind == A_TANH && ha->kind == A_TANH;
  /* The GRU's likewise (z, r, the candidate and H_t per row in one pass
   * with linear_before_reset; z and r, then the rest after the R_h product,
   * without). */
  const int gru_fused =
      g_rnn_fused && r->kind == K_GRU && f->kind == A_SIGMOID && ga->kind == A_TANH;
#define SIDX(b) (r->layout ? ((b)*ND + d) * H : (d * B + (b)) * H)
#define XROW(t, b) (r->layout ? (b)*S + (t) : (t)*B + (b))
#define YROW(t, b) \
  (r->layout ? (((b)*S + (t)) * ND + d) * H : (((t)*ND + d) * B + (b)) * H)

  /* Input projection, with the biases that add outside the recurrence (all
   * but GRU's Rb_h under linear_before_reset): of every step at once, or,
   * where every batch row is at the same time step (no sequence_lens) and
   * the whole product would run on one thread, kc steps (kc x B >= 32
   * rows, X's rows of consecutive steps being contiguous when kc > 1)
   * before their first step into the first kc x B x GH floats of xw, so
   * the gate math reads them from cache instead of from a seq x batch x GH
   * buffer written long before (the GEMM gives each element the same
   * roundings whatever M: the same bits). At batch 1 one product of all
   * steps was faster than 32 of one row. */
  if (Wb)
    for (int64_t k = 0; k < GH; k++)
      bias[k] = Wb[k] + (r->kind == K_GRU && r->lbr && k >= 2 * H ? 0.0f : Rb[k]);
  const int64_t kc = B >= 32 ? 1 : S < (32 + B - 1) / B ? S : (32 + B - 1) / B;
  const int per_step =
      !sl && (kc == 1 || !r->layout) && kc < S &&
      (dml_cpu_num_threads() == 1 ||
       (double)S * (double)B * (double)GH * (double)I < DML_CPU_PARALLEL_MIN_MACS);
  int64_t t0 = 0; /* the first time step in xw (per_step) */
  if (!per_step) {
    dml_cpu_sgemm_pre(0, 1, S * B, GH, I, 1.0f, X, I, W, I, 0.0f, xw, GH, NULL, wp, gs,
                      p->gs_bytes);
    for (int64_t m = 0; Wb && m < S * B; m++) {
      float *row = xw + m * GH;
      for (int64_t k = 0; k < GH; k++) row[k] += bias[k];
    }
  }
  if (!packed) {
    dml_cpu_sgemm_pack_b(1, n0, H, R, H, rp0);
    if (gru_lbr0) dml_cpu_sgemm_pack_b(1, H, H, R + 2 * H * H, H, rp1);
  }
  const float *Rbh = Rb && r->kind == K_GRU && r->lbr ? Rb + 2 * H : NULL;

  int64_t maxlen = 0;
  for (int64_t b = 0; b < B; b++) {
    int64_t len = sl ? dml_load_i64(sl->dtype, sl->data, (size_t)b) : S;
    if (len > maxlen) maxlen = len;
    for (int64_t j = 0; j < H; j++) {
      h[b * H + j] = h0 ? ((const float *)h0->data)[SIDX(b) + j] : 0.0f;
      cs[b * H + j] = c0 ? ((const float *)c0->data)[SIDX(b) + j] : 0.0f;
    }
    /* Y is 0 at steps t >= len (both directions). */
    if (Y)
      for (int64_t t = len; t < S; t++)
        memset(Y + YROW(t, b), 0, (size_t)H * sizeof(float));
  }

  for (int64_t step = 0; step < maxlen; step++) {
    if (per_step && step % kc == 0) {
      int64_t k = kc < S - step ? kc : S - step;
      t0 = rev ? S - step - k : step;
      dml_cpu_sgemm_pre(0, 1, k * B, GH, I, 1.0f, X + (r->layout ? t0 : t0 * B) * I,
                        r->layout ? S * I : I, W, I, 0.0f, xw, GH, NULL, wp, gs,
                        p->gs_bytes);
      for (int64_t m = 0; Wb && m < k * B; m++) {
        float *row = xw + m * GH;
        for (int64_t k = 0; k < GH; k++) row[k] += bias[k];
      }
    }
    dml_cpu_sgemm_pre(0, 1, B, n0, H, 1.0f, h, H, R, H, 0.0f, hr, n0, NULL, rp0, gs,
                      p->gs_bytes);
    if (r->kind == K_GRU && !(gru_fused && r->lbr)) {
      /* z and r: gate order z, r, h */
      for (int64_t b = 0; b < B; b++) {
        int64_t len = sl ? dml_load_i64(sl->dtype, sl->data, (size_t)b) : S;
        float *g = hr + b * n0;
        if (step >= len) {
          if (gru_lbr0) memset(rh + b * H, 0, (size_t)H * sizeof(float));
          continue;
        }
        int64_t t = rev ? len - 1 - step : step;
        const float *xr = xw + (per_step ? (t - t0) * B + b : XROW(t, b)) * GH;
        if (gru_fused) {
          dml_cpu_gru_gates_f32(xr, g, clip, h + b * H, rh + b * H, H);
          continue;
        }
        for (int64_t j = 0; j < 2 * H; j++) g[j] = clipf(clip, xr[j] + g[j]);
        act_vec(f, g, 2 * H);
        if (gru_lbr0)
          for (int64_t j = 0; j < H; j++) rh[b * H + j] = g[H + j] * h[b * H + j];
      }
      if (gru_lbr0)
        dml_cpu_sgemm_pre(0, 1, B, H, H, 1.0f, rh, H, R + 2 * H * H, H, 0.0f, hh, H, NULL,
                          rp1, gs, p->gs_bytes);
    }
    for (int64_t b = 0; b < B; b++) {
      int64_t len = sl ? dml_load_i64(sl->dtype, sl->data, (size_t)b) : S;
      if (step >= len) continue;
      int64_t t = rev ? len - 1 - step : step;
      const float *xr = xw + (per_step ? (t - t0) * B + b : XROW(t, b)) * GH;
      float *g = hr + b * n0, *hb = h + b * H, *cb = cs + b * H, *tmp = hh + b * H;
      if (r->kind == K_RNN) {
        for (int64_t j = 0; j < H; j++) g[j] = clipf(clip, xr[j] + g[j]);
        act_vec(f, g, H);
        memcpy(hb, g, (size_t)H * sizeof(float));
      } else if (gru_fused) {
        dml_cpu_gru_cell_f32(xr, g, gru_lbr0 ? tmp : NULL, Rbh, clip, hb, H);
      } else if (r->kind == K_GRU) {
        const float *z = g, *rg = g + H;
        if (gru_lbr0) {
          for (int64_t j = 0; j < H; j++) tmp[j] = clipf(clip, xr[2 * H + j] + tmp[j]);
        } else {
          /* linear_before_reset: r (.) (H_{t-1} R_h^T + Rb_h) */
          for (int64_t j = 0; j < H; j++)
            tmp[j] = clipf(
                clip, xr[2 * H + j] + rg[j] * (g[2 * H + j] + (Rbh ? Rbh[j] : 0.0f)));
        }
        act_vec(ga, tmp, H);
        for (int64_t j = 0; j < H; j++) hb[j] = (1.0f - z[j]) * tmp[j] + z[j] * hb[j];
      } else if (lstm_fused) {
        dml_cpu_lstm_cell_f32(xr, g, P, clip, cb, hb, H);
      } else {
        /* gate order i, o, f, c; peepholes P = [Pi, Po, Pf] */
        float *ig = g, *og = g + H, *fg = g + 2 * H, *cg = g + 3 * H;
        for (int64_t j = 0; j < H; j++) {
          ig[j] = clipf(clip, xr[j] + ig[j] + (P ? P[j] * cb[j] : 0.0f));
          fg[j] = clipf(clip, xr[2 * H + j] + fg[j] + (P ? P[2 * H + j] * cb[j] : 0.0f));
          cg[j] = clipf(clip, xr[3 * H + j] + cg[j]);
        }
        act_vec(f, ig, H);
        if (!r->input_forget) act_vec(f, fg, H);
        act_vec(ga, cg, H);
        for (int64_t j = 0; j < H; j++) {
          float fv = r->input_forget ? 1.0f - ig[j] : fg[j];
          float cn = fv * cb[j] + ig[j] * cg[j];
          cb[j] = cn;
          tmp[j] = cn;
          og[j] = clipf(clip, xr[H + j] + og[j] + (P ? P[H + j] * cn : 0.0f));
        }
        act_vec(f, og, H);
        act_vec(ha, tmp, H);
        for (int64_t j = 0; j < H; j++) hb[j] = og[j] * tmp[j];
      }
      if (Y) memcpy(Y + YROW(t, b), hb, (size_t)H * sizeof(float));
    }
  }
  for (int64_t b = 0; b < B; b++) {
    if (yh) memcpy((float *)yh->data + SIDX(b), h + b * H, (size_t)H * sizeof(float));
    if (yc) memcpy((float *)yc->data + SIDX(b), cs + b * H, (size_t)H * sizeof(float));
  }
#undef SIDX
#undef XROW
#undef YROW
}

static dml_status_t rnn_run(const dml_cpu_call_t *c, int kind, const float *packed) {
  rnn_t r;
  DML_RETURN_IF_ERROR(rnn_geo(c, kind, &r));
  const dml_tensor_t *sl = dml_cpu_in(c, 4);
  for (int64_t b = 0; sl && b < r.B; b++) {
    int64_t len = dml_load_i64(sl->dtype, sl->data, (size_t)b);
    if (len < 0 || len > r.S)
      return dml_cpu_error(c, DML_STATUS_OUT_OF_RANGE,
                           "sequence_lens[%lld] = %lld is outside [0, %lld]",
                           (long long)b, (long long)len, (long long)r.S);
  }
  if (r.B * r.H > 0 && (!c->scratch || c->scratch_bytes < rnn_scratch(c, kind, 1)))
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "scratch is too small");
  if (r.B * r.H == 0) return DML_OK; /* empty outputs */
  if (c->inputs[0].dtype == DML_DTYPE_F32) {
    fast_plan_t p;
    /* As many GEMM threads as the scratch given was sized for. */
    int threads = dml_cpu_num_threads();
    while (threads > 1 && (!fast_plan(kind, r.lbr, r.S, r.B, r.I, r.H, threads, &p) ||
                           p.total_bytes > c->scratch_bytes))
      threads--;
    if (!fast_plan(kind, r.lbr, r.S, r.B, r.I, r.H, threads, &p))
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "sizes overflow");
    float *base = (float *)(((uintptr_t)c->scratch + 63) & ~(uintptr_t)63);
    for (int d = 0; d < r.dirs; d++)
      rnn_dir_f32(c, &r, d, r.reverse_only || d == 1, &p, base, packed);
    return DML_OK;
  }
  for (int d = 0; d < r.dirs; d++)
    rnn_dir(c, &r, d, r.reverse_only || d == 1, (double *)c->scratch);
  return DML_OK;
}

/* RNN: H_t = f(X_t W^T + H_{t-1} R^T + Wb + Rb) (spec, "Equations"). */
dml_status_t dml_cpuk_RNN(const dml_cpu_call_t *c) {
  return rnn_run(c, K_RNN, NULL);
}
size_t dml_cpus_RNN(const dml_cpu_call_t *c, int threads) {
  return rnn_scratch(c, K_RNN, threads);
}

/* GRU, gates z, r, h (spec, "Equations"; linear_before_reset applies
 * r (.) (H_{t-1} R_h^T + Rb_h)). */
dml_status_t dml_cpuk_GRU(const dml_cpu_call_t *c) {
  return rnn_run(c, K_GRU, NULL);
}
size_t dml_cpus_GRU(const dml_cpu_call_t *c, int threads) {
  return rnn_scratch(c, K_GRU, threads);
}

/* LSTM, gates i, o, f, c, peepholes P = [Pi, Po, Pf] (spec, "Equations");
 * input_forget couples the gates as f = 1 - i (as onnxruntime). */
dml_status_t dml_cpuk_LSTM(const dml_cpu_call_t *c) {
  return rnn_run(c, K_LSTM, NULL);
}
size_t dml_cpus_LSTM(const dml_cpu_call_t *c, int threads) {
  return rnn_scratch(c, K_LSTM, threads);
}

/* The recurrent op's kind for `op`; -1 for any other op. */
static int rnn_kind(dml_op_t op) {
  return op == DML_OP_RNN    ? K_RNN
         : op == DML_OP_GRU  ? K_GRU
         : op == DML_OP_LSTM ? K_LSTM
                             : -1;
}

/* The geometry of constant W [dirs, G*H, I] and R [dirs, G*H, H] of `op`
 * (f32, as rnn_geo checks them); 0 when they do not fit it. */
static int pack_geo(dml_op_t op, const dml_tensor_t *w, const dml_tensor_t *r,
                    const dml_attr_t *attrs, uint32_t n_attrs, int *kind, int *lbr,
                    int64_t *dirs, int64_t *GH, int64_t *I, int64_t *H) {
  *kind = rnn_kind(op);
  if (*kind < 0 || !w || !r || w->dtype != DML_DTYPE_F32 || r->dtype != DML_DTYPE_F32 ||
      w->rank != 3 || r->rank != 3 || !w->data || !r->data)
    return 0;
  int64_t G = *kind == K_RNN ? 1 : *kind == K_GRU ? 3 : 4;
  *dirs = w->dims[0], *GH = w->dims[1], *I = w->dims[2], *H = r->dims[2];
  *lbr = dml_attr_int(attrs, n_attrs, "linear_before_reset", 0) != 0;
  if (*dirs < 1 || *dirs > 2 || *H <= 0 || *I <= 0 || *GH != G * *H ||
      r->dims[0] != *dirs || r->dims[1] != *GH || *H > (INT64_C(1) << 24) ||
      *I > (INT64_C(1) << 24))
    return 0;
  return 1;
}

size_t dml_cpu_rnn_prepack_bytes(dml_op_t op, const dml_tensor_t *w,
                                 const dml_tensor_t *r, const dml_attr_t *attrs,
                                 uint32_t n_attrs) {
  int kind, lbr;
  int64_t dirs, GH, I, H;
  if (!pack_geo(op, w, r, attrs, n_attrs, &kind, &lbr, &dirs, &GH, &I, &H)) return 0;
  rnn_pack_t pk;
  rnn_pack_layout(kind, lbr, GH, I, H, &pk);
  if (pk.per_dir > SIZE_MAX / sizeof(float) / 2) return 0;
  return (size_t)dirs * pk.per_dir * sizeof(float);
}

void dml_cpu_rnn_prepack(dml_op_t op, const dml_tensor_t *w, const dml_tensor_t *r,
                         const dml_attr_t *attrs, uint32_t n_attrs, void *dst) {
  int kind, lbr;
  int64_t dirs, GH, I, H;
  if (!pack_geo(op, w, r, attrs, n_attrs, &kind, &lbr, &dirs, &GH, &I, &H)) return;
  rnn_pack_t pk;
  rnn_pack_layout(kind, lbr, GH, I, H, &pk);
  int64_t n0 = kind == K_GRU && !lbr ? 2 * H : GH;
  for (int64_t d = 0; d < dirs; d++) {
    float *at = (float *)dst + (size_t)d * pk.per_dir;
    const float *W = (const float *)w->data + d * GH * I;
    const float *R = (const float *)r->data + d * GH * H;
    dml_cpu_sgemm_pack_b(1, GH, I, W, I, at + pk.w);
    dml_cpu_sgemm_pack_b(1, n0, H, R, H, at + pk.r0);
    if (kind == K_GRU && !lbr)
      dml_cpu_sgemm_pack_b(1, H, H, R + 2 * H * H, H, at + pk.r1);
  }
}

dml_status_t dml_cpu_rnn_packed(const dml_cpu_call_t *c, const void *packed) {
  int kind = rnn_kind(c->op);
  if (kind < 0)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "packed recurrent weights need an RNN, GRU or LSTM");
  int k2, lbr;
  int64_t dirs, GH, I, H;
  if (packed && (c->inputs[0].dtype != DML_DTYPE_F32 ||
                 !pack_geo(c->op, &c->inputs[1], &c->inputs[2], c->attrs, c->n_attrs, &k2,
                           &lbr, &dirs, &GH, &I, &H)))
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "packed weights given for a call they do not fit");
  return rnn_run(c, kind, (const float *)packed);
}
