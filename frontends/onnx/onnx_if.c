/*
 * onnx_if.c — ONNX If (opsets 7..17): straight-line IR (Where, or the taken
 * branch for a cond known at compile time), or the IR op If run at run time.
 *
 * Where lowering:
 *   outs = If(cond) then { then_branch } else { else_branch }
 * becomes both branches' nodes imported inline into the enclosing function,
 * then one Where(cond, then_out_k, else_out_k) per output, cond reshaped to a
 * scalar unless it is an argument of rank 0 (Where broadcasts it).
 *
 * Names. A branch reads tensors of enclosing scopes by name. Every name a
 * branch defines (initializer, node output) gets a fresh name unique in the
 * module (onnx_unique_name: the ONNX name, or "<name>_N" when taken),
 * recorded in the branch's scope (onnx_scope_t), which chains to the
 * enclosing branch's; a name resolves innermost scope first, then the
 * top-level graph's name map. The branch's nodes are imported as copies
 * whose input and output names are resolved, so the importers of every op
 * apply unchanged; the then and else branches may use the same local names.
 * Branch initializers and Constant nodes become globals under their fresh
 * names. A nested If lowers recursively inside its branch's scope. For the
 * topological order, a node with subgraphs depends on every outer tensor its
 * subgraphs read (onnx_subgraph_refs).
 *
 * A constant cond (an initializer, a Constant node, a bound input, an
 * Identity / Not chain of one, as OptionalHasElement gives, or a value that
 * shape inference knows, as Equal(Shape(x)[1], 512) where x's dim 1 is
 * static) imports only the taken branch: each If output is an Identity of its output, no
 * Where; its outputs may then be sequences (the same lists) and optionals (present or
 * none, onnx_optional.c), and its shapes and random ops need nothing more.
 *
 * Semantics and limits of the Where lowering (used when cond is not known
 * at compile time, the branches' output types agree and no branch draws
 * random numbers):
 *   - both branches are evaluated, every run: an error that only the untaken
 *     branch would raise (an out-of-range Gather index, an impossible
 *     Reshape) still fails the run, and a run costs both branches;
 *   - when cond is not known at compile time, a branch output that is a
 *     sequence, optional, map or sparse tensor is refused (UNIMPLEMENTED;
 *     the message says cond "depends on run-time data": binding it helps);
 *   - each output pair must have the same dtype where both branches declare
 *     it (INVALID_ARGUMENT: ONNX requires it), whatever cond is.
 *
 * Run-time If. After importing both branches inline, the types of the
 * nodes imported so far are inferred (onnx_infer_pending). When some
 * output pair has known, different types (shapes, ranks or data-dependent
 * symbols of their own), which one Where cannot select between, or the
 * branches declare different shapes (value_info), or a branch (nested
 * Ifs and Loop / Scan bodies included) holds a random op (DML_OPF_RANDOM,
 * or a Dropout with a training_mode input: evaluating the untaken branch
 * would draw numbers ONNX Runtime does not), the inline copies are dropped
 * and the If becomes the IR op If (ops.def): each branch is imported again
 * as a function of the module ("<node>.then", "<node>.else") taking the
 * captures (the non-global outer tensors the branches read,
 * onnx_subgraph_refs) as arguments, and the node If(cond, captures...)
 * names both functions. Shape inference gives each output dim the two
 * branches disagree on a data-dependent symbol (bounded by the larger);
 * the CPU executor runs only the taken branch (runtime/rt_session.c,
 * run_if), so only it draws random numbers; GPU targets run the node on
 * the host (the CPU fall-back per segment) or refuse it with
 * --no-cpu-fallback (compiler/driver.c).
 *
 * Output ranks that differ (then f32[1,T], else f32[T], as Silero-VAD-style
 * models have): the IR has no value of run-time rank, so the nodes of the
 * enclosing graph downstream of the If (those reading its outputs,
 * transitively, reads by subgraphs included) are imported into each branch
 * function too ("tail duplication", import_tail_if): each function is the
 * branch's nodes, an Identity binding each If output to that branch's
 * value, then the downstream nodes, all at static ranks. The If node's
 * outputs are the values of the If and of the downstream nodes that the
 * enclosing graph returns, in its output order and with their names (no
 * other node reads them: every reader is downstream); downstream nodes are
 * not imported again in the enclosing graph (onnx_frame_t.done). The
 * downstream nodes' other inputs are imported first, and captured. A
 * downstream If whose ranks differ does the same inside each branch
 * function; an If inside a Loop body uses the body's nodes and outputs.
 * Refused (UNIMPLEMENTED): an output the graph (or the enclosing
 * subgraph, a Loop body) returns that still differs in rank between the
 * branches, naming the If and the output (a package's outputs have a
 * static rank); copies past ONNX_IF_MAX_TAIL_NODES (100,000) in the model,
 * nested copies multiplied; a branch output named like the If's output.
 * Other limits: the branches read tensors only (no sequences or
 * optionals); captures are copied into the branch's arena each run.
 * Branches whose types are unknown at import, or equal, keep the Where
 * lowering.
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

static int is_default_domain(const char *d) {
  return is_empty(d) || strcmp(d, "ai.onnx") == 0;
}

static int is_if(const Onnx__NodeProto *np) {
  return is_default_domain(np->domain) && np->op_type && strcmp(np->op_type, "If") == 0;
}

static const Onnx__GraphProto *branch_of(const Onnx__NodeProto *np, const char *which) {
  const Onnx__AttributeProto *a = onnx_attr(np, which);
  if (!a || onnx_attr_type(a) != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH)
    return NULL;
  return a->g;
}

/* ---- scopes ---- */

static const char *resolve_in(const onnx_scope_t *s, const char *name) {
  for (; s; s = s->parent) {
    onnx_map_entry_t *e = onnx_map_find(&s->rename, name);
    if (e) return (const char *)e->val;
  }
  return name;
}

const char *onnx_resolve(const onnx_ctx_t *ctx, const char *name) {
  return resolve_in(ctx->scope, name);
}

/* ---- the outer tensors a node's subgraphs read ---- */

typedef struct local_frame {
  onnx_map_t names;
  const struct local_frame *up;
} local_frame_t;

typedef struct refs_walk {
  const onnx_ctx_t *ctx;
  onnx_map_t seen;
  const char **out;
  size_t n, cap;
  int failed;
} refs_walk_t;

static int frame_has(const local_frame_t *f, const char *name) {
  for (; f; f = f->up)
    if (onnx_map_find(&f->names, name)) return 1;
  return 0;
}

static void walk_graph(refs_walk_t *w, const Onnx__GraphProto *g,
                       const local_frame_t *up);

static void walk_node_graphs(refs_walk_t *w, const Onnx__NodeProto *np,
                             const local_frame_t *up) {
  for (size_t i = 0; i < np->n_attribute && !w->failed; i++) {
    const Onnx__AttributeProto *a = np->attribute[i];
    Onnx__AttributeProto__AttributeType t = onnx_attr_type(a);
    if (t == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH && a->g)
      walk_graph(w, a->g, up);
    if (t == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS)
      for (size_t k = 0; k < a->n_graphs && !w->failed; k++)
        walk_graph(w, a->graphs[k], up);
  }
}

