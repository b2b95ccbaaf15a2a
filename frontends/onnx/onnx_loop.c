/*
 * onnx_loop.c — ONNX Loop (opsets 7..17) and Scan (opsets 8 and 9..17),
 * lowered at import time by full unrolling when the number of iterations
 * is known at compile time, else run as a loop at run time (the IR op
 * Loop).
 *
 * The IR has no control flow, so a loop whose number of iterations is known
 * at compile time becomes its body imported inline once per iteration (as
 * onnx_if.c imports branches and onnx_seq.c SequenceMap bodies, each copy in
 * its own scope with fresh names), the values it carries passed from one
 * copy to the next:
 *   - Loop(M, cond, v_initial...): the trip count M must be a compile-time
 *     constant (an initializer, a Constant, an input bound with dmlc compile
 *     --bind, or a value shape inference computes from those, as the
 *     expansion of Range does), the cond input absent or such a constant, and,
 *     when more than one iteration runs, the body's cond output must provably
 *     stay true: (an Identity chain of) the body's cond input, or a constant
 *     true. A constant false cond runs no iteration. Iteration i binds
 *     iter_num to a constant i64 scalar i, cond to a constant true and the
 *     carried values; the final carried values are Identity of the last
 *     iteration's, and each scan output (body outputs after the carried ones)
 *     is Unsqueeze of every iteration's value at axis 0 and a Concat. With no
 *     iteration, carried outputs are the initial values and a scan output is
 *     an empty constant of the shape the body declares for it (which must be
 *     static). Carried values may be sequences of static structure: the
 *     compile-time lists of onnx_seq.c, passed from copy to copy;
 *   - Scan-9..17(states..., scan inputs...): the number of iterations is the
 *     static length of the scan inputs along scan_input_axes (all must agree,
 *     at least 1); iteration t binds the states and, per scan input, Gather of
 *     position t (T-1-t when its scan_input_direction is 1) along its axis;
 *     scan outputs are Unsqueeze + Concat of the iterations' values along
 *     scan_output_axes, in reverse order for scan_output_directions 1;
 *   - Scan-8(sequence_lens, states..., scan inputs...): every input has a
 *     leading batch dim (static); each batch element is scanned as above
 *     (time along axis 1, `directions` for the scan inputs) and the results
 *     are stacked along axis 0. sequence_lens must be absent or a constant
 *     whose every element is the full length.
 *
 * Run-time Loop. A Loop whose number of iterations depends on run-time data
 * (a trip count or cond input not known at compile time, no trip count, or a
 * body cond that can turn false) is not unrolled: its body is imported once
 * as a function of the module ("<node>.body", onnx_import_function in
 * onnx_if.c) taking (iter, cond, carried..., captures...), and the IR op
 * Loop (ops.def) names it; the CPU executor runs it once per iteration
 * (runtime/rt_session.c, run_loop). Carried values must keep their shape
 * (UNIMPLEMENTED otherwise); scan outputs have the trip count's dim when
 * nothing can stop the loop early (M given, cond absent or constant true,
 * the body's cond output its cond input or constant true: ir/infer.c
 * loop_trip_dim), else a data-dependent length bounded by
 * --dynamic-dim-bound; on the GPU targets the host runs the
 * loop and the body's kernels run on the device. A carried sequence that
 * starts empty (SequenceEmpty) and that the body only appends to
 * (SequenceInsert at the end) becomes a scan output of the Loop, the
 * Loop's result a stacked sequence of run-time length (runtime_loop_seqs,
 * onnx_seq.c); any other carried sequence needs the unrolled form ("the
 * number of iterations depends on run-time data"). SequenceMap over such
 * sequences runs as a run-time Scan over axis 0 (onnx_seq_map_runtime).
 *
 * Run-time Scan. A Scan-9..17 whose scan length is not static (a symbolic
 * dim: an RNN over time steps T), or whose unrolling would pass the caps
 * below (more than ONNX_LOOP_MAX_ITERS steps, or the model's unrolled
 * nodes over ONNX_LOOP_MAX_NODES), becomes such a run-time Loop
 * (import_runtime_scan): trip count Gather(Shape(x0), axis0) computed in
 * the IR (x0 the first scan input; all must have that length at run time:
 * the Loop's scan_length_inputs / scan_length_axes attributes name them and
 * the executor refuses other lengths before the first iteration,
 * INVALID_ARGUMENT, mark_scan_lengths); no cond.
 * The body function is a Loop body made around the Scan body: it takes
 * (iter, cond, states...) and the whole scan inputs as captures, and per
 * scan input Gather(x_j, iter)
 * along its axis (a scalar index: the axis is dropped) gives the body's
 * scan input j; a scan input with scan_input_directions 1 is reversed along
 * its axis before the Loop (Slice with step -1), so that `iter` reads
 * position T-1-iter. The states are the Loop's carried values (their shape
 * must stay: UNIMPLEMENTED otherwise), the scan outputs the Loop's (stacked
 * along axis 0, their length T: the Loop has no cond, so ir/infer.c gives
 * them the trip count's dim), then reversed for
 * scan_output_directions 1 (Slice) and moved to scan_output_axes by a
 * Transpose. The rule: static scan lengths within the caps are unrolled,
 * which lets the compiler fuse across steps; everything else runs as a
 * loop. Scan-8 (batch axis, sequence_lens) is only unrolled.
 *
 * Limits (UNIMPLEMENTED naming the node): a carried sequence with a number
 * of iterations that depends on run-time data other than one appended to
 * from empty, a Scan-8 scan input whose
 * length is not static, a scan input of unknown rank, a Scan with a static
 * length of zero, a Loop body whose cond or scan outputs are sequences, and,
 * for the unrolled forms (Loop, Scan-8), more than ONNX_LOOP_MAX_ITERS
 * (65,536) iterations of one node or ONNX_LOOP_MAX_NODES (100,000) nodes
 * imported by unrolling in the whole model (each iteration counts its
 * body's nodes, nested bodies included, plus one; nested loops add up),
 * checked before a node's first iteration is imported, so that a hostile
 * model cannot make the compiler's work explode (Scan-9..17 past them runs
 * as a loop instead). The body's nodes run once per iteration in the
 * compiled program: the unrolled IR grows with the trip count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_ir_infer.h"
#include "onnx_internal.h"

static dml_status_t oom(void) {
  return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, ONNX_ERR_OP, "out of memory");
}

static int is_empty(const char *s) {
  return !s || !*s;
}

static const Onnx__GraphProto *body_of(const Onnx__NodeProto *np) {
  const Onnx__AttributeProto *a = onnx_attr(np, "body");
  if (!a || onnx_attr_type(a) != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH)
    return NULL;
  return a->g;
}

void onnx_infer_pending(onnx_ctx_t *ctx) {
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
}

/* Whether v holds one element known at compile time; *out its value. */
static int known_scalar(onnx_ctx_t *ctx, dml_ir_value_t *v, int64_t *out) {
  if (v->kind == DML_IR_VALUE_GLOBAL && v->data) {
    if (dml_ir_type_numel_bound(ctx->m, &v->type) != 1) return 0;
    *out = dml_load_i64(v->type.dtype, v->data, 0);
    return 1;
  }
  if (v->kind == DML_IR_VALUE_RESULT && v->type.rank == DML_RANK_UNKNOWN)
    onnx_infer_pending(ctx);
  if (!v->sym_data || v->sym_data->n != 1 || v->sym_data->elems[0].sym >= 0) return 0;
  *out = v->sym_data->elems[0].value;
  return 1;
}

/* The static type of v (inferring pending nodes when unknown). */
static const dml_type_t *type_of(onnx_ctx_t *ctx, dml_ir_value_t *v) {
  if (v->kind == DML_IR_VALUE_RESULT && v->type.rank == DML_RANK_UNKNOWN)
    onnx_infer_pending(ctx);
  return &v->type;
}

static dml_status_t data_dependent(const char *label, const char *why) {
  return dml_status_detail(
      dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                      "%s: the number of iterations depends on run-time data (%s)", label,
                      why),
      "loops are unrolled at import time: the trip count must be a constant (an "
      "initializer, a Constant, or an input bound with dmlc compile --bind) and the "
      "condition must stay true");
}

