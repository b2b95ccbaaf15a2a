/* dml_train_data.c — IDX / .npy / CSV readers and type adaptation for
 * `dmlc train` and `dmlc eval` (dml_train_data.h). */
#define _GNU_SOURCE
#include "dml_train_data.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifndef DML_DATA_NO_ZLIB
#include <zlib.h>
#endif

#include "dml_dtype.h"
#include "dml_file.h"
#include "dml_npy.h"
#include "dml_trainer.h"

#define OP "data"
#define MAX_FILE_BYTES ((size_t)1 << 34) /* 16 GiB: refuse anything larger */

void dml_data_options_init(dml_data_options_t *o) {
  memset(o, 0, sizeof *o);
  o->image_scale = 1.0 / 255.0;
  o->csv_label_column = -1;
}

void dml_data_free(dml_data_t *d) {
  if (!d) return;
  free(d->x.data);
  free(d->y.data);
  memset(d, 0, sizeof *d);
}

static void *alloc64(size_t n) {
  void *p = NULL;
  if (posix_memalign(&p, 64, n ? n : 64) != 0) return NULL;
  return p;
}

/* ---- IDX ---- */

#ifndef DML_DATA_NO_ZLIB
/* Reads a whole file through gzread (gzip or plain). */
static dml_status_t read_gz(const char *path, uint8_t **out, size_t *out_n) {
  /* Only a regular file (a FIFO is refused, not waited on). */
  int fd;
  uint64_t fsize;
  DML_RETURN_IF_ERROR(dml_file_open_read(OP, path, &fd, &fsize));
  if (fsize > (uint64_t)MAX_FILE_BYTES) {
    close(fd);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP,
                           "'%s' is larger than 16 GiB", path);
  }
  gzFile f = gzdopen(fd, "rb");
  if (!f) {
    close(fd);
    return dml_status_make(DML_STATUS_IO, OP, "cannot open '%s'", path);
  }
  size_t cap = (size_t)fsize * 4 + 4096, n = 0;
  uint8_t *buf = (uint8_t *)malloc(cap);
  dml_status_t st = DML_OK;
  while (buf) {
    if (n == cap) {
      if (cap >= MAX_FILE_BYTES) {
        st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP,
                             "'%s' decompresses to more than 16 GiB", path);
        break;
      }
      uint8_t *nb = (uint8_t *)realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
      cap *= 2;
    }
    size_t want = cap - n > (1u << 30) ? (1u << 30) : cap - n;
    int k = gzread(f, buf + n, (unsigned)want);
    if (k < 0) {
      int errnum = 0;
      const char *msg = gzerror(f, &errnum);
      st = dml_status_make(DML_STATUS_DATA_LOSS, OP, "reading '%s' failed: %s", path,
                           msg ? msg : "gzread error");
      break;
    }
    if (k == 0) break;
    n += (size_t)k;
  }
  gzclose(f);
  if (!buf && !st)
    st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  if (st) {
    free(buf);
    return st;
  }
  *out = buf;
  *out_n = n;
  return DML_OK;
}
#else
/* The build without zlib (DML_DATA_NO_ZLIB: the runtime-only programs of
 * GPU machines, bench/train): reads plain files with stdio and refuses
 * gzip data (magic 1f 8b, RFC 1952 section 2.3.1) by name. */
static dml_status_t read_gz(const char *path, uint8_t **out, size_t *out_n) {
  int fd;
  uint64_t fsize;
  DML_RETURN_IF_ERROR(dml_file_open_read(OP, path, &fd, &fsize));
  close(fd);
  if (fsize > (uint64_t)MAX_FILE_BYTES)
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP,
                           "'%s' is larger than 16 GiB", path);
  uint8_t *buf;
  size_t n;
  DML_RETURN_IF_ERROR(dml_file_read_all(OP, path, &buf, &n));
  if (n >= 2 && buf[0] == 0x1f && buf[1] == 0x8b) {
    free(buf);
    return dml_status_detail(
        dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                        "'%s' is gzip-compressed and this build reads plain files only "
                        "(built without zlib)",
                        path),
        "decompress it first (gunzip -k '%s')", path);
  }
  *out = buf;
  *out_n = n;
  return DML_OK;
}
#endif

