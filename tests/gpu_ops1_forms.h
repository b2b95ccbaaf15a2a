/* gpu_ops1_forms.h — the kernel forms of codegen/schedule_ops1.c as IR
 * texts, for the GPU tests (tests/vulkan/test_vulkan_ops1.c runs them on
 * Vulkan against the CPU, tests/cuda/gen_cuda_packages.c writes them as
 * CUDA packages for test_cuda). Random inputs (gpu_test_compare_with: f32
 * in [-2, 2), integers in [-5, 5]); index inputs that must lie in range
 * (scatter and gather indices, sequence lengths, axes) are constants. */
#ifndef DML_GPU_OPS1_FORMS_H_
#define DML_GPU_OPS1_FORMS_H_

#include "gpu_test_util.h"

/* Calls `each` once per form. dml_every_op (tests/check/every_op.c: one-node
 * functions of every op on every dtype, random shapes, an empty dim, rows
 * of 70,001) covers the one-node static forms these had (docs/kernels.md
 * "Every op on every backend" has the audit, form by form); what stays
 * here is what it does not test, each with why:
 * - Trilu upper/lower with k fed at run time (every_op's k is a constant)
 *   on i64 [batch,4,5] (a symbolic dim); IsInf with detect_positive /
 *   detect_negative (every_op's IsInf has no attributes) and IsNaN of
 *   x / 0 and (x / 0) * 0 (both signs of infinity and NaN) over
 *   [batch, 4] (symbolic);
 * - BitShift on u8 (constant shifts 0..9, random ones), u16, u32, u64 with
 *   shifts up to and past the bit width (every_op's integer inputs are 0
 *   or 1), over [batch, 4];
 * - CumSum (and CumProd-26) inclusive/exclusive/reverse along the
 *   symbolic axis 0 and along an axis given as i32[1], on f32 and i64
 *   values in [-5, 5] (every_op's dims are static, its integers 0 or 1);
 * - ScatterElements along axis 0 with duplicate indices (reduction none)
 *   and max over i64 with i32 indices, GatherND with batch_dims 0 (index
 *   tuples, negative components) and negative indices at batch_dims 1,
 *   ReverseSequence with a sequence length 0 and with batch axis 0 and i32
 *   lengths (every_op: axis 1, i64 indices in range, lengths 1..4, batch
 *   axis 1);
 * - MeanVarianceNormalization of boxes of equal values (Expand of one
 *   value per box: two nodes), per element and a workgroup per box: y = 0,
 *   where an f32 mean's rounding divided by its own size + 1e-9 gave
 *   about +-0.99 on lavapipe before the shifted sums (schedule_math.c), a
 *   regression case (every_op's random values never form such boxes);
 * - LRN of an even size and a given bias, and Det of 2x2 batches, over a
 *   symbolic batch (every_op: LRN size 3, Det 3x3 and 4x4, static);
 * - Adagrad, Momentum (standard, nesterov) and Adam over two tensors (the
 *   state made non-negative by Abs kernels where sqrt reads it: several
 *   nodes; every_op has one tensor, standard Momentum, no
 *   norm_coefficient_post). */
