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
 * Elementwise kernels (kind DML_EAGER_EW), f32 only in this version: the
 * op's formula is the compiled path's (the scheduler's ew_value, reached
 * through dml_ksched_ew_node), so an eager op and a compiled package give
 * the same results. Output y (binding 0, contiguous, element offset 0) has
 * n elements of a row-major index space of DML_EAGER_RANK dims (leading
 * dims 1); input j (binding 1) is read at element
 *   off_j + sum_d coord_d * stride_j_d
 * (stride 0 on broadcast dims). Invocation g of a grid of `stride`
 * invocations computes the elements g, g + stride, ... (`iters` of them)
 * below n. Indices are 32-bit unsigned: every element index must be below
 * 2^32. The workgroup is DML_EAGER_LOCAL invocations.
 */
#ifndef DML_EAGER_LIB_H_
#define DML_EAGER_LIB_H_

#include <stdint.h>

#include "dml_ops.h"

#define DML_EAGER_EW 1u
#define DML_EAGER_RANK 6u       /* dims of the index space (after merging) */
#define DML_EAGER_MAX_INPUTS 2u /* elementwise operands */
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
};

/* One kernel of the library: op `op` of `n_inputs` f32 operands (its
 * attributes at their defaults, Mod with fmod = 1), SPIR-V `words`. */
typedef struct dml_eager_kernel {
  dml_op_t op;
  uint32_t kind; /* DML_EAGER_EW */
  uint32_t n_inputs;
  uint32_t n_words;
  const uint32_t *words;
} dml_eager_kernel_t;

/* The SPIR-V library (dml_eager_spirv.c, generated at build time); 0
 * kernels in builds without the GPU code generator (glslang). */
extern const dml_eager_kernel_t dml_eager_spirv[];
extern const uint32_t dml_eager_spirv_count;

#endif /* DML_EAGER_LIB_H_ */
