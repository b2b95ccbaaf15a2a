/* test_trainer.c — the training loop (runtime/train/dml_trainer.h) on
 * hand-written training packages: linear regression by SGD with explicit
 * gradient ops and Assign nodes (the shape of what dml_train_build()
 * emits). Checks fit against a plain C reference of the same SGD, the
 * row-weighted averages, determinism, validation, early stopping through
 * the user callback, checkpoints (round trip, resume == uninterrupted,
 * errors), predict, the trained package and the history CSV. */
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dml_ir.h"
#include "dml_ir_text.h"
#include "dml_package_emit.h"
#include "dml_passes.h"
#include "dml_rt.h"
#include "dml_safetensors.h"
#include "dml_test.h"
#include "dml_trainer.h"

/* y = x @ w + b; loss = mean((y - t)^2); dL/dw = 2 mean_rows(x * d)^T,
 * dL/db = 2 mean_rows(d); SGD: p -= lr * g. `correct`: rows with
 * |y - t| < 0.5. NOISE_* adds 0.05 * N(0,1) to x in train_step (a random
 * op, to check per-step seeding). */
#define MODULE_HEAD                                                                      \
  "sym batch <= 8\n"                                                                     \
  "global @w : f32[2,1] param = dense<[0.0, 0.0]>\n"                                     \
  "global @b : f32[1] param = dense<[0.0]>\n"                                            \
  "global @steps : f32[] state = dense<[0.0]>\n"                                         \
  "global @one : f32[] = dense<[1.0]>\n"                                                 \
  "global @two : f32[] = dense<[2.0]>\n"                                                 \
  "global @half : f32[] = dense<[0.5]>\n"                                                \
  "func @forward(%input: f32[batch,2]) -> (?[?]) {\n"                                    \
  "  %m = MatMul(%input, @w)\n"                                                          \
  "  %y = Add(%m, @b)\n"                                                                 \
  "  return %y\n"                                                                        \
  "}\n"                                                                                  \
  "func @eval_step(%input: f32[batch,2], %target: f32[batch,1]) -> (?[?], ?[?]) {\n"     \
  "  %m = MatMul(%input, @w)\n"                                                          \
  "  %y = Add(%m, @b)\n"                                                                 \
  "  %d = Sub(%y, %target)\n"                                                            \
  "  %sq = Mul(%d, %d)\n"                                                                \
  "  %loss = ReduceMean(%sq) {keepdims = 0}\n"                                           \
  "  %ad = Abs(%d)\n"                                                                    \
  "  %ok = Less(%ad, @half)\n"                                                           \
  "  %okc = Cast(%ok) {to = 7}\n"                                                        \
  "  %correct = ReduceSum(%okc) {keepdims = 0}\n"                                        \
  "  return %loss, %correct\n"                                                           \
  "}\n"                                                                                  \
  "func @train_step(%input: f32[batch,2], %target: f32[batch,1], %lr: f32[]) -> (?[?], " \
  "?[?]) {\n"

#define TRAIN_BODY                                        \
  "  %m = MatMul(%xin, @w)\n"                             \
  "  %y = Add(%m, @b)\n"                                  \
  "  %d = Sub(%y, %target)\n"                             \
  "  %sq = Mul(%d, %d)\n"                                 \
  "  %loss = ReduceMean(%sq) {keepdims = 0}\n"            \
  "  %xd = Mul(%xin, %d)\n"                               \
  "  %gw0 = ReduceMean(%xd) {axes = [0], keepdims = 1}\n" \
  "  %gw1 = Transpose(%gw0) {perm = [1, 0]}\n"            \
  "  %gw = Mul(%gw1, @two)\n"                             \
  "  %gb0 = ReduceMean(%d) {axes = [0], keepdims = 0}\n"  \
  "  %gb = Mul(%gb0, @two)\n"                             \
  "  %sw = Mul(%gw, %lr)\n"                               \
  "  %nw = Sub(@w, %sw)\n"                                \
  "  %sb = Mul(%gb, %lr)\n"                               \
  "  %nb = Sub(@b, %sb)\n"                                \
  "  %ns = Add(@steps, @one)\n"                           \
  "  %ad = Abs(%d)\n"                                     \
  "  %ok = Less(%ad, @half)\n"                            \
  "  %okc = Cast(%ok) {to = 7}\n"                         \
  "  %correct = ReduceSum(%okc) {keepdims = 0}\n"         \
  "  Assign(@w, %nw)\n"                                   \
  "  Assign(@b, %nb)\n"                                   \
  "  Assign(@steps, %ns)\n"                               \
  "  return %loss, %correct\n"                            \
  "}\n"

static const char *k_plain = MODULE_HEAD "  %xin = Identity(%input)\n" TRAIN_BODY;
static const char *k_noise = MODULE_HEAD
    "  %nz = RandomNormalLike(%input) {scale = 0.05}\n"
    "  %xin = Add(%input, %nz)\n" TRAIN_BODY;

static void *g_pkg;
static size_t g_pkg_size;

static dml_rt_model_t *build(const char *text, int keep_bytes) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_ir_parse(text, strlen(text), "trainer.dmlir", &m));
  if (!m) return NULL;
  dml_pass_options_t o;
  memset(&o, 0, sizeof o);
  CHECK_OK(dml_pass_run_pipeline(m, dml_pass_default_pipeline(), &o));
  void *bytes = NULL;
  size_t size = 0;
  CHECK_OK(dml_package_emit_memory(m, NULL, &bytes, &size));
  dml_ir_module_release(m);
  dml_rt_model_t *model = NULL;
  CHECK_OK(dml_rt_model_load_memory(bytes, size, &model));
  if (keep_bytes) {
    free(g_pkg);
    g_pkg = bytes;
    g_pkg_size = size;
  } else {
    free(bytes);
  }
  return model;
}

