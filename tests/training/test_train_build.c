/*
 * test_train_build.c — dml_train_build (passes/dml_train.h) through the
 * compile driver: every reference model of ../shared/models compiles with
 * every optimizer and loss it suits; train_step on a fixed batch lowers the
 * loss; eval_step's counts agree with forward's argmax; training mode
 * (Dropout, BatchNorm running statistics) reaches the right functions; bad
 * configurations and models give structured errors. Gradient values
 * themselves are checked against finite differences and PyTorch in
 * tests/autodiff.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dml_driver.h"
#include "dml_ir_text.h"
#include "dml_package_emit.h"
#include "dml_passes.h"
#include "dml_rt.h"
#include "dml_test.h"
#include "dml_train.h"
#include "dml_trainer.h"

static dml_status_t compile_model(const char *name, const dml_train_config_t *cfg,
                                  dml_rt_model_t **out) {
  char rel[256], path[1024];
  snprintf(rel, sizeof rel, "models/%s", name);
  dml_test_path("DMLC_SHARED_DIR", rel, path, sizeof path);
  size_t got = 0;
  void *buf = dml_test_read_file(path, &got);
  if (!buf) return dml_status_make(DML_STATUS_NOT_FOUND, "test", "cannot read %s", path);
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.train = cfg;
  o.batch_bound = 16;
  void *pkg = NULL;
  size_t size = 0;
  dml_status_t st = dml_compile_onnx_memory(buf, got, ".", name, &o, &pkg, &size, NULL);
  free(buf);
  if (!st) st = dml_rt_model_load_memory(pkg, size, out);
  free(pkg);
  return st;
}

/* Input `input` filled with a fixed pattern for batch 8; labels 0..7. */
typedef struct batch {
  float *x;
  dml_tensor_t tx, ty, tlr;
  int64_t y[8];
  float lr;
} batch_t;

static void make_batch(dml_rt_session_t *s, batch_t *b, float lr) {
  dml_rt_io_info_t in;
  CHECK_OK(dml_rt_session_input_info(s, 0, &in));
  int64_t dims[DML_MAX_RANK], n = 1;
  for (int32_t d = 0; d < in.rank; d++) {
    dims[d] = in.dims[d] < 0 ? 8 : in.dims[d];
    n *= dims[d];
  }
  b->x = (float *)malloc((size_t)n * sizeof(float));
  for (int64_t i = 0; i < n; i++) b->x[i] = (float)((i * 7919) % 1000) / 1000.0f;
  b->tx = dml_test_tensor(DML_DTYPE_F32, in.rank, dims, b->x);
  for (int i = 0; i < 8; i++) b->y[i] = i;
  int64_t yd = 8;
  b->ty = dml_test_tensor(DML_DTYPE_I64, 1, &yd, b->y);
  b->lr = lr;
  b->tlr = dml_test_tensor(DML_DTYPE_F32, 0, NULL, &b->lr);
}

static float run_loss(dml_rt_session_t *s, const batch_t *b, int with_lr) {
  CHECK_OK(dml_rt_session_set_input_by_name(s, "input", &b->tx));
  CHECK_OK(dml_rt_session_set_input_by_name(s, "target", &b->ty));
  if (with_lr) CHECK_OK(dml_rt_session_set_input_by_name(s, "lr", &b->tlr));
  CHECK_OK(dml_rt_session_run(s));
  dml_tensor_t lo;
  CHECK_OK(dml_rt_session_get_output(s, 0, &lo));
  return lo.data ? *(const float *)lo.data : NAN;
}

/* Every model, several optimizers: train_step runs, the loss on a fixed
 * batch falls, eval_step's `total` is the batch and `correct` in range. */
