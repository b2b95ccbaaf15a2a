/*
 * eager_bench.c — the eager tensor API's cost on the CPU
 * (runtime/dml_tensor.h, docs/tensor.md):
 *
 *   eager_bench [--pkg MATMUL.dmlpkg] [--runs N] [--threads N] [--n N]
 *               [--device vulkan[:N] [--vkpkg MATMUL_VK.dmlpkg]
 *                [--iopkg ADD_VK.dmlpkg]]
 *
 *   add:    dml_rt_tensor_op("Add") on two f32 [16] tensors plus the free of
 *           its output, per op (µs), next to the kernel alone (dml_cpu_run
 *           on the same host tensors, preallocated output: what the
 *           compiled CPU path does per node); the difference is the eager
 *           dispatch overhead.
 *   matmul: an eager N x N MatMul (N = 1024) and, with --pkg, the compiled
 *           package of the one-MatMul model (bench/make_eager_models.py,
 *           inputs A and B) run by a dml_rt session: set_input of A and B
 *           + run, and run alone (ms).
 *   device: with --device, the device tensors' costs there: a small
 *           tensor's zeros + free, a 1 MiB upload (from_host), download
 *           (to_host) and copy on the device (to_device), each with the
 *           free of what it made, and eager ops there (the eager kernel
 *           library): Add and Relu of f32[16] (the per-op dispatch cost)
 *           and Add of two 1 MiB tensors, each with the free of its output
 *           (µs); Softmax of f32 [256, 1024] over each axis, its
 *           Transpose, Concat of two on each axis and Gather of 64 rows
 *           (µs, with the free of the output); then an eager N x N MatMul of device
 * tensors (op + free of its output) and, with --vkpkg, the one-MatMul package compiled
 *           for the device (--target vulkan or cuda; scripts/gpu_check.sh
 *           passes the cuda one) run by a session on the same device with
 *           the same inputs (dml_rt_session_run alone: it uploads A and B
 *           and downloads Y, 12 MiB at N = 1024), interleaved (ms).
 *   io:     with --device and --iopkg (a two-input, one-output f32 package
 *           compiled for the device: bench/make_eager_models.py's
 *           add1024, Add of two [1024,1024]), one call of the package with
 *           host arrays (a session made by name: set_input of both, run,
 *           get_output) against the same with device tensors (a session
 *           made on the device, dml_rt_session_create_on_device:
 *           set_input_tensor of both, run, get_output_tensor onto the
 *           device and the free of that tensor), interleaved (ms), with
 *           each session's transfer statistics of one call, and whether
 *           the two outputs have the same bits (they should).
 *
 *   norm:   with --norm (and --device: only these figures), the eager
 *           normalizations on the device, op + free of its output (ms):
 *           LayerNormalization of f32 [64, 768] and [4096, 768] over the
 *           last axis (scale and B [768]), BatchNormalization (inference)
 *           of f32 [8, 64, 56, 56] (scale, B, mean, var [64]),
 *           InstanceNormalization of f32 [8, 64, 56, 56]; and short rows
 *           (the kernels' per-row form): BatchNormalization of f32 [1024,
 *           512] (rows of 1; parameters [512]), LayerNormalization of f32
 *           [16384, 32] (scale and B [32]).
 *
 * Each figure is the median over `runs` (>= 5) rounds; the kinds are
 * interleaved within every round so machine load hits them alike. Prints
 * the load average before and after (/proc/loadavg). Asserts nothing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dml_cpu.h"
#include "dml_rt.h"
#include "dml_tensor.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void load(const char *when) {
  FILE *f = fopen("/proc/loadavg", "r");
  char buf[128] = "?";
  if (f) {
    if (!fgets(buf, sizeof buf, f)) buf[0] = 0;
    fclose(f);
  }
  buf[strcspn(buf, "\n")] = 0;
  printf("load %s: %s\n", when, buf);
}

#define TRY(expr)                                 \
  do {                                            \
    dml_status_t s_ = (expr);                     \
    if (s_) {                                     \
      char *m_ = dml_status_format(s_);           \
      fprintf(stderr, "%s\n", m_ ? m_ : "error"); \
      free(m_);                                   \
      dml_status_free(s_);                        \
      exit(1);                                    \
    }                                             \
  } while (0)

/* The io figures (above): package `path` (inputs 0 and 1, output 0, f32,
 * static dims) with host arrays against device tensors on `dev`. */
