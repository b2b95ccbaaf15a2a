/* kernel_ir.c — the kernel IR's pool, builders and printer (dml_kernel.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dml_kpkg.h"
#include "kernel_internal.h"

struct dml_kpool_block {
  struct dml_kpool_block *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
};

void *dml_kpool_alloc(dml_kpool_t *p, size_t bytes) {
  if (p->failed) return NULL;
  bytes = (bytes + 15) & ~(size_t)15;
  struct dml_kpool_block *b = p->head;
  if (!b || b->cap - b->used < bytes) {
    size_t cap = bytes > 65536 ? bytes : 65536;
    b = (struct dml_kpool_block *)malloc(sizeof *b + cap);
    if (!b) {
      p->failed = 1;
      return NULL;
    }
    b->next = p->head;
    b->used = 0;
    b->cap = cap;
    p->head = b;
  }
  void *r = b->data + b->used;
  b->used += bytes;
  memset(r, 0, bytes);
  return r;
}

void dml_kpool_free(dml_kpool_t *p) {
  struct dml_kpool_block *b = p->head;
  while (b) {
    struct dml_kpool_block *n = b->next;
    free(b);
    b = n;
  }
  p->head = NULL;
}

static dml_kidx_t *ki_new(dml_kpool_t *p, dml_kidx_kind_t k) {
  dml_kidx_t *e = (dml_kidx_t *)dml_kpool_alloc(p, sizeof *e);
  if (e) e->kind = k;
  return e;
}

const dml_kidx_t *dml_ki_const(dml_kpool_t *p, int64_t c) {
  dml_kidx_t *e = ki_new(p, DML_KI_CONST);
  if (e) e->c = c;
  return e;
}

const dml_kidx_t *dml_ki_var(dml_kpool_t *p, int32_t var) {
  dml_kidx_t *e = ki_new(p, DML_KI_VAR);
  if (e) e->var = var;
  return e;
}

const dml_kidx_t *dml_ki_sym(dml_kpool_t *p, int32_t sym) {
  dml_kidx_t *e = ki_new(p, DML_KI_SYM);
  if (e) e->var = sym;
  return e;
}

const dml_kidx_t *dml_ki_val(dml_kpool_t *p, const struct dml_kval *v) {
  if (!v) return NULL;
  dml_kidx_t *e = ki_new(p, DML_KI_VAL);
  if (e) e->val = v;
  return e;
}

static int is_const(const dml_kidx_t *e, int64_t c) {
  return e->kind == DML_KI_CONST && e->c == c;
}

const dml_kidx_t *dml_ki_bin(dml_kpool_t *p, dml_kidx_kind_t k, const dml_kidx_t *a,
                             const dml_kidx_t *b) {
  if (!a || !b) return NULL;
  if (a->kind == DML_KI_CONST && b->kind == DML_KI_CONST) {
    switch (k) {
      case DML_KI_ADD: return dml_ki_const(p, a->c + b->c);
      case DML_KI_MUL: return dml_ki_const(p, a->c * b->c);
      case DML_KI_DIV:
        if (b->c) return dml_ki_const(p, a->c / b->c);
        break;
      case DML_KI_MOD:
        if (b->c) return dml_ki_const(p, a->c % b->c);
        break;
      case DML_KI_SUB:
        if (a->c >= b->c) return dml_ki_const(p, a->c - b->c);
        break;
      default: break;
    }
  }
  switch (k) {
    case DML_KI_ADD:
      if (is_const(a, 0)) return b;
      if (is_const(b, 0)) return a;
      break;
    case DML_KI_MUL:
      if (is_const(a, 0) || is_const(b, 0)) return dml_ki_const(p, 0);
      if (is_const(a, 1)) return b;
      if (is_const(b, 1)) return a;
      break;
    case DML_KI_DIV:
      if (is_const(b, 1)) return a;
      break;
    case DML_KI_MOD:
      if (is_const(b, 1)) return dml_ki_const(p, 0);
      break;
    case DML_KI_SUB:
      if (is_const(b, 0)) return a;
      break;
    default: break;
  }
  dml_kidx_t *e = ki_new(p, k);
  if (e) {
    e->a = a;
    e->b = b;
  }
  return e;
}

const dml_kidx_t *dml_ki_lin(dml_kpool_t *p, dml_klin_t l) {
  if (l.sym < 0 && !l.more) return dml_ki_const(p, l.c0 + l.c);
  const dml_kidx_t *t = dml_ki_const(p, l.c);
  if (l.sym >= 0) t = dml_ki_bin(p, DML_KI_MUL, t, dml_ki_sym(p, l.sym));
  for (int32_t i = 0; i < 32; i++)
    if (l.more >> i & 1u) t = dml_ki_bin(p, DML_KI_MUL, t, dml_ki_sym(p, i));
  return dml_ki_bin(p, DML_KI_ADD, dml_ki_const(p, l.c0), t);
}

static dml_kval_t *kv_new(dml_kpool_t *p, dml_kval_kind_t k) {
  dml_kval_t *v = (dml_kval_t *)dml_kpool_alloc(p, sizeof *v);
  if (v) v->kind = k;
  return v;
}

const dml_kval_t *dml_kv_const(dml_kpool_t *p, float c) {
  dml_kval_t *v = kv_new(p, DML_KV_CONST);
  if (v) v->c = c;
  return v;
}

const dml_kval_t *dml_kv_load(dml_kpool_t *p, dml_kbuf_t buf, const dml_kidx_t *idx) {
  return dml_kv_load_t(p, buf, DML_KT_F32, idx);
}

const dml_kval_t *dml_kv_load_t(dml_kpool_t *p, dml_kbuf_t buf, dml_kdtype_t t,
                                const dml_kidx_t *idx) {
  if (!idx) return NULL;
  dml_kval_t *v = kv_new(p, DML_KV_LOAD);
  if (v) {
    v->buf = buf;
    v->idx = idx;
    v->dtype = t;
  }
  return v;
}

const dml_kval_t *dml_kv_iconst(dml_kpool_t *p, dml_kdtype_t t, int64_t c) {
  if (dml_kdtype_is_float(t)) return dml_kv_fconst(p, t, (float)c);
  dml_kval_t *v = kv_new(p, DML_KV_CONST);
  if (v) {
    v->dtype = t;
    v->ic = t == DML_KT_BOOL  ? c != 0
            : t == DML_KT_I32 ? (int32_t)c
            : t == DML_KT_U8  ? (uint8_t)c
            : t == DML_KT_I8  ? (int8_t)c
            : t == DML_KT_I16 ? (int16_t)c
            : t == DML_KT_U16 ? (uint16_t)c
            : t == DML_KT_U32 ? (int64_t)(uint32_t)c
                              : c;
  }
  return v;
}

const dml_kval_t *dml_kv_fconst(dml_kpool_t *p, dml_kdtype_t t, float c) {
  dml_kval_t *v = kv_new(p, DML_KV_CONST);
  if (v) {
    v->c = c;
    v->dtype = t;
  }
  return v;
}

const dml_kval_t *dml_kv_zero(dml_kpool_t *p, dml_kdtype_t t) {
  return dml_kv_iconst(p, t, 0);
}

const dml_kval_t *dml_kv_one(dml_kpool_t *p, dml_kdtype_t t) {
  return dml_kv_iconst(p, t, 1);
}

const dml_kval_t *dml_kv_reg_t(dml_kpool_t *p, uint32_t reg, dml_kdtype_t t) {
  dml_kval_t *v = kv_new(p, DML_KV_REG);
  if (v) {
    v->reg = reg;
    v->dtype = t;
  }
  return v;
}

const dml_kval_t *dml_kv_idx(dml_kpool_t *p, dml_kdtype_t t, const dml_kidx_t *idx) {
  if (!idx) return NULL;
  dml_kval_t *v = kv_new(p, DML_KV_IDX);
  if (v) {
    v->idx = idx;
    v->dtype = t;
  }
  return v;
}

const dml_kval_t *dml_kv_bits_f32(dml_kpool_t *p, const dml_kidx_t *idx) {
  if (!idx) return NULL;
  dml_kval_t *v = kv_new(p, DML_KV_BITS);
  if (v) {
    v->idx = idx;
    v->dtype = DML_KT_F32;
  }
  return v;
}

const dml_kval_t *dml_kv_ctab(dml_kpool_t *p, uint32_t ctab, dml_kdtype_t t,
                              const dml_kidx_t *idx) {
  if (!idx) return NULL;
  dml_kval_t *v = kv_new(p, DML_KV_CTAB);
  if (v) {
    v->ctab = ctab;
    v->idx = idx;
    v->dtype = t;
  }
  return v;
}

const dml_kval_t *dml_kv_cast(dml_kpool_t *p, dml_kdtype_t t, const dml_kval_t *a) {
  if (!a) return NULL;
  if (a->dtype == t) return a;
  dml_kval_t *v = kv_new(p, DML_KV_FN);
  if (v) {
    v->fn = DML_KF_CAST;
    v->a = a;
    v->dtype = t;
  }
  return v;
}

const dml_kval_t *dml_kv_select(dml_kpool_t *p, const dml_kval_t *cond,
                                const dml_kval_t *a, const dml_kval_t *b) {
  if (!cond || !a || !b) return NULL;
  dml_kval_t *v = kv_new(p, DML_KV_FN);
  if (v) {
    v->fn = DML_KF_SELECT;
    v->a = cond;
    v->b = a;
    v->c3 = b;
    v->dtype = a->dtype;
  }
  return v;
}

const dml_kval_t *dml_kv_philox(dml_kpool_t *p, const dml_kidx_t *idx, uint32_t stream,
                                const dml_kval_t *seed_lo, const dml_kval_t *seed_hi,
                                const dml_kval_t *step_lo, const dml_kval_t *step_hi) {
  if (!idx || !seed_lo || !seed_hi || !step_lo || !step_hi) return NULL;
  dml_kval_t *v = kv_new(p, DML_KV_PHILOX);
  if (v) {
    v->dtype = DML_KT_I32;
    v->idx = idx;
    v->ic = stream;
    v->a = seed_lo;
    v->b = seed_hi;
    v->c3 = step_lo;
    v->d4 = step_hi;
  }
  return v;
}

const dml_kval_t *dml_kv_philox_word(dml_kpool_t *p, const dml_kidx_t *idx,
                                     uint32_t stream, const dml_kval_t *seed_lo,
                                     const dml_kval_t *seed_hi, const dml_kval_t *step_lo,
                                     const dml_kval_t *step_hi) {
  dml_kval_t *v =
      (dml_kval_t *)dml_kv_philox(p, idx, stream, seed_lo, seed_hi, step_lo, step_hi);
  if (v) v->dtype = DML_KT_U32;
  return v;
}

const dml_kval_t *dml_kv_tile(dml_kpool_t *p, uint32_t tile, const dml_kidx_t *idx) {
  return dml_kv_tile_t(p, tile, idx, DML_KT_F32);
}

const dml_kval_t *dml_kv_tile_t(dml_kpool_t *p, uint32_t tile, const dml_kidx_t *idx,
                                dml_kdtype_t t) {
  if (!idx) return NULL;
  dml_kval_t *v = kv_new(p, DML_KV_TILE);
  if (v) {
    v->tile = tile;
    v->idx = idx;
    v->dtype = t;
  }
  return v;
}

const dml_kval_t *dml_kv_reg(dml_kpool_t *p, uint32_t reg) {
  dml_kval_t *v = kv_new(p, DML_KV_REG);
  if (v) v->reg = reg;
  return v;
}

/* 1 when v is a floating constant +-0. */
static int kv_float_zero(const dml_kval_t *v) {
  return v->kind == DML_KV_CONST &&
         (v->dtype == DML_KT_F32 || v->dtype == DML_KT_F16 || v->dtype == DML_KT_BF16 ||
          v->dtype == DML_KT_F64) &&
         v->c == 0.0f;
}

