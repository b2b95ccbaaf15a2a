/*
 * cpu_text.c — TfIdfVectorizer (ONNX opset 9; operator spec
 * https://onnx.ai/onnx/operators/onnx__TfIdfVectorizer.html, "Summary" and
 * "Attributes") for integer inputs. Attributes are decoded and checked by
 * dml_tfidf_parse (runtime/base/dml_tfidf.h).
 *
 * X is i32 or i64, [C] or [N, C] (each row a sequence of token ids); Y is
 * f32, [K] or [N, K] with K = max(ngram_indexes) + 1. For every row the
 * kernel counts the occurrences of each pool n-gram i of length n in
 * [min_gram_length, max_gram_length]: the n-grams of the row are the tuples
 * (x[p], x[p + d], ..., x[p + (n-1) d]) for every start p and every
 * distance d = skip + 1, skip in [0, max_skip_count]; unigrams are counted
 * once (the skip does not change them), as in the spec's examples and
 * ONNX's reference implementation. Then, per the spec,
 *   TF:    Y[ngram_indexes[i]] += count_i
 *   IDF:   Y[ngram_indexes[i]] += (count_i > 0) * weights[i]
 *   TFIDF: Y[ngram_indexes[i]] += count_i * weights[i]
 * with weights all ones when absent (TF ignores them). Pool n-grams that
 * share an output coordinate add up there. The spec indexes weights by
 * n-gram ("the weight of the i-th n-gram in pool"); onnxruntime and
 * onnx.reference index them by output coordinate instead, which is the same
 * whenever ngram_indexes is 0, 1, ..., K-1 (as in ONNX's tests).
 *
 * Each level of the pool is sorted (an index permutation in scratch) and
 * every n-gram of the row is looked up by binary search: O(K log K) to sort
 * plus O(rows * C * (max_skip_count + 1) * n log K) to count.
 */
#include <string.h>

#include "cpu_internal.h"
#include "dml_tfidf.h"

/* Scratch: the count of each n-gram, the sorted n-gram numbers, and one
 * row of the input as i64. */
static size_t tfidf_scratch(const dml_tfidf_t *t, const dml_tensor_t *x) {
  int64_t C = x->rank >= 1 ? x->dims[x->rank - 1] : 0;
  return (2 * t->n_ngrams + (size_t)(C > 0 ? C : 0)) * sizeof(int64_t);
}

size_t dml_cpus_TfIdfVectorizer(const dml_cpu_call_t *c, int threads) {
  (void)threads;
  dml_tfidf_t t;
  if (c->n_inputs < 1 || dml_tfidf_parse(c->attrs, c->n_attrs, &t, NULL, 0)) return 0;
  return tfidf_scratch(&t, &c->inputs[0]);
}

/* One level of the pool: n-grams of length n starting at pool[start],
 * numbered first, first + 1, ... */
typedef struct level {
  const int64_t *pool;
  int64_t n, start, first;
} level_t;

static const int64_t *gram_of(const level_t *l, int64_t ngram) {
  return l->pool + l->start + (ngram - l->first) * l->n;
}

static int cmp_grams(const int64_t *a, const int64_t *b, int64_t n) {
  for (int64_t j = 0; j < n; j++)
    if (a[j] != b[j]) return a[j] < b[j] ? -1 : 1;
  return 0;
}

static void sift_down(const level_t *l, int64_t *v, int64_t root, int64_t end) {
  for (;;) {
    int64_t child = 2 * root + 1;
    if (child >= end) return;
    if (child + 1 < end &&
        cmp_grams(gram_of(l, v[child]), gram_of(l, v[child + 1]), l->n) < 0)
      child++;
    if (cmp_grams(gram_of(l, v[root]), gram_of(l, v[child]), l->n) >= 0) return;
    int64_t tmp = v[root];
    v[root] = v[child];
    v[child] = tmp;
    root = child;
  }
}

/* Sorts the n-gram numbers v[0..cnt) by their n-grams (heap sort). */
static void sort_level(const level_t *l, int64_t *v, int64_t cnt) {
  for (int64_t i = cnt / 2 - 1; i >= 0; i--) sift_down(l, v, i, cnt);
  for (int64_t end = cnt - 1; end > 0; end--) {
    int64_t tmp = v[0];
    v[0] = v[end];
    v[end] = tmp;
    sift_down(l, v, 0, end);
  }
}

/* The row's n-gram (x[p], x[p + d], ...) compared with pool n-gram g. */
static int cmp_row(const int64_t *row, int64_t p, int64_t d, const int64_t *g,
                   int64_t n) {
  for (int64_t j = 0; j < n; j++) {
    int64_t a = row[p + j * d];
    if (a != g[j]) return a < g[j] ? -1 : 1;
  }
  return 0;
}