/* Whether tensor proto tp is one nonzero element. */
static int tensor_true(const Onnx__TensorProto *tp) {
  dml_tensor_t t;
  void *data = NULL;
  size_t bytes = 0;
  dml_status_t st = onnx_tensor_decode(tp, NULL, "loop condition", &t, &data, &bytes);
  if (st) {
    dml_status_free(st);
    return 0;
  }
  int64_t numel = 1;
  for (int32_t r = 0; r < t.rank; r++) numel *= t.dims[r];
  int yes = numel == 1 && t.data && dml_load_f64(t.dtype, t.data, 0) != 0;
  free(data);
  return yes;
}

/* Whether Loop body g's cond output is (an Identity chain of) its cond input
 * or a constant true. */
static int cond_stays_true(const Onnx__GraphProto *g) {
  if (g->n_output < 1 || g->n_input < 2 || is_empty(g->input[1]->name)) return 0;
  const char *name = g->output[0]->name;
  for (size_t hop = 0; hop <= g->n_node && !is_empty(name); hop++) {
    if (!strcmp(name, g->input[1]->name)) return 1;
    for (size_t i = 0; i < g->n_initializer; i++)
      if (g->initializer[i]->name && !strcmp(g->initializer[i]->name, name))
        return tensor_true(g->initializer[i]);
    const Onnx__NodeProto *def = NULL;
    for (size_t i = 0; i < g->n_node && !def; i++)
      for (size_t k = 0; k < g->node[i]->n_output; k++)
        if (g->node[i]->output[k] && !strcmp(g->node[i]->output[k], name))
          def = g->node[i];
    if (!def || !def->op_type) return 0;
    if (!strcmp(def->op_type, "Identity") && def->n_input == 1) {
      name = def->input[0];
      continue;
    }
    if (!strcmp(def->op_type, "Constant")) {
      const Onnx__AttributeProto *a = onnx_attr(def, "value");
      if (a && a->t) return tensor_true(a->t);
      a = onnx_attr(def, "value_int");
      return a && a->i != 0;
    }
    return 0;
  }
  return 0;
}

static dml_status_t scalar_global(onnx_ctx_t *ctx, const char *base, dml_dtype_t dt,
                                  int64_t v, dml_ir_value_t **out) {
  const char *name = onnx_unique_name(ctx, base);
  if (!name) return oom();
  dml_type_t t = dml_type_static(dt, 0, NULL);
  if (dt == DML_DTYPE_BOOL) {
    uint8_t b = v != 0;
    return dml_ir_module_add_global(ctx->m, name, &t, &b, 1, 0, out);
  }
  return dml_ir_module_add_global(ctx->m, name, &t, &v, sizeof(v), 0, out);
}

static dml_status_t bind_value(onnx_ctx_t *ctx, const char *name, dml_ir_value_t *v) {
  v->name = dml_ir_strdup(ctx->m, name);
  if (!v->name) return oom();
  return onnx_define(ctx, name, v);
}

/* Output `name` of np := Identity(v) (nothing for an empty name). */
static dml_status_t emit_output(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                const char *name, dml_ir_value_t *v) {
  if (is_empty(name)) return DML_OK;
  dml_ir_node_t *node = NULL;
  DML_RETURN_IF_ERROR(onnx_emit(ctx, DML_OP_IDENTITY, np->name, 1, &v, 1, &node));
  return bind_value(ctx, name, node->outputs[0]);
}

/* Unsqueeze of parts[0..n) at `axis` and Concat along it, in reverse order
 * when `reverse`; *out the result. */
static dml_status_t stack(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                          dml_ir_value_t *const *parts, size_t n, int reverse,
                          int64_t axis, dml_ir_value_t **out) {
  dml_ir_value_t **u = (dml_ir_value_t **)calloc(n + 1, sizeof(*u));
  if (!u) return oom();
  dml_ir_value_t *axes = NULL;
  dml_status_t st = onnx_const_i64(ctx, "loop_stack_axes", &axis, 1, &axes);
  for (size_t i = 0; i < n && !st; i++) {
    dml_ir_value_t *ops[2] = {parts[reverse ? n - 1 - i : i], axes};
    dml_ir_node_t *node = NULL;
    st = onnx_emit(ctx, DML_OP_UNSQUEEZE, np->name, 2, ops, 1, &node);
    if (!st) u[i] = node->outputs[0];
  }
  dml_ir_node_t *node = NULL;
  if (!st) st = onnx_emit(ctx, DML_OP_CONCAT, np->name, (uint32_t)n, u, 1, &node);
  if (!st) st = dml_ir_node_set_attr_int(node, "axis", axis);
  if (!st) *out = node->outputs[0];
  free(u);
  return st;
}

/* Counts `iters` imports of body g (its nested bodies' nodes included)
 * against the cap, before any is made. */
static dml_status_t count_unroll(onnx_ctx_t *ctx, const char *label,
                                 const Onnx__GraphProto *g, int64_t iters) {
  const Onnx__NodeProto **all = NULL;
  size_t n = 0;
  DML_RETURN_IF_ERROR(onnx_collect_nodes(g, &all, &n));
  free((void *)all);
  n++; /* the nodes an iteration adds around the body (Gather, Unsqueeze) */
  if (iters > 0 && (n > ONNX_LOOP_MAX_NODES || (size_t)iters > ONNX_LOOP_MAX_NODES ||
                    ctx->unrolled_nodes + n * (size_t)iters > ONNX_LOOP_MAX_NODES))
    ctx->unrolled_nodes = ONNX_LOOP_MAX_NODES + 1;
  else if (iters > 0)
    ctx->unrolled_nodes += n * (size_t)iters;
  if (ctx->unrolled_nodes > ONNX_LOOP_MAX_NODES)
    return dml_status_detail(
        dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                        "%s: unrolling would import more than %d body nodes", label,
                        ONNX_LOOP_MAX_NODES),
        "loops are unrolled at import time; the model's loops, nested ones "
        "multiplied, may import at most %d body nodes in all",
        ONNX_LOOP_MAX_NODES);
  return DML_OK;
}

static dml_status_t too_many(const char *label, int64_t iters) {
  return dml_status_detail(
      dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                      "%s: %lld iterations; at most %d are supported", label,
                      (long long)iters, ONNX_LOOP_MAX_ITERS),
      "loops are unrolled at import time");
}

/* ---- Loop ---- */

/* An empty constant standing for scan output `vi` of a loop that runs no
 * iteration: shape [0, declared dims...]. */
static dml_status_t empty_scan_output(onnx_ctx_t *ctx, const char *label,
                                      const Onnx__ValueInfoProto *vi,
                                      dml_ir_value_t **out) {
  const Onnx__TypeProto__Tensor *tt = vi->type ? vi->type->tensor_type : NULL;
  int64_t dims[DML_MAX_RANK];
  int ok = tt && tt->has_elem_type && onnx_dtype(tt->elem_type) != DML_DTYPE_INVALID &&
           tt->shape && tt->shape->n_dim + 1 <= DML_MAX_RANK;
  dims[0] = 0;
  for (size_t k = 0; ok && k < tt->shape->n_dim; k++) {
    const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[k];
    ok = d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
         d->dim_value >= 0;
    if (ok) dims[k + 1] = d->dim_value;
  }
  if (!ok)
    return dml_status_detail(
        dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                        "%s runs no iteration, and the shape of its scan output '%s' "
                        "is not declared statically in the body",
                        label, vi->name ? vi->name : ""),
        "a scan output of zero iterations needs the element's dtype and static shape");
  const char *name = onnx_unique_name(ctx, vi->name ? vi->name : "loop_empty");
  if (!name) return oom();
  dml_type_t t =
      dml_type_static(onnx_dtype(tt->elem_type), (int32_t)tt->shape->n_dim + 1, dims);
  static const uint8_t empty = 0;
  return dml_ir_module_add_global(ctx->m, name, &t, &empty, 0, 0, out);
}

