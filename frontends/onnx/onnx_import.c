/*
 * onnx_import.c — ONNX ModelProto -> dmlc IR module.
 *
 * The bytes are untrusted: a bounded wire-format scan runs before
 * protobuf-c's unpacker (which recurses once per nesting level), every name
 * is checked before use, and nodes are imported in a topological order
 * computed here (ONNX requires sorted graphs; exporters do not always
 * comply).
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dml_file.h"
#include "onnx_internal.h"

#define ONNX_MAX_NESTING 64      /* message nesting accepted by the scan */
#define ONNX_MAX_LISTED_OPS 64   /* op types named in one error's reason */
#define ONNX_MAX_DETAIL_LINES 64 /* node lines in one error's details */

/* ==== name map ========================================================== */

static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ull;
  return h;
}

onnx_map_entry_t *onnx_map_find(const onnx_map_t *map, const char *key) {
  if (!map->cap) return NULL;
  size_t mask = map->cap - 1;
  for (size_t i = (size_t)hash_str(key) & mask;; i = (i + 1) & mask) {
    onnx_map_entry_t *e = &map->slots[i];
    if (!e->key) return NULL;
    if (strcmp(e->key, key) == 0) return e;
  }
}

onnx_map_entry_t *onnx_map_insert(onnx_map_t *map, const char *key, int *out_inserted) {
  onnx_map_entry_t *e = onnx_map_find(map, key);
  if (e) {
    if (out_inserted) *out_inserted = 0;
    return e;
  }
  if ((map->count + 1) * 2 > map->cap) {
    size_t cap = map->cap ? map->cap * 2 : 64;
    onnx_map_entry_t *slots = (onnx_map_entry_t *)calloc(cap, sizeof(*slots));
    if (!slots) return NULL;
    for (size_t i = 0; i < map->cap; i++) {
      if (!map->slots[i].key) continue;
      size_t j = (size_t)hash_str(map->slots[i].key) & (cap - 1);
      while (slots[j].key) j = (j + 1) & (cap - 1);
      slots[j] = map->slots[i];
    }
    free(map->slots);
    map->slots = slots;
    map->cap = cap;
  }
  size_t mask = map->cap - 1, i = (size_t)hash_str(key) & mask;
  while (map->slots[i].key) i = (i + 1) & mask;
  e = &map->slots[i];
  e->key = key;
  e->val = NULL;
  e->aux = -1;
  map->count++;
  if (out_inserted) *out_inserted = 1;
  return e;
}

void onnx_map_free(onnx_map_t *map) {
  free(map->slots);
  memset(map, 0, sizeof(*map));
}

/* ==== small helpers ===================================================== */

static dml_status_t oom(void) {
  return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, ONNX_ERR_OP, "out of memory");
}

static int is_empty(const char *s) {
  return !s || !*s;
}

const char *onnx_node_label(const Onnx__NodeProto *np, char *buf, size_t cap) {
  const char *op = is_empty(np->op_type) ? "?" : np->op_type;
  if (!is_empty(np->name))
    snprintf(buf, cap, "node '%s' (%s)", np->name, op);
  else if (np->n_output && !is_empty(np->output[0]))
    snprintf(buf, cap, "node producing '%s' (%s)", np->output[0], op);
  else
    snprintf(buf, cap, "unnamed node (%s)", op);
  return buf;
}

dml_status_t onnx_emit(onnx_ctx_t *ctx, dml_op_t op, const char *name, uint32_t n_in,
                       dml_ir_value_t *const *in, uint32_t n_out,
                       dml_ir_node_t **out_node) {
  return dml_ir_node_create(ctx->f, op, is_empty(name) ? NULL : name, n_in, in, n_out,
                            NULL, out_node);
}

dml_status_t onnx_define(onnx_ctx_t *ctx, const char *name, dml_ir_value_t *v) {
  onnx_map_entry_t *e = onnx_map_insert(&ctx->names, name, NULL);
  if (!e) return oom();
  e->val = v;
  return DML_OK;
}

dml_status_t onnx_bind_outputs(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                               dml_ir_node_t *node) {
  for (uint32_t i = 0; i < node->n_outputs && i < np->n_output; i++) {
    const char *name = np->output[i];
    if (is_empty(name)) continue;
    dml_ir_value_t *v = node->outputs[i];
    v->name = dml_ir_strdup(ctx->m, name);
    if (!v->name) return oom();
    DML_RETURN_IF_ERROR(onnx_define(ctx, name, v));
  }
  return DML_OK;
}

const char *onnx_unique_name(onnx_ctx_t *ctx, const char *base) {
  size_t len = strlen(base);
  char *buf = (char *)malloc(len + 24);
  if (!buf) return NULL;
  memcpy(buf, base, len + 1);
  /* Names are never given back: the suffixes tried before stay taken. */
  onnx_map_entry_t *next = onnx_map_find(&ctx->name_next, base);
  if (!next) {
    const char *key = dml_ir_strdup(ctx->m, base); /* the map keeps the pointer */
    next = key ? onnx_map_insert(&ctx->name_next, key, NULL) : NULL;
  }
  if (!next) {
    free(buf);
    return NULL;
  }
  unsigned k = next->aux > 0 ? (unsigned)next->aux : 1;
  if (k > 1) snprintf(buf + len, 24, "_%u", k - 1);
  for (; onnx_map_find(&ctx->names, buf) || dml_ir_module_find_global(ctx->m, buf); k++)
    snprintf(buf + len, 24, "_%u", k);
  next->aux = (int64_t)k;
  const char *name = dml_ir_strdup(ctx->m, buf);
  free(buf);
  if (!name || !onnx_map_insert(&ctx->names, name, NULL)) return NULL;
  return name;
}

const Onnx__AttributeProto *onnx_attr(const Onnx__NodeProto *np, const char *name) {
  for (size_t i = 0; i < np->n_attribute; i++)
    if (np->attribute[i]->name && strcmp(np->attribute[i]->name, name) == 0)
      return np->attribute[i];
  return NULL;
}

Onnx__AttributeProto__AttributeType onnx_attr_type(const Onnx__AttributeProto *a) {
  if (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED)
    return a->type;
  if (a->n_floats) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
  if (a->n_ints) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
  if (a->n_strings) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
  if (a->n_tensors) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS;
  if (a->n_graphs) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS;
  if (a->t) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
  if (a->g) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
  if (a->sparse_tensor) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR;
  if (a->has_s) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
  if (a->has_f) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
  if (a->has_i) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
  return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
}

/* ---- attribute types (onnx_attr_types.def, from onnx's schemas) ---- */

enum {
  ONNX_AT_FLOAT = 1u << 1,
  ONNX_AT_INT = 1u << 2,
  ONNX_AT_STRING = 1u << 3,
  ONNX_AT_TENSOR = 1u << 4,
  ONNX_AT_GRAPH = 1u << 5,
  ONNX_AT_FLOATS = 1u << 6,
  ONNX_AT_INTS = 1u << 7,
  ONNX_AT_STRINGS = 1u << 8,
  ONNX_AT_TENSORS = 1u << 9,
  ONNX_AT_GRAPHS = 1u << 10,
  ONNX_AT_SPARSE_TENSOR = 1u << 11,
  ONNX_AT_SPARSE_TENSORS = 1u << 12,
  ONNX_AT_TYPE_PROTO = 1u << 13,
  ONNX_AT_TYPE_PROTOS = 1u << 14,
};

typedef struct {
  const char *domain, *op, *attr;
  unsigned types; /* ONNX_AT_* bits */
} attr_types_t;

static const attr_types_t k_attr_types[] = {
#define ONNX_ATTR_TYPES(domain, op, attr, types) {domain, op, attr, types},
#include "onnx_attr_types.def"
#undef ONNX_ATTR_TYPES
};

static int attr_types_cmp(const void *key, const void *elem) {
  const attr_types_t *k = (const attr_types_t *)key, *e = (const attr_types_t *)elem;
  int c = strcmp(k->domain, e->domain);
  if (!c) c = strcmp(k->op, e->op);
  if (!c) c = strcmp(k->attr, e->attr);
  return c;
}

/* "FLOAT", "INTS", ... for an AttributeProto type (ONNX's enum names). */
static const char *attr_type_word(unsigned t) {
  static const char *const k[] = {
      "UNDEFINED",      "FLOAT",      "INT",        "STRING",  "TENSOR", "GRAPH",
      "FLOATS",         "INTS",       "STRINGS",    "TENSORS", "GRAPHS", "SPARSE_TENSOR",
      "SPARSE_TENSORS", "TYPE_PROTO", "TYPE_PROTOS"};
  return t < sizeof k / sizeof k[0] ? k[t] : "UNDEFINED";
}

dml_status_t onnx_check_attr_types(const Onnx__NodeProto *np) {
  const char *dom =
      np->domain && np->domain[0] && strcmp(np->domain, "ai.onnx") ? np->domain : "";
  if (!np->op_type) return DML_OK;
  for (size_t i = 0; i < np->n_attribute; i++) {
    const Onnx__AttributeProto *a = np->attribute[i];
    if (!a->name || !a->name[0] || (a->ref_attr_name && a->ref_attr_name[0])) continue;
    attr_types_t key = {dom, np->op_type, a->name, 0};
    const attr_types_t *e = (const attr_types_t *)bsearch(
        &key, k_attr_types, sizeof k_attr_types / sizeof k_attr_types[0],
        sizeof k_attr_types[0], attr_types_cmp);
    if (!e) continue; /* unknown op or attribute: check_supported() names it */
    unsigned t = (unsigned)onnx_attr_type(a);
    if (t < 32 && (e->types & (1u << t))) continue;
    char want[160], label[300];
    size_t k = 0;
    want[0] = 0;
    for (unsigned b = 1; b < 15 && k < sizeof want; b++)
      if (e->types & (1u << b))
        k += (size_t)snprintf(want + k, sizeof want - k, "%s%s", k ? " or " : "",
                              attr_type_word(b));
    onnx_node_label(np, label, sizeof label);
    return dml_status_detail(
        dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                        "%s: attribute '%s' has type %s, the ONNX spec of %s says %s",
                        label, a->name, attr_type_word(t), np->op_type, want),
        "fix the exporter or the model; dmlc does not guess a value of another type");
  }
  return DML_OK;
}

