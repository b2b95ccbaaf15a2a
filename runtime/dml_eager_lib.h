/*
 * dml_eager_lib.h — the eager kernel library (docs/tensor.md "Eager ops on
 * Vulkan"): GPU kernels compiled ahead of time, when the runtime is built,
 * that run an op on tensors of any shape; the shapes, strides and offsets
 * come at dispatch as push-constant words. This header is the one
 * definition of their interface, shared by the generator
 * (codegen/eager_lib_gen.c, which writes the library as C arrays) and the
 * runtime (dml_tensor.c fills the words, runtime/vulkan/rt_vulkan.c loads
 * the kernels once per device and dispatches them).
 *
 * Elementwise kernels (kind DML_EAGER_EW), each for one dtype of its
 * operands (`dtype`, Where's bool condition aside; the output's
 * `out_dtype`: Cast's `to`, the compares' bool): the op's formula is the compiled path's
 * (the scheduler's ew_value, reached through dml_ksched_ew_node), so an eager op and a
 * compiled package give the same results. Output y (binding 0, contiguous, element offset
 * 0) has n elements of a row-major index space of DML_EAGER_RANK dims (leading dims 1);
 * input j (binding 1) is read at element off_j + sum_d coord_d * stride_j_d (stride 0 on
 * broadcast dims). Invocation g of a grid of `stride` invocations computes the elements
 * g, g + stride, ... (`iters` of them) below n. Indices are 32-bit unsigned: every
 * element index must be below 2^32. The workgroup is DML_EAGER_LOCAL invocations.
 */
#ifndef DML_EAGER_LIB_H_
#define DML_EAGER_LIB_H_

#include <stdint.h>

#include "dml_dtype.h"
#include "dml_ew.h"
#include "dml_ops.h"

#define DML_EAGER_EW 1u
#define DML_EAGER_RANK 6u       /* dims of the index space (after merging) */
#define DML_EAGER_MAX_INPUTS 3u /* elementwise operands (Where, Clip: 3) */
#define DML_EAGER_LOCAL 256u    /* invocations per workgroup */

/* Push-constant words of an elementwise kernel. */
enum {
  DML_EAGER_PC_N = 0,      /* elements of y */
  DML_EAGER_PC_STRIDE = 1, /* invocations of the grid */
  DML_EAGER_PC_ITERS = 2,  /* ceil(n / stride) */
  DML_EAGER_PC_DIMS = 3,   /* DML_EAGER_RANK dims of y, outermost first */
  /* per input j: its element offset, then its DML_EAGER_RANK strides */
  DML_EAGER_PC_IN = DML_EAGER_PC_DIMS + DML_EAGER_RANK,
  DML_EAGER_PC_IN_WORDS = 1 + DML_EAGER_RANK,
  DML_EAGER_PC_WORDS = DML_EAGER_PC_IN + DML_EAGER_MAX_INPUTS * DML_EAGER_PC_IN_WORDS,
  /* The attribute values of the ops of dml_eager_attr_words, each word the
   * bits of an f32 value: input 2's words, which these ops (one or two
   * operands) do not read. The kernels read them at dispatch (no kernel per
   * value): the formula table's ops (runtime/base/ew_ops.def DML_EW, and
   * Mod's fmod of DML_EW2): A0, A1, A2 as dml_ew_attrs gives them (a string
   * attribute as 0 or 1); IsInf: detect_positive, detect_negative (0 or 1);
   * BitShift: direction (1 LEFT, 0 RIGHT); Shrink: lambd, bias. */
  DML_EAGER_PC_ATTR = DML_EAGER_PC_IN + 2 * DML_EAGER_PC_IN_WORDS,
  /* Concat's slice-copy rows (op Concat, one operand, max_len 3: the
   * index space's last three dims): y's element offset, then its
   * DML_EAGER_RANK strides (input 1's words, which one operand leaves
   * free): element i is written at OUT + sum_d coord_d * ostride_d instead
   * of i, so that each input of a Concat is copied into its slice of the
   * output in one dispatch. */
  DML_EAGER_PC_OUT = DML_EAGER_PC_IN + DML_EAGER_PC_IN_WORDS,
};

