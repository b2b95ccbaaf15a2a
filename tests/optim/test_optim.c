/*
 * test_optim.c — Adagrad, Momentum and Adam (ONNX ai.onnx.preview.training,
 * version 1): the CPU kernels against the operator spec's formulas written
 * out below (https://onnx.ai/onnx/operators/onnx_aionnxpreviewtraining_Adam.html
 * and the Adagrad/Momentum pages), shape inference, and the importer's
 * handling of the domain (models that import no default-domain opset;
 * Gradient refused with a reason).
 *
 * Tolerances: f64 outputs within 1e-12 of the double reference; f32 outputs
 * within 1e-6 * (1 + |want|) (one f32 rounding of a double computation).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dml_cpu.h"
#include "dml_ir.h"
#include "dml_ir_infer.h"
#include "dml_onnx.h"
#include "dml_test.h"

/* ---- the spec's formulas, per element ---------------------------------- */

static void ref_adagrad(double R, int64_t T, double x, double g, double h, double decay,
                        double eps, double nc, double *xn, double *hn) {
  double r = R / (1 + T * decay);
  double gr = nc * x + g;
  *hn = h + gr * gr;
  *xn = x - r * gr / (sqrt(*hn) + eps);
}

static void ref_momentum(double R, int64_t T, double x, double g, double v, double alpha,
                         double beta, double nc, int nesterov, double *xn, double *vn) {
  double gr = nc * x + g;
  double b = T > 0 ? beta : 1;
  *vn = alpha * v + b * gr;
  *xn = nesterov ? x - R * (gr + alpha * *vn) : x - R * *vn;
}

static void ref_adam(double R, int64_t T, double x, double g, double v, double h,
                     double alpha, double beta, double eps, double nc, double ncp,
                     double *xn, double *vn, double *hn) {
  double gr = nc * x + g;
  *vn = alpha * v + (1 - alpha) * gr;
  *hn = beta * h + (1 - beta) * gr * gr;
  double hs = sqrt(*hn) + eps;
  double r = T > 0 ? R * sqrt(1 - pow(beta, (double)T)) / (1 - pow(alpha, (double)T)) : R;
  *xn = (1 - ncp) * (x - r * *vn / hs);
}

/* ---- helpers ------------------------------------------------------------ */

#define MAXT 16 /* tensors per call */
#define NEL 5   /* elements of X_0; X_1 has 3 */

typedef struct {
  dml_tensor_t in[MAXT], out[MAXT];
  double data_in[MAXT][NEL];
  float data_in32[MAXT][NEL];
  double data_out[MAXT][NEL];
  float data_out32[MAXT][NEL];
  double r;
  float r32;
  int64_t t;
  dml_attr_t attrs[8];
  uint32_t n_attrs;
} call_t;

static int64_t numel_of(int k) {
  return k == 0 ? NEL : 3;
}

/* Fills a call with n tensors and `per` tensors per group (X, G, state...). */
static void setup(call_t *c, dml_dtype_t dt, uint32_t n, uint32_t per, double R,
                  int64_t T) {
  memset(c, 0, sizeof(*c));
  c->r = R;
  c->r32 = (float)R;
  c->t = T;
  c->in[0] =
      (dml_tensor_t){.dtype = dt,
                     .rank = 0,
                     .data = dt == DML_DTYPE_F32 ? (void *)&c->r32 : (void *)&c->r};
  c->in[1] = (dml_tensor_t){.dtype = DML_DTYPE_I64, .rank = 0, .data = &c->t};
  for (uint32_t k = 0; k < per; k++)
    for (uint32_t i = 0; i < n; i++) {
      uint32_t idx = 2 + k * n + i;
      dml_tensor_t *t = &c->in[idx];
      t->dtype = dt;
      t->rank = 1;
      t->dims[0] = numel_of((int)i);
      for (int64_t e = 0; e < t->dims[0]; e++) {
        /* X and G of either sign; the state (H, V, H) nonnegative for H. */
        double v = k == 0   ? 0.5 + 0.3 * (double)e - 0.2 * i
                   : k == 1 ? -1.0 + 0.45 * (double)e + 0.1 * i
                            : 0.2 + 0.7 * (double)e + 0.3 * i;
        c->data_in[idx][e] = v;
        c->data_in32[idx][e] = (float)v;
      }
      t->data = dt == DML_DTYPE_F32 ? (void *)c->data_in32[idx] : (void *)c->data_in[idx];
    }
  for (uint32_t o = 0; o < (per - 1) * n; o++) {
    dml_tensor_t *t = &c->out[o];
    t->dtype = dt;
    t->rank = 1;
    t->dims[0] = numel_of((int)(o % n));
    t->data = dt == DML_DTYPE_F32 ? (void *)c->data_out32[o] : (void *)c->data_out[o];
  }
}

