/* dml_lr_schedule.c — learning-rate schedules, shuffling, early stopping
 * (the pure parts of the training loop; formulas in dml_trainer.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dml_philox.h"
#include "dml_trainer.h"

#define OP "train"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

double dml_lr_schedule_at(const dml_lr_schedule_t *s, int32_t epoch,
                          int32_t total_epochs) {
  if (epoch < 0) epoch = 0;
  switch (s->kind) {
    case DML_LR_STEP:
      return s->initial * pow(s->factor, (double)(epoch / (s->every > 0 ? s->every : 1)));
    case DML_LR_EXPONENTIAL: return s->initial * pow(s->rate, (double)epoch);
    case DML_LR_COSINE: {
      int32_t w = s->warmup > 0 ? s->warmup : 0;
      if (epoch < w) return s->initial * (double)(epoch + 1) / (double)(w + 1);
      int32_t t_max = total_epochs - w;
      if (t_max <= 0) return s->minimum;
      double t = (double)(epoch - w);
      if (t > t_max) t = t_max;
      return s->minimum + (s->initial - s->minimum) * (1.0 + cos(M_PI * t / t_max)) / 2.0;
    }
    case DML_LR_PLATEAU: /* decided by the values seen: dml_lr_plateau_update */
    case DML_LR_CONSTANT:
    default: return s->initial;
  }
}

void dml_lr_plateau_init(dml_lr_plateau_state_t *p, const dml_lr_schedule_t *s,
                         int maximize) {
  memset(p, 0, sizeof *p);
  p->lr = s->initial;
  p->maximize = maximize ? 1 : 0;
  p->best = maximize ? -INFINITY : INFINITY;
}

int dml_lr_plateau_update(dml_lr_plateau_state_t *p, const dml_lr_schedule_t *s,
                          double value) {
  /* Keras' ReduceLROnPlateau.on_epoch_end, step for step: the cooldown
   * counts down first (resetting wait), and "in cooldown" is asked again
   * after that, so the epoch that ends the cooldown counts toward patience;
   * wait is reset only when the rate is reduced. */
  if (p->cooldown_counter > 0) {
    p->cooldown_counter--;
    p->wait = 0;
  }
  int improved = !isnan(value) && (p->maximize ? value > p->best + s->min_delta
                                               : value < p->best - s->min_delta);
  if (improved) {
    p->best = value;
    p->wait = 0;
    return 0;
  }
  if (p->cooldown_counter > 0) return 0;
  if (++p->wait < s->patience) return 0;
  if (!(p->lr > s->minimum)) return 0;
  double lr = p->lr * s->factor;
  p->lr = lr > s->minimum ? lr : s->minimum;
  p->cooldown_counter = s->cooldown;
  p->wait = 0;
  return 1;
}

dml_status_t dml_lr_schedule_check(const dml_lr_schedule_t *s) {
  if (!s) return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "NULL schedule");
  if (!(s->initial > 0) || !isfinite(s->initial))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "learning rate %g must be finite and > 0", s->initial);
  switch (s->kind) {
    case DML_LR_CONSTANT: return DML_OK;
    case DML_LR_PLATEAU:
      if (!(s->factor > 0 && s->factor < 1))
        return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                               "plateau schedule: factor %g must be in (0, 1)",
                               s->factor);
      if (s->patience < 0 || s->cooldown < 0)
        return dml_status_make(
            DML_STATUS_INVALID_ARGUMENT, OP,
            "plateau schedule: patience %d and cooldown %d must be >= 0", s->patience,
            s->cooldown);
      if (!(s->minimum >= 0) || s->minimum > s->initial || !(s->min_delta >= 0) ||
          !isfinite(s->min_delta))
        return dml_status_make(
            DML_STATUS_INVALID_ARGUMENT, OP,
            "plateau schedule: min_lr %g must be in [0, initial %g] and "
            "min_delta %g finite and >= 0",
            s->minimum, s->initial, s->min_delta);
      return DML_OK;
    case DML_LR_STEP:
      if (s->every < 1)
        return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                               "step schedule: every = %d epochs must be >= 1", s->every);
      if (!(s->factor > 0) || !isfinite(s->factor))
        return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                               "step schedule: factor %g must be finite and > 0",
                               s->factor);
      return DML_OK;
    case DML_LR_EXPONENTIAL:
      if (!(s->rate > 0) || !isfinite(s->rate))
        return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                               "exponential schedule: rate %g must be finite and > 0",
                               s->rate);
      return DML_OK;
    case DML_LR_COSINE:
      if (!(s->minimum >= 0) || s->minimum > s->initial)
        return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                               "cosine schedule: minimum %g must be in [0, initial %g]",
                               s->minimum, s->initial);
      if (s->warmup < 0)
        return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                               "cosine schedule: warm-up %d must be >= 0", s->warmup);
      return DML_OK;
  }
  return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "unknown schedule kind %d",
                         (int)s->kind);
}

