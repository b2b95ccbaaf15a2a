/* layers_model.c — the model of the layer API (dml_layers.h): names,
 * parameters and their initialization, inputs, outputs, copy to an IR
 * module. The layers themselves are in layers_ops.c. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_ir_infer.h"
#include "dml_philox.h"
#include "layers_internal.h"

#define NAME_MAX_LEN 128

static dml_status_t oom(const char *op) {
  return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, op, "out of memory");
}

/* Grows a malloc'd array to hold `need` items. */
static int grow(void **arr, size_t *cap, size_t need, size_t item) {
  if (need <= *cap) return 1;
  size_t nc = *cap ? *cap * 2 : 16;
  while (nc < need) nc *= 2;
  void *p = realloc(*arr, nc * item);
  if (!p) return 0;
  *arr = p;
  *cap = nc;
  return 1;
}

const char *layers_type_str(const dml_layers_model_t *L, const dml_ir_value_t *v,
                            char *buf, size_t cap) {
  return dml_ir_type_str(L->m, &v->type, buf, cap);
}

const char *layers_join(dml_layers_model_t *L, const char *a, const char *sep,
                        const char *b) {
  size_t n = strlen(a) + strlen(sep) + strlen(b) + 1;
  char *s = (char *)dml_ir_alloc(L->m, n);
  if (s) snprintf(s, n, "%s%s%s", a, sep, b);
  return s;
}

/* ==== model ============================================================= */

dml_status_t dml_layers_model_create(const dml_layers_model_options_t *opts,
                                     dml_layers_model_t **out_model) {
  if (!out_model)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "layers.model",
                           "dml_layers_model_create: NULL output argument");
  int64_t bound = opts && opts->batch_bound ? opts->batch_bound : 64;
  if (bound < 1 || bound > (int64_t)1 << 31)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "layers.model",
                           "batch_bound must be between 1 and 2^31, got %lld",
                           (long long)bound);
  dml_layers_model_t *L = (dml_layers_model_t *)calloc(1, sizeof *L);
  if (!L) return oom("layers.model");
  L->seed = opts ? opts->seed : 0;
  L->batch_bound = bound;
  L->batch_sym = -1;
  dml_status_t s = dml_ir_module_create(&L->m);
  if (!s) s = dml_ir_function_create(L->m, "forward", &L->f);
  if (s) {
    dml_layers_model_release(L);
    return s;
  }
  *out_model = L;
  return DML_OK;
}

void dml_layers_model_release(dml_layers_model_t *L) {
  if (!L) return;
  dml_ir_module_release(L->m);
  free(L->params);
  free(L->names);
  free(L->outputs);
  free(L->counters);
  free(L);
}

/* ==== names ============================================================= */

static int name_taken(const dml_layers_model_t *L, const char *name) {
  for (size_t i = 0; i < L->n_names; i++)
    if (!strcmp(L->names[i], name)) return 1;
  return 0;
}

/* Layer, input and output names: 1..128 characters of [A-Za-z0-9_.:-]
 * ('.' allows PyTorch-style nested names such as "features.0"). Returns
 * NULL when fine, else why not. */
static const char *name_problem(const char *name) {
  if (!name || !*name) return "a name must not be empty";
  if (strlen(name) > NAME_MAX_LEN) return "a name has at most 128 characters";
  for (const char *p = name; *p; p++) {
    char c = *p;
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '_' || c == '.' || c == ':' || c == '-'))
      return "a name holds only letters, digits and _ . : -";
  }
  return NULL;
}

static dml_status_t reserve_name(dml_layers_model_t *L, const char *op, const char *name,
                                 const char **out) {
  const char *why = name_problem(name);
  if (why)
    return dml_status_detail(dml_status_make(DML_STATUS_INVALID_ARGUMENT, op,
                                             "invalid name '%s'", name ? name : "(null)"),
                             "%s", why);
  if (name_taken(L, name))
    return dml_status_detail(dml_status_make(DML_STATUS_INVALID_ARGUMENT, op,
                                             "name '%s' is already taken", name),
                             "names of inputs, layers and outputs are unique in a model");
  if (!grow((void **)&L->names, &L->cap_names, L->n_names + 1, sizeof(char *)))
    return oom(op);
  const char *s = dml_ir_strdup(L->m, name);
  if (!s) return oom(op);
  L->names[L->n_names++] = s;
  *out = s;
  return DML_OK;
}

