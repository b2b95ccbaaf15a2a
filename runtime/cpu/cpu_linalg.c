/*
 * cpu_linalg.c — MatMul and Gemm on top of the GEMM core (cpu_gemm.c).
 *
 * f32 goes through dml_cpu_sgemm; f64/f16/bf16 use a naive loop in double;
 * integer dtypes a naive loop with wrapping (two's complement) arithmetic.
 */
#include <string.h>

#include "cpu_internal.h"

/* A naive C[M,N] = alpha*op(A)*op(B) + beta*C for any numeric dtype. Used
 * for non-f32 dtypes (and as the reference in tests). */
static void gemm_generic(dml_dtype_t dt, int ta, int tb, int64_t M, int64_t N, int64_t K,
                         double alpha, const void *A, int64_t aoff, int64_t lda,
                         const void *B, int64_t boff, int64_t ldb, double beta, void *C,
                         int64_t coff, int64_t ldc) {
  int is_float = dml_dtype_is_float(dt);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      size_t ci = (size_t)(coff + i * ldc + j);
      if (is_float) {
        double s = 0.0;
        for (int64_t k = 0; k < K; k++) {
          size_t ai = (size_t)(aoff + (ta ? k * lda + i : i * lda + k));
          size_t bi = (size_t)(boff + (tb ? j * ldb + k : k * ldb + j));
          s += dml_load_f64(dt, A, ai) * dml_load_f64(dt, B, bi);
        }
        double r = alpha * s;
        if (beta != 0.0) r += beta * dml_load_f64(dt, C, ci);
        dml_store_f64(dt, C, ci, r);
      } else {
        uint64_t s = 0;
        for (int64_t k = 0; k < K; k++) {
          size_t ai = (size_t)(aoff + (ta ? k * lda + i : i * lda + k));
          size_t bi = (size_t)(boff + (tb ? j * ldb + k : k * ldb + j));
          s += (uint64_t)dml_load_i64(dt, A, ai) * (uint64_t)dml_load_i64(dt, B, bi);
        }
        uint64_t r = s * (uint64_t)(int64_t)alpha;
        if (beta != 0.0) r += (uint64_t)(int64_t)beta * (uint64_t)dml_load_i64(dt, C, ci);
        dml_store_i64(dt, C, ci, (int64_t)r);
      }
    }
}

static int numeric(dml_dtype_t dt) {
  return dml_dtype_is_float(dt) || dml_dtype_is_int(dt);
}

/* ======================================================================
 * MatMul — ONNX "MatMul" (opset 13): numpy.matmul semantics; 1-D operands
 * are promoted (a prepended / appended 1 that is removed afterwards);
 * batch dims broadcast.
 * ====================================================================== */

/* A batched MatMul of at least this many multiply-adds spreads its matrix
 * products over the thread pool (below, waking workers costs more). */
#define DML_CPU_BATCH_PARALLEL_MIN_MACS 1000000.0

typedef struct {
  int64_t M, N, K;
  int32_t brank; /* batch rank of the output */
  int64_t bdims[DML_MAX_RANK];
  int64_t astr[DML_MAX_RANK], bstr[DML_MAX_RANK]; /* batch strides (elements) */
  int fold; /* A's batches fold into M (B has no batch) */
} matmul_plan_t;

