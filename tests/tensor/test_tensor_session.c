/*
 * test_tensor_session.c — sessions whose inputs and outputs are eager
 * tensors on the session's own device (docs/tensor.md "Sessions"):
 * dml_rt_session_create_on_device, dml_rt_session_set_input_tensor of a
 * tensor on that device (copied on the device at each run) and
 * dml_rt_session_get_output_tensor onto it (copied on the device), with the
 * outputs left on the device until the host asks for them.
 *
 * `test_tensor_session vulkan` runs on a Vulkan device (lavapipe in CI;
 * exit 77 without one); `test_tensor_session cuda MOCK` on the mock CUDA
 * driver of tests/cuda/mock_cuda_driver.c (path MOCK), whose launches this
 * file runs on the host by the package kernel's contract (the one-node
 * models' Add and MatMul computed from the arena at the values' planned
 * offsets: no PTX runs, so the mock checks the data movement, not the
 * kernels; test_tensor_cuda_mock does the same for the eager library; B is
 * bound dense there, as no eager kernel runs).
 *
 * For each of the one-node models add_bcast (Add [16,1] + [16], the edge
 * values NaN, ±inf, ±0, denormals) and matmul ([2,3,5] x [5,4], B a
 * transposed view so that the device makes a dense copy first), compiled
 * in memory for the CPU and the device:
 *  - the outputs of a session on the device fed device tensors equal, bit
 *    for bit, those of the same package on the same device fed host arrays
 *    (today's path) and the CPU session's (Add bit for bit; MatMul, whose
 *    sums run in another order, within 1e-5 of the sum of |a||b|);
 *  - no byte of an input or output crossed between host and device: the
 *    session's transfer statistics count every input and output on the
 *    device only, and the device's own (dml_rt_device_transfer_stats)
 *    count no host transfer in binding or reading them;
 *  - a second run without binding again reads the inputs again (the
 *    caller's tensors freed meanwhile: the session holds its own views);
 *  - dml_rt_session_get_output after such a run copies the outputs to the
 *    host then (the lazy download), the same bits;
 *  - a tensor on another device (Vulkan: a second VkDevice; both: the CPU)
 *    still binds, through the host, and an output onto another device
 *    comes through the host;
 *  - use after free and a closed device are FAILED_PRECONDITION errors, a
 *    missing device INVALID_ARGUMENT, a package without the device's
 *    kernels FAILED_PRECONDITION;
 *  - the device's bytes and storages go back to their starting values
 *    (on the mock, the driver's live allocations too).
 *
 * And tests/fallback/string_io.onnx (issue 23: string outputs came back
 * empty from a GPU session, exit status 0): a string input read by a host
 * entry of the CPU fall-back, a device kernel (Relu(v + x), Cast to i32;
 * on the mock computed from the arena), a second host entry that reads a
 * string of the first across it; the string outputs y and u and the
 * numeric r equal the CPU session's, from a session fed host arrays and
 * from one made on the device (the lazy download); a string output onto a
 * device tensor is a structured error.
 *
 * And run-time control flow (issue 14 item 2; tests/fallback loop_mid.onnx,
 * a Loop of 3 iterations between device kernels, and ctrl_mid.onnx, an If
 * whose branches return different shapes, both branches): the Loop's body
 * and the taken branch run as sessions on the device (dml_rt_session_region:
 * their device, kernels and runs), the outputs bit for bit as the CPU
 * session's, twice; on the mock the regions' kernels are emulated from their
 * arenas (forward's arena is the first launch's) and counted. The regions
 * run on forward's device: the captures and the If's result cross on the
 * device (the region sessions' transfer counts; forward's host entry
 * stages cond alone), a Loop's carried values stay there between
 * iterations, and ctrl_weight.onnx's branches use forward's one device
 * copy of the weights (dml_rt_session_device_memory).
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_driver.h"
#include "dml_rt.h"
#include "dml_tensor.h"
#include "dml_test.h"
#include "rt_backend.h"
#include "rt_internal.h"
#include "tensor_test_util.h"

/* ---- the mock CUDA driver's launches (cuda mode) ---- */

/* The model the mock's launches compute: its function, for the arena
 * offsets of its values. */
static const dml_rt_model_t *g_model;
static int g_matmul; /* 0: add_bcast, 1: matmul, 2: string_io, 3: loop_mid, 4: ctrl_mid */
static int g_launches;
/* loop_mid and ctrl_mid (run-time control flow): the caller's arena (that
 * of the first launch of a run: forward's k0), the rows N of x, the rows
 * of the If's result (the branch taken sets them), and the launches of the
 * regions' kernels (arenas other than the caller's) */
static unsigned long long g_fwd_arena;
static int64_t g_rows, g_t_rows;
static int g_region_launches;
/* the mock's statistics (cuda mode), else NULL */
static void (*g_stats)(long long *, long long *, int *, int *, int *);

/* Value `name` of function `fn` of g_model in the arena at `arena`. */
static float *fn_value(const char *fn, unsigned long long arena, const char *name) {
  const dml_pkg_graph_t *gr = g_model->graph;
  for (uint32_t i = 0; i < gr->n_functions; i++) {
    const dml_pkg_function_t *f = &gr->functions[i];
    if (strcmp(f->name, fn)) continue;
    for (uint32_t v = 0; v < f->n_values; v++)
      if (!strcmp(f->values[v].name, name))
        return (float *)(uintptr_t)(arena + f->values[v].offset);
  }
  fprintf(stderr, "mock: no value '%s' in function '%s'\n", name, fn);
  return NULL;
}

/* Output 0 of function `fn` of g_model in the arena at `arena` (a branch's
 * result: its inner value names are the importer's). */
static float *fn_output0(const char *fn, unsigned long long arena) {
  const dml_pkg_graph_t *gr = g_model->graph;
  for (uint32_t i = 0; i < gr->n_functions; i++)
    if (!strcmp(gr->functions[i].name, fn) && gr->functions[i].n_outputs)
      return (float *)(uintptr_t)(arena + gr->functions[i]
                                              .values[gr->functions[i].outputs[0]]
                                              .offset);
  fprintf(stderr, "mock: no function '%s' with outputs\n", fn);
  return NULL;
}

