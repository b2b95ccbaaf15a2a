/* gpu_test_ops2.h — the kernel forms of codegen/schedule_ops2.c for the GPU
 * backend tests (tests/vulkan against the CPU on lavapipe; tests/cuda
 * compiles them and, on a CUDA device, runs them): each form through a
 * gpu_test_form_fn (gpu_test_util.h) with the number of kernels the
 * scheduler makes of it. Every form stays: each has a symbolic batch dim
 * or an attribute, mode, dtype or rank that dml_every_op
 * (tests/check/every_op.c) does not generate (3-D windows, Resize modes
 * other than nearest by scales, Pad wider than the dim, per-axis and
 * batched quantization, GridSample modes, BatchNormalization training,
 * RoiAlign max and adaptive, MaxUnpool with repeated targets): the audit,
 * form by form, is docs/kernels.md "Every op on every backend". */
#ifndef DML_GPU_TEST_OPS2_H_
#define DML_GPU_TEST_OPS2_H_

#include "gpu_test_util.h"

/* Resize: nearest (asymmetric/floor as Upsample, round_prefer_ceil with
 * tf_half_pixel_for_nn, ceil with half_pixel), linear (half_pixel from
 * sizes, pytorch_half_pixel, align_corners downscaling), cubic (A -0.5
 * with exclude_outside, asymmetric), tf_crop_and_resize with an
 * extrapolation value, i64 nearest; the batch dim resized by 1 (and a
 * static one that tf_half_pixel_for_nn with round_prefer_ceil moves); the
 * run-time form for a resized or moved symbolic dim and a roi input. */
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
  /* the run-time form (codegen/schedule_ops2.c emit_resize_rt) with
   * constant scales: a symbolic dim resized by 2, the batch dim moved by
   * tf_half_pixel_for_nn, and a roi fed at run time (random: inside and
   * outside the input) */
  each(
      "resize taps at run time",
      "sym batch <= 16\n"
      "global @s2 : f32[2] = dense<[2.0, 1.5]>\n"
      "global @s1 : f32[2] = dense<[1.0, 2.0]>\n"
      "global @sz : i64[4] = dense<[2, 2, 5, 3]>\n"
      "func @forward(%x: f32[batch,4], %t: f32[2,2,3,4], %roi: f32[8]) -> "
      "(f32[2*batch,6], f32[batch,8], f32[2,2,5,3], f32[2,2,5,3]) {\n"
      "  %a = Resize(%x, _, @s2) {mode = \"linear\"} : f32[2*batch,6]\n"
      "  %b = Resize(%x, _, @s1) {coordinate_transformation_mode = "
      "\"tf_half_pixel_for_nn\", nearest_mode = \"round_prefer_ceil\"} : f32[batch,8]\n"
      "  %c = Resize(%t, %roi, _, @sz) {mode = \"cubic\", coordinate_transformation_mode "
      "= \"tf_crop_and_resize\", extrapolation_value = -3.0} : f32[2,2,5,3]\n"
      "  %d = Resize(%t, %roi, _, @sz) {coordinate_transformation_mode = "
      "\"tf_crop_and_resize\"} : f32[2,2,5,3]\n"
      "  return %a, %b, %c, %d\n}\n",
      4);
}

/* Windows of codegen/schedule_ops2.c: 3-D Conv (groups, strides,
 * dilations, asymmetric pads, bias), 3-D ConvTranspose (groups, strides,
 * pads, output_padding), 3-D MaxPool with Indices, 3-D AveragePool with the
 * pads counted and not, 2-D MaxPool with column-major Indices, 2-D
 * MaxPool of u8. */
