/* dml_safetensors.c — strict safetensors reader, writer, atomic file write. */
#include "dml_safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dml_dtype.h"
#include "dml_file.h"

#define OP "safetensors"

static const struct {
  const char *name;
  dml_dtype_t dtype;
} k_dtypes[] = {
    {"F64", DML_DTYPE_F64},   {"F32", DML_DTYPE_F32}, {"F16", DML_DTYPE_F16},
    {"BF16", DML_DTYPE_BF16}, {"I64", DML_DTYPE_I64}, {"I32", DML_DTYPE_I32},
    {"I16", DML_DTYPE_I16},   {"I8", DML_DTYPE_I8},   {"U64", DML_DTYPE_U64},
    {"U32", DML_DTYPE_U32},   {"U16", DML_DTYPE_U16}, {"U8", DML_DTYPE_U8},
    {"BOOL", DML_DTYPE_BOOL},
};
/* Valid safetensors dtypes dmlc has no dtype for. */
static const char *const k_other_dtypes[] = {"F8_E5M2", "F8_E4M3", "F8_E8M0", "F6_E2M3",
                                             "F6_E3M2", "F4",      "C64"};

static const char *st_dtype_name(dml_dtype_t dt) {
  for (size_t i = 0; i < sizeof k_dtypes / sizeof k_dtypes[0]; i++)
    if (k_dtypes[i].dtype == dt) return k_dtypes[i].name;
  return NULL;
}

/* ===================================================================== */
/* Parser                                                                */
/* ===================================================================== */

typedef struct parser {
  const uint8_t *s; /* header bytes */
  size_t n, i;      /* length, position */
  char *str;        /* decoded strings arena (n bytes suffice, see decode) */
  size_t str_used;
  dml_status_t err;
} parser_t;

/* Header offset i is file offset 8 + i. */
static int fail(parser_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(parser_t *p, const char *fmt, ...) {
  if (p->err) return 0;
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  p->err = dml_status_detail(
      dml_status_make(DML_STATUS_DATA_LOSS, OP, "malformed header: %s", msg),
      "at byte offset %zu", p->i + 8);
  return 0;
}

static void ws(parser_t *p) {
  while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' ||
                         p->s[p->i] == '\r'))
    p->i++;
}

static int expect(parser_t *p, char c) {
  ws(p);
  if (p->i >= p->n) return fail(p, "expected '%c', found the end of the header", c);
  if (p->s[p->i] != (uint8_t)c) return fail(p, "expected '%c'", c);
  p->i++;
  return 1;
}

/* 1 and skips `c` when it is next (after whitespace), else 0. */
static int accept(parser_t *p, char c) {
  ws(p);
  if (p->i < p->n && p->s[p->i] == (uint8_t)c) {
    p->i++;
    return 1;
  }
  return 0;
}

