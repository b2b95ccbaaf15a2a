/*
 * infer.c — shape and dtype functions for every op in ops.def.
 *
 * Semantics follow the ONNX operator spec (opset 17, with the opset 18
 * input forms of Split/Reduce* and Resize's `axes`) and ONNX's own shape
 * inference (onnx/defs/ shape functions). Dims are dml_dim_t: a static
 * extent, or value * S for a module symbol S with an upper bound. A result
 * that cannot be written in that form (a product of two symbols, batch+1,
 * 3*batch/2, a dim that depends on tensor contents we do not know) is an
 * UNIMPLEMENTED error that says so; an ill-formed node is INVALID_ARGUMENT.
 * Every error names the node, the op and the input types.
 *
 * Small integer tensors whose contents are known (constant globals, and
 * the results of Shape, Size, Gather, Concat, Slice, Transpose, Unsqueeze,
 * Squeeze, Reshape, Identity, Cast, Range, ConstantOfShape, Neg, Abs, Max,
 * Min, Where, ReduceSum/Prod/Max/Min and integer Add/Sub/Mul/Div/Mod on
 * those, bool comparisons of them and Not/And/Or/Xor of those) carry their
 * elements in dml_ir_value_t::sym_data,
 * so exporter chains such as Shape -> Gather -> Unsqueeze -> Concat ->
 * Reshape resolve statically. Arithmetic on symbolic elements that
 * value*symbol cannot write gives derived symbols (sym_arith_derived:
 * (H-1)/2+1 is the "(H+1)/2" of a stride-2 Conv, batch*frames a product);
 * a tensor some of whose elements are computed at run time keeps the known
 * ones in dml_ir_value_t::sym_partial (Concat, Slice, Transpose, Reshape and
 * the like pass them on), so Pad, Reshape and Resize make only the dims the
 * unknown elements decide data-dependent. Invariant of recorded elements: a
 * symbolic element has value >= 1. Small float values (Range bounds, Resize scales,
 * OneHot depth) are evaluated on demand through their defining nodes
 * (f64s_eval); a float -> integer Cast of them records sym_data.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dml_einsum.h"
#include "dml_ew.h"
#include "dml_ir_infer.h"
#include "dml_shape.h"
#include "dml_strcase.h"
#include "dml_tfidf.h"
#include "dml_wq.h"

#define INVALID DML_STATUS_INVALID_ARGUMENT
#define UNIMPL DML_STATUS_UNIMPLEMENTED
/* Most elements of a tensor whose contents inference tracks. */
#define MAX_ELEMS 64
#define TBUF 320

/* ==== context, errors, attributes ====================================== */

typedef struct ictx {
  dml_ir_module_t *m;
  dml_ir_node_t *n;
} ictx_t;

static const char *node_name(const dml_ir_node_t *n) {
  return n->name && *n->name ? n->name : "<unnamed>";
}
static const char *opn(const ictx_t *c) {
  return dml_op_name(c->n->op);
}

/* An error of `code` with the reason, then details naming the node, its op
 * and its input types. */
static dml_status_t fail(const ictx_t *c, dml_status_code_t code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static dml_status_t fail(const ictx_t *c, dml_status_code_t code, const char *fmt, ...) {
  char reason[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof(reason), fmt, ap);
  va_end(ap);
  dml_status_t s = dml_status_make(code, "shape-infer", "%s", reason);
  s = dml_status_detail(s, "node '%s' (%s)", node_name(c->n), opn(c));
  if (c->n->n_inputs) {
    char line[2048];
    size_t k = 0;
    line[0] = 0;
    for (uint32_t i = 0; i < c->n->n_inputs && k < sizeof(line); i++) {
      char tb[TBUF];
      const dml_ir_value_t *v = c->n->inputs[i];
      const char *ts = v ? dml_ir_type_str(c->m, &v->type, tb, sizeof(tb)) : "_";
      k += (size_t)snprintf(line + k, sizeof(line) - k, "%s%s", i ? ", " : "", ts);
    }
    s = dml_status_detail(s, "input types: %s", line);
  }
  return s;
}

static dml_status_t oom(const ictx_t *c) {
  return fail(c, DML_STATUS_RESOURCE_EXHAUSTED, "out of memory");
}

#define TS(t, buf) dml_ir_type_str(c->m, (t), (buf), sizeof(buf))

static dml_status_t attr_int(const ictx_t *c, const char *name, int64_t dflt,
                             int64_t *out) {
  const dml_attr_t *a = dml_ir_node_attr(c->n, name);
  if (!a) {
    *out = dflt;
    return DML_OK;
  }
  if (a->kind != DML_ATTR_INT)
    return fail(c, INVALID, "attribute '%s' must be an int, got %s", name,
                dml_attr_kind_name(a->kind));
  *out = a->i;
  return DML_OK;
}

/* INTS attribute; *out = NULL and *out_n = 0 when absent. */
static dml_status_t attr_ints(const ictx_t *c, const char *name, const int64_t **out,
                              size_t *out_n) {
  const dml_attr_t *a = dml_ir_node_attr(c->n, name);
  *out = NULL;
  *out_n = 0;
  if (!a) return DML_OK;
  if (a->kind != DML_ATTR_INTS)
    return fail(c, INVALID, "attribute '%s' must be a list of ints, got %s", name,
                dml_attr_kind_name(a->kind));
  if (a->n && !a->ints) return fail(c, INVALID, "attribute '%s' has no data", name);
  *out = a->ints;
  *out_n = a->n;
  return DML_OK;
}

static dml_status_t attr_string(const ictx_t *c, const char *name, const char *dflt,
                                const char **out) {
  const dml_attr_t *a = dml_ir_node_attr(c->n, name);
  if (!a) {
    *out = dflt;
    return DML_OK;
  }
  if (a->kind != DML_ATTR_STRING || !a->s)
    return fail(c, INVALID, "attribute '%s' must be a string, got %s", name,
                dml_attr_kind_name(a->kind));
  *out = a->s;
  return DML_OK;
}

/* Normalizes `axis` in [-rank, rank) to [0, rank). */
static dml_status_t norm_axis(const ictx_t *c, int64_t axis, int32_t rank,
                              const char *what, int32_t *out) {
  if (axis < -(int64_t)rank || axis >= (int64_t)rank)
    return fail(c, INVALID, "%s %lld is out of range for rank %d", what, (long long)axis,
                (int)rank);
  *out = (int32_t)(axis < 0 ? axis + rank : axis);
  return DML_OK;
}

/* ==== dims ============================================================== */

static dml_dim_t D(int64_t v) {
  dml_dim_t d = {v, -1};
  return d;
}
/* value * S[sym]; 0 * S is the static 0. */
static dml_dim_t DS(int64_t v, int32_t sym) {
  dml_dim_t d = {v, v == 0 ? -1 : sym};
  return d;
}
static int dim_eq(dml_dim_t a, dml_dim_t b) {
  if (a.sym < 0 || b.sym < 0) return a.sym < 0 && b.sym < 0 && a.value == b.value;
  return a.sym == b.sym && a.value == b.value;
}
static int dim_is(dml_dim_t a, int64_t v) {
  return a.sym < 0 && a.value == v;
}

static const char *dim_str(const ictx_t *c, dml_dim_t d, char *buf, size_t cap) {
  if (d.sym < 0) {
    snprintf(buf, cap, "%lld", (long long)d.value);
  } else {
    const char *sn = (uint32_t)d.sym < c->m->n_symbols ? c->m->symbols[d.sym].name : "?";
    if (d.value == 1)
      snprintf(buf, cap, "%s", sn);
    else
      snprintf(buf, cap, strpbrk(sn, "+-*/") ? "%lld*(%s)" : "%lld*%s",
               (long long)d.value, sn);
  }
  return buf;
}

/* Largest run-time extent of `d` (INT64_MAX on overflow). */
static int64_t dim_max(const ictx_t *c, dml_dim_t d) {
  if (d.sym < 0) return d.value;
  int64_t r;
  if (__builtin_mul_overflow(d.value, c->m->symbols[d.sym].bound, &r)) return INT64_MAX;
  return r;
}

/* Largest dim_max over the dims of `t` (at least 1). */
static int64_t max_dim_bound(const ictx_t *c, const dml_type_t *t) {
  int64_t m = 1;
  for (int32_t d = 0; d < t->rank; d++)
    if (dim_max(c, t->dims[d]) > m) m = dim_max(c, t->dims[d]);
  return m;
}

/* 1 when symbol i, or a source it derives from, has a promised minimum. */
static int sym_has_min(const dml_ir_module_t *m, int32_t i) {
  if (i < 0 || (uint32_t)i >= m->n_symbols) return 0;
  const dml_ir_symbol_t *s = &m->symbols[i];
  if (!(s->flags & DML_IR_SYMBOL_DERIVED)) return s->min > 0;
  return sym_has_min(m, s->src[0]) || sym_has_min(m, s->src[1]);
}

/* The extent floor((mul * x + add) / div) of dim x (dml_sym_derived_eval):
 * static for a static x, else value*symbol or a derived symbol
 * (dml_ir_module_derived_dim). `what` names the extent in errors:
 * INVALID_ARGUMENT when it is below 1 at the sizes promised for x's symbol
 * (--input-shape's minimum) or, for a static x, below 0; UNIMPLEMENTED when
 * no bounded dim expresses it (a data-dependent x, empty even at the bound,
 * overflow). */
static dml_status_t derived_extent(ictx_t *c, dml_dim_t x, int64_t mul, int64_t add,
                                   int64_t div, const char *what, dml_dim_t *out) {
  char db[128];
  int64_t v = 0;
  if (x.sym < 0) {
    if (!dml_sym_derived_eval(mul, add, div, x.value, 1, &v) || v < 0)
      return fail(c, INVALID, "%s of %lld is %s", what, (long long)x.value,
                  v < 0 ? "negative" : "out of range");
    *out = D(v);
    return DML_OK;
  }
  int ok = 0;
  if (__builtin_mul_overflow(mul, x.value, &mul))
    return fail(c, UNIMPL, "%s of %s overflows", what, dim_str(c, x, db, sizeof db));
  DML_RETURN_IF_ERROR(
      dml_ir_module_derived_dim(c->m, x.sym, -1, mul, add, div, out, &ok));
  if (!ok)
    return fail(c, UNIMPL,
                "%s of %s is not expressible as a bounded dim (empty even at %s's bound "
                "%lld, overflowing, or of a data-dependent dim)",
                what, dim_str(c, x, db, sizeof db), c->m->symbols[x.sym].name,
                (long long)c->m->symbols[x.sym].bound);
  if (out->sym >= 0 && sym_has_min(c->m, x.sym) && dml_ir_symbol_min(c->m, out->sym) < 1)
    return fail(c, INVALID,
                "%s of %s is empty (%s = %lld) at the smallest input sizes promised "
                "(--input-shape MIN)",
                what, dim_str(c, x, db, sizeof db), c->m->symbols[out->sym].name,
                (long long)dml_ir_symbol_min(c->m, out->sym));
  return DML_OK;
}

/* a + b; 0 when not representable or on overflow. */
static int dim_add(dml_dim_t a, dml_dim_t b, dml_dim_t *out) {
  int64_t v;
  if (a.sym < 0 && b.sym < 0) {
    if (__builtin_add_overflow(a.value, b.value, &v)) return 0;
    *out = D(v);
    return 1;
  }
  if (dim_is(a, 0)) return *out = b, 1;
  if (dim_is(b, 0)) return *out = a, 1;
  if (a.sym != b.sym || __builtin_add_overflow(a.value, b.value, &v)) return 0;
  *out = DS(v, a.sym);
  return 1;
}

/* a * b; 0 when both are symbolic or on overflow. */
static int dim_mul(dml_dim_t a, dml_dim_t b, dml_dim_t *out) {
  int64_t v;
  if (a.sym >= 0 && b.sym >= 0) {
    if (dim_is(a, 0) || dim_is(b, 0)) return *out = D(0), 1;
    return 0;
  }
  if (__builtin_mul_overflow(a.value, b.value, &v)) return 0;
  *out = DS(v, a.sym >= 0 ? a.sym : b.sym);
  return 1;
}

/* A product of dims: coeff * S[syms[0]] * S[syms[1]] * ... */
#define MONO_CAP 40
typedef struct mono {
  int64_t coeff;
  int n;
  int32_t syms[MONO_CAP];
} mono_t;

static void mono_init(mono_t *p) {
  p->coeff = 1;
  p->n = 0;
}
/* 0 on overflow. */
static int mono_mul(mono_t *p, dml_dim_t d) {
  if (__builtin_mul_overflow(p->coeff, d.value, &p->coeff)) return 0;
  if (d.sym >= 0 && d.value != 0) {
    if (p->n >= MONO_CAP) return 0;
    p->syms[p->n++] = d.sym;
  }
  return 1;
}
static int mono_of(const dml_type_t *t, int32_t from, int32_t to, mono_t *p) {
  mono_init(p);
  for (int32_t i = from; i < to; i++)
    if (!mono_mul(p, t->dims[i])) return 0;
  return 1;
}
/* 1 when the product is a single dim_t (static, or one symbol). */
static int mono_to_dim(const mono_t *p, dml_dim_t *out) {
  if (p->coeff == 0) return *out = D(0), 1;
  if (p->n == 0) return *out = D(p->coeff), 1;
  if (p->n == 1) return *out = DS(p->coeff, p->syms[0]), 1;
  return 0;
}
static void mono_sort(mono_t *p) {
  for (int i = 1; i < p->n; i++)
    for (int j = i; j > 0 && p->syms[j - 1] > p->syms[j]; j--) {
      int32_t t = p->syms[j];
      p->syms[j] = p->syms[j - 1];
      p->syms[j - 1] = t;
    }
}
static int mono_equal(mono_t a, mono_t b) {
  if (a.coeff == 0 || b.coeff == 0) return a.coeff == b.coeff;
  if (a.coeff != b.coeff || a.n != b.n) return 0;
  mono_sort(&a);
  mono_sort(&b);
  for (int i = 0; i < a.n; i++)
    if (a.syms[i] != b.syms[i]) return 0;
  return 1;
}
/* q = num / den, exactly and for every symbol value: each symbol of den
 * must appear in num and den's coefficient must divide num's. 0 if not. */
static int mono_div(const mono_t *num, const mono_t *den, mono_t *q) {
  if (den->coeff == 0) return 0;
  *q = *num;
  if (q->coeff % den->coeff != 0) return 0;
  q->coeff /= den->coeff;
  for (int i = 0; i < den->n; i++) {
    int k = -1;
    for (int j = 0; j < q->n && k < 0; j++)
      if (q->syms[j] == den->syms[i]) k = j;
    if (k < 0) return 0;
    q->syms[k] = q->syms[--q->n];
  }
  return 1;
}

/* 1 when symbol `i` is a pure product S[a]*S[b] (a derived symbol). */
static int sym_is_product(const dml_ir_module_t *m, int32_t i) {
  const dml_ir_symbol_t *s = &m->symbols[i];
  return (s->flags & DML_IR_SYMBOL_DERIVED) && s->src[1] >= 0 && s->mul == 1 &&
         s->add == 0 && s->div == 1;
}
/* Replaces every product symbol of p by its factors (so products compare
 * and divide factor by factor); 0 when that overflows MONO_CAP. */
static int mono_expand(const dml_ir_module_t *m, mono_t *p) {
  for (int i = 0; i < p->n;) {
    if (!sym_is_product(m, p->syms[i])) {
      i++;
      continue;
    }
    if (p->n >= MONO_CAP) return 0;
    const dml_ir_symbol_t *s = &m->symbols[p->syms[i]];
    p->syms[i] = s->src[0];
    p->syms[p->n++] = s->src[1];
  }
  return 1;
}
/* mono_to_dim, also for a product of several symbols: coeff * P with P the
 * derived product symbol of the factors in index order ("H*W"). *ok = 0
 * when no bounded dim expresses it. */
static dml_status_t mono_to_dim_c(ictx_t *c, const mono_t *p0, dml_dim_t *out, int *ok) {
  mono_t p = *p0;
  *ok = 1;
  if (mono_to_dim(&p, out)) return DML_OK;
  *ok = 0;
  if (!mono_expand(c->m, &p)) return DML_OK;
  mono_sort(&p);
  dml_dim_t acc = DS(1, p.syms[0]);
  for (int i = 1; i < p.n; i++) {
    DML_RETURN_IF_ERROR(
        dml_ir_module_derived_dim(c->m, acc.sym, p.syms[i], acc.value, 0, 1, &acc, ok));
    if (!*ok) return DML_OK;
  }
  if (__builtin_mul_overflow(acc.value, p.coeff, &acc.value)) return *ok = 0, DML_OK;
  *out = acc;
  return DML_OK;
}

/* ==== types, inputs, outputs =========================================== */

static dml_type_t mk(dml_dtype_t dt, int32_t rank) {
  dml_type_t t;
  memset(&t, 0, sizeof(t));
  t.dtype = dt;
  t.rank = rank;
  for (int i = 0; i < DML_MAX_RANK; i++) t.dims[i] = D(0);
  return t;
}

static dml_ir_value_t *in_v(const ictx_t *c, uint32_t i) {
  return i < c->n->n_inputs ? c->n->inputs[i] : NULL;
}
static const dml_type_t *in_t(const ictx_t *c, uint32_t i) {
  dml_ir_value_t *v = in_v(c, i);
  return v ? &v->type : NULL;
}
static void set_out(ictx_t *c, uint32_t i, const dml_type_t *t) {
  if (i < c->n->n_outputs) c->n->outputs[i]->type = *t;
}
static dml_status_t need_rank(const ictx_t *c, uint32_t i, int32_t lo, int32_t hi) {
  const dml_type_t *t = in_t(c, i);
  if (!t) return fail(c, INVALID, "input %u is required", i);
  if (t->rank < lo || t->rank > hi) {
    char tb[TBUF];
    if (lo == hi)
      return fail(c, INVALID, "input %u must have rank %d, got %s", i, (int)lo,
                  TS(t, tb));
    if (hi >= DML_MAX_RANK)
      return fail(c, INVALID, "input %u must have rank >= %d, got %s", i, (int)lo,
                  TS(t, tb));
    return fail(c, INVALID, "input %u must have rank %d..%d, got %s", i, (int)lo, (int)hi,
                TS(t, tb));
  }
  return DML_OK;
}

/* dtype classes */
enum { DT_ANY, DT_FLOAT, DT_NUMERIC, DT_BOOL, DT_INDEX, DT_SIGNED_OR_FLOAT };
static int dtype_in_class(int cls, dml_dtype_t dt) {
  switch (cls) {
    case DT_FLOAT: return dml_dtype_is_float(dt);
    case DT_NUMERIC: return dml_dtype_is_float(dt) || dml_dtype_is_int(dt);
    case DT_BOOL: return dt == DML_DTYPE_BOOL;
    case DT_INDEX: return dt == DML_DTYPE_I32 || dt == DML_DTYPE_I64;
    case DT_SIGNED_OR_FLOAT: return dml_dtype_is_float(dt) || dml_dtype_is_signed_int(dt);
    default: return 1;
  }
}
static const char *dtype_class_name(int cls) {
  switch (cls) {
    case DT_FLOAT: return "a float dtype";
    case DT_NUMERIC: return "a numeric dtype";
    case DT_BOOL: return "bool";
    case DT_INDEX: return "i32 or i64";
    case DT_SIGNED_OR_FLOAT: return "a signed or float dtype";
    default: return "any dtype";
  }
}
/* Input i (when present) has a dtype of class `cls`. */
static dml_status_t need_dtype(const ictx_t *c, uint32_t i, int cls) {
  const dml_type_t *t = in_t(c, i);
  if (t && !dtype_in_class(cls, t->dtype))
    return fail(c, INVALID, "input %u must have %s, got %s", i, dtype_class_name(cls),
                dml_dtype_name(t->dtype));
  return DML_OK;
}
/* Inputs i and j (when present) have the same dtype. */
static dml_status_t same_dtype(const ictx_t *c, uint32_t i, uint32_t j) {
  const dml_type_t *a = in_t(c, i), *b = in_t(c, j);
  if (a && b && a->dtype != b->dtype)
    return fail(c, INVALID, "inputs %u and %u must have the same dtype, got %s and %s", i,
                j, dml_dtype_name(a->dtype), dml_dtype_name(b->dtype));
  return DML_OK;
}

/* Numpy multidirectional broadcasting of a and b into *out (dtype of a).
 * A symbolic dim broadcasts only against an equal dim or static 1. */
static dml_status_t bcast(const ictx_t *c, const dml_type_t *a, const dml_type_t *b,
                          dml_type_t *out) {
  int32_t r = a->rank > b->rank ? a->rank : b->rank;
  dml_type_t o = mk(a->dtype, r);
  for (int32_t i = 0; i < r; i++) {
    int32_t ia = i - (r - a->rank), ib = i - (r - b->rank);
    dml_dim_t da = ia >= 0 ? a->dims[ia] : D(1);
    dml_dim_t db = ib >= 0 ? b->dims[ib] : D(1);
    int64_t v = 0;
    int ok = 1;
    if (da.sym < 0 && db.sym < 0) { /* static: dml_shape.h's rule, as the CPU's */
      ok = dml_shape_broadcast_extent(da.value, db.value, &v) == DML_SHAPE_OK;
      o.dims[i] = D(v);
    } else if (dim_eq(da, db) || dim_is(db, 1)) {
      o.dims[i] = da;
    } else if (dim_is(da, 1)) {
      o.dims[i] = db;
    } else {
      ok = 0;
    }
    if (!ok) {
      char ta[TBUF], tb[TBUF], sa[64], sb[64];
      return fail(c, INVALID, "cannot broadcast %s and %s: dim %d is %s vs %s%s",
                  TS(a, ta), TS(b, tb), (int)i, dim_str(c, da, sa, sizeof(sa)),
                  dim_str(c, db, sb, sizeof(sb)),
                  da.sym >= 0 || db.sym >= 0
                      ? " (a symbolic dim broadcasts only with an equal dim or 1; two "
                        "sizes derived from one input size may agree only for multiples "
                        "of a step: dmlc compile --input-shape x=..x[MIN:MAX:STEP])"
                      : "");
    }
  }
  *out = o;
  return DML_OK;
}

/* ==== known contents of small integer tensors ========================== */

typedef struct elems {
  uint32_t n;
  dml_dim_t e[MAX_ELEMS];
} elems_t;

/* Elements of `v` from its recorded sym_data or its constant integer data.
 * 1 known, 0 unknown, -1 known but larger than MAX_ELEMS. */
static int elems_of(const ictx_t *c, const dml_ir_value_t *v, elems_t *out) {
  if (!v) return 0;
  if (v->sym_data) {
    if (v->sym_data->n > MAX_ELEMS) return -1;
    out->n = v->sym_data->n;
    for (uint32_t i = 0; i < out->n; i++) out->e[i] = v->sym_data->elems[i];
    return 1;
  }
  if (v->kind != DML_IR_VALUE_GLOBAL || !v->data || !dml_type_is_static(&v->type))
    return 0;
  if (!dml_dtype_is_int(v->type.dtype) && v->type.dtype != DML_DTYPE_BOOL) return 0;
  int64_t numel = dml_ir_type_numel_bound(c->m, &v->type);
  if (numel < 0) return 0;
  if (numel > MAX_ELEMS) return -1;
  if ((uint64_t)numel * dml_dtype_size(v->type.dtype) > v->data_bytes) return 0;
  out->n = (uint32_t)numel;
  for (uint32_t i = 0; i < out->n; i++)
    out->e[i] = D(dml_load_i64(v->type.dtype, v->data, i));
  return 1;
}

/* Elements of shape-carrying input `i` (`what` names it in messages), all
 * required static unless `allow_sym`. Errors: UNIMPLEMENTED when unknown
 * (the output shape depends on run-time data), INVALID_ARGUMENT when the
 * input is not a small integer tensor. */
static dml_status_t need_elems(const ictx_t *c, uint32_t i, const char *what,
                               int allow_sym, elems_t *out) {
  const dml_ir_value_t *v = in_v(c, i);
  if (!v) return fail(c, INVALID, "input %u (%s) is required", i, what);
  if (!dml_dtype_is_int(v->type.dtype))
    return fail(c, INVALID, "%s (input %u) must be an integer tensor, got %s", what, i,
                dml_dtype_name(v->type.dtype));
  if (v->type.rank > 1)
    return fail(c, INVALID, "%s (input %u) must be 0-D or 1-D, has rank %d", what, i,
                (int)v->type.rank);
  int k = elems_of(c, v, out);
  if (k < 0)
    return fail(c, INVALID, "%s (input %u) has more than %d elements", what, i,
                MAX_ELEMS);
  if (k == 0)
    return fail(c, UNIMPL,
                "output shape of %s '%s' depends on run-time data: %s (input %u) is "
                "neither a constant nor derived from shapes",
                opn(c), node_name(c->n), what, i);
  if (!allow_sym)
    for (uint32_t j = 0; j < out->n; j++)
      if (out->e[j].sym >= 0) {
        char sb[64];
        return fail(c, UNIMPL,
                    "%s (input %u) element %u is symbolic (%s); it must be static", what,
                    i, j, dim_str(c, out->e[j], sb, sizeof(sb)));
      }
  return DML_OK;
}

/* ==== value-dependent shapes: shape inputs computed at run time ========= */

static dml_status_t dd_symbol(ictx_t *c, const char *what, int64_t bound, dml_dim_t *out);

/* 1 when integer shape input `i` is present, 0-D or 1-D, and its values are
 * not known at compile time: the output dims it decides become
 * data-dependent symbols (dml_ir.h) that the kernel sets at run time. */
static int elems_runtime(const ictx_t *c, uint32_t i) {
  const dml_ir_value_t *v = in_v(c, i);
  if (!v || !dml_dtype_is_int(v->type.dtype) || v->type.rank > 1) return 0;
  elems_t e;
  return elems_of(c, v, &e) == 0;
}

/* Element count of shape input `i` (`what` in messages), which fixes the
 * output rank: it must be static. */
static dml_status_t runtime_len(const ictx_t *c, uint32_t i, const char *what,
                                uint32_t *out) {
  const dml_type_t *t = in_t(c, i);
  if (t->rank == 0) {
    *out = 1;
    return DML_OK;
  }
  if (t->dims[0].sym >= 0 || t->dims[0].value > MAX_ELEMS)
    return fail(c, UNIMPL,
                "the output rank of %s '%s' depends on run-time data: the length of %s "
                "(input %u) is not a static value <= %d",
                opn(c), node_name(c->n), what, i, MAX_ELEMS);
  *out = (uint32_t)t->dims[0].value;
  return DML_OK;
}

/* The bound of a data-dependent dim that no input shape bounds. */
static int64_t dyn_bound(const ictx_t *c) {
  return c->m->dynamic_dim_bound > 0 ? c->m->dynamic_dim_bound
                                     : DML_IR_DYNAMIC_DIM_BOUND_DEFAULT;
}

/* a + b and a * b saturated at 2^40 (bounds only). */
#define DYN_SAT (INT64_C(1) << 40)
static int64_t sat_add(int64_t a, int64_t b) {
  return a >= DYN_SAT || b >= DYN_SAT || a + b >= DYN_SAT ? DYN_SAT : a + b;
}
static int64_t sat_mul(int64_t a, int64_t b) {
  if (a <= 0 || b <= 0) return 0;
  return a > DYN_SAT / b ? DYN_SAT : a * b;
}

/* Sets output `o` to `t`, each dim flagged in dyn[] replaced by a fresh
 * data-dependent symbol "<node>.d<k>" (output 0) or "<node>.o<o>.d<k>"
 * with upper bound bounds[k] (at least 1). */
static dml_status_t set_out_dyn(ictx_t *c, uint32_t o, dml_type_t t, const int *dyn,
                                const int64_t *bounds) {
  for (int32_t d = 0; d < t.rank; d++) {
    if (!dyn[d]) continue;
    char what[32];
    if (o)
      snprintf(what, sizeof what, "o%u.d%d", o, (int)d);
    else
      snprintf(what, sizeof what, "d%d", (int)d);
    DML_RETURN_IF_ERROR(dd_symbol(c, what, bounds[d] < 1 ? 1 : bounds[d], &t.dims[d]));
  }
  set_out(c, o, &t);
  return DML_OK;
}

/* Output `o` of rank `rank` and dtype `dt`, every dim data-dependent with
 * bound `bound`. */
static dml_status_t set_out_all_dyn(ictx_t *c, uint32_t o, dml_dtype_t dt, int32_t rank,
                                    int64_t bound) {
  int dyn[DML_MAX_RANK];
  int64_t b[DML_MAX_RANK];
  if (rank < 0 || rank > DML_MAX_RANK)
    return fail(c, INVALID, "output rank %d exceeds %d", (int)rank, DML_MAX_RANK);
  for (int32_t d = 0; d < rank; d++) dyn[d] = 1, b[d] = bound;
  return set_out_dyn(c, o, mk(dt, rank), dyn, b);
}

/* `x` rounded to dtype `dt` as a kernel writing it would store it (floats
 * to ints truncate toward zero). 0 when an integer dtype cannot hold it. */
static int round_to_dtype(dml_dtype_t dt, double x, double *out) {
  unsigned char buf[16];
  if (!dml_dtype_is_float(dt) && !(x > -9.0e18 && x < 9.0e18)) return 0;
  dml_store_f64(dt, buf, 0, x);
  *out = dml_load_f64(dt, buf, 0);
  return 1;
}

/* Elements of `v` when all are known at compile time, as doubles: constant
 * globals, static recorded contents (sym_data), and values computed from
 * those through the defining nodes: Cast, Identity, Reshape, Flatten,
 * Squeeze, Unsqueeze, Neg, Abs, Floor, Ceil, Round, Sqrt, Reciprocal, Add,
 * Sub, Mul, Div, Max, Min, Relu and 1-D Concat of float tensors, each result
 * rounded to the node's output dtype. Exporters compute Resize scales,
 * Range bounds and window lengths that way (Cast(n) - 1, Shape * 2.0).
 * Integer values come from elems_of only, which tracks integer arithmetic.
 * *budget bounds the nodes visited. 1 known, 0 unknown, -1 more than cap. */
static int f64s_eval(const ictx_t *c, const dml_ir_value_t *v, double *out, uint32_t cap,
                     uint32_t *out_n, int *budget) {
  if (!v || --*budget < 0) return 0;
  if (!dml_type_is_static(&v->type)) return 0;
  int64_t numel = dml_ir_type_numel_bound(c->m, &v->type);
  if (numel < 0) return 0;
  if (numel > (int64_t)cap) return -1;
  if (v->sym_data) {
    if (v->sym_data->n != (uint32_t)numel) return 0;
    for (uint32_t k = 0; k < v->sym_data->n; k++) {
      if (v->sym_data->elems[k].sym >= 0) return 0;
      out[k] = (double)v->sym_data->elems[k].value;
    }
    *out_n = v->sym_data->n;
    return 1;
  }
  if (v->kind == DML_IR_VALUE_GLOBAL) {
    if (!v->data || (uint64_t)numel * dml_dtype_size(v->type.dtype) > v->data_bytes)
      return 0;
    for (int64_t k = 0; k < numel; k++)
      out[k] = dml_load_f64(v->type.dtype, v->data, (size_t)k);
    *out_n = (uint32_t)numel;
    return 1;
  }
  const dml_ir_node_t *d = v->def;
  dml_dtype_t dt = v->type.dtype;
  if (v->kind != DML_IR_VALUE_RESULT || !d || v->def_index != 0 || d->n_inputs < 1 ||
      !dml_dtype_is_float(dt))
    return 0;
  double a[MAX_ELEMS], b[MAX_ELEMS];
  uint32_t na = 0, nb = 0;
  switch (d->op) {
    case DML_OP_CAST:
    case DML_OP_IDENTITY:
    case DML_OP_RESHAPE:
    case DML_OP_FLATTEN:
    case DML_OP_SQUEEZE:
    case DML_OP_UNSQUEEZE:
    case DML_OP_NEG:
    case DML_OP_ABS:
    case DML_OP_FLOOR:
    case DML_OP_CEIL:
    case DML_OP_ROUND:
    case DML_OP_RELU:
    case DML_OP_SQRT:
    case DML_OP_RECIPROCAL: {
      if (f64s_eval(c, d->inputs[0], a, MAX_ELEMS, &na, budget) != 1 ||
          na != (uint32_t)numel)
        return 0;
      for (uint32_t k = 0; k < na; k++) {
        /* the formula table's (ew_ops.def) but the views and Cast */
        double x = dml_ewn_has(d->op) ? dml_ew_f64(d->op, NULL, a[k], 0) : a[k];
        if (!round_to_dtype(dt, x, &out[k])) return 0;
      }
      *out_n = na;
      return 1;
    }
    case DML_OP_ADD:
    case DML_OP_SUB:
    case DML_OP_MUL:
    case DML_OP_DIV:
    case DML_OP_MAX:
    case DML_OP_MIN: {
      if (d->n_inputs != 2 ||
          f64s_eval(c, d->inputs[0], a, MAX_ELEMS, &na, budget) != 1 ||
          f64s_eval(c, d->inputs[1], b, MAX_ELEMS, &nb, budget) != 1)
        return 0;
      /* Without replication only: equal counts or a single element. */
      uint32_t n = na > nb ? na : nb;
      if ((na != nb && na != 1 && nb != 1) || n != (uint32_t)numel) return 0;
      for (uint32_t k = 0; k < n; k++) {
        /* the formula table's (ew_ops.def) */
        double r = dml_ew_f64(d->op, NULL, a[na == 1 ? 0 : k], b[nb == 1 ? 0 : k]);
        if (!round_to_dtype(dt, r, &out[k])) return 0;
      }
      *out_n = n;
      return 1;
    }
    case DML_OP_CONCAT: {
      if (v->type.rank != 1) return 0;
      uint32_t n = 0;
      for (uint32_t i = 0; i < d->n_inputs; i++) {
        if (f64s_eval(c, d->inputs[i], a, MAX_ELEMS, &na, budget) != 1 ||
            n + na > (uint32_t)numel)
          return 0;
        for (uint32_t k = 0; k < na; k++) out[n++] = a[k];
      }
      if (n != (uint32_t)numel) return 0;
      *out_n = n;
      return 1;
    }
    default: return 0;
  }
}

/* Elements of input `i` known at compile time, as doubles (f64s_eval):
 * 1 known, 0 unknown, -1 too many. */
static int f64s_of(const ictx_t *c, uint32_t i, double *out, uint32_t cap,
                   uint32_t *out_n) {
  int budget = 64;
  return f64s_eval(c, in_v(c, i), out, cap, out_n, &budget);
}

/* Records known elements on output `o` when it is a small integer (or bool:
 * static 0/1) tensor of static size n. */
static dml_status_t set_sym(ictx_t *c, uint32_t o, const dml_dim_t *e, uint32_t n) {
  if (o >= c->n->n_outputs) return DML_OK;
  dml_ir_value_t *v = c->n->outputs[o];
  if ((!dml_dtype_is_int(v->type.dtype) && v->type.dtype != DML_DTYPE_BOOL) ||
      n > MAX_ELEMS)
    return DML_OK;
  if (!dml_type_is_static(&v->type) ||
      dml_ir_type_numel_bound(c->m, &v->type) != (int64_t)n)
    return DML_OK;
  for (uint32_t i = 0; i < n; i++)
    if (e[i].sym >= 0 && e[i].value < 1) return DML_OK;
  dml_ir_sym_data_t *sd = (dml_ir_sym_data_t *)dml_ir_alloc(c->m, sizeof(*sd));
  dml_dim_t *arr = (dml_dim_t *)dml_ir_alloc(c->m, sizeof(dml_dim_t) * (n ? n : 1));
  if (!sd || !arr) return oom(c);
  memcpy(arr, e, sizeof(dml_dim_t) * n);
  sd->n = n;
  sd->elems = arr;
  v->sym_data = sd;
  return DML_OK;
}

/* Elements of a small integer tensor, some perhaps computed at run time:
 * unk[i] = 1 when element i is (e[i] is then unset), 2 when it is the
 * difference e[i] - m[i] of two known dims that no one dim expresses
 * (32*((H+31)/32) - H: the pad of an image to a multiple of 32), which only
 * Pad's extent dim + (e - m) with m = dim resolves. */
typedef struct pelems {
  uint32_t n;
  dml_dim_t e[MAX_ELEMS];
  uint8_t unk[MAX_ELEMS]; /* 0 known, 1 unknown, 2 the difference e[i] - m[i] */
  dml_dim_t m[MAX_ELEMS];
} pelems_t;

/* Elements of `v`, all known (elems_of), partly known (sym_partial), or
 * none known but of a static count <= MAX_ELEMS (every one unknown). 0 when
 * not even the count is known. */
static int pelems_of(const ictx_t *c, const dml_ir_value_t *v, pelems_t *out) {
  elems_t e;
  if (!v) return 0;
  int k = elems_of(c, v, &e);
  if (k < 0) return 0;
  if (k == 1) {
    out->n = e.n;
    memcpy(out->e, e.e, sizeof(dml_dim_t) * e.n);
    memset(out->unk, 0, e.n);
    return 1;
  }
  const dml_ir_sym_data_t *p = v->sym_partial;
  if (p && p->unknown && p->n <= MAX_ELEMS) {
    out->n = p->n;
    for (uint32_t i = 0; i < p->n; i++) {
      out->unk[i] = p->unknown[i] == 2 && p->minus ? 2 : p->unknown[i] != 0;
      out->e[i] = out->unk[i] == 1 ? D(0) : p->elems[i];
      out->m[i] = out->unk[i] == 2 ? p->minus[i] : D(0);
    }
    return 1;
  }
  if ((!dml_dtype_is_int(v->type.dtype) && v->type.dtype != DML_DTYPE_BOOL) ||
      !dml_type_is_static(&v->type))
    return 0;
  int64_t n = dml_ir_type_numel_bound(c->m, &v->type);
  if (n < 0 || n > MAX_ELEMS) return 0;
  out->n = (uint32_t)n;
  for (uint32_t i = 0; i < out->n; i++) out->e[i] = out->m[i] = D(0), out->unk[i] = 1;
  return 1;
}

/* Records elements `p` on output `o`: sym_data when all are known,
 * sym_partial when some are (nothing when none is). Same conditions as
 * set_sym. */
static dml_status_t set_psym(ictx_t *c, uint32_t o, const pelems_t *p) {
  uint32_t n_unk = 0, n_diff = 0;
  for (uint32_t i = 0; i < p->n; i++) n_unk += p->unk[i] == 1, n_diff += p->unk[i] == 2;
  if (n_unk == 0 && n_diff == 0) return set_sym(c, o, p->e, p->n);
  if (n_unk == p->n || o >= c->n->n_outputs) return DML_OK;
  dml_ir_value_t *v = c->n->outputs[o];
  if ((!dml_dtype_is_int(v->type.dtype) && v->type.dtype != DML_DTYPE_BOOL) ||
      !dml_type_is_static(&v->type) ||
      dml_ir_type_numel_bound(c->m, &v->type) != (int64_t)p->n)
    return DML_OK;
  for (uint32_t i = 0; i < p->n; i++)
    if (p->unk[i] != 1 && ((p->e[i].sym >= 0 && p->e[i].value < 1) ||
                           (p->unk[i] == 2 && p->m[i].sym >= 0 && p->m[i].value < 1)))
      return DML_OK;
  dml_ir_sym_data_t *sd = (dml_ir_sym_data_t *)dml_ir_alloc(c->m, sizeof(*sd));
  dml_dim_t *arr = (dml_dim_t *)dml_ir_alloc(c->m, sizeof(dml_dim_t) * p->n);
  uint8_t *unk = (uint8_t *)dml_ir_alloc(c->m, p->n);
  dml_dim_t *minus =
      n_diff ? (dml_dim_t *)dml_ir_alloc(c->m, sizeof(dml_dim_t) * p->n) : NULL;
  if (!sd || !arr || !unk || (n_diff && !minus)) return oom(c);
  memcpy(arr, p->e, sizeof(dml_dim_t) * p->n);
  memcpy(unk, p->unk, p->n);
  if (minus) memcpy(minus, p->m, sizeof(dml_dim_t) * p->n);
  sd->n = p->n;
  sd->elems = arr;
  sd->unknown = unk;
  sd->minus = minus;
  v->sym_partial = sd;
  return DML_OK;
}

/* Passes the known (or partly known) elements of input `i` through to
 * output 0 (same order). */
static dml_status_t pass_sym(ictx_t *c, uint32_t i) {
  pelems_t p;
  if (!pelems_of(c, in_v(c, i), &p)) return DML_OK;
  return set_psym(c, 0, &p);
}

/* Reads a list attribute of exactly `n` ints (default `dflt` each when
 * absent), each >= lo. */
static dml_status_t attr_ints_n(const ictx_t *c, const char *name, int32_t n,
                                int64_t dflt, int64_t lo, int64_t *out) {
  const int64_t *v;
  size_t k;
  DML_RETURN_IF_ERROR(attr_ints(c, name, &v, &k));
  if (!v) {
    for (int32_t i = 0; i < n; i++) out[i] = dflt;
    return DML_OK;
  }
  if (k != (size_t)n)
    return fail(c, INVALID, "attribute '%s' must have %d values, got %zu", name, (int)n,
                k);
  for (int32_t i = 0; i < n; i++) {
    if (v[i] < lo)
      return fail(c, INVALID, "attribute '%s'[%d] = %lld must be >= %lld", name, (int)i,
                  (long long)v[i], (long long)lo);
    out[i] = v[i];
  }
  return DML_OK;
}

/* ==== elementwise ======================================================= */

static dml_status_t infer_unary(ictx_t *c, int cls) {
  DML_RETURN_IF_ERROR(need_dtype(c, 0, cls));
  set_out(c, 0, in_t(c, 0));
  /* Neg and Abs of known integer contents (Neg(axis) in LayerNormalization's
   * expansion): -S is not a dim, |k*S| is k*S. */
  dml_op_t op = c->n->op;
  elems_t e;
  if ((op == DML_OP_NEG || op == DML_OP_ABS) && dml_dtype_is_int(in_t(c, 0)->dtype) &&
      elems_of(c, in_v(c, 0), &e) == 1) {
    for (uint32_t i = 0; i < e.n; i++) {
      if (e.e[i].sym >= 0) {
        if (op == DML_OP_NEG) return DML_OK;
        continue;
      }
      if (e.e[i].value == INT64_MIN) return DML_OK;
      if (op == DML_OP_NEG || e.e[i].value < 0) e.e[i].value = -e.e[i].value;
    }
    return set_sym(c, 0, e.e, e.n);
  }
  return DML_OK;
}

static dml_status_t infer_not(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_BOOL));
  set_out(c, 0, in_t(c, 0));
  /* Not of a known condition (Attention's expansion: Not(Equal(heads, kv
   * heads)) decides a repeat count). */
  elems_t e;
  if (elems_of(c, in_v(c, 0), &e) == 1) {
    for (uint32_t i = 0; i < e.n; i++) {
      if (e.e[i].sym >= 0) return DML_OK;
      e.e[i] = D(e.e[i].value == 0);
    }
    return set_sym(c, 0, e.e, e.n);
  }
  return DML_OK;
}

