/*
 * dml_kernel.h — dmlc's kernel IR and the scheduler that groups a planned
 * function into kernels (ARCHITECTURE.md: "one kernel IR, several
 * renderers").
 *
 * A kernel is a compute program run by a grid of invocations. Its body is a
 * small structured program over:
 *   - index expressions (dml_kidx_t): 64-bit-free unsigned integer trees over
 *     constants, the invocation's ids, loop variables and the run-time
 *     values of the package's symbols (e.g. `batch`, a push constant on
 *     Vulkan), and integer values used as indices (Gather's indices);
 *   - typed values (dml_kval_t, each with a dml_kdtype_t: f32, i64, i32,
 *     bool, u8, i8, f16, bf16, f64, i16, u16, u32 or u64): loads from the arena or the
 * weights (element indices of the value's dtype), loads from a workgroup-shared tile
 * (f32), registers, constants, index expressions converted to a value, unary, binary and
 *     ternary scalar functions (arithmetic, compares, logic, select,
 *     casts);
 *   - statements (dml_kstmt_t): register definitions and updates, stores,
 *     tile stores, workgroup barriers, counted loops and bounds checks.
 *
 * Memory model: every kernel of a function sees the same two buffers, the
 * function's planned arena (binding 0) and the package's "weights" section
 * (binding 1), through one view per dtype (f32, i64, i32, and bool as one
 * byte 0/1, as packages store it); a value of dtype T lives at element
 * (planned byte offset) / sizeof(T) of the T view (the scheduler refuses
 * misaligned values). So a kernel needs no per-run addresses, and one
 * package serves every symbol value up to its bound (docs/kernels.md).
 *
 * Ownership: a dml_kplan_t owns every kernel, node list and expression in
 * its pool; dml_kplan_release() frees it all.
 *
 * Errors (op "codegen.schedule"): UNIMPLEMENTED listing every node the
 * scheduler cannot place in a kernel, with the reason (op, dtype, form);
 * RESOURCE_EXHAUSTED.
 */
#ifndef DML_KERNEL_H_
#define DML_KERNEL_H_

#include <stdint.h>
#include <stdio.h>

#include "dml_pkg.h"
#include "dml_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- index expressions ---- */

/* Built-in integer variables; loop variables are numbered from
 * DML_KVAR_FIRST_LOOP. */
enum {
  DML_KVAR_GID_X = 0, /* global invocation id */
  DML_KVAR_GID_Y = 1,
  DML_KVAR_LID_X = 2, /* local invocation id (in the workgroup) */
  DML_KVAR_LID_Y = 3,
  DML_KVAR_WG_X = 4, /* workgroup id */
  DML_KVAR_WG_Y = 5,
  DML_KVAR_FIRST_LOOP = 6,
};

typedef enum dml_kidx_kind {
  DML_KI_CONST = 0, /* c */
  DML_KI_VAR,       /* variable `var` */
  DML_KI_SYM,       /* run-time value of package symbol `var` */
  DML_KI_ADD,       /* a + b */
  DML_KI_MUL,       /* a * b */
  DML_KI_DIV,       /* a / b (unsigned, truncating) */
  DML_KI_MOD,       /* a % b */
  DML_KI_SUB,       /* a - b (only where a >= b is guaranteed by a bounds check) */
  DML_KI_VAL,       /* integer value `val` (i64/i32) as an unsigned index: a data-driven
                       index (Gather); a negative value wraps to a huge one, so the
                       scheduler bounds-checks it before any access */
} dml_kidx_kind_t;

typedef struct dml_kidx {
  dml_kidx_kind_t kind;
  int64_t c;   /* CONST: value (0 .. 2^32-1: indices are 32-bit on devices) */
  int32_t var; /* VAR: variable; SYM: symbol index */
  const struct dml_kidx *a, *b;
  const struct dml_kval *val; /* VAL */
} dml_kidx_t;

/* ---- typed values ---- */