static int in_list(const char *const *list, const char *s) {
  for (; list && *list; list++)
    if (strcmp(*list, s) == 0) return 1;
  return 0;
}

/* A NUL-terminated malloc'd copy of protobuf bytes. */
static char *bytes_to_cstr(const ProtobufCBinaryData *b) {
  char *s = (char *)malloc(b->len + 1);
  if (!s) return NULL;
  if (b->len) memcpy(s, b->data, b->len);
  s[b->len] = '\0';
  return s;
}

static dml_status_t copy_attr(onnx_ctx_t *ctx, dml_ir_node_t *node,
                              const Onnx__NodeProto *np, const Onnx__AttributeProto *a) {
  const char *name = a->name;
  dml_status_t st = DML_OK;
  switch (onnx_attr_type(a)) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
      return dml_ir_node_set_attr_float(node, name, (double)a->f);
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
      return dml_ir_node_set_attr_int(node, name, a->i);
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: {
      char *s = bytes_to_cstr(&a->s);
      if (!s) return oom();
      st = dml_ir_node_set_attr_string(node, name, s);
      free(s);
      return st;
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
      return dml_ir_node_set_attr_ints(node, name, a->ints, a->n_ints);
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: {
      double *v = (double *)malloc(sizeof(double) * (a->n_floats + 1));
      if (!v) return oom();
      for (size_t i = 0; i < a->n_floats; i++) v[i] = (double)a->floats[i];
      st = dml_ir_node_set_attr_floats(node, name, v, a->n_floats);
      free(v);
      return st;
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: {
      char **v = (char **)calloc(a->n_strings + 1, sizeof(char *));
      if (!v) return oom();
      for (size_t i = 0; i < a->n_strings && !st; i++)
        if (!(v[i] = bytes_to_cstr(&a->strings[i]))) st = oom();
      if (!st)
        st = dml_ir_node_set_attr_strings(node, name, (const char *const *)v,
                                          a->n_strings);
      for (size_t i = 0; i < a->n_strings; i++) free(v[i]);
      free(v);
      return st;
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: {
      char what[256], label[200];
      snprintf(what, sizeof(what), "attribute '%s' of %s", name,
               onnx_node_label(np, label, sizeof(label)));
      if (!a->t)
        return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                               "%s has no tensor", what);
      dml_tensor_t t;
      void *data = NULL;
      size_t bytes = 0;
      DML_RETURN_IF_ERROR(
          onnx_tensor_decode(a->t, ctx->base_dir, what, &t, &data, &bytes));
      st = dml_ir_node_set_attr_tensor(node, name, &t);
      free(data);
      return st;
    }
    default: {
      char label[200];
      return dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                             "attribute '%s' of %s has an unsupported type", name,
                             onnx_node_label(np, label, sizeof(label)));
    }
  }
}

dml_status_t onnx_copy_attrs(onnx_ctx_t *ctx, dml_ir_node_t *node,
                             const Onnx__NodeProto *np, const char *const *skip) {
  for (size_t i = 0; i < np->n_attribute; i++) {
    const Onnx__AttributeProto *a = np->attribute[i];
    if (is_empty(a->name) || in_list(skip, a->name)) continue;
    DML_RETURN_IF_ERROR(copy_attr(ctx, node, np, a));
  }
  return DML_OK;
}

dml_status_t onnx_const_i64(onnx_ctx_t *ctx, const char *base, const int64_t *v, size_t n,
                            dml_ir_value_t **out_value) {
  const char *name = onnx_unique_name(ctx, base);
  if (!name) return oom();
  int64_t dims[1] = {(int64_t)n};
  dml_type_t t = dml_type_static(DML_DTYPE_I64, 1, dims);
  static const int64_t empty = 0;
  return dml_ir_module_add_global(ctx->m, name, &t,
                                  n ? (const void *)v : (const void *)&empty,
                                  n * sizeof(int64_t), 0, out_value);
}

dml_status_t onnx_const_float(onnx_ctx_t *ctx, const char *base, dml_dtype_t dt,
                              const double *v, size_t n, int scalar,
                              dml_ir_value_t **out_value) {
  const char *name = onnx_unique_name(ctx, base);
  if (!name) return oom();
  size_t es = dml_dtype_size(dt);
  void *buf = calloc(n ? n : 1, es ? es : 1);
  if (!buf) return oom();
  for (size_t i = 0; i < n; i++) dml_store_f64(dt, buf, i, v[i]);
  int64_t dims[1] = {(int64_t)n};
  dml_type_t t = dml_type_static(dt, scalar ? 0 : 1, dims);
  dml_status_t st = dml_ir_module_add_global(ctx->m, name, &t, buf, n * es, 0, out_value);
  free(buf);
  return st;
}

/* ==== wire-format scan ================================================== */
/* Walks the protobuf encoding with the generated descriptors, checking that
 * every length fits and nesting stays under ONNX_MAX_NESTING, so that
 * protobuf-c's recursive unpacker only ever sees bounded input. */

static int read_varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*pos >= len) return -1;
    uint8_t b = p[(*pos)++];
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *out = v;
      return 0;
    }
  }
  return -1;
}

static dml_status_t data_loss(size_t at, const char *what) {
  return dml_status_detail(
      dml_status_make(DML_STATUS_DATA_LOSS, ONNX_ERR_OP,
                      "not a valid ONNX model: malformed or truncated protobuf"),
      "at byte %zu: %s", at, what);
}

static dml_status_t scan_message(const uint8_t *p, size_t len,
                                 const ProtobufCMessageDescriptor *d, int depth,
                                 size_t base) {
  if (depth > ONNX_MAX_NESTING) return data_loss(base, "messages nested too deeply");
  size_t pos = 0;
  while (pos < len) {
    size_t start = pos;
    uint64_t tag, v;
    if (read_varint(p, len, &pos, &tag))
      return data_loss(base + start, "truncated field tag");
    uint32_t field = (uint32_t)(tag >> 3);
    if (field == 0 || (tag >> 3) > 0x1fffffff)
      return data_loss(base + start, "invalid field number");
    switch (tag & 7) {
      case 0:
        if (read_varint(p, len, &pos, &v))
          return data_loss(base + start, "truncated varint");
        break;
      case 1:
        if (len - pos < 8) return data_loss(base + start, "truncated 64-bit field");
        pos += 8;
        break;
      case 5:
        if (len - pos < 4) return data_loss(base + start, "truncated 32-bit field");
        pos += 4;
        break;
      case 2: {
        if (read_varint(p, len, &pos, &v))
          return data_loss(base + start, "truncated length");
        if (v > len - pos)
          return data_loss(base + start, "length beyond the end of the data");
        const ProtobufCFieldDescriptor *fd =
            d ? protobuf_c_message_descriptor_get_field(d, field) : NULL;
        if (fd && fd->type == PROTOBUF_C_TYPE_MESSAGE)
          DML_RETURN_IF_ERROR(scan_message(
              p + pos, (size_t)v, (const ProtobufCMessageDescriptor *)fd->descriptor,
              depth + 1, base + pos));
        pos += (size_t)v;
        break;
      }
      default: return data_loss(base + start, "unsupported wire type");
    }
  }
  return DML_OK;
}

dml_status_t onnx_scan_bytes(const void *data, size_t len,
                             const ProtobufCMessageDescriptor *d) {
  return scan_message((const uint8_t *)data, len, d, 0, 0);
}

/* ==== unsupported ops and attributes (one error for all) ================== */

typedef struct str_list {
  char **items;
  size_t n, cap;
} str_list_t;

static int str_list_push(str_list_t *l, char *s) {
  if (!s) return -1;
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 16;
    char **items = (char **)realloc(l->items, cap * sizeof(char *));
    if (!items) {
      free(s);
      return -1;
    }
    l->items = items;
    l->cap = cap;
  }
  l->items[l->n++] = s;
  return 0;
}

static char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *str_printf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return NULL;
  char *s = (char *)malloc((size_t)n + 1);
  if (!s) return NULL;
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return s;
}

static void str_list_free(str_list_t *l) {
  for (size_t i = 0; i < l->n; i++) free(l->items[i]);
  free(l->items);
  memset(l, 0, sizeof(*l));
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int is_default_domain(const char *d) {
  return is_empty(d) || strcmp(d, "ai.onnx") == 0;
}

/* The version of non-default `domain` in the model's opset_import; -1 when
 * it is not imported. */
static int64_t domain_version(const Onnx__ModelProto *mp, const char *domain) {
  for (size_t i = 0; mp && domain && i < mp->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *o = mp->opset_import[i];
    if (!is_empty(o->domain) && strcmp(o->domain, domain) == 0)
      return o->has_version ? o->version : 0;
  }
  return -1;
}

/* The importer of node np: a default-domain op at the model's `opset`, an
 * op of another domain at the version opset_import gives that domain. */
static const onnx_op_entry_t *node_entry(const Onnx__ModelProto *mp, int64_t opset,
                                         const Onnx__NodeProto *np) {
  const char *op_type = is_empty(np->op_type) ? "" : np->op_type;
  if (is_default_domain(np->domain)) return onnx_op_lookup(op_type, opset);
  int64_t v = domain_version(mp, np->domain);
  return v < 0 ? NULL : onnx_op_lookup_domain(np->domain, op_type, v);
}

/* "opset 13", or "no default-domain opset" for models of other domains only. */
static const char *opset_label(int64_t opset, char *buf, size_t cap) {
  if (opset > 0)
    snprintf(buf, cap, "opset %lld", (long long)opset);
  else
    snprintf(buf, cap, "no default-domain opset");
  return buf;
}

static const char *attr_type_name(Onnx__AttributeProto__AttributeType t) {
  switch (t) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH: return "GRAPH";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS: return "GRAPHS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS: return "TENSORS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR: return "SPARSE_TENSOR";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS: return "SPARSE_TENSORS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO: return "TYPE_PROTO";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS: return "TYPE_PROTOS";
    default: return "UNDEFINED";
  }
}

