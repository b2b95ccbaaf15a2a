/*
 * dml_ir_text.h — the textual IR (.dmlir): printer, parser.
 *
 * Syntax (docs/ir-syntax.md has the grammar and the decisions):
 *
 *   module {
 *     sym batch <= 64
 *     global @fc1.weight : f32[256,784] param = dense<0x0000803f...>
 *     global @shape0 : i64[2] = dense<[-1, 784]>
 *     global @state : f32[4] state
 *     func @forward(%input: f32[batch,784]) -> (f32[batch,128], f32[batch,128])
 * arena(1024) { %0 = Gemm(%input, @fc1.weight, _) {alpha = 1.0, transB = 1} :
 * f32[batch,256] mem(0, 65536) loc("/fc1/Gemm") %a, %b = Split(%0, _) {axis = 1} :
 * f32[batch,128], f32[batch,128] return %a, %b
 *     }
 *   }
 *
 * - types: f32[784], f32[batch], f32[16*batch], f32[] (rank 0), f32[?]
 *   (unknown rank), ?[?] (unknown dtype and rank: before inference);
 * - values: %name when the name is unique in the function and an identifier,
 *   %"quoted" when unique but not, %N otherwise (unnamed after parsing);
 *   globals @name or @"quoted"; `_` is an absent optional input;
 * - attributes in stored order: 3, 0.5 (always with '.' or exponent; nan,
 *   inf), "str", [1, 2], [1.5], ["a"], ints[] floats[] strings[] (empty),
 *   tensor<f32[2]> dense<[1.0, 2.0]>;
 * - dense data: a decimal list up to 16 elements, else 0x hex bytes
 *   (little-endian); dense<elided> when elided (the parser rejects it);
 * - `//` comments to end of line.
 *
 * Printing then parsing gives an identical module (same text when printed
 * again): dense data bit-exact, float attributes too (NaN payloads aside).
 */
#ifndef DML_IR_TEXT_H_
#define DML_IR_TEXT_H_

#include <stdio.h>

#include "dml_ir.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dml_ir_print_options {
  /* Constants with more elements than this print as dense<elided>;
   * 0 prints every constant in full. */
  size_t elide_elements_over;
  /* Print node names as `loc("name")` after the type (1) or not (0). */
  int print_locations;
} dml_ir_print_options_t;

/* Prints `m` as IR text to `out`. `opts` may be NULL (print everything in
 * full, with locations). Errors: IO when writing fails. */
dml_status_t dml_ir_print_module(const dml_ir_module_t *m,
                                 const dml_ir_print_options_t *opts, FILE *out);
/* Prints one function (its module's symbols and globals are not printed). */
dml_status_t dml_ir_print_function(const dml_ir_function_t *f,
                                   const dml_ir_print_options_t *opts, FILE *out);

/* Parses IR text (`len` bytes, need not be NUL-terminated) into a new
 * module the caller releases. `filename` is used in error details
 * ("file.dmlir:12:5"). Errors: INVALID_ARGUMENT with op "ir.parse", line
 * and column, what was expected and what was found. Never crashes on any
 * input (fuzzed). */
dml_status_t dml_ir_parse(const char *text, size_t len, const char *filename,
                          dml_ir_module_t **out_module);
/* Reads and parses a file. Errors as dml_ir_parse, plus NOT_FOUND/IO. */
dml_status_t dml_ir_parse_file(const char *path, dml_ir_module_t **out_module);

#ifdef __cplusplus
}
#endif
#endif /* DML_IR_TEXT_H_ */
