/*
 * dml_driver.h — compile an ONNX model (or an IR module from another
 * frontend) into a .dmlpkg package.
 *
 * The whole pipeline as a library call: ONNX import (frontends/onnx), the
 * default pass pipeline (shape-infer, expand-gradient, const-fold, cse, dce, mem-plan),
 * then the package emitter. `dmlc compile` is a thin wrapper; an app that compiles models
 * itself links dml_driver.
 *
 * Ownership: nothing returned needs freeing except statuses.
 */
#ifndef DML_DRIVER_H_
#define DML_DRIVER_H_

#include <stdint.h>
#include <stdio.h>

#include "dml_onnx.h"
#include "dml_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dml_train_config dml_train_config_t; /* passes/dml_train.h */

typedef struct dml_compile_options {
  /* Comma-separated targets: "cpu", and "vulkan" (SPIR-V), "metal" (MSL)
   * and "cuda" (PTX and cubins) in builds with GPU code generation
   * (DMLC_HAVE_CODEGEN). NULL = "cpu".
   * The CPU plan is always in the package; each GPU target adds a kernel
   * section (docs/package-format.md), and fails listing the ops it lacks. */
  const char *targets;
  /* Upper bound of every symbolic dim (batch); 0 means 64. */
  int64_t batch_bound;
  /* Value-dependent shapes (a Reshape's shape, Slice's starts, Resize's
   * scales, ... computed at run time; ir/dml_ir.h): the bound of such a dim
   * that no input shape bounds, and the most elements planned for a value
   * with such dims. 0 means DML_IR_DYNAMIC_DIM_BOUND_DEFAULT (4096) and
   * DML_IR_DYNAMIC_MAX_ELEMENTS_DEFAULT (2^24); at most 2^31 and 2^40. */
  int64_t dynamic_dim_bound;
  int64_t dynamic_max_elements;
  /* IR dumps, as dml_pass_options_t: after the named pass, or after all. */
  const char *print_ir_after;
  int print_ir_after_all;
  FILE *dump; /* NULL: stderr */
  /* Recorded in the package's meta section; may be NULL. */
  const char *command_line;
  /* Graph inputs compiled as constants (dml_onnx_import_options_t's `bind`):
   * for inputs that carry shapes, e.g. Reshape's target shape fed as a graph
   * input. The tensors are lent for the duration of the call. */
  const dml_onnx_binding_t *bind;
  size_t n_bind;
  /* Declared input shapes replaced (dml_onnx_import_options_t's
   * `input_shapes`); lent for the duration of the call. */
  const dml_onnx_input_shape_t *input_shapes;
  size_t n_input_shapes;
  /* Bounds of symbolic dims by symbol name (dml_onnx_import_options_t's
   * `dim_bounds`, dmlc compile --dim-bound H=1280); the others get
   * batch_bound. Lent for the duration of the call. */
  const dml_onnx_dim_bound_t *dim_bounds;
  size_t n_dim_bounds;
  /* Symbolic input dims with ranges (dml_onnx_import_options_t's
   * `input_ranges`, dmlc compile --input-shape x=1x3x[32:640]x...); lent
   * for the duration of the call. */
  const dml_onnx_dim_range_t *input_ranges;
  size_t n_input_ranges;
  /* Sequence graph inputs' element counts and shapes
   * (dml_onnx_import_options_t's `sequence_inputs`); lent for the call. */
  const dml_onnx_sequence_input_t *sequence_inputs;
  size_t n_sequence_inputs;
  /* Optional graph inputs present or none (dml_onnx_import_options_t's
   * `optional_inputs`); lent for the call. */
  const dml_onnx_optional_input_t *optional_inputs;
  size_t n_optional_inputs;
  /* Training (passes/dml_train.h): when not NULL, the package also holds
   * train_step and eval_step built with this configuration, and forward is
   * in inference mode. Lent for the call. */
  const dml_train_config_t *train;
  /* When not NULL, the kernel plan of every function (kernels, the graph
   * nodes each holds, their bodies in the kernel IR) is printed here
   * (`dmlc compile --print-kernels`). */
  FILE *print_kernels;
  /* --cuda-arch (dml_codegen_cuda_section): NULL = PTX plus cubins for
   * sm_80 and sm_90 when ptxas is found; "ptx"; or "sm_80,sm_90,...". Only
   * with the cuda target (INVALID_ARGUMENT otherwise). */
  const char *cuda_arch;
  /* --allow-tf32: the cuda target's GEMM kernels run on TF32 tensor cores
   * (operands rounded to 10 mantissa bits: results differ from f32 by
   * about 1e-3 relative; dml_codegen_cuda_section). Only with the cuda
   * target (INVALID_ARGUMENT otherwise). */
  int allow_tf32;
  /* --precision: NULL or "f32" (the model's dtypes), "f16" or "bf16": the
   * precision pass (passes/precision.c) stores the values and weights of
   * the ops the GPU kernels take in 16 bits (DML_OPF_HALF in ops.def:
   * elementwise, data movement, Gemm/MatMul with f32 accumulation; the
   * rest stays f32), with Casts at the function edges so inputs and
   * outputs keep their dtypes. The package's one graph serves every
   * device, so a CPU session runs the 16-bit graph too. Needs a GPU target
   * and no `train` (INVALID_ARGUMENT otherwise). */
  const char *precision;
  /* When not NULL, called on the compiling thread as each stage begins,
   * with `progress_ctx` and the stage in words ("reading the ONNX model",
   * "optimizing (passes)", "building the training functions", "writing
   * the package", "generating GPU kernels"): `dmlc compile --progress`. */
  void (*progress)(void *ctx, const char *stage);
  void *progress_ctx;
  /* The CPU fall-back (docs/kernels.md "CPU fall-back"): by default a
   * function that a GPU target cannot emit (an op, a dtype or a form it
   * lacks, string tensors, run-time control flow) is left out of that
   * target's kernel section, and a session on that device runs it with the
   * CPU kernels (the package's "placement" section says which and why).
   * no_cpu_fallback 1 (`dmlc compile --no-cpu-fallback`) makes those an
   * error, listing what the target lacks. Training packages (`train` set)
   * have no fall-back yet: their functions share the device's globals. */
  int no_cpu_fallback;
  /* When not NULL, called once per function placed on the host, with
   * note_ctx and one line "<target>\t<function>\t<why>" (a line of the
   * placement section, without its newline): dmlc compile prints a note. */
  void (*note)(void *ctx, const char *line);
  void *note_ctx;
} dml_compile_options_t;

