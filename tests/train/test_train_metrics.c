/* test_train_metrics.c — the trainer's metrics table (dml_metrics.h)
 * against hand-computed values. Each reference below was computed from the
 * formula by hand and checked with NumPy (the script in the comment):
 *   S = [[2,1,0],[0,3,1],[1,0,2],[0,1,.5],[5,1,1],[0,0,4]]; y = [0,1,1,2,2,2]
 *   p = S.argmax(1) = [0,1,2,1,0,2]
 *   class 0: tp 1 fp 1 fn 0; class 1: tp 1 fp 1 fn 1; class 2: tp 1 fp 1 fn 2
 *   precision = (1/2 + 1/2 + 1/2)/3 = 0.5
 *   recall    = (1 + 1/2 + 1/3)/3 = 0.6111...
 *   f1        = (2/3 + 2/4 + 2/5)/3 = 0.5222...   (sklearn's macro f1)
 *   top1 = 3/6, top2 = 5/6 (row 2's label is third), top3 = 1
 *   auc: s = [.1,.4,.35,.8,.4], t = [0,0,1,1,1]: pairs (pos > neg) + tie/2
 *        = (1 + 2 + 1.5)/6 = 0.75 (sklearn roc_auc_score)
 *   mae/mse: p = [1,2,3,4], t = [1.5,2,1,-4]: 10.5/4 = 2.625, 68.25/4
 * Tolerance 1e-15 (a few double roundings). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "dml_metrics.h"
#include "dml_test.h"

static dml_tensor_t tensor(dml_dtype_t dt, int rank, int64_t d0, int64_t d1, void *data) {
  dml_tensor_t t;
  memset(&t, 0, sizeof t);
  t.dtype = dt;
  t.rank = rank;
  t.dims[0] = d0;
  t.dims[1] = d1;
  t.data = data;
  return t;
}

static double metric(const char *name, const dml_tensor_t *p, const dml_tensor_t *y) {
  dml_metric_t m[DML_MAX_METRICS];
  int32_t n = 0;
  double v = -1;
  CHECK_OK(dml_metrics_parse(name, m, &n));
  CHECK(n == 1);
  if (n == 1) CHECK_OK(dml_metric_compute(&m[0], p, y, &v));
  return v;
}

static float g_s[18] = {2, 1, 0, 0, 3, 1, 1, 0, 2, 0, 1, 0.5f, 5, 1, 1, 0, 0, 4};
static int64_t g_y[6] = {0, 1, 1, 2, 2, 2};

static void test_classes(void) {
  dml_tensor_t p = tensor(DML_DTYPE_F32, 2, 6, 3, g_s);
  dml_tensor_t y = tensor(DML_DTYPE_I64, 1, 6, 0, g_y);
  CHECK_NEAR(metric("precision", &p, &y), 0.5, 1e-15);
  CHECK_NEAR(metric("recall", &p, &y), (1 + 0.5 + 1.0 / 3) / 3, 1e-15);
  CHECK_NEAR(metric("f1", &p, &y), (2.0 / 3 + 0.5 + 0.4) / 3, 1e-15);
  CHECK_NEAR(metric("top1", &p, &y), 0.5, 1e-15);
  CHECK_NEAR(metric("top2", &p, &y), 5.0 / 6, 1e-15);
  CHECK_NEAR(metric("top3", &p, &y), 1.0, 1e-15);
  /* int32 labels: the same */
  int32_t y32[6] = {0, 1, 1, 2, 2, 2};
  dml_tensor_t y2 = tensor(DML_DTYPE_I32, 1, 6, 0, y32);
  CHECK_NEAR(metric("f1", &p, &y2), (2.0 / 3 + 0.5 + 0.4) / 3, 1e-15);
  /* a class in neither labels nor predictions does not count (sklearn's
   * labels = unique(y_true, y_pred)): 4 classes, the 4th never seen */
  float s4[24];
  for (int r = 0; r < 6; r++) {
    for (int c = 0; c < 3; c++) s4[r * 4 + c] = g_s[r * 3 + c];
    s4[r * 4 + 3] = -100;
  }
  dml_tensor_t p4 = tensor(DML_DTYPE_F32, 2, 6, 4, s4);
  CHECK_NEAR(metric("precision", &p4, &y), 0.5, 1e-15);
  CHECK_NEAR(metric("recall", &p4, &y), (1 + 0.5 + 1.0 / 3) / 3, 1e-15);
  /* a NaN score: the row predicts no class (a false negative of its label);
   * top-k misses it. Row 0 NaN: class 0 tp 0 fp 1 fn 1 -> P 0, R 0. */
  float sn[18];
  memcpy(sn, g_s, sizeof sn);
  sn[1] = NAN;
  dml_tensor_t pn = tensor(DML_DTYPE_F32, 2, 6, 3, sn);
  CHECK_NEAR(metric("recall", &pn, &y), (0 + 0.5 + 1.0 / 3) / 3, 1e-15);
  CHECK_NEAR(metric("top3", &pn, &y), 5.0 / 6, 1e-15);
  /* +-inf scores rank as numbers */
  float si[6] = {INFINITY, 0, -INFINITY, 1, 0, -INFINITY};
  int64_t yi[3] = {0, 1, 0};
  dml_tensor_t pi = tensor(DML_DTYPE_F32, 2, 3, 2, si);
  dml_tensor_t yi_t = tensor(DML_DTYPE_I64, 1, 3, 0, yi);
  CHECK_NEAR(metric("top1", &pi, &yi_t), 1.0, 0);
  /* empty: NaN, not an error */
  dml_tensor_t pe = tensor(DML_DTYPE_F32, 2, 0, 3, g_s);
  dml_tensor_t ye = tensor(DML_DTYPE_I64, 1, 0, 0, g_y);
  CHECK(isnan(metric("f1", &pe, &ye)));
}

