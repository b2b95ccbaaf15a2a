/* schedule.c — turns a planned function into kernels (dml_kernel.h).
 *
 * One pass over the nodes in execution order. Which nodes share a kernel is
 * decided by the compiler's `fuse` pass (passes/fuse.c), which gives them
 * the same DML_FUSE_GROUP_ATTR: an optional anchor (Gemm/MatMul, Conv, a
 * reduction) followed by elementwise nodes that all produce the group's
 * output type; every invocation computes one output element, so values
 * inside the group stay in registers and are stored only when used outside
 * it or returned. A node joins the open kernel only when it is of the same
 * fuse group and the kernel's forms allow it: it consumes a value of the
 * kernel, has the kernel's output type, and the memory plan puts none of
 * the kernel's results over a value the kernel reads at another element
 * (the planner reuses dead values' memory, which is safe between kernels
 * but not inside one; mem-plan keeps a group's reads live for this). A
 * node emitted in a form of its own (schedule_index.c, schedule_math.c,
 * schedule_spatial.c, ..., a batched MatMul) ends the kernel, and the rest
 * of its group starts another. A package without fuse groups gets one
 * kernel per node. Softmax/LogSoftmax are single kernels; a view at its
 * input's offset aliases it, any other view is a copy kernel.
 * Assign(@global, value) stores into the weights buffer (binding 1) at the
 * global's offset: inside the group that computes the value (the
 * optimizer's update then writes the parameter in place) when the group
 * reads the global at no other element, else as a copy kernel. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dml_cpu.h"
#include "dml_ew.h"
#include "schedule_internal.h"

#define WG 256 /* invocations per workgroup of 1-D kernels */
/* why a value whose element count dml_klin_t cannot hold is refused */

static const dml_pkg_value_t *val(const sched_t *s, uint32_t v) {
  return v == DML_PKG_NO_VALUE || v >= s->fn->n_values ? NULL : &s->fn->values[v];
}

static void unsupported(sched_t *s, uint32_t node, const char *fmt, const char *arg) {
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  if (s->refused) s->refused[node] = 1;
  if (!s->err)
    s->err = dml_status_make(DML_STATUS_UNIMPLEMENTED, "codegen.schedule",
                             "function '%s' has nodes no GPU kernel implements yet",
                             s->fn->name);
  char why[512];
  snprintf(why, sizeof why, fmt, arg ? arg : "");
  s->err = dml_status_detail(s->err, "node %u '%s' (%s): %s", node,
                             n->name ? n->name : "", n->op_name, why);
}

/* Numel of a type as c * sym * (the symbols of `more`) (dml_klin_t): the
 * symbols of its symbolic dims as a multiset, each symbol once in `more`
 * and a symbol of two dims (attention's [batch, heads, seq, seq] scores)
 * also in `sym`; else the first symbol in `sym`. 0 when a symbol's index
 * is 32 or above, a symbol occurs in more than two dims, or two symbols
 * occur twice (counts dml_klin_t cannot hold). */
int dml_ksched_numel(const dml_type_t *t, dml_klin_t *out) {
  dml_klin_t l = {1, -1, 0, 0};
  uint32_t once = 0, twice = 0;
  int32_t first = -1;
  for (int32_t d = 0; d < t->rank; d++) {
    l.c *= t->dims[d].value;
    int32_t sy = t->dims[d].sym;
    if (sy < 0) continue;
    if (sy >= 32 || (twice >> sy & 1u)) return 0;
    if (first < 0) first = sy;
    if (once >> sy & 1u)
      twice |= 1u << sy;
    else
      once |= 1u << sy;
  }
  if (twice & (twice - 1u)) return 0;
  if (twice) {
    l.sym = __builtin_ctz(twice);
    l.more = once;
  } else if (first >= 0) {
    l.sym = first;
    l.more = once & ~(1u << first);
  }
  *out = l;
  return 1;
}

static int type_numel(const dml_type_t *t, dml_klin_t *out) {
  return dml_ksched_numel(t, out);
}

int dml_ksched_sym_repeats(const dml_type_t *t) {
  for (int32_t d = 0; d < t->rank; d++)
    for (int32_t e = d + 1; e < t->rank; e++)
      if (t->dims[d].sym >= 0 && t->dims[d].sym == t->dims[e].sym) return 1;
  return 0;
}

/* l / (extent of dim d): one occurrence of d's symbol taken out of the
 * product and c divided by d's static factor (d must be a dim of the type l
 * counts). */
dml_klin_t dml_ksched_lin_div_dim(dml_klin_t l, dml_dim_t d) {
  if (d.value) l.c /= d.value;
  if (d.sym < 0) return l;
  if (l.sym == d.sym) {
    if (l.more >> d.sym & 1u) {
      l.more &= ~(1u << d.sym); /* a square: one stays in sym */
    } else if (l.more) {
      l.sym = __builtin_ctz(l.more);
      l.more &= l.more - 1u;
    } else {
      l.sym = -1;
    }
  } else if (d.sym < 32) {
    l.more &= ~(1u << d.sym);
  }
  return l;
}

/* Why the output dims of node `node` cannot be known on the host when a
 * run starts, or NULL. A node whose output dims follow from the values of
 * a shape input (it produces data-dependent symbols, ir/dml_ir.h) is
 * emitted when the runtime can compute those dims before the device runs
 * (rt_session.c, with the CPU's shape rules, dml_cpu_output_dims): every
 * input the rule reads is a constant, an input of the function, or a small
 * static value computed from those by nodes the host runs first with the
 * CPU kernels (dml_pkg_host_value: `Range(0, Cast(size), 1)`). A value
 * that needs the device's results (of a node with symbolic dims, a random
 * op, ...) is refused. An op without such a rule counts the extent in its
 * kernel (NonZero, ...: schedule_dyn.c, the runtime reads it back) or is
 * refused. */
static const char *dims_reject(const sched_t *s, uint32_t node) {
  uint32_t fi = (uint32_t)(s->fn - s->g->functions);
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  for (uint32_t k = 0; k < s->g->n_symbols; k++) {
    const dml_pkg_symbol_t *sy = &s->g->symbols[k];
    if (sy->origin != DML_PKG_SYMBOL_NODE || sy->function != fi || sy->node != node)
      continue;
    if (dml_cpu_output_dims_reads(n->op, 0) < 0)
      return dml_ksched_dyn_handles(n->op)
                 ? NULL /* its kernel counts them (schedule_dyn.c) */
                 : "its output dims are counted from data on the device";
    for (uint32_t j = 0; j < n->n_inputs; j++) {
      const dml_pkg_value_t *x = val(s, n->inputs[j]);
      if (x && dml_cpu_output_dims_reads(n->op, j) > 0 &&
          !dml_pkg_host_value(s->fn, n->inputs[j]))
        return "its output dims depend on values computed on the device (shape inputs "
               "must be inputs of the function, constants, or small static values the "
               "host computes from those: dml_pkg_host_value)";
    }
    return NULL;
  }
  return NULL;
}

/* The kernel dtype of value v (f32 for dtypes kernels cannot hold: the
 * scheduler refuses those before building anything). */
static dml_kdtype_t kdt(const dml_pkg_value_t *v) {
  dml_kdtype_t t = DML_KT_F32;
  dml_kdtype_of(v->type.dtype, &t);
  return t;
}

/* 1 when kernels hold v's dtype and v is aligned to its element size. */
static int typed_ok(const dml_pkg_value_t *v) {
  dml_kdtype_t t;
  return dml_kdtype_of(v->type.dtype, &t) && v->offset % dml_kdtype_size(t) == 0;
}

/* Same dims (the dtype may differ). */
static int same_shape(const dml_type_t *a, const dml_type_t *b) {
  if (a->rank != b->rank) return 0;
  for (int32_t d = 0; d < a->rank; d++)
    if (a->dims[d].value != b->dims[d].value || a->dims[d].sym != b->dims[d].sym)
      return 0;
  return 1;
}

static const dml_kidx_t *dim_idx(sched_t *s, dml_dim_t d) {
  dml_klin_t l = {d.value, d.sym, 0, 0};
  return dml_ki_lin(s->pool, l);
}

static dml_kbuf_t buf_of(const dml_pkg_value_t *v) {
  return v->storage == DML_PKG_STORAGE_CONST ? DML_KBUF_WEIGHTS : DML_KBUF_ARENA;
}

/* Element index of value `v` at flat element `i` (in the view of v's
 * dtype: byte offset / element size). */
static const dml_kidx_t *at(sched_t *s, const dml_pkg_value_t *v, const dml_kidx_t *i) {
  return dml_ki_bin(s->pool, DML_KI_ADD,
                    dml_ki_const(s->pool, (int64_t)(v->offset / dml_kdtype_size(kdt(v)))),
                    i);
}

/* The dtype v's loads and stores use: kdt(v), or u16 for f16 and bf16 in
 * data-movement kernels (s->raw16). */
static dml_kdtype_t kdt_s(const sched_t *s, const dml_pkg_value_t *v) {
  dml_kdtype_t t = kdt(v);
  return s->raw16 && (t == DML_KT_F16 || t == DML_KT_BF16) ? DML_KT_U16 : t;
}

/* A load of value v at flat element i. */
static const dml_kval_t *load_at(sched_t *s, const dml_pkg_value_t *v,
                                 const dml_kidx_t *i) {
  return dml_kv_load_t(s->pool, buf_of(v), kdt_s(s, v), at(s, v, i));
}

/* A load of value v at element index i (at() applied) as an f32 value:
 * f16/bf16 words widen exactly (GEMM products and sums are f32 whatever
 * the operands' dtype). */
static const dml_kval_t *load_f32(sched_t *s, const dml_pkg_value_t *v,
                                  const dml_kidx_t *i) {
  if (kdt(v) == DML_KT_F32) return dml_kv_load(s->pool, buf_of(v), i);
  return dml_kv_cast(s->pool, DML_KT_F32, dml_kv_load_t(s->pool, buf_of(v), kdt(v), i));
}

/* A store of `val` into value y at flat element i. */
static dml_kstmt_t *store_at(sched_t *s, const dml_pkg_value_t *y, const dml_kidx_t *i,
                             const dml_kval_t *val) {
  dml_kstmt_t *w = dml_ks_new(s->pool, DML_KS_STORE);
  if (w) {
    w->buf = DML_KBUF_ARENA;
    w->dtype = kdt_s(s, y);
    w->idx = at(s, y, i);
    w->val = val;
  }
  return w;
}

/* Flat index into `in` (broadcast to `out`, numpy rules) of the output
 * element with coordinates `coord` (out->rank entries). */
static const dml_kidx_t *bcast_index(sched_t *s, const dml_type_t *in,
                                     const dml_type_t *out,
                                     const dml_kidx_t *const *coord) {
  const dml_kidx_t *idx = dml_ki_const(s->pool, 0), *stride = dml_ki_const(s->pool, 1);
  for (int32_t d = in->rank - 1; d >= 0; d--) {
    int32_t od = out->rank - in->rank + d;
    if (!(in->dims[d].value == 1 && in->dims[d].sym < 0))
      idx = dml_ki_bin(s->pool, DML_KI_ADD, idx,
                       dml_ki_bin(s->pool, DML_KI_MUL, coord[od], stride));
    stride = dml_ki_bin(s->pool, DML_KI_MUL, stride, dim_idx(s, in->dims[d]));
  }
  return idx;
}

/* Coordinates of flat element `i` of `t` (row-major). */
static void coords_of(sched_t *s, const dml_type_t *t, const dml_kidx_t *i,
                      const dml_kidx_t **coord) {
  const dml_kidx_t *rest = i;
  for (int32_t d = t->rank - 1; d >= 0; d--) {
    const dml_kidx_t *e = dim_idx(s, t->dims[d]);
    coord[d] = d == 0 ? rest : dml_ki_bin(s->pool, DML_KI_MOD, rest, e);
    rest = dml_ki_bin(s->pool, DML_KI_DIV, rest, e);
  }
}

/* ---- elementwise ops ---- */

/* The elementwise ops composed from kernel_math.c's functions. */
static int ew_op_more(dml_op_t op) {
  if (dml_ew_has(op)) return 1; /* the formula table's (ew_ops.def) */
  switch (op) {
    case DML_OP_ROUND:
    case DML_OP_SHRINK:
    case DML_OP_PRELU:
    case DML_OP_SUM:
    case DML_OP_MEAN: return 1;
    default: return 0;
  }
}

/* max(a, b) (`is_max`) or min(a, b) as the CPU computes them: for floats a
 * NaN operand gives NaN (runtime/cpu/cpu_elementwise.c, `(x > y || x != x)
 * ? x : y`; Relu `x < 0 ? 0 : x`), where GLSL's max/min (undefined for NaN:
 * 0 on lavapipe) and CUDA's fmaxf/fminf return the other operand; integers
 * keep DML_KF_MAX / DML_KF_MIN. */
static const dml_kval_t *nan_max(dml_kpool_t *p, const dml_kval_t *a, const dml_kval_t *b,
                                 int is_max) {
  if (!a || !b) return NULL;
  if (!dml_kdtype_is_float(a->dtype))
    return dml_kv_fn(p, is_max ? DML_KF_MAX : DML_KF_MIN, a, b);
  /* a constant (not NaN) bound b, as in Relu and Clip: one compare, a < b
   * ? b : a (a > b for min), false for a NaN a */
  if (b->kind == DML_KV_CONST && b->c == b->c)
    return dml_kv_select(p, dml_kv_fn(p, is_max ? DML_KF_LT : DML_KF_GT, a, b), b, a);
  const dml_kval_t *keep_a =
      dml_kv_fn(p, DML_KF_OR, dml_kv_fn(p, is_max ? DML_KF_GT : DML_KF_LT, a, b),
                dml_kv_fn(p, DML_KF_NOT, dml_kv_fn(p, DML_KF_EQ, a, a), NULL));
  return dml_kv_select(p, keep_a, a, b);
}

static int64_t lin_max(const sched_t *s, dml_klin_t l);

int64_t dml_ksched_lin_max(const sched_t *s, dml_klin_t l) {
  return lin_max(s, l);
}

const dml_kval_t *dml_ksched_nan_max(dml_kpool_t *p, const dml_kval_t *a,
                                     const dml_kval_t *b, int is_max) {
  return nan_max(p, a, b, is_max);
}

/* Value of ew_op_more's node `n` given its operands `x` (formulas of the
 * ONNX operator specs, defaults included). */
static const dml_kval_t *ew_value_more(sched_t *s, const dml_pkg_node_t *n,
                                       const dml_kval_t *const *x) {
  dml_kpool_t *p = s->pool;
#define F1(f, a) dml_kv_fn(p, DML_KF_##f, a, NULL)
#define F2(f, a, b) dml_kv_fn(p, DML_KF_##f, a, b)
#define K(c) dml_kv_const(p, (float)(c))
#define ATTR(name, def) dml_attr_float(n->attrs, n->n_attrs, name, def)
  const dml_kval_t *a = x[0];
  switch (n->op) {
    case DML_OP_ROUND: /* in f32, rounded to f16/bf16 once (exact) */
      return dml_kv_cast(p, a->dtype,
                         dml_kv_round_half_even(p, dml_kv_cast(p, DML_KT_F32, a)));
    case DML_OP_SHRINK: {
      /* x < -lambd ? x + bias : x > lambd ? x - bias : 0, as ONNX's spec
       * and reference (NaN is "otherwise": 0) and the CPU; selects, not
       * step() products (inf * 0 made +-inf and NaN inputs NaN) */
      double l = ATTR("lambd", 0.5), b = ATTR("bias", 0.0);
      return dml_kv_select(p, F2(LT, a, K(-l)), F2(ADD, a, K(b)),
                           dml_kv_select(p, F2(GT, a, K(l)), F2(SUB, a, K(b)), K(0)));
    }
    case DML_OP_PRELU: /* x < 0 ? slope x : x (an infinite slope's inf * 0 was NaN) */
      return dml_kv_select(p, F2(LT, a, K(0)), F2(MUL, x[1], a), a);
    case DML_OP_SUM:
    case DML_OP_MEAN: {
      const dml_kval_t *y = a;
      for (uint32_t i = 1; i < n->n_inputs; i++) y = F2(ADD, y, x[i]);
      return n->op == DML_OP_MEAN ? F2(DIV, y, K(n->n_inputs)) : y;
    }
    default: return NULL;
  }
#undef F1
#undef F2
#undef K
#undef ATTR
}

static int ew_op(dml_op_t op) {
  switch (op) {
    case DML_OP_ABS:
    case DML_OP_NEG:
    case DML_OP_RELU:
    case DML_OP_SIGMOID:
    case DML_OP_TANH:
    case DML_OP_EXP:
    case DML_OP_LOG:
    case DML_OP_SQRT:
    case DML_OP_FLOOR:
    case DML_OP_CEIL:
    case DML_OP_RECIPROCAL:
    case DML_OP_SIN:
    case DML_OP_COS:
    case DML_OP_CLIP:
    case DML_OP_ADD:
    case DML_OP_SUB:
    case DML_OP_MUL:
    case DML_OP_DIV:
    case DML_OP_POW:
    case DML_OP_MAX:
    case DML_OP_MIN:
    case DML_OP_BATCH_NORMALIZATION:
    /* typed */
    case DML_OP_SIGN:
    case DML_OP_NOT:
    case DML_OP_CAST:
    case DML_OP_MOD:
    case DML_OP_EQUAL:
    case DML_OP_LESS:
    case DML_OP_LESS_OR_EQUAL:
    case DML_OP_GREATER:
    case DML_OP_GREATER_OR_EQUAL:
    case DML_OP_AND:
    case DML_OP_OR:
    case DML_OP_XOR:
    case DML_OP_WHERE:
    case DML_OP_EXPAND:
    case DML_OP_ONE_HOT: return 1;
    default: return ew_op_more(op);
  }
}

static int const_scalar(sched_t *s, const dml_pkg_node_t *n, uint32_t k, double *out);

/* Pow of f32 values with a compile-time exponent `e`: the exact special
 * forms (x*x, ..., each C99 pow's result for every x, NaN and infinities
 * included: x*x is pow(x, 2) rounded once, x*x*x within one rounding
 * more), else the general dml_kv_pow. */
static const dml_kval_t *pow_const(dml_kpool_t *p, const dml_kval_t *a, double e) {
  if (e == 0.0) return dml_kv_const(p, 1.0f);
  if (e == 1.0) return a;
  if (e == 2.0) return dml_kv_fn(p, DML_KF_MUL, a, a);
  if (e == 3.0) return dml_kv_fn(p, DML_KF_MUL, dml_kv_fn(p, DML_KF_MUL, a, a), a);
  if (e == 0.5) /* sqrt(-0) is -0 and sqrt(-inf) NaN, pow gives +0 and +inf */
    return dml_kv_select(
        p, dml_kv_fn(p, DML_KF_EQ, a, dml_kv_const(p, -INFINITY)),
        dml_kv_const(p, INFINITY),
        dml_kv_select(p, dml_kv_fn(p, DML_KF_EQ, a, dml_kv_const(p, 0.0f)),
                      dml_kv_const(p, 0.0f), dml_kv_fn(p, DML_KF_SQRT, a, NULL)));
  return dml_kv_pow(p, a, dml_kv_const(p, (float)e));
}

/* Pow (ONNX Pow-15: base and exponent of any numeric dtypes, the output
 * the base's), as the CPU computes it: a float operand makes it a float
 * power (computed in f32 with C99 pow semantics, dml_kv_pow; f64 is not
 * emitted), two integer ones the wrapping integer power (i32 when both
 * fit in 32 bits, else i64). An integer base with an integral float
 * exponent takes the integer power too: the CPU's double pow is exact
 * there, f32 pow is not. A constant f32 scalar exponent takes pow_const's
 * special forms. */
static const dml_kval_t *pow_value(sched_t *s, const dml_pkg_node_t *n,
                                   const dml_kval_t *const *x) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_value_t *y = val(s, n->outputs[0]);
  dml_kdtype_t yt = kdt(y), et = x[1]->dtype;
  if (dml_kdtype_is_float(yt)) {
    const dml_kval_t *a = dml_kv_cast(p, DML_KT_F32, x[0]), *r;
    double ce;
    const dml_pkg_value_t *ev = val(s, n->inputs[1]);
    if (ev && ev->type.dtype == DML_DTYPE_F32 && const_scalar(s, n, 1, &ce))
      r = pow_const(p, a, ce);
    else
      r = dml_kv_pow(p, a, dml_kv_cast(p, DML_KT_F32, x[1]));
    return dml_kv_cast(p, yt, r);
  }
  int wide = dml_kdtype_size(yt) > 4 || dml_kdtype_size(et) > 4 || yt == DML_KT_U32 ||
             dml_kdtype_is_float(et);
  dml_kdtype_t it = wide ? DML_KT_I64 : DML_KT_I32;
  const dml_kval_t *ip = dml_kv_cast(
      p, yt,
      dml_kv_fn(p, DML_KF_IPOW, dml_kv_cast(p, it, x[0]), dml_kv_cast(p, it, x[1])));
  if (!dml_kdtype_is_float(et)) return ip;
  const dml_kval_t *e32 = dml_kv_cast(p, DML_KT_F32, x[1]);
  const dml_kval_t *fp =
      dml_kv_cast(p, yt, dml_kv_pow(p, dml_kv_cast(p, DML_KT_F32, x[0]), e32));
  return dml_kv_select(
      p, dml_kv_fn(p, DML_KF_EQ, dml_kv_fn(p, DML_KF_FLOOR, e32, NULL), e32), ip, fp);
}

/* The typed elementwise value of node `n` (out dtype `t`), or NULL for
 * the f32-only ops. */
static const dml_kval_t *ew_typed_value(sched_t *s, const dml_pkg_node_t *n,
                                        dml_kdtype_t t, const dml_kval_t *const *x) {
  dml_kpool_t *p = s->pool;
  switch (n->op) {
    case DML_OP_SIGN: /* floats keep NaN and +-0 (GLSL's sign(NaN) is 0) */
      return dml_kdtype_is_float(t) ? dml_kv_sign_nan(p, x[0])
                                    : dml_kv_fn(p, DML_KF_SIGN, x[0], NULL);
    case DML_OP_NOT: return dml_kv_fn(p, DML_KF_NOT, x[0], NULL);
    case DML_OP_CAST: return dml_kv_cast(p, t, x[0]);
    case DML_OP_MOD:
      return dml_kv_fn(
          p, dml_attr_int(n->attrs, n->n_attrs, "fmod", 0) ? DML_KF_FMOD : DML_KF_IMOD,
          x[0], x[1]);
    case DML_OP_EQUAL: return dml_kv_fn(p, DML_KF_EQ, x[0], x[1]);
    case DML_OP_LESS: return dml_kv_fn(p, DML_KF_LT, x[0], x[1]);
    case DML_OP_LESS_OR_EQUAL: return dml_kv_fn(p, DML_KF_LE, x[0], x[1]);
    case DML_OP_GREATER: return dml_kv_fn(p, DML_KF_GT, x[0], x[1]);
    case DML_OP_GREATER_OR_EQUAL: return dml_kv_fn(p, DML_KF_GE, x[0], x[1]);
    case DML_OP_AND: return dml_kv_fn(p, DML_KF_AND, x[0], x[1]);
    case DML_OP_OR: return dml_kv_fn(p, DML_KF_OR, x[0], x[1]);
    case DML_OP_XOR: return dml_kv_fn(p, DML_KF_XOR, x[0], x[1]);
    case DML_OP_WHERE: return dml_kv_select(p, x[0], x[1], x[2]);
    case DML_OP_EXPAND: return x[0]; /* numpy broadcast of x[0] (the loads) */
    default: return NULL;
  }
}

/* The elementwise value of node `n` given its operands' values `x`. */
static const dml_kval_t *ew_value(sched_t *s, const dml_pkg_node_t *n,
                                  const dml_kval_t *const *x) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_value_t *y = val(s, n->outputs[0]);
  if (dml_ew_has(n->op) && y) {
    /* the formula table's ops (ew_ops.def): computed in f32, rounded to
     * the output's dtype (f16, bf16) once; ew_reject checked the
     * attributes */
    double av[DML_EW_MAX_ATTRS];
    dml_status_t st = dml_ew_attrs(n->op, n->attrs, n->n_attrs, av);
    if (st) {
      dml_status_free(st);
      return NULL;
    }
    return dml_kv_cast(p, kdt(y),
                       dml_kv_ew(p, n->op, dml_kv_cast(p, DML_KT_F32, x[0]), av));
  }
  const dml_kval_t *tv = ew_typed_value(s, n, y ? kdt(y) : DML_KT_F32, x);
  if (tv) return tv;
  switch (n->op) {
    case DML_OP_ABS: return dml_kv_fn(p, DML_KF_ABS, x[0], NULL);
    case DML_OP_NEG: return dml_kv_fn(p, DML_KF_NEG, x[0], NULL);
    case DML_OP_RELU: /* a zero of x's dtype (an f32 0 made f64 and integer
                         Relu's GLSL mistyped: glslang rejected it) */
      return nan_max(p, x[0],
                     dml_kdtype_is_float(x[0]->dtype)
                         ? dml_kv_fconst(p, x[0]->dtype, 0.0f)
                         : dml_kv_zero(p, x[0]->dtype),
                     1);
    case DML_OP_SIGMOID: return dml_kv_fn(p, DML_KF_SIGMOID, x[0], NULL);
    case DML_OP_TANH: /* f32 (f16, bf16 in f32): kernel_math's, exact near 0 */
      if (x[0]->dtype == DML_KT_F64) return dml_kv_fn(p, DML_KF_TANH, x[0], NULL);
      return dml_kv_cast(p, x[0]->dtype,
                         dml_kv_tanh(p, dml_kv_cast(p, DML_KT_F32, x[0])));
    case DML_OP_EXP: return dml_kv_fn(p, DML_KF_EXP, x[0], NULL);
    case DML_OP_LOG: /* f64: the renderers' dml_log64; else kernel_math's */
      if (x[0]->dtype == DML_KT_F64) return dml_kv_fn(p, DML_KF_LOG, x[0], NULL);
      return dml_kv_cast(p, x[0]->dtype, dml_kv_log(p, dml_kv_cast(p, DML_KT_F32, x[0])));
    case DML_OP_SQRT: return dml_kv_fn(p, DML_KF_SQRT, x[0], NULL);
    case DML_OP_FLOOR: return dml_kv_fn(p, DML_KF_FLOOR, x[0], NULL);
    case DML_OP_CEIL: return dml_kv_fn(p, DML_KF_CEIL, x[0], NULL);
    case DML_OP_RECIPROCAL: return dml_kv_fn(p, DML_KF_RECIP, x[0], NULL);
    case DML_OP_SIN: return dml_kv_fn(p, DML_KF_SIN, x[0], NULL);
    case DML_OP_COS: return dml_kv_fn(p, DML_KF_COS, x[0], NULL);
    case DML_OP_CLIP: {
      const dml_kval_t *y = x[0];
      if (n->n_inputs > 1 && x[1]) y = nan_max(p, y, x[1], 1);
      if (n->n_inputs > 2 && x[2]) y = nan_max(p, y, x[2], 0);
      return y;
    }
    case DML_OP_ADD: return dml_kv_fn(p, DML_KF_ADD, x[0], x[1]);
    case DML_OP_SUB: return dml_kv_fn(p, DML_KF_SUB, x[0], x[1]);
    case DML_OP_MUL: return dml_kv_fn(p, DML_KF_MUL, x[0], x[1]);
    case DML_OP_DIV: return dml_kv_fn(p, DML_KF_DIV, x[0], x[1]);
    case DML_OP_POW: return pow_value(s, n, x);
    case DML_OP_BATCH_NORMALIZATION: {
      /* inference: (x - mean) * (scale / sqrt(var + epsilon)) + B, per channel
       * (ONNX BatchNormalization-15, epsilon default 1e-5) */
      double eps = dml_attr_float(n->attrs, n->n_attrs, "epsilon", 1e-5);
      const dml_kval_t *inv = dml_kv_fn(
          p, DML_KF_DIV, x[1],
          dml_kv_fn(p, DML_KF_SQRT,
                    dml_kv_fn(p, DML_KF_ADD, x[4], dml_kv_const(p, (float)eps)), NULL));
      return dml_kv_fn(
          p, DML_KF_ADD,
          dml_kv_fn(p, DML_KF_MUL, dml_kv_fn(p, DML_KF_SUB, x[0], x[3]), inv), x[2]);
    }
    case DML_OP_MAX:
    case DML_OP_MIN: {
      const dml_kval_t *y = x[0];
      for (uint32_t i = 1; i < n->n_inputs; i++)
        y = nan_max(p, y, x[i], n->op == DML_OP_MAX);
      return y;
    }
    default: return ew_value_more(s, n, x);
  }
}

static int is_int(dml_dtype_t d) {
  return dml_dtype_is_int(d);
}

/* Why the dtypes of elementwise node `n` (output y) are not emitted, or
 * NULL: the float functions take f32; arithmetic, Sign, Clip, Max/Min and
 * Mod take f32, i64 or i32 (one dtype throughout); compares take two
 * operands of one dtype (Equal: bool too) and give bool; Not/And/Or/Xor
 * are bool; Where takes a bool condition; Cast any of the four dtypes;
 * OneHot i64/i32 indices and values of y's dtype. */
static const char *ew_dtype_reject(sched_t *s, const dml_pkg_node_t *n,
                                   const dml_pkg_value_t *y) {
  dml_dtype_t yt = y->type.dtype;
  const dml_pkg_value_t *x0 = n->n_inputs ? val(s, n->inputs[0]) : NULL;
  const dml_pkg_value_t *x1 = n->n_inputs > 1 ? val(s, n->inputs[1]) : NULL;
  switch (n->op) {
    case DML_OP_CAST:
      return !x0 || !typed_ok(x0) ? "Cast from a dtype kernels do not hold" : NULL;
    case DML_OP_EQUAL:
    case DML_OP_LESS:
    case DML_OP_LESS_OR_EQUAL:
    case DML_OP_GREATER:
    case DML_OP_GREATER_OR_EQUAL:
      if (yt != DML_DTYPE_BOOL || !x0 || !x1 || x0->type.dtype != x1->type.dtype)
        return "compare of mixed dtypes";
      if (x0->type.dtype == DML_DTYPE_BOOL && n->op != DML_OP_EQUAL)
        return "ordering compare of bool";
      return NULL;
    case DML_OP_NOT:
    case DML_OP_AND:
    case DML_OP_OR:
    case DML_OP_XOR:
      for (uint32_t i = 0; i < n->n_inputs; i++) {
        const dml_pkg_value_t *x = val(s, n->inputs[i]);
        if (!x || x->type.dtype != DML_DTYPE_BOOL) return "logic op on non-bool";
      }
      return yt == DML_DTYPE_BOOL ? NULL : "logic op on non-bool";
    case DML_OP_WHERE: {
      const dml_pkg_value_t *x2 = val(s, n->inputs[2]);
      if (!x0 || !x1 || !x2 || x0->type.dtype != DML_DTYPE_BOOL || x1->type.dtype != yt ||
          x2->type.dtype != yt)
        return "Where needs a bool condition and operands of the output's dtype";
      return NULL;
    }
    case DML_OP_EXPAND:
      return x0 && x0->type.dtype == yt ? NULL : "Expand changes the dtype";
    case DML_OP_ONE_HOT: {
      const dml_pkg_value_t *x2 = n->n_inputs > 2 ? val(s, n->inputs[2]) : NULL;
      if (!x0 || !x2 || (!is_int(x0->type.dtype) && x0->type.dtype != DML_DTYPE_F32) ||
          !typed_ok(x0))
        return "OneHot indices must be i64, i32 or f32";
      if (x2->type.dtype != yt || !typed_ok(x2) || x2->type.rank != 1 ||
          x2->type.dims[0].value != 2 || x2->type.dims[0].sym >= 0)
        return "OneHot values must be [2] of the output's dtype";
      int64_t axis = dml_attr_int(n->attrs, n->n_attrs, "axis", -1);
      if (axis < 0) axis += y->type.rank;
      if (axis < 0 || axis >= y->type.rank || x0->type.rank != y->type.rank - 1)
        return "OneHot axis out of range";
      return yt == DML_DTYPE_BOOL ? "OneHot to bool" : NULL;
    }
    case DML_OP_ADD:
    case DML_OP_SUB:
    case DML_OP_MUL:
    case DML_OP_DIV:
    case DML_OP_NEG:
    case DML_OP_ABS:
    case DML_OP_RELU:
    case DML_OP_SIGN:
    case DML_OP_MAX:
    case DML_OP_MIN:
    case DML_OP_CLIP:
    case DML_OP_MOD:
      if (yt == DML_DTYPE_BOOL) return "arithmetic on bool";
      for (uint32_t i = 0; i < n->n_inputs; i++) {
        const dml_pkg_value_t *x = val(s, n->inputs[i]);
        if (x && x->type.dtype != yt) return "operands of mixed dtypes";
      }
      if (n->op == DML_OP_MOD && dml_dtype_is_float(yt) &&
          !dml_attr_int(n->attrs, n->n_attrs, "fmod", 0))
        return "Mod of floats needs fmod = 1";
      return NULL;
    case DML_OP_POW:
      if (!x0 || !x1 || x0->type.dtype != yt || yt == DML_DTYPE_BOOL ||
          x1->type.dtype == DML_DTYPE_BOOL)
        return "Pow needs a numeric base of the output's dtype";
      if (yt == DML_DTYPE_F64 || x1->type.dtype == DML_DTYPE_F64)
        return "f64 Pow is not emitted (f32, f16, bf16 and integers are)";
      return NULL;
    default:
      /* the float functions: f32; f16 and bf16 (computed in f32, rounded)
       * for the one-function ops; f64 for those the renderers have in
       * double precision */
      for (uint32_t i = 0; i < n->n_inputs; i++) {
        const dml_pkg_value_t *x = val(s, n->inputs[i]);
        if (x && x->type.dtype != yt) return "operands of mixed dtypes";
      }
      if (yt == DML_DTYPE_F32) return NULL;
      if (dml_ew_has(n->op))
        return yt == DML_DTYPE_F16 || yt == DML_DTYPE_BF16
                   ? NULL
                   : "f64 of this op is not emitted (f32, f16 and bf16 are)";
      if ((yt == DML_DTYPE_F16 || yt == DML_DTYPE_BF16) &&
          (n->op == DML_OP_SIGMOID || n->op == DML_OP_TANH || n->op == DML_OP_EXP ||
           n->op == DML_OP_LOG || n->op == DML_OP_SQRT || n->op == DML_OP_FLOOR ||
           n->op == DML_OP_CEIL || n->op == DML_OP_RECIPROCAL || n->op == DML_OP_SIN ||
           n->op == DML_OP_COS || n->op == DML_OP_ROUND))
        return NULL;
      if (yt == DML_DTYPE_F64 &&
          (n->op == DML_OP_SQRT || n->op == DML_OP_FLOOR || n->op == DML_OP_CEIL ||
           n->op == DML_OP_RECIPROCAL || n->op == DML_OP_EXP || n->op == DML_OP_LOG))
        return NULL;
      return "only f32 is emitted for this op";
  }
}

