/* test_dynamic.c — ops with data-dependent output dims: kernels against the
 * ONNX operator spec's examples (opset 17), shape inference of the
 * data-dependent symbols, the executor with such a dim flowing into later
 * nodes at several actual sizes in one session, and the package's producer
 * symbols (round trip, version 1 compatibility, corrupt fields). */
#include <stdlib.h>
#include <string.h>

#include "dml_cpu.h"
#include "dml_ir.h"
#include "dml_ir_text.h"
#include "dml_package_emit.h"
#include "dml_passes.h"
#include "dml_pkg.h"
#include "dml_rt.h"
#include "dml_test.h"

static int64_t g_scratch[4096];

static dml_status_t run(dml_op_t op, dml_tensor_t *in, uint32_t n_in, dml_tensor_t *out,
                        uint32_t n_out, const dml_attr_t *attrs, uint32_t n_attrs) {
  dml_cpu_call_t c = {op,    "t",   in,      n_in,      out,
                      n_out, attrs, n_attrs, g_scratch, sizeof g_scratch,
                      0,     0,     0,       NULL,      NULL};
  return dml_cpu_run(&c);
}

static int eq_i64(const int64_t *a, const int64_t *b, int n) {
  for (int i = 0; i < n; i++)
    if (a[i] != b[i]) return 0;
  return 1;
}

/* ---- kernels ---- */

static void test_nonzero(void) {
  /* Spec example: [[1, 0], [1, 1]] -> [[0, 1, 1], [0, 0, 1]]. */
  uint8_t x[4] = {1, 0, 1, 1};
  int64_t xd[2] = {2, 2}, yd[2] = {2, 4}, y[8] = {0};
  dml_tensor_t in = dml_test_tensor(DML_DTYPE_BOOL, 2, xd, x),
               out = dml_test_tensor(DML_DTYPE_I64, 2, yd, y);
  CHECK_OK(run(DML_OP_NON_ZERO, &in, 1, &out, 1, NULL, 0));
  const int64_t want[6] = {0, 1, 1, 0, 0, 1};
  CHECK(out.dims[0] == 2 && out.dims[1] == 3 && eq_i64(y, want, 6));
  /* f32, all zero (and -0.0): an empty result. */
  float z[3] = {0.0f, -0.0f, 0.0f};
  int64_t zd[1] = {3}, zyd[2] = {1, 3};
  in = dml_test_tensor(DML_DTYPE_F32, 1, zd, z);
  out = dml_test_tensor(DML_DTYPE_I64, 2, zyd, y);
  CHECK_OK(run(DML_OP_NON_ZERO, &in, 1, &out, 1, NULL, 0));
  CHECK(out.dims[0] == 1 && out.dims[1] == 0);
  /* The bound is the caller's promise; a smaller one is an error. */
  out = dml_test_tensor(DML_DTYPE_I64, 2, yd, y);
  out.dims[1] = 2;
  in = dml_test_tensor(DML_DTYPE_BOOL, 2, xd, x);
  CHECK_ERROR(run(DML_OP_NON_ZERO, &in, 1, &out, 1, NULL, 0), DML_STATUS_INVALID_ARGUMENT,
              "exceed the output's bound");
}

