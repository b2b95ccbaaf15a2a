/* Reference kernels Einsum and Det (cpu_einsum.c), GridSample and RoiAlign
 * (cpu_sample.c): Einsum against naive loops, the others against values
 * computed by hand from the ONNX spec's definitions. Tolerance 1e-5. */
#include "../cpu/cpu_test_util.h"

static dml_status_t einsum(const char *eq, dml_tensor_t *in, uint32_t n,
                           dml_tensor_t *out) {
  dml_attr_t a = attr_s("equation", eq);
  return run_op(DML_OP_EINSUM, in, n, out, 1, &a, 1);
}

static void test_einsum_matmul(void) {
  float *A = frand_buf(6), *B = frand_buf(12), y[8], want[8];
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 4; k++) {
      double s = 0;
      for (int j = 0; j < 3; j++) s += (double)A[i * 3 + j] * B[j * 4 + k];
      want[i * 4 + k] = (float)s;
    }
  dml_tensor_t in[2] = {tens(DML_DTYPE_F32, A, 2, D(2), D(3)),
                        tens(DML_DTYPE_F32, B, 2, D(3), D(4))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 2, D(2), D(4));
  CHECK_OK(einsum("ij,jk->ik", in, 2, &out));
  CHECK(max_abs_diff(y, want, 8) < 1e-5);
  memset(y, 0, sizeof y);
  CHECK_OK(einsum("ij, jk", in, 2, &out)); /* implicit output: ik */
  CHECK(max_abs_diff(y, want, 8) < 1e-5);
  /* transposed output: "ij,jk->ki" */
  float yt[8];
  out = tens(DML_DTYPE_F32, yt, 2, D(4), D(2));
  CHECK_OK(einsum("ij,jk->ki", in, 2, &out));
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 4; k++) CHECK_NEAR(yt[k * 2 + i], want[i * 4 + k], 1e-5);
  /* mismatched contraction extent */
  in[1].dims[0] = 2;
  in[1].dims[1] = 6;
  out = tens(DML_DTYPE_F32, y, 2, D(2), D(6));
  CHECK_ERROR(einsum("ij,jk->ik", in, 2, &out), DML_STATUS_INVALID_ARGUMENT,
              "subscript 'j' has extents 3 and 2");
  CHECK_ERROR(einsum("ij,jk->iz", in, 2, &out), DML_STATUS_INVALID_ARGUMENT,
              "output subscript 'z' does not occur in an input");
  CHECK_ERROR(einsum("ij->ik", in, 2, &out), DML_STATUS_INVALID_ARGUMENT,
              "equation has 1 input terms for 2 inputs");
  free(A);
  free(B);
}

static void test_einsum_diag_trace(void) {
  float M[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, tr, diag[3], t[9], s;
  dml_tensor_t in = tens(DML_DTYPE_F32, M, 2, D(3), D(3));
  dml_tensor_t out = tens(DML_DTYPE_F32, &tr, 0);
  CHECK_OK(einsum("ii", &in, 1, &out)); /* implicit: trace */
  CHECK_NEAR(tr, 15, 1e-6);
  out = tens(DML_DTYPE_F32, diag, 1, D(3));
  CHECK_OK(einsum("ii->i", &in, 1, &out));
  CHECK(diag[0] == 1 && diag[1] == 5 && diag[2] == 9);
  out = tens(DML_DTYPE_F32, t, 2, D(3), D(3));
  CHECK_OK(einsum("ji", &in, 1, &out)); /* implicit output "ij": transpose */
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) CHECK(t[i * 3 + j] == M[j * 3 + i]);
  out = tens(DML_DTYPE_F32, &s, 0);
  CHECK_OK(einsum("ij->", &in, 1, &out));
  CHECK_NEAR(s, 45, 1e-6);
  /* batch diagonal "...ii->...i" on [2,3,3] */
  float B[18], bd[6];
  for (int i = 0; i < 18; i++) B[i] = (float)i;
  dml_tensor_t bin = tens(DML_DTYPE_F32, B, 3, D(2), D(3), D(3));
  out = tens(DML_DTYPE_F32, bd, 2, D(2), D(3));
  CHECK_OK(einsum("...ii->...i", &bin, 1, &out));
  float wbd[6] = {0, 4, 8, 9, 13, 17};
  for (int i = 0; i < 6; i++) CHECK(bd[i] == wbd[i]);
}