static void add_ref(refs_walk_t *w, const char *name) {
  int inserted = 0;
  if (!onnx_map_insert(&w->seen, name, &inserted)) {
    w->failed = 1;
    return;
  }
  if (!inserted) return;
  if (w->n == w->cap) {
    size_t cap = w->cap ? w->cap * 2 : 8;
    const char **out = (const char **)realloc((void *)w->out, cap * sizeof(char *));
    if (!out) {
      w->failed = 1;
      return;
    }
    w->out = out;
    w->cap = cap;
  }
  w->out[w->n++] = onnx_resolve(w->ctx, name);
}

static void walk_graph(refs_walk_t *w, const Onnx__GraphProto *g,
                       const local_frame_t *up) {
  local_frame_t f = {{0}, up};
  for (size_t i = 0; i < g->n_initializer && !w->failed; i++)
    if (!is_empty(g->initializer[i]->name) &&
        !onnx_map_insert(&f.names, g->initializer[i]->name, NULL))
      w->failed = 1;
  for (size_t i = 0; i < g->n_input && !w->failed; i++)
    if (!is_empty(g->input[i]->name) &&
        !onnx_map_insert(&f.names, g->input[i]->name, NULL))
      w->failed = 1;
  for (size_t i = 0; i < g->n_node && !w->failed; i++)
    for (size_t k = 0; k < g->node[i]->n_output && !w->failed; k++)
      if (!is_empty(g->node[i]->output[k]) &&
          !onnx_map_insert(&f.names, g->node[i]->output[k], NULL))
        w->failed = 1;
  for (size_t i = 0; i < g->n_node && !w->failed; i++) {
    const Onnx__NodeProto *np = g->node[i];
    for (size_t k = 0; k < np->n_input && !w->failed; k++)
      if (!is_empty(np->input[k]) && !frame_has(&f, np->input[k]))
        add_ref(w, np->input[k]);
    walk_node_graphs(w, np, &f);
  }
  for (size_t i = 0; i < g->n_output && !w->failed; i++)
    if (!is_empty(g->output[i]->name) && !frame_has(&f, g->output[i]->name))
      add_ref(w, g->output[i]->name);
  onnx_map_free(&f.names);
}

dml_status_t onnx_subgraph_refs(const onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                const char ***out, size_t *out_n) {
  *out = NULL;
  *out_n = 0;
  int has_graphs = 0;
  for (size_t i = 0; i < np->n_attribute && !has_graphs; i++) {
    Onnx__AttributeProto__AttributeType t = onnx_attr_type(np->attribute[i]);
    has_graphs = t == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH ||
                 t == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS;
  }
  if (!has_graphs) return DML_OK;
  refs_walk_t w;
  memset(&w, 0, sizeof(w));
  w.ctx = ctx;
  walk_node_graphs(&w, np, NULL);
  onnx_map_free(&w.seen);
  if (w.failed) {
    free((void *)w.out);
    return oom();
  }
  *out = w.out;
  *out_n = w.n;
  return DML_OK;
}

/* ---- the nodes check_supported() looks at ---- */

static int collect(const Onnx__GraphProto *g, const Onnx__NodeProto ***items, size_t *n,
                   size_t *cap) {
  for (size_t i = 0; i < g->n_node; i++) {
    const Onnx__NodeProto *np = g->node[i];
    if (*n == *cap) {
      size_t c = *cap ? *cap * 2 : 64;
      const Onnx__NodeProto **p =
          (const Onnx__NodeProto **)realloc((void *)*items, c * sizeof(*p));
      if (!p) return -1;
      *items = p;
      *cap = c;
    }
    (*items)[(*n)++] = np;
    if (is_default_domain(np->domain) && np->op_type &&
        (strcmp(np->op_type, "SequenceMap") == 0 || strcmp(np->op_type, "Loop") == 0 ||
         strcmp(np->op_type, "Scan") == 0)) {
      const Onnx__GraphProto *body = branch_of(np, "body");
      if (body && collect(body, items, n, cap)) return -1;
      continue;
    }
    if (!is_if(np)) continue;
    const Onnx__GraphProto *b[2] = {branch_of(np, "then_branch"),
                                    branch_of(np, "else_branch")};
    for (int k = 0; k < 2; k++)
      if (b[k] && collect(b[k], items, n, cap)) return -1;
  }
  return 0;
}

dml_status_t onnx_collect_nodes(const Onnx__GraphProto *g, const Onnx__NodeProto ***out,
                                size_t *out_n) {
  const Onnx__NodeProto **items = NULL;
  size_t n = 0, cap = 0;
  if (collect(g, &items, &n, &cap)) {
    free((void *)items);
    return oom();
  }
  *out = items;
  *out_n = n;
  return DML_OK;
}

/* ---- refusals before import ---- */

static const char *value_kind_name(const Onnx__TypeProto *t) {
  switch (t->value_case) {
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: return "a sequence";
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: return "an optional";
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE: return "a map";
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE: return "a sparse tensor";
    default: return "not a tensor";
  }
}

/* The first node of g, its nested If branches or Loop / Scan / SequenceMap
 * bodies that draws random numbers (a DML_OPF_RANDOM op, a Dropout with a
 * training_mode input), or NULL. */
static const Onnx__NodeProto *find_random(const Onnx__GraphProto *g, int64_t opset) {
  for (size_t i = 0; i < g->n_node; i++) {
    const Onnx__NodeProto *np = g->node[i];
    if (!is_default_domain(np->domain) || is_empty(np->op_type)) continue;
    const onnx_op_entry_t *e = onnx_op_lookup(np->op_type, opset);
    const dml_op_info_t *info = e ? dml_op_info(e->op) : NULL;
    if (info && (info->flags & DML_OPF_RANDOM)) return np;
    if (e && e->op == DML_OP_DROPOUT && np->n_input > 2 && !is_empty(np->input[2]))
      return np;
    const Onnx__GraphProto *b[3] = {branch_of(np, "then_branch"),
                                    branch_of(np, "else_branch"), branch_of(np, "body")};
    for (int k = 0; k < 3; k++) {
      const Onnx__NodeProto *r = b[k] ? find_random(b[k], opset) : NULL;
      if (r) return r;
    }
  }
  return NULL;
}

/* ---- the lowering ---- */

/* UNIMPLEMENTED when a branch of np declares an output that is not a tensor:
 * Where selects tensors only. */
