/*
 * test_symshape_gpu.c — the run-time shape arithmetic fixtures of
 * tests/symshape that the GPU scheduler takes (Resize sizes and Slice ends
 * computed from Shape(x), the image padded to a multiple of 32 by float
 * arithmetic), compiled once for Vulkan and run on the default Vulkan device
 * (lavapipe in CI) at three sizes, against onnxruntime's saved outputs
 * within 1e-4 scaled: the derived sizes reach the kernels as symbols. CUDA:
 * the same packages compile (clang-16 to PTX; no device here). Skips (77)
 * without a Vulkan device after the CUDA part.
 */
#define SYMDIMS_FIXTURE_DIR "tests/symshape"
#include "dml_codegen.h"
#include "gpu_test_util.h"
#include "symdims_util.h"

static const dml_onnx_dim_bound_t B_NHW[] = {{"N", 2}, {"H", 64}, {"W", 64}};
static const dml_onnx_dim_bound_t B_BS[] = {{"B", 4}, {"S", 64}};
static const dml_onnx_dim_bound_t B_HW[] = {{"H", 128}, {"W", 128}};

static void run_cases(const char *model, const dml_onnx_dim_bound_t *b, size_t nb) {
  dml_rt_model_t *m = compile(model, b, nb, "vulkan");
  dml_rt_session_t *s = NULL;
  if (m) CHECK_OK(dml_rt_session_create(m, "vulkan", &s));
  if (s) {
    check_case(s, model, "c");
    check_case(s, model, "a");
    check_case(s, model, "b");
  }
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

static void test_vulkan(void) {
  run_cases("resize_sizes", B_NHW, 3);
  run_cases("slice_shift", B_BS, 2);
  run_cases("pad_ceil", B_HW, 2);
}

static void test_cuda_compiles(void) {
  dml_rt_model_t *m = compile("resize_sizes", B_NHW, 3, "cuda");
  dml_rt_model_release(m);
  m = compile("slice_shift", B_BS, 2, "cuda");
  dml_rt_model_release(m);
  m = compile("pad_ceil", B_HW, 2, "cuda");
  dml_rt_model_release(m);
}

int main(void) {
  RUN(test_cuda_compiles);
  dml_rt_device_info_t d[16];
  uint32_t n = 0;
  if (gpu_test_skip(dml_rt_vulkan_devices(d, 16, &n), "no Vulkan device")) {
    dml_test_finish();
    return 77;
  }
  RUN(test_vulkan);
  return dml_test_finish();
}
