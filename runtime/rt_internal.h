/*
 * rt_internal.h — the runtime's private structures (rt_model.c, rt_session.c).
 */
#ifndef DML_RT_INTERNAL_H_
#define DML_RT_INTERNAL_H_

#include "dml_kpkg.h"
#include "dml_pkg.h"
#include "dml_rt.h"

/* A global: a PARAM or STATE value; every function's value at the same
 * "weights" offset is the same global (one of zero bytes: the same offset
 * and name; rt_model.c's collect_globals). */
typedef struct dml_rt_global {
  const char *name;
  const dml_pkg_value_t *value; /* the first function's value (its type, flags) */
  uint64_t offset, bytes;       /* in "weights" */
} dml_rt_global_t;

struct dml_rt_model {
  dml_pkg_file_t file; /* load_file: the mapping (or read buffer) */
  void *copy;          /* load_memory: the page-aligned copy */
  dml_pkg_t pkg;       /* container: sections lend into the bytes */
  dml_pkg_graph_t *graph;
  const dml_pkg_function_t *fn; /* the function sessions run */
  const uint8_t *weights;       /* "weights" section bytes (NULL if none) */
  uint64_t weights_size;
  char *meta;            /* NUL-terminated copy of "meta" ("" if none) */
  int64_t scratch_bytes; /* CPU scratch at the bounds, max over fn's nodes */
  int64_t *fn_scratch;   /* the same, per function of the graph */
  uint32_t n_globals;
  dml_rt_global_t *globals; /* sorted by name */
  int has_assign;           /* some function assigns globals: sessions copy them */
  uint64_t const_bytes;
  int64_t param_count, const_count;
  dml_kpkg_t *kernels_spirv; /* "kernels.spirv", validated; NULL if absent */
  dml_kpkg_t *kernels_cuda;  /* "kernels.cuda", validated; NULL if absent */
  /* "strings": the elements of the string constants, validated against
   * every function's CONST string values (dml_pkg.h) */
  dml_pkg_strtab_t *strtabs;
  uint32_t n_strtabs;
};

/* The elements of CONST string value `v` (its "strings" table; the
 * loader checked it exists), or NULL. */
const dml_str_t *dml_rt_model_string_const(const dml_rt_model_t *m,
                                           const dml_pkg_value_t *v);

/* Fills `out` from a package value (type in terms of the graph's symbols). */
void dml_rt_fill_io_info(const dml_rt_model_t *m, const dml_pkg_value_t *v,
                         dml_rt_io_info_t *out);

/* OUT_OF_RANGE (op `op`): "<what> index i out of range (n)". */
dml_status_t dml_rt_index_out_of_range(const char *op, const char *what, uint32_t i,
                                       uint32_t n);

/* Fills `out` for input (`output` 0) or output (1) `i` of function `f` of
 * model `m` (dml_rt_fill_io_info). Errors: OUT_OF_RANGE (op `op`) for i
 * past the function's inputs or outputs. */
dml_status_t dml_rt_fn_io_info(const char *op, const dml_rt_model_t *m,
                               const dml_pkg_function_t *f, int output, uint32_t i,
                               dml_rt_io_info_t *out);

/* The index of function f's input (`output` 0) or output (1) named
 * `name`, or -1 (none, or name NULL). */
int32_t dml_rt_fn_find_io(const dml_pkg_function_t *f, int output, const char *name);

/* Index of function `f` in the model's graph. */
static inline uint32_t dml_rt_fn_index(const dml_rt_model_t *m,
                                       const dml_pkg_function_t *f) {
  return (uint32_t)(f - m->graph->functions);
}

/* Node fusion of the CPU executor (rt_cpu_fuse.c): per node of a function,
 * role 0 runs as planned, 1 runs as a Conv/Gemm/MatMul with ep[k] (packed
 * weights, folded nodes' epilogue) writing value final_value[k]
 * (dml_cpu_run_fused), 2 is folded into the head before it and skipped. */
