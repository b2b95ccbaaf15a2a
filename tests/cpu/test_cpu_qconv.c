/*
 * test_cpu_qconv.c — the fast int8 QLinearConv paths (runtime/cpu/cpu_qgemm.c:
 * portable C, AVX2, AVX-512 VNNI, the depthwise kernel; weights packed per
 * call and pre-packed as the CPU executor does) against the reference
 * kernel (cpu_quant.c, dml_cpu_qgemm_set_kernel(-1)), bit for bit: both
 * accumulate exactly in integers and requantize with the same double
 * formula. Random and edge shapes: K not a multiple of 4 or of the vector
 * width, 1x1, strided, dilated, padded, SAME_UPPER, grouped, depthwise,
 * 1-D; zero points 0/128/255 (u8) and -128/0/127 (s8); u8 and s8
 * activations and weights; per-tensor and per-channel weights; bias;
 * y_scale small enough to saturate at both ends; dml_clamp.
 */
#include <math.h>
#include <stdio.h>

#include "cpu_internal.h"
#include "cpu_test_util.h"

static uint32_t g_s = 1u;
static uint32_t rnd(void) {
  g_s = g_s * 1664525u + 1013904223u;
  return g_s >> 8;
}

typedef struct {
  int64_t N, C, H, W, M, group, KH, KW, s, p, d;
  dml_dtype_t xdt, wdt, ydt;
  int zx, zy;      /* zero points (dtype's range) */
  int zw_mode;     /* 0: zeros, 1: per-channel random, 2: per-tensor value zw */
  int zw;          /* per-tensor zero point */
  int per_channel; /* w_scale [M] */
  int bias;
  double ys; /* y_scale */
  int clamp; /* dml_clamp [lo, hi] inside the range */
  int one_d; /* 1-D convolution (H = KH = 1) */
  int same_upper;
} qcase_t;

static int8_t qrand(dml_dtype_t dt) {
  return (int8_t)(uint8_t)(rnd() & 0xff);
}

/* Runs the case with kernel `which` (-1 reference), pre-packed weights when
 * prepack; output into y. Returns 0 on success. */