static dml_status_t check_tensor_outputs(const Onnx__NodeProto *np, const char *label) {
  static const char *const kWhich[2] = {"then_branch", "else_branch"};
  for (int k = 0; k < 2; k++) {
    const Onnx__GraphProto *b = branch_of(np, kWhich[k]);
    for (size_t o = 0; b && o < b->n_output; o++) {
      const Onnx__TypeProto *t = b->output[o]->type;
      if (!t || t->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
          t->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET)
        continue;
      return dml_status_detail(
          dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                          "%s: %s output '%s' is %s; the If lowering (both branches "
                          "and Where) supports tensor outputs only, and cond is not "
                          "known at compile time: it depends on run-time data",
                          label, kWhich[k], b->output[o]->name, value_kind_name(t)),
          "with a constant cond (an initializer, a Constant, an input bound with "
          "dmlc compile --bind, or Identity / Not of one) only the taken branch is "
          "imported, and its outputs may be sequences and optionals");
    }
  }
  return DML_OK;
}

/* Whether v is known at compile time as one element: a constant global, or
 * Identity / Not chains of one (OptionalHasElement gives constant bools);
 * *out its truth. */
static int const_cond(const dml_ir_value_t *v, int *out) {
  int negate = 0;
  for (int depth = 0; v && depth < 64; depth++) {
    if (v->kind == DML_IR_VALUE_GLOBAL) {
      if (!v->data || v->data_bytes == 0) return 0;
      int64_t numel = 1;
      for (int32_t r = 0; r < v->type.rank; r++) {
        if (v->type.dims[r].sym >= 0) return 0;
        numel *= v->type.dims[r].value;
      }
      if (v->type.rank < 0 || numel != 1) return 0;
      *out = (dml_load_f64(v->type.dtype, v->data, 0) != 0) != negate;
      return 1;
    }
    if (v->kind != DML_IR_VALUE_RESULT || !v->def || v->def->n_inputs != 1) return 0;
    if (v->def->op == DML_OP_NOT)
      negate = !negate;
    else if (v->def->op != DML_OP_IDENTITY)
      return 0;
    v = v->def->inputs[0];
  }
  return 0;
}

/* Output pair k's declared types: INVALID_ARGUMENT when both declare
 * dtypes and they differ (ONNX requires one). *shape_differs is set when
 * both declare shapes of different ranks or different static dims,
 * *rank_differs when the ranks differ (left alone otherwise). */
static dml_status_t check_pair(const char *label, const Onnx__ValueInfoProto *a,
                               const Onnx__ValueInfoProto *b, size_t k,
                               int *shape_differs, int *rank_differs) {
  /* (tensor_type shares a oneof with the other kinds: check the case.) */
  const Onnx__TypeProto__Tensor *ta =
      a->type && a->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE
          ? a->type->tensor_type
          : NULL;
  const Onnx__TypeProto__Tensor *tb =
      b->type && b->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE
          ? b->type->tensor_type
          : NULL;
  if (!ta || !tb) return DML_OK;
  if (ta->has_elem_type && tb->has_elem_type && ta->elem_type != tb->elem_type)
    return dml_status_detail(
        dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                        "%s: output %zu has dtype %s in then_branch ('%s') but %s in "
                        "else_branch ('%s')",
                        label, k, onnx_dtype_name(ta->elem_type), a->name,
                        onnx_dtype_name(tb->elem_type), b->name),
        "both branches of an If must give each output the same dtype");
  if (!ta->shape || !tb->shape) return DML_OK;
  int same = ta->shape->n_dim == tb->shape->n_dim;
  if (!same) *rank_differs = 1;
  for (size_t d = 0; same && d < ta->shape->n_dim; d++) {
    const Onnx__TensorShapeProto__Dimension *x = ta->shape->dim[d],
                                            *y = tb->shape->dim[d];
    if (x->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
        y->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
        x->dim_value != y->dim_value)
      same = 0;
  }
  if (!same) *shape_differs = 1;
  return DML_OK;
}

/* Imports branch `g` (named `which`) of If node np inline; out_vals[k] is its
 * output k. */
static dml_status_t import_branch(onnx_ctx_t *ctx, const char *label, const char *which,
                                  const Onnx__GraphProto *g, dml_ir_value_t **out_vals) {
  if (g->n_input)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: %s has %zu inputs; If branches take none", label, which,
                           g->n_input);
  return onnx_import_subgraph(ctx, label, which, g, 0, NULL, out_vals);
}

dml_status_t onnx_import_subgraph(onnx_ctx_t *ctx, const char *label, const char *which,
                                  const Onnx__GraphProto *g, size_t n_in,
                                  dml_ir_value_t *const *in_vals,
                                  dml_ir_value_t **out_vals) {
  return onnx_import_subgraph_seqs(ctx, label, which, g, n_in, in_vals, NULL, out_vals,
                                   NULL);
}

