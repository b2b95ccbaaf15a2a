/* schedule_random.c — the random values of the scheduler's kernels
 * (Dropout in training mode; dml_kernel.h DML_KV_PHILOX): the stream of a
 * node as runtime/cpu/cpu_random.c draws it (runtime/base/dml_philox.h),
 * with the run's seed and step read from the random-state slot past the
 * function's planned arena, which the GPU backends fill before every run. */
#include <math.h>

#include "dml_philox.h"
#include "kernel_internal.h"

/* The node's `seed` attribute as cpu_random.c reads it (an int, or a float
 * truncated to int64); 0 when it has none (the session seed is used). */
static int node_seed(const dml_pkg_node_t *n, uint64_t *out) {
  const dml_attr_t *a = dml_attr_find(n->attrs, n->n_attrs, "seed");
  if (a && a->kind == DML_ATTR_INT) {
    *out = (uint64_t)a->i;
    return 1;
  }
  if (a && a->kind == DML_ATTR_FLOAT && isfinite(a->f) && fabs(a->f) < 9.2e18) {
    *out = (uint64_t)(int64_t)a->f;
    return 1;
  }
  return 0;
}

/* The i32 constant holding the bits of u32 word w. */
static const dml_kval_t *word_const(dml_kpool_t *p, uint32_t w) {
  return dml_kv_iconst(p, DML_KT_I32, (int64_t)(int32_t)w);
}

/* Word k of the random-state slot (an i32 load of the arena). */
static const dml_kval_t *slot_word(dml_kpool_t *p, const dml_pkg_function_t *fn,
                                   uint32_t k) {
  uint64_t at = dml_philox_slot_offset(fn->arena_bytes) / 4 + k;
  return dml_kv_load_t(p, DML_KBUF_ARENA, DML_KT_I32, dml_ki_const(p, (int64_t)at));
}

const dml_kval_t *dml_ksched_philox24(dml_kpool_t *p, const dml_pkg_function_t *fn,
                                      uint32_t node, const dml_kidx_t *i) {
  const dml_pkg_node_t *n = &fn->nodes[node];
  uint64_t seed = 0;
  int own = node_seed(n, &seed);
  const dml_kval_t *s0 = own ? word_const(p, (uint32_t)seed) : slot_word(p, fn, 0);
  const dml_kval_t *s1 =
      own ? word_const(p, (uint32_t)(seed >> 32)) : slot_word(p, fn, 1);
  return dml_kv_philox(p, i, node, s0, s1, slot_word(p, fn, 2), slot_word(p, fn, 3));
}

int64_t dml_ksched_u24_threshold(double t) {
  if (!(t > 0.0)) return 0;
  if (t >= 1.0) return 1 << 24;
  return (int64_t)ceil(t * 16777216.0); /* exact: t * 2^24 is a double */
}
