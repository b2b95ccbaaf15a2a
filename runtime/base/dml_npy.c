/* dml_npy.c — NumPy .npy reader and writer (format versions 1.0-3.0). */
#include "dml_npy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dml_file.h"

#define OP "npy"

static const uint8_t k_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* ---- header parsing ---- */

/* Reads the fixed prefix (magic, version, header length) from the first
 * `n` bytes; sets *out_data_offset (where the array data starts). Needs 12
 * bytes at most. */
static dml_status_t parse_prefix(const uint8_t *b, size_t n, size_t *out_header_start,
                                 size_t *out_data_offset) {
  if (n < 10 || memcmp(b, k_magic, 6) != 0)
    return dml_status_make(DML_STATUS_DATA_LOSS, OP,
                           n < 10 ? "file is %zu bytes, too short for a .npy header"
                                  : "not a .npy file (bad magic; %zu bytes)",
                           n);
  uint8_t major = b[6], minor = b[7];
  size_t hl, start;
  if (major == 1 && minor == 0) {
    hl = (size_t)b[8] | (size_t)b[9] << 8;
    start = 10;
  } else if ((major == 2 || major == 3) && minor == 0) {
    if (n < 12)
      return dml_status_make(DML_STATUS_DATA_LOSS, OP,
                             "truncated .npy header (%zu bytes)", n);
    hl = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
    start = 12;
  } else {
    return dml_status_make(
        DML_STATUS_UNIMPLEMENTED, OP,
        ".npy format version %u.%u is not supported (1.0, 2.0, 3.0 are)", major, minor);
  }
  if (hl > DML_NPY_MAX_HEADER_BYTES)
    return dml_status_make(DML_STATUS_DATA_LOSS, OP,
                           ".npy header of %zu bytes exceeds the limit of %u", hl,
                           DML_NPY_MAX_HEADER_BYTES);
  *out_header_start = start;
  *out_data_offset = start + hl;
  return DML_OK;
}

typedef struct lex {
  const char *s;
  size_t n, i;
} lex_t;

static void skip_ws(lex_t *l) {
  while (l->i < l->n && (l->s[l->i] == ' ' || l->s[l->i] == '\t' || l->s[l->i] == '\n' ||
                         l->s[l->i] == '\r'))
    l->i++;
}
static int eat(lex_t *l, char c) {
  skip_ws(l);
  if (l->i < l->n && l->s[l->i] == c) {
    l->i++;
    return 1;
  }
  return 0;
}
/* A Python string literal in ' or " quotes, without escapes. */
static int read_pystr(lex_t *l, const char **out, size_t *out_len) {
  skip_ws(l);
  if (l->i >= l->n || (l->s[l->i] != '\'' && l->s[l->i] != '"')) return 0;
  char q = l->s[l->i++];
  size_t st = l->i;
  while (l->i < l->n && l->s[l->i] != q) {
    if (l->s[l->i] == '\\') return 0;
    l->i++;
  }
  if (l->i >= l->n) return 0;
  *out = l->s + st;
  *out_len = l->i - st;
  l->i++;
  return 1;
}
static int read_word(lex_t *l, const char *w) {
  skip_ws(l);
  size_t k = strlen(w);
  if (l->n - l->i >= k && memcmp(l->s + l->i, w, k) == 0) {
    l->i += k;
    return 1;
  }
  return 0;
}

static dml_status_t hdr_err(const char *why) {
  return dml_status_make(DML_STATUS_DATA_LOSS, OP, "malformed .npy header: %s", why);
}

/* Parses the header dict into t (dtype, rank, dims). */
/* NumPy unicode '<U<width>' ('|U', '=U' too): sets *width (code points
 * per element, >= 1); 0 when `d` is not a unicode descr. */
