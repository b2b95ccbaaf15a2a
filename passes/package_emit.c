/* package_emit.c — IR module -> .dmlpkg (meta, graph, weights sections).
 * The format is the runtime base's (dml_pkg.h); this file only maps the IR
 * onto it. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_package_emit.h"
#include "dml_pkg.h"
#include "dml_row_indep.h"

#define OP "pkg.emit"

static dml_status_t oom(void) {
  return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
}

/* ---- pointer -> index map (open addressing) ---- */

typedef struct ptrmap {
  const void **keys;
  uint32_t *vals;
  size_t cap; /* power of two */
} ptrmap_t;

static int map_init(ptrmap_t *p, size_t n) {
  p->cap = 16;
  while (p->cap < 2 * n + 1) p->cap *= 2;
  p->keys = (const void **)calloc(p->cap, sizeof(void *));
  p->vals = (uint32_t *)calloc(p->cap, sizeof(uint32_t));
  return p->keys && p->vals;
}
static void map_free(ptrmap_t *p) {
  free(p->keys);
  free(p->vals);
}
static size_t map_slot(const ptrmap_t *p, const void *k) {
  size_t h = (size_t)((uintptr_t)k >> 4) * 0x9E3779B97F4A7C15ull;
  size_t i = h & (p->cap - 1);
  while (p->keys[i] && p->keys[i] != k) i = (i + 1) & (p->cap - 1);
  return i;
}
/* Index of k, or UINT32_MAX. */
static uint32_t map_get(const ptrmap_t *p, const void *k) {
  size_t i = map_slot(p, k);
  return p->keys[i] ? p->vals[i] : UINT32_MAX;
}
static void map_put(ptrmap_t *p, const void *k, uint32_t v) {
  size_t i = map_slot(p, k);
  p->keys[i] = k;
  p->vals[i] = v;
}

/* ---- weights ---- */

typedef struct weights {
  uint8_t *data;
  size_t size;
  ptrmap_t offsets; /* global -> index into off[] */
  uint64_t *off;
  dml_pkg_strtab_t *strtabs; /* string constants ("strings" section) */
  uint32_t n_strtabs;
} weights_t;

static const char *vname(const dml_ir_value_t *v) {
  return v->name ? v->name : "";
}

/* Lays out every global that a function uses, 64-byte aligned. */
static dml_status_t build_weights(const dml_ir_module_t *m, weights_t *w) {
  memset(w, 0, sizeof(*w));
  if (!map_init(&w->offsets, m->n_globals)) return oom();
  w->off = (uint64_t *)calloc(m->n_globals ? m->n_globals : 1, sizeof(uint64_t));
  uint8_t *used = (uint8_t *)calloc(m->n_globals ? m->n_globals : 1, 1);
  dml_status_t st = DML_OK;
  if (!w->off || !used) {
    st = oom();
    goto done;
  }
  for (uint32_t i = 0; i < m->n_globals; i++) map_put(&w->offsets, m->globals[i], i);
  for (uint32_t fi = 0; fi < m->n_functions; fi++) {
    const dml_ir_function_t *f = m->functions[fi];
    for (const dml_ir_node_t *n = f->first; n; n = n->next)
      for (uint32_t j = 0; j < n->n_inputs; j++)
        if (n->inputs[j] && n->inputs[j]->kind == DML_IR_VALUE_GLOBAL)
          used[map_get(&w->offsets, n->inputs[j])] = 1;
    for (uint32_t j = 0; j < f->n_results; j++)
      if (f->results[j]->kind == DML_IR_VALUE_GLOBAL)
        used[map_get(&w->offsets, f->results[j])] = 1;
  }
  uint64_t pos = 0;
  for (uint32_t i = 0; i < m->n_globals; i++) {
    if (!used[i]) continue;
    const dml_ir_value_t *g = m->globals[i];
    int64_t nb = dml_ir_type_bytes_bound(m, &g->type);
    if (g->type.rank < 0 || !dml_type_is_static(&g->type) || nb < 0) {
      char tb[128];
      st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "global '%s' has type %s; weights need a static shape",
                           vname(g), dml_ir_type_str(m, &g->type, tb, sizeof tb));
      goto done;
    }
    if (g->data && g->data_bytes != (size_t)nb) {
      st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "global '%s' holds %zu bytes of data; its type needs %" PRId64,
                           vname(g), g->data_bytes, nb);
      goto done;
    }
    pos = (pos + DML_PKG_WEIGHT_ALIGNMENT - 1) / DML_PKG_WEIGHT_ALIGNMENT *
          DML_PKG_WEIGHT_ALIGNMENT;
    w->off[i] = pos;
    pos += (uint64_t)nb;
    if (pos > SIZE_MAX / 2) {
      st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "weights too large");
      goto done;
    }
  }
  w->size = (size_t)pos;
  w->data = (uint8_t *)calloc(w->size ? w->size : 1, 1);
  if (!w->data) {
    st = oom();
    goto done;
  }
  for (uint32_t i = 0; i < m->n_globals; i++) {
    if (!used[i] || !m->globals[i]->data) continue;
    if (m->globals[i]->type.dtype == DML_DTYPE_STRING) {
      /* the elements go to the "strings" section; these bytes stay zero */
      w->n_strtabs++;
      continue;
    }
    memcpy(w->data + w->off[i], m->globals[i]->data, m->globals[i]->data_bytes);
  }
  if (w->n_strtabs) {
    w->strtabs = (dml_pkg_strtab_t *)calloc(w->n_strtabs, sizeof(dml_pkg_strtab_t));
    if (!w->strtabs) {
      st = oom();
      goto done;
    }
    uint32_t k = 0; /* globals are laid out in order: offsets increase */
    for (uint32_t i = 0; i < m->n_globals; i++) {
      const dml_ir_value_t *g = m->globals[i];
      if (!used[i] || !g->data || g->type.dtype != DML_DTYPE_STRING) continue;
      w->strtabs[k].weights_offset = w->off[i];
      w->strtabs[k].count = g->data_bytes / sizeof(dml_str_t);
      w->strtabs[k].elems = (dml_str_t *)g->data;
      k++;
    }
  }