static void unique_case(const float *x, int64_t n, int sorted, const float *wy,
                        const int64_t *wi, const int64_t *winv, const int64_t *wc,
                        int64_t u) {
  float y[16] = {0};
  int64_t idx[16] = {0}, inv[16] = {0}, cnt[16] = {0}, xd[1] = {n}, bd[1] = {n};
  dml_tensor_t in = dml_test_tensor(DML_DTYPE_F32, 1, xd, (void *)x);
  dml_tensor_t out[4] = {dml_test_tensor(DML_DTYPE_F32, 1, bd, y),
                         dml_test_tensor(DML_DTYPE_I64, 1, bd, idx),
                         dml_test_tensor(DML_DTYPE_I64, 1, bd, inv),
                         dml_test_tensor(DML_DTYPE_I64, 1, bd, cnt)};
  dml_attr_t a = {0};
  a.name = "sorted";
  a.kind = DML_ATTR_INT;
  a.i = sorted;
  CHECK_OK(run(DML_OP_UNIQUE, &in, 1, out, 4, &a, 1));
  CHECK(out[0].dims[0] == u && out[1].dims[0] == u && out[2].dims[0] == n &&
        out[3].dims[0] == u);
  for (int64_t i = 0; i < u; i++) CHECK(y[i] == wy[i]);
  CHECK(eq_i64(idx, wi, (int)u) && eq_i64(inv, winv, (int)n) && eq_i64(cnt, wc, (int)u));
}

static void test_unique(void) {
  /* Spec examples 1 and 2: x = [2, 1, 1, 3, 4, 3]. */
  const float x[6] = {2, 1, 1, 3, 4, 3};
  const float y1[4] = {2, 1, 3, 4}, y2[4] = {1, 2, 3, 4};
  const int64_t i1[4] = {0, 1, 3, 4}, inv1[6] = {0, 1, 1, 2, 3, 2}, c1[4] = {1, 2, 2, 1};
  const int64_t i2[4] = {1, 0, 3, 4}, inv2[6] = {1, 0, 0, 2, 3, 2}, c2[4] = {2, 1, 2, 1};
  unique_case(x, 6, 0, y1, i1, inv1, c1, 4);
  unique_case(x, 6, 1, y2, i2, inv2, c2, 4);
  /* Spec example 3, axis = 0: [[1,0,0],[1,0,0],[2,3,4]] -> [[1,0,0],[2,3,4]]. */
  const int32_t m[9] = {1, 0, 0, 1, 0, 0, 2, 3, 4};
  int32_t y[9] = {0};
  int64_t idx[3], inv[3], cnt[3], md[2] = {3, 3}, b1[1] = {3};
  dml_tensor_t in = dml_test_tensor(DML_DTYPE_I32, 2, md, (void *)m);
  dml_tensor_t out[4] = {dml_test_tensor(DML_DTYPE_I32, 2, md, y),
                         dml_test_tensor(DML_DTYPE_I64, 1, b1, idx),
                         dml_test_tensor(DML_DTYPE_I64, 1, b1, inv),
                         dml_test_tensor(DML_DTYPE_I64, 1, b1, cnt)};
  dml_attr_t a[2];
  memset(a, 0, sizeof a);
  a[0].name = "axis";
  a[0].kind = DML_ATTR_INT;
  a[0].i = 0;
  a[1].name = "sorted";
  a[1].kind = DML_ATTR_INT;
  a[1].i = 1;
  CHECK_OK(run(DML_OP_UNIQUE, &in, 1, out, 4, a, 2));
  const int32_t wy[6] = {1, 0, 0, 2, 3, 4};
  const int64_t wi[2] = {0, 2}, winv[3] = {0, 0, 1}, wc[2] = {2, 1};
  CHECK(out[0].dims[0] == 2 && out[0].dims[1] == 3 && memcmp(y, wy, sizeof wy) == 0);
  CHECK(eq_i64(idx, wi, 2) && eq_i64(inv, winv, 3) && eq_i64(cnt, wc, 2));
  /* Spec example 4, axis = 1 of [2, 4, 2] (3-D): columns (2,1),(0,1),(1,1)... */
  const int32_t x4[16] = {1, 1, 0, 1, 2, 1, 0, 1, 1, 1, 0, 1, 2, 1, 0, 1};
  int32_t y4[16] = {0};
  int64_t d4[3] = {2, 4, 2}, b4[1] = {4};
  in = dml_test_tensor(DML_DTYPE_I32, 3, d4, (void *)x4);
  out[0] = dml_test_tensor(DML_DTYPE_I32, 3, d4, y4);
  out[1] = dml_test_tensor(DML_DTYPE_I64, 1, b4, idx);
  out[2] = dml_test_tensor(DML_DTYPE_I64, 1, b4, inv);
  out[3] = dml_test_tensor(DML_DTYPE_I64, 1, b4, cnt);
  int64_t inv4[4];
  out[2].data = inv4;
  a[0].i = 1;
  CHECK_OK(run(DML_OP_UNIQUE, &in, 1, out, 4, a, 2));
  const int32_t wy4[12] = {0, 1, 1, 1, 2, 1, 0, 1, 1, 1, 2, 1};
  const int64_t wi4[3] = {1, 0, 2}, winv4[4] = {1, 0, 2, 0}, wc4[3] = {2, 1, 1};
  CHECK(out[0].dims[1] == 3 && memcmp(y4, wy4, sizeof wy4) == 0);
  CHECK(eq_i64(idx, wi4, 3) && eq_i64(inv4, winv4, 4) && eq_i64(cnt, wc4, 3));
}

