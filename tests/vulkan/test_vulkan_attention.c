/* test_vulkan_attention.c — the fused attention kernel
 * (codegen/schedule_attention.c, docs/kernels.md "Fused attention") for
 * ONNX Attention (opset 23) on Vulkan against the CPU's reference kernel
 * (runtime/cpu/cpu_attention.c) on random inputs in [-2, 2): query/key
 * lengths 1, 7, 64, 257 and 1000, a symbolic sequence at 7 and 257, head
 * sizes 32, 64 and 128, is_causal, bool and additive float masks
 * (broadcast), rows whose every key is masked (y = 0), grouped-query
 * attention, the 3-D form, a scale of 1e4 (logits near 1e5: the online
 * softmax must not overflow), a symbolic batch, keys of 40,000 to 70,001
 * (the form of a workgroup per query row: mask, causal, softcap, GQA, 3-D,
 * scale 1e4, f16), f32 within 1e-4 *
 * max(1, |cpu|), f16 and bf16 within 2 rounding steps of their dtype (f32
 * accumulation, the CPU's double rounded once). Each form must be one kernel on Vulkan
 * (no host fall-back) and compile for CUDA (clang-16 to PTX) and Metal. A KV cache
 * (past_key) is refused naming the reason (the host then runs it). The
 * exporters' pattern MatMul(Q, Kt) [-> Mul/Div] [-> Add mask] -> Softmax
 * -> MatMul(., V) is rewritten by the attn-fuse pass to Transpose(Kt) +
 * Attention (2 kernels) and checked on Vulkan against a CPU-only package of
 * the same text (no rewrite: the MatMul/Softmax kernels). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vulkan_forms.h"

typedef struct {
  const char *what, *ir;
  int64_t sym[2]; /* values of the one symbol (0: static form) */
  int half;       /* f16: error in rounding steps */
} att_form_t;

#define ATT_F(q, kv, attrs)                                 \
  "func @forward(%q: " q ", %k: " kv ", %v: " kv ") -> (" q \
  ") {\n"                                                   \
  "  %y = Attention(%q, %k, %v)" attrs " : " q "\n  return %y\n}\n"
#define ATT_M(q, kv, m, attrs)                                         \
  "func @forward(%q: " q ", %k: " kv ", %v: " kv ", %m: " m ") -> (" q \
  ") {\n"                                                              \
  "  %y = Attention(%q, %k, %v, %m)" attrs " : " q "\n  return %y\n}\n"

