/*
 * cpu_attention.c — Attention (ONNX opsets 23..25, "Attention"; the
 * formulas of onnx/reference/ops/op_attention.py, which generates the node
 * tests).
 *
 * Inputs Q, K, V, attn_mask?, past_key?, past_value?, nonpad_kv_seqlen?
 * (opset 24); outputs Y,
 * present_key?, present_value?, qk_matmul_output?. 4-D operands are
 * [batch, heads, seq, head_size]; 3-D ones [batch, seq, heads * head_size]
 * with q_num_heads and kv_num_heads. past_key/past_value (4-D) are
 * prepended to K/V along seq: present = concat(past, new), T = its length.
 * Per batch b, query head h (kv head h / (Hq / Hkv), grouped-query
 * attention) and query row i:
 *   s_j = scale * sum_d Q[i,d] K[j,d]   (scale: attribute, else
 *                                         1/sqrt(head_size))
 *   s_j = softcap * tanh(s_j / softcap) when softcap > 0
 *   bias_j = attn_mask (bool: true 0, false -inf; float: added, its last
 *            dim padded to T with -inf, broadcast right-aligned to
 *            [batch, Hq, Sq, T]) + (is_causal: -inf where j > i + offset)
 *            + (-inf where j >= nonpad_kv_seqlen[b], opset 24)
 *            + (-inf where j < i + offset - left_window_size or
 *               j > i + offset + right_window_size, each bound >= 0;
 *               -1, the default, leaves that side open: opset 25)
 *   offset = past_len with past_key; nonpad_kv_seqlen[b] - Sq without it
 *            (an external cache; may be negative); else 0
 *   p = softmax(s + bias); a row whose bias is -inf everywhere (every key
 *       masked) gives p = 0, as ONNX Runtime 1.31 does; a row whose scores
 *       are -inf or NaN of themselves (inf or NaN in Q or K) gives NaN, as
 *       the softmax and ORT do (exp(-inf - -inf))
 *   Y[i] = sum_j p_j V[j]
 * dmlc_nan_rows_zero = 1 (not ONNX: set by dmlc's attn-fuse pass for the
 * exporters' Where(IsNaN(softmax), 0, softmax)): a row whose softmax is
 * NaN (a NaN or +inf score, or every score -inf) has p = 0.
 * qk_matmul_output: s (modes 0, 1: after softcap, before the bias), s + bias
 * (2) or p (3), [batch, Hq, Sq, T]. Arithmetic in double, stored in the
 * operands' float dtype; softmax_precision only asks for at least the
 * input's precision.
 */
#include <math.h>
#include <string.h>

#include "cpu_internal.h"

typedef struct {
  const dml_tensor_t *t;
  int three_d;     /* [B, S, H*D] */
  int64_t h, s, d; /* heads, sequence length, head size */
} att_view_t;

/* Element (b, head, pos, k) of a Q/K/V view. */
static double att_ld(const att_view_t *v, int64_t b, int64_t head, int64_t pos,
                     int64_t k) {
  int64_t i = v->three_d ? ((b * v->s + pos) * v->h + head) * v->d + k
                         : ((b * v->h + head) * v->s + pos) * v->d + k;
  return dml_cpu_ld(v->t->dtype, v->t->data, i);
}

static int att_view(const dml_tensor_t *t, int64_t heads, att_view_t *v) {
  v->t = t;
  if (t->rank == 4) {
    v->three_d = 0, v->h = t->dims[1], v->s = t->dims[2], v->d = t->dims[3];
    return 0;
  }
  if (t->rank != 3 || heads <= 0 || t->dims[2] % heads) return -1;
  v->three_d = 1, v->h = heads, v->s = t->dims[1], v->d = t->dims[2] / heads;
  return 0;
}

/* The mask's value at (b, h, i, j) (right-aligned broadcast; j beyond its
 * last dim is -inf). */
static double mask_at(const dml_tensor_t *m, int64_t b, int64_t h, int64_t i, int64_t j) {
  int32_t r = m->rank;
  if (j >= m->dims[r - 1]) return -INFINITY;
  int64_t idx[4] = {b, h, i, j}, off = 0;
  for (int32_t d = 0; d < r; d++) {
    int64_t x = idx[4 - r + d], n = m->dims[d];
    off = off * n + (n == 1 ? 0 : x);
  }
  double v = dml_cpu_ld(m->dtype, m->data, off);
  if (m->dtype == DML_DTYPE_BOOL) return v != 0 ? 0.0 : -INFINITY;
  return v;
}

size_t dml_cpus_Attention(const dml_cpu_call_t *c, int threads) {
  (void)threads;
  const dml_tensor_t *k = &c->inputs[1], *pk = dml_cpu_in(c, 4);
  int64_t t = (k->rank == 4   ? k->dims[2]
               : k->rank == 3 ? k->dims[1]
                              : 0) +
              (pk && pk->rank == 4 ? pk->dims[2] : 0);
  return (size_t)(t > 0 ? t : 1) * 2 * sizeof(double);
}

