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
#define MMA_BK 32
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

static const char k_helpers[] =
    "DML_DEV unsigned dml_tf32(float x) {\n"
    "  unsigned r;\n"
    "  asm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(r) : \"f\"(x));\n"
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
    "typedef struct __attribute__((aligned(16))) dml_f4 { float x, y, z, w; } "
    "dml_f4_t;\n";

/* One operand's tile traffic. The tile is `rows` x `cols` of the operand
 * as stored (row-major, `ld` elements per stored row); the stored row is
 * the smem tile's first index when `!swap` (As[m][k] from A [M, K],
 * Bs[k][n] from B [K, N]) and its second when `swap` (A stored [K, M], B
 * stored [N, K]). With `vec`, each thread moves float4s along the stored
 * row (the rows and the base 16-byte aligned, the row length a multiple of
 * 4, so a float4 never straddles the edge). */
typedef struct tile_io {
  char name;                 /* 'a' or 'b' */
  const char *ptr;           /* "A" / "B" */
  int rows, cols;            /* the tile as stored: rows x cols */
  const char *row0, *col0;   /* first stored row / column of the tile */
  const char *nrows, *ncols; /* the stored matrix's extent (bounds) */
  const char *ld;            /* elements per stored row */
  int swap;                  /* smem index [col][row] instead of [row][col] */
  int stride;                /* smem row stride (elements) */
  int vec;
} tile_io_t;

static void emit_load(dml_sb_t *b, const tile_io_t *t, const char *kt) {
  int per = t->rows * t->cols / (t->vec ? 4 : 1) / MMA_THREADS;
  int cpr = t->cols / (t->vec ? 4 : 1); /* items per stored row */
  dml_sb_printf(b, "#pragma unroll\n    for (int i = 0; i < %d; i++) {\n", per);
  dml_sb_printf(b,
                "      unsigned e = tid + %uu * i, r = e / %du, c = (e %% %du) * %du;\n",
                MMA_THREADS, cpr, cpr, t->vec ? 4 : 1);
  dml_sb_printf(b, "      unsigned gr = %s + r, gc = %s + c;\n", t->row0, t->col0);
  (void)kt;
  if (t->vec)
    dml_sb_printf(
        b,
        "      r%c[i] = gr < %s && gc < %s ? *(const dml_f4_t *)(%s + gr * %s + "
        "gc) : dml_f4_t{0.0f, 0.0f, 0.0f, 0.0f};\n",
        t->name, t->nrows, t->ncols, t->ptr, t->ld);
  else
    dml_sb_printf(b, "      r%c[i] = gr < %s && gc < %s ? %s[gr * %s + gc] : 0.0f;\n",
                  t->name, t->nrows, t->ncols, t->ptr, t->ld);
  dml_sb_printf(b, "    }\n");
}

