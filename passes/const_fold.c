/*
 * const_fold.c — constant folding and shape-chain resolution.
 *
 * Walks every function's nodes in execution order (so folded results feed
 * the folding of their users in the same walk) and, per node:
 *
 *  1. Identity, and Dropout in inference mode with one output, forward
 *     their input: uses of the result are rewritten to the operand and the
 *     node is erased — unless the result is a function result (its name is
 *     the model's output name).
 *  2. Reshape whose shape operand is not constant but whose output type is
 *     known (at most one symbolic dim, no zero dim) gets a new constant i64
 *     shape operand holding the output dims, the symbolic one written as -1
 *     (ONNX Reshape infers it). The Shape -> Gather -> Unsqueeze -> Concat
 *     chain exporters build for `x.view(x.size(0), -1)` becomes dead; DCE
 *     removes it.
 *  3. A node whose operands are all constants — globals with data and a
 *     static shape that are neither parameters nor state (a parameter
 *     changes during training) — and whose outputs have static shapes of at
 *     most DML_CONST_FOLD_MAX_ELEMENTS elements each is evaluated with the
 *     reference CPU kernel (dml_cpu_run, the definition of every op); its
 *     results become new constant globals "cstN" and the node is erased.
 *  4. Otherwise, a result whose contents shape inference knows completely
 *     (value->sym_data with every element static, e.g. Shape of a static
 *     tensor) becomes a constant global; the node is erased once none of
 *     its results is used.
 *
 *  0. CastLike whose operand 1 has a known dtype becomes Cast(to = that
 *     dtype) (the importer does this when operand 1 is an argument or a
 *     global; after shape inference every operand's dtype is known), so
 *     CastLike(constant, x) folds by 3 (torch.onnx's dynamo exporter
 *     without its optimizer writes each Conv's zero bias so) and the GPU
 *     targets, which emit Cast, need no CastLike.
 *
 * Types must be known (run after shape-infer): nodes with an output of
 * unknown type are left alone. Nodes producing function results are not
 * folded, nor are nodes that draw random numbers (ops flagged DML_OPF_RANDOM,
 * Dropout in training mode) or write state (DML_OPF_SIDE_EFFECT: Assign).
 * Parameter and state globals are not constants.
 * A kernel that does not support a dtype or attribute (UNIMPLEMENTED) leaves
 * the node unfolded; any other kernel error is a real error in the model
 * and is returned with the node's name.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dml_cpu.h"
#include "dml_ir_infer.h"
#include "dml_passes.h"

/* Largest output (elements, per result) evaluated at compile time. */
#define DML_CONST_FOLD_MAX_ELEMENTS ((int64_t)1 << 20)

static dml_status_t oom(void) {
  return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "pass:const-fold",
                         "out of memory");
}

static int is_constant(const dml_ir_value_t *v) {
  return v && v->kind == DML_IR_VALUE_GLOBAL && v->data &&
         !(v->global_flags & (DML_IR_GLOBAL_PARAM | DML_IR_GLOBAL_STATE)) &&
         dml_type_is_static(&v->type);
}

static int is_function_result(const dml_ir_function_t *f, const dml_ir_value_t *v) {
  for (uint32_t i = 0; i < f->n_results; i++)
    if (f->results[i] == v) return 1;
  return 0;
}

static int any_function_result(const dml_ir_node_t *n) {
  for (uint32_t i = 0; i < n->n_outputs; i++)
    if (is_function_result(n->func, n->outputs[i])) return 1;
  return 0;
}

/* Ops flagged DML_OPF_RANDOM in ops.def draw random numbers; so does
 * Dropout unless training_mode (input 2) is absent or a constant false. */
static int is_random(const dml_ir_node_t *n) {
  const dml_op_info_t *info = dml_op_info(n->op);
  if (info && (info->flags & (DML_OPF_RANDOM | DML_OPF_SIDE_EFFECT))) return 1;
  if (n->op != DML_OP_DROPOUT || n->n_inputs < 3 || !n->inputs[2]) return 0;
  const dml_ir_value_t *t = n->inputs[2];
  if (!is_constant(t) || t->data_bytes == 0) return 1;
  return dml_load_i64(t->type.dtype, t->data, 0) != 0;
}

