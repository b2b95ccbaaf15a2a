/* schedule_rnn.c — the scheduler's RNN, GRU and LSTM form
 * (schedule_internal.h): one kernel per node, one workgroup per (direction,
 * batch row) looping over the sequence, the hidden (and cell) state in a
 * workgroup-shared tile; activations as runtime/cpu/cpu_rnn.c lists them
 * (docs/kernels.md). Moved out of schedule.c unchanged. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dml_cpu.h"
#include "dml_ew.h"
#include "schedule_internal.h"
#include "schedule_node_util.h"

/* ---- RNN, GRU and LSTM: one workgroup per (direction, batch) ---- */

/* Activation functions of the RNN family (ONNX spec, "Activation
 * functions"; runtime/cpu/cpu_rnn.c's list and defaults). */
enum {
  RA_RELU,
  RA_TANH,
  RA_SIGMOID,
  RA_AFFINE,
  RA_LEAKY_RELU,
  RA_THRESHOLDED_RELU,
  RA_SCALED_TANH,
  RA_HARD_SIGMOID,
  RA_ELU,
  RA_SOFTSIGN,
  RA_SOFTPLUS,
};

typedef struct {
  int kind;
  double alpha, beta;
} rnn_act_t;

static const struct {
  const char *name;
  int kind, n_params;
  double alpha, beta;
} k_rnn_acts[] = {
    {"relu", RA_RELU, 0, 0, 0},
    {"tanh", RA_TANH, 0, 0, 0},
    {"sigmoid", RA_SIGMOID, 0, 0, 0},
    {"affine", RA_AFFINE, 2, 1.0, 0.0},
    {"leakyrelu", RA_LEAKY_RELU, 1, 0.01, 0},
    {"thresholdedrelu", RA_THRESHOLDED_RELU, 1, 1.0, 0},
    {"scaledtanh", RA_SCALED_TANH, 2, 1.0, 1.0},
    {"hardsigmoid", RA_HARD_SIGMOID, 2, 0.2, 0.5},
    {"elu", RA_ELU, 1, 1.0, 0},
    {"softsign", RA_SOFTSIGN, 0, 0, 0},
    {"softplus", RA_SOFTPLUS, 0, 0, 0},
};

static int rnn_name_eq(const char *a, const char *b) {
  for (; *a && *b; a++, b++) {
    char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
    if (x != *b) return 0;
  }
  return *a == *b;
}

/* The CPU's activations (cpu_rnn.c read_acts): defaults per op, one list
 * per direction or one shared, alpha/beta consumed in order. */
static const char *rnn_read_acts(const dml_pkg_node_t *n, int kind, int n_acts, int dirs,
                                 rnn_act_t *acts) {
  static const int dflt[3][3] = {
      {RA_TANH, 0, 0}, {RA_SIGMOID, RA_TANH, 0}, {RA_SIGMOID, RA_TANH, RA_TANH}};
  int need = n_acts * dirs;
  for (int i = 0; i < need; i++) {
    acts[i].kind = dflt[kind][i % n_acts];
    acts[i].alpha = acts[i].beta = 0;
  }
  const dml_attr_t *a = dml_attr_find(n->attrs, n->n_attrs, "activations");
  if (!a) return NULL;
  if (a->kind != DML_ATTR_STRINGS) return "activations must be a list of strings";
  if (a->n != (size_t)need && !(dirs == 2 && a->n == (size_t)n_acts))
    return "activations has the wrong number of entries";
  size_t na = 0, nb = 0, ia = 0, ib = 0;
  const double *al = dml_attr_floats(n->attrs, n->n_attrs, "activation_alpha", &na);
  const double *be = dml_attr_floats(n->attrs, n->n_attrs, "activation_beta", &nb);
  for (int i = 0; i < need; i++) {
    const char *nm = a->strings[(size_t)i % a->n];
    int k = -1;
    for (size_t q = 0; q < sizeof k_rnn_acts / sizeof k_rnn_acts[0]; q++)
      if (nm && rnn_name_eq(nm, k_rnn_acts[q].name)) k = (int)q;
    if (k < 0) return "an activation the CPU does not know";
    acts[i].kind = k_rnn_acts[k].kind;
    acts[i].alpha = k_rnn_acts[k].alpha;
    acts[i].beta = k_rnn_acts[k].beta;
    if (k_rnn_acts[k].n_params >= 1 && ia < na) acts[i].alpha = al[ia++];
    if (k_rnn_acts[k].n_params >= 2 && ib < nb) acts[i].beta = be[ib++];
  }
  return NULL;
}

