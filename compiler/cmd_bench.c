/* cmd_bench.c — `dmlc bench PKG --device D [--iterations N] [--warmup N]
 * [--batch B] [--json] [--trace FILE] [--threads N]`: end-to-end run times
 * and, on a GPU device, each kernel's device time, GFLOP/s, GB/s and share
 * of the run; --trace writes every timed iteration's host steps and
 * kernels as a Chrome / Perfetto trace. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dml_file.h"
#include "dml_rt.h"
#include "dmlc_cmds.h"

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: dmlc bench PKG [--device D] [--iterations N] [--warmup N] [--batch B]\n"
      "                  [--dim NAME=V]... [--json] [--trace FILE.json] [--threads N]\n\n"
      "Runs the package's forward function on synthetic inputs (f32 values drawn\n"
      "uniformly from [-1, 1) with a fixed seed, other dtypes zero) and reports the\n"
      "end-to-end time of a run (inputs in, outputs out): min, median and max ms.\n"
      "On a GPU device it also reports each kernel: its device time (timestamp\n"
      "queries, mean over the timed runs), GFLOP/s and GB/s from the kernel's\n"
      "estimated work, and its share of the median run. The branches of a\n"
      "run-time If and the body of a run-time Loop (regions: sessions the host\n"
      "drives) are listed after the kernels: where each runs, how often it ran\n"
      "in the last run and its device kernels (\"regions\" in --json).\n\n"
      "  --device D        cpu (default), vulkan, vulkan:N, cuda or cuda:N (see dmlc\n"
      "                    devices)\n"
      "  --iterations N    timed runs (default 100)\n"
      "  --warmup N        untimed runs first (default 10)\n"
      "  --batch B         value of every symbolic dim (default 1; at most its bound)\n"
      "  --dim NAME=V      value of the symbolic input dim NAME instead (an image\n"
      "                    height H, a sequence length S; at most its bound);\n"
      "                    repeatable\n"
      "  --json            one JSON object instead of the table\n"
      "  --trace FILE      write the timed runs as a Chrome / Perfetto trace (JSON\n"
      "                    trace events; open in ui.perfetto.dev or chrome://tracing):\n"
      "                    per iteration the host steps \"set inputs\", \"run\" and\n"
      "                    \"get outputs\" (process 1, host), and one span per kernel\n"
      "                    named after the graph nodes it runs (process 2, the\n"
      "                    device). On the cpu a kernel's span is measured around\n"
      "                    its node (nodes fused into one kernel share it, joined\n"
      "                    by '+'); on a GPU its duration is the device time of\n"
      "                    timestamp queries, laid end to end from the start of\n"
      "                    the host's run span (the device clock is not the host's)\n"
      "  --threads N       CPU threads of the kernels (1..64, default 1)\n"
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

/* Makes synthetic inputs at symbol value `batch` (or the --dim values):
 * tensors[i] for input i, data malloc'd (free_inputs). */
static dml_status_t make_inputs(const dml_rt_model_t *m, long batch, const dim_vals_t *dv,
                                dml_tensor_t *tensors) {
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (uint32_t i = 0; i < dml_rt_model_num_inputs(m); i++) {
    dml_rt_io_info_t io;
    DML_RETURN_IF_ERROR(dml_rt_model_input_info(m, i, &io));
    dml_tensor_t *t = &tensors[i];
    memset(t, 0, sizeof *t);
    t->dtype = io.dtype;
    t->rank = io.rank;
    for (int32_t d = 0; d < io.rank; d++)
      t->dims[d] = io.dim_symbol[d]
                       ? io.dim_multiplier[d] * sym_value(dv, io.dim_symbol[d], batch)
                       : io.dims[d];
    size_t nb = dml_tensor_bytes(t);
    if (nb == SIZE_MAX)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "dmlc.bench",
                             "input too large");
    t->data = calloc(1, nb ? nb : 1);
    if (!t->data)
      return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "dmlc.bench",
                             "out of memory");
    if (t->dtype == DML_DTYPE_F32)
      for (size_t k = 0; k < nb / 4; k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        ((float *)t->data)[k] =
            (float)((double)(x >> 11) / 9007199254740992.0 * 2.0 - 1.0);
      }
  }
  return DML_OK;
}

