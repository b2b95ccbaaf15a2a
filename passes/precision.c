/*
 * precision.c — the precision pass (dmlc compile --precision f16|bf16):
 * stores the GPU-capable part of every function in a 16-bit float dtype H
 * (f16 or bf16, dml_pass_options_t.precision; no-op when unset or f32).
 *
 * Which ops take H comes from the op table (runtime/base/ops.def, flags
 * DML_OPF_HALF and DML_OPF_HALF_SEED, dml_ops.h): a node is converted when
 * its op is HALF_SEED (Gemm, MatMul, Conv) and it has an f32 input, or its op is
 * HALF and one of its float inputs is a value this pass made H. A converted
 * node's f32 inputs become H: constant weights are stored converted (a new
 * global of the same name and flags; the f32 one is renamed "<name>.f32"
 * and dropped when nothing reads it any more, so the package's weights
 * halve), other values through a Cast inserted before their first such
 * reader. Its f32 results become H (shape inference, ir/infer.c, re-run on
 * the node). Every other node (Softmax, GroupNormalization, reductions,
 * losses, ConvTranspose, ...) keeps f32: an H input made here is cast back
 * to f32. Function arguments and results keep their dtypes (Casts at the
 * edges), so callers feed and read f32.
 *
 * Edges: a constant that H cannot hold stops its node's conversion (the
 * node stays f32): a finite value beyond H's range (f16: |x| > 65504,
 * rounding to inf), and, for elementwise constants (not a GEMM's weights),
 * a nonzero that H flushes to zero (an epsilon such as 1e-12). NaN, ±inf
 * and -0 convert to themselves. Values the model itself declares f16/bf16
 * are left alone (only values made here count as H).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "dml_ir_infer.h"
#include "dml_passes.h"

typedef struct prec_cache {
  dml_ir_value_t *half_global; /* module-wide: the H copy of a constant global */
  dml_ir_value_t *half;        /* this function's Cast of the value to H */
  dml_ir_value_t *full;        /* this function's Cast of an H value back to f32 */
  int made_half;               /* 1: a value this pass made H */
  int written;                 /* a global some Assign node writes */
  int fit[2]; /* constants: 0 unknown, 1 fits, -1 not (elementwise, seed) */
} prec_cache_t;

typedef struct prec {
  dml_ir_module_t *m;
  dml_dtype_t h;
} prec_t;

static prec_cache_t *cache_of(prec_t *p, dml_ir_value_t *v) {
  if (!v->user) v->user = dml_ir_alloc(p->m, sizeof(prec_cache_t));
  return (prec_cache_t *)v->user;
}

static uint16_t to_half(dml_dtype_t h, float x) {
  return h == DML_DTYPE_F16 ? dml_f32_to_f16(x) : dml_f32_to_bf16(x);
}

static float from_half(dml_dtype_t h, uint16_t x) {
  return h == DML_DTYPE_F16 ? dml_f16_to_f32(x) : dml_bf16_to_f32(x);
}

/* A global with f32 data that no node changes: weights, and state globals
 * (BatchNormalization's running statistics) that no Assign writes, as in
 * every inference package (training packages keep f32). */
static int is_const(const dml_ir_value_t *v) {
  const prec_cache_t *c = (const prec_cache_t *)v->user;
  return v->kind == DML_IR_VALUE_GLOBAL && v->data &&
         (!(v->global_flags & DML_IR_GLOBAL_STATE) || (c && !c->written)) &&
         v->type.dtype == DML_DTYPE_F32 && v->data_bytes % sizeof(float) == 0;
}

/* 1 when H holds every element of constant `v` (see the header: finite
 * stays finite; for elementwise constants, nonzero stays nonzero). */
static int const_fits(prec_t *p, dml_ir_value_t *v, int seed) {
  prec_cache_t *c = cache_of(p, v);
  if (c->fit[seed]) return c->fit[seed] > 0;
  const float *x = (const float *)v->data;
  size_t n = v->data_bytes / sizeof(float);
  int ok = 1;
  for (size_t i = 0; i < n && ok; i++) {
    float y = from_half(p->h, to_half(p->h, x[i]));
    if (isfinite(x[i]) && !isfinite(y)) ok = 0;
    if (!seed && x[i] != 0.0f && y == 0.0f) ok = 0;
  }
  c->fit[seed] = ok ? 1 : -1;
  return ok;
}

