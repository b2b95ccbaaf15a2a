/* test_vjp.c — every VJP rule of passes/autodiff.c against central finite
 * differences.
 *
 * For one case (an op with its attributes and input shapes) the harness
 * builds a module with two functions of the same arguments x0, x1, ...:
 *
 *   @forward(x...) -> loss          loss = ReduceSum(y * R)
 *   @grad(x...)    -> (loss, dloss/dx0, dloss/dx1, ...)
 *
 * where y is the op's result and R a fixed random tensor of y's shape (so
 * every output element contributes with its own weight). @grad gets its
 * gradients from dml_autodiff(); the module goes through the default
 * pipeline, into a package in memory and through the runtime. Each gradient
 * element is then compared with the central difference
 *   n_i = (loss(x + h e_i) - loss(x - h e_i)) / (x_i+ - x_i-)
 * where loss is @forward of the same package and x_i+/- are the perturbed
 * values as stored in the input's dtype.
 *
 * Precision and tolerances (stated once, used by every case):
 *   f64 inputs (every kernel supports f64; most cases use it): h = 1e-6,
 *   |g - n| <= 1e-7 + 1e-6 |n| (the largest error seen is ~1% of that bound;
 *   the test prints it).
 *   The truncation error of the central difference is h^2/6 |f'''| ~ 1e-13
 *   and the rounding error ~ 1e-16 |loss| / h ~ 1e-9 for these losses, so the
 *   bound has a wide margin and a wrong rule (errors of order |g|) fails.
 *   f32 inputs (Cast/CastLike from f32, and MatMul, Gemm, Conv and the pools
 *   again in f32, whose kernels take another path than in f64): h = 1e-2,
 *   |g - n| <= 1e-3 + 1e-3 |n|. These ops are linear in each single input
 *   element, so the difference has no truncation error; its f32 rounding
 *   error is ~1e-7 * sum|terms| / h ~ 1e-4.
 * Non-smooth ops are checked away from their kinks: inputs are drawn at
 * least 0.05 from each kink point of the case (0 for Relu/Abs/LeakyRelu/
 * PRelu/Sign/..., the clip bounds for Clip, the thresholds for Shrink/
 * ThresholdedRelu, integers for Floor/Ceil, half-integers for Round) and,
 * for max/min ops (MaxPool, GlobalMaxPool, ReduceMax/Min, Max/Min), are
 * distinct values on a grid at least 2/N apart so no window has a tie.
 *
 * Random ops (Dropout in training mode) are checked through @grad itself with
 * the session's random state reset to the same (seed, step) before every
 * run, so every difference sees the mask of the gradient's run; the
 * gradient is also compared with mask * scale * R exactly.
 *
 * Coverage: test_every_rule_has_a_case fails when dml_autodiff_supports()
 * says an op has a rule and no case below checks that op. Cases for ops that
 * have no rule (yet) are skipped and listed. test_exact_values checks what
 * differences cannot see: ties of ReduceMax/Min, ReduceProd at zeros.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dml_autodiff.h"
#include "dml_ir.h"
#include "dml_ir_text.h"
#include "dml_package_emit.h"
#include "dml_passes.h"
#include "dml_rt.h"
#include "dml_test.h"

#define MAX_ARGS 6
#define MAX_KINKS 6

enum {
  F_DISTINCT = 1u, /* inputs are distinct grid values (max/min ops) */
  F_RANDOM = 2u,   /* the op draws random numbers: replay the seed */
};

typedef struct vjp_case {
  const char *op;     /* the op whose rule this case checks (ops.def spelling) */
  const char *name;   /* the case's label */
  const char *consts; /* global lines (non-differentiable inputs), or NULL */
  const char *args;   /* the arguments, all differentiated: "%x0: f64[2,3], ..." */
  const char *body;   /* node lines defining %y (and anything before it) */
  double lo[MAX_ARGS], hi[MAX_ARGS]; /* input range per argument; [-1, 1] if lo == hi */
  double kinks[MAX_KINKS];           /* points the inputs stay 0.05 away from */
  int n_kinks;
  unsigned flags;
} vjp_case_t;

/* CASE(op, name, args, body, optional designated fields): .consts, .lo/.hi,
 * .kinks/.n_kinks, .flags. */
#define CASE(op_, name_, args_, body_, ...) \
  { .op = op_, .name = name_, .args = args_, .body = body_, __VA_ARGS__ }
#define KINK0 .kinks = {0.0}, .n_kinks = 1

/* ---- the cases ------------------------------------------------------------ */

