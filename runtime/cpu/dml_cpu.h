/*
 * dml_cpu.h — the reference CPU kernels: one per op of ops.def.
 *
 * The reference interpreter is the definition of every op's semantics
 * (ARCHITECTURE.md, decision 1): each kernel follows the ONNX operator
 * spec (opset 17, https://onnx.ai/onnx/operators/) and says so at its
 * definition. The compiler's constant folder calls the same kernels.
 *
 * Calling convention: the caller fills every output's dtype, rank and dims
 * (from the IR's inferred types, evaluated for the actual symbol values)
 * and points its data at writable memory of dml_tensor_bytes() bytes.
 * Inputs are read-only. An absent optional input has data == NULL and
 * dtype DML_DTYPE_INVALID. Kernels never allocate: temporary memory comes
 * from `scratch`, sized by dml_cpu_scratch_bytes() for the same call.
 * Outputs never alias inputs.
 *
 * Data-dependent dims (NonZero, Unique, Compress, NonMaxSuppression; see
 * dml_ir.h, DML_IR_SYMBOL_DATA_DEPENDENT): the caller passes such an output
 * with the dim at its bound and memory for the bound. The kernel writes the
 * actual extent into outputs[i].dims (only ever shrinking it: a result that
 * would not fit is INVALID_ARGUMENT) and the data in C order for the actual
 * dims, so the tensor is dense as returned. Callers read the dims back after
 * the call (the executor sets the symbol from them).
 *
 * Value-dependent shapes (Reshape, Squeeze, Unsqueeze, Expand, Tile, Slice,
 * Pad, ConstantOfShape, Range, Resize, Split, TopK, OneHot, the windows and
 * the reductions, whose output dims follow from a shape input's values):
 * when `output_capacity` is set, the caller passes the outputs with dims at
 * their bounds and output_capacity[i] bytes of memory at outputs[i].data;
 * dml_cpu_run() computes the dims from the inputs' values before the
 * kernel runs and writes them into outputs[i].dims. A dim above the one
 * passed (its bound), or a size above the capacity, is OUT_OF_RANGE naming
 * the node, the output, the dim, the value and the bound. Without it the
 * dims passed are the dims, as for every other op.
 *
 * Errors (op "rt.cpu.<OpName>"): UNIMPLEMENTED for a dtype or attribute
 * value the kernel does not support, INVALID_ARGUMENT for inconsistent
 * shapes or attributes, OUT_OF_RANGE for out-of-bounds indices (Gather).
 */
#ifndef DML_CPU_H_
#define DML_CPU_H_

#include <stddef.h>
#include <stdint.h>

#include "dml_ops.h"
#include "dml_status.h"
#include "dml_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The string heap: where kernels put the bytes of string results
 * (DML_DTYPE_STRING outputs of Cast, StringConcat, StringNormalizer). A
 * session owns one, resets it at the start of each run (results stay valid
 * until the next run) and releases it with the session; it grows by
 * malloc'd chunks as the data needs (run-time allocation: strings have no
 * compile-time size; docs/package-format.md "String tensors"). */
typedef struct dml_cpu_strheap dml_cpu_strheap_t;
dml_cpu_strheap_t *dml_cpu_strheap_create(void); /* NULL when out of memory */
void dml_cpu_strheap_reset(dml_cpu_strheap_t *h);
void dml_cpu_strheap_release(dml_cpu_strheap_t *h);
/* `n` bytes (1 when n is 0), unaligned; NULL when out of memory. */
char *dml_cpu_strheap_alloc(dml_cpu_strheap_t *h, size_t n);
/* Bytes handed out since the last reset. */
uint64_t dml_cpu_strheap_bytes(const dml_cpu_strheap_t *h);
/* 1 when `op`'s CPU kernel takes string tensors (DML_OPF_STRINGS in
 * ops.def). */
int dml_cpu_op_takes_strings(dml_op_t op);
/* 1 when RegexFullMatch can run: PCRE2 (libpcre2-8.so.0) opens. */
int dml_cpu_regex_available(void);

