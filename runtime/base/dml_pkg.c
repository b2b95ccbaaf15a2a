/* dml_pkg.c — the .dmlpkg container (parse, map, write) and the "graph"
 * section (encode, decode with validation). Byte layouts:
 * docs/package-format.md. Everything read here is untrusted. */
#include "dml_pkg.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dml_file.h"

#define OP_LOAD "pkg.load"
#define OP_WRITE "pkg.write"

static dml_status_t oom(const char *op) {
  return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, op, "out of memory");
}

/* ---- little-endian scalars ---- */

static uint32_t get_u32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}
static uint64_t get_u64(const uint8_t *p) {
  return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}
static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static int is_pow2(uint32_t a) {
  return a != 0 && (a & (a - 1)) == 0;
}

/* ===================================================================== */
/* Container parse                                                       */
/* ===================================================================== */

/* Validates a 16-byte tag field: 1..15 printable ASCII characters, then NULs. */
static int tag_ok(const uint8_t *t, char *out) {
  size_t n = 0;
  while (n < DML_PKG_TAG_BYTES && t[n]) {
    if (t[n] < 0x21 || t[n] > 0x7e) return 0;
    n++;
  }
  if (n == 0 || n == DML_PKG_TAG_BYTES) return 0;
  for (size_t i = n; i < DML_PKG_TAG_BYTES; i++)
    if (t[i]) return 0;
  memcpy(out, t, n);
  out[n] = 0;
  return 1;
}

dml_status_t dml_pkg_parse(const void *bytes, size_t size, dml_pkg_t *out_pkg) {
  const uint8_t *b = (const uint8_t *)bytes;
  if (size < DML_PKG_HEADER_REGION_BYTES(0))
    return dml_status_make(DML_STATUS_DATA_LOSS, OP_LOAD,
                           "file is %zu bytes, smaller than a package header (%zu bytes)",
                           size, DML_PKG_HEADER_REGION_BYTES(0));
  if (memcmp(b, DML_PKG_MAGIC, 8) != 0)
    return dml_status_make(DML_STATUS_DATA_LOSS, OP_LOAD,
                           "not a .dmlpkg package (bad magic at offset 0)");
  uint32_t version = get_u32(b + 8), flags = get_u32(b + 12);
  uint32_t n_sections = get_u32(b + 16), reserved = get_u32(b + 20);
  uint64_t file_size = get_u64(b + 24);
  if (n_sections > DML_PKG_MAX_SECTIONS)
    return dml_status_make(DML_STATUS_DATA_LOSS, OP_LOAD,
                           "header declares %" PRIu32 " sections (at most %d; offset 16)",
                           n_sections, DML_PKG_MAX_SECTIONS);
  size_t region = DML_PKG_HEADER_REGION_BYTES(n_sections);
  if (region > size)
    return dml_status_make(DML_STATUS_DATA_LOSS, OP_LOAD,
                           "truncated: the header and section table need %zu bytes, the "
                           "file has %zu",
                           region, size);
  uint32_t stored_crc = get_u32(b + region - 4);
  uint32_t crc = dml_crc32(b, region - 4);
  if (crc != stored_crc) {
    dml_status_t s = dml_status_make(DML_STATUS_DATA_LOSS, OP_LOAD,
                                     "header CRC mismatch (stored 0x%08" PRIx32
                                     " at offset %zu, computed 0x%08" PRIx32
                                     "): the header or section table is corrupt",
                                     stored_crc, region - 4, crc);
    if (version < DML_PKG_FORMAT_VERSION_MIN || version > DML_PKG_FORMAT_VERSION)
      s = dml_status_detail(s,
                            "format version field reads %" PRIu32
                            " (this runtime reads versions %u to %u)",
                            version, DML_PKG_FORMAT_VERSION_MIN, DML_PKG_FORMAT_VERSION);
    return s;
  }
  if (version < DML_PKG_FORMAT_VERSION_MIN || version > DML_PKG_FORMAT_VERSION)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, OP_LOAD,
                           "package format version %" PRIu32
                           " is not supported (this runtime reads versions %u to %u)",
                           version, DML_PKG_FORMAT_VERSION_MIN, DML_PKG_FORMAT_VERSION);
  if (flags != 0)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, OP_LOAD,
                           "package flags 0x%08" PRIx32 " are not supported", flags);
  if (reserved != 0)
    return dml_status_make(
        DML_STATUS_DATA_LOSS, OP_LOAD,
        "reserved header field (offset 20) is 0x%08" PRIx32 ", expected 0", reserved);
  if (file_size != (uint64_t)size)
    return dml_status_make(DML_STATUS_DATA_LOSS, OP_LOAD,
                           "header says the file is %" PRIu64
                           " bytes but it is %zu bytes (truncated or appended to)",
                           file_size, size);

  dml_pkg_t *p = out_pkg;
  memset(p, 0, sizeof(*p));
  p->format_version = version;
  p->flags = flags;
  p->file_size = file_size;
  p->header_crc32 = stored_crc;
  p->n_sections = n_sections;
  for (uint32_t i = 0; i < n_sections; i++) {
    const uint8_t *e = b + DML_PKG_HEADER_BYTES + (size_t)DML_PKG_ENTRY_BYTES * i;
    size_t eoff = (size_t)(e - b);
    dml_pkg_section_t *s = &p->sections[i];
    if (!tag_ok(e, s->tag))
      return dml_status_make(DML_STATUS_DATA_LOSS, OP_LOAD,
                             "section %" PRIu32 " has a malformed tag (offset %zu)", i,
                             eoff);
    s->offset = get_u64(e + 16);
    s->size = get_u64(e + 24);
    s->alignment = get_u32(e + 32);
    s->crc32 = get_u32(e + 36);
    for (uint32_t j = 0; j < i; j++)
      if (strcmp(p->sections[j].tag, s->tag) == 0)
        return dml_status_make(DML_STATUS_DATA_LOSS, OP_LOAD,
                               "section '%s' appears twice in the table", s->tag);
    if (!is_pow2(s->alignment) || s->alignment > DML_PKG_MAX_ALIGNMENT)
      return dml_status_make(DML_STATUS_DATA_LOSS, OP_LOAD,
                             "section '%s': alignment %" PRIu32
                             " is not a power of two <= %u (offset %zu)",
                             s->tag, s->alignment, DML_PKG_MAX_ALIGNMENT, eoff + 32);
    if (s->offset < region || s->offset > file_size || s->size > file_size - s->offset)
      return dml_status_make(DML_STATUS_DATA_LOSS, OP_LOAD,
                             "section '%s': bytes [%" PRIu64 ", +%" PRIu64
                             ") lie outside the file's section area [%zu, %" PRIu64 ")",
                             s->tag, s->offset, s->size, region, file_size);
    if (s->offset % s->alignment != 0)
      return dml_status_make(DML_STATUS_DATA_LOSS, OP_LOAD,
                             "section '%s': offset %" PRIu64 " is not %" PRIu32
                             "-byte aligned",
                             s->tag, s->offset, s->alignment);
    for (uint32_t j = 0; j < i; j++) {
      const dml_pkg_section_t *o = &p->sections[j];
      if (s->size && o->size && s->offset < o->offset + o->size &&
          o->offset < s->offset + s->size)
        return dml_status_make(DML_STATUS_DATA_LOSS, OP_LOAD,
                               "sections '%s' and '%s' overlap", o->tag, s->tag);
    }
    s->data = b + s->offset;
    uint32_t c = dml_crc32(s->data, (size_t)s->size);
    if (c != s->crc32)
      return dml_status_make(DML_STATUS_DATA_LOSS, OP_LOAD,
                             "section '%s' (offset %" PRIu64 ", %" PRIu64
                             " bytes) is corrupt: CRC 0x%08" PRIx32
                             ", expected 0x%08" PRIx32,
                             s->tag, s->offset, s->size, c, s->crc32);
  }
  return DML_OK;
}

const dml_pkg_section_t *dml_pkg_find_section(const dml_pkg_t *pkg, const char *tag) {
  for (uint32_t i = 0; i < pkg->n_sections; i++)
    if (strcmp(pkg->sections[i].tag, tag) == 0) return &pkg->sections[i];
  return NULL;
}

/* ===================================================================== */
/* File mapping                                                          */
/* ===================================================================== */

static const uint8_t g_empty[1];