enum { N = 100 };
static float g_x[N * 2], g_y[N];
static dml_dataset_t g_data;

/* y = 2 x0 - 3 x1 + 0.5 on x in [-1, 1] (a fixed LCG). */
static void make_data(void) {
  uint32_t s = 12345;
  for (int i = 0; i < N * 2; i++) {
    s = s * 1664525u + 1013904223u;
    g_x[i] = (float)((s >> 8) * (1.0 / 16777216.0) * 2 - 1);
  }
  for (int i = 0; i < N; i++) g_y[i] = 2 * g_x[2 * i] - 3 * g_x[2 * i + 1] + 0.5f;
  memset(&g_data, 0, sizeof g_data);
  g_data.x.dtype = DML_DTYPE_F32;
  g_data.x.rank = 2;
  g_data.x.dims[0] = N;
  g_data.x.dims[1] = 2;
  g_data.x.data = g_x;
  g_data.y.dtype = DML_DTYPE_F32;
  g_data.y.rank = 2;
  g_data.y.dims[0] = N;
  g_data.y.dims[1] = 1;
  g_data.y.data = g_y;
}

static void quiet(dml_fit_options_t *o) {
  dml_fit_options_init(o);
  o->epochs = 1;
  o->validation_split = 0; /* each test says what validates */
  o->verbose = 0;
  o->batch_size = 8;
  o->lr.initial = 0.1;
}

static float global_f(dml_trainer_t *t, const char *name, int i) {
  dml_rt_session_t *s = dml_trainer_session(t, "train_step");
  const dml_rt_model_t *m = NULL;
  (void)m;
  dml_tensor_t v;
  memset(&v, 0, sizeof v);
  /* globals are sorted by name: b, steps, w */
  int idx = !strcmp(name, "b") ? 0 : !strcmp(name, "steps") ? 1 : 2;
  dml_status_t st = dml_rt_session_global(s, (uint32_t)idx, &v);
  if (st) {
    dml_status_free(st);
    return NAN;
  }
  return ((const float *)v.data)[i];
}

/* The same SGD in plain C (double accumulation, float parameters as the
 * package keeps them): the per-epoch mean loss weighted by rows. */
static void reference_fit(int epochs, int64_t bs, uint64_t seed, double lr,
                          double *losses, float *w_out, float *b_out) {
  float w[2] = {0, 0}, b = 0;
  int64_t perm[N];
  for (int e = 0; e < epochs; e++) {
    dml_train_permutation(N, seed, (uint64_t)e, perm);
    double sum = 0;
    for (int64_t s = 0; s < N; s += bs) {
      int64_t end = s + bs < N ? s + bs : N, nb = end - s;
      double l = 0, gw0 = 0, gw1 = 0, gb = 0;
      for (int64_t k = s; k < end; k++) {
        const float *x = &g_x[2 * perm[k]];
        double d = (double)(x[0] * w[0] + x[1] * w[1] + b) - g_y[perm[k]];
        l += d * d;
        gw0 += x[0] * d;
        gw1 += x[1] * d;
        gb += d;
      }
      sum += l;
      w[0] -= (float)(lr * 2 * gw0 / (double)nb);
      w[1] -= (float)(lr * 2 * gw1 / (double)nb);
      b -= (float)(lr * 2 * gb / (double)nb);
    }
    losses[e] = sum / N;
  }
  w_out[0] = w[0];
  w_out[1] = w[1];
  *b_out = b;
}