static void test_auc(void) {
  float s[5] = {0.1f, 0.4f, 0.35f, 0.8f, 0.4f};
  float t[5] = {0, 0, 1, 1, 1};
  dml_tensor_t p = tensor(DML_DTYPE_F32, 2, 5, 1, s);
  dml_tensor_t y = tensor(DML_DTYPE_F32, 2, 5, 1, t);
  CHECK_NEAR(metric("auc", &p, &y), 0.75, 1e-15);
  /* two-class logits: s1 - s0 orders as p(1) */
  float s2[10];
  for (int i = 0; i < 5; i++) {
    s2[2 * i] = 1.0f - 2 * s[i];
    s2[2 * i + 1] = 0.5f;
  }
  int64_t ti[5] = {0, 0, 1, 1, 1};
  dml_tensor_t p2 = tensor(DML_DTYPE_F32, 2, 5, 2, s2);
  dml_tensor_t y2 = tensor(DML_DTYPE_I64, 1, 5, 0, ti);
  CHECK_NEAR(metric("auc", &p2, &y2), 0.75, 1e-15);
  /* one class only: undefined (NaN) */
  float t1[5] = {1, 1, 1, 1, 1};
  dml_tensor_t y1 = tensor(DML_DTYPE_F32, 2, 5, 1, t1);
  CHECK(isnan(metric("auc", &p, &y1)));
  /* three classes: an error */
  dml_tensor_t p3 = tensor(DML_DTYPE_F32, 2, 6, 3, g_s);
  dml_tensor_t y3 = tensor(DML_DTYPE_I64, 1, 6, 0, g_y);
  dml_metric_t m[DML_MAX_METRICS];
  int32_t n;
  double v;
  CHECK_OK(dml_metrics_parse("auc", m, &n));
  CHECK_ERROR(dml_metric_compute(&m[0], &p3, &y3, &v), DML_STATUS_INVALID_ARGUMENT,
              "auc is for binary targets");
}