/* Dtypes of kernel values, loads and stores. f32 is 0: a zeroed value,
 * load or store is f32, as before dtypes existed. */
typedef enum dml_kdtype {
  DML_KT_F32 = 0,
  DML_KT_I64 = 1,
  DML_KT_I32 = 2,
  DML_KT_BOOL = 3, /* one byte, 0 or 1, in memory; a truth value in registers */
  DML_KT_U8 = 4,   /* one byte in memory, an i32 in registers (stores wrap) */
  DML_KT_I8 = 5,   /* likewise, sign-extended */
  /* IEEE binary16 and bfloat16: 16-bit words in memory, f32 in registers
   * (every function of this dtype rounds its f32 result to the dtype,
   * nearest even, as the CPU's f16/bf16 stores do). */
  DML_KT_F16 = 6,
  DML_KT_BF16 = 7,
  DML_KT_F64 = 8,  /* double in registers (Vulkan: shaderFloat64; no Metal) */
  DML_KT_I16 = 9,  /* two bytes in memory, an i32 in registers (stores wrap) */
  DML_KT_U16 = 10, /* likewise, zero-extended */
  DML_KT_U32 = 11, /* unsigned 32-bit in registers */
  DML_KT_U64 = 12, /* unsigned 64-bit in registers */
  DML_KT_COUNT_
} dml_kdtype_t;

/* Bytes of one element in memory: 4, 8, 4, 1, 1, 1, 2, 2, 8, 2, 2, 4, 8. */
uint32_t dml_kdtype_size(dml_kdtype_t t);
/* "f32", "i64", "i32", "bool", "u8", "i8", "f16", "bf16", "f64", "i16",
 * "u16", "u32", "u64". */
const char *dml_kdtype_name(dml_kdtype_t t);
/* 1 for f32, f16, bf16 and f64. */
int dml_kdtype_is_float(dml_kdtype_t t);
/* 1 for u8, u16, u32 and u64. */
int dml_kdtype_is_unsigned(dml_kdtype_t t);
/* The dtype of the memory view that holds t's elements: bool for u8 (one
 * byte view), u16 for f16 and bf16 (16-bit words), t otherwise. */
dml_kdtype_t dml_kdtype_view(dml_kdtype_t t);
/* The kernel dtype of a package dtype; 0 when kernels cannot hold it. */
int dml_kdtype_of(dml_dtype_t d, dml_kdtype_t *out);

typedef enum dml_kbuf {
  DML_KBUF_ARENA = 0,   /* binding 0: the function's arena */
  DML_KBUF_WEIGHTS = 1, /* binding 1: the "weights" section */
  /* Bindings 2 and 3, f32 loads only: the eager kernel library's further
   * operands (dml_eager_lib.h: MatMul's B, Conv's W and bias), each tensor
   * bound through its own descriptor (GLSL) or passed as the kernel
   * parameters in2 and in3 after weights (CUDA C). Packages' kernels never
   * use them; the MSL renderer does not take them. */
  DML_KBUF_IN2 = 2,
  DML_KBUF_IN3 = 3,
} dml_kbuf_t;

