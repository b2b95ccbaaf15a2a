/*
 * test_onnx_global_lppool.c — ONNX GlobalLpPool (opset 2..), lowered by the
 * importer to Abs, Pow, ReduceSum over the spatial dims and Pow
 * (onnx_ops.c onnx_imp_global_lppool), compiled with the driver and run on
 * the cpu runtime against onnxruntime's results (global_lppool_ref.h,
 * written by gen_global_lppool.py with the fixtures). Tolerance: 4e-6
 * relative (f32 Pow and a sum of at most 20 terms, each a few ulps from
 * onnxruntime's); NaN and +-inf must match exactly. The inputs hold NaN,
 * -inf, -0, 1e-30 (|x|^3 underflows to 0), 1e12 and 1e18.
 */
#include <math.h>

#include "global_lppool_ref.h"
#include "onnx_run_util.h"

static void check_close(dml_rt_model_t *m, dml_rt_session_t *s, const char *name,
                        const float *want, int64_t n, int32_t rank, const int64_t *dims) {
  int32_t k = dml_rt_model_find_output(m, name);
  CHECK(k >= 0);
  if (k < 0) return;
  dml_tensor_t got;
  CHECK_OK(dml_rt_session_get_output(s, (uint32_t)k, &got));
  CHECK(got.dtype == DML_DTYPE_F32 && got.rank == rank);
  if (got.dtype != DML_DTYPE_F32 || got.rank != rank) return;
  for (int32_t d = 0; d < rank; d++) CHECK(got.dims[d] == dims[d]);
  CHECK(dml_dims_numel(got.dims, got.rank) == n);
  if (dml_dims_numel(got.dims, got.rank) != n) return;
  for (int64_t i = 0; i < n; i++) {
    float g = ((const float *)got.data)[i], w = want[i];
    int ok = isnan(w) ? isnan(g) : isinf(w) ? g == w : fabsf(g - w) <= 4e-6f * fabsf(w);
    if (!ok) fprintf(stderr, "%s[%lld]: got %a, want %a\n", name, (long long)i, g, w);
    CHECK(ok);
  }
}

static void test_p3_4d(void) {
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = session_of("global_lppool_p3.onnx", NULL, &m);
  if (!s) return;
  dml_tensor_t x = {DML_DTYPE_F32, 4, {2, 3, 4, 5}, (void *)k_x_p3};
  CHECK_OK(dml_rt_session_set_input_by_name(s, "X", &x));
  CHECK_OK(dml_rt_session_run(s));
  static const int64_t dims[4] = {2, 3, 1, 1};
  check_close(m, s, "Y", k_y_p3, 6, 4, dims);
  release(s, m);
}

static void test_default_p_1d(void) {
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = session_of("global_lppool_1d.onnx", NULL, &m);
  if (!s) return;
  set_f32(s, "X", k_x_1d, 3, 1, 4, 7);
  CHECK_OK(dml_rt_session_run(s));
  static const int64_t dims[3] = {1, 4, 1};
  check_close(m, s, "Y", k_y_1d, 4, 3, dims);
  release(s, m);
}

static void test_lowering(void) {
  dml_ir_module_t *mod = NULL;
  CHECK_OK(import_fixture("global_lppool_p3.onnx", &mod));
  if (!mod) return;
  CHECK(module_well_formed(mod));
  CHECK(count_op(fwd(mod), DML_OP_ABS) == 1);
  CHECK(count_op(fwd(mod), DML_OP_POW) == 2);
  CHECK(count_op(fwd(mod), DML_OP_REDUCE_SUM) == 1);
  dml_ir_module_release(mod);
}

static void test_rank2_refused(void) {
  dml_ir_module_t *mod = NULL;
  CHECK_ERROR(import_fixture("global_lppool_rank2.onnx", &mod),
              DML_STATUS_INVALID_ARGUMENT,
              "node 'glp' (GlobalLpPool): GlobalLpPool needs X of known rank >= 3");
  CHECK(mod == NULL);
}

int main(void) {
  RUN(test_p3_4d);
  RUN(test_default_p_1d);
  RUN(test_lowering);
  RUN(test_rank2_refused);
  return dml_test_finish();
}
