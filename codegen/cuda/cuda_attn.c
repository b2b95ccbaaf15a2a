/* cuda_attn.c — the tensor-core form of the fused attention kernel
 * (codegen/schedule_attention.c) for the CUDA target: FlashAttention-2
 * (Dao 2023, "FlashAttention-2: Faster Attention with Better Parallelism
 * and Work Partitioning", algorithm 1) for f16/bf16 operands with f32
 * accumulation, mma.sync.m16n8k16 (PTX ISA 7.0, sm_80 and later), written
 * from the kernel's description (dml_kattn_t).
 *
 * A block of 128 threads (4 warps) per (batch * query head, 64 query
 * rows); warp w holds rows 16w .. 16w + 15 of the block. The block's Q
 * tile (64 x D) and two stages of K and V tiles (64 keys x D each) live in
 * dynamic shared memory, rows padded by 8 halves (ldmatrix's eight row
 * addresses hit distinct banks); the next tile's K and V are in flight
 * (cp.async, zero-filled past the keys) while the current one is used. Per
 * tile each warp computes S = Q K^T (16 x 64, f32: 8 mma tiles of 16 x 8,
 * fragments by ldmatrix; K's rows are B's columns, so no transpose), the
 * scores u = (scale * S + mask) * log2 e (-inf where causal and j > i or
 * past the keys or the mask's last dim), the running row maximum m (NaN
 * propagates, as in the kernel IR's form), p = 2^(u - m) (m = -inf taken
 * as 0), the rescaling of
 * O and l by 2^(m_old - m_new), then O += P V with P rounded to the
 * dtype in registers (the S accumulators' layout is the A fragment's) and
 * V's fragments by ldmatrix.trans. Causal blocks stop at the tile holding
 * their last row. y = O / l: 0 where every key of the row is masked (by
 * the mask, causal or past the keys: ONNX Runtime's rule), or l NaN with
 * nan_zero; scores all -inf or NaN from Q and K give NaN, as in ORT;
 * rounded to the dtype. Fragment layouts: PTX ISA, "Matrix Fragments for
 * mma.m16n8k16 with floating point type" and "ldmatrix" (lane l gives the
 * address of row l % 8 of matrix l / 8; register i gets matrix i's row
 * lane / 4, columns 2 (lane % 4) and + 1, or with .trans its column
 * lane / 4, rows 2 (lane % 4) and + 1). */
#include <stdlib.h>
#include <string.h>

#include "c_emit.h"
#include "cuda_internal.h"
#include "dml_codegen.h"

#define FA_BQ 64       /* query rows per block */
#define FA_BK 64       /* keys per tile */
#define FA_THREADS 128 /* 4 warps of 16 rows */
#define FA_PAD 8       /* halves of padding per tile row */

int dml_codegen_cuda_attn_applies(const dml_kernel_t *k) {
  const dml_kattn_t *a = k->attn;
  return a && (a->dtype == DML_KT_F16 || a->dtype == DML_KT_BF16) &&
         (a->D == 64 || a->D == 128) && a->Sq >= 1 && a->T >= 1 && a->Hkv >= 1 &&
         a->Hq % a->Hkv == 0 && a->B * a->Hq <= 65535;
}

void dml_codegen_cuda_attn_geometry(const dml_kernel_t *k, uint32_t local[3],
                                    dml_klin_t items[3]) {
  const dml_kattn_t *a = k->attn;
  local[0] = FA_THREADS, local[1] = 1, local[2] = 1;
  items[0] = (dml_klin_t){0, -1, (a->Sq + FA_BQ - 1) / FA_BQ * FA_THREADS, 0};
  items[1] = (dml_klin_t){0, -1, a->B * a->Hq, 0};
  items[2] = (dml_klin_t){0, -1, 1, 0};
}

