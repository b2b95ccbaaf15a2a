/* rt_model.c — loading a package into an immutable model, and the model's
 * accessors (inputs/outputs, nodes, sections, meta). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_cpu.h"
#include "rt_internal.h"

#define OP "rt.load"

static dml_status_t oom(void) {
  return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
}

static int host_is_little_endian(void) {
  const uint16_t one = 1;
  return *(const uint8_t *)&one == 1;
}

/* Symbol values at their bounds, for sizing. */
static int64_t *bound_values(const dml_pkg_graph_t *g) {
  int64_t *v = (int64_t *)malloc((g->n_symbols ? g->n_symbols : 1) * sizeof(int64_t));
  if (v)
    for (uint32_t i = 0; i < g->n_symbols; i++) v[i] = g->symbols[i].bound;
  return v;
}

/* Max over nodes of dml_cpu_scratch_bytes() at the bounds (ops without a CPU
 * kernel are skipped: session_create reports them). */
static dml_status_t compute_scratch(dml_rt_model_t *m, const dml_pkg_function_t *f,
                                    int64_t *out_bytes) {
  uint32_t max_io = 1;
  for (uint32_t k = 0; k < f->n_nodes; k++) {
    uint32_t n = f->nodes[k].n_inputs + f->nodes[k].n_outputs;
    if (n > max_io) max_io = n;
  }
  dml_tensor_t *t = (dml_tensor_t *)calloc(max_io, sizeof(dml_tensor_t));
  int64_t *syms = bound_values(m->graph);
  dml_status_t st = DML_OK;
  if (!t || !syms) {
    st = oom();
    goto done;
  }
  size_t best = 0;
  for (uint32_t k = 0; k < f->n_nodes && !st; k++) {
    const dml_pkg_node_t *n = &f->nodes[k];
    if (!dml_cpu_supports(n->op)) continue;
    for (uint32_t j = 0; j < n->n_inputs + n->n_outputs; j++) {
      uint32_t vi = j < n->n_inputs ? n->inputs[j] : n->outputs[j - n->n_inputs];
      memset(&t[j], 0, sizeof t[j]);
      if (vi == DML_PKG_NO_VALUE) continue;
      const dml_pkg_value_t *v = &f->values[vi];
      t[j].dtype = v->type.dtype;
      t[j].rank = v->type.rank;
      st = dml_type_eval_dims(&v->type, syms, m->graph->n_symbols, t[j].dims);
      if (st) break;
      if (v->storage == DML_PKG_STORAGE_CONST)
        t[j].data = v->type.dtype == DML_DTYPE_STRING
                        ? (void *)dml_rt_model_string_const(m, v)
                        : (void *)(m->weights + v->offset);
    }
    if (st) break;
    dml_cpu_call_t call;
    memset(&call, 0, sizeof call);
    call.op = n->op;
    call.node_name = n->name;
    call.inputs = t;
    call.n_inputs = n->n_inputs;
    call.outputs = t + n->n_inputs;
    call.n_outputs = n->n_outputs;
    call.attrs = n->attrs;
    call.n_attrs = n->n_attrs;
    size_t need = dml_cpu_scratch_bytes(&call);
    if (need == SIZE_MAX || need > (size_t)INT64_MAX)
      st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP,
                           "node '%s' (%s): scratch size at the bounds overflows",
                           n->name, n->op_name);
    else if (need > best)
      best = need;
  }
  *out_bytes = (int64_t)best;
done:
  free(t);
  free(syms);
  return st;
}

/* The "strings" section (string constants): decoded, and every CONST
 * string value of every function must have its table (same weights offset,
 * one string per element); a string value is never a global. */
