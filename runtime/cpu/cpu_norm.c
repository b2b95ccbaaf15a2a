/*
 * cpu_norm.c — BatchNormalization (inference and training mode), LayerNormalization,
 * InstanceNormalization, Softmax and LogSoftmax.
 *
 * Statistics are accumulated in double; f32 data is read and written
 * directly, other float dtypes through dml_load_f64/dml_store_f64.
 */
#if defined(__GNUC__) && !defined(__clang__)
/* Before the includes, so the inline helpers get the same options. */
#pragma GCC optimize("O3", "no-trapping-math")
#endif
#include <math.h>
#include <string.h>

#include "cpu_internal.h"

static int same_shape(const dml_tensor_t *a, const dml_tensor_t *b) {
  return a->rank == b->rank &&
         !memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank);
}

/* ======================================================================
 * BatchNormalization (ONNX opset 15, training_mode = 0):
 *   y = (x - mean[c]) / sqrt(var[c] + epsilon) * scale[c] + B[c], c = dim 1.
 * training_mode = 1 (opset 14/15 "Output case #1"): mean[c] and var[c] are
 * the batch's, over every dim but 1, var the population variance
 * (sum((x - mean)^2) / count, not count - 1, as the spec's note and ONNX's
 * reference say); optional outputs 1 and 2 (same dtypes as inputs 3, 4):
 *   running_mean = input_mean * momentum + mean * (1 - momentum)
 *   running_var  = input_var * momentum + var * (1 - momentum)
 * ====================================================================== */

dml_status_t dml_cpuk_BatchNormalization(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  if (!dml_dtype_is_float(dt)) return dml_cpu_err_dtype(c, "input", dt);
  if (y->dtype != dt) return dml_cpu_err_dtype(c, "output", y->dtype);
  int training = dml_cpu_get_int(c, "training_mode", 0) != 0;
  dml_tensor_t *rmo = dml_cpu_out(c, 1), *rvo = dml_cpu_out(c, 2);
  if (!training && (rmo || rvo))
    return dml_cpu_err_shapes(c, "running_mean/running_var need training_mode=1");
  if (x->rank < 2 || !same_shape(x, y))
    return dml_cpu_err_shapes(c, "X must be [N, C, ...] like Y");
  int64_t C = x->dims[1];
  for (int i = 1; i < 5; i++) {
    const dml_tensor_t *t = &c->inputs[i];
    if (!dml_dtype_is_float(t->dtype))
      return dml_cpu_err_dtype(c, "scale/B/mean/var", t->dtype);
    if (t->rank != 1 || t->dims[0] != C)
      return dml_cpu_err_shapes(c, "scale, B, mean and var must be [%lld]", (long long)C);
  }
  for (int i = 1; i < 3; i++) {
    const dml_tensor_t *t = i == 1 ? rmo : rvo;
    if (!t) continue;
    if (!dml_dtype_is_float(t->dtype))
      return dml_cpu_err_dtype(c, "running_mean/running_var", t->dtype);
    if (t->rank != 1 || t->dims[0] != C)
      return dml_cpu_err_shapes(c, "running_mean and running_var must be [%lld]",
                                (long long)C);
  }
  double eps = dml_cpu_get_float(c, "epsilon", 1e-5);
  double mom = dml_cpu_get_float(c, "momentum", 0.9);
  int64_t N = x->dims[0], sp = 1;
  for (int32_t i = 2; i < x->rank; i++) sp *= x->dims[i];
  for (int64_t ch = 0; ch < C; ch++) {
    double sc = dml_cpu_ld(c->inputs[1].dtype, c->inputs[1].data, ch);
    double b = dml_cpu_ld(c->inputs[2].dtype, c->inputs[2].data, ch);
    double mu = dml_cpu_ld(c->inputs[3].dtype, c->inputs[3].data, ch);
    double var = dml_cpu_ld(c->inputs[4].dtype, c->inputs[4].data, ch);
    if (training) {
      /* Two passes in double: the batch mean, then the population variance. */
      double sum = 0, ss = 0, cnt = (double)N * (double)sp;
      for (int64_t n = 0; n < N; n++)
        for (int64_t i = 0, base = (n * C + ch) * sp; i < sp; i++)
          sum += dml_cpu_ld(dt, x->data, base + i);
      double bm = sum / cnt;
      for (int64_t n = 0; n < N; n++)
        for (int64_t i = 0, base = (n * C + ch) * sp; i < sp; i++) {
          double d = dml_cpu_ld(dt, x->data, base + i) - bm;
          ss += d * d;
        }
      double bv = ss / cnt;
      if (rmo) dml_cpu_st(rmo->dtype, rmo->data, ch, mu * mom + bm * (1 - mom));
      if (rvo) dml_cpu_st(rvo->dtype, rvo->data, ch, var * mom + bv * (1 - mom));
      mu = bm, var = bv;
    }
    /* the affine form of dml_cpu_bn_affine: in float for f32, f16 and bf16
     * (as the GPU kernels), in double for f64 */
    float af, of;
    dml_cpu_bn_affine(sc, b, mu, var, eps, &af, &of);
    double a = af, off = of;
    if (dt == DML_DTYPE_F64) a = (1.0 / sqrt(var + eps)) * sc, off = b - mu * a;
    for (int64_t n = 0; n < N; n++) {
      int64_t base = (n * C + ch) * sp;
      if (dt == DML_DTYPE_F32) {
        const float *xp = (const float *)x->data + base;
        float *yp = (float *)y->data + base;
        for (int64_t i = 0; i < sp; i++) yp[i] = xp[i] * af + of;
      } else { /* x * a + off in double, rounded at the store */
        for (int64_t i = 0; i < sp; i++)
          dml_cpu_st(dt, y->data, base + i, dml_cpu_ld(dt, x->data, base + i) * a + off);
      }
    }
  }
  return DML_OK;
}