static layers_counter_t *counter_of(dml_layers_model_t *L, const char *kind) {
  for (size_t i = 0; i < L->n_counters; i++)
    if (!strcmp(L->counters[i].kind, kind)) return &L->counters[i];
  return NULL;
}

dml_status_t layers_begin(dml_layers_model_t *L, const char *op, const char *kind,
                          const char *user_name, layers_txn_t *tx) {
  memset(tx, 0, sizeof *tx);
  tx->L = L;
  tx->op = op;
  if (!L) return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "the model is NULL");
  tx->last0 = L->f->last;
  tx->n_globals0 = L->m->n_globals;
  tx->n_params0 = L->n_params;
  tx->n_names0 = L->n_names;
  if (user_name) return reserve_name(L, op, user_name, &tx->layer);
  layers_counter_t *c = counter_of(L, kind);
  char buf[NAME_MAX_LEN + 16];
  for (uint32_t k = c ? c->next : 0;; k++) {
    if (k == 0)
      snprintf(buf, sizeof buf, "%s", kind);
    else
      snprintf(buf, sizeof buf, "%s_%u", kind, k);
    if (!name_taken(L, buf)) break;
  }
  return reserve_name(L, op, buf, &tx->layer);
}

void layers_commit(layers_txn_t *tx, const char *kind) {
  dml_layers_model_t *L = tx->L;
  L->n_layers++;
  /* The next generated name of this kind comes after this one. */
  size_t klen = strlen(kind);
  uint32_t used = 0;
  if (!strcmp(tx->layer, kind))
    used = 1;
  else if (!strncmp(tx->layer, kind, klen) && tx->layer[klen] == '_') {
    char *end;
    unsigned long v = strtoul(tx->layer + klen + 1, &end, 10);
    if (!*end && v < UINT32_MAX) used = (uint32_t)v + 1;
  }
  if (!used) return;
  layers_counter_t *c = counter_of(L, kind);
  if (!c && grow((void **)&L->counters, &L->cap_counters, L->n_counters + 1,
                 sizeof(layers_counter_t))) {
    c = &L->counters[L->n_counters++];
    c->kind = kind;
    c->next = 0;
  }
  if (c && used > c->next) c->next = used;
}

dml_status_t layers_fail(layers_txn_t *tx, dml_status_t s) {
  dml_layers_model_t *L = tx->L;
  if (!L) return s;
  while (L->f->last && L->f->last != tx->last0) dml_ir_node_erase(L->f->last);
  L->m->n_globals = tx->n_globals0;
  L->n_params = tx->n_params0;
  L->n_names = tx->n_names0;
  if (tx->layer) s = dml_status_annotate(s, "adding layer '%s'", tx->layer);
  return s;
}

dml_status_t layers_err(layers_txn_t *tx, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return dml_status_make(DML_STATUS_INVALID_ARGUMENT, tx->op, "%s", buf);
}

/* ==== tensors =========================================================== */

dml_status_t layers_handle(dml_layers_model_t *L, dml_ir_value_t *v,
                           dml_layers_tensor_t **out) {
  dml_layers_tensor_t *t =
      (dml_layers_tensor_t *)dml_ir_alloc(L->m, sizeof(dml_layers_tensor_t));
  if (!t) return oom("layers");
  t->model = L;
  t->v = v;
  *out = t;
  return DML_OK;
}

dml_status_t layers_check_tensor(layers_txn_t *tx, const dml_layers_tensor_t *t,
                                 const char *what) {
  if (!t) return layers_err(tx, "%s is NULL", what);
  if (t->model != tx->L) return layers_err(tx, "%s is a tensor of another model", what);
  return DML_OK;
}