static void emit_store(dml_sb_t *b, const tile_io_t *t) {
  int per = t->rows * t->cols / (t->vec ? 4 : 1) / MMA_THREADS;
  int cpr = t->cols / (t->vec ? 4 : 1);
  char S = (char)(t->name - 'a' + 'A');
  dml_sb_printf(b, "#pragma unroll\n    for (int i = 0; i < %d; i++) {\n", per);
  dml_sb_printf(b,
                "      unsigned e = tid + %uu * i, r = e / %du, c = (e %% %du) * %du;\n",
                MMA_THREADS, cpr, cpr, t->vec ? 4 : 1);
  if (!t->vec) {
    if (t->swap)
      dml_sb_printf(b, "      %cs[c * %du + r] = dml_tf32(r%c[i]);\n", S, t->stride,
                    t->name);
    else
      dml_sb_printf(b, "      %cs[r * %du + c] = dml_tf32(r%c[i]);\n", S, t->stride,
                    t->name);
  } else if (!t->swap) {
    dml_sb_printf(b,
                  "      unsigned *d = &%cs[r * %du + c];\n"
                  "      d[0] = dml_tf32(r%c[i].x), d[1] = dml_tf32(r%c[i].y);\n"
                  "      d[2] = dml_tf32(r%c[i].z), d[3] = dml_tf32(r%c[i].w);\n",
                  S, t->stride, t->name, t->name, t->name, t->name);
  } else {
    dml_sb_printf(b,
                  "      %cs[c * %du + r] = dml_tf32(r%c[i].x);\n"
                  "      %cs[(c + 1u) * %du + r] = dml_tf32(r%c[i].y);\n"
                  "      %cs[(c + 2u) * %du + r] = dml_tf32(r%c[i].z);\n"
                  "      %cs[(c + 3u) * %du + r] = dml_tf32(r%c[i].w);\n",
                  S, t->stride, t->name, S, t->stride, t->name, S, t->stride, t->name, S,
                  t->stride, t->name);
  }
  dml_sb_printf(b, "    }\n");
}

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
  char name[64];
  snprintf(name, sizeof name, "%s_tf32", k->name);
  /* float4 loads where every stored row and the base are 16-byte aligned */
  int m_vec = g->m.c % 4 == 0 && g->m.c0 % 4 == 0;
  int a_vec = g->a_off % 4 == 0 && (g->ta ? m_vec : g->k % 4 == 0);
  int b_vec = g->b_off % 4 == 0 && (g->tb ? g->k % 4 == 0 : g->n % 4 == 0);
  /* A: [M, K] rows m (tile rows bm..+128, cols k), or stored [K, M] */
  tile_io_t ta = {'a',
                  "A",
                  g->ta ? MMA_BK : MMA_BM,
                  g->ta ? MMA_BM : MMA_BK,
                  g->ta ? "k0" : "bm",
                  g->ta ? "bm" : "k0",
                  g->ta ? "K" : "M",
                  g->ta ? "M" : "K",
                  g->ta ? "M" : "K",
                  g->ta,
                  MMA_BK + 4,
                  a_vec};
  /* B: [K, N] rows k, or stored [N, K] rows n */
  tile_io_t tb = {'b',
                  "B",
                  g->tb ? MMA_BN : MMA_BK,
                  g->tb ? MMA_BK : MMA_BN,
                  g->tb ? "bn" : "k0",
                  g->tb ? "k0" : "bn",
                  g->tb ? "N" : "K",
                  g->tb ? "K" : "N",
                  g->tb ? "K" : "N",
                  g->tb,
                  MMA_BN + 8,
                  b_vec};
  dml_sb_printf(&b, "%s", k_helpers);
  dml_sb_printf(&b,
                "extern \"C\" __global__ void __attribute__((launch_bounds(%d)))\n"
                "%s(float *__restrict__ arena, const float *__restrict__ weights, "
                "dml_syms_t pc) {\n",
                MMA_THREADS, name);
  dml_sb_printf(&b, "  const unsigned M = %s, N = %lldu, K = %lldu;\n", m,
                (long long)g->n, (long long)g->k);
  dml_sb_printf(&b, "  const float *__restrict__ A = %s + %lldu;\n",
                g->a_buf == DML_KBUF_WEIGHTS ? "weights" : "arena", (long long)g->a_off);
  dml_sb_printf(&b, "  const float *__restrict__ B = %s + %lldu;\n",
                g->b_buf == DML_KBUF_WEIGHTS ? "weights" : "arena", (long long)g->b_off);
  dml_sb_printf(
      &b,
      "  const unsigned tid = __nvvm_read_ptx_sreg_tid_x();\n"
      "  const unsigned bn = __nvvm_read_ptx_sreg_ctaid_x() * %du;\n"
      "  const unsigned bm = __nvvm_read_ptx_sreg_ctaid_y() * %du;\n"
      "  if (bm >= M) return;\n"
      "  const unsigned lane = tid & 31u, warp = tid >> 5;\n"
      "  const unsigned g = lane >> 2, t = lane & 3u;\n"
      "  const unsigned wm = (warp >> 2) * 64u, wn = (warp & 3u) * 32u;\n"
      "  /* As[m][k] (row stride %d), Bs[k][n] (row stride %d): a warp's fragment\n"
      "   * reads touch 32 distinct banks */\n"
      "  __shared__ __attribute__((aligned(16))) unsigned As[%d * %d];\n"
      "  __shared__ __attribute__((aligned(16))) unsigned Bs[%d * %d];\n"
      "  float acc[4][4][4];\n"
      "#pragma unroll\n"
      "  for (int i = 0; i < 4; i++)\n"
      "#pragma unroll\n"
      "    for (int j = 0; j < 4; j++)\n"
      "#pragma unroll\n"
      "      for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;\n",
      MMA_BN, MMA_BM, MMA_BK + 4, MMA_BN + 8, MMA_BM, MMA_BK + 4, MMA_BK, MMA_BN + 8);
  dml_sb_printf(&b, "  %s ra[%d];\n  %s rb[%d];\n", a_vec ? "dml_f4_t" : "float",
                MMA_BM * MMA_BK / (a_vec ? 4 : 1) / MMA_THREADS,
                b_vec ? "dml_f4_t" : "float",
                MMA_BN * MMA_BK / (b_vec ? 4 : 1) / MMA_THREADS);
  dml_sb_printf(
      &b, "  const unsigned nk = (K + %du) / %du;\n  {\n    const unsigned k0 = 0;\n",
      MMA_BK - 1, MMA_BK);
  emit_load(&b, &ta, "0");
  emit_load(&b, &tb, "0");
  emit_store(&b, &ta);
  emit_store(&b, &tb);
  dml_sb_printf(
      &b,
      "  }\n  __syncthreads();\n"
      "  for (unsigned kt = 0; kt < nk; kt++) {\n"
      "    const unsigned k0 = (kt + 1u) * %du;\n"
      "    /* the next step's operands are in flight during this step's mma */\n"
      "    if (kt + 1u < nk) {\n",
      MMA_BK);
  emit_load(&b, &ta, "k0");
  emit_load(&b, &tb, "k0");
  dml_sb_printf(
      &b,
      "    }\n"
      "#pragma unroll\n"
      "    for (unsigned kk = 0; kk < %du; kk += 8u) {\n"
      "      unsigned af[4][4], bf[4][2];\n"
      "#pragma unroll\n"
      "      for (int i = 0; i < 4; i++) {\n"
      "        const unsigned *a = &As[(wm + i * 16u + g) * %du + kk + t];\n"
      "        af[i][0] = a[0];\n"
      "        af[i][1] = a[8u * %du];\n"
      "        af[i][2] = a[4];\n"
      "        af[i][3] = a[8u * %du + 4u];\n"
      "      }\n"
      "#pragma unroll\n"
      "      for (int j = 0; j < 4; j++) {\n"
      "        const unsigned *q = &Bs[(kk + t) * %du + wn + j * 8u + g];\n"
      "        bf[j][0] = q[0];\n"
      "        bf[j][1] = q[4u * %du];\n"
      "      }\n"
      "#pragma unroll\n"
      "      for (int i = 0; i < 4; i++)\n"
      "#pragma unroll\n"
      "        for (int j = 0; j < 4; j++) dml_mma_tf32(acc[i][j], af[i], bf[j]);\n"
      "    }\n"
      "    __syncthreads();\n"
      "    if (kt + 1u < nk) {\n",
      MMA_BK, MMA_BK + 4, MMA_BK + 4, MMA_BK + 4, MMA_BN + 8, MMA_BN + 8);
  emit_store(&b, &ta);
  emit_store(&b, &tb);
  dml_sb_printf(
      &b,
      "    }\n"
      "    __syncthreads();\n"
      "  }\n"
      "#pragma unroll\n"
      "  for (int i = 0; i < 4; i++)\n"
      "#pragma unroll\n"
      "    for (int j = 0; j < 4; j++)\n"
      "#pragma unroll\n"
      "      for (int e = 0; e < 4; e++)\n"
      "        %s_epilogue(arena, weights, pc, bn + wn + j * 8u + 2u * t + (e & 1),\n"
      "                    bm + wm + i * 16u + g + (e >> 1) * 8u, acc[i][j][e]);\n"
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
