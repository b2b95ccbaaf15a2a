/*
 * test_cpu_nchwc.c — the NCHWc convolution kernels (runtime/cpu/cpu_nchwc.c,
 * dml_cpu_run_fused with ep->nchwc) against a double-precision reference
 * convolution: pointwise 1x1 (C, M in 16/32/48, odd H x W) and depthwise
 * (3x3 and 5x5, strides 1 and 2, symmetric, asymmetric and no pads, odd
 * sizes, rows narrower than the 8-output blocks and rows over several of the
 * direct 3x3 kernel's 12-output strips, inf and NaN weights), batch 1 and 3, 1
 * and 2 threads, every X/Y layout pair (blocked or NCHW: the run edges' reorders), with
 * bias, BatchNormalization scale/shift, a residual and Relu, and NaN, +-inf, -0,
 * subnormal and huge values in X. Each output is within 2e-6 x (1 + |scale| x sum |x w| +
 * |ref|) of the reference, or the same NaN / inf class; 2 threads give the
 * same bits as 1. Also the structured errors (no NCHWc kernel, residual
 * with an NCHW Y, no work memory, no packed weights). Skipped (reported)
 * where the CPU has no AVX-512.
 */
#include <math.h>
#include <stdio.h>

#include "cpu_internal.h"
#include "cpu_test_util.h"

