/*
 * autodiff.c — reverse-mode automatic differentiation (dml_autodiff.h).
 *
 * One reverse sweep over the function's nodes. Each VJP rule below reads
 * the gradient g of its node's first output (and the node's inputs and
 * outputs) and emits IR nodes computing the gradients of its inputs; a
 * value used several times gets the sum of its contributions. The rules
 * follow from the ops' ONNX definitions (operator spec, opset 17); where a
 * rule is not a textbook derivative it says why. Broadcasting inputs
 * (numpy rules, ONNX "Broadcasting in ONNX") get the gradient summed over
 * the broadcast axes (unbroadcast).
 *
 * New nodes are typed as they are created (dml_ir_infer_node), so rules can
 * use the types of what they built. Shapes that rules need as tensors come
 * from Shape(x) nodes, whose symbolic contents shape inference tracks, so a
 * symbolic batch dim needs nothing special.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_autodiff.h"
#include "dml_ir_infer.h"

#define OP "autodiff"

typedef dml_ir_value_t V;

typedef struct ad {
  dml_ir_module_t *m;
  dml_ir_function_t *f;
  dml_status_t st;      /* first error; later emits are no-ops */
  uint32_t n_ids;       /* ids below this existed before the sweep */
  V **grad;             /* by value id */
  uint8_t *needs;       /* by value id: on a path from a wrt value */
  const char *name;     /* name for the nodes being emitted */
  dml_status_t missing; /* nodes without a rule (UNIMPLEMENTED), listed */
  char missing_ops[256];
} ad_t;

static dml_status_t oom(void) {
  return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
}

/* ---- emitting nodes ---------------------------------------------------- */

/* A new node at the end of the function (NULL after an error). */
static dml_ir_node_t *mk(ad_t *a, dml_op_t op, uint32_t n_in, V *const *ins,
                         uint32_t n_out) {
  if (a->st) return NULL;
  for (uint32_t i = 0; i < n_in; i++)
    if (!ins[i] && (int)i < dml_op_info(op)->min_inputs) {
      if (!a->st)
        a->st = dml_status_make(DML_STATUS_INTERNAL, OP, "%s: operand %u missing",
                                dml_op_name(op), i);
      return NULL;
    }
  dml_ir_node_t *n = NULL;
  a->st = dml_ir_node_create(a->f, op, a->name, n_in, ins, n_out, NULL, &n);
  return a->st ? NULL : n;
}

/* Types the node and returns its first output. */
static V *fin(ad_t *a, dml_ir_node_t *n) {
  if (a->st || !n) return NULL;
  a->st = dml_ir_infer_node(a->m, n);
  return a->st ? NULL : n->outputs[0];
}

static V *op1(ad_t *a, dml_op_t op, V *x) {
  if (!x) return NULL;
  return fin(a, mk(a, op, 1, &x, 1));
}

static V *op2(ad_t *a, dml_op_t op, V *x, V *y) {
  if (!x || !y) return NULL;
  V *in[2] = {x, y};
  return fin(a, mk(a, op, 2, in, 1));
}

static V *op3(ad_t *a, dml_op_t op, V *x, V *y, V *z) {
  if (!x || !y || !z) return NULL;
  V *in[3] = {x, y, z};
  return fin(a, mk(a, op, 3, in, 1));
}

static void set_int(ad_t *a, dml_ir_node_t *n, const char *k, int64_t v) {
  if (!a->st && n) a->st = dml_ir_node_set_attr_int(n, k, v);
}
static void set_ints(ad_t *a, dml_ir_node_t *n, const char *k, const int64_t *v,
                     size_t cnt) {
  if (!a->st && n) a->st = dml_ir_node_set_attr_ints(n, k, v, cnt);
}
static void set_float(ad_t *a, dml_ir_node_t *n, const char *k, double v) {
  if (!a->st && n) a->st = dml_ir_node_set_attr_float(n, k, v);
}
static void copy_attr(ad_t *a, dml_ir_node_t *n, const dml_ir_node_t *from,
                      const char *k) {
  const dml_attr_t *at = dml_ir_node_attr(from, k);
  if (!a->st && n && at) a->st = dml_ir_node_set_attr(n, at);
}

/* Scalar constant of float dtype `dt` (rank 0). */
static V *cst(ad_t *a, dml_dtype_t dt, double v) {
  if (a->st) return NULL;
  uint8_t buf[8];
  dml_store_f64(dt, buf, 0, v);
  dml_type_t t = dml_type_static(dt, 0, NULL);
  V *g = NULL;
  a->st = dml_ir_module_add_constant(a->m, "ad.c", &t, buf, dml_dtype_size(dt), &g);
  return g;
}

/* 1-D i64 constant. */
static V *cst_i64(ad_t *a, const int64_t *v, int64_t n) {
  if (a->st) return NULL;
  dml_type_t t = dml_type_static(DML_DTYPE_I64, 1, &n);
  V *g = NULL;
  a->st =
      dml_ir_module_add_constant(a->m, "ad.i", &t, v, (size_t)n * sizeof(int64_t), &g);
  return g;
}

static V *shape_of(ad_t *a, V *x) {
  return op1(a, DML_OP_SHAPE, x);
}

static int dim_is1(dml_dim_t p) {
  return p.sym < 0 && p.value == 1;
}

/* g reshaped to x's shape (a no-op when the types agree). */
static V *reshape_like(ad_t *a, V *g, V *x) {
  if (!g || !x) return NULL;
  if (dml_type_equal(&g->type, &x->type)) return g;
  return op2(a, DML_OP_RESHAPE, g, shape_of(a, x));
}

