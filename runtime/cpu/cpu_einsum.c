/*
 * cpu_einsum.c — Einsum (ONNX opset 12) and Det (opset 11).
 */
#include <math.h>
#include <string.h>

#include "cpu_index.h"
#include "dml_einsum.h"

/* ======================================================================
 * Einsum (ONNX opset 12; numpy einsum semantics): equation parsed by
 * dml_einsum_parse (explicit/implicit output, ellipsis broadcasting,
 * repeated subscripts for diagonals/traces). Reference loop nest: for each
 * output element, sum over the labels absent from the output of the
 * product of the inputs. Accumulates in double (floats) or int64
 * (integers, wrapping). Plain f32 contractions of two operands go through
 * the GEMM instead (below).
 * ====================================================================== */

typedef struct ein_plan {
  int n_in, L, n_out, n_sum;
  int64_t size[DML_EINSUM_MAX_LABELS];
  int64_t str[DML_EINSUM_MAX_IN][DML_EINSUM_MAX_LABELS]; /* per label */
  int order[DML_EINSUM_MAX_LABELS]; /* output labels, then summed labels */
} ein_plan_t;

static dml_status_t ein_plan(const dml_cpu_call_t *c, ein_plan_t *p, dml_einsum_t *e) {
  const char *eq = dml_cpu_get_string(c, "equation", NULL);
  if (!eq)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "attribute 'equation' is required");
  int32_t ranks[DML_EINSUM_MAX_IN];
  if (c->n_inputs > DML_EINSUM_MAX_IN)
    return dml_cpu_error(c, DML_STATUS_UNIMPLEMENTED, "more than %d inputs",
                         DML_EINSUM_MAX_IN);
  for (uint32_t i = 0; i < c->n_inputs; i++) ranks[i] = c->inputs[i].rank;
  char why[200];
  if (dml_einsum_parse(eq, (int)c->n_inputs, ranks, e, why, sizeof why))
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "equation \"%s\": %s", eq, why);
  memset(p, 0, sizeof *p);
  p->n_in = e->n_in;
  p->L = e->n_labels;
  for (int l = 0; l < p->L; l++) p->size[l] = -1;
  for (int k = 0; k < e->n_in; k++) {
    const dml_tensor_t *t = &c->inputs[k];
    for (int32_t d = 0; d < t->rank; d++) {
      int l = e->in_labels[k][d];
      int64_t s = t->dims[d];
      if (p->size[l] < 0 || p->size[l] == 1)
        p->size[l] = s;
      else if (s != p->size[l] && s != 1)
        return dml_cpu_err_shapes(c, "subscript '%c' has extents %lld and %lld",
                                  e->letter[l], (long long)p->size[l], (long long)s);
    }
  }
  for (int l = 0; l < p->L; l++)
    if (p->size[l] < 0) p->size[l] = 1;
  for (int k = 0; k < e->n_in; k++) {
    const dml_tensor_t *t = &c->inputs[k];
    int64_t st[DML_MAX_RANK];
    dml_cpu_strides(t->dims, t->rank, st);
    for (int32_t d = 0; d < t->rank; d++) {
      int l = e->in_labels[k][d];
      if (t->dims[d] != p->size[l]) {
        /* size 1 broadcasts; a repeated subscript must agree */
        for (int32_t d2 = 0; d2 < t->rank; d2++)
          if (d2 != d && e->in_labels[k][d2] == l && t->dims[d2] != t->dims[d])
            return dml_cpu_err_shapes(c, "repeated subscript '%c' has unequal extents",
                                      e->letter[l]);
        continue;
      }
      p->str[k][l] += st[d];
    }
  }
  int in_out[DML_EINSUM_MAX_LABELS] = {0};
  p->n_out = e->out_rank;
  for (int d = 0; d < e->out_rank; d++) {
    p->order[d] = e->out_labels[d];
    in_out[e->out_labels[d]] = 1;
  }
  int n = p->n_out;
  for (int l = 0; l < p->L; l++)
    if (!in_out[l]) p->order[n++] = l;
  p->n_sum = n - p->n_out;
  return DML_OK;
}