/* 1 when the kernels of op `op` read its attributes from the words
 * DML_EAGER_PC_ATTR (the generator and the runtime read this): the formula
 * table's unary ops (those without attributes read none), Mod, IsInf,
 * BitShift, Shrink. */
static inline int dml_eager_attr_words(dml_op_t op) {
  return dml_ew_has(op) || op == DML_OP_MOD || op == DML_OP_IS_INF ||
         op == DML_OP_BIT_SHIFT || op == DML_OP_SHRINK;
}

/* Reduction kernels (kind DML_EAGER_REDUCE): the compiled path's kernel
 * itself, scheduled (dml_kschedule) for a one-node function: x (the row's dtype)
 * [S0, S1, S2] at element 0 of binding 1, y (the same dtype; ArgMax and
 * ArgMin: i64) [S0, 1, S2] at element 0 of binding 0, the op reducing axis 1
 * with its other attributes at their defaults (ArgMax/ArgMin: the row's
 * select_last_index). The push-constant words are the symbols S0 (outer), S1 (the
 * reduced length) and S2 (inner); the grid is `items` (c0 + c * S[sym] *
 * the symbols of `more`, as dml_kpkg_lin_t) over `local`. Each op has a
 * kernel for rows up to 256 long and one for any length (max_len); a
 * kernel whose grid is capped at 65,535 row workgroups (rows loop over the
 * workgroups' turns) may be dispatched with min(65,535, rows) of them.
 * Softmax and LogSoftmax (f32) have rows of this kind too: the compiled
 * path's kernel (dml_ksched_emit_softmax) scheduled for x [S0, S1, 1] at
 * element 0 of binding 1, y of x's dims at element 0 of binding 0, over
 * axis 1 (rows of S1 contiguous elements; the runtime passes S2 = 1 and
 * moves another axis last with the Identity kernel first). */
#define DML_EAGER_REDUCE 2u
#define DML_EAGER_REDUCE_SYMS 3u

/* MatMul kernels (kind DML_EAGER_MATMUL), f32 and f64 (the row's dtype):
 * Y[b, m, n] = sum_k A[b, m,
 * k] * B[b, k, n] for each batch item b of Y's (broadcast) batch dims,
 * numpy matmul. Y (binding 0) is contiguous [batch, M, N] at element 0;
 * A (binding 1) and B (binding 2) are read in place at their element
 * offsets and strides (any view: transposed, sliced, broadcast with
 * stride 0), batch item b's coordinates over the DML_EAGER_MM_BATCH
 * batch dims (outermost first, leading 1s) giving the base offsets. A
 * workgroup of DML_EAGER_LOCAL invocations computes a
 * DML_EAGER_MM_TILE x DML_EAGER_MM_TILE block of one batch item, each
 * invocation a 4 x 4 micro-tile in registers, K staged through shared
 * memory DML_EAGER_MM_BK at a time (the compiled path's tiled GEMM form,
 * codegen/schedule.c emit_gemm_tiled, with M, N, K and the strides at run
 * time); blocks are numbered (batch, row block, column block) and
 * workgroup g of a grid of `grid` takes blocks g, g + grid, ... (`iters`
 * turns) below `blocks`. The sums run in the row's dtype over k in order.
 * Two kernels per dtype: max_len 0 takes any strides, max_len 1 requires
 * A's k stride and B's n stride to be 1 (rows stored contiguously; their
 * words are then ignored). The f64 rows read B from binding 1 too, at its
 * own offset (the kernel IR's bindings 2 and 3 are f32 only): the runtime
 * binds one storage holding both, or packs their spans into one buffer;
 * on CUDA their parameters are (y, x, the words), as run_kernel's. */
