/*
 * onnx_internal.h — shared between the ONNX importer's files (not public).
 *
 * onnx_import.c: model loading, graph walking, the name map, errors;
 * onnx_tensor.c: TensorProto -> host tensor (every storage form, external
 * data); onnx_ops.c: the op table (onnx_ops.def) and the importers;
 * onnx_if.c: If and inline subgraphs; onnx_seq.c: sequences as
 * compile-time lists of tensors; onnx_loop.c: Loop and Scan unrolled;
 * onnx_optional.c: optionals, present or none at compile time.
 */
#ifndef DML_ONNX_INTERNAL_H_
#define DML_ONNX_INTERNAL_H_

#include <stddef.h>
#include <stdint.h>

#include "dml_ir.h"
#include "dml_onnx.h"
#include "onnx.pb-c.h"

#define ONNX_OPSET_MIN DML_ONNX_OPSET_MIN
#define ONNX_OPSET_MAX DML_ONNX_OPSET_MAX
#define ONNX_ERR_OP "onnx.import"

/* ---- a string -> pointer map (open addressing; keys are lent) ---- */
typedef struct onnx_map_entry {
  const char *key;
  void *val;
  int64_t aux;
} onnx_map_entry_t;

typedef struct onnx_map {
  onnx_map_entry_t *slots;
  size_t cap, count;
} onnx_map_t;

/* Returns the entry for `key`, or NULL. */
onnx_map_entry_t *onnx_map_find(const onnx_map_t *map, const char *key);
/* Returns the entry for `key`, inserting {key, NULL, -1} when absent; NULL
 * when out of memory. *out_inserted tells which. */
onnx_map_entry_t *onnx_map_insert(onnx_map_t *map, const char *key, int *out_inserted);
void onnx_map_free(onnx_map_t *map);

/* A subgraph's scope (onnx_if.c): each name the subgraph defines -> its fresh
 * IR name (entry val, a const char *); parent is the enclosing scope. */
typedef struct onnx_scope {
  onnx_map_t rename;
  const struct onnx_scope *parent;
} onnx_scope_t;

/* ---- the import context ---- */
/* The graph import_nodes is importing (onnx_import.c): an If whose branch
 * outputs differ in rank takes the nodes downstream of it into its branch
 * functions (onnx_if.c, "tail duplication") and marks them done. */
typedef struct onnx_frame {
  const Onnx__GraphProto *g;    /* the graph (its nodes' names resolved) */
  const Onnx__GraphProto *orig; /* the same nodes with their ONNX names */
  const uint32_t *order;        /* a topological order of g's nodes */
  uint8_t *done;                /* done[i]: node i imported, or taken into a tail */
  struct onnx_frame *up;        /* the graph that holds this one's node, or NULL */
} onnx_frame_t;

typedef struct onnx_ctx {
  dml_ir_module_t *m;
  dml_ir_function_t *f;
  int64_t opset;
  const Onnx__ModelProto *model; /* its opset_import gives other domains' versions */
  const char *base_dir;          /* NULL: external data not allowed */
  /* Every ONNX tensor name of the graph and every synthetic name: val is
   * the IR value once defined (NULL before); aux the producing node's index
   * (-1 for inputs and initializers). */
  onnx_map_t names;
  /* The If branch being imported (innermost); NULL in the top-level graph. */
  const onnx_scope_t *scope;
  /* Sequence-typed values (onnx_seq.c): name -> onnx_seq_t * (owned). */
  onnx_map_t seqs;
  /* Optional values without a value (onnx_optional.c): name -> entry whose
   * aux is the element's kind (ONNX_OPT_TENSOR / ONNX_OPT_SEQUENCE). A
   * present optional is its element (a tensor or a sequence) and has no
   * entry here. */
  onnx_map_t nones;
  /* Per base name, the suffix onnx_unique_name (base) and the function
   * namer of onnx_if.c ("\1" base) try next: earlier ones are taken. */
  onnx_map_t name_next;
  /* Body nodes imported by unrolling Loop and Scan so far (onnx_loop.c). */
  size_t unrolled_nodes;
  /* The graph being imported (innermost), NULL outside import_nodes. */
  onnx_frame_t *frame;
  /* Nodes copied into If branch functions by tail duplication so far
   * (onnx_if.c), at most ONNX_IF_MAX_TAIL_NODES. */
  size_t tail_nodes;
  const dml_onnx_import_options_t *opts;
} onnx_ctx_t;

