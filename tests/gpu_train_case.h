/* gpu_train_case.h — one training case for the GPU backends' tests
 * (tests/vulkan/test_vulkan_train.c on "vulkan", tests/cuda/test_cuda.c on
 * "cuda"): a hand-made train_step (linear model, sum-of-squares loss, SGD;
 * only f32 ops) whose Assign nodes store the new parameters into the
 * device's weights buffer, fused into the kernels computing them (a GEMM
 * with symbolic K — X^T dY over the batch —, an elementwise kernel) or as
 * copy kernels. gpu_train_compare runs the same steps on the CPU and the
 * device and compares the losses and globals: |device - cpu| <= 1e-5 *
 * max(1, |cpu|) (sums in another order); forward sharing the device
 * globals, globals written between runs, sessions released in any order.
 * Header-only (static functions): the CUDA test links the runtime only. */
#ifndef DML_GPU_TRAIN_CASE_H_
#define DML_GPU_TRAIN_CASE_H_

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_rt.h"
#include "dml_test.h"

#define GT_TOL 1e-5

/* forward: y = x W + b. train_step: d = y - t, loss = sum(d^2),
 * dY = 2d, W -= lr X^T dY, b -= lr sum_rows(dY); U -= U Z (a GEMM reading
 * U: its Assign cannot be fused, a copy kernel stores it); last = lr (an
 * input assigned as is). */
static inline const char *gpu_train_module(void) {
  return "sym batch <= 16\n"
         "global @w : f32[4,3] param = dense<[0.5, -0.25, 0.125, 0.75, 0.0, -0.5, 0.25, "
         "0.5, "
         "-0.75, 1.0, 0.375, -0.125]>\n"
         "global @b : f32[3] param = dense<[0.1, -0.2, 0.3]>\n"
         "global @u : f32[4,3] param = dense<[1.0, 0.5, 0.25, -1.0, 0.5, 0.75, 0.0, "
         "0.25, "
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
}

