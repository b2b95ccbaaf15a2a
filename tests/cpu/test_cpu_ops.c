/* Tests for the elementwise, normalization, reduction, pooling and Resize
 * kernels, against libm / hand-computed / naive references. Tolerances:
 * 1e-6 relative for f32 unary ops vs double libm, exact for integer and
 * data-movement results, 1e-5 for reductions and normalizations. */
#include <math.h>

#include "cpu_internal.h" /* dml_cpu_sgemm_set_kernel */
#include "cpu_test_util.h"

/* ---- coverage --------------------------------------------------------- */

static void test_every_op_supported(void) {
  for (int op = 1; op < DML_OP_COUNT_; op++) {
    /* Compile-only ops (Gradient) are lowered before a package exists. */
    if (dml_op_info((dml_op_t)op)->flags & DML_OPF_COMPILE_ONLY) {
      CHECK(dml_cpu_supports((dml_op_t)op) == 0);
      continue;
    }
    /* Control flow (If, Loop) is run by the executor, not a kernel. */
    if (dml_op_info((dml_op_t)op)->flags & DML_OPF_CONTROL_FLOW) {
      CHECK(dml_cpu_supports((dml_op_t)op) == 0);
      continue;
    }
    if (!dml_cpu_supports((dml_op_t)op))
      fprintf(stderr, "no CPU kernel: %s\n", dml_op_name((dml_op_t)op));
    CHECK(dml_cpu_supports((dml_op_t)op) == 1);
  }
  CHECK(dml_cpu_supports(DML_OP_INVALID) == 0);
  CHECK(dml_cpu_supports(DML_OP_COUNT_) == 0);
}

/* ---- unary ------------------------------------------------------------ */

static double sigm(double x) {
  return 1 / (1 + exp(-x));
}

typedef struct {
  dml_op_t op;
  double (*ref)(double);
} uref_t;

static double r_abs(double x) {
  return fabs(x);
}
static double r_neg(double x) {
  return -x;
}
static double r_relu(double x) {
  return x > 0 ? x : 0;
}
static double r_leaky(double x) {
  return x >= 0 ? x : 0.01 * x;
}
static double r_elu(double x) {
  return x >= 0 ? x : exp(x) - 1;
}
static double r_selu(double x) {
  return x > 0 ? 1.0507009873554805 * x
               : 1.0507009873554805 * 1.6732632423543772 * (exp(x) - 1);
}
static double r_hsig(double x) {
  return fmax(0, fmin(1, 0.2 * x + 0.5));
}
static double r_hswish(double x) {
  return x * fmax(0, fmin(1, x / 6 + 0.5));
}
static double r_softplus(double x) {
  return log(exp(x) + 1);
}
static double r_softsign(double x) {
  return x / (1 + fabs(x));
}
static double r_recip(double x) {
  return 1 / x;
}
static double r_sign(double x) {
  return x > 0 ? 1 : x < 0 ? -1 : 0;
}

static void test_unary_f32(void) {
  const uref_t ops[] = {
      {DML_OP_ABS, r_abs},
      {DML_OP_NEG, r_neg},
      {DML_OP_RELU, r_relu},
      {DML_OP_LEAKY_RELU, r_leaky},
      {DML_OP_ELU, r_elu},
      {DML_OP_SELU, r_selu},
      {DML_OP_SIGMOID, sigm},
      {DML_OP_HARD_SIGMOID, r_hsig},
      {DML_OP_HARD_SWISH, r_hswish},
      {DML_OP_SOFTPLUS, r_softplus},
      {DML_OP_SOFTSIGN, r_softsign},
      {DML_OP_TANH, tanh},
      {DML_OP_ERF, erf},
      {DML_OP_EXP, exp},
      {DML_OP_RECIPROCAL, r_recip},
      {DML_OP_FLOOR, floor},
      {DML_OP_CEIL, ceil},
      {DML_OP_SIGN, r_sign},
      {DML_OP_SIN, sin},
      {DML_OP_COS, cos},
  };
  float x[19], y[19];
  for (int i = 0; i < 19; i++) x[i] = (float)(i - 9) * 0.37f + (i == 9 ? 0.0f : 0.013f);
  x[9] = 0.0f;
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    dml_tensor_t in = tens(DML_DTYPE_F32, x, 2, D(1), D(19)),
                 out = tens(DML_DTYPE_F32, y, 2, D(1), D(19));
    CHECK_OK(run_op(ops[k].op, &in, 1, &out, 1, NULL, 0));
    for (int i = 0; i < 19; i++) {
      if (ops[k].op == DML_OP_RECIPROCAL && x[i] == 0) continue;
      double r = ops[k].ref((double)x[i]);
      if (!(fabs(y[i] - r) <= 1e-6 * fmax(1, fabs(r))))
        fprintf(stderr, "%s(%g) = %g, want %g\n", dml_op_name(ops[k].op), x[i], y[i], r);
      CHECK(fabs(y[i] - r) <= 1e-6 * fmax(1, fabs(r)));
    }
  }
  /* sqrt/log on positives */
  float p[4] = {0.25f, 1, 2, 100}, q[4];
  dml_tensor_t in = tens(DML_DTYPE_F32, p, 1, D(4)),
               out = tens(DML_DTYPE_F32, q, 1, D(4));
  CHECK_OK(run_op(DML_OP_SQRT, &in, 1, &out, 1, NULL, 0));
  CHECK_NEAR(q[0], 0.5, 1e-7);
  CHECK_NEAR(q[3], 10, 1e-6);
  CHECK_OK(run_op(DML_OP_LOG, &in, 1, &out, 1, NULL, 0));
  CHECK_NEAR(q[2], log(2.0), 1e-6);
}

static void test_unary_attrs(void) {
  float x[3] = {-2, 0.5f, 3}, y[3];
  dml_tensor_t in = tens(DML_DTYPE_F32, x, 1, D(3)),
               out = tens(DML_DTYPE_F32, y, 1, D(3));
  dml_attr_t a = attr_f("alpha", 0.5);
  CHECK_OK(run_op(DML_OP_LEAKY_RELU, &in, 1, &out, 1, &a, 1));
  CHECK(y[0] == -1 && y[1] == 0.5f && y[2] == 3);
  CHECK_OK(run_op(DML_OP_ELU, &in, 1, &out, 1, &a, 1));
  CHECK_NEAR(y[0], 0.5 * (exp(-2.0) - 1), 1e-6);
  dml_attr_t hs[2] = {attr_f("alpha", 0.5), attr_f("beta", 0.25)};
  CHECK_OK(run_op(DML_OP_HARD_SIGMOID, &in, 1, &out, 1, hs, 2));
  CHECK(y[0] == 0 && y[1] == 0.5f && y[2] == 1);
  dml_attr_t se[2] = {attr_f("alpha", 2.0), attr_f("gamma", 3.0)};
  CHECK_OK(run_op(DML_OP_SELU, &in, 1, &out, 1, se, 2));
  CHECK_NEAR(y[0], 3 * 2 * (exp(-2.0) - 1), 1e-5);
  CHECK_NEAR(y[2], 9, 1e-6);
}

static void test_round_sign_not(void) {
  float x[8] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f, -2.6f, 3.0f}, y[8];
  dml_tensor_t in = tens(DML_DTYPE_F32, x, 1, D(8)),
               out = tens(DML_DTYPE_F32, y, 1, D(8));
  CHECK_OK(run_op(DML_OP_ROUND, &in, 1, &out, 1, NULL, 0));
  float want[8] = {0, 2, 2, -0.0f, -2, 2, -3, 3};
  for (int i = 0; i < 8; i++) CHECK(y[i] == want[i]);
  int32_t xi[4] = {-5, 0, 7, INT32_MIN + 1}, yi[4];
  dml_tensor_t ini = tens(DML_DTYPE_I32, xi, 1, D(4)),
               outi = tens(DML_DTYPE_I32, yi, 1, D(4));
  CHECK_OK(run_op(DML_OP_SIGN, &ini, 1, &outi, 1, NULL, 0));
  CHECK(yi[0] == -1 && yi[1] == 0 && yi[2] == 1);
  CHECK_OK(run_op(DML_OP_ABS, &ini, 1, &outi, 1, NULL, 0));
  CHECK(yi[0] == 5 && yi[2] == 7 && yi[3] == INT32_MAX);
  CHECK_OK(run_op(DML_OP_NEG, &ini, 1, &outi, 1, NULL, 0));
  CHECK(yi[0] == 5 && yi[2] == -7);
  CHECK_OK(run_op(DML_OP_RELU, &ini, 1, &outi, 1, NULL, 0));
  CHECK(yi[0] == 0 && yi[2] == 7);
  uint8_t b[3] = {1, 0, 1}, nb[3];
  dml_tensor_t inb = tens(DML_DTYPE_BOOL, b, 1, D(3)),
               outb = tens(DML_DTYPE_BOOL, nb, 1, D(3));
  CHECK_OK(run_op(DML_OP_NOT, &inb, 1, &outb, 1, NULL, 0));
  CHECK(nb[0] == 0 && nb[1] == 1 && nb[2] == 0);
}

static void test_unary_other_floats(void) {
  double xd[3] = {-1, 0, 2}, yd[3];
  dml_tensor_t in = tens(DML_DTYPE_F64, xd, 1, D(3)),
               out = tens(DML_DTYPE_F64, yd, 1, D(3));
  CHECK_OK(run_op(DML_OP_SIGMOID, &in, 1, &out, 1, NULL, 0));
  CHECK_NEAR(yd[0], sigm(-1), 1e-15);
  CHECK_NEAR(yd[2], sigm(2), 1e-15);
  uint16_t h[3], hy[3];
  for (int i = 0; i < 3; i++) h[i] = dml_f32_to_f16((float)xd[i]);
  dml_tensor_t inh = tens(DML_DTYPE_F16, h, 1, D(3)),
               outh = tens(DML_DTYPE_F16, hy, 1, D(3));
  CHECK_OK(run_op(DML_OP_EXP, &inh, 1, &outh, 1, NULL, 0));
  CHECK_NEAR(dml_f16_to_f32(hy[2]), exp(2.0), 4e-3); /* f16: 11-bit mantissa */
  CHECK_NEAR(dml_f16_to_f32(hy[1]), 1.0, 0);
  uint16_t bf[3], bfy[3];
  for (int i = 0; i < 3; i++) bf[i] = dml_f32_to_bf16((float)xd[i]);
  dml_tensor_t inb = tens(DML_DTYPE_BF16, bf, 1, D(3)),
               outb = tens(DML_DTYPE_BF16, bfy, 1, D(3));
  CHECK_OK(run_op(DML_OP_RELU, &inb, 1, &outb, 1, NULL, 0));
  CHECK(dml_bf16_to_f32(bfy[0]) == 0 && dml_bf16_to_f32(bfy[2]) == 2);
}

/* ---- binary ----------------------------------------------------------- */

