/*
 * cpu_strings.c — string tensors (DML_DTYPE_STRING, dml_str_t elements) on
 * the CPU: the string heap, Cast to and from strings, Equal on strings,
 * StringConcat, StringSplit, StringNormalizer, RegexFullMatch and
 * LabelEncoder (ai.onnx.ml).
 *
 * String results are new bytes: they go to the call's string heap
 * (dml_cpu_call_t.strings, owned by the session and reset at the start of
 * each run; docs/package-format.md "String tensors"). This is the one
 * place where kernels allocate at run time: a string's length is only
 * known from the data. Inputs' bytes are never copied where a result is an
 * input element unchanged (StringNormalizer without case change,
 * LabelEncoder's string values point at the node's attribute).
 *
 * Bytes are passed through unchanged: dmlc does not validate UTF-8.
 * StringSplit splits on bytes (a delimiter that is valid UTF-8 never
 * matches inside a multi-byte character of valid UTF-8 input), case
 * changes map ASCII, Latin-1, Greek and Cyrillic letters of valid UTF-8 and
 * leave every other byte sequence as it is.
 */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "dml_strcase.h"

/* ======================================================================
 * The string heap
 * ====================================================================== */

typedef struct strheap_chunk {
  struct strheap_chunk *next;
  size_t cap, used;
  /* bytes follow */
} strheap_chunk_t;

struct dml_cpu_strheap {
  strheap_chunk_t *head;
  uint64_t total;
};

dml_cpu_strheap_t *dml_cpu_strheap_create(void) {
  return (dml_cpu_strheap_t *)calloc(1, sizeof(dml_cpu_strheap_t));
}

void dml_cpu_strheap_reset(dml_cpu_strheap_t *h) {
  if (!h) return;
  /* keep the newest (largest) chunk, free the others */
  strheap_chunk_t *c = h->head;
  if (!c) return;
  strheap_chunk_t *rest = c->next;
  while (rest) {
    strheap_chunk_t *n = rest->next;
    free(rest);
    rest = n;
  }
  c->next = NULL;
  c->used = 0;
  h->total = 0;
}

void dml_cpu_strheap_release(dml_cpu_strheap_t *h) {
  if (!h) return;
  strheap_chunk_t *c = h->head;
  while (c) {
    strheap_chunk_t *n = c->next;
    free(c);
    c = n;
  }
  free(h);
}

uint64_t dml_cpu_strheap_bytes(const dml_cpu_strheap_t *h) {
  return h ? h->total : 0;
}

char *dml_cpu_strheap_alloc(dml_cpu_strheap_t *h, size_t n) {
  if (!h) return NULL;
  if (n == 0) n = 1;
  strheap_chunk_t *c = h->head;
  if (!c || c->cap - c->used < n) {
    size_t cap = c ? c->cap * 2 : (size_t)65536;
    if (cap < n) cap = n;
    if (cap > SIZE_MAX - sizeof(strheap_chunk_t)) return NULL;
    strheap_chunk_t *nc = (strheap_chunk_t *)malloc(sizeof(strheap_chunk_t) + cap);
    if (!nc) return NULL;
    nc->cap = cap;
    nc->used = 0;
    nc->next = c;
    h->head = nc;
    c = nc;
  }
  char *p = (char *)(c + 1) + c->used;
  c->used += n;
  h->total += n;
  return p;
}

/* ======================================================================
 * Helpers
 * ====================================================================== */

static dml_status_t need_heap(const dml_cpu_call_t *c) {
  if (c->strings) return DML_OK;
  return dml_cpu_error(c, DML_STATUS_FAILED_PRECONDITION,
                       "string results need the session's string heap (the call has "
                       "none: string ops are not constant-folded)");
}

static dml_status_t heap_oom(const dml_cpu_call_t *c, size_t n) {
  return dml_cpu_error(c, DML_STATUS_RESOURCE_EXHAUSTED,
                       "out of memory for %zu bytes of string results", n);
}

/* Copies `n` bytes into the heap as a string descriptor. */
static int heap_str(const dml_cpu_call_t *c, const char *src, size_t n, dml_str_t *out) {
  if (n == 0) {
    out->data = "";
    out->len = 0;
    return 0;
  }
  char *p = dml_cpu_strheap_alloc(c->strings, n);
  if (!p) return -1;
  memcpy(p, src, n);
  out->data = p;
  out->len = n;
  return 0;
}

static int str_eq(const dml_str_t *a, const dml_str_t *b) {
  return a->len == b->len &&
         (a->len == 0 || memcmp(a->data, b->data, (size_t)a->len) == 0);
}

static int str_eq_c(const dml_str_t *a, const char *s) {
  size_t n = strlen(s);
  return a->len == n && (n == 0 || memcmp(a->data, s, n) == 0);
}

/* ======================================================================
 * Cast (ONNX Cast-19/21 "string" rules)
 * ====================================================================== */

