/* test_dynamic_shapes.c — shape inputs computed at run time (value-dependent
 * output dims, ir/dml_ir.h DML_IR_SYMBOL_DATA_DEPENDENT, dml_cpu.h
 * `output_capacity`): per op, the CPU call with outputs passed at their
 * bounds computes the dims from the shape input's values (ONNX opset 17
 * shape rules), writes the values the kernel defines for them, and fails
 * with OUT_OF_RANGE naming the output, dim, value and bound when a dim or
 * the size exceeds what was planned; then a package compiled once runs in
 * one session with two different sets of shape values, its later values
 * re-evaluated, and with a bound or the --dynamic-max-elements cap
 * exceeded. Values are compared exactly (copies, integer ranges, tiling). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_test_util.h"
#include "dml_cpu.h"
#include "dml_ir.h"
#include "dml_ir_text.h"
#include "dml_package_emit.h"
#include "dml_passes.h"
#include "dml_rt.h"
#include "dml_test.h"

static dml_tensor_t i64s(const int64_t *v, int64_t n) {
  return dml_test_tensor(DML_DTYPE_I64, 1, &n, v);
}

static float g_out[2][1024];
static int64_t g_scratch[8192];

/* Element i of g_out[k] read as i64. */
static int64_t i64_at(int k, int i) {
  int64_t v;
  memcpy(&v, (const char *)g_out[k] + 8 * i, sizeof v);
  return v;
}

/* Runs `op` with output i at dims bound[i] (rank r[i]) and cap[i] bytes of
 * capacity in g_out[i]. */
static dml_status_t run_dyn(dml_op_t op, const dml_tensor_t *in, uint32_t n_in,
                            dml_tensor_t *out, uint32_t n_out, const uint64_t *cap,
                            const dml_attr_t *attrs, uint32_t n_attrs) {
  dml_cpu_call_t c = cpu_call(op, "n", in, n_in, out, n_out, attrs, n_attrs);
  c.scratch = g_scratch;
  c.scratch_bytes = sizeof g_scratch;
  c.output_capacity = cap;
  return dml_cpu_run(&c);
}

/* Output 0 of dtype dt at the bound dims. */
static dml_tensor_t at_bound(dml_dtype_t dt, int32_t rank, const int64_t *bound, int k) {
  memset(g_out[k], 0, sizeof g_out[k]);
  return dml_test_tensor(dt, rank, bound, g_out[k]);
}

static int dims_are(const dml_tensor_t *t, int32_t rank, const int64_t *want) {
  if (t->rank != rank) return 0;
  for (int32_t d = 0; d < rank; d++)
    if (t->dims[d] != want[d]) return 0;
  return 1;
}

static const float kx[6] = {1, 2, 3, 4, 5, 6}; /* [2,3] */
static const int64_t kxd[2] = {2, 3};
static const uint64_t kcap[2] = {sizeof g_out[0], sizeof g_out[1]};

