/* cuda_internal.h — what cuda.c shares with cuda_mma.c (codegen/cuda only). */
#ifndef DML_CUDA_INTERNAL_H_
#define DML_CUDA_INTERNAL_H_

#include <stdint.h>

#include "c_emit.h"
#include "dml_kernel.h"
#include "dml_status.h"

/* The CUDA C dialect of the kernel IR's printers, and the prelude every
 * kernel source starts with (clang attributes, math functions, dml_syms_t;
 * it expects DML_NSYM defined before it). */
const dml_cdialect_t *dml_cuda_dialect(void);
const char *dml_cuda_prelude(void);

/* 1 when kernel `k` has the TF32 tensor-core form: an f32 GEMM or
 * implicit-GEMM convolution (C * kh * kw >= 64) kernel with its product
 * described (dml_kgemm_t) and no random bits in its epilogue. */
int dml_codegen_cuda_mma_applies(const dml_kernel_t *k);

/* The launch geometry of the tensor-core forms (mma.sync and wgmma alike):
 * 256-thread blocks, one per 128 x 256 tile of C (with a symbolic M,
 * possibly more blocks along y; those past M return at once). */
void dml_codegen_cuda_mma_geometry(const dml_kernel_t *k, uint32_t local[3],
                                   dml_klin_t items[3]);

/* CUDA C source of the tensor-core (TF32 mma.sync, sm_80+) form of GEMM
 * kernel `k`, named "<k->name>_tf32". Errors: INVALID_ARGUMENT when `k` has
 * no such form; RESOURCE_EXHAUSTED. */
dml_status_t dml_codegen_cuda_mma(const dml_kernel_t *k, uint32_t n_symbols,
                                  char **out_text);

/* 1 when kernel `k` also has the Hopper form below: a TF32 tensor-core
 * GEMM (Gemm/MatMul; implicit-GEMM convolutions keep mma.sync only) or an
 * f16/bf16 one with A stored [M, K] (dml_codegen_cuda_mma16_applies). */
int dml_codegen_cuda_wgmma_applies(const dml_kernel_t *k);

/* CUDA C source of the Hopper form (TF32, f16 or bf16 wgmma, sm_90a only;
 * cuda_wgmma.c) of GEMM kernel `k`, named as its mma.sync form
 * ("<k->name>_tf32", "<name>_mma_f16", "<name>_mma_bf16"), in the geometry
 * above.
 * Its PTX needs dml_codegen_cuda_sm90a_ptx (dml_codegen.h). Errors: as
 * dml_codegen_cuda_mma. */
dml_status_t dml_codegen_cuda_wgmma(const dml_kernel_t *k, uint32_t n_symbols,
                                    char **out_text);

/* The epilogue device function "<k->name>_epilogue" of tensor-core GEMM
 * kernel `k` (cuda_mma.c's and cuda_wgmma.c's forms): one element of C at
 * (gid_x, gid_y), the f32 product `acc` in register acc_reg, then the
 * kernel IR's epilogue with its typed registers and views (and the typed
 * helpers it needs before it), appended to `b`; with `call` a function
 * clang does not inline (a large epilogue inlined at every accumulator can
 * keep the accumulators out of registers). */
void dml_cuda_tc_epilogue(dml_sb_t *b, const dml_kernel_t *k, int call);

/* The typed helpers (integer functions, f16/bf16 conversions, f64 exp/log)
 * kernel `k` needs, appended to `b` (nothing for an f32-only kernel). */
void dml_cuda_typed_helpers(dml_sb_t *b, const dml_kernel_t *k);

/* Declarations of the typed views of `arena` and `weights` that kernel `k`
 * reads or writes (e.g. `unsigned short *arena_u16`), appended to `b`. */
void dml_cuda_typed_views(dml_sb_t *b, const dml_kernel_t *k);

/* 1 when kernel `k` has the f16/bf16 tensor-core form: a Gemm/MatMul of
 * f16 or bf16 operands with a recorded product (dml_kgemm_t) whose
 * operands' rows are 16-byte aligned, or an f16/bf16 implicit-GEMM
 * convolution (dml_kconv_t: group 1, static spatial dims) with C * kh * kw
 * >= 64, any alignment (see cuda_mma.c). */
int dml_codegen_cuda_mma16_applies(const dml_kernel_t *k);

/* The workgroup size and grid of the f16/bf16 form of `k`: 256 threads,
 * one block per 128 x 256 tile of C for a GEMM (as
 * dml_codegen_cuda_mma_geometry), per 128 x 128 tile for a convolution. */
void dml_codegen_cuda_mma16_geometry(const dml_kernel_t *k, uint32_t local[3],
                                     dml_klin_t items[3]);

/* CUDA C of the f16/bf16 tensor-core form of `k` (kernel `<name>_mma_f16`
 * or `_mma_bf16`; a convolution's first line says "implicit-GEMM conv");
 * INVALID_ARGUMENT when it does not apply, RESOURCE_EXHAUSTED
 * out of memory. The caller free()s *out_text. */
dml_status_t dml_codegen_cuda_mma16(const dml_kernel_t *k, uint32_t n_symbols,
                                    char **out_text);

/* 1 when kernel `k` has the tensor-core attention form (cuda_attn.c): a
 * fused attention with its description (dml_kattn_t: static shapes, f16 or
 * bf16, head size 64 or 128). */
int dml_codegen_cuda_attn_applies(const dml_kernel_t *k);

/* The launch geometry of that form: 128 threads, one block per (64 query
 * rows, batch * query head). */
void dml_codegen_cuda_attn_geometry(const dml_kernel_t *k, uint32_t local[3],
                                    dml_klin_t items[3]);

/* CUDA C of the tensor-core attention form of `k` (kernel "<name>_fa_f16"
 * or "_fa_bf16", sm_80+); INVALID_ARGUMENT when it does not apply,
 * RESOURCE_EXHAUSTED out of memory. The caller free()s *out_text. */
dml_status_t dml_codegen_cuda_attn(const dml_kernel_t *k, uint32_t n_symbols,
                                   char **out_text);

#endif /* DML_CUDA_INTERNAL_H_ */
