/* test_cuda.c — the CUDA backend against the CPU reference, on the packages
 * gen_cuda_packages wrote (this program links the runtime only: it runs on
 * GPU machines with a runtime-only build, scripts/gpu_check.sh).
 *   test_cuda PKG_DIR [MODELS_DIR]
 * Every ops_*_k<N>.dmlpkg (each kernel form of the scheduler) on cpu and
 * cuda at batch 1, 3 and 16 on random inputs; the reference models
 * (ref_<name>.dmlpkg) on their saved inputs/outputs in MODELS_DIR/<name>_io
 * (default $DMLC_SHARED_DIR/models); fashion_mlp through PTX only, through
 * an sm_80 cubin package (PTX on other architectures) and with the PTX
 * forced; a graph replayed many times; the training case of
 * gpu_train_case.h (train_sgd.dmlpkg: Assign kernels updating the device
 * weights shared by train_step and forward, within 1e-5); training-mode
 * Dropout (train_dropout.dmlpkg: masks identical to the CPU's, new masks
 * each step through the replayed graph; dropout_rt.dmlpkg: ratio and
 * training_mode fed at run time); the random ops (random_ops.dmlpkg:
 * RandomUniform/Normal(Like), Bernoulli from the CPU's Philox bits); the
 * run-time dims cases of gpu_rtdims_cases.h (rtdims_<i>.dmlpkg: shape
 * inputs fed at run time, several data sets each, so the CUDA graph is
 * captured per dims and replayed when they come back); the errors (no
 * kernels, no such device, no kernels for the device's compute capability
 * and no PTX).
 * Tolerance: |cuda - cpu| <= 1e-4 * max(1, |cpu|); TF32 GEMMs (tf32_*)
 * norm-wise (TF32_TOL); GEMMs of random f16/bf16 operands (half_0_gemm)
 * within one rounding step of the dtype (GPU_TEST_HALF_ULPS); the
 * tensor-core attention forms (attn_tc_*) within ATTN_TC_STEPS, the
 * f16/bf16 implicit-GEMM convolutions (conv_tc_*) within CONV_TC_STEPS.
 * Without a CUDA driver or
 * device it prints why and exits 77 (CTest: skipped). The comparisons are
 * tests/gpu_test_util.h's, shared with tests/vulkan. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn_tc_cases.h"
#include "conv_tc_cases.h"
#include "dml_kpkg.h"
#include "dml_npy.h"
#include "dml_pkg.h"
#include "gpu_rtdims_cases.h"
#include "gpu_test_util.h"
#include "gpu_train_case.h"

/* TF32 packages (tf32_*.dmlpkg, --allow-tf32): operands keep 10 mantissa
 * bits, so they are compared norm-wise, max |cuda - cpu| <= TF32_TOL *
 * max(1, max |cpu|) (the f32 kernels meet 1e-6 there; a wrong fragment
 * layout or tile edge gives errors of order 1). */
#define TF32_TOL 5e-3

static const char *g_pkgs, *g_models;
static int g_cc; /* device 0's compute capability, major*10+minor */

static dml_rt_model_t *load(const char *file) {
  char path[2048];
  snprintf(path, sizeof path, "%s/%s", g_pkgs, file);
  dml_rt_model_t *m = NULL;
  CHECK_OK(dml_rt_model_load_file(path, &m));
  return m;
}

/* Every kernel form: ops_<i>_<what>_k<kernels>.dmlpkg. */
static void test_kernel_forms(void) {
  DIR *d = opendir(g_pkgs);
  CHECK(d != NULL);
  if (!d) return;
  int seen = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    const char *k = strstr(de->d_name, "_k");
    if (strncmp(de->d_name, "ops_", 4) || !strstr(de->d_name, ".dmlpkg")) continue;
    while (k && strstr(k + 1, "_k")) k = strstr(k + 1, "_k");
    unsigned want = k ? (unsigned)strtoul(k + 2, NULL, 10) : 0;
    seen++;
    dml_rt_model_t *m = load(de->d_name);
    dml_rt_session_t *cpu, *cu;
    gpu_test_open(m, "cuda", &cpu, &cu);
    static const int64_t batches[] = {1, 3, 16, 3};
    gpu_test_check_form(de->d_name, m, cpu, cu, batches, 4, want, 1);
    gpu_test_close(m, cpu, cu);
  }
  closedir(d);
  CHECK(seen >= 5);
}

