/* test_vulkan_train.c — training functions on Vulkan (Mesa's lavapipe in
 * CI) against the CPU, within 1e-5 scaled by max(1, |cpu|) (sums in another
 * order): the hand-made train_step of gpu_train_case.h (Assigns fused into
 * a GEMM with symbolic K and an elementwise kernel, and copy kernels;
 * forward sharing the device globals, globals written between runs,
 * sessions released in any order); a 65536-element update in an unrolled
 * elementwise kernel; the trainer (fit, validation, checkpoints written
 * from the device and resumed); the errors of sessions sharing globals on
 * two devices. Skips (77) without a Vulkan device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen_test_util.h"
#include "dml_rt.h"
#include "dml_trainer.h"
#include "gpu_train_case.h"

static dml_rt_model_t *load_model(void) {
  size_t n = 0;
  void *bytes = cg_package(gpu_train_module(), "cpu,vulkan", &n);
  if (!bytes) return NULL;
  dml_rt_model_t *m = NULL;
  CHECK_OK(dml_rt_model_load_memory(bytes, n, &m));
  free(bytes);
  return m;
}

static void test_train_step_matches_cpu(void) {
  dml_rt_model_t *m = load_model();
  if (!m) return;
  gpu_train_compare(m, "vulkan");
  dml_rt_model_release(m);
}

/* Training-mode Dropout on the device against the CPU (gpu_train_case.h). */
static void test_dropout_train_step(void) {
  size_t n = 0;
  void *bytes = cg_package(gpu_dropout_module(), "cpu,vulkan", &n);
  if (!bytes) return;
  dml_rt_model_t *m = NULL;
  CHECK_OK(dml_rt_model_load_memory(bytes, n, &m));
  free(bytes);
  if (m) gpu_dropout_compare(m, "vulkan");
  dml_rt_model_release(m);
}

/* Dropout with run-time ratio and training_mode (gpu_train_case.h). */
static void test_dropout_runtime_inputs(void) {
  size_t n = 0;
  void *bytes = cg_package(gpu_dropout_rt_module(), "cpu,vulkan", &n);
  if (!bytes) return;
  dml_rt_model_t *m = NULL;
  CHECK_OK(dml_rt_model_load_memory(bytes, n, &m));
  free(bytes);
  if (m) gpu_dropout_rt_compare(m, "vulkan");
  dml_rt_model_release(m);
}

/* The random ops on the device against the CPU (gpu_train_case.h). */
static void test_random_ops(void) {
  size_t n = 0;
  void *bytes = cg_package(gpu_random_module(), "cpu,vulkan", &n);
  if (!bytes) return;
  dml_rt_model_t *m = NULL;
  CHECK_OK(dml_rt_model_load_memory(bytes, n, &m));
  free(bytes);
  if (m) gpu_random_compare(m, "vulkan");
  dml_rt_model_release(m);
}

/* A large elementwise update (4 elements per invocation, loaded before the
 * first store) with its Assign fused: big -= lr * g. */
static void test_unrolled_update(void) {
  size_t n = 0;
  void *bytes = cg_package(
      "global @big : f32[65536] param\n"
      "func @train_step(%g: f32[65536], %lr: f32[]) -> (f32[65536]) {\n"
      "  %s = Mul(%g, %lr) : f32[65536]\n"
      "  %n = Sub(@big, %s) : f32[65536]\n"
      "  Assign(@big, %n)\n"
      "  return %n\n}\n",
      "cpu,vulkan", &n);
  if (!bytes) return;
  dml_rt_model_t *m = NULL;
  CHECK_OK(dml_rt_model_load_memory(bytes, n, &m));
  free(bytes);
  dml_rt_session_t *c = NULL, *v = NULL;
  if (m) CHECK_OK(dml_rt_session_create_function(m, "cpu", "train_step", NULL, &c));
  if (m) CHECK_OK(dml_rt_session_create_function(m, "vulkan", "train_step", NULL, &v));
  float *g = (float *)malloc(65536 * sizeof(float));
  if (c && v && g) {
    CHECK(dml_rt_session_num_kernels(v) == 1);
    for (int it = 0; it < 3; it++) {
      for (int k = 0; k < 65536; k++) g[k] = gt_frand();
      float lr = 0.5f + (float)it;
      dml_tensor_t tg = gt_tensor(g, 1, 65536, 0), tl = gt_tensor(&lr, 0, 0, 0);
      CHECK_OK(dml_rt_session_set_input(c, 0, &tg));
      CHECK_OK(dml_rt_session_set_input(v, 0, &tg));
      CHECK_OK(dml_rt_session_set_input(c, 1, &tl));
      CHECK_OK(dml_rt_session_set_input(v, 1, &tl));
      CHECK_OK(dml_rt_session_run(c));
      CHECK_OK(dml_rt_session_run(v));
    }
    dml_rt_kernel_info_t ki;
    CHECK_OK(dml_rt_session_kernel_info(v, 0, &ki));
    CHECK(ki.n_nodes == 3);
    double e = gt_globals_err(m, v, c);
    printf("unrolled update: max scaled error %.2e\n", e);
    CHECK(e <= GT_TOL);
    dml_tensor_t big;
    CHECK_OK(dml_rt_session_global(v, 0, &big));
    CHECK(((const float *)big.data)[65535] != 0.0f);
  }
  free(g);
  dml_rt_session_release(c);
  dml_rt_session_release(v);
  dml_rt_model_release(m);
}