dml_status_t dml_layers_tensor_shape(const dml_layers_tensor_t *t,
                                     dml_layers_shape_t *out) {
  if (!t || !out)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "layers.tensor",
                           "dml_layers_tensor_shape: NULL argument");
  memset(out, 0, sizeof *out);
  out->dtype = t->v->type.dtype;
  out->rank = t->v->type.rank;
  for (int32_t d = 0; d < out->rank && d < DML_MAX_RANK; d++) {
    const dml_dim_t *dim = &t->v->type.dims[d];
    out->dims[d] = dim->sym >= 0 ? -1 : dim->value;
    out->batch_multiple[d] = dim->sym >= 0 ? dim->value : 0;
  }
  return DML_OK;
}

const char *dml_layers_tensor_name(const dml_layers_tensor_t *t) {
  return t && t->v->name ? t->v->name : "";
}

/* ==== parameters ======================================================== */

dml_status_t layers_add_param(layers_txn_t *tx, const char *pname, int32_t rank,
                              const int64_t *dims, layers_init_t init, double a,
                              uint32_t flags, dml_ir_value_t **out) {
  dml_layers_model_t *L = tx->L;
  int64_t numel = dml_dims_numel(dims, rank);
  if (numel < 1 || numel > ((int64_t)1 << 34))
    return layers_err(tx, "parameter '%s.%s' would have %lld elements", tx->layer, pname,
                      (long long)numel);
  float *data = (float *)malloc((size_t)numel * sizeof(float));
  if (!data) return oom(tx->op);
  /* Parameter k draws from Philox stream k of the seed, at step 0. */
  dml_philox_stream_t st;
  dml_philox_stream_init(&st, L->seed, 0, (uint32_t)L->n_params);
  for (int64_t i = 0; i < numel; i++) {
    double v;
    switch (init) {
      case LAYERS_INIT_UNIFORM:
        v = (2.0 * (double)dml_philox_uniform_f32(&st, (uint64_t)i) - 1.0) * a;
        break;
      case LAYERS_INIT_NORMAL: v = dml_philox_normal_f32(&st, (uint64_t)i); break;
      default: v = a; break;
    }
    data[i] = (float)v;
  }
  const char *name = layers_join(L, tx->layer, ".", pname);
  dml_type_t ty = dml_type_static(DML_DTYPE_F32, rank, dims);
  dml_ir_value_t *g = NULL;
  dml_status_t s = name ? DML_OK : oom(tx->op);
  if (!s && dml_ir_module_find_global(L->m, name))
    s = layers_err(tx, "a parameter named '%s' already exists", name);
  if (!s)
    s = dml_ir_module_add_global(L->m, name, &ty, data, (size_t)numel * sizeof(float),
                                 flags, &g);
  free(data);
  if (s) return s;
  if (!grow((void **)&L->params, &L->cap_params, L->n_params + 1, sizeof(layers_param_t)))
    return oom(tx->op);
  L->params[L->n_params].g = g;
  L->params[L->n_params].layer = tx->layer;
  L->n_params++;
  *out = g;
  return DML_OK;
}

dml_status_t layers_add_scalar(layers_txn_t *tx, const char *cname, float value,
                               dml_ir_value_t **out) {
  dml_layers_model_t *L = tx->L;
  const char *name = layers_join(L, tx->layer, ".", cname);
  if (!name) return oom(tx->op);
  if (dml_ir_module_find_global(L->m, name))
    return layers_err(tx, "a constant named '%s' already exists", name);
  dml_type_t ty = dml_type_static(DML_DTYPE_F32, 0, NULL);
  return dml_ir_module_add_global(L->m, name, &ty, &value, sizeof value, 0, out);
}

size_t dml_layers_num_params(const dml_layers_model_t *m) {
  return m ? m->n_params : 0;
}

