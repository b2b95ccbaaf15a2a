/* parse.c — the IR text parser (.dmlir); docs/ir-syntax.md has the grammar.
 *
 * Untrusted input: every read is bounded by `len` (the text need not be
 * NUL-terminated), the grammar has no recursion, every loop consumes a token
 * or stops at the end, and memory grows only with the size of the text (a
 * declared type never makes the parser allocate for data the text does not
 * hold). Every error is INVALID_ARGUMENT with op "ir.parse" and a detail
 * line "FILE:LINE:COL: expected X, found Y", followed by the source line and
 * a caret. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_file.h"
#include "dml_ir.h"
#include "dml_ir_text.h"

/* Defined in print.c: the one text-to-element conversion for float dtypes,
 * so the printer can check that what it prints parses back exactly. */
int dml_ir_text_float_from_str_(dml_dtype_t dt, const char *s, void *out);

/* ==== tokens ============================================================= */

typedef enum tok_kind {
  T_EOF,
  T_IDENT,  /* [A-Za-z_][A-Za-z0-9_.]* (also `_`, `inf`, `nan`) */
  T_INT,    /* -?[0-9]+ */
  T_FLOAT,  /* -?[0-9]+(.[0-9]*)?([eE][+-]?[0-9]+)?, with '.' or exponent; -inf, -nan */
  T_HEX,    /* 0x[0-9a-fA-F]* */
  T_STRING, /* "..." (payload: the raw text between the quotes) */
  T_VNUM,   /* %123 (payload: the digits) */
  T_VNAME,  /* %ident or %"quoted" */
  T_GNAME,  /* @ident or @"quoted" */
  T_PUNCT,  /* { } ( ) [ ] < > = , : * ? (payload: the char) */
  T_LE,     /* <= */
  T_ARROW,  /* -> */
} tok_kind_t;

typedef struct tok {
  tok_kind_t kind;
  size_t pos, len;   /* the whole token */
  size_t spos, slen; /* payload */
  int quoted;        /* T_VNAME/T_GNAME: payload is quoted (escapes) */
} tok_t;

/* ==== name -> pointer maps (open addressing) ============================ */

typedef struct map_entry {
  const char *key;
  size_t len;
  int kind;
  void *val;
} map_entry_t;

typedef struct map {
  map_entry_t *e;
  size_t cap, n;
} map_t;

enum { KEY_NUM = 1, KEY_NAME = 2 };

static size_t map_hash(const char *k, size_t len, int kind) {
  uint64_t h = 1469598103934665603ull ^ (uint64_t)kind;
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)k[i]) * 1099511628211ull;
  return (size_t)(h ^ (h >> 29));
}

static void *map_get(const map_t *mp, const char *k, size_t len, int kind) {
  if (!mp->cap) return NULL;
  size_t mask = mp->cap - 1;
  for (size_t i = map_hash(k, len, kind) & mask;; i = (i + 1) & mask) {
    const map_entry_t *e = &mp->e[i];
    if (!e->key) return NULL;
    if (e->kind == kind && e->len == len && memcmp(e->key, k, len) == 0) return e->val;
  }
}

/* The key must outlive the map. Returns 0 when out of memory. */
static int map_put(map_t *mp, const char *k, size_t len, int kind, void *val) {
  if ((mp->n + 1) * 2 > mp->cap) {
    size_t nc = mp->cap ? mp->cap * 2 : 64;
    map_entry_t *ne = (map_entry_t *)calloc(nc, sizeof(*ne));
    if (!ne) return 0;
    for (size_t i = 0; i < mp->cap; i++) {
      map_entry_t *e = &mp->e[i];
      if (!e->key) continue;
      size_t j = map_hash(e->key, e->len, e->kind) & (nc - 1);
      while (ne[j].key) j = (j + 1) & (nc - 1);
      ne[j] = *e;
    }
    free(mp->e);
    mp->e = ne;
    mp->cap = nc;
  }
  size_t mask = mp->cap - 1;
  size_t i = map_hash(k, len, kind) & mask;
  while (mp->e[i].key) i = (i + 1) & mask;
  mp->e[i] = (map_entry_t){k, len, kind, val};
  mp->n++;
  return 1;
}

static void map_clear(map_t *mp) {
  free(mp->e);
  memset(mp, 0, sizeof(*mp));
}

/* ==== parser state, errors =============================================== */

typedef struct parser {
  const char *text;
  size_t len;
  const char *file;
  size_t pos; /* lexer position: the byte after the current token */
  tok_t tok;  /* current token */
  dml_ir_module_t *m;
  dml_ir_function_t *f;
  map_t globals, values;
  char *scratch; /* decoded strings, number text */
  size_t scratch_cap;
} parser_t;

static dml_status_t oom(void) {
  return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "ir.parse", "out of memory");
}

/* Appends `n` bytes of `s` to buf (cap bytes, at *k) as printable ASCII. */
static void excerpt(char *buf, size_t cap, size_t *k, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  for (size_t i = 0; i < n && *k + 5 < cap; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '\t') {
      buf[(*k)++] = ' ';
    } else if (c < 0x20 || c >= 0x7f) {
      buf[(*k)++] = '\\';
      buf[(*k)++] = 'x';
      buf[(*k)++] = hex[c >> 4];
      buf[(*k)++] = hex[c & 15];
    } else {
      buf[(*k)++] = (char)c;
    }
  }
  buf[*k] = 0;
}

/* An error at byte `pos`: "FILE:LINE:COL: <message>", then the line and a
 * caret under the column. */
