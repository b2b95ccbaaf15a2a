/* Reference kernels of the indexing family (cpu_index.c): GatherElements,
 * ScatterElements, GatherND, ScatterND, OneHot, DepthToSpace, SpaceToDepth,
 * TopK, ReverseSequence, MaxUnpool. Expected values are the ONNX operator
 * spec's examples (https://onnx.ai/onnx/operators/) or computed by hand. */
#include "../cpu/cpu_test_util.h"

#define N_(a) (sizeof(a) / sizeof((a)[0]))

static void check_f32(const float *got, const float *want, size_t n, double tol) {
  for (size_t i = 0; i < n; i++) CHECK_NEAR(got[i], want[i], tol);
}
static void check_i64(const int64_t *got, const int64_t *want, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (got[i] != want[i])
      fprintf(stderr, "  [%zu] got %lld want %lld\n", i, (long long)got[i],
              (long long)want[i]);
    CHECK(got[i] == want[i]);
  }
}

/* ---- GatherElements -------------------------------------------------- */

static void test_gather_elements(void) {
  /* spec example 1: axis 1 */
  float d1[4] = {1, 2, 3, 4}, y1[4];
  int64_t i1[4] = {0, 0, 1, 0};
  dml_tensor_t in[2] = {tens(DML_DTYPE_F32, d1, 2, D(2), D(2)),
                        tens(DML_DTYPE_I64, i1, 2, D(2), D(2))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y1, 2, D(2), D(2));
  dml_attr_t ax1 = attr_i("axis", 1);
  CHECK_OK(run_op(DML_OP_GATHER_ELEMENTS, in, 2, &out, 1, &ax1, 1));
  float w1[4] = {1, 1, 4, 3};
  check_f32(y1, w1, 4, 0);
  /* spec example 2: axis 0, i32 indices, i64 data; negative index */
  int64_t d2[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, y2[6];
  int32_t i2[6] = {1, 2, 0, 2, 0, -3};
  dml_tensor_t in2[2] = {tens(DML_DTYPE_I64, d2, 2, D(3), D(3)),
                         tens(DML_DTYPE_I32, i2, 2, D(2), D(3))};
  dml_tensor_t out2 = tens(DML_DTYPE_I64, y2, 2, D(2), D(3));
  CHECK_OK(run_op(DML_OP_GATHER_ELEMENTS, in2, 2, &out2, 1, NULL, 0));
  int64_t w2[6] = {4, 8, 3, 7, 2, 3};
  check_i64(y2, w2, 6);
  i2[0] = 3;
  CHECK_ERROR(run_op(DML_OP_GATHER_ELEMENTS, in2, 2, &out2, 1, NULL, 0),
              DML_STATUS_OUT_OF_RANGE, "index 3 (at position 0) is out of range [-3, 2]");
  in2[1].dtype = DML_DTYPE_F32;
  CHECK_ERROR(run_op(DML_OP_GATHER_ELEMENTS, in2, 2, &out2, 1, NULL, 0),
              DML_STATUS_UNIMPLEMENTED, "indices dtype f32 is not supported");
}

/* ---- ScatterElements ------------------------------------------------- */

static void test_scatter_elements(void) {
  /* spec example 1 */
  float d[9] = {0}, u[6] = {1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f}, y[9];
  int64_t idx[6] = {1, 0, 2, 0, 2, 1};
  dml_tensor_t in[3] = {tens(DML_DTYPE_F32, d, 2, D(3), D(3)),
                        tens(DML_DTYPE_I64, idx, 2, D(2), D(3)),
                        tens(DML_DTYPE_F32, u, 2, D(2), D(3))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 2, D(3), D(3));
  CHECK_OK(run_op(DML_OP_SCATTER_ELEMENTS, in, 3, &out, 1, NULL, 0));
  float w[9] = {2.0f, 1.1f, 0, 1.0f, 0, 2.2f, 0, 2.1f, 1.2f};
  check_f32(y, w, 9, 0);
  /* spec example 2 (axis 1), then reductions with a duplicate index */
  float d2[5] = {1, 2, 3, 4, 5}, u2[2] = {1.1f, 2.1f}, y2[5];
  int32_t i2[2] = {1, 3};
  dml_tensor_t in2[3] = {tens(DML_DTYPE_F32, d2, 2, D(1), D(5)),
                         tens(DML_DTYPE_I32, i2, 2, D(1), D(2)),
                         tens(DML_DTYPE_F32, u2, 2, D(1), D(2))};
  dml_tensor_t out2 = tens(DML_DTYPE_F32, y2, 2, D(1), D(5));
  dml_attr_t at[2] = {attr_i("axis", 1), attr_s("reduction", "none")};
  CHECK_OK(run_op(DML_OP_SCATTER_ELEMENTS, in2, 3, &out2, 1, at, 2));
  float w2[5] = {1, 1.1f, 3, 2.1f, 5};
  check_f32(y2, w2, 5, 0);
  i2[0] = 1, i2[1] = -4; /* both hit element 1 */
  at[1] = attr_s("reduction", "add");
  CHECK_OK(run_op(DML_OP_SCATTER_ELEMENTS, in2, 3, &out2, 1, at, 2));
  float w3[5] = {1, 2 + 1.1f + 2.1f, 3, 4, 5};
  check_f32(y2, w3, 5, 1e-6);
  at[1] = attr_s("reduction", "mul");
  CHECK_OK(run_op(DML_OP_SCATTER_ELEMENTS, in2, 3, &out2, 1, at, 2));
  float w4[5] = {1, 2 * 1.1f * 2.1f, 3, 4, 5};
  check_f32(y2, w4, 5, 1e-6);
  at[1] = attr_s("reduction", "max");
  CHECK_OK(run_op(DML_OP_SCATTER_ELEMENTS, in2, 3, &out2, 1, at, 2));
  float w5[5] = {1, 2.1f, 3, 4, 5};
  check_f32(y2, w5, 5, 0);
  /* integer data, mul */
  int32_t di[3] = {2, 3, 4}, ui[2] = {5, -1}, yi[3];
  int64_t ii[2] = {0, 2};
  dml_tensor_t in3[3] = {tens(DML_DTYPE_I32, di, 1, D(3)),
                         tens(DML_DTYPE_I64, ii, 1, D(2)),
                         tens(DML_DTYPE_I32, ui, 1, D(2))};
  dml_tensor_t out3 = tens(DML_DTYPE_I32, yi, 1, D(3));
  at[1] = attr_s("reduction", "mul");
  CHECK_OK(run_op(DML_OP_SCATTER_ELEMENTS, in3, 3, &out3, 1, &at[1], 1));
  CHECK(yi[0] == 10 && yi[1] == 3 && yi[2] == -4);
  at[1] = attr_s("reduction", "xor");
  CHECK_ERROR(run_op(DML_OP_SCATTER_ELEMENTS, in3, 3, &out3, 1, &at[1], 1),
              DML_STATUS_UNIMPLEMENTED, "reduction 'xor' is not supported");
  ii[1] = 7;
  CHECK_ERROR(run_op(DML_OP_SCATTER_ELEMENTS, in3, 3, &out3, 1, NULL, 0),
              DML_STATUS_OUT_OF_RANGE, "index 7 (at position 1)");
}

/* ---- GatherND / ScatterND -------------------------------------------- */

static void test_gather_nd(void) {
  /* spec example 1: batch_dims 0, m = 2 */
  int32_t d[4] = {0, 1, 2, 3}, y[2];
  int64_t i1[4] = {0, 0, 1, 1};
  dml_tensor_t in[2] = {tens(DML_DTYPE_I32, d, 2, D(2), D(2)),
                        tens(DML_DTYPE_I64, i1, 2, D(2), D(2))};
  dml_tensor_t out = tens(DML_DTYPE_I32, y, 1, D(2));
  CHECK_OK(run_op(DML_OP_GATHER_ND, in, 2, &out, 1, NULL, 0));
  CHECK(y[0] == 0 && y[1] == 3);
  /* spec example 2: m = 1 selects rows */
  int32_t y2[4];
  int64_t i2[2] = {1, 0};
  in[1] = tens(DML_DTYPE_I64, i2, 2, D(2), D(1));
  out = tens(DML_DTYPE_I32, y2, 2, D(2), D(2));
  CHECK_OK(run_op(DML_OP_GATHER_ND, in, 2, &out, 1, NULL, 0));
  CHECK(y2[0] == 2 && y2[1] == 3 && y2[2] == 0 && y2[3] == 1);
  /* spec example 5: batch_dims 1 */
  float d3[8] = {0, 1, 2, 3, 4, 5, 6, 7}, y3[4];
  int32_t i3[2] = {1, 0};
  dml_tensor_t in3[2] = {tens(DML_DTYPE_F32, d3, 3, D(2), D(2), D(2)),
                         tens(DML_DTYPE_I32, i3, 2, D(2), D(1))};
  dml_tensor_t out3 = tens(DML_DTYPE_F32, y3, 2, D(2), D(2));
  dml_attr_t bd = attr_i("batch_dims", 1);
  CHECK_OK(run_op(DML_OP_GATHER_ND, in3, 2, &out3, 1, &bd, 1));
  float w3[4] = {2, 3, 4, 5};
  check_f32(y3, w3, 4, 0);
  /* negative index, then out of range */
  i3[0] = -1;
  CHECK_OK(run_op(DML_OP_GATHER_ND, in3, 2, &out3, 1, &bd, 1));
  check_f32(y3, w3, 4, 0);
  i3[0] = 2;
  CHECK_ERROR(run_op(DML_OP_GATHER_ND, in3, 2, &out3, 1, &bd, 1), DML_STATUS_OUT_OF_RANGE,
              "index 2");
}

static void test_scatter_nd(void) {
  /* spec example 1 */
  float d[8] = {1, 2, 3, 4, 5, 6, 7, 8}, u[4] = {9, 10, 11, 12}, y[8];
  int64_t idx[4] = {4, 3, 1, 7};
  dml_tensor_t in[3] = {tens(DML_DTYPE_F32, d, 1, D(8)),
                        tens(DML_DTYPE_I64, idx, 2, D(4), D(1)),
                        tens(DML_DTYPE_F32, u, 1, D(4))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 1, D(8));
  CHECK_OK(run_op(DML_OP_SCATTER_ND, in, 3, &out, 1, NULL, 0));
  float w[8] = {1, 11, 3, 10, 9, 6, 7, 12};
  check_f32(y, w, 8, 0);
  /* reduction add with a duplicate index (spec's ScatterND-16 example) */
  idx[0] = 4, idx[1] = 3, idx[2] = 1, idx[3] = 4;
  dml_attr_t red = attr_s("reduction", "add");
  CHECK_OK(run_op(DML_OP_SCATTER_ND, in, 3, &out, 1, &red, 1));
  float w2[8] = {1, 13, 3, 14, 26, 6, 7, 8};
  check_f32(y, w2, 8, 0);
  red = attr_s("reduction", "mul");
  CHECK_OK(run_op(DML_OP_SCATTER_ND, in, 3, &out, 1, &red, 1));
  float w3[8] = {1, 22, 3, 40, 540, 6, 7, 8};
  check_f32(y, w3, 8, 0);
  /* slices: data [2,3], indices [[1]], updates [1,3] */
  int64_t d2[6] = {1, 2, 3, 4, 5, 6}, u2[3] = {7, 8, 9}, y2[6];
  int32_t i2[1] = {-1};
  dml_tensor_t in2[3] = {tens(DML_DTYPE_I64, d2, 2, D(2), D(3)),
                         tens(DML_DTYPE_I32, i2, 2, D(1), D(1)),
                         tens(DML_DTYPE_I64, u2, 2, D(1), D(3))};
  dml_tensor_t out2 = tens(DML_DTYPE_I64, y2, 2, D(2), D(3));
  CHECK_OK(run_op(DML_OP_SCATTER_ND, in2, 3, &out2, 1, NULL, 0));
  int64_t w4[6] = {1, 2, 3, 7, 8, 9};
  check_i64(y2, w4, 6);
  in2[2].dims[1] = 2;
  CHECK_ERROR(run_op(DML_OP_SCATTER_ND, in2, 3, &out2, 1, NULL, 0),
              DML_STATUS_INVALID_ARGUMENT,
              "updates must have shape indices[:-1] + data[m:]");
}

/* ---- OneHot ------------------------------------------------------------ */

static void test_one_hot(void) {
  int64_t ind[4] = {0, 2, -1, 5};
  float depth = 3, vals[2] = {-1, 7}, y[12];
  dml_tensor_t in[3] = {tens(DML_DTYPE_I64, ind, 1, D(4)), tens(DML_DTYPE_F32, &depth, 0),
                        tens(DML_DTYPE_F32, vals, 1, D(2))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 2, D(4), D(3));
  CHECK_OK(run_op(DML_OP_ONE_HOT, in, 3, &out, 1, NULL, 0));
  float w[12] = {7, -1, -1, -1, -1, 7, -1, -1, 7, -1, -1, -1};
  check_f32(y, w, 12, 0);
  /* axis 0: [depth, 4] */
  dml_attr_t ax = attr_i("axis", 0);
  out = tens(DML_DTYPE_F32, y, 2, D(3), D(4));
  CHECK_OK(run_op(DML_OP_ONE_HOT, in, 3, &out, 1, &ax, 1));
  float w0[12] = {7, -1, -1, -1, -1, -1, -1, -1, -1, 7, 7, -1};
  check_f32(y, w0, 12, 0);
  out = tens(DML_DTYPE_F32, y, 2, D(4), D(4));
  CHECK_ERROR(run_op(DML_OP_ONE_HOT, in, 3, &out, 1, NULL, 0),
              DML_STATUS_INVALID_ARGUMENT,
              "output dims must be the indices' with depth at axis");
}

/* ---- DepthToSpace / SpaceToDepth -------------------------------------- */

static const float k_d2s_x[48] = {0,  1,  2,  3,  4,  5,  9,  10, 11, 12, 13, 14,
                                  18, 19, 20, 21, 22, 23, 27, 28, 29, 30, 31, 32,
                                  36, 37, 38, 39, 40, 41, 45, 46, 47, 48, 49, 50,
                                  54, 55, 56, 57, 58, 59, 63, 64, 65, 66, 67, 68};

static void test_depth_to_space(void) {
  /* spec examples: x [1,8,2,3], blocksize 2 */
  float y[48], z[48];
  dml_tensor_t in = tens(DML_DTYPE_F32, (void *)k_d2s_x, 4, D(1), D(8), D(2), D(3));
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 4, D(1), D(2), D(4), D(6));
  dml_attr_t at[2] = {attr_i("blocksize", 2), attr_s("mode", "DCR")};
  CHECK_OK(run_op(DML_OP_DEPTH_TO_SPACE, &in, 1, &out, 1, at, 2));
  static const float dcr[48] = {0,  18, 1,  19, 2,  20, 36, 54, 37, 55, 38, 56,
                                3,  21, 4,  22, 5,  23, 39, 57, 40, 58, 41, 59,
                                9,  27, 10, 28, 11, 29, 45, 63, 46, 64, 47, 65,
                                12, 30, 13, 31, 14, 32, 48, 66, 49, 67, 50, 68};
  check_f32(y, dcr, 48, 0);
  /* SpaceToDepth inverts DCR */
  dml_tensor_t back = tens(DML_DTYPE_F32, z, 4, D(1), D(8), D(2), D(3));
  CHECK_OK(run_op(DML_OP_SPACE_TO_DEPTH, &out, 1, &back, 1, at, 1));
  check_f32(z, k_d2s_x, 48, 0);
  at[1] = attr_s("mode", "CRD");
  CHECK_OK(run_op(DML_OP_DEPTH_TO_SPACE, &in, 1, &out, 1, at, 2));
  static const float crd[48] = {0,  9,  1,  10, 2,  11, 18, 27, 19, 28, 20, 29,
                                3,  12, 4,  13, 5,  14, 21, 30, 22, 31, 23, 32,
                                36, 45, 37, 46, 38, 47, 54, 63, 55, 64, 56, 65,
                                39, 48, 40, 49, 41, 50, 57, 66, 58, 67, 59, 68};
  check_f32(y, crd, 48, 0);
  /* an 8-byte dtype moves the same way */
  int64_t xi[48], yi[48];
  for (int i = 0; i < 48; i++) xi[i] = (int64_t)k_d2s_x[i];
  in.dtype = out.dtype = DML_DTYPE_I64;
  in.data = xi, out.data = yi;
  CHECK_OK(run_op(DML_OP_DEPTH_TO_SPACE, &in, 1, &out, 1, at, 2));
  for (int i = 0; i < 48; i++) CHECK(yi[i] == (int64_t)crd[i]);
  at[1] = attr_s("mode", "XYZ");
  CHECK_ERROR(run_op(DML_OP_DEPTH_TO_SPACE, &in, 1, &out, 1, at, 2),
              DML_STATUS_INVALID_ARGUMENT, "mode 'XYZ' is not DCR or CRD");
  at[0] = attr_i("blocksize", 0);
  out.dtype = DML_DTYPE_F32, out.data = y;
  CHECK_ERROR(run_op(DML_OP_SPACE_TO_DEPTH, &out, 1, &back, 1, at, 1),
              DML_STATUS_INVALID_ARGUMENT, "blocksize 0 must be >= 1");
}

