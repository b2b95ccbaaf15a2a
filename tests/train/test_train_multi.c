/* test_train_multi.c — training a model of two inputs and two outputs, a
 * loss per output (issue 22; docs/training.md, "Several inputs and
 * outputs"): tests/train/two_head.onnx (make_two_head.py: inputs a [N,4]
 * and b [N,3], a class head `cls` [N,3] and a regression head `reg` [N,1])
 * on 400 rows written by this test (cls: the argmax of three functions of
 * a and b; reg: a smooth function of them).
 *   - `dmlc train` (--data a=..,b=..,cls=..,reg=.. --loss
 *     cls=cross_entropy,reg=mse:0.5 --metrics cls=accuracy,f1,reg=mae,mse)
 *     and the C API with the same defaults give the same history CSV (every
 *     column but the wall time, "%.9g" text, so bit-identical values);
 *   - the losses fall; the total is cls + 0.5 reg; the host's mse metric is
 *     eval_step's mse loss; the validation accuracy is the argmax of
 *     predict's scores;
 *   - a per-batch callback stops training at step 7; a resumed run
 *     continues the uninterrupted one; on Vulkan (lavapipe) the history is
 *     the CPU's within 1e-4 relative;
 *   - an output of weight 0 stays untrained (no target, still an output);
 *   - a wrong number of arrays, rows that differ, an unknown name are
 *     errors naming the input or output, from the C API and the CLI.
 *   test_train_multi [DMLC SOURCE_DIR]  (default: $DMLC_BUILD_DIR/compiler/dmlc
 *                                        and $DMLC_SOURCE_DIR, as CTest sets) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dml_driver.h"
#include "dml_file.h"
#include "dml_npy.h"
#include "dml_test.h"
#include "dml_train.h"
#include "dml_train_data.h"
#include "dml_trainer.h"

#define N 400
#define EPOCHS 6

static const char *g_dmlc, *g_model;
static char g_dir[] = "/tmp/dmlc_train_multi.XXXXXX";
static float g_a[N * 4], g_b[N * 3], g_reg[N];
static int64_t g_cls[N];

static void make_data(void) {
  uint32_t s = 22;
  for (int i = 0; i < N * 4; i++) {
    s = s * 1664525u + 1013904223u;
    g_a[i] = (float)((s >> 8) / 8388608.0 - 1.0);
  }
  for (int i = 0; i < N * 3; i++) {
    s = s * 1664525u + 1013904223u;
    g_b[i] = (float)((s >> 8) / 8388608.0 - 1.0);
  }
  for (int r = 0; r < N; r++) {
    const float *a = g_a + r * 4, *b = g_b + r * 3;
    double f[3] = {a[0] + b[0], a[1] - b[1], a[2] + a[3] * b[2]};
    g_cls[r] = f[1] > f[0] ? (f[2] > f[1] ? 2 : 1) : (f[2] > f[0] ? 2 : 0);
    g_reg[r] = (float)(0.5 * a[0] - b[1] + 0.3 * a[2] * b[2]);
  }
}

static dml_tensor_t tensor(dml_dtype_t dt, int64_t rows, int64_t cols, void *data) {
  dml_tensor_t t;
  memset(&t, 0, sizeof t);
  t.dtype = dt;
  t.rank = cols ? 2 : 1;
  t.dims[0] = rows;
  t.dims[1] = cols;
  t.data = data;
  return t;
}

/* The C API's data set: two inputs, two label arrays (the lists). */
static dml_dataset_t dataset(void) {
  dml_dataset_t d;
  memset(&d, 0, sizeof d);
  d.n_inputs = 2;
  d.inputs[0] = tensor(DML_DTYPE_F32, N, 4, g_a);
  d.inputs[1] = tensor(DML_DTYPE_F32, N, 3, g_b);
  d.n_targets = 2;
  d.targets[0] = tensor(DML_DTYPE_I64, N, 0, g_cls);
  d.targets[1] = tensor(DML_DTYPE_F32, N, 1, g_reg);
  return d;
}

static void write_npys(void) {
  const struct {
    const char *name;
    dml_tensor_t t;
  } f[5] = {{"a", tensor(DML_DTYPE_F32, N, 4, g_a)},
            {"b", tensor(DML_DTYPE_F32, N, 3, g_b)},
            {"b_short", tensor(DML_DTYPE_F32, N - 1, 3, g_b)},
            {"cls", tensor(DML_DTYPE_I64, N, 0, g_cls)},
            {"reg", tensor(DML_DTYPE_F32, N, 1, g_reg)}};
  for (int i = 0; i < 5; i++) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s.npy", g_dir, f[i].name);
    CHECK_OK(dml_npy_write_file(path, &f[i].t));
  }
}

/* The package of `outs` compiled as `dmlc train` does (batch bound 64),
 * and a trainer on it. */
typedef struct pkg {
  void *bytes;
  size_t size;
  dml_rt_model_t *m;
  dml_trainer_t *t;
} pkg_t;