static int hexval(uint8_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static int read_hex4(parser_t *p, uint32_t *out) {
  if (p->n - p->i < 4) return fail(p, "truncated \\u escape");
  uint32_t v = 0;
  for (int k = 0; k < 4; k++) {
    int h = hexval(p->s[p->i + (size_t)k]);
    if (h < 0) return fail(p, "bad hex digit in \\u escape");
    v = v << 4 | (uint32_t)h;
  }
  p->i += 4;
  *out = v;
  return 1;
}

static void put_utf8(char *d, size_t *k, uint32_t cp) {
  if (cp < 0x80) {
    d[(*k)++] = (char)cp;
  } else if (cp < 0x800) {
    d[(*k)++] = (char)(0xC0 | cp >> 6);
    d[(*k)++] = (char)(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    d[(*k)++] = (char)(0xE0 | cp >> 12);
    d[(*k)++] = (char)(0x80 | (cp >> 6 & 0x3F));
    d[(*k)++] = (char)(0x80 | (cp & 0x3F));
  } else {
    d[(*k)++] = (char)(0xF0 | cp >> 18);
    d[(*k)++] = (char)(0x80 | (cp >> 12 & 0x3F));
    d[(*k)++] = (char)(0x80 | (cp >> 6 & 0x3F));
    d[(*k)++] = (char)(0x80 | (cp & 0x3F));
  }
}

/* Length of the valid UTF-8 sequence at s[0..avail), or 0 (RFC 3629:
 * shortest form, no surrogates, at most U+10FFFF). */
static size_t utf8_len(const uint8_t *s, size_t avail) {
  uint8_t c = s[0];
  size_t len;
  uint32_t cp, min;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    len = 2, cp = c & 0x1Fu, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3, cp = c & 0x0Fu, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4, cp = c & 0x07u, min = 0x10000;
  } else {
    return 0;
  }
  if (avail < len) return 0;
  for (size_t k = 1; k < len; k++) {
    if ((s[k] & 0xC0) != 0x80) return 0;
    cp = cp << 6 | (s[k] & 0x3Fu);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

/* A JSON string, decoded into the arena. The decoded bytes plus the NUL
 * never exceed the raw bytes including both quotes (an escape of k bytes
 * decodes to fewer than k), so an arena of the header's size suffices. */
static int read_string(parser_t *p, const char **out) {
  ws(p);
  if (p->i >= p->n || p->s[p->i] != '"') return fail(p, "expected a string");
  p->i++;
  char *d = p->str + p->str_used;
  size_t k = 0;
  for (;;) {
    if (p->i >= p->n) return fail(p, "unterminated string");
    uint8_t c = p->s[p->i];
    if (c == '"') {
      p->i++;
      break;
    }
    if (c < 0x20) return fail(p, "control character 0x%02x in a string", c);
    if (c == '\\') {
      if (p->i + 1 >= p->n) return fail(p, "unterminated escape");
      uint8_t e = p->s[p->i + 1];
      p->i += 2;
      switch (e) {
        case '"': d[k++] = '"'; break;
        case '\\': d[k++] = '\\'; break;
        case '/': d[k++] = '/'; break;
        case 'b': d[k++] = '\b'; break;
        case 'f': d[k++] = '\f'; break;
        case 'n': d[k++] = '\n'; break;
        case 'r': d[k++] = '\r'; break;
        case 't': d[k++] = '\t'; break;
        case 'u': {
          uint32_t cp;
          if (!read_hex4(p, &cp)) return 0;
          if (cp >= 0xDC00 && cp <= 0xDFFF)
            return fail(p, "lone low surrogate in \\u escape");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t lo;
            if (p->n - p->i < 2 || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u')
              return fail(p, "high surrogate without a low surrogate");
            p->i += 2;
            if (!read_hex4(p, &lo)) return 0;
            if (lo < 0xDC00 || lo > 0xDFFF)
              return fail(p, "high surrogate without a low surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          if (cp == 0) return fail(p, "NUL character in a string");
          put_utf8(d, &k, cp);
          break;
        }
        default:
          p->i -= 1;
          return fail(p, "bad escape '\\%c'", e >= 0x20 && e < 0x7F ? e : '?');
      }
      continue;
    }
    size_t len = utf8_len(p->s + p->i, p->n - p->i);
    if (!len) return fail(p, "invalid UTF-8 in a string");
    memcpy(d + k, p->s + p->i, len);
    k += len;
    p->i += len;
  }
  d[k] = '\0';
  p->str_used += k + 1;
  *out = d;
  return 1;
}

/* A non-negative integer below 2^63, JSON syntax (no leading zeros). */
static int read_uint(parser_t *p, uint64_t *out) {
  ws(p);
  if (p->i >= p->n || p->s[p->i] < '0' || p->s[p->i] > '9')
    return fail(p, "expected a non-negative integer");
  if (p->s[p->i] == '0' && p->i + 1 < p->n && p->s[p->i + 1] >= '0' &&
      p->s[p->i + 1] <= '9')
    return fail(p, "integer with a leading zero");
  uint64_t v = 0;
  while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') {
    uint64_t digit = p->s[p->i] - (uint64_t)'0';
    if (v > (UINT64_C(0x7FFFFFFFFFFFFFFF) - digit) / 10)
      return fail(p, "integer too large");
    v = v * 10 + digit;
    p->i++;
  }
  if (p->i < p->n && (p->s[p->i] == '.' || p->s[p->i] == 'e' || p->s[p->i] == 'E'))
    return fail(p, "expected an integer, found a fraction or exponent");
  *out = v;
  return 1;
}

typedef struct st_pool {
  char *strings;
} st_pool_t;

typedef struct growing {
  dml_st_tensor_t *tensors;
  size_t n_tensors, cap_tensors;
  const char **keys, **values;
  size_t n_meta, cap_meta;
} growing_t;

static int grow(void **arr, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return 1;
  size_t nc = *cap ? *cap * 2 : 16;
  while (nc < need) nc *= 2;
  void *a = realloc(*arr, nc * elem);
  if (!a) return 0;
  *arr = a;
  *cap = nc;
  return 1;
}

static int parse_metadata(parser_t *p, growing_t *g) {
  if (!expect(p, '{')) return 0;
  if (accept(p, '}')) return 1;
  for (;;) {
    const char *k, *v;
    if (!read_string(p, &k) || !expect(p, ':') || !read_string(p, &v)) return 0;
    for (size_t j = 0; j < g->n_meta; j++)
      if (!strcmp(g->keys[j], k)) return fail(p, "duplicate metadata key '%.64s'", k);
    if (!grow((void **)&g->keys, &g->cap_meta, g->n_meta + 1, sizeof(char *))) {
      p->err = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
      return 0;
    }
    /* keys and values share one capacity: grow values alongside. */
    const char **nv =
        (const char **)realloc((void *)g->values, g->cap_meta * sizeof(char *));
    if (!nv) {
      p->err = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
      return 0;
    }
    g->values = nv;
    g->keys[g->n_meta] = k;
    g->values[g->n_meta] = v;
    g->n_meta++;
    if (accept(p, '}')) return 1;
    if (!expect(p, ',')) return 0;
  }
}

static int parse_tensor(parser_t *p, dml_st_tensor_t *t) {
  int have_dtype = 0, have_shape = 0, have_offsets = 0;
  if (!expect(p, '{')) return 0;
  if (accept(p, '}'))
    return fail(p, "tensor '%.64s' has no dtype, shape, data_offsets", t->name);
  for (;;) {
    const char *key;
    size_t key_at = p->i;
    if (!read_string(p, &key) || !expect(p, ':')) return 0;
    if (!strcmp(key, "dtype")) {
      if (have_dtype++) return fail(p, "duplicate key 'dtype'");
      const char *dt;
      size_t at = p->i;
      if (!read_string(p, &dt)) return 0;
      t->tensor.dtype = DML_DTYPE_INVALID;
      for (size_t j = 0; j < sizeof k_dtypes / sizeof k_dtypes[0]; j++)
        if (!strcmp(dt, k_dtypes[j].name)) t->tensor.dtype = k_dtypes[j].dtype;
      if (t->tensor.dtype == DML_DTYPE_INVALID) {
        for (size_t j = 0; j < sizeof k_other_dtypes / sizeof k_other_dtypes[0]; j++)
          if (!strcmp(dt, k_other_dtypes[j])) {
            p->err = dml_status_detail(
                dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                                "tensor '%.64s': dtype %s is not supported by dmlc",
                                t->name, dt),
                "at byte offset %zu", at + 8);
            return 0;
          }
        p->i = at;
        return fail(p, "tensor '%.64s': unknown dtype '%.32s'", t->name, dt);
      }
    } else if (!strcmp(key, "shape")) {
      if (have_shape++) return fail(p, "duplicate key 'shape'");
      if (!expect(p, '[')) return 0;
      t->tensor.rank = 0;
      if (!accept(p, ']')) {
        for (;;) {
          uint64_t d;
          if (t->tensor.rank >= DML_MAX_RANK)
            return fail(p, "tensor '%.64s': rank above %d", t->name, DML_MAX_RANK);
          if (!read_uint(p, &d)) return 0;
          t->tensor.dims[t->tensor.rank++] = (int64_t)d;
          if (accept(p, ']')) break;
          if (!expect(p, ',')) return 0;
        }
      }
    } else if (!strcmp(key, "data_offsets")) {
      if (have_offsets++) return fail(p, "duplicate key 'data_offsets'");
      if (!expect(p, '[') || !read_uint(p, &t->begin) || !expect(p, ',') ||
          !read_uint(p, &t->end) || !expect(p, ']'))
        return 0;
    } else {
      p->i = key_at;
      return fail(p, "tensor '%.64s': unexpected key '%.32s'", t->name, key);
    }
    if (accept(p, '}')) break;
    if (!expect(p, ',')) return 0;
  }
  if (!have_dtype || !have_shape || !have_offsets)
    return fail(p, "tensor '%.64s' lacks %s", t->name,
                !have_dtype   ? "dtype"
                : !have_shape ? "shape"
                              : "data_offsets");
  return 1;
}

/* Merge sort of tensor indices by name or by (begin, end): stable, no
 * global comparison state (qsort has no context argument). */
static void merge_sort(uint32_t *idx, uint32_t *tmp, size_t n, const dml_st_tensor_t *t,
                       int by_name) {
  if (n < 2) return;
  size_t h = n / 2;
  merge_sort(idx, tmp, h, t, by_name);
  merge_sort(idx + h, tmp, n - h, t, by_name);
  size_t a = 0, b = h, k = 0;
  while (a < h && b < n) {
    const dml_st_tensor_t *x = &t[idx[a]], *y = &t[idx[b]];
    int le = by_name
                 ? strcmp(x->name, y->name) <= 0
                 : (x->begin < y->begin || (x->begin == y->begin && x->end <= y->end));
    tmp[k++] = le ? idx[a++] : idx[b++];
  }
  while (a < h) tmp[k++] = idx[a++];
  while (b < n) tmp[k++] = idx[b++];
  memcpy(idx, tmp, n * sizeof *idx);
}

dml_status_t dml_safetensors_parse(const void *bytes, size_t size,
                                   dml_safetensors_t **out_file) {
  const uint8_t *b = (const uint8_t *)bytes;
  if (!out_file || (!bytes && size))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "NULL argument");
  if (size < 8)
    return dml_status_detail(
        dml_status_make(DML_STATUS_DATA_LOSS, OP,
                        "file of %zu bytes is too short for the 8-byte "
                        "header length",
                        size),
        "at byte offset 0");
  uint64_t n = 0;
  for (int k = 7; k >= 0; k--) n = n << 8 | b[k];
  if (n > DML_ST_MAX_HEADER_BYTES || n > size - 8)
    return dml_status_detail(
        dml_status_make(
            DML_STATUS_DATA_LOSS, OP,
            "header length %llu exceeds %s (%zu bytes follow the length)",
            (unsigned long long)n,
            n > DML_ST_MAX_HEADER_BYTES ? "the limit of 100000000 bytes" : "the file",
            size - 8),
        "at byte offset 0");
  if (n < 2)
    return dml_status_detail(
        dml_status_make(DML_STATUS_DATA_LOSS, OP,
                        "header of %llu bytes cannot hold a JSON object",
                        (unsigned long long)n),
        "at byte offset 8");
  parser_t p = {.s = b + 8, .n = (size_t)n, .i = 0};
  p.str = (char *)malloc((size_t)n);
  growing_t g = {0};
  dml_safetensors_t *f = NULL;
  uint32_t *idx = NULL;
  if (!p.str) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  uint64_t data_size = (uint64_t)size - 8 - n;
  int have_meta = 0;
  if (!expect(&p, '{')) goto done;
  if (!accept(&p, '}')) {
    for (;;) {
      const char *name;
      size_t name_at = p.i;
      if (!read_string(&p, &name) || !expect(&p, ':')) goto done;
      if (!strcmp(name, "__metadata__")) {
        if (have_meta++) {
          p.i = name_at;
          fail(&p, "duplicate \"__metadata__\"");
          goto done;
        }
        if (!parse_metadata(&p, &g)) goto done;
      } else {
        if (!name[0]) {
          p.i = name_at;
          fail(&p, "empty tensor name");
          goto done;
        }
        if (g.n_tensors >= UINT32_MAX - 1 || !grow((void **)&g.tensors, &g.cap_tensors,
                                                   g.n_tensors + 1, sizeof *g.tensors)) {
          p.err = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
          goto done;
        }
        dml_st_tensor_t *t = &g.tensors[g.n_tensors];
        memset(t, 0, sizeof *t);
        t->name = name;
        if (!parse_tensor(&p, t)) goto done;
        int64_t numel = dml_dims_numel(t->tensor.dims, t->tensor.rank);
        size_t es = dml_dtype_size(t->tensor.dtype);
        if (numel < 0 || (uint64_t)numel > UINT64_MAX / es) {
          fail(&p, "tensor '%.64s': element count overflows", name);
          goto done;
        }
        if (t->begin > t->end || t->end > data_size) {
          fail(&p,
               "tensor '%.64s': data_offsets [%llu, %llu] outside the %llu-byte buffer",
               name, (unsigned long long)t->begin, (unsigned long long)t->end,
               (unsigned long long)data_size);
          goto done;
        }
        if (t->end - t->begin != (uint64_t)numel * es) {
          fail(&p,
               "tensor '%.64s': data_offsets span %llu bytes, its dtype and shape need "
               "%llu",
               name, (unsigned long long)(t->end - t->begin),
               (unsigned long long)((uint64_t)numel * es));
          goto done;
        }
        t->tensor.data = (void *)(uintptr_t)(b + 8 + n + t->begin);
        g.n_tensors++;
      }
      if (accept(&p, '}')) break;
      if (!expect(&p, ',')) goto done;
    }
  }
  ws(&p);
  if (p.i != p.n) {
    fail(&p, "bytes after the JSON object (only space padding is allowed)");
    goto done;
  }
  /* Unique names, and the tensors tile the buffer exactly. */
  if (g.n_tensors) {
    idx = (uint32_t *)malloc(2 * g.n_tensors * sizeof *idx);
    if (!idx) {
      p.err = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
      goto done;
    }
    for (uint32_t k = 0; k < g.n_tensors; k++) idx[k] = k;
    merge_sort(idx, idx + g.n_tensors, g.n_tensors, g.tensors, 1);
    for (uint32_t k = 1; k < g.n_tensors; k++)
      if (!strcmp(g.tensors[idx[k]].name, g.tensors[idx[k - 1]].name)) {
        p.i = 0;
        fail(&p, "duplicate tensor name '%.64s'", g.tensors[idx[k]].name);
        goto done;
      }
    for (uint32_t k = 0; k < g.n_tensors; k++) idx[k] = k;
    merge_sort(idx, idx + g.n_tensors, g.n_tensors, g.tensors, 0);
  }
  {
    uint64_t at = 0;
    for (uint32_t k = 0; k < g.n_tensors; k++) {
      const dml_st_tensor_t *t = &g.tensors[idx[k]];
      if (t->begin != at) {
        p.err = dml_status_detail(
            dml_status_make(
                DML_STATUS_DATA_LOSS, OP,
                "tensor '%.64s' starts at buffer byte %llu, expected %llu (tensors "
                "must tile the buffer without holes or overlaps)",
                t->name, (unsigned long long)t->begin, (unsigned long long)at),
            "at byte offset %llu", (unsigned long long)(8 + n + t->begin));
        goto done;
      }
      at = t->end;
    }
    if (at != data_size) {
      p.err = dml_status_detail(
          dml_status_make(DML_STATUS_DATA_LOSS, OP,
                          "the tensors cover %llu bytes of the %llu-byte buffer",
                          (unsigned long long)at, (unsigned long long)data_size),
          "at byte offset %llu", (unsigned long long)(8 + n + at));
      goto done;
    }
  }
  f = (dml_safetensors_t *)calloc(1, sizeof *f);
  st_pool_t *pool = (st_pool_t *)malloc(sizeof *pool);
  if (!f || !pool) {
    free(f);
    free(pool);
    f = NULL;
    p.err = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
    goto done;
  }
  pool->strings = p.str;
  p.str = NULL;
  f->pool_ = pool;
  f->n_tensors = (uint32_t)g.n_tensors;
  f->tensors = g.tensors;
  f->n_meta = (uint32_t)g.n_meta;
  f->meta_keys = g.keys;
  f->meta_values = g.values;
  f->header_bytes = n;
  g.tensors = NULL;
  g.keys = g.values = NULL;
done:
  free(idx);
  free(p.str);
  free(g.tensors);
  free((void *)g.keys);
  free((void *)g.values);
  if (p.err) return p.err;
  *out_file = f;
  return DML_OK;
}

void dml_safetensors_release(dml_safetensors_t *f) {
  if (!f) return;
  st_pool_t *pool = (st_pool_t *)f->pool_;
  if (pool) free(pool->strings);
  free(pool);
  free(f->tensors);
  free((void *)f->meta_keys);
  free((void *)f->meta_values);
  free(f);
}

const dml_st_tensor_t *dml_safetensors_find(const dml_safetensors_t *f,
                                            const char *name) {
  if (!f || !name) return NULL;
  for (uint32_t i = 0; i < f->n_tensors; i++)
    if (!strcmp(f->tensors[i].name, name)) return &f->tensors[i];
  return NULL;
}

const char *dml_safetensors_meta(const dml_safetensors_t *f, const char *key) {
  if (!f || !key) return NULL;
  for (uint32_t i = 0; i < f->n_meta; i++)
    if (!strcmp(f->meta_keys[i], key)) return f->meta_values[i];
  return NULL;
}

/* ===================================================================== */
/* Writer                                                                */
/* ===================================================================== */

typedef struct sbuf {
  char *p;
  size_t n, cap;
  int oom;
} sbuf_t;

static void sb_put(sbuf_t *b, const char *s, size_t len) {
  if (b->oom) return;
  if (b->n + len + 1 > b->cap) {
    size_t nc = b->cap ? b->cap * 2 : 256;
    while (nc < b->n + len + 1) nc *= 2;
    char *q = (char *)realloc(b->p, nc);
    if (!q) {
      b->oom = 1;
      return;
    }
    b->p = q;
    b->cap = nc;
  }
  memcpy(b->p + b->n, s, len);
  b->n += len;
  b->p[b->n] = '\0';
}
static void sb_printf(sbuf_t *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf_t *b, const char *fmt, ...) {
  char tmp[128];
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (k > 0) sb_put(b, tmp, (size_t)k < sizeof tmp ? (size_t)k : sizeof tmp - 1);
}
/* A JSON string literal: quotes, backslashes and control bytes escaped;
 * other bytes as they are (the caller's names are UTF-8). */
static void sb_json_string(sbuf_t *b, const char *s) {
  sb_put(b, "\"", 1);
  for (const char *c = s; *c; c++) {
    unsigned char u = (unsigned char)*c;
    if (u == '"' || u == '\\') {
      char e[2] = {'\\', (char)u};
      sb_put(b, e, 2);
    } else if (u < 0x20) {
      sb_printf(b, "\\u%04x", u);
    } else {
      sb_put(b, c, 1);
    }
  }
  sb_put(b, "\"", 1);
}

/* The padded header (length prefix included) and the buffer size. */
static dml_status_t build_header(const dml_st_entry_t *e, size_t n,
                                 const char *const *meta_keys,
                                 const char *const *meta_values, size_t n_meta,
                                 sbuf_t *out, uint64_t *out_data_bytes) {
  for (size_t i = 0; i < n; i++) {
    if (!e[i].name || !e[i].name[0] || !strcmp(e[i].name, "__metadata__"))
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                             "tensor %zu: empty, NULL or reserved name", i);
    for (size_t j = 0; j < i; j++)
      if (!strcmp(e[i].name, e[j].name))
        return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                               "duplicate tensor name '%s'", e[i].name);
    if (!st_dtype_name(e[i].tensor.dtype) || e[i].tensor.rank < 0 ||
        e[i].tensor.rank > DML_MAX_RANK ||
        dml_dims_numel(e[i].tensor.dims, e[i].tensor.rank) < 0 ||
        dml_tensor_bytes(&e[i].tensor) == SIZE_MAX ||
        (!e[i].tensor.data && dml_tensor_bytes(&e[i].tensor)))
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                             "tensor '%s': bad dtype, shape or data", e[i].name);
  }
  for (size_t i = 0; i < n_meta; i++)
    if (!meta_keys || !meta_values || !meta_keys[i] || !meta_values[i])
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "metadata %zu is NULL", i);
  sbuf_t b = {0};
  sb_put(&b, "\0\0\0\0\0\0\0\0", 8);
  sb_put(&b, "{", 1);
  int first = 1;
  if (n_meta) {
    sb_put(&b, "\"__metadata__\":{", 16);
    for (size_t i = 0; i < n_meta; i++) {
      if (i) sb_put(&b, ",", 1);
      sb_json_string(&b, meta_keys[i]);
      sb_put(&b, ":", 1);
      sb_json_string(&b, meta_values[i]);
    }
    sb_put(&b, "}", 1);
    first = 0;
  }
  uint64_t at = 0;
  for (size_t i = 0; i < n; i++) {
    if (!first) sb_put(&b, ",", 1);
    first = 0;
    sb_json_string(&b, e[i].name);
    sb_printf(&b, ":{\"dtype\":\"%s\",\"shape\":[", st_dtype_name(e[i].tensor.dtype));
    for (int32_t d = 0; d < e[i].tensor.rank; d++)
      sb_printf(&b, "%s%lld", d ? "," : "", (long long)e[i].tensor.dims[d]);
    uint64_t bytes = dml_tensor_bytes(&e[i].tensor);
    sb_printf(&b, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)at,
              (unsigned long long)(at + bytes));
    at += bytes;
  }
  sb_put(&b, "}", 1);
  while (!b.oom && b.n % 8) sb_put(&b, " ", 1);
  if (b.oom) {
    free(b.p);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  }
  uint64_t hl = b.n - 8;
  for (int k = 0; k < 8; k++) b.p[k] = (char)(hl >> (8 * k) & 0xFF);
  *out = b;
  *out_data_bytes = at;
  return DML_OK;
}

