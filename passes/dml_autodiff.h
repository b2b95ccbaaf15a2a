/*
 * dml_autodiff.h — reverse-mode automatic differentiation of an IR function.
 *
 * dml_autodiff() appends to function `f` the nodes that compute the
 * gradient of a scalar value `loss` with respect to some of f's values
 * (function arguments or globals, usually the parameters): one reverse
 * sweep over f's nodes from the last to the first, each node's vector-Jacobian
 * product (VJP) rule turning the gradients of its outputs into gradients of
 * its inputs, contributions to one value summed with Add. Rules are built
 * from ordinary IR ops (Mul, MatMul, Gemm, ReduceSum, ConvTranspose, ...) and
 * three gradient ops of ops.def (ConvWeightGrad, MaxPoolGrad,
 * AveragePoolGrad), so later passes fold, fuse and plan them like the rest.
 * Shape inference must have run on `f` (every value typed); the new nodes
 * are typed as they are created.
 *
 * Only values on a path from a `wrt` value to `loss` are differentiated.
 * Integer and bool values carry no gradient. A `wrt` value that `loss` does
 * not depend on gets a gradient of NULL.
 *
 * The VJP of each op follows from its ONNX definition (the ONNX operator
 * spec, opset 17); notes per rule in autodiff.c. Ops with a rule are listed
 * by dml_autodiff_supports().
 */
#ifndef DML_AUTODIFF_H_
#define DML_AUTODIFF_H_

#include "dml_ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when `op` has a VJP rule (for its differentiable inputs). */
int dml_autodiff_supports(dml_op_t op);

/* Appends to `f` the gradient of `loss` (a float scalar: rank 0, or every
 * dim 1, computed in `f`) with respect to each of wrt[0..n_wrt), and sets
 * out_grads[i] to it (a value of f typed as wrt[i]) or to NULL when loss
 * does not depend on wrt[i]. `seed`, when not NULL, is the gradient of the
 * loss itself (a value of f typed as loss); NULL means 1. With a seed the
 * loss may be any float tensor (any shape, symbolic dims included): the
 * result is the vector-Jacobian product seed^T * d(loss)/d(wrt), e.g. the
 * gradient of sum(loss) for a seed of ones (expand-gradient's use).
 * Errors: INVALID_ARGUMENT (loss not a float scalar without a seed, seed
 * not typed as the loss, wrt not a float value
 * of f or of its module's globals, untyped values); UNIMPLEMENTED naming
 * every node on a path from a wrt value to the loss whose op (or whose
 * attribute or input form) has no VJP rule, with the node's name and op. */
dml_status_t dml_autodiff(dml_ir_function_t *f, dml_ir_value_t *loss,
                          dml_ir_value_t *seed, uint32_t n_wrt,
                          dml_ir_value_t *const *wrt, dml_ir_value_t **out_grads);

#ifdef __cplusplus
}
#endif
#endif /* DML_AUTODIFF_H_ */
