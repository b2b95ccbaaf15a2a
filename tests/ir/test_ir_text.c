/* test_ir_text.c — the IR printer and parser: every op of ops.def round-trips
 * (print -> parse -> print gives the same bytes), the hand-written .dmlir
 * files in inputs/ are printed back exactly, and the values they hold are
 * the bits written. */
#include <math.h>
#include <stdint.h>

#include "ir_test_util.h"

/* print(m) == print(parse(print(m))); returns the first text (malloc'd). */
static char *check_roundtrip(const dml_ir_module_t *m, const char *what) {
  char *t1 = print_module_str(m, NULL);
  CHECK(t1 != NULL);
  if (!t1) return NULL;
  dml_ir_module_t *m2 = parse_str(t1, what);
  CHECK(m2 != NULL);
  if (!m2) {
    fprintf(stderr, "%s\n", t1);
    return t1;
  }
  CHECK_OK(dml_ir_verify(m2, 0));
  char *t2 = print_module_str(m2, NULL);
  CHECK(t2 && strcmp(t1, t2) == 0);
  if (t2 && strcmp(t1, t2) != 0)
    fprintf(stderr, "%s: first\n%s\nsecond\n%s\n", what, t1, t2);
  free(t2);
  dml_ir_module_release(m2);
  return t1;
}

/* ---- every op, every arity ---------------------------------------------- */

/* Attributes of every kind, chosen by k. */
static void add_attrs(dml_ir_node_t *n, unsigned k) {
  static const int64_t ints[] = {0, -1, 9223372036854775807LL};
  static const double floats[] = {1.0, 2.5, -0.0, 1e-300};
  static const char *const strs[] = {"a", "", "with \"quotes\" and \\ \n"};
  float tdata[3] = {0.5f, -1.0f, 3.25f};
  dml_tensor_t t = {DML_DTYPE_F32, 1, {3}, tdata};
  switch (k % 8) {
    case 0:
      CHECK_OK(dml_ir_node_set_attr_int(n, "axis", -1));
      CHECK_OK(dml_ir_node_set_attr_float(n, "alpha", 0.2f));
      CHECK_OK(dml_ir_node_set_attr_string(n, "mode", "linear"));
      CHECK_OK(dml_ir_node_set_attr_ints(n, "pads", ints, 3));
      CHECK_OK(dml_ir_node_set_attr_floats(n, "scales", floats, 4));
      CHECK_OK(dml_ir_node_set_attr_strings(n, "names", strs, 3));
      CHECK_OK(dml_ir_node_set_attr_tensor(n, "value", &t));
      break;
    case 1: CHECK_OK(dml_ir_node_set_attr_ints(n, "perm", NULL, 0)); break;
    case 2: CHECK_OK(dml_ir_node_set_attr_floats(n, "empty_f", NULL, 0)); break;
    case 3: CHECK_OK(dml_ir_node_set_attr_strings(n, "empty_s", NULL, 0)); break;
    case 4: CHECK_OK(dml_ir_node_set_attr_float(n, "epsilon", 1e-5)); break;
    case 5: CHECK_OK(dml_ir_node_set_attr_int(n, "keepdims", 0)); break;
    case 6: {
      dml_tensor_t e = {DML_DTYPE_I64, 1, {0}, NULL};
      CHECK_OK(dml_ir_node_set_attr_tensor(n, "value", &e));
      break;
    }
    default: break; /* no attributes */
  }
}