/* The trainer (dml_trainer.h) on Vulkan: fit with validation, a checkpoint
 * each epoch, and a checkpoint restored into a fresh trainer, against the
 * same on the CPU. The package has the three functions the trainer needs
 * (names of passes/dml_train.h); the loss is the batch's sum of squares. */
static const char k_trainer_module[] =
    "sym batch <= 32\n"
    "global @w : f32[4,3] param = dense<[0.5, -0.25, 0.125, 0.75, 0.0, -0.5, 0.25, 0.5, "
    "-0.75, 1.0, 0.375, -0.125]>\n"
    "global @b : f32[3] param = dense<[0.1, -0.2, 0.3]>\n"
    "func @forward(%x: f32[batch,4]) -> (f32[batch,3]) {\n"
    "  %y = Gemm(%x, @w, @b) : f32[batch,3]\n"
    "  return %y\n"
    "}\n"
    "func @train_step(%x: f32[batch,4], %target: f32[batch,3], %lr: f32[]) -> (f32[]) {\n"
    "  %y = Gemm(%x, @w, @b) : f32[batch,3]\n"
    "  %d = Sub(%y, %target) : f32[batch,3]\n"
    "  %dy = Add(%d, %d) : f32[batch,3]\n"
    "  %sq = Mul(%d, %d) : f32[batch,3]\n"
    "  %loss = ReduceSum(%sq) {axes = [0, 1], keepdims = 0} : f32[]\n"
    "  %gw = Gemm(%x, %dy) {transA = 1} : f32[4,3]\n"
    "  %sw = Mul(%gw, %lr) : f32[4,3]\n"
    "  %w1 = Sub(@w, %sw) : f32[4,3]\n"
    "  Assign(@w, %w1)\n"
    "  %gb = ReduceSum(%dy) {axes = [0], keepdims = 0} : f32[3]\n"
    "  %sb = Mul(%gb, %lr) : f32[3]\n"
    "  %b1 = Sub(@b, %sb) : f32[3]\n"
    "  Assign(@b, %b1)\n"
    "  return %loss\n"
    "}\n"
    "func @eval_step(%x: f32[batch,4], %target: f32[batch,3]) -> (f32[]) {\n"
    "  %y = Gemm(%x, @w, @b) : f32[batch,3]\n"
    "  %d = Sub(%y, %target) : f32[batch,3]\n"
    "  %sq = Mul(%d, %d) : f32[batch,3]\n"
    "  %loss = ReduceSum(%sq) {axes = [0, 1], keepdims = 0} : f32[]\n"
    "  return %loss\n"
    "}\n";

