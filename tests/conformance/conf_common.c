/*
 * conf_common.c — what dml_conformance and dml_conformance_run share
 * (conf_common.h): helpers, the output comparison, the forked-child
 * scheduler, expected-failure lists and the JSON report. Runtime only.
 */
#define _GNU_SOURCE /* strsignal */
#include "conf_common.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *const conf_status_names[5] = {"pass", "fail", "skip", "xfail", "xpass"};
const char *const conf_suite_names[5] = {"node", "pytorch-converted", "pytorch-operator",
                                         "simple", "real"};

/* ==== small helpers ===================================================== */

void *conf_xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p) {
    fprintf(stderr, "dml_conformance: out of memory\n");
    exit(2);
  }
  return p;
}

char *conf_xstrdup(const char *s) {
  size_t n = strlen(s ? s : "");
  char *p = (char *)conf_xcalloc(n + 1, 1);
  memcpy(p, s ? s : "", n);
  return p;
}

char *conf_xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *conf_xprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *p = (char *)conf_xcalloc((size_t)(n > 0 ? n : 0) + 1, 1);
  va_start(ap, fmt);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return p;
}

/* A growing string. */

void conf_sb_add(conf_sbuf_t *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void conf_sb_add(conf_sbuf_t *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n <= 0) return;
  if (b->len + (size_t)n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (b->len + (size_t)n + 1 > cap) cap *= 2;
    char *s = (char *)realloc(b->s, cap);
    if (!s) {
      fprintf(stderr, "dml_conformance: out of memory\n");
      exit(2);
    }
    b->s = s;
    b->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

int conf_cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted names of the entries of `dir` starting with `prefix` (NULL: all
 * but dot files). */
char **conf_list_dir(const char *dir, const char *prefix, size_t *out_n) {
  DIR *d = opendir(dir);
  size_t n = 0, cap = 16;
  char **v = (char **)conf_xcalloc(cap, sizeof(char *));
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (e->d_name[0] == '.') continue;
      if (prefix && strncmp(e->d_name, prefix, strlen(prefix)) != 0) continue;
      if (n + 1 >= cap) {
        cap *= 2;
        char **nv = (char **)realloc(v, cap * sizeof(char *));
        if (!nv) exit(2);
        v = nv;
      }
      v[n++] = conf_xstrdup(e->d_name);
    }
    closedir(d);
  }
  qsort(v, n, sizeof(char *), conf_cmp_str);
  *out_n = n;
  return v;
}

void conf_free_list(char **v, size_t n) {
  for (size_t i = 0; i < n; i++) free(v[i]);
  free(v);
}

int conf_file_exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int conf_read_file(const char *path, uint8_t **out, size_t *out_len) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || st.st_size < 0) {
    fclose(f);
    return -1;
  }
  size_t n = (size_t)st.st_size;
  uint8_t *b = (uint8_t *)conf_xcalloc(n + 1, 1);
  if (n && fread(b, 1, n, f) != n) {
    free(b);
    fclose(f);
    return -1;
  }
  fclose(f);
  *out = b;
  *out_len = n;
  return 0;
}

/* One line of text: newlines and tabs become spaces, cut at `max` bytes. */
void conf_one_line(char *s, size_t max) {
  for (char *p = s; *p; p++)
    if (*p == '\n' || *p == '\t' || *p == '\r') *p = ' ';
  if (strlen(s) > max) strcpy(s + max - 3, "...");
}

/* ==== results =========================================================== */

void conf_result_free(conf_result_t *r) {
  free(r->name);
  free(r->kind);
  free(r->message);
  free(r->bad_ops);
  free(r->output);
  free(r->special);
  free(r->redeclared);
  for (size_t k = 0; k < r->n_ops; k++) free(r->ops[k]);
  free(r->ops);
}

/* What a child sends back: "key\tvalue\n" lines, values one-lined. */
void conf_emit_kv(conf_sbuf_t *b, const char *k, const char *v) {
  char *c = conf_xstrdup(v ? v : "");
  conf_one_line(c, 4000);
  conf_sb_add(b, "%s\t%s\n", k, c);
  free(c);
}

