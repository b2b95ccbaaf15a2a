/* test_codegen_cuda.c — the cuda target (codegen/cuda/cuda.c): CUDA C and
 * PTX golden files, determinism, cubins when ptxas is present, the CUDA
 * image container and the "kernels.cuda" section as untrusted bytes, and
 * the errors (no clang, no ptxas, bad --cuda-arch, a clang failure). Runs
 * everywhere: no GPU needed. DMLC_UPDATE_GOLDEN=1 rewrites the golden
 * files in tests/codegen/golden/. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen_test_util.h"
#include "dml_codegen.h"
#include "dml_kernel.h"
#include "dml_kpkg.h"
#include "dml_pkg.h"
#include "dml_rt.h"

static const char k_add_sigmoid[] =
    "sym batch <= 8\n"
    "global @b : f32[4] = dense<[1.0, 2.0, 3.0, 4.0]>\n"
    "func @forward(%x: f32[batch,4]) -> (f32[batch,4]) {\n"
    "  %a = Add(%x, @b) : f32[batch,4]\n"
    "  %s = Sigmoid(%a) : f32[batch,4]\n"
    "  return %s\n}\n";

static const char k_gemm_relu[] =
    "sym batch <= 16\n"
    "global @w : f32[8,6] param\n"
    "global @b : f32[6] param = dense<[0.25, 0.5, -1.0, 1.5, 0.0, -0.5]>\n"
    "func @forward(%x: f32[batch,8]) -> (f32[batch,6], f32[batch,1]) {\n"
    "  %g = Gemm(%x, @w, @b) : f32[batch,6]\n"
    "  %r = Relu(%g) : f32[batch,6]\n"
    "  %t = Tanh(%r) : f32[batch,6]\n"
    "  %red = ReduceMax(%t) {axes = [1], keepdims = 1} : f32[batch,1]\n"
    "  return %t, %red\n"
    "}\n";

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

/* Compares `text` with tests/codegen/golden/<name>. */
static void golden(const char *name, const char *text) {
  char rel[256], path[1024];
  snprintf(rel, sizeof rel, "tests/codegen/golden/%s", name);
  dml_test_path("DMLC_SOURCE_DIR", rel, path, sizeof path);
  if (getenv("DMLC_UPDATE_GOLDEN")) {
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
      fputs(text, f);
      fclose(f);
    }
  }
  char *want = read_text(path);
  CHECK(want != NULL);
  if (want && strcmp(want, text)) {
    fprintf(stderr, "%s differs from %s:\n%s\n", name, path, text);
    CHECK(0);
  }
  free(want);
}

static dml_pkg_graph_t *graph_of(const void *bytes, size_t size, dml_pkg_t *pkg) {
  dml_pkg_graph_t *g = NULL;
  CHECK_OK(dml_pkg_parse(bytes, size, pkg));
  const dml_pkg_section_t *gs = dml_pkg_find_section(pkg, "graph");
  const dml_pkg_section_t *ws = dml_pkg_find_section(pkg, "weights");
  CHECK(gs != NULL);
  if (gs) CHECK_OK(dml_pkg_graph_decode(gs->data, gs->size, ws ? ws->size : 0, &g));
  return g;
}

/* The kernel plan of `text`'s forward. */
static dml_kplan_t *plan_of(const char *text, void **bytes, dml_pkg_graph_t **g) {
  size_t n = 0;
  *bytes = cg_package(text, NULL, &n);
  *g = NULL;
  if (!*bytes) return NULL;
  dml_pkg_t pkg;
  *g = graph_of(*bytes, n, &pkg);
  const dml_pkg_section_t *ws = dml_pkg_find_section(&pkg, "weights");
  dml_kplan_t *p = NULL;
  if (*g) CHECK_OK(dml_kschedule(*g, 0, ws ? ws->data : NULL, ws ? ws->size : 0, &p));
  return p;
}

/* CUDA C of an elementwise chain, a GEMM with its epilogue and a
 * reduction, and the PTX clang makes of the first. */
static void test_cuda_c_and_ptx_golden(void) {
  void *b1 = NULL, *b2 = NULL;
  dml_pkg_graph_t *g1 = NULL, *g2 = NULL;
  dml_kplan_t *p1 = plan_of(k_add_sigmoid, &b1, &g1);
  dml_kplan_t *p2 = plan_of(k_gemm_relu, &b2, &g2);
  CHECK(p1 && p1->n_kernels == 1 && p2 && p2->n_kernels == 2);
  if (p1 && p1->n_kernels == 1 && p2 && p2->n_kernels == 2) {
    char *c1 = NULL, *c2 = NULL, *c3 = NULL, *ptx = NULL;
    CHECK_OK(dml_codegen_cuda(&p1->kernels[0], 1, &c1));
    CHECK_OK(dml_codegen_cuda(&p2->kernels[0], 1, &c2));
    CHECK_OK(dml_codegen_cuda(&p2->kernels[1], 1, &c3));
    if (c1 && c2 && c3) {
      CHECK(strstr(c1, "extern \"C\" __global__") && strstr(c1, "k0_elementwise("));
      CHECK(strstr(c2, "__shared__ __attribute__((aligned(16))) float tile0[2048];") &&
            strstr(c2, "__syncthreads();"));
      golden("add_sigmoid.cu", c1);
      golden("gemm_relu_tanh.cu", c2);
      golden("reduce_max.cu", c3);
      CHECK(dml_codegen_cuda_clang() != NULL);
      CHECK_OK(dml_codegen_cuda_ptx(c1, 80, &ptx));
      if (ptx) {
        CHECK(strstr(ptx, ".target sm_80") && strstr(ptx, ".entry k0_elementwise("));
        CHECK(strstr(ptx, "ex2.approx") != NULL);
        CHECK(strstr(ptx, "call") == NULL); /* no libdevice / libm calls */
        golden("add_sigmoid.ptx", ptx);
      }
      /* every kernel compiles without external calls */
      char *ptx2 = NULL;
      CHECK_OK(dml_codegen_cuda_ptx(c2, 90, &ptx2));
      CHECK(ptx2 && strstr(ptx2, ".target sm_90") && !strstr(ptx2, "call"));
      free(ptx2);
    }
    free(c1);
    free(c2);
    free(c3);
    free(ptx);
  }
  dml_kplan_release(p1);
  dml_kplan_release(p2);
  dml_pkg_graph_release(g1);
  dml_pkg_graph_release(g2);
  free(b1);
  free(b2);
}

/* The register-blocked GEMM: its micro-tile's shared reads become 16-byte
 * vector loads (__builtin_assume_aligned on 16-byte aligned tiles), the
 * 8x8 micro-tile is 64 fused multiply-adds per K index, none spilled. */