/* Scalar functions (unary and binary), as the renderers spell them. */
typedef enum dml_kfn {
  DML_KF_NEG = 0,
  DML_KF_ABS,
  DML_KF_EXP,
  DML_KF_LOG,
  DML_KF_SQRT,
  DML_KF_TANH,
  DML_KF_SIGMOID,
  DML_KF_FLOOR,
  DML_KF_CEIL,
  DML_KF_RECIP,
  DML_KF_SIN,
  DML_KF_COS,
  DML_KF_ADD, /* binary from here */
  DML_KF_SUB,
  DML_KF_MUL,
  DML_KF_DIV,
  DML_KF_MAX,
  DML_KF_MIN,
  DML_KF_POW,
  /* Typed functions (any dtype unless noted; the result's dtype is the
   * value's `dtype`). Unary: */
  DML_KF_NOT,  /* bool -> bool */
  DML_KF_CAST, /* a's dtype -> the value's dtype, ONNX Cast: float -> int
                  truncates toward zero, int -> float rounds to nearest,
                  x -> bool is x != 0, bool -> x is 0 or 1 */
  DML_KF_SIGN, /* -1, 0 or 1 of a's dtype */
  /* Binary, operands of one dtype: compares (-> bool) */
  DML_KF_EQ,
  DML_KF_LT,
  DML_KF_LE,
  DML_KF_GT,
  DML_KF_GE,
  DML_KF_AND,  /* bool */
  DML_KF_OR,   /* bool */
  DML_KF_XOR,  /* bool */
  DML_KF_IMOD, /* integer a mod b with the sign of b (ONNX Mod, fmod = 0) */
  DML_KF_FMOD, /* a - b * trunc(a / b): the sign of a (C fmod, ONNX fmod = 1) */
  DML_KF_IPOW, /* integer a ** b (i32 or i64, b of a's dtype) by squaring,
                  wrapping; b < 0 gives 1 for a = 1, +-1 for a = -1, else 0
                  (the CPU's ipow, runtime/cpu/cpu_elementwise.c) */
  /* Ternary: */
  DML_KF_SELECT, /* a ? b : c (a bool; b, c of the value's dtype) */
  DML_KF_COUNT_
} dml_kfn_t;

/* Operands of f: 1, 2 or 3. */
int dml_kfn_arity(dml_kfn_t f);
/* 1 for binary functions. */
int dml_kfn_is_binary(dml_kfn_t f);
/* "exp", "add", ... (the printer's spelling). */
const char *dml_kfn_name(dml_kfn_t f);

typedef enum dml_kval_kind {
  DML_KV_CONST = 0, /* constant: `c` (f32, f16, bf16, f64) or `ic` (integers, bool) */
  DML_KV_LOAD,      /* buffer `buf`'s `dtype` view at element index `idx` */
  DML_KV_TILE,      /* shared tile `tile` at element index `idx` (of the tile's
                       dtype, `dtype`) */
  DML_KV_REG,       /* register `reg` */
  DML_KV_FN,        /* fn(a), fn(a, b) or fn(a, b, c) */
  DML_KV_IDX,       /* index expression `idx` as a value of `dtype` */
  DML_KV_PHILOX,    /* i32: the 24 random bits (w >> 8) of the Philox4x32-10 word
                       of element `idx` of random stream `ic` (dml_philox.h: word
                       idx % 4 of block idx / 4, counter { idx / 4, 0, ic,
                       step_lo }, key { seed_lo, seed_hi ^ step_hi }); the i32
                       operands a, b, c3, d4 are seed_lo, seed_hi, step_lo,
                       step_hi (loads of the random-state slot, or constants
                       for a node's own seed). Of dtype u32 (dml_kv_philox_word):
                       the whole word w instead */
  DML_KV_CTAB,      /* the kernel's constant table `ctab` at element index `idx`
                       (of the table's dtype, f32 or i32) */
  DML_KV_BITS,      /* f32: the 32 bits of index expression `idx` (a run-time
                       u32 such as a push-constant word) read as an f32: a
                       float passed at dispatch (the eager library's
                       attribute values, dml_eager_lib.h DML_EAGER_PC_ATTR) */
} dml_kval_kind_t;

typedef struct dml_kval {
  dml_kval_kind_t kind;
  float c;
  dml_kbuf_t buf;
  uint32_t tile, reg;
  const dml_kidx_t *idx;
  dml_kfn_t fn;
  const struct dml_kval *a, *b;
  dml_kdtype_t dtype;        /* of the value (f32 when zero) */
  int64_t ic;                /* CONST of an integer or bool dtype */
  const struct dml_kval *c3; /* SELECT: the value when a is false; PHILOX: step_lo */
  const struct dml_kval *d4; /* PHILOX: step_hi */
  uint32_t ctab;             /* CTAB: table number */
  /* LOAD of f16: the value only feeds f32 products and sums (a
   * convolution's tap), where a NaN operand gives the device's canonical
   * NaN whatever its sign and payload, so a renderer may widen it by the
   * bare hardware conversion (dml_cdialect_t.h2f_arith) instead of
   * dml_h2f's NaN-preserving select. 0 for every other value. */
  uint8_t arith;
} dml_kval_t;

