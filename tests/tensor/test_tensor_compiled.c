/*
 * test_tensor_compiled.c — eager ops (runtime/dml_tensor.h) against the
 * compiled path: each one-node model of tests/tensor (make_models.py:
 * Add with broadcasting and Exp on the edge values NaN, +-inf, -0,
 * denormals, 1e+-30; MatMul with a batch broadcast; Conv with pads and
 * strides; ReduceSum) is compiled for the CPU in memory
 * (dml_compile_onnx_memory) and run by a dml_rt session on the same
 * inputs as the eager op. Tolerance: bit for bit (NaN for NaN), as both
 * run the same reference kernel; the compiled path must not be
 * "improved" silently by one side. Add, Exp, Softmax (rows of 16, edge
 * values), LogSoftmax (rows of 1,000), Concat and Gather also on Vulkan
 * where a device opens (lavapipe in CI): the package compiled for "vulkan"
 * against the eager kernel library's kernels, bit for bit on the same
 * device.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_driver.h"
#include "dml_rt.h"
#include "dml_tensor.h"
#include "dml_test.h"
#include "tensor_test_util.h"

/* Compiles tests/tensor/<name>.onnx for the CPU and runs it on `in`;
 * compares output 0 with the eager op `op` on the same inputs. */
static void check_model_on(const char *dev, const char *name, const char *op,
                           const dml_attr_t *attrs, uint32_t n_attrs,
                           const dml_tensor_t *in, uint32_t n_in) {
  dml_rt_model_t *m = tensor_test_compile(name, dev);
  if (!m) return;
  dml_rt_session_t *s = NULL;
  CHECK_OK(dml_rt_session_create(m, dev, &s));
  for (uint32_t i = 0; i < n_in; i++) CHECK_OK(dml_rt_session_set_input(s, i, &in[i]));
  CHECK_OK(dml_rt_session_run(s));
  dml_tensor_t ref;
  CHECK_OK(dml_rt_session_get_output(s, 0, &ref));

  dml_rt_device_t *cpu = NULL;
  CHECK_OK(dml_rt_device_open(dev, &cpu));
  dml_rt_tensor_t t[8], y;
  for (uint32_t i = 0; i < n_in; i++)
    CHECK_OK(dml_rt_tensor_from_host(cpu, &in[i], &t[i]));
  dml_status_t e = dml_rt_tensor_op(op, t, n_in, attrs, n_attrs, &y, 1);
  CHECK_OK(e);
  if (e) {
    dml_rt_device_close(cpu);
    dml_rt_session_release(s);
    dml_rt_model_release(m);
    return;
  }
  dml_rt_tensor_info_t info;
  CHECK_OK(dml_rt_tensor_info(y, &info));
  CHECK(info.dtype == ref.dtype && info.rank == ref.rank);
  CHECK(memcmp(info.dims, ref.dims, sizeof(int64_t) * (size_t)ref.rank) == 0);
  size_t nb = dml_tensor_bytes(&ref);
  float *got = (float *)malloc(nb ? nb : 1);
  dml_tensor_t h = ref;
  h.data = got;
  CHECK_OK(dml_rt_tensor_to_host(y, &h));
  int64_t ne = (int64_t)(nb / 4), bad = 0;
  const float *want = (const float *)ref.data;
  for (int64_t i = 0; i < ne; i++)
    if (!(isnan(got[i]) && isnan(want[i])) && memcmp(&got[i], &want[i], 4)) {
      if (bad++ < 3)
        fprintf(stderr, "%s [%lld]: eager %.9g, compiled %.9g\n", name, (long long)i,
                (double)got[i], (double)want[i]);
    }
  CHECK(bad == 0);
  if (!bad)
    printf("%s: eager %s equals the compiled package on %lld elements (%s)\n", name, op,
           (long long)ne, dev);
  free(got);
  dml_rt_device_close(cpu);
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

static void check_model(const char *name, const char *op, const dml_attr_t *attrs,
                        uint32_t n_attrs, const dml_tensor_t *in, uint32_t n_in) {
  check_model_on("cpu", name, op, attrs, n_attrs, in, n_in);
}

static void fill(float *v, int n, int seed) {
  for (int i = 0; i < n; i++)
    v[i] = (float)(((i + 3) * (seed * 7 + 11)) % 17) * 0.125f - 1.0f;
}

static void test_elementwise(void) {
  int64_t da[2] = {16, 1}, db[1] = {16};
  float b[16];
  for (int i = 0; i < 16; i++) b[i] = k_edges[15 - i];
  dml_tensor_t in[2] = {dml_test_tensor(DML_DTYPE_F32, 2, da, k_edges),
                        dml_test_tensor(DML_DTYPE_F32, 1, db, b)};
  check_model("add_bcast", "Add", NULL, 0, in, 2);
  check_model("exp", "Exp", NULL, 0, &in[1], 1);
  /* Vulkan (lavapipe in CI): the eager kernel library's Add and Exp take
   * their formulas from the scheduler, so the package's fused kernels and
   * the eager ones give the same bits on the same device */
  dml_rt_device_t *v = NULL;
  dml_status_t st = dml_rt_device_open("vulkan", &v);
  if (st) {
    char *msg = dml_status_format(st);
    printf("SKIP the Vulkan comparison: %s\n", msg ? msg : "?");
    free(msg);
    dml_status_free(st);
    return;
  }
  dml_rt_device_close(v);
  check_model_on("vulkan", "add_bcast", "Add", NULL, 0, in, 2);
  check_model_on("vulkan", "exp", "Exp", NULL, 0, &in[1], 1);
}

static void test_matmul_conv_reduce(void) {
  float a[30], b[20], x[50], w[54], bias[3] = {0.5f, -1.0f, 0.0f}, r[48];
  fill(a, 30, 1);
  fill(b, 20, 2);
  fill(x, 50, 3);
  fill(w, 54, 4);
  for (int i = 0; i < 48; i++) r[i] = k_edges[(i * 5) % 16];
  int64_t da[3] = {2, 3, 5}, db[2] = {5, 4};
  dml_tensor_t mm[2] = {dml_test_tensor(DML_DTYPE_F32, 3, da, a),
                        dml_test_tensor(DML_DTYPE_F32, 2, db, b)};
  check_model("matmul", "MatMul", NULL, 0, mm, 2);
  int64_t dx[4] = {1, 2, 5, 5}, dw[4] = {3, 2, 3, 3}, dbias[1] = {3};
  dml_tensor_t cv[3] = {dml_test_tensor(DML_DTYPE_F32, 4, dx, x),
                        dml_test_tensor(DML_DTYPE_F32, 4, dw, w),
                        dml_test_tensor(DML_DTYPE_F32, 1, dbias, bias)};
  int64_t pads[4] = {1, 1, 1, 1}, strides[2] = {2, 2};
  dml_attr_t ca[2];
  memset(ca, 0, sizeof ca);
  ca[0].name = "pads", ca[0].kind = DML_ATTR_INTS, ca[0].n = 4, ca[0].ints = pads;
  ca[1].name = "strides", ca[1].kind = DML_ATTR_INTS, ca[1].n = 2, ca[1].ints = strides;
  check_model("conv", "Conv", ca, 2, cv, 3);
  int64_t dr[2] = {3, 16}, one = 1;
  dml_tensor_t rx = dml_test_tensor(DML_DTYPE_F32, 2, dr, r);
  dml_attr_t ra[2];
  memset(ra, 0, sizeof ra);
  ra[0].name = "axes", ra[0].kind = DML_ATTR_INTS, ra[0].n = 1, ra[0].ints = &one;
  ra[1].name = "keepdims", ra[1].kind = DML_ATTR_INT, ra[1].i = 0;
  check_model("reducesum", "ReduceSum", ra, 2, &rx, 1);
  /* ceil_mode whose last window would start in the end padding: dropped
   * (the window extent formula of runtime/base/dml_shape.h, one for both) */
  float mp[16];
  fill(mp, 16, 13);
  int64_t dmp[4] = {1, 1, 4, 4}, k22[2] = {2, 2}, s22[2] = {2, 2},
          p0011[4] = {0, 0, 1, 1};
  dml_tensor_t mx = dml_test_tensor(DML_DTYPE_F32, 4, dmp, mp);
  dml_attr_t pa[4];
  memset(pa, 0, sizeof pa);
  pa[0].name = "kernel_shape", pa[0].kind = DML_ATTR_INTS, pa[0].n = 2, pa[0].ints = k22;
  pa[1].name = "strides", pa[1].kind = DML_ATTR_INTS, pa[1].n = 2, pa[1].ints = s22;
  pa[2].name = "pads", pa[2].kind = DML_ATTR_INTS, pa[2].n = 4, pa[2].ints = p0011;
  pa[3].name = "ceil_mode", pa[3].kind = DML_ATTR_INT, pa[3].i = 1;
  check_model("maxpool_ceil", "MaxPool", pa, 4, &mx, 1);
}

/* Slice of X [3] from -4 to -10, step -1: the start clamps to 0 (ONNX
 * Slice-13's text, onnxruntime 1.31.1's result [x0]); the compiled package
 * (static dims from shape inference, then the CPU kernel) and the eager op
 * (the CPU's value rule) agree with it through dml_shape_slice(). */
static void test_slice_clamping(void) {
  float x[3] = {1.5f, 2.5f, 3.5f};
  int64_t d3[1] = {3}, d1[1] = {1}, s = -4, e = -10, a = 0, p = -1;
  size_t len = 0;
  char path[1400];
  uint8_t *bytes = (uint8_t *)dml_test_read_file(
      dml_test_path("DMLC_SOURCE_DIR", "tests/tensor/slice_neg_start.onnx", path,
                    sizeof path),
      &len);
  CHECK(bytes != NULL);
  if (!bytes) return;
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.targets = "cpu";
  void *pkg = NULL;
  size_t n = 0;
  dml_status_t st =
      dml_compile_onnx_memory(bytes, len, NULL, "slice", &o, &pkg, &n, NULL);
  free(bytes);
  CHECK_OK(st);
  if (st) return;
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *ses = NULL;
  CHECK_OK(dml_rt_model_load_memory(pkg, n, &m));
  free(pkg);
  CHECK_OK(dml_rt_session_create(m, "cpu", &ses));
  dml_tensor_t xt = dml_test_tensor(DML_DTYPE_F32, 1, d3, x), y;
  CHECK_OK(dml_rt_session_set_input(ses, 0, &xt));
  CHECK_OK(dml_rt_session_run(ses));
  CHECK_OK(dml_rt_session_get_output(ses, 0, &y));
  CHECK(y.rank == 1 && y.dims[0] == 1 && ((const float *)y.data)[0] == 1.5f);
  dml_rt_session_release(ses);
  dml_rt_model_release(m);

  dml_rt_device_t *cpu = NULL;
  CHECK_OK(dml_rt_device_open("cpu", &cpu));
  dml_tensor_t in[5] = {xt, dml_test_tensor(DML_DTYPE_I64, 1, d1, &s),
                        dml_test_tensor(DML_DTYPE_I64, 1, d1, &e),
                        dml_test_tensor(DML_DTYPE_I64, 1, d1, &a),
                        dml_test_tensor(DML_DTYPE_I64, 1, d1, &p)};
  dml_rt_tensor_t t[5], ey;
  for (int i = 0; i < 5; i++) CHECK_OK(dml_rt_tensor_from_host(cpu, &in[i], &t[i]));
  CHECK_OK(dml_rt_tensor_op("Slice", t, 5, NULL, 0, &ey, 1));
  float got[1] = {0};
  dml_tensor_t h = dml_test_tensor(DML_DTYPE_F32, 1, d1, got);
  CHECK_OK(dml_rt_tensor_to_host(ey, &h));
  CHECK(got[0] == 1.5f);
  dml_rt_tensor_release(ey);
  for (int i = 0; i < 5; i++) dml_rt_tensor_release(t[i]);
  dml_rt_device_close(cpu);
}

/* Shape rules that live twice (ir/infer.c for the compiler,
 * cpu_outdims.c for eager ops): Concat, Gather, Flatten, and the norms. */
static void test_shape_ops_norms(void) {
  float a[6], b[10], x[20], f[24], ln[24], s8[8], b8[8], bn[24],
      s3[3] = {1, 2, -1}, bb3[3] = {0, 0.5f, 1}, m3[3] = {0.1f, -0.2f, 0},
      v3[3] = {1, 4, 0.25f};
  fill(a, 6, 5);
  fill(b, 10, 6);
  fill(x, 20, 7);
  fill(f, 24, 8);
  fill(ln, 24, 9);
  fill(s8, 8, 10);
  fill(b8, 8, 11);
  fill(bn, 24, 12);
  int64_t da[2] = {2, 3}, db[2] = {2, 5};
  dml_tensor_t cc[2] = {dml_test_tensor(DML_DTYPE_F32, 2, da, a),
                        dml_test_tensor(DML_DTYPE_F32, 2, db, b)};
  dml_attr_t ax;
  memset(&ax, 0, sizeof ax);
  ax.name = "axis", ax.kind = DML_ATTR_INT, ax.i = 1;
  check_model("concat", "Concat", &ax, 1, cc, 2);
  int64_t dx[2] = {4, 5}, di[2] = {2, 3}, idx[6] = {0, 4, -1, 2, 2, 1};
  dml_tensor_t g[2] = {dml_test_tensor(DML_DTYPE_F32, 2, dx, x),
                       dml_test_tensor(DML_DTYPE_I64, 2, di, idx)};
  check_model("gather", "Gather", &ax, 1, g, 2);
  /* Softmax over rows of 16 (the edge values in row 0) and LogSoftmax over
   * rows of 1,000; on Vulkan these, Concat and Gather against the eager
   * library's kernels (Softmax's are the compiled path's own, scheduled
   * for run-time dims; Concat and Gather move bits) */
  static float sx[64], sl[3000];
  for (int i = 0; i < 64; i++) sx[i] = i < 16 ? k_edges[i] : (float)((i * 37) % 23) - 11;
  fill(sl, 3000, 13);
  int64_t dsx[2] = {4, 16}, dsl[2] = {3, 1000};
  dml_tensor_t smx = dml_test_tensor(DML_DTYPE_F32, 2, dsx, sx),
               sll = dml_test_tensor(DML_DTYPE_F32, 2, dsl, sl);
  dml_attr_t sax = ax;
  sax.i = -1;
  check_model("softmax", "Softmax", &sax, 1, &smx, 1);
  check_model("softmax_long", "LogSoftmax", &ax, 1, &sll, 1);
  dml_rt_device_t *v = NULL;
  dml_status_t st = dml_rt_device_open("vulkan", &v);
  if (st) {
    char *msg = dml_status_format(st);
    printf("SKIP the Vulkan comparison: %s\n", msg ? msg : "?");
    free(msg);
    dml_status_free(st);
  } else {
    dml_rt_device_close(v);
    check_model_on("vulkan", "softmax", "Softmax", &sax, 1, &smx, 1);
    check_model_on("vulkan", "softmax_long", "LogSoftmax", &ax, 1, &sll, 1);
    check_model_on("vulkan", "concat", "Concat", &ax, 1, cc, 2);
    check_model_on("vulkan", "gather", "Gather", &ax, 1, g, 2);
  }
  int64_t df[3] = {2, 3, 4};
  dml_tensor_t fl = dml_test_tensor(DML_DTYPE_F32, 3, df, f);
  ax.i = 2;
  check_model("flatten", "Flatten", &ax, 1, &fl, 1);
  int64_t dl[2] = {3, 8}, d8[1] = {8};
  dml_tensor_t l[3] = {dml_test_tensor(DML_DTYPE_F32, 2, dl, ln),
                       dml_test_tensor(DML_DTYPE_F32, 1, d8, s8),
                       dml_test_tensor(DML_DTYPE_F32, 1, d8, b8)};
  dml_attr_t la[2];
  memset(la, 0, sizeof la);
  la[0].name = "axis", la[0].kind = DML_ATTR_INT, la[0].i = -1;
  la[1].name = "epsilon", la[1].kind = DML_ATTR_FLOAT, la[1].f = (double)1e-5f;
  check_model("layernorm", "LayerNormalization", la, 2, l, 3);
  int64_t dbn[3] = {2, 3, 4}, d3[1] = {3};
  dml_tensor_t n[5] = {dml_test_tensor(DML_DTYPE_F32, 3, dbn, bn),
                       dml_test_tensor(DML_DTYPE_F32, 1, d3, s3),
                       dml_test_tensor(DML_DTYPE_F32, 1, d3, bb3),
                       dml_test_tensor(DML_DTYPE_F32, 1, d3, m3),
                       dml_test_tensor(DML_DTYPE_F32, 1, d3, v3)};
  check_model("batchnorm", "BatchNormalization", &la[1], 1, n, 5);
}

/* A session fed eager tensors (a contiguous one, a transposed view) and
 * read back into one. */
static void test_session_tensors(void) {
  char path[1400];
  size_t len = 0;
  uint8_t *bytes = (uint8_t *)dml_test_read_file(
      dml_test_path("DMLC_SOURCE_DIR", "tests/tensor/matmul.onnx", path, sizeof path),
      &len);
  CHECK(bytes != NULL);
  if (!bytes) return;
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.targets = "cpu";
  void *pkg = NULL;
  size_t n = 0;
  CHECK_OK(dml_compile_onnx_memory(bytes, len, NULL, "matmul", &o, &pkg, &n, NULL));
  free(bytes);
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *s = NULL;
  CHECK_OK(dml_rt_model_load_memory(pkg, n, &m));
  free(pkg);
  CHECK_OK(dml_rt_session_create(m, "cpu", &s));
  dml_rt_device_t *cpu = NULL;
  CHECK_OK(dml_rt_device_open("cpu", &cpu));
  int64_t da[3] = {2, 3, 5}, dbt[2] = {4, 5}, perm[2] = {1, 0};
  dml_rt_tensor_t a, bt, b, y, ye, in[2];
  CHECK_OK(dml_rt_tensor_random_normal(cpu, DML_DTYPE_F32, 3, da, 0, 1, 5, &a));
  CHECK_OK(dml_rt_tensor_random_normal(cpu, DML_DTYPE_F32, 2, dbt, 0, 1, 6, &bt));
  CHECK_OK(dml_rt_tensor_transpose(bt, perm, &b)); /* [5,4], a view */
  CHECK_OK(dml_rt_session_set_input_tensor(s, 0, a));
  CHECK_OK(dml_rt_session_set_input_tensor(s, 1, b));
  CHECK_OK(dml_rt_session_run(s));
  CHECK_OK(dml_rt_session_get_output_tensor(s, 0, cpu, &y));
  in[0] = a, in[1] = b;
  CHECK_OK(dml_rt_tensor_op("MatMul", in, 2, NULL, 0, &ye, 1));
  float g1[24], g2[24];
  dml_tensor_t h1 = {DML_DTYPE_F32, 3, {2, 3, 4}, g1}, h2 = h1;
  h2.data = g2;
  CHECK_OK(dml_rt_tensor_to_host(y, &h1));
  CHECK_OK(dml_rt_tensor_to_host(ye, &h2));
  CHECK(memcmp(g1, g2, sizeof g1) == 0);
  CHECK_ERROR(dml_rt_session_set_input_tensor(s, 1, a), DML_STATUS_INVALID_ARGUMENT,
              "input 'B': rank 3");
  dml_rt_device_close(cpu);
  CHECK_ERROR(dml_rt_session_set_input_tensor(s, 0, a), DML_STATUS_FAILED_PRECONDITION,
              "use after free");
  dml_rt_session_release(s);
  dml_rt_model_release(m);
}

int main(void) {
  RUN(test_elementwise);
  RUN(test_matmul_conv_reduce);
  RUN(test_shape_ops_norms);
  RUN(test_slice_clamping);
  RUN(test_session_tensors);
  return dml_test_finish();
}