/* ReduceSum over `axes` (attribute form). */
static V *reduce_sum(ad_t *a, V *x, const int64_t *axes, size_t n, int keepdims) {
  if (!x) return NULL;
  dml_ir_node_t *nd = mk(a, DML_OP_REDUCE_SUM, 1, &x, 1);
  set_ints(a, nd, "axes", axes, n);
  set_int(a, nd, "keepdims", keepdims);
  return fin(a, nd);
}

/* The gradient g of a broadcast result, summed to x's shape. */
static V *unbroadcast(ad_t *a, V *g, V *x) {
  if (!g || !x) return NULL;
  const dml_type_t *tg = &g->type, *tx = &x->type;
  if (dml_type_equal(tg, tx)) return g;
  int64_t axes[DML_MAX_RANK];
  size_t n = 0;
  int32_t lead = tg->rank - tx->rank;
  for (int32_t i = 0; i < tg->rank; i++) {
    int32_t j = i - lead;
    if (j < 0 || (dim_is1(tx->dims[j]) && !dim_is1(tg->dims[i]))) axes[n++] = i;
  }
  V *s = n ? reduce_sum(a, g, axes, n, 1) : g;
  return reshape_like(a, s, x);
}

/* Mask (x > 0) as x's dtype. */
static V *cast_to(ad_t *a, V *x, dml_dtype_t dt) {
  if (!x) return NULL;
  dml_ir_node_t *n = mk(a, DML_OP_CAST, 1, &x, 1);
  set_int(a, n, "to", dml_dtype_onnx_code(dt));
  return fin(a, n);
}

static int64_t attr_i(const dml_ir_node_t *n, const char *k, int64_t dflt) {
  const dml_attr_t *at = dml_ir_node_attr(n, k);
  return at && at->kind == DML_ATTR_INT ? at->i : dflt;
}
static double attr_f(const dml_ir_node_t *n, const char *k, double dflt) {
  const dml_attr_t *at = dml_ir_node_attr(n, k);
  return at && at->kind == DML_ATTR_FLOAT ? at->f : dflt;
}
static const int64_t *attr_is(const dml_ir_node_t *n, const char *k, size_t *cnt) {
  const dml_attr_t *at = dml_ir_node_attr(n, k);
  *cnt = at && at->kind == DML_ATTR_INTS ? at->n : 0;
  return at && at->kind == DML_ATTR_INTS ? at->ints : NULL;
}

/* The elements of an integer constant global (NULL if not one). */
static const V *const_int(const V *v, int64_t *out, size_t cap, size_t *cnt) {
  if (!v || v->kind != DML_IR_VALUE_GLOBAL || !v->data ||
      !dml_dtype_is_int(v->type.dtype) ||
      (v->global_flags & (DML_IR_GLOBAL_PARAM | DML_IR_GLOBAL_STATE)))
    return NULL;
  size_t n = v->data_bytes / dml_dtype_size(v->type.dtype);
  if (n > cap) return NULL;
  for (size_t i = 0; i < n; i++) out[i] = dml_load_i64(v->type.dtype, v->data, i);
  *cnt = n;
  return v;
}

/* The first element of a float or int constant global as double. */
static int const_scalar(const V *v, double *out) {
  if (!v || v->kind != DML_IR_VALUE_GLOBAL || !v->data || v->data_bytes == 0 ||
      (v->global_flags & (DML_IR_GLOBAL_PARAM | DML_IR_GLOBAL_STATE)))
    return 0;
  *out = dml_load_f64(v->type.dtype, v->data, 0);
  return 1;
}

/* ---- gradient bookkeeping ----------------------------------------------- */

static int needs(const ad_t *a, const V *v) {
  return v && v->id < a->n_ids && a->needs[v->id];
}

/* Adds contribution g to v's gradient. */
static void acc(ad_t *a, V *v, V *g) {
  if (a->st || !g || !needs(a, v)) return;
  V **slot = &a->grad[v->id];
  if (!dml_type_equal(&g->type, &v->type)) {
    char tg[160], tv[160];
    a->st = dml_status_make(
        DML_STATUS_INTERNAL, OP, "gradient of '%s' has type %s, expected %s",
        v->name ? v->name : "", dml_ir_type_str(a->m, &g->type, tg, 160),
        dml_ir_type_str(a->m, &v->type, tv, 160));
    return;
  }
  *slot = *slot ? op2(a, DML_OP_ADD, *slot, g) : g;
}

static void unsupported(ad_t *a, const dml_ir_node_t *n, const char *why) {
  const char *on = dml_op_name(n->op);
  size_t k = strlen(a->missing_ops);
  char needle[80];
  snprintf(needle, sizeof needle, "%s%s", k ? ", " : "", on);
  if (!strstr(a->missing_ops, on) && k + strlen(needle) + 1 < sizeof a->missing_ops)
    memcpy(a->missing_ops + k, needle, strlen(needle) + 1);
  if (!a->missing) a->missing = dml_status_make(DML_STATUS_UNIMPLEMENTED, OP, "%s", "");
  a->missing = dml_status_detail(a->missing, "node '%s' (%s): %s", n->name ? n->name : "",
                                 on, why);
}

/* ---- rules ---------------------------------------------------------------- */

/* Transpose of the last two dims. */
static V *transpose_last2(ad_t *a, V *x) {
  if (!x) return NULL;
  int32_t r = x->type.rank;
  int64_t perm[DML_MAX_RANK];
  for (int32_t i = 0; i < r; i++) perm[i] = i;
  perm[r - 2] = r - 1;
  perm[r - 1] = r - 2;
  dml_ir_node_t *n = mk(a, DML_OP_TRANSPOSE, 1, &x, 1);
  set_ints(a, n, "perm", perm, (size_t)r);
  return fin(a, n);
}