static int attr_type_supported(Onnx__AttributeProto__AttributeType t) {
  switch (t) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: return 1;
    default: return 0;
  }
}

/* "INT4" or "UINT4" when `name` is an initializer of g of that ONNX data
 * type (whose 4-bit data the importer widens to i8/u8, onnx_tensor.c; a
 * Constant of those types is refused by onnx_op_check), else NULL. */
static const char *four_bit_init(const Onnx__GraphProto *g, const char *name) {
  for (size_t i = 0; i < g->n_initializer; i++) {
    const Onnx__TensorProto *t = g->initializer[i];
    if (is_empty(t->name) || strcmp(t->name, name) || !t->has_data_type) continue;
    return t->data_type == 22 ? "INT4" : t->data_type == 21 ? "UINT4" : NULL;
  }
  return NULL;
}

/* Lists every node whose op type (with its domain and the model's opset) has
 * no importer, and every attribute or attribute value an importer cannot
 * map, in one UNIMPLEMENTED status. */
static dml_status_t check_supported(const Onnx__ModelProto *mp, const Onnx__GraphProto *g,
                                    int64_t opset) {
  str_list_t ops = {0}, details = {0}, attrs = {0};
  onnx_map_t seen = {0};
  size_t n_bad_nodes = 0, n_bad_attrs = 0;
  /* The graph's nodes and those of If branches (recursively). */
  const Onnx__NodeProto **all = NULL;
  size_t n_all = 0;
  dml_status_t st = onnx_collect_nodes(g, &all, &n_all);
  if (st) return st;
  int failed = 0;
  for (size_t i = 0; i < n_all && !failed; i++) {
    const Onnx__NodeProto *np = all[i];
    char label[300], why[200];
    onnx_node_label(np, label, sizeof(label));
    const char *op_type = is_empty(np->op_type) ? "" : np->op_type;
    const onnx_op_entry_t *e = node_entry(mp, opset, np);
    if (!e) {
      char *key = is_default_domain(np->domain)
                      ? str_printf("%s", op_type)
                      : str_printf("%s.%s", np->domain, op_type);
      if (!key) {
        failed = 1;
        break;
      }
      int inserted = 0;
      if (!onnx_map_insert(&seen, key, &inserted)) {
        free(key);
        failed = 1;
        break;
      }
      if (inserted) {
        if (str_list_push(&ops, key)) failed = 1;
      } else {
        free(key);
      }
      if (n_bad_nodes++ < ONNX_MAX_DETAIL_LINES) {
        int64_t dv = is_default_domain(np->domain) ? 0 : domain_version(mp, np->domain);
        if (!is_default_domain(np->domain) && !onnx_domain_known(np->domain))
          failed |= str_list_push(&details, str_printf("%s: domain '%s' is not supported",
                                                       label, np->domain));
        else if (!is_default_domain(np->domain) && dv < 0)
          failed |= str_list_push(
              &details, str_printf("%s: domain '%s' is not in the model's opset_import",
                                   label, np->domain));
        else if (!is_default_domain(np->domain))
          failed |= str_list_push(
              &details,
              str_printf("%s: op %s of domain '%s' version %lld is not supported", label,
                         op_type, np->domain, (long long)dv));
        else
          failed |= str_list_push(&details, str_printf("%s", label));
      }
      continue;
    }
    for (size_t k = 0; k < np->n_attribute; k++) {
      const Onnx__AttributeProto *a = np->attribute[k];
      const char *an = is_empty(a->name) ? "" : a->name;
      Onnx__AttributeProto__AttributeType at = onnx_attr_type(a);
      const char *problem = NULL;
      char buf[160];
      if (!onnx_op_has_attr(e, an)) {
        problem = "unknown attribute";
      } else if (!is_empty(a->ref_attr_name)) {
        problem = "attribute referring to a function attribute";
      } else if (!attr_type_supported(at) && strcmp(an, "sparse_value") != 0 &&
                 !((e->importer == onnx_imp_if || e->importer == onnx_imp_seq ||
                    e->importer == onnx_imp_loop || e->importer == onnx_imp_scan) &&
                   at == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH) &&
                 !(e->importer == onnx_imp_optional &&
                   at == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO)) {
        /* (Constant's sparse_value is reported by onnx_op_check.) */
        snprintf(buf, sizeof(buf), "attribute of type %s", attr_type_name(at));
        problem = buf;
      }
      if (!problem) continue;
      n_bad_attrs++;
      failed |= str_list_push(&attrs, str_printf("%s.%s", op_type, an));
      if (n_bad_nodes + n_bad_attrs <= ONNX_MAX_DETAIL_LINES)
        failed |= str_list_push(&details, str_printf("%s: %s '%s'", label, problem, an));
    }
    /* QuantizeLinear to a 4-bit type (its y_zero_point's): the widened
     * zero point would quantize into the 8-bit range, not saturate at 4 */
    const char *q4 =
        e->op == DML_OP_QUANTIZE_LINEAR && np->n_input > 2 && !is_empty(np->input[2])
            ? four_bit_init(g, np->input[2])
            : NULL;
    if (q4)
      snprintf(why, sizeof why,
               "y_zero_point of type %s (quantizing to 4 bits: dmlc has no 4-bit dtype; "
               "4-bit weights for DequantizeLinear import)",
               q4);
    if (q4 || onnx_op_check(e, np, why, sizeof(why))) {
      n_bad_attrs++;
      failed |= str_list_push(&attrs, str_printf("%s %s", op_type, why));
      if (n_bad_nodes + n_bad_attrs <= ONNX_MAX_DETAIL_LINES)
        failed |= str_list_push(&details, str_printf("%s: unsupported %s", label, why));
    }
  }
  if (failed) {
    st = oom();
    goto free_lists;
  }
  if (!ops.n && !n_bad_attrs) goto free_lists;

  if (ops.n) qsort(ops.items, ops.n, sizeof(char *), cmp_str);
  /* The reason: "model uses 2 unsupported ops (opset 13): Foo, Bar" and/or
   * "1 unsupported attribute: Resize mode='cubic'". */
  size_t cap = 256;
  for (size_t i = 0; i < ops.n && i < ONNX_MAX_LISTED_OPS; i++)
    cap += strlen(ops.items[i]) + 2;
  for (size_t i = 0; i < attrs.n && i < ONNX_MAX_LISTED_OPS; i++)
    cap += strlen(attrs.items[i]) + 2;
  char *reason = (char *)malloc(cap);
  if (!reason) {
    st = oom();
    goto free_lists;
  }
  size_t len = 0;
  char osl[48];
  opset_label(opset, osl, sizeof(osl));
  if (ops.n) {
    len += (size_t)snprintf(reason + len, cap - len,
                            "model uses %zu unsupported op%s (%s): ", ops.n,
                            ops.n == 1 ? "" : "s", osl);
    for (size_t i = 0; i < ops.n && i < ONNX_MAX_LISTED_OPS; i++)
      len +=
          (size_t)snprintf(reason + len, cap - len, "%s%s", i ? ", " : "", ops.items[i]);
    if (ops.n > ONNX_MAX_LISTED_OPS)
      len += (size_t)snprintf(reason + len, cap - len, ", and %zu more",
                              ops.n - ONNX_MAX_LISTED_OPS);
  }
  if (n_bad_attrs) {
    if (ops.n)
      len += (size_t)snprintf(reason + len, cap - len,
                              "; and %zu unsupported attribute%s: ", n_bad_attrs,
                              n_bad_attrs == 1 ? "" : "s");
    else
      len +=
          (size_t)snprintf(reason + len, cap - len,
                           "model uses %zu unsupported attribute%s (%s): ", n_bad_attrs,
                           n_bad_attrs == 1 ? "" : "s", osl);
    for (size_t i = 0; i < attrs.n && i < ONNX_MAX_LISTED_OPS; i++)
      len += (size_t)snprintf(reason + len, cap - len, "%s%s", i ? ", " : "",
                              attrs.items[i]);
    if (attrs.n > ONNX_MAX_LISTED_OPS) snprintf(reason + len, cap - len, ", ...");
  }
  st = dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP, "%s", reason);
  free(reason);
  for (size_t i = 0; i < details.n; i++)
    st = dml_status_detail(st, "%s", details.items[i]);
  if (n_bad_nodes + n_bad_attrs > details.n)
    st = dml_status_detail(st, "... and %zu more", n_bad_nodes + n_bad_attrs - details.n);
free_lists:
  free((void *)all);
  onnx_map_free(&seen);
  str_list_free(&ops);
  str_list_free(&attrs);
  str_list_free(&details);
  return st;
}

/* ==== graph import ====================================================== */

static dml_status_t invalid(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static dml_status_t invalid(const char *fmt, ...) {
  char reason[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof(reason), fmt, ap);
  va_end(ap);
  return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP, "%s", reason);
}

/* Finds the default-domain opset; 0 when the model imports only other
 * domains (import_model then refuses default-domain nodes). */
