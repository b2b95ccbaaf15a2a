/*
 * onnx_tensor_io.c — public helpers around the importer (dml_onnx.h):
 * serialized TensorProto files (ONNX backend tests' input_N.pb/output_N.pb),
 * a description of a model's declared inputs, outputs and nodes, and the op
 * table as a question ("does the importer map op X at opset N?").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dml_file.h"
#include "onnx_internal.h"

#define TENSOR_ERR_OP "onnx.tensor"

/* ==== TensorProto files ================================================= */

dml_status_t dml_onnx_tensor_read_memory(const void *data, size_t len, dml_tensor_t *out,
                                         void **out_buffer) {
  if (!out || !out_buffer || (!data && len))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, TENSOR_ERR_OP,
                           "dml_onnx_tensor_read_memory: NULL argument");
  static const uint8_t empty = 0;
  if (!len) data = &empty;
  dml_status_t st = onnx_scan_bytes(data, len, &onnx__tensor_proto__descriptor);
  if (st) return dml_status_annotate(st, "reading a TensorProto");
  Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, len, (const uint8_t *)data);
  if (!tp)
    return dml_status_make(DML_STATUS_DATA_LOSS, TENSOR_ERR_OP,
                           "not an onnx.TensorProto: malformed or truncated protobuf "
                           "(%zu bytes)",
                           len);
  /* A SequenceProto or OptionalProto parses as a TensorProto with unknown
   * fields and no data type; say what it probably is. */
  if ((!tp->has_data_type && !tp->n_dims && !tp->has_raw_data) || tp->segment) {
    int seg = tp->segment != NULL;
    onnx__tensor_proto__free_unpacked(tp, NULL);
    return dml_status_make(DML_STATUS_DATA_LOSS, TENSOR_ERR_OP,
                           "not an onnx.TensorProto: %s (a SequenceProto, MapProto or "
                           "OptionalProto?)",
                           seg ? "it has a segment" : "no data type");
  }
  if (tp->has_data_location &&
      tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
    onnx__tensor_proto__free_unpacked(tp, NULL);
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, TENSOR_ERR_OP,
                           "tensor files with external data are not supported");
  }
  char what[300];
  snprintf(what, sizeof(what), "tensor '%s'", tp->name ? tp->name : "");
  dml_tensor_t t;
  void *owned = NULL;
  size_t bytes = 0;
  st = onnx_tensor_decode(tp, NULL, what, &t, &owned, &bytes);
  if (!st && !owned && bytes) {
    /* raw_data used in place: copy it out before the message is freed. */
    owned = malloc(bytes);
    if (!owned)
      st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, TENSOR_ERR_OP,
                           "out of memory (%zu bytes)", bytes);
    else
      memcpy(owned, t.data, bytes);
  }
  onnx__tensor_proto__free_unpacked(tp, NULL);
  if (st) {
    free(owned);
    return st;
  }
  t.data = bytes ? owned : NULL;
  if (!bytes) {
    free(owned);
    owned = NULL;
  }
  *out = t;
  *out_buffer = owned;
  return DML_OK;
}

/* The whole of `path` in a malloc'd buffer; only a regular file is read
 * (dml_file_read_all: a FIFO is refused, not waited on). */
static dml_status_t read_whole_file(const char *path, const char *op, uint8_t **out,
                                    size_t *out_len) {
  return dml_file_read_all(op, path, out, out_len);
}

dml_status_t dml_onnx_tensor_read_file(const char *path, dml_tensor_t *out,
                                       void **out_buffer) {
  if (!path || !out || !out_buffer)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, TENSOR_ERR_OP,
                           "dml_onnx_tensor_read_file: NULL argument");
  uint8_t *buf = NULL;
  size_t len = 0;
  DML_RETURN_IF_ERROR(read_whole_file(path, TENSOR_ERR_OP, &buf, &len));
  dml_status_t st = dml_onnx_tensor_read_memory(buf, len, out, out_buffer);
  free(buf);
  if (st) st = dml_status_annotate(st, "reading '%s'", path);
  return st;
}