static void test_binary_broadcast_f32(void) {
  /* [2,3,4] op [3,1] and [4] op [2,1,1] */
  float a[24], b[3], y[24];
  for (int i = 0; i < 24; i++) a[i] = (float)i * 0.5f - 3;
  for (int i = 0; i < 3; i++) b[i] = (float)i + 1.5f;
  const dml_op_t ops[] = {DML_OP_ADD, DML_OP_SUB, DML_OP_MUL, DML_OP_DIV, DML_OP_POW};
  for (size_t k = 0; k < 5; k++) {
    dml_tensor_t in[2] = {tens(DML_DTYPE_F32, a, 3, D(2), D(3), D(4)),
                          tens(DML_DTYPE_F32, b, 2, D(3), D(1))};
    dml_tensor_t out = tens(DML_DTYPE_F32, y, 3, D(2), D(3), D(4));
    CHECK_OK(run_op(ops[k], in, 2, &out, 1, NULL, 0));
    for (int i = 0; i < 24; i++) {
      double x = a[i], z = b[(i / 4) % 3], r = 0;
      switch (ops[k]) {
        case DML_OP_ADD: r = x + z; break;
        case DML_OP_SUB: r = x - z; break;
        case DML_OP_MUL: r = x * z; break;
        case DML_OP_DIV: r = x / z; break;
        default: r = pow(x, z); break;
      }
      if (ops[k] == DML_OP_POW && x < 0) {
        CHECK(y[i] != y[i]); /* non-integer exponent of a negative base */
        continue;
      }
      CHECK(fabs(y[i] - r) <= 1e-6 * fmax(1, fabs(r)));
    }
  }
  /* scalar broadcast both ways and b op a */
  float s = 2;
  dml_tensor_t in2[2] = {tens(DML_DTYPE_F32, &s, 0),
                         tens(DML_DTYPE_F32, a, 3, D(2), D(3), D(4))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 3, D(2), D(3), D(4));
  CHECK_OK(run_op(DML_OP_SUB, in2, 2, &out, 1, NULL, 0));
  for (int i = 0; i < 24; i++) CHECK(y[i] == 2 - a[i]);
  /* both broadcast: [4] - [2,1,1] -> [2,1,4]... use [3,1] - [4] -> [3,4] */
  float c4[4] = {1, 2, 3, 4}, y12[12];
  dml_tensor_t in3[2] = {tens(DML_DTYPE_F32, b, 2, D(3), D(1)),
                         tens(DML_DTYPE_F32, c4, 1, D(4))};
  dml_tensor_t out3 = tens(DML_DTYPE_F32, y12, 2, D(3), D(4));
  CHECK_OK(run_op(DML_OP_SUB, in3, 2, &out3, 1, NULL, 0));
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++) CHECK(y12[i * 4 + j] == b[i] - c4[j]);
  /* bad broadcast */
  dml_tensor_t in4[2] = {tens(DML_DTYPE_F32, a, 3, D(2), D(3), D(4)),
                         tens(DML_DTYPE_F32, b, 1, D(3))};
  CHECK_ERROR(run_op(DML_OP_ADD, in4, 2, &out, 1, NULL, 0), DML_STATUS_INVALID_ARGUMENT,
              "[2,3,4]");
}

static void test_binary_int_and_compare(void) {
  int32_t a[6] = {7, -7, 7, -7, 0, 5}, b[6] = {3, 3, -3, -3, 2, 0}, y[6];
  dml_tensor_t in[2] = {tens(DML_DTYPE_I32, a, 1, D(6)), tens(DML_DTYPE_I32, b, 1, D(6))};
  dml_tensor_t out = tens(DML_DTYPE_I32, y, 1, D(6));
  CHECK_OK(run_op(DML_OP_DIV, in, 2, &out, 1, NULL, 0));
  CHECK(y[0] == 2 && y[1] == -2 && y[2] == -2 && y[3] == 2 && y[4] == 0);
  CHECK_OK(
      run_op(DML_OP_MOD, in, 2, &out, 1, NULL, 0)); /* Python-style: sign of divisor */
  CHECK(y[0] == 1 && y[1] == 2 && y[2] == -2 && y[3] == -1);
  dml_attr_t fm = attr_i("fmod", 1);
  CHECK_OK(run_op(DML_OP_MOD, in, 2, &out, 1, &fm, 1)); /* C fmod: sign of dividend */
  CHECK(y[0] == 1 && y[1] == -1 && y[2] == 1 && y[3] == -1);
  CHECK_OK(run_op(DML_OP_ADD, in, 2, &out, 1, NULL, 0));
  CHECK(y[0] == 10 && y[5] == 5);
  CHECK_OK(run_op(DML_OP_MUL, in, 2, &out, 1, NULL, 0));
  CHECK(y[1] == -21);
  int32_t e[6] = {2, 3, 0, 1, 5, -1};
  dml_tensor_t inp[2] = {tens(DML_DTYPE_I32, a, 1, D(6)),
                         tens(DML_DTYPE_I32, e, 1, D(6))};
  CHECK_OK(run_op(DML_OP_POW, inp, 2, &out, 1, NULL, 0));
  CHECK(y[0] == 49 && y[1] == -343 && y[2] == 1 && y[3] == -7 && y[4] == 0 && y[5] == 0);
  /* float base, int exponent */
  float fb[2] = {2, -3}, fy[2];
  int64_t ie[2] = {10, 3};
  dml_tensor_t inm[2] = {tens(DML_DTYPE_F32, fb, 1, D(2)),
                         tens(DML_DTYPE_I64, ie, 1, D(2))};
  dml_tensor_t outm = tens(DML_DTYPE_F32, fy, 1, D(2));
  CHECK_OK(run_op(DML_OP_POW, inm, 2, &outm, 1, NULL, 0));
  CHECK(fy[0] == 1024 && fy[1] == -27);
  /* float Mod */
  float fa[2] = {5.5f, -5.5f}, fd[2] = {2, 2};
  dml_tensor_t inf2[2] = {tens(DML_DTYPE_F32, fa, 1, D(2)),
                          tens(DML_DTYPE_F32, fd, 1, D(2))};
  CHECK_OK(run_op(DML_OP_MOD, inf2, 2, &outm, 1, &fm, 1));
  CHECK(fy[0] == 1.5f && fy[1] == -1.5f);
  /* fmod=0 on floats (Mod-28): floor mod, the sign of the divisor */
  CHECK_OK(run_op(DML_OP_MOD, inf2, 2, &outm, 1, NULL, 0));
  CHECK(fy[0] == 1.5f && fy[1] == 0.5f);
  /* comparisons -> bool */
  uint8_t r[6];
  dml_tensor_t outb = tens(DML_DTYPE_BOOL, r, 1, D(6));
  CHECK_OK(run_op(DML_OP_LESS, in, 2, &outb, 1, NULL, 0));
  CHECK(r[0] == 0 && r[1] == 1 && r[4] == 1 && r[5] == 0);
  CHECK_OK(run_op(DML_OP_GREATER_OR_EQUAL, in, 2, &outb, 1, NULL, 0));
  CHECK(r[0] == 1 && r[1] == 0 && r[2] == 1 && r[3] == 0);
  CHECK_OK(run_op(DML_OP_EQUAL, in, 2, &outb, 1, NULL, 0));
  CHECK(r[0] == 0 && r[3] == 0);
  dml_tensor_t inaa[2] = {in[0], in[0]};
  CHECK_OK(run_op(DML_OP_EQUAL, inaa, 2, &outb, 1, NULL, 0));
  CHECK(r[0] == 1 && r[5] == 1);
  float c1[3] = {1, 2, 3}, c2 = 2;
  uint8_t r3[3];
  dml_tensor_t inc[2] = {tens(DML_DTYPE_F32, c1, 1, D(3)), tens(DML_DTYPE_F32, &c2, 0)};
  dml_tensor_t outc = tens(DML_DTYPE_BOOL, r3, 1, D(3));
  CHECK_OK(run_op(DML_OP_LESS_OR_EQUAL, inc, 2, &outc, 1, NULL, 0));
  CHECK(r3[0] == 1 && r3[1] == 1 && r3[2] == 0);
  CHECK_OK(run_op(DML_OP_GREATER, inc, 2, &outc, 1, NULL, 0));
  CHECK(r3[0] == 0 && r3[1] == 0 && r3[2] == 1);
  /* u64 compares unsigned */
  uint64_t u1 = UINT64_MAX, u2 = 1;
  uint8_t ur;
  dml_tensor_t inu[2] = {tens(DML_DTYPE_U64, &u1, 0), tens(DML_DTYPE_U64, &u2, 0)};
  dml_tensor_t outu = tens(DML_DTYPE_BOOL, &ur, 0);
  CHECK_OK(run_op(DML_OP_GREATER, inu, 2, &outu, 1, NULL, 0));
  CHECK(ur == 1);
  /* logic */
  uint8_t p[4] = {0, 0, 1, 1}, q[4] = {0, 1, 0, 1}, o[4];
  dml_tensor_t inl[2] = {tens(DML_DTYPE_BOOL, p, 1, D(4)),
                         tens(DML_DTYPE_BOOL, q, 1, D(4))};
  dml_tensor_t outl = tens(DML_DTYPE_BOOL, o, 1, D(4));
  CHECK_OK(run_op(DML_OP_AND, inl, 2, &outl, 1, NULL, 0));
  CHECK(o[0] == 0 && o[1] == 0 && o[2] == 0 && o[3] == 1);
  CHECK_OK(run_op(DML_OP_OR, inl, 2, &outl, 1, NULL, 0));
  CHECK(o[0] == 0 && o[1] == 1 && o[2] == 1 && o[3] == 1);
  CHECK_OK(run_op(DML_OP_XOR, inl, 2, &outl, 1, NULL, 0));
  CHECK(o[0] == 0 && o[1] == 1 && o[2] == 1 && o[3] == 0);
  CHECK_ERROR(run_op(DML_OP_AND, in, 2, &outl, 1, NULL, 0), DML_STATUS_UNIMPLEMENTED,
              "rt.cpu.And");
}

