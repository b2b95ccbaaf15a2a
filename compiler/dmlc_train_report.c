/* dmlc_train_report.c — `dmlc train --json` history members and the
 * `--plot FILE.svg` chart (dmlc_train_report.h). */
#include "dmlc_train_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dml_file.h"
#include "dml_metrics.h"
#include "dmlc_cmds.h"

static void json_epoch(FILE *f, const dml_history_t *h, const dml_epoch_metrics_t *e) {
  static const char *const names[] = {
      "loss", "accuracy", "val_loss",          "val_accuracy",
      "lr",   "seconds",  "samples_per_second"};
  const double vals[] = {e->loss, e->accuracy, e->val_loss,          e->val_accuracy,
                         e->lr,   e->seconds,  e->samples_per_second};
  fprintf(f, "{\"epoch\": %d", (int)e->epoch);
  for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++) {
    fprintf(f, ", \"%s\": ", names[k]);
    dmlc_json_num(f, vals[k]);
  }
  /* Table metrics, named as the CSV's columns without the val_ prefix:
   * OUTPUT_NAME for a metric of one output of a multi-output package. */
  fputs(", \"metrics\": {", f);
  for (int32_t k = 0; k < h->n_metrics && k < DML_MAX_METRICS; k++) {
    char name[32], full[96];
    dml_metric_name(&h->metric[k], name, sizeof name);
    snprintf(full, sizeof full, "%.47s%s%s", h->metric_output[k],
             h->metric_output[k][0] ? "_" : "", name);
    fputs(k ? ", " : "", f);
    dmlc_json_str(f, full);
    fputs(": ", f);
    dmlc_json_num(f, e->metrics[k]);
  }
  fputc('}', f);
  /* Multi-output packages: each trained output's loss (unweighted) and
   * accuracy, on the training rows and the validation data. */
  if (h->n_outputs > 0) {
    fputs(", \"outputs\": {", f);
    for (int32_t j = 0; j < h->n_outputs && j < DML_MAX_DATA_TENSORS; j++) {
      fputs(j ? ", " : "", f);
      dmlc_json_str(f, h->output[j]);
      fputs(": {\"loss\": ", f);
      dmlc_json_num(f, e->output_loss[j]);
      fputs(", \"accuracy\": ", f);
      dmlc_json_num(f, e->output_accuracy[j]);
      fputs(", \"val_loss\": ", f);
      dmlc_json_num(f, e->val_output_loss[j]);
      fputs(", \"val_accuracy\": ", f);
      dmlc_json_num(f, e->val_output_accuracy[j]);
      fputc('}', f);
    }
    fputc('}', f);
  }
  fputc('}', f);
}

void dmlc_history_json(FILE *f, const dml_history_t *h) {
  fputs("\"history\": [", f);
  for (int32_t i = 0; i < h->n_epochs; i++) {
    fputs(i ? ", " : "", f);
    json_epoch(f, h, &h->epochs[i]);
  }
  fputs("], \"validation\": ", f);
  dmlc_json_str(f, h->validation);
  fprintf(f, ", \"stopped_early\": %s, \"best_epoch\": %d, \"restored\": %s, \"final\": ",
          h->stopped_early ? "true" : "false", (int)h->best_epoch,
          h->restored ? "true" : "false");
  const dml_epoch_metrics_t *fin = h->n_epochs ? &h->epochs[h->n_epochs - 1] : NULL;
  for (int32_t i = 0; h->restored && i < h->n_epochs; i++)
    if (h->epochs[i].epoch == h->best_epoch) fin = &h->epochs[i];
  if (fin)
    json_epoch(f, h, fin);
  else
    fputs("null", f);
}

/* ---- SVG ---- */

enum { W = 480, H = 380, ML = 72, MR = 18, MT = 46, MB = 64 }; /* one panel */

/* A "nice" tick step (1, 2 or 5 times a power of ten) for about n ticks
 * over `range` (> 0). */
