/*
 * dml_tensor.h — eager tensors: create tensors on a device, run single ops
 * on them, copy them back, free them (docs/tensor.md).
 *
 *   dml_rt_device_t *cpu;  dml_rt_tensor_t a, y;
 *   dml_rt_device_open("cpu", &cpu);
 *   int64_t dims[2] = {3, 3};
 *   dml_rt_tensor_full(cpu, DML_DTYPE_F32, 2, dims, 1.0, &a);
 *   dml_rt_tensor_t in[2] = {a, a};
 *   dml_rt_tensor_op("Add", in, 2, NULL, 0, &y, 1);     // y = a + a
 *   dml_rt_tensor_to_host(y, &host);                     // host.data: 9 floats
 *   dml_rt_tensor_free(a); dml_rt_tensor_free(y); dml_rt_device_close(cpu);
 *
 * Names: dml_tensor_t (dml_types.h) is the lent host descriptor the CPU
 * kernels take; dml_rt_tensor_t is the handle of a tensor this API owns.
 *
 * Devices: "cpu" (host memory), "vulkan" / "vulkan:N" (device-local
 * memory of a VkDevice opened for the tensors; the naming of
 * dml_rt_session_create), "cuda" / "cuda:N" (cuMemAlloc'd memory in the
 * device's primary context; libcuda.so.1 opened at run time). Eager ops run
 * on CPU tensors (every op below) and on Vulkan tensors (the f32
 * elementwise ops of the eager kernel library, dml_eager_lib.h); none on
 * CUDA tensors yet. dml_rt_device_bytes() reports the bytes
 * the device's live tensors hold (views share their base's bytes).
 *
 * Handles: a dml_rt_tensor_t is a value (copy it freely) naming a slot and
 * the slot's generation. A freed handle stays detectably stale: every call
 * given one returns FAILED_PRECONDITION "use after free" (never touches
 * freed memory). The zero handle (DML_RT_TENSOR_NONE) is an absent
 * optional input.
 *
 * Ownership: every call creating a tensor hands one reference to the
 * caller. dml_rt_tensor_retain() adds one, dml_rt_tensor_release() drops
 * one; at zero the handle dies. dml_rt_tensor_free() kills the handle at
 * once whatever its count. A handle's storage (the bytes on its device)
 * is returned to the device as soon as no live handle uses it: views
 * (reshape, slice, transpose, expand) share their base's storage and keep
 * it alive. dml_rt_device_close() frees the tensors still alive on it.
 *
 * Strides are in elements and may be 0 (expand) or any positive value
 * (slice with steps, transpose); a tensor is contiguous when its strides
 * are the C-order strides of its dims. Ops read non-contiguous inputs
 * through a contiguous copy and write contiguous outputs.
 *
 * Threads: the slot table is guarded by a lock; a device and its tensors
 * are used by one thread at a time (as a session).
 *
 * Errors are dml_status_t: op "tensor.<call>" for this API's own checks,
 * the ONNX op's name for an op's shape rule ("MatMul: shape mismatch, lhs
 * [3,4], rhs [5,6]"), "rt.cpu.<Op>" from a kernel, "rt.vulkan" from the
 * device.
 */
#ifndef DML_TENSOR_H_
#define DML_TENSOR_H_

#include <stddef.h>
#include <stdint.h>

#include "dml_dtype.h"
#include "dml_rt.h"
#include "dml_status.h"
#include "dml_types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dml_rt_device dml_rt_device_t;

/* A tensor handle: slot index (low 32 bits, + 1) and generation (high 32
 * bits); 0 is no tensor. */
typedef struct dml_rt_tensor {
  uint64_t id;
} dml_rt_tensor_t;

#define DML_RT_TENSOR_NONE ((dml_rt_tensor_t){0})

/* ---- devices ---- */

/* Opens `name`: "cpu" or NULL, "vulkan", "vulkan:N", "cuda", "cuda:N".
 * Errors: INVALID_ARGUMENT for a bad "kind:N"; UNIMPLEMENTED for an
 * unknown kind and for Vulkan in a build without its headers; NOT_FOUND
 * from the backends (no Vulkan loader or device, "no CUDA driver found",
 * "no CUDA device found", no such index). */
dml_status_t dml_rt_device_open(const char *name, dml_rt_device_t **out);

/* Frees every tensor still alive on `d` (their handles become stale) and
 * closes the device. NULL is a no-op. */
void dml_rt_device_close(dml_rt_device_t *d);

/* "cpu", or the Vulkan device's description ("vulkan:0 (llvmpipe ...)");
 * lent by the device. */
