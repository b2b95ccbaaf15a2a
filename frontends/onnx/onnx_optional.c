/*
 * onnx_optional.c — ONNX optional values (opsets 15..17), lowered at import
 * time.
 *
 * The IR has tensors only. Whether an optional-typed ONNX value holds a
 * value is decided at compile time: the importer knows each optional as
 * either
 *   - present: its element, a tensor (an IR value under the optional's name)
 *     or a sequence (a compile-time list, onnx_seq.c) — nothing marks it as
 *     optional, so every reader of a tensor or sequence reads it; or
 *   - none: an entry in ctx->nones with the element's kind (tensor or
 *     sequence) and no IR value at all.
 * The ops:
 *   - Optional(x): present, x itself (Identity of a tensor, the same list for
 *     a sequence); Optional() with the `type` attribute: none of that type;
 *   - OptionalHasElement: a constant bool scalar global (true for present,
 *     false for none);
 *   - OptionalGetElement: the element (Identity, or the same list);
 *     INVALID_ARGUMENT naming the node for a none;
 *   - Identity of a none: a none.
 * Graph inputs of optional type: the import option optional_inputs says
 * whether each is present (a tensor argument of its name, or with
 * sequence_inputs a sequence input "<name>.0", ...) or none (no argument).
 * A graph output that is none has no result; a present one is a tensor
 * result of its name or a sequence's results "<name>.0", ... (so a none
 * optional of a sequence and a present empty sequence look alike).
 *
 * If (onnx_if.c): a cond known at compile time (a constant, a bound input,
 * or an Identity / Not chain of one, as OptionalHasElement gives) imports
 * only the taken branch, whose outputs may be optionals (a none output is
 * reported by onnx_import_subgraph_seqs as onnx_opt_none_mark()).
 *
 * Limits: whether an optional holds a value never depends on run-time data.
 * A none read by any other op (a SequenceInsert, a Relu, ...) or carried by
 * a Loop is UNIMPLEMENTED naming the node, as are If branch outputs of
 * optional type under a cond not known at compile time (both branches are
 * evaluated and selected with Where, which needs tensors on both sides), an
 * optional graph input missing from optional_inputs, and optionals of maps,
 * sparse tensors or optionals.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

static dml_status_t oom(void) {
  return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, ONNX_ERR_OP, "out of memory");
}

static int is_empty(const char *s) {
  return !s || !*s;
}

int onnx_opt_is_none(const onnx_ctx_t *ctx, const char *name) {
  return !is_empty(name) && onnx_map_find(&ctx->nones, name) != NULL;
}

dml_status_t onnx_opt_define_none(onnx_ctx_t *ctx, const char *name, int kind) {
  if (is_empty(name)) return DML_OK;
  onnx_map_entry_t *e = onnx_map_insert(&ctx->nones, name, NULL);
  if (!e) return oom();
  e->key = name; /* the model's strings outlive the import */
  e->aux = kind;
  return DML_OK;
}

/* Stand-ins for a subgraph output that is none (onnx_import_subgraph_seqs's
 * out_seqs), one per element kind; never read as lists. */
static onnx_seq_t none_marks[3];

const onnx_seq_t *onnx_opt_none_mark(int kind) {
  return &none_marks[kind == ONNX_OPT_SEQUENCE ? ONNX_OPT_SEQUENCE : ONNX_OPT_TENSOR];
}

int onnx_opt_none_mark_kind(const onnx_seq_t *s) {
  if (s == &none_marks[ONNX_OPT_TENSOR]) return ONNX_OPT_TENSOR;
  if (s == &none_marks[ONNX_OPT_SEQUENCE]) return ONNX_OPT_SEQUENCE;
  return 0;
}

int onnx_opt_elem_kind(const Onnx__TypeProto *tp) {
  if (!tp) return 0;
  if (tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE)
    tp = tp->optional_type ? tp->optional_type->elem_type : NULL;
  if (!tp) return 0;
  if (tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) return ONNX_OPT_TENSOR;
  if (tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE) return ONNX_OPT_SEQUENCE;
  return 0;
}

/* Makes `out` (np's output) the present element: the tensor in[0] or the
 * sequence named np->input[0]. */
static dml_status_t define_element(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                   dml_ir_value_t **in, uint32_t n_in, const char *out) {
  const onnx_seq_t *s = onnx_seq_find(ctx, np->input[0]);
  if (s) return onnx_seq_define_as(ctx, out, s);
  if (!n_in || !in[0]) {
    char label[300];
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: input 0 is missing",
                           onnx_node_label(np, label, sizeof(label)));
  }
  dml_ir_node_t *node = NULL;
  DML_RETURN_IF_ERROR(onnx_emit(ctx, DML_OP_IDENTITY, np->name, 1, in, 1, &node));
  node->outputs[0]->name = dml_ir_strdup(ctx->m, out);
  if (!node->outputs[0]->name) return oom();
  return onnx_define(ctx, out, node->outputs[0]);
}

dml_status_t onnx_imp_optional(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                               const onnx_op_entry_t *e, dml_ir_value_t **in,
                               uint32_t n_in) {
  (void)e;
  char label[300];
  onnx_node_label(np, label, sizeof(label));
  const char *op = np->op_type;
  const char *out = np->n_output ? np->output[0] : NULL;
  if (is_empty(out)) return DML_OK;
  const char *arg = n_in ? np->input[0] : NULL;
  int none = onnx_opt_is_none(ctx, arg);
  if (!strcmp(op, "Optional")) {
    if (!is_empty(arg)) {
      if (none)
        return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                               "%s: input 0 ('%s') is an optional; Optional takes a "
                               "tensor or a sequence",
                               label, arg);
      return define_element(ctx, np, in, n_in, out);
    }
    const Onnx__AttributeProto *a = onnx_attr(np, "type");
    int kind = a && onnx_attr_type(a) == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO
                   ? onnx_opt_elem_kind(a->tp)
                   : -1;
    if (kind < 0)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                             "%s has no input and no type attribute", label);
    if (!kind)
      return dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                             "%s: optionals of maps, sparse tensors or optionals are "
                             "not supported",
                             label);
    return onnx_opt_define_none(ctx, out, kind);
  }
  if (!strcmp(op, "OptionalHasElement")) {
    /* Since opset 18 the input may be absent: false (no element). */
    const char *name = onnx_unique_name(ctx, out);
    if (!name) return oom();
    uint8_t v = none || is_empty(arg) ? 0 : 1;
    dml_type_t t = dml_type_static(DML_DTYPE_BOOL, 0, NULL);
    dml_ir_value_t *g = NULL;
    DML_RETURN_IF_ERROR(dml_ir_module_add_global(ctx->m, name, &t, &v, sizeof(v), 0, &g));
    return onnx_define(ctx, out, g);
  }
  if (is_empty(arg))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s takes 1 input, got none", label);
  if (!strcmp(op, "Identity")) {
    const onnx_map_entry_t *ne = onnx_map_find(&ctx->nones, arg);
    if (ne) return onnx_opt_define_none(ctx, out, (int)ne->aux);
    return define_element(ctx, np, in, n_in, out);
  }
  if (!strcmp(op, "OptionalGetElement")) {
    if (none)
      return dml_status_detail(
          dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                          "%s: input 0 ('%s') is an optional without a value", label,
                          arg),
          "optionals are lowered at import time: '%s' is none in this compilation", arg);
    return define_element(ctx, np, in, n_in, out);
  }
  return dml_status_make(DML_STATUS_INTERNAL, ONNX_ERR_OP, "%s has no optional importer",
                         label);
}
