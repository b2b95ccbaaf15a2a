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

/* A float literal; `digits` significant digits (9 read back as the same
 * float; 17 also as the same double, where a compiler folds a literal
 * converted to double at double precision, as glslang does). */
static void e_float_digits(dml_sb_t *b, const dml_cdialect_t *d, float c, int digits) {
  if (isnan(c)) {
    dml_sb_printf(b, "%s", d->nan_text);
  } else if (isinf(c)) {
    dml_sb_printf(b, "%s", c > 0 ? d->pinf : d->ninf);
  } else {
    char t[40];
    snprintf(t, sizeof t, "%.*g", digits, (double)c);
    if (!strpbrk(t, ".e")) strcat(t, ".0");
    dml_sb_printf(b, "%s%s", t, d->float_suffix);
  }
}

static void e_float(dml_sb_t *b, const dml_cdialect_t *d, float c) {
  e_float_digits(b, d, c, 9);
}

const char dml_cemit_half_helpers[] =
    "#ifdef DML_H2F_NATIVE\n"
    "/* the hardware's conversions (round to nearest even, subnormals kept),\n"
    " * NaN as the software form below gives it: sign, quiet bit, payload */\n"
    "DML_FN DML_U dml_f2h(float f) {\n"
    "  return f != f ? ((DML_F2U(f) >> 16) & 0x8000u) | 0x7e00u : DML_F2H_NATIVE(f);\n"
    "}\n"
    "DML_FN float dml_h2f(DML_U h) {\n"
    "  return (h & 0x7fffu) > 0x7c00u\n"
    "             ? DML_U2F(((h & 0x8000u) << 16) | 0x7f800000u | ((h & 0x3ffu) << 13))\n"
    "             : DML_H2F_NATIVE(h);\n"
    "}\n"
    "#else\n"
    "DML_FN DML_U dml_f2h(float f) {\n"
    "  DML_U x = DML_F2U(f);\n"
    "  DML_U sign = (x >> 16) & 0x8000u;\n"
    "  DML_U ex = (x >> 23) & 0xffu;\n"
    "  DML_U man = x & 0x7fffffu;\n"
    "  if (ex == 0xffu) return sign | 0x7c00u | (man != 0u ? 0x200u : 0u);\n"
    "  int e = int(ex) - 112;\n"
    "  if (e >= 31) return sign | 0x7c00u;\n"
    "  if (e <= 0) {\n"
    "    if (e < -10) return sign;\n"
    "    man |= 0x800000u;\n"
    "    DML_U sh = DML_U(14 - e);\n"
    "    DML_U h = man >> sh;\n"
    "    DML_U rem = man & ((1u << sh) - 1u);\n"
    "    DML_U mid = 1u << (sh - 1u);\n"
    "    if (rem > mid || (rem == mid && (h & 1u) != 0u)) h++;\n"
    "    return sign | h;\n"
    "  }\n"
    "  DML_U h = (DML_U(e) << 10) | (man >> 13);\n"
    "  DML_U rem = man & 0x1fffu;\n"
    "  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u) != 0u)) h++;\n"
    "  return sign | h;\n"
    "}\n"
    "DML_FN float dml_h2f(DML_U h) {\n"
    "  DML_U sign = (h & 0x8000u) << 16;\n"
    "  DML_U ex = (h >> 10) & 0x1fu;\n"
    "  DML_U man = h & 0x3ffu;\n"
    "  if (ex == 0u) {\n"
    "    float r = float(man) * 5.9604644775390625e-8f; /* man * 2^-24, exact */\n"
    "    return sign != 0u ? -r : r;\n"
    "  }\n"
    "  if (ex == 31u) return DML_U2F(sign | 0x7f800000u | (man << 13));\n"
    "  return DML_U2F(sign | ((ex + 112u) << 23) | (man << 13));\n"
    "}\n"
    "#endif\n"
    "DML_FN DML_U dml_f2b(float f) {\n"
    "  DML_U x = DML_F2U(f);\n"
    "  if ((x & 0x7fffffffu) > 0x7f800000u) return (x >> 16) | 0x40u;\n"
    "  x += 0x7fffu + ((x >> 16) & 1u);\n"
    "  return x >> 16;\n"
    "}\n"
    "DML_FN float dml_b2f(DML_U b) { return DML_U2F(b << 16); }\n"
    "DML_FN float dml_rh(float x) { return dml_h2f(dml_f2h(x)); }\n"
    "DML_FN float dml_rb(float x) { return dml_b2f(dml_f2b(x)); }\n";

