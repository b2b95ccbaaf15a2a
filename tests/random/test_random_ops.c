/*
 * test_random_ops.c — the random kernels (cpu_random.c): determinism per
 * (seed, step, node), the `seed` attribute, distributions with stated
 * tolerances, Bernoulli, Multinomial, and Dropout's scaling and mask.
 */
#include <math.h>

#include "cpu_test_util.h"
#include "dml_philox.h"

static dml_status_t run_rng(dml_op_t op, const dml_tensor_t *in, uint32_t nin,
                            dml_tensor_t *out, uint32_t nout, const dml_attr_t *attrs,
                            uint32_t nattrs, uint64_t seed, uint64_t step,
                            uint32_t node) {
  dml_cpu_call_t c = cpu_call(op, "rng", in, nin, out, nout, attrs, nattrs);
  c.rng_seed = seed;
  c.rng_counter = step;
  c.rng_stream = node;
  return dml_cpu_run(&c);
}

#define N 40000

static float g_a[N], g_b[N];

static void test_uniform_normal(void) {
  int64_t shape[2] = {200, 200};
  dml_attr_t at[3] = {attr_ints("shape", shape, 2), attr_f("low", -2.0),
                      attr_f("high", 3.0)};
  dml_tensor_t ya = tens(DML_DTYPE_F32, g_a, 2, D(200), D(200)),
               yb = tens(DML_DTYPE_F32, g_b, 2, D(200), D(200));
  CHECK_OK(run_rng(DML_OP_RANDOM_UNIFORM, NULL, 0, &ya, 1, at, 3, 1, 5, 2));
  CHECK_OK(run_rng(DML_OP_RANDOM_UNIFORM, NULL, 0, &yb, 1, at, 3, 1, 5, 2));
  CHECK(memcmp(g_a, g_b, sizeof g_a) == 0); /* same (seed, step, node) */
  /* The values are the stream's: element i is low + u_i * (high - low). */
  dml_philox_stream_t s;
  dml_philox_stream_init(&s, 1, 5, 2);
  CHECK(g_a[7] == (float)(-2.0 + dml_philox_uniform_f32(&s, 7) * 5.0));
  double sum = 0, lo = 1e9, hi = -1e9;
  for (int i = 0; i < N; i++) {
    sum += g_a[i];
    lo = g_a[i] < lo ? g_a[i] : lo, hi = g_a[i] > hi ? g_a[i] : hi;
  }
  CHECK(lo >= -2.0 && hi < 3.0);
  /* mean 0.5, standard error 5/sqrt(12 N); 5 standard errors. */
  CHECK_NEAR(sum / N, 0.5, 5 * 5 / sqrt(12.0 * N));
  CHECK_OK(run_rng(DML_OP_RANDOM_UNIFORM, NULL, 0, &yb, 1, at, 3, 1, 6, 2));
  CHECK(memcmp(g_a, g_b, sizeof g_a) != 0); /* next step: fresh numbers */
  CHECK_OK(run_rng(DML_OP_RANDOM_UNIFORM, NULL, 0, &yb, 1, at, 3, 1, 5, 3));
  CHECK(memcmp(g_a, g_b, sizeof g_a) != 0); /* another node */
  /* A `seed` attribute overrides the session seed. */
  dml_attr_t as[2] = {attr_ints("shape", shape, 2), attr_f("seed", 9.0)};
  CHECK_OK(run_rng(DML_OP_RANDOM_UNIFORM, NULL, 0, &ya, 1, as, 2, 1, 0, 0));
  CHECK_OK(run_rng(DML_OP_RANDOM_UNIFORM, NULL, 0, &yb, 1, as, 2, 77, 0, 0));
  CHECK(memcmp(g_a, g_b, sizeof g_a) == 0);

  /* RandomNormalLike: mean 1, scale 2; mean within 5 standard errors
   * (2/sqrt(N)), variance 4 within 5 * 4 sqrt(2/N). */
  dml_attr_t an[2] = {attr_f("mean", 1.0), attr_f("scale", 2.0)};
  dml_tensor_t like = tens(DML_DTYPE_F32, g_b, 2, D(200), D(200));
  CHECK_OK(run_rng(DML_OP_RANDOM_NORMAL_LIKE, &like, 1, &ya, 1, an, 2, 3, 0, 0));
  double m = 0, v = 0;
  for (int i = 0; i < N; i++) m += g_a[i];
  m /= N;
  for (int i = 0; i < N; i++) v += (g_a[i] - m) * (g_a[i] - m);
  v /= N;
  CHECK_NEAR(m, 1.0, 5 * 2 / sqrt((double)N));
  CHECK_NEAR(v, 4.0, 5 * 4 * sqrt(2.0 / N));
  /* f64 output */
  static double d[1000];
  dml_tensor_t yd = tens(DML_DTYPE_F64, d, 1, D(1000));
  int64_t sh1 = 1000;
  dml_attr_t ad = attr_ints("shape", &sh1, 1);
  CHECK_OK(run_rng(DML_OP_RANDOM_NORMAL, NULL, 0, &yd, 1, &ad, 1, 0, 0, 0));
  dml_philox_stream_t s0;
  dml_philox_stream_init(&s0, 0, 0, 0);
  CHECK(d[1] == dml_philox_normal_f64(&s0, 1));
  dml_tensor_t yi = tens(DML_DTYPE_I32, g_a, 1, D(1000));
  CHECK_ERROR(run_rng(DML_OP_RANDOM_NORMAL, NULL, 0, &yi, 1, &ad, 1, 0, 0, 0),
              DML_STATUS_UNIMPLEMENTED, "output dtype i32");
}