#if DML_CPU_X86
static uint32_t g_s = 1u;
static float nrand(void) {
  g_s = g_s * 1664525u + 1013904223u;
  return (float)((g_s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

typedef struct {
  int64_t N, C, M, H, W, KH, KW, s, pt, pl, pb, pr;
  int dw;
  int wedge; /* inf and NaN among the weights */
} ncase_t;

/* NCHW [N][C][HW] <-> [N][C/16][HW][16]. */
static void to_blocked(const float *src, float *dst, int64_t N, int64_t C, int64_t HW,
                       int to) {
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t p = 0; p < HW; p++) {
        int64_t a = (n * C + c) * HW + p,
                b = ((n * (C / 16) + c / 16) * HW + p) * 16 + c % 16;
        if (to)
          dst[b] = src[a];
        else
          dst[a] = src[b];
      }
}

static int64_t g_checked, g_bad;
static double g_worst;

static void run_case(const ncase_t *q, int ep_kind, int layout, int threads,
                     float *keep_bits /* NULL or the 1-thread result to compare */,
                     float **got_out) {
  g_s = 99u + (uint32_t)(q->C * 7 + q->M * 3 + q->H + q->KH * 11 + q->s);
  int64_t OH = (q->H + q->pt + q->pb - q->KH) / q->s + 1;
  int64_t OW = (q->W + q->pl + q->pr - q->KW) / q->s + 1;
  int64_t Cg = q->dw ? 1 : q->C;
  int64_t nx = q->N * q->C * q->H * q->W, ny = q->N * q->M * OH * OW;
  int64_t nw = q->M * Cg * q->KH * q->KW;
  float *x = malloc(sizeof(float) * nx), *w = malloc(sizeof(float) * nw);
  float *b = malloc(sizeof(float) * q->M), *sc = malloc(sizeof(float) * q->M);
  float *sh = malloc(sizeof(float) * q->M), *res = malloc(sizeof(float) * ny);
  float *ref = malloc(sizeof(float) * ny), *tol = malloc(sizeof(float) * ny);
  float *y = malloc(sizeof(float) * ny), *xin = malloc(sizeof(float) * nx);
  float *rin = malloc(sizeof(float) * ny), *yb = malloc(sizeof(float) * ny);
  float *packed = NULL;
  for (int64_t i = 0; i < nx; i++) x[i] = 2.0f * nrand();
  const float edge[] = {NAN, INFINITY, -INFINITY, -0.0f, 1e-40f, -1e-40f, 1e30f, -1e30f};
  for (int i = 0; i < 8; i++) x[(i * 977 + 5) % nx] = edge[i];
  for (int64_t i = 0; i < nw; i++) w[i] = nrand();
  if (q->wedge) w[1] = INFINITY, w[nw - 1] = NAN, w[nw / 2] = -INFINITY;
  for (int64_t m = 0; m < q->M; m++)
    b[m] = 0.5f * nrand(), sc[m] = 1.0f + 0.5f * nrand(), sh[m] = 0.1f * nrand();
  for (int64_t i = 0; i < ny; i++) res[i] = nrand();
  int bias = ep_kind >= 1, bn = ep_kind >= 2, relu = ep_kind >= 2, resid = ep_kind == 3;
  /* reference: double sums, then the epilogue's f32 steps */
  for (int64_t n = 0; n < q->N; n++)
    for (int64_t m = 0; m < q->M; m++)
      for (int64_t oh = 0; oh < OH; oh++)
        for (int64_t ow = 0; ow < OW; ow++) {
          double s = 0, mag = 0;
          for (int64_t c = 0; c < Cg; c++) {
            int64_t ic = q->dw ? m : c;
            for (int64_t kh = 0; kh < q->KH; kh++)
              for (int64_t kw = 0; kw < q->KW; kw++) {
                int64_t ih = oh * q->s - q->pt + kh, iw = ow * q->s - q->pl + kw;
                double xv = ih >= 0 && ih < q->H && iw >= 0 && iw < q->W
                                ? x[((n * q->C + ic) * q->H + ih) * q->W + iw]
                                : 0.0;
                double wv = w[((m * Cg + c) * q->KH + kh) * q->KW + kw];
                s += xv * wv;
                mag += fabs(xv * wv);
              }
          }
          int64_t at = ((n * q->M + m) * OH + oh) * OW + ow;
          float v = (float)s;
          if (bias) v = v + b[m];
          if (bn) v = v * sc[m] + sh[m];
          if (resid) v = v + res[at];
          if (relu) v = v < 0 ? 0.0f : v;
          ref[at] = v;
          tol[at] = (float)(2e-6 * (1.0 + (bn ? fabs(sc[m]) : 1.0) * mag + fabs(v)));
        }
  dml_tensor_t wt = tens(DML_DTYPE_F32, w, 4, q->M, Cg, q->KH, q->KW);
  size_t pb = dml_cpu_nchwc_prepack_bytes(&wt);
  CHECK(pb == (size_t)nw * sizeof(float));
  if (posix_memalign((void **)&packed, 64, pb ? pb : 64) != 0) packed = NULL;
  dml_cpu_nchwc_prepack(&wt, packed);
  int64_t HW = q->H * q->W, OHW = OH * OW;
  if (layout & DML_CPU_NCHWC_X)
    to_blocked(x, xin, q->N, q->C, HW, 1);
  else
    memcpy(xin, x, sizeof(float) * nx);
  if (layout & DML_CPU_NCHWC_Y)
    to_blocked(res, rin, q->N, q->M, OHW, 1);
  else
    memcpy(rin, res, sizeof(float) * ny);
  int64_t ks[2] = {q->KH, q->KW}, st[2] = {q->s, q->s},
          pads[4] = {q->pt, q->pl, q->pb, q->pr};
  dml_attr_t at[4] = {attr_ints("kernel_shape", ks, 2), attr_ints("strides", st, 2),
                      attr_ints("pads", pads, 4), attr_i("group", q->dw ? q->C : 1)};
  CHECK(dml_cpu_nchwc_conv_kind(&wt, at, 4, q->C, q->H, q->W) ==
        (q->dw ? DML_CPU_NCHWC_DEPTHWISE : DML_CPU_NCHWC_POINTWISE));
  dml_tensor_t in[3] = {tens(DML_DTYPE_F32, xin, 4, q->N, q->C, q->H, q->W), wt,
                        bias ? tens(DML_DTYPE_F32, b, 1, q->M) : absent()};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 4, q->N, q->M, OH, OW);
  dml_cpu_call_t c = cpu_call(DML_OP_CONV, "nchwc", in, 3, &out, 1, at, 4);
  size_t wf = dml_cpu_nchwc_work_floats(&wt, at, 4, q->C, q->H, q->W, layout);
  float *work = wf ? malloc(sizeof(float) * wf * 2) : NULL;
  dml_cpu_epilogue_t ep;
  memset(&ep, 0, sizeof ep);
  ep.scale = bn ? sc : NULL, ep.shift = bn ? sh : NULL, ep.relu = relu;
  ep.residual = resid ? rin : NULL, ep.packed = packed;
  ep.nchwc = DML_CPU_NCHWC_ON | layout;
  ep.work = work, ep.work_floats = wf, ep.work_threads = 2;
  dml_cpu_set_num_threads(threads);
  CHECK_OK(dml_cpu_run_fused(&c, &ep));
  dml_cpu_set_num_threads(1);
  if (layout & DML_CPU_NCHWC_Y)
    to_blocked(y, yb, q->N, q->M, OHW, 0);
  else
    memcpy(yb, y, sizeof(float) * ny);
  int64_t bad = 0;
  for (int64_t i = 0; i < ny; i++) {
    float g = yb[i], r = ref[i];
    int ok;
    if (isnan(r) || isinf(r) || !isfinite(tol[i]))
      ok = isnan(r) ? isnan(g) : (isinf(r) ? g == r : 1);
    else {
      double e = fabs((double)g - r);
      ok = e <= tol[i];
      if (ok && e / tol[i] * 2e-6 > g_worst) g_worst = e / tol[i] * 2e-6;
    }
    if (!ok && bad++ < 3)
      printf(
          "  %s C%lld M%lld %lldx%lld k%lld s%lld ep%d lay%d t%d: [%lld] got %g want "
          "%g\n",
          q->dw ? "dw" : "pw", (long long)q->C, (long long)q->M, (long long)q->H,
          (long long)q->W, (long long)q->KH, (long long)q->s, ep_kind, layout, threads,
          (long long)i, g, r);
  }
  g_checked += ny;
  g_bad += bad;
  if (keep_bits) CHECK(memcmp(keep_bits, yb, sizeof(float) * ny) == 0);
  if (got_out) {
    *got_out = yb;
    yb = NULL;
  }
  free(x), free(w), free(b), free(sc), free(sh), free(res), free(ref), free(tol), free(y);
  free(xin), free(rin), free(yb), free(packed), free(work);
}

static void run_all(const ncase_t *q) {
  for (int ep_kind = 0; ep_kind < 4; ep_kind++)
    for (int layout = 0; layout < 8; layout += 2) {
      if (ep_kind == 3 && !(layout & DML_CPU_NCHWC_Y)) continue; /* unsupported: below */
      float *one = NULL;
      run_case(q, ep_kind, layout, 1, NULL, &one);
      run_case(q, ep_kind, layout, 2, one, NULL);
      free(one);
    }
}

static void test_pointwise(void) {
  const int64_t cs[3] = {16, 32, 48};
  for (int a = 0; a < 3; a++)
    for (int bm = 0; bm < 3; bm++) {
      ncase_t q = {3, cs[a], cs[bm], 7, 9, 1, 1, 1, 0, 0, 0, 0, 0, 0};
      run_all(&q);
    }
  ncase_t big = {2, 16, 32, 32, 32, 1, 1, 1, 0, 0, 0, 0, 0, 0}; /* mobilenet_tiny's pw0 */
  run_all(&big);
  ncase_t one = {1, 32, 48, 5, 3, 1, 1, 1, 0, 0, 0, 0, 0, 0};
  run_all(&one);
}

static void test_depthwise(void) {
  const int64_t cs[3] = {16, 32, 48};
  for (int a = 0; a < 3; a++)
    for (int s = 1; s <= 2; s++) {
      ncase_t q = {3, cs[a], cs[a], 13, 11, 3, 3, s, 1, 1, 1, 1, 1, 0};
      run_all(&q);
    }
  ncase_t asym = {2, 16, 16, 9, 19, 3, 3, 2, 0, 1, 1, 0, 1, 0};
  run_all(&asym);
  ncase_t nopad = {2, 32, 32, 10, 12, 3, 3, 1, 0, 0, 0, 0, 1, 0};
  run_all(&nopad);
  ncase_t k5 = {2, 16, 16, 12, 17, 5, 5, 2, 2, 2, 2, 2, 1, 0};
  run_all(&k5);
  ncase_t wide = {1, 16, 16, 32, 32, 3, 3,
                  1, 1,  1,  1,  1,  1, 0}; /* mobilenet_tiny's dw0 */
  run_all(&wide);
  /* the direct 3x3 kernel's strips of 12 and 4 outputs: inside strips, a
   * checked strip at either edge or both, a short last strip */
  ncase_t strips = {2, 16, 16, 6, 29, 3, 3, 1, 1, 1, 1, 1, 1, 0};
  run_all(&strips);
  ncase_t strips2 = {1, 32, 32, 7, 31, 3, 3, 2, 2, 2, 0, 0, 1, 0};
  run_all(&strips2);
  ncase_t strips3 = {1, 16, 16, 5, 40, 3, 3, 1, 0, 0, 1, 2, 1, 1};
  run_all(&strips3);
  ncase_t pad2 = {2, 16, 16, 7, 14, 3, 3, 1, 2, 2, 2, 2, 1, 1}; /* 2-column edge strips */
  run_all(&pad2);
  ncase_t pad2s2 = {1, 32, 32, 9, 19, 3, 3, 2, 2, 2, 2, 2, 1, 0};
  run_all(&pad2s2);
  ncase_t tiny = {2, 16, 16, 2, 3, 3, 3, 2, 1, 1, 1, 1, 1, 0}; /* no inside outputs */
  run_all(&tiny);
  /* non-finite weights: a padded tap adds 0 * inf = NaN, as the NCHW kernels */
  ncase_t wedge = {2, 32, 32, 9, 21, 3, 3, 1, 1, 1, 1, 1, 1, 1};
  run_all(&wedge);
  ncase_t wedge2 = {1, 16, 16, 11, 10, 3, 3, 2, 1, 1, 1, 1, 1, 1};
  run_all(&wedge2);
  ncase_t pwedge = {2, 16, 32, 5, 7, 1, 1, 1, 0, 0, 0, 0, 0, 1};
  run_all(&pwedge);
}

#endif /* DML_CPU_X86 */

/* Structured errors, no crash. */
static void test_errors(void) {
  float x[8 * 4 * 4] = {0}, w[16 * 8] = {0}, y[16 * 16] = {0}, pk[16 * 16] = {0};
  dml_tensor_t in[2] = {tens(DML_DTYPE_F32, x, 4, D(1), D(8), D(4), D(4)),
                        tens(DML_DTYPE_F32, w, 4, D(16), D(8), D(1), D(1))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 4, D(1), D(16), D(4), D(4));
  dml_cpu_call_t c = cpu_call(DML_OP_CONV, "bad", in, 2, &out, 1, NULL, 0);
  dml_cpu_epilogue_t ep;
  memset(&ep, 0, sizeof ep);
  ep.packed = pk;
  ep.nchwc = DML_CPU_NCHWC_ON | DML_CPU_NCHWC_X | DML_CPU_NCHWC_Y;
  /* 8 input channels: no NCHWc kernel */
  CHECK(dml_cpu_nchwc_conv_kind(&in[1], NULL, 0, 8, 4, 4) == 0);
  CHECK_ERROR(dml_cpu_run_fused(&c, &ep), DML_STATUS_UNIMPLEMENTED, "no NCHWc kernel");
  float x16[16 * 16] = {0}, w16[16 * 16] = {0};
  in[0] = tens(DML_DTYPE_F32, x16, 4, D(1), D(16), D(4), D(4));
  in[1] = tens(DML_DTYPE_F32, w16, 4, D(16), D(16), D(1), D(1));
  /* a residual with an NCHW Y */
  ep.residual = y;
  ep.nchwc = DML_CPU_NCHWC_ON | DML_CPU_NCHWC_X;
  ep.work = y, ep.work_floats = 256, ep.work_threads = 1;
  CHECK_ERROR(dml_cpu_run_fused(&c, &ep), DML_STATUS_UNIMPLEMENTED, "residual");
  /* an NCHW edge without work memory */
  ep.residual = NULL, ep.work = NULL;
  CHECK_ERROR(dml_cpu_run_fused(&c, &ep), DML_STATUS_INVALID_ARGUMENT, "work floats");
  /* no packed weights */
  ep.nchwc = DML_CPU_NCHWC_ON | DML_CPU_NCHWC_X | DML_CPU_NCHWC_Y, ep.packed = NULL;
  CHECK_ERROR(dml_cpu_run_fused(&c, &ep), DML_STATUS_INVALID_ARGUMENT, "nchwc_prepack");
  /* a wrong Y */
  ep.packed = pk;
  out.dims[2] = 3;
  CHECK_ERROR(dml_cpu_run_fused(&c, &ep), DML_STATUS_INVALID_ARGUMENT, "Y must be");
}

int main(void) {
#if DML_CPU_X86
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f")) {
    printf("no AVX-512 on this CPU: the NCHWc kernels are not planned here; skipped\n");
    RUN(test_errors);
    return dml_test_finish();
  }
  RUN(test_pointwise);
  RUN(test_depthwise);
  printf("NCHWc: %lld outputs checked, %lld outside the bound, worst %.2e of 2e-6\n",
         (long long)g_checked, (long long)g_bad, g_worst);
  CHECK(g_bad == 0 && g_checked > 0);
#else
  printf("not x86-64 with GCC: no NCHWc kernels (errors only)\n");
#endif
  RUN(test_errors);
  return dml_test_finish();
}