void dml_cpu_bn_affine(double sc, double b, double mean, double var, double eps,
                       float *scale, float *shift) {
  float a = (1.0f / sqrtf((float)var + (float)eps)) * (float)sc;
  *scale = a;
  *shift = (float)b - (float)mean * a;
}

/* ======================================================================
 * LayerNormalization (ONNX opset 17): normalize over dims [axis, rank);
 * RMSNormalization (opset 23) likewise without the mean and B;
 * Scale and B broadcast (unidirectionally) to those dims; optional outputs
 * Mean and InvStdDev of shape [d0, ..., d(axis-1), 1, ..., 1].
 * ====================================================================== */

/* Index into `t` (right-aligned numpy broadcast to dims[0..nr)) of the
 * flat index `flat` over dims. */
static int64_t bcast_index(const dml_tensor_t *t, const int64_t *dims, int32_t nr,
                           int64_t flat) {
  int64_t idx = 0, mul = 1;
  for (int32_t d = nr - 1, td = t->rank - 1; d >= 0; d--, td--) {
    int64_t i = flat % dims[d];
    flat /= dims[d];
    if (td >= 0) {
      if (t->dims[td] != 1) idx += i * mul;
      mul *= t->dims[td];
    }
  }
  return idx;
}

static int bcasts_to(const dml_tensor_t *t, const int64_t *dims, int32_t nr) {
  if (t->rank > nr) return 0;
  for (int32_t d = nr - 1, td = t->rank - 1; td >= 0; d--, td--)
    if (t->dims[td] != 1 && t->dims[td] != dims[d]) return 0;
  return 1;
}

typedef double ln_v8d __attribute__((vector_size(64)));
typedef float ln_v8f __attribute__((vector_size(32)));

/* Mean (0 when rms) and mean squared deviation from it of n > 0 f32
 * values, in double: 8 lanes of partial sums, then the lanes (the sums
 * reassociated, within a few double roundings of the serial sums). */