const dml_kval_t *dml_kv_fn(dml_kpool_t *p, dml_kfn_t fn, const dml_kval_t *a,
                            const dml_kval_t *b) {
  if (!a || (dml_kfn_is_binary(fn) && !b)) return NULL;
  if (fn == DML_KF_CAST || fn == DML_KF_SELECT) return NULL;
  if (fn == DML_KF_MUL && (kv_float_zero(a) != kv_float_zero(b))) {
    /* z * x for a constant z = +-0 as x * (x - x), negated for -0: IEEE's
     * result (NaN for an infinite or NaN x, else a zero of sign(x) xor
     * sign(z)) with no literal zero factor, which Mesa's llvmpipe/lavapipe
     * folds to +0 (gallivm's lp_build_mul returns its zero for a zero
     * operand, whatever the float controls: docs/kernels.md). x - x stays
     * NaN for x = +-inf under SignedZeroInfNanPreserve (glsl.c). */
    const dml_kval_t *z = kv_float_zero(a) ? a : b, *x = z == a ? b : a;
    const dml_kval_t *r = dml_kv_fn(p, DML_KF_MUL, x, dml_kv_fn(p, DML_KF_SUB, x, x));
    return r && signbit(z->c) ? dml_kv_fn(p, DML_KF_NEG, r, NULL) : r;
  }
  dml_kval_t *v = kv_new(p, DML_KV_FN);
  if (v) {
    v->fn = fn;
    v->a = a;
    v->b = dml_kfn_is_binary(fn) ? b : NULL;
    switch (fn) {
      case DML_KF_NOT:
      case DML_KF_EQ:
      case DML_KF_LT:
      case DML_KF_LE:
      case DML_KF_GT:
      case DML_KF_GE:
      case DML_KF_AND:
      case DML_KF_OR:
      case DML_KF_XOR: v->dtype = DML_KT_BOOL; break;
      default: v->dtype = a->dtype; break;
    }
  }
  return v;
}