static dml_status_t model_opset(const Onnx__ModelProto *mp, int64_t *out_opset) {
  int64_t opset = -1;
  for (size_t i = 0; i < mp->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *o = mp->opset_import[i];
    if (!is_default_domain(o->domain)) continue;
    int64_t v = o->has_version ? o->version : 0;
    if (opset >= 0 && opset != v)
      return dml_status_detail(
          dml_status_make(
              DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
              "model imports the default ONNX domain twice, with opsets %lld and "
              "%lld",
              (long long)opset, (long long)v),
          "opset_import lists \"\" and \"ai.onnx\" separately");
    opset = v;
  }
  if (opset < 0) {
    for (size_t i = 0; i < mp->n_opset_import; i++)
      if (onnx_domain_known(mp->opset_import[i]->domain)) {
        *out_opset = 0;
        return DML_OK;
      }
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "model declares no opset for the default ONNX domain "
                           "(opset_import is missing)");
  }
  if (opset < ONNX_OPSET_MIN || opset > ONNX_OPSET_MAX)
    return dml_status_detail(
        dml_status_make(
            DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
            "model uses opset %lld of the default ONNX domain; supported opsets "
            "are %d..%d",
            (long long)opset, ONNX_OPSET_MIN, ONNX_OPSET_MAX),
        "re-export the model with an opset in %d..%d (e.g. torch.onnx.export(..., "
        "opset_version=23) or onnx.version_converter)",
        ONNX_OPSET_MIN, ONNX_OPSET_MAX);
  *out_opset = opset;
  return DML_OK;
}

/* Registers every tensor name of the graph: initializers, inputs, node
 * outputs (aux = producing node). A name defined twice is an error. */
static dml_status_t register_names(onnx_ctx_t *ctx, const Onnx__GraphProto *g) {
  for (size_t i = 0; i < g->n_initializer; i++) {
    const char *name = g->initializer[i]->name;
    if (is_empty(name))
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                             "initializer #%zu has no name", i);
    int inserted = 0;
    onnx_map_entry_t *e = onnx_map_insert(&ctx->names, name, &inserted);
    if (!e) return oom();
    if (!inserted) return invalid("initializer '%s' is defined twice", name);
    e->aux = -2; /* initializer */
  }
  for (size_t i = 0; i < g->n_input; i++) {
    const char *name = g->input[i]->name;
    if (is_empty(name))
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                             "graph input #%zu has no name", i);
    int inserted = 0;
    onnx_map_entry_t *e = onnx_map_insert(&ctx->names, name, &inserted);
    if (!e) return oom();
    if (!inserted && e->aux != -2)
      return invalid("graph input '%s' is listed twice", name);
  }
  for (size_t i = 0; i < g->n_node; i++) {
    const Onnx__NodeProto *np = g->node[i];
    for (size_t k = 0; k < np->n_output; k++) {
      const char *name = np->output[k];
      if (is_empty(name)) continue;
      int inserted = 0;
      onnx_map_entry_t *e = onnx_map_insert(&ctx->names, name, &inserted);
      if (!e) return oom();
      if (!inserted) {
        char label[300];
        return dml_status_detail(invalid("tensor '%s' is defined twice", name),
                                 "%s defines it again",
                                 onnx_node_label(np, label, sizeof(label)));
      }
      e->aux = (int64_t)i;
    }
  }
  return DML_OK;
}

static dml_status_t check_references(onnx_ctx_t *ctx, const Onnx__GraphProto *g) {
  for (size_t i = 0; i < g->n_node; i++) {
    const Onnx__NodeProto *np = g->node[i];
    for (size_t k = 0; k < np->n_input; k++) {
      const char *name = np->input[k];
      if (is_empty(name) || onnx_map_find(&ctx->names, name)) continue;
      char label[300];
      onnx_node_label(np, label, sizeof(label));
      return dml_status_detail(
          dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                          "%s: input %zu names undefined tensor '%s'", label, k, name),
          "no node, graph input or initializer defines '%s'", name);
    }
  }
  for (size_t i = 0; i < g->n_output; i++) {
    const char *name = g->output[i]->name;
    if (is_empty(name))
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                             "graph output #%zu has no name", i);
    if (!onnx_map_find(&ctx->names, name))
      return invalid(
          "graph output '%s' is not defined by any node, graph input or "
          "initializer",
          name);
  }
  return DML_OK;
}

static dml_status_t import_initializers(onnx_ctx_t *ctx, const Onnx__GraphProto *g) {
  if (g->n_sparse_initializer)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                           "sparse initializers are not supported (%zu in the graph)",
                           g->n_sparse_initializer);
  for (size_t i = 0; i < g->n_initializer; i++) {
    const Onnx__TensorProto *tp = g->initializer[i];
    char what[512];
    snprintf(what, sizeof(what), "initializer '%s'", tp->name);
    dml_tensor_t t;
    void *data = NULL;
    size_t bytes = 0;
    DML_RETURN_IF_ERROR(onnx_tensor_decode(tp, ctx->base_dir, what, &t, &data, &bytes));
    dml_type_t type = dml_type_static(t.dtype, t.rank, t.dims);
    uint32_t flags = dml_dtype_is_float(t.dtype) ? DML_IR_GLOBAL_PARAM : 0;
    static const uint8_t empty = 0;
    dml_ir_value_t *gv = NULL;
    dml_status_t st = dml_ir_module_add_global(ctx->m, tp->name, &type,
                                               t.data ? t.data : (const void *)&empty,
                                               bytes, flags, &gv);
    free(data);
    DML_RETURN_IF_ERROR(dml_status_annotate(st, "importing %s", what));
    DML_RETURN_IF_ERROR(onnx_define(ctx, tp->name, gv));
  }
  return DML_OK;
}

/* The binding of graph input `name` in opts->bind, or NULL. */
static const dml_onnx_binding_t *find_binding(const dml_onnx_import_options_t *opts,
                                              const char *name) {
  for (size_t i = 0; opts && i < opts->n_bind; i++)
    if (opts->bind[i].name && strcmp(opts->bind[i].name, name) == 0)
      return &opts->bind[i];
  return NULL;
}

/* The shape override of graph input `name` in opts->input_shapes, or NULL;
 * INVALID_ARGUMENT in *out_st for an override that cannot apply. */
static const dml_onnx_input_shape_t *find_shape_override(
    const dml_onnx_import_options_t *opts, const char *name, dml_status_t *out_st) {
  const dml_onnx_input_shape_t *found = NULL;
  for (size_t i = 0; opts && i < opts->n_input_shapes; i++) {
    const dml_onnx_input_shape_t *o = &opts->input_shapes[i];
    if (!o->name || strcmp(o->name, name) != 0) continue;
    if (found) {
      *out_st = invalid("the shape of graph input '%s' is overridden twice", name);
      return NULL;
    }
    if (o->rank < 0 || o->rank > DML_MAX_RANK || (o->rank && !o->dims)) {
      *out_st = invalid("shape override of graph input '%s': rank %d is not in 0..%d",
                        name, (int)o->rank, DML_MAX_RANK);
      return NULL;
    }
    for (int32_t k = 0; k < o->rank; k++)
      if (o->dims[k] < 0) {
        *out_st = invalid("shape override of graph input '%s': dim %d is negative (%lld)",
                          name, (int)k, (long long)o->dims[k]);
        return NULL;
      }
    found = o;
  }
  return found;
}

/* The bound of symbol `name`: opts->dim_bounds by name, else `dflt`. */
static int64_t named_bound(const dml_onnx_import_options_t *opts, const char *name,
                           int64_t dflt) {
  for (size_t i = 0; opts && i < opts->n_dim_bounds; i++)
    if (opts->dim_bounds[i].name && strcmp(opts->dim_bounds[i].name, name) == 0)
      return opts->dim_bounds[i].bound;
  return dflt;
}

/* A dim_param of the form `K*name` or `name*K` (K a positive decimal
 * integer up to 2^31, name an identifier [A-Za-z_][A-Za-z0-9_]*, spaces
 * around either allowed), as PyTorch's dynamo exporter writes a dim it
 * knows to be a multiple of K ("2*h" for the H of pixel_unshuffle(x, 2)):
 * sets *k and copies the name into `name` (cap bytes) and returns 1; 0 for
 * any other spelling (h+1, floor(h/2), 2*h*w, ...), which stays one opaque
 * symbol named by the whole spelling. */
static int scaled_dim_param(const char *s, int64_t *k, char *name, size_t cap) {
  const char *star = strchr(s, '*');
  if (!star || strchr(star + 1, '*')) return 0;
  const char *part[2][2] = {{s, star}, {star + 1, s + strlen(s)}};
  int num = -1;
  int64_t kv = 0;
  for (int i = 0; i < 2; i++) { /* trim spaces */
    while (part[i][0] < part[i][1] && isspace((unsigned char)*part[i][0])) part[i][0]++;
    while (part[i][1] > part[i][0] && isspace((unsigned char)part[i][1][-1]))
      part[i][1]--;
    if (part[i][0] == part[i][1]) return 0;
  }
  for (int i = 0; i < 2 && num < 0; i++) {
    const char *p = part[i][0];
    int64_t v = 0;
    for (; p < part[i][1] && *p >= '0' && *p <= '9' && v <= (INT64_C(1) << 31); p++)
      v = v * 10 + (*p - '0');
    if (p == part[i][1]) num = i, kv = v;
  }
  if (num < 0 || kv < 1 || kv > (INT64_C(1) << 31)) return 0;
  const char *a = part[1 - num][0], *e = part[1 - num][1];
  if (!(isalpha((unsigned char)*a) || *a == '_') || (size_t)(e - a) >= cap) return 0;
  for (const char *p = a; p < e; p++)
    if (!(isalnum((unsigned char)*p) || *p == '_')) return 0;
  memcpy(name, a, (size_t)(e - a));
  name[e - a] = 0;
  *k = kv;
  return 1;
}

/* Whether `a` and `b` are equal once their spaces are dropped. */
static int same_spelling(const char *a, const char *b) {
  for (;;) {
    while (isspace((unsigned char)*a)) a++;
    while (isspace((unsigned char)*b)) b++;
    if (*a != *b) return 0;
    if (!*a) return 1;
    a++, b++;
  }
}

/* The --dim-bound entry whose name is `dim_param` spelled as in the model
 * (spaces aside), or NULL. */