static int run_case(const qcase_t *q, int which, int prepack, uint8_t *y, int64_t *ny) {
  g_s = 777u + (uint32_t)q->C * 31u + (uint32_t)q->M;
  int64_t Cg = q->C / q->group;
  int64_t eh = (q->KH - 1) * q->d + 1, ew = (q->KW - 1) * q->d + 1;
  int64_t OH, OW, pad = q->p;
  if (q->same_upper) {
    OH = (q->H + q->s - 1) / q->s, OW = (q->W + q->s - 1) / q->s;
  } else {
    OH = (q->H + 2 * pad - eh) / q->s + 1, OW = (q->W + 2 * pad - ew) / q->s + 1;
  }
  if (q->one_d) OH = 1;
  int64_t nx = q->N * q->C * q->H * q->W, nw = q->M * Cg * q->KH * q->KW;
  *ny = q->N * q->M * OH * OW;
  uint8_t *x = malloc((size_t)nx), *w = malloc((size_t)nw);
  for (int64_t i = 0; i < nx; i++) x[i] = (uint8_t)qrand(q->xdt);
  /* Some edge values: the extremes of the dtype. */
  for (int64_t i = 0; i < nx; i += 7) x[i] = (i / 7) % 2 ? 0x7f : 0x80;
  for (int64_t i = 0; i < nx; i += 11) x[i] = (i / 11) % 2 ? 0xff : 0x00;
  for (int64_t i = 0; i < nw; i++) w[i] = (uint8_t)qrand(q->wdt);
  for (int64_t i = 0; i < nw; i += 5) w[i] = (i / 5) % 2 ? 0x80 : 0x7f;
  float xs = 0.02f, ysf = (float)q->ys;
  float *ws = malloc((size_t)q->M * sizeof(float));
  uint8_t *zw = malloc((size_t)q->M);
  int32_t *b = malloc((size_t)q->M * sizeof(int32_t));
  for (int64_t m = 0; m < q->M; m++) {
    ws[m] = 0.001f * (float)(1 + (int)(rnd() % 50));
    zw[m] = q->zw_mode == 0   ? (q->wdt == DML_DTYPE_U8 ? 0 : 0)
            : q->zw_mode == 1 ? (uint8_t)(rnd() & 0xff)
                              : (uint8_t)q->zw;
    b[m] = (int32_t)(rnd() % 20001) - 10000;
  }
  if (q->zw_mode == 2 || !q->per_channel)
    for (int64_t m = 0; m < q->M; m++) zw[m] = zw[0], ws[m] = ws[0];
  uint8_t zx = (uint8_t)q->zx, zy = (uint8_t)q->zy;
  int64_t pc = q->per_channel || q->zw_mode == 1 ? q->M : 1;
  dml_tensor_t in[9];
  int r = q->one_d ? 1 : 2;
  if (q->one_d) {
    in[0] = tens(q->xdt, x, 3, q->N, q->C, q->W);
    in[3] = tens(q->wdt, w, 3, q->M, Cg, q->KW);
  } else {
    in[0] = tens(q->xdt, x, 4, q->N, q->C, q->H, q->W);
    in[3] = tens(q->wdt, w, 4, q->M, Cg, q->KH, q->KW);
  }
  in[1] = tens(DML_DTYPE_F32, &xs, 0);
  in[2] = tens(q->xdt, &zx, 0);
  in[4] = pc > 1 ? tens(DML_DTYPE_F32, ws, 1, pc) : tens(DML_DTYPE_F32, ws, 0);
  in[5] = pc > 1 ? tens(q->wdt, zw, 1, pc) : tens(q->wdt, zw, 0);
  in[6] = tens(DML_DTYPE_F32, &ysf, 0);
  in[7] = tens(q->ydt, &zy, 0);
  in[8] = tens(DML_DTYPE_I32, b, 1, q->M);
  dml_tensor_t out = q->one_d ? tens(q->ydt, y, 3, q->N, q->M, OW)
                              : tens(q->ydt, y, 4, q->N, q->M, OH, OW);
  int64_t st[2] = {q->s, q->s}, dl[2] = {q->d, q->d}, pads[4] = {pad, pad, pad, pad};
  int64_t cl[2];
  int32_t lo = q->ydt == DML_DTYPE_U8 ? 0 : -128;
  cl[0] = lo + 40, cl[1] = lo + 200;
  dml_attr_t at[6];
  uint32_t na = 0;
  at[na++] = attr_i("group", q->group);
  at[na++] = attr_ints("strides", st, (size_t)r);
  at[na++] = attr_ints("dilations", dl, (size_t)r);
  if (q->same_upper)
    at[na++] = attr_s("auto_pad", "SAME_UPPER");
  else
    at[na++] = attr_ints("pads", pads, 2 * (size_t)r);
  if (q->clamp) at[na++] = attr_ints("dml_clamp", cl, 2);
  if (dml_cpu_qgemm_set_kernel(which) < 0 && which > 0) {
    free(x), free(w), free(ws), free(zw), free(b);
    return 1; /* not on this machine */
  }
  dml_cpu_call_t c =
      cpu_call(DML_OP_QLINEAR_CONV, "qconv", in, q->bias ? 9 : 8, &out, 1, at, na);
  size_t sb = dml_cpu_scratch_bytes(&c);
  void *scratch = sb ? malloc(sb) : NULL;
  if (scratch) memset(scratch, 0xa5, sb);
  c.scratch = scratch;
  c.scratch_bytes = sb;
  dml_status_t s;
  void *packed = NULL;
  if (prepack) {
    size_t pb = dml_cpu_qconv_prepack_bytes(&in[3], q->group);
    if (pb) {
      packed = malloc(pb);
      dml_cpu_qconv_prepack(&in[3], q->group, packed);
    }
    s = dml_cpu_qlinear_conv(&c, packed);
  } else {
    s = dml_cpu_run(&c);
  }
  int rc = 0;
  if (s) {
    fprintf(stderr, "run failed: %s\n", dml_status_reason(s));
    dml_status_free(s);
    rc = 2;
  }
  dml_cpu_qgemm_set_kernel(0);
  free(packed), free(scratch), free(x), free(w), free(ws), free(zw), free(b);
  return rc;
}