static const vjp_case_t k_cases[] = {
    /* -- elementwise unary -- */
    CASE("Abs", "abs", "%x0: f64[2,3]", "%y = Abs(%x0)", KINK0),
    CASE("Neg", "neg", "%x0: f64[2,3]", "%y = Neg(%x0)"),
    CASE("Relu", "relu", "%x0: f64[2,3]", "%y = Relu(%x0)", KINK0),
    CASE("LeakyRelu", "leaky_relu", "%x0: f64[2,3]", "%y = LeakyRelu(%x0) {alpha = 0.1}",
         KINK0),
    CASE("Elu", "elu", "%x0: f64[2,3]", "%y = Elu(%x0) {alpha = 0.7}", KINK0),
    CASE("Selu", "selu", "%x0: f64[2,3]", "%y = Selu(%x0)", KINK0),
    CASE("Celu", "celu", "%x0: f64[2,3]", "%y = Celu(%x0) {alpha = 1.5}", KINK0),
    CASE("Sigmoid", "sigmoid", "%x0: f64[2,3]", "%y = Sigmoid(%x0)", .lo = {-3.0},
         .hi = {3.0}),
    CASE("HardSigmoid", "hard_sigmoid", "%x0: f64[2,3]",
         "%y = HardSigmoid(%x0) {alpha = 0.25, beta = 0.5}", .lo = {-3.0}, .hi = {3.0},
         .kinks = {-2.0, 2.0}, .n_kinks = 2),
    CASE("HardSwish", "hard_swish", "%x0: f64[2,4]", "%y = HardSwish(%x0)", .lo = {-4.0},
         .hi = {4.0}, .kinks = {-3.0, 3.0}, .n_kinks = 2),
    CASE("Softplus", "softplus", "%x0: f64[2,3]", "%y = Softplus(%x0)", .lo = {-3.0},
         .hi = {3.0}),
    CASE("Softsign", "softsign", "%x0: f64[2,3]", "%y = Softsign(%x0)", .lo = {-3.0},
         .hi = {3.0}, KINK0),
    CASE("Tanh", "tanh", "%x0: f64[2,3]", "%y = Tanh(%x0)", .lo = {-2.0}, .hi = {2.0}),
    CASE("Erf", "erf", "%x0: f64[2,3]", "%y = Erf(%x0)", .lo = {-2.0}, .hi = {2.0}),
    CASE("Sqrt", "sqrt", "%x0: f64[2,3]", "%y = Sqrt(%x0)", .lo = {0.3}, .hi = {2.0}),
    CASE("Exp", "exp", "%x0: f64[2,3]", "%y = Exp(%x0)", .lo = {-2.0}, .hi = {2.0}),
    CASE("Log", "log", "%x0: f64[2,3]", "%y = Log(%x0)", .lo = {0.3}, .hi = {3.0}),
    CASE("Reciprocal", "reciprocal", "%x0: f64[2,3]", "%y = Reciprocal(%x0)", .lo = {0.3},
         .hi = {2.0}),
    CASE("Floor", "floor", "%x0: f64[2,3]", "%y = Floor(%x0)", .lo = {-2.0}, .hi = {2.0},
         .kinks = {-2.0, -1.0, 0.0, 1.0, 2.0}, .n_kinks = 5),
    CASE("Ceil", "ceil", "%x0: f64[2,3]", "%y = Ceil(%x0)", .lo = {-2.0}, .hi = {2.0},
         .kinks = {-2.0, -1.0, 0.0, 1.0, 2.0}, .n_kinks = 5),
    CASE("Round", "round", "%x0: f64[2,3]", "%y = Round(%x0)", .lo = {-2.0}, .hi = {2.0},
         .kinks = {-1.5, -0.5, 0.5, 1.5}, .n_kinks = 4),
    CASE("Sign", "sign", "%x0: f64[2,3]", "%y = Sign(%x0)", KINK0),
    CASE("Sin", "sin", "%x0: f64[2,3]", "%y = Sin(%x0)", .lo = {-3.0}, .hi = {3.0}),
    CASE("Cos", "cos", "%x0: f64[2,3]", "%y = Cos(%x0)", .lo = {-3.0}, .hi = {3.0}),
    CASE("Tan", "tan", "%x0: f64[2,3]", "%y = Tan(%x0)", .lo = {-1.2}, .hi = {1.2}),
    CASE("Asin", "asin", "%x0: f64[2,3]", "%y = Asin(%x0)", .lo = {-0.9}, .hi = {0.9}),
    CASE("Acos", "acos", "%x0: f64[2,3]", "%y = Acos(%x0)", .lo = {-0.9}, .hi = {0.9}),
    CASE("Atan", "atan", "%x0: f64[2,3]", "%y = Atan(%x0)", .lo = {-3.0}, .hi = {3.0}),
    CASE("Sinh", "sinh", "%x0: f64[2,3]", "%y = Sinh(%x0)", .lo = {-2.0}, .hi = {2.0}),
    CASE("Cosh", "cosh", "%x0: f64[2,3]", "%y = Cosh(%x0)", .lo = {-2.0}, .hi = {2.0}),
    CASE("Asinh", "asinh", "%x0: f64[2,3]", "%y = Asinh(%x0)", .lo = {-3.0}, .hi = {3.0}),
    CASE("Acosh", "acosh", "%x0: f64[2,3]", "%y = Acosh(%x0)", .lo = {1.2}, .hi = {3.0}),
    CASE("Atanh", "atanh", "%x0: f64[2,3]", "%y = Atanh(%x0)", .lo = {-0.9}, .hi = {0.9}),
    CASE("ThresholdedRelu", "thresholded_relu", "%x0: f64[2,4]",
         "%y = ThresholdedRelu(%x0) {alpha = 0.5}", .kinks = {0.5}, .n_kinks = 1),
    CASE("Shrink", "shrink", "%x0: f64[2,4]",
         "%y = Shrink(%x0) {lambd = 0.5, bias = 0.2}", .kinks = {-0.5, 0.5},
         .n_kinks = 2),
    CASE("Identity", "identity", "%x0: f64[2,3]", "%y = Identity(%x0)"),
    CASE("Clip", "clip_min_max", "%x0: f64[3,4]", "%y = Clip(%x0, @lo, @hi)",
         .consts = "global @lo : f64[] = dense<[-0.5]>\n"
                   "global @hi : f64[] = dense<[0.5]>\n",
         .kinks = {-0.5, 0.5}, .n_kinks = 2),
    CASE("Clip", "clip_min_only", "%x0: f64[3,4]", "%y = Clip(%x0, @lo, _)",
         .consts = "global @lo : f64[] = dense<[-0.25]>\n", .kinks = {-0.25},
         .n_kinks = 1),
    CASE("Clip", "clip_none", "%x0: f64[2,3]", "%y = Clip(%x0)"),
    CASE("Cast", "cast_f32_to_f64", "%x0: f32[2,3]", "%y = Cast(%x0) {to = 11}"),
    CASE("Cast", "cast_f64_to_f64", "%x0: f64[2,3]", "%y = Cast(%x0) {to = 11}"),
    /* -- elementwise binary / variadic, with broadcasting -- */
    CASE("Add", "add_same", "%x0: f64[2,3], %x1: f64[2,3]", "%y = Add(%x0, %x1)"),
    CASE("Add", "add_bcast_2x3_3", "%x0: f64[2,3], %x1: f64[3]", "%y = Add(%x0, %x1)"),
    CASE("Add", "add_bcast_2x1_1x3", "%x0: f64[2,1], %x1: f64[1,3]",
         "%y = Add(%x0, %x1)"),
    CASE("Add", "add_bcast_scalar", "%x0: f64[], %x1: f64[2,2,3]", "%y = Add(%x0, %x1)"),
    CASE("Add", "add_same_input", "%x0: f64[2,3]", "%y = Add(%x0, %x0)"),
    CASE("Sub", "sub_bcast_2x3_3", "%x0: f64[2,3], %x1: f64[3]", "%y = Sub(%x0, %x1)"),
    CASE("Sub", "sub_bcast_3_2x3", "%x0: f64[3], %x1: f64[2,3]", "%y = Sub(%x0, %x1)"),
    CASE("Sub", "sub_bcast_2x1x3_4x1", "%x0: f64[2,1,3], %x1: f64[4,1]",
         "%y = Sub(%x0, %x1)"),
    CASE("Mul", "mul_bcast_2x3_3", "%x0: f64[2,3], %x1: f64[3]", "%y = Mul(%x0, %x1)"),
    CASE("Mul", "mul_bcast_2x1_1x3", "%x0: f64[2,1], %x1: f64[1,3]",
         "%y = Mul(%x0, %x1)"),
    CASE("Mul", "mul_square", "%x0: f64[2,3]", "%y = Mul(%x0, %x0)"),
    CASE("Div", "div_bcast_2x3_3", "%x0: f64[2,3], %x1: f64[3]", "%y = Div(%x0, %x1)",
         .lo = {-1.0, 0.5}, .hi = {1.0, 2.0}),
    CASE("Div", "div_bcast_2x1_1x3", "%x0: f64[2,1], %x1: f64[1,3]", "%y = Div(%x0, %x1)",
         .lo = {-1.0, 0.5}, .hi = {1.0, 2.0}),
    CASE("Pow", "pow_same", "%x0: f64[2,3], %x1: f64[2,3]", "%y = Pow(%x0, %x1)",
         .lo = {0.5, -2.0}, .hi = {2.0, 2.0}),
    CASE("Pow", "pow_bcast_exp", "%x0: f64[2,3], %x1: f64[3]", "%y = Pow(%x0, %x1)",
         .lo = {0.5, -2.0}, .hi = {2.0, 2.0}),
    CASE("Pow", "pow_bcast_base", "%x0: f64[1,3], %x1: f64[2,1]", "%y = Pow(%x0, %x1)",
         .lo = {0.5, -2.0}, .hi = {2.0, 2.0}),
    CASE("PRelu", "prelu_slope_per_channel", "%x0: f64[2,3,2], %x1: f64[3,1]",
         "%y = PRelu(%x0, %x1)", KINK0),
    CASE("Max", "max_two_bcast", "%x0: f64[2,3], %x1: f64[3]", "%y = Max(%x0, %x1)",
         .flags = F_DISTINCT),
    CASE("Max", "max_three", "%x0: f64[2,3], %x1: f64[2,3], %x2: f64[2,1]",
         "%y = Max(%x0, %x1, %x2)", .flags = F_DISTINCT),
    CASE("Min", "min_two_bcast", "%x0: f64[2,3], %x1: f64[3]", "%y = Min(%x0, %x1)",
         .flags = F_DISTINCT),
    CASE("Sum", "sum_three_bcast", "%x0: f64[2,3], %x1: f64[3], %x2: f64[2,1]",
         "%y = Sum(%x0, %x1, %x2)"),
    CASE("Sum", "sum_one", "%x0: f64[2,3]", "%y = Sum(%x0)"),
    CASE("Mean", "mean_three_bcast", "%x0: f64[2,3], %x1: f64[3], %x2: f64[2,1]",
         "%y = Mean(%x0, %x1, %x2)"),
    CASE("Where", "where_bcast", "%x0: f64[2,3], %x1: f64[3]",
         "%y = Where(@cond, %x0, %x1)",
         .consts = "global @cond : bool[2,3] = dense<[true, false, true, false, false, "
                   "true]>\n"),
    CASE("Where", "where_scalar_branch", "%x0: f64[], %x1: f64[1,3]",
         "%y = Where(@cond, %x0, %x1)",
         .consts = "global @cond : bool[2,1] = dense<[true, false]>\n"),
    CASE("CastLike", "cast_like", "%x0: f32[2,3]", "%y = CastLike(%x0, @like)",
         .consts = "global @like : f64[1] = dense<[0.0]>\n"),
    /* -- linear algebra -- */
    CASE("MatMul", "matmul_2d", "%x0: f64[3,4], %x1: f64[4,2]", "%y = MatMul(%x0, %x1)"),
    CASE("MatMul", "matmul_batched", "%x0: f64[2,3,4], %x1: f64[2,4,2]",
         "%y = MatMul(%x0, %x1)"),
    CASE("MatMul", "matmul_bcast_batch", "%x0: f64[2,1,3,4], %x1: f64[3,4,2]",
         "%y = MatMul(%x0, %x1)"),
    CASE("MatMul", "matmul_batched_2d_rhs", "%x0: f64[2,3,4], %x1: f64[4,2]",
         "%y = MatMul(%x0, %x1)"),
    CASE("MatMul", "matmul_vec_mat", "%x0: f64[4], %x1: f64[2,4,3]",
         "%y = MatMul(%x0, %x1)"),
    CASE("MatMul", "matmul_mat_vec", "%x0: f64[3,4], %x1: f64[4]",
         "%y = MatMul(%x0, %x1)"),
    CASE("Gemm", "gemm_nn_bias_vec", "%x0: f64[3,4], %x1: f64[4,2], %x2: f64[2]",
         "%y = Gemm(%x0, %x1, %x2) {alpha = 0.7, beta = 1.3}"),
    CASE("Gemm", "gemm_tn_bias_col", "%x0: f64[4,3], %x1: f64[4,2], %x2: f64[3,1]",
         "%y = Gemm(%x0, %x1, %x2) {transA = 1, alpha = 1.5}"),
    CASE("Gemm", "gemm_nt_bias_full", "%x0: f64[3,4], %x1: f64[2,4], %x2: f64[3,2]",
         "%y = Gemm(%x0, %x1, %x2) {transB = 1, beta = 0.5}"),
    CASE("Gemm", "gemm_tt_bias_scalar", "%x0: f64[4,3], %x1: f64[2,4], %x2: f64[]",
         "%y = Gemm(%x0, %x1, %x2) {transA = 1, transB = 1, alpha = -0.5, beta = 2.0}"),
    CASE("Gemm", "gemm_no_c", "%x0: f64[3,4], %x1: f64[2,4]",
         "%y = Gemm(%x0, %x1, _) {transB = 1}"),
    CASE("Gemm", "gemm_bias_row", "%x0: f64[3,4], %x1: f64[4,2], %x2: f64[1,2]",
         "%y = Gemm(%x0, %x1, %x2)"),
    /* -- convolution -- */
    CASE("Conv", "conv2d_bias", "%x0: f64[2,2,5,5], %x1: f64[3,2,3,3], %x2: f64[3]",
         "%y = Conv(%x0, %x1, %x2)"),
    CASE("Conv", "conv2d_strides_asym_pads", "%x0: f64[1,2,6,5], %x1: f64[2,2,3,2]",
         "%y = Conv(%x0, %x1) {strides = [2, 2], pads = [1, 0, 0, 1]}"),
    CASE("Conv", "conv2d_dilations", "%x0: f64[1,1,6,6], %x1: f64[2,1,2,2], %x2: f64[2]",
         "%y = Conv(%x0, %x1, %x2) {dilations = [2, 2], pads = [1, 1, 1, 1]}"),
    CASE("Conv", "conv2d_group2", "%x0: f64[1,4,4,4], %x1: f64[4,2,3,3], %x2: f64[4]",
         "%y = Conv(%x0, %x1, %x2) {group = 2, pads = [1, 1, 1, 1], strides = [1, 2]}"),
    CASE("Conv", "conv2d_depthwise", "%x0: f64[1,3,4,4], %x1: f64[3,1,2,2]",
         "%y = Conv(%x0, %x1) {group = 3}"),
    CASE("Conv", "conv1d", "%x0: f64[2,2,7], %x1: f64[3,2,3], %x2: f64[3]",
         "%y = Conv(%x0, %x1, %x2) {strides = [2], pads = [1, 2]}"),
    CASE("Conv", "conv2d_auto_pad_same", "%x0: f64[1,2,5,5], %x1: f64[2,2,3,3]",
         "%y = Conv(%x0, %x1) {auto_pad = \"SAME_UPPER\", strides = [2, 2]}"),
    CASE("ConvTranspose", "conv_transpose2d",
         "%x0: f64[1,2,3,3], %x1: f64[2,3,3,3], %x2: f64[3]",
         "%y = ConvTranspose(%x0, %x1, %x2) {strides = [2, 2], pads = [1, 0, 1, 1]}"),
    CASE("ConvTranspose", "conv_transpose2d_group_outpad",
         "%x0: f64[1,4,3,3], %x1: f64[4,1,2,2]",
         "%y = ConvTranspose(%x0, %x1) {group = 2, strides = [2, 2], output_padding = "
         "[1, 0]}"),
    CASE("ConvTranspose", "conv_transpose1d", "%x0: f64[2,2,4], %x1: f64[2,2,3]",
         "%y = ConvTranspose(%x0, %x1) {strides = [2], dilations = [2]}"),
    /* -- pooling (F_DISTINCT: no ties in a max window) -- */
    CASE("MaxPool", "maxpool2d", "%x0: f64[1,2,4,4]",
         "%y = MaxPool(%x0) {kernel_shape = [2, 2], strides = [2, 2]}",
         .flags = F_DISTINCT),
    CASE("MaxPool", "maxpool2d_overlap_pads", "%x0: f64[1,2,5,5]",
         "%y = MaxPool(%x0) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 0, 1, "
         "1]}",
         .flags = F_DISTINCT),
    CASE("MaxPool", "maxpool2d_ceil_dilated", "%x0: f64[1,1,6,6]",
         "%y = MaxPool(%x0) {kernel_shape = [2, 2], strides = [2, 2], dilations = [2, "
         "1], ceil_mode = 1}",
         .flags = F_DISTINCT),
    CASE("MaxPool", "maxpool1d_with_indices", "%x0: f64[2,2,7]",
         "%y, %idx = MaxPool(%x0) {kernel_shape = [3], strides = [2], pads = [1, 1]}",
         .flags = F_DISTINCT),
    CASE("AveragePool", "avgpool2d", "%x0: f64[1,2,4,4]",
         "%y = AveragePool(%x0) {kernel_shape = [2, 2], strides = [2, 2]}"),
    CASE("AveragePool", "avgpool2d_pads_exclude", "%x0: f64[1,2,5,5]",
         "%y = AveragePool(%x0) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, "
         "0, 1]}"),
    CASE("AveragePool", "avgpool2d_pads_include", "%x0: f64[1,2,5,5]",
         "%y = AveragePool(%x0) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, "
         "0, 1], count_include_pad = 1}"),
    CASE(
        "AveragePool", "avgpool2d_ceil", "%x0: f64[1,1,5,5]",
        "%y = AveragePool(%x0) {kernel_shape = [2, 2], strides = [2, 2], ceil_mode = 1}"),
    CASE("AveragePool", "avgpool1d", "%x0: f64[2,2,7]",
         "%y = AveragePool(%x0) {kernel_shape = [3], strides = [2], pads = [1, 1], "
         "count_include_pad = 1}"),
    CASE("GlobalAveragePool", "global_avgpool", "%x0: f64[2,3,3,2]",
         "%y = GlobalAveragePool(%x0)"),
    CASE("GlobalMaxPool", "global_maxpool", "%x0: f64[2,3,3,2]",
         "%y = GlobalMaxPool(%x0)", .flags = F_DISTINCT),
    /* -- normalization, softmax -- */
    CASE("BatchNormalization", "batchnorm_train",
         "%x0: f64[2,3,2,2], %x1: f64[3], %x2: f64[3]",
         "%y, %rm, %rv = BatchNormalization(%x0, %x1, %x2, @mean, @var) {epsilon = "
         "1e-05, momentum = 0.9, training_mode = 1}",
         .consts = "global @mean : f64[3] state = dense<[0.1, -0.2, 0.3]>\n"
                   "global @var : f64[3] state = dense<[1.0, 0.5, 2.0]>\n"),
    CASE("BatchNormalization", "batchnorm_train_2d",
         "%x0: f64[4,3], %x1: f64[3], %x2: f64[3]",
         "%y, %rm, %rv = BatchNormalization(%x0, %x1, %x2, @mean, @var) {epsilon = 0.01, "
         "training_mode = 1}",
         .consts = "global @mean : f64[3] state = dense<[0.0, 0.0, 0.0]>\n"
                   "global @var : f64[3] state = dense<[1.0, 1.0, 1.0]>\n"),
    CASE("BatchNormalization", "batchnorm_inference",
         "%x0: f64[2,3,2], %x1: f64[3], %x2: f64[3]",
         "%y = BatchNormalization(%x0, %x1, %x2, @mean, @var) {epsilon = 1e-05}",
         .consts = "global @mean : f64[3] = dense<[0.1, -0.2, 0.3]>\n"
                   "global @var : f64[3] = dense<[1.0, 0.5, 2.0]>\n"),
    CASE("LayerNormalization", "layernorm_last_axis",
         "%x0: f64[2,3,4], %x1: f64[4], %x2: f64[4]",
         "%y = LayerNormalization(%x0, %x1, %x2) {axis = -1, epsilon = 1e-05}"),
    CASE("LayerNormalization", "layernorm_axis1_no_bias",
         "%x0: f64[2,3,2], %x1: f64[3,2]",
         "%y = LayerNormalization(%x0, %x1) {axis = 1, epsilon = 0.001}"),
    CASE("LayerNormalization", "layernorm_with_stats",
         "%x0: f64[3,5], %x1: f64[5], %x2: f64[5]",
         "%y, %mu, %rstd = LayerNormalization(%x0, %x1, %x2) {epsilon = 1e-05}"),
    CASE("InstanceNormalization", "instancenorm",
         "%x0: f64[2,2,3,2], %x1: f64[2], %x2: f64[2]",
         "%y = InstanceNormalization(%x0, %x1, %x2) {epsilon = 1e-05}"),
    CASE("Softmax", "softmax_last", "%x0: f64[2,3,4]", "%y = Softmax(%x0)", .lo = {-2.0},
         .hi = {2.0}),
    CASE("Softmax", "softmax_axis1", "%x0: f64[2,3,4]", "%y = Softmax(%x0) {axis = 1}",
         .lo = {-2.0}, .hi = {2.0}),
    CASE("LogSoftmax", "log_softmax_last", "%x0: f64[2,3,4]", "%y = LogSoftmax(%x0)",
         .lo = {-2.0}, .hi = {2.0}),
    CASE("LogSoftmax", "log_softmax_axis0", "%x0: f64[3,4]",
         "%y = LogSoftmax(%x0) {axis = 0}", .lo = {-2.0}, .hi = {2.0}),
    /* -- reductions (axes as the second input) -- */
    CASE("ReduceSum", "reduce_sum_axis1_keep", "%x0: f64[2,3,4]",
         "%y = ReduceSum(%x0, @ax) {keepdims = 1}",
         .consts = "global @ax : i64[1] = dense<[1]>\n"),
    CASE("ReduceSum", "reduce_sum_axes_drop", "%x0: f64[2,3,4]",
         "%y = ReduceSum(%x0, @ax) {keepdims = 0}",
         .consts = "global @ax : i64[2] = dense<[0, -1]>\n"),
    CASE("ReduceSum", "reduce_sum_all", "%x0: f64[2,3]",
         "%y = ReduceSum(%x0) {keepdims = 0}"),
    CASE("ReduceMean", "reduce_mean_axis2_drop", "%x0: f64[2,3,4]",
         "%y = ReduceMean(%x0, @ax) {keepdims = 0}",
         .consts = "global @ax : i64[1] = dense<[2]>\n"),
    CASE("ReduceMean", "reduce_mean_axes_keep", "%x0: f64[2,3,4]",
         "%y = ReduceMean(%x0, @ax)", .consts = "global @ax : i64[2] = dense<[0, 2]>\n"),
    CASE("ReduceMean", "reduce_mean_all", "%x0: f64[3,2]", "%y = ReduceMean(%x0)"),
    CASE("ReduceMax", "reduce_max_axis1", "%x0: f64[2,3,4]",
         "%y = ReduceMax(%x0, @ax) {keepdims = 0}",
         .consts = "global @ax : i64[1] = dense<[1]>\n", .flags = F_DISTINCT),
    CASE("ReduceMin", "reduce_min_all", "%x0: f64[2,3]", "%y = ReduceMin(%x0)",
         .flags = F_DISTINCT),
    CASE("ReduceProd", "reduce_prod_axis0", "%x0: f64[3,4]", "%y = ReduceProd(%x0, @ax)",
         .consts = "global @ax : i64[1] = dense<[0]>\n", .lo = {0.5}, .hi = {1.5}),
    CASE("ReduceL1", "reduce_l1", "%x0: f64[2,3]",
         "%y = ReduceL1(%x0, @ax) {keepdims = 0}",
         .consts = "global @ax : i64[1] = dense<[1]>\n", KINK0),
    CASE("ReduceL2", "reduce_l2", "%x0: f64[2,3]", "%y = ReduceL2(%x0, @ax)",
         .consts = "global @ax : i64[1] = dense<[-1]>\n", KINK0),
    CASE("ReduceLogSum", "reduce_log_sum", "%x0: f64[2,3]", "%y = ReduceLogSum(%x0, @ax)",
         .consts = "global @ax : i64[1] = dense<[1]>\n", .lo = {0.2}, .hi = {2.0}),
    CASE("ReduceLogSumExp", "reduce_log_sum_exp", "%x0: f64[3,4]",
         "%y = ReduceLogSumExp(%x0, @ax) {keepdims = 0}",
         .consts = "global @ax : i64[1] = dense<[0]>\n", .lo = {-2.0}, .hi = {2.0}),
    CASE("ReduceSumSquare", "reduce_sum_square", "%x0: f64[2,3]",
         "%y = ReduceSumSquare(%x0, @ax)",
         .consts = "global @ax : i64[1] = dense<[1]>\n"),
    /* -- shape and data movement -- */
    CASE("Reshape", "reshape", "%x0: f64[2,3,2]", "%y = Reshape(%x0, @shape)",
         .consts = "global @shape : i64[2] = dense<[-1, 6]>\n"),
    CASE("Flatten", "flatten_axis2", "%x0: f64[2,3,2,2]", "%y = Flatten(%x0) {axis = 2}"),
    CASE("Transpose", "transpose_perm", "%x0: f64[2,3,4]",
         "%y = Transpose(%x0) {perm = [1, 2, 0]}"),
    CASE("Transpose", "transpose_default", "%x0: f64[2,3]", "%y = Transpose(%x0)"),
    CASE("Squeeze", "squeeze_axes", "%x0: f64[1,3,1,2]", "%y = Squeeze(%x0, @ax)",
         .consts = "global @ax : i64[2] = dense<[0, 2]>\n"),
    CASE("Squeeze", "squeeze_all", "%x0: f64[1,3,1]", "%y = Squeeze(%x0)"),
    CASE("Unsqueeze", "unsqueeze", "%x0: f64[3,2]", "%y = Unsqueeze(%x0, @ax)",
         .consts = "global @ax : i64[2] = dense<[0, -1]>\n"),
    CASE("Slice", "slice_axes_steps", "%x0: f64[4,2,5]",
         "%y = Slice(%x0, @st, @en, @ax, @sp)",
         .consts = "global @st : i64[2] = dense<[1, 0]>\n"
                   "global @en : i64[2] = dense<[3, 5]>\n"
                   "global @ax : i64[2] = dense<[0, 2]>\n"
                   "global @sp : i64[2] = dense<[1, 2]>\n"),
    CASE("Slice", "slice_negative_step", "%x0: f64[2,5]",
         "%y = Slice(%x0, @st, @en, @ax, @sp)",
         .consts = "global @st : i64[1] = dense<[-1]>\n"
                   "global @en : i64[1] = dense<[-100]>\n"
                   "global @ax : i64[1] = dense<[1]>\n"
                   "global @sp : i64[1] = dense<[-2]>\n"),
    CASE("Slice", "slice_default_axes", "%x0: f64[3,4]", "%y = Slice(%x0, @st, @en)",
         .consts = "global @st : i64[2] = dense<[0, 1]>\n"
                   "global @en : i64[2] = dense<[2, 3]>\n"),
    CASE("Concat", "concat_axis1", "%x0: f64[2,1,3], %x1: f64[2,2,3], %x2: f64[2,1,3]",
         "%y = Concat(%x0, %x1, %x2) {axis = 1}"),
    CASE("Concat", "concat_axis_neg_repeat", "%x0: f64[2,2], %x1: f64[2,3]",
         "%y = Concat(%x0, %x1, %x0) {axis = -1}"),
    CASE("Split", "split_sizes", "%x0: f64[2,4]",
         "%a, %b = Split(%x0, @sz) {axis = 1}\n"
         "%y = Concat(%b, %a) {axis = 1}",
         .consts = "global @sz : i64[2] = dense<[1, 3]>\n"),
    CASE("Gather", "gather_axis0_repeat", "%x0: f64[4,3]", "%y = Gather(%x0, @ix)",
         .consts = "global @ix : i64[4] = dense<[2, 0, 2, -1]>\n"),
    CASE("Gather", "gather_axis1_2d_idx", "%x0: f64[2,3,2]",
         "%y = Gather(%x0, @ix) {axis = 1}",
         .consts = "global @ix : i64[2,2] = dense<[1, 1, 0, 2]>\n"),
    CASE("Gather", "gather_scalar_idx", "%x0: f64[3,4]",
         "%y = Gather(%x0, @ix) {axis = 1}",
         .consts = "global @ix : i64[] = dense<[1]>\n"),
    CASE("GatherElements", "gather_elements", "%x0: f64[2,3]",
         "%y = GatherElements(%x0, @ix) {axis = 0}",
         .consts = "global @ix : i64[2,3] = dense<[0, 1, 1, 1, 0, 0]>\n"),
    CASE("Expand", "expand", "%x0: f64[3,1]", "%y = Expand(%x0, @shape)",
         .consts = "global @shape : i64[3] = dense<[2, 3, 4]>\n"),
    CASE("Expand", "expand_rank_up_ones", "%x0: f64[3]", "%y = Expand(%x0, @shape)",
         .consts = "global @shape : i64[2] = dense<[2, 1]>\n"),
    CASE("Tile", "tile", "%x0: f64[2,2]", "%y = Tile(%x0, @rep)",
         .consts = "global @rep : i64[2] = dense<[2, 3]>\n"),
    CASE("Pad", "pad_constant", "%x0: f64[2,3]", "%y = Pad(%x0, @pads)",
         .consts = "global @pads : i64[4] = dense<[1, 0, 0, 2]>\n"),
    CASE("CumSum", "cumsum", "%x0: f64[2,4]", "%y = CumSum(%x0, @ax)",
         .consts = "global @ax : i64[] = dense<[1]>\n"),
    CASE("CumSum", "cumsum_exclusive_reverse", "%x0: f64[3,2]",
         "%y = CumSum(%x0, @ax) {exclusive = 1, reverse = 1}",
         .consts = "global @ax : i64[] = dense<[0]>\n"),
    CASE("Einsum", "einsum_bmm", "%x0: f64[2,3,4], %x1: f64[2,4,2]",
         "%y = Einsum(%x0, %x1) {equation = \"bij,bjk->bik\"}"),
    CASE("DepthToSpace", "depth_to_space", "%x0: f64[1,4,2,3]",
         "%y = DepthToSpace(%x0) {blocksize = 2}"),
    CASE("SpaceToDepth", "space_to_depth", "%x0: f64[1,2,4,2]",
         "%y = SpaceToDepth(%x0) {blocksize = 2}"),
    /* -- forms added with their rules -- */
    CASE("Max", "max_one", "%x0: f64[2,3]", "%y = Max(%x0)"),
    CASE("Min", "min_three_bcast", "%x0: f64[2,1], %x1: f64[3], %x2: f64[2,3]",
         "%y = Min(%x0, %x1, %x2)", .flags = F_DISTINCT),
    CASE("MatMul", "matmul_vec_vec", "%x0: f64[4], %x1: f64[4]", "%y = MatMul(%x0, %x1)"),
    CASE("ConvTranspose", "conv_transpose2d_pads_outpad_bias",
         "%x0: f64[1,2,3,2], %x1: f64[2,2,2,3], %x2: f64[2]",
         "%y = ConvTranspose(%x0, %x1, %x2) {strides = [3, 2], pads = [1, 1, 2, 0], "
         "output_padding = [2, 1]}"),
    CASE("BatchNormalization", "batchnorm_inference_stats_args",
         "%x0: f64[2,3,2], %x1: f64[3], %x2: f64[3], %x3: f64[3], %x4: f64[3]",
         "%y = BatchNormalization(%x0, %x1, %x2, %x3, %x4) {epsilon = 0.01}",
         .lo = {-1.0, -1.0, -1.0, -1.0, 0.5}, .hi = {1.0, 1.0, 1.0, 1.0, 2.0}),
    CASE("BatchNormalization", "batchnorm_train_running_outputs_used",
         "%x0: f64[4,3], %x1: f64[3], %x2: f64[3], %x3: f64[3], %x4: f64[3]",
         "%yy, %rm, %rv = BatchNormalization(%x0, %x1, %x2, %x3, %x4) {epsilon = 0.01, "
         "momentum = 0.8, training_mode = 1}\n"
         "%t = Add(%yy, %rm)\n%y = Mul(%t, %rv)",
         .lo = {-1.0, -1.0, -1.0, -1.0, 0.5}, .hi = {1.0, 1.0, 1.0, 1.0, 2.0}),
    CASE("LayerNormalization", "layernorm_stats_used",
         "%x0: f64[3,5], %x1: f64[5], %x2: f64[5]",
         "%yy, %mu, %rs = LayerNormalization(%x0, %x1, %x2) {axis = 1, epsilon = 0.01, "
         "stash_type = 11}\n"
         "%ms = Mul(%mu, %rs)\n%y = Add(%yy, %ms)"),
    CASE("LayerNormalization", "layernorm_scale_bcast", "%x0: f64[2,3,4], %x1: f64[1,4]",
         "%y = LayerNormalization(%x0, %x1) {axis = 1}"),
    CASE("Split", "split_equal_one_unused", "%x0: f64[3,2]",
         "%a, %b, %c = Split(%x0) {axis = 0, num_outputs = 3}\n%y = Mul(%a, %c)"),
    CASE("Pad", "pad_crop_and_value", "%x0: f64[3,4], %x1: f64[]",
         "%y = Pad(%x0, @pads, %x1)",
         .consts = "global @pads : i64[4] = dense<[1, -1, 0, 2]>\n"),
    CASE("Pad", "pad_reflect", "%x0: f64[3,4]",
         "%y = Pad(%x0, @pads) {mode = \"reflect\"}",
         .consts = "global @pads : i64[4] = dense<[2, 1, 1, 3]>\n"),
    CASE("Pad", "pad_edge", "%x0: f64[3,4]", "%y = Pad(%x0, @pads) {mode = \"edge\"}",
         .consts = "global @pads : i64[4] = dense<[1, 2, 2, 0]>\n"),
    CASE("Pad", "pad_wrap", "%x0: f64[3,4]", "%y = Pad(%x0, @pads) {mode = \"wrap\"}",
         .consts = "global @pads : i64[4] = dense<[1, 3, 2, 1]>\n"),
    CASE("CumSum", "cumsum_reverse", "%x0: f64[2,5]",
         "%y = CumSum(%x0, @ax) {reverse = 1}",
         .consts = "global @ax : i64[] = dense<[-1]>\n"),
    CASE("CumSum", "cumsum_exclusive", "%x0: f64[5]",
         "%y = CumSum(%x0, @ax) {exclusive = 1}",
         .consts = "global @ax : i64[] = dense<[0]>\n"),
    CASE("Slice", "slice_two_axes_mixed_steps", "%x0: f64[5,7]",
         "%y = Slice(%x0, @st, @en, @ax, @sp)",
         .consts = "global @st : i64[2] = dense<[4, 1]>\n"
                   "global @en : i64[2] = dense<[-10, 7]>\n"
                   "global @ax : i64[2] = dense<[0, 1]>\n"
                   "global @sp : i64[2] = dense<[-2, 3]>\n"),
    CASE("Gather", "gather_neg_axis_repeat", "%x0: f64[2,3,4]",
         "%y = Gather(%x0, @ix) {axis = -1}",
         .consts = "global @ix : i64[3] = dense<[3, 0, 3]>\n"),
    CASE("GatherElements", "gather_elements_axis1", "%x0: f64[2,3]",
         "%y = GatherElements(%x0, @ix) {axis = 1}",
         .consts = "global @ix : i64[2,2] = dense<[2, 2, 0, 1]>\n"),
    CASE("DepthToSpace", "depth_to_space_crd", "%x0: f64[1,8,2,1]",
         "%y = DepthToSpace(%x0) {blocksize = 2, mode = \"CRD\"}"),
    CASE("ReduceMax", "reduce_max_keep_two_axes", "%x0: f64[2,3,2]",
         "%y = ReduceMax(%x0, @ax)", .consts = "global @ax : i64[2] = dense<[0, 2]>\n",
         .flags = F_DISTINCT),
    CASE("ReduceLogSum", "reduce_log_sum_all", "%x0: f64[2,3]",
         "%y = ReduceLogSum(%x0) {keepdims = 0}", .lo = {0.2}, .hi = {2.0}),
    CASE("Tile", "tile_3d", "%x0: f64[2,1,3]", "%y = Tile(%x0, @rep)",
         .consts = "global @rep : i64[3] = dense<[1, 3, 2]>\n"),
    CASE("Einsum", "einsum_implicit", "%x0: f64[2,3], %x1: f64[3,4]",
         "%y = Einsum(%x0, %x1) {equation = \"ij,jk\"}"),
    CASE("Einsum", "einsum_label_of_one_operand", "%x0: f64[2,3], %x1: f64[3,4]",
         "%y = Einsum(%x0, %x1) {equation = \"ij, jk -> i\"}"),
    CASE("Einsum", "einsum_three_to_scalar", "%x0: f64[3], %x1: f64[3,4], %x2: f64[4]",
         "%y = Einsum(%x0, %x1, %x2) {equation = \"i,ij,j->\"}"),
    CASE("Einsum", "einsum_transpose_one", "%x0: f64[2,3,4]",
         "%y = Einsum(%x0) {equation = \"abc->cb\"}"),
    CASE("TopK", "topk_axis1", "%x0: f64[2,5]", "%y, %ix = TopK(%x0, @k) {axis = 1}",
         .consts = "global @k : i64[1] = dense<[3]>\n", .flags = F_DISTINCT),
    CASE("TopK", "topk_smallest_axis0", "%x0: f64[4,3]",
         "%y, %ix = TopK(%x0, @k) {axis = 0, largest = 0}",
         .consts = "global @k : i64[1] = dense<[2]>\n", .flags = F_DISTINCT),
    CASE("GatherND", "gather_nd_repeat", "%x0: f64[3,2,2]", "%y = GatherND(%x0, @ix)",
         .consts = "global @ix : i64[3,2] = dense<[1, 0, 2, 1, 1, 0]>\n"),
    CASE("ScatterND", "scatter_nd", "%x0: f64[4,3], %x1: f64[2,3]",
         "%y = ScatterND(%x0, @ix, %x1)",
         .consts = "global @ix : i64[2,1] = dense<[2, 0]>\n"),
    CASE("ScatterND", "scatter_nd_add_repeat", "%x0: f64[4,3], %x1: f64[3,3]",
         "%y = ScatterND(%x0, @ix, %x1) {reduction = \"add\"}",
         .consts = "global @ix : i64[3,1] = dense<[1, 3, 1]>\n"),
    CASE("ScatterElements", "scatter_elements_axis1", "%x0: f64[2,4], %x1: f64[2,2]",
         "%y = ScatterElements(%x0, @ix, %x1) {axis = 1}",
         .consts = "global @ix : i64[2,2] = dense<[3, 0, 1, 2]>\n"),
    CASE("ScatterElements", "scatter_elements_add", "%x0: f64[3,2], %x1: f64[2,2]",
         "%y = ScatterElements(%x0, @ix, %x1) {axis = 0, reduction = \"add\"}",
         .consts = "global @ix : i64[2,2] = dense<[2, 2, 2, 0]>\n"),
    CASE("Trilu", "trilu_lower_k", "%x0: f64[2,3,4]", "%y = Trilu(%x0, @k) {upper = 0}",
         .consts = "global @k : i64[] = dense<[1]>\n"),
    CASE("Trilu", "trilu_upper", "%x0: f64[4,3]", "%y = Trilu(%x0)"),
    CASE("ReverseSequence", "reverse_sequence", "%x0: f64[4,3,2]",
         "%y = ReverseSequence(%x0, @len) {batch_axis = 1, time_axis = 0}",
         .consts = "global @len : i64[3] = dense<[4, 1, 3]>\n"),
    CASE("Hardmax", "hardmax", "%x0: f64[2,4]", "%y = Hardmax(%x0)", .flags = F_DISTINCT),
    CASE("MeanVarianceNormalization", "mvn_default_axes", "%x0: f64[2,3,2,2]",
         "%y = MeanVarianceNormalization(%x0)"),
    CASE("MeanVarianceNormalization", "mvn_last_axis", "%x0: f64[3,4]",
         "%y = MeanVarianceNormalization(%x0) {axes = [-1]}"),
    CASE("Mod", "mod_fmod", "%x0: f64[2,3], %x1: f64[3]", "%y = Mod(%x0, %x1) {fmod = 1}",
         .lo = {2.1, 1.5}, .hi = {2.9, 2.0}),
    CASE("Mod", "mod_fmod_negative", "%x0: f64[2,3], %x1: f64[]",
         "%y = Mod(%x0, %x1) {fmod = 1}", .lo = {-2.9, 1.5}, .hi = {-2.1, 2.0}),
    CASE("EyeLike", "eye_like", "%x0: f64[3,4]", "%y = EyeLike(%x0) {k = 1}"),
    CASE("RandomUniformLike", "random_uniform_like", "%x0: f64[2,3]",
         "%y = RandomUniformLike(%x0) {seed = 3.0}", .flags = F_RANDOM),
    CASE("RandomNormalLike", "random_normal_like", "%x0: f64[2,3]",
         "%y = RandomNormalLike(%x0)", .flags = F_RANDOM),
    CASE("LRN", "lrn_size3", "%x0: f64[2,5,2]",
         "%y = LRN(%x0) {size = 3, alpha = 0.9, beta = 0.75, bias = 1.5}"),
    CASE("LRN", "lrn_size4_4d", "%x0: f64[1,6,2,2]",
         "%y = LRN(%x0) {size = 4, alpha = 0.6, beta = 0.6}"),
    CASE("NegativeLogLikelihoodLoss", "nll_mean_weight", "%x0: f64[3,4]",
         "%y = NegativeLogLikelihoodLoss(%x0, @t, @w)",
         .consts = "global @t : i64[3] = dense<[1, 0, 3]>\n"
                   "global @w : f64[4] = dense<[0.5, 2.0, 1.0, 1.5]>\n"),
    CASE("NegativeLogLikelihoodLoss", "nll_sum_ignore_spatial", "%x0: f64[2,3,2]",
         "%y = NegativeLogLikelihoodLoss(%x0, @t) {reduction = \"sum\", ignore_index = "
         "-1}",
         .consts = "global @t : i32[2,2] = dense<[2, -1, 0, 2]>\n"),
    CASE("NegativeLogLikelihoodLoss", "nll_none_ignore_weight", "%x0: f64[3,3]",
         "%y = NegativeLogLikelihoodLoss(%x0, @t, @w) {reduction = \"none\", "
         "ignore_index = 1}",
         .consts = "global @t : i64[3] = dense<[1, 2, 0]>\n"
                   "global @w : f64[3] = dense<[0.5, 2.0, 1.5]>\n"),
    CASE("NegativeLogLikelihoodLoss", "nll_mean_ignore", "%x0: f64[4,3]",
         "%y = NegativeLogLikelihoodLoss(%x0, @t) {ignore_index = 2}",
         .consts = "global @t : i64[4] = dense<[2, 0, 1, 0]>\n"),
    CASE("SoftmaxCrossEntropyLoss", "sce_mean", "%x0: f64[3,4]",
         "%y = SoftmaxCrossEntropyLoss(%x0, @t)",
         .consts = "global @t : i64[3] = dense<[3, 0, 1]>\n", .lo = {-2.0}, .hi = {2.0}),
    CASE("SoftmaxCrossEntropyLoss", "sce_none_log_prob_used", "%x0: f64[3,4]",
         "%l, %lp = SoftmaxCrossEntropyLoss(%x0, @t, @w) {reduction = \"none\"}\n"
         "%l2 = Unsqueeze(%l, @ax)\n%y = Mul(%lp, %l2)",
         .consts = "global @t : i64[3] = dense<[3, 0, 1]>\n"
                   "global @w : f64[4] = dense<[0.5, 2.0, 1.0, 1.5]>\n"
                   "global @ax : i64[1] = dense<[1]>\n",
         .lo = {-2.0}, .hi = {2.0}),
    CASE("DFT", "dft_complex", "%x0: f64[2,5,2]", "%y = DFT(%x0) {axis = 1}"),
    CASE("DFT", "dft_inverse_complex_axis2", "%x0: f64[2,3,4,2]",
         "%y = DFT(%x0) {axis = 2, inverse = 1}"),
    CASE("DFT", "dft_real_onesided", "%x0: f64[2,6,1]",
         "%y = DFT(%x0, @len) {axis = 1, onesided = 1}",
         .consts = "global @len : i64[] = dense<[6]>\n"),
    CASE("DFT", "dft_real_odd", "%x0: f64[5,1]", "%y = DFT(%x0) {axis = 0}"),
    CASE("DFT", "dft_real_onesided_odd", "%x0: f64[5,1]",
         "%y = DFT(%x0) {axis = 0, onesided = 1}"),
    /* -- f32: the kernels whose f32 path differs from the f64 one (GEMM
     * micro-kernels, Conv and ConvWeightGrad by im2col + GEMM) -- */
    CASE("MatMul", "matmul_bcast_batch_f32", "%x0: f32[2,1,3,4], %x1: f32[3,4,2]",
         "%y = MatMul(%x0, %x1)"),
    CASE("Gemm", "gemm_tt_bias_col_f32", "%x0: f32[4,3], %x1: f32[2,4], %x2: f32[3,1]",
         "%y = Gemm(%x0, %x1, %x2) {transA = 1, transB = 1, alpha = 0.5, beta = 1.5}"),
    CASE("Gemm", "gemm_nn_f32", "%x0: f32[5,4], %x1: f32[4,6], %x2: f32[6]",
         "%y = Gemm(%x0, %x1, %x2)"),
    CASE("Conv", "conv2d_strides_pads_f32",
         "%x0: f32[2,2,6,5], %x1: f32[3,2,3,2], %x2: f32[3]",
         "%y = Conv(%x0, %x1, %x2) {strides = [2, 1], pads = [1, 0, 0, 1]}"),
    CASE("Conv", "conv2d_group2_dilated_f32", "%x0: f32[1,4,6,6], %x1: f32[4,2,2,2]",
         "%y = Conv(%x0, %x1) {group = 2, dilations = [2, 1], pads = [1, 1, 0, 0]}"),
    CASE("Conv", "conv1d_f32", "%x0: f32[2,2,7], %x1: f32[3,2,3], %x2: f32[3]",
         "%y = Conv(%x0, %x1, %x2) {strides = [2], pads = [1, 2]}"),
    CASE("MaxPool", "maxpool2d_pads_f32", "%x0: f32[1,2,5,5]",
         "%y = MaxPool(%x0) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 0, 1, "
         "1]}",
         .flags = F_DISTINCT),
    CASE("AveragePool", "avgpool2d_pads_f32", "%x0: f32[1,2,5,5]",
         "%y = AveragePool(%x0) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, "
         "0, 1]}"),
    /* -- random: Dropout in training mode (mask from the run's Philox stream) -- */
    CASE("Dropout", "dropout_train_mask", "%x0: f64[4,5]",
         "%y, %mask = Dropout(%x0, @ratio, @train) {seed = 7}",
         .consts = "global @ratio : f64[] = dense<[0.4]>\n"
                   "global @train : bool[] = dense<[true]>\n",
         .flags = F_RANDOM),
    CASE("Dropout", "dropout_train_no_mask", "%x0: f64[3,4]",
         "%y = Dropout(%x0, @ratio, @train)",
         .consts = "global @ratio : f64[] = dense<[0.25]>\n"
                   "global @train : bool[] = dense<[true]>\n",
         .flags = F_RANDOM),
    CASE("Dropout", "dropout_inference", "%x0: f64[2,3]", "%y = Dropout(%x0)"),
};