static void test_regression(void) {
  float p[4] = {1, 2, 3, 4}, t[4] = {1.5f, 2, 1, -4};
  dml_tensor_t pt = tensor(DML_DTYPE_F32, 2, 4, 1, p);
  dml_tensor_t yt = tensor(DML_DTYPE_F32, 2, 4, 1, t);
  CHECK_NEAR(metric("mae", &pt, &yt), 2.625, 1e-15);
  CHECK_NEAR(metric("mse", &pt, &yt), 17.0625, 1e-15);
  /* f64 targets, huge magnitudes: summed in double, no overflow to inf */
  double big[2] = {1e30, -1e30};
  float pb[2] = {0, 0};
  dml_tensor_t pbt = tensor(DML_DTYPE_F32, 1, 2, 0, pb);
  dml_tensor_t ybt = tensor(DML_DTYPE_F64, 1, 2, 0, big);
  CHECK_NEAR(metric("mse", &pbt, &ybt), 1e60, 1e45);
  /* a NaN prediction makes the mean NaN (as NumPy's) */
  p[0] = NAN;
  CHECK(isnan(metric("mae", &pt, &yt)));
}

static void test_errors(void) {
  dml_metric_t m[DML_MAX_METRICS];
  int32_t n = 0;
  CHECK_OK(dml_metrics_parse("accuracy,f1,top5", m, &n));
  CHECK(n == 2 && m[0].kind == DML_METRIC_F1 && m[1].kind == DML_METRIC_TOPK &&
        m[1].k == 5);
  char name[32];
  CHECK(!strcmp(dml_metric_name(&m[1], name, sizeof name), "top5"));
  CHECK_ERROR(dml_metrics_parse("f1,foo", m, &n), DML_STATUS_INVALID_ARGUMENT,
              "unknown metric 'foo'");
  CHECK_ERROR(dml_metrics_parse("top0", m, &n), DML_STATUS_INVALID_ARGUMENT,
              "unknown metric 'top0'");
  CHECK_ERROR(dml_metrics_parse("mae,mae", m, &n), DML_STATUS_INVALID_ARGUMENT,
              "given twice");
  CHECK_ERROR(dml_metrics_parse("f1,,mae", m, &n), DML_STATUS_INVALID_ARGUMENT,
              "bad metric list");
  CHECK_ERROR(dml_metrics_parse("top1,top2,top3,top4,top5,top6,top7,top8,top9", m, &n),
              DML_STATUS_INVALID_ARGUMENT, "more than 8 metrics");
  /* class metrics on float targets; mae on integer labels; a bad label */
  dml_tensor_t p = tensor(DML_DTYPE_F32, 2, 6, 3, g_s);
  dml_tensor_t y = tensor(DML_DTYPE_I64, 1, 6, 0, g_y);
  float fy[6] = {0};
  dml_tensor_t yf = tensor(DML_DTYPE_F32, 1, 6, 0, fy);
  double v;
  CHECK_OK(dml_metrics_parse("recall,mae", m, &n));
  CHECK_ERROR(dml_metric_compute(&m[0], &p, &yf, &v), DML_STATUS_INVALID_ARGUMENT,
              "recall needs integer class labels");
  CHECK_ERROR(dml_metric_compute(&m[1], &p, &y, &v), DML_STATUS_INVALID_ARGUMENT,
              "mae needs float targets");
  int64_t bad[6] = {0, 1, 3, 0, 0, 0};
  dml_tensor_t yb = tensor(DML_DTYPE_I64, 1, 6, 0, bad);
  CHECK_ERROR(dml_metric_compute(&m[0], &p, &yb, &v), DML_STATUS_INVALID_ARGUMENT,
              "label 3 of row 2 is outside [0, 3)");
}

int main(void) {
  RUN(test_classes);
  RUN(test_auc);
  RUN(test_regression);
  RUN(test_errors);
  return dml_test_finish();
}
