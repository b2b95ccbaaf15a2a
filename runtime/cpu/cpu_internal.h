/*
 * cpu_internal.h — shared helpers of the reference CPU kernels (not public).
 *
 * Each family file (cpu_elementwise.c, cpu_linalg.c, ...) defines kernels
 * `dml_cpuk_<Op>(call)` and, where temporary memory is needed, scratch
 * sizers `dml_cpus_<Op>(call)`; cpu_dispatch.c puts them in the op table.
 */
#ifndef DML_CPU_INTERNAL_H_
#define DML_CPU_INTERNAL_H_

#include <stddef.h>
#include <stdint.h>

#include "dml_cpu.h"
#include "dml_ew.h"

/* ---- errors ----------------------------------------------------------- */

/* A status with op "rt.cpu.<OpName>", the reason, and the node name as a
 * detail line. */
dml_status_t dml_cpu_error(const dml_cpu_call_t *c, dml_status_code_t code,
                           const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* UNIMPLEMENTED: "<what> dtype <dt> is not supported". */
dml_status_t dml_cpu_err_dtype(const dml_cpu_call_t *c, const char *what, dml_dtype_t dt);
/* INVALID_ARGUMENT with every input and output shape appended. */
dml_status_t dml_cpu_err_shapes(const dml_cpu_call_t *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- small helpers ---------------------------------------------------- */

#define DML_CPU_MIN(a, b) ((a) < (b) ? (a) : (b))
#define DML_CPU_MAX(a, b) ((a) > (b) ? (a) : (b))

static inline const dml_tensor_t *dml_cpu_in(const dml_cpu_call_t *c, uint32_t i) {
  return i < c->n_inputs && c->inputs[i].dtype != DML_DTYPE_INVALID ? &c->inputs[i]
                                                                    : NULL;
}
static inline dml_tensor_t *dml_cpu_out(const dml_cpu_call_t *c, uint32_t i) {
  return i < c->n_outputs && c->outputs[i].dtype != DML_DTYPE_INVALID &&
                 c->outputs[i].data
             ? &c->outputs[i]
             : NULL;
}
static inline int64_t dml_cpu_numel(const dml_tensor_t *t) {
  return dml_dims_numel(t->dims, t->rank);
}
static inline int64_t dml_cpu_get_int(const dml_cpu_call_t *c, const char *name,
                                      int64_t dflt) {
  return dml_attr_int(c->attrs, c->n_attrs, name, dflt);
}
static inline double dml_cpu_get_float(const dml_cpu_call_t *c, const char *name,
                                       double dflt) {
  return dml_attr_float(c->attrs, c->n_attrs, name, dflt);
}
static inline const char *dml_cpu_get_string(const dml_cpu_call_t *c, const char *name,
                                             const char *dflt) {
  return dml_attr_string(c->attrs, c->n_attrs, name, dflt);
}
static inline const int64_t *dml_cpu_get_ints(const dml_cpu_call_t *c, const char *name,
                                              size_t *n) {
  return dml_attr_ints(c->attrs, c->n_attrs, name, n);
}
static inline int dml_cpu_is_unsigned(dml_dtype_t dt) {
  return dt == DML_DTYPE_U8 || dt == DML_DTYPE_U16 || dt == DML_DTYPE_U32 ||
         dt == DML_DTYPE_U64 || dt == DML_DTYPE_BOOL;
}

/* Value-dependent shapes (dml_cpu.h, output_capacity): when the call has
 * output capacities and `c->op` computes its output dims from its inputs'
 * values, computes them, checks them against the dims passed (the bounds)
 * and the capacities, and writes them into c->outputs; otherwise OK and
 * nothing changes. cpu_outdims.c. */
dml_status_t dml_cpu_value_dims(const dml_cpu_call_t *c);

/* Normalizes axis `a` against `rank` (negative counts from the end). Returns
 * 0 and sets *out on success, -1 when out of range. */
int dml_cpu_norm_axis(int64_t a, int64_t rank, int64_t *out);

/* Reads a 1-D integer tensor (i32 or i64, any integer dtype accepted) into
 * out[0..cap). Returns the element count, or -1 if it is not an integer
 * tensor or has more than `cap` elements. */
int64_t dml_cpu_read_ints(const dml_tensor_t *t, int64_t *out, int64_t cap);

/* Reads element 0 of a numeric tensor as double (0 if empty). */
double dml_cpu_scalar_f64(const dml_tensor_t *t);

/* Row-major strides (in elements) of dims. */
void dml_cpu_strides(const int64_t *dims, int32_t rank, int64_t *strides);

/* Multidirectional (numpy) broadcast of inputs to the output shape: element
 * strides of each input aligned to the output's dims, with dims merged where
 * possible. rank 0 when the output is a scalar. */
#define DML_CPU_BCAST_MAX_IN 3
typedef struct dml_cpu_bcast {
  int32_t rank;
  int64_t dims[DML_MAX_RANK];
  int64_t strides[DML_CPU_BCAST_MAX_IN][DML_MAX_RANK];
  int n_in;
} dml_cpu_bcast_t;
/* Returns 0 on success, -1 when an input does not broadcast to `out_dims`. */
int dml_cpu_bcast_init(dml_cpu_bcast_t *b, const int64_t *out_dims, int32_t out_rank,
                       const dml_tensor_t *const *ins, int n_in);

/* Calls fn(ctx, out_off, in_offs, n) for every innermost row of the
 * broadcast: the row has n output elements starting at out_off (contiguous),
 * input k starts at in_offs[k] and advances by b->strides[k][b->rank-1]. */
typedef void (*dml_cpu_row_fn)(void *ctx, int64_t out_off, const int64_t *in_offs,
                               int64_t n);
void dml_cpu_bcast_walk(const dml_cpu_bcast_t *b, dml_cpu_row_fn fn, void *ctx);

/* Copies `src` (broadcast to dst's dims) into dst by element size. Returns
 * -1 when the shapes do not broadcast. */
int dml_cpu_broadcast_copy(const dml_tensor_t *src, dml_tensor_t *dst);

/* ---- GEMM core (cpu_gemm.c) ------------------------------------------- */

/* C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C, single precision,
 * row-major with leading dimensions lda/ldb/ldc; op(X) = X^T when trans_x.
 * When beta == 0, C is not read (may hold garbage or NaN). `scratch` holds
 * dml_cpu_sgemm_scratch(M,N,K,threads) bytes (no alignment required); up to
 * that many threads of the pool are used (fewer if scratch is smaller). */
void dml_cpu_sgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                   const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                   float *C, int64_t ldc, void *scratch, size_t scratch_bytes);
size_t dml_cpu_sgemm_scratch(int64_t M, int64_t N, int64_t K, int threads);

/* dml_cpu_sgemm with op(A) and/or op(B) packed beforehand (apre/bpre, NULL:
 * packed per call from A/B) by dml_cpu_sgemm_pack_a/_b of the same M/N, K
 * and trans flag, in this process (the layout follows the micro-kernel
 * picked at load time). A and B must still be given: small M reads them
 * unpacked. Same bits as dml_cpu_sgemm. */
void dml_cpu_sgemm_pre(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K,
                       float alpha, const float *A, int64_t lda, const float *B,
                       int64_t ldb, float beta, float *C, int64_t ldc, const float *apre,
                       const float *bpre, void *scratch, size_t scratch_bytes);
/* Tests only (not thread-safe; packed operands made before a switch are
 * invalid after it): use micro-kernel `which` from now on: 0 this
 * machine's best (the default), 1 portable C (4x16), 2 AVX2+FMA (6x16),
 * 3 AVX-512 (8x32). Returns -1 (and changes nothing) when the CPU or the
 * build lacks it. */
int dml_cpu_sgemm_set_kernel(int which);
/* The micro-kernel in use, numbered as dml_cpu_sgemm_set_kernel's `which`
 * (1 portable C, 2 AVX2+FMA, 3 AVX-512): other kernels with per-ISA paths
 * (the depthwise convolution) follow it, so one switch tests them all. */
int dml_cpu_sgemm_isa(void);
/* Tests only (not thread-safe): on (1, the default) the AVX-512 depthwise
 * convolution takes its flattened-vector kernel where the geometry allows,
 * off (0) always the per-plane strip kernel (the same bits). Returns the
 * previous setting. */
int dml_cpu_dw_flat_set(int on);
/* Tests and benchmarks only (not thread-safe): on (1, the default) f32 3x3
 * stride-1 convolutions of at least 64 input channels take the Winograd
 * F(2x2, 3x3) kernel where the geometry allows (cpu_conv.c, wg_plan), off
 * (0) the channel-vectorized direct kernel. Returns the previous setting. */
int dml_cpu_conv_wg_set(int on);
/* Tests and benchmarks only (not thread-safe): on (1, the default) f32
 * 3-wide convolutions (strides 1-2) with output rows of 3, 5, 6 or 7 take
 * the channel-vectorized kernel's small-image tiles (cpu_conv.c, cvr_rows),
 * off (0) the flattened phase-plane kernel (the same bits: both sum each
 * output in k order from 0). Returns the previous setting. */
int dml_cpu_conv_cvr_set(int on);
/* Tests only (not thread-safe): on (1, the default) an f32 LSTM or GRU
 * with the default activations runs each step's gate math through
 * dml_cpu_lstm_cell_f32 / dml_cpu_gru_gates_f32 and dml_cpu_gru_cell_f32,
 * off (0) through the per-gate loops (the same bits). Returns the previous
 * setting. cpu_rnn.c. */
int dml_cpu_rnn_fused_set(int on);
/* Floats of a packed op(A) [M,K] / op(B) [K,N], and the packing. */
size_t dml_cpu_sgemm_packed_a_floats(int64_t M, int64_t K);
void dml_cpu_sgemm_pack_a(int trans_a, int64_t M, int64_t K, const float *A, int64_t lda,
                          float *dst);
size_t dml_cpu_sgemm_packed_b_floats(int64_t N, int64_t K);
/* The packed-B layout, for callers that write it themselves (Conv's
 * im2col): for each block of DML_CPU_GEMM_NC columns jc, each block of
 * DML_CPU_GEMM_KC rows pc (kc rows), at jc * K + pc * round_up(nc, nr):
 * panels of nr columns, panel p at p * kc * nr, row k of it at (k - pc) *
 * nr, columns past N zero. nr is 16 or 32 (a power of two). */
#define DML_CPU_GEMM_KC 256
#define DML_CPU_GEMM_NC 2048
int dml_cpu_sgemm_nr(void);
/* 1 when a product of M rows reads packed operands (apre/bpre); small M
 * reads A and B unpacked. */
int dml_cpu_sgemm_packs(int64_t M);
void dml_cpu_sgemm_pack_b(int trans_b, int64_t N, int64_t K, const float *B, int64_t ldb,
                          float *dst);

/* The fused entry points behind dml_cpu_run_fused (cpu_prepack.c), and
 * the packing of Conv weights (cpu_conv.c): group GEMM A operands. */
dml_status_t dml_cpu_conv_ep(const dml_cpu_call_t *c, const dml_cpu_epilogue_t *ep);
/* A Conv with ep->nchwc set (cpu_nchwc.c): the NCHWc kernels, X and Y in
 * the layouts ep->nchwc names. Errors: UNIMPLEMENTED for a Conv without an
 * NCHWc kernel (dml_cpu_nchwc_conv_kind), a residual with an NCHW Y, or a
 * CPU without AVX-512; INVALID_ARGUMENT for shapes, no packed weights or
 * too little work memory. */
dml_status_t dml_cpu_nchwc_conv(const dml_cpu_call_t *c, const dml_cpu_epilogue_t *ep);
/* An RNN/GRU/LSTM call with its weights packed by dml_cpu_rnn_prepack
 * (cpu_rnn.c; NULL: packed per call, as dml_cpu_run); the same bits. */
dml_status_t dml_cpu_rnn_packed(const dml_cpu_call_t *c, const void *packed);
/* dml_cpu_run's checks (output dims, arity, dtypes, scratch) without the
 * run (cpu_dispatch.c). */
dml_status_t dml_cpu_run_checks(const dml_cpu_call_t *c);
dml_status_t dml_cpu_gemm_ep(const dml_cpu_call_t *c, const dml_cpu_epilogue_t *ep);
dml_status_t dml_cpu_matmul_ep(const dml_cpu_call_t *c, const dml_cpu_epilogue_t *ep);
size_t dml_cpu_conv_prepack_floats(const dml_tensor_t *w, int64_t group);
void dml_cpu_conv_prepack(const dml_tensor_t *w, int64_t group, float *dst);

/* QLinearConv (cpu_quant.c checks the call, then the fast int8 path of
 * cpu_qgemm.c takes it where it can): `packed` is
 * dml_cpu_qconv_prepack's bytes for input 3 (or NULL). */
dml_status_t dml_cpu_qlinear_conv(const dml_cpu_call_t *c, const void *packed);
/* The output range of QLinearConv/QLinearMatMul: y's dtype range narrowed
 * by the attribute dml_clamp = [lo, hi] (passes/qdq_fuse.c). */
dml_status_t dml_cpu_qclamp(const dml_cpu_call_t *c, dml_dtype_t dt, int32_t *lo,
                            int32_t *hi);
/* The fast path (cpu_qgemm.c): 1 when it ran the checked call (status in
 * *st), 0 when the reference must (K > 65,536, rank > 4, non-finite
 * requantization scale, too little scratch, or the fast path turned off). */
int dml_cpu_qconv_fast(const dml_cpu_call_t *c, const void *packed, int32_t lo,
                       int32_t hi, dml_status_t *st);
/* Its scratch for `threads` threads (prepacked: the weights come packed). */
size_t dml_cpu_qconv_scratch(const dml_cpu_call_t *c, int threads, int prepacked);
/* Tests only (not thread-safe): on (1, the default) int8 depthwise
 * QLinearConv of at least 8 channels takes the kernel with the channels in
 * the vector lanes (cpu_qgemm.c, dwl_task), off (0) the per-plane kernel
 * (the same bits). Returns the previous setting. */
int dml_cpu_qdw_lanes_set(int on);
/* Packed QLinearConv weights w [M, C/group, k...] u8/s8: bytes (0 for
 * depthwise, which reads w directly, or K > 65,536) and the packing. */
size_t dml_cpu_qconv_prepack_bytes(const dml_tensor_t *w, int64_t group);
void dml_cpu_qconv_prepack(const dml_tensor_t *w, int64_t group, void *dst);
/* Per-tensor QuantizeLinear of f32 x (y u8 when u8, else s8) and
 * DequantizeLinear of u8/s8 x, as the reference kernels compute them
 * (x / scale in f32, rint, + zp, saturation with NaN low; (x - zp) * scale
 * in f32), vectorized (cpu_qgemm.c). */
void dml_cpu_quantize_f32(const float *x, int64_t n, float scale, int32_t zp, int u8,
                          void *y);
void dml_cpu_dequantize_q8(const void *x, int64_t n, float scale, int32_t zp, int u8,
                           float *y);
/* QLinearAdd's loop (cpu_qgemm.c): y = clamp(sat(rint(((float)(a - za) * sa +
 * (float)(b - zb) * sb) / sy) + zy), lo, hi), the DQ/Add/Q chain's f32
 * operations; a_s8/b_s8/y_s8 give the dtypes. */
void dml_cpu_qadd(const void *a, int a_s8, float sa, int32_t za, const void *b, int b_s8,
                  float sb, int32_t zb, float sy, int32_t zy, int y_s8, int32_t lo,
                  int32_t hi, int64_t n, void *y);
/* Forces the int8 micro-kernel (tests): -1 the reference kernels only, 0
 * this machine's choice, 1 portable C, 2 AVX2, 3 AVX-512 VNNI, 4 arm64 sdot. Returns the
 * kernel now in use (0 for -1), or -1 when the machine lacks it (then the
 * machine's choice). Not thread-safe: call before running. */
int dml_cpu_qgemm_set_kernel(int which);

/* Element i of a float array as double, and back: f32 and f64 directly,
 * f16/bf16 through dml_load_f64/dml_store_f64. */
static inline double dml_cpu_ld(dml_dtype_t dt, const void *p, int64_t i) {
  if (dt == DML_DTYPE_F32) return (double)((const float *)p)[i];
  if (dt == DML_DTYPE_F64) return ((const double *)p)[i];
  return dml_load_f64(dt, p, (size_t)i);
}
static inline void dml_cpu_st(dml_dtype_t dt, void *p, int64_t i, double v) {
  if (dt == DML_DTYPE_F32)
    ((float *)p)[i] = (float)v;
  else if (dt == DML_DTYPE_F64)
    ((double *)p)[i] = v;
  else
    dml_store_f64(dt, p, (size_t)i, v);
}

/* ---- vectorized activations (cpu_vmath.c) ------------------------------ */

/* In place over n f32 values: x = 1 / (1 + e^-x), and x = tanh(x), with
 * the polynomial exp of cpu_vmath.c (its header states the accuracy: about
 * 3e-7 relative for sigmoid, 1e-6 for tanh; NaN stays NaN, tanh(-0) = -0),
 * vectorized per instruction set (AVX-512, AVX2, baseline/arm64). */
void dml_cpu_vsigmoid_f32(float *x, int64_t n);
/* y[i] = 1 / (1 + e^-x[i]) for n f32 values (y may be x: the Sigmoid op's
 * f32 kernel): dml_cpu_vsigmoid_f32's formula, four vectors interleaved,
 * within about 3e-7 relative for x >= -87; below, libm's e^x (which
 * 1 + e^x rounds to there): 0 at -inf, 1 at +inf, NaN kept. */
void dml_cpu_sigmoid_f32(const float *x, float *y, int64_t n);
/* y[i] = e^(x[i] - m) (the subtraction in f32) for n values, same exp
 * (about 2 ulp; 0 below -87.3 and at -inf; NaN where x[i] - m is NaN); y
 * may be x. */
void dml_cpu_vexp_sub_f32(const float *x, float m, float *y, int64_t n);
/* y[i] = erf(x[i]) for n f32 values, computed in double and rounded once
 * (cpu_vmath.c: libm's double erf rounded to f32 but within about 1e-14 of
 * a rounding tie; +-1 beyond |x| = 4, NaN stays NaN, -0 stays -0); y may be
 * x. The f32 Erf of the formula table. */
void dml_cpu_verf_f32(const float *x, float *y, int64_t n);
void dml_cpu_vtanh_f32(float *x, int64_t n);
/* One batch row of one LSTM step with the default activations (f =
 * sigmoid, g = h = tanh) and input_forget 0, in 16-lane vectors: xr [4H]
 * the row's input projection with its biases and g [4H] its H_{t-1} R^T
 * (gate order i, o, f, c), P [3H] the peepholes (Pi, Po, Pf) or NULL, clip
 * the cell clip (<= 0: none), c [H] the cell state C_{t-1} in and C_t out,
 * h [H] H_t out (also o in between; h may not overlap xr, g or c). A first
 * pass makes i, f, o (its four exps interleaved, three with peepholes) and
 * C_t, a second H_t = o tanh(C_t) four vectors at a time. The same
 * operations per value in the same order, with the sigmoid and tanh of
 * dml_cpu_vsigmoid_f32 / dml_cpu_vtanh_f32, as cpu_rnn.c's per-gate loops,
 * so the same bits; nothing is written to xr or g. H >= 0, any value. */
void dml_cpu_lstm_cell_f32(const float *xr, const float *g, const float *P, float clip,
                           float *c, float *h, int64_t H);
/* A GRU step's gate math for one batch row with the default activations
 * (f = sigmoid for z and r, g = tanh for the candidate), in 16-lane
 * vectors, two vectors (32 units) at a time with their exps interleaved;
 * xr [3H] the row's input projection with the biases that add outside the
 * recurrence, g [n0] its H_{t-1} R^T (gate order z, r, h; n0 = 2H without
 * linear_before_reset, 3H with), clip the cell clip (<= 0: none), h [H]
 * H_{t-1} in and H_t out. The same operations per value in the same order
 * as cpu_rnn.c's per-gate loops (sigmoid and tanh of dml_cpu_vsigmoid_f32 /
 * dml_cpu_vtanh_f32), so the same bits; H >= 0, any value.
 * dml_cpu_gru_gates_f32 (linear_before_reset 0, before the R_h product):
 * z and r into g[0, 2H) and, when rh is set, rh [H] = r (.) h.
 * dml_cpu_gru_cell_f32: with hh set (linear_before_reset 0: hh [H] the
 * (r (.) H_{t-1}) R_h^T product, z read from g) the candidate tanh(xr_h +
 * hh) and H_t; with hh NULL (linear_before_reset 1) z, r, the candidate
 * tanh(xr_h + r (.) (g_h + Rbh)) (Rbh [H], or NULL for none) and H_t in one
 * pass, nothing written but h. h may not overlap xr, g, hh or Rbh. */
void dml_cpu_gru_gates_f32(const float *xr, float *g, float clip, const float *h,
                           float *rh, int64_t H);
void dml_cpu_gru_cell_f32(const float *xr, const float *g, const float *hh,
                          const float *Rbh, float clip, float *h, int64_t H);
/* The largest of the n >= 1 f32 values at x as the scan m = x[0];
 * m = x[i] > m ? x[i] : m finds it (NaN only when x[0] is NaN), vectorized;
 * the sign of a zero maximum may differ from the scan's when +0 and -0 both
 * occur. */
float dml_cpu_vmax_f32(const float *x, int64_t n);
/* x[i] = x[i] < 0 ? 0 : x[i] for n f32 values (Relu: NaN and -0 kept),
 * vectorized. */
void dml_cpu_vrelu_f32(float *x, int64_t n);
/* x[i] *= s for n f32 values, vectorized. */
void dml_cpu_vscale_f32(float *x, float s, int64_t n);

/* ---- thread pool (cpu_threads.c) -------------------------------------- */

/* GEMMs (and ConvTransposes) below this many multiply-adds run on the
 * calling thread: waking sleeping workers costs tens of microseconds (a
 * condition variable round trip), more than such a kernel takes on one core
 * (bench/RESULTS.md has the figures before and after). Convolutions split
 * from DML_CPU_CONV_PARALLEL_MIN_MACS (below), lower: their tasks
 * include the im2col, and back-to-back jobs find the workers spinning. */
#define DML_CPU_PARALLEL_MIN_MACS 32000000.0
/* Convolutions from this many multiply-adds (all images) are spread over
 * the pool (cpu_conv.c by (image, group, output-column chunk): each task
 * packs its own columns and runs its GEMM on one thread, so no step is
 * serial; cpu_nchwc.c by image). Below it the pool's hand-off (a few
 * microseconds while workers spin) is not worth it. */
#define DML_CPU_CONV_PARALLEL_MIN_MACS 2000000.0

/* Runs fn(ctx, i, tid) for i in [0, n) on up to `max_threads` threads (the
 * caller included, tid in [0, max_threads)) and returns when all are done.
 * Serial (tid 0) when the pool has one thread or is busy with another
 * caller. */
typedef void (*dml_cpu_task_fn)(void *ctx, int64_t i, int tid);
void dml_cpu_parallel_for(int64_t n, int max_threads, dml_cpu_task_fn fn, void *ctx);
/* Tests only (not thread-safe): on (1, the default) a parallel job that
 * ended no sooner than the caller alone would have makes the next jobs run
 * on the caller alone for a while (cpu_threads.c's straggler back-off);
 * off (0) every job is offered to the workers. Returns the previous
 * setting. */
int dml_cpu_pool_backoff_set(int on);
/* The thread count set by dml_cpu_set_num_threads (default 1). */
int dml_cpu_num_threads(void);

/* Function multi-versioning for loops the compiler vectorizes: compiled for
 * AVX-512, AVX2 and baseline, picked at load time (x86-64 Linux only).
 * DML_CPU_NO_CLONES turns it off (ThreadSanitizer builds: TSan instruments
 * the ifunc resolvers, which run before it is initialized) but keeps the
 * GEMM's AVX2/AVX-512 micro-kernels (DML_CPU_X86), picked by a CPU check. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__) && !defined(__clang__)
#define DML_CPU_X86 1
#else
#define DML_CPU_X86 0
#endif
#if DML_CPU_X86 && !defined(DML_CPU_NO_CLONES)
#define DML_CPU_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define DML_CPU_CLONES
#endif

/* Sum of the n contiguous f32 values at x, in double: blocks of
 * DML_CPU_SUM_BLOCK values, each summed in 32 f32 lanes (vectorized, 32
 * additions in sequence per lane) and the lanes pairwise, the block sums
 * accumulated in double; so the error stays within about 40 f32 roundings
 * of sum |x| however long the row (sums of millions of values in 8
 * sequential lanes drifted by up to 0.7%). cpu_reduce.c. */
#define DML_CPU_SUM_BLOCK 1024
double dml_cpu_sum_f32(const float *x, int64_t n);

/* ---- kernel table ----------------------------------------------------- */

typedef dml_status_t (*dml_cpu_kernel_fn)(const dml_cpu_call_t *c);
/* Scratch bytes for the call when `threads` threads work on it; kernels
 * use as many threads as the scratch they are given allows. */
typedef size_t (*dml_cpu_scratch_fn)(const dml_cpu_call_t *c, int threads);

#define DML_CPU_DECL(name) dml_status_t dml_cpuk_##name(const dml_cpu_call_t *c);
#define DML_CPU_DECL_S(name)                             \
  dml_status_t dml_cpuk_##name(const dml_cpu_call_t *c); \
  size_t dml_cpus_##name(const dml_cpu_call_t *c, int threads);

/* elementwise */
DML_CPU_DECL(Unary)
DML_CPU_DECL(EwTable)
/* The value of the formula table's op `op` (runtime/base/ew_ops.def, DML_EW
 * and DML_EWN) at x in double, attribute values `a` (dml_ew_attrs; the RNN
 * activations share them; NULL for DML_EWN's); x itself for an op not in
 * the table. */
double dml_cpu_ew_f64(dml_op_t op, const double *a, double x);
/* The kernel of ew_ops.def's DML_EWN ops (Abs, Neg, Relu, Sign, Exp, ...):
 * input 0 to output 0 of its dtype and size; errors: a dtype the op has
 * no form for, a size mismatch. */
dml_status_t dml_cpu_ewn(const dml_cpu_call_t *c);
DML_CPU_DECL(Binary)
DML_CPU_DECL(Variadic)
DML_CPU_DECL(Cast)
DML_CPU_DECL(Clip)
DML_CPU_DECL(Where)
DML_CPU_DECL(PRelu)
/* linalg, conv, pool */
DML_CPU_DECL_S(MatMul)
DML_CPU_DECL_S(Gemm)
DML_CPU_DECL_S(Conv)
DML_CPU_DECL_S(ConvTranspose)
DML_CPU_DECL(MaxPool)
DML_CPU_DECL(AveragePool)
DML_CPU_DECL(GlobalPool)
/* normalization, softmax */
DML_CPU_DECL(BatchNormalization)
DML_CPU_DECL(LayerNormalization)
DML_CPU_DECL(RMSNormalization)
DML_CPU_DECL_S(Attention)
DML_CPU_DECL(RotaryEmbedding)
DML_CPU_DECL(Bitwise)
DML_CPU_DECL(LpNormalization)
DML_CPU_DECL(GroupNormalization)
DML_CPU_DECL(InstanceNormalization)
DML_CPU_DECL(Softmax)
/* reductions */
DML_CPU_DECL_S(Reduce)
DML_CPU_DECL(ArgReduce)
/* shape and data movement */
DML_CPU_DECL(View)
DML_CPU_DECL(Dropout)
DML_CPU_DECL(Transpose)
DML_CPU_DECL(Concat)
DML_CPU_DECL(Split)
DML_CPU_DECL(Slice)
DML_CPU_DECL(Gather)
DML_CPU_DECL(Shape)
DML_CPU_DECL(Size)
DML_CPU_DECL(Expand)
DML_CPU_DECL(Tile)
DML_CPU_DECL_S(Pad)
DML_CPU_DECL(ConstantOfShape)
DML_CPU_DECL(Range)
DML_CPU_DECL_S(Resize)
/* recurrent, losses, quantization (cpu_rnn.c, cpu_loss.c, cpu_quant.c) */
DML_CPU_DECL_S(RNN)
DML_CPU_DECL_S(GRU)
DML_CPU_DECL_S(LSTM)
DML_CPU_DECL(NegativeLogLikelihoodLoss)
DML_CPU_DECL_S(SoftmaxCrossEntropyLoss)
DML_CPU_DECL(QuantizeLinear)
DML_CPU_DECL(DequantizeLinear)
DML_CPU_DECL(FakeQuantize)
DML_CPU_DECL(FakeQuantizeGrad)
DML_CPU_DECL(DynamicQuantizeLinear)
DML_CPU_DECL(MatMulInteger)
DML_CPU_DECL(ConvInteger)
DML_CPU_DECL(QLinearMatMul)
DML_CPU_DECL_S(QLinearConv)
DML_CPU_DECL(QLinearAdd)
/* MatMulWQ (cpu_wq_gemm.c): weight-only int8/int4 GEMM. dml_cpu_wq_set_isa
 * forces its micro-kernel (tests): 0 portable C, 1 NEON (arm64), 2 AVX2+FMA,
 * 3 AVX-512, -1 back to the machine's pick; -1 when this machine lacks it. */
DML_CPU_DECL_S(MatMulWQ)
int dml_cpu_wq_set_isa(int which);
/* data-dependent output shapes (cpu_dynamic.c) */
DML_CPU_DECL(NonZero)
DML_CPU_DECL_S(Unique)
DML_CPU_DECL(Compress)
DML_CPU_DECL_S(NonMaxSuppression)
/* signal (cpu_signal.c) */
DML_CPU_DECL(Window)
DML_CPU_DECL(DFT)
DML_CPU_DECL(STFT)
DML_CPU_DECL(Col2Im)
DML_CPU_DECL(AffineGrid)
DML_CPU_DECL(DeformConv)
DML_CPU_DECL(MelWeightMatrix)
/* text (cpu_text.c) */
DML_CPU_DECL_S(TfIdfVectorizer)
/* strings (cpu_strings.c) */
DML_CPU_DECL(StringConcat)
DML_CPU_DECL(StringSplit)
DML_CPU_DECL(StringNormalizer)
DML_CPU_DECL(RegexFullMatch)
DML_CPU_DECL(LabelEncoder)
/* ai.onnx.ml (cpu_ml.c) */
DML_CPU_DECL_S(TreeEnsemble)
/* A call with a string input or output: Cast and Equal run the string
 * kernels, ops that do not take strings fail (UNIMPLEMENTED naming the op);
 * returns 1 with *out set when handled, 0 to run the table's kernel. */
int dml_cpu_strings_route(const dml_cpu_call_t *c, dml_status_t *out);
/* cpu_shrink_isinf_bitshift.c, cpu_axis_ops.c (issue #3 ops) */
DML_CPU_DECL(Unary2)
DML_CPU_DECL(IsSpecial)
DML_CPU_DECL(BitShift)
DML_CPU_DECL(CastLike)
DML_CPU_DECL(Hardmax)
DML_CPU_DECL(Reduce2)
DML_CPU_DECL(CumSum)
DML_CPU_DECL(CumProd)
DML_CPU_DECL(Trilu)
DML_CPU_DECL(EyeLike)
DML_CPU_DECL(LRN)
DML_CPU_DECL(MeanVarianceNormalization)
/* ONNX opsets 24..28 (cpu_bitcast_tensorscatter.c) */
DML_CPU_DECL(BitCast)
DML_CPU_DECL(TensorScatter)
/* optimizers of ai.onnx.preview.training (cpu_optim.c) */
DML_CPU_DECL(Optimizer)
DML_CPU_DECL(Assign)
DML_CPU_DECL_S(ConvWeightGrad)
DML_CPU_DECL_S(ConvInputGrad)
DML_CPU_DECL(MaxPoolGrad)
DML_CPU_DECL(AveragePoolGrad)
/* random ops (cpu_random.c) */
DML_CPU_DECL(RandomUniform)
DML_CPU_DECL(RandomNormal)
DML_CPU_DECL(Bernoulli)
DML_CPU_DECL(Multinomial)
/* Dropout in training mode with this ratio (called by dml_cpuk_Dropout). */
dml_status_t dml_cpu_dropout_train(const dml_cpu_call_t *c, double ratio);

#endif /* DML_CPU_INTERNAL_H_ */
