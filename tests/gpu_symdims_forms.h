/* gpu_symdims_forms.h — kernel forms over several symbolic dims per value
 * (the text models' [batch, heads, seq, seq] attention, issue 14), as IR
 * text for every GPU backend: tests/vulkan/test_vulkan_symdims runs each on
 * Vulkan against the CPU at several tuples of symbol values (1 and the
 * bounds included) and compiles each for CUDA (to PTX) and Metal.
 *
 * The forms: attention scores with one symbol in two dims (MatMul of
 * batched operands, K symbolic for scores x V; Softmax along a symbolic
 * axis, per invocation and, past 256 at the bound, per workgroup); a
 * padding mask (Cast, Unsqueeze, Where broadcasting [batch,1,1,seq] over
 * the scores, IsNaN, Transpose); Gather along an axis of symbolic length
 * and GatherND over [batch, seq] (batch_dims 0 and 1, as the dynamo
 * exporter writes masks); Concat/Reshape/Transpose/Slice and broadcasting
 * into a square; three symbols in one value (elementwise with
 * broadcasting, ReduceSum over a symbolic axis, Softmax over rows longer
 * than a workgroup); ReduceMean/ReduceMax/ArgMax/ReduceSum over the
 * scores' dims (rows up to 300); TopK over [batch, seq, 16] and along a
 * symbolic axis; dynamic quantization over [batch, seq, 4] (MatMulInteger
 * and QLinearMatMul with M = seq); LayerNormalization and InstanceNormalization over
 * symbolic dims (wav2vec2's feature encoder), rows per invocation and per
 * workgroup; a CNN's gradients (ConvWeightGrad, ConvInputGrad) and the
 * pools' (AveragePoolGrad, MaxPoolGrad) over symbolic [n, h, w]; an
 * embedding's gradient (ScatterND add over [batch, seq] ids). */
#ifndef GPU_SYMDIMS_FORMS_H_
#define GPU_SYMDIMS_FORMS_H_

#include <stddef.h>
#include <stdint.h>

#define GPU_SYM_MAX_SYMS 3
#define GPU_SYM_MAX_TUPLES 4

typedef struct gpu_sym_form {
  const char *what;
  const char *ir;
  /* per i64 input, in input order: NULL for values in [-5, 5], else the
   * symbols whose run-time values bound its values, one per component of
   * its last dim ("seq": in [-seq, seq); "batch,seq": a (batch, seq)
   * index pair, GatherND's), so every index is valid on the CPU */
  const char *ranges[4];
  /* the symbols and the tuples of values each run uses (batch and seq:
   * 1 and 1, the bounds 3 and 40, and two between) */
  const char *syms[GPU_SYM_MAX_SYMS];
  int n_tuples;
  int64_t tuples[GPU_SYM_MAX_TUPLES][GPU_SYM_MAX_SYMS];
} gpu_sym_form_t;

