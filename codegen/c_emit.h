/*
 * c_emit.h — the C-like rendering of kernel bodies shared by the GLSL
 * (spirv/glsl.c) and CUDA C (cuda/cuda.c) emitters: a growable text buffer
 * and the printers of index expressions, float values and statements,
 * parameterized by a dialect (how ids, symbols, special floats, scalar
 * functions and barriers are spelled). codegen/ only.
 */
#ifndef DML_C_EMIT_H_
#define DML_C_EMIT_H_

#include <stddef.h>

#include "dml_kernel.h"

/* A growable NUL-terminated text buffer; `oom` is set (and later writes
 * are dropped) when an allocation fails. */
typedef struct dml_sb {
  char *p;
  size_t n, cap;
  int oom;
} dml_sb_t;

void dml_sb_printf(dml_sb_t *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* How a dialect spells what differs between C-like languages. */
typedef struct dml_cdialect {
  /* The six built-in variables (DML_KVAR_GID_X .. DML_KVAR_WG_Y). */
  const char *var[DML_KVAR_FIRST_LOOP];
  const char *sym_fmt;      /* printf format of symbol %d's value: "pc.sym[%d]" */
  const char *nan_text;     /* a quiet NaN */
  const char *pinf, *ninf;  /* +inf, -inf */
  const char *float_suffix; /* after a finite constant: "" (GLSL) or "f" (C) */
  /* Scalar functions: value = pre[fn] a (mid[fn] b) post[fn]. */
  const char *pre[DML_KF_COUNT_];
  const char *mid[DML_KF_COUNT_];
  const char *post[DML_KF_COUNT_];
  const char *barrier;   /* statement text: "barrier();" */
  const char *uint_type; /* loop variables' type: "uint" / "unsigned" */
  /* Typed values (dml_kdtype_t order: f32, i64, i32, bool, u8, i8, f16,
   * bf16, f64, i16, u16, u32, u64). */
  const char *type[DML_KT_COUNT_]; /* register and cast types */
  int ctor_casts;                  /* 1: T(x) (GLSL), 0: ((T)(x)) (C) */
  const char *i64_suffix;          /* after an i64 constant: "l" / "ll" */
  const char *u64_suffix;          /* after a u64 constant: "ul" / "ull" */
  /* A bool loaded from / stored to a byte view:
   * u8_load_pre VIEW[i] u8_load_post, VIEW[i] = u8_store_pre v u8_store_post */
  const char *u8_load_pre, *u8_load_post, *u8_store_pre, *u8_store_post;
  /* u8 and i8 (i32 in registers): int_load_pre VIEW[i] ")", and
   * VIEW[i] = store_u8_pre v ")" / store_i8_pre v ")". */
  const char *int_load_pre, *store_u8_pre, *store_i8_pre;
  /* 16-bit words (f16, bf16, i16, u16 views): a loaded f16/bf16 word goes
   * through dml_h2f / dml_b2f as load16_pre VIEW[i] ")"; i16 and u16 load
   * as int_load_pre VIEW[i] ")"; stores are store_u16_pre v ")" (u16, and
   * f16/bf16 around dml_f2h / dml_f2b) and store_i16_pre v ")". */
  const char *load16_pre, *store_u16_pre, *store_i16_pre;
  /* f64 unary functions: f64_fn[fn] a ")" (NULL: not emitted for f64). */
  const char *f64_fn[DML_KF_COUNT_];
  /* Integer max/min/abs and sign (of every dtype): "max(" / "dml_max(". */
  const char *imax, *imin, *iabs, *sign;
  /* Optional (NULL: tile<N>[idx] always): a tile read whose index is
   * x * m (+ c) with m a multiple of 4 (so x * m floats from a 16-byte
   * aligned tile are 16-byte aligned) is spelled
   * tile_aligned_pre (tile number as %u) x * m tile_aligned_mid c "]",
   * which tells the compiler the alignment so that 4 adjacent reads can
   * become one vector load. */
  const char *tile_aligned_pre, *tile_aligned_mid;
  /* Optional (NULL: as is): a floating constant +-0 arm of a select is
   * spelled opaque_pre c ")", a value the compiler cannot see as a
   * constant. clang's NVPTX backend turns `x < 0 ? 0 : x` (Relu, ew_ops.def)
   * into max.NaN.f32(x, 0), which gives +0 for x = -0 where the select
   * (and the CPU) gives -0; it does so for no select whose arm is not a
   * constant. */
  const char *opaque_pre;
  /* A DML_KV_BITS value: u2f_pre idx "))", the u32 index expression's bits
   * read as an f32 ("uintBitsToFloat(uint(" / "__builtin_bit_cast(float,
   * (unsigned)("). */
  const char *u2f_pre;
  /* Optional (NULL: dml_h2f as every f16 load): an f16 load marked
   * dml_kval_t.arith is spelled h2f_arith VIEW[i] ")" (CUDA:
   * "dml_cvt_h2f(", the bare cvt.f32.f16). dml_h2f's select keeping a
   * NaN's sign and payload is opaque to clang (inline asm in one arm), so
   * a bounds-checked tap's load became a branch on the loaded word and
   * the taps' loads ran one after the other (docs/kernels.md "CUDA"). */
  const char *h2f_arith;
  /* Optional (NULL: ignored): printf format of the line before a FOR
   * statement with dml_kstmt_t.unroll > 0, given that count ("#pragma
   * unroll %d"). */
  const char *unroll_fmt;
} dml_cdialect_t;

/* The name of buffer `buf`'s view of dtype `t`: "arena", "arena_i64",
 * "arena_i32", "arena_u8" (bool and u8), "arena_i8", "arena_u16" (f16,
 * bf16 and u16), "arena_f64", "arena_i16", "arena_u32", "arena_u64",
 * "weights", "weights_i64", ... */
const char *dml_cemit_view(dml_kbuf_t buf, dml_kdtype_t t);

/* Appends "T rN = 0;" lines declaring the n_regs registers of `k`. */
void dml_cemit_regs(dml_sb_t *b, const dml_cdialect_t *d, const dml_kernel_t *k);

/* Appends the statements from `s` on (their nested bodies too), indented by
 * 2 * depth spaces. Index constants are unsigned ("7u"), registers r<N>,
 * tiles tile<N>, loop variables i<N>, buffers arena[] and weights[] and
 * their typed views (dml_cemit_view); integer DIV and the typed functions
 * IMOD and FMOD call dml_idiv, dml_imod and dml_fmod, which the dialect's
 * typed prelude defines as the CPU backend computes them (a divisor of 0
 * gives 0; of -1, -a and 0, with no overflow trap). A DML_KV_PHILOX value
 * calls dml_philox24(index, stream, seed_lo, seed_hi, step_lo, step_hi)
 * (dml_philox32 for the whole word, a u32 value), which the dialect's
 * prelude defines (Philox4x32-10, dml_philox.h). */

/* C99's fmod (Annex F.10.7.1, exact) as the text of a macro
 * DML_FMOD_FN(QUAL, T, NANV, ABS, ISINF) that every GPU dialect expands for
 * its float types (GLSL: `DML_FMOD_FN(, float, uintBitsToFloat(0x7fc00000u),
 * abs, isinf)`; CUDA: DML_DEV and the __builtin_ forms): NaN for
 * a NaN operand, an infinite a or b = 0; a itself for |a| < |b| (+-0 and an
 * infinite b included); else |a| reduced by t = |b| 2^k from the largest
 * not above it down to |b|, subtracting where t <= x (exact: x < 2t), at
 * most 2 x 277 steps for f32 (2 x 2099 for f64), with a's sign. Doublings
 * and halvings, not frexp/ldexp (undefined beyond an exponent of 128 in
 * GLSL, and lavapipe reads subnormals as 0). The forms it replaced were
 * wrong at the edges: a - b trunc(a / b) (GLSL) was NaN for b = +-inf and
 * wrong where a / b is beyond 2^24; clang's __builtin_fmodf for NVPTX
 * (CUDA) gave inf and NaN for the same inputs (tests/cuda/edge_cases.py,
 * prelu_shrink_mod). */
extern const char dml_c_fmod_macro[];
void dml_cemit_stmts(dml_sb_t *b, const dml_cdialect_t *d, const dml_kstmt_t *s,
                     int depth);

/* Helpers both dialects share, written with the macros DML_FN (function
 * qualifiers), DML_U (32-bit unsigned), DML_F2U / DML_U2F (bit casts)
 * that the renderer defines first: dml_f2h / dml_h2f (IEEE binary16 <->
 * f32), dml_f2b / dml_b2f (bfloat16 <-> f32) and dml_rh / dml_rb (an f32
 * rounded to f16 / bf16), bit for bit as runtime/base/dml_dtype.c's
 * dml_f32_to_f16, dml_f16_to_f32, dml_f32_to_bf16 and dml_bf16_to_f32
 * (round to nearest even; NaN stays NaN, quiet). A renderer whose
 * hardware converts binary16 defines DML_F2H_NATIVE(f) (f32 -> the 16 bits,
 * round to nearest even, subnormals kept) and DML_H2F_NATIVE(h) (exact)
 * first: dml_f2h / dml_h2f then use them (CUDA: cvt.rn.f16.f32 and
 * cvt.f32.f16, one instruction each instead of some 25), with NaN still
 * given the software form's bits. */
extern const char dml_cemit_half_helpers[];

/* Appends dml_exp64 / dml_log64 (exp and log of doubles from +, *, / and
 * floor: range reduction and polynomials, a few ulp; special values as
 * C's exp and log), written with DML_FN, DML_DINF / DML_DNAN (double +inf,
 * NaN), DML_FLOOR (floor of a double), DML_EXP2I(k) (2^k for int k in [-1022, 1023],
 * exact) and DML_DEXP(x) (the unbiased exponent of a normal positive double), which the
 * renderer defines first; `suffix` follows every double literal ("LF" in GLSL, "" in C).
 */
void dml_cemit_f64_math(dml_sb_t *b, const char *suffix);

/* Appends the declarations of k's constant tables (dml_kctab_t), at file
 * scope: "const float ctab0[3] = float[3](...);" in GLSL (ctor_casts),
 * "static __device__ const float ctab0[3] = {...};" in CUDA C; tables placed
 * in the weights (n 0) are left out. */
void dml_cemit_ctabs(dml_sb_t *b, const dml_cdialect_t *d, const dml_kernel_t *k);
/* UNIMPLEMENTED (op `op`) when k's constant tables hold more than
 * DML_KCTAB_RENDER_MAX entries in all (tables placed in the weights, n 0,
 * count none). */
dml_status_t dml_cemit_check_ctabs(const dml_kernel_t *k, const char *op);

#endif /* DML_C_EMIT_H_ */