/* The kernels of loop_mid and ctrl_mid (tests/fallback, --print-kernels
 * --target cuda) by the contract of their nodes, in f32 as the CPU plan:
 * forward's on g_fwd_arena, the regions' on their own arenas (the body,
 * the then or else branch, told apart by the kernel's name). */
static int emulate_ctrl(const char *entry, unsigned long long arena) {
  int64_t n = g_rows * 8;
  int fwd = arena == g_fwd_arena;
  if (!fwd) g_region_launches++;
  if (g_matmul == 3 && fwd && !strcmp(entry, "k0_elementwise")) {
    float *x = fn_value("forward", arena, "x"), *sq = fn_value("forward", arena, "sq"),
          *z0 = fn_value("forward", arena, "zero0"),
          *a0 = fn_value("forward", arena, "acc0");
    if (!x || !sq || !z0 || !a0) return 500;
    for (int64_t i = 0; i < n; i++) {
      sq[i] = x[i] * x[i];
      z0[i] = sq[i] * 0.5f;
      a0[i] = z0[i] - z0[i];
    }
    return 0;
  }
  if (g_matmul == 3 && !fwd && !strcmp(entry, "k0_elementwise")) {
    float *a = fn_value("repeat.body", arena, "acc_in"),
          *h = fn_value("repeat.body", arena, "h"),
          *sq = fn_value("repeat.body", arena, "sq"),
          *o = fn_value("repeat.body", arena, "acc_out");
    if (!a || !h || !sq || !o) return 500;
    for (int64_t i = 0; i < n; i++) {
      h[i] = a[i] * 0.5f;
      o[i] = h[i] + sq[i];
    }
    return 0;
  }
  if (g_matmul == 3 && fwd && !strcmp(entry, "k2_elementwise")) {
    float *acc = fn_value("forward", arena, "acc"), *y = fn_value("forward", arena, "y");
    if (!acc || !y) return 500;
    for (int64_t i = 0; i < n; i++) y[i] = acc[i] + 1.5f;
    return 0;
  }
  if (g_matmul == 4 && fwd && !strcmp(entry, "k0_elementwise")) {
    float *x = fn_value("forward", arena, "x"), *sq = fn_value("forward", arena, "sq");
    if (!x || !sq) return 500;
    for (int64_t i = 0; i < n; i++) sq[i] = x[i] * x[i];
    return 0;
  }
  if (g_matmul == 4 && fwd && !strcmp(entry, "k1_reduce")) {
    float *sq = fn_value("forward", arena, "sq"), *sum = fn_value("forward", arena, "s");
    uint8_t *cond = (uint8_t *)fn_value("forward", arena, "cond");
    if (!sq || !sum || !cond) return 500;
    float t = 0.0f;
    for (int64_t i = 0; i < n; i++) t += sq[i];
    *sum = t;
    *cond = t > 40.0f;
    return 0;
  }
  if (g_matmul == 4 && !fwd && !strcmp(entry, "k0_elementwise")) { /* then */
    float *sq = fn_value("choose.then", arena, "sq"),
          *t = fn_output0("choose.then", arena);
    if (!sq || !t) return 500;
    for (int64_t i = 0; i < n; i++) {
      float m2 = sq[i] * 2.0f;
      t[i] = m2 < 0.0f ? 0.0f : m2;
    }
    g_t_rows = g_rows;
    return 0;
  }
  if (g_matmul == 4 && !fwd && !strcmp(entry, "k0_move")) { /* else: rows 0:1 */
    float *sq = fn_value("choose.else", arena, "sq"),
          *t = fn_output0("choose.else", arena);
    if (!sq || !t) return 500;
    memcpy(t, sq, 8 * sizeof(float));
    g_t_rows = 1;
    return 0;
  }
  if (g_matmul == 4 && fwd && !strcmp(entry, "k3_elementwise")) {
    float *t = fn_value("forward", arena, "t"), *a = fn_value("forward", arena, "a"),
          *y = fn_value("forward", arena, "y");
    if (!t || !a || !y) return 500;
    for (int64_t i = 0; i < g_t_rows * 8; i++) {
      a[i] = t[i] + 1.5f;
      y[i] = -a[i];
    }
    return 0;
  }
  if (g_matmul == 4 && fwd && !strcmp(entry, "k4_elementwise")) {
    float *sq = fn_value("forward", arena, "sq"), *z = fn_value("forward", arena, "z");
    if (!sq || !z) return 500;
    for (int64_t i = 0; i < n; i++) z[i] = -sq[i];
    return 0;
  }
  fprintf(stderr, "mock: unexpected kernel %s (%s)\n", entry,
          fwd ? "forward" : "a region");
  return 500;
}

static float *arena_value(unsigned long long arena, uint32_t v) {
  return (float *)(uintptr_t)(arena + g_model->fn->values[v].offset);
}

/* The package kernel of add_bcast or matmul on the arena of params[0]
 * (rt_cuda.c's parameters: arena, weights, symbols), whatever its grid:
 * the whole output at once (the same on every launch). */
static int emulate(const char *entry, const unsigned grid[3], const unsigned block[3],
                   void **params) {
  (void)grid, (void)block;
  if (!strncmp(entry, "dml_eager_", 10)) return 801; /* no eager kernel runs here */
  const dml_pkg_function_t *f = g_model->fn;
  unsigned long long arena = *(unsigned long long *)params[0];
  if (g_matmul >= 3) {
    if (!g_fwd_arena) g_fwd_arena = arena;
    g_launches++;
    return emulate_ctrl(entry, arena);
  }
  const float *a = arena_value(arena, f->inputs[0]);
  const float *b = arena_value(arena, f->inputs[1]);
  float *y = arena_value(arena, f->outputs[0]);
  g_launches++;
  if (g_matmul == 2) { /* string_io's one device kernel: Relu(v + x), Cast to i32 */
    int32_t iv = -1, ix = -1, ir = -1, iri = -1;
    for (uint32_t i = 0; i < f->n_values; i++) {
      const char *nm = f->values[i].name;
      if (!strcmp(nm, "v")) iv = (int32_t)i;
      if (!strcmp(nm, "x")) ix = (int32_t)i;
      if (!strcmp(nm, "r")) ir = (int32_t)i;
      if (!strcmp(nm, "ri")) iri = (int32_t)i;
    }
    if (iv < 0 || ix < 0 || ir < 0 || iri < 0) return 500;
    const float *v = arena_value(arena, (uint32_t)iv),
                *x = arena_value(arena, (uint32_t)ix);
    float *r = arena_value(arena, (uint32_t)ir);
    int32_t *ri = (int32_t *)arena_value(arena, (uint32_t)iri);
    for (int i = 0; i < 4; i++) {
      float t = v[i] + x[i];
      r[i] = t > 0.0f ? t : 0.0f;
      ri[i] = (int32_t)r[i];
    }
    return 0;
  }
  if (!g_matmul) {
    for (int i = 0; i < 16; i++)
      for (int j = 0; j < 16; j++) y[i * 16 + j] = a[i] + b[j];
    return 0;
  }
  for (int bt = 0; bt < 2; bt++)
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 4; j++) {
        float acc = 0.0f;
        for (int k = 0; k < 5; k++) acc += a[(bt * 3 + i) * 5 + k] * b[k * 4 + j];
        y[(bt * 3 + i) * 4 + j] = acc;
      }
  return 0;
}

