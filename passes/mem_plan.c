/*
 * mem_plan.c — static memory planning with liveness-based reuse.
 *
 * Every function gets one arena. Each argument and node result is given a
 * byte range [mem_offset, mem_offset + mem_bytes) in it, sized at the
 * symbols' upper bounds (ARCHITECTURE.md, decision 4) and aligned to
 * DML_MEM_ALIGN bytes. Globals live outside the arena (mem_offset -1).
 *
 * Liveness, with node i at step i of the function's order:
 *   - a node result is live from its node's step to the step of the last
 *     node that reads it (just its own step when nothing reads it: the
 *     kernel still writes it);
 *   - arguments are live for the whole function (written before the run);
 *   - function results are live until the end (read after the run).
 * Intervals are inclusive, so a node's outputs and its inputs are live at
 * the same step and never share bytes (kernels do not work in place), with
 * one exception: the result of a view op (DML_OPF_VIEW: Reshape, Flatten,
 * Squeeze, Unsqueeze, Identity) takes its input's bytes when both are in
 * the arena and have the same size. Values are immutable once written, so
 * the two share one buffer whose lifetime is the union of theirs, and the
 * runtime skips the copy. A view whose dims depend on its shape input's
 * values (data-dependent symbols) never shares: its kernel sets the dims.
 *
 * Fusion-aware liveness (o->fusion_aware, for packages with GPU targets):
 * the nodes of one fuse group (the `fuse` pass's fuse_group attribute,
 * passes/fuse.c) run as one GPU kernel. A kernel must not write a result
 * over a value it still reads at another element, so every value a group
 * reads from outside it stays live until the group's last node; otherwise
 * the scheduler would have to split the group (as it did for lenet5's
 * second Conv + Relu, whose Relu was planned over the Conv's input). The
 * groups are the scheduler's: it reads the same attribute. Without the
 * fuse pass (no attributes) the plan is the unfused one.
 *
 * A value whose dims use data-dependent symbols is planned at most at
 * dml_ir_value_max_elements() elements (the product of the dims' bounds can
 * be far larger); the kernel, or the executor, checks each run's actual
 * size against the planned bytes.
 *
 * Placement is "greedy by size" (as in TensorFlow Lite's arena planner and
 * Pisarchyk & Lee, "Efficient Memory Management for Deep Neural Net
 * Inference", 2020): values are placed largest first; each goes into the
 * smallest gap between the already placed values whose lifetimes overlap
 * its own (best fit), or after the last of them. The arena size is the
 * highest end offset; f->arena_bytes holds it and o->out_arena_bytes the
 * largest over functions.
 *
 * Errors (FAILED_PRECONDITION): a value whose type or size at the bounds is
 * unknown — run shape-infer first.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dml_ir_infer.h"
#include "dml_passes.h"

#define DML_MEM_ALIGN 64

typedef struct {
  dml_ir_value_t *v;
  int64_t first, last; /* live steps, inclusive */
  int64_t size;        /* aligned bytes */
  int64_t offset;
} buf_t;

static dml_status_t oom(void) {
  return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "pass:mem-plan", "out of memory");
}

static int cmp_by_size(const void *pa, const void *pb) {
  const buf_t *a = *(const buf_t *const *)pa, *b = *(const buf_t *const *)pb;
  if (a->size != b->size) return a->size > b->size ? -1 : 1;
  if (a->first != b->first) return a->first < b->first ? -1 : 1;
  return a->v->id < b->v->id ? -1 : a->v->id > b->v->id;
}

static int cmp_by_offset(const void *pa, const void *pb) {
  const buf_t *a = *(const buf_t *const *)pa, *b = *(const buf_t *const *)pb;
  if (a->offset != b->offset) return a->offset < b->offset ? -1 : 1;
  return a->size < b->size ? -1 : a->size > b->size;
}

static dml_status_t unknown_size(const dml_ir_function_t *f, const dml_ir_value_t *v) {
  char tb[160];
  dml_status_t s = dml_status_make(
      DML_STATUS_FAILED_PRECONDITION, "pass:mem-plan",
      "the size of a value of function '%s' is not known (run shape-infer first)",
      f->name);
  if (v->kind == DML_IR_VALUE_ARG)
    return dml_status_detail(s, "argument '%s' : %s", v->name ? v->name : "",
                             dml_ir_type_str(f->module, &v->type, tb, sizeof(tb)));
  return dml_status_detail(s, "result %u of node '%s' (%s) : %s", v->def_index,
                           v->def->name ? v->def->name : "", dml_op_name(v->def->op),
                           dml_ir_type_str(f->module, &v->type, tb, sizeof(tb)));
}