static const char k_helpers[] =
    "DML_DEV unsigned fa_smem(const void *p) {\n"
    "  unsigned a;\n"
    "  asm(\"{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }\" : "
    "\"=r\"(a) : \"l\"(p));\n"
    "  return a;\n"
    "}\n"
    "/* cp.async of 16 bytes, zero-filled when !ok (nothing read) */\n"
    "DML_DEV void fa_cp16(unsigned dst, const void *src, int ok) {\n"
    "  asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16, %2;\" :: \"r\"(dst), "
    "\"l\"(src), \"r\"(ok ? 16 : 0));\n"
    "}\n"
    "DML_DEV void fa_commit(void) { asm volatile(\"cp.async.commit_group;\"); }\n"
    "DML_DEV void fa_ldm4(unsigned *r, unsigned addr) {\n"
    "  asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, "
    "[%4];\"\n"
    "               : \"=r\"(r[0]), \"=r\"(r[1]), \"=r\"(r[2]), \"=r\"(r[3]) : "
    "\"r\"(addr));\n"
    "}\n"
    "DML_DEV void fa_ldm4t(unsigned *r, unsigned addr) {\n"
    "  asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, "
    "%3}, [%4];\"\n"
    "               : \"=r\"(r[0]), \"=r\"(r[1]), \"=r\"(r[2]), \"=r\"(r[3]) : "
    "\"r\"(addr));\n"
    "}\n"
    "/* NaN-propagating maximum (a NaN score makes its row NaN, as on the CPU) */\n"
    "DML_DEV float fa_max(float a, float b) { return (a != a || a > b) ? a : b; }\n"
    "DML_DEV float fa_xor(float x, int m) {\n"
    "  float r;\n"
    "  asm volatile(\"shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;\" : \"=f\"(r) "
    ": \"f\"(x), \"r\"(m));\n"
    "  return r;\n"
    "}\n";

