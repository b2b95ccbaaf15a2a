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
};

/* Fills `out` from a package value (type in terms of the graph's symbols). */
void dml_rt_fill_io_info(const dml_rt_model_t *m, const dml_pkg_value_t *v,
                         dml_rt_io_info_t *out);

/* Index of function `f` in the model's graph. */
static inline uint32_t dml_rt_fn_index(const dml_rt_model_t *m,
                                       const dml_pkg_function_t *f) {
  return (uint32_t)(f - m->graph->functions);
}

#endif /* DML_RT_INTERNAL_H_ */
