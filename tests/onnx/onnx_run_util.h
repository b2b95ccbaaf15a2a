/*
 * onnx_run_util.h — compile an ONNX fixture with the driver into a session on
 * the cpu runtime, set its f32 inputs and check its f32 outputs exactly
 * (tests of the importer's lowerings: If, sequences, Loop, Scan, optionals).
 */
#ifndef ONNX_RUN_UTIL_H_
#define ONNX_RUN_UTIL_H_

#include <math.h>
#include <stdio.h>

#include "dml_driver.h"
#include "dml_rt.h"
#include "onnx_test_util.h"

/* Compiles fixture `name` with `o` (may be NULL) into a session. */
static inline dml_rt_session_t *session_of(const char *name,
                                           const dml_compile_options_t *o,
                                           dml_rt_model_t **out_model) {
  char path[1024];
  size_t len = 0;
  uint8_t *bytes = read_all(fixture(name, path, sizeof(path)), &len);
  CHECK(bytes != NULL);
  if (!bytes) return NULL;
  void *pkg = NULL;
  size_t pkg_size = 0;
  dml_status_t st =
      dml_compile_onnx_memory(bytes, len, NULL, name, o, &pkg, &pkg_size, NULL);
  free(bytes);
  CHECK_OK(st);
  if (st) return NULL;
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = NULL;
  CHECK_OK(dml_rt_model_load_memory(pkg, pkg_size, &m));
  free(pkg);
  if (m) CHECK_OK(dml_rt_session_create(m, "cpu", &s));
  *out_model = m;
  return s;
}

/* Sets f32 input `name` of `s` to `v` with dims {d0, d1, d2}[..rank]
 * (rank <= 3; the unused dims are ignored). */
static inline void set_f32(dml_rt_session_t *s, const char *name, const float *v,
                           int32_t rank, int64_t d0, int64_t d1, int64_t d2) {
  dml_tensor_t t = {DML_DTYPE_F32, rank, {d0, d1, d2}, (void *)v};
  CHECK_OK(dml_rt_session_set_input_by_name(s, name, &t));
}

/* Output `name` (of model `m`) of the last run of `s` is f32 with dims
 * {d0, d1, d2}[..rank] (rank <= 3) and values exactly `want`; every wrong
 * value is printed. */
static inline void check_out(dml_rt_model_t *m, dml_rt_session_t *s, const char *name,
                             int32_t rank, int64_t d0, int64_t d1, int64_t d2,
                             const float *want) {
  int32_t k = dml_rt_model_find_output(m, name);
  CHECK(k >= 0);
  if (k < 0) {
    fprintf(stderr, "no output '%s'\n", name);
    return;
  }
  dml_tensor_t got;
  CHECK_OK(dml_rt_session_get_output(s, (uint32_t)k, &got));
  int64_t dims[3] = {d0, d1, d2}, n = 1;
  CHECK(got.dtype == DML_DTYPE_F32 && got.rank == rank);
  if (got.dtype != DML_DTYPE_F32 || got.rank != rank) return;
  for (int32_t r = 0; r < rank; r++) {
    CHECK(got.dims[r] == dims[r]);
    if (got.dims[r] != dims[r]) return;
    n *= dims[r];
  }
  for (int64_t i = 0; i < n; i++) {
    if (((const float *)got.data)[i] != want[i])
      fprintf(stderr, "%s[%lld]: got %g, want %g\n", name, (long long)i,
              ((const float *)got.data)[i], want[i]);
    CHECK(((const float *)got.data)[i] == want[i]);
  }
}

/* Output `index` of the last run of `s` is f32 with `n` elements, exactly
 * `want`; every wrong value is printed. */
static inline void check_out_at(dml_rt_session_t *s, uint32_t index, const float *want,
                                int64_t n) {
  dml_tensor_t got;
  dml_status_t st = dml_rt_session_get_output(s, index, &got);
  CHECK_OK(st);
  if (st) return;
  CHECK(got.dtype == DML_DTYPE_F32 && dml_dims_numel(got.dims, got.rank) == n);
  if (got.dtype != DML_DTYPE_F32 || dml_dims_numel(got.dims, got.rank) != n) return;
  for (int64_t i = 0; i < n; i++) {
    if (((const float *)got.data)[i] != want[i])
      fprintf(stderr, "output %u [%lld]: got %g, want %g\n", index, (long long)i,
              ((const float *)got.data)[i], want[i]);
    CHECK(((const float *)got.data)[i] == want[i]);
  }
}

/* Output `name` (of model `m`) of the last run of `s` against onnxruntime's
 * reference: dtype (f32: values `f`; i64: values `i`) and dims exactly,
 * f32 values within 1e-5 absolute + 1e-5 relative, i64 values exactly;
 * case `cname` and every mismatch are printed. For the generated fixtures
 * of the run-time Scan and sequence tests. */
static inline void check_ref_output(dml_rt_model_t *m, dml_rt_session_t *s,
                                    const char *cname, const char *name, int32_t rank,
                                    const int64_t *dims, const float *f,
                                    const int64_t *i64) {
  int32_t k = dml_rt_model_find_output(m, name);
  CHECK(k >= 0);
  if (k < 0) return;
  dml_tensor_t got;
  CHECK_OK(dml_rt_session_get_output(s, (uint32_t)k, &got));
  int same = got.dtype == (i64 ? DML_DTYPE_I64 : DML_DTYPE_F32) && got.rank == rank;
  for (int32_t d = 0; same && d < rank; d++) same = got.dims[d] == dims[d];
  if (!same) {
    char a[128], b[128];
    dml_dims_str(got.dims, got.rank, a, sizeof a);
    dml_dims_str(dims, rank, b, sizeof b);
    fprintf(stderr, "case %s: output %s is %s %s, onnxruntime %s %s\n", cname, name,
            dml_dtype_name(got.dtype), a, i64 ? "i64" : "f32", b);
  }
  CHECK(same);
  if (!same) return;
  int64_t n = dml_dims_numel(dims, rank);
  for (int64_t j = 0; j < n; j++) {
    double g = i64 ? (double)((const int64_t *)got.data)[j]
                   : (double)((const float *)got.data)[j];
    double e = i64 ? (double)i64[j] : (double)f[j];
    int ok = i64 ? g == e : fabs(g - e) <= 1e-5 + 1e-5 * fabs(e);
    if (!ok)
      fprintf(stderr, "case %s: %s[%lld] = %.9g, onnxruntime %.9g\n", cname, name,
              (long long)j, g, e);
    CHECK(ok);
  }
}

/* Releases a session and its model (either may be NULL). */
static inline void release(dml_rt_session_t *s, dml_rt_model_t *m) {
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

#endif /* ONNX_RUN_UTIL_H_ */