done:
  free(used);
  return st;
}

static void weights_free(weights_t *w) {
  free(w->strtabs); /* the descriptors are the module's */
  free(w->data);
  free(w->off);
  map_free(&w->offsets);
}

/* ---- functions ---- */

typedef struct fn_build {
  dml_pkg_value_t *values;
  uint32_t n_values;
  dml_pkg_node_t *nodes;
  uint32_t *idx; /* node inputs/outputs, function inputs/outputs */
  ptrmap_t map;
  char (*io_names)[24];   /* "input0", "output1" for unnamed inputs/outputs */
  char (*copy_names)[80]; /* names of repeated outputs' copies */
} fn_build_t;

/* Alignment of the arena bytes the emitter adds for a repeated constant
 * output (mem_plan.c's DML_MEM_ALIGN). */
#define EMIT_ALIGN 64u

static void fn_free(fn_build_t *b) {
  free(b->values);
  free(b->nodes);
  free(b->idx);
  free(b->io_names);
  free(b->copy_names);
  map_free(&b->map);
}

/* Index of IR value v in the package function, adding it on first sight. */
static dml_status_t value_index(const dml_ir_module_t *m, const weights_t *w,
                                fn_build_t *b, const dml_ir_function_t *f,
                                const dml_ir_value_t *v, uint32_t *out) {
  uint32_t i = map_get(&b->map, v);
  if (i != UINT32_MAX) {
    *out = i;
    return DML_OK;
  }
  char tb[128];
  if (v->type.rank < 0 || dml_dtype_size(v->type.dtype) == 0)
    return dml_status_make(
        DML_STATUS_FAILED_PRECONDITION, OP,
        "function '%s': value '%s' has unknown type %s; run shape-infer", f->name,
        vname(v), dml_ir_type_str(m, &v->type, tb, sizeof tb));
  dml_pkg_value_t *pv = &b->values[b->n_values];
  memset(pv, 0, sizeof(*pv));
  pv->name = vname(v);
  pv->type = v->type;
  if (v->kind == DML_IR_VALUE_GLOBAL) {
    uint32_t gi = map_get(&w->offsets, v);
    if (gi == UINT32_MAX)
      return dml_status_make(DML_STATUS_INTERNAL, OP, "global '%s' not in the module",
                             vname(v));
    pv->storage = DML_PKG_STORAGE_CONST;
    pv->offset = w->off[gi];
    pv->bytes = (uint64_t)dml_ir_type_bytes_bound(m, &v->type);
    if (v->global_flags & DML_IR_GLOBAL_PARAM) pv->flags |= DML_PKG_VALUE_PARAM;
    if (v->global_flags & DML_IR_GLOBAL_STATE) pv->flags |= DML_PKG_VALUE_STATE;
  } else {
    if (v->mem_offset < 0 || v->mem_bytes < 0)
      return dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                             "function '%s': value '%s' (%s) has no memory plan; run the "
                             "mem-plan pass",
                             f->name, vname(v),
                             dml_ir_type_str(m, &v->type, tb, sizeof tb));
    pv->storage =
        v->kind == DML_IR_VALUE_ARG ? DML_PKG_STORAGE_INPUT : DML_PKG_STORAGE_ARENA;
    pv->offset = (uint64_t)v->mem_offset;
    pv->bytes = (uint64_t)v->mem_bytes;
  }
  map_put(&b->map, v, b->n_values);
  *out = b->n_values++;
  return DML_OK;
}

