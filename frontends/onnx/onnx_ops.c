/*
 * onnx_ops.c — the ONNX op table (onnx_ops.def) and its importers.
 *
 * An importer receives the node's operands (absent optional inputs NULL,
 * trailing absent ones trimmed) and appends IR nodes whose last outputs carry
 * the ONNX output names. The IR follows ONNX opset 13+ (reduction axes as
 * input 1 as in opset 18); importers of older forms turn attributes into
 * constant inputs. Semantics: https://onnx.ai/onnx/operators/ (Changelog.md
 * for the older versions).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

/* ---- helpers ---- */

static dml_status_t oom(void) {
  return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, ONNX_ERR_OP, "out of memory");
}

static int is_empty(const char *s) {
  return !s || !*s;
}

/* Number of outputs up to the last named one. */
static uint32_t n_named_outputs(const Onnx__NodeProto *np) {
  size_t n = np->n_output;
  while (n > 1 && is_empty(np->output[n - 1])) n--;
  return (uint32_t)n;
}

static const char *first_output(const Onnx__NodeProto *np) {
  return np->n_output && !is_empty(np->output[0]) ? np->output[0] : "onnx";
}

static const Onnx__AttributeProto *attr_of(const Onnx__NodeProto *np, const char *name,
                                           Onnx__AttributeProto__AttributeType type) {
  const Onnx__AttributeProto *a = onnx_attr(np, name);
  return a && onnx_attr_type(a) == type ? a : NULL;
}

