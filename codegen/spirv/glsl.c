/* glsl.c — kernel IR -> GLSL 450 compute source (dml_codegen.h). */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "dml_codegen.h"

typedef struct sb {
  char *p;
  size_t n, cap;
  int oom;
} sb_t;

static void sb_printf(sb_t *b, const char *fmt, ...) {
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

static void g_var(sb_t *b, int32_t v) {
  static const char *const n[] = {"gl_GlobalInvocationID.x", "gl_GlobalInvocationID.y",
                                  "gl_LocalInvocationID.x",  "gl_LocalInvocationID.y",
                                  "gl_WorkGroupID.x",        "gl_WorkGroupID.y"};
  if (v >= 0 && v < DML_KVAR_FIRST_LOOP)
    sb_printf(b, "%s", n[v]);
  else
    sb_printf(b, "i%d", (int)(v - DML_KVAR_FIRST_LOOP));
}

static void g_idx(sb_t *b, const dml_kidx_t *e) {
  switch (e->kind) {
    case DML_KI_CONST: sb_printf(b, "%lluu", (unsigned long long)e->c); return;
    case DML_KI_VAR: g_var(b, e->var); return;
    case DML_KI_SYM: sb_printf(b, "pc.sym[%d]", (int)e->var); return;
    default: break;
  }
  static const char ops[] = {'+', '*', '/', '%', '-'};
  sb_printf(b, "(");
  g_idx(b, e->a);
  sb_printf(b, " %c ", ops[e->kind - DML_KI_ADD]);
  g_idx(b, e->b);
  sb_printf(b, ")");
}

static void g_float(sb_t *b, float c) {
  if (isnan(c)) {
    sb_printf(b, "uintBitsToFloat(0x7fc00000u)");
  } else if (isinf(c)) {
    sb_printf(b, c > 0 ? "uintBitsToFloat(0x7f800000u)" : "uintBitsToFloat(0xff800000u)");
  } else {
    char t[40];
    snprintf(t, sizeof t, "%.9g", (double)c);
    if (!strpbrk(t, ".e")) strcat(t, ".0");
    sb_printf(b, "%s", t);
  }
}

static void g_val(sb_t *b, const dml_kval_t *v) {
  switch (v->kind) {
    case DML_KV_CONST: g_float(b, v->c); return;
    case DML_KV_LOAD:
      sb_printf(b, v->buf == DML_KBUF_ARENA ? "arena[" : "weights[");
      g_idx(b, v->idx);
      sb_printf(b, "]");
      return;
    case DML_KV_TILE:
      sb_printf(b, "tile%u[", v->tile);
      g_idx(b, v->idx);
      sb_printf(b, "]");
      return;
    case DML_KV_REG: sb_printf(b, "r%u", v->reg); return;
    case DML_KV_FN: break;
  }
  static const char *const pre[DML_KF_COUNT_] = {
      "(-",        "abs(",   "exp(",  "log(",    "sqrt(", "tanh(", "(1.0 / (1.0 + exp(-",
      "max(0.0, ", "floor(", "ceil(", "(1.0 / ", "sin(",  "cos(",  "(",
      "(",         "(",      "(",     "max(",    "min(",  "pow("};
  static const char *const mid[DML_KF_COUNT_] = {
      "", "", "", "",    "",    "",    "",    "",   "",   "",
      "", "", "", " + ", " - ", " * ", " / ", ", ", ", ", ", "};
  sb_printf(b, "%s", pre[v->fn]);
  g_val(b, v->a);
  if (v->b) {
    sb_printf(b, "%s", mid[v->fn]);
    g_val(b, v->b);
  }
  sb_printf(b, v->fn == DML_KF_SIGMOID ? ")))" : ")");
}

static void g_stmts(sb_t *b, const dml_kstmt_t *s, int depth) {
  for (; s; s = s->next) {
    sb_printf(b, "%*s", 2 * depth, "");
    switch (s->kind) {
      case DML_KS_LET:
      case DML_KS_SET:
        sb_printf(b, "r%u = ", s->reg);
        g_val(b, s->val);
        sb_printf(b, ";\n");
        break;
      case DML_KS_STORE:
      case DML_KS_TILE_STORE:
        if (s->kind == DML_KS_STORE)
          sb_printf(b, s->buf == DML_KBUF_ARENA ? "arena[" : "weights[");
        else
          sb_printf(b, "tile%u[", s->tile);
        g_idx(b, s->idx);
        sb_printf(b, "] = ");
        g_val(b, s->val);
        sb_printf(b, ";\n");
        break;
      case DML_KS_BARRIER: sb_printf(b, "barrier();\n"); break;
      case DML_KS_FOR:
        sb_printf(b, "for (uint ");
        g_var(b, s->var);
        sb_printf(b, " = 0u; ");
        g_var(b, s->var);
        sb_printf(b, " < ");
        g_idx(b, s->hi);
        sb_printf(b, "; ");
        g_var(b, s->var);
        sb_printf(b, " += %lldu) {\n", (long long)s->step);
        g_stmts(b, s->body, depth + 1);
        sb_printf(b, "%*s}\n", 2 * depth, "");
        break;
      case DML_KS_IF_LT:
        sb_printf(b, "if (");
        if (s->lo) {
          g_idx(b, s->lo);
          sb_printf(b, " <= ");
          g_idx(b, s->lhs);
          sb_printf(b, " && ");
        }
        g_idx(b, s->lhs);
        sb_printf(b, " < ");
        g_idx(b, s->hi);
        sb_printf(b, ") {\n");
        g_stmts(b, s->body, depth + 1);
        sb_printf(b, "%*s}\n", 2 * depth, "");
        break;
    }
  }
}

dml_status_t dml_codegen_glsl(const dml_kernel_t *k, uint32_t n_symbols,
                              char **out_text) {
  if (n_symbols > 32)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, "codegen.vulkan",
                           "%u symbols exceed the 32 push-constant words", n_symbols);
  sb_t b = {0};
  sb_printf(
      &b,
      "#version 450\n"
      "// dmlc kernel %s (%s)\n"
      "layout(local_size_x = %u, local_size_y = %u, local_size_z = %u) in;\n"
      "layout(std430, set = 0, binding = 0) buffer Arena { float arena[]; };\n"
      "layout(std430, set = 0, binding = 1) readonly buffer Weights { float weights[]; "
      "};\n"
      "layout(push_constant) uniform Syms { uint sym[%u]; } pc;\n",
      k->name, dml_kernel_kind_name(k->kind), k->local[0], k->local[1], k->local[2],
      n_symbols ? n_symbols : 1);
  for (uint32_t t = 0; t < k->n_tiles; t++)
    sb_printf(&b, "shared float tile%u[%u];\n", t, k->tile_elems[t]);
  sb_printf(&b, "void main() {\n");
  for (uint32_t r = 0; r < k->n_regs; r++) sb_printf(&b, "  float r%u = 0.0;\n", r);
  g_stmts(&b, k->body, 1);
  sb_printf(&b, "}\n");
  if (b.oom) {
    free(b.p);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen.vulkan",
                           "out of memory");
  }
  *out_text = b.p;
  return DML_OK;
}
