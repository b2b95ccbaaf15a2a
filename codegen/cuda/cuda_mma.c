/* cuda_mma.c — the tensor-core form of GEMM kernels for the CUDA target:
 * a CUDA C main loop of mma.sync.m16n8k8 TF32 instructions (PTX ISA 7.0,
 * sm_80 and later) over the kernel's product (dml_kgemm_t), followed by
 * the kernel IR's epilogue rendered as a device function. Used only when
 * the user allows TF32 (`dmlc compile --allow-tf32`): TF32 keeps 10
 * mantissa bits of each operand (relative error per product about 2^-11),
 * so results differ from f32 GEMM beyond the 1e-4 the f32 paths keep.
 *
 * Tiling: a block of 256 threads (8 warps, 2 along M x 4 along N) computes
 * a 128 x 256 tile of C as two 128 x 128 halves, one after the other (the
 * geometry of the sm_90a wgmma form, cuda_wgmma.c, which the same package
 * entry carries); per half, K advances 32 at a time through a 3-stage ring of
 * shared-memory buffers filled by cp.async (16-byte copies where the
 * operand's rows are 16-byte aligned, else 4-byte ones; zero-filled past
 * the edges), so two steps' loads are in flight while one step multiplies.
 * The ring (105 KB) is dynamic shared memory: the module exports
 * "<kernel>_dynamic_smem" and the runtime opts the function in. Each tile
 * keeps its operand's stored layout, rows padded by 4 or 8 floats so a
 * warp's fragment reads hit 32 distinct banks; operands are rounded to
 * TF32 (cvt.rna) as the fragments are read. Each warp computes 64 x 32:
 * 4 x 4 mma tiles of 16 x 8. Fragment layouts: PTX ISA, "Matrix Fragments
 * for mma.m16n8k8" (.tf32): A a0 (g, t), a1 (g + 8, t), a2 (g, t + 4),
 * a3 (g + 8, t + 4); B b0 (k = t, n = g), b1 (k = t + 4, n = g); C c0 (g,
 * 2t), c1 (g, 2t + 1), c2 (g + 8, 2t), c3 (g + 8, 2t + 1), with
 * g = lane / 4, t = lane % 4. */
#include <stdlib.h>
#include <string.h>

#include "c_emit.h"
#include "cuda_internal.h"
#include "dml_codegen.h"

#define MMA_BM 128
#define MMA_BN 128
#define MMA_BK 32
#define MMA_THREADS 256
#define MMA_STAGES 3

int dml_codegen_cuda_mma_applies(const dml_kernel_t *k) {
  const dml_kgemm_t *g = k->gemm;
  /* the epilogue may hold typed values (compares, casts: its renderer
   * declares them, dml_cuda_typed_views / dml_cemit_regs), but not random
   * bits (training Dropout keeps the plain form) */
  /* a convolution with fewer than 64 products per output (C * kh * kw:
   * a 1x1 shortcut, a 3-channel stem) wastes most of the 32-deep K step:
   * its direct form was faster on the H200 (bench/RESULTS.md) */
  return (k->kind == DML_KK_GEMM ||
          (k->kind == DML_KK_CONV && g && g->conv && g->k >= 64)) &&
         g && g->dtype == DML_KT_F32 && g->epilogue && g->n >= 1 && g->k >= 1 &&
         g->n <= (1 << 30) && g->k <= (1 << 30) &&
         !(dml_kernel_views(k) & DML_KVIEW_RAND);
}

void dml_codegen_cuda_mma_geometry(const dml_kernel_t *k, uint32_t local[3],
                                   dml_klin_t items[3]) {
  const dml_kgemm_t *g = k->gemm;
  local[0] = MMA_THREADS, local[1] = 1, local[2] = 1;
  /* one block per 128 x 256 tile (two 128 x 128 halves one after the
   * other): the geometry of the wgmma form (cuda_wgmma.c), so that both
   * images of a package entry launch alike */
  items[0] =
      (dml_klin_t){0, -1, ((g->n + 2 * MMA_BN - 1) / (2 * MMA_BN)) * MMA_THREADS, 0};
  /* ceil(M / 128) blocks along y; with a symbol, ceil(c / 128) * sym +
   * ceil(c0 / 128) >= ceil(M / 128) (blocks past M return at once) */
  if (g->m.sym < 0)
    items[1] = (dml_klin_t){0, -1, (g->m.c + g->m.c0 + MMA_BM - 1) / MMA_BM, 0};
  else
    items[1] = (dml_klin_t){(g->m.c + MMA_BM - 1) / MMA_BM, g->m.sym,
                            (g->m.c0 + MMA_BM - 1) / MMA_BM, 0};
  items[2] = (dml_klin_t){0, -1, 1, 0};
}

static const char k_helpers[] =
    "DML_DEV unsigned dml_tf32(unsigned bits) {\n"
    "  unsigned r;\n"
    "  asm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(r) : \"f\"(__builtin_bit_cast(float, "
    "bits)));\n"
    "  return r;\n"
    "}\n"
    "DML_DEV void dml_mma_tf32(float *d, const unsigned *a, const unsigned *b) {\n"
    "  asm volatile(\n"
    "      \"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 \"\n"
    "      \"{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\"\n"
    "      : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3])\n"
    "      : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), "
    "\"r\"(b[1]));\n"
    "}\n"
    "/* the shared-window address of a generic pointer to shared memory */\n"
    "DML_DEV unsigned dml_smem(const void *p) {\n"
    "  unsigned a;\n"
    "  asm(\"{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }\" : \"=r\"(a) "
    ": "
    "\"l\"(p));\n"
    "  return a;\n"
    "}\n"
    "/* cp.async of 16 (or 4) bytes, zero-filled when !ok (nothing read) */\n"
    "DML_DEV void dml_cp16(unsigned dst, const void *src, int ok) {\n"
    "  asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16, %2;\" :: \"r\"(dst), "
    "\"l\"(src), \"r\"(ok ? 16 : 0));\n"
    "}\n"
    "DML_DEV void dml_cp4(unsigned dst, const void *src, int ok) {\n"
    "  asm volatile(\"cp.async.ca.shared.global [%0], [%1], 4, %2;\" :: \"r\"(dst), "
    "\"l\"(src), \"r\"(ok ? 4 : 0));\n"
    "}\n"
    "DML_DEV void dml_cp_commit(void) { asm volatile(\"cp.async.commit_group;\"); }\n";

/* One operand's tile. In shared memory the tile keeps the operand's stored
 * layout (rows x cols of the row-major stored matrix, row stride `stride`
 * floats: cols + 4 or + 8 so that a warp's fragment reads hit 32 distinct
 * banks). With `vec`, each cp.async moves 16 bytes along a stored row (the
 * rows and the base 16-byte aligned, the row length a multiple of 4). */
