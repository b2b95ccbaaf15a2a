/* test_gptq.c — dml_gptq_quantize() (compiler/dml_quantize.h) against the
 * numpy implementation of the same algorithm in gen_gptq_ref.py, whose
 * outputs are checked in (tests/quantize/gptq/): a layer K = 80 (groups of
 * 32 ending in a short one; one input always 0), N = 24, on 256 rows of
 * correlated inputs, at int4 g32 / g16, int8 g32 and int4 g32 act-order.
 * Tolerances: H and H^-1's Cholesky factor are computed by LAPACK there and
 * by dmlc here, so a value at a rounding tie may land on the other side and
 * move the later columns' compensation: at least 99% of the values equal,
 * none more than 1 step apart, and the output error within 2% of numpy's.
 * GPTQ must beat round to nearest's output error on these inputs by 6 dB
 * (measured: 12.6 / 13.5 / 14.1 / 21.9 dB; numpy's values and scales all equal). The
 * errors: bad sizes, NaN in the weight or H, a Hessian that is not positive definite.
 * The grids of --asym / --clip-search (dml_gptq_quantize_grid: asymmetric
 * g32, asymmetric with clipping g32 and act-order, clipping g16 and int8)
 * and AWQ's scales (dml_awq_scales: alpha and s) against gen_gptq_ref.py's
 * numpy gptq_grid / awq_scales (the same tolerances; alpha equal, s within
 * 1e-12), and dml_wq_grid's edges (all zero, positive only, NaN / inf
 * skipped, an outlier clipped). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_npy.h"
#include "dml_quantize.h"

static int fails;
#define CHECK(c, ...)                                      \
  do {                                                     \
    if (!(c)) {                                            \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fputc('\n', stderr);                                 \
      fails++;                                             \
    }                                                      \
  } while (0)

static void *load(const char *dir, const char *name, dml_tensor_t *t) {
  char path[1024];
  if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) {
    fprintf(stderr, "FAIL: path too long\n");
    exit(1);
  }
  void *buf = NULL;
  dml_status_t st = dml_npy_read_file(path, t, &buf);
  if (st) {
    fprintf(stderr, "FAIL: reading %s\n", path);
    exit(1);
  }
  return buf;
}

/* dq [K, N] of q with scales s [G, N] */
static void dequant(const int8_t *q, const float *s, int64_t K, int64_t N, int64_t g,
                    float *dq) {
  for (int64_t k = 0; k < K; k++)
    for (int64_t n = 0; n < N; n++)
      dq[k * N + n] = (float)q[k * N + n] * s[(k / g) * N + n];
}

