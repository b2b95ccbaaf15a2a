/*
 * test_models.c — every reference model in ../shared/models compiles and
 * reproduces each saved output (<name>_io/output_k.npy for input_k.npy,
 * computed by PyTorch in eval mode) within 1e-4 max abs difference, at
 * batch 1 and 64 (and 2 for resnet_small) from one package each; a batch
 * above the compiled bound is a clear error naming the bound.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dml_driver.h"
#include "dml_npy.h"
#include "dml_rt.h"
#include "dml_test.h"

static const char *k_models[] = {"fashion_mlp", "lenet5", "resnet_small"};

static double max_abs_diff(const dml_tensor_t *a, const dml_tensor_t *b) {
  int64_t n = dml_dims_numel(a->dims, a->rank);
  double m = 0;
  for (int64_t i = 0; i < n; i++) {
    double d = (double)((const float *)a->data)[i] - (double)((const float *)b->data)[i];
    if (d < 0) d = -d;
    if (d > m || d != d) m = d != d ? 1e30 : d;
  }
  return m;
}

static void check_model(const char *name) {
  char onnx[1024], pkg[1024], rel[256];
  snprintf(rel, sizeof rel, "models/%s.onnx", name);
  dml_test_path("DMLC_SHARED_DIR", rel, onnx, sizeof onnx);
  snprintf(pkg, sizeof pkg, "%s/test_models_%s_%d.dmlpkg",
           getenv("DMLC_BUILD_DIR") ? getenv("DMLC_BUILD_DIR") : ".", name,
           (int)getpid());
  dml_compile_report_t rep;
  dml_status_t s = dml_compile_onnx_file(onnx, pkg, NULL, &rep);
  CHECK_OK(s);
  if (s) return;
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *sess = NULL;
  CHECK_OK(dml_rt_model_load_file(pkg, &m));
  if (!m) return;
  CHECK_OK(dml_rt_session_create(m, "cpu", &sess));
  for (int k = 0; k < 3 && sess; k++) {
    char in_path[1024], out_path[1024];
    snprintf(rel, sizeof rel, "models/%s_io/input_%d.npy", name, k);
    dml_test_path("DMLC_SHARED_DIR", rel, in_path, sizeof in_path);
    snprintf(rel, sizeof rel, "models/%s_io/output_%d.npy", name, k);
    dml_test_path("DMLC_SHARED_DIR", rel, out_path, sizeof out_path);
    dml_tensor_t in, want, got;
    void *ib = NULL, *ob = NULL;
    CHECK_OK(dml_npy_read_file(in_path, &in, &ib));
    CHECK_OK(dml_npy_read_file(out_path, &want, &ob));
    if (ib && ob) {
      CHECK_OK(dml_rt_session_set_input(sess, 0, &in));
      CHECK_OK(dml_rt_session_run(sess));
      CHECK_OK(dml_rt_session_get_output(sess, 0, &got));
      CHECK(got.rank == want.rank && got.dims[0] == want.dims[0] &&
            got.dims[1] == want.dims[1]);
      if (got.rank == want.rank && got.dims[0] == want.dims[0]) {
        double d = max_abs_diff(&got, &want);
        printf("%s pair %d (batch %lld): max abs diff %.3g\n", name, k,
               (long long)in.dims[0], d);
        CHECK(d <= 1e-4);
      }
    }
    free(ib);
    free(ob);
  }
  /* Batch 65 exceeds the default bound of 64. */
  if (sess) {
    dml_rt_io_info_t info;
    CHECK_OK(dml_rt_model_input_info(m, 0, &info));
    dml_tensor_t big = {info.dtype, info.rank, {0}, NULL};
    for (int d = 0; d < info.rank; d++) big.dims[d] = d == 0 ? 65 : info.dims[d];
    big.data = calloc((size_t)dml_dims_numel(big.dims, big.rank), 4);
    CHECK_ERROR(dml_rt_session_set_input(sess, 0, &big), DML_STATUS_OUT_OF_RANGE, "64");
    free(big.data);
  }
  dml_rt_session_release(sess);
  dml_rt_model_release(m);
  unlink(pkg);
}

static void test_fashion_mlp(void) {
  check_model(k_models[0]);
}
static void test_lenet5(void) {
  check_model(k_models[1]);
}
static void test_resnet_small(void) {
  check_model(k_models[2]);
}

int main(void) {
  RUN(test_fashion_mlp);
  RUN(test_lenet5);
  RUN(test_resnet_small);
  return dml_test_finish();
}