dml_status_t dml_pkg_file_open(const char *path, dml_pkg_file_t *out_file) {
  int fd;
  uint64_t fsize;
  DML_RETURN_IF_ERROR(dml_file_open_read(OP_LOAD, path, &fd, &fsize));
  if (fsize > (uint64_t)SIZE_MAX / 2) {
    close(fd);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP_LOAD, "'%s' is too large",
                           path);
  }
  size_t size = (size_t)fsize;
  dml_pkg_file_t f = {g_empty, 0, 0};
  if (size == 0) {
    close(fd);
    *out_file = f;
    return DML_OK;
  }
  void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (m != MAP_FAILED) {
    close(fd);
    f.data = (const uint8_t *)m;
    f.size = size;
    f.mapped = 1;
    *out_file = f;
    return DML_OK;
  }
  /* Fallback: read the whole file into a page-aligned buffer. */
  void *buf = NULL;
  if (posix_memalign(&buf, 4096, size) != 0) {
    close(fd);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP_LOAD,
                           "cannot allocate %zu bytes to read '%s'", size, path);
  }
  size_t got = 0;
  while (got < size) {
    ssize_t r = read(fd, (uint8_t *)buf + got, size - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      int e = r < 0 ? errno : 0;
      close(fd);
      free(buf);
      return dml_status_make(DML_STATUS_IO, OP_LOAD,
                             "reading '%s' failed at byte %zu: %s", path, got,
                             e ? strerror(e) : "unexpected end of file");
    }
    got += (size_t)r;
  }
  close(fd);
  f.data = (const uint8_t *)buf;
  f.size = size;
  f.mapped = 0;
  *out_file = f;
  return DML_OK;
}

void dml_pkg_file_close(dml_pkg_file_t *f) {
  if (!f) return;
  if (f->data && f->data != g_empty) {
    if (f->mapped)
      munmap((void *)f->data, f->size);
    else
      free((void *)f->data);
  }
  memset(f, 0, sizeof(*f));
}

/* ===================================================================== */
/* Writer                                                                */
/* ===================================================================== */

typedef struct wsection {
  char tag[DML_PKG_TAG_BYTES];
  const void *data;
  size_t size;
  uint32_t alignment;
  uint64_t offset;
} wsection_t;

struct dml_pkg_writer {
  uint32_t n;
  wsection_t s[DML_PKG_MAX_SECTIONS];
};

dml_status_t dml_pkg_writer_create(dml_pkg_writer_t **out_writer) {
  dml_pkg_writer_t *w = (dml_pkg_writer_t *)calloc(1, sizeof(*w));
  if (!w) return oom(OP_WRITE);
  *out_writer = w;
  return DML_OK;
}

void dml_pkg_writer_release(dml_pkg_writer_t *w) {
  free(w);
}

dml_status_t dml_pkg_writer_add_section(dml_pkg_writer_t *w, const char *tag,
                                        const void *data, size_t size,
                                        uint32_t alignment) {
  size_t n = tag ? strlen(tag) : 0;
  if (n == 0 || n >= DML_PKG_TAG_BYTES)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP_WRITE,
                           "section tag '%s' must have 1 to %d characters",
                           tag ? tag : "", DML_PKG_TAG_BYTES - 1);
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)tag[i] < 0x21 || (unsigned char)tag[i] > 0x7e)
      return dml_status_make(
          DML_STATUS_INVALID_ARGUMENT, OP_WRITE,
          "section tag '%s' has a character that is not printable ASCII", tag);
  if (!is_pow2(alignment) || alignment > DML_PKG_MAX_ALIGNMENT)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP_WRITE,
                           "section '%s': alignment %" PRIu32
                           " is not a power of two <= %u",
                           tag, alignment, DML_PKG_MAX_ALIGNMENT);
  if (size && !data)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP_WRITE,
                           "section '%s': NULL data for %zu bytes", tag, size);
  if (w->n == DML_PKG_MAX_SECTIONS)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP_WRITE,
                           "a package holds at most %d sections", DML_PKG_MAX_SECTIONS);
  for (uint32_t i = 0; i < w->n; i++)
    if (strncmp(w->s[i].tag, tag, DML_PKG_TAG_BYTES) == 0)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP_WRITE,
                             "section '%s' added twice", tag);
  wsection_t *s = &w->s[w->n++];
  memset(s->tag, 0, sizeof(s->tag));
  memcpy(s->tag, tag, n);
  s->data = data;
  s->size = size;
  s->alignment = alignment;
  return DML_OK;
}

dml_status_t dml_pkg_writer_set_section(dml_pkg_writer_t *w, const char *tag,
                                        const void *data, size_t size,
                                        uint32_t alignment) {
  for (uint32_t i = 0; tag && i < w->n; i++)
    if (strncmp(w->s[i].tag, tag, DML_PKG_TAG_BYTES) == 0) {
      if (size && !data)
        return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP_WRITE,
                               "section '%s': NULL data for %zu bytes", tag, size);
      w->s[i].data = data;
      w->s[i].size = size;
      return DML_OK;
    }
  return dml_pkg_writer_add_section(w, tag, data, size, alignment);
}

/* Assigns section offsets and fills the header region (`hdr`, of
 * DML_PKG_HEADER_REGION_BYTES(n) bytes); returns the file size. */
static dml_status_t layout(dml_pkg_writer_t *w, uint8_t *hdr, uint64_t *out_size) {
  size_t region = DML_PKG_HEADER_REGION_BYTES(w->n);
  uint64_t pos = region;
  for (uint32_t i = 0; i < w->n; i++) {
    wsection_t *s = &w->s[i];
    uint64_t a = s->alignment;
    uint64_t off = (pos + a - 1) / a * a;
    if (off < pos || (uint64_t)s->size > UINT64_MAX - off || off + s->size > SIZE_MAX / 2)
      return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP_WRITE,
                             "package too large");
    s->offset = off;
    pos = off + s->size;
  }
  memset(hdr, 0, region);
  memcpy(hdr, DML_PKG_MAGIC, 8);
  put_u32(hdr + 8, DML_PKG_FORMAT_VERSION);
  put_u32(hdr + 12, 0);
  put_u32(hdr + 16, w->n);
  put_u32(hdr + 20, 0);
  put_u64(hdr + 24, pos);
  for (uint32_t i = 0; i < w->n; i++) {
    uint8_t *e = hdr + DML_PKG_HEADER_BYTES + (size_t)DML_PKG_ENTRY_BYTES * i;
    const wsection_t *s = &w->s[i];
    memcpy(e, s->tag, DML_PKG_TAG_BYTES);
    put_u64(e + 16, s->offset);
    put_u64(e + 24, s->size);
    put_u32(e + 32, s->alignment);
    put_u32(e + 36, dml_crc32(s->data, s->size));
  }
  put_u32(hdr + region - 4, dml_crc32(hdr, region - 4));
  *out_size = pos;
  return DML_OK;
}

dml_status_t dml_pkg_writer_finish_memory(dml_pkg_writer_t *w, void **out_bytes,
                                          size_t *out_size) {
  uint8_t hdr[DML_PKG_HEADER_REGION_BYTES(DML_PKG_MAX_SECTIONS)];
  uint64_t size;
  DML_RETURN_IF_ERROR(layout(w, hdr, &size));
  uint8_t *buf = (uint8_t *)calloc(1, (size_t)size);
  if (!buf) return oom(OP_WRITE);
  memcpy(buf, hdr, DML_PKG_HEADER_REGION_BYTES(w->n));
  for (uint32_t i = 0; i < w->n; i++)
    if (w->s[i].size) memcpy(buf + w->s[i].offset, w->s[i].data, w->s[i].size);
  *out_bytes = buf;
  *out_size = (size_t)size;
  return DML_OK;
}

static int write_zeros(int fd, uint64_t n) {
  static const uint8_t zeros[4096];
  while (n) {
    size_t k = n > sizeof(zeros) ? sizeof(zeros) : (size_t)n;
    if (dml_file_write_all(fd, zeros, k) != 0) return -1;
    n -= k;
  }
  return 0;
}

typedef struct {
  const dml_pkg_writer_t *w;
  const uint8_t *hdr;
} pkg_write_ctx_t;

