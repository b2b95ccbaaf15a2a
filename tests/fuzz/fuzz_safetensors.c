/* fuzz_safetensors.c — libFuzzer target for the safetensors reader
 * (checkpoints are untrusted bytes). Accepted files must survive a
 * write/read round trip: same tensors (name, dtype, shape, bytes) and
 * metadata. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dml_safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dml_safetensors_t *f = NULL;
  dml_status_t st = dml_safetensors_parse(data, size, &f);
  if (st) {
    dml_status_free(st);
    return 0;
  }
  dml_st_entry_t *e = (dml_st_entry_t *)calloc(f->n_tensors + 1u, sizeof *e);
  if (!e) abort();
  for (uint32_t i = 0; i < f->n_tensors; i++) {
    e[i].name = f->tensors[i].name;
    e[i].tensor = f->tensors[i].tensor;
  }
  void *bytes = NULL;
  size_t n = 0;
  st = dml_safetensors_write_memory(e, f->n_tensors, f->meta_keys, f->meta_values,
                                    f->n_meta, &bytes, &n);
  if (st) abort(); /* what we read, we must be able to write */
  dml_safetensors_t *g = NULL;
  st = dml_safetensors_parse(bytes, n, &g);
  if (st) abort(); /* and read back */
  if (g->n_tensors != f->n_tensors || g->n_meta != f->n_meta) abort();
  for (uint32_t i = 0; i < f->n_tensors; i++) {
    const dml_tensor_t *a = &f->tensors[i].tensor, *b = &g->tensors[i].tensor;
    size_t nb = (size_t)(f->tensors[i].end - f->tensors[i].begin);
    if (strcmp(f->tensors[i].name, g->tensors[i].name) || a->dtype != b->dtype ||
        a->rank != b->rank ||
        memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank) ||
        (nb && memcmp(a->data, b->data, nb)))
      abort(); /* the round trip changed a tensor */
  }
  for (uint32_t i = 0; i < f->n_meta; i++)
    if (strcmp(f->meta_keys[i], g->meta_keys[i]) ||
        strcmp(f->meta_values[i], g->meta_values[i]))
      abort();
  dml_safetensors_release(g);
  free(bytes);
  free(e);
  dml_safetensors_release(f);
  return 0;
}