/* TF32 tensor-core GEMMs and implicit-GEMM convolutions (tf32_*.dmlpkg):
 * kernels named *_tf32 where the
 * device has tensor cores for TF32 (compute capability 8.0 and later),
 * matching the CPU norm-wise at batch 1, 3, 16 and 300 (three 128-row
 * tiles, the last partial). On compute capability 9.0 twice: the sm_90a
 * wgmma form (the session says it loaded architecture-specific images),
 * then the mma.sync form (DMLC_CUDA_PORTABLE=1). */
static void test_tf32(void) {
  static const char *files[] = {"tf32_0_gemm.dmlpkg", "tf32_1_matmul.dmlpkg",
                                "tf32_2_conv.dmlpkg", "tf32_3_oddk.dmlpkg"};
  for (int run = 0; run < (g_cc == 90 ? 8 : 4); run++) {
    int f = run % 4, portable = run >= 4;
    if (portable) setenv("DMLC_CUDA_PORTABLE", "1", 1);
    dml_rt_model_t *m = load(files[f]);
    dml_rt_session_t *cpu = NULL, *cu = NULL;
    gpu_test_open(m, "cuda", &cpu, &cu);
    unsetenv("DMLC_CUDA_PORTABLE");
    if (cu && g_cc == 90) {
      /* convolutions keep the mma.sync form */
      const char *d = dml_rt_session_device(cu);
      printf("%s: %s\n", files[f], d);
      CHECK((strstr(d, " 0 architecture-specific") != NULL) == (portable || f == 2));
    }
    static const int64_t batches[] = {1, 3, 16, 300};
    for (int i = 0; cpu && cu && i < 4; i++) {
      double e = gpu_test_compare_with(m, cpu, cu, batches[i], 1, TF32_TOL);
      printf("%-40s batch %3lld: norm-wise error %.2e (TF32, %s)\n", files[f],
             (long long)batches[i], e,
             g_cc == 90 && !portable && f != 2 ? "wgmma" : "mma.sync");
      CHECK(e <= TF32_TOL);
    }
    int tf32 = 0;
    for (uint32_t i = 0; cu && i < dml_rt_session_num_kernels(cu); i++) {
      dml_rt_kernel_info_t ki;
      CHECK_OK(dml_rt_session_kernel_info(cu, i, &ki));
      if (ki.name && strstr(ki.name, "_tf32")) tf32++;
    }
    if (g_cc >= 80) CHECK(tf32 >= 1);
    gpu_test_close(m, cpu, cu);
  }
}

/* GEMMs of random f16/bf16 operands (half_0_gemm.dmlpkg,
 * gpu_test_half_gemm_random) within GPU_TEST_HALF_ULPS rounding steps of
 * the CPU's at batch 1, 3, 16 and 64; on compute capability 8.0 and later
 * the three of more than 64 rows run on tensor cores (kernels named
 * *_mma_f16 / *_mma_bf16: two f16, one bf16). */
static void test_half_gemm(void) {
  dml_rt_model_t *m = load("half_0_gemm.dmlpkg");
  dml_rt_session_t *cpu = NULL, *cu = NULL;
  gpu_test_open(m, "cuda", &cpu, &cu);
  static const int64_t batches[] = {1, 3, 16, 64};
  for (int i = 0; cpu && cu && i < 4; i++) {
    double e = gpu_test_compare_with(m, cpu, cu, batches[i], 2, GPU_TEST_HALF_ULPS);
    printf("%-40s batch %3lld: %.2f rounding steps\n", "half_0_gemm.dmlpkg",
           (long long)batches[i], e);
    CHECK(e <= GPU_TEST_HALF_ULPS);
  }
  int f16 = 0, bf16 = 0;
  for (uint32_t i = 0; cu && i < dml_rt_session_num_kernels(cu); i++) {
    dml_rt_kernel_info_t ki;
    CHECK_OK(dml_rt_session_kernel_info(cu, i, &ki));
    f16 += ki.name && strstr(ki.name, "_mma_f16") != NULL;
    bf16 += ki.name && strstr(ki.name, "_mma_bf16") != NULL;
  }
  printf("half_0_gemm.dmlpkg: %d f16 and %d bf16 tensor-core kernels (cc %d)\n", f16,
         bf16, g_cc);
  if (cu && g_cc >= 80) CHECK(f16 == 2 && bf16 == 1);
  gpu_test_close(m, cpu, cu);
}

/* The tensor-core attention forms (attn_tc_<i>.dmlpkg, attn_tc_cases.h)
 * within ATTN_TC_STEPS rounding steps of the CPU's, each run by a kernel
 * named *_fa_f16 / *_fa_bf16 on compute capability 8.0 and later. */
