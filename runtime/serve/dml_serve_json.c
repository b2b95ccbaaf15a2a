/* dml_serve_json.c — the tensors of a KServe v2 inference request read
 * without a JSON tree of their data (dml_serve_json.h). */
#include "dml_serve_json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NEST 64

static size_t skip_ws(const char *p, size_t n, size_t i) {
  while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n')) i++;
  return i;
}

/* The end of the JSON number at p[i] (RFC 8259 6: -? int frac? exp?), or
 * i when there is none. */
static size_t number_end(const char *p, size_t n, size_t i) {
  size_t j = i;
  if (j < n && p[j] == '-') j++;
  if (j >= n) return i;
  if (p[j] == '0') {
    j++;
  } else if (p[j] >= '1' && p[j] <= '9') {
    while (j < n && p[j] >= '0' && p[j] <= '9') j++;
  } else {
    return i;
  }
  if (j < n && p[j] == '.') {
    size_t k = ++j;
    while (j < n && p[j] >= '0' && p[j] <= '9') j++;
    if (j == k) return i;
  }
  if (j < n && (p[j] == 'e' || p[j] == 'E')) {
    j++;
    if (j < n && (p[j] == '+' || p[j] == '-')) j++;
    size_t k = j;
    while (j < n && p[j] >= '0' && p[j] <= '9') j++;
    if (j == k) return i;
  }
  return j;
}

/* The end of the JSON string at p[i] == '"' (escapes skipped, control
 * characters refused), or 0 when malformed. */
static size_t string_end(const char *p, size_t n, size_t i) {
  for (size_t j = i + 1; j < n; j++) {
    unsigned char ch = (unsigned char)p[j];
    if (ch == '"') return j + 1;
    if (ch < 0x20) return 0;
    if (ch == '\\') j++;
  }
  return 0;
}

/* The end of the JSON value at p[i] (nesting at most MAX_NEST), or 0 when
 * malformed. Light: the skeleton's parser and dml_serve_json_read_data
 * check what this only skips. */
static size_t value_end(const char *p, size_t n, size_t i) {
  char stack[MAX_NEST];
  int depth = 0;
  for (;;) {
    i = skip_ws(p, n, i);
    if (i >= n) return 0;
    char ch = p[i];
    if (ch == '[' || ch == '{') {
      if (depth == MAX_NEST) return 0;
      stack[depth++] = ch == '[' ? ']' : '}';
      i = skip_ws(p, n, i + 1);
      if (i < n && p[i] == stack[depth - 1]) {
        i++;
        depth--;
        goto after_value;
      }
      if (ch == '{') goto key;
      continue;
    }
    if (ch == '"') {
      i = string_end(p, n, i);
      if (!i) return 0;
    } else if (ch == 't' && n - i >= 4 && !memcmp(p + i, "true", 4)) {
      i += 4;
    } else if (ch == 'f' && n - i >= 5 && !memcmp(p + i, "false", 5)) {
      i += 5;
    } else if (ch == 'n' && n - i >= 4 && !memcmp(p + i, "null", 4)) {
      i += 4;
    } else {
      size_t e = number_end(p, n, i);
      if (e == i) return 0;
      i = e;
    }
  after_value:
    if (!depth) return i;
    i = skip_ws(p, n, i);
    if (i >= n) return 0;
    if (p[i] == stack[depth - 1]) {
      i++;
      depth--;
      goto after_value;
    }
    if (p[i] != ',') return 0;
    i++;
    if (stack[depth - 1] == ']') continue;
  key:
    i = skip_ws(p, n, i);
    if (i >= n || p[i] != '"') return 0;
    i = string_end(p, n, i);
    if (!i) return 0;
    i = skip_ws(p, n, i);
    if (i >= n || p[i] != ':') return 0;
    i++;
  }
}

/* Whether the JSON string at p[i] is exactly "<key>" (no escapes). */
static int is_key(const char *p, size_t n, size_t i, const char *key) {
  size_t k = strlen(key);
  return n - i >= k + 2 && p[i] == '"' && !memcmp(p + i + 1, key, k) &&
         p[i + 1 + k] == '"';
}