static void test_reshape_squeeze_unsqueeze(void) {
  dml_tensor_t in[2];
  in[0] = dml_test_tensor(DML_DTYPE_F32, 2, kxd, kx);
  int64_t b2[2] = {6, 6}, b3[3] = {6, 6, 6};
  /* Reshape to [3,-1] -> [3,2], then [0,-1] (0 copies dim 0) -> [2,3]. */
  int64_t s1[2] = {3, -1};
  in[1] = i64s(s1, 2);
  dml_tensor_t y = at_bound(DML_DTYPE_F32, 2, b2, 0);
  CHECK_OK(run_dyn(DML_OP_RESHAPE, in, 2, &y, 1, kcap, NULL, 0));
  CHECK(dims_are(&y, 2, (int64_t[]){3, 2}) && !memcmp(g_out[0], kx, sizeof kx));
  int64_t s2[2] = {0, -1};
  in[1] = i64s(s2, 2);
  y = at_bound(DML_DTYPE_F32, 2, b2, 0);
  CHECK_OK(run_dyn(DML_OP_RESHAPE, in, 2, &y, 1, kcap, NULL, 0));
  CHECK(dims_are(&y, 2, kxd));
  /* A dim above its bound, and a size above the capacity. */
  int64_t s3[2] = {1, 6};
  int64_t small[2] = {6, 5};
  in[1] = i64s(s3, 2);
  y = at_bound(DML_DTYPE_F32, 2, small, 0);
  CHECK_ERROR(
      run_dyn(DML_OP_RESHAPE, in, 2, &y, 1, kcap, NULL, 0), DML_STATUS_OUT_OF_RANGE,
      "output 0 dim 1 is 6 at run time (shape [1,6]), above its compiled bound 5");
  uint64_t tiny[1] = {20};
  y = at_bound(DML_DTYPE_F32, 2, b2, 0);
  CHECK_ERROR(run_dyn(DML_OP_RESHAPE, in, 2, &y, 1, tiny, NULL, 0),
              DML_STATUS_OUT_OF_RANGE,
              "needs 24 bytes at run time, above the 20 bytes planned");
  /* Wrong element count: the shape rules' error. */
  int64_t s4[2] = {4, 2};
  in[1] = i64s(s4, 2);
  y = at_bound(DML_DTYPE_F32, 2, b2, 0);
  CHECK_ERROR(run_dyn(DML_OP_RESHAPE, in, 2, &y, 1, kcap, NULL, 0),
              DML_STATUS_INVALID_ARGUMENT, "cannot reshape 6 elements into 8");
  /* Unsqueeze axes [0, 3] of [2,3] -> [1,2,3,1]; Squeeze [0] of [1,2,3]. */
  int64_t ax[2] = {0, -1};
  in[1] = i64s(ax, 2);
  int64_t b4[4] = {3, 3, 3, 3};
  y = at_bound(DML_DTYPE_F32, 4, b4, 0);
  CHECK_OK(run_dyn(DML_OP_UNSQUEEZE, in, 2, &y, 1, kcap, NULL, 0));
  CHECK(dims_are(&y, 4, (int64_t[]){1, 2, 3, 1}) && !memcmp(g_out[0], kx, sizeof kx));
  int64_t x3d[3] = {1, 2, 3}, a0 = 0;
  in[0] = dml_test_tensor(DML_DTYPE_F32, 3, x3d, kx);
  in[1] = i64s(&a0, 1);
  y = at_bound(DML_DTYPE_F32, 2, b3, 0);
  CHECK_OK(run_dyn(DML_OP_SQUEEZE, in, 2, &y, 1, kcap, NULL, 0));
  CHECK(dims_are(&y, 2, kxd));
  int64_t a1 = 1; /* dim 1 is 2, not 1 */
  in[1] = i64s(&a1, 1);
  y = at_bound(DML_DTYPE_F32, 2, b3, 0);
  CHECK_ERROR(run_dyn(DML_OP_SQUEEZE, in, 2, &y, 1, kcap, NULL, 0),
              DML_STATUS_INVALID_ARGUMENT, "cannot squeeze dim 1 of extent 2");
}

static void test_expand_tile_pad(void) {
  dml_tensor_t in[3];
  int64_t cd[2] = {2, 1};
  const float col[2] = {1, 2};
  in[0] = dml_test_tensor(DML_DTYPE_F32, 2, cd, col);
  int64_t sh[2] = {2, 4}, b[2] = {2, 8};
  in[1] = i64s(sh, 2);
  dml_tensor_t y = at_bound(DML_DTYPE_F32, 2, b, 0);
  CHECK_OK(run_dyn(DML_OP_EXPAND, in, 2, &y, 1, kcap, NULL, 0));
  CHECK(dims_are(&y, 2, sh) && g_out[0][3] == 1 && g_out[0][4] == 2 && g_out[0][7] == 2);
  int64_t sh2[2] = {1, 9}; /* 9 > the bound 8 */
  in[1] = i64s(sh2, 2);
  y = at_bound(DML_DTYPE_F32, 2, b, 0);
  CHECK_ERROR(run_dyn(DML_OP_EXPAND, in, 2, &y, 1, kcap, NULL, 0),
              DML_STATUS_OUT_OF_RANGE,
              "dim 1 is 9 at run time (shape [2,9]), above its compiled bound 8");
  /* Tile [2,3] by [2,1] -> [4,3]: rows 0,1,0,1. */
  in[0] = dml_test_tensor(DML_DTYPE_F32, 2, kxd, kx);
  int64_t rep[2] = {2, 1}, tb[2] = {8, 8};
  in[1] = i64s(rep, 2);
  y = at_bound(DML_DTYPE_F32, 2, tb, 0);
  CHECK_OK(run_dyn(DML_OP_TILE, in, 2, &y, 1, kcap, NULL, 0));
  CHECK(dims_are(&y, 2, (int64_t[]){4, 3}) && !memcmp(g_out[0] + 6, kx, sizeof kx));
  /* Pad [2,3] by (1,0) before and (0,2) after -> [3,5], zeros around. */
  int64_t pads[4] = {1, 0, 0, 2}, pb[2] = {10, 10};
  in[1] = i64s(pads, 4);
  y = at_bound(DML_DTYPE_F32, 2, pb, 0);
  CHECK_OK(run_dyn(DML_OP_PAD, in, 2, &y, 1, kcap, NULL, 0));
  CHECK(dims_are(&y, 2, (int64_t[]){3, 5}) && g_out[0][0] == 0 && g_out[0][5] == 1 &&
        g_out[0][7] == 3 && g_out[0][8] == 0 && g_out[0][10] == 4);
  int64_t neg[4] = {-3, 0, 0, 0}; /* crops below zero */
  in[1] = i64s(neg, 4);
  y = at_bound(DML_DTYPE_F32, 2, pb, 0);
  CHECK_ERROR(run_dyn(DML_OP_PAD, in, 2, &y, 1, kcap, NULL, 0),
              DML_STATUS_INVALID_ARGUMENT, "negative or overflowing extent");
}

