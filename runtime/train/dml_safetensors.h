/*
 * dml_safetensors.h — safetensors files: checkpoints of a training run.
 *
 * Format (https://github.com/huggingface/safetensors, "Format"):
 *
 *   8 bytes   N, the header's length, unsigned little-endian
 *   N bytes   a UTF-8 JSON object:
 *               { "<tensor name>": { "dtype": "F32", "shape": [2, 3],
 *                                    "data_offsets": [BEGIN, END] }, ...,
 *                 "__metadata__": { "<key>": "<value>", ... } }
 *             (optionally padded with trailing spaces)
 *   rest      the byte buffer; tensor t is bytes [BEGIN, END) of it, in
 *             little-endian C order. The tensors cover the buffer exactly,
 *             without holes or overlaps.
 *
 * dtypes: F64 F32 F16 BF16 I64 I32 I16 I8 U64 U32 U16 U8 BOOL (dmlc's
 * dtypes; F8_* and the others of the spec are UNIMPLEMENTED).
 *
 * Why a hand-written parser: the runtime links libc/libm/pthreads only
 * (CONTRIBUTING.md, "Layering"), so no cJSON. A checkpoint is untrusted
 * input, so instead of a general JSON reader this is a strict recursive-
 * free parser of exactly the grammar above: one top-level object whose
 * members are tensor objects (exactly the keys dtype, shape, data_offsets,
 * each once) or one "__metadata__" object of string values; integers are
 * non-negative decimal without sign, fraction, exponent or leading zeros;
 * strings are JSON strings (escapes and \u surrogate pairs decoded, raw
 * bytes valid UTF-8, no control characters). Every read is bounds-checked
 * against the header's length; the header may hold at most
 * DML_ST_MAX_HEADER_BYTES bytes (the reference implementation's limit).
 *
 * Ownership: dml_safetensors_parse() hands the caller a dml_safetensors_t
 * to dml_safetensors_release(); names and metadata strings are owned by it,
 * tensors' `data` lend into the bytes given to parse.
 *
 * Errors (op "safetensors"): DATA_LOSS for every malformed or inconsistent
 * byte, with "at byte offset K" (offset in the file) in the details;
 * UNIMPLEMENTED for a valid dtype dmlc lacks; INVALID_ARGUMENT for bad
 * arguments to the writers; IO / NOT_FOUND for file system failures (path
 * and strerror named); RESOURCE_EXHAUSTED.
 */
#ifndef DML_SAFETENSORS_H_
#define DML_SAFETENSORS_H_

#include <stddef.h>
#include <stdint.h>

#include "dml_status.h"
#include "dml_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest header accepted: 100,000,000 bytes (safetensors' own limit). */
#define DML_ST_MAX_HEADER_BYTES 100000000u

/* One tensor of a parsed file. `data` lends `bytes` bytes of the buffer. */
typedef struct dml_st_tensor {
  const char *name;
  dml_tensor_t tensor; /* dtype, rank, dims and data (lent, maybe unaligned) */
  uint64_t begin, end; /* data_offsets, relative to the byte buffer */
} dml_st_tensor_t;

typedef struct dml_safetensors {
  uint32_t n_tensors;
  dml_st_tensor_t *tensors; /* in the header's order */
  uint32_t n_meta;
  const char **meta_keys;   /* n_meta entries */
  const char **meta_values; /* n_meta entries */
  uint64_t header_bytes;    /* N */
  void *pool_;              /* owns the strings and arrays */
} dml_safetensors_t;

/* Parses `size` bytes of a safetensors file (the strict grammar above) and
 * checks every tensor: dtype known, rank <= DML_MAX_RANK, END - BEGIN ==
 * numel * dtype size, the tensors tiling the buffer exactly, names unique,
 * metadata keys unique. Errors: DATA_LOSS (offset named), UNIMPLEMENTED,
 * RESOURCE_EXHAUSTED. */
dml_status_t dml_safetensors_parse(const void *bytes, size_t size,
                                   dml_safetensors_t **out_file);
void dml_safetensors_release(dml_safetensors_t *f);

/* The tensor named `name`, or NULL. */
const dml_st_tensor_t *dml_safetensors_find(const dml_safetensors_t *f, const char *name);
/* The metadata value of `key`, or NULL. */
const char *dml_safetensors_meta(const dml_safetensors_t *f, const char *key);

/* A tensor to write: `tensor.data` holds dml_tensor_bytes(&tensor) bytes. */
typedef struct dml_st_entry {
  const char *name;
  dml_tensor_t tensor;
} dml_st_entry_t;

/* Serializes `n` tensors (in this order in the buffer) and `n_meta`
 * metadata pairs (NULL keys/values allowed when n_meta is 0) into malloc'd
 * bytes the caller frees. The header is padded with spaces so the buffer
 * starts at a multiple of 8. Errors: INVALID_ARGUMENT (empty or duplicate
 * name, "__metadata__" as a tensor name, bad dtype or shape),
 * RESOURCE_EXHAUSTED. */
dml_status_t dml_safetensors_write_memory(const dml_st_entry_t *entries, size_t n,
                                          const char *const *meta_keys,
                                          const char *const *meta_values, size_t n_meta,
                                          void **out_bytes, size_t *out_size);

/* Writes the same bytes to `path` atomically with dml_file_write_atomic()
 * (base/dml_file.h: temporary file "<path>.tmp.<pid>", fsync, rename, fsync
 * of the folder; only a regular file is replaced, keeping its mode). On any failure the
 * temporary file is removed and an existing `path` is left as it was. Errors: as
 * write_memory; IO naming the path. */
dml_status_t dml_safetensors_write_file(const char *path, const dml_st_entry_t *entries,
                                        size_t n, const char *const *meta_keys,
                                        const char *const *meta_values, size_t n_meta);

/* Reads and parses the file at `path`. On success *out_file is parsed from
 * *out_bytes (malloc'd; free() it after dml_safetensors_release()).
 * A path that is not a regular file is refused (dml_file_open_read()).
 * Errors: NOT_FOUND, IO, as dml_safetensors_parse (annotated with the
 * path). */
dml_status_t dml_safetensors_read_file(const char *path, dml_safetensors_t **out_file,
                                       void **out_bytes);

/* Writes `size` bytes to `path` atomically as dml_safetensors_write_file
 * does (temporary file in the same folder, fsync, rename, fsync of the
 * folder). `op` names the caller in errors. Errors: IO. */
dml_status_t dml_write_file_atomic(const char *op, const char *path, const void *bytes,
                                   size_t size);

#ifdef __cplusplus
}
#endif
#endif /* DML_SAFETENSORS_H_ */