/* A status as one line: "op: reason; detail; detail" (no "error: "). */
char *conf_status_text(dml_status_t s) {
  char *m = dml_status_format(s);
  const char *p = m ? m : "?";
  if (!strncmp(p, "error: ", 7)) p += 7;
  conf_sbuf_t b = {0};
  while (*p) {
    size_t n = strcspn(p, "\n");
    const char *q = p;
    while (n && (*q == ' ' || *q == '\t')) q++, n--;
    if (n) conf_sb_add(&b, "%s%.*s", b.len ? "; " : "", (int)n, q);
    p = q + n;
    if (*p == '\n') p++;
  }
  free(m);
  char *r = b.s ? b.s : conf_xstrdup("?");
  conf_one_line(r, CONF_MAX_MSG);
  return r;
}

int conf_is_random_test(const char *name) {
  return strncmp(name, "test_bernoulli", 14) == 0 ||
         (strncmp(name, "test_training_dropout", 21) == 0 && !strstr(name, "zero_ratio"));
}

static void dims_str(const dml_tensor_t *t, char *buf, size_t cap) {
  size_t k = (size_t)snprintf(buf, cap, "%s[", dml_dtype_name(t->dtype));
  for (int32_t i = 0; i < t->rank && k < cap; i++)
    k +=
        (size_t)snprintf(buf + k, cap - k, "%s%lld", i ? "," : "", (long long)t->dims[i]);
  if (k < cap) snprintf(buf + k, cap - k, "]");
}

/* Compares one output. `x`/`ratio` are the Dropout input and ratio for the
 * random check (NULL otherwise). */
