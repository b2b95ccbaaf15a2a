/* gen_cuda_packages.c — writes the packages tests/cuda/test_cuda.c runs on a
 * CUDA device (it links the runtime only, so it also runs on GPU machines
 * that cannot build the compiler): every kernel form of the scheduler (the
 * forms of tests/gpu_test_util.h, which tests/vulkan runs too) compiled for
 * cpu,cuda; the reference models
 * (ref_<name>.dmlpkg); fashion_mlp with PTX only and with an sm_80 cubin
 * only beside its PTX (the driver's PTX fall-back on other architectures);
 * a cpu-only package; and the benchmark packages of bench/cuda (a large
 * fused elementwise kernel, a 4096^3 GEMM); the run-time dims cases of
 * tests/gpu_rtdims_cases.h (rtdims_<index>.dmlpkg).
 *   gen_cuda_packages OUT_DIR [--no-bench | --attn-tc | --conv-tc | --conv-direct]
 * (--attn-tc: the attention forms attn_tc_<i> only, for tests/cuda/attn_emu;
 * --conv-tc: the f16/bf16 implicit-GEMM convolutions conv_tc_<i> only, for
 * tests/cuda/conv_emu; --conv-direct: the direct f16/bf16 convolutions of
 * conv_direct_cases.h with their params.h, for conv_emu/direct_emu.py).
 * Exit status 0 when every package was written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attn_tc_cases.h"
#include "codegen_test_util.h"
#include "conv_direct_cases.h"
#include "conv_tc_cases.h"
#include "dml_codegen.h"
#include "gpu_graph_forms.h"
#include "gpu_ops1_forms.h"
#include "gpu_ops3_forms.h"
#include "gpu_rtdims_cases.h"
#include "gpu_test_ops2.h"
#include "gpu_test_util.h"
#include "gpu_train_case.h"

static const char *g_dir;

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

/* 1 while writing packages with TF32 tensor-core GEMMs (--allow-tf32). */
static int g_tf32;

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
  CHECK_OK(dml_compile_add_kernels_arch(targets, cuda_arch, g_tf32, NULL, &bytes, &n));
  char file[256];
  snprintf(file, sizeof file, "%s.dmlpkg", name);
  write_bytes(file, bytes, n);
  free(bytes);
}

static int g_case;
/* Each kernel form of gpu_test_kernel_forms, gpu_test_ops2_forms,
 * gpu_test_ops1_forms, gpu_test_ops3_forms and gpu_graph_forms
 * (gpu_graph_forms.h), for cpu,cuda, in
 * ops_<index>_<first word of what>_k<want_kernels>.dmlpkg (test_cuda reads the
 * number of kernels from the name). */
static void write_form(const char *what, const char *text, uint32_t want_kernels) {
  char name[128], word[32];
  size_t k = 0;
  for (; what[k] && what[k] != ' ' && what[k] != '+' && what[k] != ',' && k < 31; k++)
    word[k] = what[k];
  word[k] = 0;
  snprintf(name, sizeof name, "ops_%d_%s_k%u", g_case++, word, want_kernels);
  write_ir(name, text, "cpu,cuda", NULL);
}

static void test_kernel_forms(void) {
  gpu_test_kernel_forms(write_form, 0);
  gpu_test_ops2_forms(write_form);
  gpu_test_ops1_forms(write_form);
  gpu_test_ops3_forms(write_form);
  gpu_graph_forms(write_form);
}

/* A reference model (../shared/models/<name>.onnx) for cpu,cuda. */
static void write_model(const char *name, const char *file, const char *cuda_arch) {
  size_t n = 0;
  void *bytes = cg_compile_model(name, "cpu,cuda", cuda_arch, &n);
  if (bytes) write_bytes(file, bytes, n);
  free(bytes);
}

/* The tensor-core attention forms (attn_tc_cases.h): attn_tc_<i>.dmlpkg. */
static void write_attn_tc(void) {
  for (size_t i = 0; i < ATTN_TC_N_CASES; i++) {
    char name[64];
    snprintf(name, sizeof name, "attn_tc_%zu", i);
    write_ir(name, attn_tc_cases[i].ir, "cpu,cuda", NULL);
  }
}

/* The f16/bf16 implicit-GEMM convolutions (conv_tc_cases.h):
 * conv_tc_<i>.dmlpkg, the last one with its weights in globals. */
