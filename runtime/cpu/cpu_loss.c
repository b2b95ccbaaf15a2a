/*
 * cpu_loss.c — NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (ONNX
 * operator spec, opsets 12/13: onnx__NegativeLogLikelihoodLoss.html,
 * onnx__SoftmaxCrossEntropyLoss.html).
 *
 * input [N, C] or [N, C, d1, ..., dk]; target [N] or [N, d1, ..., dk]
 * (i32/i64); weight [C] optional. With w[n,d] = weight[target[n,d]] (1
 * without weight) and 0 where target == ignore_index,
 *   loss[n,d] = -input[n, target[n,d], d] * w[n,d]
 * reduction "none": that tensor; "sum": its sum; "mean": sum / sum(w)
 * (0/0 = NaN when every target is ignored, as ONNX's reference).
 * SoftmaxCrossEntropyLoss applies it to log_softmax(scores, axis 1) and can
 * output that log_prob. f32 and f64, computed in double.
 */
#include <math.h>
#include <string.h>

#include "cpu_internal.h"

/* Shared body. `logp` holds log-probabilities [N, C, D] in `dt`. */
static dml_status_t nll(const dml_cpu_call_t *c, dml_dtype_t dt, const void *logp,
                        int64_t N, int64_t C, int64_t D) {
  const dml_tensor_t *tg = &c->inputs[1], *wt = dml_cpu_in(c, 2);
  dml_tensor_t *out = dml_cpu_out(c, 0);
  const char *red = dml_cpu_get_string(c, "reduction", "mean");
  int mode = strcmp(red, "none") == 0 ? 0 : strcmp(red, "sum") == 0 ? 1 : 2;
  if (mode == 2 && strcmp(red, "mean") != 0)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "reduction '%s' must be none, sum or mean", red);
  int has_ii = dml_attr_find(c->attrs, c->n_attrs, "ignore_index") != NULL;
  int64_t ii = dml_cpu_get_int(c, "ignore_index", 0);
  if (wt && (wt->dtype != dt || wt->rank != 1 || wt->dims[0] != C))
    return dml_cpu_err_shapes(c, "weight must be [%lld] of the input's dtype",
                              (long long)C);
  if (!out) return DML_OK;
  if (out->dtype != dt) return dml_cpu_err_dtype(c, "output", out->dtype);
  if (mode == 0 ? dml_cpu_numel(out) != N * D : out->rank != 0)
    return dml_cpu_err_shapes(c, "output must be %s",
                              mode == 0 ? "the target's shape" : "a scalar");
  double sum = 0, wsum = 0;
  for (int64_t n = 0; n < N; n++)
    for (int64_t d = 0; d < D; d++) {
      int64_t t = dml_load_i64(tg->dtype, tg->data, (size_t)(n * D + d));
      double l = 0, w = 0;
      if (!(has_ii && t == ii)) {
        if (t < 0 || t >= C)
          return dml_cpu_error(c, DML_STATUS_OUT_OF_RANGE,
                               "target %lld at [%lld, %lld] is outside [0, %lld)",
                               (long long)t, (long long)n, (long long)d, (long long)C);
        w = wt ? dml_cpu_ld(dt, wt->data, t) : 1.0;
        l = -dml_cpu_ld(dt, logp, (n * C + t) * D + d) * w;
      }
      if (mode == 0) dml_cpu_st(dt, out->data, n * D + d, l);
      sum += l;
      wsum += w;
    }
  if (mode == 1) dml_cpu_st(dt, out->data, 0, sum);
  if (mode == 2) dml_cpu_st(dt, out->data, 0, sum / wsum);
  return DML_OK;
}

/* Checks input/target shapes; sets N, C, D (product of d1..dk). */
static dml_status_t loss_geo(const dml_cpu_call_t *c, int64_t *N, int64_t *C,
                             int64_t *D) {
  const dml_tensor_t *x = &c->inputs[0], *tg = &c->inputs[1];
  if (x->dtype != DML_DTYPE_F32 && x->dtype != DML_DTYPE_F64)
    return dml_cpu_err_dtype(c, "input", x->dtype);
  if (!dml_dtype_is_int(tg->dtype)) return dml_cpu_err_dtype(c, "target", tg->dtype);
  if (x->rank < 2 || tg->rank != x->rank - 1 || tg->dims[0] != x->dims[0])
    return dml_cpu_err_shapes(c, "input must be [N, C, d...] and target [N, d...]");
  int64_t d = 1;
  for (int32_t i = 2; i < x->rank; i++) {
    if (tg->dims[i - 1] != x->dims[i])
      return dml_cpu_err_shapes(c, "target dim %d differs from the input's", (int)i - 1);
    d *= x->dims[i];
  }
  *N = x->dims[0];
  *C = x->dims[1];
  *D = d;
  return DML_OK;
}

/* NegativeLogLikelihoodLoss (opset 13). */
dml_status_t dml_cpuk_NegativeLogLikelihoodLoss(const dml_cpu_call_t *c) {
  int64_t N = 0, C = 0, D = 0;
  DML_RETURN_IF_ERROR(loss_geo(c, &N, &C, &D));
  return nll(c, c->inputs[0].dtype, c->inputs[0].data, N, C, D);
}

/* log_softmax over axis 1 into `lp` (same dtype and shape as scores). */
static void log_softmax(dml_dtype_t dt, const void *x, void *lp, int64_t N, int64_t C,
                        int64_t D) {
  for (int64_t n = 0; n < N; n++)
    for (int64_t d = 0; d < D; d++) {
      int64_t base = n * C * D + d;
      double mx = -INFINITY, s = 0;
      for (int64_t k = 0; k < C; k++) {
        double v = dml_cpu_ld(dt, x, base + k * D);
        if (v > mx) mx = v;
      }
      for (int64_t k = 0; k < C; k++) s += exp(dml_cpu_ld(dt, x, base + k * D) - mx);
      double ls = log(s);
      for (int64_t k = 0; k < C; k++)
        dml_cpu_st(dt, lp, base + k * D, dml_cpu_ld(dt, x, base + k * D) - mx - ls);
    }
}

/* SoftmaxCrossEntropyLoss (opset 13); log_prob kept in output 1 when
 * present, else in scratch. */
dml_status_t dml_cpuk_SoftmaxCrossEntropyLoss(const dml_cpu_call_t *c) {
  int64_t N = 0, C = 0, D = 0;
  DML_RETURN_IF_ERROR(loss_geo(c, &N, &C, &D));
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *lp = dml_cpu_out(c, 1);
  void *buf = c->scratch;
  if (lp) {
    if (lp->dtype != x->dtype || dml_cpu_numel(lp) != dml_cpu_numel(x))
      return dml_cpu_err_shapes(c, "log_prob must have the scores' shape and dtype");
    buf = lp->data;
  } else if (c->scratch_bytes < dml_tensor_bytes(x)) {
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "scratch is too small");
  }
  log_softmax(x->dtype, x->data, buf, N, C, D);
  return nll(c, x->dtype, buf, N, C, D);
}

size_t dml_cpus_SoftmaxCrossEntropyLoss(const dml_cpu_call_t *c, int threads) {
  (void)threads;
  if (dml_cpu_out(c, 1)) return 0;
  return dml_tensor_bytes(&c->inputs[0]);
}
