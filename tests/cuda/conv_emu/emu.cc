/* emu.cc — the host emulation of one generated f16/bf16 implicit-GEMM
 * convolution kernel (codegen/cuda/cuda_mma.c, dml_codegen_cuda_mma16),
 * run by conv_emu.py: the kernel's whole CUDA C (kernel.inc: prelude,
 * epilogue, main loop; converted by conv_emu.py) runs as 256 coroutine
 * threads per block (ucontext), one block after the other, shared memory an
 * array. cp.async copies are held per thread in commit groups and land at
 * cp.async.wait_group (all but the youngest N groups), so a step read
 * before its wait reads stale shared memory; mma.sync m16n8k16 is computed
 * when all 32 lanes of the warp have arrived, from the lanes' fragments
 * (PTX ISA "Matrix Fragments for mma.m16n8k16 with floating point type"),
 * in f32. The arena and the weights hold random f16/bf16 values in [-2, 2);
 * the kernel's output is compared with a reference run on a copy of them:
 * every output element (row m < M, column n < N) through the kernel's own
 * epilogue function, fed the double sum of X (gathered as the ONNX Conv
 * defines it, 0 outside the image) times W over k = (c, i, j). Every 16-bit
 * word of both buffers must agree within CONV_EMU_STEPS rounding steps of
 * the dtype (|x - r| / max(1, |r|) / step, step 2^-10 for f16, 2^-7 for
 * bf16): only the f32 sums' order differs, so one step. Prints the
 * outputs the reference wrote and the worst error; exit 1 beyond (or no
 * output), 3 on a fault (misaligned cp.async, shared memory
 * overflow, a deadlock). Symbols (a symbolic batch) are 3. params.h
 * (conv_emu.py) gives the names, sizes and geometry. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "params.h"
#define __global__
#define __device__
#define __shared__
#define CONV_EMU_STEPS 1.0
#define NT 256
#define WORDS (1u << 22) /* 16-bit words of the arena and of the weights */

