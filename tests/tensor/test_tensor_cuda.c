/* test_tensor_cuda.c — eager ops on CUDA tensors (docs/tensor.md "Eager ops
 * on CUDA"): the cases of test_tensor_vulkan.c, compiled here against the
 * PTX library (dml_eager_ptx, the same kernels row for row as the SPIR-V
 * one): every kernel against the same op run eagerly on the CPU, on edge
 * values, random [3, 70001] values, broadcasting, reversed strided views,
 * empty dims, rows of 70,001 for the reductions, a > 2^24-element Mul; the
 * errors; and the device's bytes and storages back at their starting
 * values after every tensor is freed. Tolerances: test_tensor_vulkan.c's.
 * Exits 77 (skip), saying why, without a CUDA driver or device, or in a
 * build without the PTX library. Built in the runtime-only build too
 * (tests/cuda/CMakeLists.txt): scripts/gpu_check.sh runs it on the GPU
 * machine. */
#define TEST_GPU "cuda"
#define TEST_GPU_NO_LIB                                                             \
  "this build has no CUDA eager kernel library (made where the code generator and " \
  "clang-16 are; a runtime-only build takes it with -DDMLC_EAGER_PTX_C)"
#define dml_eager_spirv dml_eager_ptx
#define dml_eager_spirv_count dml_eager_ptx_count
#include "test_tensor_vulkan.c"