static void test_variadic(void) {
  float a[6] = {1, 5, 3, -1, 0, 9}, b[3] = {2, 2, 2}, c = 4, y[6];
  dml_tensor_t in[3] = {tens(DML_DTYPE_F32, a, 2, D(2), D(3)),
                        tens(DML_DTYPE_F32, b, 1, D(3)), tens(DML_DTYPE_F32, &c, 0)};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 2, D(2), D(3));
  CHECK_OK(run_op(DML_OP_MAX, in, 3, &out, 1, NULL, 0));
  CHECK(y[0] == 4 && y[1] == 5 && y[5] == 9);
  CHECK_OK(run_op(DML_OP_MIN, in, 3, &out, 1, NULL, 0));
  CHECK(y[0] == 1 && y[3] == -1 && y[5] == 2);
  CHECK_OK(run_op(DML_OP_SUM, in, 3, &out, 1, NULL, 0));
  CHECK(y[0] == 7 && y[5] == 15);
  CHECK_OK(run_op(DML_OP_MEAN, in, 3, &out, 1, NULL, 0));
  CHECK_NEAR(y[5], 5, 1e-6);
  /* one input broadcast to the output */
  CHECK_OK(run_op(DML_OP_SUM, in + 1, 1, &out, 1, NULL, 0));
  CHECK(y[4] == 2);
  int64_t ia[2] = {3, -4}, ib[2] = {-5, 6}, iy[2];
  dml_tensor_t ini[2] = {tens(DML_DTYPE_I64, ia, 1, D(2)),
                         tens(DML_DTYPE_I64, ib, 1, D(2))};
  dml_tensor_t outi = tens(DML_DTYPE_I64, iy, 1, D(2));
  CHECK_OK(run_op(DML_OP_MAX, ini, 2, &outi, 1, NULL, 0));
  CHECK(iy[0] == 3 && iy[1] == 6);
  CHECK_OK(run_op(DML_OP_SUM, ini, 2, &outi, 1, NULL, 0));
  CHECK(iy[0] == -2 && iy[1] == 2);
  CHECK_ERROR(run_op(DML_OP_MEAN, ini, 2, &outi, 1, NULL, 0), DML_STATUS_UNIMPLEMENTED,
              "i64");
}

static void test_where_prelu_clip(void) {
  uint8_t cnd[3] = {1, 0, 1};
  float x[2] = {10, 20}, yv = -1, o[6];
  /* cond [3] , x [2,1], y scalar -> [2,3] */
  dml_tensor_t in[3] = {tens(DML_DTYPE_BOOL, cnd, 1, D(3)),
                        tens(DML_DTYPE_F32, x, 2, D(2), D(1)),
                        tens(DML_DTYPE_F32, &yv, 0)};
  dml_tensor_t out = tens(DML_DTYPE_F32, o, 2, D(2), D(3));
  CHECK_OK(run_op(DML_OP_WHERE, in, 3, &out, 1, NULL, 0));
  CHECK(o[0] == 10 && o[1] == -1 && o[2] == 10 && o[3] == 20 && o[4] == -1);
  int64_t xi[2] = {1, 2}, yi = 7, oi[6];
  dml_tensor_t in2[3] = {in[0], tens(DML_DTYPE_I64, xi, 2, D(2), D(1)),
                         tens(DML_DTYPE_I64, &yi, 0)};
  dml_tensor_t out2 = tens(DML_DTYPE_I64, oi, 2, D(2), D(3));
  CHECK_OK(run_op(DML_OP_WHERE, in2, 3, &out2, 1, NULL, 0));
  CHECK(oi[0] == 1 && oi[1] == 7 && oi[5] == 2);
  /* PRelu: slope per channel [2,1] against x [1,2,2] */
  float px[4] = {-1, 2, -3, 4}, sl[2] = {0.5f, 0.25f}, py[4];
  dml_tensor_t pin[2] = {tens(DML_DTYPE_F32, px, 3, D(1), D(2), D(2)),
                         tens(DML_DTYPE_F32, sl, 2, D(2), D(1))};
  dml_tensor_t pout = tens(DML_DTYPE_F32, py, 3, D(1), D(2), D(2));
  CHECK_OK(run_op(DML_OP_PRELU, pin, 2, &pout, 1, NULL, 0));
  CHECK(py[0] == -0.5f && py[1] == 2 && py[2] == -0.75f && py[3] == 4);
  /* Clip: attributes, inputs, ints */
  float cx[4] = {-5, -0.5f, 0.5f, 5}, cy[4], lo = -1, hi = 1;
  dml_tensor_t cin[3] = {tens(DML_DTYPE_F32, cx, 1, D(4)), tens(DML_DTYPE_F32, &lo, 0),
                         tens(DML_DTYPE_F32, &hi, 0)};
  dml_tensor_t cout = tens(DML_DTYPE_F32, cy, 1, D(4));
  CHECK_OK(run_op(DML_OP_CLIP, cin, 3, &cout, 1, NULL, 0));
  CHECK(cy[0] == -1 && cy[1] == -0.5f && cy[3] == 1);
  dml_tensor_t cin2[3] = {cin[0], absent(), cin[2]};
  CHECK_OK(run_op(DML_OP_CLIP, cin2, 3, &cout, 1, NULL, 0));
  CHECK(cy[0] == -5 && cy[3] == 1);
  dml_attr_t ca[2] = {attr_f("min", 0.0), attr_f("max", 0.6)};
  CHECK_OK(run_op(DML_OP_CLIP, cin, 1, &cout, 1, ca, 2));
  CHECK(cy[0] == 0 && cy[2] == 0.5f && cy[3] == 0.6f);
  CHECK_OK(run_op(DML_OP_CLIP, cin, 1, &cout, 1, NULL, 0));
  CHECK(cy[0] == -5 && cy[3] == 5);
  uint8_t ux[3] = {0, 100, 250}, uy[3], ulo = 10, uhi = 200;
  dml_tensor_t uin[3] = {tens(DML_DTYPE_U8, ux, 1, D(3)), tens(DML_DTYPE_U8, &ulo, 0),
                         tens(DML_DTYPE_U8, &uhi, 0)};
  dml_tensor_t uout = tens(DML_DTYPE_U8, uy, 1, D(3));
  CHECK_OK(run_op(DML_OP_CLIP, uin, 3, &uout, 1, NULL, 0));
  CHECK(uy[0] == 10 && uy[1] == 100 && uy[2] == 200);
}

/* ---- Cast ------------------------------------------------------------- */

/* Cast to and from float8 with saturate and round_mode (the conversions
 * themselves: test_float8), float8 QuantizeLinear/DequantizeLinear. */
static void test_cast_float8(void) {
  float x[5] = {1000.0f, 464.0f, -0.0f, NAN, 0.1f};
  uint8_t q[5];
  float back[5];
  dml_tensor_t tx = tens(DML_DTYPE_F32, x, 1, D(5)),
               tq = tens(DML_DTYPE_F8E4M3FN, q, 1, D(5)),
               tb = tens(DML_DTYPE_F32, back, 1, D(5));
  CHECK_OK(run_op(DML_OP_CAST, &tx, 1, &tq, 1, NULL, 0)); /* saturate 1 */
  CHECK(q[0] == 0x7e && q[1] == 0x7e && q[2] == 0x80 && q[3] == 0x7f && q[4] == 0x1d);
  dml_attr_t ns = attr_i("saturate", 0);
  CHECK_OK(run_op(DML_OP_CAST, &tx, 1, &tq, 1, &ns, 1));
  CHECK(q[0] == 0x7f && q[1] == 0x7e); /* 1000: NaN; 464 ties to 448 */
  CHECK_OK(run_op(DML_OP_CAST, &tq, 1, &tb, 1, NULL, 0));
  CHECK(isnan(back[0]) && back[1] == 448.0f && back[2] == 0.0f && signbit(back[2]) &&
        back[4] == 0.1015625f);
  /* E8M0: round_mode */
  float p[2] = {1.5f, 3.0f};
  uint8_t e[2];
  dml_tensor_t tp = tens(DML_DTYPE_F32, p, 1, D(2)),
               te = tens(DML_DTYPE_F8E8M0, e, 1, D(2));
  CHECK_OK(run_op(DML_OP_CAST, &tp, 1, &te, 1, NULL, 0));
  CHECK(e[0] == 0x80 && e[1] == 0x81);
  dml_attr_t down = attr_s("round_mode", "down");
  CHECK_OK(run_op(DML_OP_CAST, &tp, 1, &te, 1, &down, 1));
  CHECK(e[0] == 0x7f && e[1] == 0x80);
  dml_attr_t bad = attr_s("round_mode", "sideways");
  CHECK_ERROR(run_op(DML_OP_CAST, &tp, 1, &te, 1, &bad, 1), DML_STATUS_INVALID_ARGUMENT,
              "round_mode='sideways' is not up, down or nearest");
  /* QuantizeLinear to E5M2 (y = f8(x / scale)), DequantizeLinear back */
  float qx[3] = {1.0f, 200.0f, 1e6f}, sc = 2.0f, dq[3];
  uint8_t zp = 0, y[3];
  dml_tensor_t ins[3] = {tens(DML_DTYPE_F32, qx, 1, D(3)), tens(DML_DTYPE_F32, &sc, 0),
                         tens(DML_DTYPE_F8E5M2, &zp, 1, D(1))};
  dml_tensor_t ty = tens(DML_DTYPE_F8E5M2, y, 1, D(3));
  CHECK_OK(run_op(DML_OP_QUANTIZE_LINEAR, ins, 3, &ty, 1, NULL, 0));
  CHECK(y[0] == 0x38 && y[1] == 0x56 && y[2] == 0x7b); /* 0.5, 96, 57344 (saturated) */
  dml_tensor_t dins[2] = {ty, tens(DML_DTYPE_F32, &sc, 0)},
               td = tens(DML_DTYPE_F32, dq, 1, D(3));
  CHECK_OK(run_op(DML_OP_DEQUANTIZE_LINEAR, dins, 2, &td, 1, NULL, 0));
  CHECK(dq[0] == 1.0f && dq[1] == 192.0f && dq[2] == 114688.0f);
  zp = 0x3c; /* 1.0: a float8 zero point must be 0 */
  CHECK_ERROR(run_op(DML_OP_QUANTIZE_LINEAR, ins, 3, &ty, 1, NULL, 0),
              DML_STATUS_INVALID_ARGUMENT, "a float8 zero point must be 0");
}

