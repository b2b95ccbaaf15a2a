/* onnx_export.c — an IR module written as an ONNX model
 * (dml_onnx_export_module, dml_onnx.h).
 *
 * The inverse of the importer for the IR's ONNX-shaped ops: each node
 * becomes the ONNX node whose onnx_ops.def line at the export opset is
 * imported `direct` (the IR node is that ONNX form: same inputs, outputs
 * and attributes), so the table that says how ONNX maps to the IR also says
 * how the IR maps back, and an op with no such line is refused rather than
 * written in a form that means something else. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_dtype.h"
#include "dml_file.h"
#include "dml_ir.h"
#include "dml_onnx.h"
#include "onnx.pb-c.h"
#include "onnx_internal.h"

#define OP "onnx.export"

static dml_status_t oom(void) {
  return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
}

/* ONNX TensorProto.DataType of a dtype: the inverse of onnx_dtype(). */
static int32_t onnx_type_of(dml_dtype_t dt) {
  for (int32_t t = 1; t <= 16; t++)
    if (onnx_dtype(t) == dt) return t;
  return 0;
}

/* Names of the module's values (by id): the source name, or "v<id>" when
 * it has none or another value took it first (a hash set of the names
 * given so far keeps that linear). */
typedef struct {
  char **names; /* by value id */
  uint32_t n;
  const char **set; /* open addressing, n_set a power of two */
  size_t n_set;
} namer_t;

static size_t str_hash(const char *s) {
  size_t h = 1469598103934665603u; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
  return h;
}

/* 1 when `s` was given already; else records it (0). */
static int name_seen(namer_t *nm, const char *s) {
  size_t i = str_hash(s) & (nm->n_set - 1);
  for (; nm->set[i]; i = (i + 1) & (nm->n_set - 1))
    if (!strcmp(nm->set[i], s)) return 1;
  nm->set[i] = s;
  return 0;
}

static dml_status_t name_value(namer_t *nm, const dml_ir_value_t *v) {
  if (v->id >= nm->n)
    return dml_status_make(DML_STATUS_INTERNAL, OP, "value id out of range");
  if (nm->names[v->id]) return DML_OK;
  char buf[32];
  const char *s = v->name && v->name[0] ? v->name : NULL;
  char *name = s ? strdup(s) : NULL;
  if (s && !name) return oom();
  if (!name || name_seen(nm, name)) {
    free(name);
    snprintf(buf, sizeof buf, "v%" PRIu32, v->id);
    name = strdup(buf);
    if (!name) return oom();
    if (name_seen(nm, name)) { /* a source name "v<id>": cannot happen twice */
      free(name);
      snprintf(buf, sizeof buf, "v%" PRIu32 "_", v->id);
      name = strdup(buf);
      if (!name) return oom();
      (void)name_seen(nm, name);
    }
  }
  nm->names[v->id] = name;
  return DML_OK;
}

static char *dup_name(const namer_t *nm, const dml_ir_value_t *v) {
  return strdup(v ? nm->names[v->id] : "");
}

/* A TensorProto of `t`'s dtype, dims and bytes (raw_data, little-endian
 * as dmlc holds them; string_data for strings). */