static void test_gemm_vector_loads(void) {
  void *b = NULL;
  dml_pkg_graph_t *g = NULL;
  dml_kplan_t *p = plan_of(
      "func @forward(%a: f32[2048,64], %b: f32[64,2048]) -> (f32[2048,2048]) {\n"
      "  %c = MatMul(%a, %b) : f32[2048,2048]\n  return %c\n}\n",
      &b, &g);
  CHECK(p && p->n_kernels == 1);
  if (p && p->n_kernels == 1) {
    char *c = NULL, *ptx = NULL;
    CHECK_OK(dml_codegen_cuda(&p->kernels[0], 0, &c));
    CHECK(c &&
          strstr(c, "__builtin_assume_aligned(tile0 + ((lid_x / 16u) * 4u), 16))[0u]"));
    if (c) CHECK_OK(dml_codegen_cuda_ptx(c, 90, &ptx));
    if (ptx) {
      int v4 = 0, s1 = 0, fma = 0;
      for (const char *q = ptx; (q = strstr(q, "ld.shared.")); q++) {
        if (!strncmp(q, "ld.shared.v4.f32", 16)) v4++;
        if (!strncmp(q, "ld.shared.f32", 13)) s1++;
      }
      for (const char *q = ptx; (q = strstr(q, "fma.rn.f32")); q++) fma++;
      /* per K index: 2 vector loads of A, 2 of B; 8 K indices unrolled */
      printf("gemm PTX: %d ld.shared.v4.f32, %d ld.shared.f32, %d fma.rn.f32\n", v4, s1,
             fma);
      CHECK(v4 == 32 && s1 == 0 && fma == 512);
    }
    free(c);
    free(ptx);
  }
  dml_kplan_release(p);
  dml_pkg_graph_release(g);
  free(b);
}

/* Every scalar function renders and compiles (no unresolved calls). */
static void test_every_function_compiles(void) {
  void *b = NULL;
  dml_pkg_graph_t *g = NULL;
  dml_kplan_t *p = plan_of(
      "func @forward(%x: f32[3,5], %y: f32[3,5]) -> (f32[3,5]) {\n"
      "  %a = Abs(%x) : f32[3,5]\n  %b = Exp(%a) : f32[3,5]\n  %c = Log(%b) : f32[3,5]\n"
      "  %d = Sqrt(%c) : f32[3,5]\n  %e = Tanh(%d) : f32[3,5]\n"
      "  %f = Sigmoid(%e) : f32[3,5]\n  %h = Floor(%f) : f32[3,5]\n"
      "  %i = Ceil(%h) : f32[3,5]\n  %j = Reciprocal(%i) : f32[3,5]\n"
      "  %k = Sin(%j) : f32[3,5]\n  %l = Cos(%k) : f32[3,5]\n  %m = Neg(%l) : f32[3,5]\n"
      "  %n = Pow(%m, %y) : f32[3,5]\n  %o = Max(%n, %y) : f32[3,5]\n"
      "  %q = Min(%o, %x) : f32[3,5]\n  %r = Div(%q, %y) : f32[3,5]\n"
      "  %s = Sub(%r, %x) : f32[3,5]\n  %t = Relu(%s) : f32[3,5]\n"
      "  return %t\n}\n",
      &b, &g);
  CHECK(p && p->n_kernels == 1);
  if (p && p->n_kernels == 1) {
    char *c = NULL, *ptx = NULL;
    CHECK_OK(dml_codegen_cuda(&p->kernels[0], 0, &c));
    static const char *const fns[] = {
        "__builtin_fabsf(", "dml_exp(",          "dml_log(",         "__builtin_sqrtf(",
        "dml_sigmoid(",     "__builtin_floorf(", "__builtin_ceilf(", "(1.0f / ",
        "dml_sin(",         "dml_cos(",          "dml_pow("};
    /* (Tanh is kernel_math's dml_kv_tanh, e / (e + 2) with e = expm1(2x),
     * on every renderer: no dml_tanh call) */
    /* Max, Min and Relu are selects that keep a NaN operand, as the CPU
     * does (fmaxf/fminf would return the other operand) */
    CHECK(c && !strstr(c, "__builtin_fmaxf(") && !strstr(c, "__builtin_fminf("));
    for (size_t i = 0; c && i < sizeof fns / sizeof fns[0]; i++) {
      if (!strstr(strstr(c, "extern \"C\""), fns[i])) {
        fprintf(stderr, "missing %s\n", fns[i]);
        CHECK(0);
      }
    }
    if (c) CHECK_OK(dml_codegen_cuda_ptx(c, 80, &ptx));
    CHECK(ptx && !strstr(ptx, "call"));
    free(c);
    free(ptx);
  }
  dml_kplan_release(p);
  dml_pkg_graph_release(g);
  free(b);
}

/* Kernels of the dtypes beyond f32 (f16, bf16, f64, i16, u16, u32, u64):
 * the CUDA C of a small one against a golden file (16-bit words through
 * the prelude's dml_h2f / dml_f2h / dml_b2f / dml_f2b bit conversions, no
 * CUDA headers), and PTX without external calls for each kernel of a
 * model holding every one of these dtypes (f64 natively: sqrt.rn.f64;
 * exp and log of doubles from the prelude's dml_exp64 / dml_log64, no
 * libdevice). */
static void test_more_dtypes(void) {
  void *b = NULL;
  dml_pkg_graph_t *g = NULL;
  dml_kplan_t *p = plan_of(
      "sym batch <= 8\n"
      "global @k : u32[] = dense<[3]>\n"
      "func @forward(%h: f16[batch,4], %x: f32[batch,4], %u: u32[batch,4]) -> "
      "(bf16[batch,4], u32[batch,4]) {\n"
      "  %a = Add(%h, %h) : f16[batch,4]\n"
      "  %f = Cast(%a) {to = 1} : f32[batch,4]\n"
      "  %m = Mul(%f, %x) : f32[batch,4]\n"
      "  %c = Cast(%m) {to = 16} : bf16[batch,4]\n"
      "  %d = Div(%u, @k) : u32[batch,4]\n"
      "  %r = Mod(%d, %u) : u32[batch,4]\n"
      "  return %c, %r\n}\n",
      &b, &g);
  CHECK(p && p->n_kernels >= 1);
  if (p && p->n_kernels >= 1) {
    char *c = NULL, *ptx = NULL;
    CHECK_OK(dml_codegen_cuda(&p->kernels[0], 1, &c));
    CHECK(c && strstr(c, "dml_h2f(") && strstr(c, "dml_f2b(") && strstr(c, "dml_udiv(") &&
          strstr(c, "unsigned short *arena_u16"));
    if (c) golden("dtypes_f16_bf16_u32.cu", c);
    if (c) CHECK_OK(dml_codegen_cuda_ptx(c, 80, &ptx));
    CHECK(ptx && !strstr(ptx, "call"));
    free(c);
    free(ptx);
  }
  dml_kplan_release(p);
  dml_pkg_graph_release(g);
  free(b);
  p = plan_of(
      "sym batch <= 8\n"
      "func @forward(%h: f16[batch,4], %d: f64[batch,4], %s: i16[batch,4], "
      "%w: u16[batch,4], %q: u64[batch,4]) -> (f64[batch,4], f16[batch,4], "
      "i16[batch,4], u16[batch,4], u64[batch,4], f64[batch]) {\n"
      "  %df = Cast(%h) {to = 11} : f64[batch,4]\n"
      "  %dm = Mul(%d, %df) : f64[batch,4]\n"
      "  %da = Abs(%dm) : f64[batch,4]\n"
      "  %dq = Sqrt(%da) : f64[batch,4]\n"
      "  %de = Exp(%dq) : f64[batch,4]\n"
      "  %dl = Log(%de) : f64[batch,4]\n"
      "  %dr = Mod(%dl, %d) {fmod = 1} : f64[batch,4]\n"
      "  %dh = Cast(%dr) {to = 10} : f16[batch,4]\n"
      "  %s2 = Mul(%s, %s) : i16[batch,4]\n"
      "  %sp = Pow(%s2, %s) : i16[batch,4]\n"
      "  %wc = Cast(%sp) {to = 4} : u16[batch,4]\n"
      "  %wm = Max(%wc, %w) : u16[batch,4]\n"
      "  %q2 = Mul(%q, %q) : u64[batch,4]\n"
      "  %qd = Div(%q2, %q) : u64[batch,4]\n"
      "  %rd = ReduceMax(%dr) {axes = [1], keepdims = 0} : f64[batch]\n"
      "  return %dr, %dh, %sp, %wm, %qd, %rd\n}\n",
      &b, &g);
  CHECK(p && p->n_kernels >= 2);
  int f64_sqrt = 0, f64_exp_log = 0;
  for (uint32_t i = 0; p && i < p->n_kernels; i++) {
    char *c = NULL, *ptx = NULL;
    CHECK_OK(dml_codegen_cuda(&p->kernels[i], 1, &c));
    if (c) CHECK_OK(dml_codegen_cuda_ptx(c, 90, &ptx));
    CHECK(ptx && !strstr(ptx, "call"));
    if (ptx && strstr(ptx, "sqrt.rn.f64")) f64_sqrt = 1;
    const char *body = c ? strstr(c, "extern \"C\"") : NULL;
    if (body && strstr(body, "dml_exp64(") && strstr(body, "dml_log64(")) f64_exp_log = 1;
    free(c);
    free(ptx);
  }
  CHECK(f64_sqrt && f64_exp_log);
  dml_kplan_release(p);
  dml_pkg_graph_release(g);
  free(b);
}