void conf_compare_output(const char *test, const char *oname, uint32_t oi,
                         const dml_tensor_t *got, const dml_tensor_t *want,
                         const dml_tensor_t *x, double ratio, const dml_tensor_t *out0,
                         conf_verdict_t *v) {
  char g[200], w[200];
  dims_str(got, g, sizeof(g));
  dims_str(want, w, sizeof(w));
  int same = got->dtype == want->dtype && got->rank == want->rank;
  for (int32_t i = 0; same && i < got->rank; i++) same = got->dims[i] == want->dims[i];
  if (!same) {
    v->kind = "wrong shape/dtype";
    v->output = conf_xstrdup(oname);
    v->message = conf_xprintf("output %u '%s': got %s, want %s", oi, oname, g, w);
    return;
  }
  int64_t n = dml_dims_numel(want->dims, want->rank);
  size_t es = dml_dtype_size(want->dtype);
  double max_err = 0;
  long long bad = -1;
  const char *why = NULL;
  if (conf_is_random_test(test)) {
    /* Bernoulli: every value is 0 or 1. Dropout: output 0 is 0 or x/(1-ratio),
     * the mask (output 1) agrees with output 0. */
    double scale = ratio < 1 ? 1.0 / (1.0 - ratio) : 0;
    int bern = strncmp(test, "test_bernoulli", 14) == 0;
    double s_got = 0, s_want = 0, s_var = 0; /* statistic, see the top */
    int64_t n_stat = 0;
    for (int64_t i = 0; i < n && bad < 0; i++) {
      double a = dml_load_f64(got->dtype, got->data, (size_t)i);
      if (bern) {
        if (a != 0 && a != 1) bad = i, why = "a value other than 0 and 1";
        double p = x ? dml_load_f64(x->dtype, x->data, (size_t)i) : 0.5;
        p = p < 0 ? 0 : p > 1 ? 1 : p;
        s_got += a, s_want += p, s_var += p * (1 - p), n_stat++;
      } else if (oi == 0 && x) {
        double xi = dml_load_f64(x->dtype, x->data, (size_t)i), kept = xi * scale;
        if (a != 0 && fabs(a - kept) > CONF_ABS_TOL + CONF_REL_TOL * fabs(kept))
          bad = i, why = "a value neither 0 nor x/(1-ratio)";
        if (xi != 0)
          s_got += a != 0, s_want += 1 - ratio, s_var += ratio * (1 - ratio), n_stat++;
      } else if (oi == 1 && out0 && x) {
        double o = dml_load_f64(out0->dtype, out0->data, (size_t)i);
        double xi = dml_load_f64(x->dtype, x->data, (size_t)i);
        if ((a != 0) != (o != 0 || xi == 0) && !(a == 0 && o == 0))
          bad = i, why = "a mask that disagrees with the output";
      }
    }
    if (bad < 0 && n_stat > 0) {
      double mg = s_got / (double)n_stat, mw = s_want / (double)n_stat;
      double bound = 4 * sqrt(s_var) / (double)n_stat + 1.0 / (double)n_stat;
      if (fabs(mg - mw) > bound) {
        v->kind = "wrong values";
        v->output = conf_xstrdup(oname);
        v->message = conf_xprintf(
            "output %u '%s' (random; checked by statistics): %s %.4g, "
            "expected %.4g +- %.4g over %lld elements",
            oi, oname, bern ? "mean" : "kept fraction", mg, mw, bound, (long long)n_stat);
        return;
      }
    }
    if (bad >= 0) {
      v->kind = "wrong values";
      v->output = conf_xstrdup(oname);
      v->index = bad;
      v->message =
          conf_xprintf("output %u '%s' (random; checked by value set): %s at index %lld",
                       oi, oname, why, bad);
    }
    return;
  }
  if (want->dtype == DML_DTYPE_STRING) {
    /* strings: byte-equal */
    const dml_str_t *g = (const dml_str_t *)got->data, *w = (const dml_str_t *)want->data;
    for (int64_t i = 0; i < n; i++) {
      if (g[i].len == w[i].len &&
          (g[i].len == 0 || memcmp(g[i].data, w[i].data, (size_t)g[i].len) == 0))
        continue;
      int gl = g[i].len > 60 ? 60 : (int)g[i].len,
          wl = w[i].len > 60 ? 60 : (int)w[i].len;
      v->kind = "wrong values";
      v->output = conf_xstrdup(oname);
      v->index = i;
      v->message = conf_xprintf(
          "output %u '%s': first mismatch at index %lld (got '%.*s', want '%.*s')", oi,
          oname, (long long)i, gl, g[i].data ? g[i].data : "", wl,
          w[i].data ? w[i].data : "");
      return;
    }
    return;
  }
  if (dml_dtype_is_float(want->dtype)) {
    for (int64_t i = 0; i < n; i++) {
      double a = dml_load_f64(got->dtype, got->data, (size_t)i);
      double b = dml_load_f64(want->dtype, want->data, (size_t)i);
      if (a == b || (isnan(a) && isnan(b))) continue;
      double e = fabs(a - b);
      if (isnan(e)) e = INFINITY;
      if (!(e <= CONF_ABS_TOL + CONF_REL_TOL * fabs(b))) {
        if (bad < 0) bad = i;
        if (e > max_err) max_err = e;
      }
    }
  } else if (dml_dtype_is_float8(want->dtype)) {
    /* float8: the same bit pattern, or NaN for NaN (a NaN's sign is free) */
    for (int64_t i = 0; i < n; i++) {
      double a = dml_load_f64(got->dtype, got->data, (size_t)i);
      double b = dml_load_f64(want->dtype, want->data, (size_t)i);
      if (((const uint8_t *)got->data)[i] == ((const uint8_t *)want->data)[i] ||
          (isnan(a) && isnan(b)))
        continue;
      double e = fabs(a - b);
      if (isnan(e)) e = INFINITY;
      if (bad < 0) bad = i;
      if (e > max_err) max_err = e;
    }
  } else {
    for (int64_t i = 0; i < n; i++) {
      if (memcmp((const char *)got->data + (size_t)i * es,
                 (const char *)want->data + (size_t)i * es, es) == 0)
        continue;
      double e = fabs((double)dml_load_i64(got->dtype, got->data, (size_t)i) -
                      (double)dml_load_i64(want->dtype, want->data, (size_t)i));
      if (bad < 0) bad = i;
      if (e > max_err) max_err = e;
    }
  }
  if (bad >= 0) {
    v->kind = "wrong values";
    v->output = conf_xstrdup(oname);
    v->max_err = max_err;
    v->index = bad;
    v->message = conf_xprintf(
        "output %u '%s': max abs error %.6g, first mismatch at index %lld (got %.9g, "
        "want "
        "%.9g)",
        oi, oname, max_err, bad, dml_load_f64(got->dtype, got->data, (size_t)bad),
        dml_load_f64(want->dtype, want->data, (size_t)bad));
  }
}