static V *gemm(ad_t *a, V *x, V *y, double alpha, int ta, int tb) {
  if (!x || !y) return NULL;
  V *in[2] = {x, y};
  dml_ir_node_t *n = mk(a, DML_OP_GEMM, 2, in, 1);
  if (alpha != 1.0) set_float(a, n, "alpha", alpha);
  if (ta) set_int(a, n, "transA", 1);
  if (tb) set_int(a, n, "transB", 1);
  return fin(a, n);
}

/* Gemm (ONNX 13): Y = alpha * op(A) op(B) + beta * C. */
static void vjp_gemm(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *A = n->inputs[0], *B = n->inputs[1], *C = n->n_inputs > 2 ? n->inputs[2] : NULL;
  double alpha = attr_f(n, "alpha", 1.0), beta = attr_f(n, "beta", 1.0);
  int ta = attr_i(n, "transA", 0) != 0, tb = attr_i(n, "transB", 0) != 0;
  if (needs(a, A))
    acc(a, A, ta ? gemm(a, B, g, alpha, tb, 1) : gemm(a, g, B, alpha, 0, !tb));
  if (needs(a, B))
    acc(a, B, tb ? gemm(a, g, A, alpha, 1, ta) : gemm(a, A, g, alpha, !ta, 0));
  if (C && needs(a, C)) {
    V *gc = beta == 1.0 ? g : op2(a, DML_OP_MUL, g, cst(a, g->type.dtype, beta));
    acc(a, C, unbroadcast(a, gc, C));
  }
}

/* MatMul (numpy matmul): dA = g B^T, dB = A^T g, summed over broadcast
 * batch dims. 1-D operands are not handled. */
static void vjp_matmul(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *A = n->inputs[0], *B = n->inputs[1];
  if (A->type.rank < 2 || B->type.rank < 2) {
    unsupported(a, n, "1-D MatMul operands have no VJP rule yet");
    return;
  }
  if (needs(a, A))
    acc(a, A, unbroadcast(a, op2(a, DML_OP_MATMUL, g, transpose_last2(a, B)), A));
  if (needs(a, B))
    acc(a, B, unbroadcast(a, op2(a, DML_OP_MATMUL, transpose_last2(a, A), g), B));
}

/* Conv (ONNX 11): dX is ConvTranspose of g with W (same strides, dilations,
 * group; pads and output_padding chosen so the result has X's spatial
 * size), dW is ConvWeightGrad(g, X), dB sums g over N and space. */
static void vjp_conv(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *X = n->inputs[0], *W = n->inputs[1], *B = n->n_inputs > 2 ? n->inputs[2] : NULL;
  V *Y = n->outputs[0];
  int32_t r = X->type.rank - 2;
  if (needs(a, X)) {
    size_t ns, nd, np;
    const int64_t *st = attr_is(n, "strides", &ns), *dl = attr_is(n, "dilations", &nd);
    const int64_t *pads = attr_is(n, "pads", &np);
    const dml_attr_t *ap = dml_ir_node_attr(n, "auto_pad");
    const char *autopad = ap && ap->kind == DML_ATTR_STRING ? ap->s : "NOTSET";
    int64_t pb[DML_MAX_RANK], pe[DML_MAX_RANK], op[DML_MAX_RANK], s[DML_MAX_RANK],
        d[DML_MAX_RANK], k[DML_MAX_RANK];
    for (int32_t i = 0; i < r; i++) {
      dml_dim_t in = X->type.dims[2 + i], out = Y->type.dims[2 + i],
                kd = W->type.dims[2 + i];
      if (in.sym >= 0 || out.sym >= 0 || kd.sym >= 0) {
        unsupported(a, n, "symbolic spatial dims");
        return;
      }
      s[i] = st && ns == (size_t)r ? st[i] : 1;
      d[i] = dl && nd == (size_t)r ? dl[i] : 1;
      k[i] = kd.value;
      int64_t ek = (k[i] - 1) * d[i] + 1;
      if (!strcmp(autopad, "SAME_UPPER") || !strcmp(autopad, "SAME_LOWER")) {
        int64_t total = (out.value - 1) * s[i] + ek - in.value;
        if (total < 0) total = 0;
        pb[i] = !strcmp(autopad, "SAME_UPPER") ? total / 2 : total - total / 2;
      } else if (!strcmp(autopad, "VALID")) {
        pb[i] = 0;
      } else {
        pb[i] = pads && np == 2 * (size_t)r ? pads[i] : 0;
      }
      int64_t full = s[i] * (out.value - 1) + ek;
      pe[i] = full - pb[i] - in.value;
      if (pe[i] < 0) pe[i] = 0;
      op[i] = in.value + pb[i] + pe[i] - full;
    }
    int64_t pads2[2 * DML_MAX_RANK];
    for (int32_t i = 0; i < r; i++) pads2[i] = pb[i], pads2[r + i] = pe[i];
    V *in[2] = {g, W};
    dml_ir_node_t *t = mk(a, DML_OP_CONV_TRANSPOSE, 2, in, 1);
    set_ints(a, t, "strides", s, (size_t)r);
    set_ints(a, t, "dilations", d, (size_t)r);
    set_ints(a, t, "kernel_shape", k, (size_t)r);
    set_ints(a, t, "pads", pads2, 2 * (size_t)r);
    set_ints(a, t, "output_padding", op, (size_t)r);
    copy_attr(a, t, n, "group");
    acc(a, X, fin(a, t));
  }
  if (needs(a, W)) {
    V *in[2] = {g, X};
    dml_ir_node_t *t = mk(a, DML_OP_CONV_WEIGHT_GRAD, 2, in, 1);
    int64_t k[DML_MAX_RANK];
    for (int32_t i = 0; i < r; i++) k[i] = W->type.dims[2 + i].value;
    set_ints(a, t, "kernel_shape", k, (size_t)r);
    static const char *const keys[] = {"strides", "pads", "dilations", "group",
                                       "auto_pad"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) copy_attr(a, t, n, keys[i]);
    acc(a, W, fin(a, t));
  }
  if (B && needs(a, B)) {
    int64_t axes[DML_MAX_RANK];
    size_t na = 0;
    axes[na++] = 0;
    for (int32_t i = 0; i < r; i++) axes[na++] = 2 + i;
    acc(a, B, reduce_sum(a, g, axes, na, 0));
  }
}

