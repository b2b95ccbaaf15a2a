/* row_indep.c — is a function row-independent over its batch symbol?
 * (dml_row_indep.h). One pass over the nodes in execution order, one state
 * per value. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_ew.h"
#include "dml_ops.h"
#include "dml_row_indep.h"

enum {
  ST_CONST = 1, /* no input data in it */
  ST_SHAPE = 2, /* depends on the row count, not on the rows */
  ST_ROWS = 3,  /* dim 0 is the batch symbol; row i from input rows i */
  ST_MIXED = 4, /* anything else */
};

typedef struct {
  int32_t bsym;
  uint8_t *st; /* by value id */
  uint32_t n_st;
} ctx_t;

static int state(const ctx_t *c, const dml_ir_value_t *v) {
  if (!v) return 0;
  if (v->kind == DML_IR_VALUE_GLOBAL) return ST_CONST;
  return v->id < c->n_st && c->st[v->id] ? c->st[v->id] : ST_MIXED;
}

static void set_state(ctx_t *c, const dml_ir_value_t *v, int s) {
  if (v && v->id < c->n_st) c->st[v->id] = (uint8_t)s;
}

/* dims[0] is exactly the batch symbol. */
static int rows_dim(const ctx_t *c, const dml_type_t *t) {
  return t->rank >= 1 && t->dims[0].sym == c->bsym && t->dims[0].value == 1;
}

/* Any dim of `t` mentions the batch symbol. */
static int uses_bsym(const ctx_t *c, const dml_type_t *t) {
  for (int32_t d = 0; d < t->rank; d++)
    if (t->dims[d].sym == c->bsym) return 1;
  return 0;
}

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* The size of one row (dims 1..) of a and b is the same expression. */
static int same_row_size(const dml_type_t *a, const dml_type_t *b) {
  int64_t pa = 1, pb = 1;
  int32_t sa[DML_MAX_RANK], sb[DML_MAX_RANK];
  int na = 0, nb = 0;
  for (int32_t d = 1; d < a->rank; d++) {
    pa *= a->dims[d].value;
    if (a->dims[d].sym >= 0) sa[na++] = a->dims[d].sym;
  }
  for (int32_t d = 1; d < b->rank; d++) {
    pb *= b->dims[d].value;
    if (b->dims[d].sym >= 0) sb[nb++] = b->dims[d].sym;
  }
  if (pa != pb || na != nb) return 0;
  qsort(sa, (size_t)na, sizeof *sa, cmp_i32);
  qsort(sb, (size_t)nb, sizeof *sb, cmp_i32);
  return na == 0 || memcmp(sa, sb, (size_t)na * sizeof *sa) == 0;
}

/* Integer elements of a constant (a global with data); -1 when `v` is not
 * one or holds more than `max`. */
static int const_ints(const dml_ir_value_t *v, int64_t *out, int max) {
  if (!v || v->kind != DML_IR_VALUE_GLOBAL || !v->data) return -1;
  dml_dtype_t dt = v->type.dtype;
  if (dt != DML_DTYPE_I64 && dt != DML_DTYPE_I32) return -1;
  size_t es = dt == DML_DTYPE_I64 ? 8 : 4, n = v->data_bytes / es;
  if (n > (size_t)max) return -1;
  for (size_t i = 0; i < n; i++) out[i] = dml_load_i64(dt, v->data, i);
  return (int)n;
}

static int64_t norm_axis(int64_t a, int32_t rank) {
  return a < 0 ? a + rank : a;
}

static int attr_i(const dml_ir_node_t *n, const char *name, int64_t dflt) {
  return (int)dml_attr_int(n->attrs, n->n_attrs, name, dflt);
}

/* Inputs from index `from` on are constants, or shape-only when
 * `shape_ok`. */
static int rest_const(const ctx_t *c, const dml_ir_node_t *n, uint32_t from,
                      int shape_ok) {
  for (uint32_t i = from; i < n->n_inputs; i++) {
    int s = state(c, n->inputs[i]);
    if (s == ST_ROWS || s == ST_MIXED || (s == ST_SHAPE && !shape_ok)) return 0;
  }
  return 1;
}

/* The row-independence classes of op_rules.def. Each checks a node with at
 * least one row-aligned input and no mixed one (x its input 0, sx that
 * input's state, r its rank) and returns NULL when the node's outputs keep
 * rows apart, else what mixes them (", axis 0)" style; `buf` for a text
 * with numbers). */