const char *dml_rt_device_name(const dml_rt_device_t *d);

/* Bytes of device memory the device's live tensors hold now (each storage
 * counted once, at its allocated size) and their number of storages. */
uint64_t dml_rt_device_bytes(const dml_rt_device_t *d);
uint64_t dml_rt_device_num_storages(const dml_rt_device_t *d);

/* Bytes and copies the tensor layer moved for device d since it opened
 * (dml_rt_transfer_stats_t, dml_rt.h): host -> device (from_host, the
 * creation calls that fill on the host, a session output copied through
 * the host), device -> host (to_host, a dense host copy of a tensor for a
 * session input or an op's host-read input), device -> device (to_device
 * on the same device, a session input's dense copy on the device, a
 * session output copied on the device). Eager ops' kernels and the
 * sessions' own transfers (dml_rt_session_transfer_stats) are not counted
 * here. Zeros on the CPU and for d NULL. */
void dml_rt_device_transfer_stats(const dml_rt_device_t *d, dml_rt_transfer_stats_t *out);

/* ---- creation (each hands one reference to the caller) ---- */

/* Uninitialised contents. dims: `rank` (0..DML_MAX_RANK) extents >= 0.
 * Errors: INVALID_ARGUMENT (dtype, rank, negative dim), RESOURCE_EXHAUSTED
 * (size overflow, memory). */
dml_status_t dml_rt_tensor_empty(dml_rt_device_t *d, dml_dtype_t dtype, int32_t rank,
                                 const int64_t *dims, dml_rt_tensor_t *out);
dml_status_t dml_rt_tensor_zeros(dml_rt_device_t *d, dml_dtype_t dtype, int32_t rank,
                                 const int64_t *dims, dml_rt_tensor_t *out);
dml_status_t dml_rt_tensor_ones(dml_rt_device_t *d, dml_dtype_t dtype, int32_t rank,
                                const int64_t *dims, dml_rt_tensor_t *out);
/* Every element `value`, converted as dml_store_f64 does (C conversion;
 * f16/bf16 round to nearest even; bool: value != 0). */
dml_status_t dml_rt_tensor_full(dml_rt_device_t *d, dml_dtype_t dtype, int32_t rank,
                                const int64_t *dims, double value, dml_rt_tensor_t *out);
/* 1-D [n]: start + i * step (ONNX Range's kernel, so n = max(0,
 * ceil((limit - start) / step))). Errors: INVALID_ARGUMENT for step 0 or
 * a dtype Range lacks. */
dml_status_t dml_rt_tensor_arange(dml_rt_device_t *d, dml_dtype_t dtype, double start,
                                  double limit, double step, dml_rt_tensor_t *out);
/* Random f16/bf16/f32/f64 from the Philox stream of `seed` (dml_philox.h;
 * the RandomUniform / RandomNormal kernels, ONNX's semantics): uniform in
 * [low, high), normal with `mean` and `scale` (standard deviation). The
 * same seed gives the same values on every device. */
dml_status_t dml_rt_tensor_random_uniform(dml_rt_device_t *d, dml_dtype_t dtype,
                                          int32_t rank, const int64_t *dims, double low,
                                          double high, uint64_t seed,
                                          dml_rt_tensor_t *out);
dml_status_t dml_rt_tensor_random_normal(dml_rt_device_t *d, dml_dtype_t dtype,
                                         int32_t rank, const int64_t *dims, double mean,
                                         double scale, uint64_t seed,
                                         dml_rt_tensor_t *out);
/* A copy of `host` (dense C order; data read during the call only). */
dml_status_t dml_rt_tensor_from_host(dml_rt_device_t *d, const dml_tensor_t *host,
                                     dml_rt_tensor_t *out);

/* ---- reading ---- */

typedef struct dml_rt_tensor_info {
  dml_dtype_t dtype;
  int32_t rank;
  int64_t dims[DML_MAX_RANK];
  int64_t strides[DML_MAX_RANK]; /* elements */
  int64_t offset;                /* elements from the storage's start */
  int contiguous;                /* strides are C order's */
  int refs;                      /* the handle's reference count */
  dml_rt_device_t *device;
} dml_rt_tensor_info_t;

/* Errors: FAILED_PRECONDITION "use after free"; INVALID_ARGUMENT for the
 * zero handle. */
dml_status_t dml_rt_tensor_info(dml_rt_tensor_t t, dml_rt_tensor_info_t *out);

