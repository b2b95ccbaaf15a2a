/*
 * test_random_session.c — the executor's side of the random stream
 * (runtime/rt_session.c): each run is one step, a new session starts at
 * step 0, and dml_rt_session_set_seed replays a step or changes the seed.
 * Uses ONNX's test_training_dropout_default_mask model (Dropout-13 in
 * training mode, x [3,4,5], ratio and training_mode as inputs) from
 * libonnx-testdata; skipped with a message when the data is not installed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_driver.h"
#include "dml_rt.h"
#include "dml_test.h"

static float g_x[60];

static int run_mask(dml_rt_session_t *s, uint8_t *mask, float *y) {
  float ratio = 0.5f;
  uint8_t tm = 1;
  dml_tensor_t t[3];
  memset(t, 0, sizeof t);
  t[0].dtype = DML_DTYPE_F32, t[0].rank = 3, t[0].data = g_x;
  t[0].dims[0] = 3, t[0].dims[1] = 4, t[0].dims[2] = 5;
  t[1].dtype = DML_DTYPE_F32, t[1].data = &ratio;
  t[2].dtype = DML_DTYPE_BOOL, t[2].data = &tm;
  for (uint32_t i = 0; i < 3; i++)
    if (dml_rt_session_set_input(s, i, &t[i])) return -1;
  CHECK_OK(dml_rt_session_run(s));
  dml_tensor_t o0, o1;
  CHECK_OK(dml_rt_session_get_output(s, 0, &o0));
  CHECK_OK(dml_rt_session_get_output(s, 1, &o1));
  if (o0.dtype != DML_DTYPE_F32 || o1.dtype != DML_DTYPE_BOOL) return -1;
  memcpy(y, o0.data, sizeof g_x);
  memcpy(mask, o1.data, 60);
  return 0;
}

static void test_steps(void) {
  const char *root = getenv("DMLC_ONNX_TESTDATA");
  char path[1024];
  snprintf(path, sizeof path, "%s/node/test_training_dropout_default_mask/model.onnx",
           root && *root ? root : "/usr/share/libonnx-testdata/data");
  FILE *f = fopen(path, "rb");
  if (!f) {
    printf("skip: %s not found (apt-get install libonnx-testdata)\n", path);
    return;
  }
  fclose(f);
  char out[] = "/tmp/dml_random_session_XXXXXX";
  int fd = mkstemp(out);
  CHECK(fd >= 0);
  if (fd < 0) return;
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  dml_rt_model_t *m = NULL;
  CHECK_OK(dml_compile_onnx_file(path, out, &o, NULL));
  CHECK_OK(dml_rt_model_load_file(out, &m));
  remove(out);
  if (!m) return;
  for (int i = 0; i < 60; i++) g_x[i] = 1.0f + (float)i;
  dml_rt_session_t *s1 = NULL, *s2 = NULL;
  CHECK_OK(dml_rt_session_create(m, "cpu", &s1));
  CHECK_OK(dml_rt_session_create(m, "cpu", &s2));
  uint8_t m0[60], m1[60], m2[60], m3[60];
  float y0[60], y1[60], y2[60], y3[60];
  if (s1 && s2 && run_mask(s1, m0, y0) == 0 && run_mask(s1, m1, y1) == 0 &&
      run_mask(s2, m2, y2) == 0) {
    CHECK(memcmp(m0, m1, 60) != 0); /* step 1 differs from step 0 */
    CHECK(memcmp(m0, m2, 60) == 0); /* a new session starts at step 0 */
    CHECK(memcmp(y0, y2, sizeof y0) == 0);
    for (int i = 0; i < 60; i++) CHECK(y0[i] == (m0[i] ? g_x[i] * 2.0f : 0.0f));
    dml_rt_session_set_seed(s2, 0, 1); /* replay step 1 */
    CHECK(run_mask(s2, m3, y3) == 0);
    CHECK(memcmp(m1, m3, 60) == 0);
    /* The node has ONNX's `seed` = 0 attribute, which takes precedence
     * over the session seed: another session seed changes nothing. */
    dml_rt_session_set_seed(s2, 99, 0);
    CHECK(run_mask(s2, m3, y3) == 0);
    CHECK(memcmp(m0, m3, 60) == 0);
  } else {
    CHECK(!"session setup or run failed");
  }
  dml_rt_session_release(s1);
  dml_rt_session_release(s2);
  dml_rt_model_release(m);
}

int main(void) {
  RUN(test_steps);
  return dml_test_finish();
}