static dml_status_t idx_error(const char *path, size_t off, const char *what) {
  return dml_status_detail(
      dml_status_make(DML_STATUS_DATA_LOSS, OP, "'%s' is not a valid IDX file: %s", path,
                      what),
      "at byte offset %zu (of the decompressed bytes)", off);
}

dml_status_t dml_data_read_idx(const char *path, dml_tensor_t *out) {
  uint8_t *b = NULL;
  size_t n = 0;
  DML_RETURN_IF_ERROR(read_gz(path, &b, &n));
  dml_status_t st = DML_OK;
  dml_tensor_t t;
  memset(&t, 0, sizeof t);
  if (n < 4 || b[0] != 0 || b[1] != 0) {
    st = idx_error(path, 0,
                   n < 4 ? "shorter than the 4-byte magic" : "magic must start 00 00");
    goto out;
  }
  switch (b[2]) {
    case 0x08: t.dtype = DML_DTYPE_U8; break;
    case 0x09: t.dtype = DML_DTYPE_I8; break;
    case 0x0B: t.dtype = DML_DTYPE_I16; break;
    case 0x0C: t.dtype = DML_DTYPE_I32; break;
    case 0x0D: t.dtype = DML_DTYPE_F32; break;
    case 0x0E: t.dtype = DML_DTYPE_F64; break;
    default: st = idx_error(path, 2, "unknown type code"); goto out;
  }
  t.rank = b[3];
  if (t.rank < 1 || t.rank > DML_MAX_RANK) {
    st = idx_error(path, 3, "rank must be 1..8");
    goto out;
  }
  size_t hdr = 4 + 4 * (size_t)t.rank;
  if (n < hdr) {
    st = idx_error(path, n, "truncated dims");
    goto out;
  }
  for (int32_t d = 0; d < t.rank; d++) {
    const uint8_t *p = b + 4 + 4 * d;
    t.dims[d] = (int64_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
                          (uint32_t)p[2] << 8 | p[3]);
  }
  size_t es = dml_dtype_size(t.dtype), nb = dml_tensor_bytes(&t);
  if (nb == SIZE_MAX || nb != n - hdr) {
    char msg[160];
    snprintf(msg, sizeof msg, "the dims need %zu data bytes, the file has %zu",
             nb == SIZE_MAX ? (size_t)0 : nb, n - hdr);
    st = idx_error(path, hdr, msg);
    goto out;
  }
  t.data = alloc64(nb);
  if (!t.data) {
    st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
    goto out;
  }
  /* big-endian to host (little-endian) order */
  uint8_t *dst = (uint8_t *)t.data;
  const uint8_t *src = b + hdr;
  for (size_t i = 0; i < nb; i += es)
    for (size_t k = 0; k < es; k++) dst[i + k] = src[i + es - 1 - k];
  *out = t;
out:
  free(b);
  return st;
}

/* x from IDX: f32, u8 scaled; y: integers to i64, floats to f32. */
static dml_status_t to_f32(dml_tensor_t *t, double scale) {
  int64_t n = dml_dims_numel(t->dims, t->rank);
  float *p = (float *)alloc64((size_t)n * sizeof(float));
  if (!p) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  for (int64_t i = 0; i < n; i++)
    p[i] = (float)(dml_load_f64(t->dtype, t->data, (size_t)i) * scale);
  free(t->data);
  t->data = p;
  t->dtype = DML_DTYPE_F32;
  return DML_OK;
}
static dml_status_t to_dtype(dml_tensor_t *t, dml_dtype_t dt) {
  if (t->dtype == dt) return DML_OK;
  int64_t n = dml_dims_numel(t->dims, t->rank);
  void *p = alloc64((size_t)n * dml_dtype_size(dt));
  if (!p) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  for (int64_t i = 0; i < n; i++) {
    if (dml_dtype_is_float(dt))
      dml_store_f64(dt, p, (size_t)i, dml_load_f64(t->dtype, t->data, (size_t)i));
    else
      dml_store_i64(dt, p, (size_t)i, dml_load_i64(t->dtype, t->data, (size_t)i));
  }
  free(t->data);
  t->data = p;
  t->dtype = dt;
  return DML_OK;
}