static int unicode_width(const char *d, size_t dl, uint64_t *width) {
  if (dl < 3 || (d[0] != '<' && d[0] != '|' && d[0] != '=') || d[1] != 'U') return 0;
  uint64_t w = 0;
  for (size_t i = 2; i < dl; i++) {
    if (d[i] < '0' || d[i] > '9' || w > (UINT64_C(1) << 32)) return 0;
    w = w * 10 + (uint64_t)(d[i] - '0');
  }
  if (w == 0) return 0;
  *width = w;
  return 1;
}

static dml_status_t parse_dict(const char *s, size_t n, dml_tensor_t *t,
                               uint64_t *width) {
  lex_t l = {s, n, 0};
  *width = 0;
  int have_descr = 0, have_order = 0, have_shape = 0;
  if (!eat(&l, '{')) return hdr_err("expected '{'");
  for (;;) {
    if (eat(&l, '}')) break;
    const char *key;
    size_t kl;
    if (!read_pystr(&l, &key, &kl)) return hdr_err("expected a quoted key");
    if (!eat(&l, ':')) return hdr_err("expected ':' after a key");
    if (kl == 5 && memcmp(key, "descr", 5) == 0) {
      const char *d;
      size_t dl;
      skip_ws(&l);
      if (l.i < l.n && l.s[l.i] == '[')
        return dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                               "structured .npy dtypes are not supported");
      if (!read_pystr(&l, &d, &dl)) return hdr_err("'descr' is not a string");
      if (have_descr) return hdr_err("'descr' given twice");
      have_descr = 1;
      t->dtype = dml_dtype_from_npy_descr(d, dl);
      if (t->dtype == DML_DTYPE_INVALID && unicode_width(d, dl, width))
        t->dtype = DML_DTYPE_STRING;
      if (t->dtype == DML_DTYPE_INVALID) {
        const char *why = dl && d[0] == '>'                         ? " (big-endian)"
                          : dl >= 2 && (d[1] == 'O' || d[0] == 'O') ? " (object arrays)"
                                                                    : "";
        return dml_status_make(
            DML_STATUS_UNIMPLEMENTED, OP,
            ".npy dtype '%.*s'%s is not supported (supported: f2 f4 f8 i1 "
            "i2 i4 i8 u1 u2 u4 u8 b1 and unicode U<n>, little-endian)",
            (int)(dl > 32 ? 32 : dl), d, why);
      }
    } else if (kl == 13 && memcmp(key, "fortran_order", 13) == 0) {
      if (have_order) return hdr_err("'fortran_order' given twice");
      have_order = 1;
      if (read_word(&l, "True"))
        return dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                               "Fortran-order .npy arrays are not supported; save a "
                               "C-contiguous array (numpy.ascontiguousarray)");
      if (!read_word(&l, "False")) return hdr_err("'fortran_order' is not True or False");
    } else if (kl == 5 && memcmp(key, "shape", 5) == 0) {
      if (have_shape) return hdr_err("'shape' given twice");
      have_shape = 1;
      if (!eat(&l, '(')) return hdr_err("'shape' is not a tuple");
      t->rank = 0;
      for (;;) {
        if (eat(&l, ')')) break;
        skip_ws(&l);
        int64_t v = 0;
        size_t st = l.i;
        while (l.i < l.n && l.s[l.i] >= '0' && l.s[l.i] <= '9') {
          int dgt = l.s[l.i] - '0';
          if (v > (INT64_MAX - dgt) / 10) return hdr_err("a dim overflows int64");
          v = v * 10 + dgt;
          l.i++;
        }
        if (l.i < l.n && l.s[l.i] == 'L') l.i++; /* Python 2 long suffix */
        if (l.i == st) return hdr_err("'shape' holds a non-integer");
        if (t->rank == DML_MAX_RANK)
          return dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                                 ".npy array has more than %d dims", DML_MAX_RANK);
        t->dims[t->rank++] = v;
        if (eat(&l, ')')) break;
        if (!eat(&l, ',')) return hdr_err("expected ',' or ')' in 'shape'");
      }
    } else {
      return hdr_err(
          "unexpected key (only 'descr', 'fortran_order', 'shape' are allowed)");
    }
    if (eat(&l, '}')) break;
    if (!eat(&l, ',')) return hdr_err("expected ',' or '}'");
  }
  skip_ws(&l);
  if (l.i != l.n) return hdr_err("bytes after the closing '}'");
  if (!have_descr || !have_order || !have_shape)
    return hdr_err("missing 'descr', 'fortran_order' or 'shape'");
  return DML_OK;
}

