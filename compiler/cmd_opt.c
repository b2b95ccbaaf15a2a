/*
 * cmd_opt.c — `dmlc opt`: run passes on a .dmlir file or an ONNX model and
 * print the resulting IR (MLIR's `mlir-opt`, for dmlc).
 *
 * The module goes to stdout (or -o FILE); IR dumps between passes go to
 * stderr, as in MLIR, so `dmlc opt x.dmlir --print-ir-after-all 2>&1 |
 * FileCheck` sees both in order.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_file.h"
#include "dml_ir_text.h"
#include "dml_onnx.h"
#include "dml_passes.h"
#include "dmlc_cmds.h"

#define OPT_DEFAULT_ELIDE 16

/* 1 when the comma-separated `list` holds the name s[0..len) (no
 * spaces: --print-ir-after and --pass-pipeline are written without). */
static int list_has(const char *list, const char *s, size_t len) {
  for (const char *p = list; p && *p;) {
    const char *e = strchr(p, ',');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (n == len && !memcmp(p, s, len)) return 1;
    p = e ? e + 1 : NULL;
  }
  return 0;
}

static void opt_usage(FILE *f) {
  fprintf(
      f,
      "usage: dmlc opt FILE.dmlir|MODEL.onnx|- [flags]\n"
      "       dmlc opt --list-passes\n"
      "\n"
      "Reads a module (textual IR, an ONNX model, or IR text on stdin for '-'),\n"
      "runs a pass pipeline on it and prints the resulting module to stdout.\n"
      "\n"
      "flags:\n"
      "  --pass-pipeline=LIST   comma-separated passes to run in order, e.g.\n"
      "                         'shape-infer,const-fold,dce'; 'default' is the\n"
      "                         compile pipeline (%s).\n"
      "                         Without this flag: no passes for IR text (parse,\n"
      "                         verify, print) and 'shape-infer' for ONNX models.\n"
      "  --print-ir-after=NAME  print the module to stderr after each run of pass\n"
      "                         NAME (a comma-separated list names several)\n"
      "  --print-ir-after-all   print the module to stderr after every pass\n"
      "  --precision f16|bf16   the dtype the precision pass stores in (without it\n"
      "                         that pass changes nothing; dmlc compile --precision)\n"
      "  --list-passes          list the passes with a one-line summary and exit\n"
      "  --no-elide             print constants in full (default: constants of more\n"
      "                         than %d elements print as dense<elided>)\n"
      "  --batch-bound N        upper bound of every symbolic dim: for ONNX models\n"
      "                         the bound given to each dim_param (default 64); for\n"
      "                         IR text it replaces the bound of every `sym`\n"
      "  --no-verify-each       do not verify the module after every pass (verifying\n"
      "                         is on by default; the input is always verified)\n"
      "  --print-locations      print node names as loc(\"name\")\n"
      "  -o FILE                write the module to FILE instead of stdout\n"
      "  -h, --help             show this help\n"
      "\n"
      "Errors print as 'error: <op>: <reason>' with details; exit status 1 on an\n"
      "error, 2 on a usage error.\n",
      dml_pass_default_pipeline(), OPT_DEFAULT_ELIDE);
}

static void list_passes(FILE *f) {
  size_t n = 0;
  const dml_pass_info_t *p = dml_pass_list(&n);
  for (size_t i = 0; i < n; i++) fprintf(f, "  %-12s %s\n", p[i].name, p[i].summary);
}

static int usage_error(const char *fmt, const char *arg) {
  char msg[512];
  snprintf(msg, sizeof msg, fmt, arg);
  return dmlc_usage_error("opt", "%s", msg);
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Reads all of stdin into a malloc'd buffer. */
static dml_status_t read_stdin(char **out_text, size_t *out_len) {
  size_t cap = 1 << 16, len = 0;
  char *buf = (char *)malloc(cap);
  if (!buf) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "opt", "out of memory");
  for (;;) {
    if (len == cap) {
      char *nb = (char *)realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "opt", "out of memory");
      }
      buf = nb;
      cap *= 2;
    }
    size_t k = fread(buf + len, 1, cap - len, stdin);
    len += k;
    if (k == 0) break;
  }
  if (ferror(stdin)) {
    free(buf);
    return dml_status_make(DML_STATUS_IO, "opt", "cannot read stdin");
  }
  *out_text = buf;
  *out_len = len;
  return DML_OK;
}

