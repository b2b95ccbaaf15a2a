/*
 * dml_onnx.h — the ONNX frontend: an ONNX model (protobuf) -> a dmlc IR module.
 *
 * The imported module holds one function, `forward`:
 *   - arguments: the graph inputs that are not initializers, typed from their
 *     ValueInfo. A dim_param becomes a module symbol of that name, and a dim
 *     with neither value nor param a fresh symbol "<input>_dim<k>"; every such
 *     symbol gets the bound opts->batch_bound;
 *   - results: the graph outputs, in order. Each result is a node result named
 *     after the ONNX output (an output that is directly a graph input or an
 *     initializer gets an Identity node);
 *   - nodes: one IR node per ONNX node (a few older-opset forms expand to
 *     several, see below), named after the ONNX node; every value carries its
 *     ONNX tensor name. Node result types are left unknown (rank
 *     DML_RANK_UNKNOWN, dtype INVALID) for shape inference to fill in.
 * Initializers become globals: float ones DML_IR_GLOBAL_PARAM (trainable),
 * except tensors used only as BatchNormalization's running mean/var, which are
 * DML_IR_GLOBAL_STATE; other dtypes have no flag. Constant nodes become
 * globals (no flag) named after their output, with no node.
 *
 * Opsets 1..17 of the default domain ("" or "ai.onnx") are accepted (before
 * opset 7, the ops whose forms match a later one: onnx_ops.def); older
 * forms are normalized into the IR's conventions (those of ONNX opset 13+,
 * reductions with axes as input 1 as in opset 18):
 *   - Squeeze/Unsqueeze `axes` (< 13), ReduceSum `axes` (< 13),
 *     ReduceMean/Max/Min/Prod `axes` (all opsets), Split `split` (< 13),
 *     Slice `starts`/`ends`/`axes` (< 10), Pad `pads`/`value` (< 11),
 *     Clip `min`/`max` (< 11), Dropout `ratio` (< 12) become constant inputs;
 *   - Softmax/LogSoftmax (< 13, 2-D coercion) become
 *     Shape(x), Flatten(x, axis) -> Softmax(axis=1) -> Reshape(.., shape);
 *   - BatchNormalization `spatial` (7, 8) must be 1 and is dropped;
 *   - Upsample (7..9) and Resize (10) become Resize with
 *     coordinate_transformation_mode "asymmetric" and nearest_mode "floor".
 * Other attributes are copied as ONNX spells them (Cast's `to` keeps ONNX's
 * TensorProto.DataType numbering; ConstantOfShape's `value` is a
 * DML_ATTR_TENSOR). The op table is frontends/onnx/onnx_ops.def.
 *
 * Errors (op "onnx.import"):
 *   - DATA_LOSS: bytes that are not an ONNX model (malformed or truncated
 *     protobuf, nesting too deep);
 *   - UNIMPLEMENTED: opset outside 1..17, string/complex tensors, sparse
 *     constants, and unsupported ops or attributes: ONE error whose reason
 *     lists every unsupported op type of the model ("model uses 2 unsupported
 *     ops (opset 13): Foo, NonMaxSuppression") with a detail line per
 *     offending node ("node 'x' (Foo)");
 *   - INVALID_ARGUMENT: a node input naming an undefined tensor (node and
 *     tensor named), a cycle, a tensor defined twice, initializer data whose
 *     size does not match its dims, external data paths that are absolute or
 *     leave the model's directory, or offsets/lengths beyond the data file;
 *   - RESOURCE_EXHAUSTED: sizes that overflow, out of memory;
 *   - NOT_FOUND / IO: model or external data file missing or unreadable.
 * The input bytes are treated as untrusted: no input crashes the importer.
 *
 * Ownership: on success *out_module is a new module the caller releases with
 * dml_ir_module_release(); on failure *out_module is left unchanged and the
 * returned status is the caller's to free.
 */
#ifndef DML_ONNX_H_
#define DML_ONNX_H_

#include <stddef.h>
#include <stdint.h>

#include "dml_ir.h"
#include "dml_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Import options. Zero-initialize, then set what you need. */
typedef struct dml_onnx_import_options {
  /* Inclusive upper bound given to every symbolic dim (dim_param or an
   * unnamed dim) of the graph inputs; 64 when 0. Must not be negative. */
  int64_t batch_bound;
} dml_onnx_import_options_t;

/* Imports the ONNX model file at `path`. External data files are read
 * relative to the directory holding `path`. `opts` may be NULL (defaults).
 * Errors: see the top of this header. */
dml_status_t dml_onnx_import_file(const char *path, const dml_onnx_import_options_t *opts,
                                  dml_ir_module_t **out_module);

/* Imports an ONNX model from `len` bytes at `data` (lent; not kept). External
 * data is read relative to `base_dir`; with base_dir NULL a model that refers
 * to external data fails with INVALID_ARGUMENT. `opts` may be NULL.
 * Errors: see the top of this header. */
dml_status_t dml_onnx_import_memory(const void *data, size_t len, const char *base_dir,
                                    const dml_onnx_import_options_t *opts,
                                    dml_ir_module_t **out_module);

#ifdef __cplusplus
}
#endif
#endif /* DML_ONNX_H_ */
