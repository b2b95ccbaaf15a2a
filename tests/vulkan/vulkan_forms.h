/* vulkan_forms.h — what the tests/vulkan programs share to run a kernel
 * form (IR text) on the default Vulkan device against the CPU reference:
 * compiling it for cpu,vulkan, opening both sessions, and checking it at
 * batch 1, 3 and 16 with gpu_test_check_form (gpu_test_util.h: within
 * 1e-4 * max(1, |cpu|), integers exactly, and the number of kernels). */
#ifndef VULKAN_FORMS_H_
#define VULKAN_FORMS_H_

#include <stdio.h>
#include <stdlib.h>

#include "codegen_test_util.h"
#include "gpu_test_util.h"

/* Compiles `text` for cpu,vulkan and opens the "cpu" session *cpu and the
 * "vulkan" session *vk; returns the model (NULL, and NULL sessions, on a
 * failure: a failed CHECK). */
static inline dml_rt_model_t *vk_open_pair(const char *text, dml_rt_session_t **cpu,
                                           dml_rt_session_t **vk) {
  size_t n = 0;
  void *bytes = cg_package(text, "cpu,vulkan", &n);
  dml_rt_model_t *m = NULL;
  if (bytes) CHECK_OK(dml_rt_model_load_memory(bytes, n, &m));
  free(bytes);
  gpu_test_open(m, "vulkan", cpu, vk);
  return m;
}

/* Kernel form `what` (IR `text`) on Vulkan against the CPU at batch 1, 3
 * and 16, made of `want_kernels` kernels (a gpu_test_form_fn). */
static inline void vk_check_form(const char *what, const char *text,
                                 uint32_t want_kernels) {
  static const int64_t batches[] = {1, 3, 16};
  dml_rt_session_t *cpu = NULL, *vk = NULL;
  dml_rt_model_t *m = vk_open_pair(text, &cpu, &vk);
  if (!m) {
    fprintf(stderr, "  (%s)\n", what);
    return;
  }
  gpu_test_check_form(what, m, cpu, vk, batches, 3, want_kernels, 0);
  gpu_test_close(m, cpu, vk);
}

/* A form the scheduler refuses: IR `text` compiles for the CPU and adding
 * the vulkan target is UNIMPLEMENTED with a message containing `want`
 * (the node and the reason). */
static inline void vk_check_refused(const char *text, const char *want) {
  size_t n = 0;
  void *bytes = cg_package(text, NULL, &n);
  CHECK(bytes != NULL);
  if (!bytes) return;
  CHECK_ERROR(dml_compile_add_kernels("vulkan", NULL, &bytes, &n),
              DML_STATUS_UNIMPLEMENTED, want);
  free(bytes);
}

#endif /* VULKAN_FORMS_H_ */