/* Parses the header in b[start, data_offset) and checks the data size
 * (`avail` bytes follow data_offset). */
static dml_status_t parse_header(const uint8_t *b, size_t start, size_t data_offset,
                                 uint64_t avail, dml_tensor_t *out, size_t *out_bytes,
                                 uint64_t *out_width) {
  dml_tensor_t t;
  memset(&t, 0, sizeof t);
  const char *h = (const char *)b + start;
  size_t hl = data_offset - start;
  if (memchr(h, 0, hl)) return hdr_err("NUL byte in the header");
  uint64_t width = 0;
  DML_RETURN_IF_ERROR(parse_dict(h, hl, &t, &width));
  *out_width = width;
  size_t nb = dml_tensor_bytes(&t);
  if (width) { /* the file's bytes: numel * 4 * width (UTF-32) */
    int64_t numel = dml_dims_numel(t.dims, t.rank);
    uint64_t fb;
    nb = numel < 0 || __builtin_mul_overflow((uint64_t)numel, 4 * width, &fb) ||
                 fb > SIZE_MAX / 2
             ? SIZE_MAX
             : (size_t)fb;
  }
  if (nb == SIZE_MAX)
    return dml_status_make(DML_STATUS_DATA_LOSS, OP,
                           ".npy shape overflows (dtype %s, rank %d)",
                           dml_dtype_name(t.dtype), (int)t.rank);
  if ((uint64_t)nb != avail) {
    char dims[160];
    return dml_status_make(
        DML_STATUS_DATA_LOSS, OP,
        ".npy header says %s%s (%zu bytes of data) but the file holds %llu "
        "bytes of data",
        dml_dtype_name(t.dtype), dml_dims_str(t.dims, t.rank, dims, sizeof dims), nb,
        (unsigned long long)avail);
  }
  *out = t;
  *out_bytes = nb;
  return DML_OK;
}

static void *alloc_data(size_t nb) {
  void *p = NULL;
  if (posix_memalign(&p, 64, nb ? nb : 64) != 0) return NULL;
  return p;
}

static void normalize_bool(dml_tensor_t *t, size_t nb) {
  if (t->dtype != DML_DTYPE_BOOL) return;
  uint8_t *p = (uint8_t *)t->data;
  for (size_t i = 0; i < nb; i++) p[i] = p[i] != 0;
}

/* The UTF-8 length of code point c (0: not a Unicode scalar value). */
static size_t utf8_len(uint32_t c) {
  if (c < 0x80) return 1;
  if (c < 0x800) return 2;
  if (c >= 0xD800 && c <= 0xDFFF) return 0;
  if (c < 0x10000) return 3;
  if (c <= 0x10FFFF) return 4;
  return 0;
}

static uint32_t get_le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

/* NumPy '<U<width>' data (UTF-32LE, each element `width` code points,
 * NUL-padded at the end) -> a string tensor: one 64-byte aligned buffer of
 * the numel dml_str_t descriptors followed by their UTF-8 bytes. A code
 * point that is no Unicode scalar value is DATA_LOSS. */