static void test_compress(void) {
  /* Spec: [[1,2],[3,4],[5,6]], condition [0,1,1], axis 0 -> [[3,4],[5,6]]. */
  const float x[6] = {1, 2, 3, 4, 5, 6};
  uint8_t cond[5] = {0, 1, 1, 0, 0};
  float y[6] = {0};
  int64_t xd[2] = {3, 2}, cd[1] = {3};
  dml_tensor_t in[2] = {dml_test_tensor(DML_DTYPE_F32, 2, xd, (void *)x),
                        dml_test_tensor(DML_DTYPE_BOOL, 1, cd, cond)};
  dml_tensor_t out = dml_test_tensor(DML_DTYPE_F32, 2, xd, y);
  dml_attr_t a = {0};
  a.name = "axis";
  a.kind = DML_ATTR_INT;
  a.i = 0;
  CHECK_OK(run(DML_OP_COMPRESS, in, 2, &out, 1, &a, 1));
  CHECK(out.dims[0] == 2 && out.dims[1] == 2 && y[0] == 3 && y[3] == 6);
  /* axis = 1, condition [0, 1]: [[2],[4],[6]]. */
  cd[0] = 2;
  in[1] = dml_test_tensor(DML_DTYPE_BOOL, 1, cd, cond);
  out = dml_test_tensor(DML_DTYPE_F32, 2, xd, y);
  a.i = 1;
  CHECK_OK(run(DML_OP_COMPRESS, in, 2, &out, 1, &a, 1));
  CHECK(out.dims[0] == 3 && out.dims[1] == 1 && y[0] == 2 && y[1] == 4 && y[2] == 6);
  /* No axis: flattened, condition [0,1,0,0,1] -> [2, 5]. */
  cond[2] = 0;
  cond[4] = 1;
  cd[0] = 5;
  int64_t fd[1] = {6};
  in[1] = dml_test_tensor(DML_DTYPE_BOOL, 1, cd, cond);
  out = dml_test_tensor(DML_DTYPE_F32, 1, fd, y);
  CHECK_OK(run(DML_OP_COMPRESS, in, 2, &out, 1, NULL, 0));
  CHECK(out.dims[0] == 2 && y[0] == 2 && y[1] == 5);
}