/* The Loop as run-time control flow (ops.def Loop): its body becomes a
 * function of the module taking (iter, cond, carried..., captures...); the
 * CPU executor runs it once per iteration. Carried values must keep their
 * shape, scan outputs get a data-dependent length (ir/infer.c). */
static dml_status_t import_runtime_loop(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                        const char *label, const Onnx__GraphProto *body,
                                        dml_ir_value_t **in, size_t n_car) {
  const char **caps = NULL;
  dml_ir_value_t **cv = NULL;
  size_t n_caps = 0;
  onnx_infer_pending(ctx);
  for (size_t k = 0; k < n_car; k++)
    if (in[2 + k]->type.rank == DML_RANK_UNKNOWN)
      return dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                             "%s: carried value %zu has an unknown shape; a Loop run at "
                             "run time needs it",
                             label, k);
  DML_RETURN_IF_ERROR(onnx_captures(ctx, np, label, &caps, &cv, &n_caps));
  size_t n_ops = 2 + n_car + n_caps;
  dml_ir_value_t **ops = (dml_ir_value_t **)calloc(n_ops + 1, sizeof(*ops));
  dml_type_t *types = (dml_type_t *)calloc(2 + n_car + 1, sizeof(*types));
  dml_status_t st = !ops || !types ? oom() : DML_OK;
  const char *fname = NULL;
  if (!st) {
    ops[0] = np->n_input > 0 && !is_empty(np->input[0]) ? in[0] : NULL;
    ops[1] = np->n_input > 1 && !is_empty(np->input[1]) ? in[1] : NULL;
    types[0] = dml_type_static(DML_DTYPE_I64, 0, NULL);
    types[1] = dml_type_static(DML_DTYPE_BOOL, 0, NULL);
    for (size_t k = 0; k < n_car; k++) {
      ops[2 + k] = in[2 + k];
      types[2 + k] = in[2 + k]->type;
    }
    for (size_t j = 0; j < n_caps; j++) ops[2 + n_car + j] = cv[j];
    st = onnx_import_function(ctx, np, label, "body", "body", body, types, 2 + n_car,
                              caps, n_caps, &fname);
  }
  dml_ir_node_t *node = NULL;
  if (!st)
    st = onnx_emit(ctx, DML_OP_LOOP, np->name, (uint32_t)n_ops, ops,
                   (uint32_t)np->n_output, &node);
  if (!st) st = dml_ir_node_set_attr_string(node, "body_function", fname);
  if (!st) st = dml_ir_node_set_attr_int(node, "n_carried", (int64_t)n_car);
  for (size_t k = 0; k < np->n_output && !st; k++) {
    if (is_empty(np->output[k])) continue;
    node->outputs[k]->name = dml_ir_strdup(ctx->m, np->output[k]);
    st = node->outputs[k]->name ? onnx_define(ctx, np->output[k], node->outputs[k])
                                : oom();
  }
  if (!st) {
    st = dml_ir_infer_node(ctx->m, node);
    if (st) st = dml_status_annotate(st, "typing %s, run at run time", label);
  }
  free(caps);
  free(cv);
  free(ops);
  free(types);
  return st;
}

/* The index of the node of g defining `name`, or g->n_node. */
static size_t def_of(const Onnx__GraphProto *g, const char *name) {
  for (size_t i = 0; i < g->n_node; i++)
    for (size_t k = 0; k < g->node[i]->n_output; k++)
      if (g->node[i]->output[k] && !strcmp(g->node[i]->output[k], name)) return i;
  return g->n_node;
}

/* How many inputs of g's nodes name `name`. */
static size_t uses_of(const Onnx__GraphProto *g, const char *name) {
  size_t n = 0;
  for (size_t i = 0; i < g->n_node; i++)
    for (size_t k = 0; k < g->node[i]->n_input; k++)
      n += g->node[i]->input[k] && !strcmp(g->node[i]->input[k], name);
  return n;
}

/* A run-time Loop whose carried values include sequences of the form
 * exporters write for a list built in a loop: the initial sequence empty
 * (SequenceEmpty) and the body's carried sequence out SequenceInsert(its
 * carried sequence in, t) at the end (no position), the sequence read by
 * nothing else in the body. Each such sequence becomes a scan output t of
 * the Loop (the SequenceInsert dropped, the body and node rewritten without
 * the carried sequence), and the Loop's result a stacked sequence of
 * run-time length (onnx_seq.c: [count, t's dims]); every t must have one
 * shape (ir/infer.c and the executor refuse a shape that changes).
 * UNIMPLEMENTED naming the node for any other carried sequence. */
static dml_status_t runtime_loop_seqs(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                      const char *label, const Onnx__GraphProto *body,
                                      dml_ir_value_t **in, uint32_t n_in, size_t n_car) {
  size_t n_scan = body->n_output - 1 - n_car, n_seq = 0;
  size_t *at = (size_t *)calloc(n_car + 1, sizeof(*at));
  if (!at) return oom();
  dml_status_t st = DML_OK;
  for (size_t k = 0; k < n_car && !st; k++) {
    at[k] = body->n_node;
    if (2 + k < n_in && in[2 + k]) continue;
    const onnx_seq_t *s0 = onnx_seq_find(ctx, np->input[2 + k]);
    const char *sin = body->input[2 + k]->name, *sout = body->output[1 + k]->name;
    size_t i = is_empty(sout) ? body->n_node : def_of(body, sout);
    const Onnx__NodeProto *d = i < body->n_node ? body->node[i] : NULL;
    if (!s0 || s0->stacked || s0->n)
      st = dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                           "%s: carried sequence %zu ('%s') does not start empty; a loop "
                           "run at run time carries a sequence that starts as "
                           "SequenceEmpty and is appended to",
                           label, k, np->input[2 + k]);
    else if (!d || !d->op_type || strcmp(d->op_type, "SequenceInsert") != 0 ||
             d->n_input < 2 || (d->n_input > 2 && !is_empty(d->input[2])) ||
             is_empty(sin) || strcmp(d->input[0], sin) != 0 || is_empty(d->input[1]))
      st =
          dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                          "%s: the body's carried sequence %zu ('%s') is not "
                          "SequenceInsert(%s, element) at the end; a loop run at run "
                          "time only appends to a carried sequence",
                          label, k, is_empty(sout) ? "" : sout, is_empty(sin) ? "" : sin);
    else if (uses_of(body, sin) != 1 || uses_of(body, sout) != 0)
      st =
          dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                          "%s: the body reads its carried sequence %zu ('%s') other than "
                          "by appending to it; a loop run at run time only appends",
                          label, k, sin);
    else {
      at[k] = i;
      n_seq++;
    }
  }
  /* The body and the node without the carried sequences. */
  Onnx__GraphProto gb = *body;
  Onnx__NodeProto nb = *np;
  size_t n_car2 = n_car - n_seq;
  gb.input = (Onnx__ValueInfoProto **)calloc(2 + n_car2 + 1, sizeof(*gb.input));
  gb.node = (Onnx__NodeProto **)calloc(body->n_node + 1, sizeof(*gb.node));
  gb.output = (Onnx__ValueInfoProto **)calloc(body->n_output + 1, sizeof(*gb.output));
  Onnx__ValueInfoProto *vis = (Onnx__ValueInfoProto *)calloc(n_seq + 1, sizeof(*vis));
  nb.input = (char **)calloc(2 + n_car2 + 1, sizeof(*nb.input));
  nb.output = (char **)calloc(np->n_output + 1, sizeof(*nb.output));
  dml_ir_value_t **in2 = (dml_ir_value_t **)calloc(2 + n_car2 + 1, sizeof(*in2));
  const char **fresh = (const char **)calloc(n_car + 1, sizeof(*fresh));
  if (!st && (!gb.input || !gb.node || !gb.output || !vis || !nb.input || !nb.output ||
              !in2 || !fresh))
    st = oom();
  if (!st) {
    size_t ni = 0, nn = 0, no = 0, nv = 0, nbo = 0;
    gb.input[ni] = body->input[0];
    gb.input[ni + 1] = body->input[1];
    nb.input[ni] = np->n_input > 0 ? np->input[0] : (char *)"";
    nb.input[ni + 1] = np->n_input > 1 ? np->input[1] : (char *)"";
    in2[ni] = n_in > 0 ? in[0] : NULL;
    in2[ni + 1] = n_in > 1 ? in[1] : NULL;
    ni = 2;
    gb.output[no++] = body->output[0];
    for (size_t k = 0; k < n_car; k++) {
      if (at[k] < body->n_node) continue;
      gb.input[ni] = body->input[2 + k];
      nb.input[ni] = np->input[2 + k];
      in2[ni++] = in[2 + k];
      gb.output[no++] = body->output[1 + k];
      nb.output[nbo++] = np->output[k];
    }
    for (size_t j = 0; j < n_scan; j++) {
      gb.output[no++] = body->output[1 + n_car + j];
      nb.output[nbo++] = np->output[n_car + j];
    }
    for (size_t i = 0; i < body->n_node; i++) {
      int drop = 0;
      for (size_t k = 0; k < n_car; k++) drop |= at[k] == i;
      if (!drop) gb.node[nn++] = body->node[i];
    }
    for (size_t k = 0; k < n_car && !st; k++) {
      if (at[k] >= body->n_node) continue;
      onnx__value_info_proto__init(&vis[nv]);
      vis[nv].name = body->node[at[k]]->input[1];
      gb.output[no++] = &vis[nv++];
      char base[300];
      snprintf(base, sizeof base, "%s.stacked",
               is_empty(np->output[k]) ? "seq" : np->output[k]);
      fresh[k] = onnx_unique_name(ctx, base);
      if (!fresh[k]) st = oom();
      nb.output[nbo++] = (char *)fresh[k];
    }
    gb.n_input = ni;
    gb.n_node = nn;
    gb.n_output = no;
    nb.n_input = ni;
    nb.n_output = nbo;
  }
  if (!st) st = import_runtime_loop(ctx, &nb, label, &gb, in2, n_car2);
  for (size_t k = 0; k < n_car && !st; k++) {
    if (at[k] >= body->n_node || is_empty(np->output[k])) continue;
    onnx_map_entry_t *e = onnx_map_find(&ctx->names, fresh[k]);
    dml_ir_value_t *v = e ? (dml_ir_value_t *)e->val : NULL;
    const onnx_seq_t *s0 = onnx_seq_find(ctx, np->input[2 + k]);
    if (!v) {
      st = dml_status_make(DML_STATUS_INTERNAL, ONNX_ERR_OP,
                           "%s: the Loop's stacked sequence %zu is missing", label, k);
      break;
    }
    st = onnx_seq_define_stacked(
        ctx, np->output[k], s0->dtype != DML_DTYPE_INVALID ? s0->dtype : v->type.dtype,
        v);
  }
  free(at);
  free(gb.input);
  free(gb.node);
  free(gb.output);
  free(vis);
  free(nb.input);
  free(nb.output);
  free(in2);
  free(fresh);
  return st;
}