/* Shortest decimal of `v` that reads back as the same float (f32 when
 * `single`) written as NumPy's str() of np.float32/np.float64 does (the
 * reference of ONNX's Cast FLOAT -> STRING tests: '0.039187793', '1e-05',
 * '100000.0', 'nan', 'inf', '-0.0'): positional for 1e-4 <= |v| < 1e16,
 * else d.ddde+XX. */
static size_t format_float(double v, int single, char *out, size_t cap) {
  if (isnan(v)) return (size_t)snprintf(out, cap, "nan");
  if (isinf(v)) return (size_t)snprintf(out, cap, v < 0 ? "-inf" : "inf");
  if (v == 0) return (size_t)snprintf(out, cap, signbit(v) ? "-0.0" : "0.0");
  char e[64];
  int maxp = single ? 9 : 17;
  for (int p = 1; p <= maxp; p++) {
    snprintf(e, sizeof e, "%.*e", p - 1, v);
    if (single ? strtof(e, NULL) == (float)v : strtod(e, NULL) == v) break;
  }
  /* e = [-]d[.ddd]e[+-]XX */
  const char *s = e;
  int neg = *s == '-';
  if (neg) s++;
  char digits[32];
  size_t nd = 0;
  for (; *s && *s != 'e'; s++)
    if (*s >= '0' && *s <= '9' && nd < sizeof digits - 1) digits[nd++] = *s;
  digits[nd] = 0;
  while (nd > 1 && digits[nd - 1] == '0') digits[--nd] = 0;
  int exp10 = atoi(s + 1);
  size_t k = 0;
  char buf[96];
  if (neg) buf[k++] = '-';
  if (exp10 >= -4 && exp10 < 16) {
    if (exp10 < 0) {
      buf[k++] = '0';
      buf[k++] = '.';
      for (int i = 0; i < -exp10 - 1; i++) buf[k++] = '0';
      for (size_t i = 0; i < nd; i++) buf[k++] = digits[i];
    } else {
      for (int i = 0; i <= exp10; i++) buf[k++] = (size_t)i < nd ? digits[i] : '0';
      buf[k++] = '.';
      if ((size_t)exp10 + 1 < nd)
        for (size_t i = (size_t)exp10 + 1; i < nd; i++) buf[k++] = digits[i];
      else
        buf[k++] = '0';
    }
    buf[k] = 0;
  } else {
    buf[k++] = digits[0];
    if (nd > 1) {
      buf[k++] = '.';
      for (size_t i = 1; i < nd; i++) buf[k++] = digits[i];
    }
    snprintf(buf + k, sizeof buf - k, "e%c%02d", exp10 < 0 ? '-' : '+',
             exp10 < 0 ? -exp10 : exp10);
  }
  return (size_t)snprintf(out, cap, "%s", buf);
}

/* Parses a whole string as a number with strtod's syntax ("1e5", "-0x1p3",
 * "NaN", "INF", "-inf", "infinity"; surrounding blanks allowed). */
