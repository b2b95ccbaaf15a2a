/* schedule_math.c — the scheduler's per-node arithmetic forms
 * (schedule_internal.h): normalizations over windows, small linear algebra
 * and the training-preview optimizers, each one kernel per node and one
 * invocation per output element, following the CPU reference
 * (runtime/cpu/):
 *
 *   - LRN (across channels) and MeanVarianceNormalization (over `axes`,
 *     mean then the mean squared deviation, two loops, both of x - x0, x0
 *     the box's first element; f32 sums where the CPU sums in double;
 *     boxes longer than 256 by a workgroup each);
 *   - Det of [*, M, M] with a static M <= 4 by cofactor expansion (the CPU
 *     uses LU with partial pivoting in double: the same value up to f32
 *     rounding);
 *   - Einsum (dml_einsum_parse: explicit or implicit output, ellipsis,
 *     diagonals, broadcasting of size-1 dims): per output element a loop
 *     nest over the summed labels accumulating the product of the inputs;
 *   - Adagrad, Momentum (standard, nesterov) and Adam (ai.onnx.preview.
 *     training): one kernel per node, invocation i updating element i of
 *     every optimized tensor (its loads all before its first store, so
 *     results may share memory with the inputs they replace).
 *
 * The float formulas (LRN, MVN, Det, optimizers) are f32 only; Einsum
 * takes the kernels' dtypes. Shapes are static except the optimizers'
 * (symbolic dims, several per value: dml_ksched_numel). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dml_einsum.h"
#include "schedule_internal.h"
#include "schedule_node_util.h"

/* ---- LRN, MeanVarianceNormalization ---- */

/* LRN-13: y = x / (bias + alpha / size * sum of x^2 over the channels
 * [c - floor((size-1)/2), c + ceil((size-1)/2)] within [0, C))^beta. */
static const char *emit_lrn(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0), *y = output(s, n, 0);
  if (!x || !y || x->type.dtype != DML_DTYPE_F32 || y->type.dtype != DML_DTYPE_F32)
    return "only f32 is emitted for this op";
  int32_t r = x->type.rank;
  if (r < 2) return "X must be [N, C, ...]";
  int64_t size = dml_attr_int(n->attrs, n->n_attrs, "size", 0);
  if (size < 1) return "attribute 'size' must be >= 1";
  double alpha = dml_attr_float(n->attrs, n->n_attrs, "alpha", 1e-4);
  double beta = dml_attr_float(n->attrs, n->n_attrs, "beta", 0.75);
  double bias = dml_attr_float(n->attrs, n->n_attrs, "bias", 1.0);
  int64_t lo_off = (size - 1) / 2;
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK], *xc[DML_MAX_RANK];
  const dml_kidx_t *gid = elem_kernel(s, node, DML_KK_NORM, &y->type, &K, c);
  if (!gid) return NULL;
  K->n_regs = 1;
  const dml_kidx_t *j = dml_ki_var(p, DML_KVAR_FIRST_LOOP);
  const dml_kidx_t *cj = kadd(s, c[1], j); /* channel + lo_off */
  for (int32_t d = 0; d < r; d++)
    xc[d] = d == 1 ? dml_ki_bin(p, DML_KI_SUB, cj, kc(s, lo_off)) : c[d];
  const dml_kval_t *v = load_at(s, x, flat_of(s, &x->type, xc));
  const dml_kval_t *acc = dml_kv_reg(p, 0);
  dml_kstmt_t *inner =
      if_in(s, cj, kc(s, lo_off), kadd(s, dim_idx(s, x->type.dims[1]), kc(s, lo_off)),
            assign(s, DML_KS_SET, 0,
                   dml_kv_fn(p, DML_KF_ADD, acc, dml_kv_fn(p, DML_KF_MUL, v, v))));
  dml_kblock_t body = {0};
  dml_kblock_add(&body, assign(s, DML_KS_LET, 0, dml_kv_const(p, 0.0f)));
  dml_kblock_add(&body, for_loop(s, DML_KVAR_FIRST_LOOP, kc(s, size), inner));
  /* kernel_math's C99 pow (the renderers' pow is undefined at an
   * infinite or zero base) */
  const dml_kval_t *den = dml_kv_pow(
      p,
      dml_kv_fn(
          p, DML_KF_ADD, dml_kv_const(p, (float)bias),
          dml_kv_fn(p, DML_KF_MUL, dml_kv_const(p, (float)(alpha / (double)size)), acc)),
      dml_kv_const(p, (float)beta));
  dml_kblock_add(&body,
                 store_at(s, y, gid, dml_kv_fn(p, DML_KF_DIV, load_at(s, x, gid), den)));
  elem_finish(s, K, &y->type, gid, body.first);
  account(K, &y->type, 4 * (size + 1), 2 * size + 4);
  return NULL;
}