static dml_status_t open_pkg(const dml_train_output_t *outs, uint32_t n, pkg_t *p) {
  memset(p, 0, sizeof *p);
  dml_train_config_t cfg;
  dml_train_config_init(&cfg);
  cfg.outputs = outs;
  cfg.n_outputs = n;
  dml_compile_options_t copts;
  memset(&copts, 0, sizeof copts);
  copts.batch_bound = 64;
  copts.train = &cfg;
  dml_compile_report_t rep;
  uint8_t *onnx = NULL;
  size_t onnx_size = 0;
  dml_status_t st = dml_file_read_all("test", g_model, &onnx, &onnx_size);
  if (!st)
    st = dml_compile_onnx_memory(onnx, onnx_size, ".", g_model, &copts, &p->bytes,
                                 &p->size, &rep);
  free(onnx);
  if (!st) st = dml_rt_model_load_memory(p->bytes, p->size, &p->m);
  if (!st) st = dml_trainer_create(p->m, "cpu", &p->t);
  return st;
}

static void close_pkg(pkg_t *p) {
  dml_trainer_release(p->t);
  dml_rt_model_release(p->m);
  free(p->bytes);
  memset(p, 0, sizeof *p);
}

static const dml_train_output_t k_outs[2] = {{"cls", DML_LOSS_CROSS_ENTROPY, 1.0},
                                             {"reg", DML_LOSS_MSE, 0.5}};

/* The file's text without its `seconds` column (the 7th). */
static char *csv_without_seconds(const char *path) {
  uint8_t *bytes = NULL;
  size_t n = 0;
  CHECK_OK(dml_file_read_all("test", path, &bytes, &n));
  if (!bytes) return NULL;
  char *out = (char *)calloc(n + 1, 1);
  size_t o = 0;
  int col = 1;
  for (size_t i = 0; out && i < n; i++) {
    char c = (char)bytes[i];
    if (c == ',') col++;
    if (c == '\n') col = 1;
    if (col == 7) continue;
    out[o++] = c;
  }
  free(bytes);
  return out;
}

/* Runs `dmlc ARGS` with stderr into a file; returns its exit status and
 * the stderr text in *err (malloc'd). */
static int dmlc(const char *args, char **err) {
  char cmd[4096], path[600];
  snprintf(path, sizeof path, "%s/stderr.txt", g_dir);
  snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s >/dev/null 2>'%s'", g_dir, g_dmlc, args,
           path);
  int rc = system(cmd);
  uint8_t *b = NULL;
  size_t n = 0;
  *err = NULL;
  dml_status_t st = dml_file_read_all("test", path, &b, &n);
  if (st) {
    dml_status_free(st);
  } else {
    *err = (char *)calloc(n + 1, 1);
    if (*err) memcpy(*err, b, n);
  }
  free(b);
  return rc;
}

static void check_stderr(const char *args, const char *want) {
  char *err = NULL;
  int rc = dmlc(args, &err);
  CHECK(rc != 0);
  CHECK(err && strstr(err, want));
  if (!err || !strstr(err, want))
    fprintf(stderr, "dmlc %s\n  wanted '%s' in: %s\n", args, want, err ? err : "(none)");
  free(err);
}