dml_status_t onnx_imp_loop(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                           const onnx_op_entry_t *e, dml_ir_value_t **in, uint32_t n_in) {
  (void)e;
  char label[300];
  onnx_node_label(np, label, sizeof(label));
  const Onnx__GraphProto *body = body_of(np);
  if (!body)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s has no body graph attribute", label);
  size_t n_car = np->n_input > 2 ? np->n_input - 2 : 0;
  if (body->n_input != n_car + 2 || body->n_output < n_car + 1 ||
      np->n_output != body->n_output - 1)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s has %zu inputs and %zu outputs, but its body %zu and %zu "
                           "(a Loop of N carried values has N+2 inputs; its body N+2 "
                           "inputs and 1+N+K outputs, the Loop N+K)",
                           label, np->n_input, np->n_output, body->n_input,
                           body->n_output);
  size_t n_scan = body->n_output - 1 - n_car;
  for (size_t k = 0; k < n_car; k++)
    if (!(2 + k < n_in && in[2 + k]) && !onnx_seq_find(ctx, np->input[2 + k]))
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                             "%s: carried value %zu is missing", label, k);
  dml_ir_value_t *mv = n_in > 0 ? in[0] : NULL, *cv = n_in > 1 ? in[1] : NULL;
  int64_t trips = 0, c = 1;
  const char *why = NULL;
  if (cv && !known_scalar(ctx, cv, &c))
    why = "the cond input is not known at compile time";
  if (!why && c) {
    if (!mv)
      why = "no trip count: the loop runs until its condition turns false";
    else if (!known_scalar(ctx, mv, &trips))
      why = "the trip count M is not known at compile time";
    else if (trips > 1 && !cond_stays_true(body))
      why = "the body's condition output can turn false";
  }
  if (why) {
    /* Carried values that are sequences: appended to (runtime_loop_seqs). */
    int any_seq = 0;
    for (size_t k = 0; k < n_car; k++) any_seq |= !(2 + k < n_in && in[2 + k]);
    dml_ir_node_t *mark = ctx->f->last;
    uint32_t n_fn = ctx->m->n_functions;
    dml_status_t rst = any_seq ? runtime_loop_seqs(ctx, np, label, body, in, n_in, n_car)
                               : import_runtime_loop(ctx, np, label, body, in, n_car);
    if (dml_status_code(rst) != DML_STATUS_UNIMPLEMENTED) return rst;
    /* Not expressible as a run-time loop either (a carried value that
     * changes shape): the unrolled form's error, which says what to bind,
     * with the reason. */
    while (ctx->f->last && ctx->f->last != mark) dml_ir_node_erase(ctx->f->last);
    ctx->m->n_functions = n_fn;
    dml_status_t dst =
        dml_status_detail(data_dependent(label, why), "as a loop run at run time: %s",
                          dml_status_reason(rst));
    dml_status_free(rst);
    return dst;
  }
  if (trips < 0) trips = 0;
  if (trips > ONNX_LOOP_MAX_ITERS) return too_many(label, trips);

  size_t n_body_in = n_car + 2;
  dml_ir_value_t **vals = (dml_ir_value_t **)calloc(n_body_in + 1, sizeof(*vals));
  dml_ir_value_t **outs = (dml_ir_value_t **)calloc(body->n_output + 1, sizeof(*outs));
  dml_ir_value_t **parts =
      (dml_ir_value_t **)calloc(n_scan * (size_t)trips + 1, sizeof(*parts));
  /* Sequence-typed carried values: compile-time lists (onnx_seq.c). */
  onnx_seq_t **seqs = (onnx_seq_t **)calloc(n_body_in + 1, sizeof(*seqs));
  onnx_seq_t **oseqs = (onnx_seq_t **)calloc(body->n_output + 1, sizeof(*oseqs));
  dml_status_t st = DML_OK;
  if (!vals || !outs || !parts || !seqs || !oseqs) st = oom();
  if (!st) st = scalar_global(ctx, "loop_cond_true", DML_DTYPE_BOOL, 1, &vals[1]);
  for (size_t k = 0; k < n_car && !st; k++) {
    vals[2 + k] = 2 + k < n_in ? in[2 + k] : NULL;
    if (!vals[2 + k]) seqs[2 + k] = onnx_seq_find(ctx, np->input[2 + k]);
  }
  if (!st) st = count_unroll(ctx, label, body, trips);
  for (int64_t i = 0; i < trips && !st; i++) {
    st = scalar_global(ctx, "loop_iter", DML_DTYPE_I64, i, &vals[0]);
    char which[64];
    snprintf(which, sizeof(which), "body (iteration %lld)", (long long)i);
    if (!st)
      st = onnx_import_subgraph_seqs(ctx, label, which, body, n_body_in, vals, seqs, outs,
                                     oseqs);
    for (size_t k = 0; k < body->n_output && !st; k++)
      if (onnx_opt_none_mark_kind(oseqs[k]))
        st = dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                             "%s: the body's output %zu ('%s') is an optional without a "
                             "value, which the unrolled loop cannot carry",
                             label, k, body->output[k]->name);
    for (size_t k = 0; k < n_car && !st; k++) {
      vals[2 + k] = oseqs[1 + k] ? NULL : outs[1 + k];
      seqs[2 + k] = oseqs[1 + k];
    }
    for (size_t k = 0; k < n_scan && !st; k++) {
      parts[k * (size_t)trips + (size_t)i] = outs[1 + n_car + k];
      if (oseqs[0] || oseqs[1 + n_car + k])
        st = dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                             "%s: the body's %s output is a sequence; only carried "
                             "values may be sequences",
                             label, oseqs[0] ? "cond" : "scan");
    }
  }
  for (size_t k = 0; k < n_car && !st; k++) {
    if (seqs[2 + k])
      st = is_empty(np->output[k]) ? DML_OK
                                   : onnx_seq_define_as(ctx, np->output[k], seqs[2 + k]);
    else
      st = emit_output(ctx, np, np->output[k], vals[2 + k]);
  }
  for (size_t k = 0; k < n_scan && !st; k++) {
    const char *oname = np->output[n_car + k];
    if (is_empty(oname)) continue;
    dml_ir_value_t *v = NULL;
    if (trips == 0)
      st = empty_scan_output(ctx, label, body->output[1 + n_car + k], &v);
    else
      st = stack(ctx, np, parts + k * (size_t)trips, (size_t)trips, 0, 0, &v);
    if (!st) st = emit_output(ctx, np, oname, v);
  }
  free(vals);
  free(outs);
  free(parts);
  free(seqs);
  free(oseqs);
  return st;
}

