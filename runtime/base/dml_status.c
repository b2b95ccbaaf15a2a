#include "dml_status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dml_status_rec {
  dml_status_code_t code;
  int is_static;
  char *op;
  char *reason;
  char *details; /* newline-separated lines, may be NULL */
};

static struct dml_status_rec g_oom = {DML_STATUS_RESOURCE_EXHAUSTED, 1, "alloc",
                                      "out of memory", NULL};

static char *vformat(const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) return NULL;
  char *s = (char *)malloc((size_t)n + 1);
  if (!s) return NULL;
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  return s;
}

static char *dup_str(const char *s) {
  if (!s) s = "";
  size_t n = strlen(s);
  char *d = (char *)malloc(n + 1);
  if (d) memcpy(d, s, n + 1);
  return d;
}

dml_status_t dml_status_make(dml_status_code_t code, const char *op,
                             const char *reason_fmt, ...) {
  if (code == DML_STATUS_OK) code = DML_STATUS_INTERNAL;
  struct dml_status_rec *s = (struct dml_status_rec *)calloc(1, sizeof(*s));
  if (!s) return &g_oom;
  s->code = code;
  s->op = dup_str(op);
  va_list ap;
  va_start(ap, reason_fmt);
  s->reason = vformat(reason_fmt, ap);
  va_end(ap);
  if (!s->op || !s->reason) {
    free(s->op);
    free(s->reason);
    free(s);
    return &g_oom;
  }
  return s;
}

static dml_status_t append_line(dml_status_t s, char *line) {
  if (!line) return s;
  if (s->is_static) {
    free(line);
    return s;
  }
  size_t old = s->details ? strlen(s->details) : 0;
  size_t add = strlen(line);
  char *d = (char *)realloc(s->details, old + add + 2);
  if (!d) {
    free(line);
    return s;
  }
  if (old) d[old++] = '\n';
  memcpy(d + old, line, add + 1);
  s->details = d;
  free(line);
  return s;
}

dml_status_t dml_status_detail(dml_status_t s, const char *fmt, ...) {
  if (!s) return s;
  va_list ap;
  va_start(ap, fmt);
  char *line = vformat(fmt, ap);
  va_end(ap);
  return append_line(s, line);
}

dml_status_t dml_status_annotate(dml_status_t s, const char *fmt, ...) {
  if (!s) return s;
  va_list ap;
  va_start(ap, fmt);
  char *ctx = vformat(fmt, ap);
  va_end(ap);
  if (!ctx) return s;
  size_t n = strlen(ctx) + 8;
  char *line = (char *)malloc(n);
  if (line) snprintf(line, n, "while %s", ctx);
  free(ctx);
  return append_line(s, line);
}

dml_status_code_t dml_status_code(dml_status_t s) {
  return s ? s->code : DML_STATUS_OK;
}
const char *dml_status_op(dml_status_t s) {
  return s && s->op ? s->op : "";
}
const char *dml_status_reason(dml_status_t s) {
  return s && s->reason ? s->reason : "";
}
const char *dml_status_details(dml_status_t s) {
  return s && s->details ? s->details : "";
}

const char *dml_status_code_name(dml_status_code_t code) {
  switch (code) {
    case DML_STATUS_OK: return "ok";
    case DML_STATUS_INVALID_ARGUMENT: return "invalid_argument";
    case DML_STATUS_NOT_FOUND: return "not_found";
    case DML_STATUS_UNIMPLEMENTED: return "unimplemented";
    case DML_STATUS_OUT_OF_RANGE: return "out_of_range";
    case DML_STATUS_DATA_LOSS: return "data_loss";
    case DML_STATUS_RESOURCE_EXHAUSTED: return "resource_exhausted";
    case DML_STATUS_FAILED_PRECONDITION: return "failed_precondition";
    case DML_STATUS_INTERNAL: return "internal";
    case DML_STATUS_IO: return "io";
  }
  return "unknown";
}

char *dml_status_format(dml_status_t s) {
  if (!s) return NULL;
  const char *d = dml_status_details(s);
  size_t n = strlen(s->op) + strlen(s->reason) + strlen(d) * 2 + 64;
  char *out = (char *)malloc(n);
  if (!out) return NULL;
  int k = snprintf(out, n, "error: %s: %s", s->op, s->reason);
  /* Indent each details line by two spaces. */
  const char *p = d;
  while (*p && k > 0 && (size_t)k < n) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    k += snprintf(out + k, n - (size_t)k, "\n  %.*s", (int)len, p);
    p += len;
    if (*p == '\n') p++;
  }
  return out;
}

void dml_status_free(dml_status_t s) {
  if (!s || s->is_static) return;
  free(s->op);
  free(s->reason);
  free(s->details);
  free(s);
}
