/* main.c — `dmlc`: compile ONNX models into .dmlpkg packages and run them. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dmlc_cmds.h"
#ifdef DMLC_HAVE_CMD_COMPILE
#include "dml_driver.h"
#endif

typedef struct {
  const char *name;
  int (*fn)(int, char **);
  const char *summary;
} cmd_t;

static const cmd_t k_cmds[] = {
#ifdef DMLC_HAVE_CMD_COMPILE
    {"compile", dmlc_cmd_compile, "compile an ONNX model into a .dmlpkg package"},
#endif
#ifdef DMLC_HAVE_CMD_RUN
    {"run", dmlc_cmd_run, "run a package on .npy inputs, write .npy outputs"},
#endif
#ifdef DMLC_HAVE_CMD_OPT
    {"opt", dmlc_cmd_opt, "run passes on a .dmlir file or ONNX model and print the IR"},
#endif
#ifdef DMLC_HAVE_CMD_INSPECT
    {"inspect", dmlc_cmd_inspect,
     "show a package's sections, inputs/outputs and memory plan"},
#endif
#ifdef DMLC_HAVE_CMD_SUMMARY
    {"summary", dmlc_cmd_summary, "table of layers, output shapes and parameter counts"},
#endif
#ifdef DMLC_HAVE_CMD_BENCH
    {"bench", dmlc_cmd_bench, "time a package's runs and each GPU kernel on a device"},
#endif
#ifdef DMLC_HAVE_CMD_CHECK
    {"check", dmlc_cmd_check,
     "check a package's GPU kernels on a device against the CPU reference"},
#endif
#ifdef DMLC_HAVE_CMD_DEVICES
    {"devices", dmlc_cmd_devices,
     "list the devices (cpu, Vulkan, CUDA) sessions can run on"},
#endif
#ifdef DMLC_HAVE_CMD_SERVE
    {"serve", dmlc_cmd_serve, "serve a package over HTTP (KServe v2 protocol), batching"},
#endif
#ifdef DMLC_HAVE_CMD_TRAIN
    {"train", dmlc_cmd_train,
     "train an ONNX model on a data set, write the trained package"},
#endif
#ifdef DMLC_HAVE_CMD_EVAL
    {"eval", dmlc_cmd_eval,
     "average loss and accuracy of a trained package on a data set"},
#endif
#ifdef DMLC_HAVE_CMD_QUANTIZE
    {"quantize", dmlc_cmd_quantize,
     "int8 post-training quantization into a QDQ ONNX model or package"},
#endif
    {NULL, NULL, NULL},
};

/* `dmlc version`: version, git commit (at configure time), what this build
 * compiles for and runs on. */
static void print_version(void) {
  printf("dmlc %s\n", DMLC_VERSION);
  printf("commit: %s\n", DMLC_GIT_COMMIT);
#ifdef DMLC_HAVE_CMD_COMPILE
  printf("targets: %s\n", dml_compile_available_targets());
#else
  printf("targets: none (a runtime-only build: it runs packages compiled elsewhere)\n");
#endif
  printf("devices: %s (`dmlc devices` lists those present)\n", DMLC_DEVICES);
}

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: dmlc <command> [args]\n\n"
      "dmlc compiles ONNX models ahead of time into .dmlpkg packages and runs them.\n\n"
      "commands:\n");
  for (size_t i = 0; k_cmds[i].name; i++)
    fprintf(f, "  %-9s %s\n", k_cmds[i].name, k_cmds[i].summary);
  fprintf(f, "  %-9s %s\n", "version",
          "version, git commit, compiled targets and devices (also --version)");
  fprintf(f, "\n`dmlc <command> --help` describes each command's flags.\n");
}

int dmlc_report(dml_status_t status) {
  if (!status) return 0;
  char *msg = dml_status_format(status);
  fprintf(stderr, "%s\n", msg ? msg : "error: (out of memory formatting the error)");
  free(msg);
  dml_status_free(status);
  return 1;
}

int dmlc_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "error: dmlc%s%s: ", cmd ? " " : "", cmd ? cmd : "");
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n");
  return dmlc_usage_hint(cmd) + 1;
}

int dmlc_usage_hint(const char *cmd) {
  fprintf(stderr, "see 'dmlc%s%s --help' for the usage and flags\n", cmd ? " " : "",
          cmd ? cmd : "");
  return 1;
}

const char *dmlc_flag_value(int argc, char **argv, int *i, const char *flag) {
  size_t n = strlen(flag);
  if (strncmp(argv[*i], flag, n) != 0) return NULL;
  if (argv[*i][n] == '=') return argv[*i] + n + 1;
  if (argv[*i][n] != 0) return NULL;
  if (*i + 1 >= argc) return "";
  return argv[++*i];
}

int main(int argc, char **argv) {
  if (argc < 2) return dmlc_usage_error(NULL, "no command given");
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
    if (argc == 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
      printf(
          "usage: dmlc version   (or dmlc --version)\n\n"
          "Prints dmlc's version, the git commit it was configured from (at cmake\n"
          "time), the targets `dmlc compile` can emit and the devices its runtime\n"
          "has backends for.\n");
      return 0;
    }
    if (argc > 2) return dmlc_usage_error(NULL, "'%s' takes no arguments", argv[1]);
    print_version();
    return 0;
  }
  for (size_t i = 0; k_cmds[i].name; i++)
    if (!strcmp(argv[1], k_cmds[i].name)) return k_cmds[i].fn(argc - 1, argv + 1);
  static const char *const k_full_only[] = {"compile", "opt",   "summary", "train",
                                            "eval",    "serve", "quantize"};
  for (size_t i = 0; i < sizeof k_full_only / sizeof k_full_only[0]; i++)
    if (!strcmp(argv[1], k_full_only[i])) {
      fprintf(stderr,
              "error: dmlc: this dmlc has no '%s': it is a runtime-only build "
              "(-DDMLC_RUNTIME_ONLY=ON), which runs packages compiled elsewhere; "
              "use a full build for '%s'\n",
              argv[1], argv[1]);
      return 2;
    }
  return dmlc_usage_error(NULL, "unknown command '%s'", argv[1]);
}