/* Loads element i of an input as double / int64. */
static inline double ld_f(const dml_tensor_t *t, int64_t i) {
  return t->dtype == DML_DTYPE_F32 ? (double)((const float *)t->data)[i]
                                   : dml_load_f64(t->dtype, t->data, (size_t)i);
}

/* ---- GEMM fast path ------------------------------------------------------
 * Two f32 operands without repeated subscripts or size-1 broadcasting, where
 * every label is a batch (A, B, out), M (A, out), N (B, out) or K (A, B)
 * label: A is packed to [batch, M, K], B to [batch, K, N], the product goes
 * through dml_cpu_sgemm into [batch, M, N] and is permuted into the output.
 * Scratch: the three packed buffers, then the GEMM's own scratch. */

typedef struct ein_gemm {
  int nb, nm, nn, nk;
  int lb[DML_MAX_RANK], lm[DML_MAX_RANK], ln[DML_MAX_RANK], lk[DML_MAX_RANK];
  int64_t B, M, N, K;
} ein_gemm_t;

static int ein_gemm_plan(const dml_cpu_call_t *c, const ein_plan_t *p,
                         const dml_einsum_t *e, ein_gemm_t *g) {
  if (c->n_inputs != 2 || c->inputs[0].dtype != DML_DTYPE_F32 ||
      c->inputs[1].dtype != DML_DTYPE_F32)
    return 0;
  int in_k[2][DML_EINSUM_MAX_LABELS] = {{0}}, in_o[DML_EINSUM_MAX_LABELS] = {0};
  for (int k = 0; k < 2; k++)
    for (int32_t d = 0; d < c->inputs[k].rank; d++) {
      int l = e->in_labels[k][d];
      if (in_k[k][l]++ || c->inputs[k].dims[d] != p->size[l]) return 0;
    }
  for (int d = 0; d < e->out_rank; d++) in_o[e->out_labels[d]] = 1;
  memset(g, 0, sizeof *g);
  g->B = g->M = g->N = g->K = 1;
  for (int l = 0; l < p->L; l++) {
    int a = in_k[0][l], b = in_k[1][l], o = in_o[l];
    if (a && b && o)
      g->lb[g->nb++] = l, g->B *= p->size[l];
    else if (a && o)
      g->lm[g->nm++] = l, g->M *= p->size[l];
    else if (b && o)
      g->ln[g->nn++] = l, g->N *= p->size[l];
    else if (a && b)
      g->lk[g->nk++] = l, g->K *= p->size[l];
    else
      return 0; /* a label summed within one operand */
  }
  return g->B * g->M * g->N * g->K > 0;
}

/* Copies the strided view (dims/strides per label list) into dst. */
static void ein_pack(float *dst, const float *src, const int *labels, int n,
                     const int64_t *size, const int64_t *str) {
  int64_t idx[3 * DML_MAX_RANK] = {0}, total = 1, off = 0;
  for (int j = 0; j < n; j++) total *= size[labels[j]];
  for (int64_t i = 0; i < total; i++) {
    dst[i] = src[off];
    for (int j = n - 1; j >= 0; j--) {
      int l = labels[j];
      off += str[l];
      if (++idx[j] < size[l]) break;
      off -= size[l] * str[l];
      idx[j] = 0;
    }
  }
}

static size_t ein_gemm_bytes(const ein_gemm_t *g, size_t *gemm_off) {
  double f = (double)g->B * (double)(g->M * g->K + g->K * g->N + g->M * g->N);
  if (f * 4 > 1e15) return SIZE_MAX;
  *gemm_off = (size_t)f * sizeof(float);
  return *gemm_off;
}

size_t dml_cpus_Einsum(const dml_cpu_call_t *c, int threads) {
  ein_plan_t p;
  dml_einsum_t e;
  ein_gemm_t g;
  dml_status_t st = ein_plan(c, &p, &e);
  if (st) {
    dml_status_free(st);
    return 0;
  }
  if (!ein_gemm_plan(c, &p, &e, &g)) return 0;
  size_t off, n = ein_gemm_bytes(&g, &off);
  if (n == SIZE_MAX) return SIZE_MAX;
  return n + dml_cpu_sgemm_scratch(g.M, g.N, g.K, threads);
}