static void test_nms(void) {
  /* Spec example suppress_by_IOU (center_point_box 0). */
  const float boxes[24] = {0, 0,  1, 1,  0, 0.1f,  1, 1.1f,  0, -0.1f, 1, 0.9f,
                           0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100,   1, 101};
  const float scores[6] = {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f};
  int64_t max_out = 3, y[18] = {0};
  float iou = 0.5f, thr = 0.0f;
  int64_t bd[3] = {1, 6, 4}, sd[3] = {1, 1, 6}, one[1] = {1}, yd[2] = {6, 3};
  dml_tensor_t in[5] = {dml_test_tensor(DML_DTYPE_F32, 3, bd, (void *)boxes),
                        dml_test_tensor(DML_DTYPE_F32, 3, sd, (void *)scores),
                        dml_test_tensor(DML_DTYPE_I64, 1, one, &max_out),
                        dml_test_tensor(DML_DTYPE_F32, 1, one, &iou),
                        dml_test_tensor(DML_DTYPE_F32, 1, one, &thr)};
  dml_tensor_t out = dml_test_tensor(DML_DTYPE_I64, 2, yd, y);
  CHECK_OK(run(DML_OP_NON_MAX_SUPPRESSION, in, 5, &out, 1, NULL, 0));
  const int64_t want[9] = {0, 0, 3, 0, 0, 0, 0, 0, 5};
  CHECK(out.dims[0] == 3 && eq_i64(y, want, 9));
  /* suppress_by_IOU_and_scores: score_threshold 0.4 drops box 5. */
  thr = 0.4f;
  out = dml_test_tensor(DML_DTYPE_I64, 2, yd, y);
  CHECK_OK(run(DML_OP_NON_MAX_SUPPRESSION, in, 5, &out, 1, NULL, 0));
  CHECK(out.dims[0] == 2 && eq_i64(y, want, 6));
  /* Without max_output_boxes_per_class nothing is selected. */
  out = dml_test_tensor(DML_DTYPE_I64, 2, yd, y);
  CHECK_OK(run(DML_OP_NON_MAX_SUPPRESSION, in, 2, &out, 1, NULL, 0));
  CHECK(out.dims[0] == 0);
}

/* ---- shape inference, IR text ---- */

static const char *k_text =
    "module {\n"
    "  global @axes : i64[1] = dense<[0]>\n"
    "  func @forward(%x: f32[2,3]) -> (i64[?], i64[?]) {\n"
    "    %nz = NonZero(%x) : i64[?]\n"
    "    %t = Transpose(%nz) {perm = [1, 0]} : i64[?]\n"
    "    %s = ReduceSum(%t, @axes) {keepdims = 0} : i64[?]\n"
    "    return %t, %s\n"
    "  }\n"
    "}\n";

static dml_ir_module_t *compiled(void) {
  dml_ir_module_t *m = NULL;
  CHECK_OK(dml_ir_parse(k_text, strlen(k_text), "dyn.dmlir", &m));
  if (!m) return NULL;
  dml_pass_options_t o;
  memset(&o, 0, sizeof o);
  CHECK_OK(dml_pass_run_pipeline(m, dml_pass_default_pipeline(), &o));
  return m;
}

static void test_infer(void) {
  dml_ir_module_t *m = compiled();
  if (!m) return;
  const dml_ir_function_t *f = m->functions[0];
  const dml_ir_value_t *nz = f->first->outputs[0];
  CHECK(m->n_symbols == 1);
  CHECK(nz->type.rank == 2 && nz->type.dims[0].sym < 0 && nz->type.dims[0].value == 2 &&
        nz->type.dims[1].sym == 0 && nz->type.dims[1].value == 1);
  CHECK((m->symbols[0].flags & DML_IR_SYMBOL_DATA_DEPENDENT) &&
        m->symbols[0].bound == 6 && m->symbols[0].producer == f->first);
  /* Planned at the bound: NonZero's output holds 2 x 6 i64. */
  CHECK(nz->mem_bytes >= 96);
  /* Re-inference reuses the symbol. */
  dml_pass_options_t o;
  memset(&o, 0, sizeof o);
  CHECK_OK(dml_pass_run_pipeline(m, "shape-infer", &o));
  CHECK(m->n_symbols == 1);
  /* Text round trip keeps the flag; re-inference of the parsed module
   * claims the parsed symbol. */
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  CHECK_OK(dml_ir_print_module(m, NULL, mem));
  fclose(mem);
  CHECK(buf && strstr(buf, "<= 6 dynamic"));
  dml_ir_module_t *m2 = NULL;
  if (buf) CHECK_OK(dml_ir_parse(buf, len, "round.dmlir", &m2));
  if (m2) {
    CHECK(m2->n_symbols == 1 && (m2->symbols[0].flags & DML_IR_SYMBOL_DATA_DEPENDENT) &&
          m2->symbols[0].producer == NULL);
    CHECK_OK(dml_pass_run_pipeline(m2, "shape-infer", &o));
    CHECK(m2->n_symbols == 1 && m2->symbols[0].producer == m2->functions[0]->first);
  }
  dml_ir_module_release(m2);
  free(buf);
  dml_ir_module_release(m);
}