/* The start of the value of the member whose key (a string) starts at
 * body[i], past the ':' and white space; 0 when it is not "key" ':'. */
static size_t member_value(const char *body, size_t n, size_t i) {
  i = string_end(body, n, i);
  if (!i) return 0;
  i = skip_ws(body, n, i);
  if (i >= n || body[i] != ':') return 0;
  return skip_ws(body, n, i + 1);
}

/* After a member or element at body[*i..]: a ',' (and the white space
 * after it) gives 1, the `closer` gives 0 (*i past it when `consume`),
 * anything else -1. */
static int after_item(const char *body, size_t n, size_t *i, char closer, int consume) {
  size_t k = skip_ws(body, n, *i);
  if (k < n && body[k] == ',') {
    *i = skip_ws(body, n, k + 1);
    return 1;
  }
  if (k < n && body[k] == closer) {
    *i = consume ? k + 1 : k;
    return 0;
  }
  return -1;
}

int dml_serve_json_split(const char *body, size_t n, dml_serve_json_span_t *spans,
                         size_t max_spans, size_t *n_spans, char **skeleton,
                         size_t *skel_len) {
  *skeleton = NULL;
  *n_spans = 0;
  size_t ns = 0;
  /* root object: find "inputs" and, in its array's objects, "data" */
  size_t i = skip_ws(body, n, 0);
  if (i >= n || body[i] != '{') return -1;
  i = skip_ws(body, n, i + 1);
  if (i < n && body[i] == '}') return -1; /* nothing to split */
  for (;;) {
    if (i >= n || body[i] != '"') return -1;
    int inputs = is_key(body, n, i, "inputs");
    if (!(i = member_value(body, n, i))) return -1;
    if (inputs && i < n && body[i] == '[') {
      i = skip_ws(body, n, i + 1);
      size_t elem = 0;
      if (i < n && body[i] == ']') {
        i++;
      } else {
        for (;; elem++) { /* each element */
          if (i < n && body[i] == '{') {
            i = skip_ws(body, n, i + 1);
            if (i < n && body[i] == '}') {
              i++;
            } else {
              for (;;) { /* each key of the element */
                if (i >= n || body[i] != '"') return -1;
                int data = is_key(body, n, i, "data");
                if (!(i = member_value(body, n, i))) return -1;
                size_t e = value_end(body, n, i);
                if (!e) return -1;
                if (data) {
                  if (ns == max_spans) return -1;
                  spans[ns].elem = elem;
                  spans[ns].start = i;
                  spans[ns].end = e;
                  ns++;
                }
                i = e;
                int more = after_item(body, n, &i, '}', 1);
                if (more < 0) return -1;
                if (!more) break;
              }
            }
          } else {
            i = value_end(body, n, i);
            if (!i) return -1;
          }
          int more = after_item(body, n, &i, ']', 1);
          if (more < 0) return -1;
          if (!more) break;
        }
      }
    } else {
      i = value_end(body, n, i);
      if (!i) return -1;
    }
    int more = after_item(body, n, &i, '}', 0);
    if (more < 0) return -1;
    if (!more) break;
  }
  if (!ns) return -1;
  /* the skeleton: the body with each span replaced by "0" */
  size_t kept = n;
  for (size_t s = 0; s < ns; s++) kept -= spans[s].end - spans[s].start;
  char *sk = (char *)malloc(kept + ns + 1);
  if (!sk) return -1;
  size_t o = 0, from = 0;
  for (size_t s = 0; s < ns; s++) {
    memcpy(sk + o, body + from, spans[s].start - from);
    o += spans[s].start - from;
    sk[o++] = '0';
    from = spans[s].end;
  }
  memcpy(sk + o, body + from, n - from);
  o += n - from;
  sk[o] = 0;
  *skeleton = sk;
  *skel_len = o;
  *n_spans = ns;
  return 0;
}

