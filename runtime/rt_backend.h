/*
 * rt_backend.h — the runtime's backend interface (ARCHITECTURE.md: a
 * struct of function pointers). A session runs on one backend: "cpu" (the
 * reference executor of rt_session.c) or "vulkan[:N]" (runtime/vulkan/,
 * libvulkan.so.1 opened with dlopen at run time).
 *
 * The session keeps the host arena in every case: set_input copies into it
 * and get_output reads from it. A GPU backend copies the function's inputs
 * from the host arena to the device before its kernels and the outputs
 * back after them, so everything above the backend is unchanged.
 */
#ifndef DML_RT_BACKEND_H_
#define DML_RT_BACKEND_H_

#include <stdint.h>

#include "rt_internal.h"

/* What a backend's run sees. */
typedef struct dml_rt_exec {
  const dml_rt_model_t *m;
  const dml_pkg_function_t *fn;
  uint8_t *arena;     /* host arena: inputs bound here, outputs read here */
  const int64_t *sym; /* the run's symbol values */
  uint32_t n_symbols;
} dml_rt_exec_t;

typedef struct dml_rt_backend {
  const char *name; /* "vulkan" */
  /* Opens `device` ("vulkan", "vulkan:N") for function `fn` of `m`, whose
   * globals' current bytes are `weights` (m->weights_size bytes). */
  dml_status_t (*open)(const dml_rt_model_t *m, const dml_pkg_function_t *fn,
                       const char *device, const uint8_t *weights, void **out_state);
  /* Runs the function: inputs from e->arena, outputs back into it. */
  dml_status_t (*run)(void *state, const dml_rt_exec_t *e);
  /* Per-kernel device times of the last run, in ms (n_kernels entries). */
  uint32_t (*num_kernels)(void *state);
  dml_status_t (*kernel_info)(void *state, uint32_t i, dml_rt_kernel_info_t *out);
  /* A description of the device ("lavapipe (cpu), Vulkan 1.3.238"). */
  const char *(*device_name)(void *state);
  void (*close)(void *state);
} dml_rt_backend_t;

/* Fills *out for kernel `i` of the kernel table `kf` after a run, as the GPU
 * backends report it: name and graph nodes, the measured device time
 * kernel_ms[i] (ms) and the kernel's work (FLOP, bytes) at the run's symbol
 * values `sym`. `op` names the backend in errors. Errors: OUT_OF_RANGE,
 * FAILED_PRECONDITION when no run has completed (`ran` 0). */
struct dml_kpkg_function;
dml_status_t dml_rt_kernel_info_fill(const char *op, const struct dml_kpkg_function *kf,
                                     uint32_t i, int ran, const double *kernel_ms,
                                     const int64_t *sym, uint32_t n_symbols,
                                     dml_rt_kernel_info_t *out);

/* The checks a GPU backend makes when it opens function `f`: `table` (the
 * package's kernels for the backend's target, may be NULL) has kernels for
 * `f`; the symbols fit push constants; every node outside the kernels is a
 * view planned in place; every non-constant value is f32 (what the GPU
 * kernels handle). `target` ("Vulkan", "CUDA") and `flag` ("vulkan",
 * "cuda", the --target spelling) word the errors; `op` names the backend.
 * Errors: FAILED_PRECONDITION (no kernels), UNIMPLEMENTED (symbols, dtype),
 * DATA_LOSS (a node in no kernel that does not alias its input). */
struct dml_kpkg;
dml_status_t dml_rt_gpu_kernels_for(const char *op, const char *target, const char *flag,
                                    const dml_rt_model_t *m, const dml_pkg_function_t *f,
                                    const struct dml_kpkg *table,
                                    const struct dml_kpkg_function **out_kf);

/* The Vulkan backend; NULL in builds without Vulkan headers. */
const dml_rt_backend_t *dml_rt_vulkan_backend(void);

/* The CUDA backend (runtime/cuda/rt_cuda.c; libcuda.so.1 opened at run
 * time, so it is in every build). */
const dml_rt_backend_t *dml_rt_cuda_backend(void);

#endif /* DML_RT_BACKEND_H_ */