typedef struct dml_cpu_call {
  dml_op_t op;
  const char *node_name; /* for error details; may be NULL */
  const dml_tensor_t *inputs;
  uint32_t n_inputs;
  dml_tensor_t *outputs; /* dims and dtype set by the caller */
  uint32_t n_outputs;
  const dml_attr_t *attrs;
  uint32_t n_attrs;
  void *scratch; /* at least dml_cpu_scratch_bytes(call) bytes */
  size_t scratch_bytes;
  /* Random ops (DML_OPF_RANDOM, training-mode Dropout) draw from the
   * Philox stream of (seed, step, node) of dml_philox.h: rng_seed is used
   * when the node has no `seed` attribute, rng_counter is the step (the
   * session's run count), rng_stream the node's index in its plan. Zero
   * is a valid value of each. */
  uint64_t rng_seed;
  uint64_t rng_counter;
  uint32_t rng_stream;
  /* Value-dependent shapes (above): per output, the bytes of memory at its
   * data; NULL when the output dims passed are exact. */
  const uint64_t *output_capacity;
  /* Where string results go (NULL: a kernel with string results fails
   * with FAILED_PRECONDITION). */
  dml_cpu_strheap_t *strings;
} dml_cpu_call_t;

/* Runs `call->op` on the CPU. */
dml_status_t dml_cpu_run(const dml_cpu_call_t *call);

/* Temporary bytes dml_cpu_run() needs for this call (shapes and attributes
 * only are read; data pointers may be NULL). 0 for most ops. */
size_t dml_cpu_scratch_bytes(const dml_cpu_call_t *call);

/* 1 when a CPU kernel exists for `op`. */
int dml_cpu_supports(dml_op_t op);

/* Value-dependent shapes without running the kernel (the GPU sessions,
 * rt_session.c, compute the dims on the host before the device runs):
 * with `call->output_capacity` set and the outputs passed at their bounds
 * as for dml_cpu_run(), writes the dims the shape rule of `call->op` gives
 * into outputs[i].dims (the same rules and errors as dml_cpu_run()). Only
 * the values of the inputs dml_cpu_output_dims_reads() names are read; the
 * others' dims only (their data pointers may point at anything non-NULL).
 * An op without such a rule (NonZero, Unique, ... whose kernels write the
 * count) is UNIMPLEMENTED. */
dml_status_t dml_cpu_output_dims(const dml_cpu_call_t *call);

/* For the shape rule of `op` (dml_cpu_output_dims): 1 when it reads the
 * values of input `i` (Reshape's shape, Slice's starts/ends/axes/steps,
 * Pad's pads, a reduction's axes, OneHot's depth, ...), 0 when only its
 * dims or nothing, -1 when `op` has no rule (its kernel writes the dims).
 * The rule and the inputs it reads are op_rules.def's DIMS and READS. */
int dml_cpu_output_dims_reads(dml_op_t op, uint32_t i);

/* Eager calls (runtime/dml_tensor.c, a single op on tensors without a
 * package): sets the outputs' dtype, rank and dims from the inputs' dtypes and
 * dims (and the values dml_cpu_output_dims_reads() names), the attributes
 * and the op's ONNX shape rule: numpy broadcasting for the elementwise ops
 * (bool for compares, IsNaN, IsInf; Where's and CastLike's input 1, Cast's
 * `to`), numpy matmul, Gemm's transA/transB, the window rule for Conv and
 * AveragePool, ArgMax/ArgMin's axis (i64), Transpose's perm, Concat,
 * Gather, GatherElements (the indices' shape), Flatten, Size (i64 []), X's
 * shape for Softmax, LogSoftmax, Hardmax, Identity, the norms
 * (BatchNormalization: Y only; LayerNormalization's Mean and InvStdDev
 * X's dims with those from `axis` on made 1, of `stash_type`'s dtype),
 * CumSum, Trilu, ScatterElements, ReverseSequence; RNN, GRU and LSTM
 * (every output, X's dtype: Y [seq, dirs, batch, hidden], Y_h and Y_c
 * [dirs, batch, hidden], layout 1 batch first; dml_shape_rnn_directions),
 * and the rules of
 * dml_cpu_output_dims() (reductions, Reshape, Slice, Expand, TopK, Split,
 * ...) with the rank they give; MaxPool's window rule; the second outputs
 * of MaxPool and TopK (indices) are i64; Split without sizes: equal parts
 * (ONNX Split-18: ceil(extent / outputs), the last smaller). The call
 * needs n_outputs within the op's arity (at most DML_MAX_EAGER_OUTPUTS)
 * and output_capacity set, one entry per output (any values: only read by
 * those rules; pass UINT64_MAX). Errors: UNIMPLEMENTED
 * (op "<Op>") for an op without an eager rule (dml_cpu_eager_supported 0)
 * or for outputs past the first of ops other than MaxPool, TopK, Split,
 * LayerNormalization, RNN, GRU, LSTM;
 * INVALID_ARGUMENT "shape mismatch" naming both shapes ("lhs [3,4], rhs
 * [5,6]") or every input's; the rules' errors. */
