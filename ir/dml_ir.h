/*
 * dml_ir.h — dmlc's tensor IR: modules of functions of SSA values.
 *
 * A module owns one arena: every function, node, value, attribute, string
 * and constant buffer of the module is allocated from it and freed with the
 * module (no per-node free). A module holds
 *   - symbols: named dims with an upper bound (`batch<=64`), referenced by
 *     index from dml_dim_t::sym;
 *   - globals: module-level values (weights, folded constants, later
 *     optimizer state), optionally with initial data;
 *   - functions (`forward`, later `train_step`, `eval_step`), each with
 *     arguments, results and a list of nodes in execution order.
 * Node inputs are values of any kind (argument, node result, global); an
 * absent optional input is NULL.
 *
 * Ownership: everything returned is owned by the module and lent to the
 * caller until dml_ir_module_release(). Errors are dml_status_t with op
 * "ir".
 */
#ifndef DML_IR_H_
#define DML_IR_H_

#include <stddef.h>
#include <stdint.h>

#include "dml_dtype.h"
#include "dml_ops.h"
#include "dml_status.h"
#include "dml_types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dml_ir_module dml_ir_module_t;
typedef struct dml_ir_function dml_ir_function_t;
typedef struct dml_ir_node dml_ir_node_t;
typedef struct dml_ir_value dml_ir_value_t;

typedef enum dml_ir_value_kind {
  DML_IR_VALUE_ARG = 1,    /* function argument */
  DML_IR_VALUE_RESULT = 2, /* output of a node */
  DML_IR_VALUE_GLOBAL = 3, /* module-level (weights, constants, state) */
} dml_ir_value_kind_t;

/* Global flags. */
#define DML_IR_GLOBAL_PARAM 0x1u /* trainable parameter */
#define DML_IR_GLOBAL_STATE \
  0x2u /* mutable non-trainable (BN running stats, optimizer state) */

/* Known contents of a small integer tensor whose elements may be symbolic
 * (e.g. Shape(x) where x is [batch,784] holds {batch, 784}). Set by shape
 * inference; used to resolve Reshape/Expand targets. */
typedef struct dml_ir_sym_data {
  uint32_t n;
  dml_dim_t *elems;
  /* dml_ir_value_t::sym_partial only: unknown[i] = 1 when element i is
   * computed at run time (elems[i] is then meaningless), 2 for a difference
   * (below); NULL in sym_data, whose elements are all known. */
  uint8_t *unknown;
  /* sym_partial only, or NULL: where unknown[i] == 2, element i is the
   * difference elems[i] - minus[i] of two dims that no one dim expresses
   * (32*((H+31)/32) - H, a pad to a multiple of 32). */
  dml_dim_t *minus;
} dml_ir_sym_data_t;

struct dml_ir_value {
  dml_ir_value_kind_t kind;
  uint32_t id;             /* unique within the module; printers renumber */
  const char *name;        /* source name (ONNX tensor name); globals: required */
  dml_type_t type;         /* rank DML_RANK_UNKNOWN before shape inference */
  dml_ir_function_t *func; /* ARG and RESULT: owning function */
  dml_ir_node_t *def;      /* RESULT: defining node */
  uint32_t def_index;      /* RESULT: index among def's outputs */
  /* GLOBAL: initial data (numel * dtype size bytes at static shape), or NULL.
   * Owned by the module's arena. */
  const void *data;
  size_t data_bytes;
  uint32_t global_flags;
  /* Symbolic contents (NULL when unknown); see dml_ir_sym_data_t. */
  dml_ir_sym_data_t *sym_data;
  /* Partly known contents (NULL when all or none are known): the known
   * elements of a small integer tensor some of whose elements are computed
   * at run time (Pad's pads Concat([0, 0, 0, 0, 0, 0, ph, pw]) with ph, pw
   * from Mod of a size): the output dims they decide stay static or
   * symbolic, the others become data-dependent. */
  dml_ir_sym_data_t *sym_partial;
  /* Memory plan (passes/mem_plan): byte offset in the function's arena and
   * size at the symbols' bounds; -1 when not planned. */
  int64_t mem_offset;
  int64_t mem_bytes;
  void *user; /* scratch for the pass that runs now; not printed */
};

struct dml_ir_node {
  dml_op_t op;
  const char *name; /* source node name, may be NULL */
  uint32_t n_inputs;
  dml_ir_value_t **inputs; /* entries may be NULL (absent optional input) */
  uint32_t n_outputs;
  dml_ir_value_t **outputs;
  uint32_t n_attrs;
  dml_attr_t *attrs;
  dml_ir_function_t *func;
  dml_ir_node_t *prev, *next;
  void *user;
};