static dml_status_t infer_identity(ictx_t *c) {
  set_out(c, 0, in_t(c, 0));
  return pass_sym(c, 0);
}

/* ONNX TensorProto.DataType code -> dml dtype (INVALID when unsupported). */
static dml_dtype_t onnx_dtype(int64_t code) {
  return dml_dtype_from_onnx_code(code);
}

/* A dtype attribute holding an ONNX code (or a dml dtype name as a string). */
static dml_status_t attr_dtype(const ictx_t *c, const char *name, int required,
                               dml_dtype_t dflt, dml_dtype_t *out) {
  const dml_attr_t *a = dml_ir_node_attr(c->n, name);
  if (!a) {
    if (required) return fail(c, INVALID, "attribute '%s' is required", name);
    *out = dflt;
    return DML_OK;
  }
  dml_dtype_t dt = DML_DTYPE_INVALID;
  if (a->kind == DML_ATTR_INT) {
    dt = onnx_dtype(a->i);
    if (dt == DML_DTYPE_INVALID)
      return fail(c, UNIMPL, "attribute '%s' = %lld is not a supported ONNX dtype code",
                  name, (long long)a->i);
    /* STRING (8) only where the op makes strings (Cast; ops.def DML_OPF_STRINGS) */
    const dml_op_info_t *info = dml_op_info(c->n->op);
    if (dt == DML_DTYPE_STRING && !(info && (info->flags & DML_OPF_STRINGS)))
      return fail(c, UNIMPL,
                  "attribute '%s' = %lld is not a supported ONNX dtype code for %s "
                  "(string tensors: Cast and the string ops only)",
                  name, (long long)a->i, dml_op_name(c->n->op));
  } else if (a->kind == DML_ATTR_STRING && a->s) {
    dt = dml_dtype_from_name(a->s, strlen(a->s));
    if (dt == DML_DTYPE_INVALID)
      return fail(c, INVALID, "attribute '%s' = \"%s\" is not a dtype", name, a->s);
  } else {
    return fail(c, INVALID, "attribute '%s' must be an int (ONNX dtype code), got %s",
                name, dml_attr_kind_name(a->kind));
  }
  *out = dt;
  return DML_OK;
}

/* Known element `d` as k * S[*base] + off (k >= 0; *base = -1 and k = 0
 * for a static element), unfolding affine derived symbols (one source,
 * div 1: "H+1", "2*H-3") to their source, so that sizes the exporters
 * compute from one symbol (Shape -> Sub/Add/Mul) meet again. 0 on
 * overflow. */
static int elem_affine(const dml_ir_module_t *m, dml_dim_t d, int32_t *base, int64_t *k,
                       int64_t *off) {
  *base = -1, *k = 0, *off = 0;
  if (d.sym < 0) return *off = d.value, 1;
  if (d.value < 0) return 0;
  int64_t kk = d.value, oo = 0;
  int32_t s = d.sym;
  while ((m->symbols[s].flags & DML_IR_SYMBOL_DERIVED) && m->symbols[s].src[1] < 0 &&
         m->symbols[s].div == 1) {
    const dml_ir_symbol_t *y = &m->symbols[s];
    int64_t t;
    if (__builtin_mul_overflow(kk, y->add, &t) || __builtin_add_overflow(oo, t, &oo) ||
        __builtin_mul_overflow(kk, y->mul, &kk))
      return 0;
    s = y->src[0];
  }
  *base = s, *k = kk, *off = oo;
  return 1;
}

/* An element of a float tensor computed from shape elements:
 * (k * S[base] + off) / q exactly (q >= 1; base -1 and k 0: the static
 * off / q). torchvision pads images to a multiple of 32 with
 * Cast(ceil(Cast(H, float) / 32) * 32, int64). */
typedef struct symf {
  int32_t base;
  int64_t k, off, q;
} symf_t;

/* Largest |value| a float dtype holds every integer up to. */
static int64_t float_exact_int(dml_dtype_t dt) {
  switch (dt) {
    case DML_DTYPE_F64: return INT64_C(1) << 53;
    case DML_DTYPE_F32: return INT64_C(1) << 24;
    default: return INT64_C(1) << 11; /* f16; bf16 and smaller are refused below */
  }
}

/* The numerator k*S+off of `f` as a dim: static, value*symbol or derived
 * (dml_ir_module_derived_dim), floor-divided by div. *ok = 0 when not
 * expressible. */
static dml_status_t symf_dim(ictx_t *c, const symf_t *f, int64_t add, int64_t div,
                             dml_dim_t *out, int *ok) {
  *ok = 0;
  int64_t a;
  if (__builtin_add_overflow(f->off, add, &a)) return DML_OK;
  if (f->base < 0) {
    int64_t v = 0;
    if (!dml_sym_derived_eval(0, a, div, 1, 1, &v)) return DML_OK;
    *out = D(v);
    *ok = 1;
    return DML_OK;
  }
  return dml_ir_module_derived_dim(c->m, f->base, -1, f->k, a, div, out, ok);
}

/* Elements of float value `v` as symf_t (at most cap), through the
 * defining nodes: Cast of known integer elements, Identity, Reshape,
 * Flatten, Squeeze, Unsqueeze, Concat, a ReduceMax/Min/Sum/Mean of one
 * element (torch.max(torch.stack([h]))), Add/Sub/Mul/Div by static values
 * keeping the form exact, and Floor/Ceil (derived symbols). The values must
 * stay integers the dtype holds exactly (below 2^24 for f32) at the
 * symbols' bounds, so the kernels compute them as written. *ok = 0 when
 * unknown; *budget bounds the nodes visited. */
static dml_status_t symf_eval(ictx_t *c, const dml_ir_value_t *v, symf_t *out,
                              uint32_t cap, uint32_t *out_n, int *ok, int *budget) {
  *ok = 0;
  if (!v || --*budget < 0 || !dml_dtype_is_float(v->type.dtype) ||
      dml_dtype_size(v->type.dtype) < 2 || v->type.dtype == DML_DTYPE_BF16 ||
      !dml_type_is_static(&v->type))
    return DML_OK;
  int64_t numel = dml_ir_type_numel_bound(c->m, &v->type);
  if (numel < 1 || numel > (int64_t)cap) return DML_OK;
  double f[MAX_ELEMS];
  uint32_t nf = 0;
  int fb = 16;
  if (f64s_eval(c, v, f, MAX_ELEMS, &nf, &fb) == 1) { /* all static */
    for (uint32_t i = 0; i < nf; i++) {
      if (!(fabs(f[i]) < 9.0e15) || f[i] != floor(f[i])) return DML_OK;
      out[i].base = -1, out[i].k = 0, out[i].off = (int64_t)f[i], out[i].q = 1;
    }
    *out_n = nf;
    *ok = 1;
    return DML_OK;
  }
  const dml_ir_node_t *d = v->def;
  if (v->kind != DML_IR_VALUE_RESULT || !d || v->def_index != 0 || d->n_inputs < 1)
    return DML_OK;
  symf_t a[MAX_ELEMS];
  uint32_t na = 0;
  int aok = 0;
  switch (d->op) {
    case DML_OP_CAST: {
      const dml_ir_value_t *x = d->inputs[0];
      if (x && dml_dtype_is_int(x->type.dtype)) {
        elems_t e;
        if (elems_of(c, x, &e) != 1 || e.n != (uint32_t)numel) return DML_OK;
        for (uint32_t i = 0; i < e.n; i++) {
          out[i].q = 1;
          if (!elem_affine(c->m, e.e[i], &out[i].base, &out[i].k, &out[i].off))
            return DML_OK;
        }
        *out_n = e.n;
        break;
      }
    }
      /* fall through */
    case DML_OP_IDENTITY:
    case DML_OP_RESHAPE:
    case DML_OP_FLATTEN:
    case DML_OP_SQUEEZE:
    case DML_OP_UNSQUEEZE:
    case DML_OP_REDUCE_MAX:
    case DML_OP_REDUCE_MIN:
    case DML_OP_REDUCE_SUM:
    case DML_OP_REDUCE_MEAN:
    case DML_OP_FLOOR:
    case DML_OP_CEIL:
      DML_RETURN_IF_ERROR(symf_eval(c, d->inputs[0], a, MAX_ELEMS, &na, &aok, budget));
      /* Reductions: of one element only. */
      if (!aok || na != (uint32_t)numel) return DML_OK;
      for (uint32_t i = 0; i < na; i++) {
        out[i] = a[i];
        if (d->op != DML_OP_FLOOR && d->op != DML_OP_CEIL) continue;
        dml_dim_t r;
        int rok = 0;
        DML_RETURN_IF_ERROR(
            symf_dim(c, &a[i], d->op == DML_OP_CEIL ? a[i].q - 1 : 0, a[i].q, &r, &rok));
        if (!rok) return DML_OK;
        out[i].q = 1;
        if (!elem_affine(c->m, r, &out[i].base, &out[i].k, &out[i].off)) return DML_OK;
      }
      *out_n = na;
      break;
    case DML_OP_CONCAT: {
      uint32_t n = 0;
      for (uint32_t i = 0; i < d->n_inputs; i++) {
        DML_RETURN_IF_ERROR(symf_eval(c, d->inputs[i], a, MAX_ELEMS, &na, &aok, budget));
        if (!aok || n + na > (uint32_t)numel) return DML_OK;
        for (uint32_t j = 0; j < na; j++) out[n++] = a[j];
      }
      if (n != (uint32_t)numel) return DML_OK;
      *out_n = n;
      break;
    }
    case DML_OP_ADD:
    case DML_OP_SUB:
    case DML_OP_MUL:
    case DML_OP_DIV: {
      if (d->n_inputs != 2) return DML_OK;
      double b[MAX_ELEMS];
      uint32_t nb = 0;
      int bb = 16, bi = 1; /* bi: the input holding the static operand */
      if (f64s_eval(c, d->inputs[1], b, MAX_ELEMS, &nb, &bb) != 1) {
        bb = 16, bi = 0;
        if (d->op != DML_OP_ADD && d->op != DML_OP_MUL) return DML_OK;
        if (f64s_eval(c, d->inputs[0], b, MAX_ELEMS, &nb, &bb) != 1) return DML_OK;
      }
      DML_RETURN_IF_ERROR(
          symf_eval(c, d->inputs[1 - bi], a, MAX_ELEMS, &na, &aok, budget));
      uint32_t n = na > nb ? na : nb;
      if (!aok || (na != nb && na != 1 && nb != 1) || n != (uint32_t)numel) return DML_OK;
      for (uint32_t i = 0; i < n; i++) {
        symf_t x = a[na == 1 ? 0 : i];
        double y = b[nb == 1 ? 0 : i];
        if (!(fabs(y) < 9.0e15) || y != floor(y)) return DML_OK;
        int64_t iy = (int64_t)y, t;
        switch (d->op) {
          case DML_OP_ADD:
          case DML_OP_SUB:
            if (__builtin_mul_overflow(iy, x.q, &t) ||
                (d->op == DML_OP_ADD ? __builtin_add_overflow(x.off, t, &x.off)
                                     : __builtin_sub_overflow(x.off, t, &x.off)))
              return DML_OK;
            break;
          case DML_OP_MUL:
            if (iy < 0) return DML_OK;
            if (iy > 0 && x.q % iy == 0) {
              x.q /= iy;
            } else if (__builtin_mul_overflow(x.k, iy, &x.k) ||
                       __builtin_mul_overflow(x.off, iy, &x.off)) {
              return DML_OK;
            }
            break;
          default: /* DIV */
            if (iy < 1 || __builtin_mul_overflow(x.q, iy, &x.q)) return DML_OK;
            break;
        }
        if (x.k == 0) x.base = -1;
        out[i] = x;
      }
      *out_n = n;
      break;
    }
    default: return DML_OK;
  }
  /* Exact in the dtype at the bounds (and at the smallest sizes). */
  int64_t lim = float_exact_int(v->type.dtype);
  for (uint32_t i = 0; i < *out_n; i++) {
    int64_t hi = 0, lo = 0;
    if (out[i].base >= 0) {
      if (__builtin_mul_overflow(out[i].k, c->m->symbols[out[i].base].bound, &hi) ||
          __builtin_add_overflow(hi, out[i].off, &hi))
        return DML_OK;
      lo = out[i].off;
    } else {
      hi = lo = out[i].off;
    }
    if (hi >= lim || hi <= -lim || lo >= lim || lo <= -lim) return DML_OK;
  }
  *ok = 1;
  return DML_OK;
}

static dml_status_t infer_cast(ictx_t *c) {
  dml_dtype_t to;
  DML_RETURN_IF_ERROR(attr_dtype(c, "to", 1, DML_DTYPE_INVALID, &to));
  dml_type_t t = *in_t(c, 0);
  t.dtype = to;
  set_out(c, 0, &t);
  /* Integer -> integer keeps known (shape) contents. */
  if ((dml_dtype_is_int(in_t(c, 0)->dtype) || in_t(c, 0)->dtype == DML_DTYPE_BOOL) &&
      dml_dtype_is_int(to))
    return pass_sym(c, 0);
  /* Float -> integer of known values (e.g. Cast(Floor(Shape * 2.0)) for
   * Resize sizes) truncates them; float -> bool compares them with 0. */
  double f[MAX_ELEMS];
  uint32_t n = 0;
  if (dml_dtype_is_float(in_t(c, 0)->dtype) &&
      (dml_dtype_is_int(to) || to == DML_DTYPE_BOOL) &&
      f64s_of(c, 0, f, MAX_ELEMS, &n) == 1) {
    dml_dim_t e[MAX_ELEMS];
    for (uint32_t i = 0; i < n; i++) {
      double r = f[i] != 0; /* bool: a Loop's cond computed from its trip count */
      if (to != DML_DTYPE_BOOL && !round_to_dtype(to, f[i], &r)) return DML_OK;
      e[i] = D((int64_t)r);
    }
    return set_sym(c, 0, e, n);
  }
  /* Float -> integer of values computed from shape elements (symf_eval):
   * truncation is the floor of these values, which are >= 0 at every size. */
  if (dml_dtype_is_float(in_t(c, 0)->dtype) && dml_dtype_is_int(to) &&
      dml_dtype_size(to) == 8) {
    symf_t f[MAX_ELEMS];
    int ok = 0, budget = 64;
    DML_RETURN_IF_ERROR(symf_eval(c, in_v(c, 0), f, MAX_ELEMS, &n, &ok, &budget));
    if (!ok) return DML_OK;
    dml_dim_t e[MAX_ELEMS];
    for (uint32_t i = 0; i < n; i++) {
      int64_t lo = 0;
      if (f[i].base >= 0 &&
          (__builtin_mul_overflow(f[i].k, dml_ir_symbol_min(c->m, f[i].base), &lo) ||
           __builtin_add_overflow(lo, f[i].off, &lo) || lo < 0))
        return DML_OK;
      DML_RETURN_IF_ERROR(symf_dim(c, &f[i], 0, f[i].q, &e[i], &ok));
      if (!ok) return DML_OK;
    }
    return set_sym(c, 0, e, n);
  }
  return DML_OK;
}

static dml_status_t infer_clip(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_NUMERIC));
  for (uint32_t i = 1; i < 3; i++) {
    const dml_type_t *t = in_t(c, i);
    if (!t) continue;
    DML_RETURN_IF_ERROR(same_dtype(c, 0, i));
    int64_t n = dml_ir_type_numel_bound(c->m, t);
    if (t->rank > 1 || n != 1) {
      char tb[TBUF];
      return fail(c, INVALID, "Clip %s (input %u) must be a scalar, got %s",
                  i == 1 ? "min" : "max", i, TS(t, tb));
    }
  }
  set_out(c, 0, in_t(c, 0));
  return DML_OK;
}

/* Known elements of a ⊙ b for integer Add/Sub/Mul/Div when every result
 * stays representable (sym op static for Mul/Div, same symbol for Add/Sub). */
static int sym_arith(dml_op_t op, dml_dim_t a, dml_dim_t b, dml_dim_t *out) {
  int64_t v;
  switch (op) {
    case DML_OP_ADD:
      if (a.sym >= 0 && b.sym >= 0 && a.sym != b.sym) return 0;
      if ((a.sym >= 0) != (b.sym >= 0) && !dim_is(a, 0) && !dim_is(b, 0)) return 0;
      return dim_add(a, b, out);
    case DML_OP_SUB:
      if (dim_is(b, 0)) return *out = a, 1;
      if (a.sym < 0 && b.sym < 0) {
        if (__builtin_sub_overflow(a.value, b.value, &v)) return 0;
        return *out = D(v), 1;
      }
      if (a.sym != b.sym || a.sym < 0 || b.sym < 0 || a.value < b.value) return 0;
      return *out = DS(a.value - b.value, a.sym), 1;
    case DML_OP_MUL:
      if (a.sym >= 0 && b.sym >= 0) return 0;
      if ((a.sym >= 0 && b.value < 0) || (b.sym >= 0 && a.value < 0)) return 0;
      return dim_mul(a, b, out);
    case DML_OP_DIV:
      if (b.sym >= 0 || b.value == 0) return 0;
      if (a.sym < 0) {
        if (a.value == INT64_MIN && b.value == -1) return 0;
        return *out = D(a.value / b.value), 1;
      }
      if (b.value < 0 || a.value % b.value != 0) return 0;
      return *out = DS(a.value / b.value, a.sym), 1;
    case DML_OP_MOD: /* fmod = 0: the result takes the divisor's sign */
      if (a.sym >= 0 || b.sym >= 0 || b.value == 0) return 0;
      if (b.value == -1) return *out = D(0), 1;
      v = a.value % b.value;
      if (v != 0 && ((v < 0) != (b.value < 0))) v += b.value;
      return *out = D(v), 1;
    default: return 0;
  }
}

/* Known elements of a ⊙ b for integer Add/Sub/Mul/Div beyond sym_arith,
 * as derived symbols (dml_ir_module_derived_dim): k*S + off for sums and
 * differences of elements affine in one symbol S ((H-1)+1 = H again), the
 * product of two symbolic elements (batch*frames), and floor(x / q) by a
 * static q >= 1 (see DIV below): the run-time shape
 * arithmetic of PyTorch's exporters (Shape -> Gather -> Sub/Div/Add/Mul ->
 * Concat -> Reshape/Resize). *ok = 0 when the result is none of these. */
static dml_status_t sym_arith_derived(ictx_t *c, dml_op_t op, dml_dim_t a, dml_dim_t b,
                                      dml_dim_t *out, int *ok) {
  *ok = 0;
  if (a.sym < 0 && b.sym < 0) return DML_OK;
  int32_t sa, sb;
  int64_t ka, oa, kb, ob, k, off;
  switch (op) {
    case DML_OP_ADD:
    case DML_OP_SUB:
      if (!elem_affine(c->m, a, &sa, &ka, &oa) || !elem_affine(c->m, b, &sb, &kb, &ob))
        return DML_OK;
      if (sa >= 0 && sb >= 0 && sa != sb) return DML_OK;
      if (op == DML_OP_ADD) {
        if (__builtin_add_overflow(ka, kb, &k) || __builtin_add_overflow(oa, ob, &off))
          return DML_OK;
      } else if (__builtin_sub_overflow(ka, kb, &k) ||
                 __builtin_sub_overflow(oa, ob, &off)) {
        return DML_OK;
      }
      if (k < 0) return DML_OK;
      if (k == 0) return *out = D(off), *ok = 1, DML_OK;
      return dml_ir_module_derived_dim(c->m, sa >= 0 ? sa : sb, -1, k, off, 1, out, ok);
    case DML_OP_MUL:
      if (a.sym < 0 || b.sym < 0) {
        dml_dim_t s = a.sym >= 0 ? a : b, q = a.sym >= 0 ? b : a;
        if (q.value < 0 || !elem_affine(c->m, s, &sa, &ka, &oa) ||
            __builtin_mul_overflow(ka, q.value, &k) ||
            __builtin_mul_overflow(oa, q.value, &off))
          return DML_OK;
        if (k == 0) return *out = D(off), *ok = 1, DML_OK;
        return dml_ir_module_derived_dim(c->m, sa, -1, k, off, 1, out, ok);
      }
      if (a.value < 1 || b.value < 1 || __builtin_mul_overflow(a.value, b.value, &k))
        return DML_OK;
      return dml_ir_module_derived_dim(c->m, a.sym, b.sym, k, 0, 1, out, ok);
    case DML_OP_DIV: {
      if (a.sym < 0 || b.sym >= 0 || b.value < 1 || !elem_affine(c->m, a, &sa, &ka, &oa))
        return DML_OK;
      /* Floor division, as the exporters mean it (torch's SymInt `//`,
       * written as ONNX's truncating Div): the two agree where the
       * numerator is >= 0, as at the bounds (a symbolic element is >= 1
       * there). Where it is negative, the floor is one below ONNX's
       * result: this assumes, as torch's own semantics do, that such sizes
       * are below what the model takes (wav2vec2 computes its frame count
       * from floor(samples/80) - 3 before the Convs that need samples >=
       * 400; there the extents in use are below 1 and the runtime refuses
       * them). A --input-shape minimum that keeps the numerator >= 0 makes
       * it exact. */
      return dml_ir_module_derived_dim(c->m, sa, -1, ka, oa, b.value, out, ok);
    }
    default: return DML_OK;
  }
}

/* Range [*lo, *hi] of the run-time values of known element `d`: its value,
 * or k*S for k >= 0 within S's promised minimum and bound. 0 if unknown. */
static int elem_range(const ictx_t *c, dml_dim_t d, int64_t *lo, int64_t *hi) {
  if (d.sym < 0) return *lo = *hi = d.value, 1;
  if (d.value < 0 || __builtin_mul_overflow(d.value, dml_ir_symbol_min(c->m, d.sym), lo))
    return 0;
  *hi = dim_max(c, d);
  return 1;
}

/* Known result (static 0/1) of comparing known integer elements: static
 * ones, multiples k1*S, k2*S of one symbol (S >= 1 orders them like k1,
 * k2), or ranges that decide it (a size never equals -1, torch.onnx's
 * Where(Equal(shape, -1), 1, shape) before an Expand). 0 when it depends on
 * the symbol's value. */
/* The relations of a to b (less, equal, greater) that make each compare
 * op true. */
enum { REL_LT = 1, REL_EQ = 2, REL_GT = 4 };
static const uint8_t k_compare_rel[DML_OP_COUNT_] = {
    [DML_OP_EQUAL] = REL_EQ,
    [DML_OP_LESS] = REL_LT,
    [DML_OP_LESS_OR_EQUAL] = REL_LT | REL_EQ,
    [DML_OP_GREATER] = REL_GT,
    [DML_OP_GREATER_OR_EQUAL] = REL_GT | REL_EQ,
};

static int sym_compare(const ictx_t *c, dml_op_t op, dml_dim_t a, dml_dim_t b,
                       dml_dim_t *out) {
  unsigned want = op > DML_OP_INVALID && op < DML_OP_COUNT_ ? k_compare_rel[op] : 0;
  if (!want) return 0;
  int64_t al = a.value, ah = a.value, bl = b.value, bh = b.value;
  if ((a.sym >= 0 || b.sym >= 0) && a.sym != b.sym &&
      (!elem_range(c, a, &al, &ah) || !elem_range(c, b, &bl, &bh)))
    return 0;
  /* The relations the ranges allow (one when both are static or multiples
   * of one symbol: k1*S against k2*S orders like k1 against k2). */
  unsigned can = (al < bh ? REL_LT : 0u) | (al <= bh && bl <= ah ? REL_EQ : 0u) |
                 (ah > bl ? REL_GT : 0u);
  if ((can & ~want) == 0) return *out = D(1), 1;
  if ((can & want) == 0) return *out = D(0), 1;
  return 0;
}

/* Two operands with numpy broadcasting (op_rules.def's binary, logical,
 * equal, compare, pow and prelu): input 0 of dtype class `cls0` (DT_ANY: any),
 * input 1 of class `cls1` or, with SAME_AS_0, of input 0's dtype; the
 * result bool when `out_bool`, else input 0's dtype. */
#define SAME_AS_0 (-1)
static dml_status_t broadcast_rule(ictx_t *c, int cls0, int cls1, int out_bool) {
  dml_op_t op = c->n->op;
  const dml_type_t *a = in_t(c, 0), *b = in_t(c, 1);
  dml_dtype_t out_dt = out_bool ? DML_DTYPE_BOOL : a->dtype;
  if (cls0 != DT_ANY) DML_RETURN_IF_ERROR(need_dtype(c, 0, cls0));
  if (cls1 == SAME_AS_0)
    DML_RETURN_IF_ERROR(same_dtype(c, 0, 1));
  else
    DML_RETURN_IF_ERROR(need_dtype(c, 1, cls1));
  dml_type_t o;
  DML_RETURN_IF_ERROR(bcast(c, a, b, &o));
  if (op == DML_OP_PRELU && !dml_type_equal(&o, a)) {
    char ta[TBUF], tb[TBUF];
    return fail(c, INVALID, "PRelu slope %s must broadcast to the input %s", TS(b, tb),
                TS(a, ta));
  }
  o.dtype = out_dt;
  set_out(c, 0, &o);
  const dml_attr_t *fm = op == DML_OP_MOD ? dml_ir_node_attr(c->n, "fmod") : NULL;
  if ((op == DML_OP_ADD || op == DML_OP_SUB || op == DML_OP_MUL || op == DML_OP_DIV ||
       (op == DML_OP_MOD && !(fm && fm->kind == DML_ATTR_INT && fm->i))) &&
      dml_dtype_is_int(out_dt) && o.rank <= 1 && dml_type_is_static(&o)) {
    elems_t ea, eb;
    if (elems_of(c, in_v(c, 0), &ea) == 1 && elems_of(c, in_v(c, 1), &eb) == 1 && ea.n &&
        eb.n) {
      uint32_t n = ea.n > eb.n ? ea.n : eb.n;
      dml_dim_t r[MAX_ELEMS];
      pelems_t pr; /* Sub: the differences no dim expresses stay as pairs */
      pr.n = n;
      for (uint32_t i = 0; i < n; i++) {
        dml_dim_t x = ea.e[ea.n == 1 ? 0 : i], y = eb.e[eb.n == 1 ? 0 : i];
        int ok = sym_arith(op, x, y, &r[i]);
        if (!ok) DML_RETURN_IF_ERROR(sym_arith_derived(c, op, x, y, &r[i], &ok));
        pr.e[i] = ok ? r[i] : x, pr.m[i] = ok ? D(0) : y, pr.unk[i] = ok ? 0 : 2;
        if (!ok && op != DML_OP_SUB) return DML_OK;
      }
      return set_psym(c, 0, &pr);
    }
  }
  if ((op == DML_OP_AND || op == DML_OP_OR || op == DML_OP_XOR) && o.rank <= 1 &&
      dml_type_is_static(&o)) {
    elems_t ea, eb;
    if (elems_of(c, in_v(c, 0), &ea) == 1 && elems_of(c, in_v(c, 1), &eb) == 1 && ea.n &&
        eb.n) {
      uint32_t n = ea.n > eb.n ? ea.n : eb.n;
      dml_dim_t r[MAX_ELEMS];
      for (uint32_t i = 0; i < n; i++) {
        dml_dim_t x = ea.e[ea.n == 1 ? 0 : i], y = eb.e[eb.n == 1 ? 0 : i];
        if (x.sym >= 0 || y.sym >= 0) return DML_OK;
        int p = x.value != 0, q = y.value != 0;
        r[i] = D(op == DML_OP_AND ? (p && q) : op == DML_OP_OR ? (p || q) : (p != q));
      }
      return set_sym(c, 0, r, n);
    }
  }
  if (out_dt == DML_DTYPE_BOOL && op != DML_OP_AND && op != DML_OP_OR &&
      op != DML_OP_XOR && dml_dtype_is_int(a->dtype) && o.rank <= 1 &&
      dml_type_is_static(&o)) {
    elems_t ea, eb;
    if (elems_of(c, in_v(c, 0), &ea) == 1 && elems_of(c, in_v(c, 1), &eb) == 1 && ea.n &&
        eb.n) {
      uint32_t n = ea.n > eb.n ? ea.n : eb.n;
      dml_dim_t r[MAX_ELEMS];
      for (uint32_t i = 0; i < n; i++)
        if (!sym_compare(c, op, ea.e[ea.n == 1 ? 0 : i], eb.e[eb.n == 1 ? 0 : i], &r[i]))
          return DML_OK;
      return set_sym(c, 0, r, n);
    }
  }
  return DML_OK;
}

/* Known elements of the Max/Min of known integer elements `e` (n inputs,
 * broadcast by count 1): static elements, or equal ones. 0 if unknown. */
static int sym_extreme(dml_op_t op, const elems_t *e, uint32_t n_in, uint32_t n,
                       dml_dim_t *out) {
  for (uint32_t i = 0; i < n; i++) {
    dml_dim_t r = e[0].e[e[0].n == 1 ? 0 : i];
    for (uint32_t k = 1; k < n_in; k++) {
      dml_dim_t x = e[k].e[e[k].n == 1 ? 0 : i];
      if (dim_eq(r, x)) continue;
      if (r.sym >= 0 || x.sym >= 0) return 0;
      if (op == DML_OP_MAX ? x.value > r.value : x.value < r.value) r = x;
    }
    out[i] = r;
  }
  return 1;
}

/* Max Min Sum Mean */
static dml_status_t infer_variadic(ictx_t *c) {
  dml_type_t o = *in_t(c, 0);
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_NUMERIC));
  for (uint32_t i = 1; i < c->n->n_inputs; i++) {
    if (!in_t(c, i)) return fail(c, INVALID, "input %u is missing", i);
    DML_RETURN_IF_ERROR(same_dtype(c, 0, i));
    dml_type_t t;
    DML_RETURN_IF_ERROR(bcast(c, &o, in_t(c, i), &t));
    o = t;
  }
  set_out(c, 0, &o);
  dml_op_t op = c->n->op;
  uint32_t n_in = c->n->n_inputs;
  if ((op == DML_OP_MAX || op == DML_OP_MIN) && dml_dtype_is_int(o.dtype) &&
      o.rank <= 1 && dml_type_is_static(&o) && n_in <= 8) {
    elems_t e[8];
    uint32_t n = 0;
    for (uint32_t i = 0; i < n_in; i++) {
      if (elems_of(c, in_v(c, i), &e[i]) != 1 || !e[i].n) return DML_OK;
      if (e[i].n > n) n = e[i].n;
    }
    dml_dim_t r[MAX_ELEMS];
    if (sym_extreme(op, e, n_in, n, r)) return set_sym(c, 0, r, n);
  }
  return DML_OK;
}

static dml_status_t infer_where(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_BOOL));
  DML_RETURN_IF_ERROR(same_dtype(c, 1, 2));
  dml_type_t t, o;
  DML_RETURN_IF_ERROR(bcast(c, in_t(c, 0), in_t(c, 1), &t));
  DML_RETURN_IF_ERROR(bcast(c, &t, in_t(c, 2), &o));
  o.dtype = in_t(c, 1)->dtype;
  set_out(c, 0, &o);
  /* Known condition selecting between known 1-D contents. */
  elems_t ec, ex, ey;
  if (o.rank <= 1 && dml_type_is_static(&o) && elems_of(c, in_v(c, 0), &ec) == 1 &&
      elems_of(c, in_v(c, 1), &ex) == 1 && elems_of(c, in_v(c, 2), &ey) == 1 && ec.n &&
      ex.n && ey.n) {
    uint32_t n = ec.n > ex.n ? ec.n : ex.n;
    if (ey.n > n) n = ey.n;
    dml_dim_t r[MAX_ELEMS];
    for (uint32_t i = 0; i < n; i++) {
      dml_dim_t k = ec.e[ec.n == 1 ? 0 : i];
      if (k.sym >= 0) return DML_OK;
      r[i] = k.value ? ex.e[ex.n == 1 ? 0 : i] : ey.e[ey.n == 1 ? 0 : i];
    }
    return set_sym(c, 0, r, n);
  }
  return DML_OK;
}

