/*
 * dml_kpkg.h — the per-target kernel sections of a .dmlpkg package
 * ("kernels.spirv", "kernels.msl", "kernels.cuda"): for each function, its kernels in
 * execution order, the graph nodes each one holds, its launch geometry and
 * its code. docs/package-format.md gives the byte layout; this is its one
 * implementation, shared by the compiler (encode) and the runtime (decode,
 * which treats the bytes as untrusted).
 *
 * Ownership: dml_kpkg_decode() hands the caller a table it must
 * dml_kpkg_release(); its `code` pointers lend into the section's bytes
 * (valid while they are), everything else is owned by the table.
 * dml_kpkg_encode() hands the caller malloc'd bytes to free().
 *
 * Errors (op "pkg.load"): DATA_LOSS naming the function, kernel and byte
 * offset of what is wrong; RESOURCE_EXHAUSTED.
 */
#ifndef DML_KPKG_H_
#define DML_KPKG_H_

#include <stddef.h>
#include <stdint.h>

#include "dml_pkg.h"
#include "dml_status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DML_KPKG_MAGIC 0x4B4C4D44u /* "DMLK" little-endian */
#define DML_KPKG_VERSION 1u
#define DML_KPKG_NAME_BYTES 32
#define DML_KPKG_MAX_KERNELS (1u << 20)
#define DML_KPKG_MAX_CODE_BYTES (64u << 20)
#define DML_KPKG_MAX_LOCAL 1024u /* invocations per workgroup */
#define DML_KPKG_MAX_SYMBOLS 32u /* push-constant words (128 bytes) */

/* Device-produced dims (docs/kernels.md "Data-dependent output sizes"): a
 * kernel holding a node whose output extents it counts on the device
 * (NonZero, Compress, Unique, NonMaxSuppression) stores each extent it
 * decides, as a little-endian u32, at word `sym` (the symbol's index) of a
 * slot of DML_KPKG_DIMS_SLOT_BYTES past the function's planned arena, at
 * byte dml_kpkg_dims_slot_offset(arena_bytes) (after the 16-byte random
 * state slot of dml_philox.h). The GPU backends read the slot back after
 * such a kernel and run the kernels after it with those symbol values. */
#define DML_KPKG_DIMS_SLOT_BYTES (4u * DML_KPKG_MAX_SYMBOLS)

static inline uint64_t dml_kpkg_dims_slot_offset(uint64_t arena_bytes) {
  return ((arena_bytes + 15u) & ~(uint64_t)15u) + 16u;
}

typedef enum dml_kpkg_target {
  DML_KPKG_TARGET_SPIRV = 1, /* code: SPIR-V words (Vulkan 1.1, SPIR-V 1.3) */
  DML_KPKG_TARGET_MSL = 2,   /* code: Metal Shading Language 2.1 source */
  DML_KPKG_TARGET_CUDA = 3,  /* code: a CUDA image container (below) */
} dml_kpkg_target_t;

/* A CUDA kernel's code is a container of images of the same kernel:
 *   u32 magic DML_KPKG_CUDA_MAGIC, u32 n (1..DML_KPKG_CUDA_MAX_IMAGES),
 *   n x { u32 kind (1 PTX text, 2 cubin, 3 PTX for sm_XXa, 4 cubin for
 *         sm_XXa), u32 sm (compute capability major*10+minor: the PTX's
 *         .target or the cubin's architecture), u32 size (> 0), size
 *         bytes, zeros to a multiple of 4 }.
 * Kinds 3 and 4 use architecture-specific features (e.g. sm_90a's wgmma)
 * and run on exactly compute capability `sm`; the images of one entry may
 * be different programs (the TF32 GEMM's mma.sync and wgmma forms) with
 * the same entry point, parameters and launch geometry. The runtime loads
 * an architecture-specific image of the device's exact compute capability
 * (cubin, else PTX), else the cubin of the device's major version with the
 * highest minor not above the device's, else the PTX (JIT-compiled by the
 * driver) when its sm is not above the device's. */
#define DML_KPKG_CUDA_MAGIC 0x41445543u /* "CUDA" little-endian */
#define DML_KPKG_CUDA_MAX_IMAGES 16u
#define DML_KPKG_CUDA_PTX 1u
#define DML_KPKG_CUDA_CUBIN 2u
#define DML_KPKG_CUDA_PTX_ARCH 3u
#define DML_KPKG_CUDA_CUBIN_ARCH 4u

typedef struct dml_kpkg_cuda_image {
  uint32_t kind; /* DML_KPKG_CUDA_PTX .. DML_KPKG_CUDA_CUBIN_ARCH */
  uint32_t sm;   /* 50 .. 199 */
  uint32_t size;
  const uint8_t *data; /* lent from the code bytes; PTX is not NUL-terminated */
} dml_kpkg_cuda_image_t;