struct dml_ir_function {
  const char *name;
  dml_ir_module_t *module;
  uint32_t n_args;
  dml_ir_value_t **args;
  uint32_t n_results;
  dml_ir_value_t **results;
  dml_ir_node_t *first, *last;
  int64_t arena_bytes; /* planned arena size, -1 when not planned */
};

/* Symbol flags. */
/* Data-dependent symbol: the extent of one dim of a node's output that
 * depends on input values (NonZero's count, Unique's number of distinct
 * items, Compress's selected count, NonMaxSuppression's selected boxes),
 * or on the values of a shape input computed at run time (Reshape's shape,
 * Expand's shape, Tile's repeats, Slice's starts/ends/axes/steps, Pad's
 * pads, Resize's scales/sizes, reduction/Squeeze/Unsqueeze axes, Split's
 * split, TopK's k, OneHot's depth, Range's start/limit/delta, window
 * sizes, ConstantOfShape's input; the rank stays static). Shape inference
 * creates one per such dim, named after the node ("nz.n", "r.d0"), with
 * the bound it can prove (NonZero: numel of its input; Reshape: numel of
 * its input; Slice: the input dim) or, where no shape bounds it, the
 * module's dynamic_dim_bound;
 * memory is planned at that bound like any symbolic dim. Its producer is
 * the first node, in execution order, with an output that uses it, and that
 * output's dim is exactly 1 * symbol. At run time the kernel writes the
 * actual extent (<= the bound) into its output's dims and the executor sets
 * the symbol from it for the nodes after (docs/package-format.md, graph
 * section version 2). Its value may be 0, unlike an input's symbol. Printed
 * `sym NAME <= BOUND dynamic`. */
#define DML_IR_SYMBOL_DATA_DEPENDENT 0x1u
/* Derived symbol: its value follows from earlier symbols by the formula
 * floor((mul * S[src[0]] * S[src[1]] + add) / div) (dml_sym_derived_eval,
 * dml_types.h; src[1] = -1: no second factor). Shape inference creates
 * one per output extent that the ONNX shape rules give from a symbolic
 * input extent and that value*symbol cannot express: Conv/pool over a
 * symbolic H (floor((H + pads - eff_kernel) / stride) + 1), Pad/Concat/Slice
 * (H + k), H*W (Flatten, Reshape). Its name spells the formula ("(H-1)/2+1"
 * style, `/` floor division), so equal formulas share one symbol; its bound
 * is the formula at the sources' bounds (it is monotone). Sources are input
 * or derived symbols, never data-dependent ones. At run time the executor
 * computes it from its sources (docs/package-format.md, origin DERIVED).
 * Printed `sym NAME <= BOUND derived(A, B|_, MUL, ADD, DIV)`. */
#define DML_IR_SYMBOL_DERIVED 0x2u

/* Defaults of dml_ir_module_t::dynamic_dim_bound and dynamic_max_elements
 * (2^24 elements: 64 MiB of f32 per such value). */
#define DML_IR_DYNAMIC_DIM_BOUND_DEFAULT 4096
#define DML_IR_DYNAMIC_MAX_ELEMENTS_DEFAULT (INT64_C(1) << 24)

typedef struct dml_ir_symbol {
  const char *name;
  int64_t bound;  /* inclusive upper bound, >= 1 */
  uint32_t flags; /* DML_IR_SYMBOL_* */
  /* DATA_DEPENDENT: the node whose shape inference created it (NULL when
   * parsed from text); lets re-inference of that node reuse it. */
  const dml_ir_node_t *producer;
  /* DERIVED: the formula (see DML_IR_SYMBOL_DERIVED). */
  int32_t src[2];
  int64_t mul, add, div;
  /* Smallest run-time value the user promised (dmlc compile --input-shape
   * x=1x3x[32:640]x..., 0 meaning 1); shape inference checks that derived
   * extents stay >= 1 at it. Not stored in packages. */
  int64_t min;
} dml_ir_symbol_t;

struct dml_ir_module {
  struct dml_ir_arena *arena;
  uint32_t n_symbols;
  dml_ir_symbol_t *symbols;
  uint32_t n_globals;
  dml_ir_value_t **globals;
  uint32_t n_functions;
  dml_ir_function_t **functions;
  uint32_t next_value_id;
  /* Value-dependent shapes (Reshape's shape, Slice's starts, Expand's shape,
   * Resize's scales, ... fed at run time; see DML_IR_SYMBOL_DATA_DEPENDENT):
   * the bound of a data-dependent dim that no input shape bounds (Expand,
   * Tile, ConstantOfShape, Range, Resize, Pad, OneHot's depth, windows), and
   * the most elements memory planning gives a value whose dims use such
   * symbols (the product of the bounds can be far larger). 0: the defaults
   * below (dmlc compile --dynamic-dim-bound, --dynamic-max-elements). */
  int64_t dynamic_dim_bound;
  int64_t dynamic_max_elements;
  /* Capacities of the growable arrays above (internal). */
  uint32_t cap_symbols_, cap_globals_, cap_functions_;
};