static int parse_double(const dml_str_t *s, double *out) {
  char tmp[128];
  char *heap = NULL, *b = tmp;
  if (s->len >= sizeof tmp) {
    if (s->len > 1u << 20) return -1;
    heap = b = (char *)malloc((size_t)s->len + 1);
    if (!b) return -1;
  }
  if (s->len) memcpy(b, s->data, (size_t)s->len);
  b[s->len] = 0;
  int ok = 0;
  if (strlen(b) == s->len) { /* no NUL inside */
    char *end = NULL;
    errno = 0;
    double v = strtod(b, &end);
    while (end && (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')) end++;
    if (end && end != b && *end == 0) {
      *out = v;
      ok = 1;
    }
  }
  free(heap);
  return ok ? 0 : -1;
}

/* The range [lo, hi) of integer dtype dt, as doubles (exact: powers of 2). */
static void int_range(dml_dtype_t dt, double *lo, double *hi) {
  int bits = (int)dml_dtype_size(dt) * 8;
  if (dml_dtype_is_signed_int(dt)) {
    *lo = -ldexp(1.0, bits - 1);
    *hi = ldexp(1.0, bits - 1);
  } else {
    *lo = 0.0;
    *hi = ldexp(1.0, bits);
  }
}

static dml_status_t cast_strings(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  int64_t n = dml_cpu_numel(x);
  if (x->dtype == DML_DTYPE_STRING && y->dtype == DML_DTYPE_STRING) {
    memcpy(y->data, x->data, (size_t)n * sizeof(dml_str_t));
    return DML_OK;
  }
  if (x->dtype == DML_DTYPE_STRING) {
    const dml_str_t *xs = (const dml_str_t *)x->data;
    for (int64_t i = 0; i < n; i++) {
      double v = 0;
      if (parse_double(&xs[i], &v) != 0) {
        char shown[64];
        size_t len = xs[i].len < 40 ? (size_t)xs[i].len : 40;
        memcpy(shown, xs[i].data, len);
        shown[len] = 0;
        return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                             "element %lld ('%s%s') is not a number (strtod syntax: "
                             "digits, exponents, NaN, INF, -inf)",
                             (long long)i, shown, xs[i].len > 40 ? "..." : "");
      }
      if (dml_dtype_is_float(y->dtype) || y->dtype == DML_DTYPE_BOOL) {
        dml_store_f64(y->dtype, y->data, (size_t)i, v);
      } else {
        /* integers: truncated toward zero (the ONNX spec: "100.5" may
         * yield 100); the value must be in the dtype's range. Strings of
         * digits are read exactly (above 2^53 too) with strtoll/strtoull. */
        double lo, hi;
        int_range(y->dtype, &lo, &hi);
        v = trunc(v);
        if (!(v >= lo && v < hi))
          return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                               "element %lld (%.17g) is outside the range of %s",
                               (long long)i, v, dml_dtype_name(y->dtype));
        char tmp[64];
        size_t len = xs[i].len < 63 ? (size_t)xs[i].len : 63;
        memcpy(tmp, xs[i].data, len);
        tmp[len] = 0;
        errno = 0;
        char *end = NULL;
        if (y->dtype == DML_DTYPE_U64) {
          unsigned long long u = strtoull(tmp, &end, 10);
          if (errno || !end || *end || tmp[0] == '-') u = (unsigned long long)v;
          ((uint64_t *)y->data)[i] = u;
        } else {
          long long s = strtoll(tmp, &end, 10);
          if (errno || !end || *end) s = (long long)v;
          dml_store_i64(y->dtype, y->data, (size_t)i, s);
        }
      }
    }
    return DML_OK;
  }
  DML_RETURN_IF_ERROR(need_heap(c));
  dml_str_t *ys = (dml_str_t *)y->data;
  for (int64_t i = 0; i < n; i++) {
    char b[96];
    size_t len;
    if (dml_dtype_is_float(x->dtype)) {
      double v = dml_load_f64(x->dtype, x->data, (size_t)i);
      len = format_float(v, x->dtype != DML_DTYPE_F64, b, sizeof b);
    } else if (x->dtype == DML_DTYPE_BOOL) {
      len = (size_t)snprintf(b, sizeof b, "%s",
                             ((const uint8_t *)x->data)[i] ? "True" : "False");
    } else if (x->dtype == DML_DTYPE_U64) {
      len = (size_t)snprintf(b, sizeof b, "%llu",
                             (unsigned long long)((const uint64_t *)x->data)[i]);
    } else if (dml_dtype_is_int(x->dtype)) {
      len = (size_t)snprintf(b, sizeof b, "%lld",
                             (long long)dml_load_i64(x->dtype, x->data, (size_t)i));
    } else {
      return dml_cpu_err_dtype(c, "input", x->dtype);
    }
    if (heap_str(c, b, len, &ys[i])) return heap_oom(c, len);
  }
  return DML_OK;
}

/* ======================================================================
 * Broadcast binary string ops: Equal (-> bool), StringConcat (-> string)
 * ====================================================================== */

typedef struct {
  const dml_cpu_call_t *c;
  const dml_str_t *a, *b;
  int64_t sa, sb;
  void *out;
  int concat;
  int failed;
} bin_ctx_t;

static void bin_row(void *vctx, int64_t out_off, const int64_t *in_offs, int64_t n) {
  bin_ctx_t *x = (bin_ctx_t *)vctx;
  if (x->failed) return;
  for (int64_t i = 0; i < n; i++) {
    const dml_str_t *a = &x->a[in_offs[0] + i * x->sa];
    const dml_str_t *b = &x->b[in_offs[1] + i * x->sb];
    if (!x->concat) {
      ((uint8_t *)x->out)[out_off + i] = (uint8_t)str_eq(a, b);
      continue;
    }
    dml_str_t *o = &((dml_str_t *)x->out)[out_off + i];
    size_t len = (size_t)(a->len + b->len);
    if (len == 0) {
      o->data = "";
      o->len = 0;
      continue;
    }
    char *p = dml_cpu_strheap_alloc(x->c->strings, len);
    if (!p) {
      x->failed = 1;
      return;
    }
    if (a->len) memcpy(p, a->data, (size_t)a->len);
    if (b->len) memcpy(p + a->len, b->data, (size_t)b->len);
    o->data = p;
    o->len = len;
  }
}

static dml_status_t binary_strings(const dml_cpu_call_t *c, int concat) {
  const dml_tensor_t *a = &c->inputs[0], *b = &c->inputs[1];
  dml_tensor_t *y = &c->outputs[0];
  if (a->dtype != DML_DTYPE_STRING || b->dtype != DML_DTYPE_STRING)
    return dml_cpu_err_shapes(c, "both inputs must be strings");
  if (y->dtype != (concat ? DML_DTYPE_STRING : DML_DTYPE_BOOL))
    return dml_cpu_err_dtype(c, "output", y->dtype);
  if (concat) DML_RETURN_IF_ERROR(need_heap(c));
  if (dml_cpu_numel(y) == 0) return DML_OK;
  const dml_tensor_t *ins[2] = {a, b};
  dml_cpu_bcast_t bc;
  if (dml_cpu_bcast_init(&bc, y->dims, y->rank, ins, 2) != 0)
    return dml_cpu_err_shapes(c, "inputs do not broadcast to the output");
  bin_ctx_t x = {
      c, (const dml_str_t *)a->data, (const dml_str_t *)b->data, 0, 0, y->data, concat,
      0};
  x.sa = bc.rank ? bc.strides[0][bc.rank - 1] : 0;
  x.sb = bc.rank ? bc.strides[1][bc.rank - 1] : 0;
  dml_cpu_bcast_walk(&bc, bin_row, &x);
  if (x.failed) return heap_oom(c, 0);
  return DML_OK;
}

