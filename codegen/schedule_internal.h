/* schedule_internal.h — the scheduler's state, shared by schedule.c and the
 * files holding more of its kernel forms by op family
 * (schedule_elementwise.c, schedule_gemm_conv.c, schedule_reduce.c,
 * schedule_movement.c through schedule_common.h; schedule_index.c,
 * schedule_math.c, schedule_spatial.c, schedule_topk_dft_tfidf.c,
 * schedule_norm.c, schedule_rnn.c, schedule_dyn.c, schedule_rows.c).
 * codegen/ only. */
#ifndef DML_SCHEDULE_INTERNAL_H_
#define DML_SCHEDULE_INTERNAL_H_

#include "kernel_internal.h"

/* The reason given for a value whose count dml_klin_t cannot hold
 * (dml_ksched_numel). */
#define TOO_MANY_SYMS \
  "dims over too many symbols (a symbol in three dims or two squared symbols)"

/* One dml_kschedule() run over a function. */
typedef struct sched {
  const dml_pkg_graph_t *g;
  const dml_pkg_function_t *fn;
  const uint8_t *weights;
  uint64_t weights_size;
  dml_kpool_t *pool;
  uint32_t *n_uses_outside; /* per value: consumers (set per group) */
  uint32_t *group_of;       /* per node: kernel index + 1, 0 = none */
  uint8_t *is_output;       /* per value */
  dml_status_t err;         /* unschedulable nodes, listed */
  dml_kernel_t *kernels;
  uint32_t n_kernels, cap_kernels;
  /* The open reduction's axes when an input fed at run time holds them
   * (dml_ksched_reduce_axes marks every dim -1 then), else NULL. */
  const dml_pkg_value_t *rt_axes;
  /* 1 while building a data-movement kernel: f16 and bf16 values move as
   * their 16-bit words (u16), bit for bit as the CPU copies them (NaN
   * payloads included), instead of through f32 */
  int raw16;
  /* dml_kschedule_host: per node, 1 = placed on the host (NULL: none);
   * per node, set to 1 when refused (NULL: not recorded) */
  const uint8_t *host;
  uint8_t *refused;
  /* dml_ksched_ew_node: the formula table ops' attribute values as f32
   * kernel values known at dispatch only (DML_EW_MAX_ATTRS of them: the
   * eager library's push-constant words), or NULL: the node's attributes,
   * as constants */
  const dml_kval_t *const *ew_attrs;
} sched_t;

/* Adds node `node` to the UNIMPLEMENTED error of the run with the reason
 * `why` (a complete sentence fragment, no format). */
void dml_ksched_unsupported(sched_t *s, uint32_t node, const char *why);

/* A new kernel of kind `kind` holding only node `node` (workgroup and grid
 * of one invocation, no body yet); NULL when out of memory. */
dml_kernel_t *dml_ksched_kernel(sched_t *s, dml_kernel_kind_t kind, uint32_t node);

/* schedule_wq.c: MatMulWQ (weight-only int8 / int4, dml_wq.h), dequantized
 * in the load stage. 1 when dml_ksched_wq_emit() has a form for op `op`. */
int dml_ksched_wq_handles(dml_op_t op);
void dml_ksched_wq_emit(sched_t *s, uint32_t node);

/* schedule_spatial.c: resampling (Resize, GridSample, RoiAlign,
 * MaxUnpool), windows of any rank (3-D Conv, MaxPool with Indices, ...),
 * Pad's reflect/edge/wrap modes, BatchNormalization in training mode and
 * the quantization ops. */

/* 1 when dml_ksched_spatial_emit() has a form for op `op`. */
int dml_ksched_spatial_handles(dml_op_t op);

/* 1 when node `node` takes one of schedule_spatial.c's forms (then the
 * caller closes its open group and calls dml_ksched_spatial_emit), 0 when the
 * caller's own forms take it. */
int dml_ksched_spatial_claims(const sched_t *s, uint32_t node);

/* Places claimed node `node`: its kernel, or an UNIMPLEMENTED detail
 * naming the node and why. */
void dml_ksched_spatial_emit(sched_t *s, uint32_t node);
/* schedule_index.c: Trilu, EyeLike, IsInf, IsNaN, BitShift, CumSum,
 * CumProd, ScatterElements, ScatterND, GatherND and ReverseSequence: one
 * kernel per node, each op's form described there. */

/* 1 when dml_ksched_index_emit() has a form for op `op`. */
int dml_ksched_index_handles(dml_op_t op);

/* Places node `node` (an op of dml_ksched_index_handles): its kernel, or an
 * UNIMPLEMENTED detail naming the node and why (dtype, form). */
