/* test_codegen.c — the scheduler's grouping, the GPU targets' op lists and
 * errors, SPIR-V determinism, MSL golden files, and the kernel sections of
 * a package as untrusted bytes (dml_kpkg_decode). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen_test_util.h"
#include "dml_codegen.h"
#include "dml_kernel.h"
#include "dml_kpkg.h"
#include "dml_pkg.h"
#include "dml_rt.h"

/* An MLP layer with a fused epilogue, a broadcasting elementwise chain, a
 * reduction with an epilogue, softmax, log-softmax. */
static const char k_mix[] =
    "sym batch <= 16\n"
    "global @w : f32[8,6] param\n"
    "global @b : f32[6] param = dense<[0.25, 0.5, -1.0, 1.5, 0.0, -0.5]>\n"
    "global @s : f32[6] = dense<[2.0, 3.0, 4.0, 5.0, 6.0, 7.0]>\n"
    "func @forward(%x: f32[batch,8]) -> (f32[batch,6], f32[batch,6], f32[batch,1], "
    "f32[batch,6]) {\n"
    "  %g = Gemm(%x, @w, @b) : f32[batch,6]\n"
    "  %r = Relu(%g) : f32[batch,6]\n"
    "  %m = Mul(%r, @s) : f32[batch,6]\n"
    "  %t = Tanh(%m) : f32[batch,6]\n"
    "  %sm = Softmax(%t) {axis = 1} : f32[batch,6]\n"
    "  %red = ReduceMean(%m) {axes = [1], keepdims = 1} : f32[batch,1]\n"
    "  %e = Exp(%red) : f32[batch,1]\n"
    "  %ls = LogSoftmax(%r) {axis = -1} : f32[batch,6]\n"
    "  return %sm, %t, %e, %ls\n"
    "}\n";

static dml_pkg_graph_t *graph_of(const void *bytes, size_t size, dml_pkg_t *pkg) {
  dml_pkg_graph_t *g = NULL;
  CHECK_OK(dml_pkg_parse(bytes, size, pkg));
  const dml_pkg_section_t *gs = dml_pkg_find_section(pkg, "graph");
  const dml_pkg_section_t *ws = dml_pkg_find_section(pkg, "weights");
  CHECK(gs != NULL);
  if (gs) CHECK_OK(dml_pkg_graph_decode(gs->data, gs->size, ws ? ws->size : 0, &g));
  return g;
}

static void test_schedule_groups(void) {
  size_t n = 0;
  void *bytes = cg_package(k_mix, NULL, &n);
  if (!bytes) return;
  dml_pkg_t pkg;
  dml_pkg_graph_t *g = graph_of(bytes, n, &pkg);
  const dml_pkg_section_t *ws = dml_pkg_find_section(&pkg, "weights");
  dml_kplan_t *p = NULL;
  CHECK_OK(dml_kschedule(g, 0, ws ? ws->data : NULL, ws ? ws->size : 0, &p));
  if (p) {
    /* gemm+relu+mul+tanh | softmax | reduce+exp | logsoftmax */
    CHECK(p->n_kernels == 4);
    if (p->n_kernels == 4) {
      CHECK(p->kernels[0].kind == DML_KK_GEMM && p->kernels[0].n_nodes == 4);
      CHECK(p->kernels[1].kind == DML_KK_SOFTMAX && p->kernels[1].n_nodes == 1);
      CHECK(p->kernels[2].kind == DML_KK_REDUCE && p->kernels[2].n_nodes == 2);
      CHECK(p->kernels[3].kind == DML_KK_SOFTMAX);
      CHECK(p->kernels[0].items[1].sym == 0 && p->kernels[0].items[0].c == 6);
      int64_t b = 4;
      /* 2*M*N*K flops of the GEMM plus one per element per epilogue node */
      CHECK(dml_klin_eval(p->kernels[0].flops, &b, 1) == 2 * 4 * 6 * 8 + 3 * 4 * 6);
    }
    char *text = NULL;
    size_t tn = 0;
    FILE *f = open_memstream(&text, &tn);
    dml_kplan_print(p, g, f);
    fclose(f);
    CHECK(strstr(text, "kernel k0_gemm (gemm) items=(6,1*batch,1) local=(32,8,1)") !=
          NULL);
    CHECK(strstr(text, "nodes: 0:Gemm 1:Relu 2:Mul 3:Tanh") != NULL);
    CHECK(strstr(text, "barrier") != NULL);
    CHECK(strstr(text, "kernel k2_reduce (reduce)") != NULL);
    /* the Relu result feeds the log-softmax kernel: it is stored */
    CHECK(strstr(text, "= r1\n") != NULL);
    free(text);
    /* every kernel renders, compiles, validates; twice gives the same words */
    for (uint32_t k = 0; k < p->n_kernels; k++) {
      char *glsl = NULL;
      uint32_t *w1 = NULL, *w2 = NULL;
      size_t n1 = 0, n2 = 0;
      CHECK_OK(dml_codegen_glsl(&p->kernels[k], g->n_symbols, &glsl));
      if (!glsl) continue;
      CHECK(strstr(glsl, "pc.sym[0]") != NULL); /* the batch is a push constant */
      CHECK_OK(dml_codegen_spirv(glsl, p->kernels[k].name, &w1, &n1));
      CHECK_OK(dml_codegen_spirv(glsl, p->kernels[k].name, &w2, &n2));
      CHECK(w1 && w2 && n1 == n2 && n1 > 5 && !memcmp(w1, w2, n1 * 4));
      if (w1) CHECK(w1[0] == 0x07230203u);
      free(glsl);
      free(w1);
      free(w2);
    }
    dml_kplan_release(p);
  }
  dml_pkg_graph_release(g);
  free(bytes);
}

