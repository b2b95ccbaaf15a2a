/* direct_emu.cc — the host run of one generated direct f16/bf16
 * convolution kernel (the scheduler's DML_KK_CONV kernel rendered by
 * codegen/cuda/cuda.c, dml_codegen_cuda), run by direct_emu.py: the
 * kernel's whole CUDA C (kernel.inc: prelude and kernel, converted by
 * direct_emu.py) runs once per thread of every block (64 threads, one per
 * output element; the kernel has no shared memory and no barrier), with
 * host forms of the prelude's inline-asm helpers: cvt.f32.f16 and
 * cvt.rn.f16.f32 as _Float16 conversions (nearest even), dml_opaque the
 * identity. The arena holds random f16/bf16 words at X, W and B (X in
 * [-2, 2), W and B in [-0.5, 0.5)); the kernel's Y is compared with a
 * double reference computed here from params.h's geometry (gen_cuda_packages
 * --conv-direct): the sum over the group's channels and the window (taps
 * outside the image skipped), plus the bias, rounded once to the dtype
 * (nearest even), then the residual Add (rounded again) and Relu. Every
 * output must agree within CONV_DIRECT_STEPS rounding steps of the dtype
 * (|y - r| / max(1, |r|) / step, step 2^-10 for f16, 2^-7 for bf16): the
 * f32 sums' order differs, so one step, and a second where the residual
 * Add rounds again. Also checks that no arena word outside Y changed.
 * Prints the outputs and the worst error; exit 1 beyond. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params.h"
#define CONV_DIRECT_STEPS (P_RESID ? 2.0 : 1.0)
#define WORDS (1u << 22) /* 16-bit words of the arena and of the weights */

static unsigned g_tid, g_ctaid;
static unsigned emu_sreg_tid_x(void) {
  return g_tid;
}
static unsigned emu_sreg_tid_y(void) {
  return 0;
}
static unsigned emu_sreg_ctaid_x(void) {
  return g_ctaid;
}
static unsigned emu_sreg_ctaid_y(void) {
  return 0;
}
/* the prelude's inline-asm helpers (dropped by direct_emu.py) */
static inline float dml_opaque(float x) {
  return x;
}
static inline double dml_opaque(double x) {
  return x;
}
static inline float dml_cvt_h2f(unsigned h) {
  uint16_t b = (uint16_t)h;
  _Float16 x;
  memcpy(&x, &b, 2);
  return (float)x;
}
static inline unsigned dml_cvt_f2h(float f) {
  _Float16 x = (_Float16)f;
  uint16_t b;
  memcpy(&b, &x, 2);
  return b;
}

#include "kernel.inc"

static float h2f(uint16_t h) {
#if P_BF16
  unsigned u = (unsigned)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
#else
  return dml_cvt_h2f(h);
#endif
}
static uint16_t f2h(double d) {
  float f = (float)d; /* the reference's double -> f32 -> 16 bits: exact
                         enough, the f32 rounding is far below a step */
#if P_BF16
  unsigned u;
  memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
#else
  return (uint16_t)dml_cvt_f2h(f);
#endif
}
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double urand(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0;
}

int main(void) {
  uint16_t *arena = (uint16_t *)aligned_alloc(256, WORDS * 2);
  uint16_t *weights = (uint16_t *)aligned_alloc(256, WORDS * 2);
  uint16_t *before = (uint16_t *)malloc(WORDS * 2);
  if (!arena || !weights || !before) return 3;
  const size_t nx = (size_t)P_N * P_C * P_H * P_W,
               nw = (size_t)P_M * (P_C / P_GROUP) * P_KH * P_KW,
               ny = (size_t)P_N * P_M * P_OH * P_OW;
  if (P_X_OFF + nx > WORDS || P_W_OFF + nw > WORDS || P_Y_OFF + ny > WORDS) return 3;
  for (size_t i = 0; i < WORDS; i++) arena[i] = 0x7e00, weights[i] = 0; /* NaN: unread */
  for (size_t i = 0; i < nx; i++) arena[P_X_OFF + i] = f2h(urand() * 4.0 - 2.0);
  for (size_t i = 0; i < nw; i++) arena[P_W_OFF + i] = f2h(urand() - 0.5);
#if P_BIAS
  for (size_t i = 0; i < (size_t)P_M; i++) arena[P_B_OFF + i] = f2h(urand() - 0.5);
#endif
  memcpy(before, arena, WORDS * 2);
  dml_syms_t pc;
  memset(&pc, 0, sizeof pc);
  for (g_ctaid = 0; g_ctaid < (ny + 63) / 64; g_ctaid++)
    for (g_tid = 0; g_tid < 64; g_tid++)
      KERNEL((float *)arena, (const float *)weights, pc);
  const int cg = P_C / P_GROUP, mg = P_M / P_GROUP;
  const double step = P_BF16 ? 1.0 / 128 : 1.0 / 1024;
  double worst = 0;
  long bad = 0;
  for (int n = 0; n < P_N; n++)
    for (int m = 0; m < P_M; m++)
      for (int oh = 0; oh < P_OH; oh++)
        for (int ow = 0; ow < P_OW; ow++) {
          double s = 0;
          for (int c = 0; c < cg; c++)
            for (int i = 0; i < P_KH; i++)
              for (int j = 0; j < P_KW; j++) {
                int ih = oh * P_SH - P_PH + i * P_DH, iw = ow * P_SW - P_PW + j * P_DW;
                if (ih < 0 || ih >= P_H || iw < 0 || iw >= P_W) continue;
                size_t xi =
                    (((size_t)n * P_C + (size_t)(m / mg) * cg + c) * P_H + ih) * P_W + iw;
                size_t wi = (((size_t)m * cg + c) * P_KH + i) * P_KW + j;
                s += (double)h2f(before[P_X_OFF + xi]) * h2f(before[P_W_OFF + wi]);
              }
#if P_BIAS
          s += h2f(before[P_B_OFF + m]);
#endif
          size_t yi = (((size_t)n * P_M + m) * P_OH + oh) * P_OW + ow;
          double r = h2f(f2h(s));
#if P_RESID
          r = h2f(f2h(r + h2f(before[P_X_OFF + yi])));
#endif
#if P_RELU
          if (r < 0) r = 0;
#endif
          double y = h2f(arena[P_Y_OFF + yi]);
          double e = fabs(y - r) / fmax(1.0, fabs(r)) / step;
          if (!(e <= CONV_DIRECT_STEPS)) {
            if (bad < 5)
              fprintf(stderr, "y[%d,%d,%d,%d] = %g, reference %g (%.2f steps)\n", n, m,
                      oh, ow, y, r, e);
            bad++;
          }
          if (e > worst || e != e) worst = e;
        }
  long stray = 0;
  for (size_t i = 0; i < WORDS; i++)
    if ((i < P_Y_OFF || i >= P_Y_OFF + ny) && arena[i] != before[i]) stray++;
  printf("%zu outputs, worst %.2f steps, %ld beyond %.0f, %ld words written outside Y\n",
         ny, worst, bad, CONV_DIRECT_STEPS, stray);
  return bad || stray ? 1 : 0;
}