#define DML_EAGER_MATMUL 3u
#define DML_EAGER_MM_BATCH 4u /* batch dims after merging */
#define DML_EAGER_MM_TILE 64u
#define DML_EAGER_MM_BK 16u
enum {
  DML_EAGER_MM_M = 0,
  DML_EAGER_MM_N,
  DML_EAGER_MM_K,
  DML_EAGER_MM_NB,     /* column blocks: ceil(N / TILE) */
  DML_EAGER_MM_MB,     /* row blocks: ceil(M / TILE) */
  DML_EAGER_MM_BLOCKS, /* batch * MB * NB */
  DML_EAGER_MM_GRID,   /* workgroups dispatched */
  DML_EAGER_MM_ITERS,  /* ceil(blocks / grid) */
  DML_EAGER_MM_A_OFF,  /* A: element offset, strides along m and k */
  DML_EAGER_MM_A_SM,
  DML_EAGER_MM_A_SK,
  DML_EAGER_MM_B_OFF, /* B: element offset, strides along k and n */
  DML_EAGER_MM_B_SK,
  DML_EAGER_MM_B_SN,
  DML_EAGER_MM_BDIMS, /* DML_EAGER_MM_BATCH batch dims of Y */
  DML_EAGER_MM_A_BST = DML_EAGER_MM_BDIMS + DML_EAGER_MM_BATCH, /* A's batch strides */
  DML_EAGER_MM_B_BST = DML_EAGER_MM_A_BST + DML_EAGER_MM_BATCH, /* B's batch strides */
  DML_EAGER_MM_WORDS = DML_EAGER_MM_B_BST + DML_EAGER_MM_BATCH,
};

/* Conv kernels (kind DML_EAGER_CONV), f32, 2-D NCHW (1-D as H = 1): one
 * invocation per element of Y [N, OC, OH, OW] (contiguous, binding 0,
 * element 0; a grid of `stride` invocations loops as the elementwise
 * kernels), summing in f32, in the order c, i, j, over the group's input
 * channels c and the kernel window (i, j):
 *   Y[n, oc, oh, ow] = bias[oc] + sum X[n, g * Cg + c, oh * sh - ph + i * dh,
 *                                       ow * sw - pw + j * dw] * W[oc, c, i, j]
 * with g = oc / OCg, X zero outside the image (ONNX Conv-11: 0 * W is
 * added, so a NaN or infinite weight gives NaN there). X
 * (binding 1), W (binding 2) and the bias (binding 3, read when HAS_BIAS
 * is 1) are contiguous at their element offsets. The f64 row (the sums in
 * f64) reads X, W and the bias all from binding 1 at their offsets, as the
 * f64 MatMul rows. */
#define DML_EAGER_CONV 4u
enum {
  DML_EAGER_CV_N = 0, /* elements of Y */
  DML_EAGER_CV_STRIDE,
  DML_EAGER_CV_ITERS,
  DML_EAGER_CV_C,  /* input channels */
  DML_EAGER_CV_OC, /* output channels */
  DML_EAGER_CV_OH,
  DML_EAGER_CV_OW,
  DML_EAGER_CV_CG,  /* input channels per group */
  DML_EAGER_CV_OCG, /* output channels per group */
  DML_EAGER_CV_H,
  DML_EAGER_CV_W,
  DML_EAGER_CV_KH,
  DML_EAGER_CV_KW,
  DML_EAGER_CV_SH,
  DML_EAGER_CV_SW,
  DML_EAGER_CV_PH, /* begin pads */
  DML_EAGER_CV_PW,
  DML_EAGER_CV_DH,
  DML_EAGER_CV_DW,
  DML_EAGER_CV_X_OFF,
  DML_EAGER_CV_W_OFF,
  DML_EAGER_CV_B_OFF,
  DML_EAGER_CV_HAS_BIAS,
  DML_EAGER_CV_WORDS,
};

/* Gather kernels (kind DML_EAGER_GATHER), one per dtype of x (`dtype`,
 * moved as bits: f16 and bf16 as 16-bit words, bool as bytes), i64
 * indices: one invocation per element of Y [P, K, Q] (contiguous, binding
 * 0, element 0; a grid of `stride` invocations loops as the elementwise
 * kernels), X [P, D, Q] and the K indices contiguous in binding 1 at their
 * element offsets (typed views of one buffer):
 *   Y[p, k, q] = X[p, j, q], j = ind[k] (+ D when negative)
 * and 0 where j is outside [0, D) (the compiled path's rule,
 * dml_ksched_gather_index); the runtime checks the indices' range on the
 * device first (dml_rt_eager_index_range: ReduceMin, ReduceMax), so an
 * index out of range is an error as on the CPU. */
