/*
 * test_symdims.c — symbolic dims anywhere, bounded (dml_ir.h
 * DML_IR_SYMBOL_DERIVED): ONNX models with symbolic N, H, W (Conv, pooling,
 * Flatten, Gemm) and a symbolic sequence length S (MatMul, Softmax,
 * Reshape/Transpose of S) compile once and run at several sizes within the
 * bounds on the CPU, matching onnxruntime's saved outputs
 * (tests/symdims/gen_symdims.py) within 1e-4 * max(1, |ref|); a size above a
 * bound and one too small for the model's windows fail with errors naming
 * the dim; the derived symbols survive the package and the IR text.
 */
#include "dml_ir.h"
#include "dml_ir_text.h"
#include "dml_pkg.h"
#include "symdims_util.h"

static void test_fcn_pool(void) {
  dml_onnx_dim_bound_t b[] = {{"N", 4}, {"H", 64}, {"W", 64}};
  dml_rt_model_t *m = compile("fcn_pool", b, 3, "cpu");
  dml_rt_session_t *s = NULL;
  if (m) CHECK_OK(dml_rt_session_create(m, "cpu", &s));
  if (!s) goto done;
  /* One package, four sizes, in an order that grows and shrinks. */
  check_case(s, "fcn_pool", "c");
  check_case(s, "fcn_pool", "a");
  check_case(s, "fcn_pool", "b");
  check_case(s, "fcn_pool", "d");
  float *z = NULL;
  /* Above H's bound: the error names the dim and the bound. */
  int64_t big[4] = {1, 3, 65, 20};
  CHECK_ERROR(set_zeros(s, 4, big, &z), DML_STATUS_OUT_OF_RANGE,
              "H 65 exceeds the compiled bound 64");
  free(z);
  /* Below what the windows need (H = 16: the second Conv is empty). */
  int64_t small[4] = {1, 3, 16, 20};
  CHECK_OK(set_zeros(s, 4, small, &z));
  CHECK_ERROR(dml_rt_session_run(s), DML_STATUS_OUT_OF_RANGE, "(H-15)/4 = 0");
  free(z);
  check_case(s, "fcn_pool", "b"); /* still runs after the errors */
done:
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

static void test_fcn_spatial(void) {
  dml_onnx_dim_bound_t b[] = {{"N", 2}, {"H", 64}, {"W", 40}};
  dml_rt_model_t *m = compile("fcn_spatial", b, 3, "cpu");
  dml_rt_session_t *s = NULL;
  if (m) CHECK_OK(dml_rt_session_create(m, "cpu", &s));
  if (!s) goto done;
  check_case(s, "fcn_spatial", "b");
  check_case(s, "fcn_spatial", "a");
  check_case(s, "fcn_spatial", "c");
  float *z = NULL;
  int64_t big[4] = {1, 3, 12, 41};
  CHECK_ERROR(set_zeros(s, 4, big, &z), DML_STATUS_OUT_OF_RANGE,
              "W 41 exceeds the compiled bound 40");
  free(z);
done:
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

/* Resize by 2 (nearest) and by 1.5 x 0.75 (linear) over derived sizes. */
static void test_upsample(void) {
  dml_onnx_dim_bound_t b[] = {{"N", 2}, {"H", 64}, {"W", 64}};
  dml_rt_model_t *m = compile("upsample", b, 3, "cpu");
  dml_rt_session_t *s = NULL;
  if (m) CHECK_OK(dml_rt_session_create(m, "cpu", &s));
  if (s) {
    check_case(s, "upsample", "b");
    check_case(s, "upsample", "a");
    check_case(s, "upsample", "c");
  }
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

/* A feature pyramid: Resize x2 of each level added to the level above
 * meets only for sizes that are multiples of 8 ([16:64:8]: H = 8 * "H/8"). */
static void test_fpn(void) {
  char path[1400];
  size_t len = 0;
  uint8_t *bytes = read_file(fixture("fpn.onnx", path, sizeof path), &len);
  CHECK(bytes != NULL);
  if (!bytes) return;
  dml_onnx_dim_range_t r[3] = {
      {"x", 0, 1, 2, 1}, {"x", 2, 16, 64, 8}, {"x", 3, 16, 64, 8}};
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  void *pkg = NULL;
  size_t n = 0;
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = NULL;
  /* Without the step the sums cannot be proven to meet. */
  CHECK_ERROR(dml_compile_onnx_memory(bytes, len, NULL, "fpn.onnx", &o, &pkg, &n, NULL),
              DML_STATUS_INVALID_ARGUMENT, "[MIN:MAX:STEP]");
  free(pkg);
  pkg = NULL;
  o.input_ranges = r;
  o.n_input_ranges = 3;
  CHECK_OK(dml_compile_onnx_memory(bytes, len, NULL, "fpn.onnx", &o, &pkg, &n, NULL));
  if (pkg) CHECK_OK(dml_rt_model_load_memory(pkg, n, &m));
  if (m) CHECK_OK(dml_rt_session_create(m, "cpu", &s));
  if (s) {
    check_case(s, "fpn", "b");
    check_case(s, "fpn", "a");
    check_case(s, "fpn", "c");
    float *z = NULL;
    int64_t odd[4] = {1, 3, 20, 20}; /* not a multiple of 8 */
    CHECK_ERROR(set_zeros(s, 4, odd, &z), DML_STATUS_INVALID_ARGUMENT,
                "dim 2 is 20, not a multiple of 8");
    free(z);
  }
  dml_rt_session_release(s);
  dml_rt_model_release(m);
  free(pkg);
  free(bytes);
}

/* An audio front end: 1-D Convs (stride 32) and a MaxPool over the
 * symbolic sample count, then MatMul over [batch, frames, 8]. */
static void test_audio(void) {
  dml_onnx_dim_bound_t b[] = {{"batch", 4}, {"samples", 8000}};
  dml_rt_model_t *m = compile("audio", b, 2, "cpu");
  dml_rt_session_t *s = NULL;
  if (m) CHECK_OK(dml_rt_session_create(m, "cpu", &s));
  if (s) {
    check_case(s, "audio", "c");
    check_case(s, "audio", "a");
    check_case(s, "audio", "b");
    float *z = NULL;
    int64_t big[3] = {1, 1, 8001}, small[3] = {1, 1, 63};
    CHECK_ERROR(set_zeros(s, 3, big, &z), DML_STATUS_OUT_OF_RANGE,
                "samples 8001 exceeds the compiled bound 8000");
    free(z);
    CHECK_OK(set_zeros(s, 3, small, &z)); /* shorter than the first window */
    CHECK_ERROR(dml_rt_session_run(s), DML_STATUS_OUT_OF_RANGE, "samples = 63");
    free(z);
  }
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

/* ConvTranspose over symbolic H, W: stride 2 with output_padding (2H),
 * then dilation 2 without pads (2H + 2). */
static void test_deconv(void) {
  dml_onnx_dim_bound_t b[] = {{"N", 2}, {"H", 32}, {"W", 32}};
  dml_rt_model_t *m = compile("deconv", b, 3, "cpu");
  dml_rt_session_t *s = NULL;
  if (m) CHECK_OK(dml_rt_session_create(m, "cpu", &s));
  if (s) {
    check_case(s, "deconv", "b");
    check_case(s, "deconv", "a");
    check_case(s, "deconv", "c");
  }
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

static void test_attention(void) {
  dml_onnx_dim_bound_t b[] = {{"N", 2}, {"S", 40}};
  dml_rt_model_t *m = compile("attn", b, 2, "cpu");
  dml_rt_session_t *s = NULL;
  if (m) CHECK_OK(dml_rt_session_create(m, "cpu", &s));
  if (!s) goto done;
  check_case(s, "attn", "c");
  check_case(s, "attn", "a");
  check_case(s, "attn", "b");
  float *z = NULL;
  int64_t big[3] = {1, 41, 8};
  CHECK_ERROR(set_zeros(s, 3, big, &z), DML_STATUS_OUT_OF_RANGE,
              "S 41 exceeds the compiled bound 40");
  free(z);
done:
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

/* Pad, Slice and Concat over the symbolic S (S+3, S+2, ceil(S/2)), a
 * Reshape of N*(S+2) and a Flatten of 8*ceil(S/2); x[:, 0:2] needs S >= 2,
 * promised with --input-shape's minimum. */
static void test_seq_ops(void) {
  char path[1400];
  size_t len = 0;
  uint8_t *bytes = read_file(fixture("seq_ops.onnx", path, sizeof path), &len);
  CHECK(bytes != NULL);
  if (!bytes) return;
  dml_onnx_dim_range_t r[2] = {{"x", 0, 1, 4, 1}, {"x", 1, 2, 32, 1}};
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.input_ranges = r;
  o.n_input_ranges = 2;
  void *pkg = NULL;
  size_t n = 0;
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = NULL;
  CHECK_OK(dml_compile_onnx_memory(bytes, len, NULL, "seq_ops.onnx", &o, &pkg, &n, NULL));
  if (pkg) CHECK_OK(dml_rt_model_load_memory(pkg, n, &m));
  if (m) CHECK_OK(dml_rt_session_create(m, "cpu", &s));
  if (s) {
    check_case_n(s, "seq_ops", "c", 3);
    check_case_n(s, "seq_ops", "a", 3);
    check_case_n(s, "seq_ops", "b", 3);
  }
  dml_rt_session_release(s);
  dml_rt_model_release(m);
  free(pkg);
  pkg = NULL;
  /* Without the minimum, x[:, 0:2] is refused, saying what is expressible. */
  r[1].min = 1;
  CHECK_ERROR(
      dml_compile_onnx_memory(bytes, len, NULL, "seq_ops.onnx", &o, &pkg, &n, NULL),
      DML_STATUS_UNIMPLEMENTED, "an end within the smallest size promised");
  free(pkg);
  free(bytes);
}

/* Unknown names in dim_bounds are refused, listing the symbolic dims. */
static void test_bad_bound_name(void) {
  char path[1400];
  size_t len = 0;
  uint8_t *bytes = read_file(fixture("fcn_pool.onnx", path, sizeof path), &len);
  CHECK(bytes != NULL);
  if (!bytes) return;
  dml_onnx_dim_bound_t b[] = {{"Q", 4}};
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.dim_bounds = b;
  o.n_dim_bounds = 1;
  void *pkg = NULL;
  size_t n = 0;
  CHECK_ERROR(
      dml_compile_onnx_memory(bytes, len, NULL, "fcn_pool.onnx", &o, &pkg, &n, NULL),
      DML_STATUS_INVALID_ARGUMENT, "symbolic dims: 'N', 'H', 'W'");
  free(pkg);
  /* A promised minimum too small for the windows fails at compile time. */
  dml_onnx_dim_range_t r[3] = {
      {"x", 0, 1, 4, 1}, {"x", 2, 16, 64, 1}, {"x", 3, 32, 64, 1}};
  memset(&o, 0, sizeof o);
  o.input_ranges = r;
  o.n_input_ranges = 3;
  CHECK_ERROR(
      dml_compile_onnx_memory(bytes, len, NULL, "fcn_pool.onnx", &o, &pkg, &n, NULL),
      DML_STATUS_INVALID_ARGUMENT, "(H-15)/4 = 0) at the smallest input sizes");
  r[1].min = 19;
  CHECK_OK(
      dml_compile_onnx_memory(bytes, len, NULL, "fcn_pool.onnx", &o, &pkg, &n, NULL));
  free(pkg);
  free(bytes);
}

/* Derived symbols print and parse back (IR text). */
static void test_ir_text(void) {
  const char *syms =
      "sym H <= 64\nsym W <= 32\nsym \"(H+1)/2\" <= 32 derived(H, _, 1, 1, 2)\n"
      "sym \"H*W\" <= 2048 derived(H, W, 1, 0, 1)\n";
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_ir_parse(syms, strlen(syms), "syms", &m));
  if (!m) return;
  CHECK(m->n_symbols == 4);
  CHECK(m->symbols[2].flags & DML_IR_SYMBOL_DERIVED);
  CHECK(m->symbols[2].src[0] == 0 && m->symbols[2].src[1] == -1 &&
        m->symbols[2].div == 2);
  CHECK(m->symbols[3].src[1] == 1);
  /* The helper finds the parsed symbols by their canonical names. */
  dml_dim_t d;
  int ok = 0;
  CHECK_OK(dml_ir_module_derived_dim(m, 0, -1, 2, 2, 4, &d, &ok)); /* (2H+2)/4 */
  CHECK(ok && d.sym == 2 && d.value == 1);
  CHECK_OK(dml_ir_module_derived_dim(m, 1, 0, 3, 0, 1, &d, &ok)); /* 3*W*H */
  CHECK(ok && d.sym == 3 && d.value == 3);
  CHECK_OK(dml_ir_module_derived_dim(m, 0, -1, 4, 0, 2, &d, &ok)); /* 4H/2 = 2*H */
  CHECK(ok && d.sym == 0 && d.value == 2);
  CHECK_OK(dml_ir_module_derived_dim(m, 2, -1, 1, 3, 2, &d, &ok)); /* ((H+1)/2+3)/2 */
  CHECK(ok && d.sym == 4 && !strcmp(m->symbols[4].name, "(H+7)/4") &&
        m->symbols[4].bound == 17);
  CHECK_OK(dml_ir_module_derived_dim(m, 0, -1, 1, -80, 1, &d, &ok)); /* H-80: empty */
  CHECK(!ok);
  dml_ir_module_release(m);
  /* A bound below the formula at the sources' bounds is refused. */
  const char *low = "sym H <= 64\nsym \"(H+1)/2\" <= 31 derived(H, _, 1, 1, 2)\n";
  m = NULL;
  CHECK_ERROR(dml_ir_parse(low, strlen(low), "low", &m), DML_STATUS_INVALID_ARGUMENT,
              "below its formula");
  dml_ir_module_release(m);
}

/* The package's derived symbols: a graph of symbols only round-trips; a
 * bound below the formula at the sources' bounds, a source that is not
 * earlier, div < 1, mul < 0 and a data-dependent source are DATA_LOSS. */
static dml_status_t decode_syms(const dml_pkg_symbol_t *syms, uint32_t n) {
  dml_pkg_graph_t g = {n, syms, 0, NULL, NULL};
  void *bytes = NULL;
  size_t size = 0;
  dml_status_t st = dml_pkg_graph_encode(&g, &bytes, &size);
  dml_pkg_graph_t *out = NULL;
  if (!st) st = dml_pkg_graph_decode_version(bytes, size, 2, 0, &out);
  if (!st && (out->n_symbols != n || out->symbols[1].origin != DML_PKG_SYMBOL_DERIVED ||
              out->symbols[1].src[0] != syms[1].src[0] ||
              out->symbols[1].src[1] != syms[1].src[1] ||
              out->symbols[1].add != syms[1].add || out->symbols[1].div != syms[1].div))
    st = dml_status_make(DML_STATUS_INTERNAL, "test", "the symbols did not round-trip");
  dml_pkg_graph_release(out);
  free(bytes);
  return st;
}

static void test_package_symbols(void) {
  dml_pkg_symbol_t s[2] = {
      {"H", 64, DML_PKG_SYMBOL_INPUT, 0, 0, 0, 0, {-1, -1}, 1, 0, 1},
      {"(H+1)/2", 32, DML_PKG_SYMBOL_DERIVED, 0, 0, 0, 0, {0, -1}, 1, 1, 2}};
  CHECK_OK(decode_syms(s, 2));
  s[1].src[1] = 0; /* H*H/2 would need a bound of 2048 */
  CHECK_ERROR(decode_syms(s, 2), DML_STATUS_DATA_LOSS, "at least its formula");
  s[1].src[1] = -1;
  s[1].bound = 31;
  CHECK_ERROR(decode_syms(s, 2), DML_STATUS_DATA_LOSS, "at least its formula");
  s[1].bound = 32;
  s[1].src[0] = 1; /* itself */
  CHECK_ERROR(decode_syms(s, 2), DML_STATUS_DATA_LOSS, "needs earlier sources");
  s[1].src[0] = 0;
  s[1].div = 0;
  CHECK_ERROR(decode_syms(s, 2), DML_STATUS_DATA_LOSS, "div >= 1");
  s[1].div = 2;
  s[1].mul = -1;
  CHECK_ERROR(decode_syms(s, 2), DML_STATUS_DATA_LOSS, "mul >= 0");
  s[1].mul = 1;
  s[0].origin = DML_PKG_SYMBOL_NODE; /* a data-dependent source (function 0 of none) */
  dml_status_t st = decode_syms(s, 2);
  CHECK(st != DML_OK);
  dml_status_free(st);
}

int main(void) {
  RUN(test_fcn_pool);
  RUN(test_fcn_spatial);
  RUN(test_upsample);
  RUN(test_fpn);
  RUN(test_audio);
  RUN(test_deconv);
  RUN(test_attention);
  RUN(test_seq_ops);
  RUN(test_bad_bound_name);
  RUN(test_ir_text);
  RUN(test_package_symbols);
  return dml_test_finish();
}