static int64_t attr_int(const Onnx__NodeProto *np, const char *name, int64_t dflt) {
  const Onnx__AttributeProto *a =
      attr_of(np, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  return a ? a->i : dflt;
}

/* Copies a STRING attribute into buf (empty when absent). */
static const char *attr_str(const Onnx__NodeProto *np, const char *name, const char *dflt,
                            char *buf, size_t cap) {
  const Onnx__AttributeProto *a =
      attr_of(np, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
  if (!a) return dflt;
  size_t n = a->s.len < cap - 1 ? a->s.len : cap - 1;
  if (n) memcpy(buf, a->s.data, n);
  buf[n] = '\0';
  return buf;
}

/* "<a><b>" in an arena-free scratch buffer. */
static const char *join(char *buf, size_t cap, const char *a, const char *b) {
  snprintf(buf, cap, "%s%s", a, b);
  return buf;
}

static dml_status_t expect_inputs(const Onnx__NodeProto *np, const onnx_op_entry_t *e,
                                  uint32_t n_in, uint32_t lo, uint32_t hi,
                                  int64_t opset) {
  if (n_in >= lo && n_in <= hi) return DML_OK;
  char label[300];
  return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                         "%s takes %u..%u inputs in opset %lld, got %u",
                         onnx_node_label(np, label, sizeof(label)), lo, hi,
                         (long long)opset, n_in);
  (void)e;
}

/* The dtype of an operand when the importer can know it (arguments and
 * globals); `dflt` otherwise or when it is not a float dtype. */
static dml_dtype_t known_float_dtype(const dml_ir_value_t *v, dml_dtype_t dflt) {
  if (v && v->kind != DML_IR_VALUE_RESULT && dml_dtype_is_float(v->type.dtype))
    return v->type.dtype;
  return dflt;
}

/* Emits one node of e->op with the given operands and every attribute of np
 * except `skip`, and names its outputs. */
static dml_status_t emit_node(onnx_ctx_t *ctx, const Onnx__NodeProto *np, dml_op_t op,
                              dml_ir_value_t *const *in, uint32_t n_in,
                              const char *const *skip, dml_ir_node_t **out_node) {
  dml_ir_node_t *node = NULL;
  DML_RETURN_IF_ERROR(onnx_emit(ctx, op, np->name, n_in, in, n_named_outputs(np), &node));
  DML_RETURN_IF_ERROR(onnx_copy_attrs(ctx, node, np, skip));
  DML_RETURN_IF_ERROR(onnx_bind_outputs(ctx, np, node));
  if (out_node) *out_node = node;
  return DML_OK;
}

/* ---- importers ---- */

/* Same op, operands and attributes. */
static dml_status_t onnx_imp_direct(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                    const onnx_op_entry_t *e, dml_ir_value_t **in,
                                    uint32_t n_in) {
  return emit_node(ctx, np, e->op, in, n_in, NULL, NULL);
}

/* Identity of a weight (an initializer flagged param or state) becomes a
 * copy of that weight under the Identity's output name, with the same
 * flags, and no node. PyTorch's exporter stores parameters with equal
 * values once and hands the others out through such Identity nodes
 * (torch.onnx's initializer deduplication): they are distinct parameters of
 * the model (its parameter count includes them; training updates them
 * apart), so the IR keeps them distinct. Anything else stays an Identity. */
static dml_status_t onnx_imp_identity(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                      const onnx_op_entry_t *e, dml_ir_value_t **in,
                                      uint32_t n_in) {
  const dml_ir_value_t *w = n_in == 1 ? in[0] : NULL;
  const char *out = first_output(np);
  if (!ctx->scope && w && w->kind == DML_IR_VALUE_GLOBAL && w->data && out && *out &&
      (w->global_flags & (DML_IR_GLOBAL_PARAM | DML_IR_GLOBAL_STATE)) &&
      !dml_ir_module_find_global(ctx->m, out)) {
    dml_ir_value_t *copy = NULL;
    DML_RETURN_IF_ERROR(dml_ir_module_add_global(ctx->m, out, &w->type, w->data,
                                                 w->data_bytes, w->global_flags, &copy));
    return onnx_define(ctx, out, copy);
  }
  return emit_node(ctx, np, e->op, in, n_in, NULL, NULL);
}

/* `axes` attribute -> i64 input 1: Squeeze/Unsqueeze (opset < 13),
 * ReduceSum (< 13), ReduceMean/Max/Min/Prod (all opsets <= 17). An absent
 * or empty attribute leaves input 1 absent (all axes / no axes). */
static dml_status_t onnx_imp_axes_attr(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                       const onnx_op_entry_t *e, dml_ir_value_t **in,
                                       uint32_t n_in) {
  DML_RETURN_IF_ERROR(expect_inputs(np, e, n_in, 1, 1, ctx->opset));
  dml_ir_value_t *ops[2] = {in[0], NULL};
  const Onnx__AttributeProto *a =
      attr_of(np, "axes", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  if (a && a->n_ints) {
    char base[512];
    DML_RETURN_IF_ERROR(
        onnx_const_i64(ctx, join(base, sizeof(base), first_output(np), "/axes"), a->ints,
                       a->n_ints, &ops[1]));
  }
  static const char *const skip[] = {"axes", NULL};
  return emit_node(ctx, np, e->op, ops, ops[1] ? 2 : 1, skip, NULL);
}

/* Split `split` attribute (opset < 13) -> i64 input 1. Split-1 may take
 * the lengths as input 1 instead, of the data's type T: cast to i64. */
static dml_status_t onnx_imp_split_attr(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                        const onnx_op_entry_t *e, dml_ir_value_t **in,
                                        uint32_t n_in) {
  DML_RETURN_IF_ERROR(expect_inputs(np, e, n_in, 1, ctx->opset < 2 ? 2 : 1, ctx->opset));
  dml_ir_value_t *ops[2] = {in[0], NULL};
  const Onnx__AttributeProto *a =
      attr_of(np, "split", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  if (n_in == 2 && in[1]) {
    char base[512];
    const char *nn = is_empty(np->name) ? first_output(np) : np->name;
    dml_ir_node_t *cast = NULL;
    DML_RETURN_IF_ERROR(onnx_emit(ctx, DML_OP_CAST,
                                  join(base, sizeof(base), nn, "/split_i64"), 1, &in[1],
                                  1, &cast));
    DML_RETURN_IF_ERROR(dml_ir_node_set_attr_int(cast, "to", 7 /* INT64 */));
    cast->outputs[0]->name =
        onnx_unique_name(ctx, join(base, sizeof(base), first_output(np), "/split"));
    if (!cast->outputs[0]->name) return oom();
    ops[1] = cast->outputs[0];
  } else if (a && a->n_ints) {
    char base[512];
    DML_RETURN_IF_ERROR(
        onnx_const_i64(ctx, join(base, sizeof(base), first_output(np), "/split"), a->ints,
                       a->n_ints, &ops[1]));
  }
  static const char *const skip[] = {"split", NULL};
  return emit_node(ctx, np, e->op, ops, ops[1] ? 2 : 1, skip, NULL);
}

/* Slice-1 attributes starts/ends/axes (opset < 10) -> inputs 1..3. */
static dml_status_t onnx_imp_slice_attrs(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                         const onnx_op_entry_t *e, dml_ir_value_t **in,
                                         uint32_t n_in) {
  DML_RETURN_IF_ERROR(expect_inputs(np, e, n_in, 1, 1, ctx->opset));
  static const char *const names[3] = {"starts", "ends", "axes"};
  dml_ir_value_t *ops[4] = {in[0], NULL, NULL, NULL};
  uint32_t n = 1;
  for (int k = 0; k < 3; k++) {
    const Onnx__AttributeProto *a =
        attr_of(np, names[k], ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    if (!a) {
      if (k == 2) break;
      char label[300];
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                             "%s: Slice-1 needs the '%s' attribute",
                             onnx_node_label(np, label, sizeof(label)), names[k]);
    }
    char base[512], suffix[16];
    snprintf(suffix, sizeof(suffix), "/%s", names[k]);
    DML_RETURN_IF_ERROR(onnx_const_i64(ctx,
                                       join(base, sizeof(base), first_output(np), suffix),
                                       a->ints, a->n_ints, &ops[n]));
    n++;
  }
  static const char *const skip[] = {"starts", "ends", "axes", NULL};
  return emit_node(ctx, np, e->op, ops, n, skip, NULL);
}

/* Pad-2 attributes pads/value (opset < 11) -> inputs 1 (i64) and 2 (a
 * scalar of the data's dtype, f32 when unknown); mode stays. */
static dml_status_t onnx_imp_pad_attrs(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                       const onnx_op_entry_t *e, dml_ir_value_t **in,
                                       uint32_t n_in) {
  DML_RETURN_IF_ERROR(expect_inputs(np, e, n_in, 1, 1, ctx->opset));
  /* Pad-1 names the attribute `paddings` (same layout). */
  const char *pads_name = ctx->opset < 2 ? "paddings" : "pads";
  const Onnx__AttributeProto *pads =
      attr_of(np, pads_name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  if (!pads) {
    char label[300];
    return dml_status_make(
        DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP, "%s: Pad-%d needs the '%s' attribute",
        onnx_node_label(np, label, sizeof(label)), ctx->opset < 2 ? 1 : 2, pads_name);
  }
  dml_ir_value_t *ops[3] = {in[0], NULL, NULL};
  char base[512];
  DML_RETURN_IF_ERROR(onnx_const_i64(ctx,
                                     join(base, sizeof(base), first_output(np), "/pads"),
                                     pads->ints, pads->n_ints, &ops[1]));
  const Onnx__AttributeProto *value =
      attr_of(np, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  if (value && value->f != 0.0f) {
    double v = value->f;
    DML_RETURN_IF_ERROR(onnx_const_float(
        ctx, join(base, sizeof(base), first_output(np), "/constant_value"),
        known_float_dtype(in[0], DML_DTYPE_F32), &v, 1, 1, &ops[2]));
  }
  static const char *const skip[] = {"pads", "paddings", "value", NULL};
  return emit_node(ctx, np, e->op, ops, ops[2] ? 3 : 2, skip, NULL);
}

/* Clip-6 attributes min/max (opset < 11) -> scalar inputs 1 and 2 (absent
 * when the attribute is: no bound). */
static dml_status_t onnx_imp_clip_attrs(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                        const onnx_op_entry_t *e, dml_ir_value_t **in,
                                        uint32_t n_in) {
  DML_RETURN_IF_ERROR(expect_inputs(np, e, n_in, 1, 1, ctx->opset));
  dml_ir_value_t *ops[3] = {in[0], NULL, NULL};
  static const char *const names[2] = {"min", "max"};
  uint32_t n = 1;
  for (int k = 0; k < 2; k++) {
    const Onnx__AttributeProto *a =
        attr_of(np, names[k], ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    if (!a) continue;
    char base[512], suffix[16];
    snprintf(suffix, sizeof(suffix), "/%s", names[k]);
    double v = a->f;
    DML_RETURN_IF_ERROR(
        onnx_const_float(ctx, join(base, sizeof(base), first_output(np), suffix),
                         known_float_dtype(in[0], DML_DTYPE_F32), &v, 1, 1, &ops[k + 1]));
    n = (uint32_t)k + 2;
  }
  static const char *const skip[] = {"min", "max", "consumed_inputs", NULL};
  return emit_node(ctx, np, e->op, ops, n, skip, NULL);
}

/* Dropout `ratio` attribute (opset < 12, default 0.5) -> f32 scalar input 1;
 * training_mode stays absent (false), as those opsets import for inference.
 * Dropout-1/6's is_test (onnx_op_check refuses 0, training) and
 * consumed_inputs are dropped. */
static dml_status_t onnx_imp_dropout_ratio_attr(onnx_ctx_t *ctx,
                                                const Onnx__NodeProto *np,
                                                const onnx_op_entry_t *e,
                                                dml_ir_value_t **in, uint32_t n_in) {
  DML_RETURN_IF_ERROR(expect_inputs(np, e, n_in, 1, 1, ctx->opset));
  const Onnx__AttributeProto *a =
      attr_of(np, "ratio", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  double ratio = a ? a->f : 0.5;
  dml_ir_value_t *ops[2] = {in[0], NULL};
  char base[512];
  DML_RETURN_IF_ERROR(
      onnx_const_float(ctx, join(base, sizeof(base), first_output(np), "/ratio"),
                       DML_DTYPE_F32, &ratio, 1, 1, &ops[1]));
  static const char *const skip[] = {"ratio", "is_test", "consumed_inputs", NULL};
  return emit_node(ctx, np, e->op, ops, 2, skip, NULL);
}

/* BatchNormalization-7 `spatial` (1 checked by onnx_op_check) is dropped;
 * so are BatchNormalization-1/6's is_test (onnx_op_check refuses 0, the
 * training form) and consumed_inputs. */
static dml_status_t onnx_imp_batchnorm_spatial(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                               const onnx_op_entry_t *e,
                                               dml_ir_value_t **in, uint32_t n_in) {
  static const char *const skip[] = {"spatial", "is_test", "consumed_inputs", NULL};
  return emit_node(ctx, np, e->op, in, n_in, skip, NULL);
}

/* Softmax/LogSoftmax before opset 13 coerce the input to 2-D at `axis`
 * (default 1) and normalize each row:
 *   s = Shape(x); f = Flatten(x, axis); y2 = Softmax(f, axis=1); y = Reshape(y2, s).
 * When x's rank is known and axis is its last dim, one Softmax(axis=-1). */
static dml_status_t onnx_imp_softmax_coerce2d(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                              const onnx_op_entry_t *e,
                                              dml_ir_value_t **in, uint32_t n_in) {
  DML_RETURN_IF_ERROR(expect_inputs(np, e, n_in, 1, 1, ctx->opset));
  int64_t axis = attr_int(np, "axis", 1);
  static const char *const skip[] = {"axis", NULL};
  dml_ir_value_t *x = in[0];
  if (x->kind != DML_IR_VALUE_RESULT && x->type.rank > 0 &&
      (axis == -1 || axis == x->type.rank - 1)) {
    dml_ir_node_t *node = NULL;
    DML_RETURN_IF_ERROR(emit_node(ctx, np, e->op, &x, 1, skip, &node));
    return dml_ir_node_set_attr_int(node, "axis", -1);
  }
  const char *out = first_output(np);
  const char *nn = is_empty(np->name) ? out : np->name;
  char nbuf[512], vbuf[512];
  dml_ir_node_t *shape = NULL, *flat = NULL, *sm = NULL, *reshape = NULL;
  DML_RETURN_IF_ERROR(onnx_emit(ctx, DML_OP_SHAPE, join(nbuf, sizeof(nbuf), nn, "/shape"),
                                1, &x, 1, &shape));
  DML_RETURN_IF_ERROR(onnx_emit(
      ctx, DML_OP_FLATTEN, join(nbuf, sizeof(nbuf), nn, "/flatten"), 1, &x, 1, &flat));
  DML_RETURN_IF_ERROR(dml_ir_node_set_attr_int(flat, "axis", axis));
  DML_RETURN_IF_ERROR(onnx_emit(ctx, e->op, np->name, 1, &flat->outputs[0], 1, &sm));
  DML_RETURN_IF_ERROR(dml_ir_node_set_attr_int(sm, "axis", 1));
  DML_RETURN_IF_ERROR(onnx_copy_attrs(ctx, sm, np, skip));
  dml_ir_value_t *rin[2] = {sm->outputs[0], shape->outputs[0]};
  DML_RETURN_IF_ERROR(onnx_emit(ctx, DML_OP_RESHAPE,
                                join(nbuf, sizeof(nbuf), nn, "/reshape"), 2, rin, 1,
                                &reshape));
  static const char *const suffix[3] = {"/input_shape", "/flat2d", "/softmax2d"};
  dml_ir_node_t *mid[3] = {shape, flat, sm};
  for (int k = 0; k < 3; k++) {
    mid[k]->outputs[0]->name =
        onnx_unique_name(ctx, join(vbuf, sizeof(vbuf), out, suffix[k]));
    if (!mid[k]->outputs[0]->name) return oom();
  }
  return onnx_bind_outputs(ctx, np, reshape);
}

/* Upsample (opset 7..9) and Resize-10 -> Resize(X, roi=_, scales, sizes=_)
 * with their coordinate mapping made explicit: x_in = x_out / scale
 * ("asymmetric") and, for nearest, floor. Upsample-7 takes `scales` as an
 * attribute, the others as input 1. */
static dml_status_t onnx_imp_upsample(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                      const onnx_op_entry_t *e, dml_ir_value_t **in,
                                      uint32_t n_in) {
  int scales_attr = strcmp(np->op_type, "Upsample") == 0 && ctx->opset < 9;
  DML_RETURN_IF_ERROR(
      expect_inputs(np, e, n_in, scales_attr ? 1 : 2, scales_attr ? 1 : 2, ctx->opset));
  dml_ir_value_t *ops[3] = {in[0], NULL, NULL};
  if (scales_attr) {
    const Onnx__AttributeProto *a =
        attr_of(np, "scales", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
    if (!a) {
      char label[300];
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                             "%s: Upsample-7 needs the 'scales' attribute",
                             onnx_node_label(np, label, sizeof(label)));
    }
    double *v = (double *)malloc(sizeof(double) * (a->n_floats + 1));
    if (!v) return oom();
    for (size_t i = 0; i < a->n_floats; i++) v[i] = a->floats[i];
    char base[512];
    dml_status_t st =
        onnx_const_float(ctx, join(base, sizeof(base), first_output(np), "/scales"),
                         DML_DTYPE_F32, v, a->n_floats, 0, &ops[2]);
    free(v);
    DML_RETURN_IF_ERROR(st);
  } else {
    ops[2] = in[1];
  }
  char mode[32];
  const char *m = attr_str(np, "mode", "nearest", mode, sizeof(mode));
  static const char *const skip[] = {"scales", "mode", NULL};
  dml_ir_node_t *node = NULL;
  DML_RETURN_IF_ERROR(emit_node(ctx, np, DML_OP_RESIZE, ops, 3, skip, &node));
  DML_RETURN_IF_ERROR(dml_ir_node_set_attr_string(node, "mode", m));
  DML_RETURN_IF_ERROR(
      dml_ir_node_set_attr_string(node, "coordinate_transformation_mode", "asymmetric"));
  return dml_ir_node_set_attr_string(node, "nearest_mode", "floor");
}

/* Constant -> a global named after the output (no flag), no node. */
static dml_status_t onnx_imp_constant(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                      const onnx_op_entry_t *e, dml_ir_value_t **in,
                                      uint32_t n_in) {
  char label[300];
  onnx_node_label(np, label, sizeof(label));
  if (n_in || np->n_output != 1 || is_empty(np->output[0]))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s must have no inputs and one named output", label);
  const char *name = np->output[0];
  const Onnx__AttributeProto *a = NULL;
  for (size_t i = 0; i < np->n_attribute; i++) {
    const char *an = np->attribute[i]->name;
    if (is_empty(an) || strncmp(an, "value", 5) != 0) continue;
    if (a)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                             "%s has more than one value attribute ('%s' and '%s')",
                             label, a->name, an);
    a = np->attribute[i];
  }
  if (!a)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s has no value attribute", label);
  Onnx__AttributeProto__AttributeType at = onnx_attr_type(a);
  dml_type_t type;
  const void *data = NULL;
  size_t bytes = 0;
  void *owned = NULL;
  int64_t dim = 0;
  if (strcmp(a->name, "value") == 0 &&
      at == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR && a->t) {
    char what[400];
    snprintf(what, sizeof(what), "value of %s", label);
    dml_tensor_t t;
    DML_RETURN_IF_ERROR(
        onnx_tensor_decode(a->t, ctx->base_dir, what, &t, &owned, &bytes));
    type = dml_type_static(t.dtype, t.rank, t.dims);
    data = t.data;
  } else if (strcmp(a->name, "value_float") == 0 &&
             at == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT) {
    type = dml_type_static(DML_DTYPE_F32, 0, NULL);
    data = &a->f;
    bytes = sizeof(float);
  } else if (strcmp(a->name, "value_floats") == 0 &&
             at == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS) {
    dim = (int64_t)a->n_floats;
    type = dml_type_static(DML_DTYPE_F32, 1, &dim);
    data = a->floats;
    bytes = a->n_floats * sizeof(float);
  } else if (strcmp(a->name, "value_int") == 0 &&
             at == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT) {
    type = dml_type_static(DML_DTYPE_I64, 0, NULL);
    data = &a->i;
    bytes = sizeof(int64_t);
  } else if (strcmp(a->name, "value_ints") == 0 &&
             at == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS) {
    dim = (int64_t)a->n_ints;
    type = dml_type_static(DML_DTYPE_I64, 1, &dim);
    data = a->ints;
    bytes = a->n_ints * sizeof(int64_t);
  } else if ((strcmp(a->name, "value_string") == 0 &&
              at == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING) ||
             (strcmp(a->name, "value_strings") == 0 &&
              at == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS)) {
    /* string constants: descriptors into the protobuf's bytes, which
     * dml_ir_module_add_global copies into the module */
    int one = strcmp(a->name, "value_string") == 0;
    size_t n = one ? 1 : a->n_strings;
    dim = (int64_t)n;
    type = dml_type_static(DML_DTYPE_STRING, one ? 0 : 1, &dim);
    dml_str_t *d = (dml_str_t *)calloc(n ? n : 1, sizeof(dml_str_t));
    if (!d)
      return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, ONNX_ERR_OP, "out of memory");
    for (size_t i = 0; i < n; i++) {
      const ProtobufCBinaryData *b = one ? &a->s : &a->strings[i];
      d[i].data = b->len ? (const char *)b->data : "";
      d[i].len = b->len;
    }
    owned = d;
    data = d;
    bytes = n * sizeof(dml_str_t);
  } else {
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: attribute '%s' has the wrong type", label, a->name);
  }
  static const uint8_t empty = 0;
  dml_ir_value_t *g = NULL;
  dml_status_t st =
      dml_ir_module_add_global(ctx->m, name, &type, data ? data : &empty, bytes, 0, &g);
  free(owned);
  DML_RETURN_IF_ERROR(st);
  (void)e;
  return onnx_define(ctx, name, g);
}

/* Cast-19's `saturate` and Cast-24's `round_mode` decide float8 targets
 * only (ONNX Cast-19..25: saturate for FLOAT8E4M3FN/FNUZ and
 * FLOAT8E5M2/FNUZ, round_mode "up"/"down"/"nearest" for FLOAT8E8M0): kept
 * on the node for such a target (the CPU's Cast reads them, default 1 and
 * "up"), dropped for any other. `target` is the target dtype, INVALID when
 * not known at import (CastLike of a computed value: kept). */
static dml_status_t float8_attrs(const Onnx__NodeProto *np, dml_dtype_t target,
                                 const char *const **out_skip) {
  static const char *const drop[] = {"saturate", "round_mode", NULL};
  static const char *const keep[] = {NULL};
  char buf[32], label[300];
  const char *rm = attr_str(np, "round_mode", "up", buf, sizeof(buf));
  if (strcmp(rm, "up") != 0 && strcmp(rm, "down") != 0 && strcmp(rm, "nearest") != 0)
    return dml_status_detail(
        dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                        "%s: round_mode='%s' is not up, down or nearest",
                        onnx_node_label(np, label, sizeof(label)), rm),
        "ONNX Cast-24 round_mode (FLOAT8E8M0 targets)");
  *out_skip = target == DML_DTYPE_INVALID || dml_dtype_is_float8(target) ? keep : drop;
  return DML_OK;
}

/* CastLike-15 -> Cast(to = input 1's dtype) when that dtype is known at
 * import (an argument or a global), else a CastLike node. */
static dml_status_t onnx_imp_castlike(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                      const onnx_op_entry_t *e, dml_ir_value_t **in,
                                      uint32_t n_in) {
  DML_RETURN_IF_ERROR(expect_inputs(np, e, n_in, 2, 2, ctx->opset));
  const char *const *skip = NULL;
  if (in[1] && in[1]->kind != DML_IR_VALUE_RESULT) {
    int code = dml_dtype_onnx_code(in[1]->type.dtype);
    if (code > 0) {
      DML_RETURN_IF_ERROR(float8_attrs(np, in[1]->type.dtype, &skip));
      dml_ir_node_t *node = NULL;
      DML_RETURN_IF_ERROR(emit_node(ctx, np, DML_OP_CAST, in, 1, skip, &node));
      return dml_ir_node_set_attr_int(node, "to", code);
    }
  }
  DML_RETURN_IF_ERROR(float8_attrs(np, DML_DTYPE_INVALID, &skip));
  return emit_node(ctx, np, e->op, in, n_in, skip, NULL);
}

/* Cast-19..28: `saturate` and `round_mode` as float8_attrs says. */
static dml_status_t onnx_imp_drop_saturate(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                           const onnx_op_entry_t *e, dml_ir_value_t **in,
                                           uint32_t n_in) {
  int64_t to = attr_int(np, "to", 0);
  const char *const *skip = NULL;
  DML_RETURN_IF_ERROR(float8_attrs(
      np, to >= INT32_MIN && to <= INT32_MAX ? onnx_dtype((int32_t)to) : DML_DTYPE_STRING,
      &skip));
  return emit_node(ctx, np, e->op, in, n_in, skip, NULL);
}

/* Range-27: `stash_type` 1 (the default) computes a float16/bfloat16 range
 * in float32 and rounds each element to the input's type; dmlc's Range
 * computes start + i * delta of those dtypes in double and rounds once (at
 * least float32's precision: within one unit of the last place of the
 * input's type of the float32 form). 0 (arithmetic in the input's own
 * type, rounding at every step) is refused for float16/bfloat16 (and has
 * no effect on the other dtypes). */
static dml_status_t onnx_imp_range27(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                     const onnx_op_entry_t *e, dml_ir_value_t **in,
                                     uint32_t n_in) {
  DML_RETURN_IF_ERROR(expect_inputs(np, e, n_in, 3, 3, ctx->opset));
  int64_t stash = attr_int(np, "stash_type", 1);
  char label[300];
  if (stash != 0 && stash != 1)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: stash_type=%lld is not 0 or 1",
                           onnx_node_label(np, label, sizeof(label)), (long long)stash);
  dml_dtype_t dt = in[0] ? in[0]->type.dtype : DML_DTYPE_INVALID;
  if (stash == 0 && (dt == DML_DTYPE_F16 || dt == DML_DTYPE_BF16 || !in[0] ||
                     in[0]->kind == DML_IR_VALUE_RESULT))
    return dml_status_detail(
        dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                        "%s: Range-%lld stash_type=0 (accumulation in %s) is not "
                        "supported",
                        onnx_node_label(np, label, sizeof(label)), (long long)ctx->opset,
                        dml_dtype_name(dt)),
        "leave stash_type at 1 (computed in float32)");
  static const char *const skip[] = {"stash_type", NULL};
  return emit_node(ctx, np, e->op, in, n_in, skip, NULL);
}

/* One node of an importer-made expansion (Swish, Pad-18 axes): op(a, b, c) (NULL operands
 * left out at the end) named after np, its output "<np's output><suffix>". */
static dml_status_t pad_step(onnx_ctx_t *ctx, const Onnx__NodeProto *np, dml_op_t op,
                             const char *suffix, dml_ir_value_t *a, dml_ir_value_t *b,
                             dml_ir_value_t *c, dml_ir_value_t **out,
                             dml_ir_node_t **out_node) {
  dml_ir_value_t *ops[3] = {a, b, c};
  uint32_t n = c ? 3 : b ? 2 : 1;
  const char *o = first_output(np), *nn = is_empty(np->name) ? o : np->name;
  char nbuf[512], vbuf[512];
  dml_ir_node_t *node = NULL;
  DML_RETURN_IF_ERROR(
      onnx_emit(ctx, op, join(nbuf, sizeof(nbuf), nn, suffix), n, ops, 1, &node));
  node->outputs[0]->name = onnx_unique_name(ctx, join(vbuf, sizeof(vbuf), o, suffix));
  if (!node->outputs[0]->name) return oom();
  *out = node->outputs[0];
  if (out_node) *out_node = node;
  return DML_OK;
}

/* Swish-24 (Y = X * Sigmoid(alpha * X)) and SwiGLU-28 (Y = Swish(A) * B,
 * same shapes) as their ONNX function bodies: Mul(X, Sigmoid(Mul(alpha,
 * X))), then Mul by B for SwiGLU. alpha is a constant of X's dtype when
 * the importer knows it (after inferring the nodes so far), else
 * CastLike(alpha, X) as in the function body. */
static dml_status_t onnx_imp_swish(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                   const onnx_op_entry_t *e, dml_ir_value_t **in,
                                   uint32_t n_in) {
  int glu = strcmp(e->name, "SwiGLU") == 0;
  DML_RETURN_IF_ERROR(expect_inputs(np, e, n_in, glu ? 2 : 1, glu ? 2 : 1, ctx->opset));
  char label[300];
  if (!in[0] || (glu && !in[1]))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: its inputs are required",
                           onnx_node_label(np, label, sizeof(label)));
  const Onnx__AttributeProto *aa =
      attr_of(np, "alpha", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  double alpha = aa ? (double)aa->f : 1.0;
  if (in[0]->type.rank == DML_RANK_UNKNOWN) onnx_infer_pending(ctx);
  dml_dtype_t dt =
      in[0]->type.rank != DML_RANK_UNKNOWN && dml_dtype_is_float(in[0]->type.dtype)
          ? in[0]->type.dtype
          : DML_DTYPE_INVALID;
  dml_ir_value_t *a = NULL, *ax = NULL, *sg = NULL, *sw = NULL;
  char vbuf[512];
  DML_RETURN_IF_ERROR(
      onnx_const_float(ctx, join(vbuf, sizeof(vbuf), first_output(np), "/alpha"),
                       dt != DML_DTYPE_INVALID ? dt : DML_DTYPE_F32, &alpha, 1, 1, &a));
  if (dt == DML_DTYPE_INVALID)
    DML_RETURN_IF_ERROR(
        pad_step(ctx, np, DML_OP_CAST_LIKE, "/alpha_like", a, in[0], NULL, &a, NULL));
  DML_RETURN_IF_ERROR(
      pad_step(ctx, np, DML_OP_MUL, "/alpha_x", a, in[0], NULL, &ax, NULL));
  DML_RETURN_IF_ERROR(
      pad_step(ctx, np, DML_OP_SIGMOID, "/sigmoid", ax, NULL, NULL, &sg, NULL));
  dml_ir_value_t *ops[2] = {in[0], sg};
  dml_ir_node_t *last = NULL;
  if (glu) {
    DML_RETURN_IF_ERROR(
        pad_step(ctx, np, DML_OP_MUL, "/swish", in[0], sg, NULL, &sw, NULL));
    ops[0] = sw, ops[1] = in[1];
  }
  DML_RETURN_IF_ERROR(onnx_emit(ctx, DML_OP_MUL, np->name, 2, ops, 1, &last));
  return onnx_bind_outputs(ctx, np, last);
}

/* ---- ai.onnx.ml ---- */

/* Binarizer-1 (ai.onnx.ml): Y = X > threshold ? 1 : 0 in X's dtype, as
 * Cast(Greater(X, threshold), to = X's dtype). Float inputs only (the
 * threshold is a float). */
static dml_status_t onnx_imp_binarizer(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                       const onnx_op_entry_t *e, dml_ir_value_t **in,
                                       uint32_t n_in) {
  DML_RETURN_IF_ERROR(expect_inputs(np, e, n_in, 1, 1, ctx->opset));
  char label[300];
  if (in[0]->type.rank == DML_RANK_UNKNOWN) onnx_infer_pending(ctx);
  dml_dtype_t dt = in[0]->type.dtype;
  if (!dml_dtype_is_float(dt))
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                           "%s: input dtype %s is not supported (float dtypes only)",
                           onnx_node_label(np, label, sizeof(label)), dml_dtype_name(dt));
  const Onnx__AttributeProto *ta =
      attr_of(np, "threshold", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  double th = ta ? (double)ta->f : 0.0;
  dml_ir_value_t *t = NULL, *gt = NULL;
  char vbuf[512];
  DML_RETURN_IF_ERROR(onnx_const_float(
      ctx, join(vbuf, sizeof(vbuf), first_output(np), "/threshold"), dt, &th, 1, 0, &t));
  DML_RETURN_IF_ERROR(
      pad_step(ctx, np, DML_OP_GREATER, "/greater", in[0], t, NULL, &gt, NULL));
  dml_ir_node_t *last = NULL;
  DML_RETURN_IF_ERROR(onnx_emit(ctx, DML_OP_CAST, np->name, 1, &gt, 1, &last));
  DML_RETURN_IF_ERROR(dml_ir_node_set_attr_int(last, "to", dml_dtype_onnx_code(dt)));
  return onnx_bind_outputs(ctx, np, last);
}

/* ArrayFeatureExtractor-1 (ai.onnx.ml): Y[..., j] = X[..., indices[j]], as
 * Gather(X, indices, axis = -1) for X of rank >= 2 and 1-D indices (ONNX
 * Runtime's rule; X of rank 1 gives [1, n] there, refused here). */
static dml_status_t onnx_imp_array_feature_extractor(onnx_ctx_t *ctx,
                                                     const Onnx__NodeProto *np,
                                                     const onnx_op_entry_t *e,
                                                     dml_ir_value_t **in, uint32_t n_in) {
  DML_RETURN_IF_ERROR(expect_inputs(np, e, n_in, 2, 2, ctx->opset));
  char label[300];
  if (in[0]->type.rank == DML_RANK_UNKNOWN || in[1]->type.rank == DML_RANK_UNKNOWN)
    onnx_infer_pending(ctx);
  if (in[0]->type.rank < 2 || in[1]->type.rank != 1)
    return dml_status_detail(
        dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                        "%s: only X of rank >= 2 with 1-D indices is supported",
                        onnx_node_label(np, label, sizeof(label))),
        "X rank %d, indices rank %d", (int)in[0]->type.rank, (int)in[1]->type.rank);
  dml_ir_node_t *last = NULL;
  DML_RETURN_IF_ERROR(onnx_emit(ctx, DML_OP_GATHER, np->name, 2, in, 1, &last));
  DML_RETURN_IF_ERROR(dml_ir_node_set_attr_int(last, "axis", -1));
  return onnx_bind_outputs(ctx, np, last);
}

/* One LabelEncoder key/value/default attribute set as the IR's form
 * (cpu_strings.c): strings become a STRINGS attribute `sname` (a STRING
 * `sname` for the default), numbers a TENSOR `tname`. */
static dml_status_t label_attr(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                               dml_ir_node_t *node, const char *prefix, int is_default,
                               const char *sname, const char *tname, int *found) {
  char an[64], label[300];
  const Onnx__AttributeProto *a;
  /* *_strings / default_string */
  snprintf(an, sizeof an, "%s_string%s", prefix, is_default ? "" : "s");
  a = attr_of(np, an,
              is_default ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING
                         : ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);
  if (a) {
    *found = 1;
    if (is_default) {
      char *v = (char *)calloc(a->s.len + 1, 1);
      if (!v) return oom();
      if (a->s.len) memcpy(v, a->s.data, a->s.len);
      dml_status_t st = dml_ir_node_set_attr_string(node, sname, v);
      free(v);
      return st;
    }
    char **v = (char **)calloc(a->n_strings ? a->n_strings : 1, sizeof(char *));
    dml_status_t st = v ? DML_OK : oom();
    for (size_t i = 0; !st && i < a->n_strings; i++) {
      v[i] = (char *)calloc(a->strings[i].len + 1, 1);
      if (!v[i])
        st = oom();
      else if (a->strings[i].len)
        memcpy(v[i], a->strings[i].data, a->strings[i].len);
    }
    if (!st)
      st =
          dml_ir_node_set_attr_strings(node, sname, (const char *const *)v, a->n_strings);
    for (size_t i = 0; v && i < a->n_strings; i++) free(v[i]);
    free(v);
    return st;
  }
  /* *_int64s / *_floats / default_int64 / default_float */
  for (int k = 0; k < 2; k++) {
    snprintf(
        an, sizeof an, "%s_%s", prefix,
        k == 0 ? (is_default ? "int64" : "int64s") : (is_default ? "float" : "floats"));
    a = attr_of(np, an,
                k == 0 ? (is_default ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT
                                     : ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS)
                       : (is_default ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT
                                     : ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS));
    if (!a) continue;
    *found = 1;
    dml_tensor_t t;
    memset(&t, 0, sizeof t);
    t.rank = 1;
    t.dtype = k == 0 ? DML_DTYPE_I64 : DML_DTYPE_F32;
    t.dims[0] = is_default ? 1 : (int64_t)(k == 0 ? a->n_ints : a->n_floats);
    t.data = k == 0 ? (void *)(is_default ? &a->i : a->ints)
                    : (void *)(is_default ? &a->f : a->floats);
    static const uint8_t none = 0;
    if (t.dims[0] == 0) t.data = (void *)&none;
    return dml_ir_node_set_attr_tensor(node, tname, &t);
  }
  /* *_tensor */
  snprintf(an, sizeof an, "%s_tensor", prefix);
  a = attr_of(np, an, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
  if (!a || !a->t) return DML_OK;
  *found = 1;
  char what[400];
  snprintf(what, sizeof what, "attribute '%s' of %s", an,
           onnx_node_label(np, label, sizeof(label)));
  dml_tensor_t t;
  void *owned = NULL;
  size_t bytes = 0;
  DML_RETURN_IF_ERROR(onnx_tensor_decode(a->t, ctx->base_dir, what, &t, &owned, &bytes));
  dml_status_t st = DML_OK;
  if (t.dtype == DML_DTYPE_STRING) {
    int64_t n = dml_dims_numel(t.dims, t.rank);
    char **v = (char **)calloc(n > 0 ? (size_t)n : 1, sizeof(char *));
    if (!v) st = oom();
    for (int64_t i = 0; !st && i < n; i++) {
      const dml_str_t *e = &((const dml_str_t *)t.data)[i];
      if (memchr(e->data, 0, (size_t)e->len))
        st = dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                             "%s: string %lld holds a NUL byte", what, (long long)i);
      else if (!(v[i] = (char *)calloc((size_t)e->len + 1, 1)))
        st = oom();
      else if (e->len)
        memcpy(v[i], e->data, (size_t)e->len);
    }
    if (!st && is_default)
      st = n >= 1 ? dml_ir_node_set_attr_string(node, sname, v[0]) : DML_OK;
    else if (!st)
      st = dml_ir_node_set_attr_strings(node, sname, (const char *const *)v, (size_t)n);
    for (int64_t i = 0; v && i < n; i++) free(v[i]);
    free(v);
  } else {
    if (!t.data) {
      static const uint8_t none = 0;
      t.data = (void *)&none;
    }
    st = dml_ir_node_set_attr_tensor(node, tname, &t);
  }
  free(owned);
  return st;
}

/* LabelEncoder-2..4 (ai.onnx.ml): keys_* / values_* / default_* (and
 * keys_tensor / values_tensor / default_tensor of version 4) normalized to
 * the IR's keys_strings | keys, values_strings | values, default_string |
 * default (cpu_strings.c). */
static dml_status_t onnx_imp_label_encoder(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                           const onnx_op_entry_t *e, dml_ir_value_t **in,
                                           uint32_t n_in) {
  DML_RETURN_IF_ERROR(expect_inputs(np, e, n_in, 1, 1, ctx->opset));
  static const char *const skip[] = {"default_float",
                                     "default_int64",
                                     "default_string",
                                     "default_tensor",
                                     "keys_floats",
                                     "keys_int64s",
                                     "keys_strings",
                                     "keys_tensor",
                                     "values_floats",
                                     "values_int64s",
                                     "values_strings",
                                     "values_tensor",
                                     NULL};
  dml_ir_node_t *node = NULL;
  DML_RETURN_IF_ERROR(emit_node(ctx, np, e->op, in, n_in, skip, &node));
  int fk = 0, fv = 0, fd = 0;
  DML_RETURN_IF_ERROR(label_attr(ctx, np, node, "keys", 0, "keys_strings", "keys", &fk));
  DML_RETURN_IF_ERROR(
      label_attr(ctx, np, node, "values", 0, "values_strings", "values", &fv));
  DML_RETURN_IF_ERROR(
      label_attr(ctx, np, node, "default", 1, "default_string", "default", &fd));
  if (!fk || !fv) {
    char label[300];
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: needs keys_* and values_* attributes",
                           onnx_node_label(np, label, sizeof(label)));
  }
  return DML_OK;
}

