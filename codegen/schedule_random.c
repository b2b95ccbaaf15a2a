/* schedule_random.c — the random values of the scheduler's kernels
 * (Dropout in training mode, RandomUniform(Like), RandomNormal(Like),
 * Bernoulli; dml_kernel.h DML_KV_PHILOX): the stream of a node as
 * runtime/cpu/cpu_random.c draws it (runtime/base/dml_philox.h), with the
 * run's seed and step read from the random-state slot past the function's
 * planned arena, which the GPU backends fill before every run. */
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

/* The whole word of element i of the node's stream (u32). */
static const dml_kval_t *philox_word(dml_kpool_t *p, const dml_pkg_function_t *fn,
                                     uint32_t node, const dml_kidx_t *i) {
  const dml_kval_t *b = dml_ksched_philox24(p, fn, node, i);
  return b ? dml_kv_philox_word(p, b->idx, (uint32_t)b->ic, b->a, b->b, b->c3, b->d4)
           : NULL;
}

/* The 53-bit uniform of element i in the 64-bit layout (dml_philox.h:
 * words 2 (i % 2), 2 (i % 2) + 1 of block i / 2, i.e. the 32-bit layout's
 * elements 2i and 2i + 1, low word first): u = (w64 >> 11) 2^-53 =
 * (hi 2^21 + lo / 2^11) 2^-53, exact in f64. */
static const dml_kval_t *u53(dml_kpool_t *p, const dml_pkg_function_t *fn, uint32_t node,
                             const dml_kidx_t *i) {
  const dml_kidx_t *i2 = dml_ki_bin(p, DML_KI_MUL, i, dml_ki_const(p, 2));
  const dml_kval_t *lo = philox_word(p, fn, node, i2);
  const dml_kval_t *hi =
      philox_word(p, fn, node, dml_ki_bin(p, DML_KI_ADD, i2, dml_ki_const(p, 1)));
  const dml_kval_t *lo11 =
      dml_kv_fn(p, DML_KF_DIV, lo, dml_kv_iconst(p, DML_KT_U32, 2048));
  const dml_kval_t *w = dml_kv_fn(p, DML_KF_ADD,
                                  dml_kv_fn(p, DML_KF_MUL, dml_kv_cast(p, DML_KT_F64, hi),
                                            dml_kv_fconst(p, DML_KT_F64, 2097152.0f)),
                                  dml_kv_cast(p, DML_KT_F64, lo11));
  /* 2^-53 as 2^-12 four times and 2^-5: constants whose decimal text is
   * exact (glslang keeps a literal's decimal value for a double, so
   * 1.11022302e-16 would not be 2^-53) */
  for (int k = 0; k < 4; k++)
    w = dml_kv_fn(p, DML_KF_MUL, w, dml_kv_fconst(p, DML_KT_F64, 0.000244140625f));
  return dml_kv_fn(p, DML_KF_MUL, w, dml_kv_fconst(p, DML_KT_F64, 0.03125f));
}

int64_t dml_ksched_u24_threshold(double t) {
  if (!(t > 0.0)) return 0;
  if (t >= 1.0) return 1 << 24;
  return (int64_t)ceil(t * 16777216.0); /* exact: t * 2^24 is a double */
}

/* ---- the random ops (one element per invocation) ---- */

static const dml_pkg_value_t *value_of(const dml_pkg_function_t *fn, uint32_t v) {
  return v == DML_PKG_NO_VALUE || v >= fn->n_values ? NULL : &fn->values[v];
}

/* u = bits * 2^-24 as f32 (exact: bits < 2^24). */
static const dml_kval_t *u24(dml_kpool_t *p, const dml_kval_t *bits) {
  return dml_kv_fn(p, DML_KF_MUL, dml_kv_cast(p, DML_KT_F32, bits),
                   dml_kv_const(p, 1.0f / 16777216.0f));
}

int dml_ksched_random_op(dml_op_t op) {
  return op == DML_OP_RANDOM_UNIFORM || op == DML_OP_RANDOM_UNIFORM_LIKE ||
         op == DML_OP_RANDOM_NORMAL || op == DML_OP_RANDOM_NORMAL_LIKE ||
         op == DML_OP_BERNOULLI;
}

const char *dml_ksched_random_reject(const dml_pkg_function_t *fn, uint32_t node) {
  const dml_pkg_node_t *n = &fn->nodes[node];
  const dml_pkg_value_t *y = n->n_outputs ? value_of(fn, n->outputs[0]) : NULL;
  if (!y) return "absent output";
  dml_kdtype_t t;
  if (!dml_kdtype_of(y->type.dtype, &t) || y->offset % dml_kdtype_size(t))
    return "an output dtype kernels do not hold, or misaligned";
  if (n->op == DML_OP_RANDOM_UNIFORM || n->op == DML_OP_RANDOM_UNIFORM_LIKE) {
    if (y->type.dtype != DML_DTYPE_F32 && y->type.dtype != DML_DTYPE_F64)
      return "only f32 and f64 outputs are emitted";
    return NULL;
  }
  if (n->op != DML_OP_BERNOULLI) {
    if (y->type.dtype != DML_DTYPE_F32) return "only f32 outputs are emitted";
    return NULL;
  }
  const dml_pkg_value_t *x = n->n_inputs ? value_of(fn, n->inputs[0]) : NULL;
  if (!x) return "absent input";
  uint32_t xs = x->type.dtype == DML_DTYPE_F64 ? 8 : 4;
  if ((x->type.dtype != DML_DTYPE_F32 && x->type.dtype != DML_DTYPE_F64) ||
      x->offset % xs)
    return "only f32 and f64 (aligned) probabilities are emitted";
  /* element i reads x[i] and writes y[i]: in place only at the same offset
   * with elements of one size */
  if (x->storage != DML_PKG_STORAGE_CONST && x->offset < y->offset + y->bytes &&
      y->offset < x->offset + x->bytes &&
      (x->offset != y->offset || dml_kdtype_size(t) != xs))
    return "its result overlaps its input in the memory plan";
  return NULL;
}

