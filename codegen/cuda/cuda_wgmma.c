/* cuda_wgmma.c — the Hopper (sm_90a) form of TF32 GEMM kernels: warpgroup
 * MMA (wgmma.mma_async .tf32, PTX ISA 8.0), in the same launch geometry as
 * cuda_mma.c's mma.sync form (256 threads per 128 x 256 tile of C), so
 * that one package entry holds both and the runtime picks by compute
 * capability (docs/kernels.md "TF32 tensor cores").
 *
 * Pipeline: 2 warpgroups of 128 threads, 128 f32 accumulators per thread.
 * K advances 32 at a time through a 4-stage ring of shared-memory stages
 * filled by cp.async; two steps' copies are in flight while the tensor
 * cores work on the current step and the previous one drains. Descriptor
 * operands are K-major with the 128-byte swizzle (PTX ISA "Shared Memory
 * Matrix Layout": row r of a 1024-byte-aligned tile at r * 128 bytes, its
 * 16-byte chunk c at (c ^ (r % 8)) * 16): 16-byte copies where the operand
 * is stored K-contiguous and 16-byte aligned, else 4-byte copies (an
 * operand stored MN-contiguous is transposed by them, with a lane pattern
 * of 8 consecutive MN indices x 4 consecutive k: no bank conflicts, whole
 * 32-byte sectors, but 4x the copy instructions). TF32 wgmma reads only
 * K-major operands from shared memory, so there are two forms:
 * - B stored [N, K] (Gemm transB, K-contiguous): both operands from
 *   descriptors; warpgroup w computes rows 64w .. 64w + 63, all 256 columns
 *   (4 x m64n256k8 per step, one commit group, wait_group 1). Stage: A
 *   128 x 32 and B 256 x 32 swizzled, 48 KB.
 * - B stored [K, N] (MatMul, Gemm): the product as C^T = B^T A^T. B^T is
 *   the register operand: B's tile is copied as stored (16-byte copies
 *   along N) into a plain [32][256 + 8] tile whose padding makes the
 *   fragment reads hit 32 banks, rounded to TF32 (cvt.rna) as they are
 *   read; A^T is the descriptor operand (A's swizzled K-major tile, N' =
 *   128). Warpgroup w computes C^T rows (columns n of C) 128w .. 128w + 127
 *   as two m64n128k8 per 8-wide k slice; each slice is its own commit
 *   group and wait_group 3 before a slice's fragment loads retires the
 *   slice of the previous step that read the same registers. Stage: 16 KB +
 *   33 KB.
 * A stored [K, M] (transA) takes the 4-byte transposing copies.
 *
 * Numerics: wgmma reads a descriptor operand's f32 bits as TF32 (the low
 * 13 mantissa bits ignored: truncation; the mma.sync form and the register
 * operand round with cvt.rna), accumulating in f32. Accumulator layout
 * (PTX ISA "Matrix Fragments for wgmma .m64nNk8", D): register 4j + e of
 * thread t of a warpgroup holds row 16 (t / 32) + (t % 32) / 4 + 8 (e / 2),
 * column 8j + 2 (t % 4) + e % 2 of its m64nN product; the register A
 * fragment (.tf32, m64k8) of warp q: a0 (16q + g, t), a1 (16q + g + 8, t),
 * a2 (16q + g, t + 4), a3 (16q + g + 8, t + 4), g = lane / 4, t = lane % 4.
 *
 * f16 and bf16 GEMMs (always on tensor cores, cuda_mma.c's m16n8k16 form
 * elsewhere) take the same kernel with 2-byte elements: a stage holds 64
 * values of k (the same 128-byte rows, swizzle and descriptors; a
 * k16 step advances the descriptors by 32 bytes as a TF32 k8 step does),
 * the instructions are m64n256k16 / m64n128k16 .f32.f16.f16 (or .bf16)
 * with the transpose immediates 0 (both operands K-major), and the
 * register operand's fragments (.f16 m64k16: a0 (16q + g, 2t..2t+1), a1
 * (16q + g + 8, 2t..), a2 (16q + g, 2t + 8..), a3 (16q + g + 8, 2t + 8..))
 * come from the plain [k][n] tile through ldmatrix .x4 .trans (two
 * 16-bit words of adjacent k rows per register), no rounding. Only
 * 16-byte copies (cp.async has no 2-byte form): the form applies when A
 * is stored [M, K] and the rows of A and B are 16-byte aligned
 * (dml_codegen_cuda_wgmma_applies); other f16 GEMMs keep the mma.sync
 * form. */
