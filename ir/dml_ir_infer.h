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

#ifdef __cplusplus
}
#endif
#endif /* DML_IR_INFER_H_ */
