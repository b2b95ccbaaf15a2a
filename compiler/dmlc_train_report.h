/*
 * dmlc_train_report.h — the training history of `dmlc train` in the
 * machine-readable and visual forms of the command: JSON members for
 * `--json` and an SVG chart for `--plot`.
 */
#ifndef DMLC_TRAIN_REPORT_H_
#define DMLC_TRAIN_REPORT_H_

#include <stdio.h>

#include "dml_status.h"
#include "dml_trainer.h"

/* Writes the JSON members (no braces; the caller's object holds them)
 *   "history": [{"epoch", "loss", "accuracy", "val_loss", "val_accuracy",
 *                "lr", "seconds", "samples_per_second", "metrics": {NAME:
 *                value}}, ...],
 *   "validation": h->validation ("" without validation data; the table
 *                 metrics are then on the training rows),
 *   "stopped_early", "best_epoch" (0: none), "restored",
 *   "final": the epoch whose weights the package holds (the best epoch
 *            when early stopping restored it, else the last), as a history
 *            entry, or null when no epoch ran.
 * A metric that does not exist (NaN) is null. */
void dmlc_history_json(FILE *f, const dml_history_t *h);

/* Writes `h` as an SVG chart to `path` (atomically, as dml_file.h
 * replaces files): two panels, loss (loss, val_loss) and accuracy
 * (accuracy, val_accuracy), against the epoch, each with axes, ticks,
 * tick labels, axis labels and a legend; one <polyline> per series that
 * has a finite value (data-series="NAME"), with a dot per epoch. NaN and
 * infinite values are left out of the lines (a note under the chart
 * counts them). Hand-written SVG 1.1, no library. Errors: IO (the path and
 * strerror); RESOURCE_EXHAUSTED. */
dml_status_t dmlc_history_svg(const dml_history_t *h, const char *path);

#endif /* DMLC_TRAIN_REPORT_H_ */