static const att_form_t forms[] = {
    {"seq 1, head 32", ATT_F("f32[1,2,1,32]", "f32[1,2,1,32]", ""), {0, 0}, 0},
    {"seq 7, head 64, causal",
     ATT_F("f32[2,2,7,64]", "f32[2,2,7,64]", " {is_causal = 1}"),
     {0, 0},
     0},
    {"seq 64, head 128, bool mask [1,1,64,64]",
     ATT_M("f32[1,2,64,128]", "f32[1,2,64,128]", "bool[1,1,64,64]", ""),
     {0, 0},
     0},
    {"seq 257, head 64, additive mask [257], causal",
     ATT_M("f32[1,1,257,64]", "f32[1,1,257,64]", "f32[257]", " {is_causal = 1}"),
     {0, 0},
     0},
    {"seq 1000, head 32, causal",
     ATT_F("f32[1,1,1000,32]", "f32[1,1,1000,32]", " {is_causal = 1}"),
     {0, 0},
     0},
    {"query 7 over keys 300, bool mask [1,2,7,300]",
     ATT_M("f32[1,2,7,32]", "f32[1,2,300,32]", "bool[1,2,7,300]", ""),
     {0, 0},
     0},
    {"every key masked in some rows (keys 1, bool mask)",
     ATT_M("f32[2,2,7,32]", "f32[2,2,1,32]", "bool[2,2,7,1]", ""),
     {0, 0},
     0},
    {"mask shorter than the keys ([7,5] of 9: -inf past it)",
     ATT_M("f32[1,2,7,32]", "f32[1,2,9,32]", "f32[7,5]", ""),
     {0, 0},
     0},
    {"grouped-query: 4 query heads over 2 kv heads",
     ATT_F("f32[1,4,7,32]", "f32[1,2,7,32]", " {is_causal = 1}"),
     {0, 0},
     0},
    {"3-D [2,7,2*64], q/kv_num_heads 2",
     ATT_F("f32[2,7,128]", "f32[2,7,128]", " {kv_num_heads = 2, q_num_heads = 2}"),
     {0, 0},
     0},
    {"scale 1e4 (logits ~1e5)",
     ATT_F("f32[1,2,7,32]", "f32[1,2,7,32]", " {scale = 10000.0}"),
     {0, 0},
     0},
    {"softcap 3", ATT_F("f32[1,2,7,32]", "f32[1,2,9,32]", " {softcap = 3.0}"), {0, 0}, 0},
    {"symbolic seq, head 64, causal",
     "sym seq <= 300\n" ATT_F("f32[1,2,seq,64]", "f32[1,2,seq,64]", " {is_causal = 1}"),
     {7, 257},
     0},
    {"symbolic seq, bool mask [seq]",
     "sym seq <= 300\n" ATT_M("f32[2,1,seq,32]", "f32[2,1,seq,32]", "bool[seq]", ""),
     {1, 257},
     0},
    {"symbolic batch, GQA 4 over 2 heads, bool mask [batch,1,1,7]",
     "sym batch <= 4\n" ATT_M("f32[batch,4,7,32]", "f32[batch,2,7,32]",
                              "bool[batch,1,1,7]", ""),
     {1, 3},
     0},
    {"bf16, seq 64, head 64, causal",
     ATT_F("bf16[1,2,64,64]", "bf16[1,2,64,64]", " {is_causal = 1}"),
     {0, 0},
     1},
    {"f16, seq 64, head 64, causal",
     ATT_F("f16[1,2,64,64]", "f16[1,2,64,64]", " {is_causal = 1}"),
     {0, 0},
     1},
    {"f16, seq 257, head 128, f16 mask",
     ATT_M("f16[1,1,257,128]", "f16[1,1,257,128]", "f16[1,1,1,257]", ""),
     {0, 0},
     1},
    /* keys beyond the tiled form's loop limit (schedule_attention.c's
     * att_long: a workgroup per query row; lavapipe cut the tiled loops) */
    {"long keys: query 5 over keys 70,001, head 16, additive mask [5,70001]",
     ATT_M("f32[1,2,5,16]", "f32[1,2,70001,16]", "f32[5,70001]", ""),
     {0, 0},
     0},
    {"long keys: GQA 4 over 2, head 16, causal, softcap 3, seq <= 40,000 at 7, 300",
     "sym seq <= 40000\n" ATT_F("f32[1,4,seq,16]", "f32[1,2,seq,16]",
                                " {is_causal = 1, softcap = 3.0}"),
     {7, 300},
     0},
    {"long keys: 3-D [1,2,2*8] over [1,66000,2*8], scale 1e4",
     ATT_F("f32[1,2,16]", "f32[1,66000,16]",
           " {kv_num_heads = 2, q_num_heads = 2, scale = 10000.0}"),
     {0, 0},
     0},
    {"long keys, f16: query 3 over keys 40,000, head 16, bool mask [1,1,3,40000]",
     ATT_M("f16[1,1,3,16]", "f16[1,1,40000,16]", "bool[1,1,3,40000]", ""),
     {0, 0},
     1},
};
#define N_FORMS (sizeof forms / sizeof forms[0])

/* The pattern forms: IR text, the symbol's values (0: static), the GEMM
 * kernels on Vulkan (0 when rewritten: the fused kernel holds both
 * products). */
