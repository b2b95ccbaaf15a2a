/*
 * cpu_bitcast_tensorscatter.c — reference kernels of ops that ONNX opsets
 * 24..28 added: BitCast (26) and TensorScatter (24). (CumProd-26 is
 * CumSum's kernel, cpu_axis_ops.c; Swish-24 and SwiGLU-28 are expanded by the importer.)
 */
#include <string.h>

#include "cpu_internal.h"

/* ======================================================================
 * BitCast-26: Y holds X's bytes, reinterpreted as Y's dtype (the `to`
 * attribute; shape inference sets it), which has X's element size. The
 * ONNX text treats the bytes as little endian; reinterpreting one element
 * of one width in host order is the same on either byte order. A bool Y
 * needs every byte 0 or 1 (dmlc's bool), else INVALID_ARGUMENT naming the
 * element.
 * ====================================================================== */

dml_status_t dml_cpuk_BitCast(const dml_cpu_call_t *c) {
  const dml_tensor_t *x = &c->inputs[0];
  dml_tensor_t *y = &c->outputs[0];
  if (dml_dtype_size(x->dtype) != dml_dtype_size(y->dtype) || !dml_dtype_size(x->dtype))
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "BitCast from %s to %s: the element sizes differ",
                         dml_dtype_name(x->dtype), dml_dtype_name(y->dtype));
  int64_t n = dml_cpu_numel(x);
  if (dml_cpu_numel(y) != n) return dml_cpu_err_shapes(c, "Y must have X's shape");
  if (y->dtype == DML_DTYPE_BOOL && x->dtype != DML_DTYPE_BOOL)
    for (int64_t i = 0; i < n; i++) {
      uint8_t b = ((const uint8_t *)x->data)[i];
      if (b > 1)
        return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                             "element %lld is the byte %u, which is not a bool (0 or 1)",
                             (long long)i, (unsigned)b);
    }
  if (n > 0) memmove(y->data, x->data, (size_t)n * dml_dtype_size(x->dtype));
  return DML_OK;
}

/* ======================================================================
 * TensorScatter-24 (the pseudocode of the ONNX operator text):
 *   present = past;
 *   for each prefix index p of dims [0, axis) (batch b = p[0]) and each
 *   s < update's length L along axis:
 *     t = write_indices[b] + s   (0 + s without write_indices);
 *     circular: t = t mod max (max = past's length along axis)
 *     present[p, t, ...] = update[p, s, ...]
 * Linear mode needs 0 <= write_indices[b] and write_indices[b] + L <= max
 * (else OUT_OF_RANGE naming b); circular needs write_indices[b] >= 0.
 * ====================================================================== */

dml_status_t dml_cpuk_TensorScatter(const dml_cpu_call_t *c) {
  const dml_tensor_t *p = &c->inputs[0], *u = &c->inputs[1], *w = dml_cpu_in(c, 2);
  dml_tensor_t *y = &c->outputs[0];
  if (u->dtype != p->dtype || y->dtype != p->dtype)
    return dml_cpu_err_dtype(c, "update/present_cache", u->dtype);
  const char *mode = dml_cpu_get_string(c, "mode", "linear");
  int circ = !strcmp(mode, "circular");
  if (!circ && strcmp(mode, "linear"))
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "mode '%s' is not linear or circular", mode);
  int64_t a;
  if (p->rank < 2 || u->rank != p->rank || y->rank != p->rank ||
      dml_cpu_norm_axis(dml_cpu_get_int(c, "axis", -2), p->rank, &a) || a == 0)
    return dml_cpu_err_shapes(c, "caches of one rank >= 2 and an axis other than 0");
  int64_t outer = 1, inner = 1, mx = p->dims[a], L = u->dims[a];
  for (int32_t d = 0; d < p->rank; d++) {
    if (y->dims[d] != p->dims[d] || (d != a && u->dims[d] != p->dims[d]))
      return dml_cpu_err_shapes(c, "update must match past_cache but along axis");
    if (d < a) outer *= p->dims[d];
    if (d > a) inner *= p->dims[d];
  }
  if (L > mx) return dml_cpu_err_shapes(c, "update is longer than the cache along axis");
  int64_t B = p->dims[0], per_b = B > 0 ? outer / B : 0;
  if (w && (w->dtype != DML_DTYPE_I64 || dml_cpu_numel(w) != B))
    return dml_cpu_err_shapes(c, "write_indices must be i64 [batch]");
  size_t es = dml_dtype_size(p->dtype);
  if (y->data != p->data) memmove(y->data, p->data, (size_t)dml_cpu_numel(p) * es);
  for (int64_t b = 0; b < B; b++) {
    int64_t w0 = w ? ((const int64_t *)w->data)[b] : 0;
    if (w0 < 0 || (!circ && (w0 > mx || L > mx - w0)))
      return dml_cpu_error(c, DML_STATUS_OUT_OF_RANGE,
                           "write_indices[%lld] = %lld: %lld updates do not fit a cache "
                           "of %lld (mode %s)",
                           (long long)b, (long long)w0, (long long)L, (long long)mx,
                           mode);
    for (int64_t o = b * per_b; o < (b + 1) * per_b; o++)
      for (int64_t s = 0; s < L; s++) {
        int64_t t = circ ? (w0 % mx + s) % mx : w0 + s;
        memcpy((char *)y->data + (size_t)((o * mx + t) * inner) * es,
               (const char *)u->data + (size_t)((o * L + s) * inner) * es,
               (size_t)inner * es);
      }
  }
  return DML_OK;
}