dml_kstmt_t *dml_ks_new(dml_kpool_t *p, dml_kstmt_kind_t kind) {
  dml_kstmt_t *s = (dml_kstmt_t *)dml_kpool_alloc(p, sizeof *s);
  if (s) s->kind = kind;
  return s;
}

void dml_kblock_add(dml_kblock_t *b, dml_kstmt_t *s) {
  if (!s) return;
  if (b->last)
    b->last->next = s;
  else
    b->first = s;
  b->last = s;
}

int dml_kfn_arity(dml_kfn_t f) {
  if (f == DML_KF_SELECT) return 3;
  if ((f >= DML_KF_ADD && f <= DML_KF_POW) || (f >= DML_KF_EQ && f <= DML_KF_IPOW))
    return 2;
  return 1;
}

int dml_kfn_is_binary(dml_kfn_t f) {
  return (unsigned)f < DML_KF_COUNT_ && dml_kfn_arity(f) == 2;
}

const char *dml_kfn_name(dml_kfn_t f) {
  switch (f) {
    case DML_KF_NEG: return "neg";
    case DML_KF_ABS: return "abs";
    case DML_KF_EXP: return "exp";
    case DML_KF_LOG: return "log";
    case DML_KF_SQRT: return "sqrt";
    case DML_KF_TANH: return "tanh";
    case DML_KF_SIGMOID: return "sigmoid";
    case DML_KF_FLOOR: return "floor";
    case DML_KF_CEIL: return "ceil";
    case DML_KF_RECIP: return "recip";
    case DML_KF_SIN: return "sin";
    case DML_KF_COS: return "cos";
    case DML_KF_ADD: return "add";
    case DML_KF_SUB: return "sub";
    case DML_KF_MUL: return "mul";
    case DML_KF_DIV: return "div";
    case DML_KF_MAX: return "max";
    case DML_KF_MIN: return "min";
    case DML_KF_POW: return "pow";
    case DML_KF_NOT: return "not";
    case DML_KF_CAST: return "cast";
    case DML_KF_SIGN: return "sign";
    case DML_KF_EQ: return "eq";
    case DML_KF_LT: return "lt";
    case DML_KF_LE: return "le";
    case DML_KF_GT: return "gt";
    case DML_KF_GE: return "ge";
    case DML_KF_AND: return "and";
    case DML_KF_OR: return "or";
    case DML_KF_XOR: return "xor";
    case DML_KF_IMOD: return "imod";
    case DML_KF_FMOD: return "fmod";
    case DML_KF_IPOW: return "ipow";
    case DML_KF_SELECT: return "select";
    case DML_KF_COUNT_: break;
  }
  return "?";
}

