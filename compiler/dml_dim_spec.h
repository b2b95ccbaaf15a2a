/*
 * dml_dim_spec.h — the bounds of symbolic dims given on the command line
 * (`dmlc compile` and `dmlc train`):
 *
 *   --dim-bound H=1280,W=1280   the bound of each named symbolic dim (an
 *                               ONNX dim_param, or "<input>_dim<k>" for an
 *                               unnamed one; 2*h=64 bounds a dim_param
 *                               "2*h", h <= 32: dml_onnx.h); repeatable
 *   --dim-bound 1024            the bound of every other symbolic dim (the
 *                               same as --batch-bound)
 *   --input-shape x=1x3x[32:640]x[32:1280]
 *                               input x's shape: a number fixes the dim
 *                               (static), [MIN:MAX] (or [:MAX], [MAX])
 *                               keeps it symbolic with bound MAX and the
 *                               promised minimum MIN (default 1); with
 *                               [MIN:MAX:STEP] a multiple of STEP (the
 *                               dim is STEP * a symbol "<dim>/STEP");
 *                               repeatable
 *
 * Parsed into dml_compile_options_t's dim_bounds / input_shapes /
 * input_ranges / batch_bound (dml_driver.h); the spec owns the arrays it
 * lends.
 */
#ifndef DML_DIM_SPEC_H_
#define DML_DIM_SPEC_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dml_driver.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dmlc_dim_spec {
  dml_onnx_dim_bound_t *bounds;
  size_t n_bounds, cap_bounds;
  dml_onnx_input_shape_t *shapes;
  size_t n_shapes, cap_shapes;
  dml_onnx_dim_range_t *ranges; /* their names point into shapes' names */
  size_t n_ranges, cap_ranges;
  int64_t default_bound; /* 0: none given */
  /* Where parse errors are printed; NULL: stderr. The Python binding
   * (python/src/dmlc_ext.cpp) points it at a memory stream and raises the
   * text as the error's reason. */
  FILE *err;
} dmlc_dim_spec_t;

/* Parses one --dim-bound value ("H=1280,W=640" or "1024") into `s`.
 * Returns 1, or 0 after printing "error: <cmd>: ..." to `err` (a malformed
 * item, a bound outside 1..2^31, a default given twice). */
int dmlc_dim_spec_parse_bound(dmlc_dim_spec_t *s, const char *cmd, const char *v);
/* Parses one --input-shape value ("x=1x3x[32:640]x[32:1280]"). Returns 1,
 * or 0 after printing why (no '=', an empty or malformed dim, a rank above
 * DML_MAX_RANK, a range with MIN < 1 or MIN > MAX, bounds above 2^31). */
int dmlc_dim_spec_parse_shape(dmlc_dim_spec_t *s, const char *cmd, const char *v);
/* Lends the parsed bounds and shapes to `o` (and the default bound as
 * o->batch_bound when given). Returns 0 after printing why when both a
 * default --dim-bound and a different --batch-bound were given. */
int dmlc_dim_spec_apply(const dmlc_dim_spec_t *s, const char *cmd,
                        dml_compile_options_t *o);
void dmlc_dim_spec_free(dmlc_dim_spec_t *s);

#ifdef __cplusplus
}
#endif
#endif /* DML_DIM_SPEC_H_ */