typedef struct {
  const ctx_t *c;
  const dml_ir_node_t *n;
  const dml_ir_value_t *x;
  int sx;
  int32_t r;
  char *buf;
  size_t bs;
} rq_t;

#define UNKNOWN ", not known to keep rows apart)"

/* Each output element from the operands' elements at its own index, with
 * numpy broadcasting: the rows stay apart unless an operand broadcasts
 * them into another axis. */
static const char *rows_elementwise(const rq_t *q) {
  const dml_type_t *o = &q->n->outputs[0]->type;
  for (uint32_t i = 0; i < q->n->n_inputs; i++) {
    const dml_ir_value_t *v = q->n->inputs[i];
    int s = state(q->c, v);
    if (!v) continue;
    if (s == ST_SHAPE) return ", with an operand computed from the row count)";
    if (s == ST_ROWS && v->type.rank != o->rank)
      return ", broadcasts the rows into another axis)";
    if (s == ST_CONST && v->type.rank == o->rank && v->type.dims[0].sym >= 0)
      return ", an operand has symbolic dim 0 other than the rows)";
  }
  return NULL;
}

/* The same elements in another shape: dim 0 must stay the rows. */
static const char *rows_view(const rq_t *q) {
  if (q->sx != ST_ROWS || !rest_const(q->c, q->n, 1, 1)) return UNKNOWN;
  if (!rows_dim(q->c, &q->n->outputs[0]->type) ||
      !same_row_size(&q->x->type, &q->n->outputs[0]->type))
    return ", regroups dim 0)";
  return NULL;
}

/* Shape, Size: the row count only. */
static const char *rows_shape(const rq_t *q) {
  (void)q;
  return NULL;
}

static const char *rows_matmul(const rq_t *q) {
  const dml_ir_value_t *b = q->n->inputs[1];
  if (q->sx == ST_ROWS && q->r >= 2 && state(q->c, b) == ST_CONST) return NULL;
  if (q->sx == ST_ROWS && q->r >= 3 && state(q->c, b) == ST_ROWS && b->type.rank == q->r)
    return NULL;
  return ", B has the rows)";
}

static const char *rows_gemm(const rq_t *q) {
  if (q->sx != ST_ROWS || !rest_const(q->c, q->n, 1, 0)) return ", B or C has the rows)";
  if (attr_i(q->n, "transA", 0)) return ", transA)";
  return NULL;
}

static const char *rows_batchnorm(const rq_t *q) {
  if (attr_i(q->n, "training_mode", 0)) return ", training mode: batch statistics)";
  return q->sx == ST_ROWS && rest_const(q->c, q->n, 1, 0) ? NULL : UNKNOWN;
}

/* Each row of X to the same row of the output (convolutions, pools,
 * per-sample normalizations, quantization), the other inputs constant. */
static const char *rows_per_row(const rq_t *q) {
  return q->sx == ST_ROWS && rest_const(q->c, q->n, 1, 0) ? NULL : UNKNOWN;
}

/* FakeQuantize: with a range (per tensor) each element on its own; without,
 * the per-channel scales reduce over the other axes (rows mixed). */
static const char *rows_fake_quantize(const rq_t *q) {
  return q->n->n_inputs > 1 && q->n->inputs[1] ? rows_per_row(q) : UNKNOWN;
}

/* (a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp) */
static const char *rows_qlinear_add(const rq_t *q) {
  for (uint32_t i = 0; i < q->n->n_inputs; i++) {
    int s = state(q->c, q->n->inputs[i]);
    if (s == ST_CONST) continue;
    if ((i != 0 && i != 3) || s != ST_ROWS ||
        q->n->inputs[i]->type.rank != q->n->outputs[0]->type.rank)
      return UNKNOWN;
  }
  return NULL;
}

/* Resize, Pad, Tile, Expand: a factor other than 1 on dim 0 changes it from
 * the batch symbol: the output check of dml_row_indep_analyze() refuses
 * that. */
static const char *rows_resample(const rq_t *q) {
  if (q->sx != ST_ROWS || !rest_const(q->c, q->n, 1, 1)) return UNKNOWN;
  if (q->n->op == DML_OP_EXPAND && q->r != q->n->outputs[0]->type.rank)
    return ", broadcasts the rows into another axis)";
  return NULL;
}