static void test_slice_split_topk(void) {
  dml_tensor_t in[5];
  in[0] = dml_test_tensor(DML_DTYPE_F32, 2, kxd, kx);
  /* Slice x[:, ::-2] (starts -1, ends INT64_MIN, axes 1, steps -2) -> [2,2]. */
  int64_t st = -1, en = INT64_MIN, ax = 1, sp = -2;
  in[1] = i64s(&st, 1);
  in[2] = i64s(&en, 1);
  in[3] = i64s(&ax, 1);
  in[4] = i64s(&sp, 1);
  dml_tensor_t y = at_bound(DML_DTYPE_F32, 2, kxd, 0);
  CHECK_OK(run_dyn(DML_OP_SLICE, in, 5, &y, 1, kcap, NULL, 0));
  CHECK(dims_are(&y, 2, (int64_t[]){2, 2}) && g_out[0][0] == 3 && g_out[0][1] == 1 &&
        g_out[0][2] == 6 && g_out[0][3] == 4);
  /* Split [2,3] on axis 1 by [1,2]. */
  int64_t parts[2] = {1, 2};
  in[1] = i64s(parts, 2);
  dml_attr_t a = {0};
  a.name = "axis";
  a.kind = DML_ATTR_INT;
  a.i = 1;
  dml_tensor_t ys[2] = {at_bound(DML_DTYPE_F32, 2, kxd, 0),
                        at_bound(DML_DTYPE_F32, 2, kxd, 1)};
  CHECK_OK(run_dyn(DML_OP_SPLIT, in, 2, ys, 2, kcap, &a, 1));
  CHECK(dims_are(&ys[0], 2, (int64_t[]){2, 1}) && dims_are(&ys[1], 2, (int64_t[]){2, 2}));
  CHECK(g_out[0][0] == 1 && g_out[0][1] == 4 && g_out[1][0] == 2 && g_out[1][3] == 6);
  /* TopK k=2 along the last axis: values [3,2],[6,5], indices [2,1]. */
  int64_t k = 2;
  in[1] = i64s(&k, 1);
  ys[0] = at_bound(DML_DTYPE_F32, 2, kxd, 0);
  ys[1] = at_bound(DML_DTYPE_I64, 2, kxd, 1);
  CHECK_OK(run_dyn(DML_OP_TOP_K, in, 2, ys, 2, kcap, NULL, 0));
  CHECK(dims_are(&ys[0], 2, (int64_t[]){2, 2}) && dims_are(&ys[1], 2, (int64_t[]){2, 2}));
  CHECK(g_out[0][0] == 3 && g_out[0][3] == 5 && i64_at(1, 0) == 2);
  k = 4; /* above the axis's extent */
  ys[0] = at_bound(DML_DTYPE_F32, 2, kxd, 0);
  ys[1] = at_bound(DML_DTYPE_I64, 2, kxd, 1);
  CHECK_ERROR(run_dyn(DML_OP_TOP_K, in, 2, ys, 2, kcap, NULL, 0),
              DML_STATUS_INVALID_ARGUMENT,
              "K = 4 is out of range for an axis of extent 3");
}