/* ---- sequences lowered at import time (onnx_seq.c) ---- */

/* A sequence value: a compile-time list of IR tensor values, or, when
 * `stacked` is set, a sequence of run-time length whose elements all have
 * one shape, held as one tensor [n, element dims] (n and v unused). */
typedef struct onnx_seq {
  dml_dtype_t dtype; /* the element type (INVALID when unknown) */
  size_t n;
  dml_ir_value_t **v;
  dml_ir_value_t *stacked;
} onnx_seq_t;

/* The sequence named `name` (a resolved name), or NULL. */
onnx_seq_t *onnx_seq_find(const onnx_ctx_t *ctx, const char *name);
/* Records sequence `name` holding v[0..n) (copied). */
dml_status_t onnx_seq_define(onnx_ctx_t *ctx, const char *name, dml_dtype_t dtype,
                             size_t n, dml_ir_value_t *const *v);
/* Records sequence `name` as a copy of s (a list or a stacked sequence). */
dml_status_t onnx_seq_define_as(onnx_ctx_t *ctx, const char *name, const onnx_seq_t *s);
/* Records sequence `name` of run-time length: the elements are stacked
 * along axis 0 of tensor `stacked` ([n, element dims], dtype dtype). */
dml_status_t onnx_seq_define_stacked(onnx_ctx_t *ctx, const char *name, dml_dtype_t dtype,
                                     dml_ir_value_t *stacked);
/* UNIMPLEMENTED naming `label` when s is a stacked sequence (run-time
 * length), which `what` (a use that needs the compile-time list) cannot
 * take; else OK. */
dml_status_t onnx_seq_need_list(const onnx_seq_t *s, const char *label, const char *what);
void onnx_seqs_free(onnx_ctx_t *ctx);
dml_status_t onnx_seq_split(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                            dml_ir_value_t **in, uint32_t n_in);
dml_status_t onnx_seq_map(onnx_ctx_t *ctx, const Onnx__NodeProto *np, dml_ir_value_t **in,
                          uint32_t n_in);
/* SequenceMap np (body `body`, `label` its name in messages) whose sequence
 * inputs are all stacked (run-time length): a run-time Loop over their
 * elements, as a Scan along axis 0 (onnx_loop.c import_runtime_scan), the
 * tensor inputs captured; each output a stacked sequence (its elements must
 * share one shape). The trip count is input 0's length; a shorter sequence
 * input fails at run time in its Gather. UNIMPLEMENTED when a sequence
 * input is a compile-time list. */
dml_status_t onnx_seq_map_runtime(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                  const char *label, const Onnx__GraphProto *body,
                                  dml_ir_value_t **in, uint32_t n_in);
/* Imports subgraph g (`which` of node `label`) inline with its inputs bound
 * to in_vals[0..n_in) (n_in must equal g->n_input; an If branch has none);
 * out_vals[k] is its output k. (onnx_if.c) */
dml_status_t onnx_import_subgraph(onnx_ctx_t *ctx, const char *label, const char *which,
                                  const Onnx__GraphProto *g, size_t n_in,
                                  dml_ir_value_t *const *in_vals,
                                  dml_ir_value_t **out_vals);
/* onnx_import_subgraph where inputs may be sequences: input i is sequence
 * in_seqs[i] when that is non-NULL (in_seqs may be NULL); when out_seqs is
 * given, out_seqs[k] is output k's sequence (NULL for a tensor), or
 * onnx_opt_none_mark() for an optional without a value. */