/* Along attribute `axis` (default 0 for ArgMax, ArgMin, Split; -1 for the
 * others): any axis but 0. */
static const char *rows_axis(const rq_t *q) {
  dml_op_t op = q->n->op;
  int64_t dflt =
      op == DML_OP_ARG_MAX || op == DML_OP_ARG_MIN || op == DML_OP_SPLIT ? 0 : -1;
  int64_t a = norm_axis(dml_attr_int(q->n->attrs, q->n->n_attrs, "axis", dflt), q->r);
  if (a == 0) return ", axis 0)";
  return q->sx == ST_ROWS &&
                 rest_const(q->c, q->n, 1, op == DML_OP_TOP_K || op == DML_OP_SPLIT)
             ? NULL
             : UNKNOWN;
}

/* CumSum, CumProd: along input 1's axis. */
static const char *rows_cumulative(const rq_t *q) {
  int64_t ax[1];
  if (const_ints(q->n->inputs[1], ax, 1) != 1) return ", axis not known at compile time)";
  if (norm_axis(ax[0], q->r) == 0) return ", axis 0)";
  return q->sx == ST_ROWS ? NULL : UNKNOWN;
}

static const char *rows_mvn(const rq_t *q) {
  const dml_attr_t *a = dml_attr_find(q->n->attrs, q->n->n_attrs, "axes");
  if (!a) return ", axes [0, 2, 3])";
  for (size_t i = 0; i < a->n; i++)
    if (norm_axis(a->ints[i], q->r) == 0) return ", axes include 0)";
  return q->sx == ST_ROWS ? NULL : UNKNOWN;
}

static const char *rows_transpose(const rq_t *q) {
  const dml_attr_t *p = dml_attr_find(q->n->attrs, q->n->n_attrs, "perm");
  if (q->r == 1) return NULL;
  if (!p || p->n < 1) return ", perm reverses the axes)";
  if (p->ints[0] != 0) {
    snprintf(q->buf, q->bs, ", perm[0] = %" PRId64 ")", p->ints[0]);
    return q->buf;
  }
  return NULL;
}

static const char *rows_concat(const rq_t *q) {
  int64_t a = norm_axis(dml_attr_int(q->n->attrs, q->n->n_attrs, "axis", 0), q->r);
  if (a == 0) return ", axis 0)";
  for (uint32_t i = 0; i < q->n->n_inputs; i++)
    if (q->n->inputs[i] && state(q->c, q->n->inputs[i]) != ST_ROWS)
      return ", an input without the rows)";
  return NULL;
}

static const char *rows_gather(const rq_t *q) {
  int64_t a = norm_axis(dml_attr_int(q->n->attrs, q->n->n_attrs, "axis", 0), q->r);
  int si = state(q->c, q->n->inputs[1]);
  if (q->sx == ST_ROWS && si == ST_CONST && a != 0) return NULL;
  if (q->sx == ST_CONST && si == ST_ROWS && a == 0) return NULL;
  return q->sx == ST_ROWS ? ", axis 0)" : ", indices along another axis)";
}

static const char *rows_slice(const rq_t *q) {
  const dml_ir_node_t *n = q->n;
  if (q->sx != ST_ROWS || !rest_const(q->c, n, 1, 1)) return UNKNOWN;
  int64_t st[DML_MAX_RANK * 2], sp[DML_MAX_RANK * 2], ax[DML_MAX_RANK * 2];
  int ns = const_ints(n->inputs[1], st, DML_MAX_RANK * 2);
  int na = n->n_inputs > 3 && n->inputs[3]
               ? const_ints(n->inputs[3], ax, DML_MAX_RANK * 2)
               : ns;
  int np = n->n_inputs > 4 && n->inputs[4]
               ? const_ints(n->inputs[4], sp, DML_MAX_RANK * 2)
               : ns;
  if (ns < 0 || na != ns || np != ns) return ", starts/axes not known at compile time)";
  for (int i = 0; i < ns; i++) {
    int64_t a = n->n_inputs > 3 && n->inputs[3] ? norm_axis(ax[i], q->r) : i;
    int64_t step = n->n_inputs > 4 && n->inputs[4] ? sp[i] : 1;
    if (a == 0 && (st[i] != 0 || step != 1)) return ", along axis 0)";
  }
  return NULL;
}

