/* everyop_check.c — dml_everyop_check: runs on a device the cases of the
 * every-op differential test that `dml_every_op --pack DIR --target T`
 * compiled on the build machine (tests/check/every_op.c; issue 15 item 4),
 * each against the CPU with dml_rt_check, and prints the counts
 * `dml_every_op --device T` prints. Links the runtime only, so a GPU
 * machine's runtime-only build has it (scripts/gpu_check.sh).
 *
 *   dml_everyop_check DIR [--device cuda[:N]|vulkan[:N]] [--seconds S]
 *                     [--json FILE] [-v]
 *
 * DIR/cases.tsv (columns: tests/check/every_op_check.h) lists every case:
 * "packed" ones are loaded from DIR/<package> and checked on the device
 * (default cuda) by dml_rt_check with the pack's seed, one iteration of
 * random and edge inputs, the op's tolerance class (every_op_check.h's
 * eo_check_model, as dml_every_op does); a case with a known-failure
 * reason must fail (passing is a failure: the list is out of date).
 * "refused" (the target refused the form), "not_allowed" (the compiler
 * refuses the dtype) and "known" (a known failure that failed to compile)
 * are counted as listed; "fail" (a compile error on the build machine) is a
 * failure. The counts of ops and of the CPU's f32 against f64 are the build
 * machine's (the header). --seconds S stops starting cases after S seconds
 * (those left are counted as not run, not as failures; the counts then
 * fall short of dml_every_op's). --json FILE writes the counts and every
 * failure and known failure with its op, dtype and shape (reproduce on the
 * build machine with `dml_every_op --only OP -v`, or with `dmlc check
 * DIR/<package> --device D`).
 * Exit status: 0 when every case checked agreed, 1 on a disagreement (or a
 * build-machine failure), 2 on a usage or file error, 77 when the device is
 * absent or is the CPU (the reference itself). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/every_op_check.h"
#include "dml_rt.h"
#include "gpu_check_util.h"

#define EC_MAX_LIST 400

/* A failure or a known failure, for the JSON. */
typedef struct {
  char op[48], dtype[8], shape[16], why[384];
} ec_item_t;

static ec_item_t g_fail[EC_MAX_LIST], g_known[EC_MAX_LIST];
static int g_n_fail, g_n_known, g_dropped;

static void add_item(ec_item_t *list, int *n, const char *op, const char *dtype,
                     const char *shape, const char *why) {
  if (*n == EC_MAX_LIST) {
    g_dropped++;
    return;
  }
  ec_item_t *it = &list[(*n)++];
  snprintf(it->op, sizeof it->op, "%s", op);
  snprintf(it->dtype, sizeof it->dtype, "%s", dtype);
  snprintf(it->shape, sizeof it->shape, "%s", shape);
  snprintf(it->why, sizeof it->why, "%s", why);
}

static void json_items(FILE *f, const char *key, const ec_item_t *list, int n) {
  fprintf(f, ",\n \"%s\": [", key);
  for (int i = 0; i < n; i++) {
    fprintf(f, "%s\n  {\"op\": ", i ? "," : "");
    json_str(f, list[i].op);
    fprintf(f, ", \"dtype\": ");
    json_str(f, list[i].dtype);
    fprintf(f, ", \"shape\": ");
    json_str(f, list[i].shape);
    fprintf(f, ", \"why\": ");
    json_str(f, list[i].why);
    fputc('}', f);
  }
  fprintf(f, "%s]", n ? "\n " : "");
}

