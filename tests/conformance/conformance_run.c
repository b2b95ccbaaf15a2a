/*
 * conformance_run.c — dml_conformance_run: runs the ONNX backend tests that
 * `dml_conformance --emit DIR --target cpu,cuda` compiled elsewhere, with the
 * runtime alone (it builds with -DDMLC_RUNTIME_ONLY=ON: a GPU machine with
 * no compiler, no ONNX test data and no protobuf runs it), on a device, and
 * checks the results against a per-device expected-failure list.
 *
 *   dml_conformance_run DIR [--device cpu|vulkan[:N]|cuda[:N]] [--expected FILE]
 *                       [--json FILE] [--update-expected] [--suites a,b]
 *                       [--filter A,B] [-j N] [--timeout S] [--expect-device S] [-v]
 *
 * DIR/manifest.txt (written by conformance.c's emit_index) lists every test
 * of the emit run: "emitted" tests have a folder SUITE/NAME with
 * model.dmlpkg, the data sets as .npy files and test.txt (conformance.c's
 * emit_test says its records); tests that failed to compile for the
 * targets ("compile error: codegen.cuda: ...", "unsupported op") or were
 * skipped keep that result, as dml_conformance reported it. Each emitted
 * test runs in a forked child under a time limit (conf_run_all: a crash or
 * hang fails that test, not the runner): the package is loaded, and per
 * data set a session is created on the device, the inputs are bound by
 * name, the plan runs and every output is compared with the same rules
 * and tolerances as dml_conformance (conf_compare_output: dtype and shape
 * exactly, |got - want| <= 1e-5 + 1e-3 |want|, integers exactly, random
 * outputs by statistics). The device is probed in a child too (CUDA must
 * not be initialized before fork): without one the run is skipped (exit
 * 77), as it is when --expect-device S names another device.
 *
 * Exit status: 0 when every result is as the list expects; 1 when a test
 * outside the list fails or is skipped, or a listed test passes; 2 for
 * usage and I/O errors; 77 skipped.
 */
#define _GNU_SOURCE /* strdup */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf_common.h"
#include "dml_npy.h"
#include "dml_rt.h"

/* --device */
static const char *g_device = "cpu";

#define MAX_FIELDS 10

/* Splits `line` in place at tabs into at most MAX_FIELDS fields. */
static int split_tabs(char *line, char **f) {
  int n = 0;
  char *p = line;
  while (n < MAX_FIELDS) {
    f[n++] = p;
    char *t = strchr(p, '\t');
    if (!t) break;
    *t = 0;
    p = t + 1;
  }
  return n;
}

/* Reads a data file of test folder `dir`; `bf16` "bf16" (or a float8
 * dtype's name, "f8e4m3fn", ...): the file holds that dtype's bit patterns
 * as uint16 (uint8) (NumPy has no bfloat16 or float8). */
static dml_status_t load_npy(const char *dir, const char *file, const char *bf16,
                             dml_tensor_t *t, void **buf) {
  char *path = conf_xprintf("%s/%s", dir, file);
  dml_status_t s = dml_npy_read_file(path, t, buf);
  free(path);
  dml_dtype_t as =
      strcmp(bf16, "-") ? dml_dtype_from_name(bf16, strlen(bf16)) : DML_DTYPE_INVALID;
  if (!s && (as == DML_DTYPE_BF16 || dml_dtype_is_float8(as)) &&
      dml_dtype_size(as) == dml_dtype_size(t->dtype) && !dml_dtype_is_float(t->dtype))
    t->dtype = as;
  return s;
}

/* Fills v with a runtime error from status s (freed). */
static void runtime_error(conf_verdict_t *v, const char *what, dml_status_t s) {
  char *m = conf_status_text(s);
  v->kind = "runtime error";
  v->message = what ? conf_xprintf("%s: %s", what, m) : conf_xstrdup(m);
  free(m);
  dml_status_free(s);
}