static void attr_f(call_t *c, const char *name, double v) {
  c->attrs[c->n_attrs++] = (dml_attr_t){.name = name, .kind = DML_ATTR_FLOAT, .f = v};
}
static void attr_s(call_t *c, const char *name, const char *s) {
  c->attrs[c->n_attrs++] = (dml_attr_t){.name = name, .kind = DML_ATTR_STRING, .s = s};
}

static dml_status_t run(call_t *c, dml_op_t op, uint32_t n_in, uint32_t n_out) {
  dml_cpu_call_t k;
  memset(&k, 0, sizeof(k));
  k.op = op;
  k.node_name = "opt";
  k.inputs = c->in;
  k.n_inputs = n_in;
  k.outputs = c->out;
  k.n_outputs = n_out;
  k.attrs = c->attrs;
  k.n_attrs = c->n_attrs;
  return dml_cpu_run(&k);
}

/* Input value (as the kernel saw it) and output value. */
static double inv(const call_t *c, uint32_t idx, int64_t e) {
  return c->in[idx].dtype == DML_DTYPE_F32 ? (double)c->data_in32[idx][e]
                                           : c->data_in[idx][e];
}
static double outv(const call_t *c, uint32_t o, int64_t e) {
  return c->out[o].dtype == DML_DTYPE_F32 ? (double)c->data_out32[o][e]
                                          : c->data_out[o][e];
}
static double tol(const call_t *c, double want) {
  return c->out[0].dtype == DML_DTYPE_F32 ? 1e-6 * (1 + fabs(want)) : 1e-12;
}
static double rr(const call_t *c) {
  return c->in[0].dtype == DML_DTYPE_F32 ? (double)c->r32 : c->r;
}

/* ---- kernels ------------------------------------------------------------ */

static void test_adagrad(void) {
  static const dml_dtype_t dts[] = {DML_DTYPE_F32, DML_DTYPE_F64};
  for (int d = 0; d < 2; d++)
    for (uint32_t n = 1; n <= 2; n++)
      for (int64_t T = 0; T <= 3; T += 3) {
        call_t c;
        setup(&c, dts[d], n, 3, 0.1, T);
        attr_f(&c, "decay_factor", 0.1);
        attr_f(&c, "epsilon", 1e-5);
        attr_f(&c, "norm_coefficient", 0.001);
        CHECK_OK(run(&c, DML_OP_ADAGRAD, 2 + 3 * n, 2 * n));
        for (uint32_t i = 0; i < n; i++)
          for (int64_t e = 0; e < numel_of((int)i); e++) {
            double xn, hn;
            ref_adagrad(rr(&c), T, inv(&c, 2 + i, e), inv(&c, 2 + n + i, e),
                        inv(&c, 2 + 2 * n + i, e), 0.1, 1e-5, 0.001, &xn, &hn);
            CHECK_NEAR(outv(&c, i, e), xn, tol(&c, xn));
            CHECK_NEAR(outv(&c, n + i, e), hn, tol(&c, hn));
          }
      }
  /* Defaults: decay_factor 0, epsilon 1e-6, norm_coefficient 0. */
  call_t c;
  setup(&c, DML_DTYPE_F64, 1, 3, 0.5, 7);
  CHECK_OK(run(&c, DML_OP_ADAGRAD, 5, 2));
  double xn, hn;
  ref_adagrad(0.5, 7, inv(&c, 2, 1), inv(&c, 3, 1), inv(&c, 4, 1), 0, 1e-6, 0, &xn, &hn);
  CHECK_NEAR(outv(&c, 0, 1), xn, 1e-12);
  CHECK_NEAR(outv(&c, 1, 1), hn, 1e-12);
}