/* The header region, then each section at its aligned offset. */
static int write_pkg(int fd, void *ctx) {
  const pkg_write_ctx_t *c = (const pkg_write_ctx_t *)ctx;
  const dml_pkg_writer_t *w = c->w;
  size_t region = DML_PKG_HEADER_REGION_BYTES(w->n);
  uint64_t pos = region;
  if (dml_file_write_all(fd, c->hdr, region) != 0) return -1;
  for (uint32_t i = 0; i < w->n; i++) {
    if (write_zeros(fd, w->s[i].offset - pos) != 0 ||
        dml_file_write_all(fd, w->s[i].data, w->s[i].size) != 0)
      return -1;
    pos = w->s[i].offset + w->s[i].size;
  }
  return 0;
}

dml_status_t dml_pkg_writer_finish_file(dml_pkg_writer_t *w, const char *path) {
  uint8_t hdr[DML_PKG_HEADER_REGION_BYTES(DML_PKG_MAX_SECTIONS)];
  uint64_t size;
  DML_RETURN_IF_ERROR(layout(w, hdr, &size));
  pkg_write_ctx_t c = {w, hdr};
  return dml_file_write_atomic_fn(OP_WRITE, path, write_pkg, &c);
}

/* ===================================================================== */
/* Graph section: encoder                                                */
/* ===================================================================== */

typedef struct wbuf {
  uint8_t *p;
  size_t n, cap;
  int failed;
} wbuf_t;

static void wb_put(wbuf_t *b, const void *data, size_t n) {
  if (b->failed) return;
  if (n > SIZE_MAX / 2 - b->n) {
    b->failed = 1;
    return;
  }
  if (b->n + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + n) cap *= 2;
    uint8_t *q = (uint8_t *)realloc(b->p, cap);
    if (!q) {
      b->failed = 1;
      return;
    }
    b->p = q;
    b->cap = cap;
  }
  if (n) memcpy(b->p + b->n, data, n);
  b->n += n;
}
static void wb_u32(wbuf_t *b, uint32_t v) {
  uint8_t t[4];
  put_u32(t, v);
  wb_put(b, t, 4);
}
static void wb_u64(wbuf_t *b, uint64_t v) {
  uint8_t t[8];
  put_u64(t, v);
  wb_put(b, t, 8);
}
static void wb_i64(wbuf_t *b, int64_t v) {
  wb_u64(b, (uint64_t)v);
}
static void wb_f64(wbuf_t *b, double v) {
  uint64_t u;
  memcpy(&u, &v, 8);
  wb_u64(b, u);
}
static void wb_str(wbuf_t *b, const char *s) {
  if (!s) s = "";
  size_t n = strlen(s);
  if (n > UINT32_MAX) {
    b->failed = 1;
    return;
  }
  wb_u32(b, (uint32_t)n);
  wb_put(b, s, n);
}

static dml_status_t encode_attr(wbuf_t *b, const dml_attr_t *a) {
  if (!a->name || !*a->name)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP_WRITE,
                           "attribute without a name");
  wb_str(b, a->name);
  wb_u32(b, (uint32_t)a->kind);
  switch (a->kind) {
    case DML_ATTR_INT: wb_i64(b, a->i); break;
    case DML_ATTR_FLOAT: wb_f64(b, a->f); break;
    case DML_ATTR_STRING: wb_str(b, a->s); break;
    case DML_ATTR_INTS:
    case DML_ATTR_FLOATS:
    case DML_ATTR_STRINGS:
      if (a->n > UINT32_MAX)
        return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP_WRITE,
                               "attribute '%s' has too many elements", a->name);
      wb_u32(b, (uint32_t)a->n);
      for (size_t i = 0; i < a->n; i++) {
        if (a->kind == DML_ATTR_INTS)
          wb_i64(b, a->ints[i]);
        else if (a->kind == DML_ATTR_FLOATS)
          wb_f64(b, a->floats[i]);
        else
          wb_str(b, a->strings[i]);
      }
      break;
    case DML_ATTR_TENSOR: {
      const dml_tensor_t *t = &a->tensor;
      if (t->dtype == DML_DTYPE_STRING)
        return dml_status_make(DML_STATUS_UNIMPLEMENTED, OP_WRITE,
                               "tensor attribute '%s' holds strings, which packages do "
                               "not store (STRINGS attributes do)",
                               a->name);
      size_t nb = dml_tensor_bytes(t);
      if (t->rank < 0 || t->rank > DML_MAX_RANK || nb == SIZE_MAX || (nb && !t->data))
        return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP_WRITE,
                               "tensor attribute '%s' has a bad shape, dtype or no data",
                               a->name);
      wb_u32(b, (uint32_t)t->dtype);
      wb_u32(b, (uint32_t)t->rank);
      for (int32_t i = 0; i < t->rank; i++) wb_i64(b, t->dims[i]);
      wb_u64(b, nb);
      wb_put(b, t->data, nb);
      break;
    }
    default:
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP_WRITE,
                             "attribute '%s' has unknown kind %d", a->name, (int)a->kind);
  }
  return DML_OK;
}

static dml_status_t encode_function(wbuf_t *b, const dml_pkg_function_t *f) {
  wb_str(b, f->name);
  wb_u64(b, f->arena_bytes);
  wb_u32(b, f->n_values);
  for (uint32_t i = 0; i < f->n_values; i++) {
    const dml_pkg_value_t *v = &f->values[i];
    if (v->type.rank < 0 || v->type.rank > DML_MAX_RANK)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP_WRITE,
                             "function '%s': value '%s' has unknown rank", f->name,
                             v->name ? v->name : "");
    wb_str(b, v->name);
    wb_u32(b, (uint32_t)v->type.dtype);
    wb_u32(b, (uint32_t)v->type.rank);
    for (int32_t d = 0; d < v->type.rank; d++) {
      wb_i64(b, v->type.dims[d].value);
      wb_u32(b, (uint32_t)v->type.dims[d].sym);
    }
    wb_u32(b, (uint32_t)v->storage);
    wb_u32(b, v->flags);
    wb_u64(b, v->offset);
    wb_u64(b, v->bytes);
  }
  wb_u32(b, f->n_nodes);
  for (uint32_t i = 0; i < f->n_nodes; i++) {
    const dml_pkg_node_t *n = &f->nodes[i];
    if (!n->op_name || !*n->op_name)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP_WRITE,
                             "function '%s': node #%" PRIu32 " has no op name", f->name,
                             i);
    wb_str(b, n->op_name);
    wb_str(b, n->name);
    wb_u32(b, n->n_inputs);
    for (uint32_t k = 0; k < n->n_inputs; k++) wb_u32(b, n->inputs[k]);
    wb_u32(b, n->n_outputs);
    for (uint32_t k = 0; k < n->n_outputs; k++) wb_u32(b, n->outputs[k]);
    wb_u32(b, n->n_attrs);
    for (uint32_t k = 0; k < n->n_attrs; k++)
      DML_RETURN_IF_ERROR(dml_status_annotate(encode_attr(b, &n->attrs[k]),
                                              "encoding node '%s' (%s)",
                                              n->name ? n->name : "", n->op_name));
  }
  wb_u32(b, f->n_inputs);
  for (uint32_t k = 0; k < f->n_inputs; k++) wb_u32(b, f->inputs[k]);
  wb_u32(b, f->n_outputs);
  for (uint32_t k = 0; k < f->n_outputs; k++) wb_u32(b, f->outputs[k]);
  return DML_OK;
}

dml_status_t dml_pkg_graph_encode(const dml_pkg_graph_t *g, void **out_bytes,
                                  size_t *out_size) {
  wbuf_t b = {0};
  dml_status_t st = DML_OK;
  wb_u32(&b, g->n_symbols);
  for (uint32_t i = 0; i < g->n_symbols; i++) {
    const dml_pkg_symbol_t *sy = &g->symbols[i];
    wb_str(&b, sy->name);
    wb_i64(&b, sy->bound);
    wb_u32(&b, (uint32_t)sy->origin);
    if (sy->origin == DML_PKG_SYMBOL_NODE) {
      wb_u32(&b, sy->function);
      wb_u32(&b, sy->node);
      wb_u32(&b, sy->output);
      wb_u32(&b, sy->dim);
    }
    if (sy->origin == DML_PKG_SYMBOL_DERIVED) {
      wb_u32(&b, (uint32_t)sy->src[0]);
      wb_u32(&b, (uint32_t)sy->src[1]);
      wb_i64(&b, sy->mul);
      wb_i64(&b, sy->add);
      wb_i64(&b, sy->div);
    }
  }
  wb_u32(&b, g->n_functions);
  for (uint32_t i = 0; i < g->n_functions && !st; i++)
    st = encode_function(&b, &g->functions[i]);
  if (!st && b.failed) st = oom(OP_WRITE);
  if (st) {
    free(b.p);
    return st;
  }
  *out_bytes = b.p;
  *out_size = b.n;
  return DML_OK;
}