static void io_bench(const char *path, const char *device, dml_rt_device_t *dev,
                     int runs) {
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *sh = NULL, *sd = NULL;
  TRY(dml_rt_model_load_file(path, &m));
  TRY(dml_rt_session_create(m, device, &sh));
  TRY(dml_rt_session_create_on_device(m, dev, NULL, NULL, &sd));
  dml_tensor_t h[2];
  dml_rt_tensor_t t[2], y;
  uint64_t in_bytes = 0;
  for (uint32_t i = 0; i < 2; i++) {
    dml_rt_io_info_t info;
    TRY(dml_rt_session_input_info(sh, i, &info));
    memset(&h[i], 0, sizeof h[i]);
    h[i].dtype = DML_DTYPE_F32;
    h[i].rank = info.rank;
    for (int32_t d = 0; d < info.rank; d++)
      h[i].dims[d] = info.dim_symbol[d] ? info.dim_bound[d] : info.dims[d];
    size_t nb = dml_tensor_bytes(&h[i]);
    float *p = (float *)malloc(nb ? nb : 4);
    for (size_t k = 0; k < nb / 4; k++) p[k] = (float)(k % 97) * 0.01f - 0.5f;
    h[i].data = p;
    in_bytes += nb;
    TRY(dml_rt_tensor_from_host(dev, &h[i], &t[i]));
  }
  double th[64] = {0}, td[64] = {0};
  dml_tensor_t out;
  for (int r = 0; r < runs + 1; r++) { /* round 0 warms up */
    double t0 = now_s();
    TRY(dml_rt_session_set_input(sh, 0, &h[0]));
    TRY(dml_rt_session_set_input(sh, 1, &h[1]));
    TRY(dml_rt_session_run(sh));
    TRY(dml_rt_session_get_output(sh, 0, &out));
    double t1 = now_s();
    TRY(dml_rt_session_set_input_tensor(sd, 0, t[0]));
    TRY(dml_rt_session_set_input_tensor(sd, 1, t[1]));
    TRY(dml_rt_session_run(sd));
    TRY(dml_rt_session_get_output_tensor(sd, 0, dev, &y));
    TRY(dml_rt_tensor_free(y));
    double t2 = now_s();
    if (r == 0) continue;
    th[r - 1] = (t1 - t0) * 1e3;
    td[r - 1] = (t2 - t1) * 1e3;
  }
  dml_rt_transfer_stats_t sth, std;
  dml_rt_session_transfer_stats(sh, &sth);
  dml_rt_session_transfer_stats(sd, &std);
  int calls = runs + 1;
  /* the last call's outputs side by side: the same package on the same
   * device, so the same bits */
  int64_t n_out = (int64_t)(dml_tensor_bytes(&out) / 4), differ = 0;
  float *got = (float *)malloc(n_out ? (size_t)n_out * 4 : 4);
  dml_tensor_t hy = out;
  hy.data = got;
  TRY(dml_rt_session_get_output_tensor(sd, 0, dev, &y));
  TRY(dml_rt_tensor_to_host(y, &hy));
  TRY(dml_rt_tensor_free(y));
  for (int64_t k = 0; k < n_out; k++)
    differ += memcmp(&got[k], &((const float *)out.data)[k], 4) != 0;
  free(got);
  printf(
      "io (%s, %llu input bytes): host arrays, set_input x2 + run + get_output %.2f ms "
      "(per call %llu bytes to the device, %llu to the host)\n",
      dml_rt_device_name(dev), (unsigned long long)in_bytes, median(th, runs),
      (unsigned long long)(sth.to_device_bytes / (uint64_t)calls),
      (unsigned long long)(sth.to_host_bytes / (uint64_t)calls));
  printf(
      "io (%s): device tensors, set_input_tensor x2 + run + get_output_tensor + free "
      "%.2f ms (per call %llu bytes on the device, %llu to the device, %llu to the "
      "host)\n",
      dml_rt_device_name(dev), median(td, runs),
      (unsigned long long)(std.on_device_bytes / (uint64_t)calls),
      (unsigned long long)(std.to_device_bytes / (uint64_t)calls),
      (unsigned long long)(std.to_host_bytes / (uint64_t)calls));
  printf(
      "io (%s): device tensors' output %s the host arrays' (%lld of %lld elements "
      "differ)\n",
      dml_rt_device_name(dev), differ ? "DIFFERS from" : "has the same bits as",
      (long long)differ, (long long)n_out);
  for (int i = 0; i < 2; i++) {
    TRY(dml_rt_tensor_free(t[i]));
    free(h[i].data);
  }
  dml_rt_session_release(sh);
  dml_rt_session_release(sd);
  dml_rt_model_release(m);
}