typedef struct tile_io {
  const char *ptr;           /* "A" / "B" */
  const char *smem;          /* "As" / "Bs" */
  int rows, cols, stride;    /* the tile as stored */
  const char *row0, *col0;   /* first stored row / column of the tile */
  const char *nrows, *ncols; /* the stored matrix's extent (bounds) */
  const char *ld;            /* elements per stored row */
  int vec;
} tile_io_t;

/* Issues the cp.asyncs of one tile into stage `stage` (C expression). */
static void emit_copy_tile(dml_sb_t *b, const tile_io_t *t, const char *stage) {
  int w = t->vec ? 4 : 1;
  int per = t->rows * t->cols / w / MMA_THREADS, cpr = t->cols / w;
  dml_sb_printf(b, "#pragma unroll\n      for (int i = 0; i < %d; i++) {\n", per);
  dml_sb_printf(
      b, "        unsigned e = tid + %uu * i, r = e / %du, c = (e %% %du) * %du;\n",
      MMA_THREADS, cpr, cpr, w);
  dml_sb_printf(b, "        unsigned gr = %s + r, gc = %s + c;\n", t->row0, t->col0);
  dml_sb_printf(b, "        int ok = gr < %s && gc < %s;\n", t->nrows, t->ncols);
  dml_sb_printf(b,
                "        dml_cp%d(%s_s + ((%s) * %du + r * %du + c) * 4u, ok ? %s + gr * "
                "%s + gc : %s, ok);\n",
                t->vec ? 16 : 4, t->smem, stage, t->rows * t->stride, t->stride, t->ptr,
                t->ld, t->ptr);
  dml_sb_printf(b, "      }\n");
}

/* Issues the cp.asyncs of a convolution's A tile (BM rows of m = (n, oh,
 * ow) by BK columns of k = (c, i, j), dml_kconv_t) into stage `stage`:
 * gathered 4 bytes at a time from X, zero-filled outside the image and
 * past M and K. Neighbouring threads take neighbouring rows (neighbouring
 * output columns ow), so a warp reads mostly adjacent floats of X. */
static void emit_gather_tile(dml_sb_t *b, const dml_kconv_t *c, int stride,
                             const char *stage) {
  const int per = MMA_BM * MMA_BK / MMA_THREADS;
  dml_sb_printf(b, "#pragma unroll\n      for (int i = 0; i < %d; i++) {\n", per);
  dml_sb_printf(
      b,
      "        unsigned e = tid + %uu * i, r = e %% %du, c = e / %du;\n"
      "        unsigned m = bm + r, kx = k0 + c;\n"
      "        unsigned n = m / %lldu, q = m %% %lldu, oh = q / %lldu, ow = q %% "
      "%lldu;\n"
      "        unsigned ci = kx / %lldu, q2 = kx %% %lldu, ki = q2 / %lldu, kj = q2 "
      "%% %lldu;\n"
      "        int ih = (int)(oh * %lldu + ki * %lldu) - %lld;\n"
      "        int iw = (int)(ow * %lldu + kj * %lldu) - %lld;\n"
      "        int ok = m < M && kx < K && ih >= 0 && ih < %lld && iw >= 0 && iw < "
      "%lld;\n",
      MMA_THREADS, MMA_BM, MMA_BM, (long long)(c->OH * c->OW), (long long)(c->OH * c->OW),
      (long long)c->OW, (long long)c->OW, (long long)(c->kh * c->kw),
      (long long)(c->kh * c->kw), (long long)c->kw, (long long)c->kw,
      (long long)c->stride[0], (long long)c->dil[0], (long long)c->pad[0],
      (long long)c->stride[1], (long long)c->dil[1], (long long)c->pad[1],
      (long long)c->H, (long long)c->W);
  dml_sb_printf(
      b,
      "        dml_cp4(As_s + ((%s) * %du + r * %du + c) * 4u, ok ? A + ((n * %lldu "
      "+ ci) * %lldu + (unsigned)ih) * %lldu + (unsigned)iw : A, ok);\n",
      stage, MMA_BM * stride, stride, (long long)c->C, (long long)c->H, (long long)c->W);
  dml_sb_printf(b, "      }\n");
}

/* The run-time value of count `l` as CUDA C. */
static void lin_text(char *buf, size_t cap, dml_klin_t l) {
  if (l.sym < 0)
    snprintf(buf, cap, "%lldu", (long long)(l.c0 + l.c));
  else
    snprintf(buf, cap, "(%lldu * pc.sym[%d] + %lldu)", (long long)l.c, l.sym,
             (long long)l.c0);
}

void dml_cuda_tc_epilogue(dml_sb_t *b, const dml_kernel_t *k, int call) {
  const dml_kgemm_t *g = k->gemm;
  dml_cuda_typed_helpers(b, k);
  dml_sb_printf(b,
                "%s void %s_epilogue(float *__restrict__ arena, %sfloat "
                "*__restrict__ weights, const dml_syms_t &pc, unsigned gid_x, "
                "unsigned gid_y, float acc) {\n",
                call ? "static __device__ __attribute__((noinline))" : "DML_DEV", k->name,
                k->writes_weights ? "" : "const ");
  dml_cuda_typed_views(b, k);
  dml_cemit_regs(b, dml_cuda_dialect(), k);
  dml_sb_printf(b, "  r%u = acc;\n  (void)arena, (void)weights, (void)pc;\n", g->acc_reg);
  dml_cemit_stmts(b, dml_cuda_dialect(), g->epilogue, 1);
  dml_sb_printf(b, "}\n");
}