static Onnx__TensorProto *tensor_proto(const char *name, dml_dtype_t dt, int32_t rank,
                                       const int64_t *dims, const void *data,
                                       size_t bytes) {
  Onnx__TensorProto *tp = (Onnx__TensorProto *)malloc(sizeof *tp);
  if (!tp) return NULL;
  onnx__tensor_proto__init(tp);
  tp->has_data_type = 1;
  tp->data_type = onnx_type_of(dt);
  tp->name = strdup(name ? name : "");
  tp->n_dims = (size_t)rank;
  tp->dims = rank ? (int64_t *)malloc((size_t)rank * sizeof(int64_t)) : NULL;
  if (dt == DML_DTYPE_STRING) { /* string_data: the strings' bytes, never pointers */
    size_t n = bytes / sizeof(dml_str_t);
    const dml_str_t *e = (const dml_str_t *)data;
    tp->string_data =
        (ProtobufCBinaryData *)calloc(n ? n : 1, sizeof(ProtobufCBinaryData));
    int ok = tp->name && (!rank || tp->dims) && tp->string_data;
    for (size_t i = 0; ok && i < n; i++) {
      tp->string_data[i].data = (uint8_t *)malloc(e[i].len ? (size_t)e[i].len : 1);
      ok = tp->string_data[i].data != NULL;
      if (ok) {
        tp->n_string_data = i + 1;
        tp->string_data[i].len = (size_t)e[i].len;
        if (e[i].len) memcpy(tp->string_data[i].data, e[i].data, (size_t)e[i].len);
      }
    }
    if (!ok) {
      protobuf_c_message_free_unpacked(&tp->base, NULL);
      return NULL;
    }
    if (rank) memcpy(tp->dims, dims, (size_t)rank * sizeof(int64_t));
    return tp;
  }
  tp->has_raw_data = 1;
  tp->raw_data.len = bytes;
  tp->raw_data.data = (uint8_t *)malloc(bytes ? bytes : 1);
  if (!tp->name || (rank && !tp->dims) || !tp->raw_data.data) {
    protobuf_c_message_free_unpacked(&tp->base, NULL);
    return NULL;
  }
  if (rank) memcpy(tp->dims, dims, (size_t)rank * sizeof(int64_t));
  if (bytes) memcpy(tp->raw_data.data, data, bytes);
  return tp;
}

/* A ValueInfoProto: dtype and dims (symbolic dims as the symbol's name;
 * a multiple of a symbol, which ONNX cannot name, as an unknown dim). */
static Onnx__ValueInfoProto *value_info(const dml_ir_module_t *m, const char *name,
                                        const dml_type_t *t) {
  Onnx__ValueInfoProto *vi = (Onnx__ValueInfoProto *)malloc(sizeof *vi);
  Onnx__TypeProto *tp = (Onnx__TypeProto *)malloc(sizeof *tp);
  Onnx__TypeProto__Tensor *tt = (Onnx__TypeProto__Tensor *)malloc(sizeof *tt);
  if (!vi || !tp || !tt) {
    free(vi), free(tp), free(tt);
    return NULL;
  }
  onnx__value_info_proto__init(vi);
  onnx__type_proto__init(tp);
  onnx__type_proto__tensor__init(tt);
  vi->name = strdup(name);
  vi->type = tp;
  tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  tp->tensor_type = tt;
  tt->has_elem_type = 1;
  tt->elem_type = onnx_type_of(t->dtype);
  if (!vi->name) goto fail;
  if (t->rank >= 0) {
    Onnx__TensorShapeProto *sp = (Onnx__TensorShapeProto *)malloc(sizeof *sp);
    if (!sp) goto fail;
    onnx__tensor_shape_proto__init(sp);
    tt->shape = sp;
    sp->n_dim = (size_t)t->rank;
    sp->dim = t->rank ? (Onnx__TensorShapeProto__Dimension **)calloc((size_t)t->rank,
                                                                     sizeof(*sp->dim))
                      : NULL;
    if (t->rank && !sp->dim) goto fail;
    for (int32_t d = 0; d < t->rank; d++) {
      Onnx__TensorShapeProto__Dimension *dim =
          (Onnx__TensorShapeProto__Dimension *)malloc(sizeof *dim);
      if (!dim) goto fail;
      onnx__tensor_shape_proto__dimension__init(dim);
      sp->dim[d] = dim;
      const dml_dim_t *dd = &t->dims[d];
      if (dd->sym < 0) {
        dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        dim->dim_value = dd->value;
      } else if (dd->value == 1 && (uint32_t)dd->sym < m->n_symbols) {
        dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
        dim->dim_param = strdup(m->symbols[dd->sym].name);
        if (!dim->dim_param) goto fail;
      }
    }
  }
  return vi;
fail:
  protobuf_c_message_free_unpacked(&vi->base, NULL);
  return NULL;
}

