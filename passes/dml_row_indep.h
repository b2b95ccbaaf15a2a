/*
 * dml_row_indep.h — row-independence of a function over its batch rows.
 *
 * `dmlc run` and dml_trainer_predict run more rows than the package's batch
 * bound in chunks of the bound and concatenate the outputs. That equals one
 * run over all rows only when every output row i depends on input rows i
 * alone. This analysis decides it, conservatively, on the optimized IR; the
 * compiler stores the verdict in the package's meta section
 * (docs/package-format.md: `rows-independent`, `rows-mixed-by`).
 */
#ifndef DML_ROW_INDEP_H
#define DML_ROW_INDEP_H

#include <stddef.h>

#include "dml_ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Decides whether function `f` (shapes inferred) is row-independent over
 * its batch symbol: the symbol of dim 0 (multiplier 1) of its first
 * argument that has one. Every value is classified as constant (no input
 * data: globals, arguments without the batch dim), shape-only (depends on
 * the row count, not on the data: Shape, Size and arithmetic on them),
 * row-aligned (dim 0 is exactly the batch symbol and row i depends only on
 * input rows i) or mixed. Per op: elementwise ops with every row-aligned
 * operand of the output's rank; views, Reshape, Flatten keeping dim 0 and
 * the row size; MatMul/Gemm with a row-aligned A and constant B; Conv,
 * pools, Resize, BatchNormalization (inference), LayerNorm/InstanceNorm/
 * GroupNorm, Softmax/LogSoftmax/Hardmax, reductions, ArgMax/TopK, Concat,
 * Split, Slice, Gather whose axes exclude 0; Transpose with perm[0] = 0;
 * Gather of a constant table by row-aligned indices along axis 0;
 * Dropout without training mode. Anything else (random ops, control flow,
 * losses, recurrent ops, unknown ops) mixes rows.
 *
 * Returns 1 when every result of `f` is row-aligned, 0 otherwise (also
 * when `f` has no batch symbol); on 0, `why` (`why_size` bytes, may be
 * NULL) names the first node that breaks it, e.g. "node 'sm' (Softmax,
 * axis 0) mixes rows", or the result that is not row-aligned. Row
 * independence is what concatenating chunked runs needs; a node that
 * merely reads the row count (Shape) is fine where that count only shapes
 * values (Reshape targets), not where it enters arithmetic on the rows. */
int dml_row_indep_analyze(const dml_ir_function_t *f, char *why, size_t why_size);

#ifdef __cplusplus
}
#endif

#endif /* DML_ROW_INDEP_H */
