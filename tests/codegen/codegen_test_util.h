/* codegen_test_util.h — IR text or a reference model -> planned package
 * (+ GPU kernel sections) for the codegen, Vulkan and CUDA tests. */
#ifndef DML_CODEGEN_TEST_UTIL_H_
#define DML_CODEGEN_TEST_UTIL_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_driver.h"
#include "dml_ir_text.h"
#include "dml_package_emit.h"
#include "dml_passes.h"
#include "dml_test.h"

/* Parses `text`, runs the default pipeline, emits a package into memory
 * and adds the kernel sections of `targets` (NULL: none). Returns NULL
 * (after a failed CHECK) on error; the caller free()s. */
static inline void *cg_package(const char *text, const char *targets, size_t *out_size) {
  dml_ir_module_t *m = NULL;
  dml_status_t s = dml_ir_parse(text, strlen(text), "test.dmlir", &m);
  dml_pass_options_t o;
  memset(&o, 0, sizeof o);
  o.verify_each = 1;
  if (!s) s = dml_pass_run_pipeline(m, dml_pass_default_pipeline(), &o);
  void *bytes = NULL;
  size_t size = 0;
  if (!s) s = dml_package_emit_memory(m, NULL, &bytes, &size);
  dml_ir_module_release(m);
  if (!s && targets) s = dml_compile_add_kernels(targets, NULL, &bytes, &size);
  if (s) {
    CHECK_OK(s);
    free(bytes);
    return NULL;
  }
  *out_size = size;
  return bytes;
}

/* Compiles reference model `name` ($DMLC_SHARED_DIR/models/<name>.onnx)
 * for `targets` (cuda_arch as --cuda-arch; NULL: the default) into a
 * package in memory. Returns NULL (after a failed CHECK) on error; the
 * caller free()s. */
static inline void *cg_compile_model(const char *name, const char *targets,
                                     const char *cuda_arch, size_t *out_size) {
  char model[1024], rel[256];
  snprintf(rel, sizeof rel, "models/%s.onnx", name);
  size_t len = 0;
  void *onnx = dml_test_read_file(
      dml_test_path("DMLC_SHARED_DIR", rel, model, sizeof model), &len);
  CHECK(onnx != NULL);
  if (!onnx) return NULL;
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.targets = targets;
  o.cuda_arch = cuda_arch;
  void *bytes = NULL;
  size_t n = 0;
  CHECK_OK(dml_compile_onnx_memory(onnx, len, NULL, rel, &o, &bytes, &n, NULL));
  free(onnx);
  *out_size = n;
  return bytes;
}

#endif /* DML_CODEGEN_TEST_UTIL_H_ */
