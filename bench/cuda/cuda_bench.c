/* cuda_bench.c — one package on a device, timed (bench/cuda/README.md).
 *   cuda_bench PKG [--device D] [--batch B] [--iterations N] [--warmup N]
 *              [--kernels]
 * Default: end-to-end latency of set_input + run + get_output (wall clock,
 * CLOCK_MONOTONIC) on random inputs at batch B, N timed runs after the
 * warm-up: min, median, p90 in microseconds. --kernels: the device time of
 * the kernels alone (CUDA events around each kernel: DMLC_CUDA_PROFILE=1,
 * every run eager), median over the runs of their sum, and the package's
 * flop and byte estimates over it (TFLOP/s, GB/s). Prints one JSON object
 * on stdout. Errors: exit 1 with the runtime's message. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dml_rt.h"

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int fail(dml_status_t s, const char *what) {
  char *m = dml_status_format(s);
  fprintf(stderr, "error: cuda_bench: %s: %s\n", what, m ? m : "?");
  free(m);
  dml_status_free(s);
  return 1;
}

int main(int argc, char **argv) {
  const char *pkg = NULL, *device = "cuda";
  long batch = 1, iters = 200, warmup = 20;
  int kernels = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--device") && i + 1 < argc)
      device = argv[++i];
    else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
      batch = strtol(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--iterations") && i + 1 < argc)
      iters = strtol(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
      warmup = strtol(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--kernels"))
      kernels = 1;
    else if (argv[i][0] != '-' && !pkg)
      pkg = argv[i];
    else {
      fprintf(stderr,
              "usage: cuda_bench PKG [--device D] [--batch B] [--iterations N] "
              "[--warmup N] [--kernels]\n");
      return 2;
    }
  }
  if (!pkg || batch < 1 || iters < 1 || warmup < 0) {
    fprintf(stderr,
            "usage: cuda_bench PKG [--device D] [--batch B] [--iterations N] "
            "[--warmup N] [--kernels]\n");
    return 2;
  }
  if (kernels) setenv("DMLC_CUDA_PROFILE", "1", 1);
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = NULL;
  dml_status_t st = dml_rt_model_load_file(pkg, &m);
  if (st) return fail(st, pkg);
  st = dml_rt_session_create(m, device, &s);
  if (st) {
    dml_rt_model_release(m);
    return fail(st, "session");
  }
  uint32_t ni = dml_rt_model_num_inputs(m);
  dml_tensor_t *in = (dml_tensor_t *)calloc(ni ? ni : 1, sizeof *in);
  uint64_t rng = 0x243F6A8885A308D3ull;
  for (uint32_t i = 0; i < ni; i++) {
    dml_rt_io_info_t io;
    st = dml_rt_model_input_info(m, i, &io);
    if (st) return fail(st, "input");
    in[i].dtype = io.dtype;
    in[i].rank = io.rank;
    for (int32_t d = 0; d < io.rank; d++)
      in[i].dims[d] = io.dim_symbol[d] ? io.dim_multiplier[d] * batch : io.dims[d];
    int64_t n = dml_dims_numel(in[i].dims, in[i].rank);
    float *x = (float *)malloc((size_t)(n ? n : 1) * sizeof(float));
    for (int64_t k = 0; k < n; k++) {
      rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
      x[k] = (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
    }
    in[i].data = x;
  }
  double *t = (double *)calloc((size_t)iters, sizeof(double));
  double flops = 0, bytes = 0;
  for (long r = -warmup; r < iters; r++) {
    double t0 = now_us();
    for (uint32_t i = 0; i < ni && !st; i++) st = dml_rt_session_set_input(s, i, &in[i]);
    if (!st) st = dml_rt_session_run(s);
    for (uint32_t o = 0; o < dml_rt_model_num_outputs(m) && !st; o++) {
      dml_tensor_t y;
      st = dml_rt_session_get_output(s, o, &y);
    }
    double t1 = now_us();
    if (st) return fail(st, "run");
    if (r < 0) continue;
    if (kernels) {
      double ms = 0;
      flops = bytes = 0;
      for (uint32_t k = 0; k < dml_rt_session_num_kernels(s); k++) {
        dml_rt_kernel_info_t ki;
        st = dml_rt_session_kernel_info(s, k, &ki);
        if (st) return fail(st, "kernel info");
        ms += ki.ms;
        flops += ki.flops;
        bytes += ki.bytes;
      }
      t[r] = ms * 1e3;
    } else {
      t[r] = t1 - t0;
    }
  }
  qsort(t, (size_t)iters, sizeof(double), cmp_d);
  double med = t[iters / 2];
  printf(
      "{\"package\": \"%s\", \"device\": \"%s\", \"batch\": %ld, \"mode\": \"%s\", "
      "\"iterations\": %ld, \"min_us\": %.3f, \"median_us\": %.3f, \"p90_us\": %.3f",
      pkg, dml_rt_session_device(s), batch, kernels ? "kernels" : "end_to_end", iters,
      t[0], med, t[(iters * 9) / 10]);
  if (kernels && med > 0)
    printf(", \"tflops\": %.3f, \"gbps\": %.1f", flops / (med * 1e-6) / 1e12,
           bytes / (med * 1e-6) / 1e9);
  printf("}\n");
  for (uint32_t i = 0; i < ni; i++) free((void *)in[i].data);
  free(in);
  free(t);
  dml_rt_session_release(s);
  dml_rt_model_release(m);
  return 0;
}
