/* c_emit.c — C-like rendering of kernel bodies (c_emit.h). */
#include "c_emit.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dml_sb_printf(dml_sb_t *b, const char *fmt, ...) {
  if (b->oom) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
    va_end(ap);
    if (k < 0) {
      b->oom = 1;
      return;
    }
    if (b->p && b->n + (size_t)k < b->cap) {
      b->n += (size_t)k;
      return;
    }
    size_t cap = b->cap ? b->cap : 4096;
    while (cap <= b->n + (size_t)k) cap *= 2;
    char *p = (char *)realloc(b->p, cap);
    if (!p) {
      b->oom = 1;
      return;
    }
    b->p = p;
    b->cap = cap;
  }
}

static void e_var(dml_sb_t *b, const dml_cdialect_t *d, int32_t v) {
  if (v >= 0 && v < DML_KVAR_FIRST_LOOP)
    dml_sb_printf(b, "%s", d->var[v]);
  else
    dml_sb_printf(b, "i%d", (int)(v - DML_KVAR_FIRST_LOOP));
}

static void e_val(dml_sb_t *b, const dml_cdialect_t *d, const dml_kval_t *v);

static void e_idx(dml_sb_t *b, const dml_cdialect_t *d, const dml_kidx_t *e) {
  switch (e->kind) {
    case DML_KI_VAL: /* uint(v) / ((unsigned)(v)) */
      dml_sb_printf(b, d->ctor_casts ? "%s(" : "((%s)(", d->uint_type);
      e_val(b, d, e->val);
      dml_sb_printf(b, d->ctor_casts ? ")" : "))");
      return;
    case DML_KI_CONST: dml_sb_printf(b, "%lluu", (unsigned long long)e->c); return;
    case DML_KI_VAR: e_var(b, d, e->var); return;
    case DML_KI_SYM:
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
      dml_sb_printf(b, d->sym_fmt, (int)e->var);
#pragma GCC diagnostic pop
      return;
    default: break;
  }
  static const char ops[] = {'+', '*', '/', '%', '-'};
  dml_sb_printf(b, "(");
  e_idx(b, d, e->a);
  dml_sb_printf(b, " %c ", ops[e->kind - DML_KI_ADD]);
  e_idx(b, d, e->b);
  dml_sb_printf(b, ")");
}

static void e_float(dml_sb_t *b, const dml_cdialect_t *d, float c) {
  if (isnan(c)) {
    dml_sb_printf(b, "%s", d->nan_text);
  } else if (isinf(c)) {
    dml_sb_printf(b, "%s", c > 0 ? d->pinf : d->ninf);
  } else {
    char t[40];
    snprintf(t, sizeof t, "%.9g", (double)c);
    if (!strpbrk(t, ".e")) strcat(t, ".0");
    dml_sb_printf(b, "%s%s", t, d->float_suffix);
  }
}

const char *dml_cemit_view(dml_kbuf_t buf, dml_kdtype_t t) {
  static const char *const names[2][DML_KT_COUNT_] = {
      {"arena", "arena_i64", "arena_i32", "arena_u8", "arena_u8", "arena_i8"},
      {"weights", "weights_i64", "weights_i32", "weights_u8", "weights_u8",
       "weights_i8"}};
  return names[buf == DML_KBUF_ARENA ? 0 : 1][(unsigned)t < DML_KT_COUNT_ ? t : 0];
}

/* A constant of dtype t: ic for integers and bool, c for f32. */
static void e_const(dml_sb_t *b, const dml_cdialect_t *d, dml_kdtype_t t, int64_t ic,
                    float c) {
  switch (t) {
    case DML_KT_F32: e_float(b, d, c); return;
    case DML_KT_BOOL: dml_sb_printf(b, ic ? "true" : "false"); return;
    case DML_KT_I32:
    case DML_KT_U8:
    case DML_KT_I8:
      if (ic == INT32_MIN)
        dml_sb_printf(b, "(-2147483647 - 1)");
      else
        dml_sb_printf(b, ic < 0 ? "(%lld)" : "%lld", (long long)ic);
      return;
    default:
      if (ic == INT64_MIN)
        dml_sb_printf(b, "(-9223372036854775807%s - 1%s)", d->i64_suffix, d->i64_suffix);
      else
        dml_sb_printf(b, ic < 0 ? "(%lld%s)" : "%lld%s", (long long)ic, d->i64_suffix);
      return;
  }
}

static void e_cast_open(dml_sb_t *b, const dml_cdialect_t *d, dml_kdtype_t t) {
  if (d->ctor_casts)
    dml_sb_printf(b, "%s(", d->type[t]);
  else
    dml_sb_printf(b, "((%s)(", d->type[t]);
}

static void e_cast_close(dml_sb_t *b, const dml_cdialect_t *d) {
  dml_sb_printf(b, d->ctor_casts ? ")" : "))");
}

