/* test_vulkan.c — the Vulkan backend against the CPU reference: every kernel
 * form the scheduler emits (elementwise chains with broadcasting, Gemm and
 * MatMul with epilogues, reductions, softmax) at several batch sizes, the
 * reference models (fashion_mlp, lenet5, resnet_small) against their saved
 * outputs, and the errors
 * (no kernels in the package, no such device, ops a target lacks).
 * Tolerance: |vulkan - cpu| <= 1e-4 * max(1, |cpu|) (f32 sums in another
 * order, and the GPU's exp/tanh/log). Skips (77) without a Vulkan device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen_test_util.h"
#include "dml_npy.h"
#include "dml_rt.h"

#define TOL 1e-4

static uint64_t g_rng = 0x243F6A8885A308D3ull;
static float frand(void) {
  g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
  return (float)((double)(g_rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

/* "dense<[v, v, ...]>" with n random values in [lo, lo + 2*scale). */
static char *dense(int n, double scale, double lo) {
  char *b = (char *)malloc((size_t)n * 24 + 16);
  size_t k = (size_t)sprintf(b, "dense<[");
  for (int i = 0; i < n; i++)
    k += (size_t)sprintf(b + k, "%s%.6f", i ? ", " : "", lo + scale * (frand() + 1.0));
  sprintf(b + k, "]>");
  return b;
}

static double max_err(const dml_tensor_t *a, const dml_tensor_t *b) {
  if (a->rank != b->rank || a->dtype != DML_DTYPE_F32 || b->dtype != DML_DTYPE_F32)
    return 1e9;
  for (int32_t d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d]) return 1e9;
  int64_t n = dml_dims_numel(a->dims, a->rank);
  double worst = 0;
  for (int64_t i = 0; i < n; i++) {
    double x = ((const float *)a->data)[i], y = ((const float *)b->data)[i];
    double e = fabs(x - y) / fmax(1.0, fabs(y));
    if (!(e <= worst)) worst = isnan(e) ? 1e9 : e;
  }
  return worst;
}

/* Runs `m` on cpu and vulkan at symbol value `batch` on random inputs and
 * checks every output. Returns the largest scaled error. */
static double compare_at(dml_rt_model_t *m, dml_rt_session_t *cpu, dml_rt_session_t *vk,
                         int64_t batch) {
  dml_rt_session_clear_inputs(cpu);
  dml_rt_session_clear_inputs(vk);
  for (uint32_t i = 0; i < dml_rt_model_num_inputs(m); i++) {
    dml_rt_io_info_t io;
    CHECK_OK(dml_rt_model_input_info(m, i, &io));
    dml_tensor_t t;
    memset(&t, 0, sizeof t);
    t.dtype = io.dtype;
    t.rank = io.rank;
    for (int32_t d = 0; d < io.rank; d++)
      t.dims[d] = io.dim_symbol[d] ? io.dim_multiplier[d] * batch : io.dims[d];
    int64_t n = dml_dims_numel(t.dims, t.rank);
    float *x = (float *)malloc((size_t)(n ? n : 1) * sizeof(float));
    for (int64_t k = 0; k < n; k++) x[k] = 2.0f * frand();
    t.data = x;
    CHECK_OK(dml_rt_session_set_input(cpu, i, &t));
    CHECK_OK(dml_rt_session_set_input(vk, i, &t));
    free(x);
  }
  CHECK_OK(dml_rt_session_run(cpu));
  CHECK_OK(dml_rt_session_run(vk));
  double worst = 0;
  for (uint32_t o = 0; o < dml_rt_model_num_outputs(m); o++) {
    dml_tensor_t a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    CHECK_OK(dml_rt_session_get_output(vk, o, &a));
    CHECK_OK(dml_rt_session_get_output(cpu, o, &b));
    double e = max_err(&a, &b);
    if (e > TOL)
      fprintf(stderr, "  output %u at batch %lld: error %.3g\n", o, (long long)batch, e);
    if (e > worst) worst = e;
  }
  return worst;
}