dml_status_t dml_cpuk_StringConcat(const dml_cpu_call_t *c) {
  return binary_strings(c, 1);
}

/* ======================================================================
 * StringSplit (ONNX StringSplit-20)
 * ====================================================================== */

static int is_space(char ch) {
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
}

/* Splits s as Python's str.split(sep, maxsplit) does (sep NULL: runs of
 * whitespace, leading and trailing whitespace ignored, except that the
 * remainder after maxsplit splits keeps its trailing whitespace, as in
 * CPython: "a b ".split(None, 1) == ["a", "b "]); calls emit(i, piece)
 * for every piece and returns the count. maxsplit < 0: no limit. */
typedef void (*piece_fn)(void *ctx, int64_t k, const char *p, size_t n);

static int64_t split_one(const dml_str_t *s, const char *sep, size_t sep_len,
                         int64_t maxsplit, piece_fn emit, void *ctx) {
  const char *p = s->data ? s->data : "";
  size_t n = (size_t)s->len, i = 0;
  int64_t count = 0;
  if (!sep) {
    for (;;) {
      while (i < n && is_space(p[i])) i++;
      if (i >= n) break;
      if (maxsplit >= 0 && count == maxsplit) {
        /* the rest, its trailing whitespace kept (CPython's split) */
        if (emit) emit(ctx, count, p + i, n - i);
        count++;
        break;
      }
      size_t st = i;
      while (i < n && !is_space(p[i])) i++;
      if (emit) emit(ctx, count, p + st, i - st);
      count++;
    }
    return count;
  }
  size_t st = 0;
  while (maxsplit < 0 || count < maxsplit) {
    const char *hit = NULL;
    for (size_t j = st; j + sep_len <= n; j++)
      if (memcmp(p + j, sep, sep_len) == 0) {
        hit = p + j;
        break;
      }
    if (!hit) break;
    size_t at = (size_t)(hit - p);
    if (emit) emit(ctx, count, p + st, at - st);
    count++;
    st = at + sep_len;
  }
  if (emit) emit(ctx, count, p + st, n - st);
  return count + 1;
}

typedef struct {
  const dml_cpu_call_t *c;
  dml_str_t *row;
  int failed;
} split_ctx_t;

static void split_emit(void *vctx, int64_t k, const char *p, size_t n) {
  split_ctx_t *x = (split_ctx_t *)vctx;
  /* pieces point into the input's bytes: immutable while the run lasts */
  (void)x->c;
  x->row[k].data = n ? p : "";
  x->row[k].len = n;
}

dml_status_t dml_cpuk_StringSplit(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  dml_tensor_t *cnt = dml_cpu_out(c, 1);
  if (x->dtype != DML_DTYPE_STRING) return dml_cpu_err_dtype(c, "input", x->dtype);
  if (y->dtype != DML_DTYPE_STRING || y->rank != x->rank + 1 ||
      (cnt && (cnt->dtype != DML_DTYPE_I64 || cnt->rank != x->rank)))
    return dml_cpu_err_shapes(c, "outputs must be string [X dims, k] and i64 [X dims]");
  const char *delim = dml_cpu_get_string(c, "delimiter", "");
  const char *sep = delim && *delim ? delim : NULL;
  size_t sep_len = sep ? strlen(sep) : 0;
  int64_t maxsplit = dml_cpu_get_int(c, "maxsplit", -1);
  if (maxsplit < 0) maxsplit = -1;
  int64_t n = dml_cpu_numel(x);
  const dml_str_t *xs = (const dml_str_t *)x->data;
  int64_t k = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t m = split_one(&xs[i], sep, sep_len, maxsplit, NULL, NULL);
    if (m > k) k = m;
  }
  int64_t bound = y->dims[y->rank - 1];
  if (k > bound)
    return dml_cpu_error(c, DML_STATUS_OUT_OF_RANGE,
                         "a string splits into %lld pieces, above the bound %lld of "
                         "the output's last dim (dmlc compile --dynamic-dim-bound)",
                         (long long)k, (long long)bound);
  if (n > 0 && k > 0 && (uint64_t)n > UINT64_MAX / (uint64_t)k)
    return dml_cpu_err_shapes(c, "output size overflows");
  y->dims[y->rank - 1] = k;
  dml_str_t *ys = (dml_str_t *)y->data;
  for (int64_t i = 0; i < n; i++) {
    dml_str_t *row = ys + i * k;
    for (int64_t j = 0; j < k; j++) row[j].data = "", row[j].len = 0;
    split_ctx_t sc = {c, row, 0};
    int64_t m = split_one(&xs[i], sep, sep_len, maxsplit, split_emit, &sc);
    if (cnt) ((int64_t *)cnt->data)[i] = m;
  }
  return DML_OK;
}