static void test_attention_tc(void) {
  for (size_t c = 0; c < ATTN_TC_N_CASES; c++) {
    char file[64];
    snprintf(file, sizeof file, "attn_tc_%zu.dmlpkg", c);
    dml_rt_model_t *m = load(file);
    dml_rt_session_t *cpu = NULL, *cu = NULL;
    gpu_test_open(m, "cuda", &cpu, &cu);
    if (cpu && cu) {
      double e = gpu_test_compare_with(m, cpu, cu, 1, 2, ATTN_TC_STEPS);
      printf("%-18s %-66s %.2f rounding steps\n", file, attn_tc_cases[c].what, e);
      CHECK(e <= ATTN_TC_STEPS);
    }
    int fa = 0;
    for (uint32_t i = 0; cu && i < dml_rt_session_num_kernels(cu); i++) {
      dml_rt_kernel_info_t ki;
      CHECK_OK(dml_rt_session_kernel_info(cu, i, &ki));
      fa += ki.name && strstr(ki.name, attn_tc_cases[c].bf16 ? "_fa_bf16" : "_fa_f16");
    }
    if (cu && g_cc >= 80) CHECK(fa == 1);
    gpu_test_close(m, cpu, cu);
  }
}

/* The f16/bf16 implicit-GEMM convolutions (conv_tc_<i>.dmlpkg,
 * conv_tc_cases.h) within CONV_TC_STEPS rounding steps of the CPU's, each
 * with its n_tc kernels named *_mma_f16 / *_mma_bf16 on compute capability
 * 8.0 and later (the last case: weights in globals, one f16 kernel). */
static void test_conv_tc(void) {
  for (size_t c = 0; c <= CONV_TC_N_CASES; c++) {
    const int last = c == CONV_TC_N_CASES;
    const char *what = last ? CONV_TC_GLOBAL_WHAT : conv_tc_cases[c].what;
    const int bf16 = last ? 0 : conv_tc_cases[c].bf16,
              n_tc = last ? 1 : conv_tc_cases[c].n_tc;
    char file[64];
    snprintf(file, sizeof file, "conv_tc_%zu.dmlpkg", c);
    dml_rt_model_t *m = load(file);
    dml_rt_session_t *cpu = NULL, *cu = NULL;
    gpu_test_open(m, "cuda", &cpu, &cu);
    if (cpu && cu) {
      double e = gpu_test_compare_with(m, cpu, cu, 3, 2, CONV_TC_STEPS);
      printf("%-18s %-72s %.2f rounding steps\n", file, what, e);
      CHECK(e <= CONV_TC_STEPS);
    }
    int tc = 0;
    for (uint32_t i = 0; cu && i < dml_rt_session_num_kernels(cu); i++) {
      dml_rt_kernel_info_t ki;
      CHECK_OK(dml_rt_session_kernel_info(cu, i, &ki));
      tc += ki.name && strstr(ki.name, bf16 ? "_mma_bf16" : "_mma_f16");
    }
    if (cu && g_cc >= 80) CHECK(tc == n_tc);
    gpu_test_close(m, cpu, cu);
  }
}

/* Reference model `file` on the saved pairs of MODELS_DIR/<name>_io, `device`
 * running each twice (eager + graph capture, then replay). */
static void check_saved(const char *file, const char *name, const char *device) {
  dml_rt_model_t *m = load(file);
  dml_rt_session_t *cpu, *cu;
  gpu_test_open(m, device, &cpu, &cu);
  gpu_test_check_saved(file, g_models, name, 3, cpu, cu, 2);
  gpu_test_close(m, cpu, cu);
}

static void test_reference_models(void) {
  check_saved("ref_fashion_mlp.dmlpkg", "fashion_mlp", "cuda");
  check_saved("ref_lenet5.dmlpkg", "lenet5", "cuda:0");
  check_saved("ref_resnet_small.dmlpkg", "resnet_small", "cuda");
}

/* PTX only; an sm_80 cubin (PTX elsewhere); the PTX forced. */
static void test_ptx_paths(void) {
  check_saved("arch_ptx_fashion_mlp.dmlpkg", "fashion_mlp", "cuda");
  char path[2048];
  snprintf(path, sizeof path, "%s/arch_sm80_fashion_mlp.dmlpkg", g_pkgs);
  FILE *f = fopen(path, "rb");
  if (f) {
    fclose(f);
    check_saved("arch_sm80_fashion_mlp.dmlpkg", "fashion_mlp", "cuda");
  } else {
    printf("arch_sm80_fashion_mlp.dmlpkg absent (no ptxas where it was made)\n");
  }
  setenv("DMLC_CUDA_FORCE_PTX", "1", 1);
  check_saved("ref_fashion_mlp.dmlpkg", "fashion_mlp", "cuda");
  unsetenv("DMLC_CUDA_FORCE_PTX");
}