/* Normalizes `n` axes (negative counting from the end) of a rank-r tensor
 * into out[], each at most once (INVALID_ARGUMENT otherwise). */
static dml_status_t norm_axes(const char *label, const int64_t *ax, int64_t n, int32_t r,
                              int64_t *out) {
  int seen[DML_MAX_RANK] = {0};
  if (n > r)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: axes has %lld values for data of rank %d", label,
                           (long long)n, (int)r);
  for (int64_t j = 0; j < n; j++) {
    int64_t a = ax[j];
    if (a < -r || a >= r)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                             "%s: axes[%lld] = %lld is out of range for rank %d", label,
                             (long long)j, (long long)a, (int)r);
    if (a < 0) a += r;
    if (seen[a]++)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                             "%s: axis %lld appears twice in axes", label, (long long)a);
    out[j] = a;
  }
  return DML_OK;
}

/* One IR node of `op` on n_in operands; *out its output 0. */
static dml_status_t emit_val(onnx_ctx_t *ctx, dml_op_t op, uint32_t n_in,
                             dml_ir_value_t *const *ins, dml_ir_value_t **out) {
  dml_ir_node_t *node = NULL;
  DML_RETURN_IF_ERROR(onnx_emit(ctx, op, NULL, n_in, ins, 1, &node));
  if (op == DML_OP_CONCAT || op == DML_OP_GATHER)
    DML_RETURN_IF_ERROR(dml_ir_node_set_attr_int(node, "axis", 0));
  *out = node->outputs[0];
  return DML_OK;
}

