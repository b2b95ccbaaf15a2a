/* test_ir_parse_errors.c — every parser error has a message naming the file,
 * line and column, what was expected and what was found; truncated and
 * corrupted text never crashes the parser. */
#include <stdint.h>

#include "ir_test_util.h"

typedef struct err_case {
  const char *text;
  const char *message; /* substring of the formatted status */
} err_case_t;

#define HDR "module {\n  sym batch <= 8\n  global @w : f32[2] = dense<[1.0, 2.0]>\n"

static const err_case_t k_cases[] = {
    /* unknown op */
    {HDR "  func @f(%x: f32[2]) -> (f32[2]) {\n    %0 = Foo(%x) : f32[2]\n",
     "t.dmlir:5:10: expected a known op (see ops.def), found 'Foo'"},
    /* use of an undefined value */
    {HDR "  func @f(%x: f32[2]) -> (f32[2]) {\n    %0 = Relu(%y) : f32[2]\n",
     "t.dmlir:5:15: expected a value defined before this use, found '%y'"},
    /* use before definition in the same node */
    {HDR "  func @f(%x: f32[2]) -> (f32[2]) {\n    %0 = Relu(%0) : f32[2]\n",
     "t.dmlir:5:15: expected a value defined before this use, found '%0'"},
    /* redefinition */
    {HDR "  func @f(%x: f32[2]) -> (f32[2]) {\n    %x = Relu(%x) : f32[2]\n",
     "t.dmlir:5:5: expected a value name not defined before in this function, found "
     "'%x'"},
    {HDR "  func @f(%x: f32[2], %x: f32[2]) -> () {\n",
     "t.dmlir:4:23: expected a value name not defined before in this function, found "
     "'%x'"},
    /* an unknown global */
    {HDR "  func @f(%x: f32[2]) -> (f32[2]) {\n    %0 = Add(%x, @v) : f32[2]\n",
     "t.dmlir:5:18: expected a global declared before this use, found '@v'"},
    /* bad types */
    {HDR "  func @f(%x: f33[2]) -> () {\n",
     "t.dmlir:4:15: expected a dtype (f32 f16 bf16 f64 i8 u8 i16 u16 i32 u32 i64 u64 "
     "bool str f8e4m3fn f8e4m3fnuz f8e5m2 f8e5m2fnuz f8e8m0, or ?), found 'f33'"},
    {HDR "  func @f(%x: f32[-1]) -> () {\n",
     "t.dmlir:4:19: expected a dim >= 0, found '-1'"},
    {HDR "  func @f(%x: f32[seq]) -> () {\n",
     "t.dmlir:4:19: expected a symbol declared with `sym NAME <= BOUND`, found 'seq'"},
    {HDR "  func @f(%x: f32[1,2,3,4,5,6,7,8,9]) -> () {\n",
     "t.dmlir:4:34: expected ']' (at most 8 dims), found ','"},
    {HDR "  func @f(%x: f32[2.5]) -> () {\n",
     "expected a dim (N, a symbol, or N*symbol), found '2.5'"},
    {HDR "  func @f(%x: f32) -> () {\n", "t.dmlir:4:18: expected '[', found ')'"},
    /* symbols */
    {"sym batch <= 0\n", "t.dmlir:1:14: expected an upper bound >= 1, found '0'"},
    {"sym batch <= 4\nsym batch <= 8\n",
     "t.dmlir:2:5: expected a new symbol name (each declared once), found 'batch'"},
    /* globals */
    {HDR "  global @w : f32[2]\n",
     "t.dmlir:4:10: expected a new global name (each declared once), found '@w'"},
    {"global @g : f32[3] = dense<[1.0, 2.0]>\n",
     "t.dmlir:1:37: expected 3 elements for f32[3], found 2"},
    {"global @g : f32[1] = dense<[1.0, 2.0]>\n",
     "t.dmlir:1:34: expected 1 elements for f32[1], found more"},
    /* string data has no text form (fuzz_ir_parse found a shift by 128 here) */
    {"global @g : str[1] = dense<[1]>\n",
     "t.dmlir:1:13: dense data of dtype string cannot be written in IR text (found "
     "str[1])"},
    {"global @g : str[1] = dense<0x00000000000000000000000000000000>\n",
     "dense data of dtype string cannot be written in IR text"},
    {"global @g : f32[2] = dense<0x0000>\n",
     "expected 8 bytes (16 hex digits) of data for f32[2], found 4 hex digits"},
    {"global @g : i8[1] = dense<[128]>\n",
     "t.dmlir:1:28: expected an integer in the range of i8, found '128'"},
    {"global @g : u32[1] = dense<[-1]>\n",
     "expected an integer in the range of u32, found '-1'"},
    {"global @g : i32[1] = dense<[1.5]>\n",
     "expected an integer in the range of i32, found '1.5'"},
    {"global @g : bool[1] = dense<[2]>\n",
     "expected true, false, 0 or 1 for bool data, found '2'"},
    {"sym b <= 2\nglobal @g : f32[b] = dense<[1.0, 2.0]>\n",
     "t.dmlir:2:13: expected a static shape and a dtype for a value with dense data, "
     "found "
     "f32[b]"},
    {"global @g : f32[2] = dense<elided>\n",
     "t.dmlir:1:28: expected dense data (this text was printed with elided constants; "
     "print it "
     "again without elision, elide_elements_over = 0, to parse it), found 'elided'"},
    /* arity */
    {HDR "  func @f(%x: f32[2]) -> (f32[2]) {\n    %0 = Gemm(%x) : f32[2]\n",
     "t.dmlir:5:10: expected 2 to 3 operands for Gemm, found 1"},
    {HDR "  func @f(%x: f32[2]) -> (f32[2]) {\n    %0 = Relu(%x, %x) : f32[2]\n",
     "t.dmlir:5:10: expected 1 operands for Relu, found 2"},
    {HDR "  func @f(%x: f32[2]) -> (f32[2]) {\n    %0, %1 = Relu(%x) : f32[2], f32[2]\n",
     "t.dmlir:5:5: expected 1 results for Relu, found 2"},
    {HDR "  func @f(%x: f32[2]) -> (f32[2]) {\n    %0 = Concat() : f32[2]\n",
     "expected at least 1 operands for Concat, found 0"},
    {HDR "  func @f(%x: f32[2]) -> (f32[2]) {\n    %0, %1 = Split(%x) : f32[2]\n",
     "t.dmlir:6:1: expected ',' and 1 more result types, found end of input"},
    /* attributes */
    {HDR "  func @f(%x: f32[2]) -> (f32[2]) {\n    %0 = Relu(%x) {pads = []} : f32[2]\n",
     "t.dmlir:5:27: expected a typed empty list (ints[], floats[] or strings[]), found "
     "'[]'"},
    {HDR
     "  func @f(%x: f32[2]) -> (f32[2]) {\n    %0 = Relu(%x) {a = 1, a = 2} : f32[2]\n",
     "t.dmlir:5:27: expected a new attribute name (each once), found 'a'"},
    {HDR
     "  func @f(%x: f32[2]) -> (f32[2]) {\n    %0 = Relu(%x) {a = [1, \"s\"]} : f32[2]\n",
     "expected a list of strings only"},
    {HDR
     "  func @f(%x: f32[2]) -> (f32[2]) {\n    %0 = Relu(%x) {a = ints[1.5]} : f32[2]\n",
     "expected a list of integers only"},
    {HDR "  func @f(%x: f32[2]) -> (f32[2]) {\n    %0 = Relu(%x) {a = tensor<f32[2]> "
         "dense<[1.0]>}\n",
     "expected 2 elements for f32[2], found 1"},
    {HDR "  func @f(%x: f32[2]) -> (f32[2]) {\n    %0 = Relu(%x) {a = "
         "99999999999999999999}\n",
     "expected an integer in 64-bit range, found '99999999999999999999'"},
    {HDR "  func @f(%x: f32[2]) -> (f32[2]) {\n    %0 = Relu(%x) {a = foo}\n",
     "expected an attribute value (integer, float, \"string\", [list], ints[], floats[], "
     "strings[] or tensor<TYPE> dense<...>), found 'foo'"},
    /* functions */
    {HDR "  func @f(%x: f32[2]) -> (f32[2]) {\n    return %x\n  }\n  func @f() -> () {\n",
     "t.dmlir:7:8: expected a new function name (each defined once), found '@f'"},
    {HDR "  func @f(%x: f32[2]) -> (f32[3]) {\n    return %x\n",
     "t.dmlir:5:12: expected a value of type f32[3] (result 0 of the function's header), "
     "found a "
     "value of type f32[2]"},
    {HDR "  func @f(%x: f32[2]) -> (f32[2], f32[2]) {\n    return %x\n  }\n",
     "t.dmlir:5:5: expected 2 return values (the header lists 2 result types), found 1"},
    {HDR "  func @f(%x: f32[2]) -> (f32[2]) {\n    return _\n",
     "expected a value (%value or @global), found '_'"},
    {HDR "  func @f(%x: f32[2]) {\n", "t.dmlir:4:23: expected '->', found '{'"},
    {HDR "  func @f(%x: f32[2]) -> (f32[2]) {\n    %0 = Relu(%x) : f32[2]\n",
     "t.dmlir:6:1: expected an op name or 'return', found end of input"},
    {HDR "  func @f(%x: f32[2]) -> (f32[2]) arena(-4) {\n",
     "t.dmlir:4:41: expected an arena size >= 0, found '-4'"},
    {HDR "  func @f(%x: f32[2]) -> (f32[2]) {\n    %0 = Relu(%x) : f32[2] mem(-1, 8)\n",
     "expected an arena offset >= 0, found '-1'"},
    /* lexical */
    {"module {\n  sym \"abc <= 4\n}\n",
     "t.dmlir:2:7: expected '\"' to close the string, found end of line"},
    {"sym \"a\\qb\" <= 4\n", "t.dmlir:1:7: expected an escape"},
    {"sym \"a\\x00b\" <= 4\n", "expected a string without NUL bytes, found '\\x00'"},
    {"sym b <= 4 $\n", "t.dmlir:1:12: expected a token, found '$'"},
    {"sym b <= 4 / x\n", "t.dmlir:1:12: expected a token, found '/'"},
    {"global % : f32[1]\n", "t.dmlir:1:8: expected a name after '%'"},
    {"global @g : f32[1] = dense<[-x]>\n", "expected a number, 'inf' or 'nan' after '-'"},
    {"global @g : f32[1] = dense<[1e]>\n", "expected digits in the exponent of a number"},
    /* structure */
    {"module {\n  foo\n}\n",
     "t.dmlir:2:3: expected 'sym', 'global', 'func' or '}', found 'foo'"},
    {"module {\n}\n}\n",
     "t.dmlir:3:1: expected end of input after the module, found '}'"},
    {"module {\n",
     "t.dmlir:2:1: expected 'sym', 'global', 'func' or '}', found end of input"},
    {"module", "t.dmlir:1:7: expected '{', found end of input"},
};