static dml_status_t err_at(parser_t *p, size_t pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static dml_status_t err_at(parser_t *p, size_t pos, const char *fmt, ...) {
  if (pos > p->len) pos = p->len;
  size_t line = 1, line_start = 0;
  for (size_t i = 0; i < pos; i++)
    if (p->text[i] == '\n') {
      line++;
      line_start = i + 1;
    }
  size_t line_end = line_start;
  while (line_end < p->len && p->text[line_end] != '\n') line_end++;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  dml_status_t st =
      dml_status_make(DML_STATUS_INVALID_ARGUMENT, "ir.parse", "invalid IR text");
  st = dml_status_detail(st, "%s:%zu:%zu: %s", p->file, line, pos - line_start + 1, msg);
  /* The source line (at most 160 bytes) and a caret when the column is in it. */
  char src[700];
  size_t k = 0;
  size_t show = line_end - line_start > 160 ? 160 : line_end - line_start;
  excerpt(src, sizeof(src), &k, p->text + line_start, show);
  if (show && pos - line_start <= show) {
    /* Column in the excerpt: escaped bytes before it take 4 columns. */
    size_t col = 0;
    for (size_t i = line_start; i < pos; i++) {
      unsigned char c = (unsigned char)p->text[i];
      col += (c != '\t' && (c < 0x20 || c >= 0x7f)) ? 4 : 1;
    }
    st = dml_status_detail(st, "%s", src);
    st = dml_status_detail(st, "%*s^", (int)col, "");
  }
  return st;
}

/* Describes the current token for "found ...". */
static const char *found(parser_t *p, char *buf, size_t cap) {
  const tok_t *t = &p->tok;
  if (t->kind == T_EOF) {
    snprintf(buf, cap, "end of input");
    return buf;
  }
  size_t k = 0;
  buf[k++] = '\'';
  size_t n = t->len > 40 ? 40 : t->len;
  excerpt(buf, cap - 6, &k, p->text + t->pos, n);
  if (t->len > 40) {
    memcpy(buf + k, "...", 3);
    k += 3;
  }
  buf[k++] = '\'';
  buf[k] = 0;
  return buf;
}

/* "expected <what>, found <current token>" at the current token. */
static dml_status_t expected(parser_t *p, const char *what) {
  char f[200];
  return err_at(p, p->tok.pos, "expected %s, found %s", what, found(p, f, sizeof(f)));
}

/* Re-raises an error of the IR core at `pos`. */
static dml_status_t wrap(parser_t *p, size_t pos, dml_status_t st) {
  if (!st || dml_status_code(st) == DML_STATUS_RESOURCE_EXHAUSTED) return st;
  dml_status_t e = err_at(p, pos, "%s", dml_status_reason(st));
  dml_status_free(st);
  return e;
}

/* ==== lexer ============================================================== */

static int is_ident_start(int c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
static int is_ident_char(int c) {
  return is_ident_start(c) || (c >= '0' && c <= '9') || c == '.';
}
static int is_digit(int c) {
  return c >= '0' && c <= '9';
}
static int hex_val(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Byte at i, or -1 past the end. */
static int at(const parser_t *p, size_t i) {
  return i < p->len ? (unsigned char)p->text[i] : -1;
}

static size_t scan_ident(const parser_t *p, size_t i) {
  while (is_ident_char(at(p, i))) i++;
  return i;
}

/* Scans a quoted string starting at the opening quote `i`; sets *end past
 * the closing quote. */
static dml_status_t scan_string(parser_t *p, size_t i, size_t *end) {
  size_t start = i++;
  for (;;) {
    int c = at(p, i);
    if (c < 0 || c == '\n')
      return err_at(p, start, "expected '\"' to close the string, found %s",
                    c < 0 ? "end of input" : "end of line");
    if (c == '"') break;
    if (c == 0) return err_at(p, i, "expected a string character, found a NUL byte");
    if (c == '\\') {
      int e = at(p, i + 1);
      if (e == '"' || e == '\\' || e == 'n' || e == 't' || e == 'r') {
        i += 2;
        continue;
      }
      if (e == 'x') {
        int h = hex_val(at(p, i + 2)), l = hex_val(at(p, i + 3));
        if (h < 0 || l < 0)
          return err_at(p, i, "expected two hex digits after '\\x' in a string");
        if (h == 0 && l == 0)
          return err_at(p, i, "expected a string without NUL bytes, found '\\x00'");
        i += 4;
        continue;
      }
      return err_at(p, i, "expected an escape (\\\" \\\\ \\n \\t \\r \\xHH) in a string");
    }
    i++;
  }
  *end = i + 1;
  return DML_OK;
}

/* Reads the next token into p->tok. */
static dml_status_t lex(parser_t *p) {
  size_t i = p->pos;
  for (;;) { /* whitespace and // comments */
    int c = at(p, i);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      i++;
    } else if (c == '/' && at(p, i + 1) == '/') {
      while (i < p->len && p->text[i] != '\n') i++;
    } else {
      break;
    }
  }
  tok_t *t = &p->tok;
  memset(t, 0, sizeof(*t));
  t->pos = i;
  int c = at(p, i);
  size_t e = i + 1;
  if (c < 0) {
    t->kind = T_EOF;
    e = i;
  } else if (is_ident_start(c)) {
    t->kind = T_IDENT;
    e = scan_ident(p, i);
  } else if (c == '-' && at(p, i + 1) == '>') {
    t->kind = T_ARROW;
    e = i + 2;
  } else if (c == '-' && !is_digit(at(p, i + 1))) {
    size_t w = scan_ident(p, i + 1);
    if ((w == i + 4 && memcmp(p->text + i + 1, "inf", 3) == 0) ||
        (w == i + 4 && memcmp(p->text + i + 1, "nan", 3) == 0)) {
      t->kind = T_FLOAT;
      e = w;
    } else {
      p->pos = i;
      return err_at(p, i, "expected a number, 'inf' or 'nan' after '-'");
    }
  } else if (is_digit(c) || c == '-') {
    size_t j = i + (c == '-');
    if (at(p, j) == '0' && (at(p, j + 1) == 'x' || at(p, j + 1) == 'X') && c != '-') {
      t->kind = T_HEX;
      j += 2;
      while (hex_val(at(p, j)) >= 0) j++;
    } else {
      t->kind = T_INT;
      while (is_digit(at(p, j))) j++;
      if (at(p, j) == '.') {
        t->kind = T_FLOAT;
        j++;
        while (is_digit(at(p, j))) j++;
      }
      if (at(p, j) == 'e' || at(p, j) == 'E') {
        size_t k = j + 1;
        if (at(p, k) == '+' || at(p, k) == '-') k++;
        if (!is_digit(at(p, k)))
          return err_at(p, j, "expected digits in the exponent of a number");
        while (is_digit(at(p, k))) k++;
        t->kind = T_FLOAT;
        j = k;
      }
    }
    e = j;
  } else if (c == '"') {
    DML_RETURN_IF_ERROR(scan_string(p, i, &e));
    t->kind = T_STRING;
    t->spos = i + 1;
    t->slen = e - i - 2;
  } else if (c == '%' || c == '@') {
    int n = at(p, i + 1);
    if (c == '%' && is_digit(n)) {
      t->kind = T_VNUM;
      e = i + 1;
      while (is_digit(at(p, e))) e++;
      t->spos = i + 1;
      t->slen = e - i - 1;
    } else if (is_ident_start(n)) {
      t->kind = c == '%' ? T_VNAME : T_GNAME;
      e = scan_ident(p, i + 1);
      t->spos = i + 1;
      t->slen = e - i - 1;
    } else if (n == '"') {
      t->kind = c == '%' ? T_VNAME : T_GNAME;
      t->quoted = 1;
      DML_RETURN_IF_ERROR(scan_string(p, i + 1, &e));
      t->spos = i + 2;
      t->slen = e - i - 3;
    } else {
      return err_at(p, i,
                    "expected a name after '%c' (an identifier%s or a quoted string)", c,
                    c == '%' ? ", a number" : "");
    }
  } else if (c == '<' && at(p, i + 1) == '=') {
    t->kind = T_LE;
    e = i + 2;
  } else if (c != 0 && strchr("{}()[]<>=,:*?", c)) {
    t->kind = T_PUNCT;
    t->spos = i;
    t->slen = 1;
  } else {
    char buf[16];
    size_t k = 0;
    excerpt(buf, sizeof(buf), &k, p->text + i, 1);
    return err_at(p, i, "expected a token, found '%s'", buf);
  }
  t->len = e - i;
  if (t->kind == T_IDENT) {
    t->spos = i;
    t->slen = t->len;
  }
  p->pos = e;
  return DML_OK;
}

/* ==== token helpers ====================================================== */

static int is_punct(const parser_t *p, char c) {
  return p->tok.kind == T_PUNCT && p->text[p->tok.pos] == c;
}

static int is_word(const parser_t *p, const char *w) {
  size_t n = strlen(w);
  return p->tok.kind == T_IDENT && p->tok.len == n &&
         memcmp(p->text + p->tok.pos, w, n) == 0;
}

static dml_status_t expect_punct(parser_t *p, char c) {
  if (!is_punct(p, c)) {
    char what[8] = {'\'', c, '\'', 0};
    return expected(p, what);
  }
  return lex(p);
}

/* Grows p->scratch to hold `n` bytes. */
static int scratch_reserve(parser_t *p, size_t n) {
  if (n <= p->scratch_cap) return 1;
  size_t nc = p->scratch_cap ? p->scratch_cap : 256;
  while (nc < n) {
    if (nc > SIZE_MAX / 2) return 0;
    nc *= 2;
  }
  char *s = (char *)realloc(p->scratch, nc);
  if (!s) return 0;
  p->scratch = s;
  p->scratch_cap = nc;
  return 1;
}

/* Decodes the payload of a T_STRING or quoted name (escapes checked by the
 * lexer) or copies a bare name into `dst` (at least slen + 1 bytes); returns
 * the decoded length. */
static size_t decode_into(const parser_t *p, const tok_t *t, char *dst) {
  const char *s = p->text + t->spos;
  size_t k = 0;
  if (t->kind != T_STRING && !t->quoted) {
    memcpy(dst, s, t->slen);
    k = t->slen;
  } else {
    for (size_t i = 0; i < t->slen;) {
      char c = s[i];
      if (c != '\\') {
        dst[k++] = c;
        i++;
        continue;
      }
      char e = s[i + 1];
      switch (e) {
        case 'n':
          dst[k++] = '\n';
          i += 2;
          break;
        case 't':
          dst[k++] = '\t';
          i += 2;
          break;
        case 'r':
          dst[k++] = '\r';
          i += 2;
          break;
        case 'x':
          dst[k++] = (char)(hex_val((unsigned char)s[i + 2]) * 16 +
                            hex_val((unsigned char)s[i + 3]));
          i += 4;
          break;
        default:
          dst[k++] = e;
          i += 2;
          break; /* \" and \\ */
      }
    }
  }
  dst[k] = 0;
  return k;
}

/* The token's string/name, decoded into scratch (valid until the next
 * scratch use). */
static dml_status_t tok_scratch(parser_t *p, const tok_t *t, const char **out,
                                size_t *out_len) {
  if (t->slen == SIZE_MAX || !scratch_reserve(p, t->slen + 1)) return oom();
  size_t n = decode_into(p, t, p->scratch);
  *out = p->scratch;
  if (out_len) *out_len = n;
  return DML_OK;
}

/* The token's string/name, decoded into the module's arena. */
static dml_status_t tok_arena(parser_t *p, const tok_t *t, const char **out) {
  char *d = (char *)dml_ir_alloc(p->m, t->slen + 1);
  if (!d) return oom();
  decode_into(p, t, d);
  *out = d;
  return DML_OK;
}

/* Parses an integer token (sign and magnitude) without reading past it. */
static dml_status_t tok_magnitude(parser_t *p, int *out_neg, uint64_t *out_mag) {
  const tok_t *t = &p->tok;
  if (t->kind != T_INT) return expected(p, "an integer");
  size_t i = t->pos, e = t->pos + t->len;
  int neg = p->text[i] == '-';
  if (neg) i++;
  uint64_t v = 0;
  for (; i < e; i++) {
    unsigned d = (unsigned)(p->text[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return expected(p, "an integer in 64-bit range");
    v = v * 10 + d;
  }
  *out_neg = neg;
  *out_mag = v;
  return DML_OK;
}

/* The current token as an int64 in [lo, hi] (`what` names it in errors);
 * advances. */
static dml_status_t parse_i64(parser_t *p, int64_t lo, const char *what, int64_t *out) {
  int neg = 0;
  uint64_t mag = 0;
  if (p->tok.kind != T_INT) return expected(p, what);
  DML_RETURN_IF_ERROR(tok_magnitude(p, &neg, &mag));
  int64_t v = 0;
  if (neg) {
    if (mag > (uint64_t)INT64_MAX + 1) return expected(p, what);
    v = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
  } else {
    if (mag > (uint64_t)INT64_MAX) return expected(p, what);
    v = (int64_t)mag;
  }
  if (v < lo) return expected(p, what);
  *out = v;
  return lex(p);
}

/* Copies a number token's text (with '-') into scratch, NUL-terminated. */
static dml_status_t number_text(parser_t *p, const char **out) {
  const tok_t *t = &p->tok;
  if (t->len > 400) return expected(p, "a number of at most 400 characters");
  if (!scratch_reserve(p, t->len + 1)) return oom();
  memcpy(p->scratch, p->text + t->pos, t->len);
  p->scratch[t->len] = 0;
  *out = p->scratch;
  return DML_OK;
}

static int is_float_tok(const parser_t *p) {
  return p->tok.kind == T_FLOAT || is_word(p, "inf") || is_word(p, "nan");
}

/* ==== types ============================================================== */

static dml_status_t parse_symref(parser_t *p, int32_t *out) {
  if (p->tok.kind != T_IDENT && p->tok.kind != T_STRING)
    return expected(p, "a symbol name");
  const char *name = NULL;
  DML_RETURN_IF_ERROR(tok_scratch(p, &p->tok, &name, NULL));
  int32_t s = dml_ir_module_find_symbol(p->m, name);
  if (s < 0) return expected(p, "a symbol declared with `sym NAME <= BOUND`");
  *out = s;
  return lex(p);
}

/* DTYPE '[' ( '?' | dim (',' dim)* )? ']' */
static dml_status_t parse_type(parser_t *p, dml_type_t *out) {
  dml_type_t t;
  memset(&t, 0, sizeof(t));
  if (is_punct(p, '?')) {
    t.dtype = DML_DTYPE_INVALID;
  } else if (p->tok.kind == T_IDENT) {
    t.dtype = dml_dtype_from_name(p->text + p->tok.pos, p->tok.len);
    if (t.dtype == DML_DTYPE_INVALID)
      return expected(
          p,
          "a dtype (f32 f16 bf16 f64 i8 u8 i16 u16 i32 u32 i64 u64 bool str f8e4m3fn "
          "f8e4m3fnuz f8e5m2 f8e5m2fnuz f8e8m0, or ?)");
  } else {
    return expected(p, "a type such as f32[2,batch]");
  }
  DML_RETURN_IF_ERROR(lex(p));
  DML_RETURN_IF_ERROR(expect_punct(p, '['));
  if (is_punct(p, '?')) {
    t.rank = DML_RANK_UNKNOWN;
    DML_RETURN_IF_ERROR(lex(p));
    DML_RETURN_IF_ERROR(expect_punct(p, ']'));
    *out = t;
    return DML_OK;
  }
  while (!is_punct(p, ']')) {
    if (t.rank == DML_MAX_RANK) return expected(p, "']' (at most 8 dims)");
    if (t.rank > 0) DML_RETURN_IF_ERROR(expect_punct(p, ','));
    dml_dim_t *d = &t.dims[t.rank];
    if (p->tok.kind == T_INT) {
      DML_RETURN_IF_ERROR(parse_i64(p, 0, "a dim >= 0", &d->value));
      d->sym = -1;
      if (is_punct(p, '*')) {
        DML_RETURN_IF_ERROR(lex(p));
        DML_RETURN_IF_ERROR(parse_symref(p, &d->sym));
      }
    } else if (p->tok.kind == T_IDENT || p->tok.kind == T_STRING) {
      d->value = 1;
      DML_RETURN_IF_ERROR(parse_symref(p, &d->sym));
    } else {
      return expected(p, "a dim (N, a symbol, or N*symbol)");
    }
    t.rank++;
  }
  DML_RETURN_IF_ERROR(lex(p));
  *out = t;
  return DML_OK;
}

/* Optional `mem(OFFSET, BYTES)`. */
static dml_status_t parse_mem(parser_t *p, dml_ir_value_t *v) {
  if (!is_word(p, "mem")) return DML_OK;
  DML_RETURN_IF_ERROR(lex(p));
  DML_RETURN_IF_ERROR(expect_punct(p, '('));
  int64_t off = 0, bytes = 0;
  DML_RETURN_IF_ERROR(parse_i64(p, 0, "an arena offset >= 0", &off));
  DML_RETURN_IF_ERROR(expect_punct(p, ','));
  DML_RETURN_IF_ERROR(parse_i64(p, INT64_MIN, "a size in bytes", &bytes));
  DML_RETURN_IF_ERROR(expect_punct(p, ')'));
  v->mem_offset = off;
  v->mem_bytes = bytes;
  return DML_OK;
}

/* ==== dense data ========================================================= */

static dml_status_t parse_elem(parser_t *p, dml_dtype_t dt, unsigned char *dst) {
  char what[64];
  /* float8 data prints as bytes (dense<0x...>): no decimal list */
  if (dml_dtype_is_float8(dt)) return expected(p, "dense<0x...> bytes for float8 data");
  if (dml_dtype_is_float(dt)) {
    if (p->tok.kind != T_INT && !is_float_tok(p)) {
      snprintf(what, sizeof(what), "a number for %s data", dml_dtype_name(dt));
      return expected(p, what);
    }
    const char *s = NULL;
    DML_RETURN_IF_ERROR(number_text(p, &s));
    dml_ir_text_float_from_str_(dt, s, dst);
    return lex(p);
  }
  if (dt == DML_DTYPE_BOOL) {
    uint8_t b;
    if (is_word(p, "true") || is_word(p, "false")) {
      b = is_word(p, "true");
    } else if (p->tok.kind == T_INT && p->tok.len == 1 &&
               (p->text[p->tok.pos] == '0' || p->text[p->tok.pos] == '1')) {
      b = p->text[p->tok.pos] == '1';
    } else {
      return expected(p, "true, false, 0 or 1 for bool data");
    }
    *dst = b;
    return lex(p);
  }
  snprintf(what, sizeof(what), "an integer in the range of %s", dml_dtype_name(dt));
  if (!dml_dtype_is_int(dt) || dml_dtype_size(dt) > 8)
    return expected(p, "data of a numeric dtype");
  if (p->tok.kind != T_INT) return expected(p, what);
  int neg = 0;
  uint64_t mag = 0;
  DML_RETURN_IF_ERROR(tok_magnitude(p, &neg, &mag));
  if (neg && mag == 0) neg = 0;
  uint64_t umax;
  int is_signed = dml_dtype_is_signed_int(dt);
  size_t es = dml_dtype_size(dt);
  umax = es == 8 ? UINT64_MAX : (((uint64_t)1 << (es * 8)) - 1);
  if (is_signed) {
    uint64_t pos_max = umax >> 1;
    if ((!neg && mag > pos_max) || (neg && mag > pos_max + 1)) return expected(p, what);
  } else if (neg || mag > umax) {
    return expected(p, what);
  }
  uint64_t bits = neg ? (uint64_t)0 - mag : mag; /* two's complement */
  /* Little-endian: the low `es` bytes. */
  for (size_t i = 0; i < es; i++) dst[i] = (unsigned char)(bits >> (8 * i));
  return lex(p);
}

/* dense<elided | 0xHEX | [elems]> for static `type`. *out_data is malloc'd
 * (NULL when empty) and holds exactly the type's bytes. */
static dml_status_t parse_dense(parser_t *p, const dml_type_t *type, size_t type_pos,
                                unsigned char **out_data, size_t *out_bytes) {
  char tbuf[160];
  dml_ir_type_str(p->m, type, tbuf, sizeof(tbuf));
  if (!is_word(p, "dense")) return expected(p, "dense<...>");
  if (!dml_type_is_static(type) || type->dtype == DML_DTYPE_INVALID)
    return err_at(p, type_pos,
                  "expected a static shape and a dtype for a value with dense data, "
                  "found %s",
                  tbuf);
  if (dml_dtype_is_string(type->dtype))
    return err_at(p, type_pos,
                  "dense data of dtype string cannot be written in IR text (found %s)",
                  tbuf);
  int64_t numel = dml_ir_type_numel_bound(p->m, type);
  size_t es = dml_dtype_size(type->dtype);
  if (numel < 0 || (uint64_t)numel > SIZE_MAX / es / 2)
    return err_at(p, type_pos, "expected a type of addressable size, found %s", tbuf);
  size_t want = (size_t)numel * es;
  DML_RETURN_IF_ERROR(lex(p));
  DML_RETURN_IF_ERROR(expect_punct(p, '<'));
  unsigned char *buf = NULL;
  size_t got = 0;
  if (is_word(p, "elided"))
    return expected(p,
                    "dense data (this text was printed with elided constants; print it "
                    "again without elision, elide_elements_over = 0, to parse it)");
  if (p->tok.kind == T_HEX) {
    size_t digits = p->tok.len - 2;
    if (digits % 2 || digits / 2 != want)
      return err_at(p, p->tok.pos,
                    "expected %zu bytes (%zu hex digits) of data for %s, found %zu hex "
                    "digits",
                    want, want * 2, tbuf, digits);
    if (want) {
      buf = (unsigned char *)malloc(want);
      if (!buf) return oom();
      const char *h = p->text + p->tok.pos + 2;
      for (size_t i = 0; i < want; i++)
        buf[i] = (unsigned char)(hex_val((unsigned char)h[2 * i]) * 16 +
                                 hex_val((unsigned char)h[2 * i + 1]));
    }
    got = want;
    dml_status_t st = lex(p);
    if (st) {
      free(buf);
      return st;
    }
  } else if (is_punct(p, '[')) {
    dml_status_t st = lex(p);
    size_t cap = 0;
    size_t count = 0;
    while (!st && !is_punct(p, ']')) {
      if (count && (st = expect_punct(p, ','))) break;
      if (got + es > want) {
        st = err_at(p, p->tok.pos, "expected %lld elements for %s, found more",
                    (long long)numel, tbuf);
        break;
      }
      if (got + es > cap) {
        size_t nc = cap ? cap * 2 : 64;
        if (nc > want) nc = want;
        unsigned char *nb = (unsigned char *)realloc(buf, nc);
        if (!nb) {
          st = oom();
          break;
        }
        buf = nb;
        cap = nc;
      }
      st = parse_elem(p, type->dtype, buf + got);
      got += es;
      count++;
    }
    if (!st && got != want)
      st = err_at(p, p->tok.pos, "expected %lld elements for %s, found %zu",
                  (long long)numel, tbuf, count);
    if (!st) st = lex(p);
    if (st) {
      free(buf);
      return st;
    }
  } else {
    return expected(p, "dense data: [elements], 0xHEX bytes or elided");
  }
  dml_status_t st = expect_punct(p, '>');
  if (st) {
    free(buf);
    return st;
  }
  *out_data = buf;
  *out_bytes = got;
  return DML_OK;
}

/* ==== attributes ========================================================= */

/* Element tokens of a list, collected before its kind is known. */
typedef struct tok_list {
  tok_t *t;
  size_t n, cap;
} tok_list_t;

static int tok_list_push(tok_list_t *l, const tok_t *t) {
  if (l->n == l->cap) {
    size_t nc = l->cap ? l->cap * 2 : 16;
    tok_t *nt = (tok_t *)realloc(l->t, nc * sizeof(*nt));
    if (!nt) return 0;
    l->t = nt;
    l->cap = nc;
  }
  l->t[l->n++] = *t;
  return 1;
}

enum { LIST_ANY, LIST_INTS, LIST_FLOATS, LIST_STRINGS };

/* '[' elems ']' (the current token is '['); kind LIST_ANY infers it. */
static dml_status_t parse_list_attr(parser_t *p, dml_ir_node_t *n, const char *name,
                                    int kind) {
  size_t open = p->tok.pos;
  tok_list_t l = {0};
  dml_status_t st = lex(p);
  int has_float = 0, has_string = 0, has_int = 0;
  while (!st && !is_punct(p, ']')) {
    if (l.n && (st = expect_punct(p, ','))) break;
    if (p->tok.kind == T_INT)
      has_int = 1;
    else if (is_float_tok(p))
      has_float = 1;
    else if (p->tok.kind == T_STRING)
      has_string = 1;
    else {
      st = expected(p, "a list element (an integer, a float or a string)");
      break;
    }
    if (!tok_list_push(&l, &p->tok))
      st = oom();
    else
      st = lex(p);
  }
  if (!st && kind == LIST_ANY) {
    if (!l.n)
      st = err_at(
          p, open,
          "expected a typed empty list (ints[], floats[] or strings[]), found '[]'");
    kind = has_string ? LIST_STRINGS : has_float ? LIST_FLOATS : LIST_INTS;
  }
  if (!st && ((kind == LIST_STRINGS && (has_int || has_float)) ||
              (kind != LIST_STRINGS && has_string) || (kind == LIST_INTS && has_float)))
    st = err_at(p, open, "expected a list of %s only",
                kind == LIST_STRINGS ? "strings"
                : kind == LIST_INTS  ? "integers"
                                     : "numbers");
  void *arr = NULL;
  if (!st && l.n) {
    arr = calloc(l.n, 8);
    if (!arr) st = oom();
  }
  tok_t close = p->tok;
  for (size_t i = 0; !st && i < l.n; i++) {
    p->tok = l.t[i]; /* re-read each element token for conversion and errors */
    if (kind == LIST_INTS) {
      int neg = 0;
      uint64_t mag = 0;
      st = tok_magnitude(p, &neg, &mag);
      if (!st && (neg ? mag > (uint64_t)INT64_MAX + 1 : mag > (uint64_t)INT64_MAX))
        st = expected(p, "an integer in int64 range");
      if (!st) ((int64_t *)arr)[i] = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    } else if (kind == LIST_FLOATS) {
      const char *s = NULL;
      st = number_text(p, &s);
      if (!st) dml_ir_text_float_from_str_(DML_DTYPE_F64, s, (double *)arr + i);
    } else {
      st = tok_arena(p, &l.t[i], &((const char **)arr)[i]);
    }
  }
  p->tok = close;
  if (!st) {
    if (kind == LIST_INTS)
      st = dml_ir_node_set_attr_ints(n, name, (const int64_t *)arr, l.n);
    else if (kind == LIST_FLOATS)
      st = dml_ir_node_set_attr_floats(n, name, (const double *)arr, l.n);
    else
      st = dml_ir_node_set_attr_strings(n, name, (const char *const *)arr, l.n);
    st = wrap(p, open, st);
  }
  if (!st) st = lex(p); /* past ']' */
  free(arr);
  free(l.t);
  return st;
}

static dml_status_t parse_attr_value(parser_t *p, dml_ir_node_t *n, const char *name) {
  size_t pos = p->tok.pos;
  if (p->tok.kind == T_INT) {
    int64_t v = 0;
    DML_RETURN_IF_ERROR(parse_i64(p, INT64_MIN, "an integer in int64 range", &v));
    return wrap(p, pos, dml_ir_node_set_attr_int(n, name, v));
  }
  if (is_float_tok(p)) {
    const char *s = NULL;
    double v = 0;
    DML_RETURN_IF_ERROR(number_text(p, &s));
    dml_ir_text_float_from_str_(DML_DTYPE_F64, s, &v);
    DML_RETURN_IF_ERROR(lex(p));
    return wrap(p, pos, dml_ir_node_set_attr_float(n, name, v));
  }
  if (p->tok.kind == T_STRING) {
    const char *s = NULL;
    DML_RETURN_IF_ERROR(tok_scratch(p, &p->tok, &s, NULL));
    DML_RETURN_IF_ERROR(wrap(p, pos, dml_ir_node_set_attr_string(n, name, s)));
    return lex(p);
  }
  if (is_punct(p, '[')) return parse_list_attr(p, n, name, LIST_ANY);
  int kind = is_word(p, "ints")      ? LIST_INTS
             : is_word(p, "floats")  ? LIST_FLOATS
             : is_word(p, "strings") ? LIST_STRINGS
                                     : LIST_ANY;
  if (kind != LIST_ANY) {
    DML_RETURN_IF_ERROR(lex(p));
    if (!is_punct(p, '[')) return expected(p, "'['");
    return parse_list_attr(p, n, name, kind);
  }
  if (is_word(p, "tensor")) {
    DML_RETURN_IF_ERROR(lex(p));
    DML_RETURN_IF_ERROR(expect_punct(p, '<'));
    size_t type_pos = p->tok.pos;
    dml_type_t ty;
    DML_RETURN_IF_ERROR(parse_type(p, &ty));
    DML_RETURN_IF_ERROR(expect_punct(p, '>'));
    unsigned char *data = NULL;
    size_t bytes = 0;
    DML_RETURN_IF_ERROR(parse_dense(p, &ty, type_pos, &data, &bytes));
    dml_tensor_t t;
    memset(&t, 0, sizeof(t));
    t.dtype = ty.dtype;
    t.rank = ty.rank;
    for (int32_t i = 0; i < ty.rank; i++) t.dims[i] = ty.dims[i].value;
    t.data = data;
    dml_status_t st = wrap(p, pos, dml_ir_node_set_attr_tensor(n, name, &t));
    free(data);
    return st;
  }
  return expected(p,
                  "an attribute value (integer, float, \"string\", [list], ints[], "
                  "floats[], strings[] or tensor<TYPE> dense<...>)");
}

/* '{' (name '=' value (',' name '=' value)*)? '}' */
static dml_status_t parse_attrs(parser_t *p, dml_ir_node_t *n) {
  DML_RETURN_IF_ERROR(lex(p)); /* '{' */
  int first = 1;
  while (!is_punct(p, '}')) {
    if (!first) DML_RETURN_IF_ERROR(expect_punct(p, ','));
    first = 0;
    if (p->tok.kind != T_IDENT && p->tok.kind != T_STRING)
      return expected(p, "an attribute name");
    const char *name = NULL;
    DML_RETURN_IF_ERROR(tok_arena(p, &p->tok, &name));
    if (dml_ir_node_attr(n, name)) return expected(p, "a new attribute name (each once)");
    DML_RETURN_IF_ERROR(lex(p));
    DML_RETURN_IF_ERROR(expect_punct(p, '='));
    DML_RETURN_IF_ERROR(parse_attr_value(p, n, name));
  }
  return lex(p);
}

/* ==== values ============================================================= */

static int is_value_ref(const parser_t *p) {
  return p->tok.kind == T_VNUM || p->tok.kind == T_VNAME;
}

/* Looks up a local value (%N or %name) by token. */
static dml_status_t lookup_local(parser_t *p, const tok_t *t, dml_ir_value_t **out) {
  const char *k = p->text + t->spos;
  size_t len = t->slen;
  if (t->quoted) DML_RETURN_IF_ERROR(tok_scratch(p, t, &k, &len));
  *out = (dml_ir_value_t *)map_get(&p->values, k, len,
                                   t->kind == T_VNUM ? KEY_NUM : KEY_NAME);
  return DML_OK;
}

/* Defines local value `v` under token `t` (names it unless %N). */
static dml_status_t define_local(parser_t *p, const tok_t *t, dml_ir_value_t *v) {
  dml_ir_value_t *old;
  DML_RETURN_IF_ERROR(lookup_local(p, t, &old));
  if (old) {
    p->tok = *t;
    return expected(p, "a value name not defined before in this function");
  }
  const char *key = NULL;
  size_t len = 0;
  if (t->kind == T_VNUM) {
    key = p->text + t->spos;
    len = t->slen;
  } else {
    DML_RETURN_IF_ERROR(tok_arena(p, t, &key));
    len = strlen(key);
    v->name = key;
  }
  if (!map_put(&p->values, key, len, t->kind == T_VNUM ? KEY_NUM : KEY_NAME, v))
    return oom();
  return DML_OK;
}

/* An operand: %value, @global or `_` (when `allow_absent`). */
static dml_status_t parse_operand(parser_t *p, int allow_absent, dml_ir_value_t **out) {
  dml_ir_value_t *v = NULL;
  if (allow_absent && is_word(p, "_")) {
    *out = NULL;
    return lex(p);
  }
  if (is_value_ref(p)) {
    DML_RETURN_IF_ERROR(lookup_local(p, &p->tok, &v));
    if (!v) return expected(p, "a value defined before this use");
  } else if (p->tok.kind == T_GNAME) {
    const char *k = p->text + p->tok.spos;
    size_t len = p->tok.slen;
    if (p->tok.quoted) DML_RETURN_IF_ERROR(tok_scratch(p, &p->tok, &k, &len));
    v = (dml_ir_value_t *)map_get(&p->globals, k, len, KEY_NAME);
    if (!v) return expected(p, "a global declared before this use");
  } else {
    return expected(p, allow_absent ? "an operand (%value, @global or _)"
                                    : "a value (%value or @global)");
  }
  *out = v;
  return lex(p);
}

/* ==== module items ======================================================= */

/* derived(A, B|_, MUL, ADD, DIV) of symbol `index` (the `derived` word is
 * the current token): sources declared before it, mul >= 0, div >= 1, and
 * the bound at least the formula at the sources' bounds. */
static dml_status_t parse_derived(parser_t *p, int32_t index) {
  size_t pos = p->tok.pos;
  int32_t src[2] = {-1, -1};
  int64_t v[3] = {0, 0, 0};
  DML_RETURN_IF_ERROR(lex(p));
  DML_RETURN_IF_ERROR(expect_punct(p, '('));
  for (int k = 0; k < 2; k++) {
    if (k == 1 && is_word(p, "_")) {
      DML_RETURN_IF_ERROR(lex(p));
    } else {
      DML_RETURN_IF_ERROR(parse_symref(p, &src[k]));
    }
    DML_RETURN_IF_ERROR(expect_punct(p, ','));
  }
  DML_RETURN_IF_ERROR(parse_i64(p, 0, "a multiplier >= 0", &v[0]));
  DML_RETURN_IF_ERROR(expect_punct(p, ','));
  DML_RETURN_IF_ERROR(parse_i64(p, INT64_MIN, "an offset", &v[1]));
  DML_RETURN_IF_ERROR(expect_punct(p, ','));
  DML_RETURN_IF_ERROR(parse_i64(p, 1, "a divisor >= 1", &v[2]));
  DML_RETURN_IF_ERROR(expect_punct(p, ')'));
  dml_ir_symbol_t *sy = &p->m->symbols[index];
  int64_t at = 0;
  for (int k = 0; k < 2; k++)
    if (src[k] == index ||
        (src[k] >= 0 && (p->m->symbols[src[k]].flags & DML_IR_SYMBOL_DATA_DEPENDENT)))
      return err_at(p, pos, "derived symbol '%s' needs earlier input or derived sources",
                    sy->name);
  if (!dml_sym_derived_eval(v[0], v[1], v[2], p->m->symbols[src[0]].bound,
                            src[1] >= 0 ? p->m->symbols[src[1]].bound : 1, &at) ||
      at > sy->bound)
    return err_at(p, pos,
                  "derived symbol '%s': its bound %lld is below its formula at the "
                  "sources' bounds",
                  sy->name, (long long)sy->bound);
  sy->flags |= DML_IR_SYMBOL_DERIVED;
  sy->src[0] = src[0];
  sy->src[1] = src[1];
  sy->mul = v[0];
  sy->add = v[1];
  sy->div = v[2];
  return DML_OK;
}

/* sym NAME <= BOUND (dynamic | derived(A, B|_, MUL, ADD, DIV))? */
static dml_status_t parse_sym(parser_t *p) {
  DML_RETURN_IF_ERROR(lex(p));
  if (p->tok.kind != T_IDENT && p->tok.kind != T_STRING)
    return expected(p, "a symbol name");
  tok_t name_tok = p->tok;
  const char *name = NULL;
  DML_RETURN_IF_ERROR(tok_arena(p, &name_tok, &name));
  if (dml_ir_module_find_symbol(p->m, name) >= 0)
    return expected(p, "a new symbol name (each declared once)");
  DML_RETURN_IF_ERROR(lex(p));
  if (p->tok.kind != T_LE) return expected(p, "'<='");
  DML_RETURN_IF_ERROR(lex(p));
  size_t bpos = p->tok.pos;
  int64_t bound = 0;
  DML_RETURN_IF_ERROR(parse_i64(p, 1, "an upper bound >= 1", &bound));
  int32_t index = -1;
  DML_RETURN_IF_ERROR(wrap(p, bpos, dml_ir_module_add_symbol(p->m, name, bound, &index)));
  if (is_word(p, "derived")) return parse_derived(p, index);
  if (!is_word(p, "dynamic")) return DML_OK;
  p->m->symbols[index].flags |= DML_IR_SYMBOL_DATA_DEPENDENT;
  return lex(p);
}

/* global @NAME : TYPE mem(..)? param? state? (= dense<...>)? */
static dml_status_t parse_global(parser_t *p) {
  DML_RETURN_IF_ERROR(lex(p));
  if (p->tok.kind != T_GNAME) return expected(p, "a global name (@name)");
  tok_t name_tok = p->tok;
  const char *name = NULL;
  DML_RETURN_IF_ERROR(tok_arena(p, &name_tok, &name));
  if (map_get(&p->globals, name, strlen(name), KEY_NAME))
    return expected(p, "a new global name (each declared once)");
  DML_RETURN_IF_ERROR(lex(p));
  DML_RETURN_IF_ERROR(expect_punct(p, ':'));
  size_t type_pos = p->tok.pos;
  dml_type_t type;
  DML_RETURN_IF_ERROR(parse_type(p, &type));
  dml_ir_value_t tmp; /* collects mem() before the global exists */
  tmp.mem_offset = -1;
  tmp.mem_bytes = -1;
  DML_RETURN_IF_ERROR(parse_mem(p, &tmp));
  uint32_t flags = 0;
  for (;;) {
    if (is_word(p, "param"))
      flags |= DML_IR_GLOBAL_PARAM;
    else if (is_word(p, "state"))
      flags |= DML_IR_GLOBAL_STATE;
    else
      break;
    DML_RETURN_IF_ERROR(lex(p));
  }
  unsigned char *data = NULL;
  size_t bytes = 0;
  int has_data = 0;
  if (is_punct(p, '=')) {
    DML_RETURN_IF_ERROR(lex(p));
    DML_RETURN_IF_ERROR(parse_dense(p, &type, type_pos, &data, &bytes));
    has_data = 1;
  }
  static const unsigned char empty[1] = {0};
  dml_ir_value_t *g = NULL;
  dml_status_t st = dml_ir_module_add_global(
      p->m, name, &type, has_data ? (data ? data : empty) : NULL, bytes, flags, &g);
  free(data);
  DML_RETURN_IF_ERROR(wrap(p, name_tok.pos, st));
  g->mem_offset = tmp.mem_offset;
  g->mem_bytes = tmp.mem_bytes;
  if (!map_put(&p->globals, g->name, strlen(g->name), KEY_NAME, g)) return oom();
  return DML_OK;
}

/* Growable arrays of the current statement. */
typedef struct stmt_bufs {
  tok_t *res;
  size_t n_res, cap_res;
  dml_ir_value_t **ops;
  size_t n_ops, cap_ops;
  dml_type_t *types;
  size_t n_types, cap_types;
} stmt_bufs_t;

static int grow_buf(void **arr, size_t *cap, size_t n, size_t elem) {
  if (n < *cap) return 1;
  size_t nc = *cap ? *cap * 2 : 8;
  void *na = realloc(*arr, nc * elem);
  if (!na) return 0;
  *arr = na;
  *cap = nc;
  return 1;
}

/* One node: RESULTS = Op(OPERANDS) {ATTRS}? (: TYPES)? loc("...")? */
static dml_status_t parse_node(parser_t *p, stmt_bufs_t *b) {
  b->n_res = b->n_ops = 0;
  if (is_value_ref(p)) {
    for (;;) {
      if (!is_value_ref(p)) return expected(p, "a result name (%name or %N)");
      if (!grow_buf((void **)&b->res, &b->cap_res, b->n_res, sizeof(tok_t))) return oom();
      b->res[b->n_res++] = p->tok;
      DML_RETURN_IF_ERROR(lex(p));
      if (!is_punct(p, ',')) break;
      DML_RETURN_IF_ERROR(lex(p));
    }
    DML_RETURN_IF_ERROR(expect_punct(p, '='));
  }
  if (p->tok.kind != T_IDENT) return expected(p, "an op name or 'return'");
  tok_t op_tok = p->tok;
  dml_op_t op = dml_op_from_name(p->text + op_tok.pos, op_tok.len);
  if (op == DML_OP_INVALID) return expected(p, "a known op (see ops.def)");
  DML_RETURN_IF_ERROR(lex(p));
  DML_RETURN_IF_ERROR(expect_punct(p, '('));
  while (!is_punct(p, ')')) {
    if (b->n_ops) DML_RETURN_IF_ERROR(expect_punct(p, ','));
    if (!grow_buf((void **)&b->ops, &b->cap_ops, b->n_ops, sizeof(*b->ops))) return oom();
    DML_RETURN_IF_ERROR(parse_operand(p, 1, &b->ops[b->n_ops]));
    b->n_ops++;
  }
  DML_RETURN_IF_ERROR(lex(p));
  const dml_op_info_t *info = dml_op_info(op);
  if ((long long)b->n_ops < info->min_inputs ||
      (info->max_inputs >= 0 && (long long)b->n_ops > info->max_inputs)) {
    char range[48];
    if (info->max_inputs < 0)
      snprintf(range, sizeof(range), "at least %d", info->min_inputs);
    else if (info->max_inputs == info->min_inputs)
      snprintf(range, sizeof(range), "%d", info->min_inputs);
    else
      snprintf(range, sizeof(range), "%d to %d", info->min_inputs, info->max_inputs);
    return err_at(p, op_tok.pos, "expected %s operands for %s, found %zu", range,
                  info->name, b->n_ops);
  }
  if ((long long)b->n_res < info->min_outputs ||
      (info->max_outputs >= 0 && (long long)b->n_res > info->max_outputs)) {
    char range[48];
    if (info->max_outputs < 0)
      snprintf(range, sizeof(range), "at least %d", info->min_outputs);
    else if (info->max_outputs == info->min_outputs)
      snprintf(range, sizeof(range), "%d", info->min_outputs);
    else
      snprintf(range, sizeof(range), "%d to %d", info->min_outputs, info->max_outputs);
    return err_at(p, b->n_res ? b->res[0].pos : op_tok.pos,
                  "expected %s results for %s, found %zu", range, info->name, b->n_res);
  }
  dml_ir_node_t *n = NULL;
  DML_RETURN_IF_ERROR(wrap(p, op_tok.pos,
                           dml_ir_node_create(p->f, op, NULL, (uint32_t)b->n_ops, b->ops,
                                              (uint32_t)b->n_res, NULL, &n)));
  if (is_punct(p, '{')) DML_RETURN_IF_ERROR(parse_attrs(p, n));
  if (is_punct(p, ':')) {
    DML_RETURN_IF_ERROR(lex(p));
    for (size_t i = 0;; i++) {
      if (i == b->n_res) {
        char what[64];
        snprintf(what, sizeof(what), "%zu result types (one per result)", b->n_res);
        return expected(p, what);
      }
      DML_RETURN_IF_ERROR(parse_type(p, &n->outputs[i]->type));
      DML_RETURN_IF_ERROR(parse_mem(p, n->outputs[i]));
      if (!is_punct(p, ',')) {
        if (i + 1 != b->n_res) {
          char what[64];
          snprintf(what, sizeof(what), "',' and %zu more result types", b->n_res - i - 1);
          return expected(p, what);
        }
        break;
      }
      DML_RETURN_IF_ERROR(lex(p));
    }
  }
  if (is_word(p, "loc")) {
    DML_RETURN_IF_ERROR(lex(p));
    DML_RETURN_IF_ERROR(expect_punct(p, '('));
    if (p->tok.kind != T_STRING) return expected(p, "a quoted node name");
    DML_RETURN_IF_ERROR(tok_arena(p, &p->tok, &n->name));
    DML_RETURN_IF_ERROR(lex(p));
    DML_RETURN_IF_ERROR(expect_punct(p, ')'));
  }
  for (size_t i = 0; i < b->n_res; i++)
    DML_RETURN_IF_ERROR(define_local(p, &b->res[i], n->outputs[i]));
  return DML_OK;
}

static dml_status_t parse_func_body(parser_t *p, stmt_bufs_t *b, size_t header_pos) {
  dml_ir_function_t *f = p->f;
  /* '(' args ')' */
  DML_RETURN_IF_ERROR(expect_punct(p, '('));
  while (!is_punct(p, ')')) {
    if (f->n_args) DML_RETURN_IF_ERROR(expect_punct(p, ','));
    if (!is_value_ref(p)) return expected(p, "an argument (%name: TYPE)");
    tok_t arg_tok = p->tok;
    DML_RETURN_IF_ERROR(lex(p));
    DML_RETURN_IF_ERROR(expect_punct(p, ':'));
    dml_type_t t;
    DML_RETURN_IF_ERROR(parse_type(p, &t));
    dml_ir_value_t *v = NULL;
    DML_RETURN_IF_ERROR(wrap(p, arg_tok.pos, dml_ir_function_add_arg(f, NULL, &t, &v)));
    DML_RETURN_IF_ERROR(parse_mem(p, v));
    DML_RETURN_IF_ERROR(define_local(p, &arg_tok, v));
  }
  DML_RETURN_IF_ERROR(lex(p));
  /* '->' '(' types ')' */
  if (p->tok.kind != T_ARROW) return expected(p, "'->'");
  DML_RETURN_IF_ERROR(lex(p));
  DML_RETURN_IF_ERROR(expect_punct(p, '('));
  b->n_types = 0;
  while (!is_punct(p, ')')) {
    if (b->n_types) DML_RETURN_IF_ERROR(expect_punct(p, ','));
    if (!grow_buf((void **)&b->types, &b->cap_types, b->n_types, sizeof(dml_type_t)))
      return oom();
    DML_RETURN_IF_ERROR(parse_type(p, &b->types[b->n_types]));
    b->n_types++;
  }
  DML_RETURN_IF_ERROR(lex(p));
  if (is_word(p, "arena")) {
    DML_RETURN_IF_ERROR(lex(p));
    DML_RETURN_IF_ERROR(expect_punct(p, '('));
    DML_RETURN_IF_ERROR(parse_i64(p, 0, "an arena size >= 0", &f->arena_bytes));
    DML_RETURN_IF_ERROR(expect_punct(p, ')'));
  }
  DML_RETURN_IF_ERROR(expect_punct(p, '{'));
  while (!is_word(p, "return")) DML_RETURN_IF_ERROR(parse_node(p, b));
  size_t ret_pos = p->tok.pos;
  DML_RETURN_IF_ERROR(lex(p));
  /* return values: reuse the operand buffer. */
  b->n_ops = 0;
  while (!is_punct(p, '}')) {
    if (b->n_ops) DML_RETURN_IF_ERROR(expect_punct(p, ','));
    if (!grow_buf((void **)&b->ops, &b->cap_ops, b->n_ops, sizeof(*b->ops))) return oom();
    size_t vpos = p->tok.pos;
    DML_RETURN_IF_ERROR(parse_operand(p, 0, &b->ops[b->n_ops]));
    if (b->n_ops < b->n_types &&
        !dml_type_equal(&b->ops[b->n_ops]->type, &b->types[b->n_ops])) {
      char want[160], got[160];
      dml_ir_type_str(p->m, &b->types[b->n_ops], want, sizeof(want));
      dml_ir_type_str(p->m, &b->ops[b->n_ops]->type, got, sizeof(got));
      return err_at(p, vpos,
                    "expected a value of type %s (result %zu of the function's header), "
                    "found a value of type %s",
                    want, b->n_ops, got);
    }
    b->n_ops++;
  }
  if (b->n_ops != b->n_types)
    return err_at(p, ret_pos,
                  "expected %zu return values (the header lists %zu result types), "
                  "found %zu",
                  b->n_types, b->n_types, b->n_ops);
  (void)header_pos;
  DML_RETURN_IF_ERROR(
      wrap(p, ret_pos, dml_ir_function_set_results(f, (uint32_t)b->n_ops, b->ops)));
  return lex(p); /* past '}' */
}

/* func @NAME(ARGS) -> (TYPES) arena(N)? { NODES return VALUES } */
static dml_status_t parse_func(parser_t *p) {
  size_t header_pos = p->tok.pos;
  DML_RETURN_IF_ERROR(lex(p));
  if (p->tok.kind != T_GNAME) return expected(p, "a function name (@name)");
  const char *name = NULL;
  DML_RETURN_IF_ERROR(tok_scratch(p, &p->tok, &name, NULL));
  if (dml_ir_module_find_function(p->m, name))
    return expected(p, "a new function name (each defined once)");
  DML_RETURN_IF_ERROR(wrap(p, p->tok.pos, dml_ir_function_create(p->m, name, &p->f)));
  DML_RETURN_IF_ERROR(lex(p));
  map_clear(&p->values);
  stmt_bufs_t b;
  memset(&b, 0, sizeof(b));
  dml_status_t st = parse_func_body(p, &b, header_pos);
  free(b.res);
  free(b.ops);
  free(b.types);
  map_clear(&p->values);
  p->f = NULL;
  return st;
}

static dml_status_t parse_items(parser_t *p, int in_module) {
  for (;;) {
    if (in_module && is_punct(p, '}')) return DML_OK;
    if (!in_module && p->tok.kind == T_EOF) return DML_OK;
    if (is_word(p, "sym"))
      DML_RETURN_IF_ERROR(parse_sym(p));
    else if (is_word(p, "global"))
      DML_RETURN_IF_ERROR(parse_global(p));
    else if (is_word(p, "func"))
      DML_RETURN_IF_ERROR(parse_func(p));
    else
      return expected(p, in_module ? "'sym', 'global', 'func' or '}'"
                                   : "'module', 'sym', 'global' or 'func'");
  }
}

static dml_status_t parse_top(parser_t *p) {
  DML_RETURN_IF_ERROR(lex(p));
  if (is_word(p, "module")) {
    DML_RETURN_IF_ERROR(lex(p));
    DML_RETURN_IF_ERROR(expect_punct(p, '{'));
    DML_RETURN_IF_ERROR(parse_items(p, 1));
    DML_RETURN_IF_ERROR(lex(p));
    if (p->tok.kind != T_EOF) return expected(p, "end of input after the module");
    return DML_OK;
  }
  return parse_items(p, 0);
}

/* ==== public API ========================================================= */

dml_status_t dml_ir_parse(const char *text, size_t len, const char *filename,
                          dml_ir_module_t **out_module) {
  if (!out_module || (!text && len))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "ir.parse", "no text or output");
  parser_t p;
  memset(&p, 0, sizeof(p));
  p.text = text ? text : "";
  p.len = len;
  p.file = filename ? filename : "<input>";
  DML_RETURN_IF_ERROR(dml_ir_module_create(&p.m));
  dml_status_t st = parse_top(&p);
  map_clear(&p.values);
  map_clear(&p.globals);
  free(p.scratch);
  if (st) {
    dml_ir_module_release(p.m);
    return st;
  }
  *out_module = p.m;
  return DML_OK;
}

dml_status_t dml_ir_parse_file(const char *path, dml_ir_module_t **out_module) {
  /* Only a regular file (a FIFO is refused, not waited on). */
  uint8_t *bytes = NULL;
  size_t n = 0;
  DML_RETURN_IF_ERROR(dml_file_read_all("ir.parse", path, &bytes, &n));
  char *buf = (char *)bytes;
  dml_status_t st = dml_ir_parse(buf, n, path, out_module);
  free(buf);
  return st;
}