/* ==== SequenceProto (onnx-data.proto) ==================================== */
/* Not in the generated onnx.proto: read by hand. Fields: 1 name, 2 elem_type,
 * 3 tensor_values (TensorProto), 4 sparse_tensor_values, 5 sequence_values,
 * 6 map_values, 7 optional_values. */

static int seq_varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *out) {
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

void dml_onnx_sequence_free(size_t n, dml_tensor_t *elems, void **buffers) {
  for (size_t i = 0; buffers && i < n; i++) free(buffers[i]);
  free(elems);
  free(buffers);
}

dml_status_t dml_onnx_sequence_read_memory(const void *data, size_t len, size_t *out_n,
                                           dml_tensor_t **out_elems,
                                           void ***out_buffers) {
  if (!out_n || !out_elems || !out_buffers || (!data && len))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, TENSOR_ERR_OP,
                           "dml_onnx_sequence_read_memory: NULL argument");
  const uint8_t *p = (const uint8_t *)data;
  size_t pos = 0, n = 0, cap = 0;
  dml_tensor_t *elems = NULL;
  void **bufs = NULL;
  dml_status_t st = DML_OK;
  int64_t elem_type = -1;
  while (pos < len && !st) {
    uint64_t tag = 0, v = 0;
    if (seq_varint(p, len, &pos, &tag)) goto bad;
    switch (tag & 7) {
      case 0:
        if (seq_varint(p, len, &pos, &v)) goto bad;
        if ((tag >> 3) == 2) elem_type = (int64_t)v;
        continue;
      case 1:
        if (len - pos < 8) goto bad;
        pos += 8;
        continue;
      case 5:
        if (len - pos < 4) goto bad;
        pos += 4;
        continue;
      case 2: break;
      default: goto bad;
    }
    if (seq_varint(p, len, &pos, &v) || v > len - pos) goto bad;
    uint64_t field = tag >> 3;
    if (field >= 4 && field <= 7) {
      st = dml_status_make(DML_STATUS_UNIMPLEMENTED, TENSOR_ERR_OP,
                           "SequenceProto holds sparse tensors, sequences, maps or "
                           "optionals; only tensor elements are supported");
      break;
    }
    if (field == 3) {
      if (n == cap) {
        cap = cap ? cap * 2 : 8;
        dml_tensor_t *e2 = (dml_tensor_t *)realloc(elems, cap * sizeof(*e2));
        if (e2) elems = e2;
        void **b2 = e2 ? (void **)realloc(bufs, cap * sizeof(*b2)) : NULL;
        if (b2) bufs = b2;
        if (!e2 || !b2) {
          st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, TENSOR_ERR_OP,
                               "out of memory");
          break;
        }
      }
      bufs[n] = NULL;
      st = dml_onnx_tensor_read_memory(p + pos, (size_t)v, &elems[n], &bufs[n]);
      if (st) {
        st = dml_status_annotate(st, "reading element %zu of a SequenceProto", n);
        break;
      }
      n++;
    }
    pos += (size_t)v;
  }
  if (!st && elem_type >= 0 && elem_type != 1)
    st =
        dml_status_make(DML_STATUS_UNIMPLEMENTED, TENSOR_ERR_OP,
                        "SequenceProto of elem_type %lld; only tensors (1) are supported",
                        (long long)elem_type);
  if (st) {
    dml_onnx_sequence_free(n, elems, bufs);
    return st;
  }
  *out_n = n;
  *out_elems = elems;
  *out_buffers = bufs;
  return DML_OK;
bad:
  dml_onnx_sequence_free(n, elems, bufs);
  return dml_status_make(DML_STATUS_DATA_LOSS, TENSOR_ERR_OP,
                         "not an onnx.SequenceProto: malformed or truncated protobuf "
                         "(at byte %zu of %zu)",
                         pos, len);
}

dml_status_t dml_onnx_sequence_read_file(const char *path, size_t *out_n,
                                         dml_tensor_t **out_elems, void ***out_buffers) {
  if (!path)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, TENSOR_ERR_OP,
                           "dml_onnx_sequence_read_file: NULL argument");
  uint8_t *buf = NULL;
  size_t len = 0;
  DML_RETURN_IF_ERROR(read_whole_file(path, TENSOR_ERR_OP, &buf, &len));
  dml_status_t st =
      dml_onnx_sequence_read_memory(buf, len, out_n, out_elems, out_buffers);
  free(buf);
  if (st) st = dml_status_annotate(st, "reading '%s'", path);
  return st;
}