/* '@' stands for the dialect's double-literal suffix (dml_cemit_f64_math). */
static const char k_f64_math[] =
    "/* exp: x = k ln2 + r (ln2 in two parts, |r| <= ln2/2), Taylor to r^13\n"
    " * (truncation < 5e-18), times 2^k in two steps; log: x = m 2^e with m in\n"
    " * [sqrt(1/2), sqrt(2)), s = (m-1)/(m+1), log m = 2 atanh s to s^21\n"
    " * (truncation < 3e-17). Relative error a few ulp (the division's). */\n"
    "DML_FN double dml_exp64(double x) {\n"
    "  if (x != x) return x;\n"
    "  if (x > 709.782712893384@) return DML_DINF;\n"
    "  if (x < -745.1332191019412@) return 0.0@;\n"
    "  double k = DML_FLOOR(x * 1.4426950408889634@ + 0.5@);\n"
    "  double r = (x - k * 6.93147180369123816490e-01@) - k * "
    "1.90821492927058770002e-10@;\n"
    "  double q = 1.6059043836821613e-10@;\n"
    "  q = q * r + 2.08767569878681e-9@;\n"
    "  q = q * r + 2.505210838544172e-8@;\n"
    "  q = q * r + 2.755731922398589e-7@;\n"
    "  q = q * r + 2.755731922398589e-6@;\n"
    "  q = q * r + 2.48015873015873e-5@;\n"
    "  q = q * r + 1.984126984126984e-4@;\n"
    "  q = q * r + 1.388888888888889e-3@;\n"
    "  q = q * r + 8.333333333333333e-3@;\n"
    "  q = q * r + 4.1666666666666664e-2@;\n"
    "  q = q * r + 0.16666666666666666@;\n"
    "  q = q * r + 0.5@;\n"
    "  q = q * r + 1.0@;\n"
    "  q = q * r + 1.0@;\n"
    "  int ki = int(k), k1 = ki / 2;\n"
    "  return q * DML_EXP2I(k1) * DML_EXP2I(ki - k1);\n"
    "}\n"
    "DML_FN double dml_log64(double x) {\n"
    "  if (x != x || x < 0.0@) return DML_DNAN;\n"
    "  if (x == 0.0@) return -DML_DINF;\n"
    "  if (x == DML_DINF) return x;\n"
    "  int e0 = 0;\n"
    "  if (x < 2.2250738585072014e-308@) {\n"
    "    x *= 18014398509481984.0@; /* 2^54: subnormals become normal */\n"
    "    e0 = -54;\n"
    "  }\n"
    "  int e = DML_DEXP(x);\n"
    "  int e1 = e / 2;\n"
    "  double m = x * DML_EXP2I(-e1) * DML_EXP2I(e1 - e);\n"
    "  if (m > 1.4142135623730951@) {\n"
    "    m *= 0.5@;\n"
    "    e += 1;\n"
    "  }\n"
    "  double s = (m - 1.0@) / (m + 1.0@), s2 = s * s;\n"
    "  double q = 1.0@ / 21.0@;\n"
    "  q = q * s2 + 1.0@ / 19.0@;\n"
    "  q = q * s2 + 1.0@ / 17.0@;\n"
    "  q = q * s2 + 1.0@ / 15.0@;\n"
    "  q = q * s2 + 1.0@ / 13.0@;\n"
    "  q = q * s2 + 1.0@ / 11.0@;\n"
    "  q = q * s2 + 1.0@ / 9.0@;\n"
    "  q = q * s2 + 1.0@ / 7.0@;\n"
    "  q = q * s2 + 1.0@ / 5.0@;\n"
    "  q = q * s2 + 1.0@ / 3.0@;\n"
    "  q = q * s2 + 1.0@;\n"
    "  double de = double(e + e0);\n"
    "  return de * 6.93147180369123816490e-01@ +\n"
    "         (de * 1.90821492927058770002e-10@ + 2.0@ * s * q);\n"
    "}\n";

