/* verify.c — structural checks of a module (dml_ir_verify).
 *
 * Checks, in order: symbols (names unique, bounds >= 1), globals (kind,
 * unique names, data size), functions (unique names; arguments; every node:
 * valid op, arity within ops.def, operands defined before use in this
 * function or globals of this module, results owned by the node; function
 * results defined), and with `require_types` every value's type (known rank,
 * valid dtype, dims >= 0, valid symbol indices). The first problem found is
 * returned as INVALID_ARGUMENT with op "ir.verify", naming the function, the
 * node (name and op) and the operand index. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_ir.h"

typedef struct verifier {
  const dml_ir_module_t *m;
  int require_types;
  uint32_t n_ids;
  /* scope[id] == v while v may be used: globals always, the current
   * function's arguments and the results of nodes already visited. */
  const dml_ir_value_t **scope;
} verifier_t;

static dml_status_t fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static dml_status_t fail(const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "ir.verify", "%s", msg);
}

/* "%name" or "#id" for messages. */
static const char *value_label(const dml_ir_value_t *v, char *buf, size_t cap) {
  if (!v)
    snprintf(buf, cap, "_");
  else if (v->kind == DML_IR_VALUE_GLOBAL)
    snprintf(buf, cap, "@%s", v->name ? v->name : "?");
  else if (v->name)
    snprintf(buf, cap, "%%%s", v->name);
  else
    snprintf(buf, cap, "#%u", (unsigned)v->id);
  return buf;
}

/* Where a problem is: "function @f, node 'name' (Op)". */
static dml_status_t at_node(dml_status_t st, const dml_ir_function_t *f,
                            const dml_ir_node_t *n) {
  if (!st) return st;
  if (n)
    return dml_status_detail(st, "function @%s, node '%s' (%s)", f->name ? f->name : "?",
                             n->name ? n->name : "", dml_op_name(n->op));
  return dml_status_detail(st, "function @%s", f->name ? f->name : "?");
}

static dml_status_t check_type(const verifier_t *vf, const dml_ir_value_t *v,
                               const char *what) {
  const dml_type_t *t = &v->type;
  char lb[160];
  if (t->rank < DML_RANK_UNKNOWN || t->rank > DML_MAX_RANK)
    return fail("%s %s has rank %d (at most %d)", what, value_label(v, lb, sizeof(lb)),
                (int)t->rank, DML_MAX_RANK);
  for (int32_t i = 0; i < t->rank; i++) {
    const dml_dim_t *d = &t->dims[i];
    if (d->sym >= 0 && (uint32_t)d->sym >= vf->m->n_symbols)
      return fail("%s %s: dim %d refers to symbol %d, but the module has %u", what,
                  value_label(v, lb, sizeof(lb)), (int)i, (int)d->sym,
                  (unsigned)vf->m->n_symbols);
  }
  if (!vf->require_types) return DML_OK;
  if (t->rank == DML_RANK_UNKNOWN)
    return fail("%s %s has no known shape (run shape inference first)", what,
                value_label(v, lb, sizeof(lb)));
  if (dml_dtype_size(t->dtype) == 0)
    return fail("%s %s has no valid dtype", what, value_label(v, lb, sizeof(lb)));
  for (int32_t i = 0; i < t->rank; i++)
    if (t->dims[i].value < 0)
      return fail("%s %s: dim %d is %lld (dims are >= 0)", what,
                  value_label(v, lb, sizeof(lb)), (int)i, (long long)t->dims[i].value);
  return DML_OK;
}

static int in_scope(const verifier_t *vf, const dml_ir_value_t *v) {
  return v && v->id < vf->n_ids && vf->scope[v->id] == v;
}

/* Adds `v` to the scope; fails when its id is out of range or taken. */
static int enter(verifier_t *vf, const dml_ir_value_t *v) {
  if (v->id >= vf->n_ids || vf->scope[v->id]) return 0;
  vf->scope[v->id] = v;
  return 1;
}

