/*
 * dml_test.h — a minimal check harness for dmlc's C tests.
 *
 *   static void test_x(void) { CHECK(a == b); CHECK_NEAR(x, y, 1e-6); }
 *   int main(void) { RUN(test_x); return dml_test_finish(); }
 *
 * Every failed check prints file:line and the expression; the test exits 1
 * if any check failed. dml_test_finish() prints "N passed, N failed".
 */
#ifndef DML_TEST_H_
#define DML_TEST_H_

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_status.h"
#include "dml_types.h"

static int dml_test_checks_failed_ = 0;
static int dml_test_cases_passed_ = 0, dml_test_cases_failed_ = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      dml_test_checks_failed_++;                                               \
    }                                                                          \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                                         \
  do {                                                                                \
    double dml_a_ = (double)(a), dml_b_ = (double)(b);                                \
    if (!(fabs(dml_a_ - dml_b_) <= (tol))) {                                          \
      fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s=%.9g %s=%.9g tol=%g\n", __FILE__, \
              __LINE__, #a, dml_a_, #b, dml_b_, (double)(tol));                       \
      dml_test_checks_failed_++;                                                      \
    }                                                                                 \
  } while (0)

/* Checks a status is OK; prints and frees it otherwise. */
#define CHECK_OK(expr)                                                             \
  do {                                                                             \
    dml_status_t dml_st_ = (expr);                                                 \
    if (dml_st_) {                                                                 \
      char *dml_msg_ = dml_status_format(dml_st_);                                 \
      fprintf(stderr, "%s:%d: expected OK from %s, got\n%s\n", __FILE__, __LINE__, \
              #expr, dml_msg_ ? dml_msg_ : "?");                                   \
      free(dml_msg_);                                                              \
      dml_status_free(dml_st_);                                                    \
      dml_test_checks_failed_++;                                                   \
    }                                                                              \
  } while (0)

/* Checks `expr` fails with `code` and its formatted message contains
 * `substr`. */
#define CHECK_ERROR(expr, code, substr)                                              \
  do {                                                                               \
    dml_status_t dml_st_ = (expr);                                                   \
    char *dml_msg_ = dml_status_format(dml_st_);                                     \
    if (!dml_st_ || dml_status_code(dml_st_) != (code) || !dml_msg_ ||               \
        !strstr(dml_msg_, (substr))) {                                               \
      fprintf(stderr, "%s:%d: expected error %s containing '%s' from %s, got: %s\n", \
              __FILE__, __LINE__, dml_status_code_name(code), (substr), #expr,       \
              dml_msg_ ? dml_msg_ : "OK");                                           \
      dml_test_checks_failed_++;                                                     \
    }                                                                                \
    free(dml_msg_);                                                                  \
    dml_status_free(dml_st_);                                                        \
  } while (0)

#define RUN(fn)                                   \
  do {                                            \
    int dml_before_ = dml_test_checks_failed_;    \
    fn();                                         \
    if (dml_test_checks_failed_ == dml_before_) { \
      dml_test_cases_passed_++;                   \
    } else {                                      \
      dml_test_cases_failed_++;                   \
      fprintf(stderr, "FAILED: %s\n", #fn);       \
    }                                             \
  } while (0)

static inline int dml_test_finish(void) {
  printf("%d passed, %d failed\n", dml_test_cases_passed_, dml_test_cases_failed_);
  return dml_test_cases_failed_ ? 1 : 0;
}

/* Path helpers: $DMLC_SOURCE_DIR / $DMLC_SHARED_DIR joined with `rel`. */
static inline const char *dml_test_path(const char *env, const char *rel, char *buf,
                                        size_t cap) {
  const char *root = getenv(env);
  snprintf(buf, cap, "%s/%s", root ? root : ".", rel);
  return buf;
}

/* A tensor descriptor of dtype `dt` with dims dims[0..rank) over `data`
 * (not copied; the descriptor does not own it). */
static inline dml_tensor_t dml_test_tensor(dml_dtype_t dt, int32_t rank,
                                           const int64_t *dims, const void *data) {
  dml_tensor_t t;
  memset(&t, 0, sizeof t);
  t.dtype = dt;
  t.rank = rank;
  for (int32_t d = 0; d < rank; d++) t.dims[d] = dims[d];
  t.data = (void *)data;
  return t;
}

/* The whole of file `path` in a malloc()ed buffer (the caller free()s) and
 * its size in `*n`; NULL (and *n = 0) when it cannot be opened or read. */
static inline void *dml_test_read_file(const char *path, size_t *n) {
  *n = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *b = len >= 0 ? malloc(len > 0 ? (size_t)len : 1) : NULL;
  if (b && fread(b, 1, (size_t)len, f) != (size_t)len) {
    free(b);
    b = NULL;
  }
  fclose(f);
  if (b) *n = (size_t)len;
  return b;
}

#endif /* DML_TEST_H_ */