static dml_status_t build_function(const dml_ir_module_t *m, const weights_t *w,
                                   const dml_ir_function_t *f, fn_build_t *b,
                                   dml_pkg_function_t *out) {
  memset(b, 0, sizeof(*b));
  if (f->arena_bytes < 0)
    return dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                           "function '%s' has no memory plan; run the mem-plan pass",
                           f->name);
  size_t n_nodes = 0, n_refs = (size_t)f->n_args + 3 * (size_t)f->n_results;
  for (const dml_ir_node_t *n = f->first; n; n = n->next) {
    if (dml_op_info(n->op)->flags & DML_OPF_COMPILE_ONLY)
      return dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                             "node '%s' (%s) in function '%s' is compile-only; run its "
                             "lowering pass (expand-gradient) before emitting",
                             n->name ? n->name : "", dml_op_name(n->op), f->name);
    n_nodes++;
    n_refs += (size_t)n->n_inputs + n->n_outputs;
  }
  /* room for one Identity copy per repeated result (below) */
  size_t cap_nodes = n_nodes + f->n_results;
  b->values = (dml_pkg_value_t *)calloc(n_refs ? n_refs : 1, sizeof(dml_pkg_value_t));
  b->nodes = (dml_pkg_node_t *)calloc(cap_nodes ? cap_nodes : 1, sizeof(dml_pkg_node_t));
  b->idx = (uint32_t *)calloc(n_refs ? n_refs : 1, sizeof(uint32_t));
  if (!b->values || !b->nodes || !b->idx || !map_init(&b->map, n_refs)) return oom();
  uint32_t *idx = b->idx;
  out->name = f->name;
  out->arena_bytes = (uint64_t)f->arena_bytes;
  out->inputs = idx;
  out->n_inputs = f->n_args;
  for (uint32_t j = 0; j < f->n_args; j++)
    DML_RETURN_IF_ERROR(value_index(m, w, b, f, f->args[j], idx++));
  uint32_t k = 0;
  for (const dml_ir_node_t *n = f->first; n; n = n->next, k++) {
    dml_pkg_node_t *pn = &b->nodes[k];
    pn->op = n->op;
    pn->op_name = dml_op_name(n->op);
    pn->name = n->name ? n->name : "";
    pn->n_inputs = n->n_inputs;
    pn->inputs = idx;
    for (uint32_t j = 0; j < n->n_inputs; j++) {
      if (!n->inputs[j])
        *idx = DML_PKG_NO_VALUE;
      else
        DML_RETURN_IF_ERROR(value_index(m, w, b, f, n->inputs[j], idx));
      idx++;
    }
    pn->n_outputs = n->n_outputs;
    pn->outputs = idx;
    for (uint32_t j = 0; j < n->n_outputs; j++)
      DML_RETURN_IF_ERROR(value_index(m, w, b, f, n->outputs[j], idx++));
    pn->n_attrs = n->n_attrs;
    pn->attrs = n->attrs;
  }
  /* Outputs are bound and written by name, so a value returned more than
   * once (autodiff gives Add's operands one gradient; a function may return
   * an argument twice) is returned, at each repeat, as the result of an
   * Identity node at the end named "<name>.<position>": in place (a view of
   * the value's bytes, which stay live to the end) for arena and input
   * values, in new bytes after the planned arena for constants. */
  uint32_t *res = idx;
  for (uint32_t j = 0; j < f->n_results; j++)
    DML_RETURN_IF_ERROR(value_index(m, w, b, f, f->results[j], idx++));
  uint64_t arena = out->arena_bytes;
  for (uint32_t j = 0; j < f->n_results; j++) {
    int seen = 0;
    for (uint32_t q = 0; q < j && !seen; q++) seen = res[q] == res[j];
    if (!seen) continue;
    if (!b->copy_names) {
      b->copy_names = calloc(f->n_results, sizeof(*b->copy_names));
      if (!b->copy_names) return oom();
    }
    const dml_pkg_value_t *src = &b->values[res[j]];
    dml_pkg_value_t *pv = &b->values[b->n_values];
    memset(pv, 0, sizeof(*pv));
    snprintf(b->copy_names[j], sizeof b->copy_names[j], "%s.%" PRIu32,
             *src->name ? src->name : "output", j);
    pv->name = b->copy_names[j];
    pv->type = src->type;
    pv->storage = DML_PKG_STORAGE_ARENA;
    pv->bytes = src->bytes;
    if (src->storage == DML_PKG_STORAGE_CONST) {
      arena = (arena + EMIT_ALIGN - 1) / EMIT_ALIGN * EMIT_ALIGN;
      pv->offset = arena;
      arena += src->bytes;
    } else {
      pv->offset = src->offset; /* Identity in place: a view, no copy */
    }
    dml_pkg_node_t *pn = &b->nodes[n_nodes++];
    pn->op = DML_OP_IDENTITY;
    pn->op_name = dml_op_name(DML_OP_IDENTITY);
    pn->name = pv->name;
    pn->n_inputs = 1;
    pn->inputs = idx;
    *idx++ = res[j];
    pn->n_outputs = 1;
    pn->outputs = idx;
    *idx++ = b->n_values;
    res[j] = b->n_values++;
  }
  out->arena_bytes = arena;
  out->outputs = res;
  out->n_outputs = f->n_results;
  /* Inputs and outputs need names (bound by name, written to files). */
  b->io_names = calloc((size_t)f->n_args + f->n_results + 1, sizeof(*b->io_names));
  if (!b->io_names) return oom();
  for (uint32_t j = 0; j < f->n_args + f->n_results; j++) {
    int is_in = j < f->n_args;
    dml_pkg_value_t *pv =
        &b->values[is_in ? out->inputs[j] : out->outputs[j - f->n_args]];
    if (*pv->name) continue;
    snprintf(b->io_names[j], sizeof b->io_names[j], "%s%" PRIu32,
             is_in ? "input" : "output", is_in ? j : j - f->n_args);
    pv->name = b->io_names[j];
  }
  out->values = b->values;
  out->n_values = b->n_values;
  out->nodes = b->nodes;
  out->n_nodes = (uint32_t)n_nodes;
  return DML_OK;
}

