/* cuda_mma.c — the tensor-core form of GEMM kernels for the CUDA target:
 * a CUDA C main loop of mma.sync.m16n8k8 TF32 instructions (PTX ISA 7.0,
 * sm_80 and later) over the kernel's product (dml_kgemm_t), followed by
 * the kernel IR's epilogue rendered as a device function. Used only when
 * the user allows TF32 (`dmlc compile --allow-tf32`): TF32 keeps 10
 * mantissa bits of each operand (relative error per product about 2^-11),
 * so results differ from f32 GEMM beyond the 1e-4 the f32 paths keep.
 *
 * Tiling: a block of 256 threads (8 warps, 2 along M x 4 along N) computes
 * a 128 x 128 tile of C; K advances 16 at a time through two shared-memory
 * buffers (the next tile is loaded into registers while the current one
 * is multiplied). Each warp computes 64 x 32: 4 x 4 mma tiles of 16 x 8.
 * Operands are rounded to TF32 (cvt.rna) as they are stored to shared
 * memory. Fragment layouts: PTX ISA, "Matrix Fragments for mma.m16n8k8"
 * (.tf32): A a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4);
 * B b0 (k = t, n = g), b1 (k = t + 4, n = g); C c0 (g, 2t), c1 (g, 2t + 1),
 * c2 (g + 8, 2t), c3 (g + 8, 2t + 1), with g = lane / 4, t = lane % 4. */
#include <stdlib.h>
#include <string.h>

#include "c_emit.h"
#include "cuda_internal.h"
#include "dml_codegen.h"

#define MMA_BM 128
#define MMA_BN 128
#define MMA_THREADS 256

int dml_codegen_cuda_mma_applies(const dml_kernel_t *k) {
  const dml_kgemm_t *g = k->gemm;
  return k->kind == DML_KK_GEMM && g && g->epilogue && g->n >= 1 && g->k >= 1 &&
         g->n <= (1 << 30) && g->k <= (1 << 30);
}

void dml_codegen_cuda_mma_geometry(const dml_kernel_t *k, uint32_t local[3],
                                   dml_klin_t items[3]) {
  const dml_kgemm_t *g = k->gemm;
  local[0] = MMA_THREADS, local[1] = 1, local[2] = 1;
  items[0] = (dml_klin_t){0, -1, ((g->n + MMA_BN - 1) / MMA_BN) * MMA_THREADS};
  /* ceil(M / 128) blocks along y; with a symbol, ceil(c / 128) * sym +
   * ceil(c0 / 128) >= ceil(M / 128) (blocks past M return at once) */
  if (g->m.sym < 0)
    items[1] = (dml_klin_t){0, -1, (g->m.c + g->m.c0 + MMA_BM - 1) / MMA_BM};
  else
    items[1] = (dml_klin_t){(g->m.c + MMA_BM - 1) / MMA_BM, g->m.sym,
                            (g->m.c0 + MMA_BM - 1) / MMA_BM};
  items[2] = (dml_klin_t){0, -1, 1};
}

