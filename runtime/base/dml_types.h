/*
 * dml_types.h — shapes with bounded symbolic dims, tensors and attributes.
 *
 * These are shared by the compiler and the runtime: the IR's value types
 * and the package's value table use dml_type_t; CPU kernels receive
 * dml_tensor_t descriptors and dml_attr_t arrays.
 */
#ifndef DML_TYPES_H_
#define DML_TYPES_H_

#include <stddef.h>
#include <stdint.h>

#include "dml_dtype.h"
#include "dml_status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DML_MAX_RANK 8
/* Rank of a type whose shape is not known yet (before shape inference). */
#define DML_RANK_UNKNOWN (-1)

/* One dim. sym < 0: the static extent `value`. sym >= 0: `value` times the
 * run-time value of symbol `sym` of the module (e.g. batch, or 16*batch
 * after a Flatten). Every symbol has an upper bound, so every dim has one. */
typedef struct dml_dim {
  int64_t value;
  int32_t sym;
} dml_dim_t;

/* A tensor type: dtype and shape (rank DML_RANK_UNKNOWN when unknown). */
typedef struct dml_type {
  dml_dtype_t dtype;
  int32_t rank;
  dml_dim_t dims[DML_MAX_RANK];
} dml_type_t;

/* A dense, C-order (row-major, last dim contiguous) tensor in host memory.
 * `data` is lent. */
typedef struct dml_tensor {
  dml_dtype_t dtype;
  int32_t rank;
  int64_t dims[DML_MAX_RANK];
  void *data;
} dml_tensor_t;

/* Product of dims (1 for rank 0). Returns -1 on int64 overflow or a
 * negative dim. */
int64_t dml_dims_numel(const int64_t *dims, int32_t rank);
/* Bytes of a tensor: numel * dtype size; SIZE_MAX on overflow. */
size_t dml_tensor_bytes(const dml_tensor_t *t);

/* Evaluates symbolic `type`'s dims given the run-time value of every symbol
 * (`sym_values`, indexed by symbol). Fails with OUT_OF_RANGE on overflow or
 * a symbol index >= n_syms. */
dml_status_t dml_type_eval_dims(const dml_type_t *type, const int64_t *sym_values,
                                size_t n_syms, int64_t *out_dims);

/* A derived symbol's value: floor((mul * a * b + add) / div), where a is the
 * value of its first source symbol and b that of its second (1 when it has
 * none). One definition of the formula, used by shape inference (bounds,
 * ir/infer.c), the package reader and the runtime (run-time values). It
 * expresses every output extent the ONNX shape rules give from one symbolic
 * input extent S: Conv/pool floor((S + pads - eff_kernel) / stride) + 1
 * (ceil mode: + stride - 1 in the numerator), ConvTranspose
 * stride * (S - 1) + ..., SAME padding ceil(S / stride), Pad and Concat
 * S + k, Slice S - k, Resize by a rational scale, and the product of two
 * symbols (Flatten, Reshape of H*W). Requires mul >= 0, div >= 1; monotone
 * non-decreasing in a and b for a, b >= 0, so its value at the sources'
 * bounds bounds it. Returns 0 on int64 overflow (then *out is unset). */
int dml_sym_derived_eval(int64_t mul, int64_t add, int64_t div, int64_t a, int64_t b,
                         int64_t *out);

/* Attribute kinds (values are stable: stored in .dmlpkg files). */
typedef enum dml_attr_kind {
  DML_ATTR_INT = 1,
  DML_ATTR_FLOAT = 2,
  DML_ATTR_STRING = 3,
  DML_ATTR_INTS = 4,
  DML_ATTR_FLOATS = 5,
  DML_ATTR_TENSOR = 6,
  DML_ATTR_STRINGS = 7,
} dml_attr_kind_t;

/* A named op attribute (ONNX's names and meanings). Storage is lent: the
 * IR's arena or the loaded package owns it. FLOAT values are held as
 * double but ONNX floats are f32, so they round-trip exactly. */
typedef struct dml_attr {
  const char *name;
  dml_attr_kind_t kind;
  int64_t i;                  /* INT */
  double f;                   /* FLOAT */
  const char *s;              /* STRING (NUL-terminated) */
  size_t n;                   /* element count of INTS/FLOATS/STRINGS */
  const int64_t *ints;        /* INTS */
  const double *floats;       /* FLOATS */
  const char *const *strings; /* STRINGS */
  dml_tensor_t tensor;        /* TENSOR (data lent) */
} dml_attr_t;

/* Finds attribute `name`; NULL if absent. */
const dml_attr_t *dml_attr_find(const dml_attr_t *attrs, size_t n, const char *name);
/* Typed getters returning `dflt` when the attribute is absent or of another
 * kind. */
int64_t dml_attr_int(const dml_attr_t *attrs, size_t n, const char *name, int64_t dflt);
double dml_attr_float(const dml_attr_t *attrs, size_t n, const char *name, double dflt);
const char *dml_attr_string(const dml_attr_t *attrs, size_t n, const char *name,
                            const char *dflt);
/* INTS attribute: returns the array and sets *out_n, or NULL (and *out_n = 0)
 * when absent. */
const int64_t *dml_attr_ints(const dml_attr_t *attrs, size_t n, const char *name,
                             size_t *out_n);
const double *dml_attr_floats(const dml_attr_t *attrs, size_t n, const char *name,
                              size_t *out_n);
const char *dml_attr_kind_name(dml_attr_kind_t kind);

/* Formats dims as "[1,3,32,32]" into buf (always NUL-terminated). */
const char *dml_dims_str(const int64_t *dims, int32_t rank, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif /* DML_TYPES_H_ */