static dml_status_t idx_pair(const char *xp, const char *yp, const dml_data_options_t *o,
                             dml_data_t *out) {
  dml_data_t d;
  memset(&d, 0, sizeof d);
  dml_status_t st = dml_data_read_idx(xp, &d.x);
  if (!st) st = dml_data_read_idx(yp, &d.y);
  if (!st && d.x.rank == 1 && d.y.rank >= 2) { /* given labels first */
    dml_tensor_t t = d.x;
    d.x = d.y;
    d.y = t;
  }
  if (!st) st = to_f32(&d.x, d.x.dtype == DML_DTYPE_U8 ? o->image_scale : 1.0);
  if (!st)
    st = to_dtype(&d.y, dml_dtype_is_float(d.y.dtype) ? DML_DTYPE_F32 : DML_DTYPE_I64);
  if (!st && d.x.dims[0] != d.y.dims[0])
    st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                         "'%s' has %" PRId64 " rows but '%s' %" PRId64, xp, d.x.dims[0],
                         yp, d.y.dims[0]);
  if (st) {
    dml_data_free(&d);
    return st;
  }
  *out = d;
  return DML_OK;
}

/* ---- CSV ---- */

dml_status_t dml_data_parse_csv(const char *text, size_t n, const char *name,
                                int label_column, dml_data_t *out) {
  /* Pass 1: count rows and columns; pass 2: fill. */
  size_t cap_rows = 0, cols = 0;
  for (size_t i = 0; i < n; i++)
    if (text[i] == '\n') cap_rows++;
  cap_rows++;
  double *vals = NULL;
  size_t rows = 0, nv = 0, cap_v = 0;
  dml_status_t st = DML_OK;
  size_t line_no = 0, pos = 0;
  char field[128];
  while (pos < n && !st) {
    size_t end = pos;
    while (end < n && text[end] != '\n') end++;
    line_no++;
    size_t le = end;
    if (le > pos && text[le - 1] == '\r') le--;
    /* skip blank lines */
    size_t k = pos;
    while (k < le && (text[k] == ' ' || text[k] == '\t')) k++;
    if (k == le) {
      pos = end + 1;
      continue;
    }
    size_t c = 0, fs = pos;
    int header = 0;
    size_t row_start = nv;
    for (size_t j = pos; j <= le && !st; j++) {
      if (j < le && text[j] != ',') continue;
      size_t a = fs, z = j;
      while (a < z && (text[a] == ' ' || text[a] == '\t')) a++;
      while (z > a && (text[z - 1] == ' ' || text[z - 1] == '\t')) z--;
      size_t len = z - a;
      double v = 0;
      int ok = len > 0 && len < sizeof field;
      if (ok) {
        memcpy(field, text + a, len);
        field[len] = 0;
        char *e;
        errno = 0;
        v = strtod(field, &e);
        ok = *e == 0 && errno != ERANGE;
      }
      if (!ok) {
        if (rows == 0 && nv == row_start && c == 0 && line_no == 1) header = 1;
        if (!header)
          st = dml_status_make(DML_STATUS_DATA_LOSS, OP,
                               "%s:%zu: column %zu is not a number ('%.*s')", name,
                               line_no, c + 1, (int)(len > 40 ? 40 : len), text + a);
      }
      if (!header && !st) {
        if (nv == cap_v) {
          cap_v = cap_v ? cap_v * 2 : 1024;
          double *nvp = (double *)realloc(vals, cap_v * sizeof *vals);
          if (!nvp) {
            st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
            break;
          }
          vals = nvp;
        }
        vals[nv++] = v;
      }
      c++;
      fs = j + 1;
    }
    if (st) break;
    if (!header) {
      if (rows == 0) cols = c;
      if (c != cols)
        st = dml_status_make(DML_STATUS_DATA_LOSS, OP,
                             "%s:%zu: %zu columns, the first row has %zu", name, line_no,
                             c, cols);
      rows++;
    } else if (line_no == 1) {
      cols = c;
    }
    pos = end + 1;
  }
  (void)cap_rows;
  if (!st && rows == 0)
    st = dml_status_make(DML_STATUS_DATA_LOSS, OP, "%s: no data rows", name);
  if (!st && cols < 2)
    st = dml_status_make(DML_STATUS_DATA_LOSS, OP,
                         "%s: %zu column; need features and a label", name, cols);
  size_t lc = 0;
  if (!st) {
    if (label_column < 0) label_column = (int)cols + label_column;
    if (label_column < 0 || (size_t)label_column >= cols)
      st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "%s: label column %d outside the %zu columns", name,
                           label_column, cols);
    else
      lc = (size_t)label_column;
  }
  dml_data_t d;
  memset(&d, 0, sizeof d);
  if (!st) {
    int integral = 1;
    for (size_t r = 0; r < rows; r++) {
      double v = vals[r * cols + lc];
      if (v != floor(v) || fabs(v) > 9e15) integral = 0;
    }
    d.x.dtype = DML_DTYPE_F32;
    d.x.rank = 2;
    d.x.dims[0] = (int64_t)rows;
    d.x.dims[1] = (int64_t)cols - 1;
    d.y.dtype = integral ? DML_DTYPE_I64 : DML_DTYPE_F32;
    d.y.rank = 1;
    d.y.dims[0] = (int64_t)rows;
    d.x.data = alloc64(rows * (cols - 1) * sizeof(float));
    d.y.data = alloc64(rows * 8);
    if (!d.x.data || !d.y.data) {
      st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
    } else {
      float *x = (float *)d.x.data;
      for (size_t r = 0; r < rows; r++) {
        size_t k = 0;
        for (size_t c = 0; c < cols; c++) {
          double v = vals[r * cols + c];
          if (c == lc) {
            if (integral)
              ((int64_t *)d.y.data)[r] = (int64_t)v;
            else
              ((float *)d.y.data)[r] = (float)v;
          } else {
            x[r * (cols - 1) + k++] = (float)v;
          }
        }
      }
    }
  }
  free(vals);
  if (st) {
    dml_data_free(&d);
    return st;
  }
  *out = d;
  return DML_OK;
}

