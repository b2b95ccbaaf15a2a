/* Tests for the .npy reader and writer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dml_npy.h"
#include "dml_test.h"

/* Builds a .npy file from a header dict (padded as NumPy does) and data. */
static size_t make_npy(uint8_t *out, int major, const char *dict, const void *data,
                       size_t nb) {
  size_t pre = major == 1 ? 10 : 12;
  size_t hl = strlen(dict) + 1;
  size_t total = (pre + hl + 63) / 64 * 64;
  hl = total - pre;
  memcpy(out, "\x93NUMPY", 6);
  out[6] = (uint8_t)major;
  out[7] = 0;
  out[8] = (uint8_t)hl;
  out[9] = (uint8_t)(hl >> 8);
  if (major != 1) out[10] = out[11] = 0;
  memset(out + pre, ' ', hl);
  memcpy(out + pre, dict, strlen(dict));
  out[total - 1] = '\n';
  if (nb) memcpy(out + total, data, nb);
  return total + nb;
}

static void test_round_trip_every_dtype(void) {
  static const int64_t shapes[3][3] = {{0}, {5}, {2, 3, 4}};
  static const int32_t ranks[3] = {0, 1, 3};
  for (int dt = 1; dt < DML_DTYPE_COUNT_; dt++) {
    if (dt == DML_DTYPE_STRING) continue; /* test_strings */
    if (!dml_dtype_npy_descr((dml_dtype_t)dt)) {
      dml_tensor_t t = {(dml_dtype_t)dt, 1, {1}, "xx"};
      void *b;
      size_t n;
      CHECK_ERROR(dml_npy_write_memory(&t, &b, &n), DML_STATUS_UNIMPLEMENTED,
                  "no NumPy equivalent");
      continue;
    }
    for (int s = 0; s < 3; s++) {
      dml_tensor_t t;
      memset(&t, 0, sizeof t);
      t.dtype = (dml_dtype_t)dt;
      t.rank = ranks[s];
      memcpy(t.dims, shapes[s], sizeof shapes[s]);
      size_t nb = dml_tensor_bytes(&t);
      uint8_t *data = (uint8_t *)malloc(nb);
      for (size_t i = 0; i < nb; i++) data[i] = (uint8_t)(i * 13 + dt);
      if (dt == DML_DTYPE_BOOL)
        for (size_t i = 0; i < nb; i++) data[i] &= 1;
      t.data = data;
      void *bytes = NULL;
      size_t size = 0;
      CHECK_OK(dml_npy_write_memory(&t, &bytes, &size));
      CHECK(size % 64 == nb % 64 && size >= 64);
      dml_tensor_t r;
      void *buf = NULL;
      CHECK_OK(dml_npy_read_memory(bytes, size, &r, &buf));
      if (buf) {
        CHECK(r.dtype == t.dtype && r.rank == t.rank);
        for (int32_t i = 0; i < t.rank; i++) CHECK(r.dims[i] == t.dims[i]);
        CHECK(memcmp(r.data, data, nb) == 0);
        CHECK(((uintptr_t)r.data & 63) == 0);
      }
      free(buf);
      /* Through a file. */
      char path[128];
      snprintf(path, sizeof path, "/tmp/dml_test_npy_%ld_%d_%d.npy", (long)getpid(), dt,
               s);
      CHECK_OK(dml_npy_write_file(path, &t));
      buf = NULL;
      CHECK_OK(dml_npy_read_file(path, &r, &buf));
      if (buf) {
        CHECK(r.dtype == t.dtype && r.rank == t.rank && memcmp(r.data, data, nb) == 0);
      }
      free(buf);
      unlink(path);
      free(bytes);
      free(data);
    }
  }
}

static void test_header_text(void) {
  float v[6] = {0, 1, 2, 3, 4, 5};
  dml_tensor_t t = {DML_DTYPE_F32, 2, {2, 3}, v};
  void *bytes;
  size_t size;
  CHECK_OK(dml_npy_write_memory(&t, &bytes, &size));
  CHECK(size == 128 + 24);
  CHECK(memcmp(bytes,
               "\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order': False, "
               "'shape': (2, 3), }",
               10 + 58) == 0);
  CHECK(((char *)bytes)[127] == '\n');
  free(bytes);
  t.rank = 1;
  t.dims[0] = 6;
  CHECK_OK(dml_npy_write_memory(&t, &bytes, &size));
  CHECK(strstr((char *)bytes + 10, "'shape': (6,), }") != NULL);
  free(bytes);
}