static void test_every_op_roundtrips(void) {
  int n_modules = 0;
  for (int op = 1; op < DML_OP_COUNT_; op++) {
    const dml_op_info_t *info = dml_op_info((dml_op_t)op);
    dml_ir_module_t *m;
    CHECK_OK(dml_ir_module_create(&m));
    int32_t batch;
    CHECK_OK(dml_ir_module_add_symbol(m, "batch", 64, &batch));
    dml_ir_function_t *f;
    CHECK_OK(dml_ir_function_create(m, "forward", &f));
    dml_type_t tx = dml_type_static(DML_DTYPE_F32, 2, (const int64_t[]){1, 4});
    tx.dims[0].sym = batch;
    dml_type_t ti = dml_type_static(DML_DTYPE_I64, 1, (const int64_t[]){2});
    dml_ir_value_t *x, *y, *w, *s;
    CHECK_OK(dml_ir_function_add_arg(f, "x", &tx, &x));
    CHECK_OK(dml_ir_function_add_arg(f, "y", &tx, &y));
    float wd[4] = {1, 2, 3, 4};
    dml_type_t tw = dml_type_static(DML_DTYPE_F32, 1, (const int64_t[]){4});
    CHECK_OK(
        dml_ir_module_add_global(m, "w", &tw, wd, sizeof(wd), DML_IR_GLOBAL_PARAM, &w));
    int64_t sd[2] = {-1, 4};
    CHECK_OK(dml_ir_module_add_global(m, "shape", &ti, sd, sizeof(sd), 0, &s));
    if (op == DML_OP_ASSIGN) {
      /* No result; the target is a parameter global (verifier rule). */
      dml_ir_node_t *n = NULL;
      dml_ir_value_t *ins[2] = {w, y};
      CHECK_OK(dml_ir_node_create(f, (dml_op_t)op, "/assign", 2, ins, 0, NULL, &n));
      if (n) add_attrs(n, 1);
      CHECK_OK(dml_ir_function_set_results(f, 1, &x));
      CHECK_OK(dml_ir_verify(m, 0));
      char *text = check_roundtrip(m, info->name);
      CHECK(text && strstr(text, "    Assign(@w, %y)"));
      free(text);
      dml_ir_module_release(m);
      n_modules++;
      continue;
    }
    int max_in = info->max_inputs < 0 ? info->min_inputs + 3 : info->max_inputs;
    int max_out = info->max_outputs < 0 ? info->min_outputs + 2 : info->max_outputs;
    dml_ir_value_t *pool[8] = {x, y, w, s, x, y, w, s};
    dml_ir_value_t *last = x;
    unsigned k = 0;
    for (int ni = info->min_inputs; ni <= max_in; ni++)
      for (int no = info->min_outputs; no <= max_out; no++, k++) {
        dml_ir_value_t *ins[16]; /* QLinearConv has 9 inputs */
        for (int i = 0; i < ni; i++) {
          ins[i] = pool[(i + k) % 8];
          if (i == 0) ins[i] = last;                               /* chain the nodes */
          if (i >= info->min_inputs && (i + k) % 2) ins[i] = NULL; /* absent optional */
        }
        char name[64];
        snprintf(name, sizeof(name), "/%s_%d_%d", info->name, ni, no);
        dml_ir_node_t *n = NULL;
        CHECK_OK(dml_ir_node_create(f, (dml_op_t)op, (k % 3) ? name : NULL, (uint32_t)ni,
                                    ins, (uint32_t)no, NULL, &n));
        if (!n) continue;
        add_attrs(n, k);
        for (int o = 0; o < no; o++) {
          dml_ir_value_t *v = n->outputs[o];
          switch ((k + (unsigned)o) % 4) {
            case 0: v->type = tx; break;
            case 1:
              v->type = tx;
              v->type.dims[0].value = 16; /* 16*batch */
              v->mem_offset = 64 * o;
              v->mem_bytes = 1024;
              break;
            case 2: v->type = dml_type_unknown(DML_DTYPE_F32); break;
            default: break; /* unknown dtype and rank: before inference */
          }
          if (o == 0 && k % 2) {
            snprintf(name, sizeof(name), "%s_out%u", info->name, k);
            v->name = dml_ir_strdup(m, name);
          }
        }
        last = n->outputs[0];
      }
    CHECK_OK(dml_ir_function_set_results(f, 1, &last));
    if (op % 2) f->arena_bytes = 4096;
    CHECK_OK(dml_ir_verify(m, 0));
    char *text = check_roundtrip(m, info->name);
    /* The op's name appears in the text. */
    char needle[64];
    snprintf(needle, sizeof(needle), " = %s(", info->name);
    CHECK(text && strstr(text, needle));
    free(text);
    dml_ir_module_release(m);
    n_modules++;
  }
  CHECK(n_modules == DML_OP_COUNT_ - 1);
}

/* ---- hand-written files ------------------------------------------------- */

