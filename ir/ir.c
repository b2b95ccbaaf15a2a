/* ir.c — arena, module, functions, nodes, attributes and types. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_ir.h"

/* ==== arena ============================================================ */

typedef struct dml_ir_arena_block {
  struct dml_ir_arena_block *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
} arena_block_t;

struct dml_ir_arena {
  arena_block_t *head;
  size_t total;
};

#define ARENA_BLOCK (256u * 1024u)

void *dml_ir_alloc(dml_ir_module_t *m, size_t bytes) {
  struct dml_ir_arena *a = m->arena;
  if (bytes == 0) bytes = 1;
  if (bytes > SIZE_MAX - 32) return NULL;
  size_t need = (bytes + 15u) & ~(size_t)15u;
  arena_block_t *b = a->head;
  if (!b || b->cap - b->used < need) {
    size_t cap = need > ARENA_BLOCK / 4 ? need : ARENA_BLOCK;
    arena_block_t *nb = (arena_block_t *)malloc(sizeof(arena_block_t) + cap);
    if (!nb) return NULL;
    nb->used = 0;
    nb->cap = cap;
    if (need > ARENA_BLOCK / 4 && b) {
      /* Big allocation: keep the current block at the head for small ones. */
      nb->next = b->next;
      b->next = nb;
    } else {
      nb->next = b;
      a->head = nb;
    }
    a->total += cap;
    b = nb;
  }
  void *p = b->data + b->used;
  b->used += need;
  memset(p, 0, bytes);
  return p;
}

void *dml_ir_memdup(dml_ir_module_t *m, const void *src, size_t n) {
  if (n == 0) return NULL;
  void *p = dml_ir_alloc(m, n);
  if (p) memcpy(p, src, n);
  return p;
}

void *dml_ir_tensor_data_dup(dml_ir_module_t *m, dml_dtype_t dt, const void *src,
                             size_t bytes) {
  if (dt != DML_DTYPE_STRING) return dml_ir_memdup(m, src, bytes);
  size_t n = bytes / sizeof(dml_str_t);
  dml_str_t *d = (dml_str_t *)dml_ir_memdup(m, src, n * sizeof(dml_str_t));
  for (size_t i = 0; d && i < n; i++) {
    if (!d[i].len) {
      d[i].data = "";
      continue;
    }
    if (d[i].len > SIZE_MAX) return NULL;
    char *b = (char *)dml_ir_memdup(m, d[i].data, (size_t)d[i].len);
    if (!b) return NULL;
    d[i].data = b;
  }
  return d;
}

const char *dml_ir_strdup(dml_ir_module_t *m, const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *p = (char *)dml_ir_alloc(m, n);
  if (p) memcpy(p, s, n);
  return p;
}

size_t dml_ir_module_arena_bytes(const dml_ir_module_t *m) {
  return m->arena->total;
}

static dml_status_t oom(void) {
  return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "ir", "out of memory");
}

/* Grows an arena-backed pointer array to hold at least `want` entries. */
static int grow(dml_ir_module_t *m, void ***arr, uint32_t *cap, uint32_t want,
                size_t elem) {
  if (want <= *cap) return 1;
  uint32_t nc = *cap ? *cap * 2 : 8;
  while (nc < want) nc *= 2;
  void *n = dml_ir_alloc(m, (size_t)nc * elem);
  if (!n) return 0;
  if (*arr) memcpy(n, *arr, (size_t)(*cap) * elem);
  *arr = (void **)n;
  *cap = nc;
  return 1;
}

/* ==== module ============================================================ */

dml_status_t dml_ir_module_create(dml_ir_module_t **out_module) {
  dml_ir_module_t *m = (dml_ir_module_t *)calloc(1, sizeof(*m));
  if (!m) return oom();
  m->arena = (struct dml_ir_arena *)calloc(1, sizeof(*m->arena));
  if (!m->arena) {
    free(m);
    return oom();
  }
  *out_module = m;
  return DML_OK;
}

void dml_ir_module_release(dml_ir_module_t *m) {
  if (!m) return;
  arena_block_t *b = m->arena->head;
  while (b) {
    arena_block_t *n = b->next;
    free(b);
    b = n;
  }
  free(m->arena);
  free(m);
}