/* ---- Scan ---- */

/* The Scan of body over T iterations: states[0..n_state) in, final states
 * out; xs[j] scanned along axes[j] (reversed where dirs[j]); parts[k*T + t]
 * the scan output k of iteration t. */
static dml_status_t scan_run(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                             const char *label, const Onnx__GraphProto *body,
                             size_t n_state, dml_ir_value_t **states, size_t n_x,
                             dml_ir_value_t *const *xs, const int64_t *axes,
                             const int64_t *dirs, int64_t T, size_t n_scan_out,
                             dml_ir_value_t **parts) {
  dml_ir_value_t **vals = (dml_ir_value_t **)calloc(n_state + n_x + 1, sizeof(*vals));
  dml_ir_value_t **outs = (dml_ir_value_t **)calloc(body->n_output + 1, sizeof(*outs));
  dml_status_t st = DML_OK;
  if (!vals || !outs) st = oom();
  for (int64_t t = 0; t < T && !st; t++) {
    for (size_t k = 0; k < n_state; k++) vals[k] = states[k];
    for (size_t j = 0; j < n_x && !st; j++) {
      dml_ir_value_t *ops[2] = {xs[j], NULL};
      dml_ir_node_t *node = NULL;
      st = scalar_global(ctx, "scan_index", DML_DTYPE_I64, dirs[j] ? T - 1 - t : t,
                         &ops[1]);
      if (!st) st = onnx_emit(ctx, DML_OP_GATHER, np->name, 2, ops, 1, &node);
      if (!st) st = dml_ir_node_set_attr_int(node, "axis", axes[j]);
      if (!st) vals[n_state + j] = node->outputs[0];
    }
    char which[64];
    snprintf(which, sizeof(which), "body (iteration %lld)", (long long)t);
    if (!st)
      st = onnx_import_subgraph(ctx, label, which, body, n_state + n_x, vals, outs);
    for (size_t k = 0; k < n_state && !st; k++) states[k] = outs[k];
    for (size_t k = 0; k < n_scan_out && !st; k++)
      parts[k * (size_t)T + (size_t)t] = outs[n_state + k];
  }
  free(vals);
  free(outs);
  return st;
}

/* ---- Scan run at run time ---- */

/* Output `name` of a node made here, as value v, under a fresh name
 * "<base>" (so that a synthetic subgraph can read it). */
static dml_status_t bind_fresh(onnx_ctx_t *ctx, const char *base, dml_ir_value_t *v,
                               const char **out_name) {
  const char *name = onnx_unique_name(ctx, base);
  if (!name) return oom();
  *out_name = name;
  return bind_value(ctx, name, v);
}

/* Appends IR node `op` of operands ops[0..n) with int attribute `attr`
 * (NULL: none) = a; *out its output. */
static dml_status_t emit1(onnx_ctx_t *ctx, const Onnx__NodeProto *np, dml_op_t op,
                          uint32_t n, dml_ir_value_t *const *ops, const char *attr,
                          int64_t a, dml_ir_value_t **out) {
  dml_ir_node_t *node = NULL;
  DML_RETURN_IF_ERROR(onnx_emit(ctx, op, np->name, n, ops, 1, &node));
  if (attr) DML_RETURN_IF_ERROR(dml_ir_node_set_attr_int(node, attr, a));
  *out = node->outputs[0];
  return DML_OK;
}

/* x reversed along `axis`: Slice(x, [-1], [INT64_MIN], [axis], [-1]). */
static dml_status_t reverse_axis(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                 dml_ir_value_t *x, int64_t axis, dml_ir_value_t **out) {
  static const int64_t vals[4] = {-1, INT64_MIN, 0, -1};
  dml_ir_value_t *ops[5] = {x, NULL, NULL, NULL, NULL};
  for (int i = 0; i < 4; i++)
    DML_RETURN_IF_ERROR(
        onnx_const_i64(ctx, "scan_reverse", i == 2 ? &axis : &vals[i], 1, &ops[1 + i]));
  DML_RETURN_IF_ERROR(emit1(ctx, np, DML_OP_SLICE, 5, ops, NULL, 0, out));
  return dml_ir_infer_node(ctx->m, ctx->f->last);
}

/* The length of x along `axis` as an i64 scalar computed in the IR:
 * Gather(Shape(x), axis). */
static dml_status_t length_of(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                              dml_ir_value_t *x, int64_t axis, dml_ir_value_t **out) {
  dml_ir_value_t *ops[2] = {NULL, NULL};
  DML_RETURN_IF_ERROR(emit1(ctx, np, DML_OP_SHAPE, 1, &x, NULL, 0, &ops[0]));
  dml_type_t t = dml_type_static(DML_DTYPE_I64, 0, NULL);
  const char *name = onnx_unique_name(ctx, "scan_axis");
  if (!name) return oom();
  DML_RETURN_IF_ERROR(
      dml_ir_module_add_global(ctx->m, name, &t, &axis, sizeof(axis), 0, &ops[1]));
  return emit1(ctx, np, DML_OP_GATHER, 2, ops, "axis", 0, out);
}

/* The Scan (opsets 9..17) as a run-time Loop (ops.def): states[0..n_state)
 * the carried values, xs[0..n_x) the scan inputs (axes normalized);
 * trip count = the length of xs[0] along its axis (Gather(Shape)). The body
 * function is a Loop body synthesized around the Scan body g: inputs (iter,
 * cond, g's state inputs), nodes Identity(cond) -> cond out, per scan input
 * Gather(x_j, iter) along its axis -> g's scan input j (x_j reversed along
 * its axis beforehand for scan_input_directions 1), then g's nodes; outputs
 * (cond, g's outputs). The Loop's scan outputs (stacked on axis 0) are then
 * reversed for scan_output_directions 1 and moved to scan_output_axes by a
 * Transpose. */
/* ONNX Scan needs every scan input of one length; the trip count is scan
 * input 0's. The Loop node just emitted (the last of ctx->f) records, per
 * scan input j, its operand (a capture) and axis in the int-list attributes
 * scan_length_inputs / scan_length_axes, which the executor checks against
 * the trip count before the first iteration (rt_session.c run_loop): a
 * longer input would be cut off and a shorter one read out of range. */