/* Drops lines whose first non-blank characters are "//". */
static char *strip_comment_lines(const char *s) {
  char *out = (char *)malloc(strlen(s) + 1);
  size_t k = 0;
  while (*s) {
    const char *e = strchr(s, '\n');
    size_t n = e ? (size_t)(e - s) + 1 : strlen(s);
    const char *q = s;
    while (q < s + n && (*q == ' ' || *q == '\t')) q++;
    if (!(q + 1 < s + n && q[0] == '/' && q[1] == '/')) {
      memcpy(out + k, s, n);
      k += n;
    }
    s += n;
  }
  out[k] = 0;
  return out;
}

/* The file is canonical: printing what it parses to gives it back (less
 * its comment lines). Returns the parsed module. */
static dml_ir_module_t *check_canonical_file(const char *name) {
  char *text = read_input(name);
  CHECK(text != NULL);
  if (!text) return NULL;
  dml_ir_module_t *m = parse_str(text, name);
  CHECK(m != NULL);
  if (m) {
    CHECK_OK(dml_ir_verify(m, 0));
    char *printed = print_module_str(m, NULL);
    char *want = strip_comment_lines(text);
    CHECK(printed && strcmp(printed, want) == 0);
    if (printed && strcmp(printed, want) != 0)
      fprintf(stderr, "%s prints differently:\n%s\n", name, printed);
    free(printed);
    free(want);
    free(check_roundtrip(m, name));
  }
  free(text);
  return m;
}

static void test_types_and_symbols(void) {
  dml_ir_module_t *m = check_canonical_file("types.dmlir");
  if (!m) return;
  CHECK(m->n_symbols == 3);
  CHECK(dml_ir_module_find_symbol(m, "seq len") == 2);
  dml_ir_function_t *f = dml_ir_module_find_function(m, "types");
  CHECK(f && f->n_args == 6);
  if (f && f->n_args == 6) {
    const dml_type_t *t = &f->args[0]->type;
    CHECK(t->dtype == DML_DTYPE_F32 && t->rank == 3);
    CHECK(t->dims[0].sym == 0 && t->dims[0].value == 1);
    CHECK(t->dims[1].sym == 1 && t->dims[1].value == 16);
    CHECK(t->dims[2].sym == -1 && t->dims[2].value == 784);
    CHECK(f->args[1]->type.rank == 0);
    CHECK(f->args[2]->type.rank == DML_RANK_UNKNOWN &&
          f->args[2]->type.dtype == DML_DTYPE_I64);
    CHECK(f->args[3]->type.rank == DML_RANK_UNKNOWN &&
          f->args[3]->type.dtype == DML_DTYPE_INVALID);
    CHECK(f->args[4]->type.dims[0].sym == 2);
    CHECK(f->args[5]->type.dtype == DML_DTYPE_BOOL &&
          f->args[5]->type.dims[0].value == 0);
  }
  dml_ir_module_release(m);
}

static void test_names(void) {
  dml_ir_module_t *m = check_canonical_file("names.dmlir");
  if (!m) return;
  CHECK(dml_ir_module_find_global(m, "fc1.weight") != NULL);
  CHECK(dml_ir_module_find_global(m, "layer 1/bias:0") != NULL);
  dml_ir_function_t *f = dml_ir_module_find_function(m, "a function");
  CHECK(f != NULL);
  if (f) {
    CHECK(f->args[0]->name && strcmp(f->args[0]->name, "input.1") == 0);
    CHECK(f->args[1]->name == NULL);
    dml_ir_node_t *n = f->first;
    CHECK(n && n->outputs[0]->name && strcmp(n->outputs[0]->name, "0") == 0);
    CHECK(n && n->next && n->next->outputs[0]->name == NULL);
    CHECK(n && n->next && n->next->next &&
          strcmp(n->next->next->outputs[0]->name, "tab\there \"q\" \\ caf\xc3\xa9") == 0);
  }
  dml_ir_module_release(m);
}