/* ---- the checks ---- */

/* y (on any device) against ref: bit for bit (NaN for NaN), or within
 * tol * scale[i] when tol > 0. */
static void compare(const char *what, dml_rt_tensor_t y, const dml_tensor_t *ref,
                    double tol, const float *scale) {
  dml_rt_tensor_info_t info;
  CHECK_OK(dml_rt_tensor_info(y, &info));
  CHECK(info.dtype == ref->dtype && info.rank == ref->rank);
  CHECK(memcmp(info.dims, ref->dims, sizeof(int64_t) * (size_t)ref->rank) == 0);
  size_t nb = dml_tensor_bytes(ref);
  float *got = (float *)malloc(nb ? nb : 1);
  dml_tensor_t h = *ref;
  h.data = got;
  CHECK_OK(dml_rt_tensor_to_host(y, &h));
  const float *want = (const float *)ref->data;
  int64_t ne = (int64_t)(nb / 4), bad = 0;
  for (int64_t i = 0; i < ne; i++) {
    int same = (isnan(got[i]) && isnan(want[i])) || !memcmp(&got[i], &want[i], 4);
    if (!same && tol > 0)
      same = fabs((double)got[i] - (double)want[i]) <= tol * (double)scale[i];
    if (!same && bad++ < 3)
      fprintf(stderr, "%s [%lld]: %.9g, want %.9g\n", what, (long long)i, (double)got[i],
              (double)want[i]);
  }
  CHECK(bad == 0);
  free(got);
}

/* A malloc'd copy of output 0 of the session's last run (host). */
static dml_tensor_t output_copy(dml_rt_session_t *s) {
  dml_tensor_t y;
  memset(&y, 0, sizeof y);
  CHECK_OK(dml_rt_session_get_output(s, 0, &y));
  size_t nb = dml_tensor_bytes(&y);
  void *p = malloc(nb ? nb : 1);
  if (p && y.data) memcpy(p, y.data, nb);
  y.data = p;
  return y;
}