/* Pads for every dim of a rank-r tensor from `pads` (2n values: the begin
 * pads of axes ax[0..n-1], then their end pads; normalized axes): the
 * Gather(Concat(pads, [0]), idx) with idx[s*r + d] the position of dim d's
 * begin (s = 0) or end (s = 1) pad in `pads`, or the appended 0 for dims not
 * in ax. `pads` may be computed at run time. */
static dml_status_t full_pads(onnx_ctx_t *ctx, dml_ir_value_t *pads, const int64_t *ax,
                              int64_t n, int32_t r, dml_ir_value_t **out) {
  int64_t idx[2 * DML_MAX_RANK];
  for (int32_t k = 0; k < 2 * r; k++) idx[k] = 2 * n; /* the appended 0 */
  for (int64_t j = 0; j < n; j++) idx[ax[j]] = j, idx[r + ax[j]] = n + j;
  static const int64_t zero = 0;
  dml_ir_value_t *z = NULL, *iv = NULL, *cat = NULL;
  DML_RETURN_IF_ERROR(onnx_const_i64(ctx, "pad_zero", &zero, 1, &z));
  DML_RETURN_IF_ERROR(onnx_const_i64(ctx, "pad_axes_index", idx, (size_t)(2 * r), &iv));
  dml_ir_value_t *ci[2] = {pads, z}; /* int64 (ONNX); Concat's inference checks it */
  DML_RETURN_IF_ERROR(emit_val(ctx, DML_OP_CONCAT, 2, ci, &cat));
  dml_ir_value_t *gi[2] = {cat, iv};
  return emit_val(ctx, DML_OP_GATHER, 2, gi, out);
}

/* Pad-18..28: as Pad-11 plus an optional input 3, `axes` (the dims that
 * `pads` covers, negative from the end; int32 or int64). Without axes
 * (PyTorch's exports) it is Pad-11's form. With axes the importer builds
 * pads for every dim (0 for the dims axes leaves out), which needs the
 * data's rank and axes' length at import:
 *   constant axes (checked: in range, no repeats) and constant pads: a
 *   constant; constant axes, computed pads: ScatterElements(zeros [2r],
 *   [axes, axes + r], pads); axes fed at run time: the index computed too,
 *   Where(axes < 0, axes + r, axes) (an index out of range is the
 *   scatter's run-time error; a repeated axis: the last one wins). */