static ucontext_t sched_ctx, th_ctx[NT];
static int cur, done_[NT];
static char *stacks;
static unsigned cx, cy;
static unsigned dml_dsmem[(P_SMEM + 3) / 4];
static void fault(const char *what, unsigned v) {
  fprintf(stderr, "fault: %s (%u) in thread %d of block (%u, %u)\n", what, v, cur, cx,
          cy);
  exit(3);
}
static void yield_(void) {
  swapcontext(&th_ctx[cur], &sched_ctx);
}
static unsigned emu_sreg_tid_x(void) {
  return (unsigned)cur;
}
static unsigned emu_sreg_ctaid_x(void) {
  return cx;
}
static unsigned emu_sreg_ctaid_y(void) {
  return cy;
}
static float bits_f(unsigned u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static float h2f(uint16_t h) {
#if P_BF16
  return bits_f((unsigned)h << 16);
#else
  _Float16 x;
  memcpy(&x, &h, 2);
  return (float)x;
#endif
}
static uint16_t f2h(float f) {
#if P_BF16
  unsigned u;
  memcpy(&u, &f, 4);
  if (f != f) return 0x7fc0;
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
#else
  _Float16 x = (_Float16)f;
  uint16_t h;
  memcpy(&h, &x, 2);
  return h;
#endif
}
/* the host forms of the kernel's inline-PTX helpers */
static float dml_opaque(float x) {
  return x;
}
static double dml_opaque(double x) {
  return x;
}
static unsigned dml_cvt_f2h(float f) { /* cvt.rn.f16.f32 */
  _Float16 x = (_Float16)f;
  uint16_t h;
  memcpy(&h, &x, 2);
  return h;
}
static float dml_cvt_h2f(unsigned h) {
  _Float16 x;
  uint16_t s = (uint16_t)h;
  memcpy(&x, &s, 2);
  return (float)x;
}
static unsigned dml_smem16(const void *p) {
  return (unsigned)((const char *)p - (const char *)dml_dsmem);
}
/* cp.async: per thread, the copies of the open group and of the committed
 * groups not yet waited for */
typedef struct {
  unsigned dst, group;
  unsigned char data[16];
} cp_t;
static cp_t *cps[NT];
static unsigned n_cp[NT], cap_cp[NT], open_group[NT];
static void dml_cp16h(unsigned dst, const void *src, int ok) {
  if (dst % 16 || dst + 16 > sizeof dml_dsmem) fault("cp.async shared address", dst);
  if (ok && (uintptr_t)src % 16) fault("cp.async global address not 16-byte aligned", 0);
  if (n_cp[cur] == cap_cp[cur]) {
    cap_cp[cur] = cap_cp[cur] ? 2 * cap_cp[cur] : 64;
    cps[cur] = (cp_t *)realloc(cps[cur], cap_cp[cur] * sizeof(cp_t));
  }
  cp_t *c = &cps[cur][n_cp[cur]++];
  c->dst = dst;
  c->group = open_group[cur];
  if (ok)
    memcpy(c->data, src, 16);
  else
    memset(c->data, 0, 16);
}
static void dml_commit16(void) {
  open_group[cur]++;
}
/* cp.async.wait_group n: the groups older than the n youngest committed
 * land (the open group's copies stay pending) */
static void emu_wait(unsigned n) {
  unsigned keep = 0;
  for (unsigned i = 0; i < n_cp[cur]; i++) {
    cp_t *c = &cps[cur][i];
    if (c->group + n < open_group[cur])
      memcpy((char *)dml_dsmem + c->dst, c->data, 16);
    else
      cps[cur][keep++] = *c;
  }
  n_cp[cur] = keep;
}
/* collectives: a warp's 32 lanes (mma) or the block (barrier) */
static int arrive[NT / 32 + 1];
static unsigned gen_[NT / 32 + 1];
static void collective(int grp, int n, void (*fn)(int)) {
  if (++arrive[grp] == n) {
    fn(grp);
    arrive[grp] = 0;
    gen_[grp]++;
  } else {
    unsigned g = gen_[grp];
    while (gen_[grp] == g) yield_();
  }
}
static void nop(int g) {
  (void)g;
}
static void emu_sync(void) {
  collective(NT / 32, NT, nop);
}
static float *m_d[NT];
static unsigned m_a[NT][4], m_b[NT][2];
static float lo16(unsigned u) {
  return h2f((uint16_t)(u & 0xffff));
}
static float hi16(unsigned u) {
  return h2f((uint16_t)(u >> 16));
}
static void do_mma(int w) {
  float A[16][16], B[16][8], C[16][8];
  for (int l = 0; l < 32; l++) {
    int g = l / 4, t = l % 4;
    const unsigned *a = m_a[w * 32 + l], *b = m_b[w * 32 + l];
    float *d = m_d[w * 32 + l];
    A[g][2 * t] = lo16(a[0]);
    A[g][2 * t + 1] = hi16(a[0]);
    A[g + 8][2 * t] = lo16(a[1]);
    A[g + 8][2 * t + 1] = hi16(a[1]);
    A[g][2 * t + 8] = lo16(a[2]);
    A[g][2 * t + 9] = hi16(a[2]);
    A[g + 8][2 * t + 8] = lo16(a[3]);
    A[g + 8][2 * t + 9] = hi16(a[3]);
    B[2 * t][g] = lo16(b[0]);
    B[2 * t + 1][g] = hi16(b[0]);
    B[2 * t + 8][g] = lo16(b[1]);
    B[2 * t + 9][g] = hi16(b[1]);
    C[g][2 * t] = d[0];
    C[g][2 * t + 1] = d[1];
    C[g + 8][2 * t] = d[2];
    C[g + 8][2 * t + 1] = d[3];
  }
  for (int i = 0; i < 16; i++)
    for (int j = 0; j < 8; j++) {
      float s = C[i][j];
      for (int k = 0; k < 16; k++) s += A[i][k] * B[k][j];
      C[i][j] = s;
    }
  for (int l = 0; l < 32; l++) {
    int g = l / 4, t = l % 4;
    float *d = m_d[w * 32 + l];
    d[0] = C[g][2 * t];
    d[1] = C[g][2 * t + 1];
    d[2] = C[g + 8][2 * t];
    d[3] = C[g + 8][2 * t + 1];
  }
}
static void dml_mma16(float *d, const unsigned *a, const unsigned *b) {
  m_d[cur] = d;
  memcpy(m_a[cur], a, 16);
  memcpy(m_b[cur], b, 8);
  collective(cur / 32, 32, do_mma);
}
#include "kernel.inc"
static float *g_arena, *g_weights;
static void entry(void) {
  dml_syms_t pc;
  for (int i = 0; i < DML_NSYM; i++) pc.sym[i] = 3;
  P_KERNEL(g_arena, g_weights, pc);
  done_[cur] = 1;
}
static uint64_t rng = 88172645463325252ull;
static float frand(void) { /* [-2, 2) */
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (float)((double)(rng >> 11) / 9007199254740992.0 * 4.0 - 2.0);
}
int main(void) {
  dml_syms_t pc;
  for (int i = 0; i < DML_NSYM; i++) pc.sym[i] = 3;
  const unsigned M = P_M_EXPR, N = P_N, K = P_K;
  const unsigned OHW = P_OH * P_OW, CHW = P_C * P_H * P_W, KHW = P_KH * P_KW;
  if (K != P_C * KHW || M % OHW) fault("M or K not the convolution's", K);
  const unsigned long long a_end = P_A_OFF + (unsigned long long)(M / OHW) * CHW,
                           b_end = P_B_OFF + (unsigned long long)N * K;
  if (a_end > WORDS || b_end > WORDS) fault("the operands past the emulated buffers", 0);
  /* arena and weights, 256-byte aligned, then their reference copies,
   * then the initial values */
  uint16_t *mem = (uint16_t *)aligned_alloc(256, 6ull * WORDS * 2);
  for (size_t i = 0; i < 2ull * WORDS; i++) mem[i] = f2h(frand());
  memcpy(mem + 2ull * WORDS, mem, 2ull * WORDS * 2);
  memcpy(mem + 4ull * WORDS, mem, 2ull * WORDS * 2);
  g_arena = (float *)mem;
  g_weights = (float *)(mem + WORDS);
  float *r_arena = (float *)(mem + 2ull * WORDS),
        *r_weights = (float *)(mem + 3ull * WORDS);
  stacks = (char *)malloc((size_t)NT * 65536);
  const unsigned gx = (N + P_BLOCK_N - 1) / P_BLOCK_N, gy = (M + 127) / 128;
  for (cy = 0; cy < gy; cy++)
    for (cx = 0; cx < gx; cx++) {
      for (int t = 0; t < NT; t++) {
        getcontext(&th_ctx[t]);
        th_ctx[t].uc_stack.ss_sp = stacks + (size_t)t * 65536;
        th_ctx[t].uc_stack.ss_size = 65536;
        th_ctx[t].uc_link = &sched_ctx;
        makecontext(&th_ctx[t], entry, 0);
        done_[t] = 0;
        n_cp[t] = 0;
        open_group[t] = 0;
      }
      long rounds = 0;
      for (int left = NT; left; rounds++) {
        if (rounds > 10000000) fault("deadlock: threads wait at a collective", left);
        left = 0;
        for (int t = 0; t < NT; t++)
          if (!done_[t]) {
            cur = t;
            swapcontext(&sched_ctx, &th_ctx[t]);
            left += !done_[t];
          }
      }
      for (int t = 0; t < NT; t++)
        if (n_cp[t]) fault("cp.async copies never waited for", n_cp[t]);
    }
  /* the reference: the double sum through the kernel's epilogue */
  const uint16_t *X = (const uint16_t *)(P_A_W ? r_weights : r_arena) + P_A_OFF;
  const uint16_t *Wt = (const uint16_t *)(P_B_W ? r_weights : r_arena) + P_B_OFF;
  for (unsigned m = 0; m < M; m++) {
    const unsigned n_img = m / OHW, q = m % OHW, oh = q / P_OW, ow = q % P_OW;
    for (unsigned n = 0; n < N; n++) {
      double s = 0;
      for (unsigned k = 0; k < K; k++) {
        const unsigned c = k / KHW, i = k % KHW / P_KW, j = k % P_KW;
        const long ih = (long)oh * P_SH - P_PH + (long)i * P_DH,
                   iw = (long)ow * P_SW - P_PW + (long)j * P_DW;
        if (ih < 0 || ih >= P_H || iw < 0 || iw >= P_W) continue;
        s += (double)h2f(X[(unsigned long long)n_img * CHW + (c * P_H + ih) * P_W + iw]) *
             h2f(Wt[(unsigned long long)n * K + k]);
      }
      P_EPILOGUE(r_arena, r_weights, pc, n, m, (float)s);
    }
  }
  const double step = P_BF16 ? 1.0 / 128 : 1.0 / 1024;
  double worst = 0;
  long bad = 0, written = 0, differ = 0;
  for (size_t i = 0; i < 2ull * WORDS; i++) {
    const uint16_t x = mem[i], r = mem[2ull * WORDS + i];
    written += r != mem[4ull * WORDS + i];
    if (x == r) continue;
    differ++;
    const double xv = h2f(x), rv = h2f(r);
    double e = fabs(xv - rv) / fmax(1, fabs(rv)) / step;
    if (!(e <= worst)) worst = isnan(e) ? 1e9 : e;
    if (e > CONV_EMU_STEPS && bad++ < 5)
      fprintf(stderr, "%s word %zu: %g, reference %g\n", i < WORDS ? "arena" : "weights",
              i % WORDS, xv, rv);
  }
  printf("%ld outputs, %ld differ from the reference, worst %.2f steps (%ld bad)\n",
         written, differ, worst, bad);
  return worst <= CONV_EMU_STEPS && written > 0 ? 0 : 1;
}