/* Copies t's elements in C order into dst->data, whose dtype, rank and
 * dims must be t's (INVALID_ARGUMENT naming both otherwise). */
dml_status_t dml_rt_tensor_to_host(dml_rt_tensor_t t, const dml_tensor_t *dst);

/* A contiguous copy of t on device `d` (any device, t's own included). */
dml_status_t dml_rt_tensor_to_device(dml_rt_tensor_t t, dml_rt_device_t *d,
                                     dml_rt_tensor_t *out);

/* The host address of t's element 0 (its storage's start plus its offset,
 * the other elements at t's strides) for a tensor on the CPU device: the
 * bytes themselves, no copy (the Python package's buffer protocol). Lent
 * while a live handle uses the storage (a view keeps it alive after its
 * base is freed). Errors: FAILED_PRECONDITION for a tensor on another
 * device ("copy it to the cpu with dml_rt_tensor_to_device") and for a
 * stale handle ("use after free"). */
dml_status_t dml_rt_tensor_host_data(dml_rt_tensor_t t, void **out);

/* ---- views: share t's storage where strides allow ---- */

/* New dims of the same element count (one -1 is inferred). A view when
 * the strides allow: t contiguous, or each run of t's dims merged or split
 * into new ones contiguous within itself, size-1 dims anywhere (NumPy's
 * rule: t.T[0] is a view); else a contiguous copy. Errors:
 * INVALID_ARGUMENT naming both shapes. */
dml_status_t dml_rt_tensor_reshape(dml_rt_tensor_t t, int32_t rank, const int64_t *dims,
                                   dml_rt_tensor_t *out);
/* Per listed axis, elements start, start + step, ... before end (numpy /
 * ONNX Slice clamping; negative start/end count from the end; step != 0,
 * negative steps walk backwards). Always a view. */
dml_status_t dml_rt_tensor_slice(dml_rt_tensor_t t, uint32_t n_axes, const int64_t *axes,
                                 const int64_t *starts, const int64_t *ends,
                                 const int64_t *steps, dml_rt_tensor_t *out);
/* Dims permuted: out dim i is t's dim perm[i] (perm NULL: reversed). A
 * view. */
dml_status_t dml_rt_tensor_transpose(dml_rt_tensor_t t, const int64_t *perm,
                                     dml_rt_tensor_t *out);
/* Broadcast to `dims` (numpy rules; new leading dims and size-1 dims get
 * stride 0). A view. */
dml_status_t dml_rt_tensor_expand(dml_rt_tensor_t t, int32_t rank, const int64_t *dims,
                                  dml_rt_tensor_t *out);
/* t itself with one more reference when contiguous, else a contiguous
 * copy on t's device. */
dml_status_t dml_rt_tensor_contiguous(dml_rt_tensor_t t, dml_rt_tensor_t *out);

/* ---- lifetime ---- */

dml_status_t dml_rt_tensor_retain(dml_rt_tensor_t t);
/* Drops one reference; at zero as dml_rt_tensor_free. */
dml_status_t dml_rt_tensor_release(dml_rt_tensor_t t);
/* Kills the handle now (any count); its storage goes back to the device
 * unless a live view still uses it. */
dml_status_t dml_rt_tensor_free(dml_rt_tensor_t t);

/* ---- eager ops ---- */

/* Runs op `op` (its ops.def / ONNX name: "Add", "MatMul", "Conv",
 * "ReduceSum", ...) on `inputs` (n_inputs handles; DML_RT_TENSOR_NONE for
 * an absent optional input) with attributes `attrs` (ONNX's names and
 * meanings, dml_types.h; lent for the call), creating n_outputs new
 * tensors on the inputs' device (1, or the op's count: MaxPool's values and
 * indices, TopK's values and indices, Split's parts), whose dims and dtype
 * follow the op's shape rule (dml_cpu_eager_outputs, dml_cpu.h). On error
 * no output is left behind. On the CPU it runs the
 * reference kernels the compiled CPU path runs (dml_cpu_run), with the
 * scratch dml_cpu_scratch_bytes gives. The ops: every elementwise op, the
 * reductions, ArgMax/ArgMin, MatMul, Gemm, Conv, MaxPool, AveragePool, the
 * global pools, TopK, Split, Softmax, LogSoftmax, Hardmax, Transpose, Identity, Flatten,
 * Concat, Gather, GatherElements, ScatterElements, BatchNormalization and
 * LayerNormalization (Y), InstanceNormalization, LpNormalization, CumSum,
 * Trilu, ReverseSequence, Size and the ops whose dims follow from a shape input (Reshape,
 * Slice, Expand, Tile, Pad, Squeeze, Unsqueeze, Resize, Range, ConstantOfShape, OneHot).
 * On a Vulkan device the op runs the eager kernel library's kernel (SPIR-V
 * compiled when the runtime was built, the compiled path's formula; shapes,
 * strides and broadcasting passed at dispatch; docs/tensor.md "Eager ops
 * on Vulkan"): the f32 elementwise ops with their default attributes.
 * Errors: NOT_FOUND for an unknown op name; FAILED_PRECONDITION for a stale handle or
 * inputs on different devices; UNIMPLEMENTED for an op without an eager rule, and for
 * an op outside the device's eager library (every op on CUDA; on Vulkan the
 * ops above only, f32 only, default attributes only: "eager op MatMul with
 * 2 inputs is not implemented on vulkan:0 (...) yet", saying why), never a
 * silent CPU fallback;
 * INVALID_ARGUMENT "shape mismatch" naming the op and the shapes; the kernel's and
 * the device's errors. */