static dml_status_t mark_scan_lengths(onnx_ctx_t *ctx, const char *label, size_t n_x,
                                      const char *const *xn, const int64_t *in_axes) {
  dml_ir_node_t *loop = ctx->f->last;
  while (loop && loop->op != DML_OP_LOOP) loop = loop->prev;
  int64_t *ops = (int64_t *)calloc(2 * n_x + 1, sizeof(*ops));
  if (!loop || !ops) {
    free(ops);
    return loop ? oom()
                : dml_status_make(DML_STATUS_INTERNAL, ONNX_ERR_OP,
                                  "%s: the Loop node of the scan is missing", label);
  }
  dml_status_t st = DML_OK;
  for (size_t j = 0; j < n_x && !st; j++) {
    onnx_map_entry_t *e = onnx_map_find(&ctx->names, xn[j]);
    const dml_ir_value_t *v = e ? (const dml_ir_value_t *)e->val : NULL;
    ops[j] = -1;
    for (uint32_t k = 2; v && k < loop->n_inputs; k++)
      if (loop->inputs[k] == v) ops[j] = k;
    if (ops[j] < 0 && !(v && v->kind == DML_IR_VALUE_GLOBAL))
      st = dml_status_make(DML_STATUS_INTERNAL, ONNX_ERR_OP,
                           "%s: scan input %zu ('%s') is not an operand of its Loop",
                           label, j, xn[j]);
    ops[n_x + j] = in_axes[j];
  }
  if (!st) st = dml_ir_node_set_attr_ints(loop, "scan_length_inputs", ops, n_x);
  if (!st) st = dml_ir_node_set_attr_ints(loop, "scan_length_axes", ops + n_x, n_x);
  free(ops);
  return st;
}

static dml_status_t import_runtime_scan(
    onnx_ctx_t *ctx, const Onnx__NodeProto *np, const char *label,
    const Onnx__GraphProto *g, size_t first, size_t n_state, dml_ir_value_t **states,
    size_t n_x, dml_ir_value_t *const *xs, const int64_t *in_axes, const int64_t *in_dirs,
    size_t n_out, const int64_t *out_axes, const int64_t *out_dirs) {
  size_t n_gin = 2 + n_state, n_gnode = 1 + n_x + g->n_node, n_gout = 1 + g->n_output;
  Onnx__ValueInfoProto vis[3];
  Onnx__NodeProto *nodes = (Onnx__NodeProto *)calloc(1 + n_x, sizeof(*nodes));
  Onnx__AttributeProto *axattr = (Onnx__AttributeProto *)calloc(n_x + 1, sizeof(*axattr));
  Onnx__AttributeProto **axptr = (Onnx__AttributeProto **)calloc(n_x + 1, sizeof(*axptr));
  Onnx__NodeProto **gnodes = (Onnx__NodeProto **)calloc(n_gnode, sizeof(*gnodes));
  Onnx__ValueInfoProto **gin = (Onnx__ValueInfoProto **)calloc(n_gin, sizeof(*gin));
  Onnx__ValueInfoProto **gout = (Onnx__ValueInfoProto **)calloc(n_gout, sizeof(*gout));
  /* Node inputs: Identity (1), the Gathers (2 each); outputs 1 each. */
  char **names = (char **)calloc(1 + 2 * n_x + 1 + n_x + 1, sizeof(char *));
  /* The Loop node's inputs (M, cond, states) and outputs. */
  char **lin = (char **)calloc(2 + n_state, sizeof(char *));
  char **lout = (char **)calloc(np->n_output + 1, sizeof(char *));
  dml_ir_value_t **lv = (dml_ir_value_t **)calloc(2 + n_state, sizeof(*lv));
  /* The name each scan input has as the body's capture. */
  const char **xn = (const char **)calloc(n_x + 1, sizeof(*xn));
  dml_status_t st = !nodes || !axattr || !axptr || !gnodes || !gin || !gout || !names ||
                            !lin || !lout || !lv || !xn
                        ? oom()
                        : DML_OK;
  const char *iter = NULL, *cond = NULL, *cond_out = NULL, *trip = NULL;
  if (!st) {
    iter = onnx_unique_name(ctx, "scan_iter");
    cond = onnx_unique_name(ctx, "scan_cond");
    cond_out = onnx_unique_name(ctx, "scan_cond_out");
    trip = onnx_unique_name(ctx, "scan_trip_count");
    if (!iter || !cond || !cond_out || !trip) st = oom();
  }
  if (!st) st = length_of(ctx, np, xs[0], in_axes[0], &lv[0]);
  if (!st) st = bind_value(ctx, trip, lv[0]);
  /* The synthetic Loop body. */
  static const Onnx__ValueInfoProto vi_init = ONNX__VALUE_INFO_PROTO__INIT;
  static const Onnx__NodeProto np_init = ONNX__NODE_PROTO__INIT;
  static const Onnx__AttributeProto at_init = ONNX__ATTRIBUTE_PROTO__INIT;
  for (int i = 0; i < 3; i++) vis[i] = vi_init;
  if (!st) {
    vis[0].name = (char *)iter;
    vis[1].name = (char *)cond;
    vis[2].name = (char *)cond_out;
    gin[0] = &vis[0];
    gin[1] = &vis[1];
    for (size_t k = 0; k < n_state; k++) gin[2 + k] = g->input[k];
    gout[0] = &vis[2];
    for (size_t k = 0; k < g->n_output; k++) gout[1 + k] = g->output[k];
    size_t at = 0;
    nodes[0] = np_init;
    nodes[0].op_type = (char *)"Identity";
    nodes[0].n_input = 1;
    nodes[0].input = names + at;
    names[at++] = (char *)cond;
    nodes[0].n_output = 1;
    nodes[0].output = names + at;
    names[at++] = (char *)cond_out;
    gnodes[0] = &nodes[0];
    for (size_t j = 0; j < n_x && !st; j++) {
      const char *xname = np->input[first + n_state + j];
      if (in_dirs[j]) {
        dml_ir_value_t *r = NULL;
        st = reverse_axis(ctx, np, xs[j], in_axes[j], &r);
        if (!st) st = bind_fresh(ctx, "scan_reversed", r, &xname);
      }
      xn[j] = xname;
      Onnx__NodeProto *gn = &nodes[1 + j];
      *gn = np_init;
      gn->op_type = (char *)"Gather";
      gn->n_input = 2;
      gn->input = names + at;
      names[at++] = (char *)xname;
      names[at++] = (char *)iter;
      gn->n_output = 1;
      gn->output = names + at;
      names[at++] = g->input[n_state + j]->name;
      axattr[j] = at_init;
      axattr[j].name = (char *)"axis";
      axattr[j].has_type = 1;
      axattr[j].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
      axattr[j].has_i = 1;
      axattr[j].i = in_axes[j];
      axptr[j] = &axattr[j];
      gn->n_attribute = 1;
      gn->attribute = &axptr[j];
      gnodes[1 + j] = gn;
    }
    for (size_t i = 0; i < g->n_node; i++) gnodes[1 + n_x + i] = g->node[i];
  }
  Onnx__GraphProto lg = *g;
  lg.n_node = n_gnode;
  lg.node = gnodes;
  lg.n_input = n_gin;
  lg.input = gin;
  lg.n_output = n_gout;
  lg.output = gout;
  Onnx__AttributeProto body_attr = at_init;
  Onnx__AttributeProto *body_ptr = &body_attr;
  body_attr.name = (char *)"body";
  body_attr.has_type = 1;
  body_attr.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
  body_attr.g = &lg;
  /* The Loop node: outputs needing a Reverse or Transpose get fresh names. */
  Onnx__NodeProto ln = np_init;
  ln.name = np->name;
  ln.op_type = (char *)"Loop";
  ln.n_input = 2 + n_state;
  ln.input = lin;
  ln.n_output = np->n_output;
  ln.output = lout;
  ln.n_attribute = 1;
  ln.attribute = &body_ptr;
  if (!st) {
    lin[0] = (char *)trip;
    lin[1] = (char *)"";
    for (size_t k = 0; k < n_state; k++) {
      lin[2 + k] = np->input[first + k];
      lv[2 + k] = states[k];
    }
    for (size_t k = 0; k < np->n_output && !st; k++) {
      lout[k] = np->output[k];
      if (k < n_state || is_empty(np->output[k]) ||
          (!out_dirs[k - n_state] && !out_axes[k - n_state]))
        continue;
      const char *fresh = onnx_unique_name(ctx, "scan_stacked");
      if (!fresh) st = oom();
      lout[k] = (char *)fresh;
    }
  }
  if (!st) {
    st = import_runtime_loop(ctx, &ln, label, &lg, lv, n_state);
    if (st)
      st = dml_status_annotate(st,
                               "importing %s as a loop run at run time (its scan length "
                               "is not static, or too long to unroll)",
                               label);
  }
  if (!st && n_x > 1) st = mark_scan_lengths(ctx, label, n_x, xn, in_axes);
  /* Scan outputs: reversed, then moved to their axis. */
  for (size_t k = 0; k < n_out && !st; k++) {
    const char *oname = np->output[n_state + k];
    if (lout[n_state + k] == np->output[n_state + k]) continue;
    dml_ir_value_t *v =
        (dml_ir_value_t *)onnx_map_find(&ctx->names, lout[n_state + k])->val;
    int32_t r = v->type.rank;
    int64_t ax = out_axes[k] < 0 ? out_axes[k] + r : out_axes[k];
    if (ax < 0 || ax >= r) {
      st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: scan_output_axes[%zu] = %lld is out of range for "
                           "rank %d",
                           label, k, (long long)out_axes[k], (int)r);
      break;
    }
    if (out_dirs[k]) st = reverse_axis(ctx, np, v, 0, &v);
    if (!st && ax) {
      int64_t perm[DML_MAX_RANK];
      for (int32_t d = 0; d < r; d++) perm[d] = d < ax ? d + 1 : d == ax ? 0 : d;
      dml_ir_node_t *node = NULL;
      st = onnx_emit(ctx, DML_OP_TRANSPOSE, np->name, 1, &v, 1, &node);
      if (!st) st = dml_ir_node_set_attr_ints(node, "perm", perm, (size_t)r);
      if (!st) st = dml_ir_infer_node(ctx->m, node);
      if (!st) v = node->outputs[0];
    }
    if (!st) st = bind_value(ctx, oname, v);
  }
  free(nodes);
  free(axattr);
  free(axptr);
  free(gnodes);
  free(gin);
  free(gout);
  free(names);
  free(lin);
  free(lout);
  free(lv);
  free(xn);
  return st;
}