static void test_qconv_paths(void) {
  const dml_dtype_t U = DML_DTYPE_U8, S = DML_DTYPE_I8;
  const qcase_t cases[] = {
      /* N C H W M grp KH KW s p d  xdt wdt ydt zx zy zwm zw pc bias ys clamp 1d su */
      {1, 3, 9, 11, 5, 1, 3, 3, 1, 1, 1, U, S, U, 128, 128, 0, 0, 1, 1, 0.05, 0, 0, 0},
      {2, 16, 12, 12, 24, 1, 3, 3, 2, 1, 1, U, S, U, 0, 0, 0, 0, 1, 1, 0.2, 0, 0, 0},
      {1, 17, 7, 33, 9, 1, 1, 1, 1, 0, 1, U, S, U, 255, 3, 0, 0, 0, 0, 0.3, 0, 0, 0},
      {1, 64, 14, 14, 40, 1, 1, 1, 1, 0, 1, S, S, S, -128, 0, 0, 0, 1, 1, 0.5, 0, 0, 0},
      {1, 8, 10, 10, 8, 1, 3, 3, 1, 2, 2, S, U, S, 127, -5, 2, 128, 0, 1, 0.1, 1, 0, 0},
      {1, 12, 9, 9, 18, 3, 3, 3, 1, 1, 1, U, U, U, 17, 200, 1, 0, 1, 1, 0.01, 0, 0, 0},
      {1, 5, 6, 7, 3, 1, 5, 5, 1, 2, 1, U, S, U, 90, 128, 1, 0, 1, 0, 0.002, 0, 0, 0},
      {1, 6, 8, 8, 6, 1, 3, 3, 2, 0, 1, U, S, U, 128, 0, 0, 0, 1, 1, 0.1, 0, 0, 1},
      {2, 32, 9, 9, 32, 32, 3, 3, 1, 1, 1, U, S, U, 128, 128, 0, 0, 1, 1, 0.05, 0, 0, 0},
      {1, 16, 11, 13, 16, 16, 3, 3, 2, 1, 1, S, S, U, 3, 10, 1, 0, 1, 1, 0.02, 1, 0, 0},
      {1, 8, 6, 6, 8, 8, 5, 5, 1, 2, 2, U, U, S, 255, 0, 2, 7, 1, 1, 2.0, 0, 0, 0},
      {1, 20, 1, 1100, 7, 1, 1, 5, 1, 2, 1, U, S, U, 128, 128, 0, 0, 1, 1, 0.1, 0, 1, 0},
      {1, 130, 5, 5, 70, 1, 3, 3, 1, 1, 1, U, S, U, 128, 128, 0, 0, 1, 1, 1.0, 0, 0, 0},
      {1, 3, 40, 40, 33, 1, 7, 7, 2, 3, 1, U, S, U, 0, 0, 0, 0, 1, 1, 0.4, 0, 0, 0},
      /* output rows of 8 and 32 (two rows per panel of 16, one row per panel),
       * strides 1 and 2, s8 x and u8 w with zero points: colsum */
      {2, 24, 8, 8, 20, 1, 3, 3, 1, 1, 1, U, S, U, 128, 128, 0, 0, 1, 1, 0.2, 0, 0, 0},
      {1, 9, 16, 16, 12, 1, 3, 3, 2, 1, 1, S, U, U, -3, 100, 1, 0, 1, 1, 0.3, 0, 0, 0},
      {1, 6, 64, 64, 10, 1, 3, 3, 2, 1, 1, U, S, S, 255, 5, 0, 0, 1, 1, 0.2, 1, 0, 0},
      {1, 7, 32, 32, 9, 1, 3, 3, 1, 1, 1, U, U, U, 0, 128, 2, 200, 0, 1, 20.0, 0, 0, 0},
      /* output rows of 2 (more than 4 rows per panel: the gather) */
      {3, 10, 5, 5, 11, 1, 3, 3, 2, 0, 1, U, S, U, 128, 128, 0, 0, 1, 1, 0.1, 0, 0, 0},
      /* the stride-1 path (channels per group a multiple of 4, symmetric
       * weights): image rows of 32 and 21 (the interleave's vector and
       * scalar columns), odd M, batch 3, no padding, 5x5 with pads 2,
       * groups of 8 channels, s8 x, dilation 2, a clamp, rows of 1 */
      {3, 16, 32, 32, 13, 1, 3, 3, 1, 1, 1, U, S, U, 128, 128, 0, 0, 1, 1, 0.3, 0, 0, 0},
      {1, 8, 19, 21, 9, 1, 3, 3, 1, 0, 1, S, S, S, -7, 3, 0, 0, 0, 1, 0.2, 0, 0, 0},
      {2, 12, 10, 23, 17, 1, 5, 5, 1, 2, 1, U, S, U, 60, 100, 0, 0, 1, 0, 0.5, 1, 0, 0},
      {1, 32, 9, 18, 24, 4, 3, 3, 1, 1, 2, U, U, U, 200, 20, 2, 128, 1, 1, 0.1, 0, 0, 0},
      {2, 64, 8, 8, 64, 1, 3, 3, 1, 1, 1, U, S, U, 128, 128, 0, 0, 1, 1, 1.0, 0, 0, 0},
      {1, 4, 1, 40, 6, 1, 1, 3, 1, 1, 1, U, S, U, 128, 128, 0, 0, 1, 1, 0.1, 0, 1, 0},
      /* and its phase planes: strides 2 and 3 (odd images, pads, dilation
       * 2, a 1x1 stride-2 shortcut, groups, batch 2, s8 x) */
      {2, 16, 33, 31, 20, 1, 3, 3, 2, 1, 1, U, S, U, 128, 128, 0, 0, 1, 1, 0.3, 0, 0, 0},
      {1, 32, 16, 16, 64, 1, 1, 1, 2, 0, 1, U, S, U, 100, 128, 0, 0, 1, 1, 0.3, 0, 0, 0},
      {1, 8, 20, 17, 11, 1, 3, 3, 3, 2, 2, S, S, U, 5, 60, 0, 0, 1, 1, 0.2, 1, 0, 0},
      {2, 24, 15, 15, 12, 2, 5, 5, 2, 2, 1, U, U, S, 128, 0, 2, 128, 0, 1, 0.4, 0, 0, 0},
      {1, 12, 1, 50, 8, 1, 1, 3, 2, 1, 1, U, S, U, 128, 128, 0, 0, 1, 1, 0.1, 0, 1, 0},
      /* depthwise stride 1 on the padded grid (8x8 and 20x20 planes, batch 2,
       * per-channel zero points) and by rows (16x16) */
      {2, 64, 8, 8, 64, 64, 3, 3, 1, 1, 1, U, S, U, 128, 128, 0, 0, 1, 1, 0.3, 0, 0, 0},
      {1, 16, 20, 20, 16, 16, 3, 3, 1, 1, 1, S, U, U, -9, 30, 1, 0, 1, 1, 0.1, 1, 0, 0},
      {1, 8, 16, 16, 8, 8, 3, 3, 1, 1, 1, U, S, S, 128, 0, 0, 0, 1, 1, 0.2, 0, 0, 0},
      /* depthwise with the channels in the vector lanes (and per plane):
       * channel counts not multiples of 16 (19, 33, 9, 8: lanes past C; 7:
       * per plane only), stride 2 with pads and odd images, batch 3, rows
       * of 16 and more (the transposes' blocks and tails) and fewer, planes
       * of fewer than 16 pixels, dilation 2, 5x5 with pads 2, SAME_UPPER,
       * zero points at the ends (0/255, -128/127), per-channel zero points,
       * a tiny y_scale (saturation), no bias, dml_clamp, s8 x and u8 w */
      {3, 19, 17, 18, 19, 19, 3, 3, 2, 1, 1, U, S, U, 0, 255, 0, 0, 1, 1, 0.3, 1, 0, 0},
      {2, 33, 16,   16,  33, 33, 3, 3, 1,   1, 1, S,
       S, S,  -128, 127, 1,  0,  1, 1, 0.1, 0, 0, 0},
      {1, 9, 3, 3, 9, 9, 3, 3, 1, 1, 1, U, U, U, 255, 0, 2, 255, 0, 1, 5.0, 0, 0, 0},
      {2, 8, 21, 13, 8, 8, 3, 3, 1, 2, 2, S, U, U, 127, 128, 1, 0, 1, 1, 0.2, 1, 0, 0},
      {1, 7, 12, 12, 7, 7, 3, 3, 2, 1, 1, U, S, U, 128, 128, 0, 0, 1, 1, 0.2, 0, 0, 0},
      {1, 24, 11,  35,  24, 24, 5, 5, 1,     2, 1, U,
       S, U,  128, 128, 0,  0,  1, 1, 0.002, 0, 0, 0},
      {2, 40, 9, 9, 40, 40, 3, 3, 2, 0, 1, U, S, S, 3, -128, 0, 0, 1, 1, 0.15, 0, 0, 1},
      {1, 17, 20, 20, 17, 17, 3, 3, 2, 1, 1, S, S, U, 0, 0, 0, 0, 0, 0, 2.0, 0, 0, 0},
      /* dilation 2 with odd C, stride 3 */
      {2, 20, 15, 14, 20, 20, 3, 3, 1, 2, 2, U, S, U, 128, 128, 0, 0, 1, 1, 0.2, 0, 0, 0},
      {1, 12, 13, 17, 12, 12, 3, 3, 3, 1, 1, S, S, S, 0, 0, 0, 0, 1, 1, 0.2, 1, 0, 0},
      /* a y_scale so small that |t * sc| passes 2^30: the double clamp
       * instead of the int32 one (GEMM, depthwise in lanes and per plane) */
      {1, 16, 9, 9, 24, 1, 3, 3, 1, 1, 1, U, S, U, 128, 128, 0, 0, 1, 1, 1e-7, 0, 0, 0},
      {2, 32, 10,  10,  32, 32, 3, 3, 1,    1, 1, U,
       S, U,  100, 128, 0,  0,  1, 1, 1e-7, 0, 0, 0},
      {1, 24, 7, 7, 24, 24, 3, 3, 1, 1, 1, U, U, U, 7, 9, 1, 0, 1, 1, 1e-7, 0, 0, 0},
      /* 1x1-pixel images as the GEMM's columns (a Gemm as a 1x1 conv): odd
       * K and M, 3 tasks of 32 images, s8 x with w zero points (colsum) */
      {5, 41, 1, 1, 11, 1, 1, 1, 1, 0, 1, U, S, U, 128, 128, 0, 0, 1, 1, 0.2, 0, 0, 0},
      {70, 2000, 1, 1, 9, 1, 1, 1, 1, 0, 1, U, S, U, 100, 128, 0, 0, 1, 1, 2.0, 0, 0, 0},
      {33, 24, 1, 1, 20, 1, 1, 1, 1, 0, 1, S, U, S, -3, 5, 1, 0, 1, 1, 0.1, 1, 0, 0},
  };
  int ncase = (int)(sizeof cases / sizeof cases[0]);
  int ran_paths = 0;
  for (int i = 0; i < ncase; i++) {
    const qcase_t *q = &cases[i];
    int64_t big = q->N * q->M * (q->H + 4) * (q->W + 4);
    uint8_t *ref = calloc((size_t)big, 1), *got = calloc((size_t)big, 1);
    int64_t n = 0;
    CHECK(run_case(q, -1, 0, ref, &n) == 0);
    /* The reference gives varied values (not all saturated): the
     * comparison below can fail. */
    int seen[256] = {0}, distinct = 0;
    for (int64_t j = 0; j < n; j++) distinct += !seen[ref[j]]++;
    if (distinct <= 8) fprintf(stderr, "case %d: %d distinct values\n", i, distinct);
    if (q->ys < 0.005) /* the saturation case: both ends */
      CHECK(seen[0] && seen[255]);
    else
      CHECK(distinct > 8);
    int dw = q->group == q->C && q->M == q->C;
    for (int which = 1; which <= 4; which++)
      for (int pre = 0; pre < 2 + 2 * dw; pre++) {
        /* depthwise: pre 2 and 3 are 0 and 1 with the per-plane kernel */
        memset(got, 0x5a, (size_t)big);
        int64_t n2 = 0;
        int old = dml_cpu_qdw_lanes_set(pre < 2);
        int rc = run_case(q, which, pre % 2, got, &n2);
        dml_cpu_qdw_lanes_set(old);
        if (rc == 1) continue;
        CHECK(rc == 0);
        CHECK(n2 == n);
        int64_t bad = 0, first = -1;
        for (int64_t j = 0; j < n; j++)
          if (got[j] != ref[j]) {
            if (first < 0) first = j;
            bad++;
          }
        if (bad)
          fprintf(stderr,
                  "case %d kernel %d prepack %d: %lld of %lld differ (first %lld: %d vs "
                  "%d)\n",
                  i, which, pre, (long long)bad, (long long)n, (long long)first,
                  got[first], ref[first]);
        CHECK(bad == 0);
        ran_paths++;
      }
    free(ref), free(got);
  }
  printf("qconv: %d cases, %d path runs bit-exact vs the reference\n", ncase, ran_paths);
  CHECK(ran_paths >= ncase * 2); /* the portable path at least, both packings */
}