static void test_einsum_ellipsis_int(void) {
  /* "...ij,...jk->...ik": A [2,1,2,3] and B [3,3,4] broadcast to [2,3]. */
  float *A = frand_buf(12), *B = frand_buf(36), y[48];
  dml_tensor_t in[2] = {tens(DML_DTYPE_F32, A, 4, D(2), D(1), D(2), D(3)),
                        tens(DML_DTYPE_F32, B, 3, D(3), D(3), D(4))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 4, D(2), D(3), D(2), D(4));
  CHECK_OK(einsum("...ij,...jk->...ik", in, 2, &out));
  double worst = 0;
  for (int p = 0; p < 2; p++)
    for (int q = 0; q < 3; q++)
      for (int i = 0; i < 2; i++)
        for (int k = 0; k < 4; k++) {
          double s = 0;
          for (int j = 0; j < 3; j++)
            s += (double)A[(p * 2 + i) * 3 + j] * B[(q * 3 + j) * 4 + k];
          double d = fabs(s - y[((p * 3 + q) * 2 + i) * 4 + k]);
          if (d > worst) worst = d;
        }
  CHECK(worst < 1e-5);
  /* integer outer product "i,j->ij" */
  int64_t a[2] = {2, -3}, b[3] = {1, 10, 100}, o[6];
  dml_tensor_t iin[2] = {tens(DML_DTYPE_I64, a, 1, D(2)),
                         tens(DML_DTYPE_I64, b, 1, D(3))};
  dml_tensor_t iout = tens(DML_DTYPE_I64, o, 2, D(2), D(3));
  CHECK_OK(einsum("i,j->ij", iin, 2, &iout));
  int64_t w[6] = {2, 20, 200, -3, -30, -300};
  for (int i = 0; i < 6; i++) CHECK(o[i] == w[i]);
  /* three operands: "i,i,i->" */
  int64_t dot;
  dml_tensor_t tin[3] = {iin[0], iin[0], iin[0]};
  iout = tens(DML_DTYPE_I64, &dot, 0);
  CHECK_OK(einsum("i,i,i->", tin, 3, &iout));
  CHECK(dot == 8 - 27);
  free(A);
  free(B);
}

/* A permuted batched contraction large enough for the GEMM path:
 * "bij,bkj->kbi" with b=3, i=17, j=33, k=9, against a naive loop. */
static void test_einsum_gemm_path(void) {
  enum { B = 3, I = 17, J = 33, K = 9 };
  float *A = frand_buf(B * I * J), *Bm = frand_buf(B * K * J), *y = frand_buf(K * B * I);
  dml_tensor_t in[2] = {tens(DML_DTYPE_F32, A, 3, D(B), D(I), D(J)),
                        tens(DML_DTYPE_F32, Bm, 3, D(B), D(K), D(J))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 3, D(K), D(B), D(I));
  CHECK_OK(einsum("bij,bkj->kbi", in, 2, &out));
  double worst = 0;
  for (int b = 0; b < B; b++)
    for (int i = 0; i < I; i++)
      for (int k = 0; k < K; k++) {
        double s = 0;
        for (int j = 0; j < J; j++)
          s += (double)A[(b * I + i) * J + j] * Bm[(b * K + k) * J + j];
        double d = fabs(s - y[(k * B + b) * I + i]);
        if (d > worst) worst = d;
      }
  CHECK(worst < 1e-4);
  free(A);
  free(Bm);
  free(y);
}