/* ==== linear algebra ==================================================== */

static dml_status_t infer_matmul(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_rank(c, 0, 1, DML_MAX_RANK));
  DML_RETURN_IF_ERROR(need_rank(c, 1, 1, DML_MAX_RANK));
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_NUMERIC));
  DML_RETURN_IF_ERROR(same_dtype(c, 0, 1));
  dml_type_t a = *in_t(c, 0), b = *in_t(c, 1);
  int pa = a.rank == 1, pb = b.rank == 1;
  if (pa) {
    a.rank = 2;
    a.dims[1] = a.dims[0];
    a.dims[0] = D(1);
  }
  if (pb) {
    b.rank = 2;
    b.dims[1] = D(1);
  }
  dml_dim_t ka = a.dims[a.rank - 1], kb = b.dims[b.rank - 2];
  if (!dim_eq(ka, kb)) {
    char ta[TBUF], tb[TBUF], sa[64], sb[64];
    return fail(c, INVALID, "MatMul inner dims differ: %s of %s vs %s of %s",
                dim_str(c, ka, sa, sizeof(sa)), TS(in_t(c, 0), ta),
                dim_str(c, kb, sb, sizeof(sb)), TS(in_t(c, 1), tb));
  }
  dml_type_t ba = a, bb = b, bo;
  ba.rank -= 2;
  bb.rank -= 2;
  DML_RETURN_IF_ERROR(bcast(c, &ba, &bb, &bo));
  dml_type_t o = mk(a.dtype, 0);
  for (int32_t i = 0; i < bo.rank; i++) o.dims[o.rank++] = bo.dims[i];
  if (!pa) o.dims[o.rank++] = a.dims[a.rank - 2];
  if (!pb) o.dims[o.rank++] = b.dims[b.rank - 1];
  set_out(c, 0, &o);
  return DML_OK;
}

static dml_status_t infer_gemm(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_rank(c, 0, 2, 2));
  DML_RETURN_IF_ERROR(need_rank(c, 1, 2, 2));
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_NUMERIC));
  DML_RETURN_IF_ERROR(same_dtype(c, 0, 1));
  DML_RETURN_IF_ERROR(same_dtype(c, 0, 2));
  int64_t ta = 0, tb = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "transA", 0, &ta));
  DML_RETURN_IF_ERROR(attr_int(c, "transB", 0, &tb));
  const dml_type_t *a = in_t(c, 0), *b = in_t(c, 1);
  dml_dim_t m = a->dims[ta ? 1 : 0], ka = a->dims[ta ? 0 : 1];
  dml_dim_t kb = b->dims[tb ? 1 : 0], n = b->dims[tb ? 0 : 1];
  if (!dim_eq(ka, kb)) {
    char s1[TBUF], s2[TBUF], sa[64], sb[64];
    return fail(c, INVALID,
                "Gemm inner dims differ: A %s (transA=%lld) gives K=%s, B %s "
                "(transB=%lld) gives K=%s",
                TS(a, s1), (long long)ta, dim_str(c, ka, sa, sizeof(sa)), TS(b, s2),
                (long long)tb, dim_str(c, kb, sb, sizeof(sb)));
  }
  dml_type_t o = mk(a->dtype, 2);
  o.dims[0] = m;
  o.dims[1] = n;
  const dml_type_t *ct = in_t(c, 2);
  if (ct) {
    dml_type_t bo;
    DML_RETURN_IF_ERROR(bcast(c, ct, &o, &bo));
    if (ct->rank > 2 || !dml_type_equal(&bo, &o)) {
      char s1[TBUF], s2[TBUF];
      return fail(c, INVALID, "Gemm C %s must broadcast to the output %s", TS(ct, s1),
                  TS(&o, s2));
    }
  }
  set_out(c, 0, &o);
  return DML_OK;
}

/* ==== convolution and pooling ========================================== */

enum { PAD_NOTSET, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID };

typedef struct window {
  int32_t n; /* spatial rank */
  int64_t k[DML_MAX_RANK], s[DML_MAX_RANK], d[DML_MAX_RANK];
  int64_t pb[DML_MAX_RANK], pe[DML_MAX_RANK];
  int pad_mode;
} window_t;

/* Reads kernel_shape (or `kernel` when given: the weights' spatial dims),
 * strides, dilations, pads and auto_pad. */
static dml_status_t read_window(const ictx_t *c, int32_t nsp, const int64_t *kernel,
                                window_t *w) {
  w->n = nsp;
  const int64_t *ks;
  size_t nk;
  DML_RETURN_IF_ERROR(attr_ints(c, "kernel_shape", &ks, &nk));
  if (ks || !kernel) {
    if (!ks) return fail(c, INVALID, "attribute 'kernel_shape' is required");
    DML_RETURN_IF_ERROR(attr_ints_n(c, "kernel_shape", nsp, 1, 1, w->k));
    if (kernel)
      for (int32_t i = 0; i < nsp; i++)
        if (kernel[i] != w->k[i])
          return fail(
              c, INVALID,
              "kernel_shape[%d] = %lld differs from the weights' spatial dim %lld",
              (int)i, (long long)w->k[i], (long long)kernel[i]);
  } else {
    for (int32_t i = 0; i < nsp; i++) {
      if (kernel[i] < 1)
        return fail(c, INVALID,
                    "the weights' spatial dim %d is %lld; kernels must be >= 1", (int)i,
                    (long long)kernel[i]);
      w->k[i] = kernel[i];
    }
  }
  DML_RETURN_IF_ERROR(attr_ints_n(c, "strides", nsp, 1, 1, w->s));
  DML_RETURN_IF_ERROR(attr_ints_n(c, "dilations", nsp, 1, 1, w->d));
  int64_t pads[2 * DML_MAX_RANK];
  DML_RETURN_IF_ERROR(attr_ints_n(c, "pads", 2 * nsp, 0, 0, pads));
  for (int32_t i = 0; i < nsp; i++) {
    w->pb[i] = pads[i];
    w->pe[i] = pads[nsp + i];
  }
  const char *ap = "NOTSET";
  DML_RETURN_IF_ERROR(attr_string(c, "auto_pad", "NOTSET", &ap));
  if (!strcmp(ap, "NOTSET"))
    w->pad_mode = PAD_NOTSET;
  else if (!strcmp(ap, "SAME_UPPER"))
    w->pad_mode = PAD_SAME_UPPER;
  else if (!strcmp(ap, "SAME_LOWER"))
    w->pad_mode = PAD_SAME_LOWER;
  else if (!strcmp(ap, "VALID"))
    w->pad_mode = PAD_VALID;
  else
    return fail(c, INVALID,
                "auto_pad \"%s\" is not NOTSET, SAME_UPPER, SAME_LOWER or VALID", ap);
  if (w->pad_mode != PAD_NOTSET && dml_ir_node_attr(c->n, "pads"))
    for (int32_t i = 0; i < nsp; i++)
      if (w->pb[i] || w->pe[i])
        return fail(c, INVALID, "explicit pads cannot be used with auto_pad \"%s\"", ap);
  return DML_OK;
}

/* Effective kernel extent (k-1)*d+1. */
static dml_status_t eff_kernel(const ictx_t *c, const window_t *w, int32_t i,
                               int64_t *out) {
  int64_t e;
  if (__builtin_mul_overflow(w->k[i] - 1, w->d[i], &e) || e == INT64_MAX)
    return fail(c, INVALID, "kernel %lld with dilation %lld overflows",
                (long long)w->k[i], (long long)w->d[i]);
  *out = e + 1;
  return DML_OK;
}

/* Output extent of spatial dim i for Conv and pooling: the formula of
 * dml_shape_window_extent() (runtime/base/dml_shape.h), the one the CPU's
 * eager path uses too. */
static dml_status_t window_out(const ictx_t *c, const window_t *w, int32_t i, int64_t in,
                               int ceil_mode, int64_t *out) {
  int64_t eff = 0;
  if (w->pad_mode != PAD_SAME_UPPER && w->pad_mode != PAD_SAME_LOWER)
    DML_RETURN_IF_ERROR(eff_kernel(c, w, i, &eff));
  dml_shape_pad_t pad = w->pad_mode == PAD_VALID    ? DML_SHAPE_PAD_VALID
                        : w->pad_mode == PAD_NOTSET ? DML_SHAPE_PAD_EXPLICIT
                                                    : DML_SHAPE_PAD_SAME;
  int64_t pb = pad == DML_SHAPE_PAD_VALID ? 0 : w->pb[i],
          pe = pad == DML_SHAPE_PAD_VALID ? 0 : w->pe[i];
  switch (dml_shape_window_extent(in, eff, w->s[i], pb, pe, pad, ceil_mode, out)) {
    case DML_SHAPE_OVERFLOW:
      return fail(c, INVALID, "spatial dim %d: padded extent overflows", (int)i);
    case DML_SHAPE_KERNEL_TOO_LARGE:
      return fail(
          c, INVALID,
          "spatial dim %d: kernel extent %lld (kernel %lld, dilation %lld) exceeds "
          "the padded input extent %lld",
          (int)i, (long long)eff, (long long)w->k[i], (long long)w->d[i],
          (long long)(in + pb + pe));
    default: return DML_OK;
  }
}

/* Output extent of spatial dim i for an input extent `in` that may be
 * symbolic: window_out's formula as floor((in + num) / s) (a derived dim
 * over a symbolic `in`). ceil_mode over a symbolic dim only where ONNX's
 * drop of a last window starting in the end padding cannot happen
 * (stride + end pad <= kernel extent). */
static dml_status_t window_out_dim(ictx_t *c, const window_t *w, int32_t i, dml_dim_t in,
                                   int ceil_mode, dml_dim_t *out) {
  if (in.sym < 0) {
    *out = D(0);
    return window_out(c, w, i, in.value, ceil_mode, &out->value);
  }
  int64_t s = w->s[i], eff = 0, add;
  char what[96];
  snprintf(what, sizeof what, "the output extent of spatial dim %d", (int)i);
  if (w->pad_mode == PAD_SAME_UPPER || w->pad_mode == PAD_SAME_LOWER)
    return derived_extent(c, in, 1, s - 1, s, what, out); /* ceil(in / s) */
  int64_t pb = w->pad_mode == PAD_VALID ? 0 : w->pb[i],
          pe = w->pad_mode == PAD_VALID ? 0 : w->pe[i];
  DML_RETURN_IF_ERROR(eff_kernel(c, w, i, &eff));
  /* floor((in + pb + pe - eff) / s) + 1, ceil: floor((in + pb + pe - eff + s - 1)/s) + 1
   */
  add = pb + pe - eff + s + (ceil_mode && w->pad_mode != PAD_VALID ? s - 1 : 0);
  if (ceil_mode && w->pad_mode != PAD_VALID && s + pe > eff) {
    char db[64];
    return fail(c, UNIMPL,
                "ceil_mode over symbolic spatial dim %d (%s) with stride %lld, end pad "
                "%lld and kernel extent %lld: whether the last window starts in the "
                "padding depends on the size",
                (int)i, dim_str(c, in, db, sizeof db), (long long)s, (long long)pe,
                (long long)eff);
  }
  return derived_extent(c, in, 1, add, s, what, out);
}

/* Static spatial dims of input 0 (dims 2..). */
static dml_status_t static_spatial(const ictx_t *c, const dml_type_t *x, int64_t *sp) {
  for (int32_t i = 2; i < x->rank; i++) {
    if (x->dims[i].sym >= 0) {
      char tb[TBUF];
      return fail(c, UNIMPL, "%s needs static spatial dims; input is %s", opn(c),
                  TS(x, tb));
    }
    sp[i - 2] = x->dims[i].value;
  }
  return DML_OK;
}

static dml_status_t conv_rule(ictx_t *c, int transpose) {
  DML_RETURN_IF_ERROR(need_rank(c, 0, 3, DML_MAX_RANK));
  const dml_type_t *x = in_t(c, 0), *wt = in_t(c, 1), *bt = in_t(c, 2);
  DML_RETURN_IF_ERROR(need_rank(c, 1, x->rank, x->rank));
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_NUMERIC));
  DML_RETURN_IF_ERROR(same_dtype(c, 0, 1));
  DML_RETURN_IF_ERROR(same_dtype(c, 0, 2));
  int32_t nsp = x->rank - 2;
  char s1[TBUF], s2[TBUF];
  if (!dml_type_is_static(wt))
    return fail(c, UNIMPL, "%s needs static weights, got %s", opn(c), TS(wt, s1));
  int64_t group = 1;
  DML_RETURN_IF_ERROR(attr_int(c, "group", 1, &group));
  if (group < 1) return fail(c, INVALID, "group %lld must be >= 1", (long long)group);
  int64_t kernel[DML_MAX_RANK] = {0}, sp[DML_MAX_RANK] = {0};
  for (int32_t i = 0; i < nsp; i++) kernel[i] = wt->dims[2 + i].value;
  window_t w;
  DML_RETURN_IF_ERROR(read_window(c, nsp, kernel, &w));
  for (int32_t i = 0; i < nsp; i++) sp[i] = x->dims[2 + i].value; /* static ones */
  int64_t w0 = wt->dims[0].value, w1 = wt->dims[1].value, cin, cout;
  if (!transpose) {
    /* W: [M, C/group, k...] */
    if (__builtin_mul_overflow(w1, group, &cin))
      return fail(c, INVALID, "channels overflow");
    cout = w0;
    if (cout % group != 0)
      return fail(c, INVALID, "output channels %lld are not divisible by group %lld",
                  (long long)cout, (long long)group);
  } else {
    /* W: [C, M/group, k...] */
    cin = w0;
    if (__builtin_mul_overflow(w1, group, &cout))
      return fail(c, INVALID, "channels overflow");
  }
  if (!dim_eq(x->dims[1], D(cin)))
    return fail(c, INVALID,
                "input channels of %s do not match the weights %s with group %lld "
                "(expected %lld)",
                TS(x, s1), TS(wt, s2), (long long)group, (long long)cin);
  if (bt && (bt->rank != 1 || !dim_eq(bt->dims[0], D(cout))))
    return fail(c, INVALID, "bias %s must be [%lld]", TS(bt, s1), (long long)cout);
  dml_type_t o = mk(x->dtype, x->rank);
  o.dims[0] = x->dims[0];
  o.dims[1] = D(cout);
  if (!transpose) {
    for (int32_t i = 0; i < nsp; i++)
      DML_RETURN_IF_ERROR(window_out_dim(c, &w, i, x->dims[2 + i], 0, &o.dims[2 + i]));
  } else {
    int64_t opad[DML_MAX_RANK];
    DML_RETURN_IF_ERROR(attr_ints_n(c, "output_padding", nsp, 0, 0, opad));
    const int64_t *os;
    size_t nos;
    DML_RETURN_IF_ERROR(attr_ints(c, "output_shape", &os, &nos));
    if (os && nos != (size_t)nsp && nos != (size_t)nsp + 2)
      return fail(c, INVALID, "output_shape must have %d values, got %zu", (int)nsp, nos);
    for (int32_t i = 0; i < nsp; i++) {
      if (opad[i] >= w.s[i] && opad[i] >= w.d[i])
        return fail(c, INVALID,
                    "output_padding[%d] = %lld must be less than the stride or "
                    "the dilation",
                    (int)i, (long long)opad[i]);
      int64_t r = 0, eff = 0, t = 0, pads = 0;
      if (x->dims[2 + i].sym >= 0 && !os) { /* s*in (SAME) or s*(in-1)+opad+eff-pads */
        int64_t add = 0;
        if (w.pad_mode != PAD_SAME_UPPER && w.pad_mode != PAD_SAME_LOWER) {
          DML_RETURN_IF_ERROR(eff_kernel(c, &w, i, &eff));
          if (w.pad_mode != PAD_VALID) pads = w.pb[i] + w.pe[i];
          add = opad[i] + eff - pads - w.s[i];
        }
        DML_RETURN_IF_ERROR(derived_extent(c, x->dims[2 + i], w.s[i], add, 1,
                                           "the output extent", &o.dims[2 + i]));
        continue;
      }
      if (os) {
        r = os[nos - (size_t)nsp + (size_t)i];
      } else if (w.pad_mode == PAD_SAME_UPPER || w.pad_mode == PAD_SAME_LOWER) {
        if (__builtin_mul_overflow(sp[i], w.s[i], &r))
          return fail(c, INVALID, "spatial dim %d overflows", (int)i);
      } else {
        DML_RETURN_IF_ERROR(eff_kernel(c, &w, i, &eff));
        if (w.pad_mode != PAD_VALID && __builtin_add_overflow(w.pb[i], w.pe[i], &pads))
          return fail(c, INVALID, "pads of spatial dim %d overflow", (int)i);
        if (__builtin_mul_overflow(sp[i] - 1, w.s[i], &t) ||
            __builtin_add_overflow(t, opad[i], &t) ||
            __builtin_add_overflow(t, eff, &t) || __builtin_sub_overflow(t, pads, &r))
          return fail(c, INVALID, "spatial dim %d overflows", (int)i);
      }
      if (r < 0)
        return fail(c, INVALID, "spatial output dim %d is negative (%lld)", (int)i,
                    (long long)r);
      o.dims[2 + i] = D(r);
    }
  }
  set_out(c, 0, &o);
  return DML_OK;
}

static dml_status_t infer_pool(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_rank(c, 0, 3, DML_MAX_RANK));
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_NUMERIC));
  const dml_type_t *x = in_t(c, 0);
  int32_t nsp = x->rank - 2;
  window_t w;
  DML_RETURN_IF_ERROR(read_window(c, nsp, NULL, &w));
  int64_t ceil_mode = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "ceil_mode", 0, &ceil_mode));
  dml_type_t o = *x;
  for (int32_t i = 0; i < nsp; i++) {
    int64_t eff = 0;
    DML_RETURN_IF_ERROR(eff_kernel(c, &w, i, &eff));
    if (w.pb[i] >= eff || w.pe[i] >= eff)
      return fail(c, INVALID,
                  "pads on spatial dim %d (%lld, %lld) must be smaller than the "
                  "kernel extent %lld",
                  (int)i, (long long)w.pb[i], (long long)w.pe[i], (long long)eff);
    DML_RETURN_IF_ERROR(
        window_out_dim(c, &w, i, x->dims[2 + i], ceil_mode != 0, &o.dims[2 + i]));
  }
  set_out(c, 0, &o);
  if (c->n->n_outputs > 1) { /* MaxPool Indices */
    o.dtype = DML_DTYPE_I64;
    set_out(c, 1, &o);
  }
  return DML_OK;
}

static dml_status_t infer_global_pool(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_rank(c, 0, 3, DML_MAX_RANK));
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_NUMERIC));
  dml_type_t o = *in_t(c, 0);
  for (int32_t i = 2; i < o.rank; i++) o.dims[i] = D(1);
  set_out(c, 0, &o);
  return DML_OK;
}

/* ==== normalization ===================================================== */

/* Inputs [first, last] are 1-D [C] with X's dtype, C = X's dim 1. */
static dml_status_t channel_params(const ictx_t *c, uint32_t first, uint32_t last) {
  const dml_type_t *x = in_t(c, 0);
  for (uint32_t i = first; i <= last; i++) {
    const dml_type_t *t = in_t(c, i);
    if (!t) return fail(c, INVALID, "input %u is required", i);
    if (t->rank != 1 || !dim_eq(t->dims[0], x->dims[1])) {
      char s1[TBUF], s2[TBUF];
      return fail(c, INVALID, "input %u %s must be 1-D with the %s's channel count", i,
                  TS(t, s1), TS(x, s2));
    }
  }
  return DML_OK;
}

static dml_status_t infer_batchnorm(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_rank(c, 0, 2, DML_MAX_RANK));
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_FLOAT));
  DML_RETURN_IF_ERROR(channel_params(c, 1, 4));
  for (uint32_t i = 1; i <= 4; i++) DML_RETURN_IF_ERROR(need_dtype(c, i, DT_FLOAT));
  /* Opset 14/15: running_mean and running_var (outputs 1, 2) only with
   * training_mode=1; [C], of input_mean's and input_var's dtypes. */
  int64_t training = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "training_mode", 0, &training));
  if (c->n->n_outputs > 1 && !training)
    return fail(c, INVALID,
                "running_mean/running_var outputs need training_mode=1 (got %u outputs)",
                c->n->n_outputs);
  const dml_type_t *x = in_t(c, 0);
  set_out(c, 0, x);
  for (uint32_t i = 1; i < 3; i++) {
    dml_type_t r = mk(in_t(c, i + 2)->dtype, 1);
    r.dims[0] = x->dims[1];
    set_out(c, i, &r);
  }
  return DML_OK;
}

static dml_status_t infer_instnorm(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_rank(c, 0, 3, DML_MAX_RANK));
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_FLOAT));
  DML_RETURN_IF_ERROR(same_dtype(c, 0, 1));
  DML_RETURN_IF_ERROR(same_dtype(c, 0, 2));
  DML_RETURN_IF_ERROR(channel_params(c, 1, 2));
  set_out(c, 0, in_t(c, 0));
  return DML_OK;
}

static dml_status_t infer_layernorm(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_rank(c, 0, 1, DML_MAX_RANK));
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_FLOAT));
  DML_RETURN_IF_ERROR(same_dtype(c, 0, 1));
  DML_RETURN_IF_ERROR(same_dtype(c, 0, 2));
  const dml_type_t *x = in_t(c, 0);
  int64_t axis = 0;
  int32_t ax = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "axis", -1, &axis));
  DML_RETURN_IF_ERROR(norm_axis(c, axis, x->rank, "axis", &ax));
  /* Scale and B broadcast to X[axis:]. */
  dml_type_t tail = mk(x->dtype, x->rank - ax);
  for (int32_t i = ax; i < x->rank; i++) tail.dims[i - ax] = x->dims[i];
  for (uint32_t i = 1; i < 3; i++) {
    const dml_type_t *t = in_t(c, i);
    if (!t) continue;
    dml_type_t b;
    DML_RETURN_IF_ERROR(bcast(c, t, &tail, &b));
    if (!dml_type_equal(&b, &tail)) {
      char s1[TBUF], s2[TBUF];
      return fail(c, INVALID, "input %u %s must broadcast to the normalized dims %s", i,
                  TS(t, s1), TS(&tail, s2));
    }
  }
  set_out(c, 0, x);
  dml_dtype_t stash;
  DML_RETURN_IF_ERROR(attr_dtype(c, "stash_type", 0, DML_DTYPE_F32, &stash));
  dml_type_t st = *x;
  st.dtype = stash;
  for (int32_t i = ax; i < x->rank; i++) st.dims[i] = D(1);
  set_out(c, 1, &st);
  set_out(c, 2, &st);
  return DML_OK;
}

/* Attention (ONNX opset 23; runtime/cpu/cpu_attention.c): Y is
 * [B, Hq, Sq, Dv] (4-D) or [B, Sq, Hq * Dv] (3-D, Dv = V's last dim /
 * kv_num_heads); present_key/present_value [B, Hkv, P + Skv, D or Dv];
 * qk_matmul_output [B, Hq, Sq, P + Skv]. */
static dml_status_t infer_attention(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_FLOAT));
  DML_RETURN_IF_ERROR(same_dtype(c, 0, 1));
  DML_RETURN_IF_ERROR(same_dtype(c, 0, 2));
  DML_RETURN_IF_ERROR(same_dtype(c, 0, 4));
  DML_RETURN_IF_ERROR(same_dtype(c, 0, 5));
  const dml_type_t *q = in_t(c, 0), *k = in_t(c, 1), *v = in_t(c, 2), *pk = in_t(c, 4),
                   *pv = in_t(c, 5);
  if (q->rank != k->rank || q->rank != v->rank || (q->rank != 3 && q->rank != 4))
    return fail(c, INVALID, "Q, K and V must all be 3-D or all 4-D");
  if ((pk == NULL) != (pv == NULL))
    return fail(c, INVALID, "past_key and past_value go together");
  if ((pk && pk->rank != 4) || (pv && pv->rank != 4))
    return fail(c, INVALID, "past_key and past_value must be 4-D");
  const dml_type_t *np = in_t(c, 6); /* nonpad_kv_seqlen (opset 24) */
  if (np && (np->dtype != DML_DTYPE_I64 || np->rank != 1))
    return fail(c, INVALID, "nonpad_kv_seqlen must be a 1-D i64 tensor [batch]");
  if (np && pk)
    return fail(c, INVALID, "nonpad_kv_seqlen goes without past_key/past_value");
  int64_t qh = 0, kvh = 0, mode = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "q_num_heads", 0, &qh));
  DML_RETURN_IF_ERROR(attr_int(c, "kv_num_heads", 0, &kvh));
  DML_RETURN_IF_ERROR(attr_int(c, "qk_matmul_output_mode", 0, &mode));
  if (mode < 0 || mode > 3)
    return fail(c, INVALID, "qk_matmul_output_mode %lld is not 0..3", (long long)mode);
  dml_dim_t B = q->dims[0], Hq, Sq, Hkv, Skv, Dk, Dv;
  if (q->rank == 4) {
    Hq = q->dims[1], Sq = q->dims[2], Hkv = k->dims[1], Skv = k->dims[2];
    Dk = k->dims[3], Dv = v->dims[3];
  } else {
    if (qh <= 0 || kvh <= 0)
      return fail(c, INVALID, "3-D Q/K/V need q_num_heads and kv_num_heads");
    if (k->dims[2].sym >= 0 || v->dims[2].sym >= 0 || k->dims[2].value % kvh ||
        v->dims[2].value % kvh)
      return fail(c, INVALID, "kv_num_heads %lld must divide K's and V's static last dim",
                  (long long)kvh);
    Hq = D(qh), Sq = q->dims[1], Hkv = D(kvh), Skv = k->dims[1];
    Dk = D(k->dims[2].value / kvh), Dv = D(v->dims[2].value / kvh);
  }
  dml_dim_t T = Skv;
  if (pk && !dim_add(pk->dims[2], Skv, &T))
    return fail(c, UNIMPL, "past length + new length is not a value*symbol dim");
  dml_type_t y = mk(q->dtype, q->rank);
  if (q->rank == 4) {
    y.dims[0] = B, y.dims[1] = Hq, y.dims[2] = Sq, y.dims[3] = Dv;
  } else {
    y.dims[0] = B, y.dims[1] = Sq;
    if (!dim_mul(Hq, Dv, &y.dims[2]))
      return fail(c, UNIMPL, "q_num_heads * Dv overflows");
  }
  set_out(c, 0, &y);
  dml_type_t pres = mk(q->dtype, 4);
  pres.dims[0] = B, pres.dims[1] = Hkv, pres.dims[2] = T, pres.dims[3] = Dk;
  set_out(c, 1, &pres);
  pres.dims[3] = Dv;
  set_out(c, 2, &pres);
  dml_type_t qk = mk(q->dtype, 4);
  qk.dims[0] = B, qk.dims[1] = Hq, qk.dims[2] = Sq, qk.dims[3] = T;
  set_out(c, 3, &qk);
  return DML_OK;
}

/* RotaryEmbedding (ONNX opset 23): Y has X's type; position_ids i64. */
static dml_status_t infer_rotary_embedding(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_FLOAT));
  DML_RETURN_IF_ERROR(need_rank(c, 0, 3, 4));
  DML_RETURN_IF_ERROR(same_dtype(c, 0, 1));
  DML_RETURN_IF_ERROR(same_dtype(c, 0, 2));
  if (in_t(c, 3)) DML_RETURN_IF_ERROR(need_dtype(c, 3, DT_INDEX));
  set_out(c, 0, in_t(c, 0));
  return DML_OK;
}

/* BitwiseAnd/Or/Xor (broadcast) and BitwiseNot (ONNX opset 18): integer
 * operands of one dtype, the result of that dtype. */
static dml_status_t infer_bitwise(ictx_t *c) {
  const dml_type_t *a = in_t(c, 0), *b = in_t(c, 1);
  if (!dml_dtype_is_int(a->dtype))
    return fail(c, INVALID, "input 0 must have an integer dtype, got %s",
                dml_dtype_name(a->dtype));
  if (!b) {
    set_out(c, 0, a);
    return DML_OK;
  }
  DML_RETURN_IF_ERROR(same_dtype(c, 0, 1));
  dml_type_t o;
  DML_RETURN_IF_ERROR(bcast(c, a, b, &o));
  set_out(c, 0, &o);
  return DML_OK;
}

/* LpNormalization: Y has X's type; axis within X's rank, p 1 or 2. */
static dml_status_t infer_lp_normalization(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_FLOAT));
  DML_RETURN_IF_ERROR(need_rank(c, 0, 1, DML_MAX_RANK));
  const dml_type_t *x = in_t(c, 0);
  int64_t axis = 0, p = 0;
  int32_t ax = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "axis", -1, &axis));
  DML_RETURN_IF_ERROR(norm_axis(c, axis, x->rank, "axis", &ax));
  DML_RETURN_IF_ERROR(attr_int(c, "p", 2, &p));
  if (p != 1 && p != 2)
    return fail(c, INVALID, "p must be 1 or 2, got %lld", (long long)p);
  set_out(c, 0, x);
  return DML_OK;
}

/* GroupNormalization (ONNX opset 21): X [N, C, ...] with num_groups
 * dividing a static C, scale and bias [C]; Y has X's type. */
static dml_status_t infer_group_normalization(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_FLOAT));
  DML_RETURN_IF_ERROR(need_rank(c, 0, 2, DML_MAX_RANK));
  DML_RETURN_IF_ERROR(same_dtype(c, 0, 1));
  DML_RETURN_IF_ERROR(same_dtype(c, 0, 2));
  const dml_type_t *x = in_t(c, 0);
  int64_t g = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "num_groups", 0, &g));
  dml_dim_t ch = x->dims[1];
  if (g <= 0 || ch.sym >= 0 || ch.value % g)
    return fail(c, INVALID, "num_groups %lld must divide the static channel count",
                (long long)g);
  for (uint32_t i = 1; i < 3; i++) {
    const dml_type_t *t = in_t(c, i);
    if (t->rank != 1 || !dim_eq(t->dims[0], ch))
      return fail(c, INVALID, "input %u must be [C] = [%lld] (opset 21: per channel)", i,
                  (long long)ch.value);
  }
  set_out(c, 0, x);
  return DML_OK;
}

static dml_status_t infer_softmax(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_FLOAT));
  const dml_type_t *x = in_t(c, 0);
  int64_t axis = 0;
  int32_t ax = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "axis", -1, &axis));
  if (x->rank > 0) DML_RETURN_IF_ERROR(norm_axis(c, axis, x->rank, "axis", &ax));
  set_out(c, 0, x);
  return DML_OK;
}

static dml_status_t infer_dropout(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_FLOAT));
  DML_RETURN_IF_ERROR(need_dtype(c, 1, DT_FLOAT));
  DML_RETURN_IF_ERROR(need_dtype(c, 2, DT_BOOL));
  for (uint32_t i = 1; i < 3; i++) {
    const dml_type_t *t = in_t(c, i);
    if (t && (t->rank > 1 || dml_ir_type_numel_bound(c->m, t) != 1)) {
      char tb[TBUF];
      return fail(c, INVALID, "Dropout %s (input %u) must be a scalar, got %s",
                  i == 1 ? "ratio" : "training_mode", i, TS(t, tb));
    }
  }
  const dml_type_t *x = in_t(c, 0);
  set_out(c, 0, x);
  dml_type_t mask = *x;
  mask.dtype = DML_DTYPE_BOOL;
  set_out(c, 1, &mask);
  return DML_OK;
}

/* ==== shape and data movement ========================================== */

static dml_status_t infer_flatten(ictx_t *c) {
  const dml_type_t *x = in_t(c, 0);
  int64_t axis = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "axis", 1, &axis));
  if (axis < -(int64_t)x->rank || axis > x->rank)
    return fail(c, INVALID, "axis %lld is out of range [-%d, %d]", (long long)axis,
                (int)x->rank, (int)x->rank);
  int32_t ax = (int32_t)(axis < 0 ? axis + x->rank : axis);
  mono_t p0, p1;
  dml_type_t o = mk(x->dtype, 2);
  char tb[TBUF];
  if (!mono_of(x, 0, ax, &p0) || !mono_of(x, ax, x->rank, &p1))
    return fail(c, INVALID, "Flatten of %s overflows", TS(x, tb));
  int ok0 = 0, ok1 = 0;
  DML_RETURN_IF_ERROR(mono_to_dim_c(c, &p0, &o.dims[0], &ok0));
  DML_RETURN_IF_ERROR(mono_to_dim_c(c, &p1, &o.dims[1], &ok1));
  if (!ok0 || !ok1)
    return fail(c, UNIMPL,
                "Flatten of %s at axis %d gives a product of symbolic dims, which a dim "
                "cannot express",
                TS(x, tb), (int)ax);
  set_out(c, 0, &o);
  return DML_OK;
}

/* Formats known elements as "[batch,-1]". */
static const char *elems_str(const ictx_t *c, const elems_t *e, char *buf, size_t cap) {
  size_t k = (size_t)snprintf(buf, cap, "[");
  for (uint32_t i = 0; i < e->n && k < cap; i++) {
    char db[64];
    k += (size_t)snprintf(buf + k, cap - k, "%s%s", i ? "," : "",
                          dim_str(c, e->e[i], db, sizeof(db)));
  }
  if (k < cap) snprintf(buf + k, cap - k, "]");
  return buf;
}

/* Formats a product of dims as "784*batch". */
static const char *mono_str(const ictx_t *c, const mono_t *p, char *buf, size_t cap) {
  size_t k = (size_t)snprintf(buf, cap, "%lld", (long long)p->coeff);
  for (int i = 0; i < p->n && k < cap; i++) {
    int32_t s = p->syms[i];
    k += (size_t)snprintf(buf + k, cap - k, "*%s",
                          (uint32_t)s < c->m->n_symbols ? c->m->symbols[s].name : "?");
  }
  return buf;
}

/* Greatest common divisor of a, b > 0. */
static int64_t gcd64(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b, b = t;
  }
  return a;
}

/* A step the Reshape hint asks of input symbol `sym` (the lcm with one
 * already asked); 0 when the list is full or the lcm overflows. */
static int hint_add(int32_t *syms, int64_t *steps, int *n, int32_t sym, int64_t step) {
  for (int i = 0; i < *n; i++)
    if (syms[i] == sym) {
      int64_t g = gcd64(steps[i], step), l;
      if (__builtin_mul_overflow(steps[i] / g, step, &l)) return 0;
      steps[i] = l;
      return 1;
    }
  if (*n >= 2 * MONO_CAP) return 0;
  syms[*n] = sym, steps[*n] = step, (*n)++;
  return 1;
}

/* The end of the refusal of a Reshape whose -1 dim, (total)/(known), no
 * value*symbol expresses: the `dmlc compile --input-shape` that makes it
 * one where it can be told (docs/cli.md, --input-shape): each derived
 * factor floor(S/d) of an input symbol S asks S to be a multiple of d, and
 * a coefficient that does not divide asks the factor it lacks of the first
 * input symbol left in the quotient; a graph input (the module's `forward`
 * arguments) with such a dim is printed with that dim as the range
 * [MIN:MAX:STEP] (its other symbolic dims as their ranges). Else a pointer
 * to the form. */
static void reshape_hint(const ictx_t *c, const mono_t *total, const mono_t *known,
                         char *buf, size_t cap) {
  const dml_ir_module_t *m = c->m;
  int32_t hs[2 * MONO_CAP];
  int64_t hstep[2 * MONO_CAP];
  int nh = 0;
  const mono_t *ps[2] = {total, known};
  for (int p = 0; p < 2; p++)
    for (int i = 0; i < ps[p]->n; i++) {
      const dml_ir_symbol_t *s = &m->symbols[ps[p]->syms[i]];
      if ((s->flags & DML_IR_SYMBOL_DERIVED) && s->src[1] < 0 && s->mul == 1 &&
          s->add == 0 && s->div > 1 && s->src[0] >= 0 && m->symbols[s->src[0]].flags == 0)
        hint_add(hs, hstep, &nh, s->src[0], s->div);
    }
  if (nh == 0 && known->coeff > 0 && total->coeff > 0 &&
      total->coeff % known->coeff != 0) {
    mono_t r = *total;
    int sub = 1;
    for (int i = 0; i < known->n && sub; i++) {
      int k = -1;
      for (int j = 0; j < r.n && k < 0; j++)
        if (r.syms[j] == known->syms[i]) k = j;
      if (k < 0)
        sub = 0;
      else
        r.syms[k] = r.syms[--r.n];
    }
    for (int j = 0; sub && j < r.n; j++)
      if (m->symbols[r.syms[j]].flags == 0) {
        hint_add(hs, hstep, &nh, r.syms[j],
                 known->coeff / gcd64(total->coeff, known->coeff));
        break;
      }
  }
  const dml_ir_function_t *f = c->n->func;
  for (uint32_t i = 0; i < m->n_functions; i++)
    if (m->functions[i]->name && strcmp(m->functions[i]->name, "forward") == 0)
      f = m->functions[i];
  size_t k = 0;
  int shown = 0;
  for (uint32_t a = 0; f && a < f->n_args && nh && k < cap; a++) {
    const dml_type_t *t = &f->args[a]->type;
    int uses = 0;
    for (int32_t d = 0; d < t->rank; d++)
      for (int j = 0; j < nh; j++) uses |= t->dims[d].sym == hs[j];
    if (!uses || !f->args[a]->name) continue;
    k += (size_t)snprintf(buf + k, cap - k, "%s--input-shape %s=",
                          shown ? " "
                                : "; making the dims it divides multiples of what "
                                  "the division needs makes it one: dmlc compile ",
                          f->args[a]->name);
    for (int32_t d = 0; d < t->rank && k < cap; d++) {
      dml_dim_t dm = t->dims[d];
      const char *x = d ? "x" : "";
      if (dm.sym < 0) {
        k += (size_t)snprintf(buf + k, cap - k, "%s%lld", x, (long long)dm.value);
        continue;
      }
      int64_t st = dm.value, lo, hi;
      for (int j = 0; j < nh; j++)
        if (hs[j] == dm.sym) st = dm.value * hstep[j];
      hi = dim_max(c, dm) / st * st;
      if (hi < st) hi = st;
      lo = dm.value * dml_ir_symbol_min(m, dm.sym);
      lo = (lo + st - 1) / st * st;
      if (st > 1)
        k += (size_t)snprintf(buf + k, cap - k, "%s[%lld:%lld:%lld]", x, (long long)lo,
                              (long long)hi, (long long)st);
      else
        k += (size_t)snprintf(buf + k, cap - k, "%s[%lld:%lld]", x, (long long)lo,
                              (long long)hi);
    }
    shown = 1;
  }
  if (k < cap && shown)
    snprintf(buf + k, cap - k,
             " ([MIN:MAX:STEP] keeps a dim symbolic, a multiple of STEP; docs/cli.md)");
  else if (cap)
    snprintf(buf, cap,
             "; an input dim declared a multiple of what the division needs may make it "
             "one: dmlc compile --input-shape NAME=...[MIN:MAX:STEP] (docs/cli.md)");
}