#define N_CASES (sizeof k_cases / sizeof k_cases[0])

/* ---- small helpers ---------------------------------------------------------- */

typedef struct sbuf {
  char *p;
  size_t n, cap;
} sbuf_t;

static void sb_printf(sbuf_t *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  va_list ap2;
  va_copy(ap2, ap);
  int k = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (k < 0) {
    va_end(ap2);
    return;
  }
  if (b->n + (size_t)k + 1 > b->cap) {
    size_t cap = (b->cap ? b->cap * 2 : 1024) + (size_t)k;
    char *p = realloc(b->p, cap);
    if (!p) {
      va_end(ap2);
      abort();
    }
    b->p = p;
    b->cap = cap;
  }
  vsnprintf(b->p + b->n, (size_t)k + 1, fmt, ap2);
  va_end(ap2);
  b->n += (size_t)k;
}

/* splitmix64: the inputs and R are a fixed function of the case's name. */
static uint64_t rng_next(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static double rng_uniform(uint64_t *s) {
  return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}
static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ull;
  return h;
}

static int64_t type_numel(const dml_type_t *t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->rank; d++) n *= t->dims[d].value;
  return n;
}

static double load(dml_dtype_t dt, const void *p, int64_t i) {
  return dt == DML_DTYPE_F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}
