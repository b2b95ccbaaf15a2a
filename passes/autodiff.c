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
#include "dml_ew.h"
#include "dml_ir_infer.h"
#include "dml_shape.h"

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
  if (n) set_ints(a, nd, "axes", axes, n); /* none: every axis */
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

/* Zeros of x's shape and dtype: ConstantOfShape(Shape(x)). */
static V *zeros_like(ad_t *a, V *x) {
  if (!x) return NULL;
  dml_ir_node_t *z = mk(a, DML_OP_CONSTANT_OF_SHAPE, 1, (V *[]){shape_of(a, x)}, 1);
  if (z && !a->st) {
    dml_tensor_t t;
    memset(&t, 0, sizeof t);
    uint8_t zero[8] = {0};
    t.dtype = x->type.dtype;
    t.rank = 1;
    t.dims[0] = 1;
    t.data = zero;
    a->st = dml_ir_node_set_attr_tensor(z, "value", &t);
  }
  return fin(a, z);
}

/* Unsqueeze(x, axes) with constant axes. */
static V *unsqueeze(ad_t *a, V *x, const int64_t *axes, int64_t n) {
  if (!x) return NULL;
  return op2(a, DML_OP_UNSQUEEZE, x, cst_i64(a, axes, n));
}

/* Reshape(x) to static dims. */
static V *reshape_to(ad_t *a, V *x, const int64_t *dims, int64_t n) {
  if (!x) return NULL;
  return op2(a, DML_OP_RESHAPE, x, cst_i64(a, dims, n));
}

/* Slice(x) with constant starts/ends/axes/steps (steps NULL: 1). */
static V *slice(ad_t *a, V *x, const int64_t *st, const int64_t *en, const int64_t *ax,
                const int64_t *sp, int64_t n) {
  if (!x) return NULL;
  V *in[5] = {x, cst_i64(a, st, n), cst_i64(a, en, n), cst_i64(a, ax, n),
              sp ? cst_i64(a, sp, n) : NULL};
  return fin(a, mk(a, DML_OP_SLICE, sp ? 5 : 4, in, 1));
}

/* Pad(x) with zeros, constant pads [begin..., end...] (2 * rank values). */
static V *pad_zeros(ad_t *a, V *x, const int64_t *pads) {
  if (!x) return NULL;
  V *in[2] = {x, cst_i64(a, pads, 2 * (int64_t)x->type.rank)};
  return fin(a, mk(a, DML_OP_PAD, 2, in, 1));
}

/* Reduction `op` over `axes` (attribute form). */
static V *reduce_op(ad_t *a, dml_op_t op, V *x, const int64_t *axes, size_t n,
                    int keepdims) {
  if (!x) return NULL;
  dml_ir_node_t *nd = mk(a, op, 1, &x, 1);
  if (n) set_ints(a, nd, "axes", axes, n); /* none: every axis */
  set_int(a, nd, "keepdims", keepdims);
  return fin(a, nd);
}