/* ---- sources ---- */

static int ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && !strcmp(s + a - b, suf);
}

static dml_status_t load_folder(const char *dir, const char *split,
                                const dml_data_options_t *o, dml_data_t *out) {
  const char *prefix = !strcmp(split, "train") ? "train-" : "t10k-";
  DIR *d = opendir(dir);
  if (!d)
    return dml_status_make(errno == ENOENT ? DML_STATUS_NOT_FOUND : DML_STATUS_IO, OP,
                           "cannot open folder '%s': %s", dir, strerror(errno));
  char xp[4096] = "", yp[4096] = "";
  struct dirent *e;
  while ((e = readdir(d))) {
    if (strncmp(e->d_name, prefix, strlen(prefix))) continue;
    /* the first match, or a plain file over a gzip one */
    int plain = !ends_with(e->d_name, ".gz");
    if (strstr(e->d_name, "images") && (!xp[0] || (plain && ends_with(xp, ".gz"))))
      snprintf(xp, sizeof xp, "%s/%s", dir, e->d_name);
    else if (strstr(e->d_name, "labels") && (!yp[0] || (plain && ends_with(yp, ".gz"))))
      snprintf(yp, sizeof yp, "%s/%s", dir, e->d_name);
  }
  closedir(d);
  if (!xp[0] || !yp[0])
    return dml_status_make(
        DML_STATUS_NOT_FOUND, OP,
        "folder '%s' has no %s*images* and %s*labels* IDX files (the %s "
        "split)",
        dir, prefix, prefix, split);
  return dml_status_annotate(idx_pair(xp, yp, o, out), "reading the %s split of '%s'",
                             split, dir);
}