/* Parses up to `max` comma-separated numbers of `s`; returns the count or
 * -1 on a malformed number. */
static int parse_numbers(const char *s, double *out, int max) {
  int n = 0;
  while (*s) {
    if (n == max) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno) return -1;
    out[n++] = v;
    if (*end == ',') {
      s = end + 1;
      if (!*s) return -1;
    } else if (*end) {
      return -1;
    } else {
      s = end;
    }
  }
  return n;
}

dml_status_t dml_lr_schedule_parse(const char *spec, dml_lr_schedule_t *out) {
  static const char *forms =
      "expected constant:LR, step:INITIAL,EVERY,FACTOR, exponential:INITIAL,RATE, "
      "cosine:INITIAL,MINIMUM[,WARMUP] or "
      "plateau:INITIAL,FACTOR,PATIENCE[,MIN_LR[,COOLDOWN[,MIN_DELTA]]]";
  if (!spec || !out)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "NULL argument");
  const char *colon = strchr(spec, ':');
  if (!colon)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "bad --lr-schedule '%s': %s",
                           spec, forms);
  size_t kl = (size_t)(colon - spec);
  double v[6];
  int n = parse_numbers(colon + 1, v, 6);
  dml_lr_schedule_t s;
  memset(&s, 0, sizeof s);
  int ok = 0;
#define KIND_IS(name) (kl == strlen(name) && !strncmp(spec, name, kl))
  if (KIND_IS("constant") && n == 1) {
    s.kind = DML_LR_CONSTANT, s.initial = v[0], ok = 1;
  } else if (KIND_IS("step") && n == 3 && v[1] == floor(v[1]) && v[1] >= 1 &&
             v[1] < 1e9) {
    s.kind = DML_LR_STEP, s.initial = v[0], s.every = (int32_t)v[1], s.factor = v[2],
    ok = 1;
  } else if ((KIND_IS("exponential") || KIND_IS("exp")) && n == 2) {
    s.kind = DML_LR_EXPONENTIAL, s.initial = v[0], s.rate = v[1], ok = 1;
  } else if (KIND_IS("cosine") && (n == 2 || n == 3)) {
    s.kind = DML_LR_COSINE, s.initial = v[0], s.minimum = v[1], ok = 1;
    if (n == 3) {
      if (v[2] != floor(v[2]) || v[2] < 0 || v[2] > 1e9) ok = 0;
      s.warmup = ok ? (int32_t)v[2] : 0;
    }
  } else if (KIND_IS("plateau") && n >= 3 && v[2] == floor(v[2]) && v[2] >= 0 &&
             v[2] < 1e9 && (n < 5 || (v[4] == floor(v[4]) && v[4] >= 0 && v[4] < 1e9))) {
    s.kind = DML_LR_PLATEAU, s.initial = v[0], s.factor = v[1],
    s.patience = (int32_t)v[2];
    s.minimum = n > 3 ? v[3] : 0;
    s.cooldown = n > 4 ? (int32_t)v[4] : 0;
    s.min_delta = n > 5 ? v[5] : 1e-4;
    ok = 1;
  }
#undef KIND_IS
  if (!ok)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "bad --lr-schedule '%s': %s",
                           spec, forms);
  dml_status_t st = dml_lr_schedule_check(&s);
  if (st) return dml_status_annotate(st, "parsing --lr-schedule '%s'", spec);
  *out = s;
  return DML_OK;
}

void dml_train_permutation(int64_t n, uint64_t seed, uint64_t epoch, int64_t *perm) {
  for (int64_t i = 0; i < n; i++) perm[i] = i;
  dml_philox_stream_t st;
  dml_philox_stream_init(&st, seed, epoch, 0xFFFFFFFFu);
  for (int64_t i = n - 1; i >= 1; i--) {
    double u = dml_philox_uniform_f64(&st, (uint64_t)i);
    int64_t j = (int64_t)(u * (double)(i + 1));
    if (j > i) j = i; /* u < 1, so never; kept for safety against rounding */
    int64_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
}

void dml_early_stopping_init(dml_early_stopping_state_t *s, int maximize,
                             double min_delta, int32_t patience) {
  memset(s, 0, sizeof *s);
  s->maximize = maximize ? 1 : 0;
  s->min_delta = fabs(min_delta);
  s->patience = patience < 0 ? 0 : patience;
  s->best = maximize ? -INFINITY : INFINITY;
  s->best_epoch = 0;
  s->wait = 0;
}

int dml_early_stopping_update(dml_early_stopping_state_t *s, int32_t epoch, double value,
                              int *out_improved) {
  int improved = !isnan(value) && (s->maximize ? value > s->best + s->min_delta
                                               : value < s->best - s->min_delta);
  if (out_improved) *out_improved = improved;
  if (improved) {
    s->best = value;
    s->best_epoch = epoch;
    s->wait = 0;
    return 0;
  }
  s->wait++;
  return s->wait >= s->patience;
}