static double nice_step(double range, int n) {
  double raw = range / n, p = pow(10, floor(log10(raw))), r = raw / p;
  return (r < 1.5 ? 1 : r < 3 ? 2 : r < 7 ? 5 : 10) * p;
}

/* Digits after the point that tick labels of step `step` need. */
static int step_decimals(double step) {
  int d = (int)-floor(log10(step) + 1e-9);
  return d < 0 ? 0 : d > 9 ? 9 : d;
}

/* The value of series `s` of epoch e: loss, val_loss, accuracy,
 * val_accuracy. */
static double series_value(const dml_epoch_metrics_t *e, int s) {
  return s == 0 ? e->loss : s == 1 ? e->val_loss : s == 2 ? e->accuracy : e->val_accuracy;
}

static const char *const k_series[4] = {"loss", "val_loss", "accuracy", "val_accuracy"};
static const char *const k_color[4] = {"#1f77b4", "#ff7f0e", "#1f77b4", "#ff7f0e"};

/* One panel (0: loss, 1: accuracy) at x offset `ox`. */
static void panel(FILE *f, const dml_history_t *h, int which, int ox, int *n_skipped) {
  const int pw = W - ML - MR, ph = H - MT - MB, x0 = ox + ML, y0 = MT + ph;
  double lo = INFINITY, hi = -INFINITY;
  int present[2] = {0, 0};
  for (int s = 0; s < 2; s++)
    for (int32_t i = 0; i < h->n_epochs; i++) {
      double v = series_value(&h->epochs[i], 2 * which + s);
      if (!isfinite(v)) {
        *n_skipped += isinf(v) ? 1 : 0;
        continue;
      }
      present[s] = 1;
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
    }
  if (!(lo <= hi)) lo = 0, hi = 1; /* no finite value: an empty panel */
  if (hi - lo < 1e-12 * (fabs(hi) + 1)) {
    double pad = fabs(hi) > 0 ? fabs(hi) * 0.1 : 0.5;
    lo -= pad, hi += pad;
  }
  double ystep = nice_step(hi - lo, 5);
  double ylo = floor(lo / ystep) * ystep, yhi = ceil(hi / ystep) * ystep;
  int n = h->n_epochs;
  double xlo = n > 1 ? 1 : 0, xhi = n > 1 ? n : 2;
  double xstep = n > 1 ? nice_step(xhi - xlo, 8) : 1;
  if (xstep < 1) xstep = 1;
#define PX(x) (x0 + ((x)-xlo) / (xhi - xlo) * pw)
#define PY(y) (y0 - ((y)-ylo) / (yhi - ylo) * ph)
  const char *title = which ? "accuracy" : "loss";
  fprintf(f,
          "<g class=\"panel\" data-panel=\"%s\">\n"
          "<text x=\"%d\" y=\"24\" font-size=\"16\" text-anchor=\"middle\">%s per "
          "epoch</text>\n",
          title, x0 + pw / 2, title);
  /* grid lines and y ticks */
  int yd = step_decimals(ystep);
  for (int k = 0; k <= 1000; k++) {
    double y = ylo + k * ystep;
    if (y > yhi + ystep * 1e-6) break;
    double py = PY(y);
    fprintf(f,
            "<line x1=\"%d\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\" stroke=\"#e0e0e0\"/>\n"
            "<line x1=\"%d\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\" stroke=\"black\"/>\n"
            "<text class=\"ytick\" x=\"%d\" y=\"%.2f\" font-size=\"11\" "
            "text-anchor=\"end\">%.*f</text>\n",
            x0, py, x0 + pw, py, x0 - 5, py, x0, py, x0 - 8, py + 4, yd, y);
  }
  for (int k = 0; k <= 1000; k++) {
    double x = 1 + k * xstep;
    if (x > (n > 1 ? n : 1) + 1e-9) break;
    double px = PX(x);
    fprintf(f,
            "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" stroke=\"black\"/>\n"
            "<text class=\"xtick\" x=\"%.2f\" y=\"%d\" font-size=\"11\" "
            "text-anchor=\"middle\">%.0f</text>\n",
            px, y0, px, y0 + 5, px, y0 + 18, x);
  }
  /* axes and their labels */
  fprintf(
      f,
      "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n"
      "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n"
      "<text class=\"xlabel\" x=\"%d\" y=\"%d\" font-size=\"13\" "
      "text-anchor=\"middle\">epoch</text>\n"
      "<text class=\"ylabel\" x=\"%d\" y=\"%d\" font-size=\"13\" text-anchor=\"middle\" "
      "transform=\"rotate(-90 %d %d)\">%s</text>\n",
      x0, y0, x0 + pw, y0, x0, y0, x0, MT, x0 + pw / 2, y0 + 40, ox + 18, MT + ph / 2,
      ox + 18, MT + ph / 2, title);
  /* the series and the legend */
  for (int s = 0; s < 2; s++) {
    if (!present[s]) continue;
    int si = 2 * which + s;
    fprintf(f,
            "<polyline class=\"series\" data-series=\"%s\" fill=\"none\" stroke=\"%s\" "
            "stroke-width=\"2\"%s points=\"",
            k_series[si], k_color[si], s ? " stroke-dasharray=\"6 3\"" : "");
    for (int32_t i = 0; i < n; i++) {
      double v = series_value(&h->epochs[i], si);
      if (isfinite(v)) fprintf(f, "%.2f,%.2f ", PX(h->epochs[i].epoch), PY(v));
    }
    fputs("\"/>\n", f);
    for (int32_t i = 0; i < n; i++) {
      double v = series_value(&h->epochs[i], si);
      if (isfinite(v))
        fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"2.5\" fill=\"%s\"/>\n",
                PX(h->epochs[i].epoch), PY(v), k_color[si]);
    }
    /* the legend under the axis label, clear of the curves */
    int ly = y0 + 56, lx = x0 + 150 * s;
    fprintf(f,
            "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
            "stroke-width=\"2\"%s/>\n"
            "<text class=\"legend\" x=\"%d\" y=\"%d\" font-size=\"12\">%s</text>\n",
            lx, ly, lx + 24, ly, k_color[si], s ? " stroke-dasharray=\"6 3\"" : "",
            lx + 30, ly + 4, k_series[si]);
  }