#define DML_EAGER_GATHER 5u
enum {
  DML_EAGER_GA_N = 0, /* elements of Y */
  DML_EAGER_GA_STRIDE,
  DML_EAGER_GA_ITERS,
  DML_EAGER_GA_Q, /* elements after the axis */
  DML_EAGER_GA_K, /* indices */
  DML_EAGER_GA_D, /* the axis' extent in X */
  DML_EAGER_GA_X_OFF,
  DML_EAGER_GA_I_OFF,
  DML_EAGER_GA_WORDS,
};

/* Normalization kernels (kind DML_EAGER_NORM), one per dtype of x and y
 * (`dtype`: f32, f16, bf16; the statistics and the arithmetic in f32, y
 * rounded once), op LayerNormalization (each row's own mean and variance,
 * for LayerNormalization and InstanceNormalization) or BatchNormalization
 * (max_len's bit DML_EAGER_NM_FORM_GIVEN: the mean and variance given per
 * channel, inference), each in two forms
 * (max_len's bit DML_EAGER_NM_FORM_PER_ROW): 0, one workgroup of
 * DML_EAGER_LOCAL invocations per row, workgroup g of a grid of GRID
 * taking rows g, g + GRID, ... (TURNS turns); 1, for rows shorter than
 * DML_EAGER_NM_SHORT, one invocation per row, workgroups of
 * DML_EAGER_NM_ROW_LOCAL, invocation i of the grid of GRID workgroups
 * taking rows i, i + GRID * DML_EAGER_NM_ROW_LOCAL, ... (TURNS turns), its
 * sums serial in element order (the compiled path's short-row form). Row r
 * (r < ROWS) is the LEN contiguous elements of x (binding 1) from element
 * X_OFF + r * LEN, written to y (binding 0, contiguous, element 0) at r *
 * LEN; its channel is c = r % C. Scale is read from binding 2 (f32) at
 * element S_OFF + c * S_CS + j * S_JS for element j of the row, B from
 * binding 3 (f32) at B_OFF + c * B_CS + j * B_JS when HAS_B is 1 (else
 * not added; bind any buffer there). Own statistics: the compiled path's
 * shifted two-pass statistics (codegen/schedule_norm.c: x0 the row's first
 * element, mean of x - x0, then the mean of (x - x0 - mean)^2, each a
 * workgroup tree of 4 strided accumulators per invocation,
 * schedule_rows.c, or the serial sum of the per-row form), inv = 1 / sqrt(var + EPS), y =
 * (x - x0 - mean) * inv * scale + B (dml_ksched_norm_affine). Given ones: mean and var at
 * elements M_OFF + c and V_OFF + c of binding 2, y = the scheduler's BatchNormalization
 * formula (dml_ksched_bn_value: a = (1 / sqrt(var + EPS)) * scale, y = x *
 * a + (B - mean * a)). EPS: the bits of the f32 epsilon. On CUDA the
 * parameters are (y, x, scale, B, the words by value), as MatMul's. */
#define DML_EAGER_NORM 6u
#define DML_EAGER_NM_FORM_GIVEN 1
#define DML_EAGER_NM_FORM_PER_ROW 2
/* rows shorter than this take the per-row form (a quarter of the
 * workgroup form's 256 invocations: most of a row's workgroup would idle) */
#define DML_EAGER_NM_SHORT 64
#define DML_EAGER_NM_ROW_LOCAL 64
enum {
  DML_EAGER_NM_ROWS = 0,
  DML_EAGER_NM_LEN,
  DML_EAGER_NM_GRID,
  DML_EAGER_NM_TURNS,
  DML_EAGER_NM_C,
  DML_EAGER_NM_X_OFF,
  DML_EAGER_NM_S_OFF,
  DML_EAGER_NM_S_CS,
  DML_EAGER_NM_S_JS,
  DML_EAGER_NM_B_OFF,
  DML_EAGER_NM_B_CS,
  DML_EAGER_NM_B_JS,
  DML_EAGER_NM_HAS_B,
  DML_EAGER_NM_M_OFF,
  DML_EAGER_NM_V_OFF,
  DML_EAGER_NM_EPS,
  DML_EAGER_NM_WORDS,
};