/* A MeanVarianceNormalization box of the cooperative form: x's flat
 * element of reduced element j (row-major over the reduced dims) of kept
 * element `row` (row-major over the kept dims); the box's first element x0
 * in register 5, the mean of x - x0 in register 4 once known (mode 1:
 * (x - x0 - mean)^2, 0: x - x0). */
typedef struct {
  const dml_pkg_value_t *x, *y;
  const int *red;
  const dml_kidx_t *row;
  int mode;
} mvn_row_t;

static const dml_kidx_t *mvn_elem(sched_t *s, const mvn_row_t *c, const dml_kidx_t *j) {
  const dml_kidx_t *xc[DML_MAX_RANK], *ro = c->row, *rj = j;
  for (int32_t d = c->x->type.rank - 1; d >= 0; d--) {
    const dml_kidx_t *e = dim_idx(s, c->x->type.dims[d]);
    const dml_kidx_t **rest = c->red[d] ? &rj : &ro;
    xc[d] = dml_ki_bin(s->pool, DML_KI_MOD, *rest, e);
    *rest = dml_ki_bin(s->pool, DML_KI_DIV, *rest, e);
  }
  return flat_of(s, &c->x->type, xc);
}

/* x - x0 at reduced element j */
static const dml_kval_t *mvn_shifted(sched_t *s, const mvn_row_t *c,
                                     const dml_kidx_t *j) {
  return dml_kv_fn(s->pool, DML_KF_SUB, load_at(s, c->x, mvn_elem(s, c, j)),
                   dml_kv_reg(s->pool, 5));
}

static const dml_kval_t *mvn_row_value(sched_t *s, const dml_kidx_t *j, void *vctx) {
  const mvn_row_t *c = vctx;
  dml_kpool_t *p = s->pool;
  const dml_kval_t *v = mvn_shifted(s, c, j);
  if (!c->mode) return v;
  const dml_kval_t *d = dml_kv_fn(p, DML_KF_SUB, v, dml_kv_reg(p, 4));
  return dml_kv_fn(p, DML_KF_MUL, d, d);
}

/* y = (x - x0 - mean) / den, den in register 8 */
static dml_kstmt_t *mvn_row_store(sched_t *s, const dml_kidx_t *j, void *vctx) {
  const mvn_row_t *c = vctx;
  dml_kpool_t *p = s->pool;
  return store_at(
      s, c->y, mvn_elem(s, c, j),
      dml_kv_fn(p, DML_KF_DIV,
                dml_kv_fn(p, DML_KF_SUB, mvn_shifted(s, c, j), dml_kv_reg(p, 4)),
                dml_kv_reg(p, 8)));
}

/* MeanVarianceNormalization-13: over `axes` (default [0, 2, 3]),
 * y = (x - mean) / (sqrt(mean((x - mean)^2)) + 1e-9), computed on x - x0,
 * x0 the box's first element (the shifted-data algorithm, as
 * schedule_norm.c): a box of equal values gives x - mean = 0 exactly, hence
 * y = 0, where an f32 mean rounded off x would be amplified by 1 / 1e-9
 * (about +-0.99 on lavapipe; the CPU's double mean is exact there); each invocation
 * loops over its reduced box twice, or, for a box longer than 256 (a
 * 256 x 256 image: the per-element loops were quadratic and lavapipe
 * stopped them after 65,535 iterations), a workgroup per box
 * (schedule_rows.c: the mean, the mean squared deviation, the outputs). */