static dml_status_t load_strings(dml_rt_model_t *m) {
  const dml_pkg_section_t *ss = dml_pkg_find_section(&m->pkg, "strings");
  if (ss) {
    dml_status_t st =
        dml_pkg_strings_decode(ss->data, (size_t)ss->size, &m->strtabs, &m->n_strtabs);
    if (st)
      return dml_status_detail(st, "section 'strings' starts at file offset %" PRIu64,
                               ss->offset);
  }
  const dml_pkg_graph_t *g = m->graph;
  for (uint32_t f = 0; f < g->n_functions; f++)
    for (uint32_t i = 0; i < g->functions[f].n_values; i++) {
      const dml_pkg_value_t *v = &g->functions[f].values[i];
      if (v->type.dtype != DML_DTYPE_STRING) continue;
      if (v->flags & (DML_PKG_VALUE_PARAM | DML_PKG_VALUE_STATE))
        return dml_status_make(DML_STATUS_DATA_LOSS, OP,
                               "function '%s': string value '%s' is flagged a parameter "
                               "or state",
                               g->functions[f].name, v->name);
      if (v->storage != DML_PKG_STORAGE_CONST) continue;
      const dml_pkg_strtab_t *t =
          dml_pkg_strings_find(m->strtabs, m->n_strtabs, v->offset);
      if (!t || t->count != v->bytes / sizeof(dml_str_t))
        return dml_status_make(
            DML_STATUS_DATA_LOSS, OP,
            "function '%s': string constant '%s' (weights offset %" PRIu64
            ") has no matching table in section 'strings'",
            g->functions[f].name, v->name, v->offset);
    }
  return DML_OK;
}

const dml_str_t *dml_rt_model_string_const(const dml_rt_model_t *m,
                                           const dml_pkg_value_t *v) {
  const dml_pkg_strtab_t *t = dml_pkg_strings_find(m->strtabs, m->n_strtabs, v->offset);
  return t ? t->elems : NULL;
}

static dml_status_t check_meta(const dml_pkg_section_t *s, char **out) {
  if (s && memchr(s->data, 0, (size_t)s->size))
    return dml_status_make(DML_STATUS_DATA_LOSS, OP,
                           "section 'meta' (file offset %" PRIu64 ") holds a NUL byte",
                           s->offset);
  size_t n = s ? (size_t)s->size : 0;
  char *t = (char *)malloc(n + 1);
  if (!t) return oom();
  if (n) memcpy(t, s->data, n);
  t[n] = 0;
  *out = t;
  return DML_OK;
}

static int cmp_global(const void *a, const void *b) {
  return strcmp(((const dml_rt_global_t *)a)->name, ((const dml_rt_global_t *)b)->name);
}

/* The globals: CONST values flagged PARAM or STATE, one per "weights"
 * offset across functions (same name and type at the same offset; a value
 * of zero bytes holds no storage, so it shares its offset with the next
 * value and is told apart by its name); and the
 * Assign nodes' operands: a global target and a value of its static type. */
static dml_status_t collect_globals(dml_rt_model_t *m) {
  const dml_pkg_graph_t *g = m->graph;
  size_t cap = 0;
  for (uint32_t fi = 0; fi < g->n_functions; fi++) cap += g->functions[fi].n_values;
  m->globals = (dml_rt_global_t *)calloc(cap ? cap : 1, sizeof(dml_rt_global_t));
  if (!m->globals) return oom();
  for (uint32_t fi = 0; fi < g->n_functions; fi++) {
    const dml_pkg_function_t *f = &g->functions[fi];
    for (uint32_t i = 0; i < f->n_values; i++) {
      const dml_pkg_value_t *v = &f->values[i];
      if (v->storage != DML_PKG_STORAGE_CONST ||
          !(v->flags & (DML_PKG_VALUE_PARAM | DML_PKG_VALUE_STATE)))
        continue;
      uint32_t k = 0;
      while (k < m->n_globals && (m->globals[k].offset != v->offset ||
                                  ((v->bytes == 0 || m->globals[k].bytes == 0) &&
                                   strcmp(m->globals[k].name, v->name) != 0)))
        k++;
      if (k == m->n_globals) {
        m->globals[k].name = v->name;
        m->globals[k].value = v;
        m->globals[k].offset = v->offset;
        m->globals[k].bytes = v->bytes;
        m->n_globals++;
        continue;
      }
      const dml_pkg_value_t *o = m->globals[k].value;
      if (strcmp(o->name, v->name) != 0 || o->flags != v->flags ||
          o->type.dtype != v->type.dtype || o->type.rank != v->type.rank ||
          memcmp(o->type.dims, v->type.dims, sizeof(dml_dim_t) * (size_t)v->type.rank))
        return dml_status_make(DML_STATUS_DATA_LOSS, OP,
                               "function '%s': global value '%s' at weights offset "
                               "%" PRIu64 " differs from '%s' at the same offset",
                               f->name, v->name, v->offset, o->name);
    }
  }
  qsort(m->globals, m->n_globals, sizeof(dml_rt_global_t), cmp_global);
  for (uint32_t k = 1; k < m->n_globals; k++)
    if (strcmp(m->globals[k - 1].name, m->globals[k].name) == 0)
      return dml_status_make(
          DML_STATUS_DATA_LOSS, OP,
          "two globals are named '%s' (weights offsets %" PRIu64 " and %" PRIu64 ")",
          m->globals[k].name, m->globals[k - 1].offset, m->globals[k].offset);
  for (uint32_t fi = 0; fi < g->n_functions; fi++) {
    const dml_pkg_function_t *f = &g->functions[fi];
    for (uint32_t i = 0; i < f->n_nodes; i++) {
      const dml_pkg_node_t *n = &f->nodes[i];
      if (n->op != DML_OP_ASSIGN) continue;
      m->has_assign = 1;
      const dml_pkg_value_t *t =
          n->inputs[0] == DML_PKG_NO_VALUE ? NULL : &f->values[n->inputs[0]];
      const dml_pkg_value_t *v =
          n->inputs[1] == DML_PKG_NO_VALUE ? NULL : &f->values[n->inputs[1]];
      int ok = t && v && t->storage == DML_PKG_STORAGE_CONST &&
               (t->flags & (DML_PKG_VALUE_PARAM | DML_PKG_VALUE_STATE)) &&
               t->type.dtype == v->type.dtype && t->type.rank == v->type.rank;
      for (int32_t d = 0; ok && d < v->type.rank; d++)
        ok = v->type.dims[d].sym < 0 && v->type.dims[d].value == t->type.dims[d].value;
      if (!ok)
        return dml_status_make(DML_STATUS_DATA_LOSS, OP,
                               "function '%s', node #%" PRIu32
                               " '%s' (Assign): the target must be a parameter or state "
                               "and the value of its dtype and static shape",
                               f->name, i, n->name);
    }
  }
  return DML_OK;
}