static void vjp_pool(ad_t *a, const dml_ir_node_t *n, V *g, dml_op_t grad_op) {
  V *X = n->inputs[0];
  if (!needs(a, X)) return;
  V *in[2] = {g, X};
  dml_ir_node_t *t = mk(a, grad_op, 2, in, 1);
  static const char *const keys[] = {"kernel_shape",     "strides",   "pads",
                                     "dilations",        "ceil_mode", "auto_pad",
                                     "count_include_pad"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) copy_attr(a, t, n, keys[i]);
  acc(a, X, fin(a, t));
}

/* Normalized reduction axes of node n over x (all when none given).
 * Returns 0 when the axes are not constant. */
static int reduce_axes(const dml_ir_node_t *n, const V *x, int64_t *axes, size_t *na) {
  int64_t buf[DML_MAX_RANK];
  size_t cnt = 0;
  int32_t r = x->type.rank;
  if (n->n_inputs > 1 && n->inputs[1]) {
    if (!const_int(n->inputs[1], buf, DML_MAX_RANK, &cnt)) return 0;
  } else {
    size_t k;
    const int64_t *at = attr_is(n, "axes", &k);
    if (at && k <= DML_MAX_RANK) {
      memcpy(buf, at, k * sizeof(int64_t));
      cnt = k;
    }
  }
  if (cnt == 0) {
    if (attr_i(n, "noop_with_empty_axes", 0)) {
      *na = 0;
      return 1;
    }
    for (int32_t i = 0; i < r; i++) buf[i] = i;
    cnt = (size_t)r;
  }
  for (size_t i = 0; i < cnt; i++) axes[i] = buf[i] < 0 ? buf[i] + r : buf[i];
  /* sorted, for Unsqueeze */
  for (size_t i = 1; i < cnt; i++)
    for (size_t j = i; j > 0 && axes[j - 1] > axes[j]; j--) {
      int64_t t = axes[j];
      axes[j] = axes[j - 1];
      axes[j - 1] = t;
    }
  *na = cnt;
  return 1;
}

/* ReduceSum / ReduceMean: g broadcast back over the reduced axes (and
 * divided by the number of reduced elements for the mean). */
static void vjp_reduce(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *X = n->inputs[0], *Y = n->outputs[0];
  if (!needs(a, X)) return;
  int64_t axes[DML_MAX_RANK];
  size_t na = 0;
  if (!reduce_axes(n, X, axes, &na)) {
    unsupported(a, n, "axes are not a constant");
    return;
  }
  V *gk = g;
  if (!attr_i(n, "keepdims", 1) && na) {
    V *in[2] = {g, cst_i64(a, axes, (int64_t)na)};
    gk = fin(a, mk(a, DML_OP_UNSQUEEZE, 2, in, 1));
  }
  V *ge = op2(a, DML_OP_EXPAND, gk, shape_of(a, X));
  if (n->op == DML_OP_REDUCE_MEAN && na) {
    /* count = numel(X) / numel(Y), symbolic dims included */
    V *cnt = op2(a, DML_OP_DIV, op1(a, DML_OP_SIZE, X), op1(a, DML_OP_SIZE, Y));
    ge = op2(a, DML_OP_DIV, ge, cast_to(a, cnt, X->type.dtype));
  }
  acc(a, X, ge);
}

static V *softmax_axis_sum(ad_t *a, V *x, int64_t axis) {
  return reduce_sum(a, x, &axis, 1, 1);
}