/* ======================================================================
 * StringNormalizer (ONNX StringNormalizer-10)
 * ====================================================================== */

/* Decodes one UTF-8 code point at p[0..n); returns its byte length (0 when
 * the bytes are not valid UTF-8 there). */
static size_t utf8_decode(const unsigned char *p, size_t n, uint32_t *cp) {
  if (n == 0) return 0;
  if (p[0] < 0x80) {
    *cp = p[0];
    return 1;
  }
  if ((p[0] & 0xE0) == 0xC0 && n >= 2 && (p[1] & 0xC0) == 0x80 && p[0] >= 0xC2) {
    *cp = ((uint32_t)(p[0] & 0x1F) << 6) | (p[1] & 0x3F);
    return 2;
  }
  return 0; /* 3- and 4-byte sequences: no case pairs handled here */
}

/* Simple case mapping (UnicodeData.txt) of ASCII, Latin-1 Supplement,
 * Greek (U+0391..U+03A9 / U+03B1..U+03C9) and Cyrillic (U+0400..U+042F /
 * U+0430..U+045F); other code points are returned unchanged. With `rule`
 * DML_STRCASE_ASCII (the "C" and "POSIX" locales, dml_strcase.h) ASCII
 * letters only. */
static uint32_t case_map(uint32_t cp, int upper, dml_strcase_rule_t rule) {
  if (rule == DML_STRCASE_ASCII && cp >= 0x80) return cp;
  if (upper) {
    if (cp >= 'a' && cp <= 'z') return cp - 32;
    if (cp >= 0xE0 && cp <= 0xFE && cp != 0xF7) return cp - 32;
    if (cp == 0xFF) return cp; /* ÿ -> U+0178, outside the 2-byte range kept */
    if (cp >= 0x3B1 && cp <= 0x3C9 && cp != 0x3C2) return cp - 32;
    if (cp >= 0x430 && cp <= 0x44F) return cp - 32;
    if (cp >= 0x450 && cp <= 0x45F) return cp - 80;
  } else {
    if (cp >= 'A' && cp <= 'Z') return cp + 32;
    if (cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) return cp + 32;
    if (cp >= 0x391 && cp <= 0x3A9 && cp != 0x3A2) return cp + 32;
    if (cp >= 0x410 && cp <= 0x42F) return cp + 32;
    if (cp >= 0x400 && cp <= 0x40F) return cp + 80;
  }
  return cp;
}

/* Case-changes s into out (same byte length: every mapping above keeps the
 * UTF-8 length). */
static void change_case(const char *s, size_t n, int upper, dml_strcase_rule_t rule,
                        char *out) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;
  while (i < n) {
    uint32_t cp = 0;
    size_t l = utf8_decode(p + i, n - i, &cp);
    if (l == 0) {
      out[i] = (char)p[i];
      i++;
      continue;
    }
    uint32_t m = case_map(cp, upper, rule);
    if (l == 1) {
      out[i] = (char)m;
    } else {
      out[i] = (char)(0xC0 | (m >> 6));
      out[i + 1] = (char)(0x80 | (m & 0x3F));
    }
    i += l;
  }
}

/* 1 when `w` (n bytes) is one of the stopwords; case-insensitive compares
 * after mapping both to `fold` (-1: exact). */
static int is_stopword(const char *w, size_t n, const char *const *stops, size_t n_stops,
                       int fold, dml_strcase_rule_t rule, char *tmp_a, char *tmp_b) {
  for (size_t k = 0; k < n_stops; k++) {
    size_t sl = strlen(stops[k]);
    if (sl != n) continue;
    if (fold < 0) {
      if (memcmp(w, stops[k], n) == 0) return 1;
      continue;
    }
    change_case(w, n, fold, rule, tmp_a);
    change_case(stops[k], n, fold, rule, tmp_b);
    if (memcmp(tmp_a, tmp_b, n) == 0) return 1;
  }
  return 0;
}

