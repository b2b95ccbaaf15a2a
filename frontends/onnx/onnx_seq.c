/*
 * onnx_seq.c — ONNX sequence ops, lowered at import time: sequences whose
 * structure is static as lists of tensors, sequences of run-time length
 * whose elements share one shape as one stacked tensor.
 *
 * The IR has tensors only. A sequence-typed ONNX value becomes, in the
 * importer, a compile-time list of IR tensor values (onnx_seq_t, kept in
 * ctx->seqs under the value's name): each element is its own IR value, and
 * elements may differ in shape. No IR node stands for a sequence; the ops
 * that make, edit and read sequences rearrange these lists:
 *   - SequenceConstruct: the list of its inputs; SequenceEmpty: an empty
 *     list of the `dtype` attribute (FLOAT by default);
 *   - SequenceLength: a constant i64 scalar global;
 *   - SequenceAt: Identity of the element at the position, which must be a
 *     constant (initializer, Constant, bound input); negative positions count
 *     from the end;
 *   - SequenceInsert / SequenceErase: a new list, at a constant position or
 *     by default at the end;
 *   - ConcatFromSequence: Concat of the elements, or with new_axis=1
 *     Unsqueeze of each at `axis` and Concat;
 *   - SplitToSequence: Split with static sizes (the `split` input a constant,
 *     or absent: chunks of 1, the input's dim at `axis` known at compile time
 *     from shape inference), then Squeeze of each chunk when split is absent
 *     and keepdims=0;
 *   - SequenceMap: the body subgraph imported inline once per element (as
 *     onnx_if.c imports branches), its inputs bound to element i of the
 *     sequence inputs and to the tensor inputs; body output k, run i,
 *     becomes element i of output sequence k;
 *   - Identity of a sequence: the same list.
 * Graph inputs and outputs of sequence type: a sequence input becomes N tensor
 * arguments "<name>.0", "<name>.1", ... when the import option
 * sequence_inputs gives its element count and shapes; a sequence output N
 * results "<name>.0", ... (Identity nodes).
 *
 * Sequences of run-time length (stacked). When the number of elements is
 * only known at run time but every element has one shape, the sequence is
 * one tensor [n, element dims] (onnx_seq_t::stacked), n a run-time dim:
 *   - made by a Loop run at run time that appends to a carried sequence
 *     starting empty (onnx_loop.c runtime_loop_seqs: the appended element
 *     becomes a scan output of the Loop), or by SplitToSequence along a dim
 *     not known at compile time into pieces of length 1 (split absent or a
 *     constant scalar 1; split_stacked: a Transpose moving the axis first,
 *     then Unsqueeze at axis+1 unless keepdims=0 without split);
 *   - read by SequenceAt (Gather along axis 0; the position may be any i64
 *     scalar, negative from the end), SequenceLength (Gather(Shape, 0)),
 *     ConcatFromSequence (new_axis=1: Transpose moving axis 0 to `axis`;
 *     new_axis=0: Transpose to just before `axis`, then Reshape merging the
 *     two dims, the element dims after `axis` static) and Identity
 *     (stacked_read); If branches, optionals and unrolled loops pass them
 *     on as they are;
 *   - mapped by SequenceMap whose sequence inputs are all stacked: a Loop
 *     run at run time over their elements (onnx_loop.c
 *     onnx_seq_map_runtime, as a run-time Scan along axis 0), the tensor
 *     inputs captured, each output a stacked sequence (the body's results
 *     must keep one shape); the count is input 0's length, and the executor
 *     refuses inputs of other lengths (mark_scan_lengths in onnx_loop.c).
 * The rule: a list when the length is static, stacked when it is not and
 * the elements share one shape; everything else is refused.
 *
 * Limits (UNIMPLEMENTED naming the node): a position not known at compile
 * time in a list ("depends on run-time data"), a sequence of run-time
 * length in any other form (a split input not known at compile time, a
 * scalar split other than 1 along a run-time dim: the last piece may be
 * shorter; elements of differing shapes), a stacked sequence given to
 * SequenceInsert/Erase or a graph output (onnx_seq_need_list), a
 * SequenceMap mixing lists and stacked sequences,
 * a sequence consumed by any other op, sequences of sequences, and
 * maps. An optional of a sequence is the sequence's list when present
 * (onnx_optional.c). An unrolled Loop (onnx_loop.c) may carry sequences from
 * one copy of its body to the next.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_ir_infer.h"
#include "onnx_internal.h"

/* Elements of one sequence made by SplitToSequence (each is an IR value). */
#define ONNX_SEQ_MAX_ELEMS 65536