dml_status_t dml_ir_module_add_symbol(dml_ir_module_t *m, const char *name, int64_t bound,
                                      int32_t *out_index) {
  int32_t i = dml_ir_module_find_symbol(m, name);
  if (i >= 0) {
    if (out_index) *out_index = i;
    return DML_OK;
  }
  if (bound < 1)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "ir",
                           "symbol '%s' needs an upper bound >= 1, got %lld", name,
                           (long long)bound);
  if (!grow(m, (void ***)&m->symbols, &m->cap_symbols_, m->n_symbols + 1,
            sizeof(dml_ir_symbol_t)))
    return oom();
  dml_ir_symbol_t *s = &m->symbols[m->n_symbols];
  s->name = dml_ir_strdup(m, name);
  s->bound = bound;
  s->flags = 0;
  s->producer = NULL;
  s->src[0] = s->src[1] = -1;
  s->mul = s->div = 1;
  s->add = 0;
  s->min = 0;
  if (!s->name) return oom();
  if (out_index) *out_index = (int32_t)m->n_symbols;
  m->n_symbols++;
  return DML_OK;
}

static int64_t gcd64(int64_t x, int64_t y) {
  if (x < 0) x = -x;
  if (y < 0) y = -y;
  while (y) {
    int64_t t = x % y;
    x = y;
    y = t;
  }
  return x;
}

/* Appends symbol `i`'s name to buf, parenthesized unless a plain word. */
static size_t put_sym_name(const dml_ir_module_t *m, int32_t i, char *buf, size_t k,
                           size_t cap) {
  const char *n = m->symbols[i].name;
  int plain =
      (m->symbols[i].flags & DML_IR_SYMBOL_DERIVED) == 0 || strpbrk(n, "+-/") == NULL;
  if (k < cap) k += (size_t)snprintf(buf + k, cap - k, plain ? "%s" : "(%s)", n);
  return k;
}

int64_t dml_ir_symbol_min(const dml_ir_module_t *m, int32_t i) {
  if (i < 0 || (uint32_t)i >= m->n_symbols) return 1;
  const dml_ir_symbol_t *s = &m->symbols[i];
  if (s->flags & DML_IR_SYMBOL_DATA_DEPENDENT) return 0;
  if (!(s->flags & DML_IR_SYMBOL_DERIVED)) return s->min > 0 ? s->min : 1;
  int64_t a = dml_ir_symbol_min(m, s->src[0]), b = 1, v = 0;
  if (s->src[1] >= 0) b = dml_ir_symbol_min(m, s->src[1]);
  if (a < 0) a = 0;
  if (b < 0) b = 0;
  /* a dim is never negative: (samples - 80) / 320 at samples = 1 is the
   * formula's -1, but such an input is refused when the dim is computed, so
   * the size is at least 0 (and never equals torch.onnx's -1 of
   * Where(Equal(shape, -1), 1, shape) before an Expand) */
  return dml_sym_derived_eval(s->mul, s->add, s->div, a, b, &v) && v > 0 ? v : 0;
}