static uint64_t gt_rng = 0x9E3779B97F4A7C15ull;
static inline float gt_frand(void) {
  gt_rng ^= gt_rng << 13, gt_rng ^= gt_rng >> 7, gt_rng ^= gt_rng << 17;
  return (float)((double)(gt_rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static inline dml_tensor_t gt_tensor(float *d, int32_t rank, int64_t d0, int64_t d1) {
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
static inline double gt_globals_err(const dml_rt_model_t *m, dml_rt_session_t *a,
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
static inline float gt_step(dml_rt_session_t *s, float *x, float *t, int64_t n,
                            float lr) {
  dml_tensor_t tx = gt_tensor(x, 2, n, 4), tt = gt_tensor(t, 2, n, 3),
               tl = gt_tensor(&lr, 0, 0, 0);
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

/* Runs the case of k_gpu_train_module (model `m`, compiled for cpu and the
 * device's target) on the CPU and on `device` ("vulkan", "cuda"). */
static inline void gpu_train_compare(dml_rt_model_t *m, const char *device) {
  dml_rt_session_t *ct = NULL, *cf = NULL, *vt = NULL, *vf = NULL;
  CHECK_OK(dml_rt_session_create_function(m, "cpu", "train_step", NULL, &ct));
  CHECK_OK(dml_rt_session_create_function(m, "cpu", "forward", ct, &cf));
  CHECK_OK(dml_rt_session_create_function(m, device, "train_step", NULL, &vt));
  CHECK_OK(dml_rt_session_create_function(m, device, "forward", vt, &vf));
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
    for (int64_t k = 0; k < n * 4; k++) x[k] = gt_frand();
    for (int64_t k = 0; k < n * 3; k++) t[k] = gt_frand();
    float lr = 0.01f + 0.001f * (float)it;
    float lc = gt_step(ct, x, t, n, lr), lv = gt_step(vt, x, t, n, lr);
    double e = fabs((double)lc - lv) / fmax(1.0, fabs((double)lc));
    if (!(e <= worst_loss)) worst_loss = isnan(e) ? 1e9 : e;
    /* read back every few steps (the others leave the device copy newer) */
    if (it % 5 == 4 || it == 23) {
      double g = gt_globals_err(m, vt, ct);
      if (g > worst_glob) worst_glob = g;
    }
  }
  printf("%s: 24 SGD steps: max scaled error loss %.2e, globals %.2e\n", device,
         worst_loss, worst_glob);
  CHECK(worst_loss <= GT_TOL);
  CHECK(worst_glob <= GT_TOL);
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
  dml_tensor_t tx = gt_tensor(xi, 2, 2, 4), yc, yv;
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
    for (int k = 0; k < 4 * 4; k++) x[k] = gt_frand();
    for (int k = 0; k < 4 * 3; k++) t[k] = gt_frand();
    float lc = gt_step(ct, x, t, 4, 0.05f), lv = gt_step(vt, x, t, 4, 0.05f);
    CHECK(fabs((double)lc - lv) <= GT_TOL * fmax(1.0, fabs((double)lc)));
  }
  CHECK(gt_globals_err(m, vt, ct) <= GT_TOL);
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
}

/* Training-mode Dropout (ratio 0.5 from the session seed, ratio 0.3 with
 * its own `seed` attribute) in a train_step: h = Dropout(x), y = h W + b,
 * z = Dropout(y), loss = sum(z^2), W -= lr h^T z. The device draws the
 * CPU's Philox stream (runtime/base/dml_philox.h), so the masks are
 * identical and h, z, the loss and W agree within GT_TOL. */
static inline const char *gpu_dropout_module(void) {
  return "sym batch <= 16\n"
         "global @w : f32[64,5] param\n"
         "global @b : f32[5] = dense<[0.5, -1.0, 0.25, 2.0, -0.75]>\n"
         "global @r1 : f32[] = dense<[0.5]>\n"
         "global @r2 : f32[] = dense<[0.3]>\n"
         "global @on : bool[] = dense<[true]>\n"
         "func @train_step(%x: f32[batch,64], %lr: f32[]) -> (f32[batch,64], "
         "bool[batch,64], f32[batch,5], bool[batch,5], f32[]) {\n"
         "  %h, %m1 = Dropout(%x, @r1, @on) : f32[batch,64], bool[batch,64]\n"
         "  %y = Gemm(%h, @w, @b) : f32[batch,5]\n"
         "  %z, %m2 = Dropout(%y, @r2, @on) {seed = 7} : f32[batch,5], bool[batch,5]\n"
         "  %sq = Mul(%z, %z) : f32[batch,5]\n"
         "  %loss = ReduceSum(%sq) {axes = [0, 1], keepdims = 0} : f32[]\n"
         "  %g = Gemm(%h, %z) {transA = 1} : f32[64,5]\n"
         "  %s = Mul(%g, %lr) : f32[64,5]\n"
         "  %w1 = Sub(@w, %s) : f32[64,5]\n"
         "  Assign(@w, %w1)\n"
         "  return %h, %m1, %z, %m2, %loss\n"
         "}\n";
}

/* Runs one step of gpu_dropout_module on session s; the outputs in o[5]. */
static inline void gd_step(dml_rt_session_t *s, float *x, int64_t n, float lr,
                           dml_tensor_t o[5]) {
  dml_tensor_t tx = gt_tensor(x, 2, n, 64), tl = gt_tensor(&lr, 0, 0, 0);
  CHECK_OK(dml_rt_session_set_input(s, 0, &tx));
  CHECK_OK(dml_rt_session_set_input(s, 1, &tl));
  CHECK_OK(dml_rt_session_run(s));
  for (uint32_t k = 0; k < 5; k++) {
    memset(&o[k], 0, sizeof o[k]);
    CHECK_OK(dml_rt_session_get_output(s, k, &o[k]));
  }
}

/* Compares the outputs of one step: floats within GT_TOL scaled, masks
 * equal; returns the number of mask bytes that differ (and counts the
 * kept elements of m1 in *kept). */
static inline int64_t gd_compare(const dml_tensor_t c[5], const dml_tensor_t v[5],
                                 double *worst, int64_t *kept) {
  int64_t bad = 0;
  for (int k = 0; k < 5; k++) {
    if (!c[k].data || !v[k].data) return -1;
    int64_t n = dml_dims_numel(c[k].dims, c[k].rank);
    if (dml_dims_numel(v[k].dims, v[k].rank) != n) return -1;
    for (int64_t i = 0; i < n; i++) {
      if (c[k].dtype == DML_DTYPE_BOOL) {
        uint8_t a = ((const uint8_t *)c[k].data)[i], b = ((const uint8_t *)v[k].data)[i];
        bad += a != b;
        if (k == 1) *kept += b;
      } else {
        double p = ((const float *)c[k].data)[i], q = ((const float *)v[k].data)[i];
        double e = fabs(p - q) / fmax(1.0, fabs(p));
        if (!(e <= *worst)) *worst = isnan(e) ? 1e9 : e;
      }
    }
  }
  return bad;
}

/* Runs gpu_dropout_module (model `m`, compiled for cpu and the device's
 * target) on the CPU and on `device` for several steps and batches:
 * masks identical, values within GT_TOL, masks that change from step to
 * step, about half the elements kept at ratio 0.5, a step replayed with
 * dml_rt_session_set_seed (another seed too). */
static inline void gpu_dropout_compare(dml_rt_model_t *m, const char *device) {
  dml_rt_session_t *c = NULL, *v = NULL;
  CHECK_OK(dml_rt_session_create_function(m, "cpu", "train_step", NULL, &c));
  CHECK_OK(dml_rt_session_create_function(m, device, "train_step", NULL, &v));
  float *x = (float *)malloc(16 * 64 * sizeof(float));
  uint8_t *first = (uint8_t *)malloc(16 * 64);
  if (!c || !v || !x || !first) goto out;
  const int64_t batches[] = {16, 3, 16, 1, 9, 16};
  double worst = 0;
  int64_t bad = 0, kept = 0, total = 0, changed = 0;
  for (int it = 0; it < 6; it++) {
    int64_t n = batches[it];
    for (int64_t k = 0; k < n * 64; k++) x[k] = gt_frand();
    float lr = 0.01f;
    dml_tensor_t oc[5], ov[5];
    gd_step(c, x, n, lr, oc);
    gd_step(v, x, n, lr, ov);
    bad += gd_compare(oc, ov, &worst, &kept);
    total += n * 64;
    /* Steps 0 and 2 both have batch 16: a new step, new masks. */
    if (it == 0 && ov[1].data) memcpy(first, ov[1].data, 16 * 64);
    if (it == 2 && ov[1].data)
      for (int k = 0; k < 16 * 64; k++) changed += first[k] != ((uint8_t *)ov[1].data)[k];
  }
  double g = gt_globals_err(m, v, c);
  printf(
      "%s: Dropout train_step, 6 steps: %lld mask bytes differ, max scaled error "
      "%.2e, globals %.2e, kept %.4f at ratio 0.5, %lld of 1024 mask bytes changed "
      "between steps\n",
      device, (long long)bad, worst, g, (double)kept / (double)total, (long long)changed);
  CHECK(bad == 0);
  CHECK(worst <= GT_TOL);
  CHECK(g <= GT_TOL);
  CHECK(fabs((double)kept / (double)total - 0.5) < 0.05);
  CHECK(changed > 300);
  /* Replay: the same (seed, step) on both, another seed. */
  dml_rt_session_set_seed(c, 12345, 2);
  dml_rt_session_set_seed(v, 12345, 2);
  for (int64_t k = 0; k < 16 * 64; k++) x[k] = gt_frand();
  dml_tensor_t oc[5], ov[5];
  gd_step(c, x, 16, 0.0f, oc);
  gd_step(v, x, 16, 0.0f, ov);
  worst = 0;
  kept = 0;
  CHECK(gd_compare(oc, ov, &worst, &kept) == 0);
  CHECK(worst <= GT_TOL);
  if (ov[1].data) memcpy(first, ov[1].data, 16 * 64);
  dml_rt_session_set_seed(v, 12345, 2);
  gd_step(v, x, 16, 0.0f, ov);
  CHECK(ov[1].data && memcmp(first, ov[1].data, 16 * 64) == 0);
out:
  free(x);
  free(first);
  dml_rt_session_release(c);
  dml_rt_session_release(v);
}

/* Dropout with ratio and training_mode given at run time (as the ONNX
 * conformance tests feed them): the kernel computes the threshold from
 * the f32 ratio; masks identical to the CPU's for ratios 0.5, 0.3, 0.75,
 * 0 and 1, training on and off, values within GT_TOL. */
static inline const char *gpu_dropout_rt_module(void) {
  return "sym batch <= 16\n"
         "func @forward(%x: f32[batch,64], %r: f32[], %t: bool[]) -> (f32[batch,64], "
         "bool[batch,64]) {\n"
         "  %y, %m = Dropout(%x, %r, %t) : f32[batch,64], bool[batch,64]\n"
         "  return %y, %m\n"
         "}\n";
}

static inline void gpu_dropout_rt_compare(dml_rt_model_t *m, const char *device) {
  dml_rt_session_t *c = NULL, *v = NULL;
  CHECK_OK(dml_rt_session_create(m, "cpu", &c));
  CHECK_OK(dml_rt_session_create(m, device, &v));
  float x[16 * 64];
  if (!c || !v) goto out;
  const float ratios[] = {0.5f, 0.3f, 0.75f, 0.0f, 1.0f, 0.5f};
  const uint8_t on[] = {1, 1, 1, 1, 1, 0};
  double worst = 0;
  int64_t bad = 0, kept[6] = {0};
  for (int it = 0; it < 6; it++) {
    int64_t n = it % 2 ? 7 : 16;
    for (int64_t k = 0; k < n * 64; k++) x[k] = gt_frand();
    float r = ratios[it];
    uint8_t t = on[it];
    dml_tensor_t tx = gt_tensor(x, 2, n, 64), tr = gt_tensor(&r, 0, 0, 0),
                 tt = gt_tensor(NULL, 0, 0, 0);
    tt.dtype = DML_DTYPE_BOOL;
    tt.data = &t;
    dml_rt_session_t *ss[2] = {c, v};
    dml_tensor_t y[2][2];
    for (int k = 0; k < 2; k++) {
      CHECK_OK(dml_rt_session_set_input(ss[k], 0, &tx));
      CHECK_OK(dml_rt_session_set_input(ss[k], 1, &tr));
      CHECK_OK(dml_rt_session_set_input(ss[k], 2, &tt));
      CHECK_OK(dml_rt_session_run(ss[k]));
      memset(y[k], 0, sizeof y[k]);
      CHECK_OK(dml_rt_session_get_output(ss[k], 0, &y[k][0]));
      CHECK_OK(dml_rt_session_get_output(ss[k], 1, &y[k][1]));
    }
    if (!y[0][0].data || !y[1][0].data || !y[0][1].data || !y[1][1].data) goto out;
    for (int64_t k = 0; k < n * 64; k++) {
      double p = ((const float *)y[0][0].data)[k], q = ((const float *)y[1][0].data)[k];
      double e = fabs(p - q) / fmax(1.0, fabs(p));
      if (!(e <= worst)) worst = isnan(e) ? 1e9 : e;
      uint8_t a = ((const uint8_t *)y[0][1].data)[k],
              b = ((const uint8_t *)y[1][1].data)[k];
      bad += a != b;
      kept[it] += b;
    }
  }
  printf(
      "%s: Dropout with run-time ratio and training_mode: %lld mask bytes differ, "
      "max scaled error %.2e; kept %lld/1024 (0.5), %lld/448 (0.3), %lld/1024 (0.75), "
      "%lld/448 (0), %lld/1024 (1), %lld/448 (off)\n",
      device, (long long)bad, worst, (long long)kept[0], (long long)kept[1],
      (long long)kept[2], (long long)kept[3], (long long)kept[4], (long long)kept[5]);
  CHECK(bad == 0);
  CHECK(worst <= GT_TOL);
  CHECK(kept[3] == 448 && kept[4] == 0 && kept[5] == 448);
  CHECK(kept[0] > 400 && kept[0] < 624 && kept[2] > 180 && kept[2] < 330);
out:
  dml_rt_session_release(c);
  dml_rt_session_release(v);
}

/* The random ops on the device against the CPU: RandomUniform (low/high,
 * own seed), RandomUniformLike (f32, and f64 from 53-bit uniforms),
 * RandomNormal (mean/scale, own seed), RandomNormalLike, Bernoulli to f32
 * and to bool, Bernoulli of f64 probabilities. Same Philox bits:
 * Bernoulli's outputs equal the CPU's; the f32 uniforms within 1e-6, the
 * f64 ones within 1e-12 and the normals within 1e-4 scaled by
 * max(1, |cpu|) (the CPU maps the bits in double, the device in f32 with
 * its log/sin/cos). */
static inline const char *gpu_random_module(void) {
  return "sym batch <= 16\n"
         "func @forward(%p: f32[batch,40]) -> (f32[3,50], f32[batch,40], f32[4,33], "
         "f32[batch,40], f32[batch,40], bool[batch,40], f64[batch,40], f64[batch,40]) "
         "{\n"
         "  %u = RandomUniform() {shape = [3, 50], low = -2.0, high = 3.0, seed = 11.0, "
         "dtype = 1} : f32[3,50]\n"
         "  %v = RandomUniformLike(%p) : f32[batch,40]\n"
         "  %n = RandomNormal() {shape = [4, 33], mean = 1.0, scale = 2.0, seed = 5.0, "
         "dtype = 1} : f32[4,33]\n"
         "  %m = RandomNormalLike(%p) : f32[batch,40]\n"
         "  %b = Bernoulli(%p) : f32[batch,40]\n"
         "  %c = Bernoulli(%p) {dtype = 9} : bool[batch,40]\n"
         "  %ud = RandomUniformLike(%p) {dtype = 11, low = -1.0, high = 2.0} : "
         "f64[batch,40]\n"
         "  %pd = Cast(%p) {to = 11} : f64[batch,40]\n"
         "  %bd = Bernoulli(%pd) : f64[batch,40]\n"
         "  return %u, %v, %n, %m, %b, %c, %ud, %bd\n"
         "}\n";
}

/* Runs gpu_random_module on the CPU and `device` for a few runs. */
static inline void gpu_random_compare(dml_rt_model_t *m, const char *device) {
  dml_rt_session_t *c = NULL, *v = NULL;
  CHECK_OK(dml_rt_session_create(m, "cpu", &c));
  CHECK_OK(dml_rt_session_create(m, device, &v));
  float p[16 * 40], last_v0 = 0;
  if (!c || !v) goto out;
  const double tol[8] = {1e-6, 1e-6, 1e-4, 1e-4, 0, 0, 1e-12, 0};
  double worst[8] = {0};
  int64_t ones = 0, total = 0, same_as_last = 0;
  const int64_t batches[] = {16, 5, 16, 1};
  for (int it = 0; it < 4; it++) {
    int64_t n = batches[it];
    for (int64_t k = 0; k < n * 40; k++) p[k] = 0.5f * (gt_frand() + 1.0f);
    dml_tensor_t tp = gt_tensor(p, 2, n, 40);
    CHECK_OK(dml_rt_session_set_input(c, 0, &tp));
    CHECK_OK(dml_rt_session_set_input(v, 0, &tp));
    CHECK_OK(dml_rt_session_run(c));
    CHECK_OK(dml_rt_session_run(v));
    for (uint32_t o = 0; o < 8; o++) {
      dml_tensor_t a, b;
      memset(&a, 0, sizeof a);
      memset(&b, 0, sizeof b);
      CHECK_OK(dml_rt_session_get_output(c, o, &a));
      CHECK_OK(dml_rt_session_get_output(v, o, &b));
      if (!a.data || !b.data) goto out;
      int64_t cnt = dml_dims_numel(a.dims, a.rank);
      CHECK(cnt == dml_dims_numel(b.dims, b.rank));
      for (int64_t k = 0; k < cnt; k++) {
        double x, y;
        if (a.dtype == DML_DTYPE_BOOL) {
          x = ((const uint8_t *)a.data)[k];
          y = ((const uint8_t *)b.data)[k];
        } else if (a.dtype == DML_DTYPE_F64) {
          x = ((const double *)a.data)[k];
          y = ((const double *)b.data)[k];
        } else {
          x = ((const float *)a.data)[k];
          y = ((const float *)b.data)[k];
        }
        double e = fabs(x - y) / fmax(1.0, fabs(x));
        if (!(e <= worst[o])) worst[o] = isnan(e) ? 1e9 : e;
        if (o == 4) ones += y != 0, total++;
      }
      /* RandomUniformLike's first element: a new step, a new value */
      if (o == 1) {
        float v0 = ((const float *)b.data)[0];
        if (it > 0 && v0 == last_v0) same_as_last++;
        last_v0 = v0;
      }
    }
  }
  printf(
      "%s: random ops, 4 runs: max scaled error uniform %.2e, uniform_like %.2e, "
      "normal %.2e, normal_like %.2e, bernoulli %.0f, bernoulli->bool %.0f, "
      "uniform_like f64 %.2e, bernoulli f64 %.0f; bernoulli ones %.3f (mean p 0.5)\n",
      device, worst[0], worst[1], worst[2], worst[3], worst[4], worst[5], worst[6],
      worst[7], (double)ones / (double)total);
  for (int o = 0; o < 8; o++) CHECK(worst[o] <= tol[o]);
  CHECK(fabs((double)ones / (double)total - 0.5) < 0.06);
  CHECK(same_as_last == 0);
out:
  dml_rt_session_release(c);
  dml_rt_session_release(v);
}

#endif /* DML_GPU_TRAIN_CASE_H_ */