static const dml_onnx_dim_bound_t *bound_by_spelling(
    const dml_onnx_import_options_t *opts, const char *dim_param) {
  for (size_t i = 0; opts && i < opts->n_dim_bounds; i++)
    if (opts->dim_bounds[i].name && same_spelling(opts->dim_bounds[i].name, dim_param))
      return &opts->dim_bounds[i];
  return NULL;
}

/* Whether some tensor graph input of `g` has the dim_param `spelling` of
 * the form K*name (scaled_dim_param). */
static int has_scaled_spelling(const Onnx__GraphProto *g, const char *spelling) {
  for (size_t i = 0; g && i < g->n_input; i++) {
    const Onnx__TypeProto *tp = g->input[i]->type;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
        !tp->tensor_type || !tp->tensor_type->shape)
      continue;
    const Onnx__TensorShapeProto *sh = tp->tensor_type->shape;
    for (size_t k = 0; k < sh->n_dim; k++) {
      const Onnx__TensorShapeProto__Dimension *d = sh->dim[k];
      char nm[128];
      int64_t kk = 0;
      if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
          !is_empty(d->dim_param) && same_spelling(d->dim_param, spelling) &&
          scaled_dim_param(d->dim_param, &kk, nm, sizeof nm))
        return 1;
    }
  }
  return 0;
}

/* Adds (or finds) the symbol of an input dim with bound `b`; a symbol that
 * two dims share keeps the smaller bound either gives (h and 2*h: each dim
 * within its own bound). */
static dml_status_t input_symbol(onnx_ctx_t *ctx, const char *name, int64_t b,
                                 int32_t *sym) {
  DML_RETURN_IF_ERROR(dml_ir_module_add_symbol(ctx->m, name, b, sym));
  if (ctx->m->symbols[*sym].bound > b) ctx->m->symbols[*sym].bound = b;
  return DML_OK;
}

/* The dim K * symbol(name) of graph input `in`'s dim `k`, whose dim_param
 * `spelling` is K*name (scaled_dim_param). Its bound: --dim-bound name=B,
 * else --dim-bound <spelling>=B as floor(B / K) (the dim at most B), else
 * the default bound `dflt` divided by K (at least 1). INVALID_ARGUMENT when
 * both spellings are bounded or the spelling's bound is below K. */
static dml_status_t scaled_input_dim(onnx_ctx_t *ctx, const char *in, size_t k,
                                     const char *spelling, int64_t K, const char *name,
                                     int64_t dflt, const dml_onnx_import_options_t *opts,
                                     dml_dim_t *out) {
  const dml_onnx_dim_bound_t *bs = bound_by_spelling(opts, spelling);
  int64_t bn = named_bound(opts, name, -1), b = dflt / K;
  if (bs && bn > 0 && K > 1)
    return invalid(
        "input '%s': dim %zu is %s; its bound is given twice (--dim-bound %s=%lld and "
        "%s=%lld); give one",
        in, k, spelling, name, (long long)bn, bs->name, (long long)bs->bound);
  if (bs && bs->bound < K)
    return invalid(
        "input '%s': dim %zu is %s, a multiple of %lld; the bound %s=%lld is below %lld "
        "(it bounds %s by %s/%lld, rounded down)",
        in, k, spelling, (long long)K, bs->name, (long long)bs->bound, (long long)K, name,
        bs->name, (long long)K);
  if (bn > 0) {
    b = bn;
  } else if (bs) {
    b = bs->bound / K;
  }
  if (b < 1) b = 1;
  int32_t sym = -1;
  DML_RETURN_IF_ERROR(input_symbol(ctx, name, b, &sym));
  out->value = K;
  out->sym = sym;
  return DML_OK;
}

/* Every opts->dim_bounds entry names a symbol of the imported inputs, once,
 * with a bound >= 1. */
static dml_status_t check_dim_bounds(const onnx_ctx_t *ctx,
                                     const dml_onnx_import_options_t *opts) {
  for (size_t i = 0; opts && i < opts->n_input_ranges; i++) {
    const char *in = opts->input_ranges[i].input;
    int found = 0;
    for (uint32_t a = 0; in && a < ctx->f->n_args && !found; a++)
      found = ctx->f->args[a]->name && strcmp(ctx->f->args[a]->name, in) == 0;
    if (!found)
      return invalid("a dim range names '%s', which is no input of the model",
                     in ? in : "(null)");
  }
  for (size_t i = 0; opts && i < opts->n_dim_bounds; i++) {
    const dml_onnx_dim_bound_t *d = &opts->dim_bounds[i];
    if (!d->name || d->bound < 1)
      return invalid("dim bound #%zu needs a symbol name and a bound >= 1", i);
    for (size_t j = 0; j < i; j++)
      if (opts->dim_bounds[j].name && strcmp(opts->dim_bounds[j].name, d->name) == 0)
        return invalid("the bound of symbolic dim '%s' is given twice", d->name);
    if (dml_ir_module_find_symbol(ctx->m, d->name) >= 0) continue;
    if (has_scaled_spelling(ctx->model ? ctx->model->graph : NULL, d->name)) continue;
    char list[512];
    size_t k = 0;
    list[0] = 0;
    for (uint32_t j = 0; j < ctx->m->n_symbols && k < sizeof list; j++)
      k += (size_t)snprintf(list + k, sizeof list - k, "%s'%s'", j ? ", " : "",
                            ctx->m->symbols[j].name);
    return invalid(
        "no graph input has a symbolic dim named '%s' (symbolic dims: %s; a dim_param "
        "K*name is bounded by name or by its own spelling)",
        d->name, k ? list : "none");
  }
  return DML_OK;
}

/* Applies opts->input_ranges of graph input `name` to `type` (`decl`: the
 * declared type, whose symbolic dims keep their symbols). */
static dml_status_t apply_ranges(onnx_ctx_t *ctx, const char *name,
                                 const dml_type_t *decl, dml_type_t *type,
                                 const dml_onnx_import_options_t *opts) {
  for (size_t i = 0; opts && i < opts->n_input_ranges; i++) {
    const dml_onnx_dim_range_t *r = &opts->input_ranges[i];
    if (!r->input || strcmp(r->input, name) != 0) continue;
    int32_t k = r->dim;
    int64_t lo = r->min > 0 ? r->min : 1, hi = r->max, step = r->step > 1 ? r->step : 1;
    if (k < 0 || k >= type->rank)
      return invalid("input '%s': a range for dim %d, but its rank is %d", name, (int)k,
                     (int)type->rank);
    int32_t sym = k < decl->rank ? decl->dims[k].sym : -1;
    if (k < decl->rank && sym < 0)
      return invalid(
          "input '%s': dim %d is declared static (%lld); a range [%lld:%lld] "
          "needs a symbolic dim",
          name, (int)k, (long long)decl->dims[k].value, (long long)lo, (long long)hi);
    /* A dim declared K*h (dim_param "2*h"): the range is the dim's, its step
     * a multiple of K (K when not given); the dim stays step * a symbol. */
    int64_t kd = k < decl->rank ? decl->dims[k].value : 1;
    if (kd > 1 && r->step <= 1) {
      step = kd;
      hi -= hi % kd;
    } else if (kd > 1 && step % kd != 0) {
      return invalid(
          "input '%s': dim %d is declared %lld*%s, a multiple of %lld; the step %lld of "
          "the range [%lld:%lld:%lld] must be a multiple of %lld too",
          name, (int)k, (long long)kd, ctx->m->symbols[sym].name, (long long)kd,
          (long long)step, (long long)lo, (long long)r->max, (long long)step,
          (long long)kd);
    }
    if (hi < 1 || lo > hi || hi % step != 0)
      return invalid(
          "input '%s': dim %d has the range [%lld:%lld:%lld] (needs 1 <= min "
          "<= max, max a multiple of the step)",
          name, (int)k, (long long)lo, (long long)hi, (long long)step);
    if (sym < 0) {
      char *nm = str_printf("%s_dim%d", name, (int)k);
      if (!nm) return oom();
      dml_status_t st = dml_ir_module_add_symbol(ctx->m, nm, hi, &sym);
      free(nm);
      DML_RETURN_IF_ERROR(st);
    }
    if (step > kd) { /* a multiple of step: step * "<sym>/<step/kd>" */
      char *nm = str_printf("%s/%lld", ctx->m->symbols[sym].name, (long long)(step / kd));
      if (!nm) return oom();
      dml_status_t st = dml_ir_module_add_symbol(ctx->m, nm, hi / step, &sym);
      free(nm);
      DML_RETURN_IF_ERROR(st);
    }
    if (step > 1) {
      hi /= step;
      lo = (lo + step - 1) / step;
    }
    ctx->m->symbols[sym].bound = hi;
    ctx->m->symbols[sym].min = lo;
    type->dims[k].value = step;
    type->dims[k].sym = sym;
  }
  return DML_OK;
}

/* Every override names a non-initializer graph input. */
static dml_status_t check_shape_overrides(onnx_ctx_t *ctx, const Onnx__GraphProto *g,
                                          const dml_onnx_import_options_t *opts) {
  for (size_t i = 0; opts && i < opts->n_input_shapes; i++) {
    const char *name = opts->input_shapes[i].name;
    if (!name) return invalid("shape override #%zu has no name", i);
    onnx_map_entry_t *e = onnx_map_find(&ctx->names, name);
    int is_input = 0;
    for (size_t k = 0; k < g->n_input && !is_input; k++)
      is_input = strcmp(g->input[k]->name, name) == 0;
    if (!is_input || (e && e->aux == -2))
      return invalid("cannot override the shape of '%s': it is not a graph input%s", name,
                     is_input ? " (it is an initializer)" : "");
  }
  return DML_OK;
}

/* Checks opts->bind: every name is a distinct non-initializer graph input
 * and every value a tensor. */
