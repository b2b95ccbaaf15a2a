/* dml_metrics.c — the metrics table of dml_metrics.h. */
#include "dml_metrics.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_dtype.h"

#define OP "train.metrics"

static const struct {
  const char *name;
  dml_metric_kind_t kind;
} k_names[] = {
    {"precision", DML_METRIC_PRECISION},
    {"recall", DML_METRIC_RECALL},
    {"f1", DML_METRIC_F1},
    {"mae", DML_METRIC_MAE},
    {"mse", DML_METRIC_MSE},
    {"auc", DML_METRIC_AUC},
};

const char *dml_metric_name(const dml_metric_t *m, char *buf, size_t cap) {
  if (m->kind == DML_METRIC_TOPK) {
    snprintf(buf, cap, "top%d", (int)m->k);
    return buf;
  }
  for (size_t i = 0; i < sizeof k_names / sizeof k_names[0]; i++)
    if (k_names[i].kind == m->kind) {
      snprintf(buf, cap, "%s", k_names[i].name);
      return buf;
    }
  snprintf(buf, cap, "?");
  return buf;
}

dml_status_t dml_metrics_parse(const char *spec, dml_metric_t *out, int32_t *n) {
  *n = 0;
  for (const char *p = spec; p && *p;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    char tok[32];
    dml_metric_t m = {(dml_metric_kind_t)0, 0};
    if (len == 0 || len >= sizeof tok)
      return dml_status_detail(
          dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "bad metric list '%s'", spec),
          "metrics: accuracy, topK (K in 1..1000), precision, recall, f1, mae, mse, auc");
    memcpy(tok, p, len);
    tok[len] = 0;
    p = comma ? comma + 1 : NULL;
    if (!strcmp(tok, "accuracy")) continue;
    if (!strncmp(tok, "top", 3) && tok[3] >= '1' && tok[3] <= '9') {
      char *end;
      long k = strtol(tok + 3, &end, 10);
      if (!*end && k >= 1 && k <= 1000) {
        m.kind = DML_METRIC_TOPK;
        m.k = (int32_t)k;
      }
    }
    for (size_t i = 0; !m.kind && i < sizeof k_names / sizeof k_names[0]; i++)
      if (!strcmp(tok, k_names[i].name)) m.kind = k_names[i].kind;
    if (!m.kind)
      return dml_status_detail(
          dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "unknown metric '%s'", tok),
          "metrics: accuracy, topK (K in 1..1000), precision, recall, f1, mae, mse, auc");
    for (int32_t j = 0; j < *n; j++)
      if (out[j].kind == m.kind && out[j].k == m.k)
        return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "metric '%s' given twice",
                               tok);
    if (*n >= DML_MAX_METRICS)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                             "more than %d metrics in '%s'", DML_MAX_METRICS, spec);
    out[(*n)++] = m;
  }
  return DML_OK;
}

static int is_float(dml_dtype_t d) {
  return !dml_dtype_is_int(d) && d != DML_DTYPE_BOOL;
}

/* argmax of row r of scores [N, C]: the first of equal maxima; -1 when a
 * score is NaN. */
static int64_t argmax_row(const dml_tensor_t *p, int64_t r, int64_t c) {
  int64_t best = 0;
  double bv = 0;
  for (int64_t j = 0; j < c; j++) {
    double v = dml_load_f64(p->dtype, p->data, (size_t)(r * c + j));
    if (isnan(v)) return -1;
    if (j == 0 || v > bv) {
      bv = v;
      best = j;
    }
  }
  return best;
}

static int cmp_pair(const void *a, const void *b) {
  const double *x = (const double *)a, *y = (const double *)b;
  return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0;
}