static void test_cast(void) {
  float f[6] = {-2.7f, -0.5f, 0, 1.5f, 300.9f, 65504.0f};
  int32_t i32[6];
  dml_tensor_t in = tens(DML_DTYPE_F32, f, 1, D(6)),
               out = tens(DML_DTYPE_I32, i32, 1, D(6));
  CHECK_OK(run_op(DML_OP_CAST, &in, 1, &out, 1, NULL, 0));
  CHECK(i32[0] == -2 && i32[1] == 0 && i32[3] == 1 && i32[4] == 300);
  uint8_t bo[6];
  dml_tensor_t outb = tens(DML_DTYPE_BOOL, bo, 1, D(6));
  CHECK_OK(run_op(DML_OP_CAST, &in, 1, &outb, 1, NULL, 0));
  CHECK(bo[0] == 1 && bo[1] == 1 && bo[2] == 0 && bo[3] == 1);
  uint16_t h[6];
  dml_tensor_t outh = tens(DML_DTYPE_F16, h, 1, D(6));
  CHECK_OK(run_op(DML_OP_CAST, &in, 1, &outh, 1, NULL, 0));
  CHECK(dml_f16_to_f32(h[3]) == 1.5f && dml_f16_to_f32(h[5]) == 65504.0f);
  float back[6];
  dml_tensor_t inh = tens(DML_DTYPE_F16, h, 1, D(6)),
               outf = tens(DML_DTYPE_F32, back, 1, D(6));
  CHECK_OK(run_op(DML_OP_CAST, &inh, 1, &outf, 1, NULL, 0));
  CHECK(back[1] == -0.5f && back[4] == 301.0f); /* 300.9 rounds to 301 in f16 */
  /* every dtype to every dtype, on small non-negative integers (powers of
   * two where a float8 dtype is involved: E5M2 has 2 mantissa bits, E8M0
   * holds powers of two only; test_float8 covers their rounding) */
  uint8_t src[DML_DTYPE_COUNT_][64], dst[64];
  for (int s = 1; s < DML_DTYPE_COUNT_; s++) {
    if (s == DML_DTYPE_STRING) continue; /* numbers only: strings in test_cpu_strings */
    for (int d = 1; d < DML_DTYPE_COUNT_; d++) {
      if (d == DML_DTYPE_STRING) continue;
      int f8 = dml_dtype_is_float8((dml_dtype_t)s) || dml_dtype_is_float8((dml_dtype_t)d);
      for (int i = 0; i < 4; i++)
        dml_store_i64((dml_dtype_t)s, src[s], (size_t)i,
                      s == DML_DTYPE_BOOL ? i % 2
                      : f8                ? 1 << i
                                          : i * 3);
      dml_tensor_t ti = tens((dml_dtype_t)s, src[s], 1, D(4)),
                   to = tens((dml_dtype_t)d, dst, 1, D(4));
      CHECK_OK(run_op(DML_OP_CAST, &ti, 1, &to, 1, NULL, 0));
      for (int i = 0; i < 4; i++) {
        int64_t want = s == DML_DTYPE_BOOL ? i % 2 : f8 ? 1 << i : i * 3;
        if (d == DML_DTYPE_BOOL) want = want != 0;
        if (dml_load_i64((dml_dtype_t)d, dst, (size_t)i) != want)
          fprintf(stderr, "cast %s->%s [%d]\n", dml_dtype_name((dml_dtype_t)s),
                  dml_dtype_name((dml_dtype_t)d), i);
        CHECK(dml_load_i64((dml_dtype_t)d, dst, (size_t)i) == want);
      }
    }
  }
  /* i64 -> i8 wraps, u64 large -> f64, f64 -> u64 large */
  int64_t big[2] = {257, -1};
  int8_t i8[2];
  dml_tensor_t tb = tens(DML_DTYPE_I64, big, 1, D(2)),
               t8 = tens(DML_DTYPE_I8, i8, 1, D(2));
  CHECK_OK(run_op(DML_OP_CAST, &tb, 1, &t8, 1, NULL, 0));
  CHECK(i8[0] == 1 && i8[1] == -1);
  double dv = 1.8e19;
  uint64_t uv;
  dml_tensor_t td = tens(DML_DTYPE_F64, &dv, 0), tu = tens(DML_DTYPE_U64, &uv, 0);
  CHECK_OK(run_op(DML_OP_CAST, &td, 1, &tu, 1, NULL, 0));
  CHECK(uv == 18000000000000000000ull);
}

/* ---- normalization and softmax --------------------------------------- */

static void test_batchnorm(void) {
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, sc[2] = {1, 2}, b[2] = {0, 1}, m[2] = {2, 6},
        v[2] = {4, 1}, y[8];
  dml_tensor_t in[5] = {tens(DML_DTYPE_F32, x, 4, D(1), D(2), D(2), D(2)),
                        tens(DML_DTYPE_F32, sc, 1, D(2)), tens(DML_DTYPE_F32, b, 1, D(2)),
                        tens(DML_DTYPE_F32, m, 1, D(2)), tens(DML_DTYPE_F32, v, 1, D(2))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 4, D(1), D(2), D(2), D(2));
  dml_attr_t eps = attr_f("epsilon", 0.0);
  CHECK_OK(run_op(DML_OP_BATCH_NORMALIZATION, in, 5, &out, 1, &eps, 1));
  CHECK_NEAR(y[0], (1 - 2) / 2.0, 1e-6);
  CHECK_NEAR(y[7], (8 - 6) * 2 + 1, 1e-6);
  CHECK_OK(run_op(DML_OP_BATCH_NORMALIZATION, in, 5, &out, 1, NULL, 0));
  CHECK_NEAR(y[0], (1 - 2) / sqrt(4 + 1e-5), 1e-6);
}

static void test_layernorm(void) {
  float x[6] = {1, 2, 3, 4, 6, 8}, s[3] = {1, 2, 3}, b[3] = {0.5f, 0, -1}, y[6], mean[2],
        inv[2];
  dml_tensor_t in[3] = {tens(DML_DTYPE_F32, x, 2, D(2), D(3)),
                        tens(DML_DTYPE_F32, s, 1, D(3)), tens(DML_DTYPE_F32, b, 1, D(3))};
  dml_tensor_t out[3] = {tens(DML_DTYPE_F32, y, 2, D(2), D(3)),
                         tens(DML_DTYPE_F32, mean, 2, D(2), D(1)),
                         tens(DML_DTYPE_F32, inv, 2, D(2), D(1))};
  CHECK_OK(run_op(DML_OP_LAYER_NORMALIZATION, in, 3, out, 3, NULL, 0));
  for (int r = 0; r < 2; r++) {
    double mu = (x[r * 3] + x[r * 3 + 1] + x[r * 3 + 2]) / 3, var = 0;
    for (int i = 0; i < 3; i++) var += (x[r * 3 + i] - mu) * (x[r * 3 + i] - mu);
    var /= 3;
    double iv = 1 / sqrt(var + 1e-5);
    CHECK_NEAR(mean[r], mu, 1e-6);
    CHECK_NEAR(inv[r], iv, 1e-5);
    for (int i = 0; i < 3; i++)
      CHECK_NEAR(y[r * 3 + i], (x[r * 3 + i] - mu) * iv * s[i] + b[i], 1e-5);
  }
  /* axis 0 over everything, no bias, scale broadcast from [1] */
  float s1 = 2;
  dml_tensor_t in2[2] = {in[0], tens(DML_DTYPE_F32, &s1, 1, D(1))};
  dml_attr_t ax = attr_i("axis", 0);
  CHECK_OK(run_op(DML_OP_LAYER_NORMALIZATION, in2, 2, out, 1, &ax, 1));
  double mu = 4, var = 0;
  for (int i = 0; i < 6; i++) var += (x[i] - mu) * (x[i] - mu);
  var /= 6;
  CHECK_NEAR(y[5], (8 - mu) / sqrt(var + 1e-5) * 2, 1e-5);
}

static void test_instancenorm(void) {
  float x[8] = {1, 2, 3, 4, 10, 10, 10, 14}, s[2] = {1, 3}, b[2] = {0, 1}, y[8];
  dml_tensor_t in[3] = {tens(DML_DTYPE_F32, x, 3, D(1), D(2), D(4)),
                        tens(DML_DTYPE_F32, s, 1, D(2)), tens(DML_DTYPE_F32, b, 1, D(2))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 3, D(1), D(2), D(4));
  CHECK_OK(run_op(DML_OP_INSTANCE_NORMALIZATION, in, 3, &out, 1, NULL, 0));
  CHECK_NEAR(y[0], (1 - 2.5) / sqrt(1.25 + 1e-5), 1e-5);
  CHECK_NEAR(y[7], 3 * (14 - 11) / sqrt(3 + 1e-5) + 1, 1e-5);
}

static void test_softmax(void) {
  float x[6] = {1, 2, 3, 1, 1, 1000}, y[6];
  dml_tensor_t in = tens(DML_DTYPE_F32, x, 2, D(2), D(3)),
               out = tens(DML_DTYPE_F32, y, 2, D(2), D(3));
  CHECK_OK(run_op(DML_OP_SOFTMAX, &in, 1, &out, 1, NULL, 0));
  double z = exp(1.0) + exp(2.0) + exp(3.0);
  CHECK_NEAR(y[0], exp(1.0) / z, 1e-6);
  CHECK_NEAR(y[2], exp(3.0) / z, 1e-6);
  CHECK_NEAR(y[5], 1.0, 1e-6);
  CHECK_NEAR(y[3], 0.0, 1e-6);
  CHECK_OK(run_op(DML_OP_LOG_SOFTMAX, &in, 1, &out, 1, NULL, 0));
  CHECK_NEAR(y[0], 1 - log(z), 1e-5);
  CHECK_NEAR(y[5], 0, 1e-5);
  dml_attr_t ax = attr_i("axis", 0);
  CHECK_OK(run_op(DML_OP_SOFTMAX, &in, 1, &out, 1, &ax, 1));
  CHECK_NEAR(y[0], 0.5, 1e-6);
  CHECK_NEAR(y[1], exp(2.0) / (exp(2.0) + exp(1.0)), 1e-6);
  double xd[3] = {0, 0, log(2.0)}, yd[3];
  dml_tensor_t ind = tens(DML_DTYPE_F64, xd, 1, D(3)),
               outd = tens(DML_DTYPE_F64, yd, 1, D(3));
  CHECK_OK(run_op(DML_OP_SOFTMAX, &ind, 1, &outd, 1, NULL, 0));
  CHECK_NEAR(yd[2], 0.5, 1e-12);
}

/* ---- reductions ------------------------------------------------------- */

