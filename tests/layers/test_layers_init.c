/*
 * test_layers_init.c — parameter initialization of the layer API: the same
 * seed gives the same bytes, another seed other values, and the values
 * follow the documented distributions (PyTorch 1.13's defaults):
 *   Linear/Conv2d weight and bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in));
 *   Embedding ~ N(0, 1); norms' weight 1, bias 0, running mean 0, var 1.
 *
 * Tolerances (n samples): the sample mean within 5 standard errors
 * (5 sigma / sqrt(n)); the sample variance within 5 standard errors of the
 * variance estimate (sqrt((mu4 - sigma^4) / n): U(-b,b) has sigma^2 = b^2/3,
 * mu4 = b^4/5; N(0,1) has mu4 = 3); uniform values inside [-b, b]; the
 * fraction of normal values within one sigma 0.682689 within 5 standard
 * errors. A correct implementation fails such a check with probability
 * below 1e-6 per check; the seed is fixed, so the test is deterministic.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dml_layers.h"
#include "dml_test.h"

static float *param(dml_layers_model_t *m, const char *name, int64_t *out_n) {
  for (size_t i = 0; i < dml_layers_num_params(m); i++) {
    dml_layers_param_info_t pi;
    CHECK_OK(dml_layers_param_info(m, i, &pi));
    if (strcmp(pi.name, name)) continue;
    float *v = (float *)malloc((size_t)pi.numel * sizeof(float));
    if (v) CHECK_OK(dml_layers_get_param(m, name, v, (size_t)pi.numel * sizeof(float)));
    *out_n = pi.numel;
    return v;
  }
  CHECK(!"parameter not found");
  return NULL;
}

static void moments(const float *v, int64_t n, double *mean, double *var) {
  double s = 0, s2 = 0;
  for (int64_t i = 0; i < n; i++) s += v[i];
  *mean = s / (double)n;
  for (int64_t i = 0; i < n; i++) s2 += ((double)v[i] - *mean) * ((double)v[i] - *mean);
  *var = s2 / (double)n;
}

static void check_uniform(const float *v, int64_t n, double b) {
  int inside = 1;
  for (int64_t i = 0; i < n; i++) inside &= v[i] >= -b && v[i] <= b;
  CHECK(inside);
  double mean, var, sigma2 = b * b / 3, mu4 = b * b * b * b / 5;
  moments(v, n, &mean, &var);
  CHECK_NEAR(mean, 0, 5 * sqrt(sigma2 / (double)n));
  CHECK_NEAR(var, sigma2, 5 * sqrt((mu4 - sigma2 * sigma2) / (double)n));
  /* The extremes are reached: the range is the whole interval. */
  float lo = v[0], hi = v[0];
  for (int64_t i = 0; i < n; i++) {
    if (v[i] < lo) lo = v[i];
    if (v[i] > hi) hi = v[i];
  }
  CHECK(lo < -0.99 * b && hi > 0.99 * b);
}

static dml_layers_model_t *build(uint64_t seed) {
  dml_layers_model_t *m = NULL;
  dml_layers_model_options_t o = {.seed = seed, .batch_bound = 0};
  CHECK_OK(dml_layers_model_create(&o, &m));
  if (!m) return NULL;
  dml_layers_tensor_t *x = NULL, *h = NULL, *idx = NULL, *e = NULL;
  int64_t s4[4] = {-1, 6, 10, 10}, s2[2] = {-1, 3};
  CHECK_OK(dml_layers_input(m, "image", DML_DTYPE_F32, 4, s4, &x));
  CHECK_OK(dml_layers_input(m, "tokens", DML_DTYPE_I64, 2, s2, &idx));
  dml_layers_conv2d_options_t co = dml_layers_conv2d_defaults();
  co.groups = 2;
  CHECK_OK(dml_layers_conv2d(m, x, 400, 5, 3, &co, &h)); /* fan_in 3*5*3 = 45 */
  CHECK_OK(dml_layers_batch_norm(m, h, NULL, &h));
  CHECK_OK(dml_layers_global_avg_pool2d(m, h, &h));
  CHECK_OK(dml_layers_flatten(m, h, &h));
  CHECK_OK(dml_layers_dense(m, h, 1000, NULL, &h)); /* fan_in 400 */
  CHECK_OK(dml_layers_layer_norm(m, h, NULL, &h));
  CHECK_OK(dml_layers_embedding(m, idx, 1000, 100, NULL, &e));
  CHECK_OK(dml_layers_output(m, h, "y"));
  CHECK_OK(dml_layers_output(m, e, "e"));
  return m;
}

