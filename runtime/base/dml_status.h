/*
 * dml_status.h — the one error type of dmlc.
 *
 * A dml_status_t is a pointer-sized value: NULL (DML_OK) means success and
 * costs nothing; anything else is a heap-allocated record carrying a code,
 * the operation attempted (e.g. "onnx.import", "pass:shape-infer",
 * "rt.dispatch"), a reason, and free-form details (node name, shapes,
 * dtypes, offending value). Statuses can be annotated as they travel up.
 *
 * Ownership: a function returning a non-OK status hands it to the caller,
 * who must either return it further up or release it with
 * dml_status_free(). Library code never aborts, exits or prints on bad
 * input.
 */
#ifndef DML_STATUS_H_
#define DML_STATUS_H_

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Error classes. Values are stable (they appear in JSON output). */
typedef enum dml_status_code {
  DML_STATUS_OK = 0,
  DML_STATUS_INVALID_ARGUMENT = 1,    /* caller passed a bad value */
  DML_STATUS_NOT_FOUND = 2,           /* file, name or symbol missing */
  DML_STATUS_UNIMPLEMENTED = 3,       /* op, attribute or dtype not supported */
  DML_STATUS_OUT_OF_RANGE = 4,        /* index/dim beyond a bound */
  DML_STATUS_DATA_LOSS = 5,           /* corrupt or truncated input bytes */
  DML_STATUS_RESOURCE_EXHAUSTED = 6,  /* allocation failed, size overflow */
  DML_STATUS_FAILED_PRECONDITION = 7, /* wrong state (e.g. input not bound) */
  DML_STATUS_INTERNAL = 8,            /* broken invariant */
  DML_STATUS_IO = 9,                  /* read/write/rename failed */
} dml_status_code_t;

struct dml_status_rec;
/* NULL means OK. */
typedef struct dml_status_rec *dml_status_t;

#define DML_OK ((dml_status_t)NULL)

/* Creates a status with `code`, the operation attempted `op` (copied) and a
 * printf-style reason. Never returns NULL for a non-OK code: if memory is
 * exhausted a static "out of memory" status is returned instead. */
dml_status_t dml_status_make(dml_status_code_t code, const char *op,
                             const char *reason_fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Appends a line of details ("node 'conv1': input shape [1,3,32,32]").
 * Returns `status` so calls chain; OK passes through unchanged. */
dml_status_t dml_status_detail(dml_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prefixes context as the status travels up (kept as a detail line
 * "while <context>"). OK passes through unchanged. */
dml_status_t dml_status_annotate(dml_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

dml_status_code_t dml_status_code(dml_status_t status);
/* Accessors lend strings owned by the status; "" when absent. */
const char *dml_status_op(dml_status_t status);
const char *dml_status_reason(dml_status_t status);
const char *dml_status_details(dml_status_t status);
const char *dml_status_code_name(dml_status_code_t code);

/* Formats "error: <op>: <reason>\n  <details...>" into a malloc'd string the
 * caller frees. Returns NULL for OK. */
char *dml_status_format(dml_status_t status);

void dml_status_free(dml_status_t status);

/* Returns from the enclosing function if `expr` is not OK. */
#define DML_RETURN_IF_ERROR(expr) \
  do {                            \
    dml_status_t dml_s_ = (expr); \
    if (dml_s_) return dml_s_;    \
  } while (0)

#ifdef __cplusplus
}
#endif
#endif /* DML_STATUS_H_ */