static dml_status_t load_csv(const char *path, const dml_data_options_t *o,
                             dml_data_t *out) {
  uint8_t *b = NULL;
  size_t n = 0;
  DML_RETURN_IF_ERROR(read_gz(path, &b, &n));
  dml_status_t st =
      dml_data_parse_csv((const char *)b, n, path, o->csv_label_column, out);
  free(b);
  return st;
}

static dml_status_t load_npy_pair(const char *xp, const char *yp, dml_data_t *out) {
  dml_data_t d;
  memset(&d, 0, sizeof d);
  void *bx = NULL, *by = NULL;
  dml_status_t st = dml_npy_read_file(xp, &d.x, &bx);
  if (!st) st = dml_npy_read_file(yp, &d.y, &by);
  /* the buffers are 64-byte aligned and data points at their start */
  if (!st && (d.x.data != bx || d.y.data != by))
    st = dml_status_make(DML_STATUS_INTERNAL, OP, "npy data not at its buffer's start");
  if (!st && (d.x.rank < 1 || d.y.rank < 1 || d.x.dims[0] != d.y.dims[0]))
    st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                         "'%s' and '%s' must be [N, ...] with the same N (they have "
                         "rank %d, %d and first dims %" PRId64 ", %" PRId64 ")",
                         xp, yp, (int)d.x.rank, (int)d.y.rank,
                         d.x.rank ? d.x.dims[0] : (int64_t)0,
                         d.y.rank ? d.y.dims[0] : (int64_t)0);
  if (st) {
    free(bx);
    free(by);
    return st;
  }
  *out = d;
  return DML_OK;
}

dml_status_t dml_data_load(const char *spec, const char *split,
                           const dml_data_options_t *o, dml_data_t *out) {
  dml_data_options_t def;
  if (!o) {
    dml_data_options_init(&def);
    o = &def;
  }
  if (!spec || !spec[0] || !out)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "no data given");
  char buf[8192];
  if (strlen(spec) >= sizeof buf)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "data path too long");
  strcpy(buf, spec);
  char *comma = strchr(buf, ',');
  if (!comma) {
    struct stat sb;
    if (stat(buf, &sb) != 0)
      return dml_status_make(DML_STATUS_NOT_FOUND, OP, "no such file or folder '%s'",
                             buf);
    if (S_ISDIR(sb.st_mode)) return load_folder(buf, split ? split : "train", o, out);
    if (ends_with(buf, ".csv") || ends_with(buf, ".csv.gz")) return load_csv(buf, o, out);
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "'%s': give a folder of IDX files, a .csv file, or two files "
                           "X,Y (.npy or IDX)",
                           buf);
  }
  *comma = 0;
  const char *a = buf, *b = comma + 1;
  if (strchr(b, ','))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "'%s': at most two files (X,Y) per data set", spec);
  if (ends_with(a, ".npy") && ends_with(b, ".npy")) return load_npy_pair(a, b, out);
  if (ends_with(a, ".npy") || ends_with(b, ".npy"))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "'%s': both files of a pair must be .npy, or both IDX", spec);
  return idx_pair(a, b, o, out);
}

/* ---- adaptation ---- */