/* ---- statements ---- */

typedef enum dml_kstmt_kind {
  DML_KS_LET = 0,    /* reg = val (defines reg, of val's dtype) */
  DML_KS_SET,        /* reg = val */
  DML_KS_STORE,      /* buf[idx] = val (the `dtype` view; val of that dtype) */
  DML_KS_TILE_STORE, /* tile[idx] = val */
  DML_KS_BARRIER,    /* workgroup barrier (shared memory and control) */
  DML_KS_FOR,        /* for (var = 0; var < hi; var += step) body */
  DML_KS_IF_LT,      /* if (lhs < hi) body */
} dml_kstmt_kind_t;

typedef struct dml_kstmt {
  dml_kstmt_kind_t kind;
  uint32_t reg;           /* LET, SET */
  dml_kbuf_t buf;         /* STORE */
  dml_kdtype_t dtype;     /* STORE: the view written (f32 when zero) */
  uint32_t tile;          /* TILE_STORE */
  const dml_kidx_t *idx;  /* STORE, TILE_STORE: element index */
  const dml_kval_t *val;  /* LET, SET, STORE, TILE_STORE */
  int32_t var;            /* FOR: loop variable */
  const dml_kidx_t *lhs;  /* IF_LT */
  const dml_kidx_t *lo;   /* IF_LT: optional lower bound (inclusive) */
  const dml_kidx_t *hi;   /* FOR, IF_LT */
  int64_t step;           /* FOR (>= 1) */
  int32_t unroll;         /* FOR: iterations a renderer should unroll by (a
                             hint: dml_cdialect_t.unroll_fmt); 0 its own choice */
  struct dml_kstmt *body; /* FOR, IF_LT: first statement */
  struct dml_kstmt *next;
} dml_kstmt_t;

/* A count c0 + c * (sym < 0 ? 1 : the symbol's run-time value) * (the
 * product of the run-time values of the symbols whose bits are set in
 * `more`). `more` (0 for most counts) holds the further symbols of a value
 * whose dims use several (a Reshape's output whose dims come from a shape
 * input fed at run time: one data-dependent symbol per dim); a bit may
 * repeat `sym` (a square). Packages hold at most 32 symbols
 * (DML_KPKG_MAX_SYMBOLS), so one word holds every bit. */
typedef struct dml_klin {
  int64_t c;
  int32_t sym;
  int64_t c0;
  uint32_t more;
} dml_klin_t;

/* A constant table of a kernel: values the scheduler computes at compile
 * time (Resize's interpolation taps, in the CPU reference's double
 * arithmetic), rendered as a constant array ("ctab<N>") of `n` entries of
 * dtype f32 (`f`) or i32 (`i`), or placed in the weights buffer
 * (dml_kplan_place_ctabs; then n is 0 and nothing is rendered). Indexing
 * outside [0, n) is undefined: the scheduler builds only in-range indices. */
typedef struct dml_kctab {
  dml_kdtype_t dtype;
  uint32_t n;
  const float *f;
  const int32_t *i;
} dml_kctab_t;

/* Entries of all constant tables of one kernel at most (the scheduler
 * refuses larger forms): 4 Mi entries, 16 MiB of the weights. */
#define DML_KCTAB_MAX_ENTRIES (1u << 22)
/* Entries of a table a compile still renders as a shader constant array
 * at most: 0, every table goes into the weights buffer
 * (dml_kplan_place_ctabs). On lavapipe a dynamically indexed constant
 * array costs in proportion to its size: a table of 1,201 entries hung a
 * one-node Pad, and Pad(reflect) of f32[2048, L] ran 2.4x slower with a
 * table of 17 entries, 25x with 61 (docs/kernels.md "Constant tables"). */
