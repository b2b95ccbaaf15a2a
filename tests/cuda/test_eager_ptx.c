/* test_eager_ptx.c — the CUDA eager kernel library as this build made it
 * (dml_eager_ptx, runtime/dml_eager_lib.h; docs/tensor.md "Eager ops on
 * CUDA"), without a GPU: its rows are the SPIR-V library's kernels row for
 * row (op, kind, inputs, bound, workgroup and grid: one generator, two
 * renderings), MatMul (two forms) and Conv included; each row's PTX is
 * NUL-terminated within its words and declares its entry point
 * DML_EAGER_PTX_ENTRY with the parameters rt_cuda.c passes (elementwise and
 * reductions: two pointers, then the push-constant words by value;
 * MatMul and Conv: four pointers, y, A/X, B/W, the bias, then the words);
 * and with ptxas (DMLC_PTXAS, /usr/local/cuda/bin, PATH) each assembles for
 * sm_80 and sm_90. Exits 77 (skip), saying why, in a build without the PTX
 * library. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_codegen.h"
#include "dml_eager_lib.h"
#include "dml_test.h"

/* Rows and their PTX text. */
static void test_rows(void) {
  uint32_t n_ew = 0, n_red = 0, n_mm = 0, n_cv = 0, n_ga = 0, n_nm = 0;
  for (uint32_t k = 0; k < dml_eager_ptx_count; k++) {
    const dml_eager_kernel_t *E = &dml_eager_ptx[k];
    const char *text = (const char *)E->words;
    size_t cap = (size_t)E->n_words * 4;
    CHECK(E->op != DML_OP_INVALID);
    CHECK(text && cap > 0 && memchr(text, 0, cap) != NULL);
    if (!text || !cap || !memchr(text, 0, cap)) continue;
    char entry[80];
    snprintf(entry, sizeof entry, ".entry " DML_EAGER_PTX_ENTRY "(", k);
    CHECK(strstr(text, entry) != NULL);
    CHECK(strstr(text, ".target sm_80") != NULL);
    /* the parameters run_kernel passes: y, x, then the words by value;
     * run_kernel_bufs (MatMul, Conv of f32): four pointers, then the words;
     * the f64 MatMul and Conv rows read every operand from x (run_kernel) */
    int bufs = ((E->kind == DML_EAGER_MATMUL || E->kind == DML_EAGER_CONV) &&
                E->dtype == DML_DTYPE_F32) ||
               E->kind == DML_EAGER_NORM;
    uint32_t nw = E->kind == DML_EAGER_EW        ? DML_EAGER_PC_WORDS
                  : E->kind == DML_EAGER_REDUCE  ? DML_EAGER_REDUCE_SYMS
                  : E->kind == DML_EAGER_MATMUL  ? (uint32_t)DML_EAGER_MM_WORDS
                  : E->kind == DML_EAGER_GATHER  ? (uint32_t)DML_EAGER_GA_WORDS
                  : E->kind == DML_EAGER_NORM    ? (uint32_t)DML_EAGER_NM_WORDS
                  : E->kind == DML_EAGER_POOLIDX ? (uint32_t)DML_EAGER_PI_WORDS
                                                 : (uint32_t)DML_EAGER_CV_WORDS;
    char words[96];
    snprintf(words, sizeof words, DML_EAGER_PTX_ENTRY "_param_%d[%u]", k, bufs ? 4 : 2,
             4 * nw);
    snprintf(entry, sizeof entry, ".u64 " DML_EAGER_PTX_ENTRY "_param_%d,", k,
             bufs ? 3 : 1);
    CHECK(strstr(text, words) != NULL && strstr(text, entry) != NULL);
    n_ew += E->kind == DML_EAGER_EW;
    n_red += E->kind == DML_EAGER_REDUCE;
    n_mm += E->kind == DML_EAGER_MATMUL && E->op == DML_OP_MATMUL;
    n_cv += E->kind == DML_EAGER_CONV && E->op == DML_OP_CONV;
    n_ga += E->kind == DML_EAGER_GATHER && E->op == DML_OP_GATHER;
    n_nm += E->kind == DML_EAGER_NORM;
    CHECK(E->kind == DML_EAGER_EW || E->kind == DML_EAGER_REDUCE ||
          E->kind == DML_EAGER_MATMUL || E->kind == DML_EAGER_CONV ||
          E->kind == DML_EAGER_GATHER || E->kind == DML_EAGER_NORM ||
          E->kind == DML_EAGER_POOLIDX);
    if (dml_eager_spirv_count) { /* the same row of the SPIR-V library */
      if (k >= dml_eager_spirv_count) {
        CHECK(k < dml_eager_spirv_count);
        continue;
      }
      const dml_eager_kernel_t *V = &dml_eager_spirv[k];
      CHECK(V->op == E->op && V->kind == E->kind && V->n_inputs == E->n_inputs &&
            V->max_len == E->max_len && V->dtype == E->dtype &&
            V->out_dtype == E->out_dtype && V->select_last == E->select_last);
      CHECK(!memcmp(V->local, E->local, sizeof V->local));
      CHECK(!memcmp(V->items, E->items, sizeof V->items));
    }
  }
  if (dml_eager_spirv_count) CHECK(dml_eager_spirv_count == dml_eager_ptx_count);
  printf(
      "%u PTX kernels: %u elementwise (two forms each), %u reductions and softmaxes, "
      "%u MatMul, %u Conv, %u Gather, %u normalization; the SPIR-V library has %u\n",
      dml_eager_ptx_count, n_ew, n_red, n_mm, n_cv, n_ga, n_nm, dml_eager_spirv_count);
  /* MatMul: f32 and f64, each any-stride and unit-stride; Conv: f32, f64;
   * Gather: 13 dtypes of x; the normalizations: f32, f16, bf16, each with
   * the row statistics and BatchNormalization's, each a workgroup per row
   * and an invocation per row (DML_EAGER_NM_FORM_PER_ROW) */
  CHECK(n_mm == 4 && n_cv == 2 && n_ga == 13 && n_nm == 12);
  CHECK(n_ew >= 90 && n_red >= 16); /* 2 forms: 45 elementwise ops, 8 reductions */
}