/* ==== the parent: scheduling ============================================ */

typedef struct job {
  conf_result_t *r;
  conf_child_fn child;
  char *dir;
  pid_t pid;
  int fd;
  conf_sbuf_t buf;
  double t0;
} job_t;

double conf_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int conf_timeout_s = 20;

static void start_job(job_t *j) {
  int p[2];
  if (pipe(p) != 0) {
    perror("pipe");
    exit(2);
  }
  fflush(stdout);
  fflush(stderr);
  j->t0 = conf_now_s();
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    exit(2);
  }
  if (pid == 0) {
    close(p[0]);
    alarm((unsigned)conf_timeout_s);
    conf_sbuf_t out = {0};
    j->child(j->dir, j->r, &out);
    size_t done = 0;
    while (done < out.len) {
      ssize_t w = write(p[1], out.s + done, out.len - done);
      if (w <= 0) break;
      done += (size_t)w;
    }
    _exit(0);
  }
  close(p[1]);
  j->pid = pid;
  j->fd = p[0];
  memset(&j->buf, 0, sizeof(j->buf));
}

static const char *sig_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGALRM: return "SIGALRM";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    default: return "signal";
  }
}

/* Parses the child's lines into r. */
static void finish_job(job_t *j, int wstatus) {
  conf_result_t *r = j->r;
  r->seconds = conf_now_s() - j->t0;
  int got_any = 0, skipped = 0;
  char *line = j->buf.s;
  while (line && *line) {
    char *nl = strchr(line, '\n');
    if (nl) *nl = 0;
    char *tab = strchr(line, '\t');
    if (tab) {
      *tab = 0;
      const char *k = line, *val = tab + 1;
      got_any = 1;
      if (!strcmp(k, "pass"))
        r->status = CONF_ST_PASS;
      else if (!strcmp(k, "kind"))
        r->kind = conf_xstrdup(val), r->status = CONF_ST_FAIL;
      else if (!strcmp(k, "message"))
        r->message = conf_xstrdup(val);
      else if (!strcmp(k, "bad_ops"))
        r->bad_ops = conf_xstrdup(val);
      else if (!strcmp(k, "output"))
        r->output = conf_xstrdup(val);
      else if (!strcmp(k, "max_err"))
        r->max_err = strtod(val, NULL);
      else if (!strcmp(k, "index"))
        r->index = strtoll(val, NULL, 10);
      else if (!strcmp(k, "special"))
        r->special = conf_xstrdup(val);
      else if (!strcmp(k, "redeclared"))
        r->redeclared = conf_xstrdup(val);
      else if (!strcmp(k, "statistical"))
        r->statistical = 1;
      else if (!strcmp(k, "emitted"))
        r->emitted = 1, r->emitted_bytes = strtoll(val, NULL, 10);
      else if (!strcmp(k, "skipped"))
        skipped = 1;
    }
    line = nl ? nl + 1 : NULL;
  }
  if (skipped && r->status == CONF_ST_FAIL) r->status = CONF_ST_SKIP;
  if (WIFSIGNALED(wstatus)) {
    int sig = WTERMSIG(wstatus);
    free(r->kind);
    free(r->message);
    r->status = CONF_ST_FAIL;
    r->kind = conf_xstrdup("runtime error");
    r->message = sig == SIGALRM
                     ? conf_xprintf("timed out after %d s (SIGALRM)", conf_timeout_s)
                     : conf_xprintf("crashed: %s (%s)", sig_name(sig), strsignal(sig));
  } else if (!got_any) {
    r->status = CONF_ST_FAIL;
    r->kind = conf_xstrdup("runtime error");
    r->message = conf_xprintf("the test process exited with status %d and no result",
                              WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
  }
  free(j->buf.s);
  memset(&j->buf, 0, sizeof(j->buf));
}

/* Runs every result whose dir is set, `jobs` at a time. */
void conf_run_all(conf_result_t **pending, char **dirs, size_t n, int jobs, int verbose,
                  conf_child_fn child) {
  job_t *slots = (job_t *)conf_xcalloc((size_t)jobs, sizeof(job_t));
  size_t next = 0, running = 0;
  while (next < n || running) {
    while (next < n && running < (size_t)jobs) {
      for (int s = 0; s < jobs; s++)
        if (!slots[s].pid) {
          slots[s].r = pending[next];
          slots[s].dir = dirs[next];
          slots[s].child = child;
          next++;
          start_job(&slots[s]);
          running++;
          break;
        }
    }
    /* Drain every running child's pipe until one finishes (results are
     * small; reading keeps a large one from blocking its writer). */
    int wstatus = 0;
    pid_t pid = waitpid(-1, &wstatus, WNOHANG);
    if (pid == 0) {
      fd_set fds;
      FD_ZERO(&fds);
      int maxfd = -1;
      for (int s = 0; s < jobs; s++)
        if (slots[s].pid && slots[s].fd >= 0) {
          FD_SET(slots[s].fd, &fds);
          if (slots[s].fd > maxfd) maxfd = slots[s].fd;
        }
      struct timeval tv = {0, 20000};
      if (maxfd >= 0 && select(maxfd + 1, &fds, NULL, NULL, &tv) > 0)
        for (int s = 0; s < jobs; s++)
          if (slots[s].pid && slots[s].fd >= 0 && FD_ISSET(slots[s].fd, &fds)) {
            char tmp[4096];
            ssize_t k = read(slots[s].fd, tmp, sizeof(tmp));
            if (k > 0)
              conf_sb_add(&slots[s].buf, "%.*s", (int)k, tmp);
            else {
              close(slots[s].fd);
              slots[s].fd = -1;
            }
          }
      continue;
    }
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int s = 0; s < jobs; s++) {
      if (slots[s].pid != pid) continue;
      if (slots[s].fd >= 0) {
        char tmp[4096];
        ssize_t k;
        while ((k = read(slots[s].fd, tmp, sizeof(tmp))) > 0)
          conf_sb_add(&slots[s].buf, "%.*s", (int)k, tmp);
        close(slots[s].fd);
        slots[s].fd = -1;
      }
      finish_job(&slots[s], wstatus);
      if (verbose)
        fprintf(stderr, "%-6s %s/%s (%.2f s)%s%s\n",
                conf_status_names[slots[s].r->status], slots[s].r->suite,
                slots[s].r->name, slots[s].r->seconds, slots[s].r->kind ? ": " : "",
                slots[s].r->kind ? slots[s].r->kind : "");
      slots[s].pid = 0;
      running--;
    }
  }
  free(slots);
}