DML_CPU_CLONES static void row_stats_f32(const float *x, int64_t n, int rms,
                                         double *out_mean, double *out_var) {
  double mean = 0.0, var = 0.0;
  int64_t n8 = n / 8 * 8;
  if (!rms) {
    ln_v8d acc = {0};
    for (int64_t i = 0; i < n8; i += 8) {
      ln_v8f v;
      memcpy(&v, x + i, sizeof v);
      acc += __builtin_convertvector(v, ln_v8d);
    }
    for (int k = 0; k < 8; k++) mean += acc[k];
    for (int64_t i = n8; i < n; i++) mean += x[i];
    mean /= (double)n;
  }
  ln_v8d acc = {0};
  for (int64_t i = 0; i < n8; i += 8) {
    ln_v8f v;
    memcpy(&v, x + i, sizeof v);
    ln_v8d d = __builtin_convertvector(v, ln_v8d) - mean;
    acc += d * d;
  }
  for (int k = 0; k < 8; k++) var += acc[k];
  for (int64_t i = n8; i < n; i++) var += (x[i] - mean) * (x[i] - mean);
  *out_mean = mean;
  *out_var = var / (double)n;
}

/* LayerNormalization, or with `rms` RMSNormalization (ONNX opset 23,
 * "RMSNormalization": Y = X / sqrt(mean(X^2) + epsilon) * Scale over the
 * same dims; no mean subtracted, no B, no Mean/InvStdDev outputs). The
 * statistics are in double (stash_type f32 or wider); f32 rows sum in 8
 * vector lanes (row_stats_f32). */