/* A device tensor of `rank` dims filled with values in [lo, hi) from seed. */
static dml_rt_tensor_t rnd(dml_rt_device_t *dev, int32_t rank, const int64_t *dims,
                           double lo, double hi, uint64_t seed) {
  dml_rt_tensor_t t;
  TRY(dml_rt_tensor_random_uniform(dev, DML_DTYPE_F32, rank, dims, lo, hi, seed, &t));
  return t;
}

/* The norm figures (above) on `dev`. */
static void norm_bench(dml_rt_device_t *dev, int runs) {
  int64_t d64[2] = {64, 768}, d4k[2] = {4096, 768}, dc = 768, dbn[4] = {8, 64, 56, 56},
          c64 = 64, dr1[2] = {1024, 512}, c512 = 512, d32[2] = {16384, 32}, c32 = 32;
  dml_rt_tensor_t x64 = rnd(dev, 2, d64, -2, 2, 1), x4k = rnd(dev, 2, d4k, -2, 2, 2),
                  sc = rnd(dev, 1, &dc, 0.5, 1.5, 3), b = rnd(dev, 1, &dc, -1, 1, 4),
                  xb = rnd(dev, 4, dbn, -2, 2, 5), bs = rnd(dev, 1, &c64, 0.5, 1.5, 6),
                  bb = rnd(dev, 1, &c64, -1, 1, 7), bm = rnd(dev, 1, &c64, -0.5, 0.5, 8),
                  bv = rnd(dev, 1, &c64, 0.5, 2, 9);
  dml_rt_tensor_t xr1 = rnd(dev, 2, dr1, -2, 2, 10),
                  p512[4] = {
                      rnd(dev, 1, &c512, 0.5, 1.5, 11), rnd(dev, 1, &c512, -1, 1, 12),
                      rnd(dev, 1, &c512, -0.5, 0.5, 13), rnd(dev, 1, &c512, 0.5, 2, 14)};
  dml_rt_tensor_t x32 = rnd(dev, 2, d32, -2, 2, 15),
                  s32 = rnd(dev, 1, &c32, 0.5, 1.5, 16),
                  b32 = rnd(dev, 1, &c32, -1, 1, 17);
  dml_rt_tensor_t ln64[3] = {x64, sc, b}, ln4k[3] = {x4k, sc, b},
                  bn[5] = {xb, bs, bb, bm, bv}, in[3] = {xb, bs, bb},
                  bn1[5] = {xr1, p512[0], p512[1], p512[2], p512[3]},
                  ln32[3] = {x32, s32, b32}, y;
  enum { NK = 6 };
  static const char *const names[NK] = {
      "LayerNormalization [64,768]",     "LayerNormalization [4096,768]",
      "BatchNormalization [8,64,56,56]", "InstanceNormalization [8,64,56,56]",
      "BatchNormalization [1024,512]",   "LayerNormalization [16384,32]"};
  double t[NK][64];
  for (int r = 0; r < runs + 1; r++) { /* round 0 warms up */
    for (int k = 0; k < NK; k++) {
      double t0 = now_s();
      if (k == 0) TRY(dml_rt_tensor_op("LayerNormalization", ln64, 3, NULL, 0, &y, 1));
      if (k == 1) TRY(dml_rt_tensor_op("LayerNormalization", ln4k, 3, NULL, 0, &y, 1));
      if (k == 2) TRY(dml_rt_tensor_op("BatchNormalization", bn, 5, NULL, 0, &y, 1));
      if (k == 3) TRY(dml_rt_tensor_op("InstanceNormalization", in, 3, NULL, 0, &y, 1));
      if (k == 4) TRY(dml_rt_tensor_op("BatchNormalization", bn1, 5, NULL, 0, &y, 1));
      if (k == 5) TRY(dml_rt_tensor_op("LayerNormalization", ln32, 3, NULL, 0, &y, 1));
      TRY(dml_rt_tensor_free(y));
      if (r > 0) t[k][r - 1] = (now_s() - t0) * 1e3;
    }
  }
  printf("%s, f32, op + free, medians of %d:", dml_rt_device_name(dev), runs);
  for (int k = 0; k < NK; k++)
    printf("%s %s %.2f ms", k ? ";" : "", names[k], median(t[k], runs));
  printf("\n");
  dml_rt_tensor_t all[] = {x64, x4k,     sc,      b,       xb,      bs,  bb,  bm, bv,
                           xr1, p512[0], p512[1], p512[2], p512[3], x32, s32, b32};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) TRY(dml_rt_tensor_free(all[i]));
}