static void test_numpy_variants(void) {
  uint8_t buf[512];
  int64_t d[3] = {7, -8, 9};
  dml_tensor_t r;
  void *data = NULL;
  /* NumPy's own spelling: keys in order, growth padding; version 2.0 and 3.0;
   * '|u1' and '<u1'; double quotes; Python 2 'L' suffix. */
  size_t n = make_npy(buf, 1, "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }",
                      d, sizeof d);
  CHECK_OK(dml_npy_read_memory(buf, n, &r, &data));
  CHECK(r.dtype == DML_DTYPE_I64 && r.rank == 1 && r.dims[0] == 3 && data &&
        ((int64_t *)r.data)[1] == -8);
  free(data);
  n = make_npy(buf, 2, "{\"shape\": (3L,), \"fortran_order\": False, \"descr\": \"<i8\"}",
               d, sizeof d);
  CHECK_OK(dml_npy_read_memory(buf, n, &r, &data));
  free(data);
  n = make_npy(buf, 3, "{'descr':'|u1','fortran_order':False,'shape':(2,2)}", "\1\2\3\4",
               4);
  CHECK_OK(dml_npy_read_memory(buf, n, &r, &data));
  CHECK(r.dtype == DML_DTYPE_U8 && r.rank == 2);
  free(data);
  n = make_npy(buf, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
               "\0\2\1", 3);
  CHECK_OK(dml_npy_read_memory(buf, n, &r, &data));
  CHECK(r.dtype == DML_DTYPE_BOOL && data && ((uint8_t *)r.data)[1] == 1);
  free(data);
  n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }",
               "\0\0\x80\x3f", 4);
  CHECK_OK(dml_npy_read_memory(buf, n, &r, &data));
  CHECK(r.rank == 0 && data && ((float *)r.data)[0] == 1.0f);
  free(data);
  n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 5), }",
               NULL, 0);
  CHECK_OK(dml_npy_read_memory(buf, n, &r, &data));
  CHECK(r.rank == 2 && r.dims[0] == 0 && r.dims[1] == 5);
  free(data);
}

/* String tensors as NumPy's unicode '<U<n>' (what numpy.save writes for
 * np.array(["ab", "\u00e9\u7684", ""])): UTF-32LE read into UTF-8, and
 * back. */
static void test_strings(void) {
  uint8_t buf[512];
  uint8_t u32[3 * 2 * 4];
  memset(u32, 0, sizeof u32);
  u32[0] = 'a', u32[4] = 'b';                    /* "ab" */
  u32[8] = 0xe9, u32[12] = 0x84, u32[13] = 0x76; /* U+00E9 U+7684 */
  size_t n = make_npy(buf, 1, "{'descr': '<U2', 'fortran_order': False, 'shape': (3,), }",
                      u32, sizeof u32);
  dml_tensor_t r;
  void *data = NULL;
  CHECK_OK(dml_npy_read_memory(buf, n, &r, &data));
  CHECK(r.dtype == DML_DTYPE_STRING && r.rank == 1 && r.dims[0] == 3);
  const dml_str_t *e = (const dml_str_t *)r.data;
  CHECK(e[0].len == 2 && memcmp(e[0].data, "ab", 2) == 0);
  CHECK(e[1].len == 5 && memcmp(e[1].data, "\xc3\xa9\xe7\x9a\x84", 5) == 0);
  CHECK(e[2].len == 0);
  void *out = NULL;
  size_t on = 0;
  CHECK_OK(dml_npy_write_memory(&r, &out, &on));
  CHECK(on == n && memcmp(out, buf, n) == 0); /* the same bytes as NumPy's */
  free(out);
  free(data);
  /* a surrogate code point is not text */
  u32[8] = 0x00, u32[9] = 0xd8;
  n = make_npy(buf, 1, "{'descr': '<U2', 'fortran_order': False, 'shape': (3,), }", u32,
               sizeof u32);
  CHECK_ERROR(dml_npy_read_memory(buf, n, &r, &data), DML_STATUS_DATA_LOSS,
              "not a Unicode scalar value");
  /* the data size follows the width */
  CHECK_ERROR(dml_npy_read_memory(buf, n - 4, &r, &data), DML_STATUS_DATA_LOSS,
              "bytes of data");
  /* invalid UTF-8 cannot be written as unicode */
  dml_str_t bad[1] = {{"\xff", 1}};
  dml_tensor_t bt = {DML_DTYPE_STRING, 1, {1}, bad};
  CHECK_ERROR(dml_npy_write_memory(&bt, &out, &on), DML_STATUS_INVALID_ARGUMENT,
              "not valid UTF-8");
}