static dml_status_t oom(void) {
  return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, ONNX_ERR_OP, "out of memory");
}

static int is_empty(const char *s) {
  return !s || !*s;
}

/* ---- the lists ---- */

onnx_seq_t *onnx_seq_find(const onnx_ctx_t *ctx, const char *name) {
  if (is_empty(name)) return NULL;
  onnx_map_entry_t *e = onnx_map_find(&ctx->seqs, name);
  return e ? (onnx_seq_t *)e->val : NULL;
}

static onnx_seq_t *seq_new(size_t cap) {
  onnx_seq_t *s = (onnx_seq_t *)calloc(1, sizeof(*s));
  if (!s) return NULL;
  s->v = (dml_ir_value_t **)calloc(cap + 1, sizeof(*s->v));
  if (!s->v) {
    free(s);
    return NULL;
  }
  return s;
}

static void seq_free(onnx_seq_t *s) {
  if (!s) return;
  free(s->v);
  free(s);
}

void onnx_seqs_free(onnx_ctx_t *ctx) {
  for (size_t i = 0; i < ctx->seqs.cap; i++)
    if (ctx->seqs.slots[i].key) seq_free((onnx_seq_t *)ctx->seqs.slots[i].val);
  onnx_map_free(&ctx->seqs);
}

/* Records `s` (taken) as sequence `name`. */
static dml_status_t seq_define(onnx_ctx_t *ctx, const char *name, onnx_seq_t *s) {
  if (is_empty(name)) {
    seq_free(s);
    return DML_OK;
  }
  onnx_map_entry_t *e = onnx_map_insert(&ctx->seqs, name, NULL);
  if (!e) {
    seq_free(s);
    return oom();
  }
  seq_free((onnx_seq_t *)e->val);
  e->key = name; /* np's strings outlive the import */
  e->val = s;
  return DML_OK;
}

dml_status_t onnx_seq_define(onnx_ctx_t *ctx, const char *name, dml_dtype_t dtype,
                             size_t n, dml_ir_value_t *const *v) {
  onnx_seq_t *s = seq_new(n);
  if (!s) return oom();
  s->dtype = dtype;
  s->n = n;
  for (size_t i = 0; i < n; i++) s->v[i] = v[i];
  return seq_define(ctx, name, s);
}

dml_status_t onnx_seq_define_as(onnx_ctx_t *ctx, const char *name, const onnx_seq_t *s) {
  if (!s->stacked) return onnx_seq_define(ctx, name, s->dtype, s->n, s->v);
  return onnx_seq_define_stacked(ctx, name, s->dtype, s->stacked);
}

dml_status_t onnx_seq_define_stacked(onnx_ctx_t *ctx, const char *name, dml_dtype_t dtype,
                                     dml_ir_value_t *stacked) {
  onnx_seq_t *s = seq_new(0);
  if (!s) return oom();
  s->dtype = dtype;
  s->stacked = stacked;
  return seq_define(ctx, name, s);
}

dml_status_t onnx_seq_need_list(const onnx_seq_t *s, const char *label,
                                const char *what) {
  if (!s || !s->stacked) return DML_OK;
  return dml_status_detail(
      dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                      "%s: the sequence has a run-time length, which %s does not take",
                      label, what),
      "a sequence of run-time length (appended in a loop run at run time, or "
      "SplitToSequence along a dim not known at compile time) is one tensor of its "
      "stacked elements; it can be read by SequenceAt, SequenceLength, "
      "ConcatFromSequence, SequenceMap and Identity");
}

static onnx_seq_t *seq_copy(const onnx_seq_t *a, size_t extra) {
  onnx_seq_t *s = seq_new(a->n + extra);
  if (!s) return NULL;
  s->dtype = a->dtype;
  s->n = a->n;
  for (size_t i = 0; i < a->n; i++) s->v[i] = a->v[i];
  return s;
}

/* Names value v after `name` and records it. */
static dml_status_t bind_value(onnx_ctx_t *ctx, const char *name, dml_ir_value_t *v) {
  v->name = dml_ir_strdup(ctx->m, name);
  if (!v->name) return oom();
  return onnx_define(ctx, name, v);
}

/* ---- helpers ---- */