static void test_cli_and_capi(void) {
  char args[2048], cli[600], capi[600];
  snprintf(cli, sizeof cli, "%s/cli.csv", g_dir);
  snprintf(capi, sizeof capi, "%s/capi.csv", g_dir);
  snprintf(args, sizeof args,
           "train '%s' --data a=a.npy,b=b.npy,cls=cls.npy,reg=reg.npy "
           "--loss cls=cross_entropy,reg=mse:0.5 --metrics cls=accuracy,f1,reg=mae,mse "
           "--epochs %d --history cli.csv -o cli.dmlpkg --quiet",
           g_model, EPOCHS);
  char *err = NULL;
  CHECK(dmlc(args, &err) == 0);
  free(err);

  /* `dmlc eval` reports the total and each output */
  snprintf(args, sizeof args,
           "eval cli.dmlpkg --data a=a.npy,b=b.npy,cls=cls.npy,reg=reg.npy");
  CHECK(dmlc(args, &err) == 0);
  free(err);

  pkg_t p;
  CHECK_OK(open_pkg(k_outs, 2, &p));
  if (!p.t) return;
  CHECK(dml_trainer_num_inputs(p.t) == 2 && dml_trainer_num_targets(p.t) == 2);
  CHECK(!strcmp(dml_trainer_target_output(p.t, 0), "cls"));
  CHECK(!strcmp(dml_trainer_target_output(p.t, 1), "reg"));
  dml_dataset_t d = dataset();
  dml_fit_options_t o;
  dml_fit_options_init(&o); /* the defaults `dmlc train` uses */
  o.epochs = EPOCHS;
  o.verbose = 0;
  CHECK_OK(dml_metrics_parse("f1", &o.metrics[0], &o.n_metrics));
  o.metric_output[0] = "cls";
  int32_t n1 = 0;
  CHECK_OK(dml_metrics_parse("mae,mse", &o.metrics[1], &n1));
  o.n_metrics += n1;
  o.metric_output[1] = o.metric_output[2] = "reg";
  dml_history_t h;
  memset(&h, 0, sizeof h);
  CHECK_OK(dml_trainer_fit(p.t, &d, &o, &h));
  CHECK_OK(dml_history_write_csv(&h, capi));

  char *a = csv_without_seconds(cli), *b = csv_without_seconds(capi);
  CHECK(a && b && !strcmp(a, b));
  if (a && b && strcmp(a, b)) fprintf(stderr, "CLI:\n%s\nC API:\n%s\n", a, b);
  const char *header =
      "epoch,loss,accuracy,val_loss,val_accuracy,lr,validation,cls_loss,"
      "cls_accuracy,val_cls_loss,val_cls_accuracy,reg_loss,val_reg_loss,"
      "val_cls_f1,val_reg_mae,val_reg_mse\n";
  CHECK(b && !strncmp(b, header, strlen(header)));
  free(a);
  free(b);

  CHECK(h.n_epochs == EPOCHS && h.n_outputs == 2);
  if (h.n_epochs == EPOCHS) {
    const dml_epoch_metrics_t *f = &h.epochs[0], *l = &h.epochs[EPOCHS - 1];
    /* the losses fall: the total, each output's, on training and validation rows */
    CHECK(l->loss < f->loss && l->val_loss < f->val_loss);
    CHECK(l->output_loss[0] < f->output_loss[0] && l->output_loss[1] < f->output_loss[1]);
    CHECK(l->val_output_loss[0] < f->val_output_loss[0]);
    CHECK(l->val_output_loss[1] < f->val_output_loss[1]);
    for (int e = 0; e < EPOCHS; e++) {
      const dml_epoch_metrics_t *m = &h.epochs[e];
      /* total = 1 * cls + 0.5 * reg (f32 sums per batch, rows-weighted) */
      CHECK_NEAR(m->val_loss, m->val_output_loss[0] + 0.5 * m->val_output_loss[1],
                 1e-5 * fabs(m->val_loss));
      CHECK_NEAR(m->loss, m->output_loss[0] + 0.5 * m->output_loss[1],
                 1e-5 * fabs(m->loss));
      /* the host's mse of forward's reg is eval_step's mse loss */
      CHECK_NEAR(m->metrics[2], m->val_output_loss[1], 1e-5 * m->val_output_loss[1]);
      CHECK(isnan(m->output_accuracy[1]) && !isnan(m->output_accuracy[0]));
      CHECK(m->accuracy == m->output_accuracy[0]);
    }
    /* the validation accuracy is the argmax of forward's cls on the held-out
     * rows (the last 10%) */
    dml_dataset_t val;
    CHECK_OK(dml_dataset_slice(&d, N - N / 10, N, &val));
    dml_tensor_t pred;
    void *buf = NULL;
    CHECK_OK(dml_trainer_predict_data(p.t, &val, 0, &pred, &buf));
    if (buf) {
      CHECK(pred.rank == 2 && pred.dims[0] == N / 10 && pred.dims[1] == 3);
      int right = 0;
      for (int r = 0; r < N / 10; r++) {
        const float *s = (const float *)buf + r * 3;
        int am = s[1] > s[0] ? (s[2] > s[1] ? 2 : 1) : (s[2] > s[0] ? 2 : 0);
        right += am == g_cls[N - N / 10 + r];
      }
      CHECK(l->val_output_accuracy[0] == (double)right / (N / 10));
    }
    free(buf);
  }
  dml_history_free(&h);
  close_pkg(&p);
}

static int g_calls;
static int stop_at_7(const dml_batch_metrics_t *m, void *user) {
  (void)user;
  g_calls++;
  CHECK(m->step == (uint64_t)g_calls && m->rows == 32 && !isnan(m->loss));
  return m->step == 7;
}

static void test_batch_callback_stops(void) {
  pkg_t p;
  CHECK_OK(open_pkg(k_outs, 2, &p));
  if (!p.t) return;
  dml_dataset_t d = dataset();
  dml_fit_options_t o;
  dml_fit_options_init(&o);
  o.epochs = 3;
  o.verbose = 1;
  FILE *log = tmpfile();
  o.log = log;
  o.batch_callback = stop_at_7;
  dml_history_t h;
  memset(&h, 0, sizeof h);
  g_calls = 0;
  CHECK_OK(dml_trainer_fit(p.t, &d, &o, &h));
  CHECK(g_calls == 7 && dml_trainer_step(p.t) == 7);
  /* the epoch's line counts the steps run, not the epoch's planned ones */
  char text[4096] = "";
  if (log) {
    rewind(log);
    size_t got = fread(text, 1, sizeof text - 1, log);
    text[got] = 0;
    fclose(log);
  }
  CHECK(strstr(text, "epoch 1/3  7 steps  loss ") != NULL);
  if (!strstr(text, "epoch 1/3  7 steps  loss ")) fprintf(stderr, "log: %s\n", text);
  CHECK(h.n_epochs == 1 && h.stopped_early == 1);
  if (h.n_epochs == 1) CHECK(!isnan(h.epochs[0].val_output_loss[1]));
  dml_history_free(&h);
  close_pkg(&p);
}