static inline void gpu_test_window_forms(gpu_test_form_fn each) {
  char text[8192];
  char *w = gpu_test_dense(6 * 2 * 3 * 2 * 3, 0.3, -0.3),
       *b = gpu_test_dense(6, 0.5, -0.5),
       *wt = gpu_test_dense(4 * 3 * 2 * 2 * 3, 0.3, -0.3);
  snprintf(
      text, sizeof text,
      "sym batch <= 16\n"
      "global @w : f32[6,2,3,2,3] = %s\n"
      "global @b : f32[6] = %s\n"
      "global @wt : f32[4,3,2,2,3] = %s\n"
      "func @forward(%%x: f32[batch,4,5,6,7], %%z: f32[batch,4,2,3,2]) -> "
      "(f32[batch,6,2,5,4], f32[batch,6,4,3,4]) {\n"
      "  %%c = Conv(%%x, @w, @b) {group = 2, strides = [2, 1, 2], pads = [1, 0, 1, 0, "
      "1, 1], dilations = [1, 2, 1]} : f32[batch,6,2,5,4]\n"
      "  %%t = ConvTranspose(%%z, @wt, @b) {group = 2, strides = [2, 1, 2], pads = [1, "
      "0, 0, 0, 1, 1], output_padding = [1, 0, 0]} : f32[batch,6,4,3,4]\n"
      "  return %%c, %%t\n}\n",
      w, b, wt);
  free(w), free(b), free(wt);
  each("conv3d, convtranspose3d", text, 2);
  each(
      "pools 3-d, indices, u8",
      "sym batch <= 16\n"
      "func @forward(%x: f32[batch,2,4,5,6], %y: f32[batch,3,5,5], %u: u8[batch,2,4,4]) "
      "-> "
      "(f32[batch,2,2,5,3], i64[batch,2,2,5,3], f32[batch,2,2,3,3], f32[batch,2,2,3,3], "
      "f32[batch,3,3,3], i64[batch,3,3,3], u8[batch,2,3,3]) {\n"
      "  %m, %i = MaxPool(%x) {kernel_shape = [2, 3, 2], strides = [2, 1, 2], pads = [0, "
      "1, 1, 0, 1, 0]} : f32[batch,2,2,5,3], i64[batch,2,2,5,3]\n"
      "  %a = AveragePool(%x) {kernel_shape = [3, 2, 3], strides = [2, 2, 2], pads = [1, "
      "0, 1, 1, 1, 0], count_include_pad = 1} : f32[batch,2,2,3,3]\n"
      "  %e = AveragePool(%x) {kernel_shape = [3, 2, 3], strides = [2, 2, 2], pads = [1, "
      "0, 1, 1, 1, 0]} : f32[batch,2,2,3,3]\n"
      "  %m2, %i2 = MaxPool(%y) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, "
      "1, 1], storage_order = 1} : f32[batch,3,3,3], i64[batch,3,3,3]\n"
      "  %mu = MaxPool(%u) {kernel_shape = [2, 2]} : u8[batch,2,3,3]\n"
      "  return %m, %i, %a, %e, %m2, %i2, %mu\n}\n",
      5);
}

/* Pad in modes reflect (both sides, wider than the dim), edge (i64) and
 * wrap (a negative pad cropping, pads wider than the dim). */
static inline void gpu_test_pad_forms(gpu_test_form_fn each) {
  each("pad reflect, edge, wrap",
       "sym batch <= 16\n"
       "global @p1 : i64[6] = dense<[0, 2, 1, 0, 1, 3]>\n"
       "global @p2 : i64[4] = dense<[0, 3, 0, 2]>\n"
       "global @p3 : i64[6] = dense<[0, -1, 4, 0, 2, 1]>\n"
       "func @forward(%x: f32[batch,3,4], %i: i64[batch,4], %z: f32[batch,2,3]) -> "
       "(f32[batch,6,8], i64[batch,9], f32[batch,3,8]) {\n"
       "  %a = Pad(%x, @p1) {mode = \"reflect\"} : f32[batch,6,8]\n"
       "  %b = Pad(%i, @p2) {mode = \"edge\"} : i64[batch,9]\n"
       "  %c = Pad(%z, @p3) {mode = \"wrap\"} : f32[batch,3,8]\n"
       "  return %a, %b, %c\n}\n",
       3);
}