static dml_status_t onnx_imp_pad18(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                   const onnx_op_entry_t *e, dml_ir_value_t **in,
                                   uint32_t n_in) {
  DML_RETURN_IF_ERROR(expect_inputs(np, e, n_in, 2, 4, ctx->opset));
  if (n_in < 4 || !in[3])
    return emit_node(ctx, np, e->op, in, n_in < 3 ? n_in : 3, NULL, NULL);
  char label[300];
  onnx_node_label(np, label, sizeof(label));
  dml_ir_value_t *ax = in[3], *pads = in[1];
  if (!in[0] || !pads)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: data and pads are required", label);
  if (in[0]->type.rank == DML_RANK_UNKNOWN || pads->type.rank == DML_RANK_UNKNOWN ||
      ax->type.rank == DML_RANK_UNKNOWN)
    onnx_infer_pending(ctx);
  if (in[0]->type.rank == DML_RANK_UNKNOWN || pads->type.dtype != DML_DTYPE_I64 ||
      (ax->type.dtype != DML_DTYPE_I64 && ax->type.dtype != DML_DTYPE_I32) ||
      ax->type.rank != 1 || ax->type.dims[0].sym >= 0)
    return dml_status_detail(
        dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                        "%s: Pad-%lld's input 'axes' needs the data's rank, an i64 "
                        "'pads' and an i32/i64 'axes' of static length at import",
                        label, (long long)ctx->opset),
        "or give 'pads' for every dim of the data (2 * rank values) and leave 'axes' "
        "out");
  int64_t r = in[0]->type.rank, k = ax->type.dims[0].value;
  if (k > r)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: %lld axes for data of rank %lld", label, (long long)k,
                           (long long)r);
  int64_t full[2 * DML_MAX_RANK] = {0}, idx[2 * DML_MAX_RANK];
  int const_axes = ax->kind == DML_IR_VALUE_GLOBAL && (ax->data || k == 0);
  for (int64_t i = 0; const_axes && i < k; i++) {
    int64_t a = dml_load_i64(ax->type.dtype, ax->data, (size_t)i), na = a < 0 ? a + r : a;
    int dup = 0;
    for (int64_t j = 0; j < i; j++) dup |= idx[j] == na;
    if (na < 0 || na >= r || dup)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                             "%s: axes[%lld] = %lld is out of range or repeated for data "
                             "of rank %lld",
                             label, (long long)i, (long long)a, (long long)r);
    idx[i] = na, idx[k + i] = na + r;
  }
  const char *out = first_output(np);
  char vbuf[512];
  dml_ir_value_t *ops[3] = {in[0], NULL, n_in > 2 ? in[2] : NULL};
  if (const_axes && pads->kind == DML_IR_VALUE_GLOBAL && (pads->data || k == 0) &&
      pads->type.rank == 1 && pads->type.dims[0].sym < 0 &&
      pads->type.dims[0].value == 2 * k) {
    for (int64_t i = 0; i < 2 * k; i++) full[idx[i]] = ((const int64_t *)pads->data)[i];
    DML_RETURN_IF_ERROR(onnx_const_i64(ctx, join(vbuf, sizeof(vbuf), out, "/pads"), full,
                                       (size_t)(2 * r), &ops[1]));
    return emit_node(ctx, np, e->op, ops, ops[2] ? 3 : 2, NULL, NULL);
  }
  dml_ir_value_t *zeros = NULL, *index = NULL;
  DML_RETURN_IF_ERROR(onnx_const_i64(ctx, join(vbuf, sizeof(vbuf), out, "/zero_pads"),
                                     full, (size_t)(2 * r), &zeros));
  if (const_axes) {
    DML_RETURN_IF_ERROR(onnx_const_i64(ctx, join(vbuf, sizeof(vbuf), out, "/pad_index"),
                                       idx, (size_t)(2 * k), &index));
  } else {
    dml_ir_value_t *a64 = ax, *zero = NULL, *rank = NULL, *neg = NULL, *wrapped = NULL,
                   *lo = NULL, *hi = NULL;
    if (ax->type.dtype != DML_DTYPE_I64) {
      dml_ir_node_t *cast = NULL;
      DML_RETURN_IF_ERROR(
          pad_step(ctx, np, DML_OP_CAST, "/axes_i64", ax, NULL, NULL, &a64, &cast));
      DML_RETURN_IF_ERROR(dml_ir_node_set_attr_int(cast, "to", 7 /* INT64 */));
    }
    int64_t zv = 0;
    DML_RETURN_IF_ERROR(
        onnx_const_i64(ctx, join(vbuf, sizeof(vbuf), out, "/zero"), &zv, 1, &zero));
    DML_RETURN_IF_ERROR(
        onnx_const_i64(ctx, join(vbuf, sizeof(vbuf), out, "/rank"), &r, 1, &rank));
    DML_RETURN_IF_ERROR(
        pad_step(ctx, np, DML_OP_LESS, "/axes_neg", a64, zero, NULL, &neg, NULL));
    DML_RETURN_IF_ERROR(
        pad_step(ctx, np, DML_OP_ADD, "/axes_wrapped", a64, rank, NULL, &wrapped, NULL));
    DML_RETURN_IF_ERROR(
        pad_step(ctx, np, DML_OP_WHERE, "/axes_norm", neg, wrapped, a64, &lo, NULL));
    DML_RETURN_IF_ERROR(
        pad_step(ctx, np, DML_OP_ADD, "/axes_end", lo, rank, NULL, &hi, NULL));
    dml_ir_node_t *cat = NULL;
    DML_RETURN_IF_ERROR(
        pad_step(ctx, np, DML_OP_CONCAT, "/pad_index", lo, hi, NULL, &index, &cat));
    DML_RETURN_IF_ERROR(dml_ir_node_set_attr_int(cat, "axis", 0));
  }
  DML_RETURN_IF_ERROR(pad_step(ctx, np, DML_OP_SCATTER_ELEMENTS, "/pads", zeros, index,
                               pads, &ops[1], NULL));
  return emit_node(ctx, np, e->op, ops, ops[2] ? 3 : 2, NULL, NULL);
}

/* CenterCropPad-18..23 (input_data, shape; attribute axes, default all
 * dims): ONNX's function body, node for node: per axis a, with x_a the
 * input's extent and s_a the target, pad to max(x_a, s_a) (the extra
 * (max - x_a) / 2 before, the rest after: Pad with zeros), then slice
 * [(p_a - s_a) / 2, that + s_a) of the padded extent p_a. `shape` may be
 * computed or fed at run time (the output dims are then data-dependent,
 * bounded). Input rank must be known at import. */
static dml_status_t onnx_imp_center_crop_pad(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                             const onnx_op_entry_t *e,
                                             dml_ir_value_t **in, uint32_t n_in) {
  DML_RETURN_IF_ERROR(expect_inputs(np, e, n_in, 2, 2, ctx->opset));
  char label[300];
  onnx_node_label(np, label, sizeof(label));
  dml_ir_value_t *x = in[0], *sh = in[1];
  if (x->type.rank == DML_RANK_UNKNOWN) onnx_infer_pending(ctx);
  int32_t r = x->type.rank;
  if (r < 0)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                           "%s: the rank of input_data is not known at import", label);
  const Onnx__AttributeProto *aa =
      attr_of(np, "axes", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  int64_t raw[DML_MAX_RANK], axn[DML_MAX_RANK], n = aa ? (int64_t)aa->n_ints : r;
  if (n > r)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: axes has %lld values for data of rank %d", label,
                           (long long)n, (int)r);
  for (int64_t j = 0; j < n; j++) raw[j] = aa ? aa->ints[j] : j;
  DML_RETURN_IF_ERROR(norm_axes(label, raw, n, r, axn));
  static const int64_t two = 2;
  dml_ir_value_t *k2 = NULL, *axv = NULL, *xs = NULL, *t = NULL;
  DML_RETURN_IF_ERROR(onnx_const_i64(ctx, "center_crop_pad_two", &two, 1, &k2));
  DML_RETURN_IF_ERROR(onnx_const_i64(ctx, "center_crop_pad_axes", axn, (size_t)n, &axv));
  /* x_shape = Gather(Shape(x), axes) */
  DML_RETURN_IF_ERROR(emit_val(ctx, DML_OP_SHAPE, 1, &x, &t));
  dml_ir_value_t *ops[4] = {t, axv};
  DML_RETURN_IF_ERROR(emit_val(ctx, DML_OP_GATHER, 2, ops, &xs));
  dml_ir_value_t *padded = NULL, *amt = NULL, *left = NULL, *right = NULL, *pads = NULL;
  ops[0] = xs, ops[1] = sh;
  DML_RETURN_IF_ERROR(emit_val(ctx, DML_OP_MAX, 2, ops, &padded));
  ops[0] = padded, ops[1] = xs;
  DML_RETURN_IF_ERROR(emit_val(ctx, DML_OP_SUB, 2, ops, &amt));
  ops[0] = amt, ops[1] = k2;
  DML_RETURN_IF_ERROR(emit_val(ctx, DML_OP_DIV, 2, ops, &left));
  ops[0] = amt, ops[1] = left;
  DML_RETURN_IF_ERROR(emit_val(ctx, DML_OP_SUB, 2, ops, &right));
  ops[0] = left, ops[1] = right;
  DML_RETURN_IF_ERROR(emit_val(ctx, DML_OP_CONCAT, 2, ops, &pads));
  dml_ir_value_t *fp = NULL, *px = NULL, *ps = NULL, *diff = NULL, *st = NULL, *en = NULL;
  DML_RETURN_IF_ERROR(full_pads(ctx, pads, axn, n, r, &fp));
  ops[0] = x, ops[1] = fp;
  DML_RETURN_IF_ERROR(emit_val(ctx, DML_OP_PAD, 2, ops, &px));
  DML_RETURN_IF_ERROR(emit_val(ctx, DML_OP_SHAPE, 1, &px, &t));
  ops[0] = t, ops[1] = axv;
  DML_RETURN_IF_ERROR(emit_val(ctx, DML_OP_GATHER, 2, ops, &ps));
  ops[0] = ps, ops[1] = sh;
  DML_RETURN_IF_ERROR(emit_val(ctx, DML_OP_SUB, 2, ops, &diff));
  ops[0] = diff, ops[1] = k2;
  DML_RETURN_IF_ERROR(emit_val(ctx, DML_OP_DIV, 2, ops, &st));
  ops[0] = st, ops[1] = sh;
  DML_RETURN_IF_ERROR(emit_val(ctx, DML_OP_ADD, 2, ops, &en));
  dml_ir_value_t *si[4] = {px, st, en, axv};
  return emit_node(ctx, np, DML_OP_SLICE, si, 4, (const char *const[]){"axes", NULL},
                   NULL);
}

/* DFT-20..23: `axis` moves from an attribute (DFT-17, default 1) to input
 * 2 (default -2). Absent or constant: the IR attribute; fed at run time:
 * IR input 2 (the output shape must not depend on it: infer.c). */
static dml_status_t onnx_imp_dft20(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                   const onnx_op_entry_t *e, dml_ir_value_t **in,
                                   uint32_t n_in) {
  DML_RETURN_IF_ERROR(expect_inputs(np, e, n_in, 1, 3, ctx->opset));
  dml_ir_value_t *ax = n_in > 2 ? in[2] : NULL;
  int64_t axis = -2;
  int rt = 0;
  if (ax) {
    if (ax->kind == DML_IR_VALUE_GLOBAL && ax->data && dml_dtype_is_int(ax->type.dtype) &&
        ax->data_bytes >= dml_dtype_size(ax->type.dtype) &&
        dml_ir_type_numel_bound(ctx->m, &ax->type) == 1)
      axis = dml_load_i64(ax->type.dtype, ax->data, 0);
    else
      rt = 1;
  }
  dml_ir_node_t *node = NULL;
  dml_ir_value_t *ops[3] = {in[0], n_in > 1 ? in[1] : NULL, ax};
  DML_RETURN_IF_ERROR(
      emit_node(ctx, np, e->op, ops, rt ? 3 : (n_in > 1 ? 2 : 1), NULL, &node));
  return rt ? DML_OK : dml_ir_node_set_attr_int(node, "axis", axis);
}

