/*
 * test_onnx_empty_init.c — a model whose empty initializer (Resize's roi, 0
 * elements) is listed before other initializers compiles, loads and runs
 * (tests/onnx/fixtures/empty_initializer.onnx, scripts/gen_onnx_fixtures.py).
 * The empty value's zero bytes share a weights offset with the next
 * initializer's; the loader once took them for one global and refused the
 * package ("global value 'scales' at weights offset 0 differs from 'roi'").
 * Reference: nearest Resize by 2 (half_pixel, round_prefer_floor) times
 * 0.5, exact.
 */
#include "onnx_run_util.h"

static void test_empty_initializer_first(void) {
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = session_of("empty_initializer.onnx", NULL, &m);
  CHECK(s != NULL);
  if (!s) {
    release(s, m);
    return;
  }
  static const float x[4] = {0, 1, 2, 3};
  static const float want[16] = {0, 0, 0.5f, 0.5f, 0, 0, 0.5f, 0.5f,
                                 1, 1, 1.5f, 1.5f, 1, 1, 1.5f, 1.5f};
  dml_tensor_t t = {DML_DTYPE_F32, 4, {1, 1, 2, 2}, (void *)x};
  CHECK_OK(dml_rt_session_set_input_by_name(s, "x", &t));
  CHECK_OK(dml_rt_session_run(s));
  check_out_at(s, 0, want, 16);
  release(s, m);
}

int main(void) {
  RUN(test_empty_initializer_first);
  return dml_test_finish();
}
