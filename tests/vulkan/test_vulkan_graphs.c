/* test_vulkan_graphs.c — whole graphs on Vulkan against the CPU (issue 23).
 *
 * dense_block: a DenseNet-style block and transition
 * (tests/vulkan/graphs/gen_dense_block.py: 3 layers of BatchNorm -> Relu ->
 * 1x1 Conv -> BatchNorm -> Relu -> 3x3 Conv over the Concat of all earlier
 * feature maps, then BatchNorm -> Relu -> 1x1 Conv -> AveragePool; f32[N,
 * 16, 14, 14]). The CPU against onnxruntime's saved outputs (batch 1 and
 * 3), then Vulkan against the saved outputs and the CPU on them and on
 * random inputs at batch 1, 3, 16 and 64. Before the fix of emit_ew_group
 * (codegen/schedule.c) lavapipe applied a BatchNorm+Relu planned in place
 * over a Concat twice to some elements (largest error 0.2 on the block of
 * the issue).
 *
 * Tolerance: |x - ref| <= 1e-4 * max(1, |ref|) per element (GPU_TEST_TOL;
 * f32 sums in another order than onnxruntime's). Also the forms of
 * tests/gpu_graph_forms.h (each a graph that went wrong between kernels)
 * against the CPU at batch 1, 3 and 16. Skips (77) the Vulkan
 * part without a Vulkan device, after the CPU part. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen_test_util.h"
#include "dml_npy.h"
#include "gpu_graph_forms.h"
#include "gpu_test_util.h"
#include "vulkan_forms.h"

/* tests/vulkan/graphs/<rel> under the source tree. */
static const char *graph_path(const char *rel, char *buf, size_t cap) {
  char r[256];
  snprintf(r, sizeof r, "tests/vulkan/graphs/%s", rel);
  return dml_test_path("DMLC_SOURCE_DIR", r, buf, cap);
}

/* tests/vulkan/graphs/<name>.onnx compiled for `targets` in memory;
 * NULL (a failed CHECK) on error. */
static dml_rt_model_t *load_graph(const char *name, const char *targets) {
  char path[1024], rel[256];
  snprintf(rel, sizeof rel, "%s.onnx", name);
  size_t len = 0, n = 0;
  void *onnx = dml_test_read_file(graph_path(rel, path, sizeof path), &len);
  CHECK(onnx != NULL);
  if (!onnx) return NULL;
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.targets = targets;
  void *bytes = NULL;
  dml_rt_model_t *m = NULL;
  CHECK_OK(dml_compile_onnx_memory(onnx, len, NULL, rel, &o, &bytes, &n, NULL));
  free(onnx);
  if (bytes) CHECK_OK(dml_rt_model_load_memory(bytes, n, &m));
  free(bytes);
  return m;
}

/* The CPU session of dense_block on each saved pair against onnxruntime's
 * output. */
static void test_dense_block_cpu(void) {
  dml_rt_model_t *m = load_graph("dense_block", "cpu");
  dml_rt_session_t *cpu = NULL;
  if (m) CHECK_OK(dml_rt_session_create(m, "cpu", &cpu));
  for (int i = 0; cpu && i < 2; i++) {
    char rel[64], path[1024];
    dml_tensor_t x, want, got;
    void *xb = NULL, *wb = NULL;
    snprintf(rel, sizeof rel, "dense_block_io/input_%d.npy", i);
    CHECK_OK(dml_npy_read_file(graph_path(rel, path, sizeof path), &x, &xb));
    snprintf(rel, sizeof rel, "dense_block_io/output_%d.npy", i);
    CHECK_OK(dml_npy_read_file(graph_path(rel, path, sizeof path), &want, &wb));
    if (xb && wb) {
      CHECK_OK(dml_rt_session_set_input(cpu, 0, &x));
      CHECK_OK(dml_rt_session_run(cpu));
      memset(&got, 0, sizeof got);
      CHECK_OK(dml_rt_session_get_output(cpu, 0, &got));
      double e = gpu_test_max_err(&got, &want);
      printf("dense_block input_%d (batch %lld) on cpu: vs onnxruntime %.2e\n", i,
             (long long)x.dims[0], e);
      CHECK(e <= GPU_TEST_TOL);
    }
    free(xb);
    free(wb);
  }
  dml_rt_session_release(cpu);
  dml_rt_model_release(m);
}

/* dense_block on Vulkan: the saved pairs (against onnxruntime and the CPU),
 * then random inputs against the CPU at batch 1, 3, 16 and 64. */
static void test_dense_block_vulkan(void) {
  static const int64_t batches[] = {1, 3, 16, 64};
  char dir[1024];
  dml_rt_model_t *m = load_graph("dense_block", "cpu,vulkan");
  dml_rt_session_t *cpu, *vk;
  gpu_test_open(m, "vulkan", &cpu, &vk);
  gpu_test_check_saved("dense_block", graph_path("", dir, sizeof dir), "dense_block", 2,
                       cpu, vk, 1);
  gpu_test_seed(23);
  for (int i = 0; cpu && vk && i < 4; i++) {
    double e = gpu_test_compare_at(m, cpu, vk, batches[i]);
    printf("dense_block, random input             batch %3lld: max scaled error %.2e\n",
           (long long)batches[i], e);
    CHECK(e <= GPU_TEST_TOL);
  }
  gpu_test_close(m, cpu, vk);
}

/* The forms of tests/gpu_graph_forms.h at batch 1, 3 and 16. */
static void test_graph_forms(void) {
  gpu_graph_forms(vk_check_form);
}

int main(void) {
  RUN(test_dense_block_cpu);
  dml_rt_device_info_t d[16];
  uint32_t n = 0;
  if (gpu_test_skip(dml_rt_vulkan_devices(d, 16, &n), "no Vulkan device")) {
    int rc = dml_test_finish(); /* the CPU part's failures still fail */
    return rc ? rc : 77;
  }
  RUN(test_graph_forms);
  RUN(test_dense_block_vulkan);
  return dml_test_finish();
}