dml_status_t dml_cpu_eager_outputs(const dml_cpu_call_t *call);
#define DML_MAX_EAGER_OUTPUTS 16

/* The geometry the pool kernels (MaxPool, AveragePool) use, for the eager
 * paths of other devices (runtime/dml_tensor_compose.c): call's input 0 X
 * [N, C, spatial...] and output 0 Y (dims only; no data read) with the
 * op's attributes; writes the r = rank - 2 spatial dims' kernel, strides,
 * dilations and begin and end pads (auto_pad resolved) and the divisor
 * count AveragePool uses per output position along each spatial dim
 * (dim i's counts at cnt[i][0 .. Y dims[2 + i] - 1], DML_MAX_RANK - 2 dims
 * at most; cnt may be NULL): the window positions inside X, or with
 * count_include_pad inside the padded X. Errors: the kernels' (INVALID_ARGUMENT
 * for bad attributes or Y dims that do not fit the window rule). */
dml_status_t dml_cpu_pool_geometry(const dml_cpu_call_t *call, int64_t *k, int64_t *s,
                                   int64_t *d, int64_t *pb, int64_t *pe, int include_pad,
                                   int64_t *const *cnt);

/* One activation of RNN, GRU or LSTM (ONNX RNN-14 "Activation
 * functions"): `op` an op of the formula table (ew_ops.def: Relu, Tanh,
 * Sigmoid, LeakyRelu, ThresholdedRelu, HardSigmoid, Elu, Softsign,
 * Softplus) whose first n_params attributes (A0 "alpha", A1 "beta") are
 * alpha and beta; or, op DML_OP_INVALID, `form` DML_CPU_RNN_AFFINE
 * (alpha x + beta) or DML_CPU_RNN_SCALED_TANH (alpha tanh(beta x)). */
enum { DML_CPU_RNN_OP = 0, DML_CPU_RNN_AFFINE = 1, DML_CPU_RNN_SCALED_TANH = 2 };
typedef struct dml_cpu_rnn_act {
  dml_op_t op;
  int form, n_params;
  double alpha, beta;
} dml_cpu_rnn_act_t;
#define DML_CPU_RNN_MAX_ACTS 6

/* The activations the CPU's RNN, GRU or LSTM kernel (call's op and
 * attributes `activations`, `activation_alpha`, `activation_beta`; no
 * tensors read) applies, for the eager paths of other devices
 * (runtime/dml_tensor_compose.c): per direction n = 1 (RNN), 2 (GRU) or 3
 * (LSTM) of them, direction d's at acts[d * n .. d * n + n - 1] (dirs 1
 * or 2; DML_CPU_RNN_MAX_ACTS at most); the defaults (Tanh; Sigmoid, Tanh;
 * Sigmoid, Tanh, Tanh) without `activations`; names case-insensitive; a
 * list of n for both directions when bidirectional; alpha and beta taken in
 * order by the activations that take them, else the ONNX op's defaults.
 * Errors: the kernel's (INVALID_ARGUMENT for a list of another length or
 * not of strings; UNIMPLEMENTED for a name outside the ONNX list). */
dml_status_t dml_cpu_rnn_activations(const dml_cpu_call_t *call, int dirs,
                                     dml_cpu_rnn_act_t *acts);

/* Pad's source coordinate along one dim (the CPU kernel's map, also the
 * eager path's on other devices): output coordinate o with begin pad pb
 * over an input dim of n > 0 in mode m (0 constant: -1 in the padding, 1
 * reflect, 2 edge, 3 wrap); -1 for a padded position of mode 0. */
int64_t dml_cpu_pad_source(int m, int64_t o, int64_t pb, int64_t n);

/* GatherElements' and ScatterElements' operand check (indices i32 or i64
 * of x's rank, dims within x's off the axis; dims only): the axis,
 * normalized, in *axis. Errors the kernels'. */
dml_status_t dml_cpu_elements_check(const dml_cpu_call_t *call, int64_t *axis);