static void vjp_unary(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *x = n->inputs[0], *y = n->outputs[0];
  dml_dtype_t dt = x->type.dtype;
  V *r = NULL;
  switch (n->op) {
    case DML_OP_NEG: r = op1(a, DML_OP_NEG, g); break;
    case DML_OP_IDENTITY: r = g; break;
    case DML_OP_RELU:
      r = op2(a, DML_OP_MUL, g, cast_to(a, op2(a, DML_OP_GREATER, x, cst(a, dt, 0)), dt));
      break;
    case DML_OP_LEAKY_RELU: {
      V *slope = op3(a, DML_OP_WHERE, op2(a, DML_OP_GREATER, x, cst(a, dt, 0)),
                     cst(a, dt, 1), cst(a, dt, attr_f(n, "alpha", 0.01)));
      r = op2(a, DML_OP_MUL, g, slope);
      break;
    }
    case DML_OP_ELU: {
      /* x > 0: 1; else alpha * exp(x) = y + alpha */
      V *neg =
          op2(a, DML_OP_MUL, g, op2(a, DML_OP_ADD, y, cst(a, dt, attr_f(n, "alpha", 1))));
      r = op3(a, DML_OP_WHERE, op2(a, DML_OP_GREATER, x, cst(a, dt, 0)), g, neg);
      break;
    }
    case DML_OP_SIGMOID:
      r = op2(a, DML_OP_MUL, g,
              op2(a, DML_OP_MUL, y, op2(a, DML_OP_SUB, cst(a, dt, 1), y)));
      break;
    case DML_OP_TANH:
      r = op2(a, DML_OP_MUL, g,
              op2(a, DML_OP_SUB, cst(a, dt, 1), op2(a, DML_OP_MUL, y, y)));
      break;
    case DML_OP_EXP: r = op2(a, DML_OP_MUL, g, y); break;
    case DML_OP_LOG: r = op2(a, DML_OP_DIV, g, x); break;
    case DML_OP_SQRT:
      r = op2(a, DML_OP_DIV, op2(a, DML_OP_MUL, g, cst(a, dt, 0.5)), y);
      break;
    case DML_OP_RECIPROCAL:
      r = op1(a, DML_OP_NEG, op2(a, DML_OP_MUL, g, op2(a, DML_OP_MUL, y, y)));
      break;
    case DML_OP_ABS: r = op2(a, DML_OP_MUL, g, op1(a, DML_OP_SIGN, x)); break;
    case DML_OP_SOFTPLUS: r = op2(a, DML_OP_MUL, g, op1(a, DML_OP_SIGMOID, x)); break;
    case DML_OP_SIN: r = op2(a, DML_OP_MUL, g, op1(a, DML_OP_COS, x)); break;
    case DML_OP_COS:
      r = op1(a, DML_OP_NEG, op2(a, DML_OP_MUL, g, op1(a, DML_OP_SIN, x)));
      break;
    case DML_OP_ERF: {
      /* d erf(x)/dx = 2/sqrt(pi) exp(-x^2) */
      V *e = op1(a, DML_OP_EXP, op1(a, DML_OP_NEG, op2(a, DML_OP_MUL, x, x)));
      r = op2(a, DML_OP_MUL, g,
              op2(a, DML_OP_MUL, e, cst(a, dt, 1.1283791670955126) /* 2/sqrt(pi) */));
      break;
    }
    case DML_OP_CAST:
      if (!dml_dtype_is_float(dt)) return;
      r = g->type.dtype == dt ? g : cast_to(a, g, dt);
      break;
    case DML_OP_SOFTMAX: {
      int64_t axis = attr_i(n, "axis", -1);
      r = op2(a, DML_OP_MUL, y,
              op2(a, DML_OP_SUB, g, softmax_axis_sum(a, op2(a, DML_OP_MUL, g, y), axis)));
      break;
    }
    case DML_OP_LOG_SOFTMAX: {
      int64_t axis = attr_i(n, "axis", -1);
      r = op2(a, DML_OP_SUB, g,
              op2(a, DML_OP_MUL, op1(a, DML_OP_EXP, y), softmax_axis_sum(a, g, axis)));
      break;
    }
    case DML_OP_GLOBAL_AVERAGE_POOL: {
      double hw = 1;
      for (int32_t i = 2; i < x->type.rank; i++) {
        if (x->type.dims[i].sym >= 0) {
          unsupported(a, n, "symbolic spatial dims");
          return;
        }
        hw *= (double)x->type.dims[i].value;
      }
      r = op2(a, DML_OP_MUL, op2(a, DML_OP_EXPAND, g, shape_of(a, x)),
              cst(a, dt, 1.0 / hw));
      break;
    }
    case DML_OP_FLATTEN:
    case DML_OP_RESHAPE:
    case DML_OP_SQUEEZE:
    case DML_OP_UNSQUEEZE: r = reshape_like(a, g, x); break;
    case DML_OP_EXPAND: r = unbroadcast(a, g, x); break;
    case DML_OP_TRANSPOSE: {
      size_t np;
      const int64_t *perm = attr_is(n, "perm", &np);
      int32_t rk = x->type.rank;
      int64_t inv[DML_MAX_RANK];
      for (int32_t i = 0; i < rk; i++) {
        int64_t p = perm && np == (size_t)rk ? perm[i] : rk - 1 - i;
        inv[p] = i;
      }
      dml_ir_node_t *t = mk(a, DML_OP_TRANSPOSE, 1, &g, 1);
      set_ints(a, t, "perm", inv, (size_t)rk);
      r = fin(a, t);
      break;
    }
    case DML_OP_DROPOUT: {
      /* Training mode: y = x * mask / (1 - ratio); else the identity. */
      double ratio = 0.5, train = 0;
      if (n->n_inputs > 1 && n->inputs[1] && !const_scalar(n->inputs[1], &ratio)) {
        unsupported(a, n, "ratio is not a constant");
        return;
      }
      if (n->n_inputs > 2 && n->inputs[2] && !const_scalar(n->inputs[2], &train)) {
        unsupported(a, n, "training_mode is not a constant");
        return;
      }
      if (train == 0 || ratio == 0) {
        r = g;
        break;
      }
      if (n->n_outputs < 2) {
        unsupported(a, n, "training-mode Dropout without its mask output");
        return;
      }
      r = op2(a, DML_OP_MUL, op2(a, DML_OP_MUL, g, cast_to(a, n->outputs[1], dt)),
              cst(a, dt, 1.0 / (1.0 - ratio)));
      break;
    }
    default: unsupported(a, n, "no VJP rule"); return;
  }
  acc(a, x, r);
}

/* Slice (ONNX 13) with constant starts/ends/axes and steps 1: dX is g
 * padded with zeros back to X's shape. */