static void store(dml_dtype_t dt, void *p, int64_t i, double v) {
  if (dt == DML_DTYPE_F32)
    ((float *)p)[i] = (float)v;
  else
    ((double *)p)[i] = v;
}

static dml_tensor_t tensor_of(const dml_type_t *t, void *data) {
  dml_tensor_t x;
  memset(&x, 0, sizeof x);
  x.dtype = t->dtype;
  x.rank = t->rank;
  for (int32_t d = 0; d < t->rank; d++) x.dims[d] = t->dims[d].value;
  x.data = data;
  return x;
}

static void print_status(const char *what, const char *name, dml_status_t st) {
  char *msg = dml_status_format(st);
  fprintf(stderr, "case %s: %s failed:\n%s\n", name, what, msg ? msg : "?");
  free(msg);
  dml_status_free(st);
}

/* Largest |g - n| / (atol + rtol |n|) seen, for f64 [0] and f32 [1] inputs
 * (printed: how much of the tolerance the rules use). */
static double g_worst[2];

/* ---- one case ---------------------------------------------------------------- */

typedef struct args_info {
  uint32_t n;
  dml_type_t type[MAX_ARGS];
  dml_type_t y_type;
} args_info_t;

/* Parses the case with `return %y` to learn the argument types and y's type
 * (after shape inference). */