static dml_status_t infer_reshape(ictx_t *c) {
  const dml_type_t *x = in_t(c, 0);
  elems_t e;
  DML_RETURN_IF_ERROR(need_rank(c, 1, 1, 1));
  if (elems_runtime(c, 1)) { /* every dim <= numel(x), unless that is 0 */
    uint32_t n = 0;
    DML_RETURN_IF_ERROR(runtime_len(c, 1, "shape", &n));
    if (n > DML_MAX_RANK)
      return fail(c, INVALID, "target shape has rank %u > %d", n, DML_MAX_RANK);
    int64_t nb = dml_ir_type_numel_bound(c->m, x);
    if (nb < 0) return fail(c, INVALID, "input element count overflows");
    /* Known positive elements (and 0 copying an input dim) of a partly
     * known shape stay; the others are data-dependent. */
    pelems_t pe;
    int part = pelems_of(c, in_v(c, 1), &pe) && pe.n == n;
    int64_t allowzero0 = 0;
    DML_RETURN_IF_ERROR(attr_int(c, "allowzero", 0, &allowzero0));
    dml_type_t o = mk(x->dtype, (int32_t)n);
    int dyn[DML_MAX_RANK];
    int64_t b[DML_MAX_RANK];
    for (uint32_t i = 0; i < n; i++) {
      dyn[i] = 1, b[i] = nb > 0 ? nb : dyn_bound(c);
      if (!part || pe.unk[i]) continue;
      dml_dim_t d = pe.e[i];
      int k = d.sym >= 0 ? DML_SHAPE_RESHAPE_DIM
                         : dml_shape_reshape_entry(d.value, (int32_t)i, x->rank,
                                                   allowzero0 != 0);
      if (k == DML_SHAPE_RESHAPE_DIM && (d.sym >= 0 || d.value > 0)) {
        o.dims[i] = d, dyn[i] = 0;
      } else if (k == DML_SHAPE_RESHAPE_COPY) {
        o.dims[i] = x->dims[i], dyn[i] = 0;
      }
    }
    return set_out_dyn(c, 0, o, dyn, b);
  }
  DML_RETURN_IF_ERROR(need_elems(c, 1, "shape", 1, &e));
  char eb[512], tb[TBUF], m1[128], m2[128];
  if (e.n > DML_MAX_RANK)
    return fail(c, INVALID, "target shape %s has rank %u > %d",
                elems_str(c, &e, eb, sizeof(eb)), e.n, DML_MAX_RANK);
  int64_t allowzero = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "allowzero", 0, &allowzero));
  dml_type_t o = mk(x->dtype, (int32_t)e.n);
  int32_t infer = -1;
  int has_zero = 0;
  mono_t known, total, q;
  mono_init(&known);
  for (uint32_t i = 0; i < e.n; i++) {
    dml_dim_t d = e.e[i];
    /* each entry as ONNX reads it (dml_shape.h, as the CPU's run-time rule) */
    int k = d.sym >= 0
                ? DML_SHAPE_RESHAPE_DIM
                : dml_shape_reshape_entry(d.value, (int32_t)i, x->rank, allowzero != 0);
    if (k == DML_SHAPE_RESHAPE_INFER) {
      if (infer >= 0)
        return fail(c, INVALID, "target shape %s has more than one -1",
                    elems_str(c, &e, eb, sizeof(eb)));
      infer = (int32_t)i;
      continue;
    } else if (k == DML_SHAPE_RESHAPE_NO_DIM) {
      return fail(c, INVALID,
                  "target shape %s: 0 at index %u copies an input dim, but the "
                  "input %s has rank %d",
                  elems_str(c, &e, eb, sizeof(eb)), i, TS(x, tb), (int)x->rank);
    } else if (k == DML_SHAPE_RESHAPE_COPY) {
      o.dims[i] = x->dims[i];
    } else if (k == DML_SHAPE_RESHAPE_NEGATIVE) {
      return fail(c, INVALID, "target shape %s has an invalid dim %lld at index %u",
                  elems_str(c, &e, eb, sizeof(eb)), (long long)d.value, i);
    } else {
      o.dims[i] = d;
      has_zero |= d.sym < 0 && d.value == 0;
    }
    if (!mono_mul(&known, o.dims[i]))
      return fail(c, INVALID, "target shape %s overflows",
                  elems_str(c, &e, eb, sizeof(eb)));
  }
  if (!mono_of(x, 0, x->rank, &total))
    return fail(c, INVALID, "element count of %s overflows", TS(x, tb));
  if (infer >= 0) {
    if (has_zero && allowzero)
      return fail(c, INVALID, "target shape %s has both 0 (allowzero=1) and -1",
                  elems_str(c, &e, eb, sizeof(eb)));
    if (known.coeff == 0)
      return fail(c, INVALID, "target shape %s: -1 is ambiguous when another dim is 0",
                  elems_str(c, &e, eb, sizeof(eb)));
    int ok = 0;
    if (!mono_expand(c->m, &total) || !mono_expand(c->m, &known))
      return fail(c, UNIMPL, "Reshape of %s: too many symbolic factors", TS(x, tb));
    if (total.coeff != 0 && mono_div(&total, &known, &q))
      DML_RETURN_IF_ERROR(mono_to_dim_c(c, &q, &o.dims[infer], &ok));
    if (total.coeff == 0) {
      o.dims[infer] = D(0);
    } else if (!ok) {
      if (total.n == 0 && known.n == 0)
        return fail(c, INVALID, "cannot reshape %s (%lld elements) into %s", TS(x, tb),
                    (long long)total.coeff, elems_str(c, &e, eb, sizeof(eb)));
      /* Over data-dependent extents (no derived symbol has such sources):
       * the -1 is data-dependent too, bounded by the element count, and the
       * CPU's shape rule divides it out at run time (dims_reshape). */
      int dd = 0;
      for (int i = 0; i < total.n; i++)
        dd |= (c->m->symbols[total.syms[i]].flags & DML_IR_SYMBOL_DATA_DEPENDENT) != 0;
      for (int i = 0; i < known.n; i++)
        dd |= (c->m->symbols[known.syms[i]].flags & DML_IR_SYMBOL_DATA_DEPENDENT) != 0;
      if (dd) {
        int dyn[DML_MAX_RANK] = {0};
        int64_t b[DML_MAX_RANK], nb = dml_ir_type_numel_bound(c->m, x);
        if (nb < 0) return fail(c, INVALID, "input element count overflows");
        for (int32_t d = 0; d < o.rank; d++) b[d] = dim_max(c, o.dims[d]);
        dyn[infer] = 1, b[infer] = nb > 0 ? nb : 1;
        DML_RETURN_IF_ERROR(set_out_dyn(c, 0, o, dyn, b));
        return pass_sym(c, 0);
      }
      char hb[512];
      reshape_hint(c, &total, &known, hb, sizeof hb);
      return fail(c, UNIMPL,
                  "Reshape of %s into %s: the -1 dim would be (%s)/(%s), which a dim "
                  "(value*symbol) cannot express%s",
                  TS(x, tb), elems_str(c, &e, eb, sizeof(eb)),
                  mono_str(c, &total, m1, sizeof(m1)),
                  mono_str(c, &known, m2, sizeof(m2)), hb);
    }
  } else if (!mono_expand(c->m, &total) || !mono_expand(c->m, &known) ||
             !mono_equal(total, known)) {
    return fail(c, INVALID, "cannot reshape %s (%s elements) into %s (%s elements)",
                TS(x, tb), mono_str(c, &total, m1, sizeof(m1)),
                elems_str(c, &e, eb, sizeof(eb)), mono_str(c, &known, m2, sizeof(m2)));
  }
  set_out(c, 0, &o);
  return pass_sym(c, 0);
}

/* Axes from input `idx` (when present) or attribute `axes`; *out_has is 0
 * when neither is given. Values are not normalized. */
static dml_status_t read_axes(const ictx_t *c, uint32_t idx, elems_t *axes,
                              int *out_has) {
  *out_has = 0;
  axes->n = 0;
  if (in_v(c, idx)) {
    const dml_type_t *t = in_t(c, idx);
    if (elems_runtime(c, idx) && t->rank == 1 && t->dims[0].sym < 0 &&
        t->dims[0].value == 0) {
      *out_has = 1; /* a run-time tensor of no elements */
      return DML_OK;
    }
    DML_RETURN_IF_ERROR(need_elems(c, idx, "axes", 0, axes));
    *out_has = 1;
    return DML_OK;
  }
  const int64_t *a;
  size_t n;
  DML_RETURN_IF_ERROR(attr_ints(c, "axes", &a, &n));
  if (!a && !dml_ir_node_attr(c->n, "axes")) return DML_OK;
  if (n > MAX_ELEMS) return fail(c, INVALID, "attribute 'axes' has %zu values", n);
  axes->n = (uint32_t)n;
  for (size_t i = 0; i < n; i++) axes->e[i] = D(a[i]);
  *out_has = 1;
  return DML_OK;
}

/* Normalizes axes against `rank` into a mask; duplicates are errors. */
static dml_status_t axes_mask(const ictx_t *c, const elems_t *axes, int32_t rank,
                              int *mask) {
  for (int32_t i = 0; i < rank; i++) mask[i] = 0;
  for (uint32_t i = 0; i < axes->n; i++) {
    int32_t a = 0;
    DML_RETURN_IF_ERROR(norm_axis(c, axes->e[i].value, rank, "axis", &a));
    if (mask[a]) return fail(c, INVALID, "axis %d is repeated", (int)a);
    mask[a] = 1;
  }
  return DML_OK;
}

static dml_status_t infer_squeeze(ictx_t *c) {
  const dml_type_t *x = in_t(c, 0);
  elems_t axes;
  int has, mask[DML_MAX_RANK];
  char tb[TBUF], db[64];
  if (elems_runtime(c, 1)) { /* the axes removed are known at run time */
    uint32_t n = 0;
    DML_RETURN_IF_ERROR(runtime_len(c, 1, "axes", &n));
    if (n > 0) {
      if ((int32_t)n > x->rank)
        return fail(c, INVALID, "axes has %u values for rank %d", n, (int)x->rank);
      return set_out_all_dyn(c, 0, x->dtype, x->rank - (int32_t)n, max_dim_bound(c, x));
    }
  }
  DML_RETURN_IF_ERROR(read_axes(c, 1, &axes, &has));
  if (has) {
    DML_RETURN_IF_ERROR(axes_mask(c, &axes, x->rank, mask));
    for (int32_t i = 0; i < x->rank; i++)
      if (mask[i] && !dim_is(x->dims[i], 1))
        return fail(c, INVALID, "cannot squeeze dim %d of %s: it is %s, not 1%s", (int)i,
                    TS(x, tb), dim_str(c, x->dims[i], db, sizeof(db)),
                    x->dims[i].sym >= 0 ? " (a symbolic dim is not known to be 1)" : "");
  } else {
    for (int32_t i = 0; i < x->rank; i++) {
      if (x->dims[i].sym >= 0)
        return fail(c, UNIMPL,
                    "Squeeze without axes of %s: whether symbolic dim %d is 1 is "
                    "only known at run time",
                    TS(x, tb), (int)i);
      mask[i] = x->dims[i].value == 1;
    }
  }
  dml_type_t o = mk(x->dtype, 0);
  for (int32_t i = 0; i < x->rank; i++)
    if (!mask[i]) o.dims[o.rank++] = x->dims[i];
  set_out(c, 0, &o);
  return pass_sym(c, 0);
}

static dml_status_t infer_unsqueeze(ictx_t *c) {
  const dml_type_t *x = in_t(c, 0);
  elems_t axes;
  int has, mask[DML_MAX_RANK];
  if (elems_runtime(c, 1)) { /* where the 1s go is known at run time */
    uint32_t n = 0;
    DML_RETURN_IF_ERROR(runtime_len(c, 1, "axes", &n));
    if ((int64_t)x->rank + n > DML_MAX_RANK)
      return fail(c, INVALID, "output rank %d exceeds %d", (int)(x->rank + (int32_t)n),
                  DML_MAX_RANK);
    return set_out_all_dyn(c, 0, x->dtype, x->rank + (int32_t)n, max_dim_bound(c, x));
  }
  DML_RETURN_IF_ERROR(read_axes(c, 1, &axes, &has));
  if (!has) return fail(c, INVALID, "Unsqueeze needs axes (input 1 or attribute 'axes')");
  if ((int64_t)x->rank + axes.n > DML_MAX_RANK)
    return fail(c, INVALID, "output rank %d exceeds %d", (int)(x->rank + (int32_t)axes.n),
                DML_MAX_RANK);
  int32_t r = x->rank + (int32_t)axes.n;
  DML_RETURN_IF_ERROR(axes_mask(c, &axes, r, mask));
  dml_type_t o = mk(x->dtype, r);
  for (int32_t i = 0, k = 0; i < r; i++) o.dims[i] = mask[i] ? D(1) : x->dims[k++];
  set_out(c, 0, &o);
  return pass_sym(c, 0);
}

static dml_status_t infer_transpose(ictx_t *c) {
  const dml_type_t *x = in_t(c, 0);
  const int64_t *perm;
  size_t n;
  DML_RETURN_IF_ERROR(attr_ints(c, "perm", &perm, &n));
  dml_type_t o = mk(x->dtype, x->rank);
  if (!perm) {
    for (int32_t i = 0; i < x->rank; i++) o.dims[i] = x->dims[x->rank - 1 - i];
  } else {
    if (n != (size_t)x->rank)
      return fail(c, INVALID, "perm has %zu values for rank %d", n, (int)x->rank);
    int seen[DML_MAX_RANK] = {0};
    for (size_t i = 0; i < n; i++) {
      if (perm[i] < 0 || perm[i] >= x->rank || seen[perm[i]])
        return fail(c, INVALID, "perm is not a permutation of 0..%d (value %lld at %zu)",
                    (int)x->rank - 1, (long long)perm[i], i);
      seen[perm[i]] = 1;
      o.dims[i] = x->dims[perm[i]];
    }
  }
  set_out(c, 0, &o);
  /* Known contents of a small static integer tensor move with it (the
   * [[pad_begin, pad_end], ...] table of torchvision's image padding). */
  pelems_t e, r;
  if (dml_type_is_static(x) && pelems_of(c, in_v(c, 0), &e) &&
      dml_ir_type_numel_bound(c->m, x) == (int64_t)e.n) {
    int32_t src_axis[DML_MAX_RANK];
    for (int32_t i = 0; i < x->rank; i++)
      src_axis[i] = perm ? (int32_t)perm[i] : x->rank - 1 - i;
    r.n = e.n;
    for (uint32_t k = 0; k < e.n; k++) { /* k: output index, row-major */
      int64_t rem = k, src = 0, idx[DML_MAX_RANK];
      for (int32_t d = x->rank - 1; d >= 0; d--) {
        idx[d] = rem % o.dims[d].value;
        rem /= o.dims[d].value;
      }
      for (int32_t d = 0; d < x->rank; d++) {
        int64_t j = 0;
        for (int32_t i = 0; i < x->rank; i++)
          if (src_axis[i] == d) j = idx[i];
        src = src * x->dims[d].value + j;
      }
      r.e[k] = e.e[src];
      r.unk[k] = e.unk[src];
      r.m[k] = e.m[src];
    }
    return set_psym(c, 0, &r);
  }
  return DML_OK;
}

/* 1 when `d` is a multiple of a data-dependent symbol. */
static int dim_dd(const ictx_t *c, dml_dim_t d) {
  return d.sym >= 0 && (c->m->symbols[d.sym].flags & DML_IR_SYMBOL_DATA_DEPENDENT);
}

static dml_status_t infer_concat(ictx_t *c) {
  const dml_type_t *x = in_t(c, 0);
  DML_RETURN_IF_ERROR(need_rank(c, 0, 1, DML_MAX_RANK));
  const dml_attr_t *aa = dml_ir_node_attr(c->n, "axis");
  if (!aa) return fail(c, INVALID, "attribute 'axis' is required");
  int64_t axis = 0;
  int32_t ax = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "axis", 0, &axis));
  DML_RETURN_IF_ERROR(norm_axis(c, axis, x->rank, "axis", &ax));
  dml_type_t o = *x;
  char s1[TBUF], s2[TBUF];
  int64_t dd_sum = -1; /* >= 0: the bound of a data-dependent sum */
  for (uint32_t i = 1; i < c->n->n_inputs; i++) {
    const dml_type_t *t = in_t(c, i);
    if (!t) return fail(c, INVALID, "input %u is missing", i);
    DML_RETURN_IF_ERROR(same_dtype(c, 0, i));
    if (t->rank != x->rank)
      return fail(c, INVALID, "input %u %s has a different rank than input 0 %s", i,
                  TS(t, s1), TS(x, s2));
    for (int32_t d = 0; d < x->rank; d++) {
      if (d == ax) continue;
      if (!dim_eq(t->dims[d], x->dims[d]))
        return fail(c, INVALID, "input %u %s differs from input 0 %s in dim %d", i,
                    TS(t, s1), TS(x, s2), (int)d);
    }
    dml_dim_t sum, a0 = o.dims[ax], b0 = t->dims[ax];
    if (a0.sym < 0) a0 = t->dims[ax], b0 = o.dims[ax];
    if (dd_sum >= 0) {
      dd_sum = sat_add(dd_sum, dim_max(c, t->dims[ax]));
    } else if (dim_add(o.dims[ax], t->dims[ax], &sum)) {
      o.dims[ax] = sum;
    } else if (a0.sym >= 0 && b0.sym < 0) { /* H + k: a derived dim */
      DML_RETURN_IF_ERROR(
          derived_extent(c, a0, 1, b0.value, 1, "the concatenated extent", &o.dims[ax]));
    } else if (dim_dd(c, o.dims[ax]) || dim_dd(c, t->dims[ax])) {
      /* A sum of data-dependent extents (per-class detections after TopK):
       * a data-dependent dim bounded by the sum of the bounds, which the
       * CPU's shape rule sums at run time (cpu_outdims.c dims_concat). */
      dd_sum =
          sat_add(dd_sum < 0 ? dim_max(c, o.dims[ax]) : dd_sum, dim_max(c, t->dims[ax]));
    } else {
      return fail(c, UNIMPL,
                  "the concatenated dim %d (adding %s) is not expressible as a bounded "
                  "dim (a sum of two symbols)",
                  (int)ax, TS(t, s1));
    }
  }
  if (dd_sum >= 0) {
    /* An earlier Concat of the same extents (boxes and scores of the same
     * detections) gave the sum a symbol already: the same one. */
    for (const dml_ir_node_t *n = c->n->func ? c->n->func->first : NULL; n && n != c->n;
         n = n->next) {
      const dml_type_t *no = n->n_outputs ? &n->outputs[0]->type : NULL;
      const dml_attr_t *na = dml_ir_node_attr(n, "axis");
      if (n->op != DML_OP_CONCAT || n->n_inputs != c->n->n_inputs || !no || !na ||
          na->kind != DML_ATTR_INT || na->i < -(int64_t)no->rank || na->i >= no->rank)
        continue;
      int32_t an = (int32_t)(na->i < 0 ? na->i + no->rank : na->i);
      int same = dim_dd(c, no->dims[an]);
      for (uint32_t i = 0; same && i < n->n_inputs; i++)
        same = n->inputs[i] && n->inputs[i]->type.rank == no->rank &&
               dim_eq(n->inputs[i]->type.dims[an], in_t(c, i)->dims[ax]);
      if (!same) continue;
      o.dims[ax] = no->dims[an];
      set_out(c, 0, &o);
      return DML_OK;
    }
    int dyn[DML_MAX_RANK] = {0};
    int64_t b[DML_MAX_RANK];
    for (int32_t d = 0; d < o.rank; d++) b[d] = dim_max(c, o.dims[d]);
    dyn[ax] = 1, b[ax] = dd_sum;
    return set_out_dyn(c, 0, o, dyn, b);
  }
  set_out(c, 0, &o);
  /* Known (or partly known) contents of 1-D integer inputs concatenate. */
  if (x->rank == 1 && dml_dtype_is_int(x->dtype)) {
    pelems_t all;
    all.n = 0;
    for (uint32_t i = 0; i < c->n->n_inputs; i++) {
      pelems_t e;
      if (!pelems_of(c, in_v(c, i), &e) || all.n + e.n > MAX_ELEMS) return DML_OK;
      memcpy(all.e + all.n, e.e, sizeof(dml_dim_t) * e.n);
      memcpy(all.unk + all.n, e.unk, e.n);
      memcpy(all.m + all.n, e.m, sizeof(dml_dim_t) * e.n);
      all.n += e.n;
    }
    return set_psym(c, 0, &all);
  }
  return DML_OK;
}

static dml_status_t infer_split(ictx_t *c) {
  const dml_type_t *x = in_t(c, 0);
  DML_RETURN_IF_ERROR(need_rank(c, 0, 1, DML_MAX_RANK));
  int64_t axis = 0, num_outputs = 0;
  int32_t ax = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "axis", 0, &axis));
  DML_RETURN_IF_ERROR(norm_axis(c, axis, x->rank, "axis", &ax));
  DML_RETURN_IF_ERROR(attr_int(c, "num_outputs", 0, &num_outputs));
  uint32_t nout = c->n->n_outputs;
  dml_dim_t d = x->dims[ax];
  char tb[TBUF], db[64];
  elems_t sp;
  int has = 0;
  if (in_v(c, 1) && elems_runtime(c, 1)) { /* each output's axis dim <= d */
    uint32_t n = 0;
    DML_RETURN_IF_ERROR(runtime_len(c, 1, "split", &n));
    if (n != nout) return fail(c, INVALID, "split has %u sizes for %u outputs", n, nout);
    int dyn[DML_MAX_RANK] = {0};
    int64_t b[DML_MAX_RANK];
    dyn[ax] = 1;
    b[ax] = dim_max(c, d);
    for (uint32_t i = 0; i < nout; i++)
      DML_RETURN_IF_ERROR(set_out_dyn(c, i, *x, dyn, b));
    return DML_OK;
  }
  if (in_v(c, 1)) {
    DML_RETURN_IF_ERROR(need_elems(c, 1, "split", 1, &sp));
    has = 1;
  } else {
    const int64_t *a;
    size_t n;
    DML_RETURN_IF_ERROR(attr_ints(c, "split", &a, &n));
    if (a) {
      if (n > MAX_ELEMS) return fail(c, INVALID, "attribute 'split' has %zu values", n);
      sp.n = (uint32_t)n;
      for (size_t i = 0; i < n; i++) sp.e[i] = D(a[i]);
      has = 1;
    }
  }
  dml_type_t o = *x;
  if (has) {
    if (sp.n != nout)
      return fail(c, INVALID, "split has %u sizes for %u outputs", sp.n, nout);
    dml_dim_t sum = D(0);
    for (uint32_t i = 0; i < sp.n; i++) {
      if (sp.e[i].value < 0)
        return fail(c, INVALID, "split size %lld at %u is negative",
                    (long long)sp.e[i].value, i);
      if (!dim_add(sum, sp.e[i], &sum))
        return fail(c, UNIMPL, "the split sizes do not add up to a value*symbol dim");
    }
    if (!dim_eq(sum, d)) {
      char eb[512], sb[64];
      return fail(c, INVALID, "split sizes %s add up to %s, but dim %d of %s is %s",
                  elems_str(c, &sp, eb, sizeof(eb)), dim_str(c, sum, sb, sizeof(sb)),
                  (int)ax, TS(x, tb), dim_str(c, d, db, sizeof(db)));
    }
    for (uint32_t i = 0; i < nout; i++) {
      o.dims[ax] = sp.e[i];
      set_out(c, i, &o);
    }
    return DML_OK;
  }
  if (num_outputs && num_outputs != (int64_t)nout)
    return fail(c, INVALID, "num_outputs %lld differs from the node's %u outputs",
                (long long)num_outputs, nout);
  if (d.sym >= 0) {
    if (d.value % (int64_t)nout != 0)
      return fail(c, UNIMPL,
                  "splitting dim %d of %s into %u equal parts is not expressible as "
                  "value*symbol",
                  (int)ax, TS(x, tb), nout);
    o.dims[ax] = DS(d.value / (int64_t)nout, d.sym);
    for (uint32_t i = 0; i < nout; i++) set_out(c, i, &o);
    return DML_OK;
  }
  /* opset 18: chunks of ceil(d/n), the last one smaller. */
  int64_t chunk = d.value / (int64_t)nout + (d.value % (int64_t)nout != 0);
  if (chunk * ((int64_t)nout - 1) > d.value)
    return fail(c, INVALID, "dim %d of %s is too small to split into %u parts", (int)ax,
                TS(x, tb), nout);
  for (uint32_t i = 0; i < nout; i++) {
    o.dims[ax] = D(i + 1 < nout ? chunk : d.value - chunk * ((int64_t)nout - 1));
    set_out(c, i, &o);
  }
  return DML_OK;
}

/* ONNX Slice clamping on a static extent: dml_shape_slice() (dml_shape.h),
 * the CPU kernel's and the run-time rule's too. */
static int64_t slice_static(int64_t dim, int64_t st, int64_t en, int64_t step,
                            int64_t *first) {
  return dml_shape_slice(dim, st, en, step, first);
}

/* Extent of slicing `d`; 0 when not representable (symbolic d or bounds). */
static int slice_len(const ictx_t *c, dml_dim_t d, dml_dim_t st, dml_dim_t en,
                     int64_t step, dml_dim_t *out) {
  if (d.sym < 0 && st.sym < 0 && en.sym < 0) {
    int64_t first;
    *out = D(slice_static(d.value, st.value, en.value, step, &first));
    return 1;
  }
  /* A static extent from 0 to a symbolic end that never exceeds it (a
   * position table [1,512] cut to the sequence length): the end itself. */
  if (d.sym < 0 && st.sym < 0 && st.value == 0 && en.sym >= 0 && step == 1 &&
      en.value > 0 && dim_max(c, en) <= d.value)
    return *out = en, 1;
  /* From 0 to S of an extent S + k (k >= 0, a derived symbol: Whisper's
   * decoder ids [batch,dec_seq+1][:, :dec_seq]): S. */
  if (d.sym >= 0 && d.value == 1 && en.sym >= 0 && en.value == 1 && st.sym < 0 &&
      st.value == 0 && step == 1) {
    const dml_ir_symbol_t *s = &c->m->symbols[d.sym];
    if ((s->flags & DML_IR_SYMBOL_DERIVED) && s->src[0] == en.sym && s->src[1] < 0 &&
        s->mul == 1 && s->div == 1 && s->add >= 0)
      return *out = en, 1;
  }
  if (d.sym < 0) return 0;
  int64_t mx = dim_max(c, d);
  if (step == 1) {
    int from0 = st.sym < 0 && (st.value == 0 || st.value <= -mx);
    int to_end = (en.sym < 0 && en.value >= mx) || dim_eq(en, d);
    if (from0 && to_end) return *out = d, 1;
  } else if (step == -1) {
    int from_last = st.sym < 0 && (st.value == -1 || st.value >= mx - 1);
    int to_begin = en.sym < 0 && en.value < -mx;
    if (from_last && to_begin) return *out = d, 1;
  }
  return 0;
}

/* Slicing symbolic `d` with step k >= 1 from a static start s >= 0 to its
 * end, or to m before its end (end -m): ceil((d - m - s) / k), a derived
 * dim (*ok = 1, errors of derived_extent); to a static end e no larger than
 * d's promised minimum (--input-shape MIN): the static ceil((e - s) / k).
 * *ok = 0 when not of these forms. */
static dml_status_t slice_len_sym(ictx_t *c, dml_dim_t d, dml_dim_t st, dml_dim_t en,
                                  int64_t k, dml_dim_t *out, int *ok) {
  *ok = 0;
  if (d.sym < 0 || st.sym >= 0 || k < 1) return DML_OK;
  int64_t mx = dim_max(c, d), m = 0, mn = 0;
  if (st.value < 0 || st.value >= mx) return DML_OK;
  if (__builtin_mul_overflow(d.value, dml_ir_symbol_min(c->m, d.sym), &mn)) mn = 0;
  if (en.sym < 0 && en.value > st.value && en.value <= mn) { /* inside every size */
    *ok = 1;
    *out = D((en.value - st.value + k - 1) / k);
    return DML_OK;
  }
  if (en.sym < 0 && en.value < 0 && en.value > -mx)
    m = -en.value;
  else if (!((en.sym < 0 && en.value >= mx) || dim_eq(en, d)))
    return DML_OK;
  *ok = 1;
  return derived_extent(c, d, 1, k - 1 - m - st.value, k, "the sliced extent", out);
}

static dml_status_t infer_slice(ictx_t *c) {
  const dml_type_t *x = in_t(c, 0);
  elems_t st, en, ax, sp;
  if (elems_runtime(c, 1) || elems_runtime(c, 2) || elems_runtime(c, 3) ||
      elems_runtime(c, 4)) {
    /* The sliced dims (all, unless axes is known) are <= the input's. */
    int dyn[DML_MAX_RANK] = {0};
    int64_t b[DML_MAX_RANK];
    int known_axes = in_v(c, 3) && !elems_runtime(c, 3);
    if (known_axes) {
      DML_RETURN_IF_ERROR(need_elems(c, 3, "axes", 0, &ax));
      for (uint32_t i = 0; i < ax.n; i++) {
        int32_t a = 0;
        DML_RETURN_IF_ERROR(norm_axis(c, ax.e[i].value, x->rank, "axis", &a));
        dyn[a] = 1;
      }
    }
    for (int32_t d = 0; d < x->rank; d++) {
      if (!known_axes) dyn[d] = 1;
      b[d] = dim_max(c, x->dims[d]);
    }
    return set_out_dyn(c, 0, *x, dyn, b);
  }
  DML_RETURN_IF_ERROR(need_elems(c, 1, "starts", 1, &st));
  DML_RETURN_IF_ERROR(need_elems(c, 2, "ends", 1, &en));
  if (st.n != en.n)
    return fail(c, INVALID, "starts has %u values but ends has %u", st.n, en.n);
  if (in_v(c, 3)) {
    DML_RETURN_IF_ERROR(need_elems(c, 3, "axes", 0, &ax));
    if (ax.n != st.n)
      return fail(c, INVALID, "axes has %u values, starts %u", ax.n, st.n);
  } else {
    if (st.n > (uint32_t)x->rank)
      return fail(c, INVALID, "starts has %u values for rank %d", st.n, (int)x->rank);
    ax.n = st.n;
    for (uint32_t i = 0; i < st.n; i++) ax.e[i] = D(i);
  }
  if (in_v(c, 4)) {
    DML_RETURN_IF_ERROR(need_elems(c, 4, "steps", 0, &sp));
    if (sp.n != st.n)
      return fail(c, INVALID, "steps has %u values, starts %u", sp.n, st.n);
  } else {
    sp.n = st.n;
    for (uint32_t i = 0; i < st.n; i++) sp.e[i] = D(1);
  }
  int mask[DML_MAX_RANK];
  DML_RETURN_IF_ERROR(axes_mask(c, &ax, x->rank, mask));
  dml_type_t o = *x;
  int64_t first[DML_MAX_RANK], stepd[DML_MAX_RANK];
  int all_static = 1; /* every sliced axis static with static starts/ends */
  int sdyn[DML_MAX_RANK] = {0}, any_dyn = 0;
  int64_t sbound[DML_MAX_RANK];
  for (int32_t d = 0; d < DML_MAX_RANK; d++) sbound[d] = 1;
  for (int32_t d = 0; d < DML_MAX_RANK; d++) first[d] = 0, stepd[d] = 1;
  for (uint32_t i = 0; i < st.n; i++) {
    int32_t a = 0;
    DML_RETURN_IF_ERROR(norm_axis(c, ax.e[i].value, x->rank, "axis", &a));
    int64_t step = sp.e[i].value;
    if (step == 0) return fail(c, INVALID, "step %u is 0", i);
    int sym_ok = 0;
    if (!slice_len(c, x->dims[a], st.e[i], en.e[i], step, &o.dims[a]))
      DML_RETURN_IF_ERROR(
          slice_len_sym(c, x->dims[a], st.e[i], en.e[i], step, &o.dims[a], &sym_ok));
    else
      sym_ok = 1;
    if (!sym_ok && dim_dd(c, x->dims[a])) {
      /* Of a data-dependent extent (the first 300 detections): a
       * data-dependent extent, no larger than the slice at the bound, which
       * the CPU's shape rule computes at run time (cpu_outdims.c). */
      int64_t f0 = 0, mx = dim_max(c, x->dims[a]);
      sdyn[a] = 1;
      sbound[a] = st.e[i].sym < 0 && en.e[i].sym < 0
                      ? slice_static(mx, st.e[i].value, en.e[i].value, step, &f0)
                      : mx;
      any_dyn = 1;
      sym_ok = 1;
    }
    if (!sym_ok) {
      char tb[TBUF], b1[64], b2[64];
      return fail(
          c, UNIMPL,
          "Slice of dim %d of %s from %s to %s step %lld: on a symbolic dim only the "
          "full range, a static start to the end (or to -m) with a positive step, or "
          "an end within the smallest size promised (--input-shape MIN) is "
          "expressible",
          (int)a, TS(x, tb), dim_str(c, st.e[i], b1, sizeof(b1)),
          dim_str(c, en.e[i], b2, sizeof(b2)), (long long)step);
    }
    if (x->dims[a].sym < 0 && st.e[i].sym < 0 && en.e[i].sym < 0) {
      slice_static(x->dims[a].value, st.e[i].value, en.e[i].value, step, &first[a]);
      stepd[a] = step;
    } else {
      all_static = 0;
    }
  }
  if (any_dyn) return set_out_dyn(c, 0, o, sdyn, sbound);
  set_out(c, 0, &o);
  /* Known (or partly known) contents of a small static input slice along
   * with it (row-major; the pads table of torchvision's image padding is
   * sliced with step -1). */
  pelems_t e, r;
  int64_t on = dml_ir_type_numel_bound(c->m, &o);
  if (all_static && dml_type_is_static(x) && dml_type_is_static(&o) &&
      pelems_of(c, in_v(c, 0), &e) && dml_ir_type_numel_bound(c->m, x) == (int64_t)e.n &&
      on >= 0 && on <= MAX_ELEMS) {
    r.n = (uint32_t)on;
    for (int64_t k = 0; k < on; k++) {
      int64_t rem = k, src = 0, idx[DML_MAX_RANK];
      for (int32_t d = o.rank - 1; d >= 0; d--) {
        idx[d] = rem % o.dims[d].value;
        rem /= o.dims[d].value;
      }
      for (int32_t d = 0; d < x->rank; d++)
        src = src * x->dims[d].value + first[d] + idx[d] * stepd[d];
      r.e[k] = e.e[src];
      r.unk[k] = e.unk[src];
      r.m[k] = e.m[src];
    }
    return set_psym(c, 0, &r);
  }
  return DML_OK;
}

static dml_status_t infer_gather(ictx_t *c) {
  const dml_type_t *x = in_t(c, 0), *idx = in_t(c, 1);
  DML_RETURN_IF_ERROR(need_rank(c, 0, 1, DML_MAX_RANK));
  DML_RETURN_IF_ERROR(need_dtype(c, 1, DT_INDEX));
  int64_t axis = 0;
  int32_t ax = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "axis", 0, &axis));
  DML_RETURN_IF_ERROR(norm_axis(c, axis, x->rank, "axis", &ax));
  int32_t r = x->rank - 1 + idx->rank;
  if (r > DML_MAX_RANK)
    return fail(c, INVALID, "output rank %d exceeds %d", (int)r, DML_MAX_RANK);
  dml_type_t o = mk(x->dtype, 0);
  for (int32_t i = 0; i < ax; i++) o.dims[o.rank++] = x->dims[i];
  for (int32_t i = 0; i < idx->rank; i++) o.dims[o.rank++] = idx->dims[i];
  for (int32_t i = ax + 1; i < x->rank; i++) o.dims[o.rank++] = x->dims[i];
  set_out(c, 0, &o);
  /* Constant indices into known 1-D contents (e.g. Shape(x)[0]). */
  elems_t e, ie;
  if (x->rank == 1 && elems_of(c, in_v(c, 0), &e) == 1 &&
      elems_of(c, in_v(c, 1), &ie) == 1) {
    dml_dim_t res[MAX_ELEMS];
    for (uint32_t i = 0; i < ie.n; i++) {
      int64_t k = ie.e[i].value;
      if (ie.e[i].sym >= 0) return DML_OK;
      if (k < -(int64_t)e.n || k >= (int64_t)e.n)
        return fail(c, INVALID, "index %lld is out of range for %u elements",
                    (long long)k, e.n);
      res[i] = e.e[k < 0 ? k + e.n : k];
    }
    return set_sym(c, 0, res, ie.n);
  }
  return DML_OK;
}