static dml_status_t utf32_to_strings(const uint8_t *src, dml_tensor_t *t, uint64_t width,
                                     void **out_buf) {
  size_t numel = (size_t)dml_dims_numel(t->dims, t->rank);
  size_t total = numel * sizeof(dml_str_t);
  for (size_t i = 0; i < numel; i++)
    for (uint64_t k = 0; k < width; k++) {
      uint32_t c = get_le32(src + (i * width + k) * 4);
      size_t l = utf8_len(c);
      if (!l)
        return dml_status_make(DML_STATUS_DATA_LOSS, OP,
                               ".npy unicode element %zu holds U+%X, not a Unicode "
                               "scalar value",
                               i, (unsigned)c);
      total += l;
    }
  uint8_t *buf = (uint8_t *)alloc_data(total);
  if (!buf)
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory (%zu bytes)",
                           total);
  dml_str_t *d = (dml_str_t *)buf;
  uint8_t *p = buf + numel * sizeof(dml_str_t);
  for (size_t i = 0; i < numel; i++) {
    uint64_t n = width; /* trailing NULs are padding (NumPy strips them) */
    while (n > 0 && get_le32(src + (i * width + n - 1) * 4) == 0) n--;
    d[i].data = (const char *)p;
    for (uint64_t k = 0; k < n; k++) {
      uint32_t c = get_le32(src + (i * width + k) * 4);
      if (c < 0x80) {
        *p++ = (uint8_t)c;
      } else if (c < 0x800) {
        *p++ = (uint8_t)(0xC0 | (c >> 6));
        *p++ = (uint8_t)(0x80 | (c & 0x3F));
      } else if (c < 0x10000) {
        *p++ = (uint8_t)(0xE0 | (c >> 12));
        *p++ = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
        *p++ = (uint8_t)(0x80 | (c & 0x3F));
      } else {
        *p++ = (uint8_t)(0xF0 | (c >> 18));
        *p++ = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
        *p++ = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
        *p++ = (uint8_t)(0x80 | (c & 0x3F));
      }
    }
    d[i].len = (uint64_t)(p - (const uint8_t *)d[i].data);
    if (!d[i].len) d[i].data = "";
  }
  t->data = buf;
  *out_buf = buf;
  return DML_OK;
}

dml_status_t dml_npy_read_memory(const void *bytes, size_t size, dml_tensor_t *out,
                                 void **out_buffer) {
  const uint8_t *b = (const uint8_t *)bytes;
  size_t start = 0, data_off = 0, nb = 0;
  DML_RETURN_IF_ERROR(parse_prefix(b, size, &start, &data_off));
  if (data_off > size)
    return dml_status_make(
        DML_STATUS_DATA_LOSS, OP,
        "truncated .npy file: header ends at byte %zu, file is %zu bytes", data_off,
        size);
  dml_tensor_t t;
  uint64_t width = 0;
  DML_RETURN_IF_ERROR(parse_header(b, start, data_off, size - data_off, &t, &nb, &width));
  if (width) {
    void *sbuf = NULL;
    DML_RETURN_IF_ERROR(utf32_to_strings(b + data_off, &t, width, &sbuf));
    *out = t;
    *out_buffer = sbuf;
    return DML_OK;
  }
  void *buf = alloc_data(nb);
  if (!buf)
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory (%zu bytes)",
                           nb);
  if (nb) memcpy(buf, b + data_off, nb);
  t.data = buf;
  normalize_bool(&t, nb);
  *out = t;
  *out_buffer = buf;
  return DML_OK;
}