static void test_attributes(void) {
  dml_ir_module_t *m = check_canonical_file("attrs.dmlir");
  if (!m) return;
  dml_ir_function_t *f = m->n_functions ? m->functions[0] : NULL;
  dml_ir_node_t *n = f ? f->first : NULL;
  CHECK(n != NULL);
  if (n) {
    CHECK(dml_attr_int(n->attrs, n->n_attrs, "axis", 0) == -9223372036854775807LL - 1);
    const dml_attr_t *a = dml_ir_node_attr(n, "alpha");
    CHECK(a && a->kind == DML_ATTR_FLOAT && a->f == (double)0.2f);
    a = dml_ir_node_attr(n, "beta");
    CHECK(a && a->kind == DML_ATTR_FLOAT && a->f == 1.0);
    a = dml_ir_node_attr(n, "n");
    CHECK(a && isnan(a->f) && !signbit(a->f));
    a = dml_ir_node_attr(n, "mn");
    CHECK(a && isnan(a->f) && signbit(a->f));
    a = dml_ir_node_attr(n, "mi");
    CHECK(a && isinf(a->f) && a->f < 0);
    a = dml_ir_node_attr(n, "mode");
    CHECK(a && a->kind == DML_ATTR_STRING && strcmp(a->s, "a \"b\"\n\\\x01") == 0);
    a = dml_ir_node_attr(n, "e1");
    CHECK(a && a->kind == DML_ATTR_INTS && a->n == 0);
    a = dml_ir_node_attr(n, "e2");
    CHECK(a && a->kind == DML_ATTR_FLOATS && a->n == 0);
    a = dml_ir_node_attr(n, "e3");
    CHECK(a && a->kind == DML_ATTR_STRINGS && a->n == 0);
    a = dml_ir_node_attr(n, "fl");
    CHECK(a && a->kind == DML_ATTR_FLOATS && a->n == 3 && a->floats[2] == 1e300);
    a = dml_ir_node_attr(n, "ss");
    CHECK(a && a->kind == DML_ATTR_STRINGS && a->n == 2 &&
          strcmp(a->strings[1], "") == 0);
    a = dml_ir_node_attr(n, "value");
    CHECK(a && a->kind == DML_ATTR_TENSOR && a->tensor.dtype == DML_DTYPE_F16 &&
          a->tensor.rank == 2 && a->tensor.dims[1] == 2);
    if (a && a->tensor.data) CHECK(((const uint16_t *)a->tensor.data)[3] == 0xfc00);
    /* Attributes keep the order written. */
    CHECK(strcmp(n->attrs[0].name, "axis") == 0 &&
          strcmp(n->attrs[1].name, "alpha") == 0);
  }
  dml_ir_module_release(m);
}

static void test_dense_data(void) {
  dml_ir_module_t *m = check_canonical_file("dense.dmlir");
  if (!m) return;
  const dml_ir_value_t *g;
#define DATA(name, T) \
  ((g = dml_ir_module_find_global(m, name)) && g->data ? (const T *)g->data : NULL)
  const float *f32 = DATA("f32", float);
  CHECK(f32 && f32[0] == 1.0f && f32[1] == 0.1f && isinf(f32[2]) && f32[2] < 0);
  if (f32) {
    uint32_t nan_bits;
    memcpy(&nan_bits, &f32[3], 4);
    CHECK(nan_bits == 0x7fc00000u);
    CHECK(f32[4] == 0.0f && signbit(f32[4]));
    CHECK(f32[5] == 1.17549435e-38f && f32[6] == 3.40282347e+38f && f32[7] == 1e-45f);
  }
  const uint16_t *f16 = DATA("f16", uint16_t);
  CHECK(f16 && f16[0] == 0x3c00 && f16[1] == 0x0001 && f16[2] == 0x7bff &&
        f16[3] == 0xfc00 && f16[4] == 0x7e00 && f16[5] == 0x3555);
  const uint16_t *bf16 = DATA("bf16", uint16_t);
  CHECK(bf16 && bf16[0] == 0x3f80 && bf16[1] == 0xc049 && bf16[2] == 0x7f80);
  const double *f64 = DATA("f64", double);
  CHECK(f64 && f64[0] == 0.1 && f64[1] == 5e-324 && f64[2] == 1.7976931348623157e308);
  const int8_t *i8 = DATA("i8", int8_t);
  CHECK(i8 && i8[0] == -128 && i8[1] == 127);
  const uint8_t *u8 = DATA("u8", uint8_t);
  CHECK(u8 && u8[0] == 0 && u8[1] == 255);
  const int16_t *i16 = DATA("i16", int16_t);
  CHECK(i16 && i16[0] == -32768 && i16[1] == 32767);
  const uint16_t *u16 = DATA("u16", uint16_t);
  CHECK(u16 && u16[1] == 65535);
  const int32_t *i32 = DATA("i32", int32_t);
  CHECK(i32 && i32[0] == INT32_MIN && i32[1] == INT32_MAX);
  const uint32_t *u32 = DATA("u32", uint32_t);
  CHECK(u32 && u32[1] == UINT32_MAX);
  const int64_t *i64 = DATA("i64", int64_t);
  CHECK(i64 && i64[0] == INT64_MIN && i64[1] == INT64_MAX);
  const uint64_t *u64 = DATA("u64", uint64_t);
  CHECK(u64 && u64[1] == UINT64_MAX);
  const uint8_t *b = DATA("bool", uint8_t);
  CHECK(b && b[0] == 1 && b[1] == 0 && b[2] == 1);
  const float *big = DATA("big", float);
  CHECK(big && big[0] == 1.0f && big[16] == 17.0f);
  g = dml_ir_module_find_global(m, "empty");
  CHECK(g && g->data && g->data_bytes == 0);
  g = dml_ir_module_find_global(m, "state");
  CHECK(g && !g->data && g->global_flags == DML_IR_GLOBAL_STATE);
  g = dml_ir_module_find_global(m, "both");
  CHECK(g && g->global_flags == (DML_IR_GLOBAL_PARAM | DML_IR_GLOBAL_STATE));
  const uint32_t *payload = DATA("nan_payload", uint32_t);
  CHECK(payload && payload[0] == 0x7fc00001u && payload[1] == 0xffc00000u);
#undef DATA
  dml_ir_module_release(m);
}

