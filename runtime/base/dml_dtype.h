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
  /* ONNX's float8 types (one byte each; docs/tensor.md "float8"): sign,
   * exponent and mantissa bits as their names say. FN: finite only (no
   * infinity; NaN is S.1111.111). FNUZ: finite, no -0, one NaN (0x80),
   * exponent bias one more than IEEE's. E5M2 is IEEE-like (infinities,
   * NaNs). E8M0: unsigned powers of two 2^(e-127), 0xFF NaN, no zero.
   * They are not dml_dtype_is_float: only Cast, CastLike, the Q/DQ ops and
   * data movement read them; other ops refuse them. */
  DML_DTYPE_F8E4M3FN = 15,   /* ONNX FLOAT8E4M3FN (17) */
  DML_DTYPE_F8E4M3FNUZ = 16, /* ONNX FLOAT8E4M3FNUZ (18) */
  DML_DTYPE_F8E5M2 = 17,     /* ONNX FLOAT8E5M2 (19) */
  DML_DTYPE_F8E5M2FNUZ = 18, /* ONNX FLOAT8E5M2FNUZ (20) */
  DML_DTYPE_F8E8M0 = 19,     /* ONNX FLOAT8E8M0 (24) */
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
 * 16, FLOAT8E4M3FN = 17 ... FLOAT8E8M0 = 24; onnx.proto), as Cast's `to`
 * attribute holds it; 0 for INVALID. */
int dml_dtype_onnx_code(dml_dtype_t dt);
/* The dtype of ONNX TensorProto.DataType `code` (the inverse of
 * dml_dtype_onnx_code); DML_DTYPE_INVALID for a code dmlc lacks (0,
 * COMPLEX64, INT4, ...). */
dml_dtype_t dml_dtype_from_onnx_code(int64_t code);

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
/* 1 for the five float8 dtypes (DML_DTYPE_F8E4M3FN ... DML_DTYPE_F8E8M0). */
int dml_dtype_is_float8(dml_dtype_t dt);

/* NumPy dtype descr ("<f4", "|u1", "|b1", ...); NULL if no equivalent
 * (bf16, the float8 dtypes: .npy files hold those as their bit patterns,
 * "<u2" / "|u1", as ONNX's test data and ml_dtypes' views do). */
const char *dml_dtype_npy_descr(dml_dtype_t dt);
dml_dtype_t dml_dtype_from_npy_descr(const char *descr, size_t len);

/* IEEE 754 binary16 and bfloat16 conversions (round to nearest even). */
float dml_f16_to_f32(uint16_t h);
uint16_t dml_f32_to_f16(float f);
float dml_bf16_to_f32(uint16_t b);
uint16_t dml_f32_to_bf16(float f);

/* float8 conversions (ONNX Cast-19/24/25 and onnx.reference's op_cast.py:
 * the four float8 types as ml_dtypes converts them, FLOAT8E8M0 as
 * onnx.numpy_helper.to_float8e8m0). One definition: every layer that
 * converts float8 calls these.
 *
 * dml_f8_to_f64: the exact value of bit pattern `b` of float8 dtype `dt`
 * (NaN for a NaN pattern, with its sign bit; FNUZ's 0x80 a negative NaN,
 * as ml_dtypes gives; ±inf for E5M2's infinities). Every value is also exact in float
 * (f32); in f16 all but E8M0's beyond f16's range. 0 for a dtype that is not float8.
 *
 * dml_f8_from_f64: the bit pattern nearest `v` (round to nearest, ties to
 * even), for E4M3FN/E4M3FNUZ/E5M2/E5M2FNUZ:
 *   saturate != 0: |v| above the largest finite value (inf included) gives
 *     ±that value (448, 240, 57344, 57344); NaN gives NaN.
 *   saturate == 0: a value that rounds beyond the largest finite gives
 *     E4M3FN: ±NaN (S.1111.111), E5M2: ±inf (S.11111.00), FNUZ: NaN
 *     (0x80); ±inf likewise.
 *   NaN: E4M3FN S.1111.111, E5M2 S.11111.10, FNUZ 0x80; FNUZ has no -0
 *   (negative values that round to zero give 0x00).
 * For E8M0 `v` is first rounded to f32 (as the reference does) and its
 * exponent field kept: zero and f32 subnormals give exponent 0 (2^-127,
 * unless rounded up), the sign is dropped, NaN and ±inf give 0xFF, and the
 * fraction rounds by `round` (DML_F8_ROUND_UP: any nonzero fraction adds
 * one; DOWN: none; NEAREST: guard bit and (round or sticky or exponent >
 * 0), to_float8e8m0's rule); with saturate, 0xFE never rounds up to 0xFF
 * (NaN). `round` is ignored for the other types. dt not float8: 0. */
typedef enum dml_f8_round {
  DML_F8_ROUND_UP = 0, /* ONNX Cast-24 round_mode "up" (the default) */
  DML_F8_ROUND_DOWN = 1,
  DML_F8_ROUND_NEAREST = 2,
} dml_f8_round_t;
double dml_f8_to_f64(dml_dtype_t dt, uint8_t b);
uint8_t dml_f8_from_f64(dml_dtype_t dt, double v, int saturate, dml_f8_round_t round);
/* The largest finite value of float8 dtype `dt` (448, 240, 57344, 57344,
 * 2^127); 0 for other dtypes. */
double dml_f8_max(dml_dtype_t dt);

/* Reads element `i` of `data` (of type dt) as double / int64, and writes
 * a double / int64 into element `i` with C conversion semantics (floats to
 * ints truncate toward zero; bool stores v != 0). float8 elements convert
 * by dml_f8_to_f64 and dml_f8_from_f64 with ONNX's defaults (saturate=1,
 * round_mode "up"). */
double dml_load_f64(dml_dtype_t dt, const void *data, size_t i);
int64_t dml_load_i64(dml_dtype_t dt, const void *data, size_t i);
void dml_store_f64(dml_dtype_t dt, void *data, size_t i, double v);
void dml_store_i64(dml_dtype_t dt, void *data, size_t i, int64_t v);

#ifdef __cplusplus
}
#endif
#endif /* DML_DTYPE_H_ */
