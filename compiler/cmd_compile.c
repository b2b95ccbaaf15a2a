/* cmd_compile.c — `dmlc compile MODEL.onnx -o OUT.dmlpkg [--target cpu] [--batch-bound
 * N]`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_driver.h"
#include "dmlc_cmds.h"

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: dmlc compile MODEL.onnx -o OUT.dmlpkg [--target cpu] [--batch-bound N]\n"
      "                    [--print-ir-after=PASS] [--print-ir-after-all]\n\n"
      "Compiles an ONNX model (opsets 1-17) into a .dmlpkg package: import, shape\n"
      "inference, constant folding, CSE, DCE, memory planning, then the package.\n\n"
      "  -o, --output FILE        the package to write (replaced atomically)\n"
      "  --target LIST            comma-separated targets; this version has: cpu\n"
      "  --batch-bound N          upper bound of symbolic dims such as the batch\n"
      "                           (default 64); any batch up to N runs without\n"
      "                           recompiling\n"
      "  --print-ir-after=PASS    dump the IR to stderr after PASS (see dmlc opt "
      "--list-passes)\n"
      "  --print-ir-after-all     dump the IR to stderr after every pass\n"
      "  -h, --help               this text\n");
}

/* Matches "--flag VALUE" and "--flag=VALUE"; advances *i. */
static const char *flag_value(int argc, char **argv, int *i, const char *flag) {
  size_t n = strlen(flag);
  if (strncmp(argv[*i], flag, n) != 0) return NULL;
  if (argv[*i][n] == '=') return argv[*i] + n + 1;
  if (argv[*i][n] == 0 && *i + 1 < argc) return argv[++*i];
  return NULL;
}

int dmlc_cmd_compile(int argc, char **argv) {
  const char *model = NULL, *out = NULL, *v;
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      return 0;
    } else if ((v = flag_value(argc, argv, &i, "-o")) ||
               (v = flag_value(argc, argv, &i, "--output"))) {
      out = v;
    } else if ((v = flag_value(argc, argv, &i, "--target"))) {
      o.targets = v;
    } else if ((v = flag_value(argc, argv, &i, "--batch-bound"))) {
      char *end;
      o.batch_bound = strtoll(v, &end, 10);
      if (*end || o.batch_bound < 1) {
        fprintf(stderr,
                "error: compile: --batch-bound needs a positive integer, got '%s'\n", v);
        return 2;
      }
    } else if ((v = flag_value(argc, argv, &i, "--print-ir-after"))) {
      o.print_ir_after = v;
    } else if (!strcmp(argv[i], "--print-ir-after-all")) {
      o.print_ir_after_all = 1;
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "error: compile: unknown or incomplete flag '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    } else if (!model) {
      model = argv[i];
    } else {
      fprintf(stderr, "error: compile: more than one model given ('%s', '%s')\n", model,
              argv[i]);
      return 2;
    }
  }
  if (!model || !out) {
    fprintf(stderr, "error: compile: %s\n",
            !model ? "no model given" : "no output given (-o)");
    usage(stderr);
    return 2;
  }
  /* The command line goes into the package's meta section. */
  char cmdline[1024];
  size_t k = (size_t)snprintf(cmdline, sizeof cmdline, "dmlc");
  for (int i = 0; i < argc && k < sizeof cmdline; i++)
    k += (size_t)snprintf(cmdline + k, sizeof cmdline - k, " %s", argv[i]);
  o.command_line = cmdline;

  dml_compile_report_t r;
  dml_status_t s = dml_compile_onnx_file(model, out, &o, &r);
  if (s) return dmlc_report(s);
  printf(
      "compiled %s -> %s: %u nodes, %u weights (%llu bytes), arena %lld bytes, "
      "package %llu bytes, %.1f ms\n",
      model, out, r.num_nodes, r.num_weights, (unsigned long long)r.weight_bytes,
      (long long)r.arena_bytes, (unsigned long long)r.package_bytes, r.compile_ms);
  return 0;
}