static const struct {
  const char *what, *ir;
  int64_t sym[2];
  uint32_t gemms;
} patterns[] = {
    {"pattern: MatMul, Div, Add mask [2,1,1,seq], Softmax, MatMul (symbolic seq)",
     "sym seq <= 64\n"
     "global @c : f32[] = dense<[5.656854]>\n"
     "func @forward(%q: f32[2,2,seq,32], %kt: f32[2,2,32,seq], %v: f32[2,2,seq,32], "
     "%m: f32[2,1,1,seq]) -> (f32[2,2,seq,32]) {\n"
     "  %s = MatMul(%q, %kt) : f32[2,2,seq,seq]\n"
     "  %d = Div(%s, @c) : f32[2,2,seq,seq]\n"
     "  %a = Add(%m, %d) : f32[2,2,seq,seq]\n"
     "  %p = Softmax(%a) {axis = -1} : f32[2,2,seq,seq]\n"
     "  %y = MatMul(%p, %v) : f32[2,2,seq,32]\n  return %y\n}\n",
     {7, 64},
     0},
    {"pattern: Mul(c, MatMul), Softmax, MatMul (ViT's [1,3,197,64])",
     "global @c : f32[] = dense<[0.125]>\n"
     "func @forward(%q: f32[1,3,197,64], %kt: f32[1,3,64,197], %v: f32[1,3,197,64]) -> "
     "(f32[1,3,197,64]) {\n"
     "  %s = MatMul(%q, %kt) : f32[1,3,197,197]\n"
     "  %d = Mul(@c, %s) : f32[1,3,197,197]\n"
     "  %p = Softmax(%d) {axis = -1} : f32[1,3,197,197]\n"
     "  %y = MatMul(%p, %v) : f32[1,3,197,64]\n  return %y\n}\n",
     {0, 0},
     0},
    {"pattern: PyTorch's SDPA, Mul'd Q and Kt, Where(mask, 0, -inf), Where(IsNaN(P), 0, "
     "P)",
     "sym seq <= 40\n"
     "global @c : f32[] = dense<[0.5]>\n"
     "global @z : f32[] = dense<[0.0]>\n"
     "global @ninf : f32[] = dense<[-inf]>\n"
     "func @forward(%q: f32[2,4,seq,16], %kt: f32[2,4,16,seq], %v: f32[2,4,seq,16], "
     "%bm: bool[2,1,seq,seq]) -> (f32[2,4,seq,16]) {\n"
     "  %qs = Mul(%q, @c) : f32[2,4,seq,16]\n"
     "  %ks = Mul(%kt, @c) : f32[2,4,16,seq]\n"
     "  %m = Where(%bm, @z, @ninf) : f32[2,1,seq,seq]\n"
     "  %s = MatMul(%qs, %ks) : f32[2,4,seq,seq]\n"
     "  %a = Add(%s, %m) : f32[2,4,seq,seq]\n"
     "  %p = Softmax(%a) {axis = -1} : f32[2,4,seq,seq]\n"
     "  %n = IsNaN(%p) : bool[2,4,seq,seq]\n"
     "  %w = Where(%n, @z, %p) : f32[2,4,seq,seq]\n"
     "  %y = MatMul(%w, %v) : f32[2,4,seq,16]\n  return %y\n}\n",
     {1, 33},
     0},
    {"not the pattern: the probabilities are returned too (kept as is)",
     "func @forward(%q: f32[1,2,7,32], %kt: f32[1,2,32,7], %v: f32[1,2,7,32]) -> "
     "(f32[1,2,7,32], f32[1,2,7,7]) {\n"
     "  %s = MatMul(%q, %kt) : f32[1,2,7,7]\n"
     "  %p = Softmax(%s) {axis = -1} : f32[1,2,7,7]\n"
     "  %y = MatMul(%p, %v) : f32[1,2,7,32]\n  return %y, %p\n}\n",
     {0, 0},
     2},
};
#define N_PATTERNS (sizeof patterns / sizeof patterns[0])

/* cg_package for cpu,vulkan as `dmlc compile --target cpu,vulkan` runs the
 * pipeline (fusion_aware: the GPU's passes, attn-fuse among them). */