int main(void) {
  const char *src = getenv("DMLC_SOURCE_DIR");
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/tests/quantize/gptq", src ? src : ".");
  dml_tensor_t tx, tw;
  void *bx = load(dir, "x.npy", &tx), *bw = load(dir, "w.npy", &tw);
  const int64_t M = tx.dims[0], K = tx.dims[1], N = tw.dims[1];
  CHECK(tw.dims[0] == K && K == 80 && N == 24, "shapes");
  const float *x = (const float *)tx.data, *w = (const float *)tw.data;
  double *h = (double *)calloc((size_t)(K * K), sizeof(double));
  for (int64_t r = 0; r < M; r++)
    for (int64_t i = 0; i < K; i++)
      for (int64_t j = 0; j < K; j++) h[i * K + j] += 2.0 * x[r * K + i] * x[r * K + j];
  float *dq = (float *)malloc((size_t)(K * N) * sizeof(float));
  float *dqr = (float *)malloc((size_t)(K * N) * sizeof(float));
  int8_t *q = (int8_t *)malloc((size_t)(K * N));
  int8_t *qr = (int8_t *)malloc((size_t)(K * N));
  float *s = (float *)malloc((size_t)(K * N) * sizeof(float));
  float *sr = (float *)malloc((size_t)(K * N) * sizeof(float));
  static const struct {
    int bits, g, act;
  } cases[] = {{4, 32, 0}, {4, 16, 0}, {8, 32, 0}, {4, 32, 1}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const int bits = cases[c].bits;
    const int64_t g = cases[c].g, G = (K + g - 1) / g;
    char qn[64], sn[64];
    const char *act = cases[c].act ? "_act" : "";
    snprintf(qn, sizeof qn, "q_b%d_g%d%s.npy", bits, (int)g, act);
    snprintf(sn, sizeof sn, "s_b%d_g%d%s.npy", bits, (int)g, act);
    dml_tensor_t tq, ts;
    void *bq = load(dir, qn, &tq), *bs = load(dir, sn, &ts);
    const int8_t *q_ref = (const int8_t *)tq.data;
    const float *s_ref = (const float *)ts.data;
    dml_status_t st = dml_gptq_quantize(w, K, N, h, g, bits, 0.01, cases[c].act, q, s);
    CHECK(!st, "b%d g%d: %s", bits, (int)g, st ? dml_status_reason(st) : "");
    int64_t same = 0, far = 0;
    for (int64_t i = 0; i < K * N; i++) {
      same += q[i] == q_ref[i];
      far += abs(q[i] - q_ref[i]) > 1;
    }
    int64_t s_same = 0;
    for (int64_t i = 0; i < G * N; i++)
      s_same += fabsf(s[i] - s_ref[i]) <= 1e-6f * fabsf(s_ref[i]);
    /* output errors: ours, numpy's, round to nearest's (the grid of
     * --weight-only without calibration) */
    dequant(q, s, K, N, g, dq);
    double db = dml_gptq_out_sqnr(w, dq, K, N, h);
    dequant(q_ref, s_ref, K, N, g, dqr);
    double db_ref = dml_gptq_out_sqnr(w, dqr, K, N, h);
    const double qmax = bits == 8 ? 127 : 7;
    for (int64_t b = 0; b < G; b++)
      for (int64_t n = 0; n < N; n++) {
        float m = 0;
        for (int64_t k = b * g; k < K && k < (b + 1) * g; k++)
          m = fmaxf(m, fabsf(w[k * N + n]));
        sr[b * N + n] = (float)(m / qmax);
        for (int64_t k = b * g; k < K && k < (b + 1) * g; k++) {
          double v = nearbyint(w[k * N + n] / (double)sr[b * N + n]);
          qr[k * N + n] = (int8_t)(v > qmax ? qmax : v < -qmax ? -qmax : v);
        }
      }
    dequant(qr, sr, K, N, g, dqr);
    double db_rtn = dml_gptq_out_sqnr(w, dqr, K, N, h);
    /* the SQNR formula against the outputs themselves */
    double sig = 0, noise = 0;
    for (int64_t r = 0; r < M; r++)
      for (int64_t n = 0; n < N; n++) {
        double y = 0, e = 0;
        for (int64_t k = 0; k < K; k++) {
          y += (double)x[r * K + k] * w[k * N + n];
          e += (double)x[r * K + k] * ((double)w[k * N + n] - dq[k * N + n]);
        }
        sig += y * y, noise += e * e;
      }
    double db_direct = 10 * log10(sig / noise);
    int dead = 1;
    for (int64_t n = 0; n < N; n++) dead &= q[5 * N + n] == 0;
    printf(
        "b%d g%d%s: %lld/%lld values equal numpy's (%lld more than 1 apart), %lld/%lld "
        "scales; output SQNR %.3f dB (numpy %.3f, direct %.3f), RTN %.3f dB\n",
        bits, (int)g, act, (long long)same, (long long)(K * N), (long long)far,
        (long long)s_same, (long long)(G * N), db, db_ref, db_direct, db_rtn);
    CHECK(same >= (K * N * 99) / 100 && far == 0, "b%d g%d: values", bits, (int)g);
    CHECK(fabs(db - db_ref) <= 10 * log10(1.02), "b%d g%d: SQNR %.4f vs numpy %.4f", bits,
          (int)g, db, db_ref);
    CHECK(fabs(db - db_direct) < 1e-6, "b%d g%d: out SQNR formula %.9f vs %.9f", bits,
          (int)g, db, db_direct);
    CHECK(db >= db_rtn + 6, "b%d g%d: GPTQ %.3f dB not 6 dB above RTN %.3f", bits, (int)g,
          db, db_rtn);
    CHECK(dead, "b%d g%d: the dead input's row is not 0", bits, (int)g);
    free(bq), free(bs);
  }
  {
    /* N > K (a 384 x 1536 weight's shape): act-order's scratch holds W */
    const int64_t K2 = 16, N2 = 80;
    double *h2 = (double *)malloc((size_t)(K2 * K2) * sizeof(double));
    float *w2 = (float *)malloc((size_t)(K2 * N2) * sizeof(float));
    float *dq2 = (float *)malloc((size_t)(K2 * N2) * sizeof(float));
    int8_t *q2 = (int8_t *)malloc((size_t)(K2 * N2));
    float *s2 = (float *)malloc((size_t)N2 * sizeof(float));
    for (int64_t i = 0; i < K2; i++)
      for (int64_t j = 0; j < K2; j++) h2[i * K2 + j] = h[i * K + j];
    for (int64_t i = 0; i < K2 * N2; i++) w2[i] = w[i % (K * N)];
    for (int act = 0; act < 2; act++) {
      dml_status_t st2 = dml_gptq_quantize(w2, K2, N2, h2, 16, 4, 0.01, act, q2, s2);
      CHECK(!st2, "N > K, act-order %d", act);
      dml_status_free(st2);
      dequant(q2, s2, K2, N2, 16, dq2);
      double db2 = dml_gptq_out_sqnr(w2, dq2, K2, N2, h2);
      printf("K 16 N 80 act-order %d: output SQNR %.3f dB\n", act, db2);
      CHECK(db2 > 15 && db2 < 100, "N > K, act-order %d: SQNR %.3f", act, db2);
    }
    free(h2), free(w2), free(dq2), free(q2), free(s2);
  }
  /* the grids of --asym / --clip-search (dml_gptq_quantize_grid) and AWQ's
   * scales (dml_awq_scales) against gen_gptq_ref.py's gptq_grid and
   * awq_scales */
  static const struct {
    int bits, g, asym, clip, act;
  } gcases[] = {{4, 32, 1, 0, 0},
                {4, 32, 1, 1, 0},
                {4, 16, 0, 1, 0},
                {8, 32, 0, 1, 0},
                {4, 32, 1, 1, 1}};
  double *xabs = (double *)calloc((size_t)K, sizeof(double));
  for (int64_t r = 0; r < M; r++)
    for (int64_t k = 0; k < K; k++) xabs[k] += fabs((double)x[r * K + k]) / (double)M;
  uint8_t *z = (uint8_t *)malloc((size_t)(K * N));
  for (size_t c = 0; c < sizeof gcases / sizeof gcases[0]; c++) {
    const int bits = gcases[c].bits, asym = gcases[c].asym, clip = gcases[c].clip;
    const int64_t g = gcases[c].g, G = (K + g - 1) / g;
    char cs[64], fn[96];
    snprintf(cs, sizeof cs, "b%d_g%d%s%s", bits, (int)g, asym ? "_asym" : "",
             clip ? "_clip" : "");
    const char *act = gcases[c].act ? "_act" : "";
    dml_tensor_t tq, ts, tz, tas, tal;
    snprintf(fn, sizeof fn, "q_%s%s.npy", cs, act);
    void *bq = load(dir, fn, &tq);
    snprintf(fn, sizeof fn, "s_%s%s.npy", cs, act);
    void *bs = load(dir, fn, &ts);
    snprintf(fn, sizeof fn, "z_%s%s.npy", cs, act);
    void *bz = load(dir, fn, &tz);
    const int8_t *q_ref = (const int8_t *)tq.data;
    const float *s_ref = (const float *)ts.data;
    const uint8_t *z_ref = (const uint8_t *)tz.data;
    dml_status_t st = dml_gptq_quantize_grid(w, K, N, h, g, bits, asym, clip, 0.01,
                                             gcases[c].act, q, s, asym ? z : NULL);
    CHECK(!st, "%s%s: %s", cs, act, st ? dml_status_reason(st) : "");
    dml_status_free(st);
    int64_t same = 0, far = 0, s_same = 0, z_same = 0;
    for (int64_t i = 0; i < K * N; i++) {
      same += q[i] == q_ref[i];
      far += abs(q[i] - q_ref[i]) > 1;
    }
    for (int64_t i = 0; i < G * N; i++) {
      s_same += fabsf(s[i] - s_ref[i]) <= 1e-6f * fabsf(s_ref[i]);
      z_same += (asym ? z[i] : 0) == z_ref[i];
    }
    for (int64_t k = 0; k < K; k++)
      for (int64_t n = 0; n < N; n++) {
        int64_t b = (k / g) * N + n;
        int zz = asym ? z[b] : 0, zr = z_ref[b];
        dq[k * N + n] = (float)(q[k * N + n] - zz) * s[b];
        dqr[k * N + n] = (float)(q_ref[k * N + n] - zr) * s_ref[b];
      }
    double db = dml_gptq_out_sqnr(w, dq, K, N, h),
           db_ref = dml_gptq_out_sqnr(w, dqr, K, N, h);
    printf(
        "grid %s%s: %lld/%lld values equal numpy's (%lld more than 1 apart), %lld/%lld "
        "scales, %lld zero points; output SQNR %.3f dB (numpy %.3f)\n",
        cs, act, (long long)same, (long long)(K * N), (long long)far, (long long)s_same,
        (long long)(G * N), (long long)z_same, db, db_ref);
    CHECK(same >= (K * N * 99) / 100 && far == 0, "grid %s%s: values", cs, act);
    CHECK(s_same >= (G * N * 99) / 100 && z_same >= (G * N * 99) / 100,
          "grid %s%s: scales / zero points", cs, act);
    CHECK(fabs(db - db_ref) <= 10 * log10(1.02), "grid %s%s: SQNR %.4f vs numpy %.4f", cs,
          act, db, db_ref);
    free(bq), free(bs), free(bz);
    if (gcases[c].act) continue; /* AWQ: once per grid */
    snprintf(fn, sizeof fn, "awq_s_%s.npy", cs);
    void *bas = load(dir, fn, &tas);
    snprintf(fn, sizeof fn, "awq_alpha_%s.npy", cs);
    void *bal = load(dir, fn, &tal);
    double *sa = (double *)malloc((size_t)K * sizeof(double)), alpha = -1;
    st = dml_awq_scales(w, K, N, h, xabs, g, bits, asym, clip, sa, &alpha);
    CHECK(!st, "awq %s: %s", cs, st ? dml_status_reason(st) : "");
    dml_status_free(st);
    double maxrel = 0;
    for (int64_t k = 0; k < K; k++) {
      double r = ((const double *)tas.data)[k];
      maxrel = fmax(maxrel, fabs(sa[k] - r) / r);
    }
    printf("awq %s: alpha %.1f (numpy %.1f), scales within %.2e of numpy's\n", cs, alpha,
           ((const double *)tal.data)[0], maxrel);
    CHECK(alpha == ((const double *)tal.data)[0] && maxrel < 1e-12,
          "awq %s: alpha / scales", cs);
    free(sa), free(bas), free(bal);
  }
  {
    /* dml_wq_grid's edges: an all-zero group, one of positive values
     * only, NaN and inf skipped, clipping of an outlier */
    float sg;
    int zg;
    const double zero[4] = {0, 0, -0.0, 0}, pos[4] = {0.5, 1.5, 3.0, 0.25},
                 odd[5] = {NAN, 1.0, -2.0, INFINITY, 0.5};
    dml_wq_grid(zero, 4, 4, 1, 1, &sg, &zg);
    CHECK(sg == 1.0f && zg == 0, "all zero: s %g z %d", sg, zg);
    dml_wq_grid(pos, 4, 4, 1, 0, &sg, &zg);
    CHECK(sg == (float)(3.0 / 15) && zg == 0, "positive: s %g z %d", sg, zg);
    CHECK(
        dml_wq_grid_q(3.0, sg, zg, 4, 1) == 15 && dml_wq_grid_q(-1.0, sg, zg, 4, 1) == 0,
        "positive: clamp");
    dml_wq_grid(odd, 5, 4, 1, 0, &sg, &zg);
    CHECK(sg == (float)(3.0 / 15) && zg == 10, "NaN / inf skipped: s %g z %d", sg, zg);
    dml_wq_grid(odd, 5, 4, 0, 0, &sg, &zg);
    CHECK(sg == (float)(2.0 / 7) && zg == 0, "symmetric: s %g z %d", sg, zg);
    double outl[32];
    for (int i = 0; i < 32; i++) outl[i] = (i % 7 - 3) * 0.1;
    outl[9] = 4.0;
    float s1;
    dml_wq_grid(outl, 32, 4, 0, 0, &s1, &zg);
    dml_wq_grid(outl, 32, 4, 0, 1, &sg, &zg);
    CHECK(sg < s1 && sg >= 0.5f * s1 * 0.999f, "clip: s %g of max's %g", sg, s1);
  }
  free(xabs), free(z);
  /* errors */
  dml_status_t st = dml_gptq_quantize(w, 0, N, h, 32, 4, 0.01, 0, q, s);
  CHECK(st && dml_status_code(st) == DML_STATUS_INVALID_ARGUMENT, "K = 0");
  dml_status_free(st);
  st = dml_gptq_quantize(w, K, N, h, 32, 3, 0.01, 0, q, s);
  CHECK(st && dml_status_code(st) == DML_STATUS_INVALID_ARGUMENT, "bits 3");
  dml_status_free(st);
  float *wn = (float *)malloc((size_t)(K * N) * sizeof(float));
  memcpy(wn, w, (size_t)(K * N) * sizeof(float));
  wn[17] = NAN;
  st = dml_gptq_quantize(wn, K, N, h, 32, 4, 0.01, 0, q, s);
  CHECK(st && dml_status_code(st) == DML_STATUS_INVALID_ARGUMENT, "NaN weight");
  dml_status_free(st);
  double *hb = (double *)malloc((size_t)(K * K) * sizeof(double));
  memcpy(hb, h, (size_t)(K * K) * sizeof(double));
  hb[3 * K + 3] = -1e6; /* not positive definite */
  st = dml_gptq_quantize(w, K, N, hb, 32, 4, 0.0, 0, q, s);
  CHECK(st && dml_status_code(st) == DML_STATUS_FAILED_PRECONDITION, "indefinite H");
  if (st) printf("indefinite H: %s\n", dml_status_reason(st));
  dml_status_free(st);
  hb[3 * K + 3] = INFINITY;
  st = dml_gptq_quantize(w, K, N, hb, 32, 4, 0.01, 0, q, s);
  CHECK(st && dml_status_code(st) == DML_STATUS_INVALID_ARGUMENT, "inf in H");
  dml_status_free(st);
  st = dml_gptq_quantize_grid(w, K, N, h, 32, 8, 1, 0, 0.01, 0, q, s, (uint8_t *)q);
  CHECK(st && dml_status_code(st) == DML_STATUS_INVALID_ARGUMENT, "asym int8");
  dml_status_free(st);
  st = dml_awq_scales(w, K, N, h, h, 32, 8, 1, 0, (double *)dq, NULL);
  CHECK(st && dml_status_code(st) == DML_STATUS_INVALID_ARGUMENT, "awq asym int8");
  dml_status_free(st);
  free(wn), free(hb), free(h), free(dq), free(dqr), free(q), free(qr), free(s), free(sr);
  free(bx), free(bw);
  if (fails) return 1;
  printf("test_gptq: OK\n");
  return 0;
}