static void test_models_train(void) {
  static const char *const models[] = {"fashion_mlp_untrained.onnx", "lenet5.onnx",
                                       "resnet_small.onnx"};
  static const dml_optimizer_kind_t opts[] = {DML_OPTIMIZER_SGD, DML_OPTIMIZER_ADAM,
                                              DML_OPTIMIZER_NESTEROV,
                                              DML_OPTIMIZER_RMSPROP};
  static const float lrs[] = {0.05f, 1e-3f, 0.02f, 1e-3f};
  for (size_t mi = 0; mi < 3; mi++)
    for (size_t oi = 0; oi < 4; oi++) {
      if (mi == 2 && oi > 1) continue; /* resnet: two optimizers keep the test short */
      dml_train_config_t cfg;
      dml_train_config_init(&cfg);
      cfg.optimizer = opts[oi];
      dml_rt_model_t *m = NULL;
      CHECK_OK(compile_model(models[mi], &cfg, &m));
      if (!m) continue;
      dml_rt_session_t *tr = NULL, *ev = NULL;
      CHECK_OK(dml_rt_session_create_function(m, "cpu", "train_step", NULL, &tr));
      CHECK_OK(dml_rt_session_create_function(m, "cpu", "eval_step", tr, &ev));
      batch_t b;
      make_batch(tr, &b, lrs[oi]);
      float before = run_loss(ev, &b, 0);
      for (int s = 0; s < 15; s++) run_loss(tr, &b, 1);
      float after = run_loss(ev, &b, 0);
      if (!(after < before))
        fprintf(stderr, "%s/%s: eval loss %g -> %g\n", models[mi],
                dml_optimizer_kind_name(opts[oi]), before, after);
      CHECK(after < before);
      dml_tensor_t c, t;
      CHECK_OK(dml_rt_session_get_output(ev, 1, &c));
      CHECK_OK(dml_rt_session_get_output(ev, 2, &t));
      CHECK(c.dtype == DML_DTYPE_I64 && t.dtype == DML_DTYPE_I64);
      CHECK(*(const int64_t *)t.data == 8);
      int64_t corr = *(const int64_t *)c.data;
      CHECK(corr >= 0 && corr <= 8);
      free(b.x);
      dml_rt_session_release(ev);
      dml_rt_session_release(tr);
      dml_rt_model_release(m);
    }
}

/* The package: functions, globals (optimizer state named as torch.optim's),
 * input/output names and types. */
static void test_package_layout(void) {
  dml_train_config_t cfg;
  dml_train_config_init(&cfg);
  cfg.optimizer = DML_OPTIMIZER_ADAM;
  dml_rt_model_t *m = NULL;
  CHECK_OK(compile_model("fashion_mlp_untrained.onnx", &cfg, &m));
  if (!m) return;
  CHECK(dml_rt_model_num_functions(m) == 3);
  CHECK(dml_rt_model_find_global(m, "1.weight") >= 0);
  CHECK(dml_rt_model_find_global(m, "1.weight.exp_avg") >= 0);
  CHECK(dml_rt_model_find_global(m, "1.weight.exp_avg_sq") >= 0);
  CHECK(dml_rt_model_find_global(m, "optimizer.step") >= 0);
  dml_rt_global_info_t gi;
  CHECK_OK(dml_rt_model_global_info(m, (uint32_t)dml_rt_model_find_global(m, "1.weight"),
                                    &gi));
  CHECK(gi.flags == DML_RT_GLOBAL_PARAM && gi.rank == 2 && gi.dims[0] == 256);
  dml_rt_session_t *tr = NULL, *fw = NULL;
  CHECK_OK(dml_rt_session_create_function(m, "cpu", "train_step", NULL, &tr));
  CHECK_OK(dml_rt_session_create_function(m, "cpu", NULL, tr, &fw));
  CHECK(dml_rt_session_num_inputs(tr) == 3 && dml_rt_session_num_outputs(tr) == 3);
  dml_rt_io_info_t io;
  CHECK_OK(dml_rt_session_input_info(tr, 1, &io));
  CHECK(strcmp(io.name, "target") == 0 && io.dtype == DML_DTYPE_I64 && io.rank == 1);
  CHECK_OK(dml_rt_session_input_info(tr, 2, &io));
  CHECK(strcmp(io.name, "lr") == 0 && io.dtype == DML_DTYPE_F32 && io.rank == 0);
  CHECK(dml_rt_session_find_output(tr, "loss") == 0);
  CHECK(dml_rt_session_find_output(tr, "correct") == 1);
  /* forward is in inference mode: the exported training-mode Dropout is the
   * identity, so two runs give the same logits; train_step's Dropout draws
   * a different mask per run (per step). */
  batch_t b;
  make_batch(fw, &b, 1e-3f);
  CHECK_OK(dml_rt_session_set_input(fw, 0, &b.tx));
  CHECK_OK(dml_rt_session_run(fw));
  dml_tensor_t y1, y2;
  CHECK_OK(dml_rt_session_get_output(fw, 0, &y1));
  float first[80];
  memcpy(first, y1.data, sizeof first);
  CHECK_OK(dml_rt_session_run(fw));
  CHECK_OK(dml_rt_session_get_output(fw, 0, &y2));
  CHECK(memcmp(first, y2.data, sizeof first) == 0);
  /* Same seed and step -> same loss (counter-based RNG); another step ->
   * another dropout mask, another loss (lr 0 keeps the parameters). */
  b.lr = 0.0f;
  dml_rt_session_set_seed(tr, 7, 3);
  float l1 = run_loss(tr, &b, 1);
  dml_rt_session_set_seed(tr, 7, 3);
  float l2 = run_loss(tr, &b, 1);
  float l3 = run_loss(tr, &b, 1);
  CHECK(l1 == l2);
  CHECK(l3 != l1);
  /* Adam counts its steps. */
  dml_tensor_t step;
  CHECK_OK(dml_rt_session_global(
      tr, (uint32_t)dml_rt_model_find_global(m, "optimizer.step"), &step));
  CHECK(*(const float *)step.data == 3.0f);
  free(b.x);
  dml_rt_session_release(fw);
  dml_rt_session_release(tr);
  dml_rt_model_release(m);
}

