#include "dml_types.h"

#include <stdio.h>
#include <string.h>

int64_t dml_dims_numel(const int64_t *dims, int32_t rank) {
  int64_t n = 1;
  for (int32_t i = 0; i < rank; i++) {
    if (dims[i] < 0) return -1;
    if (dims[i] != 0 && n > INT64_MAX / dims[i]) return -1;
    n *= dims[i];
  }
  return n;
}

size_t dml_tensor_bytes(const dml_tensor_t *t) {
  int64_t n = dml_dims_numel(t->dims, t->rank);
  size_t es = dml_dtype_size(t->dtype);
  if (n < 0 || es == 0) return SIZE_MAX;
  if ((uint64_t)n > SIZE_MAX / es) return SIZE_MAX;
  return (size_t)n * es;
}

dml_status_t dml_type_eval_dims(const dml_type_t *type, const int64_t *sym_values,
                                size_t n_syms, int64_t *out_dims) {
  if (type->rank < 0 || type->rank > DML_MAX_RANK)
    return dml_status_make(DML_STATUS_INTERNAL, "shape", "type has unknown rank");
  for (int32_t i = 0; i < type->rank; i++) {
    const dml_dim_t *d = &type->dims[i];
    if (d->sym < 0) {
      out_dims[i] = d->value;
      continue;
    }
    if ((size_t)d->sym >= n_syms)
      return dml_status_make(DML_STATUS_OUT_OF_RANGE, "shape",
                             "symbol index %d out of range (%zu symbols)", (int)d->sym,
                             n_syms);
    int64_t s = sym_values[d->sym];
    if (d->value < 0 || s < 0 || (s != 0 && d->value > INT64_MAX / s))
      return dml_status_make(DML_STATUS_OUT_OF_RANGE, "shape", "dim %lld*sym%d overflows",
                             (long long)d->value, (int)d->sym);
    out_dims[i] = d->value * s;
  }
  return DML_OK;
}

int dml_sym_derived_eval(int64_t mul, int64_t add, int64_t div, int64_t a, int64_t b,
                         int64_t *out) {
  int64_t p, q;
  if (div < 1 || __builtin_mul_overflow(mul, a, &p) || __builtin_mul_overflow(p, b, &p) ||
      __builtin_add_overflow(p, add, &p))
    return 0;
  q = p / div;
  if (p % div != 0 && p < 0) q--; /* floor, not truncation */
  *out = q;
  return 1;
}

const dml_attr_t *dml_attr_find(const dml_attr_t *attrs, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (attrs[i].name && strcmp(attrs[i].name, name) == 0) return &attrs[i];
  return NULL;
}

int64_t dml_attr_int(const dml_attr_t *attrs, size_t n, const char *name, int64_t dflt) {
  const dml_attr_t *a = dml_attr_find(attrs, n, name);
  return a && a->kind == DML_ATTR_INT ? a->i : dflt;
}

double dml_attr_float(const dml_attr_t *attrs, size_t n, const char *name, double dflt) {
  const dml_attr_t *a = dml_attr_find(attrs, n, name);
  if (!a) return dflt;
  if (a->kind == DML_ATTR_FLOAT) return a->f;
  if (a->kind == DML_ATTR_INT) return (double)a->i;
  return dflt;
}

const char *dml_attr_string(const dml_attr_t *attrs, size_t n, const char *name,
                            const char *dflt) {
  const dml_attr_t *a = dml_attr_find(attrs, n, name);
  return a && a->kind == DML_ATTR_STRING ? a->s : dflt;
}

const int64_t *dml_attr_ints(const dml_attr_t *attrs, size_t n, const char *name,
                             size_t *out_n) {
  const dml_attr_t *a = dml_attr_find(attrs, n, name);
  if (!a || a->kind != DML_ATTR_INTS) {
    *out_n = 0;
    return NULL;
  }
  *out_n = a->n;
  return a->ints;
}

const double *dml_attr_floats(const dml_attr_t *attrs, size_t n, const char *name,
                              size_t *out_n) {
  const dml_attr_t *a = dml_attr_find(attrs, n, name);
  if (!a || a->kind != DML_ATTR_FLOATS) {
    *out_n = 0;
    return NULL;
  }
  *out_n = a->n;
  return a->floats;
}

const char *dml_attr_kind_name(dml_attr_kind_t kind) {
  switch (kind) {
    case DML_ATTR_INT: return "int";
    case DML_ATTR_FLOAT: return "float";
    case DML_ATTR_STRING: return "string";
    case DML_ATTR_INTS: return "ints";
    case DML_ATTR_FLOATS: return "floats";
    case DML_ATTR_TENSOR: return "tensor";
    case DML_ATTR_STRINGS: return "strings";
  }
  return "unknown";
}

const char *dml_dims_str(const int64_t *dims, int32_t rank, char *buf, size_t cap) {
  size_t k = 0;
  if (cap == 0) return buf;
  buf[0] = 0;
  k += (size_t)snprintf(buf + k, cap - k, "[");
  for (int32_t i = 0; i < rank && k < cap; i++)
    k += (size_t)snprintf(buf + k, cap - k, i ? ",%lld" : "%lld", (long long)dims[i]);
  if (k < cap) snprintf(buf + k, cap - k, "]");
  return buf;
}
