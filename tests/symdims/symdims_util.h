/*
 * symdims_util.h — helpers of the symbolic-dims tests (test_symdims.c on the
 * CPU, test_symdims_gpu.c on Vulkan and CUDA): compile a fixture of
 * tests/symdims with per-symbol bounds, run a saved case and compare with
 * onnxruntime's output within 1e-4 * max(1, |ref|) (or a tolerance given).
 */
#ifndef SYMDIMS_UTIL_H_
#define SYMDIMS_UTIL_H_

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_driver.h"
#include "dml_npy.h"
#include "dml_rt.h"
#include "dml_test.h"

static inline uint8_t *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = (uint8_t *)malloc(n > 0 ? (size_t)n : 1);
  if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  *len = (size_t)n;
  return b;
}

/* The folder of the fixtures, relative to the source tree (tests/symshape
 * defines its own before including this header). */
#ifndef SYMDIMS_FIXTURE_DIR
#define SYMDIMS_FIXTURE_DIR "tests/symdims"
#endif

static inline const char *fixture(const char *name, char *buf, size_t cap) {
  char rel[320];
  snprintf(rel, sizeof rel, SYMDIMS_FIXTURE_DIR "/%s", name);
  return dml_test_path("DMLC_SOURCE_DIR", rel, buf, cap);
}

/* Compiles fixture `model`.onnx for `targets` with the given bounds and
 * ranges: the status (NOT_FOUND without the fixture), and the loaded model
 * in *out on success (out NULL: compiled only, not loaded). */
static inline dml_status_t compile_status(const char *model,
                                          const dml_onnx_dim_bound_t *b, size_t nb,
                                          const dml_onnx_dim_range_t *r, size_t nr,
                                          const char *targets, dml_rt_model_t **out) {
  char path[1400], file[256];
  snprintf(file, sizeof file, "%s.onnx", model);
  size_t len = 0;
  uint8_t *bytes = read_file(fixture(file, path, sizeof path), &len);
  if (out) *out = NULL;
  if (!bytes) return dml_status_make(DML_STATUS_NOT_FOUND, "test", "no %s", path);
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.targets = targets;
  o.dim_bounds = b;
  o.n_dim_bounds = nb;
  o.input_ranges = r;
  o.n_input_ranges = nr;
  void *pkg = NULL;
  size_t n = 0;
  dml_status_t st = dml_compile_onnx_memory(bytes, len, NULL, file, &o, &pkg, &n, NULL);
  free(bytes);
  if (!st && out) st = dml_rt_model_load_memory(pkg, n, out);
  free(pkg);
  return st;
}

/* Compiles fixture `model`.onnx with the given bounds and ranges into a
 * loaded model (a failed CHECK and NULL otherwise). */
static inline dml_rt_model_t *compile_r(const char *model, const dml_onnx_dim_bound_t *b,
                                        size_t nb, const dml_onnx_dim_range_t *r,
                                        size_t nr, const char *targets) {
  dml_rt_model_t *m = NULL;
  CHECK_OK(compile_status(model, b, nb, r, nr, targets, &m));
  return m;
}

/* compile_r without ranges. */
static inline dml_rt_model_t *compile(const char *model, const dml_onnx_dim_bound_t *b,
                                      size_t nb, const char *targets) {
  return compile_r(model, b, nb, NULL, 0, targets);
}

/* Runs case `tag` of `model` on session `s` (input <model>.<tag>.x.npy)
 * and compares its outputs with the saved onnxruntime ones: `n_out`
 * outputs <model>.<tag>.y.npy (n_out 1) or .y1.npy, .y2.npy, ...; each
 * element within `atol` + `rtol` * |ref| when atol > 0, else within 1e-4 *
 * max(1, |ref|). */
static inline void check_case_tol(dml_rt_session_t *s, const char *model, const char *tag,
                                  int n_out, double atol, double rtol) {
  char path[1400], file[256];
  dml_tensor_t x;
  void *xb = NULL;
  snprintf(file, sizeof file, "%s.%s.x.npy", model, tag);
  CHECK_OK(dml_npy_read_file(fixture(file, path, sizeof path), &x, &xb));
  if (!xb) return;
  CHECK_OK(dml_rt_session_set_input(s, 0, &x));
  CHECK_OK(dml_rt_session_run(s));
  free(xb);
  for (int k = 0; k < n_out; k++) {
    dml_tensor_t want, got;
    void *wb = NULL;
    if (n_out == 1)
      snprintf(file, sizeof file, "%s.%s.y.npy", model, tag);
    else
      snprintf(file, sizeof file, "%s.%s.y%d.npy", model, tag, k + 1);
    CHECK_OK(dml_npy_read_file(fixture(file, path, sizeof path), &want, &wb));
    if (!wb) continue;
    CHECK_OK(dml_rt_session_get_output(s, (uint32_t)k, &got));
    CHECK(got.rank == want.rank &&
          !memcmp(got.dims, want.dims, sizeof(int64_t) * (size_t)want.rank));
    if (got.rank != want.rank ||
        memcmp(got.dims, want.dims, sizeof(int64_t) * (size_t)want.rank) != 0) {
      fprintf(stderr, "%s: output %d has other dims than the reference\n", file, k);
      free(wb);
      continue;
    }
    int64_t n = dml_dims_numel(got.dims, got.rank), bad = 0;
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
      double g = ((const float *)got.data)[i], w = ((const float *)want.data)[i];
      double err = atol > 0 ? fabs(g - w) : fabs(g - w) / fmax(1.0, fabs(w));
      if (!(atol > 0 ? err <= atol + rtol * fabs(w) : err <= 1e-4)) bad++;
      if (err > worst || err != err) worst = err;
    }
    if (bad)
      fprintf(stderr, "%s: %lld of %lld off, worst %g\n", file, (long long)bad,
              (long long)n, worst);
    CHECK(bad == 0);
    free(wb);
  }
}

/* check_case_tol within 1e-4 * max(1, |ref|). */
static inline void check_case_n(dml_rt_session_t *s, const char *model, const char *tag,
                                int n_out) {
  check_case_tol(s, model, tag, n_out, 0, 0);
}

static inline void check_case(dml_rt_session_t *s, const char *model, const char *tag) {
  check_case_n(s, model, tag, 1);
}

/* A zero f32 input of dims `d` bound to input 0; returns the buffer. */
static inline dml_status_t set_zeros(dml_rt_session_t *s, int32_t rank, const int64_t *d,
                                     float **buf) {
  int64_t n = dml_dims_numel(d, rank);
  *buf = (float *)calloc((size_t)n, sizeof(float));
  dml_tensor_t t = dml_test_tensor(DML_DTYPE_F32, rank, d, *buf);
  return dml_rt_session_set_input(s, 0, &t);
}

#endif /* SYMDIMS_UTIL_H_ */