/* BatchNormalization in train_step: batch statistics, running stats move;
 * eval_step uses the running stats. */
static void test_batchnorm_running_stats(void) {
  dml_train_config_t cfg;
  dml_train_config_init(&cfg);
  cfg.optimizer = DML_OPTIMIZER_SGD; /* what this test was written for */
  dml_rt_model_t *m = NULL;
  CHECK_OK(compile_model("resnet_small.onnx", &cfg, &m));
  if (!m) return;
  int found = 0;
  for (uint32_t i = 0; i < dml_rt_model_num_globals(m); i++) {
    dml_rt_global_info_t gi;
    CHECK_OK(dml_rt_model_global_info(m, i, &gi));
    if (gi.flags != DML_RT_GLOBAL_STATE || gi.rank != 1) continue;
    dml_rt_session_t *tr = NULL;
    CHECK_OK(dml_rt_session_create_function(m, "cpu", "train_step", NULL, &tr));
    dml_tensor_t g;
    CHECK_OK(dml_rt_session_global(tr, i, &g));
    size_t nb = (size_t)gi.bytes;
    float *before = (float *)malloc(nb);
    memcpy(before, g.data, nb);
    batch_t b;
    make_batch(tr, &b, 0.0f);
    run_loss(tr, &b, 1);
    CHECK(memcmp(before, g.data, nb) != 0); /* moved towards the batch's stats */
    free(before);
    free(b.x);
    dml_rt_session_release(tr);
    found = 1;
    break;
  }
  CHECK(found);
  dml_rt_model_release(m);
}

static dml_status_t build_text(const char *text, const dml_train_config_t *cfg) {
  dml_ir_module_t *m = NULL;
  dml_status_t st = dml_ir_parse(text, strlen(text), "t.dmlir", &m);
  dml_pass_options_t o;
  memset(&o, 0, sizeof o);
  if (!st) st = dml_pass_run_pipeline(m, "shape-infer", &o);
  if (!st) st = dml_train_build(m, cfg);
  if (!st) st = dml_pass_run_pipeline(m, dml_pass_default_pipeline(), &o);
  dml_ir_module_release(m);
  return st;
}