dml_status_t dml_codegen_cuda_mma(const dml_kernel_t *k, uint32_t n_symbols,
                                  char **out_text) {
  if (!dml_codegen_cuda_mma_applies(k))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "codegen.cuda",
                           "kernel %s has no tensor-core form", k->name);
  const dml_kgemm_t *g = k->gemm;
  dml_sb_t b = {0};
  dml_sb_printf(&b,
                "// dmlc kernel %s_tf32 (%s, TF32 tensor cores)\n#define DML_NSYM %u\n%s",
                k->name, g->conv ? "implicit-GEMM conv" : "gemm",
                n_symbols ? n_symbols : 1, dml_cuda_prelude());
  /* the epilogue: one element of C, the product in register acc_reg (an
   * Assign in it stores into the weights: writes_weights) */
  dml_cuda_tc_epilogue(&b, k, 0);
  const char *wq = k->writes_weights ? "" : "const ";
  char m[96];
  lin_text(m, sizeof m, g->m);
  char name[64];
  snprintf(name, sizeof name, "%s_tf32", k->name);
  /* 16-byte copies where every stored row and the base are 16-byte aligned */
  int m_vec = g->m.c % 4 == 0 && g->m.c0 % 4 == 0;
  int a_vec = !g->conv && g->a_off % 4 == 0 && (g->ta ? m_vec : g->k % 4 == 0);
  int b_vec = g->b_off % 4 == 0 && (g->tb ? g->k % 4 == 0 : g->n % 4 == 0);
  /* A is [M, K] (tile 128 x 32 from (bm, k0)) or stored [K, M] (32 x 128
   * from (k0, bm)); B is [K, N] (32 x 128 from (k0, bn)) or stored [N, K]
   * (128 x 32 from (bn, k0)) */
  tile_io_t ta = {"A",
                  "As",
                  g->ta ? MMA_BK : MMA_BM,
                  g->ta ? MMA_BM : MMA_BK,
                  g->ta ? MMA_BM + 8 : MMA_BK + 4,
                  g->ta ? "k0" : "bm",
                  g->ta ? "bm" : "k0",
                  g->ta ? "K" : "M",
                  g->ta ? "M" : "K",
                  g->ta ? "M" : "K",
                  a_vec};
  tile_io_t tb = {"B",
                  "Bs",
                  g->tb ? MMA_BN : MMA_BK,
                  g->tb ? MMA_BK : MMA_BN,
                  g->tb ? MMA_BK + 4 : MMA_BN + 8,
                  g->tb ? "bn" : "k0",
                  g->tb ? "k0" : "bn",
                  g->tb ? "N" : "K",
                  g->tb ? "K" : "N",
                  g->tb ? "K" : "N",
                  b_vec};
  uint32_t a_stage = (uint32_t)(ta.rows * ta.stride),
           b_stage = (uint32_t)(tb.rows * tb.stride);
  uint32_t smem = MMA_STAGES * (a_stage + b_stage) * 4;
  dml_sb_printf(&b, "%s", k_helpers);
  dml_sb_printf(
      &b,
      "/* dynamic shared memory of %s, bytes (the runtime reads it: "
      "docs/kernels.md) */\n"
      "extern \"C\" __device__ __attribute__((used)) unsigned %s_dynamic_smem = "
      "%uu;\n",
      name, name, smem);
  dml_sb_printf(&b,
                "extern __shared__ __attribute__((aligned(16))) unsigned dml_dsmem[];\n");
  dml_sb_printf(&b,
                "extern \"C\" __global__ void __attribute__((launch_bounds(%d)))\n"
                "%s(float *__restrict__ arena, %sfloat *__restrict__ weights, "
                "dml_syms_t pc) {\n",
                MMA_THREADS, name, wq);
  dml_sb_printf(&b, "  const unsigned M = %s, N = %lldu, K = %lldu;\n", m,
                (long long)g->n, (long long)g->k);
  dml_sb_printf(&b, "  const float *__restrict__ A = %s + %lldu;\n",
                g->a_buf == DML_KBUF_WEIGHTS ? "weights" : "arena", (long long)g->a_off);
  dml_sb_printf(&b, "  const float *__restrict__ B = %s + %lldu;\n",
                g->b_buf == DML_KBUF_WEIGHTS ? "weights" : "arena", (long long)g->b_off);
  dml_sb_printf(&b,
                "  const unsigned tid = __nvvm_read_ptx_sreg_tid_x();\n"
                "  const unsigned bn0 = __nvvm_read_ptx_sreg_ctaid_x() * %du;\n"
                "  const unsigned bm = __nvvm_read_ptx_sreg_ctaid_y() * %du;\n"
                "  if (bm >= M) return;\n"
                "  const unsigned lane = tid & 31u, warp = tid >> 5;\n"
                "  const unsigned g = lane >> 2, t = lane & 3u;\n"
                "  const unsigned wm = (warp >> 2) * 64u, wn = (warp & 3u) * 32u;\n"
                "  /* %d stages of A's tile (%u floats) then %d of B's (%u floats) */\n"
                "  const unsigned *As = dml_dsmem, *Bs = dml_dsmem + %uu;\n"
                "  const unsigned As_s = dml_smem(As), Bs_s = dml_smem(Bs);\n"
                "  /* the block's 128 x 256 tile as two 128 x 128 halves */\n"
                "  for (unsigned half = 0; half < 2u; half++) {\n"
                "  const unsigned bn = bn0 + half * %du;\n"
                "  if (bn >= N) break;\n"
                "  /* every thread is past the first half's reads of the ring */\n"
                "  __syncthreads();\n"
                "  float acc[4][4][4];\n"
                "#pragma unroll\n"
                "  for (int i = 0; i < 4; i++)\n"
                "#pragma unroll\n"
                "    for (int j = 0; j < 4; j++)\n"
                "#pragma unroll\n"
                "      for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;\n"
                "  const unsigned nk = (K + %du) / %du;\n"
                "  /* prologue: the first %d steps in flight */\n"
                "#pragma unroll\n"
                "  for (unsigned s = 0; s < %du; s++) {\n"
                "    if (s < nk) {\n"
                "      const unsigned k0 = s * %du;\n",
                2 * MMA_BN, MMA_BM, MMA_STAGES, a_stage, MMA_STAGES, b_stage,
                MMA_STAGES * a_stage, MMA_BN, MMA_BK - 1, MMA_BK, MMA_STAGES - 1,
                MMA_STAGES - 1, MMA_BK);
  if (g->conv)
    emit_gather_tile(&b, g->conv, ta.stride, "s");
  else
    emit_copy_tile(&b, &ta, "s");
  emit_copy_tile(&b, &tb, "s");
  dml_sb_printf(&b,
                "    }\n"
                "    dml_cp_commit();\n"
                "  }\n"
                "  for (unsigned kt = 0; kt < nk; kt++) {\n"
                "    /* step kt has landed (at most %d younger groups pending) */\n"
                "    asm volatile(\"cp.async.wait_group %d;\");\n"
                "    __syncthreads();\n"
                "    /* step kt + %d into the stage step kt - 1 used: every thread is\n"
                "     * past that step's mma (the barrier above) */\n"
                "    {\n"
                "      const unsigned s = kt + %du, st = s %% %du, k0 = s * %du;\n"
                "      if (s < nk) {\n",
                MMA_STAGES - 2, MMA_STAGES - 2, MMA_STAGES - 1, MMA_STAGES - 1,
                MMA_STAGES, MMA_BK);
  if (g->conv)
    emit_gather_tile(&b, g->conv, ta.stride, "st");
  else
    emit_copy_tile(&b, &ta, "st");
  emit_copy_tile(&b, &tb, "st");
  /* A(m, k) with m = wm + i*16 + g (+8), k = kk + t (+4); B(k, n) with
   * k = kk + t (+4), n = wn + j*8 + g; in the stored layout of each */
  char af[4][96], bf[2][96];
  static const char *am[4] = {"m", "m + 8u", "m", "m + 8u"};
  static const char *ak[4] = {"kk + t", "kk + t", "kk + t + 4u", "kk + t + 4u"};
  for (int i = 0; i < 4; i++)
    snprintf(af[i], sizeof af[i], "(%s) * %du + (%s)", g->ta ? ak[i] : am[i], ta.stride,
             g->ta ? am[i] : ak[i]);
  for (int i = 0; i < 2; i++)
    snprintf(bf[i], sizeof bf[i], "(%s) * %du + (%s)", g->tb ? "n" : ak[2 * i], tb.stride,
             g->tb ? ak[2 * i] : "n");
  dml_sb_printf(
      &b,
      "      }\n"
      "      dml_cp_commit();\n"
      "    }\n"
      "    const unsigned *a_st = As + (kt %% %du) * %du;\n"
      "    const unsigned *b_st = Bs + (kt %% %du) * %du;\n"
      "#pragma unroll\n"
      "    for (unsigned kk = 0; kk < %du; kk += 8u) {\n"
      "      unsigned af[4][4], bf[4][2];\n"
      "#pragma unroll\n"
      "      for (int i = 0; i < 4; i++) {\n"
      "        const unsigned m = wm + i * 16u + g;\n"
      "        af[i][0] = dml_tf32(a_st[%s]);\n"
      "        af[i][1] = dml_tf32(a_st[%s]);\n"
      "        af[i][2] = dml_tf32(a_st[%s]);\n"
      "        af[i][3] = dml_tf32(a_st[%s]);\n"
      "      }\n"
      "#pragma unroll\n"
      "      for (int j = 0; j < 4; j++) {\n"
      "        const unsigned n = wn + j * 8u + g;\n"
      "        bf[j][0] = dml_tf32(b_st[%s]);\n"
      "        bf[j][1] = dml_tf32(b_st[%s]);\n"
      "      }\n"
      "#pragma unroll\n"
      "      for (int i = 0; i < 4; i++)\n"
      "#pragma unroll\n"
      "        for (int j = 0; j < 4; j++) dml_mma_tf32(acc[i][j], af[i], bf[j]);\n"
      "    }\n"
      "  }\n"
      "#pragma unroll\n"
      "  for (int i = 0; i < 4; i++)\n"
      "#pragma unroll\n"
      "    for (int j = 0; j < 4; j++)\n"
      "#pragma unroll\n"
      "      for (int e = 0; e < 4; e++)\n"
      "        %s_epilogue(arena, weights, pc, bn + wn + j * 8u + 2u * t + (e & 1),\n"
      "                    bm + wm + i * 16u + g + (e >> 1) * 8u, acc[i][j][e]);\n"
      "  }\n"
      "}\n",
      MMA_STAGES, a_stage, MMA_STAGES, b_stage, MMA_BK, af[0], af[1], af[2], af[3], bf[0],
      bf[1], k->name);
  if (b.oom) {
    free(b.p);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen.cuda",
                           "out of memory");
  }
  *out_text = b.p;
  return DML_OK;
}