static void leave(verifier_t *vf, const dml_ir_value_t *v) {
  if (v && v->id < vf->n_ids && vf->scope[v->id] == v) vf->scope[v->id] = NULL;
}

static dml_status_t check_attrs(const dml_ir_node_t *n) {
  for (uint32_t i = 0; i < n->n_attrs; i++) {
    const dml_attr_t *a = &n->attrs[i];
    if (!a->name) return fail("attribute %u has no name", (unsigned)i);
    for (uint32_t j = 0; j < i; j++)
      if (n->attrs[j].name && strcmp(n->attrs[j].name, a->name) == 0)
        return fail("attribute '%s' appears twice", a->name);
    int bad = 0;
    switch (a->kind) {
      case DML_ATTR_INT:
      case DML_ATTR_FLOAT: break;
      case DML_ATTR_STRING: bad = !a->s; break;
      case DML_ATTR_INTS: bad = a->n && !a->ints; break;
      case DML_ATTR_FLOATS: bad = a->n && !a->floats; break;
      case DML_ATTR_STRINGS: bad = a->n && !a->strings; break;
      case DML_ATTR_TENSOR: {
        size_t bytes = dml_tensor_bytes(&a->tensor);
        bad = a->tensor.rank < 0 || a->tensor.rank > DML_MAX_RANK || bytes == SIZE_MAX ||
              (bytes && !a->tensor.data);
        break;
      }
      default:
        return fail("attribute '%s' has an invalid kind %d", a->name, (int)a->kind);
    }
    if (bad)
      return fail("attribute '%s' (%s) has no valid value", a->name,
                  dml_attr_kind_name(a->kind));
  }
  return DML_OK;
}

static dml_status_t check_node(verifier_t *vf, const dml_ir_function_t *f,
                               const dml_ir_node_t *n) {
  char lb[160];
  const dml_op_info_t *info = dml_op_info(n->op);
  if (!info) return fail("invalid op %d", (int)n->op);
  if (n->func != f) return fail("node belongs to another function");
  if ((long long)n->n_inputs < info->min_inputs ||
      (info->max_inputs >= 0 && (long long)n->n_inputs > info->max_inputs))
    return fail("%s takes %d..%d operands (-1: any number), has %u", info->name,
                info->min_inputs, info->max_inputs, (unsigned)n->n_inputs);
  if ((long long)n->n_outputs < info->min_outputs ||
      (info->max_outputs >= 0 && (long long)n->n_outputs > info->max_outputs))
    return fail("%s has %d..%d results (-1: any number), has %u", info->name,
                info->min_outputs, info->max_outputs, (unsigned)n->n_outputs);
  if ((n->n_inputs && !n->inputs) || (n->n_outputs && !n->outputs))
    return fail("node has no operand or result array");
  for (uint32_t i = 0; i < n->n_inputs; i++) {
    const dml_ir_value_t *v = n->inputs[i];
    if (!v) {
      if ((long long)i < info->min_inputs)
        return fail("operand %u is absent, but %s requires its first %d operands", i,
                    info->name, info->min_inputs);
      continue;
    }
    if (in_scope(vf, v)) continue;
    const char *why;
    if (v->kind == DML_IR_VALUE_GLOBAL)
      why = "is not a global of this module";
    else if (v->func != f)
      why = "belongs to another function";
    else if (v->kind == DML_IR_VALUE_ARG)
      why = "is not an argument of this function";
    else if (v->kind == DML_IR_VALUE_RESULT)
      why = "is not defined before this node";
    else
      why = "has an invalid kind";
    return fail("operand %u (%s) %s", i, value_label(v, lb, sizeof(lb)), why);
  }
  DML_RETURN_IF_ERROR(check_attrs(n));
  if (n->op == DML_OP_ASSIGN) {
    /* The target is a parameter or state global, assigned once, and no
     * later node or function result reads it (the write is the last use). */
    const dml_ir_value_t *g = n->inputs[0];
    if (g->kind != DML_IR_VALUE_GLOBAL ||
        !(g->global_flags & (DML_IR_GLOBAL_PARAM | DML_IR_GLOBAL_STATE)))
      return fail("Assign's target (%s) is not a global flagged param or state",
                  value_label(g, lb, sizeof(lb)));
    for (const dml_ir_node_t *k = n->next; k; k = k->next)
      for (uint32_t i = 0; i < k->n_inputs; i++)
        if (k->inputs[i] == g)
          return fail("global %s is %s after its Assign in @%s",
                      value_label(g, lb, sizeof(lb)),
                      k->op == DML_OP_ASSIGN ? "assigned again" : "read", f->name);
    for (uint32_t i = 0; i < f->n_results; i++)
      if (f->results[i] == g)
        return fail("global %s is a result of @%s, which assigns it",
                    value_label(g, lb, sizeof(lb)), f->name);
  }
  for (uint32_t i = 0; i < n->n_outputs; i++) {
    const dml_ir_value_t *v = n->outputs[i];
    if (!v) return fail("result %u is missing", i);
    if (v->kind != DML_IR_VALUE_RESULT || v->def != n || v->def_index != i ||
        v->func != f)
      return fail("result %u (%s) does not record this node as its definition", i,
                  value_label(v, lb, sizeof(lb)));
    if (!enter(vf, v))
      return fail("result %u (%s) is defined twice or has a bad id", i,
                  value_label(v, lb, sizeof(lb)));
    char what[32];
    snprintf(what, sizeof(what), "result %u", (unsigned)i);
    DML_RETURN_IF_ERROR(check_type(vf, v, what));
  }
  return DML_OK;
}

