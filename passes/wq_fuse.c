/*
 * wq_fuse.c — weight-only quantized MatMul / Gemm to MatMulWQ (issue 19
 * part 4).
 *
 * A weight-only quantized model (dmlc quantize --weight-only, ONNX
 * Runtime's and other tools' blocked DequantizeLinear) computes
 *
 *   DequantizeLinear(W_q, scale [, zero_point]) -> MatMul(a, .) | Gemm(a, .)
 *
 * with W_q, scale and zero point constant. This pass rewrites each into one
 * MatMulWQ(a, w, scale [, zero_point]) (ops.def; layouts in dml_wq.h), whose
 * CPU kernel dequantizes a group of weights at a time in the GEMM's load
 * stage (runtime/cpu/cpu_wq_gemm.c) instead of an f32 copy of the weight.
 * The weight is rewritten once per DequantizeLinear (and orientation) into
 * MatMulWQ's layout (dml_wq.h): B [K, N] (Gemm's transB=1 weight
 * transposed) in panels of 32 columns, the groups along K; 4 bits a value
 * (two per byte) whenever every value fits a nibble (q in [-8, 7] for i8;
 * q in [0, 15] with zero points in [0, 135] for u8, stored as q and
 * z - 8), else one byte. The package then holds int4
 * weights at 4 bits (the importer widens ONNX INT4 to i8).
 *
 * Matched: MatMul with a f32 [..., K] and the DequantizeLinear's output as
 * B ([K, N]); Gemm with transA = 0, alpha = 1 and (with C) beta = 1 (C then
 * added by an Add after: alpha*A*B + beta*C with alpha = beta = 1). The
 * DequantizeLinear may be blocked along K (opset 21's block_size), per
 * output column (axis N) or per tensor (one group of K). Anything else
 * keeps its form: a weight or scale that is not constant, other ranks, a
 * block along N, f16 activations. The values are DequantizeLinear's
 * ((q - z) * scale in f32), the sum order the kernel's (within f32
 * rounding of the dequantize-then-MatMul form). Runs after shape-infer
 * (types) and before const-fold (which would fold the DequantizeLinear into
 * an f32 weight). DMLC_NO_WQ_FUSE=1 in the environment turns it off (A/B
 * comparisons). Packages with GPU targets take it too: MatMulWQ has a
 * GPU form (codegen/schedule_wq.c).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_passes.h"
#include "dml_wq.h"

/* A global constant with data and a static shape; NULL otherwise. */
static const dml_ir_value_t *cst(const dml_ir_value_t *v) {
  if (!v || v->kind != DML_IR_VALUE_GLOBAL || !v->data ||
      (v->global_flags & DML_IR_GLOBAL_STATE) || !dml_type_is_static(&v->type))
    return NULL;
  return v;
}

static int64_t numel(const dml_type_t *t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->rank; i++) n *= t->dims[i].value;
  return n;
}

static int64_t attr_i(const dml_ir_node_t *n, const char *name, int64_t dflt) {
  const dml_attr_t *a = dml_ir_node_attr(n, name);
  return a ? a->i : dflt;
}
static double attr_f(const dml_ir_node_t *n, const char *name, double dflt) {
  const dml_attr_t *a = dml_ir_node_attr(n, name);
  return a ? a->f : dflt;
}

/* The rewritten weight of one DequantizeLinear in one orientation. */
typedef struct {
  const dml_ir_node_t *dq;
  int trans;
  dml_ir_value_t *w, *s, *z; /* z may be NULL */
  int64_t bits, bs;
} wq_entry_t;

typedef struct {
  wq_entry_t *e;
  size_t n, cap;
} wq_cache_t;

/* The quantization of DequantizeLinear `dq` read as B [K, N] (trans: its
 * weight is [N, K]): group size along K and the parameter index of (g, n). */
typedef struct {
  const dml_ir_value_t *wq, *sc, *zp;
  int64_t K, N, G, bs;
  int trans;
  int mode; /* 0 blocked along K, 1 per column, 2 per tensor */
} wq_src_t;