#ifndef DML_KCTAB_INLINE_MAX /* -D for measuring the constant-array form */
#define DML_KCTAB_INLINE_MAX 0u
#endif
/* Entries of the constant arrays one rendered kernel may hold (a kernel
 * whose tables were not placed: the renderers refuse more). */
#define DML_KCTAB_RENDER_MAX 16384u
/* Byte alignment of each table placed in the weights. */
#define DML_KCTAB_ALIGN 16u

/* The constant tables of the kernels of a package placed in its weights
 * section, after the weights (docs/kernels.md "Constant tables"): the
 * section becomes `base` bytes (the weights, zero-padded to
 * DML_PKG_WEIGHT_ALIGNMENT) followed by `bytes` (`size` bytes; each table
 * DML_KCTAB_ALIGN-aligned, equal tables stored once). One placement serves
 * every target of a compile. */
typedef struct dml_kctab_place {
  uint64_t base;
  uint8_t *bytes; /* malloc'd */
  uint64_t size, cap;
  void *entries_; /* the tables placed (to find equal ones) */
  uint32_t n_entries_;
} dml_kctab_place_t;

struct dml_kplan;

/* An empty placement after weights of `weights_size` bytes. */
void dml_kctab_place_init(dml_kctab_place_t *pl, uint64_t weights_size);
void dml_kctab_place_release(dml_kctab_place_t *pl);

/* Moves every constant table of more than DML_KCTAB_INLINE_MAX entries (all) of
 * the kernels of `p` into `pl` (NULL: none moved): each read of it becomes a
 * load from the weights buffer (DML_KBUF_WEIGHTS, the table's dtype, f32
 * or i32) at its element offset, and the table is left empty (n = 0).
 * Errors: UNIMPLEMENTED when a table would lie beyond 2^32 elements of the
 * weights (kernel indices are 32-bit); RESOURCE_EXHAUSTED. */
dml_status_t dml_kplan_place_ctabs(struct dml_kplan *p, dml_kctab_place_t *pl);

/* The weights section with pl's tables after it: `weights_size` bytes of
 * `weights`, zeros up to pl->base, then pl's bytes (malloc'd; *out_size its
 * size). NULL when pl holds nothing or out of memory. */
uint8_t *dml_kctab_place_weights(const dml_kctab_place_t *pl, const uint8_t *weights,
                                 uint64_t weights_size, uint64_t *out_size);

typedef enum dml_kernel_kind {
  DML_KK_ELEMENTWISE = 1, /* a fused chain of elementwise ops (or a copy) */
  DML_KK_GEMM = 2,        /* Gemm/MatMul with its elementwise epilogue */
  DML_KK_REDUCE = 3,      /* a reduction with its elementwise epilogue */
  DML_KK_SOFTMAX = 4,     /* Softmax / LogSoftmax along one axis */
  DML_KK_CONV = 5,        /* 2-D Conv with its elementwise epilogue */
  DML_KK_POOL = 6,        /* 2-D MaxPool / AveragePool */
  DML_KK_MOVE = 7,        /* data movement: an index map (Transpose, Concat, ...) */
  DML_KK_NORM = 8,        /* LayerNormalization / InstanceNormalization per row */
  /* not a kernel: graph nodes the host runs with the CPU kernels between
   * the kernels before and after it (the CPU fall-back's per-segment
   * placement, docs/kernels.md "CPU fall-back"); no body, no code */
  DML_KK_HOST = 9,
} dml_kernel_kind_t;

const char *dml_kernel_kind_name(dml_kernel_kind_t k);

#define DML_KERNEL_NAME_BYTES 32