#undef PX
#undef PY
  fputs("</g>\n", f);
}

dml_status_t dmlc_history_svg(const dml_history_t *h, const char *path) {
  static const char *op = "dmlc.train";
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, op, "out of memory");
  int skipped = 0;
  fprintf(f,
          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
          "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n"
          "<title>dmlc train: loss and accuracy per epoch</title>\n"
          "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
          2 * W, H + 24, 2 * W, H + 24);
  panel(f, h, 0, 0, &skipped);
  panel(f, h, 1, W, &skipped);
  const char *v = h->validation;
  fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#555\">%d epochs; ", ML,
          H + 14, (int)h->n_epochs);
  fputs(v[0] ? "val_ series on the " : "no validation data", f);
  for (const char *p = v; *p; p++) /* "split", "test", "validation": XML-escaped */
    fputs(*p == '<' ? "&lt;" : *p == '&' ? "&amp;" : (char[2]){*p, 0}, f);
  fputs(v[0] ? " data" : "", f);
  if (skipped) fprintf(f, "; %d infinite values left out of the lines", skipped);
  fputs("</text>\n</svg>\n", f);
  if (fclose(f) || !buf) {
    free(buf);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, op, "out of memory");
  }
  const void *parts[1] = {buf};
  size_t sizes[1] = {len};
  dml_status_t st = dml_file_write_atomic(op, path, parts, sizes, 1);
  free(buf);
  return st;
}