static dml_status_t need_seq(onnx_ctx_t *ctx, const Onnx__NodeProto *np, uint32_t k,
                             onnx_seq_t **out) {
  char label[300];
  onnx_seq_t *s = k < np->n_input ? onnx_seq_find(ctx, np->input[k]) : NULL;
  if (!s)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: input %u ('%s') is not a sequence",
                           onnx_node_label(np, label, sizeof(label)), k,
                           k < np->n_input ? np->input[k] : "");
  *out = s;
  return DML_OK;
}

static dml_status_t need_tensor(const Onnx__NodeProto *np, dml_ir_value_t **in,
                                uint32_t n_in, uint32_t k) {
  if (k < n_in && in[k]) return DML_OK;
  char label[300];
  return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                         "%s: input %u is missing or not a tensor",
                         onnx_node_label(np, label, sizeof(label)), k);
}

/* The constant integer scalar (or one-element tensor) `v`, for input `what`
 * of np. UNIMPLEMENTED when v is not a constant. */
static dml_status_t const_int(const Onnx__NodeProto *np, const dml_ir_value_t *v,
                              const char *what, int64_t *out) {
  char label[300];
  onnx_node_label(np, label, sizeof(label));
  if (v->kind != DML_IR_VALUE_GLOBAL || !v->data)
    return dml_status_detail(
        dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                        "%s: the %s ('%s') is not known at compile time: it depends on "
                        "run-time data",
                        label, what, v->name ? v->name : ""),
        "sequences are lowered at import time: the %s must be a constant (an "
        "initializer, a Constant, or an input bound with dmlc compile --bind)",
        what);
  if (!dml_dtype_is_int(v->type.dtype) || v->type.rank > 1 ||
      (v->type.rank == 1 && v->type.dims[0].value != 1))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: the %s must be an integer scalar", label, what);
  *out = dml_load_i64(v->type.dtype, v->data, 0);
  return DML_OK;
}

static dml_status_t bad_position(const Onnx__NodeProto *np, int64_t pos, size_t n,
                                 int64_t lo, int64_t hi) {
  char label[300];
  return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                         "%s: position %lld is out of range [%lld, %lld] for a "
                         "sequence of %zu elements",
                         onnx_node_label(np, label, sizeof(label)), (long long)pos,
                         (long long)lo, (long long)hi, n);
}

static int64_t attr_int(const Onnx__NodeProto *np, const char *name, int64_t dflt) {
  const Onnx__AttributeProto *a = onnx_attr(np, name);
  return a ? a->i : dflt;
}

/* A scalar i64 constant global named `name` (unique). */
static dml_status_t const_scalar_i64(onnx_ctx_t *ctx, const char *base, int64_t v,
                                     dml_ir_value_t **out) {
  const char *name = onnx_unique_name(ctx, base);
  if (!name) return oom();
  dml_type_t t = dml_type_static(DML_DTYPE_I64, 0, NULL);
  return dml_ir_module_add_global(ctx->m, name, &t, &v, sizeof(v), 0, out);
}

/* Emits Identity(v) named after np and binds it to `oname`. */
static dml_status_t emit_identity(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                  dml_ir_value_t *v, const char *oname) {
  dml_ir_node_t *node = NULL;
  DML_RETURN_IF_ERROR(onnx_emit(ctx, DML_OP_IDENTITY, np->name, 1, &v, 1, &node));
  return bind_value(ctx, oname, node->outputs[0]);
}

static const dml_type_t *static_type_of(onnx_ctx_t *ctx, dml_ir_value_t *v);

/* Emits op(ops[0..n)) named after np (attribute `attr` = a when attr is
 * set); *out its result. */
static dml_status_t emit1(onnx_ctx_t *ctx, const Onnx__NodeProto *np, dml_op_t op,
                          uint32_t n, dml_ir_value_t *const *ops, const char *attr,
                          int64_t a, dml_ir_value_t **out) {
  dml_ir_node_t *node = NULL;
  DML_RETURN_IF_ERROR(onnx_emit(ctx, op, np->name, n, ops, 1, &node));
  if (attr) DML_RETURN_IF_ERROR(dml_ir_node_set_attr_int(node, attr, a));
  *out = node->outputs[0];
  return DML_OK;
}

