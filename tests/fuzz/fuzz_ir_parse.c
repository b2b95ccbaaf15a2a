/* fuzz_ir_parse.c — libFuzzer target for the IR text parser.
 *
 * Parses the bytes (not NUL-terminated); when they parse, prints the module
 * to memory, parses that again and checks the second print is identical
 * (print -> parse -> print is the round-trip contract of dml_ir_text.h).
 * Also runs the verifier on what parsed. Everything is released. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_ir.h"
#include "dml_ir_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Prints `m` into a malloc'd buffer; NULL on failure. */
static char *print_to_memory(const dml_ir_module_t *m, size_t *out_len) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  dml_status_t st = dml_ir_print_module(m, NULL, f);
  fclose(f);
  if (st) {
    dml_status_free(st);
    free(buf);
    return NULL;
  }
  *out_len = len;
  return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dml_ir_module_t *m = NULL;
  dml_status_t st = dml_ir_parse((const char *)data, size, "fuzz.dmlir", &m);
  if (st) {
    /* Every parse error is INVALID_ARGUMENT (or out of memory). */
    if (dml_status_code(st) != DML_STATUS_INVALID_ARGUMENT &&
        dml_status_code(st) != DML_STATUS_RESOURCE_EXHAUSTED)
      abort();
    dml_status_free(st);
    return 0;
  }
  dml_status_free(dml_ir_verify(m, 0));
  dml_status_free(dml_ir_verify(m, 1));
  size_t len1 = 0;
  char *text1 = print_to_memory(m, &len1);
  dml_ir_module_release(m);
  if (!text1) return 0;
  dml_ir_module_t *m2 = NULL;
  st = dml_ir_parse(text1, len1, "printed.dmlir", &m2);
  if (st) {
    /* What the printer prints must parse back. */
    char *msg = dml_status_format(st);
    fprintf(stderr, "printed text does not parse:\n%s\n---\n%.*s\n", msg ? msg : "?",
            (int)len1, text1);
    abort();
  }
  size_t len2 = 0;
  char *text2 = print_to_memory(m2, &len2);
  dml_ir_module_release(m2);
  if (text2 && (len1 != len2 || memcmp(text1, text2, len1) != 0)) {
    fprintf(stderr, "print -> parse -> print differs:\n%.*s\n---\n%.*s\n", (int)len1,
            text1, (int)len2, text2);
    abort();
  }
  free(text1);
  free(text2);
  return 0;
}