static dml_status_t load_module(const char *path, int64_t batch_bound,
                                dml_ir_module_t **out_module) {
  dml_ir_module_t *m = NULL;
  if (ends_with(path, ".onnx")) {
    dml_onnx_import_options_t io;
    memset(&io, 0, sizeof(io));
    io.batch_bound = batch_bound > 0 ? batch_bound : 0;
    DML_RETURN_IF_ERROR(dml_onnx_import_file(path, &io, &m));
  } else {
    if (strcmp(path, "-") == 0) {
      char *text = NULL;
      size_t len = 0;
      DML_RETURN_IF_ERROR(read_stdin(&text, &len));
      dml_status_t s = dml_ir_parse(text, len, "<stdin>", &m);
      free(text);
      DML_RETURN_IF_ERROR(s);
    } else {
      DML_RETURN_IF_ERROR(dml_ir_parse_file(path, &m));
    }
    if (batch_bound > 0)
      for (uint32_t i = 0; i < m->n_symbols; i++)
        if (!(m->symbols[i].flags & DML_IR_SYMBOL_DERIVED))
          m->symbols[i].bound = batch_bound;
  }
  dml_status_t s = dml_ir_verify(m, 0);
  if (s) {
    dml_ir_module_release(m);
    return dml_status_annotate(s, "verifying '%s'", path);
  }
  *out_module = m;
  return DML_OK;
}

/* Parses N of "--flag N" or "--flag=N" into *out; 0 on a bad number. */
static int parse_bound(const char *s, int64_t *out) {
  char *end = NULL;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || !end || *end || end == s || v < 1) return 0;
  *out = (int64_t)v;
  return 1;
}