/* The vectorized per-tensor QuantizeLinear/DequantizeLinear on edge values:
 * ties to even, saturation, NaN low, +-inf, -0, denormals, huge values;
 * u8 and s8; lengths around the vector width. */
static void test_q_dq_edges(void) {
  /* scale 0.5: x / scale = 2x; ties 0.5, 1.5, 2.5, -2.5, 128.5, -128.5. */
  const float x[] = {NAN,     INFINITY, -INFINITY, -0.0f,   1e-45f, 1e30f, -1e30f,
                     0.25f,   0.75f,    1.25f,     -1.25f,  -0.25f, 63.5f, 64.25f,
                     -64.25f, 127.0f,   200.0f,    -300.0f, 0.5f};
  const uint8_t want_u8[] = {0,   255, 0,   128, 128, 255, 0,   128, 130, 130,
                             126, 128, 255, 255, 0,   255, 255, 0,   129};
  const int8_t want_s8[] = {-128, 127, -128, 0,   0,    127, -128, 0,    2, 2,
                            -2,   0,   127,  127, -128, 127, 127,  -128, 1};
  size_t n = sizeof x / sizeof x[0];
  float s = 0.5f;
  for (int u = 0; u < 2; u++)
    for (size_t len = 1; len <= n; len++) {
      uint8_t y[32], z = u ? 128 : 0;
      dml_tensor_t in[3] = {tens(DML_DTYPE_F32, (void *)x, 1, (int64_t)len),
                            tens(DML_DTYPE_F32, &s, 0),
                            tens(u ? DML_DTYPE_U8 : DML_DTYPE_I8, &z, 0)};
      dml_tensor_t out = tens(u ? DML_DTYPE_U8 : DML_DTYPE_I8, y, 1, (int64_t)len);
      CHECK_OK(run_op(DML_OP_QUANTIZE_LINEAR, in, 3, &out, 1, NULL, 0));
      for (size_t i = 0; i < len; i++)
        CHECK(u ? y[i] == want_u8[i] : (int8_t)y[i] == want_s8[i]);
      /* back: (y - z) * s */
      float back[32];
      dml_tensor_t din[3] = {out, in[1], in[2]};
      dml_tensor_t dout = tens(DML_DTYPE_F32, back, 1, (int64_t)len);
      CHECK_OK(run_op(DML_OP_DEQUANTIZE_LINEAR, din, 3, &dout, 1, NULL, 0));
      for (size_t i = 0; i < len; i++)
        CHECK(back[i] ==
              (float)((u ? (int)y[i] : (int)(int8_t)y[i]) - (int)(u ? 128 : 0)) * s);
    }
}