/* The AttributeProto of IR attribute `a`. */
static Onnx__AttributeProto *attr_proto(const dml_attr_t *a) {
  Onnx__AttributeProto *ap = (Onnx__AttributeProto *)malloc(sizeof *ap);
  if (!ap) return NULL;
  onnx__attribute_proto__init(ap);
  ap->name = strdup(a->name);
  if (!ap->name) goto fail;
  ap->has_type = 1;
  switch (a->kind) {
    case DML_ATTR_INT:
      ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
      ap->has_i = 1;
      ap->i = a->i;
      break;
    case DML_ATTR_FLOAT:
      ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
      ap->has_f = 1;
      ap->f = (float)a->f;
      break;
    case DML_ATTR_STRING:
      ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
      ap->has_s = 1;
      ap->s.len = strlen(a->s);
      ap->s.data = (uint8_t *)strdup(a->s);
      if (!ap->s.data) goto fail;
      break;
    case DML_ATTR_INTS:
      ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
      ap->n_ints = a->n;
      ap->ints = (int64_t *)malloc((a->n ? a->n : 1) * sizeof(int64_t));
      if (!ap->ints) goto fail;
      if (a->n) memcpy(ap->ints, a->ints, a->n * sizeof(int64_t));
      break;
    case DML_ATTR_FLOATS:
      ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
      ap->n_floats = a->n;
      ap->floats = (float *)malloc((a->n ? a->n : 1) * sizeof(float));
      if (!ap->floats) goto fail;
      for (size_t i = 0; i < a->n; i++) ap->floats[i] = (float)a->floats[i];
      break;
    case DML_ATTR_STRINGS:
      ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
      ap->strings = (ProtobufCBinaryData *)calloc(a->n ? a->n : 1, sizeof(*ap->strings));
      if (!ap->strings) goto fail;
      ap->n_strings = a->n;
      for (size_t i = 0; i < a->n; i++) {
        ap->strings[i].len = strlen(a->strings[i]);
        ap->strings[i].data = (uint8_t *)strdup(a->strings[i]);
        if (!ap->strings[i].data) goto fail;
      }
      break;
    case DML_ATTR_TENSOR: {
      const dml_tensor_t *t = &a->tensor;
      int64_t n = dml_dims_numel(t->dims, t->rank);
      ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
      ap->t = tensor_proto(NULL, t->dtype, t->rank, t->dims, t->data,
                           (size_t)(n > 0 ? n : 0) * dml_dtype_size(t->dtype));
      if (!ap->t) goto fail;
      break;
    }
    default: goto fail;
  }
  return ap;
fail:
  protobuf_c_message_free_unpacked(&ap->base, NULL);
  return NULL;
}

/* Appends `item` to the repeated field (*arr, *n); 0 on out of memory. */
static int push(void ***arr, size_t *n, void *item) {
  if (!item) return 0;
  void **p = (void **)realloc(*arr, (*n + 1) * sizeof(void *));
  if (!p) return 0;
  p[(*n)++] = item;
  *arr = p;
  return 1;
}
#define PUSH(arr, n, item) push((void ***)&(arr), &(n), (item))

/* Appends a Constant node named `node_name` whose attribute `value` is `tp`
 * and whose output is `out` to g (both taken, freed on failure); 0 on out of
 * memory. */
