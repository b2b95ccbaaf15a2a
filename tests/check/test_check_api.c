/* dml_rt_check (dml_rt.h), as an app calls it: lenet5 compiled for cpu and
 * vulkan passes on the default Vulkan device (lavapipe in CI), each kernel
 * reported with its class and worst element; a kernel made wrong on purpose
 * (DMLC_VULKAN_TEST_CORRUPT_KERNEL) fails, naming its element; the cpu is
 * refused. Skips (77) without a Vulkan device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_driver.h"
#include "dml_rt.h"
#include "dml_test.h"
#include "gpu_test_util.h"

static dml_rt_model_t *g_model;

static void test_passes(void) {
  dml_rt_check_options_t opt;
  memset(&opt, 0, sizeof opt);
  opt.seed = 1;
  opt.iterations = 1;
  dml_rt_check_report_t *r = NULL;
  CHECK_OK(dml_rt_check(g_model, "vulkan", &opt, &r));
  if (!r) return;
  CHECK(r->n_failed == 0);
  CHECK(r->n_kernels == 8); /* 7 kernels + end-to-end */
  CHECK(r->seed == 1 && r->iterations == 1);
  CHECK(strstr(r->device, "vulkan:") == r->device);
  for (uint32_t k = 0; k < r->n_kernels; k++) {
    const dml_rt_check_kernel_t *o = &r->kernels[k];
    CHECK(o->checked && o->passed);
    CHECK(o->worst >= 0 && o->worst <= o->tolerance);
    CHECK(o->value[0] != 0);
  }
  CHECK(!strcmp(r->kernels[0].name, "k0_conv"));
  CHECK(!strcmp(r->kernels[0].ops, "Conv,Relu"));
  CHECK(!strcmp(r->kernels[0].tol_class, "accumulating"));
  CHECK(r->kernels[0].tolerance == 1e-4);
  CHECK(!strcmp(r->kernels[1].tol_class, "exact") && r->kernels[1].tolerance == 0);
  CHECK(!strcmp(r->kernels[7].name, "end-to-end") && r->kernels[7].tolerance == 1e-3);
  CHECK(!strcmp(r->kernels[7].value, "logits"));
  dml_rt_check_report_free(r);
}

static void test_fails_on_a_wrong_kernel(void) {
  setenv("DMLC_VULKAN_TEST_CORRUPT_KERNEL", "k2_conv", 1);
  dml_rt_check_options_t opt;
  memset(&opt, 0, sizeof opt);
  opt.seed = 2;
  opt.iterations = 1;
  dml_rt_check_report_t *r = NULL;
  CHECK_OK(dml_rt_check(g_model, "vulkan", &opt, &r));
  unsetenv("DMLC_VULKAN_TEST_CORRUPT_KERNEL");
  if (!r) return;
  CHECK(r->n_failed >= 1);
  for (uint32_t k = 0; k < r->n_kernels; k++) {
    const dml_rt_check_kernel_t *o = &r->kernels[k];
    if (strcmp(o->name, "k2_conv") && strcmp(o->name, "end-to-end")) CHECK(o->passed);
  }
  const dml_rt_check_kernel_t *o = &r->kernels[2];
  CHECK(!strcmp(o->name, "k2_conv") && !o->passed && o->worst > o->tolerance);
  /* the corrupted element: the first of the Conv,Relu's output */
  CHECK(o->index == 0 && o->rank == 4);
  CHECK_NEAR(o->device_value, 123.456, 1e-3);
  dml_rt_check_report_free(r);
}

static void test_cpu_is_refused(void) {
  dml_rt_check_report_t *r = NULL;
  dml_status_t s = dml_rt_check(g_model, "cpu", NULL, &r);
  CHECK(s && dml_status_code(s) == DML_STATUS_INVALID_ARGUMENT);
  CHECK(r == NULL);
  dml_status_free(s);
}

int main(void) {
  dml_rt_device_info_t d[16];
  uint32_t n = 0;
  if (gpu_test_skip(dml_rt_vulkan_devices(d, 16, &n), "no Vulkan device")) return 77;
  char path[1024], out[1100];
  dml_test_path("DMLC_SHARED_DIR", "models/lenet5.onnx", path, sizeof path);
  snprintf(out, sizeof out, "%s/test_check_api_lenet5.dmlpkg",
           getenv("DMLC_BUILD_DIR") ? getenv("DMLC_BUILD_DIR") : ".");
  dml_compile_options_t co;
  memset(&co, 0, sizeof co);
  co.targets = "cpu,vulkan";
  co.batch_bound = 2;
  dml_compile_report_t rep;
  CHECK_OK(dml_compile_onnx_file(path, out, &co, &rep));
  CHECK_OK(dml_rt_model_load_file(out, &g_model));
  if (!g_model) return dml_test_finish();
  RUN(test_passes);
  RUN(test_fails_on_a_wrong_kernel);
  RUN(test_cpu_is_refused);
  dml_rt_model_release(g_model);
  remove(out);
  return dml_test_finish();
}
