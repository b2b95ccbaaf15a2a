/*
 * dml_ops.h — the op vocabulary, expanded from ops.def.
 */
#ifndef DML_OPS_H_
#define DML_OPS_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Op flags (ops.def, last column). */
#define DML_OPF_ELEMENTWISE 0x1u /* output[i] depends on broadcast input[i] */
#define DML_OPF_COMMUTATIVE 0x2u /* operands may be swapped (CSE) */
#define DML_OPF_VIEW 0x4u        /* output is the input's bytes, reshaped */
#define DML_OPF_REDUCTION 0x8u   /* reduces over axes */
#define DML_OPF_RANDOM 0x10u     /* draws random numbers: never folded or merged */
/* Writes state (Assign): never folded, merged or removed as dead. */
#define DML_OPF_SIDE_EFFECT 0x20u
/* Exists only between import and its lowering pass (Gradient: the
 * expand-gradient pass); never in a package: it has no kernel, the package
 * writer refuses it and the package loader rejects it. */
#define DML_OPF_COMPILE_ONLY 0x40u
/* Control flow (If, Loop): run by the executor (rt_session.c: run_if,
 * run_loop) over functions of the package, not by a kernel; the GPU
 * targets refuse it. */
#define DML_OPF_CONTROL_FLOW 0x80u
/* Takes string tensors (DML_DTYPE_STRING) on the CPU: data movement (the
 * kernel moves dml_str_t descriptors), Cast, Equal and the string ops
 * (runtime/cpu/cpu_strings.c). Shape inference refuses a string input of
 * any other op, and the GPU targets refuse string tensors. */
#define DML_OPF_STRINGS 0x100u
/* Reduced precision (dmlc compile --precision f16|bf16, the `precision`
 * pass, passes/precision.c): HALF marks the ops whose GPU kernels (Vulkan,
 * Metal, CUDA) take f16/bf16 storage for their float inputs and outputs,
 * computing in f32 registers and rounding each result once (elementwise
 * ops, data movement, Shape/Size, Gemm/MatMul and Conv with f32
 * accumulation, the pools with f32 sums, BatchNormalization,
 * LayerNormalization and InstanceNormalization with mean and variance in
 * f32); such a node runs in the half dtype when one of its float inputs
 * already is half. HALF_SEED ops (Gemm, MatMul, Conv) start half regions:
 * their f32 weights are stored converted and their f32 activations cast.
 * Every other op (Softmax, GroupNormalization, reductions, losses,
 * ConvTranspose, ...) keeps f32 values, the pass casting its half inputs
 * back to f32. */
#define DML_OPF_HALF 0x200u
#define DML_OPF_HALF_SEED 0x400u
/* Tolerance class of the op's f32 result against a reference computed
 * from the same inputs (dmlc check, runtime/rt_check.c; the every-op
 * differential test, tests/check): at most one of the three; none is
 * "accumulating" (sums over many terms, and any op not classed). Views
 * (DML_OPF_VIEW) are exact. The tolerances: dml_op_tol_class() below.
 *   EXACT   the result is one of the inputs' values or one exactly rounded
 *           operation (data movement, compares, Relu, Max, ...)
 *   ARITH   a few roundings of basic operations (Add, Div, Sqrt, ...)
 *   TRANSC  library functions (Exp, Log, Tanh, Pow, ...) */
#define DML_OPF_EXACT 0x10000u
#define DML_OPF_ARITH 0x20000u
#define DML_OPF_TRANSC 0x40000u

/* Op identifiers. Values are stable only within one build; packages store
 * op names, not these numbers. */
typedef enum dml_op {
  DML_OP_INVALID = 0,
#define DML_OP(e, name, imin, imax, omin, omax, flags) DML_OP_##e,
#include "ops.def"
#undef DML_OP
  DML_OP_COUNT_
} dml_op_t;

typedef struct dml_op_info {
  const char *name;             /* "Conv" */
  int min_inputs, max_inputs;   /* max -1: variadic */
  int min_outputs, max_outputs; /* max -1: variadic */
  uint32_t flags;
} dml_op_info_t;

/* Tolerance classes (DML_OPF_EXACT, DML_OPF_ARITH, DML_OPF_TRANSC). */
typedef enum dml_tol_class {
  DML_TOL_EXACT = 0,  /* 0: bit-exact (NaN matches NaN) */
  DML_TOL_ARITH = 1,  /* 1e-5 scaled error */
  DML_TOL_TRANSC = 2, /* 1e-4 */
  DML_TOL_ACCUM = 3,  /* 1e-4, errors scaled by the terms' magnitude */
} dml_tol_class_t;

/* The tolerance class of `op` from its ops.def flags: a view is exact, an
 * op with none of the three flags accumulating (DML_OP_INVALID too). The
 * tolerances and the error measure: runtime/rt_check.c, docs/kernels.md
 * ("Checking a device"). */
dml_tol_class_t dml_op_tol_class(dml_op_t op);

/* Static information about `op`; NULL for DML_OP_INVALID or out of range. */
const dml_op_info_t *dml_op_info(dml_op_t op);
/* "Conv" for DML_OP_CONV; "<invalid>" when out of range. */
const char *dml_op_name(dml_op_t op);
/* Looks up an op by its IR/ONNX name (`len` characters); DML_OP_INVALID if
 * unknown. */
dml_op_t dml_op_from_name(const char *name, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* DML_OPS_H_ */