/* ---- module and arena ---- */

/* Creates an empty module. Errors: RESOURCE_EXHAUSTED. */
dml_status_t dml_ir_module_create(dml_ir_module_t **out_module);
/* Frees the module and everything allocated from its arena. NULL is a no-op. */
void dml_ir_module_release(dml_ir_module_t *module);
/* Zeroed, 16-byte aligned arena memory; NULL when out of memory. */
/* Copies `bytes` bytes of tensor data of dtype `dt` into the module's arena;
 * a DML_DTYPE_STRING tensor's strings are copied too (its dml_str_t
 * descriptors then point into the arena). NULL when out of memory. */
void *dml_ir_tensor_data_dup(dml_ir_module_t *m, dml_dtype_t dt, const void *src,
                             size_t bytes);
void *dml_ir_alloc(dml_ir_module_t *m, size_t bytes);
/* Copies `n` bytes into the arena (NULL when out of memory or n == 0). */
void *dml_ir_memdup(dml_ir_module_t *m, const void *src, size_t n);
/* Copies a NUL-terminated string (NULL stays NULL). */
const char *dml_ir_strdup(dml_ir_module_t *m, const char *s);
/* Bytes the arena holds (for reports). */
size_t dml_ir_module_arena_bytes(const dml_ir_module_t *m);

/* ---- symbols ---- */

/* Adds symbol `name` with upper bound `bound` (>= 1), or returns the index of
 * an existing symbol of that name (its bound is left unchanged). */
dml_status_t dml_ir_module_add_symbol(dml_ir_module_t *m, const char *name, int64_t bound,
                                      int32_t *out_index);
/* The dim floor((mul * S[a] * S[b] + add) / div) (b = -1: no second
 * factor; mul >= 0, div >= 1, a and b input or derived symbols, a >= 0):
 * simplified to a static extent or value*symbol where it is one (div
 * dividing, no offset, affine formulas of derived affine symbols folded),
 * else a DML_IR_SYMBOL_DERIVED symbol, found by its canonical name or
 * added with the formula at the sources' bounds as its bound. Sets
 * *out_ok = 0 (and leaves *out unset) when the formula is not expressible:
 * a data-dependent source, a bound below 1 (the extent is empty even at the
 * bounds), or int64 overflow. Errors: RESOURCE_EXHAUSTED. */
dml_status_t dml_ir_module_derived_dim(dml_ir_module_t *m, int32_t a, int32_t b,
                                       int64_t mul, int64_t add, int64_t div,
                                       dml_dim_t *out, int *out_ok);
/* Smallest run-time value of symbol `i` (input symbols: their promised
 * min, else 1; derived: the formula at the sources' minimums, which may be
 * below 1 when small inputs give empty extents, and at least 0: a dim is
 * never negative; data-dependent: 0). */
int64_t dml_ir_symbol_min(const dml_ir_module_t *m, int32_t i);

/* Index of symbol `name`, or -1. */
int32_t dml_ir_module_find_symbol(const dml_ir_module_t *m, const char *name);

/* ---- globals ---- */

/* Adds a global `name` of static-shaped `type`; `data` (may be NULL) is
 * copied into the arena and must hold exactly the type's bytes. Errors:
 * INVALID_ARGUMENT (duplicate name, symbolic shape with data, size
 * mismatch), RESOURCE_EXHAUSTED. */
dml_status_t dml_ir_module_add_global(dml_ir_module_t *m, const char *name,
                                      const dml_type_t *type, const void *data,
                                      size_t data_bytes, uint32_t flags,
                                      dml_ir_value_t **out_value);
/* Global named `name`, or NULL. */
dml_ir_value_t *dml_ir_module_find_global(const dml_ir_module_t *m, const char *name);
/* Adds a constant global with a fresh unique name "<prefix>N". */
dml_status_t dml_ir_module_add_constant(dml_ir_module_t *m, const char *prefix,
                                        const dml_type_t *type, const void *data,
                                        size_t data_bytes, dml_ir_value_t **out_value);
/* Removes globals that no function uses. */
void dml_ir_module_drop_unused_globals(dml_ir_module_t *m);

/* ---- functions ---- */

dml_status_t dml_ir_function_create(dml_ir_module_t *m, const char *name,
                                    dml_ir_function_t **out_func);
dml_ir_function_t *dml_ir_module_find_function(const dml_ir_module_t *m,
                                               const char *name);
