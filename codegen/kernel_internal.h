/* kernel_internal.h — the kernel IR's pool and builders (codegen/ only). */
#ifndef DML_KERNEL_INTERNAL_H_
#define DML_KERNEL_INTERNAL_H_

#include <stddef.h>

#include "dml_kernel.h"

/* A bump allocator owning a plan's memory (blocks chained). */
typedef struct dml_kpool {
  struct dml_kpool_block *head;
  int failed; /* an allocation failed: the builders return NULL from then on */
} dml_kpool_t;

/* Zeroed, 16-byte aligned; NULL (and p->failed) when out of memory. */
void *dml_kpool_alloc(dml_kpool_t *p, size_t bytes);
void dml_kpool_free(dml_kpool_t *p);

/* Index builders (NULL operands propagate NULL). ADD/MUL/DIV/MOD fold
 * constants and the identities x+0, x*1, x*0, x/1, x%1. */
const dml_kidx_t *dml_ki_const(dml_kpool_t *p, int64_t c);
const dml_kidx_t *dml_ki_var(dml_kpool_t *p, int32_t var);
const dml_kidx_t *dml_ki_sym(dml_kpool_t *p, int32_t sym);
/* Integer kernel value v (i64 or i32) as an index (DML_KI_VAL). */
const dml_kidx_t *dml_ki_val(dml_kpool_t *p, const struct dml_kval *v);
const dml_kidx_t *dml_ki_bin(dml_kpool_t *p, dml_kidx_kind_t k, const dml_kidx_t *a,
                             const dml_kidx_t *b);
/* c * sym (or c when sym < 0) as an index expression. */
const dml_kidx_t *dml_ki_lin(dml_kpool_t *p, dml_klin_t l);

const dml_kval_t *dml_kv_const(dml_kpool_t *p, float c);
const dml_kval_t *dml_kv_load(dml_kpool_t *p, dml_kbuf_t buf, const dml_kidx_t *idx);
const dml_kval_t *dml_kv_tile(dml_kpool_t *p, uint32_t tile, const dml_kidx_t *idx);
/* Element idx of tile `tile` whose elements are of dtype t (the kernel's
 * tile_dtype[tile]). */
const dml_kval_t *dml_kv_tile_t(dml_kpool_t *p, uint32_t tile, const dml_kidx_t *idx,
                                dml_kdtype_t t);
const dml_kval_t *dml_kv_reg(dml_kpool_t *p, uint32_t reg);
/* fn(a) / fn(a, b) (b ignored for unary fns); the result's dtype follows
 * the function: bool for compares and logic, a's dtype otherwise. Not for
 * CAST (dml_kv_cast) nor SELECT (dml_kv_select). MUL of a floating
 * constant +-0 and x is built as x * (x - x) (negated for -0): the same
 * IEEE value, which drivers cannot fold to 0 (kernel_ir.c). */
const dml_kval_t *dml_kv_fn(dml_kpool_t *p, dml_kfn_t fn, const dml_kval_t *a,
                            const dml_kval_t *b);

/* Typed builders (NULL operands propagate NULL). */
/* c of dtype t (integers wrap to t's width; bool: c != 0; float dtypes:
 * (float)c). */
const dml_kval_t *dml_kv_iconst(dml_kpool_t *p, dml_kdtype_t t, int64_t c);
/* A float constant c of float dtype t (f32, f16, bf16, f64: c itself; the
 * renderers write it exactly). */
const dml_kval_t *dml_kv_fconst(dml_kpool_t *p, dml_kdtype_t t, float c);
/* The zero (false) or the one (true) of dtype t. */
const dml_kval_t *dml_kv_zero(dml_kpool_t *p, dml_kdtype_t t);
const dml_kval_t *dml_kv_one(dml_kpool_t *p, dml_kdtype_t t);
const dml_kval_t *dml_kv_load_t(dml_kpool_t *p, dml_kbuf_t buf, dml_kdtype_t t,
                                const dml_kidx_t *idx);
const dml_kval_t *dml_kv_reg_t(dml_kpool_t *p, uint32_t reg, dml_kdtype_t t);
const dml_kval_t *dml_kv_idx(dml_kpool_t *p, dml_kdtype_t t, const dml_kidx_t *idx);
/* The f32 whose bits are the u32 index expression idx (DML_KV_BITS). */
const dml_kval_t *dml_kv_bits_f32(dml_kpool_t *p, const dml_kidx_t *idx);
/* Constant table `ctab` of the kernel (dtype t, f32 or i32) at idx. */
const dml_kval_t *dml_kv_ctab(dml_kpool_t *p, uint32_t ctab, dml_kdtype_t t,
                              const dml_kidx_t *idx);