static dml_status_t set_inputs(dml_rt_session_t *s, uint32_t n, const dml_tensor_t *t) {
  for (uint32_t i = 0; i < n; i++)
    DML_RETURN_IF_ERROR(dml_rt_session_set_input(s, i, &t[i]));
  return DML_OK;
}

static dml_status_t get_outputs(dml_rt_session_t *s) {
  for (uint32_t i = 0; i < dml_rt_session_num_outputs(s); i++) {
    dml_tensor_t o;
    DML_RETURN_IF_ERROR(dml_rt_session_get_output(s, i, &o));
  }
  return DML_OK;
}

/* ---- --trace: Chrome / Perfetto trace events ---- */

typedef struct trace {
  FILE *f; /* an open_memstream of the events */
  char *buf;
  size_t len;
  int n_events;
  double t0_ms; /* time 0 of the trace */
} trace_t;

/* The name of the nodes `nodes[0..n-1]`: their names joined by '+' (a
 * node without one as OP#INDEX), and their ops likewise into `ops`. */
static void node_names(const dml_rt_model_t *m, const uint32_t *nodes, uint32_t n,
                       char *name, size_t cap, char *ops, size_t ops_cap) {
  size_t w = 0, wo = 0;
  name[0] = ops[0] = 0;
  for (uint32_t j = 0; j < n; j++) {
    dml_rt_node_info_t ni;
    dml_status_t st = dml_rt_model_node_info(m, nodes[j], &ni);
    if (st) {
      dml_status_free(st);
      continue;
    }
    if (w < cap) {
      if (ni.name[0])
        w += (size_t)snprintf(name + w, cap - w, "%s%s", w ? "+" : "", ni.name);
      else
        w += (size_t)snprintf(name + w, cap - w, "%s%s#%u", w ? "+" : "", ni.op_name,
                              nodes[j]);
    }
    if (wo < ops_cap)
      wo += (size_t)snprintf(ops + wo, ops_cap - wo, "%s%s", wo ? "," : "", ni.op_name);
  }
}

/* One complete ("X") event: `ts_ms` and `dur_ms` on the bench's clock. */
static void trace_span(trace_t *t, const char *name, const char *cat, int pid, int tid,
                       double ts_ms, double dur_ms, long iteration, const char *ops,
                       const char *kernel) {
  FILE *f = t->f;
  fputs(t->n_events++ ? ",\n{\"name\": " : "{\"name\": ", f);
  dmlc_json_str(f, name);
  fprintf(f,
          ", \"cat\": \"%s\", \"ph\": \"X\", \"pid\": %d, \"tid\": %d, \"ts\": %.3f, "
          "\"dur\": %.3f, \"args\": {\"iteration\": %ld",
          cat, pid, tid, (ts_ms - t->t0_ms) * 1e3, dur_ms * 1e3, iteration);
  if (ops) {
    fputs(", \"ops\": ", f);
    dmlc_json_str(f, ops);
  }
  if (kernel) {
    fputs(", \"kernel\": ", f);
    dmlc_json_str(f, kernel);
  }
  fputs("}}", f);
}

/* A metadata ("M") event naming process `pid` (tid 0) or its thread. */
static void trace_meta(trace_t *t, const char *what, int pid, int tid, const char *name) {
  fputs(t->n_events++ ? ",\n{\"name\": " : "{\"name\": ", t->f);
  fprintf(t->f,
          "\"%s\", \"ph\": \"M\", \"pid\": %d, \"tid\": %d, \"args\": {\"name\": ", what,
          pid, tid);
  dmlc_json_str(t->f, name);
  fputs("}}", t->f);
}