dml_status_t dml_layers_param_info(const dml_layers_model_t *m, size_t i,
                                   dml_layers_param_info_t *out) {
  if (!m || !out)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "layers.param",
                           "dml_layers_param_info: NULL argument");
  if (i >= m->n_params)
    return dml_status_make(DML_STATUS_OUT_OF_RANGE, "layers.param",
                           "parameter index %zu is out of range (the model has %zu)", i,
                           m->n_params);
  const dml_ir_value_t *g = m->params[i].g;
  memset(out, 0, sizeof *out);
  out->name = g->name;
  out->layer = m->params[i].layer;
  out->dtype = g->type.dtype;
  out->rank = g->type.rank;
  for (int32_t d = 0; d < g->type.rank; d++) out->dims[d] = g->type.dims[d].value;
  out->numel = dml_dims_numel(out->dims, out->rank);
  out->flags = g->global_flags;
  return DML_OK;
}

void dml_layers_param_counts(const dml_layers_model_t *m, int64_t *out_trainable,
                             int64_t *out_non_trainable) {
  int64_t tr = 0, nt = 0;
  for (size_t i = 0; m && i < m->n_params; i++) {
    dml_layers_param_info_t pi;
    dml_status_t s = dml_layers_param_info(m, i, &pi);
    if (s) {
      dml_status_free(s);
      continue;
    }
    if (pi.flags & DML_IR_GLOBAL_PARAM)
      tr += pi.numel;
    else
      nt += pi.numel;
  }
  if (out_trainable) *out_trainable = tr;
  if (out_non_trainable) *out_non_trainable = nt;
}

static dml_status_t find_param(const dml_layers_model_t *m, const char *fn,
                               const char *name, const void *data, size_t bytes,
                               dml_ir_value_t **out) {
  if (!m || !name || !data)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "layers.param",
                           "%s: NULL argument", fn);
  for (size_t i = 0; i < m->n_params; i++) {
    dml_ir_value_t *g = m->params[i].g;
    if (strcmp(g->name, name)) continue;
    if (bytes != g->data_bytes) {
      char t[128];
      return dml_status_detail(
          dml_status_make(DML_STATUS_INVALID_ARGUMENT, "layers.param",
                          "parameter '%s' is %s (%zu bytes), got %zu bytes", name,
                          layers_type_str(m, g, t, sizeof t), g->data_bytes, bytes),
          "data is f32 in C order, PyTorch's layout for the same key");
    }
    *out = g;
    return DML_OK;
  }
  dml_status_t s = dml_status_make(DML_STATUS_NOT_FOUND, "layers.param",
                                   "the model has no parameter '%s'", name);
  char list[512];
  size_t k = 0;
  list[0] = 0;
  for (size_t i = 0; i < m->n_params && k < sizeof list - 64; i++)
    k += (size_t)snprintf(list + k, sizeof list - k, "%s%s", i ? ", " : "",
                          m->params[i].g->name);
  return dml_status_detail(s, "parameters: %s", m->n_params ? list : "(none)");
}

dml_status_t dml_layers_set_param(dml_layers_model_t *m, const char *name,
                                  const void *data, size_t bytes) {
  dml_ir_value_t *g = NULL;
  DML_RETURN_IF_ERROR(find_param(m, "dml_layers_set_param", name, data, bytes, &g));
  /* The global's data lives in the model's arena, which the model owns. */
  memcpy((void *)(uintptr_t)g->data, data, bytes);
  return DML_OK;
}

dml_status_t dml_layers_get_param(const dml_layers_model_t *m, const char *name,
                                  void *out, size_t bytes) {
  dml_ir_value_t *g = NULL;
  DML_RETURN_IF_ERROR(find_param(m, "dml_layers_get_param", name, out, bytes, &g));
  memcpy(out, g->data, bytes);
  return DML_OK;
}

/* ==== nodes ============================================================= */

dml_status_t layers_node(layers_txn_t *tx, dml_op_t op, const char *node_name,
                         uint32_t n_in, dml_ir_value_t *const *in, dml_ir_node_t **out) {
  return dml_ir_node_create(tx->L->f, op, node_name, n_in, in, 1, NULL, out);
}