static const char k_main[] =
    "DML_DEV unsigned dml_tf32(float x) {\n"
    "  unsigned r;\n"
    "  asm(\"cvt.rna.tf32.f32 %%0, %%1;\" : \"=r\"(r) : \"f\"(x));\n"
    "  return r;\n"
    "}\n"
    "DML_DEV void dml_mma_tf32(float *d, const unsigned *a, const unsigned *b) {\n"
    "  asm volatile(\n"
    "      \"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 \"\n"
    "      \"{%%0, %%1, %%2, %%3}, {%%4, %%5, %%6, %%7}, {%%8, %%9}, \"\n"
    "      \"{%%0, %%1, %%2, %%3};\"\n"
    "      : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3])\n"
    "      : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), "
    "\"r\"(b[1]));\n"
    "}\n"
    "extern \"C\" __global__ void __attribute__((launch_bounds(256)))\n"
    "%s(float *__restrict__ arena, const float *__restrict__ weights, dml_syms_t pc) {\n"
    "  const unsigned M = %s, N = %lldu, K = %lldu;\n"
    "  const float *__restrict__ A = %s + %lldu;\n"
    "  const float *__restrict__ B = %s + %lldu;\n"
    "  const unsigned tid = __nvvm_read_ptx_sreg_tid_x();\n"
    "  const unsigned bn = __nvvm_read_ptx_sreg_ctaid_x() * 128u;\n"
    "  const unsigned bm = __nvvm_read_ptx_sreg_ctaid_y() * 128u;\n"
    "  if (bm >= M) return;\n"
    "  const unsigned lane = tid & 31u, warp = tid >> 5;\n"
    "  const unsigned g = lane >> 2, t = lane & 3u;\n"
    "  const unsigned wm = (warp >> 2) * 64u, wn = (warp & 3u) * 32u;\n"
    "  /* As[m][k] (stride 20), Bs[k][n] (stride 136): the fragment reads of a\n"
    "   * warp touch 32 distinct banks */\n"
    "  __shared__ unsigned As[2][128 * 20];\n"
    "  __shared__ unsigned Bs[2][16 * 136];\n"
    "  float acc[4][4][4];\n"
    "#pragma unroll\n"
    "  for (int i = 0; i < 4; i++)\n"
    "#pragma unroll\n"
    "    for (int j = 0; j < 4; j++)\n"
    "#pragma unroll\n"
    "      for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;\n"
    "  float ra[8], rb[8];\n"
    "  const unsigned nk = (K + 15u) / 16u;\n"
    "  /* element e = tid + 256 i of the 128 x 16 A tile and the 16 x 128 B tile;\n"
    "   * consecutive threads walk the operand's contiguous dim */\n"
    "#define DML_LOAD(kt)                                                     \\\n"
    "  for (int i = 0; i < 8; i++) {                                          \\\n"
    "    unsigned e = tid + 256u * i;                                         \\\n"
    "    unsigned am = %s, ak = %s;                                           \\\n"
    "    unsigned gm = bm + am, gk = (kt) * 16u + ak;                         \\\n"
    "    ra[i] = gm < M && gk < K ? A[%s] : 0.0f;                             \\\n"
    "    unsigned bk = %s, bnn = %s;                                          \\\n"
    "    unsigned gk2 = (kt) * 16u + bk, gn = bn + bnn;                       \\\n"
    "    rb[i] = gk2 < K && gn < N ? B[%s] : 0.0f;                            \\\n"
    "  }\n"
    "#define DML_STORE(buf)                                                   \\\n"
    "  for (int i = 0; i < 8; i++) {                                          \\\n"
    "    unsigned e = tid + 256u * i;                                         \\\n"
    "    unsigned am = %s, ak = %s;                                           \\\n"
    "    As[buf][am * 20u + ak] = dml_tf32(ra[i]);                            \\\n"
    "    unsigned bk = %s, bnn = %s;                                          \\\n"
    "    Bs[buf][bk * 136u + bnn] = dml_tf32(rb[i]);                          \\\n"
    "  }\n"
    "#pragma unroll\n"
    "  DML_LOAD(0u)\n"
    "#pragma unroll\n"
    "  DML_STORE(0)\n"
    "  __syncthreads();\n"
    "  for (unsigned kt = 0; kt < nk; kt++) {\n"
    "    const unsigned cur = kt & 1u;\n"
    "    if (kt + 1u < nk) {\n"
    "#pragma unroll\n"
    "      DML_LOAD(kt + 1u)\n"
    "    }\n"
    "#pragma unroll\n"
    "    for (unsigned kk = 0; kk < 16u; kk += 8u) {\n"
    "      unsigned af[4][4], bf[4][2];\n"
    "#pragma unroll\n"
    "      for (int i = 0; i < 4; i++) {\n"
    "        const unsigned *a = &As[cur][(wm + i * 16u + g) * 20u + kk + t];\n"
    "        af[i][0] = a[0];\n"
    "        af[i][1] = a[8u * 20u];\n"
    "        af[i][2] = a[4];\n"
    "        af[i][3] = a[8u * 20u + 4u];\n"
    "      }\n"
    "#pragma unroll\n"
    "      for (int j = 0; j < 4; j++) {\n"
    "        const unsigned *b = &Bs[cur][(kk + t) * 136u + wn + j * 8u + g];\n"
    "        bf[j][0] = b[0];\n"
    "        bf[j][1] = b[4u * 136u];\n"
    "      }\n"
    "#pragma unroll\n"
    "      for (int i = 0; i < 4; i++)\n"
    "#pragma unroll\n"
    "        for (int j = 0; j < 4; j++) dml_mma_tf32(acc[i][j], af[i], bf[j]);\n"
    "    }\n"
    "    if (kt + 1u < nk) {\n"
    "#pragma unroll\n"
    "      DML_STORE(cur ^ 1u)\n"
    "    }\n"
    "    __syncthreads();\n"
    "  }\n"
    "#undef DML_LOAD\n"
    "#undef DML_STORE\n"
    "#pragma unroll\n"
    "  for (int i = 0; i < 4; i++)\n"
    "#pragma unroll\n"
    "    for (int j = 0; j < 4; j++)\n"
    "#pragma unroll\n"
    "      for (int e = 0; e < 4; e++)\n"
    "        %s_epilogue(arena, weights, pc, bn + wn + j * 8u + 2u * t + (e & 1),\n"
    "                    bm + wm + i * 16u + g + (e >> 1) * 8u, acc[i][j][e]);\n"
    "}\n";