static void test_memory_plan_and_functions(void) {
  dml_ir_module_t *m = check_canonical_file("plan.dmlir");
  if (!m) return;
  CHECK(m->n_functions == 2);
  dml_ir_function_t *f = dml_ir_module_find_function(m, "forward");
  CHECK(f && f->arena_bytes == 1024);
  if (f && f->first) {
    dml_ir_node_t *n = f->first;
    CHECK(n->outputs[0]->mem_offset == 0 && n->outputs[0]->mem_bytes == 512);
    CHECK(n->name && strcmp(n->name, "/fc1/Gemm") == 0);
    CHECK(n->n_inputs == 3 && n->inputs[2] == NULL);
    dml_ir_node_t *s = n->next;
    CHECK(s && s->n_outputs == 2 && s->outputs[1]->mem_offset == 512);
    CHECK(f->n_results == 2 && f->results[1] == s->outputs[1]);
    CHECK(f->args[0]->mem_offset == 2048);
  }
  dml_ir_function_t *g = dml_ir_module_find_function(m, "eval_step");
  CHECK(g && g->arena_bytes == -1 && g->n_results == 1 &&
        g->results[0]->kind == DML_IR_VALUE_GLOBAL);
  dml_ir_module_release(m);
}

/* Comments, blank lines and free spacing; no `module` wrapper. */
static void test_comments_and_spacing(void) {
  char *text = read_input("comments.dmlir");
  CHECK(text != NULL);
  if (!text) return;
  dml_ir_module_t *m = parse_str(text, "comments.dmlir");
  CHECK(m != NULL);
  if (m) {
    char *t1 = check_roundtrip(m, "comments.dmlir");
    CHECK(t1 && strstr(t1, "%y = Relu(%x) {alpha = 0.5} : f32[2]\n"));
    CHECK(t1 && !strstr(t1, "//"));
    free(t1);
    dml_ir_module_release(m);
  }
  free(text);
}

/* ---- built in C ---------------------------------------------------------- */