/* A Cast of `v` to dtype `to` inserted before `before` (NULL: at the end). */
static dml_status_t make_cast(prec_t *p, dml_ir_function_t *f, dml_ir_value_t *v,
                              dml_dtype_t to, dml_ir_node_t *before,
                              dml_ir_value_t **out) {
  dml_ir_node_t *c = NULL;
  DML_RETURN_IF_ERROR(dml_ir_node_create(f, DML_OP_CAST, NULL, 1, &v, 1, before, &c));
  DML_RETURN_IF_ERROR(dml_ir_node_set_attr_int(c, "to", dml_dtype_onnx_code(to)));
  DML_RETURN_IF_ERROR(dml_ir_infer_node(p->m, c));
  *out = c->outputs[0];
  return DML_OK;
}

/* The H form of f32 value `v` for a reader placed at `before`. */
static dml_status_t half_of(prec_t *p, dml_ir_function_t *f, dml_ir_value_t *v,
                            dml_ir_node_t *before, dml_ir_value_t **out) {
  prec_cache_t *c = cache_of(p, v);
  if (is_const(v)) {
    if (!c->half_global) {
      size_t n = v->data_bytes / sizeof(float);
      uint16_t *h = (uint16_t *)dml_ir_alloc(p->m, n ? n * sizeof(uint16_t) : 1);
      if (!h)
        return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "precision",
                               "out of memory converting '%s'", v->name);
      const float *x = (const float *)v->data;
      for (size_t i = 0; i < n; i++) h[i] = to_half(p->h, x[i]);
      const char *name = v->name;
      size_t len = strlen(name);
      char *old = (char *)dml_ir_alloc(p->m, len + 5);
      if (!old)
        return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "precision",
                               "out of memory converting '%s'", v->name);
      memcpy(old, name, len);
      memcpy(old + len, ".f32", 5);
      v->name = old;
      dml_type_t t = v->type;
      t.dtype = p->h;
      dml_ir_value_t *g = NULL;
      dml_status_t s = dml_ir_module_add_global(p->m, name, &t, h, n * sizeof(uint16_t),
                                                v->global_flags, &g);
      if (s) return dml_status_annotate(s, "converting weight '%s'", name);
      cache_of(p, g)->made_half = 1;
      c->half_global = g;
    }
    *out = c->half_global;
    return DML_OK;
  }
  if (!c->half) {
    DML_RETURN_IF_ERROR(make_cast(p, f, v, p->h, before, &c->half));
    cache_of(p, c->half)->made_half = 1;
  }
  *out = c->half;
  return DML_OK;
}

/* The f32 form of H value `v` (made here) for a reader placed at `before`. */
static dml_status_t full_of(prec_t *p, dml_ir_function_t *f, dml_ir_value_t *v,
                            dml_ir_node_t *before, dml_ir_value_t **out) {
  prec_cache_t *c = cache_of(p, v);
  if (!c->full) DML_RETURN_IF_ERROR(make_cast(p, f, v, DML_DTYPE_F32, before, &c->full));
  *out = c->full;
  return DML_OK;
}

static int made_half(const dml_ir_value_t *v) {
  return v && v->user && ((const prec_cache_t *)v->user)->made_half;
}

/* 1 when node `n` is to run in H (the header's rule). */
static int converts(prec_t *p, dml_ir_node_t *n) {
  uint32_t fl = dml_op_info(n->op)->flags;
  if (!(fl & DML_OPF_HALF)) return 0;
  int seed = (fl & DML_OPF_HALF_SEED) != 0, any_half = 0, any_f32 = 0;
  for (uint32_t i = 0; i < n->n_inputs; i++) {
    dml_ir_value_t *v = n->inputs[i];
    if (!v) continue;
    if (made_half(v))
      any_half = 1;
    else if (v->type.dtype == DML_DTYPE_F32) {
      any_f32 = 1;
      if (is_const(v) && !const_fits(p, v, seed)) return 0;
    }
  }
  return any_half || (seed && any_f32);
}

