/* test_vulkan_ops3.c — codegen/schedule_ops3.c's kernel forms (TopK, DFT,
 * TfIdfVectorizer: tests/gpu_ops3_forms.h) on the default Vulkan device
 * (Mesa's lavapipe in CI) against the CPU reference at batch 1, 3 and 16;
 * TopK with k fed at run time (the output dim a data-dependent symbol the
 * session computes before the run: k = 1, 4, 6, 4 again and 0) against the
 * CPU and hand-computed values and indices (ties by the lower index); DFTs
 * of 1000 samples against the CPU within two f32 roundings; and the forms
 * the scheduler refuses, each an UNIMPLEMENTED error naming the node and
 * the reason. Tolerance: |vulkan - cpu| <= 1e-4 * max(1, |cpu|) for the
 * forms (the DFT's f64 sums are far inside it), integers and indices
 * exactly. Skips (77) without a Vulkan device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen_test_util.h"
#include "gpu_ops3_forms.h"
#include "gpu_test_util.h"
#include "vulkan_forms.h"

static void test_forms(void) {
  gpu_test_ops3_forms(vk_check_form);
}

/* TopK of x (f32 [2, 6]) with k fed at run time on both sessions: outputs
 * [2, k] equal to want_v / want_i (row-major, k per row). */
static void run_topk(dml_rt_session_t *cpu, dml_rt_session_t *vk, const float *x,
                     int64_t k, const float *want_v, const int64_t *want_i) {
  dml_tensor_t tx, tk;
  memset(&tx, 0, sizeof tx);
  memset(&tk, 0, sizeof tk);
  tx.dtype = DML_DTYPE_F32;
  tx.rank = 2;
  tx.dims[0] = 2;
  tx.dims[1] = 6;
  tx.data = (void *)x;
  tk.dtype = DML_DTYPE_I64;
  tk.rank = 1;
  tk.dims[0] = 1;
  tk.data = &k;
  dml_rt_session_t *ss[2] = {cpu, vk};
  for (int s = 0; s < 2; s++) {
    CHECK_OK(dml_rt_session_set_input(ss[s], 0, &tx));
    CHECK_OK(dml_rt_session_set_input(ss[s], 1, &tk));
    CHECK_OK(dml_rt_session_run(ss[s]));
    dml_tensor_t v, i;
    memset(&v, 0, sizeof v);
    memset(&i, 0, sizeof i);
    CHECK_OK(dml_rt_session_get_output(ss[s], 0, &v));
    CHECK_OK(dml_rt_session_get_output(ss[s], 1, &i));
    CHECK(v.rank == 2 && v.dims[0] == 2 && v.dims[1] == k);
    CHECK(i.rank == 2 && i.dims[0] == 2 && i.dims[1] == k && i.dtype == DML_DTYPE_I64);
    if (v.rank != 2 || v.dims[1] != k || i.dims[1] != k || !v.data || !i.data) continue;
    for (int64_t e = 0; e < 2 * k; e++) {
      float gv = ((const float *)v.data)[e];
      int64_t gi = ((const int64_t *)i.data)[e];
      if (gv != want_v[e] || gi != want_i[e]) {
        fprintf(stderr,
                "  topk k=%lld on %s: element %lld is (%g, %lld), want (%g, %lld)\n",
                (long long)k, s ? "vulkan" : "cpu", (long long)e, (double)gv,
                (long long)gi, (double)want_v[e], (long long)want_i[e]);
        CHECK(0);
        break;
      }
    }
  }
}

/* TopK with k fed at run time: Values and Indices get data-dependent
 * dims, computed on the host before the run; the recording changes with
 * k (1, 4, 6, then 4 again: a cached recording; then 0: empty outputs). Ties (1.5 twice,
 * -2 twice) come out by the lower index. */