/* Quantization: QuantizeLinear per tensor (u8, default zero point) and
 * per axis (i8), DequantizeLinear per axis (u8) and of i32,
 * DynamicQuantizeLinear, MatMulInteger (per-row and scalar zero points,
 * batched), QLinearMatMul (per-column scale), ConvInteger (per-channel
 * zero point, pads) and QLinearConv (bias, strides). The requantizing
 * ops' scales keep their products off rounding ties: the kernels form
 * the factor in f32 where the CPU has double (docs/kernels.md). */
static inline void gpu_test_quant_forms(gpu_test_form_fn each) {
  each("quantize, dequantize",
       "sym batch <= 16\n"
       "global @s : f32[] = dense<[0.25]>\n"
       "global @sa : f32[3] = dense<[0.5, 0.125, 2.0]>\n"
       "global @za : i8[3] = dense<[-3, 0, 7]>\n"
       "global @zu : u8[3] = dense<[3, 0, 250]>\n"
       "global @z0 : i32[] = dense<[0]>\n"
       "func @forward(%x: f32[batch,3,4], %u: u8[batch,3,4], %i: i32[batch,4]) -> "
       "(u8[batch,3,4], i8[batch,3,4], f32[batch,3,4], f32[batch,4]) {\n"
       "  %q = QuantizeLinear(%x, @s) : u8[batch,3,4]\n"
       "  %q2 = QuantizeLinear(%x, @sa, @za) {axis = 1} : i8[batch,3,4]\n"
       "  %d = DequantizeLinear(%u, @sa, @zu) {axis = -2} : f32[batch,3,4]\n"
       "  %d2 = DequantizeLinear(%i, @s, @z0) : f32[batch,4]\n"
       "  return %q, %q2, %d, %d2\n}\n",
       4);
  each("dynamicquantizelinear",
       "sym batch <= 16\n"
       "func @forward(%x: f32[batch,3,5], %w: f32[batch,300]) -> (u8[batch,3,5], f32[], "
       "u8[], u8[batch,300], f32[], u8[]) {\n"
       "  %y, %s, %z = DynamicQuantizeLinear(%x) : u8[batch,3,5], f32[], u8[]\n"
       "  %y2, %s2, %z2 = DynamicQuantizeLinear(%w) : u8[batch,300], f32[], u8[]\n"
       "  return %y, %s, %z, %y2, %s2, %z2\n}\n",
       2);
  each("matmulinteger, qlinearmatmul",
       "sym batch <= 16\n"
       "global @b : u8[4,3] = dense<[1, 2, 3, 250, 0, 7, 9, 128, 4, 5, 6, 200]>\n"
       "global @b3 : i8[2,4,3] = dense<[1, -2, 3, -100, 0, 7, 9, 12, -4, 5, 6, 20, "
       "-1, 2, 3, 100, 0, -7, 9, 12, 4, -5, 6, -20]>\n"
       "global @za : u8[2] = dense<[3, 1]>\n"
       "global @zb : u8[] = dense<[2]>\n"
       "global @zi : i8[] = dense<[1]>\n"
       "global @as : f32[] = dense<[0.0213]>\n"
       "global @bs : f32[3] = dense<[0.517, 0.2459, 1.5173]>\n"
       "global @ys : f32[] = dense<[0.2087]>\n"
       "global @zy : u8[] = dense<[100]>\n"
       "func @forward(%a: u8[batch,2,4], %c: i8[2,2,4]) -> (i32[batch,2,3], "
       "u8[batch,2,3], "
       "i32[2,2,3]) {\n"
       "  %m = MatMulInteger(%a, @b, @za, @zb) : i32[batch,2,3]\n"
       "  %q = QLinearMatMul(%a, @as, @za, @b, @bs, @zb, @ys, @zy) : u8[batch,2,3]\n"
       "  %m3 = MatMulInteger(%c, @b3, @zi) : i32[2,2,3]\n"
       "  return %m, %q, %m3\n}\n",
       3);
  each("convinteger, qlinearconv",
       "sym batch <= 16\n"
       "global @w : u8[4,2,2,2] = dense<[1, 2, 3, 250, 0, 7, 9, 128, 4, 5, 6, 200, 11, "
       "12, "
       "13, 14, 1, 2, 3, 250, 0, 7, 9, 128, 4, 5, 6, 200, 11, 12, 13, 14]>\n"
       "global @zx : u8[] = dense<[2]>\n"
       "global @zw : u8[4] = dense<[1, 0, 3, 128]>\n"
       "global @xs : f32[] = dense<[0.0517]>\n"
       "global @ws : f32[4] = dense<[0.513, 0.2471, 1.537, 0.0119]>\n"
       "global @ys : f32[] = dense<[0.3131]>\n"
       "global @zy : u8[] = dense<[128]>\n"
       "global @bi : i32[4] = dense<[5, -40, 100, 0]>\n"
       "func @forward(%x: u8[batch,2,4,5]) -> (i32[batch,4,5,6], u8[batch,4,2,2]) {\n"
       "  %c = ConvInteger(%x, @w, @zx, @zw) {pads = [1, 1, 1, 1]} : i32[batch,4,5,6]\n"
       "  %q = QLinearConv(%x, @xs, @zx, @w, @ws, @zw, @ys, @zy, @bi) {strides = [2, 2]} "
       ": u8[batch,4,2,2]\n"
       "  return %c, %q\n}\n",
       2);
}