dml_status_t dml_ir_module_derived_dim(dml_ir_module_t *m, int32_t a, int32_t b,
                                       int64_t mul, int64_t add, int64_t div,
                                       dml_dim_t *out, int *out_ok) {
  *out_ok = 0;
  if (div < 1 || mul < 0 || a < 0 || (uint32_t)a >= m->n_symbols ||
      (b >= 0 && (uint32_t)b >= m->n_symbols))
    return DML_OK;
  if (mul == 0) {
    int64_t v = 0;
    if (!dml_sym_derived_eval(0, add, div, 1, 1, &v) || v < 0) return DML_OK;
    out->value = v;
    out->sym = -1;
    *out_ok = 1;
    return DML_OK;
  }
  if (b >= 0 && b < a) {
    int32_t t = a;
    a = b;
    b = t;
  }
  /* Fold a one-source derived source: floor((floor(x/d1) + add)/div) =
   * floor((x + add*d1)/(d1*div)); an affine source (d1 = 1) also under mul. */
  while (b < 0 && (m->symbols[a].flags & DML_IR_SYMBOL_DERIVED) &&
         m->symbols[a].src[1] < 0 && (mul == 1 || m->symbols[a].div == 1)) {
    const dml_ir_symbol_t *s = &m->symbols[a];
    int64_t nm, na, nd, t;
    if (__builtin_mul_overflow(mul, s->mul, &nm) ||
        __builtin_mul_overflow(mul, s->add, &t) ||
        __builtin_mul_overflow(add, s->div, &na) || __builtin_add_overflow(na, t, &na) ||
        __builtin_mul_overflow(div, s->div, &nd))
      return DML_OK;
    mul = nm, add = na, div = nd, a = s->src[0];
  }
  for (int k = 0; k < 2; k++) {
    int32_t x = k ? b : a;
    if (x >= 0 && (m->symbols[x].flags & DML_IR_SYMBOL_DATA_DEPENDENT)) return DML_OK;
  }
  int64_t g = gcd64(gcd64(mul, add), div);
  if (g > 1) mul /= g, add /= g, div /= g;
  if (div > 1 && mul % div == 0) { /* floor((q*div*S + add)/div) = q*S + floor(add/div) */
    int64_t fa = 0;
    dml_sym_derived_eval(1, add, div, 0, 1, &fa);
    mul /= div, add = fa, div = 1;
  }
  int64_t value = 1;
  if (div == 1) { /* k * (mul/k * S + add/k) */
    value = gcd64(mul, add);
    mul /= value, add /= value;
    if (add == 0 && b < 0) {
      out->value = value * mul;
      out->sym = a;
      *out_ok = 1;
      return DML_OK;
    }
  }
  /* Bound: the formula at the sources' bounds. */
  int64_t ba = m->symbols[a].bound, bb = b >= 0 ? m->symbols[b].bound : 1, bound = 0;
  if (!dml_sym_derived_eval(mul, add, div, ba, bb, &bound) || bound < 1) return DML_OK;
  if (__builtin_mul_overflow(bound, value, &bound)) return DML_OK;
  bound /= value;
  /* Canonical name: "(3*H-2)/2", "H*W", "H+4". */
  char name[256];
  size_t k = 0;
  int paren = div > 1 && (add != 0 || mul != 1);
  if (paren) k += (size_t)snprintf(name + k, sizeof name - k, "(");
  if (mul != 1) k += (size_t)snprintf(name + k, sizeof name - k, "%lld*", (long long)mul);
  k = put_sym_name(m, a, name, k, sizeof name);
  if (b >= 0) {
    if (k < sizeof name) k += (size_t)snprintf(name + k, sizeof name - k, "*");
    k = put_sym_name(m, b, name, k, sizeof name);
  }
  if (add && k < sizeof name)
    k += (size_t)snprintf(name + k, sizeof name - k, "%+lld", (long long)add);
  if (paren && k < sizeof name) k += (size_t)snprintf(name + k, sizeof name - k, ")");
  if (div > 1 && k < sizeof name)
    k += (size_t)snprintf(name + k, sizeof name - k, "/%lld", (long long)div);
  if (k >= sizeof name) return DML_OK;
  int32_t idx = dml_ir_module_find_symbol(m, name);
  if (idx < 0) {
    DML_RETURN_IF_ERROR(dml_ir_module_add_symbol(m, name, bound, &idx));
    dml_ir_symbol_t *s = &m->symbols[idx];
    s->flags = DML_IR_SYMBOL_DERIVED;
    s->src[0] = a;
    s->src[1] = b;
    s->mul = mul;
    s->add = add;
    s->div = div;
  } else if (!(m->symbols[idx].flags & DML_IR_SYMBOL_DERIVED)) {
    return DML_OK; /* an input symbol spelled like a formula */
  }
  out->value = value;
  out->sym = idx;
  *out_ok = 1;
  return DML_OK;
}

int32_t dml_ir_module_find_symbol(const dml_ir_module_t *m, const char *name) {
  for (uint32_t i = 0; i < m->n_symbols; i++)
    if (strcmp(m->symbols[i].name, name) == 0) return (int32_t)i;
  return -1;
}

static dml_ir_value_t *new_value(dml_ir_module_t *m, dml_ir_value_kind_t kind) {
  dml_ir_value_t *v = (dml_ir_value_t *)dml_ir_alloc(m, sizeof(*v));
  if (!v) return NULL;
  v->kind = kind;
  v->id = m->next_value_id++;
  v->type.rank = DML_RANK_UNKNOWN;
  v->mem_offset = -1;
  v->mem_bytes = -1;
  return v;
}