static void check_model(const char *dev, const char *name) {
  const int mm = !strcmp(name, "matmul");
  char targets[64];
  snprintf(targets, sizeof targets, "cpu,%s",
           strncmp(dev, "cuda", 4) ? "vulkan" : "cuda");
  dml_rt_model_t *m = tensor_test_compile(name, targets);
  if (!m) return;
  g_model = m;
  g_matmul = mm;
  /* the inputs on the host: A, and B as the dense [5,4] of a [4,5] */
  float a[30], bt[20], b[20];
  int64_t da[3] = {16, 1, 0}, db[2] = {16, 0};
  int32_t ra = 2, rb = 1;
  if (mm) {
    da[0] = 2, da[1] = 3, da[2] = 5, ra = 3;
    db[0] = 5, db[1] = 4, rb = 2;
    for (int i = 0; i < 30; i++) a[i] = (float)((i * 7) % 11) * 0.25f - 1.0f;
    for (int i = 0; i < 20; i++) bt[i] = (float)((i * 5) % 13) * 0.5f - 3.0f;
    for (int k = 0; k < 5; k++)
      for (int j = 0; j < 4; j++) b[k * 4 + j] = bt[j * 5 + k];
  } else {
    memcpy(a, k_edges, sizeof k_edges);
    for (int i = 0; i < 16; i++) b[i] = k_edges[15 - i];
  }
  dml_tensor_t ha = dml_test_tensor(DML_DTYPE_F32, ra, da, a);
  dml_tensor_t hb = dml_test_tensor(DML_DTYPE_F32, rb, db, b);
  /* the references: the CPU, and the device fed host arrays */
  dml_rt_session_t *sc = NULL, *sh = NULL;
  CHECK_OK(dml_rt_session_create(m, "cpu", &sc));
  CHECK_OK(dml_rt_session_set_input(sc, 0, &ha));
  CHECK_OK(dml_rt_session_set_input(sc, 1, &hb));
  CHECK_OK(dml_rt_session_run(sc));
  dml_tensor_t ref_cpu = output_copy(sc);
  dml_rt_session_release(sc);
  CHECK_OK(dml_rt_session_create(m, dev, &sh));
  CHECK_OK(dml_rt_session_set_input(sh, 0, &ha));
  CHECK_OK(dml_rt_session_set_input(sh, 1, &hb));
  CHECK_OK(dml_rt_session_run(sh));
  dml_tensor_t ref_dev = output_copy(sh);
  dml_rt_transfer_stats_t hs;
  dml_rt_session_transfer_stats(sh, &hs);
  CHECK(hs.to_device_bytes == dml_tensor_bytes(&ha) + dml_tensor_bytes(&hb));
  CHECK(hs.to_host_bytes == dml_tensor_bytes(&ref_dev) && hs.on_device_bytes == 0);
  dml_rt_session_release(sh);
  /* MatMul's tolerance scale: sum over k of |a||b| */
  float scale[24];
  for (int i = 0; mm && i < 24; i++) {
    int r = i / 4, j = i % 4;
    double sum = 0;
    for (int k = 0; k < 5; k++) sum += fabs((double)a[r * 5 + k] * b[k * 4 + j]);
    scale[i] = (float)sum;
  }
  const double tol = mm ? 1e-5 : 0;
  const uint64_t in_bytes = dml_tensor_bytes(&ha) + dml_tensor_bytes(&hb);
  const uint64_t out_bytes = dml_tensor_bytes(&ref_cpu);

  dml_rt_device_t *d = NULL;
  CHECK_OK(dml_rt_device_open(dev, &d));
  const uint64_t bytes0 = dml_rt_device_bytes(d), st0 = dml_rt_device_num_storages(d);
  dml_rt_session_t *s = NULL;
  CHECK_OK(dml_rt_session_create_on_device(m, d, NULL, NULL, &s));
  dml_rt_tensor_t ta, tbt, tb, y, y2, y3;
  int64_t dbt[2] = {4, 5}, perm[2] = {1, 0};
  CHECK_OK(dml_rt_tensor_from_host(d, &ha, &ta));
  /* B as a transposed view (a dense copy by the eager Identity kernel),
   * except on the mock, which runs no eager kernel */
  const int view = mm && strncmp(dev, "cuda", 4) != 0;
  if (view) {
    dml_tensor_t hbt = dml_test_tensor(DML_DTYPE_F32, 2, dbt, bt);
    CHECK_OK(dml_rt_tensor_from_host(d, &hbt, &tbt));
    CHECK_OK(dml_rt_tensor_transpose(tbt, perm, &tb)); /* [5,4], a view */
    CHECK_OK(dml_rt_tensor_free(tbt));
  } else {
    CHECK_OK(dml_rt_tensor_from_host(d, &hb, &tb));
  }
  dml_rt_transfer_stats_t d0, d1, s1;
  dml_rt_device_transfer_stats(d, &d0);

  /* run 1: inputs and output on the device */
  CHECK_OK(dml_rt_session_set_input_tensor(s, 0, ta));
  CHECK_OK(dml_rt_session_set_input_tensor(s, 1, tb));
  CHECK_OK(dml_rt_session_run(s));
  CHECK_OK(dml_rt_session_get_output_tensor(s, 0, d, &y));
  dml_rt_device_transfer_stats(d, &d1);
  dml_rt_session_transfer_stats(s, &s1);
  CHECK(d1.to_host_bytes == d0.to_host_bytes && d1.to_device_bytes == d0.to_device_bytes);
  CHECK(s1.to_host_bytes == 0 && s1.to_device_bytes == 0);
  CHECK(s1.on_device_bytes == in_bytes + out_bytes && s1.on_device_count == 3);
  /* the view's dense copy (matmul's B) and the output: on the device */
  CHECK(d1.on_device_bytes - d0.on_device_bytes == (view ? 80u : 0u) + out_bytes);
  printf(
      "%s on %s: run 1 moved %llu bytes on the device, %llu to the host, %llu to "
      "the device\n",
      name, dml_rt_device_name(d), (unsigned long long)s1.on_device_bytes,
      (unsigned long long)s1.to_host_bytes, (unsigned long long)s1.to_device_bytes);
  compare("device I/O vs device host I/O", y, &ref_dev, 0, scale);
  compare("device I/O vs cpu", y, &ref_cpu, tol, scale);

  /* run 2: the caller's inputs freed, not bound again; the output read
   * on the host after the run (the lazy download) */
  CHECK_OK(dml_rt_tensor_free(ta));
  CHECK_OK(dml_rt_tensor_free(tb));
  CHECK_OK(dml_rt_session_run(s));
  dml_rt_session_transfer_stats(s, &s1);
  CHECK(s1.to_host_bytes == 0); /* nothing read on the host yet */
  dml_tensor_t hy;
  CHECK_OK(dml_rt_session_get_output(s, 0, &hy));
  dml_rt_session_transfer_stats(s, &s1);
  CHECK(s1.to_host_bytes == out_bytes && s1.to_host_count == 1);
  CHECK(memcmp(hy.data, ref_dev.data, out_bytes) == 0);
  CHECK_OK(dml_rt_session_get_output(s, 0, &hy)); /* once per run */
  dml_rt_session_transfer_stats(s, &s1);
  CHECK(s1.to_host_bytes == out_bytes);
  CHECK_OK(dml_rt_session_get_output_tensor(s, 0, d, &y2));
  compare("run 2 vs device host I/O", y2, &ref_dev, 0, scale);

  /* run 3: read on the host after run 2, so downloaded by the run itself */
  CHECK_OK(dml_rt_session_run(s));
  dml_rt_session_transfer_stats(s, &s1);
  CHECK(s1.to_host_bytes == 2 * out_bytes);
  CHECK_OK(dml_rt_session_get_output(s, 0, &hy));
  CHECK(memcmp(hy.data, ref_dev.data, out_bytes) == 0);
  /* run 4: input 0 from the host, input 1 still on the device */
  CHECK_OK(dml_rt_session_set_input(s, 0, &ha));
  CHECK_OK(dml_rt_session_run(s));
  CHECK_OK(dml_rt_session_get_output_tensor(s, 0, d, &y3));
  compare("mixed host and device inputs", y3, &ref_dev, 0, scale);
  dml_rt_transfer_stats_t s4;
  dml_rt_session_transfer_stats(s, &s4);
  CHECK(s4.to_device_bytes - s1.to_device_bytes == dml_tensor_bytes(&ha));

  /* another device: through the host */
  dml_rt_device_t *other = NULL;
  const int vk = !strncmp(dev, "vulkan", 6);
  CHECK_OK(dml_rt_device_open(vk ? dev : "cpu", &other));
  dml_rt_tensor_t oa, oy;
  CHECK_OK(dml_rt_tensor_from_host(other, &ha, &oa));
  dml_rt_session_transfer_stats(s, &s1);
  CHECK_OK(dml_rt_session_set_input_tensor(s, 0, oa));
  CHECK_OK(dml_rt_session_run(s));
  dml_rt_session_transfer_stats(s, &s4);
  CHECK(s4.to_device_bytes - s1.to_device_bytes == dml_tensor_bytes(&ha));
  CHECK_OK(dml_rt_session_get_output_tensor(s, 0, other, &oy));
  compare("a tensor of another device", oy, &ref_dev, 0, scale);
  /* use after free: the caller's handle */
  CHECK_OK(dml_rt_tensor_free(oa));
  CHECK_ERROR(dml_rt_session_set_input_tensor(s, 0, oa), DML_STATUS_FAILED_PRECONDITION,
              "use after free");
  CHECK_OK(dml_rt_tensor_free(oy));
  dml_rt_device_close(other);

  /* memory back at its start once the outputs are freed and the inputs
   * unbound (the session's views dropped) */
  CHECK_OK(dml_rt_tensor_free(y));
  CHECK_OK(dml_rt_tensor_free(y2));
  CHECK_OK(dml_rt_tensor_free(y3));
  CHECK(dml_rt_device_bytes(d) > bytes0); /* B's view still bound */
  dml_rt_session_clear_inputs(s);
  CHECK(dml_rt_device_bytes(d) == bytes0);
  CHECK(dml_rt_device_num_storages(d) == st0);

  /* bad arguments: structured errors */
  CHECK_ERROR(dml_rt_session_create_on_device(m, NULL, NULL, NULL, &sc),
              DML_STATUS_INVALID_ARGUMENT, "no device");
  CHECK_ERROR(dml_rt_session_get_output_tensor(s, 0, NULL, &y),
              DML_STATUS_INVALID_ARGUMENT, "no device");
  CHECK_ERROR(dml_rt_session_get_output_tensor(s, 5, d, &y), DML_STATUS_OUT_OF_RANGE,
              "output index 5");
  CHECK_ERROR(dml_rt_session_set_input_tensor(s, 0, DML_RT_TENSOR_NONE),
              DML_STATUS_INVALID_ARGUMENT, "zero handle");
  dml_rt_model_t *mc = tensor_test_compile(name, "cpu"); /* no kernels for the device */
  if (mc) {
    CHECK_ERROR(dml_rt_session_create_on_device(mc, d, NULL, NULL, &sc),
                DML_STATUS_FAILED_PRECONDITION, "");
    dml_rt_model_release(mc);
  }

  /* a bound tensor whose device closes: the next run says so */
  CHECK_OK(dml_rt_tensor_from_host(d, &ha, &ta));
  CHECK_OK(dml_rt_session_set_input(s, 1, &hb));
  CHECK_OK(dml_rt_session_set_input_tensor(s, 0, ta));
  dml_rt_device_close(d);
  CHECK_ERROR(dml_rt_session_run(s), DML_STATUS_FAILED_PRECONDITION, "use after free");
  dml_rt_session_release(s); /* the device's memory goes with the session */
  free(ref_cpu.data);
  free(ref_dev.data);
  dml_rt_model_release(m);
}