/* Compiles `text` for vulkan and checks it at each batch in `batches`. */
static void check_module(const char *what, const char *text, const int64_t *batches,
                         int nb, uint32_t want_kernels) {
  size_t n = 0;
  void *bytes = cg_package(text, "cpu,vulkan", &n);
  if (!bytes) {
    fprintf(stderr, "  (%s)\n", what);
    return;
  }
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *cpu = NULL, *vk = NULL;
  CHECK_OK(dml_rt_model_load_memory(bytes, n, &m));
  free(bytes);
  if (m) CHECK_OK(dml_rt_session_create(m, "cpu", &cpu));
  if (m) CHECK_OK(dml_rt_session_create(m, "vulkan", &vk));
  if (cpu && vk) {
    CHECK(dml_rt_session_num_kernels(vk) == want_kernels);
    for (int i = 0; i < nb; i++) {
      double e = compare_at(m, cpu, vk, batches[i]);
      printf("%-28s batch %3lld: %u kernels, max scaled error %.2e\n", what,
             (long long)batches[i], dml_rt_session_num_kernels(vk), e);
      CHECK(e <= TOL);
    }
    for (uint32_t k = 0; k < dml_rt_session_num_kernels(vk); k++) {
      dml_rt_kernel_info_t ki;
      CHECK_OK(dml_rt_session_kernel_info(vk, k, &ki));
      CHECK(ki.n_nodes >= 1 && ki.name && ki.flops >= 0 && ki.bytes > 0);
    }
  }
  dml_rt_session_release(cpu);
  dml_rt_session_release(vk);
  dml_rt_model_release(m);
}

static const int64_t k_batches[] = {1, 3, 16};

static void test_mlp_epilogues(void) {
  char *w = dense(48, 0.5, -0.5), *b = dense(6, 0.5, -0.5), *sc = dense(6, 1.0, 0.5);
  char text[8192];
  snprintf(
      text, sizeof text,
      "sym batch <= 16\n"
      "global @w : f32[8,6] param = %s\n"
      "global @b : f32[6] param = %s\n"
      "global @s : f32[6] = %s\n"
      "func @forward(%%x: f32[batch,8]) -> (f32[batch,6], f32[batch,6], f32[batch,1], "
      "f32[batch,6]) {\n"
      "  %%g = Gemm(%%x, @w, @b) : f32[batch,6]\n"
      "  %%r = Relu(%%g) : f32[batch,6]\n"
      "  %%m = Mul(%%r, @s) : f32[batch,6]\n"
      "  %%t = Tanh(%%m) : f32[batch,6]\n"
      "  %%sm = Softmax(%%t) {axis = 1} : f32[batch,6]\n"
      "  %%red = ReduceMean(%%m) {axes = [1], keepdims = 1} : f32[batch,1]\n"
      "  %%e = Exp(%%red) : f32[batch,1]\n"
      "  %%ls = LogSoftmax(%%r) {axis = -1} : f32[batch,6]\n"
      "  return %%sm, %%t, %%e, %%ls\n}\n",
      w, b, sc);
  check_module("gemm+epilogue, softmax", text, k_batches, 3, 4);
  free(w), free(b), free(sc);
}

/* A chain over f32[batch,3,w]; w = 4096 makes the kernel large enough for
 * the scheduler's unrolled form (several elements per invocation). */
