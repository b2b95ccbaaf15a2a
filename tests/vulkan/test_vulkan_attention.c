/* test_vulkan_attention.c — the fused attention kernel
 * (codegen/schedule_attention.c, docs/kernels.md "Fused attention") for
 * ONNX Attention (opset 23) on Vulkan against the CPU's reference kernel
 * (runtime/cpu/cpu_attention.c) on random inputs in [-2, 2): query/key
 * lengths 1, 7, 64, 257 and 1000, a symbolic sequence at 7 and 257, head
 * sizes 32, 64 and 128, is_causal, bool and additive float masks
 * (broadcast), rows whose every key is masked (y = 0), grouped-query
 * attention, the 3-D form, a scale of 1e4 (logits near 1e5: the online
 * softmax must not overflow), f32 within 1e-4 * max(1, |cpu|) and f16
 * within 2 rounding steps of f16 (f32 accumulation, the CPU's double
 * rounded once). Each form must be one kernel on Vulkan (no host
 * fall-back) and compile for CUDA (clang-16 to PTX) and Metal. A KV cache
 * (past_key) is refused naming the reason (the host then runs it). */
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
    {"f16, seq 64, head 64, causal",
     ATT_F("f16[1,2,64,64]", "f16[1,2,64,64]", " {is_causal = 1}"),
     {0, 0},
     1},
    {"f16, seq 257, head 128, f16 mask",
     ATT_M("f16[1,1,257,128]", "f16[1,1,257,128]", "f16[1,1,1,257]", ""),
     {0, 0},
     1},
};
#define N_FORMS (sizeof forms / sizeof forms[0])

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
           ki.name ? ki.name : "?", worst, f->half ? " f16 steps" : "");
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
  return dml_test_finish();
}
