/*
 * test_infer_tfidf.c — TfIdfVectorizer's shape and dtype function
 * (ir/infer.c, attributes checked by runtime/base/dml_tfidf.c): i32/i64
 * [C] or [N, C] (N symbolic too) -> f32 [K] or [N, K], K =
 * max(ngram_indexes) + 1, and its errors.
 */
#include "infer_util.h"

static const int64_t k_pool[10] = {2, 3, 5, 4, 5, 6, 7, 8, 6, 7};
static const int64_t k_counts[2] = {0, 4};

/* A TfIdfVectorizer node on x with the page's pool and `idx` (7 entries). */
static dml_ir_node_t *tfidf(tmod_t *t, dml_ir_value_t *x, const char *mode,
                            const int64_t *idx) {
  dml_ir_node_t *n = tnode(t, DML_OP_TF_IDF_VECTORIZER, "tfidf", 1, &x, 1);
  if (!n) return NULL;
  CHECK_OK(dml_ir_node_set_attr_string(n, "mode", mode));
  CHECK_OK(dml_ir_node_set_attr_int(n, "min_gram_length", 1));
  CHECK_OK(dml_ir_node_set_attr_int(n, "max_gram_length", 2));
  CHECK_OK(dml_ir_node_set_attr_int(n, "max_skip_count", 3));
  CHECK_OK(dml_ir_node_set_attr_ints(n, "ngram_counts", k_counts, 2));
  CHECK_OK(dml_ir_node_set_attr_ints(n, "ngram_indexes", idx, 7));
  CHECK_OK(dml_ir_node_set_attr_ints(n, "pool_int64s", k_pool, 10));
  return n;
}

static void test_shapes(void) {
  tmod_t t;
  tm_init(&t);
  const int64_t idx[7] = {0, 1, 2, 3, 4, 5, 6}, idx_gap[7] = {9, 1, 2, 3, 4, 5, 6};
  dml_ir_node_t *n = tfidf(&t, targ(&t, "x", "i32[12]"), "TF", idx);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[7]");
  n = tfidf(&t, targ(&t, "xb", "i64[batch,6]"), "TFIDF", idx_gap);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[batch,10]");
  n = tfidf(&t, targ(&t, "x0", "i64[3,0]"), "IDF", idx);
  INFER_OK(&t, n);
  CHECK_TYPE(&t, n->outputs[0], "f32[3,7]");
  tm_free(&t);
}

static void test_errors(void) {
  tmod_t t;
  tm_init(&t);
  const int64_t idx[7] = {0, 1, 2, 3, 4, 5, 6};
  dml_ir_node_t *n = tfidf(&t, targ(&t, "xf", "f32[12]"), "TF", idx);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "input 0 must have i32 or i64, got f32");
  n = tfidf(&t, targ(&t, "x3", "i64[1,2,3]"), "TF", idx);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "input 0 must have rank 1..2");
  dml_ir_value_t *x = targ(&t, "x", "i64[5]");
  n = tfidf(&t, x, "BM25", idx);
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "mode \"BM25\" is not TF, IDF or TFIDF");
  n = tfidf(&t, x, "TF", idx);
  CHECK_OK(dml_ir_node_set_attr_ints(n, "ngram_indexes", idx, 5));
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "ngram_indexes has 5 entries but the pool holds 7 n-grams");
  n = tfidf(&t, x, "TF", idx);
  const char *strs[2] = {"a", "b"};
  CHECK_OK(dml_ir_node_set_attr_strings(n, "pool_strings", strs, 2));
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_UNIMPLEMENTED,
              "pool_strings is not supported: the kernel counts integer tokens");
  n = tfidf(&t, x, "TF", idx);
  const double w[2] = {1, 2};
  CHECK_OK(dml_ir_node_set_attr_floats(n, "weights", w, 2));
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "weights has 2 entries, expected one per n-gram (7)");
  /* the error names the node and its op */
  CHECK_ERROR(dml_ir_infer_node(t.m, n), DML_STATUS_INVALID_ARGUMENT,
              "node 'tfidf' (TfIdfVectorizer)");
  tm_free(&t);
}

int main(void) {
  RUN(test_shapes);
  RUN(test_errors);
  return dml_test_finish();
}