dml_status_t dml_codegen_cuda_attn(const dml_kernel_t *k, uint32_t n_symbols,
                                   char **out_text) {
  if (!dml_codegen_cuda_attn_applies(k))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "codegen.cuda",
                           "kernel %s has no tensor-core attention form", k->name);
  const dml_kattn_t *a = k->attn;
  const int bf = a->dtype == DML_KT_BF16;
  const char *ty = bf ? "bf16" : "f16";
  char name[80];
  snprintf(name, sizeof name, "%.20s_fa_%s", k->name, ty); /* as cuda.c names it */
  const int D = (int)a->D, STR = (int)a->D + FA_PAD;
  const uint32_t smem = (uint32_t)(FA_BQ + 4 * FA_BK) * (uint32_t)STR * 2u;
  dml_sb_t b = {0};
  dml_sb_printf(&b,
                "// dmlc kernel %s (fused attention, %s tensor cores)\n#define DML_NSYM "
                "%u\n%s%s",
                name, ty, n_symbols ? n_symbols : 1, dml_cuda_prelude(), k_helpers);
  dml_sb_printf(
      &b,
      "DML_DEV void fa_mma(float *d, const unsigned *a, unsigned b0, unsigned b1) {\n"
      "  asm volatile(\n"
      "      \"mma.sync.aligned.m16n8k16.row.col.f32.%s.%s.f32 \"\n"
      "      \"{%%0, %%1, %%2, %%3}, {%%4, %%5, %%6, %%7}, {%%8, %%9}, "
      "{%%0, %%1, %%2, %%3};\"\n"
      "      : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3])\n"
      "      : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b0), "
      "\"r\"(b1));\n"
      "}\n"
      "/* two f32 rounded to the dtype, lo in the low half */\n"
      "DML_DEV unsigned fa_pack(float lo, float hi) {\n"
      "  unsigned r;\n"
      "  asm(\"cvt.rn.%sx2.f32 %%0, %%1, %%2;\" : \"=r\"(r) : \"f\"(hi), \"f\"(lo));\n"
      "  return r;\n"
      "}\n",
      ty, ty, ty);
  if (a->has_mask && !a->mask_bool) {
    if (bf)
      dml_sb_printf(&b,
                    "DML_DEV float fa_f32(unsigned short x) {\n"
                    "  return __builtin_bit_cast(float, (unsigned)x << 16);\n}\n");
    else
      dml_sb_printf(&b,
                    "DML_DEV float fa_f32(unsigned short x) {\n"
                    "  float r;\n"
                    "  asm(\"cvt.f32.f16 %%0, %%1;\" : \"=f\"(r) : \"h\"(x));\n"
                    "  return r;\n}\n");
  }
  const char *wq = k->writes_weights ? "" : "const ";
  const dml_kattn_op_t *ops[4] = {&a->q, &a->k, &a->v, &a->y};
  static const char *opn[4] = {"Q", "K", "V", "Y"};
  dml_sb_printf(
      &b,
      "/* dynamic shared memory of %s, bytes (the runtime reads it: "
      "docs/kernels.md) */\n"
      "extern \"C\" __device__ __attribute__((used)) unsigned %s_dynamic_smem = %uu;\n"
      "extern __shared__ __attribute__((aligned(16))) unsigned dml_dsmem[];\n"
      "extern \"C\" __global__ void __attribute__((launch_bounds(%d)))\n"
      "%s(float *__restrict__ arena, %sfloat *__restrict__ weights, dml_syms_t pc) {\n"
      "  (void)pc;\n"
      "  const unsigned tid = __nvvm_read_ptx_sreg_tid_x();\n"
      "  const unsigned lane = tid & 31u, warp = tid >> 5, g = lane >> 2, t = lane & "
      "3u;\n"
      "  const unsigned q0 = __nvvm_read_ptx_sreg_ctaid_x() * %du;\n"
      "  const unsigned bh = __nvvm_read_ptx_sreg_ctaid_y();\n"
      "  const unsigned long long b = bh / %lluu, h = bh %% %lluu, kh = h / %lluu;\n"
      "  const unsigned Sq = %lluu, T = %lluu;\n",
      name, name, smem, FA_THREADS, name, wq, FA_BQ, (unsigned long long)a->Hq,
      (unsigned long long)a->Hq, (unsigned long long)(a->Hq / a->Hkv),
      (unsigned long long)a->Sq, (unsigned long long)a->T);
  for (int i = 0; i < 4; i++) {
    const dml_kattn_op_t *o = ops[i];
    dml_sb_printf(&b,
                  "  %sunsigned short *__restrict__ %sg = (%sunsigned short *)%s + "
                  "%lldull + b * %lldull + %s * %lldull;\n",
                  i == 3 ? "" : "const ", opn[i], i == 3 ? "" : "const ",
                  o->buf == DML_KBUF_WEIGHTS ? "weights" : "arena", (long long)o->off,
                  (long long)o->sb, i == 1 || i == 2 ? "kh" : "h", (long long)o->sh);
  }
  /* tiles: Q (64 rows), then K stages 0, 1, then V stages 0, 1 */
  dml_sb_printf(
      &b,
      "  unsigned short *Qs = (unsigned short *)dml_dsmem, *Ks = Qs + %du, *Vs = Ks + "
      "%du;\n"
      "  const unsigned Qs_s = fa_smem(Qs), Ks_s = fa_smem(Ks), Vs_s = fa_smem(Vs);\n"
      "  /* Q's tile: rows past Sq zero */\n"
      "#pragma unroll\n"
      "  for (int i = 0; i < %d; i++) {\n"
      "    unsigned e = tid + %du * i, r = e / %du, c = (e %% %du) * 8u;\n"
      "    int ok = q0 + r < Sq;\n"
      "    fa_cp16(Qs_s + (r * %du + c) * 2u, ok ? Qg + (q0 + r) * %lldull + c : Qg, "
      "ok);\n"
      "  }\n"
      "  fa_commit();\n",
      FA_BQ * STR, 2 * FA_BK * STR, FA_BQ * D / 8 / FA_THREADS, FA_THREADS, D / 8, D / 8,
      STR, (long long)a->q.sp);
  /* the K and V tiles of key tile `kt` into stage `st` */
  dml_sb_printf(
      &b,
      "#define FA_LOAD_KV(kt, st)                                           \\\n"
      "  for (int i = 0; i < %d; i++) {                                     \\\n"
      "    unsigned e = tid + %du * i, r = e / %du, c = (e %% %du) * 8u;      \\\n"
      "    unsigned j = (kt) * %du + r;                                      \\\n"
      "    int ok = j < T;                                                  \\\n"
      "    unsigned o = ((st) * %du + r * %du + c) * 2u;                      \\\n"
      "    fa_cp16(Ks_s + o, ok ? Kg + j * %lldull + c : Kg, ok);            \\\n"
      "    fa_cp16(Vs_s + o, ok ? Vg + j * %lldull + c : Vg, ok);            \\\n"
      "  }\n",
      FA_BK * D / 8 / FA_THREADS, FA_THREADS, D / 8, D / 8, FA_BK, FA_BK * STR, STR,
      (long long)a->k.sp, (long long)a->v.sp);
  /* the key tiles this block needs: all, or (causal) up to its last row */
  dml_sb_printf(&b, "  unsigned nt = (T + %du) / %du;\n", FA_BK - 1, FA_BK);
  if (a->causal)
    dml_sb_printf(
        &b, "  { unsigned last = (q0 + %du) / %du + 1u; if (last < nt) nt = last; }\n",
        FA_BQ - 1, FA_BK);
  dml_sb_printf(
      &b,
      "  FA_LOAD_KV(0u, 0u)\n"
      "  fa_commit();\n"
      "  float o[%d][4], m[2] = {-__builtin_inff(), -__builtin_inff()}, l[2] = "
      "{0.0f, 0.0f};\n"
      "  float au[2] = {0.0f, 0.0f}; /* 1 once some key of the row is unmasked */\n"
      "#pragma unroll\n"
      "  for (int n = 0; n < %d; n++)\n"
      "#pragma unroll\n"
      "    for (int e = 0; e < 4; e++) o[n][e] = 0.0f;\n"
      "  unsigned qf[%d][4];\n"
      "  const unsigned r0 = q0 + warp * 16u + g; /* rows r0 and r0 + 8 */\n"
      "  for (unsigned kt = 0; kt < nt; kt++) {\n"
      "    if (kt + 1u < nt) {\n"
      "      FA_LOAD_KV(kt + 1u, (kt + 1u) & 1u)\n"
      "    }\n"
      "    fa_commit();\n"
      "    /* Q and tile kt have landed (the newest group may be pending) */\n"
      "    asm volatile(\"cp.async.wait_group 1;\");\n"
      "    __syncthreads();\n"
      "    if (kt == 0) {\n"
      "#pragma unroll\n"
      "      for (int kk = 0; kk < %d; kk++)\n"
      "        fa_ldm4(qf[kk], Qs_s + ((warp * 16u + (lane & 7u) + ((lane >> 3) "
      "& 1u) * 8u) * %du + kk * 16u + (lane >> 4) * 8u) * 2u);\n"
      "    }\n"
      "    const unsigned ks = Ks_s + (kt & 1u) * %du, vs = Vs_s + (kt & 1u) * "
      "%du;\n"
      "    float s[8][4];\n"
      "#pragma unroll\n"
      "    for (int n = 0; n < 8; n++)\n"
      "#pragma unroll\n"
      "      for (int e = 0; e < 4; e++) s[n][e] = 0.0f;\n"
      "#pragma unroll\n"
      "    for (int kk = 0; kk < %d; kk++)\n"
      "#pragma unroll\n"
      "      for (int np = 0; np < 4; np++) {\n"
      "        /* keys 16np .. +15, head elements 16kk .. +15: matrices (keys "
      "0-7, d 0-7),\n"
      "         * (0-7, 8-15), (8-15, 0-7), (8-15, 8-15) */\n"
      "        unsigned r[4];\n"
      "        fa_ldm4(r, ks + ((np * 16u + (lane & 7u) + (lane >> 4) * 8u) * "
      "%du + kk * 16u + ((lane >> 3) & 1u) * 8u) * 2u);\n"
      "        fa_mma(s[2 * np], qf[kk], r[0], r[1]);\n"
      "        fa_mma(s[2 * np + 1], qf[kk], r[2], r[3]);\n"
      "      }\n",
      D / 8, D / 8, D / 16, D / 16, STR, FA_BK * STR * 2, FA_BK * STR * 2, D / 16, STR);
  /* scores: element e of tile n is row r0 + (e >> 1) * 8, key kt * 64 + 8n +
   * 2t + (e & 1) */
  dml_sb_printf(
      &b,
      "    float mx[2] = {-__builtin_inff(), -__builtin_inff()};\n"
      "#pragma unroll\n"
      "    for (int n = 0; n < 8; n++)\n"
      "#pragma unroll\n"
      "      for (int e = 0; e < 4; e++) {\n"
      "        const unsigned i = r0 + (e >> 1) * 8u, j = kt * %du + n * 8u + 2u "
      "* t + (e & 1);\n"
      "        float x = s[n][e] * %.9ef;\n"
      "        int um = 1; /* key j is not masked */\n",
      FA_BK, a->scale);
  if (a->has_mask) {
    dml_sb_printf(&b,
                  "        if (j >= %lluu) x = -__builtin_inff();\n"
                  "        else if (i < Sq) {\n"
                  "          const unsigned long long mo = %lldull + b * %lldull + h * "
                  "%lldull + i * %lldull + j * %lldull;\n",
                  (unsigned long long)a->m_len, (long long)a->m_off,
                  (long long)a->m_st[0], (long long)a->m_st[1], (long long)a->m_st[2],
                  (long long)a->m_st[3]);
    const char *mb = a->m_buf == DML_KBUF_WEIGHTS ? "weights" : "arena";
    if (a->mask_bool)
      dml_sb_printf(&b,
                    "          if (!((const unsigned char *)%s)[mo]) x = "
                    "-__builtin_inff();\n"
                    "          if (!((const unsigned char *)%s)[mo]) um = 0;\n",
                    mb, mb);
    else
      dml_sb_printf(
          &b,
          "          const float mv = fa_f32(((const unsigned short *)%s)[mo]);\n"
          "          if (mv == -__builtin_inff()) um = 0;\n"
          "          x += mv;\n",
          mb);
    dml_sb_printf(&b,
                  "        }\n"
                  "        if (j >= %lluu) um = 0;\n",
                  (unsigned long long)a->m_len);
  }
  if (a->causal)
    dml_sb_printf(&b,
                  "        if (j > i) x = -__builtin_inff();\n"
                  "        if (j > i) um = 0;\n");
  dml_sb_printf(
      &b,
      "        if (j >= T) x = -__builtin_inff();\n"
      "        if (j >= T) um = 0;\n"
      "        if (um) au[e >> 1] = 1.0f;\n"
      "        x *= 1.44269504f; /* log2 e: p = 2^(x - m) */\n"
      "        s[n][e] = x;\n"
      "        mx[e >> 1] = fa_max(mx[e >> 1], x);\n"
      "      }\n"
      "    float c[2];\n"
      "#pragma unroll\n"
      "    for (int r = 0; r < 2; r++) {\n"
      "      /* the row's four threads (lanes 4g .. 4g + 3) */\n"
      "      mx[r] = fa_max(mx[r], fa_xor(mx[r], 1));\n"
      "      mx[r] = fa_max(mx[r], fa_xor(mx[r], 2));\n"
      "      const float mn = fa_max(m[r], mx[r]);\n"
      "      const float ms = mn == -__builtin_inff() ? 0.0f : mn;\n"
      "      c[r] = __nvvm_ex2_approx_f(m[r] - ms);\n"
      "      m[r] = mn;\n"
      "      mx[r] = ms; /* the exponents' offset */\n"
      "      l[r] *= c[r];\n"
      "    }\n"
      "#pragma unroll\n"
      "    for (int n = 0; n < %d; n++)\n"
      "#pragma unroll\n"
      "      for (int e = 0; e < 4; e++) o[n][e] *= c[e >> 1];\n"
      "#pragma unroll\n"
      "    for (int n = 0; n < 8; n++)\n"
      "#pragma unroll\n"
      "      for (int e = 0; e < 4; e++) {\n"
      "        s[n][e] = __nvvm_ex2_approx_f(s[n][e] - mx[e >> 1]);\n"
      "        l[e >> 1] += s[n][e];\n"
      "      }\n"
      "    /* O += P V: P's A fragments are the score tiles 2kk, 2kk + 1 */\n"
      "#pragma unroll\n"
      "    for (int kk = 0; kk < 4; kk++) {\n"
      "      unsigned pa[4] = {fa_pack(s[2 * kk][0], s[2 * kk][1]), fa_pack(s[2 * "
      "kk][2], "
      "s[2 * kk][3]),\n"
      "                        fa_pack(s[2 * kk + 1][0], s[2 * kk + 1][1]),\n"
      "                        fa_pack(s[2 * kk + 1][2], s[2 * kk + 1][3])};\n"
      "#pragma unroll\n"
      "      for (int dp = 0; dp < %d; dp++) {\n"
      "        /* keys 16kk .. +15, head elements 16dp .. +15 (transposed): matrices\n"
      "         * (keys 0-7, d 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15) */\n"
      "        unsigned r[4];\n"
      "        fa_ldm4t(r, vs + ((kk * 16u + (lane & 7u) + ((lane >> 3) & 1u) * 8u) * "
      "%du "
      "+ dp * 16u + (lane >> 4) * 8u) * 2u);\n"
      "        fa_mma(o[2 * dp], pa, r[0], r[1]);\n"
      "        fa_mma(o[2 * dp + 1], pa, r[2], r[3]);\n"
      "      }\n"
      "    }\n"
      "    /* every warp is past this stage before tile kt + 2 refills it */\n"
      "    __syncthreads();\n"
      "  }\n"
      "  asm volatile(\"cp.async.wait_group 0;\");\n",
      D / 8, D / 16, STR);
  /* y = O / l: the row's l summed over its four threads */
  dml_sb_printf(
      &b,
      "#pragma unroll\n"
      "  for (int r = 0; r < 2; r++) {\n"
      "    l[r] += fa_xor(l[r], 1);\n"
      "    l[r] += fa_xor(l[r], 2);\n"
      "    au[r] = fa_max(au[r], fa_xor(au[r], 1));\n"
      "    au[r] = fa_max(au[r], fa_xor(au[r], 2));\n"
      "    const unsigned i = r0 + r * 8u;\n"
      "    if (i >= Sq) continue;\n"
      "    const int zero = au[r] == 0.0f%s;\n"
      "#pragma unroll\n"
      "    for (int n = 0; n < %d; n++) {\n"
      "      const float y0 = zero ? 0.0f : o[n][2 * r] / l[r], y1 = zero ? 0.0f "
      ": o[n][2 * r + 1] / l[r];\n"
      "      *(unsigned *)(Yg + i * %lldull + n * 8u + 2u * t) = fa_pack(y0, "
      "y1);\n"
      "    }\n"
      "  }\n"
      "}\n"
      "#undef FA_LOAD_KV\n",
      a->nan_zero ? " || l[r] != l[r]" : "", D / 8, (long long)a->y.sp);
  if (b.oom) {
    free(b.p);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen.cuda",
                           "out of memory");
  }
  *out_text = b.p;
  return DML_OK;
}