/* QuantizeLinear/DequantizeLinear-19..23. `saturate` (19) only decides
 * float8 outputs: kept when 0 (the CPU's float8 form reads it; 1 is its
 * default), else dropped. `block_size` (21) is kept
 * on DequantizeLinear (blocked dequantization runs) and refused on
 * QuantizeLinear by onnx_op_check, as `precision` (23) other than 0. `output_dtype`
 * (21 for QuantizeLinear, 23 for DequantizeLinear) only restates the
 * output's dtype here: QuantizeLinear's must be that of y_zero_point (uint8
 * without it), DequantizeLinear's that of x_scale; where the importer
 * cannot see that dtype (a computed operand) it is refused. */
static dml_status_t onnx_imp_qdq19(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                   const onnx_op_entry_t *e, dml_ir_value_t **in,
                                   uint32_t n_in) {
  DML_RETURN_IF_ERROR(expect_inputs(np, e, n_in, 2, 3, ctx->opset));
  int64_t od = attr_int(np, "output_dtype", 0);
  if (od != 0) {
    int quant = e->op == DML_OP_QUANTIZE_LINEAR;
    const dml_ir_value_t *ref = quant ? (n_in == 3 ? in[2] : NULL) : in[1];
    dml_dtype_t want =
        od >= INT32_MIN && od <= INT32_MAX ? onnx_dtype((int32_t)od) : DML_DTYPE_INVALID;
    int ok;
    if (quant && !ref)
      ok = want == DML_DTYPE_U8;
    else
      ok = ref && ref->kind != DML_IR_VALUE_RESULT && want != DML_DTYPE_INVALID &&
           ref->type.dtype == want;
    if (!ok) {
      char label[300];
      return dml_status_detail(
          dml_status_make(
              DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
              "%s: %s-%lld output_dtype=%s is not supported",
              onnx_node_label(np, label, sizeof(label)), e->name, (long long)ctx->opset,
              od >= INT32_MIN && od <= INT32_MAX ? onnx_dtype_name((int32_t)od) : "?"),
          quant ? "only the dtype of y_zero_point (an initializer), or uint8 without it"
                : "only the dtype of x_scale (an initializer)");
    }
  }
  /* saturate (float8 outputs only; default 1) is kept when 0 */
  static const char *const skip[] = {"saturate", "output_dtype", "block_size",
                                     "precision", NULL};
  static const char *const skip_keep_sat[] = {"output_dtype", "block_size", "precision",
                                              NULL};
  if (e->op == DML_OP_QUANTIZE_LINEAR && attr_int(np, "saturate", 1) == 0)
    return emit_node(ctx, np, e->op, in, n_in, skip_keep_sat, NULL);
  static const char *const skip_dq[] = {"saturate", "output_dtype", "precision", NULL};
  return emit_node(ctx, np, e->op, in, n_in,
                   e->op == DML_OP_DEQUANTIZE_LINEAR ? skip_dq : skip, NULL);
}

/* LpPool-11..23 (ONNX "LpPool": y = (sum over the window of |x|^p)^(1/p),
 * pads contributing 0) as existing IR ops (the GPU targets do not emit them
 * all yet: lavapipe refuses these tests):
 *   a = Pow(Abs(x), p); m = AveragePool(a, count_include_pad=1, the
 *   window attributes); y = Pow(Mul(m, CastLike(k, x)), 1/p)
 * with k the window's size (the product of kernel_shape): the window mean
 * counting pads times the window size is the window sum. */
static dml_status_t onnx_imp_lppool(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                    const onnx_op_entry_t *e, dml_ir_value_t **in,
                                    uint32_t n_in) {
  DML_RETURN_IF_ERROR(expect_inputs(np, e, n_in, 1, 1, ctx->opset));
  const Onnx__AttributeProto *ks =
      attr_of(np, "kernel_shape", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  char label[300];
  if (!ks || !ks->n_ints)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: LpPool needs the 'kernel_shape' attribute",
                           onnx_node_label(np, label, sizeof(label)));
  double k = 1.0;
  for (size_t i = 0; i < ks->n_ints; i++) k *= (double)ks->ints[i];
  double p = (double)attr_int(np, "p", 2), inv_p = 1.0 / p;
  if (!(p >= 1.0))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP, "%s: p must be >= 1",
                           onnx_node_label(np, label, sizeof(label)));
  const char *out = first_output(np), *nn = is_empty(np->name) ? out : np->name;
  char nbuf[512], vbuf[512];
  dml_ir_value_t *cp = NULL, *cinv = NULL, *ck = NULL;
  DML_RETURN_IF_ERROR(onnx_const_float(ctx, join(vbuf, sizeof(vbuf), out, "/p"),
                                       DML_DTYPE_F32, &p, 1, 1, &cp));
  DML_RETURN_IF_ERROR(onnx_const_float(ctx, join(vbuf, sizeof(vbuf), out, "/inv_p"),
                                       DML_DTYPE_F32, &inv_p, 1, 1, &cinv));
  DML_RETURN_IF_ERROR(onnx_const_float(ctx, join(vbuf, sizeof(vbuf), out, "/window_size"),
                                       DML_DTYPE_F32, &k, 1, 1, &ck));
  dml_ir_node_t *abs = NULL, *pw = NULL, *avg = NULL, *kl = NULL, *mul = NULL,
                *root = NULL;
  DML_RETURN_IF_ERROR(onnx_emit(ctx, DML_OP_ABS, join(nbuf, sizeof(nbuf), nn, "/abs"), 1,
                                &in[0], 1, &abs));
  dml_ir_value_t *ops[2] = {abs->outputs[0], cp};
  DML_RETURN_IF_ERROR(
      onnx_emit(ctx, DML_OP_POW, join(nbuf, sizeof(nbuf), nn, "/pow"), 2, ops, 1, &pw));
  DML_RETURN_IF_ERROR(onnx_emit(ctx, DML_OP_AVERAGE_POOL,
                                join(nbuf, sizeof(nbuf), nn, "/window_mean"), 1,
                                &pw->outputs[0], 1, &avg));
  static const char *const skip[] = {"p", NULL};
  DML_RETURN_IF_ERROR(onnx_copy_attrs(ctx, avg, np, skip));
  DML_RETURN_IF_ERROR(dml_ir_node_set_attr_int(avg, "count_include_pad", 1));
  ops[0] = ck, ops[1] = in[0];
  DML_RETURN_IF_ERROR(onnx_emit(ctx, DML_OP_CAST_LIKE,
                                join(nbuf, sizeof(nbuf), nn, "/window_size_like"), 2, ops,
                                1, &kl));
  ops[0] = avg->outputs[0], ops[1] = kl->outputs[0];
  DML_RETURN_IF_ERROR(onnx_emit(
      ctx, DML_OP_MUL, join(nbuf, sizeof(nbuf), nn, "/window_sum"), 2, ops, 1, &mul));
  ops[0] = mul->outputs[0], ops[1] = cinv;
  DML_RETURN_IF_ERROR(onnx_emit(ctx, DML_OP_POW, np->name, 2, ops, 1, &root));
  static const char *const suffix[5] = {"/abs", "/pow", "/window_mean",
                                        "/window_size_like", "/window_sum"};
  dml_ir_node_t *mid[5] = {abs, pw, avg, kl, mul};
  for (int i = 0; i < 5; i++) {
    mid[i]->outputs[0]->name =
        onnx_unique_name(ctx, join(vbuf, sizeof(vbuf), out, suffix[i]));
    if (!mid[i]->outputs[0]->name) return oom();
  }
  return onnx_bind_outputs(ctx, np, root);
}

/* GlobalLpPool-2 (ONNX "GlobalLpPool": y[n, c, 1, ...] = (the sum over
 * the spatial dims of |x|^p)^(1/p), attribute p, default 2) as existing IR
 * ops:
 *   y = Pow(ReduceSum(Pow(Abs(x), p), axes 2..rank-1, keepdims 1), 1/p)
 * x's rank must be known (>= 3); NaN and inf propagate as through the
 * chain (|+-inf|^p = inf). */
static dml_status_t onnx_imp_global_lppool(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                           const onnx_op_entry_t *e, dml_ir_value_t **in,
                                           uint32_t n_in) {
  DML_RETURN_IF_ERROR(expect_inputs(np, e, n_in, 1, 1, ctx->opset));
  char label[300];
  if (in[0]->type.rank == DML_RANK_UNKNOWN) onnx_infer_pending(ctx);
  int32_t rank = in[0]->type.rank;
  if (rank < 3)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: GlobalLpPool needs X of known rank >= 3 ([N, C, "
                           "spatial...]), got rank %d",
                           onnx_node_label(np, label, sizeof(label)), (int)rank);
  double p = (double)attr_int(np, "p", 2), inv_p = 1.0 / p;
  if (!(p >= 1.0))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP, "%s: p must be >= 1",
                           onnx_node_label(np, label, sizeof(label)));
  int64_t axes[DML_MAX_RANK];
  for (int32_t d = 2; d < rank; d++) axes[d - 2] = d;
  const char *out = first_output(np), *nn = is_empty(np->name) ? out : np->name;
  char nbuf[512], vbuf[512];
  dml_ir_value_t *cp = NULL, *cinv = NULL, *cax = NULL;
  DML_RETURN_IF_ERROR(onnx_const_float(ctx, join(vbuf, sizeof(vbuf), out, "/p"),
                                       DML_DTYPE_F32, &p, 1, 1, &cp));
  DML_RETURN_IF_ERROR(onnx_const_float(ctx, join(vbuf, sizeof(vbuf), out, "/inv_p"),
                                       DML_DTYPE_F32, &inv_p, 1, 1, &cinv));
  DML_RETURN_IF_ERROR(onnx_const_i64(ctx, join(vbuf, sizeof(vbuf), out, "/axes"), axes,
                                     (size_t)rank - 2, &cax));
  dml_ir_node_t *abs = NULL, *pw = NULL, *sum = NULL, *root = NULL;
  DML_RETURN_IF_ERROR(onnx_emit(ctx, DML_OP_ABS, join(nbuf, sizeof(nbuf), nn, "/abs"), 1,
                                &in[0], 1, &abs));
  dml_ir_value_t *ops[2] = {abs->outputs[0], cp};
  DML_RETURN_IF_ERROR(
      onnx_emit(ctx, DML_OP_POW, join(nbuf, sizeof(nbuf), nn, "/pow"), 2, ops, 1, &pw));
  ops[0] = pw->outputs[0], ops[1] = cax;
  DML_RETURN_IF_ERROR(onnx_emit(ctx, DML_OP_REDUCE_SUM,
                                join(nbuf, sizeof(nbuf), nn, "/spatial_sum"), 2, ops, 1,
                                &sum));
  DML_RETURN_IF_ERROR(dml_ir_node_set_attr_int(sum, "keepdims", 1));
  ops[0] = sum->outputs[0], ops[1] = cinv;
  DML_RETURN_IF_ERROR(onnx_emit(ctx, DML_OP_POW, np->name, 2, ops, 1, &root));
  static const char *const suffix[3] = {"/abs", "/pow", "/spatial_sum"};
  dml_ir_node_t *mid[3] = {abs, pw, sum};
  for (int i = 0; i < 3; i++) {
    mid[i]->outputs[0]->name =
        onnx_unique_name(ctx, join(vbuf, sizeof(vbuf), out, suffix[i]));
    if (!mid[i]->outputs[0]->name) return oom();
  }
  return onnx_bind_outputs(ctx, np, root);
}