/* Output `name` of the session's last run equals the CPU session's (the
 * strings byte for byte, the f32 bit for bit). */
static void same_output(const char *what, dml_rt_session_t *s, dml_rt_session_t *sc,
                        const char *name) {
  int32_t i = dml_rt_session_find_output(s, name),
          ic = dml_rt_session_find_output(sc, name);
  CHECK(i >= 0 && ic >= 0);
  if (i < 0 || ic < 0) return;
  dml_tensor_t y, yc;
  CHECK_OK(dml_rt_session_get_output(s, (uint32_t)i, &y));
  CHECK_OK(dml_rt_session_get_output(sc, (uint32_t)ic, &yc));
  CHECK(y.dtype == yc.dtype && y.rank == 1 && yc.rank == 1 && y.dims[0] == yc.dims[0]);
  if (y.dtype != yc.dtype || y.dims[0] != yc.dims[0]) return;
  for (int64_t k = 0; k < y.dims[0]; k++) {
    int same;
    if (y.dtype == DML_DTYPE_STRING) {
      const dml_str_t *a = (const dml_str_t *)y.data + k,
                      *b = (const dml_str_t *)yc.data + k;
      same = a->len == b->len && (!a->len || !memcmp(a->data, b->data, (size_t)a->len));
    } else {
      same = !memcmp((const float *)y.data + k, (const float *)yc.data + k, 4);
    }
    if (!same)
      fprintf(stderr, "%s: output %s [%lld] differs from the cpu's\n", what, name,
              (long long)k);
    CHECK(same);
  }
}

/* string_io (tests/fallback/gen_fallback_models.py) on the device against
 * the CPU: strings in, across a device segment, and out. */
static void check_strings(const char *dev) {
  char targets[64];
  snprintf(targets, sizeof targets, "cpu,%s",
           strncmp(dev, "cuda", 4) ? "vulkan" : "cuda");
  dml_rt_model_t *m = tensor_test_compile_path("tests/fallback/string_io.onnx", targets);
  if (!m) return;
  g_model = m;
  g_matmul = 2;
  static const char *const text[4] = {"1.5", "-20", "7", "250.25"};
  dml_str_t str[4];
  for (int i = 0; i < 4; i++) {
    str[i].data = text[i];
    str[i].len = strlen(text[i]);
  }
  float x[4] = {2.0f, 3.0f, -9.5f, 0.5f};
  int64_t d4[1] = {4};
  dml_tensor_t hs = dml_test_tensor(DML_DTYPE_STRING, 1, d4, str);
  dml_tensor_t hx = dml_test_tensor(DML_DTYPE_F32, 1, d4, x);
  dml_rt_session_t *sc = NULL, *sh = NULL, *sd = NULL;
  CHECK_OK(dml_rt_session_create(m, "cpu", &sc));
  CHECK_OK(dml_rt_session_set_input_by_name(sc, "s", &hs));
  CHECK_OK(dml_rt_session_set_input_by_name(sc, "x", &hx));
  CHECK_OK(dml_rt_session_run(sc));
  /* a session of the device fed host arrays, twice (the cached commands) */
  CHECK_OK(dml_rt_session_create(m, dev, &sh));
  CHECK_OK(dml_rt_session_set_input_by_name(sh, "s", &hs));
  CHECK_OK(dml_rt_session_set_input_by_name(sh, "x", &hx));
  for (int run = 0; run < 2; run++) {
    CHECK_OK(dml_rt_session_run(sh));
    same_output("host I/O", sh, sc, "y");
    same_output("host I/O", sh, sc, "u");
    same_output("host I/O", sh, sc, "r");
  }
  /* strings never cross: only x goes up and r comes down */
  dml_rt_transfer_stats_t st;
  dml_rt_session_transfer_stats(sh, &st);
  CHECK(st.to_device_bytes == 2 * 16 && st.to_host_bytes == 2 * 16);
  dml_rt_session_release(sh);
  /* a session made on the device: its outputs stay there until read */
  dml_rt_device_t *d = NULL;
  CHECK_OK(dml_rt_device_open(dev, &d));
  CHECK_OK(dml_rt_session_create_on_device(m, d, NULL, NULL, &sd));
  CHECK_OK(dml_rt_session_set_input_by_name(sd, "s", &hs));
  CHECK_OK(dml_rt_session_set_input_by_name(sd, "x", &hx));
  CHECK_OK(dml_rt_session_run(sd));
  dml_rt_tensor_t ty = DML_RT_TENSOR_NONE;
  int32_t iy = dml_rt_session_find_output(sd, "y");
  CHECK(iy >= 0);
  /* strings live on the host: no device tensor of them */
  CHECK_ERROR(dml_rt_session_get_output_tensor(sd, (uint32_t)iy, d, &ty),
              DML_STATUS_UNIMPLEMENTED, "holds strings, which live on the host");
  same_output("on-device session", sd, sc, "y");
  same_output("on-device session", sd, sc, "u");
  same_output("on-device session", sd, sc, "r");
  dml_rt_session_release(sd);
  dml_rt_device_close(d);
  dml_rt_session_release(sc);
  dml_rt_model_release(m);
}