dml_status_t dml_cpuk_StringNormalizer(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  if (x->dtype != DML_DTYPE_STRING || y->dtype != DML_DTYPE_STRING)
    return dml_cpu_err_dtype(c, "input", x->dtype);
  if (x->rank != 1 && x->rank != 2)
    return dml_cpu_err_shapes(c, "input must be [C] or [N, C]");
  DML_RETURN_IF_ERROR(need_heap(c));
  const char *action = dml_cpu_get_string(c, "case_change_action", "NONE");
  int change = strcmp(action, "LOWER") == 0 ? 0 : strcmp(action, "UPPER") == 0 ? 1 : -1;
  if (change < 0 && strcmp(action, "NONE") != 0)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "case_change_action '%s' is not LOWER, UPPER or NONE", action);
  int sensitive = dml_cpu_get_int(c, "is_case_sensitive", 0) != 0;
  const dml_attr_t *sw = dml_attr_find(c->attrs, c->n_attrs, "stopwords");
  const char *const *stops = sw && sw->kind == DML_ATTR_STRINGS ? sw->strings : NULL;
  size_t n_stops = stops ? sw->n : 0;
  /* the locale: a name always checked, its case rule refused only where a
   * case mapping runs (ir/infer.c refuses the same at compile time) */
  dml_strcase_rule_t rule = DML_STRCASE_UNICODE;
  char why[256];
  int lrc =
      dml_strcase_locale(dml_cpu_get_string(c, "locale", NULL), &rule, why, sizeof why);
  if (lrc < 0 || (lrc > 0 && (change >= 0 || (n_stops && !sensitive))))
    return dml_cpu_error(
        c, lrc < 0 ? DML_STATUS_INVALID_ARGUMENT : DML_STATUS_UNIMPLEMENTED, "%s", why);
  int64_t n = dml_cpu_numel(x);
  const dml_str_t *xs = (const dml_str_t *)x->data;
  dml_str_t *ys = (dml_str_t *)y->data;
  /* Filtering happens for [C] and [1, C] (ONNX's reference): elements
   * that end up empty are dropped, and an all-empty result is [""]. For
   * [N, C] with N > 1, stopwords are removed inside each element. */
  int filter = x->rank == 1 || x->dims[0] == 1;
  int64_t kept = 0;
  size_t maxlen = 0;
  for (int64_t i = 0; i < n; i++)
    if (xs[i].len > maxlen) maxlen = (size_t)xs[i].len;
  for (size_t k = 0; k < n_stops; k++)
    if (strlen(stops[k]) > maxlen) maxlen = strlen(stops[k]);
  char *ta = dml_cpu_strheap_alloc(c->strings, 2 * maxlen + 2);
  if (!ta) return heap_oom(c, 2 * maxlen + 2);
  char *tb = ta + maxlen + 1;
  for (int64_t i = 0; i < n; i++) {
    /* remove stopwords: words separated by single spaces (str.split(" ")),
     * rejoined with " " */
    const char *s = xs[i].data ? xs[i].data : "";
    size_t len = (size_t)xs[i].len;
    char *buf = NULL;
    size_t out_len = 0;
    if (n_stops) {
      buf = dml_cpu_strheap_alloc(c->strings, len + 1);
      if (!buf) return heap_oom(c, len + 1);
      size_t st = 0;
      int first = 1;
      for (size_t j = 0; j <= len; j++) {
        if (j < len && s[j] != ' ') continue;
        size_t wl = j - st;
        /* case sensitive: stopwords compared as given; else after the case
         * change (or lower-cased when there is none) */
        int fold = sensitive ? -1 : (change < 0 ? 0 : change);
        if (!is_stopword(s + st, wl, stops, n_stops, fold, rule, ta, tb)) {
          if (!first) buf[out_len++] = ' ';
          memcpy(buf + out_len, s + st, wl);
          out_len += wl;
          first = 0;
        }
        st = j + 1;
      }
      s = buf;
      len = out_len;
    }
    dml_str_t r = {len ? s : "", len};
    if (change >= 0 && len) {
      char *cb = dml_cpu_strheap_alloc(c->strings, len);
      if (!cb) return heap_oom(c, len);
      change_case(s, len, change, rule, cb);
      r.data = cb;
    }
    if (filter && r.len == 0) continue;
    ys[filter ? kept : i] = r;
    kept++;
  }
  if (filter) {
    if (kept == 0) {
      ys[0].data = "";
      ys[0].len = 0;
      kept = 1;
    }
    if (kept > y->dims[y->rank - 1])
      return dml_cpu_err_shapes(c, "more results than the output's bound");
    y->dims[y->rank - 1] = kept;
  }
  return DML_OK;
}

/* ======================================================================
 * RegexFullMatch (ONNX RegexFullMatch-20): PCRE2, opened at run time
 * ====================================================================== */

/* The few PCRE2 (8-bit) entry points and constants used, as pcre2.h of
 * PCRE2 10.34+ declares them; libpcre2-8.so.0 is opened with dlopen on
 * first use, so neither the build nor the runtime links it. */
typedef struct pcre2_code_8 pcre2_code_8;
typedef struct pcre2_match_data_8 pcre2_match_data_8;
#define DML_PCRE2_UTF 0x00080000u
#define DML_PCRE2_ANCHORED 0x80000000u
#define DML_PCRE2_ENDANCHORED 0x20000000u
#define DML_PCRE2_MATCH_INVALID_UTF 0x04000000u
#define DML_PCRE2_ERROR_NOMATCH (-1)

typedef struct {
  pcre2_code_8 *(*compile)(const unsigned char *, size_t, uint32_t, int *, size_t *,
                           void *);
  pcre2_match_data_8 *(*md_create)(const pcre2_code_8 *, void *);
  int (*match)(const pcre2_code_8 *, const unsigned char *, size_t, size_t, uint32_t,
               pcre2_match_data_8 *, void *);
  void (*md_free)(pcre2_match_data_8 *);
  void (*code_free)(pcre2_code_8 *);
  int (*err_msg)(int, unsigned char *, size_t);
  int loaded; /* 1 ok, -1 missing */
} pcre2_api_t;

