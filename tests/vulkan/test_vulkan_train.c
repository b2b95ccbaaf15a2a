/* test_vulkan_train.c — training functions on Vulkan: a hand-made train_step
 * (linear model, sum-of-squares loss, SGD; only f32 ops) whose Assign nodes
 * store the new parameters into the device's weights buffer, fused into the
 * kernels computing them (a GEMM with symbolic K — X^T dY over the batch —,
 * a reduction) or as copy kernels. Runs the same steps on the CPU and on
 * the default Vulkan device (Mesa's lavapipe in CI) and compares the losses
 * and the globals after every step: |vulkan - cpu| <= 1e-5 * max(1, |cpu|)
 * (sums in another order). Also: forward sharing the device globals,
 * globals written between runs reach the device, sessions released in any
 * order, and the error for sessions sharing globals on two devices. Skips
 * (77) without a Vulkan device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen_test_util.h"
#include "dml_rt.h"
#include "dml_trainer.h"

#define TOL 1e-5

/* forward: y = x W + b. train_step: d = y - t, loss = sum(d^2),
 * dY = 2d, W -= lr X^T dY, b -= lr sum_rows(dY); U -= U Z (a GEMM reading
 * U: its Assign cannot be fused, a copy kernel stores it); last = lr (an
 * input assigned as is). */
