/*
 * dml_codegen.h — GPU targets: which ops each can emit, and the kernels of
 * a package rendered for them (GLSL 450 -> SPIR-V for Vulkan; MSL for
 * Metal, from the same SPIR-V through SPIRV-Cross). docs/kernels.md.
 *
 * Binding layout (every kernel, both targets):
 *   Vulkan: set 0 binding 0 = the function's arena (f32[], read/write),
 *           set 0 binding 1 = the package's "weights" section (f32[],
 *           read-only), push constants = uint sym[max(1, n_symbols)]: the
 *           run-time value of each package symbol (e.g. the batch).
 *   Metal:  [[buffer(0)]] arena, [[buffer(1)]] weights, [[buffer(2)]] the
 *           symbol block; threadgroup memory for shared tiles is declared in
 *           the kernel (no threadgroup-memory arguments).
 *
 * Ownership: returned text and words are malloc'd; the caller free()s them.
 * Errors: op "codegen.<target>": UNIMPLEMENTED listing what a target lacks;
 * INTERNAL with glslang's, SPIRV-Tools' or SPIRV-Cross's log when a module
 * fails to compile, validate or translate (a dmlc bug); RESOURCE_EXHAUSTED.
 */
#ifndef DML_CODEGEN_H_
#define DML_CODEGEN_H_

#include <stddef.h>
#include <stdint.h>

#include "dml_kernel.h"
#include "dml_ops.h"
#include "dml_pkg.h"
#include "dml_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when GPU target `target` ("vulkan", "metal" or "cuda") can emit op `op` (at
 * least in its f32 forms; dml_kschedule() says which forms). */
int dml_codegen_supports(const char *target, dml_op_t op);

/* Checks every node of every function of `g` against `target`'s op list
 * (first: a node reading or writing a string tensor is UNIMPLEMENTED naming
 * the node, its op and the value; strings are CPU only):
 * UNIMPLEMENTED listing each missing op once, with its node count; then
 * the target's dtypes: "metal" refuses f64 values (UNIMPLEMENTED, op
 * "codegen.metal", listing each op whose nodes hold f64 values, with the
 * count), "vulkan" and "cuda" hold every numeric dtype. */
dml_status_t dml_codegen_check_ops(const char *target, const dml_pkg_graph_t *g);

/* dml_codegen_check_ops() for function `fn` of `g` alone. */
dml_status_t dml_codegen_check_function(const char *target, const dml_pkg_graph_t *g,
                                        uint32_t fn);

/* The CPU fall-back (docs/kernels.md "CPU fall-back"): what GPU targets
 * cannot emit, placed on the host. `text` holds one line per (target,
 * function): "<target>\t<function name>\t<where>: <why: op: reason
 * (details)>\n" (malloc'd, NULL when n_host is 0), <where> being "whole
 * function ..." or "N of M nodes on the host, ..." (per-segment); the
 * package stores it as its "placement" section and `dmlc inspect` prints
 * it. */
typedef struct dml_codegen_fallback {
  uint32_t n_host; /* lines of text */
  char *text;
} dml_codegen_fallback_t;

/* Records that `target` runs function `fn` of `g`, or the part `where`
 * says (NULL: "whole function"), on the host because of `why` (an error
 * status, which this call takes and frees). Errors: RESOURCE_EXHAUSTED. */
dml_status_t dml_codegen_fallback_add(dml_codegen_fallback_t *fb, const char *target,
                                      const dml_pkg_graph_t *g, uint32_t fn,
                                      const char *where, dml_status_t why);

/* Where `target` runs function `fi` of `g` (the CPU fall-back's placement,
 * docs/kernels.md "CPU fall-back"): *out_plan gets the device's kernels,
 * with DML_KK_HOST entries for the nodes placed on the host (per segment;
 * *out_n_host of them, *out_why saying why, `where` "N of M nodes on the
 * host, ..."), or none (*out_n_host 0, *out_why OK); or NULL when the whole
 * function runs on the host (*out_why says why, `where` "whole function
 * (...)"). Errors: the scheduler's other than UNIMPLEMENTED;
 * RESOURCE_EXHAUSTED. */
