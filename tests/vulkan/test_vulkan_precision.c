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

/* ---- the 16-bit Conv, pool and normalization kernels ---- */

/* Compiles tests/vulkan/precision/<name>.onnx (gen_precision_models.py)
 * for `targets` with `precision` (NULL: f32), the kernels printed into
 * `print` (may be NULL); NULL on failure (the status checked). */
static void *compile_local(const char *name, const char *targets, const char *precision,
                           FILE *print, size_t *out_size) {
  char path[1024], rel[256];
  snprintf(rel, sizeof rel, "tests/vulkan/precision/%s.onnx", name);
  size_t len = 0;
  void *onnx =
      dml_test_read_file(dml_test_path("DMLC_SOURCE_DIR", rel, path, sizeof path), &len);
  CHECK(onnx != NULL);
  if (!onnx) return NULL;
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.targets = targets;
  o.precision = precision;
  o.print_kernels = print;
  if (strstr(targets, "cuda")) o.cuda_arch = "ptx";
  void *bytes = NULL;
  size_t n = 0;
  CHECK_OK(dml_compile_onnx_memory(onnx, len, NULL, rel, &o, &bytes, &n, NULL));
  free(onnx);
  *out_size = n;
  return bytes;
}

/* x of dims `dims` (rank 3 or 4), values in [-2, 2) from an LCG. */
static float *lcg_input(const int64_t *dims, int32_t rank, uint32_t seed,
                        dml_tensor_t *x) {
  int64_t n = dml_dims_numel(dims, rank);
  float *d = (float *)malloc((size_t)n * sizeof(float));
  uint32_t st = seed * 2654435761u + 1u;
  for (int64_t i = 0; d && i < n; i++) {
    st = st * 1664525u + 1013904223u;
    d[i] = (float)((st >> 8) * (4.0 / 16777216.0) - 2.0);
  }
  memset(x, 0, sizeof *x);
  x->dtype = DML_DTYPE_F32;
  x->rank = rank;
  memcpy(x->dims, dims, sizeof(int64_t) * (size_t)rank);
  x->data = d;
  return d;
}

/* Runs `x` through session `s`; the output copied into *out_data. */
static dml_tensor_t run_copy(dml_rt_session_t *s, const dml_tensor_t *x,
                             float **out_data) {
  dml_tensor_t y;
  memset(&y, 0, sizeof y);
  *out_data = NULL;
  CHECK_OK(dml_rt_session_set_input(s, 0, x));
  CHECK_OK(dml_rt_session_run(s));
  CHECK_OK(dml_rt_session_get_output(s, 0, &y));
  CHECK(y.dtype == DML_DTYPE_F32);
  int64_t n = dml_dims_numel(y.dims, y.rank);
  *out_data = (float *)malloc((size_t)(n ? n : 1) * sizeof(float));
  if (*out_data && y.data) memcpy(*out_data, y.data, (size_t)n * sizeof(float));
  y.data = *out_data;
  return y;
}

/* `name` compiled with `precision` for cpu,vulkan, run on lavapipe at
 * batches 1, 2 and 7, against the f32 CPU package of the same model: the
 * norm-wise error max|got - f32| / max(1, max|f32|) within `tol`. */