/* ---- f16/bf16: mma.sync.m16n8k16 ----
 *
 * GEMMs of f16 or bf16 operands run on tensor cores whenever the target
 * is sm_80 or later (no flag: the operands have no more precision to lose,
 * and the products are summed in f32 as the CUDA-core forms do, so the
 * result is rounded to the dtype once, in the epilogue). Tiling as above:
 * 256 threads (8 warps, 2 along M x 4 along N, 64 x 32 each: 4 x 4 mma
 * tiles of 16 x 8) per 128 x 128 tile of C, a block taking the two halves
 * of a 128 x 256 tile one after the other (the geometry of the sm_90a
 * wgmma form, cuda_wgmma.c, which the same package entry carries), K in
 * steps of 32 through a
 * 3-stage cp.async ring of the operands' 16-bit words in their stored
 * layouts (rows padded by 8 halves: a warp's fragment reads hit distinct
 * banks). Only 16-byte copies: the form applies when every stored row of
 * A and B and their bases are 16-byte aligned (the row lengths multiples
 * of 8 elements); other GEMMs keep the CUDA-core form. Fragment layouts:
 * PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type":
 * A a0 (g, 2t..2t+1), a1 (g + 8, 2t..), a2 (g, 2t + 8..), a3 (g + 8,
 * 2t + 8..); B b0 (k = 2t..2t+1, n = g), b1 (k = 2t + 8.., n = g); each
 * register two 16-bit elements, the lower k in the low half; C as for
 * m16n8k8. A row-major A and a transposed B ([N, K]) give a register in
 * one 32-bit shared load; the other layouts pack two 16-bit loads.
 * Implicit-GEMM convolutions (dml_kconv_t, f16/bf16 X and W) take the same
 * main loop with A [M, K] gathered from X and B = W [N, K], both staged
 * through registers 2 bytes at a time where cp.async cannot copy them
 * (emit_stage16_load below: A always, W where its rows are not 16-byte
 * aligned). */

#define H16_BM 128
#define H16_BN 128
#define H16_BK 32
#define H16_THREADS 256
#define H16_STAGES 3
#define H16_PAD 8 /* halves of padding per stored row of a tile */

/* 1 when B's tile takes 16-byte cp.asyncs: every stored row of B and its
 * base 16-byte aligned (row lengths and offset multiples of 8 halves) */
static int b_vec16(const dml_kgemm_t *g) {
  return g->b_off % 8 == 0 && (g->tb ? g->k % 8 == 0 : g->n % 8 == 0);
}

/* The 128-column halves of C one block computes: two for a GEMM (the
 * wgmma form's 128 x 256 geometry, which the same package entry carries),
 * one for a convolution (no wgmma image: twice the blocks, each half as
 * long, which a small batch's few row tiles need). */
static int h16_halves(const dml_kgemm_t *g) {
  return g->conv ? 1 : 2;
}

/* Whether a 1x1 f16/bf16 convolution keeps the direct kernel rather than
 * the implicit GEMM (issue 19; docs/kernels.md "f16/bf16 implicit-GEMM
 * convolutions"): the one place of the choice. A 1x1 conv whose implicit
 * GEMM has fewer 128 x 128 output tiles at the batch bound than the H100
 * has SMs (H16_SMS, 132: less than one block per SM) keeps the direct
 * kernel. On the H100 at batch 1 (mobilenet_v2 f16, 224x224, bench/RESULTS.md
 * stop 23) the implicit GEMMs of such layers (1-25 blocks, one serial K
 * loop each, no split-K) took 0.022 ms (64 -> 384 at 14x14), 0.041 ms (384
 * -> 64) and 0.064 ms (960 -> 160 at 7x7) where the f32 direct kernel took
 * 0.0084, 0.019 and 0.048 ms; the f16 direct kernel, then 1.1-2.3x slower
 * than f32's at large K, issues its loads as f32's does since its taps'
 * conversions became bare (docs/kernels.md "CUDA"), so it is expected at
 * f32's times (to be measured on the H100). 3x3 and wider windows keep
 * the tensor cores whatever the tile count: their direct kernels were not
 * faster at batch 1 (resnet18 f16: 1.60 ms with the tensor cores against
 * 1.53 ms f32), and at batch 32 the tensor cores won 2.4x (resnet18).
 * Depthwise and grouped convolutions have no implicit-GEMM form (direct
 * always). */
#define H16_SMS 132