static int64_t src_q(const wq_src_t *q, int64_t k, int64_t n) {
  size_t i = (size_t)(q->trans ? n * q->K + k : k * q->N + n);
  return q->wq->type.dtype == DML_DTYPE_I8 ? (int64_t)((const int8_t *)q->wq->data)[i]
                                           : (int64_t)((const uint8_t *)q->wq->data)[i];
}
static size_t src_pi(const wq_src_t *q, int64_t g, int64_t n) {
  if (q->mode == 2) return 0;
  if (q->mode == 1) return (size_t)n;
  return (size_t)(q->trans ? n * q->G + g : g * q->N + n);
}
static int64_t src_z(const wq_src_t *q, int64_t g, int64_t n) {
  if (!q->zp) return 0;
  size_t i = src_pi(q, g, n);
  return q->zp->type.dtype == DML_DTYPE_I8 ? (int64_t)((const int8_t *)q->zp->data)[i]
                                           : (int64_t)((const uint8_t *)q->zp->data)[i];
}

/* Reads DequantizeLinear `dq` as B [K, N]; 0 when it is not of a handled
 * form. */
static int read_src(const dml_ir_node_t *dq, int trans, wq_src_t *q) {
  memset(q, 0, sizeof *q);
  if (dq->n_inputs < 2) return 0;
  q->wq = cst(dq->inputs[0]);
  q->sc = cst(dq->inputs[1]);
  q->zp = dq->n_inputs > 2 && dq->inputs[2] ? cst(dq->inputs[2]) : NULL;
  if (!q->wq || !q->sc || (dq->n_inputs > 2 && dq->inputs[2] && !q->zp)) return 0;
  dml_dtype_t dt = q->wq->type.dtype;
  if ((dt != DML_DTYPE_I8 && dt != DML_DTYPE_U8) || q->wq->type.rank != 2 ||
      q->sc->type.dtype != DML_DTYPE_F32 || (q->zp && q->zp->type.dtype != dt))
    return 0;
  if (q->zp) { /* the scale's shape */
    if (q->zp->type.rank != q->sc->type.rank) return 0;
    for (int32_t i = 0; i < q->sc->type.rank; i++)
      if (q->zp->type.dims[i].value != q->sc->type.dims[i].value) return 0;
  }
  q->trans = trans;
  int kax = trans ? 1 : 0;
  q->K = q->wq->type.dims[kax].value;
  q->N = q->wq->type.dims[1 - kax].value;
  if (q->K < 1 || q->N < 1) return 0;
  int64_t bs = attr_i(dq, "block_size", 0), axis = attr_i(dq, "axis", 1);
  if (axis < 0) axis += 2;
  const dml_type_t *st = &q->sc->type;
  if (bs > 0) {
    int64_t G = dml_wq_groups(q->K, bs);
    if (axis != kax || st->rank != 2 || st->dims[kax].value != G ||
        st->dims[1 - kax].value != q->N)
      return 0;
    q->mode = 0, q->bs = bs, q->G = G;
  } else if (bs == 0 && numel(st) == 1 && st->rank <= 1) {
    q->mode = 2, q->bs = q->K, q->G = 1;
  } else if (bs == 0 && st->rank == 1 && st->dims[0].value == q->N && axis == 1 - kax) {
    q->mode = 1, q->bs = q->K, q->G = 1;
  } else {
    return 0;
  }
  return 1;
}

static dml_status_t add_const(dml_ir_module_t *m, const dml_ir_value_t *src,
                              const char *suffix, dml_dtype_t dt, int64_t d0, int64_t d1,
                              const void *data, size_t bytes, dml_ir_value_t **out) {
  char prefix[160];
  snprintf(prefix, sizeof prefix, "%.120s%s", src->name ? src->name : "w", suffix);
  int64_t dims[2] = {d0, d1};
  dml_type_t t = dml_type_static(dt, 2, dims);
  return dml_ir_module_add_constant(m, prefix, &t, data, bytes, out);
}