/* dml_kernel_in_place on Concat -> Sigmoid -> BatchNormalization (issue
 * 23's form): planned without fusion awareness (the CPU's plan, as
 * cg_package's default pipeline) the chain's kernel writes its result at
 * the Concat's offset (1) and the Concat's kernel is not in place (0);
 * compiled for cpu,vulkan (a fusion-aware plan) neither is; out-of-range
 * kernels give 0. */
static const char k_cat_chain[] =
    "sym batch <= 8\n"
    "global @sc : f32[4] = dense<[1.25, 0.75, 1.5, 0.5]>\n"
    "global @bi : f32[4] = dense<[0.1, -0.2, 0.3, -0.1]>\n"
    "global @mu : f32[4] = dense<[0.4, 0.6, 0.2, 0.5]>\n"
    "global @va : f32[4] = dense<[0.5, 1.5, 2.0, 0.8]>\n"
    "func @forward(%a: f32[batch,1,300], %b: f32[batch,1,300]) -> (f32[batch,4,300]) {\n"
    "  %c = Concat(%b, %a, %b, %b) {axis = 1} : f32[batch,4,300]\n"
    "  %s = Sigmoid(%c) : f32[batch,4,300]\n"
    "  %y = BatchNormalization(%s, @sc, @bi, @mu, @va) : f32[batch,4,300]\n"
    "  return %y\n"
    "}\n";

/* The dml_kernel_in_place of each kernel of `bytes`' forward, as a string
 * of digits ("01"); "" on error (a failed CHECK). */
static void in_place_digits(void *bytes, size_t n, char *out, size_t cap) {
  out[0] = 0;
  if (!bytes) return;
  dml_pkg_t pkg;
  dml_pkg_graph_t *g = graph_of(bytes, n, &pkg);
  const dml_pkg_section_t *ws = dml_pkg_find_section(&pkg, "weights");
  dml_kplan_t *p = NULL;
  if (g) CHECK_OK(dml_kschedule(g, 0, ws ? ws->data : NULL, ws ? ws->size : 0, &p));
  for (uint32_t k = 0; p && k < p->n_kernels && k + 1 < cap; k++) {
    out[k] = (char)('0' + dml_kernel_in_place(p, g, k));
    out[k + 1] = 0;
  }
  if (p) CHECK(dml_kernel_in_place(p, g, p->n_kernels) == 0);
  CHECK(dml_kernel_in_place(NULL, g, 0) == 0);
  dml_kplan_release(p);
  dml_pkg_graph_release(g);
  free(bytes);
}

static void test_kernel_in_place(void) {
  char cpu[16], fused[16];
  size_t n = 0;
  void *bytes = cg_package(k_cat_chain, NULL, &n);
  in_place_digits(bytes, n, cpu, sizeof cpu);
  printf("in place per kernel, the CPU's plan: %s\n", cpu);
  CHECK(!strcmp(cpu, "01"));
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_ir_parse(k_cat_chain, strlen(k_cat_chain), "cat_chain.dmlir", &m));
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.targets = "cpu,vulkan";
  bytes = NULL;
  n = 0;
  if (m) CHECK_OK(dml_compile_module_memory(m, "cat_chain", &o, &bytes, &n, NULL));
  dml_ir_module_release(m);
  in_place_digits(bytes, n, fused, sizeof fused);
  printf("in place per kernel, fusion-aware: %s\n", fused);
  CHECK(!strcmp(fused, "00"));
}