/* ==== expected-failure list ============================================= */

int conf_load_expected(const char *path, conf_expected_t *e) {
  memset(e, 0, sizeof(*e));
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  size_t cap = 64;
  e->keys = (char **)conf_xcalloc(cap, sizeof(char *));
  e->reasons = (char **)conf_xcalloc(cap, sizeof(char *));
  char line[8192];
  int lineno = 0, bad = 0;
  while (fgets(line, sizeof(line), f)) {
    lineno++;
    line[strcspn(line, "\r\n")] = 0;
    if (!line[0] || line[0] == '#') continue;
    char *sp = strchr(line, ' ');
    char *reason = sp ? sp + 1 : NULL;
    while (reason && *reason == ' ') reason++;
    if (!sp || !reason || !*reason || !strchr(line, '/')) {
      fprintf(stderr, "%s:%d: entry without a reason: '%s'\n", path, lineno, line);
      bad = 1;
      continue;
    }
    *sp = 0;
    if (e->n == cap) {
      cap *= 2;
      char **k = (char **)realloc(e->keys, cap * sizeof(char *));
      char **r = (char **)realloc(e->reasons, cap * sizeof(char *));
      if (!k || !r) exit(2);
      e->keys = k, e->reasons = r;
    }
    e->keys[e->n] = conf_xstrdup(line);
    e->reasons[e->n] = conf_xstrdup(reason);
    e->n++;
  }
  fclose(f);
  e->used = (int *)conf_xcalloc(e->n, sizeof(int));
  return bad ? -2 : 0;
}

long conf_find_expected(const conf_expected_t *e, const char *suite, const char *name) {
  size_t ls = strlen(suite);
  for (size_t i = 0; i < e->n; i++)
    if (!strncmp(e->keys[i], suite, ls) && e->keys[i][ls] == '/' &&
        !strcmp(e->keys[i] + ls + 1, name))
      return (long)i;
  return -1;
}