const char *dml_serve_json_check_value(dml_dtype_t dt, double v, int is_bool) {
  if (is_bool)
    return dt == DML_DTYPE_BOOL ? NULL : "a boolean in the data of a non-BOOL tensor";
  if (dml_dtype_is_float(dt)) {
    double lim;
    switch (dt) {
      case DML_DTYPE_F16: lim = 65520.0; break;
      case DML_DTYPE_BF16: lim = ldexp(2.0 - ldexp(1.0, -8), 127); break;
      case DML_DTYPE_F64: lim = INFINITY; break;
      default: lim = ldexp(2.0 - ldexp(1.0, -24), 127); break;
    }
    if (!(fabs(v) < lim))
      return "a number out of the datatype's finite range (it would become inf)";
    return NULL;
  }
  if (v != floor(v)) return "a non-integer value in the data of an integer tensor";
  double lo = 0, hi = 0;
  switch (dt) {
    case DML_DTYPE_BOOL: lo = 0, hi = 1; break;
    case DML_DTYPE_I8: lo = -128, hi = 127; break;
    case DML_DTYPE_U8: lo = 0, hi = 255; break;
    case DML_DTYPE_I16: lo = -32768, hi = 32767; break;
    case DML_DTYPE_U16: lo = 0, hi = 65535; break;
    case DML_DTYPE_I32: lo = -2147483648.0, hi = 2147483647.0; break;
    case DML_DTYPE_U32: lo = 0, hi = 4294967295.0; break;
    case DML_DTYPE_I64: lo = -9223372036854775808.0, hi = 9223372036854775807.0; break;
    default: lo = 0, hi = 18446744073709551615.0; break;
  }
  if (v < lo || v > hi) return "a value out of the datatype's range";
  return NULL;
}

static const char *store(dml_dtype_t dt, double v, int is_bool, void *dst, int64_t cap,
                         int64_t *count) {
  const char *err = dml_serve_json_check_value(dt, v, is_bool);
  if (err) return err;
  if (*count < cap) {
    if (dml_dtype_is_float(dt))
      dml_store_f64(dt, dst, (size_t)*count, v);
    else
      dml_store_i64(dt, dst, (size_t)*count, (int64_t)v);
  }
  (*count)++;
  return NULL;
}

const char *dml_serve_json_read_data(const char *p, size_t n, dml_dtype_t dt, void *dst,
                                     int64_t cap, int64_t *count, const int64_t *dims,
                                     int rank, size_t *err_at) {
  static const char k_malformed[] = "malformed JSON in \"data\"";
  static const char k_shape[] =
      "nested \"data\" does not match the shape (give it flat, or nested as the "
      "shape: every value at the depth of the rank, each array as long as its dim)";
  int max_depth = rank > 0 ? rank : 1;
  int depth = 0, leaf_depth = -1;
  /* per open array (index depth-1): elements so far, whether it holds arrays */
  int64_t elems[MAX_NEST];
  uint8_t holds_array[MAX_NEST];
  size_t i = 0;
  *err_at = SIZE_MAX;
  for (;;) {
    i = skip_ws(p, n, i);
    if (i >= n) goto malformed;
    char ch = p[i];
    if (ch == '[') {
      if (depth == max_depth || depth == MAX_NEST) {
        *err_at = SIZE_MAX;
        return "data nests deeper than the tensor's rank";
      }
      if (depth) holds_array[depth - 1] = 1, elems[depth - 1]++;
      elems[depth] = 0;
      holds_array[depth] = 0;
      depth++;
      i = skip_ws(p, n, i + 1);
      if (i < n && p[i] == ']') {
        i++;
        goto close_array;
      }
      continue;
    }
    /* a value: flat (depth 1, or a bare scalar) or nested at the rank */
    if (leaf_depth < 0) leaf_depth = depth;
    if (depth != leaf_depth || (depth > 1 && depth != rank) ||
        (depth == 0 && rank != 0)) {
      *err_at = SIZE_MAX;
      return k_shape;
    }
    if (depth) elems[depth - 1]++;
    const char *err;
    if (ch == 't' && n - i >= 4 && !memcmp(p + i, "true", 4)) {
      err = store(dt, 1, 1, dst, cap, count);
      i += 4;
    } else if (ch == 'f' && n - i >= 5 && !memcmp(p + i, "false", 5)) {
      err = store(dt, 0, 1, dst, cap, count);
      i += 5;
    } else if (ch == '-' || (ch >= '0' && ch <= '9')) {
      size_t e = number_end(p, n, i);
      if (e == i) goto malformed;
      /* strtod needs a terminated string: numbers are short, copy it */
      char tmp[128];
      if (e - i >= sizeof tmp) {
        err = "a number written with more than 127 characters";
      } else {
        memcpy(tmp, p + i, e - i);
        tmp[e - i] = 0;
        err = store(dt, strtod(tmp, NULL), 0, dst, cap, count);
      }
      i = e;
    } else if (ch == '"' || ch == '{' || ch == 'n') {
      err = "a value that is not a number (strings, null and objects are not tensors)";
    } else {
      goto malformed;
    }
    if (err) return err;
  after_value:
    if (!depth) {
      if (skip_ws(p, n, i) != n) goto malformed;
      return NULL;
    }
    i = skip_ws(p, n, i);
    if (i >= n) goto malformed;
    if (p[i] == ']') {
      i++;
      goto close_array;
    }
    if (p[i] != ',') goto malformed;
    i++;
    continue;
  close_array:
    /* nested form: an array inside another, or holding arrays, has its
     * dim's length (the flat form is one array of values) */
    if ((depth > 1 || holds_array[depth - 1]) &&
        (depth > rank || elems[depth - 1] != dims[depth - 1])) {
      *err_at = SIZE_MAX;
      return k_shape;
    }
    depth--;
    goto after_value;
  }
malformed:
  *err_at = i;
  return k_malformed;
}