static int probe(const vjp_case_t *c, args_info_t *ai) {
  sbuf_t b = {0};
  sb_printf(&b, "%sfunc @probe(%s) -> (?[?]) {\n%s\n  return %%y\n}\n",
            c->consts ? c->consts : "", c->args, c->body);
  dml_ir_module_t *m = NULL;
  dml_status_t st = dml_ir_parse(b.p, b.n, c->name, &m);
  free(b.p);
  if (st) {
    print_status("parse", c->name, st);
    return 0;
  }
  dml_pass_options_t o;
  memset(&o, 0, sizeof o);
  st = dml_pass_run_pipeline(m, "shape-infer", &o);
  if (st) {
    print_status("shape-infer", c->name, st);
    dml_ir_module_release(m);
    return 0;
  }
  dml_ir_function_t *f = dml_ir_module_find_function(m, "probe");
  ai->n = f->n_args;
  for (uint32_t i = 0; i < f->n_args && i < MAX_ARGS; i++) ai->type[i] = f->args[i]->type;
  ai->y_type = f->results[0]->type;
  dml_ir_module_release(m);
  int ok = ai->n <= MAX_ARGS && dml_type_is_static(&ai->y_type);
  for (uint32_t i = 0; i < ai->n && ok; i++) ok = dml_type_is_static(&ai->type[i]);
  if (!ok) fprintf(stderr, "case %s: arguments and y must have static shapes\n", c->name);
  return ok;
}