static void test_fit_matches_reference(void) {
  dml_rt_model_t *m = build(k_plain, 0);
  dml_trainer_t *t = NULL;
  CHECK_OK(dml_trainer_create(m, "cpu", &t));
  if (!t) return;
  CHECK(dml_trainer_batch_bound(t) == 8);
  dml_fit_options_t o;
  quiet(&o);
  o.epochs = 20;
  o.seed = 3;
  dml_history_t h;
  CHECK_OK(dml_trainer_fit(t, &g_data, &o, &h));
  double ref[20];
  float w[2], b;
  reference_fit(20, 8, 3, 0.1, ref, w, &b);
  CHECK(h.n_epochs == 20);
  /* float kernels vs the double reference: 1e-4 relative */
  for (int e = 0; e < 20 && e < h.n_epochs; e++) {
    CHECK_NEAR(h.epochs[e].loss, ref[e], 1e-4 * ref[e] + 1e-7);
    CHECK(h.epochs[e].epoch == e + 1 && h.epochs[e].lr == 0.1);
    CHECK(isnan(h.epochs[e].val_loss) && !isnan(h.epochs[e].accuracy));
  }
  CHECK(h.epochs[19].loss < 1e-4 && h.epochs[0].loss > 1);
  CHECK_NEAR(global_f(t, "w", 0), w[0], 1e-4);
  CHECK_NEAR(global_f(t, "w", 1), w[1], 1e-4);
  CHECK_NEAR(global_f(t, "b", 0), b, 1e-4);
  CHECK_NEAR(global_f(t, "w", 0), 2.0, 1e-2);
  CHECK_NEAR(global_f(t, "w", 1), -3.0, 1e-2);
  CHECK_NEAR(global_f(t, "b", 0), 0.5, 1e-2);
  CHECK(global_f(t, "steps", 0) == 20 * 13); /* ceil(100 / 8) steps per epoch */
  CHECK(dml_trainer_step(t) == 260 && dml_trainer_epoch(t) == 20);
  CHECK(h.epochs[19].accuracy == 1.0); /* every row within 0.5 */

  /* evaluate: the mean over rows does not depend on the batch size, and
   * equals the loss computed here from the trained parameters. */
  double l8, l3, a8, a3, want = 0;
  CHECK_OK(dml_trainer_evaluate(t, &g_data, 0, &l8, &a8));
  CHECK_OK(dml_trainer_evaluate(t, &g_data, 3, &l3, &a3));
  for (int i = 0; i < N; i++) {
    double d = (double)(g_x[2 * i] * global_f(t, "w", 0) +
                        g_x[2 * i + 1] * global_f(t, "w", 1) + global_f(t, "b", 0)) -
               g_y[i];
    want += d * d / N;
  }
  CHECK_NEAR(l8, want, 1e-6 * want + 1e-9);
  CHECK_NEAR(l3, want, 1e-6 * want + 1e-9);
  CHECK(a8 == a3 && a8 == 1.0);

  /* predict over more rows than the bound */
  dml_tensor_t xt = g_data.x, out;
  xt.dims[0] = 13;
  void *buf = NULL;
  CHECK_OK(dml_trainer_predict(t, &xt, 0, &out, &buf));
  CHECK(out.rank == 2 && out.dims[0] == 13 && out.dims[1] == 1);
  for (int i = 0; buf && i < 13; i++) {
    float p = g_x[2 * i] * global_f(t, "w", 0) + g_x[2 * i + 1] * global_f(t, "w", 1) +
              global_f(t, "b", 0);
    CHECK_NEAR(((const float *)out.data)[i], p, 1e-5);
  }
  free(buf);
  CHECK_ERROR(dml_trainer_predict(t, &xt, 1, &out, &buf), DML_STATUS_OUT_OF_RANGE,
              "forward has 1 outputs");
  dml_history_free(&h);
  dml_trainer_release(t);
  dml_rt_model_release(m);
}

static void run_fit(const char *module, const dml_fit_options_t *o, dml_history_t *h) {
  dml_rt_model_t *m = build(module, 0);
  dml_trainer_t *t = NULL;
  CHECK_OK(dml_trainer_create(m, "cpu", &t));
  CHECK_OK(dml_trainer_fit(t, &g_data, o, h));
  dml_trainer_release(t);
  dml_rt_model_release(m);
}

static void test_determinism(void) {
  dml_fit_options_t o;
  quiet(&o);
  o.epochs = 3;
  o.seed = 42;
  dml_history_t a, b, c;
  run_fit(k_noise, &o, &a);
  run_fit(k_noise, &o, &b);
  o.seed = 43;
  run_fit(k_noise, &o, &c);
  CHECK(a.n_epochs == 3 && b.n_epochs == 3 && c.n_epochs == 3);
  for (int e = 0; e < 3 && a.n_epochs == 3 && b.n_epochs == 3; e++) {
    CHECK(!memcmp(&a.epochs[e].loss, &b.epochs[e].loss,
                  sizeof(double))); /* bit-identical */
    CHECK(a.epochs[e].loss != c.epochs[e].loss);
  }
  /* without shuffling, the order is the data's and the seed only moves the
   * noise */
  dml_history_free(&a);
  dml_history_free(&b);
  dml_history_free(&c);
  quiet(&o);
  o.epochs = 2;
  o.shuffle = 0;
  run_fit(k_plain, &o, &a);
  o.seed = 99;
  run_fit(k_plain, &o, &b);
  CHECK(a.n_epochs == 2 && b.n_epochs == 2 && a.epochs[1].loss == b.epochs[1].loss);
  dml_history_free(&a);
  dml_history_free(&b);
}

