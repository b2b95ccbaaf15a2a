/* gpu_test_ops2.h — the kernel forms of codegen/schedule_ops2.c for the GPU
 * backend tests (tests/vulkan against the CPU on lavapipe; tests/cuda
 * compiles them and, on a CUDA device, runs them): each form through a
 * gpu_test_form_fn (gpu_test_util.h) with the number of kernels the
 * scheduler makes of it. */
#ifndef DML_GPU_TEST_OPS2_H_
#define DML_GPU_TEST_OPS2_H_

#include "gpu_test_util.h"

/* Resize: nearest (asymmetric/floor as Upsample, round_prefer_ceil with
 * tf_half_pixel_for_nn, ceil with half_pixel), linear (half_pixel from
 * sizes, pytorch_half_pixel, align_corners downscaling), cubic (A -0.5
 * with exclude_outside, asymmetric), tf_crop_and_resize with an
 * extrapolation value, i64 nearest; the batch dim resized by 1 (and a
 * static one that tf_half_pixel_for_nn with round_prefer_ceil moves). */
static inline void gpu_test_resize_forms(gpu_test_form_fn each) {
  each("resize nearest",
       "sym batch <= 16\n"
       "global @s23 : f32[4] = dense<[1.0, 1.0, 2.0, 3.0]>\n"
       "global @s15 : f32[4] = dense<[1.0, 1.0, 1.5, 0.6]>\n"
       "global @sz : i64[3] = dense<[2, 3, 7]>\n"
       "func @forward(%x: f32[batch,2,3,4], %i: i64[2,3,5], %t: f32[2,2,3,4]) -> "
       "(f32[batch,2,6,12], f32[2,2,4,2], f32[batch,2,4,2], i64[2,3,7]) {\n"
       "  %a = Resize(%x, _, @s23) {mode = \"nearest\", coordinate_transformation_mode = "
       "\"asymmetric\", nearest_mode = \"floor\"} : f32[batch,2,6,12]\n"
       "  %b = Resize(%t, _, @s15) {coordinate_transformation_mode = "
       "\"tf_half_pixel_for_nn\", nearest_mode = \"round_prefer_ceil\"} : "
       "f32[2,2,4,2]\n"
       "  %c = Resize(%x, _, @s15) {nearest_mode = \"ceil\"} : f32[batch,2,4,2]\n"
       "  %d = Resize(%i, _, _, @sz) {nearest_mode = \"floor\", "
       "coordinate_transformation_mode = \"align_corners\"} : i64[2,3,7]\n"
       "  return %a, %b, %c, %d\n}\n",
       4);
  each("resize linear, cubic",
       "sym batch <= 16\n"
       "global @sz : i64[4] = dense<[2, 2, 3, 8]>\n"
       "global @s : f32[4] = dense<[1.0, 1.0, 0.8, 1.6]>\n"
       "global @s2 : f32[3] = dense<[1.0, 2.5, 0.5]>\n"
       "global @roi : f32[8] = dense<[0.0, 0.0, 0.4, 0.6, 1.0, 1.0, 0.6, 0.8]>\n"
       "global @s3 : f32[4] = dense<[1.0, 1.0, 0.8, 0.8]>\n"
       "func @forward(%x: f32[2,2,4,5], %z: f32[batch,2,4,5], %v: f32[batch,4,6]) -> "
       "(f32[2,2,3,8], f32[batch,2,3,8], f32[batch,2,3,8], f32[batch,2,3,8], "
       "f32[batch,10,3], f32[2,2,3,8], f32[batch,2,3,4]) {\n"
       "  %a = Resize(%x, _, _, @sz) {mode = \"linear\"} : f32[2,2,3,8]\n"
       "  %b = Resize(%z, _, @s) {mode = \"linear\", coordinate_transformation_mode = "
       "\"align_corners\"} : f32[batch,2,3,8]\n"
       "  %c = Resize(%z, _, @s) {mode = \"cubic\", cubic_coeff_a = -0.5, "
       "exclude_outside = 1} : f32[batch,2,3,8]\n"
       "  %d = Resize(%z, _, @s) {mode = \"cubic\", coordinate_transformation_mode = "
       "\"asymmetric\"} : f32[batch,2,3,8]\n"
       "  %e = Resize(%v, _, @s2) {mode = \"linear\", coordinate_transformation_mode = "
       "\"pytorch_half_pixel\"} : f32[batch,10,3]\n"
       "  %f = Resize(%x, @roi, _, @sz) {mode = \"linear\", "
       "coordinate_transformation_mode = \"tf_crop_and_resize\", extrapolation_value = "
       "10.0} : f32[2,2,3,8]\n"
       "  %g = Resize(%z, _, @s3) {mode = \"cubic\", coordinate_transformation_mode = "
       "\"half_pixel_symmetric\"} : f32[batch,2,3,4]\n"
       "  return %a, %b, %c, %d, %e, %f, %g\n}\n",
       7);
}

/* Every form of this file. */
static inline void gpu_test_ops2_forms(gpu_test_form_fn each) {
  gpu_test_resize_forms(each);
}

#endif /* DML_GPU_TEST_OPS2_H_ */