static int push_constant(Onnx__GraphProto *g, const char *node_name,
                         Onnx__TensorProto *tp, char *out) {
  Onnx__NodeProto *np = (Onnx__NodeProto *)malloc(sizeof *np);
  Onnx__AttributeProto *ap = (Onnx__AttributeProto *)malloc(sizeof *ap);
  if (!np || !ap || !tp || !out) {
    free(np), free(ap), free(out);
    if (tp) protobuf_c_message_free_unpacked(&tp->base, NULL);
    return 0;
  }
  onnx__node_proto__init(np);
  onnx__attribute_proto__init(ap);
  ap->name = strdup("value");
  ap->has_type = 1;
  ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
  ap->t = tp;
  np->op_type = strdup("Constant");
  np->name = strdup(node_name);
  if (!PUSH(g->node, g->n_node, np)) {
    free(out);
    protobuf_c_message_free_unpacked(&np->base, NULL);
    protobuf_c_message_free_unpacked(&ap->base, NULL);
    return 0;
  }
  if (!PUSH(np->attribute, np->n_attribute, ap)) {
    free(out);
    protobuf_c_message_free_unpacked(&ap->base, NULL);
    return 0;
  }
  if (!PUSH(np->output, np->n_output, out)) {
    free(out);
    return 0;
  }
  return ap->name && np->op_type && np->name;
}

/* Whether attribute `a` of node n is the IR's `axes` attribute of a
 * reduction, Squeeze or Unsqueeze (the form passes such as autodiff write,
 * ONNX's before opsets 13/18) where ONNX's op `e` takes the axes as input 1
 * instead: the exporter writes it as a Constant node feeding input 1. */
static int axes_as_input(const dml_ir_node_t *n, const onnx_op_entry_t *e,
                         const dml_attr_t *a) {
  const dml_op_info_t *info = dml_op_info(n->op);
  return info && !strcmp(a->name, "axes") && a->kind == DML_ATTR_INTS &&
         !onnx_op_has_attr(e, "axes") && info->max_inputs >= 2 &&
         (n->n_inputs < 2 || !n->inputs[1]) &&
         ((info->flags & DML_OPF_REDUCTION) || n->op == DML_OP_SQUEEZE ||
          n->op == DML_OP_UNSQUEEZE);
}