static void check_local(const char *name, const int64_t *dims, int32_t rank,
                        const char *precision, double tol) {
  size_t n32 = 0, n16 = 0;
  void *b32 = compile_local(name, "cpu", NULL, NULL, &n32);
  void *b16 = compile_local(name, "cpu,vulkan", precision, NULL, &n16);
  dml_rt_model_t *m32 = NULL, *m16 = NULL;
  if (b32) CHECK_OK(dml_rt_model_load_memory(b32, n32, &m32));
  if (b16) CHECK_OK(dml_rt_model_load_memory(b16, n16, &m16));
  free(b32);
  free(b16);
  dml_rt_session_t *ref = NULL, *cpu = NULL, *vk = NULL;
  if (m32) CHECK_OK(dml_rt_session_create(m32, "cpu", &ref));
  gpu_test_open(m16, "vulkan", &cpu, &vk);
  static const int64_t batches[3] = {1, 2, 7};
  double ev = 0, ec = 0;
  for (int i = 0; ref && cpu && vk && i < 3; i++) {
    int64_t d[4];
    memcpy(d, dims, sizeof(int64_t) * (size_t)rank);
    d[0] = batches[i];
    dml_tensor_t x;
    float *xd = lcg_input(d, rank, (uint32_t)(i + 1), &x);
    float *yr = NULL, *yv = NULL, *yc = NULL;
    dml_tensor_t want = run_copy(ref, &x, &yr);
    dml_tensor_t gv = run_copy(vk, &x, &yv), gc = run_copy(cpu, &x, &yc);
    double e = yr && yv ? gpu_test_normwise_err(&gv, &want) : 1e9;
    if (!(e <= ev)) ev = e;
    e = yr && yc ? gpu_test_normwise_err(&gc, &want) : 1e9;
    if (!(e <= ec)) ec = e;
    free(xd);
    free(yr);
    free(yv);
    free(yc);
  }
  if (vk)
    printf(
        "%-10s --precision %-4s: vulkan vs f32 cpu %.2e, cpu (16-bit graph) vs f32 cpu "
        "%.2e (tolerance %.0e; %u kernels)\n",
        name, precision, ev, ec, tol, dml_rt_session_num_kernels(vk));
  CHECK(ev <= tol);
  CHECK(ec <= tol);
  /* dmlc check (runtime/rt_check.c) passes every kernel of the package
   * within its 16-bit tolerance (a GEMM rounded to 16 bits inside a kernel
   * whose fused Cast writes f32 counts as 16-bit) */
  dml_rt_check_report_t *rep = NULL;
  if (m16) CHECK_OK(dml_rt_check(m16, "vulkan", NULL, &rep));
  if (rep) {
    for (uint32_t k = 0; k < rep->n_kernels; k++)
      if (rep->kernels[k].worst > rep->kernels[k].tolerance)
        printf("  dmlc check: %s %.3g > %.3g\n", rep->kernels[k].name,
               rep->kernels[k].worst, rep->kernels[k].tolerance);
    CHECK(rep->n_failed == 0);
  }
  dml_rt_check_report_free(rep);
  dml_rt_session_release(ref);
  dml_rt_model_release(m32);
  gpu_test_close(m16, cpu, vk);
}

static void test_cnn_and_layernorm(void) {
  static const int64_t cnn[4] = {1, 3, 20, 20}, ln[3] = {1, 6, 32};
  check_local("cnn_small", cnn, 4, "f16", 1e-2);
  check_local("cnn_small", cnn, 4, "bf16", 4e-2);
  check_local("ln_block", ln, 3, "f16", 1e-2);
  check_local("ln_block", ln, 3, "bf16", 4e-2);
}

/* The kernels themselves are 16-bit: with --precision f16 every conv,
 * pool and normalization kernel of cnn_small reads f16 words (the printed
 * kernel IR's `:f16[` loads), and no kernel of the f32 compile does. */
static void test_kernels_are_f16(void) {
  static const char *const prec[2] = {NULL, "f16"};
  for (int k = 0; k < 2; k++) {
    char *text = NULL;
    size_t tl = 0, n = 0;
    FILE *f = open_memstream(&text, &tl);
    CHECK(f != NULL);
    if (!f) return;
    void *b = compile_local("cnn_small", "cpu,vulkan", prec[k], f, &n);
    fclose(f);
    free(b);
    int convs = 0, half_convs = 0;
    /* one kernel per "kernel " header line; its body up to the next */
    for (char *kp = text ? strstr(text, "kernel ") : NULL; kp;) {
      char *next = strstr(kp + 7, "\nkernel ");
      size_t len = next ? (size_t)(next - kp) : strlen(kp);
      int is_conv = 0, is_half = 0;
      for (size_t i = 0; i + 5 < len; i++) {
        if (!strncmp(kp + i, "Conv", 4)) is_conv = 1;
        if (!strncmp(kp + i, ":f16[", 5)) is_half = 1;
      }
      convs += is_conv;
      half_convs += is_conv && is_half;
      kp = next ? next + 1 : NULL;
    }
    printf("cnn_small %s: %d conv kernels, %d of them reading f16\n",
           prec[k] ? prec[k] : "f32", convs, half_convs);
    CHECK(convs >= 3);
    CHECK(half_convs == (prec[k] ? convs : 0));
    free(text);
  }
}

/* The cuda target renders the 16-bit Conv, pool and normalization kernels
 * too (clang-16 to PTX, as tests/codegen does). */
static void test_cuda_cnn_compiles(void) {
  static const char *const names[2] = {"cnn_small", "ln_block"};
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 2; k++) {
      size_t n = 0;
      void *b = compile_local(names[i], "cpu,cuda", k ? "bf16" : "f16", NULL, &n);
      CHECK(b != NULL && n > 0);
      free(b);
    }
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
  RUN(test_cuda_cnn_compiles);
  RUN(test_kernels_are_f16);
  dml_rt_device_info_t d[16];
  uint32_t n = 0;
  if (gpu_test_skip(dml_rt_vulkan_devices(d, 16, &n), "no Vulkan device")) return 77;
  RUN(test_weights_halve);
  RUN(test_reference_models);
  RUN(test_cnn_and_layernorm);
  return dml_test_finish();
}