int dmlc_cmd_opt(int argc, char **argv) {
  const char *path = NULL, *pipeline = NULL, *out_path = NULL;
  int no_elide = 0, verify_each = 1, want_list = 0, locations = 0;
  int64_t batch_bound = 0;
  dml_pass_options_t po;
  memset(&po, 0, sizeof(po));

  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      opt_usage(stdout);
      return 0;
    } else if (!strncmp(a, "--pass-pipeline=", 16)) {
      pipeline = a + 16;
    } else if (!strcmp(a, "--pass-pipeline")) {
      if (++i >= argc) return usage_error("%s needs a value", a);
      pipeline = argv[i];
    } else if (!strncmp(a, "--print-ir-after=", 17)) {
      po.print_ir_after = a + 17;
    } else if (!strcmp(a, "--print-ir-after")) {
      if (++i >= argc) return usage_error("%s needs a pass name", a);
      po.print_ir_after = argv[i];
    } else if (!strcmp(a, "--print-ir-after-all")) {
      po.print_ir_after_all = 1;
    } else if (!strcmp(a, "--list-passes")) {
      want_list = 1;
    } else if (!strcmp(a, "--precision")) {
      if (++i >= argc) return usage_error("%s needs f16 or bf16", a);
      if (!strcmp(argv[i], "f16"))
        po.precision = DML_DTYPE_F16;
      else if (!strcmp(argv[i], "bf16"))
        po.precision = DML_DTYPE_BF16;
      else
        return usage_error("--precision needs f16 or bf16, got '%s'", argv[i]);
    } else if (!strcmp(a, "--no-elide")) {
      no_elide = 1;
    } else if (!strcmp(a, "--no-verify-each")) {
      verify_each = 0;
    } else if (!strcmp(a, "--print-locations")) {
      locations = 1;
    } else if (!strncmp(a, "--batch-bound=", 14)) {
      if (!parse_bound(a + 14, &batch_bound))
        return usage_error("--batch-bound needs an integer >= 1, got '%s'", a + 14);
    } else if (!strcmp(a, "--batch-bound")) {
      if (++i >= argc) return usage_error("%s needs a value", a);
      if (!parse_bound(argv[i], &batch_bound))
        return usage_error("--batch-bound needs an integer >= 1, got '%s'", argv[i]);
    } else if (!strcmp(a, "-o")) {
      if (++i >= argc) return usage_error("%s needs a file name", a);
      out_path = argv[i];
    } else if (a[0] == '-' && a[1] != 0) {
      return usage_error("unknown flag '%s'", a);
    } else if (path) {
      return usage_error("more than one input file ('%s')", a);
    } else {
      path = a;
    }
  }
  if (want_list) {
    printf("passes (in the order of the default pipeline):\n");
    list_passes(stdout);
    return 0;
  }
  if (!path)
    return dmlc_usage_error("opt", "no input given (a .dmlir file or an ONNX model)");
  /* One file by device and inode, not by spelling: -o over the input would
   * replace the model with its IR text. */
  if (out_path && (!strcmp(out_path, path) || dml_file_same(out_path, path)))
    return dmlc_usage_error("opt",
                            "the output '%s' is the input '%s' itself; choose another -o",
                            out_path, path);
  if (!pipeline) pipeline = ends_with(path, ".onnx") ? "shape-infer" : "";
  if (!strcmp(pipeline, "default")) pipeline = dml_pass_default_pipeline();
  /* --print-ir-after=NAME of a pass the pipeline does not run would print
   * nothing and exit 0: refuse it (an unknown name is left to the pass
   * manager's error, which lists the passes). */
  for (const char *p = po.print_ir_after; p && *p;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(len < 63 ? len : 63), p);
    if (len && len < 63 && dml_pass_find(name) && !list_has(pipeline, p, len))
      return dmlc_usage_error("opt",
                              "--print-ir-after=%.*s: pass '%.*s' is not in the pipeline "
                              "'%s' (add it with --pass-pipeline, e.g. "
                              "--pass-pipeline=default)",
                              (int)len, p, (int)len, p, pipeline);
    p = e ? e + 1 : NULL;
  }

  po.dump = stderr;
  po.dump_elide_elements_over = no_elide ? 0 : OPT_DEFAULT_ELIDE;
  po.verify_each = verify_each;

  dml_ir_module_t *m = NULL;
  dml_status_t s = load_module(path, batch_bound, &m);
  if (s) return dmlc_report(s);
  s = dml_pass_run_pipeline(m, pipeline, &po);
  if (s) {
    dml_ir_module_release(m);
    return dmlc_report(s);
  }

  /* -o FILE: the text is collected in memory and written atomically like
   * every dmlc output (dml_file_write_atomic: only a regular file is
   * replaced, keeping its mode). */
  FILE *out = stdout;
  char *text = NULL;
  size_t text_len = 0;
  if (out_path) {
    out = open_memstream(&text, &text_len);
    if (!out) {
      dml_ir_module_release(m);
      return dmlc_report(
          dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "opt", "out of memory"));
    }
  }
  dml_ir_print_options_t pr;
  memset(&pr, 0, sizeof(pr));
  pr.elide_elements_over = po.dump_elide_elements_over;
  pr.print_locations = locations;
  s = dml_ir_print_module(m, &pr, out);
  if (!s && fflush(out) != 0)
    s = dml_status_make(DML_STATUS_IO, "opt", "cannot write the module");
  if (out_path) {
    if (fclose(out) != 0 && !s)
      s = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "opt", "out of memory");
    const void *parts[1] = {text};
    if (!s) s = dml_file_write_atomic("opt", out_path, parts, &text_len, 1);
    free(text);
  }
  dml_ir_module_release(m);
  return s ? dmlc_report(s) : 0;
}