/* a converted to dtype t (a itself when a is of dtype t). */
const dml_kval_t *dml_kv_cast(dml_kpool_t *p, dml_kdtype_t t, const dml_kval_t *a);
/* cond ? a : b (cond bool, a and b of one dtype). */
const dml_kval_t *dml_kv_select(dml_kpool_t *p, const dml_kval_t *cond,
                                const dml_kval_t *a, const dml_kval_t *b);
/* The i32 random bits (w >> 8, in [0, 2^24)) of element `idx` of random
 * stream `stream` (DML_KV_PHILOX); seed_lo .. step_hi are i32 values
 * holding the words' bits. NULL operands propagate NULL. */
const dml_kval_t *dml_kv_philox(dml_kpool_t *p, const dml_kidx_t *idx, uint32_t stream,
                                const dml_kval_t *seed_lo, const dml_kval_t *seed_hi,
                                const dml_kval_t *step_lo, const dml_kval_t *step_hi);
/* The whole Philox word (u32) of element `idx` of the stream, for the
 * 53-bit uniforms of f64 outputs (DML_KV_PHILOX of dtype u32). */
const dml_kval_t *dml_kv_philox_word(dml_kpool_t *p, const dml_kidx_t *idx,
                                     uint32_t stream, const dml_kval_t *seed_lo,
                                     const dml_kval_t *seed_hi, const dml_kval_t *step_lo,
                                     const dml_kval_t *step_hi);
/* Scalar functions composed from the primitive ones (kernel_math.c); NULL
 * operands propagate NULL. */
/* 1 for x > 0, else 0 (x finite). */
const dml_kval_t *dml_kv_step(dml_kpool_t *p, const dml_kval_t *x);
/* -1, 0 or 1 (ONNX Sign). */
const dml_kval_t *dml_kv_sign(dml_kpool_t *p, const dml_kval_t *x);
/* c > 0 ? a : b, for finite a and b. */
const dml_kval_t *dml_kv_select_pos(dml_kpool_t *p, const dml_kval_t *c,
                                    const dml_kval_t *a, const dml_kval_t *b);
/* erf(x): Abramowitz & Stegun 7.1.26, absolute error < 1.5e-7. */
const dml_kval_t *dml_kv_erf(dml_kpool_t *p, const dml_kval_t *x);
/* atan(x): minimax polynomial with reciprocal range reduction, absolute
 * error < 2e-6. */
const dml_kval_t *dml_kv_atan(dml_kpool_t *p, const dml_kval_t *x);
/* asin(x) = atan(x / sqrt(1 - x^2)) (NaN outside [-1, 1]). */
const dml_kval_t *dml_kv_asin(dml_kpool_t *p, const dml_kval_t *x);
/* Round half to even (ONNX Round) for finite x. */
const dml_kval_t *dml_kv_round_even(dml_kpool_t *p, const dml_kval_t *x);
/* a ** b with C99 Annex F / IEEE 754 pow semantics for every f32 operand
 * (negative bases with integral exponents signed by parity, non-integral
 * ones NaN; pow(+-0, b < 0) = +-inf; pow(x, +-0) = pow(1, y) = 1, NaN
 * operands included; infinities), from the renderers' pow of a positive
 * finite base. */
const dml_kval_t *dml_kv_pow(dml_kpool_t *p, const dml_kval_t *a, const dml_kval_t *b);
/* x > 0 ? 1 : x < 0 ? -1 : x (ONNX Sign of floats: +-0 and NaN kept). */
const dml_kval_t *dml_kv_sign_nan(dml_kpool_t *p, const dml_kval_t *x);
/* log(1 + x) without cancellation for small |x| (Goldberg's form). */
const dml_kval_t *dml_kv_log1p(dml_kpool_t *p, const dml_kval_t *x);
/* tanh(x) = e / (e + 2), e = expm1(2x): no cancellation near 0 (lavapipe's
 * tanh(x) is 3e-8 for every |x| < 3e-8), +-1 beyond |x| > 10. */
const dml_kval_t *dml_kv_tanh(dml_kpool_t *p, const dml_kval_t *x);
/* log(x): log1p(x - 1) on [1/2, 2], subnormals scaled by 2^64, else the
 * renderer's log. */
const dml_kval_t *dml_kv_log(dml_kpool_t *p, const dml_kval_t *x);
/* Round half to even for every f32 x: +-inf and NaN kept, -0 for a
 * negative x that rounds to 0. */