static void test_trainer(void) {
  size_t n = 0;
  void *bytes = cg_package(k_trainer_module, "cpu,vulkan", &n);
  if (!bytes) return;
  dml_rt_model_t *m = NULL;
  CHECK_OK(dml_rt_model_load_memory(bytes, n, &m));
  free(bytes);
  if (!m) return;
  /* y = x A + c + noise, 100 rows (the last batch of an epoch is short) */
  enum { N = 100 };
  static float x[N * 4], y[N * 3];
  for (int r = 0; r < N; r++) {
    for (int k = 0; k < 4; k++) x[r * 4 + k] = gt_frand();
    for (int j = 0; j < 3; j++)
      y[r * 3 + j] = 0.3f * x[r * 4 + j] - 0.2f * x[r * 4 + 3] + 0.1f * (float)j +
                     0.01f * gt_frand();
  }
  dml_dataset_t d = {.x = gt_tensor(x, 2, N, 4), .y = gt_tensor(y, 2, N, 3)};
  char dir_c[] = "/tmp/dmlc_vk_train_cXXXXXX", dir_v[] = "/tmp/dmlc_vk_train_vXXXXXX";
  CHECK(mkdtemp(dir_c) != NULL && mkdtemp(dir_v) != NULL);
  dml_trainer_t *tc = NULL, *tv = NULL, *tr = NULL;
  CHECK_OK(dml_trainer_create(m, "cpu", &tc));
  CHECK_OK(dml_trainer_create(m, "vulkan", &tv));
  dml_history_t hc, hv;
  memset(&hc, 0, sizeof hc);
  memset(&hv, 0, sizeof hv);
  if (tc && tv) {
    dml_fit_options_t o;
    dml_fit_options_init(&o);
    o.epochs = 3;
    o.batch_size = 16;
    o.seed = 7;
    o.lr.initial = 0.01;
    o.validation_split = 0.2;
    o.verbose = 0;
    o.checkpoint_every = 1;
    o.checkpoint_dir = dir_c;
    CHECK_OK(dml_trainer_fit(tc, &d, &o, &hc));
    o.checkpoint_dir = dir_v;
    CHECK_OK(dml_trainer_fit(tv, &d, &o, &hv));
    CHECK(hc.n_epochs == 3 && hv.n_epochs == 3);
    for (int e = 0; e < hc.n_epochs && e < hv.n_epochs; e++) {
      printf("epoch %d: loss cpu %.6f vulkan %.6f, val_loss cpu %.6f vulkan %.6f\n",
             e + 1, hc.epochs[e].loss, hv.epochs[e].loss, hc.epochs[e].val_loss,
             hv.epochs[e].val_loss);
      CHECK(fabs(hc.epochs[e].loss - hv.epochs[e].loss) <=
            GT_TOL * fmax(1.0, fabs(hc.epochs[e].loss)));
      CHECK(fabs(hc.epochs[e].val_loss - hv.epochs[e].val_loss) <=
            GT_TOL * fmax(1.0, fabs(hc.epochs[e].val_loss)));
    }
    CHECK(hv.epochs[2].loss < hv.epochs[0].loss); /* it learns */
    double e = gt_globals_err(m, dml_trainer_session(tv, "train_step"),
                              dml_trainer_session(tc, "train_step"));
    printf("trainer: globals after 3 epochs, max scaled error %.2e\n", e);
    CHECK(e <= GT_TOL);
    /* The epoch-2 checkpoint written from the device, restored into a fresh
     * Vulkan trainer, continues as the CPU's does. */
    char path[128];
    snprintf(path, sizeof path, "%s/epoch-0002.safetensors", dir_v);
    CHECK_OK(dml_trainer_create(m, "vulkan", &tr));
    if (tr) {
      CHECK_OK(dml_trainer_load_checkpoint(tr, path));
      CHECK(dml_trainer_epoch(tr) == 2);
      dml_history_t hr;
      memset(&hr, 0, sizeof hr);
      CHECK_OK(dml_trainer_fit(tr, &d, &o, &hr));
      CHECK(hr.n_epochs == 1);
      if (hr.n_epochs == 1)
        CHECK(fabs(hr.epochs[0].loss - hc.epochs[2].loss) <=
              GT_TOL * fmax(1.0, fabs(hc.epochs[2].loss)));
      CHECK(gt_globals_err(m, dml_trainer_session(tr, "train_step"),
                           dml_trainer_session(tc, "train_step")) <= GT_TOL);
      dml_history_free(&hr);
    }
  }
  dml_history_free(&hc);
  dml_history_free(&hv);
  dml_trainer_release(tr);
  dml_trainer_release(tc);
  dml_trainer_release(tv);
  for (int k = 1; k <= 3; k++) {
    char path[128];
    snprintf(path, sizeof path, "%s/epoch-%04d.safetensors", dir_c, k);
    remove(path);
    snprintf(path, sizeof path, "%s/epoch-%04d.safetensors", dir_v, k);
    remove(path);
  }
  rmdir(dir_c);
  rmdir(dir_v);
  dml_rt_model_release(m);
}

static void test_errors(void) {
  dml_rt_model_t *m = load_model();
  if (!m) return;
  dml_rt_session_t *c = NULL, *v = NULL, *x = NULL;
  CHECK_OK(dml_rt_session_create_function(m, "cpu", "train_step", NULL, &c));
  CHECK_OK(dml_rt_session_create_function(m, "vulkan", "train_step", NULL, &v));
  /* Writable globals live on one device. */
  if (c)
    CHECK_ERROR(dml_rt_session_create_function(m, "vulkan", "forward", c, &x),
                DML_STATUS_FAILED_PRECONDITION, "run on one device");
  if (v)
    CHECK_ERROR(dml_rt_session_create_function(m, "cpu", "forward", v, &x),
                DML_STATUS_FAILED_PRECONDITION, "run on one device");
  dml_rt_device_info_t d[16];
  uint32_t n = 0;
  CHECK_OK(dml_rt_vulkan_devices(d, 16, &n));
  if (v && n >= 2) {
    /* another device than the one holding the globals */
    char other[32];
    snprintf(other, sizeof other, "vulkan:%u", d[0].is_default ? 1u : 0u);
    CHECK_ERROR(dml_rt_session_create_function(m, other, "forward", v, &x),
                DML_STATUS_FAILED_PRECONDITION, "sessions sharing globals run on one");
  }
  dml_rt_session_release(c);
  dml_rt_session_release(v);
  dml_rt_model_release(m);
}

int main(void) {
  dml_rt_device_info_t d[16];
  uint32_t n = 0;
  dml_status_t s = dml_rt_vulkan_devices(d, 16, &n);
  if (s) {
    char *msg = dml_status_format(s);
    printf("SKIP: no Vulkan device: %s\n", msg ? msg : "?");
    free(msg);
    dml_status_free(s);
    return 77;
  }
  RUN(test_train_step_matches_cpu);
  RUN(test_dropout_train_step);
  RUN(test_dropout_runtime_inputs);
  RUN(test_random_ops);
  RUN(test_unrolled_update);
  RUN(test_trainer);
  RUN(test_errors);
  return dml_test_finish();
}
