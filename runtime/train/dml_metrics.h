/*
 * dml_metrics.h — the trainer's metrics table: one definition per metric,
 * computed on the host from a model output (forward) and the targets.
 *
 * `pred` is forward's output for N rows, [N, C] class scores (logits or
 * probabilities; any float dtype) or [N, ...] values; `target` is the
 * dataset's y: [N] integer class indices, or float values with the same
 * element count as pred.
 *
 *   name       targets        definition
 *   accuracy   classes        the built-in accuracy (eval_step's `correct`:
 *                             argmax of the scores == label); not in the
 *                             table, accepted by dml_metrics_parse
 *   topK       classes        rows whose label's score is among the K
 *                             highest: #{c : s[c] > s[label]} < K (ties in
 *                             the label's favour); K in 1..1000
 *   precision  classes        macro: mean over classes c in labels ∪
 *                             predictions (sklearn's default labels) of
 *                             tp_c / (tp_c + fp_c), 0 when undefined
 *   recall     classes        macro: mean of tp_c / (tp_c + fn_c)
 *   f1         classes        macro: mean of 2 tp_c / (2 tp_c + fp_c + fn_c)
 *                             (= 2PR/(P+R) per class; sklearn f1_score
 *                             average='macro', zero_division=0)
 *   mae        values         mean |pred - target| over all elements
 *   mse        values         mean (pred - target)^2 over all elements
 *   auc        binary         ROC AUC = Mann-Whitney U / (P * Q), ties
 *                             counted 1/2 (sklearn roc_auc_score); the
 *                             score is the single output column, or
 *                             s[1] - s[0] for two classes (monotone in
 *                             p(1), so logits or probabilities give the
 *                             same AUC); targets 0/1 (integer, or float
 *                             > 0.5 positive); NaN with one class only
 *
 * Predictions are argmax over classes (the first of equal maxima); a row
 * whose scores hold a NaN predicts no class (a miss for topK, a false
 * negative of its label; the built-in accuracy, passes/train.c's `correct`,
 * follows the same rule); auc leaves a NaN score out; mae/mse propagate
 * NaN. Sums in double.
 */
#ifndef DML_METRICS_H_
#define DML_METRICS_H_

#include <stddef.h>
#include <stdint.h>

#include "dml_status.h"
#include "dml_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most metrics one fit reports. */
#define DML_MAX_METRICS 8

typedef enum dml_metric_kind {
  DML_METRIC_TOPK = 1,
  DML_METRIC_PRECISION,
  DML_METRIC_RECALL,
  DML_METRIC_F1,
  DML_METRIC_MAE,
  DML_METRIC_MSE,
  DML_METRIC_AUC,
} dml_metric_kind_t;

typedef struct dml_metric {
  dml_metric_kind_t kind;
  int32_t k; /* TOPK: K */
} dml_metric_t;

/* Parses "f1,top5,mae" (comma-separated names of the table above; "accuracy"
 * is accepted and adds nothing: it is always reported). Fills out[0..*n).
 * Errors: INVALID_ARGUMENT naming the unknown or repeated metric, or more
 * than DML_MAX_METRICS. */
dml_status_t dml_metrics_parse(const char *spec, dml_metric_t *out, int32_t *n);

/* The metric's name ("top5", "f1", ...) into buf. */
const char *dml_metric_name(const dml_metric_t *m, char *buf, size_t cap);

/* Computes metric `m` of `pred` against `target` (see the top of the file).
 * Errors: INVALID_ARGUMENT when the shapes or dtypes do not fit the metric
 * (class metrics on float targets, mae on integer targets, auc with more
 * than two classes, a label outside [0, C)), naming the metric. */
dml_status_t dml_metric_compute(const dml_metric_t *m, const dml_tensor_t *pred,
                                const dml_tensor_t *target, double *out);

#ifdef __cplusplus
}
#endif
#endif /* DML_METRICS_H_ */
