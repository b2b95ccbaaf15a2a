/*
 * onnx_tensor.c — ONNX TensorProto -> host tensor.
 *
 * Storage forms (onnx.proto, TensorProto): raw_data (little-endian, packed),
 * the typed fields float_data, double_data, int32_data (which also carries
 * int16/int8/uint16/uint8/bool and the bit patterns of float16/bfloat16),
 * int64_data, uint64_data (uint32/uint64), and external data
 * (data_location EXTERNAL; keys location, offset, length) in a file relative
 * to the model's directory. Every size is checked before use.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dml_file.h"
#include "onnx_internal.h"

/* TensorProto.DataType values (onnx.proto). */
enum {
  ONNX_T_UNDEFINED = 0,
  ONNX_T_FLOAT = 1,
  ONNX_T_UINT8 = 2,
  ONNX_T_INT8 = 3,
  ONNX_T_UINT16 = 4,
  ONNX_T_INT16 = 5,
  ONNX_T_INT32 = 6,
  ONNX_T_INT64 = 7,
  ONNX_T_STRING = 8,
  ONNX_T_BOOL = 9,
  ONNX_T_FLOAT16 = 10,
  ONNX_T_DOUBLE = 11,
  ONNX_T_UINT32 = 12,
  ONNX_T_UINT64 = 13,
  ONNX_T_COMPLEX64 = 14,
  ONNX_T_COMPLEX128 = 15,
  ONNX_T_BFLOAT16 = 16,
};

dml_dtype_t onnx_dtype(int32_t t) {
  return dml_dtype_from_onnx_code(t);
}

const char *onnx_dtype_name(int32_t t) {
  static const char *const names[] = {
      "UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64",
      "STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64",
      "COMPLEX128", "BFLOAT16",
      /* onnx.proto's later dtypes: the float8 ones (17..20, 24) are dmlc
       * dtypes (onnx_dtype), the 4-, 2- and 6-bit ones are not */
      "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4", "INT4",
      "FLOAT4E2M1", "FLOAT8E8M0", "UINT2", "INT2", "FLOAT6E2M3", "FLOAT6E3M2"};
  if (t >= 0 && (size_t)t < sizeof(names) / sizeof(names[0])) return names[t];
  return "an unknown data type";
}

static int host_is_little_endian(void) {
  const uint16_t one = 1;
  return *(const uint8_t *)&one == 1;
}

/* Raw data is little-endian; swap each element in place on big-endian hosts. */
static void le_to_host(void *data, size_t numel, size_t esize) {
  if (host_is_little_endian() || esize == 1) return;
  uint8_t *p = (uint8_t *)data;
  for (size_t i = 0; i < numel; i++, p += esize)
    for (size_t a = 0, b = esize - 1; a < b; a++, b--) {
      uint8_t t = p[a];
      p[a] = p[b];
      p[b] = t;
    }
}

/* An error about tensor `what` ("initializer 'w'"): "<what>: <reason>". */
static dml_status_t err(dml_status_code_t code, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static dml_status_t err(dml_status_code_t code, const char *what, const char *fmt, ...) {
  char reason[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof(reason), fmt, ap);
  va_end(ap);
  return dml_status_make(code, ONNX_ERR_OP, "%s: %s", what, reason);
}

/* Parses a non-negative decimal; 0 on success. */
static int parse_u64(const char *s, uint64_t *out) {
  if (!s || !*s) return -1;
  uint64_t v = 0;
  for (; *s; s++) {
    if (*s < '0' || *s > '9') return -1;
    if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10) return -1;
    v = v * 10 + (uint64_t)(*s - '0');
  }
  *out = v;
  return 0;
}

/* A relative path that stays inside its directory: not absolute, no ".."
 * component, no drive letter. */
static int path_stays_inside(const char *p) {
  if (!*p || p[0] == '/' || p[0] == '\\') return 0;
  if (((p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= 'a' && p[0] <= 'z')) && p[1] == ':')
    return 0;
  const char *c = p;
  while (*c) {
    size_t len = strcspn(c, "/\\");
    if (len == 2 && c[0] == '.' && c[1] == '.') return 0;
    c += len;
    if (*c) c++;
  }
  return 1;
}