dml_status_t dml_codegen_place(const char *target, const dml_pkg_graph_t *g, uint32_t fi,
                               const uint8_t *weights, uint64_t weights_size,
                               dml_kplan_t **out_plan, uint32_t *out_n_host,
                               dml_status_t *out_why, char *where, size_t where_cap);

/* Frees fb's text and zeroes it. */
void dml_codegen_fallback_release(dml_codegen_fallback_t *fb);

/* GLSL 450 compute source of kernel `k` (n_symbols push-constant words). */
dml_status_t dml_codegen_glsl(const dml_kernel_t *k, uint32_t n_symbols, char **out_text);

/* Compiles GLSL compute source to SPIR-V 1.3 for Vulkan 1.1 with glslang
 * (its SPIRV-Tools optimizer on), adds SignedZeroInfNanPreserve 64 next to
 * the source's 32-bit mode when the module uses doubles, then validates it
 * with spvValidate. Deterministic: the same source gives the same words. */
dml_status_t dml_codegen_spirv(const char *glsl, const char *kernel_name,
                               uint32_t **out_words, size_t *out_n_words);

/* Translates SPIR-V into Metal Shading Language 2.1 with SPIRV-Cross, the
 * entry point renamed `kernel_name`, with the binding layout above; the
 * source starts with dml_msl_header. */
/* The lines every emitted MSL source starts with: `#pragma METAL fp
 * math_mode(safe)` (IEEE NaN, infinities, -0; no value-changing rewrites)
 * under `#if __METAL_VERSION__ >= 320`; older Metal compilers need
 * MTLCompileOptions.fastMathEnabled = NO (docs/embedding.md). */
extern const char dml_msl_header[];

dml_status_t dml_codegen_msl(const uint32_t *words, size_t n_words,
                             const char *kernel_name, char **out_msl);

/* Builds the kernel sections of a package: for each of `want_spirv` /
 * `want_msl`, every function of `g` scheduled (dml_kschedule), rendered
 * and encoded (dml_kpkg.h). *out_spirv / *out_msl (malloc'd, sizes set)
 * stay NULL when not wanted. `print` (may be NULL) receives the kernel
 * plans (`dmlc compile --print-kernels`). */
dml_status_t dml_codegen_sections(const dml_pkg_graph_t *g, const uint8_t *weights,
                                  uint64_t weights_size, int want_spirv, int want_msl,
                                  FILE *print, void **out_spirv, size_t *out_spirv_size,
                                  void **out_msl, size_t *out_msl_size);

/* dml_codegen_sections() with the CPU fall-back when `fb` is not NULL: a
 * function that a target cannot emit (an op or dtype it lacks, string
 * tensors, a form the scheduler refuses: any UNIMPLEMENTED from
 * dml_codegen_check_function, dml_kschedule or rendering) is placed on
 * the host and recorded in `fb`: per segment where possible (those nodes
 * in DML_KK_HOST entries of the function's kernels, which the runtime runs
 * with the CPU kernels between the device's), else the whole function
 * (left out of that target's section: the runtime runs it with the CPU
 * kernels in a GPU session). With fb NULL those are errors, as
 * dml_codegen_sections. With `ctabs` not NULL, the kernels' large constant
 * tables are placed in it (dml_kplan_place_ctabs: the caller appends them
 * to the weights section, dml_kctab_place_weights); NULL keeps them as
 * constant arrays (at most DML_KCTAB_RENDER_MAX entries a kernel). */
dml_status_t dml_codegen_sections_fb(const dml_pkg_graph_t *g, const uint8_t *weights,
                                     uint64_t weights_size, int want_spirv, int want_msl,
                                     FILE *print, dml_codegen_fallback_t *fb,
                                     dml_kctab_place_t *ctabs, void **out_spirv,
                                     size_t *out_spirv_size, void **out_msl,
                                     size_t *out_msl_size);

/* ---- CUDA (codegen/cuda/cuda.c, docs/kernels.md "CUDA") ----
 * Kernel parameters: (float *arena, const float *weights, struct { unsigned
 * sym[max(1, n_symbols)]; } syms) passed by value; the block is the
 * kernel's workgroup size, the grid ceil(items / local). */

