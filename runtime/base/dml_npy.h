/*
 * dml_npy.h — NumPy .npy files: tensors in and out of dmlc.
 *
 * Format: https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
 * Versions 1.0, 2.0 and 3.0 are read; 1.0 is written (2.0 when the header
 * would exceed 65535 bytes). Only C-order arrays of the dtypes of
 * dml_dtype_npy_descr() are supported (little-endian, or '|' for one-byte
 * types); bf16 has no NumPy dtype. String tensors are NumPy's unicode dtype
 * '<U<n>' (what numpy.save writes for str arrays: UTF-32LE, n code points
 * per element, NUL-padded): read into UTF-8 (the buffer holds the dml_str_t
 * descriptors and then their bytes; trailing NULs are padding), written
 * with n the longest element (elements must be valid UTF-8 not ending in
 * NUL: INVALID_ARGUMENT otherwise). Object arrays (pickles) are refused.
 *
 * Ownership: readers hand the caller `*out_buffer` (malloc'd, 64-byte
 * aligned, release with free()); `out->data` points into it. Writers
 * allocate nothing the caller keeps except dml_npy_write_memory()'s bytes.
 *
 * Errors (op "npy"): files are untrusted input. DATA_LOSS for malformed or
 * truncated bytes and headers that disagree with the file size;
 * UNIMPLEMENTED for valid NumPy files dmlc cannot use (Fortran order,
 * big-endian, object or structured dtypes, rank > DML_MAX_RANK);
 * NOT_FOUND / IO for file system failures (the path named);
 * RESOURCE_EXHAUSTED when an allocation fails.
 */
#ifndef DML_NPY_H_
#define DML_NPY_H_

#include <stddef.h>

#include "dml_status.h"
#include "dml_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest header accepted (NumPy's own default limit is 10000 bytes). */
#define DML_NPY_MAX_HEADER_BYTES 65536u

/* Parses a whole .npy file held in memory. On success `*out` describes the
 * array (data in `*out_buffer`, a copy; bool elements normalized to 0/1). */
dml_status_t dml_npy_read_memory(const void *bytes, size_t size, dml_tensor_t *out,
                                 void **out_buffer);

/* Reads `path` (header first, then the data straight into the buffer); a
 * path that is not a regular file is refused (dml_file_open_read()). */
dml_status_t dml_npy_read_file(const char *path, dml_tensor_t *out, void **out_buffer);

/* Serializes `t` (rank <= DML_MAX_RANK, data of dml_tensor_bytes(t) bytes)
 * into malloc'd bytes the caller frees. Errors: UNIMPLEMENTED for bf16 or
 * invalid dtypes, INVALID_ARGUMENT for a bad shape. */
dml_status_t dml_npy_write_memory(const dml_tensor_t *t, void **out_bytes,
                                  size_t *out_size);

/* Writes `t` to `path` atomically with dml_file_write_atomic() (temp file,
 * fsync, rename; only a regular file is replaced, keeping its mode): an
 * interrupted write never leaves a partial file at `path`. */
dml_status_t dml_npy_write_file(const char *path, const dml_tensor_t *t);

#ifdef __cplusplus
}
#endif
#endif /* DML_NPY_H_ */