static void write_conv_tc(void) {
  char name[64];
  for (size_t i = 0; i < CONV_TC_N_CASES; i++) {
    snprintf(name, sizeof name, "conv_tc_%zu", i);
    write_ir(name, conv_tc_cases[i].ir, "cpu,cuda", NULL);
  }
  char *w = gpu_test_dense(64 * 40 * 3 * 3, 0.25, -0.25),
       *b = gpu_test_dense(64, 1.0, -1.0);
  size_t cap = strlen(w) + strlen(b) + 1024;
  char *text = (char *)malloc(cap);
  CHECK(text != NULL);
  if (text) {
    snprintf(text, cap,
             "global @w : f16[64,40,3,3] param = %s\n"
             "global @b : f16[64] param = %s\n"
             "func @forward(%%x: f16[2,40,14,14]) -> (f16[2,64,14,14]) {\n"
             "  %%c = Conv(%%x, @w, @b) {pads = [1, 1, 1, 1]} : f16[2,64,14,14]\n"
             "  %%r = Relu(%%c) : f16[2,64,14,14]\n  return %%r\n}\n",
             w, b);
    snprintf(name, sizeof name, "conv_tc_%zu", CONV_TC_N_CASES);
    write_ir(name, text, "cpu,cuda", NULL);
  }
  free(text), free(w), free(b);
}

/* The direct f16/bf16 convolutions (conv_direct_cases.h):
 * conv_direct_<i>.dmlpkg (--cuda-arch sm_75: no tensor-core form) and
 * conv_direct_<i>.params.h: the case's geometry and the 16-bit word
 * offsets of X, W, B and Y in the arena (their values' package offsets). */