static void test_momentum(void) {
  static const dml_dtype_t dts[] = {DML_DTYPE_F32, DML_DTYPE_F64};
  for (int d = 0; d < 2; d++)
    for (int nest = 0; nest < 2; nest++)
      for (uint32_t n = 1; n <= 2; n++)
        for (int64_t T = 0; T <= 1; T++) {
          call_t c;
          setup(&c, dts[d], n, 3, 0.1, T);
          attr_f(&c, "alpha", 0.95);
          attr_f(&c, "beta", 0.85);
          attr_f(&c, "norm_coefficient", 0.01);
          attr_s(&c, "mode", nest ? "nesterov" : "standard");
          CHECK_OK(run(&c, DML_OP_MOMENTUM, 2 + 3 * n, 2 * n));
          for (uint32_t i = 0; i < n; i++)
            for (int64_t e = 0; e < numel_of((int)i); e++) {
              double xn, vn;
              ref_momentum(rr(&c), T, inv(&c, 2 + i, e), inv(&c, 2 + n + i, e),
                           inv(&c, 2 + 2 * n + i, e), 0.95, 0.85, 0.01, nest, &xn, &vn);
              CHECK_NEAR(outv(&c, i, e), xn, tol(&c, xn));
              CHECK_NEAR(outv(&c, n + i, e), vn, tol(&c, vn));
            }
        }
}

static void test_adam(void) {
  static const dml_dtype_t dts[] = {DML_DTYPE_F32, DML_DTYPE_F64};
  for (int d = 0; d < 2; d++)
    for (uint32_t n = 1; n <= 2; n++)
      for (int64_t T = 0; T <= 5; T += 5) {
        call_t c;
        setup(&c, dts[d], n, 4, 0.1, T);
        attr_f(&c, "alpha", 0.95);
        attr_f(&c, "beta", 0.9);
        attr_f(&c, "epsilon", 1e-2);
        attr_f(&c, "norm_coefficient", 0.001);
        attr_f(&c, "norm_coefficient_post", 0.02);
        CHECK_OK(run(&c, DML_OP_ADAM, 2 + 4 * n, 3 * n));
        for (uint32_t i = 0; i < n; i++)
          for (int64_t e = 0; e < numel_of((int)i); e++) {
            double xn, vn, hn;
            ref_adam(rr(&c), T, inv(&c, 2 + i, e), inv(&c, 2 + n + i, e),
                     inv(&c, 2 + 2 * n + i, e), inv(&c, 2 + 3 * n + i, e), 0.95, 0.9,
                     1e-2, 0.001, 0.02, &xn, &vn, &hn);
            CHECK_NEAR(outv(&c, i, e), xn, tol(&c, xn));
            CHECK_NEAR(outv(&c, n + i, e), vn, tol(&c, vn));
            CHECK_NEAR(outv(&c, 2 * n + i, e), hn, tol(&c, hn));
          }
      }
  /* Defaults: alpha 0.9, beta 0.999, epsilon 1e-6, both norms 0. */
  call_t c;
  setup(&c, DML_DTYPE_F64, 1, 4, 0.01, 2);
  CHECK_OK(run(&c, DML_OP_ADAM, 6, 3));
  double xn, vn, hn;
  ref_adam(0.01, 2, inv(&c, 2, 3), inv(&c, 3, 3), inv(&c, 4, 3), inv(&c, 5, 3), 0.9,
           0.999, 1e-6, 0, 0, &xn, &vn, &hn);
  CHECK_NEAR(outv(&c, 0, 3), xn, 1e-12);
  CHECK_NEAR(outv(&c, 1, 3), vn, 1e-12);
  CHECK_NEAR(outv(&c, 2, 3), hn, 1e-12);
}

