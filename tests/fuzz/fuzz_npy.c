/* fuzz_npy.c — libFuzzer target for the .npy reader (untrusted bytes).
 * Accepted arrays must survive a write/read round trip unchanged. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dml_npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dml_tensor_t t;
  void *buf = NULL;
  dml_status_t st = dml_npy_read_memory(data, size, &t, &buf);
  if (st) {
    dml_status_free(st);
    return 0;
  }
  void *bytes = NULL;
  size_t n = 0;
  st = dml_npy_write_memory(&t, &bytes, &n);
  if (!st) {
    dml_tensor_t r;
    void *rbuf = NULL;
    st = dml_npy_read_memory(bytes, n, &r, &rbuf);
    if (!st) {
      size_t nb = dml_tensor_bytes(&t);
      if (r.dtype != t.dtype || r.rank != t.rank ||
          memcmp(r.dims, t.dims, sizeof(int64_t) * (size_t)t.rank) != 0)
        abort();                         /* the round trip changed the array */
      if (t.dtype == DML_DTYPE_STRING) { /* strings: their bytes, not the pointers */
        const dml_str_t *a = (const dml_str_t *)t.data, *b = (const dml_str_t *)r.data;
        for (size_t i = 0; i < nb / sizeof(dml_str_t); i++)
          if (a[i].len != b[i].len ||
              (a[i].len && memcmp(a[i].data, b[i].data, (size_t)a[i].len) != 0))
            abort();
      } else if (nb && memcmp(r.data, t.data, nb) != 0) {
        abort();
      }
      free(rbuf);
    }
  }
  if (st) abort(); /* what we read, we must be able to write and read back */
  free(bytes);
  free(buf);
  return 0;
}
