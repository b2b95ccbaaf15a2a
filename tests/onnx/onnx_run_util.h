/*
 * onnx_run_util.h — compile an ONNX fixture with the driver into a session on
 * the cpu runtime (tests of the importer's lowerings: If, sequences, Loop,
 * Scan, optionals).
 */
#ifndef ONNX_RUN_UTIL_H_
#define ONNX_RUN_UTIL_H_

#include "dml_driver.h"
#include "dml_rt.h"
#include "onnx_test_util.h"

/* Compiles fixture `name` with `o` (may be NULL) into a session. */
static inline dml_rt_session_t *session_of(const char *name,
                                           const dml_compile_options_t *o,
                                           dml_rt_model_t **out_model) {
  char path[1024];
  size_t len = 0;
  uint8_t *bytes = read_all(fixture(name, path, sizeof(path)), &len);
  CHECK(bytes != NULL);
  if (!bytes) return NULL;
  void *pkg = NULL;
  size_t pkg_size = 0;
  dml_status_t st =
      dml_compile_onnx_memory(bytes, len, NULL, name, o, &pkg, &pkg_size, NULL);
  free(bytes);
  CHECK_OK(st);
  if (st) return NULL;
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = NULL;
  CHECK_OK(dml_rt_model_load_memory(pkg, pkg_size, &m));
  free(pkg);
  if (m) CHECK_OK(dml_rt_session_create(m, "cpu", &s));
  *out_model = m;
  return s;
}

#endif /* ONNX_RUN_UTIL_H_ */
