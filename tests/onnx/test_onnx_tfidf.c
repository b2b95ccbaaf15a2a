/*
 * test_onnx_tfidf.c — ONNX TfIdfVectorizer (opset 9): an integer model
 * imported (attributes kept), compiled and run on the cpu runtime, and the
 * string forms refused with their reasons. Fixtures from
 * scripts/gen_onnx_fixtures.py (gen_tfidf).
 */
#include "onnx_run_util.h"

static void test_import_ints(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(import_fixture("tfidf_ints.onnx", &m));
  if (!m) return;
  CHECK(module_well_formed(m));
  CHECK(count_op(fwd(m), DML_OP_TF_IDF_VECTORIZER) == 1);
  const dml_ir_node_t *n = node_named(fwd(m), "tfidf");
  CHECK(n != NULL);
  if (n) {
    size_t k = 0;
    const double *w = dml_attr_floats(n->attrs, n->n_attrs, "weights", &k);
    CHECK(k == 4 && w && w[1] == 2.0);
    CHECK(strcmp(dml_attr_string(n->attrs, n->n_attrs, "mode", ""), "TFIDF") == 0);
  }
  dml_ir_module_release(m);
}

/* Pool: unigrams 7, 3, 5 and the bigram (3, 5); ngram_indexes [2, 0, 1, 3],
 * weights [0.5, 2, 1.5, 4] (per n-gram, as the spec has them), TFIDF, 1- and
 * 2-grams, max_skip_count 1. Row [3, 5, 3, 5]: 3 and 5 twice, (3, 5) twice
 * (skip 0; the skip-1 pairs are (3, 3) and (5, 5)): Y[0] = 2 * 2, Y[1] =
 * 2 * 1.5, Y[2] = 0, Y[3] = 2 * 4. Row [7, 1, 5, 9]: Y[2] = 0.5, Y[1] = 1.5. */
static void test_run_ints(void) {
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = session_of("tfidf_ints.onnx", NULL, &m);
  if (!s) return;
  static const int64_t x[8] = {3, 5, 3, 5, 7, 1, 5, 9};
  dml_tensor_t t = {DML_DTYPE_I64, 2, {2, 4}, (void *)x};
  CHECK_OK(dml_rt_session_set_input_by_name(s, "x", &t));
  CHECK_OK(dml_rt_session_run(s));
  dml_tensor_t got;
  CHECK_OK(dml_rt_session_get_output(s, 0, &got));
  static const float want[8] = {4, 3, 0, 8, 0, 1.5f, 0.5f, 0};
  CHECK(got.dtype == DML_DTYPE_F32 && got.rank == 2 && got.dims[0] == 2 &&
        got.dims[1] == 4);
  if (got.dtype == DML_DTYPE_F32 && got.rank == 2)
    for (int i = 0; i < 8; i++) {
      if (((const float *)got.data)[i] != want[i])
        fprintf(stderr, "y[%d]: got %g, want %g\n", i, ((const float *)got.data)[i],
                want[i]);
      CHECK(((const float *)got.data)[i] == want[i]);
    }
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

static void test_strings_refused(void) {
  dml_ir_module_t *m = NULL;
  CHECK_ERROR(
      import_fixture("tfidf_pool_strings.onnx", &m), DML_STATUS_UNIMPLEMENTED,
      "model uses 1 unsupported attribute (opset 9): TfIdfVectorizer pool_strings "
      "(string n-grams: the TfIdfVectorizer kernel takes integer tokens only; map "
      "the tokens to integer ids, e.g. with LabelEncoder, and use pool_int64s)");
  CHECK_ERROR(import_fixture("tfidf_pool_strings.onnx", &m), DML_STATUS_UNIMPLEMENTED,
              "node 'tfidf_str' (TfIdfVectorizer): unsupported pool_strings");
  CHECK_ERROR(import_fixture("tfidf_string_input.onnx", &m), DML_STATUS_UNIMPLEMENTED,
              "pool_strings (string n-grams: the TfIdfVectorizer kernel takes integer "
              "tokens only");
  CHECK(m == NULL);
}

int main(void) {
  RUN(test_import_ints);
  RUN(test_run_ints);
  RUN(test_strings_refused);
  return dml_test_finish();
}