static dml_status_t infer_shape(ictx_t *c) {
  const dml_type_t *x = in_t(c, 0);
  int64_t start = 0, end = x->rank;
  DML_RETURN_IF_ERROR(attr_int(c, "start", 0, &start));
  DML_RETURN_IF_ERROR(attr_int(c, "end", x->rank, &end));
  if (start < 0) start += x->rank;
  if (end < 0) end += x->rank;
  start = start < 0 ? 0 : start > x->rank ? x->rank : start;
  end = end < 0 ? 0 : end > x->rank ? x->rank : end;
  int64_t n = end > start ? end - start : 0;
  dml_type_t o = mk(DML_DTYPE_I64, 1);
  o.dims[0] = D(n);
  set_out(c, 0, &o);
  return set_sym(c, 0, x->dims + start, (uint32_t)n);
}

static dml_status_t infer_size(ictx_t *c) {
  dml_type_t o = mk(DML_DTYPE_I64, 0);
  set_out(c, 0, &o);
  mono_t p;
  dml_dim_t d;
  if (mono_of(in_t(c, 0), 0, in_t(c, 0)->rank, &p) && mono_to_dim(&p, &d))
    return set_sym(c, 0, &d, 1);
  return DML_OK;
}

/* A shape from known elements (ConstantOfShape, Expand). */
static dml_status_t shape_from_elems(const ictx_t *c, const elems_t *e, dml_dtype_t dt,
                                     dml_type_t *out) {
  char eb[512];
  if (e->n > DML_MAX_RANK)
    return fail(c, INVALID, "shape %s has rank %u > %d", elems_str(c, e, eb, sizeof(eb)),
                e->n, DML_MAX_RANK);
  *out = mk(dt, (int32_t)e->n);
  for (uint32_t i = 0; i < e->n; i++) {
    if (e->e[i].value < 0)
      return fail(c, INVALID, "shape %s has a negative dim",
                  elems_str(c, e, eb, sizeof(eb)));
    out->dims[i] = e->e[i];
  }
  return DML_OK;
}

static dml_status_t infer_expand(ictx_t *c) {
  elems_t e;
  dml_type_t target, o;
  DML_RETURN_IF_ERROR(need_rank(c, 1, 1, 1));
  if (elems_runtime(c, 1)) {
    /* broadcast(x, shape): a static dim of x other than 1 stays; the
     * others are data-dependent. */
    const dml_type_t *x = in_t(c, 0);
    uint32_t n = 0;
    DML_RETURN_IF_ERROR(runtime_len(c, 1, "shape", &n));
    int32_t r = x->rank > (int32_t)n ? x->rank : (int32_t)n;
    if (r > DML_MAX_RANK)
      return fail(c, INVALID, "output rank %d exceeds %d", (int)r, DML_MAX_RANK);
    o = mk(x->dtype, r);
    int dyn[DML_MAX_RANK] = {0};
    int64_t b[DML_MAX_RANK];
    for (int32_t d = 0; d < r; d++) {
      int32_t ix = d - (r - x->rank);
      if (ix >= 0 && x->dims[ix].sym < 0 && x->dims[ix].value != 1) {
        o.dims[d] = x->dims[ix];
        continue;
      }
      dyn[d] = 1;
      b[d] = ix >= 0 && dim_max(c, x->dims[ix]) > dyn_bound(c) ? dim_max(c, x->dims[ix])
                                                               : dyn_bound(c);
    }
    return set_out_dyn(c, 0, o, dyn, b);
  }
  DML_RETURN_IF_ERROR(need_elems(c, 1, "shape", 1, &e));
  DML_RETURN_IF_ERROR(shape_from_elems(c, &e, in_t(c, 0)->dtype, &target));
  DML_RETURN_IF_ERROR(bcast(c, in_t(c, 0), &target, &o));
  set_out(c, 0, &o);
  /* Known elements of a small integer x carry over, broadcast (torch.onnx's
   * dynamo exporter without its optimizer writes a Conv's zero bias as
   * Expand(0, Expand(Shape(weight)[0:1], [1])): the bias length is a
   * shape). */
  elems_t ex;
  if (dml_dtype_is_int(o.dtype) && o.rank <= 1 && dml_type_is_static(&o) &&
      elems_of(c, in_v(c, 0), &ex) == 1 && ex.n) {
    uint32_t n = o.rank ? (uint32_t)o.dims[0].value : 1;
    if (n <= MAX_ELEMS && (ex.n == 1 || ex.n == n)) {
      dml_dim_t r[MAX_ELEMS];
      for (uint32_t i = 0; i < n; i++) r[i] = ex.e[ex.n == 1 ? 0 : i];
      return set_sym(c, 0, r, n);
    }
  }
  return DML_OK;
}

static dml_status_t infer_tile(ictx_t *c) {
  const dml_type_t *x = in_t(c, 0);
  elems_t e;
  DML_RETURN_IF_ERROR(need_rank(c, 1, 1, 1));
  if (elems_runtime(c, 1)) { /* dim * repeats, repeats <= the dim bound */
    int dyn[DML_MAX_RANK];
    int64_t b[DML_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++) {
      int64_t m = dim_max(c, x->dims[d]);
      dyn[d] = 1;
      b[d] = sat_mul(m > 1 ? m : 1, dyn_bound(c));
    }
    return set_out_dyn(c, 0, *x, dyn, b);
  }
  DML_RETURN_IF_ERROR(need_elems(c, 1, "repeats", 1, &e));
  if (e.n != (uint32_t)x->rank)
    return fail(c, INVALID, "repeats has %u values for rank %d", e.n, (int)x->rank);
  dml_type_t o = *x;
  for (int32_t i = 0; i < x->rank; i++) {
    if (e.e[i].value < 0)
      return fail(c, INVALID, "repeats[%d] = %lld is negative", (int)i,
                  (long long)e.e[i].value);
    int ok;
    if (x->dims[i].sym < 0 && e.e[i].sym < 0) { /* dml_shape.h's rule, as the CPU's */
      int64_t v = 0;
      ok = dml_shape_tile_extent(x->dims[i].value, e.e[i].value, &v) == DML_SHAPE_OK;
      o.dims[i] = D(v);
    } else {
      ok = dim_mul(x->dims[i], e.e[i], &o.dims[i]);
    }
    if (!ok) {
      char tb[TBUF];
      return fail(c, UNIMPL,
                  "tiling dim %d of %s gives a product of symbols or overflows", (int)i,
                  TS(x, tb));
    }
  }
  set_out(c, 0, &o);
  return DML_OK;
}

/* Dim `i` of `x` padded by `b` before and `e` after. */
static dml_status_t pad_dim(ictx_t *c, const dml_type_t *x, int32_t i, int64_t b,
                            int64_t e, dml_dim_t *out) {
  int64_t s, r;
  char tb[TBUF];
  if (x->dims[i].sym >= 0) { /* H + s: a derived dim */
    if (__builtin_add_overflow(b, e, &s))
      return fail(c, INVALID, "pads of dim %d overflow", (int)i);
    *out = x->dims[i];
    if (s != 0)
      DML_RETURN_IF_ERROR(
          derived_extent(c, x->dims[i], 1, s, 1, "the padded extent", out));
    return DML_OK;
  }
  /* dml_shape.h's rule, as the CPU's run-time one */
  if (dml_shape_pad_extent(x->dims[i].value, b, e, &r) != DML_SHAPE_OK)
    return fail(c, INVALID,
                "padding dim %d of %s by (%lld, %lld) gives a negative or "
                "overflowing extent",
                (int)i, TS(x, tb), (long long)b, (long long)e);
  *out = D(r);
  return DML_OK;
}

static dml_status_t infer_pad(ictx_t *c) {
  const dml_type_t *x = in_t(c, 0);
  elems_t p;
  if (elems_runtime(c, 1)) { /* dim + pads, the pads' sum <= the dim bound */
    if (in_t(c, 2)) DML_RETURN_IF_ERROR(same_dtype(c, 0, 2));
    int dyn[DML_MAX_RANK];
    int64_t b[DML_MAX_RANK];
    dml_type_t o = *x;
    /* Dims whose two pads are known constants stay as pad_dim gives them
     * (the channel pads, 0, of an image padded to a multiple of 32). */
    pelems_t pp;
    int part = pelems_of(c, in_v(c, 1), &pp) && pp.n == 2 * (uint32_t)x->rank;
    for (int32_t d = 0; d < x->rank; d++) {
      dyn[d] = 1, b[d] = sat_add(dim_max(c, x->dims[d]), dyn_bound(c));
      if (!part) continue;
      uint32_t ib = (uint32_t)d, ie = (uint32_t)(x->rank + d);
      if (!pp.unk[ib] && !pp.unk[ie] && pp.e[ib].sym < 0 && pp.e[ie].sym < 0) {
        DML_RETURN_IF_ERROR(pad_dim(c, x, d, pp.e[ib].value, pp.e[ie].value, &o.dims[d]));
        dyn[d] = 0;
        continue;
      }
      /* dim + k + (A - dim) = A + k: a pad up to a size A computed from the
       * dim (one pad a static k, the other the difference). */
      for (int side = 0; side < 2; side++) {
        uint32_t i = side ? ie : ib, j = side ? ib : ie;
        if (pp.unk[i] != 2 || !dim_eq(pp.m[i], x->dims[d]) || pp.unk[j] ||
            pp.e[j].sym >= 0)
          continue;
        dml_dim_t a = pp.e[i];
        int ok = 1;
        if (pp.e[j].value != 0)
          DML_RETURN_IF_ERROR(
              sym_arith_derived(c, DML_OP_ADD, a, pp.e[j], &o.dims[d], &ok));
        else
          o.dims[d] = a;
        if (ok && (o.dims[d].sym >= 0 || o.dims[d].value >= 0)) {
          dyn[d] = 0;
          break;
        }
      }
    }
    return set_out_dyn(c, 0, o, dyn, b);
  }
  DML_RETURN_IF_ERROR(need_elems(c, 1, "pads", 0, &p));
  if (in_t(c, 2)) DML_RETURN_IF_ERROR(same_dtype(c, 0, 2));
  if (p.n != 2 * (uint32_t)x->rank)
    return fail(c, INVALID, "pads has %u values for rank %d (needs %d)", p.n,
                (int)x->rank, 2 * (int)x->rank);
  const char *mode = "constant";
  DML_RETURN_IF_ERROR(attr_string(c, "mode", "constant", &mode));
  if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge") &&
      strcmp(mode, "wrap"))
    return fail(c, INVALID, "mode \"%s\" is not constant, reflect, edge or wrap", mode);
  dml_type_t o = *x;
  for (int32_t i = 0; i < x->rank; i++)
    DML_RETURN_IF_ERROR(
        pad_dim(c, x, i, p.e[i].value, p.e[x->rank + i].value, &o.dims[i]));
  set_out(c, 0, &o);
  return DML_OK;
}

static dml_status_t infer_constant_of_shape(ictx_t *c) {
  elems_t e;
  DML_RETURN_IF_ERROR(need_rank(c, 0, 1, 1));
  dml_dtype_t dt = DML_DTYPE_F32;
  const dml_attr_t *v = dml_ir_node_attr(c->n, "value");
  if (v) {
    if (v->kind != DML_ATTR_TENSOR)
      return fail(c, INVALID, "attribute 'value' must be a tensor, got %s",
                  dml_attr_kind_name(v->kind));
    if (dml_dtype_size(v->tensor.dtype) == 0)
      return fail(c, INVALID, "attribute 'value' has an invalid dtype");
    if (dml_dims_numel(v->tensor.dims, v->tensor.rank < 0 || v->tensor.rank > DML_MAX_RANK
                                           ? 0
                                           : v->tensor.rank) != 1 ||
        v->tensor.rank < 0 || v->tensor.rank > 1)
      return fail(c, INVALID, "attribute 'value' must hold one element");
    dt = v->tensor.dtype;
  }
  if (elems_runtime(c, 0)) {
    uint32_t n = 0;
    DML_RETURN_IF_ERROR(runtime_len(c, 0, "shape", &n));
    return set_out_all_dyn(c, 0, dt, (int32_t)n, dyn_bound(c));
  }
  DML_RETURN_IF_ERROR(need_elems(c, 0, "shape", 1, &e));
  dml_type_t o;
  DML_RETURN_IF_ERROR(shape_from_elems(c, &e, dt, &o));
  set_out(c, 0, &o);
  /* A 1-D integer fill is known contents: ConstantOfShape(Sub(rank, axis))
   * builds the trailing ones of LayerNormalization's reduced shape. */
  if (o.rank == 1 && o.dims[0].sym < 0 && o.dims[0].value <= MAX_ELEMS &&
      dml_dtype_is_int(dt)) {
    int64_t fill = v && v->tensor.data ? dml_load_i64(dt, v->tensor.data, 0) : 0;
    dml_dim_t r[MAX_ELEMS];
    for (int64_t i = 0; i < o.dims[0].value; i++) r[i] = D(fill);
    return set_sym(c, 0, r, (uint32_t)o.dims[0].value);
  }
  return DML_OK;
}

static dml_status_t infer_range(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_SIGNED_OR_FLOAT));
  DML_RETURN_IF_ERROR(same_dtype(c, 0, 1));
  DML_RETURN_IF_ERROR(same_dtype(c, 0, 2));
  for (uint32_t i = 0; i < 3; i++) {
    const dml_type_t *t = in_t(c, i);
    if (t->rank > 1 || dml_ir_type_numel_bound(c->m, t) != 1) {
      char tb[TBUF];
      return fail(c, INVALID, "input %u must be a scalar, got %s", i, TS(t, tb));
    }
  }
  dml_dtype_t dt = in_t(c, 0)->dtype;
  dml_type_t o = mk(dt, 1);
  if (dml_dtype_is_int(dt)) {
    elems_t e[3];
    static const char *const names[3] = {"start", "limit", "delta"};
    if (elems_runtime(c, 0) || elems_runtime(c, 1) || elems_runtime(c, 2))
      return set_out_all_dyn(c, 0, dt, 1, dyn_bound(c));
    for (uint32_t i = 0; i < 3; i++)
      DML_RETURN_IF_ERROR(need_elems(c, i, names[i], 1, &e[i]));
    dml_dim_t s = e[0].e[0], l = e[1].e[0], d = e[2].e[0];
    if (d.sym >= 0 || d.value == 0)
      return fail(c, d.value == 0 ? INVALID : UNIMPL,
                  "Range delta must be a non-zero constant");
    if (s.sym < 0 && l.sym < 0) {
      int64_t n;
      if (dml_shape_range_count_i64(s.value, l.value, d.value, &n))
        return fail(c, INVALID, "Range length overflows");
      o.dims[0] = D(n);
      set_out(c, 0, &o);
      if (n <= MAX_ELEMS) {
        dml_dim_t r[MAX_ELEMS];
        for (int64_t i = 0; i < (int64_t)n; i++) r[i] = D(s.value + i * d.value);
        return set_sym(c, 0, r, (uint32_t)n);
      }
      return DML_OK;
    }
    /* Range(0, k*S, delta) with delta | k: (k/delta)*S elements. */
    if (dim_is(s, 0) && l.sym >= 0 && d.value > 0 && l.value % d.value == 0) {
      o.dims[0] = DS(l.value / d.value, l.sym);
      set_out(c, 0, &o);
      return DML_OK;
    }
    char b1[64], b2[64];
    return fail(c, UNIMPL,
                "Range from %s to %s step %lld has a length that is not "
                "expressible as value*symbol",
                dim_str(c, s, b1, sizeof(b1)), dim_str(c, l, b2, sizeof(b2)),
                (long long)d.value);
  }
  double v[3];
  for (uint32_t i = 0; i < 3; i++) {
    uint32_t n = 0;
    int k = f64s_of(c, i, &v[i], 1, &n);
    if (k == 0) return set_out_all_dyn(c, 0, dt, 1, dyn_bound(c));
    if (k != 1 || n != 1) return fail(c, INVALID, "input %u must have one element", i);
  }
  int64_t n;
  if (dml_shape_range_count_f64(v[0], v[1], v[2], &n))
    return fail(c, INVALID, "Range start %g, limit %g, delta %g gives no valid length",
                v[0], v[1], v[2]);
  o.dims[0] = D(n);
  set_out(c, 0, &o);
  return DML_OK;
}

/* ==== indexing, sampling, Einsum (issue #3) ============================= */

/* An optional string attribute that must be one of `allowed` (NULL-ended). */
static dml_status_t attr_choice(const ictx_t *c, const char *name, const char *dflt,
                                const char *const *allowed) {
  const char *s = dflt;
  DML_RETURN_IF_ERROR(attr_string(c, name, dflt, &s));
  for (const char *const *a = allowed; *a; a++)
    if (!strcmp(s, *a)) return DML_OK;
  return fail(c, INVALID, "attribute '%s' = \"%s\" is not supported", name, s);
}

/* Same rank and equal dims (dtypes may differ). */
static int same_shape(const dml_type_t *a, const dml_type_t *b) {
  if (a->rank != b->rank) return 0;
  for (int32_t d = 0; d < a->rank; d++)
    if (!dim_eq(a->dims[d], b->dims[d])) return 0;
  return 1;
}

static dml_status_t infer_gather_elements(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_rank(c, 0, 1, DML_MAX_RANK));
  DML_RETURN_IF_ERROR(need_dtype(c, 1, DT_INDEX));
  const dml_type_t *x = in_t(c, 0), *idx = in_t(c, 1);
  int64_t axis = 0;
  int32_t ax = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "axis", 0, &axis));
  DML_RETURN_IF_ERROR(norm_axis(c, axis, x->rank, "axis", &ax));
  if (idx->rank != x->rank)
    return fail(c, INVALID, "indices must have the data's rank %d", (int)x->rank);
  dml_type_t o = *idx;
  o.dtype = x->dtype;
  set_out(c, 0, &o);
  return DML_OK;
}

static dml_status_t infer_scatter_elements(ictx_t *c) {
  static const char *const reds[] = {"none", "add", "mul", "max", "min", NULL};
  DML_RETURN_IF_ERROR(need_rank(c, 0, 1, DML_MAX_RANK));
  DML_RETURN_IF_ERROR(need_dtype(c, 1, DT_INDEX));
  DML_RETURN_IF_ERROR(same_dtype(c, 0, 2));
  DML_RETURN_IF_ERROR(attr_choice(c, "reduction", "none", reds));
  const dml_type_t *x = in_t(c, 0), *idx = in_t(c, 1), *u = in_t(c, 2);
  int64_t axis = 0;
  int32_t ax = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "axis", 0, &axis));
  DML_RETURN_IF_ERROR(norm_axis(c, axis, x->rank, "axis", &ax));
  if (idx->rank != x->rank)
    return fail(c, INVALID, "indices must have the data's rank %d", (int)x->rank);
  if (!same_shape(u, idx)) {
    char ta[TBUF], tb[TBUF];
    return fail(c, INVALID, "updates %s must have the indices' shape %s", TS(u, ta),
                TS(idx, tb));
  }
  set_out(c, 0, x);
  return DML_OK;
}

/* GatherND/ScatterND: the static last dim m of indices (input 1). */
static dml_status_t nd_depth(const ictx_t *c, int64_t lo, int64_t hi, int64_t *out) {
  const dml_type_t *idx = in_t(c, 1);
  dml_dim_t m = idx->dims[idx->rank - 1];
  if (m.sym >= 0 || m.value < lo || m.value > hi) {
    char sb[64];
    return fail(c, m.sym >= 0 ? UNIMPL : INVALID,
                "indices' last dim %s must be a static value in [%lld, %lld]",
                dim_str(c, m, sb, sizeof(sb)), (long long)lo, (long long)hi);
  }
  *out = m.value;
  return DML_OK;
}

static dml_status_t infer_gather_nd(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_rank(c, 0, 1, DML_MAX_RANK));
  DML_RETURN_IF_ERROR(need_rank(c, 1, 1, DML_MAX_RANK));
  DML_RETURN_IF_ERROR(need_dtype(c, 1, DT_INDEX));
  const dml_type_t *x = in_t(c, 0), *idx = in_t(c, 1);
  int64_t b = 0, m = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "batch_dims", 0, &b));
  if (b < 0 || b >= idx->rank || b >= x->rank)
    return fail(c, INVALID, "batch_dims %lld must be below both ranks", (long long)b);
  for (int32_t d = 0; d < (int32_t)b; d++)
    if (!dim_eq(x->dims[d], idx->dims[d]))
      return fail(c, INVALID, "batch dim %d of data and indices differ", (int)d);
  DML_RETURN_IF_ERROR(nd_depth(c, 1, x->rank - b, &m));
  int32_t r = idx->rank - 1 + x->rank - (int32_t)(b + m);
  if (r > DML_MAX_RANK)
    return fail(c, INVALID, "output rank %d exceeds %d", (int)r, DML_MAX_RANK);
  dml_type_t o = mk(x->dtype, 0);
  for (int32_t d = 0; d < idx->rank - 1; d++) o.dims[o.rank++] = idx->dims[d];
  for (int32_t d = (int32_t)(b + m); d < x->rank; d++) o.dims[o.rank++] = x->dims[d];
  set_out(c, 0, &o);
  return DML_OK;
}

static dml_status_t infer_scatter_nd(ictx_t *c) {
  static const char *const reds[] = {"none", "add", "mul", "max", "min", NULL};
  DML_RETURN_IF_ERROR(need_rank(c, 0, 1, DML_MAX_RANK));
  DML_RETURN_IF_ERROR(need_rank(c, 1, 1, DML_MAX_RANK));
  DML_RETURN_IF_ERROR(need_dtype(c, 1, DT_INDEX));
  DML_RETURN_IF_ERROR(same_dtype(c, 0, 2));
  DML_RETURN_IF_ERROR(attr_choice(c, "reduction", "none", reds));
  const dml_type_t *x = in_t(c, 0), *idx = in_t(c, 1), *u = in_t(c, 2);
  int64_t m = 0;
  DML_RETURN_IF_ERROR(nd_depth(c, 1, x->rank, &m));
  int ok = u->rank == idx->rank - 1 + x->rank - (int32_t)m;
  for (int32_t d = 0; ok && d < idx->rank - 1; d++) ok = dim_eq(u->dims[d], idx->dims[d]);
  for (int32_t d = (int32_t)m; ok && d < x->rank; d++)
    ok = dim_eq(u->dims[idx->rank - 1 + d - m], x->dims[d]);
  if (!ok) {
    char tu[TBUF];
    return fail(c, INVALID, "updates %s must have shape indices[:-1] + data[%lld:]",
                TS(u, tu), (long long)m);
  }
  set_out(c, 0, x);
  return DML_OK;
}

static dml_status_t infer_one_hot(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_NUMERIC));
  DML_RETURN_IF_ERROR(need_dtype(c, 1, DT_NUMERIC));
  DML_RETURN_IF_ERROR(need_rank(c, 2, 1, 1));
  const dml_type_t *idx = in_t(c, 0), *val = in_t(c, 2);
  if (dml_ir_type_numel_bound(c->m, val) != 2 || val->dims[0].sym >= 0)
    return fail(c, INVALID, "values (input 2) must have two elements [off, on]");
  double dv[MAX_ELEMS];
  uint32_t n = 0;
  int k = f64s_of(c, 1, dv, MAX_ELEMS, &n);
  if (k == 0) { /* depth at run time: that dim <= the dim bound */
    int32_t q = idx->rank, ax = 0;
    int64_t axis = 0;
    if (q + 1 > DML_MAX_RANK)
      return fail(c, INVALID, "output rank %d exceeds %d", (int)q + 1, DML_MAX_RANK);
    if (dml_ir_type_numel_bound(c->m, in_t(c, 1)) != 1)
      return fail(c, INVALID, "depth (input 1) must have one element");
    DML_RETURN_IF_ERROR(attr_int(c, "axis", -1, &axis));
    DML_RETURN_IF_ERROR(norm_axis(c, axis, q + 1, "axis", &ax));
    dml_type_t o = mk(val->dtype, q + 1);
    int dyn[DML_MAX_RANK] = {0};
    int64_t b[DML_MAX_RANK];
    for (int32_t d = 0, j = 0; d < q + 1; d++)
      if (d == ax)
        dyn[d] = 1, b[d] = dyn_bound(c);
      else
        o.dims[d] = idx->dims[j++];
    return set_out_dyn(c, 0, o, dyn, b);
  }
  if (k < 0 || n != 1) return fail(c, INVALID, "depth (input 1) must have one element");
  int64_t depth = (int64_t)dv[0];
  if (!(dv[0] >= 1 && dv[0] < 9.0e18))
    return fail(c, INVALID, "depth %g must be >= 1", dv[0]);
  int32_t q = idx->rank, ax = 0;
  if (q + 1 > DML_MAX_RANK)
    return fail(c, INVALID, "output rank %d exceeds %d", (int)q + 1, DML_MAX_RANK);
  int64_t axis = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "axis", -1, &axis));
  DML_RETURN_IF_ERROR(norm_axis(c, axis, q + 1, "axis", &ax));
  dml_type_t o = mk(val->dtype, q + 1);
  for (int32_t d = 0, j = 0; d <= q; d++) o.dims[d] = d == ax ? D(depth) : idx->dims[j++];
  set_out(c, 0, &o);
  return DML_OK;
}

/* d / k exactly (static or value*S with k | value); 0 if not. */
static int dim_div_exact(dml_dim_t d, int64_t k, dml_dim_t *out) {
  if (k <= 0 || d.value % k) return 0;
  *out = d.sym >= 0 ? DS(d.value / k, d.sym) : D(d.value / k);
  return 1;
}

static dml_status_t infer_depth_space(ictx_t *c, int to_space) {
  static const char *const modes[] = {"DCR", "CRD", NULL};
  DML_RETURN_IF_ERROR(need_rank(c, 0, 4, 4));
  DML_RETURN_IF_ERROR(attr_choice(c, "mode", "DCR", modes)); /* SpaceToDepth: 28 */
  const dml_type_t *x = in_t(c, 0);
  int64_t b = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "blocksize", 0, &b));
  if (b < 1 || b > (1 << 20))
    return fail(c, INVALID, "attribute 'blocksize' = %lld must be >= 1", (long long)b);
  dml_type_t o = *x;
  char tb[TBUF];
  if (to_space) {
    if (!dim_div_exact(x->dims[1], b * b, &o.dims[1]))
      return fail(c, INVALID, "channels of %s are not divisible by blocksize^2 = %lld",
                  TS(x, tb), (long long)(b * b));
    for (int d = 2; d < 4; d++)
      if (!dim_mul(x->dims[d], D(b), &o.dims[d]))
        return fail(c, INVALID, "output dim %d overflows", d);
  } else {
    for (int d = 2; d < 4; d++)
      if (!dim_div_exact(x->dims[d], b, &o.dims[d]))
        return fail(c, INVALID, "dim %d of %s is not divisible by blocksize %lld", d,
                    TS(x, tb), (long long)b);
    if (!dim_mul(x->dims[1], D(b * b), &o.dims[1]))
      return fail(c, INVALID, "output channels overflow");
  }
  set_out(c, 0, &o);
  return DML_OK;
}

/* ==== data-dependent output dims (NonZero, Unique, Compress, NMS) ======= */

/* The data-dependent symbol for this node's output extent `what` (dml_ir.h,
 * DML_IR_SYMBOL_DATA_DEPENDENT), with upper bound `bound` (at least 1):
 * the one this node created before (re-inference, or parsed text), else a
 * fresh one named "<node>.<what>" ("<Op>_<id>.<what>" for an unnamed node;
 * "#2", "#3", ... appended when another node holds the name). */
static dml_status_t dd_symbol(ictx_t *c, const char *what, int64_t bound,
                              dml_dim_t *out) {
  char base[200], name[224];
  if (c->n->name && *c->n->name)
    snprintf(base, sizeof base, "%s.%s", c->n->name, what);
  else
    snprintf(base, sizeof base, "%s_%u.%s", dml_op_name(c->n->op),
             (unsigned)c->n->outputs[0]->id, what);
  if (bound < 1) bound = 1;
  for (int k = 1; k <= 1000; k++) {
    if (k == 1)
      snprintf(name, sizeof name, "%s", base);
    else
      snprintf(name, sizeof name, "%s#%d", base, k);
    int32_t i = dml_ir_module_find_symbol(c->m, name);
    if (i < 0) {
      dml_status_t st = dml_ir_module_add_symbol(c->m, name, bound, &i);
      if (st) return st;
    } else if (!(c->m->symbols[i].flags & DML_IR_SYMBOL_DATA_DEPENDENT) ||
               (c->m->symbols[i].producer && c->m->symbols[i].producer != c->n)) {
      continue;
    }
    dml_ir_symbol_t *sy = &c->m->symbols[i];
    sy->flags |= DML_IR_SYMBOL_DATA_DEPENDENT;
    sy->producer = c->n;
    sy->bound = bound;
    *out = DS(1, i);
    return DML_OK;
  }
  return fail(c, DML_STATUS_INTERNAL, "no free symbol name for '%s'", base);
}

/* Upper bound of the element count of `t`; an error when it overflows. */
static dml_status_t numel_bound(const ictx_t *c, const dml_type_t *t, int64_t *out) {
  *out = dml_ir_type_numel_bound(c->m, t);
  if (*out < 0) return fail(c, INVALID, "input element count overflows");
  return DML_OK;
}

/* NonZero: i64 [rank, n], n <= numel(X) (a 0-D X counts as [1]). */
static dml_status_t infer_non_zero(ictx_t *c) {
  const dml_type_t *x = in_t(c, 0);
  int64_t bound;
  DML_RETURN_IF_ERROR(numel_bound(c, x, &bound));
  dml_type_t o = mk(DML_DTYPE_I64, 2);
  o.dims[0] = D(x->rank ? x->rank : 1);
  DML_RETURN_IF_ERROR(dd_symbol(c, "n", bound, &o.dims[1]));
  set_out(c, 0, &o);
  return DML_OK;
}

/* Unique: Y [u] (flattened) or X with dims[axis] = u; indices and counts
 * i64 [u]; inverse_indices i64 [numel] or [X.dims[axis]]. u <= that extent. */
static dml_status_t infer_unique(ictx_t *c) {
  const dml_type_t *x = in_t(c, 0);
  dml_type_t y, inv = mk(DML_DTYPE_I64, 1);
  int64_t bound;
  dml_dim_t u;
  if (dml_ir_node_attr(c->n, "axis")) {
    int64_t axis = 0;
    int32_t ax = 0;
    DML_RETURN_IF_ERROR(need_rank(c, 0, 1, DML_MAX_RANK));
    DML_RETURN_IF_ERROR(attr_int(c, "axis", 0, &axis));
    DML_RETURN_IF_ERROR(norm_axis(c, axis, x->rank, "axis", &ax));
    bound = dim_max(c, x->dims[ax]);
    DML_RETURN_IF_ERROR(dd_symbol(c, "u", bound, &u));
    y = *x;
    y.dims[ax] = u;
    inv.dims[0] = x->dims[ax];
  } else {
    DML_RETURN_IF_ERROR(numel_bound(c, x, &bound));
    DML_RETURN_IF_ERROR(dd_symbol(c, "u", bound, &u));
    y = mk(x->dtype, 1);
    y.dims[0] = u;
    mono_t p;
    if (!mono_of(x, 0, x->rank, &p) || !mono_to_dim(&p, &inv.dims[0]))
      return fail(c, UNIMPL,
                  "the element count of the input is not a single symbolic dim");
  }
  set_out(c, 0, &y);
  dml_type_t per = mk(DML_DTYPE_I64, 1);
  per.dims[0] = u;
  set_out(c, 1, &per);
  set_out(c, 2, &inv);
  set_out(c, 3, &per);
  return DML_OK;
}

/* Compress: the selected slices along `axis` (or elements of the flattened
 * input); n <= min(that extent, length of the condition). */
static dml_status_t infer_compress(ictx_t *c) {
  const dml_type_t *x = in_t(c, 0);
  DML_RETURN_IF_ERROR(need_rank(c, 1, 1, 1));
  DML_RETURN_IF_ERROR(need_dtype(c, 1, DT_BOOL));
  int64_t bound, cond_len = dim_max(c, in_t(c, 1)->dims[0]);
  dml_type_t y;
  int32_t ax = 0;
  if (dml_ir_node_attr(c->n, "axis")) {
    int64_t axis = 0;
    DML_RETURN_IF_ERROR(need_rank(c, 0, 1, DML_MAX_RANK));
    DML_RETURN_IF_ERROR(attr_int(c, "axis", 0, &axis));
    DML_RETURN_IF_ERROR(norm_axis(c, axis, x->rank, "axis", &ax));
    bound = dim_max(c, x->dims[ax]);
    y = *x;
  } else {
    DML_RETURN_IF_ERROR(numel_bound(c, x, &bound));
    y = mk(x->dtype, 1);
  }
  if (cond_len < bound) bound = cond_len;
  DML_RETURN_IF_ERROR(dd_symbol(c, "n", bound, &y.dims[ax]));
  set_out(c, 0, &y);
  return DML_OK;
}

/* NonMaxSuppression: boxes [B, N, 4], scores [B, C, N] -> i64 [n, 3] with
 * n <= B*C*min(max_output_boxes_per_class, N) when that input is a
 * constant, else B*C*N. */
static dml_status_t infer_nms(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_rank(c, 0, 3, 3));
  DML_RETURN_IF_ERROR(need_rank(c, 1, 3, 3));
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_FLOAT));
  DML_RETURN_IF_ERROR(same_dtype(c, 0, 1));
  const dml_type_t *b = in_t(c, 0), *s = in_t(c, 1);
  if (!dim_is(b->dims[2], 4) || !dim_eq(b->dims[0], s->dims[0]) ||
      !dim_eq(b->dims[1], s->dims[2])) {
    char tb[TBUF], sb[TBUF];
    return fail(c, INVALID,
                "boxes %s must be [batches, boxes, 4] and scores %s [batches, classes, "
                "boxes]",
                TS(b, tb), TS(s, sb));
  }
  int64_t per = dim_max(c, b->dims[1]);
  elems_t e;
  if (in_v(c, 2) && elems_of(c, in_v(c, 2), &e) == 1 && e.n == 1 && e.e[0].sym < 0)
    per = e.e[0].value < 0 ? 0 : (e.e[0].value < per ? e.e[0].value : per);
  int64_t bound = dim_max(c, b->dims[0]), r;
  if (__builtin_mul_overflow(bound, dim_max(c, s->dims[1]), &bound) ||
      __builtin_mul_overflow(bound, per, &r))
    return fail(c, INVALID, "the output's bound overflows");
  dml_type_t o = mk(DML_DTYPE_I64, 2);
  DML_RETURN_IF_ERROR(dd_symbol(c, "n", r, &o.dims[0]));
  o.dims[1] = D(3);
  set_out(c, 0, &o);
  return DML_OK;
}

static dml_status_t infer_top_k(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_rank(c, 0, 1, DML_MAX_RANK));
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_NUMERIC));
  const dml_type_t *x = in_t(c, 0);
  int64_t axis = 0;
  int32_t ax = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "axis", -1, &axis));
  DML_RETURN_IF_ERROR(norm_axis(c, axis, x->rank, "axis", &ax));
  elems_t e;
  if (elems_runtime(c, 1)) { /* K <= the axis's extent */
    if (dml_ir_type_numel_bound(c->m, in_t(c, 1)) != 1)
      return fail(c, INVALID, "K (input 1) must have one element");
    int dyn[DML_MAX_RANK] = {0};
    int64_t b[DML_MAX_RANK];
    dyn[ax] = 1;
    b[ax] = dim_max(c, x->dims[ax]);
    DML_RETURN_IF_ERROR(set_out_dyn(c, 0, *x, dyn, b));
    /* The indices have the values' K (one symbol: boxes gathered by them
     * and the scores concatenate alike). */
    dml_type_t oi = c->n->outputs[0]->type;
    oi.dtype = DML_DTYPE_I64;
    set_out(c, 1, &oi);
    return DML_OK;
  }
  DML_RETURN_IF_ERROR(need_elems(c, 1, "K", 0, &e));
  if (e.n != 1) return fail(c, INVALID, "K (input 1) must have one element, has %u", e.n);
  int64_t k = e.e[0].value;
  if (k < 0 || k > dim_max(c, x->dims[ax]))
    return fail(c, INVALID, "K = %lld is out of range for axis %d of extent %lld",
                (long long)k, (int)ax, (long long)dim_max(c, x->dims[ax]));
  dml_type_t o = *x;
  o.dims[ax] = D(k);
  set_out(c, 0, &o);
  o.dtype = DML_DTYPE_I64;
  set_out(c, 1, &o);
  return DML_OK;
}