/* TopK-1 `k` attribute (opset < 10) -> i64 [1] input 1. */
static dml_status_t onnx_imp_topk_attr(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                       const onnx_op_entry_t *e, dml_ir_value_t **in,
                                       uint32_t n_in) {
  DML_RETURN_IF_ERROR(expect_inputs(np, e, n_in, 1, 1, ctx->opset));
  const Onnx__AttributeProto *a =
      attr_of(np, "k", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  if (!a) {
    char label[300];
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: TopK-1 needs the 'k' attribute",
                           onnx_node_label(np, label, sizeof(label)));
  }
  dml_ir_value_t *ops[2] = {in[0], NULL};
  char base[512];
  DML_RETURN_IF_ERROR(onnx_const_i64(
      ctx, join(base, sizeof(base), first_output(np), "/k"), &a->i, 1, &ops[1]));
  static const char *const skip[] = {"k", NULL};
  return emit_node(ctx, np, e->op, ops, 2, skip, NULL);
}

/* RoiAlign-10 has no coordinate_transformation_mode: its sampling grid is
 * opset 16's "output_half_pixel" (no -0.5 shift). */
static dml_status_t onnx_imp_roialign_v10(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                          const onnx_op_entry_t *e, dml_ir_value_t **in,
                                          uint32_t n_in) {
  dml_ir_node_t *node = NULL;
  DML_RETURN_IF_ERROR(emit_node(ctx, np, e->op, in, n_in, NULL, &node));
  return dml_ir_node_set_attr_string(node, "coordinate_transformation_mode",
                                     "output_half_pixel");
}

/* Opsets 1..6 forms equal to a later one but for `consumed_inputs` (a
 * memory hint) and, for Gemm, `broadcast` (C broadcasts only when it is
 * 1; unidirectional broadcasting is the superset): both dropped. */
static dml_status_t onnx_imp_legacy(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                    const onnx_op_entry_t *e, dml_ir_value_t **in,
                                    uint32_t n_in) {
  static const char *const skip[] = {"consumed_inputs", "broadcast", NULL};
  return emit_node(ctx, np, e->op, in, n_in, skip, NULL);
}

/* Binary ops before opset 7 (Add-6 etc., Changelog.md): without
 * `broadcast` the shapes are equal; with broadcast=1, B's dims match a
 * contiguous run of A's starting at `axis` (default: A's trailing dims,
 * which numpy broadcasting already gives). For another `axis`, B is
 * unsqueezed on the right to rank(A) - axis dims, which needs both ranks at
 * import (graph inputs or initializers). */
static dml_status_t onnx_imp_legacy_bcast(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                          const onnx_op_entry_t *e, dml_ir_value_t **in,
                                          uint32_t n_in) {
  DML_RETURN_IF_ERROR(expect_inputs(np, e, n_in, 2, 2, ctx->opset));
  static const char *const skip[] = {"axis", "broadcast", "consumed_inputs", NULL};
  dml_ir_value_t *ops[2] = {in[0], in[1]};
  const Onnx__AttributeProto *ax =
      attr_of(np, "axis", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  if (attr_int(np, "broadcast", 0) == 1 && ax) {
    char label[300], base[512];
    const dml_ir_value_t *a = in[0], *b = in[1];
    if (a->kind == DML_IR_VALUE_RESULT || b->kind == DML_IR_VALUE_RESULT ||
        a->type.rank < 0 || b->type.rank < 0)
      return dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                             "%s: broadcast=1 with axis=%lld needs the ranks of A and B "
                             "at import (graph inputs or initializers)",
                             onnx_node_label(np, label, sizeof(label)), (long long)ax->i);
    int64_t ra = a->type.rank, rb = b->type.rank, axis = ax->i < 0 ? ax->i + ra : ax->i;
    if (axis < 0 || axis + rb > ra)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                             "%s: axis=%lld does not place B (rank %lld) inside A (rank "
                             "%lld)",
                             onnx_node_label(np, label, sizeof(label)), (long long)ax->i,
                             (long long)rb, (long long)ra);
    int64_t n_add = ra - axis - rb, axes[DML_MAX_RANK];
    if (n_add > 0) {
      for (int64_t i = 0; i < n_add; i++) axes[i] = rb + i;
      dml_ir_value_t *uin[2] = {in[1], NULL};
      DML_RETURN_IF_ERROR(
          onnx_const_i64(ctx, join(base, sizeof(base), first_output(np), "/b_axes"), axes,
                         (size_t)n_add, &uin[1]));
      dml_ir_node_t *un = NULL;
      const char *nn = is_empty(np->name) ? first_output(np) : np->name;
      DML_RETURN_IF_ERROR(onnx_emit(ctx, DML_OP_UNSQUEEZE,
                                    join(base, sizeof(base), nn, "/align_b"), 2, uin, 1,
                                    &un));
      un->outputs[0]->name =
          onnx_unique_name(ctx, join(base, sizeof(base), first_output(np), "/b_aligned"));
      if (!un->outputs[0]->name) return oom();
      ops[1] = un->outputs[0];
    }
  }
  return emit_node(ctx, np, e->op, ops, 2, skip, NULL);
}

/* PRelu before opset 7 (Changelog.md PRelu-6): a slope of size 1 is shared;
 * a 1-D slope of C elements applies per channel (dim 1 of X), which numpy
 * broadcasting gives once the slope is unsqueezed to [C, 1, ..., 1] (rank
 * X - 1). That needs X's rank at import (a graph input or initializer). */
static dml_status_t onnx_imp_prelu_legacy(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                          const onnx_op_entry_t *e, dml_ir_value_t **in,
                                          uint32_t n_in) {
  DML_RETURN_IF_ERROR(expect_inputs(np, e, n_in, 2, 2, ctx->opset));
  static const char *const skip[] = {"consumed_inputs", NULL};
  if (!in[0] || !in[1]) {
    char label[300];
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: X and slope are required (an input name is empty)",
                           onnx_node_label(np, label, sizeof(label)));
  }
  dml_ir_value_t *ops[2] = {in[0], in[1]};
  const dml_ir_value_t *x = in[0], *slope = in[1];
  int per_channel = slope->type.rank == 1 &&
                    !(slope->type.dims[0].sym < 0 && slope->type.dims[0].value == 1);
  if (per_channel) {
    char label[300], base[512];
    if (x->kind == DML_IR_VALUE_RESULT || x->type.rank < 0)
      return dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                             "%s: a per-channel slope needs the rank of X at import "
                             "(a graph input or initializer)",
                             onnx_node_label(np, label, sizeof(label)));
    int64_t n_add = x->type.rank - 2, axes[DML_MAX_RANK];
    if (n_add > 0) {
      for (int64_t i = 0; i < n_add; i++) axes[i] = 1 + i;
      dml_ir_value_t *uin[2] = {in[1], NULL};
      DML_RETURN_IF_ERROR(
          onnx_const_i64(ctx, join(base, sizeof(base), first_output(np), "/slope_axes"),
                         axes, (size_t)n_add, &uin[1]));
      dml_ir_node_t *un = NULL;
      const char *nn = is_empty(np->name) ? first_output(np) : np->name;
      DML_RETURN_IF_ERROR(onnx_emit(ctx, DML_OP_UNSQUEEZE,
                                    join(base, sizeof(base), nn, "/align_slope"), 2, uin,
                                    1, &un));
      un->outputs[0]->name = onnx_unique_name(
          ctx, join(base, sizeof(base), first_output(np), "/slope_per_channel"));
      if (!un->outputs[0]->name) return oom();
      ops[1] = un->outputs[0];
    }
  }
  return emit_node(ctx, np, e->op, ops, 2, skip, NULL);
}

/* Concat-1: `axis` is optional, default 1 (required since opset 4). */
static dml_status_t onnx_imp_concat_v1(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                       const onnx_op_entry_t *e, dml_ir_value_t **in,
                                       uint32_t n_in) {
  dml_ir_node_t *node = NULL;
  DML_RETURN_IF_ERROR(emit_node(ctx, np, e->op, in, n_in, NULL, &node));
  if (!attr_of(np, "axis", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT))
    DML_RETURN_IF_ERROR(dml_ir_node_set_attr_int(node, "axis", 1));
  return DML_OK;
}

/* Reshape-1: the target shape is the `shape` attribute -> i64 input 1. */
static dml_status_t onnx_imp_reshape_v1(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                        const onnx_op_entry_t *e, dml_ir_value_t **in,
                                        uint32_t n_in) {
  DML_RETURN_IF_ERROR(expect_inputs(np, e, n_in, 1, 1, ctx->opset));
  const Onnx__AttributeProto *a =
      attr_of(np, "shape", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  if (!a) {
    char label[300];
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: Reshape-1 needs the 'shape' attribute",
                           onnx_node_label(np, label, sizeof(label)));
  }
  dml_ir_value_t *ops[2] = {in[0], NULL};
  char base[512];
  DML_RETURN_IF_ERROR(onnx_const_i64(ctx,
                                     join(base, sizeof(base), first_output(np), "/shape"),
                                     a->ints, a->n_ints, &ops[1]));
  static const char *const skip[] = {"shape", "consumed_inputs", NULL};
  return emit_node(ctx, np, e->op, ops, 2, skip, NULL);
}

/* The TensorProto.DataType code ONNX names `name` ("FLOAT"), or 0. */
static int32_t dtype_code_of_name(const char *name) {
  for (int32_t code = 1; code <= 16; code++)
    if (strcmp(onnx_dtype_name(code), name) == 0) return code;
  return 0;
}

/* Cast-1: `to` is the type's name (a STRING) -> its code. */
static dml_status_t onnx_imp_cast_v1(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                     const onnx_op_entry_t *e, dml_ir_value_t **in,
                                     uint32_t n_in) {
  DML_RETURN_IF_ERROR(expect_inputs(np, e, n_in, 1, 1, ctx->opset));
  char buf[64];
  const char *to = attr_str(np, "to", "", buf, sizeof(buf));
  static const char *const skip[] = {"to", NULL};
  dml_ir_node_t *node = NULL;
  DML_RETURN_IF_ERROR(emit_node(ctx, np, e->op, in, 1, skip, &node));
  return dml_ir_node_set_attr_int(node, "to", dtype_code_of_name(to));
}

/* ai.onnx.preview.training Gradient, version 1: attributes xs (names of
 * the differentiated tensors), y (the differentiated tensor's name), zs
 * (optional: names of the other independent tensors); the node's inputs
 * are the values of xs then zs, output i the gradient of y with respect to
 * xs[i]. Becomes IR Gradient(y, x_1..x_k) for the k leading outputs (all
 * optional), lowered by the expand-gradient pass. The spec lets the inputs
 * differ from the named tensors (the gradient at another point); only the
 * named tensors themselves are supported. y must be computed before the
 * node (its producer precedes it in the graph). */
static dml_status_t gradient_name(const Onnx__NodeProto *np, const ProtobufCBinaryData *b,
                                  char **out) {
  char label[300];
  if (b->len == 0 || memchr(b->data, 0, b->len))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: a tensor name in xs, zs or y is empty or holds a NUL",
                           onnx_node_label(np, label, sizeof(label)));
  char *s = (char *)malloc(b->len + 1);
  if (!s) return oom();
  memcpy(s, b->data, b->len);
  s[b->len] = '\0';
  *out = s;
  return DML_OK;
}