/* MaxPool of u8 and s8 (the quantized pooling the qdq-fuse pass makes)
 * against a naive max over the in-image taps: strides, pads, dilations;
 * 2x2 without pads (stride 2: the direct loop; odd H and W leave a row and
 * a column out). */
static void test_maxpool_q8(void) {
  const int64_t H = 9, W = 11, C = 3;
  uint8_t x[3 * 9 * 11], y[3 * 9 * 11];
  for (int64_t i = 0; i < C * H * W; i++) x[i] = (uint8_t)(rnd() & 0xff);
  for (int64_t k = 2; k <= 3; k++)
    for (int s8 = 0; s8 < 2; s8++)
      for (int64_t st = 1; st <= 2; st++)
        for (int64_t d = 1; d <= 2; d++) {
          int64_t p = k == 3, eff = (k - 1) * d + 1;
          int64_t OH = (H + 2 * p - eff) / st + 1, OW = (W + 2 * p - eff) / st + 1;
          dml_dtype_t dt = s8 ? DML_DTYPE_I8 : DML_DTYPE_U8;
          dml_tensor_t in = tens(dt, x, 4, D(1), C, H, W);
          dml_tensor_t out = tens(dt, y, 4, D(1), C, OH, OW);
          int64_t ks[2] = {k, k}, ss[2] = {st, st}, ds[2] = {d, d}, ps[4] = {p, p, p, p};
          dml_attr_t at[4] = {attr_ints("kernel_shape", ks, 2),
                              attr_ints("strides", ss, 2), attr_ints("dilations", ds, 2),
                              attr_ints("pads", ps, 4)};
          CHECK_OK(run_op(DML_OP_MAX_POOL, &in, 1, &out, 1, at, 4));
          int bad = 0;
          for (int64_t c = 0; c < C; c++)
            for (int64_t oh = 0; oh < OH; oh++)
              for (int64_t ow = 0; ow < OW; ow++) {
                int best = -1000;
                for (int64_t i = 0; i < k; i++)
                  for (int64_t j = 0; j < k; j++) {
                    int64_t h = oh * st - p + i * d, w = ow * st - p + j * d;
                    if (h < 0 || h >= H || w < 0 || w >= W) continue;
                    uint8_t v = x[(c * H + h) * W + w];
                    int iv = s8 ? (int)(int8_t)v : (int)v;
                    if (iv > best) best = iv;
                  }
                uint8_t g = y[(c * OH + oh) * OW + ow];
                bad += (s8 ? (int)(int8_t)g : (int)g) != best;
              }
          CHECK(bad == 0);
        }
}