static inline void gpu_test_ops1_forms(gpu_test_form_fn each) {
  each("trilu, isinf, isnan",
       "sym batch <= 16\n"
       "global @z : f32[4] = dense<[0.0, 1.0, 0.0, 2.0]>\n"
       "func @forward(%x: i64[batch,4,5], %f: f32[3,5], %k: i64[], %v: f32[batch,4]) -> "
       "(i64[batch,4,5], f32[3,5], bool[batch,4], bool[batch,4], bool[batch,4], "
       "bool[batch,4]) {\n"
       "  %u = Trilu(%x, %k) : i64[batch,4,5]\n"
       "  %l = Trilu(%f, %k) {upper = 0} : f32[3,5]\n"
       "  %d = Div(%v, @z) : f32[batch,4]\n"
       "  %nn = Mul(%d, @z) : f32[batch,4]\n"
       "  %ii = IsInf(%d) : bool[batch,4]\n"
       "  %ip = IsInf(%d) {detect_negative = 0} : bool[batch,4]\n"
       "  %in = IsInf(%d) {detect_positive = 0} : bool[batch,4]\n"
       "  %na = IsNaN(%nn) : bool[batch,4]\n"
       "  return %u, %l, %ii, %ip, %in, %na\n}\n",
       7);
  each("bitshift u8 u16 u32 u64",
       "sym batch <= 16\n"
       "global @s : u8[4] = dense<[0, 3, 7, 9]>\n"
       "global @s16 : u16[4] = dense<[1, 15, 16, 4]>\n"
       "global @s32 : u32[4] = dense<[31, 0, 32, 5]>\n"
       "global @s64 : u64[4] = dense<[63, 1, 64, 40]>\n"
       "func @forward(%x: u8[batch,4], %y: u8[batch,4], %a: u16[batch,4], %b: "
       "u32[batch,4], "
       "%c: u64[batch,4]) -> (u8[batch,4], u8[batch,4], u8[batch,4], u16[batch,4], "
       "u32[batch,4], u32[batch,4], u64[batch,4], u64[batch,4]) {\n"
       "  %l = BitShift(%x, @s) {direction = \"LEFT\"} : u8[batch,4]\n"
       "  %r = BitShift(%x, @s) {direction = \"RIGHT\"} : u8[batch,4]\n"
       "  %v = BitShift(%x, %y) {direction = \"RIGHT\"} : u8[batch,4]\n"
       "  %l16 = BitShift(%a, @s16) {direction = \"LEFT\"} : u16[batch,4]\n"
       "  %l32 = BitShift(%b, @s32) {direction = \"LEFT\"} : u32[batch,4]\n"
       "  %r32 = BitShift(%b, @s32) {direction = \"RIGHT\"} : u32[batch,4]\n"
       "  %l64 = BitShift(%c, @s64) {direction = \"LEFT\"} : u64[batch,4]\n"
       "  %r64 = BitShift(%c, @s64) {direction = \"RIGHT\"} : u64[batch,4]\n"
       "  return %l, %r, %v, %l16, %l32, %r32, %l64, %r64\n}\n",
       8);
  each(
      "cumsum, cumprod",
      "sym batch <= 16\n"
      "global @a0 : i64[] = dense<[0]>\n"
      "global @a1 : i32[1] = dense<[-1]>\n"
      "func @forward(%x: f32[batch,6], %n: i64[batch,3]) -> (f32[batch,6], f32[batch,6], "
      "f32[batch,6], i64[batch,3], i64[batch,3], f32[batch,6], i64[batch,3]) {\n"
      "  %c = CumSum(%x, @a1) : f32[batch,6]\n"
      "  %ce = CumSum(%x, @a1) {exclusive = 1} : f32[batch,6]\n"
      "  %cr = CumSum(%x, @a0) {reverse = 1, exclusive = 1} : f32[batch,6]\n"
      "  %ci = CumSum(%n, @a0) : i64[batch,3]\n"
      "  %cir = CumSum(%n, @a1) {reverse = 1} : i64[batch,3]\n"
      "  %cp = CumProd(%x, @a1) {exclusive = 1} : f32[batch,6]\n"
      "  %cpi = CumProd(%n, @a0) {reverse = 1} : i64[batch,3]\n"
      "  return %c, %ce, %cr, %ci, %cir, %cp, %cpi\n}\n",
      7);
  each("scatter, gathernd, reversesequence",
       "global @ie : i64[2,3] = dense<[1, -1, 0, 1, 0, 2]>\n"
       "global @ia : i32[3,2] = dense<[4, 0, -1, 4, 1, 2]>\n"
       "global @g0 : i64[2,2,2] = dense<[0, 1, 2, -1, 1, 0, 3, 2]>\n"
       "global @g1 : i64[3,1] = dense<[1, -1, 3]>\n"
       "global @sl : i64[3] = dense<[2, 0, 4]>\n"
       "global @sl4 : i32[4] = dense<[1, 3, 3, 0]>\n"
       "func @forward(%d: f32[3,3], %u: f32[2,3], %di: i64[3,5], %ui: i64[3,2], "
       "%gx: f32[4,3], %gy: i32[3,4,2], %rx: f32[4,3,2], %ry: i64[4,5]) -> (f32[3,3], "
       "i64[3,5], f32[2,2], i32[3,2], f32[4,3,2], i64[4,5]) {\n"
       "  %s0 = ScatterElements(%d, @ie, %u) : f32[3,3]\n"
       "  %s2 = ScatterElements(%di, @ia, %ui) {axis = -1, reduction = \"max\"} : "
       "i64[3,5]\n"
       "  %t0 = GatherND(%gx, @g0) : f32[2,2]\n"
       "  %t1 = GatherND(%gy, @g1) {batch_dims = 1} : i32[3,2]\n"
       "  %r0 = ReverseSequence(%rx, @sl) {batch_axis = 1, time_axis = 0} : f32[4,3,2]\n"
       "  %r1 = ReverseSequence(%ry, @sl4) {batch_axis = 0, time_axis = 1} : i64[4,5]\n"
       "  return %s0, %s2, %t0, %t1, %r0, %r1\n}\n",
       6);
  each("mvn of boxes of equal values",
       "sym batch <= 16\n"
       "global @s1 : i64[4] = dense<[1, 3, 5, 7]>\n"
       "global @s2 : i64[4] = dense<[2, 3, 20, 20]>\n"
       "func @forward(%x: f32[batch,3,1,1], %z: f32[1,3,1,1]) -> (f32[batch,3,5,7], "
       "f32[2,3,20,20]) {\n"
       "  %e = Expand(%x, @s1) : f32[batch,3,5,7]\n"
       "  %y = MeanVarianceNormalization(%e) {axes = [2, 3]} : f32[batch,3,5,7]\n"
       "  %e2 = Expand(%z, @s2) : f32[2,3,20,20]\n"
       "  %y2 = MeanVarianceNormalization(%e2) : f32[2,3,20,20]\n"
       "  return %y, %y2\n}\n",
       4);
  each("lrn, det",
       "sym batch <= 16\n"
       "func @forward(%x: f32[batch,5,3,2], %a: f32[batch,2,2]) -> (f32[batch,5,3,2], "
       "f32[batch,5,3,2], f32[batch]) {\n"
       "  %l = LRN(%x) {size = 3, alpha = 0.02, beta = 0.75, bias = 1.5} : "
       "f32[batch,5,3,2]\n"
       "  %l2 = LRN(%x) {size = 4} : f32[batch,5,3,2]\n"
       "  %d2 = Det(%a) : f32[batch]\n"
       "  return %l, %l2, %d2\n}\n",
       3);
  each(
      "adagrad, momentum, adam",
      "func @forward(%r: f32[], %t: i64[], %x1: f32[3], %x2: f32[2,4], %g1: f32[3], "
      "%g2: f32[2,4], %a1: f32[3], %a2: f32[2,4], %b1: f32[3], %b2: f32[2,4]) -> "
      "(f32[3], f32[2,4], f32[3], f32[2,4], f32[3], f32[2,4], f32[3], f32[2,4], "
      "f32[3], f32[3], f32[3], f32[2,4], f32[3], f32[2,4]) {\n"
      "  %h1 = Abs(%a1) : f32[3]\n"
      "  %h2 = Abs(%a2) : f32[2,4]\n"
      "  %q1 = Abs(%b1) : f32[3]\n"
      "  %q2 = Abs(%b2) : f32[2,4]\n"
      "  %ax1, %ax2, %ah1, %ah2 = Adagrad(%r, %t, %x1, %x2, %g1, %g2, %h1, %h2) "
      "{decay_factor = 0.1, epsilon = 0.01, norm_coefficient = 0.001} : f32[3], "
      "f32[2,4], f32[3], f32[2,4]\n"
      "  %mx1, %mx2, %mv1, %mv2 = Momentum(%r, %t, %x1, %x2, %g1, %g2, %a1, %a2) "
      "{alpha = 0.9, beta = 0.5, mode = \"nesterov\", norm_coefficient = 0.01} : f32[3], "
      "f32[2,4], f32[3], f32[2,4]\n"
      "  %sx1, %sv1 = Momentum(%r, %t, %x1, %g1, %a1) {alpha = 0.8, beta = 0.3, mode = "
      "\"standard\", norm_coefficient = 0.0} : f32[3], f32[3]\n"
      "  %dx1, %dx2, %dv1, %dv2, %dh1, %dh2 = Adam(%r, %t, %x1, %x2, %g1, %g2, %a1, %a2, "
      "%q1, %q2) {alpha = 0.85, beta = 0.95, epsilon = 0.01, norm_coefficient = 0.02, "
      "norm_coefficient_post = 0.1} : f32[3], f32[2,4], f32[3], f32[2,4], f32[3], "
      "f32[2,4]\n"
      "  return %ax1, %ax2, %ah1, %ah2, %mx1, %mx2, %mv1, %mv2, %sx1, %sv1, %dx1, %dx2, "
      "%dv1, %dv2\n}\n",
      8);
}

#endif /* DML_GPU_OPS1_FORMS_H_ */