/* Transpose of x (rank r) moving axis `from` to position `to`. */
static dml_status_t move_axis(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                              dml_ir_value_t *x, int32_t r, int32_t from, int32_t to,
                              dml_ir_value_t **out) {
  if (from == to) {
    *out = x;
    return DML_OK;
  }
  int64_t perm[DML_MAX_RANK];
  for (int32_t d = 0, k = 0; d < r; d++) {
    if (d == to) {
      perm[d] = from;
      continue;
    }
    if (k == from) k++;
    perm[d] = k++;
  }
  dml_ir_node_t *node = NULL;
  DML_RETURN_IF_ERROR(onnx_emit(ctx, DML_OP_TRANSPOSE, np->name, 1, &x, 1, &node));
  DML_RETURN_IF_ERROR(dml_ir_node_set_attr_ints(node, "perm", perm, (size_t)r));
  *out = node->outputs[0];
  return DML_OK;
}

/* The ops that read a stacked sequence s (run-time length, [n, element
 * dims]): SequenceLength = Gather(Shape(s), 0); SequenceAt(i) = Gather(s,
 * i) along axis 0 (i any i64 scalar, negative from the end); Concat-
 * FromSequence with new_axis=1 = s with axis 0 moved to `axis` (Transpose),
 * with new_axis=0 = that Transpose to just before `axis` and a Reshape
 * merging the two dims (the element dims after `axis` must be static).
 * Every other op is refused (onnx_seq_need_list). */
static dml_status_t stacked_read(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                 const char *label, const onnx_seq_t *s,
                                 dml_ir_value_t **in, uint32_t n_in) {
  const char *op = np->op_type, *out0 = np->output[0];
  dml_ir_value_t *x = s->stacked, *r = NULL;
  const dml_type_t *t = static_type_of(ctx, x);
  if (!strcmp(op, "SequenceLength")) {
    dml_ir_value_t *ops[2] = {NULL, NULL};
    DML_RETURN_IF_ERROR(emit1(ctx, np, DML_OP_SHAPE, 1, &x, NULL, 0, &ops[0]));
    DML_RETURN_IF_ERROR(const_scalar_i64(ctx, "sequence_length_axis", 0, &ops[1]));
    DML_RETURN_IF_ERROR(emit1(ctx, np, DML_OP_GATHER, 2, ops, "axis", 0, &r));
    return bind_value(ctx, out0, r);
  }
  if (!strcmp(op, "SequenceAt")) {
    DML_RETURN_IF_ERROR(need_tensor(np, in, n_in, 1));
    const dml_type_t *pt = static_type_of(ctx, in[1]);
    if (!dml_dtype_is_int(pt->dtype) || pt->rank != 0)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                             "%s: the position must be an integer scalar", label);
    dml_ir_value_t *ops[2] = {x, in[1]};
    DML_RETURN_IF_ERROR(emit1(ctx, np, DML_OP_GATHER, 2, ops, "axis", 0, &r));
    return bind_value(ctx, out0, r);
  }
  if (!strcmp(op, "ConcatFromSequence")) {
    if (t->rank == DML_RANK_UNKNOWN)
      return dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                             "%s: the elements' shape is not known at compile time",
                             label);
    int32_t er = t->rank - 1; /* element rank */
    int64_t axis = attr_int(np, "axis", 0), new_axis = attr_int(np, "new_axis", 0);
    int64_t lim = new_axis ? er + 1 : er;
    if (axis < -lim || axis >= lim || (!new_axis && er == 0))
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                             "%s: axis %lld is out of range for elements of rank %d",
                             label, (long long)axis, (int)er);
    if (axis < 0) axis += lim;
    DML_RETURN_IF_ERROR(move_axis(ctx, np, x, t->rank, 0, (int32_t)axis, &r));
    if (!new_axis) {
      /* [e0..e(a-1), n, e(a), ...] -> [e0..e(a-1), n*e(a), ...]: 0 keeps a
       * leading dim, -1 the merged one, the later dims must be static. */
      int64_t shape[DML_MAX_RANK];
      for (int32_t d = 0; d < er; d++) {
        if (d < axis) {
          shape[d] = 0;
        } else if (d == axis) {
          shape[d] = -1;
        } else {
          if (t->dims[d + 1].sym >= 0)
            return dml_status_make(
                DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                "%s: concatenating a sequence of run-time length along axis %lld of "
                "elements whose dim %d is not static is not supported",
                label, (long long)axis, (int)d);
          shape[d] = t->dims[d + 1].value;
        }
      }
      dml_ir_value_t *ops[2] = {r, NULL};
      DML_RETURN_IF_ERROR(
          onnx_const_i64(ctx, "concat_from_sequence_shape", shape, (size_t)er, &ops[1]));
      DML_RETURN_IF_ERROR(emit1(ctx, np, DML_OP_RESHAPE, 2, ops, NULL, 0, &r));
    } else if (r == x) {
      DML_RETURN_IF_ERROR(emit1(ctx, np, DML_OP_IDENTITY, 1, &x, NULL, 0, &r));
    }
    return bind_value(ctx, out0, r);
  }
  return onnx_seq_need_list(s, label, op);
}