static void test_validation_and_schedule(void) {
  dml_rt_model_t *m = build(k_plain, 0);
  dml_trainer_t *t = NULL;
  CHECK_OK(dml_trainer_create(m, "cpu", &t));
  if (!t) return;
  dml_fit_options_t o;
  quiet(&o);
  o.epochs = 4;
  o.validation_split = 0.2; /* the last 20 rows */
  CHECK_OK(dml_lr_schedule_parse("step:0.1,2,0.5", &o.lr));
  dml_history_t h;
  CHECK_OK(dml_trainer_fit(t, &g_data, &o, &h));
  CHECK(h.n_epochs == 4);
  if (h.n_epochs == 4) {
    CHECK(h.epochs[0].lr == 0.1 && h.epochs[1].lr == 0.1 && h.epochs[2].lr == 0.05 &&
          h.epochs[3].lr == 0.05);
    dml_dataset_t val;
    CHECK_OK(dml_dataset_slice(&g_data, 80, 100, &val));
    double vl, va;
    CHECK_OK(dml_trainer_evaluate(t, &val, 0, &vl, &va));
    CHECK(vl == h.epochs[3].val_loss && va == h.epochs[3].val_accuracy);
    CHECK(h.epochs[3].step == 4 * 10); /* 80 training rows: 10 steps */
  }
  dml_history_free(&h);
  /* the history CSV */
  char path[128];
  snprintf(path, sizeof path, "/tmp/dmlc_trainer_hist.%ld.csv", (long)getpid());
  dml_history_t fake = {0};
  dml_epoch_metrics_t em[2] = {{.epoch = 1,
                                .loss = 0.5,
                                .accuracy = NAN,
                                .val_loss = 0.25,
                                .val_accuracy = NAN,
                                .lr = 0.001,
                                .seconds = 2},
                               {.epoch = 2,
                                .loss = 0.125,
                                .accuracy = 0.75,
                                .val_loss = NAN,
                                .val_accuracy = 1,
                                .lr = 1e-4,
                                .seconds = 1.5}};
  fake.n_epochs = 2;
  fake.epochs = em;
  CHECK_OK(dml_history_write_csv(&fake, path));
  FILE *f = fopen(path, "r");
  char text[512] = {0};
  if (f) {
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
  }
  CHECK(!strcmp(text,
                "epoch,loss,accuracy,val_loss,val_accuracy,lr,seconds,validation\n"
                "1,0.5,,0.25,,0.001,2,\n"
                "2,0.125,0.75,,1,0.0001,1.5,\n"));
  /* with table metrics on the split: one val_ column each */
  snprintf(fake.validation, sizeof fake.validation, "split");
  fake.n_metrics = 2;
  CHECK_OK(dml_metrics_parse("top3,mse", fake.metric, &fake.n_metrics));
  em[0].metrics[0] = 0.5;
  em[0].metrics[1] = NAN;
  em[1].metrics[0] = 1;
  em[1].metrics[1] = 0.0625;
  CHECK_OK(dml_history_write_csv(&fake, path));
  f = fopen(path, "r");
  memset(text, 0, sizeof text);
  if (f) {
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
  }
  CHECK(
      !strcmp(text,
              "epoch,loss,accuracy,val_loss,val_accuracy,lr,seconds,validation,val_top3,"
              "val_mse\n"
              "1,0.5,,0.25,,0.001,2,split,0.5,\n"
              "2,0.125,0.75,,1,0.0001,1.5,split,1,0.0625\n"));
  unlink(path);

  /* bad options and data */
  quiet(&o);
  o.batch_size = 9;
  CHECK_ERROR(dml_trainer_fit(t, &g_data, &o, &h), DML_STATUS_INVALID_ARGUMENT,
              "batch size 9 must be in [1, 8]");
  /* the defaults: 10 epochs, the last 10% of the rows validate */
  dml_fit_options_init(&o);
  CHECK(o.epochs == 10 && o.batch_size == 32 && o.validation_split == 0.1 &&
        o.lr.kind == DML_LR_CONSTANT && o.lr.initial == 1e-3);
  /* too few rows for the default split: an error with a hint */
  dml_dataset_t few;
  CHECK_OK(dml_dataset_slice(&g_data, 0, 9, &few));
  o.verbose = 0;
  o.batch_size = 8;
  CHECK_ERROR(dml_trainer_fit(t, &few, &o, &h), DML_STATUS_INVALID_ARGUMENT,
              "validation split 0.1 of 9 rows leaves an empty set");
  quiet(&o);
  o.patience = 2;
  o.monitor = DML_MONITOR_VAL_LOSS;
  CHECK_ERROR(dml_trainer_fit(t, &g_data, &o, &h), DML_STATUS_INVALID_ARGUMENT,
              "no validation data");
  quiet(&o);
  o.epochs = 8; /* the trainer has done 4 */
  dml_dataset_t bad = g_data;
  bad.x.dtype = DML_DTYPE_F64;
  CHECK_ERROR(dml_trainer_fit(t, &bad, &o, &h), DML_STATUS_INVALID_ARGUMENT,
              "training data: x is f64[100,2], the package's 'input' is f32[batch,2]");
  bad = g_data;
  bad.y.dims[0] = 99;
  CHECK_ERROR(dml_trainer_fit(t, &bad, &o, &h), DML_STATUS_INVALID_ARGUMENT,
              "same N (x has 100 rows, y 99)");
  bad = g_data;
  bad.x.dims[1] = 1;
  bad.x.dims[0] = 200;
  bad.y.dims[0] = 200;
  CHECK_ERROR(dml_trainer_fit(t, &bad, &o, &h), DML_STATUS_INVALID_ARGUMENT,
              "x is f32[200,1]");
  dml_trainer_release(t);
  dml_rt_model_release(m);
}

/* ---- table metrics in the history ---- */

/* mean |p - t| and mean (p - t)^2 of forward's output on rows [b, e) */
static void host_mae_mse(dml_trainer_t *t, int64_t b, int64_t e, double *mae,
                         double *mse) {
  dml_dataset_t d;
  CHECK_OK(dml_dataset_slice(&g_data, b, e, &d));
  dml_tensor_t p;
  void *buf = NULL;
  *mae = *mse = -1;
  CHECK_OK(dml_trainer_predict(t, &d.x, 0, &p, &buf));
  if (!buf) return;
  double sa = 0, ss = 0;
  for (int64_t i = 0; i < e - b; i++) {
    double diff = (double)((const float *)buf)[i] - (double)g_y[b + i];
    sa += fabs(diff);
    ss += diff * diff;
  }
  *mae = sa / (double)(e - b);
  *mse = ss / (double)(e - b);
  free(buf);
}