static void vjp_slice(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *X = n->inputs[0];
  if (!needs(a, X)) return;
  int32_t r = X->type.rank;
  int64_t st[DML_MAX_RANK], en[DML_MAX_RANK], ax[DML_MAX_RANK], sp[DML_MAX_RANK];
  size_t ns = 0, ne = 0, nax = 0, nsp = 0;
  if (!const_int(n->inputs[1], st, DML_MAX_RANK, &ns) ||
      !const_int(n->inputs[2], en, DML_MAX_RANK, &ne) || ns != ne ||
      (n->n_inputs > 3 && n->inputs[3] &&
       !const_int(n->inputs[3], ax, DML_MAX_RANK, &nax)) ||
      (n->n_inputs > 4 && n->inputs[4] &&
       !const_int(n->inputs[4], sp, DML_MAX_RANK, &nsp))) {
    unsupported(a, n, "starts/ends/axes/steps are not constants");
    return;
  }
  int64_t pads[2 * DML_MAX_RANK] = {0};
  for (size_t i = 0; i < ns; i++) {
    int64_t axis = nax ? ax[i] : (int64_t)i;
    if (axis < 0) axis += r;
    if ((nsp && sp[i] != 1) || axis < 0 || axis >= r || X->type.dims[axis].sym >= 0) {
      unsupported(a, n, "steps other than 1 or a symbolic sliced dim");
      return;
    }
    int64_t dim = X->type.dims[axis].value, s = st[i], e = en[i];
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    s = s < 0 ? 0 : s > dim ? dim : s;
    e = e < s ? s : e > dim ? dim : e;
    pads[axis] = s;
    pads[r + axis] = dim - e;
  }
  V *in[2] = {g, cst_i64(a, pads, 2 * r)};
  acc(a, X, fin(a, mk(a, DML_OP_PAD, 2, in, 1)));
}

/* Concat: each input's slice of g along the axis (static lengths). */
static void vjp_concat(ad_t *a, const dml_ir_node_t *n, V *g) {
  int32_t r = g->type.rank;
  int64_t axis = attr_i(n, "axis", 0);
  if (axis < 0) axis += r;
  int64_t off = 0;
  for (uint32_t i = 0; i < n->n_inputs; i++) {
    V *x = n->inputs[i];
    dml_dim_t d = x->type.dims[axis];
    if (d.sym >= 0) {
      unsupported(a, n, "symbolic length along the concat axis");
      return;
    }
    if (needs(a, x)) {
      int64_t s = off, e = off + d.value;
      V *in[4] = {g, cst_i64(a, &s, 1), cst_i64(a, &e, 1), cst_i64(a, &axis, 1)};
      acc(a, x, fin(a, mk(a, DML_OP_SLICE, 4, in, 1)));
    }
    off += d.value;
  }
}

/* Gather on axis 0 (embedding lookup): dData = ScatterND with reduction add
 * of g into zeros at the gathered rows (indices repeat). */
static void vjp_gather(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *D = n->inputs[0], *I = n->inputs[1];
  if (!needs(a, D)) return;
  if (attr_i(n, "axis", 0) != 0) {
    unsupported(a, n, "Gather on an axis other than 0");
    return;
  }
  dml_ir_node_t *z = mk(a, DML_OP_CONSTANT_OF_SHAPE, 1, (V *[]){shape_of(a, D)}, 1);
  if (z && !a->st) {
    dml_tensor_t t;
    memset(&t, 0, sizeof t);
    uint8_t zero[8] = {0};
    t.dtype = D->type.dtype;
    t.rank = 1;
    t.dims[0] = 1;
    t.data = zero;
    a->st = dml_ir_node_set_attr_tensor(z, "value", &t);
  }
  V *zeros = fin(a, z);
  int64_t last = -1;
  V *idx = op2(a, DML_OP_UNSQUEEZE, I, cst_i64(a, &last, 1));
  if (idx && idx->type.dtype != DML_DTYPE_I64) idx = cast_to(a, idx, DML_DTYPE_I64);
  V *in[3] = {zeros, idx, g};
  dml_ir_node_t *s = mk(a, DML_OP_SCATTER_ND, 3, in, 1);
  if (s && !a->st) a->st = dml_ir_node_set_attr_string(s, "reduction", "add");
  acc(a, D, fin(a, s));
}