static int read_full(int fd, void *dst, size_t n) {
  uint8_t *p = (uint8_t *)dst;
  while (n) {
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

dml_status_t dml_npy_read_file(const char *path, dml_tensor_t *out, void **out_buffer) {
  dml_status_t st = DML_OK;
  uint8_t *hdr = NULL;
  void *buf = NULL;
  int fd;
  uint64_t fsize;
  DML_RETURN_IF_ERROR(dml_file_open_read(OP, path, &fd, &fsize));
  uint8_t pre[12];
  size_t pn = fsize < sizeof pre ? (size_t)fsize : sizeof pre;
  if (read_full(fd, pre, pn) != 0) {
    st = dml_status_make(DML_STATUS_IO, OP, "reading '%s' failed: %s", path,
                         strerror(errno));
    goto close_fd;
  }
  size_t start = 0, data_off = 0, nb = 0;
  st = parse_prefix(pre, pn, &start, &data_off);
  if (st) goto close_fd;
  if (data_off > fsize) {
    st = dml_status_make(
        DML_STATUS_DATA_LOSS, OP,
        "truncated .npy file: header ends at byte %zu, file is %llu bytes", data_off,
        (unsigned long long)fsize);
    goto close_fd;
  }
  hdr = (uint8_t *)malloc(data_off);
  if (!hdr) {
    st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
    goto close_fd;
  }
  memcpy(hdr, pre, pn);
  if (read_full(fd, hdr + pn, data_off - pn) != 0) {
    st = dml_status_make(DML_STATUS_IO, OP, "reading '%s' failed", path);
    goto free_hdr;
  }
  dml_tensor_t t;
  uint64_t width = 0;
  st = parse_header(hdr, start, data_off, fsize - data_off, &t, &nb, &width);
  if (st) goto free_hdr;
  buf = alloc_data(nb);
  if (!buf) {
    st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory (%zu bytes)",
                         nb);
    goto free_hdr;
  }
  if (read_full(fd, buf, nb) != 0) {
    st = dml_status_make(DML_STATUS_IO, OP, "reading the data of '%s' failed", path);
    free(buf);
    goto free_hdr;
  }
  t.data = buf;
  normalize_bool(&t, nb);
  if (width) {
    void *sbuf = NULL;
    st = utf32_to_strings((const uint8_t *)buf, &t, width, &sbuf);
    free(buf);
    if (st) goto free_hdr;
    buf = sbuf;
  }
  *out = t;
  *out_buffer = buf;
free_hdr:
  free(hdr);
close_fd:
  close(fd);
  if (st) st = dml_status_annotate(st, "reading '%s'", path);
  return st;
}

/* ---- writer ---- */

static dml_status_t write_npy(const dml_tensor_t *t, const char *descr, const void *data,
                              size_t nb, void **out_bytes, size_t *out_size);

/* Decodes one UTF-8 sequence at p[0..n): its code point and length, 0 when
 * the bytes are not valid UTF-8 there (overlong, surrogate, > U+10FFFF). */
static size_t utf8_next(const uint8_t *p, size_t n, uint32_t *cp) {
  if (!n) return 0;
  uint32_t c = p[0];
  size_t l = c < 0x80             ? 1
             : (c & 0xE0) == 0xC0 ? 2
             : (c & 0xF0) == 0xE0 ? 3
             : (c & 0xF8) == 0xF0 ? 4
                                  : 0;
  if (!l || l > n) return 0;
  if (l > 1) c &= 0x3Fu >> (l - 1);
  for (size_t i = 1; i < l; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    c = c << 6 | (p[i] & 0x3F);
  }
  if (utf8_len(c) != l) return 0; /* overlong or not a scalar value */
  *cp = c;
  return l;
}

/* A string tensor as NumPy '<U<width>' (width: the longest element in code
 * points, at least 1): UTF-32LE, NUL-padded. Elements must be valid UTF-8
 * not ending in NUL (NumPy strips trailing NULs); else INVALID_ARGUMENT. */
static dml_status_t write_strings(const dml_tensor_t *t, void **out_bytes,
                                  size_t *out_size) {
  if (t->rank < 0 || t->rank > DML_MAX_RANK)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "bad rank %d", (int)t->rank);
  int64_t numel = dml_dims_numel(t->dims, t->rank);
  if (numel < 0 || (numel && !t->data))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "bad shape or missing data");
  const dml_str_t *e = (const dml_str_t *)t->data;
  uint64_t width = 1;
  for (int64_t i = 0; i < numel; i++) {
    const uint8_t *p = (const uint8_t *)e[i].data;
    uint64_t cps = 0;
    for (size_t k = 0; k < e[i].len;) {
      uint32_t c = 0;
      size_t l = utf8_next(p + k, (size_t)e[i].len - k, &c);
      if (!l || (c == 0 && k + l == e[i].len))
        return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                               "string element %lld is not valid UTF-8 ending in a "
                               "non-NUL character (at byte %zu): NumPy's unicode dtype "
                               "cannot hold it",
                               (long long)i, k);
      k += l;
      cps++;
    }
    if (cps > width) width = cps;
  }
  uint64_t nb;
  if (__builtin_mul_overflow((uint64_t)numel, 4 * width, &nb) || nb > SIZE_MAX / 2)
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "tensor too large");
  uint8_t *data = (uint8_t *)calloc(nb ? (size_t)nb : 1, 1);
  if (!data) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  for (int64_t i = 0; i < numel; i++) {
    const uint8_t *p = (const uint8_t *)e[i].data;
    uint8_t *o = data + (size_t)i * 4 * width;
    for (size_t k = 0; k < e[i].len;) {
      uint32_t c = 0;
      k += utf8_next(p + k, (size_t)e[i].len - k, &c);
      o[0] = (uint8_t)c, o[1] = (uint8_t)(c >> 8), o[2] = (uint8_t)(c >> 16),
      o[3] = (uint8_t)(c >> 24);
      o += 4;
    }
  }
  char descr[32];
  snprintf(descr, sizeof descr, "<U%llu", (unsigned long long)width);
  dml_tensor_t raw = *t;
  raw.dtype = DML_DTYPE_U8; /* the header's shape with these bytes */
  dml_status_t st = write_npy(&raw, descr, data, (size_t)nb, out_bytes, out_size);
  free(data);
  return st;
}