void dml_ksched_index_emit(sched_t *s, uint32_t node);

/* schedule_math.c: LRN, MeanVarianceNormalization, Det, Einsum and the
 * training-preview optimizers Adagrad, Momentum and Adam: one kernel per
 * node, each op's form described there. */

/* 1 when dml_ksched_math_emit() has a form for op `op`. */
int dml_ksched_math_handles(dml_op_t op);

/* Places node `node` (an op of dml_ksched_math_handles): its kernel, or an
 * UNIMPLEMENTED detail naming the node and why (dtype, form). */
void dml_ksched_math_emit(sched_t *s, uint32_t node);

/* schedule_elementwise.c: BatchNormalization's inference value (the
 * compiled path's formula, ew_value's, and the eager library's
 * DML_EAGER_NORM kernel of given statistics): x[0] the element of X (f32,
 * f16 or bf16, widened exactly), x[1] .. x[4] its channel's scale, B, mean
 * and var (f32 or X's dtype), `eps` the f32 epsilon; in the affine form of
 * dml_cpu_bn_affine, all in f32: a = (1 / sqrt(var + eps)) * scale, y = x
 * * a + (B - mean * a), rounded once to x[0]'s dtype. */
const dml_kval_t *dml_ksched_bn_value(dml_kpool_t *p, const dml_kval_t *const *x,
                                      const dml_kval_t *eps);

/* schedule_norm.c, shared with the eager library's DML_EAGER_NORM kernel
 * (codegen/eager_lib_gen.c): 1 / sqrt(sumsq / L + eps) of the f32 sum of
 * squared deviations `sumsq` over a row of L elements (Lf: L as f32), and
 * the normalized, scaled and shifted value dev * inv * scale (+ B where `b`
 * is not NULL) of a deviation from the mean `dev`. */
const dml_kval_t *dml_ksched_norm_inv(dml_kpool_t *p, const dml_kval_t *sumsq,
                                      const dml_kval_t *Lf, const dml_kval_t *eps);
const dml_kval_t *dml_ksched_norm_affine(dml_kpool_t *p, const dml_kval_t *dev,
                                         const dml_kval_t *inv, const dml_kval_t *scale,
                                         const dml_kval_t *b);

/* schedule_norm.c: places LayerNormalization or InstanceNormalization node
 * `node`: its kernel, or an UNIMPLEMENTED detail naming the node and why. */
void dml_ksched_norm_emit(sched_t *s, uint32_t node);

/* schedule_attention.c: ONNX Attention as one fused FlashAttention-style
 * kernel (docs/kernels.md "Fused attention"). 1 when op `op` is one it
 * places; dml_ksched_attn_emit places node `node` or lists it UNIMPLEMENTED
 * with why (a KV cache, qk_matmul_output, dtype, shapes). */
int dml_ksched_attn_handles(dml_op_t op);
void dml_ksched_attn_emit(sched_t *s, uint32_t node);

/* schedule_rnn.c: places RNN, GRU or LSTM node `node`: its kernel, or an
 * UNIMPLEMENTED detail naming the node and why. */
void dml_ksched_rnn_emit(sched_t *s, uint32_t node);

/* schedule_dyn.c: NonZero, Compress, Unique and NonMaxSuppression, whose
 * kernels count their output extents on the device and store them in the
 * dims slot (docs/kernels.md "Data-dependent output sizes"). */

/* 1 when dml_ksched_dyn_emit() has a form for op `op`. */
int dml_ksched_dyn_handles(dml_op_t op);

/* Places node `node` (an op of dml_ksched_dyn_handles): its kernel, or an
 * UNIMPLEMENTED detail naming the node and why. */
void dml_ksched_dyn_emit(sched_t *s, uint32_t node);

/* schedule_topk_dft_tfidf.c: TopK, DFT and TfIdfVectorizer, one kernel
 * per node, each op's form described there. */

/* 1 when dml_ksched_topk_dft_tfidf_emit() has a form for op `op`. */
int dml_ksched_topk_dft_tfidf_handles(dml_op_t op);

/* Places node `node` (an op of dml_ksched_topk_dft_tfidf_handles): its kernel, or an
 * UNIMPLEMENTED detail naming the node and why (dtype, form). */
void dml_ksched_topk_dft_tfidf_emit(sched_t *s, uint32_t node);

/* max(a, b) (`is_max`) or min(a, b) as the CPU computes them (a NaN
 * operand gives NaN for floats; schedule_common.h's nan_max). */
