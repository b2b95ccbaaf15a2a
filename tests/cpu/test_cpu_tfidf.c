/*
 * test_cpu_tfidf.c — the TfIdfVectorizer reference kernel (cpu_text.c):
 * the ONNX operator page's examples (exact values), then random pools,
 * inputs and attributes against a brute-force reference written from the
 * spec's text (every pool n-gram scanned against every start and skip),
 * then every error path.
 *
 * Tolerance: counts are exact; weighted values are compared with
 * |got - want| <= 1e-6 + 1e-6 |want| (f32 sums of a few f32 weights).
 */
#include "cpu_test_util.h"

static dml_attr_t attr_floats(const char *name, const double *v, size_t n) {
  dml_attr_t a;
  memset(&a, 0, sizeof a);
  a.name = name, a.kind = DML_ATTR_FLOATS, a.floats = v, a.n = n;
  return a;
}

/* The attribute set of one node. */
typedef struct tfidf {
  const char *mode;
  int64_t min_gram, max_gram, max_skip;
  const int64_t *counts, *indexes, *pool;
  size_t n_counts, n_indexes, n_pool;
  const double *weights; /* NULL: absent */
} tfidf_t;

static uint32_t make_attrs(const tfidf_t *p, dml_attr_t *a) {
  uint32_t n = 0;
  a[n++] = attr_s("mode", p->mode);
  a[n++] = attr_i("min_gram_length", p->min_gram);
  a[n++] = attr_i("max_gram_length", p->max_gram);
  a[n++] = attr_i("max_skip_count", p->max_skip);
  a[n++] = attr_ints("ngram_counts", p->counts, p->n_counts);
  a[n++] = attr_ints("ngram_indexes", p->indexes, p->n_indexes);
  a[n++] = attr_ints("pool_int64s", p->pool, p->n_pool);
  if (p->weights) a[n++] = attr_floats("weights", p->weights, p->n_indexes);
  return n;
}

/* Runs the kernel on x (i32 or i64, [C] when rows == 0, else [rows, C]). */
static dml_status_t run(const tfidf_t *p, dml_dtype_t dt, const void *x, int64_t rows,
                        int64_t C, float *y, int64_t K) {
  dml_attr_t a[8];
  uint32_t na = make_attrs(p, a);
  dml_tensor_t in =
      rows ? tens(dt, (void *)x, 2, D(rows), D(C)) : tens(dt, (void *)x, 1, D(C));
  dml_tensor_t out =
      rows ? tens(DML_DTYPE_F32, y, 2, D(rows), D(K)) : tens(DML_DTYPE_F32, y, 1, D(K));
  return run_op(DML_OP_TF_IDF_VECTORIZER, &in, 1, &out, 1, a, na);
}

/* ---- the operator page's examples -------------------------------------- */

/* pool: unigrams 2 3 5 4, bigrams (5,6) (7,8) (6,7); ngram_counts [0, 4]. */
static const int64_t k_pool[10] = {2, 3, 5, 4, 5, 6, 7, 8, 6, 7};
static const int64_t k_counts[2] = {0, 4};
static const int64_t k_idx[7] = {0, 1, 2, 3, 4, 5, 6};
static const int32_t k_x[12] = {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8};