static const gpu_sym_form_t gpu_sym_forms[] = {
    {"attention over [batch,2,seq,seq]",
     "sym batch <= 3\n"
     "sym seq <= 40\n"
     "global @scale : f32[] = dense<[0.5]>\n"
     "func @forward(%q: f32[batch,2,seq,4], %kt: f32[batch,2,4,seq], "
     "%v: f32[batch,2,seq,4]) -> (f32[batch,2,seq,4], f32[batch,2,seq,seq]) {\n"
     "  %s = MatMul(%q, %kt) : f32[batch,2,seq,seq]\n"
     "  %m = Mul(%s, @scale) : f32[batch,2,seq,seq]\n"
     "  %a = Softmax(%m) {axis = -1} : f32[batch,2,seq,seq]\n"
     "  %o = MatMul(%a, %v) : f32[batch,2,seq,4]\n"
     "  return %o, %a\n}\n",
     {NULL},
     {"batch", "seq", NULL},
     4,
     {{1, 1}, {3, 40}, {2, 7}, {1, 33}}},
    {"padding mask over the scores (Cast, Unsqueeze, Where, IsNaN, Transpose)",
     "sym batch <= 3\n"
     "sym seq <= 40\n"
     "global @ax : i64[2] = dense<[1, 2]>\n"
     "global @neg : f32[] = dense<[-3.4028235e+38]>\n"
     "global @zero : f32[] = dense<[0.0]>\n"
     "func @forward(%s: f32[batch,2,seq,seq], %mask: i64[batch,seq]) -> "
     "(f32[batch,2,seq,seq], f32[batch,2,seq,seq]) {\n"
     "  %b = Cast(%mask) {to = 9} : bool[batch,seq]\n"
     "  %u = Unsqueeze(%b, @ax) : bool[batch,1,1,seq]\n"
     "  %w = Where(%u, %s, @neg) : f32[batch,2,seq,seq]\n"
     "  %a = Softmax(%w) {axis = -1} : f32[batch,2,seq,seq]\n"
     "  %n = IsNaN(%a) : bool[batch,2,seq,seq]\n"
     "  %z = Where(%n, @zero, %a) : f32[batch,2,seq,seq]\n"
     "  %t = Transpose(%z) {perm = [0, 1, 3, 2]} : f32[batch,2,seq,seq]\n"
     "  return %z, %t\n}\n",
     {NULL},
     {"batch", "seq", NULL},
     4,
     {{1, 1}, {3, 40}, {2, 7}, {1, 33}}},
    {"Gather along a symbolic axis, GatherND over [batch,seq]",
     "sym batch <= 3\n"
     "sym seq <= 40\n"
     "func @forward(%x: f32[batch,seq,8], %i: i64[5], %d: f32[batch,seq], "
     "%j: i64[batch,1,seq,2], %k: i64[batch,3,1]) -> "
     "(f32[batch,5,8], f32[batch,1,seq], f32[batch,3,8]) {\n"
     "  %g = Gather(%x, %i) {axis = 1} : f32[batch,5,8]\n"
     "  %h = GatherND(%d, %j) {batch_dims = 0} : f32[batch,1,seq]\n"
     "  %e = GatherND(%x, %k) {batch_dims = 1} : f32[batch,3,8]\n"
     "  return %g, %h, %e\n}\n",
     {"seq", "batch,seq", "seq"},
     {"batch", "seq", NULL},
     4,
     {{1, 1}, {3, 40}, {2, 7}, {1, 33}}},
    {"Concat, Reshape, Transpose, Slice and a broadcast square",
     "sym batch <= 3\n"
     "sym seq <= 40\n"
     "global @shp : i64[4] = dense<[0, 0, 4, 4]>\n"
     "global @st : i64[1] = dense<[1]>\n"
     "global @en : i64[1] = dense<[3]>\n"
     "global @axs : i64[1] = dense<[3]>\n"
     "func @forward(%x: f32[batch,seq,8], %y: f32[batch,seq,8], %p: f32[batch,1,seq], "
     "%r: f32[batch,seq,1]) -> (f32[batch,4,seq,2], f32[batch,seq,seq]) {\n"
     "  %c = Concat(%x, %y) {axis = 2} : f32[batch,seq,16]\n"
     "  %v = Reshape(%c, @shp) : f32[batch,seq,4,4]\n"
     "  %t = Transpose(%v) {perm = [0, 2, 1, 3]} : f32[batch,4,seq,4]\n"
     "  %s = Slice(%t, @st, @en, @axs) : f32[batch,4,seq,2]\n"
     "  %q = Add(%p, %r) : f32[batch,seq,seq]\n"
     "  %o = Tanh(%q) : f32[batch,seq,seq]\n"
     "  return %s, %o\n}\n",
     {NULL},
     {"batch", "seq", NULL},
     4,
     {{1, 1}, {3, 40}, {2, 7}, {1, 33}}},
    {"three symbols: broadcasting, ReduceSum over one, long Softmax rows",
     "sym a <= 3\nsym b <= 9\nsym c <= 300\n"
     "func @forward(%x: f32[a,b,c], %y: f32[a,1,c], %z: f32[b,c]) -> "
     "(f32[a,b,c], f32[a,c], f32[a,b,c]) {\n"
     "  %s = Add(%x, %y) : f32[a,b,c]\n"
     "  %t = Mul(%s, %z) : f32[a,b,c]\n"
     "  %r = ReduceSum(%t) {axes = [1], keepdims = 0} : f32[a,c]\n"
     "  %m = Softmax(%t) {axis = -1} : f32[a,b,c]\n"
     "  return %m, %r, %t\n}\n",
     {NULL},
     {"a", "b", "c"},
     3,
     {{1, 1, 1}, {3, 9, 300}, {2, 5, 17}}},
    {"reductions over [batch,2,seq,seq]",
     "sym batch <= 3\n"
     "sym seq <= 300\n"
     "func @forward(%s: f32[batch,2,seq,seq]) -> (f32[batch,2,seq], f32[batch,2,seq,1], "
     "i64[batch,2,seq], f32[batch,seq,seq]) {\n"
     "  %m = ReduceMean(%s) {axes = [3], keepdims = 0} : f32[batch,2,seq]\n"
     "  %x = ReduceMax(%s) {axes = [-1], keepdims = 1} : f32[batch,2,seq,1]\n"
     "  %a = ArgMax(%s) {axis = 2, keepdims = 0} : i64[batch,2,seq]\n"
     "  %h = ReduceSum(%s) {axes = [1], keepdims = 0} : f32[batch,seq,seq]\n"
     "  return %m, %x, %a, %h\n}\n",
     {NULL},
     {"batch", "seq", NULL},
     4,
     {{1, 1}, {3, 300}, {2, 7}, {1, 257}}},
    {"TopK over [batch,seq,16] and along seq",
     "sym batch <= 3\n"
     "sym seq <= 40\n"
     "global @k3 : i64[1] = dense<[3]>\n"
     "global @k1 : i64[1] = dense<[1]>\n"
     "func @forward(%x: f32[batch,seq,16], %z: f32[batch,2,seq]) -> (f32[batch,seq,3], "
     "i64[batch,seq,3], f32[batch,2,1], i64[batch,2,1]) {\n"
     "  %v, %i = TopK(%x, @k3) {axis = -1} : f32[batch,seq,3], i64[batch,seq,3]\n"
     "  %w, %j = TopK(%z, @k1) {axis = 2, largest = 0} : f32[batch,2,1], i64[batch,2,1]\n"
     "  return %v, %i, %w, %j\n}\n",
     {NULL},
     {"batch", "seq", NULL},
     4,
     {{1, 1}, {3, 40}, {2, 7}, {1, 33}}},
    {"dynamic quantization over [batch,seq,4] (DynamicQuantizeLinear, MatMulInteger "
     "and QLinearMatMul with M = seq, QuantizeLinear, DequantizeLinear)",
     "sym batch <= 3\n"
     "sym seq <= 40\n"
     "global @b : u8[4,3] = dense<[1, 2, 3, 250, 0, 7, 9, 128, 4, 5, 6, 200]>\n"
     "global @zb : u8[] = dense<[2]>\n"
     "global @as : f32[] = dense<[0.0213]>\n"
     "global @bs : f32[3] = dense<[0.517, 0.2459, 1.5173]>\n"
     "global @ys : f32[] = dense<[0.2087]>\n"
     "global @zy : u8[] = dense<[100]>\n"
     "global @s : f32[] = dense<[0.25]>\n"
     "func @forward(%x: f32[batch,seq,4]) -> (u8[batch,seq,4], i32[batch,seq,3], "
     "u8[batch,seq,3], f32[batch,seq,4]) {\n"
     "  %y, %sc, %z = DynamicQuantizeLinear(%x) : u8[batch,seq,4], f32[], u8[]\n"
     "  %m = MatMulInteger(%y, @b, %z, @zb) : i32[batch,seq,3]\n"
     "  %q = QLinearMatMul(%y, @as, %z, @b, @bs, @zb, @ys, @zy) : u8[batch,seq,3]\n"
     "  %u = QuantizeLinear(%x, @s) : u8[batch,seq,4]\n"
     "  %d = DequantizeLinear(%u, @s) : f32[batch,seq,4]\n"
     "  return %y, %m, %q, %d\n}\n",
     {NULL},
     {"batch", "seq", NULL},
     4,
     {{1, 1}, {3, 40}, {2, 7}, {1, 33}}},
    {"LayerNormalization and InstanceNormalization over symbolic dims",
     "sym batch <= 3\n"
     "sym seq <= 300\n"
     "global @g : f32[4] = dense<[1.5, -0.5, 2.0, 0.25]>\n"
     "global @h : f32[4] = dense<[0.1, 0.2, -0.3, 0.4]>\n"
     "global @g1 : f32[1] = dense<[1.25]>\n"
     "global @h1 : f32[1] = dense<[-0.5]>\n"
     "func @forward(%x: f32[batch,4,seq], %z: f32[batch,seq,4]) -> "
     "(f32[batch,4,seq], f32[batch,4,seq], f32[batch,seq,4]) {\n"
     "  %i = InstanceNormalization(%x, @g, @h) {epsilon = 1e-05} : f32[batch,4,seq]\n"
     "  %l = LayerNormalization(%x, @g1, @h1) {axis = 2, epsilon = 1e-05} : "
     "f32[batch,4,seq]\n"
     "  %m = LayerNormalization(%z, @g, @h) {axis = 1, epsilon = 1e-05} : "
     "f32[batch,seq,4]\n"
     "  return %i, %l, %m\n}\n",
     {NULL},
     {"batch", "seq", NULL},
     4,
     {{1, 1}, {3, 300}, {2, 7}, {1, 257}}},
    /* codegen/schedule_gemm_conv.c emit_matmul_batched_tiled: static M, N, K with a
     * symbolic batch (ViT's and Swin's attention) take the register-blocked
     * GEMM per product; M, N and K ragged against the 64 x 64 tile and its
     * K step of 8, and one product of 12 x 12 blocks (the 128 x 128 tile). */
    {"attention of static sequence over a symbolic batch (the batched MatMul's tiled "
     "form)",
     "sym batch <= 3\n"
     "global @scale : f32[] = dense<[0.125]>\n"
     "func @forward(%q: f32[batch,3,197,20], %kt: f32[batch,3,20,130], "
     "%v: f32[batch,3,130,33]) -> (f32[batch,3,197,33], f32[batch,3,197,130]) {\n"
     "  %s = MatMul(%q, %kt) : f32[batch,3,197,130]\n"
     "  %m = Mul(%s, @scale) : f32[batch,3,197,130]\n"
     "  %a = Softmax(%m) {axis = -1} : f32[batch,3,197,130]\n"
     "  %o = MatMul(%a, %v) : f32[batch,3,197,33]\n"
     "  return %o, %s\n}\n",
     {NULL},
     {"batch", NULL},
     3,
     {{1}, {3}, {2}}},
    {"a batched MatMul of 1450 x 1450 products over a symbolic batch (the 128 x 128 "
     "tile)",
     "sym batch <= 2\n"
     "func @forward(%a: f32[batch,1450,8], %b: f32[batch,8,1450]) -> "
     "(f32[batch,1450,1450]) {\n"
     "  %y = MatMul(%a, %b) : f32[batch,1450,1450]\n"
     "  return %y\n}\n",
     {NULL},
     {"batch", NULL},
     2,
     {{1}, {2}}},
    /* a CNN's gradients over symbolic [n, h, w]: ConvWeightGrad (stride 2
     * with begin pads only; stride 1 dilated) and ConvInputGrad (stride 2:
     * odd extents leave a last row no window reaches) */
    {"Conv gradients over [n,4,h,w] (ConvWeightGrad, ConvInputGrad)",
     "sym n <= 3\n"
     "sym h <= 20\n"
     "sym w <= 19\n"
     "func @forward(%x: f32[n,4,h,w], %k: f32[6,2,3,3]) -> "
     "(?[?], ?[?], ?[?]) {\n"
     "  %y = Conv(%x, %k) {group = 2, strides = [2, 2], pads = [1, 1, 0, 0]}\n"
     "  %dx = ConvInputGrad(%y, %k, %x) {group = 2, strides = [2, 2], pads = [1, 1, 0, "
     "0]}\n"
     "  %dw = ConvWeightGrad(%y, %x) {group = 2, kernel_shape = [3, 3], strides = [2, "
     "2], "
     "pads = [1, 1, 0, 0]}\n"
     "  %z = Conv(%x, %k) {group = 2, dilations = [1, 2], pads = [1, 2, 1, 2]}\n"
     "  %dz = ConvWeightGrad(%z, %x) {group = 2, kernel_shape = [3, 3], dilations = [1, "
     "2], pads = [1, 2, 1, 2]}\n"
     "  return %dw, %dx, %dz\n}\n",
     {NULL},
     {"n", "h", "w"},
     4,
     {{1, 3, 3}, {3, 20, 19}, {2, 7, 10}, {3, 16, 5}}},
    /* the pools' gradients over symbolic [n, h, w]: AveragePoolGrad with
     * the in-bounds divisor (begin pads only) and with count_include_pad,
     * MaxPoolGrad with pads on both sides */
    {"Pool gradients over [n,3,h,w] (AveragePoolGrad, MaxPoolGrad)",
     "sym n <= 3\n"
     "sym h <= 20\n"
     "sym w <= 19\n"
     "func @forward(%x: f32[n,3,h,w]) -> (?[?], ?[?], ?[?]) {\n"
     "  %y = AveragePool(%x) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 0, "
     "0]}\n"
     "  %dx = AveragePoolGrad(%y, %x) {kernel_shape = [3, 3], strides = [2, 2], pads = "
     "[1, 1, 0, 0]}\n"
     "  %m = MaxPool(%x) {kernel_shape = [3, 2], strides = [2, 1], pads = [1, 0, 1, 1]}\n"
     "  %dm = MaxPoolGrad(%m, %x) {kernel_shape = [3, 2], strides = [2, 1], pads = [1, "
     "0, "
     "1, 1]}\n"
     "  %q = AveragePool(%x) {kernel_shape = [2, 3], strides = [1, 2], pads = [1, 1, 1, "
     "1], count_include_pad = 1}\n"
     "  %dq = AveragePoolGrad(%q, %x) {kernel_shape = [2, 3], strides = [1, 2], pads = "
     "[1, 1, 1, 1], count_include_pad = 1}\n"
     "  return %dx, %dm, %dq\n}\n",
     {NULL},
     {"n", "h", "w"},
     4,
     {{1, 3, 3}, {3, 20, 19}, {2, 7, 10}, {3, 16, 5}}},
    /* an embedding's gradient: ScatterND (add) of [batch, seq, 6] updates
     * at [batch, seq] token ids (in [-5, 5]: negative ones counted from the
     * end) into a static [12, 6] table (duplicate ids add up in order) */
    {"ScatterND add over [batch,seq,1] ids (an embedding's gradient)",
     "sym batch <= 3\n"
     "sym seq <= 40\n"
     "func @forward(%z: f32[12,6], %u: f32[batch,seq,6], %i: i64[batch,seq,1]) -> "
     "(?[?]) {\n"
     "  %y = ScatterND(%z, %i, %u) {reduction = \"add\"}\n"
     "  return %y\n}\n",
     {NULL},
     {"batch", "seq"},
     3,
     {{1, 1}, {3, 40}, {2, 17}}},
};

#endif /* GPU_SYMDIMS_FORMS_H_ */