const dml_kval_t *dml_ksched_nan_max(dml_kpool_t *p, const dml_kval_t *a,
                                     const dml_kval_t *b, int is_max);

/* Numel of type t as a dml_klin_t: c times the symbols of its symbolic
 * dims (any number of symbols; one of them may occur in two dims, a square
 * such as attention's [batch, heads, seq, seq]); 0 when dml_klin_t cannot
 * hold it (a symbol in three dims, two squared symbols, a symbol index of
 * 32 or above). schedule_common.h's type_numel. */
int dml_ksched_numel(const dml_type_t *t, dml_klin_t *out);

/* 1 when a symbol occurs in two dims of t: the window kernels (Conv,
 * pools) and Resize take one symbol per spatial dim. */
int dml_ksched_sym_repeats(const dml_type_t *t);

/* acc += mul * x for work estimates (dmlc bench): a term over other
 * symbols than acc's is left out (schedule_common.h's lin_add). */
void dml_ksched_lin_add(dml_klin_t *acc, dml_klin_t x, int64_t mul);

/* Count l divided by the extent of dim d of the type it counts (d's static
 * factor and one occurrence of its symbol): the rows of a row-wise kernel
 * along d. */
dml_klin_t dml_ksched_lin_div_dim(dml_klin_t l, dml_dim_t d);

/* Largest value of count `l` at the symbols' bounds (saturating;
 * schedule_common.h's lin_max). */
int64_t dml_ksched_lin_max(const sched_t *s, dml_klin_t l);

/* schedule_rows.c: cooperative row reductions, one workgroup of
 * DML_KROW_WG invocations per row (docs/kernels.md "Long rows"). */
#define DML_KROW_WG 256
/* Rows longer than this (at the bounds) take the cooperative form; shorter
 * ones keep one invocation per row. */
#define DML_KROW_MIN 256

/* Element j of a row as a value (f32), or a statement for element j. */
typedef const dml_kval_t *(*dml_krow_value_fn)(sched_t *s, const dml_kidx_t *j,
                                               void *ctx);
typedef dml_kstmt_t *(*dml_krow_stmt_fn)(sched_t *s, const dml_kidx_t *j, void *ctx);

/* 1 when rows of at most `row_len_max` elements take the cooperative form. */
int dml_krow_wanted(const sched_t *s, int64_t row_len_max);

/* Sets K's workgroup (DML_KROW_WG), grid (`rows` workgroups, at most
 * 65,535) and shared tile `tile` (DML_KROW_WG f32) and returns the index of
 * the workgroup's row: the workgroup id, or, with more rows than 65,535 at
 * the bounds, the workgroup id + 65,535 * loop variable `row_var` (then
 * dml_krow_finish wraps the body in that loop). */
const dml_kidx_t *dml_krow_setup(sched_t *s, dml_kernel_t *K, dml_klin_t rows,
                                 int32_t row_var, uint32_t tile);

/* The kernel body for `body`, the statements of the row of dml_krow_setup:
 * `body` itself, or the loop over the workgroup's turns with the test row <
 * rows (uniform over the workgroup). */
dml_kstmt_t *dml_krow_finish(sched_t *s, dml_klin_t rows, int32_t row_var,
                             dml_kstmt_t *body);

/* Appends to `b` the statements after which f32 register `reg` of every
 * invocation of the workgroup holds comb over j < n of value(j) (comb: add,
 * mul, or max/min keeping NaN; `init` its identity): 4 strided accumulators
 * per invocation (registers reg .. reg + 3, loop variable `var`, n / 1024
 * iterations), then a balanced tree through tile `tile`. */
void dml_krow_reduce(sched_t *s, dml_kblock_t *b, const dml_kidx_t *n, int32_t var,
                     dml_kfn_t comb, float init, dml_krow_value_fn value, void *ctx,
                     uint32_t reg, uint32_t tile);

/* dml_krow_reduce in the dtype of `init` (a constant of any register dtype:
 * f32, f64, the integers; value(j) of that dtype): tile `tile` of K is made
 * DML_KROW_WG elements of that dtype (integer sums wrap as the dtype's
 * arithmetic does, so the order does not change them). */
void dml_krow_reduce_t(sched_t *s, dml_kernel_t *K, dml_kblock_t *b, const dml_kidx_t *n,
                       int32_t var, dml_kfn_t comb, const dml_kval_t *init,
                       dml_krow_value_fn value, void *ctx, uint32_t reg, uint32_t tile);