/* Output `name` of s and of the CPU session sc: the same dims and bits. */
static void same_nd(const char *what, dml_rt_session_t *s, dml_rt_session_t *sc,
                    const char *name) {
  int32_t i = dml_rt_session_find_output(s, name),
          ic = dml_rt_session_find_output(sc, name);
  CHECK(i >= 0 && ic >= 0);
  if (i < 0 || ic < 0) return;
  dml_tensor_t y, yc;
  CHECK_OK(dml_rt_session_get_output(s, (uint32_t)i, &y));
  CHECK_OK(dml_rt_session_get_output(sc, (uint32_t)ic, &yc));
  int same = y.dtype == yc.dtype && y.rank == yc.rank &&
             !memcmp(y.dims, yc.dims, sizeof(int64_t) * (size_t)y.rank) &&
             !memcmp(y.data, yc.data, dml_tensor_bytes(&y));
  if (!same) fprintf(stderr, "%s: output %s differs from the cpu's\n", what, name);
  CHECK(same);
}

/* Region `role` of s ran `runs` times in the last run, on the device `dev`
 * names ("vulkan..." / "cuda..."), with device kernels. */
static void region_ran(dml_rt_session_t *s, const char *dev, const char *role,
                       const char *function, uint64_t runs) {
  int found = 0;
  for (uint32_t i = 0; i < dml_rt_session_num_regions(s); i++) {
    dml_rt_region_info_t r;
    CHECK_OK(dml_rt_session_region(s, i, &r));
    if (strcmp(r.role, role)) continue;
    found = 1;
    CHECK(!strcmp(r.function, function));
    CHECK(r.runs == runs);
    const char *where = dml_rt_session_device(r.session);
    CHECK(!strncmp(where, dev, 4));
    CHECK(dml_rt_session_fallback(r.session) == NULL);
    CHECK(dml_rt_session_num_kernels(r.session) > 0);
    dml_rt_kernel_info_t ki;
    if (runs) CHECK_OK(dml_rt_session_kernel_info(r.session, 0, &ki));
  }
  CHECK(found);
  dml_rt_region_info_t r;
  CHECK_ERROR(dml_rt_session_region(s, dml_rt_session_num_regions(s), &r),
              DML_STATUS_OUT_OF_RANGE, "region");
  CHECK_ERROR(dml_rt_session_region(NULL, 0, &r), DML_STATUS_INVALID_ARGUMENT, "NULL");
  CHECK(dml_rt_session_num_regions(NULL) == 0);
}

/* Run-time control flow (tests/fallback loop_mid.onnx, ctrl_mid.onnx): the
 * host reads the trip count / cond, the Loop's body and the If's taken
 * branch run on the device (their own sessions: dml_rt_session_region),
 * the outputs as the CPU session's, bit for bit; on the mock, the regions'
 * kernels were launched (arenas other than forward's). */