/* ---- executor ---- */

static void *emit(size_t *out_size) {
  dml_ir_module_t *m = compiled();
  void *bytes = NULL;
  if (m) CHECK_OK(dml_package_emit_memory(m, NULL, &bytes, out_size));
  dml_ir_module_release(m);
  return bytes;
}

static void test_executor(void) {
  size_t size = 0;
  void *bytes = emit(&size);
  dml_rt_model_t *model = NULL;
  dml_rt_session_t *s = NULL;
  if (bytes) CHECK_OK(dml_rt_model_load_memory(bytes, size, &model));
  if (model) CHECK_OK(dml_rt_session_create(model, "cpu", &s));
  if (!s) goto done;
  CHECK(dml_rt_session_symbol_value(s, 0) == -1);
  /* Three sizes in one session: 3, 0 and 6 non-zeros, then 3 again. */
  const float xs[4][6] = {
      {0, 1, 0, 2, 0, 3}, {0, 0, 0, 0, 0, 0}, {1, 1, 1, 1, 1, 1}, {5, 0, 0, 0, 7, 7}};
  const int64_t nnz[4] = {3, 0, 6, 3};
  /* Sums of the row and column coordinates of the non-zeros. */
  const int64_t rows[4] = {0 + 1 + 1, 0, 3, 0 + 1 + 1},
                cols[4] = {1 + 0 + 2, 0, 6, 0 + 1 + 2};
  for (int k = 0; k < 4; k++) {
    int64_t xd[2] = {2, 3};
    dml_tensor_t x = dml_test_tensor(DML_DTYPE_F32, 2, xd, (void *)xs[k]);
    CHECK_OK(dml_rt_session_set_input(s, 0, &x));
    CHECK_OK(dml_rt_session_run(s));
    dml_tensor_t t, sum;
    CHECK_OK(dml_rt_session_get_output(s, 0, &t));
    CHECK_OK(dml_rt_session_get_output(s, 1, &sum));
    CHECK(t.rank == 2 && t.dims[0] == nnz[k] && t.dims[1] == 2);
    CHECK(sum.rank == 1 && sum.dims[0] == 2);
    CHECK(((int64_t *)sum.data)[0] == rows[k] && ((int64_t *)sum.data)[1] == cols[k]);
    CHECK(dml_rt_session_symbol_value(s, 0) == nnz[k]);
    if (k == 0) {
      const int64_t want[6] = {0, 1, 1, 0, 1, 2}; /* (0,1), (1,0), (1,2) */
      CHECK(eq_i64((const int64_t *)t.data, want, 6));
    }
  }
done:
  dml_rt_session_release(s);
  dml_rt_model_release(model);
  free(bytes);
}

/* ---- package: producer symbols ---- */

static const dml_pkg_graph_t *graph_of(const void *bytes, size_t size,
                                       dml_pkg_graph_t **out_owned, uint64_t *out_wsize) {
  dml_pkg_t pkg;
  CHECK_OK(dml_pkg_parse(bytes, size, &pkg));
  const dml_pkg_section_t *g = dml_pkg_find_section(&pkg, "graph");
  const dml_pkg_section_t *w = dml_pkg_find_section(&pkg, "weights");
  *out_wsize = w ? w->size : 0;
  *out_owned = NULL;
  if (g) CHECK_OK(dml_pkg_graph_decode(g->data, (size_t)g->size, *out_wsize, out_owned));
  return *out_owned;
}