static int64_t row_numel(const dml_rt_io_info_t *i) {
  int64_t n = 1;
  for (int32_t d = 1; d < i->rank; d++) n *= i->dims[d] < 0 ? 0 : i->dims[d];
  return n;
}

static dml_status_t mismatch(const char *what, const dml_tensor_t *t,
                             const dml_rt_io_info_t *i) {
  char a[96], b[160];
  dml_rt_io_info_str(i, b, sizeof b);
  return dml_status_make(
      DML_STATUS_INVALID_ARGUMENT, OP,
      "the data's %s is %s%s but the package's '%s' is %s (rows must have "
      "the same number of elements)",
      what, dml_dtype_name(t->dtype), dml_dims_str(t->dims, t->rank, a, 96), i->name, b);
}

/* 1 when a non-batch dim of `info` is symbolic (dmlc train --dim-bound
 * H=64): rows then keep the data's shape (no reshape), which binds the
 * symbols (the trainer checks the bounds). */
static int row_symbolic(const dml_rt_io_info_t *i) {
  for (int32_t d = 1; d < i->rank; d++)
    if (i->dims[d] < 0) return 1;
  return 0;
}

/* A symbolic row: the data's rank and static dims must be the package's. */
static dml_status_t check_symbolic_row(const char *what, const dml_tensor_t *t,
                                       const dml_rt_io_info_t *i) {
  if (t->rank != i->rank) return mismatch(what, t, i);
  for (int32_t d = 1; d < i->rank; d++)
    if (i->dims[d] >= 0 && t->dims[d] != i->dims[d]) return mismatch(what, t, i);
  return DML_OK;
}

/* Converts x (a model input's rows) to `info`: the same elements per row,
 * reshaped to the package's row shape (a row with symbolic dims keeps the
 * data's shape: check_symbolic_row). `what` names it in errors. */
static dml_status_t adapt_x(dml_tensor_t *x, const dml_rt_io_info_t *info,
                            const char *what) {
  int64_t n = x->dims[0];
  if (info->rank >= 1 && row_symbolic(info)) {
    DML_RETURN_IF_ERROR(check_symbolic_row(what, x, info));
    return to_dtype(x, info->dtype);
  }
  if (dml_dims_numel(x->dims + 1, x->rank - 1) != row_numel(info) || info->rank < 1)
    return mismatch(what, x, info);
  DML_RETURN_IF_ERROR(to_dtype(x, info->dtype));
  x->rank = info->rank;
  x->dims[0] = n;
  for (int32_t k = 1; k < info->rank; k++) x->dims[k] = info->dims[k];
  return DML_OK;
}

/* Converts labels y to the target `info` (one-hot rows for integer labels
 * of a float [N, C] target). */