dml_status_t onnx_import_subgraph_seqs(onnx_ctx_t *ctx, const char *label,
                                       const char *which, const Onnx__GraphProto *g,
                                       size_t n_in, dml_ir_value_t *const *in_vals,
                                       onnx_seq_t *const *in_seqs,
                                       dml_ir_value_t **out_vals, onnx_seq_t **out_seqs);

/* ---- optionals lowered at import time (onnx_optional.c) ---- */
#define ONNX_OPT_TENSOR 1
#define ONNX_OPT_SEQUENCE 2
/* Whether `name` (a resolved name) is an optional without a value. */
int onnx_opt_is_none(const onnx_ctx_t *ctx, const char *name);
/* Records `name` as an optional without a value, of element kind `kind`. */
dml_status_t onnx_opt_define_none(onnx_ctx_t *ctx, const char *name, int kind);
/* In onnx_import_subgraph_seqs's out_seqs, a subgraph output that is none
 * is onnx_opt_none_mark(kind), which onnx_opt_none_mark_kind() recognizes
 * (0 for a real sequence or NULL); callers that cannot carry a none refuse
 * it. */
const onnx_seq_t *onnx_opt_none_mark(int kind);
int onnx_opt_none_mark_kind(const onnx_seq_t *s);
/* The element kind an optional TypeProto declares (ONNX_OPT_TENSOR or
 * ONNX_OPT_SEQUENCE; 0 for anything else). */
int onnx_opt_elem_kind(const Onnx__TypeProto *tp);

/* "node 'name' (Op)" or "node #i (Op)" into buf. */
const char *onnx_node_label(const Onnx__NodeProto *np, char *buf, size_t cap);

/* Appends an IR node of `op` named `name` (NULL/"" -> NULL). */
dml_status_t onnx_emit(onnx_ctx_t *ctx, dml_op_t op, const char *name, uint32_t n_in,
                       dml_ir_value_t *const *in, uint32_t n_out,
                       dml_ir_node_t **out_node);
/* Names node's outputs after np's outputs (in order; empty names stay
 * unnamed) and records them as defined. node->n_outputs <= np->n_output. */
dml_status_t onnx_bind_outputs(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                               dml_ir_node_t *node);
/* Infers the types of the nodes of the function built so far whose outputs
 * are unknown (stopping at the first that fails), so that sym_data of
 * computed small integer values and the types that decide how an If is
 * lowered are set (onnx_loop.c). */
void onnx_infer_pending(onnx_ctx_t *ctx);
/* Run-time control flow (onnx_if.c). The non-global tensors np's subgraphs
 * read (onnx_subgraph_refs), as resolved names (*out_caps) and values
 * (*out_vals), both malloc'd; UNIMPLEMENTED naming `label` when one is not a
 * tensor of known rank. */
dml_status_t onnx_captures(onnx_ctx_t *ctx, const Onnx__NodeProto *np, const char *label,
                           const char ***out_caps, dml_ir_value_t ***out_vals,
                           size_t *out_n);
/* Imports subgraph g of np as a new function of the module named
 * "<node>.<suffix>" (*out_name): arguments g's n_in inputs (of in_types)
 * then one per capture (caps: resolved names, which resolve to the
 * arguments during the import); results Identity of g's outputs. */
dml_status_t onnx_import_function(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                  const char *label, const char *which,
                                  const char *suffix, const Onnx__GraphProto *g,
                                  const dml_type_t *in_types, size_t n_in,
                                  const char *const *caps, size_t n_caps,
                                  const char **out_name);
/* Records `v` as the definition of ONNX tensor `name`. */
dml_status_t onnx_define(onnx_ctx_t *ctx, const char *name, dml_ir_value_t *v);
/* A fresh name "<base>" or "<base>_N" used by no ONNX tensor and no global;
 * arena-owned, and reserved. NULL when out of memory. */
const char *onnx_unique_name(onnx_ctx_t *ctx, const char *base);