static const char k_module[] =
    "sym batch <= 16\n"
    "global @w : f32[4,3] param = dense<[0.5, -0.25, 0.125, 0.75, 0.0, -0.5, 0.25, 0.5, "
    "-0.75, 1.0, 0.375, -0.125]>\n"
    "global @b : f32[3] param = dense<[0.1, -0.2, 0.3]>\n"
    "global @u : f32[4,3] param = dense<[1.0, 0.5, 0.25, -1.0, 0.5, 0.75, 0.0, 0.25, "
    "-0.5, 0.125, 1.0, 0.5]>\n"
    "global @z : f32[3,3] = dense<[0.01, 0.02, 0.0, -0.01, 0.03, 0.01, 0.0, 0.02, "
    "-0.02]>\n"
    "global @last : f32[] state = dense<[0.0]>\n"
    "func @forward(%x: f32[batch,4]) -> (f32[batch,3]) {\n"
    "  %y = Gemm(%x, @w, @b) : f32[batch,3]\n"
    "  return %y\n"
    "}\n"
    "func @train_step(%x: f32[batch,4], %t: f32[batch,3], %lr: f32[]) -> (f32[]) {\n"
    "  %y = Gemm(%x, @w, @b) : f32[batch,3]\n"
    "  %d = Sub(%y, %t) : f32[batch,3]\n"
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
    "  %uz = Gemm(@u, @z) : f32[4,3]\n"
    "  %u1 = Sub(@u, %uz) : f32[4,3]\n"
    "  Assign(@u, %u1)\n"
    "  Assign(@last, %lr)\n"
    "  return %loss\n"
    "}\n";

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static float frand(void) {
  g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
  return (float)((double)(g_rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static dml_tensor_t tensor(float *d, int32_t rank, int64_t d0, int64_t d1) {
  dml_tensor_t t;
  memset(&t, 0, sizeof t);
  t.dtype = DML_DTYPE_F32;
  t.rank = rank;
  t.dims[0] = d0;
  t.dims[1] = d1;
  t.data = d;
  return t;
}

/* Largest scaled difference between the globals of two sessions. */
static double globals_err(const dml_rt_model_t *m, dml_rt_session_t *a,
                          dml_rt_session_t *b) {
  double worst = 0;
  for (uint32_t i = 0; i < dml_rt_model_num_globals(m); i++) {
    dml_tensor_t x, y;
    CHECK_OK(dml_rt_session_global(a, i, &x));
    CHECK_OK(dml_rt_session_global(b, i, &y));
    int64_t n = dml_dims_numel(x.dims, x.rank);
    for (int64_t k = 0; k < n; k++) {
      double p = ((const float *)x.data)[k], q = ((const float *)y.data)[k];
      double e = fabs(p - q) / fmax(1.0, fabs(q));
      if (!(e <= worst)) worst = isnan(e) ? 1e9 : e;
    }
  }
  return worst;
}

/* One train_step on session s with batch `x` [n,4], `t` [n,3]; the loss. */
static float step(dml_rt_session_t *s, float *x, float *t, int64_t n, float lr) {
  dml_tensor_t tx = tensor(x, 2, n, 4), tt = tensor(t, 2, n, 3),
               tl = tensor(&lr, 0, 0, 0);
  dml_rt_session_clear_inputs(s);
  CHECK_OK(dml_rt_session_set_input_by_name(s, "x", &tx));
  CHECK_OK(dml_rt_session_set_input_by_name(s, "t", &tt));
  CHECK_OK(dml_rt_session_set_input_by_name(s, "lr", &tl));
  CHECK_OK(dml_rt_session_run(s));
  dml_tensor_t out;
  memset(&out, 0, sizeof out);
  CHECK_OK(dml_rt_session_get_output(s, 0, &out));
  return out.data ? *(const float *)out.data : NAN;
}

static dml_rt_model_t *load_model(void) {
  size_t n = 0;
  void *bytes = cg_package(k_module, "cpu,vulkan", &n);
  if (!bytes) return NULL;
  dml_rt_model_t *m = NULL;
  CHECK_OK(dml_rt_model_load_memory(bytes, n, &m));
  free(bytes);
  return m;
}

static void test_train_step_matches_cpu(void) {
  dml_rt_model_t *m = load_model();
  if (!m) return;
  dml_rt_session_t *ct = NULL, *cf = NULL, *vt = NULL, *vf = NULL;
  CHECK_OK(dml_rt_session_create_function(m, "cpu", "train_step", NULL, &ct));
  CHECK_OK(dml_rt_session_create_function(m, "cpu", "forward", ct, &cf));
  CHECK_OK(dml_rt_session_create_function(m, "vulkan", "train_step", NULL, &vt));
  CHECK_OK(dml_rt_session_create_function(m, "vulkan", "forward", vt, &vf));
  if (!ct || !cf || !vt || !vf) goto out;
  CHECK(dml_rt_session_globals_writable(vt));
  /* Kernels: forward GEMM + d, dY, d^2 | loss | X^T dY, * lr, W - ., Assign(w)
   * | row sums of dY | * lr, b - ., Assign(b) (the planner reuses dY's
   * memory, so the epilogue is a kernel of its own) | U Z, U - . | Assign(u)
   * copy | Assign(last) copy. */
  CHECK(dml_rt_session_num_kernels(vt) == 8);
  const uint32_t want_nodes[8] = {4, 1, 4, 1, 3, 2, 1, 1};
  float x[16 * 4], t[16 * 3];
  const int64_t batches[] = {5, 16, 1, 7, 16, 3, 12, 9};
  double worst_loss = 0, worst_glob = 0;
  for (int it = 0; it < 24; it++) {
    int64_t n = batches[it % 8];
    for (int64_t k = 0; k < n * 4; k++) x[k] = frand();
    for (int64_t k = 0; k < n * 3; k++) t[k] = frand();
    float lr = 0.01f + 0.001f * (float)it;
    float lc = step(ct, x, t, n, lr), lv = step(vt, x, t, n, lr);
    double e = fabs((double)lc - lv) / fmax(1.0, fabs((double)lc));
    if (!(e <= worst_loss)) worst_loss = isnan(e) ? 1e9 : e;
    /* read back every few steps (the others leave the device copy newer) */
    if (it % 5 == 4 || it == 23) {
      double g = globals_err(m, vt, ct);
      if (g > worst_glob) worst_glob = g;
    }
  }
  printf("24 SGD steps: max scaled error loss %.2e, globals %.2e\n", worst_loss,
         worst_glob);
  CHECK(worst_loss <= TOL);
  CHECK(worst_glob <= TOL);
  for (uint32_t k = 0; k < dml_rt_session_num_kernels(vt) && k < 8; k++) {
    dml_rt_kernel_info_t ki;
    CHECK_OK(dml_rt_session_kernel_info(vt, k, &ki));
    if (ki.n_nodes != want_nodes[k])
      fprintf(stderr, "  kernel %u (%s): %u nodes, expected %u\n", k, ki.name, ki.n_nodes,
              want_nodes[k]);
    CHECK(ki.n_nodes == want_nodes[k]);
  }
  /* The training moved the parameters: last holds the last lr. */
  dml_tensor_t g;
  CHECK_OK(dml_rt_session_global(vf, (uint32_t)dml_rt_model_find_global(m, "last"), &g));
  CHECK_NEAR(*(const float *)g.data, 0.01f + 0.001f * 23, 1e-7);
  /* forward on the device reads the trained weights. */
  float xi[2 * 4] = {1, 2, 3, 4, -1, 0.5f, 0, 2};
  dml_tensor_t tx = tensor(xi, 2, 2, 4), yc, yv;
  CHECK_OK(dml_rt_session_set_input(cf, 0, &tx));
  CHECK_OK(dml_rt_session_set_input(vf, 0, &tx));
  CHECK_OK(dml_rt_session_run(cf));
  CHECK_OK(dml_rt_session_run(vf));
  CHECK_OK(dml_rt_session_get_output(cf, 0, &yc));
  CHECK_OK(dml_rt_session_get_output(vf, 0, &yv));
  for (int k = 0; k < 6; k++)
    CHECK_NEAR(((const float *)yv.data)[k], ((const float *)yc.data)[k], 1e-4);
  /* Globals written between runs (a checkpoint restored) reach the device. */
  int32_t wi = dml_rt_model_find_global(m, "w");
  dml_tensor_t wc, wv;
  CHECK_OK(dml_rt_session_global(cf, (uint32_t)wi, &wc));
  CHECK_OK(dml_rt_session_global(vf, (uint32_t)wi, &wv));
  for (int k = 0; k < 12; k++)
    ((float *)wc.data)[k] = ((float *)wv.data)[k] = 0.1f * (float)(k - 6);
  CHECK_OK(dml_rt_session_run(cf));
  CHECK_OK(dml_rt_session_run(vf));
  CHECK_OK(dml_rt_session_get_output(cf, 0, &yc));
  CHECK_OK(dml_rt_session_get_output(vf, 0, &yv));
  /* y[0][0] = x0 . W[:,0] + b0 with W[:,0] = [-0.6, -0.3, 0, 0.3] */
  CHECK_NEAR(((const float *)yv.data)[0] - ((const float *)yc.data)[0], 0.0, 1e-4);
  for (int k = 0; k < 6; k++)
    CHECK_NEAR(((const float *)yv.data)[k], ((const float *)yc.data)[k], 1e-4);
  for (int it = 0; it < 3; it++) {
    for (int k = 0; k < 4 * 4; k++) x[k] = frand();
    for (int k = 0; k < 4 * 3; k++) t[k] = frand();
    float lc = step(ct, x, t, 4, 0.05f), lv = step(vt, x, t, 4, 0.05f);
    CHECK(fabs((double)lc - lv) <= TOL * fmax(1.0, fabs((double)lc)));
  }
  CHECK(globals_err(m, vt, ct) <= TOL);
  /* The train session released first: forward keeps the device. */
  dml_rt_session_release(vt);
  vt = NULL;
  CHECK_OK(dml_rt_session_run(vf));
  CHECK_OK(dml_rt_session_get_output(vf, 0, &yv));
  CHECK_OK(dml_rt_session_run(cf));
  CHECK_OK(dml_rt_session_get_output(cf, 0, &yc));
  for (int k = 0; k < 6; k++)
    CHECK_NEAR(((const float *)yv.data)[k], ((const float *)yc.data)[k], 1e-4);
out:
  dml_rt_session_release(vt);
  dml_rt_session_release(vf);
  dml_rt_session_release(ct);
  dml_rt_session_release(cf);
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
      for (int k = 0; k < 65536; k++) g[k] = frand();
      float lr = 0.5f + (float)it;
      dml_tensor_t tg = tensor(g, 1, 65536, 0), tl = tensor(&lr, 0, 0, 0);
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
    double e = globals_err(m, v, c);
    printf("unrolled update: max scaled error %.2e\n", e);
    CHECK(e <= TOL);
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
    for (int k = 0; k < 4; k++) x[r * 4 + k] = frand();
    for (int j = 0; j < 3; j++)
      y[r * 3 + j] =
          0.3f * x[r * 4 + j] - 0.2f * x[r * 4 + 3] + 0.1f * (float)j + 0.01f * frand();
  }
  dml_dataset_t d = {tensor(x, 2, N, 4), tensor(y, 2, N, 3)};
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
            TOL * fmax(1.0, fabs(hc.epochs[e].loss)));
      CHECK(fabs(hc.epochs[e].val_loss - hv.epochs[e].val_loss) <=
            TOL * fmax(1.0, fabs(hc.epochs[e].val_loss)));
    }
    CHECK(hv.epochs[2].loss < hv.epochs[0].loss); /* it learns */
    double e = globals_err(m, dml_trainer_session(tv, "train_step"),
                           dml_trainer_session(tc, "train_step"));
    printf("trainer: globals after 3 epochs, max scaled error %.2e\n", e);
    CHECK(e <= TOL);
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
              TOL * fmax(1.0, fabs(hc.epochs[2].loss)));
      CHECK(globals_err(m, dml_trainer_session(tr, "train_step"),
                        dml_trainer_session(tc, "train_step")) <= TOL);
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
  RUN(test_unrolled_update);
  RUN(test_trainer);
  RUN(test_errors);
  return dml_test_finish();
}