/* Integer list attribute `name` of np into out[0..n) (default dflt). */
static dml_status_t ints_attr(const Onnx__NodeProto *np, const char *label,
                              const char *name, size_t n, int64_t dflt, int64_t *out) {
  const Onnx__AttributeProto *a = onnx_attr(np, name);
  for (size_t i = 0; i < n; i++) out[i] = dflt;
  if (!a) return DML_OK;
  if (a->n_ints != n)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: %s has %zu values, want %zu", label, name, a->n_ints, n);
  for (size_t i = 0; i < n; i++) out[i] = a->ints[i];
  return DML_OK;
}

dml_status_t onnx_imp_scan(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                           const onnx_op_entry_t *e, dml_ir_value_t **in, uint32_t n_in) {
  char label[300];
  onnx_node_label(np, label, sizeof(label));
  const Onnx__GraphProto *body = body_of(np);
  const Onnx__AttributeProto *na = onnx_attr(np, "num_scan_inputs");
  if (!body || !na)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s needs a body and num_scan_inputs", label);
  int v8 = e->until == 8;
  size_t first = v8 ? 1 : 0; /* Scan-8: sequence_lens first */
  size_t n_total = np->n_input > first ? np->n_input - first : 0;
  int64_t m = na->i;
  if (m < 1 || (size_t)m > n_total)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: num_scan_inputs %lld is out of range for %zu inputs",
                           label, (long long)m, n_total);
  size_t n_x = (size_t)m, n_state = n_total - n_x;
  if (body->n_input != n_total || body->n_output < n_state ||
      np->n_output != body->n_output)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s has %zu inputs and %zu outputs, but its body %zu and %zu",
                           label, np->n_input, np->n_output, body->n_input,
                           body->n_output);
  size_t n_out = body->n_output - n_state;
  for (size_t k = 0; k < n_total; k++)
    if (first + k >= n_in || !in[first + k])
      return dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                             "%s: input %zu is missing or not a tensor", label,
                             first + k);
  dml_ir_value_t **states = in + first, **xs = in + first + n_state;
  size_t cap = n_x + n_out + 1;
  int64_t *in_axes = (int64_t *)calloc(cap, sizeof(int64_t));
  int64_t *in_dirs = (int64_t *)calloc(cap, sizeof(int64_t));
  int64_t *out_axes = (int64_t *)calloc(cap, sizeof(int64_t));
  int64_t *out_dirs = (int64_t *)calloc(cap, sizeof(int64_t));
  dml_ir_value_t **cur = (dml_ir_value_t **)calloc(n_state + n_x + 1, sizeof(*cur));
  dml_ir_value_t **parts = NULL, **fin = NULL, **outv = NULL;
  dml_status_t st = DML_OK;
  if (!in_axes || !in_dirs || !out_axes || !out_dirs || !cur) st = oom();
  if (!st && v8) {
    st = ints_attr(np, label, "directions", n_x, 0, in_dirs);
    for (size_t j = 0; j < n_x; j++) in_axes[j] = 1;
  } else if (!st) {
    st = ints_attr(np, label, "scan_input_axes", n_x, 0, in_axes);
    if (!st) st = ints_attr(np, label, "scan_input_directions", n_x, 0, in_dirs);
    if (!st) st = ints_attr(np, label, "scan_output_axes", n_out, 0, out_axes);
    if (!st) st = ints_attr(np, label, "scan_output_directions", n_out, 0, out_dirs);
  }
  /* The number of iterations (and Scan-8's batch); run_time when a scan
   * length is not static. */
  int64_t T = -1, B = 1;
  int run_time = 0;
  for (size_t j = 0; j < n_x && !st; j++) {
    const dml_type_t *t = type_of(ctx, xs[j]);
    int64_t ax = in_axes[j];
    if (t->rank != DML_RANK_UNKNOWN && ax < 0) ax += t->rank;
    if (t->rank == DML_RANK_UNKNOWN || ax < 0 || ax >= t->rank ||
        (t->dims[ax].sym >= 0 && v8)) {
      st = dml_status_detail(
          dml_status_make(
              DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
              "%s: the length of scan input %zu ('%s') along axis %lld is not "
              "known at compile time%s",
              label, j, np->input[first + n_state + j], (long long)in_axes[j],
              t->rank == DML_RANK_UNKNOWN ? " (its rank is unknown)"
              : v8 ? ": the number of iterations depends on run-time data"
                   : " (the axis is out of range)"),
          v8 ? "Scan-8 (with a batch axis and sequence_lens) is unrolled at import "
               "time: its scan inputs need static lengths; Scan-9 and later run "
               "such a scan as a loop at run time"
             : "a Scan run at run time needs the rank of its scan inputs");
      break;
    }
    in_axes[j] = ax;
    if (t->dims[ax].sym >= 0) {
      run_time = 1;
      continue;
    }
    if (T >= 0 && t->dims[ax].value != T)
      st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: scan input %zu has length %lld, scan input 0 %lld", label,
                           j, (long long)t->dims[ax].value, (long long)T);
    T = t->dims[ax].value;
    if (v8 && !st) {
      if (t->dims[0].sym >= 0)
        st = dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                             "%s: the batch dim of scan input %zu is not static", label,
                             j);
      else
        B = t->dims[0].value;
    }
  }
  if (!st && !v8 && !run_time) {
    /* Static lengths: unrolled, unless that would pass the caps. */
    size_t before = ctx->unrolled_nodes;
    if (T > ONNX_LOOP_MAX_ITERS) {
      run_time = 1;
    } else if (T > 0) {
      dml_status_t cst = count_unroll(ctx, label, body, T);
      if (cst) {
        dml_status_free(cst);
        ctx->unrolled_nodes = before;
        run_time = 1;
      }
    }
  }
  if (!st && run_time) {
    st = import_runtime_scan(ctx, np, label, body, first, n_state, states, n_x, xs,
                             in_axes, in_dirs, n_out, out_axes, out_dirs);
    goto done;
  }
  if (!st && T == 0)
    st = dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                         "%s: the scan inputs are empty (zero iterations)", label);
  if (!st && T > ONNX_LOOP_MAX_ITERS) st = too_many(label, T);
  if (!st && B > ONNX_LOOP_MAX_ITERS) st = too_many(label, B);
  if (!st && v8) st = count_unroll(ctx, label, body, B * T);
  if (!st && v8 && n_in > 0 && in[0]) {
    /* sequence_lens: every element the full length. */
    dml_ir_value_t *sl = in[0];
    int ok = sl->kind == DML_IR_VALUE_GLOBAL && sl->data;
    int64_t n = ok ? dml_ir_type_numel_bound(ctx->m, &sl->type) : 0;
    for (int64_t i = 0; ok && i < n; i++)
      ok = dml_load_i64(sl->type.dtype, sl->data, (size_t)i) == T;
    if (!ok)
      st = dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                           "%s: sequence_lens must be absent or a constant equal to the "
                           "scan length %lld for every batch element",
                           label, (long long)T);
  }
  if (!st) {
    parts = (dml_ir_value_t **)calloc(n_out * (size_t)T + 1, sizeof(*parts));
    fin = (dml_ir_value_t **)calloc(n_state * (size_t)B + 1, sizeof(*fin));
    outv = (dml_ir_value_t **)calloc(n_out * (size_t)B + 1, sizeof(*outv));
    if (!parts || !fin || !outv) st = oom();
  }
  if (v8)
    for (size_t j = 0; j < n_x; j++) in_axes[j] = 0; /* within a batch element */
  for (int64_t b = 0; b < B && !st; b++) {
    for (size_t k = 0; k < n_state + n_x && !st; k++) {
      dml_ir_value_t *src = k < n_state ? states[k] : xs[k - n_state];
      if (!v8) {
        cur[k] = src;
        continue;
      }
      dml_ir_value_t *ops[2] = {src, NULL};
      dml_ir_node_t *node = NULL;
      st = scalar_global(ctx, "scan_batch", DML_DTYPE_I64, b, &ops[1]);
      if (!st) st = onnx_emit(ctx, DML_OP_GATHER, np->name, 2, ops, 1, &node);
      if (!st) st = dml_ir_node_set_attr_int(node, "axis", 0);
      if (!st) cur[k] = node->outputs[0];
    }
    if (!st)
      st = scan_run(ctx, np, label, body, n_state, cur, n_x, cur + n_state, in_axes,
                    in_dirs, T, n_out, parts);
    for (size_t k = 0; k < n_state && !st; k++) fin[k * (size_t)B + (size_t)b] = cur[k];
    for (size_t k = 0; k < n_out && !st; k++)
      st = stack(ctx, np, parts + k * (size_t)T, (size_t)T, out_dirs[k] != 0, out_axes[k],
                 &outv[k * (size_t)B + (size_t)b]);
  }
  for (size_t k = 0; k < n_state && !st; k++) {
    dml_ir_value_t *v = fin[k * (size_t)B];
    if (v8) st = stack(ctx, np, fin + k * (size_t)B, (size_t)B, 0, 0, &v);
    if (!st) st = emit_output(ctx, np, np->output[k], v);
  }
  for (size_t k = 0; k < n_out && !st; k++) {
    dml_ir_value_t *v = outv[k * (size_t)B];
    if (v8) st = stack(ctx, np, outv + k * (size_t)B, (size_t)B, 0, 0, &v);
    if (!st) st = emit_output(ctx, np, np->output[n_state + k], v);
  }
