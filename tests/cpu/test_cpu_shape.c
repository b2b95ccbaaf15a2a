/* Tests for the shape and data-movement kernels (exact results), on several
 * element sizes. */
#include "cpu_test_util.h"

static void test_views_dropout(void) {
  int16_t x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {0};
  int64_t shp[2] = {3, 2};
  dml_tensor_t in[2] = {tens(DML_DTYPE_I16, x, 2, D(2), D(3)),
                        tens(DML_DTYPE_I64, shp, 1, D(2))};
  dml_tensor_t out = tens(DML_DTYPE_I16, y, 2, D(3), D(2));
  CHECK_OK(run_op(DML_OP_RESHAPE, in, 2, &out, 1, NULL, 0));
  CHECK(memcmp(x, y, sizeof x) == 0);
  const dml_op_t views[] = {DML_OP_FLATTEN, DML_OP_SQUEEZE, DML_OP_UNSQUEEZE,
                            DML_OP_IDENTITY};
  for (int k = 0; k < 4; k++) {
    memset(y, 0, sizeof y);
    CHECK_OK(run_op(views[k], in, 1, &out, 1, NULL, 0));
    CHECK(memcmp(x, y, sizeof x) == 0);
  }
  dml_tensor_t bad = tens(DML_DTYPE_I16, y, 1, D(5));
  CHECK_ERROR(run_op(DML_OP_RESHAPE, in, 2, &bad, 1, NULL, 0),
              DML_STATUS_INVALID_ARGUMENT, "5 elements");
  uint8_t mask[6] = {0};
  dml_tensor_t outs[2] = {out, tens(DML_DTYPE_BOOL, mask, 2, D(3), D(2))};
  CHECK_OK(run_op(DML_OP_DROPOUT, in, 1, outs, 2, NULL, 0));
  CHECK(memcmp(x, y, sizeof x) == 0 && mask[0] == 1 && mask[5] == 1);
  /* Training mode is tested in tests/random; here only its errors. */
  uint8_t tm = 1;
  float ratio = 1.5f;
  dml_tensor_t din[3] = {in[0], tens(DML_DTYPE_F32, &ratio, 0),
                         tens(DML_DTYPE_BOOL, &tm, 0)};
  CHECK_ERROR(run_op(DML_OP_DROPOUT, din, 3, outs, 2, NULL, 0),
              DML_STATUS_INVALID_ARGUMENT, "ratio 1.5 is outside [0, 1]");
  ratio = 0.5f;
  CHECK_ERROR(run_op(DML_OP_DROPOUT, din, 3, outs, 2, NULL, 0), DML_STATUS_UNIMPLEMENTED,
              "data dtype i16");
}

static void test_transpose(void) {
  /* [2,3,4] perm (2,0,1) -> [4,2,3] */
  int32_t x[24], y[24];
  for (int i = 0; i < 24; i++) x[i] = i;
  int64_t perm[3] = {2, 0, 1};
  dml_attr_t a = attr_ints("perm", perm, 3);
  dml_tensor_t in = tens(DML_DTYPE_I32, x, 3, D(2), D(3), D(4)),
               out = tens(DML_DTYPE_I32, y, 3, D(4), D(2), D(3));
  CHECK_OK(run_op(DML_OP_TRANSPOSE, &in, 1, &out, 1, &a, 1));
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 2; j++)
      for (int k = 0; k < 3; k++) CHECK(y[(i * 2 + j) * 3 + k] == x[(j * 3 + k) * 4 + i]);
  /* default perm reverses; f64 */
  double xd[6] = {1, 2, 3, 4, 5, 6}, yd[6];
  dml_tensor_t ind = tens(DML_DTYPE_F64, xd, 2, D(2), D(3)),
               outd = tens(DML_DTYPE_F64, yd, 2, D(3), D(2));
  CHECK_OK(run_op(DML_OP_TRANSPOSE, &ind, 1, &outd, 1, NULL, 0));
  CHECK(yd[0] == 1 && yd[1] == 4 && yd[2] == 2 && yd[5] == 6);
  /* big 2-D f32 (blocked path) */
  int64_t R = 37, C = 45;
  float *xf = frand_buf((size_t)(R * C)), *yf = (float *)malloc((size_t)(R * C) * 4);
  dml_tensor_t inf = tens(DML_DTYPE_F32, xf, 2, R, C),
               outf = tens(DML_DTYPE_F32, yf, 2, C, R);
  CHECK_OK(run_op(DML_OP_TRANSPOSE, &inf, 1, &outf, 1, NULL, 0));
  int ok = 1;
  for (int64_t i = 0; i < R; i++)
    for (int64_t j = 0; j < C; j++) ok &= yf[j * R + i] == xf[i * C + j];
  CHECK(ok);
  free(xf), free(yf);
  int64_t badp[3] = {0, 0, 1};
  dml_attr_t ab = attr_ints("perm", badp, 3);
  CHECK_ERROR(run_op(DML_OP_TRANSPOSE, &in, 1, &out, 1, &ab, 1),
              DML_STATUS_INVALID_ARGUMENT, "permutation");
}