static void test_names_from_c(void) {
  dml_ir_module_t *m;
  CHECK_OK(dml_ir_module_create(&m));
  dml_ir_function_t *f;
  CHECK_OK(dml_ir_function_create(m, "f", &f));
  dml_type_t t = dml_type_static(DML_DTYPE_F32, 1, (const int64_t[]){2});
  dml_ir_value_t *a, *b;
  CHECK_OK(dml_ir_function_add_arg(f, "dup", &t, &a));
  CHECK_OK(
      dml_ir_function_add_arg(f, "dup", &t, &b)); /* ONNX allows none, passes might */
  dml_ir_node_t *n1, *n2, *n3;
  CHECK_OK(dml_ir_node_create(f, DML_OP_ADD, NULL, 2, (dml_ir_value_t *[]){a, b}, 1, NULL,
                              &n1));
  CHECK_OK(dml_ir_node_create(f, DML_OP_RELU, NULL, 1, n1->outputs, 1, NULL, &n2));
  CHECK_OK(dml_ir_node_create(f, DML_OP_NEG, NULL, 1, n2->outputs, 1, NULL, &n3));
  n2->outputs[0]->name = "12";
  n3->outputs[0]->name = "out put";
  dml_ir_value_t *res[2] = {n3->outputs[0], n1->outputs[0]};
  CHECK_OK(dml_ir_function_set_results(f, 2, res));
  char *text = check_roundtrip(m, "names_from_c");
  CHECK(text && strstr(text, "func @f(%0: f32[2], %1: f32[2]) -> (?[?], ?[?]) {\n"));
  CHECK(text && strstr(text, "%2 = Add(%0, %1) : ?[?]\n"));
  CHECK(text && strstr(text, "%\"12\" = Relu(%2) : ?[?]\n"));
  CHECK(text && strstr(text, "%\"out put\" = Neg(%\"12\") : ?[?]\n"));
  CHECK(text && strstr(text, "return %\"out put\", %2\n"));
  free(text);
  dml_ir_module_release(m);
}

static void test_print_options(void) {
  dml_ir_module_t *m;
  CHECK_OK(dml_ir_module_create(&m));
  float d[20];
  for (int i = 0; i < 20; i++) d[i] = (float)i;
  dml_type_t t = dml_type_static(DML_DTYPE_F32, 1, (const int64_t[]){20});
  dml_ir_value_t *g;
  CHECK_OK(dml_ir_module_add_global(m, "w", &t, d, sizeof(d), 0, &g));
  dml_ir_function_t *f;
  CHECK_OK(dml_ir_function_create(m, "f", &f));
  dml_ir_node_t *n;
  CHECK_OK(dml_ir_node_create(f, DML_OP_RELU, "relu0", 1, &g, 1, NULL, &n));
  dml_tensor_t tt = {DML_DTYPE_F32, 1, {20}, d};
  CHECK_OK(dml_ir_node_set_attr_tensor(n, "value", &tt));
  CHECK_OK(dml_ir_function_set_results(f, 1, n->outputs));
  dml_ir_print_options_t o = {16, 0};
  char *text = print_module_str(m, &o);
  CHECK(text && strstr(text, "global @w : f32[20] = dense<elided>\n"));
  CHECK(text && strstr(text, "{value = tensor<f32[20]> dense<elided>}"));
  CHECK(text && !strstr(text, "loc("));
  if (text) {
    dml_ir_module_t *m2 = NULL;
    CHECK_ERROR(
        dml_ir_parse(text, strlen(text), "elided.dmlir", &m2),
        DML_STATUS_INVALID_ARGUMENT,
        "elided.dmlir:2:31: expected dense data (this text was printed with elided "
        "constants; print it again without elision");
  }
  free(text);
  text = print_module_str(m, NULL);
  CHECK(text && strstr(text, "dense<0x0000000000008"));
  CHECK(text && strstr(text, "loc(\"relu0\")"));
  free(text);
  o.elide_elements_over = 20; /* not over: printed */
  o.print_locations = 1;
  text = print_module_str(m, &o);
  CHECK(text && !strstr(text, "elided") && strstr(text, "loc(\"relu0\")"));
  free(text);
  /* One function alone. */
  char *buf = NULL;
  size_t len = 0;
  FILE *fp = open_memstream(&buf, &len);
  CHECK_OK(dml_ir_print_function(f, &o, fp));
  fclose(fp);
  CHECK(buf && strncmp(buf, "func @f() -> (?[?]) {\n  %0 = Relu(@w)", 34) == 0);
  free(buf);
  dml_ir_module_release(m);
}