static void test_untrained_output(void) {
  const dml_train_output_t outs[2] = {{"cls", DML_LOSS_CROSS_ENTROPY, 1.0},
                                      {"reg", DML_LOSS_MSE, 0.0}};
  pkg_t p;
  CHECK_OK(open_pkg(outs, 2, &p));
  if (!p.t) return;
  CHECK(dml_trainer_num_targets(p.t) == 1);
  CHECK(dml_rt_session_num_outputs(dml_trainer_session(p.t, "forward")) == 2);
  dml_dataset_t d = dataset();
  d.n_targets = 1;
  dml_fit_options_t o;
  dml_fit_options_init(&o);
  o.epochs = 1;
  o.verbose = 0;
  o.n_metrics = 1;
  CHECK_OK(dml_metrics_parse("mae", o.metrics, &o.n_metrics));
  o.metric_output[0] = "reg";
  CHECK_ERROR(dml_trainer_fit(p.t, &d, &o, NULL), DML_STATUS_INVALID_ARGUMENT,
              "metric mae on output 'reg': the output has no loss");
  o.n_metrics = 0;
  CHECK_OK(dml_trainer_fit(p.t, &d, &o, NULL));
  close_pkg(&p);
  /* an unnamed metric reads the only trained output (here reg, not
   * forward's first output cls); with two trained outputs it asks for OUT= */
  const dml_train_output_t reg_only[1] = {{"reg", DML_LOSS_MSE, 1.0}};
  CHECK_OK(open_pkg(reg_only, 1, &p));
  if (p.t) {
    d = dataset();
    d.targets[0] = d.targets[1];
    d.n_targets = 1;
    dml_fit_options_init(&o);
    o.epochs = 1;
    o.verbose = 0;
    CHECK_OK(dml_metrics_parse("mse", o.metrics, &o.n_metrics));
    dml_history_t h;
    memset(&h, 0, sizeof h);
    CHECK_OK(dml_trainer_fit(p.t, &d, &o, &h));
    /* mse on the validation rows == reg's validation loss (mse) */
    if (h.n_epochs == 1)
      CHECK_NEAR(h.epochs[0].metrics[0], h.epochs[0].val_output_loss[0],
                 1e-5 * h.epochs[0].val_output_loss[0] + 1e-7);
    dml_history_free(&h);
    /* epochs is the total: a second fit with nothing left says so */
    CHECK_ERROR(dml_trainer_fit(p.t, &d, &o, &h), DML_STATUS_FAILED_PRECONDITION,
                "already trained 1 epochs; epochs (1) is the total to reach");
    CHECK(dml_trainer_epoch(p.t) == 1 && h.n_epochs == 0);
    o.epochs = 2;
    CHECK_OK(dml_trainer_fit(p.t, &d, &o, &h));
    CHECK(dml_trainer_epoch(p.t) == 2 && h.n_epochs == 1);
    dml_history_free(&h);
  }
  close_pkg(&p);
  CHECK_OK(open_pkg(k_outs, 2, &p));
  if (p.t) {
    d = dataset();
    dml_fit_options_init(&o);
    o.epochs = 1;
    o.verbose = 0;
    CHECK_OK(dml_metrics_parse("f1", o.metrics, &o.n_metrics));
    CHECK_ERROR(dml_trainer_fit(p.t, &d, &o, NULL), DML_STATUS_INVALID_ARGUMENT,
                "metric f1 names no output, and the package trains 2 ('cls', 'reg')");
  }
  close_pkg(&p);
  char args[2048];
  snprintf(args, sizeof args,
           "train '%s' --data a=a.npy,b=b.npy,reg=reg.npy --loss reg=mse --metrics mse "
           "--epochs 1 -o x1.dmlpkg --quiet",
           g_model);
  char *err = NULL;
  CHECK(dmlc(args, &err) == 0);
  if (err && *err) fprintf(stderr, "--loss reg=mse --metrics mse: %s\n", err);
  free(err);
  snprintf(args, sizeof args,
           "train '%s' --data a=a.npy,b=b.npy,cls=cls.npy,reg=reg.npy --loss "
           "cls=cross_entropy,reg=mse --metrics reg=accuracy -o x.dmlpkg",
           g_model);
  check_stderr(args, "--metrics reg=accuracy: output 'reg' has no accuracy");
  snprintf(args, sizeof args,
           "train '%s' --data a=a.npy,b=b.npy,cls=cls.npy,reg=reg.npy --loss "
           "cls=cross_entropy,reg=mse --metrics f1 -o x.dmlpkg",
           g_model);
  check_stderr(args, "name the output: --metrics OUT=f1");
  /* labels of a weight-0 output are accepted and ignored, with a note */
  snprintf(args, sizeof args,
           "train '%s' --data a=a.npy,b=b.npy,cls=cls.npy,reg=reg.npy --loss "
           "cls=cross_entropy,reg=mse:0 --epochs 1 -o x0.dmlpkg --quiet",
           g_model);
  CHECK(dmlc(args, &err) == 0);
  const char *w0 =
      "note: output 'reg' has weight 0 in --loss (not trained): its labels "
      "reg.npy are ignored";
  CHECK(err && strstr(err, w0));
  if (!err || !strstr(err, w0)) fprintf(stderr, "weight 0: %s\n", err ? err : "");
  free(err);
  /* an unknown output and a negative weight stop the compile */
  const dml_train_output_t bad[2] = {{"cls", DML_LOSS_CROSS_ENTROPY, 1.0},
                                     {"zzz", DML_LOSS_MSE, 1.0}};
  CHECK_ERROR(open_pkg(bad, 2, &p), DML_STATUS_NOT_FOUND,
              "forward has no output named 'zzz'");
  close_pkg(&p);
  const dml_train_output_t neg[1] = {{"reg", DML_LOSS_MSE, -1.0}};
  CHECK_ERROR(open_pkg(neg, 1, &p), DML_STATUS_INVALID_ARGUMENT,
              "output 'reg': loss weight -1 must be finite and >= 0");
  close_pkg(&p);
}

