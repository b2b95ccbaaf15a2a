/*
 * dml_philox.c — Philox4x32-10 and the uniform/normal mappings of the
 * random ops (dml_philox.h has the scheme; Salmon et al., SC'11, 4.2).
 */
#include "dml_philox.h"

#include <math.h>

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

void dml_philox4x32(uint32_t rounds, const uint32_t ctr[4], const uint32_t key[2],
                    uint32_t out[4]) {
  uint32_t x0 = ctr[0], x1 = ctr[1], x2 = ctr[2], x3 = ctr[3];
  uint32_t k0 = key[0], k1 = key[1];
  for (uint32_t r = 0; r < rounds; r++) {
    if (r > 0) {
      k0 += PHILOX_W0;
      k1 += PHILOX_W1;
    }
    uint64_t p0 = (uint64_t)PHILOX_M0 * x0, p1 = (uint64_t)PHILOX_M1 * x2;
    uint32_t y0 = (uint32_t)(p1 >> 32) ^ x1 ^ k0;
    uint32_t y2 = (uint32_t)(p0 >> 32) ^ x3 ^ k1;
    x1 = (uint32_t)p1;
    x3 = (uint32_t)p0;
    x0 = y0;
    x2 = y2;
  }
  out[0] = x0;
  out[1] = x1;
  out[2] = x2;
  out[3] = x3;
}

void dml_philox_stream_init(dml_philox_stream_t *s, uint64_t seed, uint64_t step,
                            uint32_t stream) {
  s->key[0] = (uint32_t)seed;
  s->key[1] = (uint32_t)(seed >> 32) ^ (uint32_t)(step >> 32);
  s->ctr_hi[0] = stream;
  s->ctr_hi[1] = (uint32_t)step;
}

void dml_philox_block(const dml_philox_stream_t *s, uint64_t block, uint32_t out[4]) {
  const uint32_t ctr[4] = {(uint32_t)block, (uint32_t)(block >> 32), s->ctr_hi[0],
                           s->ctr_hi[1]};
  dml_philox4x32(10, ctr, s->key, out);
}

static float u24(uint32_t w) {
  return (float)(w >> 8) * (1.0f / 16777216.0f);
}

static double u53(uint32_t lo, uint32_t hi) {
  uint64_t w = ((uint64_t)hi << 32) | lo;
  return (double)(w >> 11) * (1.0 / 9007199254740992.0);
}

float dml_philox_uniform_f32(const dml_philox_stream_t *s, uint64_t i) {
  uint32_t w[4];
  dml_philox_block(s, i / 4, w);
  return u24(w[i % 4]);
}

double dml_philox_uniform_f64(const dml_philox_stream_t *s, uint64_t i) {
  uint32_t w[4];
  dml_philox_block(s, i / 2, w);
  unsigned k = (unsigned)(i % 2) * 2;
  return u53(w[k], w[k + 1]);
}

/* Box-Muller: u1 in (0, 1], u2 in [0, 1); `second` picks the sine. */
static double box_muller(double u1, double u2, int second) {
  const double two_pi = 6.283185307179586476925286766559;
  double r = sqrt(-2.0 * log(u1));
  return second ? r * sin(two_pi * u2) : r * cos(two_pi * u2);
}

double dml_philox_normal_f32(const dml_philox_stream_t *s, uint64_t i) {
  uint32_t w[4];
  dml_philox_block(s, i / 4, w);
  unsigned p = (unsigned)(i % 4) / 2 * 2; /* words p, p+1 */
  double u1 = 1.0 - (double)u24(w[p]), u2 = (double)u24(w[p + 1]);
  return box_muller(u1, u2, (int)(i % 2));
}

double dml_philox_normal_f64(const dml_philox_stream_t *s, uint64_t i) {
  uint32_t w[4];
  dml_philox_block(s, i / 2, w);
  double u1 = 1.0 - u53(w[0], w[1]), u2 = u53(w[2], w[3]);
  return box_muller(u1, u2, (int)(i % 2));
}
