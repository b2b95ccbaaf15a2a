/*
 * test_conv_input_grad.c — ConvInputGrad (ops.def), the input gradient of a
 * Conv over symbolic spatial dims: one package per attribute set, compiled
 * once with symbolic N, H, W (IR text: Y = Conv(X, W), dX =
 * ConvInputGrad(Y, W, X)), run at several sizes whose remainders differ
 * (the output_padding and end pads the kernel computes at run time), against
 * the definition dX[n, c, i] = sum_{m, o, k: i = o*s - pb + k*d} dY[n, m, o]
 * * W[m, c, k] in double (a direct loop here, with the forward Conv also
 * computed here). Strides 2 and 3, asymmetric pads, dilations, group 2,
 * auto_pad SAME_UPPER / SAME_LOWER / VALID; f64 within 1e-12 and f32 within
 * 1e-5 * max(1, sum |terms|). And autodiff: a Conv of stride 2 over a
 * symbolic H whose input needs its gradient builds ConvInputGrad, where the
 * same Conv with static dims builds ConvTranspose.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_dtype.h"
#include "dml_ir.h"
#include "dml_ir_text.h"
#include "dml_package_emit.h"
#include "dml_passes.h"
#include "dml_rt.h"
#include "dml_test.h"

typedef struct conv_case {
  const char *attrs; /* IR text attributes of Conv and ConvInputGrad */
  int64_t s[2], d[2], pads[4];
  int same; /* 0 explicit/VALID (pads above), 1 SAME_UPPER, 2 SAME_LOWER */
} conv_case_t;

enum { C = 4, M = 6, G = 2, KH = 3, KW = 2 };

static dml_rt_model_t *build(const char *dt, const char *attrs) {
  char text[2048];
  snprintf(text, sizeof text,
           "sym N <= 2\nsym H <= 24\nsym W <= 24\n"
           "func @f(%%x: %s[N,%d,H,W], %%w: %s[%d,%d,%d,%d]) -> (?[?]) {\n"
           "  %%y = Conv(%%x, %%w) {group = %d%s%s}\n"
           "  %%dx = ConvInputGrad(%%y, %%w, %%x) {group = %d%s%s}\n"
           "  return %%dx\n}\n",
           dt, C, dt, M, C / G, KH, KW, G, attrs[0] ? ", " : "", attrs, G,
           attrs[0] ? ", " : "", attrs);
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_ir_parse(text, strlen(text), "conv_input_grad.dmlir", &m));
  if (!m) return NULL;
  dml_pass_options_t o;
  memset(&o, 0, sizeof o);
  CHECK_OK(dml_pass_run_pipeline(m, dml_pass_default_pipeline(), &o));
  void *bytes = NULL;
  size_t size = 0;
  CHECK_OK(dml_package_emit_memory(m, NULL, &bytes, &size));
  dml_ir_module_release(m);
  dml_rt_model_t *model = NULL;
  if (bytes) CHECK_OK(dml_rt_model_load_memory(bytes, size, &model));
  free(bytes);
  return model;
}

/* The forward's begin pad and output extent of one dim (ONNX Conv-11). */
static void geo(const conv_case_t *cc, int i, int64_t in, int64_t k, int64_t *pb,
                int64_t *out) {
  int64_t ek = (k - 1) * cc->d[i] + 1, s = cc->s[i];
  if (cc->same) {
    *out = (in + s - 1) / s;
    int64_t total = (*out - 1) * s + ek - in;
    if (total < 0) total = 0;
    *pb = cc->same == 1 ? total / 2 : total - total / 2;
  } else {
    *pb = cc->pads[i];
    *out = (in + cc->pads[i] + cc->pads[2 + i] - ek) / s + 1;
  }
}

