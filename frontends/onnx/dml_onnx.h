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
 * except tensors used only as BatchNormalization's running mean/var or as
 * FakeQuantize's range (com.dmlc), which are DML_IR_GLOBAL_STATE; other dtypes have no
 * flag. Constant nodes become globals (no flag) named after their output, with no node.
 *
 * Opsets 1..23 of the default domain ("" or "ai.onnx") are accepted (before
 * opset 7, the ops whose forms match a later one: onnx_ops.def; in 18..23,
 * each op whose new form dmlc has, the others refused naming op and opset,
 * e.g. Pad-18's axes, blocked Q/DQ, DFT-20); older
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
 * If (opsets 7..17) has no IR node: both branch subgraphs are imported inline
 * (names they define get fresh names unique in the module; names of
 * enclosing scopes resolve through the enclosing name map; branch
 * initializers and Constants become globals; nested Ifs recursively), then
 * each output is Where(cond, then_out, else_out), cond reshaped to a scalar.
 * BOTH BRANCHES ARE EVALUATED: an error that only the untaken branch would
 * raise (an out-of-range Gather index) still fails the run. With a constant
 * cond only the taken branch is imported (no Where). Refused: branches with
 * random ops or non-tensor outputs (UNIMPLEMENTED), output pairs whose
 * declared dtypes differ (INVALID_ARGUMENT) or whose declared shapes differ
 * (UNIMPLEMENTED); undeclared shapes that differ are broadcast by Where.
 * Details: frontends/onnx/onnx_if.c.
 * Sequences (opsets 11..17) have no IR type: they are lowered at import
 * time. A sequence-typed ONNX value becomes a compile-time list of IR tensor
 * values (each element its own value; elements may differ in shape), and the
 * sequence ops rearrange the lists: SequenceConstruct/SequenceEmpty make one,
 * SequenceLength becomes a constant i64 scalar global, SequenceAt an
 * Identity of the element, SequenceInsert/SequenceErase a new list (at a
 * constant position, by default the end), ConcatFromSequence a Concat (with
 * new_axis=1, Unsqueeze of each element first), SplitToSequence a Split with
 * static sizes (then Squeeze of each part for keepdims=0 without split),
 * SequenceMap its body imported inline once per element (as If's branches),
 * and Identity of a sequence the same list. A sequence graph input becomes
 * tensor arguments "<name>.0", "<name>.1", ... given by the import option
 * `sequence_inputs` (element count and shapes); a sequence graph output
 * becomes results "<name>.0", "<name>.1", ... The structure must be known at
 * compile time: a position or split that is not a constant (an initializer,
 * a Constant, a bound input), a SplitToSequence whose input dim at `axis` is
 * not static, a sequence input without `sequence_inputs`, a sequence read by
 * any other op, or sequences of non-tensors are UNIMPLEMENTED errors naming
 * the node; positions out of range are INVALID_ARGUMENT. Maps are not
 * supported. Details: frontends/onnx/onnx_seq.c.
 * Optionals (opsets 15..17) have no IR type either: whether an optional
 * holds a value is decided at import time. A present optional is its
 * element (a tensor value, or a sequence's list); a none has no IR value.
 * Optional(x) is x (Identity, or the same list), Optional() with its `type`
 * attribute a none, OptionalHasElement a constant bool scalar global,
 * OptionalGetElement the element (INVALID_ARGUMENT naming the node for a
 * none), Identity of a none a none. An optional graph input is present or
 * none as the import option `optional_inputs` says: present, a tensor
 * argument of its name or (with `sequence_inputs`) a sequence input; none,
 * no argument. An optional graph output that is none has no result; a
 * present one is a tensor result or a sequence's results "<name>.0", ...
 * An If whose cond is known at compile time (a constant, a bound input, or
 * Identity / Not of one, as OptionalHasElement gives) imports only the taken
 * branch, whose outputs may then be sequences and optionals. An optional
 * input not in `optional_inputs`, a none read by any other op (or carried by
 * a Loop), and If branch outputs that are not tensors under a cond that
 * depends on run-time data are UNIMPLEMENTED errors. Optionals of maps,
 * sparse tensors or optionals are not supported. Details:
 * frontends/onnx/onnx_optional.c.
 * Loop (opsets 7..17) and Scan (opsets 8 and 9..17) have no IR node either:
 * they are unrolled at import time, the body imported inline once per
 * iteration with the carried values passed from copy to copy. Loop needs its
 * trip count M known at compile time (an initializer, a Constant, an input
 * bound with `bind`, or a value shape inference computes from those) and a
 * condition that provably stays true (the cond input absent or a constant
 * true, and the body's cond output an Identity chain of its cond input or a
 * constant true); a constant false cond runs no iteration. Iteration i binds
 * iter_num to the constant i; scan outputs are stacked along a new axis 0;
 * with no iteration a scan output is empty, of the shape the body declares
 * (which must be static). Carried values may be sequences (the lists above).
 * Scan iterates over the static length of its scan inputs along
 * scan_input_axes (Gather of each position, reversed per
 * scan_input_directions) and stacks its scan outputs along scan_output_axes
 * (reversed per scan_output_directions); Scan-8 runs that per element of the
 * static batch dim, its sequence_lens absent or the full length everywhere.
 * A trip count that is not a constant, a condition that can turn false, a
 * scan length that is not static, a Scan of zero iterations, more than 65,536
 * iterations of one node or more than 100,000 body nodes imported by
 * unrolling in all are UNIMPLEMENTED errors naming the node ("the number of
 * iterations depends on run-time data"). Details: frontends/onnx/onnx_loop.c.
 * Other attributes are copied as ONNX spells them (Cast's `to` keeps ONNX's
 * TensorProto.DataType numbering; ConstantOfShape's `value` is a
 * DML_ATTR_TENSOR). The op table is frontends/onnx/onnx_ops.def.
 *
 * Errors (op "onnx.import"):
 *   - DATA_LOSS: bytes that are not an ONNX model (malformed or truncated
 *     protobuf, nesting too deep);
 *   - UNIMPLEMENTED: opset outside 1..23, string/complex tensors, sparse
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

/* The default-domain opsets the importer reads (a model importing another
 * is INVALID_ARGUMENT naming it); `dmlc compile --help` prints this range. */
#define DML_ONNX_OPSET_MIN 1
#define DML_ONNX_OPSET_MAX 28

#ifdef __cplusplus
extern "C" {
#endif

/* Import options. Zero-initialize, then set what you need. */
typedef struct dml_onnx_import_options {
  /* Inclusive upper bound given to every symbolic dim (dim_param or an
   * unnamed dim) of the graph inputs; 64 when 0. Must not be negative. */
  int64_t batch_bound;
  /* Per-symbol bounds (dmlc compile --dim-bound H=1280,W=1280): the symbol
   * of each named dim_param (or unnamed dim "<input>_dim<k>") gets that
   * bound instead of batch_bound; `input_shapes` ranges take precedence.
   * A dim_param `K*name` or `name*K` (K a positive integer, name an
   * identifier, spaces allowed; PyTorch's dynamo exporter writes "2*h") is
   * the dim K * symbol `name`: bounded by an entry `name`, or by an entry
   * spelled as the dim_param (spaces aside) whose bound B gives name <=
   * floor(B / K), else by batch_bound / K (at least 1); a symbol that
   * several dims share keeps the smallest bound they give. Other
   * expressions (h+1, floor(h/2)) are one opaque symbol of that name.
   * INVALID_ARGUMENT for a name no graph input's dims use (listing those
   * that exist), a bound < 1, a name given twice, both spellings of one
   * K*name dim bounded, or a K*name bound below K. */
  const struct dml_onnx_dim_bound *dim_bounds;
  size_t n_dim_bounds;
  /* Graph inputs to specialize: each named (non-initializer) graph input
   * becomes a constant global holding the given tensor (copied), and is no
   * longer an argument of `forward`. Used for inputs that carry shapes
   * (Reshape's shape, Expand's shape, Slice's starts, ...), whose values
   * shape inference needs at compile time. The tensor's dtype and rank must
   * be the input's declared ones, and its dims equal every static declared
   * dim. Errors (INVALID_ARGUMENT): a name that is no graph input, a name
   * bound twice, a tensor that does not match the declared type. */
  const struct dml_onnx_binding *bind;
  size_t n_bind;
  /* Graph inputs whose declared shape is replaced by a static one (the
   * dtype stays): for models that declare a shape other than the one they
   * are fed (ONNX's own test runner ignores declared shapes), or to fix
   * symbolic dims. Errors (INVALID_ARGUMENT): a name that is no
   * non-initializer graph input, a name given twice, a rank above
   * DML_MAX_RANK, a negative dim. */
  const struct dml_onnx_input_shape *input_shapes;
  size_t n_input_shapes;
  /* Symbolic dims with a range (dmlc compile --input-shape
   * x=1x3x[32:640]x[32:1280:32]; dml_onnx_dim_range_t). INVALID_ARGUMENT:
   * a name that is no non-initializer graph input, a dim outside the rank,
   * a dim declared static, max < 1, min > max, max not a multiple of step. */
  const struct dml_onnx_dim_range *input_ranges;
  size_t n_input_ranges;
  /* Sequence graph inputs: each named graph input of sequence type becomes
   * n_elems tensor arguments "<name>.0", "<name>.1", ... of the declared
   * element dtype and the given static shapes (sequences are lowered at
   * import time, see above). A sequence input not listed here is refused
   * (UNIMPLEMENTED); INVALID_ARGUMENT for a rank outside 0..DML_MAX_RANK. */
  const struct dml_onnx_sequence_input *sequence_inputs;
  size_t n_sequence_inputs;
  /* Optional graph inputs (opsets 15..17): whether each named graph input
   * of optional type holds a value, decided at compile time (optionals are
   * lowered at import time, see above). A present optional of a tensor
   * becomes a tensor argument of the input's name (the element's declared
   * dtype and shape; `input_shapes` and `bind` apply); a present optional of
   * a sequence becomes a sequence input, which `sequence_inputs` must list
   * under the same name; an absent one ("none") has no argument. An optional
   * input not listed here is refused (UNIMPLEMENTED). */
  const struct dml_onnx_optional_input *optional_inputs;
  size_t n_optional_inputs;
} dml_onnx_import_options_t;

/* One optional graph input (see `optional_inputs` above); lent for the
 * import. */
typedef struct dml_onnx_optional_input {
  const char *name;
  int present; /* 0: none */
} dml_onnx_optional_input_t;

/* One sequence graph input's structure (see `sequence_inputs` above); lent
 * for the import. */
typedef struct dml_onnx_sequence_input {
  const char *name;
  size_t n_elems;
  const struct dml_onnx_input_shape *elems; /* n_elems shapes; their names unused */
} dml_onnx_sequence_input_t;

/* One shape override (see `input_shapes` above); lent for the import. */
typedef struct dml_onnx_input_shape {
  const char *name;
  int32_t rank;
  const int64_t *dims; /* rank dims */
} dml_onnx_input_shape_t;

/* One symbolic dim range (see `input_ranges` above); lent for the import.
 * Dim `dim` of graph input `input` stays symbolic (the declared dim's
 * symbol, its dim_param, or a fresh "<input>_dim<k>" when unnamed or the
 * rank comes from an `input_shapes` override) with bound `max` and the
 * promised minimum `min` (0: 1); `step` > 1 makes it a multiple of step:
 * the dim is step * S for a fresh symbol S "<sym>/<step>" of bound
 * max/step (an FPN's H, a multiple of 32, keeps H/8 and 2 * H/16 equal).
 * On a dim declared K * h (dim_param "2*h"), min/max/step are the dim's:
 * step must be a multiple of K (0 or 1: K, max then rounded down to a
 * multiple of K) and the dim is step * "h/<step/K>" (h itself when step is
 * K); INVALID_ARGUMENT otherwise. An `input_shapes` value for that dim is
 * ignored. */
typedef struct dml_onnx_dim_range {
  const char *input;
  int32_t dim;
  int64_t min, max, step;
} dml_onnx_dim_range_t;

/* The bound of one symbolic dim by its symbol name (see `dim_bounds`). */
typedef struct dml_onnx_dim_bound {
  const char *name;
  int64_t bound; /* >= 1 */
} dml_onnx_dim_bound_t;

/* One compile-time binding of a graph input (see `bind` above); both
 * pointers are lent for the duration of the import. */
typedef struct dml_onnx_binding {
  const char *name;
  const dml_tensor_t *value;
} dml_onnx_binding_t;

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

/* ===================================================================== */
/* ONNX tensors and model facts (onnx_tensor_io.c)                        */
/* ===================================================================== */

/* Reads a serialized onnx.TensorProto (a backend test's input_0.pb, or any
 * tensor saved with onnx.save_tensor / numpy_helper) from `path`, or from
 * `len` bytes at `data` (lent). On success *out holds dtype, rank and dims,
 * and out->data points into *out_buffer (malloc'd; the caller frees it; NULL
 * for an empty tensor). Every storage form of onnx_tensor.c is accepted
 * except external data.
 * Errors (op "onnx.tensor"): NOT_FOUND / IO for the file; DATA_LOSS for bytes
 * that are not a TensorProto (a SequenceProto or OptionalProto file, which
 * this function does not read, mostly parses as one with a `segment` or
 * without a data type, and is reported so; segmented tensors are rejected); UNIMPLEMENTED
 * for string, complex or external-data tensors; INVALID_ARGUMENT when the data does not
 * match the dims; RESOURCE_EXHAUSTED. */
dml_status_t dml_onnx_tensor_read_file(const char *path, dml_tensor_t *out,
                                       void **out_buffer);
dml_status_t dml_onnx_tensor_read_memory(const void *data, size_t len, dml_tensor_t *out,
                                         void **out_buffer);

/* Reads a serialized onnx.SequenceProto of tensors (a backend test's
 * input_K.pb / output_K.pb for a sequence value) from `path` or from `len`
 * bytes at `data` (lent): *out_n elements in *out_elems, each element's data
 * in (*out_buffers)[i] (as dml_onnx_tensor_read_memory); the caller frees
 * them with dml_onnx_sequence_free(). Errors (op "onnx.tensor"): NOT_FOUND /
 * IO; DATA_LOSS for malformed bytes; UNIMPLEMENTED for sequences of anything
 * but tensors; those of dml_onnx_tensor_read_memory for an element. */
dml_status_t dml_onnx_sequence_read_file(const char *path, size_t *out_n,
                                         dml_tensor_t **out_elems, void ***out_buffers);
dml_status_t dml_onnx_sequence_read_memory(const void *data, size_t len, size_t *out_n,
                                           dml_tensor_t **out_elems, void ***out_buffers);
void dml_onnx_sequence_free(size_t n, dml_tensor_t *elems, void **buffers);

/* An optional value read from a serialized onnx.OptionalProto (a backend
 * test's input_K.pb / output_K.pb for an optional value). */
typedef enum dml_onnx_optional_kind {
  DML_ONNX_OPTIONAL_NONE = 0,     /* no value */
  DML_ONNX_OPTIONAL_TENSOR = 1,   /* `tensor`, its data in `buffer` */
  DML_ONNX_OPTIONAL_SEQUENCE = 2, /* `n` tensors `elems`, data in `buffers` */
} dml_onnx_optional_kind_t;

typedef struct dml_onnx_optional_value {
  dml_onnx_optional_kind_t kind;
  dml_tensor_t tensor;
  void *buffer;
  size_t n;
  dml_tensor_t *elems;
  void **buffers;
} dml_onnx_optional_value_t;

/* Reads a serialized onnx.OptionalProto from `path` or from `len` bytes at
 * `data` (lent) into *out (freed with dml_onnx_optional_free()). Errors (op
 * "onnx.tensor"): NOT_FOUND / IO; DATA_LOSS for malformed bytes or a value
 * that contradicts elem_type; UNIMPLEMENTED for optionals of sparse tensors,
 * maps or optionals; those of the tensor and sequence readers for the value. */
dml_status_t dml_onnx_optional_read_file(const char *path,
                                         dml_onnx_optional_value_t *out);
dml_status_t dml_onnx_optional_read_memory(const void *data, size_t len,
                                           dml_onnx_optional_value_t *out);
void dml_onnx_optional_free(dml_onnx_optional_value_t *v);

/* Kinds of ONNX values (onnx.TypeProto's `value` field). */
typedef enum dml_onnx_value_kind {
  DML_ONNX_VALUE_TENSOR = 0,
  DML_ONNX_VALUE_SEQUENCE = 1,
  DML_ONNX_VALUE_MAP = 2,
  DML_ONNX_VALUE_OPTIONAL = 3,
  DML_ONNX_VALUE_SPARSE_TENSOR = 4,
  DML_ONNX_VALUE_UNKNOWN = 5, /* no type, or a kind this build does not know */
} dml_onnx_value_kind_t;

/* A graph input or output as the model declares it. */
typedef struct dml_onnx_value_desc {
  const char *name;
  dml_onnx_value_kind_t kind;
  dml_dtype_t dtype; /* tensors: the element type (INVALID when none or unsupported) */
  int32_t rank;      /* tensors with a shape: its rank; else DML_RANK_UNKNOWN (-1) */
  /* tensors with a shape: the first min(rank, DML_MAX_RANK) dims, -1 where
   * symbolic or absent */
  int64_t dims[DML_MAX_RANK];
  int is_initializer; /* inputs: 1 when an initializer of the same name exists */
} dml_onnx_value_desc_t;

/* A top-level node: op type, domain ("" for the default), inputs and outputs
 * ("" for an absent optional one). */
typedef struct dml_onnx_node_desc {
  const char *op_type;
  const char *domain;
  uint32_t n_inputs, n_outputs;
  const char *const *inputs;
  const char *const *outputs;
} dml_onnx_node_desc_t;

/* What a model declares, without importing it: default-domain opset, graph
 * inputs (initializers included, flagged) and outputs in order, and the
 * top-level nodes (subgraph bodies are not listed). */
typedef struct dml_onnx_model_desc {
  int64_t opset; /* of the default domain; 0 when the model imports none */
  uint32_t n_inputs, n_outputs, n_nodes;
  const dml_onnx_value_desc_t *inputs;
  const dml_onnx_value_desc_t *outputs;
  const dml_onnx_node_desc_t *nodes;
} dml_onnx_model_desc_t;

/* Describes the ONNX model in `len` bytes at `data` (lent). On success
 * *out_desc is the caller's, freed with dml_onnx_model_desc_release().
 * Errors (op "onnx.import"): DATA_LOSS for bytes that are not an ONNX model;
 * RESOURCE_EXHAUSTED. */
dml_status_t dml_onnx_model_describe(const void *data, size_t len,
                                     dml_onnx_model_desc_t **out_desc);
void dml_onnx_model_desc_release(dml_onnx_model_desc_t *desc);

/* Whether the importer maps ONNX op `op_type` of the default domain at
 * `opset` (frontends/onnx/onnx_ops.def); attribute values it cannot map are
 * not considered. 1 or 0. */
int dml_onnx_op_is_supported(const char *op_type, int64_t opset);

/* Whether the importer maps ONNX op `op_type` of `domain` ("" or "ai.onnx":
 * the default domain, at opset `version`; else e.g.
 * "ai.onnx.preview.training" at that domain's `version`). 1 or 0. */
int dml_onnx_domain_op_is_supported(const char *domain, const char *op_type,
                                    int64_t version);

/* ---- export ------------------------------------------------------------ */

/* The opset dml_onnx_export_module() writes by default: the first whose
 * forms are the IR's (reduction axes as an input, opset 18). */
#define DML_ONNX_EXPORT_OPSET 18

/* Export options. Zero-initialize, then set what you need. */
typedef struct dml_onnx_export_options {
  /* Default-domain opset to write, 13..the importer's newest; 0: 18. */
  int64_t opset;
  /* The function written as the graph; NULL: the module's only function,
   * else "forward". */
  const char *function;
  /* ModelProto.producer_name; NULL: "dmlc". */
  const char *producer;
} dml_onnx_export_options_t;

/* Writes function `opts->function` of module `m` as an ONNX model (IR
 * version 8, one opset import of the default domain) to `path`, atomically
 * (dml_file.h: temp file, fsync, rename; special files and symlinks are
 * refused). Each node becomes the ONNX operator that onnx_ops.def imports
 * `direct` into its IR op at the opset, with its inputs (an absent
 * optional input as "", trailing ones dropped), outputs and attributes
 * (the IR's `axes` attribute of a reduction, Squeeze or Unsqueeze, as
 * passes write it, becomes a Constant node feeding input 1 where ONNX's op
 * at the opset takes the axes as an input: ReduceSum 13+, the other
 * reductions 18+);
 * parameters and state (globals flagged PARAM or STATE) become
 * initializers with the values they hold (raw_data), other globals with
 * data Constant nodes (as PyTorch writes a Dropout ratio or a scalar, so
 * that importers and trainers do not take them for weights); arguments and
 * results become graph
 * inputs and outputs, symbolic dims as dim_param (the symbol's name; a
 * multiple of a symbol as an unnamed dim). Values keep their source names;
 * an unnamed one, or a second value with a name already given, is named
 * "v<id>". Importing the file gives the same IR ops, so a package compiled
 * from it computes the same values (tests/layers/test_layers_export.c).
 * Used for models built with the layer API (frontends/layers): with
 * trained weights, write the model first, then
 * dml_onnx_export_trained() (compiler/dml_onnx_export.h) puts a session's
 * values into its initializers.
 * Errors (op "onnx.export"): UNIMPLEMENTED naming the node when its op has
 * no such ONNX form at the opset (an internal op, a training or fused
 * op) or carries an attribute that form does not define (nothing is
 * written); FAILED_PRECONDITION when a result's dtype is unknown (run shape
 * inference first); NOT_FOUND for the function; INVALID_ARGUMENT for the
 * opset; the file's errors (dml_file.h); RESOURCE_EXHAUSTED. */
dml_status_t dml_onnx_export_module(const dml_ir_module_t *m, const char *path,
                                    const dml_onnx_export_options_t *opts);

#ifdef __cplusplus
}
#endif
#endif /* DML_ONNX_H_ */