/* Records value `v` defined at step `first` in bufs[*n] and points v->user
 * at it. */
static dml_status_t add_buf(dml_ir_function_t *f, buf_t *bufs, size_t *n,
                            dml_ir_value_t *v, int64_t first) {
  int64_t bytes = dml_ir_type_bytes_bound(f->module, &v->type);
  int64_t cap = dml_ir_value_max_elements(f->module, v);
  if (cap >= 0) {
    int64_t es = (int64_t)dml_dtype_size(v->type.dtype);
    int64_t cb = es > 0 && cap <= INT64_MAX / es ? cap * es : INT64_MAX;
    if (bytes < 0 || bytes > cb) bytes = cb; /* overflowing bounds: the cap */
  }
  if (bytes < 0) return unknown_size(f, v);
  if (bytes > INT64_MAX - DML_MEM_ALIGN)
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "pass:mem-plan",
                           "value of %lld bytes is too large", (long long)bytes);
  buf_t *b = &bufs[(*n)++];
  b->v = v;
  b->first = first;
  b->last = first;
  b->size = (bytes + DML_MEM_ALIGN - 1) / DML_MEM_ALIGN * DML_MEM_ALIGN;
  b->offset = -1;
  v->mem_bytes = bytes;
  v->user = b;
  return DML_OK;
}

/* The buffer a view node's result can share: its input's, when the input
 * lives in the arena and has the same size. NULL otherwise. */
static buf_t *view_source(const dml_ir_node_t *n, int64_t bytes) {
  if (!(dml_op_info(n->op)->flags & DML_OPF_VIEW) || n->n_outputs != 1 || !n->n_inputs)
    return NULL;
  dml_ir_value_t *in = n->inputs[0];
  if (!in || in->kind == DML_IR_VALUE_GLOBAL || !in->user) return NULL;
  buf_t *b = (buf_t *)in->user;
  if (dml_ir_value_max_elements(n->func->module, n->outputs[0]) >= 0) return NULL;
  return b->v->mem_bytes == bytes ? b : NULL;
}

static void extend(dml_ir_value_t *v, int64_t step) {
  if (!v || v->kind == DML_IR_VALUE_GLOBAL || !v->user) return;
  buf_t *b = (buf_t *)v->user;
  if (step > b->last) b->last = step;
}

/* Per fuse group of f: the step of its last node (groups are numbered 0, 1,
 * ... in execution order). *out NULL when f has no group. */
static dml_status_t group_ends(const dml_ir_function_t *f, int64_t **out,
                               int64_t *n_out) {
  int64_t n = 0, step = 0;
  *out = NULL;
  *n_out = 0;
  for (const dml_ir_node_t *x = f->first; x; x = x->next) {
    int64_t g = dml_fuse_group_of(x);
    if (g >= n) n = g + 1;
  }
  if (!n) return DML_OK;
  int64_t *last = (int64_t *)calloc((size_t)n, sizeof(int64_t));
  if (!last) return oom();
  for (const dml_ir_node_t *x = f->first; x; x = x->next, step++) {
    int64_t g = dml_fuse_group_of(x);
    if (g >= 0) last[g] = step;
  }
  *out = last;
  *n_out = n;
  return DML_OK;
}

/* Keeps the values node `n` of fuse group `g` reads from outside the group
 * live until the group's last step. */
static void extend_group_reads(const dml_ir_node_t *n, int64_t g, int64_t last) {
  for (uint32_t k = 0; k < n->n_inputs; k++) {
    const dml_ir_value_t *x = n->inputs[k];
    if (!x || (x->kind == DML_IR_VALUE_RESULT && dml_fuse_group_of(x->def) == g))
      continue;
    extend((dml_ir_value_t *)x, last);
  }
}