#include <stdlib.h>
#include <string.h>

#include "c_emit.h"
#include "cuda_internal.h"
#include "dml_codegen.h"

#define WG_BM 128
#define WG_BN 256
#define WG_ROW 128 /* bytes of k per stage and row: 32 f32 or 64 f16/bf16 */
#define WG_THREADS 256
#define WG_STAGES 4
#define WG_A_BYTES (WG_BM * WG_ROW)
#define WG_B_BYTES (WG_BN * WG_ROW)
#define WG_PAD 8 /* elements after each k row of the register operand's tile */

static const char k_helpers[] =
    "/* the shared-window address of a generic pointer to shared memory */\n"
    "DML_DEV unsigned dml_smem(const void *p) {\n"
    "  unsigned a;\n"
    "  asm(\"{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }\" : "
    "\"=r\"(a) : \"l\"(p));\n"
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
    "DML_DEV void dml_cp_commit(void) { asm volatile(\"cp.async.commit_group;\"); }\n"
    "DML_DEV unsigned dml_tf32(unsigned bits) {\n"
    "  unsigned r;\n"
    "  asm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(r) : \"f\"(__builtin_bit_cast(float, "
    "bits)));\n"
    "  return r;\n"
    "}\n"
    "/* a K-major, 128-byte-swizzled operand at shared address a: stride 1024\n"
    " * bytes between 8-row groups (PTX ISA \"Matrix Descriptor Format\") */\n"
    "DML_DEV unsigned long long dml_desc(unsigned a) {\n"
    "  return (unsigned long long)((a & 0x3FFFFu) >> 4) | (1ull << 16) |\n"
    "         ((unsigned long long)(1024u >> 4) << 32) | (1ull << 62);\n"
    "}\n";

/* One operand's copy into a K-major swizzled tile of `rows` x 32 (rows are
 * M or N indices). `kmaj`: stored K-contiguous (element (r, k) at
 * (row0 + r) * ld + k0 + k), else MN-contiguous ((k0 + k) * ld + row0 + r).
 * `vec`: 16-byte copies (K-contiguous, 16-byte aligned rows). */
typedef struct wg_tile {
  const char *ptr;   /* "A" / "B" */
  const char *base;  /* shared address of the stage's tile (C expression) */
  int rows;          /* 128 or 256 */
  const char *row0;  /* "bm" / "bn" */
  const char *nrows; /* "M" / "N" */
  const char *ld;    /* elements per stored row */
  int kmaj, vec;
  int esz; /* bytes per element: 4 (f32) or 2 (f16/bf16: vec only) */
} wg_tile_t;

static void emit_copy(dml_sb_t *b, const wg_tile_t *t) {
  if (t->kmaj && t->vec) {
    /* chunk e: row e / 8, 16-byte chunk e % 8 (k = (16 / esz) (e % 8)) */
    dml_sb_printf(b,
                  "#pragma unroll\n"
                  "      for (unsigned i = 0; i < %du; i++) {\n"
                  "        const unsigned e = tid + %du * i, r = e >> 3, c = e & 7u;\n"
                  "        const unsigned gr = %s + r, gk = k0 + c * %du;\n"
                  "        const int ok = gr < %s && gk < K;\n"
                  "        dml_cp16(%s + r * 128u + ((c ^ (r & 7u)) << 4), ok ? %s + "
                  "(unsigned long long)gr * %s + gk : %s, ok);\n"
                  "      }\n",
                  t->rows * 8 / WG_THREADS, WG_THREADS, t->row0, 16 / t->esz, t->nrows,
                  t->base, t->ptr, t->ld, t->ptr);
    return;
  }
  /* 4-byte copies, element e = lane + 32 w: K-contiguous, r = w, k = lane;
   * MN-contiguous, r = 8 (w % (rows / 8)) + lane % 8, k = 4 (w / (rows /
   * 8)) + lane / 8 */
  int groups = t->rows / 8;
  dml_sb_printf(b,
                "#pragma unroll\n"
                "      for (unsigned i = 0; i < %du; i++) {\n"
                "        const unsigned e = tid + %du * i, l = e & 31u, w = e >> 5;\n",
                t->rows * (WG_ROW / 4) / WG_THREADS, WG_THREADS);
  if (t->kmaj)
    dml_sb_printf(b, "        const unsigned r = w, k = l;\n");
  else
    dml_sb_printf(
        b,
        "        const unsigned r = (w %% %du) * 8u + (l & 7u), k = (w / %du) * "
        "4u + (l >> 3);\n",
        groups, groups);
  dml_sb_printf(b, "        const unsigned gr = %s + r, gk = k0 + k;\n", t->row0);
  dml_sb_printf(b, "        const int ok = gr < %s && gk < K;\n", t->nrows);
  dml_sb_printf(
      b,
      "        dml_cp4(%s + r * 128u + (((k >> 2) ^ (r & 7u)) << 4) + (k & 3u) * "
      "4u, ok ? %s + %s%s%s : %s, ok);\n"
      "      }\n",
      t->base, t->ptr,
      t->kmaj ? "(unsigned long long)gr * K + gk" : "(unsigned long long)gk * ",
      t->kmaj ? "" : t->ld, t->kmaj ? "" : " + gr", t->ptr);
}