static int matmul_plan(const dml_cpu_call_t *c, matmul_plan_t *p) {
  const dml_tensor_t *a = &c->inputs[0], *b = &c->inputs[1], *y = &c->outputs[0];
  if (a->rank < 1 || b->rank < 1) return -1;
  int64_t ad[DML_MAX_RANK + 1], bd[DML_MAX_RANK + 1];
  int32_t ar = a->rank, br = b->rank;
  if (ar == 1) {
    ad[0] = 1, ad[1] = a->dims[0], ar = 2;
  } else {
    memcpy(ad, a->dims, sizeof(int64_t) * (size_t)ar);
  }
  if (br == 1) {
    bd[0] = b->dims[0], bd[1] = 1, br = 2;
  } else {
    memcpy(bd, b->dims, sizeof(int64_t) * (size_t)br);
  }
  p->M = ad[ar - 2], p->K = ad[ar - 1], p->N = bd[br - 1];
  if (bd[br - 2] != p->K) return -1;
  int32_t abr = ar - 2, bbr = br - 2;
  p->brank = DML_CPU_MAX(abr, bbr);
  int64_t as = p->M * p->K, bs = p->K * p->N;
  for (int32_t d = p->brank - 1; d >= 0; d--) {
    int32_t ia = d - (p->brank - abr), ib = d - (p->brank - bbr);
    int64_t da = ia >= 0 ? ad[ia] : 1, db = ib >= 0 ? bd[ib] : 1;
    if (da != db && da != 1 && db != 1) return -1;
    p->bdims[d] = da == 1 ? db : da;
    p->astr[d] = da == 1 ? 0 : as;
    p->bstr[d] = db == 1 ? 0 : bs;
    as *= da, bs *= db;
  }
  /* Expected output dims. */
  int64_t od[DML_MAX_RANK + 2];
  int32_t orank = 0;
  for (int32_t d = 0; d < p->brank; d++) od[orank++] = p->bdims[d];
  if (a->rank > 1) od[orank++] = p->M;
  if (b->rank > 1) od[orank++] = p->N;
  if (orank != y->rank) return -1;
  for (int32_t d = 0; d < orank; d++)
    if (od[d] != y->dims[d]) return -1;
  /* Fold when B has no (non-broadcast) batch and A's batch covers the
   * output's: one GEMM of (batch*M) rows. */
  p->fold = 1;
  for (int32_t d = 0; d < p->brank; d++)
    if (p->bstr[d] != 0 || p->astr[d] == 0) p->fold = 0;
  return 0;
}

size_t dml_cpus_MatMul(const dml_cpu_call_t *c, int threads) {
  matmul_plan_t p;
  if (c->inputs[0].dtype != DML_DTYPE_F32 || matmul_plan(c, &p)) return 0;
  int64_t m = p.M;
  if (p.fold)
    for (int32_t d = 0; d < p.brank; d++) m *= p.bdims[d];
  size_t one = dml_cpu_sgemm_scratch(m, p.N, p.K, threads);
  /* Batched: a one-thread GEMM scratch per thread (matmul_batch_task). */
  size_t per = dml_cpu_sgemm_scratch(p.M, p.N, p.K, 1);
  if (!p.fold && p.brank > 0 && threads > 1 && per <= SIZE_MAX / (size_t)threads &&
      per * (size_t)threads > one)
    return per * (size_t)threads;
  return one;
}

/* A batched f32 MatMul spread over the pool, one matrix product per task
 * (each a one-thread GEMM with its own slice of scratch). */
typedef struct {
  const matmul_plan_t *p;
  const float *A, *B, *bpre;
  float *Y;
  char *scratch;
  size_t per;
  int relu;
} matmul_batch_t;

static void relu_rows(float *y, int64_t n);

static void matmul_batch_task(void *vctx, int64_t bi, int tid) {
  const matmul_batch_t *t = (const matmul_batch_t *)vctx;
  const matmul_plan_t *p = t->p;
  int64_t ao = 0, bo = 0, rest = bi;
  for (int32_t d = p->brank - 1; d >= 0; d--) {
    int64_t i = rest % p->bdims[d];
    rest /= p->bdims[d];
    ao += i * p->astr[d], bo += i * p->bstr[d];
  }
  float *y = t->Y + bi * p->M * p->N;
  dml_cpu_sgemm_pre(0, 0, p->M, p->N, p->K, 1.0f, t->A + ao, p->K, t->B + bo, p->N, 0.0f,
                    y, p->N, NULL, t->bpre,
                    t->scratch ? t->scratch + (size_t)tid * t->per : NULL, t->per);
  if (t->relu) relu_rows(y, p->M * p->N);
}