done:
  free(in_axes);
  free(in_dirs);
  free(out_axes);
  free(out_dirs);
  free(cur);
  free(parts);
  free(fin);
  free(outv);
  return st;
}

/* ---- SequenceMap over sequences of run-time length ---- */

dml_status_t onnx_seq_map_runtime(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                  const char *label, const Onnx__GraphProto *body,
                                  dml_ir_value_t **in, uint32_t n_in) {
  size_t n_x = 0;
  for (uint32_t k = 0; k < n_in; k++) {
    const onnx_seq_t *s = onnx_seq_find(ctx, np->input[k]);
    if (s && !s->stacked)
      return dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                             "%s: input %u is a sequence of static length and input 0 "
                             "one of run-time length",
                             label, k);
    n_x += s != NULL;
  }
  /* g: the body with its tensor inputs bound by Identity of the outer
   * tensors (captures), its sequence inputs the scan inputs. */
  static const Onnx__NodeProto np_init = ONNX__NODE_PROTO__INIT;
  Onnx__GraphProto g = *body;
  g.input = (Onnx__ValueInfoProto **)calloc(n_x + 1, sizeof(*g.input));
  g.node = (Onnx__NodeProto **)calloc(n_in + body->n_node + 1, sizeof(*g.node));
  Onnx__NodeProto *ids = (Onnx__NodeProto *)calloc(n_in + 1, sizeof(*ids));
  char **names = (char **)calloc(2 * (size_t)n_in + 1, sizeof(*names));
  dml_ir_value_t **xs = (dml_ir_value_t **)calloc(n_x + 1, sizeof(*xs));
  int64_t *zeros = (int64_t *)calloc(n_x + np->n_output + 1, sizeof(*zeros));
  Onnx__NodeProto ln = *np;
  ln.input = (char **)calloc(n_x + 1, sizeof(*ln.input));
  ln.output = (char **)calloc(np->n_output + 1, sizeof(*ln.output));
  dml_status_t st =
      !g.input || !g.node || !ids || !names || !xs || !zeros || !ln.input || !ln.output
          ? oom()
          : DML_OK;
  size_t gi = 0, gn = 0;
  for (uint32_t k = 0; k < n_in && !st; k++) {
    const onnx_seq_t *s = onnx_seq_find(ctx, np->input[k]);
    if (s) {
      dml_ir_value_t *v = NULL;
      const char *fresh = NULL;
      st = emit1(ctx, np, DML_OP_IDENTITY, 1, &s->stacked, NULL, 0, &v);
      if (!st) st = bind_fresh(ctx, "sequence_map_stacked", v, &fresh);
      xs[gi] = v;
      ln.input[gi] = (char *)fresh;
      g.input[gi++] = body->input[k];
      continue;
    }
    if (!(k < n_in && in[k])) {
      st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: input %u is missing", label, k);
      break;
    }
    ids[k] = np_init;
    ids[k].op_type = (char *)"Identity";
    ids[k].n_input = 1;
    ids[k].input = names + 2 * k;
    names[2 * k] = np->input[k];
    ids[k].n_output = 1;
    ids[k].output = names + 2 * k + 1;
    names[2 * k + 1] = body->input[k]->name;
    g.node[gn++] = &ids[k];
  }
  for (size_t i = 0; i < body->n_node; i++) g.node[gn++] = body->node[i];
  g.n_input = gi;
  g.n_node = gn;
  ln.n_input = gi;
  for (size_t o = 0; o < np->n_output && !st; o++) {
    char base[300];
    snprintf(base, sizeof base, "%s.stacked",
             is_empty(np->output[o]) ? "sequence_map" : np->output[o]);
    const char *fresh = onnx_unique_name(ctx, base);
    if (!fresh) st = oom();
    ln.output[o] = (char *)fresh;
  }
  if (!st)
    st = import_runtime_scan(ctx, &ln, label, &g, 0, 0, NULL, n_x, xs, zeros, zeros,
                             np->n_output, zeros, zeros);
  for (size_t o = 0; o < np->n_output && !st; o++) {
    if (is_empty(np->output[o])) continue;
    onnx_map_entry_t *e = onnx_map_find(&ctx->names, ln.output[o]);
    dml_ir_value_t *v = e ? (dml_ir_value_t *)e->val : NULL;
    st = v ? onnx_seq_define_stacked(ctx, np->output[o], v->type.dtype, v)
           : dml_status_make(DML_STATUS_INTERNAL, ONNX_ERR_OP,
                             "%s: the stacked result %zu is missing", label, o);
  }
  free(g.input);
  free(g.node);
  free(ids);
  free(names);
  free(xs);
  free(zeros);
  free(ln.input);
  free(ln.output);
  return st;
}
