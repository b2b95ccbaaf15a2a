/* test_train_schedule.c — learning-rate schedules against closed-form
 * values, the shuffling permutation, the early-stopping state machine. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_test.h"
#include "dml_trainer.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* Values computed by hand from the formulas of torch.optim.lr_scheduler
 * (StepLR, ExponentialLR, CosineAnnealingLR closed form, LinearLR warm-up);
 * tolerance 1e-15 relative (double arithmetic of pow/cos). */
static void test_step(void) {
  dml_lr_schedule_t s = {.kind = DML_LR_STEP, .initial = 0.1, .every = 2, .factor = 0.5};
  const double want[] = {0.1, 0.1, 0.05, 0.05, 0.025, 0.025, 0.0125};
  for (int e = 0; e < 7; e++) CHECK_NEAR(dml_lr_schedule_at(&s, e, 7), want[e], 1e-16);
}

static void test_exponential(void) {
  dml_lr_schedule_t s = {.kind = DML_LR_EXPONENTIAL, .initial = 0.1, .rate = 0.9};
  CHECK_NEAR(dml_lr_schedule_at(&s, 0, 5), 0.1, 1e-16);
  CHECK_NEAR(dml_lr_schedule_at(&s, 1, 5), 0.09, 1e-16);
  CHECK_NEAR(dml_lr_schedule_at(&s, 3, 5), 0.0729, 1e-16);
}

static void test_cosine(void) {
  dml_lr_schedule_t s = {.kind = DML_LR_COSINE, .initial = 1e-3, .minimum = 1e-5};
  CHECK_NEAR(dml_lr_schedule_at(&s, 0, 10), 1e-3, 1e-18);
  CHECK_NEAR(dml_lr_schedule_at(&s, 5, 10), 5.05e-4, 1e-18);
  CHECK_NEAR(dml_lr_schedule_at(&s, 10, 10), 1e-5, 1e-18);
  /* e = 2 of 8: 1e-5 + 0.99e-3 * (1 + cos(pi/4)) / 2 = 8.5501786e-4 */
  CHECK_NEAR(dml_lr_schedule_at(&s, 2, 8), 1e-5 + 0.99e-3 * (1 + sqrt(0.5)) / 2, 1e-18);
  CHECK_NEAR(dml_lr_schedule_at(&s, 2, 8), 8.550178566873411e-04, 1e-15);
  /* The closed form equals PyTorch's recursive form
   * eta_{t+1} = eta_min + (eta_t - eta_min) * (1 + cos(pi (t+1)/T)) / (1 + cos(pi t/T)).
   */
  double eta = 1e-3;
  for (int t = 0; t + 1 < 10; t++) {
    eta = 1e-5 +
          (eta - 1e-5) * (1 + cos(M_PI * (t + 1) / 10.0)) / (1 + cos(M_PI * t / 10.0));
    CHECK_NEAR(dml_lr_schedule_at(&s, t + 1, 10), eta, 1e-15);
  }
  /* warm-up 2 of 12 epochs: 1/3, 2/3 of initial, then the cosine over 10. */
  s.warmup = 2;
  CHECK_NEAR(dml_lr_schedule_at(&s, 0, 12), 1e-3 / 3, 1e-18);
  CHECK_NEAR(dml_lr_schedule_at(&s, 1, 12), 2e-3 / 3, 1e-18);
  CHECK_NEAR(dml_lr_schedule_at(&s, 2, 12), 1e-3, 1e-18);
  CHECK_NEAR(dml_lr_schedule_at(&s, 7, 12), 5.05e-4, 1e-18);
  CHECK_NEAR(dml_lr_schedule_at(&s, 12, 12), 1e-5, 1e-18);
}