static int near_kink(const vjp_case_t *c, double v) {
  for (int k = 0; k < c->n_kinks; k++)
    if (fabs(v - c->kinks[k]) < 0.05) return 1;
  return 0;
}

/* Fills the inputs: uniform in each argument's range away from the kinks,
 * or (F_DISTINCT) a shuffled grid over all arguments' elements. */
static void make_inputs(const vjp_case_t *c, const args_info_t *ai, uint64_t *rng,
                        void **x) {
  int64_t total = 0;
  for (uint32_t a = 0; a < ai->n; a++) total += type_numel(&ai->type[a]);
  int64_t *perm = NULL;
  if (c->flags & F_DISTINCT) {
    perm = malloc(sizeof(int64_t) * (size_t)total);
    for (int64_t i = 0; i < total; i++) perm[i] = i;
    for (int64_t i = total - 1; i > 0; i--) {
      int64_t j = (int64_t)(rng_next(rng) % (uint64_t)(i + 1)), t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
  }
  int64_t k = 0;
  for (uint32_t a = 0; a < ai->n; a++) {
    double lo = c->lo[a], hi = c->hi[a];
    if (lo == hi) lo = -1.0, hi = 1.0;
    int64_t n = type_numel(&ai->type[a]);
    for (int64_t i = 0; i < n; i++, k++) {
      double v;
      if (perm) {
        v = -1.0 + 2.0 * ((double)perm[k] + 0.5) / (double)total;
      } else {
        do v = lo + (hi - lo) * rng_uniform(rng);
        while (near_kink(c, v));
      }
      store(ai->type[a].dtype, x[a], i, v);
    }
  }
  free(perm);
}

/* Runs `s` on inputs x and returns output 0 (the loss) as a double. */
static int run_loss(dml_rt_session_t *s, const args_info_t *ai, void **x, int replay,
                    double *out) {
  for (uint32_t a = 0; a < ai->n; a++) {
    dml_tensor_t t = tensor_of(&ai->type[a], x[a]);
    dml_status_t st = dml_rt_session_set_input(s, a, &t);
    if (st) {
      print_status("set_input", "?", st);
      return 0;
    }
  }
  if (replay) dml_rt_session_set_seed(s, 11, 3);
  dml_status_t st = dml_rt_session_run(s);
  if (st) {
    print_status("run", "?", st);
    return 0;
  }
  dml_tensor_t l;
  st = dml_rt_session_get_output(s, 0, &l);
  if (st) {
    print_status("get_output", "?", st);
    return 0;
  }
  *out = load(l.dtype, l.data, 0);
  return 1;
}

/* Checks one case. Returns 1 when checked, 0 when skipped (no rule: then
 * only the forward function is built and run, which keeps the case's text,
 * shapes and the kernels' f64 support checked until a rule comes). */
static int check_case_(const vjp_case_t *c) {
  dml_op_t op = dml_op_from_name(c->op, strlen(c->op));
  CHECK(op != DML_OP_INVALID);
  if (op == DML_OP_INVALID) return 0;
  int has_rule = dml_autodiff_supports(op);
  args_info_t ai;
  memset(&ai, 0, sizeof ai);
  if (!probe(c, &ai)) {
    CHECK(!"probe");
    return 1;
  }
  uint64_t rng = hash_str(c->name);
  int64_t ny = type_numel(&ai.y_type);
  size_t esz = ai.y_type.dtype == DML_DTYPE_F32 ? 4 : 8;
  CHECK(ai.y_type.dtype == DML_DTYPE_F32 || ai.y_type.dtype == DML_DTYPE_F64);
  unsigned char *r = malloc((size_t)ny * esz);
  for (int64_t i = 0; i < ny; i++)
    store(ai.y_type.dtype, r, i, 2.0 * rng_uniform(&rng) - 1.0);

  /* The module: R as a hex constant, @forward and @grad with the same body. */
  char tbuf[128];
  sbuf_t b = {0};
  sb_printf(&b, "%sglobal @R : %s = dense<0x", c->consts ? c->consts : "",
            dml_ir_type_str(NULL, &ai.y_type, tbuf, sizeof tbuf));
  for (size_t i = 0; i < (size_t)ny * esz; i++) sb_printf(&b, "%02x", r[i]);
  sb_printf(&b, ">\n");
  const char *fn[2] = {"forward", "grad"};
  for (int k = 0; k < 2; k++)
    sb_printf(&b,
              "func @%s(%s) -> (?[?]) {\n%s\n  %%ry = Mul(%%y, @R)\n"
              "  %%loss = ReduceSum(%%ry) {keepdims = 0}\n  return %%loss\n}\n",
              fn[k], c->args, c->body);
  dml_ir_module_t *m = NULL;
  dml_status_t st = dml_ir_parse(b.p, b.n, c->name, &m);
  free(b.p);
  if (st) {
    print_status("parse", c->name, st);
    CHECK(!"parse");
    free(r);
    return 1;
  }
  dml_pass_options_t o;
  memset(&o, 0, sizeof o);
  o.verify_each = 1;
  CHECK_OK(dml_pass_run_pipeline(m, "shape-infer", &o));
  dml_ir_function_t *g = dml_ir_module_find_function(m, "grad");
  dml_ir_value_t *grads[MAX_ARGS] = {0}, *res[MAX_ARGS + 2];
  st =
      has_rule ? dml_autodiff(g, g->results[0], NULL, g->n_args, g->args, grads) : DML_OK;
  if (st && dml_status_code(st) == DML_STATUS_UNIMPLEMENTED) {
    /* The op has a rule, but not for this attribute or input form: listed,
     * not failed (the error itself is the rule's documented answer). */
    char *msg = dml_status_format(st);
    printf("skipped (form without a VJP rule): %s: %s\n", c->name, msg ? msg : "?");
    free(msg);
    dml_status_free(st);
    dml_ir_module_release(m);
    free(r);
    return 0;
  }
  if (st) {
    print_status("dml_autodiff", c->name, st);
    CHECK(!"dml_autodiff");
    dml_ir_module_release(m);
    free(r);
    return 1;
  }
  uint32_t nres = 0;
  res[nres++] = g->results[0];
  for (uint32_t a = 0; a < ai.n && has_rule; a++) {
    if (!grads[a]) {
      fprintf(stderr, "case %s: no gradient for x%u\n", c->name, a);
      CHECK(grads[a] != NULL);
      dml_ir_module_release(m);
      free(r);
      return 1;
    }
    CHECK(dml_type_equal(&grads[a]->type, &g->args[a]->type));
    /* A gradient may be the same value as an earlier result (Add's two
     * operands share one): the emitter returns a copy of it. */
    res[nres++] = grads[a];
  }
  /* Dropout with a mask output: return it to compare with the gradient. */
  dml_ir_value_t *mask = NULL;
  for (dml_ir_node_t *n = g->first; n; n = n->next)
    if (n->op == DML_OP_DROPOUT && n->n_outputs > 1) mask = n->outputs[1];
  if (mask && has_rule) res[nres++] = mask;
  CHECK_OK(dml_ir_function_set_results(g, nres, res));
  CHECK_OK(dml_pass_run_pipeline(m, dml_pass_default_pipeline(), &o));
  void *bytes = NULL;
  size_t size = 0;
  dml_rt_model_t *model = NULL;
  CHECK_OK(dml_package_emit_memory(m, NULL, &bytes, &size));
  dml_ir_module_release(m);
  if (bytes) CHECK_OK(dml_rt_model_load_memory(bytes, size, &model));
  free(bytes);
  dml_rt_session_t *sf = NULL, *sg = NULL;
  if (model) {
    CHECK_OK(dml_rt_session_create_function(model, "cpu", "forward", NULL, &sf));
    CHECK_OK(dml_rt_session_create_function(model, "cpu", "grad", NULL, &sg));
  }
  if (!sf || !sg) {
    dml_rt_session_release(sf);
    dml_rt_session_release(sg);
    dml_rt_model_release(model);
    free(r);
    return 1;
  }

  void *x[MAX_ARGS] = {0}, *gv[MAX_ARGS] = {0};
  for (uint32_t a = 0; a < ai.n; a++) {
    size_t bytes_a = (size_t)type_numel(&ai.type[a]) * 8;
    x[a] = malloc(bytes_a ? bytes_a : 8);
    gv[a] = malloc(bytes_a ? bytes_a : 8);
  }
  make_inputs(c, &ai, &rng, x);
  int replay = (c->flags & F_RANDOM) != 0;
  double loss_g = 0.0, loss_f = 0.0;
  int ok = run_loss(sg, &ai, x, replay, &loss_g);
  CHECK(ok);
  if (!has_rule) ok = 0; /* forward only */
  for (uint32_t a = 0; a < ai.n && ok; a++) {
    dml_tensor_t t;
    CHECK_OK(dml_rt_session_get_output(sg, 1 + a, &t));
    CHECK(t.dtype == ai.type[a].dtype &&
          type_numel(&ai.type[a]) == dml_dims_numel(t.dims, t.rank));
    memcpy(gv[a], t.data,
           (size_t)type_numel(&ai.type[a]) * (t.dtype == DML_DTYPE_F32 ? 4 : 8));
  }
  if (ok && mask) {
    /* dloss/dx = mask * R / (1 - ratio), exactly the rule's form. */
    dml_tensor_t mt;
    CHECK_OK(dml_rt_session_get_output(sg, 1 + ai.n, &mt));
    const uint8_t *mk = mt.data;
    int64_t kept = 0;
    double ratio = 0.4, scale = 1.0 / (1.0 - ratio);
    for (int64_t i = 0; i < ny; i++) {
      kept += mk[i] != 0;
      double want = mk[i] ? load(ai.y_type.dtype, r, i) * scale : 0.0;
      CHECK_NEAR(load(ai.type[0].dtype, gv[0], i), want, 1e-12);
    }
    CHECK(kept > 0 && kept < ny); /* the mask is not trivial */
  }
  if (ok && has_rule && !replay) {
    /* @forward computes the same loss as @grad's first result. */
    CHECK(run_loss(sf, &ai, x, 0, &loss_f));
    CHECK_NEAR(loss_f, loss_g, 1e-12 * (1.0 + fabs(loss_g)));
  }
  /* Central differences. */
  dml_rt_session_t *sfd = replay ? sg : sf;
  int64_t bad = 0;
  for (uint32_t a = 0; a < ai.n && ok; a++) {
    dml_dtype_t dt = ai.type[a].dtype;
    double h = dt == DML_DTYPE_F32 ? 1e-2 : 1e-6;
    double atol = dt == DML_DTYPE_F32 ? 1e-3 : 1e-7,
           rtol = dt == DML_DTYPE_F32 ? 1e-3 : 1e-6;
    int64_t n = type_numel(&ai.type[a]);
    for (int64_t i = 0; i < n && ok; i++) {
      double x0 = load(dt, x[a], i), lp = 0, lm = 0;
      store(dt, x[a], i, x0 + h);
      double xp = load(dt, x[a], i);
      ok = run_loss(sfd, &ai, x, replay, &lp);
      store(dt, x[a], i, x0 - h);
      double xm = load(dt, x[a], i);
      ok = ok && run_loss(sfd, &ai, x, replay, &lm);
      store(dt, x[a], i, x0);
      double num = (lp - lm) / (xp - xm), an = load(dt, gv[a], i);
      double use = fabs(an - num) / (atol + rtol * fabs(num));
      double *worst = &g_worst[dt == DML_DTYPE_F32];
      if (use > *worst) *worst = use;
      if (!(fabs(an - num) <= atol + rtol * fabs(num))) {
        if (bad++ < 8)
          fprintf(stderr,
                  "case %s (%s): d loss / d x%u[%lld] = %.12g, central difference %.12g "
                  "(x = %.6g)\n",
                  c->name, c->op, a, (long long)i, an, num, x0);
      }
    }
  }
  CHECK(ok || !has_rule);
  CHECK(bad == 0);
  for (uint32_t a = 0; a < ai.n; a++) {
    free(x[a]);
    free(gv[a]);
  }
  dml_rt_session_release(sf);
  dml_rt_session_release(sg);
  dml_rt_model_release(model);
  free(r);
  if (!has_rule) printf("skipped (no VJP rule for %s): %s\n", c->op, c->name);
  return has_rule;
}

static int check_case(const vjp_case_t *c) {
  int failed_before = dml_test_checks_failed_;
  int checked = check_case_(c);
  if (dml_test_checks_failed_ != failed_before)
    fprintf(stderr, "FAILED case: %s\n", c->name);
  return checked;
}

/* ---- tests ------------------------------------------------------------------- */

static int k_checked[N_CASES]; /* 1: the case's gradient was compared */
static const char *k_only;     /* $DMLC_VJP_CASE: run one case when debugging */

static void test_rules_against_central_differences(void) {
  int checked = 0, skipped = 0;
  for (size_t i = 0; i < N_CASES; i++) {
    if (k_only && strcmp(k_only, k_cases[i].name) != 0) continue;
    k_checked[i] = check_case(&k_cases[i]);
    checked += k_checked[i];
    skipped += !k_checked[i];
  }
  printf("%d cases checked, %d skipped; largest error / tolerance: f64 %.3g, f32 %.3g\n",
         checked, skipped, g_worst[0], g_worst[1]);
  CHECK(k_only || checked > 0);
}

/* Every op with a rule has at least one case whose gradient was compared
 * (run after the cases). */
static void test_every_rule_has_a_case(void) {
  if (k_only) return;
  int missing = 0;
  for (int op = 1; op < DML_OP_COUNT_; op++) {
    if (!dml_autodiff_supports((dml_op_t)op)) continue;
    int found = 0;
    for (size_t i = 0; i < N_CASES && !found; i++)
      found = k_checked[i] && strcmp(k_cases[i].op, dml_op_name((dml_op_t)op)) == 0;
    if (!found) {
      fprintf(
          stderr,
          "op %s has a VJP rule but no finite-difference case of test_vjp.c checks it\n",
          dml_op_name((dml_op_t)op));
      missing++;
    }
  }
  CHECK(missing == 0);
}

/* The seed scales the gradient; a wrt value the loss does not read gets NULL. */
static void test_seed_and_unused_wrt(void) {
  static const char *text =
      "func @f(%x: f64[3], %z: f64[3], %s: f64[]) -> (?[?]) {\n"
      "  %y = Mul(%x, %x)\n  %l = ReduceSum(%y) {keepdims = 0}\n  return %l\n}\n";
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_ir_parse(text, strlen(text), "seed", &m));
  if (!m) return;
  dml_pass_options_t o;
  memset(&o, 0, sizeof o);
  CHECK_OK(dml_pass_run_pipeline(m, "shape-infer", &o));
  dml_ir_function_t *f = dml_ir_module_find_function(m, "f");
  dml_ir_value_t *wrt[2] = {f->args[0], f->args[1]}, *g[2] = {NULL, NULL};
  CHECK_OK(dml_autodiff(f, f->results[0], f->args[2], 2, wrt, g));
  CHECK(g[0] != NULL && g[1] == NULL);
  if (!g[0]) {
    dml_ir_module_release(m);
    return;
  }
  dml_ir_value_t *res[2] = {f->results[0], g[0]};
  CHECK_OK(dml_ir_function_set_results(f, 2, res));
  CHECK_OK(dml_pass_run_pipeline(m, dml_pass_default_pipeline(), &o));
  void *bytes = NULL;
  size_t size = 0;
  dml_rt_model_t *model = NULL;
  dml_rt_session_t *s = NULL;
  CHECK_OK(dml_package_emit_memory(m, NULL, &bytes, &size));
  dml_ir_module_release(m);
  CHECK_OK(dml_rt_model_load_memory(bytes, size, &model));
  free(bytes);
  CHECK_OK(dml_rt_session_create(model, "cpu", &s));
  double x[3] = {1.0, -2.0, 0.5}, z[3] = {0, 0, 0}, seed = -3.0;
  int64_t d3 = 3;
  dml_tensor_t t;
  memset(&t, 0, sizeof t);
  t.dtype = DML_DTYPE_F64;
  t.rank = 1;
  t.dims[0] = d3;
  t.data = x;
  CHECK_OK(dml_rt_session_set_input(s, 0, &t));
  t.data = z;
  CHECK_OK(dml_rt_session_set_input(s, 1, &t));
  t.rank = 0;
  t.data = &seed;
  CHECK_OK(dml_rt_session_set_input(s, 2, &t));
  CHECK_OK(dml_rt_session_run(s));
  dml_tensor_t gx;
  CHECK_OK(dml_rt_session_get_output(s, 1, &gx));
  for (int i = 0; i < 3; i++)
    CHECK_NEAR(((const double *)gx.data)[i], seed * 2.0 * x[i], 1e-15);
  dml_rt_session_release(s);
  dml_rt_model_release(model);
}

