/* gen_cuda_packages.c — writes the packages tests/cuda/test_cuda.c runs on a
 * CUDA device (it links the runtime only, so it also runs on GPU machines
 * that cannot build the compiler): every kernel form of the scheduler (the
 * IR cases of tests/vulkan) compiled for cpu,cuda; the reference models
 * (ref_<name>.dmlpkg); fashion_mlp with PTX only and with an sm_80 cubin
 * only beside its PTX (the driver's PTX fall-back on other architectures);
 * a cpu-only package; and the benchmark packages of bench/cuda (a large
 * fused elementwise kernel, a 4096^3 GEMM).
 *   gen_cuda_packages OUT_DIR [--no-bench]
 * Exit status 0 when every package was written. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "codegen_test_util.h"
#include "dml_codegen.h"

static const char *g_dir;

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

static void write_bytes(const char *name, const void *bytes, size_t n) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", g_dir, name);
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (!f) return;
  CHECK(fwrite(bytes, 1, n, f) == n);
  CHECK(fclose(f) == 0);
  printf("wrote %s (%zu bytes)\n", path, n);
}

/* Compiles IR `text` for `targets` (cuda_arch as --cuda-arch) into
 * OUT_DIR/<name>.dmlpkg. */
static void write_ir(const char *name, const char *text, const char *targets,
                     const char *cuda_arch) {
  size_t n = 0;
  void *bytes = cg_package(text, NULL, &n);
  if (!bytes) {
    fprintf(stderr, "  (%s)\n", name);
    return;
  }
  CHECK_OK(dml_compile_add_kernels_arch(targets, cuda_arch, NULL, &bytes, &n));
  char file[256];
  snprintf(file, sizeof file, "%s.dmlpkg", name);
  write_bytes(file, bytes, n);
  free(bytes);
}

static int g_case;
/* The name of each case's package: ops_<index>_<first word>. */
static void write_case(const char *what, const char *text, const int64_t *batches, int nb,
                       uint32_t want_kernels) {
  (void)batches, (void)nb;
  char name[128], word[32];
  size_t k = 0;
  for (; what[k] && what[k] != ' ' && what[k] != '+' && what[k] != ',' && k < 31; k++)
    word[k] = what[k];
  word[k] = 0;
  snprintf(name, sizeof name, "ops_%d_%s_k%u", g_case++, word, want_kernels);
  write_ir(name, text, "cpu,cuda", NULL);
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
  write_case("gemm+epilogue, softmax", text, k_batches, 3, 4);
  free(w), free(b), free(sc);
}

static void test_elementwise_broadcast(void) {
  char *b = dense(4, 1.0, -1.0), *c = dense(3, 1.0, 0.5);
  char text[8192];
  snprintf(text, sizeof text,
           "sym batch <= 16\n"
           "global @b : f32[4] = %s\n"
           "global @c : f32[3,1] = %s\n"
           "global @lo : f32[] = dense<[-0.5]>\n"
           "global @hi : f32[] = dense<[0.75]>\n"
           "func @forward(%%x: f32[batch,3,4], %%y: f32[batch,3,4]) -> (f32[batch,3,4], "
           "f32[batch,3,4]) {\n"
           "  %%a = Add(%%x, @b) : f32[batch,3,4]\n"
           "  %%m = Mul(%%a, @c) : f32[batch,3,4]\n"
           "  %%s = Sigmoid(%%m) : f32[batch,3,4]\n"
           "  %%mx = Max(%%s, %%y, %%a) : f32[batch,3,4]\n"
           "  %%cl = Clip(%%mx, @lo, @hi) : f32[batch,3,4]\n"
           "  %%lr = LeakyRelu(%%m) {alpha = 0.1} : f32[batch,3,4]\n"
           "  %%ab = Abs(%%lr) : f32[batch,3,4]\n"
           "  %%sq = Sqrt(%%ab) : f32[batch,3,4]\n"
           "  %%d = Div(%%sq, @c) : f32[batch,3,4]\n"
           "  %%sub = Sub(%%d, %%cl) : f32[batch,3,4]\n"
           "  %%hs = HardSigmoid(%%sub) : f32[batch,3,4]\n"
           "  %%sp = Softplus(%%y) : f32[batch,3,4]\n"
           "  %%pw = Pow(%%sp, @c) : f32[batch,3,4]\n"
           "  %%o = Add(%%hs, %%pw) : f32[batch,3,4]\n"
           "  return %%o, %%cl\n}\n",
           b, c);
  write_case("elementwise chain+broadcast", text, k_batches, 3, 2);
  free(b), free(c);
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
  write_case("matmul 3-D+residual, gemm^T", text, k_batches, 3, 2);
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
  write_case("reductions, softmax axis 1", text, k_batches, 3, 5);
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
  write_case("conv+bn+relu, pools", text, k_batches, 3, 8);
  free(w1), free(b1), free(w2), free(sc), free(bb), free(mu), free(var);
}

/* A reference model (../shared/models/<name>.onnx) for cpu,cuda. */
static void write_model(const char *name, const char *file, const char *cuda_arch) {
  char model[1024], rel[256];
  snprintf(rel, sizeof rel, "models/%s.onnx", name);
  dml_test_path("DMLC_SHARED_DIR", rel, model, sizeof model);
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.targets = "cpu,cuda";
  o.cuda_arch = cuda_arch;
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
  if (bytes) write_bytes(file, bytes, n);
  free(bytes);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: gen_cuda_packages OUT_DIR [--no-bench]\n");
    return 2;
  }
  g_dir = argv[1];
  mkdir(g_dir, 0755);
  int bench = !(argc > 2 && !strcmp(argv[2], "--no-bench"));
  RUN(test_elementwise_broadcast);
  RUN(test_mlp_epilogues);
  RUN(test_matmul_gemm_forms);
  RUN(test_reductions);
  RUN(test_conv_pool);
  write_model("fashion_mlp", "ref_fashion_mlp.dmlpkg", NULL);
  write_model("lenet5", "ref_lenet5.dmlpkg", NULL);
  write_model("resnet_small", "ref_resnet_small.dmlpkg", NULL);
  write_model("fashion_mlp", "arch_ptx_fashion_mlp.dmlpkg", "ptx");
  if (dml_codegen_cuda_ptxas())
    write_model("fashion_mlp", "arch_sm80_fashion_mlp.dmlpkg", "sm_80");
  else
    printf("ptxas not found: arch_sm80_fashion_mlp.dmlpkg not written\n");
  write_ir("nokernels",
           "func @forward(%x: f32[4]) -> (f32[4]) {\n  %r = Relu(%x) : f32[4]\n"
           "  return %r\n}\n",
           "cpu", NULL);
  if (bench) {
    /* 2^26 elements: 256 MiB read and 256 MiB written by one fused kernel */
    write_ir("bench_elementwise",
             "global @a : f32[] = dense<[1.5]>\nglobal @b : f32[] = dense<[-0.25]>\n"
             "func @forward(%x: f32[67108864]) -> (f32[67108864]) {\n"
             "  %m = Mul(%x, @a) : f32[67108864]\n  %s = Add(%m, @b) : f32[67108864]\n"
             "  %r = Relu(%s) : f32[67108864]\n  return %r\n}\n",
             "cpu,cuda", NULL);
    write_ir(
        "bench_gemm4096",
        "func @forward(%a: f32[4096,4096], %b: f32[4096,4096]) -> (f32[4096,4096]) {\n"
        "  %c = MatMul(%a, %b) : f32[4096,4096]\n  return %c\n}\n",
        "cpu,cuda", NULL);
  }
  return dml_test_finish();
}