dml_status_t dml_ir_module_add_global(dml_ir_module_t *m, const char *name,
                                      const dml_type_t *type, const void *data,
                                      size_t data_bytes, uint32_t flags,
                                      dml_ir_value_t **out_value) {
  if (!name || !*name)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "ir", "global needs a name");
  if (dml_ir_module_find_global(m, name))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "ir", "duplicate global '%s'",
                           name);
  if (data) {
    if (!dml_type_is_static(type))
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "ir",
                             "global '%s' with data must have a static shape", name);
    int64_t want = dml_ir_type_bytes_bound(m, type);
    if (want < 0 || (uint64_t)want != data_bytes)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "ir",
                             "global '%s': %zu bytes of data for a type of %lld bytes",
                             name, data_bytes, (long long)want);
  }
  if (!grow(m, (void ***)&m->globals, &m->cap_globals_, m->n_globals + 1,
            sizeof(dml_ir_value_t *)))
    return oom();
  dml_ir_value_t *v = new_value(m, DML_IR_VALUE_GLOBAL);
  if (!v) return oom();
  v->name = dml_ir_strdup(m, name);
  v->type = *type;
  v->global_flags = flags;
  if (data && data_bytes) {
    v->data = dml_ir_tensor_data_dup(m, type->dtype, data, data_bytes);
    if (!v->data) return oom();
  } else if (data) {
    v->data = dml_ir_alloc(m, 1); /* empty tensor: non-NULL marks "has data" */
  }
  v->data_bytes = data ? data_bytes : 0;
  if (!v->name) return oom();
  m->globals[m->n_globals++] = v;
  if (out_value) *out_value = v;
  return DML_OK;
}

dml_ir_value_t *dml_ir_module_find_global(const dml_ir_module_t *m, const char *name) {
  for (uint32_t i = 0; i < m->n_globals; i++)
    if (strcmp(m->globals[i]->name, name) == 0) return m->globals[i];
  return NULL;
}

dml_status_t dml_ir_module_add_constant(dml_ir_module_t *m, const char *prefix,
                                        const dml_type_t *type, const void *data,
                                        size_t data_bytes, dml_ir_value_t **out_value) {
  char name[128];
  for (uint32_t k = m->n_globals;; k++) {
    snprintf(name, sizeof(name), "%s%u", prefix, k);
    if (!dml_ir_module_find_global(m, name)) break;
  }
  return dml_ir_module_add_global(m, name, type, data, data_bytes, 0, out_value);
}

void dml_ir_module_drop_unused_globals(dml_ir_module_t *m) {
  for (uint32_t i = 0; i < m->n_globals; i++) m->globals[i]->user = NULL;
  for (uint32_t fi = 0; fi < m->n_functions; fi++) {
    dml_ir_function_t *f = m->functions[fi];
    for (dml_ir_node_t *n = f->first; n; n = n->next)
      for (uint32_t i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] && n->inputs[i]->kind == DML_IR_VALUE_GLOBAL)
          n->inputs[i]->user = (void *)1;
    for (uint32_t i = 0; i < f->n_results; i++)
      if (f->results[i]->kind == DML_IR_VALUE_GLOBAL) f->results[i]->user = (void *)1;
  }
  uint32_t k = 0;
  for (uint32_t i = 0; i < m->n_globals; i++) {
    dml_ir_value_t *g = m->globals[i];
    /* Mutable state and parameters stay: a package carries them. */
    if (g->user || (g->global_flags & (DML_IR_GLOBAL_PARAM | DML_IR_GLOBAL_STATE)))
      m->globals[k++] = g;
    g->user = NULL;
  }
  m->n_globals = k;
}

/* ==== functions ========================================================= */