/* The reason written to the list for a failure or skip. */
char *conf_generated_reason(const conf_result_t *r) {
  char *s;
  if (r->bad_ops) {
    s = conf_xprintf("unsupported op: %s", r->bad_ops);
  } else if (r->kind && r->message) {
    /* The message's first part: the reason without its details. */
    size_t n = strlen(r->message);
    const char *semi = strstr(r->message, "; ");
    if (semi && strcmp(r->kind, "wrong values") != 0) n = (size_t)(semi - r->message);
    s = conf_xprintf("%s: %.*s", r->kind, (int)n, r->message);
  } else {
    s = conf_xstrdup(r->kind ? r->kind : "fails");
  }
  conf_one_line(s, 240);
  return s;
}

/* ==== reports =========================================================== */

void conf_json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    switch (*p) {
      case '"': fputs("\\\"", f); break;
      case '\\': fputs("\\\\", f); break;
      case '\n': fputs("\\n", f); break;
      case '\r': fputs("\\r", f); break;
      case '\t': fputs("\\t", f); break;
      default:
        if (*p < 0x20)
          fprintf(f, "\\u%04x", *p);
        else
          fputc(*p, f);
    }
  }
  fputc('"', f);
}

/* Writes a comma-separated list as a JSON array of strings. */
void conf_json_list(FILE *f, const char *csv) {
  fputc('[', f);
  const char *p = csv;
  int first = 1;
  while (p && *p) {
    while (*p == ' ') p++;
    size_t n = strcspn(p, ",");
    char *item = (char *)conf_xcalloc(n + 1, 1);
    memcpy(item, p, n);
    if (!first) fputs(", ", f);
    conf_json_str(f, item);
    free(item);
    first = 0;
    p += n;
    if (*p == ',') p++;
  }
  fputc(']', f);
}

int conf_write_json(const char *path, conf_result_t *rs, size_t n) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f,
          "{\n  \"tolerance\": {\"relative\": %g, \"absolute\": %g},\n  \"tests\": [\n",
          CONF_REL_TOL, CONF_ABS_TOL);
  for (size_t i = 0; i < n; i++) {
    const conf_result_t *r = &rs[i];
    fputs("    {\"suite\": ", f);
    conf_json_str(f, r->suite);
    fputs(", \"name\": ", f);
    conf_json_str(f, r->name);
    fprintf(f, ", \"status\": \"%s\", \"specialized\": ", conf_status_names[r->status]);
    conf_json_list(f, r->special);
    if (r->redeclared) {
      fputs(", \"redeclared\": ", f);
      conf_json_list(f, r->redeclared);
    }
    if (r->statistical)
      fputs(", \"checked_by\": \"shape, dtype, value set and statistics\"", f);
    fputs(", \"ops\": [", f);
    for (size_t k = 0; k < r->n_ops; k++) {
      if (k) fputs(", ", f);
      conf_json_str(f, r->ops[k]);
    }
    fputc(']', f);
    if (r->kind) {
      fputs(", \"reason\": {\"kind\": ", f);
      conf_json_str(f, r->kind);
      if (r->bad_ops) {
        fputs(", \"ops\": ", f);
        conf_json_list(f, r->bad_ops);
      }
      if (r->output) {
        fputs(", \"output\": ", f);
        conf_json_str(f, r->output);
      }
      if (r->kind && !strcmp(r->kind, "wrong values"))
        fprintf(f, ", \"max_abs_error\": %.9g, \"index\": %lld",
                isfinite(r->max_err) ? r->max_err : 1e308, r->index);
      fputs(", \"message\": ", f);
      conf_json_str(f, r->message);
      fputc('}', f);
    }
    if (r->expected) {
      fputs(", \"expected_failure\": ", f);
      conf_json_str(f, r->expected);
    }
    fprintf(f, ", \"seconds\": %.3f}%s\n", r->seconds, i + 1 < n ? "," : "");
  }
  fputs("  ]\n}\n", f);
  return fclose(f);
}

int conf_is_fail(int st) {
  return st == CONF_ST_FAIL || st == CONF_ST_XFAIL;
}
int conf_is_pass(int st) {
  return st == CONF_ST_PASS || st == CONF_ST_XPASS;
}