/* ---- meta ---- */

/* Appends "key: value\n" with newlines in value turned into spaces. */
static void meta_line(char **buf, size_t *len, size_t *cap, const char *key,
                      const char *val) {
  if (!*buf && *cap) return; /* an earlier allocation failed */
  size_t need = strlen(key) + 2 + strlen(val) + 1;
  if (*len + need + 1 > *cap) {
    size_t nc = (*cap ? *cap : 256);
    while (nc < *len + need + 1) nc *= 2;
    char *nb = (char *)realloc(*buf, nc);
    if (!nb) {
      free(*buf);
      *buf = NULL;
      *cap = 1;
      return;
    }
    *buf = nb;
    *cap = nc;
  }
  char *p = *buf + *len;
  p += sprintf(p, "%s: ", key);
  for (const char *s = val; *s; s++) *p++ = (*s == '\n' || *s == '\r') ? ' ' : *s;
  *p++ = '\n';
  *p = 0;
  *len = (size_t)(p - *buf);
}

static char *build_meta(const dml_ir_module_t *m, const dml_package_emit_options_t *o,
                        size_t *out_len) {
  char *buf = NULL, tmp[64];
  size_t len = 0, cap = 0;
  meta_line(&buf, &len, &cap, "producer", "dmlc 0.1.0");
  if (o && o->source_name) meta_line(&buf, &len, &cap, "source", o->source_name);
  meta_line(&buf, &len, &cap, "targets", o && o->targets ? o->targets : "cpu");
  if (o && o->batch_bound > 0) {
    snprintf(tmp, sizeof tmp, "%" PRId64, o->batch_bound);
    meta_line(&buf, &len, &cap, "batch-bound", tmp);
  }
  if (m->n_symbols) {
    char line[1024];
    size_t k = 0;
    line[0] = 0;
    for (uint32_t i = 0; i < m->n_symbols && k < sizeof line; i++)
      k += (size_t)snprintf(line + k, sizeof line - k, "%s%s<=%" PRId64, i ? ", " : "",
                            m->symbols[i].name, m->symbols[i].bound);
    meta_line(&buf, &len, &cap, "symbols", line);
  }
  if (o && o->command_line) meta_line(&buf, &len, &cap, "created-by", o->command_line);
  /* Whether `dmlc run` may run rows beyond the bound in chunks
   * (dml_row_indep.h): forward's verdict, else the first function's. */
  const dml_ir_function_t *fwd = m->n_functions ? m->functions[0] : NULL;
  for (uint32_t i = 0; i < m->n_functions; i++)
    if (m->functions[i]->name && !strcmp(m->functions[i]->name, "forward"))
      fwd = m->functions[i];
  if (fwd) {
    char why[320];
    int ok = dml_row_indep_analyze(fwd, why, sizeof why);
    meta_line(&buf, &len, &cap, "rows-independent", ok ? "1" : "0");
    if (!ok) meta_line(&buf, &len, &cap, "rows-mixed-by", why);
  }
  *out_len = len;
  return buf;
}

