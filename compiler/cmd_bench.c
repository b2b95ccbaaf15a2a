/* cmd_bench.c — `dmlc bench PKG --device D [--iterations N] [--warmup N]
 * [--batch B] [--json]`: end-to-end run times and, on a GPU device, each
 * kernel's device time, GFLOP/s, GB/s and share of the run. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dml_rt.h"
#include "dmlc_cmds.h"

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: dmlc bench PKG [--device D] [--iterations N] [--warmup N] [--batch B]\n"
      "                  [--dim NAME=V]... [--json]\n\n"
      "Runs the package's forward function on synthetic inputs (f32 values drawn\n"
      "uniformly from [-1, 1) with a fixed seed, other dtypes zero) and reports the\n"
      "end-to-end time of a run (inputs in, outputs out): min, median and max ms.\n"
      "On a GPU device it also reports each kernel: its device time (timestamp\n"
      "queries, mean over the timed runs), GFLOP/s and GB/s from the kernel's\n"
      "estimated work, and its share of the median run.\n\n"
      "  --device D        cpu (default), vulkan, vulkan:N, cuda or cuda:N (see dmlc\n"
      "                    devices)\n"
      "  --iterations N    timed runs (default 100)\n"
      "  --warmup N        untimed runs first (default 10)\n"
      "  --batch B         value of every symbolic dim (default 1; at most its bound)\n"
      "  --dim NAME=V      value of the symbolic input dim NAME instead (an image\n"
      "                    height H, a sequence length S; at most its bound);\n"
      "                    repeatable\n"
      "  --json            one JSON object instead of the table\n"
      "  -h, --help        this text\n");
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int parse_count(const char *v, long lo, long *out) {
  char *end = NULL;
  long n = strtol(v, &end, 10);
  if (!*v || *end || n < lo || n > 100000000) return 0;
  *out = n;
  return 1;
}

#define MAX_DIMS 16
/* Symbol values given with --dim. */
typedef struct dim_vals {
  int n;
  const char *name[MAX_DIMS];
  size_t len[MAX_DIMS];
  long v[MAX_DIMS];
} dim_vals_t;

/* The value of symbol `sym`: its --dim, else `batch`. */
static long sym_value(const dim_vals_t *dv, const char *sym, long batch) {
  for (int i = 0; i < dv->n; i++)
    if (strlen(sym) == dv->len[i] && !strncmp(sym, dv->name[i], dv->len[i]))
      return dv->v[i];
  return batch;
}

/* Binds synthetic inputs at symbol value `batch` (or the --dim values). */
static dml_status_t bind_inputs(const dml_rt_model_t *m, dml_rt_session_t *s, long batch,
                                const dim_vals_t *dv) {
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (uint32_t i = 0; i < dml_rt_model_num_inputs(m); i++) {
    dml_rt_io_info_t io;
    DML_RETURN_IF_ERROR(dml_rt_model_input_info(m, i, &io));
    dml_tensor_t t;
    memset(&t, 0, sizeof t);
    t.dtype = io.dtype;
    t.rank = io.rank;
    for (int32_t d = 0; d < io.rank; d++)
      t.dims[d] = io.dim_symbol[d]
                      ? io.dim_multiplier[d] * sym_value(dv, io.dim_symbol[d], batch)
                      : io.dims[d];
    size_t nb = dml_tensor_bytes(&t);
    if (nb == SIZE_MAX)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "dmlc.bench",
                             "input too large");
    t.data = calloc(1, nb ? nb : 1);
    if (!t.data)
      return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "dmlc.bench",
                             "out of memory");
    if (t.dtype == DML_DTYPE_F32)
      for (size_t k = 0; k < nb / 4; k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        ((float *)t.data)[k] =
            (float)((double)(x >> 11) / 9007199254740992.0 * 2.0 - 1.0);
      }
    dml_status_t st = dml_rt_session_set_input(s, i, &t);
    free(t.data);
    DML_RETURN_IF_ERROR(st);
  }
  return DML_OK;
}

