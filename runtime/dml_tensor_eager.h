/*
 * dml_tensor_eager.h — the runtime-internal interface between the eager
 * tensor API (dml_tensor.c) and the eager ops composed of the device's
 * kernel library (dml_tensor_compose.c, docs/tensor.md "Composed ops").
 * Not installed.
 */
#ifndef DML_TENSOR_EAGER_H_
#define DML_TENSOR_EAGER_H_

#include "dml_ops.h"
#include "dml_tensor.h"

/* The output dtypes and dims of op `id` on the tensors h[0 .. n-1] of
 * device dev (a zero handle: an absent optional input) by the op's shape
 * rule (dml_cpu_eager_outputs), n_out outputs (Split: its parts) in y[];
 * the inputs whose values the rule reads (Reshape's shape, Tile's repeats,
 * ...) are read back to the host. Errors name op `id` and the device
 * ("shape mismatch (on vulkan:0 ...)"). */
dml_status_t dml_rt_eager_rule(dml_rt_device_t *dev, dml_op_t id,
                               const dml_rt_tensor_t *h, uint32_t n,
                               const dml_attr_t *attrs, uint32_t n_attrs, dml_tensor_t *y,
                               uint32_t n_out);

/* Error s of a step of op `id` run as other ops, restated as op `id`'s
 * (reason and details kept); DML_OK passes. */
dml_status_t dml_rt_eager_as_op(dml_status_t s, dml_op_t id);

/* Checks on the device that every value of index tensor `ind` (i64, on
 * device dev) is in [-n, n): ReduceMin and ReduceMax, two values read
 * back. OUT_OF_RANGE (op `opn`) naming the first bound crossed
 * otherwise, as the CPU's Gather and GatherElements refuse it. */
dml_status_t dml_rt_eager_index_range(dml_rt_device_t *dev, const char *opn,
                                      dml_rt_tensor_t ind, int64_t n);

/* The operands of the library's normalization kernel (dml_eager_lib.h
 * DML_EAGER_NORM) beyond x: rows of `len` contiguous elements, row r's
 * channel r % channels; scale and B (B: DML_RT_TENSOR_NONE when absent) f32
 * tensors on x's device read at their element offsets plus c * *_cs + j *
 * *_js (element j of the row, channel c); `given` 1: BatchNormalization's
 * mean and var at scale's offset plus m_off + c and v_off + c (one storage
 * with scale); eps the epsilon (rounded to f32). */
typedef struct dml_rt_eager_norm {
  int given;
  int64_t rows, len, channels;
  dml_rt_tensor_t scale, bias;
  int64_t s_cs, s_js, b_cs, b_js, m_off, v_off;
  double eps;
} dml_rt_eager_norm_t;

/* Runs the library's normalization kernel for x's dtype on x (contiguous
 * on a GPU device; f32, f16 or bf16) and nm into a new tensor *out of x's
 * dtype and dims (one dispatch), and sets *done; leaves *done 0 and returns
 * DML_OK when the library has no such kernel (the caller composes the op
 * instead). Errors: UNIMPLEMENTED for elements at or beyond 2^32 (the
 * kernels' indices), x not contiguous; the device's (op `id`). */
dml_status_t dml_rt_eager_norm(dml_rt_device_t *dev, dml_op_t id, dml_rt_tensor_t x,
                               const dml_rt_eager_norm_t *nm, dml_rt_tensor_t *out,
                               int *done);

/* Runs op `id` on tensors of a GPU device (dev, with an eager kernel
 * library) as a composition of the library's kernels and views when the
 * op is one of the composed ops (docs/tensor.md "Composed ops": the
 * normalizations, the pools, Pad, Tile, Split, Reshape, Squeeze,
 * Unsqueeze, Flatten, GatherElements, ScatterND, ConvTranspose, RNN, GRU,
 * LSTM, LayerNormalization's Mean and InvStdDev, the 3-D Conv as a sum of
 * 2-D ones; MatMul, Gemm and Conv of f16 and bf16 through f32) and sets
 * *done; leaves *done 0 and returns DML_OK otherwise
 * (the caller's other paths then run or refuse it). Outputs as dml_rt_tensor_op's; errors
 * name op `id` and the device. */
dml_status_t dml_rt_eager_composed(dml_rt_device_t *dev, dml_op_t id,
                                   const dml_rt_tensor_t *in, uint32_t n_in,
                                   const dml_attr_t *attrs, uint32_t n_attrs,
                                   dml_rt_tensor_t *out, uint32_t n_out, int *done);

/* GatherND (ONNX GatherND-13, `batch_dims`) on tensors of any device
 * (the CPU's too: the op has no eager shape rule of the CPU's), composed:
 * the indices (i64 or i32) read back to the host, each tuple's row of data
 * viewed as [rows, slice] found there (an index outside [-d, d) is
 * OUT_OF_RANGE naming it and its position, as the CPU's kernel), those rows
 * gathered (the Gather kernel; on the CPU its Gather) into indices[:-1] +
 * data[b+m:]. Errors name GatherND and the device. */
dml_status_t dml_rt_eager_gather_nd(dml_rt_device_t *dev, const dml_rt_tensor_t *in,
                                    uint32_t n, const dml_attr_t *attrs, uint32_t na,
                                    dml_rt_tensor_t *out, uint32_t n_out);

/* MaxPool's Indices (i64, dims `ydims` [N, C, spatial...]) of x (a float
 * or an integer dtype but bool, contiguous on a GPU device, rank 3 to 5)
 * by the library's index kernel (dml_eager_lib.h DML_EAGER_POOLIDX) with
 * the window k, strides s, dilations d and begin pads pb of its 1 to 3
 * spatial dims,
 * storage_order `order`; sets *done (0: the library has no such kernel,
 * nothing made). Errors: the device's, element counts at or beyond 2^32. */
dml_status_t dml_rt_eager_pool_indices(dml_rt_device_t *dev, dml_rt_tensor_t x,
                                       const int64_t *ydims, const int64_t *k,
                                       const int64_t *s, const int64_t *d,
                                       const int64_t *pb, int order, dml_rt_tensor_t *out,
                                       int *done);

/* Einsum (ONNX Einsum-12: explicit and implicit output, ellipsis) on
 * tensors of any device, composed of ReduceSum, MatMul and the tensor API's
 * views (docs/tensor.md "Composed ops"); the equation parsed once by
 * dml_einsum_parse. Repeated subscripts within one operand (diagonals) are
 * UNIMPLEMENTED; errors name Einsum and the device. */
dml_status_t dml_rt_eager_einsum(dml_rt_device_t *dev, const dml_rt_tensor_t *in,
                                 uint32_t n, const dml_attr_t *attrs, uint32_t na,
                                 dml_rt_tensor_t *out, uint32_t n_out);

/* ConvTranspose's output (X's dtype, dims [N, M, ...]) from its inputs'
 * shapes and attributes (explicit pads, VALID, SAME_UPPER / SAME_LOWER,
 * output_shape, output_padding, strides, dilations, group): the eager shape
 * rule of the CPU's ConvTranspose kernel (which checks them again) and of
 * the GPUs' composition. INVALID_ARGUMENT naming ConvTranspose and the
 * device for shapes that do not fit. */
dml_status_t dml_rt_eager_conv_transpose_dims(dml_rt_device_t *dev,
                                              const dml_rt_tensor_t *in, uint32_t n,
                                              const dml_attr_t *attrs, uint32_t na,
                                              dml_tensor_t *y);

#endif /* DML_TENSOR_EAGER_H_ */