dml_status_t dml_ir_function_create(dml_ir_module_t *m, const char *name,
                                    dml_ir_function_t **out_func) {
  if (!name || !*name || dml_ir_module_find_function(m, name))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "ir",
                           "function name '%s' is empty or already used",
                           name ? name : "");
  if (!grow(m, (void ***)&m->functions, &m->cap_functions_, m->n_functions + 1,
            sizeof(dml_ir_function_t *)))
    return oom();
  dml_ir_function_t *f = (dml_ir_function_t *)dml_ir_alloc(m, sizeof(*f));
  if (!f) return oom();
  f->name = dml_ir_strdup(m, name);
  f->module = m;
  f->arena_bytes = -1;
  m->functions[m->n_functions++] = f;
  *out_func = f;
  return DML_OK;
}

dml_ir_function_t *dml_ir_module_find_function(const dml_ir_module_t *m,
                                               const char *name) {
  for (uint32_t i = 0; i < m->n_functions; i++)
    if (strcmp(m->functions[i]->name, name) == 0) return m->functions[i];
  return NULL;
}

dml_status_t dml_ir_function_add_arg(dml_ir_function_t *f, const char *name,
                                     const dml_type_t *type, dml_ir_value_t **out_value) {
  dml_ir_module_t *m = f->module;
  dml_ir_value_t **args =
      (dml_ir_value_t **)dml_ir_alloc(m, sizeof(dml_ir_value_t *) * (f->n_args + 1));
  dml_ir_value_t *v = new_value(m, DML_IR_VALUE_ARG);
  if (!args || !v) return oom();
  if (f->n_args) memcpy(args, f->args, sizeof(dml_ir_value_t *) * f->n_args);
  v->name = dml_ir_strdup(m, name);
  v->type = *type;
  v->func = f;
  args[f->n_args++] = v;
  f->args = args;
  if (out_value) *out_value = v;
  return DML_OK;
}

dml_status_t dml_ir_function_set_results(dml_ir_function_t *f, uint32_t n,
                                         dml_ir_value_t *const *values) {
  dml_ir_value_t **r = NULL;
  if (n) {
    r = (dml_ir_value_t **)dml_ir_memdup(f->module, values, sizeof(*values) * n);
    if (!r) return oom();
  }
  f->results = r;
  f->n_results = n;
  return DML_OK;
}

uint32_t dml_ir_value_num_uses(const dml_ir_function_t *f, const dml_ir_value_t *v) {
  uint32_t k = 0;
  for (const dml_ir_node_t *n = f->first; n; n = n->next)
    for (uint32_t i = 0; i < n->n_inputs; i++) k += n->inputs[i] == v;
  for (uint32_t i = 0; i < f->n_results; i++) k += f->results[i] == v;
  return k;
}

void dml_ir_value_replace_all_uses(dml_ir_function_t *f, dml_ir_value_t *from,
                                   dml_ir_value_t *to) {
  for (dml_ir_node_t *n = f->first; n; n = n->next)
    for (uint32_t i = 0; i < n->n_inputs; i++)
      if (n->inputs[i] == from) n->inputs[i] = to;
  for (uint32_t i = 0; i < f->n_results; i++)
    if (f->results[i] == from) f->results[i] = to;
}

uint32_t dml_ir_function_num_nodes(const dml_ir_function_t *f) {
  uint32_t k = 0;
  for (const dml_ir_node_t *n = f->first; n; n = n->next) k++;
  return k;
}

/* ==== nodes ============================================================= */

static void link_before(dml_ir_function_t *f, dml_ir_node_t *node,
                        dml_ir_node_t *before) {
  if (!before) {
    node->prev = f->last;
    node->next = NULL;
    if (f->last)
      f->last->next = node;
    else
      f->first = node;
    f->last = node;
  } else {
    node->next = before;
    node->prev = before->prev;
    if (before->prev)
      before->prev->next = node;
    else
      f->first = node;
    before->prev = node;
  }
}

static void unlink_node(dml_ir_node_t *node) {
  dml_ir_function_t *f = node->func;
  if (node->prev)
    node->prev->next = node->next;
  else
    f->first = node->next;
  if (node->next)
    node->next->prev = node->prev;
  else
    f->last = node->prev;
  node->prev = node->next = NULL;
}