static dml_status_t adapt_y(dml_tensor_t *y, const dml_rt_io_info_t *y_info,
                            const char *what) {
  int64_t n = y->dims[0];
  int64_t yr = dml_dims_numel(y->dims + 1, y->rank - 1), want = row_numel(y_info);
  if (y_info->rank < 1) return mismatch(what, y, y_info);
  if (row_symbolic(y_info)) { /* e.g. per-pixel labels [N, H, W] */
    DML_RETURN_IF_ERROR(check_symbolic_row(what, y, y_info));
    return to_dtype(y, y_info->dtype);
  }
  if (yr == 1 && want > 1 && dml_dtype_is_int(y->dtype) &&
      dml_dtype_is_float(y_info->dtype) && y_info->rank == 2) {
    /* class indices -> one-hot rows */
    int64_t c = y_info->dims[1];
    float *p = (float *)alloc64((size_t)(n * c) * sizeof(float));
    if (!p) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
    memset(p, 0, (size_t)(n * c) * sizeof(float));
    for (int64_t r = 0; r < n; r++) {
      int64_t l = dml_load_i64(y->dtype, y->data, (size_t)r);
      if (l < 0 || l >= c) {
        free(p);
        return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                               "label %" PRId64 " of row %" PRId64
                               " is outside [0, %" PRId64 ") for a one-hot target",
                               l, r, c);
      }
      p[r * c + l] = 1.0f;
    }
    free(y->data);
    y->data = p;
    y->dtype = DML_DTYPE_F32;
  } else {
    if (yr != want) return mismatch(what, y, y_info);
    if (dml_dtype_is_float(y->dtype) && !dml_dtype_is_float(y_info->dtype)) {
      int64_t m = dml_dims_numel(y->dims, y->rank);
      for (int64_t i = 0; i < m; i++) {
        double v = dml_load_f64(y->dtype, y->data, (size_t)i);
        if (v != floor(v))
          return dml_status_make(
              DML_STATUS_INVALID_ARGUMENT, OP,
              "label %g (element %" PRId64 ") is not an integer class index", v, i);
      }
    }
    DML_RETURN_IF_ERROR(to_dtype(y, y_info->dtype));
  }
  y->rank = y_info->rank;
  y->dims[0] = n;
  for (int32_t k = 1; k < y_info->rank; k++) y->dims[k] = y_info->dims[k];
  return DML_OK;
}

dml_status_t dml_data_adapt(dml_data_t *d, const dml_rt_io_info_t *x_info,
                            const dml_rt_io_info_t *y_info) {
  DML_RETURN_IF_ERROR(adapt_x(&d->x, x_info, "x"));
  return adapt_y(&d->y, y_info, "y");
}

/* ---- named data sets ---- */

int dml_data_spec_is_named(const char *spec) {
  if (!spec || !spec[0]) return 0;
  for (const char *p = spec; p;) {
    const char *end = strchr(p, ','), *eq = strchr(p, '=');
    if (!end) end = p + strlen(p);
    if (!eq || eq >= end || eq == p) return 0;
    for (const char *c = p; c < eq; c++)
      if (*c == '/') return 0;
    p = *end ? end + 1 : NULL;
  }
  return 1;
}

void dml_data_named_free(dml_data_named_t *d) {
  if (!d) return;
  for (int32_t i = 0; i < d->n && i < DML_DATA_MAX_NAMED; i++) free(d->t[i].data);
  memset(d, 0, sizeof *d);
}

dml_status_t dml_data_load_named(const char *spec, dml_data_named_t *out) {
  if (!out) return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "NULL argument");
  memset(out, 0, sizeof *out);
  if (!dml_data_spec_is_named(spec))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "'%s' is not NAME=FILE.npy,NAME=FILE.npy,...",
                           spec ? spec : "");
  dml_status_t st = DML_OK;
  for (const char *p = spec; p && !st;) {
    const char *end = strchr(p, ','), *eq = strchr(p, '=');
    if (!end) end = p + strlen(p);
    size_t nl = (size_t)(eq - p), pl = (size_t)(end - eq - 1);
    if (out->n == DML_DATA_MAX_NAMED) {
      st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP, "'%s': more than %d arrays",
                           spec, DML_DATA_MAX_NAMED);
      break;
    }
    int32_t i = out->n;
    if (nl >= sizeof out->name[0] || pl >= sizeof out->path[0] || pl == 0) {
      st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "'%.*s': a name of at most 63 bytes and a file path",
                           (int)(end - p), p);
      break;
    }
    memcpy(out->name[i], p, nl);
    out->name[i][nl] = 0;
    memcpy(out->path[i], eq + 1, pl);
    out->path[i][pl] = 0;
    for (int32_t k = 0; k < i && !st; k++)
      if (!strcmp(out->name[k], out->name[i]))
        st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                             "'%s' is given twice in '%s'", out->name[i], spec);
    if (!st && !ends_with(out->path[i], ".npy"))
      st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "%s=%s: named arrays are .npy files", out->name[i],
                           out->path[i]);
    void *buf = NULL;
    if (!st) st = dml_npy_read_file(out->path[i], &out->t[i], &buf);
    if (!st) out->n++;
    if (!st && out->t[i].data != buf)
      st = dml_status_make(DML_STATUS_INTERNAL, OP, "npy data not at its buffer's start");
    if (!st && out->t[i].rank < 1)
      st = dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "%s=%s is a scalar; arrays are [N, ...] rows", out->name[i],
                           out->path[i]);
    p = *end ? end + 1 : NULL;
  }
  if (st) dml_data_named_free(out);
  return st;
}

