/* gpu_graph_forms.h — whole-graph forms that went wrong between kernels
 * (issue 23 and what tests/vulkan/graphgen found), as IR text for every GPU
 * backend: tests/vulkan/test_vulkan_graphs runs them on Vulkan against the
 * CPU, tests/cuda/gen_cuda_packages compiles them for cpu,cuda (test_cuda
 * runs them on a CUDA device). */
#ifndef GPU_GRAPH_FORMS_H_
#define GPU_GRAPH_FORMS_H_

#include "gpu_test_util.h"

/* Calls `each` (gpu_test_form_fn) with each form, its label and its number
 * of kernels. */
static inline void gpu_graph_forms(gpu_test_form_fn each) {
  /* An elementwise kernel planned in place over a Concat's result (the
   * Concat dies at the Mul, whose group writes the Sigmoid there), large
   * enough to take 4 elements per invocation (6000 * batch elements, 1500 *
   * batch invocations: the last workgroup partial at batch 1, 3 and 16).
   * Invocations past 1500 * batch used to redo the elements of the first
   * ones' second element, reading what those had written already: on
   * lavapipe, Sigmoid(Mul(Sigmoid(Mul(c)))) for some (issue 23). */
  each("in-place unrolled elementwise after Concat",
       "sym batch <= 16\n"
       "global @k : f32[6,1] = dense<[0.5, -1.5, 2.0, 0.75, -0.25, 1.25]>\n"
       "func @forward(%x: f32[batch,3,1000], %z: f32[batch,3,1000]) -> "
       "(f32[batch,6], f32[batch,6,1000]) {\n"
       "  %c = Concat(%x, %z) {axis = 1} : f32[batch,6,1000]\n"
       "  %m = Mul(%c, @k) : f32[batch,6,1000]\n"
       "  %s = Sigmoid(%m) : f32[batch,6,1000]\n"
       "  %y = ReduceSum(%s) {axes = [2], keepdims = 0} : f32[batch,6]\n"
       "  %o = Neg(%y) : f32[batch,6]\n"
       "  return %o, %s\n}\n",
       3);
  /* A reduction whose reduced dims all have extent 1 (ReduceSum over a
   * trailing 1): the CPU's f32 path (runtime/cpu/cpu_reduce.c) took the
   * whole tensor as both its outer and inner extent, reading and writing
   * numel^2 elements, over the values planned after the result (here Exp's
   * and Max's) and past the arena (dml_graphgen seed 19, whose shrinking
   * then crashed in free()). */
  each("reduction over extent-1 dims",
       "sym batch <= 16\n"
       "func @forward(%x: f32[batch,24,1], %z: f32[batch,24]) -> (f32[batch,24], "
       "f32[batch,24], f32[batch,1,24]) {\n"
       "  %e = Exp(%z) : f32[batch,24]\n"
       "  %r = ReduceSum(%x) {axes = [2], keepdims = 0} : f32[batch,24]\n"
       "  %m = ReduceMax(%x) {axes = [-1], keepdims = 1} : f32[batch,24,1]\n"
       "  %t = Transpose(%m) {perm = [0, 2, 1]} : f32[batch,1,24]\n"
       "  %s = Add(%r, %e) : f32[batch,24]\n"
       "  return %s, %e, %t\n}\n",
       5);
}

#endif /* GPU_GRAPH_FORMS_H_ */