/* Why node `n` cannot be an elementwise node of a kernel, or NULL. */
static const char *ew_reject(sched_t *s, const dml_pkg_node_t *n) {
  if (!ew_op(n->op)) return "not elementwise";
  if (n->n_outputs != 1) return "more than one output";
  const dml_pkg_value_t *y = val(s, n->outputs[0]);
  if (!y) return "absent output";
  if (!typed_ok(y)) return "only numeric and bool values (aligned) are emitted";
  dml_klin_t l;
  if (!type_numel(&y->type, &l)) return TOO_MANY_SYMS;
  if (n->n_inputs > 8) return "more than 8 inputs";
  const char *why = ew_dtype_reject(s, n, y);
  if (why) return why;
  if (dml_ew_has(n->op)) {
    double av[DML_EW_MAX_ATTRS];
    dml_status_t st = dml_ew_attrs(n->op, n->attrs, n->n_attrs, av);
    if (st) {
      dml_status_free(st);
      return "an attribute value the op does not accept";
    }
  }
  if (n->op == DML_OP_BATCH_NORMALIZATION) {
    if (dml_attr_int(n->attrs, n->n_attrs, "training_mode", 0))
      return "BatchNormalization in training mode";
    if (y->type.rank < 2 || y->type.dims[1].sym >= 0)
      return "BatchNormalization needs a static channel dim";
    for (uint32_t i = 1; i < n->n_inputs; i++) {
      const dml_pkg_value_t *x = val(s, n->inputs[i]);
      if (!x || x->type.rank != 1 || x->type.dims[0].sym >= 0 ||
          x->type.dims[0].value != y->type.dims[1].value)
        return "BatchNormalization parameters must be [C]";
    }
  }
  for (uint32_t i = 0; i < n->n_inputs; i++) {
    const dml_pkg_value_t *x = val(s, n->inputs[i]);
    if (!x) {
      if (n->op == DML_OP_CLIP) continue;
      return "absent input";
    }
    if (n->op == DML_OP_EXPAND && i == 1) continue; /* the shape: y's dims */
    if (n->op == DML_OP_ONE_HOT) continue;          /* checked in ew_dtype_reject */
    if (!typed_ok(x)) return "only numeric and bool values (aligned) are emitted";
    if (x->type.rank > y->type.rank) return "input of higher rank";
  }
  return NULL;
}

/* ---- groups ---- */

typedef enum { ANCHOR_NONE, ANCHOR_GEMM, ANCHOR_REDUCE, ANCHOR_CONV } anchor_t;

/* The nodes of one kernel: a fuse group of the IR (the fuse pass's
 * DML_FUSE_GROUP_ATTR, passes/fuse.c), or the part of one that the checks
 * below let this kernel take. */
typedef struct group {
  anchor_t anchor;
  int64_t gid;    /* the nodes' fuse group, -1 for a node of none */
  uint32_t first; /* anchor node (or first elementwise node) */
  uint32_t nodes[256];
  uint32_t n;
  const dml_type_t *out; /* every node's output type */
} group_t;

/* Node n's fuse group (passes/fuse.c), -1 when it has none. */
static int64_t fuse_gid(const dml_pkg_node_t *n) {
  int64_t g = dml_attr_int(n->attrs, n->n_attrs, DML_FUSE_GROUP_ATTR, -1);
  return g < 0 ? -1 : g;
}

/* 1 when node n belongs to the IR fuse group of the open kernel G. */
static int in_fuse_group(const group_t *G, const dml_pkg_node_t *n) {
  return G->n > 0 && G->gid >= 0 && fuse_gid(n) == G->gid;
}

static int in_group(const group_t *G, uint32_t node) {
  for (uint32_t i = 0; i < G->n; i++)
    if (G->nodes[i] == node) return 1;
  return 0;
}

/* Node producing value v in G, or -1. */
static int64_t producer_in(const sched_t *s, const group_t *G, uint32_t v) {
  for (uint32_t i = 0; i < G->n; i++) {
    const dml_pkg_node_t *n = &s->fn->nodes[G->nodes[i]];
    for (uint32_t o = 0; o < n->n_outputs; o++)
      if (n->outputs[o] == v) return G->nodes[i];
  }
  return -1;
}

static int overlap(const dml_pkg_value_t *a, const dml_pkg_value_t *b) {
  if (a->storage == DML_PKG_STORAGE_CONST || b->storage == DML_PKG_STORAGE_CONST)
    return 0;
  return a->offset < b->offset + b->bytes && b->offset < a->offset + a->bytes;
}

/* 1 when no result of G (every node's output, conservatively) overlaps a
 * value G reads at another element than the invocation's own. */
static int group_safe(const sched_t *s, const group_t *G) {
  for (uint32_t i = 0; i < G->n; i++) {
    const dml_pkg_node_t *n = &s->fn->nodes[G->nodes[i]];
    int anchor = i == 0 && G->anchor != ANCHOR_NONE;
    for (uint32_t k = 0; k < n->n_inputs; k++) {
      const dml_pkg_value_t *x = val(s, n->inputs[k]);
      if (!x || producer_in(s, G, n->inputs[k]) >= 0) continue;
      int same_elem = !anchor && same_shape(&x->type, G->out);
      for (uint32_t j = 0; j < G->n; j++) {
        const dml_pkg_node_t *o = &s->fn->nodes[G->nodes[j]];
        const dml_pkg_value_t *y = o->n_outputs ? val(s, o->outputs[0]) : NULL;
        if (!y || !overlap(x, y)) continue;
        if (same_elem && x->offset == y->offset &&
            dml_dtype_size(x->type.dtype) == dml_dtype_size(y->type.dtype))
          continue;
        return 0;
      }
    }
  }
  return 1;
}

static dml_kernel_t *new_kernel(sched_t *s, dml_kernel_kind_t kind) {
  if (s->n_kernels == s->cap_kernels) {
    uint32_t cap = s->cap_kernels ? 2 * s->cap_kernels : 16;
    dml_kernel_t *k = (dml_kernel_t *)dml_kpool_alloc(s->pool, cap * sizeof *k);
    if (!k) return NULL;
    if (s->n_kernels) memcpy(k, s->kernels, s->n_kernels * sizeof *k);
    s->kernels = k;
    s->cap_kernels = cap;
  }
  dml_kernel_t *K = &s->kernels[s->n_kernels++];
  memset(K, 0, sizeof *K);
  K->kind = kind;
  snprintf(K->name, sizeof K->name, "k%u_%s", s->n_kernels - 1,
           dml_kernel_kind_name(kind));
  K->local[0] = K->local[1] = K->local[2] = 1;
  K->items[0].c = K->items[1].c = K->items[2].c = 1;
  K->items[0].sym = K->items[1].sym = K->items[2].sym = -1;
  K->flops.sym = K->bytes.sym = -1;
  return K;
}

/* acc += mul * x. A work estimate holds one product of symbols: a term
 * over other symbols than acc's is left out (an estimate for dmlc bench,
 * never a launch count). */
static void lin_add(dml_klin_t *acc, dml_klin_t x, int64_t mul) {
  if (x.sym < 0 && !x.more) {
    acc->c0 += mul * (x.c + x.c0);
  } else {
    acc->c0 += mul * x.c0;
    if ((acc->sym < 0 && !acc->more) || (acc->sym == x.sym && acc->more == x.more)) {
      acc->sym = x.sym;
      acc->more = x.more;
      acc->c += mul * x.c;
    }
  }
}

void dml_ksched_lin_add(dml_klin_t *acc, dml_klin_t x, int64_t mul) {
  lin_add(acc, x, mul);
}

static void set_nodes(sched_t *s, dml_kernel_t *K, const group_t *G) {
  K->n_nodes = G->n;
  K->nodes = (uint32_t *)dml_kpool_alloc(s->pool, (G->n ? G->n : 1) * sizeof(uint32_t));
  if (K->nodes) memcpy(K->nodes, G->nodes, G->n * sizeof(uint32_t));
  for (uint32_t i = 0; i < G->n; i++) s->group_of[G->nodes[i]] = s->n_kernels;
}

/* OneHot (ONNX OneHot-11) at output coordinates `coord`: the index at the
 * coordinates without `axis`, negative ones counted from depth (the
 * output's static dim on `axis`); values[1] where it equals the coordinate
 * on the axis, values[0] elsewhere (also for indices out of range). */
static const dml_kval_t *one_hot_value(sched_t *s, dml_kernel_t *K,
                                       const dml_pkg_node_t *n,
                                       const dml_kidx_t *const *coord) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_value_t *ix = val(s, n->inputs[0]), *vals = val(s, n->inputs[2]);
  const dml_pkg_value_t *y = val(s, n->outputs[0]);
  int64_t axis = dml_attr_int(n->attrs, n->n_attrs, "axis", -1);
  if (axis < 0) axis += y->type.rank;
  /* the depth: static, or a data-dependent symbol (a depth input fed at
   * run time, its value a push constant) */
  const dml_kval_t *depth = dml_kv_idx(p, DML_KT_I64, dim_idx(s, y->type.dims[axis]));
  const dml_kidx_t *c[DML_MAX_RANK];
  for (int32_t d = 0, j = 0; d < y->type.rank; d++)
    if (d != axis) c[j++] = coord[d];
  const dml_kval_t *i =
      dml_kv_cast(p, DML_KT_I64, load_at(s, ix, bcast_index(s, &ix->type, &ix->type, c)));
  i = dml_kv_select(p, dml_kv_fn(p, DML_KF_LT, i, dml_kv_zero(p, DML_KT_I64)),
                    dml_kv_fn(p, DML_KF_ADD, i, depth), i);
  const dml_kval_t *hit =
      dml_kv_fn(p, DML_KF_EQ, i, dml_kv_idx(p, DML_KT_I64, coord[axis]));
  dml_klin_t l;
  if (type_numel(&ix->type, &l))
    lin_add(&K->bytes, l, (int64_t)dml_dtype_size(ix->type.dtype));
  return dml_kv_select(p, hit, load_at(s, vals, dml_ki_const(p, 1)),
                       load_at(s, vals, dml_ki_const(p, 0)));
}

/* Appends the elementwise nodes of G after the anchor's value `acc`
 * (NULL when G has no anchor) at output coordinates `coord` and flat index
 * `flat`: registers reg0 .. reg0 + G->n - 1, then a store of every value
 * used outside G. */
static void emit_chain_at(sched_t *s, dml_kernel_t *K, const group_t *G, dml_kblock_t *b,
                          const dml_kval_t *acc, const dml_kidx_t *const *coord,
                          const dml_kidx_t *flat, uint32_t reg0) {
  dml_kpool_t *p = s->pool;
  uint32_t start = G->anchor != ANCHOR_NONE ? 1 : 0;
  /* values read from memory so far: each counts once in K->bytes, however
   * many nodes of G read it (the bytes a run moves, for dmlc bench) */
  uint32_t counted[32], n_counted = 0;
  /* register of each group node's output = its position in G */
  for (uint32_t i = 0; i < G->n; i++) {
    const dml_pkg_node_t *n = &s->fn->nodes[G->nodes[i]];
    if (n->op == DML_OP_ASSIGN) {
      /* the global's new value, from the register of its producer in G */
      const dml_pkg_value_t *gl = val(s, n->inputs[0]);
      int64_t pr = producer_in(s, G, n->inputs[1]);
      uint32_t r = 0;
      for (uint32_t j = 0; j < G->n; j++)
        if (G->nodes[j] == (uint32_t)pr) r = j;
      dml_kstmt_t *w = dml_ks_new(p, DML_KS_STORE);
      if (w) {
        w->buf = DML_KBUF_WEIGHTS;
        w->dtype = kdt(gl);
        w->idx = at(s, gl, flat);
        w->val = dml_kv_reg_t(p, reg0 + r, kdt(gl));
      }
      dml_kblock_add(b, w);
      K->writes_weights = 1;
      dml_klin_t l;
      if (type_numel(&gl->type, &l)) lin_add(&K->bytes, l, 4);
      continue;
    }
    const dml_pkg_value_t *y = val(s, n->outputs[0]);
    const dml_kval_t *v;
    if (i < start) {
      v = acc;
    } else if (n->op == DML_OP_ONE_HOT) {
      v = one_hot_value(s, K, n, coord);
    } else {
      const dml_kval_t *x[8] = {0};
      for (uint32_t k = 0; k < n->n_inputs && k < 8; k++) {
        const dml_pkg_value_t *xv = val(s, n->inputs[k]);
        if (!xv) continue;
        if (n->op == DML_OP_EXPAND && k == 1) continue; /* the shape */
        int64_t pr = producer_in(s, G, n->inputs[k]);
        if (pr >= 0) {
          for (uint32_t j = 0; j < G->n; j++)
            if (G->nodes[j] == (uint32_t)pr) x[k] = dml_kv_reg_t(p, reg0 + j, kdt(xv));
        } else {
          /* BatchNormalization's parameters follow the channel (dim 1) */
          const dml_kidx_t *ix = n->op == DML_OP_BATCH_NORMALIZATION && k > 0 ? coord[1]
                                 : same_shape(&xv->type, G->out)
                                     ? flat
                                     : bcast_index(s, &xv->type, G->out, coord);
          x[k] = load_at(s, xv, ix);
          int seen = 0;
          for (uint32_t c = 0; c < n_counted; c++) seen |= counted[c] == n->inputs[k];
          dml_klin_t l;
          if (!seen && type_numel(&xv->type, &l))
            lin_add(&K->bytes, l, (int64_t)dml_dtype_size(xv->type.dtype));
          if (!seen && n_counted < 32) counted[n_counted++] = n->inputs[k];
        }
      }
      v = ew_value(s, n, x);
      dml_klin_t l;
      if (type_numel(y ? &y->type : G->out, &l)) lin_add(&K->flops, l, 1);
    }
    dml_kstmt_t *st = dml_ks_new(p, DML_KS_LET);
    if (st) {
      st->reg = reg0 + i;
      st->val = v;
    }
    dml_kblock_add(b, st);
    if (y && (s->n_uses_outside[n->outputs[0]] || s->is_output[n->outputs[0]])) {
      dml_kblock_add(b, store_at(s, y, flat, dml_kv_reg_t(p, reg0 + i, kdt(y))));
      dml_klin_t l;
      if (type_numel(&y->type, &l))
        lin_add(&K->bytes, l, (int64_t)dml_dtype_size(y->type.dtype));
    }
  }
  K->n_regs = reg0 + G->n > K->n_regs ? reg0 + G->n : K->n_regs;
}

static void emit_chain(sched_t *s, dml_kernel_t *K, const group_t *G, dml_kblock_t *b,
                       const dml_kval_t *acc, const dml_kidx_t *const *coord,
                       const dml_kidx_t *flat) {
  emit_chain_at(s, K, G, b, acc, coord, flat, 0);
}

/* Counts, for every value produced in G, its consumers outside G. */
static void count_outside(sched_t *s, const group_t *G) {
  for (uint32_t i = 0; i < G->n; i++) {
    if (!s->fn->nodes[G->nodes[i]].n_outputs) continue; /* Assign */
    uint32_t v = s->fn->nodes[G->nodes[i]].outputs[0];
    s->n_uses_outside[v] = 0;
    for (uint32_t k = 0; k < s->fn->n_nodes; k++) {
      if (in_group(G, k)) continue;
      const dml_pkg_node_t *n = &s->fn->nodes[k];
      for (uint32_t j = 0; j < n->n_inputs; j++)
        if (n->inputs[j] == v) s->n_uses_outside[v]++;
    }
  }
}

static dml_kstmt_t *if_lt(sched_t *s, const dml_kidx_t *lhs, const dml_kidx_t *hi,
                          dml_kstmt_t *body) {
  dml_kstmt_t *st = dml_ks_new(s->pool, DML_KS_IF_LT);
  if (st) {
    st->lhs = lhs;
    st->hi = hi;
    st->body = body;
  }
  return st;
}

static dml_kstmt_t *for_loop(sched_t *s, int32_t var, const dml_kidx_t *hi,
                             dml_kstmt_t *body) {
  dml_kstmt_t *st = dml_ks_new(s->pool, DML_KS_FOR);
  if (st) {
    st->var = var;
    st->hi = hi;
    st->step = 1;
    st->body = body;
  }
  return st;
}

static dml_kstmt_t *assign(sched_t *s, dml_kstmt_kind_t k, uint32_t reg,
                           const dml_kval_t *v) {
  dml_kstmt_t *st = dml_ks_new(s->pool, k);
  if (st) {
    st->reg = reg;
    st->val = v;
  }
  return st;
}

/* Elements per invocation of a large elementwise kernel, at gid + j * S
 * (S = numel / EW_UNROLL): the invocation loads all of them before its
 * first store, so EW_UNROLL loads per invocation are in flight. One f32
 * per invocation leaves a GPU's memory under-used: an H200 needs about
 * bandwidth x latency = 4 TB/s x ~0.7 us = 2.8 MB in flight, and 2048
 * resident invocations per SM x 132 SMs x 4 bytes is 1.1 MB (Little's
 * law). Neighbouring invocations still touch neighbouring elements, so the
 * accesses stay coalesced. */
#define EW_UNROLL 4
#define EW_UNROLL_MIN_ELEMS 65536

/* The unroll factor for an elementwise kernel of `numel` elements: 1, or
 * EW_UNROLL when numel divides evenly at every symbol value and is large
 * at the bound. */
static int64_t lin_max(const sched_t *s, dml_klin_t l);

static int ew_unroll(const sched_t *s, dml_klin_t numel) {
  if (numel.c % EW_UNROLL || numel.c0 % EW_UNROLL) return 1;
  return lin_max(s, numel) >= EW_UNROLL_MIN_ELEMS ? EW_UNROLL : 1;
}

/* Moves the statements of `from` into `lets` (register definitions) and
 * `stores` (everything else), keeping their order. */
static void split_lets(dml_kblock_t *from, dml_kblock_t *lets, dml_kblock_t *stores) {
  dml_kstmt_t *st = from->first;
  while (st) {
    dml_kstmt_t *next = st->next;
    st->next = NULL;
    dml_kblock_add(st->kind == DML_KS_LET ? lets : stores, st);
    st = next;
  }
}

static void block_append(dml_kblock_t *b, const dml_kblock_t *x);

/* A purely elementwise group: one invocation per output element, or per
 * EW_UNROLL elements S apart (ew_unroll). */
static void emit_ew_group(sched_t *s, const group_t *G) {
  dml_kpool_t *p = s->pool;
  dml_kernel_t *K = new_kernel(s, DML_KK_ELEMENTWISE);
  if (!K) return;
  set_nodes(s, K, G);
  dml_klin_t numel;
  type_numel(G->out, &numel);
  int u = ew_unroll(s, numel);
  dml_klin_t per = {numel.c / u, numel.sym, numel.c0 / u, numel.more};
  K->local[0] = WG;
  K->items[0] = per;
  const dml_kidx_t *gid = dml_ki_var(p, DML_KVAR_GID_X), *N = dml_ki_lin(p, numel);
  const dml_kidx_t *S = dml_ki_lin(p, per);
  dml_kblock_t lets = {0}, stores = {0};
  dml_klin_t flops = K->flops, bytes = K->bytes;
  /* When the grid covers the elements exactly (the count per invocation a
   * multiple of the workgroup size at every symbol value) no bounds check
   * is needed; the checks cost Vulkan on NVIDIA a quarter of its bandwidth
   * (2.9 vs 4.0 TB/s on 2^26 floats, bench/RESULTS.md). */
  const int exact = per.c % WG == 0 && per.c0 % WG == 0;
  for (int j = 0; j < u; j++) {
    const dml_kidx_t *idx =
        j ? dml_ki_bin(p, DML_KI_ADD, gid,
                       dml_ki_bin(p, DML_KI_MUL, dml_ki_const(p, j), S))
          : gid;
    const dml_kidx_t *coord[DML_MAX_RANK];
    coords_of(s, G->out, idx, coord);
    dml_kblock_t inner = {0}, l = {0}, w = {0};
    emit_chain_at(s, K, G, &inner, NULL, coord, idx, (uint32_t)j * G->n);
    if (j == 0) flops = K->flops, bytes = K->bytes; /* the work of one chain */
    if (u == 1) {
      K->body = exact ? inner.first : if_lt(s, gid, N, inner.first);
      return;
    }
    split_lets(&inner, &l, &w);
    block_append(&lets, &l);
    block_append(&stores, &w);
  }
  K->flops = flops;
  K->bytes = bytes;
  dml_kblock_add(&lets, stores.first);
  /* An invocation past S (the grid's last workgroup is partial) has no
   * elements: checking each gid + j * S against numel instead would let
   * invocation S + t redo element S + t, invocation t's second; in place
   * (the output planned over an input), one of the two then reads the
   * other's result (issue 23: a DenseNet block's BatchNorm+Relu applied
   * twice on lavapipe, whose workgroups run in order). gid < S implies
   * gid + j * S < numel for every j < u, as numel = u * S. */
  K->body = exact ? lets.first : if_lt(s, gid, S, lets.first);
}

/* Copy kernel for a view that does not alias its input. */
static void emit_copy(sched_t *s, uint32_t node) {
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *y = val(s, n->outputs[0]);
  dml_kernel_t *K = new_kernel(s, DML_KK_ELEMENTWISE);
  if (!K) return;
  group_t G = {.anchor = ANCHOR_NONE, .n = 1, .nodes = {node}};
  set_nodes(s, K, &G);
  dml_klin_t numel;
  type_numel(&y->type, &numel);
  K->local[0] = WG;
  K->items[0] = numel;
  lin_add(&K->bytes, numel, 2 * (int64_t)dml_dtype_size(y->type.dtype));
  const dml_kidx_t *gid = dml_ki_var(s->pool, DML_KVAR_GID_X);
  K->body =
      if_lt(s, gid, dml_ki_lin(s->pool, numel), store_at(s, y, gid, load_at(s, x, gid)));
}

/* ---- Dropout ---- */

/* Reads the scalar constant input `k` of node `n` as a double into `*out`
 * (1 when it is absent: `*out` untouched); 0 when it is not a constant
 * f32/f64/bool scalar held in the weights. */
static int const_scalar(sched_t *s, const dml_pkg_node_t *n, uint32_t k, double *out) {
  if (k >= n->n_inputs || n->inputs[k] == DML_PKG_NO_VALUE) return 1;
  const dml_pkg_value_t *v = val(s, n->inputs[k]);
  if (!v || v->storage != DML_PKG_STORAGE_CONST || v->type.rank != 0) return 0;
  size_t sz = dml_dtype_size(v->type.dtype);
  if (!sz || v->offset + sz > s->weights_size) return 0;
  const uint8_t *b = s->weights + v->offset;
  switch (v->type.dtype) {
    case DML_DTYPE_F32: {
      float f;
      memcpy(&f, b, 4);
      *out = f;
      return 1;
    }
    case DML_DTYPE_F64: memcpy(out, b, 8); return 1;
    case DML_DTYPE_BOOL: *out = b[0] != 0; return 1;
    default: return 0;
  }
}

/* A scalar input `k` of node `n` read by the kernel at run time: an f32
 * (or bool) scalar, aligned. */
static int runtime_scalar(sched_t *s, const dml_pkg_node_t *n, uint32_t k,
                          dml_dtype_t dt) {
  const dml_pkg_value_t *v = k < n->n_inputs ? val(s, n->inputs[k]) : NULL;
  return v && v->type.rank == 0 && v->type.dtype == dt && typed_ok(v);
}

/* Why Dropout node `n` (ONNX Dropout-13) has no kernel, or NULL. f32
 * data; ratio (the `ratio` attribute, 0.5, when absent, as the CPU reads
 * it) and training_mode constants or f32 / bool scalars read at run time.
 * `*out_training`: 0 for the inference form (output = data, the optional
 * mask (bool) all true: training_mode absent or false, or a constant
 * ratio of 0, where dml_cpu_dropout_train keeps every element, scaled by
 * 1); 1 for the training form with a constant ratio in [0, 1]; 2 for the
 * form reading ratio and/or training_mode at run time (emit_dropout). */
static const char *dropout_reject(sched_t *s, const dml_pkg_node_t *n,
                                  int *out_training) {
  const dml_pkg_value_t *x = n->n_inputs ? val(s, n->inputs[0]) : NULL;
  const dml_pkg_value_t *y = n->n_outputs ? val(s, n->outputs[0]) : NULL;
  const dml_pkg_value_t *m = n->n_outputs > 1 && n->outputs[1] != DML_PKG_NO_VALUE
                                 ? val(s, n->outputs[1])
                                 : NULL;
  if (!x || !y) return "absent input or output";
  if (x->type.dtype != DML_DTYPE_F32 || y->type.dtype != DML_DTYPE_F32 || !typed_ok(x) ||
      !typed_ok(y))
    return "only f32 (aligned) data is emitted";
  if (m && (m->type.dtype != DML_DTYPE_BOOL || !typed_ok(m)))
    return "the mask must be bool";
  dml_klin_t l;
  if (!type_numel(&y->type, &l)) return TOO_MANY_SYMS;
  /* element i reads x[i] and writes y[i] and mask[i]: in place only at
   * the same offset */
  if ((overlap(x, y) && x->offset != y->offset) ||
      (m && (overlap(x, m) || overlap(y, m))))
    return "its result overlaps its operands in the memory plan";
  double training = 0.0;
  double ratio = dml_attr_float(n->attrs, n->n_attrs, "ratio", 0.5);
  int run_training = !const_scalar(s, n, 2, &training);
  if (run_training && !runtime_scalar(s, n, 2, DML_DTYPE_BOOL))
    return "training_mode must be a constant or a bool scalar";
  if (!run_training && training == 0.0) {
    *out_training = 0; /* inference: the ratio is not read */
    return NULL;
  }
  int run_ratio = !const_scalar(s, n, 1, &ratio);
  if (run_ratio && !runtime_scalar(s, n, 1, DML_DTYPE_F32))
    return "ratio must be a constant or an f32 scalar";
  if (!run_ratio && !(ratio >= 0.0 && ratio <= 1.0)) return "ratio outside [0, 1]";
  *out_training = run_training || run_ratio ? 2 : ratio != 0.0;
  return NULL;
}

/* Dropout (dropout_reject), one kernel. Inference: y[i] = x[i] and
 * mask[i] = true. Training (dml_cpu_dropout_train): element i is kept when
 * its uniform u = bits * 2^-24 (the node's Philox stream,
 * dml_ksched_philox24) is >= ratio, i.e. bits >= the integer threshold
 * ceil(ratio * 2^24), so the masks are the CPU's bit for bit; y[i] = kept
 * ? x[i] * (f32)(1 / (1 - ratio)) : 0 (the CPU scales in double: 1 ulp
 * apart at most), mask[i] = kept. With ratio and/or training_mode read at
 * run time (training 2) the kernel computes the threshold from the f32
 * ratio (ratio * 2^24 and its ceiling are exact in f32), keeps everything
 * with scale 1 when training_mode is false, and the scale 1 / (1 - ratio)
 * in f32. A run-time ratio outside [0, 1], which the CPU refuses, is not
 * checked: thresholds clamp to [0, 2^24]. */
static void emit_dropout(sched_t *s, uint32_t node, int training) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *y = val(s, n->outputs[0]);
  const dml_pkg_value_t *m = n->n_outputs > 1 && n->outputs[1] != DML_PKG_NO_VALUE
                                 ? val(s, n->outputs[1])
                                 : NULL;
  dml_kernel_t *K = new_kernel(s, DML_KK_ELEMENTWISE);
  if (!K) return;
  group_t G = {.anchor = ANCHOR_NONE, .n = 1, .nodes = {node}};
  set_nodes(s, K, &G);
  dml_klin_t numel;
  type_numel(&y->type, &numel);
  K->local[0] = WG;
  K->items[0] = numel;
  lin_add(&K->bytes, numel, 8 + (m ? 1 : 0));
  const dml_kidx_t *gid = dml_ki_var(p, DML_KVAR_GID_X);
  dml_kblock_t body = {0};
  if (!training) {
    dml_kblock_add(&body, store_at(s, y, gid, load_at(s, x, gid)));
    if (m) dml_kblock_add(&body, store_at(s, m, gid, dml_kv_one(p, DML_KT_BOOL)));
  } else {
    double ratio = dml_attr_float(n->attrs, n->n_attrs, "ratio", 0.5);
    double on = 1.0;
    int run_ratio = !const_scalar(s, n, 1, &ratio);
    int run_on = !const_scalar(s, n, 2, &on);
    const dml_kval_t *thr = dml_kv_iconst(p, DML_KT_I32, dml_ksched_u24_threshold(ratio));
    const dml_kval_t *scale =
        dml_kv_const(p, ratio < 1.0 ? (float)(1.0 / (1.0 - ratio)) : 0.0f);
    if (run_ratio) {
      const dml_kval_t *r = load_at(s, val(s, n->inputs[1]), dml_ki_const(p, 0));
      const dml_kval_t *t = dml_kv_fn(
          p, DML_KF_MIN,
          dml_kv_fn(
              p, DML_KF_MAX,
              dml_kv_fn(p, DML_KF_CEIL,
                        dml_kv_fn(p, DML_KF_MUL, r, dml_kv_const(p, 16777216.0f)), NULL),
              dml_kv_const(p, 0.0f)),
          dml_kv_const(p, 16777216.0f));
      thr = dml_kv_cast(p, DML_KT_I32, t);
      scale = dml_kv_fn(p, DML_KF_RECIP,
                        dml_kv_fn(p, DML_KF_SUB, dml_kv_const(p, 1.0f), r), NULL);
    }
    const dml_kval_t *keep =
        dml_kv_fn(p, DML_KF_GE, dml_ksched_philox24(p, s->fn, node, gid), thr);
    if (run_on) {
      const dml_kval_t *t = load_at(s, val(s, n->inputs[2]), dml_ki_const(p, 0));
      keep = dml_kv_fn(p, DML_KF_OR, dml_kv_fn(p, DML_KF_NOT, t, NULL), keep);
      scale = dml_kv_select(p, t, scale, dml_kv_const(p, 1.0f));
    }
    dml_kstmt_t *let = dml_ks_new(p, DML_KS_LET);
    if (let) {
      let->reg = 0;
      let->val = keep;
    }
    K->n_regs = 1;
    const dml_kval_t *kept = dml_kv_reg_t(p, 0, DML_KT_BOOL);
    dml_kblock_add(&body, let);
    dml_kblock_add(
        &body, store_at(s, y, gid,
                        dml_kv_select(p, kept,
                                      dml_kv_fn(p, DML_KF_MUL, load_at(s, x, gid), scale),
                                      dml_kv_const(p, 0.0f))));
    if (m) dml_kblock_add(&body, store_at(s, m, gid, kept));
  }
  K->body = if_lt(s, gid, dml_ki_lin(p, numel), body.first);
}