/* The typed functions and the arithmetic ones on integer or bool values. */
static void e_typed_fn(dml_sb_t *b, const dml_cdialect_t *d, const dml_kval_t *v) {
  static const char *const infix[] = {" == ", " < ",  " <= ", " > ",
                                      " >= ", " && ", " || ", " != "};
  dml_kdtype_t at = v->a->dtype;
  switch (v->fn) {
    case DML_KF_NOT:
      dml_sb_printf(b, "(!");
      e_val(b, d, v->a);
      dml_sb_printf(b, ")");
      return;
    case DML_KF_CAST:
      if (v->dtype == DML_KT_BOOL) {
        dml_sb_printf(b, "(");
        e_val(b, d, v->a);
        dml_sb_printf(b, " != ");
        e_const(b, d, at, 0, 0.0f);
        dml_sb_printf(b, ")");
      } else if (at == DML_KT_BOOL) {
        dml_sb_printf(b, "(");
        e_val(b, d, v->a);
        dml_sb_printf(b, " ? ");
        e_const(b, d, v->dtype, 1, 1.0f);
        dml_sb_printf(b, " : ");
        e_const(b, d, v->dtype, 0, 0.0f);
        dml_sb_printf(b, ")");
      } else {
        e_cast_open(b, d, v->dtype);
        e_val(b, d, v->a);
        e_cast_close(b, d);
      }
      return;
    case DML_KF_SELECT:
      dml_sb_printf(b, "(");
      e_val(b, d, v->a);
      dml_sb_printf(b, " ? ");
      e_val(b, d, v->b);
      dml_sb_printf(b, " : ");
      e_val(b, d, v->c3);
      dml_sb_printf(b, ")");
      return;
    case DML_KF_EQ:
    case DML_KF_LT:
    case DML_KF_LE:
    case DML_KF_GT:
    case DML_KF_GE:
    case DML_KF_AND:
    case DML_KF_OR:
    case DML_KF_XOR:
      dml_sb_printf(b, "(");
      e_val(b, d, v->a);
      dml_sb_printf(b, "%s", infix[v->fn - DML_KF_EQ]);
      e_val(b, d, v->b);
      dml_sb_printf(b, ")");
      return;
    case DML_KF_NEG:
      dml_sb_printf(b, "(-");
      e_val(b, d, v->a);
      dml_sb_printf(b, ")");
      return;
    case DML_KF_DIV:
      dml_sb_printf(b, "dml_idiv(");
      e_val(b, d, v->a);
      dml_sb_printf(b, ", ");
      e_val(b, d, v->b);
      dml_sb_printf(b, ")");
      return;
    case DML_KF_ADD:
    case DML_KF_SUB:
    case DML_KF_MUL:
      dml_sb_printf(b, "(");
      e_val(b, d, v->a);
      dml_sb_printf(b, " %c ", "+-*/"[v->fn - DML_KF_ADD]);
      e_val(b, d, v->b);
      dml_sb_printf(b, ")");
      return;
    case DML_KF_RELU:
    case DML_KF_MAX:
    case DML_KF_MIN:
      dml_sb_printf(b, "%s", v->fn == DML_KF_MIN ? d->imin : d->imax);
      e_val(b, d, v->a);
      dml_sb_printf(b, ", ");
      if (v->fn == DML_KF_RELU)
        e_const(b, d, at, 0, 0.0f);
      else
        e_val(b, d, v->b);
      dml_sb_printf(b, ")");
      return;
    case DML_KF_ABS:
    case DML_KF_SIGN:
      dml_sb_printf(b, "%s", v->fn == DML_KF_ABS ? d->iabs : d->sign);
      e_val(b, d, v->a);
      dml_sb_printf(b, ")");
      return;
    case DML_KF_IMOD:
    case DML_KF_FMOD:
      dml_sb_printf(b, v->fn == DML_KF_IMOD ? "dml_imod(" : "dml_fmod(");
      e_val(b, d, v->a);
      dml_sb_printf(b, ", ");
      e_val(b, d, v->b);
      dml_sb_printf(b, ")");
      return;
    default:
      /* a float function of a non-f32 value: the scheduler never builds one */
      dml_sb_printf(b, "%s", d->nan_text);
      return;
  }
}