dml_status_t dml_ir_function_add_arg(dml_ir_function_t *f, const char *name,
                                     const dml_type_t *type, dml_ir_value_t **out_value);
/* Sets the function's results (copied array). */
dml_status_t dml_ir_function_set_results(dml_ir_function_t *f, uint32_t n,
                                         dml_ir_value_t *const *values);
/* Number of node operands and function results that refer to `v` in `f`. */
uint32_t dml_ir_value_num_uses(const dml_ir_function_t *f, const dml_ir_value_t *v);
/* Rewrites every use of `from` in `f` (node operands and results) to `to`. */
void dml_ir_value_replace_all_uses(dml_ir_function_t *f, dml_ir_value_t *from,
                                   dml_ir_value_t *to);
uint32_t dml_ir_function_num_nodes(const dml_ir_function_t *f);

/* ---- nodes ---- */

/* Creates a node of `op` with the given operands (copied array; entries may
 * be NULL) and `n_outputs` fresh result values of unknown type, inserted
 * before `before` (or appended when `before` is NULL). Arity is checked
 * against ops.def. Errors: INVALID_ARGUMENT, RESOURCE_EXHAUSTED. */
dml_status_t dml_ir_node_create(dml_ir_function_t *f, dml_op_t op, const char *name,
                                uint32_t n_inputs, dml_ir_value_t *const *inputs,
                                uint32_t n_outputs, dml_ir_node_t *before,
                                dml_ir_node_t **out_node);
/* Unlinks `node` from its function (its memory stays in the arena). Its
 * results must have no remaining uses. */
void dml_ir_node_erase(dml_ir_node_t *node);
/* Moves `node` to just before `before` in the same function. */
void dml_ir_node_move_before(dml_ir_node_t *node, dml_ir_node_t *before);

/* Attribute setters: add or replace attribute `name` (copied into the
 * arena). */
dml_status_t dml_ir_node_set_attr_int(dml_ir_node_t *n, const char *name, int64_t v);
dml_status_t dml_ir_node_set_attr_float(dml_ir_node_t *n, const char *name, double v);
dml_status_t dml_ir_node_set_attr_string(dml_ir_node_t *n, const char *name,
                                         const char *v);
dml_status_t dml_ir_node_set_attr_ints(dml_ir_node_t *n, const char *name,
                                       const int64_t *v, size_t count);
dml_status_t dml_ir_node_set_attr_floats(dml_ir_node_t *n, const char *name,
                                         const double *v, size_t count);
dml_status_t dml_ir_node_set_attr_strings(dml_ir_node_t *n, const char *name,
                                          const char *const *v, size_t count);
/* Tensor attribute: data (numel * dtype size bytes) is copied. */
dml_status_t dml_ir_node_set_attr_tensor(dml_ir_node_t *n, const char *name,
                                         const dml_tensor_t *t);
/* Copies an attribute from elsewhere (deep copy into this module). */
dml_status_t dml_ir_node_set_attr(dml_ir_node_t *n, const dml_attr_t *a);
void dml_ir_node_remove_attr(dml_ir_node_t *n, const char *name);
const dml_attr_t *dml_ir_node_attr(const dml_ir_node_t *n, const char *name);

/* ---- types ---- */

/* A type of unknown shape with dtype `dt`. */
dml_type_t dml_type_unknown(dml_dtype_t dt);
/* A static type from dims. */
dml_type_t dml_type_static(dml_dtype_t dt, int32_t rank, const int64_t *dims);
int dml_type_is_static(const dml_type_t *t);
int dml_type_equal(const dml_type_t *a, const dml_type_t *b);
/* Element count at the symbols' upper bounds; -1 if rank unknown or on
 * overflow. */
int64_t dml_ir_type_numel_bound(const dml_ir_module_t *m, const dml_type_t *t);
/* Bytes at the symbols' upper bounds; -1 if unknown or on overflow. */
int64_t dml_ir_type_bytes_bound(const dml_ir_module_t *m, const dml_type_t *t);
/* Formats a type as IR text: "f32[batch,784]", "i64[2]", "f32[16*batch]",
 * "f32[?]" for unknown rank. Returns buf. */
const char *dml_ir_type_str(const dml_ir_module_t *m, const dml_type_t *t, char *buf,
                            size_t cap);

/* Verifies structural invariants (arity, operands defined before use in the
 * same function or global/arg, unique names of globals, result types known
 * when `require_types`). Errors: INVALID_ARGUMENT naming the node. */
dml_status_t dml_ir_verify(const dml_ir_module_t *m, int require_types);

#ifdef __cplusplus
}
#endif
#endif /* DML_IR_H_ */