dml_status_t onnx_import_subgraph_seqs(onnx_ctx_t *ctx, const char *label,
                                       const char *which, const Onnx__GraphProto *g,
                                       size_t n_in, dml_ir_value_t *const *in_vals,
                                       onnx_seq_t *const *in_seqs,
                                       dml_ir_value_t **out_vals, onnx_seq_t **out_seqs) {
  if (g->n_input != n_in)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: %s has %zu inputs, %zu given", label, which, g->n_input,
                           n_in);
  if (g->n_sparse_initializer)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                           "%s: %s has sparse initializers, which are not supported",
                           label, which);
  onnx_scope_t s;
  memset(&s, 0, sizeof(s));
  s.parent = ctx->scope;
  dml_status_t st = DML_OK;
  size_t n_names = 0;
  for (size_t i = 0; i < g->n_node; i++)
    n_names += g->node[i]->n_input + g->node[i]->n_output;
  Onnx__NodeProto *copies = (Onnx__NodeProto *)calloc(g->n_node + 1, sizeof(*copies));
  Onnx__NodeProto **ptrs = (Onnx__NodeProto **)calloc(g->n_node + 1, sizeof(*ptrs));
  char **names = (char **)calloc(n_names + 1, sizeof(char *));
  if (!copies || !ptrs || !names) {
    st = oom();
    goto done;
  }
  /* Fresh names for what the branch defines: inputs (bound to in_vals),
   * initializers, node outputs. */
  for (size_t i = 0; i < n_in && !st; i++) {
    const char *name = g->input[i]->name;
    int inserted = 0;
    onnx_map_entry_t *re =
        is_empty(name) ? NULL : onnx_map_insert(&s.rename, name, &inserted);
    if (is_empty(name) || (re && !inserted)) {
      st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: %s input #%zu has no name or is listed twice", label,
                           which, i);
      break;
    }
    const char *fresh = re ? onnx_unique_name(ctx, name) : NULL;
    if (!fresh) {
      st = oom();
      break;
    }
    re->val = (void *)fresh;
    if (in_seqs && in_seqs[i])
      st = onnx_seq_define_as(ctx, fresh, in_seqs[i]);
    else
      st = onnx_define(ctx, fresh, in_vals[i]);
  }
  for (size_t i = 0; i < g->n_initializer && !st; i++) {
    const Onnx__TensorProto *tp = g->initializer[i];
    if (is_empty(tp->name)) {
      st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: %s initializer #%zu has no name", label, which, i);
      break;
    }
    int inserted = 0;
    onnx_map_entry_t *re = onnx_map_insert(&s.rename, tp->name, &inserted);
    if (!re) {
      st = oom();
      break;
    }
    if (!inserted) {
      st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: %s defines '%s' twice", label, which, tp->name);
      break;
    }
    const char *fresh = onnx_unique_name(ctx, tp->name);
    if (!fresh) {
      st = oom();
      break;
    }
    re->val = (void *)fresh;
    char what[512];
    snprintf(what, sizeof(what), "initializer '%s' of the %s of %s", tp->name, which,
             label);
    dml_tensor_t t;
    void *data = NULL;
    size_t bytes = 0;
    st = onnx_tensor_decode(tp, ctx->base_dir, what, &t, &data, &bytes);
    if (st) break;
    dml_type_t type = dml_type_static(t.dtype, t.rank, t.dims);
    uint32_t flags = dml_dtype_is_float(t.dtype) ? DML_IR_GLOBAL_PARAM : 0;
    static const uint8_t empty = 0;
    dml_ir_value_t *gv = NULL;
    st = dml_ir_module_add_global(
        ctx->m, fresh, &type, t.data ? t.data : (const void *)&empty, bytes, flags, &gv);
    free(data);
    if (!st) st = onnx_define(ctx, fresh, gv);
  }
  for (size_t i = 0; i < g->n_node && !st; i++) {
    const Onnx__NodeProto *np = g->node[i];
    for (size_t k = 0; k < np->n_output && !st; k++) {
      const char *name = np->output[k];
      if (is_empty(name)) continue;
      int inserted = 0;
      onnx_map_entry_t *re = onnx_map_insert(&s.rename, name, &inserted);
      if (!re) {
        st = oom();
        break;
      }
      if (!inserted) {
        char nl[300];
        st = dml_status_detail(
            dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                            "%s: %s defines tensor '%s' twice", label, which, name),
            "%s defines it again", onnx_node_label(np, nl, sizeof(nl)));
        break;
      }
      const char *fresh = onnx_unique_name(ctx, name);
      onnx_map_entry_t *e = fresh ? onnx_map_find(&ctx->names, fresh) : NULL;
      if (!e) {
        st = oom();
        break;
      }
      re->val = (void *)fresh;
      e->aux = (int64_t)i;
    }
  }
  /* The nodes, with resolved names. */
  size_t at = 0;
  for (size_t i = 0; i < g->n_node && !st; i++) {
    Onnx__NodeProto *c = &copies[i];
    *c = *g->node[i];
    c->input = names + at;
    for (size_t k = 0; k < c->n_input; k++) {
      const char *nm = g->node[i]->input[k];
      names[at++] = (char *)(is_empty(nm) ? nm : resolve_in(&s, nm));
    }
    c->output = names + at;
    for (size_t k = 0; k < c->n_output; k++) {
      const char *nm = g->node[i]->output[k];
      names[at++] = (char *)(is_empty(nm) ? nm : resolve_in(&s, nm));
    }
    ptrs[i] = c;
  }
  if (!st) {
    Onnx__GraphProto fake = *g;
    fake.node = ptrs;
    const onnx_scope_t *saved = ctx->scope;
    ctx->scope = &s;
    st = onnx_import_graph_nodes(ctx, &fake, g);
    for (size_t k = 0; k < g->n_output && !st; k++) {
      const char *name = g->output[k]->name;
      onnx_map_entry_t *e =
          is_empty(name) ? NULL : onnx_map_find(&ctx->names, resolve_in(&s, name));
      out_vals[k] = e ? (dml_ir_value_t *)e->val : NULL;
      if (out_seqs) {
        const onnx_map_entry_t *ne =
            is_empty(name) ? NULL : onnx_map_find(&ctx->nones, resolve_in(&s, name));
        if (ne) {
          out_seqs[k] = (onnx_seq_t *)onnx_opt_none_mark((int)ne->aux);
          continue;
        }
        out_seqs[k] = is_empty(name) ? NULL : onnx_seq_find(ctx, resolve_in(&s, name));
        if (out_seqs[k]) continue;
      }
      if (!out_vals[k])
        st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                             "%s: %s output '%s' is not defined", label, which,
                             is_empty(name) ? "" : name);
    }
    ctx->scope = saved;
  }
done:
  onnx_map_free(&s.rename);
  free(copies);
  free(ptrs);
  free(names);
  if (st) st = dml_status_annotate(st, "importing the %s of %s", which, label);
  return st;
}

/* Names value v after If output `name` and records it. */
static dml_status_t bind_output(onnx_ctx_t *ctx, const char *name, dml_ir_value_t *v) {
  v->name = dml_ir_strdup(ctx->m, name);
  if (!v->name) return oom();
  return onnx_define(ctx, name, v);
}

/* ---- run-time If: the branches as functions of the module ---- */

/* 1 when some output pair has known, different types (shapes, ranks or
 * data-dependent symbols): one Where cannot select between them. */
static int branches_differ(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                           dml_ir_value_t *const *vals, size_t n_out) {
  onnx_infer_pending(ctx);
  for (size_t k = 0; k < n_out; k++) {
    if (is_empty(np->output[k])) continue;
    const dml_type_t *a = &vals[k]->type, *b = &vals[n_out + k]->type;
    if (a->rank == DML_RANK_UNKNOWN || b->rank == DML_RANK_UNKNOWN) continue;
    if (!dml_type_equal(a, b)) return 1;
  }
  return 0;
}

/* Unlinks the nodes appended to ctx->f after `mark` (NULL: all) and the
 * functions added past the first n_fn (a nested run-time If's branches). */
static void drop_after(onnx_ctx_t *ctx, dml_ir_node_t *mark, uint32_t n_fn) {
  while (ctx->f->last && ctx->f->last != mark) dml_ir_node_erase(ctx->f->last);
  /* The dropped functions' names are free again: fresh_function_name
   * tries them first. */
  for (uint32_t i = n_fn; i < ctx->m->n_functions; i++) {
    char key[300];
    const char *name = ctx->m->functions[i]->name, *hash = strrchr(name, '#');
    long long k = hash ? atoll(hash + 1) : 1;
    snprintf(key, sizeof key, "\1%.*s", (int)(hash ? hash - name : (long)strlen(name)),
             name);
    onnx_map_entry_t *next = onnx_map_find(&ctx->name_next, key);
    if (next && k >= 1 && next->aux > k) next->aux = k;
  }
  ctx->m->n_functions = n_fn;
}

/* A function name "<base>" or "<base>#N" that the module does not hold
 * (the N tried before for base, remembered in ctx->name_next under "\1"
 * base, are taken). */