dml_status_t dml_ir_node_create(dml_ir_function_t *f, dml_op_t op, const char *name,
                                uint32_t n_inputs, dml_ir_value_t *const *inputs,
                                uint32_t n_outputs, dml_ir_node_t *before,
                                dml_ir_node_t **out_node) {
  const dml_op_info_t *info = dml_op_info(op);
  if (!info)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "ir", "invalid op %d", (int)op);
  if ((int)n_inputs < info->min_inputs ||
      (info->max_inputs >= 0 && (int)n_inputs > info->max_inputs))
    return dml_status_detail(
        info->max_inputs < 0
            ? dml_status_make(DML_STATUS_INVALID_ARGUMENT, "ir",
                              "%s takes at least %d inputs, got %u", info->name,
                              info->min_inputs, n_inputs)
            : dml_status_make(DML_STATUS_INVALID_ARGUMENT, "ir",
                              "%s takes %d..%d inputs, got %u", info->name,
                              info->min_inputs, info->max_inputs, n_inputs),
        "node '%s'", name ? name : "");
  if ((int)n_outputs < info->min_outputs ||
      (info->max_outputs >= 0 && (int)n_outputs > info->max_outputs))
    return dml_status_detail(
        info->max_outputs < 0
            ? dml_status_make(DML_STATUS_INVALID_ARGUMENT, "ir",
                              "%s has at least %d outputs, got %u", info->name,
                              info->min_outputs, n_outputs)
            : dml_status_make(DML_STATUS_INVALID_ARGUMENT, "ir",
                              "%s has %d..%d outputs, got %u", info->name,
                              info->min_outputs, info->max_outputs, n_outputs),
        "node '%s'", name ? name : "");
  dml_ir_module_t *m = f->module;
  dml_ir_node_t *n = (dml_ir_node_t *)dml_ir_alloc(m, sizeof(*n));
  if (!n) return oom();
  n->op = op;
  n->name = dml_ir_strdup(m, name);
  n->func = f;
  n->n_inputs = n_inputs;
  n->inputs =
      (dml_ir_value_t **)dml_ir_alloc(m, sizeof(dml_ir_value_t *) * (n_inputs + 1));
  n->n_outputs = n_outputs;
  n->outputs =
      (dml_ir_value_t **)dml_ir_alloc(m, sizeof(dml_ir_value_t *) * (n_outputs + 1));
  if (!n->inputs || !n->outputs) return oom();
  for (uint32_t i = 0; i < n_inputs; i++) n->inputs[i] = inputs[i];
  for (uint32_t i = 0; i < n_outputs; i++) {
    dml_ir_value_t *v = new_value(m, DML_IR_VALUE_RESULT);
    if (!v) return oom();
    v->func = f;
    v->def = n;
    v->def_index = i;
    n->outputs[i] = v;
  }
  link_before(f, n, before);
  if (out_node) *out_node = n;
  return DML_OK;
}

void dml_ir_node_erase(dml_ir_node_t *node) {
  unlink_node(node);
}

void dml_ir_node_move_before(dml_ir_node_t *node, dml_ir_node_t *before) {
  if (node == before) return;
  dml_ir_function_t *f = node->func;
  unlink_node(node);
  link_before(f, node, before);
}

/* ---- attributes ---- */

static dml_attr_t *attr_slot(dml_ir_node_t *n, const char *name) {
  for (uint32_t i = 0; i < n->n_attrs; i++)
    if (strcmp(n->attrs[i].name, name) == 0) {
      memset(&n->attrs[i], 0, sizeof(dml_attr_t));
      n->attrs[i].name = dml_ir_strdup(n->func->module, name);
      return n->attrs[i].name ? &n->attrs[i] : NULL;
    }
  dml_ir_module_t *m = n->func->module;
  dml_attr_t *a = (dml_attr_t *)dml_ir_alloc(m, sizeof(dml_attr_t) * (n->n_attrs + 1));
  if (!a) return NULL;
  if (n->n_attrs) memcpy(a, n->attrs, sizeof(dml_attr_t) * n->n_attrs);
  n->attrs = a;
  dml_attr_t *s = &a[n->n_attrs++];
  s->name = dml_ir_strdup(m, name);
  return s->name ? s : NULL;
}

dml_status_t dml_ir_node_set_attr_int(dml_ir_node_t *n, const char *name, int64_t v) {
  dml_attr_t *a = attr_slot(n, name);
  if (!a) return oom();
  a->kind = DML_ATTR_INT;
  a->i = v;
  return DML_OK;
}