static void elementwise_chain(const char *what, int w) {
  char *b = dense(w, 1.0, -1.0), *c = dense(3, 1.0, 0.5);
  size_t cap = 8192 + strlen(b);
  char *text = (char *)malloc(cap);
  if (!text) {
    CHECK(0);
    free(b), free(c);
    return;
  }
  snprintf(
      text, cap,
      "sym batch <= 16\n"
      "global @b : f32[%d] = %s\n"
      "global @c : f32[3,1] = %s\n"
      "global @lo : f32[] = dense<[-0.5]>\n"
      "global @hi : f32[] = dense<[0.75]>\n"
      "func @forward(%%x: f32[batch,3,%d], %%y: f32[batch,3,%d]) -> (f32[batch,3,%d], "
      "f32[batch,3,%d]) {\n"
      "  %%a = Add(%%x, @b) : f32[batch,3,%d]\n"
      "  %%m = Mul(%%a, @c) : f32[batch,3,%d]\n"
      "  %%s = Sigmoid(%%m) : f32[batch,3,%d]\n"
      "  %%mx = Max(%%s, %%y, %%a) : f32[batch,3,%d]\n"
      "  %%cl = Clip(%%mx, @lo, @hi) : f32[batch,3,%d]\n"
      "  %%lr = LeakyRelu(%%m) {alpha = 0.1} : f32[batch,3,%d]\n"
      "  %%ab = Abs(%%lr) : f32[batch,3,%d]\n"
      "  %%sq = Sqrt(%%ab) : f32[batch,3,%d]\n"
      "  %%d = Div(%%sq, @c) : f32[batch,3,%d]\n"
      "  %%sub = Sub(%%d, %%cl) : f32[batch,3,%d]\n"
      "  %%hs = HardSigmoid(%%sub) : f32[batch,3,%d]\n"
      "  %%sp = Softplus(%%y) : f32[batch,3,%d]\n"
      "  %%pw = Pow(%%sp, @c) : f32[batch,3,%d]\n"
      "  %%o = Add(%%hs, %%pw) : f32[batch,3,%d]\n"
      "  return %%o, %%cl\n}\n",
      w, b, c, w, w, w, w, w, w, w, w, w, w, w, w, w, w, w, w, w, w);
  check_module(what, text, k_batches, 3, 2);
  free(text), free(b), free(c);
}

static void test_elementwise_broadcast(void) {
  elementwise_chain("elementwise chain+broadcast", 4);
}

static void test_elementwise_unrolled(void) {
  elementwise_chain("elementwise chain+broadcast, unrolled", 4096);
}

static void test_matmul_gemm_forms(void) {
  char *w = dense(42, 0.5, -0.5), *w2 = dense(30, 0.5, -0.5), *c = dense(5, 1.0, -1.0);
  char text[8192];
  snprintf(
      text, sizeof text,
      "sym batch <= 16\n"
      "global @w : f32[7,6] = %s\n"
      "global @w2 : f32[5,6] = %s\n"
      "global @c : f32[5] = %s\n"
      "func @forward(%%x: f32[batch,5,7], %%r: f32[batch,5,6], %%z: f32[6,batch]) -> "
      "(f32[batch,5,6], f32[batch,5]) {\n"
      "  %%mm = MatMul(%%x, @w) : f32[batch,5,6]\n"
      "  %%res = Add(%%mm, %%r) : f32[batch,5,6]\n"
      "  %%o = Relu(%%res) : f32[batch,5,6]\n"
      "  %%g = Gemm(%%z, @w2, @c) {transA = 1, transB = 1, alpha = 0.5, beta = 2.0} : "
      "f32[batch,5]\n"
      "  return %%o, %%g\n}\n",
      w, w2, c);
  check_module("matmul 3-D+residual, gemm^T", text, k_batches, 3, 2);
  free(w), free(w2), free(c);
}

static void test_reductions(void) {
  const char *text =
      "sym batch <= 16\n"
      "func @forward(%x: f32[batch,4,5]) -> (f32[4], f32[batch,1,5], f32[batch,4], "
      "f32[batch,4,1], f32[batch,4,5]) {\n"
      "  %s = ReduceSum(%x) {axes = [0, 2], keepdims = 0} : f32[4]\n"
      "  %mx = ReduceMax(%x) {axes = [1], keepdims = 1} : f32[batch,1,5]\n"
      "  %mn = ReduceMin(%x) {axes = [-1], keepdims = 0} : f32[batch,4]\n"
      "  %me = ReduceMean(%x) {axes = [2], keepdims = 1} : f32[batch,4,1]\n"
      "  %ng = Neg(%me) : f32[batch,4,1]\n"
      "  %sm = Softmax(%x) {axis = 1} : f32[batch,4,5]\n"
      "  return %s, %mx, %mn, %ng, %sm\n}\n";
  check_module("reductions, softmax axis 1", text, k_batches, 3, 5);
}

/* Conv (groups, strides, dilations, pads, SAME_UPPER) with bias and a
 * BatchNormalization + Relu epilogue, MaxPool, AveragePool with and without
 * the pads counted, global pools. */