/* Assign(@global, value) on GPUs: stored into the weights buffer by the
 * kernel computing the value (here a GEMM with symbolic K, X^T dY over the
 * batch, and its SGD epilogue) unless that kernel reads the global at other
 * elements (U - U Z: a copy kernel stores it); only such kernels declare
 * the weights writable. */
static void test_schedule_assign(void) {
  size_t n = 0;
  void *bytes = cg_package(
      "sym batch <= 16\n"
      "global @w : f32[4,3] param\n"
      "global @u : f32[3,3] param\n"
      "global @z : f32[3,3] = dense<[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]>\n"
      "func @train_step(%x: f32[batch,4], %dy: f32[batch,3], %lr: f32[]) -> (f32[3,3]) "
      "{\n"
      "  %gw = Gemm(%x, %dy) {transA = 1} : f32[4,3]\n"
      "  %sw = Mul(%gw, %lr) : f32[4,3]\n"
      "  %w1 = Sub(@w, %sw) : f32[4,3]\n"
      "  Assign(@w, %w1)\n"
      "  %uz = Gemm(@u, @z) : f32[3,3]\n"
      "  %u1 = Sub(@u, %uz) : f32[3,3]\n"
      "  Assign(@u, %u1)\n"
      "  return %uz\n}\n",
      NULL, &n);
  if (!bytes) return;
  dml_pkg_t pkg;
  dml_pkg_graph_t *g = graph_of(bytes, n, &pkg);
  const dml_pkg_section_t *ws = dml_pkg_find_section(&pkg, "weights");
  dml_kplan_t *p = NULL;
  if (g) CHECK_OK(dml_kschedule(g, 0, ws ? ws->data : NULL, ws ? ws->size : 0, &p));
  if (p) {
    /* gemm+mul+sub+assign | gemm+sub | assign (copy) */
    CHECK(p->n_kernels == 3);
    if (p->n_kernels == 3) {
      CHECK(p->kernels[0].kind == DML_KK_GEMM && p->kernels[0].n_nodes == 4);
      CHECK(p->kernels[0].writes_weights);
      CHECK(p->kernels[1].n_nodes == 2 && !p->kernels[1].writes_weights);
      CHECK(p->kernels[2].n_nodes == 1 && p->kernels[2].writes_weights);
      /* 2*M*N*K flops with K = batch */
      int64_t b = 5;
      CHECK(dml_klin_eval(p->kernels[0].flops, &b, 1) == 2 * 4 * 3 * 5 + 2 * 12);
      for (uint32_t k = 0; k < 3; k++) {
        char *glsl = NULL, *cu = NULL;
        CHECK_OK(dml_codegen_glsl(&p->kernels[k], g->n_symbols, &glsl));
        CHECK_OK(dml_codegen_cuda(&p->kernels[k], g->n_symbols, &cu));
        if (!glsl || !cu) continue;
        int w = p->kernels[k].writes_weights;
        CHECK((strstr(glsl, "readonly buffer Weights") == NULL) == w);
        CHECK((strstr(cu, "const float *__restrict__ weights") == NULL) == w);
        CHECK((strstr(glsl, "  weights[") != NULL) == w);
        uint32_t *words = NULL;
        size_t nw = 0;
        CHECK_OK(dml_codegen_spirv(glsl, p->kernels[k].name, &words, &nw));
        free(words);
        free(glsl);
        free(cu);
      }
    }
    dml_kplan_release(p);
  }
  dml_pkg_graph_release(g);
  free(bytes);
}

/* The printed plan of `text`'s forward (NULL when it does not schedule). */
static char *plan_text(const char *text) {
  size_t n = 0;
  void *bytes = cg_package(text, NULL, &n);
  if (!bytes) return NULL;
  dml_pkg_t pkg;
  dml_pkg_graph_t *g = graph_of(bytes, n, &pkg);
  const dml_pkg_section_t *ws = dml_pkg_find_section(&pkg, "weights");
  dml_kplan_t *p = NULL;
  char *out = NULL;
  if (g) CHECK_OK(dml_kschedule(g, 0, ws ? ws->data : NULL, ws ? ws->size : 0, &p));
  if (p) {
    size_t tn = 0;
    FILE *f = open_memstream(&out, &tn);
    dml_kplan_print(p, g, f);
    fclose(f);
    dml_kplan_release(p);
  }
  dml_pkg_graph_release(g);
  free(bytes);
  return out;
}

/* The GEMM form the scheduler picks from M (its bound when symbolic), N and
 * K: grid, workgroup and tiles of each (codegen/schedule.c). */
