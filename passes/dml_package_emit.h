/*
 * dml_package_emit.h — writes a planned IR module as a .dmlpkg package.
 *
 * The module must be fully typed and memory-planned (shape-infer, then
 * mem-plan): every argument and node result of every function has a known
 * type and an arena range (mem_offset/mem_bytes), and every function its
 * arena_bytes. Globals used by a function become CONST values: their data
 * (zeros where a global has none) is laid out in the "weights" section,
 * each 64-byte aligned. The package format: docs/package-format.md.
 *
 * Ownership: the module is only read. dml_package_emit_memory() hands the
 * caller malloc'd bytes to free(). The options' add_sections hook (the
 * compiler's GPU kernels) adds sections before the package is written;
 * its errors are returned as they are.
 *
 * Errors (op "pkg.emit"): FAILED_PRECONDITION naming a value without a type
 * or memory plan ("run the mem-plan pass"); INVALID_ARGUMENT for a global
 * with a symbolic shape or data of the wrong size; DATA_LOSS / UNIMPLEMENTED
 * when the package would not load back (checked before writing); IO from
 * writing the file (atomic: an existing package is never left half
 * written).
 */
#ifndef DML_PACKAGE_EMIT_H_
#define DML_PACKAGE_EMIT_H_

#include <stddef.h>
#include <stdint.h>

#include "dml_ir.h"
#include "dml_pkg.h"
#include "dml_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What goes into the "meta" section (each NULL or 0 field is left out). */
typedef struct dml_package_emit_options {
  const char *source_name;  /* "source: mnist.onnx" (the model file's base name) */
  const char *targets;      /* "targets: cpu" (NULL means "cpu") */
  int64_t batch_bound;      /* "batch-bound: 64" */
  const char *command_line; /* "created-by: dmlc compile mnist.onnx -o m.dmlpkg" */
  /* More sections (the GPU targets' kernels): called once with the graph
   * the emitter built from the module (the one it encodes into the
   * "graph" section, after decoding those bytes checked them: the same
   * tables the runtime will read) and the "weights" section, after the
   * meta, graph, weights and strings sections were added to `w` and
   * before the package is written; its error is the emit's. NULL: none. */
  dml_status_t (*add_sections)(void *ctx, const dml_pkg_graph_t *g,
                               const uint8_t *weights, uint64_t weights_size,
                               dml_pkg_writer_t *w);
  void *add_sections_ctx;
} dml_package_emit_options_t;

/* Writes `m` to `path` (atomically). `o` may be NULL. */
dml_status_t dml_package_emit(const dml_ir_module_t *m,
                              const dml_package_emit_options_t *o, const char *path);

/* As dml_package_emit, into malloc'd bytes. */
dml_status_t dml_package_emit_memory(const dml_ir_module_t *m,
                                     const dml_package_emit_options_t *o,
                                     void **out_bytes, size_t *out_size);

#ifdef __cplusplus
}
#endif
#endif /* DML_PACKAGE_EMIT_H_ */