static void test_parse(void) {
  dml_lr_schedule_t s;
  CHECK_OK(dml_lr_schedule_parse("cosine:1e-3,1e-5", &s));
  CHECK(s.kind == DML_LR_COSINE && s.initial == 1e-3 && s.minimum == 1e-5 &&
        s.warmup == 0);
  CHECK_OK(dml_lr_schedule_parse("cosine:1e-3,0,3", &s));
  CHECK(s.warmup == 3 && s.minimum == 0);
  CHECK_OK(dml_lr_schedule_parse("step:0.1,2,0.5", &s));
  CHECK(s.kind == DML_LR_STEP && s.every == 2 && s.factor == 0.5);
  CHECK_OK(dml_lr_schedule_parse("exp:0.1,0.95", &s));
  CHECK(s.kind == DML_LR_EXPONENTIAL && s.rate == 0.95);
  CHECK_OK(dml_lr_schedule_parse("constant:0.01", &s));
  CHECK(s.kind == DML_LR_CONSTANT && s.initial == 0.01);
  CHECK_ERROR(dml_lr_schedule_parse("cosine:1e-3", &s), DML_STATUS_INVALID_ARGUMENT,
              "cosine:INITIAL,MINIMUM[,WARMUP]");
  CHECK_ERROR(dml_lr_schedule_parse("linear:1", &s), DML_STATUS_INVALID_ARGUMENT,
              "bad --lr-schedule 'linear:1'");
  CHECK_ERROR(dml_lr_schedule_parse("step:0.1,0,0.5", &s), DML_STATUS_INVALID_ARGUMENT,
              "step:INITIAL,EVERY,FACTOR");
  CHECK_ERROR(dml_lr_schedule_parse("step:0.1,1.5,0.5", &s), DML_STATUS_INVALID_ARGUMENT,
              "bad --lr-schedule");
  CHECK_ERROR(dml_lr_schedule_parse("cosine:1e-5,1e-3", &s), DML_STATUS_INVALID_ARGUMENT,
              "minimum 0.001 must be in [0, initial 1e-05]");
  CHECK_ERROR(dml_lr_schedule_parse("exp:-1,0.5", &s), DML_STATUS_INVALID_ARGUMENT,
              "must be finite and > 0");
  CHECK_ERROR(dml_lr_schedule_parse("cosine:1e-3,1e-5,", &s), DML_STATUS_INVALID_ARGUMENT,
              "bad --lr-schedule");
}

static int is_perm(const int64_t *p, int64_t n) {
  char *seen = (char *)calloc((size_t)n + 1, 1);
  int ok = 1;
  for (int64_t i = 0; i < n; i++) {
    if (p[i] < 0 || p[i] >= n || seen[p[i]]) ok = 0;
    if (ok) seen[p[i]] = 1;
  }
  free(seen);
  return ok;
}

static void test_permutation(void) {
  enum { N = 1000 };
  static int64_t a[N], b[N], c[N], d[N];
  dml_train_permutation(N, 7, 0, a);
  dml_train_permutation(N, 7, 0, b);
  dml_train_permutation(N, 7, 1, c);
  dml_train_permutation(N, 8, 0, d);
  CHECK(is_perm(a, N) && is_perm(c, N) && is_perm(d, N));
  CHECK(!memcmp(a, b, sizeof a));
  CHECK(memcmp(a, c, sizeof a) != 0);
  CHECK(memcmp(a, d, sizeof a) != 0);
  int fixed = 0;
  for (int i = 0; i < N; i++) fixed += a[i] == i;
  CHECK(fixed < 10); /* a random permutation has 1 fixed point on average */
  int64_t one[1];
  dml_train_permutation(1, 3, 5, one);
  CHECK(one[0] == 0);
  dml_train_permutation(0, 3, 5, one); /* n = 0 touches nothing */
  /* Uniformity: where element 0 of 4 lands over 4000 epochs; each position
   * expects 1000; chi-square with 3 degrees of freedom below 16.27 (p = 0.001). */
  int count[4] = {0};
  for (int e = 0; e < 4000; e++) {
    int64_t p[4];
    dml_train_permutation(4, 11, (uint64_t)e, p);
    for (int k = 0; k < 4; k++)
      if (p[k] == 0) count[k]++;
  }
  double chi = 0;
  for (int k = 0; k < 4; k++) chi += (count[k] - 1000.0) * (count[k] - 1000.0) / 1000.0;
  CHECK(chi < 16.27);
}

static void test_early_stopping(void) {
  dml_early_stopping_state_t s;
  int imp;
  /* min mode, patience 2, min_delta 0.1 */
  dml_early_stopping_init(&s, 0, 0.1, 2);
  CHECK(!dml_early_stopping_update(&s, 1, 1.0, &imp) && imp);
  CHECK(!dml_early_stopping_update(&s, 2, 0.95, &imp) && !imp); /* not below 0.9 */
  CHECK(!dml_early_stopping_update(&s, 3, 0.8, &imp) && imp);
  CHECK(!dml_early_stopping_update(&s, 4, 0.85, &imp) && !imp);
  CHECK(dml_early_stopping_update(&s, 5, 0.75, &imp) && !imp); /* not below 0.7: stop */
  CHECK(s.best_epoch == 3 && s.best == 0.8);
  /* max mode, patience 1, min_delta 0 */
  dml_early_stopping_init(&s, 1, 0, 1);
  CHECK(!dml_early_stopping_update(&s, 1, 0.5, &imp) && imp);
  CHECK(!dml_early_stopping_update(&s, 2, 0.6, &imp) && imp);
  CHECK(dml_early_stopping_update(&s, 3, 0.6, &imp) &&
        !imp); /* equal is no improvement */
  CHECK(s.best_epoch == 2);
  /* NaN never improves */
  dml_early_stopping_init(&s, 0, 0, 3);
  CHECK(!dml_early_stopping_update(&s, 1, NAN, &imp) && !imp);
  CHECK(s.best_epoch == 0 && s.wait == 1);
}