static void test_gemm_forms(void) {
  static const struct {
    const char *text, *grid;
    int checks_m, checks_k;
  } cases[] = {
      /* 4096^3: 128x128 tiles, 8x8 per invocation, no bounds checks */
      {"func @forward(%a: f32[4096,4096], %b: f32[4096,4096]) -> (f32[4096,4096]) {\n"
       "  %c = MatMul(%a, %b) : f32[4096,4096]\n  return %c\n}\n",
       "items=(8192,32,1) local=(256,1,1) tile0=f32[1056] tile1=f32[1056]", 0, 0},
      /* few 128-blocks: 64x64 tiles, 4x4 per invocation; M and K checked */
      {"func @forward(%a: f32[150,37], %b: f32[37,70]) -> (f32[150,70]) {\n"
       "  %c = MatMul(%a, %b) : f32[150,70]\n  return %c\n}\n",
       "items=(768,2,1) local=(256,1,1) tile0=f32[544] tile1=f32[544]", 1, 1},
      /* symbolic M with a large bound: 256x64 tiles, 256 rows per workgroup */
      {"sym batch <= 4096\n"
       "func @forward(%a: f32[batch,512], %b: f32[512,512]) -> (f32[batch,512]) {\n"
       "  %c = MatMul(%a, %b) : f32[batch,512]\n  return %c\n}\n",
       "items=(1*batch,8,1) local=(256,1,1) tile0=f32[2080] tile1=f32[544]", 1, 0},
      /* a smaller bound: 64x64 tiles of 64 invocations */
      {"sym batch <= 256\n"
       "func @forward(%a: f32[batch,512], %b: f32[512,512]) -> (f32[batch,512]) {\n"
       "  %c = MatMul(%a, %b) : f32[batch,512]\n  return %c\n}\n",
       "items=(1*batch,8,1) local=(64,1,1) tile0=f32[544] tile1=f32[544]", 1, 0},
      /* batch-1 inference: the K-split form, 8 rows x 32 columns */
      {"sym batch <= 64\n"
       "func @forward(%a: f32[batch,784], %b: f32[784,256]) -> (f32[batch,256]) {\n"
       "  %c = MatMul(%a, %b) : f32[batch,256]\n  return %c\n}\n",
       "items=(256,1*batch,1) local=(32,8,1) tile0=f32[2048]", 1, 0},
      /* and with B transposed: 8 rows x 8 columns, 32 invocations over K */
      {"sym batch <= 64\n"
       "func @forward(%a: f32[batch,784], %b: f32[256,784]) -> (f32[batch,256]) {\n"
       "  %c = Gemm(%a, %b) {transB = 1} : f32[batch,256]\n  return %c\n}\n",
       "items=(1024,1*batch,1) local=(32,8,1) tile0=f32[2112]", 1, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *t = plan_text(cases[i].text);
    CHECK(t != NULL);
    if (!t) continue;
    if (!strstr(t, cases[i].grid)) fprintf(stderr, "case %zu:\n%.600s\n", i, t);
    CHECK(strstr(t, cases[i].grid) != NULL);
    /* bounds checks only where a dim needs them */
    CHECK((strstr(t, " < $batch {") != NULL || strstr(t, " < 150 {") != NULL) ==
          cases[i].checks_m);
    CHECK((strstr(t, " < 37 {") != NULL) == cases[i].checks_k);
    free(t);
  }
}

static void test_unsupported_ops_listed(void) {
  size_t n = 0;
  void *bytes = cg_package(
      "global @k : i64[1] = dense<[2]>\n"
      "func @forward(%x: f32[3,3]) -> (f32[3,2], i32[3,2]) {\n"
      "  %v, %i = TopK(%x, @k) {axis = 1} : f32[3,2], i64[3,2]\n"
      "  %r = Relu(%v) : f32[3,2]\n"
      "  %u = Multinomial(%x) {sample_size = 2} : i32[3,2]\n"
      "  return %r, %u\n}\n",
      NULL, &n);
  if (!bytes) return;
  void *copy = malloc(n);
  memcpy(copy, bytes, n);
  CHECK_ERROR(dml_compile_add_kernels("cpu,vulkan", NULL, &copy, &n),
              DML_STATUS_UNIMPLEMENTED, "target 'vulkan' cannot emit every op");
  CHECK_ERROR(dml_compile_add_kernels("metal", NULL, &copy, &n), DML_STATUS_UNIMPLEMENTED,
              "Multinomial: 1 node");
  CHECK_ERROR(dml_compile_add_kernels("cuda", NULL, &copy, &n), DML_STATUS_UNIMPLEMENTED,
              "target 'cuda' cannot emit every op");
  CHECK(dml_codegen_supports("vulkan", DML_OP_GEMM));
  CHECK(dml_codegen_supports("vulkan", DML_OP_CONV));
  CHECK(!dml_codegen_supports("metal", DML_OP_MULTINOMIAL));
  CHECK(dml_codegen_supports("metal", DML_OP_TOP_K));
  CHECK(dml_codegen_supports("metal", DML_OP_TRILU));
  CHECK(dml_codegen_supports("cuda", DML_OP_GEMM));
  CHECK(dml_codegen_supports("cuda", DML_OP_CONV));
  CHECK(!dml_codegen_supports("cuda", DML_OP_MULTINOMIAL));
  CHECK(dml_codegen_supports("cuda", DML_OP_DFT));
  CHECK(dml_codegen_supports("cuda", DML_OP_EINSUM));
  CHECK(!dml_codegen_supports("rocm", DML_OP_GEMM));
  CHECK(dml_codegen_supports("vulkan", DML_OP_DROPOUT));
  free(copy);
  free(bytes);
}

/* Dropout in training mode is a kernel (the node's Philox stream), with
 * ratio and training_mode constants or f32 / bool scalars read at run
 * time; a constant ratio outside [0, 1] in training mode, or a run-time
 * ratio of another dtype, is a schedule error naming the node and the
 * reason. */
static void test_dropout_training_listed(void) {
  static const char *const texts[2] = {
      "global @r : f32[] = dense<[1.5]>\n"
      "global @t : bool[] = dense<[true]>\n"
      "func @forward(%x: f32[2,3]) -> (f32[2,3]) {\n"
      "  %y = Dropout(%x, @r, @t) : f32[2,3]\n  return %y\n}\n",
      "global @t : bool[] = dense<[true]>\n"
      "func @forward(%x: f32[2,3], %r: f64[]) -> (f32[2,3]) {\n"
      "  %y = Dropout(%x, %r, @t) : f32[2,3]\n  return %y\n}\n"};
  static const char *const why[2] = {"ratio outside [0, 1]",
                                     "ratio must be a constant or an f32 scalar"};
  for (int i = 0; i < 2; i++) {
    size_t n = 0;
    void *bytes = cg_package(texts[i], NULL, &n);
    if (!bytes) continue;
    CHECK_ERROR(dml_compile_add_kernels("vulkan", NULL, &bytes, &n),
                DML_STATUS_UNIMPLEMENTED, why[i]);
    free(bytes);
  }
}

/* Reads a whole file; NULL when absent. */
static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = (char *)malloc((size_t)n + 1);
  if (b && fread(b, 1, (size_t)n, f) != (size_t)n) n = 0;
  if (b) b[n] = 0;
  fclose(f);
  return b;
}