uint32_t dml_kdtype_size(dml_kdtype_t t) {
  switch (t) {
    case DML_KT_I64:
    case DML_KT_F64:
    case DML_KT_U64: return 8;
    case DML_KT_BOOL:
    case DML_KT_U8:
    case DML_KT_I8: return 1;
    case DML_KT_F16:
    case DML_KT_BF16:
    case DML_KT_I16:
    case DML_KT_U16: return 2;
    default: return 4;
  }
}

const char *dml_kdtype_name(dml_kdtype_t t) {
  static const char *const n[DML_KT_COUNT_] = {"f32", "i64", "i32",  "bool", "u8",
                                               "i8",  "f16", "bf16", "f64",  "i16",
                                               "u16", "u32", "u64"};
  return (unsigned)t < DML_KT_COUNT_ ? n[t] : "?";
}

int dml_kdtype_is_float(dml_kdtype_t t) {
  return t == DML_KT_F32 || t == DML_KT_F16 || t == DML_KT_BF16 || t == DML_KT_F64;
}

int dml_kdtype_is_unsigned(dml_kdtype_t t) {
  return t == DML_KT_U8 || t == DML_KT_U16 || t == DML_KT_U32 || t == DML_KT_U64;
}

dml_kdtype_t dml_kdtype_view(dml_kdtype_t t) {
  if (t == DML_KT_U8) return DML_KT_BOOL;
  if (t == DML_KT_F16 || t == DML_KT_BF16) return DML_KT_U16;
  return t;
}