static dml_rt_model_t *gpu_package(const char *text, dml_rt_session_t **vk) {
  dml_ir_module_t *m = NULL;
  dml_status_t s = dml_ir_parse(text, strlen(text), "test.dmlir", &m);
  dml_pass_options_t o;
  memset(&o, 0, sizeof o);
  o.verify_each = 1;
  o.fusion_aware = 1;
  if (!s) s = dml_pass_run_pipeline(m, dml_pass_default_pipeline(), &o);
  void *bytes = NULL;
  size_t size = 0;
  if (!s) s = dml_package_emit_memory(m, NULL, &bytes, &size);
  dml_ir_module_release(m);
  if (!s) s = dml_compile_add_kernels("cpu,vulkan", NULL, &bytes, &size);
  dml_rt_model_t *mod = NULL;
  CHECK_OK(s);
  if (!s) CHECK_OK(dml_rt_model_load_memory(bytes, size, &mod));
  free(bytes);
  *vk = NULL;
  if (mod) CHECK_OK(dml_rt_session_create(mod, "vulkan", vk));
  return mod;
}

/* Pattern i on Vulkan (cpu,vulkan package: rewritten) against the CPU-only
 * package (not rewritten), at symbol value `sv`: the largest scaled
 * error. */
static double pattern_at(dml_rt_model_t *m0, dml_rt_session_t *c0, dml_rt_model_t *m1,
                         dml_rt_session_t *vk, int64_t sv) {
  dml_rt_session_clear_inputs(c0);
  dml_rt_session_clear_inputs(vk);
  for (uint32_t i = 0; i < dml_rt_model_num_inputs(m1); i++) {
    dml_rt_io_info_t io;
    CHECK_OK(dml_rt_model_input_info(m1, i, &io));
    dml_tensor_t t;
    memset(&t, 0, sizeof t);
    t.dtype = io.dtype;
    t.rank = io.rank;
    for (int32_t d = 0; d < io.rank; d++)
      t.dims[d] = io.dim_symbol[d] ? io.dim_multiplier[d] * sv : io.dims[d];
    int64_t n = dml_dims_numel(t.dims, t.rank);
    float *x = malloc((size_t)(n ? n : 1) * sizeof(float));
    for (int64_t k = 0; x && k < n; k++) {
      float r = gpu_test_frand();
      if (io.dtype == DML_DTYPE_BOOL) /* a third of the keys masked */
        ((uint8_t *)x)[k] = r > -0.33f;
      else
        x[k] = 2.0f * r;
    }
    t.data = x;
    CHECK_OK(dml_rt_session_set_input(c0, i, &t));
    CHECK_OK(dml_rt_session_set_input(vk, i, &t));
    free(x);
  }
  CHECK_OK(dml_rt_session_run(c0));
  CHECK_OK(dml_rt_session_run(vk));
  double worst = 0;
  for (uint32_t o = 0; o < dml_rt_model_num_outputs(m0); o++) {
    dml_tensor_t a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    CHECK_OK(dml_rt_session_get_output(vk, o, &a));
    CHECK_OK(dml_rt_session_get_output(c0, o, &b));
    double e = gpu_test_max_err(&a, &b);
    if (e > worst) worst = e;
  }
  return worst;
}