static dml_status_t read_external(const Onnx__TensorProto *t, const char *base_dir,
                                  const char *what, size_t want_bytes, void *out) {
  const char *location = NULL, *offset_s = NULL, *length_s = NULL;
  for (size_t i = 0; i < t->n_external_data; i++) {
    const Onnx__StringStringEntryProto *kv = t->external_data[i];
    if (!kv->key) continue;
    if (strcmp(kv->key, "location") == 0)
      location = kv->value;
    else if (strcmp(kv->key, "offset") == 0)
      offset_s = kv->value;
    else if (strcmp(kv->key, "length") == 0)
      length_s = kv->value;
  }
  if (!base_dir)
    return dml_status_detail(
        err(DML_STATUS_INVALID_ARGUMENT, what,
            "external data not allowed: the model was loaded from memory without a base "
            "directory"),
        "location '%s'", location ? location : "");
  if (!location || !*location)
    return err(DML_STATUS_INVALID_ARGUMENT, what, "external data without a location");
  if (!path_stays_inside(location))
    return dml_status_detail(
        err(DML_STATUS_INVALID_ARGUMENT, what,
            "external data location '%s' is absolute or escapes the model directory",
            location),
        "model directory '%s'", base_dir);
  uint64_t offset = 0, length = 0;
  if (offset_s && parse_u64(offset_s, &offset))
    return err(DML_STATUS_INVALID_ARGUMENT, what,
               "external data offset '%s' is not a number", offset_s);
  if (length_s && parse_u64(length_s, &length))
    return err(DML_STATUS_INVALID_ARGUMENT, what,
               "external data length '%s' is not a number", length_s);

  size_t blen = strlen(base_dir), llen = strlen(location);
  char *full = (char *)malloc(blen + llen + 2);
  if (!full)
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, ONNX_ERR_OP, "out of memory");
  memcpy(full, base_dir, blen);
  full[blen] = '/';
  memcpy(full + blen + 1, location, llen + 1);

  dml_status_t st = DML_OK;
  int fd = -1;
  char *real_base = realpath(base_dir, NULL);
  char *real_full = realpath(full, NULL);
  if (!real_full) {
    st = dml_status_detail(err(errno == ENOENT ? DML_STATUS_NOT_FOUND : DML_STATUS_IO,
                               what, "cannot open external data file '%s'", location),
                           "path '%s': %s", full, strerror(errno));
    goto free_paths;
  }
  /* Symbolic links may still lead outside the model directory. */
  size_t rb = real_base ? strlen(real_base) : 0;
  if (!real_base ||
      !(strncmp(real_full, real_base, rb) == 0 && (real_full[rb] == '/' || rb == 1))) {
    st = dml_status_detail(
        err(DML_STATUS_INVALID_ARGUMENT, what,
            "external data location '%s' escapes the model directory", location),
        "resolves to '%s'", real_full);
    goto free_paths;
  }
  /* Only a regular file (a FIFO in the model folder is refused, not
   * waited on). */
  uint64_t fsize = 0;
  dml_status_t ost = dml_file_open_read(ONNX_ERR_OP, real_full, &fd, &fsize);
  if (ost) {
    st = dml_status_detail(
        err(DML_STATUS_IO, what, "cannot read external data file '%s'", location), "%s",
        dml_status_reason(ost));
    dml_status_free(ost);
    fd = -1;
    goto close_file;
  }
  if (offset > fsize) {
    st =
        dml_status_detail(err(DML_STATUS_INVALID_ARGUMENT, what,
                              "external data offset is beyond the end of '%s'", location),
                          "offset %llu, file size %llu", (unsigned long long)offset,
                          (unsigned long long)fsize);
    goto close_file;
  }
  if (!length_s) length = fsize - offset;
  if (length > fsize - offset) {
    st = dml_status_detail(err(DML_STATUS_INVALID_ARGUMENT, what,
                               "external data range is beyond the end of '%s'", location),
                           "offset %llu + length %llu > file size %llu",
                           (unsigned long long)offset, (unsigned long long)length,
                           (unsigned long long)fsize);
    goto close_file;
  }
  if (length != (uint64_t)want_bytes) {
    st = dml_status_detail(err(DML_STATUS_INVALID_ARGUMENT, what,
                               "external data length does not match the tensor's dims"),
                           "length %llu bytes, dims and dtype need %zu",
                           (unsigned long long)length, want_bytes);
    goto close_file;
  }
  size_t done = 0;
  while (done < want_bytes) {
    ssize_t r = pread(fd, (char *)out + done, want_bytes - done, (off_t)(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      st = err(DML_STATUS_IO, what, "short read from external data file '%s'", location);
      goto close_file;
    }
    done += (size_t)r;
  }
close_file:
  if (fd >= 0) close(fd);
free_paths:
  free(real_base);
  free(real_full);
  free(full);
  return st;
}