/* An inclusive or exclusive scan (comb: add or mul, `init` its identity, of
 * the dtype the scan runs in) over a row of n elements by the workgroup:
 * chunks of 4 * DML_KROW_WG elements in order, invocation t taking the 4
 * adjacent elements 4t .. 4t + 3 of a chunk (value(j)), their serial
 * prefix, an exclusive scan of the 256 invocations' totals through tile
 * `tile` of K (Hillis-Steele, 8 steps of two barriers), the running carry
 * of the chunks before; store(j, v) receives each element's result. n / 1024
 * iterations of loop variable `var` per invocation. Registers reg .. reg +
 * 8. */
/* The f32 product over j < n of value(j) into register `reg` of every
 * invocation, compensated: each invocation multiplies its elements j = lid,
 * lid + 256, ... (4 per loop iteration, n / 1024 iterations) keeping the
 * product p and its error term e, p * a's rounding error found exactly by
 * Dekker's TwoProduct (Veltkamp's split written as x * 4096 + x, so that
 * contracting it into an fma changes nothing), then the pairs meet in a
 * tree through tiles `tile` and `tile` + 1; the result is p + e (p alone
 * where e is not finite: splits of values beyond 8e34 overflow). Error
 * about 2 ulp at any length, where a plain f32 product of n values drifts
 * by about sqrt(n) ulp (2.3e-4 measured over long rows). Registers reg ..
 * reg + 11. */
void dml_krow_prod_comp(sched_t *s, dml_kernel_t *K, dml_kblock_t *b, const dml_kidx_t *n,
                        int32_t var, dml_krow_value_fn value, void *ctx, uint32_t reg,
                        uint32_t tile);

typedef dml_kstmt_t *(*dml_krow_store_fn)(sched_t *s, const dml_kidx_t *j,
                                          const dml_kval_t *v, void *ctx);
void dml_krow_scan(sched_t *s, dml_kernel_t *K, dml_kblock_t *b, const dml_kidx_t *n,
                   int32_t var, dml_kfn_t comb, const dml_kval_t *init, int exclusive,
                   dml_krow_value_fn value, dml_krow_store_fn store, void *ctx,
                   uint32_t reg, uint32_t tile);

/* A loop (variable `var`) running body(j) for the row's elements j < n of
 * this invocation: j = lid, lid + DML_KROW_WG, ... */
dml_kstmt_t *dml_krow_each(sched_t *s, const dml_kidx_t *n, int32_t var,
                           dml_krow_stmt_fn body, void *ctx);

/* The most loop iterations an invocation of a kernel may run in all
 * (counted at the symbols' bounds) before its loop takes a cooperative
 * form: Mesa's lavapipe stops an invocation's loops after 65,535 iterations
 * counted together (docs/kernels.md "Long rows"); half of that leaves room
 * for the loops a count leaves out. */
#define DML_KLOOP_MAX 32768

/* A contraction per output element (a MatMul's K, an Einsum's summed
 * labels) over k < n: one invocation per output element looping over k
 * while its loops run at most DML_KLOOP_MAX iterations at the bounds, else
 * one workgroup per output element summing as dml_krow_reduce_t does. */
typedef struct {
  int coop;        /* a workgroup per output element */
  dml_klin_t rows; /* output elements */
  int32_t row_var; /* dml_krow_setup's loop variable of the turns */
} dml_kdot_t;

/* Sets K's workgroup and grid for the elements of output type `t`, each a
 * contraction whose serial loops run at most `n_max` iterations (the
 * cooperative form beyond DML_KLOOP_MAX), and fills d; returns the index of
 * the output element (the invocation id, or dml_krow_setup's row with
 * shared tile 0, loop variable `row_var` for the turns). */
const dml_kidx_t *dml_kdot_setup(sched_t *s, dml_kernel_t *K, const dml_type_t *t,
                                 int64_t n_max, int32_t row_var, dml_kdot_t *d);

/* Appends to `b` the statements after which register `reg` holds the sum
 * over k < n of value(k) in init's dtype (`init` its zero: f32, f64 or an
 * integer dtype; value of that dtype): a loop of variable `var` in k order,
 * or dml_krow_reduce_t through tile 0 (registers reg .. reg + 3, every
 * invocation of the workgroup holding the sum). Raises K->n_regs. */
void dml_kdot_sum(sched_t *s, dml_kernel_t *K, const dml_kdot_t *d, dml_kblock_t *b,
                  const dml_kidx_t *n, int32_t var, const dml_kval_t *init,
                  dml_krow_value_fn value, void *ctx, uint32_t reg);

/* K's body: `b` then `tail` (the output element's store), under the bounds
 * check of the output element `out`; in the cooperative form `tail` runs
 * in invocation 0 only, and the rows beyond 65,535 workgroups in turns. */