static dml_status_t build_graph(const dml_ir_module_t *m, const dml_ir_function_t *f,
                                int64_t opset, namer_t *nm, Onnx__GraphProto *g) {
  char label[256];
  /* every op must have a form at this opset before anything is written */
  for (const dml_ir_node_t *n = f->first; n; n = n->next) {
    const onnx_op_entry_t *e = onnx_op_export_entry(n->op, opset);
    const dml_op_info_t *info = dml_op_info(n->op);
    snprintf(label, sizeof label, "%s '%s'", info ? info->name : "?",
             n->name ? n->name : "<unnamed>");
    if (!e) {
      dml_status_t st = dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                                        "the op has no ONNX form at this opset");
      dml_status_detail(st,
                        "node %s: no ONNX operator at opset %lld takes this IR "
                        "op as it is (frontends/onnx/onnx_ops.def)",
                        label, (long long)opset);
      return st;
    }
    for (uint32_t k = 0; k < n->n_attrs; k++)
      if (!onnx_op_has_attr(e, n->attrs[k].name) && !axes_as_input(n, e, &n->attrs[k])) {
        dml_status_t st = dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                                          "attribute without an ONNX form");
        dml_status_detail(st, "node %s: attribute '%s' is not one of ONNX %s-%lld's",
                          label, n->attrs[k].name, e->name, (long long)opset);
        return st;
      }
  }
  /* names: globals, arguments, then node outputs in order */
  for (uint32_t i = 0; i < m->n_globals; i++)
    DML_RETURN_IF_ERROR(name_value(nm, m->globals[i]));
  for (uint32_t i = 0; i < f->n_args; i++)
    DML_RETURN_IF_ERROR(name_value(nm, f->args[i]));
  for (const dml_ir_node_t *n = f->first; n; n = n->next)
    for (uint32_t k = 0; k < n->n_outputs; k++)
      if (n->outputs[k]) DML_RETURN_IF_ERROR(name_value(nm, n->outputs[k]));
  g->name = strdup(f->name ? f->name : "main");
  if (!g->name) return oom();
  for (uint32_t i = 0; i < f->n_args; i++) {
    const dml_ir_value_t *v = f->args[i];
    if (!PUSH(g->input, g->n_input, value_info(m, nm->names[v->id], &v->type)))
      return oom();
  }
  /* Parameters and state become initializers; the other globals (a
   * Dropout's ratio, Gelu's constants) Constant nodes, as PyTorch writes
   * them, so that an importer or trainer does not take them for weights. */
  for (uint32_t i = 0; i < m->n_globals; i++) {
    const dml_ir_value_t *v = m->globals[i];
    if (!v->data && v->data_bytes) continue;
    int64_t dims[DML_MAX_RANK];
    for (int32_t d = 0; d < v->type.rank; d++) dims[d] = v->type.dims[d].value;
    int weight = (v->global_flags & (DML_IR_GLOBAL_PARAM | DML_IR_GLOBAL_STATE)) != 0;
    Onnx__TensorProto *tp = tensor_proto(weight ? nm->names[v->id] : NULL, v->type.dtype,
                                         v->type.rank, dims, v->data, v->data_bytes);
    if (weight) {
      if (!PUSH(g->initializer, g->n_initializer, tp)) return oom();
      continue;
    }
    if (!push_constant(g, nm->names[v->id], tp, dup_name(nm, v))) return oom();
  }
  for (const dml_ir_node_t *n = f->first; n; n = n->next) {
    const onnx_op_entry_t *e = onnx_op_export_entry(n->op, opset);
    Onnx__NodeProto *np = (Onnx__NodeProto *)malloc(sizeof *np);
    if (!np) return oom();
    onnx__node_proto__init(np);
    if (!PUSH(g->node, g->n_node, np)) {
      free(np);
      return oom();
    }
    np->op_type = strdup(e->name);
    np->name = strdup(n->name ? n->name : "");
    if (!np->op_type || !np->name) return oom();
    uint32_t n_in = n->n_inputs;
    while (n_in && !n->inputs[n_in - 1]) n_in--; /* trailing absent inputs */
    for (uint32_t k = 0; k < n_in; k++)
      if (!PUSH(np->input, np->n_input, dup_name(nm, n->inputs[k]))) return oom();
    for (uint32_t k = 0; k < n->n_outputs; k++)
      if (!PUSH(np->output, np->n_output, dup_name(nm, n->outputs[k]))) return oom();
    for (uint32_t k = 0; k < n->n_attrs; k++) {
      const dml_attr_t *a = &n->attrs[k];
      if (!axes_as_input(n, e, a)) {
        if (!PUSH(np->attribute, np->n_attribute, attr_proto(a))) return oom();
        continue;
      }
      /* a Constant "<first output>_axes" (made unique) before the node, as
       * its input 1 (the only inputs such an IR node has are data and the
       * absent axes) */
      size_t cap = strlen(np->output[0]) + 24;
      char *cname = (char *)malloc(cap);
      if (!cname) return oom();
      snprintf(cname, cap, "%s_axes", np->output[0]);
      for (int u = 0; name_seen(nm, cname); u++)
        snprintf(cname, cap, "%s_axes%d", np->output[0], u);
      int64_t na = (int64_t)a->n;
      Onnx__TensorProto *tp =
          tensor_proto(NULL, DML_DTYPE_I64, 1, &na, a->ints, a->n * sizeof(int64_t));
      if (!push_constant(g, cname, tp, cname)) return oom(); /* cname: its output */
      Onnx__NodeProto *c = g->node[g->n_node - 1];
      g->node[g->n_node - 1] = np;
      g->node[g->n_node - 2] = c;
      if (!PUSH(np->input, np->n_input, strdup(cname))) return oom();
    }
  }
  for (uint32_t i = 0; i < f->n_results; i++) {
    const dml_ir_value_t *v = f->results[i];
    if (v->type.dtype == DML_DTYPE_INVALID || !onnx_type_of(v->type.dtype)) {
      dml_status_t st = dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                                        "an output's dtype is not known");
      dml_status_detail(st, "output %u '%s' of function '%s': run shape inference first",
                        i, nm->names[v->id], f->name);
      return st;
    }
    if (!PUSH(g->output, g->n_output, value_info(m, nm->names[v->id], &v->type)))
      return oom();
  }
  return DML_OK;
}