static void tensor_of_type(const dml_type_t *t, dml_tensor_t *out) {
  memset(out, 0, sizeof(*out));
  out->dtype = t->dtype;
  out->rank = t->rank;
  for (int32_t i = 0; i < t->rank; i++) out->dims[i] = t->dims[i].value;
}

/* ==== 1: Identity and inference Dropout ================================= */

static int forward_identity(dml_ir_node_t *n) {
  int forwards = n->op == DML_OP_IDENTITY ||
                 (n->op == DML_OP_DROPOUT && n->n_outputs == 1 && !is_random(n));
  if (!forwards || !n->inputs[0] || any_function_result(n)) return 0;
  dml_ir_value_replace_all_uses(n->func, n->outputs[0], n->inputs[0]);
  dml_ir_node_erase(n);
  return 1;
}

/* ==== 2: Reshape targets from the inferred output type ================== */

static dml_status_t resolve_reshape(dml_ir_module_t *m, dml_ir_node_t *n) {
  /* The op first: an Assign has no result to look at. */
  if (n->op != DML_OP_RESHAPE) return DML_OK;
  const dml_type_t *t = &n->outputs[0]->type;
  if (!n->inputs[1] || is_constant(n->inputs[1]) || t->rank < 0) return DML_OK;
  int64_t dims[DML_MAX_RANK];
  int n_sym = 0;
  for (int32_t i = 0; i < t->rank; i++) {
    if (t->dims[i].sym >= 0) {
      n_sym++;
      dims[i] = -1;
    } else {
      /* 0 in a Reshape target copies the input's dim (allowzero = 0). */
      if (t->dims[i].value <= 0) return DML_OK;
      dims[i] = t->dims[i].value;
    }
  }
  if (n_sym > 1) return DML_OK;
  int64_t r = t->rank;
  dml_type_t st = dml_type_static(DML_DTYPE_I64, 1, &r);
  dml_ir_value_t *g = NULL;
  DML_RETURN_IF_ERROR(dml_ir_module_add_constant(m, "shape", &st, dims,
                                                 (size_t)t->rank * sizeof(int64_t), &g));
  n->inputs[1] = g;
  return DML_OK;
}

/* ==== 3: evaluation with the reference kernels ========================== */

/* 1 when every output's type is static and small enough to evaluate. */
static int outputs_foldable(const dml_ir_module_t *m, const dml_ir_node_t *n) {
  for (uint32_t i = 0; i < n->n_outputs; i++) {
    const dml_type_t *t = &n->outputs[i]->type;
    if (!dml_type_is_static(t) || dml_dtype_size(t->dtype) == 0) return 0;
    int64_t numel = dml_ir_type_numel_bound(m, t);
    if (numel < 0 || numel > DML_CONST_FOLD_MAX_ELEMENTS) return 0;
  }
  return 1;
}

static int inputs_constant(const dml_ir_node_t *n) {
  int any = 0;
  for (uint32_t i = 0; i < n->n_inputs; i++) {
    if (!n->inputs[i]) continue; /* absent optional operand */
    if (!is_constant(n->inputs[i])) return 0;
    any = 1;
  }
  return any;
}