/* ===================================================================== */
/* Graph section: decoder                                                */
/* ===================================================================== */

/* A bump allocator owning a decoded graph's memory. */
typedef struct pool_block {
  struct pool_block *next;
  size_t cap, used;
  /* data follows, 64-byte aligned */
} pool_block_t;

struct dml_pkg_pool {
  pool_block_t *head;
};

#define POOL_HDR ((sizeof(pool_block_t) + 63) / 64 * 64)

static void *pool_alloc(struct dml_pkg_pool *pool, size_t n, size_t align) {
  if (n == 0) n = 1;
  pool_block_t *b = pool->head;
  if (b) {
    size_t at = (b->used + align - 1) / align * align;
    if (at <= b->cap && n <= b->cap - at) {
      b->used = at + n;
      return (uint8_t *)b + POOL_HDR + at;
    }
  }
  if (n > SIZE_MAX / 2) return NULL;
  size_t cap = n > 65536 ? n : 65536;
  void *mem = NULL;
  if (posix_memalign(&mem, 64, POOL_HDR + cap) != 0) return NULL;
  b = (pool_block_t *)mem;
  b->cap = cap;
  b->used = n;
  b->next = pool->head;
  pool->head = b;
  return (uint8_t *)b + POOL_HDR;
}

static void pool_free(struct dml_pkg_pool *pool) {
  pool_block_t *b = pool->head;
  while (b) {
    pool_block_t *n = b->next;
    free(b);
    b = n;
  }
  pool->head = NULL;
}

/* Reader over the section with a sticky error. */
typedef struct rd {
  const uint8_t *p;
  size_t size, pos;
  struct dml_pkg_pool *pool;
  dml_status_t err;
} rd_t;

static int rd_fail(rd_t *r, const char *fmt, const char *what) {
  if (!r->err)
    r->err = dml_status_make(DML_STATUS_DATA_LOSS, OP_LOAD, fmt, what, r->pos, r->size);
  return 0;
}
static int rd_oom(rd_t *r) {
  if (!r->err) r->err = oom(OP_LOAD);
  return 0;
}

static int rd_need(rd_t *r, size_t n, const char *what) {
  if (r->err) return 0;
  if (n > r->size - r->pos)
    return rd_fail(
        r, "graph section truncated reading %s at byte %zu (section is %zu bytes)", what);
  return 1;
}
static int rd_u32(rd_t *r, uint32_t *v, const char *what) {
  if (!rd_need(r, 4, what)) return 0;
  *v = get_u32(r->p + r->pos);
  r->pos += 4;
  return 1;
}
static int rd_u64(rd_t *r, uint64_t *v, const char *what) {
  if (!rd_need(r, 8, what)) return 0;
  *v = get_u64(r->p + r->pos);
  r->pos += 8;
  return 1;
}
static int rd_i64(rd_t *r, int64_t *v, const char *what) {
  uint64_t u;
  if (!rd_u64(r, &u, what)) return 0;
  *v = (int64_t)u;
  return 1;
}
static int rd_str(rd_t *r, const char **out, const char *what) {
  uint32_t n;
  if (!rd_u32(r, &n, what) || !rd_need(r, n, what)) return 0;
  const uint8_t *s = r->p + r->pos;
  if (memchr(s, 0, n))
    return rd_fail(r, "%s holds a NUL byte at byte %zu (section is %zu bytes)", what);
  char *d = (char *)pool_alloc(r->pool, (size_t)n + 1, 1);
  if (!d) return rd_oom(r);
  memcpy(d, s, n);
  d[n] = 0;
  r->pos += n;
  *out = d;
  return 1;
}
/* Reads a count of elements each at least `min_bytes` long in the section. */
static int rd_count(rd_t *r, uint32_t *n, size_t min_bytes, const char *what) {
  if (!rd_u32(r, n, what)) return 0;
  if ((size_t)*n > (r->size - r->pos) / min_bytes)
    return rd_fail(r, "%s is larger than the rest of the section (at byte %zu of %zu)",
                   what);
  return 1;
}
static void *rd_array(rd_t *r, uint32_t n, size_t elem) {
  void *p = pool_alloc(r->pool, (size_t)n * elem, 16);
  if (!p)
    rd_oom(r);
  else
    memset(p, 0, (size_t)n * elem);
  return p;
}
static int rd_indices(rd_t *r, uint32_t *n, const uint32_t **out, const char *what) {
  if (!rd_count(r, n, 4, what)) return 0;
  uint32_t *a = (uint32_t *)rd_array(r, *n, 4);
  if (!a) return 0;
  for (uint32_t i = 0; i < *n; i++) rd_u32(r, &a[i], what);
  *out = a;
  return !r->err;
}

static dml_status_t bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static dml_status_t bad(const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return dml_status_make(DML_STATUS_DATA_LOSS, OP_LOAD, "%s", buf);
}

int64_t dml_pkg_type_bytes_bound(const dml_type_t *t, const dml_pkg_symbol_t *symbols,
                                 uint32_t n_symbols) {
  if (t->rank < 0 || t->rank > DML_MAX_RANK) return -1;
  int64_t n = (int64_t)dml_dtype_size(t->dtype);
  if (n == 0) return -1;
  for (int32_t i = 0; i < t->rank; i++) {
    int64_t d = t->dims[i].value;
    if (t->dims[i].sym >= 0) {
      if ((uint32_t)t->dims[i].sym >= n_symbols) return -1;
      int64_t bnd = symbols[t->dims[i].sym].bound;
      if (d < 0 || bnd < 0 || (bnd && d > INT64_MAX / bnd)) return -1;
      d *= bnd;
    }
    if (d < 0) return -1;
    if (d && n > INT64_MAX / d) return -1;
    n *= d;
  }
  return n;
}

uint32_t dml_pkg_producer(const dml_pkg_function_t *f, uint32_t v) {
  if (!f || v >= f->n_values) return UINT32_MAX;
  for (uint32_t k = 0; k < f->n_nodes; k++)
    for (uint32_t j = 0; j < f->nodes[k].n_outputs; j++)
      if (f->nodes[k].outputs[j] == v) return k;
  return UINT32_MAX;
}

/* dml_pkg_host_value with a budget of nodes still to visit. */
static int host_value(const dml_pkg_function_t *f, uint32_t v, uint32_t *budget) {
  if (!f || v >= f->n_values) return 0;
  dml_pkg_storage_t st = f->values[v].storage;
  if (st == DML_PKG_STORAGE_CONST || st == DML_PKG_STORAGE_INPUT) return 1;
  uint32_t k = dml_pkg_producer(f, v);
  if (k == UINT32_MAX || *budget == 0) return 0;
  --*budget;
  const dml_pkg_node_t *n = &f->nodes[k];
  const dml_op_info_t *info = dml_op_info(n->op);
  if (!info || (info->flags & (DML_OPF_RANDOM | DML_OPF_SIDE_EFFECT)) ||
      n->op == DML_OP_DROPOUT)
    return 0;
  for (uint32_t j = 0; j < n->n_outputs; j++) {
    if (n->outputs[j] == DML_PKG_NO_VALUE) continue;
    if (n->outputs[j] >= f->n_values) return 0;
    const dml_type_t *t = &f->values[n->outputs[j]].type;
    for (int32_t d = 0; d < t->rank; d++)
      if (t->dims[d].sym >= 0) return 0;
    int64_t b = dml_pkg_type_bytes_bound(t, NULL, 0);
    if (b < 0 || b > DML_PKG_HOST_VALUE_MAX_BYTES ||
        f->values[n->outputs[j]].bytes > DML_PKG_HOST_VALUE_MAX_BYTES)
      return 0;
  }
  for (uint32_t j = 0; j < n->n_inputs; j++) {
    uint32_t x = n->inputs[j];
    if (x == DML_PKG_NO_VALUE) continue;
    if (x >= f->n_values || f->values[x].bytes > DML_PKG_HOST_VALUE_MAX_BYTES ||
        !host_value(f, x, budget))
      return 0;
  }
  return 1;
}

int dml_pkg_host_value(const dml_pkg_function_t *f, uint32_t v) {
  uint32_t budget = DML_PKG_HOST_VALUE_MAX_NODES;
  return host_value(f, v, &budget);
}