/* The state of one test's run. */
typedef struct run {
  const char *dir, *name;
  dml_rt_model_t *model;
  dml_rt_session_t *s;
  int ran;           /* the session of this data set has run */
  dml_tensor_t out0; /* graph output 0 of this data set */
  dml_tensor_t x;    /* random tests: input 0 */
  void *x_buf;
  double ratio;
  size_t seq_n; /* the last seqlen record's count */
  conf_verdict_t v;
} run_t;

/* Runs the session of the current data set once, before its outputs. */
static int ensure_ran(run_t *r) {
  if (!r->s || r->ran) return r->s ? 0 : -1;
  r->ran = 1;
  dml_status_t st = dml_rt_session_run(r->s);
  if (st) {
    runtime_error(&r->v, NULL, st);
    return -1;
  }
  return 0;
}

/* One record of test.txt (fields f[0..n)); fills r->v on a failure. */
static void run_record(run_t *r, char **f, int n) {
  const char *k = f[0];
  if (!strcmp(k, "set") || !strcmp(k, "end")) {
    if (r->s && ensure_ran(r)) return;
    dml_rt_session_release(r->s);
    r->s = NULL;
    free(r->x_buf);
    r->x_buf = NULL;
    memset(&r->x, 0, sizeof(r->x));
    memset(&r->out0, 0, sizeof(r->out0));
    r->ratio = 0.5;
    if (!strcmp(k, "end")) return;
    r->ran = 0;
    dml_status_t st = dml_rt_session_create(r->model, g_device, &r->s);
    if (st) runtime_error(&r->v, NULL, st);
    return;
  }
  if (!r->s) {
    r->v.kind = "runtime error";
    r->v.message = conf_xprintf("test.txt: record '%s' outside a data set", k);
    return;
  }
  if (!strcmp(k, "in") && n >= 4) {
    dml_tensor_t t;
    void *buf = NULL;
    dml_status_t st = load_npy(r->dir, f[2], f[3], &t, &buf);
    if (st) {
      char *what = conf_xprintf("reading %s", f[2]);
      runtime_error(&r->v, what, st);
      free(what);
      return;
    }
    st = dml_rt_session_set_input_by_name(r->s, f[1], &t);
    free(buf); /* the session copies its inputs */
    if (st) runtime_error(&r->v, NULL, st);
    return;
  }
  if (!strcmp(k, "x") && n >= 3) {
    dml_status_t st = load_npy(r->dir, f[1], f[2], &r->x, &r->x_buf);
    if (st) {
      char *what = conf_xprintf("reading %s", f[1]);
      runtime_error(&r->v, what, st);
      free(what);
    }
    return;
  }
  if (!strcmp(k, "ratio") && n >= 2) {
    r->ratio = strtod(f[1], NULL);
    return;
  }
  if (ensure_ran(r)) return;
  uint32_t oi = n >= 2 ? (uint32_t)strtoul(f[1], NULL, 10) : 0;
  if (!strcmp(k, "none") && n >= 3) {
    /* An optional output expected none: the package has no result for it. */
    char *e0 = conf_xprintf("%s.0", f[2]);
    if (dml_rt_model_find_output(r->model, f[2]) >= 0 ||
        dml_rt_model_find_output(r->model, e0) >= 0) {
      r->v.kind = "wrong values";
      r->v.output = conf_xstrdup(f[2]);
      r->v.message = conf_xprintf(
          "optional output %u '%s': none expected, the package has a value", oi, f[2]);
    }
    free(e0);
    return;
  }
  if (!strcmp(k, "seqlen") && n >= 4) {
    r->seq_n = (size_t)strtoull(f[3], NULL, 10);
    char *en = conf_xprintf("%s.%zu", f[2], r->seq_n);
    if (dml_rt_model_find_output(r->model, en) >= 0) {
      r->v.kind = "wrong shape/dtype";
      r->v.output = conf_xstrdup(f[2]);
      r->v.message = conf_xprintf("sequence output %u '%s': more than %zu elements", oi,
                                  f[2], r->seq_n);
    }
    free(en);
    return;
  }
  int elem = !strcmp(k, "elem");
  if ((elem || !strcmp(k, "out")) && n >= 5) {
    const char *oname = f[2];
    int32_t idx = dml_rt_model_find_output(r->model, oname);
    if (idx < 0) {
      if (elem) {
        const char *dot = strrchr(oname, '.');
        int base = dot ? (int)(dot - oname) : (int)strlen(oname);
        r->v.kind = "wrong shape/dtype";
        r->v.output = conf_xprintf("%.*s", base, oname);
        r->v.message = conf_xprintf(
            "sequence output %u '%.*s': %zu elements expected, the package has no output "
            "'%s'",
            oi, base, oname, r->seq_n, oname);
      } else {
        r->v.kind = "runtime error";
        r->v.message = conf_xprintf("the package has no output '%s'", oname);
      }
      return;
    }
    dml_tensor_t got, want;
    dml_status_t st = dml_rt_session_get_output(r->s, (uint32_t)idx, &got);
    if (st) {
      runtime_error(&r->v, NULL, st);
      return;
    }
    void *buf = NULL;
    st = load_npy(r->dir, f[3], f[4], &want, &buf);
    if (st) {
      char *what = conf_xprintf("reading %s", f[3]);
      runtime_error(&r->v, what, st);
      free(what);
      return;
    }
    if (elem) {
      conf_compare_output(r->name, oname, oi, &got, &want, NULL, r->ratio, NULL, &r->v);
    } else {
      if (oi == 0) r->out0 = got;
      conf_compare_output(r->name, oname, oi, &got, &want, r->x_buf ? &r->x : NULL,
                          r->ratio, oi ? &r->out0 : NULL, &r->v);
    }
    free(buf);
    return;
  }
  r->v.kind = "runtime error";
  r->v.message = conf_xprintf("test.txt: malformed record '%s'", k);
}