static void test_kernel_errors(void) {
  call_t c;
  setup(&c, DML_DTYPE_F32, 1, 3, 0.1, 0);
  attr_f(&c, "alpha", 0.9);
  attr_f(&c, "beta", 0.9);
  attr_f(&c, "norm_coefficient", 0);
  CHECK_ERROR(run(&c, DML_OP_MOMENTUM, 5, 2), DML_STATUS_INVALID_ARGUMENT,
              "attribute 'mode' is required");
  attr_s(&c, "mode", "heavy-ball");
  CHECK_ERROR(run(&c, DML_OP_MOMENTUM, 5, 2), DML_STATUS_INVALID_ARGUMENT,
              "mode 'heavy-ball' must be 'standard' or 'nesterov'");
  setup(&c, DML_DTYPE_F32, 1, 4, 0.1, 0);
  c.in[6] = c.in[5];
  CHECK_ERROR(run(&c, DML_OP_ADAM, 7, 3), DML_STATUS_INVALID_ARGUMENT,
              "expected R, T, then 4 groups");
  c.out[3] = c.out[2];
  CHECK_ERROR(run(&c, DML_OP_ADAM, 6, 4), DML_STATUS_INVALID_ARGUMENT,
              "4 outputs for 1 optimized tensors: expected 3");
  c.in[3].dims[0] = 4; /* G's shape differs from X's */
  CHECK_ERROR(run(&c, DML_OP_ADAM, 6, 3), DML_STATUS_INVALID_ARGUMENT,
              "input 3 must have the dtype and shape of X_0");
  setup(&c, DML_DTYPE_F32, 1, 3, 0.1, 0);
  c.in[1].dtype = DML_DTYPE_F32;
  CHECK_ERROR(run(&c, DML_OP_ADAGRAD, 5, 2), DML_STATUS_INVALID_ARGUMENT,
              "T (input 1) must be an integer scalar");
}

/* ---- shape inference ---------------------------------------------------- */

static void test_infer(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_ir_module_create(&m));
  dml_ir_function_t *f = NULL;
  CHECK_OK(dml_ir_function_create(m, "forward", &f));
  dml_type_t tr = dml_type_static(DML_DTYPE_F32, 0, NULL);
  dml_type_t tt = dml_type_static(DML_DTYPE_I64, 0, NULL);
  dml_type_t ta = dml_type_static(DML_DTYPE_F32, 2, (const int64_t[]){3, 4});
  dml_type_t tb = dml_type_static(DML_DTYPE_F32, 1, (const int64_t[]){7});
  dml_type_t td = dml_type_static(DML_DTYPE_F64, 1, (const int64_t[]){7});
  dml_ir_value_t *r, *t, *a, *b, *d;
  CHECK_OK(dml_ir_function_add_arg(f, "r", &tr, &r));
  CHECK_OK(dml_ir_function_add_arg(f, "t", &tt, &t));
  CHECK_OK(dml_ir_function_add_arg(f, "a", &ta, &a));
  CHECK_OK(dml_ir_function_add_arg(f, "b", &tb, &b));
  CHECK_OK(dml_ir_function_add_arg(f, "d", &td, &d));
  /* Adam over (a, b): outputs a, b, a, b, a, b typed. */
  dml_ir_value_t *in[10] = {r, t, a, b, a, b, a, b, a, b};
  dml_ir_node_t *n = NULL;
  CHECK_OK(dml_ir_node_create(f, DML_OP_ADAM, "adam", 10, in, 6, NULL, &n));
  CHECK_OK(dml_ir_infer_node(m, n));
  for (uint32_t o = 0; n && o < 6; o++) {
    const dml_type_t *want = o % 2 ? &tb : &ta;
    CHECK(n->outputs[o]->type.dtype == DML_DTYPE_F32);
    CHECK(n->outputs[o]->type.rank == want->rank);
    CHECK(n->outputs[o]->type.dims[0].value == want->dims[0].value);
  }
  /* Momentum needs its attributes and a known mode. */
  dml_ir_value_t *in3[5] = {r, t, b, b, b};
  CHECK_OK(dml_ir_node_create(f, DML_OP_MOMENTUM, "mom", 5, in3, 2, NULL, &n));
  CHECK_ERROR(dml_ir_infer_node(m, n), DML_STATUS_INVALID_ARGUMENT,
              "attribute 'alpha' is required");
  CHECK_OK(dml_ir_node_set_attr_float(n, "alpha", 0.9));
  CHECK_OK(dml_ir_node_set_attr_float(n, "beta", 0.9));
  CHECK_OK(dml_ir_node_set_attr_float(n, "norm_coefficient", 0));
  CHECK_OK(dml_ir_node_set_attr_string(n, "mode", "sideways"));
  CHECK_ERROR(dml_ir_infer_node(m, n), DML_STATUS_INVALID_ARGUMENT,
              "mode \"sideways\" must be \"standard\" or \"nesterov\"");
  CHECK_OK(dml_ir_node_set_attr_string(n, "mode", "nesterov"));
  CHECK_OK(dml_ir_infer_node(m, n));
  /* Mixed dtypes, wrong group counts, non-scalar R. */
  dml_ir_value_t *in4[5] = {r, t, b, d, b};
  CHECK_OK(dml_ir_node_create(f, DML_OP_ADAGRAD, "ada", 5, in4, 2, NULL, &n));
  CHECK_ERROR(dml_ir_infer_node(m, n), DML_STATUS_INVALID_ARGUMENT,
              "input 3 (f64[7]) must have the dtype and shape of X_0 (f32[7])");
  dml_ir_value_t *in5[6] = {r, t, b, b, b, b};
  CHECK_OK(dml_ir_node_create(f, DML_OP_ADAGRAD, "ada2", 6, in5, 2, NULL, &n));
  CHECK_ERROR(dml_ir_infer_node(m, n), DML_STATUS_INVALID_ARGUMENT,
              "6 inputs: expected R, T, then 3 groups of n tensors (X, G, H)");
  dml_ir_value_t *in6[5] = {b, t, b, b, b};
  CHECK_OK(dml_ir_node_create(f, DML_OP_ADAGRAD, "ada3", 5, in6, 2, NULL, &n));
  CHECK_ERROR(dml_ir_infer_node(m, n), DML_STATUS_INVALID_ARGUMENT,
              "R (input 0) must be a float scalar");
  dml_ir_module_release(m);
}