void dml_kdot_finish(sched_t *s, dml_kernel_t *K, const dml_kdot_t *d,
                     const dml_kidx_t *out, dml_kblock_t *b, dml_kstmt_t *tail);

/* Appends to `b` a fold over t < n in order: the statements body(t)
 * updating register `reg` (dtype t, holding the start value in every
 * invocation), each t after t - 1, so that the result is the serial
 * loop's exactly (a scatter's ordered updates). Serial: a loop of variable
 * `var`. Cooperative: stages of DML_KLOOP_MAX / 2 terms, stage g run by
 * invocation (g % 32) * 8 + g / 32 % 8 from the value stage g - 1 left in
 * tile 0 (of dtype t; a barrier between stages), so that no group of 8 or
 * 16 invocations (lavapipe's SIMD lanes, whose loop count is shared) loops
 * past DML_KLOOP_MAX plus the stages up to n of about 500,000; every
 * invocation's `reg` then holds the result. Variables var and var + 1. */
void dml_kdot_fold(sched_t *s, dml_kernel_t *K, const dml_kdot_t *d, dml_kblock_t *b,
                   const dml_kidx_t *n, int32_t var, dml_krow_stmt_fn body, void *ctx,
                   uint32_t reg, dml_kdtype_t t);

/* Appends to `b` the combine of register `reg` (dtype t) of the
 * workgroup's DML_KROW_WG invocations by comb (as dml_krow_reduce's) in a
 * balanced tree through tile `tile` (of dtype t, log2 DML_KROW_WG barrier
 * steps): every invocation's `reg` then holds the result. Every
 * invocation must reach it (uniform control flow). */
void dml_krow_combine(sched_t *s, dml_kblock_t *b, dml_kfn_t comb, dml_kdtype_t t,
                      uint32_t reg, uint32_t tile);

/* schedule_elementwise.c, for the eager kernel library
 * (codegen/eager_lib_gen.c): the value of elementwise node `node` of function
 * `fn` of `g` given its operands' values `x` (the formula the scheduler
 * fuses into its kernels, ew_value), built in `pool`. `attrs` (NULL: the
 * node's attributes, as constants): for the ops of the formula table
 * (ew_ops.def DML_EW and DML_EW2), DML_EW_MAX_ATTRS f32 values that stand
 * for the attributes A0.. (values read at dispatch). Returns NULL and sets
 * *out_value, or the reason the scheduler refuses the node
 * (dml_ksched_ew_reject's: dtype, attributes)
 * or "not a formula of its operands' elements" (Expand, OneHot,
 * BatchNormalization). */
/* Gather's element index along its axis from index value iv (kernel dtype
 * it, i64 or i32) and the axis' extent D: iv + D where iv is negative,
 * else iv (ONNX Gather-13); a caller loads x there only below D (an index
 * out of range, an error on the CPU, gives 0 instead of an access outside
 * x). The one definition of the rule: the compiled path's Gather and
 * GatherElements (dml_ksched_emit_gather) and the eager library's Gather
 * kernel (codegen/eager_lib_gen.c) take it. */
const dml_kidx_t *dml_ksched_gather_index(dml_kpool_t *p, const dml_kval_t *iv,
                                          dml_kdtype_t it, const dml_kidx_t *D);

const char *dml_ksched_ew_node(dml_kpool_t *pool, const dml_pkg_graph_t *g, uint32_t fn,
                               uint32_t node, const dml_kval_t *const *x,
                               const dml_kval_t *const *attrs,
                               const dml_kval_t **out_value);

/* schedule_index.c, for the eager kernel library: the value of IsNaN-9,
 * IsInf-10 (f32 x[0], a bool output) or BitShift-11 (unsigned x[0], x[1] of
 * the output's dtype) node `n` of s's function, the formula of their
 * kernels (emit_is_special, emit_bit_shift). `attrs` (NULL: the node's
 * attributes, as constants): f32 values known at dispatch, IsInf's
 * detect_positive (attrs[0]) and detect_negative (attrs[1]), BitShift's
 * direction (attrs[0]: 1 LEFT, 0 RIGHT), each not 0 for on. Returns NULL
 * and sets *out_value, or why the node has no such form. */
const char *dml_ksched_index_ew_value(sched_t *s, const dml_pkg_node_t *n,
                                      const dml_kval_t *const *x,
                                      const dml_kval_t *const *attrs,
                                      const dml_kval_t **out_value);

#endif /* DML_SCHEDULE_INTERNAL_H_ */