static void test_deterministic(void) {
  dml_layers_model_t *a = build(7), *b = build(7), *c = build(8);
  if (!a || !b || !c) goto done;
  CHECK(dml_layers_num_params(a) == 11);
  for (size_t i = 0; i < dml_layers_num_params(a); i++) {
    dml_layers_param_info_t pi;
    CHECK_OK(dml_layers_param_info(a, i, &pi));
    int64_t n = 0, n2 = 0, n3 = 0;
    float *va = param(a, pi.name, &n), *vb = param(b, pi.name, &n2),
          *vc = param(c, pi.name, &n3);
    if (va && vb && vc) {
      CHECK(n == n2 && !memcmp(va, vb, (size_t)n * sizeof(float)));
      /* Random parameters differ with the seed; constant ones do not. */
      int random = strstr(pi.name, "conv2d.") || strstr(pi.name, "dense.") ||
                   strstr(pi.name, "embedding.");
      CHECK(random == (memcmp(va, vc, (size_t)n * sizeof(float)) != 0));
    }
    free(va);
    free(vb);
    free(vc);
  }
  /* Each parameter has its own stream: the bias is not the weight's start
   * scaled. */
  int64_t nw = 0, nb = 0;
  float *w = param(a, "dense.weight", &nw), *bias = param(a, "dense.bias", &nb);
  if (w && bias) CHECK(memcmp(w, bias, 16 * sizeof(float)) != 0);
  free(w);
  free(bias);
done:
  dml_layers_model_release(a);
  dml_layers_model_release(b);
  dml_layers_model_release(c);
}

static void test_distributions(void) {
  dml_layers_model_t *m = build(0);
  if (!m) return;
  int64_t n = 0;
  float *v = param(m, "dense.weight", &n);
  CHECK(n == 400000);
  if (v) check_uniform(v, n, 1.0 / sqrt(400.0));
  free(v);
  v = param(m, "dense.bias", &n);
  CHECK(n == 1000);
  if (v) {
    int inside = 1;
    for (int64_t i = 0; i < n; i++) inside &= fabs(v[i]) <= 1.0 / sqrt(400.0);
    CHECK(inside);
  }
  free(v);
  v = param(m, "conv2d.weight", &n);
  CHECK(n == 400 * 3 * 5 * 3);
  if (v) check_uniform(v, n, 1.0 / sqrt(45.0));
  free(v);
  v = param(m, "embedding.weight", &n);
  CHECK(n == 100000);
  if (v) {
    double mean, var;
    moments(v, n, &mean, &var);
    CHECK_NEAR(mean, 0, 5 / sqrt((double)n));
    CHECK_NEAR(var, 1, 5 * sqrt(2 / (double)n));
    int64_t within = 0;
    for (int64_t i = 0; i < n; i++) within += fabs(v[i]) < 1;
    double p = 0.682689492137;
    CHECK_NEAR((double)within / (double)n, p, 5 * sqrt(p * (1 - p) / (double)n));
  }
  free(v);
  static const struct {
    const char *name;
    float value;
    uint32_t flags;
  } consts[6] = {{"batch_norm.weight", 1, DML_IR_GLOBAL_PARAM},
                 {"batch_norm.bias", 0, DML_IR_GLOBAL_PARAM},
                 {"batch_norm.running_mean", 0, DML_IR_GLOBAL_STATE},
                 {"batch_norm.running_var", 1, DML_IR_GLOBAL_STATE},
                 {"layer_norm.weight", 1, DML_IR_GLOBAL_PARAM},
                 {"layer_norm.bias", 0, DML_IR_GLOBAL_PARAM}};
  for (int k = 0; k < 6; k++) {
    v = param(m, consts[k].name, &n);
    int all = v != NULL;
    for (int64_t i = 0; v && i < n; i++) all &= v[i] == consts[k].value;
    CHECK(all);
    free(v);
    for (size_t i = 0; i < dml_layers_num_params(m); i++) {
      dml_layers_param_info_t pi;
      CHECK_OK(dml_layers_param_info(m, i, &pi));
      if (!strcmp(pi.name, consts[k].name)) CHECK(pi.flags == consts[k].flags);
    }
  }
  dml_layers_param_info_t pi;
  CHECK_OK(dml_layers_param_info(m, 0, &pi));
  CHECK(!strcmp(pi.name, "conv2d.weight") && !strcmp(pi.layer, "conv2d") &&
        pi.dtype == DML_DTYPE_F32 && pi.rank == 4 && pi.dims[0] == 400 &&
        pi.dims[1] == 3 && pi.dims[2] == 5 && pi.dims[3] == 3 &&
        pi.flags == DML_IR_GLOBAL_PARAM);
  int64_t tr = 0, nt = 0;
  dml_layers_param_counts(m, &tr, &nt);
  CHECK(tr == 18000 + 400 + 800 + 401000 + 2000 + 100000);
  CHECK(nt == 800);
  dml_layers_model_release(m);
}

int main(void) {
  RUN(test_deterministic);
  RUN(test_distributions);
  return dml_test_finish();
}