static pcre2_api_t g_pcre2;

static int pcre2_load(void) {
  if (__atomic_load_n(&g_pcre2.loaded, __ATOMIC_ACQUIRE)) return g_pcre2.loaded;
  pcre2_api_t a;
  memset(&a, 0, sizeof a);
  void *h = dlopen("libpcre2-8.so.0", RTLD_NOW | RTLD_LOCAL);
  if (h) {
    *(void **)&a.compile = dlsym(h, "pcre2_compile_8");
    *(void **)&a.md_create = dlsym(h, "pcre2_match_data_create_from_pattern_8");
    *(void **)&a.match = dlsym(h, "pcre2_match_8");
    *(void **)&a.md_free = dlsym(h, "pcre2_match_data_free_8");
    *(void **)&a.code_free = dlsym(h, "pcre2_code_free_8");
    *(void **)&a.err_msg = dlsym(h, "pcre2_get_error_message_8");
  }
  a.loaded =
      h && a.compile && a.md_create && a.match && a.md_free && a.code_free && a.err_msg
          ? 1
          : -1;
  /* races store identical contents */
  g_pcre2.compile = a.compile;
  g_pcre2.md_create = a.md_create;
  g_pcre2.match = a.match;
  g_pcre2.md_free = a.md_free;
  g_pcre2.code_free = a.code_free;
  g_pcre2.err_msg = a.err_msg;
  __atomic_store_n(&g_pcre2.loaded, a.loaded, __ATOMIC_RELEASE);
  return a.loaded;
}

int dml_cpu_regex_available(void) {
  return pcre2_load() == 1;
}

dml_status_t dml_cpuk_RegexFullMatch(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  if (x->dtype != DML_DTYPE_STRING) return dml_cpu_err_dtype(c, "input", x->dtype);
  if (y->dtype != DML_DTYPE_BOOL) return dml_cpu_err_dtype(c, "output", y->dtype);
  const char *pattern = dml_cpu_get_string(c, "pattern", NULL);
  if (!pattern)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "attribute 'pattern' is missing");
  if (pcre2_load() != 1)
    return dml_cpu_error(c, DML_STATUS_UNIMPLEMENTED,
                         "RegexFullMatch needs PCRE2 (libpcre2-8.so.0, Debian's "
                         "libpcre2-8-0), which cannot be opened on this machine");
  int64_t n = dml_cpu_numel(x);
  int ec = 0;
  size_t eo = 0;
  /* RE2 syntax: the subset the ONNX tests and common patterns use is
   * PCRE2's with UTF-8 on and ASCII classes (\w, \d, \s, \b as RE2 has
   * them); the match must span the whole string. */
  pcre2_code_8 *re = g_pcre2.compile((const unsigned char *)pattern, strlen(pattern),
                                     DML_PCRE2_UTF | DML_PCRE2_MATCH_INVALID_UTF |
                                         DML_PCRE2_ANCHORED | DML_PCRE2_ENDANCHORED,
                                     &ec, &eo, NULL);
  if (!re) {
    unsigned char msg[256];
    msg[0] = 0;
    g_pcre2.err_msg(ec, msg, sizeof msg);
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "pattern '%s' does not compile at offset %zu: %s", pattern, eo,
                         (const char *)msg);
  }
  pcre2_match_data_8 *md = g_pcre2.md_create(re, NULL);
  if (!md) {
    g_pcre2.code_free(re);
    return heap_oom(c, 0);
  }
  const dml_str_t *xs = (const dml_str_t *)x->data;
  dml_status_t st = DML_OK;
  for (int64_t i = 0; i < n; i++) {
    int rc = g_pcre2.match(re, (const unsigned char *)(xs[i].data ? xs[i].data : ""),
                           (size_t)xs[i].len, 0, 0, md, NULL);
    if (rc < 0 && rc != DML_PCRE2_ERROR_NOMATCH) {
      unsigned char msg[256];
      msg[0] = 0;
      g_pcre2.err_msg(rc, msg, sizeof msg);
      st = dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "matching element %lld: %s",
                         (long long)i, (const char *)msg);
      break;
    }
    ((uint8_t *)y->data)[i] = rc >= 0;
  }
  g_pcre2.md_free(md);
  g_pcre2.code_free(re);
  return st;
}

/* ======================================================================
 * LabelEncoder (ai.onnx.ml LabelEncoder-4)
 * ====================================================================== */

/* The importer (frontends/onnx) normalizes the attributes: keys are
 * `keys_strings` (STRINGS) or `keys` (TENSOR, numeric); values are
 * `values_strings` (STRINGS) or `values` (TENSOR); the default is
 * `default_string` (STRING) or `default` (TENSOR, one element). Float keys
 * compare by value with NaN matching NaN. */