/* ---- data-dependent symbols ---- */

/* Sets a data-dependent symbol's producer: the first node, in execution
 * order, with an output that uses it (that dim must be exactly 1 * symbol).
 * A symbol no function uses stays an INPUT symbol (nothing reads it). */
static dml_status_t find_producer(const dml_ir_module_t *m, uint32_t sym,
                                  dml_pkg_symbol_t *out) {
  for (uint32_t fi = 0; fi < m->n_functions; fi++) {
    uint32_t k = 0;
    for (const dml_ir_node_t *n = m->functions[fi]->first; n; n = n->next, k++)
      for (uint32_t j = 0; j < n->n_outputs; j++) {
        const dml_type_t *t = &n->outputs[j]->type;
        for (int32_t d = 0; d < t->rank; d++) {
          if (t->dims[d].sym != (int32_t)sym) continue;
          if (t->dims[d].value != 1)
            return dml_status_make(
                DML_STATUS_UNIMPLEMENTED, OP,
                "data-dependent symbol '%s' first appears as %lld*%s in output %" PRIu32
                " of node '%s' (%s); its producer's dim must be the symbol itself",
                m->symbols[sym].name, (long long)t->dims[d].value, m->symbols[sym].name,
                j, n->name ? n->name : "", dml_op_name(n->op));
          out->origin = DML_PKG_SYMBOL_NODE;
          out->function = fi;
          out->node = k;
          out->output = j;
          out->dim = (uint32_t)d;
          return DML_OK;
        }
      }
  }
  return DML_OK;
}

/* ---- driver ---- */

typedef dml_status_t (*finish_fn)(dml_pkg_writer_t *w, void *ctx);