static void test_concat_split(void) {
  uint8_t a[4] = {1, 2, 3, 4}, b[2] = {5, 6}, y[6];
  dml_tensor_t in[2] = {tens(DML_DTYPE_U8, a, 2, D(2), D(2)),
                        tens(DML_DTYPE_U8, b, 2, D(2), D(1))};
  dml_tensor_t out = tens(DML_DTYPE_U8, y, 2, D(2), D(3));
  dml_attr_t ax = attr_i("axis", -1);
  CHECK_OK(run_op(DML_OP_CONCAT, in, 2, &out, 1, &ax, 1));
  uint8_t want[6] = {1, 2, 5, 3, 4, 6};
  CHECK(memcmp(y, want, 6) == 0);
  dml_attr_t ax0 = attr_i("axis", 0);
  CHECK_ERROR(run_op(DML_OP_CONCAT, in, 2, &out, 1, &ax0, 1), DML_STATUS_INVALID_ARGUMENT,
              "input 1");
  /* Split back, three ways of giving the sizes */
  uint8_t p[4], q[2];
  dml_tensor_t outs[2] = {tens(DML_DTYPE_U8, p, 2, D(2), D(2)),
                          tens(DML_DTYPE_U8, q, 2, D(2), D(1))};
  dml_attr_t sa[2] = {attr_i("axis", 1), attr_ints("split", (const int64_t[]){2, 1}, 2)};
  CHECK_OK(run_op(DML_OP_SPLIT, &out, 1, outs, 2, sa, 2));
  CHECK(memcmp(p, a, 4) == 0 && memcmp(q, b, 2) == 0);
  int64_t sp[2] = {2, 1};
  dml_tensor_t sin[2] = {out, tens(DML_DTYPE_I64, sp, 1, D(2))};
  memset(p, 0, 4);
  CHECK_OK(run_op(DML_OP_SPLIT, sin, 2, outs, 2, sa, 1));
  CHECK(memcmp(p, a, 4) == 0);
  int64_t sp_bad[2] = {1, 2};
  dml_tensor_t sin_bad[2] = {out, tens(DML_DTYPE_I64, sp_bad, 1, D(2))};
  CHECK_ERROR(run_op(DML_OP_SPLIT, sin_bad, 2, outs, 2, sa, 1),
              DML_STATUS_INVALID_ARGUMENT, "split");
  /* equal split along axis 0, f32 */
  float f[6] = {1, 2, 3, 4, 5, 6}, f1[3], f2[3];
  dml_tensor_t fin = tens(DML_DTYPE_F32, f, 2, D(2), D(3));
  dml_tensor_t fo[2] = {tens(DML_DTYPE_F32, f1, 2, D(1), D(3)),
                        tens(DML_DTYPE_F32, f2, 2, D(1), D(3))};
  CHECK_OK(run_op(DML_OP_SPLIT, &fin, 1, fo, 2, NULL, 0));
  CHECK(f1[2] == 3 && f2[0] == 4);
}

