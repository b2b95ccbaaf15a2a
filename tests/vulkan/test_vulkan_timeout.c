/* test_vulkan_timeout.c — the Vulkan fence wait's limit
 * (dml_rt_session_set_device_timeout, DMLC_VULKAN_TIMEOUT_S; docs/kernels.md
 * "Running on Vulkan"): a run of three 512x512 GEMMs (far more than the
 * 2 ms the runtime polls before it waits) fails with a clear error under a
 * 1 us limit, from the session's setting and from the environment; the
 * next run with no limit (which first waits for the submission that timed
 * out) and with the default matches the CPU; a DMLC_VULKAN_TIMEOUT_S that is not
 * a number is INVALID_ARGUMENT naming it. Skips (77) without a Vulkan
 * device, and the limits on a device that runs the GEMMs in under 20 ms
 * (it never waits on the fence then). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vulkan_forms.h"

static const char *k_ir =
    "func @forward(%a: f32[512,512], %b: f32[512,512]) -> (f32[512,512]) {\n"
    "  %c = MatMul(%a, %b) : f32[512,512]\n"
    "  %d = MatMul(%c, %b) : f32[512,512]\n"
    "  %e = MatMul(%d, %b) : f32[512,512]\n"
    "  return %e\n}\n";

/* Binds the same inputs (values in [-1, 1) / 8) to both sessions. */
static void bind(dml_rt_session_t *cpu, dml_rt_session_t *vk) {
  static float x[512 * 512];
  for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) x[i] = gpu_test_frand() / 8.0f;
  dml_tensor_t t;
  memset(&t, 0, sizeof t);
  t.dtype = DML_DTYPE_F32;
  t.rank = 2;
  t.dims[0] = t.dims[1] = 512;
  t.data = x;
  for (uint32_t i = 0; i < 2; i++) {
    CHECK_OK(dml_rt_session_set_input(cpu, i, &t));
    CHECK_OK(dml_rt_session_set_input(vk, i, &t));
  }
}

/* Vulkan's output of the last run against a CPU run. */
static void check_same(dml_rt_session_t *cpu, dml_rt_session_t *vk) {
  CHECK_OK(dml_rt_session_run(cpu));
  dml_tensor_t a, b;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  CHECK_OK(dml_rt_session_get_output(vk, 0, &a));
  CHECK_OK(dml_rt_session_get_output(cpu, 0, &b));
  double e = gpu_test_max_err(&a, &b);
  if (e > GPU_TEST_TOL) fprintf(stderr, "  error %.3g\n", e);
  CHECK(e <= GPU_TEST_TOL);
}

static void test_timeout(void) {
  size_t n = 0;
  void *bytes = cg_package(k_ir, "cpu,vulkan", &n);
  dml_rt_model_t *m = NULL;
  if (bytes) CHECK_OK(dml_rt_model_load_memory(bytes, n, &m));
  free(bytes);
  if (!m) return;
  dml_rt_session_t *cpu = NULL, *vk = NULL;
  setenv("DMLC_VULKAN_TIMEOUT_S", "ten", 1);
  CHECK_ERROR(dml_rt_session_create(m, "vulkan", &vk), DML_STATUS_INVALID_ARGUMENT,
              "DMLC_VULKAN_TIMEOUT_S='ten' is not a number of seconds");
  unsetenv("DMLC_VULKAN_TIMEOUT_S");
  gpu_test_open(m, "vulkan", &cpu, &vk);
  if (!cpu || !vk) goto done;
  bind(cpu, vk);
  /* a device that runs the GEMMs within the runtime's 2 ms of polling
   * never waits on the fence: the limits cannot be seen there */
  struct timespec t0, t1;
  CHECK_OK(dml_rt_session_run(vk)); /* records the command buffer */
  clock_gettime(CLOCK_MONOTONIC, &t0);
  CHECK_OK(dml_rt_session_run(vk));
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double ms =
      (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
  if (ms < 20) {
    printf("SKIP the limits: the device ran the GEMMs in %.2f ms\n", ms);
    goto done;
  }
  /* the session's limit */
  dml_rt_session_set_device_timeout(vk, 1e-6);
  CHECK_ERROR(dml_rt_session_run(vk), DML_STATUS_INTERNAL,
              "the device did not finish within 1e-06 s");
  dml_rt_session_set_device_timeout(vk, 0); /* no limit */
  CHECK_OK(dml_rt_session_run(vk));
  check_same(cpu, vk);
  /* the environment's, through the default */
  dml_rt_session_set_device_timeout(vk, -1);
  setenv("DMLC_VULKAN_TIMEOUT_S", "0.000001", 1);
  CHECK_ERROR(dml_rt_session_run(vk), DML_STATUS_INTERNAL,
              "did not finish within 1e-06 s");
  setenv("DMLC_VULKAN_TIMEOUT_S", "x1", 1);
  CHECK_ERROR(dml_rt_session_run(vk), DML_STATUS_INVALID_ARGUMENT,
              "DMLC_VULKAN_TIMEOUT_S='x1'");
  unsetenv("DMLC_VULKAN_TIMEOUT_S"); /* the device type's default */
  CHECK_OK(dml_rt_session_run(vk));
  check_same(cpu, vk);
done:
  gpu_test_close(m, cpu, vk);
}

int main(void) {
  dml_rt_device_info_t d[16];
  uint32_t n = 0;
  if (gpu_test_skip(dml_rt_vulkan_devices(d, 16, &n), "no Vulkan device")) return 77;
  RUN(test_timeout);
  return dml_test_finish();
}