static const char *emit_mvn(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0), *y = output(s, n, 0);
  if (!x || !y || x->type.dtype != DML_DTYPE_F32 || y->type.dtype != DML_DTYPE_F32)
    return "only f32 is emitted for this op";
  int32_t r = x->type.rank;
  size_t na = 0;
  const int64_t *aa = dml_attr_ints(n->attrs, n->n_attrs, "axes", &na);
  static const int64_t dflt[3] = {0, 2, 3};
  if (!aa) aa = dflt, na = 3;
  int red[DML_MAX_RANK] = {0};
  for (size_t i = 0; i < na; i++) {
    int64_t a = norm_axis(aa[i], r);
    if (a < 0 || a >= r) return "axis out of range";
    red[a] = 1;
  }
  int64_t box = 1, kept = 1;
  int sym = 0;
  for (int32_t d = 0; d < r; d++) {
    sym |= x->type.dims[d].sym >= 0;
    *(red[d] ? &box : &kept) *= x->type.dims[d].value;
  }
  if (!sym && dml_krow_wanted(s, box)) {
    dml_kernel_t *K = dml_ksched_kernel(s, DML_KK_NORM, node);
    if (!K) return NULL;
    int32_t j = DML_KVAR_FIRST_LOOP;
    const dml_kidx_t *row = dml_krow_setup(s, K, (dml_klin_t){kept, -1, 0, 0}, j + 1, 0);
    const dml_kidx_t *B = kc(s, box);
    mvn_row_t mc = {x, y, red, row, 0};
    dml_kblock_t body = {0};
    dml_kblock_add(&body,
                   assign(s, DML_KS_LET, 5, load_at(s, x, mvn_elem(s, &mc, kc(s, 0)))));
    dml_krow_reduce(s, &body, B, j, DML_KF_ADD, 0.0f, mvn_row_value, &mc, 0, 0);
    dml_kblock_add(&body, assign(s, DML_KS_LET, 4,
                                 dml_kv_fn(p, DML_KF_DIV, dml_kv_reg(p, 0),
                                           dml_kv_const(p, (float)box))));
    mc.mode = 1;
    dml_krow_reduce(s, &body, B, j, DML_KF_ADD, 0.0f, mvn_row_value, &mc, 0, 0);
    dml_kblock_add(&body,
                   assign(s, DML_KS_LET, 8,
                          dml_kv_fn(p, DML_KF_ADD,
                                    dml_kv_fn(p, DML_KF_SQRT,
                                              dml_kv_fn(p, DML_KF_DIV, dml_kv_reg(p, 0),
                                                        dml_kv_const(p, (float)box)),
                                              NULL),
                                    dml_kv_const(p, 1e-9f))));
    dml_kblock_add(&body, dml_krow_each(s, B, j, mvn_row_store, &mc));
    K->body = dml_krow_finish(s, (dml_klin_t){kept, -1, 0, 0}, j + 1, body.first);
    K->n_regs = 9;
    account(K, &y->type, 12, 8);
    return NULL;
  }
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK], *xc[DML_MAX_RANK];
  const dml_kidx_t *gid = elem_kernel(s, node, DML_KK_NORM, &y->type, &K, c);
  if (!gid) return NULL;
  /* registers: the sum 0, the mean 1, the sum of squares 2, x0 3 */
  K->n_regs = 4;
  const dml_kidx_t *count = kc(s, 1), *x0c[DML_MAX_RANK];
  for (int32_t d = 0; d < r; d++) {
    xc[d] = red[d] ? dml_ki_var(p, DML_KVAR_FIRST_LOOP + d) : c[d];
    x0c[d] = red[d] ? kc(s, 0) : c[d];
    if (red[d]) count = kmul(s, count, dim_idx(s, x->type.dims[d]));
  }
  const dml_kval_t *sum = dml_kv_reg(p, 0), *mean = dml_kv_reg(p, 1),
                   *v2 = dml_kv_reg(p, 2), *x0 = dml_kv_reg(p, 3);
  const dml_kval_t *v =
      dml_kv_fn(p, DML_KF_SUB, load_at(s, x, flat_of(s, &x->type, xc)), x0);
  const dml_kval_t *dv = dml_kv_fn(p, DML_KF_SUB, v, mean);
  dml_kstmt_t *pass1 = assign(s, DML_KS_SET, 0, dml_kv_fn(p, DML_KF_ADD, sum, v));
  dml_kstmt_t *pass2 = assign(
      s, DML_KS_SET, 2, dml_kv_fn(p, DML_KF_ADD, v2, dml_kv_fn(p, DML_KF_MUL, dv, dv)));
  for (int32_t d = r - 1; d >= 0; d--) {
    if (!red[d]) continue;
    pass1 = for_loop(s, DML_KVAR_FIRST_LOOP + d, dim_idx(s, x->type.dims[d]), pass1);
    pass2 = for_loop(s, DML_KVAR_FIRST_LOOP + d, dim_idx(s, x->type.dims[d]), pass2);
  }
  const dml_kval_t *cnt = dml_kv_idx(p, DML_KT_F32, count);
  dml_kblock_t body = {0};
  dml_kblock_add(&body, assign(s, DML_KS_LET, 0, dml_kv_const(p, 0.0f)));
  dml_kblock_add(&body, assign(s, DML_KS_LET, 2, dml_kv_const(p, 0.0f)));
  dml_kblock_add(&body,
                 assign(s, DML_KS_LET, 3, load_at(s, x, flat_of(s, &x->type, x0c))));
  dml_kblock_add(&body, pass1);
  dml_kblock_add(&body, assign(s, DML_KS_LET, 1, dml_kv_fn(p, DML_KF_DIV, sum, cnt)));
  dml_kblock_add(&body, pass2);
  const dml_kval_t *den = dml_kv_fn(
      p, DML_KF_ADD, dml_kv_fn(p, DML_KF_SQRT, dml_kv_fn(p, DML_KF_DIV, v2, cnt), NULL),
      dml_kv_const(p, 1e-9f));
  dml_kblock_add(
      &body,
      store_at(
          s, y, gid,
          dml_kv_fn(p, DML_KF_DIV,
                    dml_kv_fn(p, DML_KF_SUB,
                              dml_kv_fn(p, DML_KF_SUB, load_at(s, x, gid), x0), mean),
                    den)));
  elem_finish(s, K, &y->type, gid, body.first);
  account(K, &y->type, 8, 8);
  return NULL;
}

