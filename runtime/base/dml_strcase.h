/*
 * dml_strcase.h — StringNormalizer's `locale` attribute (ONNX
 * StringNormalizer-10), read once for shape inference (ir/infer.c, which
 * refuses what the kernel cannot do at compile time) and the CPU kernel
 * (runtime/cpu/cpu_strings.c).
 *
 * ONNX Runtime (onnxruntime/core/providers/cpu/nn/string_normalizer.cc, on
 * Linux) builds std::locale(locale) and changes case with std::toupper /
 * std::tolower of each code point in that locale, its default
 * "en_US.UTF-8". In the "C" and "POSIX" locales only ASCII letters change
 * ("café" -> "CAFé"); in a locale built from glibc's i18n tables (en_US,
 * de_DE, C.UTF-8, ...) every letter with a simple Unicode case mapping
 * changes, whatever the locale's charset (the strings are decoded as UTF-8
 * either way). ONNX Runtime fails when the locale is not installed where it
 * runs; dmlc needs no installed locale.
 */
#ifndef DML_STRCASE_H_
#define DML_STRCASE_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Which letters StringNormalizer's case change maps. */
typedef enum dml_strcase_rule {
  DML_STRCASE_UNICODE = 0, /* the simple case mapping (cpu_strings.c's table) */
  DML_STRCASE_ASCII = 1,   /* A-Z and a-z only: the "C" and "POSIX" locales */
} dml_strcase_rule_t;

/* The rule of locale name `locale` (NULL: the attribute is absent, ONNX
 * Runtime's default "en_US.UTF-8"; "": the environment's locale in ONNX
 * Runtime, taken here as the default). "C" and "POSIX": ASCII. A name
 * language[_territory][.charset][@modifier] (language 2 or 3 letters,
 * territory 2 letters or a 3-digit region, '-' also accepted as the
 * separator as in "en-US"; "C.UTF-8" too): Unicode. Returns 0 and sets
 * *out; -1 when `locale` is not a locale name, 1 for Turkish and
 * Azerbaijani ("tr", "az": their dotted and dotless i map differently, not
 * implemented); a reason is written to err (NUL-terminated, when cap > 0)
 * in both cases. */
int dml_strcase_locale(const char *locale, dml_strcase_rule_t *out, char *err,
                       size_t cap);

#ifdef __cplusplus
}
#endif
#endif /* DML_STRCASE_H_ */
