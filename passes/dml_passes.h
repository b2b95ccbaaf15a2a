/*
 * dml_passes.h — the pass manager (MLIR-style IR dumps between passes).
 *
 * Passes are listed in passes.def. A pipeline is a comma-separated list of
 * pass names ("shape-infer,const-fold,dce"). Each pass runs on every
 * function of the module.
 */
#ifndef DML_PASSES_H_
#define DML_PASSES_H_

#include <stdio.h>

#include "dml_ir.h"
#include "dml_pkg.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dml_pass_options {
  /* Dump the IR to `dump` after the pass named here (NULL: none). */
  const char *print_ir_after;
  int print_ir_after_all;
  FILE *dump;                      /* NULL means stderr */
  size_t dump_elide_elements_over; /* as dml_ir_print_options_t */
  int verify_each;                 /* run dml_ir_verify after every pass */
  /* mem-plan: plan for GPU kernels' fusion (1 when the package has a GPU
   * target): the values a fused group (the fuse pass's fuse_group
   * attributes) reads stay live until the group's last node
   * (passes/mem_plan.c). qdq-fuse keeps QDQ pairs for the GPU kernels. */
  int fusion_aware;
  /* precision pass (passes/precision.c, dmlc compile --precision): F16 or
   * BF16 stores the GPU-capable part of every function in that dtype; 0
   * (DML_DTYPE_INVALID) or F32: the pass changes nothing. */
  dml_dtype_t precision;
  /* Filled by mem-plan: the largest planned arena (bytes) over functions. */
  int64_t out_arena_bytes;
} dml_pass_options_t;

#define DML_PASS(c_name, cli, summary) \
  dml_status_t dml_pass_##c_name(dml_ir_module_t *m, dml_pass_options_t *o);
#include "passes.def"
#undef DML_PASS

typedef struct dml_pass_info {
  const char *name; /* "shape-infer" */
  const char *summary;
  dml_status_t (*run)(dml_ir_module_t *m, dml_pass_options_t *o);
} dml_pass_info_t;

/* All passes in passes.def order; sets *out_count. */
const dml_pass_info_t *dml_pass_list(size_t *out_count);
/* Pass named `name` (CLI spelling), or NULL. */
const dml_pass_info_t *dml_pass_find(const char *name);
/* "shape-infer,expand-gradient,qdq-fuse,wq-fuse,const-fold,cse,dce,attn-fuse,precision,fuse,
 * mem-plan" */
const char *dml_pass_default_pipeline(void);

/* The fuse pass (passes/fuse.c) marks the nodes of one GPU kernel with the
 * integer attribute DML_FUSE_GROUP_ATTR (dml_pkg.h: 0, 1, ... per function,
 * in execution order; groups of one node and ungrouped nodes carry none).
 * mem-plan and the GPU scheduler (codegen/schedule.c) read it. */

/* The fuse_group of IR node `n`, or -1 when it has none. */
int64_t dml_fuse_group_of(const dml_ir_node_t *n);

/* 1 when `op` computes a kernel's anchor result that elementwise nodes may
 * follow in the same kernel (Gemm, MatMul, Conv, DML_OPF_REDUCTION ops,
 * GlobalAveragePool, GlobalMaxPool). */
int dml_fuse_is_anchor(dml_op_t op);

/* 1 when node `n` is an elementwise node a kernel may fuse (DML_OPF_ELEMENTWISE
 * without random draws, one result; Expand; OneHot, which only starts a
 * group; BatchNormalization with training_mode 0). */
int dml_fuse_is_elementwise(const dml_ir_node_t *n);

/* Runs the comma-separated `pipeline` on `m`, dumping IR as `o` asks.
 * Errors: INVALID_ARGUMENT for an unknown pass name (listing the known
 * ones); any pass's error annotated with the pass name. */
dml_status_t dml_pass_run_pipeline(dml_ir_module_t *m, const char *pipeline,
                                   dml_pass_options_t *o);

#ifdef __cplusplus
}
#endif
#endif /* DML_PASSES_H_ */