int dml_kdtype_of(dml_dtype_t d, dml_kdtype_t *out) {
  switch (d) {
    case DML_DTYPE_F32: *out = DML_KT_F32; return 1;
    case DML_DTYPE_I64: *out = DML_KT_I64; return 1;
    case DML_DTYPE_I32: *out = DML_KT_I32; return 1;
    case DML_DTYPE_BOOL: *out = DML_KT_BOOL; return 1;
    case DML_DTYPE_U8: *out = DML_KT_U8; return 1;
    case DML_DTYPE_I8: *out = DML_KT_I8; return 1;
    case DML_DTYPE_F16: *out = DML_KT_F16; return 1;
    case DML_DTYPE_BF16: *out = DML_KT_BF16; return 1;
    case DML_DTYPE_F64: *out = DML_KT_F64; return 1;
    case DML_DTYPE_I16: *out = DML_KT_I16; return 1;
    case DML_DTYPE_U16: *out = DML_KT_U16; return 1;
    case DML_DTYPE_U32: *out = DML_KT_U32; return 1;
    case DML_DTYPE_U64: *out = DML_KT_U64; return 1;
    default: return 0;
  }
}

static void views_val(const dml_kval_t *v, uint32_t *m);

/* Loads inside data-driven indices (DML_KI_VAL) count too. */
static void views_idx(const dml_kidx_t *e, uint32_t *m) {
  if (!e) return;
  if (e->kind == DML_KI_VAL) views_val(e->val, m);
  views_idx(e->a, m);
  views_idx(e->b, m);
}

static void views_val(const dml_kval_t *v, uint32_t *m) {
  if (!v) return;
  views_idx(v->idx, m);
  if (v->dtype != DML_KT_F32) *m |= DML_KVIEW_TYPED;
  if (v->dtype == DML_KT_I64 || v->dtype == DML_KT_U64) *m |= DML_KVIEW_I64;
  /* u8 shares bool's byte view, f16 and bf16 u16's */
  if (v->kind == DML_KV_LOAD && v->buf <= DML_KBUF_WEIGHTS)
    *m |= DML_KVIEW(v->buf, dml_kdtype_view(v->dtype));
  if (v->kind == DML_KV_LOAD && v->buf > DML_KBUF_WEIGHTS) /* f32 only */
    *m |= v->buf == DML_KBUF_IN2 ? DML_KVIEW_IN2 : DML_KVIEW_IN3;
  if (v->kind == DML_KV_IDX) *m |= DML_KVIEW_TYPED;
  if (v->kind == DML_KV_PHILOX) {
    *m |= DML_KVIEW_RAND | DML_KVIEW_TYPED;
    views_val(v->a, m);
    views_val(v->b, m);
    views_val(v->c3, m);
    views_val(v->d4, m);
  }
  if (v->kind == DML_KV_FN) {
    if (v->fn > DML_KF_POW) *m |= DML_KVIEW_TYPED;
    if (v->fn == DML_KF_SIN || v->fn == DML_KF_COS) *m |= DML_KVIEW_TRIG;
    views_val(v->a, m);
    views_val(v->b, m);
    views_val(v->c3, m);
  }
}