typedef struct dml_compile_report {
  uint32_t num_nodes;     /* nodes of `forward` after optimization */
  uint32_t num_weights;   /* constant globals stored in the package */
  uint64_t weight_bytes;  /* bytes of weights */
  int64_t arena_bytes;    /* planned arena at the bound, bytes */
  uint64_t package_bytes; /* size of the written file, bytes */
  double compile_ms;      /* wall time of the whole compile, ms */
} dml_compile_report_t;

/* Compiles `onnx_path` into the package `out_path` (written atomically:
 * an existing file is replaced only once the new one is complete).
 * `opts` may be NULL; `out_report` may be NULL.
 * Errors: those of dml_onnx_import_file (unsupported ops listed at once),
 * of every pass (annotated with the pass), of the emitter; UNIMPLEMENTED
 * for a target this build lacks (cuda; vulkan/metal without codegen) or an
 * op a GPU target cannot emit (listed); INVALID_ARGUMENT for a bad batch
 * bound. */
dml_status_t dml_compile_onnx_file(const char *onnx_path, const char *out_path,
                                   const dml_compile_options_t *opts,
                                   dml_compile_report_t *out_report);

/* As dml_compile_onnx_file, from the ONNX model in `len` bytes at `data`
 * (lent), into a package held in memory: on success *out_package is
 * malloc'd (the caller free()s it) and *out_size its size, ready for
 * dml_rt_model_load_memory(). External data is read relative to `base_dir`
 * (NULL: not allowed); `source_name` goes into the package's meta section
 * (may be NULL). out_report->package_bytes is the package's size.
 * Errors: as dml_compile_onnx_file, less the file ones. */