static void test_error_messages(void) {
  for (size_t i = 0; i < sizeof(k_cases) / sizeof(k_cases[0]); i++) {
    dml_ir_module_t *m = NULL;
    dml_status_t st =
        dml_ir_parse(k_cases[i].text, strlen(k_cases[i].text), "t.dmlir", &m);
    char *msg = dml_status_format(st);
    int ok = st && dml_status_code(st) == DML_STATUS_INVALID_ARGUMENT &&
             strcmp(dml_status_op(st), "ir.parse") == 0 && msg &&
             strstr(msg, k_cases[i].message);
    CHECK(ok);
    if (!ok)
      fprintf(stderr, "case %zu: want '%s'\ngot: %s\n", i, k_cases[i].message,
              msg ? msg : "OK");
    CHECK(m == NULL);
    free(msg);
    dml_status_free(st);
    dml_ir_module_release(m);
  }
}

/* The details show the source line and a caret under the column. */
static void test_caret(void) {
  const char *text = "sym b <= 4\nsym c <= x\n";
  dml_ir_module_t *m = NULL;
  CHECK_ERROR(dml_ir_parse(text, strlen(text), "c.dmlir", &m),
              DML_STATUS_INVALID_ARGUMENT,
              "error: ir.parse: invalid IR text\n  c.dmlir:2:10: expected an upper bound "
              ">= 1, found 'x'\n  sym c <= x\n           ^");
}