/* ---- importers ---- */

dml_status_t onnx_imp_seq(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                          const onnx_op_entry_t *e, dml_ir_value_t **in, uint32_t n_in) {
  (void)e;
  char label[300];
  onnx_node_label(np, label, sizeof(label));
  const char *op = np->op_type;
  const char *out0 = np->n_output ? np->output[0] : NULL;
  /* An unused result: nothing to import (SequenceMap may have several). */
  if (is_empty(out0) && strcmp(op, "SequenceMap") != 0) return DML_OK;
  if (!strcmp(op, "SequenceConstruct")) {
    if (!n_in)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                             "%s takes at least one input", label);
    for (uint32_t k = 0; k < n_in; k++) DML_RETURN_IF_ERROR(need_tensor(np, in, n_in, k));
    return onnx_seq_define(ctx, out0, in[0]->type.dtype, n_in, in);
  }
  if (!strcmp(op, "SequenceEmpty")) {
    dml_dtype_t dt = onnx_dtype((int32_t)attr_int(np, "dtype", 1));
    if (dt == DML_DTYPE_INVALID)
      return dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                             "%s: dtype %lld is not supported", label,
                             (long long)attr_int(np, "dtype", 1));
    return onnx_seq_define(ctx, out0, dt, 0, NULL);
  }
  if (!strcmp(op, "Identity")) {
    onnx_seq_t *s = NULL;
    DML_RETURN_IF_ERROR(need_seq(ctx, np, 0, &s));
    return onnx_seq_define_as(ctx, out0, s);
  }
  onnx_seq_t *s = NULL;
  if (strcmp(op, "SplitToSequence") != 0 && strcmp(op, "SequenceMap") != 0)
    DML_RETURN_IF_ERROR(need_seq(ctx, np, 0, &s));
  if (s && s->stacked) return stacked_read(ctx, np, label, s, in, n_in);
  if (!strcmp(op, "SequenceLength")) {
    dml_ir_value_t *g = NULL;
    DML_RETURN_IF_ERROR(const_scalar_i64(ctx, out0, (int64_t)s->n, &g));
    return onnx_define(ctx, out0, g);
  }
  if (!strcmp(op, "SequenceAt")) {
    DML_RETURN_IF_ERROR(need_tensor(np, in, n_in, 1));
    int64_t pos = 0;
    DML_RETURN_IF_ERROR(const_int(np, in[1], "position", &pos));
    int64_t n = (int64_t)s->n;
    if (pos < -n || pos >= n) return bad_position(np, pos, s->n, -n, n - 1);
    if (pos < 0) pos += n;
    return emit_identity(ctx, np, s->v[pos], out0);
  }
  if (!strcmp(op, "SequenceInsert")) {
    DML_RETURN_IF_ERROR(need_tensor(np, in, n_in, 1));
    int64_t n = (int64_t)s->n, pos = n;
    if (n_in > 2 && in[2]) {
      DML_RETURN_IF_ERROR(const_int(np, in[2], "position", &pos));
      if (pos < -n || pos > n) return bad_position(np, pos, s->n, -n, n);
      if (pos < 0) pos += n;
    }
    onnx_seq_t *r = seq_copy(s, 1);
    if (!r) return oom();
    memmove(r->v + pos + 1, r->v + pos, (size_t)(n - pos) * sizeof(*r->v));
    r->v[pos] = in[1];
    r->n++;
    return seq_define(ctx, out0, r);
  }
  if (!strcmp(op, "SequenceErase")) {
    int64_t n = (int64_t)s->n, pos = n - 1;
    if (n_in > 1 && in[1]) DML_RETURN_IF_ERROR(const_int(np, in[1], "position", &pos));
    if (pos < -n || pos >= n) return bad_position(np, pos, s->n, -n, n - 1);
    if (pos < 0) pos += n;
    onnx_seq_t *r = seq_copy(s, 0);
    if (!r) return oom();
    memmove(r->v + pos, r->v + pos + 1, (size_t)(n - pos - 1) * sizeof(*r->v));
    r->n--;
    return seq_define(ctx, out0, r);
  }
  if (!strcmp(op, "ConcatFromSequence")) {
    if (!s->n)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                             "%s: the sequence is empty", label);
    int64_t axis = attr_int(np, "axis", 0), new_axis = attr_int(np, "new_axis", 0);
    dml_ir_value_t **parts = (dml_ir_value_t **)calloc(s->n + 1, sizeof(*parts));
    if (!parts) return oom();
    dml_status_t st = DML_OK;
    dml_ir_value_t *axes = NULL;
    if (new_axis) st = onnx_const_i64(ctx, "concat_from_sequence_axes", &axis, 1, &axes);
    for (size_t i = 0; i < s->n && !st; i++) {
      parts[i] = s->v[i];
      if (!new_axis) continue;
      dml_ir_value_t *ops[2] = {s->v[i], axes};
      dml_ir_node_t *node = NULL;
      st = onnx_emit(ctx, DML_OP_UNSQUEEZE, np->name, 2, ops, 1, &node);
      parts[i] = st ? NULL : node->outputs[0];
    }
    dml_ir_node_t *node = NULL;
    if (!st)
      st = onnx_emit(ctx, DML_OP_CONCAT, np->name, (uint32_t)s->n, parts, 1, &node);
    if (!st) st = dml_ir_node_set_attr_int(node, "axis", axis);
    if (!st) st = bind_value(ctx, out0, node->outputs[0]);
    free(parts);
    return st;
  }
  if (!strcmp(op, "SplitToSequence")) return onnx_seq_split(ctx, np, in, n_in);
  if (!strcmp(op, "SequenceMap")) return onnx_seq_map(ctx, np, in, n_in);
  return dml_status_make(DML_STATUS_INTERNAL, ONNX_ERR_OP, "%s has no sequence importer",
                         label);
}