/* y = y < 0 ? 0 : y over n floats (Relu's f32 formula, NaN and -0 kept). */
static void relu_rows(float *y, int64_t n) {
  dml_cpu_vrelu_f32(y, n); /* branch-free: a branch per value mispredicts */
}

dml_status_t dml_cpuk_MatMul(const dml_cpu_call_t *c) {
  return dml_cpu_matmul_ep(c, NULL);
}

/* MatMul with a fused epilogue (dml_cpu_run_fused): B packed beforehand when
 * ep->packed (B is 2-D), Relu on the output. */
dml_status_t dml_cpu_matmul_ep(const dml_cpu_call_t *c, const dml_cpu_epilogue_t *ep) {
  const dml_tensor_t *a = &c->inputs[0], *b = &c->inputs[1];
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = a->dtype;
  if (!numeric(dt) || b->dtype != dt || y->dtype != dt)
    return dml_cpu_err_dtype(c, "input/output", b->dtype != dt ? b->dtype : dt);
  matmul_plan_t p;
  if (matmul_plan(c, &p)) return dml_cpu_err_shapes(c, "MatMul shapes do not match");
  int64_t nb = 1;
  for (int32_t d = 0; d < p.brank; d++) nb *= p.bdims[d];
  if (nb == 0 || p.M == 0 || p.N == 0) return DML_OK;
  const float *bpre = ep && ep->packed && b->rank == 2 ? (const float *)ep->packed : NULL;
  int relu = ep && ep->relu;
  if (dt == DML_DTYPE_F32 && p.fold) {
    dml_cpu_sgemm_pre(0, 0, nb * p.M, p.N, p.K, 1.0f, (const float *)a->data, p.K,
                      (const float *)b->data, p.N, 0.0f, (float *)y->data, p.N, NULL,
                      bpre, c->scratch, c->scratch_bytes);
    if (relu) relu_rows((float *)y->data, nb * p.M * p.N);
    return DML_OK;
  }
  int threads = dml_cpu_num_threads();
  size_t per = dml_cpu_sgemm_scratch(p.M, p.N, p.K, 1);
  if (dt == DML_DTYPE_F32 && nb > 1 && threads > 1 &&
      (double)nb * (double)p.M * (double)p.N * (double)p.K >=
          DML_CPU_BATCH_PARALLEL_MIN_MACS) {
    /* Threads over the batch (the heads of attention): as many as the
     * scratch holds one-thread GEMM scratches. */
    if (per > 0) {
      size_t fit = c->scratch ? c->scratch_bytes / per : 0;
      if ((size_t)threads > fit) threads = (int)fit;
    }
    if (threads > 1) {
      matmul_batch_t t = {&p,
                          (const float *)a->data,
                          (const float *)b->data,
                          bpre,
                          (float *)y->data,
                          (char *)c->scratch,
                          per,
                          relu};
      dml_cpu_parallel_for(nb, threads, matmul_batch_task, &t);
      return DML_OK;
    }
  }
  int64_t idx[DML_MAX_RANK] = {0};
  for (int64_t bi = 0; bi < nb; bi++) {
    int64_t ao = 0, bo = 0;
    for (int32_t d = 0; d < p.brank; d++)
      ao += idx[d] * p.astr[d], bo += idx[d] * p.bstr[d];
    int64_t yo = bi * p.M * p.N;
    if (dt == DML_DTYPE_F32) {
      dml_cpu_sgemm_pre(0, 0, p.M, p.N, p.K, 1.0f, (const float *)a->data + ao, p.K,
                        (const float *)b->data + bo, p.N, 0.0f, (float *)y->data + yo,
                        p.N, NULL, bpre, c->scratch, c->scratch_bytes);
      if (relu) relu_rows((float *)y->data + yo, p.M * p.N);
    } else
      gemm_generic(dt, 0, 0, p.M, p.N, p.K, 1.0, a->data, ao, p.K, b->data, bo, p.N, 0.0,
                   y->data, yo, p.N);
    for (int32_t d = p.brank - 1; d >= 0; d--) {
      if (++idx[d] < p.bdims[d]) break;
      idx[d] = 0;
    }
  }
  return DML_OK;
}