dml_status_t dml_cpuk_Attention(const dml_cpu_call_t *c) {
  const dml_tensor_t *q = &c->inputs[0], *k = &c->inputs[1], *v = &c->inputs[2];
  const dml_tensor_t *mask = dml_cpu_in(c, 3), *pk = dml_cpu_in(c, 4),
                     *pv = dml_cpu_in(c, 5), *nonpad = dml_cpu_in(c, 6);
  dml_tensor_t *y = &c->outputs[0], *ok = dml_cpu_out(c, 1), *ov = dml_cpu_out(c, 2),
               *oqk = dml_cpu_out(c, 3);
  dml_dtype_t dt = q->dtype;
  if (!dml_dtype_is_float(dt)) return dml_cpu_err_dtype(c, "Q", dt);
  if (k->dtype != dt || v->dtype != dt || y->dtype != dt)
    return dml_cpu_err_dtype(c, "K/V/Y", k->dtype != dt ? k->dtype : v->dtype);
  if (q->rank != k->rank || q->rank != v->rank)
    return dml_cpu_err_shapes(c, "Q, K and V must have one rank (3 or 4)");
  int64_t qh = dml_cpu_get_int(c, "q_num_heads", 0),
          kvh = dml_cpu_get_int(c, "kv_num_heads", 0);
  att_view_t Q, K, V;
  if (att_view(q, qh, &Q) || att_view(k, kvh, &K) || att_view(v, kvh, &V))
    return dml_cpu_err_shapes(c,
                              "3-D Q/K/V need q_num_heads/kv_num_heads dividing their "
                              "last dim");
  int64_t B = q->dims[0];
  if (k->dims[0] != B || v->dims[0] != B || K.h != V.h || K.s != V.s || Q.d != K.d ||
      K.h <= 0 || Q.h % K.h)
    return dml_cpu_err_shapes(c, "Q/K/V batch, heads or head sizes do not match");
  if ((pk == NULL) != (pv == NULL))
    return dml_cpu_err_shapes(c, "past_key and past_value go together");
  int64_t P = 0;
  if (pk) {
    if (pk->rank != 4 || pv->rank != 4 || pk->dims[0] != B || pk->dims[1] != K.h ||
        pk->dims[3] != K.d || pv->dims[0] != B || pv->dims[1] != K.h ||
        pv->dims[2] != pk->dims[2] || pv->dims[3] != V.d || pk->dtype != dt ||
        pv->dtype != dt)
      return dml_cpu_err_shapes(c, "past_key/past_value must be [B, kv_heads, past, D]");
    P = pk->dims[2];
  }
  int64_t T = P + K.s, Sq = Q.s, Hq = Q.h, D = Q.d, Dv = V.d;
  if (nonpad &&
      (pk || nonpad->dtype != DML_DTYPE_I64 || nonpad->rank != 1 || nonpad->dims[0] != B))
    return dml_cpu_err_shapes(c,
                              "nonpad_kv_seqlen must be i64 [batch] and goes without "
                              "past_key/past_value");
  if (mask) {
    if (mask->rank < 1 || mask->rank > 4 || mask->dims[mask->rank - 1] > T ||
        (!dml_dtype_is_float(mask->dtype) && mask->dtype != DML_DTYPE_BOOL))
      return dml_cpu_err_shapes(c, "attn_mask must broadcast to [B, Hq, Sq, <= T]");
    const int64_t want[4] = {B, Hq, Sq, T};
    for (int32_t d = 0; d < mask->rank - 1; d++) {
      int64_t n = mask->dims[d], w = want[4 - mask->rank + d];
      if (n != 1 && n != w)
        return dml_cpu_err_shapes(c, "attn_mask must broadcast to [B, Hq, Sq, <= T]");
    }
  }
  /* Output shapes: Y [B,Hq,Sq,Dv] or [B,Sq,Hq*Dv]; present [B,Hkv,T,D];
   * qk [B,Hq,Sq,T]. */
  int64_t ny = B * Hq * Sq * Dv;
  if (dml_cpu_numel(y) != ny || (ok && dml_cpu_numel(ok) != B * K.h * T * D) ||
      (ov && dml_cpu_numel(ov) != B * K.h * T * Dv) ||
      (oqk && dml_cpu_numel(oqk) != B * Hq * Sq * T))
    return dml_cpu_err_shapes(c, "output shapes do not match the inputs");
  double scale = dml_cpu_get_float(c, "scale", 0.0);
  if (!(scale != 0.0)) scale = D > 0 ? 1.0 / sqrt((double)D) : 1.0;
  double softcap = dml_cpu_get_float(c, "softcap", 0.0);
  int causal = dml_cpu_get_int(c, "is_causal", 0) != 0;
  int nan_zero = dml_cpu_get_int(c, "dmlc_nan_rows_zero", 0) != 0;
  int64_t lw = dml_cpu_get_int(c, "left_window_size", -1),
          rw = dml_cpu_get_int(c, "right_window_size", -1);
  int64_t mode = dml_cpu_get_int(c, "qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "qk_matmul_output_mode %lld is not 0..3", (long long)mode);
  double *s = (double *)c->scratch, *bias = s + (T > 0 ? T : 1);
  if (T > 0 && (!s || c->scratch_bytes < (size_t)T * 2 * sizeof(double)))
    return dml_cpu_err_shapes(c, "scratch too small");
  int64_t rep = Hq / K.h;
  /* present_key/present_value */
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < K.h; h++)
      for (int64_t j = 0; j < T; j++) {
        for (int64_t d = 0; ok && d < D; d++) {
          double x = j < P ? dml_cpu_ld(dt, pk->data, ((b * K.h + h) * P + j) * D + d)
                           : att_ld(&K, b, h, j - P, d);
          dml_cpu_st(ok->dtype, ok->data, ((b * K.h + h) * T + j) * D + d, x);
        }
        for (int64_t d = 0; ov && d < Dv; d++) {
          double x = j < P ? dml_cpu_ld(dt, pv->data, ((b * K.h + h) * P + j) * Dv + d)
                           : att_ld(&V, b, h, j - P, d);
          dml_cpu_st(ov->dtype, ov->data, ((b * K.h + h) * T + j) * Dv + d, x);
        }
      }
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < Hq; h++) {
      int64_t kh = h / rep, nkv = T, off = P;
      if (nonpad) {
        nkv = ((const int64_t *)nonpad->data)[b];
        if (nkv < 0 || nkv > T)
          return dml_cpu_error(c, DML_STATUS_OUT_OF_RANGE,
                               "nonpad_kv_seqlen[%lld] = %lld is not in 0..%lld",
                               (long long)b, (long long)nkv, (long long)T);
        off = nkv - Sq;
      }
      for (int64_t i = 0; i < Sq; i++) {
        int all_masked = T > 0;
        double mx = -INFINITY;
        for (int64_t j = 0; j < T; j++) {
          double acc = 0.0;
          for (int64_t d = 0; d < D; d++) {
            double kd = j < P ? dml_cpu_ld(dt, pk->data, ((b * K.h + kh) * P + j) * D + d)
                              : att_ld(&K, b, kh, j - P, d);
            acc += att_ld(&Q, b, h, i, d) * kd;
          }
          acc *= scale;
          if (softcap > 0) acc = softcap * tanh(acc / softcap);
          double bj = mask ? mask_at(mask, b, h, i, j) : 0.0;
          if ((causal && j > i + off) || j >= nkv || (lw >= 0 && j < i + off - lw) ||
              (rw >= 0 && j > i + off + rw))
            bj = -INFINITY;
          s[j] = acc, bias[j] = bj;
          if (!(isinf(bj) && bj < 0)) all_masked = 0;
          if (mode < 2 && oqk)
            dml_cpu_st(oqk->dtype, oqk->data, ((b * Hq + h) * Sq + i) * T + j, acc);
          s[j] = acc + bj;
          if (mode == 2 && oqk)
            dml_cpu_st(oqk->dtype, oqk->data, ((b * Hq + h) * Sq + i) * T + j, s[j]);
          if (s[j] > mx) mx = s[j];
        }
        /* softmax; a row whose bias is -inf everywhere gives 0, one of
         * -inf or NaN scores NaN */
        double sum = 0.0;
        for (int64_t j = 0; j < T; j++) {
          s[j] = all_masked ? 0.0 : exp(s[j] - mx);
          sum += s[j];
        }
        for (int64_t j = 0; j < T; j++) {
          s[j] = all_masked || (nan_zero && isnan(sum)) ? 0.0 : s[j] / sum;
          if (mode == 3 && oqk)
            dml_cpu_st(oqk->dtype, oqk->data, ((b * Hq + h) * Sq + i) * T + j, s[j]);
        }
        for (int64_t d = 0; d < Dv; d++) {
          double acc = 0.0;
          for (int64_t j = 0; j < T; j++) {
            double vd = j < P
                            ? dml_cpu_ld(dt, pv->data, ((b * K.h + kh) * P + j) * Dv + d)
                            : att_ld(&V, b, kh, j - P, d);
            acc += s[j] * vd;
          }
          int64_t yi = Q.three_d ? ((b * Sq + i) * Hq + h) * Dv + d
                                 : ((b * Hq + h) * Sq + i) * Dv + d;
          dml_cpu_st(dt, y->data, yi, acc);
        }
      }
    }
  return DML_OK;
}