/* The static type of v, inferring the nodes of the function built so far
 * when v is a node result of unknown shape. */
static const dml_type_t *static_type_of(onnx_ctx_t *ctx, dml_ir_value_t *v) {
  if (v->kind == DML_IR_VALUE_RESULT && v->type.rank == DML_RANK_UNKNOWN)
    for (dml_ir_node_t *n = ctx->f->first; n; n = n->next) {
      int unknown = 0;
      for (uint32_t k = 0; k < n->n_outputs; k++)
        unknown |= n->outputs[k] && n->outputs[k]->type.rank == DML_RANK_UNKNOWN;
      if (!unknown) continue;
      dml_status_t st = dml_ir_infer_node(ctx->m, n);
      if (st) {
        dml_status_free(st);
        break;
      }
    }
  return &v->type;
}

/* SplitToSequence of x along `axis`, whose dim is not known at compile
 * time, into pieces of length 1 (split absent, or a constant scalar 1): a
 * sequence of run-time length, x with `axis` moved to 0 (Transpose), then
 * Unsqueeze at axis + 1 unless split is absent and keepdims=0. Another
 * scalar split is refused: the last piece could be shorter than the others,
 * and a sequence of run-time length holds elements of one shape. */
static dml_status_t split_stacked(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                  const char *label, dml_ir_value_t *x, int32_t axis,
                                  dml_ir_value_t *split, int64_t keepdims) {
  if (split) {
    int64_t chunk = 0;
    dml_status_t st = const_int(np, split, "split", &chunk);
    if (st)
      return dml_status_annotate(st,
                                 "the input's dim at axis %d is not known at compile "
                                 "time either",
                                 (int)axis);
    if (chunk != 1)
      return dml_status_detail(
          dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                          "%s: split %lld along axis %d, whose dim is not known at "
                          "compile time: the last piece may be shorter than the others",
                          label, (long long)chunk, (int)axis),
          "a sequence of run-time length holds elements of one shape (pieces of length "
          "1: no split input, or split 1)");
    keepdims = 1;
  }
  const dml_type_t *t = static_type_of(ctx, x);
  dml_ir_value_t *r = NULL;
  DML_RETURN_IF_ERROR(move_axis(ctx, np, x, t->rank, axis, 0, &r));
  if (keepdims) {
    if (t->rank + 1 > DML_MAX_RANK)
      return dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                             "%s: rank %d is too high to keep the split axis", label,
                             (int)t->rank);
    int64_t at = axis + 1;
    dml_ir_value_t *ops[2] = {r, NULL};
    DML_RETURN_IF_ERROR(onnx_const_i64(ctx, "split_to_sequence_axes", &at, 1, &ops[1]));
    DML_RETURN_IF_ERROR(emit1(ctx, np, DML_OP_UNSQUEEZE, 2, ops, NULL, 0, &r));
  } else if (r == x) {
    DML_RETURN_IF_ERROR(emit1(ctx, np, DML_OP_IDENTITY, 1, &x, NULL, 0, &r));
  }
  return onnx_seq_define_stacked(ctx, np->output[0], x->type.dtype, r);
}