int main(int argc, char **argv) {
  const char *pkg = NULL, *device = NULL, *vkpkg = NULL, *iopkg = NULL;
  int runs = 7, threads = 1, norm = 0;
  int64_t n = 1024;
  for (int i = 1; i < argc; i += 2) {
    if (!strcmp(argv[i], "--norm")) {
      norm = 1;
      i--;
    } else if (i + 1 >= argc) {
      fprintf(stderr, "eager_bench: %s takes a value\n", argv[i]);
      return 2;
    } else if (!strcmp(argv[i], "--pkg"))
      pkg = argv[i + 1];
    else if (!strcmp(argv[i], "--runs"))
      runs = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--threads"))
      threads = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--device"))
      device = argv[i + 1];
    else if (!strcmp(argv[i], "--vkpkg"))
      vkpkg = argv[i + 1];
    else if (!strcmp(argv[i], "--iopkg"))
      iopkg = argv[i + 1];
    else if (!strcmp(argv[i], "--n"))
      n = atoll(argv[i + 1]);
    else {
      fprintf(stderr,
              "usage: eager_bench [--pkg MATMUL.dmlpkg] [--runs N] [--threads N] "
              "[--n N] [--device vulkan[:N] [--vkpkg MATMUL_VK.dmlpkg] "
              "[--iopkg ADD_VK.dmlpkg]] | --norm --device D [--runs N]\n");
      return 2;
    }
  }
  if (runs < 5) runs = 5;
  if (runs > 64) runs = 64;
  dml_cpu_set_num_threads(threads);
  load("before");
  if (norm) {
    dml_rt_device_t *dev;
    TRY(dml_rt_device_open(device ? device : "cpu", &dev));
    norm_bench(dev, runs);
    dml_rt_device_close(dev);
    load("after");
    return 0;
  }
  dml_rt_device_t *cpu;
  TRY(dml_rt_device_open("cpu", &cpu));

  /* small Add */
  int64_t d16 = 16;
  dml_rt_tensor_t a, b, y, in[2];
  TRY(dml_rt_tensor_random_uniform(cpu, DML_DTYPE_F32, 1, &d16, -1, 1, 1, &a));
  TRY(dml_rt_tensor_random_uniform(cpu, DML_DTYPE_F32, 1, &d16, -1, 1, 2, &b));
  in[0] = a, in[1] = b;
  float ha[16], hb[16], hy[16];
  dml_tensor_t ta = {DML_DTYPE_F32, 1, {16}, ha}, tb = {DML_DTYPE_F32, 1, {16}, hb};
  dml_tensor_t ty = {DML_DTYPE_F32, 1, {16}, hy};
  TRY(dml_rt_tensor_to_host(a, &ta));
  TRY(dml_rt_tensor_to_host(b, &tb));
  dml_tensor_t kin[2] = {ta, tb};
  dml_cpu_call_t call;
  memset(&call, 0, sizeof call);
  call.op = DML_OP_ADD;
  call.inputs = kin;
  call.n_inputs = 2;
  call.outputs = &ty;
  call.n_outputs = 1;

  /* MatMul */
  int64_t dmm[2] = {n, n};
  dml_rt_tensor_t ma, mb, my, mi[2];
  TRY(dml_rt_tensor_random_normal(cpu, DML_DTYPE_F32, 2, dmm, 0, 1, 3, &ma));
  TRY(dml_rt_tensor_random_normal(cpu, DML_DTYPE_F32, 2, dmm, 0, 1, 4, &mb));
  mi[0] = ma, mi[1] = mb;
  float *hma = (float *)malloc((size_t)(n * n) * 4),
        *hmb = (float *)malloc((size_t)(n * n) * 4);
  dml_tensor_t tma = {DML_DTYPE_F32, 2, {n, n}, hma},
               tmb = {DML_DTYPE_F32, 2, {n, n}, hmb};
  TRY(dml_rt_tensor_to_host(ma, &tma));
  TRY(dml_rt_tensor_to_host(mb, &tmb));
  dml_rt_model_t *model = NULL;
  dml_rt_session_t *sess = NULL;
  if (pkg) {
    TRY(dml_rt_model_load_file(pkg, &model));
    TRY(dml_rt_session_create(model, "cpu", &sess));
  }

  const int add_iters = 20000;
  double t_add[64], t_kern[64], t_mm[64], t_pkg[64], t_pkg_run[64];
  for (int r = 0; r < runs + 1; r++) { /* round 0 warms up */
    double t0 = now_s();
    for (int i = 0; i < add_iters; i++) {
      TRY(dml_rt_tensor_op("Add", in, 2, NULL, 0, &y, 1));
      TRY(dml_rt_tensor_free(y));
    }
    double t1 = now_s();
    for (int i = 0; i < add_iters; i++) TRY(dml_cpu_run(&call));
    double t2 = now_s();
    TRY(dml_rt_tensor_op("MatMul", mi, 2, NULL, 0, &my, 1));
    TRY(dml_rt_tensor_free(my));
    double t3 = now_s(), t4 = t3, t5 = t3;
    if (sess) {
      TRY(dml_rt_session_set_input(sess, 0, &tma));
      TRY(dml_rt_session_set_input(sess, 1, &tmb));
      t4 = now_s();
      TRY(dml_rt_session_run(sess));
      t5 = now_s();
    }
    if (r == 0) continue;
    t_add[r - 1] = (t1 - t0) / add_iters * 1e6;
    t_kern[r - 1] = (t2 - t1) / add_iters * 1e6;
    t_mm[r - 1] = (t3 - t2) * 1e3;
    t_pkg[r - 1] = (t5 - t3) * 1e3;
    t_pkg_run[r - 1] = (t5 - t4) * 1e3;
  }
  double add = median(t_add, runs), kern = median(t_kern, runs);
  printf("threads %d, %d rounds (medians)\n", threads, runs);
  printf(
      "eager Add f32[16]: %.3f us per op (op + free); kernel alone %.3f us; "
      "overhead %.3f us\n",
      add, kern, add - kern);
  double mm = median(t_mm, runs);
  printf("eager MatMul %lldx%lld: %.2f ms (%.1f GFLOP/s)\n", (long long)n, (long long)n,
         mm, 2.0 * (double)n * (double)n * (double)n / (mm * 1e6));
  if (sess) {
    double p = median(t_pkg, runs), pr = median(t_pkg_run, runs);
    printf(
        "compiled package MatMul: %.2f ms set_input x2 + run, %.2f ms run alone "
        "(%.1f GFLOP/s)\n",
        p, pr, 2.0 * (double)n * (double)n * (double)n / (pr * 1e6));
    dml_rt_session_release(sess);
    dml_rt_model_release(model);
  }
  if (device) {
    dml_rt_device_t *dev;
    TRY(dml_rt_device_open(device, &dev));
    int64_t mib = 1 << 18; /* f32: 1 MiB */
    float *hb = (float *)calloc((size_t)mib, 4);
    dml_tensor_t th = {DML_DTYPE_F32, 1, {mib}, hb};
    dml_rt_tensor_t g, g2;
    TRY(dml_rt_tensor_from_host(dev, &th, &g));
    const int it = 50;
    double t_z[64], t_up[64], t_down[64], t_copy[64];
    for (int r = 0; r < runs + 1; r++) {
      double t0 = now_s();
      for (int i = 0; i < it; i++) {
        TRY(dml_rt_tensor_zeros(dev, DML_DTYPE_F32, 1, &d16, &g2));
        TRY(dml_rt_tensor_free(g2));
      }
      double t1 = now_s();
      for (int i = 0; i < it; i++) {
        TRY(dml_rt_tensor_from_host(dev, &th, &g2));
        TRY(dml_rt_tensor_free(g2));
      }
      double t2 = now_s();
      for (int i = 0; i < it; i++) TRY(dml_rt_tensor_to_host(g, &th));
      double t3 = now_s();
      for (int i = 0; i < it; i++) {
        TRY(dml_rt_tensor_to_device(g, dev, &g2));
        TRY(dml_rt_tensor_free(g2));
      }
      double t4 = now_s();
      if (r == 0) continue;
      t_z[r - 1] = (t1 - t0) / it * 1e6;
      t_up[r - 1] = (t2 - t1) / it * 1e6;
      t_down[r - 1] = (t3 - t2) / it * 1e6;
      t_copy[r - 1] = (t4 - t3) / it * 1e6;
    }
    printf(
        "%s: zeros f32[16] + free %.1f us; 1 MiB upload + free %.1f us, download %.1f "
        "us, copy on the device + free %.1f us\n",
        dml_rt_device_name(dev), median(t_z, runs), median(t_up, runs),
        median(t_down, runs), median(t_copy, runs));
    /* eager ops on the device (the eager kernel library): a small Add (the
     * per-op dispatch cost), a small Relu, and an Add of two 1 MiB tensors */
    dml_rt_tensor_t s16;
    TRY(dml_rt_tensor_ones(dev, DML_DTYPE_F32, 1, &d16, &s16));
    dml_rt_tensor_t in16[2] = {s16, s16}, in1m[2] = {g, g};
    double t_add[64], t_relu[64], t_add1m[64];
    for (int r = 0; r < runs + 1; r++) {
      double t0 = now_s();
      for (int i = 0; i < it; i++) {
        TRY(dml_rt_tensor_op("Add", in16, 2, NULL, 0, &g2, 1));
        TRY(dml_rt_tensor_free(g2));
      }
      double t1 = now_s();
      for (int i = 0; i < it; i++) {
        TRY(dml_rt_tensor_op("Relu", in16, 1, NULL, 0, &g2, 1));
        TRY(dml_rt_tensor_free(g2));
      }
      double t2 = now_s();
      for (int i = 0; i < it / 5; i++) {
        TRY(dml_rt_tensor_op("Add", in1m, 2, NULL, 0, &g2, 1));
        TRY(dml_rt_tensor_free(g2));
      }
      double t3 = now_s();
      if (r == 0) continue;
      t_add[r - 1] = (t1 - t0) / it * 1e6;
      t_relu[r - 1] = (t2 - t1) / it * 1e6;
      t_add1m[r - 1] = (t3 - t2) / (it / 5) * 1e6;
    }
    printf(
        "%s: eager Add f32[16] + free %.1f us; eager Relu f32[16] + free %.1f us; "
        "eager Add of two 1 MiB tensors + free %.1f us\n",
        dml_rt_device_name(dev), median(t_add, runs), median(t_relu, runs),
        median(t_add1m, runs));
    /* Softmax and the data-movement ops on the device (docs/tensor.md):
     * Softmax of f32 [256, 1024] over its rows and over axis 0 (moved last
     * and back by the Identity kernel), Transpose of it, Concat of two on
     * axis 0 and on axis 1, Gather of 64 of its rows; each with the free
     * of its output */
    {
      static const char *const names[6] = {"Softmax axis -1", "Softmax axis 0",
                                           "Transpose",       "Concat axis 0",
                                           "Concat axis 1",   "Gather 64 rows"};
      dml_rt_tensor_t sm, gi, s2[2];
      int64_t d2[2] = {256, 1024}, ni = 64;
      TRY(dml_rt_tensor_reshape(g, 2, d2, &sm));
      int64_t iv[64];
      for (int i = 0; i < 64; i++) iv[i] = (i * 37) % 256;
      dml_tensor_t ih = {DML_DTYPE_I64, 1, {ni}, iv};
      TRY(dml_rt_tensor_from_host(dev, &ih, &gi));
      s2[0] = s2[1] = sm;
      dml_attr_t ax;
      memset(&ax, 0, sizeof ax);
      ax.name = "axis";
      ax.kind = DML_ATTR_INT;
      double t_mv[6][64];
      const int itm = 10;
      for (int r = 0; r < runs + 1; r++) {
        for (int k = 0; k < 6; k++) {
          double t0 = now_s();
          for (int i = 0; i < itm; i++) {
            dml_rt_tensor_t gin[2] = {sm, gi};
            ax.i = k == 0 ? -1 : k == 4 ? 1 : 0;
            if (k < 2)
              TRY(dml_rt_tensor_op("Softmax", &sm, 1, &ax, 1, &g2, 1));
            else if (k == 2)
              TRY(dml_rt_tensor_op("Transpose", &sm, 1, NULL, 0, &g2, 1));
            else if (k < 5)
              TRY(dml_rt_tensor_op("Concat", s2, 2, &ax, 1, &g2, 1));
            else
              TRY(dml_rt_tensor_op("Gather", gin, 2, NULL, 0, &g2, 1));
            TRY(dml_rt_tensor_free(g2));
          }
          if (r > 0) t_mv[k][r - 1] = (now_s() - t0) / itm * 1e6;
        }
      }
      printf("%s, f32 [256, 1024] (1 MiB), op + free:", dml_rt_device_name(dev));
      for (int k = 0; k < 6; k++)
        printf("%s %s %.1f us", k ? ";" : "", names[k], median(t_mv[k], runs));
      printf("\n");
      TRY(dml_rt_tensor_free(gi));
      TRY(dml_rt_tensor_free(sm));
    }
    /* MatMul on the device: eager (device tensors) against the compiled
     * package (a session on the same device), the same inputs */
    dml_rt_tensor_t va, vb, vin[2];
    TRY(dml_rt_tensor_to_device(ma, dev, &va));
    TRY(dml_rt_tensor_to_device(mb, dev, &vb));
    vin[0] = va, vin[1] = vb;
    dml_rt_model_t *vmodel = NULL;
    dml_rt_session_t *vsess = NULL;
    /* a device without an eager MatMul kernel (a build without the
     * library) is said and skipped */
    dml_status_t mm_s = dml_rt_tensor_op("MatMul", vin, 2, NULL, 0, &g2, 1);
    int mm_ok = mm_s == DML_OK;
    if (mm_ok) TRY(dml_rt_tensor_free(g2));
    if (!mm_ok && dml_status_code(mm_s) != DML_STATUS_UNIMPLEMENTED) TRY(mm_s);
    if (!mm_ok) {
      char *m = dml_status_format(mm_s);
      printf("%s: eager MatMul skipped: %s\n", dml_rt_device_name(dev), m ? m : "?");
      free(m);
      dml_status_free(mm_s);
    }
    if (mm_ok && vkpkg) {
      TRY(dml_rt_model_load_file(vkpkg, &vmodel));
      TRY(dml_rt_session_create(vmodel, device, &vsess));
      TRY(dml_rt_session_set_input(vsess, 0, &tma));
      TRY(dml_rt_session_set_input(vsess, 1, &tmb));
    }
    double t_vmm[64] = {0}, t_vpkg[64] = {0};
    for (int r = 0; r < runs + 1 && mm_ok; r++) { /* round 0 warms up */
      double t0 = now_s();
      TRY(dml_rt_tensor_op("MatMul", vin, 2, NULL, 0, &g2, 1));
      TRY(dml_rt_tensor_free(g2));
      double t1 = now_s();
      if (vsess) TRY(dml_rt_session_run(vsess));
      double t2 = now_s();
      if (r == 0) continue;
      t_vmm[r - 1] = (t1 - t0) * 1e3;
      t_vpkg[r - 1] = (t2 - t1) * 1e3;
    }
    double vmm = mm_ok ? median(t_vmm, runs) : 0;
    if (mm_ok)
      printf("%s: eager MatMul %lldx%lld + free %.1f ms (%.2f GFLOP/s)\n",
             dml_rt_device_name(dev), (long long)n, (long long)n, vmm,
             2.0 * (double)n * (double)n * (double)n / (vmm * 1e6));
    if (vsess) { /* the two results side by side, once */
      dml_tensor_t py;
      TRY(dml_rt_session_get_output(vsess, 0, &py));
      TRY(dml_rt_tensor_op("MatMul", vin, 2, NULL, 0, &g2, 1));
      float *ey = (float *)malloc((size_t)(n * n) * 4);
      dml_tensor_t th2 = {DML_DTYPE_F32, 2, {n, n}, ey};
      TRY(dml_rt_tensor_to_host(g2, &th2));
      TRY(dml_rt_tensor_free(g2));
      double md = 0;
      for (int64_t i = 0; i < n * n; i++) {
        double d = fabs((double)ey[i] - ((const float *)py.data)[i]);
        md = d > md ? d : md;
      }
      printf("eager and compiled MatMul on %s: largest difference %.3g\n", device, md);
      free(ey);
    }
    if (vsess) {
      double vp = median(t_vpkg, runs);
      printf("%s: compiled package MatMul, run alone %.1f ms (%.2f GFLOP/s)\n",
             dml_rt_device_name(dev), vp,
             2.0 * (double)n * (double)n * (double)n / (vp * 1e6));
      dml_rt_session_release(vsess);
      dml_rt_model_release(vmodel);
    }
    if (iopkg) io_bench(iopkg, device, dev, runs);
    TRY(dml_rt_tensor_free(va));
    TRY(dml_rt_tensor_free(vb));
    TRY(dml_rt_tensor_free(s16));
    TRY(dml_rt_tensor_free(g));
    free(hb);
    dml_rt_device_close(dev);
  }
  load("after");
  free(hma);
  free(hmb);
  dml_rt_device_close(cpu);
  return 0;
}