/* 1 when `spec` is refused (the error freed). */
static int parse_fails(const char *spec) {
  dml_lr_schedule_t bad;
  dml_status_t st = dml_lr_schedule_parse(spec, &bad);
  dml_status_free(st);
  return st != DML_OK;
}

/* ReduceLROnPlateau: Keras' rules step by step (keras/src/callbacks/
 * reduce_lr_on_plateau.py: cooldown counts down and resets wait first, and
 * the epoch that ends it counts toward patience; an
 * improvement beats best by more than min_delta; after `patience`
 * non-improving epochs the rate becomes max(lr * factor, min_lr)). */
static void test_plateau(void) {
  dml_lr_schedule_t s;
  CHECK_OK(dml_lr_schedule_parse("plateau:0.1,0.5,2,0.02,1,0.01", &s));
  CHECK(s.kind == DML_LR_PLATEAU && s.initial == 0.1 && s.factor == 0.5 &&
        s.patience == 2 && s.minimum == 0.02 && s.cooldown == 1 && s.min_delta == 0.01);
  CHECK(dml_lr_schedule_at(&s, 7, 10) == 0.1);
  dml_lr_plateau_state_t p;
  dml_lr_plateau_init(&p, &s, 0);
  static const struct {
    double value, lr_after;
    int reduced;
  } k[] = {
      {1.00, 0.1, 0},  /* best 1.0 */
      {0.995, 0.1, 0}, /* not below 0.99: wait 1 */
      {0.99, 0.05, 1}, /* wait 2 = patience: halved, cooldown 1 */
      {1.5, 0.05, 0},  /* cooldown 1 -> 0 (wait 0), then counts: wait 1 */
      {1.5, 0.025, 1}, /* wait 2: halved, cooldown 1 */
      {0.5, 0.025, 0}, /* cooldown ends, and improves: best 0.5 */
      {0.6, 0.025, 0}, /* wait 1 */
      {0.6, 0.02, 1},  /* wait 2: max(0.0125, min_lr 0.02), cooldown 1 */
      {0.6, 0.02, 0},  /* cooldown ends: wait 1 */
      {0.6, 0.02, 0},  /* wait 2, but lr is at min_lr: stays */
      {NAN, 0.02, 0},  /* NaN never improves */
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    int r = dml_lr_plateau_update(&p, &s, k[i].value);
    CHECK(r == k[i].reduced && fabs(p.lr - k[i].lr_after) < 1e-15);
    if (r != k[i].reduced || fabs(p.lr - k[i].lr_after) >= 1e-15)
      fprintf(stderr, "plateau step %zu: got lr %g reduced %d\n", i, p.lr, r);
  }
  /* max mode (accuracies) */
  CHECK_OK(dml_lr_schedule_parse("plateau:1,0.1,1", &s));
  CHECK(s.minimum == 0 && s.cooldown == 0 && s.min_delta == 1e-4);
  dml_lr_plateau_init(&p, &s, 1);
  CHECK(!dml_lr_plateau_update(&p, &s, 0.5) && p.best == 0.5);
  CHECK(dml_lr_plateau_update(&p, &s, 0.50005) && fabs(p.lr - 0.1) < 1e-15);
  /* bad forms */
  CHECK(parse_fails("plateau:0.1,1.5,2"));     /* factor >= 1 */
  CHECK(parse_fails("plateau:0.1,0.5"));       /* no patience */
  CHECK(parse_fails("plateau:0.1,0.5,2.5"));   /* fractional */
  CHECK(parse_fails("plateau:0.1,0.5,2,0.2")); /* min_lr > initial */
}

/* `test_train_schedule --plateau SPEC MAXIMIZE V1 V2 ...` prints the rate
 * after each value, one per line (%.17g), for test_plateau_keras.py. */
static int plateau_trace(int argc, char **argv) {
  dml_lr_schedule_t s;
  if (argc < 4 || dml_lr_schedule_parse(argv[2], &s) != DML_OK) return 2;
  dml_lr_plateau_state_t p;
  dml_lr_plateau_init(&p, &s, atoi(argv[3]));
  for (int i = 4; i < argc; i++) {
    int r = dml_lr_plateau_update(&p, &s, strtod(argv[i], NULL));
    printf("%.17g %d\n", p.lr, r);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--plateau")) return plateau_trace(argc, argv);
  RUN(test_plateau);
  RUN(test_step);
  RUN(test_exponential);
  RUN(test_cosine);
  RUN(test_parse);
  RUN(test_permutation);
  RUN(test_early_stopping);
  return dml_test_finish();
}