static const char *rows_dropout(const rq_t *q) {
  const dml_ir_node_t *n = q->n;
  if (q->sx != ST_ROWS || !rest_const(q->c, n, 1, 0)) return UNKNOWN;
  if (n->n_inputs > 2 && n->inputs[2]) {
    int64_t tm[1];
    if (const_ints(n->inputs[2], tm, 1) == 1 && tm[0] == 0) return NULL;
    if (n->inputs[2]->kind == DML_IR_VALUE_GLOBAL && n->inputs[2]->data &&
        n->inputs[2]->data_bytes == 1 && !*(const uint8_t *)n->inputs[2]->data)
      return NULL;
    return ", training mode)";
  }
  return NULL;
}

/* Reductions over axes (attribute `axes` or input 1): any axes but 0. */
static const char *rows_reduce(const rq_t *q) {
  const dml_ir_node_t *n = q->n;
  int64_t ax[DML_MAX_RANK * 2];
  int k = -1;
  if (n->n_inputs > 1 && n->inputs[1]) {
    k = const_ints(n->inputs[1], ax, DML_MAX_RANK * 2);
    if (k < 0) return ", axes not known at compile time)";
  } else {
    const dml_attr_t *a = dml_attr_find(n->attrs, n->n_attrs, "axes");
    if (a && a->n <= DML_MAX_RANK * 2) {
      k = (int)a->n;
      for (size_t i = 0; i < a->n; i++) ax[i] = a->ints[i];
    }
  }
  if (k <= 0) {
    if (k == 0 && attr_i(n, "noop_with_empty_axes", 0)) return NULL;
    return " over all axes)";
  }
  for (int i = 0; i < k; i++)
    if (norm_axis(ax[i], q->r) == 0) return ", axes include 0)";
  return q->sx == ST_ROWS ? NULL : UNKNOWN;
}

/* Each op's class, from op_rules.def; `unknown` (NULL): not known to keep
 * rows apart. The formula table's ops (ew_ops.def) are elementwise. */