static const dml_pkg_section_t *cuda_section(dml_pkg_t *pkg, const void *bytes,
                                             size_t n) {
  CHECK_OK(dml_pkg_parse(bytes, n, pkg));
  return dml_pkg_find_section(pkg, "kernels.cuda");
}

/* The same model gives the same package bytes, whatever the number of
 * clang/ptxas runs in parallel (DMLC_CUDA_JOBS: one, then three for two
 * kernels); PTX-only packages hold one image per kernel, with ptxas two
 * more (sm_80, sm_90 cubins). */
static void test_section_deterministic(void) {
  size_t n1 = 0, n2 = 0;
  void *a = cg_package(k_gemm_relu, NULL, &n1);
  void *b = a ? malloc(n1) : NULL;
  if (!a || !b) {
    free(a);
    return;
  }
  memcpy(b, a, n1);
  n2 = n1;
  setenv("DMLC_CUDA_JOBS", "1", 1);
  CHECK_OK(dml_compile_add_kernels_arch("cuda", "ptx", 0, NULL, &a, &n1));
  setenv("DMLC_CUDA_JOBS", "3", 1);
  CHECK_OK(dml_compile_add_kernels_arch("cuda", "ptx", 0, NULL, &b, &n2));
  unsetenv("DMLC_CUDA_JOBS");
  CHECK(n1 == n2 && !memcmp(a, b, n1));
  dml_pkg_t pkg;
  const dml_pkg_section_t *cs = cuda_section(&pkg, a, n1);
  dml_pkg_graph_t *g = graph_of(a, n1, &pkg);
  CHECK(cs && g);
  dml_kpkg_t *k = NULL;
  if (cs && g) CHECK_OK(dml_kpkg_decode(cs->data, cs->size, DML_KPKG_TARGET_CUDA, g, &k));
  if (k) {
    CHECK(k->n_functions == 1 && k->functions[0].n_kernels == 2);
    dml_kpkg_cuda_image_t im[DML_KPKG_CUDA_MAX_IMAGES];
    uint32_t ni = 0;
    const dml_kpkg_kernel_t *K = &k->functions[0].kernels[0];
    CHECK_OK(dml_kpkg_cuda_images(K->code, K->code_bytes, im, &ni));
    CHECK(ni == 1 && im[0].kind == DML_KPKG_CUDA_PTX && im[0].sm == 80);
    /* the runtime loads the package and validates the section */
    dml_rt_model_t *m = NULL;
    CHECK_OK(dml_rt_model_load_memory(a, n1, &m));
    dml_rt_model_release(m);
  }
  dml_kpkg_release(k);
  dml_pkg_graph_release(g);
  free(a);
  free(b);
  if (!dml_codegen_cuda_ptxas()) {
    printf("ptxas not found: the cubin checks are skipped\n");
    return;
  }
  a = cg_package(k_add_sigmoid, NULL, &n1);
  b = a ? malloc(n1) : NULL;
  if (!a || !b) {
    free(a);
    return;
  }
  memcpy(b, a, n1);
  n2 = n1;
  CHECK_OK(dml_compile_add_kernels_arch("cuda", NULL, 0, NULL, &a, &n1));
  CHECK_OK(dml_compile_add_kernels_arch("cuda", "sm_80,sm_90", 0, NULL, &b, &n2));
  CHECK(n1 == n2 && !memcmp(a, b, n1));
  cs = cuda_section(&pkg, a, n1);
  g = graph_of(a, n1, &pkg);
  k = NULL;
  if (cs && g) CHECK_OK(dml_kpkg_decode(cs->data, cs->size, DML_KPKG_TARGET_CUDA, g, &k));
  if (k) {
    dml_kpkg_cuda_image_t im[DML_KPKG_CUDA_MAX_IMAGES];
    uint32_t ni = 0;
    const dml_kpkg_kernel_t *K = &k->functions[0].kernels[0];
    CHECK_OK(dml_kpkg_cuda_images(K->code, K->code_bytes, im, &ni));
    CHECK(ni == 3 && im[0].kind == DML_KPKG_CUDA_PTX &&
          im[1].kind == DML_KPKG_CUDA_CUBIN && im[1].sm == 80 &&
          im[2].kind == DML_KPKG_CUDA_CUBIN && im[2].sm == 90);
  }
  dml_kpkg_release(k);
  dml_pkg_graph_release(g);
  free(a);
  free(b);
}

/* Image `im`'s bytes as a NUL-terminated string (malloc'd), or NULL. */
static char *image_text(const dml_kpkg_cuda_image_t *im) {
  char *t = (char *)malloc(im->size + 1);
  if (t) {
    memcpy(t, im->data, im->size);
    t[im->size] = 0;
  }
  return t;
}

/* --allow-tf32 on the IR `ir` (batch 16, N <= 256): every kernel of kind
 * `kind` with a tensor-core form becomes it (named *_tf32, 256-thread
 * blocks, one per 128 x 256 tile, PTX for sm_80 with TF32 mma.sync and
 * cvt.rna.tf32); `plain` of them and every other kernel keep their form
 * and have no sm_90a image. GEMMs (`wg` >= 0) also get PTX for exactly
 * sm_90a (image kind DML_KPKG_CUDA_PTX_ARCH, PTX ISA 8.0) with warpgroup
 * MMA: the register-operand m64n128k8 form when B is stored [K, N] (`wg`
 * 1), else the descriptor form m64n256k8 (`wg` 0), with its fences, commit
 * groups and waits; convolutions (`wg` -1) keep mma.sync only. With
 * ptxas, `--cuda-arch sm_80,sm_90` adds cubins of both programs (ptxas
 * accepts the sm_90a PTX) and `--cuda-arch sm_80` leaves the wgmma form
 * out. Returns the number of tensor-core kernels of the first pass. The
 * numerics are checked on a GPU (tests/cuda). */