/* ======================================================================
 * Gemm — ONNX "Gemm" (opset 13): Y = alpha * A' * B' + beta * C, A' = A^T
 * when transA, B' = B^T when transB; C optional, unidirectionally
 * broadcast to (M, N).
 * ====================================================================== */

typedef struct {
  int ta, tb;
  int64_t M, N, K;
} gemm_plan_t;

static int gemm_plan(const dml_cpu_call_t *c, gemm_plan_t *p) {
  const dml_tensor_t *a = &c->inputs[0], *b = &c->inputs[1], *y = &c->outputs[0];
  if (a->rank != 2 || b->rank != 2 || y->rank != 2) return -1;
  p->ta = dml_cpu_get_int(c, "transA", 0) != 0;
  p->tb = dml_cpu_get_int(c, "transB", 0) != 0;
  p->M = p->ta ? a->dims[1] : a->dims[0];
  p->K = p->ta ? a->dims[0] : a->dims[1];
  int64_t kb = p->tb ? b->dims[1] : b->dims[0];
  p->N = p->tb ? b->dims[0] : b->dims[1];
  if (kb != p->K || y->dims[0] != p->M || y->dims[1] != p->N) return -1;
  return 0;
}

size_t dml_cpus_Gemm(const dml_cpu_call_t *c, int threads) {
  gemm_plan_t p;
  if (c->inputs[0].dtype != DML_DTYPE_F32 || gemm_plan(c, &p)) return 0;
  return dml_cpu_sgemm_scratch(p.M, p.N, p.K, threads);
}

dml_status_t dml_cpuk_Gemm(const dml_cpu_call_t *c) {
  return dml_cpu_gemm_ep(c, NULL);
}

/* Gemm with a fused epilogue (dml_cpu_run_fused): B packed beforehand when
 * ep->packed, Relu on the output. */
dml_status_t dml_cpu_gemm_ep(const dml_cpu_call_t *c, const dml_cpu_epilogue_t *ep) {
  const dml_tensor_t *a = &c->inputs[0], *b = &c->inputs[1], *cc = dml_cpu_in(c, 2);
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = a->dtype;
  if (!numeric(dt) || b->dtype != dt || y->dtype != dt || (cc && cc->dtype != dt))
    return dml_cpu_err_dtype(c, "input/output", dt);
  gemm_plan_t p;
  if (gemm_plan(c, &p)) return dml_cpu_err_shapes(c, "Gemm shapes do not match");
  double alpha = dml_cpu_get_float(c, "alpha", 1.0),
         beta = dml_cpu_get_float(c, "beta", 1.0);
  if (p.M == 0 || p.N == 0) return DML_OK;
  int use_c = cc != NULL && beta != 0.0;
  if (use_c) {
    if (cc->rank > 2 || dml_cpu_broadcast_copy(cc, y))
      return dml_cpu_err_shapes(c, "C does not broadcast to (M, N)");
  } else {
    beta = 0.0;
  }
  int64_t lda = a->dims[1], ldb = b->dims[1];
  if (dt == DML_DTYPE_F32) {
    dml_cpu_sgemm_pre(p.ta, p.tb, p.M, p.N, p.K, (float)alpha, (const float *)a->data,
                      lda, (const float *)b->data, ldb, (float)beta, (float *)y->data,
                      p.N, NULL, ep ? (const float *)ep->packed : NULL, c->scratch,
                      c->scratch_bytes);
    if (ep && ep->relu) relu_rows((float *)y->data, p.M * p.N);
  } else
    gemm_generic(dt, p.ta, p.tb, p.M, p.N, p.K, alpha, a->data, 0, lda, b->data, 0, ldb,
                 beta, y->data, 0, p.N);
  return DML_OK;
}