static void views_stmts(const dml_kstmt_t *s, uint32_t *m) {
  for (; s; s = s->next) {
    views_val(s->val, m);
    views_idx(s->idx, m);
    views_idx(s->lhs, m);
    views_idx(s->lo, m);
    views_idx(s->hi, m);
    if (s->kind == DML_KS_STORE) *m |= DML_KVIEW(s->buf, dml_kdtype_view(s->dtype));
    if (s->kind == DML_KS_STORE && s->dtype != DML_KT_F32) *m |= DML_KVIEW_TYPED;
    views_stmts(s->body, m);
  }
}

uint32_t dml_kernel_views(const dml_kernel_t *k) {
  uint32_t m = 0;
  views_stmts(k->body, &m);
  return m;
}

static void dtypes_val(const dml_kval_t *v, uint32_t *m);

static void dtypes_idx(const dml_kidx_t *e, uint32_t *m) {
  if (!e) return;
  if (e->kind == DML_KI_VAL) dtypes_val(e->val, m);
  dtypes_idx(e->a, m);
  dtypes_idx(e->b, m);
}

static void dtypes_val(const dml_kval_t *v, uint32_t *m) {
  if (!v) return;
  *m |= 1u << v->dtype;
  dtypes_idx(v->idx, m);
  dtypes_val(v->a, m);
  dtypes_val(v->b, m);
  dtypes_val(v->c3, m);
  dtypes_val(v->d4, m);
}

static void dtypes_stmts(const dml_kstmt_t *s, uint32_t *m) {
  for (; s; s = s->next) {
    dtypes_val(s->val, m);
    dtypes_idx(s->idx, m);
    dtypes_idx(s->lhs, m);
    dtypes_idx(s->lo, m);
    dtypes_idx(s->hi, m);
    if (s->kind == DML_KS_STORE) *m |= 1u << s->dtype;
    dtypes_stmts(s->body, m);
  }
}

uint32_t dml_kernel_dtypes(const dml_kernel_t *k) {
  uint32_t m = 0;
  dtypes_stmts(k->body, &m);
  return m;
}

static int reg_dtype_in(const dml_kstmt_t *s, uint32_t reg, dml_kdtype_t *t) {
  for (; s; s = s->next) {
    if ((s->kind == DML_KS_LET || s->kind == DML_KS_SET) && s->reg == reg && s->val) {
      *t = s->val->dtype;
      return 1;
    }
    if (reg_dtype_in(s->body, reg, t)) return 1;
  }
  return 0;
}

dml_kdtype_t dml_kernel_reg_dtype(const dml_kernel_t *k, uint32_t reg) {
  dml_kdtype_t t = DML_KT_F32;
  reg_dtype_in(k->body, reg, &t);
  return t;
}

const char *dml_kernel_kind_name(dml_kernel_kind_t k) {
  switch (k) {
    case DML_KK_ELEMENTWISE: return "elementwise";
    case DML_KK_GEMM: return "gemm";
    case DML_KK_REDUCE: return "reduce";
    case DML_KK_SOFTMAX: return "softmax";
    case DML_KK_CONV: return "conv";
    case DML_KK_POOL: return "pool";
    case DML_KK_MOVE: return "move";
    case DML_KK_NORM: return "norm";
    case DML_KK_HOST: return "host";
  }
  return "?";
}

int64_t dml_klin_eval(dml_klin_t l, const int64_t *sym, uint32_t n) {
  dml_kpkg_lin_t k = {l.c0, l.c, l.sym, l.more};
  return dml_kpkg_lin_eval(k, sym, n);
}

/* ---- printer ---- */

static void print_var(int32_t v, FILE *f) {
  static const char *const b[] = {"gid.x", "gid.y", "lid.x", "lid.y", "wg.x", "wg.y"};
  if (v >= 0 && v < DML_KVAR_FIRST_LOOP)
    fputs(b[v], f);
  else
    fprintf(f, "i%d", (int)(v - DML_KVAR_FIRST_LOOP));
}

static void print_val(const dml_kval_t *v, const dml_pkg_graph_t *g, FILE *f);

static void print_idx(const dml_kidx_t *e, const dml_pkg_graph_t *g, FILE *f) {
  switch (e->kind) {
    case DML_KI_VAL:
      fputs("index(", f);
      print_val(e->val, g, f);
      fputc(')', f);
      return;
    case DML_KI_CONST: fprintf(f, "%lld", (long long)e->c); return;
    case DML_KI_VAR: print_var(e->var, f); return;
    case DML_KI_SYM:
      if (g && (uint32_t)e->var < g->n_symbols)
        fprintf(f, "$%s", g->symbols[e->var].name);
      else
        fprintf(f, "$%d", (int)e->var);
      return;
    default: break;
  }
  static const char ops[] = {'+', '*', '/', '%', '-'};
  fputc('(', f);
  print_idx(e->a, g, f);
  fprintf(f, " %c ", ops[e->kind - DML_KI_ADD]);
  print_idx(e->b, g, f);
  fputc(')', f);
}

