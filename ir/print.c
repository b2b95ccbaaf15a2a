/* print.c — the IR text printer (.dmlir); docs/ir-syntax.md has the grammar.
 *
 * The printer never fails on a malformed module: what it cannot name it
 * prints in a form the parser rejects (an undefined value, a `?` symbol), so
 * a dump of broken IR still shows what is there. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_ir.h"
#include "dml_ir_text.h"

/* Shared with parse.c (declared there too): converts the text of one
 * floating-point literal ("1.5", "-2", "1e-3", "nan", "-nan", "inf", "-inf")
 * into one element of float dtype `dt` at `out`. Returns 0 when `dt` is not
 * a float dtype. The printer uses it to check that decimal text gives back
 * the exact bits before choosing it over hex. */
int dml_ir_text_float_from_str_(dml_dtype_t dt, const char *s, void *out);

int dml_ir_text_float_from_str_(dml_dtype_t dt, const char *s, void *out) {
  const char *w = s[0] == '-' || s[0] == '+' ? s + 1 : s;
  int neg = s[0] == '-';
  int is_nan = strcmp(w, "nan") == 0, is_inf = strcmp(w, "inf") == 0;
  double d = 0;
  float f = 0;
  if (is_nan || is_inf) {
    d = copysign(is_nan ? (double)NAN : (double)INFINITY, neg ? -1.0 : 1.0);
    f = copysignf(is_nan ? NAN : INFINITY, neg ? -1.0f : 1.0f);
  } else if (dt == DML_DTYPE_F64) {
    d = strtod(s, NULL);
  } else {
    f = strtof(s, NULL);
  }
  switch (dt) {
    case DML_DTYPE_F64: memcpy(out, &d, 8); return 1;
    case DML_DTYPE_F32: memcpy(out, &f, 4); return 1;
    case DML_DTYPE_F16: {
      uint16_t h = dml_f32_to_f16(f);
      memcpy(out, &h, 2);
      return 1;
    }
    case DML_DTYPE_BF16: {
      uint16_t h = dml_f32_to_bf16(f);
      memcpy(out, &h, 2);
      return 1;
    }
    default: return 0;
  }
}

/* ==== small formatting helpers ========================================== */

typedef struct printer {
  FILE *out;
  const dml_ir_module_t *m;
  size_t elide_over; /* 0: never elide */
  int locations;
  /* Per function: value numbering, indexed by value id. */
  uint32_t n_ids;
  const dml_ir_value_t **who; /* who[id] == v when v belongs to the function */
  int64_t *num;               /* -1: printed by name; >= 0: printed as %N */
  const char *indent;
} printer_t;

/* [A-Za-z_][A-Za-z0-9_.]* */
static int is_ident(const char *s) {
  if (!s) return 0;
  unsigned char c = (unsigned char)s[0];
  if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_')) return 0;
  for (const char *q = s + 1; *q; q++) {
    c = (unsigned char)*q;
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
          c == '_' || c == '.'))
      return 0;
  }
  return 1;
}

/* A quoted string: \" \\ \n \t \r, other bytes outside 0x20..0x7e as \xHH,
 * so the text stays ASCII. */
static void put_quoted(FILE *out, const char *s) {
  static const char hex[] = "0123456789abcdef";
  fputc('"', out);
  for (const unsigned char *q = (const unsigned char *)s; *q; q++) {
    unsigned char c = *q;
    switch (c) {
      case '"': fputs("\\\"", out); break;
      case '\\': fputs("\\\\", out); break;
      case '\n': fputs("\\n", out); break;
      case '\t': fputs("\\t", out); break;
      case '\r': fputs("\\r", out); break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          fputs("\\x", out);
          fputc(hex[c >> 4], out);
          fputc(hex[c & 15], out);
        } else {
          fputc((int)c, out);
        }
    }
  }
  fputc('"', out);
}

/* A name: bare when identifier-like, quoted otherwise. */
static void put_name(FILE *out, const char *s) {
  if (is_ident(s))
    fputs(s, out);
  else
    put_quoted(out, s ? s : "");
}

