/*
 * layers_test_util.h — helpers of the layer API tests: compile a model into
 * a cpu session, read fixtures, compare outputs.
 */
#ifndef LAYERS_TEST_UTIL_H_
#define LAYERS_TEST_UTIL_H_

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_driver.h"
#include "dml_ir_text.h"
#include "dml_layers.h"
#include "dml_npy.h"
#include "dml_rt.h"
#include "dml_test.h"

/* Compiles `lm` (through dml_layers_model_to_ir and dml_compile_module_memory,
 * and with `via_text` through IR text) into a cpu session; NULL (with failed
 * checks) on error. */
static inline dml_rt_session_t *layers_session_via(const dml_layers_model_t *lm,
                                                   int via_text,
                                                   dml_rt_model_t **out_model) {
  *out_model = NULL;
  dml_ir_module_t *ir = NULL;
  dml_status_t st = dml_layers_model_to_ir(lm, &ir);
  CHECK_OK(st);
  if (st) return NULL;
  if (via_text) {
    /* Through IR text (what `dmlc opt` reads): print in full, parse back. */
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    CHECK(mem != NULL);
    if (mem) {
      CHECK_OK(dml_ir_print_module(ir, NULL, mem));
      fclose(mem);
    }
    dml_ir_module_release(ir);
    ir = NULL;
    if (text) CHECK_OK(dml_ir_parse(text, len, "layers.dmlir", &ir));
    free(text);
    if (!ir) return NULL;
  }
  void *pkg = NULL;
  size_t size = 0;
  st = dml_compile_module_memory(ir, "layers-test", NULL, &pkg, &size, NULL);
  dml_ir_module_release(ir);
  CHECK_OK(st);
  if (st) return NULL;
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = NULL;
  CHECK_OK(dml_rt_model_load_memory(pkg, size, &m));
  free(pkg);
  if (m) CHECK_OK(dml_rt_session_create(m, "cpu", &s));
  *out_model = m;
  return s;
}

static inline dml_rt_session_t *layers_session(const dml_layers_model_t *lm,
                                               dml_rt_model_t **out_model) {
  return layers_session_via(lm, 0, out_model);
}

/* Reads tests/layers/fixtures/<dir>/<name>.npy (data malloc'd in *buf). */
static inline dml_status_t layers_fixture(const char *dir, const char *name,
                                          dml_tensor_t *t, void **buf) {
  char rel[512], path[1024];
  snprintf(rel, sizeof rel, "tests/layers/fixtures/%s/%s.npy", dir, name);
  return dml_npy_read_file(dml_test_path("DMLC_SOURCE_DIR", rel, path, sizeof path), t,
                           buf);
}

/* Checks output `name` of the session's last run against `want` (f32):
 * same dims, |got - want| <= atol + rtol * |want| everywhere. Returns the
 * largest absolute difference. */
static inline double layers_compare(dml_rt_session_t *s, const dml_rt_model_t *m,
                                    const char *name, const dml_tensor_t *want,
                                    double atol, double rtol) {
  int32_t i = dml_rt_model_find_output(m, name);
  CHECK(i >= 0);
  if (i < 0) return INFINITY;
  dml_tensor_t got;
  dml_status_t st = dml_rt_session_get_output(s, (uint32_t)i, &got);
  CHECK_OK(st);
  if (st) return INFINITY;
  CHECK(got.dtype == DML_DTYPE_F32 && want->dtype == DML_DTYPE_F32);
  CHECK(got.rank == want->rank);
  if (got.rank != want->rank) return INFINITY;
  for (int32_t d = 0; d < got.rank; d++) CHECK(got.dims[d] == want->dims[d]);
  int64_t n = dml_dims_numel(want->dims, want->rank);
  const float *g = (const float *)got.data, *w = (const float *)want->data;
  double worst = 0;
  int bad = 0;
  for (int64_t k = 0; k < n; k++) {
    double diff = fabs((double)g[k] - (double)w[k]);
    if (!(diff <= atol + rtol * fabs((double)w[k]))) {
      if (!bad)
        fprintf(stderr, "output '%s' element %lld: got %.9g want %.9g\n", name,
                (long long)k, (double)g[k], (double)w[k]);
      bad = 1;
    }
    if (!(diff <= worst)) worst = diff;
  }
  CHECK(!bad);
  return worst;
}

#endif /* LAYERS_TEST_UTIL_H_ */