/* Checks that a typed field holds exactly numel values. */
static dml_status_t check_count(const char *what, const char *field, size_t have,
                                int64_t numel) {
  if ((uint64_t)have == (uint64_t)numel) return DML_OK;
  return dml_status_detail(err(DML_STATUS_INVALID_ARGUMENT, what,
                               "data size does not match the dims (%s)", field),
                           "%zu values for %lld elements", have, (long long)numel);
}

/* A STRING tensor (string_data, one bytes entry per element; raw_data and
 * external data are not allowed for strings by onnx.proto): one malloc'd
 * buffer of the numel dml_str_t descriptors followed by the bytes they point
 * at (*out_bytes = the descriptors' bytes; freeing *out_data frees all). */
static dml_status_t decode_strings(const Onnx__TensorProto *t, const char *what,
                                   dml_tensor_t *out, void **out_data,
                                   size_t *out_bytes) {
  if (t->n_dims > DML_MAX_RANK)
    return dml_status_detail(
        err(DML_STATUS_UNIMPLEMENTED, what, "rank above the maximum of 8"), "rank %zu",
        t->n_dims);
  if (t->has_raw_data ||
      (t->has_data_location &&
       t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL))
    return err(DML_STATUS_INVALID_ARGUMENT, what,
               "a STRING tensor must hold its values in string_data (not raw_data or "
               "external data)");
  dml_tensor_t tt;
  memset(&tt, 0, sizeof(tt));
  tt.dtype = DML_DTYPE_STRING;
  tt.rank = (int32_t)t->n_dims;
  for (size_t i = 0; i < t->n_dims; i++) {
    if (t->dims[i] < 0) return err(DML_STATUS_INVALID_ARGUMENT, what, "negative dim");
    tt.dims[i] = t->dims[i];
  }
  int64_t numel = dml_dims_numel(tt.dims, tt.rank);
  if (numel < 0) return err(DML_STATUS_RESOURCE_EXHAUSTED, what, "tensor size overflows");
  DML_RETURN_IF_ERROR(check_count(what, "string_data", t->n_string_data, numel));
  size_t total = (size_t)numel * sizeof(dml_str_t);
  for (size_t i = 0; i < (size_t)numel; i++) total += t->string_data[i].len;
  uint8_t *buf = total ? (uint8_t *)malloc(total) : NULL;
  if (total && !buf)
    return dml_status_detail(dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, ONNX_ERR_OP,
                                             "%s: out of memory", what),
                             "%zu bytes", total);
  dml_str_t *d = (dml_str_t *)buf;
  /* no strings: buf is NULL, and NULL + 0 is undefined (UBSan, fuzz_onnx) */
  uint8_t *p = buf ? buf + (size_t)numel * sizeof(dml_str_t) : NULL;
  for (size_t i = 0; i < (size_t)numel; i++) {
    size_t len = t->string_data[i].len;
    if (len) memcpy(p, t->string_data[i].data, len);
    d[i].data = len ? (const char *)p : "";
    d[i].len = len;
    p += len;
  }
  tt.data = buf;
  *out = tt;
  *out_data = buf;
  *out_bytes = (size_t)numel * sizeof(dml_str_t);
  return DML_OK;
}

/* TensorProto.UINT4 / INT4 (onnx.proto of ONNX 1.16; not in the
 * onnx.proto this is generated from). */
#define ONNX_T_UINT4_ 21
#define ONNX_T_INT4_ 22

/* A constant UINT4 / INT4 tensor (weights of blocked quantization, e.g.
 * `dmlc quantize --weight-only int4`), widened to u8 / i8: dmlc has no
 * 4-bit dtype. Packed two per byte, element 2i in the low nibble of byte i,
 * in raw_data or one byte per int32_data entry (ONNX's layout); INT4 is
 * sign-extended. External data is refused (UNIMPLEMENTED). */