/* CUDA C source of kernel `k`, self-contained (a prelude replaces the CUDA
 * headers: clang's attributes and NVVM builtins). */
dml_status_t dml_codegen_cuda(const dml_kernel_t *k, uint32_t n_symbols, char **out_text);

/* The clang used for CUDA C -> PTX: $DMLC_CLANG when set (NULL when that is
 * not executable), else the clang-16 found at configure time, else clang-16
 * in $PATH; NULL when none. */
const char *dml_codegen_cuda_clang(void);
/* The ptxas used for cubins: $DMLC_PTXAS when set (empty: none), else
 * /usr/local/cuda/bin/ptxas, else ptxas in $PATH; NULL when none. */
const char *dml_codegen_cuda_ptxas(void);

/* Compiles CUDA C source to PTX for sm_<sm> with clang (a subprocess in a
 * private temporary directory: -x cuda --cuda-device-only -nocudainc
 * -nocudalib -O3, PTX ISA 7.8). Errors: FAILED_PRECONDITION without clang;
 * INTERNAL with clang's exit status and output; IO. *out_ptx is
 * NUL-terminated, malloc'd. */
dml_status_t dml_codegen_cuda_ptx(const char *src, int sm, char **out_ptx);

/* A copy of clang's PTX for sm_90 (`ptx`, NUL-terminated) with its
 * `.version` line raised to 8.0 and its `.target sm_90` to sm_90a, what
 * the TF32 GEMM's warpgroup-MMA form needs (clang-16 writes PTX 7.8 at
 * most). Caller frees *out_ptx. Errors: INTERNAL when the `.version` line
 * followed by `.target sm_90` is missing; RESOURCE_EXHAUSTED. */
dml_status_t dml_codegen_cuda_sm90a_ptx(const char *ptx, char **out_ptx);

/* Assembles PTX into a cubin for sm_<sm> with ptxas -O3. Errors as
 * dml_codegen_cuda_ptx (FAILED_PRECONDITION without ptxas). */
dml_status_t dml_codegen_cuda_cubin(const char *ptx, int sm, void **out, size_t *out_n);

/* Builds the "kernels.cuda" section: every function of `g` scheduled,
 * each kernel rendered to CUDA C, compiled to PTX and, per `cuda_arch`, to
 * cubins, in a CUDA image container (dml_kpkg.h). `cuda_arch`: NULL or ""
 * = PTX for sm_80 plus cubins for sm_80 and sm_90 when ptxas is found;
 * "ptx" = PTX only; "sm_80,sm_90,..." = cubins for each (ptxas required)
 * and PTX for the lowest. `allow_tf32`: GEMM kernels use TF32 tensor cores
 * (mma.sync.m16n8k8, codegen/cuda/cuda_mma.c) when the PTX targets sm_80
 * or later; TF32 rounds each operand to 10 mantissa bits (results differ
 * from f32 by about 1e-3 relative), so it is the user's choice
 * (`dmlc compile --allow-tf32`). Deterministic for the same tools. */
dml_status_t dml_codegen_cuda_section(const dml_pkg_graph_t *g, const uint8_t *weights,
                                      uint64_t weights_size, const char *cuda_arch,
                                      int allow_tf32, FILE *print, void **out_bytes,
                                      size_t *out_size);

/* dml_codegen_cuda_section() with the CPU fall-back when `fb` is not NULL
 * (as dml_codegen_sections_fb: functions the cuda target cannot emit are
 * left out of the section and recorded in fb, target "cuda"), and the
 * large constant tables placed in `ctabs` when not NULL (as
 * dml_codegen_sections_fb). */
dml_status_t dml_codegen_cuda_section_fb(const dml_pkg_graph_t *g, const uint8_t *weights,
                                         uint64_t weights_size, const char *cuda_arch,
                                         int allow_tf32, FILE *print,
                                         dml_codegen_fallback_t *fb,
                                         dml_kctab_place_t *ctabs, void **out_bytes,
                                         size_t *out_size);

#ifdef __cplusplus
}
#endif
#endif /* DML_CODEGEN_H_ */