static void tensor_npy(const char *name, dml_tensor_t t) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s.npy", g_dir, name);
  CHECK_OK(dml_npy_write_file(path, &t));
}

static void test_errors(void) {
  char args_nan[2048];
  /* the named form: every part NAME=PATH, NAME without '/' */
  CHECK(dml_data_spec_is_named("a=a.npy,cls=c.npy"));
  CHECK(!dml_data_spec_is_named("a.npy,c.npy"));
  CHECK(!dml_data_spec_is_named("a=a.npy,c.npy"));
  CHECK(!dml_data_spec_is_named("/data/x=1/a.npy,/data/x=1/c.npy"));
  dml_data_named_t nd;
  char spec[1400];
  snprintf(spec, sizeof spec, "a=%s/a.npy,a=%s/b.npy", g_dir, g_dir);
  CHECK_ERROR(dml_data_load_named(spec, &nd), DML_STATUS_INVALID_ARGUMENT,
              "'a' is given twice");
  snprintf(spec, sizeof spec, "a=%s/a.csv", g_dir);
  CHECK_ERROR(dml_data_load_named(spec, &nd), DML_STATUS_INVALID_ARGUMENT,
              "named arrays are .npy files");
  snprintf(spec, sizeof spec, "a=%s/missing.npy", g_dir);
  CHECK_ERROR(dml_data_load_named(spec, &nd), DML_STATUS_NOT_FOUND, "missing.npy");
  CHECK(nd.n == 0);
  pkg_t p;
  CHECK_OK(open_pkg(k_outs, 2, &p));
  if (p.t) {
    dml_fit_options_t o;
    dml_fit_options_init(&o);
    o.verbose = 0;
    dml_dataset_t d = dataset();
    d.n_targets = 1;
    CHECK_ERROR(dml_trainer_fit(p.t, &d, &o, NULL), DML_STATUS_INVALID_ARGUMENT,
                "1 label arrays for a package of 2 trained outputs ('cls', 'reg')");
    d = dataset();
    d.n_inputs = 1;
    CHECK_ERROR(dml_trainer_fit(p.t, &d, &o, NULL), DML_STATUS_INVALID_ARGUMENT,
                "1 input arrays for a model of 2 inputs ('a', 'b')");
    d = dataset();
    d.inputs[1].dims[0] = N - 1;
    CHECK_ERROR(dml_trainer_fit(p.t, &d, &o, NULL), DML_STATUS_INVALID_ARGUMENT,
                "input 'b' has 399 rows, input 'a' 400");
    d = dataset();
    d.targets[1].dims[0] = N - 1;
    double loss;
    CHECK_ERROR(dml_trainer_evaluate(p.t, &d, 0, &loss, NULL),
                DML_STATUS_INVALID_ARGUMENT,
                "the label array of output 'reg' has 399 rows, input 'a' 400");
    d = dataset();
    d.targets[0] = tensor(DML_DTYPE_F32, N, 1, g_reg);
    CHECK_ERROR(dml_trainer_evaluate(p.t, &d, 0, &loss, NULL),
                DML_STATUS_INVALID_ARGUMENT,
                "the label array of output 'cls' is f32[400,1]");
    CHECK_ERROR(dml_trainer_predict(p.t, &d.inputs[0], 0, &d.x, &d.x.data),
                DML_STATUS_INVALID_ARGUMENT, "the model has 2 inputs");
    /* a NaN label: an error naming the array and its first bad row, before
     * any step (not an all-NaN package) */
    static float reg_nan[N];
    memcpy(reg_nan, g_reg, sizeof reg_nan);
    reg_nan[7] = NAN;
    reg_nan[9] = INFINITY;
    d = dataset();
    d.targets[1] = tensor(DML_DTYPE_F32, N, 1, reg_nan);
    CHECK_ERROR(dml_trainer_fit(p.t, &d, &o, NULL), DML_STATUS_INVALID_ARGUMENT,
                "training data: the label array of output 'reg' has nan at row 7");
    CHECK_ERROR(dml_trainer_evaluate(p.t, &d, 0, &loss, NULL),
                DML_STATUS_INVALID_ARGUMENT, "has nan at row 7 (element 0 of the row)");
    tensor_npy("reg_nan", d.targets[1]);
    /* "a row whose scores hold a NaN predicts no class" for the built-in
     * accuracy too (eval_step's correct), as for the table metrics: row 0's
     * inputs are NaN (inputs are not checked), so its logits are; its label
     * 0 or 1 must give the same accuracy (ArgMax alone would pick 0) */
    static float a_nan[N * 4], b_nan[N * 3];
    static int64_t cls0[N], cls1[N];
    memcpy(a_nan, g_a, sizeof a_nan);
    memcpy(b_nan, g_b, sizeof b_nan);
    for (int k = 0; k < 4; k++) a_nan[k] = NAN;
    for (int k = 0; k < 3; k++) b_nan[k] = NAN;
    memcpy(cls0, g_cls, sizeof cls0);
    memcpy(cls1, g_cls, sizeof cls1);
    cls0[0] = 0;
    cls1[0] = 1;
    double acc0 = -1, acc1 = -2, l0;
    d = dataset();
    d.inputs[0] = tensor(DML_DTYPE_F32, N, 4, a_nan);
    d.inputs[1] = tensor(DML_DTYPE_F32, N, 3, b_nan);
    d.targets[0] = tensor(DML_DTYPE_I64, N, 0, cls0);
    CHECK_OK(dml_trainer_evaluate(p.t, &d, 0, &l0, &acc0));
    d.targets[0] = tensor(DML_DTYPE_I64, N, 0, cls1);
    CHECK_OK(dml_trainer_evaluate(p.t, &d, 0, &l0, &acc1));
    CHECK(acc0 == acc1 && acc0 < 1);
    if (acc0 != acc1)
      fprintf(stderr, "NaN row: accuracy %g (label 0) vs %g (1)\n", acc0, acc1);
  }
  close_pkg(&p);
  snprintf(args_nan, sizeof args_nan,
           "train '%s' --data a=a.npy,b=b.npy,cls=cls.npy,reg=reg_nan.npy --loss "
           "cls=cross_entropy,reg=mse:0.5 -o x.dmlpkg --quiet",
           g_model);
  check_stderr(args_nan, "the label array of output 'reg' has nan at row 7");
  /* 5 rows: the default split holds out none; said before training, in the
   * CLI's flags; --validation-split 0 trains without validation; empty
   * validation data fails up front */
  tensor_npy("a5", tensor(DML_DTYPE_F32, 5, 4, g_a));
  tensor_npy("b5", tensor(DML_DTYPE_F32, 5, 3, g_b));
  tensor_npy("cls5", tensor(DML_DTYPE_I64, 5, 0, g_cls));
  tensor_npy("reg5", tensor(DML_DTYPE_F32, 5, 1, g_reg));
  tensor_npy("a0", tensor(DML_DTYPE_F32, 0, 4, g_a));
  tensor_npy("b0", tensor(DML_DTYPE_F32, 0, 3, g_b));
  tensor_npy("cls0", tensor(DML_DTYPE_I64, 0, 0, g_cls));
  tensor_npy("reg0", tensor(DML_DTYPE_F32, 0, 1, g_reg));
  const char *five = "--data a=a5.npy,b=b5.npy,cls=cls5.npy,reg=reg5.npy";
  snprintf(args_nan, sizeof args_nan, "train '%s' %s --loss cls=cross_entropy,reg=mse %s",
           g_model, five, "-o x.dmlpkg");
  check_stderr(args_nan,
               "a validation split of 0.1 holds out no row of the 5 training rows");
  check_stderr(args_nan, "pass --validate-on none (or --validation-split 0)");
  char *err = NULL;
  snprintf(args_nan, sizeof args_nan,
           "train '%s' %s --loss cls=cross_entropy,reg=mse -o x.dmlpkg 2>&1 | grep -q "
           "'training on'",
           g_model, five);
  CHECK(dmlc(args_nan, &err) != 0); /* nothing promised before the error */
  free(err);
  snprintf(args_nan, sizeof args_nan,
           "train '%s' %s --loss cls=cross_entropy,reg=mse --validation-split 0 "
           "--epochs 1 -o x5.dmlpkg --quiet",
           g_model, five);
  CHECK(dmlc(args_nan, &err) == 0);
  if (err && *err) fprintf(stderr, "--validation-split 0: %s\n", err);
  free(err);
  snprintf(args_nan, sizeof args_nan,
           "train '%s' %s --loss cls=cross_entropy,reg=mse --validation-data "
           "a=a0.npy,b=b0.npy,cls=cls0.npy,reg=reg0.npy -o x.dmlpkg",
           g_model, five);
  check_stderr(args_nan, "has no rows");

  char args[2048];
  const char *loss = "--loss cls=cross_entropy,reg=mse:0.5 -o x.dmlpkg --quiet";
  snprintf(args, sizeof args, "train '%s' --data a=a.npy,b=b.npy,cls=cls.npy %s", g_model,
           loss);
  check_stderr(args, "no labels for trained output 'reg'");
  snprintf(args, sizeof args, "train '%s' --data a=a.npy,cls=cls.npy,reg=reg.npy %s",
           g_model, loss);
  check_stderr(args, "no array for model input 'b'");
  snprintf(args, sizeof args,
           "train '%s' --data a=a.npy,b=b_short.npy,cls=cls.npy,reg=reg.npy %s", g_model,
           loss);
  check_stderr(args, "'b' (b_short.npy) has 399 rows, 'a' (a.npy) 400");
  snprintf(args, sizeof args,
           "train '%s' --data a=a.npy,b=b.npy,cls=cls.npy,reg=reg.npy,c=a.npy %s",
           g_model, loss);
  check_stderr(args,
               "'c' is neither a model input (a, b) nor a trained output (cls, reg)");
  snprintf(args, sizeof args, "train '%s' --data a.npy,cls.npy %s", g_model, loss);
  check_stderr(args,
               "the model has 2 inputs and 2 trained outputs: give --data "
               "NAME=FILE.npy");
  snprintf(args, sizeof args,
           "train '%s' --data a=a.npy,b=b.npy,cls=cls.npy,reg=reg.npy --loss "
           "cls=cross_entropy,zzz=mse -o x.dmlpkg",
           g_model);
  check_stderr(args, "forward has no output named 'zzz'");
  snprintf(args, sizeof args,
           "train '%s' --data a=a.npy,b=b.npy,cls=cls.npy,reg=reg.npy --loss cls=foo "
           "-o x.dmlpkg",
           g_model);
  check_stderr(args, "unknown loss 'foo'");
  snprintf(args, sizeof args,
           "compile '%s' --train --loss cls=cross_entropy,reg=mse:-1 -o x.dmlpkg",
           g_model);
  check_stderr(args, "weight '-1' of output 'reg' must be a finite number >= 0");
  snprintf(args, sizeof args,
           "compile '%s' --train --loss cls=cross_entropy --loss-output reg -o x.dmlpkg",
           g_model);
  check_stderr(args, "output 'reg' names the output of a single loss");
}