static int conv16_direct_1x1(const dml_kgemm_t *g) {
  if (!g->conv || g->conv->kh != 1 || g->conv->kw != 1) return 0;
  int64_t m = g->m_max > 0 ? g->m_max : g->m.c + g->m.c0;
  if (m > ((int64_t)1 << 40)) m = (int64_t)1 << 40; /* a saturated bound */
  const int64_t tiles = ((m + H16_BM - 1) / H16_BM) *
                        ((g->n + h16_halves(g) * H16_BN - 1) / (h16_halves(g) * H16_BN));
  return tiles < H16_SMS;
}

int dml_codegen_cuda_mma16_applies(const dml_kernel_t *k) {
  const dml_kgemm_t *g = k->gemm;
  if (!g || !g->epilogue) return 0;
  if (g->dtype != DML_KT_F16 && g->dtype != DML_KT_BF16) return 0;
  /* random bits in the epilogue (training Dropout) keep the plain form */
  if (dml_kernel_views(k) & DML_KVIEW_RAND) return 0;
  if (g->n < 1 || g->k < 1 || g->n > (1 << 30) || g->k > (1 << 30)) return 0;
  if (g->m.c < 0 || g->m.c0 < 0) return 0;
  /* an implicit-GEMM convolution (group 1, static spatial dims: the record
   * exists only then) with at least 64 products per output, as the TF32
   * form, but for the 1x1 convs of few output tiles (conv16_direct_1x1); A
   * is gathered 2 bytes at a time, B (the weights [N, K]) by 16-byte
   * cp.asyncs where aligned, else 2 bytes at a time */
  if (k->kind == DML_KK_CONV)
    return g->conv && g->k >= 64 && g->tb && !g->ta && !conv16_direct_1x1(g);
  if (k->kind != DML_KK_GEMM || g->conv || g->a_off % 8) return 0;
  int m8 = g->m.c % 8 == 0 && g->m.c0 % 8 == 0;
  return (g->ta ? m8 : g->k % 8 == 0) && b_vec16(g);
}

void dml_codegen_cuda_mma16_geometry(const dml_kernel_t *k, uint32_t local[3],
                                     dml_klin_t items[3]) {
  const dml_kgemm_t *g = k->gemm;
  const int64_t bn = h16_halves(g) * H16_BN;
  local[0] = H16_THREADS, local[1] = 1, local[2] = 1;
  items[0] = (dml_klin_t){0, -1, ((g->n + bn - 1) / bn) * H16_THREADS, 0};
  if (g->m.sym < 0)
    items[1] = (dml_klin_t){0, -1, (g->m.c + g->m.c0 + H16_BM - 1) / H16_BM, 0};
  else
    items[1] = (dml_klin_t){(g->m.c + H16_BM - 1) / H16_BM, g->m.sym,
                            (g->m.c0 + H16_BM - 1) / H16_BM, 0};
  items[2] = (dml_klin_t){0, -1, 1, 0};
}

static const char k_helpers16[] =
    "DML_DEV unsigned dml_smem16(const void *p) {\n"
    "  unsigned a;\n"
    "  asm(\"{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }\" : \"=r\"(a) "
    ": \"l\"(p));\n"
    "  return a;\n"
    "}\n"
    "/* cp.async of 16 bytes, zero-filled when !ok (nothing read) */\n"
    "DML_DEV void dml_cp16h(unsigned dst, const void *src, int ok) {\n"
    "  asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16, %2;\" :: \"r\"(dst), "
    "\"l\"(src), \"r\"(ok ? 16 : 0));\n"
    "}\n"
    "DML_DEV void dml_commit16(void) { asm volatile(\"cp.async.commit_group;\"); }\n"
    "/* two 16-bit words, the first in the low half */\n"
    "DML_DEV unsigned dml_pack16(unsigned short lo, unsigned short hi) {\n"
    "  return (unsigned)lo | ((unsigned)hi << 16);\n"
    "}\n";

/* A tile of 16-bit words as stored (rows x cols, row stride `stride`
 * halves) filled by 16-byte cp.asyncs into stage `stage`. */
typedef struct tile16 {
  const char *ptr, *smem;    /* "A" / "As_s" */
  int rows, cols, stride;    /* the tile as stored */
  const char *row0, *col0;   /* first stored row / column of the tile */
  const char *nrows, *ncols; /* the stored matrix's extent */
  const char *ld;            /* elements per stored row */
} tile16_t;

static void emit_copy16(dml_sb_t *b, const tile16_t *t, const char *stage) {
  int cpr = t->cols / 8, per = t->rows * cpr / H16_THREADS;
  dml_sb_printf(b, "#pragma unroll\n      for (int i = 0; i < %d; i++) {\n", per);
  dml_sb_printf(b,
                "        unsigned e = tid + %uu * i, r = e / %du, c = (e %% %du) * 8u;\n",
                H16_THREADS, cpr, cpr);
  dml_sb_printf(b, "        unsigned gr = %s + r, gc = %s + c;\n", t->row0, t->col0);
  dml_sb_printf(b, "        int ok = gr < %s && gc < %s;\n", t->nrows, t->ncols);
  dml_sb_printf(
      b,
      "        dml_cp16h(%s + ((%s) * %du + r * %du + c) * 2u, ok ? %s + gr * %s + "
      "gc : %s, ok);\n",
      t->smem, stage, t->rows * t->stride, t->stride, t->ptr, t->ld, t->ptr);
  dml_sb_printf(b, "      }\n");
}

/* The 32-bit fragment register of elements (row, col) and (row + dr,
 * col + dc) of a stored tile `st` (stride `stride`): one load when they
 * are adjacent in a row, else two packed. */
static void frag_text(char *buf, size_t cap, const char *st, const char *row,
                      const char *col, int stride, int adjacent) {
  if (adjacent)
    snprintf(buf, cap, "*(const unsigned *)(%s + (%s) * %du + (%s))", st, row, stride,
             col);
  else
    snprintf(buf, cap, "dml_pack16(%s[(%s) * %du + (%s)], %s[(%s + 1u) * %du + (%s)])",
             st, row, stride, col, st, row, stride, col);
}

/* Register-staged tiles (the implicit-GEMM convolution's A always, its B
 * where W's rows are not 16-byte aligned): 2-byte elements have no
 * cp.async (4 bytes is its least size, and a gathered pair of X is neither
 * contiguous nor aligned in general), so each thread loads its 8 pairs of
 * 16-bit words of step s into registers before the step-kt mma and stores
 * them (one 32-bit shared store a pair) after it, into the stage step kt - 1
 * used. Thread tid takes tile row tid % 128 (A: m, the output pixel; B: n,
 * the output channel) and the k pairs tid / 128 + 2i, i < 8 (a warp: 32
 * neighbouring rows at one k, i.e. neighbouring output pixels of X). */
#define H16_PAIRS (H16_BM * H16_BK / 2 / H16_THREADS)

/* The gather table's largest K (two tables of u32: 48 KiB of the 64 KiB
 * of constant memory) */
#define H16_TAB_MAX 6144

/* 1 when the convolution's gather reads its k decomposition from tables
 * (below): K <= H16_TAB_MAX and the window's taps, pads and image within
 * 15 bits. */