static void test_spec_examples(void) {
  tfidf_t p = {"TF", 2, 2, 0, k_counts, k_idx, k_pool, 2, 7, 10, NULL};
  float y[14];
  /* tf_only_bigrams_skip0 */
  CHECK_OK(run(&p, DML_DTYPE_I32, k_x, 0, 12, y, 7));
  const float w0[7] = {0, 0, 0, 0, 1, 1, 1};
  CHECK(max_abs_diff(y, w0, 7) == 0);
  /* tf_onlybigrams_skip5 */
  p.max_skip = 5;
  CHECK_OK(run(&p, DML_DTYPE_I32, k_x, 0, 12, y, 7));
  const float w1[7] = {0, 0, 0, 0, 1, 3, 1};
  CHECK(max_abs_diff(y, w1, 7) == 0);
  /* tf_uniandbigrams_skip5 (unigrams counted once whatever the skip) */
  p.min_gram = 1;
  CHECK_OK(run(&p, DML_DTYPE_I32, k_x, 0, 12, y, 7));
  const float w2[7] = {0, 3, 1, 0, 1, 3, 1};
  CHECK(max_abs_diff(y, w2, 7) == 0);
  /* tf_batch_uniandbigrams_skip5: the same 12 tokens as two rows of 6 */
  CHECK_OK(run(&p, DML_DTYPE_I32, k_x, 2, 6, y, 7));
  const float w3[14] = {0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 1};
  CHECK(max_abs_diff(y, w3, 14) == 0);
  /* tf_onlybigrams_levelempty: no unigrams, bigrams only, 3 outputs */
  const int64_t pool_b[6] = {5, 6, 7, 8, 6, 7}, counts_b[2] = {0, 0},
                idx_b[3] = {0, 1, 2};
  tfidf_t pb = {"TF", 2, 2, 0, counts_b, idx_b, pool_b, 2, 3, 6, NULL};
  CHECK_OK(run(&pb, DML_DTYPE_I32, k_x, 0, 12, y, 3));
  const float w4[3] = {1, 1, 1};
  CHECK(max_abs_diff(y, w4, 3) == 0);
  /* The summary's skip example: [94, 17, 36, 12, 28] with skip 2 gives
   * the 2-grams (94, 12) and (17, 28); with skip 0 (94, 17) ... (12, 28). */
  const int64_t x5[5] = {94, 17, 36, 12, 28};
  const int64_t pool5[8] = {94, 12, 17, 28, 94, 17, 12, 28}, c5[2] = {0, 0};
  const int64_t idx5[4] = {0, 1, 2, 3};
  tfidf_t p5 = {"TF", 2, 2, 2, c5, idx5, pool5, 2, 4, 8, NULL};
  CHECK_OK(run(&p5, DML_DTYPE_I64, x5, 0, 5, y, 4));
  const float w5[4] = {1, 1, 1, 1}; /* skip 2 and skip 0 both counted */
  CHECK(max_abs_diff(y, w5, 4) == 0);
  p5.max_skip = 0;
  CHECK_OK(run(&p5, DML_DTYPE_I64, x5, 0, 5, y, 4));
  const float w6[4] = {0, 0, 1, 1};
  CHECK(max_abs_diff(y, w6, 4) == 0);
  /* The page's ngram_indexes example: pool [94, 17, 17, 36] as two
   * bigrams, ngram_indexes [1, 0]: Y[0] counts (17, 36), Y[1] (94, 17). */
  const int64_t pool7[4] = {94, 17, 17, 36}, c7[2] = {0, 0}, idx7[2] = {1, 0};
  tfidf_t p7 = {"TF", 2, 2, 0, c7, idx7, pool7, 2, 2, 4, NULL};
  const int64_t x7[6] = {17, 36, 94, 17, 36, 1};
  CHECK_OK(run(&p7, DML_DTYPE_I64, x7, 0, 6, y, 2));
  CHECK(y[0] == 2.0f && y[1] == 1.0f);
  /* IDF: counts > 0 become the weight; TFIDF: weight * count. */
  const double wts[7] = {0.5, 0.25, 2.0, 8.0, 1.5, 0.125, 3.0};
  p.weights = wts;
  p.mode = "IDF";
  CHECK_OK(run(&p, DML_DTYPE_I32, k_x, 0, 12, y, 7));
  const float w8[7] = {0, 0.25f, 2.0f, 0, 1.5f, 0.125f, 3.0f};
  CHECK(max_abs_diff(y, w8, 7) == 0);
  p.mode = "TFIDF";
  CHECK_OK(run(&p, DML_DTYPE_I32, k_x, 0, 12, y, 7));
  const float w9[7] = {0, 0.75f, 2.0f, 0, 1.5f, 0.375f, 3.0f};
  CHECK(max_abs_diff(y, w9, 7) == 0);
  /* TF ignores the weights. */
  p.mode = "TF";
  CHECK_OK(run(&p, DML_DTYPE_I32, k_x, 0, 12, y, 7));
  CHECK(max_abs_diff(y, w2, 7) == 0);
  /* An empty sequence counts nothing. */
  CHECK_OK(run(&p, DML_DTYPE_I32, k_x, 0, 0, y, 7));
  const float zero[7] = {0};
  CHECK(max_abs_diff(y, zero, 7) == 0);
}