dml_status_t dml_npy_write_memory(const dml_tensor_t *t, void **out_bytes,
                                  size_t *out_size) {
  if (t->dtype == DML_DTYPE_STRING) return write_strings(t, out_bytes, out_size);
  const char *descr = dml_dtype_npy_descr(t->dtype);
  if (!descr)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                           "dtype %s has no NumPy equivalent", dml_dtype_name(t->dtype));
  if (t->rank < 0 || t->rank > DML_MAX_RANK)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "bad rank %d", (int)t->rank);
  size_t nb = dml_tensor_bytes(t);
  if (nb == SIZE_MAX || (nb && !t->data))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "bad shape or missing data");
  return write_npy(t, descr, t->data, nb, out_bytes, out_size);
}

/* The .npy file of t's shape with dtype `descr` and the nb bytes at data. */
static dml_status_t write_npy(const dml_tensor_t *t, const char *descr, const void *data,
                              size_t nb, void **out_bytes, size_t *out_size) {
  char dict[512];
  int k = snprintf(dict, sizeof dict,
                   "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int32_t i = 0; i < t->rank; i++)
    k += snprintf(dict + k, sizeof dict - (size_t)k, "%lld, ", (long long)t->dims[i]);
  if (t->rank == 1) k -= 1; /* "(3,)" */
  if (t->rank > 1) k -= 2;  /* "(3, 4)" */
  k += snprintf(dict + k, sizeof dict - (size_t)k, "), }");
  /* Pad with spaces + '\n' so the data starts at a multiple of 64. */
  size_t total = 10 + (size_t)k + 1;
  size_t padded = (total + 63) / 64 * 64;
  size_t hl = padded - 10;
  if (nb > SIZE_MAX - padded)
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "tensor too large");
  uint8_t *b = (uint8_t *)malloc(padded + nb);
  if (!b) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  memcpy(b, k_magic, 6);
  b[6] = 1;
  b[7] = 0;
  b[8] = (uint8_t)(hl & 0xff);
  b[9] = (uint8_t)(hl >> 8);
  memcpy(b + 10, dict, (size_t)k);
  memset(b + 10 + k, ' ', padded - 10 - (size_t)k - 1);
  b[padded - 1] = '\n';
  if (nb) memcpy(b + padded, data, nb);
  *out_bytes = b;
  *out_size = padded + nb;
  return DML_OK;
}

dml_status_t dml_npy_write_file(const char *path, const dml_tensor_t *t) {
  void *bytes;
  size_t size;
  DML_RETURN_IF_ERROR(dml_npy_write_memory(t, &bytes, &size));
  const void *parts[1] = {bytes};
  dml_status_t st = dml_file_write_atomic(OP, path, parts, &size, 1);
  free(bytes);
  return st;
}