dml_status_t layers_finish_node(layers_txn_t *tx, dml_ir_node_t *n,
                                const char *value_name) {
  DML_RETURN_IF_ERROR(dml_ir_infer_node(tx->L->m, n));
  n->outputs[0]->name = dml_ir_strdup(tx->L->m, value_name);
  if (!n->outputs[0]->name) return oom(tx->op);
  return DML_OK;
}

/* ==== inputs and outputs ================================================ */

dml_status_t dml_layers_input(dml_layers_model_t *L, const char *name, dml_dtype_t dtype,
                              int32_t rank, const int64_t *dims,
                              dml_layers_tensor_t **out) {
  layers_txn_t tx;
  DML_RETURN_IF_ERROR(layers_begin(L, "layers.input", "input", name ? name : "", &tx));
  dml_status_t s = DML_OK;
  if (!out || !dims)
    s = layers_err(&tx, "NULL argument");
  else if (L->n_layers)
    s = dml_status_detail(layers_err(&tx, "input '%s' is declared after a layer", name),
                          "declare every input before the first layer");
  else if (dtype != DML_DTYPE_F32 && dtype != DML_DTYPE_I64 && dtype != DML_DTYPE_I32)
    s = dml_status_detail(
        layers_err(&tx, "input '%s' has dtype %s", name, dml_dtype_name(dtype)),
        "inputs are f32, or i64/i32 indices for an embedding");
  else if (rank < 1 || rank > DML_MAX_RANK)
    s = layers_err(&tx, "input '%s' has rank %d; it must be 1..%d", name, (int)rank,
                   DML_MAX_RANK);
  dml_type_t ty;
  memset(&ty, 0, sizeof ty);
  ty.dtype = dtype;
  ty.rank = rank;
  for (int32_t d = 0; !s && d < rank; d++) {
    if (dims[d] == -1 && d == 0) {
      if (L->batch_sym < 0) {
        int32_t sym = -1;
        s = dml_ir_module_add_symbol(L->m, "batch", L->batch_bound, &sym);
        if (!s) L->batch_sym = sym;
      }
      ty.dims[d].value = 1;
      ty.dims[d].sym = L->batch_sym;
    } else if (dims[d] < 1) {
      s = dml_status_detail(layers_err(&tx, "input '%s' has dim %d = %lld", name, (int)d,
                                       (long long)dims[d]),
                            "dims are >= 1; only dim 0 may be -1, the batch");
    } else {
      ty.dims[d].value = dims[d];
      ty.dims[d].sym = -1;
    }
  }
  dml_ir_value_t *v = NULL;
  if (!s) s = dml_ir_function_add_arg(L->f, name, &ty, &v);
  if (!s) s = layers_handle(L, v, out);
  if (s) return layers_fail(&tx, s);
  return DML_OK;
}

dml_status_t dml_layers_output(dml_layers_model_t *L, dml_layers_tensor_t *t,
                               const char *name) {
  layers_txn_t tx;
  DML_RETURN_IF_ERROR(layers_begin(L, "layers.output", "output", name ? name : "", &tx));
  dml_status_t s = layers_check_tensor(&tx, t, "the output tensor");
  dml_ir_value_t *v = s ? NULL : t->v;
  int marked = 0;
  for (size_t i = 0; v && i < L->n_outputs; i++) marked |= L->outputs[i] == v;
  if (!s && (v->kind != DML_IR_VALUE_RESULT || marked)) {
    /* Results must be node results with their own name: pass inputs and
     * values already marked through an Identity. */
    dml_ir_node_t *n = NULL;
    s = layers_node(&tx, DML_OP_IDENTITY, tx.layer, 1, &v, &n);
    if (!s) s = layers_finish_node(&tx, n, tx.layer);
    if (!s) v = n->outputs[0];
  } else if (!s) {
    /* The value takes the output's name. */
    v->name = tx.layer;
  }
  if (!s && !grow((void **)&L->outputs, &L->cap_outputs, L->n_outputs + 1,
                  sizeof(dml_ir_value_t *)))
    s = oom(tx.op);
  if (!s) {
    L->outputs[L->n_outputs] = v;
    s = dml_ir_function_set_results(L->f, (uint32_t)L->n_outputs + 1, L->outputs);
  }
  if (s) return layers_fail(&tx, s);
  L->n_outputs++;
  return DML_OK;
}