/* The value ONNX tensor `name` (of attribute `what`) has at this node. */
static dml_status_t gradient_lookup(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                    const char *what, const char *name,
                                    dml_ir_value_t **out) {
  char label[300];
  onnx_node_label(np, label, sizeof(label));
  const char *r = onnx_resolve(ctx, name);
  onnx_map_entry_t *me = onnx_map_find(&ctx->names, r);
  if (!me)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: %s names unknown tensor '%s'", label, what, name);
  if (onnx_seq_find(ctx, r) || onnx_opt_is_none(ctx, r))
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                           "%s: %s names '%s', a sequence or optional, not a tensor",
                           label, what, name);
  if (!me->val)
    return dml_status_detail(
        dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                        "%s: %s names tensor '%s', which is not computed before the node",
                        label, what, name),
        "the Gradient node must come after the nodes computing its xs, zs and y");
  *out = (dml_ir_value_t *)me->val;
  return DML_OK;
}

static dml_status_t onnx_imp_gradient(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                      const onnx_op_entry_t *e, dml_ir_value_t **in,
                                      uint32_t n_in) {
  char label[300];
  onnx_node_label(np, label, sizeof(label));
  const Onnx__AttributeProto *xs =
      attr_of(np, "xs", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);
  const Onnx__AttributeProto *zs =
      attr_of(np, "zs", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);
  const Onnx__AttributeProto *ya =
      attr_of(np, "y", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
  if (!xs || xs->n_strings == 0 || !ya)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: attributes xs (a non-empty list of tensor names) and y "
                           "(a tensor name) are required",
                           label);
  size_t nx = xs->n_strings, nz = zs ? zs->n_strings : 0;
  if (np->n_input != nx + nz)
    return dml_status_make(
        DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
        "%s: %zu inputs, but xs and zs name %zu tensors (the inputs are "
        "their values, xs then zs)",
        label, np->n_input, nx + nz);
  if (np->n_output > nx)
    return dml_status_make(
        DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
        "%s: %zu outputs, but xs names %zu tensors (one gradient each)", label,
        np->n_output, nx);
  dml_status_t st = DML_OK;
  for (size_t i = 0; i < nx + nz && !st; i++) {
    int is_x = i < nx;
    size_t k = is_x ? i : i - nx;
    char *name = NULL, what[48];
    snprintf(what, sizeof what, "%s[%zu]", is_x ? "xs" : "zs", k);
    st = gradient_name(np, is_x ? &xs->strings[k] : &zs->strings[k], &name);
    dml_ir_value_t *v = NULL;
    if (!st) st = gradient_lookup(ctx, np, what, name, &v);
    if (!st && (i >= n_in || in[i] != v))
      st = dml_status_detail(
          dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                          "%s: input %zu ('%s') is not the tensor %s names ('%s')", label,
                          i, i < np->n_input ? np->input[i] : "", what, name),
          "only the gradient at the graph's own values is supported (the inputs of "
          "Gradient must be the tensors named in xs, then zs)");
    free(name);
  }
  char *yname = NULL;
  dml_ir_value_t *y = NULL;
  if (!st) st = gradient_name(np, &ya->s, &yname);
  if (!st) st = gradient_lookup(ctx, np, "y", yname, &y);
  free(yname);
  uint32_t n_out = n_named_outputs(np);
  if (st || n_out == 0) return st; /* no gradient asked for */
  dml_ir_value_t **ops = (dml_ir_value_t **)calloc(n_out + 1, sizeof(*ops));
  if (!ops) return oom();
  ops[0] = y;
  for (uint32_t i = 0; i < n_out; i++) ops[1 + i] = in[i];
  static const char *const skip[] = {"xs", "y", "zs", NULL};
  st = emit_node(ctx, np, e->op, ops, n_out + 1, skip, NULL);
  free(ops);
  return st;
}

/* ---- the table ---- */

static const onnx_op_entry_t kOps[] = {
#define ONNX_OP(name, since, until, importer, ir_op, attrs) \
  {name, since, until, onnx_imp_##importer, DML_OP_##ir_op, attrs, NULL},
#define ONNX_DOMAIN_OP(domain, name, since, until, importer, ir_op, attrs) \
  {name, since, until, onnx_imp_##importer, DML_OP_##ir_op, attrs, domain},
#include "onnx_ops.def"
#undef ONNX_DOMAIN_OP
#undef ONNX_OP
};

const onnx_op_entry_t *onnx_op_lookup(const char *op_type, int64_t opset) {
  if (!op_type) return NULL;
  for (size_t i = 0; i < sizeof(kOps) / sizeof(kOps[0]); i++)
    if (!kOps[i].domain && opset >= kOps[i].since && opset <= kOps[i].until &&
        strcmp(kOps[i].name, op_type) == 0)
      return &kOps[i];
  return NULL;
}

const onnx_op_entry_t *onnx_op_lookup_domain(const char *domain, const char *op_type,
                                             int64_t version) {
  if (!domain || !*domain || strcmp(domain, "ai.onnx") == 0)
    return onnx_op_lookup(op_type, version);
  if (!op_type) return NULL;
  for (size_t i = 0; i < sizeof(kOps) / sizeof(kOps[0]); i++)
    if (kOps[i].domain && strcmp(kOps[i].domain, domain) == 0 &&
        version >= kOps[i].since && version <= kOps[i].until &&
        strcmp(kOps[i].name, op_type) == 0)
      return &kOps[i];
  return NULL;
}

const onnx_op_entry_t *onnx_op_export_entry(dml_op_t op, int64_t opset) {
  /* pad18 maps Pad-18+ without its input 3 (axes) `direct` to the IR's PAD,
   * whose inputs are data, pads and the constant value: that is a Pad-18
   * node as it is */
  for (size_t i = 0; i < sizeof(kOps) / sizeof(kOps[0]); i++)
    if (!kOps[i].domain && kOps[i].op == op &&
        (kOps[i].importer == onnx_imp_direct || kOps[i].importer == onnx_imp_pad18) &&
        opset >= kOps[i].since && opset <= kOps[i].until)
      return &kOps[i];
  return NULL;
}

int onnx_domain_known(const char *domain) {
  for (size_t i = 0; domain && i < sizeof(kOps) / sizeof(kOps[0]); i++)
    if (kOps[i].domain && strcmp(kOps[i].domain, domain) == 0) return 1;
  return 0;
}

int dml_onnx_domain_op_is_supported(const char *domain, const char *op_type,
                                    int64_t version) {
  return onnx_op_lookup_domain(domain, op_type, version) != NULL;
}

int onnx_op_has_attr(const onnx_op_entry_t *e, const char *attr) {
  size_t len = strlen(attr);
  if (!len) return 0;
  for (const char *p = e->attrs; *p;) {
    size_t n = strcspn(p, " ");
    if (n == len && strncmp(p, attr, len) == 0) return 1;
    p += n;
    while (*p == ' ') p++;
  }
  return 0;
}

int onnx_op_check(const onnx_op_entry_t *e, const Onnx__NodeProto *np, char *why,
                  size_t cap) {
  char buf[64];
  if (e->op == DML_OP_RESIZE) {
    const char *mode = attr_str(np, "mode", "nearest", buf, sizeof(buf));
    if (strcmp(mode, "nearest") != 0 && strcmp(mode, "linear") != 0 &&
        strcmp(mode, "cubic") != 0) {
      snprintf(why, cap, "mode='%s'", mode);
      return 1;
    }
  }
  if (e->op == DML_OP_BATCH_NORMALIZATION) {
    int64_t spatial = attr_int(np, "spatial", 1);
    if (spatial != 1) {
      snprintf(why, cap, "spatial=%lld", (long long)spatial);
      return 1;
    }
    if (e->since < 7 && attr_int(np, "is_test", 0) == 0) {
      snprintf(why, cap, "is_test=0 (training mode)");
      return 1;
    }
    /* Opset 14+: training_mode=1 gives Y, running_mean, running_var. The
     * older training forms (outputs beyond Y, saved_mean/saved_var before
     * opset 14) stay refused. */
    int64_t training = attr_int(np, "training_mode", 0);
    if (training != 0 && training != 1) {
      snprintf(why, cap, "training_mode=%lld", (long long)training);
      return 1;
    }
    if (n_named_outputs(np) > 1 && !training) {
      snprintf(why, cap, "outputs beyond Y (training mode)");
      return 1;
    }
  }
  if (e->op == DML_OP_DROPOUT && e->since < 7 && attr_int(np, "is_test", 0) == 0) {
    snprintf(why, cap, "is_test=0 (training mode)");
    return 1;
  }
  if (e->op == DML_OP_CAST && e->importer == onnx_imp_cast_v1) {
    const char *to = attr_str(np, "to", "", buf, sizeof(buf));
    if (onnx_dtype(dtype_code_of_name(to)) == DML_DTYPE_INVALID) {
      snprintf(why, cap, "to='%s'", to);
      return 1;
    }
  } else if (e->op == DML_OP_CAST || e->op == DML_OP_BIT_CAST) {
    int64_t to = attr_int(np, "to", 0);
    if (to < INT32_MIN || to > INT32_MAX ||
        onnx_dtype((int32_t)to) == DML_DTYPE_INVALID) {
      snprintf(why, cap, "to=%s",
               to >= INT32_MIN && to <= INT32_MAX ? onnx_dtype_name((int32_t)to) : "?");
      return 1;
    }
  }
  if (e->op == DML_OP_QUANTIZE_LINEAR || e->op == DML_OP_DEQUANTIZE_LINEAR) {
    int64_t bs = attr_int(np, "block_size", 0), pr = attr_int(np, "precision", 0);
    /* DequantizeLinear's blocked form runs (cpu_quant.c); QuantizeLinear's
     * does not */
    if (bs != 0 && e->op == DML_OP_QUANTIZE_LINEAR) {
      snprintf(why, cap, "block_size=%lld (blocked quantization)", (long long)bs);
      return 1;
    }
    if (pr != 0) {
      snprintf(why, cap, "precision=%s",
               pr >= INT32_MIN && pr <= INT32_MAX ? onnx_dtype_name((int32_t)pr) : "?");
      return 1;
    }
  }
  if (e->op == DML_OP_TF_IDF_VECTORIZER && onnx_attr(np, "pool_strings")) {
    snprintf(why, cap,
             "pool_strings (string n-grams: the TfIdfVectorizer kernel takes integer "
             "tokens only; map the tokens to integer ids, e.g. with LabelEncoder, and "
             "use pool_int64s)");
    return 1;
  }
  if (e->op == DML_OP_CONSTANT_OF_SHAPE || e->importer == onnx_imp_constant) {
    for (size_t i = 0; i < np->n_attribute; i++) {
      const Onnx__AttributeProto *a = np->attribute[i];
      if (is_empty(a->name)) continue;
      if (strcmp(a->name, "sparse_value") == 0) {
        snprintf(why, cap, "sparse_value (sparse constants)");
        return 1;
      }
      if (e->op == DML_OP_CONSTANT_OF_SHAPE && strcmp(a->name, "value") == 0 && a->t &&
          a->t->has_data_type && onnx_dtype(a->t->data_type) == DML_DTYPE_STRING) {
        snprintf(why, cap, "value of type STRING (ConstantOfShape fills numbers only)");
        return 1;
      }
      if (strcmp(a->name, "value") == 0 && a->t && a->t->has_data_type &&
          onnx_dtype(a->t->data_type) == DML_DTYPE_INVALID) {
        snprintf(why, cap, "value of type %s", onnx_dtype_name(a->t->data_type));
        return 1;
      }
    }
  }
  return 0;
}