typedef struct dml_rt_cpu_fuse {
  uint8_t *role;
  uint32_t *final_value;
  struct dml_cpu_epilogue *ep;
  float *coef; /* the epilogues' scale and shift arrays */
  /* Per value: 0 at its planned arena offset, else 1 + the offset the
   * session puts it at instead (a fused chain's output moved off the
   * Conv's input). */
  uint64_t *value_offset;
  /* Per value: 0, or 1 + its offset in a block of extra_bytes bytes the
   * session allocates beside the arena (64-byte aligned offsets). */
  uint64_t *value_extra;
  uint64_t extra_bytes;
  void *packed; /* the nodes' weights packed once (dml_cpu_prepack) */
  /* Elementwise chains: per node, chain_len > 0 at the head (role 1) of a
   * chain of that many consecutive elementwise nodes over values of one
   * f32 shape, run block by block (dml_rt_cpu_run_chain); chain_slot 1 + s
   * where the node's output is read only inside its chain and lives in
   * block buffer s of chain_buf (DML_RT_CHAIN_BLOCK floats each), else 0. */
  uint32_t *chain_len;
  uint8_t *chain_slot;
  float *chain_buf;      /* chain_slots buffers for each of chain_buf_threads */
  uint32_t chain_slots;  /* the most block buffers one chain needs */
  int chain_buf_threads; /* grown by a run with more threads */
  /* Per node: 1 + the value a fused Conv adds as its epilogue's residual
   * (set at each run: ep's residual is that value's data), else 0. */
  uint32_t *residual;
  /* The NCHWc layout pass (ep[k].nchwc): the work buffer of the Convs at a
   * blocked run's edges, nchwc_work_floats floats for each of
   * nchwc_work_threads threads (grown by a run with more threads). */
  float *nchwc_work;
  size_t nchwc_work_floats;
  int nchwc_work_threads;
} dml_rt_cpu_fuse_t;

/* Sets ep's work buffer for an NCHWc Conv (ep->nchwc) from p's, grown
 * first to dml_cpu_get_num_threads() threads (kept for the next runs; out
 * of memory: the threads it had). */
void dml_rt_cpu_nchwc_work(dml_rt_cpu_fuse_t *p, struct dml_cpu_epilogue *ep);

/* Values per block of an elementwise chain: 32 KB per value. */
#define DML_RT_CHAIN_BLOCK 8192

/* Plans the fusions of `f` whose constants live in `weights` (which must
 * not change for the plan's life). *out is NULL when nothing fuses or the
 * environment variable DMLC_CPU_NO_FUSE is set. RESOURCE_EXHAUSTED when
 * out of memory. */
dml_status_t dml_rt_cpu_fuse_plan(const dml_pkg_function_t *f, const uint8_t *weights,
                                  dml_rt_cpu_fuse_t **out);
void dml_rt_cpu_fuse_free(dml_rt_cpu_fuse_t *p);

struct dml_cpu_call; /* dml_cpu.h */

/* Runs the elementwise chain whose head is node k of f (p->chain_len[k]
 * nodes): for each block of DML_RT_CHAIN_BLOCK positions (the blocks spread
 * over dml_cpu_set_num_threads' threads from 4 blocks; p's block buffers
 * grow to that many threads' worth, kept), each node's
 * kernel (dml_cpu_run of calls[q] with 1-D views of the block; single
 * values as they are) in order, its output into the arena or, read only
 * inside the chain, into a block buffer. Each position's values are those
 * of the nodes run one after another: the same bits, one pass over memory
 * instead of one per node. vals: the session's value views (dims of this
 * run). Errors: the nodes' kernels'. */
dml_status_t dml_rt_cpu_run_chain(dml_rt_cpu_fuse_t *p, const dml_pkg_function_t *f,
                                  uint32_t k, const dml_tensor_t *vals,
                                  const struct dml_cpu_call *calls);

#endif /* DML_RT_INTERNAL_H_ */