/* The run-time value of count `l` as CUDA C. */
static void lin_text(char *buf, size_t cap, dml_klin_t l) {
  if (l.sym < 0)
    snprintf(buf, cap, "%lldu", (long long)(l.c0 + l.c));
  else
    snprintf(buf, cap, "(%lldu * pc.sym[%d] + %lldu)", (long long)l.c, l.sym,
             (long long)l.c0);
}

dml_status_t dml_codegen_cuda_mma(const dml_kernel_t *k, uint32_t n_symbols,
                                  char **out_text) {
  if (!dml_codegen_cuda_mma_applies(k))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "codegen.cuda",
                           "kernel %s has no tensor-core form", k->name);
  const dml_kgemm_t *g = k->gemm;
  dml_sb_t b = {0};
  dml_sb_printf(
      &b, "// dmlc kernel %s_tf32 (gemm, TF32 tensor cores)\n#define DML_NSYM %u\n%s",
      k->name, n_symbols ? n_symbols : 1, dml_cuda_prelude());
  /* the epilogue: one element of C, the product in register acc_reg */
  dml_sb_printf(&b,
                "DML_DEV void %s_epilogue(float *__restrict__ arena, const float "
                "*__restrict__ weights, const dml_syms_t &pc, unsigned gid_x, "
                "unsigned gid_y, float acc) {\n",
                k->name);
  for (uint32_t r = 0; r < g->n_regs; r++) dml_sb_printf(&b, "  float r%u = 0.0f;\n", r);
  dml_sb_printf(&b, "  r%u = acc;\n  (void)arena, (void)weights, (void)pc;\n",
                g->acc_reg);
  dml_cemit_stmts(&b, dml_cuda_dialect(), g->epilogue, 1);
  dml_sb_printf(&b, "}\n");
  char m[96];
  lin_text(m, sizeof m, g->m);
  /* A element (row gm, col gk): [M, K] at gm * K + gk, or stored [K, M] at
   * gk * M + gm; B element (gk2, gn): [K, N] at gk2 * N + gn, or [N, K] at
   * gn * K + gk2. The thread map follows the contiguous dim. */
  const char *am = g->ta ? "e & 127u" : "e >> 4";
  const char *ak = g->ta ? "e >> 7" : "e & 15u";
  const char *aidx = g->ta ? "gk * M + gm" : "gm * K + gk";
  const char *bk = g->tb ? "e & 15u" : "e >> 7";
  const char *bnn = g->tb ? "e >> 4" : "e & 127u";
  const char *bidx = g->tb ? "gn * K + gk2" : "gk2 * N + gn";
  char name[64];
  snprintf(name, sizeof name, "%s_tf32", k->name);
  dml_sb_printf(&b, k_main, name, m, (long long)g->n, (long long)g->k,
                g->a_buf == DML_KBUF_WEIGHTS ? "weights" : "arena", (long long)g->a_off,
                g->b_buf == DML_KBUF_WEIGHTS ? "weights" : "arena", (long long)g->b_off,
                am, ak, aidx, bk, bnn, bidx, am, ak, bk, bnn, k->name);
  if (b.oom) {
    free(b.p);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen.cuda",
                           "out of memory");
  }
  *out_text = b.p;
  return DML_OK;
}