/* The same package with every kernel's images reduced to cubins of
 * another architecture (or, without any cubin, to nothing that fits):
 * "no kernels for compute capability X.Y and no PTX". */
static void test_no_matching_image(void) {
  char path[2048];
  size_t n = 0;
  snprintf(path, sizeof path, "%s/ref_fashion_mlp.dmlpkg", g_pkgs);
  void *bytes = dml_test_read_file(path, &n);
  CHECK(bytes != NULL);
  if (!bytes) return;
  dml_pkg_t pkg;
  CHECK_OK(dml_pkg_parse(bytes, n, &pkg));
  const dml_pkg_section_t *gs = dml_pkg_find_section(&pkg, "graph");
  const dml_pkg_section_t *ws = dml_pkg_find_section(&pkg, "weights");
  const dml_pkg_section_t *cs = dml_pkg_find_section(&pkg, "kernels.cuda");
  dml_pkg_graph_t *g = NULL;
  dml_kpkg_t *k = NULL;
  if (gs) CHECK_OK(dml_pkg_graph_decode(gs->data, gs->size, ws ? ws->size : 0, &g));
  if (g && cs) CHECK_OK(dml_kpkg_decode(cs->data, cs->size, DML_KPKG_TARGET_CUDA, g, &k));
  uint8_t **codes = NULL;
  if (k) {
    /* one cubin image of an architecture the device cannot run: a copy of
     * the kernel's PTX relabelled as an ELF cubin for another major */
    const dml_kpkg_function_t *kf = &k->functions[0];
    codes = (uint8_t **)calloc(kf->n_kernels, sizeof *codes);
    for (uint32_t i = 0; i < kf->n_kernels; i++) {
      dml_kpkg_kernel_t *K = &kf->kernels[i];
      static const uint8_t elf[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
      uint32_t other = g_cc / 10 == 9 ? 80 : 90;
      uint8_t *c = (uint8_t *)calloc(1, 20 + sizeof elf);
      uint32_t hdr[5] = {DML_KPKG_CUDA_MAGIC, 1, DML_KPKG_CUDA_CUBIN, other, sizeof elf};
      memcpy(c, hdr, sizeof hdr);
      memcpy(c + 20, elf, sizeof elf);
      codes[i] = c;
      K->code = c;
      K->code_bytes = 20 + sizeof elf;
    }
    void *sec = NULL;
    size_t sn = 0;
    CHECK_OK(dml_kpkg_encode(k, &sec, &sn));
    dml_pkg_writer_t *w = NULL;
    CHECK_OK(dml_pkg_writer_create(&w));
    for (uint32_t i = 0; w && i < pkg.n_sections; i++) {
      const dml_pkg_section_t *s = &pkg.sections[i];
      CHECK_OK(dml_pkg_writer_add_section(w, s->tag, s == cs ? sec : s->data,
                                          s == cs ? sn : s->size, s->alignment));
    }
    void *nb = NULL;
    size_t nn = 0;
    CHECK_OK(dml_pkg_writer_finish_memory(w, &nb, &nn));
    dml_pkg_writer_release(w);
    dml_rt_model_t *m = NULL;
    dml_rt_session_t *s = NULL;
    if (nb) CHECK_OK(dml_rt_model_load_memory(nb, nn, &m));
    char want[128];
    snprintf(want, sizeof want,
             "package has no kernels for compute capability %d.%d and no PTX", g_cc / 10,
             g_cc % 10);
    if (m)
      CHECK_ERROR(dml_rt_session_create(m, "cuda", &s), DML_STATUS_FAILED_PRECONDITION,
                  want);
    dml_rt_model_release(m);
    free(nb);
    free(sec);
    for (uint32_t i = 0; i < kf->n_kernels; i++) free(codes[i]);
    free(codes);
  }
  dml_kpkg_release(k);
  dml_pkg_graph_release(g);
  free(bytes);
}

static void test_training(void) {
  dml_rt_model_t *m = load("train_sgd.dmlpkg");
  if (!m) return;
  gpu_train_compare(m, "cuda");
  dml_rt_session_t *c = NULL, *x = NULL;
  CHECK_OK(dml_rt_session_create_function(m, "cpu", "train_step", NULL, &c));
  if (c)
    CHECK_ERROR(dml_rt_session_create_function(m, "cuda", "forward", c, &x),
                DML_STATUS_FAILED_PRECONDITION, "run on one device");
  dml_rt_session_release(c);
  dml_rt_model_release(m);
}

/* Training-mode Dropout: masks identical to the CPU's (gpu_train_case.h). */
static void test_dropout(void) {
  dml_rt_model_t *m = load("train_dropout.dmlpkg");
  if (!m) return;
  gpu_dropout_compare(m, "cuda");
  dml_rt_model_release(m);
}

/* The random ops: the CPU's Philox bits (gpu_train_case.h). */
static void test_random_ops(void) {
  dml_rt_model_t *m = load("random_ops.dmlpkg");
  if (!m) return;
  gpu_random_compare(m, "cuda");
  dml_rt_model_release(m);
}

/* Dropout with run-time ratio and training_mode (gpu_train_case.h). */
static void test_dropout_runtime_inputs(void) {
  dml_rt_model_t *m = load("dropout_rt.dmlpkg");
  if (!m) return;
  gpu_dropout_rt_compare(m, "cuda");
  dml_rt_model_release(m);
}

/* Shape inputs fed at run time (rtdims_<i>.dmlpkg, gpu_rtdims_cases.h). */
static void test_rtdims(void) {
  for (int i = 0; i < GPU_RT_N_CASES; i++) {
    char file[64];
    snprintf(file, sizeof file, "rtdims_%d.dmlpkg", i);
    dml_rt_model_t *m = load(file);
    dml_rt_session_t *cpu, *cu;
    gpu_test_open(m, "cuda", &cpu, &cu);
    gpu_rt_check(&gpu_rt_cases[i], m, cpu, cu);
    gpu_test_close(m, cpu, cu);
  }
}

static void test_errors(void) {
  dml_rt_model_t *m = load("nokernels.dmlpkg");
  dml_rt_session_t *s = NULL;
  if (m)
    CHECK_ERROR(dml_rt_session_create(m, "cuda", &s), DML_STATUS_FAILED_PRECONDITION,
                "the package has no CUDA kernels for function 'forward'");
  dml_rt_model_release(m);
  m = load("ref_fashion_mlp.dmlpkg");
  if (!m) return;
  CHECK_ERROR(dml_rt_session_create(m, "cuda:99", &s), DML_STATUS_NOT_FOUND,
              "no CUDA device 'cuda:99'");
  CHECK_ERROR(dml_rt_session_create(m, "cuda:x", &s), DML_STATUS_INVALID_ARGUMENT,
              "the index after ':' must be a number");
  CHECK_OK(dml_rt_session_create(m, "cuda:0", &s));
  if (s) {
    dml_rt_kernel_info_t ki;
    CHECK_ERROR(dml_rt_session_kernel_info(s, 0, &ki), DML_STATUS_FAILED_PRECONDITION,
                "no run has completed yet");
    CHECK_ERROR(dml_rt_session_run(s), DML_STATUS_FAILED_PRECONDITION, "is not set");
    CHECK_ERROR(dml_rt_session_kernel_info(s, 7, &ki), DML_STATUS_OUT_OF_RANGE,
                "kernel 7");
  }
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

int main(int argc, char **argv) {
  char models[2048];
  gpu_test_seed(0x9E3779B97F4A7C15ull);
  g_pkgs = argc > 1 ? argv[1] : getenv("DMLC_CUDA_PKGS");
  if (argc > 2) {
    g_models = argv[2];
  } else {
    g_models = dml_test_path("DMLC_SHARED_DIR", "models", models, sizeof models);
  }
  dml_rt_device_info_t d[16];
  uint32_t n = 0;
  if (gpu_test_skip(dml_rt_cuda_devices(d, 16, &n), "no CUDA device found")) return 77;
  if (!g_pkgs) {
    fprintf(stderr,
            "usage: test_cuda PKG_DIR [MODELS_DIR] (gen_cuda_packages writes it)\n");
    return 2;
  }
  for (uint32_t i = 0; i < n && i < 16; i++)
    printf("%s: %s, compute capability %u.%u, %.1f GiB\n", d[i].id, d[i].name,
           d[i].api_major, d[i].api_minor, (double)d[i].memory_bytes / (1 << 30));
  g_cc = (int)(d[0].api_major * 10 + d[0].api_minor);
  RUN(test_errors);
  RUN(test_kernel_forms);
  RUN(test_tf32);
  RUN(test_half_gemm);
  RUN(test_attention_tc);
  RUN(test_conv_tc);
  RUN(test_reference_models);
  RUN(test_ptx_paths);
  RUN(test_no_matching_image);
  RUN(test_training);
  RUN(test_dropout);
  RUN(test_dropout_runtime_inputs);
  RUN(test_random_ops);
  RUN(test_rtdims);
  return dml_test_finish();
}