static void test_reduce(void) {
  /* x [2,3,4] = i */
  float x[24], y[24];
  for (int i = 0; i < 24; i++) x[i] = (float)i;
  dml_tensor_t in[2] = {tens(DML_DTYPE_F32, x, 3, D(2), D(3), D(4)), absent()};
  int64_t ax1[1] = {1};
  dml_attr_t a1 = attr_ints("axes", ax1, 1);
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 3, D(2), D(1), D(4));
  CHECK_OK(run_op(DML_OP_REDUCE_SUM, in, 1, &out, 1, &a1, 1));
  CHECK(y[0] == 0 + 4 + 8 && y[7] == 19 + 15 + 23);
  CHECK_OK(run_op(DML_OP_REDUCE_MEAN, in, 1, &out, 1, &a1, 1));
  CHECK_NEAR(y[0], 4, 1e-6);
  CHECK_OK(run_op(DML_OP_REDUCE_MAX, in, 1, &out, 1, &a1, 1));
  CHECK(y[5] == 21);
  CHECK_OK(run_op(DML_OP_REDUCE_MIN, in, 1, &out, 1, &a1, 1));
  CHECK(y[5] == 13);
  CHECK_OK(run_op(DML_OP_REDUCE_PROD, in, 1, &out, 1, &a1, 1));
  CHECK(y[1] == 1 * 5 * 9);
  /* axes as input, keepdims 0, two non-adjacent axes */
  int64_t axes[2] = {0, -1};
  dml_tensor_t in2[2] = {in[0], tens(DML_DTYPE_I64, axes, 1, D(2))};
  dml_attr_t kd = attr_i("keepdims", 0);
  dml_tensor_t out2 = tens(DML_DTYPE_F32, y, 1, D(3));
  CHECK_OK(run_op(DML_OP_REDUCE_SUM, in2, 2, &out2, 1, &kd, 1));
  for (int j = 0; j < 3; j++) {
    double s = 0;
    for (int a = 0; a < 2; a++)
      for (int c = 0; c < 4; c++) s += x[a * 12 + j * 4 + c];
    CHECK_NEAR(y[j], s, 1e-5);
  }
  CHECK_OK(run_op(DML_OP_REDUCE_MAX, in2, 2, &out2, 1, &kd, 1));
  CHECK(y[0] == 15 && y[2] == 23);
  /* all axes (absent), keepdims default */
  dml_tensor_t out3 = tens(DML_DTYPE_F32, y, 3, D(1), D(1), D(1));
  CHECK_OK(run_op(DML_OP_REDUCE_SUM, in, 1, &out3, 1, NULL, 0));
  CHECK(y[0] == 276);
  /* noop_with_empty_axes */
  dml_attr_t noop = attr_i("noop_with_empty_axes", 1);
  dml_tensor_t out4 = tens(DML_DTYPE_F32, y, 3, D(2), D(3), D(4));
  CHECK_OK(run_op(DML_OP_REDUCE_SUM, in, 1, &out4, 1, &noop, 1));
  CHECK(y[23] == 23);
  /* last axis contiguous mean */
  int64_t axl[1] = {2};
  dml_attr_t al = attr_ints("axes", axl, 1);
  dml_tensor_t out5 = tens(DML_DTYPE_F32, y, 3, D(2), D(3), D(1));
  CHECK_OK(run_op(DML_OP_REDUCE_MEAN, in, 1, &out5, 1, &al, 1));
  CHECK_NEAR(y[5], 21.5, 1e-6);
  /* reduced dims all of extent 1 (f32[6,1] -> f32[6]): y is x, and
   * nothing past y is written (the f32 path once took numel as both its
   * outer and inner extent, writing numel^2 elements; found by
   * tests/vulkan/graphgen.c). The buffers hold 36 so that the old bug
   * stays inside them and shows. */
  {
    float xs[36] = {1, -2, 3, -4, 5, -6}, ys[36];
    for (int j = 0; j < 36; j++) ys[j] = 99.0f;
    int64_t ax1e[1] = {1};
    dml_attr_t ra[2] = {attr_ints("axes", ax1e, 1), attr_i("keepdims", 0)};
    dml_tensor_t i1 = tens(DML_DTYPE_F32, xs, 2, D(6), D(1));
    dml_tensor_t o1 = tens(DML_DTYPE_F32, ys, 1, D(6));
    CHECK_OK(run_op(DML_OP_REDUCE_SUM, &i1, 1, &o1, 1, ra, 2));
    for (int j = 0; j < 36; j++) CHECK(ys[j] == (j < 6 ? xs[j] : 99.0f));
  }
  /* wrong output shape */
  CHECK_ERROR(run_op(DML_OP_REDUCE_MEAN, in, 1, &out4, 1, &al, 1),
              DML_STATUS_INVALID_ARGUMENT, "[2,3,4]");
  /* ints */
  int32_t xi[6] = {3, -1, 4, 1, -5, 9}, yi[2];
  dml_tensor_t ini = tens(DML_DTYPE_I32, xi, 2, D(2), D(3));
  dml_tensor_t outi = tens(DML_DTYPE_I32, yi, 1, D(2));
  int64_t ax_last[1] = {1};
  dml_attr_t ia[2] = {attr_ints("axes", ax_last, 1), attr_i("keepdims", 0)};
  CHECK_OK(run_op(DML_OP_REDUCE_SUM, &ini, 1, &outi, 1, ia, 2));
  CHECK(yi[0] == 6 && yi[1] == 5);
  CHECK_OK(run_op(DML_OP_REDUCE_MIN, &ini, 1, &outi, 1, ia, 2));
  CHECK(yi[0] == -1 && yi[1] == -5);
  CHECK_OK(run_op(DML_OP_REDUCE_MAX, &ini, 1, &outi, 1, ia, 2));
  CHECK(yi[0] == 4 && yi[1] == 9);
  CHECK_OK(run_op(DML_OP_REDUCE_PROD, &ini, 1, &outi, 1, ia, 2));
  CHECK(yi[0] == -12 && yi[1] == -45);
  /* empty reduction: identity values */
  float e = 0, ey[2];
  dml_tensor_t ine = tens(DML_DTYPE_F32, &e, 2, D(2), D(0));
  dml_tensor_t oute = tens(DML_DTYPE_F32, ey, 1, D(2));
  CHECK_OK(run_op(DML_OP_REDUCE_SUM, &ine, 1, &oute, 1, ia, 2));
  CHECK(ey[0] == 0 && ey[1] == 0);
  CHECK_OK(run_op(DML_OP_REDUCE_PROD, &ine, 1, &oute, 1, ia, 2));
  CHECK(ey[0] == 1);
}

static void test_argmax(void) {
  float x[6] = {1, 5, 5, 7, 2, 7};
  int64_t y[3];
  dml_tensor_t in = tens(DML_DTYPE_F32, x, 2, D(2), D(3));
  dml_attr_t a[3] = {attr_i("axis", 1), attr_i("keepdims", 0),
                     attr_i("select_last_index", 1)};
  dml_tensor_t out = tens(DML_DTYPE_I64, y, 1, D(2));
  CHECK_OK(run_op(DML_OP_ARG_MAX, &in, 1, &out, 1, a, 2));
  CHECK(y[0] == 1 && y[1] == 0);
  CHECK_OK(run_op(DML_OP_ARG_MAX, &in, 1, &out, 1, a, 3));
  CHECK(y[0] == 2 && y[1] == 2);
  CHECK_OK(run_op(DML_OP_ARG_MIN, &in, 1, &out, 1, a, 2));
  CHECK(y[0] == 0 && y[1] == 1);
  dml_tensor_t out0 = tens(DML_DTYPE_I64, y, 2, D(1), D(3));
  CHECK_OK(run_op(DML_OP_ARG_MAX, &in, 1, &out0, 1, NULL, 0));
  CHECK(y[0] == 1 && y[1] == 0 && y[2] == 1);
  int64_t xi[4] = {-3, 8, 8, -9};
  dml_tensor_t ini = tens(DML_DTYPE_I64, xi, 1, D(4));
  dml_tensor_t outs = tens(DML_DTYPE_I64, y, 0);
  dml_attr_t k0[2] = {attr_i("keepdims", 0), attr_i("select_last_index", 1)};
  CHECK_OK(run_op(DML_OP_ARG_MAX, &ini, 1, &outs, 1, k0, 2));
  CHECK(y[0] == 2);
  CHECK_OK(run_op(DML_OP_ARG_MIN, &ini, 1, &outs, 1, k0, 1));
  CHECK(y[0] == 3);
}

/* ---- pooling ---------------------------------------------------------- */

static void naive_pool2d(int is_max, int incl, const float *x, int64_t NC, int64_t H,
                         int64_t W, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                         const int64_t *pads, int64_t OH, int64_t OW, float *y) {
  for (int64_t c = 0; c < NC; c++)
    for (int64_t oh = 0; oh < OH; oh++)
      for (int64_t ow = 0; ow < OW; ow++) {
        double acc = is_max ? -INFINITY : 0;
        int64_t cnt = 0, pc = 0;
        for (int64_t i = 0; i < kh; i++)
          for (int64_t j = 0; j < kw; j++) {
            int64_t h = oh * sh - pads[0] + i, w = ow * sw - pads[1] + j;
            if (h >= -pads[0] && h < H + pads[2] && w >= -pads[1] && w < W + pads[3])
              pc++;
            if (h < 0 || h >= H || w < 0 || w >= W) continue;
            double v = x[(c * H + h) * W + w];
            acc = is_max ? fmax(acc, v) : acc + v;
            cnt++;
          }
        y[(c * OH + oh) * OW + ow] =
            (float)(is_max ? acc : acc / (double)(incl ? pc : cnt));
      }
}

static void pool_case(int is_max, int incl, int ceil_mode, int64_t H, int64_t W,
                      int64_t k, int64_t s, const int64_t *pads) {
  int64_t span_h = H + pads[0] + pads[2] - k, span_w = W + pads[1] + pads[3] - k;
  int64_t OH = (ceil_mode ? (span_h + s - 1) / s : span_h / s) + 1;
  int64_t OW = (ceil_mode ? (span_w + s - 1) / s : span_w / s) + 1;
  if (ceil_mode && (OH - 1) * s >= H + pads[0]) OH--;
  if (ceil_mode && (OW - 1) * s >= W + pads[1]) OW--;
  float *x = frand_buf((size_t)(2 * 3 * H * W));
  float *y = (float *)malloc((size_t)(6 * OH * OW) * 4),
        *r = (float *)malloc((size_t)(6 * OH * OW) * 4);
  naive_pool2d(is_max, incl, x, 6, H, W, k, k, s, s, pads, OH, OW, r);
  int64_t ks[2] = {k, k}, st[2] = {s, s};
  dml_attr_t at[5] = {attr_ints("kernel_shape", ks, 2), attr_ints("strides", st, 2),
                      attr_ints("pads", pads, 4), attr_i("ceil_mode", ceil_mode),
                      attr_i("count_include_pad", incl)};
  dml_tensor_t in = tens(DML_DTYPE_F32, x, 4, D(2), D(3), H, W);
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 4, D(2), D(3), OH, OW);
  CHECK_OK(
      run_op(is_max ? DML_OP_MAX_POOL : DML_OP_AVERAGE_POOL, &in, 1, &out, 1, at, 5));
  CHECK(max_abs_diff(y, r, (size_t)(6 * OH * OW)) < 1e-6);
  /* the generic (double) path must agree: same op with f64 data */
  size_t nx = (size_t)(6 * H * W), ny = (size_t)(6 * OH * OW);
  double *xd = (double *)malloc(nx * 8), *yd = (double *)malloc(ny * 8);
  for (size_t i = 0; i < nx; i++) xd[i] = x[i];
  dml_tensor_t ind = tens(DML_DTYPE_F64, xd, 4, D(2), D(3), H, W);
  dml_tensor_t outd = tens(DML_DTYPE_F64, yd, 4, D(2), D(3), OH, OW);
  CHECK_OK(
      run_op(is_max ? DML_OP_MAX_POOL : DML_OP_AVERAGE_POOL, &ind, 1, &outd, 1, at, 5));
  for (size_t i = 0; i < ny; i++) CHECK_NEAR(yd[i], r[i], 1e-6);
  free(x), free(y), free(r), free(xd), free(yd);
}

static void test_pool(void) {
  int64_t p0[4] = {0, 0, 0, 0}, p1[4] = {1, 1, 1, 1}, p2[4] = {0, 1, 2, 0};
  for (int m = 0; m < 2; m++) {
    pool_case(m, 0, 0, 8, 8, 2, 2, p0);
    pool_case(m, 0, 0, 7, 9, 3, 2, p1);
    pool_case(m, 1, 0, 7, 9, 3, 2, p1);
    pool_case(m, 0, 1, 7, 8, 2, 2, p0);
    pool_case(m, 1, 1, 6, 7, 3, 2, p2);
    pool_case(m, 0, 1, 5, 5, 2, 3, p1);
  }
}