static void check_control_flow(const char *dev) {
  char targets[64];
  snprintf(targets, sizeof targets, "cpu,%s",
           strncmp(dev, "cuda", 4) ? "vulkan" : "cuda");
  dml_rt_model_t *m = tensor_test_compile_path("tests/fallback/loop_mid.onnx", targets);
  if (!m) return;
  g_model = m;
  g_matmul = 3;
  g_rows = 3;
  float x[24];
  for (int i = 0; i < 24; i++) x[i] = (float)((i * 7) % 11) * 0.375f - 1.5f;
  x[5] = -0.0f;
  int64_t trip = 3, dx[2] = {3, 8};
  dml_tensor_t hx = dml_test_tensor(DML_DTYPE_F32, 2, dx, x);
  dml_tensor_t ht = dml_test_tensor(DML_DTYPE_I64, 0, dx, &trip);
  dml_rt_session_t *sc = NULL, *sd = NULL;
  CHECK_OK(dml_rt_session_create(m, "cpu", &sc));
  CHECK_OK(dml_rt_session_set_input_by_name(sc, "x", &hx));
  CHECK_OK(dml_rt_session_set_input_by_name(sc, "trip", &ht));
  CHECK_OK(dml_rt_session_run(sc));
  CHECK_OK(dml_rt_session_create(m, dev, &sd));
  CHECK(dml_rt_session_num_regions(sd) == 1);
  CHECK_OK(dml_rt_session_set_input_by_name(sd, "x", &hx));
  CHECK_OK(dml_rt_session_set_input_by_name(sd, "trip", &ht));
  dml_rt_region_info_t body;
  CHECK_OK(dml_rt_session_region(sd, 0, &body));
  for (int run = 0; run < 2; run++) {
    g_fwd_arena = 0;
    g_region_launches = 0;
    dml_rt_transfer_stats_t x0, x1;
    dml_rt_session_transfer_stats(body.session, &x0);
    CHECK_OK(dml_rt_session_run(sd));
    same_nd("loop_mid", sd, sc, "y");
    region_ran(sd, dev, "body", "repeat.body", 3);
    if (g_stats) CHECK(g_region_launches == 3);
    /* The body's crossings in one run (3 iterations; acc and sq f32[3,8],
     * 96 bytes): up, the iteration number (i64) and cond (bool) each
     * iteration and the initial acc once (forward's host entry holds it);
     * down, the loop's condition each iteration and acc once; on the
     * device, the capture sq once from forward's device arena (then in
     * place) and acc from each iteration's output into the next one's
     * input. The round-trip form moved acc both ways every iteration and
     * sq up every iteration: 12 up (603 bytes), 6 down (291 bytes). */
    dml_rt_session_transfer_stats(body.session, &x1);
    uint64_t up = x1.to_device_count - x0.to_device_count,
             upb = x1.to_device_bytes - x0.to_device_bytes,
             down = x1.to_host_count - x0.to_host_count,
             downb = x1.to_host_bytes - x0.to_host_bytes,
             on = x1.on_device_count - x0.on_device_count,
             onb = x1.on_device_bytes - x0.on_device_bytes;
    if (run == 0)
      printf(
          "loop_mid body on %s, one run of 3 iterations: %llu copies (%llu bytes) to "
          "the device, %llu (%llu bytes) to the host, %llu (%llu bytes) on the "
          "device\n",
          dev, (unsigned long long)up, (unsigned long long)upb, (unsigned long long)down,
          (unsigned long long)downb, (unsigned long long)on, (unsigned long long)onb);
    CHECK(up == 7 && upb == 3 * 9 + 96);
    CHECK(down == 4 && downb == 3 * 1 + 96);
    CHECK(on == 3 && onb == 3 * 96);
  }
  dml_rt_session_release(sd);
  dml_rt_session_release(sc);
  dml_rt_model_release(m);

  m = tensor_test_compile_path("tests/fallback/ctrl_mid.onnx", targets);
  if (!m) return;
  g_model = m;
  g_matmul = 4;
  CHECK_OK(dml_rt_session_create(m, dev, &sd));
  CHECK(dml_rt_session_num_regions(sd) == 2);
  {
    /* What crosses forward's host entry (the If): cond down, nothing up
     * (the capture sq and the result t stay on the device) */
    const dml_kpkg_t *table =
        strncmp(dev, "cuda", 4) ? m->kernels_spirv : m->kernels_cuda;
    const dml_kpkg_function_t *kf =
        table ? dml_kpkg_find_function(table, dml_rt_fn_index(m, m->fn)) : NULL;
    CHECK(kf != NULL);
    uint64_t staging = 0;
    dml_rt_host_plan_t hp;
    CHECK_OK(dml_rt_gpu_plan_host("test", m, m->fn, kf, 16, &staging, &hp));
    CHECK(hp.used);
    int entries = 0;
    for (uint32_t k = 0; kf && k < kf->n_kernels; k++) {
      if (!hp.is_host[k]) continue;
      entries++;
      CHECK(hp.down_at[2 * k + 1] - hp.down_at[2 * k] == 1);
      CHECK(!strcmp(m->fn->values[hp.regions[hp.down_at[2 * k]].value].name, "cond"));
      CHECK(hp.up_at[2 * k + 1] == hp.up_at[2 * k]);
    }
    CHECK(entries == 1);
    dml_rt_gpu_host_free(&hp);
  }
  for (int b = 0; b < 2; b++) { /* then: 5 large rows; else: 3 small ones */
    g_rows = b ? 3 : 5;
    float xc[40];
    for (int i = 0; i < 40; i++)
      xc[i] = ((float)((i * 5) % 9) - 4.0f) * (b ? 0.25f : 2.0f);
    int64_t dc[2] = {g_rows, 8};
    dml_tensor_t hc = dml_test_tensor(DML_DTYPE_F32, 2, dc, xc);
    CHECK_OK(dml_rt_session_create(m, "cpu", &sc));
    CHECK_OK(dml_rt_session_set_input_by_name(sc, "x", &hc));
    CHECK_OK(dml_rt_session_run(sc));
    g_fwd_arena = 0;
    g_region_launches = 0;
    CHECK_OK(dml_rt_session_set_input_by_name(sd, "x", &hc));
    dml_rt_region_info_t br;
    for (uint32_t i = 0; i < dml_rt_session_num_regions(sd); i++) {
      CHECK_OK(dml_rt_session_region(sd, i, &br));
      if (!strcmp(br.role, b ? "else" : "then")) break;
    }
    dml_rt_transfer_stats_t x0, x1;
    dml_rt_session_transfer_stats(br.session, &x0);
    CHECK_OK(dml_rt_session_run(sd));
    same_nd("ctrl_mid", sd, sc, "y");
    same_nd("ctrl_mid", sd, sc, "z");
    region_ran(sd, dev, b ? "else" : "then", b ? "choose.else" : "choose.then", 1);
    /* The branch's capture sq comes from forward's device arena and its
     * result t goes back there, on the device (the round-trip form: sq
     * up, t down through the host) */
    dml_rt_session_transfer_stats(br.session, &x1);
    CHECK(x1.to_device_count == x0.to_device_count);
    CHECK(x1.to_host_count == x0.to_host_count);
    CHECK(x1.on_device_count - x0.on_device_count == 2);
    CHECK(x1.on_device_bytes - x0.on_device_bytes ==
          (uint64_t)(g_rows * 8 * 4 + (b ? 1 : g_rows) * 8 * 4));
    region_ran(sd, dev, b ? "then" : "else", b ? "choose.then" : "choose.else", 0);
    if (g_stats) CHECK(g_region_launches == 1);
    dml_rt_session_release(sc);
  }
  dml_rt_session_release(sd);
  dml_rt_model_release(m);
  g_matmul = 0;
}

/* The regions run on their caller's device (tests/fallback/ctrl_weight.onnx:
 * both branches of an If read a 256 KiB weight W): the caller's session
 * alone holds a device copy of the weights and created the device; the
 * branch sessions allocated their arenas only. On the mock the live
 * device bytes grow by exactly what the sessions report (W once). On
 * Vulkan both branches run, bit for bit as the CPU session (x and W hold
 * multiples of 0.5: every order of the sums is exact); the mock does not
 * emulate these matmul kernels, so it checks the memory only. */