dml_status_t dml_safetensors_write_memory(const dml_st_entry_t *entries, size_t n,
                                          const char *const *meta_keys,
                                          const char *const *meta_values, size_t n_meta,
                                          void **out_bytes, size_t *out_size) {
  if ((!entries && n) || !out_bytes || !out_size)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "NULL argument");
  sbuf_t h;
  uint64_t data_bytes;
  DML_RETURN_IF_ERROR(
      build_header(entries, n, meta_keys, meta_values, n_meta, &h, &data_bytes));
  if (data_bytes > SIZE_MAX - h.n) {
    free(h.p);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "file too large");
  }
  size_t total = h.n + (size_t)data_bytes;
  uint8_t *buf = (uint8_t *)malloc(total ? total : 1);
  if (!buf) {
    free(h.p);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory (%zu bytes)",
                           total);
  }
  memcpy(buf, h.p, h.n);
  size_t at = h.n;
  for (size_t i = 0; i < n; i++) {
    size_t nb = dml_tensor_bytes(&entries[i].tensor);
    if (nb) memcpy(buf + at, entries[i].tensor.data, nb);
    at += nb;
  }
  free(h.p);
  *out_bytes = buf;
  *out_size = total;
  return DML_OK;
}

dml_status_t dml_write_file_atomic(const char *op, const char *path, const void *bytes,
                                   size_t size) {
  const void *parts[1] = {bytes};
  size_t sizes[1] = {size};
  return dml_file_write_atomic(op ? op : OP, path, parts, sizes, 1);
}