/* What a renderer with its own GEMM main loop (CUDA's tensor-core form,
 * codegen/cuda/cuda_mma.c) needs of a GEMM kernel: C[M, N] = op(A) op(B)
 * with op(A) [M, K], op(B) [K, N], both of dtype `dtype` (f32, f16 or
 * bf16) and row-major in their buffers, then `epilogue` for one element. The epilogue
 * reads the product (alpha not applied) from register `acc_reg` and the element's row and
 * column from DML_KVAR_GID_Y and DML_KVAR_GID_X; it checks row < M and
 * col < N itself, applies alpha, beta * C and the fused elementwise chain
 * and stores; it uses registers 0 .. n_regs - 1.
 *
 * A convolution (Conv with group 1, NCHW or NCW) is the implicit GEMM of
 * `conv`: C[M = batch * OH * OW, N = output channels] = A[M, K = C * kh * kw]
 * B[K, N], where A's element (m, k) is gathered from X (buffer a_buf at
 * a_off, [batch, C, H, W]) at m = (n, oh, ow), k = (c, i, j): X[n, c, oh *
 * stride[0] - pad[0] + i * dil[0], ow * stride[1] - pad[1] + j * dil[1]]
 * (0 outside the image), B is the weights [N, K] (tb = 1), and the epilogue
 * stores element (row m, col) at Y[n, col, oh, ow]. */
typedef struct dml_kconv {
  int64_t C, H, W, kh, kw, OH, OW;
  int64_t stride[2], dil[2], pad[2]; /* (height, width); pad: top, left */
} dml_kconv_t;

typedef struct dml_kgemm {
  dml_kbuf_t a_buf, b_buf;
  int64_t a_off, b_off; /* element offsets of A and B in their buffers */
  int ta, tb;           /* A stored [K, M], B stored [N, K] */
  dml_klin_t m;         /* rows of C */
  int64_t m_max;        /* rows of C at the symbols' bounds (0: m.c + m.c0) */
  int64_t n, k;
  uint32_t acc_reg, n_regs;
  const struct dml_kstmt *epilogue;
  const dml_kconv_t *conv; /* NULL for Gemm/MatMul */
  dml_kdtype_t dtype;      /* of A and B (X and W): f32, f16 or bf16 */
} dml_kgemm_t;

/* What a renderer with its own attention main loop (CUDA's tensor-core
 * form, codegen/cuda/cuda_attn.c) needs of a fused attention kernel
 * (codegen/schedule_attention.c), recorded only for static shapes, f16 or
 * bf16 operands, head sizes 64 or 128 (D == Dv), no softcap: Y[b, h, i, :]
 * = softmax_j(scale * Q[b, h, i, :] . K[b, h / (Hq / Hkv), j, :] + mask(b,
 * h, i, j), -inf where causal and j > i) V[b, h / (Hq / Hkv), j, :], element
 * (b, h, pos, d) of Q/K/V/Y at off + b * sb + h * sh + pos * sp + d (in
 * elements of the dtype, in buffer buf). The mask's element (b, h, i, j)
 * is at m_off + b * m_st[0] + h * m_st[1] + i * m_st[2] + j * m_st[3]
 * (stride 0 where broadcast), -inf for j >= m_len; bool (1 byte) or the
 * operands' dtype. A row whose every score is -inf gives 0; with nan_zero
 * a row whose sum is NaN gives 0 too (as the kernel IR's form). */
typedef struct dml_kattn_op {
  dml_kbuf_t buf;
  int64_t off, sb, sh, sp;
} dml_kattn_op_t;

typedef struct dml_kattn {
  dml_kdtype_t dtype; /* f16 or bf16 */
  int64_t B, Hq, Hkv, Sq, T, D;
  double scale;
  int causal, nan_zero;
  dml_kattn_op_t q, k, v, y;
  int has_mask, mask_bool;
  dml_kbuf_t m_buf;
  int64_t m_off, m_st[4], m_len;
} dml_kattn_t;