static int decode_attr(rd_t *r, dml_attr_t *a) {
  uint32_t kind;
  if (!rd_str(r, &a->name, "attribute name") || !rd_u32(r, &kind, "attribute kind"))
    return 0;
  a->kind = (dml_attr_kind_t)kind;
  switch (kind) {
    case DML_ATTR_INT: return rd_i64(r, &a->i, "int attribute");
    case DML_ATTR_FLOAT: {
      uint64_t u;
      if (!rd_u64(r, &u, "float attribute")) return 0;
      memcpy(&a->f, &u, 8);
      return 1;
    }
    case DML_ATTR_STRING: return rd_str(r, &a->s, "string attribute");
    case DML_ATTR_INTS:
    case DML_ATTR_FLOATS: {
      uint32_t n;
      if (!rd_count(r, &n, 8, "attribute element count")) return 0;
      uint64_t *v = (uint64_t *)rd_array(r, n, 8);
      if (!v) return 0;
      for (uint32_t i = 0; i < n; i++) rd_u64(r, &v[i], "attribute element");
      a->n = n;
      if (kind == DML_ATTR_INTS)
        a->ints = (const int64_t *)(void *)v;
      else
        a->floats = (const double *)(void *)v;
      return !r->err;
    }
    case DML_ATTR_STRINGS: {
      uint32_t n;
      if (!rd_count(r, &n, 4, "attribute string count")) return 0;
      const char **v = (const char **)rd_array(r, n, sizeof(char *));
      if (!v) return 0;
      for (uint32_t i = 0; i < n && !r->err; i++) rd_str(r, &v[i], "attribute string");
      a->n = n;
      a->strings = v;
      return !r->err;
    }
    case DML_ATTR_TENSOR: {
      uint32_t dt, rank;
      uint64_t nb;
      if (!rd_u32(r, &dt, "tensor attribute dtype") ||
          !rd_u32(r, &rank, "tensor attribute rank"))
        return 0;
      if (dml_dtype_size((dml_dtype_t)dt) == 0 || dt == DML_DTYPE_STRING ||
          rank > DML_MAX_RANK)
        return rd_fail(r, "%s has a bad dtype or rank (at byte %zu of %zu)",
                       "tensor attribute");
      a->tensor.dtype = (dml_dtype_t)dt;
      a->tensor.rank = (int32_t)rank;
      for (uint32_t i = 0; i < rank; i++)
        if (!rd_i64(r, &a->tensor.dims[i], "tensor attribute dim")) return 0;
      size_t want = dml_tensor_bytes(&a->tensor);
      if (!rd_u64(r, &nb, "tensor attribute size")) return 0;
      if (want == SIZE_MAX || nb != (uint64_t)want)
        return rd_fail(r, "%s size does not match its shape (at byte %zu of %zu)",
                       "tensor attribute");
      if (!rd_need(r, want, "tensor attribute data")) return 0;
      void *d = pool_alloc(r->pool, want, 64);
      if (!d) return rd_oom(r);
      if (want) memcpy(d, r->p + r->pos, want);
      r->pos += want;
      a->tensor.data = d;
      return 1;
    }
    default: return rd_fail(r, "%s kind is unknown (at byte %zu of %zu)", "attribute");
  }
}

/* Minimum encoded sizes, for bounding counts before allocating. */
#define MIN_SYMBOL_V1 12u
#define MIN_SYMBOL 16u
#define MIN_FUNCTION 28u
#define MIN_VALUE 36u
#define MIN_NODE 20u
#define MIN_ATTR 12u

static int ranges_overlap(uint64_t a, uint64_t an, uint64_t b, uint64_t bn) {
  return an && bn && a < b + bn && b < a + an;
}

