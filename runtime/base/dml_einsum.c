/*
 * dml_einsum.c — Einsum equation parsing (ONNX Einsum-12; numpy einsum
 * subscript rules). See dml_einsum.h.
 */
#include "dml_einsum.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int err_out(char *err, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int err_out(char *err, size_t cap, const char *fmt, ...) {
  if (cap) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
  }
  return -1;
}

static int is_letter(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

/* One term: up to DML_MAX_RANK letters and at most one ellipsis. */
typedef struct term {
  int n;      /* letters */
  char l[64]; /* letters in order */
  int ell;    /* position of the ellipsis among the letters, -1 none */
} term_t;

/* Parses one term from *p up to a ',' '-' or end. */
static int parse_term(const char **pp, term_t *t, char *err, size_t cap) {
  const char *p = *pp;
  t->n = 0;
  t->ell = -1;
  for (;; p++) {
    char ch = *p;
    if (ch == ' ') continue;
    if (ch == '\0' || ch == ',' || ch == '-') break;
    if (ch == '.') {
      if (p[1] != '.' || p[2] != '.')
        return err_out(err, cap, "'.' must be part of an ellipsis \"...\"");
      if (t->ell >= 0) return err_out(err, cap, "a term has more than one ellipsis");
      t->ell = t->n;
      p += 2;
      continue;
    }
    if (!is_letter(ch))
      return err_out(err, cap, "invalid character '%c' in equation", ch);
    if (t->n >= (int)sizeof(t->l)) return err_out(err, cap, "term is too long");
    t->l[t->n++] = ch;
  }
  *pp = p;
  return 0;
}

int dml_einsum_parse(const char *eq, int n_in, const int32_t *in_ranks, dml_einsum_t *out,
                     char *err, size_t cap) {
  if (cap) err[0] = '\0';
  if (!eq) return err_out(err, cap, "equation is missing");
  if (n_in < 1 || n_in > DML_EINSUM_MAX_IN)
    return err_out(err, cap, "%d inputs (1..%d supported)", n_in, DML_EINSUM_MAX_IN);
  dml_einsum_t e;
  memset(&e, 0, sizeof e);
  e.n_in = n_in;
  term_t terms[DML_EINSUM_MAX_IN], oterm;
  const char *p = eq;
  int k = 0;
  for (;;) {
    if (k >= n_in)
      return err_out(err, cap, "equation has more terms than the %d inputs", n_in);
    if (parse_term(&p, &terms[k], err, cap)) return -1;
    k++;
    if (*p == ',') {
      p++;
      continue;
    }
    break;
  }
  if (k != n_in)
    return err_out(err, cap, "equation has %d input terms for %d inputs", k, n_in);
  int explicit_out = 0;
  if (*p == '-') {
    if (p[1] != '>') return err_out(err, cap, "expected \"->\"");
    p += 2;
    if (parse_term(&p, &oterm, err, cap)) return -1;
    if (*p != '\0') return err_out(err, cap, "unexpected '%c' after the output", *p);
    explicit_out = 1;
  }
  /* Ellipsis dims per input. */
  int n_ell = 0;
  int ell_n[DML_EINSUM_MAX_IN];
  for (int i = 0; i < n_in; i++) {
    const term_t *t = &terms[i];
    int32_t r = in_ranks[i];
    if (r < 0 || r > DML_MAX_RANK)
      return err_out(err, cap, "input %d has rank %d", i, (int)r);
    if (t->ell < 0) {
      if (t->n != r)
        return err_out(err, cap, "term %d has %d subscripts for an input of rank %d", i,
                       t->n, (int)r);
      ell_n[i] = 0;
    } else {
      if (t->n > r)
        return err_out(err, cap, "term %d has %d subscripts for an input of rank %d", i,
                       t->n, (int)r);
      ell_n[i] = r - t->n;
      if (ell_n[i] > n_ell) n_ell = ell_n[i];
    }
  }
  e.n_ellipsis = n_ell;
  e.n_labels = n_ell;
  for (int i = 0; i < n_ell; i++) e.letter[i] = '.';
  int id_of[128];
  int count[128];
  for (int i = 0; i < 128; i++) id_of[i] = -1, count[i] = 0;
  for (int i = 0; i < n_in; i++) {
    const term_t *t = &terms[i];
    int d = 0;
    e.in_rank[i] = in_ranks[i];
    for (int j = 0; j <= t->n; j++) {
      if (j == t->ell)
        for (int q = 0; q < ell_n[i]; q++)
          e.in_labels[i][d++] = (int8_t)(n_ell - ell_n[i] + q);
      if (j == t->n) break;
      unsigned char ch = (unsigned char)t->l[j];
      if (id_of[ch] < 0) {
        id_of[ch] = e.n_labels;
        e.letter[e.n_labels++] = (char)ch;
      }
      count[ch]++;
      e.in_labels[i][d++] = (int8_t)id_of[ch];
    }
  }
  if (explicit_out) {
    int orank = oterm.n + (oterm.ell >= 0 ? n_ell : 0);
    if (orank > DML_MAX_RANK)
      return err_out(err, cap, "output has rank %d > %d", orank, DML_MAX_RANK);
    int d = 0, seen[128] = {0};
    for (int j = 0; j <= oterm.n; j++) {
      if (j == oterm.ell)
        for (int q = 0; q < n_ell; q++) e.out_labels[d++] = (int8_t)q;
      if (j == oterm.n) break;
      unsigned char ch = (unsigned char)oterm.l[j];
      if (id_of[ch] < 0)
        return err_out(err, cap, "output subscript '%c' does not occur in an input", ch);
      if (seen[ch]++) return err_out(err, cap, "output subscript '%c' is repeated", ch);
      e.out_labels[d++] = (int8_t)id_of[ch];
    }
    e.out_rank = d;
  } else {
    int d = 0;
    for (int q = 0; q < n_ell; q++) e.out_labels[d++] = (int8_t)q;
    for (int ch = 0; ch < 128; ch++)
      if (count[ch] == 1) {
        if (d >= DML_MAX_RANK)
          return err_out(err, cap, "output would have rank > %d", DML_MAX_RANK);
        e.out_labels[d++] = (int8_t)id_of[ch];
      }
    e.out_rank = d;
  }
  *out = e;
  return 0;
}