static void test_conv_pool(void) {
  char *w1 = dense(4 * 2 * 3 * 3, 0.3, -0.3), *b1 = dense(4, 0.5, -0.5);
  char *w2 = dense(6 * 2 * 2 * 2, 0.3, -0.3), *sc = dense(6, 0.5, 0.5),
       *bb = dense(6, 0.5, -0.5);
  char *mu = dense(6, 0.2, -0.2), *var = dense(6, 0.5, 0.5);
  char text[16384];
  snprintf(text, sizeof text,
           "sym batch <= 16\n"
           "global @w1 : f32[4,2,3,3] = %s\n"
           "global @b1 : f32[4] = %s\n"
           "global @w2 : f32[6,2,2,2] = %s\n"
           "global @sc : f32[6] = %s\n"
           "global @bb : f32[6] = %s\n"
           "global @mu : f32[6] = %s\n"
           "global @var : f32[6] = %s\n"
           "func @forward(%%x: f32[batch,2,9,8]) -> (f32[batch,4,5,4], f32[batch,6,4,3], "
           "f32[batch,4,3,2], f32[batch,4,3,2], f32[batch,4,3,3], f32[batch,6,1,1], "
           "f32[batch,4,1,1]) {\n"
           "  %%c1 = Conv(%%x, @w1, @b1) {pads = [1, 1, 1, 1], strides = [2, 2]} : "
           "f32[batch,4,5,4]\n"
           "  %%c2 = Conv(%%c1, @w2, _) {group = 2, dilations = [2, 1], auto_pad = "
           "\"SAME_UPPER\"} : "
           "f32[batch,6,5,4]\n"
           "  %%bn = BatchNormalization(%%c2, @sc, @bb, @mu, @var) {epsilon = 0.001} : "
           "f32[batch,6,5,4]\n"
           "  %%r = Relu(%%bn) : f32[batch,6,5,4]\n"
           "  %%mp = MaxPool(%%r) {kernel_shape = [2, 2], strides = [1, 1]} : "
           "f32[batch,6,4,3]\n"
           "  %%ap = AveragePool(%%c1) {kernel_shape = [3, 3], pads = [1, 0, 0, 0], "
           "strides = [2, 2]} : "
           "f32[batch,4,3,2]\n"
           "  %%ai = AveragePool(%%c1) {kernel_shape = [3, 3], pads = [1, 0, 0, 0], "
           "strides = [2, 2], "
           "count_include_pad = 1} : f32[batch,4,3,2]\n"
           "  %%m2 = MaxPool(%%c1) {kernel_shape = [3, 2], pads = [1, 1, 1, 1], strides "
           "= [2, 2]} : "
           "f32[batch,4,3,3]\n"
           "  %%ga = GlobalAveragePool(%%r) : f32[batch,6,1,1]\n"
           "  %%gm = GlobalMaxPool(%%c1) : f32[batch,4,1,1]\n"
           "  return %%c1, %%mp, %%ap, %%ai, %%m2, %%ga, %%gm\n}\n",
           w1, b1, w2, sc, bb, mu, var);
  check_module("conv+bn+relu, pools", text, k_batches, 3, 8);
  free(w1), free(b1), free(w2), free(sc), free(bb), free(mu), free(var);
}

/* Compiles reference model `name` (../shared/models) for cpu,vulkan and
 * checks the saved input/output pairs listed in `pairs` on Vulkan against
 * the saved outputs and the CPU. */