/* Checks every attribute of `np` against the types ONNX's schema of its op
 * allows (onnx_attr_types.def, generated from onnx's schemas): an attribute
 * of another type (Gemm alpha given as INT) is INVALID_ARGUMENT naming the
 * node, the attribute, the expected and the found types. Attributes of ops
 * or names the table lacks (other domains) are left to the importer. */
dml_status_t onnx_check_attr_types(const Onnx__NodeProto *np);
/* Attribute `name` of np, or NULL. */
const Onnx__AttributeProto *onnx_attr(const Onnx__NodeProto *np, const char *name);
/* The attribute's type, inferred from its fields when type is UNDEFINED
 * (files older than IR version 2). */
Onnx__AttributeProto__AttributeType onnx_attr_type(const Onnx__AttributeProto *a);
/* Copies every attribute of np except those named in `skip` (NULL-ended
 * list; may be NULL) onto node. */
dml_status_t onnx_copy_attrs(onnx_ctx_t *ctx, dml_ir_node_t *node,
                             const Onnx__NodeProto *np, const char *const *skip);

/* Constant globals made by normalization, named "<base>" (made unique). */
dml_status_t onnx_const_i64(onnx_ctx_t *ctx, const char *base, const int64_t *v, size_t n,
                            dml_ir_value_t **out_value);
/* A constant of dtype dt (a float dtype) from doubles; rank 0 when
 * `scalar`, else 1-D of n. */
dml_status_t onnx_const_float(onnx_ctx_t *ctx, const char *base, dml_dtype_t dt,
                              const double *v, size_t n, int scalar,
                              dml_ir_value_t **out_value);

/* Checks that `len` bytes are a well-formed protobuf encoding of message
 * `d` with bounded nesting (before protobuf-c's recursive unpacker sees
 * them). Errors: DATA_LOSS naming the byte offset. (onnx_import.c) */
dml_status_t onnx_scan_bytes(const void *data, size_t len,
                             const ProtobufCMessageDescriptor *d);

/* Imports the nodes of g in a topological order (g's node names resolved
 * already; tensors already defined are not ordered against). orig holds
 * the same nodes with their ONNX names (NULL: g's are). (onnx_import.c) */
dml_status_t onnx_import_graph_nodes(onnx_ctx_t *ctx, const Onnx__GraphProto *g,
                                     const Onnx__GraphProto *orig);
/* Imports one node np (its input names resolved) into ctx->f: checks its
 * attribute types, looks its inputs up (sequences and none optionals only
 * where the op reads them) and runs its importer. Errors: INVALID_ARGUMENT
 * for an undefined input, UNIMPLEMENTED as the importer says; annotated
 * with the node. (onnx_import.c) */
dml_status_t onnx_import_node(onnx_ctx_t *ctx, const Onnx__NodeProto *np);

/* ---- If: both branches inline, then Where (onnx_if.c) ---- */

/* The IR name ONNX name `name` stands for in ctx's current scope. */
const char *onnx_resolve(const onnx_ctx_t *ctx, const char *name);
/* The tensors of enclosing scopes that np's subgraphs (GRAPH/GRAPHS
 * attributes, nested ones included) read, resolved; malloc'd array in *out
 * (NULL and 0 when none). */
dml_status_t onnx_subgraph_refs(const onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                const char ***out, size_t *out_n);
/* g's nodes and, recursively, those of its If nodes' branches and of
 * SequenceMap, Loop and Scan bodies; malloc'd. */
dml_status_t onnx_collect_nodes(const Onnx__GraphProto *g, const Onnx__NodeProto ***out,
                                size_t *out_n);
/* The most nodes tail duplication (onnx_if.c) copies into If branch
 * functions in one model, nested Ifs multiplied. */
#define ONNX_IF_MAX_TAIL_NODES 100000

/* ---- tensors (onnx_tensor.c) ---- */

/* Maps an ONNX TensorProto.DataType to a dtype; DML_DTYPE_INVALID when none. */
dml_dtype_t onnx_dtype(int32_t onnx_type);
/* ONNX's name of a TensorProto.DataType ("FLOAT", "STRING", ...). */
const char *onnx_dtype_name(int32_t onnx_type);