/* Makes `buf` (a %g result) unmistakably a float literal. */
static void float_suffix(char *buf, size_t cap) {
  if (strpbrk(buf, ".eEn")) return; /* has '.', exponent, nan or inf */
  size_t n = strlen(buf);
  if (n + 3 <= cap) memcpy(buf + n, ".0", 3);
}

/* Formats element of float dtype `dt` at `p` with the fewest digits that
 * parse back to the same bits. Returns 0 when no decimal text does (a NaN
 * with a payload or an unusual sign). */
static int format_float_elem(dml_dtype_t dt, const void *p, char *buf, size_t cap) {
  size_t es = dml_dtype_size(dt);
  double v;
  switch (dt) {
    case DML_DTYPE_F64: memcpy(&v, p, 8); break;
    case DML_DTYPE_F32: {
      float f;
      memcpy(&f, p, 4);
      v = f;
      break;
    }
    case DML_DTYPE_F16:
    case DML_DTYPE_BF16: {
      uint16_t h;
      memcpy(&h, p, 2);
      v = dt == DML_DTYPE_F16 ? dml_f16_to_f32(h) : dml_bf16_to_f32(h);
      break;
    }
    default: return 0;
  }
  unsigned char back[8];
  if (isnan(v) || isinf(v)) {
    snprintf(buf, cap, "%s%s", signbit(v) ? "-" : "", isnan(v) ? "nan" : "inf");
    dml_ir_text_float_from_str_(dt, buf, back);
    return memcmp(back, p, es) == 0;
  }
  /* The fewest significant digits that give back the bits; then plain
   * notation for exponents in [-5, 17) ("1000.0", "0.001"), scientific
   * otherwise ("1e-45"). */
  int max_prec = dt == DML_DTYPE_F64 ? 17 : 9;
  for (int prec = 1; prec <= max_prec; prec++) {
    snprintf(buf, cap, "%.*e", prec - 1, v);
    dml_ir_text_float_from_str_(dt, buf, back);
    if (memcmp(back, p, es) != 0) continue;
    const char *e = strchr(buf, 'e');
    int exp10 = e ? atoi(e + 1) : 0;
    if (exp10 >= -5 && exp10 < 17) {
      char fixed[64];
      int decimals = prec - 1 - exp10;
      snprintf(fixed, sizeof(fixed), "%.*f", decimals > 0 ? decimals : 0, v);
      float_suffix(fixed, sizeof(fixed));
      dml_ir_text_float_from_str_(dt, fixed, back);
      if (memcmp(back, p, es) == 0 && strlen(fixed) < cap) {
        memcpy(buf, fixed, strlen(fixed) + 1);
        return 1;
      }
    }
    float_suffix(buf, cap);
    return 1;
  }
  return 0;
}

/* A double attribute value, bit-exact except for NaN payloads. */
static void put_double(FILE *out, double v) {
  char buf[64];
  if (!format_float_elem(DML_DTYPE_F64, &v, buf, sizeof(buf))) {
    /* Only a NaN with a payload gets here: print the plain NaN. */
    snprintf(buf, sizeof(buf), "%snan", signbit(v) ? "-" : "");
  }
  fputs(buf, out);
}

/* Formats an integer or bool element; 0 when decimal cannot hold it (a
 * bool byte other than 0 or 1). */
static int format_int_elem(dml_dtype_t dt, const void *p, char *buf, size_t cap) {
  switch (dt) {
    case DML_DTYPE_BOOL: {
      uint8_t b;
      memcpy(&b, p, 1);
      if (b > 1) return 0;
      snprintf(buf, cap, "%s", b ? "true" : "false");
      return 1;
    }
#define INT_CASE(DT, T, FMT, CAST)    \
  case DT: {                          \
    T x;                              \
    memcpy(&x, p, sizeof(x));         \
    snprintf(buf, cap, FMT, (CAST)x); \
    return 1;                         \
  }
      INT_CASE(DML_DTYPE_I8, int8_t, "%lld", long long)
      INT_CASE(DML_DTYPE_I16, int16_t, "%lld", long long)
      INT_CASE(DML_DTYPE_I32, int32_t, "%lld", long long)
      INT_CASE(DML_DTYPE_I64, int64_t, "%lld", long long)
      INT_CASE(DML_DTYPE_U8, uint8_t, "%llu", unsigned long long)
      INT_CASE(DML_DTYPE_U16, uint16_t, "%llu", unsigned long long)
      INT_CASE(DML_DTYPE_U32, uint32_t, "%llu", unsigned long long)
      INT_CASE(DML_DTYPE_U64, uint64_t, "%llu", unsigned long long)
#undef INT_CASE
    default: return 0;
  }
}