static void test_slice(void) {
  int64_t x[20], y[20];
  for (int i = 0; i < 20; i++) x[i] = i;
  /* [4,5]: rows 1..3, cols from -1 down to 0 step -2 -> cols 4,2,0 */
  int64_t st[2] = {1, -1}, en[2] = {1000, INT64_MIN}, ax[2] = {0, 1}, sp[2] = {1, -2};
  dml_tensor_t in[5] = {
      tens(DML_DTYPE_I64, x, 2, D(4), D(5)), tens(DML_DTYPE_I64, st, 1, D(2)),
      tens(DML_DTYPE_I64, en, 1, D(2)), tens(DML_DTYPE_I64, ax, 1, D(2)),
      tens(DML_DTYPE_I64, sp, 1, D(2))};
  dml_tensor_t out = tens(DML_DTYPE_I64, y, 2, D(3), D(3));
  CHECK_OK(run_op(DML_OP_SLICE, in, 5, &out, 1, NULL, 0));
  int64_t want[9] = {9, 7, 5, 14, 12, 10, 19, 17, 15};
  CHECK(memcmp(y, want, sizeof want) == 0);
  /* i32 params, axes -1 only, default steps */
  int32_t st1[1] = {-3}, en1[1] = {-1}, ax1[1] = {-1};
  dml_tensor_t in1[4] = {in[0], tens(DML_DTYPE_I32, st1, 1, D(1)),
                         tens(DML_DTYPE_I32, en1, 1, D(1)),
                         tens(DML_DTYPE_I32, ax1, 1, D(1))};
  dml_tensor_t out1 = tens(DML_DTYPE_I64, y, 2, D(4), D(2));
  CHECK_OK(run_op(DML_OP_SLICE, in1, 4, &out1, 1, NULL, 0));
  CHECK(y[0] == 2 && y[1] == 3 && y[7] == 18);
  /* empty result and wrong output dims */
  int32_t st2[1] = {3}, en2[1] = {1};
  dml_tensor_t in2[4] = {in[0], tens(DML_DTYPE_I32, st2, 1, D(1)),
                         tens(DML_DTYPE_I32, en2, 1, D(1)), in1[3]};
  dml_tensor_t out2 = tens(DML_DTYPE_I64, y, 2, D(4), D(0));
  CHECK_OK(run_op(DML_OP_SLICE, in2, 4, &out2, 1, NULL, 0));
  CHECK_ERROR(run_op(DML_OP_SLICE, in2, 4, &out1, 1, NULL, 0),
              DML_STATUS_INVALID_ARGUMENT, "slice");
}

static void test_gather(void) {
  float x[6] = {1, 2, 3, 4, 5, 6}, y[6];
  int64_t idx[2] = {-1, 0};
  dml_tensor_t in[2] = {tens(DML_DTYPE_F32, x, 2, D(3), D(2)),
                        tens(DML_DTYPE_I64, idx, 1, D(2))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 2, D(2), D(2));
  CHECK_OK(run_op(DML_OP_GATHER, in, 2, &out, 1, NULL, 0));
  CHECK(y[0] == 5 && y[1] == 6 && y[2] == 1 && y[3] == 2);
  /* axis 1, 2-D indices (i32) */
  int32_t id2[4] = {1, 0, 1, 1};
  dml_tensor_t in2[2] = {in[0], tens(DML_DTYPE_I32, id2, 2, D(2), D(2))};
  dml_tensor_t out2 = tens(DML_DTYPE_F32, y, 3, D(3), D(2), D(2));
  dml_attr_t ax = attr_i("axis", 1);
  float y12[12];
  out2.data = y12;
  CHECK_OK(run_op(DML_OP_GATHER, in2, 2, &out2, 1, &ax, 1));
  CHECK(y12[0] == 2 && y12[1] == 1 && y12[3] == 2 && y12[4] == 4 && y12[11] == 6);
  /* scalar index removes the dim */
  int64_t s = 2;
  dml_tensor_t in3[2] = {in[0], tens(DML_DTYPE_I64, &s, 0)};
  dml_tensor_t out3 = tens(DML_DTYPE_F32, y, 1, D(2));
  CHECK_OK(run_op(DML_OP_GATHER, in3, 2, &out3, 1, NULL, 0));
  CHECK(y[0] == 5 && y[1] == 6);
  int64_t bad[2] = {0, 3};
  dml_tensor_t in4[2] = {in[0], tens(DML_DTYPE_I64, bad, 1, D(2))};
  CHECK_ERROR(run_op(DML_OP_GATHER, in4, 2, &out, 1, NULL, 0), DML_STATUS_OUT_OF_RANGE,
              "index 3");
  bad[1] = -4;
  CHECK_ERROR(run_op(DML_OP_GATHER, in4, 2, &out, 1, NULL, 0), DML_STATUS_OUT_OF_RANGE,
              "index -4");
}