void dml_cemit_f64_math(dml_sb_t *b, const char *suffix) {
  for (const char *p = k_f64_math; *p; p++) {
    if (*p == '@')
      dml_sb_printf(b, "%s", suffix);
    else
      dml_sb_printf(b, "%c", *p);
  }
}

const char *dml_cemit_view(dml_kbuf_t buf, dml_kdtype_t t) {
  static const char *const names[2][DML_KT_COUNT_] = {
      {"arena", "arena_i64", "arena_i32", "arena_u8", "arena_u8", "arena_i8", "arena_u16",
       "arena_u16", "arena_f64", "arena_i16", "arena_u16", "arena_u32", "arena_u64"},
      {"weights", "weights_i64", "weights_i32", "weights_u8", "weights_u8", "weights_i8",
       "weights_u16", "weights_u16", "weights_f64", "weights_i16", "weights_u16",
       "weights_u32", "weights_u64"}};
  if (buf == DML_KBUF_IN2 || buf == DML_KBUF_IN3) /* f32 only */
    return buf == DML_KBUF_IN2 ? "in2" : "in3";
  return names[buf == DML_KBUF_ARENA ? 0 : 1][(unsigned)t < DML_KT_COUNT_ ? t : 0];
}

static void e_cast_open(dml_sb_t *b, const dml_cdialect_t *d, dml_kdtype_t t);
static void e_cast_close(dml_sb_t *b, const dml_cdialect_t *d);