static void test_table_metrics(void) {
  dml_rt_model_t *m = build(k_plain, 0);
  dml_trainer_t *t = NULL;
  CHECK_OK(dml_trainer_create(m, "cpu", &t));
  if (!t) return;
  dml_fit_options_t o;
  quiet(&o);
  o.epochs = 2;
  o.validation_split = 0.2;
  CHECK_OK(dml_metrics_parse("accuracy,mae,mse", o.metrics, &o.n_metrics));
  CHECK(o.n_metrics == 2);
  dml_history_t h;
  CHECK_OK(dml_trainer_fit(t, &g_data, &o, &h));
  CHECK(!strcmp(h.validation, "split") && h.n_metrics == 2);
  double mae, mse;
  host_mae_mse(t, 80, 100, &mae, &mse);
  if (h.n_epochs == 2) {
    /* the same sums in the same order: equal to the last bit */
    CHECK(h.epochs[1].metrics[0] == mae && h.epochs[1].metrics[1] == mse);
    CHECK(h.epochs[0].metrics[0] > mae); /* it learned */
  }
  dml_history_free(&h);
  /* no validation data: on the training rows, columns without val_ */
  quiet(&o);
  o.epochs = 3;
  CHECK_OK(dml_metrics_parse("mae", o.metrics, &o.n_metrics));
  CHECK_OK(dml_trainer_fit(t, &g_data, &o, &h));
  CHECK(!strcmp(h.validation, ""));
  host_mae_mse(t, 0, 100, &mae, &mse);
  CHECK(h.n_epochs == 1 && h.epochs[0].metrics[0] == mae);
  dml_history_free(&h);
  /* a label for given validation data */
  quiet(&o);
  o.epochs = 4;
  o.validation = &g_data;
  o.validation_label = "test";
  CHECK_OK(dml_trainer_fit(t, &g_data, &o, &h));
  CHECK(!strcmp(h.validation, "test") && h.n_metrics == 0);
  dml_history_free(&h);
  o.epochs = 5;
  o.validation_label = "a,b";
  CHECK_ERROR(dml_trainer_fit(t, &g_data, &o, &h), DML_STATUS_INVALID_ARGUMENT,
              "no comma");
  /* a class metric on a regression output: a clear error */
  quiet(&o);
  o.epochs = 5;
  CHECK_OK(dml_metrics_parse("f1", o.metrics, &o.n_metrics));
  CHECK_ERROR(dml_trainer_fit(t, &g_data, &o, &h), DML_STATUS_INVALID_ARGUMENT,
              "f1 needs integer class labels [N] and class scores [N, C]");
  o.metrics_output = 3;
  CHECK_ERROR(dml_trainer_fit(t, &g_data, &o, &h), DML_STATUS_INVALID_ARGUMENT,
              "metrics_output 3: forward has 1 outputs");
  dml_trainer_release(t);
  dml_rt_model_release(m);
}

/* ---- early stopping through the user callback ---- */

typedef struct {
  const double *script; /* val_loss per epoch */
  int stop_at;          /* epoch at which the callback asks to stop (0: never) */
  float w0[16];         /* w[0] after each epoch */
  dml_trainer_t *t;
  int calls;
} cb_state_t;

static int scripted(dml_epoch_metrics_t *m, void *user) {
  cb_state_t *c = (cb_state_t *)user;
  c->calls++;
  if (c->script) m->val_loss = c->script[m->epoch - 1];
  if (m->epoch <= 16) c->w0[m->epoch - 1] = global_f(c->t, "w", 0);
  return c->stop_at && m->epoch >= c->stop_at;
}

static void test_early_stopping_callback(void) {
  dml_rt_model_t *m = build(k_plain, 0);
  static const double script[] = {1.0, 0.5, 0.6, 0.55, 0.7, 0.1, 0.1, 0.1};
  for (int restore = 0; restore < 2; restore++) {
    dml_trainer_t *t = NULL;
    CHECK_OK(dml_trainer_create(m, "cpu", &t));
    if (!t) break;
    cb_state_t c = {script, 0, {0}, t, 0};
    dml_fit_options_t o;
    quiet(&o);
    o.lr.initial = 0.01;
    o.epochs = 8;
    o.patience = 3;
    o.min_delta = 0.01;
    o.monitor = DML_MONITOR_VAL_LOSS;
    o.restore_best = restore;
    o.validation_split = 0.1;
    o.callback = scripted;
    o.user_data = &c;
    dml_history_t h;
    CHECK_OK(dml_trainer_fit(t, &g_data, &o, &h));
    /* best 0.5 at epoch 2; epochs 3, 4, 5 do not improve: stop after 5 */
    CHECK(h.n_epochs == 5 && h.stopped_early && h.best_epoch == 2 && c.calls == 5);
    CHECK(h.n_epochs == 5 &&
          h.epochs[2].val_loss == 0.6); /* the history has the script */
    CHECK(h.restored == restore);
    if (restore)
      CHECK(global_f(t, "w", 0) == c.w0[1]); /* the globals of epoch 2 */
    else
      CHECK(global_f(t, "w", 0) == c.w0[4]);
    CHECK(c.w0[1] != c.w0[4]);
    dml_history_free(&h);
    dml_trainer_release(t);
  }
  /* the callback itself stops training */
  dml_trainer_t *t = NULL;
  CHECK_OK(dml_trainer_create(m, "cpu", &t));
  cb_state_t c = {NULL, 3, {0}, t, 0};
  dml_fit_options_t o;
  quiet(&o);
  o.epochs = 10;
  o.callback = scripted;
  o.user_data = &c;
  dml_history_t h;
  CHECK_OK(dml_trainer_fit(t, &g_data, &o, &h));
  CHECK(h.n_epochs == 3 && h.stopped_early && dml_trainer_epoch(t) == 3);
  dml_history_free(&h);
  dml_trainer_release(t);
  dml_rt_model_release(m);
}