dml_status_t dml_onnx_export_module(const dml_ir_module_t *m, const char *path,
                                    const dml_onnx_export_options_t *opts) {
  int64_t opset = opts && opts->opset ? opts->opset : DML_ONNX_EXPORT_OPSET;
  const char *fname = opts && opts->function ? opts->function : NULL;
  if (!m || !path)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "module and path are required");
  if (opset < 13 || opset > ONNX_OPSET_MAX) {
    dml_status_t st =
        dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "export opset out of range");
    dml_status_detail(st, "opset %lld: the IR's forms are ONNX's of opsets 13..%d",
                      (long long)opset, ONNX_OPSET_MAX);
    return st;
  }
  const dml_ir_function_t *f = NULL;
  if (fname) {
    f = dml_ir_module_find_function(m, fname);
  } else if (m->n_functions == 1) {
    f = m->functions[0];
  } else {
    f = dml_ir_module_find_function(m, "forward");
  }
  if (!f) {
    dml_status_t st = dml_status_make(DML_STATUS_NOT_FOUND, OP, "no such function");
    dml_status_detail(st, "function '%s' (the module has %u; name one)",
                      fname ? fname : "forward", m->n_functions);
    return st;
  }
  namer_t nm = {(char **)calloc(m->next_value_id + 1, sizeof(char *)),
                m->next_value_id + 1, NULL, 16};
  while (nm.n_set < 4 * (size_t)nm.n + 8) nm.n_set *= 2; /* values + axes */
  nm.set = (const char **)calloc(nm.n_set, sizeof(char *));
  Onnx__ModelProto model;
  onnx__model_proto__init(&model);
  Onnx__GraphProto *g = (Onnx__GraphProto *)malloc(sizeof *g);
  Onnx__OperatorSetIdProto *os = (Onnx__OperatorSetIdProto *)malloc(sizeof *os);
  dml_status_t st = DML_OK;
  uint8_t *buf = NULL;
  if (!nm.names || !nm.set || !g || !os) {
    free(g), free(os);
    st = oom();
    goto done;
  }
  onnx__graph_proto__init(g);
  onnx__operator_set_id_proto__init(os);
  model.graph = g;
  os->domain = strdup("");
  os->has_version = 1;
  os->version = opset;
  model.has_ir_version = 1;
  model.ir_version = 8; /* ONNX 1.10+: opsets up to 23 load in every runtime */
  model.producer_name = strdup(opts && opts->producer ? opts->producer : "dmlc");
  if (!PUSH(model.opset_import, model.n_opset_import, os) || !os->domain ||
      !model.producer_name) {
    st = oom();
    goto done;
  }
  st = build_graph(m, f, opset, &nm, g);
  if (st) goto done;
  size_t len = onnx__model_proto__get_packed_size(&model);
  buf = (uint8_t *)malloc(len ? len : 1);
  if (!buf) {
    st = oom();
    goto done;
  }
  onnx__model_proto__pack(&model, buf);
  const void *parts[1] = {buf};
  size_t sizes[1] = {len};
  st = dml_file_write_atomic(OP, path, parts, sizes, 1);
done:
  free(buf);
  /* every field was malloc'd: the protobuf-c free of each message */
  for (size_t i = 0; i < model.n_opset_import; i++)
    protobuf_c_message_free_unpacked(&model.opset_import[i]->base, NULL);
  free(model.opset_import);
  if (model.graph) protobuf_c_message_free_unpacked(&model.graph->base, NULL);
  free(model.producer_name);
  for (uint32_t i = 0; nm.names && i < nm.n; i++) free(nm.names[i]);
  free(nm.names);
  free(nm.set);
  return st;
}