/* A random op (schedule_random.c) as a kernel of its own: one invocation
 * per output element. */
static void emit_random(sched_t *s, uint32_t node) {
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const char *why = dml_ksched_random_reject(s->fn, node);
  const dml_pkg_value_t *y = why ? NULL : val(s, n->outputs[0]);
  dml_klin_t numel;
  if (!why && !type_numel(&y->type, &numel)) why = TOO_MANY_SYMS;
  if (why) {
    unsupported(s, node, "%s", why);
    return;
  }
  dml_kernel_t *K = new_kernel(s, DML_KK_ELEMENTWISE);
  if (!K) return;
  group_t G = {.anchor = ANCHOR_NONE, .n = 1, .nodes = {node}};
  set_nodes(s, K, &G);
  K->local[0] = WG;
  K->items[0] = numel;
  lin_add(&K->bytes, numel,
          (int64_t)dml_dtype_size(y->type.dtype) + (n->op == DML_OP_BERNOULLI ? 4 : 0));
  const dml_kidx_t *gid = dml_ki_var(s->pool, DML_KVAR_GID_X);
  K->body =
      if_lt(s, gid, dml_ki_lin(s->pool, numel),
            store_at(s, y, gid, dml_ksched_random_value(s->pool, s->fn, node, gid)));
}

/* ---- Assign ---- */

/* 1 when global `gl` (in the weights) overlaps value `x`. */
static int weights_overlap(const dml_pkg_value_t *gl, const dml_pkg_value_t *x) {
  return x->storage == DML_PKG_STORAGE_CONST && x->offset < gl->offset + gl->bytes &&
         gl->offset < x->offset + x->bytes;
}

/* 1 when some node of G reads global `gl` at another element than the
 * invocation's own (the anchor's operands, broadcast reads, BatchNorm's
 * per-channel parameters): storing into it inside G would race. */
static int reads_other_element(sched_t *s, const group_t *G, const dml_pkg_value_t *gl) {
  for (uint32_t i = 0; i < G->n; i++) {
    const dml_pkg_node_t *n = &s->fn->nodes[G->nodes[i]];
    if (n->op == DML_OP_ASSIGN) continue;
    for (uint32_t k = 0; k < n->n_inputs; k++) {
      const dml_pkg_value_t *x = val(s, n->inputs[k]);
      if (!x || !weights_overlap(gl, x)) continue;
      if ((i == 0 && G->anchor != ANCHOR_NONE) ||
          (n->op == DML_OP_BATCH_NORMALIZATION && k > 0) ||
          !same_shape(&x->type, G->out) || x->offset != gl->offset)
        return 1;
    }
  }
  return 0;
}

/* Why Assign node `n` cannot be emitted, or NULL. */
static const char *assign_reject(sched_t *s, const dml_pkg_node_t *n) {
  const dml_pkg_value_t *gl = val(s, n->inputs[0]), *x = val(s, n->inputs[1]);
  dml_klin_t l;
  if (!gl || !x || gl->storage != DML_PKG_STORAGE_CONST)
    return "the target is not a global in the weights";
  if (gl->type.dtype != DML_DTYPE_F32 || x->type.dtype != DML_DTYPE_F32)
    return "only f32 is emitted";
  if (gl->offset % 4 || x->offset % 4) return "misaligned value";
  if (!same_shape(&gl->type, &x->type) || !type_numel(&gl->type, &l) || l.sym >= 0 ||
      l.more)
    return "the value's type is not the global's static type";
  if (gl->offset / 4 + (uint64_t)l.c > 0xffffffffull)
    return "the global lies beyond 32-bit indices";
  return NULL;
}

/* Copy kernel for an Assign whose value no open group computes:
 * weights[global + i] = value[i]. */
static void emit_assign_copy(sched_t *s, uint32_t node) {
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *gl = val(s, n->inputs[0]), *x = val(s, n->inputs[1]);
  dml_kernel_t *K = new_kernel(s, DML_KK_ELEMENTWISE);
  if (!K) return;
  group_t G = {.anchor = ANCHOR_NONE, .n = 1, .nodes = {node}};
  set_nodes(s, K, &G);
  dml_klin_t numel;
  type_numel(&gl->type, &numel);
  K->local[0] = WG;
  K->items[0] = numel;
  K->writes_weights = 1;
  lin_add(&K->bytes, numel, 8);
  const dml_kidx_t *gid = dml_ki_var(s->pool, DML_KVAR_GID_X);
  dml_kstmt_t *st = dml_ks_new(s->pool, DML_KS_STORE);
  if (st) {
    st->buf = DML_KBUF_WEIGHTS;
    st->dtype = kdt(gl);
    st->idx = at(s, gl, gid);
    st->val = load_at(s, x, gid);
  }
  K->body = if_lt(s, gid, dml_ki_lin(s->pool, numel), st);
}

/* ---- GEMM ---- */

typedef struct gemm_shape {
  const dml_pkg_value_t *a, *b, *c, *y; /* one dtype: f32, f16 or bf16 */
  int ta, tb;
  double alpha, beta;
  dml_klin_t m; /* rows of the result */
  int64_t n, k; /* N static; K = k, or k * symbol ksym when ksym >= 0 */
  int32_t ksym; /* the symbol of a symbolic K (a weight gradient's batch), or -1 */
  /* A batched MatMul's tiled form (emit_matmul_batched): nb.c > 0 counts the
   * [M, K] x [K, N] products (A, B and Y of equal batch dims, each matrix
   * contiguous); bat is the workgroup's product (set by emit_gemm_tiled). */
  dml_klin_t nb;
  const dml_kidx_t *bat;
} gemm_shape_t;

static const char *gemm_reject(sched_t *s, const dml_pkg_node_t *n, gemm_shape_t *o) {
  memset(o, 0, sizeof *o);
  o->ksym = -1;
  const dml_pkg_value_t *y = val(s, n->outputs[0]);
  o->a = val(s, n->inputs[0]);
  o->b = val(s, n->inputs[1]);
  o->c = n->n_inputs > 2 ? val(s, n->inputs[2]) : NULL;
  o->y = y;
  if (!o->a || !o->b || !y) return "absent input";
  dml_dtype_t t = y->type.dtype;
  if (t != DML_DTYPE_F32 && t != DML_DTYPE_F16 && t != DML_DTYPE_BF16)
    return "only f32, f16 and bf16 are emitted";
  if (o->a->type.dtype != t || o->b->type.dtype != t || (o->c && o->c->type.dtype != t))
    return "operands of mixed dtypes";
  if (!typed_ok(o->a) || !typed_ok(o->b) || (o->c && !typed_ok(o->c)) || !typed_ok(y))
    return "misaligned value";
  o->alpha = 1.0;
  o->beta = 1.0;
  if (n->op == DML_OP_GEMM) {
    o->ta = (int)dml_attr_int(n->attrs, n->n_attrs, "transA", 0);
    o->tb = (int)dml_attr_int(n->attrs, n->n_attrs, "transB", 0);
    o->alpha = dml_attr_float(n->attrs, n->n_attrs, "alpha", 1.0);
    o->beta = dml_attr_float(n->attrs, n->n_attrs, "beta", 1.0);
    if (o->a->type.rank != 2 || o->b->type.rank != 2) return "Gemm operands must be 2-D";
    const dml_dim_t *ad = o->a->type.dims;
    o->m = (dml_klin_t){ad[o->ta ? 1 : 0].value, ad[o->ta ? 1 : 0].sym, 0, 0};
    o->ksym = ad[o->ta ? 0 : 1].sym;
    o->k = ad[o->ta ? 0 : 1].value;
  } else {
    /* MatMul: A [..., M, K] (leading dims folded into M), B [K, N]. */
    if (o->b->type.rank != 2) return "MatMul with a batched right operand";
    if (o->a->type.rank < 2) return "MatMul with a 1-D left operand";
    dml_type_t lead = o->a->type;
    lead.rank--;
    /* M may be a product of symbols (batch * sequence length): counts and
     * bounds checks take the run-time product */
    if (!type_numel(&lead, &o->m)) return "a symbol used by two dims or too many symbols";
    const dml_dim_t kd = o->a->type.dims[o->a->type.rank - 1];
    o->ksym = kd.sym;
    o->k = kd.value;
  }
  const dml_dim_t *bd = o->b->type.dims;
  if (bd[o->tb ? 0 : 1].sym >= 0) return "symbolic N";
  o->n = bd[o->tb ? 0 : 1].value;
  if (bd[o->tb ? 1 : 0].value != o->k || bd[o->tb ? 1 : 0].sym != o->ksym)
    return "K mismatch";
  /* the work estimates are affine in one symbol */
  if (o->ksym >= 0 && o->m.sym >= 0) return "symbolic M and K";
  if (o->c && o->c->type.rank > 2) return "bias of rank > 2";
  return NULL;
}

/* GEMM kernels. Three forms, chosen by the shape (docs/kernels.md "GEMM"):
 *
 * - small M (at most GEMM_SMALL_M rows at the symbols' bounds, e.g. batch-1
 *   inference): a K-split dot product. A workgroup of 32 x 8 invocations
 *   covers 32 columns and 8 rows; invocation (x, y) sums rows 0..7 of the
 *   block over the y-th of 8 contiguous K chunks in registers, the 8
 *   partial sums meet in shared memory, and invocation (x, y) finishes row y
 *   (epilogue included). With a transposed B ([N, K]) the 32 invocations of
 *   a column interleave over K instead, so that loads are coalesced
 *   (emit_gemm_small_tb).
 * - otherwise register-blocked tiles: a workgroup of `threads` invocations
 *   computes a BM x BN block of C, each invocation a TM x TN micro-tile held
 *   in registers. Per K step of BK, the block's A (stored transposed:
 *   tile0[k][m], so the inner loop reads rows contiguously) and B
 *   (tile1[k][n]) slices are staged in shared memory from registers loaded
 *   during the previous step's arithmetic (one tile pair, two barriers per
 *   step). The micro-tile's rows and columns are two groups of 4 adjacent
 *   ones (e.g. columns 4tx..4tx+3 and 4tx+BN/2..), so shared reads are
 *   conflict-free and vectorizable. The inner K step is unrolled in the IR.
 *   Bounds checks are emitted only for the dims that need them (M symbolic
 *   or not a multiple of BM, N % BN, K symbolic or K % BK). Workgroups are 1-D; the
 * grid's x counts row blocks, so a symbolic M uses a form with BM == threads (groups =
 * ceil(M / BM) with items = M), a static M any form. */

#define GEMM_SMALL_M 64 /* at most this many rows: the K-split form */
#define GEMM_SPLIT 8    /* small form: K chunks = rows per workgroup */
#define GEMM_SCOLS 32   /* small form: columns per workgroup */

typedef struct gemm_cfg {
  int64_t bm, bn, tm, tn, bk, threads;
} gemm_cfg_t;

/* Largest value of count `l` at the symbols' bounds (saturating). */
static int64_t lin_max(const sched_t *s, dml_klin_t l) {
  int64_t t = l.c;
  for (int32_t i = -1; i < 32; i++) {
    int32_t k = i < 0 ? l.sym : i;
    if (i < 0 ? k < 0 : !(l.more >> i & 1u)) continue;
    int64_t b = (uint32_t)k < s->g->n_symbols ? s->g->symbols[k].bound : 1;
    if (__builtin_mul_overflow(t, b, &t)) return INT64_MAX;
  }
  return t > INT64_MAX - l.c0 ? INT64_MAX : t + l.c0;
}

static const dml_kidx_t *kadd(dml_kpool_t *p, const dml_kidx_t *a, const dml_kidx_t *b) {
  return dml_ki_bin(p, DML_KI_ADD, a, b);
}
static const dml_kidx_t *kmul(dml_kpool_t *p, const dml_kidx_t *a, int64_t c) {
  return dml_ki_bin(p, DML_KI_MUL, a, dml_ki_const(p, c));
}
static const dml_kidx_t *kaddc(dml_kpool_t *p, const dml_kidx_t *a, int64_t c) {
  return dml_ki_bin(p, DML_KI_ADD, a, dml_ki_const(p, c));
}

/* K as an index expression (k, or k * its symbol's value). */
static const dml_kidx_t *gemm_k(dml_kpool_t *p, const gemm_shape_t *gs) {
  return dml_ki_lin(p, (dml_klin_t){gs->k, gs->ksym, 0, 0});
}

/* ceil(K / d): a constant, or (K + d - 1) / d from the push constants. */
static const dml_kidx_t *gemm_k_ceil(dml_kpool_t *p, const gemm_shape_t *gs, int64_t d) {
  if (gs->ksym < 0) return dml_ki_const(p, (gs->k + d - 1) / d);
  return dml_ki_bin(p, DML_KI_DIV, kaddc(p, gemm_k(p, gs), d - 1), dml_ki_const(p, d));
}

/* 1 when K may not be a multiple of d (K symbolic, or K % d != 0). */
static int gemm_k_ragged(const gemm_shape_t *gs, int64_t d) {
  return gs->ksym >= 0 || gs->k % d != 0;
}

/* Appends the statements of `x` to `b`. */
static void block_append(dml_kblock_t *b, const dml_kblock_t *x) {
  if (!x->first) return;
  if (b->last)
    b->last->next = x->first;
  else
    b->first = x->first;
  b->last = x->last;
}

/* The value of the anchor at (row, col) from its accumulator `acc`:
 * alpha * acc + beta * C (Gemm's bias, broadcast), in f32, then rounded to
 * the output's dtype (f16/bf16: nearest even, once, as the CPU's store of
 * its double sum). */
static const dml_kval_t *gemm_result(sched_t *s, const gemm_shape_t *gs,
                                     const dml_kval_t *acc, const dml_kidx_t *row,
                                     const dml_kidx_t *col) {
  dml_kpool_t *p = s->pool;
  const dml_kval_t *r = acc;
  if (gs->alpha != 1.0)
    r = dml_kv_fn(p, DML_KF_MUL, dml_kv_const(p, (float)gs->alpha), r);
  if (gs->c && gs->beta != 0.0) {
    dml_type_t out2 = {DML_DTYPE_F32, 2, {{gs->m.c, gs->m.sym}, {gs->n, -1}}};
    const dml_kidx_t *coord[2] = {row, col};
    const dml_kval_t *cv =
        load_f32(s, gs->c, at(s, gs->c, bcast_index(s, &gs->c->type, &out2, coord)));
    if (gs->beta != 1.0)
      cv = dml_kv_fn(p, DML_KF_MUL, dml_kv_const(p, (float)gs->beta), cv);
    r = dml_kv_fn(p, DML_KF_ADD, r, cv);
  }
  return kdt(gs->y) == DML_KT_F32 ? r : dml_kv_cast(p, kdt(gs->y), r);
}

/* Appends the epilogue of output element (row, col): the result, then the
 * group's chain (its nodes see the result as 2-D [M, N]: their operands
 * broadcast against the group's output type, whose trailing dim is N),
 * inside the bounds checks asked for. The chain's work estimate is counted
 * by the first call only (`*counted`). */
static void gemm_epilogue(sched_t *s, dml_kernel_t *K, const group_t *G,
                          const gemm_shape_t *gs, dml_kblock_t *b, const dml_kval_t *acc,
                          const dml_kidx_t *row, const dml_kidx_t *col, int check_m,
                          int check_n, int *counted) {
  dml_kpool_t *p = s->pool;
  const dml_kidx_t *flat = kadd(p, kmul(p, row, gs->n), col);
  if (gs->bat) flat = kadd(p, kmul(p, gs->bat, gs->m.c * gs->n), flat);
  const dml_kidx_t *ecoord[DML_MAX_RANK];
  coords_of(s, G->out, flat, ecoord);
  dml_kblock_t epi = {0};
  dml_klin_t fl = K->flops, by = K->bytes;
  emit_chain(s, K, G, &epi, gemm_result(s, gs, acc, row, col), ecoord, flat);
  if (*counted) K->flops = fl, K->bytes = by;
  *counted = 1;
  if (!check_m && !check_n) {
    block_append(b, &epi);
    return;
  }
  dml_kstmt_t *st = epi.first;
  if (check_n) st = if_lt(s, col, dml_ki_const(p, gs->n), st);
  if (check_m) st = if_lt(s, row, dml_ki_lin(p, gs->m), st);
  dml_kblock_add(b, st);
}

/* Element index of A at (row m, column k) and of B at (row k, column n). */
static const dml_kidx_t *a_index(sched_t *s, const gemm_shape_t *gs, const dml_kidx_t *m,
                                 const dml_kidx_t *k) {
  dml_kpool_t *p = s->pool;
  const dml_kidx_t *e =
      gs->ta ? kadd(p, dml_ki_bin(p, DML_KI_MUL, k, dml_ki_lin(p, gs->m)), m)
             : kadd(p, dml_ki_bin(p, DML_KI_MUL, m, gemm_k(p, gs)), k);
  if (gs->bat) e = kadd(p, kmul(p, gs->bat, gs->m.c * gs->k), e);
  return at(s, gs->a, e);
}
static const dml_kidx_t *b_index(sched_t *s, const gemm_shape_t *gs, const dml_kidx_t *k,
                                 const dml_kidx_t *n) {
  dml_kpool_t *p = s->pool;
  const dml_kidx_t *e = gs->tb ? kadd(p, dml_ki_bin(p, DML_KI_MUL, n, gemm_k(p, gs)), k)
                               : kadd(p, kmul(p, k, gs->n), n);
  if (gs->bat) e = kadd(p, kmul(p, gs->bat, gs->k * gs->n), e);
  return at(s, gs->b, e);
}

/* reg = load, or 0 outside the bounds (each check `lhs < hi` when lhs is
 * not NULL). */
static void guarded_load(sched_t *s, dml_kblock_t *b, uint32_t reg, const dml_kval_t *v,
                         const dml_kidx_t *l0, const dml_kidx_t *h0, const dml_kidx_t *l1,
                         const dml_kidx_t *h1) {
  dml_kpool_t *p = s->pool;
  if (!l0 && !l1) {
    dml_kblock_add(b, assign(s, DML_KS_SET, reg, v));
    return;
  }
  dml_kblock_add(b, assign(s, DML_KS_SET, reg, dml_kv_const(p, 0.0f)));
  dml_kstmt_t *st = assign(s, DML_KS_SET, reg, v);
  if (l1) st = if_lt(s, l1, h1, st);
  if (l0) st = if_lt(s, l0, h0, st);
  dml_kblock_add(b, st);
}

/* v[0] + ... + v[n-1] as a balanced tree (a short dependency chain). */
static const dml_kval_t *sum_tree(dml_kpool_t *p, const dml_kval_t *const *v, int64_t n) {
  if (n == 1) return v[0];
  return dml_kv_fn(p, DML_KF_ADD, sum_tree(p, v, n / 2),
                   sum_tree(p, v + n / 2, n - n / 2));
}

/* The K loop of the small-M forms: for each K step t (0 <= t < T), k(t) =
 * base + t * stride; b = B[k, col] (or B[col, k] transposed), and for each
 * of the R rows, acc_r += A[row0 + r, k] * b. With K static the steps are
 * unrolled in groups of GEMM_KU (all T of them when T <= GEMM_KU_FULL):
 * a group first loads its B values into registers, then each row's
 * products, so that the loads of a group are in flight together (batch-1
 * inference is bound by load latency, not bandwidth); only the steps that
 * can pass K (t >= n_safe) carry a bounds check. A symbolic K keeps one
 * step per iteration. Registers: acc .. acc + R - 1 the sums, breg ..
 * breg + GEMM_KU_FULL - 1 the B values. */
#define GEMM_KU 8       /* K steps per unrolled group */
#define GEMM_KU_FULL 32 /* at most this many steps: no loop at all */
static void ksplit_steps(sched_t *s, dml_kblock_t *out, const gemm_shape_t *gs,
                         const dml_kidx_t *const *k, const int *check, int n,
                         const dml_kidx_t *row0, const dml_kidx_t *col, int64_t R,
                         int check_m, uint32_t acc, uint32_t breg) {
  dml_kpool_t *p = s->pool;
  const dml_kidx_t *M = dml_ki_lin(p, gs->m), *Kk = gemm_k(p, gs);
  for (int j = 0; j < n; j++) {
    const dml_kval_t *b = load_f32(s, gs->b, b_index(s, gs, k[j], col));
    if (check[j]) {
      dml_kblock_add(out,
                     assign(s, DML_KS_SET, breg + (uint32_t)j, dml_kv_const(p, 0.0f)));
      dml_kblock_add(out,
                     if_lt(s, k[j], Kk, assign(s, DML_KS_SET, breg + (uint32_t)j, b)));
    } else {
      dml_kblock_add(out, assign(s, DML_KS_SET, breg + (uint32_t)j, b));
    }
  }
  for (int64_t r = 0; r < R; r++) {
    const dml_kidx_t *row = kaddc(p, row0, r);
    dml_kblock_t rb = {0};
    for (int j = 0; j < n; j++) {
      const dml_kval_t *prod =
          dml_kv_fn(p, DML_KF_MUL, load_f32(s, gs->a, a_index(s, gs, row, k[j])),
                    dml_kv_reg(p, breg + (uint32_t)j));
      dml_kstmt_t *st =
          assign(s, DML_KS_SET, acc + (uint32_t)r,
                 dml_kv_fn(p, DML_KF_ADD, dml_kv_reg(p, acc + (uint32_t)r), prod));
      dml_kblock_add(&rb, check[j] ? if_lt(s, k[j], Kk, st) : st);
    }
    if (check_m)
      dml_kblock_add(out, if_lt(s, row, M, rb.first));
    else
      block_append(out, &rb);
  }
}

static void ksplit_loop(sched_t *s, dml_kblock_t *out, const gemm_shape_t *gs,
                        const dml_kidx_t *base, int64_t stride, const dml_kidx_t *trip,
                        int64_t T, int64_t n_safe, const dml_kidx_t *row0,
                        const dml_kidx_t *col, int64_t R, int check_m, uint32_t acc,
                        uint32_t breg) {
  dml_kpool_t *p = s->pool;
  const int32_t iv = DML_KVAR_FIRST_LOOP;
  const dml_kidx_t *k[GEMM_KU_FULL];
  int check[GEMM_KU_FULL];
  for (int j = 0; j < GEMM_KU_FULL; j++)
    dml_kblock_add(out, assign(s, DML_KS_LET, breg + (uint32_t)j, dml_kv_const(p, 0.0f)));
  if (gs->ksym >= 0) { /* one step per iteration, bounds-checked */
    dml_kblock_t step = {0};
    k[0] = kadd(p, base, kmul(p, dml_ki_var(p, iv), stride));
    check[0] = 1;
    ksplit_steps(s, &step, gs, k, check, 1, row0, col, R, check_m, acc, breg);
    dml_kblock_add(out, for_loop(s, iv, trip, step.first));
    return;
  }
  int64_t groups = T <= GEMM_KU_FULL ? 0 : n_safe / GEMM_KU;
  if (groups > 0) {
    dml_kblock_t step = {0};
    for (int j = 0; j < GEMM_KU; j++) {
      k[j] = kadd(p, base,
                  kmul(p, kaddc(p, kmul(p, dml_ki_var(p, iv), GEMM_KU), j), stride));
      check[j] = 0;
    }
    ksplit_steps(s, &step, gs, k, check, GEMM_KU, row0, col, R, check_m, acc, breg);
    dml_kblock_add(out, for_loop(s, iv, dml_ki_const(p, groups), step.first));
  }
  /* the rest, unrolled: at most GEMM_KU_FULL steps at a time */
  for (int64_t t0 = groups * GEMM_KU; t0 < T; t0 += GEMM_KU_FULL) {
    int n = (int)(T - t0 < GEMM_KU_FULL ? T - t0 : GEMM_KU_FULL);
    for (int j = 0; j < n; j++) {
      k[j] = kadd(p, base, dml_ki_const(p, (t0 + j) * stride));
      check[j] = t0 + j >= n_safe;
    }
    ksplit_steps(s, out, gs, k, check, n, row0, col, R, check_m, acc, breg);
  }
}

/* The small-M form (see above). */
static void emit_gemm_small(sched_t *s, dml_kernel_t *K, const group_t *G,
                            const gemm_shape_t *gs) {
  dml_kpool_t *p = s->pool;
  const int64_t R = GEMM_SPLIT, X = GEMM_SCOLS;
  K->local[0] = (uint32_t)X;
  K->local[1] = (uint32_t)R;
  K->items[0] = (dml_klin_t){gs->n, -1, 0, 0};
  K->items[1] = gs->m; /* ceil(M / 8) workgroups of 8 rows */
  K->n_tiles = 1;
  K->tile_elems[0] = (uint32_t)(R * R * X);
  const dml_kidx_t *col = dml_ki_var(p, DML_KVAR_GID_X),
                   *lx = dml_ki_var(p, DML_KVAR_LID_X),
                   *ly = dml_ki_var(p, DML_KVAR_LID_Y),
                   *wy = dml_ki_var(p, DML_KVAR_WG_Y);
  int check_m = !(gs->m.sym < 0 && (gs->m.c + gs->m.c0) % R == 0);
  int check_n = gs->n % X != 0;
  const dml_kidx_t *chunk = gemm_k_ceil(p, gs, R);
  const uint32_t acc = G->n, breg = acc + (uint32_t)R, sum = breg + GEMM_KU_FULL;
  const dml_kidx_t *row0 = kmul(p, wy, R);
  /* step t of chunk y: k = y * chunk + t, valid for every y while
   * (R - 1) * chunk + t < K */
  const int64_t ch = (gs->k + R - 1) / R, safe = gs->k - (R - 1) * ch;
  dml_kblock_t kloop = {0};
  ksplit_loop(s, &kloop, gs, dml_ki_bin(p, DML_KI_MUL, ly, chunk), 1, chunk, ch,
              safe > 0 ? safe : 0, row0, col, R, check_m, acc, breg);
  dml_kblock_t body = {0};
  for (int64_t r = 0; r < R; r++)
    dml_kblock_add(&body,
                   assign(s, DML_KS_LET, acc + (uint32_t)r, dml_kv_const(p, 0.0f)));
  if (check_n)
    dml_kblock_add(&body, if_lt(s, col, dml_ki_const(p, gs->n), kloop.first));
  else
    block_append(&body, &kloop);
  /* tile0[(y * 8 + r) * 32 + x] = acc_r; row y = sum over the chunks */
  for (int64_t r = 0; r < R; r++) {
    dml_kstmt_t *st = dml_ks_new(p, DML_KS_TILE_STORE);
    if (!st) return;
    st->tile = 0;
    st->idx = kadd(p, kmul(p, ly, R * X), kaddc(p, lx, r * X));
    st->val = dml_kv_reg(p, acc + (uint32_t)r);
    dml_kblock_add(&body, st);
  }
  dml_kblock_add(&body, dml_ks_new(p, DML_KS_BARRIER));
  const dml_kval_t *part[GEMM_SPLIT];
  for (int64_t j = 0; j < R; j++)
    part[j] = dml_kv_tile(p, 0, kadd(p, kmul(p, ly, X), kaddc(p, lx, j * R * X)));
  dml_kblock_add(&body, assign(s, DML_KS_LET, sum, sum_tree(p, part, R)));
  int counted = 0;
  gemm_epilogue(s, K, G, gs, &body, dml_kv_reg(p, sum), kadd(p, row0, ly), col, check_m,
                check_n, &counted);
  K->body = body.first;
  K->n_regs = sum + 1;
}

/* Records K's product and an epilogue at (GID_Y, GID_X) reading register
 * G->n (dml_kgemm_t), for renderers with their own GEMM main loop. The
 * kernel's work estimates and registers are left as they were. */
static void attach_gemm(sched_t *s, dml_kernel_t *K, const group_t *G,
                        const gemm_shape_t *gs) {
  dml_kpool_t *p = s->pool;
  dml_kgemm_t *m = (dml_kgemm_t *)dml_kpool_alloc(p, sizeof *m);
  if (!m) return;
  dml_klin_t flops = K->flops, bytes = K->bytes;
  uint32_t n_regs = K->n_regs;
  K->n_regs = 0;
  dml_kblock_t epi = {0};
  int counted = 0;
  gemm_epilogue(s, K, G, gs, &epi, dml_kv_reg(p, G->n), dml_ki_var(p, DML_KVAR_GID_Y),
                dml_ki_var(p, DML_KVAR_GID_X), 1, 1, &counted);
  m->epilogue = epi.first;
  m->acc_reg = G->n;
  m->n_regs = (K->n_regs > G->n ? K->n_regs : G->n) + 1;
  K->flops = flops;
  K->bytes = bytes;
  K->n_regs = n_regs;
  m->a_buf = buf_of(gs->a);
  m->b_buf = buf_of(gs->b);
  m->dtype = kdt(gs->a);
  m->a_off = (int64_t)(gs->a->offset / dml_kdtype_size(m->dtype));
  m->b_off = (int64_t)(gs->b->offset / dml_kdtype_size(m->dtype));
  m->ta = gs->ta;
  m->tb = gs->tb;
  m->m = gs->m;
  m->n = gs->n;
  m->k = gs->k;
  K->gemm = m;
}

/* The small-M form of a transposed B (B is [N, K], rows contiguous in K):
 * a workgroup of 32 x 8 invocations covers 8 columns and 8 rows; the 32
 * invocations of a column (x) take every 32nd K index, so a warp reads 32
 * adjacent floats of B's row (and of A's rows when A is not transposed);
 * the 32 partial sums of (row, column) meet in a shared tile (rows padded to
 * 33 floats) and invocation (x < 8, y) adds them for row x, column y. */
static void emit_gemm_small_tb(sched_t *s, dml_kernel_t *K, const group_t *G,
                               const gemm_shape_t *gs) {
  dml_kpool_t *p = s->pool;
  const int64_t R = GEMM_SPLIT, L = 32, C = 8, S = L + 1;
  K->local[0] = (uint32_t)L;
  K->local[1] = (uint32_t)C;
  K->items[0] = (dml_klin_t){gs->n * (L / C), -1, 0, 0}; /* ceil(N / 8) workgroups */
  K->items[1] = gs->m;                                   /* ceil(M / 8) workgroups */
  K->n_tiles = 1;
  K->tile_elems[0] = (uint32_t)(C * R * S);
  const dml_kidx_t *lx = dml_ki_var(p, DML_KVAR_LID_X),
                   *ly = dml_ki_var(p, DML_KVAR_LID_Y);
  const dml_kidx_t *col = kadd(p, kmul(p, dml_ki_var(p, DML_KVAR_WG_X), C), ly);
  const dml_kidx_t *row0 = kmul(p, dml_ki_var(p, DML_KVAR_WG_Y), R);
  int check_m = !(gs->m.sym < 0 && (gs->m.c + gs->m.c0) % R == 0);
  int check_n = gs->n % C != 0;
  const uint32_t acc = G->n, breg = acc + (uint32_t)R, sum = breg + GEMM_KU_FULL;
  /* step t: k = t * 32 + x, valid for every x while (t + 1) * 32 <= K */
  dml_kblock_t kloop = {0};
  ksplit_loop(s, &kloop, gs, lx, L, gemm_k_ceil(p, gs, L), (gs->k + L - 1) / L, gs->k / L,
              row0, col, R, check_m, acc, breg);
  dml_kblock_t body = {0};
  for (int64_t r = 0; r < R; r++)
    dml_kblock_add(&body,
                   assign(s, DML_KS_LET, acc + (uint32_t)r, dml_kv_const(p, 0.0f)));
  if (check_n)
    dml_kblock_add(&body, if_lt(s, col, dml_ki_const(p, gs->n), kloop.first));
  else
    block_append(&body, &kloop);
  /* tile0[(y * 8 + r) * 33 + x] = acc_r */
  for (int64_t r = 0; r < R; r++) {
    dml_kstmt_t *st = dml_ks_new(p, DML_KS_TILE_STORE);
    if (!st) return;
    st->tile = 0;
    st->idx = kadd(p, kmul(p, ly, R * S), kaddc(p, lx, r * S));
    st->val = dml_kv_reg(p, acc + (uint32_t)r);
    dml_kblock_add(&body, st);
  }
  dml_kblock_add(&body, dml_ks_new(p, DML_KS_BARRIER));
  /* invocation (x < 8, y): row x, column y */
  const dml_kidx_t *base = kadd(p, kmul(p, ly, R * S), kmul(p, lx, S));
  const dml_kval_t *part[32];
  for (int64_t j = 0; j < L; j++) part[j] = dml_kv_tile(p, 0, kaddc(p, base, j));
  dml_kblock_t fin = {0};
  dml_kblock_add(&fin, assign(s, DML_KS_LET, sum, sum_tree(p, part, L)));
  int counted = 0;
  gemm_epilogue(s, K, G, gs, &fin, dml_kv_reg(p, sum), kadd(p, row0, lx), col, check_m,
                check_n, &counted);
  dml_kblock_add(&body, if_lt(s, lx, dml_ki_const(p, R), fin.first));
  K->body = body.first;
  K->n_regs = sum + 1;
}