static void test_generators(void) {
  /* Range(2, 11, 3) -> [2,5,8]; its bound 2 is exceeded. */
  int64_t r0 = 2, r1 = 11, r2 = 3, b1 = 8;
  dml_tensor_t in[3] = {dml_test_tensor(DML_DTYPE_I64, 0, NULL, &r0),
                        dml_test_tensor(DML_DTYPE_I64, 0, NULL, &r1),
                        dml_test_tensor(DML_DTYPE_I64, 0, NULL, &r2)};
  dml_tensor_t y = at_bound(DML_DTYPE_I64, 1, &b1, 0);
  CHECK_OK(run_dyn(DML_OP_RANGE, in, 3, &y, 1, kcap, NULL, 0));
  CHECK(y.dims[0] == 3 && i64_at(0, 0) == 2 && i64_at(0, 1) == 5 && i64_at(0, 2) == 8);
  int64_t b2 = 2;
  y = at_bound(DML_DTYPE_I64, 1, &b2, 0);
  CHECK_ERROR(run_dyn(DML_OP_RANGE, in, 3, &y, 1, kcap, NULL, 0), DML_STATUS_OUT_OF_RANGE,
              "node 'n'");
  /* ConstantOfShape([2,2]) of f32 0. */
  int64_t sh[2] = {2, 2}, cb[2] = {4, 4};
  dml_tensor_t s = i64s(sh, 2);
  y = at_bound(DML_DTYPE_F32, 2, cb, 0);
  g_out[0][0] = 7;
  CHECK_OK(run_dyn(DML_OP_CONSTANT_OF_SHAPE, &s, 1, &y, 1, kcap, NULL, 0));
  CHECK(dims_are(&y, 2, sh) && g_out[0][0] == 0);
  /* HannWindow(5), periodic: 0.5 - 0.5 cos(2 pi n / 5). */
  int64_t n5 = 5;
  dml_tensor_t w = dml_test_tensor(DML_DTYPE_I64, 0, NULL, &n5);
  y = at_bound(DML_DTYPE_F32, 1, &b1, 0);
  CHECK_OK(run_dyn(DML_OP_HANN_WINDOW, &w, 1, &y, 1, kcap, NULL, 0));
  CHECK(y.dims[0] == 5);
  CHECK_NEAR(g_out[0][1], 0.5 - 0.5 * cos(2 * 3.14159265358979323846 / 5), 1e-6);
  /* OneHot(indices [1,0], depth 3, values [0,1]) -> [2,3]. */
  int64_t idx[2] = {1, 0}, dep = 3, id = 2, ob[2] = {2, 8};
  const float vals[2] = {0, 1};
  dml_tensor_t oh[3] = {dml_test_tensor(DML_DTYPE_I64, 1, &id, idx),
                        dml_test_tensor(DML_DTYPE_I64, 0, NULL, &dep),
                        dml_test_tensor(DML_DTYPE_F32, 1, &id, vals)};
  y = at_bound(DML_DTYPE_F32, 2, ob, 0);
  CHECK_OK(run_dyn(DML_OP_ONE_HOT, oh, 3, &y, 1, kcap, NULL, 0));
  CHECK(dims_are(&y, 2, (int64_t[]){2, 3}) && g_out[0][1] == 1 && g_out[0][3] == 1 &&
        g_out[0][0] == 0);
}