/* The MSL of a small elementwise kernel against tests/codegen/golden/
 * (DMLC_UPDATE_GOLDEN=1 rewrites the file). */
static void test_msl_golden(void) {
  size_t n = 0;
  void *bytes = cg_package(
      "sym batch <= 8\n"
      "global @b : f32[4] = dense<[1.0, 2.0, 3.0, 4.0]>\n"
      "func @forward(%x: f32[batch,4]) -> (f32[batch,4]) {\n"
      "  %a = Add(%x, @b) : f32[batch,4]\n"
      "  %s = Sigmoid(%a) : f32[batch,4]\n"
      "  return %s\n}\n",
      "vulkan,metal", &n);
  if (!bytes) return;
  dml_pkg_t pkg;
  dml_pkg_graph_t *g = graph_of(bytes, n, &pkg);
  const dml_pkg_section_t *ms = dml_pkg_find_section(&pkg, "kernels.msl");
  const dml_pkg_section_t *ss = dml_pkg_find_section(&pkg, "kernels.spirv");
  CHECK(ms && ss && g);
  dml_kpkg_t *k = NULL;
  if (ms && g) CHECK_OK(dml_kpkg_decode(ms->data, ms->size, DML_KPKG_TARGET_MSL, g, &k));
  if (k) {
    CHECK(k->n_functions == 1 && k->functions[0].n_kernels == 1);
    const dml_kpkg_kernel_t *K = &k->functions[0].kernels[0];
    CHECK(K->n_nodes == 2 && !strcmp(K->name, "k0_elementwise"));
    char *msl = (char *)malloc(K->code_bytes + 1);
    memcpy(msl, K->code, K->code_bytes);
    msl[K->code_bytes] = 0;
    CHECK(strstr(msl, "kernel void k0_elementwise(") != NULL);
    CHECK(strstr(msl, "[[buffer(0)]]") && strstr(msl, "[[buffer(1)]]") &&
          strstr(msl, "[[buffer(2)]]"));
    char path[1024];
    dml_test_path("DMLC_SOURCE_DIR", "tests/codegen/golden/add_sigmoid.msl", path,
                  sizeof path);
    if (getenv("DMLC_UPDATE_GOLDEN")) {
      FILE *f = fopen(path, "wb");
      CHECK(f != NULL);
      if (f) {
        fputs(msl, f);
        fclose(f);
      }
    }
    char *want = read_text(path);
    CHECK(want != NULL);
    if (want && strcmp(want, msl)) {
      fprintf(stderr, "MSL differs from %s:\n%s\n", path, msl);
      CHECK(0);
    }
    free(want);
    free(msl);
    dml_kpkg_release(k);
  }
  dml_pkg_graph_release(g);
  free(bytes);
}