/* Where the finite differences cannot look: ReduceMax/ReduceMin split the
 * gradient evenly between tied extremes (PyTorch's amax/amin; the check
 * cases use distinct values), ReduceProd is exact at zeros (the product of
 * the other elements at a single zero, 0 with two), ReduceL2 of zeros gives
 * 0 (PyTorch's norm). Each @f_k(x: f64[4]) reduces all of x to the loss;
 * its gradient must equal the stated values to 1e-15. */
static void test_exact_values(void) {
  static const struct {
    const char *op;
    double x[4], want[4];
  } k[] = {
      {"ReduceMax", {1.0, 3.0, 3.0, 2.0}, {0.0, 0.5, 0.5, 0.0}},
      {"ReduceMax", {3.0, 3.0, 3.0, -1.0}, {1.0 / 3, 1.0 / 3, 1.0 / 3, 0.0}},
      {"ReduceMin", {-2.0, 5.0, -2.0, -2.0}, {1.0 / 3, 0.0, 1.0 / 3, 1.0 / 3}},
      {"ReduceProd", {0.0, 2.0, 3.0, -1.0}, {-6.0, 0.0, 0.0, 0.0}},
      {"ReduceProd", {0.0, 2.0, 0.0, -1.0}, {0.0, 0.0, 0.0, 0.0}},
      {"ReduceProd", {1.5, 2.0, 4.0, -1.0}, {-8.0, -6.0, -3.0, 12.0}},
      {"ReduceL2", {0.0, 0.0, 0.0, 0.0}, {0.0, 0.0, 0.0, 0.0}},
  };
  for (size_t c = 0; c < sizeof k / sizeof k[0]; c++) {
    char text[256];
    snprintf(text, sizeof text,
             "func @f(%%x: f64[4]) -> (?[?]) {\n  %%l = %s(%%x) {keepdims = 0}\n"
             "  return %%l\n}\n",
             k[c].op);
    dml_ir_module_t *m = NULL;
    CHECK_OK(dml_ir_parse(text, strlen(text), "exact", &m));
    if (!m) return;
    dml_pass_options_t o;
    memset(&o, 0, sizeof o);
    CHECK_OK(dml_pass_run_pipeline(m, "shape-infer", &o));
    dml_ir_function_t *f = dml_ir_module_find_function(m, "f");
    dml_ir_value_t *g = NULL;
    CHECK_OK(dml_autodiff(f, f->results[0], NULL, 1, &f->args[0], &g));
    if (!g) {
      dml_ir_module_release(m);
      return;
    }
    dml_ir_value_t *res[2] = {f->results[0], g};
    CHECK_OK(dml_ir_function_set_results(f, 2, res));
    CHECK_OK(dml_pass_run_pipeline(m, dml_pass_default_pipeline(), &o));
    void *bytes = NULL;
    size_t size = 0;
    dml_rt_model_t *model = NULL;
    dml_rt_session_t *s = NULL;
    CHECK_OK(dml_package_emit_memory(m, NULL, &bytes, &size));
    dml_ir_module_release(m);
    CHECK_OK(dml_rt_model_load_memory(bytes, size, &model));
    free(bytes);
    CHECK_OK(dml_rt_session_create(model, "cpu", &s));
    if (!s) {
      dml_rt_model_release(model);
      return;
    }
    dml_tensor_t t;
    memset(&t, 0, sizeof t);
    t.dtype = DML_DTYPE_F64;
    t.rank = 1;
    t.dims[0] = 4;
    t.data = (void *)k[c].x;
    CHECK_OK(dml_rt_session_set_input(s, 0, &t));
    CHECK_OK(dml_rt_session_run(s));
    dml_tensor_t gx;
    CHECK_OK(dml_rt_session_get_output(s, 1, &gx));
    for (int i = 0; i < 4; i++) {
      double got = ((const double *)gx.data)[i];
      if (!(fabs(got - k[c].want[i]) <= 1e-15))
        fprintf(stderr, "%s case %zu: d/dx[%d] = %.17g, want %.17g\n", k[c].op, c, i, got,
                k[c].want[i]);
      CHECK_NEAR(got, k[c].want[i], 1e-15);
    }
    dml_rt_session_release(s);
    dml_rt_model_release(model);
  }
}