/* A run resumed from a checkpoint continues as the uninterrupted one (the
 * per-output columns too), and the checkpoint records the losses per
 * output: another weight is refused. */
static void test_resume(void) {
  char args[2048], a[600], b[600];
  const char *common =
      "--data a=a.npy,b=b.npy,cls=cls.npy,reg=reg.npy --quiet "
      "--loss cls=cross_entropy,reg=mse:0.5";
  char *err = NULL;
  snprintf(args, sizeof args, "train '%s' %s --epochs 4 --history full.csv -o f.dmlpkg",
           g_model, common);
  CHECK(dmlc(args, &err) == 0);
  free(err);
  snprintf(
      args, sizeof args,
      "train '%s' %s --epochs 2 --checkpoint-every 2 --checkpoint-dir ck -o h.dmlpkg",
      g_model, common);
  CHECK(dmlc(args, &err) == 0);
  free(err);
  snprintf(
      args, sizeof args,
      "train '%s' %s --epochs 4 --resume ck/epoch-0002.safetensors --history res.csv "
      "-o r.dmlpkg",
      g_model, common);
  CHECK(dmlc(args, &err) == 0);
  free(err);
  snprintf(a, sizeof a, "%s/full.csv", g_dir);
  snprintf(b, sizeof b, "%s/res.csv", g_dir);
  char *full = csv_without_seconds(a), *res = csv_without_seconds(b);
  /* res.csv: the header and epochs 3, 4; full.csv: the header and 1..4 */
  const char *e3 = full ? strstr(full, "\n3,") : NULL;
  const char *r3 = res ? strchr(res, '\n') : NULL;
  CHECK(e3 && r3 && !strcmp(e3, r3));
  free(full);
  free(res);
  snprintf(args, sizeof args,
           "train '%s' --data a=a.npy,b=b.npy,cls=cls.npy,reg=reg.npy --loss "
           "cls=cross_entropy,reg=mse:0.4 --epochs 4 --resume ck/epoch-0002.safetensors "
           "-o r.dmlpkg",
           g_model);
  check_stderr(args,
               "loss: checkpoint cls=cross_entropy,reg=mse:0.5, this run "
               "cls=cross_entropy,reg=mse:0.4");
}