static int ein_gemm_run(const dml_cpu_call_t *c, const ein_plan_t *p,
                        const dml_einsum_t *e, dml_tensor_t *y) {
  ein_gemm_t g;
  if (!ein_gemm_plan(c, p, e, &g)) return 0;
  size_t off;
  if (ein_gemm_bytes(&g, &off) == SIZE_MAX || !c->scratch || c->scratch_bytes < off)
    return 0;
  float *pa = (float *)c->scratch, *pb = pa + g.B * g.M * g.K, *pc = pb + g.B * g.K * g.N;
  int la[3 * DML_MAX_RANK], lb[3 * DML_MAX_RANK], lc[3 * DML_MAX_RANK], na = 0, nb = 0,
                                                                        nc = 0;
  for (int j = 0; j < g.nb; j++) la[na++] = lb[nb++] = lc[nc++] = g.lb[j];
  for (int j = 0; j < g.nm; j++) la[na++] = lc[nc++] = g.lm[j];
  for (int j = 0; j < g.nk; j++) la[na++] = g.lk[j];
  for (int j = 0; j < g.nk; j++) lb[nb++] = g.lk[j];
  for (int j = 0; j < g.nn; j++) lb[nb++] = lc[nc++] = g.ln[j];
  ein_pack(pa, (const float *)c->inputs[0].data, la, na, p->size, p->str[0]);
  ein_pack(pb, (const float *)c->inputs[1].data, lb, nb, p->size, p->str[1]);
  char *gs = (char *)c->scratch + off;
  size_t gsb = c->scratch_bytes - off;
  for (int64_t b = 0; b < g.B; b++)
    dml_cpu_sgemm(0, 0, g.M, g.N, g.K, 1.0f, pa + b * g.M * g.K, g.K, pb + b * g.K * g.N,
                  g.N, 0.0f, pc + b * g.M * g.N, g.N, gs, gsb);
  /* Permute [batch, M, N] into the output's label order. */
  int64_t cstr[DML_EINSUM_MAX_LABELS] = {0}, s = 1;
  for (int j = nc - 1; j >= 0; j--) cstr[lc[j]] = s, s *= p->size[lc[j]];
  int lo[DML_MAX_RANK];
  for (int d = 0; d < e->out_rank; d++) lo[d] = e->out_labels[d];
  ein_pack((float *)y->data, pc, lo, e->out_rank, p->size, cstr);
  return 1;
}

dml_status_t dml_cpuk_Einsum(const dml_cpu_call_t *c) {
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = y->dtype;
  if (!dml_dtype_is_float(dt) && !dml_dtype_is_int(dt))
    return dml_cpu_err_dtype(c, "output", dt);
  for (uint32_t i = 0; i < c->n_inputs; i++)
    if (c->inputs[i].dtype != dt)
      return dml_cpu_err_dtype(c, "input", c->inputs[i].dtype);
  ein_plan_t p;
  dml_einsum_t e;
  DML_RETURN_IF_ERROR(ein_plan(c, &p, &e));
  int64_t od[DML_MAX_RANK];
  for (int d = 0; d < p.n_out; d++) od[d] = p.size[p.order[d]];
  if (y->rank != p.n_out || memcmp(y->dims, od, sizeof(int64_t) * (size_t)p.n_out))
    return dml_cpu_err_shapes(c, "output dims differ from the equation's");
  int64_t total = dml_cpu_numel(y);
  if (total == 0) return DML_OK;
  if (ein_gemm_run(c, &p, &e, y)) return DML_OK;
  int64_t nsum = 1;
  for (int j = 0; j < p.n_sum; j++) nsum *= p.size[p.order[p.n_out + j]];
  const int isf = dml_dtype_is_float(dt);
  int n_in = p.n_in;
  int64_t oidx[DML_MAX_RANK] = {0};
  int64_t sidx[DML_EINSUM_MAX_LABELS];
  int64_t base[DML_EINSUM_MAX_IN], off[DML_EINSUM_MAX_IN];
  const int64_t *sdims = NULL;
  int64_t sd[DML_EINSUM_MAX_LABELS];
  for (int j = 0; j < p.n_sum; j++) sd[j] = p.size[p.order[p.n_out + j]];
  sdims = sd;
  for (int64_t o = 0; o < total; o++) {
    for (int k = 0; k < n_in; k++) {
      base[k] = 0;
      for (int d = 0; d < p.n_out; d++) base[k] += oidx[d] * p.str[k][p.order[d]];
      off[k] = base[k];
    }
    double accf = 0;
    int64_t acci = 0;
    for (int j = 0; j < p.n_sum; j++) sidx[j] = 0;
    for (int64_t s = 0; s < nsum; s++) {
      if (isf) {
        double v = 1;
        for (int k = 0; k < n_in; k++) v *= ld_f(&c->inputs[k], off[k]);
        accf += v;
      } else {
        uint64_t v = 1;
        for (int k = 0; k < n_in; k++)
          v *= (uint64_t)dml_load_i64(dt, c->inputs[k].data, (size_t)off[k]);
        acci = (int64_t)((uint64_t)acci + v);
      }
      /* advance the summed odometer and the input offsets */
      for (int j = p.n_sum - 1; j >= 0; j--) {
        int l = p.order[p.n_out + j];
        if (++sidx[j] < sdims[j]) {
          for (int k = 0; k < n_in; k++) off[k] += p.str[k][l];
          break;
        }
        for (int k = 0; k < n_in; k++) off[k] -= (sdims[j] - 1) * p.str[k][l];
        sidx[j] = 0;
      }
    }
    if (isf) {
      if (dt == DML_DTYPE_F32)
        ((float *)y->data)[o] = (float)accf;
      else
        dml_store_f64(dt, y->data, (size_t)o, accf);
    } else {
      dml_store_i64(dt, y->data, (size_t)o, acci);
    }
    for (int d = p.n_out - 1; d >= 0; d--) {
      if (++oidx[d] < od[d]) break;
      oidx[d] = 0;
    }
  }
  return DML_OK;
}