/* The kernel spans of the last run, whose host span began at run_ms. */
static dml_status_t trace_kernels(trace_t *t, const dml_rt_model_t *m,
                                  const dml_rt_session_t *s, long iteration,
                                  double run_ms, int *no_time) {
  char name[1024], ops[512];
  uint32_t nk = dml_rt_session_num_kernels(s);
  double at = run_ms;
  for (uint32_t k = 0; k < nk; k++) {
    dml_rt_kernel_info_t ki;
    DML_RETURN_IF_ERROR(dml_rt_session_kernel_info(s, k, &ki));
    if (ki.ms < 0) {
      *no_time = 1;
      continue;
    }
    node_names(m, ki.nodes, ki.n_nodes, name, sizeof name, ops, sizeof ops);
    trace_span(t, name, "kernel", 2, 1, at, ki.ms, iteration, ops, ki.name);
    at += ki.ms;
  }
  if (nk) return DML_OK;
  /* cpu: the nodes' own spans; consecutive equal spans are one kernel */
  uint32_t nn = dml_rt_model_num_nodes(m), nodes[64];
  for (uint32_t k = 0; k < nn;) {
    uint64_t a, b, a2, b2;
    DML_RETURN_IF_ERROR(dml_rt_session_node_time(s, k, &a, &b));
    uint32_t n = 0;
    nodes[n++] = k++;
    while (k < nn && n < 64 && !dml_rt_session_node_time(s, k, &a2, &b2) && a2 == a &&
           b2 == b && a)
      nodes[n++] = k++;
    if (!a) continue; /* a view: no kernel */
    node_names(m, nodes, n, name, sizeof name, ops, sizeof ops);
    trace_span(t, name, "kernel", 2, 1, (double)a / 1e6, (double)(b - a) / 1e6, iteration,
               ops, NULL);
  }
  return DML_OK;
}