/* The numbers of a history CSV without its seconds (csv_without_seconds:
 * every field but the header and `validation`, now column 7), into
 * v[0..*n). */
static void csv_numbers(const char *text, double *v, int cap, int *n) {
  *n = 0;
  const char *p = text ? strchr(text, '\n') : NULL;
  int col = 1;
  for (; p && *p && *n < cap; p++) {
    if (*p == '\n' || *p == ',') {
      col = *p == '\n' ? 1 : col + 1;
      if (col != 7 && p[1] && p[1] != ',' && p[1] != '\n')
        v[(*n)++] = strtod(p + 1, NULL);
    }
  }
}

/* On a Vulkan device (lavapipe in CI) the two-output model trains as on
 * the CPU: the same columns, values within 1e-4 relative (the GEMMs sum in
 * another order). */
static void test_vulkan(void) {
  char args[2048], path[600];
  snprintf(args, sizeof args, "devices | grep -q '^vulkan:0 ' 2>/dev/null");
  char *err = NULL;
  if (dmlc(args, &err) != 0) {
    printf("SKIP: test_vulkan: no Vulkan device\n");
    free(err);
    return;
  }
  free(err);
  const char *common =
      "--data a=a.npy,b=b.npy,cls=cls.npy,reg=reg.npy --quiet --epochs 2 "
      "--loss cls=cross_entropy,reg=mse:0.5";
  snprintf(args, sizeof args, "train '%s' %s --history cpu.csv -o cpu.dmlpkg", g_model,
           common);
  CHECK(dmlc(args, &err) == 0);
  free(err);
  snprintf(args, sizeof args,
           "train '%s' %s --device vulkan --history vk.csv -o vk.dmlpkg", g_model,
           common);
  CHECK(dmlc(args, &err) == 0);
  if (err && err[0]) fprintf(stderr, "%s", err);
  free(err);
  snprintf(path, sizeof path, "%s/cpu.csv", g_dir);
  char *c = csv_without_seconds(path);
  snprintf(path, sizeof path, "%s/vk.csv", g_dir);
  char *v = csv_without_seconds(path);
  CHECK(c && v && !strncmp(c, v, (size_t)(strchr(c, '\n') - c)));
  double a[64], b[64];
  int na = 0, nb = 0;
  csv_numbers(c, a, 64, &na);
  csv_numbers(v, b, 64, &nb);
  CHECK(na == nb && na >= 2 * 12);
  for (int i = 0; i < na && i < nb; i++) CHECK_NEAR(a[i], b[i], 1e-4 * fabs(a[i]) + 1e-7);
  free(c);
  free(v);
}

