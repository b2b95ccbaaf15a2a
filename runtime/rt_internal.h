/*
 * rt_internal.h — the runtime's private structures (rt_model.c, rt_session.c).
 */
#ifndef DML_RT_INTERNAL_H_
#define DML_RT_INTERNAL_H_

#include "dml_pkg.h"
#include "dml_rt.h"

struct dml_rt_model {
  dml_pkg_file_t file; /* load_file: the mapping (or read buffer) */
  void *copy;          /* load_memory: the page-aligned copy */
  dml_pkg_t pkg;       /* container: sections lend into the bytes */
  dml_pkg_graph_t *graph;
  const dml_pkg_function_t *fn; /* the function sessions run */
  const uint8_t *weights;       /* "weights" section bytes (NULL if none) */
  uint64_t weights_size;
  char *meta;            /* NUL-terminated copy of "meta" ("" if none) */
  int64_t scratch_bytes; /* CPU scratch at the bounds, max over nodes */
  uint64_t const_bytes;
  int64_t param_count, const_count;
};

/* Fills `out` from a package value (type in terms of the graph's symbols). */
void dml_rt_fill_io_info(const dml_rt_model_t *m, const dml_pkg_value_t *v,
                         dml_rt_io_info_t *out);

#endif /* DML_RT_INTERNAL_H_ */