/* ==== OptionalProto (onnx-data.proto) ==================================== */
/* Not in the generated onnx.proto either: read by hand. Fields (ONNX 1.12):
 * 1 name, 2 elem_type (0 UNDEFINED, 1 TENSOR, 2 SPARSE_TENSOR, 3 SEQUENCE,
 * 4 MAP, 5 OPTIONAL), 3 tensor_value, 4 sparse_tensor_value, 5 sequence_value,
 * 6 map_value, 7 optional_value. */

void dml_onnx_optional_free(dml_onnx_optional_value_t *v) {
  if (!v) return;
  free(v->buffer);
  dml_onnx_sequence_free(v->n, v->elems, v->buffers);
  memset(v, 0, sizeof(*v));
}

dml_status_t dml_onnx_optional_read_memory(const void *data, size_t len,
                                           dml_onnx_optional_value_t *out) {
  if (!out || (!data && len))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, TENSOR_ERR_OP,
                           "dml_onnx_optional_read_memory: NULL argument");
  const uint8_t *p = (const uint8_t *)data;
  size_t pos = 0;
  dml_onnx_optional_value_t r;
  memset(&r, 0, sizeof(r));
  dml_status_t st = DML_OK;
  int64_t elem_type = 0;
  while (pos < len && !st) {
    uint64_t tag = 0, v = 0;
    if (seq_varint(p, len, &pos, &tag)) goto bad;
    switch (tag & 7) {
      case 0:
        if (seq_varint(p, len, &pos, &v)) goto bad;
        if ((tag >> 3) == 2) elem_type = (int64_t)v;
        continue;
      case 1:
        if (len - pos < 8) goto bad;
        pos += 8;
        continue;
      case 5:
        if (len - pos < 4) goto bad;
        pos += 4;
        continue;
      case 2: break;
      default: goto bad;
    }
    if (seq_varint(p, len, &pos, &v) || v > len - pos) goto bad;
    uint64_t field = tag >> 3;
    if (field == 4 || field == 6 || field == 7) {
      st = dml_status_make(DML_STATUS_UNIMPLEMENTED, TENSOR_ERR_OP,
                           "OptionalProto holds a sparse tensor, map or optional; only "
                           "tensors and sequences of tensors are supported");
      break;
    }
    if (field == 3 && r.kind == DML_ONNX_OPTIONAL_NONE) {
      st = dml_onnx_tensor_read_memory(p + pos, (size_t)v, &r.tensor, &r.buffer);
      if (!st) r.kind = DML_ONNX_OPTIONAL_TENSOR;
    } else if (field == 5 && r.kind == DML_ONNX_OPTIONAL_NONE) {
      st = dml_onnx_sequence_read_memory(p + pos, (size_t)v, &r.n, &r.elems, &r.buffers);
      if (!st) r.kind = DML_ONNX_OPTIONAL_SEQUENCE;
    } else if (field == 3 || field == 5) {
      st = dml_status_make(DML_STATUS_DATA_LOSS, TENSOR_ERR_OP,
                           "OptionalProto holds more than one value");
    }
    if (st) st = dml_status_annotate(st, "reading the value of an OptionalProto");
    pos += (size_t)v;
  }
  if (!st && ((elem_type == 1 && r.kind == DML_ONNX_OPTIONAL_SEQUENCE) ||
              (elem_type == 3 && r.kind == DML_ONNX_OPTIONAL_TENSOR)))
    st = dml_status_make(
        DML_STATUS_DATA_LOSS, TENSOR_ERR_OP, "OptionalProto of elem_type %lld holds a %s",
        (long long)elem_type, r.kind == DML_ONNX_OPTIONAL_TENSOR ? "tensor" : "sequence");
  if (st) {
    dml_onnx_optional_free(&r);
    return st;
  }
  *out = r;
  return DML_OK;