/* Evaluates `n` and replaces its results by constants. Sets *out_folded. */
static dml_status_t fold_node(dml_ir_module_t *m, dml_ir_node_t *n, int *out_folded) {
  *out_folded = 0;
  dml_status_t s = DML_OK;
  dml_tensor_t *ins = (dml_tensor_t *)calloc(n->n_inputs + 1u, sizeof(*ins));
  dml_tensor_t *outs = (dml_tensor_t *)calloc(n->n_outputs + 1u, sizeof(*outs));
  void *scratch = NULL;
  dml_cpu_strheap_t *strheap = NULL;
  if (!ins || !outs) {
    s = oom();
    goto free_tensors;
  }
  for (uint32_t i = 0; i < n->n_inputs; i++) {
    const dml_ir_value_t *v = n->inputs[i];
    if (!v) {
      ins[i].dtype = DML_DTYPE_INVALID;
      continue;
    }
    tensor_of_type(&v->type, &ins[i]);
    ins[i].data = (void *)v->data;
  }
  for (uint32_t i = 0; i < n->n_outputs; i++) {
    tensor_of_type(&n->outputs[i]->type, &outs[i]);
    size_t bytes = dml_tensor_bytes(&outs[i]);
    outs[i].data = bytes == SIZE_MAX ? NULL : malloc(bytes ? bytes : 1);
    if (!outs[i].data) {
      s = oom();
      goto free_outputs;
    }
  }
  dml_cpu_call_t call;
  memset(&call, 0, sizeof(call));
  call.op = n->op;
  call.node_name = n->name;
  call.inputs = ins;
  call.n_inputs = n->n_inputs;
  call.outputs = outs;
  call.n_outputs = n->n_outputs;
  call.attrs = n->attrs;
  call.n_attrs = n->n_attrs;
  /* string results: a heap of this fold's own; dml_ir_module_add_constant
   * copies the strings into the module */
  for (uint32_t i = 0; i < n->n_outputs && !strheap; i++)
    if (outs[i].dtype == DML_DTYPE_STRING && !(strheap = dml_cpu_strheap_create())) {
      s = oom();
      goto free_outputs;
    }
  call.strings = strheap;
  call.scratch_bytes = dml_cpu_scratch_bytes(&call);
  if (call.scratch_bytes) {
    scratch = malloc(call.scratch_bytes);
    if (!scratch) {
      s = oom();
      goto free_outputs;
    }
    call.scratch = scratch;
  }
  s = dml_cpu_run(&call);
  if (s) {
    if (dml_status_code(s) == DML_STATUS_UNIMPLEMENTED) {
      /* No kernel for this dtype/attribute: the node stays for run time. */
      dml_status_free(s);
      s = DML_OK;
    } else {
      s = dml_status_detail(s, "evaluating node '%s' (%s) on constant operands",
                            n->name ? n->name : "", dml_op_name(n->op));
    }
    goto free_outputs;
  }
  for (uint32_t i = 0; i < n->n_outputs; i++) {
    dml_ir_value_t *g = NULL;
    s = dml_ir_module_add_constant(m, "cst", &n->outputs[i]->type, outs[i].data,
                                   dml_tensor_bytes(&outs[i]), &g);
    if (s) goto free_outputs;
    dml_ir_value_replace_all_uses(n->func, n->outputs[i], g);
  }
  dml_ir_node_erase(n);
  *out_folded = 1;
free_outputs:
  free(scratch);
  dml_cpu_strheap_release(strheap);
  for (uint32_t i = 0; i < n->n_outputs; i++) free(outs[i].data);
free_tensors:
  free(ins);
  free(outs);
  return s;
}

/* ==== 4: results with fully known contents ============================== */

static int sym_data_static(const dml_ir_module_t *m, const dml_ir_value_t *v) {
  const dml_ir_sym_data_t *sd = v->sym_data;
  if (!sd || !dml_type_is_static(&v->type) || dml_dtype_size(v->type.dtype) == 0 ||
      dml_ir_type_numel_bound(m, &v->type) != (int64_t)sd->n)
    return 0;
  if (!dml_dtype_is_int(v->type.dtype) && !dml_dtype_is_float(v->type.dtype) &&
      v->type.dtype != DML_DTYPE_BOOL)
    return 0;
  for (uint32_t i = 0; i < sd->n; i++)
    if (sd->elems[i].sym >= 0) return 0;
  return 1;
}