/* 1 when dml_cpu_eager_outputs() has a rule for `op` (op_rules.def's EAGER
 * column, `broadcast` for ew_ops.def's ops) and a CPU kernel exists. */
int dml_cpu_eager_supported(dml_op_t op);

/* What the CPU executor (runtime/rt_cpu_fuse.c) adds to a Conv, Gemm or
 * MatMul node with constant weights: the weights packed once
 * (dml_cpu_prepack), and an epilogue of the nodes folded into it. For Conv:
 * after y[n, m, ...] = conv + B[m], y = y * scale[m] + shift[m] when scale
 * is set (a BatchNormalization in inference mode; scale and shift from
 * dml_cpu_bn_affine); then y = y + residual[n, m, ...] when residual is set
 * (a residual Add: f32, the output's shape and dense layout; it may be the
 * output's own buffer, never overlap it otherwise); then for every op y =
 * y < 0 ? 0 : y when relu (NaN and -0 kept). Each step rounds as the
 * separate node's kernel does, so a fused node gives the same bits as the
 * nodes it replaces. scale and shift: f32 [M], both set or both NULL, Conv
 * only; residual: Conv only. packed: dml_cpu_prepack's bytes for this
 * node's weights in this process, or NULL. */
typedef struct dml_cpu_epilogue {
  const float *scale;
  const float *shift;
  int relu;
  const void *packed;
  const float *residual;
  /* NCHWc (runtime/cpu/cpu_nchwc.c; 0: the NCHW kernels): DML_CPU_NCHWC_ON,
   * plus DML_CPU_NCHWC_X when X is blocked and DML_CPU_NCHWC_Y when Y (and
   * the residual) are; packed is then dml_cpu_nchwc_prepack's. work:
   * work_threads buffers of work_floats floats each, at least
   * dml_cpu_nchwc_work_floats (a depthwise Conv's zero-padded plane, an
   * NCHW side's image); NULL where that is 0. */
  int nchwc;
  float *work;
  size_t work_floats;
  int work_threads;
} dml_cpu_epilogue_t;

/* ---- NCHWc: channel-blocked activations between convolutions ----------
 * A blocked value [N, C, H, W] (C a multiple of DML_CPU_NCHWC_BLOCK) is
 * stored as [N][C/16][H][W][16]: the same bytes as NCHW, another order. */
#define DML_CPU_NCHWC_BLOCK 16
enum {
  DML_CPU_NCHWC_ON = 1, /* the call runs the NCHWc kernels */
  DML_CPU_NCHWC_X = 2,  /* X is blocked (else NCHW) */
  DML_CPU_NCHWC_Y = 4   /* Y and the residual are blocked (else NCHW) */
};
enum { DML_CPU_NCHWC_POINTWISE = 1, DML_CPU_NCHWC_DEPTHWISE = 2 };

/* 1 when the NCHWc kernels may be planned: x86-64 with AVX-512F (checked
 * at run time) and the environment variable DMLC_CPU_NCHWC set to 1 (off
 * by default: docs/cpu.md, "Convolutions", has the measurements); else 0. */
int dml_cpu_nchwc_available(void);
/* The NCHWc kernel of a Conv with f32 weights w [M, C/group, KH, KW],
 * attributes attrs and an input of C channels and H x W: DML_CPU_NCHWC_
 * POINTWISE (1x1, stride 1, no pads, group 1), DML_CPU_NCHWC_DEPTHWISE
 * (group == C == M, kernels up to 7x7, strides 1-2, each pad below the
 * kernel size, auto_pad NOTSET or VALID), both with C and M multiples of
 * 16 and dilations 1; 0 when none. */
int dml_cpu_nchwc_conv_kind(const dml_tensor_t *w, const dml_attr_t *attrs,
                            uint32_t n_attrs, int64_t C, int64_t H, int64_t W);
/* Work floats per thread that such a call with `layout` (DML_CPU_NCHWC_X
 * and/or _Y bits) needs: depthwise, the zero-padded plane of 16 channels
 * (X is reordered into it when NCHW); pointwise, an image of X when X is
 * NCHW; plus an image of Y when Y is NCHW. 0 when none or no NCHWc
 * kernel. */
size_t dml_cpu_nchwc_work_floats(const dml_tensor_t *w, const dml_attr_t *attrs,
                                 uint32_t n_attrs, int64_t C, int64_t H, int64_t W,
                                 int layout);