bad:
  dml_onnx_optional_free(&r);
  return dml_status_make(DML_STATUS_DATA_LOSS, TENSOR_ERR_OP,
                         "not an onnx.OptionalProto: malformed or truncated protobuf "
                         "(at byte %zu of %zu)",
                         pos, len);
}

dml_status_t dml_onnx_optional_read_file(const char *path,
                                         dml_onnx_optional_value_t *out) {
  if (!path)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, TENSOR_ERR_OP,
                           "dml_onnx_optional_read_file: NULL argument");
  uint8_t *buf = NULL;
  size_t len = 0;
  DML_RETURN_IF_ERROR(read_whole_file(path, TENSOR_ERR_OP, &buf, &len));
  dml_status_t st = dml_onnx_optional_read_memory(buf, len, out);
  free(buf);
  if (st) st = dml_status_annotate(st, "reading '%s'", path);
  return st;
}

/* ==== model description ================================================= */

/* The description and every string it lends, in one allocation list. */
typedef struct desc_impl {
  dml_onnx_model_desc_t pub; /* first: the public pointer is this struct */
  void **blocks;
  size_t n_blocks, cap_blocks;
} desc_impl_t;

static void *desc_alloc(desc_impl_t *d, size_t bytes) {
  if (d->n_blocks == d->cap_blocks) {
    size_t cap = d->cap_blocks ? d->cap_blocks * 2 : 16;
    void **b = (void **)realloc(d->blocks, cap * sizeof(void *));
    if (!b) return NULL;
    d->blocks = b;
    d->cap_blocks = cap;
  }
  void *p = calloc(1, bytes ? bytes : 1);
  if (p) d->blocks[d->n_blocks++] = p;
  return p;
}

static const char *desc_str(desc_impl_t *d, const char *s) {
  if (!s) s = "";
  size_t n = strlen(s);
  char *p = (char *)desc_alloc(d, n + 1);
  if (p) memcpy(p, s, n + 1);
  return p;
}

void dml_onnx_model_desc_release(dml_onnx_model_desc_t *desc) {
  if (!desc) return;
  desc_impl_t *d = (desc_impl_t *)desc;
  for (size_t i = 0; i < d->n_blocks; i++) free(d->blocks[i]);
  free(d->blocks);
  free(d);
}

static int fill_value(desc_impl_t *d, const Onnx__ValueInfoProto *vi,
                      dml_onnx_value_desc_t *out) {
  out->name = desc_str(d, vi->name);
  if (!out->name) return -1;
  out->kind = DML_ONNX_VALUE_UNKNOWN;
  out->dtype = DML_DTYPE_INVALID;
  out->rank = DML_RANK_UNKNOWN;
  const Onnx__TypeProto *tp = vi->type;
  if (!tp) return 0;
  switch (tp->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
      out->kind = DML_ONNX_VALUE_TENSOR;
      if (tp->tensor_type) {
        if (tp->tensor_type->has_elem_type)
          out->dtype = onnx_dtype(tp->tensor_type->elem_type);
        const Onnx__TensorShapeProto *sh = tp->tensor_type->shape;
        if (sh) out->rank = (int32_t)sh->n_dim;
        for (size_t k = 0; sh && k < sh->n_dim && k < DML_MAX_RANK; k++)
          out->dims[k] = sh->dim[k]->value_case ==
                                 ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
                             ? sh->dim[k]->dim_value
                             : -1;
      }
      break;
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
      out->kind = DML_ONNX_VALUE_SEQUENCE;
      break;
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE: out->kind = DML_ONNX_VALUE_MAP; break;
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
      out->kind = DML_ONNX_VALUE_OPTIONAL;
      break;
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
      out->kind = DML_ONNX_VALUE_SPARSE_TENSOR;
      break;
    default: break;
  }
  return 0;
}

static int is_default_domain(const char *d) {
  return !d || !*d || strcmp(d, "ai.onnx") == 0;
}