static void test_bernoulli(void) {
  static double p[N];
  static uint8_t y[N];
  for (int i = 0; i < N; i++) p[i] = (i % 5) * 0.25; /* 0, .25, .5, .75, 1 */
  dml_tensor_t in = tens(DML_DTYPE_F64, p, 1, D(N)),
               out = tens(DML_DTYPE_BOOL, y, 1, D(N));
  CHECK_OK(run_rng(DML_OP_BERNOULLI, &in, 1, &out, 1, NULL, 0, 11, 0, 0));
  int64_t ones[5] = {0};
  for (int i = 0; i < N; i++) {
    CHECK(y[i] == 0 || y[i] == 1);
    ones[i % 5] += y[i];
  }
  CHECK(ones[0] == 0 && ones[4] == N / 5); /* p = 0 and p = 1 are exact */
  /* Each class has N/5 draws: frequency within 5 sqrt(p(1-p)/(N/5)). */
  for (int k = 1; k < 4; k++)
    CHECK_NEAR((double)ones[k] / (N / 5), k * 0.25,
               5 * sqrt(k * 0.25 * (1 - k * 0.25) / (N / 5)));
}

static void test_multinomial(void) {
  /* logits log(1), log(2), log(7): P = 0.1, 0.2, 0.7. */
  float x[3] = {0.0f, (float)log(2.0), (float)log(7.0)};
  static int64_t y[20000];
  dml_attr_t a[2] = {attr_i("sample_size", 20000), attr_i("dtype", 7)};
  dml_tensor_t in = tens(DML_DTYPE_F32, x, 2, D(1), D(3)),
               out = tens(DML_DTYPE_I64, y, 2, D(1), D(20000));
  CHECK_OK(run_rng(DML_OP_MULTINOMIAL, &in, 1, &out, 1, a, 2, 0, 0, 0));
  int64_t cnt[3] = {0};
  for (int i = 0; i < 20000; i++) {
    CHECK(y[i] >= 0 && y[i] < 3);
    if (y[i] >= 0 && y[i] < 3) cnt[y[i]]++;
  }
  const double want[3] = {0.1, 0.2, 0.7};
  for (int k = 0; k < 3; k++)
    CHECK_NEAR(cnt[k] / 20000.0, want[k], 5 * sqrt(want[k] * (1 - want[k]) / 20000));
}