/* MaxPool 2x2 stride 2 (its own loop): NaN in each of the four taps of some
 * windows propagates, -inf, -0 and denormals, odd sizes (the last row and
 * column dropped) and rows longer than a vector, against the naive max. */
static void test_maxpool_2x2_edges(void) {
  static const int64_t hw[][2] = {{9, 9}, {4, 70}, {3, 33}, {2, 2}};
  for (int c = 0; c < 4; c++) {
    int64_t H = hw[c][0], W = hw[c][1], OH = H / 2, OW = W / 2;
    size_t nx = (size_t)(3 * H * W), ny = (size_t)(3 * OH * OW);
    float *x = frand_buf(nx), *y = (float *)malloc(ny * 4);
    static const float ev[] = {-INFINITY, -0.0f, 1e-40f, -1e-40f, 3e38f};
    for (size_t i = 0; i < nx; i += 7) x[i] = ev[(i / 7) % 5];
    for (size_t i = 3; i < nx; i += 29) x[i] = NAN;
    int64_t ks[2] = {2, 2}, st[2] = {2, 2};
    dml_attr_t at[2] = {attr_ints("kernel_shape", ks, 2), attr_ints("strides", st, 2)};
    dml_tensor_t in = tens(DML_DTYPE_F32, x, 4, D(1), D(3), H, W);
    dml_tensor_t out = tens(DML_DTYPE_F32, y, 4, D(1), D(3), OH, OW);
    CHECK_OK(run_op(DML_OP_MAX_POOL, &in, 1, &out, 1, at, 2));
    size_t bad = 0;
    for (int64_t p = 0; p < 3; p++)
      for (int64_t oh = 0; oh < OH; oh++)
        for (int64_t ow = 0; ow < OW; ow++) {
          float m = -INFINITY;
          int nan = 0;
          for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) {
              float v = x[(p * H + 2 * oh + i) * W + 2 * ow + j];
              if (v != v) nan = 1;
              if (v > m) m = v;
            }
          float got = y[(p * OH + oh) * OW + ow];
          if (nan ? got == got : got != m) bad++;
        }
    CHECK(bad == 0);
    free(x), free(y);
  }
}

/* MaxPool 3x3 stride 2 with a start padding of 1 (its own loop, cpu_pool.c
 * pool_max_3x3s2): bit for bit the general loop's row-major fold (m = v > m
 * || v != v ? v : m from -inf): NaNs of distinct payloads (the last one in
 * tap order wins), -0 before and after +0, -inf, denormals; odd and even
 * sizes, rows of 1 and 2, rows longer than a vector, end pads 0 and 1,
 * ceil_mode (a last window that starts in the padding), several planes;
 * the AVX-512 kernel (where the CPU has it) and the portable one (the
 * sgemm kernel switch: 1, portable C); 1 and 2 threads (32 planes of
 * 192x191 split over the pool). */
static void mp3_cases(const int64_t (*hw)[2], int ncase);
static void test_maxpool_3x3s2_edges(void) {
  static const int64_t hw[][2] = {{48, 48}, {9, 9},   {7, 8},    {5, 70},
                                  {2, 2},   {1, 1},   {3, 1},    {1, 33},
                                  {12, 35}, {40, 66}, {192, 191}};
  for (int threads = 1; threads <= 2; threads++)
    for (int kern = 0; kern < 2; kern++) {
      dml_cpu_set_num_threads(threads);
      CHECK(dml_cpu_sgemm_set_kernel(kern == 0 ? 0 : 1) == 0);
      mp3_cases(hw, 11);
    }
  CHECK(dml_cpu_sgemm_set_kernel(0) == 0);
  dml_cpu_set_num_threads(1);
}

static void mp3_cases(const int64_t (*hw)[2], int ncase) {
  for (int mode = 0; mode < 3; mode++)
    for (int c = 0; c < ncase; c++)
      for (int v = 0; v < 3; v++) {
        int64_t H = hw[c][0], W = hw[c][1], pe = v == 0 ? 1 : 0, cm = v == 2;
        int64_t P = H * W >= 30000 ? 32 : 3; /* 32 x 192x191: split over threads */
        int64_t sh = H + 1 + pe - 3, sw = W + 1 + pe - 3;
        if (sh < 0 || sw < 0) continue;
        int64_t OH = (cm ? (sh + 1) / 2 : sh / 2) + 1,
                OW = (cm ? (sw + 1) / 2 : sw / 2) + 1;
        size_t nx = (size_t)(P * H * W), ny = (size_t)(P * OH * OW);
        float *x = frand_buf(nx), *y = (float *)malloc(ny * 4);
        static const float ev[] = {-INFINITY, -0.0f, 0.0f, 1e-40f, -1e-40f, 3e38f, -0.0f};
        for (size_t i = 0; i < nx; i += 5) x[i] = ev[(i / 5) % 7];
        for (size_t i = 3; i < nx; i += 23) { /* quiet NaNs, payload i */
          uint32_t b = 0x7fc00000u | (uint32_t)(i & 0x3fffff);
          memcpy(&x[i], &b, 4);
        }
        if (H * W > 4) x[nx - 1] = 1e30f; /* a large value in the last window */
        for (size_t i = 0; mode == 1 && i < nx; i++) /* dense ties: -0 and +0 */
          x[i] = ((i * 2654435761u) >> 7) & 1 ? 0.0f : -0.0f;
        for (size_t i = 0; mode == 2 && i < nx; i++) /* dense NaNs, payload i */
          if (((i * 2654435761u) >> 9) & 1) {
            uint32_t b = 0x7fc00000u | (uint32_t)(i & 0x3fffff);
            memcpy(&x[i], &b, 4);
          }
        int64_t ks[2] = {3, 3}, st[2] = {2, 2}, pads[4] = {1, 1, pe, pe};
        dml_attr_t at[4] = {attr_ints("kernel_shape", ks, 2), attr_ints("strides", st, 2),
                            attr_ints("pads", pads, 4), attr_i("ceil_mode", cm)};
        dml_tensor_t in = tens(DML_DTYPE_F32, x, 4, D(1), P, H, W);
        dml_tensor_t out = tens(DML_DTYPE_F32, y, 4, D(1), P, OH, OW);
        CHECK_OK(run_op(DML_OP_MAX_POOL, &in, 1, &out, 1, at, 4));
        size_t bad = 0;
        for (int64_t p = 0; p < P; p++)
          for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
              float m = -INFINITY;
              for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) {
                  int64_t h = 2 * oh - 1 + i, w = 2 * ow - 1 + j;
                  if (h < 0 || h >= H || w < 0 || w >= W) continue;
                  float t = x[(p * H + h) * W + w];
                  m = t > m || t != t ? t : m;
                }
              if (memcmp(&m, &y[(p * OH + oh) * OW + ow], 4) != 0) bad++;
            }
        if (bad)
          fprintf(stderr,
                  "maxpool 3x3s2 %lldx%lld pe %lld ceil %lld data %d: %zu differ\n",
                  (long long)H, (long long)W, (long long)pe, (long long)cm, mode, bad);
        CHECK(bad == 0);
        free(x), free(y);
      }
}

static void test_maxpool_indices_dilation(void) {
  /* 1x1x3x4, kernel 2x2 stride 2 */
  float x[12] = {1, 9, 2, 3, 4, 5, 8, 6, 7, 0, 10, 11}, y[2];
  int64_t ind[2];
  int64_t ks[2] = {2, 2}, st[2] = {2, 2};
  dml_attr_t at[3] = {attr_ints("kernel_shape", ks, 2), attr_ints("strides", st, 2),
                      attr_i("storage_order", 1)};
  dml_tensor_t in = tens(DML_DTYPE_F32, x, 4, D(1), D(1), D(3), D(4));
  dml_tensor_t out[2] = {tens(DML_DTYPE_F32, y, 4, D(1), D(1), D(1), D(2)),
                         tens(DML_DTYPE_I64, ind, 4, D(1), D(1), D(1), D(2))};
  CHECK_OK(run_op(DML_OP_MAX_POOL, &in, 1, out, 2, at, 2));
  CHECK(y[0] == 9 && y[1] == 8 && ind[0] == 1 && ind[1] == 6);
  CHECK_OK(run_op(DML_OP_MAX_POOL, &in, 1, out, 2, at, 3));
  CHECK(ind[0] == 0 + 1 * 3 && ind[1] == 1 + 2 * 3); /* column-major: h + w*H */
  /* dilation 2 in W: window (0,0),(0,2),(1,0),(1,2) */
  int64_t dl[2] = {1, 2}, st1[2] = {1, 1};
  dml_attr_t ad[3] = {attr_ints("kernel_shape", ks, 2), attr_ints("strides", st1, 2),
                      attr_ints("dilations", dl, 2)};
  float yd[4];
  dml_tensor_t outd = tens(DML_DTYPE_F32, yd, 4, D(1), D(1), D(2), D(2));
  CHECK_OK(run_op(DML_OP_MAX_POOL, &in, 1, &outd, 1, ad, 3));
  CHECK(yd[0] == 8 && yd[1] == 9 && yd[2] == 10 && yd[3] == 11);
  /* 1-D maxpool on int8 */
  int8_t xi[5] = {-3, 4, -1, 7, 2}, yi[2];
  int64_t k1[1] = {2}, s1[1] = {2};
  dml_attr_t a1[2] = {attr_ints("kernel_shape", k1, 1), attr_ints("strides", s1, 1)};
  dml_tensor_t ini = tens(DML_DTYPE_I8, xi, 3, D(1), D(1), D(5)),
               outi = tens(DML_DTYPE_I8, yi, 3, D(1), D(1), D(2));
  CHECK_OK(run_op(DML_OP_MAX_POOL, &ini, 1, &outi, 1, a1, 2));
  CHECK(yi[0] == 4 && yi[1] == 7);
  /* i64 and u64 past 2^53 compare and copy exactly (they went through a
   * double: 2^53 + 1 lost to 2^53, UINT64_MAX came out as INT64_MAX) */
  int64_t x64[6] = {(1LL << 53), (1LL << 53) + 1, INT64_MAX - 1,
                    INT64_MAX,   INT64_MIN,       -5},
          y64[3], i64[3];
  dml_tensor_t in64 = tens(DML_DTYPE_I64, x64, 3, D(1), D(1), D(6)),
               out64[2] = {tens(DML_DTYPE_I64, y64, 3, D(1), D(1), D(3)),
                           tens(DML_DTYPE_I64, i64, 3, D(1), D(1), D(3))};
  CHECK_OK(run_op(DML_OP_MAX_POOL, &in64, 1, out64, 2, a1, 2));
  CHECK(y64[0] == (1LL << 53) + 1 && y64[1] == INT64_MAX && y64[2] == -5);
  CHECK(i64[0] == 1 && i64[1] == 3 && i64[2] == 5);
  uint64_t xu[6] = {UINT64_MAX, UINT64_MAX - 1, (1ULL << 63), (1ULL << 63) + 1, 0, 3},
           yu[3];
  dml_tensor_t inu = tens(DML_DTYPE_U64, xu, 3, D(1), D(1), D(6)),
               outu = tens(DML_DTYPE_U64, yu, 3, D(1), D(1), D(3));
  CHECK_OK(run_op(DML_OP_MAX_POOL, &inu, 1, &outu, 1, a1, 2));
  CHECK(yu[0] == UINT64_MAX && yu[1] == (1ULL << 63) + 1 && yu[2] == 3);
  /* SAME_UPPER average */
  dml_attr_t as[3] = {attr_ints("kernel_shape", ks, 2), attr_ints("strides", st, 2),
                      attr_s("auto_pad", "SAME_UPPER")};
  float ya[4];
  dml_tensor_t outa = tens(DML_DTYPE_F32, ya, 4, D(1), D(1), D(2), D(2));
  CHECK_OK(run_op(DML_OP_AVERAGE_POOL, &in, 1, &outa, 1, as, 3));
  CHECK_NEAR(ya[0], (1 + 9 + 4 + 5) / 4.0, 1e-6);
  CHECK_NEAR(ya[2], (7 + 0) / 2.0, 1e-6);
}

