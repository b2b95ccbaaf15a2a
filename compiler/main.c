/* main.c — `dmlc`: compile ONNX models into .dmlpkg packages and run them. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dml_cpu.h"
#include "dml_git_commit.h" /* DMLC_GIT_COMMIT, generated at build time */
#include "dml_rt.h"
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
#ifdef DMLC_HAVE_CMD_STRIP
    {"strip", dmlc_cmd_strip,
     "a trained package into an inference package (forward only, no optimizer state)"},
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
  printf("devices: %s (`dmlc devices` lists those present)\n", dml_rt_built_devices());
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

/* Length of the valid UTF-8 sequence at `p` (1..4), or 0 when it is not
 * one (overlong forms, surrogates and code points past U+10FFFF too). */
static int utf8_len(const unsigned char *p) {
  unsigned c = p[0];
  int n = c < 0xC2 ? 0 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : c < 0xF5 ? 4 : 0;
  for (int i = 1; i < n; i++)
    if ((p[i] & 0xC0) != 0x80) return 0;
  if (n == 3 && ((c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] >= 0xA0))) return 0;
  if (n == 4 && ((c == 0xF0 && p[1] < 0x90) || (c == 0xF4 && p[1] >= 0x90))) return 0;
  return n;
}

void dmlc_regions_note(const dml_rt_session_t *s) {
  uint32_t n = dml_rt_session_num_regions(s);
  for (uint32_t i = 0; i < n; i++) {
    dml_rt_region_info_t r;
    dml_status_t rst = dml_rt_session_region(s, i, &r);
    if (rst) {
      dml_status_free(rst);
      continue;
    }
    const char *why = dml_rt_session_fallback(r.session);
    if (why) fprintf(stderr, "note: node '%s' (%s) %s: %s\n", r.node, r.op, r.role, why);
    dmlc_regions_note(r.session);
  }
}

void dmlc_regions_json(FILE *f, const dml_rt_session_t *s) {
  uint32_t n = dml_rt_session_num_regions(s);
  fputc('[', f);
  for (uint32_t i = 0; i < n; i++) {
    dml_rt_region_info_t r;
    dml_status_t rst = dml_rt_session_region(s, i, &r);
    if (rst) {
      dml_status_free(rst);
      continue;
    }
    fputs(i ? ", {\"node\": " : "{\"node\": ", f);
    dmlc_json_str(f, r.node);
    fputs(", \"op\": ", f);
    dmlc_json_str(f, r.op);
    fputs(", \"role\": ", f);
    dmlc_json_str(f, r.role);
    fputs(", \"function\": ", f);
    dmlc_json_str(f, r.function);
    fputs(", \"device\": ", f);
    dmlc_json_str(f, dml_rt_session_device(r.session));
    fprintf(f, ", \"runs\": %" PRIu64 ", \"runs_total\": %" PRIu64 ", \"kernels\": [",
            r.runs, r.runs_total);
    uint32_t nk = dml_rt_session_num_kernels(r.session), w = 0;
    for (uint32_t k = 0; k < nk; k++) {
      dml_rt_kernel_info_t ki;
      dml_status_t kst = dml_rt_session_kernel_info(r.session, k, &ki);
      if (kst) { /* not run yet */
        dml_status_free(kst);
        continue;
      }
      fputs(w++ ? ", {\"name\": " : "{\"name\": ", f);
      dmlc_json_str(f, ki.name);
      fputs(", \"ms\": ", f);
      dmlc_json_num(f, ki.ms);
      fputc('}', f);
    }
    fputs("], \"regions\": ", f);
    dmlc_regions_json(f, r.session);
    fputc('}', f);
  }
  fputc(']', f);
}

void dmlc_regions_text(FILE *f, const dml_rt_session_t *s, int ran_only, int depth) {
  uint32_t n = dml_rt_session_num_regions(s);
  for (uint32_t i = 0; i < n; i++) {
    dml_rt_region_info_t r;
    dml_status_t rst = dml_rt_session_region(s, i, &r);
    if (rst) dml_status_free(rst);
    if (rst || (ran_only && !r.runs)) continue;
    uint32_t nk = dml_rt_session_num_kernels(r.session);
    fprintf(f,
            "%*sregion: node '%s' (%s) %s, function '%s', on %s: %" PRIu64
            " run(s) in the last run",
            2 * depth, "", r.node, r.op, r.role, r.function,
            dml_rt_session_device(r.session), r.runs);
    if (!nk) fputs(", no device kernels", f);
    for (uint32_t k = 0; k < nk; k++) {
      dml_rt_kernel_info_t ki;
      dml_status_t kst = dml_rt_session_kernel_info(r.session, k, &ki);
      if (kst) { /* not run yet */
        dml_status_free(kst);
        fprintf(f, ", %u kernel entries (not run yet)", nk);
        break;
      }
      fprintf(f, "%s%s", k ? ", " : ", kernels: ", ki.name);
    }
    fputc('\n', f);
    dmlc_regions_text(f, r.session, ran_only, depth + 1);
  }
}

void dmlc_json_str(FILE *f, const char *s) {
  if (!s) {
    fputs("null", f);
    return;
  }
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    unsigned c = *p;
    if (c == '"' || c == '\\') {
      fputc('\\', f), fputc((int)c, f), p++;
    } else if (c == '\n') {
      fputs("\\n", f), p++;
    } else if (c == '\t') {
      fputs("\\t", f), p++;
    } else if (c < 0x20 || c == 0x7F) {
      fprintf(f, "\\u%04x", c), p++;
    } else if (c < 0x80) {
      fputc((int)c, f), p++;
    } else {
      int n = utf8_len(p);
      if (n) {
        fwrite(p, 1, (size_t)n, f), p += n;
      } else {
        fputs("\\ufffd", f), p++;
      }
    }
  }
  fputc('"', f);
}

void dmlc_json_num(FILE *f, double v) {
  if (!isfinite(v)) {
    fputs("null", f);
    return;
  }
  char buf[40];
  snprintf(buf, sizeof buf, "%.15g", v);
  if (strtod(buf, NULL) != v) snprintf(buf, sizeof buf, "%.17g", v);
  fputs(buf, f);
}

FILE *dmlc_json_stdout(void) {
  fflush(stdout);
  int fd = dup(STDOUT_FILENO);
  if (fd < 0) return NULL;
  FILE *out = fdopen(fd, "w");
  if (!out || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    int e = errno;
    if (out)
      fclose(out);
    else
      close(fd);
    errno = e;
    return NULL;
  }
  setvbuf(stdout, NULL, _IOLBF, 0); /* lines in order with stderr's */
  return out;
}

int dmlc_set_threads(const char *cmd, const char *v) {
  char *end = NULL;
  long n = strtol(v, &end, 10);
  if (!*v || *end || n < 1 || n > 64) {
    dmlc_usage_error(cmd, "bad --threads '%s' (an integer in 1..64)", v);
    return 0;
  }
  dml_cpu_set_num_threads((int)n);
  return 1;
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
