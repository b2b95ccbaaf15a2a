/*
 * test_philox.c — Philox4x32-10 against Random123's known answers, the
 * stream scheme's determinism, and the uniform/normal distributions.
 */
#include <math.h>
#include <string.h>

#include "dml_philox.h"
#include "dml_test.h"

/* Random123 1.x, tests/kat_vectors, the "philox4x32 10" lines: counter,
 * key, expected output (Salmon et al., SC'11). */
static void test_known_answers(void) {
  static const struct {
    uint32_t ctr[4], key[2], want[4];
  } kat[3] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (int k = 0; k < 3; k++) {
    uint32_t out[4];
    dml_philox4x32(10, kat[k].ctr, kat[k].key, out);
    CHECK(memcmp(out, kat[k].want, sizeof out) == 0);
  }
  /* The stream's block b is Philox of {b_lo, b_hi, stream, step_lo}. */
  dml_philox_stream_t s;
  dml_philox_stream_init(&s, 0xa4093822ull | (0x299f31d0ull << 32), 0x03707344,
                         0x13198a2e);
  uint32_t out[4];
  dml_philox_block(&s, 0x85a308d3243f6a88ull, out);
  CHECK(memcmp(out, kat[2].want, sizeof out) == 0);
}

static void test_determinism(void) {
  dml_philox_stream_t a, b, c, d, e;
  dml_philox_stream_init(&a, 42, 7, 3);
  dml_philox_stream_init(&b, 42, 7, 3);
  dml_philox_stream_init(&c, 42, 8, 3);                /* next step */
  dml_philox_stream_init(&d, 42, 7, 4);                /* another node */
  dml_philox_stream_init(&e, 42, 7 + (1ull << 32), 3); /* step's high bits count */
  int same_c = 0, same_d = 0, same_e = 0;
  for (uint64_t i = 0; i < 1000; i++) {
    float ua = dml_philox_uniform_f32(&a, i);
    CHECK(ua == dml_philox_uniform_f32(&b, i));
    CHECK(dml_philox_uniform_f64(&a, i) == dml_philox_uniform_f64(&b, i));
    CHECK(dml_philox_normal_f32(&a, i) == dml_philox_normal_f32(&b, i));
    same_c += ua == dml_philox_uniform_f32(&c, i);
    same_d += ua == dml_philox_uniform_f32(&d, i);
    same_e += ua == dml_philox_uniform_f32(&e, i);
  }
  /* Independent 24-bit values: a coincidence has probability 2^-24 each. */
  CHECK(same_c <= 1 && same_d <= 1 && same_e <= 1);
}

/* Moments of n draws against their expectation, within 5 standard errors:
 * uniform mean 1/2 (var 1/12), variance 1/12 (var of (u-1/2)^2 is 1/180);
 * normal mean 0 (var 1), variance 1 (var 2). Plus the range and a 10-bin
 * chi-square for the uniforms (9 dof; 40 is beyond p = 1e-5). */
static void test_distributions(void) {
  const int n = 200000;
  dml_philox_stream_t s;
  dml_philox_stream_init(&s, 12345, 0, 0);
  for (int f64 = 0; f64 < 2; f64++) {
    double sum = 0, sq = 0, lo = 1, hi = 0;
    int64_t bins[10] = {0};
    for (int i = 0; i < n; i++) {
      double u = f64 ? dml_philox_uniform_f64(&s, (uint64_t)i)
                     : (double)dml_philox_uniform_f32(&s, (uint64_t)i);
      sum += u, sq += (u - 0.5) * (u - 0.5);
      lo = u < lo ? u : lo, hi = u > hi ? u : hi;
      bins[(int)(u * 10)]++;
    }
    CHECK(lo >= 0 && hi < 1);
    CHECK_NEAR(sum / n, 0.5, 5 * sqrt(1.0 / 12 / n));
    CHECK_NEAR(sq / n, 1.0 / 12, 5 * sqrt(1.0 / 180 / n));
    double chi = 0, e = n / 10.0;
    for (int k = 0; k < 10; k++) chi += (bins[k] - e) * (bins[k] - e) / e;
    CHECK(chi < 40);
    sum = sq = 0;
    for (int i = 0; i < n; i++) {
      double z = f64 ? dml_philox_normal_f64(&s, (uint64_t)i)
                     : dml_philox_normal_f32(&s, (uint64_t)i);
      CHECK(isfinite(z));
      sum += z, sq += z * z;
    }
    CHECK_NEAR(sum / n, 0.0, 5 * sqrt(1.0 / n));
    CHECK_NEAR(sq / n, 1.0, 5 * sqrt(2.0 / n));
  }
}

int main(void) {
  RUN(test_known_answers);
  RUN(test_determinism);
  RUN(test_distributions);
  return dml_test_finish();
}
