/* graphs_check.c — dml_graphs_check: runs the random graphs that
 * `dml_graphgen --pack` compiled on the build machine (tests/vulkan/graphgen.c)
 * on a device and compares them with the CPU. Links the runtime only, so a
 * GPU machine's runtime-only build has it (scripts/gpu_check.sh).
 *
 *   dml_graphs_check DIR [--device cuda[:N]|vulkan[:N]|cpu] [--seconds S]
 *                    [--json FILE] [-v]
 *
 * For each "<seed> packed <runs> <outputs> <nodes> <saved>" line of
 * DIR/graphs.txt it
 * loads DIR/graphgen_<seed>.dmlpkg, opens a session on the CPU and on the
 * device (default cuda), feeds both tests/graphgen_io.h's inputs of each run
 * (batch 1, batch 3; the symbols at their bounds when a graph has several)
 * and compares every output three ways, norm-wise (gg_out_err: max |a - b| /
 * max(1, max |b|), NaN and infinities where b has them) within GG_TOL = 1e-4:
 * the device against the CPU outputs saved on the build machine
 * (DIR/graphgen_<seed>.r<run>.o<k>.npy, for the first <saved> runs), the CPU
 * here against them (the two machines' CPU kernels, and the inputs'
 * agreement), and the device against the CPU here (every run). "<seed> fail <why>" lines
 * (the graph failed on the build machine: a compile error other than the target refusing
 * an op, or the CPU's run) count as failures too; "refused" ones are counted. --device
 * cpu checks the saved outputs alone (a stand-in run without a GPU).
 * --seconds S stops starting graphs after S seconds (those left are counted
 * as not run, not as failures). --json FILE writes the counts, the worst
 * errors and every failure with its seed (reproduce on the build machine
 * with `dml_graphgen --seeds S:S+1 -v -v`, or its package here).
 * Exit status: 0 when every graph checked agreed, 1 on a disagreement, 2 on
 * a usage or file error, 77 when the device is absent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_npy.h"
#include "dml_rt.h"
#include "gpu_check_util.h"
#include "graphgen_io.h"

#define GC_MAX_FAIL 200

typedef struct {
  unsigned long long seed;
  char why[384];
} gc_fail_t;

static gc_fail_t g_fail[GC_MAX_FAIL];
static int g_n_fail, g_fails_dropped;
static double g_worst_dev_saved, g_worst_cpu_saved, g_worst_dev_cpu;

static void add_fail(unsigned long long seed, const char *why) {
  printf("seed %llu: FAIL: %s\n", seed, why);
  if (g_n_fail == GC_MAX_FAIL) {
    g_fails_dropped++;
    return;
  }
  g_fail[g_n_fail].seed = seed;
  snprintf(g_fail[g_n_fail].why, sizeof g_fail[g_n_fail].why, "%s", why);
  g_n_fail++;
}

static void worst(double *w, double e) {
  if (e > *w) *w = e;
}

/* One packed graph; 0 when it agrees, else 1 (recorded). */
static int check_graph(const char *dir, unsigned long long seed, int runs, int ref_runs,
                       uint32_t outs, const char *device, int verbose) {
  char path[2048], why[512] = "";
  snprintf(path, sizeof path, "%s/graphgen_%llu.dmlpkg", dir, seed);
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *cpu = NULL, *dev = NULL;
  int on_cpu = !strcmp(device, "cpu");
  dml_status_t s = dml_rt_model_load_file(path, &m);
  if (s) {
    status_text(s, "load", why, sizeof why);
    add_fail(seed, why);
    return 1;
  }
  if (dml_rt_model_num_outputs(m) != outs) {
    snprintf(why, sizeof why, "the package has %u outputs, graphs.txt says %u",
             dml_rt_model_num_outputs(m), outs);
    add_fail(seed, why);
    dml_rt_model_release(m);
    return 1;
  }
  s = dml_rt_session_create(m, "cpu", &cpu);
  if (s) {
    status_text(s, "session cpu", why, sizeof why);
  } else if (!on_cpu && (s = dml_rt_session_create(m, device, &dev))) {
    char stage[64];
    snprintf(stage, sizeof stage, "session %s", device);
    status_text(s, stage, why, sizeof why);
  }
  gg_syms_t syms;
  gg_syms_of(m, &syms);
  uint64_t rs = gg_input_stream(seed);
  double w = 0;
  int r = 0;
  for (; !why[0] && r < gg_max_runs(&syms); r++) {
    int any_sym = 0;
    dml_rt_session_clear_inputs(cpu);
    if (dev) dml_rt_session_clear_inputs(dev);
    for (uint32_t i = 0; !s && i < dml_rt_model_num_inputs(m); i++) {
      dml_tensor_t t;
      if (gg_input(m, i, r, &syms, &rs, &t, &any_sym)) {
        snprintf(why, sizeof why, "input %u: cannot make it", i);
        break;
      }
      s = dml_rt_session_set_input(cpu, i, &t);
      if (!s && dev) s = dml_rt_session_set_input(dev, i, &t);
      free(t.data);
    }
    if (r == 1 && !any_sym) break; /* one static batch */
    if (why[0]) break;
    if (s) {
      status_text(s, "set_input", why, sizeof why);
      break;
    }
    if (r >= runs) {
      snprintf(why, sizeof why, "run %d here, but only %d runs were packed", r, runs);
      break;
    }
    if ((s = dml_rt_session_run(cpu))) {
      status_text(s, "run cpu", why, sizeof why);
      break;
    }
    if (dev && (s = dml_rt_session_run(dev))) {
      char stage[64];
      snprintf(stage, sizeof stage, "run %s", device);
      status_text(s, stage, why, sizeof why);
      break;
    }
    char rn[64];
    gg_run_name(r, rn, sizeof rn);
    for (uint32_t k = 0; k < outs && !why[0]; k++) {
      dml_tensor_t c, d, ref;
      void *buf = NULL;
      memset(&c, 0, sizeof c);
      memset(&d, 0, sizeof d);
      memset(&ref, 0, sizeof ref);
      snprintf(path, sizeof path, "%s/graphgen_%llu.r%d.o%u.npy", dir, seed, r, k);
      if (r < ref_runs && (s = dml_npy_read_file(path, &ref, &buf))) {
        status_text(s, "saved output", why, sizeof why);
        break;
      }
      if ((s = dml_rt_session_get_output(cpu, k, &c)) ||
          (dev && (s = dml_rt_session_get_output(dev, k, &d)))) {
        status_text(s, "get_output", why, sizeof why);
        free(buf);
        break;
      }
      int saved = r < ref_runs;
      double e_cs = saved ? gg_out_err(&c, &ref) : 0;
      double e_ds = dev && saved ? gg_out_err(&d, &ref) : 0,
             e_dc = dev ? gg_out_err(&d, &c) : 0;
      worst(&g_worst_cpu_saved, e_cs);
      worst(&g_worst_dev_saved, e_ds);
      worst(&g_worst_dev_cpu, e_dc);
      worst(&w, e_ds), worst(&w, e_cs), worst(&w, e_dc);
      if (!(e_ds <= GG_TOL) || !(e_dc <= GG_TOL))
        snprintf(why, sizeof why,
                 "mismatch: output %u %s%s: %s vs the saved CPU outputs %.3g, vs the CPU "
                 "here %.3g",
                 k, r < 2 ? "at " : "with ", rn, device, e_ds, e_dc);
      else if (!(e_cs <= GG_TOL))
        snprintf(why, sizeof why,
                 "mismatch: output %u %s%s: the CPU here vs the saved CPU outputs %.3g",
                 k, r < 2 ? "at " : "with ", rn, e_cs);
      free(buf);
    }
  }
  if (!why[0] && r != runs) snprintf(why, sizeof why, "%d runs here, %d packed", r, runs);
  dml_rt_session_release(dev);
  dml_rt_session_release(cpu);
  dml_rt_model_release(m);
  if (why[0]) {
    add_fail(seed, why);
    return 1;
  }
  if (verbose) printf("seed %llu: pass (%.3g)\n", seed, w);
  return 0;
}

