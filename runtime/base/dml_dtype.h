/*
 * dml_dtype.h — element types of tensors, and IEEE half/bfloat16 helpers.
 */
#ifndef DML_DTYPE_H_
#define DML_DTYPE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types. Values are stable: they are stored in .dmlpkg files. */
typedef enum dml_dtype {
  DML_DTYPE_INVALID = 0,
  DML_DTYPE_F32 = 1,
  DML_DTYPE_F16 = 2,
  DML_DTYPE_BF16 = 3,
  DML_DTYPE_F64 = 4,
  DML_DTYPE_I8 = 5,
  DML_DTYPE_U8 = 6,
  DML_DTYPE_I16 = 7,
  DML_DTYPE_U16 = 8,
  DML_DTYPE_I32 = 9,
  DML_DTYPE_U32 = 10,
  DML_DTYPE_I64 = 11,
  DML_DTYPE_U64 = 12,
  DML_DTYPE_BOOL = 13, /* one byte per element, 0 or 1 */
  /* One dml_str_t (16 bytes) per element: a lent byte string (below). CPU
   * only; ONNX's STRING (8). */
  DML_DTYPE_STRING = 14,
  DML_DTYPE_COUNT_
} dml_dtype_t;

/* One element of a DML_DTYPE_STRING tensor: `len` bytes at `data`, lent
 * (not NUL-terminated; NUL bytes inside are allowed). ONNX strings are
 * UTF-8 by convention; dmlc passes the bytes through unchanged and never
 * validates them (invalid UTF-8 is carried as it is; docs/package-format.md
 * "String tensors"). A tensor's elements are copied by copying these
 * descriptors: the bytes they point at are immutable while the tensor is
 * used. `data` may be NULL when len is 0. */
typedef struct dml_str {
  const char *data;
  uint64_t len;
} dml_str_t;

/* The ONNX TensorProto.DataType code of `dt` (FLOAT = 1, ..., BFLOAT16 =
 * 16; onnx.proto), as Cast's `to` attribute holds it; 0 for INVALID. */
int dml_dtype_onnx_code(dml_dtype_t dt);

/* Size of one element in bytes; 0 for DML_DTYPE_INVALID or out of range. */
size_t dml_dtype_size(dml_dtype_t dt);
/* Short name as printed in IR and CLI output: "f32", "i64", "bool", ...;
 * "invalid" for anything else. */
const char *dml_dtype_name(dml_dtype_t dt);
/* Parses a short name; returns DML_DTYPE_INVALID when unknown. `len` is the
 * number of characters of `name` to consider. */
dml_dtype_t dml_dtype_from_name(const char *name, size_t len);
int dml_dtype_is_float(dml_dtype_t dt);
int dml_dtype_is_int(dml_dtype_t dt); /* signed or unsigned, not bool */
int dml_dtype_is_signed_int(dml_dtype_t dt);
/* 1 for DML_DTYPE_STRING (whose elements are dml_str_t descriptors). */
int dml_dtype_is_string(dml_dtype_t dt);

/* NumPy dtype descr ("<f4", "|u1", "|b1", ...); NULL if no equivalent. */
const char *dml_dtype_npy_descr(dml_dtype_t dt);
dml_dtype_t dml_dtype_from_npy_descr(const char *descr, size_t len);

/* IEEE 754 binary16 and bfloat16 conversions (round to nearest even). */
float dml_f16_to_f32(uint16_t h);
uint16_t dml_f32_to_f16(float f);
float dml_bf16_to_f32(uint16_t b);
uint16_t dml_f32_to_bf16(float f);

/* Reads element `i` of `data` (of type dt) as double / int64, and writes
 * a double / int64 into element `i` with C conversion semantics (floats to
 * ints truncate toward zero; bool stores v != 0). */
double dml_load_f64(dml_dtype_t dt, const void *data, size_t i);
int64_t dml_load_i64(dml_dtype_t dt, const void *data, size_t i);
void dml_store_f64(dml_dtype_t dt, void *data, size_t i, double v);
void dml_store_i64(dml_dtype_t dt, void *data, size_t i, int64_t v);

#ifdef __cplusplus
}
#endif
#endif /* DML_DTYPE_H_ */