/* Row (or column) of micro-tile entry i within the block: two groups of 4
 * adjacent entries, 4 * (lanes) apart. */
static const dml_kidx_t *micro_off(dml_kpool_t *p, const dml_kidx_t *t4, int64_t i,
                                   int64_t lanes, int64_t plus) {
  return kaddc(p, t4, (i / 4) * 4 * lanes + i % 4 + plus);
}

/* The register-blocked form with configuration `c` (see above). */
static void emit_gemm_tiled(sched_t *s, dml_kernel_t *K, const group_t *G,
                            const gemm_shape_t *gs0, const gemm_cfg_t *c) {
  dml_kpool_t *p = s->pool;
  gemm_shape_t gb = *gs0;
  const gemm_shape_t *gs = &gb;
  const int64_t BM = c->bm, BN = c->bn, TM = c->tm, TN = c->tn, BK = c->bk,
                T = c->threads;
  const int64_t RG = BM / TM, CG = BN / TN, SA = BM + 4, SB = BN + 4;
  const int64_t QA = BM * BK / T, QB = BN * BK / T;
  const dml_kidx_t *steps = gemm_k_ceil(p, gs, BK);
  K->local[0] = (uint32_t)T;
  if (gs->m.sym >= 0) {
    K->items[0] = gs->m; /* BM == T: ceil(M / BM) workgroups */
  } else {
    K->items[0] = (dml_klin_t){((gs->m.c + gs->m.c0 + BM - 1) / BM) * T, -1, 0, 0};
  }
  K->items[1] = (dml_klin_t){(gs->n + BN - 1) / BN, -1, 0, 0};
  K->n_tiles = 2;
  K->tile_elems[0] = (uint32_t)(BK * SA);
  K->tile_elems[1] = (uint32_t)(BK * SB);
  int check_m = !(gs->m.sym < 0 && (gs->m.c + gs->m.c0) % BM == 0);
  int check_n = gs->n % BN != 0, check_k = gemm_k_ragged(gs, BK);
  const dml_kidx_t *lid = dml_ki_var(p, DML_KVAR_LID_X);
  const dml_kidx_t *row0 = kmul(p, dml_ki_var(p, DML_KVAR_WG_X), BM),
                   *col0 = kmul(p, dml_ki_var(p, DML_KVAR_WG_Y), BN);
  if (gs->nb.c > 0) {
    /* batched (static M): workgroup x = product * MB + row block */
    const int64_t MB = (gs->m.c + BM - 1) / BM;
    const dml_kidx_t *wx = dml_ki_var(p, DML_KVAR_WG_X);
    K->items[0] = gs->nb;
    K->items[0].c *= MB * T;
    K->items[0].c0 *= MB * T;
    row0 = kmul(p, dml_ki_bin(p, DML_KI_MOD, wx, dml_ki_const(p, MB)), BM);
    gb.bat = dml_ki_bin(p, DML_KI_DIV, wx, dml_ki_const(p, MB));
  }
  const dml_kidx_t *M = dml_ki_lin(p, gs->m), *N = dml_ki_const(p, gs->n),
                   *Kk = gemm_k(p, gs);
  const dml_kidx_t *tx4 = kmul(p, dml_ki_bin(p, DML_KI_MOD, lid, dml_ki_const(p, CG)), 4),
                   *ty4 = kmul(p, dml_ki_bin(p, DML_KI_DIV, lid, dml_ki_const(p, CG)), 4);
  /* registers: the group's values, then acc[TM*TN], a[TM], b[TN], the
   * prefetched A[QA] and B[QB] */
  const uint32_t acc = G->n, ra = acc + (uint32_t)(TM * TN), rb = ra + (uint32_t)TM,
                 pa = rb + (uint32_t)TN, pb = pa + (uint32_t)QA;
  int32_t tvar = DML_KVAR_FIRST_LOOP;
  /* Staging element q of this invocation: flat e = lid + T * q of a tile
   * whose fast dim has `inner` entries -> (inner index, outer index). */
#define GEMM_SPLIT_IDX(inner, q, out_in, out_out)                                \
  do {                                                                           \
    if (T % (inner) == 0) {                                                      \
      out_in = dml_ki_bin(p, DML_KI_MOD, lid, dml_ki_const(p, inner));           \
      out_out = kaddc(p, dml_ki_bin(p, DML_KI_DIV, lid, dml_ki_const(p, inner)), \
                      (q) * (T / (inner)));                                      \
    } else {                                                                     \
      out_in = kaddc(p, lid, ((q) % ((inner) / T)) * T);                         \
      out_out = dml_ki_const(p, (q) / ((inner) / T));                            \
    }                                                                            \
  } while (0)
  /* prefetch of the step starting at K index kb: registers pa, pb */
  dml_kblock_t pre[2] = {{0}, {0}};
  const dml_kidx_t *kbase[2] = {dml_ki_const(p, 0),
                                kmul(p, kaddc(p, dml_ki_var(p, tvar), 1), BK)};
  dml_kblock_t store = {0};
  for (int w = 0; w < 2; w++) {
    for (int64_t q = 0; q < QA; q++) {
      const dml_kidx_t *m, *kk;
      if (gs->ta)
        GEMM_SPLIT_IDX(BM, q, m, kk);
      else
        GEMM_SPLIT_IDX(BK, q, kk, m);
      const dml_kidx_t *mg = kadd(p, row0, m), *kg = kadd(p, kbase[w], kk);
      guarded_load(s, &pre[w], pa + (uint32_t)q,
                   load_f32(s, gs->a, a_index(s, gs, mg, kg)), check_m ? mg : NULL, M,
                   check_k ? kg : NULL, Kk);
      if (w == 0) {
        dml_kstmt_t *st = dml_ks_new(p, DML_KS_TILE_STORE);
        if (!st) return;
        st->tile = 0;
        st->idx = kadd(p, kmul(p, kk, SA), m);
        st->val = dml_kv_reg(p, pa + (uint32_t)q);
        dml_kblock_add(&store, st);
      }
    }
    for (int64_t q = 0; q < QB; q++) {
      const dml_kidx_t *n, *kk;
      if (gs->tb)
        GEMM_SPLIT_IDX(BK, q, kk, n);
      else
        GEMM_SPLIT_IDX(BN, q, n, kk);
      const dml_kidx_t *ng = kadd(p, col0, n), *kg = kadd(p, kbase[w], kk);
      guarded_load(s, &pre[w], pb + (uint32_t)q,
                   load_f32(s, gs->b, b_index(s, gs, kg, ng)), check_k ? kg : NULL, Kk,
                   check_n ? ng : NULL, N);
      if (w == 0) {
        dml_kstmt_t *st = dml_ks_new(p, DML_KS_TILE_STORE);
        if (!st) return;
        st->tile = 1;
        st->idx = kadd(p, kmul(p, kk, SB), n);
        st->val = dml_kv_reg(p, pb + (uint32_t)q);
        dml_kblock_add(&store, st);
      }
    }
  }
#undef GEMM_SPLIT_IDX
  /* one K step: stage, barrier, prefetch the next, multiply, barrier */
  dml_kblock_t step = store;
  dml_kblock_add(&step, dml_ks_new(p, DML_KS_BARRIER));
  if (gs->ksym >= 0 || gs->k > BK)
    dml_kblock_add(&step,
                   if_lt(s, kaddc(p, dml_ki_var(p, tvar), 1), steps, pre[1].first));
  for (int64_t kk = 0; kk < BK; kk++) {
    for (int64_t i = 0; i < TM; i++)
      dml_kblock_add(&step, assign(s, DML_KS_SET, ra + (uint32_t)i,
                                   dml_kv_tile(p, 0, micro_off(p, ty4, i, RG, kk * SA))));
    for (int64_t j = 0; j < TN; j++)
      dml_kblock_add(&step, assign(s, DML_KS_SET, rb + (uint32_t)j,
                                   dml_kv_tile(p, 1, micro_off(p, tx4, j, CG, kk * SB))));
    for (int64_t i = 0; i < TM; i++)
      for (int64_t j = 0; j < TN; j++) {
        uint32_t r = acc + (uint32_t)(i * TN + j);
        dml_kblock_add(
            &step,
            assign(s, DML_KS_SET, r,
                   dml_kv_fn(p, DML_KF_ADD, dml_kv_reg(p, r),
                             dml_kv_fn(p, DML_KF_MUL, dml_kv_reg(p, ra + (uint32_t)i),
                                       dml_kv_reg(p, rb + (uint32_t)j)))));
      }
  }
  dml_kblock_add(&step, dml_ks_new(p, DML_KS_BARRIER));
  dml_kblock_t body = {0};
  for (int64_t i = 0; i < TM * TN; i++)
    dml_kblock_add(&body,
                   assign(s, DML_KS_LET, acc + (uint32_t)i, dml_kv_const(p, 0.0f)));
  block_append(&body, &pre[0]);
  dml_kblock_add(&body, for_loop(s, tvar, steps, step.first));
  int counted = 0;
  for (int64_t i = 0; i < TM; i++)
    for (int64_t j = 0; j < TN; j++)
      gemm_epilogue(s, K, G, gs, &body, dml_kv_reg(p, acc + (uint32_t)(i * TN + j)),
                    kadd(p, row0, micro_off(p, ty4, i, RG, 0)),
                    kadd(p, col0, micro_off(p, tx4, j, CG, 0)), check_m, check_n,
                    &counted);
  K->body = body.first;
  K->n_regs = pb + (uint32_t)QB;
}

static void emit_gemm_group(sched_t *s, const group_t *G, const gemm_shape_t *gs) {
  dml_kernel_t *K = new_kernel(s, DML_KK_GEMM);
  if (!K) return;
  set_nodes(s, K, G);
  int64_t mmax = lin_max(s, gs->m);
  if (mmax <= GEMM_SMALL_M) {
    if (gs->tb)
      emit_gemm_small_tb(s, K, G, gs);
    else
      emit_gemm_small(s, K, G, gs);
  } else {
    gemm_cfg_t c;
    if (gs->m.sym >= 0) {
      /* BM == threads: 256 x 64 for large bounds, else 64 x 64 */
      c = mmax >= 1024 ? (gemm_cfg_t){256, 64, 8, 8, 8, 256}
                       : (gemm_cfg_t){64, 64, 8, 8, 8, 64};
    } else {
      int64_t blocks = ((mmax + 127) / 128) * ((gs->n + 127) / 128);
      c = blocks >= 128 ? (gemm_cfg_t){128, 128, 8, 8, 8, 256}
                        : (gemm_cfg_t){64, 64, 4, 4, 8, 256};
    }
    emit_gemm_tiled(s, K, G, gs, &c);
  }
  dml_klin_t fl = gs->m;
  if (gs->ksym >= 0) fl.sym = gs->ksym; /* M is static then */
  fl.c *= 2 * gs->n * gs->k;
  fl.c0 *= 2 * gs->n * gs->k;
  lin_add(&K->flops, fl, 1);
  dml_klin_t ab = gs->m;
  if (gs->ksym >= 0) ab.sym = gs->ksym;
  const int64_t esz = (int64_t)dml_dtype_size(gs->a->type.dtype);
  lin_add(&K->bytes, ab, esz * gs->k);
  lin_add(&K->bytes, (dml_klin_t){gs->k * gs->n, gs->ksym, 0, 0}, esz);
}

/* ---- convolution and pooling (2-D, NCHW) ---- */

typedef struct win_shape {
  const dml_pkg_value_t *x, *w, *b, *y;
  int64_t C, H, W, M, OH, OW, kh, kw, group;
  int64_t stride[2], dil[2], pad[2]; /* pad: top, left */
  dml_klin_t n;                      /* batch */
  /* Input height and width as dims: symbolic ones (an image size bounded
   * at compile time) are read from the run-time symbol values; sym_sp: any
   * spatial dim of x or y is symbolic (H, W, OH, OW above are then 0). */
  dml_dim_t hd, wd;
  int sym_sp;
} win_shape_t;

/* Fills the window geometry of Conv/MaxPool/AveragePool node `n`. */
static const char *win_reject(sched_t *s, const dml_pkg_node_t *n, win_shape_t *o) {
  memset(o, 0, sizeof *o);
  o->x = val(s, n->inputs[0]);
  o->y = val(s, n->outputs[0]);
  int conv = n->op == DML_OP_CONV;
  if (conv) {
    o->w = val(s, n->inputs[1]);
    o->b = n->n_inputs > 2 ? val(s, n->inputs[2]) : NULL;
  }
  if (!o->x || !o->y || (conv && !o->w)) return "absent input";
  if (n->n_outputs != 1) return "a second (Indices) output";
  if (o->x->type.dtype != DML_DTYPE_F32 || o->y->type.dtype != DML_DTYPE_F32 ||
      (o->w && o->w->type.dtype != DML_DTYPE_F32) ||
      (o->b && o->b->type.dtype != DML_DTYPE_F32))
    return "only f32 is emitted";
  /* 1-D windows (NCW) are 2-D ones of height 1 */
  int r = o->x->type.rank, one = r == 3;
  if ((r != 3 && r != 4) || o->y->type.rank != r)
    return "only 1-D (NCW) and 2-D (NCHW) windows are emitted";
  const dml_dim_t *xd = o->x->type.dims, *yd = o->y->type.dims;
  if (xd[1].sym >= 0 || yd[1].sym >= 0) return "symbolic channel dim";
  for (int d = 2; d < r; d++) o->sym_sp |= xd[d].sym >= 0 || yd[d].sym >= 0;
  dml_klin_t lx, ly;
  if (o->sym_sp &&
      (!type_numel(&o->x->type, &lx) || !type_numel(&o->y->type, &ly) ||
       dml_ksched_sym_repeats(&o->x->type) || dml_ksched_sym_repeats(&o->y->type)))
    return "a symbol used by two dims (a square image's H = W) or more than 32 symbols";
  if (xd[0].sym != yd[0].sym || xd[0].value != yd[0].value) return "batch mismatch";
  o->n = (dml_klin_t){xd[0].value, xd[0].sym, 0, 0};
  o->hd = one ? (dml_dim_t){1, -1} : xd[2], o->wd = xd[r - 1];
  o->C = xd[1].value, o->H = one ? 1 : xd[2].value, o->W = xd[r - 1].value;
  o->M = yd[1].value, o->OH = one ? 1 : yd[2].value, o->OW = yd[r - 1].value;
  if (o->sym_sp) o->H = o->W = o->OH = o->OW = 0;
  o->group = conv ? dml_attr_int(n->attrs, n->n_attrs, "group", 1) : 1;
  if (conv) {
    const dml_dim_t *wd = o->w->type.dims;
    if (o->w->type.rank != r || wd[0].sym >= 0 || wd[2].sym >= 0 || wd[r - 1].sym >= 0)
      return "weights must be static [M, C/group, kH, kW]";
    if (o->group < 1 || o->C % o->group || o->M % o->group ||
        wd[1].value * o->group != o->C || wd[0].value != o->M)
      return "bad group";
    o->kh = one ? 1 : wd[2].value, o->kw = wd[r - 1].value;
    if (o->b && (o->b->type.rank != 1 || o->b->type.dims[0].value != o->M))
      return "bias must be [M]";
  } else {
    size_t nk = 0;
    const int64_t *ks = dml_attr_ints(n->attrs, n->n_attrs, "kernel_shape", &nk);
    if (!ks || nk != (size_t)(r - 2)) return "kernel_shape does not match the rank";
    o->kh = one ? 1 : ks[0], o->kw = ks[nk - 1];
    if (o->M != o->C) return "channel mismatch";
    if (n->op == DML_OP_AVERAGE_POOL &&
        dml_attr_int(n->attrs, n->n_attrs, "ceil_mode", 0) &&
        dml_attr_int(n->attrs, n->n_attrs, "count_include_pad", 0))
      return "ceil_mode with count_include_pad";
  }
  size_t na = 0, ns = (size_t)(r - 2);
  const int64_t *a = dml_attr_ints(n->attrs, n->n_attrs, "strides", &na);
  o->stride[0] = a && na == ns && !one ? a[0] : 1;
  o->stride[1] = a && na == ns ? a[ns - 1] : 1;
  a = dml_attr_ints(n->attrs, n->n_attrs, "dilations", &na);
  o->dil[0] = a && na == ns && !one ? a[0] : 1, o->dil[1] = a && na == ns ? a[ns - 1] : 1;
  const char *ap = dml_attr_string(n->attrs, n->n_attrs, "auto_pad", "NOTSET");
  if (!strcmp(ap, "NOTSET")) {
    a = dml_attr_ints(n->attrs, n->n_attrs, "pads", &na);
    if (a && na != 2 * ns) return "pads do not match the rank";
    o->pad[0] = a && !one ? a[0] : 0, o->pad[1] = a ? a[ns - 1] : 0;
  } else if (!strcmp(ap, "VALID")) {
    o->pad[0] = o->pad[1] = 0;
  } else if (o->sym_sp) {
    return "SAME auto_pad over a symbolic spatial dim (the pads follow the run-time "
           "size)";
  } else {
    /* SAME_UPPER / SAME_LOWER: total padding from the output size */
    int64_t in[2] = {o->H, o->W}, out[2] = {o->OH, o->OW}, k[2] = {o->kh, o->kw};
    for (int d = 0; d < 2; d++) {
      int64_t total = (out[d] - 1) * o->stride[d] + (k[d] - 1) * o->dil[d] + 1 - in[d];
      if (total < 0) total = 0;
      o->pad[d] = !strcmp(ap, "SAME_LOWER") ? total - total / 2 : total / 2;
    }
  }
  if (o->stride[0] < 1 || o->stride[1] < 1 || o->dil[0] < 1 || o->dil[1] < 1 ||
      o->pad[0] < 0 || o->pad[1] < 0 || o->kh < 1 || o->kw < 1)
    return "bad strides, dilations or pads";
  return NULL;
}

/* Emits the window loops over (kh, kw) of output pixel (oh, ow): calls
 * `inner` with the input element index ih*W + iw (a bounds-checked body). */
static dml_kstmt_t *window(sched_t *s, const win_shape_t *ws, const dml_kidx_t *oh,
                           const dml_kidx_t *ow, int32_t vkh, int32_t vkw,
                           dml_kstmt_t *(*inner)(sched_t *, const dml_kidx_t *, void *),
                           void *ctx) {
  dml_kpool_t *p = s->pool;
  const dml_kidx_t *th = dml_ki_bin(
      p, DML_KI_ADD, dml_ki_bin(p, DML_KI_MUL, oh, dml_ki_const(p, ws->stride[0])),
      dml_ki_bin(p, DML_KI_MUL, dml_ki_var(p, vkh), dml_ki_const(p, ws->dil[0])));
  const dml_kidx_t *tw = dml_ki_bin(
      p, DML_KI_ADD, dml_ki_bin(p, DML_KI_MUL, ow, dml_ki_const(p, ws->stride[1])),
      dml_ki_bin(p, DML_KI_MUL, dml_ki_var(p, vkw), dml_ki_const(p, ws->dil[1])));
  const dml_kidx_t *ph = dml_ki_const(p, ws->pad[0]), *pw = dml_ki_const(p, ws->pad[1]);
  const dml_kidx_t *ih = dml_ki_bin(p, DML_KI_SUB, th, ph),
                   *iw = dml_ki_bin(p, DML_KI_SUB, tw, pw);
  const dml_kidx_t *Wi = dim_idx(s, ws->wd), *Hi = dim_idx(s, ws->hd);
  const dml_kidx_t *e = dml_ki_bin(p, DML_KI_ADD, dml_ki_bin(p, DML_KI_MUL, ih, Wi), iw);
  dml_kstmt_t *in_w = if_lt(s, tw, kaddc(p, Wi, ws->pad[1]), inner(s, e, ctx));
  if (in_w) in_w->lo = pw;
  dml_kstmt_t *in_h = if_lt(s, th, kaddc(p, Hi, ws->pad[0]), in_w);
  if (in_h) in_h->lo = ph;
  return for_loop(s, vkh, dml_ki_const(p, ws->kh),
                  for_loop(s, vkw, dml_ki_const(p, ws->kw), in_h));
}

typedef struct conv_ctx {
  const win_shape_t *ws;
  const dml_kidx_t *xbase, *wbase; /* element index of (n, c, 0, 0) and (m, c, 0, 0) */
  int32_t vkh, vkw;
  uint32_t acc;
  dml_kfn_t comb;
  int count; /* AveragePool without pads: count the valid positions */
  uint32_t cnt;
} conv_ctx_t;

static dml_kstmt_t *conv_inner(sched_t *s, const dml_kidx_t *e, void *vctx) {
  conv_ctx_t *c = (conv_ctx_t *)vctx;
  dml_kpool_t *p = s->pool;
  const dml_kval_t *xv = dml_kv_load(
      p, buf_of(c->ws->x), at(s, c->ws->x, dml_ki_bin(p, DML_KI_ADD, c->xbase, e)));
  const dml_kval_t *v = xv;
  if (c->wbase) {
    const dml_kidx_t *wk = dml_ki_bin(
        p, DML_KI_ADD, c->wbase,
        dml_ki_bin(
            p, DML_KI_ADD,
            dml_ki_bin(p, DML_KI_MUL, dml_ki_var(p, c->vkh), dml_ki_const(p, c->ws->kw)),
            dml_ki_var(p, c->vkw)));
    v = dml_kv_fn(p, DML_KF_MUL, xv,
                  dml_kv_load(p, buf_of(c->ws->w), at(s, c->ws->w, wk)));
  }
  /* max-pooling keeps NaN as the CPU does */
  const dml_kval_t *a = dml_kv_reg(p, c->acc);
  dml_kstmt_t *st =
      assign(s, DML_KS_SET, c->acc,
             c->comb == DML_KF_MAX ? nan_max(p, a, v, 1) : dml_kv_fn(p, c->comb, a, v));
  if (c->count && st)
    st->next =
        assign(s, DML_KS_SET, c->cnt,
               dml_kv_fn(p, DML_KF_ADD, dml_kv_reg(p, c->cnt), dml_kv_const(p, 1.0f)));
  return st;
}

/* Output coordinates (n, m, oh, ow) of flat id `gid` of ws->y. */
static void out_coords(sched_t *s, const win_shape_t *ws, const dml_kidx_t *gid,
                       const dml_kidx_t **coord) {
  const dml_kidx_t *c[DML_MAX_RANK] = {0};
  coords_of(s, &ws->y->type, gid, c);
  int one = ws->y->type.rank == 3; /* 1-D: (n, m, 0, ow) */
  coord[0] = c[0];
  coord[1] = c[1];
  coord[2] = one ? dml_ki_const(s->pool, 0) : c[2];
  coord[3] = one ? c[2] : c[3];
}

static void attach_conv(sched_t *s, dml_kernel_t *K, const group_t *G,
                        const win_shape_t *ws);

static void emit_conv_group(sched_t *s, const group_t *G, const win_shape_t *ws) {
  dml_kpool_t *p = s->pool;
  dml_kernel_t *K = new_kernel(s, DML_KK_CONV);
  if (!K) return;
  set_nodes(s, K, G);
  dml_klin_t numel;
  type_numel(G->out, &numel);
  K->local[0] = 64;
  K->items[0] = numel;
  const dml_kidx_t *gid = dml_ki_var(p, DML_KVAR_GID_X), *coord[4];
  out_coords(s, ws, gid, coord);
  int64_t cg = ws->C / ws->group, mg = ws->M / ws->group;
  int32_t vc = DML_KVAR_FIRST_LOOP, vkh = vc + 1, vkw = vc + 2;
  /* input channel = (m / mg) * cg + c */
  const dml_kidx_t *ch = dml_ki_bin(
      p, DML_KI_ADD,
      dml_ki_bin(p, DML_KI_MUL, dml_ki_bin(p, DML_KI_DIV, coord[1], dml_ki_const(p, mg)),
                 dml_ki_const(p, cg)),
      dml_ki_var(p, vc));
  const dml_kidx_t *xbase = dml_ki_bin(
      p, DML_KI_MUL,
      dml_ki_bin(p, DML_KI_ADD,
                 dml_ki_bin(p, DML_KI_MUL, coord[0], dml_ki_const(p, ws->C)), ch),
      dml_ki_bin(p, DML_KI_MUL, dim_idx(s, ws->hd), dim_idx(s, ws->wd)));
  const dml_kidx_t *wbase = dml_ki_bin(
      p, DML_KI_MUL,
      dml_ki_bin(p, DML_KI_ADD, dml_ki_bin(p, DML_KI_MUL, coord[1], dml_ki_const(p, cg)),
                 dml_ki_var(p, vc)),
      dml_ki_const(p, ws->kh * ws->kw));
  uint32_t acc = G->n;
  conv_ctx_t c = {ws, xbase, wbase, vkh, vkw, acc, DML_KF_ADD, 0, 0};
  dml_kblock_t body = {0};
  dml_kblock_add(&body, assign(s, DML_KS_LET, acc, dml_kv_const(p, 0.0f)));
  dml_kblock_add(&body,
                 for_loop(s, vc, dml_ki_const(p, cg),
                          window(s, ws, coord[2], coord[3], vkh, vkw, conv_inner, &c)));
  const dml_kval_t *r = dml_kv_reg(p, acc);
  if (ws->b)
    r = dml_kv_fn(p, DML_KF_ADD, r,
                  dml_kv_load(p, buf_of(ws->b), at(s, ws->b, coord[1])));
  const dml_kidx_t *ycoord[DML_MAX_RANK];
  coords_of(s, G->out, gid, ycoord);
  emit_chain(s, K, G, &body, r, ycoord, gid);
  K->body = if_lt(s, gid, dml_ki_lin(p, numel), body.first);
  K->n_regs = acc + 1;
  dml_klin_t fl = numel;
  fl.c *= 2 * cg * ws->kh * ws->kw;
  lin_add(&K->flops, fl, 1);
  dml_klin_t xl;
  if (type_numel(&ws->x->type, &xl)) lin_add(&K->bytes, xl, 4);
  lin_add(&K->bytes, (dml_klin_t){ws->M * cg * ws->kh * ws->kw, -1, 0, 0}, 4);
  if (ws->group == 1 && !ws->sym_sp) attach_conv(s, K, G, ws);
}

/* Records conv kernel K (group 1) as an implicit GEMM (dml_kconv_t in
 * dml_kgemm_t) with its epilogue at (row GID_Y = (n, oh, ow), column GID_X
 * = output channel), for renderers with their own GEMM main loop (CUDA's
 * tensor-core form). The kernel's work estimates and registers are left as
 * they were. */
static void attach_conv(sched_t *s, dml_kernel_t *K, const group_t *G,
                        const win_shape_t *ws) {
  dml_kpool_t *p = s->pool;
  dml_kgemm_t *m = (dml_kgemm_t *)dml_kpool_alloc(p, sizeof *m);
  dml_kconv_t *c = (dml_kconv_t *)dml_kpool_alloc(p, sizeof *c);
  if (!m || !c) return;
  memset(m, 0, sizeof *m);
  *c = (dml_kconv_t){ws->C,
                     ws->H,
                     ws->W,
                     ws->kh,
                     ws->kw,
                     ws->OH,
                     ws->OW,
                     {ws->stride[0], ws->stride[1]},
                     {ws->dil[0], ws->dil[1]},
                     {ws->pad[0], ws->pad[1]}};
  const int64_t ohw = ws->OH * ws->OW;
  dml_klin_t flops = K->flops, bytes = K->bytes;
  uint32_t n_regs = K->n_regs, acc = G->n;
  const dml_kidx_t *row = dml_ki_var(p, DML_KVAR_GID_Y),
                   *col = dml_ki_var(p, DML_KVAR_GID_X);
  const dml_kidx_t *n = dml_ki_bin(p, DML_KI_DIV, row, dml_ki_const(p, ohw)),
                   *q = dml_ki_bin(p, DML_KI_MOD, row, dml_ki_const(p, ohw));
  const dml_kidx_t *flat = kadd(p, kmul(p, kadd(p, kmul(p, n, ws->M), col), ohw), q);
  const dml_kidx_t *yc[DML_MAX_RANK];
  coords_of(s, G->out, flat, yc);
  const dml_kval_t *r = dml_kv_reg(p, acc);
  if (ws->b)
    r = dml_kv_fn(p, DML_KF_ADD, r, dml_kv_load(p, buf_of(ws->b), at(s, ws->b, col)));
  dml_kblock_t epi = {0};
  K->n_regs = acc + 1;
  emit_chain(s, K, G, &epi, r, yc, flat);
  dml_klin_t rows = ws->n;
  rows.c *= ohw;
  rows.c0 *= ohw;
  m->epilogue = if_lt(s, row, dml_ki_lin(p, rows),
                      if_lt(s, col, dml_ki_const(p, ws->M), epi.first));
  m->acc_reg = acc;
  m->n_regs = K->n_regs > acc + 1 ? K->n_regs : acc + 1;
  K->flops = flops;
  K->bytes = bytes;
  K->n_regs = n_regs;
  m->a_buf = buf_of(ws->x);
  m->b_buf = buf_of(ws->w);
  m->dtype = DML_KT_F32;
  m->a_off = (int64_t)(ws->x->offset / 4);
  m->b_off = (int64_t)(ws->w->offset / 4);
  m->ta = 0;
  m->tb = 1;
  m->m = rows;
  m->n = ws->M;
  m->k = ws->C * ws->kh * ws->kw;
  m->conv = c;
  K->gemm = m;
}

static void emit_pool(sched_t *s, uint32_t node, const win_shape_t *ws) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  dml_kernel_t *K = new_kernel(s, DML_KK_POOL);
  if (!K) return;
  group_t G = {.anchor = ANCHOR_NONE, .n = 1, .nodes = {node}};
  set_nodes(s, K, &G);
  dml_klin_t numel;
  type_numel(&ws->y->type, &numel);
  K->local[0] = 64;
  K->items[0] = numel;
  K->n_regs = 2;
  const dml_kidx_t *gid = dml_ki_var(p, DML_KVAR_GID_X), *coord[4];
  out_coords(s, ws, gid, coord);
  int is_max = n->op == DML_OP_MAX_POOL;
  int incl = !is_max && dml_attr_int(n->attrs, n->n_attrs, "count_include_pad", 0);
  const dml_kidx_t *xbase = dml_ki_bin(
      p, DML_KI_MUL,
      dml_ki_bin(p, DML_KI_ADD,
                 dml_ki_bin(p, DML_KI_MUL, coord[0], dml_ki_const(p, ws->C)), coord[1]),
      dml_ki_bin(p, DML_KI_MUL, dim_idx(s, ws->hd), dim_idx(s, ws->wd)));
  int32_t vkh = DML_KVAR_FIRST_LOOP, vkw = vkh + 1;
  conv_ctx_t c = {
      ws, xbase, NULL, vkh, vkw, 0, is_max ? DML_KF_MAX : DML_KF_ADD, !is_max && !incl,
      1};
  dml_kblock_t body = {0};
  dml_kblock_add(&body,
                 assign(s, DML_KS_LET, 0, dml_kv_const(p, is_max ? -INFINITY : 0.0f)));
  dml_kblock_add(&body, assign(s, DML_KS_LET, 1, dml_kv_const(p, 0.0f)));
  dml_kblock_add(&body, window(s, ws, coord[2], coord[3], vkh, vkw, conv_inner, &c));
  const dml_kval_t *r = dml_kv_reg(p, 0);
  if (!is_max)
    r = dml_kv_fn(p, DML_KF_DIV, r,
                  incl ? dml_kv_const(p, (float)(ws->kh * ws->kw)) : dml_kv_reg(p, 1));
  dml_kstmt_t *st = dml_ks_new(p, DML_KS_STORE);
  if (st) {
    st->buf = DML_KBUF_ARENA;
    st->idx = at(s, ws->y, gid);
    st->val = r;
  }
  dml_kblock_add(&body, st);
  K->body = if_lt(s, gid, dml_ki_lin(p, numel), body.first);
  lin_add(&K->flops, numel, ws->kh * ws->kw);
  dml_klin_t xl;
  if (type_numel(&ws->x->type, &xl)) lin_add(&K->bytes, xl, 4);
  lin_add(&K->bytes, numel, 4);
}

/* ---- reductions ---- */

/* Sets red[d] to 1 for each reduced dim of node `n` (input rank `rank`),
 * or, when the axes come from a 1-D integer input that is not a constant
 * (fed at run time), every red[d] to -1 and s->rt_axes to that input (the
 * kernel reads it, emit_reduce_group). An empty axes input (a static
 * length 0) reduces every dim, or none with noop_with_empty_axes (Sum,
 * Mean, Max, Min, Prod: the output is the input). NULL, or why not. */