/* Everything after the bytes are in memory (m->file or m->copy set). */
static dml_status_t load_bytes(dml_rt_model_t *m, const uint8_t *bytes, size_t size) {
  if (!host_is_little_endian())
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                           "packages are little-endian; this host is big-endian");
  DML_RETURN_IF_ERROR(dml_pkg_parse(bytes, size, &m->pkg));
  const dml_pkg_section_t *graph = dml_pkg_find_section(&m->pkg, "graph");
  const dml_pkg_section_t *weights = dml_pkg_find_section(&m->pkg, "weights");
  if (!graph)
    return dml_status_make(DML_STATUS_DATA_LOSS, OP,
                           "the package has no 'graph' section");
  if (weights) {
    if (weights->alignment < DML_PKG_WEIGHT_ALIGNMENT)
      return dml_status_make(DML_STATUS_DATA_LOSS, OP,
                             "section 'weights' is %" PRIu32
                             "-byte aligned; at least %u is "
                             "required",
                             weights->alignment, DML_PKG_WEIGHT_ALIGNMENT);
    m->weights = weights->data;
    m->weights_size = weights->size;
  }
  DML_RETURN_IF_ERROR(check_meta(dml_pkg_find_section(&m->pkg, "meta"), &m->meta));
  dml_status_t st =
      dml_pkg_graph_decode_version(graph->data, (size_t)graph->size,
                                   m->pkg.format_version, m->weights_size, &m->graph);
  if (st)
    return dml_status_detail(
        st, "section 'graph' starts at file offset %" PRIu64 " (%" PRIu64 " bytes)",
        graph->offset, graph->size);
  const dml_pkg_graph_t *g = m->graph;
  if (g->n_functions == 0)
    return dml_status_make(DML_STATUS_DATA_LOSS, OP, "the package has no functions");
  DML_RETURN_IF_ERROR(load_strings(m));
  m->fn = &g->functions[0];
  for (uint32_t i = 0; i < g->n_functions; i++)
    if (strcmp(g->functions[i].name, "forward") == 0) m->fn = &g->functions[i];
  if (m->fn->arena_bytes > (uint64_t)(SIZE_MAX / 2))
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP,
                           "arena of %" PRIu64 " bytes is too large for this host",
                           m->fn->arena_bytes);
  for (uint32_t i = 0; i < m->fn->n_values; i++) {
    const dml_pkg_value_t *v = &m->fn->values[i];
    if (v->storage != DML_PKG_STORAGE_CONST) continue;
    int64_t n = dml_pkg_type_bytes_bound(&v->type, NULL, 0) /
                (int64_t)dml_dtype_size(v->type.dtype);
    m->const_bytes += v->bytes;
    if (v->flags & DML_PKG_VALUE_PARAM)
      m->param_count += n;
    else
      m->const_count += n;
  }
  m->fn_scratch = (int64_t *)calloc(g->n_functions, sizeof(int64_t));
  if (!m->fn_scratch) return oom();
  for (uint32_t i = 0; i < g->n_functions; i++)
    DML_RETURN_IF_ERROR(compute_scratch(m, &g->functions[i], &m->fn_scratch[i]));
  m->scratch_bytes = m->fn_scratch[dml_rt_fn_index(m, m->fn)];
  /* GPU kernel sections are untrusted bytes like the rest: validated
   * against the graph here (dml_kpkg.h), whichever backend runs. */
  static const dml_kpkg_target_t targets[3] = {DML_KPKG_TARGET_SPIRV, DML_KPKG_TARGET_MSL,
                                               DML_KPKG_TARGET_CUDA};
  for (int t = 0; t < 3; t++) {
    const dml_pkg_section_t *ks =
        dml_pkg_find_section(&m->pkg, dml_kpkg_section_tag(targets[t]));
    if (!ks) continue;
    dml_kpkg_t *k = NULL;
    DML_RETURN_IF_ERROR(dml_kpkg_decode(ks->data, (size_t)ks->size, targets[t], g, &k));
    if (targets[t] == DML_KPKG_TARGET_SPIRV)
      m->kernels_spirv = k;
    else if (targets[t] == DML_KPKG_TARGET_CUDA)
      m->kernels_cuda = k;
    else
      dml_kpkg_release(k);
  }
  return collect_globals(m);
}