/* ---- random cases against the brute-force reference ------------------- */

static uint32_t g_seed = 2024u;
static uint32_t urand(uint32_t n) {
  g_seed = g_seed * 1103515245u + 12345u;
  return (g_seed >> 16) % n;
}

/* The spec, literally: for every pool n-gram i of a length in [min, max]
 * and every row, count the (start, skip) pairs, skip in [0, max_skip]
 * (skip 0 only for unigrams), whose tokens x[p + j (skip+1)] equal the
 * n-gram; then Y[ngram_indexes[i]] += TF/IDF/TFIDF of that count. */
static void reference(const tfidf_t *p, const int64_t *x, int64_t rows, int64_t C,
                      double *y, int64_t K) {
  for (int64_t i = 0; i < rows * K; i++) y[i] = 0;
  size_t g = 0; /* n-gram number */
  for (size_t lv = 0; lv < p->n_counts; lv++) {
    int64_t n = (int64_t)lv + 1;
    int64_t start = p->counts[lv];
    int64_t end = lv + 1 < p->n_counts ? p->counts[lv + 1] : (int64_t)p->n_pool;
    for (int64_t s = start; s < end; s += n, g++) {
      if (n < p->min_gram || n > p->max_gram) continue;
      double w = p->weights ? p->weights[g] : 1.0;
      for (int64_t r = 0; r < rows; r++) {
        int64_t cnt = 0;
        int64_t skips = n == 1 ? 0 : p->max_skip;
        for (int64_t sk = 0; sk <= skips && sk <= C; sk++)
          for (int64_t st = 0; st < C; st++) {
            int ok = st + (n - 1) * (sk + 1) < C;
            for (int64_t j = 0; ok && j < n; j++)
              ok = x[r * C + st + j * (sk + 1)] == p->pool[s + j];
            cnt += ok;
          }
        double v = !strcmp(p->mode, "TF")    ? (double)cnt
                   : !strcmp(p->mode, "IDF") ? (cnt > 0 ? w : 0.0)
                                             : (double)cnt * w;
        y[r * K + p->indexes[g]] += v;
      }
    }
  }
}

static void test_random_vs_reference(void) {
  static const char *const modes[3] = {"TF", "IDF", "TFIDF"};
  int checked = 0;
  for (int it = 0; it < 300; it++) {
    /* pool: up to 3 levels over a 4-token vocabulary (duplicates likely) */
    int64_t n_levels = 1 + urand(3), counts[3], pool[64];
    size_t n_pool = 0, n_ngrams = 0;
    for (int64_t lv = 0; lv < n_levels; lv++) {
      counts[lv] = (int64_t)n_pool;
      int64_t k = urand(5);
      for (int64_t q = 0; q < k * (lv + 1); q++) pool[n_pool++] = urand(4);
      n_ngrams += (size_t)k;
    }
    if (n_ngrams == 0) continue;
    int64_t idx[64];
    double w[64];
    int64_t K = 1;
    for (size_t i = 0; i < n_ngrams; i++) {
      idx[i] = urand((uint32_t)n_ngrams + 2); /* gaps and shared coordinates */
      if (idx[i] + 1 > K) K = idx[i] + 1;
      w[i] = (double)(int)urand(17) / 4.0 - 1.0;
    }
    tfidf_t p = {modes[urand(3)],
                 1 + urand(3),
                 0,
                 it % 37 == 0 ? INT64_MAX : urand(4),
                 counts,
                 idx,
                 pool,
                 (size_t)n_levels,
                 n_ngrams,
                 n_pool,
                 urand(2) ? w : NULL};
    p.max_gram = p.min_gram + urand(3);
    int64_t rows = urand(4), C = urand(13); /* rows 0: input [C] */
    int64_t nr = rows ? rows : 1;
    int64_t x64[3 * 12 + 1];
    int32_t x32[3 * 12 + 1];
    for (int64_t i = 0; i < nr * C; i++) x32[i] = (int32_t)(x64[i] = urand(5));
    float y[3 * 66];
    double want[3 * 66];
    int i32 = (int)urand(2);
    dml_status_t st = run(&p, i32 ? DML_DTYPE_I32 : DML_DTYPE_I64,
                          i32 ? (const void *)x32 : (const void *)x64, rows, C, y, K);
    CHECK_OK(st);
    reference(&p, x64, nr, C, want, K);
    for (int64_t i = 0; i < nr * K; i++)
      if (!(fabs((double)y[i] - want[i]) <= 1e-6 + 1e-6 * fabs(want[i]))) {
        fprintf(stderr, "case %d: y[%lld] = %g, want %g (mode %s)\n", it, (long long)i,
                (double)y[i], want[i], p.mode);
        CHECK(!"random case differs from the reference");
        break;
      }
    checked++;
  }
  CHECK(checked > 200);
}