static dml_status_t check_bindings(onnx_ctx_t *ctx, const Onnx__GraphProto *g,
                                   const dml_onnx_import_options_t *opts) {
  for (size_t i = 0; opts && i < opts->n_bind; i++) {
    const dml_onnx_binding_t *b = &opts->bind[i];
    if (!b->name || !b->value) return invalid("bind #%zu has no name or no tensor", i);
    for (size_t j = 0; j < i; j++)
      if (opts->bind[j].name && strcmp(opts->bind[j].name, b->name) == 0)
        return invalid("graph input '%s' is bound twice", b->name);
    onnx_map_entry_t *e = onnx_map_find(&ctx->names, b->name);
    int is_input = 0;
    for (size_t k = 0; k < g->n_input && !is_input; k++)
      is_input = strcmp(g->input[k]->name, b->name) == 0;
    if (!is_input || (e && e->aux == -2)) {
      dml_status_t st =
          invalid("cannot bind '%s': it is not a graph input%s", b->name,
                  is_input ? " (it is an initializer, already a constant)" : "");
      for (size_t k = 0; k < g->n_input; k++) {
        onnx_map_entry_t *ke = onnx_map_find(&ctx->names, g->input[k]->name);
        if (!(ke && ke->aux == -2))
          st = dml_status_detail(st, "graph input '%s'", g->input[k]->name);
      }
      return st;
    }
  }
  return DML_OK;
}

/* Makes graph input `vi`, declared as `type`, the constant global holding
 * b->value. */
static dml_status_t bind_input(onnx_ctx_t *ctx, const Onnx__ValueInfoProto *vi,
                               const dml_type_t *type, const dml_onnx_binding_t *b) {
  const dml_tensor_t *t = b->value;
  char want[160], have[160];
  int ok = t->dtype == type->dtype && t->rank >= 0 && t->rank <= DML_MAX_RANK &&
           (type->rank == DML_RANK_UNKNOWN || t->rank == type->rank);
  for (int32_t k = 0; ok && type->rank != DML_RANK_UNKNOWN && k < type->rank; k++)
    if (type->dims[k].sym < 0 && type->dims[k].value != t->dims[k]) ok = 0;
  if (!ok) {
    dml_ir_type_str(ctx->m, type, want, sizeof(want));
    dml_type_t tt = dml_type_static(t->dtype, t->rank < 0 ? 0 : t->rank, t->dims);
    dml_ir_type_str(ctx->m, &tt, have, sizeof(have));
    return dml_status_detail(
        invalid("cannot bind graph input '%s': the tensor does not match its declared "
                "type",
                vi->name),
        "declared %s, bound %s", want, have);
  }
  size_t bytes = dml_tensor_bytes(t);
  if (bytes == SIZE_MAX)
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, ONNX_ERR_OP,
                           "bound tensor for '%s' is too large", vi->name);
  dml_type_t gt = dml_type_static(t->dtype, t->rank, t->dims);
  static const uint8_t empty = 0;
  dml_ir_value_t *gv = NULL;
  DML_RETURN_IF_ERROR(dml_status_annotate(
      dml_ir_module_add_global(ctx->m, vi->name, &gt,
                               bytes && t->data ? t->data : (const void *)&empty, bytes,
                               0, &gv),
      "binding graph input '%s'", vi->name));
  return onnx_define(ctx, vi->name, gv);
}

/* A sequence graph input: one argument "<name>.<k>" per element that
 * opts->sequence_inputs gives, with its shape and the declared dtype. */
static dml_status_t import_sequence_input(onnx_ctx_t *ctx, const Onnx__ValueInfoProto *vi,
                                          const dml_onnx_import_options_t *opts) {
  const dml_onnx_sequence_input_t *si = NULL;
  for (size_t i = 0; opts && i < opts->n_sequence_inputs; i++)
    if (opts->sequence_inputs[i].name &&
        strcmp(opts->sequence_inputs[i].name, vi->name) == 0)
      si = &opts->sequence_inputs[i];
  if (!si)
    return dml_status_detail(
        dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                        "graph input '%s' is a sequence; its element count and shapes "
                        "must be given at compile time",
                        vi->name),
        "import option sequence_inputs: the input becomes tensor inputs '%s.0', "
        "'%s.1', ...",
        vi->name, vi->name);
  if (si->n_elems && !si->elems)
    return invalid("sequence input '%s': %zu elements but no shapes", vi->name,
                   si->n_elems);
  const Onnx__TypeProto__Sequence *sq = vi->type->sequence_type;
  const Onnx__TypeProto *et = sq ? sq->elem_type : NULL;
  dml_dtype_t dt = et && et->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
                           et->tensor_type && et->tensor_type->has_elem_type
                       ? onnx_dtype(et->tensor_type->elem_type)
                       : DML_DTYPE_INVALID;
  if (dt == DML_DTYPE_INVALID)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                           "graph input '%s' is a sequence whose elements are not "
                           "tensors of a supported dtype",
                           vi->name);
  dml_ir_value_t **vals = (dml_ir_value_t **)calloc(si->n_elems + 1, sizeof(*vals));
  if (!vals) return oom();
  dml_status_t st = DML_OK;
  for (size_t k = 0; k < si->n_elems && !st; k++) {
    const dml_onnx_input_shape_t *sh = &si->elems[k];
    if (sh->rank < 0 || sh->rank > DML_MAX_RANK || (sh->rank && !sh->dims)) {
      st = invalid("sequence input '%s': element %zu has rank %d, not in 0..%d", vi->name,
                   k, (int)sh->rank, DML_MAX_RANK);
      break;
    }
    dml_type_t type = dml_type_static(dt, sh->rank, sh->dims);
    char *name = str_printf("%s.%zu", vi->name, k);
    const char *arena = name ? dml_ir_strdup(ctx->m, name) : NULL;
    free(name);
    if (!arena) st = oom();
    if (!st) st = dml_ir_function_add_arg(ctx->f, arena, &type, &vals[k]);
  }
  if (!st) st = onnx_seq_define(ctx, vi->name, dt, si->n_elems, vals);
  free(vals);
  return st;
}

static dml_status_t import_inputs(onnx_ctx_t *ctx, const Onnx__GraphProto *g,
                                  int64_t bound, const dml_onnx_import_options_t *opts) {
  DML_RETURN_IF_ERROR(check_bindings(ctx, g, opts));
  DML_RETURN_IF_ERROR(check_shape_overrides(ctx, g, opts));
  for (size_t i = 0; i < g->n_input; i++) {
    const Onnx__ValueInfoProto *vi = g->input[i];
    onnx_map_entry_t *e = onnx_map_find(&ctx->names, vi->name);
    if (e && e->aux == -2) continue; /* an initializer: a global */
    const dml_onnx_binding_t *b = find_binding(opts, vi->name);
    const Onnx__TypeProto *tp = vi->type;
    if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE) {
      /* An optional (onnx_optional.c): none, or its element as an input. */
      int present = -1, kind = onnx_opt_elem_kind(tp);
      for (size_t k = 0; opts && k < opts->n_optional_inputs; k++)
        if (opts->optional_inputs[k].name &&
            strcmp(opts->optional_inputs[k].name, vi->name) == 0)
          present = opts->optional_inputs[k].present != 0;
      if (present < 0)
        return dml_status_detail(
            dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                            "graph input '%s' is an optional; whether it holds a value "
                            "must be given at compile time",
                            vi->name),
            "import option optional_inputs: optionals are lowered at import time");
      if (!kind)
        return dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                               "graph input '%s' is an optional of a map, sparse tensor "
                               "or optional, which is not supported",
                               vi->name);
      if (!present) {
        DML_RETURN_IF_ERROR(onnx_opt_define_none(ctx, vi->name, kind));
        continue;
      }
      tp = tp->optional_type->elem_type;
      if (kind == ONNX_OPT_SEQUENCE) {
        Onnx__ValueInfoProto elem = *vi;
        elem.type = (Onnx__TypeProto *)tp;
        DML_RETURN_IF_ERROR(import_sequence_input(ctx, &elem, opts));
        continue;
      }
    }
    if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE) {
      DML_RETURN_IF_ERROR(import_sequence_input(ctx, vi, opts));
      continue;
    }
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
      return dml_status_make(
          DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
          "graph input '%s' is not a tensor (optional, map and sparse inputs are "
          "not supported; sequences are lowered at import time)",
          vi->name);
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    int32_t et = tt->has_elem_type ? tt->elem_type : 0;
    dml_dtype_t dt = onnx_dtype(et);
    if (dt == DML_DTYPE_INVALID)
      return dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                             "graph input '%s' has data type %s, which is not supported",
                             vi->name, onnx_dtype_name(et));
    dml_type_t type = dml_type_unknown(dt);
    if (tt->shape) {
      const Onnx__TensorShapeProto *sh = tt->shape;
      if (sh->n_dim > DML_MAX_RANK)
        return dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                               "graph input '%s' has rank %zu; the maximum is %d",
                               vi->name, sh->n_dim, DML_MAX_RANK);
      type.rank = (int32_t)sh->n_dim;
      for (size_t k = 0; k < sh->n_dim; k++) {
        const Onnx__TensorShapeProto__Dimension *d = sh->dim[k];
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
          if (d->dim_value < 0)
            return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                                   "graph input '%s': dim %zu is negative (%lld)",
                                   vi->name, k, (long long)d->dim_value);
          type.dims[k].value = d->dim_value;
          type.dims[k].sym = -1;
          continue;
        }
        int32_t sym = -1;
        char base[128];
        int64_t kk = 0;
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
            !is_empty(d->dim_param) &&
            scaled_dim_param(d->dim_param, &kk, base, sizeof base)) {
          /* "2*h": the dim 2 * h, so that (2*h)/2 is h */
          DML_RETURN_IF_ERROR(scaled_input_dim(ctx, vi->name, k, d->dim_param, kk, base,
                                               bound, opts, &type.dims[k]));
          continue;
        } else if (d->value_case ==
                       ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                   !is_empty(d->dim_param)) {
          DML_RETURN_IF_ERROR(input_symbol(ctx, d->dim_param,
                                           named_bound(opts, d->dim_param, bound), &sym));
        } else {
          char *name = str_printf("%s_dim%zu", vi->name, k);
          if (!name) return oom();
          dml_status_t st = input_symbol(ctx, name, named_bound(opts, name, bound), &sym);
          free(name);
          DML_RETURN_IF_ERROR(st);
        }
        type.dims[k].value = 1;
        type.dims[k].sym = sym;
      }
    }
    dml_status_t ost = DML_OK;
    const dml_onnx_input_shape_t *ov = find_shape_override(opts, vi->name, &ost);
    DML_RETURN_IF_ERROR(ost);
    dml_type_t decl = type;
    if (ov) {
      type.rank = ov->rank;
      for (int32_t k = 0; k < ov->rank; k++) {
        type.dims[k].value = ov->dims[k];
        type.dims[k].sym = -1;
      }
    }
    DML_RETURN_IF_ERROR(apply_ranges(ctx, vi->name, &decl, &type, opts));
    if (b) {
      DML_RETURN_IF_ERROR(bind_input(ctx, vi, &type, b));
      continue;
    }
    dml_ir_value_t *v = NULL;
    DML_RETURN_IF_ERROR(dml_ir_function_add_arg(ctx->f, vi->name, &type, &v));
    DML_RETURN_IF_ERROR(onnx_define(ctx, vi->name, v));
  }
  return DML_OK;
}