dml_status_t dml_ir_node_set_attr_float(dml_ir_node_t *n, const char *name, double v) {
  dml_attr_t *a = attr_slot(n, name);
  if (!a) return oom();
  a->kind = DML_ATTR_FLOAT;
  a->f = v;
  return DML_OK;
}

dml_status_t dml_ir_node_set_attr_string(dml_ir_node_t *n, const char *name,
                                         const char *v) {
  dml_attr_t *a = attr_slot(n, name);
  if (!a) return oom();
  a->kind = DML_ATTR_STRING;
  a->s = dml_ir_strdup(n->func->module, v ? v : "");
  return a->s ? DML_OK : oom();
}

dml_status_t dml_ir_node_set_attr_ints(dml_ir_node_t *n, const char *name,
                                       const int64_t *v, size_t count) {
  dml_attr_t *a = attr_slot(n, name);
  if (!a) return oom();
  a->kind = DML_ATTR_INTS;
  a->n = count;
  a->ints = count ? (const int64_t *)dml_ir_memdup(n->func->module, v, count * 8) : NULL;
  return count && !a->ints ? oom() : DML_OK;
}

dml_status_t dml_ir_node_set_attr_floats(dml_ir_node_t *n, const char *name,
                                         const double *v, size_t count) {
  dml_attr_t *a = attr_slot(n, name);
  if (!a) return oom();
  a->kind = DML_ATTR_FLOATS;
  a->n = count;
  a->floats = count ? (const double *)dml_ir_memdup(n->func->module, v, count * 8) : NULL;
  return count && !a->floats ? oom() : DML_OK;
}

dml_status_t dml_ir_node_set_attr_strings(dml_ir_node_t *n, const char *name,
                                          const char *const *v, size_t count) {
  dml_ir_module_t *m = n->func->module;
  const char **arr =
      count ? (const char **)dml_ir_alloc(m, sizeof(char *) * count) : NULL;
  if (count && !arr) return oom();
  for (size_t i = 0; i < count; i++) {
    arr[i] = dml_ir_strdup(m, v[i]);
    if (!arr[i]) return oom();
  }
  dml_attr_t *a = attr_slot(n, name);
  if (!a) return oom();
  a->kind = DML_ATTR_STRINGS;
  a->n = count;
  a->strings = arr;
  return DML_OK;
}

dml_status_t dml_ir_node_set_attr_tensor(dml_ir_node_t *n, const char *name,
                                         const dml_tensor_t *t) {
  size_t bytes = dml_tensor_bytes(t);
  if (bytes == SIZE_MAX || (bytes && !t->data))
    return dml_status_make(
        DML_STATUS_INVALID_ARGUMENT, "ir",
        "tensor attribute '%s' has an invalid shape or dtype, or no data", name);
  void *data =
      bytes ? dml_ir_tensor_data_dup(n->func->module, t->dtype, t->data, bytes) : NULL;
  if (bytes && !data) return oom();
  dml_attr_t *a = attr_slot(n, name);
  if (!a) return oom();
  a->kind = DML_ATTR_TENSOR;
  a->tensor = *t;
  a->tensor.data = data;
  return DML_OK;
}

dml_status_t dml_ir_node_set_attr(dml_ir_node_t *n, const dml_attr_t *a) {
  switch (a->kind) {
    case DML_ATTR_INT: return dml_ir_node_set_attr_int(n, a->name, a->i);
    case DML_ATTR_FLOAT: return dml_ir_node_set_attr_float(n, a->name, a->f);
    case DML_ATTR_STRING: return dml_ir_node_set_attr_string(n, a->name, a->s);
    case DML_ATTR_INTS: return dml_ir_node_set_attr_ints(n, a->name, a->ints, a->n);
    case DML_ATTR_FLOATS: return dml_ir_node_set_attr_floats(n, a->name, a->floats, a->n);
    case DML_ATTR_STRINGS:
      return dml_ir_node_set_attr_strings(n, a->name, a->strings, a->n);
    case DML_ATTR_TENSOR: return dml_ir_node_set_attr_tensor(n, a->name, &a->tensor);
  }
  return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "ir", "bad attribute kind %d",
                         (int)a->kind);
}

