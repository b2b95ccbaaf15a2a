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
 *     Vulkan);
 *   - float values (dml_kval_t): loads from the arena or the weights (f32
 *     element indices), loads from a workgroup-shared tile, registers,
 *     constants, unary and binary scalar functions;
 *   - statements (dml_kstmt_t): register definitions and updates, stores,
 *     tile stores, workgroup barriers, counted loops and bounds checks.
 *
 * Memory model: every kernel of a function sees the same two f32 buffers,
 * the function's planned arena (binding 0) and the package's "weights"
 * section (binding 1); a value lives at its planned byte offset / 4. So a
 * kernel needs no per-run addresses, and one package serves every symbol
 * value up to its bound (docs/kernels.md).
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
} dml_kidx_kind_t;

typedef struct dml_kidx {
  dml_kidx_kind_t kind;
  int64_t c;   /* CONST: value (0 .. 2^32-1: indices are 32-bit on devices) */
  int32_t var; /* VAR: variable; SYM: symbol index */
  const struct dml_kidx *a, *b;
} dml_kidx_t;

/* ---- float values ---- */

typedef enum dml_kbuf {
  DML_KBUF_ARENA = 0,   /* binding 0: the function's arena */
  DML_KBUF_WEIGHTS = 1, /* binding 1: the "weights" section */
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
  DML_KF_RELU,
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
  DML_KF_COUNT_
} dml_kfn_t;

/* 1 for binary functions. */
int dml_kfn_is_binary(dml_kfn_t f);
/* "exp", "add", ... (the printer's spelling). */
const char *dml_kfn_name(dml_kfn_t f);

typedef enum dml_kval_kind {
  DML_KV_CONST = 0, /* f32 constant `c` */
  DML_KV_LOAD,      /* buffer `buf` at element index `idx` */
  DML_KV_TILE,      /* shared tile `tile` at element index `idx` */
  DML_KV_REG,       /* register `reg` */
  DML_KV_FN,        /* fn(a) or fn(a, b) */
} dml_kval_kind_t;

typedef struct dml_kval {
  dml_kval_kind_t kind;
  float c;
  dml_kbuf_t buf;
  uint32_t tile, reg;
  const dml_kidx_t *idx;
  dml_kfn_t fn;
  const struct dml_kval *a, *b;
} dml_kval_t;

/* ---- statements ---- */

typedef enum dml_kstmt_kind {
  DML_KS_LET = 0,    /* float reg = val (defines reg) */
  DML_KS_SET,        /* reg = val */
  DML_KS_STORE,      /* buf[idx] = val */
  DML_KS_TILE_STORE, /* tile[idx] = val */
  DML_KS_BARRIER,    /* workgroup barrier (shared memory and control) */
  DML_KS_FOR,        /* for (var = 0; var < hi; var += step) body */
  DML_KS_IF_LT,      /* if (lhs < hi) body */
} dml_kstmt_kind_t;

typedef struct dml_kstmt {
  dml_kstmt_kind_t kind;
  uint32_t reg;           /* LET, SET */
  dml_kbuf_t buf;         /* STORE */
  uint32_t tile;          /* TILE_STORE */
  const dml_kidx_t *idx;  /* STORE, TILE_STORE: element index */
  const dml_kval_t *val;  /* LET, SET, STORE, TILE_STORE */
  int32_t var;            /* FOR: loop variable */
  const dml_kidx_t *lhs;  /* IF_LT */
  const dml_kidx_t *lo;   /* IF_LT: optional lower bound (inclusive) */
  const dml_kidx_t *hi;   /* FOR, IF_LT */
  int64_t step;           /* FOR (>= 1) */
  struct dml_kstmt *body; /* FOR, IF_LT: first statement */
  struct dml_kstmt *next;
} dml_kstmt_t;

/* A count affine in at most one symbol:
 * c0 + c * (sym < 0 ? 1 : the symbol's run-time value). */
typedef struct dml_klin {
  int64_t c;
  int32_t sym;
  int64_t c0;
} dml_klin_t;