static void test_global_pool(void) {
  float x[2 * 3 * 5], y[6];
  for (int i = 0; i < 30; i++) x[i] = (float)((i * 7) % 11);
  dml_tensor_t in = tens(DML_DTYPE_F32, x, 4, D(2), D(3), D(1), D(5)),
               out = tens(DML_DTYPE_F32, y, 4, D(2), D(3), D(1), D(1));
  CHECK_OK(run_op(DML_OP_GLOBAL_AVERAGE_POOL, &in, 1, &out, 1, NULL, 0));
  for (int c = 0; c < 6; c++) {
    double s = 0;
    for (int i = 0; i < 5; i++) s += x[c * 5 + i];
    CHECK_NEAR(y[c], s / 5, 1e-6);
  }
  CHECK_OK(run_op(DML_OP_GLOBAL_MAX_POOL, &in, 1, &out, 1, NULL, 0));
  for (int c = 0; c < 6; c++) {
    float m = -INFINITY;
    for (int i = 0; i < 5; i++) m = fmaxf(m, x[c * 5 + i]);
    CHECK(y[c] == m);
  }
  /* Planes of 64 (MobileNet's 8x8): the AVX2 path (four planes at a time,
   * 21 planes: a tail of one) gives the portable sum's bits, edge values
   * included (NaN, inf, a plane of -0, one whose sum cancels to 0). */
  enum { NP = 21, SP = 64 };
  float *xb = (float *)malloc(NP * SP * sizeof(float)), yp[NP], yv[NP];
  for (int i = 0; i < NP * SP; i++) xb[i] = (float)((i * 37) % 101) * 0.013f - 0.6f;
  xb[5] = NAN, xb[SP + 3] = INFINITY, xb[2 * SP + 9] = -INFINITY;
  for (int i = 0; i < SP; i++)
    xb[3 * SP + i] = -0.0f, xb[4 * SP + i] = i % 2 ? 1e30f : -1e30f;
  dml_tensor_t inb = tens(DML_DTYPE_F32, xb, 4, D(3), D(7), D(8), D(8));
  dml_tensor_t outp = tens(DML_DTYPE_F32, yp, 4, D(3), D(7), D(1), D(1)),
               outv = tens(DML_DTYPE_F32, yv, 4, D(3), D(7), D(1), D(1));
  CHECK(dml_cpu_sgemm_set_kernel(1) == 0); /* portable: dml_cpu_sum_f32 */
  CHECK_OK(run_op(DML_OP_GLOBAL_AVERAGE_POOL, &inb, 1, &outp, 1, NULL, 0));
  CHECK(dml_cpu_sgemm_set_kernel(0) == 0); /* this machine's path */
  CHECK_OK(run_op(DML_OP_GLOBAL_AVERAGE_POOL, &inb, 1, &outv, 1, NULL, 0));
  CHECK(memcmp(yp, yv, sizeof yp) == 0);
  CHECK(isnan(yv[0]) && yv[1] == INFINITY && yv[2] == -INFINITY);
  CHECK(yv[3] == 0.0f && !signbit(yv[3]) && yv[4] == 0.0f);
  free(xb);
}

/* ---- Resize ----------------------------------------------------------- */

static void test_resize_nearest(void) {
  float x[4] = {1, 2, 3, 4}, y[16], sc[4] = {1, 1, 2, 2};
  dml_tensor_t in[3] = {tens(DML_DTYPE_F32, x, 4, D(1), D(1), D(2), D(2)), absent(),
                        tens(DML_DTYPE_F32, sc, 1, D(4))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 4, D(1), D(1), D(4), D(4));
  dml_attr_t at[2] = {attr_s("mode", "nearest"),
                      attr_s("coordinate_transformation_mode", "asymmetric")};
  CHECK_OK(run_op(DML_OP_RESIZE, in, 3, &out, 1, at, 2));
  float want[16] = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
  for (int i = 0; i < 16; i++) CHECK(y[i] == want[i]);
  /* half_pixel + round_prefer_ceil on 1-D 4 -> 3 (sizes input) */
  float x1[4] = {10, 20, 30, 40}, y1[3];
  int64_t sizes[1] = {3};
  dml_tensor_t in1[4] = {tens(DML_DTYPE_F32, x1, 1, D(4)), absent(), absent(),
                         tens(DML_DTYPE_I64, sizes, 1, D(1))};
  dml_tensor_t out1 = tens(DML_DTYPE_F32, y1, 1, D(3));
  dml_attr_t a1[2] = {attr_s("nearest_mode", "round_prefer_ceil"),
                      attr_s("coordinate_transformation_mode", "half_pixel")};
  CHECK_OK(run_op(DML_OP_RESIZE, in1, 4, &out1, 1, a1, 2));
  /* x_orig = (i+0.5)*4/3 - 0.5 = 0.1667, 1.5, 2.833 -> 0, 2, 3 */
  CHECK(y1[0] == 10 && y1[1] == 30 && y1[2] == 40);
  dml_attr_t a2[2] = {attr_s("nearest_mode", "round_prefer_floor"),
                      attr_s("coordinate_transformation_mode", "half_pixel")};
  CHECK_OK(run_op(DML_OP_RESIZE, in1, 4, &out1, 1, a2, 2));
  CHECK(y1[1] == 20);
  dml_attr_t a3[2] = {attr_s("nearest_mode", "ceil"),
                      attr_s("coordinate_transformation_mode", "align_corners")};
  CHECK_OK(run_op(DML_OP_RESIZE, in1, 4, &out1, 1, a3, 2)); /* 0, 1.5, 3 */
  CHECK(y1[0] == 10 && y1[1] == 30 && y1[2] == 40);
  dml_attr_t a4[2] = {attr_s("nearest_mode", "floor"),
                      attr_s("coordinate_transformation_mode", "align_corners")};
  CHECK_OK(run_op(DML_OP_RESIZE, in1, 4, &out1, 1, a4, 2));
  CHECK(y1[1] == 20);
}

static void test_resize_linear_cubic(void) {
  /* bilinear NCHW 2x2 -> 4x4, half_pixel (ONNX spec example
   * resize_upsample_scales_linear). */
  float x[4] = {1, 2, 3, 4}, y[16], sc[4] = {1, 1, 2, 2};
  dml_tensor_t in[3] = {tens(DML_DTYPE_F32, x, 4, D(1), D(1), D(2), D(2)), absent(),
                        tens(DML_DTYPE_F32, sc, 1, D(4))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 4, D(1), D(1), D(4), D(4));
  dml_attr_t at = attr_s("mode", "linear");
  CHECK_OK(run_op(DML_OP_RESIZE, in, 3, &out, 1, &at, 1));
  float want[16] = {1,    1.25f, 1.75f, 2,    1.5f, 1.75f, 2.25f, 2.5f,
                    2.5f, 2.75f, 3.25f, 3.5f, 3,    3.25f, 3.75f, 4};
  for (int i = 0; i < 16; i++) CHECK_NEAR(y[i], want[i], 1e-6);
  /* align_corners (spec example resize_upsample_scales_linear_align_corners) */
  dml_attr_t ac[2] = {attr_s("mode", "linear"),
                      attr_s("coordinate_transformation_mode", "align_corners")};
  CHECK_OK(run_op(DML_OP_RESIZE, in, 3, &out, 1, ac, 2));
  CHECK_NEAR(y[1], 1.3333333, 1e-6);
  CHECK_NEAR(y[5], 2.0, 1e-6);
  CHECK_NEAR(y[15], 4.0, 1e-6);
  /* cubic reproduces a linear ramp away from the edges; constant stays
   * constant everywhere */
  float r[8], ry[16];
  for (int i = 0; i < 8; i++) r[i] = (float)i * 2;
  float s2[1] = {2};
  dml_tensor_t inr[3] = {tens(DML_DTYPE_F32, r, 1, D(8)), absent(),
                         tens(DML_DTYPE_F32, s2, 1, D(1))};
  dml_tensor_t outr = tens(DML_DTYPE_F32, ry, 1, D(16));
  dml_attr_t cu[2] = {attr_s("mode", "cubic"),
                      attr_s("coordinate_transformation_mode", "asymmetric")};
  CHECK_OK(run_op(DML_OP_RESIZE, inr, 3, &outr, 1, cu, 2));
  for (int i = 2; i < 12; i++) CHECK_NEAR(ry[i], (double)i, 1e-5);
  for (int i = 0; i < 8; i++) r[i] = 3;
  dml_attr_t cu2[3] = {attr_s("mode", "cubic"), attr_i("exclude_outside", 1),
                       attr_f("cubic_coeff_a", -0.5)};
  CHECK_OK(run_op(DML_OP_RESIZE, inr, 3, &outr, 1, cu2, 3));
  for (int i = 0; i < 16; i++) CHECK_NEAR(ry[i], 3.0, 1e-5);
  /* tf_crop_and_resize with extrapolation */
  float roi[2] = {0.5f, 1.5f}, ty[3];
  for (int i = 0; i < 8; i++) r[i] = (float)i;
  dml_tensor_t intf[3] = {tens(DML_DTYPE_F32, r, 1, D(8)),
                          tens(DML_DTYPE_F32, roi, 1, D(2)), absent()};
  dml_tensor_t outtf = tens(DML_DTYPE_F32, ty, 1, D(3));
  dml_attr_t tf[3] = {attr_s("mode", "linear"),
                      attr_s("coordinate_transformation_mode", "tf_crop_and_resize"),
                      attr_f("extrapolation_value", -1)};
  CHECK_OK(run_op(DML_OP_RESIZE, intf, 3, &outtf, 1, tf, 3));
  /* x = 3.5 + i*3.5 -> 3.5, 7, 10.5 (outside) */
  CHECK_NEAR(ty[0], 3.5, 1e-6);
  CHECK_NEAR(ty[1], 7, 1e-6);
  CHECK(ty[2] == -1);
  dml_attr_t bad = attr_s("mode", "bogus");
  CHECK_ERROR(run_op(DML_OP_RESIZE, in, 3, &out, 1, &bad, 1), DML_STATUS_UNIMPLEMENTED,
              "bogus");
}