/* FileCheck-style: the lines of `want` (NULL-terminated), each found in
 * order in `text`, the first at the first line and each next one on the
 * line after (CHECK, CHECK-NEXT, ...). */
static int check_lines(const char *text, const char *const *want) {
  const char *p = text;
  for (int i = 0; want[i]; i++) {
    size_t n = strlen(want[i]);
    if (strncmp(p, want[i], n) || p[n] != '\n') {
      fprintf(stderr, "line %d: want '%s', got '%.60s'\n", i + 1, want[i], p);
      return 0;
    }
    p += n + 1;
  }
  return 1;
}

/* Every MSL kernel of a package starts with the guarded safe-math pragma
 * (dml_msl_header), kernels with sin and cos (dml_sincos, which SPIRV-Cross
 * translates: bit casts, umulExtended as mulhi) and a reduction
 * included. */
static void test_msl_safe_math(void) {
  static const char *const want[] = {
      "#if defined(__METAL_VERSION__) && __METAL_VERSION__ >= 320",
      "#pragma METAL fp math_mode(safe)", "#endif", NULL};
  size_t n = 0;
  void *bytes = cg_package(
      "sym batch <= 8\n"
      "func @forward(%x: f32[batch,4], %h: bf16[batch,4]) -> (f32[batch,4], "
      "bf16[batch,4], f32[batch,1]) {\n"
      "  %s = Sin(%x) : f32[batch,4]\n"
      "  %c = Cos(%h) : bf16[batch,4]\n"
      "  %r = ReduceSum(%x) {axes = [1], keepdims = 1} : f32[batch,1]\n"
      "  return %s, %c, %r\n}\n",
      "vulkan,metal", &n);
  if (!bytes) return;
  dml_pkg_t pkg;
  dml_pkg_graph_t *g = graph_of(bytes, n, &pkg);
  const dml_pkg_section_t *ms = dml_pkg_find_section(&pkg, "kernels.msl");
  CHECK(ms && g);
  dml_kpkg_t *k = NULL;
  if (ms && g) CHECK_OK(dml_kpkg_decode(ms->data, ms->size, DML_KPKG_TARGET_MSL, g, &k));
  int n_kernels = 0, n_sincos = 0;
  for (uint32_t f = 0; k && f < k->n_functions; f++)
    for (uint32_t i = 0; i < k->functions[f].n_kernels; i++) {
      const dml_kpkg_kernel_t *K = &k->functions[f].kernels[i];
      char *msl = (char *)malloc(K->code_bytes + 1);
      if (!msl) continue;
      memcpy(msl, K->code, K->code_bytes);
      msl[K->code_bytes] = 0;
      CHECK(check_lines(msl, want));
      CHECK(strstr(msl, "#include <metal_stdlib>") > strstr(msl, "math_mode(safe)"));
      /* dml_sincos, inlined by glslang's optimizer: umulExtended's mulhi
       * and 2/pi's first word */
      n_sincos += strstr(msl, "mulhi(") && strstr(msl, "2734261102u");
      n_kernels++;
      free(msl);
    }
  CHECK(n_kernels >= 2);
  CHECK(n_sincos == 2);
  dml_kpkg_release(k);
  dml_pkg_graph_release(g);
  free(bytes);
}

