/*
 * cse.c — common subexpression elimination.
 *
 * Two nodes of one function are the same expression when they have the same
 * op, the same operands (in any order for ops flagged DML_OPF_COMMUTATIVE in
 * ops.def: Add(a,b) == Add(b,a), Sum(a,b,c) == Sum(c,a,b)), equal attributes
 * (compared deeply, in any order) and the same number of outputs. The later
 * node's results are replaced by the earlier one's, and the later node is
 * erased. Nodes are visited in execution order, so a merge makes their users
 * equal in turn and whole duplicated chains (Shape -> Gather -> ...) collapse
 * in one walk.
 *
 * Not merged: nodes that write state (DML_OPF_SIDE_EFFECT: Assign), nodes
 * that produce random values (DML_OPF_RANDOM ops, Dropout
 * in training mode),
 * and nodes one of whose results is a function result (its name is the
 * model's output name and must survive).
 *
 * Constant globals (data, not parameters or state) with the same dtype,
 * shape and bytes are merged too: uses of later duplicates are rewritten to
 * the first one and the duplicates are removed from the module.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dml_passes.h"

static dml_status_t oom(void) {
  return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "pass:cse", "out of memory");
}

/* ==== hashing =========================================================== */

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = (const unsigned char *)p;
  uint64_t f = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) f = (f ^ b[i]) * 0x100000001b3ull;
  return mix(h, f);
}

static uint64_t hash_str(uint64_t h, const char *s) {
  return hash_bytes(h, s ? s : "", s ? strlen(s) : 0);
}

/* ==== attributes ======================================================== */