/* A constant of dtype t: ic for integers and bool, c for the floats. */
static void e_const(dml_sb_t *b, const dml_cdialect_t *d, dml_kdtype_t t, int64_t ic,
                    float c) {
  switch (t) {
    case DML_KT_F32:
    case DML_KT_F16:
    case DML_KT_BF16: e_float(b, d, c); return;
    case DML_KT_F64: /* the float constant converted: exact */
      e_cast_open(b, d, t);
      e_float_digits(b, d, c, 17);
      e_cast_close(b, d);
      return;
    case DML_KT_BOOL: dml_sb_printf(b, ic ? "true" : "false"); return;
    case DML_KT_U32: dml_sb_printf(b, "%lluu", (unsigned long long)(uint32_t)ic); return;
    case DML_KT_U64:
      dml_sb_printf(b, "%llu%s", (unsigned long long)ic, d->u64_suffix);
      return;
    case DML_KT_I32:
    case DML_KT_U8:
    case DML_KT_I8:
    case DML_KT_I16:
    case DML_KT_U16:
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

/* 1 for the dtypes computed as f32 in registers (f32, f16, bf16). */
static int f32_reg(dml_kdtype_t t) {
  return t == DML_KT_F32 || t == DML_KT_F16 || t == DML_KT_BF16;
}

/* 1 for the narrow integers held in int registers (u8, i8, u16, i16). */
static int narrow_int(dml_kdtype_t t) {
  return t == DML_KT_U8 || t == DML_KT_I8 || t == DML_KT_U16 || t == DML_KT_I16;
}

/* The conversion of ONNX Cast (CPU: runtime/cpu/cpu_elementwise.c) from
 * a's dtype to v's, for the dtypes bool is not one of. */
static void e_cast_num(dml_sb_t *b, const dml_cdialect_t *d, const dml_kval_t *v) {
  dml_kdtype_t t = v->dtype, at = v->a->dtype;
  if (t == DML_KT_F16 || t == DML_KT_BF16) {
    /* to f32 first (the CPU's double -> float -> f16), then rounded */
    dml_sb_printf(b, t == DML_KT_F16 ? "dml_rh(" : "dml_rb(");
    if (!f32_reg(at)) e_cast_open(b, d, DML_KT_F32);
    e_val(b, d, v->a);
    if (!f32_reg(at)) e_cast_close(b, d);
    dml_sb_printf(b, ")");
    return;
  }
  if (dml_kdtype_is_float(at) && (t == DML_KT_U32 || t == DML_KT_U64)) {
    /* negative floats: through the signed integer (two's complement), as
     * the CPU's int64 truncation then wrap */
    dml_sb_printf(b, "(");
    e_val(b, d, v->a);
    dml_sb_printf(b, " < ");
    e_const(b, d, at, 0, 0.0f);
    dml_sb_printf(b, " ? ");
    e_cast_open(b, d, t);
    e_cast_open(b, d, t == DML_KT_U32 ? DML_KT_I32 : DML_KT_I64);
    e_val(b, d, v->a);
    e_cast_close(b, d);
    e_cast_close(b, d);
    dml_sb_printf(b, " : ");
    e_cast_open(b, d, t);
    e_val(b, d, v->a);
    e_cast_close(b, d);
    dml_sb_printf(b, ")");
    return;
  }
  if ((t == DML_KT_I16 || t == DML_KT_U16) && t != at) {
    /* int registers: wrap to the 16-bit range now, as the CPU's stores */
    dml_sb_printf(b, t == DML_KT_U16 ? "(" : "((");
    e_cast_open(b, d, DML_KT_I32);
    e_val(b, d, v->a);
    e_cast_close(b, d);
    dml_sb_printf(b, t == DML_KT_U16 ? " & 65535)" : " << 16) >> 16)");
    return;
  }
  e_cast_open(b, d, t);
  e_val(b, d, v->a);
  e_cast_close(b, d);
}

/* An arm of a select: a floating constant +-0 through the dialect's
 * opaque_pre (c_emit.h), any other value as is. */
static void e_select_arm(dml_sb_t *b, const dml_cdialect_t *d, const dml_kval_t *v) {
  int zero = v->kind == DML_KV_CONST && dml_kdtype_is_float(v->dtype) && v->c == 0.0f;
  if (!zero || !d->opaque_pre) {
    e_val(b, d, v);
    return;
  }
  dml_sb_printf(b, "%s", d->opaque_pre);
  e_val(b, d, v);
  dml_sb_printf(b, ")");
}

/* The typed functions and the arithmetic ones on values that are not f32
 * (f16 and bf16 ones are rounded by the caller). */
static void e_typed_fn(dml_sb_t *b, const dml_cdialect_t *d, const dml_kval_t *v) {
  static const char *const infix[] = {" == ", " < ",  " <= ", " > ",
                                      " >= ", " && ", " || ", " != "};
  dml_kdtype_t at = v->a->dtype;
  int uns = dml_kdtype_is_unsigned(at) && !narrow_int(at);
  int flt = dml_kdtype_is_float(at);
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
        e_cast_num(b, d, v);
      }
      return;
    case DML_KF_SELECT:
      dml_sb_printf(b, "(");
      e_val(b, d, v->a);
      dml_sb_printf(b, " ? ");
      e_select_arm(b, d, v->b);
      dml_sb_printf(b, " : ");
      e_select_arm(b, d, v->c3);
      dml_sb_printf(b, ")");
      return;
    case DML_KF_LT:
    case DML_KF_LE:
    case DML_KF_GT:
    case DML_KF_GE:
      if (v->a->dtype == DML_KT_BOOL) {
        /* bool operands ordered as 0 < 1 (GLSL has no < on bool) */
        dml_sb_printf(b, "(%s(", d->type[DML_KT_I32]);
        e_val(b, d, v->a);
        dml_sb_printf(b, ")%s%s(", infix[v->fn - DML_KF_EQ], d->type[DML_KT_I32]);
        e_val(b, d, v->b);
        dml_sb_printf(b, "))");
        return;
      }
      /* fall through */
    case DML_KF_EQ:
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
      if (flt) {
        dml_sb_printf(b, "(");
        e_val(b, d, v->a);
        dml_sb_printf(b, " / ");
        e_val(b, d, v->b);
        dml_sb_printf(b, ")");
        return;
      }
      dml_sb_printf(b, uns ? "dml_udiv(" : "dml_idiv(");
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
    case DML_KF_MAX:
    case DML_KF_MIN:
      dml_sb_printf(b, "%s", v->fn == DML_KF_MIN ? d->imin : d->imax);
      e_val(b, d, v->a);
      dml_sb_printf(b, ", ");
      e_val(b, d, v->b);
      dml_sb_printf(b, ")");
      return;
    case DML_KF_ABS:
    case DML_KF_SIGN:
      if (uns || at == DML_KT_U8 || at == DML_KT_U16) {
        /* never negative: abs is the value, sign 0 or 1 */
        if (v->fn == DML_KF_ABS) {
          e_val(b, d, v->a);
          return;
        }
        dml_sb_printf(b, "(");
        e_val(b, d, v->a);
        dml_sb_printf(b, " > ");
        e_const(b, d, at, 0, 0.0f);
        dml_sb_printf(b, " ? ");
        e_const(b, d, at, 1, 1.0f);
        dml_sb_printf(b, " : ");
        e_const(b, d, at, 0, 0.0f);
        dml_sb_printf(b, ")");
        return;
      }
      dml_sb_printf(b, "%s", v->fn == DML_KF_ABS ? d->iabs : d->sign);
      e_val(b, d, v->a);
      dml_sb_printf(b, ")");
      return;
    case DML_KF_IPOW:
      dml_sb_printf(b, "dml_ipow(");
      e_val(b, d, v->a);
      dml_sb_printf(b, ", ");
      e_val(b, d, v->b);
      dml_sb_printf(b, ")");
      return;
    case DML_KF_IMOD:
    case DML_KF_FMOD:
      dml_sb_printf(b, uns                    ? "dml_umod("
                       : v->fn == DML_KF_IMOD ? "dml_imod("
                                              : "dml_fmod(");
      e_val(b, d, v->a);
      dml_sb_printf(b, ", ");
      e_val(b, d, v->b);
      dml_sb_printf(b, ")");
      return;
    case DML_KF_RECIP:
      if (at == DML_KT_F64) {
        dml_sb_printf(b, "(");
        e_const(b, d, at, 1, 1.0f);
        dml_sb_printf(b, " / ");
        e_val(b, d, v->a);
        dml_sb_printf(b, ")");
        return;
      }
      break;
    default: break;
  }
  if (at == DML_KT_F64 && d->f64_fn[v->fn]) {
    dml_sb_printf(b, "%s", d->f64_fn[v->fn]);
    e_val(b, d, v->a);
    dml_sb_printf(b, ")");
    return;
  }
  /* a float function the scheduler does not build for this dtype */
  dml_sb_printf(b, "%s", d->nan_text);
}

