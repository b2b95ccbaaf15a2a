/* dml_onnx_export.c — ONNX model with trained initializers
 * (dml_onnx_export.h). */
#include "dml_onnx_export.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dml_dtype.h"
#include "dml_file.h"
#include "dml_safetensors.h"
#include "onnx.pb-c.h"

#define OP "onnx.export"

/* ONNX TensorProto.DataType of a dmlc dtype (onnx.proto), or -1. */
static int onnx_type_of(dml_dtype_t dt) {
  switch (dt) {
    case DML_DTYPE_F32: return 1;
    case DML_DTYPE_U8: return 2;
    case DML_DTYPE_I8: return 3;
    case DML_DTYPE_U16: return 4;
    case DML_DTYPE_I16: return 5;
    case DML_DTYPE_I32: return 6;
    case DML_DTYPE_I64: return 7;
    case DML_DTYPE_BOOL: return 9;
    case DML_DTYPE_F16: return 10;
    case DML_DTYPE_F64: return 11;
    case DML_DTYPE_U32: return 12;
    case DML_DTYPE_U64: return 13;
    case DML_DTYPE_BF16: return 16;
    default: return -1;
  }
}

static dml_status_t read_all(const char *path, uint8_t **out, size_t *out_n) {
  return dml_file_read_all(OP, path, out, out_n);
}

/* Removes the initializer or Constant node that defines `name` when no
 * node reads it and it is no graph output (the
 * training_mode constant of a Dropout). */
static void drop_if_unused(Onnx__GraphProto *g, const char *name) {
  if (!name || !name[0]) return;
  for (size_t i = 0; i < g->n_node; i++) {
    for (size_t k = 0; k < g->node[i]->n_input; k++)
      if (g->node[i]->input[k] && !strcmp(g->node[i]->input[k], name)) return;
  }
  for (size_t i = 0; i < g->n_output; i++)
    if (g->output[i]->name && !strcmp(g->output[i]->name, name)) return;
  for (size_t i = 0; i < g->n_initializer; i++) {
    if (!g->initializer[i]->name || strcmp(g->initializer[i]->name, name)) continue;
    protobuf_c_message_free_unpacked(&g->initializer[i]->base, NULL);
    memmove(&g->initializer[i], &g->initializer[i + 1],
            (g->n_initializer - i - 1) * sizeof g->initializer[0]);
    g->n_initializer--;
    return;
  }
  for (size_t i = 0; i < g->n_node; i++) {
    Onnx__NodeProto *c = g->node[i];
    if (!c->op_type || strcmp(c->op_type, "Constant") || c->n_output != 1 ||
        !c->output[0] || strcmp(c->output[0], name))
      continue;
    protobuf_c_message_free_unpacked(&c->base, NULL);
    memmove(&g->node[i], &g->node[i + 1], (g->n_node - i - 1) * sizeof g->node[0]);
    g->n_node--;
    return;
  }
}

