/* schedule_internal.h — the scheduler's state, shared by schedule.c and the
 * files holding more of its kernel forms (schedule_ops1.c, schedule_ops2.c,
 * schedule_ops3.c).
 * codegen/ only. */
#ifndef DML_SCHEDULE_INTERNAL_H_
#define DML_SCHEDULE_INTERNAL_H_

#include "kernel_internal.h"

/* One dml_kschedule() run over a function. */
typedef struct sched {
  const dml_pkg_graph_t *g;
  const dml_pkg_function_t *fn;
  const uint8_t *weights;
  uint64_t weights_size;
  dml_kpool_t *pool;
  uint32_t *n_uses_outside; /* per value: consumers (set per group) */
  uint32_t *group_of;       /* per node: kernel index + 1, 0 = none */
  uint8_t *is_output;       /* per value */
  dml_status_t err;         /* unschedulable nodes, listed */
  dml_kernel_t *kernels;
  uint32_t n_kernels, cap_kernels;
  /* The open reduction's axes when an input fed at run time holds them
   * (reduce_axes marks every dim -1 then), else NULL. */
  const dml_pkg_value_t *rt_axes;
  /* 1 while building a data-movement kernel: f16 and bf16 values move as
   * their 16-bit words (u16), bit for bit as the CPU copies them (NaN
   * payloads included), instead of through f32 */
  int raw16;
} sched_t;

/* Adds node `node` to the UNIMPLEMENTED error of the run with the reason
 * `why` (a complete sentence fragment, no format). */
void dml_ksched_unsupported(sched_t *s, uint32_t node, const char *why);

/* A new kernel of kind `kind` holding only node `node` (workgroup and grid
 * of one invocation, no body yet); NULL when out of memory. */
dml_kernel_t *dml_ksched_kernel(sched_t *s, dml_kernel_kind_t kind, uint32_t node);

/* schedule_ops2.c: resampling (Resize), windows of any rank (3-D Conv,
 * MaxPool with Indices, ...), Pad's reflect/edge/wrap modes and the
 * quantization ops. */

/* 1 when dml_ksched_ops2_emit() has a form for op `op`. */
int dml_ksched_ops2_handles(dml_op_t op);

/* 1 when node `node` takes one of schedule_ops2.c's forms (then the
 * caller closes its open group and calls dml_ksched_ops2_emit), 0 when the
 * caller's own forms take it. */
int dml_ksched_ops2_claims(const sched_t *s, uint32_t node);

/* Places claimed node `node`: its kernel, or an UNIMPLEMENTED detail
 * naming the node and why. */
void dml_ksched_ops2_emit(sched_t *s, uint32_t node);
/* schedule_ops1.c: Trilu, EyeLike, IsInf, IsNaN, BitShift, CumSum, ScatterElements,
 * ScatterND, GatherND, ReverseSequence, LRN, MeanVarianceNormalization,
 * Det, Einsum and the training-preview optimizers Adagrad, Momentum and
 * Adam: one kernel per node, each op's form described there. */

/* 1 when dml_ksched_ops1_emit() has a form for op `op`. */
int dml_ksched_ops1_handles(dml_op_t op);

/* Places node `node` (an op of dml_ksched_ops1_handles): its kernel, or an
 * UNIMPLEMENTED detail naming the node and why (dtype, form). */
void dml_ksched_ops1_emit(sched_t *s, uint32_t node);

/* schedule_dyn.c: NonZero, Compress, Unique and NonMaxSuppression, whose
 * kernels count their output extents on the device and store them in the
 * dims slot (docs/kernels.md "Data-dependent output sizes"). */

/* 1 when dml_ksched_dyn_emit() has a form for op `op`. */
int dml_ksched_dyn_handles(dml_op_t op);

/* Places node `node` (an op of dml_ksched_dyn_handles): its kernel, or an
 * UNIMPLEMENTED detail naming the node and why. */
void dml_ksched_dyn_emit(sched_t *s, uint32_t node);

/* schedule_ops3.c: TopK, DFT and TfIdfVectorizer, one kernel per node,
 * each op's form described there. */

/* 1 when dml_ksched_ops3_emit() has a form for op `op`. */
int dml_ksched_ops3_handles(dml_op_t op);

/* Places node `node` (an op of dml_ksched_ops3_handles): its kernel, or an
 * UNIMPLEMENTED detail naming the node and why (dtype, form). */
void dml_ksched_ops3_emit(sched_t *s, uint32_t node);

#endif /* DML_SCHEDULE_INTERNAL_H_ */