/* ---- ONNX import of the training-preview domain -------------------------- */

static const char *testdata(const char *rel, char *buf, size_t cap) {
  snprintf(buf, cap, "/usr/share/libonnx-testdata/data/%s/model.onnx", rel);
  return access(buf, R_OK) == 0 ? buf : NULL;
}

static int count_op(const dml_ir_module_t *m, dml_op_t op) {
  int k = 0;
  for (uint32_t i = 0; i < m->n_functions; i++)
    for (const dml_ir_node_t *n = m->functions[i]->first; n; n = n->next)
      k += n->op == op;
  return k;
}

static void test_import(void) {
  CHECK(dml_onnx_domain_op_is_supported("ai.onnx.preview.training", "Adam", 1));
  CHECK(dml_onnx_domain_op_is_supported("ai.onnx.preview.training", "Momentum", 1));
  CHECK(dml_onnx_domain_op_is_supported("ai.onnx.preview.training", "Adagrad", 1));
  CHECK(!dml_onnx_domain_op_is_supported("ai.onnx.preview.training", "Adam", 2));
  CHECK(dml_onnx_domain_op_is_supported("ai.onnx.preview.training", "Gradient", 1));
  CHECK(!dml_onnx_domain_op_is_supported("ai.onnx.preview.training", "Gradient", 2));
  CHECK(!dml_onnx_domain_op_is_supported("", "Adam", 17));
  CHECK(dml_onnx_domain_op_is_supported("ai.onnx", "Add", 13));
  char buf[512];
  const char *p = testdata("node/test_adam_multiple", buf, sizeof(buf));
  if (!p) {
    printf("skip: libonnx-testdata not installed\n");
    return;
  }
  /* No default-domain opset_import: every node is in the training domain. */
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_onnx_import_file(p, NULL, &m));
  if (m) {
    CHECK(count_op(m, DML_OP_ADAM) == 1);
    dml_ir_module_release(m);
    m = NULL;
  }
  p = testdata("node/test_nesterov_momentum", buf, sizeof(buf));
  CHECK_OK(dml_onnx_import_file(p, NULL, &m));
  if (m) {
    CHECK(count_op(m, DML_OP_MOMENTUM) == 1);
    dml_ir_module_release(m);
    m = NULL;
  }
  /* Gradient: one compile-only Gradient node (the expand-gradient pass
   * lowers it; tests/onnx/test_onnx_gradient.c). */
  p = testdata("simple/test_gradient_of_add", buf, sizeof(buf));
  if (p) {
    CHECK_OK(dml_onnx_import_file(p, NULL, &m));
    if (m) CHECK(count_op(m, DML_OP_GRADIENT) == 1);
    dml_ir_module_release(m);
    m = NULL;
  }
}

int main(void) {
  RUN(test_adagrad);
  RUN(test_momentum);
  RUN(test_adam);
  RUN(test_kernel_errors);
  RUN(test_infer);
  RUN(test_import);
  return dml_test_finish();
}