/* ---- ReduceLROnPlateau and the per-batch callback ---- */

typedef struct {
  int stop_at_step; /* 0: never */
  int calls;
  uint64_t last_step;
  double lr_seen[64];
} batch_state_t;

static int on_batch(const dml_batch_metrics_t *b, void *user) {
  batch_state_t *c = (batch_state_t *)user;
  c->calls++;
  c->last_step = b->step;
  if (b->step <= 64) c->lr_seen[b->step - 1] = b->lr;
  return c->stop_at_step && (int)b->step >= c->stop_at_step;
}

static void test_plateau_and_batch_callback(void) {
  dml_rt_model_t *m = build(k_plain, 0);
  /* the validation loss the epoch callback reports stalls after epoch 2:
   * with patience 2 and factor 0.5 the rate halves after epoch 4 (epochs
   * 3, 4 do not improve on 0.5); epoch 6 improves, 7 and 8 do not (the
   * next halving would be epoch 9's) */
  static const double script[] = {1.0, 0.5, 0.6, 0.55, 0.7, 0.1, 0.2, 0.2};
  dml_trainer_t *t = NULL;
  CHECK_OK(dml_trainer_create(m, "cpu", &t));
  cb_state_t c = {script, 0, {0}, t, 0};
  batch_state_t bc;
  memset(&bc, 0, sizeof bc);
  dml_fit_options_t o;
  quiet(&o);
  o.epochs = 8;
  o.validation_split = 0.1;
  CHECK_OK(dml_lr_schedule_parse("plateau:0.01,0.5,2", &o.lr));
  o.callback = scripted;
  o.user_data = &c;
  o.verbose = 1;
  FILE *log = tmpfile();
  o.log = log;
  dml_history_t h;
  CHECK_OK(dml_trainer_fit(t, &g_data, &o, &h));
  o.verbose = 0;
  o.log = NULL;
  /* the reduction's note follows epoch 4's own line (which ran at 0.01) and
   * says the new rate applies from epoch 5 */
  char text[8192] = "";
  if (log) {
    rewind(log);
    size_t got = fread(text, 1, sizeof text - 1, log);
    text[got] = 0;
    fclose(log);
  }
  const char *line4 = strstr(text, "epoch 4/8  "),
             *note = strstr(text,
                            "epoch 4: val_loss did not improve for 2 epochs: "
                            "learning rate 0.01 -> 0.005 from epoch 5\n");
  CHECK(line4 && note && line4 < note);
  if (!(line4 && note && line4 < note)) fprintf(stderr, "log: %s\n", text);
  static const double lr_want[8] = {0.01, 0.01, 0.01, 0.01, 0.005, 0.005, 0.005, 0.005};
  CHECK(h.n_epochs == 8);
  for (int e = 0; e < h.n_epochs && e < 8; e++) {
    CHECK(fabs(h.epochs[e].lr - lr_want[e]) < 1e-15);
    if (fabs(h.epochs[e].lr - lr_want[e]) >= 1e-15)
      fprintf(stderr, "epoch %d: lr %g, want %g\n", e + 1, h.epochs[e].lr, lr_want[e]);
  }
  dml_history_free(&h);
  dml_trainer_release(t);

  /* the per-batch callback: every step, with its rate; stops at step 17
   * (epoch 2, batch 5 of 12: 90 training rows, batch 8) */
  CHECK_OK(dml_trainer_create(m, "cpu", &t));
  quiet(&o);
  o.epochs = 5;
  o.validation_split = 0.1;
  o.lr.initial = 0.02;
  o.batch_callback = on_batch;
  o.user_data = &bc;
  bc.stop_at_step = 17;
  CHECK_OK(dml_trainer_fit(t, &g_data, &o, &h));
  CHECK(bc.calls == 17 && bc.last_step == 17 && dml_trainer_step(t) == 17);
  CHECK(h.n_epochs == 2 && h.stopped_early && h.epochs[1].step == 17);
  CHECK(bc.lr_seen[0] == 0.02 && bc.lr_seen[16] == 0.02);
  /* epoch 2's metrics cover its 5 batches (40 rows) and it was validated */
  CHECK(h.n_epochs == 2 && h.epochs[1].val_loss == h.epochs[1].val_loss);
  dml_history_free(&h);
  dml_trainer_release(t);
  dml_rt_model_release(m);
}

/* ---- checkpoints ---- */

static char g_dir[128];