#define rows_unknown NULL
static const char *(*const k_rows[DML_OP_COUNT_])(const rq_t *) = {
#define DML_RULE(e, shape, vjp, rows, dims, reads, eager, elems) \
  [DML_OP_##e] = rows_##rows,
#include "op_rules.def"
#undef DML_RULE
};
#undef rows_unknown

/* Checks a node with at least one row-aligned input and no mixed one.
 * Returns NULL when its outputs keep rows apart, else what mixes them
 * (", axis 0" style, written into `buf`). */
static const char *check(const ctx_t *c, const dml_ir_node_t *n, char *buf, size_t bs) {
  const dml_ir_value_t *x = n->inputs[0];
  rq_t q = {c, n, x, state(c, x), x ? x->type.rank : 0, buf, bs};
  uint32_t fl = dml_op_info(n->op) ? dml_op_info(n->op)->flags : 0;
  if (fl & (DML_OPF_RANDOM | DML_OPF_CONTROL_FLOW)) return UNKNOWN;
  if (dml_ew_has(n->op)) return rows_elementwise(&q);
  if (n->op > DML_OP_INVALID && n->op < DML_OP_COUNT_ && k_rows[n->op])
    return k_rows[n->op](&q);
  return UNKNOWN;
}
#undef UNKNOWN

int dml_row_indep_analyze(const dml_ir_function_t *f, char *why, size_t why_size) {
  char dummy[8];
  if (!why || !why_size) {
    why = dummy;
    why_size = sizeof dummy;
  }
  why[0] = 0;
  ctx_t c = {-1, NULL, 0};
  for (uint32_t i = 0; i < f->n_args && c.bsym < 0; i++) {
    const dml_type_t *t = &f->args[i]->type;
    if (t->rank >= 1 && t->dims[0].sym >= 0 && t->dims[0].value == 1)
      c.bsym = t->dims[0].sym;
  }
  if (c.bsym < 0) {
    snprintf(why, why_size, "no input has a symbolic batch dim 0");
    return 0;
  }
  c.n_st = f->module ? f->module->next_value_id : 0;
  c.st = (uint8_t *)calloc(c.n_st + 1, 1);
  if (!c.st) {
    snprintf(why, why_size, "out of memory");
    return 0;
  }
  for (uint32_t i = 0; i < f->n_args; i++) {
    const dml_ir_value_t *v = f->args[i];
    int s = rows_dim(&c, &v->type) ? ST_ROWS : ST_CONST;
    if (s == ST_ROWS) {
      for (int32_t d = 1; d < v->type.rank; d++)
        if (v->type.dims[d].sym == c.bsym) s = ST_MIXED;
    } else if (uses_bsym(&c, &v->type)) {
      s = ST_MIXED;
    }
    if (s == ST_MIXED && !why[0])
      snprintf(why, why_size, "input '%s' has the batch symbol in a dim other than 0",
               v->name ? v->name : "");
    set_state(&c, v, s);
  }
  char buf[96];
  for (const dml_ir_node_t *n = f->first; n; n = n->next) {
    int nr = 0, nx = 0, nsh = 0;
    for (uint32_t i = 0; i < n->n_inputs; i++) {
      int s = state(&c, n->inputs[i]);
      nr += s == ST_ROWS;
      nx += s == ST_MIXED;
      nsh += s == ST_SHAPE;
    }
    uint32_t fl = dml_op_info(n->op) ? dml_op_info(n->op)->flags : 0;
    const char *bad = NULL;
    int out = ST_CONST;
    if (nx) {
      out = ST_MIXED;
    } else if (fl & (DML_OPF_RANDOM | DML_OPF_CONTROL_FLOW)) {
      bad = (fl & DML_OPF_RANDOM) ? ", random)" : ", control flow)";
    } else if (!nr) {
      out = nsh ? ST_SHAPE : ST_CONST;
      /* ConstantOfShape/Expand of the row count: every row the same. */
      if (nsh && (n->op == DML_OP_CONSTANT_OF_SHAPE || n->op == DML_OP_EXPAND) &&
          rows_dim(&c, &n->outputs[0]->type) &&
          (n->op == DML_OP_CONSTANT_OF_SHAPE ||
           n->inputs[0]->type.rank < n->outputs[0]->type.rank ||
           (n->inputs[0]->type.dims[0].sym < 0 && n->inputs[0]->type.dims[0].value == 1)))
        out = ST_ROWS;
    } else {
      bad = check(&c, n, buf, sizeof buf);
      out = n->op == DML_OP_SHAPE || n->op == DML_OP_SIZE ? ST_SHAPE : ST_ROWS;
      for (uint32_t j = 0; !bad && out == ST_ROWS && j < n->n_outputs; j++) {
        const dml_type_t *t = &n->outputs[j]->type;
        if (!rows_dim(&c, t)) bad = ", its output's dim 0 is not the rows)";
        for (int32_t d = 1; !bad && d < t->rank; d++)
          if (t->dims[d].sym == c.bsym) bad = ", the rows reach another axis)";
      }
    }
    if (bad) {
      out = ST_MIXED;
      if (!why[0] && n->name && n->name[0])
        snprintf(why, why_size, "node '%s' (%s%s mixes rows", n->name, dml_op_name(n->op),
                 bad);
      else if (!why[0])
        snprintf(why, why_size, "the node of '%s' (%s%s mixes rows",
                 n->n_outputs && n->outputs[0]->name ? n->outputs[0]->name : "?",
                 dml_op_name(n->op), bad);
    }
    for (uint32_t j = 0; j < n->n_outputs; j++) {
      /* Shape arithmetic whose known contents leave out the row count
       * (Shape(x)[1], the sequence length) is a constant per chunk. */
      const dml_ir_sym_data_t *sd = n->outputs[j]->sym_data;
      int sj = out;
      if (out == ST_SHAPE && sd) {
        sj = ST_CONST;
        for (uint32_t e = 0; e < sd->n; e++)
          if (sd->elems[e].sym == c.bsym) sj = ST_SHAPE;
      }
      set_state(&c, n->outputs[j], sj);
    }
  }
  int ok = 1;
  for (uint32_t i = 0; i < f->n_results && ok; i++) {
    const dml_ir_value_t *v = f->results[i];
    int s = state(&c, v);
    if (s == ST_ROWS) continue;
    ok = 0;
    if (!why[0] || s != ST_MIXED)
      snprintf(why, why_size, "output '%s' does not have the rows as its dim 0",
               v->name ? v->name : "");
  }
  free(c.st);
  if (ok) why[0] = 0;
  return ok;
}