/* Semantic checks of one decoded function. */
static dml_status_t check_function(const dml_pkg_graph_t *g, const dml_pkg_function_t *f,
                                   uint64_t weights_size, dml_status_t *inout_unknown) {
  const char *fn = f->name;
  const uint32_t fi = (uint32_t)(f - g->functions);
  dml_status_t st = DML_OK;
  if (f->arena_bytes > (uint64_t)INT64_MAX)
    return bad("function '%s': arena of %" PRIu64 " bytes is too large", fn,
               f->arena_bytes);
  /* Values. */
  for (uint32_t i = 0; i < f->n_values; i++) {
    const dml_pkg_value_t *v = &f->values[i];
    size_t es = dml_dtype_size(v->type.dtype);
    if (es == 0)
      return bad("function '%s': value #%" PRIu32 " '%s' has invalid dtype %d", fn, i,
                 v->name, (int)v->type.dtype);
    int is_static = 1, node_sym = 0;
    for (int32_t d = 0; d < v->type.rank; d++) {
      const dml_dim_t *dim = &v->type.dims[d];
      if (dim->sym == -1
              ? dim->value < 0
              : (dim->sym < 0 || (uint32_t)dim->sym >= g->n_symbols || dim->value < 1))
        return bad("function '%s': value '%s' has invalid dim %d (value %" PRId64
                   ", symbol %d)",
                   fn, v->name, (int)d, dim->value, (int)dim->sym);
      if (dim->sym >= 0) is_static = 0;
      if (dim->sym >= 0 && g->symbols[dim->sym].origin == DML_PKG_SYMBOL_NODE)
        node_sym = 1;
    }
    int64_t bb = dml_pkg_type_bytes_bound(&v->type, g->symbols, g->n_symbols);
    /* Data-dependent dims: planned at most at the bounds (the executor
     * checks each run's size against the planned bytes). */
    if (node_sym && (bb < 0 || (uint64_t)bb > v->bytes)) bb = (int64_t)v->bytes;
    if (bb < 0) return bad("function '%s': value '%s' size overflows", fn, v->name);
    if (v->flags & ~DML_PKG_VALUE_FLAGS_ALL)
      return bad("function '%s': value '%s' has unknown flags 0x%" PRIx32, fn, v->name,
                 v->flags);
    switch (v->storage) {
      case DML_PKG_STORAGE_INPUT:
      case DML_PKG_STORAGE_ARENA:
        if (v->bytes < (uint64_t)bb || v->offset % es != 0 ||
            v->offset > f->arena_bytes || v->bytes > f->arena_bytes - v->offset)
          return bad("function '%s': value '%s' at arena [%" PRIu64 ", +%" PRIu64
                     ") needs %" PRId64 " bytes, %zu-aligned, inside the %" PRIu64
                     "-byte arena",
                     fn, v->name, v->offset, v->bytes, bb, es, f->arena_bytes);
        break;
      case DML_PKG_STORAGE_CONST:
        if (!is_static || v->bytes != (uint64_t)bb ||
            v->offset % DML_PKG_WEIGHT_ALIGNMENT != 0 || v->offset > weights_size ||
            v->bytes > weights_size - v->offset)
          return bad("function '%s': constant '%s' at weights [%" PRIu64 ", +%" PRIu64
                     ") must be static, %" PRId64
                     " bytes, %u-aligned, inside the %" PRIu64 "-byte weights section",
                     fn, v->name, v->offset, v->bytes, bb, DML_PKG_WEIGHT_ALIGNMENT,
                     weights_size);
        break;
      default:
        return bad("function '%s': value '%s' has unknown storage kind %d", fn, v->name,
                   (int)v->storage);
    }
  }
  /* The arena is as large as its values need (a planner may round up to a
   * page), so a corrupt size cannot demand memory the plan never uses. */
  uint64_t max_end = 0;
  for (uint32_t i = 0; i < f->n_values; i++)
    if (f->values[i].storage != DML_PKG_STORAGE_CONST &&
        f->values[i].offset + f->values[i].bytes > max_end)
      max_end = f->values[i].offset + f->values[i].bytes;
  if (f->arena_bytes > (max_end + 4095) / 4096 * 4096)
    return bad("function '%s': arena of %" PRIu64
               " bytes is larger than its values need (%" PRIu64 ")",
               fn, f->arena_bytes, max_end);
  /* Data-dependent symbols produced in this function: the producer's
   * output dim is exactly 1 * symbol. */
  for (uint32_t i = 0; i < g->n_symbols; i++) {
    const dml_pkg_symbol_t *sy = &g->symbols[i];
    if (sy->origin != DML_PKG_SYMBOL_NODE || sy->function != fi) continue;
    const dml_pkg_node_t *pn = sy->node < f->n_nodes ? &f->nodes[sy->node] : NULL;
    uint32_t o = pn && sy->output < pn->n_outputs ? pn->outputs[sy->output] : UINT32_MAX;
    const dml_type_t *ot = o < f->n_values ? &f->values[o].type : NULL;
    if (!ot || sy->dim >= (uint32_t)ot->rank || ot->dims[sy->dim].sym != (int32_t)i ||
        ot->dims[sy->dim].value != 1)
      return bad("function '%s': symbol '%s' names node #%" PRIu32 " output %" PRIu32
                 " dim %" PRIu32 " as its producer, which is not a dim equal to it",
                 fn, sy->name, sy->node, sy->output, sy->dim);
  }
  uint8_t *defined = (uint8_t *)calloc(f->n_values ? f->n_values : 1, 1);
  /* Per symbol: 1 when its value is known at this point of the plan. */
  uint8_t *fixed = (uint8_t *)calloc(g->n_symbols ? g->n_symbols : 1, 1);
  if (!defined || !fixed) {
    st = oom(OP_LOAD);
    goto free_marks;
  }
  /* Inputs: exactly the INPUT values, named uniquely. */
  uint32_t n_input_values = 0;
  for (uint32_t i = 0; i < f->n_values; i++) {
    if (f->values[i].storage == DML_PKG_STORAGE_INPUT) n_input_values++;
    if (f->values[i].storage == DML_PKG_STORAGE_CONST) defined[i] = 1;
  }
  for (uint32_t k = 0; k < f->n_inputs; k++) {
    uint32_t i = f->inputs[k];
    if (i >= f->n_values || f->values[i].storage != DML_PKG_STORAGE_INPUT || defined[i] ||
        !*f->values[i].name) {
      st = bad("function '%s': input #%" PRIu32 " is not a distinct, named INPUT value",
               fn, k);
      goto free_marks;
    }
    defined[i] = 1;
    for (uint32_t j = 0; j < k; j++)
      if (strcmp(f->values[f->inputs[j]].name, f->values[i].name) == 0) {
        st = bad("function '%s': two inputs are named '%s'", fn, f->values[i].name);
        goto free_marks;
      }
    const dml_type_t *t = &f->values[i].type;
    for (int32_t d = 0; d < t->rank; d++) {
      if (t->dims[d].sym < 0) continue;
      if (g->symbols[t->dims[d].sym].origin != DML_PKG_SYMBOL_INPUT) {
        st = bad("function '%s': input '%s' uses %s symbol '%s'", fn, f->values[i].name,
                 g->symbols[t->dims[d].sym].origin == DML_PKG_SYMBOL_NODE
                     ? "data-dependent"
                     : "derived",
                 g->symbols[t->dims[d].sym].name);
        goto free_marks;
      }
      fixed[t->dims[d].sym] = 1;
    }
  }
  if (n_input_values != f->n_inputs) {
    st = bad("function '%s': %" PRIu32 " INPUT values but %" PRIu32 " inputs", fn,
             n_input_values, f->n_inputs);
    goto free_marks;
  }
  /* Derived symbols: known when their sources are (sources come first). */
  for (uint32_t i = 0; i < g->n_symbols; i++) {
    const dml_pkg_symbol_t *sy = &g->symbols[i];
    if (sy->origin == DML_PKG_SYMBOL_DERIVED && fixed[sy->src[0]] &&
        (sy->src[1] < 0 || fixed[sy->src[1]]))
      fixed[i] = 1;
  }
  for (uint32_t i = 0; i < f->n_values; i++) {
    const dml_type_t *t = &f->values[i].type;
    for (int32_t d = 0; d < t->rank; d++) {
      int32_t sy = t->dims[d].sym;
      if (sy >= 0 && !fixed[sy] &&
          !(g->symbols[sy].origin == DML_PKG_SYMBOL_NODE &&
            g->symbols[sy].function == fi)) {
        st = dml_status_make(
            DML_STATUS_UNIMPLEMENTED, OP_LOAD,
            "function '%s': symbol '%s' (used by value '%s') is not fixed by "
            "any input's shape or a node of the function",
            fn, g->symbols[sy].name, f->values[i].name);
        goto free_marks;
      }
    }
  }
  /* Nodes, in order: operands defined before use, results defined once. */
  for (uint32_t k = 0; k < f->n_nodes; k++) {
    const dml_pkg_node_t *n = &f->nodes[k];
    if (n->op == DML_OP_INVALID) {
      if (!*inout_unknown)
        *inout_unknown = dml_status_make(DML_STATUS_UNIMPLEMENTED, OP_LOAD,
                                         "unknown op '%s': this runtime build does not "
                                         "implement it",
                                         n->op_name);
      *inout_unknown = dml_status_detail(
          *inout_unknown, "function '%s', node #%" PRIu32 " '%s' uses unknown op '%s'",
          fn, k, n->name, n->op_name);
      for (uint32_t j = 0; j < n->n_outputs; j++) {
        if (n->outputs[j] >= f->n_values) continue;
        defined[n->outputs[j]] = 1;
        const dml_type_t *t = &f->values[n->outputs[j]].type;
        for (int32_t d = 0; d < t->rank; d++)
          if (t->dims[d].sym >= 0) fixed[t->dims[d].sym] = 1;
      }
      continue;
    }
    const dml_op_info_t *info = dml_op_info(n->op);
    if (info->flags & DML_OPF_COMPILE_ONLY) {
      st =
          bad("function '%s': node '%s' uses op '%s', which exists only inside the "
              "compiler (lowered before a package is written)",
              fn, n->name, n->op_name);
      goto free_marks;
    }
    if ((int64_t)n->n_inputs < info->min_inputs ||
        (info->max_inputs >= 0 && (int64_t)n->n_inputs > info->max_inputs) ||
        (int64_t)n->n_outputs < info->min_outputs ||
        (info->max_outputs >= 0 && (int64_t)n->n_outputs > info->max_outputs)) {
      st = bad("function '%s': node '%s' (%s) has %" PRIu32 " inputs and %" PRIu32
               " outputs, outside the op's arity",
               fn, n->name, n->op_name, n->n_inputs, n->n_outputs);
      goto free_marks;
    }
    for (uint32_t j = 0; j < n->n_inputs; j++) {
      uint32_t i = n->inputs[j];
      if (i == DML_PKG_NO_VALUE && (int64_t)j >= info->min_inputs) continue;
      if (i >= f->n_values || !defined[i]) {
        st = bad("function '%s': node '%s' (%s) input %" PRIu32 " is %s", fn, n->name,
                 n->op_name, j,
                 i == DML_PKG_NO_VALUE ? "absent but required"
                 : i >= f->n_values    ? "out of range"
                                       : "used before it is defined");
        goto free_marks;
      }
    }
    for (uint32_t j = 0; j < n->n_outputs; j++) {
      uint32_t o = n->outputs[j];
      if (o >= f->n_values || defined[o] ||
          f->values[o].storage != DML_PKG_STORAGE_ARENA) {
        st = bad("function '%s': node '%s' (%s) output %" PRIu32
                 " is not a fresh arena value",
                 fn, n->name, n->op_name, j);
        goto free_marks;
      }
      const dml_pkg_value_t *ov = &f->values[o];
      for (uint32_t q = 0; q < j; q++) {
        const dml_pkg_value_t *pv = &f->values[n->outputs[q]];
        if (n->outputs[q] == o ||
            ranges_overlap(ov->offset, ov->bytes, pv->offset, pv->bytes)) {
          st = bad("function '%s': node '%s' (%s) outputs %" PRIu32 " and %" PRIu32
                   " overlap in the arena",
                   fn, n->name, n->op_name, q, j);
          goto free_marks;
        }
      }
      for (uint32_t q = 0; q < n->n_inputs; q++) {
        uint32_t i = n->inputs[q];
        if (i == DML_PKG_NO_VALUE || f->values[i].storage == DML_PKG_STORAGE_CONST)
          continue;
        const dml_pkg_value_t *iv = &f->values[i];
        if (!ranges_overlap(ov->offset, ov->bytes, iv->offset, iv->bytes)) continue;
        if ((info->flags & DML_OPF_VIEW) && q == 0 && j == 0 && iv->offset == ov->offset)
          continue; /* a view in place: the runtime skips the copy */
        st = bad(
            "function '%s': node '%s' (%s) output '%s' overlaps input '%s' in the arena",
            fn, n->name, n->op_name, ov->name, iv->name);
        goto free_marks;
      }
    }
    /* Symbols of the outputs: known already, or produced by this node. */
    for (uint32_t j = 0; j < n->n_outputs; j++) {
      const dml_type_t *t = &f->values[n->outputs[j]].type;
      for (int32_t d = 0; d < t->rank; d++) {
        int32_t sy = t->dims[d].sym;
        if (sy < 0 || fixed[sy]) continue;
        if (g->symbols[sy].node != k) {
          st = bad("function '%s': node '%s' (%s) output %" PRIu32
                   " uses data-dependent symbol '%s' before its producer, node #%" PRIu32,
                   fn, n->name, n->op_name, j, g->symbols[sy].name, g->symbols[sy].node);
          goto free_marks;
        }
      }
    }
    for (uint32_t j = 0; j < n->n_outputs; j++) {
      const dml_type_t *t = &f->values[n->outputs[j]].type;
      for (int32_t d = 0; d < t->rank; d++)
        if (t->dims[d].sym >= 0) fixed[t->dims[d].sym] = 1;
    }
    for (uint32_t j = 0; j < n->n_outputs; j++) defined[n->outputs[j]] = 1;
  }
  for (uint32_t k = 0; k < f->n_outputs && !*inout_unknown; k++) {
    uint32_t o = f->outputs[k];
    if (o >= f->n_values || !defined[o] || !*f->values[o].name) {
      st = bad("function '%s': output #%" PRIu32 " is not a defined, named value", fn, k);
      goto free_marks;
    }
    for (uint32_t j = 0; j < k; j++)
      if (strcmp(f->values[f->outputs[j]].name, f->values[o].name) == 0) {
        st = bad("function '%s': two outputs are named '%s'", fn, f->values[o].name);
        goto free_marks;
      }
  }
free_marks:
  free(defined);
  free(fixed);
  return st;
}