static int format_elem(dml_dtype_t dt, const void *p, char *buf, size_t cap) {
  return dml_dtype_is_float(dt) ? format_float_elem(dt, p, buf, cap)
                                : format_int_elem(dt, p, buf, cap);
}

/* dense<[...]> for up to 16 elements (when every one prints exactly),
 * dense<0x...> (bytes in memory order, little-endian) otherwise, or
 * dense<elided>. */
static void put_dense(printer_t *p, dml_dtype_t dt, const void *data, size_t bytes) {
  FILE *out = p->out;
  size_t es = dml_dtype_size(dt);
  size_t count = es ? bytes / es : 0;
  if ((p->elide_over > 0 && count > p->elide_over) || (bytes && !data) || !es ||
      count * es != bytes) {
    fputs("dense<elided>", out);
    return;
  }
  const unsigned char *d = (const unsigned char *)data;
  if (count <= 16) {
    char text[16][48];
    int ok = 1;
    for (size_t i = 0; i < count && ok; i++)
      ok = format_elem(dt, d + i * es, text[i], sizeof(text[i]));
    if (ok) {
      fputs("dense<[", out);
      for (size_t i = 0; i < count; i++) {
        if (i) fputs(", ", out);
        fputs(text[i], out);
      }
      fputs("]>", out);
      return;
    }
  }
  static const char hex[] = "0123456789abcdef";
  char buf[4096];
  size_t k = 0;
  fputs("dense<0x", out);
  for (size_t i = 0; i < bytes; i++) {
    buf[k++] = hex[d[i] >> 4];
    buf[k++] = hex[d[i] & 15];
    if (k == sizeof(buf)) {
      fwrite(buf, 1, k, out);
      k = 0;
    }
  }
  if (k) fwrite(buf, 1, k, out);
  fputc('>', out);
}

/* ==== types, values ====================================================== */

static void put_type(printer_t *p, const dml_type_t *t) {
  FILE *out = p->out;
  if (t->dtype == DML_DTYPE_INVALID)
    fputc('?', out);
  else
    fputs(dml_dtype_name(t->dtype), out);
  fputc('[', out);
  if (t->rank < 0) {
    fputc('?', out);
  } else {
    int32_t rank = t->rank > DML_MAX_RANK ? DML_MAX_RANK : t->rank;
    for (int32_t i = 0; i < rank; i++) {
      const dml_dim_t *d = &t->dims[i];
      if (i) fputc(',', out);
      if (d->sym < 0) {
        fprintf(out, "%lld", (long long)d->value);
        continue;
      }
      if (d->value != 1) fprintf(out, "%lld*", (long long)d->value);
      if ((uint32_t)d->sym < p->m->n_symbols)
        put_name(out, p->m->symbols[d->sym].name);
      else
        fprintf(out, "?%d", (int)d->sym); /* broken symbol index */
    }
  }
  fputc(']', out);
}

static void put_mem(printer_t *p, const dml_ir_value_t *v) {
  if (v->mem_offset >= 0)
    fprintf(p->out, " mem(%lld, %lld)", (long long)v->mem_offset,
            (long long)v->mem_bytes);
}

static void put_value(printer_t *p, const dml_ir_value_t *v) {
  FILE *out = p->out;
  if (!v) {
    fputc('_', out);
    return;
  }
  if (v->kind == DML_IR_VALUE_GLOBAL) {
    fputc('@', out);
    put_name(out, v->name);
    return;
  }
  if (v->id < p->n_ids && p->who[v->id] == v) {
    fputc('%', out);
    if (p->num[v->id] >= 0)
      fprintf(out, "%lld", (long long)p->num[v->id]);
    else
      put_name(out, v->name);
    return;
  }
  /* Not defined in this function: print something the parser reports. */
  fprintf(out, "%%\"<undefined #%u>\"", (unsigned)v->id);
}