/* QLinearAdd against the chain it replaces (DequantizeLinear twice, Add,
 * QuantizeLinear, each by its kernel): the same bytes, u8/s8 mixes, with
 * and without dml_clamp, saturating scales. */
static void test_qlinear_add(void) {
  enum { N = 1000 };
  uint8_t a[N], b[N], y[N], want[N], q[N];
  float da[N], db[N], sum[N];
  for (int i = 0; i < N; i++)
    a[i] = (uint8_t)(rnd() & 0xff), b[i] = (uint8_t)(rnd() & 0xff);
  const float scales[3][3] = {
      {0.02f, 0.05f, 0.07f}, {0.1f, 0.003f, 0.01f}, {1.5f, 2.5f, 0.5f}};
  for (int t = 0; t < 8; t++) {
    dml_dtype_t at = t & 1 ? DML_DTYPE_I8 : DML_DTYPE_U8;
    dml_dtype_t bt = t & 2 ? DML_DTYPE_I8 : DML_DTYPE_U8;
    dml_dtype_t yt = t & 4 ? DML_DTYPE_I8 : DML_DTYPE_U8;
    const float *sc = scales[t % 3];
    float sa = sc[0], sb = sc[1], sy = sc[2];
    uint8_t za = (uint8_t)(t * 37), zb = (uint8_t)(200 - t), zy = (uint8_t)(t * 11 + 3);
    dml_tensor_t ta = tens(at, a, 1, D(N)), tb = tens(bt, b, 1, D(N));
    dml_tensor_t sA = tens(DML_DTYPE_F32, &sa, 0), sB = tens(DML_DTYPE_F32, &sb, 0);
    dml_tensor_t sY = tens(DML_DTYPE_F32, &sy, 0);
    dml_tensor_t zA = tens(at, &za, 0), zB = tens(bt, &zb, 0), zY = tens(yt, &zy, 0);
    dml_tensor_t in1[3] = {ta, sA, zA}, o1 = tens(DML_DTYPE_F32, da, 1, D(N));
    CHECK_OK(run_op(DML_OP_DEQUANTIZE_LINEAR, in1, 3, &o1, 1, NULL, 0));
    dml_tensor_t in2[3] = {tb, sB, zB}, o2 = tens(DML_DTYPE_F32, db, 1, D(N));
    CHECK_OK(run_op(DML_OP_DEQUANTIZE_LINEAR, in2, 3, &o2, 1, NULL, 0));
    dml_tensor_t in3[2] = {o1, o2}, o3 = tens(DML_DTYPE_F32, sum, 1, D(N));
    CHECK_OK(run_op(DML_OP_ADD, in3, 2, &o3, 1, NULL, 0));
    dml_tensor_t in4[3] = {o3, sY, zY}, o4 = tens(yt, want, 1, D(N));
    CHECK_OK(run_op(DML_OP_QUANTIZE_LINEAR, in4, 3, &o4, 1, NULL, 0));
    dml_tensor_t qin[8] = {ta, sA, zA, tb, sB, zB, sY, zY};
    dml_tensor_t qo = tens(yt, y, 1, D(N));
    CHECK_OK(run_op(DML_OP_QLINEAR_ADD, qin, 8, &qo, 1, NULL, 0));
    CHECK(memcmp(y, want, N) == 0);
    /* dml_clamp = [lo, hi]: the chain's result clamped */
    int64_t lo = yt == DML_DTYPE_U8 ? 20 : -100, cl[2] = {lo, lo + 150};
    dml_attr_t at2 = attr_ints("dml_clamp", cl, 2);
    qo = tens(yt, q, 1, D(N));
    CHECK_OK(run_op(DML_OP_QLINEAR_ADD, qin, 8, &qo, 1, &at2, 1));
    int bad = 0, distinct = 0, seen[256] = {0};
    for (int i = 0; i < N; i++) {
      int w = yt == DML_DTYPE_U8 ? (int)want[i] : (int)(int8_t)want[i];
      int g = yt == DML_DTYPE_U8 ? (int)q[i] : (int)(int8_t)q[i];
      w = w < cl[0] ? (int)cl[0] : w > cl[1] ? (int)cl[1] : w;
      bad += g != w;
      distinct += !seen[want[i]]++;
    }
    CHECK(bad == 0);
    CHECK(distinct > 8);
  }
}