static dml_status_t materialize_sym_data(dml_ir_module_t *m, dml_ir_node_t *n) {
  if (any_function_result(n)) return DML_OK;
  uint32_t replaced = 0;
  for (uint32_t i = 0; i < n->n_outputs; i++) {
    dml_ir_value_t *v = n->outputs[i];
    if (!sym_data_static(m, v)) continue;
    size_t es = dml_dtype_size(v->type.dtype);
    size_t bytes = (size_t)v->sym_data->n * es;
    void *buf = malloc(bytes ? bytes : 1);
    if (!buf) return oom();
    for (uint32_t k = 0; k < v->sym_data->n; k++) {
      if (dml_dtype_is_float(v->type.dtype))
        dml_store_f64(v->type.dtype, buf, k, (double)v->sym_data->elems[k].value);
      else
        dml_store_i64(v->type.dtype, buf, k, v->sym_data->elems[k].value);
    }
    dml_ir_value_t *g = NULL;
    dml_status_t s = dml_ir_module_add_constant(m, "cst", &v->type, buf, bytes, &g);
    free(buf);
    DML_RETURN_IF_ERROR(s);
    dml_ir_value_replace_all_uses(n->func, v, g);
    replaced++;
  }
  if (replaced == n->n_outputs) dml_ir_node_erase(n);
  return DML_OK;
}

/* ==== driver ============================================================ */

/* ==== 0: CastLike -> Cast =============================================== */

/* Replaces CastLike `n` by a Cast of its operand 0 to operand 1's dtype,
 * inserted in its place (*out: the Cast, or `n` when left alone: operand 1
 * untyped, a dtype without an ONNX code, or a function result). */
static dml_status_t castlike_to_cast(dml_ir_module_t *m, dml_ir_node_t *n,
                                     dml_ir_node_t **out) {
  *out = n;
  if (n->op != DML_OP_CAST_LIKE || n->n_inputs < 2 || !n->inputs[0] || !n->inputs[1] ||
      n->inputs[1]->type.rank < 0 || any_function_result(n))
    return DML_OK;
  dml_dtype_t dt = n->inputs[1]->type.dtype;
  int code = dml_dtype_onnx_code(dt);
  if (code <= 0) return DML_OK;
  dml_ir_node_t *c = NULL;
  DML_RETURN_IF_ERROR(
      dml_ir_node_create(n->func, DML_OP_CAST, n->name, 1, n->inputs, 1, n, &c));
  DML_RETURN_IF_ERROR(dml_ir_node_set_attr_int(c, "to", code));
  /* saturate / round_mode mean something for float8 targets only (Cast-19) */
  for (uint32_t i = 0; dml_dtype_is_float8(dt) && i < n->n_attrs; i++)
    DML_RETURN_IF_ERROR(dml_ir_node_set_attr(c, &n->attrs[i]));
  DML_RETURN_IF_ERROR(dml_ir_infer_node(m, c));
  c->outputs[0]->name = n->outputs[0]->name;
  dml_ir_value_replace_all_uses(n->func, n->outputs[0], c->outputs[0]);
  dml_ir_node_erase(n);
  *out = c;
  return DML_OK;
}

static int types_known(const dml_ir_node_t *n) {
  for (uint32_t i = 0; i < n->n_outputs; i++)
    if (n->outputs[i]->type.rank < 0) return 0;
  return 1;
}

static dml_status_t fold_function(dml_ir_module_t *m, dml_ir_function_t *f) {
  dml_ir_node_t *n = f->first;
  while (n) {
    DML_RETURN_IF_ERROR(castlike_to_cast(m, n, &n));
    dml_ir_node_t *next = n->next;
    if (forward_identity(n) || !types_known(n)) {
      n = next;
      continue;
    }
    DML_RETURN_IF_ERROR(resolve_reshape(m, n));
    int folded = 0;
    if (!is_random(n) && !any_function_result(n) && dml_cpu_supports(n->op) &&
        inputs_constant(n) && outputs_foldable(m, n))
      DML_RETURN_IF_ERROR(fold_node(m, n, &folded));
    if (!folded && !is_random(n)) DML_RETURN_IF_ERROR(materialize_sym_data(m, n));
    n = next;
  }
  return DML_OK;
}

dml_status_t dml_pass_const_fold(dml_ir_module_t *m, dml_pass_options_t *o) {
  (void)o;
  for (uint32_t i = 0; i < m->n_functions; i++)
    DML_RETURN_IF_ERROR(fold_function(m, m->functions[i]));
  return DML_OK;
}