/* Decodes `t` (any storage form; external data read under base_dir) into
 * *out: dtype, rank, dims, and out->data holding *out_bytes bytes in host
 * order (NULL when empty). out->data either points into `t` (raw_data used
 * in place; *out_data NULL) or is the malloc'd *out_data, which the caller
 * frees. `what` names the tensor in errors ("initializer 'w'"). */
dml_status_t onnx_tensor_decode(const Onnx__TensorProto *t, const char *base_dir,
                                const char *what, dml_tensor_t *out, void **out_data,
                                size_t *out_bytes);

/* ---- ops (onnx_ops.c) ---- */
typedef struct onnx_op_entry onnx_op_entry_t;
typedef dml_status_t (*onnx_importer_fn)(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                                         const onnx_op_entry_t *e, dml_ir_value_t **in,
                                         uint32_t n_in);
struct onnx_op_entry {
  const char *name;
  int since, until;
  onnx_importer_fn importer;
  dml_op_t op;
  const char *attrs;
  const char *domain; /* NULL: the default domain ("" or "ai.onnx") */
};

/* The default-domain line at `opset` that imports ONNX nodes `direct` into
 * IR op `op` (the IR node is that ONNX form as it is; also Pad-18+, whose
 * pad18 importer is direct when input 3 is absent, as the IR's PAD has
 * it), or NULL: what the exporter (onnx_export.c) writes an IR node as. */
const onnx_op_entry_t *onnx_op_export_entry(dml_op_t op, int64_t opset);

/* The If importer (onnx_if.c). */
dml_status_t onnx_imp_if(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                         const onnx_op_entry_t *e, dml_ir_value_t **in, uint32_t n_in);
/* Unrolling caps (onnx_loop.c): iterations of one Loop or Scan node, and
 * body nodes imported by unrolling in the whole model. */
#define ONNX_LOOP_MAX_ITERS 65536
#define ONNX_LOOP_MAX_NODES 100000
/* The Loop and Scan importers (onnx_loop.c): full unrolling when the
 * number of iterations is known at compile time and within the caps, else
 * the IR op Loop run at run time (a Scan-9..17 too, its body wrapped in a
 * Loop body). */
dml_status_t onnx_imp_loop(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                           const onnx_op_entry_t *e, dml_ir_value_t **in, uint32_t n_in);
dml_status_t onnx_imp_scan(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                           const onnx_op_entry_t *e, dml_ir_value_t **in, uint32_t n_in);
/* The sequence importer (onnx_seq.c): every sequence op, and Identity of a
 * sequence. */
dml_status_t onnx_imp_seq(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                          const onnx_op_entry_t *e, dml_ir_value_t **in, uint32_t n_in);
/* The optional importer: Optional, OptionalHasElement, OptionalGetElement,
 * and Identity of an optional without a value. */
dml_status_t onnx_imp_optional(onnx_ctx_t *ctx, const Onnx__NodeProto *np,
                               const onnx_op_entry_t *e, dml_ir_value_t **in,
                               uint32_t n_in);
/* The table line for op_type at opset, or NULL. */
const onnx_op_entry_t *onnx_op_lookup(const char *op_type, int64_t opset);
/* The table line for op_type of `domain` ("", "ai.onnx" or NULL: the
 * default domain) at that domain's `version`, or NULL. */
const onnx_op_entry_t *onnx_op_lookup_domain(const char *domain, const char *op_type,
                                             int64_t version);
/* Whether the table has ops of non-default `domain`. */
int onnx_domain_known(const char *domain);
/* Whether `attr` is one of e's attribute names. */
int onnx_op_has_attr(const onnx_op_entry_t *e, const char *attr);
/* Checks attribute values and output counts the importer cannot map; writes
 * a description ("mode='cubic'") and returns 1 when unsupported. */
int onnx_op_check(const onnx_op_entry_t *e, const Onnx__NodeProto *np, char *why,
                  size_t cap);

#endif /* DML_ONNX_INTERNAL_H_ */