static void vjp_binary(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *x = n->inputs[0], *y = n->inputs[1], *out = n->outputs[0];
  dml_dtype_t dt = out->type.dtype;
  switch (n->op) {
    case DML_OP_ADD:
      acc(a, x, unbroadcast(a, g, x));
      acc(a, y, unbroadcast(a, g, y));
      return;
    case DML_OP_SUB:
      acc(a, x, unbroadcast(a, g, x));
      if (needs(a, y)) acc(a, y, unbroadcast(a, op1(a, DML_OP_NEG, g), y));
      return;
    case DML_OP_MUL:
      if (needs(a, x)) acc(a, x, unbroadcast(a, op2(a, DML_OP_MUL, g, y), x));
      if (needs(a, y)) acc(a, y, unbroadcast(a, op2(a, DML_OP_MUL, g, x), y));
      return;
    case DML_OP_DIV:
      /* d(x/y)/dy = -x/y^2 = -out/y */
      if (needs(a, x)) acc(a, x, unbroadcast(a, op2(a, DML_OP_DIV, g, y), x));
      if (needs(a, y))
        acc(a, y,
            unbroadcast(
                a, op1(a, DML_OP_NEG, op2(a, DML_OP_MUL, g, op2(a, DML_OP_DIV, out, y))),
                y));
      return;
    case DML_OP_POW:
      /* d(x^p)/dx = p x^(p-1); d(x^p)/dp = x^p ln x */
      if (needs(a, x)) {
        V *pm1 = op2(a, DML_OP_SUB, y,
                     y->type.dtype == dt ? cst(a, dt, 1) : cst(a, y->type.dtype, 1));
        V *d = op2(a, DML_OP_MUL, op2(a, DML_OP_POW, x, pm1),
                   y->type.dtype == dt ? y : cast_to(a, y, dt));
        acc(a, x, unbroadcast(a, op2(a, DML_OP_MUL, g, d), x));
      }
      if (needs(a, y))
        acc(a, y,
            unbroadcast(
                a, op2(a, DML_OP_MUL, g, op2(a, DML_OP_MUL, out, op1(a, DML_OP_LOG, x))),
                y));
      return;
    case DML_OP_MAX:
    case DML_OP_MIN: {
      if (n->n_inputs != 2) {
        unsupported(a, n, "Max/Min of more than two inputs");
        return;
      }
      /* ties go to the first input */
      V *first = op2(
          a, n->op == DML_OP_MAX ? DML_OP_GREATER_OR_EQUAL : DML_OP_LESS_OR_EQUAL, x, y);
      V *zero = cst(a, dt, 0);
      if (needs(a, x)) acc(a, x, unbroadcast(a, op3(a, DML_OP_WHERE, first, g, zero), x));
      if (needs(a, y)) acc(a, y, unbroadcast(a, op3(a, DML_OP_WHERE, first, zero, g), y));
      return;
    }
    default: unsupported(a, n, "no VJP rule"); return;
  }
}

/* Where(c, x, y). */
static void vjp_where(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *c = n->inputs[0], *x = n->inputs[1], *y = n->inputs[2];
  V *zero = cst(a, g->type.dtype, 0);
  if (needs(a, x)) acc(a, x, unbroadcast(a, op3(a, DML_OP_WHERE, c, g, zero), x));
  if (needs(a, y)) acc(a, y, unbroadcast(a, op3(a, DML_OP_WHERE, c, zero, g), y));
}

/* Clip(x, min, max): g where min <= x <= max (PyTorch's clamp). */
static void vjp_clip(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *x = n->inputs[0];
  if (!needs(a, x)) return;
  V *lo = n->n_inputs > 1 ? n->inputs[1] : NULL,
    *hi = n->n_inputs > 2 ? n->inputs[2] : NULL;
  if (needs(a, lo) || needs(a, hi)) {
    unsupported(a, n, "gradients with respect to Clip's bounds");
    return;
  }
  V *mask = NULL;
  if (lo) mask = op2(a, DML_OP_GREATER_OR_EQUAL, x, lo);
  if (hi) {
    V *m2 = op2(a, DML_OP_LESS_OR_EQUAL, x, hi);
    mask = mask ? op2(a, DML_OP_AND, mask, m2) : m2;
  }
  acc(a, x, mask ? op2(a, DML_OP_MUL, g, cast_to(a, mask, x->type.dtype)) : g);
}

static int has_rule(dml_op_t op) {
  switch (op) {
    case DML_OP_NEG:
    case DML_OP_IDENTITY:
    case DML_OP_RELU:
    case DML_OP_LEAKY_RELU:
    case DML_OP_ELU:
    case DML_OP_SIGMOID:
    case DML_OP_TANH:
    case DML_OP_EXP:
    case DML_OP_LOG:
    case DML_OP_SQRT:
    case DML_OP_RECIPROCAL:
    case DML_OP_ABS:
    case DML_OP_SOFTPLUS:
    case DML_OP_SIN:
    case DML_OP_COS:
    case DML_OP_ERF:
    case DML_OP_CAST:
    case DML_OP_SOFTMAX:
    case DML_OP_LOG_SOFTMAX:
    case DML_OP_GLOBAL_AVERAGE_POOL:
    case DML_OP_FLATTEN:
    case DML_OP_RESHAPE:
    case DML_OP_SQUEEZE:
    case DML_OP_UNSQUEEZE:
    case DML_OP_EXPAND:
    case DML_OP_TRANSPOSE:
    case DML_OP_DROPOUT:
    case DML_OP_ADD:
    case DML_OP_SUB:
    case DML_OP_MUL:
    case DML_OP_DIV:
    case DML_OP_POW:
    case DML_OP_MAX:
    case DML_OP_MIN:
    case DML_OP_WHERE:
    case DML_OP_CLIP:
    case DML_OP_GEMM:
    case DML_OP_MATMUL:
    case DML_OP_CONV:
    case DML_OP_MAX_POOL:
    case DML_OP_AVERAGE_POOL:
    case DML_OP_REDUCE_SUM:
    case DML_OP_REDUCE_MEAN:
    case DML_OP_SLICE:
    case DML_OP_CONCAT:
    case DML_OP_GATHER: return 1;
    default: return 0;
  }
}

int dml_autodiff_supports(dml_op_t op) {
  return has_rule(op);
}