/* MaxPool's Indices kernels (kind DML_EAGER_POOLIDX, op MaxPool, one per
 * dtype of X: f32, f16, bf16 compared in f32; f64 in f64; the integers
 * i8, i16, i32, i64, u8, u16, u32, u64 in their own dtype, exactly, as the
 * CPU's kernel compares them; out_dtype i64), 3-D (2-D as D = 1, 1-D as D = H = 1): one
 * invocation per element i < N of the Indices [NC, OD, OH, OW]
 * (contiguous, binding 0; a grid of `stride` invocations loops as the
 * elementwise kernels): the window's taps in order (k, i, j) at padded
 * coordinates (od * SD + k * DD, oh * SH + i * DH, ow * SW + j * DW), those
 * inside X [NC, D, H, W] (contiguous at X_OFF, binding 1) visited as the
 * CPU's kernel visits them (cpu_pool.c pool_window_f64): a tap wins when
 * it is the window's first inside X, greater than the best so far, or a
 * NaN over a number; the index is nc * D * H * W plus the winner's offset,
 * row-major (ORDER 0) or column-major (ORDER 1: d + h * D + w * D * H), 0
 * for a window with no tap inside X. */
#define DML_EAGER_POOLIDX 7u
enum {
  DML_EAGER_PI_N = 0,
  DML_EAGER_PI_STRIDE,
  DML_EAGER_PI_ITERS,
  DML_EAGER_PI_H,
  DML_EAGER_PI_W,
  DML_EAGER_PI_OH,
  DML_EAGER_PI_OW,
  DML_EAGER_PI_KH,
  DML_EAGER_PI_KW,
  DML_EAGER_PI_SH,
  DML_EAGER_PI_SW,
  DML_EAGER_PI_PH,
  DML_EAGER_PI_PW,
  DML_EAGER_PI_DH,
  DML_EAGER_PI_DW,
  DML_EAGER_PI_X_OFF,
  DML_EAGER_PI_ORDER,
  DML_EAGER_PI_D,
  DML_EAGER_PI_OD,
  DML_EAGER_PI_KD,
  DML_EAGER_PI_SD,
  DML_EAGER_PI_PD,
  DML_EAGER_PI_DD,
  DML_EAGER_PI_WORDS,
};

/* Bindings and push-constant words of every kernel's pipeline layout
 * (128 bytes, Vulkan's guaranteed minimum). */
#define DML_EAGER_BINDINGS 4u
#define DML_EAGER_PC_MAX 32u
_Static_assert(DML_EAGER_PC_WORDS <= DML_EAGER_PC_MAX &&
                   DML_EAGER_MM_WORDS <= DML_EAGER_PC_MAX &&
                   DML_EAGER_CV_WORDS <= DML_EAGER_PC_MAX &&
                   DML_EAGER_GA_WORDS <= DML_EAGER_PC_MAX &&
                   DML_EAGER_NM_WORDS <= DML_EAGER_PC_MAX &&
                   DML_EAGER_PI_WORDS <= DML_EAGER_PC_MAX,
               "push constants beyond 128 bytes");

/* A count of a reduction kernel's grid (dml_kpkg_lin_t's meaning). */
typedef struct dml_eager_lin {
  int64_t c0, c;
  int32_t sym;
  uint32_t more;
} dml_eager_lin_t;

/* One kernel of the library: op `op` of `n_inputs` operands of dtype
 * `dtype` (Where's condition: bool, dml_eager_in_dtype) giving `out_dtype`
 * (a dml_dtype_t; they differ for Cast, and for the compares, whose output
 * is bool; the operands' for MatMul and Conv: f32, f64), its attributes at their defaults
 * (Mod with fmod = 1, Cast's `to` out_dtype; Clip's min and max are operands 1 and 2,
 * opset 13) but those of the formula table's unary ops, read from the words
 * DML_EAGER_PC_ATTR at dispatch, SPIR-V `words`. Element offsets, strides and indices
 * count elements of the operand's dtype (the kernels read typed views of the buffers).
 * Identity (kind DML_EAGER_EW) is the strided copy. */