int main(int argc, char **argv) {
  const char *dir = NULL, *device = "cuda", *json = NULL;
  double seconds = 0;
  int verbose = 0;
  setvbuf(stdout, NULL, _IOLBF, 0);
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--device") && i + 1 < argc)
      device = argv[++i];
    else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
      seconds = atof(argv[++i]);
    else if (!strcmp(argv[i], "--json") && i + 1 < argc)
      json = argv[++i];
    else if (!strcmp(argv[i], "-v"))
      verbose = 1;
    else if (!dir && argv[i][0] != '-')
      dir = argv[i];
    else
      dir = NULL, i = argc;
  }
  if (!dir) {
    fprintf(
        stderr,
        "usage: dml_graphs_check DIR [--device cuda[:N]|vulkan[:N]|cpu] [--seconds S] "
        "[--json FILE] [-v]\n");
    return 2;
  }
  char name[512], path[2048];
  int dn = device_name(device, name, sizeof name);
  if (dn) {
    printf("SKIP: no %s device: %s\n", device, name);
    return 77;
  }
  printf("device: %s\n", name);
  snprintf(path, sizeof path, "%s/graphs.txt", dir);
  FILE *list = fopen(path, "r");
  if (!list) {
    printf("dml_graphs_check: cannot open %s (made by dml_graphgen --pack)\n", path);
    return 2;
  }
  char line[1024], header[1024] = "";
  int listed = 0, packed = 0, refused = 0, pack_failed = 0, checked = 0, failed = 0,
      not_run = 0;
  double t0 = now_s();
  while (fgets(line, sizeof line, list)) {
    line[strcspn(line, "\n")] = 0;
    if (line[0] == '#') {
      if (!header[0]) snprintf(header, sizeof header, "%s", line + 2);
      continue;
    }
    unsigned long long seed;
    char what[16];
    int off = 0;
    if (sscanf(line, "%llu %15s %n", &seed, what, &off) < 2) continue;
    listed++;
    if (!strcmp(what, "refused")) {
      refused++;
    } else if (!strcmp(what, "fail")) {
      char why[512];
      snprintf(why, sizeof why, "on the build machine: %s", line + off);
      add_fail(seed, why);
      pack_failed++;
    } else if (!strcmp(what, "packed")) {
      int runs = 0, nodes = 0, ref_runs = 0;
      unsigned outs = 0;
      packed++;
      if (sscanf(line + off, "%d %u %d %d", &runs, &outs, &nodes, &ref_runs) != 4) {
        add_fail(seed,
                 "graphs.txt: a packed line without <runs> <outputs> <nodes> <ref runs>");
        failed++;
        continue;
      }
      if (seconds > 0 && now_s() - t0 > seconds) {
        not_run++;
        continue;
      }
      checked++;
      failed += check_graph(dir, seed, runs, ref_runs, outs, device, verbose);
    }
  }
  fclose(list);
  double dt = now_s() - t0;
  printf(
      "graphs_check %s on %s: %d graphs listed, %d packed, %d checked: %d agree, %d "
      "disagree; %d failed on the build machine, %d refused by the target there, %d not "
      "run (--seconds); worst: %s vs saved CPU %.3g, CPU here vs saved %.3g (tolerance "
      "%g; %.1f s)\n",
      dir, device, listed, packed, checked, checked - failed, failed, pack_failed,
      refused, not_run, device, g_worst_dev_saved, g_worst_cpu_saved, GG_TOL, dt);
  if (json) {
    FILE *f = fopen(json, "w");
    if (!f) {
      printf("dml_graphs_check: cannot write %s\n", json);
      return 2;
    }
    fprintf(f, "{\n \"device\": ");
    json_str(f, name);
    fprintf(f, ",\n \"device_arg\": ");
    json_str(f, device);
    fprintf(f, ",\n \"packed_by\": ");
    json_str(f, header);
    fprintf(
        f,
        ",\n \"tolerance\": %g,\n \"listed\": %d,\n \"packed\": %d,\n \"checked\": %d,\n"
        " \"agree\": %d,\n \"disagree\": %d,\n \"failed_on_build_machine\": %d,\n"
        " \"refused_by_target\": %d,\n \"not_run\": %d,\n \"seconds\": %.1f,\n"
        " \"worst_device_vs_saved_cpu\": %.3g,\n \"worst_cpu_vs_saved_cpu\": %.3g,\n"
        " \"worst_device_vs_cpu\": %.3g,\n \"failures_not_listed\": %d,\n \"failures\": "
        "[",
        GG_TOL, listed, packed, checked, checked - failed, failed, pack_failed, refused,
        not_run, dt, g_worst_dev_saved, g_worst_cpu_saved, g_worst_dev_cpu,
        g_fails_dropped);
    for (int i = 0; i < g_n_fail; i++) {
      fprintf(f, "%s\n  {\"seed\": %llu, \"why\": ", i ? "," : "", g_fail[i].seed);
      json_str(f, g_fail[i].why);
      fputc('}', f);
    }
    fprintf(f, "%s]\n}\n", g_n_fail ? "\n " : "");
    fclose(f);
  }
  return failed || pack_failed ? 1 : 0;
}