static const char *reduce_axes(sched_t *s, const dml_pkg_node_t *n, int32_t rank,
                               int *red) {
  s->rt_axes = NULL;
  int noop = (int)dml_attr_int(n->attrs, n->n_attrs, "noop_with_empty_axes", 0);
  if (n->op == DML_OP_GLOBAL_AVERAGE_POOL || n->op == DML_OP_GLOBAL_MAX_POOL) {
    if (rank < 3) return "global pool of rank < 3";
    for (int32_t d = 0; d < rank; d++) red[d] = d >= 2;
    return NULL;
  }
  int64_t axes[DML_MAX_RANK];
  size_t na = 0;
  const int64_t *aa = dml_attr_ints(n->attrs, n->n_attrs, "axes", &na);
  if (aa) {
    if (na > DML_MAX_RANK) return "too many axes";
    memcpy(axes, aa, na * sizeof *aa);
  } else if (n->n_inputs > 1 && n->inputs[1] != DML_PKG_NO_VALUE) {
    const dml_pkg_value_t *av = val(s, n->inputs[1]);
    if (av && av->storage != DML_PKG_STORAGE_CONST && av->type.rank == 1 &&
        av->type.dims[0].sym < 0 &&
        (av->type.dtype == DML_DTYPE_I64 || av->type.dtype == DML_DTYPE_I32) &&
        typed_ok(av) && av->type.dims[0].value > 0) {
      if (av->type.dims[0].value > rank) return "more axes than dims";
      for (int32_t d = 0; d < rank; d++) red[d] = -1;
      s->rt_axes = av;
      return NULL;
    }
    if (av && av->type.rank == 1 && av->type.dims[0].sym < 0 &&
        av->type.dims[0].value == 0) {
      na = 0; /* empty: every dim, or none (noop_with_empty_axes) */
      goto have_axes;
    }
    if (!av || av->storage != DML_PKG_STORAGE_CONST || av->type.dtype != DML_DTYPE_I64 ||
        av->type.rank != 1 || av->type.dims[0].value > DML_MAX_RANK)
      return "axes must be a constant or a 1-D integer input of static length";
    na = (size_t)av->type.dims[0].value;
    if (av->offset + 8 * na > s->weights_size) return "axes outside the weights";
    memcpy(axes, s->weights + av->offset, 8 * na);
  }
have_axes:
  for (int32_t d = 0; d < rank; d++) red[d] = na == 0 && !noop;
  if (na == 0 && noop && n->op != DML_OP_REDUCE_SUM && n->op != DML_OP_REDUCE_MEAN &&
      n->op != DML_OP_REDUCE_MAX && n->op != DML_OP_REDUCE_MIN &&
      n->op != DML_OP_REDUCE_PROD)
    return "noop_with_empty_axes";
  for (size_t i = 0; i < na; i++) {
    int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank) return "axis out of range";
    red[a] = 1;
  }
  return NULL;
}

/* An integer input's element `i` as an i64 kernel value (`v` i64 or
 * i32: a run-time parameter the kernel reads, e.g. axes fed at run time). */
static const dml_kval_t *param_i64(sched_t *s, const dml_pkg_value_t *v, int64_t i) {
  return dml_kv_cast(s->pool, DML_KT_I64, load_at(s, v, dml_ki_const(s->pool, i)));
}

/* bool: some entry of `axes` (a 1-D integer value, negative entries
 * counted from `rank`) names dim d. */
static const dml_kval_t *reduced_at(sched_t *s, const dml_pkg_value_t *axes, int32_t rank,
                                    int32_t d) {
  dml_kpool_t *p = s->pool;
  const dml_kval_t *f = dml_kv_zero(p, DML_KT_BOOL);
  for (int64_t i = 0; i < axes->type.dims[0].value; i++) {
    const dml_kval_t *a = param_i64(s, axes, i);
    const dml_kval_t *hit = dml_kv_fn(
        p, DML_KF_OR, dml_kv_fn(p, DML_KF_EQ, a, dml_kv_iconst(p, DML_KT_I64, d)),
        dml_kv_fn(p, DML_KF_EQ, a, dml_kv_iconst(p, DML_KT_I64, d - rank)));
    f = dml_kv_fn(p, DML_KF_OR, f, hit);
  }
  return f;
}

/* Element index in x of reduced element `j` (row-major over the reduced
 * dims) of output element `row` (row-major over the kept dims) of a
 * reduction over `red` (reduce_axes); *out_R the reduced count (an index
 * expression: run-time axes make it one). */
static const dml_kidx_t *reduce_x_index(sched_t *s, const dml_pkg_value_t *x,
                                        const int *red, const dml_kidx_t *row,
                                        const dml_kidx_t *j, const dml_kidx_t **out_R) {
  dml_kpool_t *p = s->pool;
  /* kept dims from row, reduced dims from j (both row-major) */
  const dml_kidx_t *xcoord[DML_MAX_RANK];
  const dml_kidx_t *rest_o = row, *rest_r = j, *R = dml_ki_const(p, 1);
  /* the outermost kept and reduced dims take what is left (row < rows and
   * j < R: no remainder needed), unless axes come at run time */
  int32_t first[2] = {-1, -1};
  for (int32_t d = x->type.rank - 1; d >= 0; d--)
    if (red[d] >= 0) first[red[d] ? 1 : 0] = d;
  for (int32_t d = 0; d < x->type.rank; d++)
    if (red[d] < 0) first[0] = first[1] = -1;
  for (int32_t d = x->type.rank - 1; d >= 0; d--) {
    const dml_kidx_t *e = dim_idx(s, x->type.dims[d]);
    if (red[d] < 0) {
      /* axes fed at run time: dim d is reduced when an axis names it; the
       * kept extent is then 1 and the reduced one the dim, else the other
       * way round (so the output's flat index is the kept dims' row-major
       * one, with keepdims or without) */
      const dml_kval_t *f = reduced_at(s, s->rt_axes, x->type.rank, d);
      const dml_kval_t *X = dml_kv_idx(p, DML_KT_I64, e),
                       *one = dml_kv_one(p, DML_KT_I64);
      const dml_kidx_t *ek = dml_ki_val(p, dml_kv_select(p, f, one, X));
      const dml_kidx_t *er = dml_ki_val(p, dml_kv_select(p, f, X, one));
      xcoord[d] = dml_ki_bin(p, DML_KI_ADD, dml_ki_bin(p, DML_KI_MOD, rest_o, ek),
                             dml_ki_bin(p, DML_KI_MOD, rest_r, er));
      rest_o = dml_ki_bin(p, DML_KI_DIV, rest_o, ek);
      rest_r = dml_ki_bin(p, DML_KI_DIV, rest_r, er);
      R = dml_ki_bin(p, DML_KI_MUL, R, er);
      continue;
    }
    const dml_kidx_t **rest = red[d] ? &rest_r : &rest_o;
    xcoord[d] = first[red[d] ? 1 : 0] == d ? *rest : dml_ki_bin(p, DML_KI_MOD, *rest, e);
    *rest = dml_ki_bin(p, DML_KI_DIV, *rest, e);
    if (red[d]) R = dml_ki_bin(p, DML_KI_MUL, R, e);
  }
  *out_R = R;
  return bcast_index(s, &x->type, &x->type, xcoord);
}

/* Element j of a cooperative reduction's row (dml_krow_reduce): x at
 * reduced element j of output element `row`, through `fn` (abs, square,
 * exp(x - m) with m in register `mreg`, or none). */
typedef struct {
  const dml_pkg_value_t *x;
  const int *red;
  const dml_kidx_t *row;
  dml_op_t op;
  /* 0: x through op's function, 1: exp(x - reg mreg), 2: x with NaN as
   * the identity of ArgMax (-inf) / ArgMin (+inf), 3 / 4: j / 4096 as f32
   * where x equals reg mreg, else 2^24 / -1 (of the first / last index
   * holding it), 5 / 6: j % 4096 where besides j / 4096 equals reg hreg,
   * else 4096 / -1 (exact f32 values for any 32-bit j) */
  int mode;
  uint32_t mreg, hreg;
} red_row_t;

static const dml_kval_t *red_row_value(sched_t *s, const dml_kidx_t *j, void *vctx) {
  const red_row_t *c = vctx;
  dml_kpool_t *p = s->pool;
  const dml_kidx_t *R;
  const dml_kval_t *xv = load_at(s, c->x, reduce_x_index(s, c->x, c->red, c->row, j, &R));
  if (c->mode == 1)
    return dml_kv_fn(p, DML_KF_EXP, dml_kv_fn(p, DML_KF_SUB, xv, dml_kv_reg(p, c->mreg)),
                     NULL);
  if (c->mode == 2)
    return dml_kv_select(p, dml_kv_fn(p, DML_KF_EQ, xv, xv), xv,
                         dml_kv_const(p, c->op == DML_OP_ARG_MAX ? -INFINITY : INFINITY));
  if (c->mode >= 3) {
    const dml_kval_t *hit = dml_kv_fn(p, DML_KF_EQ, xv, dml_kv_reg(p, c->mreg));
    const dml_kval_t *hi =
        dml_kv_idx(p, DML_KT_F32, dml_ki_bin(p, DML_KI_DIV, j, dml_ki_const(p, 4096)));
    if (c->mode <= 4)
      return dml_kv_select(p, hit, hi,
                           dml_kv_const(p, c->mode == 3 ? 16777216.0f : -1.0f));
    hit = dml_kv_fn(p, DML_KF_AND, hit,
                    dml_kv_fn(p, DML_KF_EQ, hi, dml_kv_reg(p, c->hreg)));
    return dml_kv_select(
        p, hit,
        dml_kv_idx(p, DML_KT_F32, dml_ki_bin(p, DML_KI_MOD, j, dml_ki_const(p, 4096))),
        dml_kv_const(p, c->mode == 5 ? 4096.0f : -1.0f));
  }
  if (c->op == DML_OP_REDUCE_L1) return dml_kv_fn(p, DML_KF_ABS, xv, NULL);
  if (c->op == DML_OP_REDUCE_L2 || c->op == DML_OP_REDUCE_SUM_SQUARE)
    return dml_kv_fn(p, DML_KF_MUL, xv, xv);
  return xv;
}

/* Largest reduced count of a reduction over `red` of x (at the bounds;
 * run-time axes: every element). */
static int64_t reduce_count_max(const sched_t *s, const dml_pkg_value_t *x,
                                const int *red) {
  int64_t m = 1;
  for (int32_t d = 0; d < x->type.rank; d++) {
    if (!red[d]) continue;
    dml_klin_t l = {x->type.dims[d].value, x->type.dims[d].sym, 0, 0};
    int64_t e = lin_max(s, l);
    if (__builtin_mul_overflow(m, e, &m)) return INT64_MAX;
  }
  return m;
}

static void emit_reduce_group(sched_t *s, const group_t *G, const int *red) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[G->nodes[0]];
  const dml_pkg_value_t *x = val(s, n->inputs[0]);
  dml_kernel_t *K = new_kernel(s, DML_KK_REDUCE);
  if (!K) return;
  set_nodes(s, K, G);
  dml_klin_t numel;
  type_numel(G->out, &numel);
  dml_kdtype_t t = kdt(x);
  int is_arg = n->op == DML_OP_ARG_MAX || n->op == DML_OP_ARG_MIN;
  /* long f32 rows: one workgroup per output element (schedule_rows.c) */
  int64_t rmax = reduce_count_max(s, x, red);
  int coop = t == DML_KT_F32 && dml_krow_wanted(s, rmax);
  int32_t r = DML_KVAR_FIRST_LOOP;
  const dml_kidx_t *gid =
      coop ? dml_krow_setup(s, K, numel, r + 1, 0) : dml_ki_var(p, DML_KVAR_GID_X);
  if (!coop) {
    K->local[0] = WG;
    K->items[0] = numel;
  }
  const dml_kidx_t *rv = dml_ki_var(p, r);
  const dml_kidx_t *R;
  const dml_kidx_t *xi = reduce_x_index(s, x, red, gid, rv, &R);
  uint32_t acc = G->n;
  const dml_kidx_t *coord[DML_MAX_RANK];
  coords_of(s, G->out, gid, coord);
  dml_kblock_t body = {0};
  if (is_arg) {
    /* best value in register acc + 1, its index (i64) in acc; the first
     * (or with select_last_index the last) extremum wins */
    int last = (int)dml_attr_int(n->attrs, n->n_attrs, "select_last_index", 0);
    dml_kfn_t better = n->op == DML_OP_ARG_MAX ? (last ? DML_KF_GE : DML_KF_GT)
                                               : (last ? DML_KF_LE : DML_KF_LT);
    const dml_kval_t *xv = load_at(s, x, xi);
    const dml_kval_t *best = dml_kv_reg_t(p, acc + 1, t);
    const dml_kval_t *hit = dml_kv_reg_t(p, acc + 2, DML_KT_BOOL);
    dml_kblock_t loop = {0};
    dml_kblock_add(&loop, assign(s, DML_KS_LET, acc + 2, dml_kv_fn(p, better, xv, best)));
    dml_kblock_add(&loop,
                   assign(s, DML_KS_SET, acc + 1, dml_kv_select(p, hit, xv, best)));
    dml_kblock_add(&loop, assign(s, DML_KS_SET, acc,
                                 dml_kv_select(p, hit, dml_kv_idx(p, DML_KT_I64, rv),
                                               dml_kv_reg_t(p, acc, DML_KT_I64))));
    /* start from element 0 (its compare with itself keeps index 0) */
    if (!coop)
      dml_kblock_add(&body, assign(s, DML_KS_LET, acc, dml_kv_zero(p, DML_KT_I64)));
    const dml_kidx_t *x0c[DML_MAX_RANK] = {0};
    const dml_kidx_t *rest = gid;
    for (int32_t d = x->type.rank - 1; d >= 0; d--) {
      const dml_kidx_t *e = dim_idx(s, x->type.dims[d]);
      if (red[d]) {
        x0c[d] = dml_ki_const(p, 0);
      } else {
        x0c[d] = dml_ki_bin(p, DML_KI_MOD, rest, e);
        rest = dml_ki_bin(p, DML_KI_DIV, rest, e);
      }
    }
    const dml_kval_t *x0 = load_at(s, x, bcast_index(s, &x->type, &x->type, x0c));
    if (coop) {
      /* the best value m ignoring NaN (registers acc + 4 ..), then the
       * first (last) index holding m in two exact f32 parts, j / 4096
       * (registers acc ..) and j % 4096 (acc + 8 ..); a NaN element 0
       * gives 0, as the CPU's compares (which skip NaN after element 0) do */
      int is_amax = n->op == DML_OP_ARG_MAX;
      red_row_t rc = {x, red, gid, n->op, 2, acc + 4, acc};
      dml_krow_reduce(s, &body, R, r, is_amax ? DML_KF_MAX : DML_KF_MIN,
                      is_amax ? -INFINITY : INFINITY, red_row_value, &rc, acc + 4, 0);
      rc.mode = last ? 4 : 3;
      dml_krow_reduce(s, &body, R, r, last ? DML_KF_MAX : DML_KF_MIN,
                      last ? -1.0f : 16777216.0f, red_row_value, &rc, acc, 0);
      rc.mode = last ? 6 : 5;
      dml_krow_reduce(s, &body, R, r, last ? DML_KF_MAX : DML_KF_MIN,
                      last ? -1.0f : 4096.0f, red_row_value, &rc, acc + 8, 0);
      const dml_kval_t *at_idx = dml_kv_fn(
          p, DML_KF_ADD,
          dml_kv_fn(p, DML_KF_MUL, dml_kv_cast(p, DML_KT_I64, dml_kv_reg(p, acc)),
                    dml_kv_iconst(p, DML_KT_I64, 4096)),
          dml_kv_cast(p, DML_KT_I64, dml_kv_reg(p, acc + 8)));
      const dml_kval_t *ix = dml_kv_select(p, dml_kv_fn(p, DML_KF_EQ, x0, x0), at_idx,
                                           dml_kv_zero(p, DML_KT_I64));
      dml_kblock_t tail = {0};
      uint32_t nr = K->n_regs;
      dml_kblock_add(&tail, assign(s, DML_KS_LET, acc + 12, ix));
      emit_chain(s, K, G, &tail, dml_kv_reg_t(p, acc + 12, DML_KT_I64), coord, gid);
      dml_kblock_add(
          &body, if_lt(s, dml_ki_var(p, DML_KVAR_LID_X), dml_ki_const(p, 1), tail.first));
      K->body = dml_krow_finish(s, numel, r + 1, body.first);
      K->n_regs = nr > acc + 13 ? nr : acc + 13;
    } else {
      dml_kblock_add(&body, assign(s, DML_KS_LET, acc + 1, x0));
      dml_kblock_add(&body, for_loop(s, r, R, loop.first));
      emit_chain(s, K, G, &body, dml_kv_reg_t(p, acc, DML_KT_I64), coord, gid);
      K->body = if_lt(s, gid, dml_ki_lin(p, numel), body.first);
      K->n_regs = acc + 3;
    }
    dml_klin_t xl;
    if (type_numel(&x->type, &xl)) {
      lin_add(&K->flops, xl, 1);
      lin_add(&K->bytes, xl, (int64_t)dml_dtype_size(x->type.dtype));
    }
    return;
  }
  int is_max = n->op == DML_OP_REDUCE_MAX || n->op == DML_OP_GLOBAL_MAX_POOL,
      is_min = n->op == DML_OP_REDUCE_MIN;
  int is_mean = n->op == DML_OP_REDUCE_MEAN || n->op == DML_OP_GLOBAL_AVERAGE_POOL;
  int is_prod = n->op == DML_OP_REDUCE_PROD, is_lse = n->op == DML_OP_REDUCE_LOG_SUM_EXP;
  /* the identity of the combination in x's dtype (the scheduler's switch
   * leaves Sum, Max and Min to the dtypes other than f32) */
  int64_t lo = t == DML_KT_I32             ? INT32_MIN
               : t == DML_KT_I8            ? INT8_MIN
               : t == DML_KT_I16           ? INT16_MIN
               : dml_kdtype_is_unsigned(t) ? 0
                                           : INT64_MIN;
  int64_t hi = t == DML_KT_I32   ? INT32_MAX
               : t == DML_KT_U8  ? UINT8_MAX
               : t == DML_KT_I8  ? INT8_MAX
               : t == DML_KT_I16 ? INT16_MAX
               : t == DML_KT_U16 ? UINT16_MAX
               : t == DML_KT_U32 ? (int64_t)UINT32_MAX
               : t == DML_KT_U64 ? -1 /* all ones */
                                 : INT64_MAX;
  const dml_kval_t *init = dml_kdtype_is_float(t) ? dml_kv_fconst(p, t,
                                                                  is_max    ? -INFINITY
                                                                  : is_min  ? INFINITY
                                                                  : is_prod ? 1.0f
                                                                            : 0.0f)
                                                  : dml_kv_iconst(p, t,
                                                                  is_max   ? lo
                                                                  : is_min ? hi
                                                                           : 0);
  const dml_kval_t *xv = load_at(s, x, xi);
  /* the max of LogSumExp: register acc + 1, or acc + 4 in the cooperative
   * form (whose sums use acc .. acc + 3) */
  uint32_t mreg = coop ? acc + 4 : acc + 1;
  if (coop) {
    red_row_t rc = {x, red, gid, n->op, 0, mreg, 0};
    if (is_lse) {
      dml_krow_reduce(s, &body, R, r, DML_KF_MAX, -INFINITY, red_row_value, &rc, mreg, 0);
      rc.mode = 1;
    }
    dml_krow_reduce(s, &body, R, r,
                    is_max    ? DML_KF_MAX
                    : is_min  ? DML_KF_MIN
                    : is_prod ? DML_KF_MUL
                              : DML_KF_ADD,
                    is_max    ? -INFINITY
                    : is_min  ? INFINITY
                    : is_prod ? 1.0f
                              : 0.0f,
                    red_row_value, &rc, acc, 0);
  }
  /* f32 and f64 only (the scheduler's switch): L1, L2, SumSquare, Prod,
   * LogSum and LogSumExp, the last as log(sum(exp(x - m))) + m with m the
   * max (register acc + 1) */
  if (coop) {
    /* done above: red_row_value applies the functions */
  } else if (is_lse) {
    dml_kblock_add(&body, assign(s, DML_KS_LET, acc + 1, dml_kv_fconst(p, t, -INFINITY)));
    dml_kblock_add(&body,
                   for_loop(s, r, R,
                            assign(s, DML_KS_SET, acc + 1,
                                   nan_max(p, dml_kv_reg_t(p, acc + 1, t), xv, 1))));
    xv = dml_kv_fn(p, DML_KF_EXP,
                   dml_kv_fn(p, DML_KF_SUB, xv, dml_kv_reg_t(p, acc + 1, t)), NULL);
  } else if (n->op == DML_OP_REDUCE_L1) {
    xv = dml_kv_fn(p, DML_KF_ABS, xv, NULL);
  } else if (n->op == DML_OP_REDUCE_L2 || n->op == DML_OP_REDUCE_SUM_SQUARE) {
    xv = dml_kv_fn(p, DML_KF_MUL, xv, xv);
  }
  if (!coop) {
    dml_kblock_add(&body, assign(s, DML_KS_LET, acc, init));
    /* float max/min keep NaN as the CPU does */
    const dml_kval_t *a = dml_kv_reg_t(p, acc, t);
    dml_kblock_add(
        &body,
        for_loop(s, r, R,
                 assign(s, DML_KS_SET, acc,
                        is_max || is_min
                            ? nan_max(p, a, xv, is_max)
                            : dml_kv_fn(p, is_prod ? DML_KF_MUL : DML_KF_ADD, a, xv))));
  }
  const dml_kval_t *res = dml_kv_reg_t(p, acc, t);
  if (n->op == DML_OP_REDUCE_L2) res = dml_kv_fn(p, DML_KF_SQRT, res, NULL);
  if (n->op == DML_OP_REDUCE_LOG_SUM) res = dml_kv_fn(p, DML_KF_LOG, res, NULL);
  if (is_lse) {
    /* an infinite max is the result (the CPU's rule: exp(inf - inf) is
     * NaN), a NaN max gives NaN */
    const dml_kval_t *m = dml_kv_reg_t(p, mreg, t);
    res = dml_kv_select(
        p,
        dml_kv_fn(p, DML_KF_OR, dml_kv_fn(p, DML_KF_EQ, m, dml_kv_fconst(p, t, INFINITY)),
                  dml_kv_fn(p, DML_KF_EQ, m, dml_kv_fconst(p, t, -INFINITY))),
        m, dml_kv_fn(p, DML_KF_ADD, dml_kv_fn(p, DML_KF_LOG, res, NULL), m));
  }
  if (is_mean) {
    /* divide by the reduced count (an index expression: convert via a
     * constant when static) */
    int64_t cnt = 1;
    int sym = 0;
    for (int32_t d = 0; d < x->type.rank; d++)
      if (red[d]) {
        cnt *= x->type.dims[d].value;
        sym |= x->type.dims[d].sym >= 0 || red[d] < 0;
      }
    /* over a symbolic dim, the count is the run-time index expression R */
    res = dml_kv_fn(p, DML_KF_DIV, dml_kv_reg_t(p, acc, t),
                    sym ? dml_kv_idx(p, t, R) : dml_kv_fconst(p, t, (float)cnt));
  }
  if (coop) {
    /* invocation 0 of the workgroup runs the epilogue */
    dml_kblock_t tail = {0};
    uint32_t nr = K->n_regs;
    emit_chain(s, K, G, &tail, res, coord, gid);
    dml_kblock_add(
        &body, if_lt(s, dml_ki_var(p, DML_KVAR_LID_X), dml_ki_const(p, 1), tail.first));
    K->body = dml_krow_finish(s, numel, r + 1, body.first);
    K->n_regs = nr > acc + 8 ? nr : acc + 8;
  } else {
    emit_chain(s, K, G, &body, res, coord, gid);
    K->body = if_lt(s, gid, dml_ki_lin(p, numel), body.first);
    K->n_regs = acc + (is_lse ? 2 : 1);
  }
  dml_klin_t xl;
  if (type_numel(&x->type, &xl)) {
    lin_add(&K->flops, xl, 1);
    lin_add(&K->bytes, xl, (int64_t)dml_dtype_size(x->type.dtype));
  }
}

/* Shape (start/end, ONNX Shape-15) and Size: one invocation stores the
 * dims of the input, i64, computed from the symbols' run-time values. */