static void write_conv_direct(void) {
  for (size_t i = 0; i < CONV_DIRECT_N_CASES; i++) {
    const conv_direct_case_t *c = &conv_direct_cases[i];
    char name[64];
    snprintf(name, sizeof name, "conv_direct_%zu", i);
    write_ir(name, c->ir, "cpu,cuda", "sm_75");
    size_t n = 0;
    void *bytes = cg_package(c->ir, NULL, &n);
    dml_pkg_t pkg;
    dml_pkg_graph_t *g = NULL;
    if (bytes) CHECK_OK(dml_pkg_parse(bytes, n, &pkg));
    const dml_pkg_section_t *gs = bytes ? dml_pkg_find_section(&pkg, "graph") : NULL;
    if (gs) CHECK_OK(dml_pkg_graph_decode(gs->data, gs->size, 0, &g));
    CHECK(g && g->n_functions >= 1);
    if (g && g->n_functions >= 1) {
      const dml_pkg_function_t *f = &g->functions[0];
      CHECK(f->n_inputs == 2u + (unsigned)c->bias && f->n_outputs == 1);
      const dml_pkg_value_t *v = f->values;
      char text[1024];
      int len = snprintf(
          text, sizeof text,
          "/* %s */\n#define P_N %d\n#define P_C %d\n#define P_H %d\n#define P_W %d\n"
          "#define P_M %d\n#define P_KH %d\n#define P_KW %d\n#define P_OH %d\n"
          "#define P_OW %d\n#define P_SH %d\n#define P_SW %d\n#define P_DH %d\n"
          "#define P_DW %d\n#define P_PH %d\n#define P_PW %d\n#define P_GROUP %d\n"
          "#define P_BIAS %d\n#define P_RESID %d\n#define P_RELU %d\n"
          "#define P_BF16 %d\n#define P_X_OFF %lluu\n#define P_W_OFF %lluu\n"
          "#define P_B_OFF %lluu\n#define P_Y_OFF %lluu\n",
          c->what, c->n, c->c, c->h, c->w, c->m, c->kh, c->kw, c->oh, c->ow, c->sh, c->sw,
          c->dh, c->dw, c->ph, c->pw, c->group, c->bias, c->resid, c->relu,
          v[f->inputs[0]].type.dtype == DML_DTYPE_BF16,
          (unsigned long long)v[f->inputs[0]].offset / 2,
          (unsigned long long)v[f->inputs[1]].offset / 2,
          c->bias ? (unsigned long long)v[f->inputs[2]].offset / 2 : 0ull,
          (unsigned long long)v[f->outputs[0]].offset / 2);
      snprintf(name, sizeof name, "conv_direct_%zu.params.h", i);
      write_bytes(name, text, (size_t)len);
    }
    dml_pkg_graph_release(g);
    free(bytes);
  }
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr,
            "usage: gen_cuda_packages OUT_DIR [--no-bench | --attn-tc | --conv-tc | "
            "--conv-direct]\n");
    return 2;
  }
  g_dir = argv[1];
  mkdir(g_dir, 0755);
  int bench = !(argc > 2 && !strcmp(argv[2], "--no-bench"));
  /* --attn-tc: only the tensor-core attention forms (tests/cuda/attn_emu) */
  int attn_only = argc > 2 && !strcmp(argv[2], "--attn-tc");
  if (attn_only) {
    write_attn_tc();
    return dml_test_finish();
  }
  /* --conv-direct: only the direct f16/bf16 convolutions (direct_emu.py) */
  if (argc > 2 && !strcmp(argv[2], "--conv-direct")) {
    write_conv_direct();
    return dml_test_finish();
  }
  /* --conv-tc: only the f16/bf16 implicit-GEMM convolutions (conv_emu) */
  if (argc > 2 && !strcmp(argv[2], "--conv-tc")) {
    write_conv_tc();
    return dml_test_finish();
  }
  RUN(test_kernel_forms);
  write_model("fashion_mlp", "ref_fashion_mlp.dmlpkg", NULL);
  write_model("lenet5", "ref_lenet5.dmlpkg", NULL);
  write_model("resnet_small", "ref_resnet_small.dmlpkg", NULL);
  write_model("fashion_mlp", "arch_ptx_fashion_mlp.dmlpkg", "ptx");
  if (dml_codegen_cuda_ptxas())
    write_model("fashion_mlp", "arch_sm80_fashion_mlp.dmlpkg", "sm_80");
  else
    printf("ptxas not found: arch_sm80_fashion_mlp.dmlpkg not written\n");
  /* GEMMs of random f16/bf16 operands (test_cuda: within one rounding
   * step of the CPU's; on sm_80+ the f16/bf16 tensor-core form) */
  {
    char *text = gpu_test_half_gemm_random();
    CHECK(text != NULL);
    if (text) write_ir("half_0_gemm", text, "cpu,cuda", NULL);
    free(text);
  }
  write_attn_tc();
  write_conv_tc();
  /* shape inputs fed at run time (test_cuda runs each case's data sets) */
  for (int i = 0; i < GPU_RT_N_CASES; i++) {
    char name[64];
    snprintf(name, sizeof name, "rtdims_%d", i);
    write_ir(name, gpu_rt_cases[i].ir, "cpu,cuda", NULL);
  }
  /* a training function: Assign kernels, globals shared on the device */
  write_ir("train_sgd", gpu_train_module(), "cpu,cuda", NULL);
  /* training-mode Dropout: the CPU's Philox stream on the device */
  write_ir("train_dropout", gpu_dropout_module(), "cpu,cuda", NULL);
  /* the random ops (RandomUniform/Normal(Like), Bernoulli) */
  write_ir("random_ops", gpu_random_module(), "cpu,cuda", NULL);
  write_ir("dropout_rt", gpu_dropout_rt_module(), "cpu,cuda", NULL);
  write_ir("nokernels",
           "func @forward(%x: f32[4]) -> (f32[4]) {\n  %r = Relu(%x) : f32[4]\n"
           "  return %r\n}\n",
           "cpu", NULL);
  /* TF32 tensor-core GEMMs (test_cuda compares them with the CPU at TF32's
   * tolerance): edges in M, N and K, a symbolic M over several 128-row
   * tiles, transA/transB with alpha/beta, a bias and an epilogue chain */
  g_tf32 = 1;
  {
    char *w = gpu_test_dense(200 * 130, 0.5, -0.5), *b = gpu_test_dense(130, 0.5, -0.5);
    char *wt = gpu_test_dense(130 * 200, 0.5, -0.5), *c = gpu_test_dense(130, 0.5, -0.5);
    size_t cap = strlen(w) + strlen(b) + strlen(wt) + strlen(c) + 4096;
    char *text = (char *)malloc(cap);
    CHECK(text != NULL);
    if (text) {
      snprintf(text, cap,
               "sym batch <= 300\n"
               "global @w : f32[200,130] param = %s\n"
               "global @b : f32[130] param = %s\n"
               "global @wt : f32[130,200] param = %s\n"
               "global @c : f32[130] = %s\n"
               "func @forward(%%x: f32[batch,200], %%xt: f32[200,batch]) -> "
               "(f32[batch,130], f32[batch,130]) {\n"
               "  %%g = Gemm(%%x, @w, @b) : f32[batch,130]\n"
               "  %%r = Relu(%%g) : f32[batch,130]\n"
               "  %%t = Gemm(%%xt, @wt, @c) {transA = 1, transB = 1, alpha = 0.5, "
               "beta = 2.0} : f32[batch,130]\n"
               "  %%s = Sigmoid(%%t) : f32[batch,130]\n"
               "  return %%r, %%s\n}\n",
               w, b, wt, c);
      write_ir("tf32_0_gemm", text, "cpu,cuda", NULL);
    }
    free(text), free(w), free(b), free(wt), free(c);
  }
  /* implicit-GEMM convolutions (C * kh * kw >= 64): padding, stride,
   * dilation, a bias, a residual + Relu epilogue, a 1-D conv, and a
   * grouped one (direct form) */
  {
    char *w1 = gpu_test_dense(40 * 8 * 3 * 3, 0.5, -0.5),
         *b1 = gpu_test_dense(40, 0.5, -0.5);
    char *w2 = gpu_test_dense(40 * 40 * 3 * 3, 0.2, -0.1),
         *w3 = gpu_test_dense(24 * 16 * 5, 0.5, -0.5);
    char *w4 = gpu_test_dense(40 * 20 * 3 * 3, 0.2, -0.1);
    size_t cap = strlen(w1) + strlen(b1) + strlen(w2) + strlen(w3) + strlen(w4) + 4096;
    char *text = (char *)malloc(cap);
    CHECK(text != NULL);
    if (text) {
      snprintf(
          text, cap,
          "sym batch <= 300\n"
          "global @w1 : f32[40,8,3,3] param = %s\n"
          "global @b1 : f32[40] param = %s\n"
          "global @w2 : f32[40,40,3,3] param = %s\n"
          "global @w3 : f32[24,16,5] param = %s\n"
          "global @w4 : f32[40,20,3,3] param = %s\n"
          "func @forward(%%x: f32[batch,8,11,13], %%s: f32[batch,16,37]) -> "
          "(f32[batch,40,11,13], f32[batch,40,4,6], f32[batch,24,17], "
          "f32[batch,40,11,13]) {\n"
          "  %%c = Conv(%%x, @w1, @b1) {pads = [1, 1, 1, 1]} : f32[batch,40,11,13]\n"
          "  %%r = Relu(%%c) : f32[batch,40,11,13]\n"
          "  %%d = Conv(%%r, @w2) {pads = [1, 1, 1, 1]} : f32[batch,40,11,13]\n"
          "  %%e = Add(%%d, %%r) : f32[batch,40,11,13]\n"
          "  %%f = Relu(%%e) : f32[batch,40,11,13]\n"
          "  %%g = Conv(%%r, @w2) {strides = [2, 2], dilations = [2, 1], pads = [1, 0, "
          "0, 1]} : f32[batch,40,4,6]\n"
          "  %%h = Conv(%%s, @w3) {strides = [2], pads = [1, 0]} : f32[batch,24,17]\n"
          "  %%k = Conv(%%f, @w4) {group = 2, pads = [1, 1, 1, 1]} : "
          "f32[batch,40,11,13]\n"
          "  return %%f, %%g, %%h, %%k\n}\n",
          w1, b1, w2, w3, w4);
      write_ir("tf32_2_conv", text, "cpu,cuda", NULL);
    }
    free(text), free(w1), free(b1), free(w2), free(w3), free(w4);
  }
  write_ir("tf32_1_matmul",
           "func @forward(%a: f32[257,300], %b: f32[300,190]) -> (f32[257,190]) {\n"
           "  %c = MatMul(%a, %b) : f32[257,190]\n  return %c\n}\n",
           "cpu,cuda", NULL);
  /* K = 131 (not a multiple of 4: 4-byte copies of K-contiguous rows, a
   * partial last step), N = 300 (two column tiles, the second partial),
   * B stored [N, K] */
  write_ir("tf32_3_oddk",
           "sym batch <= 300\n"
           "func @forward(%a: f32[batch,131], %b: f32[300,131]) -> (f32[batch,300]) {\n"
           "  %c = Gemm(%a, %b) {transB = 1} : f32[batch,300]\n  return %c\n}\n",
           "cpu,cuda", NULL);
  g_tf32 = 0;
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
    /* f16 tensor cores (always on for f16) */
    write_ir(
        "bench_gemm4096_f16",
        "func @forward(%a: f16[4096,4096], %b: f16[4096,4096]) -> (f16[4096,4096]) {\n"
        "  %c = MatMul(%a, %b) : f16[4096,4096]\n  return %c\n}\n",
        "cpu,cuda", NULL);
    /* the fused attention kernel (codegen/schedule_attention.c): sequence
     * 4096, head 128, f16, 2 x 16 heads, against PyTorch's SDPA */
    write_ir("bench_attention4096_f16",
             "func @forward(%q: f16[2,16,4096,128], %k: f16[2,16,4096,128], "
             "%v: f16[2,16,4096,128]) -> (f16[2,16,4096,128]) {\n"
             "  %y = Attention(%q, %k, %v) : f16[2,16,4096,128]\n  return %y\n}\n",
             "cpu,cuda", NULL);
    g_tf32 = 1;
    write_ir(
        "bench_gemm4096_tf32",
        "func @forward(%a: f32[4096,4096], %b: f32[4096,4096]) -> (f32[4096,4096]) {\n"
        "  %c = MatMul(%a, %b) : f32[4096,4096]\n  return %c\n}\n",
        "cpu,cuda", NULL);
    g_tf32 = 0;
  }
  return dml_test_finish();
}