static dml_status_t decode_4bit(const Onnx__TensorProto *t, int is_signed,
                                const char *what, dml_tensor_t *out, void **out_data,
                                size_t *out_bytes) {
  if (t->has_data_location &&
      t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
    return err(DML_STATUS_UNIMPLEMENTED, what,
               "%s held as external data is not supported", is_signed ? "INT4" : "UINT4");
  if (t->n_dims > DML_MAX_RANK)
    return dml_status_detail(
        err(DML_STATUS_UNIMPLEMENTED, what, "rank above the maximum of 8"), "rank %zu",
        t->n_dims);
  dml_tensor_t tt;
  memset(&tt, 0, sizeof(tt));
  tt.dtype = is_signed ? DML_DTYPE_I8 : DML_DTYPE_U8;
  tt.rank = (int32_t)t->n_dims;
  for (size_t i = 0; i < t->n_dims; i++) {
    if (t->dims[i] < 0) return err(DML_STATUS_INVALID_ARGUMENT, what, "negative dim");
    tt.dims[i] = t->dims[i];
  }
  int64_t numel = dml_dims_numel(tt.dims, tt.rank);
  if (numel < 0 || (uint64_t)numel > (uint64_t)PTRDIFF_MAX / 2)
    return err(DML_STATUS_RESOURCE_EXHAUSTED, what, "tensor size overflows");
  size_t packed = ((size_t)numel + 1) / 2;
  size_t have = t->has_raw_data ? t->raw_data.len : t->n_int32_data;
  if (numel > 0 && have != packed)
    return dml_status_detail(
        err(DML_STATUS_INVALID_ARGUMENT, what, "data size does not match the dims (%s)",
            t->has_raw_data ? "raw_data" : "int32_data"),
        "%zu bytes for %lld 4-bit elements", have, (long long)numel);
  uint8_t *data = NULL;
  if (numel > 0 && !(data = (uint8_t *)malloc((size_t)numel)))
    return err(DML_STATUS_RESOURCE_EXHAUSTED, what, "out of memory");
  for (size_t i = 0; i < (size_t)numel; i++) {
    unsigned byte = t->has_raw_data ? t->raw_data.data[i / 2]
                                    : (unsigned)(uint32_t)t->int32_data[i / 2] & 0xFFu;
    unsigned v = (i % 2 ? byte >> 4 : byte) & 0xFu;
    data[i] = is_signed && v > 7 ? (uint8_t)(int8_t)((int)v - 16) : (uint8_t)v;
  }
  *out = tt;
  out->data = data;
  *out_data = data;
  *out_bytes = (size_t)numel;
  return DML_OK;
}

dml_status_t onnx_tensor_decode(const Onnx__TensorProto *t, const char *base_dir,
                                const char *what, dml_tensor_t *out, void **out_data,
                                size_t *out_bytes) {
  int32_t ot = t->has_data_type ? t->data_type : ONNX_T_UNDEFINED;
  if (ot == ONNX_T_STRING) return decode_strings(t, what, out, out_data, out_bytes);
  if (ot == ONNX_T_INT4_ || ot == ONNX_T_UINT4_)
    return decode_4bit(t, ot == ONNX_T_INT4_, what, out, out_data, out_bytes);
  dml_dtype_t dt = onnx_dtype(ot);
  if (dt == DML_DTYPE_INVALID)
    return dml_status_detail(err(DML_STATUS_UNIMPLEMENTED, what,
                                 "data type %s is not supported", onnx_dtype_name(ot)),
                             "TensorProto.data_type = %d", (int)ot);
  if (t->n_dims > DML_MAX_RANK)
    return dml_status_detail(
        err(DML_STATUS_UNIMPLEMENTED, what, "rank above the maximum of 8"), "rank %zu",
        t->n_dims);
  if (t->segment)
    return err(DML_STATUS_UNIMPLEMENTED, what, "segmented tensors are not supported");

  dml_tensor_t tt;
  memset(&tt, 0, sizeof(tt));
  tt.dtype = dt;
  tt.rank = (int32_t)t->n_dims;
  for (size_t i = 0; i < t->n_dims; i++) {
    if (t->dims[i] < 0) {
      char dims[160];
      return dml_status_detail(err(DML_STATUS_INVALID_ARGUMENT, what, "negative dim"),
                               "dims %s",
                               dml_dims_str(t->dims, tt.rank, dims, sizeof(dims)));
    }
    tt.dims[i] = t->dims[i];
  }
  int64_t numel = dml_dims_numel(tt.dims, tt.rank);
  size_t esize = dml_dtype_size(dt);
  if (numel < 0 || (uint64_t)numel > SIZE_MAX / esize ||
      (uint64_t)numel * esize > (uint64_t)PTRDIFF_MAX) {
    char dims[160];
    return dml_status_detail(
        err(DML_STATUS_RESOURCE_EXHAUSTED, what, "tensor size overflows"), "dims %s",
        dml_dims_str(tt.dims, tt.rank, dims, sizeof(dims)));
  }
  size_t bytes = (size_t)numel * esize;
  int external = t->has_data_location &&
                 t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;

  /* Validate sizes before allocating: the buffer is never larger than the
   * data that backs it (external data is checked against the file). */
  dml_status_t st = DML_OK;
  if (!external) {
    if (t->has_raw_data) {
      if (t->raw_data.len != bytes)
        return dml_status_detail(
            err(DML_STATUS_INVALID_ARGUMENT, what,
                "data size does not match the dims (%s)", "raw_data"),
            "%zu bytes for %lld elements of %zu bytes", t->raw_data.len, (long long)numel,
            esize);
    } else if (numel > 0) {
      switch (ot) {
        case ONNX_T_FLOAT:
          st = check_count(what, "float_data", t->n_float_data, numel);
          break;
        case ONNX_T_DOUBLE:
          st = check_count(what, "double_data", t->n_double_data, numel);
          break;
        case ONNX_T_INT64:
          st = check_count(what, "int64_data", t->n_int64_data, numel);
          break;
        case ONNX_T_UINT32:
        case ONNX_T_UINT64:
          st = check_count(what, "uint64_data", t->n_uint64_data, numel);
          break;
        default: st = check_count(what, "int32_data", t->n_int32_data, numel); break;
      }
      if (st) return st;
    }
  }

  /* Little-endian raw data is used in place (no copy) where the host's
   * layout matches; bool is normalized to 0/1 so it is always copied. */
  if (!external && t->has_raw_data && host_is_little_endian() && dt != DML_DTYPE_BOOL) {
    *out = tt;
    out->data = bytes ? t->raw_data.data : NULL;
    *out_data = NULL;
    *out_bytes = bytes;
    return DML_OK;
  }
  void *data = NULL;
  if (bytes) {
    data = malloc(bytes);
    if (!data)
      return dml_status_detail(dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, ONNX_ERR_OP,
                                               "%s: out of memory", what),
                               "%zu bytes", bytes);
  }
  if (external) {
    st = read_external(t, base_dir, what, bytes, data);
    if (!st) le_to_host(data, (size_t)numel, esize);
  } else if (t->has_raw_data) {
    if (bytes) memcpy(data, t->raw_data.data, bytes);
    le_to_host(data, (size_t)numel, esize);
  }
  if (!st && dt == DML_DTYPE_BOOL && (external || t->has_raw_data)) {
    for (size_t i = 0; i < (size_t)numel; i++)
      ((uint8_t *)data)[i] = ((uint8_t *)data)[i] != 0;
  } else if (!external && !t->has_raw_data) {
    for (size_t i = 0; i < (size_t)numel; i++) {
      switch (ot) {
        case ONNX_T_FLOAT: ((float *)data)[i] = t->float_data[i]; break;
        case ONNX_T_DOUBLE: ((double *)data)[i] = t->double_data[i]; break;
        case ONNX_T_INT64: ((int64_t *)data)[i] = t->int64_data[i]; break;
        case ONNX_T_UINT64: ((uint64_t *)data)[i] = t->uint64_data[i]; break;
        case ONNX_T_UINT32: ((uint32_t *)data)[i] = (uint32_t)t->uint64_data[i]; break;
        case ONNX_T_INT32: ((int32_t *)data)[i] = t->int32_data[i]; break;
        case ONNX_T_INT16: ((int16_t *)data)[i] = (int16_t)t->int32_data[i]; break;
        case ONNX_T_INT8: ((int8_t *)data)[i] = (int8_t)t->int32_data[i]; break;
        case ONNX_T_UINT16:
        case ONNX_T_FLOAT16:
        case ONNX_T_BFLOAT16:
          ((uint16_t *)data)[i] = (uint16_t)(uint32_t)t->int32_data[i];
          break;
        case ONNX_T_UINT8:
          ((uint8_t *)data)[i] = (uint8_t)(uint32_t)t->int32_data[i];
          break;
        case ONNX_T_BOOL: ((uint8_t *)data)[i] = t->int32_data[i] != 0; break;
        default:
          /* float8 (onnx.proto: their bit patterns in int32_data) */
          if (dml_dtype_is_float8(dt))
            ((uint8_t *)data)[i] = (uint8_t)(uint32_t)t->int32_data[i];
          break;
      }
    }
  }
  if (st) {
    free(data);
    return st;
  }
  *out = tt;
  out->data = data;
  *out_data = data;
  *out_bytes = bytes;
  return DML_OK;
}
