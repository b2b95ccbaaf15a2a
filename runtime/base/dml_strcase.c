/* dml_strcase.c — StringNormalizer's locale rule (dml_strcase.h). */
#include "dml_strcase.h"

#include <stdio.h>
#include <string.h>

static int is_alpha(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static int is_digit(char ch) {
  return ch >= '0' && ch <= '9';
}

static int is_word(char ch) {
  return is_alpha(ch) || is_digit(ch) || ch == '-' || ch == '_';
}

/* The number of characters from s[0] for which `pred` holds. */
static size_t span(const char *s, int (*pred)(char)) {
  size_t n = 0;
  while (s[n] && pred(s[n])) n++;
  return n;
}

int dml_strcase_locale(const char *locale, dml_strcase_rule_t *out, char *err,
                       size_t cap) {
  if (cap) err[0] = 0;
  *out = DML_STRCASE_UNICODE;
  if (!locale || !locale[0]) return 0;
  if (!strcmp(locale, "C") || !strcmp(locale, "POSIX")) {
    *out = DML_STRCASE_ASCII;
    return 0;
  }
  const char *p = locale;
  size_t lang = span(p, is_alpha);
  int c_utf8 = lang == 1 && p[0] == 'C' && p[1] == '.'; /* "C.UTF-8" */
  if ((lang < 2 || lang > 3) && !c_utf8) goto bad;
  p += lang;
  if (!c_utf8 && (*p == '_' || *p == '-')) {
    size_t t = span(p + 1, is_alpha);
    size_t d = span(p + 1, is_digit);
    if (!(t == 2 || d == 3)) goto bad;
    p += 1 + (t ? t : d);
  }
  if (*p == '.') {
    size_t cs = span(p + 1, is_word);
    if (!cs) goto bad;
    p += 1 + cs;
  }
  if (*p == '@') {
    size_t m = span(p + 1, is_word);
    if (!m) goto bad;
    p += 1 + m;
  }
  if (*p) goto bad;
  if (lang == 2 && ((locale[0] | 32) == 't' && (locale[1] | 32) == 'r')) goto turkic;
  if (lang == 2 && ((locale[0] | 32) == 'a' && (locale[1] | 32) == 'z')) goto turkic;
  return 0;
turkic:
  if (cap)
    snprintf(err, cap,
             "locale '%s': the Turkish and Azerbaijani case mapping (dotted and "
             "dotless i) is not implemented; use another locale, or change case "
             "before the model",
             locale);
  return 1;
bad:
  if (cap)
    snprintf(err, cap,
             "locale '%.64s' is not a locale name (language[_territory][.charset]"
             "[@modifier], \"C\" or \"POSIX\")",
             locale);
  return -1;
}