static void test_errors(void) {
  dml_train_config_t cfg;
  dml_train_config_init(&cfg);
  cfg.optimizer = DML_OPTIMIZER_SGD; /* what this test was written for */
  const char *mlp =
      "global @w : f32[4,3] param = dense<[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, "
      "1.0, "
      "1.0, 1.0]>\n"
      "func @forward(%x: f32[2,4]) -> (?[?]) {\n  %y = MatMul(%x, @w)\n  return %y\n}\n";
  CHECK_OK(build_text(mlp, &cfg));
  /* An op without a VJP rule on the path is named with its node. */
  const char *norule =
      "global @w : f32[4,3] param = dense<[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, "
      "1.0, "
      "1.0, 1.0]>\n"
      "func @forward(%x: f32[2,4]) -> (?[?]) {\n  %y = MatMul(%x, @w)\n"
      "  %p = Sigmoid(%y)\n  %v = Bernoulli(%p) loc(\"top\")\n"
      "  return %v\n}\n";
  CHECK_ERROR(build_text(norule, &cfg), DML_STATUS_UNIMPLEMENTED,
              "node 'top' (Bernoulli)");
  /* No parameters. */
  CHECK_ERROR(build_text("func @forward(%x: f32[2,4]) -> (?[?]) {\n  %y = Relu(%x)\n"
                         "  return %y\n}\n",
                         &cfg),
              DML_STATUS_INVALID_ARGUMENT, "no trainable parameters");
  /* Unknown output, bad hyper-parameters, class loss on a 1-D output. */
  cfg.output = "nope";
  CHECK_ERROR(build_text(mlp, &cfg), DML_STATUS_NOT_FOUND, "no output named 'nope'");
  dml_train_config_init(&cfg);
  cfg.optimizer = DML_OPTIMIZER_ADAM;
  cfg.beta1 = 1.5;
  CHECK_ERROR(build_text(mlp, &cfg), DML_STATUS_INVALID_ARGUMENT, "beta1 = 1.5");
  dml_train_config_init(&cfg);
  CHECK_ERROR(build_text("global @w : f32[4] param = dense<[1.0, 2.0, 3.0, 4.0]>\n"
                         "func @forward(%x: f32[4]) -> (?[?]) {\n  %y = Mul(%x, @w)\n"
                         "  return %y\n}\n",
                         &cfg),
              DML_STATUS_INVALID_ARGUMENT, "needs a float output [N, C, ...]");
  /* Regression losses accept it; names parse. */
  dml_loss_kind_t lk;
  CHECK_OK(dml_loss_kind_parse("l1", &lk));
  CHECK(lk == DML_LOSS_MAE);
  cfg.loss = DML_LOSS_HUBER;
  CHECK_OK(
      build_text("global @w : f32[4] param = dense<[1.0, 2.0, 3.0, 4.0]>\n"
                 "func @forward(%x: f32[4]) -> (?[?]) {\n  %y = Mul(%x, @w)\n"
                 "  return %y\n}\n",
                 &cfg));
  CHECK_ERROR(dml_loss_kind_parse("hinge", &lk), DML_STATUS_INVALID_ARGUMENT,
              "unknown loss 'hinge'");
  dml_optimizer_kind_t ok;
  CHECK_ERROR(dml_optimizer_kind_parse("lbfgs", &ok), DML_STATUS_INVALID_ARGUMENT,
              "unknown optimizer 'lbfgs'");
}

/* The trainer refuses class labels outside [0, C) (a one-hot row of zeros
 * would add nothing to the loss) and says when a package cannot train. */
static void test_trainer_labels(void) {
  dml_train_config_t cfg;
  dml_train_config_init(&cfg);
  cfg.optimizer = DML_OPTIMIZER_SGD; /* what this test was written for */
  dml_rt_model_t *m = NULL;
  CHECK_OK(compile_model("fashion_mlp_untrained.onnx", &cfg, &m));
  if (!m) return;
  dml_trainer_t *t = NULL;
  CHECK_OK(dml_trainer_create(m, "cpu", &t));
  float x[4 * 784] = {0};
  int64_t y[4] = {0, 9, 12, 3}, xd[2] = {4, 784}, yd = 4;
  dml_dataset_t d;
  d.x = dml_test_tensor(DML_DTYPE_F32, 2, xd, x);
  d.y = dml_test_tensor(DML_DTYPE_I64, 1, &yd, y);
  double loss = 0, acc = 0;
  CHECK_ERROR(dml_trainer_evaluate(t, &d, 4, &loss, &acc), DML_STATUS_OUT_OF_RANGE,
              "label 12 (element 2 of y) is outside [0, 10)");
  y[2] = -1;
  CHECK_ERROR(dml_trainer_evaluate(t, &d, 4, &loss, &acc), DML_STATUS_OUT_OF_RANGE,
              "label -1");
  y[2] = 2;
  CHECK_OK(dml_trainer_evaluate(t, &d, 4, &loss, &acc));
  dml_trainer_release(t);
  dml_rt_model_release(m);
  /* An inference package. */
  CHECK_OK(compile_model("fashion_mlp.onnx", NULL, &m));
  if (!m) return;
  CHECK_ERROR(dml_trainer_create(m, "cpu", &t), DML_STATUS_NOT_FOUND,
              "not a training package");
  dml_rt_model_release(m);
}

int main(void) {
  RUN(test_models_train);
  RUN(test_trainer_labels);
  RUN(test_package_layout);
  RUN(test_batchnorm_running_stats);
  RUN(test_errors);
  return dml_test_finish();
}