typedef struct named {
  const char *name;
  uint32_t id;
} named_t;

static int cmp_named(const void *a, const void *b) {
  return strcmp(((const named_t *)a)->name, ((const named_t *)b)->name);
}

/* Decides how each value of `f` prints: %name when its name is unique in
 * the function and identifier-like, %"name" when unique but not, %N (in
 * definition order, arguments first) otherwise. */
static dml_status_t number_values(printer_t *p, const dml_ir_function_t *f) {
  const dml_ir_module_t *m = p->m;
  p->n_ids = m->next_value_id;
  p->who = (const dml_ir_value_t **)calloc(p->n_ids ? p->n_ids : 1, sizeof(*p->who));
  p->num = (int64_t *)calloc(p->n_ids ? p->n_ids : 1, sizeof(*p->num));
  size_t n_vals = f->n_args;
  for (const dml_ir_node_t *n = f->first; n; n = n->next) n_vals += n->n_outputs;
  named_t *names = (named_t *)malloc((n_vals ? n_vals : 1) * sizeof(*names));
  if (!p->who || !p->num || !names) {
    free(names);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "ir.print", "out of memory");
  }
  /* Order of definition: arguments, then node results. */
  size_t k = 0;
  for (uint32_t i = 0; i < f->n_args; i++) {
    const dml_ir_value_t *v = f->args[i];
    if (!v || v->id >= p->n_ids || p->who[v->id]) continue;
    p->who[v->id] = v;
    names[k++] = (named_t){v->name, v->id};
  }
  for (const dml_ir_node_t *n = f->first; n; n = n->next)
    for (uint32_t i = 0; i < n->n_outputs; i++) {
      const dml_ir_value_t *v = n->outputs[i];
      if (!v || v->id >= p->n_ids || p->who[v->id]) continue;
      p->who[v->id] = v;
      names[k++] = (named_t){v->name, v->id};
    }
  size_t n_def = k;
  /* Unique names: sort the named ones and look at neighbours. */
  named_t *sorted = (named_t *)malloc((n_def ? n_def : 1) * sizeof(*sorted));
  if (!sorted) {
    free(names);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "ir.print", "out of memory");
  }
  size_t ns = 0;
  for (size_t i = 0; i < n_def; i++)
    if (names[i].name) sorted[ns++] = names[i];
  qsort(sorted, ns, sizeof(*sorted), cmp_named);
  for (size_t i = 0; i < n_def; i++) p->num[names[i].id] = names[i].name ? -1 : 0;
  for (size_t i = 0; i < ns;) {
    size_t j = i + 1;
    while (j < ns && strcmp(sorted[i].name, sorted[j].name) == 0) j++;
    if (j - i > 1)
      for (size_t t = i; t < j; t++) p->num[sorted[t].id] = 0;
    i = j;
  }
  int64_t next = 0;
  for (size_t i = 0; i < n_def; i++)
    if (p->num[names[i].id] >= 0) p->num[names[i].id] = next++;
  free(sorted);
  free(names);
  return DML_OK;
}

static void drop_numbering(printer_t *p) {
  free(p->who);
  free(p->num);
  p->who = NULL;
  p->num = NULL;
  p->n_ids = 0;
}

/* ==== attributes ========================================================= */