static void test_det(void) {
  float m[12] = {1, 2, 3, 4, 1, 2, 2, 4, 0, 0, 0, 0}, d[3];
  dml_tensor_t in = tens(DML_DTYPE_F32, m, 3, D(3), D(2), D(2));
  dml_tensor_t out = tens(DML_DTYPE_F32, d, 1, D(3));
  CHECK_OK(run_op(DML_OP_DET, &in, 1, &out, 1, NULL, 0));
  CHECK_NEAR(d[0], -2, 1e-6);
  CHECK_NEAR(d[1], 0, 1e-6); /* singular */
  CHECK_NEAR(d[2], 0, 1e-6);
  double m3[9] = {6, 1, 1, 4, -2, 5, 2, 8, 7}, d3;
  in = tens(DML_DTYPE_F64, m3, 2, D(3), D(3));
  out = tens(DML_DTYPE_F64, &d3, 0);
  CHECK_OK(run_op(DML_OP_DET, &in, 1, &out, 1, NULL, 0));
  CHECK_NEAR(d3, -306, 1e-9);
  /* pivoting: a zero leading entry */
  double p[4] = {0, 1, 1, 0};
  in = tens(DML_DTYPE_F64, p, 2, D(2), D(2));
  CHECK_OK(run_op(DML_OP_DET, &in, 1, &out, 1, NULL, 0));
  CHECK_NEAR(d3, -1, 1e-12);
  int32_t bad[4] = {1, 2, 3, 4};
  in = tens(DML_DTYPE_I32, bad, 2, D(2), D(2));
  out = tens(DML_DTYPE_I32, bad, 0);
  CHECK_ERROR(run_op(DML_OP_DET, &in, 1, &out, 1, NULL, 0), DML_STATUS_UNIMPLEMENTED,
              "input dtype i32 is not supported by Det");
}

/* ---- GridSample ------------------------------------------------------- */

static dml_status_t grid_sample(float *x, int64_t H, int64_t W, float *grid, int64_t Ho,
                                int64_t Wo, float *y, const char *mode, const char *pad,
                                int align) {
  dml_tensor_t in[2] = {tens(DML_DTYPE_F32, x, 4, D(1), D(1), H, W),
                        tens(DML_DTYPE_F32, grid, 4, D(1), Ho, Wo, D(2))};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 4, D(1), D(1), Ho, Wo);
  dml_attr_t at[3] = {attr_s("mode", mode), attr_s("padding_mode", pad),
                      attr_i("align_corners", align)};
  return run_op(DML_OP_GRID_SAMPLE, in, 2, &out, 1, at, 3);
}

static void test_grid_sample_identity(void) {
  float x[12], grid[24], y[12];
  for (int i = 0; i < 12; i++) x[i] = (float)(i * i % 7) - 2.5f;
  static const char *const modes[3] = {"bilinear", "nearest", "bicubic"};
  for (int align = 0; align < 2; align++) {
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 4; j++) {
        float *g = grid + (i * 4 + j) * 2;
        g[0] = align ? -1.0f + 2.0f * (float)j / 3.0f : (2.0f * (float)j + 1) / 4.0f - 1;
        g[1] = align ? -1.0f + 2.0f * (float)i / 2.0f : (2.0f * (float)i + 1) / 3.0f - 1;
      }
    for (int m = 0; m < 3; m++) {
      CHECK_OK(grid_sample(x, 3, 4, grid, 3, 4, y, modes[m], "zeros", align));
      CHECK(max_abs_diff(y, x, 12) < 1e-5);
    }
  }
}

static void test_grid_sample_padding(void) {
  float x[4] = {1, 2, 3, 4}, y;
  float g1[2] = {-1, -1};
  /* align 0: (-1,-1) is (-0.5,-0.5): one quarter of X[0][0], the rest zeros */
  CHECK_OK(grid_sample(x, 2, 2, g1, 1, 1, &y, "bilinear", "zeros", 0));
  CHECK_NEAR(y, 0.25, 1e-6);
  CHECK_OK(grid_sample(x, 2, 2, g1, 1, 1, &y, "bilinear", "border", 0));
  CHECK_NEAR(y, 1, 1e-6);
  float g0[2] = {0, 0};
  CHECK_OK(grid_sample(x, 2, 2, g0, 1, 1, &y, "bilinear", "zeros", 1));
  CHECK_NEAR(y, 2.5, 1e-6);
  /* nearest rounds half to even: (0.5, 0.5) -> (0, 0) */
  CHECK_OK(grid_sample(x, 2, 2, g0, 1, 1, &y, "nearest", "zeros", 1));
  CHECK_NEAR(y, 1, 1e-6);
  /* reflection: x = 1.25 reflects to 0.75 about the border 1 (align 1) */
  float g2[2] = {1.5f, 0};
  CHECK_OK(grid_sample(x, 2, 2, g2, 1, 1, &y, "bilinear", "reflection", 1));
  CHECK_NEAR(y, 2.75, 1e-6);
  CHECK_OK(grid_sample(x, 2, 2, g2, 1, 1, &y, "bilinear", "border", 1));
  CHECK_NEAR(y, 3, 1e-6);
  /* far outside with zeros: 0 */
  float g3[2] = {5, 5};
  CHECK_OK(grid_sample(x, 2, 2, g3, 1, 1, &y, "bicubic", "zeros", 0));
  CHECK_NEAR(y, 0, 1e-6);
  CHECK_ERROR(grid_sample(x, 2, 2, g3, 1, 1, &y, "area", "zeros", 0),
              DML_STATUS_UNIMPLEMENTED, "mode 'area' is not supported");
}