/* ---- TopK ---------------------------------------------------------------- */

static void test_top_k(void) {
  /* spec example: [3,4], k = 3, axis 1 */
  float x[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, v[9];
  int64_t k = 3, ix[9];
  dml_tensor_t in[2] = {tens(DML_DTYPE_F32, x, 2, D(3), D(4)),
                        tens(DML_DTYPE_I64, &k, 1, D(1))};
  dml_tensor_t out[2] = {tens(DML_DTYPE_F32, v, 2, D(3), D(3)),
                         tens(DML_DTYPE_I64, ix, 2, D(3), D(3))};
  CHECK_OK(run_op(DML_OP_TOP_K, in, 2, out, 2, NULL, 0));
  float wv[9] = {3, 2, 1, 7, 6, 5, 11, 10, 9};
  int64_t wi[9] = {3, 2, 1, 3, 2, 1, 3, 2, 1};
  check_f32(v, wv, 9, 0);
  check_i64(ix, wi, 9);
  /* ties: the lower index first; smallest; axis 0 of a column vector */
  int32_t t[5] = {1, 3, 3, 2, 3}, tv[3];
  int64_t ti[3];
  dml_tensor_t tin[2] = {tens(DML_DTYPE_I32, t, 2, D(5), D(1)),
                         tens(DML_DTYPE_I64, &k, 1, D(1))};
  dml_tensor_t tout[2] = {tens(DML_DTYPE_I32, tv, 2, D(3), D(1)),
                          tens(DML_DTYPE_I64, ti, 2, D(3), D(1))};
  dml_attr_t ax0[2] = {attr_i("axis", 0), attr_i("largest", 0)};
  CHECK_OK(run_op(DML_OP_TOP_K, tin, 2, tout, 2, ax0, 1));
  CHECK(tv[0] == 3 && tv[1] == 3 && tv[2] == 3);
  CHECK(ti[0] == 1 && ti[1] == 2 && ti[2] == 4);
  CHECK_OK(run_op(DML_OP_TOP_K, tin, 2, tout, 2, ax0, 2));
  CHECK(tv[0] == 1 && tv[1] == 2 && tv[2] == 3);
  CHECK(ti[0] == 0 && ti[1] == 3 && ti[2] == 1);
  /* a larger slice against a selection reference (merge sort path) */
  enum { NN = 37 };
  double xd[NN], vd[NN];
  int64_t id[NN], kk = NN;
  for (int i = 0; i < NN; i++) xd[i] = (double)((i * 17) % 11);
  dml_tensor_t din[2] = {tens(DML_DTYPE_F64, xd, 1, D(NN)), tens(DML_DTYPE_I64, &kk, 0)};
  dml_tensor_t dout[2] = {tens(DML_DTYPE_F64, vd, 1, D(NN)),
                          tens(DML_DTYPE_I64, id, 1, D(NN))};
  CHECK_OK(run_op(DML_OP_TOP_K, din, 2, dout, 2, NULL, 0));
  for (int i = 0; i < NN; i++) {
    CHECK(vd[i] == xd[id[i]]);
    if (i) CHECK(vd[i - 1] > vd[i] || (vd[i - 1] == vd[i] && id[i - 1] < id[i]));
  }
  k = 5;
  CHECK_ERROR(run_op(DML_OP_TOP_K, in, 2, out, 2, NULL, 0), DML_STATUS_INVALID_ARGUMENT,
              "K = 5 is out of range [0, 4]");
}

/* ---- ReverseSequence ----------------------------------------------------- */

static void test_reverse_sequence(void) {
  /* spec example: time_axis 0, batch_axis 1 */
  float x[16], y[16];
  for (int i = 0; i < 16; i++) x[i] = (float)i;
  int64_t lens[4] = {4, 3, 2, 1};
  dml_tensor_t in[2] = {tens(DML_DTYPE_F32, x, 2, D(4), D(4)),
                        tens(DML_DTYPE_I64, lens, 1, D(4))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 2, D(4), D(4));
  CHECK_OK(run_op(DML_OP_REVERSE_SEQUENCE, in, 2, &out, 1, NULL, 0));
  float w[16] = {12, 9, 6, 3, 8, 5, 2, 7, 4, 1, 10, 11, 0, 13, 14, 15};
  check_f32(y, w, 16, 0);
  /* spec example: batch_axis 0, time_axis 1 */
  dml_attr_t at[2] = {attr_i("batch_axis", 0), attr_i("time_axis", 1)};
  int64_t l2[4] = {1, 2, 3, 4};
  in[1].data = l2;
  CHECK_OK(run_op(DML_OP_REVERSE_SEQUENCE, in, 2, &out, 1, at, 2));
  float w2[16] = {0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12};
  check_f32(y, w2, 16, 0);
  l2[2] = 5;
  CHECK_ERROR(run_op(DML_OP_REVERSE_SEQUENCE, in, 2, &out, 1, at, 2),
              DML_STATUS_OUT_OF_RANGE, "sequence_lens[2] = 5 is out of range [0, 4]");
}

/* ---- MaxUnpool ----------------------------------------------------------- */

static void test_max_unpool(void) {
  /* spec example without output_shape: X [1,1,2,2], kernel 2, stride 2 */
  float x[4] = {1, 2, 3, 4}, y[25];
  int64_t ind[4] = {5, 7, 13, 15};
  int64_t ks[2] = {2, 2}, st[2] = {2, 2};
  dml_attr_t at[2] = {attr_ints("kernel_shape", ks, 2), attr_ints("strides", st, 2)};
  dml_tensor_t in[3] = {tens(DML_DTYPE_F32, x, 4, D(1), D(1), D(2), D(2)),
                        tens(DML_DTYPE_I64, ind, 4, D(1), D(1), D(2), D(2)), absent()};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 4, D(1), D(1), D(4), D(4));
  CHECK_OK(run_op(DML_OP_MAX_UNPOOL, in, 2, &out, 1, at, 2));
  float w[16] = {0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4};
  check_f32(y, w, 16, 0);
  /* with output_shape [1,1,5,5] (ONNX's test_maxunpool_export_with_output_shape):
   * indices address the default [1,1,4,4]; coordinates keep their place */
  int64_t os[4] = {1, 1, 5, 5}, ind2[4] = {5, 7, 13, 15};
  in[1].data = ind2;
  in[2] = tens(DML_DTYPE_I64, os, 1, D(4));
  out = tens(DML_DTYPE_F32, y, 4, D(1), D(1), D(5), D(5));
  CHECK_OK(run_op(DML_OP_MAX_UNPOOL, in, 3, &out, 1, at, 2));
  for (int i = 0; i < 25; i++)
    CHECK(y[i] == (i == 6 ? 1 : i == 8 ? 2 : i == 16 ? 3 : i == 18 ? 4 : 0));
  ind2[3] = 16;
  CHECK_ERROR(run_op(DML_OP_MAX_UNPOOL, in, 3, &out, 1, at, 2), DML_STATUS_OUT_OF_RANGE,
              "index 16 (at position 3) is out of range [0, 16)");
  /* an output_shape smaller than the default cannot hold every index */
  os[2] = 3;
  out = tens(DML_DTYPE_F32, y, 4, D(1), D(1), D(3), D(5));
  ind2[3] = 15;
  CHECK_ERROR(run_op(DML_OP_MAX_UNPOOL, in, 3, &out, 1, at, 2), DML_STATUS_OUT_OF_RANGE,
              "index 13 (at position 2) falls outside output_shape");
}

int main(void) {
  RUN(test_gather_elements);
  RUN(test_scatter_elements);
  RUN(test_gather_nd);
  RUN(test_scatter_nd);
  RUN(test_one_hot);
  RUN(test_depth_to_space);
  RUN(test_top_k);
  RUN(test_reverse_sequence);
  RUN(test_max_unpool);
  return dml_test_finish();
}