dml_status_t onnx_seq_split(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                            dml_ir_value_t **in, uint32_t n_in) {
  char label[300];
  onnx_node_label(np, label, sizeof(label));
  DML_RETURN_IF_ERROR(need_tensor(np, in, n_in, 0));
  int64_t axis = attr_int(np, "axis", 0), keepdims = attr_int(np, "keepdims", 1);
  const dml_type_t *t = static_type_of(ctx, in[0]);
  int32_t rank = t->rank;
  int64_t dim = -1;
  if (rank != DML_RANK_UNKNOWN) {
    if (axis < -rank || axis >= rank)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                             "%s: axis %lld is out of range for rank %d", label,
                             (long long)axis, (int)rank);
    if (axis < 0) axis += rank;
    if (t->dims[axis].sym < 0) dim = t->dims[axis].value;
  }
  int64_t *sizes = NULL;
  size_t n = 0;
  int squeeze = 0;
  dml_ir_value_t *split = n_in > 1 ? in[1] : NULL;
  if (rank != DML_RANK_UNKNOWN && dim < 0 && (!split || split->type.rank == 0))
    return split_stacked(ctx, np, label, in[0], (int32_t)axis, split, keepdims);
  if (split && (split->kind != DML_IR_VALUE_GLOBAL || !split->data))
    return dml_status_detail(
        dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                        "%s: the split ('%s') is not known at compile time: the length "
                        "of the sequence depends on run-time data",
                        label, split->name ? split->name : ""),
        "sequences are lowered at import time: split must be a constant");
  if (split && split->type.rank == 1) {
    if (split->type.dims[0].value > ONNX_SEQ_MAX_ELEMS)
      return dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                             "%s: the sequence would have %lld elements; at most %d are "
                             "supported",
                             label, (long long)split->type.dims[0].value,
                             ONNX_SEQ_MAX_ELEMS);
    n = (size_t)split->type.dims[0].value;
    sizes = (int64_t *)calloc(n + 1, sizeof(int64_t));
    if (!sizes) return oom();
    for (size_t i = 0; i < n; i++)
      sizes[i] = dml_load_i64(split->type.dtype, split->data, i);
  } else {
    int64_t chunk = 1;
    if (split)
      DML_RETURN_IF_ERROR(const_int(np, split, "split", &chunk));
    else
      squeeze = !keepdims;
    if (dim < 0)
      return dml_status_detail(
          dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                          "%s: the input's dim at axis %lld is not known at compile "
                          "time: the length of the sequence depends on run-time data",
                          label, (long long)axis),
          "sequences are lowered at import time: give the input a static shape");
    if (chunk <= 0)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                             "%s: split %lld must be positive", label, (long long)chunk);
    if ((dim + chunk - 1) / chunk > ONNX_SEQ_MAX_ELEMS)
      return dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                             "%s: the sequence would have %lld elements; at most %d are "
                             "supported",
                             label, (long long)((dim + chunk - 1) / chunk),
                             ONNX_SEQ_MAX_ELEMS);
    n = (size_t)((dim + chunk - 1) / chunk);
    sizes = (int64_t *)calloc(n + 1, sizeof(int64_t));
    if (!sizes) return oom();
    for (size_t i = 0; i < n; i++)
      sizes[i] = (int64_t)i + 1 < (int64_t)n ? chunk : dim - chunk * (int64_t)i;
  }
  dml_status_t st = DML_OK;
  if (n > ONNX_SEQ_MAX_ELEMS) {
    free(sizes);
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                           "%s: the sequence would have %zu elements; at most %d are "
                           "supported",
                           label, n, ONNX_SEQ_MAX_ELEMS);
  }
  dml_ir_value_t **vals = (dml_ir_value_t **)calloc(n + 1, sizeof(*vals));
  dml_ir_value_t *ops[2] = {in[0], NULL}, *axes = NULL;
  dml_ir_node_t *node = NULL;
  if (!vals) st = oom();
  if (!st && n == 0)
    st = dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                         "%s: splitting into an empty sequence is not supported", label);
  if (!st) st = onnx_const_i64(ctx, "split_to_sequence_sizes", sizes, n, &ops[1]);
  if (!st) st = onnx_emit(ctx, DML_OP_SPLIT, np->name, 2, ops, (uint32_t)n, &node);
  if (!st) st = dml_ir_node_set_attr_int(node, "axis", axis);
  if (!st && squeeze) st = onnx_const_i64(ctx, "split_to_sequence_axes", &axis, 1, &axes);
  for (size_t i = 0; i < n && !st; i++) {
    vals[i] = node->outputs[i];
    if (!squeeze) continue;
    dml_ir_value_t *sq[2] = {node->outputs[i], axes};
    dml_ir_node_t *q = NULL;
    st = onnx_emit(ctx, DML_OP_SQUEEZE, np->name, 2, sq, 1, &q);
    if (!st) vals[i] = q->outputs[0];
  }
  if (!st) st = onnx_seq_define(ctx, np->output[0], in[0]->type.dtype, n, vals);
  free(vals);
  free(sizes);
  return st;
}