static const char k_valid[] =
    "// RUN: a comment\n"
    "module {\n"
    "  sym batch <= 64\n"
    "  sym \"seq len\" <= 8\n"
    "  global @fc1.weight : f32[2,2] param = dense<[1.0, -0.0, nan, -inf]>\n"
    "  global @\"b i\" : f16[17] state = "
    "dense<0x003c003c003c003c003c003c003c003c003c003c003c003c003c003c003c003c003c>\n"
    "  global @s : i64[2] = dense<[-1, 784]>\n"
    "  global @t : bool[2] = dense<[true, false]>\n"
    "  func @forward(%input: f32[batch,2] mem(0, 8), %1: ?[?]) -> (f32[16*batch,2], "
    "f32[?]) "
    "arena(1024) {\n"
    "    %0 = Gemm(%input, @fc1.weight, _) {alpha = 1.0, transB = 1, pads = ints[], f = "
    "floats[], s = strings[], l = [1.5, -2], m = \"x\\\"y\\x01\", "
    "v = tensor<u8[2]> dense<[1, 255]>} : f32[16*batch,2] mem(0, 65536) "
    "loc(\"/fc1/Gemm\")\n"
    "    %a, %\"b c\" = Split(%0, @s) {axis = 1} : f32[?], ?[?]\n"
    "    return %0, %a\n"
    "  }\n"
    "}\n";