static dml_status_t convert_function(prec_t *p, dml_ir_function_t *f) {
  /* function-local caches: the Casts of this function only */
  for (uint32_t i = 0; i < p->m->n_globals; i++)
    if (p->m->globals[i]->user) {
      prec_cache_t *c = (prec_cache_t *)p->m->globals[i]->user;
      c->half = c->full = NULL;
    }
  for (dml_ir_node_t *n = f->first; n; n = n->next) {
    int conv = converts(p, n);
    for (uint32_t i = 0; i < n->n_inputs; i++) {
      dml_ir_value_t *v = n->inputs[i], *r = NULL;
      if (!v) continue;
      if (conv && !made_half(v) && v->type.dtype == DML_DTYPE_F32)
        DML_RETURN_IF_ERROR(half_of(p, f, v, n, &r));
      else if (!conv && made_half(v))
        DML_RETURN_IF_ERROR(full_of(p, f, v, n, &r));
      if (r) n->inputs[i] = r;
    }
    if (!conv) continue;
    dml_dtype_t was[8];
    for (uint32_t i = 0; i < n->n_outputs && i < 8; i++)
      was[i] = n->outputs[i]->type.dtype;
    dml_status_t s = dml_ir_infer_node(p->m, n);
    if (s)
      return dml_status_detail(
          dml_status_annotate(s, "precision: node '%s' (%s) in %s",
                              n->name ? n->name : "", dml_op_info(n->op)->name,
                              dml_dtype_name(p->h)),
          "the op is flagged DML_OPF_HALF in ops.def but its shape rule refuses %s",
          dml_dtype_name(p->h));
    for (uint32_t i = 0; i < n->n_outputs; i++) {
      dml_ir_value_t *y = n->outputs[i];
      if (i < 8 && was[i] == DML_DTYPE_F32 && y->type.dtype == p->h)
        cache_of(p, y)->made_half = 1;
    }
  }
  /* results keep their dtype and name */
  for (uint32_t i = 0; i < f->n_results; i++) {
    dml_ir_value_t *r = f->results[i], *full = NULL;
    if (!made_half(r) || r->kind == DML_IR_VALUE_GLOBAL) continue;
    DML_RETURN_IF_ERROR(full_of(p, f, r, NULL, &full));
    if (r->name && full->name != r->name) {
      size_t len = strlen(r->name);
      char *nm = (char *)dml_ir_alloc(p->m, len + 6);
      if (!nm)
        return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "precision",
                               "out of memory");
      memcpy(nm, r->name, len);
      memcpy(nm + len, ".half", 6);
      full->name = r->name;
      r->name = nm;
    }
    f->results[i] = full;
  }
  return DML_OK;
}

dml_status_t dml_pass_precision(dml_ir_module_t *m, dml_pass_options_t *o) {
  if (!o || (o->precision != DML_DTYPE_F16 && o->precision != DML_DTYPE_BF16))
    return DML_OK;
  prec_t p = {m, o->precision};
  for (uint32_t i = 0; i < m->n_globals; i++) m->globals[i]->user = NULL;
  /* every global gets its cache (is_const reads `written`) */
  for (uint32_t i = 0; i < m->n_globals; i++) cache_of(&p, m->globals[i]);
  for (uint32_t fi = 0; fi < m->n_functions; fi++)
    for (dml_ir_node_t *n = m->functions[fi]->first; n; n = n->next)
      if (n->op == DML_OP_ASSIGN && n->n_inputs && n->inputs[0] &&
          n->inputs[0]->kind == DML_IR_VALUE_GLOBAL && n->inputs[0]->user)
        ((prec_cache_t *)n->inputs[0]->user)->written = 1;
  dml_status_t s = DML_OK;
  for (uint32_t fi = 0; fi < m->n_functions && !s; fi++) {
    dml_ir_function_t *f = m->functions[fi];
    for (uint32_t i = 0; i < f->n_args; i++) f->args[i]->user = NULL;
    for (dml_ir_node_t *n = f->first; n; n = n->next)
      for (uint32_t i = 0; i < n->n_outputs; i++) n->outputs[i]->user = NULL;
    s = convert_function(&p, f);
  }
  /* the f32 originals of converted weights go when nothing reads them */
  for (uint32_t i = 0; i < m->n_globals; i++) {
    dml_ir_value_t *g = m->globals[i];
    if (g->user && ((prec_cache_t *)g->user)->half_global)
      g->global_flags &= ~(uint32_t)(DML_IR_GLOBAL_PARAM | DML_IR_GLOBAL_STATE);
  }
  for (uint32_t fi = 0; fi < m->n_functions; fi++) {
    dml_ir_function_t *f = m->functions[fi];
    for (uint32_t i = 0; i < f->n_args; i++) f->args[i]->user = NULL;
    for (dml_ir_node_t *n = f->first; n; n = n->next)
      for (uint32_t i = 0; i < n->n_outputs; i++) n->outputs[i]->user = NULL;
  }
  dml_ir_module_drop_unused_globals(m);
  return s;
}