/* Runs case cc at N x C x H x W in dtype dt and compares with the loops. */
static void run_case(dml_rt_model_t *m, dml_dtype_t dt, const conv_case_t *cc, int64_t n,
                     int64_t h, int64_t w) {
  int64_t pbh, pbw, oh, ow;
  geo(cc, 0, h, KH, &pbh, &oh);
  geo(cc, 1, w, KW, &pbw, &ow);
  int64_t nx = n * C * h * w, nw = (int64_t)M * (C / G) * KH * KW;
  double *x = (double *)malloc((size_t)nx * sizeof(double));
  double *wt = (double *)malloc((size_t)nw * sizeof(double));
  double *y = (double *)calloc((size_t)(n * M * oh * ow), sizeof(double));
  double *dx = (double *)calloc((size_t)nx, sizeof(double));
  double *mag = (double *)calloc((size_t)nx, sizeof(double));
  size_t es = dml_dtype_size(dt);
  void *xb = malloc((size_t)nx * es), *wb = malloc((size_t)nw * es);
  uint32_t s = 7;
  for (int64_t i = 0; i < nx + nw; i++) {
    s = s * 1664525u + 1013904223u;
    double v = (double)(s >> 8) / 16777216.0 * 2 - 1;
    if (i < nx) {
      dml_store_f64(dt, xb, (size_t)i, v);
      x[i] = dml_load_f64(dt, xb, (size_t)i);
    } else {
      dml_store_f64(dt, wb, (size_t)(i - nx), v);
      wt[i - nx] = dml_load_f64(dt, wb, (size_t)(i - nx));
    }
  }
  /* y = Conv(x, w), then dx = the transpose applied to y */
  int64_t cg = C / G, mg = M / G;
  for (int pass = 0; pass < 2; pass++)
    for (int64_t b = 0; b < n; b++)
      for (int64_t mm = 0; mm < M; mm++)
        for (int64_t c = 0; c < cg; c++)
          for (int64_t yo = 0; yo < oh; yo++)
            for (int64_t xo = 0; xo < ow; xo++)
              for (int64_t ky = 0; ky < KH; ky++)
                for (int64_t kx = 0; kx < KW; kx++) {
                  int64_t iy = yo * cc->s[0] - pbh + ky * cc->d[0];
                  int64_t ix = xo * cc->s[1] - pbw + kx * cc->d[1];
                  if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                  int64_t ch = (mm / mg) * cg + c;
                  size_t xi = (size_t)(((b * C + ch) * h + iy) * w + ix);
                  size_t wi = (size_t)(((mm * cg + c) * KH + ky) * KW + kx);
                  size_t yi = (size_t)(((b * M + mm) * oh + yo) * ow + xo);
                  if (pass == 0) {
                    y[yi] += x[xi] * wt[wi];
                  } else {
                    dx[xi] += y[yi] * wt[wi];
                    mag[xi] += fabs(y[yi] * wt[wi]);
                  }
                }
  dml_rt_session_t *se = NULL;
  CHECK_OK(dml_rt_session_create(m, "cpu", &se));
  int64_t xd[4] = {n, C, h, w}, wd[4] = {M, C / G, KH, KW};
  dml_tensor_t tx = dml_test_tensor(dt, 4, xd, xb), tw = dml_test_tensor(dt, 4, wd, wb);
  CHECK_OK(dml_rt_session_set_input(se, 0, &tx));
  CHECK_OK(dml_rt_session_set_input(se, 1, &tw));
  CHECK_OK(dml_rt_session_run(se));
  dml_tensor_t o;
  memset(&o, 0, sizeof o);
  CHECK_OK(dml_rt_session_get_output(se, 0, &o));
  CHECK(o.rank == 4 && o.dims[2] == h && o.dims[3] == w);
  double worst = 0, tol = dt == DML_DTYPE_F64 ? 1e-12 : 1e-5;
  for (int64_t i = 0; o.data && i < nx; i++) {
    double e = fabs(dml_load_f64(dt, o.data, (size_t)i) - dx[i]) / fmax(1.0, mag[i]);
    if (e > worst) worst = e;
  }
  if (!(worst <= tol))
    fprintf(stderr, "  %s %s at %lldx%lld: scaled error %g > %g\n", cc->attrs,
            dml_dtype_name(dt), (long long)h, (long long)w, worst, tol);
  CHECK(worst <= tol);
  dml_rt_session_release(se);
  free(x), free(wt), free(y), free(dx), free(mag), free(xb), free(wb);
}