/* Adds 1 to the count of every pool n-gram of level l (sorted numbers
 * v[0..cnt)) equal to the row's n-gram at (p, d). */
static void count_gram(const level_t *l, const int64_t *v, int64_t cnt,
                       const int64_t *row, int64_t p, int64_t d, int64_t *counts) {
  int64_t lo = 0, hi = cnt; /* first element >= the n-gram */
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (cmp_row(row, p, d, gram_of(l, v[mid]), l->n) > 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (; lo < cnt && cmp_row(row, p, d, gram_of(l, v[lo]), l->n) == 0; lo++)
    counts[v[lo]]++;
}

dml_status_t dml_cpuk_TfIdfVectorizer(const dml_cpu_call_t *c) {
  dml_tfidf_t t;
  char why[256];
  int rc = dml_tfidf_parse(c->attrs, c->n_attrs, &t, why, sizeof(why));
  if (rc)
    return dml_cpu_error(
        c, rc > 0 ? DML_STATUS_UNIMPLEMENTED : DML_STATUS_INVALID_ARGUMENT, "%s", why);
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  if (x->dtype != DML_DTYPE_I32 && x->dtype != DML_DTYPE_I64)
    return dml_cpu_err_dtype(c, "input", x->dtype);
  if (y->dtype != DML_DTYPE_F32) return dml_cpu_err_dtype(c, "output", y->dtype);
  if (x->rank != 1 && x->rank != 2)
    return dml_cpu_err_shapes(c, "input must be [C] or [N, C]");
  int64_t rows = x->rank == 2 ? x->dims[0] : 1, C = x->dims[x->rank - 1];
  if (y->rank != x->rank || (x->rank == 2 && y->dims[0] != rows) ||
      y->dims[y->rank - 1] != t.out_size)
    return dml_cpu_err_shapes(c, "output must be [%s%lld] (max(ngram_indexes) + 1)",
                              x->rank == 2 ? "N, " : "", (long long)t.out_size);
  int64_t K = (int64_t)t.n_ngrams;
  if (c->scratch_bytes < tfidf_scratch(&t, x) || !c->scratch)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "scratch is too small");
  int64_t *counts = (int64_t *)c->scratch, *order = counts + K, *row = order + K;

  /* Levels that can match: lengths in [min, max] present in the pool. */
  int64_t n_hi = DML_CPU_MIN(t.max_gram_length, (int64_t)t.n_levels);
  for (int64_t n = t.min_gram_length; n <= n_hi; n++) {
    level_t l = {t.pool, n, 0, 0};
    int64_t cnt;
    dml_tfidf_level(&t, n, &l.start, &cnt, &l.first);
    for (int64_t i = 0; i < cnt; i++) order[l.first + i] = l.first + i;
    sort_level(&l, order + l.first, cnt);
  }

  float *yd = (float *)y->data;
  for (int64_t r = 0; r < rows; r++) {
    for (int64_t j = 0; j < C; j++)
      row[j] = dml_load_i64(x->dtype, x->data, (size_t)(r * C + j));
    memset(counts, 0, (size_t)K * sizeof(int64_t));
    for (int64_t n = t.min_gram_length; n <= n_hi; n++) {
      level_t l = {t.pool, n, 0, 0};
      int64_t cnt;
      dml_tfidf_level(&t, n, &l.start, &cnt, &l.first);
      if (cnt == 0) continue;
      /* distances d = 1 .. max_skip_count + 1 (at most C); unigrams once */
      int64_t d_max = n == 1 ? 1 : DML_CPU_MIN(t.max_skip_count, C - 1) + 1;
      for (int64_t d = 1; d <= d_max; d++) {
        if (n - 1 > (C - 1) / d) break; /* (n-1) d > C-1: no n-gram fits */
        int64_t last = C - 1 - (n - 1) * d;
        for (int64_t p = 0; p <= last; p++)
          count_gram(&l, order + l.first, cnt, row, p, d, counts);
      }
    }
    float *yr = yd + r * t.out_size;
    for (int64_t k = 0; k < t.out_size; k++) yr[k] = 0.0f;
    for (int64_t i = 0; i < K; i++) {
      double w = t.weights ? t.weights[i] : 1.0, v;
      if (t.mode == DML_TFIDF_TF)
        v = (double)counts[i];
      else if (t.mode == DML_TFIDF_IDF)
        v = counts[i] > 0 ? w : 0.0;
      else
        v = (double)counts[i] * w;
      yr[t.ngram_indexes[i]] += (float)v;
    }
  }
  return DML_OK;
}