/* "arena[", or "arena:i64[" for a view of another dtype than f32. */
static void print_view(dml_kbuf_t buf, dml_kdtype_t t, FILE *f) {
  static const char *const names[4] = {"arena", "weights", "in2", "in3"};
  fputs(names[(unsigned)buf < 4 ? buf : 1], f);
  if (t != DML_KT_F32) fprintf(f, ":%s", dml_kdtype_name(t));
  fputc('[', f);
}

static void print_val(const dml_kval_t *v, const dml_pkg_graph_t *g, FILE *f) {
  switch (v->kind) {
    case DML_KV_CONST:
      if (v->dtype == DML_KT_BOOL)
        fputs(v->ic ? "true" : "false", f);
      else if (dml_kdtype_is_float(v->dtype) && v->dtype != DML_KT_F32)
        fprintf(f, "%.9g:%s", (double)v->c, dml_kdtype_name(v->dtype));
      else if (dml_kdtype_is_unsigned(v->dtype))
        fprintf(f, "%llu:%s", (unsigned long long)v->ic, dml_kdtype_name(v->dtype));
      else if (v->dtype != DML_KT_F32)
        fprintf(f, "%lld:%s", (long long)v->ic, dml_kdtype_name(v->dtype));
      else
        fprintf(f, "%.9g", (double)v->c);
      return;
    case DML_KV_IDX:
      fprintf(f, "%s(", dml_kdtype_name(v->dtype));
      print_idx(v->idx, g, f);
      fputc(')', f);
      return;
    case DML_KV_LOAD:
      print_view(v->buf, v->dtype, f);
      print_idx(v->idx, g, f);
      fputc(']', f);
      return;
    case DML_KV_TILE:
      fprintf(f, "tile%u[", v->tile);
      print_idx(v->idx, g, f);
      fputc(']', f);
      return;
    case DML_KV_BITS:
      fputs("bits_f32(", f);
      print_idx(v->idx, g, f);
      fputc(')', f);
      return;
    case DML_KV_CTAB:
      fprintf(f, "ctab%u[", v->ctab);
      print_idx(v->idx, g, f);
      fputc(']', f);
      return;
    case DML_KV_REG: fprintf(f, "r%u", v->reg); return;
    case DML_KV_PHILOX:
      fprintf(f, "philox%s(stream %lld, ", v->dtype == DML_KT_U32 ? "32" : "24",
              (long long)v->ic);
      print_idx(v->idx, g, f);
      const dml_kval_t *w[4] = {v->a, v->b, v->c3, v->d4};
      for (int k = 0; k < 4; k++) {
        fputs(", ", f);
        print_val(w[k], g, f);
      }
      fputc(')', f);
      return;
    case DML_KV_FN:
      if (v->fn == DML_KF_CAST)
        fprintf(f, "cast<%s>(", dml_kdtype_name(v->dtype));
      else
        fprintf(f, "%s(", dml_kfn_name(v->fn));
      print_val(v->a, g, f);
      if (v->b) {
        fputs(", ", f);
        print_val(v->b, g, f);
      }
      if (v->c3) {
        fputs(", ", f);
        print_val(v->c3, g, f);
      }
      fputc(')', f);
      return;
  }
}