/* Removes `f`'s values from the scope again. */
static void leave_function(verifier_t *vf, const dml_ir_function_t *f,
                           const dml_ir_node_t *stop) {
  for (uint32_t i = 0; i < f->n_args; i++) leave(vf, f->args[i]);
  for (const dml_ir_node_t *n = f->first; n && n != stop; n = n->next)
    for (uint32_t i = 0; i < n->n_outputs && n->outputs; i++) leave(vf, n->outputs[i]);
  if (stop)
    for (uint32_t i = 0; i < stop->n_outputs && stop->outputs; i++)
      leave(vf, stop->outputs[i]);
}

static dml_status_t check_function(verifier_t *vf, const dml_ir_function_t *f) {
  char lb[160];
  if (!f->name || !*f->name) return fail("a function has no name");
  if (f->module != vf->m) return fail("function @%s belongs to another module", f->name);
  for (uint32_t i = 0; i < f->n_args; i++) {
    const dml_ir_value_t *v = f->args[i];
    dml_status_t st = DML_OK;
    if (!v)
      st = fail("argument %u is missing", i);
    else if (v->kind != DML_IR_VALUE_ARG || v->func != f)
      st = fail("argument %u (%s) is not an argument of this function", i,
                value_label(v, lb, sizeof(lb)));
    else if (!enter(vf, v))
      st = fail("argument %u (%s) appears twice or has a bad id", i,
                value_label(v, lb, sizeof(lb)));
    else
      st = check_type(vf, v, "argument");
    if (st) {
      leave_function(vf, f, f->first);
      return at_node(st, f, NULL);
    }
  }
  /* Nodes, in order; a node seen twice (a cycle in the list) fails as a
   * result defined twice. */
  const dml_ir_node_t *prev = NULL;
  for (const dml_ir_node_t *n = f->first; n; prev = n, n = n->next) {
    dml_status_t st = n->prev != prev ? fail("node list is broken (prev link)") : DML_OK;
    if (!st) st = check_node(vf, f, n);
    if (st) {
      leave_function(vf, f, n);
      return at_node(st, f, n);
    }
  }
  dml_status_t st = prev != f->last ? fail("node list is broken (last link)") : DML_OK;
  for (uint32_t i = 0; !st && i < f->n_results; i++) {
    const dml_ir_value_t *v = f->results[i];
    if (!in_scope(vf, v))
      st = fail("result %u (%s) of the function is not defined in it", i,
                value_label(v, lb, sizeof(lb)));
  }
  leave_function(vf, f, NULL);
  return at_node(st, f, NULL);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Fails on the first name that appears twice in names[0..n). Sorts it. */
static dml_status_t check_unique(const char **names, size_t n, const char *what) {
  qsort(names, n, sizeof(*names), cmp_str);
  for (size_t i = 1; i < n; i++)
    if (strcmp(names[i - 1], names[i]) == 0)
      return fail("two %ss are named '%s'", what, names[i]);
  return DML_OK;
}

static dml_status_t check_module(verifier_t *vf) {
  const dml_ir_module_t *m = vf->m;
  size_t most = m->n_symbols > m->n_globals ? m->n_symbols : m->n_globals;
  if (m->n_functions > most) most = m->n_functions;
  const char **names = (const char **)malloc((most ? most : 1) * sizeof(*names));
  if (!names)
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "ir.verify", "out of memory");
  dml_status_t st = DML_OK;
  for (uint32_t i = 0; !st && i < m->n_symbols; i++) {
    const dml_ir_symbol_t *s = &m->symbols[i];
    if (!s->name || !*s->name)
      st = fail("symbol %u has no name", i);
    else if (s->bound < 1)
      st = fail("symbol '%s' has bound %lld (bounds are >= 1)", s->name,
                (long long)s->bound);
    else
      names[i] = s->name;
  }
  if (!st) st = check_unique(names, m->n_symbols, "symbol");
  char lb[160];
  for (uint32_t i = 0; !st && i < m->n_globals; i++) {
    const dml_ir_value_t *g = m->globals[i];
    if (!g || g->kind != DML_IR_VALUE_GLOBAL || !g->name || !*g->name) {
      st = fail("global %u is missing, unnamed or not a global", i);
      break;
    }
    names[i] = g->name;
    if (!enter(vf, g)) {
      st =
          fail("global %s appears twice or has a bad id", value_label(g, lb, sizeof(lb)));
      break;
    }
    st = check_type(vf, g, "global");
    if (!st && g->data) {
      int64_t want = dml_ir_type_bytes_bound(m, &g->type);
      if (!dml_type_is_static(&g->type) || want < 0 || (uint64_t)want != g->data_bytes)
        st = fail("global %s holds %zu bytes of data for a type of %lld bytes",
                  value_label(g, lb, sizeof(lb)), g->data_bytes, (long long)want);
    }
  }
  if (!st) st = check_unique(names, m->n_globals, "global");
  for (uint32_t i = 0; !st && i < m->n_functions; i++) {
    if (!m->functions[i])
      st = fail("function %u is missing", i);
    else
      names[i] = m->functions[i]->name ? m->functions[i]->name : "";
  }
  if (!st) st = check_unique(names, m->n_functions, "function");
  for (uint32_t i = 0; !st && i < m->n_functions; i++)
    st = check_function(vf, m->functions[i]);
  free(names);
  return st;
}

dml_status_t dml_ir_verify(const dml_ir_module_t *m, int require_types) {
  if (!m) return fail("no module");
  verifier_t vf;
  memset(&vf, 0, sizeof(vf));
  vf.m = m;
  vf.require_types = require_types;
  vf.n_ids = m->next_value_id;
  vf.scope = (const dml_ir_value_t **)calloc(vf.n_ids ? vf.n_ids : 1, sizeof(*vf.scope));
  if (!vf.scope)
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "ir.verify", "out of memory");
  dml_status_t st = check_module(&vf);
  free(vf.scope);
  return st;
}