const dml_kval_t *dml_kv_round_half_even(dml_kpool_t *p, const dml_kval_t *x);
/* exp(x) - 1 without cancellation near 0 (Taylor below |x| < 1/2). */
const dml_kval_t *dml_kv_expm1(dml_kpool_t *p, const dml_kval_t *x);
/* erfc(x) with relative error < 1.2e-7 for x >= 0 (Numerical Recipes'
 * erfcc), 2 - erfc(-x) below 0. */
const dml_kval_t *dml_kv_erfc(dml_kpool_t *p, const dml_kval_t *x);
/* The value of op `op` of the elementwise formula table
 * (runtime/base/ew_ops.def) at the f32 value x, with attribute values `a`
 * (dml_ew_attrs); NULL for an op not in the table. */
const dml_kval_t *dml_kv_ew(dml_kpool_t *p, dml_op_t op, const dml_kval_t *x,
                            const double *a);
/* dml_kv_ew with the attribute values as f32 kernel values `a`
 * (DML_EW_MAX_ATTRS of them): constants, or values known at dispatch only
 * (DML_KV_BITS of a push-constant word: the eager library). A string
 * attribute's form (ew_ops.def IFA) is chosen when the formula is built
 * for a constant, by a select on a != 0 otherwise (both forms computed). */
const dml_kval_t *dml_kv_ew_v(dml_kpool_t *p, dml_op_t op, const dml_kval_t *x,
                              const dml_kval_t *const *a);
/* The value of ew_ops.def's DML_EWN op `op` (Abs, Neg, Relu, Sign, Exp,
 * ...) at x, in x's dtype (integers for the ops with an integer form);
 * NULL for another op. */
const dml_kval_t *dml_kv_ewn(dml_kpool_t *p, dml_op_t op, const dml_kval_t *x);
/* The value of ew_ops.def's DML_EW2 op `op` (Add, Sub, Mul, Div, Pow, Mod,
 * Max, Min) at x, y of one dtype (float or integer), with attribute values
 * `a` (dml_ew_attrs: Mod's fmod); NULL for another op. */
const dml_kval_t *dml_kv_ew2(dml_kpool_t *p, dml_op_t op, const dml_kval_t *x,
                             const dml_kval_t *y, const double *a);
/* dml_kv_ew2 with the attribute values as f32 kernel values `a`
 * (dml_kv_ew_v's rules: Mod's fmod chosen by a select when not a
 * constant). */
const dml_kval_t *dml_kv_ew2_v(dml_kpool_t *p, dml_op_t op, const dml_kval_t *x,
                               const dml_kval_t *y, const dml_kval_t *const *a);

/* Random values of the scheduler (schedule_random.c). */
/* The 24 random bits (an i32 in [0, 2^24)) that node `node` of `fn` draws
 * for its element `i`: the node's stream of dml_philox.h (its `seed`
 * attribute, else the session seed, and the run's step, read from the
 * random-state slot past fn's planned arena), as runtime/cpu/cpu_random.c
 * draws its 32-bit uniform u = bits * 2^-24. */
const dml_kval_t *dml_ksched_philox24(dml_kpool_t *p, const dml_pkg_function_t *fn,
                                      uint32_t node, const dml_kidx_t *i);
/* The least k in [0, 2^24] with k * 2^-24 >= t: u >= t exactly when
 * bits >= k (0 for t <= 0 or NaN, 2^24 for t >= 1). */
int64_t dml_ksched_u24_threshold(double t);

/* 1 for the random ops the scheduler emits (RandomUniform(Like),
 * RandomNormal(Like), Bernoulli); each is a kernel of its own, one
 * element per invocation. */
int dml_ksched_random_op(dml_op_t op);
/* Why random op node `node` of fn has no kernel, or NULL: f32 outputs
 * (Bernoulli: f32 probabilities, an output of any kernel dtype, not
 * overlapping its input but in place). */
const char *dml_ksched_random_reject(const dml_pkg_function_t *fn, uint32_t node);
/* The value of element `i` of the random op's output, of its dtype, as
 * runtime/cpu/cpu_random.c computes it from the same Philox bits:
 * RandomUniform low + u (high - low) and RandomNormal mean + scale z
 * (Box-Muller) in f32 (the CPU: in double, so a few ulp apart);
 * Bernoulli u < p exactly. */
const dml_kval_t *dml_ksched_random_value(dml_kpool_t *p, const dml_pkg_function_t *fn,
                                          uint32_t node, const dml_kidx_t *i);

/* A statement list under construction. */
typedef struct dml_kblock {
  dml_kstmt_t *first, *last;
} dml_kblock_t;

dml_kstmt_t *dml_ks_new(dml_kpool_t *p, dml_kstmt_kind_t kind);
void dml_kblock_add(dml_kblock_t *b, dml_kstmt_t *s);

#endif /* DML_KERNEL_INTERNAL_H_ */