/* RotaryEmbedding(X, cos_cache, sin_cache, position_ids?) -> Y (ONNX opset
 * 23, "RotaryEmbedding"; onnx/reference/ops/op_rotary_embedding.py). X is
 * [B, H, S, D] or [B, S, H * D] (num_heads). The first R =
 * rotary_embedding_dim (default D) values of each head vector rotate in
 * pairs k < R/2: (x1, x2) = (x[k], x[k + R/2]), or (x[2k], x[2k + 1]) when
 * interleaved; y1 = c x1 - s x2, y2 = s x1 + c x2 with c, s the caches' row
 * of (b, pos): cache[position_ids[b, pos], k] with position_ids, else
 * cache[b, pos, k]. The other values are copied. */
dml_status_t dml_cpuk_RotaryEmbedding(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0], *cc = &c->inputs[1], *sc = &c->inputs[2],
                     *pid = dml_cpu_in(c, 3);
  dml_tensor_t *y = &c->outputs[0];
  dml_dtype_t dt = x->dtype;
  if (!dml_dtype_is_float(dt)) return dml_cpu_err_dtype(c, "input", dt);
  if (y->dtype != dt || cc->dtype != dt || sc->dtype != dt)
    return dml_cpu_err_dtype(c, "caches/output", cc->dtype != dt ? cc->dtype : sc->dtype);
  if (pid && pid->dtype != DML_DTYPE_I64)
    return dml_cpu_err_dtype(c, "position_ids", pid->dtype);
  int64_t nh = dml_cpu_get_int(c, "num_heads", 0);
  int three = x->rank == 3;
  if (x->rank != 3 && x->rank != 4)
    return dml_cpu_err_shapes(c, "input must be 3-D or 4-D");
  int64_t B = x->dims[0], H = three ? nh : x->dims[1],
          S = three ? x->dims[1] : x->dims[2];
  if (three && (nh <= 0 || x->dims[2] % nh))
    return dml_cpu_err_shapes(c, "3-D input needs num_heads dividing its last dim");
  int64_t D = three ? x->dims[2] / nh : x->dims[3];
  int64_t R = dml_cpu_get_int(c, "rotary_embedding_dim", 0);
  if (R == 0) R = D;
  int inter = dml_cpu_get_int(c, "interleaved", 0) != 0;
  int64_t half = R / 2;
  if (R < 0 || R > D || R % 2)
    return dml_cpu_err_shapes(c, "rotary_embedding_dim must be even and <= head size");
  int32_t cr = cc->rank;
  if (cr < 2 || cc->dims[cr - 1] != half || sc->rank != cr ||
      sc->dims[0] != cc->dims[0] || sc->dims[1] != cc->dims[1] ||
      sc->dims[cr - 1] != half)
    return dml_cpu_err_shapes(c,
                              "cos_cache/sin_cache must end in rotary_embedding_dim/2");
  if (pid ? (cr != 2 || pid->rank != 2 || pid->dims[0] != B || pid->dims[1] != S)
          : (cr != 3 || cc->dims[0] != B || cc->dims[1] != S))
    return dml_cpu_err_shapes(
        c,
        "caches must be [max_pos, R/2] with position_ids [B, S], else "
        "[B, S, R/2]");
  if (dml_cpu_numel(y) != dml_cpu_numel(x))
    return dml_cpu_err_shapes(c, "Y must have X's shape");
  for (int64_t b = 0; b < B; b++)
    for (int64_t s = 0; s < S; s++) {
      int64_t row;
      if (pid) {
        int64_t p = ((const int64_t *)pid->data)[b * S + s];
        if (p < 0 || p >= cc->dims[0])
          return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                               "position id %lld is outside the caches' %lld rows",
                               (long long)p, (long long)cc->dims[0]);
        row = p * half;
      } else {
        row = (b * S + s) * half;
      }
      for (int64_t h = 0; h < H; h++) {
        int64_t base = three ? ((b * S + s) * H + h) * D : ((b * H + h) * S + s) * D;
        for (int64_t k = 0; k < half; k++) {
          int64_t i1 = inter ? 2 * k : k, i2 = inter ? 2 * k + 1 : k + half;
          double x1 = dml_cpu_ld(dt, x->data, base + i1),
                 x2 = dml_cpu_ld(dt, x->data, base + i2);
          double cs = dml_cpu_ld(dt, cc->data, row + k),
                 sn = dml_cpu_ld(dt, sc->data, row + k);
          dml_cpu_st(dt, y->data, base + i1, cs * x1 - sn * x2);
          dml_cpu_st(dt, y->data, base + i2, sn * x1 + cs * x2);
        }
        for (int64_t k = R; k < D; k++)
          dml_cpu_st(dt, y->data, base + k, dml_cpu_ld(dt, x->data, base + k));
      }
    }
  return DML_OK;
}
