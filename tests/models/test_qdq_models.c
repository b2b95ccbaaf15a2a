/*
 * test_qdq_models.c — a QDQ model written by ONNX Runtime's quantize_static
 * (tests/models/qdq/make_qdq_models.py: a small CNN, u8 activations,
 * per-channel s8 weights) compiled with the qdq-fuse pass (the default
 * pipeline) and without it (DMLC_NO_QDQ_FUSE=1: the literal f32 form of
 * DequantizeLinear -> op -> QuantizeLinear), run on the CPU on the saved
 * inputs (batch 1 and 3) with 1 and 2 threads: both agree with ONNX
 * Runtime's saved outputs within one quantization step of the output
 * (qdq_cnn_io/step.npy; ORT requantizes in f32, dmlc in double, so an
 * intermediate value may land one step apart), and the fused package has
 * the integer nodes (QLinearConv for the Convs and the Gemm, QLinearMatMul,
 * MaxPool on u8) that the
 * unfused one lacks.
 */
#include <math.h>
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

static int count_op(const dml_rt_model_t *m, dml_op_t op) {
  int n = 0;
  for (uint32_t k = 0; k < m->fn->n_nodes; k++) n += m->fn->nodes[k].op == op;
  return n;
}

static void run_model(int fuse, int *qconv, int *qmm) {
  char onnx[1024], pkg[1024];
  dml_test_path("DMLC_SOURCE_DIR", "tests/models/qdq/qdq_cnn.onnx", onnx, sizeof onnx);
  snprintf(pkg, sizeof pkg, "%s/test_qdq_%d_%d.dmlpkg",
           getenv("DMLC_BUILD_DIR") ? getenv("DMLC_BUILD_DIR") : ".", fuse,
           (int)getpid());
  if (fuse)
    unsetenv("DMLC_NO_QDQ_FUSE");
  else
    setenv("DMLC_NO_QDQ_FUSE", "1", 1);
  dml_compile_report_t rep;
  CHECK_OK(dml_compile_onnx_file(onnx, pkg, NULL, &rep));
  unsetenv("DMLC_NO_QDQ_FUSE");
  dml_rt_model_t *m = NULL;
  CHECK_OK(dml_rt_model_load_file(pkg, &m));
  if (!m) return;
  *qconv = count_op(m, DML_OP_QLINEAR_CONV);
  *qmm = count_op(m, DML_OP_QLINEAR_MAT_MUL);
  char path[1024];
  dml_tensor_t step;
  void *sb = NULL;
  dml_test_path("DMLC_SOURCE_DIR", "tests/models/qdq/qdq_cnn_io/step.npy", path,
                sizeof path);
  CHECK_OK(dml_npy_read_file(path, &step, &sb));
  double tol = sb ? ((const float *)step.data)[0] * 1.0001 : 0;
  CHECK(tol > 0);
  for (int threads = 1; threads <= 2; threads++) {
    dml_cpu_set_num_threads(threads);
    dml_rt_session_t *s = NULL;
    CHECK_OK(dml_rt_session_create(m, "cpu", &s));
    if (!s) break;
    for (int k = 0; k < 2; k++) {
      char rel[256], ip[1024], op[1024];
      snprintf(rel, sizeof rel, "tests/models/qdq/qdq_cnn_io/input_%d.npy", k);
      dml_test_path("DMLC_SOURCE_DIR", rel, ip, sizeof ip);
      snprintf(rel, sizeof rel, "tests/models/qdq/qdq_cnn_io/output_%d.npy", k);
      dml_test_path("DMLC_SOURCE_DIR", rel, op, sizeof op);
      dml_tensor_t in, want, got;
      void *ib = NULL, *ob = NULL;
      CHECK_OK(dml_npy_read_file(ip, &in, &ib));
      CHECK_OK(dml_npy_read_file(op, &want, &ob));
      if (ib && ob) {
        CHECK_OK(dml_rt_session_set_input(s, 0, &in));
        CHECK_OK(dml_rt_session_run(s));
        CHECK_OK(dml_rt_session_get_output(s, 0, &got));
        int64_t n = dml_dims_numel(want.dims, want.rank);
        CHECK(dml_dims_numel(got.dims, got.rank) == n);
        double worst = 0;
        int64_t exact = 0;
        for (int64_t i = 0; i < n; i++) {
          double d = fabs((double)((const float *)got.data)[i] -
                          (double)((const float *)want.data)[i]);
          if (!(d <= worst)) worst = d;
          exact += d == 0;
        }
        printf(
            "qdq_cnn %s, %d thread(s), input %d: max |dmlc - ORT| = %g (step %g), "
            "%lld of %lld equal\n",
            fuse ? "fused" : "f32 form", threads, k, worst, tol / 1.0001,
            (long long)exact, (long long)n);
        CHECK(worst <= tol);
      }
      free(ib);
      free(ob);
    }
    dml_rt_session_release(s);
  }
  dml_cpu_set_num_threads(1);
  free(sb);
  dml_rt_model_release(m);
  unlink(pkg);
}

static void test_qdq_cnn(void) {
  int qc1 = -1, qm1 = -1, qc0 = -1, qm0 = -1;
  run_model(1, &qc1, &qm1);
  run_model(0, &qc0, &qm0);
  printf("QLinearConv nodes: %d fused, %d unfused; QLinearMatMul: %d, %d\n", qc1, qc0,
         qm1, qm0);
  CHECK(qc1 == 5 && qm1 == 1); /* 4 Conv and the Gemm (as a 1x1 QLinearConv) */
  CHECK(qc0 == 0 && qm0 == 0);
}

int main(void) {
  RUN(test_qdq_cnn);
  return dml_test_finish();
}
