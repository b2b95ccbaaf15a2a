/*
 * dml_tfidf.c — TfIdfVectorizer's attributes (ONNX opset 9). See
 * dml_tfidf.h.
 */
#include "dml_tfidf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int err_out(char *err, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int err_out(char *err, size_t cap, const char *fmt, ...) {
  if (cap) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* A required attribute of `kind`: NULL with a reason when absent or of
 * another kind. */
static const dml_attr_t *need(const dml_attr_t *attrs, size_t n, const char *name,
                              dml_attr_kind_t kind, char *err, size_t cap) {
  const dml_attr_t *a = dml_attr_find(attrs, n, name);
  if (!a)
    err_out(err, cap, "attribute '%s' is required", name);
  else if (a->kind != kind)
    err_out(err, cap, "attribute '%s' must be %s, got %s", name, dml_attr_kind_name(kind),
            dml_attr_kind_name(a->kind));
  else if (a->n && ((kind == DML_ATTR_INTS && !a->ints) ||
                    (kind == DML_ATTR_FLOATS && !a->floats)))
    err_out(err, cap, "attribute '%s' has no data", name);
  else if (kind == DML_ATTR_STRING && !a->s)
    err_out(err, cap, "attribute '%s' has no data", name);
  else
    return a;
  return NULL;
}

int dml_tfidf_parse(const dml_attr_t *attrs, size_t n_attrs, dml_tfidf_t *out, char *err,
                    size_t cap) {
  if (dml_attr_find(attrs, n_attrs, "pool_strings")) {
    err_out(err, cap,
            "pool_strings is not supported: the kernel counts integer tokens (map the "
            "tokens to integer ids, e.g. with LabelEncoder, and use pool_int64s)");
    return 1;
  }
  dml_tfidf_t t;
  memset(&t, 0, sizeof(t));
  const dml_attr_t *a = need(attrs, n_attrs, "mode", DML_ATTR_STRING, err, cap);
  if (!a) return -1;
  if (!strcmp(a->s, "TF"))
    t.mode = DML_TFIDF_TF;
  else if (!strcmp(a->s, "IDF"))
    t.mode = DML_TFIDF_IDF;
  else if (!strcmp(a->s, "TFIDF"))
    t.mode = DML_TFIDF_TFIDF;
  else
    return err_out(err, cap, "mode \"%s\" is not TF, IDF or TFIDF", a->s);

  static const char *const k_int_names[3] = {"min_gram_length", "max_gram_length",
                                             "max_skip_count"};
  int64_t v[3];
  for (int i = 0; i < 3; i++) {
    if (!(a = need(attrs, n_attrs, k_int_names[i], DML_ATTR_INT, err, cap))) return -1;
    v[i] = a->i;
  }
  t.min_gram_length = v[0];
  t.max_gram_length = v[1];
  t.max_skip_count = v[2];
  if (t.min_gram_length < 1 || t.max_gram_length < t.min_gram_length)
    return err_out(err, cap,
                   "min_gram_length %lld and max_gram_length %lld must satisfy 1 <= min "
                   "<= max",
                   (long long)t.min_gram_length, (long long)t.max_gram_length);
  if (t.max_skip_count < 0)
    return err_out(err, cap, "max_skip_count %lld is negative",
                   (long long)t.max_skip_count);

  if (!(a = need(attrs, n_attrs, "pool_int64s", DML_ATTR_INTS, err, cap))) {
    if (!dml_attr_find(attrs, n_attrs, "pool_int64s"))
      err_out(err, cap, "one of the attributes pool_int64s and pool_strings is required");
    return -1;
  }
  t.pool = a->ints;
  t.n_pool = a->n;
  if (!(a = need(attrs, n_attrs, "ngram_counts", DML_ATTR_INTS, err, cap))) return -1;
  t.ngram_counts = a->ints;
  t.n_levels = a->n;
  size_t n_ngrams = 0;
  for (size_t k = 0; k < t.n_levels; k++) {
    int64_t start = t.ngram_counts[k], prev = k ? t.ngram_counts[k - 1] : 0;
    if (start < prev || start > (int64_t)t.n_pool)
      return err_out(
          err, cap,
          "ngram_counts[%zu] = %lld: the levels' starts must be non-decreasing "
          "within the pool of %zu items",
          k, (long long)start, t.n_pool);
  }
  for (size_t k = 0; k < t.n_levels; k++) {
    int64_t start = t.ngram_counts[k];
    int64_t end = k + 1 < t.n_levels ? t.ngram_counts[k + 1] : (int64_t)t.n_pool;
    if ((end - start) % (int64_t)(k + 1) != 0)
      return err_out(err, cap,
                     "level %zu of the pool (items %lld..%lld) does not hold whole "
                     "%zu-grams",
                     k + 1, (long long)start, (long long)end, k + 1);
    n_ngrams += (size_t)(end - start) / (k + 1);
  }
  if (!(a = need(attrs, n_attrs, "ngram_indexes", DML_ATTR_INTS, err, cap))) return -1;
  if (a->n != n_ngrams || n_ngrams == 0)
    return err_out(err, cap,
                   "ngram_indexes has %zu entries but the pool holds %zu n-grams (at "
                   "least one is needed)",
                   a->n, n_ngrams);
  t.ngram_indexes = a->ints;
  t.n_ngrams = n_ngrams;
  int64_t mx = -1;
  for (size_t i = 0; i < n_ngrams; i++) {
    if (t.ngram_indexes[i] < 0 || t.ngram_indexes[i] == INT64_MAX)
      return err_out(err, cap, "ngram_indexes[%zu] = %lld is out of range", i,
                     (long long)t.ngram_indexes[i]);
    if (t.ngram_indexes[i] > mx) mx = t.ngram_indexes[i];
  }
  t.out_size = mx + 1;
  if (dml_attr_find(attrs, n_attrs, "weights")) {
    if (!(a = need(attrs, n_attrs, "weights", DML_ATTR_FLOATS, err, cap))) return -1;
    if (a->n != n_ngrams)
      return err_out(err, cap, "weights has %zu entries, expected one per n-gram (%zu)",
                     a->n, n_ngrams);
    t.weights = a->floats;
  }
  *out = t;
  return 0;
}

void dml_tfidf_level(const dml_tfidf_t *t, int64_t n, int64_t *start, int64_t *count,
                     int64_t *first) {
  int64_t before = 0;
  *start = 0;
  *count = 0;
  for (size_t k = 0; k < t->n_levels; k++) {
    int64_t s = t->ngram_counts[k];
    int64_t e = k + 1 < t->n_levels ? t->ngram_counts[k + 1] : (int64_t)t->n_pool;
    int64_t cnt = (e - s) / (int64_t)(k + 1);
    if ((int64_t)k + 1 == n) {
      *start = s;
      *count = cnt;
      break;
    }
    before += cnt;
  }
  *first = before;
}