static dml_status_t infer_reverse_sequence(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_rank(c, 0, 2, DML_MAX_RANK));
  DML_RETURN_IF_ERROR(need_rank(c, 1, 1, 1));
  DML_RETURN_IF_ERROR(need_dtype(c, 1, DT_INDEX));
  int64_t ba = 1, ta = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "batch_axis", 1, &ba));
  DML_RETURN_IF_ERROR(attr_int(c, "time_axis", 0, &ta));
  if ((ba != 0 && ba != 1) || (ta != 0 && ta != 1) || ba == ta)
    return fail(c, INVALID, "batch_axis and time_axis must be 0 and 1 (in either order)");
  if (!dim_eq(in_t(c, 1)->dims[0], in_t(c, 0)->dims[ba]))
    return fail(c, INVALID, "sequence_lens must have one value per batch");
  set_out(c, 0, in_t(c, 0));
  return DML_OK;
}

static dml_status_t infer_einsum(ictx_t *c) {
  const char *eq = NULL;
  DML_RETURN_IF_ERROR(attr_string(c, "equation", NULL, &eq));
  if (!eq) return fail(c, INVALID, "attribute 'equation' is required");
  uint32_t n = c->n->n_inputs;
  if (n > DML_EINSUM_MAX_IN)
    return fail(c, UNIMPL, "more than %d inputs", DML_EINSUM_MAX_IN);
  int32_t ranks[DML_EINSUM_MAX_IN];
  for (uint32_t i = 0; i < n; i++) {
    DML_RETURN_IF_ERROR(need_rank(c, i, 0, DML_MAX_RANK));
    DML_RETURN_IF_ERROR(need_dtype(c, i, DT_NUMERIC));
    DML_RETURN_IF_ERROR(same_dtype(c, 0, i));
    ranks[i] = in_t(c, i)->rank;
  }
  dml_einsum_t e;
  char why[200];
  if (dml_einsum_parse(eq, (int)n, ranks, &e, why, sizeof(why)))
    return fail(c, INVALID, "equation \"%s\": %s", eq, why);
  dml_dim_t size[DML_EINSUM_MAX_LABELS];
  int have[DML_EINSUM_MAX_LABELS] = {0};
  for (uint32_t i = 0; i < n; i++) {
    const dml_type_t *t = in_t(c, i);
    for (int32_t d = 0; d < t->rank; d++) {
      int l = e.in_labels[i][d];
      dml_dim_t s = t->dims[d];
      if (!have[l] || dim_is(size[l], 1)) {
        size[l] = s;
        have[l] = 1;
      } else if (!dim_eq(s, size[l]) && !dim_is(s, 1)) {
        char sa[64], sb[64];
        return fail(c, INVALID, "subscript '%c' has extents %s and %s", e.letter[l],
                    dim_str(c, size[l], sa, sizeof(sa)), dim_str(c, s, sb, sizeof(sb)));
      }
    }
  }
  dml_type_t o = mk(in_t(c, 0)->dtype, e.out_rank);
  for (int32_t d = 0; d < e.out_rank; d++) {
    int l = e.out_labels[d];
    o.dims[d] = have[l] ? size[l] : D(1);
  }
  set_out(c, 0, &o);
  return DML_OK;
}

static dml_status_t infer_det(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_rank(c, 0, 2, DML_MAX_RANK));
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_FLOAT));
  const dml_type_t *x = in_t(c, 0);
  if (!dim_eq(x->dims[x->rank - 1], x->dims[x->rank - 2])) {
    char tb[TBUF];
    return fail(c, INVALID, "input %s must be [*, M, M]", TS(x, tb));
  }
  dml_type_t o = *x;
  o.rank -= 2;
  set_out(c, 0, &o);
  return DML_OK;
}

static dml_status_t infer_max_unpool(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_rank(c, 0, 3, DML_MAX_RANK));
  DML_RETURN_IF_ERROR(need_dtype(c, 1, DT_INDEX));
  const dml_type_t *x = in_t(c, 0), *idx = in_t(c, 1);
  if (!same_shape(x, idx)) return fail(c, INVALID, "I (input 1) must have X's shape");
  int32_t ns = x->rank - 2;
  dml_type_t o = *x;
  if (in_v(c, 2) && elems_runtime(c, 2)) {
    /* output_shape fed at run time: every dim a data-dependent symbol
     * (bound: the dynamic dim bound; cpu_outdims.c sets them) */
    uint32_t k = 0;
    DML_RETURN_IF_ERROR(runtime_len(c, 2, "output_shape", &k));
    if (k != (uint32_t)x->rank)
      return fail(c, INVALID, "output_shape has %u values for rank %d", k, (int)x->rank);
    return set_out_all_dyn(c, 0, x->dtype, x->rank, dyn_bound(c));
  }
  if (in_v(c, 2)) {
    elems_t e;
    DML_RETURN_IF_ERROR(need_elems(c, 2, "output_shape", 1, &e));
    if (e.n != (uint32_t)x->rank)
      return fail(c, INVALID, "output_shape has %u values for rank %d", e.n,
                  (int)x->rank);
    for (uint32_t i = 0; i < e.n; i++) {
      if (e.e[i].value < 0) return fail(c, INVALID, "output_shape[%u] is negative", i);
      o.dims[i] = e.e[i];
    }
    set_out(c, 0, &o);
    return DML_OK;
  }
  int64_t ks[DML_MAX_RANK], st[DML_MAX_RANK], pads[2 * DML_MAX_RANK];
  const int64_t *kv;
  size_t nk;
  DML_RETURN_IF_ERROR(attr_ints(c, "kernel_shape", &kv, &nk));
  if (!kv) return fail(c, INVALID, "attribute 'kernel_shape' is required");
  DML_RETURN_IF_ERROR(attr_ints_n(c, "kernel_shape", ns, 1, 1, ks));
  DML_RETURN_IF_ERROR(attr_ints_n(c, "strides", ns, 1, 1, st));
  DML_RETURN_IF_ERROR(attr_ints_n(c, "pads", 2 * ns, 0, 0, pads));
  for (int32_t i = 0; i < ns; i++) {
    dml_dim_t d = x->dims[2 + i];
    if (ks[i] > (1 << 30) || st[i] > (1 << 30) || pads[i] > (1 << 30) ||
        pads[ns + i] > (1 << 30))
      return fail(c, INVALID, "kernel_shape, strides or pads too large");
    int64_t extra = ks[i] - st[i] - pads[i] - pads[ns + i]; /* out = in*s + extra */
    if (d.sym >= 0) {
      if (extra != 0)
        return fail(c, UNIMPL,
                    "unpooled symbolic dim %d is not expressible as value*symbol",
                    (int)(2 + i));
      if (!dim_mul(d, D(st[i]), &o.dims[2 + i]))
        return fail(c, INVALID, "output dim overflows");
      continue;
    }
    int64_t v;
    if (__builtin_mul_overflow(d.value, st[i], &v) ||
        __builtin_add_overflow(v, extra, &v) || v < 0)
      return fail(c, INVALID, "unpooled dim %d is negative or overflows", (int)(2 + i));
    o.dims[2 + i] = D(v);
  }
  set_out(c, 0, &o);
  return DML_OK;
}

/* GridSample: X [N,C,D1..Dr], grid [N,O1..Or,r] -> [N,C,O1..Or]; r = 2
 * (opset 16) or any r >= 1 (opset 20); cubic modes 2-D only (ONNX). */
static dml_status_t infer_grid_sample(ictx_t *c) {
  static const char *const modes[] = {"bilinear", "nearest", "bicubic",
                                      "linear",   "cubic",   NULL};
  static const char *const pads[] = {"zeros", "border", "reflection", NULL};
  DML_RETURN_IF_ERROR(need_rank(c, 0, 3, DML_MAX_RANK));
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_FLOAT));
  DML_RETURN_IF_ERROR(need_dtype(c, 1, DT_FLOAT));
  DML_RETURN_IF_ERROR(attr_choice(c, "mode", "bilinear", modes));
  DML_RETURN_IF_ERROR(attr_choice(c, "padding_mode", "zeros", pads));
  const dml_type_t *x = in_t(c, 0), *g = in_t(c, 1);
  int32_t r = x->rank - 2;
  if (g->rank != x->rank || !dim_eq(x->dims[0], g->dims[0]) ||
      !dim_is(g->dims[r + 1], r)) {
    char ta[TBUF], tb[TBUF];
    return fail(c, INVALID, "grid %s must be [N,O1..O%d,%d] for X %s", TS(g, tb), (int)r,
                (int)r, TS(x, ta));
  }
  const char *mode = "bilinear";
  const dml_attr_t *ma = dml_ir_node_attr(c->n, "mode");
  if (ma && ma->kind == DML_ATTR_STRING && ma->s) mode = ma->s;
  if (r != 2 && (!strcmp(mode, "cubic") || !strcmp(mode, "bicubic")))
    return fail(c, INVALID, "mode %s needs 2 spatial dims, X has %d", mode, (int)r);
  dml_type_t o = *x;
  for (int32_t d = 0; d < r; d++) o.dims[2 + d] = g->dims[1 + d];
  set_out(c, 0, &o);
  return DML_OK;
}

static dml_status_t infer_roi_align(ictx_t *c) {
  static const char *const modes[] = {"avg", "max", NULL};
  static const char *const ctms[] = {"half_pixel", "output_half_pixel", NULL};
  DML_RETURN_IF_ERROR(need_rank(c, 0, 4, 4));
  DML_RETURN_IF_ERROR(need_rank(c, 1, 2, 2));
  DML_RETURN_IF_ERROR(need_rank(c, 2, 1, 1));
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_FLOAT));
  DML_RETURN_IF_ERROR(same_dtype(c, 0, 1));
  DML_RETURN_IF_ERROR(need_dtype(c, 2, DT_INDEX));
  DML_RETURN_IF_ERROR(attr_choice(c, "mode", "avg", modes));
  DML_RETURN_IF_ERROR(
      attr_choice(c, "coordinate_transformation_mode", "half_pixel", ctms));
  const dml_type_t *x = in_t(c, 0), *rois = in_t(c, 1), *bi = in_t(c, 2);
  if (!dim_is(rois->dims[1], 4) || !dim_eq(rois->dims[0], bi->dims[0]))
    return fail(c, INVALID, "rois must be [R,4] and batch_indices [R]");
  int64_t oh = 1, ow = 1, sr = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "output_height", 1, &oh));
  DML_RETURN_IF_ERROR(attr_int(c, "output_width", 1, &ow));
  DML_RETURN_IF_ERROR(attr_int(c, "sampling_ratio", 0, &sr));
  if (oh < 1 || ow < 1 || sr < 0 || oh > INT32_MAX || ow > INT32_MAX)
    return fail(c, INVALID,
                "output_height/output_width must be >= 1, sampling_ratio >= 0");
  dml_type_t o = mk(x->dtype, 4);
  o.dims[0] = rois->dims[0];
  o.dims[1] = x->dims[1];
  o.dims[2] = D(oh);
  o.dims[3] = D(ow);
  set_out(c, 0, &o);
  return DML_OK;
}

static dml_status_t infer_resize(ictx_t *c) {
  const dml_type_t *x = in_t(c, 0);
  if (!x) return fail(c, INVALID, "input 0 is required");
  /* opset 10 form: (X, scales); opset 11+: (X, roi, scales, sizes). */
  uint32_t i_scales = c->n->n_inputs == 2 ? 1 : 2, i_sizes = 3;
  const dml_type_t *ts = in_t(c, i_scales), *tz = in_t(c, i_sizes);
  int has_scales = ts && dml_ir_type_numel_bound(c->m, ts) != 0;
  int has_sizes = tz && dml_ir_type_numel_bound(c->m, tz) != 0;
  if (has_scales == has_sizes)
    return fail(c, INVALID, "Resize needs exactly one of scales and sizes");
  const int64_t *axes_a;
  size_t naxes;
  DML_RETURN_IF_ERROR(attr_ints(c, "axes", &axes_a, &naxes));
  int32_t axes[DML_MAX_RANK];
  int32_t na = x->rank;
  if (axes_a) {
    if (naxes > (size_t)x->rank)
      return fail(c, INVALID, "attribute 'axes' has %zu values for rank %d", naxes,
                  (int)x->rank);
    elems_t ae;
    int mask[DML_MAX_RANK];
    ae.n = (uint32_t)naxes;
    for (size_t i = 0; i < naxes; i++) ae.e[i] = D(axes_a[i]);
    DML_RETURN_IF_ERROR(axes_mask(c, &ae, x->rank, mask));
    na = (int32_t)naxes;
    for (int32_t i = 0; i < na; i++)
      DML_RETURN_IF_ERROR(norm_axis(c, axes_a[i], x->rank, "axis", &axes[i]));
  } else {
    for (int32_t i = 0; i < na; i++) axes[i] = i;
  }
  dml_type_t o = *x;
  char tb[TBUF];
  int dyn[DML_MAX_RANK] = {0};
  int64_t b[DML_MAX_RANK];
  for (int32_t i = 0; i < na; i++) {
    int64_t m = dim_max(c, x->dims[axes[i]]);
    dyn[axes[i]] = 1;
    b[axes[i]] = m > dyn_bound(c) ? m : dyn_bound(c);
  }
  if (has_sizes && elems_runtime(c, i_sizes)) {
    /* Known elements of partly known sizes stay (stretch policy). */
    pelems_t pe;
    const char *pol = "stretch";
    DML_RETURN_IF_ERROR(attr_string(c, "keep_aspect_ratio_policy", "stretch", &pol));
    if (!strcmp(pol, "stretch") && pelems_of(c, in_v(c, i_sizes), &pe) &&
        pe.n == (uint32_t)na)
      for (int32_t i = 0; i < na; i++)
        if (!pe.unk[i] && (pe.e[i].sym >= 0 || pe.e[i].value >= 0))
          o.dims[axes[i]] = pe.e[i], dyn[axes[i]] = 0;
    return set_out_dyn(c, 0, o, dyn, b);
  }
  if (has_scales) {
    double sc0[MAX_ELEMS];
    uint32_t n0 = 0;
    if (f64s_of(c, i_scales, sc0, MAX_ELEMS, &n0) == 0)
      return set_out_dyn(c, 0, o, dyn, b);
  }
  if (has_sizes) {
    elems_t e;
    DML_RETURN_IF_ERROR(need_elems(c, i_sizes, "sizes", 1, &e));
    if (e.n != (uint32_t)na)
      return fail(c, INVALID, "sizes has %u values for %d axes", e.n, (int)na);
    const char *policy = "stretch";
    DML_RETURN_IF_ERROR(attr_string(c, "keep_aspect_ratio_policy", "stretch", &policy));
    if (!strcmp(policy, "stretch")) {
      for (int32_t i = 0; i < na; i++) {
        if (e.e[i].value < 0) return fail(c, INVALID, "sizes[%d] is negative", (int)i);
        o.dims[axes[i]] = e.e[i];
      }
    } else if (!strcmp(policy, "not_larger") || !strcmp(policy, "not_smaller")) {
      int64_t in[DML_MAX_RANK], sz[DML_MAX_RANK];
      for (int32_t i = 0; i < na; i++) {
        dml_dim_t d = x->dims[axes[i]];
        if (d.sym >= 0 || e.e[i].sym >= 0 || d.value == 0)
          return fail(c, UNIMPL,
                      "keep_aspect_ratio_policy \"%s\" needs static non-zero dims",
                      policy);
        in[i] = d.value, sz[i] = e.e[i].value;
      }
      /* dml_shape.h's rule, as the CPU's run-time one */
      double scale = dml_shape_resize_aspect_scale(in, sz, na, policy[4] == 's');
      for (int32_t i = 0; i < na; i++)
        o.dims[axes[i]] = D(dml_shape_resize_aspect_extent(in[i], scale));
    } else {
      return fail(c, INVALID,
                  "keep_aspect_ratio_policy \"%s\" is not stretch, not_larger or "
                  "not_smaller",
                  policy);
    }
  } else {
    double sc[MAX_ELEMS];
    uint32_t n = 0;
    int k = f64s_of(c, i_scales, sc, MAX_ELEMS, &n);
    if (k <= 0)
      return fail(c, k < 0 ? INVALID : UNIMPL,
                  "output shape of Resize '%s' depends on run-time "
                  "data: scales (input %u) is not a constant",
                  node_name(c->n), i_scales);
    if (n != (uint32_t)na)
      return fail(c, INVALID, "scales has %u values for %d axes", n, (int)na);
    for (int32_t i = 0; i < na; i++) {
      dml_dim_t d = x->dims[axes[i]];
      double s = sc[i];
      int64_t r = 0;
      int k = dml_shape_resize_scaled(d.sym >= 0 ? 1 : d.value, s, &r);
      if (k == DML_SHAPE_BAD_VALUE)
        return fail(c, INVALID, "scales[%d] = %g must be positive", (int)i, s);
      if (d.sym >= 0) {
        /* floor(k*S*s): s (from an f32 or f64 constant) is a dyadic rational
         * num / 2^e, so floor(k*S*num / 2^e) is a derived dim. */
        int e = 0;
        while (e < 30 && s * (double)(1 << e) != floor(s * (double)(1 << e))) e++;
        double num = s * (double)(1 << e);
        if (num != floor(num) || num > 2147483647.0)
          return fail(c, UNIMPL,
                      "scaling symbolic dim %d of %s by %.17g is not expressible as a "
                      "bounded dim (not a fraction num/2^e with e <= 30)",
                      (int)axes[i], TS(x, tb), s);
        DML_RETURN_IF_ERROR(derived_extent(c, d, (int64_t)num, 0, (int64_t)1 << e,
                                           "the resized extent", &o.dims[axes[i]]));
      } else {
        if (k != DML_SHAPE_OK) return fail(c, INVALID, "Resize output dim overflows");
        o.dims[axes[i]] = D(r); /* dml_shape.h's rule, as the CPU's run-time one */
      }
    }
  }
  set_out(c, 0, &o);
  return DML_OK;
}

static dml_status_t infer_reduce(ictx_t *c) {
  const dml_type_t *x = in_t(c, 0);
  /* ReduceMax/Min take bool too since opset 20 (any / all). */
  if (!(x && x->dtype == DML_DTYPE_BOOL &&
        (c->n->op == DML_OP_REDUCE_MAX || c->n->op == DML_OP_REDUCE_MIN)))
    DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_NUMERIC));
  int64_t keepdims = 1, noop = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "keepdims", 1, &keepdims));
  DML_RETURN_IF_ERROR(attr_int(c, "noop_with_empty_axes", 0, &noop));
  elems_t axes;
  int has, mask[DML_MAX_RANK];
  uint32_t nrt = 0;
  if (elems_runtime(c, 1) && !dml_ir_node_attr(c->n, "axes")) {
    DML_RETURN_IF_ERROR(runtime_len(c, 1, "axes", &nrt));
  }
  if (nrt > 0) {
    /* Axes at run time: keepdims=1, each dim is 1 or the input's; else the
     * rank drops by the (static) number of axes, each remaining dim one of
     * the input's. */
    if ((int32_t)nrt > x->rank)
      return fail(c, INVALID, "axes has %u values for rank %d", nrt, (int)x->rank);
    if (!keepdims)
      return set_out_all_dyn(c, 0, x->dtype, x->rank - (int32_t)nrt, max_dim_bound(c, x));
    int dyn[DML_MAX_RANK];
    int64_t b[DML_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++) dyn[d] = 1, b[d] = dim_max(c, x->dims[d]);
    return set_out_dyn(c, 0, *x, dyn, b);
  }
  DML_RETURN_IF_ERROR(read_axes(c, 1, &axes, &has));
  if (axes.n == 0) {
    if (noop) {
      set_out(c, 0, x);
      return DML_OK;
    }
    for (int32_t i = 0; i < x->rank; i++) mask[i] = 1;
  } else {
    DML_RETURN_IF_ERROR(axes_mask(c, &axes, x->rank, mask));
  }
  dml_type_t o = mk(x->dtype, 0);
  for (int32_t i = 0; i < x->rank; i++) {
    if (!mask[i])
      o.dims[o.rank++] = x->dims[i];
    else if (keepdims)
      o.dims[o.rank++] = D(1);
  }
  set_out(c, 0, &o);
  /* ReduceSum/Prod/Max/Min of known 1-D integer contents (the element count
   * of a shape is ReduceProd(Shape(x))) while the result is value*symbol. */
  dml_op_t op = c->n->op;
  elems_t e;
  if (x->rank == 1 && mask[0] && dml_dtype_is_int(x->dtype) &&
      (op == DML_OP_REDUCE_SUM || op == DML_OP_REDUCE_PROD || op == DML_OP_REDUCE_MAX ||
       op == DML_OP_REDUCE_MIN) &&
      elems_of(c, in_v(c, 0), &e) == 1) {
    dml_dim_t r = D(op == DML_OP_REDUCE_PROD ? 1 : 0);
    if (op == DML_OP_REDUCE_PROD) {
      mono_t p;
      mono_init(&p);
      for (uint32_t i = 0; i < e.n; i++)
        if (!mono_mul(&p, e.e[i])) return DML_OK;
      if (!mono_to_dim(&p, &r) || (r.sym >= 0 && r.value < 1)) return DML_OK;
    } else if (op == DML_OP_REDUCE_SUM) {
      for (uint32_t i = 0; i < e.n; i++) {
        dml_dim_t t = r;
        int ok = sym_arith(DML_OP_ADD, t, e.e[i], &r);
        if (!ok)
          DML_RETURN_IF_ERROR(sym_arith_derived(c, DML_OP_ADD, t, e.e[i], &r, &ok));
        if (!ok) return DML_OK;
      }
    } else {
      if (!e.n) return DML_OK; /* an empty Max/Min is not a small integer */
      r = e.e[0];
      for (uint32_t i = 1; i < e.n; i++) {
        elems_t pair[2];
        pair[0].n = pair[1].n = 1;
        pair[0].e[0] = r;
        pair[1].e[0] = e.e[i];
        if (!sym_extreme(op == DML_OP_REDUCE_MAX ? DML_OP_MAX : DML_OP_MIN, pair, 2, 1,
                         &r))
          return DML_OK;
      }
    }
    return set_sym(c, 0, &r, 1);
  }
  return DML_OK;
}

static dml_status_t infer_argminmax(ictx_t *c) {
  const dml_type_t *x = in_t(c, 0);
  DML_RETURN_IF_ERROR(need_rank(c, 0, 1, DML_MAX_RANK));
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_NUMERIC));
  int64_t axis = 0, keepdims = 1;
  int32_t ax = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "axis", 0, &axis));
  DML_RETURN_IF_ERROR(attr_int(c, "keepdims", 1, &keepdims));
  DML_RETURN_IF_ERROR(norm_axis(c, axis, x->rank, "axis", &ax));
  dml_type_t o = mk(DML_DTYPE_I64, 0);
  for (int32_t i = 0; i < x->rank; i++) {
    if (i != ax)
      o.dims[o.rank++] = x->dims[i];
    else if (keepdims)
      o.dims[o.rank++] = D(1);
  }
  set_out(c, 0, &o);
  return DML_OK;
}

/* ==== issue #3 ops (semantics at their kernels, runtime/cpu/cpu_axis_ops.c,
 * cpu_shrink_isinf_bitshift.c) ==== */

/* IsInf, IsNaN: float -> bool of the same shape. */
static dml_status_t infer_is_special(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_FLOAT));
  dml_type_t t = *in_t(c, 0);
  t.dtype = DML_DTYPE_BOOL;
  set_out(c, 0, &t);
  return DML_OK;
}

/* BitShift: unsigned integers of one dtype, broadcast; direction LEFT or
 * RIGHT (required). */
static dml_status_t infer_bitshift(ictx_t *c) {
  const dml_type_t *a = in_t(c, 0);
  if (!dml_dtype_is_int(a->dtype)) /* signed since BitShift-28 */
    return fail(c, INVALID, "input 0 must have an integer dtype, got %s",
                dml_dtype_name(a->dtype));
  DML_RETURN_IF_ERROR(same_dtype(c, 0, 1));
  const char *dir = NULL;
  DML_RETURN_IF_ERROR(attr_string(c, "direction", NULL, &dir));
  if (!dir || (strcmp(dir, "LEFT") != 0 && strcmp(dir, "RIGHT") != 0))
    return fail(c, INVALID, "attribute 'direction' must be \"LEFT\" or \"RIGHT\", got %s",
                dir ? dir : "none");
  dml_type_t o;
  DML_RETURN_IF_ERROR(bcast(c, a, in_t(c, 1), &o));
  set_out(c, 0, &o);
  return DML_OK;
}

/* CastLike: input 0's shape, input 1's dtype. */
static dml_status_t infer_cast_like(ictx_t *c) {
  dml_type_t t = *in_t(c, 0);
  t.dtype = in_t(c, 1)->dtype;
  set_out(c, 0, &t);
  if (dml_dtype_is_int(in_t(c, 0)->dtype) && dml_dtype_is_int(t.dtype))
    return pass_sym(c, 0);
  return DML_OK;
}

/* Input i, when present, is a 0-D or 1-element integer tensor. */
static dml_status_t need_int_scalar(const ictx_t *c, uint32_t i, const char *what) {
  const dml_type_t *t = in_t(c, i);
  if (!t) return DML_OK;
  if (!dml_dtype_is_int(t->dtype) || t->rank > 1 ||
      (t->rank == 1 && !dim_is(t->dims[0], 1))) {
    char tb[TBUF];
    return fail(c, INVALID, "%s (input %u) must be an integer scalar, got %s", what, i,
                TS(t, tb));
  }
  return DML_OK;
}

static dml_status_t infer_cumsum(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_NUMERIC));
  DML_RETURN_IF_ERROR(need_int_scalar(c, 1, "axis"));
  const dml_type_t *x = in_t(c, 0);
  elems_t ax;
  if (x->rank > 0 && elems_of(c, in_v(c, 1), &ax) == 1 && ax.n == 1 && ax.e[0].sym < 0) {
    int32_t a = 0;
    DML_RETURN_IF_ERROR(norm_axis(c, ax.e[0].value, x->rank, "axis", &a));
  }
  set_out(c, 0, x);
  return DML_OK;
}

/* BitCast (ONNX opset 26): X's shape, the dtype of `to`, of X's size. */
static dml_status_t infer_bit_cast(ictx_t *c) {
  dml_dtype_t to = DML_DTYPE_INVALID;
  DML_RETURN_IF_ERROR(attr_dtype(c, "to", 1, DML_DTYPE_INVALID, &to));
  dml_type_t t = *in_t(c, 0);
  if (dml_dtype_size(to) != dml_dtype_size(t.dtype))
    return fail(c, INVALID, "BitCast from %s to %s: the element sizes differ",
                dml_dtype_name(t.dtype), dml_dtype_name(to));
  t.dtype = to;
  set_out(c, 0, &t);
  return DML_OK;
}

/* TensorScatter (ONNX opset 24): present_cache has past_cache's type;
 * update has its rank and dims except along `axis` (not 0, the batch),
 * where it is no longer; write_indices i64 [batch]. */
static dml_status_t infer_tensor_scatter(ictx_t *c) {
  static const char *const modes[] = {"linear", "circular", NULL};
  DML_RETURN_IF_ERROR(attr_choice(c, "mode", "linear", modes));
  DML_RETURN_IF_ERROR(same_dtype(c, 0, 1));
  const dml_type_t *p = in_t(c, 0), *u = in_t(c, 1), *w = in_t(c, 2);
  char tb[TBUF], ub[TBUF];
  if (p->rank < 2 || u->rank != p->rank)
    return fail(c, INVALID, "past_cache %s and update %s need one rank >= 2", TS(p, tb),
                TS(u, ub));
  int64_t axis = -2;
  int32_t a = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "axis", -2, &axis));
  DML_RETURN_IF_ERROR(norm_axis(c, axis, p->rank, "axis", &a));
  if (a == 0) return fail(c, INVALID, "axis must not be 0 (the batch dim)");
  for (int32_t d = 0; d < p->rank; d++) {
    dml_dim_t pd = p->dims[d], ud = u->dims[d];
    if (d != a ? !dim_eq(pd, ud) : (pd.sym < 0 && ud.sym < 0 && ud.value > pd.value))
      return fail(c, INVALID,
                  "update %s does not fit past_cache %s (dims equal but along axis "
                  "%d, where it may be shorter)",
                  TS(u, ub), TS(p, tb), (int)a);
  }
  if (w && (w->dtype != DML_DTYPE_I64 || w->rank != 1 || !dim_eq(w->dims[0], p->dims[0])))
    return fail(c, INVALID, "write_indices must be i64 [batch], got %s", TS(w, tb));
  set_out(c, 0, p);
  return DML_OK;
}

static dml_status_t infer_trilu(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_rank(c, 0, 2, DML_MAX_RANK));
  DML_RETURN_IF_ERROR(need_int_scalar(c, 1, "k"));
  set_out(c, 0, in_t(c, 0));
  return DML_OK;
}

/* EyeLike: 2-D, the `dtype` attribute (ONNX code; default input 0's). */
static dml_status_t infer_eye_like(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_rank(c, 0, 2, 2));
  dml_dtype_t dt = DML_DTYPE_INVALID;
  int64_t k;
  DML_RETURN_IF_ERROR(attr_dtype(c, "dtype", 0, in_t(c, 0)->dtype, &dt));
  DML_RETURN_IF_ERROR(attr_int(c, "k", 0, &k));
  dml_type_t t = *in_t(c, 0);
  t.dtype = dt;
  set_out(c, 0, &t);
  return DML_OK;
}

static dml_status_t infer_lrn(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_FLOAT));
  DML_RETURN_IF_ERROR(need_rank(c, 0, 2, DML_MAX_RANK));
  int64_t size = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "size", 0, &size));
  if (size < 1)
    return fail(c, INVALID, "attribute 'size' is required and must be >= 1, got %lld",
                (long long)size);
  set_out(c, 0, in_t(c, 0));
  return DML_OK;
}

/* MeanVarianceNormalization: `axes` default [0, 2, 3]. */
static dml_status_t infer_mvn(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_FLOAT));
  static const int64_t dflt[3] = {0, 2, 3};
  const int64_t *a;
  size_t n;
  DML_RETURN_IF_ERROR(attr_ints(c, "axes", &a, &n));
  if (!a) a = dflt, n = 3;
  const dml_type_t *x = in_t(c, 0);
  for (size_t i = 0; i < n; i++) {
    int32_t ax = 0;
    DML_RETURN_IF_ERROR(norm_axis(c, a[i], x->rank, "axis", &ax));
  }
  set_out(c, 0, x);
  return DML_OK;
}

/* ==== dispatch ========================================================== */

/* ==== recurrent, losses, quantization (kernels: runtime/cpu/cpu_rnn.c,
 * cpu_loss.c, cpu_quant.c) ============================================== */

/* RNN/GRU/LSTM (ONNX opsets 7/14): X [seq, batch, input] (layout 1:
 * [batch, seq, input]); Y [seq, dirs, batch, hidden] (layout 1: [batch, seq,
 * dirs, hidden]); Y_h, Y_c [dirs, batch, hidden] (layout 1: [batch, dirs,
 * hidden]). `gates`: 1 RNN, 3 GRU, 4 LSTM. */
static dml_status_t rnn_rule(ictx_t *c, int64_t gates) {
  DML_RETURN_IF_ERROR(need_rank(c, 0, 3, 3));
  DML_RETURN_IF_ERROR(need_rank(c, 1, 3, 3));
  DML_RETURN_IF_ERROR(need_rank(c, 2, 3, 3));
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_FLOAT));
  for (uint32_t i = 1; i < c->n->n_inputs; i++)
    if (i != 4) DML_RETURN_IF_ERROR(same_dtype(c, 0, i));
  DML_RETURN_IF_ERROR(need_dtype(c, 4, DT_INDEX));
  const char *dir = "forward";
  int64_t layout = 0, hs = 0;
  DML_RETURN_IF_ERROR(attr_string(c, "direction", "forward", &dir));
  const int64_t nd = dml_shape_rnn_directions(dir); /* as the eager rule's */
  if (!nd)
    return fail(c, INVALID, "direction \"%s\" is not forward, reverse or bidirectional",
                dir);
  DML_RETURN_IF_ERROR(attr_int(c, "layout", 0, &layout));
  if (layout != 0 && layout != 1)
    return fail(c, INVALID, "layout %lld must be 0 or 1", (long long)layout);
  const dml_type_t *x = in_t(c, 0), *w = in_t(c, 1), *r = in_t(c, 2);
  dml_dim_t rh = r->dims[2];
  DML_RETURN_IF_ERROR(attr_int(c, "hidden_size", rh.sym < 0 ? rh.value : -1, &hs));
  char s1[TBUF], s2[TBUF];
  if (hs < 1 || !dim_is(rh, hs) || !dim_is(w->dims[0], nd) || !dim_is(r->dims[0], nd) ||
      !dim_is(w->dims[1], gates * hs) || !dim_is(r->dims[1], gates * hs) ||
      !dim_eq(w->dims[2], x->dims[2]))
    return fail(c, INVALID,
                "W %s and R %s must be [%lld, %lld, input] and [%lld, %lld, %lld] for "
                "hidden_size %lld",
                TS(w, s1), TS(r, s2), (long long)nd, (long long)(gates * hs),
                (long long)nd, (long long)(gates * hs), (long long)hs, (long long)hs);
  const dml_type_t *b = in_t(c, 3);
  if (b &&
      (b->rank != 2 || !dim_is(b->dims[0], nd) || !dim_is(b->dims[1], 2 * gates * hs)))
    return fail(c, INVALID, "B %s must be [%lld, %lld]", TS(b, s1), (long long)nd,
                (long long)(2 * gates * hs));
  dml_dim_t seq = x->dims[layout ? 1 : 0], batch = x->dims[layout ? 0 : 1];
  dml_type_t st = mk(x->dtype, 3);
  st.dims[0] = layout ? batch : D(nd);
  st.dims[1] = layout ? D(nd) : batch;
  st.dims[2] = D(hs);
  for (uint32_t i = 5; i < c->n->n_inputs && i < 7; i++) {
    const dml_type_t *t = in_t(c, i);
    if (t && (t->rank != 3 || !dim_eq(t->dims[0], st.dims[0]) ||
              !dim_eq(t->dims[1], st.dims[1]) || !dim_eq(t->dims[2], st.dims[2])))
      return fail(c, INVALID, "initial state (input %u) %s must be %s", i, TS(t, s1),
                  TS(&st, s2));
  }
  const dml_type_t *p = in_t(c, 7);
  if (p && (p->rank != 2 || !dim_is(p->dims[0], nd) || !dim_is(p->dims[1], 3 * hs)))
    return fail(c, INVALID, "P %s must be [%lld, %lld]", TS(p, s1), (long long)nd,
                (long long)(3 * hs));
  const dml_type_t *sl = in_t(c, 4);
  if (sl && (sl->rank != 1 || !dim_eq(sl->dims[0], batch)))
    return fail(c, INVALID, "sequence_lens %s must be [batch]", TS(sl, s1));
  dml_type_t y = mk(x->dtype, 4);
  y.dims[0] = layout ? batch : seq;
  y.dims[1] = layout ? seq : D(nd);
  y.dims[2] = layout ? D(nd) : batch;
  y.dims[3] = D(hs);
  set_out(c, 0, &y);
  set_out(c, 1, &st);
  set_out(c, 2, &st);
  return DML_OK;
}

/* NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss (opset 13): input
 * [N, C, d...], target [N, d...], weight [C]; loss is target-shaped for
 * reduction "none", else a scalar; SCE's log_prob has the input's type. */
static dml_status_t infer_loss(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_rank(c, 0, 2, DML_MAX_RANK));
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_FLOAT));
  DML_RETURN_IF_ERROR(need_dtype(c, 1, DT_INDEX));
  DML_RETURN_IF_ERROR(same_dtype(c, 0, 2));
  const dml_type_t *x = in_t(c, 0), *t = in_t(c, 1), *w = in_t(c, 2);
  char s1[TBUF], s2[TBUF];
  int ok = t->rank == x->rank - 1 && dim_eq(t->dims[0], x->dims[0]);
  for (int32_t i = 2; ok && i < x->rank; i++) ok = dim_eq(t->dims[i - 1], x->dims[i]);
  if (!ok)
    return fail(c, INVALID, "target %s must be input %s without dim 1", TS(t, s1),
                TS(x, s2));
  if (w && (w->rank != 1 || !dim_eq(w->dims[0], x->dims[1])))
    return fail(c, INVALID, "weight %s must be [C] of input %s", TS(w, s1), TS(x, s2));
  const char *red = "mean";
  DML_RETURN_IF_ERROR(attr_string(c, "reduction", "mean", &red));
  if (strcmp(red, "none") != 0 && strcmp(red, "sum") != 0 && strcmp(red, "mean") != 0)
    return fail(c, INVALID, "reduction \"%s\" is not none, sum or mean", red);
  dml_type_t o = mk(x->dtype, 0);
  if (strcmp(red, "none") == 0) {
    o = *t;
    o.dtype = x->dtype;
  }
  set_out(c, 0, &o);
  set_out(c, 1, x);
  return DML_OK;
}

/* Scale (input i) and zero point (input j): per tensor or 1-D per axis. */
static dml_status_t quant_params(ictx_t *c, uint32_t i, uint32_t j) {
  const dml_type_t *s = in_t(c, i), *z = in_t(c, j);
  if (s->dtype != DML_DTYPE_F32)
    return fail(c, INVALID, "scale (input %u) must be f32, got %s", i,
                dml_dtype_name(s->dtype));
  DML_RETURN_IF_ERROR(need_rank(c, i, 0, 1));
  if (z && z->rank != s->rank) {
    char s1[TBUF], s2[TBUF];
    return fail(c, INVALID, "zero point %s must have the scale's shape %s", TS(z, s1),
                TS(s, s2));
  }
  return DML_OK;
}