void dml_ir_node_remove_attr(dml_ir_node_t *n, const char *name) {
  for (uint32_t i = 0; i < n->n_attrs; i++)
    if (strcmp(n->attrs[i].name, name) == 0) {
      memmove(&n->attrs[i], &n->attrs[i + 1], sizeof(dml_attr_t) * (n->n_attrs - i - 1));
      n->n_attrs--;
      return;
    }
}

const dml_attr_t *dml_ir_node_attr(const dml_ir_node_t *n, const char *name) {
  return dml_attr_find(n->attrs, n->n_attrs, name);
}

/* ==== types ============================================================= */

dml_type_t dml_type_unknown(dml_dtype_t dt) {
  dml_type_t t;
  memset(&t, 0, sizeof(t));
  t.dtype = dt;
  t.rank = DML_RANK_UNKNOWN;
  return t;
}

dml_type_t dml_type_static(dml_dtype_t dt, int32_t rank, const int64_t *dims) {
  dml_type_t t;
  memset(&t, 0, sizeof(t));
  t.dtype = dt;
  t.rank = rank;
  for (int32_t i = 0; i < rank && i < DML_MAX_RANK; i++) {
    t.dims[i].value = dims[i];
    t.dims[i].sym = -1;
  }
  return t;
}

int dml_type_is_static(const dml_type_t *t) {
  if (t->rank < 0) return 0;
  for (int32_t i = 0; i < t->rank; i++)
    if (t->dims[i].sym >= 0) return 0;
  return 1;
}

int dml_type_equal(const dml_type_t *a, const dml_type_t *b) {
  if (a->dtype != b->dtype || a->rank != b->rank) return 0;
  for (int32_t i = 0; i < a->rank; i++)
    if (a->dims[i].value != b->dims[i].value || a->dims[i].sym != b->dims[i].sym)
      return 0;
  return 1;
}

int64_t dml_ir_type_numel_bound(const dml_ir_module_t *m, const dml_type_t *t) {
  if (t->rank < 0) return -1;
  int64_t n = 1;
  for (int32_t i = 0; i < t->rank; i++) {
    int64_t d = t->dims[i].value;
    if (t->dims[i].sym >= 0) {
      if ((uint32_t)t->dims[i].sym >= m->n_symbols) return -1;
      int64_t b = m->symbols[t->dims[i].sym].bound;
      if (d != 0 && b > INT64_MAX / d) return -1;
      d *= b;
    }
    if (d < 0) return -1;
    if (d != 0 && n > INT64_MAX / d) return -1;
    n *= d;
  }
  return n;
}

int64_t dml_ir_type_bytes_bound(const dml_ir_module_t *m, const dml_type_t *t) {
  int64_t n = dml_ir_type_numel_bound(m, t);
  int64_t es = (int64_t)dml_dtype_size(t->dtype);
  if (n < 0 || es == 0 || n > INT64_MAX / es) return -1;
  return n * es;
}

const char *dml_ir_type_str(const dml_ir_module_t *m, const dml_type_t *t, char *buf,
                            size_t cap) {
  size_t k = 0;
  if (!cap) return buf;
#define PUT(...)                                                       \
  do {                                                                 \
    if (k < cap) k += (size_t)snprintf(buf + k, cap - k, __VA_ARGS__); \
  } while (0)
  PUT("%s[", t->dtype == DML_DTYPE_INVALID ? "?" : dml_dtype_name(t->dtype));
  if (t->rank < 0) {
    PUT("?");
  } else {
    for (int32_t i = 0; i < t->rank; i++) {
      const dml_dim_t *d = &t->dims[i];
      if (i) PUT(",");
      if (d->sym < 0) {
        PUT("%lld", (long long)d->value);
      } else {
        const char *sn =
            m && (uint32_t)d->sym < m->n_symbols ? m->symbols[d->sym].name : "?";
        if (d->value == 1)
          PUT("%s", sn);
        else if (strpbrk(sn, "+-*/")) /* a derived symbol: 8*((S+1)/2) */
          PUT("%lld*(%s)", (long long)d->value, sn);
        else
          PUT("%lld*%s", (long long)d->value, sn);
      }
    }
  }
  PUT("]");
#undef PUT
  if (k >= cap) buf[cap - 1] = 0;
  return buf;
}