static void test_resize_reduce(void) {
  /* Resize nearest of [1,1,2,2] by scales [1,1,2,1.5] -> [1,1,4,3]. */
  const float px[4] = {1, 2, 3, 4};
  int64_t xd[4] = {1, 1, 2, 2}, four = 4, rb[4] = {8, 8, 8, 8};
  const float sc[4] = {1, 1, 2, 1.5f};
  dml_tensor_t in[4] = {dml_test_tensor(DML_DTYPE_F32, 4, xd, px),
                        dml_test_tensor(DML_DTYPE_INVALID, 0, NULL, NULL),
                        dml_test_tensor(DML_DTYPE_F32, 1, &four, sc),
                        dml_test_tensor(DML_DTYPE_INVALID, 0, NULL, NULL)};
  dml_tensor_t y = at_bound(DML_DTYPE_F32, 4, rb, 0);
  CHECK_OK(run_dyn(DML_OP_RESIZE, in, 3, &y, 1, kcap, NULL, 0));
  CHECK(dims_are(&y, 4, (int64_t[]){1, 1, 4, 3}));
  /* sizes [1,1,3,3] instead (scales absent). */
  int64_t sz[4] = {1, 1, 3, 3};
  in[2] = dml_test_tensor(DML_DTYPE_INVALID, 0, NULL, NULL);
  in[3] = i64s(sz, 4);
  y = at_bound(DML_DTYPE_F32, 4, rb, 0);
  CHECK_OK(run_dyn(DML_OP_RESIZE, in, 4, &y, 1, kcap, NULL, 0));
  CHECK(dims_are(&y, 4, sz) && g_out[0][0] == 1 && g_out[0][8] == 4);
  /* ReduceSum over axes [1] of [2,3]: keepdims -> [2,1] = [6,15]; not
   * kept -> [2]. */
  int64_t ax = 1;
  dml_tensor_t r[2] = {dml_test_tensor(DML_DTYPE_F32, 2, kxd, kx), i64s(&ax, 1)};
  y = at_bound(DML_DTYPE_F32, 2, kxd, 0);
  CHECK_OK(run_dyn(DML_OP_REDUCE_SUM, r, 2, &y, 1, kcap, NULL, 0));
  CHECK(dims_are(&y, 2, (int64_t[]){2, 1}) && g_out[0][0] == 6 && g_out[0][1] == 15);
  dml_attr_t keep = {0};
  keep.name = "keepdims";
  keep.kind = DML_ATTR_INT;
  keep.i = 0;
  int64_t b1 = 3;
  y = at_bound(DML_DTYPE_F32, 1, &b1, 0);
  CHECK_OK(run_dyn(DML_OP_REDUCE_SUM, r, 2, &y, 1, kcap, &keep, 1));
  CHECK(y.dims[0] == 2 && g_out[0][1] == 15);
  int64_t bad = 2; /* out of range for rank 2 */
  r[1] = i64s(&bad, 1);
  y = at_bound(DML_DTYPE_F32, 2, kxd, 0);
  CHECK_ERROR(run_dyn(DML_OP_REDUCE_SUM, r, 2, &y, 1, kcap, NULL, 0),
              DML_STATUS_INVALID_ARGUMENT, "axis 2 is out of range for rank 2");
}

/* ---- a package with shape inputs, run with two sets of values ---- */

static const char k_text[] =
    "module {\n"
    "  global @one : f32[] = dense<[1.0]>\n"
    "  global @zero : i64[] = dense<[0]>\n"
    "  global @step : i64[] = dense<[1]>\n"
    "  global @ends : i64[1] = dense<[3]>\n"
    "  global @axes : i64[1] = dense<[1]>\n"
    "  func @forward(%x: f32[2,3], %shape: i64[2], %rep: i64[2], %starts: i64[1],\n"
    "                %n: i64[]) -> (?[?], ?[?], ?[?], ?[?]) {\n"
    "    %r = Reshape(%x, %shape) loc(\"r\")\n"
    "    %t = Tile(%x, %rep) loc(\"t\")\n"
    "    %tp = Add(%t, @one) loc(\"tp\")\n"
    "    %s = Slice(%x, %starts, @ends, @axes) loc(\"s\")\n"
    "    %g = Range(@zero, %n, @step) loc(\"g\")\n"
    "    return %r, %tp, %s, %g\n"
    "  }\n"
    "}\n";

static void *package(int64_t max_elements, size_t *out_size) {
  dml_ir_module_t *m = NULL;
  void *bytes = NULL;
  CHECK_OK(dml_ir_parse(k_text, strlen(k_text), "shapes.dmlir", &m));
  if (!m) return NULL;
  m->dynamic_max_elements = max_elements;
  dml_pass_options_t o;
  memset(&o, 0, sizeof o);
  CHECK_OK(dml_pass_run_pipeline(m, dml_pass_default_pipeline(), &o));
  CHECK_OK(dml_package_emit_memory(m, NULL, &bytes, out_size));
  dml_ir_module_release(m);
  return bytes;
}

static dml_status_t run_with(dml_rt_session_t *s, const int64_t *shape,
                             const int64_t *rep, int64_t start, int64_t n) {
  dml_tensor_t in[5] = {dml_test_tensor(DML_DTYPE_F32, 2, kxd, kx), i64s(shape, 2),
                        i64s(rep, 2), i64s(&start, 1),
                        dml_test_tensor(DML_DTYPE_I64, 0, NULL, &n)};
  for (uint32_t i = 0; i < 5; i++)
    DML_RETURN_IF_ERROR(dml_rt_session_set_input(s, i, &in[i]));
  return dml_rt_session_run(s);
}