/* Parses exactly `n` bytes from a buffer of that size (so reading past the
 * end is caught by ASan). Only OK or INVALID_ARGUMENT may come back. */
static int parse_exact(const char *src, size_t n) {
  char *buf = (char *)malloc(n ? n : 1);
  memcpy(buf, src, n);
  dml_ir_module_t *m = NULL;
  dml_status_t st = dml_ir_parse(buf, n, "cut.dmlir", &m);
  int code = (int)dml_status_code(st);
  if (!st) {
    /* What parsed prints and parses again. */
    char *t = print_module_str(m, NULL);
    dml_ir_module_t *m2 = t ? parse_str(t, "reprint") : NULL;
    if (!m2) code = -1;
    dml_ir_module_release(m2);
    free(t);
  }
  dml_status_free(st);
  dml_ir_module_release(m);
  free(buf);
  return code;
}

static void test_valid_module_parses(void) {
  dml_ir_module_t *m = parse_str(k_valid, "valid");
  CHECK(m != NULL);
  dml_ir_module_release(m);
}

static void test_every_prefix(void) {
  size_t len = strlen(k_valid);
  int n_ok = 0;
  for (size_t n = 0; n <= len; n++) {
    int code = parse_exact(k_valid, n);
    CHECK(code == DML_STATUS_OK || code == DML_STATUS_INVALID_ARGUMENT);
    n_ok += code == DML_STATUS_OK;
  }
  /* The empty prefix, comment-only prefixes and the whole text parse. */
  CHECK(n_ok >= 2);
  CHECK(parse_exact(k_valid, len) == DML_STATUS_OK);
}

/* Every byte replaced by a few others: no crash, OK or INVALID_ARGUMENT. */
static void test_corrupted_bytes(void) {
  static const char subst[] = {0,          '\n', '"', '%', '@', '[', ']',  '{',
                               '}',        '(',  ')', '-', '9', 'x', '\\', '/',
                               (char)0xff, '<',  '>', ',', '_', '*'};
  size_t len = strlen(k_valid);
  char *buf = (char *)malloc(len);
  for (size_t i = 0; i < len; i++)
    for (size_t s = 0; s < sizeof(subst); s++) {
      memcpy(buf, k_valid, len);
      buf[i] = subst[s];
      int code = parse_exact(buf, len);
      CHECK(code == DML_STATUS_OK || code == DML_STATUS_INVALID_ARGUMENT);
      /* and with the byte deleted */
      if (s == 0) {
        memmove(buf + i, buf + i + 1, len - i - 1);
        memcpy(buf, k_valid, i);
        code = parse_exact(buf, len - 1);
        CHECK(code == DML_STATUS_OK || code == DML_STATUS_INVALID_ARGUMENT);
      }
    }
  free(buf);
}

/* Huge declared sizes with small texts fail without allocating them. */
static void test_large_declarations(void) {
  const char *texts[] = {
      "global @g : f32[1000000000000,1000000000000] = dense<[1.0]>\n",
      "global @g : f32[9223372036854775807] = dense<[]>\n",
      "global @g : u8[4611686018427387904] = dense<0x00>\n",
      "func @f() -> () {\n %0 = Relu(_) {v = tensor<f32[4000000000000]> dense<[1.0]>}\n",
      ("sym b <= 9223372036854775807\nfunc @f(%x: f32[9223372036854775807*b]) -> () {\n "
       "return\n}\n"),
  };
  for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
    int code = parse_exact(texts[i], strlen(texts[i]));
    CHECK(code == DML_STATUS_OK || code == DML_STATUS_INVALID_ARGUMENT);
  }
  /* Deep nesting is not in the grammar: many brackets fail fast. */
  size_t n = 100000;
  char *deep = (char *)malloc(n);
  memset(deep, '[', n);
  CHECK(parse_exact(deep, n) == DML_STATUS_INVALID_ARGUMENT);
  memset(deep, '"', n);
  CHECK(parse_exact(deep, n) == DML_STATUS_INVALID_ARGUMENT);
  free(deep);
}

int main(void) {
  RUN(test_error_messages);
  RUN(test_caret);
  RUN(test_valid_module_parses);
  RUN(test_every_prefix);
  RUN(test_corrupted_bytes);
  RUN(test_large_declarations);
  return dml_test_finish();
}
