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

static void e_idx(dml_sb_t *b, const dml_cdialect_t *d, const dml_kidx_t *e) {
  switch (e->kind) {
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

static void e_val(dml_sb_t *b, const dml_cdialect_t *d, const dml_kval_t *v) {
  switch (v->kind) {
    case DML_KV_CONST: e_float(b, d, v->c); return;
    case DML_KV_LOAD:
      dml_sb_printf(b, v->buf == DML_KBUF_ARENA ? "arena[" : "weights[");
      e_idx(b, d, v->idx);
      dml_sb_printf(b, "]");
      return;
    case DML_KV_TILE:
      dml_sb_printf(b, "tile%u[", v->tile);
      e_idx(b, d, v->idx);
      dml_sb_printf(b, "]");
      return;
    case DML_KV_REG: dml_sb_printf(b, "r%u", v->reg); return;
    case DML_KV_FN: break;
  }
  dml_sb_printf(b, "%s", d->pre[v->fn]);
  e_val(b, d, v->a);
  if (v->b) {
    dml_sb_printf(b, "%s", d->mid[v->fn]);
    e_val(b, d, v->b);
  }
  dml_sb_printf(b, "%s", d->post[v->fn]);
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
          dml_sb_printf(b, s->buf == DML_KBUF_ARENA ? "arena[" : "weights[");
        else
          dml_sb_printf(b, "tile%u[", s->tile);
        e_idx(b, d, s->idx);
        dml_sb_printf(b, "] = ");
        e_val(b, d, s->val);
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
