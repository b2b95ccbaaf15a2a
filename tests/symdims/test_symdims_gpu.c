/*
 * test_symdims_gpu.c — symbolic image sizes on the GPU targets: the
 * fully-convolutional fixtures of tests/symdims (symbolic N, H, W: Conv,
 * MaxPool, AveragePool, GlobalAveragePool, Gemm, Resize; a feature pyramid
 * over sizes that are multiples of 8) compiled once for Vulkan
 * and run on the default Vulkan device (lavapipe in CI) at several sizes
 * within the bounds, against onnxruntime's saved outputs within 1e-4
 * scaled; the window kernels read H, W and the derived output sizes from
 * the run-time symbol values (push constants). Attention over a symbolic
 * sequence (attn: [N,2,S,S] scores, one symbol in two dims; Softmax along
 * S; MatMul with K = S) runs at S = 1, 7 and 33. A dim_param "2*h"
 * (pixel_unshuffle as torch exports it) runs at two sizes. CUDA: the same packages
 * compile (clang-16 to PTX; no device here). Skips (77) without a Vulkan device after the
 * CUDA part.
 */
#include "dml_codegen.h"
#include "gpu_test_util.h"
#include "symdims_util.h"

static void run_cases_r(const char *model, const dml_onnx_dim_bound_t *b, size_t nb,
                        const dml_onnx_dim_range_t *r, size_t nr, const char *const *tags,
                        int n_tags) {
  dml_rt_model_t *m = compile_r(model, b, nb, r, nr, "vulkan");
  dml_rt_session_t *s = NULL;
  if (m) CHECK_OK(dml_rt_session_create(m, "vulkan", &s));
  if (!s) goto done;
  for (int i = 0; i < n_tags; i++) check_case(s, model, tags[i]);
  check_case(s, model, tags[0]); /* the first size again (a cached recording) */
  float *z = NULL;
  int64_t big[4] = {1, 3, 72, 24}; /* H above its bound (H/8 above 8 for fpn) */
  CHECK_ERROR(set_zeros(s, 4, big, &z), DML_STATUS_OUT_OF_RANGE,
              "exceeds the compiled bound");
  free(z);
done:
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

static void run_cases(const char *model, const dml_onnx_dim_bound_t *b, size_t nb,
                      const char *const *tags, int n_tags) {
  run_cases_r(model, b, nb, NULL, 0, tags, n_tags);
}

static void test_vulkan_audio(void) {
  dml_onnx_dim_bound_t b[] = {{"batch", 4}, {"samples", 8000}};
  const char *tags[] = {"c", "a", "b"};
  dml_rt_model_t *m = compile("audio", b, 2, "vulkan");
  dml_rt_session_t *s = NULL;
  if (m) CHECK_OK(dml_rt_session_create(m, "vulkan", &s));
  for (int i = 0; s && i < 3; i++) check_case(s, "audio", tags[i]);
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

static void test_vulkan_fcn(void) {
  dml_onnx_dim_bound_t b[] = {{"N", 4}, {"H", 64}, {"W", 64}};
  const char *pool[] = {"c", "a", "b", "d"}, *spatial[] = {"b", "a", "c"};
  run_cases("fcn_pool", b, 3, pool, 4);
  run_cases("fcn_spatial", b, 3, spatial, 3);
  run_cases("upsample", b, 3, spatial, 3);
  /* sizes multiples of 8 (H = 8 * "H/8"): the pyramid's sums meet */
  dml_onnx_dim_range_t r[2] = {{"x", 2, 16, 64, 8}, {"x", 3, 16, 64, 8}};
  run_cases_r("fpn", b, 1, r, 2, spatial, 3);
}

/* attention over a symbolic sequence ([N,2,S,S] scores: one symbol in two
 * dims, Softmax along S, the scores times V with K = S) at S = 33, 1 and 7
 * (N 1, 1, 2), then S = 33 again (a cached recording). */
static void test_vulkan_attention(void) {
  dml_onnx_dim_bound_t b[] = {{"N", 2}, {"S", 40}};
  dml_rt_model_t *m = compile("attn", b, 2, "vulkan");
  dml_rt_session_t *s = NULL;
  if (m) CHECK_OK(dml_rt_session_create(m, "vulkan", &s));
  const char *tags[] = {"c", "a", "b", "c"};
  for (int i = 0; s && i < 4; i++) check_case(s, "attn", tags[i]);
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

/* A dim_param "2*h" (pixel_unshuffle as torch exports it): the dim 2 * h,
 * bounded by --dim-bound 2*h=64, at two sizes within 1e-5 absolute + 1e-5
 * relative of onnxruntime; an odd H and one over the bound are errors. */
static void test_vulkan_symexpr(void) {
  dml_onnx_dim_bound_t b[] = {{"batch", 4}, {"2*h", 64}, {"2*w", 64}};
  dml_rt_model_t *m = compile("pixel_unshuffle", b, 3, "vulkan");
  dml_rt_session_t *s = NULL;
  if (m) CHECK_OK(dml_rt_session_create(m, "vulkan", &s));
  if (s) {
    check_case_tol(s, "pixel_unshuffle", "b", 1, 1e-5, 1e-5);
    check_case_tol(s, "pixel_unshuffle", "a", 1, 1e-5, 1e-5);
    float *z = NULL;
    int64_t odd[4] = {1, 3, 63, 64};
    CHECK_ERROR(set_zeros(s, 4, odd, &z), DML_STATUS_INVALID_ARGUMENT,
                "dim 2 is 63, not a multiple of 2");
    free(z);
    int64_t big[4] = {1, 3, 66, 64};
    CHECK_ERROR(set_zeros(s, 4, big, &z), DML_STATUS_OUT_OF_RANGE,
                "h 33 exceeds the compiled bound 32");
    free(z);
  }
  dml_rt_session_release(s);
  dml_rt_model_release(m);
  dml_onnx_dim_range_t r[] = {{"x", 0, 2, 64, 2}};
  m = compile_r("reshape_pairs", NULL, 0, r, 1, "vulkan");
  s = NULL;
  if (m) CHECK_OK(dml_rt_session_create(m, "vulkan", &s));
  if (s) {
    check_case_tol(s, "reshape_pairs", "a", 1, 1e-30, 0);
    check_case_tol(s, "reshape_pairs", "b", 1, 1e-30, 0);
  }
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

static void test_cuda_compiles(void) {
  dml_onnx_dim_bound_t b[] = {{"N", 4}, {"H", 64}, {"W", 64}};
  CHECK_OK(compile_status("fcn_pool", b, 3, NULL, 0, "cuda", NULL));
  CHECK_OK(compile_status("fcn_spatial", b, 3, NULL, 0, "cuda", NULL));
  CHECK_OK(compile_status("upsample", b, 3, NULL, 0, "cuda", NULL));
  dml_onnx_dim_bound_t ba[] = {{"batch", 4}, {"samples", 8000}};
  CHECK_OK(compile_status("audio", ba, 2, NULL, 0, "cuda", NULL));
  dml_onnx_dim_bound_t bt[] = {{"N", 2}, {"S", 40}};
  CHECK_OK(compile_status("attn", bt, 2, NULL, 0, "cuda,metal", NULL));
  dml_onnx_dim_bound_t bp[] = {{"batch", 4}, {"2*h", 64}, {"2*w", 64}};
  CHECK_OK(compile_status("pixel_unshuffle", bp, 3, NULL, 0, "cuda,metal", NULL));
}

int main(void) {
  RUN(test_cuda_compiles);
  dml_rt_device_info_t d[16];
  uint32_t n = 0;
  if (gpu_test_skip(dml_rt_vulkan_devices(d, 16, &n), "no Vulkan device")) {
    dml_test_finish();
    return 77;
  }
  RUN(test_vulkan_fcn);
  RUN(test_vulkan_audio);
  RUN(test_vulkan_attention);
  RUN(test_vulkan_symexpr);
  return dml_test_finish();
}