static void test_session(void) {
  size_t size = 0;
  void *bytes = package(0, &size);
  dml_rt_model_t *model = NULL;
  dml_rt_session_t *s = NULL;
  if (bytes) CHECK_OK(dml_rt_model_load_memory(bytes, size, &model));
  if (model) CHECK_OK(dml_rt_session_create(model, "cpu", &s));
  if (!s) goto done;
  /* Two sets of shape values in one session, then the first again. */
  static const int64_t shapes[3][2] = {{3, 2}, {1, 6}, {3, 2}},
                       reps[3][2] = {{2, 1}, {1, 3}, {2, 1}};
  static const int64_t starts[3] = {1, -3, 1}, ns[3] = {4, 0, 4};
  for (int k = 0; k < 3; k++) {
    dml_status_t st = run_with(s, shapes[k], reps[k], starts[k], ns[k]);
    CHECK(st == DML_OK);
    if (st) {
      dml_status_free(st);
      continue;
    }
    dml_tensor_t r, tp, sl, g;
    CHECK_OK(dml_rt_session_get_output(s, 0, &r));
    CHECK_OK(dml_rt_session_get_output(s, 1, &tp));
    CHECK_OK(dml_rt_session_get_output(s, 2, &sl));
    CHECK_OK(dml_rt_session_get_output(s, 3, &g));
    CHECK(dims_are(&r, 2, shapes[k]) && !memcmp(r.data, kx, sizeof kx));
    /* Tile then Add: the later value's dims follow the run's. */
    int64_t td[2] = {2 * reps[k][0], 3 * reps[k][1]};
    CHECK(dims_are(&tp, 2, td));
    const float *tv = (const float *)tp.data;
    for (int64_t i = 0; i < td[0]; i++)
      for (int64_t j = 0; j < td[1]; j++)
        CHECK(tv[i * td[1] + j] == kx[(i % 2) * 3 + j % 3] + 1);
    int64_t sd[2] = {2, 3 - (starts[k] < 0 ? 0 : starts[k])};
    CHECK(dims_are(&sl, 2, sd));
    if (k == 0)
      CHECK(((const float *)sl.data)[0] == 2 && ((const float *)sl.data)[3] == 6);
    CHECK(g.rank == 1 && g.dims[0] == ns[k]);
    for (int64_t i = 0; i < ns[k]; i++) CHECK(((const int64_t *)g.data)[i] == i);
  }
  /* Tile's dim bound (2 * 4096) exceeded: OUT_OF_RANGE naming the node. */
  {
    const int64_t sh[2] = {3, 2}, rep[2] = {5000, 1};
    CHECK_ERROR(
        run_with(s, sh, rep, 0, 1), DML_STATUS_OUT_OF_RANGE,
        "output 0 dim 0 is 10000 at run time (shape [10000,3]), above its compiled "
        "bound 8192");
    CHECK_ERROR(run_with(s, sh, rep, 0, 1), DML_STATUS_OUT_OF_RANGE, "node 't'");
  }
done:
  dml_rt_session_release(s);
  dml_rt_model_release(model);
  free(bytes);
  /* --dynamic-max-elements 64: Tile's output is planned at 64 floats. */
  bytes = package(64, &size);
  model = NULL;
  s = NULL;
  if (bytes) CHECK_OK(dml_rt_model_load_memory(bytes, size, &model));
  if (model) CHECK_OK(dml_rt_session_create(model, "cpu", &s));
  if (s) {
    const int64_t sh[2] = {3, 2}, fits[2] = {2, 3}, big[2] = {8, 8};
    CHECK_OK(run_with(s, sh, fits, 0, 1)); /* [4,9]: 36 elements */
    CHECK_ERROR(run_with(s, sh, big, 0, 1), DML_STATUS_OUT_OF_RANGE,
                "needs 1536 bytes at run time, above the 256 bytes planned");
  }
  dml_rt_session_release(s);
  dml_rt_model_release(model);
  free(bytes);
}

int main(void) {
  RUN(test_reshape_squeeze_unsqueeze);
  RUN(test_expand_tile_pad);
  RUN(test_slice_split_topk);
  RUN(test_generators);
  RUN(test_resize_reduce);
  RUN(test_session);
  return dml_test_finish();
}