dml_status_t dml_cpuk_LabelEncoder(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  const dml_attr_t *ks = dml_attr_find(c->attrs, c->n_attrs, "keys_strings");
  const dml_attr_t *kt = dml_attr_find(c->attrs, c->n_attrs, "keys");
  const dml_attr_t *vs = dml_attr_find(c->attrs, c->n_attrs, "values_strings");
  const dml_attr_t *vt = dml_attr_find(c->attrs, c->n_attrs, "values");
  const dml_attr_t *ds = dml_attr_find(c->attrs, c->n_attrs, "default_string");
  const dml_attr_t *dt = dml_attr_find(c->attrs, c->n_attrs, "default");
  int str_keys = ks && ks->kind == DML_ATTR_STRINGS;
  int str_vals = vs && vs->kind == DML_ATTR_STRINGS;
  if ((!str_keys && !(kt && kt->kind == DML_ATTR_TENSOR)) ||
      (!str_vals && !(vt && vt->kind == DML_ATTR_TENSOR)))
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "keys and values attributes are missing");
  size_t nk = str_keys ? ks->n : (size_t)dml_cpu_numel(&kt->tensor);
  size_t nv = str_vals ? vs->n : (size_t)dml_cpu_numel(&vt->tensor);
  if (nk != nv)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "%zu keys but %zu values", nk,
                         nv);
  if (str_keys != (x->dtype == DML_DTYPE_STRING) ||
      (!str_keys && kt->tensor.dtype != x->dtype))
    return dml_cpu_err_dtype(c, "input", x->dtype);
  if (str_vals != (y->dtype == DML_DTYPE_STRING) ||
      (!str_vals && vt->tensor.dtype != y->dtype))
    return dml_cpu_err_dtype(c, "output", y->dtype);
  int64_t n = dml_cpu_numel(x);
  size_t es = dml_dtype_size(y->dtype);
  for (int64_t i = 0; i < n; i++) {
    size_t hit = nk;
    if (str_keys) {
      const dml_str_t *s = &((const dml_str_t *)x->data)[i];
      for (size_t k = 0; k < nk && hit == nk; k++)
        if (str_eq_c(s, ks->strings[k])) hit = k;
    } else if (dml_dtype_is_float(x->dtype)) {
      double v = dml_load_f64(x->dtype, x->data, (size_t)i);
      for (size_t k = 0; k < nk && hit == nk; k++) {
        double kv = dml_load_f64(kt->tensor.dtype, kt->tensor.data, k);
        if (kv == v || (isnan(kv) && isnan(v))) hit = k;
      }
    } else {
      int64_t v = dml_load_i64(x->dtype, x->data, (size_t)i);
      for (size_t k = 0; k < nk && hit == nk; k++)
        if (dml_load_i64(kt->tensor.dtype, kt->tensor.data, k) == v) hit = k;
    }
    if (str_vals) {
      const char *s = hit < nk                            ? vs->strings[hit]
                      : ds && ds->kind == DML_ATTR_STRING ? ds->s
                                                          : "_Unused";
      ((dml_str_t *)y->data)[i].data = s;
      ((dml_str_t *)y->data)[i].len = strlen(s);
    } else if (hit < nk) {
      memcpy((char *)y->data + (size_t)i * es, (const char *)vt->tensor.data + hit * es,
             es);
    } else if (dt && dt->kind == DML_ATTR_TENSOR && dt->tensor.dtype == y->dtype &&
               dml_cpu_numel(&dt->tensor) >= 1) {
      memcpy((char *)y->data + (size_t)i * es, dt->tensor.data, es);
    } else {
      /* ONNX's defaults: -1 (int64), -0.0 (float) */
      if (dml_dtype_is_float(y->dtype))
        dml_store_f64(y->dtype, y->data, (size_t)i, -0.0);
      else
        dml_store_i64(y->dtype, y->data, (size_t)i, -1);
    }
  }
  return DML_OK;
}

/* ======================================================================
 * Routing of calls with string tensors (dml_cpu_run)
 * ====================================================================== */

static int call_has_strings(const dml_cpu_call_t *c) {
  for (uint32_t i = 0; i < c->n_inputs; i++)
    if (c->inputs[i].dtype == DML_DTYPE_STRING) return 1;
  for (uint32_t i = 0; i < c->n_outputs; i++)
    if (c->outputs[i].dtype == DML_DTYPE_STRING) return 1;
  return 0;
}

int dml_cpu_op_takes_strings(dml_op_t op) {
  const dml_op_info_t *info = dml_op_info(op);
  return info && (info->flags & DML_OPF_STRINGS) != 0;
}

int dml_cpu_strings_route(const dml_cpu_call_t *c, dml_status_t *out) {
  if (!call_has_strings(c)) return 0;
  if (!dml_cpu_op_takes_strings(c->op)) {
    *out = dml_cpu_error(c, DML_STATUS_UNIMPLEMENTED,
                         "%s does not take string tensors on the CPU (string ops: Cast, "
                         "Equal, StringConcat, StringSplit, StringNormalizer, "
                         "RegexFullMatch, LabelEncoder and data movement)",
                         dml_op_name(c->op));
    return 1;
  }
  if (c->op == DML_OP_CAST) {
    *out = cast_strings(c);
    return 1;
  }
  if (c->op == DML_OP_EQUAL) {
    *out = binary_strings(c, 0);
    return 1;
  }
  return 0; /* the table's kernel */
}