/* ---- Det ---- */

#define DET_MAX 4

/* Determinant of the sub-matrix of registers `a` (m x m, row-major) made of
 * rows row0.. and the columns in `cols` (cofactor expansion along the
 * first row). */
static const dml_kval_t *det_expand(dml_kpool_t *p, const dml_kval_t *const *a, int m,
                                    int row0, const int *cols, int nc) {
  if (nc == 1) return a[row0 * m + cols[0]];
  const dml_kval_t *sum = NULL;
  for (int j = 0; j < nc; j++) {
    int sub[DET_MAX], k = 0;
    for (int i = 0; i < nc; i++)
      if (i != j) sub[k++] = cols[i];
    const dml_kval_t *term = dml_kv_fn(p, DML_KF_MUL, a[row0 * m + cols[j]],
                                       det_expand(p, a, m, row0 + 1, sub, k));
    sum = !sum ? term : dml_kv_fn(p, j % 2 ? DML_KF_SUB : DML_KF_ADD, sum, term);
  }
  return sum;
}

/* Det-11: one invocation per matrix of [*, M, M] (M static, <= 4) loads it
 * into registers and expands along the first row. */
static const char *emit_det(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0), *y = output(s, n, 0);
  if (!x || !y || x->type.dtype != DML_DTYPE_F32 || y->type.dtype != DML_DTYPE_F32)
    return "only f32 is emitted for this op";
  int32_t r = x->type.rank;
  if (r < 2 || y->type.rank != r - 2) return "input must be [*, M, M]";
  dml_dim_t dm = x->type.dims[r - 1];
  if (dm.sym >= 0 || x->type.dims[r - 2].sym >= 0 ||
      x->type.dims[r - 2].value != dm.value)
    return "input must be [*, M, M] with a static M";
  int m = (int)dm.value;
  if (m < 1 || m > DET_MAX) return "M above 4 (cofactor expansion)";
  dml_kernel_t *K;
  const dml_kidx_t *gid = elem_kernel(s, node, DML_KK_REDUCE, &y->type, &K, NULL);
  if (!gid) return NULL;
  K->n_regs = (uint32_t)(m * m);
  const dml_kval_t *a[DET_MAX * DET_MAX];
  const dml_kidx_t *base = kmul(s, gid, kc(s, (int64_t)m * m));
  dml_kblock_t body = {0};
  for (int i = 0; i < m * m; i++) {
    dml_kblock_add(&body, assign(s, DML_KS_LET, (uint32_t)i,
                                 load_at(s, x, kadd(s, base, kc(s, i)))));
    a[i] = dml_kv_reg(p, (uint32_t)i);
  }
  int cols[DET_MAX] = {0, 1, 2, 3};
  dml_kblock_add(&body, store_at(s, y, gid, det_expand(p, a, m, 0, cols, m)));
  elem_finish(s, K, &y->type, gid, body.first);
  account(K, &y->type, 4 * ((int64_t)m * m + 1), 2 * m * m * m);
  return NULL;
}

/* ---- Einsum ---- */

/* The operands of one Einsum output element: the labels' sizes, which
 * are in the output, their loop variables and output coordinates. */
typedef struct {
  const dml_pkg_node_t *n;
  const dml_einsum_t *e;
  const int *in_out;
  const int64_t *size;
  const dml_kidx_t *lab[DML_EINSUM_MAX_LABELS];
  int32_t var[DML_EINSUM_MAX_LABELS];
  int flat; /* the summed labels from one flat index j */
} einsum_ctx_t;

/* The product of the inputs at the labels' values (dml_krow_value_fn): the
 * summed labels are their loop variables, or with `flat` the digits of j
 * (the last label fastest, the nest's order); f16 and bf16 inputs read as
 * f32 (the product of two is exact in f32). */