/* No NaN-propagating max/min against a zero: clang makes max.NaN /
 * min.NaN (IEEE maximum / minimum, -0 < +0) of a select `x < c ? c : x`,
 * which for c = 0 is not the select at x = -0: the formula table's Relu
 * (`x < 0 ? 0 : x`) became max.NaN.f32(x, 0) and gave +0 for f16 and f32
 * -0 on an H100 where the CPU and Vulkan keep -0. The renderer's opaque
 * zero (c_emit.h opaque_pre) keeps such selects selects. (max.f32 / min.f32
 * against 0 are fmaxf / fminf the formulas ask for, or `x > 0 ? x : 0`,
 * which they compute exactly.) */
static void test_no_minmax_with_zero(void) {
  static const char *const zeros[] = {"0f00000000;", "0f80000000;", "0d0000000000000000;",
                                      "0d8000000000000000;"};
  uint32_t relu_rows = 0;
  for (uint32_t k = 0; k < dml_eager_ptx_count; k++) {
    const dml_eager_kernel_t *E = &dml_eager_ptx[k];
    const char *text = (const char *)E->words;
    if (!text || !memchr(text, 0, (size_t)E->n_words * 4)) continue;
    relu_rows += E->op == DML_OP_RELU;
    for (const char *l = text; *l;) {
      const char *end = strchr(l, '\n');
      size_t n = end ? (size_t)(end - l) : strlen(l);
      char line[160];
      snprintf(line, sizeof line, "%.*s",
               (int)(n < sizeof line - 1 ? n : sizeof line - 1), l);
      int minmax = strstr(line, "\tmax.NaN.") || strstr(line, "\tmin.NaN.");
      for (size_t z = 0; minmax && z < sizeof zeros / sizeof zeros[0]; z++)
        if (strstr(line, zeros[z])) {
          fprintf(stderr, "  row %u (%s of %s): %s\n", k, dml_op_name(E->op),
                  dml_dtype_name((dml_dtype_t)E->dtype), line);
          CHECK(!strstr(line, zeros[z]));
        }
      l = end ? end + 1 : l + n;
    }
  }
  CHECK(relu_rows >= 6); /* f32, f16, bf16 in two forms at least */
}

/* Each row assembled by ptxas for sm_80 and sm_90. */
static void test_ptxas(void) {
  if (!dml_codegen_cuda_ptxas()) {
    printf(
        "ptxas not found (DMLC_PTXAS, /usr/local/cuda/bin, PATH): PTX not assembled\n");
    return;
  }
  static const int sms[2] = {80, 90};
  uint32_t ok = 0;
  size_t bytes[2] = {0, 0};
  for (uint32_t k = 0; k < dml_eager_ptx_count; k++)
    for (int i = 0; i < 2; i++) {
      void *bin = NULL;
      size_t n = 0;
      dml_status_t s =
          dml_codegen_cuda_cubin((const char *)dml_eager_ptx[k].words, sms[i], &bin, &n);
      if (s) {
        char *m = dml_status_format(s);
        fprintf(stderr, "eager kernel %u (%s) for sm_%d: %s\n", k,
                dml_op_name(dml_eager_ptx[k].op), sms[i], m ? m : "?");
        free(m);
        dml_status_free(s);
      }
      CHECK(!s && n > 0);
      ok += !s && n > 0;
      bytes[i] += n;
      free(bin);
    }
  printf("%u of %u cubins assembled by %s (%zu bytes for sm_80, %zu for sm_90)\n", ok,
         2 * dml_eager_ptx_count, dml_codegen_cuda_ptxas(), bytes[0], bytes[1]);
}

int main(void) {
  if (!dml_eager_ptx_count) {
    printf(
        "SKIP: this build has no CUDA eager kernel library (no clang-16, no code "
        "generator or DMLC_WITH_CUDA off)\n");
    return 77;
  }
  RUN(test_rows);
  RUN(test_no_minmax_with_zero);
  RUN(test_ptxas);
  return dml_test_finish();
}