static dml_status_t layer_norm(const dml_cpu_call_t *c, int rms) {
  const dml_tensor_t *x = &c->inputs[0], *sc = &c->inputs[1];
  const dml_tensor_t *b = rms ? NULL : dml_cpu_in(c, 2);
  dml_tensor_t *y = &c->outputs[0];
  dml_tensor_t *mo = rms ? NULL : dml_cpu_out(c, 1), *io = rms ? NULL : dml_cpu_out(c, 2);
  dml_dtype_t dt = x->dtype;
  if (!dml_dtype_is_float(dt)) return dml_cpu_err_dtype(c, "input", dt);
  if (y->dtype != dt || sc->dtype != dt || (b && b->dtype != dt))
    return dml_cpu_err_dtype(c, "Scale/B/Y", y->dtype != dt ? y->dtype : sc->dtype);
  if ((mo && !dml_dtype_is_float(mo->dtype)) || (io && !dml_dtype_is_float(io->dtype)))
    return dml_cpu_err_dtype(c, "Mean/InvStdDev", mo ? mo->dtype : io->dtype);
  int64_t axis;
  if (dml_cpu_norm_axis(dml_cpu_get_int(c, "axis", -1), x->rank, &axis))
    return dml_cpu_err_shapes(c, "axis out of range");
  if (!same_shape(x, y)) return dml_cpu_err_shapes(c, "Y must have X's shape");
  int32_t nr = x->rank - (int32_t)axis;
  const int64_t *nd = x->dims + axis;
  if (!bcasts_to(sc, nd, nr) || (b && !bcasts_to(b, nd, nr)))
    return dml_cpu_err_shapes(c, "Scale/B do not broadcast to the normalized dims");
  int64_t outer = 1, inner = 1;
  for (int32_t i = 0; i < axis; i++) outer *= x->dims[i];
  for (int32_t i = (int32_t)axis; i < x->rank; i++) inner *= x->dims[i];
  if ((mo && dml_cpu_numel(mo) != outer) || (io && dml_cpu_numel(io) != outer))
    return dml_cpu_err_shapes(c, "Mean/InvStdDev must have %lld elements",
                              (long long)outer);
  double eps = dml_cpu_get_float(c, "epsilon", 1e-5);
  /* Broadcastable with as many elements as the normalized dims: same
   * layout, index directly. */
  int full_s = dml_cpu_numel(sc) == inner;
  int full_b = b && dml_cpu_numel(b) == inner;
  for (int64_t o = 0; o < outer; o++) {
    int64_t base = o * inner;
    double mean = 0.0, var = 0.0;
    if (dt == DML_DTYPE_F32 && inner > 0) {
      row_stats_f32((const float *)x->data + base, inner, rms, &mean, &var);
    } else {
      if (!rms) {
        for (int64_t i = 0; i < inner; i++) mean += dml_cpu_ld(dt, x->data, base + i);
        mean = inner ? mean / (double)inner : 0.0;
      }
      for (int64_t i = 0; i < inner; i++) {
        double d = dml_cpu_ld(dt, x->data, base + i) - mean;
        var += d * d;
      }
      var = inner ? var / (double)inner : 0.0;
    }
    double inv = 1.0 / sqrt(var + eps);
    if (dt == DML_DTYPE_F32 && full_s && (full_b || !b)) {
      const float *xp = (const float *)x->data + base, *sp = (const float *)sc->data;
      const float *bp = b ? (const float *)b->data : NULL;
      float *yp = (float *)y->data + base;
      float m = (float)mean, iv = (float)inv;
      if (bp)
        for (int64_t i = 0; i < inner; i++) yp[i] = (xp[i] - m) * iv * sp[i] + bp[i];
      else
        for (int64_t i = 0; i < inner; i++) yp[i] = (xp[i] - m) * iv * sp[i];
    } else {
      for (int64_t i = 0; i < inner; i++) {
        double s = dml_cpu_ld(dt, sc->data, full_s ? i : bcast_index(sc, nd, nr, i));
        double bb =
            b ? dml_cpu_ld(dt, b->data, full_b ? i : bcast_index(b, nd, nr, i)) : 0.0;
        dml_cpu_st(dt, y->data, base + i,
                   (dml_cpu_ld(dt, x->data, base + i) - mean) * inv * s + bb);
      }
    }
    if (mo) dml_cpu_st(mo->dtype, mo->data, o, mean);
    if (io) dml_cpu_st(io->dtype, io->data, o, inv);
  }
  return DML_OK;
}

dml_status_t dml_cpuk_LayerNormalization(const dml_cpu_call_t *c) {
  return layer_norm(c, 0);
}

dml_status_t dml_cpuk_RMSNormalization(const dml_cpu_call_t *c) {
  return layer_norm(c, 1);
}

/* ======================================================================
 * InstanceNormalization (ONNX opset 6): per (n, c), normalize over the
 * spatial dims: y = scale[c] * (x - mean) / sqrt(var + epsilon) + B[c].
 * ====================================================================== */

dml_status_t dml_cpuk_InstanceNormalization(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0], *sc = &c->inputs[1], *b = &c->inputs[2];
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  if (!dml_dtype_is_float(dt)) return dml_cpu_err_dtype(c, "input", dt);
  if (y->dtype != dt || sc->dtype != dt || b->dtype != dt)
    return dml_cpu_err_dtype(c, "scale/B/Y", y->dtype != dt ? y->dtype : sc->dtype);
  if (x->rank < 3 || !same_shape(x, y))
    return dml_cpu_err_shapes(c, "X must be [N, C, D...] like Y");
  int64_t C = x->dims[1];
  if (sc->rank != 1 || sc->dims[0] != C || b->rank != 1 || b->dims[0] != C)
    return dml_cpu_err_shapes(c, "scale and B must be [%lld]", (long long)C);
  double eps = dml_cpu_get_float(c, "epsilon", 1e-5);
  int64_t NC = x->dims[0] * C, sp = 1;
  for (int32_t i = 2; i < x->rank; i++) sp *= x->dims[i];
  for (int64_t nc = 0; nc < NC; nc++) {
    int64_t base = nc * sp, ch = nc % C;
    double mean = 0.0, var = 0.0;
    for (int64_t i = 0; i < sp; i++) mean += dml_cpu_ld(dt, x->data, base + i);
    mean = sp ? mean / (double)sp : 0.0;
    for (int64_t i = 0; i < sp; i++) {
      double d = dml_cpu_ld(dt, x->data, base + i) - mean;
      var += d * d;
    }
    var = sp ? var / (double)sp : 0.0;
    double a = dml_cpu_ld(dt, sc->data, ch) / sqrt(var + eps),
           off = dml_cpu_ld(dt, b->data, ch) - mean * a;
    for (int64_t i = 0; i < sp; i++)
      dml_cpu_st(dt, y->data, base + i, dml_cpu_ld(dt, x->data, base + i) * a + off);
  }
  return DML_OK;
}