/* Every byte-level corruption of a kernel section is DATA_LOSS. */
static void test_kpkg_untrusted(void) {
  size_t n = 0;
  void *bytes = cg_package(k_mix, "vulkan", &n);
  if (!bytes) return;
  dml_pkg_t pkg;
  dml_pkg_graph_t *g = graph_of(bytes, n, &pkg);
  const dml_pkg_section_t *ss = dml_pkg_find_section(&pkg, "kernels.spirv");
  CHECK(ss != NULL && g != NULL);
  if (!ss || !g) {
    dml_pkg_graph_release(g);
    free(bytes);
    return;
  }
  dml_kpkg_t *k = NULL;
  CHECK_OK(dml_kpkg_decode(ss->data, ss->size, DML_KPKG_TARGET_SPIRV, g, &k));
  CHECK(k && k->n_functions == 1 && k->functions[0].n_kernels == 4);
  /* encode(decode(x)) == x */
  void *re = NULL;
  size_t rn = 0;
  if (k) CHECK_OK(dml_kpkg_encode(k, &re, &rn));
  CHECK(re && rn == ss->size && !memcmp(re, ss->data, rn));
  free(re);
  dml_kpkg_release(k);
  CHECK_ERROR(dml_kpkg_decode(ss->data, ss->size, DML_KPKG_TARGET_MSL, g, &k),
              DML_STATUS_DATA_LOSS, "wrong target");
  uint8_t *b = (uint8_t *)malloc(ss->size);
  size_t sz = ss->size;
  /* truncation at every length */
  for (size_t cut = 0; cut < sz; cut += (cut < 256 ? 1 : 97)) {
    dml_kpkg_t *kk = NULL;
    dml_status_t s = dml_kpkg_decode(ss->data, cut, DML_KPKG_TARGET_SPIRV, g, &kk);
    CHECK(s && dml_status_code(s) == DML_STATUS_DATA_LOSS);
    dml_status_free(s);
    dml_kpkg_release(kk);
  }
  memcpy(b, ss->data, sz);
  b[0] ^= 1;
  CHECK_ERROR(dml_kpkg_decode(b, sz, DML_KPKG_TARGET_SPIRV, g, &k), DML_STATUS_DATA_LOSS,
              "bad magic");
  /* first kernel's first node index (after header 16, fn 8, name 32, kind+count 8) */
  memcpy(b, ss->data, sz);
  b[16 + 8 + 32 + 8] = 200;
  CHECK_ERROR(dml_kpkg_decode(b, sz, DML_KPKG_TARGET_SPIRV, g, &k), DML_STATUS_DATA_LOSS,
              "node indices out of range");
  /* workgroup size 0 */
  memcpy(b, ss->data, sz);
  memset(b + 16 + 8 + 32 + 8 + 4 * 4, 0, 4);
  CHECK_ERROR(dml_kpkg_decode(b, sz, DML_KPKG_TARGET_SPIRV, g, &k), DML_STATUS_DATA_LOSS,
              "workgroup size");
  /* the SPIR-V magic word of the first kernel: after local 12 + 5 lins 120 + size 4 */
  memcpy(b, ss->data, sz);
  b[16 + 8 + 32 + 8 + 4 * 4 + 12 + 120 + 4] ^= 0xFF;
  CHECK_ERROR(dml_kpkg_decode(b, sz, DML_KPKG_TARGET_SPIRV, g, &k), DML_STATUS_DATA_LOSS,
              "not a SPIR-V module");
  free(b);
  dml_pkg_graph_release(g);
  free(bytes);
}

/* Run-time dims: a Reshape fed its shape at run time gives one
 * data-dependent symbol per dim; the copy and the elementwise kernel over
 * them count their invocations as a product of those symbols (dml_klin_t's
 * `more`), which the printer shows, dml_klin_eval multiplies, and the
 * kernel section stores in each count's fourth word (decode(encode(x)) ==
 * x; a bit of a symbol the graph lacks is DATA_LOSS). */
