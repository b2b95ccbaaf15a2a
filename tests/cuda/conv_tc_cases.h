/* conv_tc_cases.h — f16/bf16 convolutions that take the CUDA implicit-GEMM
 * tensor-core form (codegen/cuda/cuda_mma.c, dml_codegen_cuda_mma16:
 * group 1, C * kh * kw >= 64, static spatial dims): gen_cuda_packages
 * writes each as conv_tc_<index>.dmlpkg (cpu,cuda); test_cuda runs it on
 * random inputs in [-2, 2) against the CPU and checks that the device ran
 * `n_tc` kernels named *_mma_f16 / *_mma_bf16 (compute capability 8.0 and
 * later); tests/cuda/conv_emu runs each such kernel's CUDA C on the host.
 * Covered: 3x3 pad 1 with a bias and Relu, batch > 1; stride 2 with
 * asymmetric pads and a dilation; a 1-D conv (NCW); a residual Add + Relu
 * epilogue; a 1x1 conv over three 128-column tiles (a symbolic batch:
 * enough tiles at its bound for a 1x1 conv's tensor-core form); channels and K = C * kh
 * * kw off the 32-deep step and the 128 x 128 tile, K off a multiple of 8
 * (W's rows not 16-byte aligned: 2-byte loads of B); a symbolic batch over
 * several 128-row tiles; K = 6336 past the gather tables' 6144. (A BatchNormalization
 * after a conv of constant weights is folded into them: the bias case.) */
#ifndef DML_CONV_TC_CASES_H_
#define DML_CONV_TC_CASES_H_

typedef struct {
  const char *what, *ir;
  int bf16; /* the dtype: f16 (0) or bf16 (1) */
  int n_tc; /* kernels of the tensor-core form in the package */
} conv_tc_case_t;

static const conv_tc_case_t conv_tc_cases[] = {
    {"3x3 pad 1, C 16 -> 36, bias, Relu, batch 2, f16",
     "func @forward(%x: f16[2,16,9,11], %w: f16[36,16,3,3], %b: f16[36]) -> "
     "(f16[2,36,9,11]) {\n"
     "  %c = Conv(%x, %w, %b) {pads = [1, 1, 1, 1]} : f16[2,36,9,11]\n"
     "  %r = Relu(%c) : f16[2,36,9,11]\n  return %r\n}\n",
     0, 1},
    {"3x3 stride 2, pads [1,0,0,1], dilations [2,1], C 12 (K 108: 2-byte B), bf16",
     "func @forward(%x: bf16[1,12,13,10], %w: bf16[20,12,3,3]) -> (bf16[1,20,5,5]) {\n"
     "  %c = Conv(%x, %w) {strides = [2, 2], dilations = [2, 1], pads = [1, 0, 0, 1]} "
     ": bf16[1,20,5,5]\n  return %c\n}\n",
     1, 1},
    {"1-D k 5, stride 2, pad 1, C 24 -> 40, batch 3, f16",
     "func @forward(%x: f16[3,24,37], %w: f16[40,24,5]) -> (f16[3,40,17]) {\n"
     "  %c = Conv(%x, %w) {strides = [2], pads = [1, 0]} : f16[3,40,17]\n"
     "  return %c\n}\n",
     0, 1},
    {"3x3 pad 1, C 32 -> 32, residual Add + Relu, batch 2, bf16",
     "func @forward(%x: bf16[2,32,10,10], %w: bf16[32,32,3,3]) -> (bf16[2,32,10,10]) {\n"
     "  %c = Conv(%x, %w) {pads = [1, 1, 1, 1]} : bf16[2,32,10,10]\n"
     "  %a = Add(%c, %x) : bf16[2,32,10,10]\n"
     "  %r = Relu(%a) : bf16[2,32,10,10]\n  return %r\n}\n",
     1, 1},
    /* a symbolic batch of bound 128: 49 x 3 = 147 output tiles at the
     * bound, at least the 132 a 1x1 conv needs for the tensor cores
     * (conv16_direct_1x1); run at batch 3 */
    {"1x1, C 72 -> 260 (three 128-column tiles), 7x7, symbolic batch <= 128, f16",
     "sym batch <= 128\n"
     "func @forward(%x: f16[batch,72,7,7], %w: f16[260,72,1,1]) -> "
     "(f16[batch,260,7,7]) {\n"
     "  %c = Conv(%x, %w) : f16[batch,260,7,7]\n  return %c\n}\n",
     0, 1},
    {"symbolic batch, 3x3 pad 1, C 24 -> 48, 12x12, bias, Sigmoid, f16",
     "sym batch <= 8\n"
     "func @forward(%x: f16[batch,24,12,12], %w: f16[48,24,3,3], %b: f16[48]) -> "
     "(f16[batch,48,12,12]) {\n"
     "  %c = Conv(%x, %w, %b) {pads = [1, 1, 1, 1]} : f16[batch,48,12,12]\n"
     "  %s = Sigmoid(%c) : f16[batch,48,12,12]\n  return %s\n}\n",
     0, 1},
    {"3x3 pad 1, C 704 -> 16 (K 6336: k divided out, no gather tables), 4x4, f16",
     "func @forward(%x: f16[1,704,4,4], %w: f16[16,704,3,3]) -> (f16[1,16,4,4]) {\n"
     "  %c = Conv(%x, %w) {pads = [1, 1, 1, 1]} : f16[1,16,4,4]\n  return %c\n}\n",
     0, 1},
};
#define CONV_TC_N_CASES (sizeof conv_tc_cases / sizeof conv_tc_cases[0])

/* One more, conv_tc_<CONV_TC_N_CASES>.dmlpkg, with its weights and bias
 * in the weights buffer (globals: gen_cuda_packages writes their values):
 * 3x3 pad 1, C 40 -> 64, 14x14, batch 2, bias and Relu, f16 (K 360). */
#define CONV_TC_GLOBAL_WHAT "weights and bias globals, 3x3 pad 1, C 40 -> 64, Relu, f16"

/* The bound on the device's error in rounding steps of the dtype
 * (gpu_test_half_err: |device - cpu| / max(1, |cpu|) / step, step = 2u
 * with u = 2^-11 for f16, 2^-8 for bf16). Both sides sum the same f16/bf16
 * products exactly widened (in f32 on the device, in another order) and
 * round the sum to the dtype once, as the direct kernel: one step where
 * the sums straddle a rounding boundary, which the epilogue's next op (the
 * residual Add) may carry into a second rounding; and a margin for the
 * f32 sums' order (K <= 6336 products of |x w| < 4). A wrong fragment layout, gather
 * index or tile edge gives errors of the order of |y| (hundreds of steps). */
#define CONV_TC_STEPS 4.0

#endif /* DML_CONV_TC_CASES_H_ */
