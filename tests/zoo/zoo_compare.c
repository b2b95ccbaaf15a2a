/*
 * zoo_compare — compares an output of `dmlc run` with ONNX Runtime's saved
 * output the way scripts/zoo/run.py does (docs/zoo.md):
 *
 *   usage: zoo_compare GOT.npy REF.npy [TOL]      (TOL default 1e-4)
 *
 * Passes (exit 0) when the dtypes and shapes are equal, NaN sits exactly
 * where REF has NaN, infinities are equal, and over the finite elements
 *   max|got - ref| / max(1, max|ref|) <= TOL.
 * Prints the scaled error; exit 1 on a mismatch, 2 on a usage or file error.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_dtype.h"
#include "dml_npy.h"
#include "dml_types.h"

static int load(const char *path, dml_tensor_t *t, void **buf) {
  dml_status_t st = dml_npy_read_file(path, t, buf);
  if (st) {
    char *m = dml_status_format(st);
    fprintf(stderr, "zoo_compare: %s: %s", path, m ? m : "error\n");
    free(m);
    dml_status_free(st);
    return 0;
  }
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 3 || argc > 4) {
    fprintf(stderr, "usage: zoo_compare GOT.npy REF.npy [TOL]\n");
    return 2;
  }
  double tol = argc == 4 ? strtod(argv[3], NULL) : 1e-4;
  dml_tensor_t got, ref;
  void *gb = NULL, *rb = NULL;
  if (!load(argv[1], &got, &gb)) return 2;
  if (!load(argv[2], &ref, &rb)) {
    free(gb);
    return 2;
  }
  int rc = 0;
  if (got.dtype != ref.dtype || got.rank != ref.rank ||
      memcmp(got.dims, ref.dims, sizeof(int64_t) * (size_t)ref.rank) != 0) {
    fprintf(stderr, "zoo_compare: %s: dtype/shape differ from %s\n", argv[1], argv[2]);
    rc = 1;
  } else {
    int64_t n = dml_dims_numel(ref.dims, ref.rank);
    double maxd = 0.0, maxr = 0.0;
    int64_t bad = -1;
    for (int64_t i = 0; i < n && bad < 0; i++) {
      double g = dml_load_f64(got.dtype, got.data, (size_t)i);
      double r = dml_load_f64(ref.dtype, ref.data, (size_t)i);
      if (isnan(r) || isnan(g) || isinf(r) || isinf(g)) {
        if (!((isnan(r) && isnan(g)) || (isinf(r) && g == r))) bad = i;
        continue;
      }
      double d = fabs(g - r);
      if (d > maxd) maxd = d;
      if (fabs(r) > maxr) maxr = fabs(r);
    }
    double err = bad >= 0 ? INFINITY : maxd / (maxr > 1.0 ? maxr : 1.0);
    printf("%s: scaled error %.3g (tolerance %.3g)\n", argv[1], err, tol);
    if (!(err <= tol)) rc = 1;
  }
  free(gb);
  free(rb);
  return rc;
}