int conf_list_has(const char *csv, const char *name) {
  size_t ln = strlen(name);
  const char *p = csv;
  while (p && *p) {
    while (*p == ' ') p++;
    size_t n = strcspn(p, ",");
    if (n == ln && !strncmp(p, name, n)) return 1;
    p += n;
    if (*p == ',') p++;
  }
  return 0;
}

int conf_filter_match(const char *filter, const char *name) {
  if (!filter) return 1;
  const char *p = filter;
  while (*p) {
    size_t n = strcspn(p, ",");
    if (n) {
      char *sub = conf_xprintf("%.*s", (int)n, p);
      int hit = strstr(name, sub) != NULL;
      free(sub);
      if (hit) return 1;
    }
    p += n;
    if (*p == ',') p++;
  }
  return 0;
}

void conf_count(const conf_result_t *rs, size_t n, const char *suite, conf_counts_t *c) {
  memset(c, 0, sizeof(*c));
  for (size_t i = 0; i < n; i++) {
    if (suite && strcmp(rs[i].suite, suite) != 0) continue;
    c->total++;
    if (conf_is_pass(rs[i].status)) {
      c->pass++;
    } else if (conf_is_fail(rs[i].status)) {
      c->fail++;
      if (rs[i].kind && !strcmp(rs[i].kind, CONF_KIND_SPECIALIZED)) c->special++;
    } else {
      c->skip++;
    }
  }
}

int conf_write_expected(const char *path, const conf_result_t *rs, size_t n,
                        const conf_expected_t *old, const char *header) {
  char tmp[4096];
  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) return -1;
  /* The list's own leading comment stays (each list says how to refresh
   * it); a new list gets `header`. */
  int kept = 0;
  FILE *in = fopen(path, "r");
  if (in) {
    char line[4096];
    while (fgets(line, sizeof line, in) && line[0] == '#') {
      fputs(line, f);
      kept = 1;
    }
    fclose(in);
  }
  if (!kept && header) fputs(header, f);
  for (size_t i = 0; i < n; i++) {
    const conf_result_t *r = &rs[i];
    if (conf_is_pass(r->status)) continue;
    long k = conf_find_expected(old, r->suite, r->name);
    /* an old reason stays while the test fails the same way (its kind:
     * "compile error", "wrong values", ...); else the new one replaces it */
    if (k >= 0 && r->kind && !strncmp(old->reasons[k], r->kind, strlen(r->kind))) {
      fprintf(f, "%s/%s %s\n", r->suite, r->name, old->reasons[k]);
    } else {
      char *reason = conf_generated_reason(r);
      fprintf(f, "%s/%s %s\n", r->suite, r->name, reason);
      free(reason);
    }
  }
  if (fclose(f) != 0) return -1;
  return rename(tmp, path);
}

void conf_expected_free(conf_expected_t *e) {
  for (size_t i = 0; i < e->n; i++) free(e->keys[i]), free(e->reasons[i]);
  free(e->keys);
  free(e->reasons);
  free(e->used);
  memset(e, 0, sizeof(*e));
}

int conf_apply_expected(conf_result_t *rs, size_t n, conf_expected_t *e, int update,
                        int all) {
  int unexpected = 0;
  for (size_t i = 0; i < n; i++) {
    conf_result_t *r = &rs[i];
    long k = conf_find_expected(e, r->suite, r->name);
    if (k >= 0) {
      e->used[k] = 1;
      r->expected = e->reasons[k];
    }
    if (r->status == CONF_ST_PASS && k >= 0) r->status = CONF_ST_XPASS;
    if (r->status == CONF_ST_FAIL && k >= 0) r->status = CONF_ST_XFAIL;
    int bad = r->status == CONF_ST_XPASS || r->status == CONF_ST_FAIL ||
              (r->status == CONF_ST_SKIP && k < 0);
    if (bad && !update) {
      if (!unexpected) printf("unexpected results:\n");
      unexpected++;
      char *why = conf_generated_reason(r);
      printf("  %s %s/%s%s%s\n",
             r->status == CONF_ST_XPASS
                 ? "XPASS (listed, now passes; remove it from the list):"
             : r->status == CONF_ST_SKIP ? "SKIP (not listed):"
                                         : "FAIL:",
             r->suite, r->name, r->status == CONF_ST_XPASS ? "" : ": ",
             r->status == CONF_ST_XPASS ? "" : why);
      free(why);
    }
  }
  for (size_t i = 0; i < e->n; i++)
    if (!e->used[i] && all)
      printf("note: expected-failure entry '%s' names no test\n", e->keys[i]);
  return unexpected;
}