static void emit_shape_size(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *y = val(s, n->outputs[0]);
  dml_kernel_t *K = new_kernel(s, DML_KK_ELEMENTWISE);
  if (!K) return;
  group_t G = {.anchor = ANCHOR_NONE, .n = 1, .nodes = {node}};
  set_nodes(s, K, &G);
  K->local[0] = 1;
  dml_kblock_t body = {0};
  int32_t rank = x->type.rank;
  if (n->op == DML_OP_SIZE) {
    dml_klin_t l;
    type_numel(&x->type, &l);
    dml_kblock_add(&body, store_at(s, y, dml_ki_const(p, 0),
                                   dml_kv_idx(p, DML_KT_I64, dml_ki_lin(p, l))));
  } else {
    int64_t start = dml_attr_int(n->attrs, n->n_attrs, "start", 0);
    int64_t end = dml_attr_int(n->attrs, n->n_attrs, "end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    if (start < 0) start = 0;
    if (end > rank) end = rank;
    for (int64_t d = start; d < end; d++)
      dml_kblock_add(&body,
                     store_at(s, y, dml_ki_const(p, d - start),
                              dml_kv_idx(p, DML_KT_I64, dim_idx(s, x->type.dims[d]))));
  }
  K->body = if_lt(s, dml_ki_var(p, DML_KVAR_GID_X), dml_ki_const(p, 1), body.first);
  dml_klin_t yl;
  if (type_numel(&y->type, &yl)) lin_add(&K->bytes, yl, 8);
}

/* ---- softmax ---- */

/* A cooperative Softmax/LogSoftmax row (schedule_rows.c): element j at
 * base + j * inner of x and y; m (the max) in register 4, the sum in 0. */
typedef struct {
  const dml_pkg_value_t *x, *y;
  const dml_kidx_t *base, *inner;
  int shifted, log;
} sm_row_t;

static const dml_kidx_t *sm_elem(sched_t *s, const sm_row_t *c, const dml_kidx_t *j) {
  return dml_ki_bin(s->pool, DML_KI_ADD, c->base,
                    dml_ki_bin(s->pool, DML_KI_MUL, j, c->inner));
}

static const dml_kval_t *sm_row_value(sched_t *s, const dml_kidx_t *j, void *vctx) {
  const sm_row_t *c = vctx;
  dml_kpool_t *p = s->pool;
  const dml_kval_t *xv = dml_kv_load(p, buf_of(c->x), at(s, c->x, sm_elem(s, c, j)));
  if (!c->shifted) return xv;
  return dml_kv_fn(p, DML_KF_EXP, dml_kv_fn(p, DML_KF_SUB, xv, dml_kv_reg(p, 4)), NULL);
}

static dml_kstmt_t *sm_row_store(sched_t *s, const dml_kidx_t *j, void *vctx) {
  const sm_row_t *c = vctx;
  dml_kpool_t *p = s->pool;
  const dml_kidx_t *e = sm_elem(s, c, j);
  const dml_kval_t *d = dml_kv_fn(
      p, DML_KF_SUB, dml_kv_load(p, buf_of(c->x), at(s, c->x, e)), dml_kv_reg(p, 4));
  /* LogSoftmax: x - m - log(sum); Softmax: exp(x - m) * (1 / sum) */
  const dml_kval_t *out =
      c->log
          ? dml_kv_fn(p, DML_KF_SUB, d, dml_kv_reg(p, 8))
          : dml_kv_fn(p, DML_KF_MUL, dml_kv_fn(p, DML_KF_EXP, d, NULL), dml_kv_reg(p, 8));
  dml_kstmt_t *st = dml_ks_new(p, DML_KS_STORE);
  if (st) {
    st->buf = DML_KBUF_ARENA;
    st->idx = at(s, c->y, e);
    st->val = out;
  }
  return st;
}

static void emit_softmax(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *y = val(s, n->outputs[0]);
  int32_t rank = x->type.rank;
  int64_t axis = dml_attr_int(n->attrs, n->n_attrs, "axis", -1);
  if (axis < 0) axis += rank;
  if (rank == 0 || axis < 0 || axis >= rank) {
    unsupported(s, node, "axis out of range", NULL);
    return;
  }
  /* L: the row's length, static or symbolic (attention's scores over a
   * sequence: the run-time value; the form is chosen at the bound) */
  dml_dim_t Ld = x->type.dims[axis];
  int64_t L = Ld.value, inner = 1;
  if (Ld.sym >= 0) L = dml_ksched_lin_max(s, (dml_klin_t){Ld.value, Ld.sym, 0, 0});
  for (int32_t d = (int32_t)axis + 1; d < rank; d++) {
    if (x->type.dims[d].sym >= 0) {
      unsupported(s, node, "symbolic dim after the axis", NULL);
      return;
    }
    inner *= x->type.dims[d].value;
  }
  dml_klin_t numel;
  type_numel(&x->type, &numel);
  dml_klin_t rows = dml_ksched_lin_div_dim(numel, Ld);
  dml_kernel_t *K = new_kernel(s, DML_KK_SOFTMAX);
  if (!K) return;
  group_t G = {.anchor = ANCHOR_NONE, .n = 1, .nodes = {node}};
  set_nodes(s, K, &G);
  if (dml_krow_wanted(s, L)) {
    /* a workgroup per row: the max, the sum of exp(x - max), the outputs */
    int32_t j = DML_KVAR_FIRST_LOOP;
    const dml_kidx_t *row = dml_krow_setup(s, K, rows, j + 1, 0);
    const dml_kidx_t *in = dml_ki_const(p, inner), *Lx = dim_idx(s, Ld);
    sm_row_t c = {x,
                  y,
                  dml_ki_bin(p, DML_KI_ADD,
                             dml_ki_bin(p, DML_KI_MUL, dml_ki_bin(p, DML_KI_DIV, row, in),
                                        dml_ki_bin(p, DML_KI_MUL, Lx, in)),
                             dml_ki_bin(p, DML_KI_MOD, row, in)),
                  in,
                  0,
                  n->op == DML_OP_LOG_SOFTMAX};
    if (inner == 1) c.base = dml_ki_bin(p, DML_KI_MUL, row, Lx);
    dml_kblock_t body = {0};
    dml_krow_reduce(s, &body, Lx, j, DML_KF_MAX, -INFINITY, sm_row_value, &c, 4, 0);
    c.shifted = 1;
    dml_krow_reduce(s, &body, Lx, j, DML_KF_ADD, 0.0f, sm_row_value, &c, 0, 0);
    dml_kblock_add(&body, assign(s, DML_KS_LET, 8,
                                 dml_kv_fn(p, c.log ? DML_KF_LOG : DML_KF_RECIP,
                                           dml_kv_reg(p, 0), NULL)));
    dml_kblock_add(&body, dml_krow_each(s, Lx, j, sm_row_store, &c));
    K->body = dml_krow_finish(s, rows, j + 1, body.first);
    K->n_regs = 9;
    lin_add(&K->flops, numel, 5);
    lin_add(&K->bytes, numel, 8);
    return;
  }
  K->local[0] = 64;
  K->items[0] = rows;
  K->n_regs = 3;
  const dml_kidx_t *gid = dml_ki_var(p, DML_KVAR_GID_X);
  const dml_kidx_t *in = dml_ki_const(p, inner);
  /* base = (gid / inner) * L * inner + gid % inner; element j at base + j*inner */
  const dml_kidx_t *Lx = dim_idx(s, Ld);
  const dml_kidx_t *base =
      dml_ki_bin(p, DML_KI_ADD,
                 dml_ki_bin(p, DML_KI_MUL, dml_ki_bin(p, DML_KI_DIV, gid, in),
                            dml_ki_bin(p, DML_KI_MUL, Lx, in)),
                 dml_ki_bin(p, DML_KI_MOD, gid, in));
  int32_t j = DML_KVAR_FIRST_LOOP;
  const dml_kidx_t *e =
      dml_ki_bin(p, DML_KI_ADD, base, dml_ki_bin(p, DML_KI_MUL, dml_ki_var(p, j), in));
  const dml_kval_t *xv = dml_kv_load(p, buf_of(x), at(s, x, e));
  const dml_kval_t *m = dml_kv_reg(p, 0), *sum = dml_kv_reg(p, 1);
  const dml_kval_t *d = dml_kv_fn(p, DML_KF_SUB, xv, m);
  dml_kblock_t body = {0};
  dml_kblock_add(&body, assign(s, DML_KS_LET, 0, dml_kv_const(p, -INFINITY)));
  dml_kblock_add(
      &body,
      for_loop(s, j, Lx, assign(s, DML_KS_SET, 0, dml_kv_fn(p, DML_KF_MAX, m, xv))));
  dml_kblock_add(&body, assign(s, DML_KS_LET, 1, dml_kv_const(p, 0.0f)));
  dml_kblock_add(
      &body,
      for_loop(s, j, Lx,
               assign(s, DML_KS_SET, 1,
                      dml_kv_fn(p, DML_KF_ADD, sum, dml_kv_fn(p, DML_KF_EXP, d, NULL)))));
  const dml_kval_t *out;
  if (n->op == DML_OP_LOG_SOFTMAX) {
    dml_kblock_add(&body, assign(s, DML_KS_LET, 2, dml_kv_fn(p, DML_KF_LOG, sum, NULL)));
    out = dml_kv_fn(p, DML_KF_SUB, d, dml_kv_reg(p, 2));
  } else {
    dml_kblock_add(&body,
                   assign(s, DML_KS_LET, 2, dml_kv_fn(p, DML_KF_RECIP, sum, NULL)));
    out = dml_kv_fn(p, DML_KF_MUL, dml_kv_fn(p, DML_KF_EXP, d, NULL), dml_kv_reg(p, 2));
  }
  dml_kstmt_t *st = dml_ks_new(p, DML_KS_STORE);
  if (st) {
    st->buf = DML_KBUF_ARENA;
    st->idx = at(s, y, e);
    st->val = out;
  }
  dml_kblock_add(&body, for_loop(s, j, Lx, st));
  K->body = if_lt(s, gid, dml_ki_lin(p, rows), body.first);
  lin_add(&K->flops, numel, 5);
  lin_add(&K->bytes, numel, 8);
}

/* ---- data movement: index maps ---- */

/* Reads constant integer input `v` (i64 or i32, rank <= 1, at most `max`
 * values) into `out`. NULL when it is, else why not. */
static const char *const_ints(sched_t *s, uint32_t v, int64_t *out, size_t max,
                              size_t *n) {
  const dml_pkg_value_t *c = val(s, v);
  if (!c || c->storage != DML_PKG_STORAGE_CONST || c->type.rank > 1 ||
      (c->type.dtype != DML_DTYPE_I64 && c->type.dtype != DML_DTYPE_I32))
    return "its shape parameters must be constants";
  size_t k = c->type.rank ? (size_t)c->type.dims[0].value : 1;
  size_t w = c->type.dtype == DML_DTYPE_I64 ? 8 : 4;
  if (k > max) return "too many parameter values";
  if (c->offset + w * k > s->weights_size) return "parameters outside the weights";
  for (size_t i = 0; i < k; i++) {
    if (w == 8) {
      memcpy(&out[i], s->weights + c->offset + 8 * i, 8);
    } else {
      int32_t t;
      memcpy(&t, s->weights + c->offset + 4 * i, 4);
      out[i] = t;
    }
  }
  *n = k;
  return NULL;
}

/* Why node `n` (inputs `in`, outputs `out` of its data operands) cannot be
 * an index-map kernel, or NULL: f32, aligned, at most one symbolic dim, no
 * result sharing memory with an operand. */

static const char *map_reject(sched_t *s, const dml_pkg_node_t *n, uint32_t n_in) {
  const dml_pkg_value_t *x0 = n_in && n->n_inputs ? val(s, n->inputs[0]) : NULL;
  for (uint32_t o = 0; o < n->n_outputs; o++) {
    const dml_pkg_value_t *y = val(s, n->outputs[o]);
    dml_klin_t l;
    if (!y) continue;
    if (!typed_ok(y)) return "only numeric and bool values (aligned) are emitted";
    if (x0 && y->type.dtype != x0->type.dtype) return "operands of mixed dtypes";
    if (!type_numel(&y->type, &l)) return TOO_MANY_SYMS;
    for (uint32_t i = 0; i < n_in && i < n->n_inputs; i++) {
      const dml_pkg_value_t *x = val(s, n->inputs[i]);
      if (x && overlap(x, y))
        return "its result overlaps its operands in the memory plan";
    }
  }
  for (uint32_t i = 0; i < n_in && i < n->n_inputs; i++) {
    const dml_pkg_value_t *x = val(s, n->inputs[i]);
    dml_klin_t l;
    if (!x) return "absent input";
    if (!typed_ok(x)) return "only numeric and bool values (aligned) are emitted";
    if (x0 && x->type.dtype != x0->type.dtype) return "operands of mixed dtypes";
    if (!type_numel(&x->type, &l)) return TOO_MANY_SYMS;
  }
  return NULL;
}

/* Why node `n` (f32 operands, see map_reject) cannot be a kernel, or NULL. */
static const char *map_reject_f32(sched_t *s, const dml_pkg_node_t *n, uint32_t n_in) {
  const char *why = map_reject(s, n, n_in);
  if (why) return why;
  for (uint32_t o = 0; o < n->n_outputs; o++) {
    const dml_pkg_value_t *y = val(s, n->outputs[o]);
    if (y && y->type.dtype != DML_DTYPE_F32) return "only f32 is emitted for this op";
  }
  for (uint32_t i = 0; i < n_in && i < n->n_inputs; i++)
    if (val(s, n->inputs[i])->type.dtype != DML_DTYPE_F32)
      return "only f32 is emitted for this op";
  return NULL;
}

/* A kernel of kind DML_KK_MOVE holding node `node`, one invocation per
 * element of `t`: sets `coord` to the element's coordinates and returns
 * the invocation id (NULL when out of memory). */
static const dml_kidx_t *map_kernel(sched_t *s, uint32_t node, const dml_type_t *t,
                                    dml_kernel_t **out_k, const dml_kidx_t **coord) {
  dml_kernel_t *K = new_kernel(s, DML_KK_MOVE);
  if (!K) return NULL;
  group_t G = {.anchor = ANCHOR_NONE, .n = 1, .nodes = {node}};
  set_nodes(s, K, &G);
  dml_klin_t numel;
  type_numel(t, &numel);
  K->local[0] = WG;
  K->items[0] = numel;
  lin_add(&K->bytes, numel, 8);
  const dml_kidx_t *gid = dml_ki_var(s->pool, DML_KVAR_GID_X);
  coords_of(s, t, gid, coord);
  *out_k = K;
  return gid;
}

/* Closes a map kernel: body under the bounds check of `t`'s element count. */
static void map_finish(sched_t *s, dml_kernel_t *K, const dml_type_t *t,
                       const dml_kidx_t *gid, dml_kstmt_t *body) {
  dml_klin_t numel;
  type_numel(t, &numel);
  K->body = if_lt(s, gid, dml_ki_lin(s->pool, numel), body);
}

/* x's element at coordinates `xc` (x->type.rank entries). */
static const dml_kval_t *load_coords(sched_t *s, const dml_pkg_value_t *x,
                                     const dml_kidx_t *const *xc) {
  return load_at(s, x, bcast_index(s, &x->type, &x->type, xc));
}

/* if (lo <= lhs < hi) body */
static dml_kstmt_t *if_in(sched_t *s, const dml_kidx_t *lhs, const dml_kidx_t *lo,
                          const dml_kidx_t *hi, dml_kstmt_t *body) {
  dml_kstmt_t *st = if_lt(s, lhs, hi, body);
  if (st && lo && !(lo->kind == DML_KI_CONST && lo->c == 0)) st->lo = lo;
  return st;
}

static int64_t norm_axis(int64_t a, int32_t rank) {
  return a < 0 ? a + rank : a;
}

/* Transpose, Tile, DepthToSpace, SpaceToDepth: one load per output
 * element at a mapped coordinate (ONNX operator specs). */
static void emit_map1(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *y = val(s, n->outputs[0]);
  int32_t r = x->type.rank;
  const dml_kidx_t *xc[DML_MAX_RANK];
  if (n->op == DML_OP_TRANSPOSE) {
    size_t np = 0;
    const int64_t *perm = dml_attr_ints(n->attrs, n->n_attrs, "perm", &np);
    int seen[DML_MAX_RANK] = {0};
    if (perm && np != (size_t)r) {
      unsupported(s, node, "perm does not match the rank", NULL);
      return;
    }
    for (int32_t d = 0; d < r; d++) {
      int64_t pd = perm ? perm[d] : r - 1 - d;
      if (pd < 0 || pd >= r || seen[pd]++) {
        unsupported(s, node, "bad perm", NULL);
        return;
      }
    }
  }
  if ((n->op == DML_OP_DEPTH_TO_SPACE || n->op == DML_OP_SPACE_TO_DEPTH) &&
      (r != 4 || y->type.rank != 4 || x->type.dims[1].sym >= 0 ||
       y->type.dims[1].sym >= 0 ||
       dml_attr_int(n->attrs, n->n_attrs, "blocksize", 0) < 1)) {
    unsupported(s, node, "needs 4-D NCHW with static channels and a blocksize", NULL);
    return;
  }
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK];
  const dml_kidx_t *gid = map_kernel(s, node, &y->type, &K, c);
  if (!gid) return;
  const dml_kval_t *v;
  switch (n->op) {
    case DML_OP_TRANSPOSE: {
      size_t np = 0;
      const int64_t *perm = dml_attr_ints(n->attrs, n->n_attrs, "perm", &np);
      for (int32_t d = 0; d < r; d++) xc[perm ? perm[d] : r - 1 - d] = c[d];
      v = load_coords(s, x, xc);
      break;
    }
    case DML_OP_TILE:
      for (int32_t d = 0; d < r; d++)
        xc[d] = dml_ki_bin(p, DML_KI_MOD, c[d], dim_idx(s, x->type.dims[d]));
      v = load_coords(s, x, xc);
      break;
    default: { /* DepthToSpace (DCR or CRD), SpaceToDepth */
      int64_t b = dml_attr_int(n->attrs, n->n_attrs, "blocksize", 1);
      const dml_kidx_t *B = dml_ki_const(p, b);
      xc[0] = c[0];
      if (n->op == DML_OP_DEPTH_TO_SPACE) {
        /* y (n, c, h*b + bh, w*b + bw) */
        const dml_kidx_t *bh = dml_ki_bin(p, DML_KI_MOD, c[2], B),
                         *bw = dml_ki_bin(p, DML_KI_MOD, c[3], B);
        const dml_kidx_t *bb =
            dml_ki_bin(p, DML_KI_ADD, dml_ki_bin(p, DML_KI_MUL, bh, B), bw);
        int crd = !strcmp(dml_attr_string(n->attrs, n->n_attrs, "mode", "DCR"), "CRD");
        xc[1] =
            crd ? dml_ki_bin(p, DML_KI_ADD,
                             dml_ki_bin(p, DML_KI_MUL, c[1], dml_ki_const(p, b * b)), bb)
                : dml_ki_bin(p, DML_KI_ADD,
                             dml_ki_bin(p, DML_KI_MUL, bb,
                                        dml_ki_const(p, y->type.dims[1].value)),
                             c[1]);
        xc[2] = dml_ki_bin(p, DML_KI_DIV, c[2], B);
        xc[3] = dml_ki_bin(p, DML_KI_DIV, c[3], B);
      } else {
        /* y channel = (bh*b + bw) * C + c (DCR) or c * b^2 + bh*b + bw
         * (CRD, SpaceToDepth-28) */
        int crd = !strcmp(dml_attr_string(n->attrs, n->n_attrs, "mode", "DCR"), "CRD");
        const dml_kidx_t *C = dml_ki_const(p, crd ? b * b : x->type.dims[1].value);
        const dml_kidx_t *bb = dml_ki_bin(p, crd ? DML_KI_MOD : DML_KI_DIV, c[1], C);
        xc[1] = dml_ki_bin(p, crd ? DML_KI_DIV : DML_KI_MOD, c[1], C);
        xc[2] = dml_ki_bin(p, DML_KI_ADD, dml_ki_bin(p, DML_KI_MUL, c[2], B),
                           dml_ki_bin(p, DML_KI_DIV, bb, B));
        xc[3] = dml_ki_bin(p, DML_KI_ADD, dml_ki_bin(p, DML_KI_MUL, c[3], B),
                           dml_ki_bin(p, DML_KI_MOD, bb, B));
      }
      v = load_coords(s, x, xc);
      break;
    }
  }
  map_finish(s, K, &y->type, gid, store_at(s, y, gid, v));
}

/* Concat: output element from the input whose range along the axis holds
 * it (one bounds-checked store per input). */
static void emit_concat(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *y = val(s, n->outputs[0]);
  int32_t r = y->type.rank;
  int64_t axis = norm_axis(dml_attr_int(n->attrs, n->n_attrs, "axis", 0), r);
  if (axis < 0 || axis >= r) {
    unsupported(s, node, "axis out of range", NULL);
    return;
  }
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK];
  const dml_kidx_t *gid = map_kernel(s, node, &y->type, &K, c);
  if (!gid) return;
  dml_kblock_t body = {0};
  const dml_kidx_t *off = dml_ki_const(p, 0);
  for (uint32_t i = 0; i < n->n_inputs; i++) {
    const dml_pkg_value_t *x = val(s, n->inputs[i]);
    const dml_kidx_t *end =
        dml_ki_bin(p, DML_KI_ADD, off, dim_idx(s, x->type.dims[axis]));
    const dml_kidx_t *xc[DML_MAX_RANK];
    for (int32_t d = 0; d < r; d++) xc[d] = c[d];
    xc[axis] = dml_ki_bin(p, DML_KI_SUB, c[axis], off);
    dml_kblock_add(
        &body, if_in(s, c[axis], off, end, store_at(s, y, gid, load_coords(s, x, xc))));
    off = end;
  }
  map_finish(s, K, &y->type, gid, body.first);
}

/* Split: one invocation per input element, stored into the output whose
 * range along the axis holds it. */
static void emit_split(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = val(s, n->inputs[0]);
  int32_t r = x->type.rank;
  int64_t axis = norm_axis(dml_attr_int(n->attrs, n->n_attrs, "axis", 0), r);
  if (axis < 0 || axis >= r) {
    unsupported(s, node, "axis out of range", NULL);
    return;
  }
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK];
  const dml_kidx_t *gid = map_kernel(s, node, &x->type, &K, c);
  if (!gid) return;
  dml_kblock_t body = {0};
  const dml_kidx_t *off = dml_ki_const(p, 0);
  const dml_kval_t *v = load_at(s, x, gid);
  for (uint32_t o = 0; o < n->n_outputs; o++) {
    const dml_pkg_value_t *y = val(s, n->outputs[o]);
    if (!y) continue;
    const dml_kidx_t *end =
        dml_ki_bin(p, DML_KI_ADD, off, dim_idx(s, y->type.dims[axis]));
    const dml_kidx_t *yc[DML_MAX_RANK];
    for (int32_t d = 0; d < r; d++) yc[d] = c[d];
    yc[axis] = dml_ki_bin(p, DML_KI_SUB, c[axis], off);
    dml_kblock_add(&body,
                   if_in(s, c[axis], off, end,
                         store_at(s, y, bcast_index(s, &y->type, &y->type, yc), v)));
    off = end;
  }
  map_finish(s, K, &x->type, gid, body.first);
}

static const char *emit_slice_rt(sched_t *s, uint32_t node);
static const char *emit_pad_rt(sched_t *s, uint32_t node);

/* Slice with constant starts/ends/axes/steps (inputs, or attributes before
 * opset 10; otherwise emit_slice_rt): x coordinate = start + c * step per sliced axis,
 * start clamped as the ONNX spec says. */
static void emit_slice(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *y = val(s, n->outputs[0]);
  int32_t r = x->type.rank;
  int64_t st[DML_MAX_RANK], en[DML_MAX_RANK], ax[DML_MAX_RANK], sp[DML_MAX_RANK];
  size_t ns = 0, ne = 0, na = 0, nsp = 0;
  const char *why = NULL;
  if (n->n_inputs >= 3) {
    why = const_ints(s, n->inputs[1], st, DML_MAX_RANK, &ns);
    if (!why) why = const_ints(s, n->inputs[2], en, DML_MAX_RANK, &ne);
    if (!why && n->n_inputs > 3 && n->inputs[3] != DML_PKG_NO_VALUE)
      why = const_ints(s, n->inputs[3], ax, DML_MAX_RANK, &na);
    if (!why && n->n_inputs > 4 && n->inputs[4] != DML_PKG_NO_VALUE)
      why = const_ints(s, n->inputs[4], sp, DML_MAX_RANK, &nsp);
  } else {
    const int64_t *a = dml_attr_ints(n->attrs, n->n_attrs, "starts", &ns);
    if (a && ns <= DML_MAX_RANK) memcpy(st, a, ns * sizeof *a);
    a = dml_attr_ints(n->attrs, n->n_attrs, "ends", &ne);
    if (a && ne <= DML_MAX_RANK) memcpy(en, a, ne * sizeof *a);
    a = dml_attr_ints(n->attrs, n->n_attrs, "axes", &na);
    if (a && na <= DML_MAX_RANK) memcpy(ax, a, na * sizeof *a);
    if (ns > DML_MAX_RANK || ne > DML_MAX_RANK || na > DML_MAX_RANK)
      why = "too many parameter values";
  }
  if (!why && (ns != ne || (na && na != ns) || (nsp && nsp != ns)))
    why = "starts, ends, axes and steps differ in length";
  int64_t start[DML_MAX_RANK] = {0}, step[DML_MAX_RANK];
  for (int32_t d = 0; d < r; d++) step[d] = 1;
  for (size_t i = 0; !why && i < ns; i++) {
    int64_t a = norm_axis(na ? ax[i] : (int64_t)i, r);
    if (a < 0 || a >= r) {
      why = "axis out of range";
      break;
    }
    if (x->type.dims[a].sym >= 0) {
      why = "a slice along a symbolic dim";
      break;
    }
    int64_t dim = x->type.dims[a].value, k = nsp ? sp[i] : 1, b = st[i];
    if (k == 0) {
      why = "step 0";
      break;
    }
    if (b < 0) b += dim;
    if (k > 0)
      b = b < 0 ? 0 : b > dim ? dim : b;
    else
      b = b < 0 ? 0 : b > dim - 1 ? dim - 1 : b;
    start[a] = b;
    step[a] = k;
  }
  if (why && n->n_inputs >= 3) {
    why = emit_slice_rt(s, node); /* the parameters read from memory */
    if (!why) return;
  }
  if (why) {
    unsupported(s, node, "%s", why);
    return;
  }
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK], *xc[DML_MAX_RANK];
  const dml_kidx_t *gid = map_kernel(s, node, &y->type, &K, c);
  if (!gid) return;
  for (int32_t d = 0; d < r; d++) {
    const dml_kidx_t *sc = dml_ki_bin(p, DML_KI_MUL, c[d],
                                      dml_ki_const(p, step[d] < 0 ? -step[d] : step[d]));
    xc[d] = dml_ki_bin(p, step[d] < 0 ? DML_KI_SUB : DML_KI_ADD,
                       dml_ki_const(p, start[d]), sc);
  }
  map_finish(s, K, &y->type, gid, store_at(s, y, gid, load_coords(s, x, xc)));
}

/* Pad, mode "constant" with constant pads (input, or attribute before
 * opset 11) and optional axes: the padding value, overwritten by x's
 * element where every coordinate falls inside x. */
static void emit_pad(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *y = val(s, n->outputs[0]);
  const dml_pkg_value_t *cv =
      n->n_inputs > 2 && n->inputs[2] != DML_PKG_NO_VALUE ? val(s, n->inputs[2]) : NULL;
  int32_t r = x->type.rank;
  int64_t pads[2 * DML_MAX_RANK], ax[DML_MAX_RANK];
  size_t np = 0, na = 0;
  const char *why = NULL;
  if (strcmp(dml_attr_string(n->attrs, n->n_attrs, "mode", "constant"), "constant"))
    why = "only mode 'constant' is emitted";
  else if (n->n_inputs > 1)
    why = const_ints(s, n->inputs[1], pads, 2 * DML_MAX_RANK, &np);
  else {
    const int64_t *a = dml_attr_ints(n->attrs, n->n_attrs, "pads", &np);
    if (a && np <= 2 * DML_MAX_RANK) memcpy(pads, a, np * sizeof *a);
  }
  if (!why && n->n_inputs > 3 && n->inputs[3] != DML_PKG_NO_VALUE)
    why = const_ints(s, n->inputs[3], ax, DML_MAX_RANK, &na);
  if (!why && n->n_inputs <= 1 && cv == NULL && np > 2 * DML_MAX_RANK)
    why = "too many pads";
  size_t nax = na ? na : (size_t)r;
  if (!why && np != 2 * nax) why = "pads do not match the rank";
  if (!why && cv && (cv->type.dtype != x->type.dtype || !typed_ok(cv)))
    why = "constant_value must be of the data's dtype";
  int64_t begin[DML_MAX_RANK] = {0};
  for (size_t i = 0; !why && i < nax; i++) {
    int64_t a = norm_axis(na ? ax[i] : (int64_t)i, r);
    if (a < 0 || a >= r)
      why = "axis out of range";
    else
      begin[a] = pads[i];
  }
  if (why && n->n_inputs > 1) {
    why = emit_pad_rt(s, node); /* pads read from memory, or another mode */
    if (!why) return;
  }
  if (why) {
    unsupported(s, node, "%s", why);
    return;
  }
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK], *xc[DML_MAX_RANK], *lhs[DML_MAX_RANK],
      *lo[DML_MAX_RANK];
  const dml_kidx_t *gid = map_kernel(s, node, &y->type, &K, c);
  if (!gid) return;
  for (int32_t d = 0; d < r; d++) {
    /* lhs = c + max(-begin, 0) lies in [max(begin, 0), that + dim) */
    lhs[d] =
        dml_ki_bin(p, DML_KI_ADD, c[d], dml_ki_const(p, begin[d] < 0 ? -begin[d] : 0));
    lo[d] = dml_ki_const(p, begin[d] > 0 ? begin[d] : 0);
    xc[d] = dml_ki_bin(p, DML_KI_SUB, lhs[d], lo[d]);
  }
  const dml_kval_t *pad_v =
      cv ? load_at(s, cv, dml_ki_const(p, 0)) : dml_kv_zero(p, kdt_s(s, y));
  dml_kstmt_t *inner = store_at(s, y, gid, load_coords(s, x, xc));
  for (int32_t d = r - 1; d >= 0; d--)
    inner = if_in(s, lhs[d], lo[d],
                  dml_ki_bin(p, DML_KI_ADD, lo[d], dim_idx(s, x->type.dims[d])), inner);
  dml_kblock_t body = {0};
  dml_kblock_add(&body, store_at(s, y, gid, pad_v));
  dml_kblock_add(&body, inner);
  map_finish(s, K, &y->type, gid, body.first);
}

/* ---- data movement with parameters read at run time ---- */

/* Why input `v` cannot be a run-time parameter of `n` values, or NULL: a
 * 1-D i64 or i32 value of static length n (a constant is read from the
 * weights like any other). */
static const char *param_reject(sched_t *s, uint32_t v, int64_t n) {
  const dml_pkg_value_t *p = val(s, v);
  if (!p || p->type.rank != 1 || p->type.dims[0].sym >= 0 ||
      (p->type.dtype != DML_DTYPE_I64 && p->type.dtype != DML_DTYPE_I32) || !typed_ok(p))
    return "its parameters must be 1-D i64 or i32 values of static length";
  if (n >= 0 && p->type.dims[0].value != n)
    return "starts, ends, axes and steps differ in length";
  return NULL;
}

/* max(lo, min(v, hi)) on i64 values. */
static const dml_kval_t *clamp_i64(dml_kpool_t *p, const dml_kval_t *v,
                                   const dml_kval_t *lo, const dml_kval_t *hi) {
  return dml_kv_fn(p, DML_KF_MAX, lo, dml_kv_fn(p, DML_KF_MIN, v, hi));
}

/* Slice (opset 10+) whose starts, axes or steps are fed at run time, or
 * that slices a symbolic dim: the output's dims are symbols the runtime
 * computes before the device runs (dims_reject); the kernel reads starts,
 * axes and steps from memory (the inputs were copied to the device with
 * the others; constants from the weights) and maps each output
 * coordinate c of dim d to start_d + c * step_d, where entry i with axis
 * a_i == d (negative axes counted from the rank) gives start_d = starts[i]
 * clamped as the ONNX spec and the CPU's shape rule say (negative from the
 * end, then into [0, dim] for a positive step, [-1, dim - 1] for a
 * negative one) and step_d = steps[i]; other dims keep start 0, step 1.
 * Ends only shape the output. NULL, or why not. */
static const char *emit_slice_rt(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *y = val(s, n->outputs[0]);
  int32_t r = x->type.rank;
  if (n->n_inputs < 3) return "a slice along a symbolic dim";
  const char *why = param_reject(s, n->inputs[1], -1);
  if (why) return why;
  int64_t ne = val(s, n->inputs[1])->type.dims[0].value;
  if (ne > DML_MAX_RANK) return "too many parameter values";
  why = param_reject(s, n->inputs[2], ne);
  const dml_pkg_value_t *ax = NULL, *sp = NULL;
  if (!why && n->n_inputs > 3 && n->inputs[3] != DML_PKG_NO_VALUE) {
    why = param_reject(s, n->inputs[3], ne);
    ax = val(s, n->inputs[3]);
  }
  if (!why && n->n_inputs > 4 && n->inputs[4] != DML_PKG_NO_VALUE) {
    why = param_reject(s, n->inputs[4], ne);
    sp = val(s, n->inputs[4]);
  }
  if (why) return why;
  const dml_pkg_value_t *st = val(s, n->inputs[1]);
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK] = {0}, *xc[DML_MAX_RANK] = {0};
  const dml_kidx_t *gid = map_kernel(s, node, &y->type, &K, c);
  if (!gid) return NULL;
  const dml_kval_t *zero = dml_kv_zero(p, DML_KT_I64), *one = dml_kv_one(p, DML_KT_I64);
  for (int32_t d = 0; d < r; d++) {
    const dml_kval_t *X = dml_kv_idx(p, DML_KT_I64, dim_idx(s, x->type.dims[d]));
    const dml_kval_t *start = zero, *step = one;
    int any = 0;
    for (int64_t i = 0; i < ne; i++) {
      const dml_kval_t *hit = NULL;
      if (ax) {
        const dml_kval_t *a = param_i64(s, ax, i);
        hit = dml_kv_fn(p, DML_KF_OR,
                        dml_kv_fn(p, DML_KF_EQ, a, dml_kv_iconst(p, DML_KT_I64, d)),
                        dml_kv_fn(p, DML_KF_EQ, a, dml_kv_iconst(p, DML_KT_I64, d - r)));
      } else if (i != d) {
        continue;
      }
      const dml_kval_t *k = sp ? param_i64(s, sp, i) : one;
      const dml_kval_t *b = param_i64(s, st, i);
      /* clamp first (starts may be INT64_MIN/MAX), negative from the end */
      b = clamp_i64(p, b,
                    dml_kv_fn(p, DML_KF_SUB, dml_kv_fn(p, DML_KF_NEG, X, NULL), one), X);
      b = dml_kv_select(p, dml_kv_fn(p, DML_KF_LT, b, zero),
                        dml_kv_fn(p, DML_KF_ADD, b, X), b);
      b = dml_kv_select(p, dml_kv_fn(p, DML_KF_GT, k, zero), clamp_i64(p, b, zero, X),
                        clamp_i64(p, b, dml_kv_fn(p, DML_KF_NEG, one, NULL),
                                  dml_kv_fn(p, DML_KF_SUB, X, one)));
      start = hit ? dml_kv_select(p, hit, b, start) : b;
      step = hit ? dml_kv_select(p, hit, k, step) : k;
      any = 1;
    }
    if (!any) {
      xc[d] = c[d];
      continue;
    }
    /* start + c * step lies in [0, dim) for every output coordinate */
    xc[d] = dml_ki_val(
        p, dml_kv_fn(p, DML_KF_ADD, start,
                     dml_kv_fn(p, DML_KF_MUL, dml_kv_idx(p, DML_KT_I64, c[d]), step)));
  }
  map_finish(s, K, &y->type, gid, store_at(s, y, gid, load_coords(s, x, xc)));
  return NULL;
}

/* Pad (opset 11+, no axes input) with pads fed at run time, or in mode
 * edge, reflect or wrap: output coordinate c of dim d reads x at
 * t = c - pads[d] (pads read from memory, a constant from the weights),
 * mapped as the CPU's kernel does (cpu_shape.c): constant: the padding
 * value where some t falls outside [0, dim); edge: t clamped into
 * [0, dim - 1]; wrap: t mod dim; reflect: t mod 2 (dim - 1), then
 * 2 (dim - 1) - t past the end. Every load is bounds-checked (an empty
 * dim stores zeros, where the CPU refuses to pad it). NULL, or why not. */
static const char *emit_pad_rt(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *y = val(s, n->outputs[0]);
  const dml_pkg_value_t *cv =
      n->n_inputs > 2 && n->inputs[2] != DML_PKG_NO_VALUE ? val(s, n->inputs[2]) : NULL;
  int32_t r = x->type.rank;
  const char *mode = dml_attr_string(n->attrs, n->n_attrs, "mode", "constant");
  int m = !strcmp(mode, "constant")  ? 0
          : !strcmp(mode, "edge")    ? 1
          : !strcmp(mode, "reflect") ? 2
          : !strcmp(mode, "wrap")    ? 3
                                     : -1;
  if (m < 0) return "unknown mode";
  if (n->n_inputs < 2 || n->inputs[1] == DML_PKG_NO_VALUE)
    return "pads in an attribute with mode other than 'constant'";
  if (n->n_inputs > 3 && n->inputs[3] != DML_PKG_NO_VALUE)
    return "an axes input with pads fed at run time";
  const char *why = param_reject(s, n->inputs[1], 2 * (int64_t)r);
  if (why) return why;
  if (m == 0 && cv && (cv->type.dtype != x->type.dtype || !typed_ok(cv)))
    return "constant_value must be of the data's dtype";
  const dml_pkg_value_t *pads = val(s, n->inputs[1]);
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK] = {0}, *xc[DML_MAX_RANK] = {0};
  const dml_kidx_t *gid = map_kernel(s, node, &y->type, &K, c);
  if (!gid) return NULL;
  const dml_kval_t *zero = dml_kv_zero(p, DML_KT_I64), *one = dml_kv_one(p, DML_KT_I64);
  for (int32_t d = 0; d < r; d++) {
    const dml_kval_t *X = dml_kv_idx(p, DML_KT_I64, dim_idx(s, x->type.dims[d]));
    const dml_kval_t *t =
        dml_kv_fn(p, DML_KF_SUB, dml_kv_idx(p, DML_KT_I64, c[d]), param_i64(s, pads, d));
    if (m == 1) {
      t = clamp_i64(p, t, zero, dml_kv_fn(p, DML_KF_SUB, X, one));
    } else if (m == 3) {
      t = dml_kv_fn(p, DML_KF_IMOD, t, X);
    } else if (m == 2) {
      const dml_kval_t *per = dml_kv_fn(p, DML_KF_MUL, dml_kv_iconst(p, DML_KT_I64, 2),
                                        dml_kv_fn(p, DML_KF_SUB, X, one));
      t = dml_kv_fn(p, DML_KF_IMOD, t, per);
      t = dml_kv_select(p, dml_kv_fn(p, DML_KF_GE, t, X),
                        dml_kv_fn(p, DML_KF_SUB, per, t), t);
    }
    xc[d] = dml_ki_val(p, t); /* negative: a huge index, outside [0, dim) */
  }
  dml_kstmt_t *inner = store_at(s, y, gid, load_coords(s, x, xc));
  for (int32_t d = r - 1; d >= 0; d--)
    inner = if_lt(s, xc[d], dim_idx(s, x->type.dims[d]), inner);
  const dml_kval_t *pad_v =
      m == 0 && cv ? load_at(s, cv, dml_ki_const(p, 0)) : dml_kv_zero(p, kdt(y));
  dml_kblock_t body = {0};
  dml_kblock_add(&body, store_at(s, y, gid, pad_v));
  dml_kblock_add(&body, inner);
  map_finish(s, K, &y->type, gid, body.first);
  return NULL;
}

/* Places data-movement node `i` (dml_kschedule's switch). */
static void emit_move(sched_t *s, uint32_t i) {
  const dml_pkg_node_t *n = &s->fn->nodes[i];
  uint32_t n_in = n->op == DML_OP_CONCAT ? n->n_inputs : 1;
  const char *why = map_reject(s, n, n_in);
  if (why) {
    unsupported(s, i, "%s", why);
    return;
  }
  s->raw16 = 1;
  switch (n->op) {
    case DML_OP_CONCAT: emit_concat(s, i); break;
    case DML_OP_SPLIT: emit_split(s, i); break;
    case DML_OP_SLICE: emit_slice(s, i); break;
    case DML_OP_PAD: emit_pad(s, i); break;
    default: emit_map1(s, i); break;
  }
  s->raw16 = 0;
}

static int move_op(dml_op_t op) {
  switch (op) {
    case DML_OP_TRANSPOSE:
    case DML_OP_TILE:
    case DML_OP_DEPTH_TO_SPACE:
    case DML_OP_SPACE_TO_DEPTH:
    case DML_OP_CONCAT:
    case DML_OP_SPLIT:
    case DML_OP_SLICE:
    case DML_OP_PAD: return 1;
    default: return 0;
  }
}

/* ---- Hardmax and inference Dropout ---- */