static void test_resume_equals_uninterrupted(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/dmlc_trainer_ckpt.%ld", (long)getpid());
  dml_fit_options_t o;
  quiet(&o);
  o.epochs = 4;
  o.seed = 5;
  o.validation_split = 0.1;
  dml_history_t full;
  run_fit(k_noise, &o, &full);

  /* 2 epochs with a checkpoint every 2 */
  dml_rt_model_t *m = build(k_noise, 0);
  dml_trainer_t *t = NULL;
  CHECK_OK(dml_trainer_create(m, "cpu", &t));
  o.epochs = 2;
  o.checkpoint_every = 2;
  o.checkpoint_dir = g_dir;
  dml_history_t first;
  CHECK_OK(dml_trainer_fit(t, &g_data, &o, &first));
  float w_after2 = global_f(t, "w", 0);
  dml_trainer_release(t);
  char ck[256];
  snprintf(ck, sizeof ck, "%s/epoch-0002.safetensors", g_dir);
  struct stat sb;
  CHECK(stat(ck, &sb) == 0);

  /* the file holds every global and the counters */
  dml_safetensors_t *f = NULL;
  void *bytes = NULL;
  CHECK_OK(dml_safetensors_read_file(ck, &f, &bytes));
  if (f) {
    CHECK(f->n_tensors == 3 && dml_safetensors_find(f, "w") &&
          dml_safetensors_find(f, "b") && dml_safetensors_find(f, "steps"));
    CHECK(!strcmp(dml_safetensors_meta(f, "epoch"), "2"));
    CHECK(
        !strcmp(dml_safetensors_meta(f, "step"), "24")); /* 90 rows: 12 steps an epoch */
    const dml_st_tensor_t *w = dml_safetensors_find(f, "w");
    CHECK(w && ((const float *)w->tensor.data)[0] == w_after2);
  }
  dml_safetensors_release(f);
  free(bytes);

  /* a fresh trainer resumes from it and continues to epoch 4 */
  CHECK_OK(dml_trainer_create(m, "cpu", &t));
  CHECK_OK(dml_trainer_load_checkpoint(t, ck));
  CHECK(dml_trainer_epoch(t) == 2 && dml_trainer_step(t) == 24);
  CHECK(global_f(t, "w", 0) == w_after2 && global_f(t, "steps", 0) == 24);
  o.epochs = 4;
  o.checkpoint_every = 0;
  dml_history_t rest;
  CHECK_OK(dml_trainer_fit(t, &g_data, &o, &rest));
  CHECK(full.n_epochs == 4 && first.n_epochs == 2 && rest.n_epochs == 2);
  if (full.n_epochs == 4 && rest.n_epochs == 2 && first.n_epochs == 2) {
    for (int e = 0; e < 2; e++) {
      CHECK(!memcmp(&first.epochs[e].loss, &full.epochs[e].loss, sizeof(double)));
      CHECK(!memcmp(&rest.epochs[e].loss, &full.epochs[e + 2].loss, sizeof(double)));
      CHECK(!memcmp(&rest.epochs[e].val_loss, &full.epochs[e + 2].val_loss,
                    sizeof(double)));
      CHECK(rest.epochs[e].epoch == e + 3);
    }
  }
  dml_history_free(&full);
  dml_history_free(&first);
  dml_history_free(&rest);
  dml_trainer_release(t);

  /* the trained package: forward of the saved file == predict */
  char pkg_path[256];
  snprintf(pkg_path, sizeof pkg_path, "%s/trained.dmlpkg", g_dir);
  dml_rt_model_release(build(k_noise, 1)); /* the bytes the model below is loaded from */
  dml_rt_model_t *m2 = NULL;
  CHECK_OK(dml_rt_model_load_memory(g_pkg, g_pkg_size, &m2));
  dml_trainer_t *t2 = NULL;
  CHECK_OK(dml_trainer_create(m2, "cpu", &t2));
  CHECK_OK(dml_trainer_load_checkpoint(t2, ck));
  CHECK_OK(dml_train_save_package(m2, dml_trainer_session(t2, "train_step"), g_pkg,
                                  g_pkg_size, pkg_path));
  dml_tensor_t xt = g_data.x, out;
  xt.dims[0] = 5;
  void *buf = NULL;
  CHECK_OK(dml_trainer_predict(t2, &xt, 0, &out, &buf));
  dml_rt_model_t *saved = NULL;
  CHECK_OK(dml_rt_model_load_file(pkg_path, &saved));
  dml_rt_session_t *s = NULL;
  CHECK_OK(dml_rt_session_create(saved, "cpu", &s));
  dml_tensor_t y;
  CHECK_OK(dml_rt_session_set_input(s, 0, &xt));
  CHECK_OK(dml_rt_session_run(s));
  CHECK_OK(dml_rt_session_get_output(s, 0, &y));
  CHECK(buf && y.dims[0] == 5 && !memcmp(y.data, buf, 5 * sizeof(float)));
  dml_tensor_t gv;
  CHECK_OK(dml_rt_session_global(s, 2, &gv));
  CHECK(((const float *)gv.data)[0] == w_after2);
  dml_rt_session_release(s);
  dml_rt_model_release(saved);
  free(buf);
  /* bytes of another package: its globals do not fit */
  CHECK_ERROR(dml_train_save_package(m2, dml_trainer_session(t2, "train_step"), "junk", 4,
                                     pkg_path),
              DML_STATUS_DATA_LOSS, "");
  dml_trainer_release(t2);
  dml_rt_model_release(m2);

  /* checkpoint errors: nothing changes on a failed load */
  CHECK_OK(dml_trainer_create(m, "cpu", &t));
  float w0 = global_f(t, "w", 0);
  char other[256];
  snprintf(other, sizeof other, "%s/other.safetensors", g_dir);
  float v3[3] = {1, 2, 3}, one = 1, b = 0;
  dml_st_entry_t e3[3] = {{"w", {DML_DTYPE_F32, 1, {3}, v3}},
                          {"b", {DML_DTYPE_F32, 1, {1}, &b}},
                          {"steps", {DML_DTYPE_F32, 0, {0}, &one}}};
  const char *k[] = {"format", "epoch", "step"};
  const char *v[] = {"dmlc-train-checkpoint-1", "1", "1"};
  CHECK_OK(dml_safetensors_write_file(other, e3, 3, k, v, 3));
  CHECK_ERROR(dml_trainer_load_checkpoint(t, other), DML_STATUS_FAILED_PRECONDITION,
              "global 'w' is f32[2,1] in the package, f32[3] in the checkpoint");
  CHECK_OK(dml_safetensors_write_file(other, e3 + 1, 2, k, v, 3));
  CHECK_ERROR(dml_trainer_load_checkpoint(t, other), DML_STATUS_FAILED_PRECONDITION,
              "holds 2 tensors, the package 3 globals");
  CHECK_OK(dml_safetensors_write_file(other, e3, 3, k, v, 1));
  CHECK_ERROR(dml_trainer_load_checkpoint(t, other), DML_STATUS_FAILED_PRECONDITION,
              "not a dmlc training checkpoint");
  CHECK(global_f(t, "w", 0) == w0 && dml_trainer_epoch(t) == 0);
  unlink(other);
  snprintf(other, sizeof other, "%s/missing.safetensors", g_dir);
  CHECK_ERROR(dml_trainer_load_checkpoint(t, other), DML_STATUS_NOT_FOUND,
              "missing.safetensors");
  dml_trainer_release(t);
  dml_rt_model_release(m);
  unlink(ck);
  unlink(pkg_path);
  rmdir(g_dir);
}