dml_status_t dml_safetensors_write_file(const char *path, const dml_st_entry_t *entries,
                                        size_t n, const char *const *meta_keys,
                                        const char *const *meta_values, size_t n_meta) {
  if (!entries && n)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "NULL argument");
  sbuf_t h;
  uint64_t data_bytes;
  DML_RETURN_IF_ERROR(
      build_header(entries, n, meta_keys, meta_values, n_meta, &h, &data_bytes));
  const void **parts = (const void **)malloc((n + 1) * sizeof *parts);
  size_t *sizes = (size_t *)malloc((n + 1) * sizeof *sizes);
  dml_status_t st;
  if (!parts || !sizes) {
    st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  } else {
    parts[0] = h.p;
    sizes[0] = h.n;
    for (size_t i = 0; i < n; i++) {
      parts[i + 1] = entries[i].tensor.data;
      sizes[i + 1] = dml_tensor_bytes(&entries[i].tensor);
    }
    st = dml_file_write_atomic(OP, path, parts, sizes, n + 1);
  }
  free((void *)parts);
  free(sizes);
  free(h.p);
  return st;
}

dml_status_t dml_safetensors_read_file(const char *path, dml_safetensors_t **out_file,
                                       void **out_bytes) {
  if (!path || !out_file || !out_bytes)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "NULL argument");
  uint8_t *buf;
  size_t size;
  DML_RETURN_IF_ERROR(dml_file_read_all(OP, path, &buf, &size));
  dml_status_t st = dml_safetensors_parse(buf, size, out_file);
  if (st) {
    free(buf);
    return dml_status_annotate(st, "reading '%s'", path);
  }
  *out_bytes = buf;
  return DML_OK;
}