/* Random bits through dense lists and float attributes come back exactly. */
static void test_exact_numbers(void) {
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  static const dml_dtype_t dts[] = {DML_DTYPE_F32, DML_DTYPE_F16, DML_DTYPE_BF16,
                                    DML_DTYPE_F64, DML_DTYPE_I8,  DML_DTYPE_U64,
                                    DML_DTYPE_I64, DML_DTYPE_BOOL};
  for (int round = 0; round < 200; round++) {
    dml_ir_module_t *m;
    CHECK_OK(dml_ir_module_create(&m));
    unsigned char bytes[8][16 * 8];
    for (size_t d = 0; d < sizeof(dts) / sizeof(dts[0]); d++) {
      size_t es = dml_dtype_size(dts[d]);
      int64_t count = 1 + (round % 16);
      for (size_t i = 0; i < (size_t)count * es; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        bytes[d][i] = (unsigned char)(seed >> 56);
      }
      if (dts[d] == DML_DTYPE_BOOL)
        for (int64_t i = 0; i < count; i++) bytes[d][i] &= round % 3 ? 1 : 0xff;
      dml_type_t t = dml_type_static(dts[d], 1, &count);
      char name[16];
      snprintf(name, sizeof(name), "g%zu", d);
      CHECK_OK(
          dml_ir_module_add_global(m, name, &t, bytes[d], (size_t)count * es, 0, NULL));
    }
    dml_ir_function_t *f;
    CHECK_OK(dml_ir_function_create(m, "f", &f));
    dml_ir_node_t *n;
    CHECK_OK(dml_ir_node_create(f, DML_OP_RELU, NULL, 1, m->globals, 1, NULL, &n));
    double fl[4];
    for (int i = 0; i < 4; i++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      memcpy(&fl[i], &seed, 8);
      if (isnan(fl[i])) fl[i] = 0.25;
    }
    CHECK_OK(dml_ir_node_set_attr_floats(n, "f", fl, 4));
    CHECK_OK(dml_ir_node_set_attr_float(n, "g", (double)(float)fl[0]));
    CHECK_OK(dml_ir_function_set_results(f, 1, n->outputs));
    char *text = print_module_str(m, NULL);
    dml_ir_module_t *m2 = text ? parse_str(text, "random") : NULL;
    CHECK(m2 != NULL);
    if (m2) {
      for (uint32_t i = 0; i < m->n_globals; i++) {
        const dml_ir_value_t *a = m->globals[i], *b = m2->globals[i];
        CHECK(a->data_bytes == b->data_bytes &&
              memcmp(a->data, b->data, a->data_bytes) == 0);
      }
      const dml_attr_t *a = dml_ir_node_attr(m2->functions[0]->first, "f");
      CHECK(a && a->n == 4 && memcmp(a->floats, fl, sizeof(fl)) == 0);
      a = dml_ir_node_attr(m2->functions[0]->first, "g");
      CHECK(a && a->f == (double)(float)fl[0]);
      dml_ir_module_release(m2);
    }
    free(text);
    dml_ir_module_release(m);
  }
}

static void test_parse_file(void) {
  char path[1024];
  dml_test_path("DMLC_SOURCE_DIR", "tests/ir/inputs/plan.dmlir", path, sizeof(path));
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_ir_parse_file(path, &m));
  CHECK(m && m->n_functions == 2);
  dml_ir_module_release(m);
  m = NULL;
  CHECK_ERROR(dml_ir_parse_file("/nonexistent/x.dmlir", &m), DML_STATUS_NOT_FOUND,
              "/nonexistent/x.dmlir");
  /* An empty text is an empty module. */
  CHECK_OK(dml_ir_parse("", 0, "empty", &m));
  CHECK(m && m->n_functions == 0);
  dml_ir_module_release(m);
}

int main(void) {
  RUN(test_every_op_roundtrips);
  RUN(test_types_and_symbols);
  RUN(test_names);
  RUN(test_attributes);
  RUN(test_dense_data);
  RUN(test_memory_plan_and_functions);
  RUN(test_comments_and_spacing);
  RUN(test_names_from_c);
  RUN(test_print_options);
  RUN(test_exact_numbers);
  RUN(test_parse_file);
  return dml_test_finish();
}