static int tensor_equal(const dml_tensor_t *a, const dml_tensor_t *b) {
  if (a->dtype != b->dtype || a->rank != b->rank) return 0;
  for (int32_t i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return 0;
  size_t n = dml_tensor_bytes(a);
  if (n == SIZE_MAX) return 0;
  if (n == 0) return 1;
  if (!a->data || !b->data) return a->data == b->data;
  return memcmp(a->data, b->data, n) == 0;
}

static int str_eq(const char *a, const char *b) {
  return strcmp(a ? a : "", b ? b : "") == 0;
}

static int attr_equal(const dml_attr_t *a, const dml_attr_t *b) {
  if (a->kind != b->kind) return 0;
  switch (a->kind) {
    case DML_ATTR_INT: return a->i == b->i;
    case DML_ATTR_FLOAT: return memcmp(&a->f, &b->f, sizeof(double)) == 0;
    case DML_ATTR_STRING: return str_eq(a->s, b->s);
    case DML_ATTR_INTS:
      return a->n == b->n && (a->n == 0 || memcmp(a->ints, b->ints, a->n * 8) == 0);
    case DML_ATTR_FLOATS:
      return a->n == b->n && (a->n == 0 || memcmp(a->floats, b->floats, a->n * 8) == 0);
    case DML_ATTR_STRINGS:
      if (a->n != b->n) return 0;
      for (size_t i = 0; i < a->n; i++)
        if (!str_eq(a->strings[i], b->strings[i])) return 0;
      return 1;
    case DML_ATTR_TENSOR: return tensor_equal(&a->tensor, &b->tensor);
  }
  return 0;
}

static int attrs_equal(const dml_ir_node_t *a, const dml_ir_node_t *b) {
  if (a->n_attrs != b->n_attrs) return 0;
  for (uint32_t i = 0; i < a->n_attrs; i++) {
    const dml_attr_t *other = dml_ir_node_attr(b, a->attrs[i].name);
    if (!other || !attr_equal(&a->attrs[i], other)) return 0;
  }
  return 1;
}

/* Order-independent hash of the attributes (names and scalar contents). */
static uint64_t hash_attrs(const dml_ir_node_t *n) {
  uint64_t sum = 0;
  for (uint32_t i = 0; i < n->n_attrs; i++) {
    const dml_attr_t *a = &n->attrs[i];
    uint64_t h = hash_str((uint64_t)a->kind, a->name);
    if (a->kind == DML_ATTR_INT) h = mix(h, (uint64_t)a->i);
    if (a->kind == DML_ATTR_INTS) h = hash_bytes(h, a->ints, a->n * 8);
    if (a->kind == DML_ATTR_STRING) h = hash_str(h, a->s);
    sum += h;
  }
  return sum;
}

/* ==== nodes ============================================================= */

/* Ops flagged DML_OPF_RANDOM in ops.def draw random numbers; so does
 * Dropout unless training_mode (input 2) is absent or a constant false. */
static int is_random(const dml_ir_node_t *n) {
  const dml_op_info_t *info = dml_op_info(n->op);
  if (info && (info->flags & (DML_OPF_RANDOM | DML_OPF_SIDE_EFFECT))) return 1;
  if (n->op != DML_OP_DROPOUT || n->n_inputs < 3 || !n->inputs[2]) return 0;
  const dml_ir_value_t *t = n->inputs[2];
  if (t->kind != DML_IR_VALUE_GLOBAL || !t->data || t->data_bytes == 0 ||
      (t->global_flags & DML_IR_GLOBAL_STATE))
    return 1;
  return dml_load_i64(t->type.dtype, t->data, 0) != 0;
}

static int is_function_result(const dml_ir_function_t *f, const dml_ir_value_t *v) {
  for (uint32_t i = 0; i < f->n_results; i++)
    if (f->results[i] == v) return 1;
  return 0;
}

static int cmp_value_ptr(const void *pa, const void *pb) {
  const dml_ir_value_t *a = *(const dml_ir_value_t *const *)pa;
  const dml_ir_value_t *b = *(const dml_ir_value_t *const *)pb;
  uint32_t ia = a ? a->id + 1 : 0, ib = b ? b->id + 1 : 0;
  return ia < ib ? -1 : ia > ib;
}

static int commutative(const dml_ir_node_t *n) {
  const dml_op_info_t *info = dml_op_info(n->op);
  return info && (info->flags & DML_OPF_COMMUTATIVE);
}

/* Operands in canonical order (sorted by value id for commutative ops),
 * stored in node->user by cse_function. */
static dml_ir_value_t **canon(const dml_ir_node_t *n) {
  return (dml_ir_value_t **)n->user;
}

static uint64_t hash_node(const dml_ir_node_t *n) {
  uint64_t h = mix((uint64_t)n->op, ((uint64_t)n->n_inputs << 32) | n->n_outputs);
  dml_ir_value_t **ops = canon(n);
  for (uint32_t i = 0; i < n->n_inputs; i++) h = mix(h, ops[i] ? ops[i]->id + 1ull : 0);
  return mix(h, hash_attrs(n));
}

static int nodes_equal(const dml_ir_node_t *a, const dml_ir_node_t *b) {
  if (a->op != b->op || a->n_inputs != b->n_inputs || a->n_outputs != b->n_outputs)
    return 0;
  dml_ir_value_t **x = canon(a), **y = canon(b);
  for (uint32_t i = 0; i < a->n_inputs; i++)
    if (x[i] != y[i]) return 0;
  return attrs_equal(a, b);
}

typedef struct {
  dml_ir_node_t **slots;
  uint64_t *hashes;
  size_t cap; /* power of two */
} table_t;

static dml_status_t cse_function(dml_ir_function_t *f) {
  uint32_t count = dml_ir_function_num_nodes(f);
  if (count < 2) return DML_OK;
  table_t t;
  t.cap = 16;
  while (t.cap < (size_t)count * 2) t.cap *= 2;
  t.slots = (dml_ir_node_t **)calloc(t.cap, sizeof(*t.slots));
  t.hashes = (uint64_t *)calloc(t.cap, sizeof(*t.hashes));
  dml_status_t s = DML_OK;
  if (!t.slots || !t.hashes) {
    s = oom();
    goto free_table;
  }
  for (dml_ir_node_t *n = f->first; n; n = n->next) n->user = NULL;

  dml_ir_node_t *n = f->first;
  while (n) {
    dml_ir_node_t *next = n->next;
    /* Canonical operands, in the module's arena (n->user is pass scratch). */
    dml_ir_value_t **ops = (dml_ir_value_t **)dml_ir_alloc(
        f->module, sizeof(dml_ir_value_t *) * (n->n_inputs + 1));
    if (!ops) {
      s = oom();
      goto free_table;
    }
    memcpy(ops, n->inputs, sizeof(dml_ir_value_t *) * n->n_inputs);
    if (commutative(n)) qsort(ops, n->n_inputs, sizeof(*ops), cmp_value_ptr);
    n->user = ops;

    if (!is_random(n)) {
      uint64_t h = hash_node(n);
      size_t i = (size_t)h & (t.cap - 1);
      while (t.slots[i] && !(t.hashes[i] == h && nodes_equal(t.slots[i], n)))
        i = (i + 1) & (t.cap - 1);
      dml_ir_node_t *first = t.slots[i];
      int keep_names = 0;
      for (uint32_t k = 0; first && k < n->n_outputs; k++)
        keep_names |= is_function_result(f, n->outputs[k]);
      if (!first) {
        t.slots[i] = n;
        t.hashes[i] = h;
      } else if (!keep_names) {
        for (uint32_t k = 0; k < n->n_outputs; k++) {
          dml_ir_value_t *from = n->outputs[k], *to = first->outputs[k];
          /* A result of the earlier node may still be untyped where the
           * later one is typed (both have the same type once inferred). */
          if (to->type.rank < 0 && from->type.rank >= 0) to->type = from->type;
          if (!to->sym_data && from->sym_data) to->sym_data = from->sym_data;
          dml_ir_value_replace_all_uses(f, from, to);
        }
        dml_ir_node_erase(n);
      }
    }
    n = next;
  }
  for (dml_ir_node_t *k = f->first; k; k = k->next) k->user = NULL;
free_table:
  free(t.slots);
  free(t.hashes);
  return s;
}

/* ==== constant globals ================================================== */

static int mergeable_constant(const dml_ir_value_t *g) {
  return g->data && !(g->global_flags & (DML_IR_GLOBAL_PARAM | DML_IR_GLOBAL_STATE)) &&
         dml_type_is_static(&g->type);
}

static uint64_t hash_global(const dml_ir_value_t *g) {
  uint64_t h = mix((uint64_t)g->type.dtype, (uint64_t)(g->type.rank + 1));
  for (int32_t i = 0; i < g->type.rank; i++) h = mix(h, (uint64_t)g->type.dims[i].value);
  return hash_bytes(h, g->data, g->data_bytes);
}

static int globals_equal(const dml_ir_value_t *a, const dml_ir_value_t *b) {
  return dml_type_equal(&a->type, &b->type) && a->data_bytes == b->data_bytes &&
         (a->data_bytes == 0 || memcmp(a->data, b->data, a->data_bytes) == 0);
}

static dml_status_t cse_globals(dml_ir_module_t *m) {
  if (m->n_globals < 2) return DML_OK;
  size_t cap = 16;
  while (cap < (size_t)m->n_globals * 2) cap *= 2;
  dml_ir_value_t **slots = (dml_ir_value_t **)calloc(cap, sizeof(*slots));
  uint64_t *hashes = (uint64_t *)calloc(cap, sizeof(*hashes));
  if (!slots || !hashes) {
    free(slots);
    free(hashes);
    return oom();
  }
  uint32_t kept = 0;
  for (uint32_t gi = 0; gi < m->n_globals; gi++) {
    dml_ir_value_t *g = m->globals[gi];
    if (mergeable_constant(g)) {
      uint64_t h = hash_global(g);
      size_t i = (size_t)h & (cap - 1);
      while (slots[i] && !(hashes[i] == h && globals_equal(slots[i], g)))
        i = (i + 1) & (cap - 1);
      if (slots[i]) {
        for (uint32_t fi = 0; fi < m->n_functions; fi++)
          dml_ir_value_replace_all_uses(m->functions[fi], g, slots[i]);
        continue; /* drop the duplicate */
      }
      slots[i] = g;
      hashes[i] = h;
    }
    m->globals[kept++] = g;
  }
  m->n_globals = kept;
  free(slots);
  free(hashes);
  return DML_OK;
}

dml_status_t dml_pass_cse(dml_ir_module_t *m, dml_pass_options_t *o) {
  (void)o;
  /* Constants first: merged constants make more nodes equal. */
  DML_RETURN_IF_ERROR(cse_globals(m));
  for (uint32_t i = 0; i < m->n_functions; i++)
    DML_RETURN_IF_ERROR(cse_function(m->functions[i]));
  return DML_OK;
}
