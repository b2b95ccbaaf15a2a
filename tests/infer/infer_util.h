/*
 * infer_util.h — small module builders for the shape-inference tests.
 */
#ifndef DML_TEST_INFER_UTIL_H_
#define DML_TEST_INFER_UTIL_H_

#include <string.h>

#include "dml_ir.h"
#include "dml_ir_infer.h"
#include "dml_passes.h"
#include "dml_test.h"

/* A module with symbol `batch` <= 64 (index 0) and function @forward. */
typedef struct tmod {
  dml_ir_module_t *m;
  dml_ir_function_t *f;
  int32_t batch;
} tmod_t;

static inline void tm_init(tmod_t *t) {
  memset(t, 0, sizeof(*t));
  CHECK_OK(dml_ir_module_create(&t->m));
  CHECK_OK(dml_ir_module_add_symbol(t->m, "batch", 64, &t->batch));
  CHECK_OK(dml_ir_function_create(t->m, "forward", &t->f));
}
static inline void tm_free(tmod_t *t) {
  dml_ir_module_release(t->m);
}

/* Parses a type spec like "f32[batch,3,4]", "i64[]", "f32[2*batch,5]". */
static inline dml_type_t tty(tmod_t *t, const char *spec) {
  dml_type_t ty;
  memset(&ty, 0, sizeof(ty));
  const char *br = strchr(spec, '[');
  ty.dtype = dml_dtype_from_name(spec, (size_t)(br - spec));
  ty.rank = 0;
  const char *p = br + 1;
  while (*p && *p != ']') {
    int64_t v = 1;
    int32_t sym = -1;
    if (*p >= '0' && *p <= '9') {
      v = strtoll(p, (char **)&p, 10);
      if (*p == '*') p++;
    }
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) {
      const char *s = p;
      while (*p && *p != ',' && *p != ']') p++;
      char name[64];
      snprintf(name, sizeof(name), "%.*s", (int)(p - s), s);
      sym = dml_ir_module_find_symbol(t->m, name);
    }
    ty.dims[ty.rank].value = v;
    ty.dims[ty.rank].sym = sym;
    ty.rank++;
    if (*p == ',') p++;
  }
  return ty;
}

static inline dml_ir_value_t *targ(tmod_t *t, const char *name, const char *spec) {
  dml_type_t ty = tty(t, spec);
  dml_ir_value_t *v = NULL;
  CHECK_OK(dml_ir_function_add_arg(t->f, name, &ty, &v));
  return v;
}

/* A weight global without data. */
static inline dml_ir_value_t *tw(tmod_t *t, const char *name, const char *spec) {
  dml_type_t ty = tty(t, spec);
  dml_ir_value_t *v = NULL;
  CHECK_OK(dml_ir_module_add_global(t->m, name, &ty, NULL, 0, DML_IR_GLOBAL_PARAM, &v));
  return v;
}

/* A constant i64 global of shape [n] (or [] when scalar). */
static inline dml_ir_value_t *ti64(tmod_t *t, const int64_t *vals, size_t n, int scalar) {
  int64_t dims[1] = {(int64_t)n};
  dml_type_t ty = dml_type_static(DML_DTYPE_I64, scalar ? 0 : 1, dims);
  dml_ir_value_t *v = NULL;
  CHECK_OK(dml_ir_module_add_constant(t->m, "c", &ty, vals, n * 8, &v));
  return v;
}
static inline dml_ir_value_t *tf32(tmod_t *t, const float *vals, size_t n) {
  int64_t dims[1] = {(int64_t)n};
  dml_type_t ty = dml_type_static(DML_DTYPE_F32, 1, dims);
  dml_ir_value_t *v = NULL;
  CHECK_OK(dml_ir_module_add_constant(t->m, "f", &ty, vals, n * 4, &v));
  return v;
}

static inline dml_ir_node_t *tnode(tmod_t *t, dml_op_t op, const char *name, uint32_t nin,
                                   dml_ir_value_t *const *ins, uint32_t nout) {
  dml_ir_node_t *n = NULL;
  CHECK_OK(dml_ir_node_create(t->f, op, name, nin, ins, nout, NULL, &n));
  return n;
}

/* Type of `v` as IR text. */
static inline const char *tstr(tmod_t *t, const dml_ir_value_t *v) {
  static char buf[8][256];
  static int k = 0;
  k = (k + 1) % 8;
  return dml_ir_type_str(t->m, &v->type, buf[k], sizeof(buf[k]));
}

/* Infers node `n` and checks output `o`'s type text. */
#define CHECK_TYPE(t, v, text)                                                   \
  do {                                                                           \
    const char *got_ = tstr((t), (v));                                           \
    if (strcmp(got_, (text)) != 0) {                                             \
      fprintf(stderr, "%s:%d: type %s, expected %s\n", __FILE__, __LINE__, got_, \
              (text));                                                           \
      dml_test_checks_failed_++;                                                 \
    }                                                                            \
  } while (0)

#define INFER_OK(t, n) CHECK_OK(dml_ir_infer_node((t)->m, (n)))

#endif /* DML_TEST_INFER_UTIL_H_ */
