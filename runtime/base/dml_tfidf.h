/*
 * dml_tfidf.h — the attributes of TfIdfVectorizer (ONNX opset 9,
 * https://onnx.ai/onnx/operators/onnx__TfIdfVectorizer.html), checked and
 * decoded once for shape inference (ir/infer.c) and the CPU kernel
 * (runtime/cpu/cpu_text.c).
 *
 * The pool (pool_int64s) holds the n-grams level by level: ngram_counts[k]
 * is the pool position where the (k+1)-grams start, the level ends where
 * the next one starts (the last one at the end of the pool), so level k
 * holds (end - start) / (k+1) n-grams. N-grams are numbered 0, 1, ... in
 * pool order across levels; ngram_indexes[i] is the output coordinate of
 * n-gram i and weights[i] (all ones when absent) its weight.
 *
 * String pools (pool_strings) are not supported: the kernel counts integer
 * tokens (string tensors exist, CPU only, but this kernel does not take them).
 */
#ifndef DML_TFIDF_H_
#define DML_TFIDF_H_

#include <stddef.h>
#include <stdint.h>

#include "dml_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Weighting of the n-gram counts (attribute `mode`). */
typedef enum dml_tfidf_mode {
  DML_TFIDF_TF = 1,    /* "TF": the count */
  DML_TFIDF_IDF = 2,   /* "IDF": weight if the count is > 0, else 0 */
  DML_TFIDF_TFIDF = 3, /* "TFIDF": weight * count */
} dml_tfidf_mode_t;

/* The decoded attributes; arrays are lent from the attribute list. */
typedef struct dml_tfidf {
  dml_tfidf_mode_t mode;
  int64_t min_gram_length; /* >= 1 */
  int64_t max_gram_length; /* >= min_gram_length */
  int64_t max_skip_count;  /* >= 0 */
  const int64_t *ngram_counts;
  size_t n_levels; /* entries of ngram_counts: levels 1..n_levels */
  const int64_t *pool;
  size_t n_pool;
  const int64_t *ngram_indexes; /* one per n-gram, each >= 0 */
  size_t n_ngrams;              /* n-grams in the pool */
  const double *weights;        /* n_ngrams entries, NULL: all ones */
  int64_t out_size;             /* max(ngram_indexes) + 1 */
} dml_tfidf_t;

/* Decodes and checks TfIdfVectorizer's attributes: mode (TF, IDF or TFIDF),
 * min_gram_length >= 1, max_gram_length >= min_gram_length, max_skip_count
 * >= 0, ngram_counts non-decreasing within [0, pool size] with each level's
 * size a multiple of its n, pool_int64s, ngram_indexes (one per n-gram,
 * non-negative, at least one) and weights (absent or one per n-gram); all
 * but weights are required. Returns 0 and fills *out; -1 when an attribute
 * is missing, of the wrong kind or out of range, and 1 when pool_strings is
 * given (unsupported); a reason is written to err (NUL-terminated, when
 * cap > 0) in both cases. */
int dml_tfidf_parse(const dml_attr_t *attrs, size_t n_attrs, dml_tfidf_t *out, char *err,
                    size_t cap);

/* Pool position of level `n` (1-based) in *start and its n-gram count in
 * *count, and the number of n-grams of the levels before it in *first (the
 * n-gram number of its first n-gram). Levels beyond n_levels are empty. */
void dml_tfidf_level(const dml_tfidf_t *t, int64_t n, int64_t *start, int64_t *count,
                     int64_t *first);

#ifdef __cplusplus
}
#endif
#endif /* DML_TFIDF_H_ */