static const char *fresh_function_name(onnx_ctx_t *ctx, const char *base) {
  char name[300];
  snprintf(name, sizeof name, "\1%s", base);
  onnx_map_entry_t *next = onnx_map_find(&ctx->name_next, name);
  if (!next) {
    const char *key = dml_ir_strdup(ctx->m, name); /* the map keeps the pointer */
    next = key ? onnx_map_insert(&ctx->name_next, key, NULL) : NULL;
  }
  if (!next) return NULL;
  for (int64_t k = next->aux > 0 ? next->aux : 1; k < INT32_MAX; k++) {
    if (k == 1)
      snprintf(name, sizeof name, "%s", base);
    else
      snprintf(name, sizeof name, "%s#%lld", base, (long long)k);
    if (!dml_ir_module_find_function(ctx->m, name)) {
      next->aux = k + 1;
      return dml_ir_strdup(ctx->m, name);
    }
  }
  return NULL;
}

dml_status_t onnx_import_function(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                  const char *label, const char *which,
                                  const char *suffix, const Onnx__GraphProto *g,
                                  const dml_type_t *in_types, size_t n_in,
                                  const char *const *caps, size_t n_caps,
                                  const char **out_name) {
  char base[256];
  snprintf(base, sizeof base, "%s.%s", is_empty(np->name) ? np->op_type : np->name,
           suffix);
  const char *fname = fresh_function_name(ctx, base);
  dml_ir_function_t *bf = NULL;
  if (!fname) return oom();
  DML_RETURN_IF_ERROR(dml_ir_function_create(ctx->m, fname, &bf));
  size_t n_out = g->n_output;
  dml_ir_value_t **saved = (dml_ir_value_t **)calloc(n_caps + 1, sizeof(*saved));
  dml_ir_value_t **outs = (dml_ir_value_t **)calloc(n_out + 1, sizeof(*outs));
  dml_ir_value_t **ins = (dml_ir_value_t **)calloc(n_in + 1, sizeof(*ins));
  dml_status_t st = !saved || !outs || !ins ? oom() : DML_OK;
  for (size_t i = 0; i < n_in && !st; i++)
    st = dml_ir_function_add_arg(bf, i < g->n_input ? g->input[i]->name : NULL,
                                 &in_types[i], &ins[i]);
  size_t swapped = 0;
  for (; swapped < n_caps && !st; swapped++) {
    /* Found by name each time: imports insert names (the map may move). */
    onnx_map_entry_t *e = onnx_map_find(&ctx->names, caps[swapped]);
    dml_ir_value_t *v = (dml_ir_value_t *)e->val, *arg = NULL;
    st = dml_ir_function_add_arg(bf, v->name ? v->name : caps[swapped], &v->type, &arg);
    if (st) break;
    arg->sym_data = v->sym_data;
    saved[swapped] = v;
    e->val = arg;
  }
  dml_ir_function_t *outer = ctx->f;
  if (!st) {
    ctx->f = bf;
    st = n_in ? onnx_import_subgraph(ctx, label, which, g, n_in, ins, outs)
              : import_branch(ctx, label, which, g, outs);
    for (size_t k = 0; k < n_out && !st; k++) {
      dml_ir_node_t *id = NULL;
      st = onnx_emit(ctx, DML_OP_IDENTITY, NULL, 1, &outs[k], 1, &id);
      if (!st) outs[k] = id->outputs[0];
    }
    if (!st) st = dml_ir_function_set_results(bf, (uint32_t)n_out, outs);
    ctx->f = outer;
  }
  for (size_t i = 0; i < swapped; i++)
    onnx_map_find(&ctx->names, caps[i])->val = saved[i];
  free(saved);
  free(outs);
  free(ins);
  *out_name = fname;
  return st;
}

dml_status_t onnx_captures(onnx_ctx_t *ctx, const Onnx__NodeProto *np, const char *label,
                           const char ***out_caps, dml_ir_value_t ***out_vals,
                           size_t *out_n) {
  const char **refs = NULL;
  size_t n_refs = 0;
  *out_caps = NULL;
  *out_vals = NULL;
  *out_n = 0;
  DML_RETURN_IF_ERROR(onnx_subgraph_refs(ctx, np, &refs, &n_refs));
  const char **caps = (const char **)calloc(n_refs + 1, sizeof(*caps));
  dml_ir_value_t **vals = (dml_ir_value_t **)calloc(n_refs + 1, sizeof(*vals));
  dml_status_t st = !caps || !vals ? oom() : DML_OK;
  size_t n = 0;
  for (size_t i = 0; i < n_refs && !st; i++) {
    onnx_map_entry_t *e = onnx_map_find(&ctx->names, refs[i]);
    dml_ir_value_t *v = e ? (dml_ir_value_t *)e->val : NULL;
    if (v && v->kind == DML_IR_VALUE_GLOBAL) continue;
    if (!v || v->type.rank == DML_RANK_UNKNOWN)
      st = dml_status_make(
          DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
          "%s runs its subgraphs as functions at run time; they read "
          "'%s', which is %s",
          label, refs[i],
          v ? "a tensor of unknown shape" : "not a tensor (a sequence or optional)");
    else {
      caps[n] = refs[i];
      vals[n++] = v;
    }
  }
  free((void *)refs);
  if (st) {
    free(caps);
    free(vals);
    return st;
  }
  *out_caps = caps;
  *out_vals = vals;
  *out_n = n;
  return DML_OK;
}

/* UNIMPLEMENTED when output k of the If has a different rank in the two
 * branch functions fn[0], fn[1] (their nodes inferred here where still
 * untyped): the IR has no value of run-time rank, and the output is one the
 * enclosing graph returns (tail duplication took every node reading it). */
static dml_status_t check_result_ranks(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                       const char *label, const char *const fn[2]) {
  dml_ir_function_t *f[2];
  for (int b = 0; b < 2; b++) {
    f[b] = dml_ir_module_find_function(ctx->m, fn[b]);
    if (!f[b]) return DML_OK; /* infer_if reports it */
    for (dml_ir_node_t *n = f[b]->first; n; n = n->next) {
      int unknown = 0;
      for (uint32_t k = 0; k < n->n_outputs; k++)
        unknown |= n->outputs[k] && n->outputs[k]->type.rank == DML_RANK_UNKNOWN;
      if (!unknown) continue;
      dml_status_t st = dml_ir_infer_node(ctx->m, n);
      if (st) {
        dml_status_free(st); /* infer_if reports it, in context */
        return DML_OK;
      }
    }
  }
  for (size_t k = 0; k < np->n_output && k < f[0]->n_results && k < f[1]->n_results;
       k++) {
    const dml_type_t *a = &f[0]->results[k]->type, *b = &f[1]->results[k]->type;
    if (a->rank == DML_RANK_UNKNOWN || b->rank == DML_RANK_UNKNOWN || a->rank == b->rank)
      continue;
    char ta[200], tb[200];
    return dml_status_detail(
        dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                        "%s: output '%s' is %s when then_branch runs but %s when "
                        "else_branch runs; an output of the graph must have one rank",
                        label, np->output[k], dml_ir_type_str(ctx->m, a, ta, sizeof ta),
                        dml_ir_type_str(ctx->m, b, tb, sizeof tb)),
        "cond is only known at run time; the nodes reading the If's outputs were "
        "copied into both branches (tail duplication), but '%s' is returned by the "
        "graph (or the enclosing subgraph), whose outputs have a static rank",
        np->output[k]);
  }
  return DML_OK;
}