typedef struct dml_kernel {
  char name[DML_KERNEL_NAME_BYTES]; /* "k3_gemm" */
  dml_kernel_kind_t kind;
  uint32_t n_nodes;
  uint32_t *nodes;     /* indices into the function's nodes, in order */
  uint32_t local[3];   /* workgroup size */
  dml_klin_t items[3]; /* invocations per grid dim; groups = ceil(items / local) */
  uint32_t n_tiles;
  uint32_t tile_elems[4];     /* elements of each shared tile */
  dml_kdtype_t tile_dtype[4]; /* each tile's element dtype (f32 when zero; a
                                 register dtype: f32, f64, i32, i64, u32, u64) */
  /* 1: the order of the f32 operations is part of the result (compensated
   * arithmetic, dml_krow_prod_comp): GLSL declares the registers `precise`
   * (SPIR-V NoContraction), so that neither SPIRV-Tools' optimizer nor the
   * driver folds (c - (c - x)) into x; CUDA C keeps the order anyway (no
   * fast-math; contractions into fma leave the exact products unchanged). */
  int precise;
  uint32_t n_regs;
  dml_kstmt_t *body;
  /* Work estimates for `dmlc bench` (per run): floating-point operations
   * and bytes moved to and from the buffers. */
  dml_klin_t flops, bytes;
  const dml_kgemm_t *gemm; /* GEMM kernels: the product's description */
  const dml_kattn_t *attn; /* fused attention: its description (or NULL) */
  /* 1 when the kernel stores into the weights buffer (binding 1): an
   * Assign of a global (ops.def) writes its new value in place, so the
   * renderers declare that buffer writable for this kernel. */
  uint8_t writes_weights;
  uint32_t n_ctabs; /* constant tables (DML_KV_CTAB) */
  const dml_kctab_t *ctabs;
} dml_kernel_t;

/* The kernels of one function of a package, in execution order. Nodes not
 * held by any kernel are views aliasing their input (nothing to run). */
typedef struct dml_kplan {
  uint32_t function; /* index in the graph */
  uint32_t n_kernels;
  dml_kernel_t *kernels;
  uint32_t n_symbols; /* the graph's symbols (push constants) */
  struct dml_kpool *pool_;
} dml_kplan_t;

/* Groups function `fn` of `g` into kernels: chains of elementwise ops into
 * one kernel (intermediates stay in registers unless used outside the
 * chain or returned); Gemm and 2-D MatMul with their elementwise epilogue
 * (bias, activation, residual); ReduceSum/Mean/Max/Min and ArgMax/ArgMin
 * (i64 indices) with their epilogue; Softmax and LogSoftmax as single
 * kernels; Shape and Size from the symbols' run-time values; views alias
 * or copy. Values of every dtype but strings (f32, f16, bf16, f64, i64,
 * i32, i16, i8, u64, u32, u16, u8, bool): compares, logic, Where, Cast,
 * arithmetic, Max/Min, Mod, Pow, OneHot, Expand and data movement are
 * elementwise nodes of a chain; the float functions take f32, f16 and bf16
 * (computed in f32) and a few take f64 (docs/kernels.md "Dtypes"); Gemm,
 * Conv, pools and softmax stay f32, reductions f32, i64, i32, u8 and i8.
 * `weights` (size `weights_size`) gives constant inputs such as reduction
 * axes. Every node that cannot be placed is listed in one UNIMPLEMENTED
 * error. */
dml_status_t dml_kschedule(const dml_pkg_graph_t *g, uint32_t fn, const uint8_t *weights,
                           uint64_t weights_size, dml_kplan_t **out_plan);

/* dml_kschedule() with per-segment host placement: a node whose entry of
 * `host` (n_nodes entries; NULL: none) is 1 is not scheduled but placed in
 * a DML_KK_HOST entry of the plan (consecutive host nodes share one; the
 * open group is closed before it, so no kernel holds nodes on both sides
 * of a host entry). When `refused` is not NULL, the entry of every node
 * listed in the UNIMPLEMENTED error is set to 1 (the caller may place
 * those on the host and schedule again). */
