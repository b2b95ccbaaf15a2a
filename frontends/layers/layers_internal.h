/*
 * layers_internal.h — shared by the files of the layer API (dml_layers.h):
 * the model's state, the transaction that undoes a failed layer call, and
 * the helpers that add parameters and nodes.
 */
#ifndef LAYERS_INTERNAL_H_
#define LAYERS_INTERNAL_H_

#include "dml_ir.h"
#include "dml_layers.h"

struct dml_layers_tensor {
  dml_layers_model_t *model;
  dml_ir_value_t *v;
};

/* How a parameter's initial values are drawn (dml_layers.h). */
typedef enum layers_init {
  LAYERS_INIT_UNIFORM, /* U(-bound, bound) */
  LAYERS_INIT_NORMAL,  /* N(0, 1) */
  LAYERS_INIT_CONST,   /* every element `value` */
} layers_init_t;

typedef struct layers_param {
  dml_ir_value_t *g;
  const char *layer; /* arena string */
} layers_param_t;

typedef struct layers_counter {
  const char *kind; /* static string */
  uint32_t next;
} layers_counter_t;

struct dml_layers_model {
  dml_ir_module_t *m;
  dml_ir_function_t *f;
  uint64_t seed;
  int64_t batch_bound;
  int32_t batch_sym; /* -1 until an input has a batch dim */
  uint32_t n_layers; /* layers added (inputs must come before) */
  layers_param_t *params;
  size_t n_params, cap_params;
  const char **names; /* taken names: inputs, layers, outputs (arena) */
  size_t n_names, cap_names;
  dml_ir_value_t **outputs;
  size_t n_outputs, cap_outputs;
  layers_counter_t *counters;
  size_t n_counters, cap_counters;
};

/* A layer call in progress: what to undo when it fails. */
typedef struct layers_txn {
  dml_layers_model_t *L;
  const char *op;    /* "layers.dense" */
  const char *layer; /* the layer's name (arena), once chosen */
  dml_ir_node_t *last0;
  uint32_t n_globals0;
  size_t n_params0, n_names0;
} layers_txn_t;

/* Starts a layer call of kind `kind` ("dense"): picks the layer's name
 * (`user_name` if not NULL, checked and reserved, else the next free
 * "<kind>", "<kind>_1", ...). Errors: INVALID_ARGUMENT (bad or taken
 * name). */
dml_status_t layers_begin(dml_layers_model_t *L, const char *op, const char *kind,
                          const char *user_name, layers_txn_t *tx);
/* Undoes everything the call added (nodes, globals, parameters, names) and
 * returns `s` annotated with the layer. */
dml_status_t layers_fail(layers_txn_t *tx, dml_status_t s);
/* Commits: the counter of the layer's kind moves past its name. */
void layers_commit(layers_txn_t *tx, const char *kind);

/* Makes a INVALID_ARGUMENT status of the call's op naming the layer. */
dml_status_t layers_err(layers_txn_t *tx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Adds parameter "<layer>.<pname>" of f32 `dims` drawn as `init` says
 * (`a`: the uniform bound or the constant), with `flags`. */
dml_status_t layers_add_param(layers_txn_t *tx, const char *pname, int32_t rank,
                              const int64_t *dims, layers_init_t init, double a,
                              uint32_t flags, dml_ir_value_t **out);
/* Adds an unflagged f32 scalar constant "<layer>.<cname>". */
dml_status_t layers_add_scalar(layers_txn_t *tx, const char *cname, float value,
                               dml_ir_value_t **out);
/* Creates a node of `op` named `node_name` with one output. */
dml_status_t layers_node(layers_txn_t *tx, dml_op_t op, const char *node_name,
                         uint32_t n_in, dml_ir_value_t *const *in, dml_ir_node_t **out);
/* Runs shape inference on `n` (attributes set) and names its output 0
 * `value_name`. */
dml_status_t layers_finish_node(layers_txn_t *tx, dml_ir_node_t *n,
                                const char *value_name);
/* A handle for `v`. */
dml_status_t layers_handle(dml_layers_model_t *L, dml_ir_value_t *v,
                           dml_layers_tensor_t **out);
/* Checks `t` is a tensor of model `L`. */
dml_status_t layers_check_tensor(layers_txn_t *tx, const dml_layers_tensor_t *t,
                                 const char *what);
/* Formats v's type ("f32[batch,784]") into buf. */
const char *layers_type_str(const dml_layers_model_t *L, const dml_ir_value_t *v,
                            char *buf, size_t cap);
/* arena "<a><sep><b>" */
const char *layers_join(dml_layers_model_t *L, const char *a, const char *sep,
                        const char *b);

#endif /* LAYERS_INTERNAL_H_ */