int dmlc_cmd_bench(int argc, char **argv) {
  const char *pkg = NULL, *device = "cpu", *trace_path = NULL;
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
    } else if (!strcmp(a, "--trace") && v) {
      trace_path = v, i++;
    } else if (!strcmp(a, "--threads") && v) {
      if (!dmlc_set_threads("bench", v)) return 2;
      i++;
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
  if (trace_path &&
      (!*trace_path || !strcmp(trace_path, pkg) || dml_file_same(trace_path, pkg)))
    return dmlc_usage_error("bench", "--trace '%s' would overwrite the package",
                            trace_path);
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = NULL;
  double *t = (double *)calloc((size_t)iters, sizeof(double));
  double *kms = NULL;
  dml_tensor_t *inputs = NULL;
  uint32_t n_in = 0;
  trace_t tr;
  memset(&tr, 0, sizeof tr);
  int no_time = 0;
  dml_status_t st =
      t ? dml_rt_model_load_file(pkg, &m)
        : dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "dmlc.bench", "oom");
  if (!st) {
    n_in = dml_rt_model_num_inputs(m);
    inputs = (dml_tensor_t *)calloc(n_in + 1, sizeof *inputs);
    if (!inputs) st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "dmlc.bench", "oom");
  }
  if (!st) st = dml_rt_session_create(m, device, &s);
  if (!st && dml_rt_session_fallback(s)) /* the CPU fall-back, said once */
    fprintf(stderr, "note: %s\n", dml_rt_session_fallback(s));
  if (!st) dmlc_regions_note(s); /* If/Loop regions on the CPU of a GPU session */
  if (!st) st = make_inputs(m, batch, &dv, inputs);
  if (!st) st = set_inputs(s, n_in, inputs);
  for (long i = 0; !st && i < warmup; i++) st = dml_rt_session_run(s);
  uint32_t nk = s ? dml_rt_session_num_kernels(s) : 0;
  if (!st) {
    kms = (double *)calloc(nk + 1, sizeof(double));
    if (!kms) st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "dmlc.bench", "oom");
  }
  if (!st && trace_path) {
    if (!nk) st = dml_rt_session_set_profiling(s, 1);
    if (!st && !(tr.f = open_memstream(&tr.buf, &tr.len)))
      st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "dmlc.bench", "oom");
    if (!st) {
      tr.t0_ms = now_ms();
      fputs("{\"traceEvents\": [\n", tr.f);
      trace_meta(&tr, "process_name", 1, 0, "host (dmlc bench)");
      trace_meta(&tr, "thread_name", 1, 1, "main thread");
      trace_meta(&tr, "process_name", 2, 0, dml_rt_session_device(s));
      trace_meta(&tr, "thread_name", 2, 1,
                 nk ? "queue (device time, timestamp queries)"
                    : "kernels (on the calling thread)");
    }
  }
  for (long i = 0; !st && i < iters; i++) {
    double t0 = now_ms();
    if (trace_path) {
      st = set_inputs(s, n_in, inputs);
      double t1 = now_ms();
      if (!st) trace_span(&tr, "set inputs", "host", 1, 1, t0, t1 - t0, i, NULL, NULL);
      t0 = t1;
    }
    if (!st) st = dml_rt_session_run(s);
    t[i] = now_ms() - t0;
    if (!st && trace_path) {
      trace_span(&tr, "run", "host", 1, 1, t0, t[i], i, NULL, NULL);
      st = trace_kernels(&tr, m, s, i, t0, &no_time);
      double t1 = now_ms();
      if (!st) st = get_outputs(s);
      if (!st)
        trace_span(&tr, "get outputs", "host", 1, 1, t1, now_ms() - t1, i, NULL, NULL);
    }
    for (uint32_t k = 0; !st && k < nk; k++) {
      dml_rt_kernel_info_t ki;
      st = dml_rt_session_kernel_info(s, k, &ki);
      if (!st) kms[k] += ki.ms / (double)iters;
    }
  }
  if (!st && trace_path) {
    fputs("\n], \"displayTimeUnit\": \"ms\", \"otherData\": {\"package\": ", tr.f);
    dmlc_json_str(tr.f, pkg);
    fputs(", \"device\": ", tr.f);
    dmlc_json_str(tr.f, dml_rt_session_device(s));
    fprintf(tr.f, ", \"iterations\": %ld, \"batch\": %ld}}\n", iters, batch);
  }
  if (tr.f && fclose(tr.f) && !st)
    st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "dmlc.bench", "oom");
  if (!st && trace_path) {
    const void *parts[1] = {tr.buf};
    size_t sizes[1] = {tr.len};
    st = dml_file_write_atomic("dmlc.bench", trace_path, parts, sizes, 1);
    if (!st)
      fprintf(stderr, "wrote %s (%d trace events)%s\n", trace_path, tr.n_events,
              no_time ? "; the device reported no kernel times (no timestamp queries): "
                        "host spans only"
                      : "");
  }
  free(tr.buf);
  for (uint32_t i = 0; inputs && i < n_in; i++) free(inputs[i].data);
  free(inputs);
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
    printf("{\"package\": ");
    dmlc_json_str(stdout, pkg);
    printf(", \"device\": ");
    dmlc_json_str(stdout, dev);
    printf(
        ", \"batch\": %ld, \"iterations\": %ld, \"warmup\": %ld, \"min_ms\": %.6f, "
        "\"median_ms\": %.6f, \"max_ms\": %.6f, \"kernels\": [",
        batch, iters, warmup, t[0], med, t[iters - 1]);
  } else {
    printf("%s on %s, batch %ld: %ld runs after %ld warm-up\n", pkg, dev, batch, iters,
           warmup);
    printf("end to end: min %.4f ms, median %.4f ms, max %.4f ms\n", t[0], med,
           t[iters - 1]);
    if (nk)
      printf("%-20s %10s %10s %10s %7s  nodes\n", "kernel", "ms", "GFLOP/s", "GB/s",
             "share");
    else
      printf(
          "(per-kernel times are reported for GPU devices; on the cpu --trace FILE "
          "records each node's)\n");
  }
  for (uint32_t k = 0; k < nk; k++) {
    dml_rt_kernel_info_t ki;
    dml_status_t kst = dml_rt_session_kernel_info(s, k, &ki);
    if (kst) {
      dml_status_free(kst);
      continue;
    }
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
    if (json) {
      printf("%s{\"name\": ", k ? ", " : "");
      dmlc_json_str(stdout, ki.name);
      printf(", \"nodes\": ");
      dmlc_json_str(stdout, nodes);
      printf(", \"ms\": %.6f, \"gflops\": %.3f, \"gbs\": %.3f, \"share\": %.4f}", ms,
             gflops, gbs, med > 0 ? ms / med : 0);
    } else
      printf("%-20s %10.4f %10.2f %10.2f %6.1f%%  %s\n", ki.name, ms, gflops, gbs,
             med > 0 ? 100.0 * ms / med : 0.0, nodes);
  }
  if (json) {
    printf("], \"regions\": ");
    dmlc_regions_json(stdout, s);
    printf("}\n");
  } else {
    dmlc_regions_text(stdout, s, 0, 0);
  }
  free(t);
  free(kms);
  dml_rt_session_release(s);
  dml_rt_model_release(m);
  return 0;
}