/* ======================================================================
 * Softmax / LogSoftmax (ONNX opset 13): along one axis (default -1),
 *   softmax(x)_i = exp(x_i - max) / sum_j exp(x_j - max),
 *   logsoftmax(x)_i = x_i - max - log(sum_j exp(x_j - max)).
 * ====================================================================== */

/* One contiguous f32 row: the exponentials (vectorized, about 2 ulp:
 * dml_cpu_vexp_sub_f32) go to yp, their sum is
 * dml_cpu_sum_f32's (blocked, double across blocks); LogSoftmax is
 * (x - max) - log(sum), not x - (max + log(sum)), which loses log(sum) for
 * large logits (rows of 1e8 gave 0 instead of -log(4)). */
static void softmax_row_f32(const float *restrict xp, float *restrict yp, int64_t n,
                            int logsm) {
  float m;
  if (logsm) {
    /* (x - m) keeps the sign of a zero m: the scan's m exactly. */
    m = xp[0];
    for (int64_t i = 1; i < n; i++) m = xp[i] > m ? xp[i] : m;
  } else {
    /* e^(x - m) is the same for m = +0 and -0. */
    m = dml_cpu_vmax_f32(xp, n);
  }
  dml_cpu_vexp_sub_f32(xp, m, yp, n); /* vectorized, cpu_vmath.c */
  double s = dml_cpu_sum_f32(yp, n);
  if (logsm) {
    float ls = (float)log(s);
    for (int64_t i = 0; i < n; i++) yp[i] = (xp[i] - m) - ls;
  } else {
    dml_cpu_vscale_f32(yp, (float)(1.0 / s), n);
  }
}

/* Contiguous f32 rows of a Softmax spread over the pool (a row's result
 * does not depend on the split). */
typedef struct {
  const float *x;
  float *y;
  int64_t n, rows_per_task, rows;
  int logsm;
} softmax_rows_t;

static void softmax_rows_task(void *ctx, int64_t t, int tid) {
  const softmax_rows_t *r = (const softmax_rows_t *)ctx;
  int64_t o0 = t * r->rows_per_task,
          o1 = o0 + r->rows_per_task < r->rows ? o0 + r->rows_per_task : r->rows;
  for (int64_t o = o0; o < o1; o++)
    softmax_row_f32(r->x + o * r->n, r->y + o * r->n, r->n, r->logsm);
}