/* One output coordinate of 1-D cubic resampling, as in ONNX's reference
 * (onnx/backend/test/case/node/resize.py): the input edge-padded, four taps
 * around floor(x), weights from cubic_coeff_a, optionally renormalized over
 * the taps inside the input. */
static double ref_cubic_1d(const double *v, int64_t n, double x, double A, int excl) {
  double f = floor(x), t = x - f, w[4], sum = 0, acc = 0;
  double d[4] = {t + 1, t, 1 - t, 2 - t};
  for (int k = 0; k < 4; k++) {
    double a = fabs(d[k]);
    w[k] = a <= 1  ? ((A + 2) * a - (A + 3)) * a * a + 1
           : a < 2 ? ((A * a - 5 * A) * a + 8 * A) * a - 4 * A
                   : 0;
    int64_t i = (int64_t)f - 1 + k;
    if (excl && (i < 0 || i >= n)) w[k] = 0;
    sum += w[k];
  }
  for (int k = 0; k < 4; k++) {
    int64_t i = (int64_t)f - 1 + k;
    i = i < 0 ? 0 : i >= n ? n - 1 : i;
    acc += (excl ? w[k] / sum : w[k]) * v[i];
  }
  return acc;
}

/* x_original of output coordinate o (opset 13's formulas; len = the
 * resized length, scale * input length). */
static double ref_coord(const char *mode, int64_t o, int64_t in, double len) {
  double s = len / (double)in;
  if (!strcmp(mode, "align_corners")) return len == 1 ? 0 : o * (in - 1.0) / (len - 1);
  if (!strcmp(mode, "asymmetric")) return o / s;
  if (!strcmp(mode, "pytorch_half_pixel")) return len > 1 ? (o + 0.5) / s - 0.5 : 0;
  return (o + 0.5) / s - 0.5; /* half_pixel */
}

/* Cubic 2-D against the separable reference, for every coordinate mode,
 * non-integer size ratios (sizes 3x4 -> 5x7, 4x4 -> 3x2), cubic_coeff_a
 * and exclude_outside. */
static void test_resize_cubic_reference(void) {
  static const char *const modes[] = {"half_pixel", "align_corners", "asymmetric",
                                      "pytorch_half_pixel"};
  const int64_t shapes[2][4] = {{3, 4, 5, 7}, {4, 4, 3, 2}};
  for (int sh = 0; sh < 2; sh++) {
    int64_t ih = shapes[sh][0], iw = shapes[sh][1], oh = shapes[sh][2],
            ow = shapes[sh][3];
    float x[16], y[35];
    for (int64_t i = 0; i < ih * iw; i++) x[i] = (float)((i * 7) % 11) - 3.5f;
    int64_t sizes[4] = {1, 1, oh, ow};
    dml_tensor_t in[4] = {tens(DML_DTYPE_F32, x, 4, D(1), D(1), D(ih), D(iw)), absent(),
                          absent(), tens(DML_DTYPE_I64, sizes, 1, D(4))};
    dml_tensor_t out = tens(DML_DTYPE_F32, y, 4, D(1), D(1), D(oh), D(ow));
    for (int m = 0; m < 4; m++)
      for (int variant = 0; variant < 2; variant++) {
        double A = variant ? -0.5 : -0.75;
        dml_attr_t at[4] = {
            attr_s("mode", "cubic"), attr_s("coordinate_transformation_mode", modes[m]),
            attr_f("cubic_coeff_a", A), attr_i("exclude_outside", variant)};
        CHECK_OK(run_op(DML_OP_RESIZE, in, 4, &out, 1, at, 4));
        double rows[4][7], col[4];
        for (int64_t r = 0; r < ih; r++) {
          double v[4];
          for (int64_t c = 0; c < iw; c++) v[c] = x[r * iw + c];
          for (int64_t c = 0; c < ow; c++)
            rows[r][c] =
                ref_cubic_1d(v, iw, ref_coord(modes[m], c, iw, (double)ow), A, variant);
        }
        double worst = 0;
        for (int64_t c = 0; c < ow; c++) {
          for (int64_t r = 0; r < ih; r++) col[r] = rows[r][c];
          for (int64_t r = 0; r < oh; r++) {
            double want =
                ref_cubic_1d(col, ih, ref_coord(modes[m], r, ih, (double)oh), A, variant);
            worst = fmax(worst, fabs(y[r * ow + c] - want));
          }
        }
        if (worst > 1e-5)
          fprintf(stderr, "cubic %s A=%g exclude_outside=%d %lldx%lld: max error %g\n",
                  modes[m], A, variant, (long long)oh, (long long)ow, worst);
        CHECK(worst <= 1e-5);
      }
  }
}

/* With `scales`, the resized length of the coordinate formulas is
 * scale * input length, unrounded (ONNX reference; test
 * resize_downsample_scales_linear_align_corners: 4 * 0.6 = 2.4, so x = 1
 * maps to 3 / 1.4); tf_half_pixel_for_nn (opset 11) maps to (x + 0.5) /
 * scale. */
static void test_resize_scales_length(void) {
  float x[4] = {1, 2, 3, 4}, y[2], sc[1] = {0.6f};
  dml_tensor_t in[3] = {tens(DML_DTYPE_F32, x, 1, D(4)), absent(),
                        tens(DML_DTYPE_F32, sc, 1, D(1))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 1, D(2));
  dml_attr_t ac[2] = {attr_s("mode", "linear"),
                      attr_s("coordinate_transformation_mode", "align_corners")};
  CHECK_OK(run_op(DML_OP_RESIZE, in, 3, &out, 1, ac, 2));
  double len = 4 * (double)0.6f;
  CHECK_NEAR(y[0], 1, 1e-6);
  CHECK_NEAR(y[1], 1 + 3 / (len - 1), 1e-5); /* 3.142857 */
  float x2[4] = {10, 20, 30, 40}, y2[3];
  int64_t sizes[1] = {3};
  dml_tensor_t in2[4] = {tens(DML_DTYPE_F32, x2, 1, D(4)), absent(), absent(),
                         tens(DML_DTYPE_I64, sizes, 1, D(1))};
  dml_tensor_t out2 = tens(DML_DTYPE_F32, y2, 1, D(3));
  dml_attr_t nn[2] = {attr_s("mode", "nearest"),
                      attr_s("coordinate_transformation_mode", "tf_half_pixel_for_nn")};
  CHECK_OK(run_op(DML_OP_RESIZE, in2, 4, &out2, 1, nn, 2));
  /* (i + 0.5) * 4/3 = 0.667, 2, 3.333 -> round_prefer_floor: 1, 2, 3 */
  CHECK(y2[0] == 20 && y2[1] == 30 && y2[2] == 40);
}

/* ---- errors ----------------------------------------------------------- */

static void test_errors(void) {
  int32_t x[2] = {1, 2}, y[2];
  dml_tensor_t in = tens(DML_DTYPE_I32, x, 1, D(2)),
               out = tens(DML_DTYPE_I32, y, 1, D(2));
  CHECK_ERROR(run_op(DML_OP_EXP, &in, 1, &out, 1, NULL, 0), DML_STATUS_UNIMPLEMENTED,
              "rt.cpu.Exp");
  CHECK_ERROR(run_op(DML_OP_EXP, &in, 1, &out, 1, NULL, 0), DML_STATUS_UNIMPLEMENTED,
              "i32");
  CHECK_ERROR(run_op(DML_OP_EXP, &in, 1, &out, 1, NULL, 0), DML_STATUS_UNIMPLEMENTED,
              "test_node");
  CHECK_ERROR(run_op(DML_OP_SOFTMAX, &in, 1, &out, 1, NULL, 0), DML_STATUS_UNIMPLEMENTED,
              "rt.cpu.Softmax");
  CHECK_ERROR(run_op(DML_OP_BATCH_NORMALIZATION, &in, 1, &out, 1, NULL, 0),
              DML_STATUS_INVALID_ARGUMENT, "inputs");
  float f[2], g[3];
  dml_tensor_t fin = tens(DML_DTYPE_F32, f, 1, D(2)),
               fout = tens(DML_DTYPE_F32, g, 1, D(3));
  CHECK_ERROR(run_op(DML_OP_RELU, &fin, 1, &fout, 1, NULL, 0),
              DML_STATUS_INVALID_ARGUMENT, "[3]");
  dml_tensor_t nodata = tens(DML_DTYPE_F32, NULL, 1, D(2));
  CHECK_ERROR(run_op(DML_OP_RELU, &nodata, 1, &fout, 1, NULL, 0),
              DML_STATUS_INVALID_ARGUMENT, "no data");
  /* zero-size tensors are fine */
  dml_tensor_t z = tens(DML_DTYPE_F32, NULL, 2, D(0), D(3)),
               zo = tens(DML_DTYPE_F32, NULL, 2, D(0), D(3));
  CHECK_OK(run_op(DML_OP_RELU, &z, 1, &zo, 1, NULL, 0));
  dml_tensor_t zz[2] = {z, z};
  CHECK_OK(run_op(DML_OP_ADD, zz, 2, &zo, 1, NULL, 0));
  dml_tensor_t zmo = tens(DML_DTYPE_F32, NULL, 2, D(0), D(0));
  dml_tensor_t zm[2] = {z, tens(DML_DTYPE_F32, NULL, 2, D(3), D(0))};
  CHECK_OK(run_op(DML_OP_MATMUL, zm, 2, &zmo, 1, NULL, 0));
  /* unknown op */
  dml_cpu_call_t c;
  memset(&c, 0, sizeof c);
  c.op = DML_OP_COUNT_;
  CHECK_ERROR(dml_cpu_run(&c), DML_STATUS_UNIMPLEMENTED, "no CPU kernel");
}

int main(void) {
  RUN(test_every_op_supported);
  RUN(test_unary_f32);
  RUN(test_unary_attrs);
  RUN(test_round_sign_not);
  RUN(test_unary_other_floats);
  RUN(test_binary_broadcast_f32);
  RUN(test_binary_int_and_compare);
  RUN(test_variadic);
  RUN(test_where_prelu_clip);
  RUN(test_cast);
  RUN(test_cast_float8);
  RUN(test_batchnorm);
  RUN(test_layernorm);
  RUN(test_instancenorm);
  RUN(test_softmax);
  RUN(test_reduce);
  RUN(test_argmax);
  RUN(test_pool);
  RUN(test_maxpool_indices_dilation);
  RUN(test_maxpool_2x2_edges);
  RUN(test_maxpool_3x3s2_edges);
  RUN(test_global_pool);
  RUN(test_resize_nearest);
  RUN(test_resize_linear_cubic);
  RUN(test_resize_cubic_reference);
  RUN(test_resize_scales_length);
  RUN(test_errors);
  return dml_test_finish();
}