/* The If as run-time control flow: node If(cond, captures...) whose
 * branches are functions of the module (ops.def); the executor runs only
 * the taken one. Captures are the non-global tensors the branches read
 * (globals are visible in every function). */
static dml_status_t import_runtime_if(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                      const char *label, dml_ir_value_t *cond,
                                      const Onnx__GraphProto *then_g,
                                      const Onnx__GraphProto *else_g) {
  const char **caps = NULL;
  dml_ir_value_t **cv = NULL;
  size_t n_caps = 0;
  DML_RETURN_IF_ERROR(onnx_captures(ctx, np, label, &caps, &cv, &n_caps));
  dml_ir_value_t **ops = (dml_ir_value_t **)calloc(n_caps + 2, sizeof(*ops));
  dml_status_t st = !ops ? oom() : DML_OK;
  if (ops) {
    ops[0] = cond;
    for (size_t i = 0; i < n_caps; i++) ops[1 + i] = cv[i];
  }
  const char *fn[2] = {NULL, NULL};
  if (!st)
    st = onnx_import_function(ctx, np, label, "then_branch", "then", then_g, NULL, 0,
                              caps, n_caps, &fn[0]);
  if (!st)
    st = onnx_import_function(ctx, np, label, "else_branch", "else", else_g, NULL, 0,
                              caps, n_caps, &fn[1]);
  if (!st) st = check_result_ranks(ctx, np, label, fn);
  dml_ir_node_t *node = NULL;
  if (!st)
    st = onnx_emit(ctx, DML_OP_IF, np->name, (uint32_t)(n_caps + 1), ops,
                   (uint32_t)np->n_output, &node);
  if (!st) st = dml_ir_node_set_attr_string(node, "then_function", fn[0]);
  if (!st) st = dml_ir_node_set_attr_string(node, "else_function", fn[1]);
  for (size_t k = 0; k < np->n_output && !st; k++)
    if (!is_empty(np->output[k])) st = bind_output(ctx, np->output[k], node->outputs[k]);
  if (!st) {
    st = dml_ir_infer_node(ctx->m, node);
    if (st) st = dml_status_annotate(st, "typing %s, run at run time", label);
  }
  free(caps);
  free(cv);
  free(ops);
  return st;
}

/* ---- tail duplication: branch outputs of different ranks ---- */

/* Adds the names np reads (inputs, and what its subgraphs read of enclosing
 * scopes, resolved) to `set`; *hit (may be NULL) is set when one was in
 * `probe` (may be NULL). */
static dml_status_t node_reads(const onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                               onnx_map_t *set, const onnx_map_t *probe, int *hit) {
  const char **refs = NULL;
  size_t n_refs = 0;
  DML_RETURN_IF_ERROR(onnx_subgraph_refs(ctx, np, &refs, &n_refs));
  dml_status_t st = DML_OK;
  for (size_t k = 0; k < np->n_input + n_refs && !st; k++) {
    const char *name = k < np->n_input ? np->input[k] : refs[k - np->n_input];
    if (is_empty(name)) continue;
    if (probe && hit && onnx_map_find(probe, name)) *hit = 1;
    if (set && !onnx_map_insert(set, name, NULL)) st = oom();
  }
  free((void *)refs);
  return st;
}

/* Whether np defines a name in `set`. */
static int defines_any(const Onnx__NodeProto *np, const onnx_map_t *set) {
  for (size_t k = 0; k < np->n_output; k++)
    if (!is_empty(np->output[k]) && onnx_map_find(set, np->output[k])) return 1;
  return 0;
}

/* A run-time If whose branches give some output different ranks. The IR has
 * no value of run-time rank, so the nodes of the enclosing graph downstream
 * of the If (D: those reading its outputs, transitively, subgraph reads
 * included) are imported into each branch function too, after an Identity
 * binding each If output to that branch's value: within a branch function
 * every rank is static. The If node's outputs become the values of the If
 * and of D that the enclosing graph returns (E, in its output order); no
 * other node reads them, as D is closed under reading. The nodes D reads
 * that are not imported yet (A) are imported first, so that they can be
 * captured; D is marked done in ctx->frame. Errors: UNIMPLEMENTED when a
 * value of E still differs in rank between the branches
 * (check_result_ranks), when D would push the model's copied nodes past
 * ONNX_IF_MAX_TAIL_NODES, when importing A let another such If take a node
 * of D, or when a branch output has the If output's name. */