static void put_attr(printer_t *p, const dml_attr_t *a) {
  FILE *out = p->out;
  put_name(out, a->name);
  fputs(" = ", out);
  switch (a->kind) {
    case DML_ATTR_INT: fprintf(out, "%lld", (long long)a->i); return;
    case DML_ATTR_FLOAT: put_double(out, a->f); return;
    case DML_ATTR_STRING: put_quoted(out, a->s ? a->s : ""); return;
    case DML_ATTR_INTS:
      if (!a->n || !a->ints) {
        fputs("ints[]", out);
        return;
      }
      fputc('[', out);
      for (size_t i = 0; i < a->n; i++)
        fprintf(out, "%s%lld", i ? ", " : "", (long long)a->ints[i]);
      fputc(']', out);
      return;
    case DML_ATTR_FLOATS:
      if (!a->n || !a->floats) {
        fputs("floats[]", out);
        return;
      }
      fputc('[', out);
      for (size_t i = 0; i < a->n; i++) {
        if (i) fputs(", ", out);
        put_double(out, a->floats[i]);
      }
      fputc(']', out);
      return;
    case DML_ATTR_STRINGS:
      if (!a->n || !a->strings) {
        fputs("strings[]", out);
        return;
      }
      fputc('[', out);
      for (size_t i = 0; i < a->n; i++) {
        if (i) fputs(", ", out);
        put_quoted(out, a->strings[i] ? a->strings[i] : "");
      }
      fputc(']', out);
      return;
    case DML_ATTR_TENSOR: {
      const dml_tensor_t *t = &a->tensor;
      dml_type_t ty;
      memset(&ty, 0, sizeof(ty));
      ty.dtype = t->dtype;
      ty.rank = t->rank < 0 ? 0 : t->rank > DML_MAX_RANK ? DML_MAX_RANK : t->rank;
      for (int32_t i = 0; i < ty.rank; i++) {
        ty.dims[i].value = t->dims[i];
        ty.dims[i].sym = -1;
      }
      fputs("tensor<", out);
      put_type(p, &ty);
      fputs("> ", out);
      size_t bytes = dml_tensor_bytes(t);
      if (bytes == SIZE_MAX)
        fputs("dense<elided>", out);
      else
        put_dense(p, t->dtype, t->data, bytes);
      return;
    }
  }
  fprintf(out, "<bad attribute kind %d>", (int)a->kind);
}

/* ==== functions, modules ================================================= */

static void put_node(printer_t *p, const dml_ir_node_t *n) {
  FILE *out = p->out;
  fputs(p->indent, out);
  fputs("  ", out);
  for (uint32_t i = 0; i < n->n_outputs; i++) {
    if (i) fputs(", ", out);
    put_value(p, n->outputs[i]);
  }
  if (n->n_outputs) fputs(" = ", out);
  fputs(dml_op_name(n->op), out);
  fputc('(', out);
  for (uint32_t i = 0; i < n->n_inputs; i++) {
    if (i) fputs(", ", out);
    put_value(p, n->inputs[i]);
  }
  fputc(')', out);
  if (n->n_attrs) {
    fputs(" {", out);
    for (uint32_t i = 0; i < n->n_attrs; i++) {
      if (i) fputs(", ", out);
      put_attr(p, &n->attrs[i]);
    }
    fputc('}', out);
  }
  if (n->n_outputs) {
    fputs(" : ", out);
    for (uint32_t i = 0; i < n->n_outputs; i++) {
      const dml_ir_value_t *v = n->outputs[i];
      if (i) fputs(", ", out);
      if (!v) {
        fputs("?[?]", out);
        continue;
      }
      put_type(p, &v->type);
      put_mem(p, v);
    }
  }
  if (p->locations && n->name) {
    fputs(" loc(", out);
    put_quoted(out, n->name);
    fputc(')', out);
  }
  fputc('\n', out);
}