static void test_not_a_training_package(void) {
  dml_ir_module_t *mod = NULL;
  const char *text =
      "sym batch <= 4\nglobal @w : f32[2] param = dense<[1.0, 2.0]>\n"
      "func @forward(%x: f32[batch,2]) -> (?[?]) {\n  %y = Mul(%x, @w)\n  return %y\n}\n";
  CHECK_OK(dml_ir_parse(text, strlen(text), "fwd.dmlir", &mod));
  dml_pass_options_t o;
  memset(&o, 0, sizeof o);
  CHECK_OK(dml_pass_run_pipeline(mod, dml_pass_default_pipeline(), &o));
  void *bytes = NULL;
  size_t size = 0;
  CHECK_OK(dml_package_emit_memory(mod, NULL, &bytes, &size));
  dml_ir_module_release(mod);
  dml_rt_model_t *m = NULL;
  CHECK_OK(dml_rt_model_load_memory(bytes, size, &m));
  free(bytes);
  dml_trainer_t *t = NULL;
  CHECK_ERROR(dml_trainer_create(m, "cpu", &t), DML_STATUS_NOT_FOUND, "train_step");
  dml_rt_model_release(m);
}

/* A plateau schedule's state goes into the checkpoint (metadata lr_state):
 * 2 epochs + a resumed 2 give the uninterrupted run's rates and losses. */
static void test_plateau_resume(void) {
  char dir[128], ck[256];
  snprintf(dir, sizeof dir, "/tmp/dmlc_plateau_ckpt.%ld", (long)getpid());
  dml_fit_options_t o;
  quiet(&o);
  o.epochs = 4;
  o.seed = 5;
  o.validation_split = 0.1;
  /* min_delta 10: only the first epoch improves; patience 1: the rate
   * halves after every later epoch */
  CHECK_OK(dml_lr_schedule_parse("plateau:0.01,0.5,1,0,0,10", &o.lr));
  dml_history_t full, first, rest;
  run_fit(k_noise, &o, &full);
  static const double lr_want[4] = {0.01, 0.01, 0.005, 0.0025};
  for (int e = 0; e < 4 && full.n_epochs == 4; e++)
    CHECK(full.epochs[e].lr == lr_want[e]);
  dml_rt_model_t *m = build(k_noise, 0);
  dml_trainer_t *t = NULL;
  CHECK_OK(dml_trainer_create(m, "cpu", &t));
  o.epochs = 2;
  o.checkpoint_every = 2;
  o.checkpoint_dir = dir;
  CHECK_OK(dml_trainer_fit(t, &g_data, &o, &first));
  dml_trainer_release(t);
  snprintf(ck, sizeof ck, "%s/epoch-0002.safetensors", dir);
  dml_safetensors_t *f = NULL;
  void *bytes = NULL;
  CHECK_OK(dml_safetensors_read_file(ck, &f, &bytes));
  const char *ls = f ? dml_safetensors_meta(f, "lr_state") : NULL;
  CHECK(ls && !strncmp(ls, "plateau 0.0050000000000000001 ", 30));
  dml_safetensors_release(f);
  free(bytes);
  CHECK_OK(dml_trainer_create(m, "cpu", &t));
  CHECK_OK(dml_trainer_load_checkpoint(t, ck));
  o.epochs = 4;
  o.checkpoint_every = 0;
  CHECK_OK(dml_trainer_fit(t, &g_data, &o, &rest));
  CHECK(rest.n_epochs == 2 && full.n_epochs == 4);
  for (int e = 0; e < 2 && rest.n_epochs == 2 && full.n_epochs == 4; e++) {
    CHECK(rest.epochs[e].lr == full.epochs[e + 2].lr);
    CHECK(!memcmp(&rest.epochs[e].loss, &full.epochs[e + 2].loss, sizeof(double)));
  }
  dml_history_free(&full);
  dml_history_free(&first);
  dml_history_free(&rest);
  dml_trainer_release(t);
  dml_rt_model_release(m);
  remove(ck);
  rmdir(dir);
}

int main(void) {
  make_data();
  RUN(test_fit_matches_reference);
  RUN(test_determinism);
  RUN(test_validation_and_schedule);
  RUN(test_table_metrics);
  RUN(test_early_stopping_callback);
  RUN(test_plateau_and_batch_callback);
  RUN(test_plateau_resume);
  RUN(test_resume_equals_uninterrupted);
  RUN(test_not_a_training_package);
  free(g_pkg);
  return dml_test_finish();
}