const dml_kval_t *dml_ksched_random_value(dml_kpool_t *p, const dml_pkg_function_t *fn,
                                          uint32_t node, const dml_kidx_t *i) {
  const dml_pkg_node_t *n = &fn->nodes[node];
  const dml_pkg_value_t *y = value_of(fn, n->outputs[0]);
  switch (n->op) {
    case DML_OP_RANDOM_UNIFORM:
    case DML_OP_RANDOM_UNIFORM_LIKE: {
      /* y = low + u (high - low) (the CPU: in double, then rounded); f64:
       * the 53-bit uniform, in f64 */
      float lo = (float)dml_attr_float(n->attrs, n->n_attrs, "low", 0.0);
      float hi = (float)dml_attr_float(n->attrs, n->n_attrs, "high", 1.0);
      if (y->type.dtype == DML_DTYPE_F64)
        return dml_kv_fn(
            p, DML_KF_ADD, dml_kv_fconst(p, DML_KT_F64, lo),
            dml_kv_fn(p, DML_KF_MUL, u53(p, fn, node, i),
                      dml_kv_fn(p, DML_KF_SUB, dml_kv_fconst(p, DML_KT_F64, hi),
                                dml_kv_fconst(p, DML_KT_F64, lo))));
      const dml_kval_t *u = u24(p, dml_ksched_philox24(p, fn, node, i));
      return dml_kv_fn(p, DML_KF_ADD, dml_kv_const(p, lo),
                       dml_kv_fn(p, DML_KF_MUL, u, dml_kv_const(p, hi - lo)));
    }
    case DML_OP_RANDOM_NORMAL:
    case DML_OP_RANDOM_NORMAL_LIKE: {
      /* Box-Muller on the words 2k, 2k+1 of the element's block (k = i % 4
       * / 2): u1 = 1 - bits(2k) 2^-24 in (0, 1], u2 = bits(2k+1) 2^-24;
       * z = sqrt(-2 ln u1) (cos 2 pi u2 for even i, sin for odd) */
      float mean = (float)dml_attr_float(n->attrs, n->n_attrs, "mean", 0.0);
      float sc = (float)dml_attr_float(n->attrs, n->n_attrs, "scale", 1.0);
      const dml_kidx_t *i0 =
          dml_ki_bin(p, DML_KI_MUL, dml_ki_bin(p, DML_KI_DIV, i, dml_ki_const(p, 2)),
                     dml_ki_const(p, 2));
      const dml_kidx_t *i1 = dml_ki_bin(p, DML_KI_ADD, i0, dml_ki_const(p, 1));
      const dml_kval_t *u1 = dml_kv_fn(p, DML_KF_SUB, dml_kv_const(p, 1.0f),
                                       u24(p, dml_ksched_philox24(p, fn, node, i0)));
      const dml_kval_t *a = dml_kv_fn(p, DML_KF_MUL, dml_kv_const(p, 6.28318530718f),
                                      u24(p, dml_ksched_philox24(p, fn, node, i1)));
      const dml_kval_t *r = dml_kv_fn(p, DML_KF_SQRT,
                                      dml_kv_fn(p, DML_KF_MUL, dml_kv_const(p, -2.0f),
                                                dml_kv_fn(p, DML_KF_LOG, u1, NULL)),
                                      NULL);
      const dml_kval_t *odd = dml_kv_fn(
          p, DML_KF_EQ,
          dml_kv_idx(p, DML_KT_I32, dml_ki_bin(p, DML_KI_MOD, i, dml_ki_const(p, 2))),
          dml_kv_iconst(p, DML_KT_I32, 1));
      const dml_kval_t *z =
          dml_kv_fn(p, DML_KF_MUL, r,
                    dml_kv_select(p, odd, dml_kv_fn(p, DML_KF_SIN, a, NULL),
                                  dml_kv_fn(p, DML_KF_COS, a, NULL)));
      return dml_kv_fn(p, DML_KF_ADD, dml_kv_const(p, mean),
                       dml_kv_fn(p, DML_KF_MUL, dml_kv_const(p, sc), z));
    }
    case DML_OP_BERNOULLI: {
      /* y = u < p, as y's dtype: exact (f32 p: u has 24 bits; f64 p: the
       * 53-bit uniform, in f64, as the CPU draws it) */
      const dml_pkg_value_t *x = value_of(fn, n->inputs[0]);
      int f64 = x->type.dtype == DML_DTYPE_F64;
      dml_kbuf_t buf =
          x->storage == DML_PKG_STORAGE_CONST ? DML_KBUF_WEIGHTS : DML_KBUF_ARENA;
      const dml_kval_t *pr = dml_kv_load_t(
          p, buf, f64 ? DML_KT_F64 : DML_KT_F32,
          dml_ki_bin(p, DML_KI_ADD, dml_ki_const(p, (int64_t)(x->offset / (f64 ? 8 : 4))),
                     i));
      const dml_kval_t *u =
          f64 ? u53(p, fn, node, i) : u24(p, dml_ksched_philox24(p, fn, node, i));
      const dml_kval_t *one = dml_kv_fn(p, DML_KF_LT, u, pr);
      dml_kdtype_t t = DML_KT_F32;
      dml_kdtype_of(y->type.dtype, &t);
      return dml_kv_cast(p, t, one);
    }
    default: return NULL;
  }
}