/* Encodes `g` and decodes the bytes again; the status of the decode. */
static dml_status_t reencode(const dml_pkg_graph_t *g, uint64_t wsize) {
  void *b = NULL;
  size_t n = 0;
  DML_RETURN_IF_ERROR(dml_pkg_graph_encode(g, &b, &n));
  dml_pkg_graph_t *out = NULL;
  dml_status_t st = dml_pkg_graph_decode(b, n, wsize, &out);
  dml_pkg_graph_release(out);
  free(b);
  return st;
}

static void test_package(void) {
  size_t size = 0;
  void *bytes = emit(&size);
  if (!bytes) return;
  dml_pkg_graph_t *owned = NULL;
  uint64_t ws = 0;
  const dml_pkg_graph_t *g = graph_of(bytes, size, &owned, &ws);
  if (!g) {
    free(bytes);
    return;
  }
  CHECK(g->n_symbols == 1);
  const dml_pkg_symbol_t *sy = &g->symbols[0];
  CHECK(sy->origin == DML_PKG_SYMBOL_NODE && sy->bound == 6 && sy->function == 0 &&
        sy->node == 0 && sy->output == 0 && sy->dim == 1);
  CHECK_OK(reencode(g, ws));
  /* Corrupt producers. */
  dml_pkg_symbol_t syms[1] = {*sy};
  dml_pkg_graph_t h = *g;
  h.symbols = syms;
  syms[0].node = 9;
  CHECK_ERROR(reencode(&h, ws), DML_STATUS_DATA_LOSS, "as its producer");
  syms[0] = *sy;
  syms[0].dim = 0; /* the static dim 2 */
  CHECK_ERROR(reencode(&h, ws), DML_STATUS_DATA_LOSS, "not a dim equal to it");
  syms[0] = *sy;
  syms[0].output = 1;
  CHECK_ERROR(reencode(&h, ws), DML_STATUS_DATA_LOSS, "as its producer");
  syms[0] = *sy;
  syms[0].function = 3;
  CHECK_ERROR(reencode(&h, ws), DML_STATUS_DATA_LOSS, "names function #3");
  /* Transpose (node 1) as producer: NonZero uses the symbol before it. */
  syms[0] = *sy;
  syms[0].node = 1;
  syms[0].dim = 0;
  CHECK_ERROR(reencode(&h, ws), DML_STATUS_DATA_LOSS, "before its producer");
  /* As an INPUT symbol nothing fixes it. */
  syms[0] = *sy;
  syms[0].origin = DML_PKG_SYMBOL_INPUT;
  CHECK_ERROR(reencode(&h, ws), DML_STATUS_UNIMPLEMENTED, "is not fixed by");
  /* An input may not use a data-dependent symbol. */
  dml_pkg_function_t fn = g->functions[0];
  dml_pkg_value_t vals[16];
  CHECK(fn.n_values <= 16);
  if (fn.n_values <= 16) {
    memcpy(vals, fn.values, fn.n_values * sizeof vals[0]);
    vals[fn.inputs[0]].type.dims[0].value = 1; /* [1, n]: fits its bytes */
    vals[fn.inputs[0]].type.dims[1].sym = 0;
    vals[fn.inputs[0]].type.dims[1].value = 1;
    fn.values = vals;
    h = *g;
    h.functions = &fn;
    CHECK_ERROR(reencode(&h, ws), DML_STATUS_DATA_LOSS, "uses data-dependent symbol");
  }
  /* An unknown origin; truncated producer fields. */
  void *b = NULL;
  size_t n = 0;
  CHECK_OK(dml_pkg_graph_encode(g, &b, &n));
  dml_pkg_graph_t *out = NULL;
  if (b) {
    uint8_t *p = (uint8_t *)b;
    size_t at = 4 + 4 + strlen(sy->name) + 8; /* count, name, bound: the origin */
    CHECK(p[at] == 1);
    p[at] = 7;
    CHECK_ERROR(dml_pkg_graph_decode(b, n, ws, &out), DML_STATUS_DATA_LOSS,
                "unknown origin 7");
    p[at] = 1;
    CHECK_ERROR(dml_pkg_graph_decode(b, at + 8, ws, &out), DML_STATUS_DATA_LOSS,
                "symbol producer");
    CHECK_ERROR(dml_pkg_graph_decode_version(b, n, 3, ws, &out), DML_STATUS_UNIMPLEMENTED,
                "version 3");
    /* Version 1 has no origin field: the v2 bytes are not a v1 graph. */
    dml_status_t v1 = dml_pkg_graph_decode_version(b, n, 1, ws, &out);
    CHECK(v1 != DML_OK);
    dml_status_free(v1);
  }
  free(b);
  dml_pkg_graph_release(owned);
  free(bytes);
}