/* B stored [K, N] into a plain [bk][256 + 8] tile of the stage (bk = 32
 * f32 or 64 f16/bf16 rows of k; the register operand's; padded so that
 * fragment reads hit distinct banks): 16-byte copies along N where `vec`,
 * else 4-byte ones (f32 only). */
static void emit_copy_plain(dml_sb_t *b, const wg_tile_t *t) {
  int w = t->vec ? 16 / t->esz : 1, cpr = WG_BN / w, bk = WG_ROW / t->esz;
  dml_sb_printf(
      b,
      "#pragma unroll\n"
      "      for (unsigned i = 0; i < %du; i++) {\n"
      "        const unsigned e = tid + %du * i, k = e / %du, c = (e %% %du) * "
      "%du;\n"
      "        const unsigned gk = k0 + k, gn = bn + c;\n"
      "        const int ok = gk < K && gn < N;\n"
      "        dml_cp%d(%s + (k * %du + c) * %du, ok ? %s + (unsigned long long)gk "
      "* N + gn : %s, ok);\n"
      "      }\n",
      bk * WG_BN / w / WG_THREADS, WG_THREADS, cpr, cpr, w, t->vec ? 16 : 4, t->base,
      WG_BN + WG_PAD, t->esz, t->ptr, t->ptr);
}

/* The run-time value of count `l` as CUDA C. */
static void lin_text(char *buf, size_t cap, dml_klin_t l) {
  if (l.sym < 0)
    snprintf(buf, cap, "%lldu", (long long)(l.c0 + l.c));
  else
    snprintf(buf, cap, "(%lldu * pc.sym[%d] + %lldu)", (long long)l.c, l.sym,
             (long long)l.c0);
}

/* 1 for a GEMM of f16 or bf16 operands that has the wgmma form (see the
 * top of this file). */
static int wgmma16_applies(const dml_kernel_t *k) {
  return dml_codegen_cuda_mma16_applies(k) && !k->gemm->ta;
}

int dml_codegen_cuda_wgmma_applies(const dml_kernel_t *k) {
  if (!k->gemm || k->kind != DML_KK_GEMM || k->gemm->conv) return 0;
  if (k->gemm->dtype == DML_KT_F16 || k->gemm->dtype == DML_KT_BF16)
    return wgmma16_applies(k);
  return dml_codegen_cuda_mma_applies(k);
}

/* The wgmma instruction of `shape` ("m64n256k8") with `n_acc` accumulators
 * as a device function `fn` taking descriptors of A and B (`reg_a` 0) or
 * four registers of A and B's descriptor (`reg_a` 1). `ty` is "tf32",
 * "f16" or "bf16"; the 16-bit types take the transpose immediates (0: K-major). */