static dml_status_t import_tail_if(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                   const char *label, dml_ir_value_t *cond,
                                   const Onnx__GraphProto *then_g,
                                   const Onnx__GraphProto *else_g) {
  onnx_frame_t *fr = ctx->frame;
  const Onnx__GraphProto *g = fr ? fr->g : NULL;
  size_t n = g ? g->n_node : 0, self = 0, pos = 0;
  while (self < n && g->node[self] != np) self++;
  /* np and g's nodes carry resolved names (the topological order and D are
   * found with them); the branch functions are built of the nodes with
   * their ONNX names (fr->orig), as their subgraphs read ONNX names, and
   * imported in a scope of their own under the current one. */
  const Onnx__NodeProto *onp = self < n ? fr->orig->node[self] : NULL;
  while (self < n && pos < n && fr->order[pos] != self) pos++;
  if (self == n || pos == n) /* (no graph to take a tail from) */
    return import_runtime_if(ctx, np, label, cond, then_g, else_g);
  const Onnx__GraphProto *br[2] = {then_g, else_g};
  uint8_t *in_d = (uint8_t *)calloc(n + 1, 1), *in_a = (uint8_t *)calloc(n + 1, 1);
  char **e_names = (char **)calloc(g->n_output + 1, sizeof(char *));
  Onnx__ValueInfoProto *vis =
      (Onnx__ValueInfoProto *)calloc(g->n_output + 1, sizeof(*vis));
  Onnx__ValueInfoProto **vptr =
      (Onnx__ValueInfoProto **)calloc(g->n_output + 1, sizeof(*vptr));
  Onnx__NodeProto *idn[2] = {NULL, NULL};
  Onnx__NodeProto **nodes[2] = {NULL, NULL};
  onnx_map_t made, need, in_e;
  memset(&made, 0, sizeof made);
  memset(&need, 0, sizeof need);
  memset(&in_e, 0, sizeof in_e);
  size_t n_d = 0, n_e = 0;
  dml_status_t st = !in_d || !in_a || !e_names || !vis || !vptr ? oom() : DML_OK;
  /* D, in topological order after the If (all of it not imported yet). */
  for (size_t k = 0; k < np->n_output && !st; k++)
    if (!is_empty(np->output[k]) && !onnx_map_insert(&made, np->output[k], NULL))
      st = oom();
  for (size_t p = pos + 1; p < n && !st; p++) {
    size_t i = fr->order[p];
    int hit = 0;
    if (fr->done[i]) continue;
    st = node_reads(ctx, g->node[i], NULL, &made, &hit);
    if (st || !hit) continue;
    in_d[i] = 1;
    n_d++;
    for (size_t k = 0; k < g->node[i]->n_output && !st; k++)
      if (!is_empty(g->node[i]->output[k]) &&
          !onnx_map_insert(&made, g->node[i]->output[k], NULL))
        st = oom();
  }
  if (!st && (n_d > ONNX_IF_MAX_TAIL_NODES ||
              ctx->tail_nodes + 2 * n_d > ONNX_IF_MAX_TAIL_NODES))
    st = dml_status_detail(
        dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                        "%s: copying the %zu nodes after it into both branches would "
                        "copy more than %d nodes",
                        label, n_d, ONNX_IF_MAX_TAIL_NODES),
        "its branch outputs differ in rank, so the nodes reading them are copied into "
        "each branch function (tail duplication); the model's Ifs, nested ones "
        "multiplied, may copy at most %d nodes in all",
        ONNX_IF_MAX_TAIL_NODES);
  if (!st) ctx->tail_nodes += 2 * n_d;
  /* A: what D reads that is not imported yet, imported now. */
  for (size_t p = pos + 1; p < n && !st; p++)
    if (in_d[fr->order[p]])
      st = node_reads(ctx, g->node[fr->order[p]], &need, NULL, NULL);
  for (size_t p = n; p-- > pos + 1 && !st;) {
    size_t i = fr->order[p];
    if (fr->done[i] || in_d[i] || !defines_any(g->node[i], &need)) continue;
    in_a[i] = 1;
    st = node_reads(ctx, g->node[i], &need, NULL, NULL);
  }
  for (size_t p = pos + 1; p < n && !st; p++) {
    size_t i = fr->order[p];
    if (!in_a[i] || fr->done[i]) continue;
    fr->done[i] = 1;
    st = onnx_import_node(ctx, g->node[i]);
  }
  if (!st) onnx_infer_pending(ctx); /* the captures' types */
  for (size_t p = pos + 1; p < n && !st; p++) {
    size_t i = fr->order[p];
    if (!in_d[i] || !fr->done[i]) continue;
    char dl[300];
    st = dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                         "%s: its outputs differ in rank between the branches, and %s, "
                         "which reads them, was copied into the branches of another "
                         "such If already",
                         label, onnx_node_label(g->node[i], dl, sizeof dl));
  }
  /* E: the graph's outputs that the If or D define, once each. */
  for (size_t o = 0; o < g->n_output && !st; o++) {
    const char *name =
        is_empty(g->output[o]->name) ? NULL : onnx_resolve(ctx, g->output[o]->name);
    int inserted = 0;
    if (!name || !onnx_map_find(&made, name)) continue;
    if (!onnx_map_insert(&in_e, name, &inserted)) {
      st = oom();
      break;
    }
    if (!inserted) continue;
    onnx__value_info_proto__init(&vis[n_e]);
    vis[n_e].name = g->output[o]->name;
    vptr[n_e] = &vis[n_e];
    e_names[n_e++] = (char *)name;
  }
  /* Each branch: its nodes, Identity(branch output k) -> If output k, D. */
  Onnx__GraphProto sg[2];
  Onnx__AttributeProto at[2];
  Onnx__AttributeProto *atp[2] = {&at[0], &at[1]};
  for (int b = 0; b < 2 && !st && n_e; b++) {
    size_t nn = br[b]->n_node + np->n_output + n_d, at_node = 0;
    idn[b] = (Onnx__NodeProto *)calloc(np->n_output + 1, sizeof(Onnx__NodeProto));
    nodes[b] = (Onnx__NodeProto **)calloc(nn + 1, sizeof(Onnx__NodeProto *));
    if (!idn[b] || !nodes[b]) {
      st = oom();
      break;
    }
    for (size_t i = 0; i < br[b]->n_node; i++) nodes[b][at_node++] = br[b]->node[i];
    for (size_t k = 0; k < np->n_output && !st; k++) {
      if (is_empty(np->output[k])) continue;
      const char *bo = br[b]->output[k]->name;
      if (!is_empty(bo) && strcmp(bo, onp->output[k]) == 0) {
        st = dml_status_make(DML_STATUS_UNIMPLEMENTED, ONNX_ERR_OP,
                             "%s: %s output %zu is named '%s' like the If's output; "
                             "copying the nodes after the If into the branch needs "
                             "distinct names",
                             label, b ? "else_branch" : "then_branch", k, bo);
        break;
      }
      Onnx__NodeProto *c = &idn[b][k];
      onnx__node_proto__init(c);
      c->op_type = (char *)"Identity";
      c->n_input = 1;
      c->input = &br[b]->output[k]->name;
      c->n_output = 1;
      c->output = &onp->output[k];
      nodes[b][at_node++] = c;
    }
    for (size_t p = pos + 1; p < n; p++)
      if (in_d[fr->order[p]]) nodes[b][at_node++] = fr->orig->node[fr->order[p]];
    sg[b] = *br[b];
    sg[b].n_node = at_node;
    sg[b].node = nodes[b];
    sg[b].n_output = n_e;
    sg[b].output = vptr;
    sg[b].n_value_info = 0;
    onnx__attribute_proto__init(&at[b]);
    at[b].name = (char *)(b ? "else_branch" : "then_branch");
    at[b].has_type = 1;
    at[b].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
    at[b].g = &sg[b];
  }
  if (!st && n_e) {
    Onnx__NodeProto tail = *np;
    tail.n_output = n_e;
    tail.output = e_names;
    tail.n_attribute = 2;
    tail.attribute = atp;
    st = import_runtime_if(ctx, &tail, label, cond, &sg[0], &sg[1]);
  }
  for (size_t i = 0; i < n && !st; i++)
    if (in_d[i]) fr->done[i] = 1;
  onnx_map_free(&made);
  onnx_map_free(&need);
  onnx_map_free(&in_e);
  free(in_d);
  free(in_a);
  free(e_names);
  free(vis);
  free(vptr);
  for (int b = 0; b < 2; b++) {
    free(idn[b]);
    free(nodes[b]);
  }
  return st;
}