/* Bytes of w [M, K1, K2, K3] (f32, M a multiple of 16) packed for the
 * NCHWc kernels ([M/16][K1*K2*K3][16]); 0 otherwise. */
size_t dml_cpu_nchwc_prepack_bytes(const dml_tensor_t *w);
/* Writes that packed form into dst (64-byte aligned for the best speed). */
void dml_cpu_nchwc_prepack(const dml_tensor_t *w, float *dst);

/* Runs the Conv, Gemm or MatMul `call` (f32; other dtypes only with a NULL
 * or all-empty `ep`; or a QLinearConv with only `packed` set; or an RNN, GRU
 * or LSTM with only `packed` set, from dml_cpu_rnn_prepack of its W and R) with `ep`
 * (NULL: as dml_cpu_run) applied to each output tile while it is in cache. Same scratch
 * as dml_cpu_run() of the call. Errors: those of the op; INVALID_ARGUMENT for another op,
 * for only one of scale/shift set, or scale on a Gemm/MatMul; UNIMPLEMENTED for an
 * epilogue on a non-f32 call. */
dml_status_t dml_cpu_run_fused(const dml_cpu_call_t *call, const dml_cpu_epilogue_t *ep);

/* Bytes of the packed form of a node's constant weights `w` (Conv's W
 * unless depthwise, Gemm's or a 2-D MatMul's B, f32; QLinearConv's w, u8/s8,
 * unless depthwise) for `op` with
 * `attrs` (group, transB), 0 when the op or shape has none. The layout
 * follows the GEMM micro-kernel picked for this machine at load time: use
 * the bytes in this process only. */
size_t dml_cpu_prepack_bytes(dml_op_t op, const dml_tensor_t *w, const dml_attr_t *attrs,
                             uint32_t n_attrs);
/* Writes that packed form into dst (dml_cpu_prepack_bytes bytes, 4-byte
 * aligned at least). */
void dml_cpu_prepack(dml_op_t op, const dml_tensor_t *w, const dml_attr_t *attrs,
                     uint32_t n_attrs, void *dst);

/* Bytes of the packed form of an RNN, GRU or LSTM node's constant weights
 * W [dirs, G*hidden, input] and R [dirs, G*hidden, hidden] (f32; G = 1, 3,
 * 4 gates) for `op` with `attrs` (linear_before_reset): the input
 * projection's and the per-step GEMM's B operands, so that no call packs
 * them. 0 when the op, dtypes or shapes have none. As dml_cpu_prepack_bytes,
 * the layout follows this process's GEMM micro-kernel. */
size_t dml_cpu_rnn_prepack_bytes(dml_op_t op, const dml_tensor_t *w,
                                 const dml_tensor_t *r, const dml_attr_t *attrs,
                                 uint32_t n_attrs);
/* Writes that packed form into dst (dml_cpu_rnn_prepack_bytes bytes, 64-byte
 * aligned for the best speed); dml_cpu_run_fused takes it as `packed`. */
void dml_cpu_rnn_prepack(dml_op_t op, const dml_tensor_t *w, const dml_tensor_t *r,
                         const dml_attr_t *attrs, uint32_t n_attrs, void *dst);

/* BatchNormalization's inference-mode affine form y = x * scale + shift per
 * channel (ONNX BatchNormalization-15, training_mode = 0), as ONNX Runtime's
 * CPU kernel computes it, in float: a = (1 / sqrt(var + eps)) * sc, off =
 * b - mean * a (operands rounded to float first). So an infinite a makes
 * x * a + off NaN (x * inf - inf) where the spec's (x - mean) * a + b would
 * be inf: ORT 1.31 gives NaN there; the GPU kernels
 * (codegen/schedule_elementwise.c) compute the same form in f32. */
void dml_cpu_bn_affine(double sc, double b, double mean, double var, double eps,
                       float *scale, float *shift);

/* Number of threads the kernels may use (the calling thread included);
 * default 1. Values are clamped to [1, 64]. Worker threads are started on
 * first use and persist for the life of the process. Scratch sizes from
 * dml_cpu_scratch_bytes() depend on the count: a call whose scratch was
 * sized for fewer threads simply uses fewer. Not thread-safe against
 * concurrent dml_cpu_run() calls; set it once at startup. */
void dml_cpu_set_num_threads(int n);
int dml_cpu_get_num_threads(void);

#ifdef __cplusplus
}
#endif
#endif /* DML_CPU_H_ */
