/* gpu_ops3_forms.h — the kernel forms of codegen/schedule_ops3.c (TopK,
 * DFT, TfIdfVectorizer) as IR texts, for the GPU tests
 * (tests/vulkan/test_vulkan_ops3.c runs them on Vulkan against the CPU,
 * tests/cuda/gen_cuda_packages.c writes them as CUDA packages for
 * test_cuda). Random inputs (gpu_test_compare_with: f32 in [-2, 2),
 * integers in [-5, 5], u8 in 0..5 and 251..255): the integer TopK rows have
 * many ties (the lower index first) and the TfIdfVectorizer pools use
 * tokens of that range, so that n-grams occur. */
#ifndef DML_GPU_OPS3_FORMS_H_
#define DML_GPU_OPS3_FORMS_H_

#include "gpu_test_util.h"

/* Calls `each` once per form:
 * - TopK largest along the last axis of an f32 [batch, 7] (k = 3), smallest
 *   along axis 0 of an i64 [5, batch] with i32 indices (ties), of u8 (the
 *   unsigned order) and of f16 with k equal to the axis length;
 * - DFT of a real f32 signal (axis 1, the default), onesided with
 *   dft_length 16 > 12 (zero padding), of a complex signal along axis 2
 *   inverse and along axis -3 with dft_length 5 < 8 (truncation), of an
 *   f64 complex signal;
 * - TfIdfVectorizer TFIDF (uni-, bi- and trigrams, skips up to 2, weights,
 *   two n-grams sharing an output coordinate, an empty coordinate) on i64
 *   [batch, 9], IDF of bigrams only with skip 0 on i32 [10], TF with a
 *   skip count beyond the row (uni- and bigrams).
 * All stay: dml_every_op (tests/check/every_op.c) does not cover them
 * (docs/kernels.md "Every op on every backend" has the audit). Its TopK
 * runs along the last, static axis with k = min(3, L) / min(5, L) on
 * integers 0 and 1 only (not the u8 order of 251..255, nor k equal to the
 * axis length), not along a symbolic dim; its DFT is a real signal along
 * axis 1 only (no complex input, inverse, onesided, dft_length, f64
 * complex, symbolic batch); it has no TfIdfVectorizer form (an n-gram
 * pool is attributes it does not generate). */
static inline void gpu_test_ops3_forms(gpu_test_form_fn each) {
  each("topk",
       "sym batch <= 16\n"
       "global @k3 : i64[1] = dense<[3]>\n"
       "global @k2 : i64[1] = dense<[2]>\n"
       "global @k4 : i64[1] = dense<[4]>\n"
       "global @k5 : i64[1] = dense<[5]>\n"
       "func @forward(%x: f32[batch,7], %n: i64[5,batch], %u: u8[3,6], %h: f16[2,5]) -> "
       "(f32[batch,3], i64[batch,3], i64[2,batch], i32[2,batch], u8[3,4], i64[3,4], "
       "f16[2,5], i64[2,5]) {\n"
       "  %v, %i = TopK(%x, @k3) {axis = -1} : f32[batch,3], i64[batch,3]\n"
       "  %v2, %i2 = TopK(%n, @k2) {axis = 0, largest = 0} : i64[2,batch], i32[2,batch]\n"
       "  %v3, %i3 = TopK(%u, @k4) {axis = 1} : u8[3,4], i64[3,4]\n"
       "  %v4, %i4 = TopK(%h, @k5) {axis = 1, largest = 0} : f16[2,5], i64[2,5]\n"
       "  return %v, %i, %v2, %i2, %v3, %i3, %v4, %i4\n}\n",
       4);
  each("dft",
       "sym batch <= 16\n"
       "global @l16 : i64[] = dense<[16]>\n"
       "global @l5 : i64[] = dense<[5]>\n"
       "func @forward(%r: f32[batch,12,1], %c: f32[batch,8,3,2], %d: f64[2,9,2]) -> "
       "(f32[batch,12,2], f32[batch,9,2], f32[batch,8,3,2], f32[batch,5,3,2], "
       "f64[2,9,2]) {\n"
       "  %a = DFT(%r) : f32[batch,12,2]\n"
       "  %b = DFT(%r, @l16) {onesided = 1} : f32[batch,9,2]\n"
       "  %e = DFT(%c) {axis = 2, inverse = 1} : f32[batch,8,3,2]\n"
       "  %f = DFT(%c, @l5) {axis = -3} : f32[batch,5,3,2]\n"
       "  %g = DFT(%d) : f64[2,9,2]\n"
       "  return %a, %b, %e, %f, %g\n}\n",
       5);
  each("tfidf",
       "sym batch <= 16\n"
       "func @forward(%x: i64[batch,9], %y: i32[10]) -> (f32[batch,6], f32[3], "
       "f32[batch,4]) {\n"
       "  %a = TfIdfVectorizer(%x) {mode = \"TFIDF\", min_gram_length = 1, "
       "max_gram_length = 3, max_skip_count = 2, ngram_counts = [0, 3, 7], "
       "pool_int64s = [-1, 0, 3, 1, 2, -2, -2, 0, 1, 0], "
       "ngram_indexes = [0, 2, 1, 2, 5, 3], "
       "weights = [0.5, 1.5, 2.0, -1.0, 0.25, 3.0]} : f32[batch,6]\n"
       "  %b = TfIdfVectorizer(%y) {mode = \"IDF\", min_gram_length = 2, "
       "max_gram_length = 2, max_skip_count = 0, ngram_counts = [0, 2], "
       "pool_int64s = [4, 5, 1, 1, 0, -3, 2, 2], ngram_indexes = [2, 0, 1, 2, 1], "
       "weights = [2.0, 0.5, 0.75, 4.0, -1.5]} : f32[3]\n"
       "  %c = TfIdfVectorizer(%x) {mode = \"TF\", min_gram_length = 1, "
       "max_gram_length = 2, max_skip_count = 20, ngram_counts = [0, 2], "
       "pool_int64s = [1, -4, 1, 1, 3, -5], ngram_indexes = [3, 0, 1, 2]} : "
       "f32[batch,4]\n"
       "  return %a, %b, %c\n}\n",
       3);
}

#endif /* DML_GPU_OPS3_FORMS_H_ */