/* The child of one test (conf_run_all). */
static void test_child(const char *dir, const conf_result_t *res, conf_sbuf_t *out) {
  run_t r;
  memset(&r, 0, sizeof(r));
  r.dir = dir;
  r.name = res->name;
  r.ratio = 0.5;
  char *path = conf_xprintf("%s/test.txt", dir);
  uint8_t *text = NULL;
  size_t len = 0;
  if (conf_read_file(path, &text, &len) != 0) {
    r.v.kind = "runtime error";
    r.v.message = conf_xprintf("cannot read %s", path);
  } else if (strncmp((const char *)text, "dmlc-conformance-test\t1\n", 24) != 0) {
    r.v.kind = "runtime error";
    r.v.message =
        conf_xprintf("%s is not a dml_conformance --emit test (version 1)", path);
  }
  if (!r.v.kind) {
    char *pkg = conf_xprintf("%s/model.dmlpkg", dir);
    dml_status_t st = dml_rt_model_load_file(pkg, &r.model);
    if (st) runtime_error(&r.v, "loading model.dmlpkg", st);
    free(pkg);
  }
  int ended = 0;
  char *line = (char *)text;
  while (!r.v.kind && line && *line) {
    char *nl = strchr(line, '\n');
    if (nl) *nl = 0;
    char *f[MAX_FIELDS] = {0};
    int n = split_tabs(line, f);
    if (!strcmp(f[0], "set") || !strcmp(f[0], "in") || !strcmp(f[0], "x") ||
        !strcmp(f[0], "ratio") || !strcmp(f[0], "out") || !strcmp(f[0], "elem") ||
        !strcmp(f[0], "seqlen") || !strcmp(f[0], "none") || !strcmp(f[0], "end"))
      run_record(&r, f, n);
    ended |= !strcmp(f[0], "end");
    line = nl ? nl + 1 : NULL;
  }
  if (!r.v.kind && !ended) {
    r.v.kind = "runtime error";
    r.v.message = conf_xprintf("%s is truncated (no 'end' record)", path);
  }
  if (r.v.kind) {
    conf_emit_kv(out, "kind", r.v.kind);
    conf_emit_kv(out, "message", r.v.message);
    if (r.v.output) conf_emit_kv(out, "output", r.v.output);
    if (!strcmp(r.v.kind, "wrong values")) {
      char num[64];
      snprintf(num, sizeof(num), "%.9g", r.v.max_err);
      conf_emit_kv(out, "max_err", num);
      snprintf(num, sizeof(num), "%lld", r.v.index);
      conf_emit_kv(out, "index", num);
    }
  } else {
    conf_emit_kv(out, "pass", "1");
    if (conf_is_random_test(r.name)) conf_emit_kv(out, "statistical", "1");
  }
  dml_rt_session_release(r.s);
  dml_rt_model_release(r.model);
  free(r.x_buf);
  free(r.v.message);
  free(r.v.output);
  free(text);
  free(path);
}