static void test_patterns_vulkan(void) {
  for (size_t i = 0; i < N_PATTERNS; i++) {
    size_t n0 = 0;
    void *b0 = cg_package(patterns[i].ir, NULL, &n0);
    dml_rt_model_t *m0 = NULL;
    dml_rt_session_t *c0 = NULL, *vk = NULL;
    if (b0) CHECK_OK(dml_rt_model_load_memory(b0, n0, &m0));
    free(b0);
    if (m0) CHECK_OK(dml_rt_session_create(m0, "cpu", &c0));
    dml_rt_model_t *m1 = gpu_package(patterns[i].ir, &vk);
    if (!m0 || !c0 || !m1 || !vk) {
      fprintf(stderr, "  (%s)\n", patterns[i].what);
    } else {
      double worst = 0;
      for (int t = 0; t < 2 && (t == 0 || patterns[i].sym[0]); t++) {
        double e =
            pattern_at(m0, c0, m1, vk, patterns[i].sym[t] ? patterns[i].sym[t] : 1);
        if (e > worst) worst = e;
      }
      uint32_t nk = dml_rt_session_num_kernels(vk), ng = 0;
      for (uint32_t k = 0; k < nk; k++) {
        dml_rt_kernel_info_t ki;
        memset(&ki, 0, sizeof ki);
        CHECK_OK(dml_rt_session_kernel_info(vk, k, &ki));
        if (ki.name && strstr(ki.name, "gemm")) ng++;
      }
      printf("%-80s %u kernels, %u GEMMs: largest error %.3g\n", patterns[i].what, nk, ng,
             worst);
      CHECK(worst <= GPU_TEST_TOL);
      CHECK(ng == patterns[i].gemms);
    }
    dml_rt_session_release(c0);
    dml_rt_model_release(m0);
    dml_rt_session_release(vk);
    dml_rt_model_release(m1);
  }
}

static void test_compiles_cuda_metal(void) {
  for (size_t i = 0; i < N_FORMS; i++) {
    size_t n = 0;
    void *b = cg_package(forms[i].ir, "cuda,metal", &n);
    if (!b) fprintf(stderr, "  (%s)\n", forms[i].what);
    CHECK(b != NULL);
    free(b);
  }
}

/* A KV cache is not fused: UNIMPLEMENTED naming it (the CPU fall-back takes
 * the node). */
static void test_refused(void) {
  vk_check_refused(
      "func @forward(%q: f32[1,2,7,32], %k: f32[1,2,7,32], %v: f32[1,2,7,32], "
      "%pk: f32[1,2,3,32], %pv: f32[1,2,3,32]) -> (f32[1,2,7,32]) {\n"
      "  %y = Attention(%q, %k, %v, _, %pk, %pv) : f32[1,2,7,32]\n"
      "  return %y\n}\n",
      "past_key/past_value/nonpad_kv_seqlen (a KV cache) is not fused yet");
}

static void test_forms_vulkan(void) {
  for (size_t i = 0; i < N_FORMS; i++) {
    const att_form_t *f = &forms[i];
    dml_rt_session_t *cpu = NULL, *vk = NULL;
    dml_rt_model_t *m = vk_open_pair(f->ir, &cpu, &vk);
    if (!m || !cpu || !vk) {
      fprintf(stderr, "  (%s)\n", f->what);
      gpu_test_close(m, cpu, vk);
      continue;
    }
    double tol = f->half ? 2.0 : GPU_TEST_TOL, worst = 0;
    for (int t = 0; t < 2; t++) {
      if (t && !f->sym[0]) break;
      double e = gpu_test_compare_with(m, cpu, vk, f->sym[t] ? f->sym[t] : 1,
                                       f->half ? 2 : 0, tol);
      if (e > worst) worst = e;
    }
    uint32_t nk = dml_rt_session_num_kernels(vk);
    dml_rt_kernel_info_t ki;
    memset(&ki, 0, sizeof ki);
    if (nk == 1) CHECK_OK(dml_rt_session_kernel_info(vk, 0, &ki));
    printf("%-52s %u kernel (%s): largest error %.3g%s\n", f->what, nk,
           ki.name ? ki.name : "?", worst, f->half ? " rounding steps" : "");
    CHECK(worst <= tol);
    CHECK(nk == 1 && ki.name && strstr(ki.name, "softmax"));
    gpu_test_close(m, cpu, vk);
  }
}

int main(void) {
  RUN(test_compiles_cuda_metal);
  RUN(test_refused);
  dml_rt_device_info_t d[16];
  uint32_t n = 0;
  if (gpu_test_skip(dml_rt_vulkan_devices(d, 16, &n), "no Vulkan device")) {
    int rc = dml_test_finish();
    return rc ? rc : 77;
  }
  RUN(test_forms_vulkan);
  RUN(test_patterns_vulkan);
  return dml_test_finish();
}
