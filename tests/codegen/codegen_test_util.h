/* codegen_test_util.h — IR text -> planned package (+ GPU kernel sections)
 * for the codegen and Vulkan tests. */
#ifndef DML_CODEGEN_TEST_UTIL_H_
#define DML_CODEGEN_TEST_UTIL_H_

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

#endif /* DML_CODEGEN_TEST_UTIL_H_ */