dml_status_t dml_data_bind_named(dml_data_named_t *d, const struct dml_trainer *t,
                                 const char *single_label, struct dml_dataset *out) {
  int32_t nx = dml_trainer_num_inputs(t), ny = dml_trainer_num_targets(t);
  int32_t which[DML_DATA_MAX_NAMED];
  char inputs[512] = "", outputs[512] = "";
  size_t li = 0, lo = 0;
  for (int32_t k = 0; k < d->n; k++) which[k] = -1;
  memset(out, 0, sizeof *out);
  out->n_inputs = nx;
  out->n_targets = ny;
  for (int32_t k = 0; k < nx + ny; k++) {
    int is_x = k < nx;
    int32_t j = is_x ? k : k - nx;
    dml_rt_io_info_t info;
    DML_RETURN_IF_ERROR(is_x ? dml_trainer_input_info(t, j, &info)
                             : dml_trainer_target_info(t, j, &info));
    const char *name = is_x ? info.name : dml_trainer_target_output(t, j);
    if (!name) name = single_label ? single_label : "target";
    if (is_x && li < sizeof inputs)
      li +=
          (size_t)snprintf(inputs + li, sizeof inputs - li, "%s%s", li ? ", " : "", name);
    if (!is_x && lo < sizeof outputs)
      lo += (size_t)snprintf(outputs + lo, sizeof outputs - lo, "%s%s", lo ? ", " : "",
                             name);
    int32_t f = -1;
    for (int32_t a = 0; a < d->n && f < 0; a++)
      if (!strcmp(d->name[a], name)) f = a;
    /* a single loss's labels may also be named "target" (its input) */
    for (int32_t a = 0; !is_x && !dml_trainer_target_output(t, j) && a < d->n && f < 0;
         a++)
      if (!strcmp(d->name[a], "target")) f = a;
    if (f < 0)
      return dml_status_detail(
          dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                          is_x ? "no array for model input '%s'"
                               : "no labels for trained output '%s'",
                          name),
          "give %s=FILE.npy (the model's inputs and trained outputs name the arrays%s)",
          name,
          !is_x && !dml_trainer_target_output(t, j) ? "; a single loss's labels: "
                                                      "its output or 'target'"
                                                    : "");
    which[f] = k;
    char what[200];
    snprintf(what, sizeof what, "%s '%.60s' (%.80s)", is_x ? "input" : "labels of output",
             name, d->path[f]);
    if (d->t[f].dims[0] != d->t[0].dims[0])
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                             "'%s' (%s) has %" PRId64 " rows, '%s' (%s) %" PRId64
                             ": every array needs the same rows",
                             d->name[f], d->path[f], d->t[f].dims[0], d->name[0],
                             d->path[0], d->t[0].dims[0]);
    DML_RETURN_IF_ERROR(is_x ? adapt_x(&d->t[f], &info, what)
                             : adapt_y(&d->t[f], &info, what));
    if (is_x)
      out->inputs[j] = d->t[f];
    else
      out->targets[j] = d->t[f];
  }
  for (int32_t a = 0; a < d->n; a++)
    if (which[a] < 0)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                             "'%s' is neither a model input (%s) nor a trained output "
                             "(%s)",
                             d->name[a], inputs, outputs);
  return DML_OK;
}