static void emit_wgmma_fn(dml_sb_t *b, const char *fn, const char *shape, const char *ty,
                          int n_acc, int reg_a) {
  int h16 = strcmp(ty, "tf32") != 0;
  dml_sb_printf(b,
                "DML_DEV void %s(float *d, %s, unsigned long long db) {\n"
                "  asm volatile(\n"
                "      \"wgmma.mma_async.sync.aligned.%s.f32.%s.%s {\"\n",
                fn, reg_a ? "const unsigned *a" : "unsigned long long da", shape, ty, ty);
  for (int i = 0; i < n_acc; i += 8)
    dml_sb_printf(b, "      \"%%%d, %%%d, %%%d, %%%d, %%%d, %%%d, %%%d, %%%d%s\"\n", i,
                  i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7,
                  i < n_acc - 8 ? ", " : "");
  if (reg_a)
    dml_sb_printf(b, "      \"}, {%%%d, %%%d, %%%d, %%%d}, %%%d, 1, 1, 1%s;\"\n      : ",
                  n_acc, n_acc + 1, n_acc + 2, n_acc + 3, n_acc + 4, h16 ? ", 0" : "");
  else
    dml_sb_printf(b, "      \"}, %%%d, %%%d, 1, 1, 1%s;\"\n      : ", n_acc, n_acc + 1,
                  h16 ? ", 0, 0" : "");
  for (int i = 0; i < n_acc; i++)
    dml_sb_printf(b, "\"+f\"(d[%d])%s", i,
                  i < n_acc - 1 ? (i % 6 == 5 ? ",\n        " : ", ") : "\n");
  if (reg_a)
    dml_sb_printf(b,
                  "      : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), "
                  "\"l\"(db));\n}\n");
  else
    dml_sb_printf(b, "      : \"l\"(da), \"l\"(db));\n}\n");
}

