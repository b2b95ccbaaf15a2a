/* test_vulkan_precision.c — dmlc compile --precision f16|bf16 (the precision
 * pass, passes/precision.c) on the reference models (fashion_mlp, lenet5,
 * resnet_small; ../shared/models) for cpu,vulkan: the Vulkan outputs
 * against the saved f32 outputs within a norm-wise error
 * max|got - want| / max(1, max|want|) of 1e-2 for f16 and 4e-2 for bf16
 * (a few roundings of 2^-11 and 2^-8 relative through the layers), the
 * CPU session of the same package likewise; inputs and outputs stay f32;
 * the f16 package's weights take half the f32 one's bytes where the GEMMs
 * hold them all (fashion_mlp); the cuda target compiles them to PTX; and the option's
 * errors. Skips (77) without a Vulkan device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen_test_util.h"
#include "dml_npy.h"
#include "gpu_test_util.h"

/* Compiles reference model `name` with `precision` (NULL: f32) for
 * `targets` (the report into `out_report`, may be NULL); NULL on failure,
 * with the status in *out_status. */
static void *compile_prec(const char *name, const char *targets, const char *precision,
                          size_t *out_size, dml_status_t *out_status,
                          dml_compile_report_t *out_report) {
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
  o.precision = precision;
  if (strstr(targets, "cuda")) o.cuda_arch = "ptx";
  void *bytes = NULL;
  size_t n = 0;
  *out_status = dml_compile_onnx_memory(onnx, len, NULL, rel, &o, &bytes, &n, out_report);
  free(onnx);
  *out_size = n;
  return bytes;
}

/* Runs saved pairs 0..2 of `name` on `s`; returns the largest norm-wise
 * error against the saved outputs (1e9 on a failure). */
static double saved_err(const char *name, dml_rt_session_t *s) {
  char models[1024], path[2048];
  dml_test_path("DMLC_SHARED_DIR", "models", models, sizeof models);
  double worst = 0;
  for (int i = 0; i < 3; i++) {
    dml_tensor_t x, want, got;
    void *xb = NULL, *wb = NULL;
    snprintf(path, sizeof path, "%s/%s_io/input_%d.npy", models, name, i);
    CHECK_OK(dml_npy_read_file(path, &x, &xb));
    snprintf(path, sizeof path, "%s/%s_io/output_%d.npy", models, name, i);
    CHECK_OK(dml_npy_read_file(path, &want, &wb));
    double e = 1e9;
    if (xb && wb) {
      memset(&got, 0, sizeof got);
      CHECK_OK(dml_rt_session_set_input(s, 0, &x));
      CHECK_OK(dml_rt_session_run(s));
      CHECK_OK(dml_rt_session_get_output(s, 0, &got));
      CHECK(got.dtype == DML_DTYPE_F32);
      e = gpu_test_normwise_err(&got, &want);
    }
    if (!(e <= worst)) worst = e;
    free(xb);
    free(wb);
  }
  return worst;
}

static void check_model(const char *name, const char *precision, double tol) {
  size_t n = 0;
  dml_status_t s = DML_OK;
  void *bytes = compile_prec(name, "cpu,vulkan", precision, &n, &s, NULL);
  CHECK_OK(s);
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *cpu, *vk;
  if (bytes) CHECK_OK(dml_rt_model_load_memory(bytes, n, &m));
  free(bytes);
  gpu_test_open(m, "vulkan", &cpu, &vk);
  if (cpu && vk) {
    double ev = saved_err(name, vk), ec = saved_err(name, cpu);
    printf(
        "%-12s --precision %-4s: vulkan vs saved f32 %.2e, cpu vs saved %.2e "
        "(tolerance %.0e; %u kernels)\n",
        name, precision, ev, ec, tol, dml_rt_session_num_kernels(vk));
    CHECK(ev <= tol);
    CHECK(ec <= tol);
  }
  gpu_test_close(m, cpu, vk);
}

static void test_reference_models(void) {
  static const char *const names[] = {"fashion_mlp", "lenet5", "resnet_small"};
  for (int i = 0; i < 3; i++) {
    check_model(names[i], "f16", 1e-2);
    check_model(names[i], "bf16", 4e-2);
  }
}

/* fashion_mlp's weights are its Gemms': the f16 package stores them in
 * exactly half the bytes. */
static void test_weights_halve(void) {
  size_t n32 = 0, n16 = 0;
  dml_status_t s = DML_OK;
  dml_compile_report_t r32, r16;
  memset(&r32, 0, sizeof r32);
  memset(&r16, 0, sizeof r16);
  void *a = compile_prec("fashion_mlp", "cpu,vulkan", NULL, &n32, &s, &r32);
  CHECK_OK(s);
  void *b = compile_prec("fashion_mlp", "cpu,vulkan", "f16", &n16, &s, &r16);
  CHECK_OK(s);
  printf("fashion_mlp weights: f32 %llu bytes, f16 %llu bytes (package %zu, %zu)\n",
         (unsigned long long)r32.weight_bytes, (unsigned long long)r16.weight_bytes, n32,
         n16);
  CHECK(a && b && r16.weight_bytes * 2 == r32.weight_bytes && r32.weight_bytes > 0);
  free(a);
  free(b);
}

/* The cuda target renders the 16-bit kernels (clang-16 to PTX, as
 * tests/codegen does; no GPU here): fashion_mlp's f16 GEMMs. */
static void test_cuda_compiles(void) {
  size_t n = 0;
  dml_status_t s = DML_OK;
  void *b = compile_prec("fashion_mlp", "cpu,cuda", "f16", &n, &s, NULL);
  CHECK_OK(s);
  CHECK(b != NULL && n > 0);
  free(b);
}

static void test_errors(void) {
  size_t n = 0;
  dml_status_t s = DML_OK;
  void *b = compile_prec("fashion_mlp", "cpu", "f16", &n, &s, NULL);
  CHECK(b == NULL);
  CHECK_ERROR(s, DML_STATUS_INVALID_ARGUMENT, "needs a GPU target");
  b = compile_prec("fashion_mlp", "cpu,vulkan", "f8", &n, &s, NULL);
  CHECK(b == NULL);
  CHECK_ERROR(s, DML_STATUS_INVALID_ARGUMENT, "not f32, f16 or bf16");
  b = compile_prec("fashion_mlp", "cpu,vulkan", "f32", &n, &s, NULL);
  CHECK_OK(s);
  free(b);
}

int main(void) {
  RUN(test_errors);
  RUN(test_cuda_compiles);
  dml_rt_device_info_t d[16];
  uint32_t n = 0;
  if (gpu_test_skip(dml_rt_vulkan_devices(d, 16, &n), "no Vulkan device")) return 77;
  RUN(test_weights_halve);
  RUN(test_reference_models);
  return dml_test_finish();
}