static void vjp(ad_t *a, const dml_ir_node_t *n, V *g) {
  switch (n->op) {
    case DML_OP_GEMM: vjp_gemm(a, n, g); return;
    case DML_OP_MATMUL: vjp_matmul(a, n, g); return;
    case DML_OP_CONV: vjp_conv(a, n, g); return;
    case DML_OP_MAX_POOL: vjp_pool(a, n, g, DML_OP_MAX_POOL_GRAD); return;
    case DML_OP_AVERAGE_POOL: vjp_pool(a, n, g, DML_OP_AVERAGE_POOL_GRAD); return;
    case DML_OP_REDUCE_SUM:
    case DML_OP_REDUCE_MEAN: vjp_reduce(a, n, g); return;
    case DML_OP_SLICE: vjp_slice(a, n, g); return;
    case DML_OP_CONCAT: vjp_concat(a, n, g); return;
    case DML_OP_GATHER: vjp_gather(a, n, g); return;
    case DML_OP_WHERE: vjp_where(a, n, g); return;
    case DML_OP_CLIP: vjp_clip(a, n, g); return;
    case DML_OP_ADD:
    case DML_OP_SUB:
    case DML_OP_MUL:
    case DML_OP_DIV:
    case DML_OP_POW:
    case DML_OP_MAX:
    case DML_OP_MIN: vjp_binary(a, n, g); return;
    default: vjp_unary(a, n, g); return;
  }
}

/* ---- driver ----------------------------------------------------------------- */

static int is_float_value(const V *v) {
  return v && v->type.rank >= 0 && dml_dtype_is_float(v->type.dtype);
}

dml_status_t dml_autodiff(dml_ir_function_t *f, dml_ir_value_t *loss,
                          dml_ir_value_t *seed, uint32_t n_wrt,
                          dml_ir_value_t *const *wrt, dml_ir_value_t **out_grads) {
  dml_ir_module_t *m = f->module;
  if (!is_float_value(loss) || dml_ir_type_numel_bound(m, &loss->type) != 1 ||
      !dml_type_is_static(&loss->type))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "the loss '%s' must be a float scalar",
                           loss && loss->name ? loss->name : "");
  ad_t a;
  memset(&a, 0, sizeof a);
  a.m = m;
  a.f = f;
  a.n_ids = m->next_value_id;
  a.grad = (V **)calloc(a.n_ids ? a.n_ids : 1, sizeof(V *));
  a.needs = (uint8_t *)calloc(a.n_ids ? a.n_ids : 1, 1);
  uint32_t n_nodes = dml_ir_function_num_nodes(f);
  dml_ir_node_t **order = (dml_ir_node_t **)calloc(n_nodes ? n_nodes : 1, sizeof(*order));
  if (!a.grad || !a.needs || !order) {
    free(a.grad);
    free(a.needs);
    free(order);
    return oom();
  }
  dml_status_t st = DML_OK;
  for (uint32_t i = 0; i < n_wrt && !st; i++) {
    V *w = wrt[i];
    int mine = w && (w->kind == DML_IR_VALUE_GLOBAL ? 1 : w->func == f);
    if (!mine || !is_float_value(w) || w->id >= a.n_ids)
      st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "wrt[%u] ('%s') is not a float value of @%s or a global", i,
                           w && w->name ? w->name : "", f->name);
    else
      a.needs[w->id] = 1;
  }
  /* Forward: which values depend on a wrt value (through float values). */
  uint32_t k = 0;
  for (dml_ir_node_t *n = f->first; n && !st; n = n->next) {
    order[k++] = n;
    int dep = 0;
    for (uint32_t i = 0; i < n->n_inputs && !dep; i++)
      dep = needs(&a, n->inputs[i]) && is_float_value(n->inputs[i]);
    if (!dep) continue;
    for (uint32_t i = 0; i < n->n_outputs; i++)
      if (is_float_value(n->outputs[i])) a.needs[n->outputs[i]->id] = 1;
  }
  if (!st && !needs(&a, loss)) {
    /* The loss does not depend on any wrt value. */
    for (uint32_t i = 0; i < n_wrt; i++) out_grads[i] = NULL;
    goto done;
  }
  if (!st) {
    a.name = "loss.grad";
    V *s = seed;
    if (!s) {
      double one = 1;
      dml_type_t t = loss->type;
      uint8_t buf[8];
      dml_store_f64(t.dtype, buf, 0, one);
      a.st =
          dml_ir_module_add_constant(m, "ad.seed", &t, buf, dml_dtype_size(t.dtype), &s);
    }
    a.grad[loss->id] = s;
    /* Reverse sweep over the nodes that existed before. */
    for (uint32_t i = k; i-- > 0 && !a.st;) {
      dml_ir_node_t *n = order[i];
      V *g = n->n_outputs ? a.grad[n->outputs[0]->id] : NULL;
      int any_in = 0;
      for (uint32_t j = 0; j < n->n_inputs; j++) any_in |= needs(&a, n->inputs[j]);
      if (!any_in) continue;
      int other = 0;
      for (uint32_t j = 1; j < n->n_outputs; j++)
        other |= n->outputs[j]->id < a.n_ids && a.grad[n->outputs[j]->id] != NULL;
      if (other) {
        unsupported(&a, n, "a gradient flows into an output other than the first");
        continue;
      }
      if (!g) continue;
      char nm[256];
      snprintf(nm, sizeof nm, "%s.grad", n->name ? n->name : dml_op_name(n->op));
      a.name = dml_ir_strdup(m, nm);
      if (!has_rule(n->op)) {
        unsupported(&a, n, "no VJP rule");
        continue;
      }
      vjp(&a, n, g);
    }
    st = a.st;
  }
  if (!st && a.missing) {
    st = dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                         "no gradient through %s (ops on the path from the parameters "
                         "to the loss without a VJP rule)",
                         a.missing_ops);
    st = dml_status_detail(st, "%s", dml_status_details(a.missing));
  }
  for (uint32_t i = 0; i < n_wrt && !st; i++) out_grads[i] = a.grad[wrt[i]->id];
done:
  dml_status_free(a.missing);
  if (st && a.st != st) dml_status_free(a.st);
  free(a.grad);
  free(a.needs);
  free(order);
  return st;
}