static void check_region_memory(const char *dev) {
  char targets[64];
  snprintf(targets, sizeof targets, "cpu,%s",
           strncmp(dev, "cuda", 4) ? "vulkan" : "cuda");
  dml_rt_model_t *m =
      tensor_test_compile_path("tests/fallback/ctrl_weight.onnx", targets);
  if (!m) return;
  CHECK(m->weights_size >= 256 * 256 * 4);
  long long live0 = 0, bytes0 = 0, live1 = 0, bytes1 = 0;
  int i0, i1, i2;
  if (g_stats) g_stats(&live0, &bytes0, &i0, &i1, &i2);
  dml_rt_session_t *sd = NULL, *sc = NULL;
  CHECK_OK(dml_rt_session_create(m, dev, &sd));
  if (g_stats) g_stats(&live1, &bytes1, &i0, &i1, &i2);
  dml_rt_device_memory_t pm, rm;
  CHECK_OK(dml_rt_session_device_memory(sd, &pm));
  CHECK(pm.weights_bytes >= m->weights_size && pm.arena_bytes > 0);
  CHECK(pm.opened_device == (strncmp(dev, "cuda", 4) ? 1 : 0));
  uint64_t total = pm.arena_bytes + pm.weights_bytes;
  CHECK(dml_rt_session_num_regions(sd) == 2);
  for (uint32_t i = 0; i < dml_rt_session_num_regions(sd); i++) {
    dml_rt_region_info_t r;
    CHECK_OK(dml_rt_session_region(sd, i, &r));
    CHECK(dml_rt_session_fallback(r.session) == NULL);
    CHECK_OK(dml_rt_session_device_memory(r.session, &rm));
    CHECK(rm.weights_bytes == 0 && rm.opened_device == 0 && rm.arena_bytes > 0);
    total += rm.arena_bytes;
  }
  printf(
      "ctrl_weight on %s: weights %llu bytes on the device once, %llu device bytes in "
      "all (the caller and its 2 branches)\n",
      dev, (unsigned long long)pm.weights_bytes, (unsigned long long)total);
  if (g_stats) CHECK(bytes1 - bytes0 == (long long)total && live1 - live0 == 4);
  CHECK_ERROR(dml_rt_session_device_memory(NULL, &rm), DML_STATUS_INVALID_ARGUMENT,
              "NULL");
  CHECK_ERROR(dml_rt_session_device_memory(sd, NULL), DML_STATUS_INVALID_ARGUMENT,
              "NULL");
  CHECK_OK(dml_rt_session_create(m, "cpu", &sc));
  CHECK_OK(dml_rt_session_device_memory(sc, &rm));
  CHECK(rm.weights_bytes == 0 && rm.arena_bytes == 0 && rm.opened_device == 0);
  for (int b = 0; !g_stats && b < 2; b++) { /* then: sum > 0; else: below */
    float x[3 * 256];
    for (int i = 0; i < 3 * 256; i++) x[i] = (float)((i * 7) % 5 - (b ? 3 : 1)) * 0.5f;
    int64_t dx[2] = {3, 256};
    dml_tensor_t hx = dml_test_tensor(DML_DTYPE_F32, 2, dx, x);
    CHECK_OK(dml_rt_session_set_input_by_name(sc, "x", &hx));
    CHECK_OK(dml_rt_session_run(sc));
    CHECK_OK(dml_rt_session_set_input_by_name(sd, "x", &hx));
    CHECK_OK(dml_rt_session_run(sd));
    same_nd("ctrl_weight", sd, sc, "y");
    region_ran(sd, dev, b ? "else" : "then", b ? "choose.else" : "choose.then", 1);
  }
  dml_rt_session_release(sc);
  dml_rt_session_release(sd);
  if (g_stats) {
    g_stats(&live1, &bytes1, &i0, &i1, &i2);
    CHECK(live1 == live0 && bytes1 == bytes0);
  }
  dml_rt_model_release(m);
}

static const char *g_mode = "vulkan";
static long long g_live0, g_bytes0;

static void test_add_bcast(void) {
  check_model(g_mode, "add_bcast");
}

static void test_matmul(void) {
  check_model(g_mode, "matmul");
}

static void test_strings(void) {
  check_strings(g_mode);
}

static void test_control_flow(void) {
  check_control_flow(g_mode);
}

static void test_region_memory(void) {
  check_region_memory(g_mode);
}

/* The mock driver's view: every allocation freed, the launches ran. */
static void test_mock_memory(void) {
  long long live, bytes;
  int i0, i1, i2;
  g_stats(&live, &bytes, &i0, &i1, &i2);
  CHECK(live == g_live0 && bytes == g_bytes0);
  CHECK(g_launches > 0);
  printf("mock CUDA driver: %d launches, live allocations back at %lld\n", g_launches,
         live);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "vulkan";
  g_mode = mode;
  void (*stats)(long long *, long long *, int *, int *, int *) = NULL;
  if (!strcmp(mode, "cuda")) {
    void *h = argc > 2 ? dlopen(argv[2], RTLD_NOW | RTLD_LOCAL) : NULL;
    void (*set_launch)(
        int (*)(const char *, const unsigned *, const unsigned *, void **)) = NULL;
    if (h) {
      *(void **)&set_launch = dlsym(h, "dml_mock_cuda_set_launch");
      *(void **)&stats = dlsym(h, "dml_mock_cuda_stats");
    }
    if (!set_launch || !stats) {
      fprintf(stderr, "usage: test_tensor_session cuda MOCK_DRIVER (cannot load %s)\n",
              argc > 2 ? argv[2] : "(none)");
      return 1;
    }
    set_launch(emulate);
    setenv("DMLC_CUDA_DRIVER", argv[2], 1);
    setenv("DMLC_CUDA_FORCE_PTX", "1", 1); /* the mock reads PTX text only */
    setenv("DMLC_CUDA_PORTABLE", "1", 1);
    setenv("DMLC_CUDA_PROFILE", "1", 1); /* the mock has no graphs */
    int i0, i1, i2;
    stats(&g_live0, &g_bytes0, &i0, &i1, &i2);
    g_stats = stats;
  }
  dml_rt_device_t *d = NULL;
  dml_status_t st = dml_rt_device_open(mode, &d);
  if (st) {
    printf("SKIP: no %s device: %s\n", mode, dml_status_reason(st));
    dml_status_free(st);
    return 77;
  }
  dml_rt_device_close(d);
  RUN(test_add_bcast);
  RUN(test_matmul);
  RUN(test_strings);
  RUN(test_control_flow);
  RUN(test_region_memory);
  if (g_stats) RUN(test_mock_memory);
  return dml_test_finish();
}