static void test_schedule_rtdims(void) {
  const char *text =
      "func @forward(%x: f32[2,3,4], %sh: i64[3]) -> (f32[?], f32[?]) {\n"
      "  %r = Reshape(%x, %sh) : f32[?]\n  %e = Exp(%r) : f32[?]\n"
      "  return %r, %e\n}\n";
  size_t n = 0;
  void *bytes = cg_package(text, "vulkan", &n);
  if (!bytes) return;
  dml_pkg_t pkg;
  dml_pkg_graph_t *g = graph_of(bytes, n, &pkg);
  const dml_pkg_section_t *ws = dml_pkg_find_section(&pkg, "weights");
  dml_kplan_t *p = NULL;
  if (g) CHECK_OK(dml_kschedule(g, 0, ws ? ws->data : NULL, ws ? ws->size : 0, &p));
  if (p && g) {
    CHECK(g->n_symbols == 3 && p->n_kernels == 2);
    const dml_klin_t *it = &p->kernels[p->n_kernels - 1].items[0];
    CHECK(it->sym == 0 && it->more == 6u && it->c == 1);
    const int64_t sv[3] = {4, 3, 2};
    CHECK(dml_klin_eval(*it, sv, 3) == 24);
    char *out = NULL;
    size_t tn = 0;
    FILE *f = open_memstream(&out, &tn);
    dml_kplan_print(p, g, f);
    fclose(f);
    char want[256];
    snprintf(want, sizeof want, "items=(1*%s*%s*%s,1,1)", g->symbols[0].name,
             g->symbols[1].name, g->symbols[2].name);
    CHECK(strstr(out, want) != NULL);
    if (!strstr(out, want)) fprintf(stderr, "%s\nwanted %s\n", out, want);
    free(out);
    dml_kplan_release(p);
  }
  const dml_pkg_section_t *ss = dml_pkg_find_section(&pkg, "kernels.spirv");
  dml_kpkg_t *k = NULL;
  if (ss && g)
    CHECK_OK(dml_kpkg_decode(ss->data, ss->size, DML_KPKG_TARGET_SPIRV, g, &k));
  if (k) {
    CHECK(k->functions[0].kernels[0].items[0].more == 6u);
    void *re = NULL;
    size_t rn = 0;
    CHECK_OK(dml_kpkg_encode(k, &re, &rn));
    CHECK(re && rn == ss->size && !memcmp(re, ss->data, rn));
    free(re);
    dml_kpkg_release(k);
    /* items[0]'s `more` word: header 16, fn 8, name 32, kind+count 8, one
     * node 4, local 12, then c0 8, c 8, sym 4 */
    uint8_t *b = (uint8_t *)malloc(ss->size);
    memcpy(b, ss->data, ss->size);
    b[16 + 8 + 32 + 8 + 4 + 12 + 20] |= 8; /* symbol 3 of 3 */
    CHECK_ERROR(dml_kpkg_decode(b, ss->size, DML_KPKG_TARGET_SPIRV, g, &k),
                DML_STATUS_DATA_LOSS, "invocation count");
    free(b);
  }
  dml_pkg_graph_release(g);
  free(bytes);
}

/* The runtime's loader validates kernel sections (a corrupted SPIR-V
 * section is a clear load error). */
static void test_loader_checks_kernels(void) {
  size_t n = 0;
  void *bytes = cg_package(k_mix, "vulkan,metal", &n);
  if (!bytes) return;
  dml_pkg_t pkg;
  CHECK_OK(dml_pkg_parse(bytes, n, &pkg));
  /* rebuild the package with a corrupted kernels.spirv (valid CRCs) */
  dml_pkg_writer_t *w = NULL;
  CHECK_OK(dml_pkg_writer_create(&w));
  uint8_t *bad = NULL;
  for (uint32_t i = 0; i < pkg.n_sections; i++) {
    const dml_pkg_section_t *s = &pkg.sections[i];
    const void *d = s->data;
    if (!strcmp(s->tag, "kernels.spirv")) {
      bad = (uint8_t *)malloc(s->size);
      memcpy(bad, s->data, s->size);
      bad[16 + 8 + 32 + 8 + 4 * 4 + 12 + 120 + 4] ^= 0xFF;
      d = bad;
    }
    CHECK_OK(dml_pkg_writer_add_section(w, s->tag, d, s->size, s->alignment));
  }
  void *nb = NULL;
  size_t nn = 0;
  CHECK_OK(dml_pkg_writer_finish_memory(w, &nb, &nn));
  dml_pkg_writer_release(w);
  dml_rt_model_t *m = NULL;
  CHECK_OK(dml_rt_model_load_memory(bytes, n, &m));
  dml_rt_model_release(m);
  CHECK_ERROR(dml_rt_model_load_memory(nb, nn, &m), DML_STATUS_DATA_LOSS,
              "section 'kernels.spirv' is corrupt: not a SPIR-V module");
  free(bad);
  free(nb);
  free(bytes);
}

int main(void) {
  RUN(test_schedule_groups);
  RUN(test_schedule_assign);
  RUN(test_unsupported_ops_listed);
  RUN(test_dropout_training_listed);
  RUN(test_msl_golden);
  RUN(test_msl_safe_math);
  RUN(test_kpkg_untrusted);
  RUN(test_loader_checks_kernels);
  RUN(test_schedule_rtdims);
  RUN(test_gemm_forms);
  RUN(test_kernel_in_place);
  return dml_test_finish();
}
