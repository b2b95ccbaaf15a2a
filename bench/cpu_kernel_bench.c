/*
 * cpu_kernel_bench.c — GFLOP/s of dmlc's f32 CPU kernels against this
 * machine's FMA peak (a roofline check, less sensitive to a loaded machine
 * than whole-model timings: each figure is the fastest of its runs).
 *
 *   cpu_kernel_bench [--threads N] [--seconds S] [--only TEXT] [--dw-strip]
 *                    [--no-winograd]
 *
 * --only TEXT runs the cases whose name contains TEXT; --dw-strip makes the
 * AVX-512 depthwise convolution take its per-plane strip kernel instead of
 * the flattened-vector one (dml_cpu_dw_flat_set), for an A/B of the two;
 * --no-winograd makes the 3x3 stride-1 convolutions of 64 or more input
 * channels take the channel-vectorized direct kernel instead of Winograd
 * F(2x2, 3x3) (dml_cpu_conv_wg_set). GFLOP/s count the direct
 * convolution's multiply-adds whatever the kernel.
 *
 * Prints one line per case: the GEMM (dml_cpu_sgemm, square 256/512/1024,
 * A and B unpacked) and convolutions through dml_cpu_run (depthwise 3x3
 * stride 1 and 2, a 3x3 stride-1 convolution, a 1x1 one, a 3x3 stride-2
 * one, and resnet_small's strided and 8x8 layers at batch 32), each as GFLOP/s (2 flops
 * per multiply-add) and as a share of the peak: on x86-64 with AVX-512, `peak` is
 * measured by a loop of independent 16-lane fused multiply-adds on one thread (times the
 * thread count); elsewhere it is not measured and the share is omitted. With one thread
 * the times are the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so that
 * preemption on a shared machine does not count; with several, wall time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_internal.h"
#include "dml_cpu.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define HAVE_PEAK 1
#endif

/* With one thread, this thread's CPU time (time the OS gave other work on a
 * loaded machine is not counted); with several, wall time. */