static void test_against_loops(void) {
  static const conv_case_t k_cases[] = {
      {"strides = [2, 2], pads = [1, 1, 0, 0]", {2, 2}, {1, 1}, {1, 1, 0, 0}, 0},
      {"strides = [2, 3], dilations = [2, 1], pads = [0, 1, 2, 0]",
       {2, 3},
       {2, 1},
       {0, 1, 2, 0},
       0},
      {"strides = [3, 2], auto_pad = \"SAME_UPPER\"", {3, 2}, {1, 1}, {0}, 1},
      {"strides = [2, 2], auto_pad = \"SAME_LOWER\"", {2, 2}, {1, 1}, {0}, 2},
      {"strides = [2, 2], auto_pad = \"VALID\"", {2, 2}, {1, 1}, {0}, 0},
      {"pads = [1, 0, 1, 1]", {1, 1}, {1, 1}, {1, 0, 1, 1}, 0},
  };
  static const int64_t k_sizes[][3] = {{1, 9, 10}, {2, 16, 11}, {1, 7, 7}, {2, 24, 23}};
  static const struct {
    const char *name;
    dml_dtype_t dt;
  } k_dt[] = {{"f64", DML_DTYPE_F64}, {"f32", DML_DTYPE_F32}};
  for (size_t t = 0; t < 2; t++)
    for (size_t i = 0; i < sizeof k_cases / sizeof k_cases[0]; i++) {
      dml_rt_model_t *m = build(k_dt[t].name, k_cases[i].attrs);
      CHECK(m != NULL);
      if (!m) continue;
      for (size_t z = 0; z < sizeof k_sizes / sizeof k_sizes[0]; z++)
        run_case(m, k_dt[t].dt, &k_cases[i], k_sizes[z][0], k_sizes[z][1], k_sizes[z][2]);
      dml_rt_model_release(m);
    }
}

/* The ops autodiff builds for dX of a stride-2 Conv over `xtype`. */
static int count_op(const char *xtype, dml_op_t op) {
  char text[1024];
  snprintf(text, sizeof text,
           "sym N <= 2\nsym H <= 24\n"
           "func @f(%%x: %s, %%w: f32[3,2,3,3]) -> (?[?]) {\n"
           "  %%y = Conv(%%x, %%w) {strides = [2, 2], pads = [1, 1, 0, 0]}\n"
           "  %%l = ReduceSum(%%y) {keepdims = 0}\n"
           "  %%g = Gradient(%%l, %%x)\n"
           "  return %%g\n}\n",
           xtype);
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_ir_parse(text, strlen(text), "vjp.dmlir", &m));
  if (!m) return -1;
  dml_pass_options_t o;
  memset(&o, 0, sizeof o);
  CHECK_OK(dml_pass_run_pipeline(m, dml_pass_default_pipeline(), &o));
  int n = 0;
  for (uint32_t f = 0; f < m->n_functions; f++)
    for (dml_ir_node_t *nd = m->functions[f]->first; nd; nd = nd->next) n += nd->op == op;
  dml_ir_module_release(m);
  return n;
}

static void test_autodiff_builds_it(void) {
  CHECK(count_op("f32[N,2,H,9]", DML_OP_CONV_INPUT_GRAD) == 1);
  CHECK(count_op("f32[N,2,H,9]", DML_OP_CONV_TRANSPOSE) == 0);
  CHECK(count_op("f32[N,2,11,9]", DML_OP_CONV_INPUT_GRAD) == 0);
  CHECK(count_op("f32[N,2,11,9]", DML_OP_CONV_TRANSPOSE) == 1);
}

int main(void) {
  RUN(test_against_loops);
  RUN(test_autodiff_builds_it);
  return dml_test_finish();
}