static int tf32_forms(const char *ir, dml_kernel_kind_t kind, int plain, int wg) {
  int first = 0;
  for (int pass = 0; pass < 3; pass++) {
    static const char *const arch[3] = {"ptx", "sm_80,sm_90", "sm_80"};
    if (pass && !dml_codegen_cuda_ptxas()) {
      printf("ptxas not found: the sm_90a cubin checks are skipped\n");
      break;
    }
    size_t n = 0;
    void *a = cg_package(ir, NULL, &n);
    if (!a) return 0;
    CHECK_OK(dml_compile_add_kernels_arch("cuda", arch[pass], 1, NULL, &a, &n));
    dml_pkg_t pkg;
    const dml_pkg_section_t *cs = cuda_section(&pkg, a, n);
    dml_pkg_graph_t *g = graph_of(a, n, &pkg);
    dml_kpkg_t *k = NULL;
    if (cs && g)
      CHECK_OK(dml_kpkg_decode(cs->data, cs->size, DML_KPKG_TARGET_CUDA, g, &k));
    int forms = 0, kept = 0;
    for (uint32_t i = 0; k && i < k->functions[0].n_kernels; i++) {
      const dml_kpkg_kernel_t *K = &k->functions[0].kernels[i];
      dml_kpkg_cuda_image_t im[DML_KPKG_CUDA_MAX_IMAGES];
      uint32_t ni = 0;
      CHECK_OK(dml_kpkg_cuda_images(K->code, K->code_bytes, im, &ni));
      char *ptx = ni ? image_text(&im[0]) : NULL;
      if (!ptx) continue;
      int mma =
          strstr(ptx, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32") != NULL &&
          strstr(ptx, "cvt.rna.tf32.f32") != NULL && !strstr(ptx, "wgmma");
      int n_arch = 0;
      for (uint32_t j = 0; j < ni; j++) n_arch += im[j].kind >= DML_KPKG_CUDA_PTX_ARCH;
      if (!(K->kind == kind && strstr(K->name, "_tf32"))) {
        kept += K->kind == kind;
        CHECK(!mma && !strstr(K->name, "_tf32") && n_arch == 0);
        free(ptx);
        continue;
      }
      forms++;
      CHECK(mma);
      /* batch 16: one 256-column tile of 256 threads along x */
      CHECK(K->local[0] == 256 && K->local[1] == 1 && K->local[2] == 1);
      CHECK(dml_kpkg_lin_eval(K->items[0], (const int64_t[]){16}, 1) == 256);
      CHECK(dml_kpkg_lin_eval(K->items[1], (const int64_t[]){16}, 1) >= 1);
      /* ptx: PTX sm_80 (+ PTX sm_90a); sm_80,sm_90: + cubins sm_80, sm_90
       * (+ sm_90a); sm_80: PTX and cubin sm_80 */
      static const uint32_t want_n[3] = {1, 3, 2}, want_arch[3] = {1, 2, 0};
      uint32_t extra = wg >= 0 ? want_arch[pass] : 0;
      CHECK(ni == want_n[pass] + extra && n_arch == (int)extra);
      for (uint32_t j = 0; j < ni; j++) {
        if (im[j].kind == DML_KPKG_CUDA_CUBIN_ARCH) CHECK(im[j].sm == 90);
        if (im[j].kind != DML_KPKG_CUDA_PTX_ARCH) continue;
        char *w = image_text(&im[j]);
        CHECK(w && im[j].sm == 90);
        if (!w) continue;
        CHECK(strstr(w, "\n.version 8.0\n") && strstr(w, "\n.target sm_90a\n"));
        CHECK(strstr(w, wg ? "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32"
                           : "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32") !=
              NULL);
        CHECK(strstr(w, "wgmma.fence.sync.aligned") &&
              strstr(w, "wgmma.commit_group.sync.aligned") &&
              strstr(w, "wgmma.wait_group.sync.aligned") &&
              strstr(w, "fence.proxy.async.shared::cta") && strstr(w, "cp.async"));
        CHECK(!strstr(w, "mma.sync"));
        CHECK((strstr(w, "cvt.rna.tf32.f32") != NULL) == (wg == 1));
        char sym[96];
        snprintf(sym, sizeof sym, "%s_dynamic_smem", K->name);
        CHECK(strstr(w, sym) != NULL);
        free(w);
      }
      free(ptx);
    }
    CHECK(kept == plain);
    if (!pass) first = forms;
    /* the runtime validates and loads the package (no device needed) */
    dml_rt_model_t *m = NULL;
    CHECK_OK(dml_rt_model_load_memory(a, n, &m));
    dml_rt_model_release(m);
    dml_kpkg_release(k);
    dml_pkg_graph_release(g);
    free(a);
  }
  return first;
}

static void test_tf32_form(void) {
  /* at most 64 rows at the bound: the small-M form is kept */
  CHECK(tf32_forms(k_gemm_relu, DML_KK_GEMM, 1, 1) == 0);
  char big[sizeof k_gemm_relu + 8];
  snprintf(big, sizeof big, "sym batch <= 300%s", strchr(k_gemm_relu, '\n'));
  CHECK(tf32_forms(big, DML_KK_GEMM, 0, 1) == 1);
  CHECK(tf32_forms("sym batch <= 300\n"
                   "global @w : f32[6,8] param\n"
                   "func @forward(%x: f32[batch,8]) -> (f32[batch,6]) {\n"
                   "  %g = Gemm(%x, @w) {transB = 1} : f32[batch,6]\n"
                   "  return %g\n}\n",
                   DML_KK_GEMM, 0, 0) == 1);
  /* convolutions of group 1 with C * kh * kw >= 64 are implicit GEMMs
   * (dml_kconv_t) on the mma.sync form only; a grouped one and a 1x1 one
   * keep the direct form */
  CHECK(tf32_forms("sym batch <= 16\n"
                   "global @w : f32[8,8,3,3] param\n"
                   "global @v : f32[8,4,3,3] param\n"
                   "global @u : f32[8,8,1,1] param\n"
                   "func @forward(%x: f32[batch,8,9,9]) -> (f32[batch,8,9,9]) {\n"
                   "  %c = Conv(%x, @w) {pads = [1, 1, 1, 1]} : f32[batch,8,9,9]\n"
                   "  %r = Relu(%c) : f32[batch,8,9,9]\n"
                   "  %d = Conv(%r, @v) {group = 2, pads = [1, 1, 1, 1]} : "
                   "f32[batch,8,9,9]\n"
                   "  %e = Conv(%d, @u) : f32[batch,8,9,9]\n"
                   "  return %e\n}\n",
                   DML_KK_CONV, 2, -1) == 1);
}

/* clang's sm_90 PTX raised to PTX ISA 8.0 / sm_90a, and the error for text
 * without the lines. */
static void test_sm90a_ptx(void) {
  char *o = NULL;
  CHECK_OK(dml_codegen_cuda_sm90a_ptx(
      "//\n.version 7.8\n.target sm_90\n.address_size 64\nret;\n", &o));
  CHECK(o && !strcmp(o, "//\n.version 8.0\n.target sm_90a\n.address_size 64\nret;\n"));
  free(o);
  o = NULL;
  dml_status_t s = dml_codegen_cuda_sm90a_ptx("//\n.version 7.8\n.target sm_80\n", &o);
  CHECK(s && dml_status_code(s) == DML_STATUS_INTERNAL && o == NULL);
  CHECK(s && strstr(dml_status_reason(s), "sm_90a"));
  dml_status_free(s);
}

/* The f16/bf16 tensor-core form (no flag; `tf32`: --allow-tf32 as well) on
 * the IR `text` for `arch`: returns the number of GEMM and convolution
 * kernels named *_mma_f16 / *_mma_bf16, each checked for 256-thread
 * blocks, ceil(N / 256) * 256 invocations along x (batch 300) and PTX with
 * mma.sync m16n8k16 of its dtype (f32 accumulators), no TF32 mma, 16-byte
 * cp.async (a GEMM's; a convolution's where W's rows are aligned) and no
 * calls; every other kernel keeps its form (no m16n8k16). Sets *plain to
 * the number of GEMM and convolution kernels kept
 * and *wg to the number with an sm_90a image (PTX ISA 8.0): warpgroup MMA
 * of the dtype, m64n128k16 with register fragments when B is stored
 * [K, N] (ldmatrix .trans), m64n256k16 from descriptors when B is stored
 * [N, K]. The
 * numerics are checked on a GPU (tests/cuda half_0_gemm). */
static int mma16_forms(const char *text, const char *arch, int tf32, int *plain,
                       int *wg) {
  size_t n = 0;
  *plain = 0, *wg = 0;
  void *a = cg_package(text, NULL, &n);
  if (!a) return 0;
  CHECK_OK(dml_compile_add_kernels_arch("cuda", arch, tf32, NULL, &a, &n));
  dml_pkg_t pkg;
  const dml_pkg_section_t *cs = cuda_section(&pkg, a, n);
  dml_pkg_graph_t *g = graph_of(a, n, &pkg);
  dml_kpkg_t *k = NULL;
  if (cs && g) CHECK_OK(dml_kpkg_decode(cs->data, cs->size, DML_KPKG_TARGET_CUDA, g, &k));
  int forms = 0;
  for (uint32_t i = 0; k && i < k->functions[0].n_kernels; i++) {
    const dml_kpkg_kernel_t *K = &k->functions[0].kernels[i];
    dml_kpkg_cuda_image_t im[DML_KPKG_CUDA_MAX_IMAGES];
    uint32_t ni = 0;
    CHECK_OK(dml_kpkg_cuda_images(K->code, K->code_bytes, im, &ni));
    char *ptx = ni ? (char *)malloc(im[0].size + 1) : NULL;
    if (!ptx) continue;
    memcpy(ptx, im[0].data, im[0].size);
    ptx[im[0].size] = 0;
    const char *bf = strstr(K->name, "_mma_bf16"), *hf = strstr(K->name, "_mma_f16");
    int f16 = strstr(ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") != NULL;
    int b16 = strstr(ptx, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32") != NULL;
    if (bf || hf) {
      forms++;
      const int conv = K->kind == DML_KK_CONV;
      CHECK((conv || K->kind == DML_KK_GEMM) && (hf ? f16 && !b16 : b16 && !f16));
      CHECK(!strstr(ptx, ".tf32"));
      if (!conv) CHECK(strstr(ptx, "cp.async.cg.shared.global") != NULL);
      CHECK(strstr(ptx, "call.uni") == NULL);
      CHECK(K->local[0] == 256 && K->local[1] == 1 && K->local[2] == 1);
      int64_t nx = dml_kpkg_lin_eval(K->items[0], (const int64_t[]){300}, 1);
      CHECK(nx == 256);
      for (uint32_t j = 1; j < ni; j++) {
        if (im[j].kind == DML_KPKG_CUDA_CUBIN_ARCH) CHECK(im[j].sm == 90);
        if (im[j].kind != DML_KPKG_CUDA_PTX_ARCH) continue;
        char *w = image_text(&im[j]);
        CHECK(w && im[j].sm == 90);
        if (!w) continue;
        /* the register-fragment form for the f16 Gemm (B [K, N]), the
         * descriptor form for the bf16 one (transB) */
        char want[96];
        snprintf(want, sizeof want, "wgmma.mma_async.sync.aligned.m64n%sk16.f32.%s.%s",
                 hf ? "128" : "256", hf ? "f16" : "bf16", hf ? "f16" : "bf16");
        CHECK(strstr(w, "\n.target sm_90a\n") && strstr(w, want) &&
              !strstr(w, "mma.sync"));
        CHECK((strstr(w, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") != NULL) ==
              (hf != NULL));
        (*wg)++;
        free(w);
      }
    } else {
      *plain += K->kind == DML_KK_GEMM || K->kind == DML_KK_CONV;
      CHECK(!f16 && !b16);
    }
    free(ptx);
  }
  dml_kpkg_release(k);
  dml_pkg_graph_release(g);
  free(a);
  return forms;
}

static void test_mma16_form(void) {
  /* f16 with a bias and a Relu, bf16 with transA and transB (rows of 8
   * elements: 16 bytes), a symbolic M over 128-row tiles; a small M keeps
   * the K-split form, K = 36 (rows of 72 bytes) the tiled CUDA-core form */
  static const char text[] =
      "sym batch <= 300\n"
      "global @w : f16[64,40] param\n"
      "global @c : f16[40] param\n"
      "global @v : bf16[24,96] param\n"
      "global @o : bf16[48,64] param\n"
      "func @forward(%x: f16[batch,64], %a: bf16[96,136], %s: f16[8,64], "
      "%p: f16[200,36], %q: f16[36,16], %b: bf16[batch,64]) -> (f16[batch,40], "
      "bf16[136,24], f16[8,40], f16[200,16], bf16[batch,48]) {\n"
      "  %g = Gemm(%x, @w, @c) : f16[batch,40]\n"
      "  %r = Relu(%g) : f16[batch,40]\n"
      "  %h = Gemm(%b, @o) {transB = 1} : bf16[batch,48]\n"
      "  %t = Gemm(%a, @v) {transA = 1, transB = 1, alpha = 0.5} : bf16[136,24]\n"
      "  %u = MatMul(%s, @w) : f16[8,40]\n"
      "  %z = MatMul(%p, %q) : f16[200,16]\n"
      "  return %r, %t, %u, %z, %h\n}\n";
  /* sm_90a images for the two GEMMs with A stored [M, K] (one per form);
   * the transposed-A one has mma.sync only; --cuda-arch without sm_90
   * leaves them out */
  int plain = 0, wg = 0;
  CHECK(mma16_forms(text, "ptx", 0, &plain, &wg) == 3);
  CHECK(plain == 2 && wg == 2);
  if (dml_codegen_cuda_ptxas()) {
    CHECK(mma16_forms(text, "sm_80", 0, &plain, &wg) == 3);
    CHECK(plain == 2 && wg == 0);
    /* ptxas assembles the sm_90a PTX (the cubins of both forms) */
    CHECK(mma16_forms(text, "sm_80,sm_90", 0, &plain, &wg) == 3);
    CHECK(plain == 2 && wg == 2);
  } else {
    printf("ptxas not found: the f16/bf16 cubin checks are skipped\n");
  }
}

/* f16/bf16 convolutions: implicit GEMMs on the m16n8k16 form where group
 * 1 and C * kh * kw >= 64 (an f16 3x3 C 16 conv with a bias and Relu and
 * W's rows 16-byte aligned: its W tile by cp.async; a bf16 3x3 stride 2
 * dilated C 12 one, K = 108: 2-byte loads, no cp.async; a 1-D f16 one),
 * the direct form for a depthwise one and a 1x1 C 16 one (K = 16); no sm_90a
 * image for convolutions; --allow-tf32 leaves them on the f16/bf16 form.
 * The numerics: tests/cuda/conv_emu on the host, test_cuda conv_tc_* on a
 * GPU. */
static void test_mma16_conv_form(void) {
  static const char text[] =
      "sym batch <= 300\n"
      "global @w : f16[24,16,3,3] param\n"
      "global @b : f16[24] param\n"
      "global @d : f16[24,1,3,3] param\n"
      "global @p : f16[16,24,1,1] param\n"
      "global @v : bf16[20,12,3,3] param\n"
      "global @u : f16[8,24,3] param\n"
      "func @forward(%x: f16[batch,16,9,9], %y: bf16[batch,12,13,10], "
      "%s: f16[batch,24,37]) -> (f16[batch,16,9,9], bf16[batch,20,5,5], "
      "f16[batch,8,19]) {\n"
      "  %c = Conv(%x, @w, @b) {pads = [1, 1, 1, 1]} : f16[batch,24,9,9]\n"
      "  %r = Relu(%c) : f16[batch,24,9,9]\n"
      "  %e = Conv(%r, @d) {group = 24, pads = [1, 1, 1, 1]} : f16[batch,24,9,9]\n"
      "  %f = Conv(%e, @p) : f16[batch,16,9,9]\n"
      "  %g = Conv(%y, @v) {strides = [2, 2], dilations = [2, 1], pads = [1, 0, 0, 1]} : "
      "bf16[batch,20,5,5]\n"
      "  %h = Conv(%s, @u) {strides = [2], pads = [1, 1]} : f16[batch,8,19]\n"
      "  return %f, %g, %h\n}\n";
  int plain = 0, wg = 0;
  CHECK(mma16_forms(text, "ptx", 0, &plain, &wg) == 3);
  CHECK(plain == 2 && wg == 0);
  CHECK(mma16_forms(text, "ptx", 1, &plain, &wg) == 3);
  CHECK(plain == 2 && wg == 0);
  if (dml_codegen_cuda_ptxas()) {
    CHECK(mma16_forms(text, "sm_80,sm_90", 0, &plain, &wg) == 3);
    CHECK(plain == 2 && wg == 0);
  }
}

/* The 1x1 rule (conv16_direct_1x1, cuda_mma.c): a 1x1 f16/bf16 conv with
 * fewer than 132 output tiles of 128 x 128 at the batch bound keeps the
 * direct kernel, from 132 on the implicit GEMM; a 3x3 conv of one tile
 * keeps the implicit GEMM. 1x1 64 -> 96 at 8x16: 128 rows per image, one
 * column tile, so the batch bound is the tile count. */
static void test_conv16_direct_rule(void) {
  static const char *dts[2] = {"f16", "bf16"};
  for (int t = 0; t < 2; t++) {
    const char *d = dts[t];
    for (int bound = 131; bound <= 132; bound++) {
      char text[512];
      snprintf(text, sizeof text,
               "sym batch <= %d\n"
               "func @forward(%%x: %s[batch,64,8,16], %%w: %s[96,64,1,1]) -> "
               "(%s[batch,96,8,16]) {\n"
               "  %%y = Conv(%%x, %%w) : %s[batch,96,8,16]\n  return %%y\n}\n",
               bound, d, d, d, d);
      int plain = 0, wg = 0;
      CHECK(mma16_forms(text, "ptx", 0, &plain, &wg) == (bound == 132));
      CHECK(plain == (bound == 131) && wg == 0);
    }
    char text[512];
    snprintf(text, sizeof text,
             "func @forward(%%x: %s[1,16,8,8], %%w: %s[24,16,3,3]) -> (%s[1,24,8,8]) {\n"
             "  %%y = Conv(%%x, %%w) {pads = [1, 1, 1, 1]} : %s[1,24,8,8]\n"
             "  return %%y\n}\n",
             d, d, d, d);
    int plain = 0, wg = 0;
    CHECK(mma16_forms(text, "ptx", 0, &plain, &wg) == 1 && plain == 0);
  }
}

/* Corrupt CUDA code is DATA_LOSS, from the container parser and from the
 * model loader. */
static void test_cuda_untrusted(void) {
  size_t n = 0;
  void *a = cg_package(k_add_sigmoid, NULL, &n);
  if (!a) return;
  CHECK_OK(dml_compile_add_kernels_arch("cuda", "ptx", 0, NULL, &a, &n));
  dml_pkg_t pkg;
  const dml_pkg_section_t *cs = cuda_section(&pkg, a, n);
  dml_pkg_graph_t *g = graph_of(a, n, &pkg);
  if (!cs || !g) {
    dml_pkg_graph_release(g);
    free(a);
    return;
  }
  /* header 16, function 8, name 32, kind + count 8, one node 4 (node 0 of
   * two: Add and Sigmoid are nodes 0 and 1), local 12, lins 120, size 4 */
  dml_kpkg_t *k = NULL;
  CHECK_OK(dml_kpkg_decode(cs->data, cs->size, DML_KPKG_TARGET_CUDA, g, &k));
  size_t code_at = 0;
  if (k) {
    const dml_kpkg_kernel_t *K = &k->functions[0].kernels[0];
    code_at = (size_t)(K->code - cs->data);
    void *re = NULL;
    size_t rn = 0;
    CHECK_OK(dml_kpkg_encode(k, &re, &rn));
    CHECK(re && rn == cs->size && !memcmp(re, cs->data, rn));
    free(re);
  }
  dml_kpkg_release(k);
  uint8_t *b = (uint8_t *)malloc(cs->size);
  size_t sz = cs->size;
  struct {
    size_t at;
    uint8_t x;
    const char *why;
  } cases[] = {
      {0, 1, "bad magic"},          {4, 0x40, "image count"},
      {8, 7, "unknown image kind"}, {12, 0x80, "architecture out of 50..199"},
      {18, 0x7f, "image size"},
  };
  for (size_t c = 0; code_at && c < sizeof cases / sizeof cases[0]; c++) {
    memcpy(b, cs->data, sz);
    b[code_at + cases[c].at] ^= cases[c].x;
    char want[128];
    snprintf(want, sizeof want, "CUDA code: %s", cases[c].why);
    CHECK_ERROR(dml_kpkg_decode(b, sz, DML_KPKG_TARGET_CUDA, g, &k), DML_STATUS_DATA_LOSS,
                want);
  }
  /* a PTX image turned into a "cubin" is not an ELF image; a NUL in PTX */
  memcpy(b, cs->data, sz);
  b[code_at + 8] = 2;
  CHECK_ERROR(dml_kpkg_decode(b, sz, DML_KPKG_TARGET_CUDA, g, &k), DML_STATUS_DATA_LOSS,
              "cubin is not an ELF image");
  memcpy(b, cs->data, sz);
  b[code_at + 24] = 0;
  CHECK_ERROR(dml_kpkg_decode(b, sz, DML_KPKG_TARGET_CUDA, g, &k), DML_STATUS_DATA_LOSS,
              "NUL byte in PTX");
  for (size_t cut = 0; cut < sz; cut += (cut < 300 ? 1 : 61)) {
    dml_kpkg_t *kk = NULL;
    dml_status_t s = dml_kpkg_decode(cs->data, cut, DML_KPKG_TARGET_CUDA, g, &kk);
    CHECK(s && dml_status_code(s) == DML_STATUS_DATA_LOSS);
    dml_status_free(s);
    dml_kpkg_release(kk);
  }
  CHECK_ERROR(dml_kpkg_decode(cs->data, cs->size, DML_KPKG_TARGET_SPIRV, g, &k),
              DML_STATUS_DATA_LOSS, "wrong target");
  /* the loader: the same corruption inside a package with valid CRCs */
  dml_pkg_writer_t *w = NULL;
  CHECK_OK(dml_pkg_writer_create(&w));
  memcpy(b, cs->data, sz);
  b[code_at] ^= 1;
  for (uint32_t i = 0; w && i < pkg.n_sections; i++) {
    const dml_pkg_section_t *s = &pkg.sections[i];
    CHECK_OK(dml_pkg_writer_add_section(w, s->tag, s == cs ? b : s->data, s->size,
                                        s->alignment));
  }
  void *nb = NULL;
  size_t nn = 0;
  CHECK_OK(dml_pkg_writer_finish_memory(w, &nb, &nn));
  dml_pkg_writer_release(w);
  dml_rt_model_t *m = NULL;
  CHECK_ERROR(dml_rt_model_load_memory(nb, nn, &m), DML_STATUS_DATA_LOSS,
              "section 'kernels.cuda' is corrupt: CUDA code: bad magic");
  free(nb);
  free(b);
  dml_pkg_graph_release(g);
  free(a);
}

static void test_cuda_errors(void) {
  size_t n = 0;
  void *a = cg_package(k_add_sigmoid, NULL, &n);
  if (!a) return;
  CHECK_ERROR(dml_compile_add_kernels_arch("cuda", "sm_8", 0, NULL, &a, &n),
              DML_STATUS_INVALID_ARGUMENT, "bad --cuda-arch 'sm_8'");
  CHECK_ERROR(dml_compile_add_kernels_arch("cuda", "sm_80;sm_90", 0, NULL, &a, &n),
              DML_STATUS_INVALID_ARGUMENT, "bad --cuda-arch");
  char *old = getenv("DMLC_PTXAS") ? strdup(getenv("DMLC_PTXAS")) : NULL;
  setenv("DMLC_PTXAS", "", 1);
  CHECK_ERROR(dml_compile_add_kernels_arch("cuda", "sm_80", 0, NULL, &a, &n),
              DML_STATUS_FAILED_PRECONDITION, "--cuda-arch sm_80 needs ptxas");
  /* without ptxas the default is PTX only */
  void *c = malloc(n);
  size_t cn = n;
  memcpy(c, a, n);
  CHECK_OK(dml_compile_add_kernels_arch("cuda", NULL, 0, NULL, &c, &cn));
  free(c);
  if (old) {
    setenv("DMLC_PTXAS", old, 1);
    free(old);
  } else {
    unsetenv("DMLC_PTXAS");
  }
  setenv("DMLC_CLANG", "/nonexistent/clang-16", 1);
  CHECK_ERROR(dml_compile_add_kernels_arch("cuda", "ptx", 0, NULL, &a, &n),
              DML_STATUS_FAILED_PRECONDITION, "clang-16 not found");
  unsetenv("DMLC_CLANG");
  /* clang's own diagnostics are in the error */
  char *ptx = NULL;
  CHECK_ERROR(dml_codegen_cuda_ptx("this is not CUDA C;\n", 80, &ptx),
              DML_STATUS_INTERNAL, "clang (CUDA C -> PTX)");
  CHECK_ERROR(dml_codegen_cuda_ptx("this is not CUDA C;\n", 80, &ptx),
              DML_STATUS_INTERNAL, "error:");
  free(ptx);
  free(a);
}

/* The cooperative row forms (codegen/schedule_rows.c: a block of 256
 * threads per row, a shared-memory tree, __syncthreads): reductions,
 * LogSumExp, ArgMax, Softmax, LogSoftmax, LayerNormalization and
 * InstanceNormalization over rows of 100,000, and more rows (65,537) than
 * CUDA's gridDim.y could count, render and compile to PTX (sm_80) with
 * bar.sync and without calls; the grid stays within 65,535 blocks. */
static void test_row_forms_compile(void) {
  void *b = NULL;
  dml_pkg_graph_t *g = NULL;
  dml_kplan_t *p = plan_of(
      "global @s : f32[1] = dense<[2.0]>\n"
      "global @c : f32[2] = dense<[1.0, 0.5]>\n"
      "func @forward(%x: f32[2,100000], %m: f32[65537,257], %z: f32[1,2,300,300]) -> "
      "(f32[2], f32[2], i64[2], f32[2,100000], f32[2,100000], f32[2,100000], f32[65537], "
      "f32[1,2,300,300]) {\n"
      "  %r = ReduceSum(%x) {axes = [1], keepdims = 0} : f32[2]\n"
      "  %l = ReduceLogSumExp(%x) {axes = [1], keepdims = 0} : f32[2]\n"
      "  %a = ArgMax(%x) {axis = 1, keepdims = 0} : i64[2]\n"
      "  %s = Softmax(%x) {axis = 1} : f32[2,100000]\n"
      "  %ls = LogSoftmax(%x) {axis = 1} : f32[2,100000]\n"
      "  %n = LayerNormalization(%x, @s) {axis = 1} : f32[2,100000]\n"
      "  %mr = ReduceMax(%m) {axes = [1], keepdims = 0} : f32[65537]\n"
      "  %in = InstanceNormalization(%z, @c, @c) : f32[1,2,300,300]\n"
      "  return %r, %l, %a, %s, %ls, %n, %mr, %in\n}\n",
      &b, &g);
  CHECK(p && p->n_kernels == 8);
  for (uint32_t k = 0; p && k < p->n_kernels; k++) {
    const dml_kernel_t *K = &p->kernels[k];
    CHECK(K->local[0] == 256 && K->n_tiles == 1 && K->tile_elems[0] == 256);
    int64_t sym[1] = {1};
    CHECK(dml_klin_eval(K->items[0], sym, 0) / 256 <= 65535);
    char *c = NULL, *ptx = NULL;
    CHECK_OK(dml_codegen_cuda(K, 0, &c));
    if (c) CHECK_OK(dml_codegen_cuda_ptx(c, 80, &ptx));
    CHECK(ptx && strstr(ptx, "bar.sync") && !strstr(ptx, "call"));
    free(c);
    free(ptx);
  }
  dml_kplan_release(p);
  dml_pkg_graph_release(g);
  free(b);
}

/* The long-row forms of the other dtypes and the scans (issue 15): CumSum
 * (f32 along a strided axis, exclusive + reverse; i64) by a block per row
 * in chunks of 1,024, the i32/i64/f64 reductions and ArgMin through a
 * shared tile of their dtype, ReduceL2 scaled by max |x| render and compile
 * to PTX (sm_80) with bar.sync and without calls; the typed tiles are
 * declared in their dtype. */
static void test_long_scan_forms_compile(void) {
  void *b = NULL;
  dml_pkg_graph_t *g = NULL;
  dml_kplan_t *p = plan_of(
      "global @a0 : i64[] = dense<[0]>\n"
      "func @forward(%x: f32[70001,3], %l: i64[70001], %i: i32[2,70001], %d: f64[70001]) "
      "-> (f32[70001,3], i64[70001], i32[2], i64[], i64[2], f64[], f32[3]) {\n"
      "  %c = CumSum(%x, @a0) {exclusive = 1, reverse = 1} : f32[70001,3]\n"
      "  %cl = CumSum(%l, @a0) : i64[70001]\n"
      "  %s = ReduceSum(%i) {axes = [1], keepdims = 0} : i32[2]\n"
      "  %sl = ReduceSum(%l) {keepdims = 0} : i64[]\n"
      "  %a = ArgMin(%i) {axis = 1, keepdims = 0} : i64[2]\n"
      "  %sd = ReduceSum(%d) {keepdims = 0} : f64[]\n"
      "  %n = ReduceL2(%x) {axes = [0], keepdims = 0} : f32[3]\n"
      "  return %c, %cl, %s, %sl, %a, %sd, %n\n}\n",
      &b, &g);
  CHECK(p && p->n_kernels == 7);
  for (uint32_t k = 0; p && k < p->n_kernels; k++) {
    const dml_kernel_t *K = &p->kernels[k];
    CHECK(K->local[0] == 256 && K->n_tiles >= 1 && K->tile_elems[0] == 256);
    char *c = NULL, *ptx = NULL;
    CHECK_OK(dml_codegen_cuda(K, 0, &c));
    if (c) CHECK_OK(dml_codegen_cuda_ptx(c, 80, &ptx));
    CHECK(ptx && strstr(ptx, "bar.sync") && !strstr(ptx, "call"));
    if (k == 1) CHECK(c && strstr(c, "long long tile0[256]"));
    if (k == 5) CHECK(c && strstr(c, "double tile1[256]"));
    free(c);
    free(ptx);
  }
  dml_kplan_release(p);
  dml_pkg_graph_release(g);
  free(b);
}

/* The direct convolution kernel of f16 and bf16 issues as many global loads
 * per unrolled channel step as the f32 one (bench/RESULTS.md stop 23: the
 * f16 kernel was 2.3x slower on the H100): a 1x1 f16/bf16 conv's channel
 * loop carries the unroll hint (8 channels: conv_chan_unroll; f32 none), an f16 tap's
 * loads widen by the bare cvt (h2f_arith) so that clang keeps them free of
 * branches, and the PTX of each 16-bit form holds at least the f32 form's
 * ld.global count (f16 before: 5 of 17 for the 1x1 conv, 7 of 19 for the
 * padded 3x3 depthwise one). */
static int ptx_count(const char *ptx, const char *what) {
  int n = 0;
  for (const char *q = ptx; q && (q = strstr(q, what)); q++) n++;
  return n;
}

static void direct_conv_loads(const char *shape, int *ld, char **src) {
  static const char *dts[3] = {"f32", "f16", "bf16"};
  for (int t = 0; t < 3; t++) {
    char ir[1024];
    int x[4], w[4], y[4], g = 1, pad = 0;
    if (!strcmp(shape, "1x1")) {
      memcpy(x, (int[4]){1, 384, 14, 14}, sizeof x);
      memcpy(w, (int[4]){64, 384, 1, 1}, sizeof w);
      memcpy(y, (int[4]){1, 64, 14, 14}, sizeof y);
    } else { /* depthwise 3x3 pad 1 */
      memcpy(x, (int[4]){1, 96, 14, 14}, sizeof x);
      memcpy(w, (int[4]){96, 1, 3, 3}, sizeof w);
      memcpy(y, (int[4]){1, 96, 14, 14}, sizeof y);
      g = 96, pad = 1;
    }
    const char *d = dts[t];
    snprintf(ir, sizeof ir,
             "func @forward(%%x: %s[%d,%d,%d,%d], %%w: %s[%d,%d,%d,%d], %%b: %s[%d]) -> "
             "(%s[%d,%d,%d,%d]) {\n"
             "  %%c = Conv(%%x, %%w, %%b) {group = %d, pads = [%d, %d, %d, %d]} : "
             "%s[%d,%d,%d,%d]\n  %%r = Relu(%%c) : %s[%d,%d,%d,%d]\n  return %%r\n}\n",
             d, x[0], x[1], x[2], x[3], d, w[0], w[1], w[2], w[3], d, w[0], d, y[0], y[1],
             y[2], y[3], g, pad, pad, pad, pad, d, y[0], y[1], y[2], y[3], d, y[0], y[1],
             y[2], y[3]);
    void *b = NULL;
    dml_pkg_graph_t *gr = NULL;
    dml_kplan_t *p = plan_of(ir, &b, &gr);
    CHECK(p && p->n_kernels == 1);
    ld[t] = -1;
    src[t] = NULL;
    if (p && p->n_kernels == 1) {
      char *ptx = NULL;
      CHECK_OK(dml_codegen_cuda(&p->kernels[0], 0, &src[t]));
      if (src[t]) CHECK_OK(dml_codegen_cuda_ptx(src[t], 80, &ptx));
      if (ptx) ld[t] = ptx_count(ptx, "ld.global");
      free(ptx);
    }
    dml_kplan_release(p);
    dml_pkg_graph_release(gr);
    free(b);
  }
}

static void test_direct_conv16_loads(void) {
  static const char *shapes[2] = {"1x1", "dw3x3"};
  for (int i = 0; i < 2; i++) {
    int ld[3];
    char *src[3];
    direct_conv_loads(shapes[i], ld, src);
    printf("direct conv %s PTX ld.global: f32 %d, f16 %d, bf16 %d\n", shapes[i], ld[0],
           ld[1], ld[2]);
    CHECK(ld[0] > 0 && ld[1] >= ld[0] && ld[2] >= ld[0]);
    /* the taps' f16 loads (X, W: inputs in the arena here) by the bare
     * conversion, the bias's by dml_h2f */
    CHECK(src[1] && ptx_count(src[1], "dml_cvt_h2f((unsigned)(arena_u16[") == 2 &&
          ptx_count(src[1], "dml_h2f((unsigned)(arena_u16[") == 1);
    for (int t = 0; t < 3; t++) {
      /* 1x1 f16/bf16: 8 channels per unrolled step; f32 (clang's own
       * unroll, faster there) and 3x3 (9 taps): no hint */
      CHECK(src[t] &&
            (strstr(src[t], "#pragma unroll 8\n") != NULL) == (i == 0 && t > 0));
      free(src[t]);
    }
  }
}

int main(void) {
  RUN(test_cuda_c_and_ptx_golden);
  RUN(test_row_forms_compile);
  RUN(test_long_scan_forms_compile);
  RUN(test_every_function_compiles);
  RUN(test_more_dtypes);
  RUN(test_gemm_vector_loads);
  RUN(test_direct_conv16_loads);
  RUN(test_section_deterministic);
  RUN(test_tf32_form);
  RUN(test_sm90a_ptx);
  RUN(test_mma16_form);
  RUN(test_mma16_conv_form);
  RUN(test_conv16_direct_rule);
  RUN(test_cuda_untrusted);
  RUN(test_cuda_errors);
  return dml_test_finish();
}