dml_status_t dml_rt_model_load_file(const char *path, dml_rt_model_t **out_model) {
  dml_rt_model_t *m = (dml_rt_model_t *)calloc(1, sizeof(*m));
  if (!m) return oom();
  dml_status_t st = dml_pkg_file_open(path, &m->file);
  if (!st) st = load_bytes(m, m->file.data, m->file.size);
  if (st) {
    dml_rt_model_release(m);
    return dml_status_annotate(st, "loading '%s'", path);
  }
  *out_model = m;
  return DML_OK;
}

dml_status_t dml_rt_model_load_memory(const void *bytes, size_t size,
                                      dml_rt_model_t **out_model) {
  dml_rt_model_t *m = (dml_rt_model_t *)calloc(1, sizeof(*m));
  if (!m) return oom();
  if (posix_memalign(&m->copy, 4096, size ? size : 1) != 0) {
    free(m);
    return oom();
  }
  if (size) memcpy(m->copy, bytes, size);
  dml_status_t st = load_bytes(m, (const uint8_t *)m->copy, size);
  if (st) {
    dml_rt_model_release(m);
    return dml_status_annotate(st, "loading a package from memory (%zu bytes)", size);
  }
  *out_model = m;
  return DML_OK;
}

void dml_rt_model_release(dml_rt_model_t *m) {
  if (!m) return;
  dml_kpkg_release(m->kernels_spirv);
  dml_kpkg_release(m->kernels_cuda);
  dml_pkg_graph_release(m->graph);
  dml_pkg_strings_release(m->strtabs, m->n_strtabs);
  free(m->meta);
  free(m->fn_scratch);
  free(m->globals);
  dml_pkg_file_close(&m->file);
  free(m->copy);
  free(m);
}

/* ---- inputs and outputs ---- */

void dml_rt_fill_io_info(const dml_rt_model_t *m, const dml_pkg_value_t *v,
                         dml_rt_io_info_t *out) {
  memset(out, 0, sizeof(*out));
  out->name = v->name;
  out->dtype = v->type.dtype;
  out->rank = v->type.rank;
  for (int32_t d = 0; d < v->type.rank; d++) {
    const dml_dim_t *dim = &v->type.dims[d];
    if (dim->sym < 0) {
      out->dims[d] = dim->value;
      out->dim_bound[d] = dim->value;
      out->dim_multiplier[d] = 1;
    } else {
      const dml_pkg_symbol_t *s = &m->graph->symbols[dim->sym];
      out->dims[d] = -1;
      out->dim_symbol[d] = s->name;
      out->dim_multiplier[d] = dim->value;
      out->dim_bound[d] = dim->value * s->bound; /* fits: checked at decode */
    }
  }
}

