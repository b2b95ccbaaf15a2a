/* test_vulkan.c — the Vulkan backend against the CPU reference: every kernel
 * form the scheduler emits (elementwise chains with broadcasting, also in
 * the unrolled form of large kernels, Gemm and
 * MatMul with epilogues, reductions, softmax) at several batch sizes, the
 * reference models (fashion_mlp, lenet5, resnet_small) against their saved
 * outputs, and the errors
 * (no kernels in the package, no such device, ops a target lacks).
 * Tolerance: |vulkan - cpu| <= 1e-4 * max(1, |cpu|) (f32 sums in another
 * order, and the GPU's exp/tanh/log). Skips (77) without a Vulkan device.
 * The kernel forms and the comparisons are tests/gpu_test_util.h's, shared
 * with tests/cuda. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen_test_util.h"
#include "gpu_test_util.h"

static const int64_t k_batches[] = {1, 3, 16};

/* Compiles kernel form `text` for cpu,vulkan and checks it at each batch
 * in k_batches (gpu_test_check_form). */
static void check_form(const char *what, const char *text, uint32_t want_kernels) {
  size_t n = 0;
  void *bytes = cg_package(text, "cpu,vulkan", &n);
  if (!bytes) {
    fprintf(stderr, "  (%s)\n", what);
    return;
  }
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *cpu, *vk;
  CHECK_OK(dml_rt_model_load_memory(bytes, n, &m));
  free(bytes);
  gpu_test_open(m, "vulkan", &cpu, &vk);
  gpu_test_check_form(what, m, cpu, vk, k_batches, 3, want_kernels, 0);
  gpu_test_close(m, cpu, vk);
}

static void test_kernel_forms(void) {
  gpu_test_kernel_forms(check_form, 1);
}

/* Compiles reference model `name` (../shared/models) for cpu,vulkan and
 * checks its saved input/output pairs 0..2 (batch 1, 2 and 64) on Vulkan
 * against the saved outputs and the CPU, and its number of kernels. */
static void check_reference_model(const char *name, uint32_t want_kernels) {
  char models[1024];
  size_t n = 0;
  void *bytes = cg_compile_model(name, "cpu,vulkan", NULL, &n);
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *cpu, *vk;
  if (bytes) CHECK_OK(dml_rt_model_load_memory(bytes, n, &m));
  free(bytes);
  gpu_test_open(m, "vulkan", &cpu, &vk);
  gpu_test_check_saved(name,
                       dml_test_path("DMLC_SHARED_DIR", "models", models, sizeof models),
                       name, 3, cpu, vk, 1);
  if (vk) {
    printf("%s on %s: %u kernels\n", name, dml_rt_session_device(vk),
           dml_rt_session_num_kernels(vk));
    CHECK(dml_rt_session_num_kernels(vk) == want_kernels);
  }
  gpu_test_close(m, cpu, vk);
}

static void test_fashion_mlp(void) {
  check_reference_model("fashion_mlp", 3);
}
static void test_lenet5(void) {
  check_reference_model("lenet5", 10);
}
static void test_resnet_small(void) {
  check_reference_model("resnet_small", 16);
}

/* An op the Vulkan target does not emit is a compile error naming it. */
static void test_missing_ops(void) {
  const char *text =
      "func @forward(%x: f32[2,3]) -> (f32[3,2]) {\n"
      "  %t = Transpose(%x) {perm = [1, 0]} : f32[3,2]\n  return %t\n}\n";
  size_t n = 0;
  void *bytes = cg_package(text, NULL, &n);
  if (!bytes) return;
  CHECK_ERROR(dml_compile_add_kernels("vulkan", NULL, &bytes, &n),
              DML_STATUS_UNIMPLEMENTED, "Transpose: 1 node");
  free(bytes);
}

static void test_errors(void) {
  size_t n = 0;
  const char *text =
      "func @forward(%x: f32[4]) -> (f32[4]) {\n  %r = Relu(%x) : f32[4]\n  return "
      "%r\n}\n";
  void *cpu_only = cg_package(text, NULL, &n);
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = NULL;
  if (cpu_only) CHECK_OK(dml_rt_model_load_memory(cpu_only, n, &m));
  if (m)
    CHECK_ERROR(dml_rt_session_create(m, "vulkan", &s), DML_STATUS_FAILED_PRECONDITION,
                "the package has no Vulkan kernels for function 'forward'");
  dml_rt_model_release(m);
  free(cpu_only);
  m = NULL;
  void *bytes = cg_package(text, "vulkan", &n);
  if (bytes) CHECK_OK(dml_rt_model_load_memory(bytes, n, &m));
  free(bytes);
  if (!m) return;
  CHECK_ERROR(dml_rt_session_create(m, "vulkan:99", &s), DML_STATUS_NOT_FOUND,
              "no Vulkan device 'vulkan:99'");
  CHECK_ERROR(dml_rt_session_create(m, "vulkan:x", &s), DML_STATUS_NOT_FOUND,
              "no Vulkan device 'vulkan:x'");
  /* A device without enough memory for the arena (the heap capped with
   * DMLC_VULKAN_MAX_MEMORY) is a clear error naming the sizes. */
  setenv("DMLC_VULKAN_MAX_MEMORY", "8", 1);
  CHECK_ERROR(dml_rt_session_create(m, "vulkan", &s), DML_STATUS_RESOURCE_EXHAUSTED,
              "bytes but the device's memory heap has 8 ");
  unsetenv("DMLC_VULKAN_MAX_MEMORY");
  CHECK_OK(dml_rt_session_create(m, "vulkan:0", &s));
  if (s) {
    dml_rt_kernel_info_t ki;
    CHECK_ERROR(dml_rt_session_kernel_info(s, 0, &ki), DML_STATUS_FAILED_PRECONDITION,
                "no run has completed yet");
    CHECK_ERROR(dml_rt_session_run(s), DML_STATUS_FAILED_PRECONDITION,
                "input 'x' is not set");
    CHECK_ERROR(dml_rt_session_kernel_info(s, 7, &ki), DML_STATUS_OUT_OF_RANGE,
                "kernel 7");
  }
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

int main(void) {
  dml_rt_device_info_t d[16];
  uint32_t n = 0;
  if (gpu_test_skip(dml_rt_vulkan_devices(d, 16, &n), "no Vulkan device")) return 77;
  int defaults = 0;
  for (uint32_t i = 0; i < n && i < 16; i++) {
    printf("%s: %s (%s), Vulkan %u.%u%s\n", d[i].id, d[i].name, d[i].kind, d[i].api_major,
           d[i].api_minor, d[i].is_default ? " [default]" : "");
    defaults += d[i].is_default;
  }
  CHECK(defaults == 1);
  RUN(test_errors);
  RUN(test_kernel_forms);
  RUN(test_fashion_mlp);
  RUN(test_lenet5);
  RUN(test_resnet_small);
  RUN(test_missing_ops);
  return dml_test_finish();
}