/* A version 1 graph (symbols without origin) still decodes. */
static void test_version1(void) {
  static const uint32_t in[1] = {0}, outs[1] = {1}, relu_in[1] = {0}, relu_out[1] = {1};
  dml_pkg_symbol_t sym = {"batch", 8, DML_PKG_SYMBOL_INPUT, 0, 0, 0, 0, {-1, -1}, 1,
                          0,       1};
  dml_pkg_value_t vals[2];
  memset(vals, 0, sizeof vals);
  for (int i = 0; i < 2; i++) {
    vals[i].name = i ? "y" : "x";
    vals[i].type.dtype = DML_DTYPE_F32;
    vals[i].type.rank = 1;
    vals[i].type.dims[0].value = 1;
    vals[i].type.dims[0].sym = 0;
    vals[i].storage = i ? DML_PKG_STORAGE_ARENA : DML_PKG_STORAGE_INPUT;
    vals[i].offset = (uint64_t)i * 64;
    vals[i].bytes = 32;
  }
  dml_pkg_node_t node;
  memset(&node, 0, sizeof node);
  node.op_name = "Relu";
  node.name = "r";
  node.n_inputs = 1;
  node.inputs = relu_in;
  node.n_outputs = 1;
  node.outputs = relu_out;
  dml_pkg_function_t fn = {"forward", 96, 2, vals, 1, &node, 1, in, 1, outs};
  dml_pkg_graph_t g = {1, &sym, 1, &fn, NULL};
  void *b = NULL;
  size_t n = 0;
  CHECK_OK(dml_pkg_graph_encode(&g, &b, &n));
  if (!b) return;
  /* Drop the 4-byte origin after the symbol's bound: the version 1 layout. */
  uint8_t *p = (uint8_t *)b;
  size_t at = 4 + 4 + 5 + 8;
  CHECK(p[at] == 0 && p[at + 1] == 0 && p[at + 2] == 0 && p[at + 3] == 0);
  memmove(p + at, p + at + 4, n - at - 4);
  dml_pkg_graph_t *out = NULL;
  CHECK_OK(dml_pkg_graph_decode_version(b, n - 4, 1, 0, &out));
  CHECK(out && out->n_symbols == 1 && out->symbols[0].origin == DML_PKG_SYMBOL_INPUT &&
        out->symbols[0].bound == 8);
  dml_pkg_graph_release(out);
  out = NULL;
  dml_status_t v2 = dml_pkg_graph_decode_version(b, n - 4, 2, 0, &out);
  CHECK(v2 != DML_OK);
  dml_status_free(v2);
  free(b);
}

int main(void) {
  RUN(test_nonzero);
  RUN(test_unique);
  RUN(test_compress);
  RUN(test_nms);
  RUN(test_infer);
  RUN(test_executor);
  RUN(test_package);
  RUN(test_version1);
  return dml_test_finish();
}