const char *dml_rt_io_info_str(const dml_rt_io_info_t *info, char *buf, size_t cap) {
  if (!cap) return buf;
  size_t k = (size_t)snprintf(buf, cap, "%s[", dml_dtype_name(info->dtype));
  for (int32_t d = 0; d < info->rank && k < cap; d++) {
    const char *sep = d ? "," : "";
    if (!info->dim_symbol[d])
      k += (size_t)snprintf(buf + k, cap - k, "%s%" PRId64, sep, info->dims[d]);
    else if (info->dim_multiplier[d] == 1)
      k += (size_t)snprintf(buf + k, cap - k, "%s%s", sep, info->dim_symbol[d]);
    else
      k += (size_t)snprintf(buf + k, cap - k,
                            strpbrk(info->dim_symbol[d], "+-*/") ? "%s%" PRId64 "*(%s)"
                                                                 : "%s%" PRId64 "*%s",
                            sep, info->dim_multiplier[d], info->dim_symbol[d]);
  }
  if (k < cap) snprintf(buf + k, cap - k, "]");
  return buf;
}

uint32_t dml_rt_model_num_inputs(const dml_rt_model_t *m) {
  return m->fn->n_inputs;
}
uint32_t dml_rt_model_num_outputs(const dml_rt_model_t *m) {
  return m->fn->n_outputs;
}

dml_status_t dml_rt_index_out_of_range(const char *op, const char *what, uint32_t i,
                                       uint32_t n) {
  return dml_status_make(DML_STATUS_OUT_OF_RANGE, op,
                         "%s index %" PRIu32 " out of range (%" PRIu32 ")", what, i, n);
}

static dml_status_t out_of_range(const char *what, uint32_t i, uint32_t n) {
  return dml_rt_index_out_of_range("rt.model", what, i, n);
}

dml_status_t dml_rt_fn_io_info(const char *op, const dml_rt_model_t *m,
                               const dml_pkg_function_t *f, int output, uint32_t i,
                               dml_rt_io_info_t *out) {
  uint32_t n = output ? f->n_outputs : f->n_inputs;
  if (i >= n) return dml_rt_index_out_of_range(op, output ? "output" : "input", i, n);
  dml_rt_fill_io_info(m, &f->values[output ? f->outputs[i] : f->inputs[i]], out);
  return DML_OK;
}

int32_t dml_rt_fn_find_io(const dml_pkg_function_t *f, int output, const char *name) {
  uint32_t n = output ? f->n_outputs : f->n_inputs;
  for (uint32_t i = 0; name && i < n; i++)
    if (strcmp(f->values[output ? f->outputs[i] : f->inputs[i]].name, name) == 0)
      return (int32_t)i;
  return -1;
}

dml_status_t dml_rt_model_input_info(const dml_rt_model_t *m, uint32_t i,
                                     dml_rt_io_info_t *out) {
  return dml_rt_fn_io_info("rt.model", m, m->fn, 0, i, out);
}

dml_status_t dml_rt_model_output_info(const dml_rt_model_t *m, uint32_t i,
                                      dml_rt_io_info_t *out) {
  return dml_rt_fn_io_info("rt.model", m, m->fn, 1, i, out);
}

int32_t dml_rt_model_find_input(const dml_rt_model_t *m, const char *name) {
  return dml_rt_fn_find_io(m->fn, 0, name);
}

int32_t dml_rt_model_find_output(const dml_rt_model_t *m, const char *name) {
  return dml_rt_fn_find_io(m->fn, 1, name);
}

int64_t dml_rt_model_arena_bytes(const dml_rt_model_t *m) {
  return (int64_t)m->fn->arena_bytes;
}
int64_t dml_rt_model_scratch_bytes(const dml_rt_model_t *m) {
  return m->scratch_bytes;
}

/* ---- container and meta ---- */

uint32_t dml_rt_model_format_version(const dml_rt_model_t *m) {
  return m->pkg.format_version;
}
uint64_t dml_rt_model_file_size(const dml_rt_model_t *m) {
  return m->pkg.file_size;
}
int dml_rt_model_is_mapped(const dml_rt_model_t *m) {
  return m->file.mapped;
}
uint32_t dml_rt_model_num_sections(const dml_rt_model_t *m) {
  return m->pkg.n_sections;
}