/* Parses and validates a CUDA kernel's code (`size` untrusted bytes):
 * magic, image count, kinds, sm in 50..199, sizes within the bytes, no
 * trailing bytes, PTX text without NUL bytes that declares its `.target`,
 * cubins starting with the ELF magic. Fills out[0 .. *n_out-1]. Errors:
 * DATA_LOSS (op "pkg.load") saying what is wrong. */
dml_status_t dml_kpkg_cuda_images(const uint8_t *code, uint32_t size,
                                  dml_kpkg_cuda_image_t out[DML_KPKG_CUDA_MAX_IMAGES],
                                  uint32_t *n_out);

/* The section tag of a target ("kernels.spirv", "kernels.msl"). */
const char *dml_kpkg_section_tag(dml_kpkg_target_t t);

/* A count c0 + c * (sym < 0 ? 1 : run-time value of symbol sym) * (the
 * product of the run-time values of the symbols whose bits are set in
 * `more`: a value whose dims use several symbols, e.g. one data-dependent
 * symbol per dim of a Reshape fed its shape at run time; 0 for none). */
typedef struct dml_kpkg_lin {
  int64_t c0, c;
  int32_t sym;
  uint32_t more;
} dml_kpkg_lin_t;

/* A kernel entry of kind 9 is no kernel: graph nodes that the host runs
 * with the CPU kernels between the entries before and after it (the CPU
 * fall-back's per-segment placement, docs/kernels.md "CPU fall-back"):
 * workgroup 1x1x1, counts 0, no code (code_bytes 0, code NULL). */
#define DML_KPKG_KIND_HOST 9u

typedef struct dml_kpkg_kernel {
  char name[DML_KPKG_NAME_BYTES]; /* NUL-terminated; the code's entry point */
  uint32_t kind; /* 1 elementwise, 2 gemm, 3 reduce, 4 softmax, 5 conv, 6 pool, 7 move,
                    8 norm, 9 host (DML_KPKG_KIND_HOST) */
  uint32_t n_nodes;
  uint32_t *nodes;         /* node indices of the function, strictly increasing */
  uint32_t local[3];       /* workgroup size, product <= DML_KPKG_MAX_LOCAL */
  dml_kpkg_lin_t items[3]; /* invocations; groups = ceil(items / local) */
  dml_kpkg_lin_t flops;    /* estimated floating-point operations per run */
  dml_kpkg_lin_t bytes;    /* estimated bytes read and written per run */
  uint32_t code_bytes;
  const uint8_t *code;
} dml_kpkg_kernel_t;

typedef struct dml_kpkg_function {
  uint32_t function; /* index in the graph */
  uint32_t n_kernels;
  dml_kpkg_kernel_t *kernels;
} dml_kpkg_function_t;

typedef struct dml_kpkg {
  dml_kpkg_target_t target;
  uint32_t n_functions;
  dml_kpkg_function_t *functions;
} dml_kpkg_t;

/* Serializes `k` into malloc'd bytes. Errors: INVALID_ARGUMENT,
 * RESOURCE_EXHAUSTED. */
dml_status_t dml_kpkg_encode(const dml_kpkg_t *k, void **out_bytes, size_t *out_size);

/* Parses and validates a kernel section of `size` bytes for `target`
 * against the decoded graph `g`: magic and version; counts within the
 * bytes; function indices in range and unique; each kernel's node indices
 * in range and strictly increasing across the function's kernels; every
 * node not held by a kernel a view op; workgroup sizes in 1..1024 (product
 * too); symbols in range; counts non-negative and below 2^32; code present
 * (SPIR-V: a multiple of 4 bytes starting with the magic word 0x07230203;
 * MSL: text without NUL bytes; CUDA: dml_kpkg_cuda_images()). */
dml_status_t dml_kpkg_decode(const void *bytes, size_t size, dml_kpkg_target_t target,
                             const dml_pkg_graph_t *g, dml_kpkg_t **out_kpkg);

/* The kernels of graph function `fn`, or NULL. */
const dml_kpkg_function_t *dml_kpkg_find_function(const dml_kpkg_t *k, uint32_t fn);

/* Evaluates a count for the symbols' values (n entries); -1 when a
 * symbol is out of range, a value negative, or the count overflows. */
int64_t dml_kpkg_lin_eval(dml_kpkg_lin_t l, const int64_t *sym, uint32_t n);

void dml_kpkg_release(dml_kpkg_t *k);

#ifdef __cplusplus
}
#endif
#endif /* DML_KPKG_H_ */
