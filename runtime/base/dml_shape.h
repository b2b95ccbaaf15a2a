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

/* Results of dml_shape_window_extent() and the extent helpers below. */
enum {
  DML_SHAPE_OK = 0,
  DML_SHAPE_OVERFLOW = 1,         /* the extent (or a product) overflows int64 */
  DML_SHAPE_KERNEL_TOO_LARGE = 2, /* the kernel extent exceeds the padded input */
  DML_SHAPE_NEGATIVE = 3,         /* the extent would be negative */
  DML_SHAPE_BAD_VALUE = 4         /* an operand the op's rule refuses (see each) */
};

/* The directions of RNN, GRU and LSTM (ONNX RNN-14, GRU-14, LSTM-14
 * `direction`): 1 for "forward" and "reverse", 2 for "bidirectional", 0
 * for any other string or NULL (the caller's INVALID_ARGUMENT). Their
 * outputs' dims follow from it: Y [seq, dirs, batch, hidden], Y_h and Y_c
 * [dirs, batch, hidden] (layout 1: [batch, seq, dirs, hidden] and [batch,
 * dirs, hidden]). */
int dml_shape_rnn_directions(const char *direction);

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

/* The begin pad of one spatial dim under auto_pad SAME_UPPER (`upper` 1)
 * or SAME_LOWER (0) (ONNX Conv-11, the pools): the output is ceil(in /
 * stride), the total pad max(0, (out - 1) * stride + ek - in) is split
 * with the odd one at the end for SAME_UPPER, at the beginning for
 * SAME_LOWER; the end pad is the total minus the returned begin pad
 * (*out_total, may be NULL). in >= 0, ek >= 1, stride >= 1. */
int64_t dml_shape_same_pad_begin(int64_t in, int64_t ek, int64_t stride, int upper,
                                 int64_t *out_total);

/* The pads of the ConvTranspose that is Conv's input gradient (the VJP of
 * Conv(X, W) -> Y along one spatial dim: X of extent `in`, Y of `out`,
 * kernel extent ek = (kernel - 1) * dilation + 1, stride s >= 1, the
 * forward's begin pad pb): ConvTranspose(dY, W) with begin pad pb, end pad
 * *pe = max(0, s * (out - 1) + ek - pb - in) and output_padding *op = in +
 * pb + *pe - (s * (out - 1) + ek) (in [0, s): the input rows no window
 * reached) gives `in` exactly. Used by autodiff for static extents and by
 * the CPU's ConvInputGrad at run time (symbolic ones). */
void dml_shape_conv_input_grad_pads(int64_t in, int64_t out, int64_t ek, int64_t s,
                                    int64_t pb, int64_t *pe, int64_t *op);

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

/* ONNX Pad-18 on one axis: in + pb + pe (negative pads remove elements),
 * exactly (no intermediate overflow). DML_SHAPE_OK and *out, else
 * DML_SHAPE_NEGATIVE (the sum is below 0) or DML_SHAPE_OVERFLOW (above
 * INT64_MAX); *out untouched then. */
int dml_shape_pad_extent(int64_t in, int64_t pb, int64_t pe, int64_t *out);

/* ONNX Tile-13 on one axis: in * repeats (in >= 0). DML_SHAPE_OK and
 * *out, DML_SHAPE_BAD_VALUE for repeats < 0, DML_SHAPE_OVERFLOW. */
int dml_shape_tile_extent(int64_t in, int64_t repeats, int64_t *out);

/* ONNX multidirectional broadcasting of one dim pair (Expand-13, the
 * elementwise ops): equal extents, or one of them 1 (then the other; 1
 * with 0 gives 0). DML_SHAPE_OK and *out, else DML_SHAPE_BAD_VALUE. */
int dml_shape_broadcast_extent(int64_t a, int64_t b, int64_t *out);

/* ONNX Reshape-14's reading of entry `v` at index `i` of the target shape,
 * for an input of rank `in_rank`: */
enum {
  DML_SHAPE_RESHAPE_DIM = 0,      /* v >= 0 is the dim (0 with allowzero) */
  DML_SHAPE_RESHAPE_COPY = 1,     /* 0 without allowzero: the input's dim i */
  DML_SHAPE_RESHAPE_INFER = 2,    /* -1: inferred from the element count */
  DML_SHAPE_RESHAPE_NEGATIVE = 3, /* below -1: invalid */
  DML_SHAPE_RESHAPE_NO_DIM = 4    /* 0 copying dim i >= in_rank: invalid */
};
int dml_shape_reshape_entry(int64_t v, int32_t i, int32_t in_rank, int allowzero);

/* Results of dml_shape_reshape() besides DML_SHAPE_OK and
 * DML_SHAPE_OVERFLOW (the product of the known dims overflows). */
enum {
  DML_SHAPE_RESHAPE_TWO_INFER = 10,   /* more than one -1 */
  DML_SHAPE_RESHAPE_BAD_ENTRY = 11,   /* an entry dml_shape_reshape_entry refuses */
  DML_SHAPE_RESHAPE_INFER_ZERO = 12,  /* -1 with another dim 0 (ambiguous) */
  DML_SHAPE_RESHAPE_INDIVISIBLE = 13, /* -1: the known dims do not divide numel */
  DML_SHAPE_RESHAPE_MISMATCH = 14     /* no -1: the product is not numel */
};

/* ONNX Reshape-14 over static extents: in[0..in_rank) reshaped by target
 * shape[0..n) (n <= 64) with attribute allowzero. out[0..n) gets the
 * dims: each entry as dml_shape_reshape_entry reads it, the -1 entry the
 * input's element count divided by the product of the others. Returns
 * DML_SHAPE_OK, DML_SHAPE_OVERFLOW or a DML_SHAPE_RESHAPE_* code, with
 * *bad (may be NULL) the index of the offending entry (-1 when none). */
int dml_shape_reshape(const int64_t *in, int32_t in_rank, const int64_t *shape, int32_t n,
                      int allowzero, int64_t *out, int32_t *bad);

/* ONNX Resize-19's output extent from scale `scale` along an axis of
 * extent `in`: floor(in * scale), in double as onnxruntime and ONNX's
 * reference compute it. DML_SHAPE_OK and *out, DML_SHAPE_BAD_VALUE when
 * scale is not positive and finite, DML_SHAPE_OVERFLOW when the result is
 * 9e18 or more. */
int dml_shape_resize_scaled(int64_t in, double scale, int64_t *out);

/* Resize-18+ with sizes and keep_aspect_ratio_policy not_larger
 * (`not_smaller` 0) or not_smaller (1): the one scale over the resized
 * axes, min (not_larger) or max (not_smaller) of sizes[i] / in[i] (an
 * axis of extent 0 counts as scale 0). */
double dml_shape_resize_aspect_scale(const int64_t *in, const int64_t *sizes, int32_t n,
                                     int not_smaller);

/* The extent of an axis of extent `in` under that scale: round half up,
 * floor(scale * in + 0.5), as ONNX's operator text ("round") and reference
 * implementation ((scale * in + 0.5).astype(int64)) compute it. */
int64_t dml_shape_resize_aspect_extent(int64_t in, double scale);

#ifdef __cplusplus
}
#endif

#endif /* DML_SHAPE_H_ */
