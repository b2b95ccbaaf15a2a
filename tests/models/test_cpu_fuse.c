/*
 * test_cpu_fuse.c — the CPU executor's fusion (runtime/rt_cpu_fuse.c:
 * weights packed at load, Conv + BatchNormalization + Relu and Gemm + Relu
 * folded) on the reference models: the plan takes every such node and
 * chain (counted), and the fused sessions give the same bits as unfused
 * ones (DMLC_CPU_NO_FUSE) on each saved input, with 1 and 2 threads, and
 * 2 threads the same bits as 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dml_cpu.h"
#include "dml_driver.h"
#include "dml_npy.h"
#include "dml_rt.h"
#include "dml_test.h"
#include "rt_internal.h"

static void run_all(dml_rt_session_t *s, const char *name, float **outs, size_t *sizes) {
  for (int k = 0; k < 3; k++) {
    char rel[256], path[1024];
    snprintf(rel, sizeof rel, "models/%s_io/input_%d.npy", name, k);
    dml_test_path("DMLC_SHARED_DIR", rel, path, sizeof path);
    dml_tensor_t in, got;
    void *ib = NULL;
    CHECK_OK(dml_npy_read_file(path, &in, &ib));
    outs[k] = NULL;
    if (!ib) continue;
    CHECK_OK(dml_rt_session_set_input(s, 0, &in));
    CHECK_OK(dml_rt_session_run(s));
    CHECK_OK(dml_rt_session_get_output(s, 0, &got));
    sizes[k] = dml_tensor_bytes(&got);
    outs[k] = (float *)malloc(sizes[k]);
    memcpy(outs[k], got.data, sizes[k]);
    free(ib);
  }
}

static void check_model(const char *name, int want_heads, int want_folded) {
  char onnx[1024], pkg[1024], rel[256];
  snprintf(rel, sizeof rel, "models/%s.onnx", name);
  dml_test_path("DMLC_SHARED_DIR", rel, onnx, sizeof onnx);
  snprintf(pkg, sizeof pkg, "%s/test_cpu_fuse_%s_%d.dmlpkg",
           getenv("DMLC_BUILD_DIR") ? getenv("DMLC_BUILD_DIR") : ".", name,
           (int)getpid());
  dml_compile_report_t rep;
  CHECK_OK(dml_compile_onnx_file(onnx, pkg, NULL, &rep));
  dml_rt_model_t *m = NULL;
  CHECK_OK(dml_rt_model_load_file(pkg, &m));
  if (!m) return;
  unsetenv("DMLC_CPU_NO_FUSE");
  dml_rt_cpu_fuse_t *plan = NULL;
  CHECK_OK(dml_rt_cpu_fuse_plan(m->fn, m->weights, &plan));
  int heads = 0, folded = 0;
  for (uint32_t k = 0; plan && k < m->fn->n_nodes; k++) {
    heads += plan->role[k] == 1;
    folded += plan->role[k] == 2;
  }
  printf("%s: %d fused Conv nodes, %d nodes folded into them\n", name, heads, folded);
  CHECK(heads == want_heads && folded == want_folded);
  dml_rt_cpu_fuse_free(plan);
  float *first[3] = {NULL, NULL, NULL}; /* 1 thread's fused outputs */
  size_t first_sz[3] = {0};
  for (int threads = 1; threads <= 2; threads++) {
    dml_cpu_set_num_threads(threads);
    dml_rt_session_t *a = NULL, *b = NULL;
    CHECK_OK(dml_rt_session_create(m, "cpu", &a));
    setenv("DMLC_CPU_NO_FUSE", "1", 1);
    CHECK_OK(dml_rt_session_create(m, "cpu", &b));
    unsetenv("DMLC_CPU_NO_FUSE");
    if (!a || !b) break;
    float *oa[3], *ob[3];
    size_t sa[3] = {0}, sb[3] = {0};
    run_all(a, name, oa, sa);
    run_all(b, name, ob, sb);
    for (int k = 0; k < 3; k++) {
      CHECK(oa[k] && ob[k] && sa[k] == sb[k]);
      if (oa[k] && ob[k] && sa[k] == sb[k]) CHECK(memcmp(oa[k], ob[k], sa[k]) == 0);
      /* Splitting over threads changes no element's sum order: same bits. */
      if (threads == 1) {
        first[k] = oa[k], first_sz[k] = sa[k];
        oa[k] = NULL;
      } else if (first[k] && oa[k]) {
        CHECK(first_sz[k] == sa[k] && memcmp(first[k], oa[k], sa[k]) == 0);
      }
      free(oa[k]);
      free(ob[k]);
    }
    dml_rt_session_release(a);
    dml_rt_session_release(b);
  }
  dml_cpu_set_num_threads(1);
  for (int k = 0; k < 3; k++) free(first[k]);
  dml_rt_model_release(m);
  unlink(pkg);
}

/* Every Conv and Gemm has constant weights, so each is a fused node (packed
 * weights) whether or not anything folds into it. */
static void test_fashion_mlp(void) {
  check_model("fashion_mlp", 3, 2); /* Gemm + Relu twice, then Gemm */
}
static void test_lenet5(void) {
  check_model("lenet5", 5, 4); /* Conv + Relu twice, Gemm + Relu twice, Gemm */
}
static void test_resnet_small(void) {
  /* 9 Conv + BatchNormalization; the stem's and each block's first + Relu (the
   * other 3 Relu follow the residual Add); the final Gemm */
  check_model("resnet_small", 10, 13);
}

int main(void) {
  RUN(test_fashion_mlp);
  RUN(test_lenet5);
  RUN(test_resnet_small);
  return dml_test_finish();
}