dml_status_t dml_cpuk_Softmax(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  int logsm = c->op == DML_OP_LOG_SOFTMAX;
  if (!dml_dtype_is_float(dt)) return dml_cpu_err_dtype(c, "input", dt);
  if (y->dtype != dt) return dml_cpu_err_dtype(c, "output", y->dtype);
  if (!same_shape(x, y)) return dml_cpu_err_shapes(c, "Y must have X's shape");
  if (x->rank == 0) {
    dml_cpu_st(dt, y->data, 0, logsm ? 0.0 : 1.0);
    return DML_OK;
  }
  int64_t axis;
  if (dml_cpu_norm_axis(dml_cpu_get_int(c, "axis", -1), x->rank, &axis))
    return dml_cpu_err_shapes(c, "axis out of range");
  int64_t outer = 1, n = x->dims[axis], inner = 1;
  for (int32_t i = 0; i < axis; i++) outer *= x->dims[i];
  for (int32_t i = (int32_t)axis + 1; i < x->rank; i++) inner *= x->dims[i];
  if (n == 0) return DML_OK;
  int threads = dml_cpu_num_threads();
  if (dt == DML_DTYPE_F32 && inner == 1 && threads > 1 && outer >= 2 &&
      (double)outer * (double)n >= 65536.0) {
    /* from 64K values (below, waking a worker costs more than it saves):
     * about 8 tasks per thread */
    int64_t tasks = (int64_t)threads * 8;
    if (tasks > outer) tasks = outer;
    softmax_rows_t r = {(const float *)x->data,
                        (float *)y->data,
                        n,
                        (outer + tasks - 1) / tasks,
                        outer,
                        logsm};
    dml_cpu_parallel_for((outer + r.rows_per_task - 1) / r.rows_per_task, threads,
                         softmax_rows_task, &r);
    return DML_OK;
  }
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      int64_t base = o * n * inner + in;
      if (dt == DML_DTYPE_F32 && inner == 1) {
        softmax_row_f32((const float *)x->data + base, (float *)y->data + base, n, logsm);
        continue;
      }
      if (dt == DML_DTYPE_F32) {
        const float *xp = (const float *)x->data + base;
        float *yp = (float *)y->data + base;
        float m = xp[0];
        for (int64_t i = 1; i < n; i++) m = xp[i * inner] > m ? xp[i * inner] : m;
        double s = 0.0;
        if (logsm) {
          for (int64_t i = 0; i < n; i++) s += expf(xp[i * inner] - m);
          float ls = (float)log(s);
          for (int64_t i = 0; i < n; i++) yp[i * inner] = (xp[i * inner] - m) - ls;
        } else {
          for (int64_t i = 0; i < n; i++) {
            float e = expf(xp[i * inner] - m);
            yp[i * inner] = e;
            s += e;
          }
          float inv = (float)(1.0 / s);
          for (int64_t i = 0; i < n; i++) yp[i * inner] *= inv;
        }
        continue;
      }
      double m = dml_cpu_ld(dt, x->data, base);
      for (int64_t i = 1; i < n; i++)
        m = fmax(m, dml_cpu_ld(dt, x->data, base + i * inner));
      double s = 0.0;
      for (int64_t i = 0; i < n; i++)
        s += exp(dml_cpu_ld(dt, x->data, base + i * inner) - m);
      for (int64_t i = 0; i < n; i++) {
        double v = dml_cpu_ld(dt, x->data, base + i * inner) - m;
        dml_cpu_st(dt, y->data, base + i * inner, logsm ? v - log(s) : exp(v) / s);
      }
    }
  return DML_OK;
}

/* ======================================================================
 * LpNormalization (ONNX opset 1, "LpNormalization"; types of 22): y = x /
 * ||x||_p along `axis` (default -1), p = 1 (sum |x|) or 2 (sqrt(sum x^2),
 * the default); where the norm is 0 the output is 0 (ONNX's reference,
 * onnx/reference/ops/op_lp_normalization.py). Sums in double.
 * ====================================================================== */