dml_status_t dml_metric_compute(const dml_metric_t *m, const dml_tensor_t *pred,
                                const dml_tensor_t *target, double *out) {
  char name[32];
  dml_metric_name(m, name, sizeof name);
  if (!pred || !target || !out || pred->rank < 1 || target->rank < 1 ||
      pred->dims[0] != target->dims[0])
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "%s: predictions and targets must be [N, ...] of one N", name);
  if (!is_float(pred->dtype))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "%s: the model output is %s, not a float type", name,
                           dml_dtype_name(pred->dtype));
  int64_t n = pred->dims[0];
  int64_t pn = dml_dims_numel(pred->dims, pred->rank);
  int64_t tn = dml_dims_numel(target->dims, target->rank);
  int64_t c = n ? pn / n : 0;
  int int_target = dml_dtype_is_int(target->dtype);
  *out = NAN;
  switch (m->kind) {
    case DML_METRIC_MAE:
    case DML_METRIC_MSE: {
      if (int_target || tn != pn)
        return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                               "%s needs float targets with the output's %" PRId64
                               " elements (targets: %s, %" PRId64 " elements)",
                               name, pn, dml_dtype_name(target->dtype), tn);
      if (pn == 0) return DML_OK;
      double s = 0;
      for (int64_t i = 0; i < pn; i++) {
        double d = dml_load_f64(pred->dtype, pred->data, (size_t)i) -
                   dml_load_f64(target->dtype, target->data, (size_t)i);
        s += m->kind == DML_METRIC_MAE ? fabs(d) : d * d;
      }
      *out = s / (double)pn;
      return DML_OK;
    }
    case DML_METRIC_AUC: {
      if (tn != n || (c != 1 && c != 2))
        return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                               "auc is for binary targets: one score per row or two "
                               "classes (the output has %" PRId64
                               " per row, targets %" PRId64 " per row)",
                               c, n ? tn / n : 0);
      double *sc = (double *)malloc((size_t)(n ? n : 1) * 2 * sizeof(double));
      if (!sc) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
      int64_t npos = 0, k = 0;
      for (int64_t r = 0; r < n; r++) {
        double s = dml_load_f64(pred->dtype, pred->data, (size_t)(r * c + c - 1));
        if (c == 2) s -= dml_load_f64(pred->dtype, pred->data, (size_t)(r * c));
        double y = dml_load_f64(target->dtype, target->data, (size_t)r);
        int pos = int_target ? y != 0 : y > 0.5;
        if (isnan(s)) continue; /* a NaN score has no rank: the row is left out */
        sc[2 * k] = s;
        sc[2 * k + 1] = pos;
        npos += pos;
        k++;
      }
      int64_t nneg = k - npos;
      if (npos == 0 || nneg == 0) {
        free(sc);
        return DML_OK; /* NaN: undefined with one class */
      }
      qsort(sc, (size_t)k, 2 * sizeof(double), cmp_pair);
      /* sum of the positives' ranks (1-based), equal scores sharing their
       * mean rank */
      double rank_sum = 0;
      for (int64_t i = 0; i < k;) {
        int64_t j = i;
        while (j < k && sc[2 * j] == sc[2 * i]) j++;
        double mean_rank = (double)(i + 1 + j) / 2.0;
        for (int64_t q = i; q < j; q++)
          if (sc[2 * q + 1] != 0) rank_sum += mean_rank;
        i = j;
      }
      free(sc);
      *out = (rank_sum - (double)npos * (double)(npos + 1) / 2.0) /
             ((double)npos * (double)nneg);
      return DML_OK;
    }
    case DML_METRIC_TOPK:
    case DML_METRIC_PRECISION:
    case DML_METRIC_RECALL:
    case DML_METRIC_F1: break;
    default:
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "unknown metric kind %d",
                             (int)m->kind);
  }
  /* class metrics: integer labels [N], scores [N, C] */
  if (!int_target || tn != n || pred->rank != 2)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "%s needs integer class labels [N] and class scores [N, C] "
                           "(targets %s with %" PRId64 " per row, output rank %d)",
                           name, dml_dtype_name(target->dtype), n ? tn / n : 0,
                           pred->rank);
  if (n == 0) return DML_OK;
  for (int64_t r = 0; r < n; r++) {
    int64_t y = dml_load_i64(target->dtype, target->data, (size_t)r);
    if (y < 0 || y >= c)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                             "%s: label %" PRId64 " of row %" PRId64
                             " is outside [0, %" PRId64 ")",
                             name, y, r, c);
  }
  if (m->kind == DML_METRIC_TOPK) {
    int64_t hits = 0;
    for (int64_t r = 0; r < n; r++) {
      int64_t y = dml_load_i64(target->dtype, target->data, (size_t)r);
      double sy = dml_load_f64(pred->dtype, pred->data, (size_t)(r * c + y));
      int64_t above = 0, has_nan = 0;
      for (int64_t j = 0; j < c; j++) {
        double v = dml_load_f64(pred->dtype, pred->data, (size_t)(r * c + j));
        above += v > sy;
        has_nan |= isnan(v);
      }
      hits += !has_nan && above < m->k; /* a row with a NaN score is a miss */
    }
    *out = (double)hits / (double)n;
    return DML_OK;
  }
  /* per class: tp, fp, fn (3 counts each) */
  int64_t *cnt = (int64_t *)calloc((size_t)c * 3 + 1, sizeof(int64_t));
  if (!cnt) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  for (int64_t r = 0; r < n; r++) {
    int64_t y = dml_load_i64(target->dtype, target->data, (size_t)r);
    int64_t p = argmax_row(pred, r, c);
    if (p == y) {
      cnt[3 * y]++;
    } else {
      if (p >= 0) cnt[3 * p + 1]++;
      cnt[3 * y + 2]++;
    }
  }
  double sum = 0;
  int64_t classes = 0;
  for (int64_t j = 0; j < c; j++) {
    double tp = (double)cnt[3 * j], fp = (double)cnt[3 * j + 1],
           fn = (double)cnt[3 * j + 2];
    if (tp + fp + fn == 0) continue; /* neither a label nor a prediction */
    classes++;
    double num = m->kind == DML_METRIC_F1 ? 2 * tp : tp;
    double den = m->kind == DML_METRIC_PRECISION ? tp + fp
                 : m->kind == DML_METRIC_RECALL  ? tp + fn
                                                 : 2 * tp + fp + fn;
    sum += den > 0 ? num / den : 0;
  }
  free(cnt);
  *out = classes ? sum / (double)classes : NAN;
  return DML_OK;
}