/* ==== the runners' shared command line and report ======================== */

int conf_take_flag(conf_opts_t *o, int argc, char **argv, int *i) {
  const char *a = argv[*i], *next = *i + 1 < argc ? argv[*i + 1] : NULL;
  const char **str = !strcmp(a, "--device")          ? &o->device
                     : !strcmp(a, "--expected")      ? &o->expected_path
                     : !strcmp(a, "--json")          ? &o->json_path
                     : !strcmp(a, "--suites")        ? &o->suites
                     : !strcmp(a, "--filter")        ? &o->filter
                     : !strcmp(a, "--expect-device") ? &o->expect_device
                                                     : NULL;
  if (str && next) {
    *str = next;
  } else if (!strcmp(a, "-j") && next) {
    o->jobs = atoi(next);
  } else if (!strcmp(a, "--timeout") && next) {
    conf_timeout_s = atoi(next);
  } else {
    if (!strcmp(a, "--update-expected"))
      o->update = 1;
    else if (!strcmp(a, "-v"))
      o->verbose = 1;
    else
      return 0;
    return 1;
  }
  (*i)++;
  return 1;
}

int conf_opts_check(conf_opts_t *o, conf_expected_t *exp) {
  memset(exp, 0, sizeof(*exp));
  if (o->jobs < 1) o->jobs = 1;
  if (o->update && !o->expected_path) {
    fprintf(stderr, "%s: --update-expected needs --expected FILE\n", o->prog);
    return 2;
  }
  if (o->update && (o->suites || o->filter)) {
    fprintf(stderr,
            "%s: --update-expected needs a run over every test (no --suites or "
            "--filter)\n",
            o->prog);
    return 2;
  }
  if (conf_timeout_s < 1) conf_timeout_s = 1;
  if (!o->expected_path) return 0;
  int r = conf_load_expected(o->expected_path, exp);
  if (r == -1 && !o->update) {
    fprintf(stderr, "%s: cannot read '%s'\n", o->prog, o->expected_path);
    return 2;
  }
  return r == -2 && !o->update ? 1 : 0;
}

void conf_print_suite_counts(const conf_result_t *rs, size_t n) {
  conf_counts_t c;
  for (size_t s = 0; s < CONF_N_SUITES; s++) {
    conf_count(rs, n, conf_suite_names[s], &c);
    if (c.total)
      printf("%s: %d passed, %d failed, %d skipped\n", conf_suite_names[s], c.pass,
             c.fail, c.skip);
  }
}

int conf_finish_run(const conf_opts_t *o, const conf_result_t *rs, size_t n,
                    const conf_expected_t *exp, int unexpected, const char *header,
                    int rc) {
  conf_counts_t c;
  conf_count(rs, n, NULL, &c);
  if (o->expected_path && !o->update)
    printf(
        "%d unexpected (failing or skipped without being listed, or listed and "
        "passing)\n",
        unexpected);
  printf("%d passed, %d failed, %d skipped\n", c.pass, c.fail, c.skip);
  if (o->json_path && conf_write_json(o->json_path, (conf_result_t *)rs, n) != 0) {
    fprintf(stderr, "%s: cannot write '%s'\n", o->prog, o->json_path);
    rc = 2;
  }
  if (o->update) {
    if (conf_write_expected(o->expected_path, rs, n, exp, header) != 0) {
      fprintf(stderr, "%s: cannot write '%s'\n", o->prog, o->expected_path);
      rc = 2;
    } else {
      printf("wrote %s\n", o->expected_path);
    }
  } else if (unexpected && !rc) {
    rc = 1;
  }
  return rc;
}

void conf_free_run(conf_result_t *rs, char **dirs, size_t n, conf_expected_t *exp) {
  for (size_t i = 0; i < n; i++) {
    conf_result_free(&rs[i]);
    free(dirs[i]);
  }
  conf_expected_free(exp);
  free(rs);
  free(dirs);
}