static const dml_kval_t *rnn_act(dml_kpool_t *p, const rnn_act_t *a,
                                 const dml_kval_t *x) {
  /* Tanh, Sigmoid and Relu as the formula table's (ew_ops.def) Tanh,
   * Sigmoid and Relu: the renderers' tanh is not the table's (lavapipe's
   * turns a NaN into +-1, so an LSTM's NaN cell state gave h = o * tanh(c)
   * = 0 where the CPU has NaN), and a max(0, x) keeps neither -0 nor NaN */
  if (a->kind == RA_RELU) return dml_kv_ewn(p, DML_OP_RELU, x);
  if (a->kind == RA_TANH) return dml_kv_ewn(p, DML_OP_TANH, x);
  if (a->kind == RA_SIGMOID) return dml_kv_ewn(p, DML_OP_SIGMOID, x);
  /* the other activations of the formula table, alpha and beta its A0 and
   * A1 */
  static const dml_op_t ew[RA_SOFTPLUS + 1] = {
      [RA_LEAKY_RELU] = DML_OP_LEAKY_RELU,
      [RA_THRESHOLDED_RELU] = DML_OP_THRESHOLDED_RELU,
      [RA_HARD_SIGMOID] = DML_OP_HARD_SIGMOID,
      [RA_ELU] = DML_OP_ELU,
      [RA_SOFTSIGN] = DML_OP_SOFTSIGN,
      [RA_SOFTPLUS] = DML_OP_SOFTPLUS};
  if (a->kind >= 0 && a->kind <= RA_SOFTPLUS && ew[a->kind]) {
    const double av[DML_EW_MAX_ATTRS] = {a->alpha, a->beta, 0};
    return dml_kv_ew(p, ew[a->kind], x, av);
  }
  const dml_kval_t *al = dml_kv_const(p, (float)a->alpha),
                   *be = dml_kv_const(p, (float)a->beta);
  switch (a->kind) {
    case RA_AFFINE: return dml_kv_fn(p, DML_KF_ADD, dml_kv_fn(p, DML_KF_MUL, al, x), be);
    case RA_SCALED_TANH:
      return dml_kv_fn(p, DML_KF_MUL, al,
                       dml_kv_ewn(p, DML_OP_TANH, dml_kv_fn(p, DML_KF_MUL, be, x)));
    default: return x;
  }
}

#define RNN_MAX_H 256

/* RNN, GRU and LSTM (ONNX opsets 7 and 14; runtime/cpu/cpu_rnn.c's
 * semantics: directions forward/reverse/bidirectional, every activation
 * with activation_alpha/beta, clip, linear_before_reset, input_forget,
 * layouts 0 and 1, optional B, sequence_lens (clamped to [0, seq]; the CPU
 * rejects lengths outside), initial_h, initial_c, P and optional Y, Y_h,
 * Y_c), f32 with hidden_size <= 256: one kernel, one workgroup per
 * (direction, batch row) looping over the time steps; invocation j owns
 * hidden unit j: it computes its gates from X_t and the previous state, held
 * in a workgroup-shared tile (GRU without linear_before_reset also shares
 * r (.) h_{t-1} in a second tile), with barriers between reading the old
 * state and writing the new one. The cell state (LSTM) stays in a
 * register. Sums in f32 (the CPU's in double). */
