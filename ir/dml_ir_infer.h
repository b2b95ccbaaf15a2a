/*
 * dml_ir_infer.h — shape and dtype functions keyed by op.
 *
 * dml_ir_infer_node() sets the dtype and shape of every output of `node`
 * from its inputs' types and attributes, following the ONNX spec's shape
 * inference for the op. Symbolic dims propagate (dml_dim_t: value * sym):
 * Flatten of [batch,16,4,4] at axis 1 gives [batch,256], Gemm of [batch,256]
 * gives [batch,10]. Inputs that carry shapes (Reshape's shape, Slice's
 * starts/ends, Expand's shape, reduction axes, ...) are read from constant
 * globals or from the symbolic contents (dml_ir_value_t::sym_data) that
 * inference itself records for Shape, Gather, Concat, Unsqueeze, Squeeze,
 * Cast, Slice and arithmetic on small i64 tensors, so exporter chains like
 * Shape -> Gather -> Unsqueeze -> Concat -> Reshape resolve statically.
 *
 * Errors (op "shape-infer"): INVALID_ARGUMENT naming the node, op, input
 * shapes and the offending attribute/value when the node is ill-formed
 * (incompatible broadcast, bad axis, ...); UNIMPLEMENTED when an output
 * shape depends on run-time data that cannot be expressed with bounded
 * symbolic dims.
 */
#ifndef DML_IR_INFER_H_
#define DML_IR_INFER_H_

#include "dml_ir.h"

#ifdef __cplusplus
extern "C" {
#endif

dml_status_t dml_ir_infer_node(dml_ir_module_t *m, dml_ir_node_t *node);

/* 1 when `op` has a shape rule: a line of runtime/base/op_rules.def or of
 * the formula table ew_ops.def; 0 otherwise (out-of-range values
 * included). dml_ir_infer_node() fails with "no shape rule" for the rest. */
int dml_ir_infer_has_rule(dml_op_t op);

/* The most elements memory planning gives value `v` whose dims use
 * data-dependent symbols (dml_ir.h): the input's element count for the
 * outputs of Reshape, Squeeze, Unsqueeze, Slice, Split, TopK and the
 * reductions (never larger), else the module's dynamic_max_elements (the
 * product of the dims' bounds can be far larger); the kernel, or the
 * executor for later values, checks the actual size against it. -1 when
 * `v` has no such dim, or is an output of NonZero, Unique, Compress or
 * NonMaxSuppression (their kernels fill the output at its bounds). */
int64_t dml_ir_value_max_elements(const dml_ir_module_t *m, const dml_ir_value_t *v);

#ifdef __cplusplus
}
#endif
#endif /* DML_IR_INFER_H_ */