/* Function value v: f32 functions as the dialect spells them; f16 and
 * bf16 results computed in f32 and rounded to the dtype (the CPU rounds
 * each node's result); u8, i8, u16 and i16 results (int registers)
 * wrapped to the dtype's range, as the CPU's stores wrap each node's
 * result; the rest through e_typed_fn. */
static void e_fn(dml_sb_t *b, const dml_cdialect_t *d, const dml_kval_t *v) {
  int f32_form = v->fn <= DML_KF_POW && f32_reg(v->dtype) && f32_reg(v->a->dtype) &&
                 (!v->b || f32_reg(v->b->dtype));
  int round = (v->dtype == DML_KT_F16 || v->dtype == DML_KT_BF16) &&
              v->fn != DML_KF_CAST && v->fn != DML_KF_SELECT;
  int wrap = narrow_int(v->dtype) && v->fn != DML_KF_CAST && v->fn != DML_KF_SELECT &&
             v->fn != DML_KF_MAX && v->fn != DML_KF_MIN && v->fn != DML_KF_SIGN;
  if (round) dml_sb_printf(b, v->dtype == DML_KT_F16 ? "dml_rh(" : "dml_rb(");
  if (wrap)
    dml_sb_printf(b, v->dtype == DML_KT_U8 || v->dtype == DML_KT_U16 ? "(" : "((");
  if (f32_form) {
    dml_sb_printf(b, "%s", d->pre[v->fn]);
    e_val(b, d, v->a);
    if (v->b) {
      dml_sb_printf(b, "%s", d->mid[v->fn]);
      e_val(b, d, v->b);
    }
    dml_sb_printf(b, "%s", d->post[v->fn]);
  } else {
    e_typed_fn(b, d, v);
  }
  if (wrap)
    dml_sb_printf(b, "%s",
                  v->dtype == DML_KT_U8    ? " & 255)"
                  : v->dtype == DML_KT_U16 ? " & 65535)"
                  : v->dtype == DML_KT_I8  ? " << 24) >> 24)"
                                           : " << 16) >> 16)");
  if (round) dml_sb_printf(b, ")");
}