/* ---- errors ------------------------------------------------------------- */

static void test_errors(void) {
  float y[16];
  tfidf_t p = {"TF", 1, 2, 0, k_counts, k_idx, k_pool, 2, 7, 10, NULL};
  /* a float input */
  float xf[3] = {1, 2, 3};
  dml_attr_t a[9];
  uint32_t na = make_attrs(&p, a);
  dml_tensor_t in = tens(DML_DTYPE_F32, xf, 1, D(3)),
               out = tens(DML_DTYPE_F32, y, 1, D(7));
  CHECK_ERROR(run_op(DML_OP_TF_IDF_VECTORIZER, &in, 1, &out, 1, a, na),
              DML_STATUS_UNIMPLEMENTED,
              "input dtype f32 is not supported by TfIdfVectorizer");
  /* string pools */
  const char *strs[2] = {"a", "b"};
  a[na] = attr_s("pool_strings", "x");
  a[na].kind = DML_ATTR_STRINGS, a[na].strings = strs, a[na].n = 2;
  in = tens(DML_DTYPE_I64, (void *)k_pool, 1, D(3));
  CHECK_ERROR(run_op(DML_OP_TF_IDF_VECTORIZER, &in, 1, &out, 1, a, na + 1),
              DML_STATUS_UNIMPLEMENTED,
              "pool_strings is not supported: the kernel counts integer tokens");
  /* input rank 3, wrong output shape */
  in = tens(DML_DTYPE_I64, (void *)k_pool, 3, D(1), D(1), D(3));
  CHECK_ERROR(run_op(DML_OP_TF_IDF_VECTORIZER, &in, 1, &out, 1, a, na),
              DML_STATUS_INVALID_ARGUMENT, "input must be [C] or [N, C]");
  CHECK_ERROR(run(&p, DML_DTYPE_I32, k_x, 2, 6, y, 6), DML_STATUS_INVALID_ARGUMENT,
              "output must be [N, 7] (max(ngram_indexes) + 1)");
  CHECK_ERROR(run(&p, DML_DTYPE_I32, k_x, 0, 12, y, 8), DML_STATUS_INVALID_ARGUMENT,
              "output must be [7]");
  /* attributes */
  tfidf_t q = p;
  q.mode = "BM25";
  CHECK_ERROR(run(&q, DML_DTYPE_I32, k_x, 0, 12, y, 7), DML_STATUS_INVALID_ARGUMENT,
              "mode \"BM25\" is not TF, IDF or TFIDF");
  q = p, q.min_gram = 0;
  CHECK_ERROR(run(&q, DML_DTYPE_I32, k_x, 0, 12, y, 7), DML_STATUS_INVALID_ARGUMENT,
              "min_gram_length 0 and max_gram_length 2 must satisfy 1 <= min <= max");
  q = p, q.min_gram = 3;
  CHECK_ERROR(run(&q, DML_DTYPE_I32, k_x, 0, 12, y, 7), DML_STATUS_INVALID_ARGUMENT,
              "must satisfy 1 <= min <= max");
  q = p, q.max_skip = -1;
  CHECK_ERROR(run(&q, DML_DTYPE_I32, k_x, 0, 12, y, 7), DML_STATUS_INVALID_ARGUMENT,
              "max_skip_count -1 is negative");
  q = p, q.n_indexes = 6;
  CHECK_ERROR(run(&q, DML_DTYPE_I32, k_x, 0, 12, y, 6), DML_STATUS_INVALID_ARGUMENT,
              "ngram_indexes has 6 entries but the pool holds 7 n-grams");
  const int64_t c_odd[2] = {0, 5}, c_down[2] = {4, 2}, c_far[2] = {0, 11};
  q = p, q.counts = c_odd;
  CHECK_ERROR(run(&q, DML_DTYPE_I32, k_x, 0, 12, y, 7), DML_STATUS_INVALID_ARGUMENT,
              "level 2 of the pool (items 5..10) does not hold whole 2-grams");
  q = p, q.counts = c_down;
  CHECK_ERROR(run(&q, DML_DTYPE_I32, k_x, 0, 12, y, 7), DML_STATUS_INVALID_ARGUMENT,
              "ngram_counts[1] = 2: the levels' starts must be non-decreasing");
  q = p, q.counts = c_far;
  CHECK_ERROR(run(&q, DML_DTYPE_I32, k_x, 0, 12, y, 7), DML_STATUS_INVALID_ARGUMENT,
              "ngram_counts[1] = 11");
  const int64_t idx_neg[7] = {0, 1, 2, -3, 4, 5, 6};
  q = p, q.indexes = idx_neg;
  CHECK_ERROR(run(&q, DML_DTYPE_I32, k_x, 0, 12, y, 7), DML_STATUS_INVALID_ARGUMENT,
              "ngram_indexes[3] = -3 is out of range");
  const double w3[3] = {1, 2, 3};
  q = p, q.mode = "IDF";
  na = make_attrs(&q, a);
  a[na++] = attr_floats("weights", w3, 3);
  in = tens(DML_DTYPE_I32, (void *)k_x, 1, D(12));
  CHECK_ERROR(run_op(DML_OP_TF_IDF_VECTORIZER, &in, 1, &out, 1, a, na),
              DML_STATUS_INVALID_ARGUMENT,
              "weights has 3 entries, expected one per n-gram (7)");
  /* required attributes, and kinds */
  na = make_attrs(&p, a);
  CHECK_ERROR(run_op(DML_OP_TF_IDF_VECTORIZER, &in, 1, &out, 1, a + 1, na - 1),
              DML_STATUS_INVALID_ARGUMENT, "attribute 'mode' is required");
  a[3] = attr_s("max_skip_count", "0");
  CHECK_ERROR(run_op(DML_OP_TF_IDF_VECTORIZER, &in, 1, &out, 1, a, na),
              DML_STATUS_INVALID_ARGUMENT,
              "attribute 'max_skip_count' must be int, got string");
  na = make_attrs(&p, a);
  CHECK_ERROR(run_op(DML_OP_TF_IDF_VECTORIZER, &in, 1, &out, 1, a, na - 1),
              DML_STATUS_INVALID_ARGUMENT,
              "one of the attributes pool_int64s and pool_strings is required");
  /* the error names the node */
  CHECK_ERROR(run(&q, DML_DTYPE_I32, k_x, 0, 12, y, 9), DML_STATUS_INVALID_ARGUMENT,
              "node 'test_node'");
}

int main(void) {
  RUN(test_spec_examples);
  RUN(test_random_vs_reference);
  RUN(test_errors);
  return dml_test_finish();
}