/* GridSample: every mode with every padding rule, align_corners on and
 * off (the grid's values in [-2, 2]: a third of the samples outside). */
static inline void gpu_test_grid_sample_forms(gpu_test_form_fn each) {
  static const char *const modes[] = {"bilinear", "nearest", "bicubic"};
  static const char *const pads[] = {"zeros", "border", "reflection"};
  char text[8192];
  int k = 0;
  k += snprintf(text + k, sizeof text - (size_t)k,
                "sym batch <= 16\n"
                "func @forward(%%x: f32[batch,2,4,5], %%g: f32[batch,3,4,2]) -> (");
  for (int i = 0; i < 18; i++)
    k += snprintf(text + k, sizeof text - (size_t)k, "%sf32[batch,2,3,4]", i ? ", " : "");
  k += snprintf(text + k, sizeof text - (size_t)k, ") {\n");
  for (int i = 0; i < 18; i++)
    k += snprintf(text + k, sizeof text - (size_t)k,
                  "  %%y%d = GridSample(%%x, %%g) {mode = \"%s\", padding_mode = \"%s\", "
                  "align_corners = %d} : f32[batch,2,3,4]\n",
                  i, modes[i % 3], pads[(i / 3) % 3], i / 9);
  k += snprintf(text + k, sizeof text - (size_t)k, "  return ");
  for (int i = 0; i < 18; i++)
    k += snprintf(text + k, sizeof text - (size_t)k, "%s%%y%d", i ? ", " : "", i);
  snprintf(text + k, sizeof text - (size_t)k, "\n}\n");
  each("gridsample", text, 18);
}

/* BatchNormalization in training mode: with the running statistics
 * (momentum, epsilon given) over [N, C, H, W], and without them over
 * [N, C]. */