dml_status_t dml_onnx_export_trained(const char *onnx_in, const char *onnx_out,
                                     const dml_rt_model_t *m, dml_rt_session_t *s,
                                     uint32_t *out_replaced, uint32_t *out_dropouts) {
  if (!onnx_in || !onnx_out || !m || !s)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "NULL argument");
  uint8_t *bytes = NULL;
  size_t n = 0;
  DML_RETURN_IF_ERROR(read_all(onnx_in, &bytes, &n));
  Onnx__ModelProto *model = onnx__model_proto__unpack(NULL, n, bytes);
  free(bytes);
  if (!model || !model->graph) {
    if (model) onnx__model_proto__free_unpacked(model, NULL);
    return dml_status_make(DML_STATUS_DATA_LOSS, OP, "'%s' is not a valid ONNX model",
                           onnx_in);
  }
  dml_status_t st = DML_OK;
  uint32_t replaced = 0;
  if (out_dropouts) *out_dropouts = 0;
  Onnx__GraphProto *g = model->graph;
  for (size_t i = 0; i < g->n_initializer && !st; i++) {
    Onnx__TensorProto *t = g->initializer[i];
    if (!t->name) continue;
    int32_t gi = dml_rt_model_find_global(m, t->name);
    if (gi < 0) continue;
    dml_rt_global_info_t info;
    dml_tensor_t cur;
    st = dml_rt_model_global_info(m, (uint32_t)gi, &info);
    if (!st) st = dml_rt_session_global(s, (uint32_t)gi, &cur);
    if (st) break;
    if (!(info.flags & (DML_RT_GLOBAL_PARAM | DML_RT_GLOBAL_STATE))) continue;
    int same = t->data_type == onnx_type_of(cur.dtype) && t->n_dims == (size_t)cur.rank;
    for (size_t d = 0; same && d < t->n_dims; d++) same = t->dims[d] == cur.dims[d];
    if (!same) {
      st = dml_status_make(
          DML_STATUS_FAILED_PRECONDITION, OP,
          "initializer '%s' (ONNX data type %d, rank %zu) differs from the "
          "trained global (%s, rank %d)",
          t->name, t->data_type, t->n_dims, dml_dtype_name(cur.dtype), cur.rank);
      break;
    }
    size_t nb = dml_tensor_bytes(&cur);
    uint8_t *copy = (uint8_t *)malloc(nb ? nb : 1);
    if (!copy) {
      st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
      break;
    }
    if (nb) memcpy(copy, cur.data, nb);
    /* Drop every other encoding of the data (the default allocator is
     * malloc/free, so free() releases what unpack allocated). */
    free(t->float_data), t->float_data = NULL, t->n_float_data = 0;
    free(t->int32_data), t->int32_data = NULL, t->n_int32_data = 0;
    free(t->int64_data), t->int64_data = NULL, t->n_int64_data = 0;
    free(t->double_data), t->double_data = NULL, t->n_double_data = 0;
    free(t->uint64_data), t->uint64_data = NULL, t->n_uint64_data = 0;
    for (size_t k = 0; k < t->n_external_data; k++)
      protobuf_c_message_free_unpacked(&t->external_data[k]->base, NULL);
    free(t->external_data), t->external_data = NULL, t->n_external_data = 0;
    t->has_data_location = 0;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__DEFAULT;
    if (t->has_raw_data) free(t->raw_data.data);
    t->has_raw_data = 1;
    t->raw_data.data = copy;
    t->raw_data.len = nb;
    replaced++;
  }
  /* The inference graph: Dropout's training_mode input (opset 12+) goes, so
   * it defaults to false and Dropout is the identity (the exported model of
   * a graph exported in training mode would otherwise drop activations). */
  char **dropped = NULL; /* the training_mode inputs taken off, freed below */
  size_t n_dropped = 0;
  for (size_t i = 0; i < g->n_node && !st; i++) {
    Onnx__NodeProto *nd = g->node[i];
    if (!nd->op_type || strcmp(nd->op_type, "Dropout") || nd->n_input < 3) continue;
    if (nd->domain && nd->domain[0] && strcmp(nd->domain, "ai.onnx")) continue;
    char **nd_arr =
        (char **)realloc(dropped, (n_dropped + nd->n_input) * sizeof *dropped);
    if (!nd_arr) {
      st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
      break;
    }
    dropped = nd_arr;
    for (size_t k = 2; k < nd->n_input; k++) dropped[n_dropped++] = nd->input[k];
    nd->n_input = 2;
    if (out_dropouts) (*out_dropouts)++;
  }
  /* then the constants that fed them, when nothing else reads them */
  for (size_t k = 0; k < n_dropped; k++) {
    drop_if_unused(g, dropped[k]);
    free(dropped[k]);
  }
  free((void *)dropped);
  if (!st) {
    size_t size = onnx__model_proto__get_packed_size(model);
    uint8_t *out = (uint8_t *)malloc(size ? size : 1);
    if (!out) {
      st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
    } else {
      onnx__model_proto__pack(model, out);
      st = dml_write_file_atomic(OP, onnx_out, out, size);
      free(out);
    }
  }
  onnx__model_proto__free_unpacked(model, NULL);
  if (!st && out_replaced) *out_replaced = replaced;
  return st;
}