typedef enum dml_kernel_kind {
  DML_KK_ELEMENTWISE = 1, /* a fused chain of elementwise ops (or a copy) */
  DML_KK_GEMM = 2,        /* Gemm/MatMul with its elementwise epilogue */
  DML_KK_REDUCE = 3,      /* a reduction with its elementwise epilogue */
  DML_KK_SOFTMAX = 4,     /* Softmax / LogSoftmax along one axis */
  DML_KK_CONV = 5,        /* 2-D Conv with its elementwise epilogue */
  DML_KK_POOL = 6,        /* 2-D MaxPool / AveragePool */
} dml_kernel_kind_t;

const char *dml_kernel_kind_name(dml_kernel_kind_t k);

#define DML_KERNEL_NAME_BYTES 32

/* What a renderer with its own GEMM main loop (CUDA's tensor-core form,
 * codegen/cuda/cuda_mma.c) needs of a GEMM kernel: C[M, N] = op(A) op(B)
 * with op(A) [M, K], op(B) [K, N], both f32 and row-major in their
 * buffers, then `epilogue` for one element. The epilogue reads the product
 * (alpha not applied) from register `acc_reg` and the element's row and
 * column from DML_KVAR_GID_Y and DML_KVAR_GID_X; it checks row < M and
 * col < N itself, applies alpha, beta * C and the fused elementwise chain
 * and stores; it uses registers 0 .. n_regs - 1. */
typedef struct dml_kgemm {
  dml_kbuf_t a_buf, b_buf;
  int64_t a_off, b_off; /* element offsets of A and B in their buffers */
  int ta, tb;           /* A stored [K, M], B stored [N, K] */
  dml_klin_t m;         /* rows of C */
  int64_t n, k;
  uint32_t acc_reg, n_regs;
  const struct dml_kstmt *epilogue;
} dml_kgemm_t;

typedef struct dml_kernel {
  char name[DML_KERNEL_NAME_BYTES]; /* "k3_gemm" */
  dml_kernel_kind_t kind;
  uint32_t n_nodes;
  uint32_t *nodes;     /* indices into the function's nodes, in order */
  uint32_t local[3];   /* workgroup size */
  dml_klin_t items[3]; /* invocations per grid dim; groups = ceil(items / local) */
  uint32_t n_tiles;
  uint32_t tile_elems[4]; /* f32 elements of each shared tile */
  uint32_t n_regs;
  dml_kstmt_t *body;
  /* Work estimates for `dmlc bench` (per run): floating-point operations
   * and bytes moved to and from the buffers. */
  dml_klin_t flops, bytes;
  const dml_kgemm_t *gemm; /* GEMM kernels: the product's description */
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
 * (bias, activation, residual); ReduceSum/Mean/Max/Min with their
 * epilogue; Softmax and LogSoftmax as single kernels; views alias or copy.
 * f32 only. `weights` (size `weights_size`) gives constant inputs such as
 * reduction axes. Every node that cannot be placed is listed in one
 * UNIMPLEMENTED error. */
dml_status_t dml_kschedule(const dml_pkg_graph_t *g, uint32_t fn, const uint8_t *weights,
                           uint64_t weights_size, dml_kplan_t **out_plan);

void dml_kplan_release(dml_kplan_t *p);

/* 1 when the scheduler has a kernel form for op `op` (f32). */
int dml_kschedule_handles(dml_op_t op);

/* Prints the plan: each kernel, its grid, the graph nodes it holds and its
 * body, in a C-like text (tests/codegen checks it with FileCheck). */
void dml_kplan_print(const dml_kplan_t *p, const dml_pkg_graph_t *g, FILE *f);

/* Evaluates a linear count for the symbol values `sym` (n entries). */
int64_t dml_klin_eval(dml_klin_t l, const int64_t *sym, uint32_t n);

#ifdef __cplusplus
}
#endif
#endif /* DML_KERNEL_H_ */