/* Writes MatMulWQ's weight, scale and zero point for q (dml_wq.h). */
static dml_status_t build(dml_ir_module_t *m, const wq_src_t *q, wq_entry_t *e) {
  const int64_t K = q->K, N = q->N, G = q->G;
  const int sgn = q->wq->type.dtype == DML_DTYPE_I8;
  /* 4 bits when every value fits a nibble (u = q + 8 for i8, u = q with
   * zero point z - 8 for u8). */
  int four = 1;
  for (int64_t k = 0; four && k < K; k++)
    for (int64_t n = 0; four && n < N; n++) {
      int64_t v = src_q(q, k, n);
      four = sgn ? v >= -8 && v <= 7 : v >= 0 && v <= 15;
    }
  if (four && !sgn)
    for (int64_t g = 0; four && g < G; g++)
      for (int64_t n = 0; four && n < N; n++) four = src_z(q, g, n) <= 135;
  int need_z = q->zp || (four && !sgn);
  size_t pn = (size_t)(G * N);
  float *s = malloc(pn * sizeof(float));
  uint8_t *z = need_z ? malloc(pn) : NULL;
  const int bits = four ? 4 : 8;
  const int64_t P = dml_wq_panels(N), wbytes = P * K * DML_WQ_ROW_BYTES(bits);
  uint8_t *w = calloc((size_t)wbytes, 1);
  dml_status_t st = DML_OK;
  if (!s || (need_z && !z) || !w) {
    st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "wq-fuse", "out of memory");
    goto out;
  }
  for (int64_t g = 0; g < G; g++)
    for (int64_t n = 0; n < N; n++) {
      size_t pi = src_pi(q, g, n), o = (size_t)(g * N + n);
      s[o] = ((const float *)q->sc->data)[pi];
      if (z) {
        int64_t zv = src_z(q, g, n) - (four && !sgn ? 8 : 0);
        z[o] = (uint8_t)(sgn || four ? (uint8_t)(int8_t)zv : (uint8_t)zv);
      }
    }
  /* dml_wq.h: panels of 32 columns; the last panel's columns past N hold
   * q = 0 (nibble 8; byte 0 from calloc). */
  for (int64_t k = 0; k < K; k++)
    for (int64_t n = 0; n < P * DML_WQ_PANEL; n++) {
      uint8_t *b = w + dml_wq_offset(K, bits, k, n);
      if (four)
        *b |=
            (uint8_t)((n < N ? src_q(q, k, n) + (sgn ? 8 : 0) : 8) << dml_wq_shift(4, n));
      else if (n < N)
        *b = (uint8_t)src_q(q, k, n);
    }
  e->bits = four ? 4 : 8;
  e->bs = q->bs;
  {
    int64_t wd[3] = {P, K, DML_WQ_ROW_BYTES(bits)};
    dml_type_t wt = dml_type_static(four ? DML_DTYPE_U8 : q->wq->type.dtype, 3, wd);
    char prefix[160];
    snprintf(prefix, sizeof prefix, "%.120s%s", q->wq->name ? q->wq->name : "w",
             four ? "_w4_" : "_w8_");
    st = dml_ir_module_add_constant(m, prefix, &wt, w, (size_t)wbytes, &e->w);
  }
  if (!st)
    st = add_const(m, q->wq, "_wscale_", DML_DTYPE_F32, G, N, s, pn * sizeof(float),
                   &e->s);
  e->z = NULL;
  if (!st && z)
    st = add_const(m, q->wq, "_wzp_", four ? DML_DTYPE_I8 : q->wq->type.dtype, G, N, z,
                   pn, &e->z);
out:
  free(s);
  free(z);
  free(w);
  return st;
}