/* Dropout-13 training: y is 0 or x / (1 - ratio), the mask is 1 exactly
 * where y was kept, the kept fraction is within 5 sqrt(r(1-r)/N) of 1 - r;
 * ratio 0 is the identity; the same step gives the same mask. */
static void test_dropout(void) {
  static float x[N], y[N], y2[N];
  static uint8_t mask[N], mask2[N];
  for (int i = 0; i < N; i++) x[i] = 1.0f + (float)(i % 17);
  float ratio = 0.3f;
  uint8_t tm = 1;
  dml_tensor_t in[3] = {tens(DML_DTYPE_F32, x, 1, D(N)), tens(DML_DTYPE_F32, &ratio, 0),
                        tens(DML_DTYPE_BOOL, &tm, 0)};
  dml_tensor_t out[2] = {tens(DML_DTYPE_F32, y, 1, D(N)),
                         tens(DML_DTYPE_BOOL, mask, 1, D(N))};
  CHECK_OK(run_rng(DML_OP_DROPOUT, in, 3, out, 2, NULL, 0, 0, 4, 1));
  int64_t kept = 0;
  int bad = 0;
  for (int i = 0; i < N; i++) {
    float want = mask[i] ? x[i] / (1.0f - ratio) : 0.0f;
    bad += fabsf(y[i] - want) > 1e-5f * fabsf(want) || (mask[i] > 1);
    kept += mask[i];
  }
  CHECK(bad == 0);
  CHECK_NEAR((double)kept / N, 0.7, 5 * sqrt(0.3 * 0.7 / N));
  dml_tensor_t out2[2] = {tens(DML_DTYPE_F32, y2, 1, D(N)),
                          tens(DML_DTYPE_BOOL, mask2, 1, D(N))};
  CHECK_OK(run_rng(DML_OP_DROPOUT, in, 3, out2, 2, NULL, 0, 0, 4, 1));
  CHECK(memcmp(mask, mask2, sizeof mask) == 0 && memcmp(y, y2, sizeof y) == 0);
  CHECK_OK(run_rng(DML_OP_DROPOUT, in, 3, out2, 2, NULL, 0, 0, 5, 1));
  CHECK(memcmp(mask, mask2, sizeof mask) != 0);
  /* Dropout-12/13's int `seed` attribute fixes the stream's seed. */
  dml_attr_t sa = attr_i("seed", 3);
  CHECK_OK(run_rng(DML_OP_DROPOUT, in, 3, out, 2, &sa, 1, 100, 0, 1));
  CHECK_OK(run_rng(DML_OP_DROPOUT, in, 3, out2, 2, &sa, 1, 200, 0, 1));
  CHECK(memcmp(mask, mask2, sizeof mask) == 0);
  ratio = 0.0f;
  CHECK_OK(run_rng(DML_OP_DROPOUT, in, 3, out, 2, NULL, 0, 0, 0, 0));
  CHECK(memcmp(x, y, sizeof x) == 0);
  for (int i = 0; i < N; i++) bad += mask[i] != 1;
  CHECK(bad == 0);
  ratio = 1.0f;
  CHECK_OK(run_rng(DML_OP_DROPOUT, in, 3, out, 2, NULL, 0, 0, 0, 0));
  for (int i = 0; i < N; i++) bad += y[i] != 0 || mask[i] != 0;
  CHECK(bad == 0);
  ratio = -0.5f;
  CHECK_ERROR(run_rng(DML_OP_DROPOUT, in, 3, out, 2, NULL, 0, 0, 0, 0),
              DML_STATUS_INVALID_ARGUMENT, "ratio -0.5 is outside [0, 1]");
}

int main(void) {
  RUN(test_uniform_normal);
  RUN(test_bernoulli);
  RUN(test_multinomial);
  RUN(test_dropout);
  return dml_test_finish();
}