dml_status_t onnx_imp_if(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                         const onnx_op_entry_t *e, dml_ir_value_t **in, uint32_t n_in) {
  (void)e;
  char label[300];
  onnx_node_label(np, label, sizeof(label));
  if (n_in != 1 || !in[0])
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s takes 1 input (cond), got %u", label, n_in);
  const Onnx__GraphProto *then_g = branch_of(np, "then_branch");
  const Onnx__GraphProto *else_g = branch_of(np, "else_branch");
  if (!then_g || !else_g)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s has no %s graph attribute", label,
                           then_g ? "else_branch" : "then_branch");
  size_t n_out = np->n_output;
  if (then_g->n_output != n_out || else_g->n_output != n_out)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s has %zu outputs, but its then_branch has %zu and its "
                           "else_branch %zu",
                           label, n_out, then_g->n_output, else_g->n_output);
  int declared_shapes_differ = 0, declared_ranks_differ = 0;
  for (size_t k = 0; k < n_out; k++)
    DML_RETURN_IF_ERROR(check_pair(label, then_g->output[k], else_g->output[k], k,
                                   &declared_shapes_differ, &declared_ranks_differ));

  dml_ir_value_t *cond = in[0];
  int folded = 0, taken_folded = 0;
  folded = const_cond(cond, &taken_folded);
  if (!folded && cond->kind == DML_IR_VALUE_RESULT) {
    /* A cond that shape inference knows (Equal(Shape(x)[1], 512) with that
     * dim static, e.g. by dmlc compile --input-shape): only the taken branch. */
    if (cond->type.rank == DML_RANK_UNKNOWN) onnx_infer_pending(ctx);
    const dml_ir_sym_data_t *sd = cond->sym_data;
    if (sd && sd->n == 1 && sd->elems[0].sym < 0) {
      folded = 1;
      taken_folded = sd->elems[0].value != 0;
    }
  }
  if (folded) {
    /* A constant cond, or one computed from a constant by Identity / Not:
     * only the taken
     * branch, whose outputs may be sequences and optionals. */
    const Onnx__GraphProto *g = taken_folded ? then_g : else_g;
    const char *which = taken_folded ? "then_branch" : "else_branch";
    if (g->n_input)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                             "%s: %s has %zu inputs; If branches take none", label, which,
                             g->n_input);
    dml_ir_value_t **ov = (dml_ir_value_t **)calloc(n_out + 1, sizeof(*ov));
    onnx_seq_t **os = (onnx_seq_t **)calloc(n_out + 1, sizeof(*os));
    dml_status_t fst = !ov || !os ? oom() : DML_OK;
    if (!fst)
      fst = onnx_import_subgraph_seqs(ctx, label, which, g, 0, NULL, NULL, ov, os);
    for (size_t k = 0; k < n_out && !fst; k++) {
      if (is_empty(np->output[k])) continue;
      int none = onnx_opt_none_mark_kind(os[k]);
      if (none) {
        fst = onnx_opt_define_none(ctx, np->output[k], none);
      } else if (os[k]) {
        fst = onnx_seq_define_as(ctx, np->output[k], os[k]);
      } else {
        dml_ir_node_t *node = NULL;
        fst = onnx_emit(ctx, DML_OP_IDENTITY, np->name, 1, &ov[k], 1, &node);
        if (!fst) fst = bind_output(ctx, np->output[k], node->outputs[0]);
      }
    }
    free(ov);
    free(os);
    return fst;
  }
  if (!(cond->kind == DML_IR_VALUE_GLOBAL && cond->data))
    DML_RETURN_IF_ERROR(check_tensor_outputs(np, label));
  dml_ir_value_t **vals = (dml_ir_value_t **)calloc(2 * n_out + 1, sizeof(*vals));
  if (!vals) return oom();
  dml_status_t st = DML_OK;
  if (cond->kind == DML_IR_VALUE_GLOBAL && cond->data) {
    /* A constant cond: only the taken branch. */
    int64_t numel = dml_ir_type_numel_bound(ctx->m, &cond->type);
    if (numel != 1) {
      st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, ONNX_ERR_OP,
                           "%s: cond must hold one element; the constant '%s' holds %lld",
                           label, cond->name, (long long)numel);
      goto done;
    }
    int taken = dml_load_f64(cond->type.dtype, cond->data, 0) != 0;
    st = import_branch(ctx, label, taken ? "then_branch" : "else_branch",
                       taken ? then_g : else_g, vals);
    for (size_t k = 0; k < n_out && !st; k++) {
      if (is_empty(np->output[k])) continue;
      dml_ir_node_t *node = NULL;
      st = onnx_emit(ctx, DML_OP_IDENTITY, np->name, 1, &vals[k], 1, &node);
      if (!st) st = bind_output(ctx, np->output[k], node->outputs[0]);
    }
    goto done;
  }
  {
    dml_ir_node_t *mark = ctx->f->last;
    uint32_t n_fn = ctx->m->n_functions;
    size_t tail_nodes = ctx->tail_nodes;
    st = import_branch(ctx, label, "then_branch", then_g, vals);
    if (!st) st = import_branch(ctx, label, "else_branch", else_g, vals + n_out);
    if (st) goto done;
    const Onnx__NodeProto *rnd = find_random(then_g, ctx->opset);
    if (!rnd) rnd = find_random(else_g, ctx->opset);
    if (rnd || declared_shapes_differ || branches_differ(ctx, np, vals, n_out)) {
      /* Where cannot select (the shapes differ), or evaluating both
       * branches would draw random numbers in the untaken one: the
       * branches become functions, run at run time (the inline copies just
       * imported are dropped); with output ranks that differ, the nodes
       * after the If go into the branch functions too. */
      int ranks_differ = declared_ranks_differ;
      for (size_t k = 0; k < n_out && !ranks_differ; k++)
        ranks_differ = !is_empty(np->output[k]) &&
                       vals[k]->type.rank != DML_RANK_UNKNOWN &&
                       vals[n_out + k]->type.rank != DML_RANK_UNKNOWN &&
                       vals[k]->type.rank != vals[n_out + k]->type.rank;
      drop_after(ctx, mark, n_fn);
      ctx->tail_nodes = tail_nodes;
      st = ranks_differ ? import_tail_if(ctx, np, label, cond, then_g, else_g)
                        : import_runtime_if(ctx, np, label, cond, then_g, else_g);
      if (st && rnd) {
        char rl[300];
        st = dml_status_annotate(st,
                                 "%s draws random numbers, so the If runs only the "
                                 "taken branch, at run time",
                                 onnx_node_label(rnd, rl, sizeof rl));
      }
      goto done;
    }
  }
  if (cond->kind == DML_IR_VALUE_RESULT || cond->type.rank != 0) {
    /* Where broadcasts cond: make it a scalar (one element, else Reshape
     * fails). */
    dml_ir_value_t *ops[2] = {cond, NULL};
    dml_ir_node_t *node = NULL;
    const char *vname = NULL;
    st = onnx_const_i64(ctx, "if_cond_scalar_shape", NULL, 0, &ops[1]);
    if (!st) st = onnx_emit(ctx, DML_OP_RESHAPE, np->name, 2, ops, 1, &node);
    if (!st && !(vname = onnx_unique_name(ctx, "if_cond_scalar"))) st = oom();
    if (!st) st = bind_output(ctx, vname, node->outputs[0]);
    if (st) goto done;
    cond = node->outputs[0];
  }
  for (size_t k = 0; k < n_out && !st; k++) {
    if (is_empty(np->output[k])) continue;
    dml_ir_value_t *ops[3] = {cond, vals[k], vals[n_out + k]};
    dml_ir_node_t *node = NULL;
    st = onnx_emit(ctx, DML_OP_WHERE, np->name, 3, ops, 1, &node);
    if (!st) st = bind_output(ctx, np->output[k], node->outputs[0]);
  }
done:
  free(vals);
  return st;
}