dml_status_t onnx_seq_map(onnx_ctx_t *ctx, const Onnx__NodeProto *np, dml_ir_value_t **in,
                          uint32_t n_in) {
  char label[300];
  onnx_node_label(np, label, sizeof(label));
  const Onnx__AttributeProto *a = onnx_attr(np, "body");
  const Onnx__GraphProto *body =
      a && onnx_attr_type(a) == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH ? a->g
                                                                             : NULL;
  if (!body)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s has no body graph attribute", label);
  if (body->n_input != n_in || body->n_output != np->n_output)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s has %u inputs and %zu outputs, but its body %zu and %zu",
                           label, n_in, np->n_output, body->n_input, body->n_output);
  onnx_seq_t *first = NULL;
  DML_RETURN_IF_ERROR(need_seq(ctx, np, 0, &first));
  if (first->stacked) return onnx_seq_map_runtime(ctx, np, label, body, in, n_in);
  size_t n = first->n;
  onnx_seq_t **seqs = (onnx_seq_t **)calloc(n_in + 1, sizeof(*seqs));
  dml_ir_value_t **ins = (dml_ir_value_t **)calloc(n_in + 1, sizeof(*ins));
  dml_ir_value_t **outs = (dml_ir_value_t **)calloc(np->n_output + 1, sizeof(*outs));
  onnx_seq_t **res = (onnx_seq_t **)calloc(np->n_output + 1, sizeof(*res));
  dml_status_t st = DML_OK;
  if (!seqs || !ins || !outs || !res) st = oom();
  for (uint32_t k = 0; k < n_in && !st; k++) {
    seqs[k] = onnx_seq_find(ctx, np->input[k]);
    if (!seqs[k])
      st = need_tensor(np, in, n_in, k);
    else if (seqs[k]->stacked)
      st =
          dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                          "%s: input %u is a sequence of run-time length and input 0 one "
                          "of static length",
                          label, k);
    else if (seqs[k]->n != n)
      st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: input %u has %zu elements, input 0 has %zu", label, k,
                           seqs[k]->n, n);
  }
  for (size_t o = 0; o < np->n_output && !st; o++) {
    const Onnx__TypeProto *tp = body->output[o]->type;
    dml_dtype_t dt = tp && tp->tensor_type && tp->tensor_type->has_elem_type
                         ? onnx_dtype(tp->tensor_type->elem_type)
                         : DML_DTYPE_INVALID;
    if (!(res[o] = seq_new(n)))
      st = oom();
    else
      res[o]->dtype = dt;
  }
  for (size_t i = 0; i < n && !st; i++) {
    for (uint32_t k = 0; k < n_in; k++) ins[k] = seqs[k] ? seqs[k]->v[i] : in[k];
    char which[64];
    snprintf(which, sizeof(which), "body (element %zu)", i);
    st = onnx_import_subgraph(ctx, label, which, body, n_in, ins, outs);
    for (size_t o = 0; o < np->n_output && !st; o++) {
      res[o]->v[res[o]->n++] = outs[o];
      if (res[o]->dtype == DML_DTYPE_INVALID) res[o]->dtype = outs[o]->type.dtype;
    }
  }
  for (size_t o = 0; o < np->n_output; o++) {
    if (!st)
      st = seq_define(ctx, np->output[o], res[o]);
    else
      seq_free(res[o]);
  }
  free(seqs);
  free(ins);
  free(outs);
  free(res);
  return st;
}