/* ======================================================================
 * Det (ONNX opset 11): determinant of each [M,M] matrix of [*, M, M], by
 * LU decomposition with partial pivoting in double precision.
 * ====================================================================== */

size_t dml_cpus_Det(const dml_cpu_call_t *c, int threads) {
  const dml_tensor_t *x = &c->inputs[0];
  if (x->rank < 2) return 0;
  int64_t m = x->dims[x->rank - 1];
  if (m < 0 || m > 65536) return m < 0 ? 0 : SIZE_MAX;
  return (size_t)(m * m) * sizeof(double);
}

dml_status_t dml_cpuk_Det(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  if (!dml_dtype_is_float(dt)) return dml_cpu_err_dtype(c, "input", dt);
  if (y->dtype != dt) return dml_cpu_err_dtype(c, "output", y->dtype);
  int32_t r = x->rank;
  if (r < 2 || x->dims[r - 1] != x->dims[r - 2])
    return dml_cpu_err_shapes(c, "input must be [*, M, M]");
  if (y->rank != r - 2 || memcmp(y->dims, x->dims, sizeof(int64_t) * (size_t)(r - 2)))
    return dml_cpu_err_shapes(c, "output dims must be the input's leading dims");
  int64_t m = x->dims[r - 1], nb = dml_cpu_numel(y);
  double *a = (double *)c->scratch;
  for (int64_t b = 0; b < nb; b++) {
    for (int64_t i = 0; i < m * m; i++) a[i] = ld_f(x, b * m * m + i);
    double det = 1;
    for (int64_t col = 0; col < m && det != 0; col++) {
      int64_t piv = col;
      for (int64_t i = col + 1; i < m; i++)
        if (fabs(a[i * m + col]) > fabs(a[piv * m + col])) piv = i;
      if (a[piv * m + col] == 0) {
        det = 0;
        break;
      }
      if (piv != col) {
        for (int64_t j = 0; j < m; j++) {
          double t = a[col * m + j];
          a[col * m + j] = a[piv * m + j];
          a[piv * m + j] = t;
        }
        det = -det;
      }
      double d = a[col * m + col];
      det *= d;
      for (int64_t i = col + 1; i < m; i++) {
        double f = a[i * m + col] / d;
        if (f == 0) continue;
        for (int64_t j = col + 1; j < m; j++) a[i * m + j] -= f * a[col * m + j];
      }
    }
    if (dt == DML_DTYPE_F32)
      ((float *)y->data)[b] = (float)det;
    else
      dml_store_f64(dt, y->data, (size_t)b, det);
  }
  return DML_OK;
}