static int decode_function(rd_t *r, dml_pkg_function_t *f) {
  if (!rd_str(r, &f->name, "function name") || !rd_u64(r, &f->arena_bytes, "arena size"))
    return 0;
  uint32_t n;
  if (!rd_count(r, &n, MIN_VALUE, "value count")) return 0;
  dml_pkg_value_t *values = (dml_pkg_value_t *)rd_array(r, n, sizeof(dml_pkg_value_t));
  if (!values) return 0;
  f->n_values = n;
  f->values = values;
  for (uint32_t i = 0; i < n; i++) {
    dml_pkg_value_t *v = &values[i];
    uint32_t dt, rank, storage;
    if (!rd_str(r, &v->name, "value name") || !rd_u32(r, &dt, "value dtype") ||
        !rd_u32(r, &rank, "value rank"))
      return 0;
    if (rank > DML_MAX_RANK)
      return rd_fail(r, "%s exceeds the maximum rank (at byte %zu of %zu)", "value rank");
    v->type.dtype = (dml_dtype_t)dt;
    v->type.rank = (int32_t)rank;
    for (uint32_t d = 0; d < rank; d++) {
      uint32_t sym;
      if (!rd_i64(r, &v->type.dims[d].value, "dim") || !rd_u32(r, &sym, "dim symbol"))
        return 0;
      v->type.dims[d].sym = (int32_t)sym;
    }
    if (!rd_u32(r, &storage, "storage kind") || !rd_u32(r, &v->flags, "value flags") ||
        !rd_u64(r, &v->offset, "value offset") || !rd_u64(r, &v->bytes, "value size"))
      return 0;
    v->storage = (dml_pkg_storage_t)storage;
  }
  if (!rd_count(r, &n, MIN_NODE, "node count")) return 0;
  dml_pkg_node_t *nodes = (dml_pkg_node_t *)rd_array(r, n, sizeof(dml_pkg_node_t));
  if (!nodes) return 0;
  f->n_nodes = n;
  f->nodes = nodes;
  for (uint32_t i = 0; i < n; i++) {
    dml_pkg_node_t *nd = &nodes[i];
    if (!rd_str(r, &nd->op_name, "op name") || !rd_str(r, &nd->name, "node name") ||
        !rd_indices(r, &nd->n_inputs, &nd->inputs, "node inputs") ||
        !rd_indices(r, &nd->n_outputs, &nd->outputs, "node outputs"))
      return 0;
    nd->op = dml_op_from_name(nd->op_name, strlen(nd->op_name));
    uint32_t na;
    if (!rd_count(r, &na, MIN_ATTR, "attribute count")) return 0;
    dml_attr_t *attrs = (dml_attr_t *)rd_array(r, na, sizeof(dml_attr_t));
    if (!attrs) return 0;
    nd->n_attrs = na;
    nd->attrs = attrs;
    for (uint32_t k = 0; k < na; k++) {
      if (!decode_attr(r, &attrs[k])) return 0;
      for (uint32_t q = 0; q < k; q++)
        if (strcmp(attrs[q].name, attrs[k].name) == 0)
          return rd_fail(r, "%s appears twice on one node (at byte %zu of %zu)",
                         "an attribute");
    }
  }
  return rd_indices(r, &f->n_inputs, &f->inputs, "function inputs") &&
         rd_indices(r, &f->n_outputs, &f->outputs, "function outputs");
}

dml_status_t dml_pkg_graph_decode(const void *bytes, size_t size, uint64_t weights_size,
                                  dml_pkg_graph_t **out_graph) {
  return dml_pkg_graph_decode_version(bytes, size, DML_PKG_FORMAT_VERSION, weights_size,
                                      out_graph);
}

/* Reads one symbol record (version 2 adds its origin). */
static void decode_symbol(rd_t *r, uint32_t version, uint32_t i, dml_pkg_symbol_t *sy) {
  if (!rd_str(r, &sy->name, "symbol name") || !rd_i64(r, &sy->bound, "symbol bound"))
    return;
  if (sy->bound < 1 || !*sy->name) {
    r->err = bad("symbol #%" PRIu32 " '%s' has bound %" PRId64 " (needs a name and >= 1)",
                 i, sy->name, sy->bound);
    return;
  }
  sy->origin = DML_PKG_SYMBOL_INPUT;
  if (version < 2) return;
  uint32_t origin;
  if (!rd_u32(r, &origin, "symbol origin")) return;
  if (origin == DML_PKG_SYMBOL_INPUT) return;
  if (origin == DML_PKG_SYMBOL_DERIVED) {
    uint32_t a = 0, b = 0;
    sy->origin = DML_PKG_SYMBOL_DERIVED;
    if (!rd_u32(r, &a, "derived symbol source") ||
        !rd_u32(r, &b, "derived symbol source") ||
        !rd_i64(r, &sy->mul, "derived symbol formula") ||
        !rd_i64(r, &sy->add, "derived symbol formula") ||
        !rd_i64(r, &sy->div, "derived symbol formula"))
      return;
    sy->src[0] = a < i ? (int32_t)a : -2;
    sy->src[1] = b == UINT32_MAX ? -1 : b < i ? (int32_t)b : -2;
    if (sy->src[0] < 0 || sy->src[1] < -1 || sy->mul < 0 || sy->div < 1) {
      r->err =
          bad("derived symbol '%s' needs earlier sources, mul >= 0 and div >= 1 "
              "(got sources %" PRIu32 ", %" PRIu32 ", mul %" PRId64 ", div %" PRId64 ")",
              sy->name, a, b, sy->mul, sy->div);
      return;
    }
    return;
  }
  if (origin != DML_PKG_SYMBOL_NODE) {
    r->err = bad("symbol '%s' has unknown origin %" PRIu32 " (at byte %zu)", sy->name,
                 origin, r->pos - 4);
    return;
  }
  sy->origin = DML_PKG_SYMBOL_NODE;
  if (rd_u32(r, &sy->function, "symbol producer") &&
      rd_u32(r, &sy->node, "symbol producer") &&
      rd_u32(r, &sy->output, "symbol producer"))
    rd_u32(r, &sy->dim, "symbol producer");
}