static int gather_tables(const dml_kgemm_t *g) {
  const dml_kconv_t *c = g->conv;
  return g->k <= H16_TAB_MAX && (c->kh - 1) * c->dil[0] < 32768 &&
         (c->kw - 1) * c->dil[1] < 32768 && c->H < 32768 && c->W < 32768 &&
         c->pad[0] < 16384 && c->pad[1] < 16384 &&
         c->C * c->H * c->W < ((int64_t)1 << 31);
}

/* The device function dml_gather_x(ax, ih0, iw0, abase, kx): element (m,
 * kx) of the convolution's A, with ax the row's image X[n], (ih0, iw0) the
 * window's top-left corner (negative in the padding; ih0 = -2^20 for a row
 * past M) and abase = ih0 * W + iw0; 0 outside the image and past K. With
 * tables (gather_tables), k = (c, i, j) is read, not divided out: per k,
 * dml_ktap the tap (i * dil0) | (j * dil1) << 16 and dml_koff the offset
 * c * H * W + i * dil0 * W + j * dil1, padded to a multiple of 32 entries
 * with taps outside every image; a warp's 32 lanes read one k (constant
 * memory broadcasts). Else the division form. The first line states the
 * convolution (tests/cuda/conv_emu reads it). */
static void emit_gather16_fn(dml_sb_t *b, const dml_kgemm_t *g) {
  const dml_kconv_t *c = g->conv;
  dml_sb_printf(b,
                "/* the implicit GEMM of Conv: C %lld H %lld W %lld kh %lld kw %lld OH "
                "%lld OW %lld stride %lld %lld dilation %lld %lld pad %lld %lld */\n",
                (long long)c->C, (long long)c->H, (long long)c->W, (long long)c->kh,
                (long long)c->kw, (long long)c->OH, (long long)c->OW,
                (long long)c->stride[0], (long long)c->stride[1], (long long)c->dil[0],
                (long long)c->dil[1], (long long)c->pad[0], (long long)c->pad[1]);
  if (!gather_tables(g)) {
    dml_sb_printf(
        b,
        "DML_DEV unsigned short dml_gather_x(const unsigned short *__restrict__ ax, "
        "int ih0, int iw0, int abase, unsigned kx) {\n"
        "  (void)abase;\n"
        "  const unsigned ci = kx / %lldu, q = kx %% %lldu, ki = q / %lldu, kj = q "
        "%% %lldu;\n"
        "  const int ih = ih0 + (int)(ki * %lldu), iw = iw0 + (int)(kj * %lldu);\n"
        "  return kx < %lldu && (unsigned)ih < %lldu && (unsigned)iw < %lldu\n"
        "             ? ax[(ci * %lldu + (unsigned)ih) * %lldu + (unsigned)iw]\n"
        "             : (unsigned short)0;\n"
        "}\n",
        (long long)(c->kh * c->kw), (long long)(c->kh * c->kw), (long long)c->kw,
        (long long)c->kw, (long long)c->dil[0], (long long)c->dil[1], (long long)g->k,
        (long long)c->H, (long long)c->W, (long long)c->H, (long long)c->W);
    return;
  }
  const int64_t n = (g->k + 31) / 32 * 32, khw = c->kh * c->kw;
  for (int t = 0; t < 2; t++) {
    dml_sb_printf(b, "static __attribute__((constant)) const unsigned %s[%lld] = {",
                  t ? "dml_koff" : "dml_ktap", (long long)n);
    for (int64_t k = 0; k < n; k++) {
      const int64_t ci = k / khw, i = k % khw / c->kw, j = k % c->kw;
      const int64_t di = i * c->dil[0], dj = j * c->dil[1];
      uint32_t v = k >= g->k ? (t ? 0u : 0xffffffffu)
                   : t       ? (uint32_t)(ci * c->H * c->W + di * c->W + dj)
                             : (uint32_t)(di | dj << 16);
      dml_sb_printf(b, "%s%s%uu", k ? "," : "", k % 16 ? "" : "\n  ", v);
    }
    dml_sb_printf(b, "};\n");
  }
  dml_sb_printf(
      b,
      "DML_DEV unsigned short dml_gather_x(const unsigned short *__restrict__ ax, "
      "int ih0, int iw0, int abase, unsigned kx) {\n"
      "  const unsigned tap = dml_ktap[kx];\n"
      "  const int ih = ih0 + (int)(tap & 0xffffu), iw = iw0 + (int)(tap >> 16);\n"
      "  return (unsigned)ih < %lldu && (unsigned)iw < %lldu\n"
      "             ? ax[abase + (int)dml_koff[kx]]\n"
      "             : (unsigned short)0;\n"
      "}\n",
      (long long)c->H, (long long)c->W);
}

/* Loads this thread's pairs of step k0 into registers `reg`: of A (`a`)
 * gathered from X, else of B from the weights row bw (bok: the row < N). */
static void emit_stage16_load(dml_sb_t *b, int a, const char *reg) {
  dml_sb_printf(b,
                "#pragma unroll\n"
                "      for (int i = 0; i < %d; i++) {\n"
                "        const unsigned kx = k0 + 2u * ((tid >> 7) + 2u * i);\n",
                H16_PAIRS);
  if (a)
    dml_sb_printf(
        b,
        "        %s[i] = dml_pack16(dml_gather_x(ax, ih0, iw0, abase, kx),\n"
        "                           dml_gather_x(ax, ih0, iw0, abase, kx + 1u));\n",
        reg);
  else
    dml_sb_printf(
        b,
        "        %s[i] = dml_pack16(bok && kx < K ? bw[kx] : (unsigned short)0,\n"
        "                           bok && kx + 1u < K ? bw[kx + 1u] : (unsigned "
        "short)0);\n",
        reg);
  dml_sb_printf(b, "      }\n");
}

/* Stores registers `reg` into stage `stage` of the tile at 32-bit word
 * `base` of the dynamic shared memory (rows of `stride` halves). */
static void emit_stage16_store(dml_sb_t *b, const char *reg, uint32_t base,
                               uint32_t stage_halves, int stride, const char *stage) {
  dml_sb_printf(
      b,
      "#pragma unroll\n"
      "      for (int i = 0; i < %d; i++)\n"
      "        dml_dsmem[%uu + ((%s) * %uu + (tid & 127u) * %du) / 2u + (tid >> 7) + "
      "2u * i] = %s[i];\n",
      H16_PAIRS, base, stage, stage_halves, stride, reg);
}