/* bool: x is Hardmax's max m (kept NaN: any NaN x when m is NaN) */
static const dml_kval_t *hm_hit(dml_kpool_t *p, const dml_kval_t *x,
                                const dml_kval_t *m) {
  return dml_kv_fn(p, DML_KF_OR, dml_kv_fn(p, DML_KF_EQ, x, m),
                   dml_kv_fn(p, DML_KF_NOT,
                             dml_kv_fn(p, DML_KF_OR, dml_kv_fn(p, DML_KF_EQ, x, x),
                                       dml_kv_fn(p, DML_KF_EQ, m, m)),
                             NULL));
}

/* Hardmax's cooperative row (sm_row_t, the max in register 4): element j
 * as an f32 index where it is the row's max (any NaN where the max is
 * NaN), else 2^24; the first such index is the min (register 0). */
static const dml_kval_t *hm_row_index(sched_t *s, const dml_kidx_t *j, void *vctx) {
  const sm_row_t *c = vctx;
  dml_kpool_t *p = s->pool;
  const dml_kval_t *xv = dml_kv_load(p, buf_of(c->x), at(s, c->x, sm_elem(s, c, j)));
  return dml_kv_select(p, hm_hit(p, xv, dml_kv_reg(p, 4)), dml_kv_idx(p, DML_KT_F32, j),
                       dml_kv_const(p, 16777216.0f));
}

/* y_j = (j == the first index of the max, register 0) */
static dml_kstmt_t *hm_row_store(sched_t *s, const dml_kidx_t *j, void *vctx) {
  const sm_row_t *c = vctx;
  dml_kpool_t *p = s->pool;
  return store_at(
      s, c->y, sm_elem(s, c, j),
      dml_kv_select(
          p, dml_kv_fn(p, DML_KF_EQ, dml_kv_idx(p, DML_KT_F32, j), dml_kv_reg(p, 0)),
          dml_kv_const(p, 1.0f), dml_kv_const(p, 0.0f)));
}

/* Hardmax along one static axis (ONNX Hardmax-13; older opsets arrive
 * coerced to 2-D): one invocation per row finds the max, then the first
 * index holding it (a float index counted in a register, exact below 2^24),
 * then writes 1 there and 0 elsewhere. */
static void emit_hardmax(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *y = val(s, n->outputs[0]);
  int32_t rank = x->type.rank;
  int64_t axis = norm_axis(dml_attr_int(n->attrs, n->n_attrs, "axis", -1), rank);
  const char *why = NULL;
  if (rank == 0 || axis < 0 || axis >= rank) why = "axis out of range";
  int64_t L = why ? 1 : x->type.dims[axis].value, inner = 1;
  if (!why && x->type.dims[axis].sym >= 0) why = "hardmax along a symbolic dim";
  for (int32_t d = (int32_t)axis + 1; !why && d < rank; d++) {
    if (x->type.dims[d].sym >= 0) why = "symbolic dim after the axis";
    inner *= x->type.dims[d].value;
  }
  if (!why && L >= (1 << 24)) why = "axis longer than 2^24";
  if (why) {
    unsupported(s, node, "%s", why);
    return;
  }
  dml_klin_t numel, rows;
  type_numel(&x->type, &numel);
  rows = numel;
  rows.c /= L ? L : 1;
  rows.c0 /= L ? L : 1;
  dml_kernel_t *K = new_kernel(s, DML_KK_SOFTMAX);
  if (!K) return;
  group_t G = {.anchor = ANCHOR_NONE, .n = 1, .nodes = {node}};
  set_nodes(s, K, &G);
  if (dml_krow_wanted(s, L)) {
    /* a workgroup per row (schedule_rows.c): the max keeping NaN, the
     * first index holding it (the first NaN, as on the CPU), the row */
    int32_t j = DML_KVAR_FIRST_LOOP;
    const dml_kidx_t *row = dml_krow_setup(s, K, rows, j + 1, 0);
    const dml_kidx_t *in = dml_ki_const(p, inner), *Lx = dml_ki_const(p, L);
    sm_row_t c = {x,
                  y,
                  inner == 1 ? dml_ki_bin(p, DML_KI_MUL, row, Lx)
                             : dml_ki_bin(p, DML_KI_ADD,
                                          dml_ki_bin(p, DML_KI_MUL,
                                                     dml_ki_bin(p, DML_KI_DIV, row, in),
                                                     dml_ki_const(p, L * inner)),
                                          dml_ki_bin(p, DML_KI_MOD, row, in)),
                  in,
                  0,
                  0};
    dml_kblock_t body = {0};
    dml_krow_reduce(s, &body, Lx, j, DML_KF_MAX, -INFINITY, sm_row_value, &c, 4, 0);
    dml_krow_reduce(s, &body, Lx, j, DML_KF_MIN, 16777216.0f, hm_row_index, &c, 0, 0);
    dml_kblock_add(&body, dml_krow_each(s, Lx, j, hm_row_store, &c));
    K->body = dml_krow_finish(s, rows, j + 1, body.first);
    K->n_regs = 8;
    lin_add(&K->flops, numel, 4);
    lin_add(&K->bytes, numel, 8);
    return;
  }
  K->local[0] = 64;
  K->items[0] = rows;
  K->n_regs = 3;
  const dml_kidx_t *gid = dml_ki_var(p, DML_KVAR_GID_X), *in = dml_ki_const(p, inner);
  const dml_kidx_t *base =
      dml_ki_bin(p, DML_KI_ADD,
                 dml_ki_bin(p, DML_KI_MUL, dml_ki_bin(p, DML_KI_DIV, gid, in),
                            dml_ki_const(p, L * inner)),
                 dml_ki_bin(p, DML_KI_MOD, gid, in));
  int32_t j = DML_KVAR_FIRST_LOOP;
  const dml_kidx_t *e =
      dml_ki_bin(p, DML_KI_ADD, base, dml_ki_bin(p, DML_KI_MUL, dml_ki_var(p, j), in));
  const dml_kidx_t *Lx = dml_ki_const(p, L);
  const dml_kval_t *xv = dml_kv_load(p, buf_of(x), at(s, x, e));
  const dml_kval_t *m = dml_kv_reg(p, 0), *idx = dml_kv_reg(p, 1), *jf = dml_kv_reg(p, 2);
  const dml_kval_t *one = dml_kv_const(p, 1.0f);
  dml_kblock_t body = {0};
  dml_kblock_add(&body, assign(s, DML_KS_LET, 0, dml_kv_const(p, -INFINITY)));
  dml_kblock_add(&body,
                 for_loop(s, j, Lx, assign(s, DML_KS_SET, 0, nan_max(p, m, xv, 1))));
  /* idx = min over j of (x_j is m ? j : L); a NaN max: the first NaN, as
   * on the CPU */
  dml_kblock_add(&body, assign(s, DML_KS_LET, 1, dml_kv_const(p, (float)L)));
  dml_kblock_add(&body, assign(s, DML_KS_LET, 2, dml_kv_const(p, 0.0f)));
  dml_kstmt_t *find = assign(
      s, DML_KS_SET, 1,
      dml_kv_fn(p, DML_KF_MIN, idx,
                dml_kv_select(p, hm_hit(p, xv, m), jf, dml_kv_const(p, (float)L))));
  dml_kstmt_t *inc = assign(s, DML_KS_SET, 2, dml_kv_fn(p, DML_KF_ADD, jf, one));
  if (find) find->next = inc;
  dml_kblock_add(&body, for_loop(s, j, Lx, find));
  dml_kblock_add(&body, assign(s, DML_KS_SET, 2, dml_kv_const(p, 0.0f)));
  /* y_j = 1 - step(|j - idx|) */
  dml_kstmt_t *st = store_at(
      s, y, e,
      dml_kv_fn(p, DML_KF_SUB, one,
                dml_kv_step(p, dml_kv_fn(p, DML_KF_ABS, dml_kv_fn(p, DML_KF_SUB, jf, idx),
                                         NULL))));
  dml_kstmt_t *inc2 = assign(s, DML_KS_SET, 2, dml_kv_fn(p, DML_KF_ADD, jf, one));
  if (st) st->next = inc2;
  dml_kblock_add(&body, for_loop(s, j, Lx, st));
  K->body = if_lt(s, gid, dml_ki_lin(p, rows), body.first);
  lin_add(&K->flops, numel, 4);
  lin_add(&K->bytes, numel, 8);
}

/* ---- ConvTranspose (1-D and 2-D) ---- */

/* ConvTranspose (ONNX opset 11; the CPU kernel's pads rules): one
 * invocation per output element (n, m, oh, ow) gathers
 * x[n, c, ih, iw] * w[c, m % (M/group), kh, kw] over the group's channels
 * and the kernel window, where oh = ih*stride - pad + kh*dilation: the
 * window position is used when oh + pad - kh*dilation lies in
 * [0, H*stride) and is a multiple of the stride. Then + B[m]. */
static void emit_conv_transpose(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *w = val(s, n->inputs[1]);
  const dml_pkg_value_t *b =
      n->n_inputs > 2 && n->inputs[2] != DML_PKG_NO_VALUE ? val(s, n->inputs[2]) : NULL;
  const dml_pkg_value_t *y = val(s, n->outputs[0]);
  const char *why = map_reject_f32(s, n, b ? 3 : 2);
  int32_t r = x ? x->type.rank : 0;
  if (!why && ((r != 3 && r != 4) || y->type.rank != r || w->type.rank != r))
    why = "only 1-D and 2-D windows are emitted";
  for (int32_t d = 1; !why && d < r; d++)
    if (x->type.dims[d].sym >= 0 || y->type.dims[d].sym >= 0 || w->type.dims[d].sym >= 0)
      why = "symbolic channel or spatial dim";
  int64_t group = dml_attr_int(n->attrs, n->n_attrs, "group", 1);
  int64_t C = why ? 1 : x->type.dims[1].value, M = why ? 1 : y->type.dims[1].value;
  if (!why && (w->type.dims[0].sym >= 0 || w->type.dims[0].value != C || group < 1 ||
               C % group || w->type.dims[1].value * group != M))
    why = "weights must be static [C, M/group, kH, kW]";
  if (!why && b && (b->type.rank != 1 || b->type.dims[0].value != M))
    why = "bias must be [M]";
  int ns = r - 2;
  int64_t in[2] = {1, 1}, out[2] = {1, 1}, k[2] = {1, 1}, st[2] = {1, 1}, dl[2] = {1, 1},
          pb[2] = {0, 0};
  size_t na = 0, np = 0, nop = 0;
  const int64_t *sa = dml_attr_ints(n->attrs, n->n_attrs, "strides", &na);
  if (!why && sa && na != (size_t)ns) why = "strides do not match the rank";
  const int64_t *da = dml_attr_ints(n->attrs, n->n_attrs, "dilations", &na);
  if (!why && da && na != (size_t)ns) why = "dilations do not match the rank";
  const int64_t *pads = dml_attr_ints(n->attrs, n->n_attrs, "pads", &np);
  const int64_t *opad = dml_attr_ints(n->attrs, n->n_attrs, "output_padding", &nop);
  if (!why && ((pads && np != 2 * (size_t)ns) || (opad && nop != (size_t)ns)))
    why = "pads or output_padding do not match the rank";
  const char *ap = dml_attr_string(n->attrs, n->n_attrs, "auto_pad", "NOTSET");
  int same_upper = !strcmp(ap, "SAME_UPPER"), same_lower = !strcmp(ap, "SAME_LOWER");
  int valid = !strcmp(ap, "VALID");
  int oshape = dml_attr_find(n->attrs, n->n_attrs, "output_shape") != NULL;
  for (int i = 0; !why && i < ns; i++) {
    int o = 2 - ns + i; /* 1-D uses slot 1 (height 1 in slot 0) */
    in[o] = x->type.dims[2 + i].value;
    out[o] = y->type.dims[2 + i].value;
    k[o] = w->type.dims[2 + i].value;
    st[o] = sa ? sa[i] : 1;
    dl[o] = da ? da[i] : 1;
    if (st[o] < 1 || dl[o] < 1 || k[o] < 1) {
      why = "bad strides, dilations or kernel";
      break;
    }
    int64_t full = st[o] * (in[o] - 1) + (opad ? opad[i] : 0) + (k[o] - 1) * dl[o] + 1;
    int64_t expect;
    if (pads && !same_upper && !same_lower && !oshape) {
      pb[o] = pads[i];
      expect = full - pads[i] - pads[ns + i];
    } else if (valid) {
      pb[o] = 0;
      expect = full;
    } else {
      int64_t total = full - out[o];
      if (total < 0) total = 0;
      pb[o] = same_upper ? total / 2 : total - total / 2;
      expect = out[o];
    }
    if (expect != out[o] || pb[o] < 0) why = "output size does not match the attributes";
  }
  if (why) {
    unsupported(s, node, "%s", why);
    return;
  }
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK];
  const dml_kidx_t *gid = map_kernel(s, node, &y->type, &K, c);
  if (!gid) return;
  K->kind = DML_KK_CONV;
  snprintf(K->name, sizeof K->name, "k%u_%s", s->n_kernels - 1,
           dml_kernel_kind_name(DML_KK_CONV));
  K->local[0] = 64;
  const dml_kidx_t *oh = ns == 2 ? c[2] : dml_ki_const(p, 0), *ow = c[r - 1];
  int64_t cg = C / group, mg = M / group;
  int32_t vc = DML_KVAR_FIRST_LOOP, vkh = vc + 1, vkw = vc + 2;
  const dml_kidx_t *ch = dml_ki_bin(
      p, DML_KI_ADD,
      dml_ki_bin(p, DML_KI_MUL, dml_ki_bin(p, DML_KI_DIV, c[1], dml_ki_const(p, mg)),
                 dml_ki_const(p, cg)),
      dml_ki_var(p, vc));
  const dml_kidx_t *o2[2] = {oh, ow}, *kv[2] = {dml_ki_var(p, vkh), dml_ki_var(p, vkw)};
  const dml_kidx_t *t[2], *lo[2], *ii[2];
  for (int d = 0; d < 2; d++) {
    t[d] = dml_ki_bin(p, DML_KI_ADD, o2[d], dml_ki_const(p, pb[d]));
    lo[d] = dml_ki_bin(p, DML_KI_MUL, kv[d], dml_ki_const(p, dl[d]));
    ii[d] = dml_ki_bin(p, DML_KI_DIV, dml_ki_bin(p, DML_KI_SUB, t[d], lo[d]),
                       dml_ki_const(p, st[d]));
  }
  /* x[(n*C + ch)*H*W + ih*W + iw], w[((ch*mg + m % mg)*kH + kh)*kW + kw] */
  const dml_kidx_t *xi = dml_ki_bin(
      p, DML_KI_ADD,
      dml_ki_bin(p, DML_KI_MUL,
                 dml_ki_bin(p, DML_KI_ADD,
                            dml_ki_bin(p, DML_KI_MUL, c[0], dml_ki_const(p, C)), ch),
                 dml_ki_const(p, in[0] * in[1])),
      dml_ki_bin(p, DML_KI_ADD, dml_ki_bin(p, DML_KI_MUL, ii[0], dml_ki_const(p, in[1])),
                 ii[1]));
  const dml_kidx_t *wi = dml_ki_bin(
      p, DML_KI_ADD,
      dml_ki_bin(
          p, DML_KI_MUL,
          dml_ki_bin(p, DML_KI_ADD, dml_ki_bin(p, DML_KI_MUL, ch, dml_ki_const(p, mg)),
                     dml_ki_bin(p, DML_KI_MOD, c[1], dml_ki_const(p, mg))),
          dml_ki_const(p, k[0] * k[1])),
      dml_ki_bin(p, DML_KI_ADD, dml_ki_bin(p, DML_KI_MUL, kv[0], dml_ki_const(p, k[1])),
                 kv[1]));
  const dml_kval_t *prod =
      dml_kv_fn(p, DML_KF_MUL, dml_kv_load(p, buf_of(x), at(s, x, xi)),
                dml_kv_load(p, buf_of(w), at(s, w, wi)));
  dml_kstmt_t *inner =
      assign(s, DML_KS_SET, 0, dml_kv_fn(p, DML_KF_ADD, dml_kv_reg(p, 0), prod));
  /* innermost first: the width's stride test, its range, then the height's */
  for (int d = 1; d >= 0; d--) {
    const dml_kidx_t *rem = dml_ki_bin(
        p, DML_KI_MOD, dml_ki_bin(p, DML_KI_SUB, t[d], lo[d]), dml_ki_const(p, st[d]));
    inner = if_lt(s, rem, dml_ki_const(p, 1), inner);
    inner =
        if_in(s, t[d], lo[d],
              dml_ki_bin(p, DML_KI_ADD, lo[d], dml_ki_const(p, in[d] * st[d])), inner);
  }
  dml_kblock_t body = {0};
  dml_kblock_add(&body, assign(s, DML_KS_LET, 0, dml_kv_const(p, 0.0f)));
  dml_kblock_add(&body,
                 for_loop(s, vc, dml_ki_const(p, cg),
                          for_loop(s, vkh, dml_ki_const(p, k[0]),
                                   for_loop(s, vkw, dml_ki_const(p, k[1]), inner))));
  const dml_kval_t *res = dml_kv_reg(p, 0);
  if (b) res = dml_kv_fn(p, DML_KF_ADD, res, dml_kv_load(p, buf_of(b), at(s, b, c[1])));
  dml_kblock_add(&body, store_at(s, y, gid, res));
  K->n_regs = 1;
  map_finish(s, K, &y->type, gid, body.first);
  dml_klin_t numel = {0, -1, 0, 0};
  if (type_numel(&y->type, &numel)) lin_add(&K->flops, numel, 2 * cg * k[0] * k[1]);
}

/* ---- MatMul with a batched right operand ---- */

/* MatMul of A [..., M, K] and B [..., K, N] (rank >= 2 each, batch dims
 * broadcast numpy-style) when B has batch dims: one invocation per output
 * element, a loop over K (static, or symbolic: attention's scores times V
 * over a sequence, looping to the run-time value). NULL when emitted, else
 * why not. */
/* The tiled form of a batched MatMul (attention's Q·Kᵀ and P·V): when A
 * [..., M, K], B [..., K, N] and Y have the same batch dims (static or
 * symbolic) and M, N, K are static with M, N >= 16, each product is a GEMM
 * of emit_gemm_tiled's register-blocked form, the products side by side
 * along the grid's x (workgroup x = product * row blocks + row block).
 * Returns 1 when emitted (the per-element form otherwise). */
#define GEMM_BATCHED_MIN 16
static int emit_matmul_batched_tiled(sched_t *s, uint32_t node) {
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *a = val(s, n->inputs[0]), *b = val(s, n->inputs[1]);
  const dml_pkg_value_t *y = val(s, n->outputs[0]);
  int32_t r = y->type.rank;
  if (a->type.rank != r || b->type.rank != r || r < 3) return 0;
  for (int32_t d = 0; d < r - 2; d++)
    if (a->type.dims[d].value != y->type.dims[d].value ||
        a->type.dims[d].sym != y->type.dims[d].sym ||
        b->type.dims[d].value != y->type.dims[d].value ||
        b->type.dims[d].sym != y->type.dims[d].sym)
      return 0;
  const dml_dim_t md = a->type.dims[r - 2], kd = a->type.dims[r - 1],
                  nd = b->type.dims[r - 1];
  if (md.sym >= 0 || kd.sym >= 0 || nd.sym >= 0 || md.value < GEMM_BATCHED_MIN ||
      nd.value < GEMM_BATCHED_MIN || b->type.dims[r - 2].sym >= 0 ||
      b->type.dims[r - 2].value != kd.value)
    return 0;
  gemm_shape_t gs = {.a = a, .b = b, .y = y, .alpha = 1.0, .beta = 1.0, .ksym = -1};
  gs.m = (dml_klin_t){md.value, -1, 0, 0};
  gs.n = nd.value;
  gs.k = kd.value;
  dml_type_t lead = y->type;
  lead.rank -= 2;
  if (!type_numel(&lead, &gs.nb) || gs.nb.c <= 0) return 0;
  group_t G = {.anchor = ANCHOR_GEMM,
               .gid = -1,
               .first = node,
               .nodes = {node},
               .n = 1,
               .out = &y->type};
  count_outside(s, &G);
  dml_kernel_t *K = new_kernel(s, DML_KK_GEMM);
  if (!K) return 1; /* pool->failed: out of memory */
  set_nodes(s, K, &G);
  int64_t blocks = ((md.value + 127) / 128) * ((nd.value + 127) / 128);
  gemm_cfg_t c = blocks >= 128 ? (gemm_cfg_t){128, 128, 8, 8, 8, 256}
                               : (gemm_cfg_t){64, 64, 4, 4, 8, 256};
  emit_gemm_tiled(s, K, &G, &gs, &c);
  const int64_t esz = (int64_t)dml_dtype_size(y->type.dtype);
  lin_add(&K->flops, gs.nb, 2 * md.value * nd.value * kd.value);
  lin_add(&K->bytes, gs.nb, esz * (md.value * kd.value + kd.value * nd.value));
  return 1;
}

static const char *emit_matmul_batched(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const char *why = map_reject(s, n, 2);
  if (why) return why;
  const dml_pkg_value_t *a = val(s, n->inputs[0]), *b = val(s, n->inputs[1]);
  const dml_pkg_value_t *y = val(s, n->outputs[0]);
  if (y->type.dtype != DML_DTYPE_F32 && y->type.dtype != DML_DTYPE_F16 &&
      y->type.dtype != DML_DTYPE_BF16)
    return "only f32, f16 and bf16 are emitted for this op";
  if (emit_matmul_batched_tiled(s, node)) return NULL;
  int32_t r = y->type.rank;
  if (a->type.rank < 2 || b->type.rank < 2 || r < a->type.rank || r < b->type.rank)
    return "MatMul with a 1-D operand";
  dml_dim_t kd = a->type.dims[a->type.rank - 1], kb = b->type.dims[b->type.rank - 2];
  if (kb.value != kd.value || kb.sym != kd.sym) return "K mismatch";
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK], *ac[DML_MAX_RANK], *bc[DML_MAX_RANK];
  const dml_kidx_t *gid = map_kernel(s, node, &y->type, &K, c);
  if (!gid) return NULL;
  K->kind = DML_KK_GEMM;
  snprintf(K->name, sizeof K->name, "k%u_%s", s->n_kernels - 1,
           dml_kernel_kind_name(DML_KK_GEMM));
  int32_t kv = DML_KVAR_FIRST_LOOP;
  for (int32_t d = 0; d < r; d++) ac[d] = bc[d] = c[d];
  ac[r - 1] = bc[r - 2] = dml_ki_var(p, kv); /* a (.., i, k), b (.., k, j) */
  const dml_kval_t *prod = dml_kv_fn(
      p, DML_KF_MUL, load_f32(s, a, at(s, a, bcast_index(s, &a->type, &y->type, ac))),
      load_f32(s, b, at(s, b, bcast_index(s, &b->type, &y->type, bc))));
  dml_kblock_t body = {0};
  dml_kblock_add(&body, assign(s, DML_KS_LET, 0, dml_kv_const(p, 0.0f)));
  dml_kblock_add(&body,
                 for_loop(s, kv, dim_idx(s, kd), /* K static or symbolic */
                          assign(s, DML_KS_SET, 0,
                                 dml_kv_fn(p, DML_KF_ADD, dml_kv_reg(p, 0), prod))));
  dml_kblock_add(
      &body, store_at(s, y, gid,
                      kdt(y) == DML_KT_F32 ? dml_kv_reg(p, 0)
                                           : dml_kv_cast(p, kdt(y), dml_kv_reg(p, 0))));
  K->n_regs = 1;
  map_finish(s, K, &y->type, gid, body.first);
  dml_klin_t numel = {0, -1, 0, 0};
  /* at a symbolic K, the estimate counts K at its bound */
  if (type_numel(&y->type, &numel))
    lin_add(
        &K->flops, numel,
        2 * (kd.sym < 0 ? kd.value
                        : dml_ksched_lin_max(s, (dml_klin_t){kd.value, kd.sym, 0, 0})));
  return NULL;
}

/* ---- Gather, GatherElements: data-driven indices ---- */

/* Gather (ONNX Gather-13) and GatherElements (-13) with i64/i32 indices of
 * any origin: one invocation per output element loads its index, counts a
 * negative one from the end of the axis (static or symbolic: the run-time
 * extent), and loads x there when
 * the index lies in [0, dim); an index out of range (an error on the CPU)
 * gives 0 (the default of the dtype) instead of an access outside x. */
static void emit_gather(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const char *why = map_reject(s, n, 1);
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *ind = val(s, n->inputs[1]);
  const dml_pkg_value_t *y = val(s, n->outputs[0]);
  int elements = n->op == DML_OP_GATHER_ELEMENTS;
  int32_t r = x ? x->type.rank : 0;
  int64_t axis = norm_axis(dml_attr_int(n->attrs, n->n_attrs, "axis", 0), r);
  dml_klin_t l;
  if (!why && (!ind || !typed_ok(ind) ||
               (ind->type.dtype != DML_DTYPE_I64 && ind->type.dtype != DML_DTYPE_I32)))
    why = "indices must be i64 or i32";
  if (!why && !type_numel(&ind->type, &l)) why = TOO_MANY_SYMS;
  if (!why && overlap(ind, y))
    why = "its result overlaps its operands in the memory plan";
  if (!why && (axis < 0 || axis >= r)) why = "axis out of range";
  if (!why && (elements ? ind->type.rank != r || y->type.rank != r
                        : y->type.rank != r + ind->type.rank - 1))
    why = "output rank does not match";
  if (why) {
    unsupported(s, node, "%s", why);
    return;
  }
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK], *ic[DML_MAX_RANK], *xc[DML_MAX_RANK];
  const dml_kidx_t *gid = map_kernel(s, node, &y->type, &K, c);
  if (!gid) return;
  int32_t q = ind->type.rank;
  const dml_kidx_t *iflat;
  if (elements) {
    iflat = gid;
  } else {
    for (int32_t d = 0; d < q; d++) ic[d] = c[axis + d];
    iflat = bcast_index(s, &ind->type, &ind->type, ic);
  }
  dml_kdtype_t it = kdt(ind);
  /* the axis' extent: static, or a product of symbols' run-time values
   * (Gather over a sequence of symbolic length) */
  const dml_kidx_t *D = dim_idx(s, x->type.dims[axis]);
  const dml_kval_t *iv = load_at(s, ind, iflat);
  const dml_kval_t *nv =
      dml_kv_select(p, dml_kv_fn(p, DML_KF_LT, iv, dml_kv_zero(p, it)),
                    dml_kv_fn(p, DML_KF_ADD, iv, dml_kv_idx(p, it, D)), iv);
  const dml_kidx_t *xi = dml_ki_val(p, nv);
  for (int32_t d = 0; d < r; d++)
    xc[d] = d < axis ? c[d] : d == axis ? xi : c[elements ? d : d + q - 1];
  dml_kblock_t body = {0};
  dml_kblock_add(&body, store_at(s, y, gid, dml_kv_zero(p, kdt_s(s, y))));
  dml_kblock_add(&body, if_lt(s, xi, D, store_at(s, y, gid, load_coords(s, x, xc))));
  map_finish(s, K, &y->type, gid, body.first);
}

/* ---- NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss ---- */

/* The losses of runtime/cpu/cpu_loss.c (ONNX opset 13): input/scores
 * [N, C, d...] f32, target [N, d...] i64/i32, weight [C] optional. Per row
 * (n, d): SoftmaxCrossEntropyLoss takes log_softmax over C first (max,
 * sum of exp, log; log_prob stored when asked for); the row's loss is
 * -logp[n, t, d] * w with w = weight[t] (1 without weight) and 0 where
 * t == ignore_index. Reduction "none": one invocation per row stores it;
 * "sum" and "mean" (sum / sum of w): one invocation loops over the rows.
 * A target outside [0, C) (an error on the CPU) contributes nothing. */
/* log_prob of score v of a row whose max is in register 0 and log of the
 * sum of exp(x - max) in register 2 */
static const dml_kval_t *sce_logp(dml_kpool_t *p, const dml_kval_t *v) {
  return dml_kv_fn(p, DML_KF_SUB, dml_kv_fn(p, DML_KF_SUB, v, dml_kv_reg(p, 0)),
                   dml_kv_reg(p, 2));
}

static void emit_loss(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *tg = val(s, n->inputs[1]);
  const dml_pkg_value_t *wt =
      n->n_inputs > 2 && n->inputs[2] != DML_PKG_NO_VALUE ? val(s, n->inputs[2]) : NULL;
  const dml_pkg_value_t *y = val(s, n->outputs[0]);
  const dml_pkg_value_t *lp = n->n_outputs > 1 && n->outputs[1] != DML_PKG_NO_VALUE
                                  ? val(s, n->outputs[1])
                                  : NULL;
  int sce = n->op == DML_OP_SOFTMAX_CROSS_ENTROPY_LOSS;
  const char *red = dml_attr_string(n->attrs, n->n_attrs, "reduction", "mean");
  int mode = !strcmp(red, "none") ? 0 : !strcmp(red, "sum") ? 1 : 2;
  int has_ii = dml_attr_find(n->attrs, n->n_attrs, "ignore_index") != NULL;
  int64_t ii = dml_attr_int(n->attrs, n->n_attrs, "ignore_index", 0);
  const char *why = NULL;
  const dml_pkg_value_t *f32s[4] = {x, wt, y, lp};
  dml_klin_t l;
  if (!x || !tg || !y) why = "absent input";
  for (int i = 0; !why && i < 4; i++)
    if (f32s[i] && (f32s[i]->type.dtype != DML_DTYPE_F32 || !typed_ok(f32s[i])))
      why = "only f32 is emitted for this op";
  if (!why && (!typed_ok(tg) ||
               (tg->type.dtype != DML_DTYPE_I64 && tg->type.dtype != DML_DTYPE_I32)))
    why = "target must be i64 or i32";
  if (!why && mode == 2 && strcmp(red, "mean")) why = "unknown reduction";
  if (!why && (x->type.rank < 2 || tg->type.rank != x->type.rank - 1))
    why = "input must be [N, C, d...] and target [N, d...]";
  int64_t C = why ? 1 : x->type.dims[1].value, D = 1;
  for (int32_t d = 1; !why && d < x->type.rank; d++) {
    if (x->type.dims[d].sym >= 0) why = "symbolic class or spatial dim";
    if (d >= 2) D *= x->type.dims[d].value;
  }
  if (!why && wt && (wt->type.rank != 1 || wt->type.dims[0].value != C))
    why = "weight must be [C]";
  if (!why && !type_numel(&x->type, &l)) why = TOO_MANY_SYMS;
  const dml_pkg_value_t *ins[3] = {x, tg, wt}, *outs[2] = {y, lp};
  for (int i = 0; !why && i < 3; i++)
    for (int o = 0; o < 2; o++)
      if (ins[i] && outs[o] && overlap(ins[i], outs[o]))
        why = "its result overlaps its operands in the memory plan";
  if (why) {
    unsupported(s, node, "%s", why);
    return;
  }
  dml_klin_t rows;
  type_numel(&tg->type, &rows);
  dml_kernel_t *K = new_kernel(s, DML_KK_SOFTMAX);
  if (!K) return;
  group_t G = {.anchor = ANCHOR_NONE, .n = 1, .nodes = {node}};
  set_nodes(s, K, &G);
  K->local[0] = mode == 0 ? 64 : 1;
  K->items[0] = mode == 0 ? rows : (dml_klin_t){1, -1, 0, 0};
  K->n_regs = 5;
  const dml_kidx_t *gid = dml_ki_var(p, DML_KVAR_GID_X);
  int32_t vr = DML_KVAR_FIRST_LOOP, vk = vr + 1;
  const dml_kidx_t *row = mode == 0 ? gid : dml_ki_var(p, vr);
  const dml_kidx_t *Dx = dml_ki_const(p, D), *Cx = dml_ki_const(p, C);
  /* element (n, k, d) of x: (row / D * C + k) * D + row % D */
  const dml_kidx_t *nb =
      dml_ki_bin(p, DML_KI_MUL, dml_ki_bin(p, DML_KI_DIV, row, Dx), Cx);
  const dml_kidx_t *rd = dml_ki_bin(p, DML_KI_MOD, row, Dx);
#define XAT(k)              \
  dml_ki_bin(p, DML_KI_ADD, \
             dml_ki_bin(p, DML_KI_MUL, dml_ki_bin(p, DML_KI_ADD, nb, (k)), Dx), rd)
  const dml_kidx_t *kv = dml_ki_var(p, vk);
  const dml_kval_t *xk = load_at(s, x, XAT(kv));
  dml_kblock_t rb = {0}; /* one row's statements */
  if (sce) {
    dml_kblock_add(&rb, assign(s, DML_KS_LET, 0, dml_kv_const(p, -INFINITY)));
    dml_kblock_add(&rb, for_loop(s, vk, Cx,
                                 assign(s, DML_KS_SET, 0,
                                        dml_kv_fn(p, DML_KF_MAX, dml_kv_reg(p, 0), xk))));
    dml_kblock_add(&rb, assign(s, DML_KS_LET, 1, dml_kv_const(p, 0.0f)));
    dml_kblock_add(&rb, for_loop(s, vk, Cx,
                                 assign(s, DML_KS_SET, 1,
                                        dml_kv_fn(p, DML_KF_ADD, dml_kv_reg(p, 1),
                                                  dml_kv_fn(p, DML_KF_EXP,
                                                            dml_kv_fn(p, DML_KF_SUB, xk,
                                                                      dml_kv_reg(p, 0)),
                                                            NULL)))));
    /* log_prob = (x - max) - log(sum), as the CPU's and LogSoftmax's: not
     * x - (max + log(sum)), where a large max absorbs log(sum) (scores
     * [1e15, 1e15, 0.5] gave log_prob 0, not -log 2 = -0.693) */
    dml_kblock_add(&rb, assign(s, DML_KS_LET, 2, dml_kv_log(p, dml_kv_reg(p, 1))));
    if (lp)
      dml_kblock_add(&rb, for_loop(s, vk, Cx, store_at(s, lp, XAT(kv), sce_logp(p, xk))));
  }
  dml_kdtype_t tt = kdt(tg);
  const dml_kval_t *t = load_at(s, tg, row);
  const dml_kval_t *ign = has_ii ? dml_kv_fn(p, DML_KF_EQ, t, dml_kv_iconst(p, tt, ii))
                                 : dml_kv_zero(p, DML_KT_BOOL);
  /* an ignored row takes class C, out of range: it adds nothing and stores
   * +0, as on the CPU (its -logp * 0 was NaN for an infinite or NaN score
   * and -0 otherwise) */
  const dml_kidx_t *ti = dml_ki_val(p, dml_kv_select(p, ign, dml_kv_iconst(p, tt, C), t));
  const dml_kval_t *w = wt ? load_at(s, wt, ti) : dml_kv_const(p, 1.0f);
  const dml_kval_t *logp = load_at(s, x, XAT(ti));
  if (sce) logp = sce_logp(p, logp);
  const dml_kval_t *loss =
      dml_kv_fn(p, DML_KF_MUL, dml_kv_fn(p, DML_KF_NEG, logp, NULL), w);
#undef XAT
  dml_kblock_t hit = {0};
  if (mode == 0) {
    dml_kblock_add(&rb, store_at(s, y, row, dml_kv_const(p, 0.0f)));
    dml_kblock_add(&hit, store_at(s, y, row, loss));
  } else {
    dml_kblock_add(
        &hit, assign(s, DML_KS_SET, 3, dml_kv_fn(p, DML_KF_ADD, dml_kv_reg(p, 3), loss)));
    dml_kblock_add(
        &hit, assign(s, DML_KS_SET, 4, dml_kv_fn(p, DML_KF_ADD, dml_kv_reg(p, 4), w)));
  }
  dml_kblock_add(&rb, if_lt(s, ti, Cx, hit.first));
  dml_kblock_t body = {0};
  if (mode == 0) {
    body = rb;
    K->body = if_lt(s, gid, dml_ki_lin(p, rows), body.first);
  } else {
    dml_kblock_add(&body, assign(s, DML_KS_LET, 3, dml_kv_const(p, 0.0f)));
    dml_kblock_add(&body, assign(s, DML_KS_LET, 4, dml_kv_const(p, 0.0f)));
    dml_kblock_add(&body, for_loop(s, vr, dml_ki_lin(p, rows), rb.first));
    const dml_kval_t *res = dml_kv_reg(p, 3);
    if (mode == 2) res = dml_kv_fn(p, DML_KF_DIV, res, dml_kv_reg(p, 4));
    dml_kblock_add(&body, store_at(s, y, dml_ki_const(p, 0), res));
    K->body = if_lt(s, gid, dml_ki_const(p, 1), body.first);
  }
  lin_add(&K->flops, l, sce ? 5 : 1);
  lin_add(&K->bytes, l, sce ? 8 : 4);
}