static void test_malformed(void) {
  uint8_t buf[512];
  dml_tensor_t r;
  void *data = NULL;
  float f[4] = {0};
#define NPY(dict, nbytes) make_npy(buf, 1, dict, f, nbytes)
  size_t n = NPY("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16);
  CHECK_ERROR(dml_npy_read_memory(buf, n, &r, &data), DML_STATUS_UNIMPLEMENTED,
              "Fortran");
  n = NPY("{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }", 16);
  CHECK_ERROR(dml_npy_read_memory(buf, n, &r, &data), DML_STATUS_UNIMPLEMENTED,
              "big-endian");
  n = NPY("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 16);
  CHECK_ERROR(dml_npy_read_memory(buf, n, &r, &data), DML_STATUS_UNIMPLEMENTED, "object");
  n = NPY("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4,), }", 16);
  CHECK_ERROR(dml_npy_read_memory(buf, n, &r, &data), DML_STATUS_UNIMPLEMENTED,
              "structured");
  n = NPY("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", 16);
  CHECK_ERROR(dml_npy_read_memory(buf, n, &r, &data), DML_STATUS_UNIMPLEMENTED, "'<c8'");
  /* Header lies about the data size, both ways. */
  n = NPY("{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", 16);
  CHECK_ERROR(dml_npy_read_memory(buf, n, &r, &data), DML_STATUS_DATA_LOSS,
              "header says f32[5] (20 bytes of data) but the file holds 16");
  n = NPY("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 16);
  CHECK_ERROR(dml_npy_read_memory(buf, n, &r, &data), DML_STATUS_DATA_LOSS,
              "file holds 16");
  n = NPY("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }",
          16);
  CHECK_ERROR(dml_npy_read_memory(buf, n, &r, &data), DML_STATUS_DATA_LOSS, "overflows");
  n = NPY("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }",
          16);
  CHECK_ERROR(dml_npy_read_memory(buf, n, &r, &data), DML_STATUS_DATA_LOSS, "overflows");
  n = NPY("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,4), }", 16);
  CHECK_ERROR(dml_npy_read_memory(buf, n, &r, &data), DML_STATUS_UNIMPLEMENTED,
              "more than 8");
  n = NPY("{'descr': '<f4', 'shape': (4,), }", 16);
  CHECK_ERROR(dml_npy_read_memory(buf, n, &r, &data), DML_STATUS_DATA_LOSS, "missing");
  n = NPY("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'extra': 1}", 16);
  CHECK_ERROR(dml_npy_read_memory(buf, n, &r, &data), DML_STATUS_DATA_LOSS,
              "unexpected key");
  n = NPY("{'descr': '<f4', 'fortran_order': False, 'shape': (-4,), }", 16);
  CHECK_ERROR(dml_npy_read_memory(buf, n, &r, &data), DML_STATUS_DATA_LOSS,
              "non-integer");
  n = NPY("{'descr': '<f4', 'fortran_order': False, 'shape': (4,) ", 16);
  CHECK_ERROR(dml_npy_read_memory(buf, n, &r, &data), DML_STATUS_DATA_LOSS, "malformed");
  CHECK_ERROR(dml_npy_read_memory("PK\3\4not an npy file", 20, &r, &data),
              DML_STATUS_DATA_LOSS, "bad magic");
  n = NPY("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 16);
  buf[6] = 4;
  CHECK_ERROR(dml_npy_read_memory(buf, n, &r, &data), DML_STATUS_UNIMPLEMENTED,
              "version 4.0");
  buf[6] = 1;
  buf[9] = 0xff; /* header length past the end */
  CHECK_ERROR(dml_npy_read_memory(buf, n, &r, &data), DML_STATUS_DATA_LOSS, "truncated");
  buf[9] = 0;
  /* Every truncation fails; every byte flip fails or parses (no crash). */
  for (size_t k = 0; k < n; k++) {
    dml_status_t st = dml_npy_read_memory(buf, k, &r, &data);
    CHECK(st != DML_OK);
    dml_status_free(st);
  }
  uint8_t c[512];
  for (size_t k = 0; k < n; k++) {
    memcpy(c, buf, n);
    c[k] ^= 0x5A;
    data = NULL;
    dml_status_t st = dml_npy_read_memory(c, n, &r, &data);
    if (!st) free(data);
    dml_status_free(st);
  }
  CHECK_ERROR(dml_npy_read_file("/nonexistent/x.npy", &r, &data), DML_STATUS_NOT_FOUND,
              "/nonexistent/x.npy");
#undef NPY
}

int main(void) {
  RUN(test_round_trip_every_dtype);
  RUN(test_header_text);
  RUN(test_numpy_variants);
  RUN(test_strings);
  RUN(test_malformed);
  return dml_test_finish();
}