static void print_stmts(const dml_kstmt_t *s, const dml_pkg_graph_t *g, int depth,
                        FILE *f) {
  for (; s; s = s->next) {
    fprintf(f, "%*s", 2 * depth, "");
    switch (s->kind) {
      case DML_KS_LET:
      case DML_KS_SET:
        fprintf(f, "%sr%u", s->kind == DML_KS_LET ? "let " : "", s->reg);
        if (s->kind == DML_KS_LET && s->val && s->val->dtype != DML_KT_F32)
          fprintf(f, ":%s", dml_kdtype_name(s->val->dtype));
        fputs(" = ", f);
        print_val(s->val, g, f);
        fputc('\n', f);
        break;
      case DML_KS_STORE:
      case DML_KS_TILE_STORE:
        if (s->kind == DML_KS_STORE)
          print_view(s->buf, s->dtype, f);
        else
          fprintf(f, "tile%u[", s->tile);
        print_idx(s->idx, g, f);
        fputs("] = ", f);
        print_val(s->val, g, f);
        fputc('\n', f);
        break;
      case DML_KS_BARRIER: fputs("barrier\n", f); break;
      case DML_KS_FOR:
        fputs("for ", f);
        print_var(s->var, f);
        fputs(" < ", f);
        print_idx(s->hi, g, f);
        if (s->step != 1) fprintf(f, " step %lld", (long long)s->step);
        if (s->unroll > 0) fprintf(f, " unroll %d", (int)s->unroll);
        fputs(" {\n", f);
        print_stmts(s->body, g, depth + 1, f);
        fprintf(f, "%*s}\n", 2 * depth, "");
        break;
      case DML_KS_IF_LT:
        fputs("if ", f);
        if (s->lo) {
          print_idx(s->lo, g, f);
          fputs(" <= ", f);
        }
        print_idx(s->lhs, g, f);
        fputs(" < ", f);
        print_idx(s->hi, g, f);
        fputs(" {\n", f);
        print_stmts(s->body, g, depth + 1, f);
        fprintf(f, "%*s}\n", 2 * depth, "");
        break;
    }
  }
}

static void print_sym(int32_t sym, const dml_pkg_graph_t *g, FILE *f) {
  if (g && (uint32_t)sym < g->n_symbols)
    fprintf(f, "*%s", g->symbols[sym].name);
  else
    fprintf(f, "*$%d", (int)sym);
}

static void print_lin(dml_klin_t l, const dml_pkg_graph_t *g, FILE *f) {
  int symbolic = l.sym >= 0 || l.more;
  if (l.c0 && symbolic) fprintf(f, "%lld+", (long long)l.c0);
  if (!symbolic) {
    fprintf(f, "%lld", (long long)(l.c + l.c0));
    return;
  }
  fprintf(f, "%lld", (long long)l.c);
  if (l.sym >= 0) print_sym(l.sym, g, f);
  for (int32_t i = 0; i < 32; i++)
    if (l.more >> i & 1u) print_sym(i, g, f);
}

void dml_kplan_print(const dml_kplan_t *p, const dml_pkg_graph_t *g, FILE *f) {
  const dml_pkg_function_t *fn =
      g && p->function < g->n_functions ? &g->functions[p->function] : NULL;
  fprintf(f, "function %s: %u kernels\n", fn ? fn->name : "?", p->n_kernels);
  for (uint32_t k = 0; k < p->n_kernels; k++) {
    const dml_kernel_t *K = &p->kernels[k];
    fprintf(f, "kernel %s (%s) items=(", K->name, dml_kernel_kind_name(K->kind));
    for (int d = 0; d < 3; d++) {
      if (d) fputc(',', f);
      print_lin(K->items[d], g, f);
    }
    fprintf(f, ") local=(%u,%u,%u)", K->local[0], K->local[1], K->local[2]);
    for (uint32_t t = 0; t < K->n_tiles; t++)
      fprintf(f, " tile%u=%s[%u]", t, dml_kdtype_name(K->tile_dtype[t]),
              K->tile_elems[t]);
    for (uint32_t t = 0; t < K->n_ctabs; t++) /* n 0: placed in the weights */
      if (K->ctabs[t].n)
        fprintf(f, " ctab%u=%s[%u]", t, dml_kdtype_name(K->ctabs[t].dtype),
                K->ctabs[t].n);
    fputs("\n  nodes:", f);
    for (uint32_t i = 0; i < K->n_nodes; i++) {
      const dml_pkg_node_t *n = fn ? &fn->nodes[K->nodes[i]] : NULL;
      fprintf(f, " %u:%s", K->nodes[i], n ? n->op_name : "?");
      if (n && n->name && *n->name) fprintf(f, "(%s)", n->name);
    }
    fputs("\n  flops=", f);
    print_lin(K->flops, g, f);
    fputs(" bytes=", f);
    print_lin(K->bytes, g, f);
    fputc('\n', f);
    print_stmts(K->body, g, 1, f);
  }
}