dml_status_t dml_pkg_graph_decode_version(const void *bytes, size_t size,
                                          uint32_t version, uint64_t weights_size,
                                          dml_pkg_graph_t **out_graph) {
  if (version < DML_PKG_FORMAT_VERSION_MIN || version > DML_PKG_FORMAT_VERSION)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, OP_LOAD,
                           "graph section of format version %" PRIu32
                           " is not supported (this runtime reads versions %u to %u)",
                           version, DML_PKG_FORMAT_VERSION_MIN, DML_PKG_FORMAT_VERSION);
  dml_pkg_graph_t *g = (dml_pkg_graph_t *)calloc(1, sizeof(*g));
  struct dml_pkg_pool *pool = (struct dml_pkg_pool *)calloc(1, sizeof(*pool));
  dml_status_t unknown = DML_OK;
  if (!g || !pool) {
    free(g);
    free(pool);
    return oom(OP_LOAD);
  }
  g->pool_ = pool;
  rd_t r = {(const uint8_t *)bytes, size, 0, pool, DML_OK};
  uint32_t n;
  if (rd_count(&r, &n, version < 2 ? MIN_SYMBOL_V1 : MIN_SYMBOL, "symbol count")) {
    dml_pkg_symbol_t *syms = (dml_pkg_symbol_t *)rd_array(&r, n, sizeof(*syms));
    if (syms) {
      g->n_symbols = n;
      g->symbols = syms;
      for (uint32_t i = 0; i < n && !r.err; i++) {
        memset(&syms[i], 0, sizeof syms[i]);
        decode_symbol(&r, version, i, &syms[i]);
        for (uint32_t j = 0; j < i && !r.err; j++)
          if (strcmp(syms[j].name, syms[i].name) == 0)
            r.err = bad("symbol '%s' is declared twice", syms[i].name);
      }
    }
  }
  if (!r.err && rd_count(&r, &n, MIN_FUNCTION, "function count")) {
    dml_pkg_function_t *fns = (dml_pkg_function_t *)rd_array(&r, n, sizeof(*fns));
    if (fns) {
      g->n_functions = n;
      g->functions = fns;
      for (uint32_t i = 0; i < n && !r.err; i++) {
        decode_function(&r, &fns[i]);
        for (uint32_t j = 0; j < i && !r.err; j++)
          if (strcmp(fns[j].name, fns[i].name) == 0)
            r.err = bad("function '%s' is declared twice", fns[i].name);
      }
    }
  }
  if (!r.err && r.pos != r.size)
    r.err =
        bad("graph section has %zu trailing bytes after byte %zu", r.size - r.pos, r.pos);
  for (uint32_t i = 0; i < g->n_symbols && !r.err; i++) {
    const dml_pkg_symbol_t *sy = &g->symbols[i];
    if (sy->origin != DML_PKG_SYMBOL_DERIVED) continue;
    int64_t at = 0;
    const dml_pkg_symbol_t *sa = &g->symbols[sy->src[0]],
                           *sb = sy->src[1] >= 0 ? &g->symbols[sy->src[1]] : NULL;
    if (sa->origin == DML_PKG_SYMBOL_NODE || (sb && sb->origin == DML_PKG_SYMBOL_NODE) ||
        !dml_sym_derived_eval(sy->mul, sy->add, sy->div, sa->bound, sb ? sb->bound : 1,
                              &at) ||
        at > sy->bound)
      r.err =
          bad("derived symbol '%s': its sources must be input or derived symbols "
              "and its bound %" PRId64 " at least its formula at their bounds",
              sy->name, sy->bound);
  }
  for (uint32_t i = 0; i < g->n_symbols && !r.err; i++)
    if (g->symbols[i].origin == DML_PKG_SYMBOL_NODE &&
        g->symbols[i].function >= g->n_functions)
      r.err = bad("symbol '%s' names function #%" PRIu32
                  " as its producer's (the graph "
                  "has %" PRIu32 ")",
                  g->symbols[i].name, g->symbols[i].function, g->n_functions);
  for (uint32_t i = 0; i < g->n_functions && !r.err; i++)
    r.err = check_function(g, &g->functions[i], weights_size, &unknown);
  if (!r.err && unknown) {
    r.err = unknown;
    unknown = DML_OK;
  }
  dml_status_free(unknown);
  if (r.err) {
    dml_pkg_graph_release(g);
    return dml_status_annotate(r.err, "reading the package's graph section");
  }
  *out_graph = g;
  return DML_OK;
}

void dml_pkg_graph_release(dml_pkg_graph_t *g) {
  if (!g) return;
  if (g->pool_) {
    pool_free(g->pool_);
    free(g->pool_);
  }
  free(g);
}

/* ===================================================================== */
/* "strings" section: the string constants                               */
/* ===================================================================== */

dml_status_t dml_pkg_strings_encode(const dml_pkg_strtab_t *tabs, uint32_t n,
                                    uint8_t **out, size_t *out_size) {
  wbuf_t b = {0};
  wb_u32(&b, n);
  for (uint32_t t = 0; t < n; t++) {
    wb_u64(&b, tabs[t].weights_offset);
    wb_u64(&b, tabs[t].count);
    for (uint64_t i = 0; i < tabs[t].count; i++) wb_u64(&b, tabs[t].elems[i].len);
    for (uint64_t i = 0; i < tabs[t].count; i++)
      wb_put(&b, tabs[t].elems[i].data, (size_t)tabs[t].elems[i].len);
  }
  if (b.failed) {
    free(b.p);
    return oom(OP_WRITE);
  }
  *out = b.p;
  *out_size = b.n;
  return DML_OK;
}

void dml_pkg_strings_release(dml_pkg_strtab_t *tabs, uint32_t n) {
  for (uint32_t t = 0; tabs && t < n; t++) free(tabs[t].elems);
  free(tabs);
}

static dml_status_t strings_bad(const char *what, size_t pos, size_t size) {
  return dml_status_make(DML_STATUS_DATA_LOSS, OP_LOAD,
                         "section 'strings': %s at byte %zu (section is %zu bytes)", what,
                         pos, size);
}

dml_status_t dml_pkg_strings_decode(const void *bytes, size_t size,
                                    dml_pkg_strtab_t **out_tabs, uint32_t *out_n) {
  const uint8_t *p = (const uint8_t *)bytes;
  size_t pos = 0;
  if (size < 4) return strings_bad("truncated table count", 0, size);
  uint32_t n = get_u32(p);
  pos = 4;
  /* each table takes at least 16 bytes: no allocation beyond the bytes */
  if (n > (size - pos) / 16) return strings_bad("table count too large", 0, size);
  dml_pkg_strtab_t *tabs = (dml_pkg_strtab_t *)calloc(n ? n : 1, sizeof(*tabs));
  if (!tabs) return oom(OP_LOAD);
  dml_status_t st = DML_OK;
  for (uint32_t t = 0; t < n && !st; t++) {
    if (size - pos < 16) {
      st = strings_bad("truncated table header", pos, size);
      break;
    }
    tabs[t].weights_offset = get_u64(p + pos);
    tabs[t].count = get_u64(p + pos + 8);
    if (t > 0 && tabs[t].weights_offset <= tabs[t - 1].weights_offset) {
      st = strings_bad("table weights offsets not increasing", pos, size);
      break;
    }
    pos += 16;
    uint64_t cnt = tabs[t].count;
    if (cnt > (size - pos) / 8) {
      st = strings_bad("string count exceeds the section", pos, size);
      break;
    }
    size_t lens = pos;
    pos += (size_t)cnt * 8;
    uint64_t total = 0;
    for (uint64_t i = 0; i < cnt; i++) {
      uint64_t l = get_u64(p + lens + i * 8);
      if (l > size - pos || total > size - pos - l) {
        st = strings_bad("string lengths exceed the section", lens + (size_t)i * 8, size);
        break;
      }
      total += l;
    }
    if (st) break;
    tabs[t].elems = (dml_str_t *)calloc(cnt ? (size_t)cnt : 1, sizeof(dml_str_t));
    if (!tabs[t].elems) {
      st = oom(OP_LOAD);
      break;
    }
    for (uint64_t i = 0; i < cnt; i++) {
      uint64_t l = get_u64(p + lens + i * 8);
      tabs[t].elems[i].data = l ? (const char *)(p + pos) : "";
      tabs[t].elems[i].len = l;
      pos += (size_t)l;
    }
  }
  if (!st && pos != size) st = strings_bad("trailing bytes", pos, size);
  if (st) {
    dml_pkg_strings_release(tabs, n);
    return st;
  }
  *out_tabs = tabs;
  *out_n = n;
  return DML_OK;
}

const dml_pkg_strtab_t *dml_pkg_strings_find(const dml_pkg_strtab_t *tabs, uint32_t n,
                                             uint64_t weights_offset) {
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (tabs[mid].weights_offset < weights_offset)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && tabs[lo].weights_offset == weights_offset ? &tabs[lo] : NULL;
}