static dml_status_t put_function(printer_t *p, const dml_ir_function_t *f) {
  FILE *out = p->out;
  DML_RETURN_IF_ERROR(number_values(p, f));
  fputs(p->indent, out);
  fputs("func @", out);
  put_name(out, f->name);
  fputc('(', out);
  for (uint32_t i = 0; i < f->n_args; i++) {
    const dml_ir_value_t *v = f->args[i];
    if (i) fputs(", ", out);
    put_value(p, v);
    if (!v) continue;
    fputs(": ", out);
    put_type(p, &v->type);
    put_mem(p, v);
  }
  fputs(") -> (", out);
  for (uint32_t i = 0; i < f->n_results; i++) {
    if (i) fputs(", ", out);
    if (f->results[i])
      put_type(p, &f->results[i]->type);
    else
      fputs("?[?]", out);
  }
  fputc(')', out);
  if (f->arena_bytes >= 0) fprintf(out, " arena(%lld)", (long long)f->arena_bytes);
  fputs(" {\n", out);
  for (const dml_ir_node_t *n = f->first; n; n = n->next) put_node(p, n);
  fputs(p->indent, out);
  fputs("  return", out);
  for (uint32_t i = 0; i < f->n_results; i++) {
    fputs(i ? ", " : " ", out);
    put_value(p, f->results[i]);
  }
  fputc('\n', out);
  fputs(p->indent, out);
  fputs("}\n", out);
  drop_numbering(p);
  return DML_OK;
}

static void put_global(printer_t *p, const dml_ir_value_t *g) {
  FILE *out = p->out;
  fputs("  global ", out);
  put_value(p, g);
  fputs(" : ", out);
  put_type(p, &g->type);
  put_mem(p, g);
  if (g->global_flags & DML_IR_GLOBAL_PARAM) fputs(" param", out);
  if (g->global_flags & DML_IR_GLOBAL_STATE) fputs(" state", out);
  if (g->data) {
    fputs(" = ", out);
    put_dense(p, g->type.dtype, g->data, g->data_bytes);
  }
  fputc('\n', out);
}

static void init_printer(printer_t *p, const dml_ir_module_t *m,
                         const dml_ir_print_options_t *opts, FILE *out) {
  memset(p, 0, sizeof(*p));
  p->out = out;
  p->m = m;
  p->elide_over = opts ? opts->elide_elements_over : 0;
  p->locations = opts ? opts->print_locations : 1;
  p->indent = "";
}

static dml_status_t finish(FILE *out) {
  if (fflush(out) != 0 || ferror(out))
    return dml_status_make(DML_STATUS_IO, "ir.print", "writing IR text failed");
  return DML_OK;
}

dml_status_t dml_ir_print_module(const dml_ir_module_t *m,
                                 const dml_ir_print_options_t *opts, FILE *out) {
  if (!m || !out)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "ir.print",
                           "no module or stream");
  printer_t p;
  init_printer(&p, m, opts, out);
  fputs("module {\n", out);
  for (uint32_t i = 0; i < m->n_symbols; i++) {
    fputs("  sym ", out);
    put_name(out, m->symbols[i].name);
    fprintf(out, " <= %lld%s", (long long)m->symbols[i].bound,
            (m->symbols[i].flags & DML_IR_SYMBOL_DATA_DEPENDENT) ? " dynamic" : "");
    const dml_ir_symbol_t *sy = &m->symbols[i];
    if (sy->flags & DML_IR_SYMBOL_DERIVED) {
      fputs(" derived(", out);
      for (int k = 0; k < 2; k++) {
        if (k) fputs(", ", out);
        if (sy->src[k] >= 0 && (uint32_t)sy->src[k] < m->n_symbols)
          put_name(out, m->symbols[sy->src[k]].name);
        else
          fputs("_", out);
      }
      fprintf(out, ", %lld, %lld, %lld)", (long long)sy->mul, (long long)sy->add,
              (long long)sy->div);
    }
    fputc('\n', out);
  }
  for (uint32_t i = 0; i < m->n_globals; i++)
    if (m->globals[i]) put_global(&p, m->globals[i]);
  p.indent = "  ";
  for (uint32_t i = 0; i < m->n_functions; i++) {
    if (i || m->n_symbols || m->n_globals) fputc('\n', out);
    DML_RETURN_IF_ERROR(put_function(&p, m->functions[i]));
  }
  fputs("}\n", out);
  return finish(out);
}

dml_status_t dml_ir_print_function(const dml_ir_function_t *f,
                                   const dml_ir_print_options_t *opts, FILE *out) {
  if (!f || !out || !f->module)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "ir.print",
                           "no function or stream");
  printer_t p;
  init_printer(&p, f->module, opts, out);
  DML_RETURN_IF_ERROR(put_function(&p, f));
  return finish(out);
}