/* 1 when every dim of x is static. */
static int all_static(const V *x) {
  return x && dml_type_is_static(&x->type);
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
static void vjp_matmul_2d(ad_t *a, const dml_ir_node_t *n, V *g) {
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

/* dX of Conv node n as ConvInputGrad(g, W, X): the ConvTranspose whose
 * end pads and output_padding the kernel computes from X's run-time
 * extents (ops.def), for a symbolic spatial dim with a stride above 1 or
 * SAME auto_pad. */
static V *conv_input_grad(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *in[3] = {g, n->inputs[1], n->inputs[0]};
  dml_ir_node_t *t = mk(a, DML_OP_CONV_INPUT_GRAD, 3, in, 1);
  static const char *const keys[] = {"strides", "pads", "dilations", "group", "auto_pad"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) copy_attr(a, t, n, keys[i]);
  return fin(a, t);
}

/* Conv (ONNX 11): dX is ConvTranspose of g with W (same strides, dilations,
 * group; pads and output_padding chosen so the result has X's spatial
 * size: dml_shape_conv_input_grad_pads; ConvInputGrad where they follow a
 * symbolic size), dW is ConvWeightGrad(g, X), dB sums g over N and space. */
static void vjp_conv(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *X = n->inputs[0], *W = n->inputs[1], *B = n->n_inputs > 2 ? n->inputs[2] : NULL;
  V *Y = n->outputs[0];
  int32_t r = X->type.rank - 2;
  int run_time_pads = 0;
  int64_t pb[DML_MAX_RANK], pe[DML_MAX_RANK], op[DML_MAX_RANK], s[DML_MAX_RANK],
      d[DML_MAX_RANK], k[DML_MAX_RANK];
  if (needs(a, X)) {
    size_t ns, nd, np;
    const int64_t *st = attr_is(n, "strides", &ns), *dl = attr_is(n, "dilations", &nd);
    const int64_t *pads = attr_is(n, "pads", &np);
    const dml_attr_t *ap = dml_ir_node_attr(n, "auto_pad");
    const char *autopad = ap && ap->kind == DML_ATTR_STRING ? ap->s : "NOTSET";
    for (int32_t i = 0; i < r; i++) {
      dml_dim_t in = X->type.dims[2 + i], out = Y->type.dims[2 + i],
                kd = W->type.dims[2 + i];
      s[i] = st && ns == (size_t)r ? st[i] : 1;
      d[i] = dl && nd == (size_t)r ? dl[i] : 1;
      k[i] = kd.value;
      int64_t ek = (k[i] - 1) * d[i] + 1;
      if (kd.sym >= 0) {
        unsupported(a, n, "symbolic kernel dims");
        return;
      }
      if (in.sym >= 0 || out.sym >= 0) {
        /* Stride 1 with explicit pads: ConvTranspose with the forward pads
         * gives X's extent for every size (output_padding 0). A stride
         * above 1 or SAME needs pads that follow the size: ConvInputGrad
         * computes them when it runs. */
        if (s[i] != 1 || (strcmp(autopad, "NOTSET") && strcmp(autopad, "VALID"))) {
          run_time_pads = 1;
          break;
        }
        pb[i] = strcmp(autopad, "VALID") && pads && np == 2 * (size_t)r ? pads[i] : 0;
        pe[i] = strcmp(autopad, "VALID") && pads && np == 2 * (size_t)r ? pads[r + i] : 0;
        op[i] = 0;
        continue;
      }
      if (!strcmp(autopad, "SAME_UPPER") || !strcmp(autopad, "SAME_LOWER")) {
        int64_t total = (out.value - 1) * s[i] + ek - in.value;
        if (total < 0) total = 0;
        pb[i] = !strcmp(autopad, "SAME_UPPER") ? total / 2 : total - total / 2;
      } else if (!strcmp(autopad, "VALID")) {
        pb[i] = 0;
      } else {
        pb[i] = pads && np == 2 * (size_t)r ? pads[i] : 0;
      }
      dml_shape_conv_input_grad_pads(in.value, out.value, ek, s[i], pb[i], &pe[i],
                                     &op[i]);
    }
  }
  if (needs(a, X) && run_time_pads) acc(a, X, conv_input_grad(a, n, g));
  if (needs(a, X) && !run_time_pads) {
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
    int64_t kw[DML_MAX_RANK];
    for (int32_t i = 0; i < r; i++) kw[i] = W->type.dims[2 + i].value;
    set_ints(a, t, "kernel_shape", kw, (size_t)r);
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

static void pool_grad(ad_t *a, const dml_ir_node_t *n, V *g, dml_op_t grad_op) {
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

/* DepthToSpace-13 / SpaceToDepth-13: permutations of elements, so the
 * gradient is the inverse permutation of g. SpaceToDepth is the inverse of
 * DepthToSpace in DCR mode (the spec's reshape/transpose definitions); for
 * CRD mode the inverse of its reshape [N, C/b², b, b, H, W], transpose
 * (0,1,4,2,5,3), reshape [N, C/b², H b, W b] is spelled out (static
 * shapes). */
static V *vjp_depth_space(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *x = n->inputs[0];
  int64_t b = attr_i(n, "blocksize", 0);
  const dml_attr_t *am = dml_ir_node_attr(n, "mode");
  int crd = am && am->kind == DML_ATTR_STRING && !strcmp(am->s, "CRD");
  if (n->op == DML_OP_SPACE_TO_DEPTH) {
    /* SpaceToDepth(mode) is the inverse of DepthToSpace(mode) */
    dml_ir_node_t *t = mk(a, DML_OP_DEPTH_TO_SPACE, 1, &g, 1);
    set_int(a, t, "blocksize", b);
    copy_attr(a, t, n, "mode");
    return fin(a, t);
  }
  if (!crd) {
    dml_ir_node_t *t = mk(a, DML_OP_SPACE_TO_DEPTH, 1, &g, 1);
    set_int(a, t, "blocksize", b);
    return fin(a, t);
  }
  if (!all_static(x) || x->type.rank != 4 || b < 1) {
    unsupported(a, n, "CRD mode with symbolic dims");
    return NULL;
  }
  const dml_dim_t *d = x->type.dims;
  int64_t s6[6] = {d[0].value, d[1].value / (b * b), d[2].value, b, d[3].value, b};
  static const int64_t inv[6] = {0, 1, 3, 5, 2, 4};
  dml_ir_node_t *t = mk(a, DML_OP_TRANSPOSE, 1, (V *[]){reshape_to(a, g, s6, 6)}, 1);
  set_ints(a, t, "perm", inv, 6);
  return reshape_like(a, fin(a, t), x);
}

/* dy/dx of the formula table's op `op` (runtime/base/ew_ops.def's GRAD)
 * as graph nodes over x, y (its output) of float dtype dt, with attribute
 * values av (dml_ew_attrs). */
#pragma push_macro("OP")
#undef OP
#define X x
#define Y y
#define A0 cst(a, dt, av[0])
#define A1 cst(a, dt, av[1])
#define A2 cst(a, dt, av[2])
#define K(c) cst(a, dt, (double)(c))
#define ADD(u, v) op2(a, DML_OP_ADD, u, v)
#define SUB(u, v) op2(a, DML_OP_SUB, u, v)
#define MUL(u, v) op2(a, DML_OP_MUL, u, v)
#define DIV(u, v) op2(a, DML_OP_DIV, u, v)
#define NEG(u) op1(a, DML_OP_NEG, u)
#define ABS(u) op1(a, DML_OP_ABS, u)
#define LT(u, v) op2(a, DML_OP_LESS, u, v)
#define LE(u, v) op2(a, DML_OP_LESS_OR_EQUAL, u, v)
#define GT(u, v) op2(a, DML_OP_GREATER, u, v)
#define EQ(u, v) op2(a, DML_OP_EQUAL, u, v)
#define SEL(c, u, v) op3(a, DML_OP_WHERE, c, u, v)
#define IFA(i, u, v) (av[i] != 0 ? (u) : (v))
#define EXP(u) op1(a, DML_OP_EXP, u)
#define LOG(u) op1(a, DML_OP_LOG, u)
#define SQRT(u) op1(a, DML_OP_SQRT, u)
#define TANH(u) op1(a, DML_OP_TANH, u)
#define SIGMOID(u) op1(a, DML_OP_SIGMOID, u)
#define ERF(u) op1(a, DML_OP_ERF, u)
#define SIN(u) op1(a, DML_OP_SIN, u)
#define COS(u) op1(a, DML_OP_COS, u)
#define TAN(u) op1(a, DML_OP_TAN, u)
#define SINH(u) op1(a, DML_OP_SINH, u)
#define COSH(u) op1(a, DML_OP_COSH, u)
#define ASIN(u) op1(a, DML_OP_ASIN, u)
#define ACOS(u) op1(a, DML_OP_ACOS, u)
#define ATAN(u) op1(a, DML_OP_ATAN, u)
#define ASINH(u) op1(a, DML_OP_ASINH, u)
#define ACOSH(u) op1(a, DML_OP_ACOSH, u)
#define ATANH(u) op1(a, DML_OP_ATANH, u)
#define OP(e, u) op1(a, DML_OP_##e, u)
#define ZERO (*zero = 1, (V *)NULL)
#define DML_EW_ATTR_F(name, dflt, nonzero)
#define DML_EW_ATTR_S(name, first, second)
/* *zero set: the table's ZERO (piecewise constant, a zero gradient). */
static V *ew_grad(ad_t *a, dml_op_t op, V *x, V *y, dml_dtype_t dt, const double *av,
                  int *zero) {
  (void)y;
  (void)av;
  (void)zero;
  switch (op) {
#define DML_EW(e, attrs, value, grad) \
  case DML_OP_##e:                    \
    return grad;
#include "ew_ops.def"
#undef DML_EW

#define DML_EWN(e, ints, value, grad) \
  case DML_OP_##e:                    \
    return grad;
#include "ew_ops.def"
#undef DML_EWN
    default: return NULL;
  }
}
#undef X
#undef Y
#undef A0
#undef A1
#undef A2
#undef K
#undef ADD
#undef SUB
#undef MUL
#undef DIV
#undef NEG
#undef ABS
#undef LT
#undef LE
#undef GT
#undef EQ
#undef SEL
#undef IFA
#undef EXP
#undef LOG
#undef SQRT
#undef TANH
#undef SIGMOID
#undef ERF
#undef SIN
#undef COS
#undef TAN
#undef SINH
#undef COSH
#undef ASIN
#undef ACOS
#undef ATAN
#undef ASINH
#undef ACOSH
#undef ATANH
#undef OP
#undef ZERO
#undef DML_EW_ATTR_F
#undef DML_EW_ATTR_S
#pragma pop_macro("OP")

/* The formula table's ops (ew_ops.def): g times the table's dy/dx, zeros
 * for a piecewise constant op (ZERO). */
static void vjp_ew(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *x = n->inputs[0], *y = n->outputs[0];
  dml_dtype_t dt = x->type.dtype;
  double av[DML_EW_MAX_ATTRS] = {0, 0, 0};
  if (!dml_ewn_has(n->op)) {
    dml_status_t st = dml_ew_attrs(n->op, n->attrs, n->n_attrs, av);
    if (st) {
      unsupported(a, n, dml_status_reason(st));
      dml_status_free(st);
      return;
    }
  }
  int zero = 0;
  V *d = ew_grad(a, n->op, x, y, dt, av, &zero);
  acc(a, x, zero ? zeros_like(a, x) : op2(a, DML_OP_MUL, g, d));
}

static void vjp_identity(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *x = n->inputs[0];
  V *r = NULL;
  r = g;
  acc(a, x, r);
}

static void vjp_cast(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *x = n->inputs[0];
  dml_dtype_t dt = x->type.dtype;
  V *r = NULL;
  if (!dml_dtype_is_float(dt)) return;
  r = g->type.dtype == dt ? g : cast_to(a, g, dt);
  acc(a, x, r);
}

static void vjp_softmax(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *x = n->inputs[0], *y = n->outputs[0];
  V *r = NULL;
  int64_t axis = attr_i(n, "axis", -1);
  r = op2(a, DML_OP_MUL, y,
          op2(a, DML_OP_SUB, g, softmax_axis_sum(a, op2(a, DML_OP_MUL, g, y), axis)));
  acc(a, x, r);
}

static void vjp_log_softmax(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *x = n->inputs[0], *y = n->outputs[0];
  V *r = NULL;
  int64_t axis = attr_i(n, "axis", -1);
  r = op2(a, DML_OP_SUB, g,
          op2(a, DML_OP_MUL, op1(a, DML_OP_EXP, y), softmax_axis_sum(a, g, axis)));
  acc(a, x, r);
}

static void vjp_global_average_pool(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *x = n->inputs[0];
  dml_dtype_t dt = x->type.dtype;
  V *r = NULL;
  double hw = 1;
  int sym = 0;
  for (int32_t i = 2; i < x->type.rank; i++) {
    sym |= x->type.dims[i].sym >= 0;
    hw *= (double)x->type.dims[i].value;
  }
  if (sym) { /* divided by the run-time count: ReduceProd(Shape(x)[2:]) */
    int64_t st = 2, en = INT64_MAX, ax = 0;
    V *sp = slice(a, shape_of(a, x), &st, &en, &ax, NULL, 1);
    dml_ir_node_t *pr = sp ? mk(a, DML_OP_REDUCE_PROD, 1, &sp, 1) : NULL;
    set_ints(a, pr, "axes", &ax, 1);
    set_int(a, pr, "keepdims", 0);
    r = op2(a, DML_OP_DIV, op2(a, DML_OP_EXPAND, g, shape_of(a, x)),
            cast_to(a, fin(a, pr), dt));
    acc(a, x, r);
    return;
  }
  r = op2(a, DML_OP_MUL, op2(a, DML_OP_EXPAND, g, shape_of(a, x)), cst(a, dt, 1.0 / hw));
  acc(a, x, r);
}

/* Flatten, Reshape, Squeeze, Unsqueeze */
static void vjp_reshape_like(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *x = n->inputs[0];
  V *r = NULL;
  r = reshape_like(a, g, x);
  acc(a, x, r);
}

static void vjp_expand(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *x = n->inputs[0];
  V *r = NULL;
  r = unbroadcast(a, g, x);
  acc(a, x, r);
}

static void vjp_transpose(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *x = n->inputs[0];
  V *r = NULL;
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
  acc(a, x, r);
}

static void vjp_dropout(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *x = n->inputs[0];
  dml_dtype_t dt = x->type.dtype;
  V *r = NULL;
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
    acc(a, x, r);
    return;
  }
  if (n->n_outputs < 2) {
    unsupported(a, n, "training-mode Dropout without its mask output");
    return;
  }
  r = op2(a, DML_OP_MUL, op2(a, DML_OP_MUL, g, cast_to(a, n->outputs[1], dt)),
          cst(a, dt, 1.0 / (1.0 - ratio)));
  acc(a, x, r);
}

static void vjp_shrink(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *x = n->inputs[0];
  dml_dtype_t dt = x->type.dtype;
  V *r = NULL;
  /* Shrink-9: y = x + bias (x < -lambd), x - bias (x > lambd), 0
   * otherwise; dy/dx = 1 outside [-lambd, lambd]. */
  double l = attr_f(n, "lambd", 0.5);
  V *out = op2(a, DML_OP_OR, op2(a, DML_OP_GREATER, x, cst(a, dt, l)),
               op2(a, DML_OP_LESS, x, cst(a, dt, -l)));
  r = op2(a, DML_OP_MUL, g, cast_to(a, out, dt));
  acc(a, x, r);
}

/* Floor, Ceil, Round, Sign */

static void vjp_cast_like(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *x = n->inputs[0];
  dml_dtype_t dt = x->type.dtype;
  V *r = NULL;
  /* CastLike-15 (float to float): the gradient cast back; the target
   * input carries none (only its dtype is read). */
  if (!dml_dtype_is_float(dt)) return;
  r = g->type.dtype == dt ? g : cast_to(a, g, dt);
  acc(a, x, r);
}

static void vjp_global_max_pool(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *x = n->inputs[0];
  V *r = NULL;
  /* GlobalMaxPool-1 is MaxPool with the whole spatial extent as kernel:
   * MaxPoolGrad with that kernel (to the first maximum, as MaxPool's). */
  int64_t k[DML_MAX_RANK];
  for (int32_t i = 2; i < x->type.rank; i++) {
    if (x->type.dims[i].sym >= 0) {
      unsupported(a, n, "symbolic spatial dims");
      return;
    }
    k[i - 2] = x->type.dims[i].value;
  }
  V *in[2] = {g, x};
  dml_ir_node_t *t = mk(a, DML_OP_MAX_POOL_GRAD, 2, in, 1);
  set_ints(a, t, "kernel_shape", k, (size_t)x->type.rank - 2);
  r = fin(a, t);
  acc(a, x, r);
}

/* DepthToSpace, SpaceToDepth */
static void vjp_space_depth(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *x = n->inputs[0];
  V *r = NULL;
  r = vjp_depth_space(a, n, g);
  acc(a, x, r);
}

static void vjp_cum_sum(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *x = n->inputs[0];
  V *r = NULL;
  /* CumSum-14: dx_i = sum over the outputs j that read x_i of g_j, the
   * cumulative sum of g in the other direction with the same
   * exclusive flag (y_j = sum_{i<=j} x_i => dx_i = sum_{j>=i} g_j). */
  V *in[2] = {g, n->inputs[1]};
  dml_ir_node_t *t = mk(a, DML_OP_CUM_SUM, 2, in, 1);
  set_int(a, t, "exclusive", attr_i(n, "exclusive", 0));
  set_int(a, t, "reverse", !attr_i(n, "reverse", 0));
  r = fin(a, t);
  acc(a, x, r);
}

/* Transpose(x, perm). */
static V *transpose(ad_t *a, V *x, const int64_t *perm, int32_t r) {
  if (!x) return NULL;
  dml_ir_node_t *t = mk(a, DML_OP_TRANSPOSE, 1, &x, 1);
  set_ints(a, t, "perm", perm, (size_t)r);
  return fin(a, t);
}

/* Slice-13 with constant starts/ends/axes/steps (any sign): X's element at
 * s + j k along a sliced axis (j < c, the spec's clamping of starts and
 * ends) received g_j, so along each axis g is reversed (k < 0), spread to
 * stride |k| (Unsqueeze, Pad with |k|-1 zeros, Reshape, Slice), then padded
 * with zeros to X's length at the lowest selected index. */
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
  V *cur = g;
  for (size_t i = 0; i < ns; i++) {
    int64_t axis = nax ? ax[i] : (int64_t)i, k = nsp ? sp[i] : 1;
    if (axis < 0) axis += r;
    if (axis >= 0 && axis < r && X->type.dims[axis].sym >= 0 && k == 1 && st[i] == 0) {
      /* [0, end) with end at or above the dim's bound: the whole axis at
       * any run-time extent (torch.onnx's dynamo exporter writes x[:, 0]
       * as Slice(x, 0, INT64_MAX) over the batch, then a Gather), so the
       * gradient passes along it unchanged */
      dml_type_t one = dml_type_unknown(X->type.dtype);
      one.rank = 1;
      one.dims[0] = X->type.dims[axis];
      int64_t hi = dml_ir_type_numel_bound(a->m, &one);
      if (hi >= 0 && en[i] >= hi) continue;
    }
    if (axis < 0 || axis >= r || X->type.dims[axis].sym >= 0 || k == 0) {
      unsupported(a, n, "a symbolic sliced dim");
      return;
    }
    int64_t dim = X->type.dims[axis].value, s = st[i], e = en[i], c;
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    if (k > 0) {
      s = s < 0 ? 0 : s > dim ? dim : s;
      e = e < 0 ? 0 : e > dim ? dim : e;
      c = e > s ? (e - s + k - 1) / k : 0;
    } else {
      s = s < 0 ? 0 : s > dim - 1 ? dim - 1 : s;
      e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
      c = s > e ? (s - e + (-k) - 1) / (-k) : 0;
    }
    if (c == 0) { /* nothing selected: a zero gradient */
      acc(a, X, zeros_like(a, X));
      return;
    }
    int64_t m = k > 0 ? k : -k, lo = k > 0 ? s : s + (c - 1) * k;
    if (k < 0 && c > 1) {
      int64_t b = -1, en1 = INT64_MIN, st1 = -1;
      cur = slice(a, cur, &b, &en1, &axis, &st1, 1);
    }
    if (m > 1 && c > 1) {
      /* [.., c, ..] -> [.., c, 1, ..] -> [.., c, m, ..] -> [.., c m, ..] ->
       * the first (c - 1) m + 1 */
      int64_t up = axis + 1, dims[DML_MAX_RANK];
      for (int32_t d = 0; d < r; d++) {
        dml_dim_t gd = cur ? cur->type.dims[d] : (dml_dim_t){0};
        if (d > axis && gd.sym >= 0) {
          unsupported(a, n, "steps other than +-1 with a symbolic dim after the axis");
          return;
        }
        dims[d] = d < axis ? 0 : d == axis ? -1 : gd.value;
      }
      V *u = unsqueeze(a, cur, &up, 1);
      int64_t pp[2 * (DML_MAX_RANK + 1)] = {0};
      if (r + 1 > DML_MAX_RANK) {
        unsupported(a, n, "steps other than +-1 on a tensor of the maximum rank");
        return;
      }
      pp[(r + 1) + up] = m - 1;
      V *in[2] = {u, cst_i64(a, pp, 2 * (int64_t)(r + 1))};
      V *spread = reshape_to(a, fin(a, mk(a, DML_OP_PAD, 2, in, 1)), dims, r);
      int64_t z = 0, len = (c - 1) * m + 1;
      cur = slice(a, spread, &z, &len, &axis, NULL, 1);
    }
    pads[axis] = lo;
    pads[r + axis] = dim - (lo + (c - 1) * m + 1);
  }
  int padded = 0;
  for (int32_t i = 0; i < 2 * r; i++) padded |= pads[i] != 0;
  acc(a, X, reshape_like(a, padded ? pad_zeros(a, cur, pads) : cur, X));
}

/* Split-18: dX is the concatenation of the outputs' gradients along the
 * axis, zeros for outputs that have none. */
static void split_grads(ad_t *a, const dml_ir_node_t *n) {
  V *X = n->inputs[0];
  if (!needs(a, X)) return;
  V **parts = (V **)calloc(n->n_outputs ? n->n_outputs : 1, sizeof(V *));
  if (!parts) {
    if (!a->st) a->st = oom();
    return;
  }
  for (uint32_t i = 0; i < n->n_outputs; i++) {
    V *o = n->outputs[i];
    parts[i] = a->grad[o->id] ? a->grad[o->id] : zeros_like(a, o);
  }
  dml_ir_node_t *c = a->st ? NULL : mk(a, DML_OP_CONCAT, n->n_outputs, parts, 1);
  set_int(a, c, "axis", attr_i(n, "axis", 0));
  free(parts);
  acc(a, X, fin(a, c));
}

/* Tile-13 (constant repeats, static shapes): y viewed as [r0, d0, r1, d1,
 * ...] repeats x over the r axes, so dx sums g over them. */
static void vjp_tile(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *X = n->inputs[0];
  if (!needs(a, X)) return;
  int32_t r = X->type.rank;
  int64_t rep[DML_MAX_RANK];
  size_t nr = 0;
  if (!const_int(n->inputs[1], rep, DML_MAX_RANK, &nr) || nr != (size_t)r) {
    unsupported(a, n, "repeats are not a constant");
    return;
  }
  if (!all_static(X) || 2 * r > DML_MAX_RANK) {
    unsupported(a, n, "symbolic dims or rank above half the maximum rank");
    return;
  }
  int64_t dims[DML_MAX_RANK], axes[DML_MAX_RANK];
  for (int32_t i = 0; i < r; i++) {
    dims[2 * i] = rep[i];
    dims[2 * i + 1] = X->type.dims[i].value;
    axes[i] = 2 * i;
  }
  acc(a, X, reduce_sum(a, reshape_to(a, g, dims, 2 * r), axes, (size_t)r, 0));
}

/* Pad-18 (constant pads). constant: dX is the part of g where X went
 * (Slice), padded with zeros where X was cropped (negative pads); the
 * constant_value gets sum(g) - sum(that part). edge/reflect/wrap (pads >=
 * 0): per axis (the modes pad one axis after the other, as numpy.pad),
 * the padded borders of g are added back to the X elements they copy:
 * edge to the first/last element, reflect to elements 1..pb and
 * L-1-pe..L-2 in reverse order, wrap to the last pb / first pe. */
static void vjp_pad(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *X = n->inputs[0], *cv = n->n_inputs > 2 ? n->inputs[2] : NULL;
  int32_t r = X->type.rank;
  int64_t p[2 * DML_MAX_RANK];
  size_t np = 0;
  if (!const_int(n->inputs[1], p, 2 * DML_MAX_RANK, &np) || np != 2 * (size_t)r) {
    unsupported(a, n, "pads are not a constant");
    return;
  }
  const dml_attr_t *am = dml_ir_node_attr(n, "mode");
  const char *mode = am && am->kind == DML_ATTR_STRING ? am->s : "constant";
  for (int32_t i = 0; i < r; i++)
    if ((p[i] || p[r + i]) && X->type.dims[i].sym >= 0) {
      unsupported(a, n, "a padded symbolic dim");
      return;
    }
  if (!strcmp(mode, "constant")) {
    int64_t st[DML_MAX_RANK], en[DML_MAX_RANK], ax[DML_MAX_RANK], zp[2 * DML_MAX_RANK];
    int64_t k = 0;
    for (int32_t i = 0; i < r; i++) {
      int64_t pb = p[i], pe = p[r + i];
      zp[i] = pb < 0 ? -pb : 0;
      zp[r + i] = pe < 0 ? -pe : 0;
      if (!pb && !pe) continue;
      int64_t dim = X->type.dims[i].value;
      st[k] = pb > 0 ? pb : 0;
      en[k] = st[k] + dim - zp[i] - zp[r + i];
      ax[k++] = i;
    }
    V *inner = k ? slice(a, g, st, en, ax, NULL, k) : g;
    if (needs(a, X)) acc(a, X, reshape_like(a, pad_zeros(a, inner, zp), X));
    if (cv && needs(a, cv)) {
      V *d = op2(a, DML_OP_SUB, reduce_sum(a, g, NULL, 0, 0),
                 reduce_sum(a, inner, NULL, 0, 0));
      acc(a, cv, reshape_like(a, d, cv));
    }
    return;
  }
  int edge = !strcmp(mode, "edge"), refl = !strcmp(mode, "reflect"),
      wrap = !strcmp(mode, "wrap");
  if (!edge && !refl && !wrap) {
    unsupported(a, n, "unknown mode");
    return;
  }
  if (!needs(a, X)) return;
  V *cur = g;
  for (int64_t i = 0; i < r; i++) {
    int64_t pb = p[i], pe = p[r + i];
    if (!pb && !pe) continue;
    int64_t L = X->type.dims[i].value;
    if (pb < 0 || pe < 0 || L < 1 || (refl && (pb > L - 1 || pe > L - 1)) ||
        (wrap && (pb > L || pe > L))) {
      unsupported(a, n,
                  "negative pads, or reflect/wrap pads longer than the dim, in a "
                  "non-constant mode");
      return;
    }
    int64_t s0 = pb, e0 = pb + L;
    V *sum = slice(a, cur, &s0, &e0, &i, NULL, 1);
    int64_t side[2] = {pb, pe};
    for (int b = 0; b < 2; b++) {
      if (!side[b]) continue;
      int64_t s = b ? pb + L : 0, e = b ? pb + L + pe : pb;
      V *part = slice(a, cur, &s, &e, &i, NULL, 1);
      int64_t zp[2 * DML_MAX_RANK] = {0};
      if (edge) {
        part = reduce_sum(a, part, &i, 1, 1);
        zp[i] = b ? L - 1 : 0;
        zp[r + i] = b ? 0 : L - 1;
      } else if (refl) {
        int64_t m1 = -1, lo = INT64_MIN;
        part = slice(a, part, &m1, &lo, &i, &m1, 1);
        zp[i] = b ? L - 1 - pe : 1;
        zp[r + i] = b ? 1 : L - 1 - pb;
      } else {
        zp[i] = b ? 0 : L - pb;
        zp[r + i] = b ? L - pe : 0;
      }
      sum = op2(a, DML_OP_ADD, sum, pad_zeros(a, part, zp));
    }
    cur = sum;
  }
  acc(a, X, reshape_like(a, cur, X));
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

/* Gather-13 on any axis a, indices of any rank q (scalar included):
 * g = [D[:a], I.shape, D[a+1:]]; with the index dims moved to the front
 * (Transpose), dData[a-th dim moved first] = ScatterND with reduction add
 * of g into zeros at Unsqueeze(I, -1) (indices repeat), transposed back.
 * One constant index i (0-D or [1]) on a static axis of length L instead:
 * g (unsqueezed at a when 0-D) padded with i zeros before and L-1-i after
 * along a (BERT's pooler x[:, 0]; a Pad runs on every target at any batch,
 * the ScatterND's zeros of symbolic dims do not on the GPU targets). */
static void vjp_gather(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *D = n->inputs[0], *I = n->inputs[1];
  if (!needs(a, D)) return;
  int32_t r = D->type.rank, q = I->type.rank;
  int64_t ax = attr_i(n, "axis", 0);
  if (ax < 0) ax += r;
  int64_t one[1];
  size_t cnt = 0;
  if (q <= 1 && ax >= 0 && ax < r && D->type.dims[ax].sym < 0 &&
      const_int(I, one, 1, &cnt) && cnt == 1) {
    int64_t L = D->type.dims[ax].value, i = one[0] < 0 ? one[0] + L : one[0];
    if (i >= 0 && i < L) {
      int64_t pads[2 * DML_MAX_RANK] = {0};
      pads[ax] = i;
      pads[r + ax] = L - 1 - i;
      acc(a, D, pad_zeros(a, q == 0 ? unsqueeze(a, g, &ax, 1) : g, pads));
      return;
    }
  }
  int64_t pg[DML_MAX_RANK], pd[DML_MAX_RANK], inv[DML_MAX_RANK];
  int32_t k = 0;
  for (int32_t i = 0; i < q; i++) pg[k++] = ax + i;
  for (int32_t i = 0; i < ax; i++) pg[k++] = i;
  for (int32_t i = (int32_t)ax + q; i < r - 1 + q; i++) pg[k++] = i;
  k = 0;
  pd[k++] = ax;
  for (int32_t i = 0; i < r; i++)
    if (i != ax) pd[k++] = i;
  for (int32_t i = 0; i < r; i++) inv[pd[i]] = i;
  V *zeros = zeros_like(a, D), *gp = g;
  if (ax != 0) {
    zeros = transpose(a, zeros, pd, r);
    if (q > 0) gp = transpose(a, g, pg, r - 1 + q);
  }
  int64_t last = -1;
  V *idx = op2(a, DML_OP_UNSQUEEZE, I, cst_i64(a, &last, 1));
  if (idx && idx->type.dtype != DML_DTYPE_I64) idx = cast_to(a, idx, DML_DTYPE_I64);
  V *in[3] = {zeros, idx, gp};
  dml_ir_node_t *s = zeros && idx && gp ? mk(a, DML_OP_SCATTER_ND, 3, in, 1) : NULL;
  if (s && !a->st) a->st = dml_ir_node_set_attr_string(s, "reduction", "add");
  V *d = fin(a, s);
  acc(a, D, ax != 0 ? transpose(a, d, inv, r) : d);
}

/* GatherElements-13: y[i] = x[..., I[i], ...] along the axis, so dx =
 * ScatterElements of g into zeros at I with reduction add. */
static void vjp_gather_elements(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *D = n->inputs[0], *I = n->inputs[1];
  if (!needs(a, D)) return;
  V *in[3] = {zeros_like(a, D), I, g};
  dml_ir_node_t *s = in[0] ? mk(a, DML_OP_SCATTER_ELEMENTS, 3, in, 1) : NULL;
  set_int(a, s, "axis", attr_i(n, "axis", 0));
  if (s && !a->st) a->st = dml_ir_node_set_attr_string(s, "reduction", "add");
  acc(a, D, fin(a, s));
}

/* The formula table's binary ops (ew_ops.def's DML_EW2): the gradients of
 * x and y of its DX and DY over g, x, y (cast to the output's dtype where
 * Pow's exponent has another) and the output z, numpy broadcasting undone
 * by unbroadcast(). */
static V *ew2_operand(ad_t *a, V *v, dml_dtype_t dt) {
  return v->type.dtype == dt ? v : cast_to(a, v, dt);
}
#pragma push_macro("OP")
#undef OP
#define X x
#define Y ew2_operand(a, y, dt)
#define Z z
#define G g
#define K(c) cst(a, dt, (double)(c))
#define ADD(u, v) op2(a, DML_OP_ADD, u, v)
#define SUB(u, v) op2(a, DML_OP_SUB, u, v)
#define MUL(u, v) op2(a, DML_OP_MUL, u, v)
#define DIV(u, v) op2(a, DML_OP_DIV, u, v)
#define NEG(u) op1(a, DML_OP_NEG, u)
#define ABS(u) op1(a, DML_OP_ABS, u)
#define FLOOR(u) op1(a, DML_OP_FLOOR, u)
#define LOG(u) op1(a, DML_OP_LOG, u)
#define POW(u, v) op2(a, DML_OP_POW, u, v)
#define GE(u, v) op2(a, DML_OP_GREATER_OR_EQUAL, u, v)
#define LE(u, v) op2(a, DML_OP_LESS_OR_EQUAL, u, v)
#define GT(u, v) op2(a, DML_OP_GREATER, u, v)
#define SEL(c, u, v) op3(a, DML_OP_WHERE, c, u, v)
#define OP(e, u) op1(a, DML_OP_##e, u)
static V *ew2_grad(ad_t *a, dml_op_t op, int wrt_y, V *g, V *x, V *y, V *z,
                   dml_dtype_t dt) {
  switch (op) {
#define DML_EW2(e, attrs, ints, value, dx, dy) \
  case DML_OP_##e:                             \
    return wrt_y ? (dy) : (dx);
#include "ew_ops.def"
#undef DML_EW2
    default: return NULL;
  }
}
#undef X
#undef Y
#undef Z
#undef G
#undef K
#undef ADD
#undef SUB
#undef MUL
#undef DIV
#undef NEG
#undef ABS
#undef FLOOR
#undef LOG
#undef POW
#undef GE
#undef LE
#undef GT
#undef SEL
#undef OP
#pragma pop_macro("OP")

static void vjp_ew2(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *x = n->inputs[0], *y = n->inputs[1], *z = n->outputs[0];
  dml_dtype_t dt = z->type.dtype;
  if (needs(a, x)) acc(a, x, unbroadcast(a, ew2_grad(a, n->op, 0, g, x, y, z, dt), x));
  if (needs(a, y)) acc(a, y, unbroadcast(a, ew2_grad(a, n->op, 1, g, x, y, z, dt), y));
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

/* FakeQuantize: the straight-through estimator (FakeQuantizeGrad with the
 * node's attributes: dy where x quantizes within [quant_min, quant_max],
 * else 0; PyTorch's FakeQuantize backward). The range carries no gradient:
 * it is an observer's statistic (PyTorch computes it under no_grad), also
 * when train_step derives it from x (passes/train.c). */
static void vjp_fake_quantize(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *x = n->inputs[0];
  if (!needs(a, x)) return;
  V *r = n->n_inputs > 1 ? n->inputs[1] : NULL;
  V *in[3] = {g, x, r};
  dml_ir_node_t *k = mk(a, DML_OP_FAKE_QUANTIZE_GRAD, r ? 3 : 2, in, 1);
  for (uint32_t i = 0; k && i < n->n_attrs && !a->st; i++)
    a->st = dml_ir_node_set_attr(k, &n->attrs[i]);
  acc(a, x, fin(a, k));
}

/* The backward of a normalization y = xhat s + b, xhat = (x - mu) rstd,
 * mu and var = mean((x - mu)^2) (population variance) over `axes` of x,
 * rstd = 1 / sqrt(var + eps), with dxhat = g s given:
 *   dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat))
 * (the standard batch-norm backward: differentiate mu and var through
 * xhat; e.g. Ioffe & Szegedy 2015, sec. 3). Statistics are recomputed from
 * x as the kernels compute them (in x's dtype). Sets *out_xhat, *out_rstd,
 * *out_d (x - mu) for the parameter gradients. */
static V *norm_backward(ad_t *a, V *x, const int64_t *axes, size_t na, double eps,
                        V *dxhat, V **out_xhat, V **out_rstd, V **out_d) {
  dml_dtype_t dt = x->type.dtype;
  V *mu = reduce_op(a, DML_OP_REDUCE_MEAN, x, axes, na, 1);
  V *d = op2(a, DML_OP_SUB, x, mu);
  V *var = reduce_op(a, DML_OP_REDUCE_MEAN, op2(a, DML_OP_MUL, d, d), axes, na, 1);
  V *rstd = op1(a, DML_OP_RECIPROCAL,
                op1(a, DML_OP_SQRT, op2(a, DML_OP_ADD, var, cst(a, dt, eps))));
  V *xhat = op2(a, DML_OP_MUL, d, rstd);
  *out_xhat = xhat;
  *out_rstd = rstd;
  *out_d = d;
  if (!dxhat) return NULL;
  V *m1 = reduce_op(a, DML_OP_REDUCE_MEAN, dxhat, axes, na, 1);
  V *m2 = reduce_op(a, DML_OP_REDUCE_MEAN, op2(a, DML_OP_MUL, dxhat, xhat), axes, na, 1);
  return op2(
      a, DML_OP_MUL, rstd,
      op2(a, DML_OP_SUB, op2(a, DML_OP_SUB, dxhat, m1), op2(a, DML_OP_MUL, xhat, m2)));
}

/* A per-channel [C] tensor as [1, C, 1, ...] for x of rank r. */
static V *per_channel(ad_t *a, V *c, int32_t r) {
  int64_t ax[DML_MAX_RANK];
  int64_t k = 0;
  ax[k++] = 0;
  for (int32_t i = 2; i < r; i++) ax[k++] = i;
  return unsqueeze(a, c, ax, k);
}

/* BatchNormalization-15 and InstanceNormalization-6 (per-channel scale and
 * B of shape [C], channel = dim 1):
 *   training mode (BN training_mode = 1) and InstanceNorm: batch statistics
 *   over (0, 2, ...) resp. (2, ...): dx by norm_backward with dxhat = g s;
 *   BN's running_mean/running_var outputs (input * momentum + batch stat *
 *   (1 - momentum)) pass g * momentum to input_mean/input_var and
 *   (1 - momentum) g_rm / M, (1 - momentum) g_rv 2 (x - mu) / M to x
 *   (M = elements per channel; var is the population variance, as the
 *   kernel's).
 *   inference mode: y = (x - mean) s rstd + b with rstd = 1/sqrt(var + eps)
 *   from the inputs: dx = g s rstd, dmean = -sum g s rstd,
 *   dvar = -1/2 sum g s (x - mean) rstd^3.
 *   Both: dscale = sum g xhat, dB = sum g over every axis but 1. */
static void vjp_batchnorm(ad_t *a, const dml_ir_node_t *n, V *g) {
  int inst = n->op == DML_OP_INSTANCE_NORMALIZATION;
  V *X = n->inputs[0], *S = n->inputs[1], *B = n->inputs[2];
  V *M = inst ? NULL : n->inputs[3], *Vr = inst ? NULL : n->inputs[4];
  int32_t r = X->type.rank;
  dml_dtype_t dt = X->type.dtype;
  double eps = attr_f(n, "epsilon", 1e-5);
  int train = inst || attr_i(n, "training_mode", 0) != 0;
  int64_t all[DML_MAX_RANK], stat[DML_MAX_RANK];
  size_t nall = 0, nstat = 0;
  for (int32_t i = 0; i < r; i++)
    if (i != 1) all[nall++] = i;
  for (int32_t i = inst ? 2 : 0; i < r; i++)
    if (i != 1) stat[nstat++] = i;
  V *Sc = per_channel(a, S, r), *xhat = NULL, *rstd = NULL, *d = NULL;
  if (train) {
    V *gm = n->n_outputs > 1 ? a->grad[n->outputs[1]->id] : NULL;
    V *gv = n->n_outputs > 2 ? a->grad[n->outputs[2]->id] : NULL;
    V *dx = norm_backward(a, X, stat, nstat, eps,
                          g && needs(a, X) ? op2(a, DML_OP_MUL, g, Sc) : NULL, &xhat,
                          &rstd, &d);
    double mom = attr_f(n, "momentum", 0.9);
    if ((gm || gv) && needs(a, X)) {
      /* 1 / M as a value: numel(x) / C (symbolic batch included) */
      V *cnt = cast_to(
          a, op2(a, DML_OP_DIV, op1(a, DML_OP_SIZE, X), op1(a, DML_OP_SIZE, S)), dt);
      V *w = op2(a, DML_OP_DIV, cst(a, dt, 1.0 - mom), cnt);
      if (gm) {
        V *t = op2(a, DML_OP_MUL, per_channel(a, cast_to(a, gm, dt), r), w);
        t = op2(a, DML_OP_EXPAND, t, shape_of(a, X));
        dx = dx ? op2(a, DML_OP_ADD, dx, t) : t;
      }
      if (gv) {
        V *t = op2(a, DML_OP_MUL, per_channel(a, cast_to(a, gv, dt), r),
                   op2(a, DML_OP_MUL, w, cst(a, dt, 2)));
        t = op2(a, DML_OP_MUL, t, d);
        dx = dx ? op2(a, DML_OP_ADD, dx, t) : t;
      }
    }
    if (needs(a, X)) acc(a, X, dx);
    if (gm && M && needs(a, M))
      acc(a, M, op2(a, DML_OP_MUL, gm, cst(a, gm->type.dtype, mom)));
    if (gv && Vr && needs(a, Vr))
      acc(a, Vr, op2(a, DML_OP_MUL, gv, cst(a, gv->type.dtype, mom)));
  } else {
    V *Mc = per_channel(a, M, r);
    rstd = per_channel(
        a,
        op1(a, DML_OP_RECIPROCAL,
            op1(a, DML_OP_SQRT, op2(a, DML_OP_ADD, Vr, cst(a, Vr->type.dtype, eps)))),
        r);
    if (rstd && rstd->type.dtype != dt) rstd = cast_to(a, rstd, dt);
    if (Mc && Mc->type.dtype != dt) Mc = cast_to(a, Mc, dt);
    d = op2(a, DML_OP_SUB, X, Mc);
    xhat = op2(a, DML_OP_MUL, d, rstd);
    V *gs = g ? op2(a, DML_OP_MUL, g, Sc) : NULL;
    if (gs && needs(a, X)) acc(a, X, op2(a, DML_OP_MUL, gs, rstd));
    if (gs && needs(a, M)) {
      V *t =
          reduce_sum(a, op1(a, DML_OP_NEG, op2(a, DML_OP_MUL, gs, rstd)), all, nall, 0);
      acc(a, M, t && t->type.dtype != M->type.dtype ? cast_to(a, t, M->type.dtype) : t);
    }
    if (gs && needs(a, Vr)) {
      V *r3 = op2(a, DML_OP_MUL, rstd, op2(a, DML_OP_MUL, rstd, rstd));
      V *t = reduce_sum(a,
                        op2(a, DML_OP_MUL, op2(a, DML_OP_MUL, gs, d),
                            op2(a, DML_OP_MUL, r3, cst(a, dt, -0.5))),
                        all, nall, 0);
      acc(a, Vr,
          t && t->type.dtype != Vr->type.dtype ? cast_to(a, t, Vr->type.dtype) : t);
    }
  }
  if (g && needs(a, S))
    acc(a, S, reduce_sum(a, op2(a, DML_OP_MUL, g, xhat), all, nall, 0));
  if (g && needs(a, B)) acc(a, B, reduce_sum(a, g, all, nall, 0));
}

/* LayerNormalization-17: statistics over dims [axis, rank), Scale and B
 * broadcast to those dims: dx by norm_backward with dxhat = g Scale,
 * dScale = unbroadcast(g xhat), dB = unbroadcast(g); the optional Mean and
 * InvStdDev outputs add dMean / M and -dInvStdDev rstd^3 (x - mu) / M to
 * dx (M = elements per normalized group; d rstd / d x_i = -rstd^3 (x_i -
 * mu) / M). */
static void vjp_layernorm(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *X = n->inputs[0], *S = n->inputs[1], *B = n->n_inputs > 2 ? n->inputs[2] : NULL;
  int32_t r = X->type.rank;
  dml_dtype_t dt = X->type.dtype;
  int64_t axis = attr_i(n, "axis", -1);
  if (axis < 0) axis += r;
  int64_t axes[DML_MAX_RANK];
  size_t na = 0;
  for (int32_t i = (int32_t)axis; i < r; i++) axes[na++] = i;
  V *gm = n->n_outputs > 1 ? a->grad[n->outputs[1]->id] : NULL;
  V *gr = n->n_outputs > 2 ? a->grad[n->outputs[2]->id] : NULL;
  V *xhat = NULL, *rstd = NULL, *d = NULL;
  V *dx =
      norm_backward(a, X, axes, na, attr_f(n, "epsilon", 1e-5),
                    g && needs(a, X) ? op2(a, DML_OP_MUL, g, S) : NULL, &xhat, &rstd, &d);
  if ((gm || gr) && needs(a, X)) {
    V *cnt = cast_to(
        a, op2(a, DML_OP_DIV, op1(a, DML_OP_SIZE, X), op1(a, DML_OP_SIZE, n->outputs[1])),
        dt);
    if (gm) {
      V *t = op2(a, DML_OP_EXPAND,
                 op2(a, DML_OP_DIV, gm->type.dtype == dt ? gm : cast_to(a, gm, dt), cnt),
                 shape_of(a, X));
      dx = dx ? op2(a, DML_OP_ADD, dx, t) : t;
    }
    if (gr) {
      V *r3 = op2(a, DML_OP_MUL, rstd, op2(a, DML_OP_MUL, rstd, rstd));
      V *t = op2(a, DML_OP_MUL, op2(a, DML_OP_MUL, r3, d),
                 op2(a, DML_OP_DIV, gr->type.dtype == dt ? gr : cast_to(a, gr, dt), cnt));
      dx = dx ? op2(a, DML_OP_SUB, dx, t) : op1(a, DML_OP_NEG, t);
    }
  }
  if (needs(a, X)) acc(a, X, dx);
  if (g && needs(a, S)) acc(a, S, unbroadcast(a, op2(a, DML_OP_MUL, g, xhat), S));
  if (g && B && needs(a, B)) acc(a, B, unbroadcast(a, g, B));
}

/* ConvTranspose-11 (explicit pads or VALID; y[o] gets x[i] W[k] at o = i s +
 * k d - pb): dX = Conv(g, W) with the same strides, dilations, group and
 * begin pads (each x[i] reads the y positions it wrote), end pads chosen so
 * that Conv's output has X's size; dW = ConvWeightGrad(X, g) with those
 * attributes (ConvTranspose is Conv's input gradient, so its weight
 * gradient is ConvWeightGrad with the roles of dY and X swapped); dB sums
 * g over N and space. */
static void vjp_conv_transpose(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *X = n->inputs[0], *W = n->inputs[1], *B = n->n_inputs > 2 ? n->inputs[2] : NULL;
  V *Y = n->outputs[0];
  int32_t r = X->type.rank - 2;
  size_t ns, nd, np, nop, nos;
  const int64_t *st = attr_is(n, "strides", &ns), *dl = attr_is(n, "dilations", &nd);
  const int64_t *pads = attr_is(n, "pads", &np),
                *opad = attr_is(n, "output_padding", &nop);
  attr_is(n, "output_shape", &nos);
  const dml_attr_t *ap = dml_ir_node_attr(n, "auto_pad");
  const char *autopad = ap && ap->kind == DML_ATTR_STRING ? ap->s : "NOTSET";
  if (nos || (strcmp(autopad, "NOTSET") && strcmp(autopad, "VALID"))) {
    unsupported(a, n, "output_shape or SAME auto_pad (pads not given)");
    return;
  }
  int valid = !strcmp(autopad, "VALID");
  int64_t s[DML_MAX_RANK], d[DML_MAX_RANK], k[DML_MAX_RANK], p2[2 * DML_MAX_RANK];
  for (int32_t i = 0; i < r; i++) {
    dml_dim_t in = X->type.dims[2 + i], out = Y->type.dims[2 + i];
    if (in.sym >= 0 || out.sym >= 0) {
      unsupported(a, n, "symbolic spatial dims");
      return;
    }
    s[i] = st && ns == (size_t)r ? st[i] : 1;
    d[i] = dl && nd == (size_t)r ? dl[i] : 1;
    k[i] = W->type.dims[2 + i].value;
    int64_t pb = !valid && pads && np == 2 * (size_t)r ? pads[i] : 0;
    int64_t pe = !valid && pads && np == 2 * (size_t)r ? pads[r + i] : 0;
    int64_t op = opad && nop == (size_t)r ? opad[i] : 0;
    /* Conv's output: floor((Ly + pb + pe' - ek) / s) + 1 = Lx needs
     * 0 <= op - pe + pe' < s. */
    int64_t pe2 = pe >= op ? pe - op : 0;
    if (op - pe + pe2 >= s[i]) {
      unsupported(a, n, "output_padding not below the stride");
      return;
    }
    p2[i] = pb;
    p2[r + i] = pe2;
  }
  static const char *const names[] = {"strides", "dilations", "kernel_shape", "pads"};
  const int64_t *vals[] = {s, d, k, p2};
  if (needs(a, X)) {
    V *in[2] = {g, W};
    dml_ir_node_t *t = mk(a, DML_OP_CONV, 2, in, 1);
    for (int i = 0; i < 4; i++)
      set_ints(a, t, names[i], vals[i], (size_t)(i == 3 ? 2 * r : r));
    copy_attr(a, t, n, "group");
    acc(a, X, fin(a, t));
  }
  if (needs(a, W)) {
    V *in[2] = {X, g};
    dml_ir_node_t *t = mk(a, DML_OP_CONV_WEIGHT_GRAD, 2, in, 1);
    for (int i = 0; i < 4; i++)
      set_ints(a, t, names[i], vals[i], (size_t)(i == 3 ? 2 * r : r));
    copy_attr(a, t, n, "group");
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

/* Einsum-12 without ellipsis or repeated subscripts in one term: the
 * result is linear in each operand, y[out] = sum over the other labels of
 * prod_j x_j[s_j], so dx_i[s_i] = sum of g[out] prod_{j != i} x_j[s_j]:
 * the Einsum "out,s_j...->s_i'" with s_i' the labels of s_i found in the
 * output or another operand, then Unsqueeze and Expand over the labels
 * only x_i has (summed away by the forward, so each element gets the
 * same gradient). Implicit outputs (no "->") are the labels used once, in
 * alphabetical order (numpy). Each label must have one static size. */
static void vjp_einsum(ad_t *a, const dml_ir_node_t *n, V *g) {
  const dml_attr_t *ae = dml_ir_node_attr(n, "equation");
  const char *eq = ae && ae->kind == DML_ATTR_STRING ? ae->s : NULL;
  uint32_t k = n->n_inputs;
  char terms[DML_MAX_RANK + 1][DML_MAX_RANK + 1];
  char out[DML_MAX_RANK + 1] = {0};
  int cnt[128] = {0};
  int64_t size[128];
  uint32_t t = 0;
  size_t len = 0;
  int explicit_out = 0;
  if (!eq || k > DML_MAX_RANK) {
    unsupported(a, n, "no equation, or more operands than supported");
    return;
  }
  memset(terms, 0, sizeof terms);
  const char *arrow = strstr(eq, "->");
  explicit_out = arrow != NULL;
  for (const char *c = eq; *c; c++) {
    if (c == arrow) {
      c++;
      len = 0;
      t++;
      continue;
    }
    if (*c == ' ') continue;
    int in_out = arrow && c > arrow;
    if (*c == ',' && !in_out) {
      if (++t >= DML_MAX_RANK + 1) break;
      len = 0;
      continue;
    }
    int letter = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z');
    if (!letter || len >= DML_MAX_RANK) {
      unsupported(a, n, "ellipsis or an unexpected character in the equation");
      return;
    }
    char *term = in_out ? out : terms[t];
    if (memchr(term, *c, len)) {
      unsupported(a, n, "a repeated subscript in one term (diagonal)");
      return;
    }
    term[len++] = *c;
    if (!in_out) cnt[(int)*c]++;
  }
  if (!arrow) t++;
  if (t != k) {
    unsupported(a, n, "the equation's terms do not match the operands");
    return;
  }
  if (!explicit_out) {
    size_t m = 0;
    for (int c = 'A'; c <= 'z'; c++)
      if (cnt[c] == 1 && m < DML_MAX_RANK) out[m++] = (char)c;
  }
  for (int c = 0; c < 128; c++) size[c] = -1;
  for (uint32_t i = 0; i < k; i++) {
    V *x = n->inputs[i];
    if ((size_t)x->type.rank != strlen(terms[i]) || !all_static(x)) {
      unsupported(a, n, "a term's rank differs from its operand's, or symbolic dims");
      return;
    }
    for (int32_t d = 0; d < x->type.rank; d++) {
      int c = terms[i][d];
      if (size[c] >= 0 && size[c] != x->type.dims[d].value) {
        unsupported(a, n, "a subscript with two sizes (broadcasting)");
        return;
      }
      size[c] = x->type.dims[d].value;
    }
  }
  for (uint32_t i = 0; i < k; i++) {
    V *x = n->inputs[i];
    if (!needs(a, x)) continue;
    /* s_i': labels of term i seen in the output or another term. */
    char keep[DML_MAX_RANK + 1] = {0};
    int64_t miss[DML_MAX_RANK];
    int64_t nk = 0, nm = 0;
    for (int32_t d = 0; terms[i][d]; d++) {
      char c = terms[i][d];
      int seen = strchr(out, c) != NULL;
      for (uint32_t j = 0; j < k && !seen; j++) seen = j != i && strchr(terms[j], c);
      if (seen)
        keep[nk++] = c;
      else
        miss[nm++] = d;
    }
    char geq[256];
    size_t p = (size_t)snprintf(geq, sizeof geq, "%s", out);
    V *ins[DML_MAX_RANK + 1];
    uint32_t ni = 0;
    ins[ni++] = g;
    for (uint32_t j = 0; j < k; j++) {
      if (j == i) continue;
      p += (size_t)snprintf(geq + p, sizeof geq - p, ",%s", terms[j]);
      ins[ni++] = n->inputs[j];
    }
    snprintf(geq + p, sizeof geq - p, "->%s", keep);
    dml_ir_node_t *e = mk(a, DML_OP_EINSUM, ni, ins, 1);
    if (e && !a->st) a->st = dml_ir_node_set_attr_string(e, "equation", geq);
    V *dx = fin(a, e);
    if (nm) dx = op2(a, DML_OP_EXPAND, unsqueeze(a, dx, miss, nm), shape_of(a, x));
    acc(a, x, dx);
  }
}

/* The value of a string attribute, or `dflt`. */
static const char *attr_s(const dml_ir_node_t *n, const char *k, const char *dflt) {
  const dml_attr_t *at = dml_ir_node_attr(n, k);
  return at && at->kind == DML_ATTR_STRING ? at->s : dflt;
}

/* The rules of the selection and scatter ops:
 *   TopK-11: the values are x's elements at the Indices output, so dx =
 *     ScatterElements of g into zeros at Indices with reduction add.
 *   GatherND-13 (batch_dims 0): dData = ScatterND of g into zeros at the
 *     indices, reduction add.
 *   ScatterND-16 / ScatterElements-16 with reduction none: the output is
 *     data with the indexed elements replaced, so dData = g with those
 *     elements zeroed (the same scatter of zeros into g) and dUpdates =
 *     g at the indices (GatherND / GatherElements; the spec leaves
 *     duplicate indices undefined); with reduction add: dData = g and the
 *     same dUpdates.
 *   Trilu-14 and ReverseSequence-10 are linear masks and permutations that
 *   are their own adjoints: the same op applied to g.
 *   Hardmax-13 is piecewise constant: a zero gradient. */
static void vjp_top_k(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *X = n->inputs[0];
  dml_ir_node_t *t = NULL;
  if (!needs(a, X)) return;
  V *in[3] = {zeros_like(a, X), n->outputs[1], g};
  t = in[0] ? mk(a, DML_OP_SCATTER_ELEMENTS, 3, in, 1) : NULL;
  set_int(a, t, "axis", attr_i(n, "axis", -1));
  if (t && !a->st) a->st = dml_ir_node_set_attr_string(t, "reduction", "add");
  acc(a, X, fin(a, t));
}

static void vjp_gather_nd(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *X = n->inputs[0];
  dml_ir_node_t *t = NULL;
  if (!needs(a, X)) return;
  if (attr_i(n, "batch_dims", 0) != 0) {
    unsupported(a, n, "batch_dims other than 0");
    return;
  }
  V *in[3] = {zeros_like(a, X), n->inputs[1], g};
  t = in[0] ? mk(a, DML_OP_SCATTER_ND, 3, in, 1) : NULL;
  if (t && !a->st) a->st = dml_ir_node_set_attr_string(t, "reduction", "add");
  acc(a, X, fin(a, t));
}

static void vjp_scatter(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *X = n->inputs[0];
  dml_ir_node_t *t = NULL;
  V *I = n->inputs[1], *U = n->inputs[2];
  const char *red = attr_s(n, "reduction", "none");
  int nd = n->op == DML_OP_SCATTER_ND;
  if (strcmp(red, "none") && strcmp(red, "add")) {
    unsupported(a, n, "reduction mul, max or min");
    return;
  }
  if (needs(a, X)) {
    if (!strcmp(red, "add")) {
      acc(a, X, g);
    } else {
      V *in[3] = {g, I, zeros_like(a, U)};
      t = in[2] ? mk(a, n->op, 3, in, 1) : NULL;
      if (!nd) set_int(a, t, "axis", attr_i(n, "axis", 0));
      acc(a, X, fin(a, t));
    }
  }
  if (needs(a, U)) {
    V *in[2] = {g, I};
    t = mk(a, nd ? DML_OP_GATHER_ND : DML_OP_GATHER_ELEMENTS, 2, in, 1);
    if (!nd) set_int(a, t, "axis", attr_i(n, "axis", 0));
    acc(a, U, fin(a, t));
  }
}

static void vjp_self_adjoint(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *X = n->inputs[0];
  dml_ir_node_t *t = NULL;
  if (!needs(a, X)) return;
  V *in[2] = {g, n->n_inputs > 1 ? n->inputs[1] : NULL};
  t = mk(a, n->op, in[1] ? 2 : 1, in, 1);
  static const char *const keys[] = {"upper", "batch_axis", "time_axis"};
  for (size_t i = 0; i < 3; i++) copy_attr(a, t, n, keys[i]);
  acc(a, X, fin(a, t));
}

static void vjp_zero(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *X = n->inputs[0];
  /* EyeLike-9 and Random*Like-1 read only x's shape and dtype */
  if (needs(a, X)) acc(a, X, zeros_like(a, X));
}

/* MeanVarianceNormalization-13 (its function body): y = d / s, d = x - mu,
 * s = sigma + 1e-9, sigma = sqrt(mean(d^2)) over `axes` (default 0, 2, 3).
 * With dsigma/dx_j = d_j / (M sigma):
 *   dx = (g - mean(g)) / s - d mean(g d) / (s^2 sigma). */
static void vjp_mvn(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *X = n->inputs[0];
  if (!needs(a, X)) return;
  dml_dtype_t dt = X->type.dtype;
  size_t na;
  const int64_t *ax = attr_is(n, "axes", &na);
  int64_t axes[DML_MAX_RANK], def[3] = {0, 2, 3};
  if (!ax) ax = def, na = 3;
  if (na > DML_MAX_RANK) {
    unsupported(a, n, "too many axes");
    return;
  }
  for (size_t i = 0; i < na; i++) axes[i] = ax[i] < 0 ? ax[i] + X->type.rank : ax[i];
  V *mu = reduce_op(a, DML_OP_REDUCE_MEAN, X, axes, na, 1);
  V *d = op2(a, DML_OP_SUB, X, mu);
  V *sig = op1(a, DML_OP_SQRT,
               reduce_op(a, DML_OP_REDUCE_MEAN, op2(a, DML_OP_MUL, d, d), axes, na, 1));
  V *sv = op2(a, DML_OP_ADD, sig, cst(a, dt, 1e-9));
  V *t1 =
      op2(a, DML_OP_DIV,
          op2(a, DML_OP_SUB, g, reduce_op(a, DML_OP_REDUCE_MEAN, g, axes, na, 1)), sv);
  V *mgd = reduce_op(a, DML_OP_REDUCE_MEAN, op2(a, DML_OP_MUL, g, d), axes, na, 1);
  V *t2 = op2(a, DML_OP_DIV, op2(a, DML_OP_MUL, d, mgd),
              op2(a, DML_OP_MUL, op2(a, DML_OP_MUL, sv, sv), sig));
  acc(a, X, op2(a, DML_OP_SUB, t1, t2));
}

/* Sum over the channel window [c - a, c + b] (clipped to [0, C)) of t
 * along dim 1: t padded with a zeros before and b after along dim 1, and
 * the a + b + 1 shifted slices of length C added. */
static V *channel_window_sum(ad_t *a, V *t, int64_t lo, int64_t hi, int64_t C) {
  if (!t) return NULL;
  int32_t r = t->type.rank;
  int64_t pads[2 * DML_MAX_RANK] = {0};
  pads[1] = lo;
  pads[r + 1] = hi;
  V *tp = pad_zeros(a, t, pads), *sum = NULL;
  int64_t one = 1;
  for (int64_t k = 0; k <= lo + hi; k++) {
    int64_t e = k + C;
    V *sl = slice(a, tp, &k, &e, &one, NULL, 1);
    sum = sum ? op2(a, DML_OP_ADD, sum, sl) : sl;
  }
  return sum;
}

/* LRN-13: y = x D^-beta, D = bias + alpha / size S, S_c = sum of x_i^2 over
 * the window i in [c - lo, c + hi] (lo = floor((size-1)/2), hi =
 * ceil((size-1)/2)). x_c enters y_c directly and S_j for the j whose
 * window holds c, i.e. j in [c - hi, c + lo] (the mirrored window):
 *   dx = g D^-beta - 2 alpha beta / size x Wsum(g x D^(-beta-1)),
 * Wsum the mirrored window's sum (static channel count). */
static void vjp_lrn(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *X = n->inputs[0];
  if (!needs(a, X)) return;
  dml_dtype_t dt = X->type.dtype;
  int64_t size = attr_i(n, "size", 0);
  double al = attr_f(n, "alpha", 1e-4), be = attr_f(n, "beta", 0.75),
         bi = attr_f(n, "bias", 1.0);
  if (size < 1 || X->type.rank < 2 || X->type.dims[1].sym >= 0) {
    unsupported(a, n, "a symbolic channel count or no size");
    return;
  }
  int64_t C = X->type.dims[1].value, lo = (size - 1) / 2, hi = size / 2;
  V *S = channel_window_sum(a, op2(a, DML_OP_MUL, X, X), lo, hi, C);
  V *D = op2(a, DML_OP_ADD, op2(a, DML_OP_MUL, S, cst(a, dt, al / (double)size)),
             cst(a, dt, bi));
  V *Dmb = op2(a, DML_OP_POW, D, cst(a, dt, -be));
  V *t = op2(a, DML_OP_MUL, op2(a, DML_OP_MUL, g, X), op2(a, DML_OP_DIV, Dmb, D));
  V *w = channel_window_sum(a, t, hi, lo, C);
  V *dx = op2(a, DML_OP_SUB, op2(a, DML_OP_MUL, g, Dmb),
              op2(a, DML_OP_MUL, op2(a, DML_OP_MUL, X, w),
                  cst(a, dt, 2.0 * al * be / (double)size)));
  acc(a, X, dx);
}

/* NegativeLogLikelihoodLoss-13 and SoftmaxCrossEntropyLoss-13 (reduction
 * none/sum/mean, weight, ignore_index): with t the target (ignored ones
 * replaced by class 0), w = weight[t] (1 without weight) times 0 where
 * target == ignore_index, loss[n,d] = -logp[n, t, d] w[n,d], summed or
 * divided by sum(w) for mean. So dlogp = ScatterElements into zeros along
 * axis 1 of -g' w at t, g' = g (none), g broadcast (sum) or g / sum(w)
 * (mean); for SoftmaxCrossEntropyLoss logp = LogSoftmax(scores, 1) (plus
 * the log_prob output's own gradient) and dscores = dlogp - exp(logp)
 * sum_c dlogp (LogSoftmax's rule). The weights get no gradient. */
static void vjp_class_loss(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *X = n->inputs[0], *T = n->inputs[1], *W = n->n_inputs > 2 ? n->inputs[2] : NULL;
  int sce = n->op == DML_OP_SOFTMAX_CROSS_ENTROPY_LOSS;
  if (!needs(a, X)) return;
  if (W && needs(a, W)) {
    unsupported(a, n, "gradients with respect to the class weights");
    return;
  }
  dml_dtype_t dt = X->type.dtype;
  const char *red = attr_s(n, "reduction", "mean");
  int has_ii = dml_ir_node_attr(n, "ignore_index") != NULL;
  int64_t ii = attr_i(n, "ignore_index", 0), zero_i = 0, one = 1;
  V *gl = g; /* the loss output's gradient */
  V *glp = sce && n->n_outputs > 1 ? a->grad[n->outputs[1]->id] : NULL;
  V *dlogp = glp;
  if (gl) {
    V *ti = T, *valid = NULL;
    if (has_ii) {
      V *ign = op2(a, DML_OP_EQUAL, T, cast_to(a, cst_i64(a, &ii, 1), T->type.dtype));
      ti =
          op3(a, DML_OP_WHERE, ign, cast_to(a, cst_i64(a, &zero_i, 1), T->type.dtype), T);
      valid = op1(a, DML_OP_NOT, ign);
    }
    V *w = W ? op2(a, DML_OP_GATHER, W, ti) : NULL;
    if (valid) {
      V *vm = cast_to(a, valid, dt);
      w = w ? op2(a, DML_OP_MUL, w, vm) : vm;
    }
    V *coef;
    if (!strcmp(red, "none")) {
      coef = gl;
    } else if (!strcmp(red, "sum")) {
      coef = op2(a, DML_OP_EXPAND, gl, shape_of(a, T));
    } else {
      V *den = w ? reduce_sum(a, w, NULL, 0, 0) : cast_to(a, op1(a, DML_OP_SIZE, T), dt);
      coef = op2(a, DML_OP_EXPAND, op2(a, DML_OP_DIV, gl, den), shape_of(a, T));
    }
    if (w) coef = op2(a, DML_OP_MUL, coef, w);
    coef = op1(a, DML_OP_NEG, coef);
    V *in[3] = {zeros_like(a, X), unsqueeze(a, cast_to(a, ti, DML_DTYPE_I64), &one, 1),
                unsqueeze(a, coef, &one, 1)};
    dml_ir_node_t *sc =
        in[0] && in[1] && in[2] ? mk(a, DML_OP_SCATTER_ELEMENTS, 3, in, 1) : NULL;
    set_int(a, sc, "axis", 1);
    V *d = fin(a, sc);
    dlogp = dlogp ? op2(a, DML_OP_ADD, dlogp, d) : d;
  }
  if (!sce) {
    acc(a, X, dlogp);
    return;
  }
  dml_ir_node_t *ls = mk(a, DML_OP_LOG_SOFTMAX, 1, &X, 1);
  set_int(a, ls, "axis", 1);
  V *lp = fin(a, ls);
  acc(a, X,
      op2(a, DML_OP_SUB, dlogp,
          op2(a, DML_OP_MUL, op1(a, DML_OP_EXP, lp), softmax_axis_sum(a, dlogp, 1))));
}

/* DFT-17 (dft_length absent or equal to the signal length n): the
 * transform is linear, y = F x (inverse: y = F^H x / n, F_jk =
 * exp(-2 pi i jk / n)), so dx = F^H g = n IDFT(g) (inverse: F g / n =
 * DFT(g) / n), as a real-linear map on [re, im] pairs. A real input takes
 * the real part of that; a one-sided output (bins n/2 + 1) is the first
 * bins of the full one, so g is padded with zero bins to n first. */
static void vjp_dft(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *X = n->inputs[0], *L = n->n_inputs > 1 ? n->inputs[1] : NULL;
  if (!needs(a, X)) return;
  int32_t r = X->type.rank;
  int64_t ax = attr_i(n, "axis", 1), inv = attr_i(n, "inverse", 0) != 0;
  if (ax < 0) ax += r;
  if (r < 2 || ax < 0 || ax >= r - 1 || X->type.dims[ax].sym >= 0) {
    unsupported(a, n, "a symbolic signal length");
    return;
  }
  int64_t len = X->type.dims[ax].value, dl[1];
  size_t ndl = 0;
  if (L && (!const_int(L, dl, 1, &ndl) || ndl != 1 || dl[0] != len)) {
    unsupported(a, n, "dft_length is not a constant equal to the signal length");
    return;
  }
  V *G = g;
  if (attr_i(n, "onesided", 0) && g && g->type.dims[ax].sym < 0 &&
      g->type.dims[ax].value < len) {
    int64_t pads[2 * DML_MAX_RANK] = {0};
    pads[r + ax] = len - g->type.dims[ax].value;
    G = pad_zeros(a, g, pads);
  }
  dml_ir_node_t *t = mk(a, DML_OP_DFT, 1, &G, 1);
  set_int(a, t, "axis", ax);
  set_int(a, t, "inverse", !inv);
  V *d = op2(a, DML_OP_MUL, fin(a, t),
             cst(a, X->type.dtype, inv ? 1.0 / (double)len : (double)len));
  if (X->type.dims[r - 1].sym < 0 && X->type.dims[r - 1].value == 1) {
    int64_t z = 0, o = 1, last = r - 1;
    d = slice(a, d, &z, &o, &last, NULL, 1); /* the real part */
  }
  acc(a, X, d);
}

/* Sum-13, Mean-13, Max-13, Min-13 with any number of inputs (numpy
 * broadcasting): Sum passes g to each input, Mean g / count; Max/Min pass g
 * to the first input equal to the result (ties go to the first, as the
 * two-input rule) and zero to the others. */
static void vjp_variadic(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *y = n->outputs[0];
  dml_dtype_t dt = y->type.dtype;
  uint32_t k = n->n_inputs;
  if (n->op == DML_OP_SUM || n->op == DML_OP_MEAN) {
    V *gi = n->op == DML_OP_MEAN && k > 1
                ? op2(a, DML_OP_MUL, g, cst(a, dt, 1.0 / (double)k))
                : g;
    for (uint32_t i = 0; i < k; i++)
      if (needs(a, n->inputs[i])) acc(a, n->inputs[i], unbroadcast(a, gi, n->inputs[i]));
    return;
  }
  if (k == 1) {
    acc(a, n->inputs[0], g);
    return;
  }
  V *taken = NULL, *zero = cst(a, dt, 0);
  for (uint32_t i = 0; i < k; i++) {
    V *x = n->inputs[i];
    V *eq = op2(a, DML_OP_EQUAL, x, y);
    V *own = taken ? op2(a, DML_OP_AND, eq, op1(a, DML_OP_NOT, taken)) : eq;
    if (needs(a, x)) acc(a, x, unbroadcast(a, op3(a, DML_OP_WHERE, own, g, zero), x));
    if (i + 1 < k) taken = taken ? op2(a, DML_OP_OR, taken, own) : own;
  }
}

/* Reductions other than Sum/Mean (ONNX 18 definitions, axes as input or
 * attribute), with gk, yk = g, Y with the reduced axes kept (size 1):
 *   ReduceSumSquare  sum x^2          dx = 2 x gk
 *   ReduceL1         sum |x|          dx = sign(x) gk
 *   ReduceL2         sqrt(sum x^2)    dx = x / yk gk (0 where yk = 0, as
 *                                     PyTorch's norm)
 *   ReduceLogSum     log(sum x)       dx = gk / sum x = gk exp(-yk)
 *   ReduceLogSumExp  log(sum exp x)   dx = gk exp(x - yk) (softmax)
 *   ReduceProd       prod x           dx = gk prod_{j != i} x_j: yk / x_i
 *                                     where x_i != 0; at a zero, the
 *                                     product of the other (nonzero)
 *                                     elements if it is the only zero,
 *                                     else 0 (exact with zeros)
 *   ReduceMax/Min    max/min          gk split evenly between the elements
 *                                     equal to yk (PyTorch's amax/amin;
 *                                     MaxPool's rule picks one instead). */
/* dY/dX of the reductions other than ReduceSum/ReduceMean, from X, Y with
 * the reduced axes kept (yk) and the axes: rd_t. */
typedef struct {
  V *X, *yk, *zero;
  dml_dtype_t dt;
  const int64_t *axes;
  size_t na;
} rd_t;

static V *d_reduce_sum_square(ad_t *a, const rd_t *r) {
  return op2(a, DML_OP_MUL, r->X, cst(a, r->dt, 2));
}
static V *d_reduce_l1(ad_t *a, const rd_t *r) {
  return op1(a, DML_OP_SIGN, r->X);
}
static V *d_reduce_l2(ad_t *a, const rd_t *r) {
  return op3(a, DML_OP_WHERE, op2(a, DML_OP_EQUAL, r->yk, r->zero), r->zero,
             op2(a, DML_OP_DIV, r->X, r->yk));
}
static V *d_reduce_log_sum(ad_t *a, const rd_t *r) {
  return op1(a, DML_OP_EXP, op1(a, DML_OP_NEG, r->yk));
}
static V *d_reduce_log_sum_exp(ad_t *a, const rd_t *r) {
  return op1(a, DML_OP_EXP, op2(a, DML_OP_SUB, r->X, r->yk));
}
static V *d_reduce_prod(ad_t *a, const rd_t *r) {
  V *X = r->X, *zero = r->zero, *one = cst(a, r->dt, 1);
  V *isz = op2(a, DML_OP_EQUAL, X, zero);
  V *safe = op3(a, DML_OP_WHERE, isz, one, X);
  V *pnz = reduce_op(a, DML_OP_REDUCE_PROD, safe, r->axes, r->na, 1);
  V *nz = reduce_op(a, DML_OP_REDUCE_SUM, cast_to(a, isz, r->dt), r->axes, r->na, 1);
  V *at0 = op3(a, DML_OP_WHERE, op2(a, DML_OP_EQUAL, nz, one), pnz, zero);
  return op3(a, DML_OP_WHERE, isz, at0, op2(a, DML_OP_DIV, r->yk, safe));
}
/* ReduceMax, ReduceMin: g shared among the ties. */
static V *d_reduce_max_min(ad_t *a, const rd_t *r) {
  V *m = cast_to(a, op2(a, DML_OP_EQUAL, r->X, r->yk), r->dt);
  V *cnt = reduce_op(a, DML_OP_REDUCE_SUM, m, r->axes, r->na, 1);
  return op2(a, DML_OP_DIV, m, cnt);
}

static void reduce_other(ad_t *a, const dml_ir_node_t *n, V *g,
                         V *(*d_of)(ad_t *, const rd_t *)) {
  V *X = n->inputs[0], *Y = n->outputs[0];
  if (!needs(a, X)) return;
  dml_dtype_t dt = X->type.dtype;
  int64_t axes[DML_MAX_RANK];
  size_t na = 0;
  if (!reduce_axes(n, X, axes, &na)) {
    unsupported(a, n, "axes are not a constant");
    return;
  }
  if (na == 0) { /* noop_with_empty_axes: the kernels copy x */
    acc(a, X, g);
    return;
  }
  V *gk = g, *yk = Y;
  if (!attr_i(n, "keepdims", 1)) {
    gk = unsqueeze(a, g, axes, (int64_t)na);
    yk = unsqueeze(a, Y, axes, (int64_t)na);
  }
  rd_t r = {X, yk, cst(a, dt, 0), dt, axes, na};
  V *d = d_of(a, &r);
  V *dx = op2(a, DML_OP_MUL, d, gk);
  if (dx && !dml_type_equal(&dx->type, &X->type)) /* LogSum: d is [kept] */
    dx = op2(a, DML_OP_EXPAND, dx, shape_of(a, X));
  acc(a, X, dx);
}
#define REDUCE_VJP(e, d)                                       \
  static void vjp_##e(ad_t *a, const dml_ir_node_t *n, V *g) { \
    reduce_other(a, n, g, d);                                  \
  }
REDUCE_VJP(reduce_sum_square, d_reduce_sum_square)
REDUCE_VJP(reduce_l1, d_reduce_l1)
REDUCE_VJP(reduce_l2, d_reduce_l2)
REDUCE_VJP(reduce_log_sum, d_reduce_log_sum)
REDUCE_VJP(reduce_log_sum_exp, d_reduce_log_sum_exp)
REDUCE_VJP(reduce_prod, d_reduce_prod)
REDUCE_VJP(reduce_max_min, d_reduce_max_min)
#undef REDUCE_VJP

/* MatMul with a 1-D operand (numpy matmul: A [K] is promoted to [1, K], B
 * [K] to [K, 1], and the added dim removed from the result): the 2-D rule
 * on the promoted operands and g with the removed dims restored. */
static void vjp_matmul_1d(ad_t *a, const dml_ir_node_t *n, V *g) {
  V *A = n->inputs[0], *B = n->inputs[1];
  int ra = A->type.rank, rb = B->type.rank;
  int64_t m0 = 0, m1 = 1;
  V *A2 = ra == 1 ? unsqueeze(a, A, &m0, 1) : A;
  V *B2 = rb == 1 ? unsqueeze(a, B, &m1, 1) : B;
  /* g's rank is max(ra, rb) with the promoted dims gone: put them back. */
  V *g2 = g;
  if (ra == 1 && rb == 1) {
    int64_t ax[2] = {0, 1};
    g2 = unsqueeze(a, g, ax, 2);
  } else if (ra == 1) {
    int64_t ax = g->type.rank - 1; /* [..., N] -> [..., 1, N] */
    g2 = unsqueeze(a, g, &ax, 1);
  } else {
    int64_t ax = g->type.rank; /* [..., M] -> [..., M, 1] */
    g2 = unsqueeze(a, g, &ax, 1);
  }
  if (needs(a, A))
    acc(a, A,
        reshape_like(
            a, unbroadcast(a, op2(a, DML_OP_MATMUL, g2, transpose_last2(a, B2)), A2), A));
  if (needs(a, B))
    acc(a, B,
        reshape_like(
            a, unbroadcast(a, op2(a, DML_OP_MATMUL, transpose_last2(a, A2), g2), B2), B));
}

/* The rules under the names op_rules.def gives them. */
static void vjp_matmul(ad_t *a, const dml_ir_node_t *n, V *g) {
  if (n->inputs[0]->type.rank < 2 || n->inputs[1]->type.rank < 2)
    vjp_matmul_1d(a, n, g);
  else
    vjp_matmul_2d(a, n, g);
}
static void vjp_split(ad_t *a, const dml_ir_node_t *n, V *g) {
  (void)g; /* reads every output's gradient (a->grad) */
  split_grads(a, n);
}
static void vjp_max_pool(ad_t *a, const dml_ir_node_t *n, V *g) {
  pool_grad(a, n, g, DML_OP_MAX_POOL_GRAD);
}
static void vjp_average_pool(ad_t *a, const dml_ir_node_t *n, V *g) {
  pool_grad(a, n, g, DML_OP_AVERAGE_POOL_GRAD);
}
static void vjp_minmax(ad_t *a, const dml_ir_node_t *n, V *g) {
  if (n->n_inputs == 2)
    vjp_ew2(a, n, g);
  else
    vjp_variadic(a, n, g);
}

/* Each op's VJP, from op_rules.def; NULL for `none`. */
#define vjp_none NULL
static void (*const k_vjp[DML_OP_COUNT_])(ad_t *, const dml_ir_node_t *, V *) = {
#define DML_RULE(e, shape, vjp, rows, dims, reads, eager, elems) [DML_OP_##e] = vjp_##vjp,
#include "op_rules.def"
#undef DML_RULE
};
#undef vjp_none

static int has_rule(dml_op_t op) {
  if ((int)op <= (int)DML_OP_INVALID || op >= DML_OP_COUNT_) return 0;
  return dml_ew_has(op) || k_vjp[op] != NULL; /* ew_ops.def's: vjp_ew */
}

int dml_autodiff_supports(dml_op_t op) {
  return has_rule(op);
}

static void vjp(ad_t *a, const dml_ir_node_t *n, V *g) {
  if (dml_ew_has(n->op))
    vjp_ew(a, n, g);
  else
    k_vjp[n->op](a, n, g); /* has_rule() was checked */
}

/* ---- driver ----------------------------------------------------------------- */

static int is_float_value(const V *v) {
  return v && v->type.rank >= 0 && dml_dtype_is_float(v->type.dtype);
}

dml_status_t dml_autodiff(dml_ir_function_t *f, dml_ir_value_t *loss,
                          dml_ir_value_t *seed, uint32_t n_wrt,
                          dml_ir_value_t *const *wrt, dml_ir_value_t **out_grads) {
  dml_ir_module_t *m = f->module;
  if (!is_float_value(loss) || (!seed && (dml_ir_type_numel_bound(m, &loss->type) != 1 ||
                                          !dml_type_is_static(&loss->type))))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "the loss '%s' must be a float scalar",
                           loss && loss->name ? loss->name : "");
  if (seed && !dml_type_equal(&seed->type, &loss->type))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "the seed '%s' must have the type of the loss '%s'",
                           seed->name ? seed->name : "", loss->name ? loss->name : "");
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
      /* Ops whose rules read every output's gradient (a->grad). */
      int multi = n->op == DML_OP_SPLIT || n->op == DML_OP_BATCH_NORMALIZATION ||
                  n->op == DML_OP_LAYER_NORMALIZATION ||
                  n->op == DML_OP_SOFTMAX_CROSS_ENTROPY_LOSS;
      if (other && !multi) {
        unsupported(&a, n, "a gradient flows into an output other than the first");
        continue;
      }
      if (!g && !other) continue;
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