dml_status_t dml_rt_model_section_info(const dml_rt_model_t *m, uint32_t i,
                                       dml_rt_section_info_t *out) {
  if (i >= m->pkg.n_sections) return out_of_range("section", i, m->pkg.n_sections);
  const dml_pkg_section_t *s = &m->pkg.sections[i];
  out->tag = s->tag;
  out->offset = s->offset;
  out->size = s->size;
  out->alignment = s->alignment;
  out->crc32 = s->crc32;
  return DML_OK;
}

const char *dml_rt_model_meta(const dml_rt_model_t *m) {
  return m->meta;
}

int dml_rt_model_meta_get(const dml_rt_model_t *m, const char *key, char *buf,
                          size_t cap) {
  if (cap) buf[0] = 0;
  size_t kl = strlen(key);
  const char *p = m->meta;
  while (*p) {
    const char *eol = strchr(p, '\n');
    size_t ll = eol ? (size_t)(eol - p) : strlen(p);
    if (ll > kl && memcmp(p, key, kl) == 0 && p[kl] == ':') {
      const char *v = p + kl + 1;
      size_t vl = ll - kl - 1;
      while (vl && *v == ' ') v++, vl--;
      if (vl && v[vl - 1] == '\r') vl--;
      if (cap) {
        size_t n = vl < cap - 1 ? vl : cap - 1;
        memcpy(buf, v, n);
        buf[n] = 0;
      }
      return 1;
    }
    p += ll + (eol ? 1 : 0);
  }
  return 0;
}

dml_status_t dml_rt_model_check_chunks(const dml_rt_model_t *m, const char *op,
                                       int64_t rows, int64_t bound) {
  char v[8], why[400];
  if (dml_rt_model_meta_get(m, "rows-independent", v, sizeof v) && !strcmp(v, "1"))
    return DML_OK;
  int known = dml_rt_model_meta_get(m, "rows-mixed-by", why, sizeof why);
  dml_status_t st =
      known ? dml_status_make(DML_STATUS_FAILED_PRECONDITION, op,
                              "rows beyond the batch bound %" PRId64
                              " cannot run in chunks: %s; recompile with --batch-bound "
                              ">= %" PRId64,
                              bound, why, rows)
            : dml_status_make(DML_STATUS_FAILED_PRECONDITION, op,
                              "rows beyond the batch bound %" PRId64
                              " cannot run in chunks: the package does not say whether "
                              "its rows are independent (compiled before that check); "
                              "recompile with --batch-bound >= %" PRId64,
                              bound, rows);
  return dml_status_detail(st,
                           "%" PRId64 " rows given; chunks of %" PRId64
                           " rows equal one run over all rows only when each output "
                           "row depends on the same input row alone",
                           rows, bound);
}

uint32_t dml_rt_model_num_symbols(const dml_rt_model_t *m) {
  return m->graph->n_symbols;
}

dml_status_t dml_rt_model_symbol(const dml_rt_model_t *m, uint32_t i,
                                 const char **out_name, int64_t *out_bound) {
  if (i >= m->graph->n_symbols) return out_of_range("symbol", i, m->graph->n_symbols);
  *out_name = m->graph->symbols[i].name;
  *out_bound = m->graph->symbols[i].bound;
  return DML_OK;
}

uint32_t dml_rt_model_num_functions(const dml_rt_model_t *m) {
  return m->graph->n_functions;
}

const char *dml_rt_model_function_name(const dml_rt_model_t *m, uint32_t i) {
  return i < m->graph->n_functions ? m->graph->functions[i].name : NULL;
}

/* ---- nodes ---- */

uint32_t dml_rt_model_num_nodes(const dml_rt_model_t *m) {
  return m->fn->n_nodes;
}

dml_status_t dml_rt_model_node_info(const dml_rt_model_t *m, uint32_t node,
                                    dml_rt_node_info_t *out) {
  if (node >= m->fn->n_nodes) return out_of_range("node", node, m->fn->n_nodes);
  const dml_pkg_node_t *n = &m->fn->nodes[node];
  out->name = n->name;
  out->op_name = n->op_name;
  out->n_inputs = n->n_inputs;
  out->n_outputs = n->n_outputs;
  out->n_attrs = n->n_attrs;
  return DML_OK;
}