/* *hook_failed is set when the error is add_sections' (not annotated). */
static dml_status_t emit(const dml_ir_module_t *m, const dml_package_emit_options_t *o,
                         finish_fn finish, void *ctx, int *hook_failed) {
  weights_t w;
  dml_status_t st = build_weights(m, &w);
  uint32_t nf = m->n_functions;
  fn_build_t *fb = (fn_build_t *)calloc(nf ? nf : 1, sizeof(fn_build_t));
  dml_pkg_function_t *fns = (dml_pkg_function_t *)calloc(nf ? nf : 1, sizeof(*fns));
  dml_pkg_symbol_t *syms =
      (dml_pkg_symbol_t *)calloc(m->n_symbols ? m->n_symbols : 1, sizeof(*syms));
  void *graph = NULL;
  uint8_t *strings = NULL;
  size_t graph_size = 0, meta_len = 0, strings_size = 0;
  char *meta = NULL;
  dml_pkg_writer_t *wr = NULL;
  dml_pkg_graph_t *check = NULL; /* the graph as the runtime reads it */
  if (!st && (!fb || !fns || !syms)) st = oom();
  if (!st && nf == 0)
    st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "the module has no functions");
  for (uint32_t i = 0; i < nf && !st; i++)
    st = build_function(m, &w, m->functions[i], &fb[i], &fns[i]);
  if (st) goto cleanup;
  for (uint32_t i = 0; i < m->n_symbols && !st; i++) {
    syms[i].name = m->symbols[i].name;
    syms[i].bound = m->symbols[i].bound;
    if (m->symbols[i].flags & DML_IR_SYMBOL_DATA_DEPENDENT)
      st = find_producer(m, i, &syms[i]);
    if (m->symbols[i].flags & DML_IR_SYMBOL_DERIVED) {
      syms[i].origin = DML_PKG_SYMBOL_DERIVED;
      syms[i].src[0] = m->symbols[i].src[0];
      syms[i].src[1] = m->symbols[i].src[1];
      syms[i].mul = m->symbols[i].mul;
      syms[i].add = m->symbols[i].add;
      syms[i].div = m->symbols[i].div;
    }
  }
  if (st) goto cleanup;
  dml_pkg_graph_t g = {m->n_symbols, syms, nf, fns, NULL};
  st = dml_pkg_graph_encode(&g, &graph, &graph_size);
  if (st) goto cleanup;
  /* Never write a package the runtime would refuse. */
  st = dml_pkg_graph_decode(graph, graph_size, w.size, &check);
  if (st) {
    st = dml_status_annotate(st, "checking the package before writing it");
    goto cleanup;
  }
  meta = build_meta(m, o, &meta_len);
  if (!meta) {
    st = oom();
    goto cleanup;
  }
  st = dml_pkg_writer_create(&wr);
  if (!st) st = dml_pkg_writer_add_section(wr, "meta", meta, meta_len, 8);
  if (!st) st = dml_pkg_writer_add_section(wr, "graph", graph, graph_size, 8);
  if (!st)
    st = dml_pkg_writer_add_section(wr, "weights", w.data, w.size,
                                    DML_PKG_WEIGHTS_ALIGNMENT);
  if (!st && w.n_strtabs) {
    st = dml_pkg_strings_encode(w.strtabs, w.n_strtabs, &strings, &strings_size);
    if (!st) st = dml_pkg_writer_add_section(wr, "strings", strings, strings_size, 8);
  }
  if (!st && o && o->add_sections) {
    /* the graph built from the IR (the one `check` decoded from its bytes
     * and found valid): codegen reads no package bytes parsed back */
    st = o->add_sections(o->add_sections_ctx, &g, w.data, w.size, wr);
    *hook_failed = st != DML_OK;
  }
  if (!st) st = finish(wr, ctx);
cleanup:
  dml_pkg_graph_release(check);
  dml_pkg_writer_release(wr);
  free(strings);
  free(meta);
  free(graph);
  for (uint32_t i = 0; fb && i < nf; i++) fn_free(&fb[i]);
  free(fb);
  free(fns);
  free(syms);
  weights_free(&w);
  return st;
}

static dml_status_t finish_file(dml_pkg_writer_t *w, void *ctx) {
  return dml_pkg_writer_finish_file(w, (const char *)ctx);
}

typedef struct mem_out {
  void **bytes;
  size_t *size;
} mem_out_t;

static dml_status_t finish_memory(dml_pkg_writer_t *w, void *ctx) {
  mem_out_t *mo = (mem_out_t *)ctx;
  return dml_pkg_writer_finish_memory(w, mo->bytes, mo->size);
}

dml_status_t dml_package_emit(const dml_ir_module_t *m,
                              const dml_package_emit_options_t *o, const char *path) {
  int hook_failed = 0;
  dml_status_t st = emit(m, o, finish_file, (void *)path, &hook_failed);
  return hook_failed ? st : dml_status_annotate(st, "writing package '%s'", path);
}

dml_status_t dml_package_emit_memory(const dml_ir_module_t *m,
                                     const dml_package_emit_options_t *o,
                                     void **out_bytes, size_t *out_size) {
  mem_out_t mo = {out_bytes, out_size};
  int hook_failed = 0;
  return emit(m, o, finish_memory, &mo, &hook_failed);
}