static void test_shape_size(void) {
  float x[1];
  dml_tensor_t in = tens(DML_DTYPE_F32, x, 4, D(2), D(3), D(0), D(5));
  int64_t y[4];
  dml_tensor_t out = tens(DML_DTYPE_I64, y, 1, D(4));
  CHECK_OK(run_op(DML_OP_SHAPE, &in, 1, &out, 1, NULL, 0));
  CHECK(y[0] == 2 && y[1] == 3 && y[2] == 0 && y[3] == 5);
  dml_attr_t se[2] = {attr_i("start", 1), attr_i("end", -1)};
  dml_tensor_t out2 = tens(DML_DTYPE_I64, y, 1, D(2));
  CHECK_OK(run_op(DML_OP_SHAPE, &in, 1, &out2, 1, se, 2));
  CHECK(y[0] == 3 && y[1] == 0);
  dml_attr_t se2 = attr_i("start", -10);
  CHECK_OK(run_op(DML_OP_SHAPE, &in, 1, &out, 1, &se2, 1));
  CHECK(y[0] == 2);
  dml_tensor_t in2 = tens(DML_DTYPE_F32, x, 2, D(6), D(7));
  dml_tensor_t outs = tens(DML_DTYPE_I64, y, 0);
  CHECK_OK(run_op(DML_OP_SIZE, &in2, 1, &outs, 1, NULL, 0));
  CHECK(y[0] == 42);
}

static void test_expand_tile(void) {
  int32_t x[3] = {1, 2, 3}, y[12];
  int64_t shp[2] = {2, 1};
  dml_tensor_t in[2] = {tens(DML_DTYPE_I32, x, 2, D(3), D(1)),
                        tens(DML_DTYPE_I64, shp, 1, D(2))};
  dml_tensor_t out = tens(DML_DTYPE_I32, y, 2, D(3), D(1));
  CHECK_ERROR(run_op(DML_OP_EXPAND, in, 2, &out, 1, NULL, 0), DML_STATUS_INVALID_ARGUMENT,
              "shape does not broadcast"); /* [3,1] with [2,1] */
  int64_t shp2[3] = {2, 1, 2};
  dml_tensor_t in2[2] = {in[0], tens(DML_DTYPE_I64, shp2, 1, D(3))};
  dml_tensor_t out2 = tens(DML_DTYPE_I32, y, 3, D(2), D(3), D(2));
  CHECK_OK(run_op(DML_OP_EXPAND, in2, 2, &out2, 1, NULL, 0));
  int32_t want[12] = {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3};
  CHECK(memcmp(y, want, sizeof want) == 0);
  CHECK_ERROR(run_op(DML_OP_EXPAND, in2, 2, &out, 1, NULL, 0),
              DML_STATUS_INVALID_ARGUMENT, "broadcast");
  /* Tile [3,1] x (2, 2) -> [6,2] */
  int64_t rep[2] = {2, 2};
  dml_tensor_t tin[2] = {in[0], tens(DML_DTYPE_I64, rep, 1, D(2))};
  dml_tensor_t tout = tens(DML_DTYPE_I32, y, 2, D(6), D(2));
  CHECK_OK(run_op(DML_OP_TILE, tin, 2, &tout, 1, NULL, 0));
  int32_t wt[12] = {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3};
  CHECK(memcmp(y, wt, sizeof wt) == 0);
  uint16_t h[2] = {7, 8}, hy[6];
  int64_t r3[1] = {3};
  dml_tensor_t hin[2] = {tens(DML_DTYPE_F16, h, 1, D(2)),
                         tens(DML_DTYPE_I64, r3, 1, D(1))};
  dml_tensor_t hout = tens(DML_DTYPE_F16, hy, 1, D(6));
  CHECK_OK(run_op(DML_OP_TILE, hin, 2, &hout, 1, NULL, 0));
  CHECK(hy[0] == 7 && hy[1] == 8 && hy[4] == 7 && hy[5] == 8);
}