/* Min-heap of node indices: the topological order closest to the file's. */
static void heap_push(uint32_t *h, size_t *n, uint32_t v) {
  size_t i = (*n)++;
  while (i > 0 && h[(i - 1) / 2] > v) {
    h[i] = h[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h[i] = v;
}

static uint32_t heap_pop(uint32_t *h, size_t *n) {
  uint32_t top = h[0], last = h[--(*n)];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= *n) break;
    if (c + 1 < *n && h[c + 1] < h[c]) c++;
    if (h[c] >= last) break;
    h[i] = h[c];
    i = c;
  }
  if (*n) h[i] = last;
  return top;
}

/* Computes a topological order of the nodes (Kahn's algorithm, smallest
 * index first, so a sorted graph keeps its order). */
static dml_status_t topo_order(onnx_ctx_t *ctx, const Onnx__GraphProto *g,
                               uint32_t **out) {
  size_t n = g->n_node, n_edges = 0;
  if (n > UINT32_MAX - 1)
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, ONNX_ERR_OP, "too many nodes");
  /* A node with subgraphs (If) also depends on the outer tensors they read. */
  const char ***refs = (const char ***)calloc(n + 1, sizeof(*refs));
  size_t *n_refs = (size_t *)calloc(n + 1, sizeof(size_t));
  if (!refs || !n_refs) {
    free(refs);
    free(n_refs);
    return oom();
  }
  dml_status_t rst = DML_OK;
  for (size_t i = 0; i < n && !rst; i++) {
    rst = onnx_subgraph_refs(ctx, g->node[i], &refs[i], &n_refs[i]);
    n_edges += g->node[i]->n_input + n_refs[i];
  }
  uint32_t *pending = (uint32_t *)calloc(n + 1, sizeof(uint32_t));
  size_t *first = (size_t *)calloc(n + 2, sizeof(size_t));
  uint32_t *edges = (uint32_t *)malloc((n_edges + 1) * sizeof(uint32_t));
  uint32_t *heap = (uint32_t *)malloc((n + 1) * sizeof(uint32_t));
  uint32_t *order = (uint32_t *)malloc((n + 1) * sizeof(uint32_t));
  dml_status_t st = rst;
  if (!st && (!pending || !first || !edges || !heap || !order)) st = oom();
  if (st) goto done;
  /* Edges producer -> consumer, in CSR form. */
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < n; i++) {
      const Onnx__NodeProto *np = g->node[i];
      for (size_t k = 0; k < np->n_input + n_refs[i]; k++) {
        const char *name = k < np->n_input ? np->input[k] : refs[i][k - np->n_input];
        if (is_empty(name)) continue;
        onnx_map_entry_t *e = onnx_map_find(&ctx->names, name);
        /* (Defined already: an outer scope's tensor, for an If branch.) */
        if (!e || e->aux < 0 || e->val || (size_t)e->aux >= n) continue;
        size_t j = (size_t)e->aux;
        if (pass == 0) {
          first[j + 1]++;
          pending[i]++;
        } else {
          edges[first[j]++] = (uint32_t)i;
        }
      }
    }
    if (pass == 0)
      for (size_t j = 0; j < n; j++) first[j + 1] += first[j];
    else
      for (size_t j = n; j > 0; j--) first[j] = first[j - 1];
    if (pass == 1) first[0] = 0;
  }
  size_t hn = 0, emitted = 0;
  for (size_t i = 0; i < n; i++)
    if (!pending[i]) heap_push(heap, &hn, (uint32_t)i);
  while (hn) {
    uint32_t i = heap_pop(heap, &hn);
    order[emitted++] = i;
    for (size_t k = first[i]; k < first[i + 1]; k++)
      if (--pending[edges[k]] == 0) heap_push(heap, &hn, edges[k]);
  }
  if (emitted < n) {
    size_t bad = 0;
    while (bad < n && !pending[bad]) bad++;
    char label[300];
    st = dml_status_detail(
        dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                        "graph has a cycle: %zu of %zu nodes depend on themselves",
                        n - emitted, n),
        "%s is on or after a cycle",
        onnx_node_label(g->node[bad < n ? bad : 0], label, sizeof(label)));
    goto done;
  }
  *out = order;
  order = NULL;
done:
  for (size_t i = 0; i < n; i++) free((void *)refs[i]);
  free(refs);
  free(n_refs);
  free(pending);
  free(first);
  free(edges);
  free(heap);
  free(order);
  return st;
}

dml_status_t onnx_import_node(onnx_ctx_t *ctx, const Onnx__NodeProto *np) {
  const onnx_op_entry_t *e = node_entry(ctx->model, ctx->opset, np);
  char label[300];
  onnx_node_label(np, label, sizeof(label));
  if (!e) /* check_supported() ran first */
    return dml_status_make(DML_STATUS_INTERNAL, ONNX_ERR_OP, "%s has no importer", label);
  DML_RETURN_IF_ERROR(onnx_check_attr_types(np));
  size_t n_in = np->n_input;
  while (n_in && is_empty(np->input[n_in - 1])) n_in--;
  if (n_in > UINT32_MAX)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: too many inputs", label);
  dml_ir_value_t **in = (dml_ir_value_t **)calloc(n_in + 1, sizeof(*in));
  if (!in) return oom();
  dml_status_t st = DML_OK;
  for (size_t k = 0; k < n_in; k++) {
    in[k] = NULL;
    if (is_empty(np->input[k])) continue;
    if (onnx_opt_is_none(ctx, np->input[k])) {
      /* An optional without a value (onnx_optional.c): only the optional
       * ops and Identity read one. */
      if (e->importer == onnx_imp_optional) continue;
      if (e->op == DML_OP_IDENTITY && k == 0) {
        e = onnx_op_lookup("Optional", 15);
        continue;
      }
      st = dml_status_detail(
          dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                          "%s: input %zu ('%s') is an optional without a value, which "
                          "this op cannot read",
                          label, k, np->input[k]),
          "optionals are lowered at import time; only the optional ops and "
          "Identity read one that is none");
      break;
    }
    if (onnx_seq_find(ctx, np->input[k])) {
      /* A sequence (onnx_seq.c): only sequence ops, Identity and Loop (its
       * carried values, onnx_loop.c) read one. */
      if (e->importer == onnx_imp_seq || e->importer == onnx_imp_loop ||
          e->importer == onnx_imp_optional)
        continue;
      if (e->op == DML_OP_IDENTITY && k == 0) {
        e = onnx_op_lookup("SequenceConstruct", 11);
        continue;
      }
      st = dml_status_detail(
          dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                          "%s: input %zu ('%s') is a sequence, which this op cannot "
                          "read",
                          label, k, np->input[k]),
          "sequences are lowered at import time into lists of tensors; only "
          "sequence ops and Identity read them");
      break;
    }
    onnx_map_entry_t *me = onnx_map_find(&ctx->names, np->input[k]);
    in[k] = me ? (dml_ir_value_t *)me->val : NULL;
    if (!in[k]) {
      st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: input %zu names undefined tensor '%s'", label, k,
                           np->input[k]);
      break;
    }
  }
  if (!st) st = e->importer(ctx, np, e, in, (uint32_t)n_in);
  if (st) st = dml_status_annotate(st, "importing %s", label);
  free(in);
  return st;
}

/* Imports g's nodes in `order`, skipping those an If took into its branch
 * functions (tail duplication, onnx_if.c); ctx->frame is g meanwhile. */
static dml_status_t import_nodes(onnx_ctx_t *ctx, const Onnx__GraphProto *g,
                                 const Onnx__GraphProto *orig, const uint32_t *order) {
  onnx_frame_t fr = {g, orig ? orig : g, order, (uint8_t *)calloc(g->n_node + 1, 1),
                     ctx->frame};
  if (!fr.done) return oom();
  ctx->frame = &fr;
  dml_status_t st = DML_OK;
  for (size_t oi = 0; oi < g->n_node && !st; oi++) {
    if (fr.done[order[oi]]) continue;
    fr.done[order[oi]] = 1;
    st = onnx_import_node(ctx, g->node[order[oi]]);
  }
  ctx->frame = fr.up;
  free(fr.done);
  return st;
}

dml_status_t onnx_import_graph_nodes(onnx_ctx_t *ctx, const Onnx__GraphProto *g,
                                     const Onnx__GraphProto *orig) {
  uint32_t *order = NULL;
  dml_status_t st = topo_order(ctx, g, &order);
  if (!st) st = import_nodes(ctx, g, orig, order);
  free(order);
  return st;
}