typedef struct dml_eager_kernel {
  dml_op_t op;
  uint32_t kind; /* DML_EAGER_EW, _REDUCE, _MATMUL, _CONV, _GATHER, _NORM, _POOLIDX */
  uint32_t n_inputs;
  uint32_t n_words;
  const uint32_t *words;
  uint32_t local[3];        /* DML_EAGER_REDUCE */
  dml_eager_lin_t items[3]; /* DML_EAGER_REDUCE */
  /* DML_EAGER_REDUCE: the longest reduced length S1 the kernel was
   * scheduled for (its bound: up to 256 one invocation per row, beyond
   * that one workgroup per row, the scheduler's choice). DML_EAGER_EW: the
   * dims it indexes, the last ones of the layout (1: the flat form, no
   * index division; 3, Identity's; DML_EAGER_RANK). DML_EAGER_MATMUL: 1
   * for the unit-stride form, 0 for any strides. DML_EAGER_GATHER: 0.
   * DML_EAGER_NORM: the form, DML_EAGER_NM_FORM_GIVEN (BatchNormalization's
   * given statistics; else each row's own) | DML_EAGER_NM_FORM_PER_ROW (one
   * invocation per row; else a workgroup per row). */
  int64_t max_len;
  uint32_t dtype, out_dtype;
  /* ArgMax/ArgMin (DML_EAGER_REDUCE, out_dtype i64): the kernel's
   * select_last_index (a row for 0 and one for 1); 0 for every other row */
  uint32_t select_last;
} dml_eager_kernel_t;

/* The dtype of operand j of elementwise row E: `dtype`, but Where's
 * condition (operand 0), which is bool (one byte per element, 0 or 1, as
 * the compiled path stores bool). Its offsets and strides count elements of
 * this dtype. The one definition of the rows' operand dtypes: the
 * generator, dml_tensor.c, rt_cuda.c and the tests read it. */
static inline dml_dtype_t dml_eager_in_dtype(const dml_eager_kernel_t *E, uint32_t j) {
  return E->op == DML_OP_WHERE && j == 0 ? DML_DTYPE_BOOL : (dml_dtype_t)E->dtype;
}

/* The SPIR-V library (dml_eager_spirv.c, generated at build time); 0
 * kernels in builds without the GPU code generator (glslang). */
extern const dml_eager_kernel_t dml_eager_spirv[];
extern const uint32_t dml_eager_spirv_count;

/* The PTX library (docs/tensor.md "Eager ops on CUDA"): the same kernels,
 * row for row (the same generator, dmlc_eager_libgen --ptx, renders each
 * kernel IR as CUDA C and compiles it with clang-16 to PTX for sm_80, as
 * `dmlc compile --target cuda` does), in dml_eager_ptx.c. Each row's
 * `words` holds the NUL-terminated PTX text (read it as `const char *`;
 * n_words: its bytes with the NUL, rounded up to whole words), whose one
 * entry point is DML_EAGER_PTX_ENTRY with k. The kernel's parameters
 * are (float *y, const float *x, the push-constant words by value): the
 * output at binding 0's place, the input buffer at binding 1's; the
 * MatMul and Conv rows' are (y, A or X, B or W, the bias, the words by
 * value): bindings 0 to 3 (rt_cuda.c run_kernel_bufs). The
 * runtime loads a row's module (the driver JIT-compiles the PTX) on its
 * first use on a device. 0 kernels in builds without it (no code
 * generator or clang-16, DMLC_WITH_CUDA off), unless DMLC_EAGER_PTX_C names
 * a dml_eager_ptx.c written by another build (the runtime-only build of
 * scripts/gpu_check.sh). */
extern const dml_eager_kernel_t dml_eager_ptx[];
extern const uint32_t dml_eager_ptx_count;

/* The entry point of row k of the PTX library: "dml_eager_<k>". */
#define DML_EAGER_PTX_ENTRY "dml_eager_%u"

#endif /* DML_EAGER_LIB_H_ */