dml_status_t dml_codegen_cuda_wgmma(const dml_kernel_t *k, uint32_t n_symbols,
                                    char **out_text) {
  if (!dml_codegen_cuda_wgmma_applies(k))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "codegen.cuda",
                           "kernel %s has no wgmma form", k->name);
  const dml_kgemm_t *g = k->gemm;
  /* 16-bit operands (f16/bf16) or TF32 (f32 read as TF32) */
  int h16 = g->dtype == DML_KT_F16 || g->dtype == DML_KT_BF16;
  const char *ty = !h16 ? "tf32" : g->dtype == DML_KT_BF16 ? "bf16" : "f16";
  int esz = h16 ? 2 : 4, bk = WG_ROW / esz, ksub = h16 ? 16 : 8;
  const char *et = h16 ? "unsigned short" : "float";
  char name[80];
  if (h16) /* the entry of the mma.sync form (cuda_mma.c, cuda.c) */
    snprintf(name, sizeof name, "%.20s_mma_%s", k->name, ty);
  else
    snprintf(name, sizeof name, "%s_tf32", k->name);
  dml_sb_t b = {0};
  dml_sb_printf(&b,
                "// dmlc kernel %s (gemm, %s warpgroup MMA, sm_90a)\n"
                "#define DML_NSYM %u\n%s",
                name, ty, n_symbols ? n_symbols : 1, dml_cuda_prelude());
  /* the epilogue is a call for 16-bit or typed results: inlined at each
   * of the 128 accumulators it stopped clang from unrolling the store
   * loop, which left the accumulators in local memory (a 512-byte stack
   * frame per ptxas -v, 29 TFLOP/s for f16 on the H200) */
  dml_cuda_tc_epilogue(&b, k, h16 || (dml_kernel_views(k) & DML_KVIEW_TYPED));
  const char *wq = k->writes_weights ? "" : "const ";
  dml_sb_printf(&b, "%s", k_helpers);
  char shape[24];
  /* the descriptor form: 128 accumulators; the register-A form (swap):
   * 2 x m64n128 per warpgroup and k step */
  snprintf(shape, sizeof shape, "m64n256k%d", ksub);
  emit_wgmma_fn(&b, "dml_wgmma", shape, ty, 128, 0);
  snprintf(shape, sizeof shape, "m64n128k%d", ksub);
  emit_wgmma_fn(&b, "dml_wgmma_rs", shape, ty, 64, 1);
  char m[96];
  lin_text(m, sizeof m, g->m);
  /* B stored [K, N] (MN-contiguous): the product as C^T = B^T A^T, B^T the
   * register operand (fragments read from a plain [bk][256 + 8] tile),
   * A^T the descriptor operand; else both from descriptors */
  int swap = !g->tb;
  uint32_t b_bytes = swap ? (uint32_t)(bk * (WG_BN + WG_PAD) * esz) : WG_B_BYTES;
  uint32_t stage = WG_A_BYTES + b_bytes, smem = WG_STAGES * stage + 1024;
  int al = 16 / esz; /* elements per 16 bytes */
  wg_tile_t ta = {"A",    "As",
                  WG_BM,  "bm",
                  "M",    g->ta ? "M" : "K",
                  !g->ta, g->a_off % al == 0 && g->k % al == 0,
                  esz};
  wg_tile_t tb = {"B",   "Bs",
                  WG_BN, "bn",
                  "N",   g->tb ? "K" : "N",
                  g->tb, g->b_off % al == 0 && (swap ? g->n : g->k) % al == 0,
                  esz};
  if (h16 && !(ta.vec && tb.vec)) { /* wgmma16_applies makes this unreachable */
    free(b.p);
    return dml_status_make(DML_STATUS_INTERNAL, "codegen.cuda",
                           "kernel %s: f16/bf16 rows not 16-byte aligned", k->name);
  }
  dml_sb_printf(
      &b,
      "/* dynamic shared memory of %s, bytes (the runtime reads it: "
      "docs/kernels.md) */\n"
      "extern \"C\" __device__ __attribute__((used)) unsigned %s_dynamic_smem = %uu;\n"
      "extern __shared__ __attribute__((aligned(16))) unsigned dml_dsmem[];\n"
      "extern \"C\" __global__ void __attribute__((launch_bounds(%d, 1)))\n"
      "%s(float *__restrict__ arena, %sfloat *__restrict__ weights, dml_syms_t pc) {\n",
      name, name, smem, WG_THREADS, name, wq);
  dml_sb_printf(&b, "  const unsigned M = %s, N = %lldu, K = %lldu;\n", m,
                (long long)g->n, (long long)g->k);
  dml_sb_printf(&b, "  const %s *__restrict__ A = (const %s *)%s + %lldu;\n", et, et,
                g->a_buf == DML_KBUF_WEIGHTS ? "weights" : "arena", (long long)g->a_off);
  dml_sb_printf(&b, "  const %s *__restrict__ B = (const %s *)%s + %lldu;\n", et, et,
                g->b_buf == DML_KBUF_WEIGHTS ? "weights" : "arena", (long long)g->b_off);
  dml_sb_printf(
      &b,
      "  const unsigned tid = __nvvm_read_ptx_sreg_tid_x();\n"
      "  const unsigned bn = __nvvm_read_ptx_sreg_ctaid_x() * %du;\n"
      "  const unsigned bm = __nvvm_read_ptx_sreg_ctaid_y() * %du;\n"
      "  if (bm >= M) return;\n"
      "  /* the ring: stage s at ring + s * %u, A's tile then B's (%u bytes) */\n"
      "  const unsigned ring = (dml_smem(dml_dsmem) + 1023u) & ~1023u;\n"
      "  const unsigned *ringp = dml_dsmem + ((ring - dml_smem(dml_dsmem)) >> 2);\n"
      "  (void)ringp;\n"
      "  float acc[128];\n"
      "#pragma unroll\n"
      "  for (int i = 0; i < 128; i++) acc[i] = 0.0f;\n"
      "  const unsigned nk = (K + %du) / %du;\n"
      "  /* prologue: steps 0 .. %d in flight */\n"
      "#pragma unroll\n"
      "  for (unsigned s = 0; s < %du; s++) {\n"
      "    if (s < nk) {\n"
      "      const unsigned k0 = s * %du, As = ring + s * %uu, Bs = As + %uu;\n",
      WG_BN, WG_BM, stage, WG_A_BYTES, bk - 1, bk, WG_STAGES - 3, WG_STAGES - 2, bk,
      stage, WG_A_BYTES);
  emit_copy(&b, &ta);
  swap ? emit_copy_plain(&b, &tb) : emit_copy(&b, &tb);
  dml_sb_printf(
      &b,
      "    }\n"
      "    dml_cp_commit();\n"
      "  }\n"
      "  const unsigned wg = tid >> 7, lane = tid & 31u, warp4 = (tid >> 5) & 3u;\n"
      "  for (unsigned kt = 0; kt < nk; kt++) {\n"
      "    /* step kt has landed (at most %d younger group pending); the fence\n"
      "     * makes this thread's copies visible to the async proxy (wgmma) */\n"
      "    asm volatile(\"cp.async.wait_group %d;\" ::: \"memory\");\n"
      "    asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");\n"
      "    __syncthreads();\n"
      "    /* step kt + %d into the stage of step kt - 2: both warpgroups are\n"
      "     * past the wgmma waits of step kt - 1 (the barrier above), so\n"
      "     * their wgmmas of step kt - 2 are complete */\n"
      "    {\n"
      "      const unsigned s = kt + %du, k0 = s * %du;\n"
      "      const unsigned As = ring + (s %% %du) * %uu, Bs = As + %uu;\n"
      "      if (s < nk) {\n",
      WG_STAGES - 3, WG_STAGES - 3, WG_STAGES - 2, WG_STAGES - 2, bk, WG_STAGES, stage,
      WG_A_BYTES);
  emit_copy(&b, &ta);
  swap ? emit_copy_plain(&b, &tb) : emit_copy(&b, &tb);
  dml_sb_printf(&b,
                "      }\n"
                "      dml_cp_commit();\n"
                "    }\n");
  if (!swap) {
    dml_sb_printf(
        &b,
        "    const unsigned As = ring + (kt %% %du) * %uu + wg * %uu, Bs = ring + (kt %% "
        "%du) * %uu + %uu;\n"
        "    asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\");\n"
        "#pragma unroll\n"
        "    for (unsigned j = 0; j < %du; j++)\n"
        "      dml_wgmma(acc, dml_desc(As + j * 32u), dml_desc(Bs + j * 32u));\n"
        "    asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: \"memory\");\n"
        "    asm volatile(\"wgmma.wait_group.sync.aligned 1;\" ::: \"memory\");\n"
        "  }\n"
        "  asm volatile(\"wgmma.wait_group.sync.aligned 0;\" ::: \"memory\");\n"
        "  /* accumulator 4j + e: row 16 warp4 + lane / 4 + 8 (e / 2), column 8j +\n"
        "   * 2 (lane %% 4) + e %% 2 of the warpgroup's 64 x 256 */\n"
        "  const unsigned row = bm + wg * 64u + warp4 * 16u + (lane >> 2), col = bn + "
        "(lane & 3u) * 2u;\n"
        "#pragma unroll\n"
        "  for (int i = 0; i < 128; i++)\n"
        "    %s_epilogue(arena, weights, pc, col + (i >> 2) * 8u + (i & 1), row + ((i >> "
        "1) & 1) * 8u, acc[i]);\n"
        "}\n",
        WG_STAGES, stage, WG_BM / 2 * WG_ROW, WG_STAGES, stage, WG_A_BYTES, bk / ksub,
        k->name);
  } else {
    /* per k slice j (8 wide for TF32, 16 for f16/bf16): fragments of B^T
     * (rows n, columns k; see the top of this file), TF32 rounded with
     * cvt.rna, 16-bit words packed in pairs of k; its own commit group,
     * so that wait_group 3 before slice j frees the registers that slice
     * j of step kt - 1 read */
    const int ps = WG_BN + WG_PAD; /* elements per k row of the plain tile */
    dml_sb_printf(
        &b,
        "    const unsigned As = ring + (kt %% %du) * %uu;\n"
        "    const %s *Bt = (const %s *)ringp + ((kt %% %du) * %uu + %uu) / %du;\n"
        "    const unsigned Bt_s = ring + (kt %% %du) * %uu + %uu;\n"
        "    (void)Bt, (void)Bt_s;\n"
        "    const unsigned nb = wg * 128u + warp4 * 16u + (lane >> 2), t = lane "
        "& 3u;\n"
        "#pragma unroll\n"
        "    for (unsigned j = 0; j < %du; j++) {\n"
        "      asm volatile(\"wgmma.wait_group.sync.aligned 3;\" ::: \"memory\");\n"
        "      unsigned fa[2][4];\n"
        "#pragma unroll\n"
        "      for (unsigned c = 0; c < 2u; c++) {\n",
        WG_STAGES, stage, h16 ? "unsigned short" : "unsigned",
        h16 ? "unsigned short" : "unsigned", WG_STAGES, stage, WG_A_BYTES, esz, WG_STAGES,
        stage, WG_A_BYTES, bk / ksub);
    if (h16)
      /* ldmatrix .x4 .trans: lanes 8q .. 8q + 7 address the k rows of 8x8
       * block q ((k 0..7 | 8..15) x (n 0..7 | 8..15) of the slice), and
       * each lane receives, transposed, its two k-adjacent words of each
       * block: a0 .. a3 in order */
      dml_sb_printf(
          &b,
          "        const unsigned q = lane >> 3;\n"
          "        const unsigned addr = Bt_s + ((j * 16u + (q >> 1) * 8u + (lane & 7u)) "
          "* %du + wg * 128u + warp4 * 16u + c * 64u + (q & 1u) * 8u) * 2u;\n"
          "        asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%%0, "
          "%%1, %%2, %%3}, [%%4];\" : \"=r\"(fa[c][0]), \"=r\"(fa[c][1]), "
          "\"=r\"(fa[c][2]), \"=r\"(fa[c][3]) : \"r\"(addr) : \"memory\");\n",
          ps);
    else
      dml_sb_printf(
          &b,
          "        const unsigned *p = Bt + (j * 8u + t) * %du + nb + c * 64u;\n"
          "        fa[c][0] = dml_tf32(p[0]);\n"
          "        fa[c][1] = dml_tf32(p[8]);\n"
          "        fa[c][2] = dml_tf32(p[%d]);\n"
          "        fa[c][3] = dml_tf32(p[%d]);\n",
          ps, 4 * ps, 4 * ps + 8);
    dml_sb_printf(
        &b,
        "      }\n"
        "      asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\");\n"
        "      dml_wgmma_rs(acc, fa[0], dml_desc(As + j * 32u));\n"
        "      dml_wgmma_rs(acc + 64, fa[1], dml_desc(As + j * 32u));\n"
        "      asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: \"memory\");\n"
        "    }\n"
        "  }\n"
        "  asm volatile(\"wgmma.wait_group.sync.aligned 0;\" ::: \"memory\");\n"
        "  /* accumulator 64c + 4j + e: C^T row (n) 64c + 16 warp4 + lane / 4 + 8 (e /\n"
        "   * 2), column (m) 8j + 2 (lane %% 4) + e %% 2 of the warpgroup's 128 x 128 "
        "*/\n"
        "  const unsigned n0 = bn + wg * 128u + warp4 * 16u + (lane >> 2), m0 = bm + "
        "(lane "
        "& 3u) * 2u;\n"
        "#pragma unroll\n"
        "  for (int i = 0; i < 128; i++)\n"
        "    %s_epilogue(arena, weights, pc, n0 + (i >> 6) * 64u + ((i >> 1) & 1) * 8u, "
        "m0 + ((i >> 2) & 15) * 8u + (i & 1), acc[i]);\n"
        "}\n",
        k->name);
  }
  if (b.oom) {
    free(b.p);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen.cuda",
                           "out of memory");
  }
  *out_text = b.p;
  return DML_OK;
}