dml_status_t dml_rt_tensor_op(const char *op, const dml_rt_tensor_t *inputs,
                              uint32_t n_inputs, const dml_attr_t *attrs,
                              uint32_t n_attrs, dml_rt_tensor_t *outputs,
                              uint32_t n_outputs);

/* ---- sessions (dml_rt.h) ---- */

/* Creates a session of function `function` (NULL: "forward") of `m` on
 * device d, as dml_rt_session_create_function does with d's name, except
 * that a GPU session runs on d itself: on Vulkan the VkDevice and queue d
 * opened (a session made by name opens its own VkDevice, whose memory d's
 * tensors cannot share); on CUDA the primary context of d's ordinal (the
 * same as by name). Tensors on d can then be bound as inputs and outputs
 * copied out on the device (below), and the session leaves its outputs on
 * the device after a run until dml_rt_session_get_output asks for them
 * (docs/tensor.md "Sessions"). A CPU d gives a CPU session. The device
 * stays open while either is alive; d and the session are used by one
 * thread at a time each (their queue submissions are serialized). Release
 * the session with dml_rt_session_release. Errors: INVALID_ARGUMENT for a
 * NULL model, device or output; dml_rt_session_create_function's;
 * UNIMPLEMENTED when the package's Vulkan kernels need a device feature
 * (e.g. storageBuffer8BitAccess) d was not opened with. */
dml_status_t dml_rt_session_create_on_device(const dml_rt_model_t *m, dml_rt_device_t *d,
                                             const char *function,
                                             dml_rt_session_t *share_globals_with,
                                             dml_rt_session_t **out);

/* Binds tensor t as input `index` of session s (dml_rt_session_set_input's
 * checks and errors). A tensor on the session's own device (a session made
 * by dml_rt_session_create_on_device on t's device; on CUDA any session on
 * t's ordinal) is copied on the device into the session's input region at
 * each run, never through the host: the session keeps its own reference to
 * t's storage (a view; or, for a non-contiguous t, a dense copy made on the
 * device by the eager Identity kernel) until the input is bound again,
 * dml_rt_session_clear_inputs or the session's release, so t may be freed
 * meanwhile; if t's device is closed first, the next run fails with
 * FAILED_PRECONDITION "use after free" naming the input. Otherwise (a CPU
 * tensor, another device, a view the device cannot copy densely, an input
 * that the host reads to decide dims or that the CPU fall-back's host nodes
 * read, an input index of 64 or more) as before: a contiguous CPU tensor is
 * read in place (one copy, into the session's arena), a view or a device
 * tensor goes through a dense host copy first. Errors: FAILED_PRECONDITION
 * "use after free" for a freed t; dml_rt_session_set_input's. */
dml_status_t dml_rt_session_set_input_tensor(dml_rt_session_t *s, uint32_t index,
                                             dml_rt_tensor_t t);

/* A new contiguous tensor on device d holding a copy of output `index` of
 * the session's last run: copied on the device when d is the session's
 * device (as for set_input_tensor), else through the host. The tensor is
 * the caller's (one reference, dml_rt_tensor_release / free), independent
 * of the session: the next run does not change it. Errors: INVALID_ARGUMENT
 * for a NULL d or out; dml_rt_session_get_output's; the device's. */
dml_status_t dml_rt_session_get_output_tensor(dml_rt_session_t *s, uint32_t index,
                                              dml_rt_device_t *d, dml_rt_tensor_t *out);

#ifdef __cplusplus
}
#endif
#endif /* DML_TENSOR_H_ */