static dml_status_t fuse_one(dml_ir_module_t *m, dml_ir_function_t *f, dml_ir_node_t *n,
                             wq_cache_t *cache) {
  int gemm = n->op == DML_OP_GEMM;
  if (n->n_inputs < 2 || n->n_outputs != 1) return DML_OK;
  dml_ir_value_t *a = n->inputs[0], *b = n->inputs[1];
  dml_ir_value_t *cv = gemm && n->n_inputs > 2 ? n->inputs[2] : NULL;
  dml_ir_value_t *y = n->outputs[0];
  if (!a || !b || b->kind != DML_IR_VALUE_RESULT || !b->def ||
      b->def->op != DML_OP_DEQUANTIZE_LINEAR)
    return DML_OK;
  if (a->type.dtype != DML_DTYPE_F32 || a->type.rank == DML_RANK_UNKNOWN ||
      a->type.rank < 1 || y->type.dtype != DML_DTYPE_F32 ||
      y->type.rank == DML_RANK_UNKNOWN)
    return DML_OK;
  int trans = 0;
  if (gemm) {
    if (a->type.rank != 2 || attr_i(n, "transA", 0) != 0 ||
        attr_f(n, "alpha", 1.0) != 1.0 ||
        (cv && (attr_f(n, "beta", 1.0) != 1.0 || cv->type.dtype != DML_DTYPE_F32)))
      return DML_OK;
    trans = attr_i(n, "transB", 0) != 0;
  }
  const dml_ir_node_t *dq = b->def;
  wq_entry_t *e = NULL;
  for (size_t i = 0; i < cache->n; i++)
    if (cache->e[i].dq == dq && cache->e[i].trans == trans) e = &cache->e[i];
  if (!e) {
    wq_src_t q;
    if (!read_src(dq, trans, &q)) return DML_OK;
    if (cache->n == cache->cap) {
      size_t cap = cache->cap ? cache->cap * 2 : 16;
      wq_entry_t *ne = realloc(cache->e, cap * sizeof *ne);
      if (!ne)
        return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "wq-fuse", "out of memory");
      cache->e = ne, cache->cap = cap;
    }
    e = &cache->e[cache->n];
    memset(e, 0, sizeof *e);
    e->dq = dq, e->trans = trans;
    DML_RETURN_IF_ERROR(build(m, &q, e));
    cache->n++;
  }
  /* K of a must be the weight's (shape-infer checked the MatMul). */
  dml_ir_value_t *ins[4] = {a, e->w, e->s, e->z};
  dml_ir_node_t *mm;
  DML_RETURN_IF_ERROR(
      dml_ir_node_create(f, DML_OP_MAT_MUL_WQ, n->name, e->z ? 4 : 3, ins, 1, n, &mm));
  DML_RETURN_IF_ERROR(dml_ir_node_set_attr_int(mm, "bits", e->bits));
  DML_RETURN_IF_ERROR(dml_ir_node_set_attr_int(mm, "block_size", e->bs));
  dml_ir_value_t *out = mm->outputs[0];
  out->type = y->type; /* Gemm's C broadcasts to [M, N]: the same type */
  if (cv) {
    dml_ir_value_t *ain[2] = {out, cv};
    dml_ir_node_t *add;
    DML_RETURN_IF_ERROR(dml_ir_node_create(f, DML_OP_ADD, NULL, 2, ain, 1, n, &add));
    out = add->outputs[0];
  }
  out->type = y->type;
  out->name = y->name;
  dml_ir_value_replace_all_uses(f, y, out);
  dml_ir_node_erase(n);
  return DML_OK;
}

dml_status_t dml_pass_wq_fuse(dml_ir_module_t *m, dml_pass_options_t *o) {
  (void)o;
  if (getenv("DMLC_NO_WQ_FUSE")) return DML_OK;
  wq_cache_t cache = {NULL, 0, 0};
  dml_status_t st = DML_OK;
  for (uint32_t i = 0; i < m->n_functions && !st; i++) {
    dml_ir_function_t *f = m->functions[i];
    for (dml_ir_node_t *n = f->first; n && !st;) {
      dml_ir_node_t *next = n->next;
      if (n->op == DML_OP_MATMUL || n->op == DML_OP_GEMM) st = fuse_one(m, f, n, &cache);
      n = next;
    }
  }
  free(cache.e);
  return st;
}