dml_status_t dml_onnx_model_describe(const void *data, size_t len,
                                     dml_onnx_model_desc_t **out_desc) {
  if (!out_desc || (!data && len))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "dml_onnx_model_describe: NULL argument");
  static const uint8_t empty = 0;
  if (!len) data = &empty;
  DML_RETURN_IF_ERROR(onnx_scan_bytes(data, len, &onnx__model_proto__descriptor));
  Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, (const uint8_t *)data);
  if (!mp)
    return dml_status_make(DML_STATUS_DATA_LOSS, ONNX_ERR_OP,
                           "not a valid ONNX model: malformed or truncated protobuf");
  desc_impl_t *d = (desc_impl_t *)calloc(1, sizeof(*d));
  int failed = !d;
  const Onnx__GraphProto *g = mp->graph;
  if (!failed) {
    for (size_t i = 0; i < mp->n_opset_import; i++)
      if (is_default_domain(mp->opset_import[i]->domain) &&
          mp->opset_import[i]->has_version)
        d->pub.opset = mp->opset_import[i]->version;
  }
  if (!failed && g) {
    size_t ni = g->n_input, no = g->n_output, nn = g->n_node;
    if (ni > UINT32_MAX || no > UINT32_MAX || nn > UINT32_MAX) failed = 1;
    dml_onnx_value_desc_t *ins = NULL, *outs = NULL;
    dml_onnx_node_desc_t *nodes = NULL;
    if (!failed) {
      ins = (dml_onnx_value_desc_t *)desc_alloc(d, ni * sizeof(*ins));
      outs = (dml_onnx_value_desc_t *)desc_alloc(d, no * sizeof(*outs));
      nodes = (dml_onnx_node_desc_t *)desc_alloc(d, nn * sizeof(*nodes));
      failed = !ins || !outs || !nodes;
    }
    for (size_t i = 0; !failed && i < ni; i++) {
      failed = fill_value(d, g->input[i], &ins[i]) != 0;
      for (size_t k = 0; !failed && k < g->n_initializer; k++)
        if (g->initializer[k]->name && g->input[i]->name &&
            strcmp(g->initializer[k]->name, g->input[i]->name) == 0)
          ins[i].is_initializer = 1;
    }
    for (size_t i = 0; !failed && i < no; i++)
      failed = fill_value(d, g->output[i], &outs[i]) != 0;
    for (size_t i = 0; !failed && i < nn; i++) {
      const Onnx__NodeProto *np = g->node[i];
      dml_onnx_node_desc_t *nd = &nodes[i];
      nd->op_type = desc_str(d, np->op_type);
      nd->domain = desc_str(d, is_default_domain(np->domain) ? "" : np->domain);
      const char **in = (const char **)desc_alloc(d, np->n_input * sizeof(char *));
      const char **out = (const char **)desc_alloc(d, np->n_output * sizeof(char *));
      failed = !nd->op_type || !nd->domain || !in || !out || np->n_input > UINT32_MAX ||
               np->n_output > UINT32_MAX;
      for (size_t k = 0; !failed && k < np->n_input; k++)
        failed = !(in[k] = desc_str(d, np->input[k]));
      for (size_t k = 0; !failed && k < np->n_output; k++)
        failed = !(out[k] = desc_str(d, np->output[k]));
      nd->inputs = in;
      nd->outputs = out;
      nd->n_inputs = (uint32_t)np->n_input;
      nd->n_outputs = (uint32_t)np->n_output;
    }
    if (!failed) {
      d->pub.inputs = ins;
      d->pub.outputs = outs;
      d->pub.nodes = nodes;
      d->pub.n_inputs = (uint32_t)ni;
      d->pub.n_outputs = (uint32_t)no;
      d->pub.n_nodes = (uint32_t)nn;
    }
  }
  onnx__model_proto__free_unpacked(mp, NULL);
  if (failed) {
    dml_onnx_model_desc_release(d ? &d->pub : NULL);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, ONNX_ERR_OP, "out of memory");
  }
  *out_desc = &d->pub;
  return DML_OK;
}

/* ==== the op table ====================================================== */

int dml_onnx_op_is_supported(const char *op_type, int64_t opset) {
  return op_type && onnx_op_lookup(op_type, opset) != NULL;
}