static dml_status_t plan_function(dml_ir_function_t *f, int fusion_aware,
                                  int64_t *out_arena) {
  size_t count = f->n_args;
  int64_t n_steps = 0;
  for (dml_ir_node_t *n = f->first; n; n = n->next, n_steps++) count += n->n_outputs;
  buf_t *bufs = (buf_t *)calloc(count + 1, sizeof(buf_t));
  buf_t **order = (buf_t **)calloc(count + 1, sizeof(buf_t *));
  int64_t *glast = NULL, n_groups = 0;
  buf_t **live = (buf_t **)calloc(count + 1, sizeof(buf_t *));
  dml_ir_value_t **aliases =
      (dml_ir_value_t **)calloc(count + 1, sizeof(dml_ir_value_t *));
  size_t nb = 0, n_alias = 0;
  dml_status_t s = DML_OK;
  if (!bufs || !order || !live || !aliases) {
    s = oom();
    goto free_bufs;
  }
  if (fusion_aware) {
    s = group_ends(f, &glast, &n_groups);
    if (s) goto free_bufs;
  }

  /* ---- liveness ---- */
  for (uint32_t i = 0; i < f->n_args; i++) f->args[i]->user = NULL;
  for (dml_ir_node_t *n = f->first; n; n = n->next)
    for (uint32_t i = 0; i < n->n_outputs; i++) n->outputs[i]->user = NULL;
  for (uint32_t i = 0; i < f->n_args; i++) {
    if (f->args[i]->user) continue; /* listed twice */
    s = add_buf(f, bufs, &nb, f->args[i], -1);
    if (s) goto clear_user;
    ((buf_t *)f->args[i]->user)->last = n_steps;
  }
  int64_t step = 0;
  for (dml_ir_node_t *n = f->first; n; n = n->next, step++) {
    for (uint32_t i = 0; i < n->n_inputs; i++) extend(n->inputs[i], step);
    int64_t g = glast ? dml_fuse_group_of(n) : -1;
    if (g >= 0 && g < n_groups) extend_group_reads(n, g, glast[g]);
    buf_t *src =
        n->n_outputs == 1
            ? view_source(n, dml_ir_type_bytes_bound(f->module, &n->outputs[0]->type))
            : NULL;
    if (src) { /* shares its input's buffer; offset assigned after placement */
      n->outputs[0]->user = src;
      n->outputs[0]->mem_bytes = src->v->mem_bytes;
      aliases[n_alias++] = n->outputs[0];
      continue;
    }
    for (uint32_t i = 0; i < n->n_outputs; i++) {
      s = add_buf(f, bufs, &nb, n->outputs[i], step);
      if (s) goto clear_user;
    }
  }
  for (uint32_t i = 0; i < f->n_results; i++) extend(f->results[i], n_steps);

  /* ---- placement: largest first, best fit among overlapping lifetimes ---- */
  for (size_t i = 0; i < nb; i++) order[i] = &bufs[i];
  qsort(order, nb, sizeof(*order), cmp_by_size);
  int64_t arena = 0;
  for (size_t i = 0; i < nb; i++) {
    buf_t *b = order[i];
    size_t nl = 0;
    for (size_t j = 0; j < i; j++) {
      buf_t *p = order[j];
      if (p->size > 0 && p->first <= b->last && b->first <= p->last) live[nl++] = p;
    }
    qsort(live, nl, sizeof(*live), cmp_by_offset);
    int64_t best = -1, best_gap = INT64_MAX, cursor = 0;
    for (size_t j = 0; j < nl; j++) {
      int64_t gap = live[j]->offset - cursor;
      if (gap >= b->size && gap < best_gap) {
        best = cursor;
        best_gap = gap;
      }
      int64_t end = live[j]->offset + live[j]->size;
      if (end > cursor) cursor = end;
    }
    b->offset = best >= 0 ? best : cursor;
    if (b->offset > INT64_MAX - b->size) {
      s = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "pass:mem-plan",
                          "arena of function '%s' overflows", f->name);
      goto clear_user;
    }
    if (b->offset + b->size > arena) arena = b->offset + b->size;
  }
  for (size_t i = 0; i < nb; i++) bufs[i].v->mem_offset = bufs[i].offset;
  for (size_t i = 0; i < n_alias; i++)
    aliases[i]->mem_offset = ((buf_t *)aliases[i]->user)->offset;
  f->arena_bytes = arena;
  *out_arena = arena;

clear_user:
  for (size_t i = 0; i < nb; i++) bufs[i].v->user = NULL;
  for (size_t i = 0; i < n_alias; i++) aliases[i]->user = NULL;
free_bufs:
  free(glast);
  free(bufs);
  free(order);
  free(live);
  free(aliases);
  return s;
}

dml_status_t dml_pass_mem_plan(dml_ir_module_t *m, dml_pass_options_t *o) {
  int64_t most = 0;
  for (uint32_t i = 0; i < m->n_globals; i++) {
    m->globals[i]->mem_offset = -1;
    m->globals[i]->mem_bytes = -1;
  }
  for (uint32_t i = 0; i < m->n_functions; i++) {
    int64_t a = 0;
    DML_RETURN_IF_ERROR(plan_function(m->functions[i], o && o->fusion_aware, &a));
    if (a > most) most = a;
  }
  if (o) o->out_arena_bytes = most;
  return DML_OK;
}