/* ---- generators: Range, ConstantOfShape, windows ---- */

/* Range (ONNX opset 11), ConstantOfShape (opset 9) and HannWindow,
 * HammingWindow, BlackmanWindow (opset 17): one invocation per output
 * element i, the count c * s * s' ... (type_numel: static dims, the batch,
 * or the data-dependent symbols their shape inputs fed at run time give,
 * whose values the runtime computes on the host before the run; dims_reject
 * has refused those the device would compute). A zero dim gives no
 * workgroups (the runtimes skip the dispatch) and every store is guarded
 * by i < numel.
 * Range: start + i * delta, start and delta loaded from the scalar inputs
 * (f32 and f64: one multiply-add in the dtype, as the CPU's
 * (float)start + (float)i * (float)delta; integers in the dtype's width,
 * wrapping as the CPU's); ConstantOfShape: attribute `value` converted to
 * the output dtype as the CPU converts it; windows: a0 - a1 cos(2 pi i /
 * N1) + a2 cos(4 pi i / N1), N1 = size (periodic) or size - 1, computed in
 * f32 (the CPU's double values within 1e-6), float outputs only (an integer
 * output truncates, where f32's error could flip a value); the window's
 * size is the output dim (a symbol's run-time value when fed at run time).
 */
static const char *gen_reject(sched_t *s, const dml_pkg_node_t *n, double *cval) {
  const dml_pkg_value_t *y = n->n_outputs ? val(s, n->outputs[0]) : NULL;
  dml_klin_t l;
  if (!y || !typed_ok(y)) return "output dtype not held by kernels (or misaligned)";
  if (!type_numel(&y->type, &l))
    return "output dims over a symbol of index 32 or more, or one symbol in more than "
           "two "
           "dims";
  if (n->op == DML_OP_RANGE) {
    if (n->n_inputs != 3) return "Range needs start, limit and delta";
    for (uint32_t k = 0; k < 3; k++) {
      const dml_pkg_value_t *x = val(s, n->inputs[k]);
      dml_klin_t xl;
      if (!x || x->type.dtype != y->type.dtype || !typed_ok(x) ||
          !type_numel(&x->type, &xl) || xl.sym >= 0 || xl.c != 1)
        return "start, limit and delta must be scalars of the output dtype";
    }
    dml_dtype_t d = y->type.dtype;
    if (d == DML_DTYPE_F16 || d == DML_DTYPE_BF16 || d == DML_DTYPE_BOOL)
      return "only f32, f64 and integer Range is emitted";
    return NULL;
  }
  if (n->op == DML_OP_CONSTANT_OF_SHAPE) {
    const dml_attr_t *a = dml_attr_find(n->attrs, n->n_attrs, "value");
    *cval = 0;
    if (!a) return NULL;
    if (a->kind != DML_ATTR_TENSOR || a->tensor.rank > 1 || !a->tensor.data ||
        (a->tensor.rank == 1 && a->tensor.dims[0] != 1))
      return "value must be a one-element tensor";
    dml_dtype_t vt = a->tensor.dtype, dt = y->type.dtype;
    if (dml_dtype_is_float(vt) || dml_dtype_is_float(dt)) {
      double v = dml_load_f64(vt, a->tensor.data, 0);
      if (!dml_dtype_is_float(dt)) {
        if (!(v > -9.2e18 && v < 9.2e18)) return "value out of the output dtype's range";
        v = (double)(int64_t)v; /* C conversion truncates */
      }
      if (dml_dtype_is_float(dt) && (double)(float)v != v && v == v)
        return "value not exact in f32 (kernel constants are f32)";
      *cval = v;
    } else {
      *cval = 0;
    }
    return NULL;
  }
  if (!dml_dtype_is_float(y->type.dtype)) return "only float window outputs are emitted";
  if (y->type.rank != 1) return "window output must be 1-D";
  return NULL;
}

static void emit_generator(sched_t *s, uint32_t node, double cval) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *y = val(s, n->outputs[0]);
  dml_kdtype_t t = kdt(y);
  dml_klin_t numel;
  type_numel(&y->type, &numel);
  dml_kernel_t *K = new_kernel(s, DML_KK_ELEMENTWISE);
  if (!K) return;
  group_t G = {.anchor = ANCHOR_NONE, .n = 1, .nodes = {node}};
  set_nodes(s, K, &G);
  K->local[0] = WG;
  K->items[0] = numel;
  lin_add(&K->bytes, numel, (int64_t)dml_dtype_size(y->type.dtype));
  const dml_kidx_t *gid = dml_ki_var(p, DML_KVAR_GID_X), *zero = dml_ki_const(p, 0);
  const dml_kval_t *v;
  if (n->op == DML_OP_RANGE) {
    const dml_kval_t *st = load_at(s, val(s, n->inputs[0]), zero),
                     *de = load_at(s, val(s, n->inputs[2]), zero);
    v = dml_kv_fn(p, DML_KF_ADD, st, dml_kv_fn(p, DML_KF_MUL, dml_kv_idx(p, t, gid), de));
    lin_add(&K->flops, numel, 2);
  } else if (n->op == DML_OP_CONSTANT_OF_SHAPE) {
    const dml_attr_t *a = dml_attr_find(n->attrs, n->n_attrs, "value");
    if (dml_kdtype_is_float(t))
      v = dml_kv_fconst(p, t, (float)cval);
    else if (a && !dml_dtype_is_float(a->tensor.dtype))
      v = dml_kv_iconst(p, t, dml_load_i64(a->tensor.dtype, a->tensor.data, 0));
    else
      v = dml_kv_iconst(p, t, (int64_t)cval);
  } else {
    double a0, a1, a2 = 0;
    if (n->op == DML_OP_HANN_WINDOW) {
      a0 = 0.5, a1 = 0.5;
    } else if (n->op == DML_OP_HAMMING_WINDOW) {
      a0 = 25.0 / 46.0, a1 = 1.0 - 25.0 / 46.0;
    } else {
      a0 = 0.42, a1 = 0.5, a2 = 0.08;
    }
    /* N1 = size (periodic) or size - 1; i / N1 <= 1, so the angles stay
     * within [0, 4 pi] (N1 = 0, a 1-point symmetric window, gives the
     * CPU's cos(nan)) */
    const dml_kidx_t *size = dim_idx(s, y->type.dims[0]);
    const dml_kval_t *n1 = dml_kv_idx(p, DML_KT_F32, size);
    if (!dml_attr_int(n->attrs, n->n_attrs, "periodic", 1))
      n1 = dml_kv_fn(p, DML_KF_SUB, n1, dml_kv_const(p, 1.0f));
    const dml_kval_t *turn = dml_kv_fn(p, DML_KF_DIV, dml_kv_idx(p, DML_KT_F32, gid), n1);
    const dml_kval_t *c1 = dml_kv_fn(
        p, DML_KF_COS,
        dml_kv_fn(p, DML_KF_MUL, turn, dml_kv_const(p, 6.283185307179586f)), NULL);
    const dml_kval_t *c2 = dml_kv_fn(
        p, DML_KF_COS,
        dml_kv_fn(p, DML_KF_MUL, turn, dml_kv_const(p, 12.566370614359172f)), NULL);
    v = dml_kv_fn(p, DML_KF_SUB, dml_kv_const(p, (float)a0),
                  dml_kv_fn(p, DML_KF_MUL, dml_kv_const(p, (float)a1), c1));
    if (a2 != 0)
      v = dml_kv_fn(p, DML_KF_ADD, v,
                    dml_kv_fn(p, DML_KF_MUL, dml_kv_const(p, (float)a2), c2));
    v = dml_kv_cast(p, t, v);
    lin_add(&K->flops, numel, 8);
  }
  K->body = if_lt(s, gid, dml_ki_lin(p, numel), store_at(s, y, gid, v));
}

void dml_ksched_unsupported(sched_t *s, uint32_t node, const char *why) {
  unsupported(s, node, "%s", why);
}

dml_kernel_t *dml_ksched_kernel(sched_t *s, dml_kernel_kind_t kind, uint32_t node) {
  dml_kernel_t *K = new_kernel(s, kind);
  if (!K) return NULL;
  group_t G = {.anchor = ANCHOR_NONE, .n = 1, .nodes = {node}};
  set_nodes(s, K, &G);
  return K;
}

int dml_kschedule_handles(dml_op_t op) {
  const dml_op_info_t *info = dml_op_info(op);
  if (!info) return 0;
  if (dml_ksched_spatial_handles(op)) return 1;
  if (dml_ksched_index_handles(op)) return 1;
  if (dml_ksched_math_handles(op)) return 1;
  if (dml_ksched_dyn_handles(op)) return 1;
  if (dml_ksched_topk_dft_tfidf_handles(op)) return 1;
  if (ew_op(op) || move_op(op) || (info->flags & DML_OPF_VIEW)) return 1;
  switch (op) {
    case DML_OP_ASSIGN:
    case DML_OP_GEMM:
    case DML_OP_MATMUL:
    case DML_OP_REDUCE_SUM:
    case DML_OP_REDUCE_MEAN:
    case DML_OP_REDUCE_MAX:
    case DML_OP_REDUCE_MIN:
    case DML_OP_REDUCE_PROD:
    case DML_OP_REDUCE_L1:
    case DML_OP_REDUCE_L2:
    case DML_OP_REDUCE_LOG_SUM:
    case DML_OP_REDUCE_LOG_SUM_EXP:
    case DML_OP_REDUCE_SUM_SQUARE:
    case DML_OP_LAYER_NORMALIZATION:
    case DML_OP_INSTANCE_NORMALIZATION:
    case DML_OP_HARDMAX:
    case DML_OP_CONV_TRANSPOSE:
    case DML_OP_GATHER:
    case DML_OP_GATHER_ELEMENTS:
    case DML_OP_NEGATIVE_LOG_LIKELIHOOD_LOSS:
    case DML_OP_SOFTMAX_CROSS_ENTROPY_LOSS:
    case DML_OP_SOFTMAX:
    case DML_OP_LOG_SOFTMAX:
    case DML_OP_CONV:
    case DML_OP_MAX_POOL:
    case DML_OP_AVERAGE_POOL:
    case DML_OP_GLOBAL_AVERAGE_POOL:
    case DML_OP_GLOBAL_MAX_POOL:
    case DML_OP_ARG_MAX:
    case DML_OP_ARG_MIN:
    case DML_OP_SHAPE:
    case DML_OP_SIZE:
    case DML_OP_DROPOUT:
    case DML_OP_RANGE:
    case DML_OP_CONSTANT_OF_SHAPE:
    case DML_OP_HANN_WINDOW:
    case DML_OP_HAMMING_WINDOW:
    case DML_OP_BLACKMAN_WINDOW:
    case DML_OP_RNN:
    case DML_OP_GRU:
    case DML_OP_LSTM: return 1;
    default: return dml_ksched_random_op(op);
  }
}

/* ---- the pass ---- */

static void close_group(sched_t *s, group_t *G, const gemm_shape_t *gs, const int *red,
                        const win_shape_t *ws) {
  if (G->n == 0) return;
  count_outside(s, G);
  if (G->anchor == ANCHOR_GEMM) {
    uint32_t k = s->n_kernels;
    emit_gemm_group(s, G, gs);
    /* the tensor-core renderers need a static K; a small M keeps its
     * K-split form (a 128-row tile would be mostly empty) */
    if (s->n_kernels == k + 1 && gs->ksym < 0 && lin_max(s, gs->m) > GEMM_SMALL_M)
      attach_gemm(s, &s->kernels[k], G, gs);
  } else if (G->anchor == ANCHOR_CONV)
    emit_conv_group(s, G, ws);
  else if (G->anchor == ANCHOR_REDUCE)
    emit_reduce_group(s, G, red);
  else
    emit_ew_group(s, G);
  G->n = 0;
}

static int consumes_group(const sched_t *s, const group_t *G, const dml_pkg_node_t *n) {
  for (uint32_t k = 0; k < n->n_inputs; k++)
    if (n->inputs[k] != DML_PKG_NO_VALUE && producer_in(s, G, n->inputs[k]) >= 0)
      return 1;
  return 0;
}

static int is_view_alias(const sched_t *s, const dml_pkg_node_t *n) {
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *y = val(s, n->outputs[0]);
  return x && y && x->storage != DML_PKG_STORAGE_CONST && x->offset == y->offset;
}

/* Host node `node` (dml_kschedule_host): appended to the plan's last entry
 * when that is a host entry, else a new one. */
static void emit_host(sched_t *s, uint32_t node) {
  dml_kernel_t *L = s->n_kernels ? &s->kernels[s->n_kernels - 1] : NULL;
  if (L && L->kind == DML_KK_HOST) {
    uint32_t *nodes =
        (uint32_t *)dml_kpool_alloc(s->pool, (L->n_nodes + 1) * sizeof(uint32_t));
    if (!nodes) return; /* pool->failed: out of memory */
    memcpy(nodes, L->nodes, L->n_nodes * sizeof(uint32_t));
    nodes[L->n_nodes++] = node;
    L->nodes = nodes;
    s->group_of[node] = s->n_kernels;
    return;
  }
  dml_ksched_kernel(s, DML_KK_HOST, node);
}

dml_status_t dml_kschedule(const dml_pkg_graph_t *g, uint32_t fn, const uint8_t *weights,
                           uint64_t weights_size, dml_kplan_t **out_plan) {
  return dml_kschedule_host(g, fn, weights, weights_size, NULL, NULL, out_plan);
}

dml_status_t dml_kschedule_host(const dml_pkg_graph_t *g, uint32_t fn,
                                const uint8_t *weights, uint64_t weights_size,
                                const uint8_t *host, uint8_t *refused,
                                dml_kplan_t **out_plan) {
  if (!g || fn >= g->n_functions || !out_plan)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "codegen.schedule",
                           "no such function %u", fn);
  dml_kplan_t *plan = (dml_kplan_t *)calloc(1, sizeof *plan);
  dml_kpool_t *pool = (dml_kpool_t *)calloc(1, sizeof *pool);
  sched_t s;
  memset(&s, 0, sizeof s);
  s.g = g;
  s.fn = &g->functions[fn];
  s.weights = weights;
  s.weights_size = weights ? weights_size : 0;
  s.pool = pool;
  s.host = host;
  s.refused = refused;
  uint32_t nv = s.fn->n_values ? s.fn->n_values : 1,
           nn = s.fn->n_nodes ? s.fn->n_nodes : 1;
  s.n_uses_outside = (uint32_t *)calloc(nv, sizeof(uint32_t));
  s.group_of = (uint32_t *)calloc(nn, sizeof(uint32_t));
  s.is_output = (uint8_t *)calloc(nv, 1);
  if (!plan || !pool || !s.n_uses_outside || !s.group_of || !s.is_output) {
    free(plan);
    free(pool);
    free(s.n_uses_outside);
    free(s.group_of);
    free(s.is_output);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen.schedule",
                           "out of memory");
  }
  for (uint32_t i = 0; i < s.fn->n_outputs; i++)
    if (s.fn->outputs[i] < nv) s.is_output[s.fn->outputs[i]] = 1;

  group_t *G = (group_t *)calloc(1, sizeof *G);
  gemm_shape_t gs;
  win_shape_t ws;
  int red[DML_MAX_RANK] = {0};
  memset(&gs, 0, sizeof gs);
  memset(&ws, 0, sizeof ws);
  for (uint32_t i = 0; G && i < s.fn->n_nodes; i++) {
    const dml_pkg_node_t *n = &s.fn->nodes[i];
    const dml_op_info_t *info = dml_op_info(n->op);
    const dml_pkg_value_t *y = n->n_outputs ? val(&s, n->outputs[0]) : NULL;
    if (s.host && s.host[i]) { /* the CPU fall-back: the host runs it */
      close_group(&s, G, &gs, red, &ws);
      emit_host(&s, i);
      continue;
    }
    const char *dwhy = dims_reject(&s, i);
    if (dwhy) {
      unsupported(&s, i, "%s", dwhy);
      continue;
    }
    if (info && (info->flags & DML_OPF_VIEW)) {
      const dml_pkg_value_t *x = val(&s, n->inputs[0]);
      if (is_view_alias(&s, n)) continue; /* nothing to run */
      close_group(&s, G, &gs, red, &ws);
      dml_klin_t l;
      if (!x || !y || x->type.dtype != y->type.dtype || !typed_ok(x) || !typed_ok(y))
        unsupported(&s, i, "only numeric and bool views (aligned) are emitted", NULL);
      else if (!type_numel(&y->type, &l))
        unsupported(&s, i, TOO_MANY_SYMS, NULL);
      else {
        s.raw16 = 1;
        emit_copy(&s, i);
        s.raw16 = 0;
      }
      continue;
    }
    if (dml_ksched_spatial_claims(&s, i)) {
      close_group(&s, G, &gs, red, &ws);
      dml_ksched_spatial_emit(&s, i);
      continue;
    }
    if (dml_ksched_index_handles(n->op)) {
      close_group(&s, G, &gs, red, &ws);
      dml_ksched_index_emit(&s, i);
      continue;
    }
    if (dml_ksched_math_handles(n->op)) {
      close_group(&s, G, &gs, red, &ws);
      dml_ksched_math_emit(&s, i);
      continue;
    }
    if (dml_ksched_dyn_handles(n->op)) {
      close_group(&s, G, &gs, red, &ws);
      dml_ksched_dyn_emit(&s, i);
      continue;
    }
    if (dml_ksched_topk_dft_tfidf_handles(n->op)) {
      close_group(&s, G, &gs, red, &ws);
      dml_ksched_topk_dft_tfidf_emit(&s, i);
      continue;
    }
    if (n->op == DML_OP_ASSIGN) {
      const char *why = assign_reject(&s, n);
      if (why) {
        unsupported(&s, i, "%s", why);
        continue;
      }
      const dml_pkg_value_t *gl = val(&s, n->inputs[0]), *x = val(&s, n->inputs[1]);
      if (in_fuse_group(G, n) && G->n < 255 && producer_in(&s, G, n->inputs[1]) >= 0 &&
          same_shape(&x->type, G->out) && !reads_other_element(&s, G, gl)) {
        G->nodes[G->n++] = i; /* stored by the group that computes it */
        continue;
      }
      close_group(&s, G, &gs, red, &ws);
      emit_assign_copy(&s, i);
      continue;
    }
    if (ew_op(n->op)) {
      const char *why = ew_reject(&s, n);
      if (why) {
        unsupported(&s, i, "%s", why);
        continue;
      }
      int joined = 0;
      if (in_fuse_group(G, n) && G->n < 255 && same_shape(&y->type, G->out) &&
          n->op != DML_OP_ONE_HOT && consumes_group(&s, G, n)) {
        G->nodes[G->n++] = i;
        if (group_safe(&s, G))
          joined = 1;
        else
          G->n--;
      }
      if (!joined) {
        close_group(&s, G, &gs, red, &ws);
        G->anchor = ANCHOR_NONE;
        G->gid = fuse_gid(n);
        G->first = i;
        G->nodes[0] = i;
        G->n = 1;
        G->out = &y->type;
        if (!group_safe(&s, G)) close_group(&s, G, &gs, red, &ws); /* alone it is safe */
      }
      continue;
    }
    close_group(&s, G, &gs, red, &ws);
    switch (n->op) {
      case DML_OP_GEMM:
      case DML_OP_MATMUL: {
        const dml_pkg_value_t *rhs = n->n_inputs > 1 ? val(&s, n->inputs[1]) : NULL;
        if (n->op == DML_OP_MATMUL && rhs && rhs->type.rank > 2) {
          const char *bwhy = emit_matmul_batched(&s, i);
          if (bwhy) unsupported(&s, i, "%s", bwhy);
          break;
        }
        const char *why = gemm_reject(&s, n, &gs);
        if (why) {
          unsupported(&s, i, "%s", why);
          break;
        }
        G->anchor = ANCHOR_GEMM;
        G->gid = fuse_gid(n);
        G->first = i;
        G->nodes[0] = i;
        G->n = 1;
        G->out = &y->type;
        if (!group_safe(&s, G)) {
          unsupported(&s, i, "its result overlaps its operands in the memory plan", NULL);
          G->n = 0;
        }
        break;
      }
      case DML_OP_CONV: {
        const char *why = win_reject(&s, n, &ws);
        if (why) {
          unsupported(&s, i, "%s", why);
          break;
        }
        G->anchor = ANCHOR_CONV;
        G->gid = fuse_gid(n);
        G->first = i;
        G->nodes[0] = i;
        G->n = 1;
        G->out = &y->type;
        if (!group_safe(&s, G)) {
          unsupported(&s, i, "its result overlaps its operands in the memory plan", NULL);
          G->n = 0;
        }
        break;
      }
      case DML_OP_MAX_POOL:
      case DML_OP_AVERAGE_POOL: {
        win_shape_t pw;
        const char *why = win_reject(&s, n, &pw);
        if (why)
          unsupported(&s, i, "%s", why);
        else
          emit_pool(&s, i, &pw);
        break;
      }
      case DML_OP_GLOBAL_AVERAGE_POOL:
      case DML_OP_GLOBAL_MAX_POOL:
      case DML_OP_REDUCE_SUM:
      case DML_OP_REDUCE_MEAN:
      case DML_OP_REDUCE_MAX:
      case DML_OP_REDUCE_MIN:
      case DML_OP_REDUCE_PROD:
      case DML_OP_REDUCE_L1:
      case DML_OP_REDUCE_L2:
      case DML_OP_REDUCE_LOG_SUM:
      case DML_OP_REDUCE_LOG_SUM_EXP:
      case DML_OP_REDUCE_SUM_SQUARE:
      case DML_OP_ARG_MAX:
      case DML_OP_ARG_MIN: {
        const dml_pkg_value_t *x = val(&s, n->inputs[0]);
        dml_klin_t l;
        const char *why = NULL;
        int arg = n->op == DML_OP_ARG_MAX || n->op == DML_OP_ARG_MIN;
        if (!x || !y || !typed_ok(x) || !typed_ok(y) ||
            (arg ? y->type.dtype != DML_DTYPE_I64
                 : (x->type.dtype != y->type.dtype || x->type.dtype == DML_DTYPE_BOOL)))
          why = arg ? "only f32, i64 and i32 inputs (aligned) are emitted"
                    : "only f32, i64 and i32 (aligned) are emitted";
        else if (x->type.dtype == DML_DTYPE_BOOL)
          why = "ArgMax/ArgMin of bool";
        else if (x->type.dtype == DML_DTYPE_F16 || x->type.dtype == DML_DTYPE_BF16)
          why = "f16 and bf16 reductions are not emitted (the CPU accumulates in f64)";
        else if (x->type.dtype != DML_DTYPE_F32 && x->type.dtype != DML_DTYPE_F64 &&
                 (n->op == DML_OP_REDUCE_MEAN || n->op == DML_OP_GLOBAL_AVERAGE_POOL ||
                  n->op == DML_OP_GLOBAL_MAX_POOL || n->op == DML_OP_REDUCE_PROD ||
                  n->op == DML_OP_REDUCE_L1 || n->op == DML_OP_REDUCE_L2 ||
                  n->op == DML_OP_REDUCE_LOG_SUM || n->op == DML_OP_REDUCE_LOG_SUM_EXP ||
                  n->op == DML_OP_REDUCE_SUM_SQUARE))
          why = "only f32 and f64 are emitted for this op";
        else if (!type_numel(&x->type, &l))
          why = TOO_MANY_SYMS;
        else if (arg) {
          int64_t axis = dml_attr_int(n->attrs, n->n_attrs, "axis", 0);
          if (axis < 0) axis += x->type.rank;
          if (axis < 0 || axis >= x->type.rank) {
            why = "axis out of range";
          } else {
            for (int32_t d = 0; d < x->type.rank; d++) red[d] = d == axis;
          }
        } else
          why = reduce_axes(&s, n, x->type.rank, red);
        if (why) {
          unsupported(&s, i, "%s", why);
          break;
        }
        G->anchor = ANCHOR_REDUCE;
        G->gid = fuse_gid(n);
        G->first = i;
        G->nodes[0] = i;
        G->n = 1;
        G->out = &y->type;
        break;
      }
      case DML_OP_SHAPE:
      case DML_OP_SIZE: {
        const dml_pkg_value_t *x = val(&s, n->inputs[0]);
        dml_klin_t l;
        if (!x || !y || y->type.dtype != DML_DTYPE_I64 || !typed_ok(y))
          unsupported(&s, i, "%s output must be i64", n->op_name);
        else if (!type_numel(&x->type, &l))
          unsupported(&s, i, TOO_MANY_SYMS, NULL);
        else
          emit_shape_size(&s, i);
        break;
      }
      case DML_OP_SOFTMAX:
      case DML_OP_LOG_SOFTMAX: {
        const dml_pkg_value_t *x = val(&s, n->inputs[0]);
        dml_klin_t l;
        if (!x || !y || x->type.dtype != DML_DTYPE_F32)
          unsupported(&s, i, "only f32 is emitted", NULL);
        else if (!type_numel(&x->type, &l))
          unsupported(&s, i, TOO_MANY_SYMS, NULL);
        else
          emit_softmax(&s, i);
        break;
      }
      case DML_OP_CONV_TRANSPOSE: emit_conv_transpose(&s, i); break;
      case DML_OP_GATHER:
      case DML_OP_GATHER_ELEMENTS:
        s.raw16 = 1;
        emit_gather(&s, i);
        s.raw16 = 0;
        break;
      case DML_OP_NEGATIVE_LOG_LIKELIHOOD_LOSS:
      case DML_OP_SOFTMAX_CROSS_ENTROPY_LOSS: emit_loss(&s, i); break;
      case DML_OP_RANDOM_UNIFORM:
      case DML_OP_RANDOM_UNIFORM_LIKE:
      case DML_OP_RANDOM_NORMAL:
      case DML_OP_RANDOM_NORMAL_LIKE:
      case DML_OP_BERNOULLI: emit_random(&s, i); break;
      case DML_OP_DROPOUT: {
        int training = 0;
        const char *why = dropout_reject(&s, n, &training);
        if (why)
          unsupported(&s, i, "%s", why);
        else
          emit_dropout(&s, i, training);
        break;
      }
      case DML_OP_LAYER_NORMALIZATION:
      case DML_OP_INSTANCE_NORMALIZATION: dml_ksched_norm_emit(&s, i); break;
      case DML_OP_RNN:
      case DML_OP_GRU:
      case DML_OP_LSTM: dml_ksched_rnn_emit(&s, i); break;
      case DML_OP_RANGE:
      case DML_OP_CONSTANT_OF_SHAPE:
      case DML_OP_HANN_WINDOW:
      case DML_OP_HAMMING_WINDOW:
      case DML_OP_BLACKMAN_WINDOW: {
        double cval = 0;
        const char *why = gen_reject(&s, n, &cval);
        if (why)
          unsupported(&s, i, "%s", why);
        else
          emit_generator(&s, i, cval);
        break;
      }
      case DML_OP_HARDMAX: {
        const char *why = map_reject_f32(&s, n, 1);
        if (why)
          unsupported(&s, i, "%s", why);
        else
          emit_hardmax(&s, i);
        break;
      }
      default:
        if (move_op(n->op))
          emit_move(&s, i);
        else
          unsupported(&s, i, "no GPU kernel for this op", NULL);
        break;
    }
  }
  int g_oom = !G;
  if (G) close_group(&s, G, &gs, red, &ws);
  free(G);
  free(s.n_uses_outside);
  free(s.group_of);
  free(s.is_output);
  dml_status_t err = s.err;
  if (!err && pool->failed)
    err = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen.schedule",
                          "out of memory");
  if (!err && g_oom)
    err = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen.schedule",
                          "out of memory");
  if (err) {
    dml_kpool_free(pool);
    free(pool);
    free(plan);
    return err;
  }
  plan->function = fn;
  plan->n_kernels = s.n_kernels;
  plan->kernels = s.kernels;
  plan->n_symbols = g->n_symbols;
  plan->pool_ = pool;
  *out_plan = plan;
  return DML_OK;
}

void dml_kplan_release(dml_kplan_t *p) {
  if (!p) return;
  if (p->pool_) {
    dml_kpool_free(p->pool_);
    free(p->pool_);
  }
  free(p);
}

/* ---- the eager kernel library's formulas (codegen/eager_lib.c) ---- */

const char *dml_ksched_ew_node(dml_kpool_t *pool, const dml_pkg_graph_t *g, uint32_t fn,
                               uint32_t node, const dml_kval_t *const *x,
                               const dml_kval_t **out_value) {
  sched_t s;
  memset(&s, 0, sizeof s);
  s.g = g;
  s.fn = &g->functions[fn];
  s.pool = pool;
  const dml_pkg_node_t *n = &s.fn->nodes[node];
  const char *why = ew_reject(&s, n);
  if (why) return why;
  if (n->op == DML_OP_EXPAND || n->op == DML_OP_ONE_HOT ||
      n->op == DML_OP_BATCH_NORMALIZATION)
    return "not a formula of its operands' elements";
  const dml_kval_t *v = ew_value(&s, n, x);
  if (!v) return "no formula";
  *out_value = v;
  return NULL;
}