/* Inconsistent calls reach the reference kernel's errors (the fast path's
 * scratch sizing runs first and must not divide by a zero group or read
 * past short attribute lists). */
static void test_qconv_bad_calls(void) {
  uint8_t x[2 * 4 * 4] = {0}, w[2 * 2 * 9] = {0}, y[2 * 16] = {0}, z = 0;
  float s = 1.0f;
  dml_tensor_t in[8] = {tens(DML_DTYPE_U8, x, 4, D(1), D(2), D(4), D(4)),
                        tens(DML_DTYPE_F32, &s, 0),
                        tens(DML_DTYPE_U8, &z, 0),
                        tens(DML_DTYPE_U8, w, 4, D(2), D(2), D(3), D(3)),
                        tens(DML_DTYPE_F32, &s, 0),
                        tens(DML_DTYPE_U8, &z, 0),
                        tens(DML_DTYPE_F32, &s, 0),
                        tens(DML_DTYPE_U8, &z, 0)};
  dml_tensor_t out = tens(DML_DTYPE_U8, y, 4, D(1), D(2), D(2), D(2));
  dml_attr_t g0 = attr_i("group", 0);
  CHECK_ERROR(run_op(DML_OP_QLINEAR_CONV, in, 8, &out, 1, &g0, 1),
              DML_STATUS_INVALID_ARGUMENT, "group");
  int64_t one = 1;
  dml_attr_t st = attr_ints("strides", &one, 1);
  CHECK_ERROR(run_op(DML_OP_QLINEAR_CONV, in, 8, &out, 1, &st, 1),
              DML_STATUS_INVALID_ARGUMENT, "wrong length");
}

int main(void) {
  RUN(test_qconv_bad_calls);
  RUN(test_qlinear_add);
  RUN(test_maxpool_q8);
  RUN(test_q_dq_edges);
  RUN(test_qconv_paths);
  return dml_test_finish();
}