/* Splits `line` at tabs into at most `max` fields; returns their count. */
static int split_tabs(char *line, char **f, int max) {
  int n = 0;
  for (char *p = line; n < max;) {
    f[n++] = p;
    char *t = strchr(p, '\t');
    if (!t) break;
    *t = 0;
    p = t + 1;
  }
  return n;
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
    fprintf(stderr,
            "usage: dml_everyop_check DIR [--device cuda[:N]|vulkan[:N]] [--seconds S] "
            "[--json FILE] [-v]\n");
    return 2;
  }
  char name[512], path[4096], line[4096];
  if (device_name(device, name, sizeof name)) {
    printf("SKIP: no %s device: %s\n", device, name);
    return 77;
  }
  if (!strcmp(name, "cpu")) {
    printf("SKIP: --device %s: the CPU is the reference the cases are checked against\n",
           device);
    return 77;
  }
  printf("device: %s\n", name);
  snprintf(path, sizeof path, "%s/cases.tsv", dir);
  FILE *list = fopen(path, "r");
  if (!list) {
    printf("dml_everyop_check: cannot open %s (made by dml_every_op --pack)\n", path);
    return 2;
  }
  eo_counts_t c;
  memset(&c, 0, sizeof c);
  char target[32] = "", header[512] = "";
  unsigned long long seed = 0;
  int have_ops = 0, have_end = 0, n_end = -1, n_lines = 0, checked = 0, not_run = 0,
      bad_line = 0;
  double t0 = now_s();
  while (fgets(line, sizeof line, list)) {
    line[strcspn(line, "\r\n")] = 0;
    if (line[0] == '#') {
      if (!header[0]) snprintf(header, sizeof header, "%.500s", line + 2);
      if (sscanf(line, "# target %31s", target) == 1) continue;
      if (sscanf(line, "# seed %llu", &seed) == 1) continue;
      if (sscanf(line, "# ops %d %d", &c.n_ops, &c.n_covered) == 2) have_ops = 1;
      if (sscanf(line, "# cpu_f64 %d %d", &c.n_f64, &c.n_f64_fail) == 2) have_ops++;
      if (sscanf(line, "# end %d", &n_end) == 1) have_end = 1;
      continue;
    }
    char *f[11];
    if (!line[0]) continue;
    if (split_tabs(line, f, 11) != 11) {
      printf("%s: a line without the 11 columns of every_op_check.h\n", path);
      bad_line = 1;
      break;
    }
    n_lines++;
    const char *status = f[1], *op = f[2], *dt = f[3], *shape = f[4];
    const char *known = strcmp(f[8], "-") ? f[8] : NULL;
    if (!strcmp(status, "not_allowed")) {
      c.n_notallowed++;
    } else if (!strcmp(status, "refused")) {
      c.n_refused++;
      if (verbose) printf("  %s %s %s: refused: %s\n", op, dt, shape, f[10]);
    } else if (!strcmp(status, "known")) {
      c.n_known++;
      add_item(g_known, &g_n_known, op, dt, shape, f[10]);
      if (verbose) printf("  known %s %s %s: %s\n", op, dt, shape, known ? known : "");
    } else if (!strcmp(status, "fail")) {
      char why[600];
      c.n_fail++;
      snprintf(why, sizeof why, "compile for cpu,%s on the build machine: %.500s", target,
               f[10]);
      printf("FAIL %s %s %s: %s\n", op, dt, shape, why);
      add_item(g_fail, &g_n_fail, op, dt, shape, why);
    } else if (!strcmp(status, "packed")) {
      c.n_compiled++;
      if (seconds > 0 && now_s() - t0 > seconds) {
        not_run++;
        continue;
      }
      checked++;
      char what[512] = "";
      int passed = 0;
      dml_rt_model_t *m = NULL;
      snprintf(path, sizeof path, "%s/%s", dir, f[9]);
      dml_status_t s = dml_rt_model_load_file(path, &m);
      if (s)
        status_text(s, "load", what, sizeof what);
      else
        passed = eo_check_model(m, device, seed, what, sizeof what);
      dml_rt_model_release(m);
      int nk = c.n_known;
      if (eo_count_checked(&c, passed, known, op, dt, shape, device, what, verbose))
        add_item(g_fail, &g_n_fail, op, dt, shape,
                 known ? "listed as a known failure but passes" : what);
      else if (c.n_known > nk)
        add_item(g_known, &g_n_known, op, dt, shape, what);
    } else {
      printf("%s: unknown status '%s'\n", path, status);
      bad_line = 1;
      break;
    }
  }
  fclose(list);
  if (!bad_line && (have_ops != 2 || !have_end || n_end != n_lines)) {
    printf(
        "%s/cases.tsv: incomplete (%d cases, the end line says %d): was the pack cut "
        "short?\n",
        dir, n_lines, n_end);
    bad_line = 1;
  }
  if (bad_line) return 2;
  if (strncmp(device, target, strlen(target)))
    printf("warning: the cases were compiled for cpu,%s, checked on %s\n", target,
           device);
  double dt = now_s() - t0;
  eo_print_counts(&c, device, "");
  printf(
      "everyop_check %s on %s: %d cases listed, %d packed, %d checked, %d not run "
      "(--seconds); cpu f32 vs f64 counted on the build machine (%.1f s)\n",
      dir, name, n_lines, c.n_compiled, checked, not_run, dt);
  if (json) {
    FILE *fj = fopen(json, "w");
    if (!fj) {
      printf("dml_everyop_check: cannot write %s\n", json);
      return 2;
    }
    fprintf(fj, "{\n \"device\": ");
    json_str(fj, name);
    fprintf(fj, ",\n \"device_arg\": ");
    json_str(fj, device);
    fprintf(fj, ",\n \"target\": ");
    json_str(fj, target);
    fprintf(fj, ",\n \"packed_by\": ");
    json_str(fj, header);
    fprintf(fj,
            ",\n \"seed\": %llu,\n \"ops\": %d,\n \"covered\": %d,\n \"listed\": %d,\n"
            " \"compiled\": %d,\n \"checked\": %d,\n \"not_run\": %d,\n \"passed\": %d,\n"
            " \"known_failures\": %d,\n \"failed\": %d,\n \"refused_by_target\": %d,\n"
            " \"no_device_kernel\": %d,\n"
            " \"not_allowed\": %d,\n \"cpu_f64_ops\": %d,\n \"cpu_f64_failed\": %d,\n"
            " \"seconds\": %.1f,\n \"items_not_listed\": %d",
            seed, c.n_ops, c.n_covered, n_lines, c.n_compiled, checked, not_run, c.n_pass,
            c.n_known, c.n_fail, c.n_refused, c.n_nokernel, c.n_notallowed, c.n_f64,
            c.n_f64_fail, dt, g_dropped);
    json_items(fj, "failures", g_fail, g_n_fail);
    json_items(fj, "known", g_known, g_n_known);
    fprintf(fj, "\n}\n");
    if (fclose(fj)) {
      printf("dml_everyop_check: cannot write %s\n", json);
      return 2;
    }
  }
  return c.n_fail || c.n_f64_fail ? 1 : 0;
}