static void fill_value_info(const dml_rt_model_t *m, uint32_t vi,
                            dml_rt_value_info_t *out) {
  memset(out, 0, sizeof(*out));
  if (vi == DML_PKG_NO_VALUE) return;
  const dml_pkg_value_t *v = &m->fn->values[vi];
  out->present = 1;
  dml_rt_fill_io_info(m, v, &out->type);
  out->storage = (dml_rt_storage_t)v->storage;
  out->flags = v->flags;
  out->numel_bound =
      dml_pkg_type_bytes_bound(&v->type, m->graph->symbols, m->graph->n_symbols) /
      (int64_t)dml_dtype_size(v->type.dtype);
  out->offset = v->offset;
  out->bytes = v->bytes;
}

dml_status_t dml_rt_model_node_input(const dml_rt_model_t *m, uint32_t node, uint32_t i,
                                     dml_rt_value_info_t *out) {
  if (node >= m->fn->n_nodes) return out_of_range("node", node, m->fn->n_nodes);
  const dml_pkg_node_t *n = &m->fn->nodes[node];
  if (i >= n->n_inputs) return out_of_range("node input", i, n->n_inputs);
  fill_value_info(m, n->inputs[i], out);
  return DML_OK;
}

dml_status_t dml_rt_model_node_output(const dml_rt_model_t *m, uint32_t node, uint32_t i,
                                      dml_rt_value_info_t *out) {
  if (node >= m->fn->n_nodes) return out_of_range("node", node, m->fn->n_nodes);
  const dml_pkg_node_t *n = &m->fn->nodes[node];
  if (i >= n->n_outputs) return out_of_range("node output", i, n->n_outputs);
  fill_value_info(m, n->outputs[i], out);
  return DML_OK;
}

int dml_rt_model_node_output_used(const dml_rt_model_t *m, uint32_t node, uint32_t i) {
  if (node >= m->fn->n_nodes || i >= m->fn->nodes[node].n_outputs) return 0;
  uint32_t v = m->fn->nodes[node].outputs[i];
  for (uint32_t o = 0; o < m->fn->n_outputs; o++)
    if (m->fn->outputs[o] == v) return 1;
  for (uint32_t k = 0; k < m->fn->n_nodes; k++)
    for (uint32_t j = 0; j < m->fn->nodes[k].n_inputs; j++)
      if (m->fn->nodes[k].inputs[j] == v) return 1;
  return 0;
}

const dml_attr_t *dml_rt_model_node_attr(const dml_rt_model_t *m, uint32_t node,
                                         uint32_t i) {
  if (node >= m->fn->n_nodes || i >= m->fn->nodes[node].n_attrs) return NULL;
  return &m->fn->nodes[node].attrs[i];
}

uint64_t dml_rt_model_weights_bytes(const dml_rt_model_t *m) {
  return m->const_bytes;
}
int64_t dml_rt_model_param_count(const dml_rt_model_t *m) {
  return m->param_count;
}
int64_t dml_rt_model_const_count(const dml_rt_model_t *m) {
  return m->const_count;
}

/* ---- globals ---- */

uint32_t dml_rt_model_num_globals(const dml_rt_model_t *m) {
  return m->n_globals;
}

dml_status_t dml_rt_model_global_info(const dml_rt_model_t *m, uint32_t i,
                                      dml_rt_global_info_t *out) {
  if (i >= m->n_globals) return out_of_range("global", i, m->n_globals);
  const dml_pkg_value_t *v = m->globals[i].value;
  memset(out, 0, sizeof(*out));
  out->name = m->globals[i].name;
  out->dtype = v->type.dtype;
  out->rank = v->type.rank;
  for (int32_t d = 0; d < v->type.rank; d++) out->dims[d] = v->type.dims[d].value;
  out->flags = ((v->flags & DML_PKG_VALUE_PARAM) ? DML_RT_GLOBAL_PARAM : 0) |
               ((v->flags & DML_PKG_VALUE_STATE) ? DML_RT_GLOBAL_STATE : 0);
  out->bytes = m->globals[i].bytes;
  return DML_OK;
}

int32_t dml_rt_model_find_global(const dml_rt_model_t *m, const char *name) {
  if (!name) return -1;
  for (uint32_t i = 0; i < m->n_globals; i++)
    if (strcmp(m->globals[i].name, name) == 0) return (int32_t)i;
  return -1;
}