static int is_q8_dtype(dml_dtype_t dt) {
  return dt == DML_DTYPE_U8 || dt == DML_DTYPE_I8;
}

static dml_status_t need_q8(const ictx_t *c, uint32_t i) {
  const dml_type_t *t = in_t(c, i);
  if (t && !is_q8_dtype(t->dtype))
    return fail(c, INVALID, "input %u must be u8 or i8, got %s", i,
                dml_dtype_name(t->dtype));
  return DML_OK;
}

/* QuantizeLinear-19 to a float8 zero point's dtype, DequantizeLinear-19 of
 * a float8 x (ONNX: the zero point is 0; the CPU kernel checks its value):
 * the scale f32, f16 or bf16, scalar or 1-D; Quantize's x of the scale's
 * dtype; y of x's shape, Dequantize's of the scale's dtype. Not blocked. */
static dml_status_t quantize_rule_f8(ictx_t *c, int dequant) {
  const dml_type_t *x = in_t(c, 0), *s = in_t(c, 1), *z = in_t(c, 2);
  int64_t block = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "block_size", 0, &block));
  if (block != 0)
    return fail(c, UNIMPL, "block_size %lld with float8 data is not supported",
                (long long)block);
  if (!dml_dtype_is_float(s->dtype) || s->dtype == DML_DTYPE_F64)
    return fail(c, INVALID, "scale must be f32, f16 or bf16, got %s",
                dml_dtype_name(s->dtype));
  DML_RETURN_IF_ERROR(need_rank(c, 1, 0, 1));
  if (z && z->rank > 1) {
    char s1[TBUF];
    return fail(c, INVALID, "zero point %s must be a scalar or 1-D", TS(z, s1));
  }
  dml_type_t o = *x;
  if (dequant) {
    if (z && z->dtype != x->dtype)
      return fail(c, INVALID, "zero point must be %s as x, got %s",
                  dml_dtype_name(x->dtype), dml_dtype_name(z->dtype));
    o.dtype = s->dtype;
  } else {
    if (x->dtype != s->dtype)
      return fail(c, INVALID, "x (%s) must have the scale's dtype (%s)",
                  dml_dtype_name(x->dtype), dml_dtype_name(s->dtype));
    o.dtype = z->dtype;
  }
  set_out(c, 0, &o);
  return DML_OK;
}

/* QuantizeLinear (13): y has x's shape and the zero point's dtype (u8 when
 * absent). DequantizeLinear (13): f32 of x's shape. float8: quantize_rule_f8. */
static dml_status_t quantize_rule(ictx_t *c, int dequant) {
  const dml_type_t *x = in_t(c, 0), *z = in_t(c, 2);
  if (dml_dtype_is_float8(dequant ? x->dtype : z ? z->dtype : DML_DTYPE_U8))
    return quantize_rule_f8(c, dequant);
  int64_t block = 0;
  if (dequant) DML_RETURN_IF_ERROR(attr_int(c, "block_size", 0, &block));
  if (block != 0) {
    /* blocked DequantizeLinear (21): scale (and zero point) of x's rank,
     * x's dims but ceil(d / block_size) along the axis */
    const dml_type_t *s = in_t(c, 1);
    int64_t axis = 1;
    int32_t ax = 0;
    DML_RETURN_IF_ERROR(attr_int(c, "axis", 1, &axis));
    DML_RETURN_IF_ERROR(norm_axis(c, axis, x->rank, "axis", &ax));
    if (block < 0) return fail(c, INVALID, "block_size %lld < 0", (long long)block);
    if (s->dtype != DML_DTYPE_F32)
      return fail(c, INVALID, "scale must be f32, got %s", dml_dtype_name(s->dtype));
    for (uint32_t j = 1; j <= 2; j++) {
      const dml_type_t *p = in_t(c, j);
      if (!p) continue;
      int ok = p->rank == x->rank;
      for (int32_t i = 0; ok && i < x->rank; i++) {
        dml_dim_t want = x->dims[i];
        if (i == ax) {
          if (want.sym >= 0) return fail(c, UNIMPL, "blocked axis %d is symbolic", ax);
          want = D((want.value + block - 1) / block);
        }
        ok = dim_eq(p->dims[i], want);
      }
      if (!ok) {
        char s1[TBUF], s2[TBUF];
        return fail(c, INVALID,
                    "input %u %s must have x's shape %s but ceil(d / %lld) along axis %d",
                    j, TS(p, s1), TS(x, s2), (long long)block, ax);
      }
    }
  } else {
    DML_RETURN_IF_ERROR(quant_params(c, 1, 2));
  }
  dml_type_t o = *x;
  if (dequant) {
    if (!is_q8_dtype(x->dtype) && x->dtype != DML_DTYPE_I32)
      return fail(c, INVALID, "x must be u8, i8 or i32, got %s",
                  dml_dtype_name(x->dtype));
    DML_RETURN_IF_ERROR(same_dtype(c, 0, 2));
    o.dtype = DML_DTYPE_F32;
  } else {
    if (x->dtype != DML_DTYPE_F32 && x->dtype != DML_DTYPE_I32)
      return fail(c, INVALID, "x must be f32 or i32, got %s", dml_dtype_name(x->dtype));
    DML_RETURN_IF_ERROR(need_q8(c, 2));
    o.dtype = z ? z->dtype : DML_DTYPE_U8;
  }
  set_out(c, 0, &o);
  return DML_OK;
}

/* DynamicQuantizeLinear (11): y u8 of x's shape, y_scale f32 and
 * y_zero_point u8 scalars. */
static dml_status_t infer_dyn_quantize(ictx_t *c) {
  const dml_type_t *x = in_t(c, 0);
  if (x->dtype != DML_DTYPE_F32)
    return fail(c, INVALID, "x must be f32, got %s", dml_dtype_name(x->dtype));
  dml_type_t y = *x, s = mk(DML_DTYPE_F32, 0), z = mk(DML_DTYPE_U8, 0);
  y.dtype = DML_DTYPE_U8;
  set_out(c, 0, &y);
  set_out(c, 1, &s);
  set_out(c, 2, &z);
  return DML_OK;
}

/* MatMulInteger (10, i32) and QLinearMatMul (10, y_zero_point's dtype):
 * numpy matmul shapes of inputs ia and ib. */
static dml_status_t infer_qmatmul(ictx_t *c, uint32_t ia, uint32_t ib, dml_dtype_t dt) {
  DML_RETURN_IF_ERROR(need_rank(c, ia, 1, DML_MAX_RANK));
  DML_RETURN_IF_ERROR(need_rank(c, ib, 1, DML_MAX_RANK));
  DML_RETURN_IF_ERROR(need_q8(c, ia));
  DML_RETURN_IF_ERROR(need_q8(c, ib));
  dml_type_t a = *in_t(c, ia), b = *in_t(c, ib);
  int pa = a.rank == 1, pb = b.rank == 1;
  if (pa) {
    a.rank = 2;
    a.dims[1] = a.dims[0];
    a.dims[0] = D(1);
  }
  if (pb) {
    b.rank = 2;
    b.dims[1] = D(1);
  }
  if (!dim_eq(a.dims[a.rank - 1], b.dims[b.rank - 2])) {
    char s1[TBUF], s2[TBUF];
    return fail(c, INVALID, "inner dims of %s and %s differ", TS(in_t(c, ia), s1),
                TS(in_t(c, ib), s2));
  }
  dml_type_t ba = a, bb = b, bo;
  ba.rank -= 2;
  bb.rank -= 2;
  DML_RETURN_IF_ERROR(bcast(c, &ba, &bb, &bo));
  dml_type_t o = mk(dt, 0);
  for (int32_t i = 0; i < bo.rank; i++) o.dims[o.rank++] = bo.dims[i];
  if (!pa) o.dims[o.rank++] = a.dims[a.rank - 2];
  if (!pb) o.dims[o.rank++] = b.dims[b.rank - 1];
  set_out(c, 0, &o);
  return DML_OK;
}

/* ConvInteger (10, i32) and QLinearConv (10, y_zero_point's dtype): Conv's
 * output shape for x (input ix) and w (input iw). */
static dml_status_t infer_qconv(ictx_t *c, uint32_t ix, uint32_t iw, dml_dtype_t dt) {
  DML_RETURN_IF_ERROR(need_rank(c, ix, 3, DML_MAX_RANK));
  const dml_type_t *x = in_t(c, ix), *wt = in_t(c, iw);
  DML_RETURN_IF_ERROR(need_rank(c, iw, x->rank, x->rank));
  DML_RETURN_IF_ERROR(need_q8(c, ix));
  DML_RETURN_IF_ERROR(need_q8(c, iw));
  char s1[TBUF], s2[TBUF];
  if (!dml_type_is_static(wt))
    return fail(c, UNIMPL, "%s needs static weights, got %s", opn(c), TS(wt, s1));
  int64_t group = 1;
  DML_RETURN_IF_ERROR(attr_int(c, "group", 1, &group));
  int32_t nsp = x->rank - 2;
  int64_t kernel[DML_MAX_RANK], sp[DML_MAX_RANK], cin;
  if (group < 1 || wt->dims[0].value % group != 0 ||
      __builtin_mul_overflow(wt->dims[1].value, group, &cin) ||
      !dim_eq(x->dims[1], D(cin)))
    return fail(c, INVALID, "channels of x %s do not match w %s with group %lld",
                TS(x, s1), TS(wt, s2), (long long)group);
  for (int32_t i = 0; i < nsp; i++) kernel[i] = wt->dims[2 + i].value;
  window_t w;
  DML_RETURN_IF_ERROR(read_window(c, nsp, kernel, &w));
  DML_RETURN_IF_ERROR(static_spatial(c, x, sp));
  dml_type_t o = mk(dt, x->rank);
  o.dims[0] = x->dims[0];
  o.dims[1] = wt->dims[0];
  for (int32_t i = 0; i < nsp; i++)
    DML_RETURN_IF_ERROR(window_out(c, &w, i, sp[i], 0, &o.dims[2 + i].value));
  set_out(c, 0, &o);
  return DML_OK;
}

/* QLinearAdd (dmlc's, ops.def): a and b q8 of one type; y a's shape with
 * y_zero_point's dtype. */
static dml_status_t infer_qadd(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_q8(c, 0));
  DML_RETURN_IF_ERROR(need_q8(c, 3));
  DML_RETURN_IF_ERROR(need_q8(c, 7));
  const dml_type_t *a = in_t(c, 0), *b = in_t(c, 3);
  if (!dml_type_equal(a, b)) {
    char s1[TBUF], s2[TBUF];
    return fail(c, INVALID, "a %s and b %s must have one type", TS(a, s1), TS(b, s2));
  }
  dml_type_t o = *a;
  o.dtype = in_t(c, 7)->dtype;
  set_out(c, 0, &o);
  return DML_OK;
}

/* MatMulWQ (dmlc's, ops.def; layouts and shapes in dml_wq.h): a f32
 * [..., K]; w [ceil(N / 32), K, 32] (bits 8, i8/u8) or u8 [ceil(N / 32), K,
 * 16] (bits 4); scale f32 [ceil(K / block_size), N] (static: N and the
 * groups come from it); zero point of scale's shape (w's dtype; i8 with bits
 * 4); y f32 [..., N]. */
static dml_status_t infer_mmwq(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_rank(c, 0, 1, DML_MAX_RANK));
  DML_RETURN_IF_ERROR(need_rank(c, 1, 3, 3));
  DML_RETURN_IF_ERROR(need_rank(c, 2, 2, 2));
  int64_t bits = 0, bs = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "bits", 0, &bits));
  DML_RETURN_IF_ERROR(attr_int(c, "block_size", 0, &bs));
  const dml_type_t *a = in_t(c, 0), *w = in_t(c, 1), *s = in_t(c, 2), *z = in_t(c, 3);
  char s1[TBUF], s2[TBUF], s3[TBUF];
  if ((bits != 4 && bits != 8) || bs < 1)
    return fail(c, INVALID, "bits must be 4 or 8 and block_size >= 1, got %lld and %lld",
                (long long)bits, (long long)bs);
  if (a->dtype != DML_DTYPE_F32 || s->dtype != DML_DTYPE_F32)
    return fail(c, INVALID, "a and scale must be f32, got %s and %s", TS(a, s1),
                TS(s, s2));
  if (!dml_type_is_static(w) || !dml_type_is_static(s))
    return fail(c, UNIMPL, "w and scale must have static shapes, got %s and %s",
                TS(w, s1), TS(s, s2));
  int64_t K = w->dims[1].value, N = s->dims[1].value;
  dml_dtype_t zdt = bits == 4 ? DML_DTYPE_I8 : w->dtype;
  int ok = (bits == 4 ? w->dtype == DML_DTYPE_U8 : is_q8_dtype(w->dtype)) &&
           w->dims[0].value == dml_wq_panels(N) &&
           w->dims[2].value == DML_WQ_ROW_BYTES(bits);
  ok = ok && s->dims[0].value == dml_wq_groups(K, bs) &&
       dim_eq(a->dims[a->rank - 1], D(K));
  if (z) { /* scale's shape */
    ok = ok && z->dtype == zdt && z->rank == 2 && dim_eq(z->dims[0], s->dims[0]) &&
         dim_eq(z->dims[1], s->dims[1]);
  }
  if (!ok)
    return fail(c, INVALID,
                "a %s, w %s, scale %s (zero point %s) do not fit bits %lld, block_size "
                "%lld (dml_wq.h)",
                TS(a, s1), TS(w, s2), TS(s, s3), z ? dml_dtype_name(z->dtype) : "none",
                (long long)bits, (long long)bs);
  dml_type_t o = *a;
  o.dims[o.rank - 1] = D(N);
  set_out(c, 0, &o);
  return DML_OK;
}

static dml_dtype_t in_dtype_or(const ictx_t *c, uint32_t i, dml_dtype_t dflt) {
  const dml_type_t *t = in_t(c, i);
  return t ? t->dtype : dflt;
}

/* ==== signal ops, opset 17 (kernels: runtime/cpu/cpu_signal.c) ========= */

/* Static scalar value of integer input i (`what` in messages). */
static dml_status_t static_scalar(const ictx_t *c, uint32_t i, const char *what,
                                  int64_t lo, int64_t *out) {
  elems_t e;
  DML_RETURN_IF_ERROR(need_elems(c, i, what, 0, &e));
  if (e.n != 1)
    return fail(c, INVALID, "%s (input %u) must be a scalar, has %u elements", what, i,
                e.n);
  if (e.e[0].value < lo)
    return fail(c, INVALID, "%s (input %u) = %lld must be >= %lld", what, i,
                (long long)e.e[0].value, (long long)lo);
  *out = e.e[0].value;
  return DML_OK;
}

/* HannWindow, HammingWindow, BlackmanWindow: [size] of output_datatype. */
static dml_status_t infer_window(ictx_t *c) {
  int64_t size = 0;
  dml_dtype_t dt = DML_DTYPE_INVALID;
  DML_RETURN_IF_ERROR(attr_dtype(c, "output_datatype", 0, DML_DTYPE_F32, &dt));
  if (dt == DML_DTYPE_BOOL) return fail(c, INVALID, "output_datatype must be numeric");
  if (elems_runtime(c, 0)) return set_out_all_dyn(c, 0, dt, 1, dyn_bound(c));
  DML_RETURN_IF_ERROR(static_scalar(c, 0, "size", 0, &size));
  dml_type_t o = mk(dt, 1);
  o.dims[0] = D(size);
  set_out(c, 0, &o);
  return DML_OK;
}

/* DFT: the input with the signal axis resized to dft_length (n/2+1 when
 * onesided) and a last dim of 2. */
/* DFT (opsets 17, 20; runtime/cpu/cpu_signal.c): the axis is the
 * attribute (17) or input 2 (20). Input 2 known at compile time, or not
 * changing the output shape (no dft_length, not onesided): any axis. */
static dml_status_t infer_dft(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_rank(c, 0, 2, DML_MAX_RANK));
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_FLOAT));
  const dml_type_t *x = in_t(c, 0);
  char tb[TBUF];
  int32_t r = x->rank;
  if (!dim_is(x->dims[r - 1], 1) && !dim_is(x->dims[r - 1], 2))
    return fail(c, INVALID, "input %s must end in a dim of 1 (real) or 2 (complex)",
                TS(x, tb));
  int64_t axis = 1, inv = 0, one = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "axis", 1, &axis));
  DML_RETURN_IF_ERROR(attr_int(c, "inverse", 0, &inv));
  DML_RETURN_IF_ERROR(attr_int(c, "onesided", 0, &one));
  int axis_known = 1;
  if (in_v(c, 2)) {
    elems_t e;
    if (!dml_dtype_is_int(in_t(c, 2)->dtype) || in_t(c, 2)->rank > 1)
      return fail(c, INVALID, "axis (input 2) must be an integer scalar");
    if (elems_of(c, in_v(c, 2), &e) == 1 && e.n == 1 && e.e[0].sym < 0)
      axis = e.e[0].value;
    else
      axis_known = 0;
  }
  dml_type_t o = *x;
  o.dims[r - 1] = D(one && inv ? 1 : 2);
  if (!axis_known) {
    if (in_v(c, 1))
      return fail(c, UNIMPL,
                  "the output shape of a DFT with dft_length depends on axis (input 2), "
                  "which is only known at run time");
    if (!one) {
      set_out(c, 0, &o);
      return DML_OK;
    }
    /* onesided: the dim at the run-time axis becomes n/2+1 (forward) or
     * 2*(n-1) (inverse), the others stay; each a data-dependent symbol
     * bounded by that of both (cpu_outdims.c sets them) */
    int dyn[DML_MAX_RANK] = {0};
    int64_t b[DML_MAX_RANK];
    for (int32_t d = 0; d < r - 1; d++) {
      int64_t m = dim_max(c, x->dims[d]);
      dyn[d] = 1, b[d] = inv ? sat_mul(m, 2) : m;
    }
    return set_out_dyn(c, 0, o, dyn, b);
  }
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r - 2)
    return fail(c, INVALID,
                "axis is out of range for %s (the last dim is not a signal axis)",
                TS(x, tb));
  int64_t n = 0;
  if (in_v(c, 1)) {
    DML_RETURN_IF_ERROR(static_scalar(c, 1, "dft_length", 1, &n));
    o.dims[axis] = D(one && !inv ? n / 2 + 1 : n);
  } else if (one) {
    if (x->dims[axis].sym >= 0)
      return fail(c, UNIMPL, "onesided DFT of a symbolic signal length needs dft_length");
    int64_t m = x->dims[axis].value;
    if (inv && m < 2)
      return fail(c, INVALID, "onesided inverse DFT of %lld bins needs dft_length",
                  (long long)m);
    o.dims[axis] = D(inv ? 2 * (m - 1) : m / 2 + 1);
  }
  set_out(c, 0, &o);
  return DML_OK;
}

/* Col2Im's attributes for r spatial dims: dilations, strides (>= 1,
 * default 1) and pads (2r, >= 0, default 0). */
static dml_status_t col2im_attrs(const ictx_t *c, int32_t r, int64_t *dil, int64_t *str,
                                 int64_t *pads) {
  DML_RETURN_IF_ERROR(attr_ints_n(c, "dilations", r, 1, 1, dil));
  DML_RETURN_IF_ERROR(attr_ints_n(c, "strides", r, 1, 1, str));
  return attr_ints_n(c, "pads", 2 * r, 0, 0, pads);
}

/* Col2Im: [N, C*B, L] -> [N, C, image_shape...], B = prod(block_shape);
 * C and the image dims are data-dependent symbols when image_shape or
 * block_shape is only known at run time (bounds: the input's dim 1 and the
 * dynamic dim bound). */
static dml_status_t infer_col2im(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_rank(c, 0, 3, 3));
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_FLOAT));
  const dml_type_t *x = in_t(c, 0);
  char tb[TBUF];
  uint32_t r = 0, rb = 0;
  DML_RETURN_IF_ERROR(runtime_len(c, 1, "image_shape", &r));
  DML_RETURN_IF_ERROR(runtime_len(c, 2, "block_shape", &rb));
  if (r != rb || r < 1 || r + 2 > DML_MAX_RANK)
    return fail(c, INVALID,
                "image_shape (%u values) and block_shape (%u) must have the "
                "same length, 1..%d",
                r, rb, DML_MAX_RANK - 2);
  int64_t dil[DML_MAX_RANK], str[DML_MAX_RANK], pads[2 * DML_MAX_RANK];
  DML_RETURN_IF_ERROR(col2im_attrs(c, (int32_t)r, dil, str, pads));
  dml_type_t o = mk(x->dtype, (int32_t)r + 2);
  int dyn[DML_MAX_RANK] = {0};
  int64_t b[DML_MAX_RANK];
  o.dims[0] = x->dims[0];
  elems_t img, blk;
  int ki = elems_of(c, in_v(c, 1), &img) == 1, kb = elems_of(c, in_v(c, 2), &blk) == 1;
  for (uint32_t i = 0; ki && i < r; i++) ki = img.e[i].sym < 0 && img.e[i].value >= 0;
  for (uint32_t i = 0; kb && i < r; i++) kb = blk.e[i].sym < 0 && blk.e[i].value >= 1;
  int64_t B = 1, L = 1;
  if (kb)
    for (uint32_t i = 0; i < r; i++) B = sat_mul(B, blk.e[i].value);
  if (kb && x->dims[1].sym < 0) {
    if (x->dims[1].value % B)
      return fail(c, INVALID, "dim 1 of %s is not a multiple of prod(block_shape) = %lld",
                  TS(x, tb), (long long)B);
    o.dims[1] = D(x->dims[1].value / B);
  } else {
    dyn[1] = 1, b[1] = dim_max(c, x->dims[1]);
  }
  for (uint32_t i = 0; i < r; i++) {
    if (ki) {
      o.dims[2 + i] = D(img.e[i].value);
      if (kb) {
        int64_t span = dil[i] * (blk.e[i].value - 1) + 1,
                ext = img.e[i].value + pads[i] + pads[r + i] - span;
        L = ext < 0 ? 0 : sat_mul(L, ext / str[i] + 1);
      }
    } else {
      dyn[2 + i] = 1, b[2 + i] = dyn_bound(c);
    }
  }
  if (ki && kb && x->dims[2].sym < 0 && x->dims[2].value != L)
    return fail(c, INVALID, "dim 2 of %s must be the %lld block positions", TS(x, tb),
                (long long)L);
  return set_out_dyn(c, 0, o, dyn, b);
}

/* AffineGrid: theta [N, 2, 3] with size of 4 values -> [N, H, W, 2];
 * [N, 3, 4] with 5 values -> [N, D, H, W, 3]. Spatial dims of a size only
 * known at run time are data-dependent symbols. */
static dml_status_t infer_affine_grid(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_rank(c, 0, 3, 3));
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_FLOAT));
  if (!dml_dtype_is_int(in_t(c, 1)->dtype))
    return fail(c, INVALID, "size (input 1) must be an integer tensor");
  const dml_type_t *th = in_t(c, 0);
  char tb[TBUF];
  uint32_t k = 0;
  DML_RETURN_IF_ERROR(runtime_len(c, 1, "size", &k));
  int32_t sd = (int32_t)k - 2; /* spatial dims */
  if ((k != 4 && k != 5) || !dim_is(th->dims[1], sd) || !dim_is(th->dims[2], sd + 1))
    return fail(c, INVALID,
                "theta %s and size (%u values) must be [N,2,3] and 4 values (2-D) or "
                "[N,3,4] and 5 values (3-D)",
                TS(th, tb), k);
  dml_type_t o = mk(th->dtype, sd + 2);
  int dyn[DML_MAX_RANK] = {0};
  int64_t b[DML_MAX_RANK];
  o.dims[0] = th->dims[0];
  o.dims[sd + 1] = D(sd);
  elems_t e;
  int known = elems_of(c, in_v(c, 1), &e) == 1 && e.n == k;
  for (int32_t i = 0; i < sd; i++) {
    dml_dim_t v = known ? e.e[2 + i] : D(-1);
    if (v.sym < 0 && v.value >= 0)
      o.dims[1 + i] = v;
    else
      dyn[1 + i] = 1, b[1 + i] = dyn_bound(c);
  }
  return set_out_dyn(c, 0, o, dyn, b);
}

/* DeformConv (2-D): [N, C, H, W], W [oC, C/group, kH, kW], offset
 * [N, og*2*kH*kW, oH, oW] -> [N, oC, oH, oW]; the conv output size of the
 * attributes must be offset's oH, oW where both are static. */
static dml_status_t infer_deform_conv(ictx_t *c) {
  for (uint32_t i = 0; i < 3; i++) DML_RETURN_IF_ERROR(need_rank(c, i, 4, 4));
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_FLOAT));
  for (uint32_t i = 1; i < c->n->n_inputs; i++)
    if (in_v(c, i)) DML_RETURN_IF_ERROR(same_dtype(c, 0, i));
  const dml_type_t *x = in_t(c, 0), *w = in_t(c, 1), *off = in_t(c, 2);
  char ta[TBUF], tb[TBUF], tc[TBUF];
  int64_t group = 1, og = 1, dil[2], str[2], pads[4], ks[2];
  DML_RETURN_IF_ERROR(attr_int(c, "group", 1, &group));
  DML_RETURN_IF_ERROR(attr_int(c, "offset_group", 1, &og));
  DML_RETURN_IF_ERROR(attr_ints_n(c, "dilations", 2, 1, 1, dil));
  DML_RETURN_IF_ERROR(attr_ints_n(c, "strides", 2, 1, 1, str));
  DML_RETURN_IF_ERROR(attr_ints_n(c, "pads", 4, 0, 0, pads));
  DML_RETURN_IF_ERROR(attr_ints_n(c, "kernel_shape", 2, 0, 0, ks));
  for (int i = 0; i < 2; i++)
    if (!ks[i]) ks[i] = w->dims[2 + i].sym < 0 ? w->dims[2 + i].value : 0;
  int ok = group >= 1 && og >= 1 && dim_is(w->dims[2], ks[0]) &&
           dim_is(w->dims[3], ks[1]) && dim_eq(off->dims[0], x->dims[0]) &&
           dim_is(off->dims[1], og * 2 * ks[0] * ks[1]);
  if (ok && x->dims[1].sym < 0 && w->dims[1].sym < 0)
    ok = x->dims[1].value == w->dims[1].value * group && x->dims[1].value % og == 0;
  if (ok && w->dims[0].sym < 0) ok = w->dims[0].value % group == 0;
  for (int i = 0; ok && i < 2; i++)
    if (x->dims[2 + i].sym < 0 && off->dims[2 + i].sym < 0)
      ok = off->dims[2 + i].value ==
           (x->dims[2 + i].value + pads[i] + pads[2 + i] - ((ks[i] - 1) * dil[i] + 1)) /
                   str[i] +
               1;
  if (!ok)
    return fail(c, INVALID,
                "X %s, W %s and offset %s do not agree with group %lld, offset_group "
                "%lld and the kernel, pads, strides, dilations",
                TS(x, ta), TS(w, tb), TS(off, tc), (long long)group, (long long)og);
  dml_type_t o = mk(x->dtype, 4);
  o.dims[0] = x->dims[0], o.dims[1] = w->dims[0];
  o.dims[2] = off->dims[2], o.dims[3] = off->dims[3];
  set_out(c, 0, &o);
  return DML_OK;
}

/* STFT: [batch, frames, bins, 2]. */
static dml_status_t infer_stft(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_rank(c, 0, 3, 3));
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_FLOAT));
  DML_RETURN_IF_ERROR(same_dtype(c, 0, 2));
  const dml_type_t *x = in_t(c, 0), *w = in_t(c, 2);
  char tb[TBUF];
  if (x->dims[1].sym >= 0 || (!dim_is(x->dims[2], 1) && !dim_is(x->dims[2], 2)))
    return fail(c, x->dims[1].sym >= 0 ? UNIMPL : INVALID,
                "signal %s must be [batch, static length, 1 or 2]", TS(x, tb));
  int64_t step = 1, flen = -1, one = 1;
  /* frame_step fed at run time: the frame count is a data-dependent symbol
   * bounded by that of step 1 (cpu_outdims.c sets it) */
  int step_rt = elems_runtime(c, 1);
  if (!step_rt) DML_RETURN_IF_ERROR(static_scalar(c, 1, "frame_step", 1, &step));
  /* frame_length fed at run time: without a window, the frame and bin
   * counts are data-dependent symbols (bounds: frame_length 1) */
  int flen_rt = in_v(c, 3) && elems_runtime(c, 3);
  if (in_v(c, 3) && !flen_rt)
    DML_RETURN_IF_ERROR(static_scalar(c, 3, "frame_length", 1, &flen));
  if (flen_rt && !w) {
    DML_RETURN_IF_ERROR(attr_int(c, "onesided", 1, &one));
    dml_type_t o = mk(x->dtype, 4);
    int64_t len = x->dims[1].value;
    o.dims[0] = x->dims[0], o.dims[3] = D(2);
    int dyn[4] = {0, 1, 1, 0};
    int64_t b[4] = {0, len, one ? len / 2 + 1 : len, 0};
    return set_out_dyn(c, 0, o, dyn, b);
  }
  if (w) {
    if (w->rank != 1 || w->dims[0].sym >= 0 || (flen >= 0 && w->dims[0].value != flen))
      return fail(c, INVALID, "window %s must be [frame_length]", TS(w, tb));
    if (flen < 0) flen = w->dims[0].value;
  }
  if (flen < 0) return fail(c, INVALID, "frame_length or window is required");
  if (flen > x->dims[1].value)
    return fail(c, INVALID, "frame_length %lld exceeds the signal length",
                (long long)flen);
  DML_RETURN_IF_ERROR(attr_int(c, "onesided", 1, &one));
  dml_type_t o = mk(x->dtype, 4);
  o.dims[0] = x->dims[0];
  o.dims[1] = D((x->dims[1].value - flen) / step + 1);
  o.dims[2] = D(one ? flen / 2 + 1 : flen);
  o.dims[3] = D(2);
  int dyn[4] = {0, step_rt, 0, 0};
  int64_t b[4] = {0, o.dims[1].value, 0, 0};
  return set_out_dyn(c, 0, o, dyn, b);
}

/* MelWeightMatrix: [dft_length/2+1, num_mel_bins] of output_datatype. */
static dml_status_t infer_mel(ictx_t *c) {
  int64_t nmel = 0, dftl = 0;
  /* num_mel_bins or dft_length fed at run time: that dim is a
   * data-dependent symbol (bound: the dynamic dim bound; cpu_outdims.c) */
  int rt[2] = {elems_runtime(c, 0), elems_runtime(c, 1)};
  if (!rt[0]) DML_RETURN_IF_ERROR(static_scalar(c, 0, "num_mel_bins", 1, &nmel));
  if (!rt[1]) DML_RETURN_IF_ERROR(static_scalar(c, 1, "dft_length", 1, &dftl));
  DML_RETURN_IF_ERROR(need_dtype(c, 2, DT_INDEX));
  DML_RETURN_IF_ERROR(need_dtype(c, 3, DT_FLOAT));
  DML_RETURN_IF_ERROR(need_dtype(c, 4, DT_FLOAT));
  dml_dtype_t dt;
  DML_RETURN_IF_ERROR(attr_dtype(c, "output_datatype", 0, DML_DTYPE_F32, &dt));
  if (dt == DML_DTYPE_BOOL) return fail(c, INVALID, "output_datatype must be numeric");
  dml_type_t o = mk(dt, 2);
  o.dims[0] = D(dftl / 2 + 1);
  o.dims[1] = D(nmel);
  int dyn[2] = {rt[1], rt[0]};
  int64_t b[2] = {dyn_bound(c) / 2 + 1, dyn_bound(c)};
  return set_out_dyn(c, 0, o, dyn, b);
}

/* TfIdfVectorizer (opset 9): X i32/i64 [C] or [N, C] -> f32 [K] or
 * [N, K], K = max(ngram_indexes) + 1; the attributes are checked by
 * dml_tfidf_parse (runtime/base/dml_tfidf.h). String pools: UNIMPLEMENTED. */
static dml_status_t infer_tfidf(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_rank(c, 0, 1, 2));
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_INDEX));
  dml_tfidf_t t;
  char why[256];
  int rc = dml_tfidf_parse(c->n->attrs, c->n->n_attrs, &t, why, sizeof(why));
  if (rc) return fail(c, rc > 0 ? UNIMPL : INVALID, "%s", why);
  const dml_type_t *x = in_t(c, 0);
  dml_type_t o = mk(DML_DTYPE_F32, x->rank);
  if (x->rank == 2) o.dims[0] = x->dims[0];
  o.dims[x->rank - 1] = D(t.out_size);
  set_out(c, 0, &o);
  return DML_OK;
}

/* ==== random ops ======================================================== */

/* RandomUniform/RandomNormal: the `shape` attribute (required) and `dtype`
 * (ONNX code, default float); the *Like forms: input 0's shape, `dtype`
 * default input 0's. Float dtypes only. */
static dml_status_t random_rule(ictx_t *c, int like) {
  dml_type_t t;
  if (like) {
    t = *in_t(c, 0);
  } else {
    const int64_t *sh;
    size_t n;
    DML_RETURN_IF_ERROR(attr_ints(c, "shape", &sh, &n));
    if (!sh && !dml_ir_node_attr(c->n, "shape"))
      return fail(c, INVALID, "attribute 'shape' is required");
    if (n > DML_MAX_RANK)
      return fail(c, UNIMPL, "shape of rank %zu exceeds %d", n, DML_MAX_RANK);
    t = mk(DML_DTYPE_F32, (int32_t)n);
    for (size_t i = 0; i < n; i++) {
      if (sh[i] < 0)
        return fail(c, INVALID, "shape[%zu] = %lld is negative", i, (long long)sh[i]);
      t.dims[i] = D(sh[i]);
    }
  }
  DML_RETURN_IF_ERROR(
      attr_dtype(c, "dtype", 0, like ? t.dtype : DML_DTYPE_F32, &t.dtype));
  if (!dml_dtype_is_float(t.dtype))
    return fail(c, UNIMPL, "dtype %s is not supported (float dtypes only)",
                dml_dtype_name(t.dtype));
  set_out(c, 0, &t);
  return DML_OK;
}

/* Bernoulli: input's shape; `dtype` default input's. */
static dml_status_t infer_bernoulli(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_FLOAT));
  dml_type_t t = *in_t(c, 0);
  DML_RETURN_IF_ERROR(attr_dtype(c, "dtype", 0, t.dtype, &t.dtype));
  set_out(c, 0, &t);
  return DML_OK;
}

/* Multinomial: [batch, class_size] -> [batch, sample_size] of `dtype`
 * (int32 default, or int64). */
static dml_status_t infer_multinomial(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_rank(c, 0, 2, 2));
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_FLOAT));
  int64_t ss = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "sample_size", 1, &ss));
  if (ss < 1)
    return fail(c, INVALID, "sample_size must be >= 1, got %lld", (long long)ss);
  dml_dtype_t dt = DML_DTYPE_INVALID;
  DML_RETURN_IF_ERROR(attr_dtype(c, "dtype", 0, DML_DTYPE_I32, &dt));
  if (dt != DML_DTYPE_I32 && dt != DML_DTYPE_I64)
    return fail(c, INVALID, "dtype must be int32 or int64, got %s", dml_dtype_name(dt));
  dml_type_t t = mk(dt, 2);
  t.dims[0] = in_t(c, 0)->dims[0];
  t.dims[1] = D(ss);
  set_out(c, 0, &t);
  return DML_OK;
}

/* MaxPoolGrad / AveragePoolGrad (dY, X) -> dX typed as X; ConvWeightGrad
 * (dY [N,M,...], X [N,C,...]) -> dW [M, C/group, kernel_shape...]. */
static dml_status_t infer_pool_grad(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_rank(c, 1, 3, DML_MAX_RANK));
  DML_RETURN_IF_ERROR(need_rank(c, 0, in_t(c, 1)->rank, in_t(c, 1)->rank));
  if (in_t(c, 0)->dtype != in_t(c, 1)->dtype || !dml_dtype_is_float(in_t(c, 1)->dtype))
    return fail(c, INVALID, "dY and X must have one float dtype");
  set_out(c, 0, in_t(c, 1));
  return DML_OK;
}

static dml_status_t infer_conv_weight_grad(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_rank(c, 1, 3, DML_MAX_RANK));
  const dml_type_t *dy = in_t(c, 0), *x = in_t(c, 1);
  DML_RETURN_IF_ERROR(need_rank(c, 0, x->rank, x->rank));
  if (dy->dtype != x->dtype || !dml_dtype_is_float(x->dtype))
    return fail(c, INVALID, "dY and X must have one float dtype");
  const int64_t *k = NULL;
  size_t nk = 0;
  int64_t group = 1;
  DML_RETURN_IF_ERROR(attr_ints(c, "kernel_shape", &k, &nk));
  DML_RETURN_IF_ERROR(attr_int(c, "group", 1, &group));
  if (nk != (size_t)(x->rank - 2))
    return fail(c, INVALID, "kernel_shape needs %d entries, got %zu", (int)x->rank - 2,
                nk);
  if (x->dims[1].sym >= 0 || dy->dims[1].sym >= 0 || group < 1 ||
      x->dims[1].value % group != 0)
    return fail(c, INVALID, "channels must be static and divisible by group %lld",
                (long long)group);
  dml_type_t t = *x;
  t.dims[0] = dy->dims[1];
  t.dims[1] = D(x->dims[1].value / group);
  for (size_t i = 0; i < nk; i++) {
    if (k[i] < 1) return fail(c, INVALID, "kernel_shape[%zu] = %lld", i, (long long)k[i]);
    t.dims[2 + i] = D(k[i]);
  }
  set_out(c, 0, &t);
  return DML_OK;
}

