/* tensor_test_util.h — what the tensor tests that compile packages share:
 * the edge values their inputs are made of, and a model compiled from
 * tests/tensor/<name>.onnx in memory (dml_driver.h). */
#ifndef DML_TENSOR_TEST_UTIL_H_
#define DML_TENSOR_TEST_UTIL_H_

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_driver.h"
#include "dml_rt.h"
#include "dml_test.h"

/* NaN, ±inf, ±0, ±denormal, ±1e30, 1e-30 and ordinary values. */
static const float k_edges[16] = {NAN,     INFINITY, -INFINITY, -0.0f,  0.0f, 1e-40f,
                                  -1e-40f, 1e30f,    -1e30f,    1e-30f, 0.5f, -2.5f,
                                  3.0f,    -0.75f,   88.8f,     -100.0f};

/* The ONNX model at `rel` (a path in the source tree) compiled for
 * `targets` and loaded, or NULL (the failure reported through CHECK). */
static inline dml_rt_model_t *tensor_test_compile_path(const char *rel,
                                                       const char *targets) {
  char path[1400];
  size_t len = 0;
  uint8_t *bytes = (uint8_t *)dml_test_read_file(
      dml_test_path("DMLC_SOURCE_DIR", rel, path, sizeof path), &len);
  CHECK(bytes != NULL);
  if (!bytes) return NULL;
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.targets = targets;
  void *pkg = NULL;
  size_t n = 0;
  dml_status_t st = dml_compile_onnx_memory(bytes, len, NULL, rel, &o, &pkg, &n, NULL);
  free(bytes);
  CHECK_OK(st);
  if (st) return NULL;
  dml_rt_model_t *m = NULL;
  CHECK_OK(dml_rt_model_load_memory(pkg, n, &m));
  free(pkg);
  return m;
}

/* tests/tensor/<name>.onnx compiled for `targets` and loaded, or NULL
 * (the failure reported through CHECK). */
static inline dml_rt_model_t *tensor_test_compile(const char *name, const char *targets) {
  char rel[256];
  snprintf(rel, sizeof rel, "tests/tensor/%s.onnx", name);
  return tensor_test_compile_path(rel, targets);
}

#endif /* DML_TENSOR_TEST_UTIL_H_ */