static const dml_kval_t *einsum_term(sched_t *s, const dml_kidx_t *j, void *vctx) {
  dml_kpool_t *p = s->pool;
  einsum_ctx_t *c = vctx;
  const dml_einsum_t *e = c->e;
  const dml_kidx_t *rest = j;
  for (int l = e->n_labels - 1; l >= 0; l--) {
    if (c->in_out[l]) continue;
    if (!c->flat) {
      c->lab[l] = dml_ki_var(p, c->var[l]);
      continue;
    }
    c->lab[l] = dml_ki_bin(p, DML_KI_MOD, rest, kc(s, c->size[l]));
    rest = dml_ki_bin(p, DML_KI_DIV, rest, kc(s, c->size[l]));
  }
  const dml_kval_t *prod = NULL;
  for (int k = 0; k < e->n_in; k++) {
    const dml_pkg_value_t *x = input(s, c->n, (uint32_t)k);
    int64_t st[DML_MAX_RANK];
    strides_of(&x->type, st);
    const dml_kidx_t *idx = kc(s, 0);
    for (int32_t d = 0; d < x->type.rank; d++) {
      int l = e->in_labels[k][d];
      if (x->type.dims[d].value != c->size[l]) continue; /* size 1: broadcast */
      idx = kadd(s, idx, kmul(s, c->lab[l], kc(s, st[d])));
    }
    const dml_kval_t *v = load_at(s, x, idx);
    if (kdt(x) == DML_KT_F16 || kdt(x) == DML_KT_BF16) v = dml_kv_cast(p, DML_KT_F32, v);
    prod = prod ? dml_kv_fn(p, DML_KF_MUL, prod, v) : v;
  }
  return prod;
}

/* Einsum-12: per output element, a loop nest over the labels absent from
 * the output summing the product of the inputs at the labels' values (a
 * repeated label reads a diagonal; a size-1 dim against a longer label
 * broadcasts). Static shapes. A nest of more than DML_KLOOP_MAX loop
 * iterations takes a workgroup per output element (dml_kdot_sum over one
 * flat index of the summed labels). */
static const char *emit_einsum(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *y = output(s, n, 0);
  const char *eq = dml_attr_string(n->attrs, n->n_attrs, "equation", NULL);
  if (!y || !eq) return "attribute 'equation' is required";
  if (n->n_inputs < 1 || n->n_inputs > DML_EINSUM_MAX_IN) return "too many inputs";
  dml_kdtype_t t = kdt(y);
  if (t == DML_KT_BOOL) return "Einsum of bool";
  int32_t ranks[DML_EINSUM_MAX_IN];
  for (uint32_t k = 0; k < n->n_inputs; k++) {
    const dml_pkg_value_t *x = input(s, n, k);
    if (!x || x->type.dtype != y->type.dtype) return "inputs and output of one dtype";
    if (!is_static(&x->type)) return "symbolic dims";
    ranks[k] = x->type.rank;
  }
  if (!is_static(&y->type)) return "symbolic dims";
  dml_einsum_t e;
  char err[160];
  if (dml_einsum_parse(eq, (int)n->n_inputs, ranks, &e, err, sizeof err))
    return "equation does not parse";
  int64_t size[DML_EINSUM_MAX_LABELS];
  for (int l = 0; l < e.n_labels; l++) size[l] = -1;
  for (int k = 0; k < e.n_in; k++) {
    const dml_type_t *xt = &input(s, n, (uint32_t)k)->type;
    for (int32_t d = 0; d < xt->rank; d++) {
      int l = e.in_labels[k][d];
      int64_t v = xt->dims[d].value;
      if (size[l] < 0 || size[l] == 1)
        size[l] = v;
      else if (v != size[l] && v != 1)
        return "a subscript of unequal extents";
    }
  }
  for (int l = 0; l < e.n_labels; l++)
    if (size[l] < 0) size[l] = 1;
  if (e.out_rank != y->type.rank) return "output rank does not match";
  int in_out[DML_EINSUM_MAX_LABELS] = {0};
  for (int d = 0; d < e.out_rank; d++) {
    if (y->type.dims[d].value != size[e.out_labels[d]]) return "output dims do not match";
    in_out[e.out_labels[d]] = 1;
  }
  int n_sum = 0;
  for (int l = 0; l < e.n_labels; l++) n_sum += !in_out[l];
  if (n_sum > 48) return "too many summed labels";
  /* inner: the terms; iters: the nest's loop iterations (each level's
   * count times the levels outside it) */
  int64_t inner = 1, iters = 0;
  for (int l = 0; l < e.n_labels; l++)
    if (!in_out[l]) inner *= size[l], iters += inner;
  dml_kernel_t *K = dml_ksched_kernel(s, DML_KK_REDUCE, node);
  if (!K) return NULL;
  dml_kdot_t d;
  const dml_kidx_t *c[DML_MAX_RANK];
  const dml_kidx_t *gid =
      dml_kdot_setup(s, K, &y->type, iters, DML_KVAR_FIRST_LOOP + n_sum, &d);
  coords_of(s, &y->type, gid, c);
  einsum_ctx_t ec = {n, &e, in_out, size, {0}, {0}, d.coop};
  for (int l = 0, v = 0; l < e.n_labels; l++) {
    ec.var[l] = -1;
    if (!in_out[l]) ec.var[l] = DML_KVAR_FIRST_LOOP + v++;
  }
  for (int dd = 0; dd < e.out_rank; dd++) ec.lab[e.out_labels[dd]] = c[dd];
  dml_kblock_t body = {0};
  /* a long contraction: one flat index over the summed labels, summed by
   * the workgroup; else the nest of their loops. f16 and bf16 accumulate
   * in f32 either way, rounded once at the store (as MatMul and the CPU,
   * which sums in double; the nest summed in the dtype, rounding every
   * product and partial sum: 0.044 against bf16's 0.04 end to end over
   * 300 products, dml_every_op's Einsum:matmul) */
  dml_kdtype_t at = t == DML_KT_F16 || t == DML_KT_BF16 ? DML_KT_F32 : t;
  if (d.coop) {
    dml_kdot_sum(s, K, &d, &body, kc(s, inner), DML_KVAR_FIRST_LOOP, dml_kv_zero(p, at),
                 einsum_term, &ec, 0);
  } else {
    K->n_regs = 1;
    dml_kstmt_t *nest = assign(
        s, DML_KS_SET, 0,
        dml_kv_fn(p, DML_KF_ADD, dml_kv_reg_t(p, 0, at), einsum_term(s, NULL, &ec)));
    for (int l = e.n_labels - 1; l >= 0; l--)
      if (!in_out[l]) nest = for_loop(s, ec.var[l], kc(s, size[l]), nest);
    dml_kblock_add(&body, assign(s, DML_KS_LET, 0, dml_kv_zero(p, at)));
    dml_kblock_add(&body, nest);
  }
  const dml_kval_t *r = dml_kv_reg_t(p, 0, at);
  dml_kdot_finish(s, K, &d, gid, &body,
                  store_at(s, y, gid, at == t ? r : dml_kv_cast(p, t, r)));
  account(K, &y->type, (int64_t)dml_dtype_size(y->type.dtype) * (1 + e.n_in * inner),
          e.n_in * inner);
  return NULL;
}