dml_status_t dml_compile_onnx_memory(const void *data, size_t len, const char *base_dir,
                                     const char *source_name,
                                     const dml_compile_options_t *opts,
                                     void **out_package, size_t *out_size,
                                     dml_compile_report_t *out_report);

/* The targets this build compiles for, in words: "cpu, vulkan, metal, cuda",
 * or "cpu (this build has no GPU code generation: ...)". Static string. */
const char *dml_compile_available_targets(void);

/* Adds the kernel sections of the GPU targets in `targets` ("vulkan":
 * "kernels.spirv", "metal": "kernels.msl"; "cpu" adds nothing) to the
 * package of `*size` bytes at `*bytes` (malloc'd), which is replaced by
 * the new package (the old bytes freed) on success. `print_kernels` (may be
 * NULL) receives the kernel plans. Errors: as dml_compile_onnx_file's for
 * targets; DATA_LOSS for bytes that are not a package. */
dml_status_t dml_compile_add_kernels(const char *targets, FILE *print_kernels,
                                     void **bytes, size_t *size);

/* As dml_compile_add_kernels, "cuda" adding "kernels.cuda" built for
 * `cuda_arch` (dml_compile_options_t's cuda_arch; NULL: the default), with
 * TF32 tensor-core GEMMs when `allow_tf32` (dml_compile_options_t's). */
dml_status_t dml_compile_add_kernels_arch(const char *targets, const char *cuda_arch,
                                          int allow_tf32, FILE *print_kernels,
                                          void **bytes, size_t *size);

/* As dml_compile_add_kernels_arch with the CPU fall-back when
 * `cpu_fallback` is 1 (dml_compile_options_t's no_cpu_fallback 0): the
 * functions a GPU target cannot emit are left out of its section, listed
 * in a "placement" section (docs/package-format.md) and passed to
 * note(note_ctx, line) (may be NULL) one line each. With cpu_fallback 0
 * it is dml_compile_add_kernels_arch (those are errors). */
dml_status_t dml_compile_add_kernels_fb(const char *targets, const char *cuda_arch,
                                        int allow_tf32, int cpu_fallback,
                                        void (*note)(void *ctx, const char *line),
                                        void *note_ctx, FILE *print_kernels, void **bytes,
                                        size_t *size);

/* Compiles an IR module built by any frontend (e.g. dml_layers_model_to_ir
 * of frontends/layers) into the package `out_path` (atomically): the
 * default pass pipeline, the target check and the emitter, as for ONNX.
 * The module is optimized in place (the caller still releases it).
 * opts->batch_bound, when not 0, replaces the bound of every input symbol;
 * 0 keeps the module's bounds (the package's meta records the largest).
 * The ONNX import options (bind, input_shapes, sequence_inputs,
 * optional_inputs) do not apply: setting them is INVALID_ARGUMENT.
 * `source_name` goes into the meta section (may be NULL). Targets and
 * opts->train work as for ONNX. Errors: those of every pass, of the
 * emitter and of the targets (as dml_compile_onnx_file); INVALID_ARGUMENT
 * for a bad batch bound or a NULL module. */
dml_status_t dml_compile_module(dml_ir_module_t *module, const char *source_name,
                                const char *out_path, const dml_compile_options_t *opts,
                                dml_compile_report_t *out_report);

/* As dml_compile_module, into a malloc'd package in memory (the caller
 * free()s *out_package), ready for dml_rt_model_load_memory(). */
dml_status_t dml_compile_module_memory(dml_ir_module_t *module, const char *source_name,
                                       const dml_compile_options_t *opts,
                                       void **out_package, size_t *out_size,
                                       dml_compile_report_t *out_report);

#ifdef __cplusplus
}
#endif
#endif /* DML_DRIVER_H_ */