/* Probes --device in a child (CUDA must not be initialized before fork):
 * 0 with the device's name, or 77 with the reason in `why`. */
static int probe_device(char *name, size_t cap, char *why, size_t wcap) {
  int gpu_vk = !strncmp(g_device, "vulkan", 6), gpu_cu = !strncmp(g_device, "cuda", 4);
  if (!gpu_vk && !gpu_cu) {
    snprintf(name, cap, "cpu");
    return 0;
  }
  int p[2];
  if (pipe(p) != 0) {
    snprintf(why, wcap, "pipe: %s", strerror(errno));
    return 77;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    snprintf(why, wcap, "fork: %s", strerror(errno));
    return 77;
  }
  if (pid == 0) {
    close(p[0]);
    dml_rt_device_info_t dv[16];
    uint32_t nd = 0;
    dml_status_t s =
        gpu_vk ? dml_rt_vulkan_devices(dv, 16, &nd) : dml_rt_cuda_devices(dv, 16, &nd);
    char *msg;
    if (s) {
      char *t = conf_status_text(s);
      msg = conf_xprintf("E%s", t);
      free(t);
    } else {
      const char *found = NULL;
      for (uint32_t i = 0; i < nd && i < 16; i++)
        if (strchr(g_device, ':') ? !strcmp(dv[i].id, g_device) : dv[i].is_default)
          found = dv[i].name;
      msg = found ? conf_xprintf("N%s", found)
                  : conf_xprintf("Eno device '%s' (%u found)", g_device, nd);
    }
    size_t len = strlen(msg), done = 0;
    while (done < len) {
      ssize_t w = write(p[1], msg + done, len - done);
      if (w <= 0) break;
      done += (size_t)w;
    }
    _exit(0);
  }
  close(p[1]);
  conf_sbuf_t b = {0};
  char tmp[512];
  ssize_t k;
  while ((k = read(p[0], tmp, sizeof(tmp))) > 0) conf_sb_add(&b, "%.*s", (int)k, tmp);
  close(p[0]);
  int ws = 0;
  waitpid(pid, &ws, 0);
  int rc = 77;
  if (b.s && b.s[0] == 'N') {
    snprintf(name, cap, "%s", b.s + 1);
    rc = 0;
  } else {
    snprintf(why, wcap, "%s",
             b.s ? b.s + 1 : "the device probe died (crashed opening the driver)");
  }
  free(b.s);
  return rc;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: dml_conformance_run DIR [--device D] [--expected FILE] [--json FILE]\n"
          "                           [--update-expected] [--suites a,b] [--filter A,B]\n"
          "                           [-j N] [--timeout S] [--expect-device S] [-v]\n\n"
          "Runs the ONNX backend tests that `dml_conformance --emit DIR` compiled (with\n"
          "the runtime only) and checks them against the expected-failure list.\n\n"
          "  --device D         cpu (default), vulkan[:N] or cuda[:N]; without such a\n"
          "                     device the run is skipped (exit 77)\n"
          "  --expected FILE    the expected-failure list (\"<suite>/<test> <reason>\")\n"
          "  --update-expected  rewrite --expected from this run (keeps the reasons of\n"
          "                     tests still failing the same way)\n"
          "  --json FILE        every test's result as JSON (as dml_conformance's)\n"
          "  --suites LIST      only these suites\n"
          "  --filter A,B       only tests whose name contains A or B\n"
          "  --expect-device S  skip (exit 77) unless the device's name contains S\n"
          "                     (expected failures are per device)\n"
          "  -j N               tests run in parallel (default 2)\n"
          "  --timeout S        per-test time limit in seconds (default 20)\n"
          "  -v                 one line per test on stderr\n");
}

