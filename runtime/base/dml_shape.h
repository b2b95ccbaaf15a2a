/*
 * dml_shape.h — shape formulas over plain int64 extents, written once and
 * used by shape inference (ir/infer.c, for static dims) and by the CPU
 * runtime's eager and value-dependent rules (runtime/cpu/cpu_outdims.c),
 * so the compiled and the eager paths cannot drift apart.
 */
#ifndef DML_SHAPE_H_
#define DML_SHAPE_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* auto_pad of the windowed ops (Conv, ConvTranspose's input side, the
 * pools). */
typedef enum dml_shape_pad {
  DML_SHAPE_PAD_EXPLICIT = 0, /* NOTSET: the pads attribute */
  DML_SHAPE_PAD_VALID,        /* no padding */
  DML_SHAPE_PAD_SAME,         /* SAME_UPPER, SAME_LOWER */
} dml_shape_pad_t;

/* Results of dml_shape_window_extent(). */
enum {
  DML_SHAPE_OK = 0,
  DML_SHAPE_OVERFLOW = 1,        /* in + pads overflows int64 */
  DML_SHAPE_KERNEL_TOO_LARGE = 2 /* the kernel extent exceeds the padded input */
};

/* Output extent of one spatial dim of Conv, MaxPool, AveragePool, LpPool
 * (ONNX Conv-11, MaxPool-12, AveragePool-19 output-shape formulas):
 *   SAME:          ceil(in / stride)
 *   else:          floor((in + pb + pe - ek) / stride) + 1
 * with pb = pe = 0 for VALID, ek = (kernel - 1) * dilation + 1 the kernel's
 * extent (the caller's, >= 1), stride >= 1, in >= 0. With `ceil_mode`
 * (not VALID) ceil replaces floor, and a last window that would start in
 * the end padding is dropped, as ONNX's reference and PyTorch do (in 4,
 * kernel 2, stride 2, end pad 1: 2, not 3). Returns DML_SHAPE_OK and sets
 * *out, else DML_SHAPE_OVERFLOW or DML_SHAPE_KERNEL_TOO_LARGE (*out
 * untouched). */
int dml_shape_window_extent(int64_t in, int64_t ek, int64_t stride, int64_t pb,
                            int64_t pe, dml_shape_pad_t pad, int ceil_mode, int64_t *out);

/* ONNX Slice-13 on one axis of extent `dim` (>= 0): negative `start` and
 * `end` count from the end (+ dim); then for step > 0 both are clamped to
 * [0, dim], for step < 0 start to [0, dim - 1] and end to [-1, dim - 1]
 * (the operator text's clamping, which onnxruntime follows: x[-4::-1] of 3
 * elements is [x0]; numpy and onnx.reference give []). Any int64 start and
 * end (INT64_MIN/MAX included) and step != 0 (INT64_MIN included). Returns
 * the number of elements; *first gets the first index read. */
int64_t dml_shape_slice(int64_t dim, int64_t start, int64_t end, int64_t step,
                        int64_t *first);

/* ONNX Range-11's element count, max(ceil((limit - start) / delta), 0):
 * for integers exactly (128-bit), for floats in double. Returns 0 and sets
 * *n, or -1 (*n untouched) when delta is 0, an operand is not finite or
 * the count exceeds INT64_MAX (floats: 9e18). */
int dml_shape_range_count_i64(int64_t start, int64_t limit, int64_t delta, int64_t *n);
int dml_shape_range_count_f64(double start, double limit, double delta, int64_t *n);

#ifdef __cplusplus
}
#endif

#endif /* DML_SHAPE_H_ */
