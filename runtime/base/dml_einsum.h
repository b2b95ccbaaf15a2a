/*
 * dml_einsum.h — parsing of Einsum equations (ONNX Einsum-12, numpy
 * einsum conventions), shared by shape inference and the CPU kernel.
 *
 * Grammar: terms of letters [a-zA-Z] separated by ',', one per input, each
 * may hold one "..." (ellipsis: the input's remaining leading/middle dims);
 * then optionally "->" and the output term. Spaces are ignored. Without
 * "->" (implicit form) the output is the ellipsis dims followed by the
 * letters that occur exactly once in the equation, in ASCII order.
 *
 * Every dim is given a label id: the ellipsis dims take ids
 * 0..n_ellipsis-1 (right-aligned across inputs, numpy broadcasting), the
 * letters the following ids in order of first appearance. A letter repeated
 * within one input selects its diagonal; a label absent from the output is
 * summed over.
 */
#ifndef DML_EINSUM_H_
#define DML_EINSUM_H_

#include <stddef.h>
#include <stdint.h>

#include "dml_types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DML_EINSUM_MAX_IN 16
#define DML_EINSUM_MAX_LABELS (52 + DML_MAX_RANK)

typedef struct dml_einsum {
  int n_in;
  int n_labels;   /* ellipsis dims + distinct letters */
  int n_ellipsis; /* broadcast dims (label ids 0..n_ellipsis-1) */
  int32_t in_rank[DML_EINSUM_MAX_IN];
  int8_t in_labels[DML_EINSUM_MAX_IN][DML_MAX_RANK]; /* label id of each dim */
  int32_t out_rank;
  int8_t out_labels[DML_MAX_RANK];
  char letter[DML_EINSUM_MAX_LABELS]; /* the letter of a label ('.' for ellipsis) */
} dml_einsum_t;

/* Parses `equation` for n_in inputs of ranks in_ranks[]. Returns 0 and
 * fills *out; -1 on an ill-formed equation (a reason is written to err,
 * NUL-terminated, when cap > 0). */
int dml_einsum_parse(const char *equation, int n_in, const int32_t *in_ranks,
                     dml_einsum_t *out, char *err, size_t cap);

#ifdef __cplusplus
}
#endif
#endif /* DML_EINSUM_H_ */