/* Forms of ops with a rule that the rule does not handle: UNIMPLEMENTED
 * naming the node, its op and the reason. */
static void test_unimplemented_forms(void) {
  static const struct {
    const char *args, *body, *want;
  } k[] = {
      {"%x: f64[2,2,3], %w: f64[2,3,4]",
       "%y = Einsum(%x, %w) {equation = \"...ij,...jk->...ik\"}",
       "node 'n' (Einsum): ellipsis"},
      {"%x: f64[3,3], %w: f64[3,3]", "%y = Einsum(%x, %w) {equation = \"ii,ij->j\"}",
       "node 'n' (Einsum): a repeated subscript"},
      {"%x: f64[1,2,3,3], %w: f64[2,2,2,2]",
       "%y = ConvTranspose(%x, %w) {strides = [2, 2], output_shape = [7, 7]}",
       "node 'n' (ConvTranspose): output_shape"},
      {"%x: f64[2,3]", "%y = Pad(%x, @p) {mode = \"reflect\"}",
       "node 'n' (Pad): negative pads, or reflect/wrap pads longer than the dim"},
  };
  for (size_t c = 0; c < sizeof k / sizeof k[0]; c++) {
    char text[512];
    snprintf(text, sizeof text,
             "global @p : i64[4] = dense<[2, 0, 0, 0]>\n"
             "func @f(%s) -> (?[?]) {\n  %s\n  %%l = ReduceSum(%%y) {keepdims = 0}\n"
             "  return %%l\n}\n",
             k[c].args, k[c].body);
    dml_ir_module_t *m = NULL;
    CHECK_OK(dml_ir_parse(text, strlen(text), "forms", &m));
    if (!m) continue;
    dml_pass_options_t o;
    memset(&o, 0, sizeof o);
    CHECK_OK(dml_pass_run_pipeline(m, "shape-infer", &o));
    dml_ir_function_t *f = dml_ir_module_find_function(m, "f");
    f->first->name = dml_ir_strdup(m, "n"); /* the op under test */
    dml_ir_value_t *g = NULL;
    CHECK_ERROR(dml_autodiff(f, f->results[0], NULL, 1, &f->args[0], &g),
                DML_STATUS_UNIMPLEMENTED, k[c].want);
    dml_ir_module_release(m);
  }
}

/* Errors: a loss that is not a scalar, a wrt value that is not a float. */
static void test_errors(void) {
  static const char *text =
      "func @f(%x: f64[3], %i: i64[3]) -> (?[?]) {\n"
      "  %y = Mul(%x, %x)\n  %l = ReduceSum(%y) {keepdims = 0}\n  return %l\n}\n";
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_ir_parse(text, strlen(text), "errors", &m));
  if (!m) return;
  dml_pass_options_t o;
  memset(&o, 0, sizeof o);
  CHECK_OK(dml_pass_run_pipeline(m, "shape-infer", &o));
  dml_ir_function_t *f = dml_ir_module_find_function(m, "f");
  dml_ir_value_t *g = NULL, *y = f->first->outputs[0];
  CHECK_ERROR(dml_autodiff(f, y, NULL, 1, &f->args[0], &g), DML_STATUS_INVALID_ARGUMENT,
              "");
  CHECK_ERROR(dml_autodiff(f, f->results[0], NULL, 1, &f->args[1], &g),
              DML_STATUS_INVALID_ARGUMENT, "");
  dml_ir_module_release(m);
}

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0); /* keep stdout and stderr in order */
  k_only = getenv("DMLC_VJP_CASE");
  RUN(test_rules_against_central_differences);
  RUN(test_every_rule_has_a_case);
  RUN(test_seed_and_unused_wrt);
  RUN(test_exact_values);
  RUN(test_unimplemented_forms);
  RUN(test_errors);
  return dml_test_finish();
}