static dml_status_t import_outputs(onnx_ctx_t *ctx, const Onnx__GraphProto *g) {
  size_t n_res = g->n_output, at = 0;
  dml_ir_value_t **res = (dml_ir_value_t **)calloc(n_res + 1, sizeof(dml_ir_value_t *));
  if (!res) return oom();
  dml_status_t st = DML_OK;
  for (size_t i = 0; i < g->n_output && !st; i++) {
    const char *name = g->output[i]->name;
    if (onnx_opt_is_none(ctx, name)) continue; /* a none optional: no result */
    const onnx_seq_t *seq = onnx_seq_find(ctx, name);
    if (seq && seq->stacked) {
      char what[300];
      snprintf(what, sizeof what, "graph output '%s'", name);
      st = onnx_seq_need_list(seq, what,
                              "a graph output (one tensor result per element, "
                              "\"<name>.<i>\")");
      break;
    }
    if (seq) {
      /* A sequence output: results "<name>.0", "<name>.1", ... */
      n_res += seq->n;
      dml_ir_value_t **grown =
          (dml_ir_value_t **)realloc(res, (n_res + 1) * sizeof(*res));
      if (!grown) {
        st = oom();
        break;
      }
      res = grown;
      for (size_t k = 0; k < seq->n && !st; k++) {
        dml_ir_value_t *ev = seq->v[k];
        dml_ir_node_t *node = NULL;
        char *ename = str_printf("%s.%zu", name, k);
        if (!ename) st = oom();
        if (!st) st = onnx_emit(ctx, DML_OP_IDENTITY, NULL, 1, &ev, 1, &node);
        if (!st && !(node->outputs[0]->name = dml_ir_strdup(ctx->m, ename))) st = oom();
        free(ename);
        if (!st) res[at++] = node->outputs[0];
      }
      continue;
    }
    onnx_map_entry_t *e = onnx_map_find(&ctx->names, name);
    dml_ir_value_t *v = e ? (dml_ir_value_t *)e->val : NULL;
    if (!v) {
      st = invalid("graph output '%s' is not defined", name);
      break;
    }
    if (v->kind != DML_IR_VALUE_RESULT) {
      /* Results are node results carrying the output's name. */
      dml_ir_node_t *node = NULL;
      st = onnx_emit(ctx, DML_OP_IDENTITY, NULL, 1, &v, 1, &node);
      if (st) break;
      node->outputs[0]->name = dml_ir_strdup(ctx->m, name);
      if (!node->outputs[0]->name) st = oom();
      v = node->outputs[0];
    }
    res[at++] = v;
  }
  if (!st) st = dml_ir_function_set_results(ctx->f, (uint32_t)at, res);
  free(res);
  return st;
}

/* Float initializers used only as BatchNormalization's running mean and
 * variance (or as FakeQuantize's observed range) are mutable state, not
 * trainable parameters. */
static void mark_bn_state(onnx_ctx_t *ctx) {
  enum { USED_AS_STAT = 1, USED_OTHERWISE = 2 };
  dml_ir_module_t *m = ctx->m;
  for (uint32_t i = 0; i < m->n_globals; i++) m->globals[i]->user = NULL;
  for (dml_ir_node_t *n = ctx->f->first; n; n = n->next)
    for (uint32_t k = 0; k < n->n_inputs; k++) {
      dml_ir_value_t *v = n->inputs[k];
      if (!v || v->kind != DML_IR_VALUE_GLOBAL) continue;
      uintptr_t use = (n->op == DML_OP_BATCH_NORMALIZATION && (k == 3 || k == 4)) ||
                              (n->op == DML_OP_FAKE_QUANTIZE && k == 1)
                          ? USED_AS_STAT
                          : USED_OTHERWISE;
      v->user = (void *)((uintptr_t)v->user | use);
    }
  for (uint32_t i = 0; i < ctx->f->n_results; i++)
    if (ctx->f->results[i]->kind == DML_IR_VALUE_GLOBAL)
      ctx->f->results[i]->user =
          (void *)((uintptr_t)ctx->f->results[i]->user | USED_OTHERWISE);
  for (uint32_t i = 0; i < m->n_globals; i++) {
    dml_ir_value_t *g = m->globals[i];
    if ((g->global_flags & DML_IR_GLOBAL_PARAM) && (uintptr_t)g->user == USED_AS_STAT)
      g->global_flags = (g->global_flags & ~DML_IR_GLOBAL_PARAM) | DML_IR_GLOBAL_STATE;
    g->user = NULL;
  }
}

static dml_status_t import_model(const Onnx__ModelProto *mp, const char *base_dir,
                                 int64_t bound, const dml_onnx_import_options_t *opts,
                                 dml_ir_module_t **out_module) {
  int64_t opset = 0;
  DML_RETURN_IF_ERROR(model_opset(mp, &opset));
  /* IR version 0 is "not set" (protobuf's default): no exporter writes it,
   * and without it the file's meaning (e.g. attribute types before IR 2)
   * is unknown. */
  if (!mp->has_ir_version || mp->ir_version <= 0)
    return dml_status_detail(
        dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                        "model has ir_version %lld: not a valid ONNX model (ir_version "
                        "must be set, 1 or higher)",
                        (long long)(mp->has_ir_version ? mp->ir_version : 0)),
        "onnx.checker.check_model() refuses it too; re-export the model");
  const Onnx__GraphProto *g = mp->graph;
  if (!g)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "model has no graph");
  for (size_t i = 0; opset == 0 && i < g->n_node; i++)
    if (is_default_domain(g->node[i]->domain)) {
      char label[300];
      return dml_status_detail(
          dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                          "model declares no opset for the default ONNX domain "
                          "(opset_import is missing)"),
          "%s is in the default domain",
          onnx_node_label(g->node[i], label, sizeof(label)));
    }
  DML_RETURN_IF_ERROR(check_supported(mp, g, opset));

  onnx_ctx_t ctx;
  memset(&ctx, 0, sizeof(ctx));
  ctx.opset = opset;
  ctx.model = mp;
  ctx.base_dir = base_dir;
  ctx.opts = opts;
  uint32_t *order = NULL;
  dml_status_t st = dml_ir_module_create(&ctx.m);
  if (st) return st;
  if (!st) st = dml_ir_function_create(ctx.m, "forward", &ctx.f);
  if (!st) st = register_names(&ctx, g);
  if (!st) st = check_references(&ctx, g);
  if (!st) st = import_initializers(&ctx, g);
  if (!st) st = import_inputs(&ctx, g, bound, opts);
  if (!st) st = check_dim_bounds(&ctx, opts);
  if (!st) st = topo_order(&ctx, g, &order);
  if (!st) st = import_nodes(&ctx, g, NULL, order);
  if (!st) st = import_outputs(&ctx, g);
  if (!st) mark_bn_state(&ctx);
  free(order);
  onnx_seqs_free(&ctx);
  onnx_map_free(&ctx.nones);
  onnx_map_free(&ctx.name_next);
  onnx_map_free(&ctx.names);
  if (st) {
    dml_ir_module_release(ctx.m);
    return st;
  }
  *out_module = ctx.m;
  return DML_OK;
}

/* ==== public API ======================================================== */

/* Imports `len` bytes; `owned` (may be NULL) is the malloc'd buffer holding
 * them, freed as soon as protobuf-c has copied what it needs. */
static dml_status_t import_bytes(const uint8_t *bytes, size_t len, uint8_t *owned,
                                 const char *base_dir,
                                 const dml_onnx_import_options_t *opts,
                                 dml_ir_module_t **out_module) {
  int64_t bound = opts && opts->batch_bound ? opts->batch_bound : 64;
  dml_status_t st = DML_OK;
  if (bound < 1) {
    st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                         "batch_bound must be positive, got %lld", (long long)bound);
    free(owned);
    return st;
  }
  static const uint8_t empty = 0;
  if (!len) bytes = &empty;
  st = scan_message(bytes, len, &onnx__model_proto__descriptor, 0, 0);
  Onnx__ModelProto *mp = st ? NULL : onnx__model_proto__unpack(NULL, len, bytes);
  free(owned);
  if (st) return st;
  if (!mp)
    return dml_status_detail(
        dml_status_make(DML_STATUS_DATA_LOSS, ONNX_ERR_OP,
                        "not a valid ONNX model: malformed or truncated protobuf"),
        "protobuf-c could not decode the %zu bytes as onnx.ModelProto", len);
  st = import_model(mp, base_dir, bound, opts, out_module);
  onnx__model_proto__free_unpacked(mp, NULL);
  return st;
}

dml_status_t dml_onnx_import_memory(const void *data, size_t len, const char *base_dir,
                                    const dml_onnx_import_options_t *opts,
                                    dml_ir_module_t **out_module) {
  if (!out_module || (!data && len))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "dml_onnx_import_memory: NULL argument");
  return import_bytes((const uint8_t *)data, len, NULL, base_dir, opts, out_module);
}

dml_status_t dml_onnx_import_file(const char *path, const dml_onnx_import_options_t *opts,
                                  dml_ir_module_t **out_module) {
  if (!path || !out_module)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "dml_onnx_import_file: NULL argument");
  /* dml_file_read_all opens only a regular file (a FIFO is refused, not
   * waited on) and names the path in its errors. */
  uint8_t *buf = NULL;
  size_t len = 0;
  dml_status_t st = dml_file_read_all(ONNX_ERR_OP, path, &buf, &len);
  if (st) return st;
  if (len == 0) {
    st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                         "model file '%s' is empty (0 bytes): not an ONNX model", path);
    goto close_file;
  }
  /* External data lives next to the model. */
  {
    const char *slash = strrchr(path, '/');
    char *dir = slash ? str_printf("%.*s", (int)(slash == path ? 1 : slash - path), path)
                      : str_printf(".");
    if (!dir) {
      st = oom();
      goto close_file;
    }
    st = import_bytes(buf, len, buf, dir, opts, out_module);
    buf = NULL; /* freed by import_bytes */
    free(dir);
    if (st) st = dml_status_annotate(st, "importing '%s'", path);
  }
close_file:
  free(buf);
  return st;
}