/* ==== to IR: a deep copy of the module ================================== */

dml_status_t dml_layers_model_to_ir(const dml_layers_model_t *L,
                                    dml_ir_module_t **out_module) {
  if (!L || !out_module)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "layers.model",
                           "dml_layers_model_to_ir: NULL argument");
  if (!L->n_outputs)
    return dml_status_detail(dml_status_make(DML_STATUS_FAILED_PRECONDITION,
                                             "layers.model", "the model has no output"),
                             "mark results with dml_layers_output()");
  const dml_ir_module_t *src = L->m;
  /* Values are mapped by id (unique in the source module). */
  dml_ir_value_t **map =
      (dml_ir_value_t **)calloc(src->next_value_id + 1, sizeof(dml_ir_value_t *));
  if (!map) return oom("layers.model");
  dml_ir_module_t *m = NULL;
  dml_status_t s = dml_ir_module_create(&m);
  for (uint32_t i = 0; !s && i < src->n_symbols; i++) {
    int32_t idx = -1;
    s = dml_ir_module_add_symbol(m, src->symbols[i].name, src->symbols[i].bound, &idx);
    if (!s && idx != (int32_t)i)
      s = dml_status_make(DML_STATUS_INTERNAL, "layers.model",
                          "symbol '%s' changed index", src->symbols[i].name);
    if (!s) m->symbols[idx].flags = src->symbols[i].flags;
  }
  for (uint32_t i = 0; !s && i < src->n_globals; i++) {
    const dml_ir_value_t *g = src->globals[i];
    s = dml_ir_module_add_global(m, g->name, &g->type, g->data, g->data_bytes,
                                 g->global_flags, &map[g->id]);
  }
  for (uint32_t fi = 0; !s && fi < src->n_functions; fi++) {
    const dml_ir_function_t *sf = src->functions[fi];
    dml_ir_function_t *f = NULL;
    s = dml_ir_function_create(m, sf->name, &f);
    for (uint32_t i = 0; !s && i < sf->n_args; i++)
      s = dml_ir_function_add_arg(f, sf->args[i]->name, &sf->args[i]->type,
                                  &map[sf->args[i]->id]);
    for (const dml_ir_node_t *n = sf->first; !s && n; n = n->next) {
      dml_ir_value_t **in = (dml_ir_value_t **)dml_ir_alloc(
          m, (n->n_inputs ? n->n_inputs : 1) * sizeof(dml_ir_value_t *));
      if (!in) {
        s = oom("layers.model");
        break;
      }
      for (uint32_t i = 0; i < n->n_inputs; i++)
        in[i] = n->inputs[i] ? map[n->inputs[i]->id] : NULL;
      dml_ir_node_t *c = NULL;
      s = dml_ir_node_create(f, n->op, n->name, n->n_inputs, in, n->n_outputs, NULL, &c);
      for (uint32_t a = 0; !s && a < n->n_attrs; a++)
        s = dml_ir_node_set_attr(c, &n->attrs[a]);
      for (uint32_t o = 0; !s && o < n->n_outputs; o++) {
        c->outputs[o]->type = n->outputs[o]->type;
        c->outputs[o]->name = dml_ir_strdup(m, n->outputs[o]->name);
        map[n->outputs[o]->id] = c->outputs[o];
      }
    }
    dml_ir_value_t **res = (dml_ir_value_t **)dml_ir_alloc(
        m, (sf->n_results ? sf->n_results : 1) * sizeof(dml_ir_value_t *));
    if (!s && !res) s = oom("layers.model");
    for (uint32_t i = 0; !s && i < sf->n_results; i++) res[i] = map[sf->results[i]->id];
    if (!s) s = dml_ir_function_set_results(f, sf->n_results, res);
  }
  free(map);
  if (s) {
    dml_ir_module_release(m);
    return s;
  }
  *out_module = m;
  return DML_OK;
}