dml_status_t dml_codegen_cuda_mma16(const dml_kernel_t *k, uint32_t n_symbols,
                                    char **out_text) {
  if (!dml_codegen_cuda_mma16_applies(k))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "codegen.cuda",
                           "kernel %s has no f16/bf16 tensor-core form", k->name);
  const dml_kgemm_t *g = k->gemm;
  const char *ty = g->dtype == DML_KT_BF16 ? "bf16" : "f16";
  char name[80];
  snprintf(name, sizeof name, "%.20s_mma_%s", k->name, ty); /* as cuda.c names it */
  dml_sb_t b = {0};
  const int conv = g->conv != NULL, bvec = b_vec16(g);
  dml_sb_printf(&b, "// dmlc kernel %s (%s, %s tensor cores)\n#define DML_NSYM %u\n%s",
                name, conv ? "implicit-GEMM conv" : "gemm", ty, n_symbols ? n_symbols : 1,
                dml_cuda_prelude());
  /* the epilogue: one element of C, the f32 product in register acc_reg,
   * with the plain kernel's typed registers and views */
  dml_cuda_tc_epilogue(&b, k, 0);
  const char *wq = k->writes_weights ? "" : "const ";
  dml_sb_printf(&b, "%s", k_helpers16);
  dml_sb_printf(
      &b,
      "DML_DEV void dml_mma16(float *d, const unsigned *a, const unsigned *b) {\n"
      "  asm volatile(\n"
      "      \"mma.sync.aligned.m16n8k16.row.col.f32.%s.%s.f32 \"\n"
      "      \"{%%0, %%1, %%2, %%3}, {%%4, %%5, %%6, %%7}, {%%8, %%9}, "
      "{%%0, %%1, %%2, %%3};\"\n"
      "      : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3])\n"
      "      : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), "
      "\"r\"(b[1]));\n"
      "}\n",
      ty, ty);
  if (conv) emit_gather16_fn(&b, g);
  char m[96];
  lin_text(m, sizeof m, g->m);
  /* A is [M, K] (tile 128 x 32 from (bm, k0)) or stored [K, M] (32 x 128
   * from (k0, bm)); B is [K, N] (32 x 128 from (k0, bn)) or stored [N, K]
   * (128 x 32 from (bn, k0)) */
  tile16_t ta = {"A",
                 "As_s",
                 g->ta ? H16_BK : H16_BM,
                 g->ta ? H16_BM : H16_BK,
                 (g->ta ? H16_BM : H16_BK) + H16_PAD,
                 g->ta ? "k0" : "bm",
                 g->ta ? "bm" : "k0",
                 g->ta ? "K" : "M",
                 g->ta ? "M" : "K",
                 g->ta ? "M" : "K"};
  tile16_t tb = {"B",
                 "Bs_s",
                 g->tb ? H16_BN : H16_BK,
                 g->tb ? H16_BK : H16_BN,
                 (g->tb ? H16_BK : H16_BN) + H16_PAD,
                 g->tb ? "bn" : "k0",
                 g->tb ? "k0" : "bn",
                 g->tb ? "N" : "K",
                 g->tb ? "K" : "N",
                 g->tb ? "K" : "N"};
  uint32_t a_stage = (uint32_t)(ta.rows * ta.stride),
           b_stage = (uint32_t)(tb.rows * tb.stride);
  uint32_t smem = H16_STAGES * (a_stage + b_stage) * 2;
  dml_sb_printf(
      &b,
      "/* dynamic shared memory of %s, bytes (the runtime reads it: "
      "docs/kernels.md) */\n"
      "extern \"C\" __device__ __attribute__((used)) unsigned %s_dynamic_smem = "
      "%uu;\n"
      "extern __shared__ __attribute__((aligned(16))) unsigned dml_dsmem[];\n",
      name, name, smem);
  dml_sb_printf(&b,
                "extern \"C\" __global__ void __attribute__((launch_bounds(%d)))\n"
                "%s(float *__restrict__ arena, %sfloat *__restrict__ weights, "
                "dml_syms_t pc) {\n",
                H16_THREADS, name, wq);
  dml_sb_printf(&b, "  const unsigned M = %s, N = %lldu, K = %lldu;\n", m,
                (long long)g->n, (long long)g->k);
  dml_sb_printf(&b,
                "  const unsigned short *__restrict__ A = (const unsigned short *)%s + "
                "%lldu;\n",
                g->a_buf == DML_KBUF_WEIGHTS ? "weights" : "arena", (long long)g->a_off);
  dml_sb_printf(&b,
                "  const unsigned short *__restrict__ B = (const unsigned short *)%s + "
                "%lldu;\n",
                g->b_buf == DML_KBUF_WEIGHTS ? "weights" : "arena", (long long)g->b_off);
  /* register-staged tiles: the thread's row of A (its pixel of X and
   * window corner) and of B (a row of W), and the registers of a step */
  char a_decl[640] = "", b_decl[320] = "";
  if (conv) {
    const dml_kconv_t *c = g->conv;
    snprintf(
        a_decl, sizeof a_decl,
        "  const unsigned am = bm + (tid & 127u), an = am / %lldu, aq = am %% %lldu;\n"
        "  const int aok = am < M;\n"
        "  const unsigned short *__restrict__ ax = A + (aok ? an : 0u) * %lldu;\n"
        "  const int ih0 = aok ? (int)((aq / %lldu) * %lldu) - %lld : -1048576;\n"
        "  const int iw0 = (int)((aq %% %lldu) * %lldu) - %lld;\n"
        "  const int abase = (int)((unsigned)ih0 * %lldu + (unsigned)iw0);\n"
        "  unsigned ra[%d];\n",
        (long long)(c->OH * c->OW), (long long)(c->OH * c->OW),
        (long long)(c->C * c->H * c->W), (long long)c->OW, (long long)c->stride[0],
        (long long)c->pad[0], (long long)c->OW, (long long)c->stride[1],
        (long long)c->pad[1], (long long)c->W, H16_PAIRS);
  }
  if (!bvec)
    snprintf(
        b_decl, sizeof b_decl,
        "  const int bok = bn + (tid & 127u) < N;\n"
        "  const unsigned short *__restrict__ bw = B + (bok ? bn + (tid & 127u) : 0u) "
        "* K;\n"
        "  unsigned rb[%d];\n",
        H16_PAIRS);
  dml_sb_printf(&b,
                "  const unsigned tid = __nvvm_read_ptx_sreg_tid_x();\n"
                "  const unsigned bn0 = __nvvm_read_ptx_sreg_ctaid_x() * %du;\n"
                "  const unsigned bm = __nvvm_read_ptx_sreg_ctaid_y() * %du;\n"
                "  if (bm >= M) return;\n"
                "  const unsigned lane = tid & 31u, warp = tid >> 5;\n"
                "  const unsigned g = lane >> 2, t = lane & 3u;\n"
                "  const unsigned wm = (warp >> 2) * 64u, wn = (warp & 3u) * 32u;\n"
                "  /* %d stages of A's tile (%u halves) then %d of B's (%u halves) */\n"
                "  const unsigned short *As = (const unsigned short *)dml_dsmem;\n"
                "  const unsigned short *Bs = As + %uu;\n"
                "  const unsigned As_s = dml_smem16(As), Bs_s = dml_smem16(Bs);\n"
                "  (void)As_s, (void)Bs_s;\n"
                "%s"
                "  /* the block's tile as %d 128 x 128 half(s), one after the other */\n"
                "  for (unsigned half = 0; half < %du; half++) {\n"
                "  const unsigned bn = bn0 + half * %du;\n"
                "  if (bn >= N) break;\n"
                "  /* every thread is past the first half's reads of the ring */\n"
                "  __syncthreads();\n"
                "%s"
                "  float acc[4][4][4];\n"
                "#pragma unroll\n"
                "  for (int i = 0; i < 4; i++)\n"
                "#pragma unroll\n"
                "    for (int j = 0; j < 4; j++)\n"
                "#pragma unroll\n"
                "      for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;\n"
                "  const unsigned nk = (K + %du) / %du;\n"
                "  /* prologue: the first %d steps in flight */\n"
                "#pragma unroll\n"
                "  for (unsigned s = 0; s < %du; s++) {\n"
                "    if (s < nk) {\n"
                "      const unsigned k0 = s * %du;\n",
                h16_halves(g) * H16_BN, H16_BM, H16_STAGES, a_stage, H16_STAGES, b_stage,
                H16_STAGES * a_stage, a_decl, h16_halves(g), h16_halves(g), H16_BN,
                b_decl, H16_BK - 1, H16_BK, H16_STAGES - 1, H16_STAGES - 1, H16_BK);
  if (conv) {
    emit_stage16_load(&b, 1, "ra");
    emit_stage16_store(&b, "ra", 0, a_stage, ta.stride, "s");
  } else {
    emit_copy16(&b, &ta, "s");
  }
  if (bvec) {
    emit_copy16(&b, &tb, "s");
  } else {
    emit_stage16_load(&b, 0, "rb");
    emit_stage16_store(&b, "rb", H16_STAGES * a_stage / 2, b_stage, tb.stride, "s");
  }
  dml_sb_printf(&b,
                "    }\n"
                "    dml_commit16();\n"
                "  }\n"
                "  for (unsigned kt = 0; kt < nk; kt++) {\n"
                "    /* step kt has landed (at most %d younger groups pending) */\n"
                "    asm volatile(\"cp.async.wait_group %d;\");\n"
                "    __syncthreads();\n"
                "    /* step kt + %d into the stage step kt - 1 used: every thread is\n"
                "     * past that step's mma (the barrier above) */\n"
                "    {\n"
                "      const unsigned s = kt + %du, st = s %% %du, k0 = s * %du;\n"
                "      if (s < nk) {\n",
                H16_STAGES - 2, H16_STAGES - 2, H16_STAGES - 1, H16_STAGES - 1,
                H16_STAGES, H16_BK);
  if (conv)
    emit_stage16_load(&b, 1, "ra");
  else
    emit_copy16(&b, &ta, "st");
  if (bvec)
    emit_copy16(&b, &tb, "st");
  else
    emit_stage16_load(&b, 0, "rb");
  /* fragments: A(m, k) with m = wm + i*16 + g (+8), k = kk + 2t (+8) and
   * k + 1; B(k, n) with k = kk + 2t (+8) and k + 1, n = wn + j*8 + g */
  static const char *am[4] = {"m", "m + 8u", "m", "m + 8u"};
  static const char *ak[4] = {"kk + 2u * t", "kk + 2u * t", "kk + 2u * t + 8u",
                              "kk + 2u * t + 8u"};
  char af[4][160], bf[2][160];
  for (int i = 0; i < 4; i++) {
    if (g->ta) /* stored [K, M]: k is the row, its pair one row down */
      frag_text(af[i], sizeof af[i], "a_st", ak[i], am[i], ta.stride, 0);
    else
      frag_text(af[i], sizeof af[i], "a_st", am[i], ak[i], ta.stride, 1);
  }
  for (int i = 0; i < 2; i++) {
    if (g->tb) /* stored [N, K] */
      frag_text(bf[i], sizeof bf[i], "b_st", "n", ak[2 * i], tb.stride, 1);
    else
      frag_text(bf[i], sizeof bf[i], "b_st", ak[2 * i], "n", tb.stride, 0);
  }
  dml_sb_printf(
      &b,
      "      }\n"
      "      dml_commit16();\n"
      "    }\n"
      "    const unsigned short *a_st = As + (kt %% %du) * %du;\n"
      "    const unsigned short *b_st = Bs + (kt %% %du) * %du;\n"
      "#pragma unroll\n"
      "    for (unsigned kk = 0; kk < %du; kk += 16u) {\n"
      "      unsigned af[4][4], bf[4][2];\n"
      "#pragma unroll\n"
      "      for (int i = 0; i < 4; i++) {\n"
      "        const unsigned m = wm + i * 16u + g;\n"
      "        af[i][0] = %s;\n"
      "        af[i][1] = %s;\n"
      "        af[i][2] = %s;\n"
      "        af[i][3] = %s;\n"
      "      }\n"
      "#pragma unroll\n"
      "      for (int j = 0; j < 4; j++) {\n"
      "        const unsigned n = wn + j * 8u + g;\n"
      "        bf[j][0] = %s;\n"
      "        bf[j][1] = %s;\n"
      "      }\n"
      "#pragma unroll\n"
      "      for (int i = 0; i < 4; i++)\n"
      "#pragma unroll\n"
      "        for (int j = 0; j < 4; j++) dml_mma16(acc[i][j], af[i], bf[j]);\n"
      "    }\n",
      H16_STAGES, a_stage, H16_STAGES, b_stage, H16_BK, af[0], af[1], af[2], af[3], bf[0],
      bf[1]);
  if (conv || !bvec) {
    /* the registers of step kt + 2 into its stage, after the mma (the
     * barrier at the top of step kt + 1 publishes them) */
    dml_sb_printf(
        &b, "    if (kt + %du < nk) {\n      const unsigned st = (kt + %du) %% %du;\n",
        H16_STAGES - 1, H16_STAGES - 1, H16_STAGES);
    if (conv) emit_stage16_store(&b, "ra", 0, a_stage, ta.stride, "st");
    if (!bvec)
      emit_stage16_store(&b, "rb", H16_STAGES * a_stage / 2, b_stage, tb.stride, "st");
    dml_sb_printf(&b, "    }\n");
  }
  dml_sb_printf(
      &b,
      "  }\n"
      "#pragma unroll\n"
      "  for (int i = 0; i < 4; i++)\n"
      "#pragma unroll\n"
      "    for (int j = 0; j < 4; j++)\n"
      "#pragma unroll\n"
      "      for (int e = 0; e < 4; e++)\n"
      "        %s_epilogue(arena, weights, pc, bn + wn + j * 8u + 2u * t + (e & 1),\n"
      "                    bm + wm + i * 16u + g + (e >> 1) * 8u, acc[i][j][e]);\n"
      "  }\n"
      "}\n",
      k->name);
  if (b.oom) {
    free(b.p);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen.cuda",
                           "out of memory");
  }
  *out_text = b.p;
  return DML_OK;
}