/* ---- RoiAlign --------------------------------------------------------- */

static dml_status_t roi_align(float *x, float *rois, int64_t *bi, int64_t R, float *y,
                              int64_t oh, int64_t ow, const char *mode, const char *ctm,
                              int64_t sr) {
  dml_tensor_t in[3] = {tens(DML_DTYPE_F32, x, 4, D(1), D(1), D(4), D(4)),
                        tens(DML_DTYPE_F32, rois, 2, R, D(4)),
                        tens(DML_DTYPE_I64, bi, 1, R)};
  dml_tensor_t out = tens(DML_DTYPE_F32, y, 4, R, D(1), oh, ow);
  dml_attr_t at[5] = {attr_s("mode", mode), attr_s("coordinate_transformation_mode", ctm),
                      attr_i("sampling_ratio", sr), attr_i("output_height", oh),
                      attr_i("output_width", ow)};
  return run_op(DML_OP_ROI_ALIGN, in, 3, &out, 1, at, 5);
}

static void test_roi_align(void) {
  float x[16], y[4];
  for (int i = 0; i < 16; i++) x[i] = (float)(i % 4); /* X[h][w] = w */
  int64_t bi[1] = {0};
  /* output_half_pixel, roi (0,0,4,4), 2x2 bins of 2x2 samples: samples at
   * x = 0.5, 1.5 | 2.5, 3.5 (3.5 clamps to 3) -> bins 1 and 2.75 */
  float r1[4] = {0, 0, 4, 4};
  CHECK_OK(roi_align(x, r1, bi, 1, y, 2, 2, "avg", "output_half_pixel", 2));
  float w[4] = {1, 2.75f, 1, 2.75f};
  CHECK(max_abs_diff(y, w, 4) < 1e-6);
  /* half_pixel shifts the roi by -0.5: the same grid */
  float r2[4] = {0.5f, 0.5f, 4.5f, 4.5f};
  CHECK_OK(roi_align(x, r2, bi, 1, y, 2, 2, "avg", "half_pixel", 2));
  CHECK(max_abs_diff(y, w, 4) < 1e-6);
  /* max: samples at x = 1 and 3 (integers, weight 1) -> 3; avg -> 2 */
  CHECK_OK(roi_align(x, r1, bi, 1, y, 1, 1, "max", "output_half_pixel", 2));
  CHECK_NEAR(y[0], 3, 1e-6);
  CHECK_OK(roi_align(x, r1, bi, 1, y, 1, 1, "avg", "output_half_pixel", 2));
  CHECK_NEAR(y[0], 2, 1e-6);
  /* adaptive sampling (ratio 0): ceil(4/1) = 4 samples per axis at
   * 0.5, 1.5, 2.5, 3.5 -> (0.5+1.5+2.5+3)/4 */
  CHECK_OK(roi_align(x, r1, bi, 1, y, 1, 1, "avg", "output_half_pixel", 0));
  CHECK_NEAR(y[0], 7.5 / 4, 1e-6);
  bi[0] = 1;
  CHECK_ERROR(roi_align(x, r1, bi, 1, y, 1, 1, "avg", "half_pixel", 0),
              DML_STATUS_OUT_OF_RANGE, "batch_indices[0] = 1 is out of range [0, 1)");
}

int main(void) {
  RUN(test_einsum_matmul);
  RUN(test_einsum_diag_trace);
  RUN(test_einsum_ellipsis_int);
  RUN(test_einsum_gemm_path);
  RUN(test_det);
  RUN(test_grid_sample_identity);
  RUN(test_grid_sample_padding);
  RUN(test_roi_align);
  return dml_test_finish();
}