dml_status_t dml_codegen_cuda_sm90a_ptx(const char *ptx, char **out_ptx) {
  /* clang-16 writes ".version 7.8" and ".target sm_90" (its newest); wgmma
   * needs PTX ISA 8.0 and the arch-specific target */
  const char *v = strstr(ptx, "\n.version ");
  const char *t = strstr(ptx, "\n.target sm_90");
  const char *ve = v ? strchr(v + 1, '\n') : NULL;
  if (!v || !t || !ve || t < ve || (t[14] != '\n' && t[14] != ','))
    return dml_status_make(DML_STATUS_INTERNAL, "codegen.cuda",
                           "clang's PTX has no '.version' line followed by '.target "
                           "sm_90' to raise to PTX ISA 8.0 / sm_90a");
  size_t n = strlen(ptx);
  char *o = (char *)malloc(n + 32);
  if (!o)
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen.cuda",
                           "out of memory");
  size_t at = (size_t)(v - ptx), tt = (size_t)(t - ptx) + 14;
  memcpy(o, ptx, at);
  memcpy(o + at, "\n.version 8.0", 13);
  size_t w = at + 13, rest = tt - (size_t)(ve - ptx);
  memcpy(o + w, ve, rest);
  w += rest;
  o[w++] = 'a';
  memcpy(o + w, ptx + tt, n - tt + 1);
  *out_ptx = o;
  return DML_OK;
}