static void check_reference_model(const char *name, const int *pairs, int n_pairs,
                                  uint32_t want_kernels) {
  char model[1024], io[1024], rel[256];
  snprintf(rel, sizeof rel, "models/%s.onnx", name);
  dml_test_path("DMLC_SHARED_DIR", rel, model, sizeof model);
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.targets = "cpu,vulkan";
  void *bytes = NULL;
  size_t n = 0;
  FILE *f = fopen(model, "rb");
  CHECK(f != NULL);
  if (!f) return;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *onnx = malloc((size_t)len);
  CHECK(fread(onnx, 1, (size_t)len, f) == (size_t)len);
  fclose(f);
  CHECK_OK(dml_compile_onnx_memory(onnx, (size_t)len, NULL, rel, &o, &bytes, &n, NULL));
  free(onnx);
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *cpu = NULL, *vk = NULL;
  if (bytes) CHECK_OK(dml_rt_model_load_memory(bytes, n, &m));
  free(bytes);
  if (m) CHECK_OK(dml_rt_session_create(m, "cpu", &cpu));
  if (m) CHECK_OK(dml_rt_session_create(m, "vulkan", &vk));
  for (int k = 0; cpu && vk && k < n_pairs; k++) {
    int i = pairs[k];
    dml_tensor_t x, want, a, b;
    void *xb = NULL, *wb = NULL;
    snprintf(rel, sizeof rel, "models/%s_io/input_%d.npy", name, i);
    CHECK_OK(
        dml_npy_read_file(dml_test_path("DMLC_SHARED_DIR", rel, io, sizeof io), &x, &xb));
    snprintf(rel, sizeof rel, "models/%s_io/output_%d.npy", name, i);
    CHECK_OK(dml_npy_read_file(dml_test_path("DMLC_SHARED_DIR", rel, io, sizeof io),
                               &want, &wb));
    if (!xb || !wb) {
      free(xb);
      free(wb);
      continue;
    }
    CHECK_OK(dml_rt_session_set_input(vk, 0, &x));
    CHECK_OK(dml_rt_session_set_input(cpu, 0, &x));
    CHECK_OK(dml_rt_session_run(vk));
    CHECK_OK(dml_rt_session_run(cpu));
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    CHECK_OK(dml_rt_session_get_output(vk, 0, &a));
    CHECK_OK(dml_rt_session_get_output(cpu, 0, &b));
    double e_saved = max_err(&a, &want), e_cpu = max_err(&a, &b);
    printf("%s input_%d (batch %lld): vulkan vs saved %.2e, vs cpu %.2e\n", name, i,
           (long long)x.dims[0], e_saved, e_cpu);
    CHECK(e_saved <= TOL && e_cpu <= TOL);
    free(xb);
    free(wb);
  }
  if (vk) {
    printf("%s on %s: %u kernels\n", name, dml_rt_session_device(vk),
           dml_rt_session_num_kernels(vk));
    CHECK(dml_rt_session_num_kernels(vk) == want_kernels);
  }
  dml_rt_session_release(cpu);
  dml_rt_session_release(vk);
  dml_rt_model_release(m);
}

/* The reference models: every saved pair (batch 1, 2 and 64). */
static void test_fashion_mlp(void) {
  static const int pairs[] = {0, 1, 2};
  check_reference_model("fashion_mlp", pairs, 3, 3);
}
static void test_lenet5(void) {
  static const int pairs[] = {0, 1, 2};
  check_reference_model("lenet5", pairs, 3, 10);
}
static void test_resnet_small(void) {
  static const int pairs[] = {0, 1, 2};
  check_reference_model("resnet_small", pairs, 3, 16);
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
  dml_status_t s = dml_rt_vulkan_devices(d, 16, &n);
  if (s) {
    char *msg = dml_status_format(s);
    printf("SKIP: no Vulkan device: %s\n", msg ? msg : "?");
    free(msg);
    dml_status_free(s);
    return 77;
  }
  int defaults = 0;
  for (uint32_t i = 0; i < n && i < 16; i++) {
    printf("%s: %s (%s), Vulkan %u.%u%s\n", d[i].id, d[i].name, d[i].kind, d[i].api_major,
           d[i].api_minor, d[i].is_default ? " [default]" : "");
    defaults += d[i].is_default;
  }
  CHECK(defaults == 1);
  RUN(test_errors);
  RUN(test_elementwise_broadcast);
  RUN(test_elementwise_unrolled);
  RUN(test_mlp_epilogues);
  RUN(test_matmul_gemm_forms);
  RUN(test_reductions);
  RUN(test_conv_pool);
  RUN(test_fashion_mlp);
  RUN(test_lenet5);
  RUN(test_resnet_small);
  RUN(test_missing_ops);
  return dml_test_finish();
}