/* ConvInputGrad (dY [N,M,y...], W [M,C/group,k...], X [N,C,x...]) -> dX
 * typed as X: one float dtype, one rank >= 3. */
static dml_status_t infer_conv_input_grad(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_rank(c, 2, 3, DML_MAX_RANK));
  const dml_type_t *dy = in_t(c, 0), *w = in_t(c, 1), *x = in_t(c, 2);
  DML_RETURN_IF_ERROR(need_rank(c, 0, x->rank, x->rank));
  DML_RETURN_IF_ERROR(need_rank(c, 1, x->rank, x->rank));
  if (dy->dtype != x->dtype || w->dtype != x->dtype || !dml_dtype_is_float(x->dtype))
    return fail(c, INVALID, "dY, W and X must have one float dtype");
  set_out(c, 0, x);
  return DML_OK;
}

/* Assign(@global, value): the target is a parameter or state global and the
 * value has its dtype and (static) shape. No result. */
static dml_status_t infer_assign(ictx_t *c) {
  const dml_ir_value_t *g = c->n->inputs[0];
  if (g->kind != DML_IR_VALUE_GLOBAL ||
      !(g->global_flags & (DML_IR_GLOBAL_PARAM | DML_IR_GLOBAL_STATE)))
    return fail(c, INVALID,
                "the target (input 0, '%s') must be a global flagged param or state",
                g->name ? g->name : "");
  char ta[TBUF], tb[TBUF];
  if (!dml_type_equal(in_t(c, 0), in_t(c, 1)) || !dml_type_is_static(in_t(c, 1)))
    return fail(c, INVALID, "value %s does not match global '%s' of type %s",
                TS(in_t(c, 1), ta), g->name, TS(in_t(c, 0), tb));
  return DML_OK;
}

/* Gradient(y, x_1..x_n) -> n gradients (ai.onnx.preview.training Gradient,
 * version 1: type constraint T2 is float16, float, double): y and every x_i
 * of one of those dtypes; output i typed as x_i. */
static dml_status_t infer_gradient(ictx_t *c) {
  uint32_t n = c->n->n_inputs - 1;
  if (c->n->n_outputs != n)
    return fail(c, INVALID, "%u outputs for %u differentiated tensors (xs): expected %u",
                c->n->n_outputs, n, n);
  for (uint32_t i = 0; i <= n; i++) {
    const dml_ir_value_t *v = in_v(c, i);
    if (!v) return fail(c, INVALID, "input %u is required", i);
    dml_dtype_t dt = v->type.dtype;
    if (dt != DML_DTYPE_F16 && dt != DML_DTYPE_F32 && dt != DML_DTYPE_F64) {
      char what[32] = "y";
      if (i) snprintf(what, sizeof what, "x_%u", i);
      return fail(c, INVALID,
                  "%s ('%s', input %u) has dtype %s: Gradient differentiates float16, "
                  "float and double tensors",
                  what, v->name ? v->name : "", i, dml_dtype_name(dt));
    }
  }
  for (uint32_t i = 0; i < n; i++) set_out(c, i, in_t(c, 1 + i));
  return DML_OK;
}

/* Adagrad, Momentum, Adam (ai.onnx.preview.training, version 1): inputs R
 * (float scalar), T (integer scalar), then n X_i, n G_i and the state (n H_i;
 * n V_i; n V_i then n H_i), each with X_i's dtype (f32/f64) and shape;
 * outputs the n new X_i and the new state, typed as X_i. */
static dml_status_t infer_optimizer(ictx_t *c) {
  uint32_t per = c->n->op == DML_OP_ADAM ? 4 : 3, n_in = c->n->n_inputs;
  if (n_in < 2 + per || (n_in - 2) % per != 0)
    return fail(c, INVALID,
                "%u inputs: expected R, T, then %u groups of n tensors (X, G, %s)", n_in,
                per,
                per == 4                     ? "V, H"
                : c->n->op == DML_OP_ADAGRAD ? "H"
                                             : "V");
  uint32_t n = (n_in - 2) / per;
  if (c->n->n_outputs != (per - 1) * n)
    return fail(c, INVALID, "%u outputs for %u optimized tensors: expected %u",
                c->n->n_outputs, n, (per - 1) * n);
  for (uint32_t i = 0; i < n_in; i++)
    if (!in_t(c, i)) return fail(c, INVALID, "input %u is required", i);
  const dml_type_t *r = in_t(c, 0);
  if (!dml_dtype_is_float(r->dtype) || r->rank > 1 ||
      (r->rank == 1 && !dim_is(r->dims[0], 1))) {
    char tb[TBUF];
    return fail(c, INVALID, "R (input 0) must be a float scalar, got %s", TS(r, tb));
  }
  DML_RETURN_IF_ERROR(need_int_scalar(c, 1, "T"));
  if (c->n->op == DML_OP_MOMENTUM) {
    static const char *const req[] = {"alpha", "beta", "mode", "norm_coefficient"};
    for (size_t k = 0; k < sizeof(req) / sizeof(req[0]); k++)
      if (!dml_ir_node_attr(c->n, req[k]))
        return fail(c, INVALID, "attribute '%s' is required", req[k]);
    const char *mode = NULL;
    DML_RETURN_IF_ERROR(attr_string(c, "mode", "", &mode));
    if (strcmp(mode, "standard") != 0 && strcmp(mode, "nesterov") != 0)
      return fail(c, INVALID, "mode \"%s\" must be \"standard\" or \"nesterov\"", mode);
  }
  for (uint32_t i = 0; i < n; i++) {
    const dml_type_t *x = in_t(c, 2 + i);
    if (x->dtype != DML_DTYPE_F32 && x->dtype != DML_DTYPE_F64)
      return fail(c, UNIMPL, "X_%u (input %u) has dtype %s; f32 and f64 are supported", i,
                  2 + i, dml_dtype_name(x->dtype));
    for (uint32_t k = 1; k < per; k++) {
      const dml_type_t *t = in_t(c, 2 + k * n + i);
      if (t->dtype != x->dtype || !same_shape(t, x)) {
        char ta[TBUF], tb[TBUF];
        return fail(c, INVALID,
                    "input %u (%s) must have the dtype and shape of X_%u (%s)",
                    2 + k * n + i, TS(t, ta), i, TS(x, tb));
      }
    }
    for (uint32_t k = 0; k + 1 < per; k++) set_out(c, k * n + i, x);
  }
  return DML_OK;
}

/* ==== If: run-time control flow (ops.def) =============================== */

/* The bound of dim `d`: its extent at the symbols' upper bounds. */
static int64_t dim_bound(const ictx_t *c, const dml_dim_t *d) {
  return d->sym >= 0 ? d->value * c->m->symbols[d->sym].bound : d->value;
}

/* Types both branch functions (attributes then_function, else_function):
 * their arguments take the captures' types (inputs 1..), their nodes are
 * inferred (a nested If recursively), and output k gets each dim that the
 * two results k share, else a data-dependent symbol "<node>.o<k>d<d>"
 * bounded by the larger of the two. Ranks and dtypes must agree. */
static dml_status_t infer_if(ictx_t *c) {
  static const char *const which[2] = {"then_function", "else_function"};
  dml_ir_function_t *fn[2] = {NULL, NULL};
  for (int b = 0; b < 2; b++) {
    const char *name = NULL;
    DML_RETURN_IF_ERROR(attr_string(c, which[b], NULL, &name));
    fn[b] = name ? dml_ir_module_find_function(c->m, name) : NULL;
    if (!fn[b])
      return fail(c, INVALID, "attribute %s names no function of the module ('%s')",
                  which[b], name ? name : "");
    if (fn[b]->n_args + 1 != c->n->n_inputs || fn[b]->n_results != c->n->n_outputs)
      return fail(c, INVALID,
                  "function '%s' takes %u arguments and returns %u results; the If "
                  "passes %u captures and has %u outputs",
                  name, fn[b]->n_args, fn[b]->n_results, c->n->n_inputs - 1,
                  c->n->n_outputs);
    /* Dims of the captures over derived or data-dependent symbols become
     * the branch's own input symbols "<branch>.<symbol>" (one per symbol,
     * so captures that share a dim share it there): a branch runs as a
     * function of its own, whose inputs set its symbols. */
    int32_t from[2 * DML_MAX_RANK], to[2 * DML_MAX_RANK];
    uint32_t n_map = 0;
    for (uint32_t j = 0; j < fn[b]->n_args; j++) {
      dml_type_t at = c->n->inputs[1 + j]->type;
      for (int32_t d = 0; d < at.rank; d++) {
        int32_t sy = at.dims[d].sym;
        if (sy < 0 || !(c->m->symbols[sy].flags &
                        (DML_IR_SYMBOL_DERIVED | DML_IR_SYMBOL_DATA_DEPENDENT)))
          continue;
        uint32_t k = 0;
        while (k < n_map && from[k] != sy) k++;
        if (k == n_map) {
          char sn[400];
          if (n_map == 2 * DML_MAX_RANK)
            return fail(c, UNIMPL, "the captures of '%s' use more than %d computed dims",
                        name, 2 * DML_MAX_RANK);
          snprintf(sn, sizeof sn, "%s.%s", name, c->m->symbols[sy].name);
          from[n_map] = sy;
          DML_RETURN_IF_ERROR(
              dml_ir_module_add_symbol(c->m, sn, c->m->symbols[sy].bound, &to[n_map]));
          n_map++;
        }
        at.dims[d].sym = to[k];
      }
      fn[b]->args[j]->type = at;
      fn[b]->args[j]->sym_data = c->n->inputs[1 + j]->sym_data;
    }
    for (dml_ir_node_t *n = fn[b]->first; n; n = n->next) {
      dml_status_t st = dml_ir_infer_node(c->m, n);
      if (st) return dml_status_annotate(st, "inferring function @%s", name);
    }
  }
  if (dml_ir_type_numel_bound(c->m, &c->n->inputs[0]->type) != 1)
    return fail(c, INVALID, "cond must hold one element");
  for (uint32_t k = 0; k < c->n->n_outputs; k++) {
    const dml_type_t *a = &fn[0]->results[k]->type, *b = &fn[1]->results[k]->type;
    char ta[TBUF], tb[TBUF];
    if (a->dtype != b->dtype)
      return fail(c, INVALID,
                  "output %u is %s in '%s' but %s in '%s' (ONNX requires one dtype)", k,
                  TS(a, ta), fn[0]->name, TS(b, tb), fn[1]->name);
    if (a->rank != b->rank)
      return fail(c, UNIMPL,
                  "output %u is %s in '%s' but %s in '%s': an If output whose rank "
                  "depends on the run-time cond is not supported",
                  k, TS(a, ta), fn[0]->name, TS(b, tb), fn[1]->name);
    dml_type_t o = *a;
    for (int32_t d = 0; d < a->rank; d++) {
      if (a->dims[d].sym == b->dims[d].sym && a->dims[d].value == b->dims[d].value)
        continue;
      char what[32];
      snprintf(what, sizeof what, "o%ud%d", k, (int)d);
      int64_t ba = dim_bound(c, &a->dims[d]), bb = dim_bound(c, &b->dims[d]);
      DML_RETURN_IF_ERROR(dd_symbol(c, what, ba > bb ? ba : bb, &o.dims[d]));
    }
    set_out(c, k, &o);
  }
  return DML_OK;
}

/* Whether known scalar `v` (a constant, or recorded contents) is nonzero. */
static int known_true(const ictx_t *c, const dml_ir_value_t *v) {
  elems_t e;
  return elems_of(c, v, &e) == 1 && e.n == 1 && (e.e[0].sym >= 0 || e.e[0].value != 0);
}

/* The number of iterations of Loop node c (body fn) as a dim, when the
 * loop provably runs exactly its trip count: M given and known (a
 * constant, or a symbolic value such as Gather(Shape(x), 0), the run-time
 * Scan's, onnx_loop.c), the cond input absent or a known nonzero, and the
 * body's cond result (an Identity chain of) its cond argument or a known
 * nonzero. A negative constant M is 0 iterations. Returns 1 and sets *out,
 * else 0 (the count depends on the values the body computes). */
static int loop_trip_dim(const ictx_t *c, const dml_ir_function_t *fn, dml_dim_t *out) {
  elems_t m;
  if (elems_of(c, in_v(c, 0), &m) != 1 || m.n != 1) return 0;
  if (in_v(c, 1) && !known_true(c, in_v(c, 1))) return 0;
  const dml_ir_value_t *r = fn->results[0];
  while (r && r->kind == DML_IR_VALUE_RESULT && r->def->op == DML_OP_IDENTITY &&
         r->def->n_inputs == 1)
    r = r->def->inputs[0];
  if (!r || (r != fn->args[1] && !known_true(c, r))) return 0;
  *out = m.e[0];
  if (out->sym < 0 && out->value < 0) out->value = 0;
  return 1;
}

/* Types the body function of a Loop (ops.def): its arguments take i64[],
 * bool[], the carried values' and the captures' types; each carried result
 * must keep its initial type; scan output k is [count, element dims] with
 * count the trip count's dim when the loop provably runs exactly M
 * iterations (loop_trip_dim), else a data-dependent symbol "<node>.n<k>"
 * (bound: dyn_bound). */
static dml_status_t infer_loop(ictx_t *c) {
  const char *name = NULL;
  int64_t n_car = 0;
  DML_RETURN_IF_ERROR(attr_string(c, "body_function", NULL, &name));
  DML_RETURN_IF_ERROR(attr_int(c, "n_carried", 0, &n_car));
  dml_ir_function_t *fn = name ? dml_ir_module_find_function(c->m, name) : NULL;
  if (!fn) return fail(c, INVALID, "attribute body_function names no function");
  uint32_t n_in = c->n->n_inputs;
  if (n_car < 0 || (uint64_t)n_car + 2 > n_in || (uint64_t)n_car > c->n->n_outputs ||
      fn->n_args != n_in || fn->n_results != 1 + c->n->n_outputs)
    return fail(c, INVALID,
                "body '%s' takes %u arguments and returns %u results; the Loop has %u "
                "inputs, %u outputs and %lld carried values",
                name, fn->n_args, fn->n_results, n_in, c->n->n_outputs, (long long)n_car);
  for (int k = 0; k < 2; k++) {
    const dml_ir_value_t *v = c->n->inputs[k];
    if (v && dml_ir_type_numel_bound(c->m, &v->type) != 1)
      return fail(c, INVALID, "%s must hold one element", k ? "cond" : "M");
  }
  fn->args[0]->type = dml_type_static(DML_DTYPE_I64, 0, NULL);
  fn->args[1]->type = dml_type_static(DML_DTYPE_BOOL, 0, NULL);
  for (uint32_t j = 2; j < n_in; j++) {
    if (!c->n->inputs[j]) return fail(c, INVALID, "input %u is absent", j);
    fn->args[j]->type = c->n->inputs[j]->type;
    fn->args[j]->sym_data =
        (uint64_t)j < 2 + (uint64_t)n_car ? NULL : c->n->inputs[j]->sym_data;
  }
  for (dml_ir_node_t *n = fn->first; n; n = n->next) {
    dml_status_t st = dml_ir_infer_node(c->m, n);
    if (st) return dml_status_annotate(st, "inferring function @%s", name);
  }
  char ta[TBUF], tb[TBUF];
  for (int64_t k = 0; k < n_car; k++) {
    const dml_type_t *a = &c->n->inputs[2 + k]->type, *b = &fn->results[1 + k]->type;
    if (!dml_type_equal(a, b))
      return fail(c, UNIMPL,
                  "carried value %lld enters as %s but the body returns %s: a Loop run "
                  "at run time carries values of one shape",
                  (long long)k, TS(a, ta), TS(b, tb));
    set_out(c, (uint32_t)k, a);
  }
  for (uint32_t k = (uint32_t)n_car; k < c->n->n_outputs; k++) {
    const dml_type_t *e = &fn->results[1 + k]->type;
    if (e->rank + 1 > DML_MAX_RANK)
      return fail(c, UNIMPL, "scan output %u: rank %d is too high", k, e->rank + 1);
    for (int32_t d = 0; d < e->rank; d++)
      if (e->dims[d].sym >= 0 &&
          (c->m->symbols[e->dims[d].sym].flags & DML_IR_SYMBOL_DATA_DEPENDENT))
        return fail(c, UNIMPL,
                    "scan output %u has elements %s whose shape depends on values "
                    "computed in the body",
                    k, TS(e, ta));
    dml_type_t o = *e;
    o.rank = e->rank + 1;
    for (int32_t d = e->rank; d > 0; d--) o.dims[d] = e->dims[d - 1];
    if (!loop_trip_dim(c, fn, &o.dims[0])) {
      char what[32];
      snprintf(what, sizeof what, "n%u", k);
      DML_RETURN_IF_ERROR(dd_symbol(c, what, dyn_bound(c), &o.dims[0]));
    }
    set_out(c, k, &o);
  }
  return DML_OK;
}

/* ==== strings (runtime/cpu/cpu_strings.c) =============================== */

/* A string input to an op without DML_OPF_STRINGS (ops.def) is refused
 * here, naming the op, rather than reaching a numeric kernel. */
static dml_status_t check_strings(const ictx_t *c) {
  const dml_op_info_t *info = dml_op_info(c->n->op);
  if (info && (info->flags & DML_OPF_STRINGS)) return DML_OK;
  for (uint32_t i = 0; i < c->n->n_inputs; i++) {
    const dml_type_t *t = in_t(c, i);
    if (t && t->dtype == DML_DTYPE_STRING)
      return fail(c, UNIMPL,
                  "input %u is a string tensor, which %s does not take (string ops: "
                  "Cast, Equal, StringConcat, StringSplit, StringNormalizer, "
                  "RegexFullMatch, LabelEncoder and data movement)",
                  i, dml_op_name(c->n->op));
  }
  return DML_OK;
}

static dml_status_t need_string(const ictx_t *c, uint32_t i) {
  const dml_type_t *t = in_t(c, i);
  if (t && t->dtype != DML_DTYPE_STRING)
    return fail(c, INVALID, "input %u must be a string tensor, got %s", i,
                dml_dtype_name(t->dtype));
  return DML_OK;
}

/* StringConcat: numpy broadcasting of two string tensors. */
static dml_status_t infer_string_concat(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_string(c, 0));
  DML_RETURN_IF_ERROR(need_string(c, 1));
  dml_type_t o;
  DML_RETURN_IF_ERROR(bcast(c, in_t(c, 0), in_t(c, 1), &o));
  o.dtype = DML_DTYPE_STRING;
  set_out(c, 0, &o);
  return DML_OK;
}

/* StringSplit: Y string [X dims, k], Z i64 [X dims]; k a data-dependent
 * symbol bounded by maxsplit + 1 when maxsplit is set, else by the
 * module's dynamic_dim_bound. */
static dml_status_t infer_string_split(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_string(c, 0));
  const dml_type_t *x = in_t(c, 0);
  if (x->rank >= DML_MAX_RANK)
    return fail(c, UNIMPL, "input rank %d leaves no room for the split axis",
                (int)x->rank);
  int64_t maxsplit = -1;
  DML_RETURN_IF_ERROR(attr_int(c, "maxsplit", -1, &maxsplit));
  int64_t bound = dyn_bound(c);
  if (maxsplit >= 0 && maxsplit + 1 < bound) bound = maxsplit + 1;
  dml_type_t y = *x;
  y.rank = x->rank + 1;
  DML_RETURN_IF_ERROR(dd_symbol(c, "k", bound, &y.dims[x->rank]));
  set_out(c, 0, &y);
  dml_type_t z = *x;
  z.dtype = DML_DTYPE_I64;
  set_out(c, 1, &z);
  return DML_OK;
}

/* StringNormalizer: X [C] or [N, C]; for [C] and [1, C] the last dim is a
 * data-dependent symbol bounded by C (at least 1: [""] when nothing is
 * left), else Y has X's shape. */
static dml_status_t infer_string_normalizer(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_string(c, 0));
  DML_RETURN_IF_ERROR(need_rank(c, 0, 1, 2));
  /* the locale (dml_strcase.h): a name always; its case rule where a case
   * mapping runs (a case change, or stopwords compared case-insensitively) */
  const dml_attr_t *loc = dml_ir_node_attr(c->n, "locale");
  const dml_attr_t *act = dml_ir_node_attr(c->n, "case_change_action");
  const dml_attr_t *sens = dml_ir_node_attr(c->n, "is_case_sensitive");
  const dml_attr_t *sw = dml_ir_node_attr(c->n, "stopwords");
  dml_strcase_rule_t rule;
  char why[256];
  int rc = dml_strcase_locale(loc && loc->kind == DML_ATTR_STRING ? loc->s : NULL, &rule,
                              why, sizeof why);
  int cases = (act && act->kind == DML_ATTR_STRING && strcmp(act->s, "NONE") != 0) ||
              (sw && sw->kind == DML_ATTR_STRINGS && sw->n > 0 &&
               !(sens && sens->kind == DML_ATTR_INT && sens->i != 0));
  if (rc < 0 || (rc > 0 && cases)) return fail(c, rc < 0 ? INVALID : UNIMPL, "%s", why);
  const dml_type_t *x = in_t(c, 0);
  dml_type_t y = *x;
  if (x->rank == 1 || dim_is(x->dims[0], 1)) {
    int64_t b = dim_max(c, x->dims[x->rank - 1]);
    DML_RETURN_IF_ERROR(dd_symbol(c, "c", b < 1 ? 1 : b, &y.dims[x->rank - 1]));
  } else if (x->dims[0].sym >= 0) {
    return fail(c, UNIMPL,
                "input [N, C] with a symbolic N: whether N is 1 (the output's shape "
                "depends on it) is only known at run time");
  }
  set_out(c, 0, &y);
  return DML_OK;
}

/* RegexFullMatch: bool of X's shape. */
static dml_status_t infer_regex_full_match(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_string(c, 0));
  const dml_attr_t *p = dml_ir_node_attr(c->n, "pattern");
  if (!p || p->kind != DML_ATTR_STRING)
    return fail(c, INVALID, "attribute 'pattern' (a string) is required");
  dml_type_t y = *in_t(c, 0);
  y.dtype = DML_DTYPE_BOOL;
  set_out(c, 0, &y);
  return DML_OK;
}

/* LabelEncoder: X's shape; the output dtype is the values' (string for
 * values_strings, else the `values` tensor's). */
static dml_status_t infer_label_encoder(ictx_t *c) {
  const dml_attr_t *ks = dml_ir_node_attr(c->n, "keys_strings");
  const dml_attr_t *kt = dml_ir_node_attr(c->n, "keys");
  const dml_attr_t *vs = dml_ir_node_attr(c->n, "values_strings");
  const dml_attr_t *vt = dml_ir_node_attr(c->n, "values");
  int sk = ks && ks->kind == DML_ATTR_STRINGS, sv = vs && vs->kind == DML_ATTR_STRINGS;
  if ((!sk && !(kt && kt->kind == DML_ATTR_TENSOR)) ||
      (!sv && !(vt && vt->kind == DML_ATTR_TENSOR)))
    return fail(
        c, INVALID,
        "needs keys (keys_strings or keys) and values (values_strings or values)");
  dml_dtype_t kdt = sk ? DML_DTYPE_STRING : kt->tensor.dtype;
  if (in_t(c, 0)->dtype != kdt)
    return fail(c, INVALID, "input dtype %s differs from the keys' %s",
                dml_dtype_name(in_t(c, 0)->dtype), dml_dtype_name(kdt));
  dml_type_t y = *in_t(c, 0);
  y.dtype = sv ? DML_DTYPE_STRING : vt->tensor.dtype;
  set_out(c, 0, &y);
  return DML_OK;
}

/* TreeEnsemble (ai.onnx.ml 5): X [N, F] float -> [N, n_targets] of X's
 * dtype (the kernel, runtime/cpu/cpu_ml.c, checks the tree attributes). */
static dml_status_t infer_tree_ensemble(ictx_t *c) {
  DML_RETURN_IF_ERROR(need_rank(c, 0, 2, 2));
  DML_RETURN_IF_ERROR(need_dtype(c, 0, DT_FLOAT));
  int64_t nt = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "n_targets", 0, &nt));
  if (nt < 1) return fail(c, INVALID, "attribute 'n_targets' (>= 1) is required");
  dml_type_t y = *in_t(c, 0);
  y.dims[1] = D(nt);
  set_out(c, 0, &y);
  return DML_OK;
}

/* The parameterized rules under the names op_rules.def gives them. */
/* Add Sub Mul Div Mod */
static dml_status_t infer_binary(ictx_t *c) {
  return broadcast_rule(c, DT_NUMERIC, SAME_AS_0, 0);
}
static dml_status_t infer_logical(ictx_t *c) {
  return broadcast_rule(c, DT_BOOL, DT_BOOL, 0);
}
static dml_status_t infer_equal(ictx_t *c) {
  return broadcast_rule(c, DT_ANY, SAME_AS_0, 1);
}
static dml_status_t infer_compare(ictx_t *c) {
  return broadcast_rule(c, DT_NUMERIC, SAME_AS_0, 1);
}
/* base T, exponent T1 (may differ); result T */
static dml_status_t infer_pow(ictx_t *c) {
  return broadcast_rule(c, DT_NUMERIC, DT_NUMERIC, 0);
}
static dml_status_t infer_prelu(ictx_t *c) {
  return broadcast_rule(c, DT_SIGNED_OR_FLOAT, SAME_AS_0, 0);
}
static dml_status_t infer_unary_float(ictx_t *c) {
  return infer_unary(c, DT_FLOAT);
}
static dml_status_t infer_unary_numeric(ictx_t *c) {
  return infer_unary(c, DT_NUMERIC);
}
static dml_status_t infer_unary_signed_or_float(ictx_t *c) {
  return infer_unary(c, DT_SIGNED_OR_FLOAT);
}
static dml_status_t infer_random(ictx_t *c) {
  return random_rule(c, 0);
}
static dml_status_t infer_random_like(ictx_t *c) {
  return random_rule(c, 1);
}
static dml_status_t infer_conv(ictx_t *c) {
  return conv_rule(c, 0);
}
static dml_status_t infer_conv_transpose(ictx_t *c) {
  return conv_rule(c, 1);
}
static dml_status_t infer_rnn(ictx_t *c) {
  return rnn_rule(c, 1);
}
static dml_status_t infer_gru(ictx_t *c) {
  return rnn_rule(c, 3);
}
static dml_status_t infer_lstm(ictx_t *c) {
  return rnn_rule(c, 4);
}
static dml_status_t infer_quantize(ictx_t *c) {
  return quantize_rule(c, 0);
}
static dml_status_t infer_dequantize(ictx_t *c) {
  return quantize_rule(c, 1);
}
/* FakeQuantize / FakeQuantizeGrad (ops.def): x (input `xi`) f32, range
 * (input xi + 1) an f32 of 2 elements, or absent with `axis` within x's
 * rank; quant_min <= quant_max; the output is typed as x. */
static dml_status_t fake_quantize_rule(ictx_t *c, uint32_t xi) {
  const dml_type_t *x = in_t(c, xi), *r = in_t(c, xi + 1);
  if (x->dtype != DML_DTYPE_F32)
    return fail(c, UNIMPL, "x must be f32, got %s", dml_dtype_name(x->dtype));
  if (xi) DML_RETURN_IF_ERROR(same_dtype(c, 0, xi));
  int64_t lo = 0, hi = 0, axis = 0;
  DML_RETURN_IF_ERROR(attr_int(c, "quant_min", -128, &lo));
  DML_RETURN_IF_ERROR(attr_int(c, "quant_max", 127, &hi));
  if (lo > hi || lo < -(1LL << 24) || hi > (1LL << 24))
    return fail(c, INVALID, "quant_min %lld, quant_max %lld: need min <= max within 2^24",
                (long long)lo, (long long)hi);
  if (r) {
    if (r->dtype != DML_DTYPE_F32 || dml_ir_type_numel_bound(c->m, r) != 2 ||
        r->rank != 1) {
      char tb[TBUF];
      return fail(c, INVALID, "range must be f32 [2] ([min, max]), got %s", TS(r, tb));
    }
  } else {
    int32_t ax = 0;
    DML_RETURN_IF_ERROR(attr_int(c, "axis", 0, &axis));
    if (x->rank == 0) return fail(c, INVALID, "per-channel x must have rank >= 1");
    DML_RETURN_IF_ERROR(norm_axis(c, axis, x->rank, "axis", &ax));
  }
  set_out(c, 0, x);
  return pass_sym(c, xi);
}
static dml_status_t infer_fake_quantize(ictx_t *c) {
  return fake_quantize_rule(c, 0);
}
static dml_status_t infer_fake_quantize_grad(ictx_t *c) {
  return fake_quantize_rule(c, 1);
}
static dml_status_t infer_depth_to_space(ictx_t *c) {
  return infer_depth_space(c, 1);
}
static dml_status_t infer_space_to_depth(ictx_t *c) {
  return infer_depth_space(c, 0);
}
static dml_status_t infer_mat_mul_integer(ictx_t *c) {
  return infer_qmatmul(c, 0, 1, DML_DTYPE_I32);
}
static dml_status_t infer_qlinear_mat_mul(ictx_t *c) {
  return infer_qmatmul(c, 0, 3, in_dtype_or(c, 7, DML_DTYPE_U8));
}
static dml_status_t infer_conv_integer(ictx_t *c) {
  return infer_qconv(c, 0, 1, DML_DTYPE_I32);
}
static dml_status_t infer_qlinear_conv(ictx_t *c) {
  return infer_qconv(c, 0, 3, in_dtype_or(c, 7, DML_DTYPE_U8));
}

/* Each op's shape rule, from op_rules.def; NULL for none. */
static dml_status_t (*const k_shape_rule[DML_OP_COUNT_])(ictx_t *) = {
#define DML_RULE(e, shape, vjp, rows, dims, reads, eager, elems) \
  [DML_OP_##e] = infer_##shape,
#include "op_rules.def"
#undef DML_RULE
};

int dml_ir_infer_has_rule(dml_op_t op) {
  if ((int)op <= (int)DML_OP_INVALID || op >= DML_OP_COUNT_) return 0;
  return dml_ew_has(op) || k_shape_rule[op] != NULL;
}

static dml_status_t infer_op(ictx_t *c) {
  dml_op_t op = c->n->op;
  /* the formula table's ops (runtime/base/ew_ops.def): one float input */
  if (dml_ew_has(op)) return infer_unary(c, DT_FLOAT);
  if ((int)op > (int)DML_OP_INVALID && op < DML_OP_COUNT_ && k_shape_rule[op])
    return k_shape_rule[op](c);
  return fail(c, INVALID, "invalid op %d (no shape rule in op_rules.def)", (int)op);
}

/* Checks that every input is typed and well-formed. */
static dml_status_t check_inputs(ictx_t *c) {
  const dml_op_info_t *info = dml_op_info(c->n->op);
  if (!info) return fail(c, INVALID, "invalid op %d", (int)c->n->op);
  if ((int)c->n->n_inputs < info->min_inputs ||
      (info->max_inputs >= 0 && (int)c->n->n_inputs > info->max_inputs))
    return fail(c, INVALID, "%s takes %d..%d inputs, got %u", info->name,
                info->min_inputs, info->max_inputs, c->n->n_inputs);
  if ((int)c->n->n_outputs < info->min_outputs ||
      (info->max_outputs >= 0 && (int)c->n->n_outputs > info->max_outputs) ||
      (c->n->n_outputs == 0 && info->max_outputs != 0))
    return fail(c, INVALID, "%s has %d..%d outputs, got %u", info->name,
                info->min_outputs, info->max_outputs, c->n->n_outputs);
  for (uint32_t i = 0; i < c->n->n_inputs; i++) {
    const dml_ir_value_t *v = c->n->inputs[i];
    if (!v) {
      if ((int)i < info->min_inputs)
        return fail(c, INVALID, "required input %u is missing", i);
      continue;
    }
    const dml_type_t *t = &v->type;
    if (t->rank < 0)
      return fail(
          c, DML_STATUS_FAILED_PRECONDITION,
          "input %u ('%s') has no known type; its producer must be inferred first", i,
          v->name ? v->name : "");
    if (t->rank > DML_MAX_RANK)
      return fail(c, INVALID, "input %u has rank %d > %d", i, (int)t->rank, DML_MAX_RANK);
    if (dml_dtype_size(t->dtype) == 0)
      return fail(c, INVALID, "input %u has an invalid dtype", i);
    for (int32_t d = 0; d < t->rank; d++) {
      dml_dim_t dm = t->dims[d];
      if (dm.sym >= 0 && ((uint32_t)dm.sym >= c->m->n_symbols || dm.value < 1))
        return fail(c, INVALID,
                    "input %u dim %d refers to symbol %d (value %lld) which is "
                    "not a valid symbolic dim",
                    i, (int)d, (int)dm.sym, (long long)dm.value);
      if (dm.sym < 0 && dm.value < 0)
        return fail(c, INVALID, "input %u dim %d is negative (%lld)", i, (int)d,
                    (long long)dm.value);
    }
  }
  return DML_OK;
}

#define SAVE_OUTPUTS 64

dml_status_t dml_ir_infer_node(dml_ir_module_t *m, dml_ir_node_t *node) {
  ictx_t c = {m, node};
  DML_RETURN_IF_ERROR(check_inputs(&c));
  dml_type_t saved[SAVE_OUTPUTS];
  dml_ir_sym_data_t *saved_sym[SAVE_OUTPUTS], *saved_part[SAVE_OUTPUTS];
  for (uint32_t i = 0; i < node->n_outputs; i++) {
    dml_ir_value_t *v = node->outputs[i];
    if (i < SAVE_OUTPUTS) {
      saved[i] = v->type;
      saved_sym[i] = v->sym_data;
      saved_part[i] = v->sym_partial;
    }
    v->type = dml_type_unknown(DML_DTYPE_INVALID);
    v->sym_data = NULL;
    v->sym_partial = NULL;
  }
  dml_status_t st = check_strings(&c);
  if (!st) st = infer_op(&c);
  for (uint32_t i = 0; !st && i < node->n_outputs; i++) {
    const dml_type_t *t = &node->outputs[i]->type;
    if (t->rank < 0 || t->rank > DML_MAX_RANK || dml_dtype_size(t->dtype) == 0)
      st = fail(&c, DML_STATUS_INTERNAL, "output %u was not given a type", i);
    for (int32_t d = 0; !st && t->rank >= 0 && d < t->rank; d++)
      if (t->dims[d].value < 0 || (t->dims[d].sym >= 0 && t->dims[d].value < 1))
        st = fail(&c, DML_STATUS_INTERNAL, "output %u dim %d is invalid (%lld)", i,
                  (int)d, (long long)t->dims[d].value);
  }
  if (st) {
    for (uint32_t i = 0; i < node->n_outputs && i < SAVE_OUTPUTS; i++) {
      node->outputs[i]->type = saved[i];
      node->outputs[i]->sym_data = saved_sym[i];
      node->outputs[i]->sym_partial = saved_part[i];
    }
  }
  return st;
}

/* ==== memory planning of data-dependent values ========================== */

/* op_rules.def's ELEMS column. */
enum { ELEMS_MODULE = 0, ELEMS_BOUNDS, ELEMS_INPUT };
static const uint8_t k_elems[DML_OP_COUNT_] = {
#define DML_RULE(e, shape, vjp, rows, dims, reads, eager, elems) \
  [DML_OP_##e] = ELEMS_##elems,
#define ELEMS_bounds ELEMS_BOUNDS
#define ELEMS_input ELEMS_INPUT
#define ELEMS_module ELEMS_MODULE
#include "op_rules.def"
#undef ELEMS_bounds
#undef ELEMS_input
#undef ELEMS_module
#undef DML_RULE
};

static int64_t dyn_max_elements(const dml_ir_module_t *m) {
  return m->dynamic_max_elements > 0 ? m->dynamic_max_elements
                                     : DML_IR_DYNAMIC_MAX_ELEMENTS_DEFAULT;
}

int64_t dml_ir_value_max_elements(const dml_ir_module_t *m, const dml_ir_value_t *v) {
  int dynamic = 0;
  for (int32_t d = 0; d < v->type.rank; d++)
    if (v->type.dims[d].sym >= 0 && (uint32_t)v->type.dims[d].sym < m->n_symbols &&
        (m->symbols[v->type.dims[d].sym].flags & DML_IR_SYMBOL_DATA_DEPENDENT))
      dynamic = 1;
  if (!dynamic) return -1;
  const dml_ir_node_t *n = v->kind == DML_IR_VALUE_RESULT ? v->def : NULL;
  int elems = n && n->op > DML_OP_INVALID && n->op < DML_OP_COUNT_ ? k_elems[n->op] : 0;
  /* Kernels that fill their output at the bounds. */
  if (elems == ELEMS_BOUNDS) return -1;
  /* Never more elements than the input, unless the input is empty: a
   * reduction over an empty axis gives its identity element (ReduceSum of
   * f32[2,0,4] over axis 1 with keepdims is f32[2,1,4] of zeros). The
   * input's own cap when it is data-dependent too (a Slice of a Pad whose
   * pads come at run time: CenterCropPad's expansion). */
  if (elems == ELEMS_INPUT && n->n_inputs && n->inputs[0]) {
    int64_t k = dml_ir_type_numel_bound(m, &n->inputs[0]->type);
    int64_t kc = dml_ir_value_max_elements(m, n->inputs[0]);
    if (kc >= 0 && (k < 0 || kc < k)) k = kc;
    if (k > 0) return k;
  }
  return dyn_max_elements(m);
}