static void e_load(dml_sb_t *b, const dml_cdialect_t *d, const dml_kval_t *v) {
  dml_kdtype_t t = v->dtype;
  if (t == DML_KT_BOOL) dml_sb_printf(b, "%s", d->u8_load_pre);
  if (narrow_int(t)) dml_sb_printf(b, "%s", d->int_load_pre);
  if (t == DML_KT_F16 && v->arith && d->h2f_arith)
    dml_sb_printf(b, "%s%s", d->h2f_arith, d->load16_pre);
  else if (t == DML_KT_F16 || t == DML_KT_BF16)
    dml_sb_printf(b, "%s%s", t == DML_KT_F16 ? "dml_h2f(" : "dml_b2f(", d->load16_pre);
  dml_sb_printf(b, "%s[", dml_cemit_view(v->buf, t));
  e_idx(b, d, v->idx);
  dml_sb_printf(b, "]");
  if (t == DML_KT_BOOL) dml_sb_printf(b, "%s", d->u8_load_post);
  if (narrow_int(t)) dml_sb_printf(b, ")");
  if (t == DML_KT_F16 || t == DML_KT_BF16) dml_sb_printf(b, "))");
}

static void e_val(dml_sb_t *b, const dml_cdialect_t *d, const dml_kval_t *v) {
  switch (v->kind) {
    case DML_KV_CONST: e_const(b, d, v->dtype, v->ic, v->c); return;
    case DML_KV_IDX:
      e_cast_open(b, d, v->dtype);
      e_idx(b, d, v->idx);
      e_cast_close(b, d);
      return;
    case DML_KV_LOAD: e_load(b, d, v); return;
    case DML_KV_TILE: {
      const dml_kidx_t *x = v->idx;
      int64_t c = 0;
      if (x->kind == DML_KI_ADD && x->b->kind == DML_KI_CONST) {
        c = x->b->c;
        x = x->a;
      }
      if (d->tile_aligned_pre && v->dtype == DML_KT_F32 && x->kind == DML_KI_MUL &&
          x->b->kind == DML_KI_CONST && x->b->c % 4 == 0 && x->b->c > 0) {
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
    case DML_KV_PHILOX: {
      dml_sb_printf(b, v->dtype == DML_KT_U32 ? "dml_philox32(" : "dml_philox24(");
      e_idx(b, d, v->idx);
      dml_sb_printf(b, ", %lluu", (unsigned long long)(uint32_t)v->ic);
      const dml_kval_t *w[4] = {v->a, v->b, v->c3, v->d4};
      for (int k = 0; k < 4; k++) {
        dml_sb_printf(b, ", ");
        e_val(b, d, w[k]);
      }
      dml_sb_printf(b, ")");
      return;
    }
    case DML_KV_CTAB:
      dml_sb_printf(b, "ctab%u[", v->ctab);
      e_idx(b, d, v->idx);
      dml_sb_printf(b, "]");
      return;
    case DML_KV_BITS:
      dml_sb_printf(b, "%s", d->u2f_pre);
      e_idx(b, d, v->idx);
      dml_sb_printf(b, "))");
      return;
    case DML_KV_FN: e_fn(b, d, v); return;
  }
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
        } else if (s->kind == DML_KS_STORE &&
                   (s->dtype == DML_KT_U16 || s->dtype == DML_KT_I16)) {
          /* wraps modulo 65536 */
          dml_sb_printf(b, "%s",
                        s->dtype == DML_KT_U16 ? d->store_u16_pre : d->store_i16_pre);
          e_val(b, d, s->val);
          dml_sb_printf(b, ")");
        } else if (s->kind == DML_KS_STORE &&
                   (s->dtype == DML_KT_F16 || s->dtype == DML_KT_BF16)) {
          /* rounded to nearest even (the value is one already unless it is
           * a load or a constant) */
          dml_sb_printf(b, "%s%s", d->store_u16_pre,
                        s->dtype == DML_KT_F16 ? "dml_f2h(" : "dml_f2b(");
          e_val(b, d, s->val);
          dml_sb_printf(b, "))");
        } else {
          e_val(b, d, s->val);
        }
        dml_sb_printf(b, ";\n");
        break;
      case DML_KS_BARRIER: dml_sb_printf(b, "%s\n", d->barrier); break;
      case DML_KS_FOR:
        if (s->unroll > 0 && d->unroll_fmt) {
          dml_sb_printf(b, d->unroll_fmt, s->unroll);
          dml_sb_printf(b, "\n%*s", 2 * depth, "");
        }
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

dml_status_t dml_cemit_check_ctabs(const dml_kernel_t *k, const char *op) {
  uint64_t n = 0;
  for (uint32_t t = 0; t < k->n_ctabs; t++) n += k->ctabs[t].n;
  if (n > DML_KCTAB_RENDER_MAX)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, op,
                           "kernel %s: constant tables of %llu entries are more than the "
                           "%u a kernel holds as constant arrays (a compile places them "
                           "in the weights: dml_kplan_place_ctabs)",
                           k->name, (unsigned long long)n, DML_KCTAB_RENDER_MAX);
  return DML_OK;
}

void dml_cemit_ctabs(dml_sb_t *b, const dml_cdialect_t *d, const dml_kernel_t *k) {
  for (uint32_t t = 0; t < k->n_ctabs; t++) {
    const dml_kctab_t *c = &k->ctabs[t];
    if (!c->n) continue; /* placed in the weights (dml_kplan_place_ctabs) */
    const char *ty = c->dtype == DML_KT_I32 ? "int" : "float";
    if (d->ctor_casts)
      dml_sb_printf(b, "const %s ctab%u[%u] = %s[%u](", ty, t, c->n, ty, c->n);
    else
      dml_sb_printf(b, "static __device__ const %s ctab%u[%u] = {", ty, t, c->n);
    for (uint32_t i = 0; i < c->n; i++) {
      if (i) dml_sb_printf(b, i % 8 ? ", " : ",\n    ");
      if (c->dtype == DML_KT_I32)
        e_const(b, d, DML_KT_I32, c->i[i], 0.0f);
      else
        e_float(b, d, c->f[i]);
    }
    dml_sb_printf(b, d->ctor_casts ? ");\n" : "};\n");
  }
}

const char dml_c_fmod_macro[] =
    "#define DML_FMOD_FN(QUAL, T, NANV, ABS, ISINF) \\\n"
    "  QUAL T dml_fmod(T a, T b) { \\\n"
    "    T x = ABS(a), y = ABS(b); \\\n"
    "    if (!(x == x) || !(y == y) || ISINF(x) || y == T(0)) return NANV; \\\n"
    "    if (x < y) return a; \\\n"
    "    T t = y; \\\n"
    "    while (t + t <= x) t = t + t; \\\n"
    "    while (x >= y) { \\\n"
    "      if (t <= x) x = x - t; \\\n"
    "      t = t * T(0.5); \\\n"
    "    } \\\n"
    "    return a < T(0) ? -x : x; \\\n"
    "  }\n";