void dml_ksched_rnn_emit(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  int kind = n->op == DML_OP_RNN ? 0 : n->op == DML_OP_GRU ? 1 : 2;
  int G = kind == 0 ? 1 : kind == 1 ? 3 : 4, n_acts = kind == 0 ? 1 : kind == 1 ? 2 : 3;
#define IN(k) (n->n_inputs > (k) ? val(s, n->inputs[k]) : NULL)
#define OUTV(k) (n->n_outputs > (k) ? val(s, n->outputs[k]) : NULL)
  const dml_pkg_value_t *x = IN(0), *w = IN(1), *r = IN(2), *bt = IN(3), *sl = IN(4),
                        *h0 = IN(5), *c0 = kind == 2 ? IN(6) : NULL,
                        *pp = kind == 2 ? IN(7) : NULL;
  const dml_pkg_value_t *y = OUTV(0), *yh = OUTV(1), *yc = kind == 2 ? OUTV(2) : NULL;
#undef IN
#undef OUTV
  const char *why = NULL;
  const char *dir = dml_attr_string(n->attrs, n->n_attrs, "direction", "forward");
  int dirs = 1, reverse_only = 0;
  if (!strcmp(dir, "reverse"))
    reverse_only = 1;
  else if (!strcmp(dir, "bidirectional"))
    dirs = 2;
  else if (strcmp(dir, "forward"))
    why = "direction is not forward, reverse or bidirectional";
  int64_t layout = dml_attr_int(n->attrs, n->n_attrs, "layout", 0);
  int lbr = dml_attr_int(n->attrs, n->n_attrs, "linear_before_reset", 0) != 0;
  int input_forget = dml_attr_int(n->attrs, n->n_attrs, "input_forget", 0) != 0;
  int has_clip = dml_attr_find(n->attrs, n->n_attrs, "clip") != NULL;
  double clip = dml_attr_float(n->attrs, n->n_attrs, "clip", 0.0);
  rnn_act_t acts[6];
  if (!why && layout != 0 && layout != 1) why = "layout must be 0 or 1";
  if (!why && has_clip && !(clip > 0)) why = "clip must be > 0";
  if (!why) why = rnn_read_acts(n, kind, n_acts, dirs, acts);
  const dml_pkg_value_t *all[10] = {x, w, r, bt, h0, c0, pp, y, yh, yc};
  if (!why && (!x || !w || !r)) why = "absent X, W or R";
  for (int i = 0; !why && i < 10; i++)
    if (all[i] && (all[i]->type.dtype != DML_DTYPE_F32 || all[i]->offset % 4))
      why = "only f32 is emitted";
  if (!why && sl &&
      ((sl->type.dtype != DML_DTYPE_I32 && sl->type.dtype != DML_DTYPE_I64) ||
       !typed_ok(sl)))
    why = "sequence_lens must be i32 or i64";
  if (!why && (x->type.rank != 3 || w->type.rank != 3 || r->type.rank != 3))
    why = "X, W and R must have rank 3";
  for (int i = 1; !why && i < 10; i++)
    if (all[i] && data_dependent(s, &all[i]->type))
      why = "dims computed from run-time data";
  if (!why && data_dependent(s, &x->type)) why = "dims computed from run-time data";
  dml_dim_t Bd = {0, -1}, Sd = {0, -1};
  int64_t I = 0, H = 0;
  if (!why) {
    Sd = x->type.dims[layout ? 1 : 0];
    Bd = x->type.dims[layout ? 0 : 1];
    I = x->type.dims[2].value;
    H = r->type.dims[2].value;
    if (Sd.sym >= 0 || x->type.dims[2].sym >= 0 || r->type.dims[2].sym >= 0)
      why = "a symbolic sequence length, input or hidden size";
    else if (H < 1 || H > RNN_MAX_H)
      why = "hidden_size must be 1 .. 256";
    else if (w->type.dims[0].value != dirs || w->type.dims[1].value != G * H ||
             w->type.dims[2].value != I || r->type.dims[0].value != dirs ||
             r->type.dims[1].value != G * H)
      why = "W or R of the wrong shape";
    else if (bt && (bt->type.rank != 2 || bt->type.dims[1].value != 2 * G * H))
      why = "B of the wrong shape";
    else if (pp && (pp->type.rank != 2 || pp->type.dims[1].value != 3 * H))
      why = "P of the wrong shape";
  }
  for (int i = 7; !why && i < 10; i++)
    for (int k = 0; !why && all[i] && k < 7; k++)
      if ((all[k] && overlap(all[i], all[k])) || (k == 0 && sl && overlap(all[i], sl)))
        why = "its result overlaps its operands in the memory plan";
  if (!why && ((y && yh && overlap(y, yh)) || (y && yc && overlap(y, yc)) ||
               (yh && yc && overlap(yh, yc))))
    why = "its results overlap in the memory plan";
  if (why) {
    dml_ksched_unsupported(s, node, why);
    return;
  }
  dml_kernel_t *K = dml_ksched_kernel(s, DML_KK_NORM, node);
  if (!K) return;
  int64_t L = (H + 31) / 32 * 32, S = Sd.value;
  K->local[0] = (uint32_t)L;
  dml_klin_t items = {L * dirs * Bd.value, Bd.sym, 0, 0}; /* B = value (x sym) */
  K->items[0] = items;
  K->n_tiles = kind == 1 && !lbr ? 2 : 1;
  K->tile_elems[0] = (uint32_t)L;
  if (K->n_tiles == 2) K->tile_elems[1] = (uint32_t)L;
  /* registers: 0 cell, 1..4 gate sums, 5 GRU's r(.)(h R_h + Rb_h) part,
   * 6 new state, 7 sequence length (index value) */
  K->n_regs = 8;
  const dml_kidx_t *j = dml_ki_var(p, DML_KVAR_LID_X), *wg = dml_ki_var(p, DML_KVAR_WG_X);
  const dml_kidx_t *B = dim_idx(s, Bd), *Hx = dml_ki_const(p, H),
                   *Ix = dml_ki_const(p, I), *Sx = dml_ki_const(p, S),
                   *ND = dml_ki_const(p, dirs);
  const dml_kidx_t *b = dml_ki_bin(p, DML_KI_MOD, wg, B),
                   *d = dml_ki_bin(p, DML_KI_DIV, wg, B);
  int32_t vstep = DML_KVAR_FIRST_LOOP, vi = DML_KVAR_FIRST_LOOP + 1;
  const dml_kidx_t *step = dml_ki_var(p, vstep), *iv = dml_ki_var(p, vi);
#define R_KA(a, c) dml_ki_bin(p, DML_KI_ADD, a, c)
#define R_KM(a, c) dml_ki_bin(p, DML_KI_MUL, a, c)
#define R_F2(f, a, c) dml_kv_fn(p, DML_KF_##f, a, c)
#define R_KC(v) dml_kv_const(p, (float)(v))
  /* state index of (b, unit u) */
  const dml_kidx_t *sidx_b =
      layout ? R_KM(R_KA(R_KM(b, ND), d), Hx) : R_KM(R_KA(R_KM(d, B), b), Hx); /* + u */
  const dml_kval_t *lenv = NULL;
  if (sl) {
    dml_kdtype_t lt = kdt(sl);
    lenv = dml_kv_fn(p, DML_KF_MAX,
                     dml_kv_fn(p, DML_KF_MIN, load_at(s, sl, b), dml_kv_iconst(p, lt, S)),
                     dml_kv_zero(p, lt));
  }
  const dml_kidx_t *len = sl ? dml_ki_val(p, dml_kv_reg_t(p, 7, kdt(sl))) : Sx;
  /* t = step (forward), len - 1 - step (reverse), by d when bidirectional */
  const dml_kidx_t *back = dml_ki_bin(p, DML_KI_SUB, len, R_KA(step, dml_ki_const(p, 1)));
  const dml_kidx_t *t =
      reverse_only ? back
      : dirs == 2  ? R_KA(R_KM(dml_ki_bin(p, DML_KI_SUB, dml_ki_const(p, 1), d), step),
                          R_KM(d, back))
                   : step;
  const dml_kidx_t *xrow =
      layout ? R_KM(R_KA(R_KM(b, Sx), t), Ix) : R_KM(R_KA(R_KM(t, B), b), Ix);
  const dml_kidx_t *yrow = NULL; /* + j */
  if (y)
    yrow = layout ? R_KM(R_KA(R_KM(R_KA(R_KM(b, Sx), t), ND), d), Hx)
                  : R_KM(R_KA(R_KM(R_KA(R_KM(t, ND), d), B), b), Hx);
  const dml_kval_t *hprev = dml_kv_tile(p, 0, j);
  const dml_kval_t *cell = dml_kv_reg(p, 0), *hn = dml_kv_reg(p, 6);
  const rnn_act_t *f = &acts[0], *ga = &acts[n_acts > 1 ? 1 : 0],
                  *ha = &acts[n_acts > 2 ? 2 : 0];
  /* per direction: the activations of direction d (a select on d) */
  const rnn_act_t *f1 = dirs == 2 ? &acts[n_acts] : f;
  const rnn_act_t *ga1 = dirs == 2 ? &acts[n_acts + (n_acts > 1 ? 1 : 0)] : ga;
  const rnn_act_t *ha1 = dirs == 2 ? &acts[n_acts + (n_acts > 2 ? 2 : 0)] : ha;
  const dml_kval_t *isd1 = R_F2(GT, dml_kv_idx(p, DML_KT_F32, d), R_KC(0.5));
#define R_ACT(A, A1, v)                                                    \
  (dirs == 2 ? dml_kv_select(p, isd1, rnn_act(p, A1, v), rnn_act(p, A, v)) \
             : rnn_act(p, A, v))
#define R_CLIP(v) (has_clip ? R_F2(MIN, R_KC(clip), R_F2(MAX, R_KC(-clip), v)) : (v))
  const dml_kidx_t *woff = R_KM(d, dml_ki_const(p, G * H * I)),
                   *roff = R_KM(d, dml_ki_const(p, G * H * H)),
                   *boff = R_KM(d, dml_ki_const(p, 2 * G * H)),
                   *poff = R_KM(d, dml_ki_const(p, 3 * H));
  dml_kblock_t body = {0};
  for (uint32_t q = 0; q < 7; q++)
    dml_kblock_add(&body, assign(s, DML_KS_LET, q, R_KC(0)));
  dml_kblock_add(&body, assign(s, DML_KS_LET, 7, sl ? lenv : R_KC(0)));
  /* initial state; Y zeroed (steps past len stay 0) */
  {
    dml_kblock_t ini = {0};
    dml_kstmt_t *ts = dml_ks_new(p, DML_KS_TILE_STORE);
    if (ts) {
      ts->tile = 0;
      ts->idx = j;
      ts->val = h0 ? load_at(s, h0, R_KA(sidx_b, j)) : R_KC(0);
    }
    dml_kblock_add(&ini, ts);
    if (c0)
      dml_kblock_add(&ini, assign(s, DML_KS_SET, 0, load_at(s, c0, R_KA(sidx_b, j))));
    if (y) {
      const dml_kidx_t *yr0 = layout
                                  ? R_KM(R_KA(R_KM(R_KA(R_KM(b, Sx), step), ND), d), Hx)
                                  : R_KM(R_KA(R_KM(R_KA(R_KM(step, ND), d), B), b), Hx);
      dml_kblock_add(&ini, for_loop(s, vstep, Sx, store_at(s, y, R_KA(yr0, j), R_KC(0))));
    }
    dml_kblock_add(&body, if_lt(s, j, Hx, ini.first));
  }
  dml_kblock_add(&body, dml_ks_new(p, DML_KS_BARRIER));
  /* one step */
  dml_kblock_t st = {0}, g1 = {0};
  const dml_kval_t *xv = load_at(s, x, R_KA(xrow, iv));
  for (int g = 0; g < G; g++) {
    const dml_kidx_t *row = R_KA(dml_ki_const(p, g * H), j);
    uint32_t reg = 1 + (uint32_t)g;
    const dml_kval_t *acc = dml_kv_reg(p, reg);
    dml_kblock_add(
        &g1, assign(s, DML_KS_SET, reg, bt ? load_at(s, bt, R_KA(boff, row)) : R_KC(0)));
    dml_kblock_add(
        &g1,
        for_loop(s, vi, Ix,
                 assign(s, DML_KS_SET, reg,
                        R_F2(ADD, acc,
                             R_F2(MUL, xv,
                                  load_at(s, w, R_KA(woff, R_KA(R_KM(row, Ix), iv))))))));
    int gru_h = kind == 1 && g == 2;
    if (!gru_h || lbr) {
      uint32_t rr = gru_h ? 5 : reg;
      const dml_kval_t *racc = dml_kv_reg(p, rr);
      if (gru_h)
        dml_kblock_add(
            &g1, assign(s, DML_KS_SET, 5,
                        bt ? load_at(s, bt, R_KA(boff, R_KA(dml_ki_const(p, G * H), row)))
                           : R_KC(0)));
      else if (bt)
        dml_kblock_add(
            &g1,
            assign(s, DML_KS_SET, reg,
                   R_F2(ADD, acc,
                        load_at(s, bt, R_KA(boff, R_KA(dml_ki_const(p, G * H), row))))));
      dml_kblock_add(
          &g1,
          for_loop(
              s, vi, Hx,
              assign(s, DML_KS_SET, rr,
                     R_F2(ADD, racc,
                          R_F2(MUL, dml_kv_tile(p, 0, iv),
                               load_at(s, r, R_KA(roff, R_KA(R_KM(row, Hx), iv))))))));
    }
  }
  const dml_kval_t *a1 = dml_kv_reg(p, 1), *a2 = dml_kv_reg(p, 2), *a3 = dml_kv_reg(p, 3),
                   *a4 = dml_kv_reg(p, 4), *rh = dml_kv_reg(p, 5);
  dml_kblock_t g2 = {0};
  if (kind == 0) {
    dml_kblock_add(&g1, assign(s, DML_KS_SET, 6, R_ACT(f, f1, R_CLIP(a1))));
  } else if (kind == 1) {
    /* z, r */
    dml_kblock_add(&g1, assign(s, DML_KS_SET, 1, R_ACT(f, f1, R_CLIP(a1))));
    dml_kblock_add(&g1, assign(s, DML_KS_SET, 2, R_ACT(f, f1, R_CLIP(a2))));
    const dml_kval_t *v;
    if (lbr) {
      v = R_F2(ADD, a3, R_F2(MUL, a2, rh));
    } else {
      dml_kstmt_t *ts = dml_ks_new(p, DML_KS_TILE_STORE);
      if (ts) {
        ts->tile = 1;
        ts->idx = j;
        ts->val = R_F2(MUL, a2, hprev);
      }
      dml_kblock_add(&g1, ts);
      const dml_kidx_t *hrow = R_KA(dml_ki_const(p, 2 * H), j);
      dml_kblock_add(
          &g2, assign(s, DML_KS_SET, 5,
                      bt ? load_at(s, bt, R_KA(boff, R_KA(dml_ki_const(p, G * H), hrow)))
                         : R_KC(0)));
      dml_kblock_add(
          &g2,
          for_loop(
              s, vi, Hx,
              assign(s, DML_KS_SET, 5,
                     R_F2(ADD, rh,
                          R_F2(MUL, dml_kv_tile(p, 1, iv),
                               load_at(s, r, R_KA(roff, R_KA(R_KM(hrow, Hx), iv))))))));
      v = R_F2(ADD, a3, rh);
    }
    const dml_kval_t *ht = R_ACT(ga, ga1, R_CLIP(v));
    dml_kblock_add(
        lbr ? &g1 : &g2,
        assign(s, DML_KS_SET, 6,
               R_F2(ADD, R_F2(MUL, R_F2(SUB, R_KC(1), a1), ht), R_F2(MUL, a1, hprev))));
  } else {
    /* gates i, o, f, c (registers 1..4); P = [Pi, Po, Pf] */
    const dml_kval_t *pi = pp ? load_at(s, pp, R_KA(poff, j)) : NULL,
                     *po = pp ? load_at(s, pp, R_KA(poff, R_KA(Hx, j))) : NULL,
                     *pf =
                         pp ? load_at(s, pp, R_KA(poff, R_KA(dml_ki_const(p, 2 * H), j)))
                            : NULL;
    const dml_kval_t *ig =
        R_ACT(f, f1, R_CLIP(pp ? R_F2(ADD, a1, R_F2(MUL, pi, cell)) : a1));
    dml_kblock_add(&g1, assign(s, DML_KS_SET, 1, ig));
    const dml_kval_t *fv =
        input_forget ? R_F2(SUB, R_KC(1), a1)
                     : R_ACT(f, f1, R_CLIP(pp ? R_F2(ADD, a3, R_F2(MUL, pf, cell)) : a3));
    const dml_kval_t *cv = R_ACT(ga, ga1, R_CLIP(a4));
    dml_kblock_add(
        &g1, assign(s, DML_KS_SET, 0, R_F2(ADD, R_F2(MUL, fv, cell), R_F2(MUL, a1, cv))));
    const dml_kval_t *ov =
        R_ACT(f, f1, R_CLIP(pp ? R_F2(ADD, a2, R_F2(MUL, po, cell)) : a2));
    dml_kblock_add(&g1, assign(s, DML_KS_SET, 6, R_F2(MUL, ov, R_ACT(ha, ha1, cell))));
  }
  dml_kblock_add(&st, if_lt(s, j, Hx, g1.first));
  if (g2.first) {
    dml_kblock_add(&st, dml_ks_new(p, DML_KS_BARRIER));
    dml_kblock_add(&st, if_lt(s, j, Hx, g2.first));
  }
  dml_kblock_add(&st, dml_ks_new(p, DML_KS_BARRIER));
  {
    dml_kblock_t wr = {0};
    dml_kstmt_t *ts = dml_ks_new(p, DML_KS_TILE_STORE);
    if (ts) {
      ts->tile = 0;
      ts->idx = j;
      ts->val = hn;
    }
    dml_kblock_add(&wr, ts);
    if (y) dml_kblock_add(&wr, store_at(s, y, R_KA(yrow, j), hn));
    dml_kblock_add(&st, if_lt(s, j, Hx, wr.first));
  }
  dml_kblock_add(&st, dml_ks_new(p, DML_KS_BARRIER));
  dml_kblock_add(&body, for_loop(s, vstep, Sx, if_lt(s, step, len, st.first)));
  {
    dml_kblock_t fin = {0};
    if (yh) dml_kblock_add(&fin, store_at(s, yh, R_KA(sidx_b, j), hprev));
    if (yc) dml_kblock_add(&fin, store_at(s, yc, R_KA(sidx_b, j), cell));
    if (fin.first) dml_kblock_add(&body, if_lt(s, j, Hx, fin.first));
  }
  K->body = body.first;
  dml_klin_t rows = {dirs * Bd.value, Bd.sym, 0, 0};
  lin_add(&K->flops, rows, 2 * S * G * H * (I + H) + 10 * S * H);
  lin_add(&K->bytes, rows, 4 * (S * I + S * H + G * H * (I + H)));
#undef R_KA
#undef R_KM
#undef R_F2
#undef R_KC
#undef R_ACT
#undef R_CLIP
}