dml_status_t dml_cpuk_LpNormalization(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  if (!dml_dtype_is_float(dt)) return dml_cpu_err_dtype(c, "input", dt);
  if (y->dtype != dt) return dml_cpu_err_dtype(c, "output", y->dtype);
  if (!same_shape(x, y)) return dml_cpu_err_shapes(c, "Y must have X's shape");
  int64_t axis, p = dml_cpu_get_int(c, "p", 2);
  if (p != 1 && p != 2)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "p must be 1 or 2, got %lld",
                         (long long)p);
  if (x->rank == 0 || dml_cpu_norm_axis(dml_cpu_get_int(c, "axis", -1), x->rank, &axis))
    return dml_cpu_err_shapes(c, "axis out of range");
  int64_t outer = 1, n = x->dims[axis], inner = 1;
  for (int32_t i = 0; i < axis; i++) outer *= x->dims[i];
  for (int32_t i = (int32_t)axis + 1; i < x->rank; i++) inner *= x->dims[i];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      int64_t base = o * n * inner + in;
      double s = 0.0;
      for (int64_t k = 0; k < n; k++) {
        double v = dml_cpu_ld(dt, x->data, base + k * inner);
        s += p == 1 ? fabs(v) : v * v;
      }
      double norm = p == 1 ? s : sqrt(s);
      for (int64_t k = 0; k < n; k++)
        dml_cpu_st(dt, y->data, base + k * inner,
                   norm == 0.0 ? 0.0 : dml_cpu_ld(dt, x->data, base + k * inner) / norm);
    }
  return DML_OK;
}

/* ======================================================================
 * GroupNormalization (ONNX opset 21, "GroupNormalization"): X [N, C, ...]
 * split into num_groups groups of C / num_groups channels; each (n, group)
 * is normalized over its channels and spatial dims, y = (x - mean) /
 * sqrt(var + epsilon) * scale[c] + bias[c] (scale, bias [C]). Statistics in
 * double (stash_type f32 or wider).
 * ====================================================================== */
dml_status_t dml_cpuk_GroupNormalization(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0], *sc = &c->inputs[1], *bi = &c->inputs[2];
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  if (!dml_dtype_is_float(dt)) return dml_cpu_err_dtype(c, "input", dt);
  if (y->dtype != dt || !dml_dtype_is_float(sc->dtype) || !dml_dtype_is_float(bi->dtype))
    return dml_cpu_err_dtype(c, "scale/bias/Y", y->dtype != dt ? y->dtype : sc->dtype);
  if (x->rank < 2 || !same_shape(x, y))
    return dml_cpu_err_shapes(c, "X must be [N, C, ...]");
  int64_t N = x->dims[0], C = x->dims[1], G = dml_cpu_get_int(c, "num_groups", 0);
  if (G <= 0 || C % G)
    return dml_cpu_err_shapes(c, "num_groups must divide the channel count");
  if (dml_cpu_numel(sc) != C || dml_cpu_numel(bi) != C)
    return dml_cpu_err_shapes(c, "scale and bias must have one value per channel");
  int64_t S = 1;
  for (int32_t i = 2; i < x->rank; i++) S *= x->dims[i];
  int64_t cg = C / G, len = cg * S;
  double eps = dml_cpu_get_float(c, "epsilon", 1e-5);
  for (int64_t n = 0; n < N; n++)
    for (int64_t g = 0; g < G; g++) {
      int64_t base = (n * C + g * cg) * S;
      double mean = 0.0, var = 0.0;
      for (int64_t i = 0; i < len; i++) mean += dml_cpu_ld(dt, x->data, base + i);
      mean = len ? mean / (double)len : 0.0;
      for (int64_t i = 0; i < len; i++) {
        double d = dml_cpu_ld(dt, x->data, base + i) - mean;
        var += d * d;
      }
      var = len ? var / (double)len : 0.0;
      double inv = 1.0 / sqrt(var + eps);
      for (int64_t i = 0; i < len; i++) {
        int64_t ch = g * cg + i / S;
        double v = (dml_cpu_ld(dt, x->data, base + i) - mean) * inv *
                       dml_cpu_ld(sc->dtype, sc->data, ch) +
                   dml_cpu_ld(bi->dtype, bi->data, ch);
        dml_cpu_st(dt, y->data, base + i, v);
      }
    }
  return DML_OK;
}
