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
          memcmp(r.dims, t.dims, sizeof(int64_t) * (size_t)t.rank) != 0 ||
          (nb && memcmp(r.data, t.data, nb) != 0))
        abort(); /* the round trip changed the array */
      free(rbuf);
    }
  }
  if (st) abort(); /* what we read, we must be able to write and read back */
  free(bytes);
  free(buf);
  return 0;
}