static inline void gpu_test_bn_train_forms(gpu_test_form_fn each) {
  each("batchnorm training",
       "sym batch <= 16\n"
       "global @s : f32[3] = dense<[0.5, 1.5, -1.0]>\n"
       "global @b : f32[3] = dense<[0.1, -0.2, 0.3]>\n"
       "global @mu : f32[3] = dense<[0.25, -0.5, 1.0]>\n"
       "global @var : f32[3] = dense<[1.0, 2.0, 0.5]>\n"
       "func @forward(%x: f32[batch,3,4,5], %z: f32[batch,3]) -> (f32[batch,3,4,5], "
       "f32[3], "
       "f32[3], f32[batch,3]) {\n"
       "  %y, %m, %v = BatchNormalization(%x, @s, @b, @mu, @var) {training_mode = 1, "
       "momentum = 0.8, epsilon = 0.01} : f32[batch,3,4,5], f32[3], f32[3]\n"
       "  %y2 = BatchNormalization(%z, @s, @b, @mu, @var) {training_mode = 1} : "
       "f32[batch,3]\n"
       "  return %y, %m, %v, %y2\n}\n",
       2);
}

/* RoiAlign: avg with a fixed sampling ratio (half_pixel), max and avg with
 * the adaptive one (output_half_pixel, rois widened to 1); the rois'
 * corners in [-2, 2] scaled by 3 (some reversed: empty bins). */
static inline void gpu_test_roi_align_forms(gpu_test_form_fn each) {
  each("roialign",
       "sym batch <= 16\n"
       "global @bi : i64[3] = dense<[0, 1, 1]>\n"
       "func @forward(%x: f32[2,3,6,7], %r: f32[3,4]) -> (f32[3,3,2,3], f32[3,3,3,2], "
       "f32[3,3,2,2]) {\n"
       "  %a = RoiAlign(%x, %r, @bi) {output_height = 2, output_width = 3, "
       "sampling_ratio = "
       "2, spatial_scale = 3.0} : f32[3,3,2,3]\n"
       "  %m = RoiAlign(%x, %r, @bi) {mode = \"max\", output_height = 3, output_width = "
       "2, "
       "spatial_scale = 3.0, coordinate_transformation_mode = \"output_half_pixel\"} : "
       "f32[3,3,3,2]\n"
       "  %v = RoiAlign(%x, %r, @bi) {output_height = 2, output_width = 2, spatial_scale "
       "= "
       "3.0} : f32[3,3,2,2]\n"
       "  return %a, %m, %v\n}\n",
       3);
}

/* MaxUnpool of MaxPool's values and Indices (2-D, strides, pads), and of
 * i64 values at constant indices with a repeated target (the last wins). */
static inline void gpu_test_max_unpool_forms(gpu_test_form_fn each) {
  each("maxunpool",
       "sym batch <= 16\n"
       "global @ix : i64[1,1,2,3] = dense<[0, 7, 7, 12, 3, 19]>\n"
       "func @forward(%x: f32[batch,2,4,6], %v: i64[1,1,2,3]) -> (f32[batch,2,4,6], "
       "i64[1,1,4,5]) {\n"
       "  %m, %i = MaxPool(%x) {kernel_shape = [2, 2], strides = [2, 2]} : "
       "f32[batch,2,2,3], i64[batch,2,2,3]\n"
       "  %u = MaxUnpool(%m, %i) {kernel_shape = [2, 2], strides = [2, 2]} : "
       "f32[batch,2,4,6]\n"
       "  %w = MaxUnpool(%v, @ix) {kernel_shape = [2, 3], strides = [2, 1]} : "
       "i64[1,1,4,5]\n"
       "  return %u, %w\n}\n",
       3);
}

/* Every form of this file. */
static inline void gpu_test_ops2_forms(gpu_test_form_fn each) {
  gpu_test_resize_forms(each);
  gpu_test_window_forms(each);
  gpu_test_pad_forms(each);
  gpu_test_quant_forms(each);
  gpu_test_grid_sample_forms(each);
  gpu_test_bn_train_forms(each);
  gpu_test_roi_align_forms(each);
  gpu_test_max_unpool_forms(each);
}

#endif /* DML_GPU_TEST_OPS2_H_ */