int dmlc_cmd_bench(int argc, char **argv) {
  const char *pkg = NULL, *device = "cpu";
  long iters = 100, warmup = 10, batch = 1;
  int json = 0;
  dim_vals_t dv;
  memset(&dv, 0, sizeof dv);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--json")) {
      json = 1;
    } else if (!strcmp(a, "--device") && v) {
      device = v, i++;
    } else if (!strcmp(a, "--iterations") && v) {
      if (!parse_count(v, 1, &iters)) {
        return dmlc_usage_error("bench", "--iterations needs a positive integer");
      }
      i++;
    } else if (!strcmp(a, "--warmup") && v) {
      if (!parse_count(v, 0, &warmup)) {
        return dmlc_usage_error("bench", "--warmup needs a non-negative integer");
      }
      i++;
    } else if (!strcmp(a, "--batch") && v) {
      if (!parse_count(v, 1, &batch)) {
        return dmlc_usage_error("bench", "--batch needs a positive integer");
      }
      i++;
    } else if (!strcmp(a, "--dim") && v) {
      const char *eq = strchr(v, '=');
      if (!eq || eq == v || dv.n == MAX_DIMS || !parse_count(eq + 1, 1, &dv.v[dv.n])) {
        fprintf(stderr,
                "error: dmlc bench: --dim needs NAME=V with V a positive integer (at "
                "most %d of them), got '%s'\n",
                MAX_DIMS, v);
        return 2;
      }
      dv.name[dv.n] = v;
      dv.len[dv.n++] = (size_t)(eq - v);
      i++;
    } else if (a[0] == '-') {
      return dmlc_usage_error("bench", "unknown or incomplete flag '%s'", a);
    } else if (!pkg) {
      pkg = a;
    } else {
      return dmlc_usage_error("bench", "more than one package given");
    }
  }
  if (!pkg) return dmlc_usage_error("bench", "no package given");
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = NULL;
  double *t = (double *)calloc((size_t)iters, sizeof(double));
  double *kms = NULL;
  dml_status_t st =
      t ? dml_rt_model_load_file(pkg, &m)
        : dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "dmlc.bench", "oom");
  if (!st) st = dml_rt_session_create(m, device, &s);
  if (!st) st = bind_inputs(m, s, batch, &dv);
  for (long i = 0; !st && i < warmup; i++) st = dml_rt_session_run(s);
  uint32_t nk = s ? dml_rt_session_num_kernels(s) : 0;
  if (!st) {
    kms = (double *)calloc(nk + 1, sizeof(double));
    if (!kms) st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "dmlc.bench", "oom");
  }
  for (long i = 0; !st && i < iters; i++) {
    double t0 = now_ms();
    st = dml_rt_session_run(s);
    t[i] = now_ms() - t0;
    for (uint32_t k = 0; !st && k < nk; k++) {
      dml_rt_kernel_info_t ki;
      st = dml_rt_session_kernel_info(s, k, &ki);
      if (!st) kms[k] += ki.ms / (double)iters;
    }
  }
  if (st) {
    free(t);
    free(kms);
    dml_rt_session_release(s);
    dml_rt_model_release(m);
    return dmlc_report(dml_status_annotate(st, "dmlc bench %s", pkg));
  }
  qsort(t, (size_t)iters, sizeof(double), cmp_double);
  double med = iters % 2 ? t[iters / 2] : 0.5 * (t[iters / 2 - 1] + t[iters / 2]);
  const char *dev = dml_rt_session_device(s);
  if (json) {
    printf(
        "{\"package\": \"%s\", \"device\": \"%s\", \"batch\": %ld, \"iterations\": %ld, "
        "\"warmup\": %ld, \"min_ms\": %.6f, \"median_ms\": %.6f, \"max_ms\": %.6f, "
        "\"kernels\": [",
        pkg, dev, batch, iters, warmup, t[0], med, t[iters - 1]);
  } else {
    printf("%s on %s, batch %ld: %ld runs after %ld warm-up\n", pkg, dev, batch, iters,
           warmup);
    printf("end to end: min %.4f ms, median %.4f ms, max %.4f ms\n", t[0], med,
           t[iters - 1]);
    if (nk)
      printf("%-20s %10s %10s %10s %7s  nodes\n", "kernel", "ms", "GFLOP/s", "GB/s",
             "share");
    else
      printf("(per-kernel times are reported for GPU devices)\n");
  }
  for (uint32_t k = 0; k < nk; k++) {
    dml_rt_kernel_info_t ki;
    if (dml_rt_session_kernel_info(s, k, &ki)) continue;
    double ms = kms[k];
    double gflops = ms > 0 ? ki.flops / (ms * 1e6) : 0,
           gbs = ms > 0 ? ki.bytes / (ms * 1e6) : 0;
    char nodes[256];
    size_t w = 0;
    nodes[0] = 0;
    for (uint32_t j = 0; j < ki.n_nodes && w < sizeof nodes; j++) {
      dml_rt_node_info_t ni;
      if (dml_rt_model_node_info(m, ki.nodes[j], &ni)) continue;
      w +=
          (size_t)snprintf(nodes + w, sizeof nodes - w, "%s%s", j ? "," : "", ni.op_name);
    }
    if (json)
      printf(
          "%s{\"name\": \"%s\", \"nodes\": \"%s\", \"ms\": %.6f, \"gflops\": %.3f, "
          "\"gbs\": %.3f, \"share\": %.4f}",
          k ? ", " : "", ki.name, nodes, ms, gflops, gbs, med > 0 ? ms / med : 0);
    else
      printf("%-20s %10.4f %10.2f %10.2f %6.1f%%  %s\n", ki.name, ms, gflops, gbs,
             med > 0 ? 100.0 * ms / med : 0.0, nodes);
  }
  if (json) printf("]}\n");
  free(t);
  free(kms);
  dml_rt_session_release(s);
  dml_rt_model_release(m);
  return 0;
}
