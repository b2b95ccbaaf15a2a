/* conv_direct_cases.h — f16/bf16 convolutions rendered as CUDA's direct
 * kernel (one thread per output, a loop over input channels and the
 * window; its f16 taps widened by the bare cvt and its channel loop
 * unrolled: docs/kernels.md "The direct convolution's 16-bit loads"):
 * `gen_cuda_packages OUT --conv-direct` compiles each for cpu,cuda with
 * --cuda-arch sm_75 (below the tensor-core forms, so that group-1
 * convolutions of C * kh * kw >= 64 take the direct kernel too) as
 * conv_direct_<i>.dmlpkg and writes conv_direct_<i>.params.h (the
 * geometry and the arena offsets of X, W, B and Y); tests/cuda/conv_emu
 * (direct_emu.py) runs each kernel's CUDA C on the host against a double
 * reference. Covered: 1x1 with channels off the unroll count (C 37),
 * a large-K 1x1 (mobilenet_v2's 384 -> 64 project conv), stride 2 with
 * asymmetric pads and a dilation, depthwise with bias + Relu, grouped,
 * a 1x3 window (unroll 3), a residual Add + Relu, a 1-D conv, batch > 1. */
#ifndef DML_CONV_DIRECT_CASES_H_
#define DML_CONV_DIRECT_CASES_H_

typedef struct {
  const char *what, *ir;
  /* the geometry (1-D: H = OH = KH = 1, SH = DH = 1, PH = 0) */
  int n, c, h, w, m, kh, kw, oh, ow, sh, sw, dh, dw, ph, pw, group;
  int bias, resid, relu; /* bias input %b; Y = Relu(Conv + X) */
} conv_direct_case_t;

static const conv_direct_case_t conv_direct_cases[] = {
    {"1x1, C 37 -> 20 (off the unroll of 8), 7x9, batch 2, bias, Relu, f16",
     "func @forward(%x: f16[2,37,7,9], %w: f16[20,37,1,1], %b: f16[20]) -> "
     "(f16[2,20,7,9]) {\n"
     "  %c = Conv(%x, %w, %b) : f16[2,20,7,9]\n"
     "  %y = Relu(%c) : f16[2,20,7,9]\n  return %y\n}\n",
     2,
     37,
     7,
     9,
     20,
     1,
     1,
     7,
     9,
     1,
     1,
     1,
     1,
     0,
     0,
     1,
     1,
     0,
     1},
    {"1x1, C 384 -> 64, 14x14, batch 1 (mobilenet_v2's project conv), f16",
     "func @forward(%x: f16[1,384,14,14], %w: f16[64,384,1,1]) -> (f16[1,64,14,14]) {\n"
     "  %y = Conv(%x, %w) : f16[1,64,14,14]\n  return %y\n}\n",
     1,
     384,
     14,
     14,
     64,
     1,
     1,
     14,
     14,
     1,
     1,
     1,
     1,
     0,
     0,
     1,
     0,
     0,
     0},
    {"3x3 stride 2, pads [1,0,0,1], dilations [2,1], C 12 -> 20, bf16",
     "func @forward(%x: bf16[1,12,13,10], %w: bf16[20,12,3,3]) -> (bf16[1,20,5,5]) {\n"
     "  %y = Conv(%x, %w) {strides = [2, 2], dilations = [2, 1], pads = [1, 0, 0, 1]} "
     ": bf16[1,20,5,5]\n  return %y\n}\n",
     1,
     12,
     13,
     10,
     20,
     3,
     3,
     5,
     5,
     2,
     2,
     2,
     1,
     1,
     0,
     1,
     0,
     0,
     0},
    {"depthwise 3x3 pad 1, C 24, 10x10, batch 3, bias, Relu, f16",
     "func @forward(%x: f16[3,24,10,10], %w: f16[24,1,3,3], %b: f16[24]) -> "
     "(f16[3,24,10,10]) {\n"
     "  %c = Conv(%x, %w, %b) {group = 24, pads = [1, 1, 1, 1]} : f16[3,24,10,10]\n"
     "  %y = Relu(%c) : f16[3,24,10,10]\n  return %y\n}\n",
     3,
     24,
     10,
     10,
     24,
     3,
     3,
     10,
     10,
     1,
     1,
     1,
     1,
     1,
     1,
     24,
     1,
     0,
     1},
    {"depthwise 3x3 stride 2, pad 1, C 17 (odd), 9x9, bf16",
     "func @forward(%x: bf16[1,17,9,9], %w: bf16[17,1,3,3]) -> (bf16[1,17,5,5]) {\n"
     "  %y = Conv(%x, %w) {group = 17, strides = [2, 2], pads = [1, 1, 1, 1]} : "
     "bf16[1,17,5,5]\n  return %y\n}\n",
     1,
     17,
     9,
     9,
     17,
     3,
     3,
     5,
     5,
     2,
     2,
     1,
     1,
     1,
     1,
     17,
     0,
     0,
     0},
    {"grouped 3x3, group 2, C 10 -> 6, dilations [2,2], batch 2, f16",
     "func @forward(%x: f16[2,10,9,8], %w: f16[6,5,3,3]) -> (f16[2,6,5,4]) {\n"
     "  %y = Conv(%x, %w) {group = 2, dilations = [2, 2]} : f16[2,6,5,4]\n"
     "  return %y\n}\n",
     2,
     10,
     9,
     8,
     6,
     3,
     3,
     5,
     4,
     1,
     1,
     2,
     2,
     0,
     0,
     2,
     0,
     0,
     0},
    {"1x3, stride [1,2], pads [0,1,0,1], C 11 -> 5 (unroll 3), f16",
     "func @forward(%x: f16[1,11,4,9], %w: f16[5,11,1,3]) -> (f16[1,5,4,5]) {\n"
     "  %y = Conv(%x, %w) {strides = [1, 2], pads = [0, 1, 0, 1]} : f16[1,5,4,5]\n"
     "  return %y\n}\n",
     1,
     11,
     4,
     9,
     5,
     1,
     3,
     4,
     5,
     1,
     2,
     1,
     1,
     0,
     1,
     1,
     0,
     0,
     0},
    {"3x3 pad 1, C 16 -> 16, residual Add + Relu, 8x8, batch 2, f16",
     "func @forward(%x: f16[2,16,8,8], %w: f16[16,16,3,3]) -> (f16[2,16,8,8]) {\n"
     "  %c = Conv(%x, %w) {pads = [1, 1, 1, 1]} : f16[2,16,8,8]\n"
     "  %a = Add(%c, %x) : f16[2,16,8,8]\n"
     "  %y = Relu(%a) : f16[2,16,8,8]\n  return %y\n}\n",
     2,
     16,
     8,
     8,
     16,
     3,
     3,
     8,
     8,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     0,
     1,
     1},
    {"1-D k 5, stride 2, pad 1, C 24 -> 40, batch 2, bf16",
     "func @forward(%x: bf16[2,24,37], %w: bf16[40,24,5]) -> (bf16[2,40,17]) {\n"
     "  %y = Conv(%x, %w) {strides = [2], pads = [1, 0]} : bf16[2,40,17]\n"
     "  return %y\n}\n",
     2,
     24,
     1,
     37,
     40,
     1,
     5,
     1,
     17,
     1,
     2,
     1,
     1,
     0,
     1,
     1,
     0,
     0,
     0},
};
#define CONV_DIRECT_N_CASES (sizeof conv_direct_cases / sizeof conv_direct_cases[0])

#endif /* DML_CONV_DIRECT_CASES_H_ */