/* ---- training-preview optimizers ---- */

/* c * x for a compile-time constant c, in f32 (a zero c: dml_kv_fn keeps
 * 0 * inf = NaN on every target). */
static const dml_kval_t *mul_const(dml_kpool_t *p, double c, const dml_kval_t *x) {
  return dml_kv_fn(p, DML_KF_MUL, dml_kv_const(p, (float)c), x);
}

/* Adagrad, Momentum and Adam (runtime/cpu/cpu_optim.c's formulas, in f32
 * where the CPU computes in double): inputs R, T, then n tensors X_i, n
 * gradients G_i and the state (H_i; V_i; V_i then H_i), outputs the n new
 * X_i then the new state. Invocation e computes element e of every tensor
 * (those with more than e elements) into registers, then stores. */
static const char *emit_optimizer(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  uint32_t per = n->op == DML_OP_ADAM ? 4 : 3;
  if (n->n_inputs < 2 + per || (n->n_inputs - 2) % per) return "wrong number of inputs";
  uint32_t nt = (n->n_inputs - 2) / per;
  if (n->n_outputs != (per - 1) * nt) return "wrong number of outputs";
  const dml_pkg_value_t *R = input(s, n, 0), *T = input(s, n, 1);
  if (!R || R->type.dtype != DML_DTYPE_F32 || !is_static(&R->type) ||
      static_numel(&R->type) != 1)
    return "R must be one f32 value";
  if (!is_index_dtype(T) || !is_static(&T->type) || static_numel(&T->type) != 1)
    return "T must be one i64 or i32 value";
  const dml_type_t *big = NULL;
  for (uint32_t i = 0; i < nt; i++) {
    const dml_pkg_value_t *x = input(s, n, 2 + i);
    if (!x || x->type.dtype != DML_DTYPE_F32) return "only f32 tensors are emitted";
    if (!is_static(&x->type)) return "tensors of symbolic dims";
    int64_t l = static_numel(&x->type);
    for (uint32_t k = 0; k < 2 * per - 1; k++) {
      const dml_pkg_value_t *v = k < per - 1 ? input(s, n, 2 + (k + 1) * nt + i)
                                             : output(s, n, (k - per + 1) * nt + i);
      if (!v && k < per - 1) return "absent input";
      if (!v) continue;
      if (v->type.dtype != DML_DTYPE_F32) return "only f32 tensors are emitted";
      if (!is_static(&v->type) || static_numel(&v->type) != l)
        return "state or result of another shape than X";
    }
    if (!big || l > static_numel(big)) big = &x->type;
  }
  double alpha = 0, beta = 0, eps = 1e-6, decay = 0, nc = 0, ncp = 0;
  int nesterov = 0;
  if (n->op == DML_OP_ADAGRAD) {
    decay = dml_attr_float(n->attrs, n->n_attrs, "decay_factor", 0.0);
    eps = dml_attr_float(n->attrs, n->n_attrs, "epsilon", 1e-6);
    nc = dml_attr_float(n->attrs, n->n_attrs, "norm_coefficient", 0.0);
  } else if (n->op == DML_OP_MOMENTUM) {
    const char *mode = dml_attr_string(n->attrs, n->n_attrs, "mode", NULL);
    if (!dml_attr_find(n->attrs, n->n_attrs, "alpha") ||
        !dml_attr_find(n->attrs, n->n_attrs, "beta") ||
        !dml_attr_find(n->attrs, n->n_attrs, "norm_coefficient") || !mode)
      return "alpha, beta, mode and norm_coefficient are required";
    if (strcmp(mode, "standard") && strcmp(mode, "nesterov"))
      return "mode must be 'standard' or 'nesterov'";
    nesterov = !strcmp(mode, "nesterov");
    alpha = dml_attr_float(n->attrs, n->n_attrs, "alpha", 0.0);
    beta = dml_attr_float(n->attrs, n->n_attrs, "beta", 0.0);
    nc = dml_attr_float(n->attrs, n->n_attrs, "norm_coefficient", 0.0);
  } else {
    alpha = dml_attr_float(n->attrs, n->n_attrs, "alpha", 0.9);
    beta = dml_attr_float(n->attrs, n->n_attrs, "beta", 0.999);
    eps = dml_attr_float(n->attrs, n->n_attrs, "epsilon", 1e-6);
    nc = dml_attr_float(n->attrs, n->n_attrs, "norm_coefficient", 0.0);
    ncp = dml_attr_float(n->attrs, n->n_attrs, "norm_coefficient_post", 0.0);
  }
  dml_kernel_t *K;
  const dml_kidx_t *gid = elem_kernel(s, node, DML_KK_ELEMENTWISE, big, &K, NULL);
  if (!gid) return NULL;
  /* registers: 0 rate, 1 beta_adj (Momentum), then 3 per tensor */
  K->n_regs = 2 + 3 * nt;
  const dml_kval_t *Rv = load_at(s, R, kc(s, 0));
  const dml_kval_t *Tv = dml_kv_cast(p, DML_KT_I64, load_at(s, T, kc(s, 0)));
  const dml_kval_t *Tf = dml_kv_cast(p, DML_KT_F32, Tv);
  const dml_kval_t *tpos = dml_kv_fn(p, DML_KF_GT, Tv, dml_kv_zero(p, DML_KT_I64));
  const dml_kval_t *one = dml_kv_const(p, 1.0f);
  const dml_kval_t *rate = Rv;
  if (n->op == DML_OP_ADAGRAD)
    rate =
        dml_kv_fn(p, DML_KF_DIV, Rv,
                  dml_kv_fn(p, DML_KF_ADD, one,
                            dml_kv_fn(p, DML_KF_MUL, Tf, dml_kv_const(p, (float)decay))));
  if (n->op == DML_OP_ADAM)
    rate = dml_kv_select(
        p, tpos,
        dml_kv_fn(
            p, DML_KF_DIV,
            dml_kv_fn(p, DML_KF_MUL, Rv,
                      dml_kv_fn(p, DML_KF_SQRT,
                                dml_kv_fn(p, DML_KF_SUB, one,
                                          dml_kv_fn(p, DML_KF_POW,
                                                    dml_kv_const(p, (float)beta), Tf)),
                                NULL)),
            dml_kv_fn(p, DML_KF_SUB, one,
                      dml_kv_fn(p, DML_KF_POW, dml_kv_const(p, (float)alpha), Tf))),
        Rv);
  dml_kblock_t body = {0}, stores = {0};
  dml_kblock_add(&body, assign(s, DML_KS_LET, 0, rate));
  dml_kblock_add(&body,
                 assign(s, DML_KS_LET, 1,
                        dml_kv_select(p, tpos, dml_kv_const(p, (float)beta), one)));
  const dml_kval_t *r = dml_kv_reg(p, 0), *badj = dml_kv_reg(p, 1);
  for (uint32_t i = 0; i < nt; i++) {
    const dml_pkg_value_t *x = input(s, n, 2 + i), *gr = input(s, n, 2 + nt + i),
                          *s0 = input(s, n, 2 + 2 * nt + i);
    const dml_pkg_value_t *s1 = per == 4 ? input(s, n, 2 + 3 * nt + i) : NULL;
    uint32_t rx = 2 + 3 * i, ra = rx + 1, rh = rx + 2;
    const dml_kval_t *xv = load_at(s, x, gid), *a = load_at(s, s0, gid);
    const dml_kval_t *g =
        dml_kv_fn(p, DML_KF_ADD, mul_const(p, nc, xv), load_at(s, gr, gid));
    const dml_kval_t *an, *xn, *hn = NULL;
    const dml_kval_t *A = dml_kv_reg(p, ra), *H = dml_kv_reg(p, rh);
    if (n->op == DML_OP_ADAGRAD) {
      an = dml_kv_fn(p, DML_KF_ADD, a, dml_kv_fn(p, DML_KF_MUL, g, g));
      /* X - r * g / (sqrt(H') + epsilon) */
      xn =
          dml_kv_fn(p, DML_KF_SUB, xv,
                    dml_kv_fn(p, DML_KF_DIV, dml_kv_fn(p, DML_KF_MUL, r, g),
                              dml_kv_fn(p, DML_KF_ADD, dml_kv_fn(p, DML_KF_SQRT, A, NULL),
                                        dml_kv_const(p, (float)eps))));
    } else if (n->op == DML_OP_MOMENTUM) {
      an = dml_kv_fn(p, DML_KF_ADD, mul_const(p, alpha, a),
                     dml_kv_fn(p, DML_KF_MUL, badj, g));
      /* X - R * V' (standard), X - R * (g + alpha * V') (nesterov) */
      xn = dml_kv_fn(
          p, DML_KF_SUB, xv,
          dml_kv_fn(p, DML_KF_MUL, r,
                    nesterov ? dml_kv_fn(p, DML_KF_ADD, g, mul_const(p, alpha, A)) : A));
    } else {
      an = dml_kv_fn(p, DML_KF_ADD, mul_const(p, alpha, a), mul_const(p, 1.0 - alpha, g));
      hn = dml_kv_fn(p, DML_KF_ADD, mul_const(p, beta, load_at(s, s1, gid)),
                     mul_const(p, 1.0 - beta, dml_kv_fn(p, DML_KF_MUL, g, g)));
      /* (1 - norm_coefficient_post) * (X - r * V' / (sqrt(H') + epsilon)) */
      xn = mul_const(
          p, 1.0 - ncp,
          dml_kv_fn(p, DML_KF_SUB, xv,
                    dml_kv_fn(p, DML_KF_DIV, dml_kv_fn(p, DML_KF_MUL, r, A),
                              dml_kv_fn(p, DML_KF_ADD, dml_kv_fn(p, DML_KF_SQRT, H, NULL),
                                        dml_kv_const(p, (float)eps)))));
    }
    dml_kblock_t tb = {0};
    dml_kblock_add(&tb, assign(s, DML_KS_LET, ra, an));
    if (hn) dml_kblock_add(&tb, assign(s, DML_KS_LET, rh, hn));
    dml_kblock_add(&tb, assign(s, DML_KS_LET, rx, xn));
    dml_klin_t l;
    numel_syms(&x->type, &l);
    const dml_kidx_t *lim = dml_ki_lin(p, l);
    dml_kblock_add(&body, if_lt(s, gid, lim, tb.first));
    dml_kblock_t sb = {0};
    const dml_pkg_value_t *xo = output(s, n, i), *ao = output(s, n, nt + i);
    const dml_pkg_value_t *ho = per == 4 ? output(s, n, 2 * nt + i) : NULL;
    if (xo) dml_kblock_add(&sb, store_at(s, xo, gid, dml_kv_reg(p, rx)));
    if (ao) dml_kblock_add(&sb, store_at(s, ao, gid, A));
    if (ho) dml_kblock_add(&sb, store_at(s, ho, gid, H));
    if (sb.first) dml_kblock_add(&stores, if_lt(s, gid, lim, sb.first));
    account(K, &x->type, 4 * (2 * (int64_t)per - 1), 12);
  }
  dml_kblock_add(&body, stores.first);
  elem_finish(s, K, big, gid, body.first);
  return NULL;
}

/* ---- dispatch ---- */

int dml_ksched_math_handles(dml_op_t op) {
  switch (op) {
    case DML_OP_LRN:
    case DML_OP_MEAN_VARIANCE_NORMALIZATION:
    case DML_OP_DET:
    case DML_OP_EINSUM:
    case DML_OP_ADAGRAD:
    case DML_OP_MOMENTUM:
    case DML_OP_ADAM: return 1;
    default: return 0;
  }
}

void dml_ksched_math_emit(sched_t *s, uint32_t node) {
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  int same_elem =
      n->op == DML_OP_ADAGRAD || n->op == DML_OP_MOMENTUM || n->op == DML_OP_ADAM;
  const char *why = n->n_outputs ? check_values(s, n, same_elem) : "no output";
  if (!why) {
    switch (n->op) {
      case DML_OP_LRN: why = emit_lrn(s, node); break;
      case DML_OP_MEAN_VARIANCE_NORMALIZATION: why = emit_mvn(s, node); break;
      case DML_OP_DET: why = emit_det(s, node); break;
      case DML_OP_EINSUM: why = emit_einsum(s, node); break;
      default: why = emit_optimizer(s, node); break;
    }
  }
  if (why) dml_ksched_unsupported(s, node, why);
}
