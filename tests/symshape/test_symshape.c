/*
 * test_symshape.c — run-time shape arithmetic (ir/infer.c: sym_arith_derived
 * and the partially known shape elements): ONNX graphs that compute Resize
 * sizes, Reshape shapes, Slice ends and Pad pads from Shape(x) with
 * Sub/Div/Add/Mul/Mod, as torch.onnx's exporters do (tests/symshape/
 * gen_symshape.py), compile once with symbolic dims and run at three sizes on
 * the CPU, matching onnxruntime's saved outputs within 1e-4 * max(1, |ref|).
 * The compiled shapes are checked too: the computed sizes meet the Conv
 * extents as the same derived symbols, so no data-dependent dim is left where
 * the arithmetic is expressible.
 */
#define SYMDIMS_FIXTURE_DIR "tests/symshape"
#include "symdims_util.h"

/* Compiles `model` with bounds `b`, then runs its cases a, b, c (in the
 * order c, a, b: grow and shrink) on the CPU. */
static void run_cases(const char *model, const dml_onnx_dim_bound_t *b, size_t nb) {
  dml_rt_model_t *m = compile(model, b, nb, "cpu");
  dml_rt_session_t *s = NULL;
  if (m) CHECK_OK(dml_rt_session_create(m, "cpu", &s));
  if (s) {
    check_case(s, model, "c");
    check_case(s, model, "a");
    check_case(s, model, "b");
  }
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

/* Resize sizes [N, 8, (H-1)//2+1, (W-1)//2+1] meet the first Conv's extent
 * (H+1)/2 in the Concat (deeplabv3/lraspp dynamo exports). */
static void test_resize_sizes(void) {
  dml_onnx_dim_bound_t b[] = {{"N", 2}, {"H", 64}, {"W", 64}};
  run_cases("resize_sizes", b, 3);
}

/* Reshape to [N, 2, 4, h, w] and [N, 8, h*w] from Shape(x) (shufflenet's
 * channel shuffle in the dynamo export). */
static void test_reshape_shape(void) {
  dml_onnx_dim_bound_t b[] = {{"N", 2}, {"H", 64}, {"W", 64}};
  run_cases("reshape_shape", b, 3);
}

/* Reshape [-1, F, 4] of [B, 2, F, 4] with F = (T-10)//5+1 computed from
 * Shape(x): -1 is 2*B (wav2vec2's attention views). */
static void test_reshape_infer(void) {
  dml_onnx_dim_bound_t b[] = {{"B", 4}, {"T", 400}};
  run_cases("reshape_infer", b, 2);
}

/* [:, 1:S+1] of [B, S+1] broadcasts with [B, S] (whisper's shifted ids). */
static void test_slice_shift(void) {
  dml_onnx_dim_bound_t b[] = {{"B", 4}, {"S", 64}};
  run_cases("slice_shift", b, 2);
}

/* Pad to multiples of 8 with run-time pads of H and W: the channel dim
 * stays 3 for the Conv (ssdlite's image padding). */
static void test_pad_multiple(void) {
  dml_onnx_dim_bound_t b[] = {{"H", 64}, {"W", 64}};
  run_cases("pad_multiple", b, 2);
}

/* Pad to multiples of 32 as torchvision's GeneralizedRCNNTransform exports
 * it (float ceil, pads reordered through Reshape/Slice/Transpose): the
 * padded extents are 32*"(H+31)/32", so the Conv after compiles (ssdlite). */
static void test_pad_ceil(void) {
  dml_onnx_dim_bound_t b[] = {{"H", 128}, {"W", 128}};
  run_cases("pad_ceil", b, 2);
}

/* Concat of data-dependent extents (summed at run time by the CPU's shape
 * rule), a second Concat of the same extents with the same symbol, a
 * Slice of such an extent; case a has an empty part. */
static void test_dd_concat(void) {
  dml_onnx_dim_bound_t b[] = {{"S", 64}};
  dml_rt_model_t *m = compile("dd_concat", b, 1, "cpu");
  dml_rt_session_t *s = NULL;
  if (m) CHECK_OK(dml_rt_session_create(m, "cpu", &s));
  if (s) {
    check_case_n(s, "dd_concat", "c", 2);
    check_case_n(s, "dd_concat", "a", 2);
    check_case_n(s, "dd_concat", "b", 2);
  }
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

/* An If whose branches capture a data-dependent extent: the branch types it
 * with its own input symbol, which may be 0 (case a: empty). */
static void test_if_capture(void) {
  dml_onnx_dim_bound_t b[] = {{"S", 64}};
  run_cases("if_capture", b, 1);
}

/* Reshape [-1] of a product of two data-dependent extents: the -1 is
 * data-dependent, divided out at run time. */
static void test_dd_reshape(void) {
  dml_onnx_dim_bound_t b[] = {{"S", 64}};
  run_cases("dd_reshape", b, 1);
}

int main(void) {
  RUN(test_resize_sizes);
  RUN(test_reshape_shape);
  RUN(test_reshape_infer);
  RUN(test_slice_shift);
  RUN(test_pad_multiple);
  RUN(test_pad_ceil);
  RUN(test_dd_concat);
  RUN(test_if_capture);
  RUN(test_dd_reshape);
  return dml_test_finish();
}