static clockid_t g_clock = CLOCK_MONOTONIC;
static double now_s(void) {
  struct timespec ts;
  clock_gettime(g_clock, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static float *buf(size_t n) {
  float *p = (float *)malloc((n ? n : 1) * sizeof(float));
  if (!p) {
    fprintf(stderr, "error: cpu_kernel_bench: out of memory\n");
    exit(1);
  }
  uint32_t s = 12345u;
  for (size_t i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    p[i] = (float)((s >> 8) & 0xffff) / 32768.0f - 1.0f;
  }
  return p;
}

#ifdef HAVE_PEAK
/* 2 * 16 * 12 flops per iteration, 12 independent chains. */
__attribute__((target("avx512f"))) static double fma_peak_once(long iters) {
  __m512 a[12], x = _mm512_set1_ps(1.0000001f), y = _mm512_set1_ps(1e-7f);
#pragma GCC unroll 12
  for (int i = 0; i < 12; i++) a[i] = _mm512_set1_ps((float)i);
  double t0 = now_s();
  for (long it = 0; it < iters; it++)
#pragma GCC unroll 12
    for (int i = 0; i < 12; i++) a[i] = _mm512_fmadd_ps(a[i], x, y);
  double t = now_s() - t0;
  float sink = 0;
  for (int i = 0; i < 12; i++) sink += _mm512_reduce_add_ps(a[i]);
  if (sink == 12345.0f) printf(" ");
  return 2.0 * 16 * 12 * (double)iters / t / 1e9;
}
#endif

/* The fastest of repeated runs of fn within `seconds`, in seconds. */
typedef void (*run_fn)(void *);
static double best_time(run_fn fn, void *ctx, double seconds) {
  fn(ctx);
  double best = 1e30, t_end = now_s() + seconds;
  int n = 0;
  while (n < 3 || now_s() < t_end) {
    double t0 = now_s();
    fn(ctx);
    double t = now_s() - t0;
    if (t < best) best = t;
    n++;
  }
  return best;
}

typedef struct {
  int64_t n;
  float *a, *b, *c;
  void *scratch;
  size_t sb;
} gemm_ctx;

static void run_gemm(void *v) {
  gemm_ctx *g = (gemm_ctx *)v;
  dml_cpu_sgemm(0, 0, g->n, g->n, g->n, 1.0f, g->a, g->n, g->b, g->n, 0.0f, g->c, g->n,
                g->scratch, g->sb);
}

typedef struct {
  dml_cpu_call_t call;
} conv_ctx;

static void run_conv(void *v) {
  conv_ctx *c = (conv_ctx *)v;
  dml_status_t s = dml_cpu_run(&c->call);
  if (s) {
    char *m = dml_status_format(s);
    fprintf(stderr, "error: cpu_kernel_bench: %s\n", m ? m : "conv failed");
    exit(1);
  }
}

static void report(const char *name, double flops, double t, double peak) {
  double gf = flops / t / 1e9;
  if (peak > 0)
    printf("%-34s %9.3f ms %8.1f GFLOP/s %5.1f%% of peak\n", name, t * 1e3, gf,
           100.0 * gf / peak);
  else
    printf("%-34s %9.3f ms %8.1f GFLOP/s\n", name, t * 1e3, gf);
}

/* Conv of one image batch: x [N, C, H, H], w [M, C/group, k, k], pads k/2. */
static const char *g_only; /* --only: run the cases whose name contains it */

static void conv_bench(const char *name, int64_t N, int64_t C, int64_t M, int64_t group,
                       int64_t H, int64_t k, int64_t s, double seconds, double peak) {
  if (g_only && !strstr(name, g_only)) return;
  int64_t OH = (H + 2 * (k / 2) - k) / s + 1;
  float *x = buf((size_t)(N * C * H * H)), *w = buf((size_t)(M * (C / group) * k * k));
  float *b = buf((size_t)M), *y = buf((size_t)(N * M * OH * OH));
  dml_tensor_t in[3], out;
  memset(in, 0, sizeof in);
  memset(&out, 0, sizeof out);
  in[0].dtype = in[1].dtype = in[2].dtype = out.dtype = DML_DTYPE_F32;
  in[0].rank = in[1].rank = out.rank = 4, in[2].rank = 1;
  int64_t xd[4] = {N, C, H, H}, wd[4] = {M, C / group, k, k}, yd[4] = {N, M, OH, OH};
  memcpy(in[0].dims, xd, sizeof xd), memcpy(in[1].dims, wd, sizeof wd);
  memcpy(out.dims, yd, sizeof yd);
  in[2].dims[0] = M;
  in[0].data = x, in[1].data = w, in[2].data = b, out.data = y;
  int64_t ks[2] = {k, k}, st[2] = {s, s}, pads[4] = {k / 2, k / 2, k / 2, k / 2};
  dml_attr_t at[4];
  memset(at, 0, sizeof at);
  at[0].name = "group", at[0].kind = DML_ATTR_INT, at[0].i = group;
  at[1].name = "kernel_shape", at[1].kind = DML_ATTR_INTS, at[1].ints = ks, at[1].n = 2;
  at[2].name = "strides", at[2].kind = DML_ATTR_INTS, at[2].ints = st, at[2].n = 2;
  at[3].name = "pads", at[3].kind = DML_ATTR_INTS, at[3].ints = pads, at[3].n = 4;
  conv_ctx c;
  memset(&c, 0, sizeof c);
  c.call.op = DML_OP_CONV;
  c.call.node_name = name;
  c.call.inputs = in, c.call.n_inputs = 3;
  c.call.outputs = &out, c.call.n_outputs = 1;
  c.call.attrs = at, c.call.n_attrs = 4;
  c.call.scratch_bytes = dml_cpu_scratch_bytes(&c.call);
  c.call.scratch = c.call.scratch_bytes ? malloc(c.call.scratch_bytes) : NULL;
  double t = best_time(run_conv, &c, seconds);
  double flops = 2.0 * (double)(N * M * OH * OH) * (double)(C / group * k * k);
  report(name, flops, t, peak);
  free(c.call.scratch), free(x), free(w), free(b), free(y);
}

int main(int argc, char **argv) {
  int threads = 1;
  double seconds = 0.5;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc)
      threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
      seconds = atof(argv[++i]);
    else if (!strcmp(argv[i], "--only") && i + 1 < argc)
      g_only = argv[++i];
    else if (!strcmp(argv[i], "--dw-strip"))
      dml_cpu_dw_flat_set(0);
    else if (!strcmp(argv[i], "--no-winograd"))
      dml_cpu_conv_wg_set(0);
    else {
      fprintf(stderr,
              "usage: cpu_kernel_bench [--threads N] [--seconds S] [--only TEXT] "
              "[--dw-strip] [--no-winograd]\n");
      return 2;
    }
  }
  if (threads < 1) threads = 1;
  dml_cpu_set_num_threads(threads);
  g_clock = threads == 1 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC;
  printf("clock: %s\n", threads == 1 ? "this thread's CPU time" : "wall time");
  double peak = 0;
#ifdef HAVE_PEAK
  if (__builtin_cpu_supports("avx512f")) {
    for (int r = 0; r < 5; r++) {
      double p = fma_peak_once(20000000);
      if (p > peak) peak = p;
    }
    peak *= threads;
    printf("peak (AVX-512 FMA loop x %d threads): %.1f GFLOP/s\n", threads, peak);
  }
#endif
  printf("GEMM micro-kernel: %d (1 C, 2 AVX2, 3 AVX-512); threads %d\n",
         dml_cpu_sgemm_isa(), threads);
  static const int64_t sizes[] = {256, 512, 1024, 1000};
  for (int i = 0; i < 4; i++) {
    int64_t n = sizes[i];
    gemm_ctx g = {
        n, buf((size_t)(n * n)), buf((size_t)(n * n)), buf((size_t)(n * n)), NULL, 0};
    g.sb = dml_cpu_sgemm_scratch(n, n, n, threads);
    g.scratch = malloc(g.sb);
    char name[64];
    snprintf(name, sizeof name, "sgemm %lld^3", (long long)n);
    if (g_only && !strstr(name, g_only)) {
      free(g.a), free(g.b), free(g.c), free(g.scratch);
      continue;
    }
    report(name, 2.0 * (double)n * (double)n * (double)n,
           best_time(run_gemm, &g, seconds), peak);
    free(g.a), free(g.b), free(g.c), free(g.scratch);
  }
  conv_bench("depthwise 3x3 s1 64ch 56x56", 1, 64, 64, 64, 56, 3, 1, seconds, peak);
  conv_bench("depthwise 3x3 s2 64ch 112x112", 1, 64, 64, 64, 112, 3, 2, seconds, peak);
  conv_bench("depthwise 3x3 s1 128ch 8x8 b32", 32, 128, 128, 128, 8, 3, 1, seconds, peak);
  /* mobilenet_tiny's (bench/make_cpu_models.py) other depthwise layers, batch 32 */
  conv_bench("depthwise 3x3 s1 16ch 32x32 b32", 32, 16, 16, 16, 32, 3, 1, seconds, peak);
  conv_bench("depthwise 3x3 s2 32ch 32x32 b32", 32, 32, 32, 32, 32, 3, 2, seconds, peak);
  conv_bench("depthwise 3x3 s1 64ch 16x16 b32", 32, 64, 64, 64, 16, 3, 1, seconds, peak);
  conv_bench("depthwise 3x3 s2 64ch 16x16 b32", 32, 64, 64, 64, 16, 3, 2, seconds, peak);
  /* the same at batch 1 (in cache) */
  conv_bench("depthwise 3x3 s1 16ch 32x32 b1", 1, 16, 16, 16, 32, 3, 1, seconds, peak);
  conv_bench("depthwise 3x3 s2 32ch 32x32 b1", 1, 32, 32, 32, 32, 3, 2, seconds, peak);
  conv_bench("depthwise 3x3 s1 64ch 16x16 b1", 1, 64, 64, 64, 16, 3, 1, seconds, peak);
  conv_bench("depthwise 3x3 s2 64ch 16x16 b1", 1, 64, 64, 64, 16, 3, 2, seconds, peak);
  conv_bench("depthwise 3x3 s1 128ch 8x8 b1", 1, 128, 128, 128, 8, 3, 1, seconds, peak);
  /* mobilenet_tiny's pointwise layers, batch 1 and 32 */
  conv_bench("pointwise 1x1 16->32 32x32 b1", 1, 16, 32, 1, 32, 1, 1, seconds, peak);
  conv_bench("pointwise 1x1 64->64 16x16 b1", 1, 64, 64, 1, 16, 1, 1, seconds, peak);
  conv_bench("pointwise 1x1 128->128 8x8 b1", 1, 128, 128, 1, 8, 1, 1, seconds, peak);
  conv_bench("pointwise 1x1 16->32 32x32 b32", 32, 16, 32, 1, 32, 1, 1, seconds, peak);
  conv_bench("pointwise 1x1 32->64 16x16 b32", 32, 32, 64, 1, 16, 1, 1, seconds, peak);
  conv_bench("pointwise 1x1 64->64 16x16 b32", 32, 64, 64, 1, 16, 1, 1, seconds, peak);
  conv_bench("pointwise 1x1 64->128 8x8 b32", 32, 64, 128, 1, 8, 1, 1, seconds, peak);
  conv_bench("pointwise 1x1 128->128 8x8 b32", 32, 128, 128, 1, 8, 1, 1, seconds, peak);
  conv_bench("conv 3x3 s1 64->64 56x56", 1, 64, 64, 1, 56, 3, 1, seconds, peak);
  conv_bench("conv 3x3 s1 16->16 32x32 b32", 32, 16, 16, 1, 32, 3, 1, seconds, peak);
  conv_bench("conv 3x3 s2 64->128 56x56", 1, 64, 128, 1, 56, 3, 2, seconds, peak);
  conv_bench("conv 1x1 64->128 56x56", 1, 64, 128, 1, 56, 1, 1, seconds, peak);
  /* resnet_small's (bench/RESULTS.md) at batch 32: strided and 8x8 */
  conv_bench("conv 3x3 s2 16->32 32x32 b32", 32, 16, 32, 1, 32, 3, 2, seconds, peak);
  conv_bench("conv 3x3 s2 32->64 16x16 b32", 32, 32, 64, 1, 16, 3, 2, seconds, peak);
  conv_bench("conv 1x1 s2 16->32 32x32 b32", 32, 16, 32, 1, 32, 1, 2, seconds, peak);
  conv_bench("conv 1x1 s2 32->64 16x16 b32", 32, 32, 64, 1, 16, 1, 2, seconds, peak);
  conv_bench("conv 3x3 s1 64->64 8x8 b32", 32, 64, 64, 1, 8, 3, 1, seconds, peak);
  conv_bench("conv 3x3 s1 32->32 16x16 b32", 32, 32, 32, 1, 16, 3, 1, seconds, peak);
  conv_bench("conv 3x3 s1 64->64 8x8 b1", 1, 64, 64, 1, 8, 3, 1, seconds, peak);
  return 0;
}