static void test_topk_run_time_k(void) {
  static const float x[12] = {1.5f, -2, 7, 1.5f, 0, -2, 3, 3, 3, -1, 8, 3};
  dml_rt_session_t *cpu, *vk;
  dml_rt_model_t *m = vk_open_pair(
      "func @forward(%x: f32[2,6], %k: i64[1]) -> (f32[?], i64[?]) {\n"
      "  %v, %i = TopK(%x, %k) {axis = 1} : f32[?], i64[?]\n"
      "  return %v, %i\n}\n",
      &cpu, &vk);
  if (cpu && vk) {
    static const float v1[2] = {7, 8}, v4[8] = {7, 1.5f, 1.5f, 0, 8, 3, 3, 3},
                       v6[12] = {7, 1.5f, 1.5f, 0, -2, -2, 8, 3, 3, 3, 3, -1};
    static const int64_t i1[2] = {2, 4}, i4[8] = {2, 0, 3, 4, 4, 0, 1, 2},
                         i6[12] = {2, 0, 3, 4, 1, 5, 4, 0, 1, 2, 5, 3};
    run_topk(cpu, vk, x, 1, v1, i1);
    run_topk(cpu, vk, x, 4, v4, i4);
    run_topk(cpu, vk, x, 6, v6, i6);
    run_topk(cpu, vk, x, 4, v4, i4);
    run_topk(cpu, vk, x, 0, v1, i1); /* empty outputs: [2, 0] */
  }
  gpu_test_close(m, cpu, vk);
}

/* A DFT of 1000 real samples (twiddles of phases up to n - 1, all four
 * quarter turns) and an inverse one of 1000 complex samples: norm-wise
 * within 2.4e-7 of the CPU's double transform (two f32 roundings of the
 * largest output; the outputs near zero are cancellations). Seen on
 * lavapipe: 5e-18, the f64 sums rounding to the CPU's floats. */
static void test_dft_long(void) {
  dml_rt_session_t *cpu, *vk;
  dml_rt_model_t *m = vk_open_pair(
      "func @forward(%x: f32[1,1000,1], %z: f32[1000,2]) -> (f32[1,1000,2], "
      "f32[1000,2]) {\n"
      "  %y = DFT(%x) : f32[1,1000,2]\n"
      "  %w = DFT(%z) {axis = 0, inverse = 1} : f32[1000,2]\n"
      "  return %y, %w\n}\n",
      &cpu, &vk);
  if (cpu && vk) {
    gpu_test_seed(7);
    double e = gpu_test_compare_with(m, cpu, vk, 1, 1, 2.4e-7);
    printf("dft of 1000 samples: norm-wise error %.2e\n", e);
    CHECK(e <= 2.4e-7);
  }
  gpu_test_close(m, cpu, vk);
}

/* Forms schedule_ops3.c refuses: UNIMPLEMENTED naming the node and why. */
static void test_form_errors(void) {
  static const struct {
    const char *text, *want;
  } cases[] = {
      {"func @forward(%x: i32[2,4]) -> (f32[2,1]) {\n"
       "  %y = TfIdfVectorizer(%x) {mode = \"TF\", min_gram_length = 1, "
       "max_gram_length = 1, max_skip_count = 0, ngram_counts = [0], "
       "pool_int64s = [5000000000], ngram_indexes = [0]} : f32[2,1]\n"
       "  return %y\n}\n",
       "(TfIdfVectorizer): pool values beyond the i32 range"},
      {"sym n <= 64\n"
       "func @forward(%x: f32[1,n,1]) -> (f32[1,n,2]) {\n"
       "  %y = DFT(%x) : f32[1,n,2]\n  return %y\n}\n",
       "(DFT): a symbolic signal length"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    vk_check_refused(cases[i].text, cases[i].want);
}

int main(void) {
  dml_rt_device_info_t d[16];
  uint32_t n = 0;
  if (gpu_test_skip(dml_rt_vulkan_devices(d, 16, &n), "no Vulkan device")) return 77;
  RUN(test_forms);
  RUN(test_topk_run_time_k);
  RUN(test_dft_long);
  RUN(test_form_errors);
  return dml_test_finish();
}