static void e_val(dml_sb_t *b, const dml_cdialect_t *d, const dml_kval_t *v) {
  switch (v->kind) {
    case DML_KV_CONST: e_const(b, d, v->dtype, v->ic, v->c); return;
    case DML_KV_IDX:
      e_cast_open(b, d, v->dtype);
      e_idx(b, d, v->idx);
      e_cast_close(b, d);
      return;
    case DML_KV_LOAD:
      if (v->dtype == DML_KT_BOOL) dml_sb_printf(b, "%s", d->u8_load_pre);
      if (v->dtype == DML_KT_U8 || v->dtype == DML_KT_I8)
        dml_sb_printf(b, "%s", d->int_load_pre);
      dml_sb_printf(b, "%s[", dml_cemit_view(v->buf, v->dtype));
      e_idx(b, d, v->idx);
      dml_sb_printf(b, "]");
      if (v->dtype == DML_KT_BOOL) dml_sb_printf(b, "%s", d->u8_load_post);
      if (v->dtype == DML_KT_U8 || v->dtype == DML_KT_I8) dml_sb_printf(b, ")");
      return;
    case DML_KV_TILE: {
      const dml_kidx_t *x = v->idx;
      int64_t c = 0;
      if (x->kind == DML_KI_ADD && x->b->kind == DML_KI_CONST) {
        c = x->b->c;
        x = x->a;
      }
      if (d->tile_aligned_pre && x->kind == DML_KI_MUL && x->b->kind == DML_KI_CONST &&
          x->b->c % 4 == 0 && x->b->c > 0) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
        dml_sb_printf(b, d->tile_aligned_pre, v->tile);
#pragma GCC diagnostic pop
        e_idx(b, d, x);
        dml_sb_printf(b, "%s%lluu]", d->tile_aligned_mid, (unsigned long long)c);
        return;
      }
    }
      dml_sb_printf(b, "tile%u[", v->tile);
      e_idx(b, d, v->idx);
      dml_sb_printf(b, "]");
      return;
    case DML_KV_REG: dml_sb_printf(b, "r%u", v->reg); return;
    case DML_KV_FN: break;
  }
  if (v->fn > DML_KF_POW || v->dtype != DML_KT_F32 || v->a->dtype != DML_KT_F32) {
    e_typed_fn(b, d, v);
    return;
  }
  dml_sb_printf(b, "%s", d->pre[v->fn]);
  e_val(b, d, v->a);
  if (v->b) {
    dml_sb_printf(b, "%s", d->mid[v->fn]);
    e_val(b, d, v->b);
  }
  dml_sb_printf(b, "%s", d->post[v->fn]);
}

void dml_cemit_regs(dml_sb_t *b, const dml_cdialect_t *d, const dml_kernel_t *k) {
  for (uint32_t r = 0; r < k->n_regs; r++) {
    dml_kdtype_t t = dml_kernel_reg_dtype(k, r);
    dml_sb_printf(b, "  %s r%u = ", d->type[t], r);
    e_const(b, d, t, 0, 0.0f);
    dml_sb_printf(b, ";\n");
  }
}

void dml_cemit_stmts(dml_sb_t *b, const dml_cdialect_t *d, const dml_kstmt_t *s,
                     int depth) {
  for (; s; s = s->next) {
    dml_sb_printf(b, "%*s", 2 * depth, "");
    switch (s->kind) {
      case DML_KS_LET:
      case DML_KS_SET:
        dml_sb_printf(b, "r%u = ", s->reg);
        e_val(b, d, s->val);
        dml_sb_printf(b, ";\n");
        break;
      case DML_KS_STORE:
      case DML_KS_TILE_STORE:
        if (s->kind == DML_KS_STORE)
          dml_sb_printf(b, "%s[", dml_cemit_view(s->buf, s->dtype));
        else
          dml_sb_printf(b, "tile%u[", s->tile);
        e_idx(b, d, s->idx);
        dml_sb_printf(b, "] = ");
        if (s->kind == DML_KS_STORE && s->dtype == DML_KT_BOOL) {
          dml_sb_printf(b, "%s", d->u8_store_pre);
          e_val(b, d, s->val);
          dml_sb_printf(b, "%s", d->u8_store_post);
        } else if (s->kind == DML_KS_STORE &&
                   (s->dtype == DML_KT_U8 || s->dtype == DML_KT_I8)) {
          /* wraps modulo 256, as the CPU's stores of u8 / i8 */
          dml_sb_printf(b, "%s",
                        s->dtype == DML_KT_U8 ? d->store_u8_pre : d->store_i8_pre);
          e_val(b, d, s->val);
          dml_sb_printf(b, ")");
        } else {
          e_val(b, d, s->val);
        }
        dml_sb_printf(b, ";\n");
        break;
      case DML_KS_BARRIER: dml_sb_printf(b, "%s\n", d->barrier); break;
      case DML_KS_FOR:
        dml_sb_printf(b, "for (%s ", d->uint_type);
        e_var(b, d, s->var);
        dml_sb_printf(b, " = 0u; ");
        e_var(b, d, s->var);
        dml_sb_printf(b, " < ");
        e_idx(b, d, s->hi);
        dml_sb_printf(b, "; ");
        e_var(b, d, s->var);
        dml_sb_printf(b, " += %lldu) {\n", (long long)s->step);
        dml_cemit_stmts(b, d, s->body, depth + 1);
        dml_sb_printf(b, "%*s}\n", 2 * depth, "");
        break;
      case DML_KS_IF_LT:
        dml_sb_printf(b, "if (");
        if (s->lo) {
          e_idx(b, d, s->lo);
          dml_sb_printf(b, " <= ");
          e_idx(b, d, s->lhs);
          dml_sb_printf(b, " && ");
        }
        e_idx(b, d, s->lhs);
        dml_sb_printf(b, " < ");
        e_idx(b, d, s->hi);
        dml_sb_printf(b, ") {\n");
        dml_cemit_stmts(b, d, s->body, depth + 1);
        dml_sb_printf(b, "%*s}\n", 2 * depth, "");
        break;
    }
  }
}