/* `dmlc compile --train --loss OUT=LOSS:W,...` writes the package `dmlc
 * train` trains: the same functions (two targets, per-output results). */
static void test_compile_train(void) {
  char args[2048], path[600];
  snprintf(args, sizeof args,
           "compile '%s' --train --loss cls=cross_entropy,reg=mse:0.5 -o c.dmlpkg",
           g_model);
  char *err = NULL;
  CHECK(dmlc(args, &err) == 0);
  free(err);
  snprintf(path, sizeof path, "%s/c.dmlpkg", g_dir);
  dml_rt_model_t *m = NULL;
  dml_trainer_t *t = NULL;
  CHECK_OK(dml_rt_model_load_file(path, &m));
  if (m) CHECK_OK(dml_trainer_create(m, "cpu", &t));
  if (t) {
    CHECK(dml_trainer_num_inputs(t) == 2 && dml_trainer_num_targets(t) == 2);
    dml_rt_session_t *e = dml_trainer_session(t, "eval_step");
    CHECK(dml_rt_session_find_output(e, "loss.cls") >= 0);
    CHECK(dml_rt_session_find_output(e, "correct.cls") >= 0);
    CHECK(dml_rt_session_find_output(e, "loss.reg") >= 0);
    CHECK(dml_rt_session_find_output(e, "correct.reg") < 0);
    dml_dataset_t d = dataset();
    double loss = 0, ol[DML_MAX_DATA_TENSORS], oa[DML_MAX_DATA_TENSORS];
    CHECK_OK(dml_trainer_evaluate_outputs(t, &d, 0, &loss, NULL, ol, oa));
    CHECK_NEAR(loss, ol[0] + 0.5 * ol[1], 1e-5 * loss);
    CHECK(!isnan(oa[0]) && isnan(oa[1]));
  }
  dml_trainer_release(t);
  dml_rt_model_release(m);
}

int main(int argc, char **argv) {
  char dmlc_path[1024], model[1024];
  const char *build = getenv("DMLC_BUILD_DIR"), *src = getenv("DMLC_SOURCE_DIR");
  snprintf(dmlc_path, sizeof dmlc_path, "%s/compiler/dmlc", build ? build : "build");
  g_dmlc = dmlc_path;
  if (argc >= 3) {
    g_dmlc = argv[1];
    src = argv[2];
  }
  if (!src) {
    fprintf(stderr, "usage: test_train_multi DMLC SOURCE_DIR (or set DMLC_SOURCE_DIR)\n");
    return 2;
  }
  snprintf(model, sizeof model, "%s/tests/train/two_head.onnx", src);
  g_model = model;
  if (!mkdtemp(g_dir)) {
    perror("mkdtemp");
    return 1;
  }
  make_data();
  write_npys();
  RUN(test_cli_and_capi);
  RUN(test_batch_callback_stops);
  RUN(test_untrained_output);
  RUN(test_errors);
  RUN(test_compile_train);
  RUN(test_resume);
  RUN(test_vulkan);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
  return dml_test_finish();
}