dml_status_t dml_kschedule_host(const dml_pkg_graph_t *g, uint32_t fn,
                                const uint8_t *weights, uint64_t weights_size,
                                const uint8_t *host, uint8_t *refused,
                                dml_kplan_t **out_plan);

void dml_kplan_release(dml_kplan_t *p);

/* Whether kernel `k` of plan p (scheduled from graph g) writes its result
 * over memory it reads: 0 when no value it stores (its last node's result,
 * and any result of its nodes that a node outside it reads or the function
 * returns) overlaps a value it reads from outside (an input of its nodes
 * that none of them produces; constants never overlap) in the function's
 * memory plan (offsets and reserved bytes: the arena at the bounds); 1
 * when one does at the same offset (a result planned in place over its
 * operand, as the CPU's plan puts an elementwise chain over a dying input:
 * issue 23's DenseNet block); 2 when one overlaps another way (partly, or
 * at another offset). DML_KK_HOST entries and out-of-range arguments: 0. */
int dml_kernel_in_place(const dml_kplan_t *p, const dml_pkg_graph_t *g, uint32_t k);

/* 1 when the scheduler has a kernel form for op `op` (for some dtype:
 * dml_kschedule still lists a node whose dtypes it does not emit). */
int dml_kschedule_handles(dml_op_t op);

/* Prints the plan: each kernel, its grid, the graph nodes it holds and its
 * body, in a C-like text (tests/codegen checks it with FileCheck). */
void dml_kplan_print(const dml_kplan_t *p, const dml_pkg_graph_t *g, FILE *f);

/* Views kernel `k` reads or writes: bit (buf * DML_KT_COUNT_ + view dtype,
 * dml_kdtype_view) for each (buffer, dtype) pair its loads and stores use;
 * DML_KVIEW_IN2 / DML_KVIEW_IN3 when it loads from DML_KBUF_IN2 / IN3;
 * DML_KVIEW_RAND when it draws Philox words (the renderers then add their
 * Philox helper);
 * DML_KVIEW_I64 when
 * it holds any i64 value (GLSL then needs 64-bit integer arithmetic);
 * DML_KVIEW_TYPED when it holds any value that is not f32 or any typed
 * function (the renderers then add their typed helpers); DML_KVIEW_TRIG
 * when it holds a DML_KF_SIN or DML_KF_COS (GLSL then adds dml_sin and
 * dml_cos, codegen/kernel_sincos.h). */
uint32_t dml_kernel_views(const dml_kernel_t *k);

/* Dtypes kernel `k` holds: bit (1 << dtype) for every dtype of its
 * values, loads and stores (the renderers add the helpers and the
 * extensions these need: 16-bit words, f64, unsigned division). */
uint32_t dml_kernel_dtypes(const dml_kernel_t *k);
#define DML_KVIEW(buf, dt) (1u << ((unsigned)(buf)*DML_KT_COUNT_ + (unsigned)(dt)))
#define DML_KVIEW_TRIG (1u << 26) /* an f32 sin or cos (codegen/kernel_sincos.h) */
#define DML_KVIEW_IN2 (1u << 27)  /* loads of DML_KBUF_IN2 (f32) */
#define DML_KVIEW_IN3 (1u << 28)  /* loads of DML_KBUF_IN3 (f32) */
#define DML_KVIEW_RAND (1u << 29) /* holds a DML_KV_PHILOX value */
#define DML_KVIEW_I64 (1u << 30)
#define DML_KVIEW_TYPED (1u << 31)

/* Dtype of register `reg` of kernel `k` (the dtype of the values its
 * definitions assign; f32 when none). */
dml_kdtype_t dml_kernel_reg_dtype(const dml_kernel_t *k, uint32_t reg);

/* Evaluates a linear count for the symbol values `sym` (n entries). */
int64_t dml_klin_eval(dml_klin_t l, const int64_t *sym, uint32_t n);

#ifdef __cplusplus
}
#endif
#endif /* DML_KERNEL_H_ */
