/*
 * c_emit.h — the C-like rendering of kernel bodies shared by the GLSL
 * (spirv/glsl.c) and CUDA C (cuda/cuda.c) emitters: a growable text buffer
 * and the printers of index expressions, float values and statements,
 * parameterized by a dialect (how ids, symbols, special floats, scalar
 * functions and barriers are spelled). codegen/ only.
 */
#ifndef DML_C_EMIT_H_
#define DML_C_EMIT_H_

#include <stddef.h>

#include "dml_kernel.h"

/* A growable NUL-terminated text buffer; `oom` is set (and later writes
 * are dropped) when an allocation fails. */
typedef struct dml_sb {
  char *p;
  size_t n, cap;
  int oom;
} dml_sb_t;

void dml_sb_printf(dml_sb_t *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* How a dialect spells what differs between C-like languages. */
typedef struct dml_cdialect {
  /* The six built-in variables (DML_KVAR_GID_X .. DML_KVAR_WG_Y). */
  const char *var[DML_KVAR_FIRST_LOOP];
  const char *sym_fmt;      /* printf format of symbol %d's value: "pc.sym[%d]" */
  const char *nan_text;     /* a quiet NaN */
  const char *pinf, *ninf;  /* +inf, -inf */
  const char *float_suffix; /* after a finite constant: "" (GLSL) or "f" (C) */
  /* Scalar functions: value = pre[fn] a (mid[fn] b) post[fn]. */
  const char *pre[DML_KF_COUNT_];
  const char *mid[DML_KF_COUNT_];
  const char *post[DML_KF_COUNT_];
  const char *barrier;   /* statement text: "barrier();" */
  const char *uint_type; /* loop variables' type: "uint" / "unsigned" */
} dml_cdialect_t;

/* Appends the statements from `s` on (their nested bodies too), indented by
 * 2 * depth spaces. Index constants are unsigned ("7u"), registers r<N>,
 * tiles tile<N>, loop variables i<N>, buffers arena[] and weights[]. */
void dml_cemit_stmts(dml_sb_t *b, const dml_cdialect_t *d, const dml_kstmt_t *s,
                     int depth);

#endif /* DML_C_EMIT_H_ */