int main(int argc, char **argv) {
  const char *dir = NULL;
  conf_opts_t o = {.prog = "dml_conformance_run", .device = "cpu", .jobs = 2};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (conf_take_flag(&o, argc, argv, &i)) continue;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return 0;
    } else if (a[0] != '-' && !dir) {
      dir = a;
    } else {
      fprintf(stderr, "dml_conformance_run: unknown or incomplete flag '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }
  if (!dir) {
    fprintf(stderr, "dml_conformance_run: no DIR (from dml_conformance --emit DIR)\n");
    usage(stderr);
    return 2;
  }
  g_device = o.device;
  const char *suites = o.suites, *filter = o.filter, *expect_device = o.expect_device;
  conf_expected_t exp;
  int rc = conf_opts_check(&o, &exp);
  if (rc) return rc;
  char devname[256] = "", why[1024] = "";
  if (probe_device(devname, sizeof(devname), why, sizeof(why)) != 0) {
    printf("SKIP: --device %s: %s\n", g_device, why);
    return 77;
  }
  if (expect_device && !strstr(devname, expect_device)) {
    printf(
        "SKIP: the expected failures are for a device named '*%s*'; --device %s here is "
        "'%s'\n",
        expect_device, g_device, devname);
    return 77;
  }
  /* The manifest. */
  char *mpath = conf_xprintf("%s/manifest.txt", dir);
  uint8_t *text = NULL;
  size_t len = 0;
  if (conf_read_file(mpath, &text, &len) != 0) {
    fprintf(stderr,
            "dml_conformance_run: cannot read %s (run dml_conformance --emit %s)\n",
            mpath, dir);
    return 2;
  }
  size_t cap = 64, n = 0;
  conf_result_t *rs = (conf_result_t *)conf_xcalloc(cap, sizeof(*rs));
  char **dirs = (char **)conf_xcalloc(cap, sizeof(char *));
  char targets[256] = "?";
  int magic = 0, partial = 0;
  char *line = (char *)text;
  while (line && *line) {
    char *nl = strchr(line, '\n');
    if (nl) *nl = 0;
    char *f[MAX_FIELDS] = {0};
    int nf = line[0] == '#' ? 0 : split_tabs(line, f);
    if (nf >= 2 && !strcmp(f[0], "dmlc-conformance-emit")) magic = !strcmp(f[1], "1");
    if (nf >= 2 && !strcmp(f[0], "selection")) partial = !strcmp(f[1], "partial");
    if (nf >= 2 && !strcmp(f[0], "targets"))
      snprintf(targets, sizeof(targets), "%s", f[1]);
    if (nf == 9 && !strcmp(f[0], "test")) {
      const char *suite = NULL;
      for (size_t s = 0; s < CONF_N_SUITES; s++)
        if (!strcmp(f[1], conf_suite_names[s])) suite = conf_suite_names[s];
      if (suite && (!suites || conf_list_has(suites, suite)) &&
          conf_filter_match(filter, f[2])) {
        if (n == cap) {
          cap *= 2;
          conf_result_t *nr = (conf_result_t *)realloc(rs, cap * sizeof(*rs));
          char **nd = (char **)realloc(dirs, cap * sizeof(char *));
          if (!nr || !nd) exit(2);
          rs = nr, dirs = nd;
        }
        conf_result_t *r = &rs[n];
        memset(r, 0, sizeof(*r));
        r->suite = suite;
        r->name = conf_xstrdup(f[2]);
        dirs[n] = conf_xprintf("%s/%s/%s", dir, suite, f[2]);
#define FIELD(i) (strcmp(f[i], "-") ? conf_xstrdup(f[i]) : NULL)
        if (strcmp(f[3], "emitted") != 0) {
          r->status = !strcmp(f[3], "skip") ? CONF_ST_SKIP : CONF_ST_FAIL;
          r->kind = FIELD(4);
          r->bad_ops = FIELD(5);
          r->message = FIELD(8);
        }
        r->redeclared = FIELD(7);
#undef FIELD
        if (strcmp(f[6], "-") != 0) {
          /* the model's op types */
          size_t no = 1;
          for (const char *p = f[6]; *p; p++) no += *p == ',';
          r->ops = (char **)conf_xcalloc(no, sizeof(char *));
          for (char *p = f[6]; p && *p;) {
            size_t k = strcspn(p, ",");
            r->ops[r->n_ops++] = conf_xprintf("%.*s", (int)k, p);
            p += k;
            if (*p == ',') p++;
          }
        }
        n++;
      }
    }
    line = nl ? nl + 1 : NULL;
  }
  free(text);
  if (!magic) {
    fprintf(stderr, "dml_conformance_run: %s is not a dml_conformance --emit manifest\n",
            mpath);
    return 2;
  }
  free(mpath);
  if (o.update && partial) {
    fprintf(stderr,
            "dml_conformance_run: --update-expected needs every test: %s was emitted "
            "with --suites or --filter\n",
            dir);
    return 2;
  }
  if (!n) {
    fprintf(stderr, "dml_conformance_run: no tests selected in %s\n", dir);
    return 2;
  }
  printf("device %s: %s; packages for targets %s\n", g_device, devname, targets);

  /* Run the emitted tests. */
  double t0 = conf_now_s();
  conf_result_t **pending = (conf_result_t **)conf_xcalloc(n, sizeof(conf_result_t *));
  char **pending_dirs = (char **)conf_xcalloc(n, sizeof(char *));
  size_t nt = 0;
  for (size_t i = 0; i < n; i++)
    if (!rs[i].kind) pending[nt] = &rs[i], pending_dirs[nt++] = dirs[i];
  conf_run_all(pending, pending_dirs, nt, o.jobs, o.verbose, test_child);
  double elapsed = conf_now_s() - t0;

  free(pending);
  free(pending_dirs);
  /* Entries naming no test are noted only when every test was emitted and
   * selected. */
  int unexpected =
      conf_apply_expected(rs, n, &exp, o.update, !suites && !filter && !partial);
  conf_print_suite_counts(rs, n);
  printf("%zu ran on %s in %.1f s (the others did not compile for %s or were skipped)\n",
         nt, g_device, elapsed, targets);
  char *header = conf_xprintf(
      "# Expected failures of the ONNX backend tests on --device %s ('%s'), packages\n"
      "# from dml_conformance --emit --target %s, run by dml_conformance_run: one "
      "line\n"
      "# per test, \"<suite>/<test> <reason>\" (docs/conformance.md). Refresh:\n"
      "#   dml_conformance_run DIR --device %s --update-expected --expected FILE\n",
      g_device, devname, targets, g_device);
  rc = conf_finish_run(&o, rs, n, &exp, unexpected, header, 0);
  free(header);
  conf_free_run(rs, dirs, n, &exp);
  return rc;
}
