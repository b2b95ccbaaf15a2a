/* ir_test_util.h — helpers shared by the IR tests: print to a string,
 * parse a string, read a file. */
#ifndef DML_IR_TEST_UTIL_H_
#define DML_IR_TEST_UTIL_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_ir.h"
#include "dml_ir_text.h"
#include "dml_test.h"

/* Prints `m` (opts may be NULL) into a malloc'd NUL-terminated string. */
static inline char *print_module_str(const dml_ir_module_t *m,
                                     const dml_ir_print_options_t *opts) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  dml_status_t st = dml_ir_print_module(m, opts, f);
  fclose(f);
  if (st) {
    char *msg = dml_status_format(st);
    fprintf(stderr, "print failed: %s\n", msg ? msg : "?");
    free(msg);
    dml_status_free(st);
    free(buf);
    return NULL;
  }
  return buf;
}

/* Parses a NUL-terminated string; prints the error and returns NULL on
 * failure. */
static inline dml_ir_module_t *parse_str(const char *text, const char *name) {
  dml_ir_module_t *m = NULL;
  dml_status_t st = dml_ir_parse(text, strlen(text), name, &m);
  if (st) {
    char *msg = dml_status_format(st);
    fprintf(stderr, "parse of %s failed:\n%s\n", name, msg ? msg : "?");
    free(msg);
    dml_status_free(st);
    return NULL;
  }
  return m;
}

/* Reads tests/ir/inputs/<name> (via $DMLC_SOURCE_DIR); malloc'd, or NULL. */
static inline char *read_input(const char *name) {
  char rel[256], path[1024];
  snprintf(rel, sizeof(rel), "tests/ir/inputs/%s", name);
  dml_test_path("DMLC_SOURCE_DIR", rel, path, sizeof(path));
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    return NULL;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = (char *)malloc((size_t)n + 1);
  size_t got = buf ? fread(buf, 1, (size_t)n, f) : 0;
  fclose(f);
  if (!buf) return NULL;
  buf[got] = 0;
  return buf;
}

#endif /* DML_IR_TEST_UTIL_H_ */