static void test_pad(void) {
  float x[6] = {1, 2, 3, 4, 5, 6}, y[40];
  int64_t pads[4] = {1, 2, 0, 1}; /* [2,3] -> [3,6] */
  float cv = 9;
  dml_tensor_t in[3] = {tens(DML_DTYPE_F32, x, 2, D(2), D(3)),
                        tens(DML_DTYPE_I64, pads, 1, D(4)), tens(DML_DTYPE_F32, &cv, 0)};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 2, D(3), D(6));
  CHECK_OK(run_op(DML_OP_PAD, in, 3, &out, 1, NULL, 0));
  float wc[18] = {9, 9, 9, 9, 9, 9, 9, 9, 1, 2, 3, 9, 9, 9, 4, 5, 6, 9};
  CHECK(memcmp(y, wc, sizeof wc) == 0);
  dml_attr_t re = attr_s("mode", "reflect");
  CHECK_OK(run_op(DML_OP_PAD, in, 2, &out, 1, &re, 1));
  float wr[18] = {6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5};
  CHECK(memcmp(y, wr, sizeof wr) == 0);
  dml_attr_t ed = attr_s("mode", "edge");
  CHECK_OK(run_op(DML_OP_PAD, in, 2, &out, 1, &ed, 1));
  float we[18] = {1, 1, 1, 2, 3, 3, 1, 1, 1, 2, 3, 3, 4, 4, 4, 5, 6, 6};
  CHECK(memcmp(y, we, sizeof we) == 0);
  /* attribute form (opset 2) wins over the input; negative pad crops */
  int64_t pa[4] = {0, -1, 1, 0};
  dml_attr_t at[2] = {attr_ints("pads", pa, 4), attr_f("value", -1)};
  dml_tensor_t out2 = tens(DML_DTYPE_F32, y, 2, D(3), D(2));
  CHECK_OK(run_op(DML_OP_PAD, in, 3, &out2, 1, at, 2));
  float wa[6] = {2, 3, 5, 6, -1, -1};
  CHECK(memcmp(y, wa, sizeof wa) == 0);
  dml_attr_t bad = attr_s("mode", "mirror");
  CHECK_ERROR(run_op(DML_OP_PAD, in, 2, &out, 1, &bad, 1), DML_STATUS_UNIMPLEMENTED,
              "mirror");
  /* int64 data, default value 0 */
  int64_t xi[2] = {5, 6}, yi[4];
  int64_t p1[2] = {1, 1};
  dml_tensor_t ini[2] = {tens(DML_DTYPE_I64, xi, 1, D(2)),
                         tens(DML_DTYPE_I64, p1, 1, D(2))};
  dml_tensor_t outi = tens(DML_DTYPE_I64, yi, 1, D(4));
  CHECK_OK(run_op(DML_OP_PAD, ini, 2, &outi, 1, NULL, 0));
  CHECK(yi[0] == 0 && yi[1] == 5 && yi[2] == 6 && yi[3] == 0);
}

static void test_constant_range(void) {
  int64_t shp[2] = {2, 3};
  float y[6];
  dml_tensor_t in = tens(DML_DTYPE_I64, shp, 1, D(2));
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 2, D(2), D(3));
  memset(y, 0xff, sizeof y);
  CHECK_OK(run_op(DML_OP_CONSTANT_OF_SHAPE, &in, 1, &out, 1, NULL, 0));
  CHECK(y[0] == 0 && y[5] == 0);
  int32_t v = 7;
  int32_t yi[6];
  dml_attr_t a;
  memset(&a, 0, sizeof a);
  a.name = "value", a.kind = DML_ATTR_TENSOR, a.tensor = tens(DML_DTYPE_I32, &v, 1, D(1));
  dml_tensor_t outi = tens(DML_DTYPE_I32, yi, 2, D(2), D(3));
  CHECK_OK(run_op(DML_OP_CONSTANT_OF_SHAPE, &in, 1, &outi, 1, &a, 1));
  CHECK(yi[0] == 7 && yi[5] == 7);
  /* Range */
  float s = 1, l = 2, d = 0.25f, r[4];
  dml_tensor_t rin[3] = {tens(DML_DTYPE_F32, &s, 0), tens(DML_DTYPE_F32, &l, 0),
                         tens(DML_DTYPE_F32, &d, 0)};
  dml_tensor_t rout = tens(DML_DTYPE_F32, r, 1, D(4));
  CHECK_OK(run_op(DML_OP_RANGE, rin, 3, &rout, 1, NULL, 0));
  CHECK(r[0] == 1 && r[3] == 1.75f);
  int64_t is = 10, il = 3, id = -3, ir[3];
  dml_tensor_t iin[3] = {tens(DML_DTYPE_I64, &is, 0), tens(DML_DTYPE_I64, &il, 0),
                         tens(DML_DTYPE_I64, &id, 0)};
  dml_tensor_t iout = tens(DML_DTYPE_I64, ir, 1, D(3));
  CHECK_OK(run_op(DML_OP_RANGE, iin, 3, &iout, 1, NULL, 0));
  CHECK(ir[0] == 10 && ir[1] == 7 && ir[2] == 4);
  dml_tensor_t iout2 = tens(DML_DTYPE_I64, ir, 1, D(2));
  CHECK_ERROR(run_op(DML_OP_RANGE, iin, 3, &iout2, 1, NULL, 0),
              DML_STATUS_INVALID_ARGUMENT, "[3]");
}

int main(void) {
  RUN(test_views_dropout);
  RUN(test_transpose);
  RUN(test_concat_split);
  RUN(test_slice);
  RUN(test_gather);
  RUN(test_shape_size);
  RUN(test_expand_tile);
  RUN(test_pad);
  RUN(test_constant_range);
  return dml_test_finish();
}