/* ---- the binary tensor data extension ---------------------------------- */

const char *dml_serve_binary_header_len(const char *value, size_t body_len,
                                        size_t *out_json_len) {
  size_t n = value ? strlen(value) : 0;
  if (n == 0 || n > 19)
    return "Inference-Header-Content-Length must be a decimal byte count";
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (value[i] < '0' || value[i] > '9')
      return "Inference-Header-Content-Length must be a decimal byte count";
    v = v * 10 + (uint64_t)(value[i] - '0'); /* 19 digits: no overflow */
  }
  if (v > (uint64_t)body_len)
    return "Inference-Header-Content-Length is beyond the end of the request body";
  *out_json_len = (size_t)v;
  return NULL;
}

const char *dml_serve_binary_take(const unsigned char *region, size_t region_len,
                                  size_t *offset, double declared, int64_t numel,
                                  dml_dtype_t dt, size_t *out_start, char *msg,
                                  size_t cap) {
  size_t es = dml_dtype_size(dt), off = *offset;
  if (!(declared >= 0) || declared != floor(declared) || declared > 9007199254740992.0) {
    snprintf(msg, cap, "\"binary_data_size\" must be a byte count (an integer >= 0)");
    return msg;
  }
  uint64_t size = (uint64_t)declared;
  /* numel x es without overflow: beyond 2^53 bytes it cannot match */
  if (es == 0 || numel < 0 || (uint64_t)numel > ((uint64_t)1 << 53) / es ||
      size != (uint64_t)numel * es) {
    snprintf(msg, cap,
             "\"binary_data_size\" %" PRIu64 " does not match the shape: %" PRId64
             " values of %zu bytes",
             size, numel, es);
    return msg;
  }
  if (off > region_len || size > (uint64_t)(region_len - off)) {
    snprintf(msg, cap,
             "binary data of %" PRIu64
             " bytes at offset %zu runs past the end of the "
             "body's %zu bytes of binary data",
             size, off, region_len);
    return msg;
  }
  if (dt == DML_DTYPE_BOOL)
    for (uint64_t i = 0; i < size; i++)
      if (region[off + i] > 1) {
        snprintf(msg, cap, "BOOL binary data holds a byte other than 0 and 1 (%u)",
                 region[off + i]);
        return msg;
      }
  *out_start = off;
  *offset = off + (size_t)size;
  return NULL;
}
