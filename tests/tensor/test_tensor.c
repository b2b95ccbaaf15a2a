/*
 * test_tensor.c — eager tensors (runtime/dml_tensor.h) on the CPU and, when
 * one opens, a Vulkan device: creation, host and device copies, views,
 * lifetime errors, the device's memory accounting, and eager ops against
 * references on the edge values (NaN, +-inf, -0, denormals, 1e+-30, empty
 * dims).
 *
 * Tolerances: the ew_ops.def ops on f64 tensors must equal
 * dml_cpu_ew_f64 (the table's formula in double) bit for bit, NaN for NaN;
 * on f32 within 2 ulp-ish relative 1e-6 of the double formula rounded to
 * float (ARCHITECTURE's "arithmetic" and "transcendental" classes are
 * looser, 1e-5 / 1e-4: the CPU kernel is the reference, this checks the
 * eager plumbing picks it); MatMul, Conv and the reductions against
 * straightforward double loops within 1e-5 relative; views and copies
 * exactly (bits).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "dml_ew.h"
#include "dml_ops.h"
#include "dml_tensor.h"
#include "dml_test.h"

static const float k_edges[] = {NAN,     INFINITY, -INFINITY, -0.0f,  0.0f, 1e-40f,
                                -1e-40f, 1e30f,    -1e30f,    1e-30f, 0.5f, -2.5f,
                                3.0f,    -0.75f,   1e-7f,     100.0f};
#define N_EDGES ((int64_t)(sizeof k_edges / sizeof k_edges[0]))

static int same_bits_f(float a, float b) {
  return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static dml_tensor_t host(dml_dtype_t dt, int32_t rank, const int64_t *dims, void *data) {
  dml_tensor_t t;
  memset(&t, 0, sizeof t);
  t.dtype = dt;
  t.rank = rank;
  memcpy(t.dims, dims, sizeof(int64_t) * (size_t)rank);
  t.data = data;
  return t;
}

/* ---- creation, copies, views, lifetime: on any device ---- */

static void check_basics(dml_rt_device_t *d) {
  uint64_t base = dml_rt_device_bytes(d);
  int64_t dims[2] = {2, 3};
  dml_rt_tensor_t z, o, f, ar, ru, rn;
  CHECK_OK(dml_rt_tensor_zeros(d, DML_DTYPE_F32, 2, dims, &z));
  CHECK_OK(dml_rt_tensor_ones(d, DML_DTYPE_I64, 2, dims, &o));
  CHECK_OK(dml_rt_tensor_full(d, DML_DTYPE_F16, 2, dims, -0.0, &f));
  CHECK_OK(dml_rt_tensor_arange(d, DML_DTYPE_F32, 1.0, 2.0, 0.25, &ar));
  CHECK_OK(dml_rt_tensor_random_uniform(d, DML_DTYPE_F32, 2, dims, -1.0, 1.0, 7, &ru));
  CHECK_OK(dml_rt_tensor_random_normal(d, DML_DTYPE_F64, 2, dims, 0.0, 1.0, 7, &rn));
  CHECK(dml_rt_device_bytes(d) == base + 6 * 4 + 6 * 8 + 6 * 2 + 4 * 4 + 6 * 4 + 6 * 8);
  float zf[6] = {1, 1, 1, 1, 1, 1}, arf[4], ruf[6], ruf2[6];
  int64_t oi[6];
  uint16_t fh[6];
  dml_tensor_t hz = host(DML_DTYPE_F32, 2, dims, zf);
  CHECK_OK(dml_rt_tensor_to_host(z, &hz));
  dml_tensor_t ho = host(DML_DTYPE_I64, 2, dims, oi);
  CHECK_OK(dml_rt_tensor_to_host(o, &ho));
  dml_tensor_t hf = host(DML_DTYPE_F16, 2, dims, fh);
  CHECK_OK(dml_rt_tensor_to_host(f, &hf));
  for (int i = 0; i < 6; i++) {
    CHECK(zf[i] == 0 && !signbit(zf[i]));
    CHECK(oi[i] == 1);
    CHECK(fh[i] == 0x8000); /* -0 in f16 */
  }
  int64_t four = 4;
  dml_tensor_t ha = host(DML_DTYPE_F32, 1, &four, arf);
  CHECK_OK(dml_rt_tensor_to_host(ar, &ha));
  for (int i = 0; i < 4; i++) CHECK(arf[i] == 1.0f + 0.25f * (float)i);
  dml_tensor_t hr = host(DML_DTYPE_F32, 2, dims, ruf);
  CHECK_OK(dml_rt_tensor_to_host(ru, &hr));
  for (int i = 0; i < 6; i++) CHECK(ruf[i] >= -1.0f && ruf[i] < 1.0f);
  /* the same seed gives the same values */
  dml_rt_tensor_t ru2;
  CHECK_OK(dml_rt_tensor_random_uniform(d, DML_DTYPE_F32, 2, dims, -1.0, 1.0, 7, &ru2));
  hr.data = ruf2;
  CHECK_OK(dml_rt_tensor_to_host(ru2, &hr));
  CHECK(memcmp(ruf, ruf2, sizeof ruf) == 0);
  CHECK(ruf[0] != ruf[1]);

  /* from_host / to_host round trip of the edge values, bit for bit */
  float e[N_EDGES], back[N_EDGES];
  memcpy(e, k_edges, sizeof e);
  int64_t ne = N_EDGES;
  dml_tensor_t he = host(DML_DTYPE_F32, 1, &ne, e);
  dml_rt_tensor_t te, te2;
  CHECK_OK(dml_rt_tensor_from_host(d, &he, &te));
  CHECK_OK(dml_rt_tensor_to_device(te, d, &te2));
  dml_tensor_t hb = host(DML_DTYPE_F32, 1, &ne, back);
  CHECK_OK(dml_rt_tensor_to_host(te2, &hb));
  for (int i = 0; i < N_EDGES; i++) CHECK(same_bits_f(back[i], e[i]));
  /* empty dims */
  int64_t empty[2] = {0, 3};
  dml_rt_tensor_t te0;
  CHECK_OK(dml_rt_tensor_zeros(d, DML_DTYPE_F32, 2, empty, &te0));
  dml_tensor_t h0 = host(DML_DTYPE_F32, 2, empty, NULL);
  CHECK_OK(dml_rt_tensor_to_host(te0, &h0));
  CHECK_ERROR(dml_rt_tensor_to_host(te0, &hb), DML_STATUS_INVALID_ARGUMENT,
              "tensor f32[0,3], host f32[16]");

  /* views: [4,4] 0..15, reshape, transpose, slice with steps, expand */
  float v[16], got[16];
  for (int i = 0; i < 16; i++) v[i] = (float)i;
  int64_t d44[2] = {4, 4}, d28[2] = {2, 8};
  dml_tensor_t hv = host(DML_DTYPE_F32, 2, d44, v);
  dml_rt_tensor_t tv, tr, tt, ts, tx, tc, trs;
  CHECK_OK(dml_rt_tensor_from_host(d, &hv, &tv));
  uint64_t before_views = dml_rt_device_num_storages(d);
  int64_t m1[2] = {2, -1};
  CHECK_OK(dml_rt_tensor_reshape(tv, 2, m1, &tr));
  dml_rt_tensor_info_t info;
  CHECK_OK(dml_rt_tensor_info(tr, &info));
  CHECK(info.rank == 2 && info.dims[0] == 2 && info.dims[1] == 8 && info.contiguous);
  CHECK(dml_rt_device_num_storages(d) == before_views); /* shares storage */
  dml_tensor_t hg = host(DML_DTYPE_F32, 2, d28, got);
  CHECK_OK(dml_rt_tensor_to_host(tr, &hg));
  CHECK(memcmp(got, v, sizeof v) == 0);
  CHECK_OK(dml_rt_tensor_transpose(tv, NULL, &tt));
  CHECK_OK(dml_rt_tensor_info(tt, &info));
  CHECK(!info.contiguous && info.strides[0] == 1 && info.strides[1] == 4);
  hg = host(DML_DTYPE_F32, 2, d44, got);
  CHECK_OK(dml_rt_tensor_to_host(tt, &hg));
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) CHECK(got[i * 4 + j] == v[j * 4 + i]);
  /* rows 3, 1 (step -2), columns 0, 2 (step 2) */
  int64_t ax[2] = {0, 1}, st[2] = {-1, 0}, en[2] = {-100, 100}, sp[2] = {-2, 2};
  CHECK_OK(dml_rt_tensor_slice(tv, 2, ax, st, en, sp, &ts));
  int64_t d22[2] = {2, 2};
  hg = host(DML_DTYPE_F32, 2, d22, got);
  CHECK_OK(dml_rt_tensor_to_host(ts, &hg));
  CHECK(got[0] == 12 && got[1] == 14 && got[2] == 4 && got[3] == 6);
  /* a reshape of a non-contiguous view copies */
  int64_t d4[1] = {4};
  CHECK_OK(dml_rt_tensor_reshape(ts, 1, d4, &trs));
  CHECK(dml_rt_device_num_storages(d) == before_views + 1);
  hg = host(DML_DTYPE_F32, 1, d4, got);
  CHECK_OK(dml_rt_tensor_to_host(trs, &hg));
  CHECK(got[0] == 12 && got[1] == 14 && got[2] == 4 && got[3] == 6);
  int64_t row[1] = {4}, d34[2] = {3, 4};
  dml_rt_tensor_t trow;
  int64_t a0 = 0, s1 = 1, e2 = 2;
  CHECK_OK(dml_rt_tensor_slice(tv, 1, &a0, &s1, &e2, NULL, &trow)); /* row 1: [1,4] */
  CHECK_OK(dml_rt_tensor_expand(trow, 2, d34, &tx));
  CHECK_OK(dml_rt_tensor_info(tx, &info));
  CHECK(info.strides[0] == 0);
  hg = host(DML_DTYPE_F32, 2, d34, got);
  CHECK_OK(dml_rt_tensor_to_host(tx, &hg));
  for (int i = 0; i < 12; i++) CHECK(got[i] == v[4 + i % 4]);
  CHECK_OK(dml_rt_tensor_contiguous(tx, &tc));
  CHECK_OK(dml_rt_tensor_info(tc, &info));
  CHECK(info.contiguous);
  CHECK_ERROR(dml_rt_tensor_expand(tv, 1, row, &tx), DML_STATUS_INVALID_ARGUMENT,
              "shape mismatch");
  int64_t bad[2] = {3, 5};
  CHECK_ERROR(dml_rt_tensor_reshape(tv, 2, bad, &tc), DML_STATUS_INVALID_ARGUMENT,
              "tensor [4,4] (16 elements), new shape [3,5]");

  /* lifetime: retain/release, free, use after free */
  CHECK_OK(dml_rt_tensor_retain(te));
  CHECK_OK(dml_rt_tensor_release(te));
  CHECK_OK(dml_rt_tensor_info(te, &info));
  CHECK(info.refs == 1);
  CHECK_OK(dml_rt_tensor_release(te));
  CHECK_ERROR(dml_rt_tensor_info(te, &info), DML_STATUS_FAILED_PRECONDITION,
              "use after free");
  CHECK_ERROR(dml_rt_tensor_to_host(te, &he), DML_STATUS_FAILED_PRECONDITION,
              "use after free");
  CHECK_ERROR(dml_rt_tensor_free(te), DML_STATUS_FAILED_PRECONDITION, "use after free");
  dml_rt_tensor_t in2[2] = {te, te2};
  dml_rt_tensor_t y;
  CHECK_ERROR(dml_rt_tensor_op("Add", in2, 2, NULL, 0, &y, 1),
              DML_STATUS_FAILED_PRECONDITION, "use after free");
  /* the base freed while views live: the storage stays until they go */
  uint64_t with_base = dml_rt_device_bytes(d);
  CHECK_OK(dml_rt_tensor_free(tv));
  CHECK(dml_rt_device_bytes(d) == with_base);
  hg = host(DML_DTYPE_F32, 2, d44, got);
  CHECK_OK(dml_rt_tensor_to_host(tt, &hg));
  CHECK(got[1] == 4);
  dml_rt_tensor_t all[] = {z,   o,  f,  ar, ru,  ru2,  rn, te2,
                           te0, tr, tt, ts, trs, trow, tx, tc};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (i != 15 || all[15].id != all[14].id) CHECK_OK(dml_rt_tensor_free(all[i]));
  CHECK(dml_rt_device_bytes(d) == base);
  CHECK(dml_rt_device_num_storages(d) == 0 || base != 0);
}

/* ---- eager ops on the CPU ---- */

static dml_rt_tensor_t from_f(dml_rt_device_t *d, dml_dtype_t dt, int32_t rank,
                              const int64_t *dims, const float *v) {
  int64_t n = dml_dims_numel(dims, rank);
  void *buf = malloc((size_t)(n > 0 ? n : 1) * 8);
  for (int64_t i = 0; i < n; i++) dml_store_f64(dt, buf, (size_t)i, (double)v[i]);
  dml_tensor_t h = host(dt, rank, dims, buf);
  dml_rt_tensor_t t = DML_RT_TENSOR_NONE;
  CHECK_OK(dml_rt_tensor_from_host(d, &h, &t));
  free(buf);
  return t;
}

/* Reads t (of `n` elements) as doubles. */
static void read_d(dml_rt_tensor_t t, double *out, int64_t n) {
  dml_rt_tensor_info_t info;
  CHECK_OK(dml_rt_tensor_info(t, &info));
  void *buf = malloc((size_t)(n > 0 ? n : 1) * 8);
  dml_tensor_t h = host(info.dtype, info.rank, info.dims, buf);
  CHECK_OK(dml_rt_tensor_to_host(t, &h));
  for (int64_t i = 0; i < n; i++) out[i] = dml_load_f64(info.dtype, buf, (size_t)i);
  free(buf);
}

static void test_cpu_ew_ops(void) {
  dml_rt_device_t *d = NULL;
  CHECK_OK(dml_rt_device_open("cpu", &d));
  int64_t ne = N_EDGES;
  int n_ops = 0;
  static const dml_op_t ops[] = {
#define DML_EW(e, attrs, value, grad) DML_OP_##e,
#include "ew_ops.def"
#undef DML_EW
  };
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    dml_op_t op = ops[k];
    double a[DML_EW_MAX_ATTRS];
    CHECK_OK(dml_ew_attrs(op, NULL, 0, a));
    for (int dt = 0; dt < 2; dt++) {
      dml_dtype_t dtype = dt ? DML_DTYPE_F64 : DML_DTYPE_F32;
      dml_rt_tensor_t x = from_f(d, dtype, 1, &ne, k_edges), y = DML_RT_TENSOR_NONE;
      dml_status_t s = dml_rt_tensor_op(dml_op_name(op), &x, 1, NULL, 0, &y, 1);
      if (s) {
        char *m = dml_status_format(s);
        fprintf(stderr, "%s: %s\n", dml_op_name(op), m);
        free(m);
        dml_status_free(s);
        CHECK(0);
        dml_rt_tensor_free(x);
        continue;
      }
      double got[N_EDGES];
      dml_rt_tensor_info_t info;
      CHECK_OK(dml_rt_tensor_info(y, &info));
      CHECK(info.dtype == dtype && info.rank == 1 && info.dims[0] == ne);
      read_d(y, got, ne);
      for (int64_t i = 0; i < ne; i++) {
        double xi = dtype == DML_DTYPE_F64 ? (double)k_edges[i] : (double)k_edges[i];
        double want = dml_cpu_ew_f64(op, a, xi);
        int ok;
        if (dtype == DML_DTYPE_F64) {
          ok = (isnan(want) && isnan(got[i])) || memcmp(&want, &got[i], 8) == 0;
        } else {
          float wf = (float)want, gf = (float)got[i];
          ok = same_bits_f(wf, gf) || fabsf(wf - gf) <= 1e-6f * fmaxf(1.0f, fabsf(wf)) ||
               (fabsf(wf) < 1.2e-38f && fabsf(gf) < 1.2e-38f);
        }
        if (!ok)
          fprintf(stderr, "%s %s x=%g: got %.9g want %.9g\n", dml_op_name(op),
                  dml_dtype_name(dtype), xi, got[i], want);
        CHECK(ok);
      }
      CHECK_OK(dml_rt_tensor_free(x));
      CHECK_OK(dml_rt_tensor_free(y));
    }
    n_ops++;
  }
  printf("ew_ops.def: %d ops eager on the CPU (f32, f64) over %d edge values\n", n_ops,
         (int)N_EDGES);
  CHECK(n_ops > 20);
  CHECK(dml_rt_device_bytes(d) == 0);
  dml_rt_device_close(d);
}

/* Every elementwise op of ops.def with a CPU kernel, eagerly on the edge
 * values with broadcasting ([N,1] against [N]), against the same kernel
 * called as the compiled CPU path calls it (dml_cpu_run with the output
 * dims given): bit for bit. */
static void test_cpu_every_elementwise(void) {
  dml_rt_device_t *d = NULL;
  CHECK_OK(dml_rt_device_open("cpu", &d));
  int n_ops = 0;
  for (int op = 1; op < DML_OP_COUNT_; op++) {
    const dml_op_info_t *info = dml_op_info((dml_op_t)op);
    if (!(info->flags & DML_OPF_ELEMENTWISE) || !dml_cpu_supports((dml_op_t)op)) continue;
    int n_in = info->min_inputs < 1 ? 1 : info->min_inputs;
    if (info->max_inputs < 0 && n_in < 2) n_in = 2; /* variadic: two operands */
    dml_dtype_t dts[3] = {DML_DTYPE_F32, DML_DTYPE_F32, DML_DTYPE_F32};
    dml_attr_t at[1];
    memset(at, 0, sizeof at);
    uint32_t n_at = 0;
    switch ((dml_op_t)op) {
      case DML_OP_NOT:
      case DML_OP_AND:
      case DML_OP_OR:
      case DML_OP_XOR: dts[0] = dts[1] = DML_DTYPE_BOOL; break;
      case DML_OP_WHERE: dts[0] = DML_DTYPE_BOOL; break;
      case DML_OP_BIT_SHIFT:
        dts[0] = dts[1] = DML_DTYPE_U32;
        at[0].name = "direction", at[0].kind = DML_ATTR_STRING, at[0].s = "LEFT";
        n_at = 1;
        break;
      case DML_OP_MOD:
        at[0].name = "fmod", at[0].kind = DML_ATTR_INT, at[0].i = 1;
        n_at = 1;
        break;
      case DML_OP_CAST:
        at[0].name = "to", at[0].kind = DML_ATTR_INT, at[0].i = 11; /* f64 */
        n_at = 1;
        break;
      default: break;
    }
    int64_t d0[2] = {N_EDGES, 1}, d1[1] = {N_EDGES};
    dml_rt_tensor_t in[3];
    dml_tensor_t kin[3];
    void *bufs[3];
    float vals[N_EDGES];
    for (int i = 0; i < n_in; i++) {
      for (int64_t j = 0; j < N_EDGES; j++) {
        float v = k_edges[(j * (i + 1)) % N_EDGES];
        if (dts[i] == DML_DTYPE_U32) v = (float)(j % 7);
        if (dts[i] == DML_DTYPE_BOOL) v = (float)((j + i) % 2);
        vals[j] = v;
      }
      int64_t one = 1; /* PRelu's slope broadcasts to X only */
      in[i] = i == 0 ? from_f(d, dts[i], 2, d0, vals)
                     : from_f(d, dts[i], 1, op == DML_OP_PRELU ? &one : d1, vals);
      dml_rt_tensor_info_t ti;
      CHECK_OK(dml_rt_tensor_info(in[i], &ti));
      bufs[i] = malloc(N_EDGES * 8);
      kin[i] = host(dts[i], ti.rank, ti.dims, bufs[i]);
      CHECK_OK(dml_rt_tensor_to_host(in[i], &kin[i]));
    }
    dml_rt_tensor_t y = DML_RT_TENSOR_NONE;
    dml_status_t s = dml_rt_tensor_op(info->name, in, (uint32_t)n_in, at, n_at, &y, 1);
    if (s) {
      char *m = dml_status_format(s);
      fprintf(stderr, "eager %s: %s\n", info->name, m);
      free(m);
      dml_status_free(s);
      CHECK(0);
    } else {
      dml_rt_tensor_info_t yi;
      CHECK_OK(dml_rt_tensor_info(y, &yi));
      /* [N,1] against [N] broadcasts to [N,N]; one input, PRelu (slope to
       * X) and CastLike (input 1 gives the dtype only) keep X's [N,1] */
      int x_shape = n_in == 1 || op == DML_OP_PRELU || op == DML_OP_CAST_LIKE;
      int64_t cols = x_shape ? 1 : N_EDGES;
      CHECK(yi.rank == 2 && yi.dims[0] == N_EDGES && yi.dims[1] == cols);
      size_t bytes = (size_t)(N_EDGES * cols) * dml_dtype_size(yi.dtype);
      void *ey = malloc(bytes), *ky = malloc(bytes);
      dml_tensor_t hy = host(yi.dtype, yi.rank, yi.dims, ey), kyt = hy;
      kyt.data = ky;
      CHECK_OK(dml_rt_tensor_to_host(y, &hy));
      dml_cpu_call_t call;
      memset(&call, 0, sizeof call);
      call.op = (dml_op_t)op;
      call.inputs = kin;
      call.n_inputs = (uint32_t)n_in;
      call.outputs = &kyt;
      call.n_outputs = 1;
      call.attrs = at;
      call.n_attrs = n_at;
      size_t sb = dml_cpu_scratch_bytes(&call);
      void *scratch = sb ? malloc(sb) : NULL;
      call.scratch = scratch;
      call.scratch_bytes = sb;
      CHECK_OK(dml_cpu_run(&call));
      if (memcmp(ey, ky, bytes))
        fprintf(stderr, "eager %s differs from its kernel\n", info->name);
      CHECK(memcmp(ey, ky, bytes) == 0);
      free(scratch);
      free(ey);
      free(ky);
      CHECK_OK(dml_rt_tensor_free(y));
      n_ops++;
    }
    for (int i = 0; i < n_in; i++) {
      CHECK_OK(dml_rt_tensor_free(in[i]));
      free(bufs[i]);
    }
  }
  /* a PRelu slope that does not broadcast to X */
  int64_t d0[2] = {3, 1}, d1[1] = {3};
  float z3[3] = {0, 0, 0};
  dml_rt_tensor_t pin[2] = {from_f(d, DML_DTYPE_F32, 2, d0, z3),
                            from_f(d, DML_DTYPE_F32, 1, d1, z3)},
                  py;
  CHECK_ERROR(dml_rt_tensor_op("PRelu", pin, 2, NULL, 0, &py, 1),
              DML_STATUS_INVALID_ARGUMENT, "slope does not broadcast to X");
  CHECK_OK(dml_rt_tensor_free(pin[0]));
  CHECK_OK(dml_rt_tensor_free(pin[1]));
  printf("ops.def: %d elementwise ops eager on the CPU, equal to their kernels\n", n_ops);
  CHECK(n_ops > 50);
  CHECK(dml_rt_device_bytes(d) == 0);
  dml_rt_device_close(d);
}

/* Every reduction of ops.def with a CPU kernel over axis 1 of [3, N] edge
 * values (keepdims 1, and 0), against its kernel called with the dims the
 * ONNX rule gives ([3,1] / [3]): bit for bit, NaN for NaN. */
static void test_cpu_every_reduction(void) {
  dml_rt_device_t *d = NULL;
  CHECK_OK(dml_rt_device_open("cpu", &d));
  float v[3 * N_EDGES];
  for (int i = 0; i < 3 * N_EDGES; i++) v[i] = k_edges[(i * 5) % N_EDGES];
  int64_t dx[2] = {3, N_EDGES};
  dml_rt_tensor_t x = from_f(d, DML_DTYPE_F32, 2, dx, v);
  dml_tensor_t kx = host(DML_DTYPE_F32, 2, dx, v);
  int n_ops = 0;
  for (int op = 1; op < DML_OP_COUNT_; op++) {
    const dml_op_info_t *info = dml_op_info((dml_op_t)op);
    if (!(info->flags & DML_OPF_REDUCTION) || !dml_cpu_supports((dml_op_t)op)) continue;
    int arg = op == DML_OP_ARG_MAX || op == DML_OP_ARG_MIN;
    for (int keep = 0; keep < 2; keep++) {
      int64_t one = 1;
      dml_attr_t at[2];
      memset(at, 0, sizeof at);
      if (arg)
        at[0].name = "axis", at[0].kind = DML_ATTR_INT, at[0].i = 1;
      else
        at[0].name = "axes", at[0].kind = DML_ATTR_INTS, at[0].n = 1, at[0].ints = &one;
      at[1].name = "keepdims", at[1].kind = DML_ATTR_INT, at[1].i = keep;
      dml_rt_tensor_t y;
      dml_status_t s = dml_rt_tensor_op(info->name, &x, 1, at, 2, &y, 1);
      if (s) {
        char *m = dml_status_format(s);
        fprintf(stderr, "eager %s: %s\n", info->name, m);
        free(m);
        dml_status_free(s);
        CHECK(0);
        continue;
      }
      dml_rt_tensor_info_t yi;
      CHECK_OK(dml_rt_tensor_info(y, &yi));
      CHECK(yi.rank == 1 + keep && yi.dims[0] == 3 && (!keep || yi.dims[1] == 1));
      CHECK(yi.dtype == (arg ? DML_DTYPE_I64 : DML_DTYPE_F32));
      uint8_t ey[24], ky[24];
      int64_t dy[2] = {3, 1};
      dml_tensor_t hy = host(yi.dtype, 1 + keep, dy, ey), kyt = hy;
      kyt.data = ky;
      CHECK_OK(dml_rt_tensor_to_host(y, &hy));
      dml_cpu_call_t call;
      memset(&call, 0, sizeof call);
      call.op = (dml_op_t)op;
      call.inputs = &kx;
      call.n_inputs = 1;
      call.outputs = &kyt;
      call.n_outputs = 1;
      call.attrs = at;
      call.n_attrs = 2;
      size_t sb = dml_cpu_scratch_bytes(&call);
      void *scratch = sb ? malloc(sb) : NULL;
      call.scratch = scratch;
      call.scratch_bytes = sb;
      CHECK_OK(dml_cpu_run(&call));
      CHECK(memcmp(ey, ky, 3 * dml_dtype_size(yi.dtype)) == 0);
      free(scratch);
      CHECK_OK(dml_rt_tensor_free(y));
    }
    n_ops++;
  }
  printf("ops.def: %d reductions eager on the CPU, equal to their kernels\n", n_ops);
  CHECK(n_ops >= 12);
  CHECK_OK(dml_rt_tensor_free(x));
  CHECK(dml_rt_device_bytes(d) == 0);
  dml_rt_device_close(d);
}

/* Binary ops with broadcasting and a non-contiguous operand, against the
 * same kernel on contiguous expanded operands and C's arithmetic. */
static void test_cpu_binary(void) {
  dml_rt_device_t *d = NULL;
  CHECK_OK(dml_rt_device_open("cpu", &d));
  int64_t da[2] = {N_EDGES, 1}, db[1] = {N_EDGES};
  dml_rt_tensor_t a = from_f(d, DML_DTYPE_F32, 2, da, k_edges);
  dml_rt_tensor_t b0 = from_f(d, DML_DTYPE_F32, 1, db, k_edges), b;
  /* b: the edges reversed, a negative-stride view */
  int64_t ax = 0, st = -1, en = -1000, sp = -1;
  CHECK_OK(dml_rt_tensor_slice(b0, 1, &ax, &st, &en, &sp, &b));
  static const char *names[] = {"Add", "Sub", "Mul",  "Div",
                                "Max", "Min", "Less", "Equal"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
    dml_rt_tensor_t in[2] = {a, b}, y;
    CHECK_OK(dml_rt_tensor_op(names[k], in, 2, NULL, 0, &y, 1));
    dml_rt_tensor_info_t info;
    CHECK_OK(dml_rt_tensor_info(y, &info));
    CHECK(info.rank == 2 && info.dims[0] == N_EDGES && info.dims[1] == N_EDGES);
    CHECK(info.dtype == (k >= 6 ? DML_DTYPE_BOOL : DML_DTYPE_F32));
    double *got = (double *)malloc(sizeof(double) * N_EDGES * N_EDGES);
    read_d(y, got, N_EDGES * N_EDGES);
    int bad = 0;
    for (int64_t i = 0; i < N_EDGES; i++)
      for (int64_t j = 0; j < N_EDGES; j++) {
        float x = k_edges[i], z = k_edges[N_EDGES - 1 - j], w;
        switch (k) {
          case 0: w = x + z; break;
          case 1: w = x - z; break;
          case 2: w = x * z; break;
          case 3: w = x / z; break;
          case 4: w = isnan(x) || isnan(z) ? NAN : fmaxf(x, z); break;
          case 5: w = isnan(x) || isnan(z) ? NAN : fminf(x, z); break;
          case 6: w = x < z; break;
          default: w = x == z; break;
        }
        float g = (float)got[i * N_EDGES + j];
        if (!same_bits_f(g, w) && !(k == 4 || k == 5 ? g == w : 0)) bad++;
      }
    if (bad) fprintf(stderr, "%s: %d elements differ\n", names[k], bad);
    CHECK(bad == 0);
    free(got);
    CHECK_OK(dml_rt_tensor_free(y));
  }
  /* shape mismatch names the op and both shapes */
  int64_t d34[2] = {3, 4}, d56[2] = {5, 6}, d23[2] = {2, 3}, d4[1] = {4};
  float zeros[30] = {0};
  dml_rt_tensor_t m1 = from_f(d, DML_DTYPE_F32, 2, d34, zeros);
  dml_rt_tensor_t m2 = from_f(d, DML_DTYPE_F32, 2, d56, zeros);
  dml_rt_tensor_t m3 = from_f(d, DML_DTYPE_F32, 2, d23, zeros);
  dml_rt_tensor_t m4 = from_f(d, DML_DTYPE_F32, 1, d4, zeros), y;
  dml_rt_tensor_t mm[2] = {m1, m2}, ad[2] = {m3, m4};
  dml_status_t s = dml_rt_tensor_op("MatMul", mm, 2, NULL, 0, &y, 1);
  CHECK(s && !strcmp(dml_status_op(s), "MatMul") &&
        !strcmp(dml_status_reason(s), "shape mismatch (on cpu)") &&
        strstr(dml_status_details(s), "lhs [3,4], rhs [5,6]"));
  dml_status_free(s);
  CHECK_ERROR(dml_rt_tensor_op("Add", ad, 2, NULL, 0, &y, 1), DML_STATUS_INVALID_ARGUMENT,
              "lhs [2,3], rhs [4]");
  /* a rule's check names the op and the device, not the CPU rule's label
   * (rt.cpu.ArgMax) */
  dml_attr_t ax5 = {0};
  ax5.name = "axis";
  ax5.kind = DML_ATTR_INT;
  ax5.i = 5;
  s = dml_rt_tensor_op("ArgMax", &m1, 1, &ax5, 1, &y, 1);
  CHECK(s && !strcmp(dml_status_op(s), "ArgMax") &&
        !strcmp(dml_status_reason(s), "axis out of range (on cpu)"));
  dml_status_free(s);
  CHECK_ERROR(dml_rt_tensor_op("NoSuchOp", ad, 2, NULL, 0, &y, 1), DML_STATUS_NOT_FOUND,
              "no op named 'NoSuchOp'");
  CHECK_ERROR(dml_rt_tensor_op("NegativeLogLikelihoodLoss", ad, 2, NULL, 0, &y, 1),
              DML_STATUS_UNIMPLEMENTED, "no eager shape rule");
  /* the RNNs' eager rule (cpu_outdims.c eager_rnn): X, W and R required */
  CHECK_ERROR(dml_rt_tensor_op("LSTM", ad, 2, NULL, 0, &y, 1),
              DML_STATUS_INVALID_ARGUMENT, "inputs");
  dml_rt_tensor_t fr[] = {a, b0, b, m1, m2, m3, m4};
  for (size_t i = 0; i < sizeof fr / sizeof fr[0]; i++)
    CHECK_OK(dml_rt_tensor_free(fr[i]));
  CHECK(dml_rt_device_bytes(d) == 0);
  dml_rt_device_close(d);
}

/* MatMul, Gemm, Conv, reductions, ArgMax, Softmax, Transpose, Reshape
 * against double loops. */
static void test_cpu_structured(void) {
  dml_rt_device_t *d = NULL;
  CHECK_OK(dml_rt_device_open("cpu", &d));
  dml_rt_tensor_t x, w, y;
  /* MatMul [2,3,5] x [5,4] (a batch broadcast) */
  int64_t dx[3] = {2, 3, 5}, dw[2] = {5, 4};
  CHECK_OK(dml_rt_tensor_random_normal(d, DML_DTYPE_F32, 3, dx, 0, 1, 1, &x));
  CHECK_OK(dml_rt_tensor_random_normal(d, DML_DTYPE_F32, 2, dw, 0, 1, 2, &w));
  dml_rt_tensor_t in[2] = {x, w};
  CHECK_OK(dml_rt_tensor_op("MatMul", in, 2, NULL, 0, &y, 1));
  double xv[30], wv[20], yv[24];
  read_d(x, xv, 30);
  read_d(w, wv, 20);
  read_d(y, yv, 24);
  for (int b = 0; b < 2; b++)
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 4; j++) {
        double acc = 0;
        for (int k = 0; k < 5; k++) acc += xv[b * 15 + i * 5 + k] * wv[k * 4 + j];
        CHECK_NEAR(yv[b * 12 + i * 4 + j], acc, 1e-5 * fmax(1, fabs(acc)));
      }
  CHECK_OK(dml_rt_tensor_free(y));
  /* ReduceSum over axis 1 (keepdims 0), ReduceMax over all; ArgMax axis 2 */
  dml_attr_t at[2];
  memset(at, 0, sizeof at);
  int64_t axis1 = 1;
  at[0].name = "axes", at[0].kind = DML_ATTR_INTS, at[0].n = 1, at[0].ints = &axis1;
  at[1].name = "keepdims", at[1].kind = DML_ATTR_INT, at[1].i = 0;
  CHECK_OK(dml_rt_tensor_op("ReduceSum", &x, 1, at, 2, &y, 1));
  dml_rt_tensor_info_t info;
  CHECK_OK(dml_rt_tensor_info(y, &info));
  CHECK(info.rank == 2 && info.dims[0] == 2 && info.dims[1] == 5);
  double rv[10];
  read_d(y, rv, 10);
  for (int b = 0; b < 2; b++)
    for (int k = 0; k < 5; k++) {
      double acc = 0;
      for (int i = 0; i < 3; i++) acc += xv[b * 15 + i * 5 + k];
      CHECK_NEAR(rv[b * 5 + k], acc, 1e-5 * fmax(1, fabs(acc)));
    }
  CHECK_OK(dml_rt_tensor_free(y));
  CHECK_OK(dml_rt_tensor_op("ReduceMax", &x, 1, NULL, 0, &y, 1));
  CHECK_OK(dml_rt_tensor_info(y, &info));
  CHECK(info.rank == 3 && info.dims[0] == 1 && info.dims[2] == 1);
  double mx = -INFINITY, got;
  for (int i = 0; i < 30; i++) mx = fmax(mx, xv[i]);
  read_d(y, &got, 1);
  CHECK(got == mx);
  CHECK_OK(dml_rt_tensor_free(y));
  dml_attr_t am;
  memset(&am, 0, sizeof am);
  am.name = "axis", am.kind = DML_ATTR_INT, am.i = -1;
  CHECK_OK(dml_rt_tensor_op("ArgMax", &x, 1, &am, 1, &y, 1));
  CHECK_OK(dml_rt_tensor_info(y, &info));
  CHECK(info.dtype == DML_DTYPE_I64 && info.rank == 3 && info.dims[2] == 1);
  CHECK_OK(dml_rt_tensor_free(y));
  CHECK_OK(dml_rt_tensor_op("Softmax", &x, 1, NULL, 0, &y, 1));
  double sv[30];
  read_d(y, sv, 30);
  for (int r = 0; r < 6; r++) {
    double sum = 0;
    for (int k = 0; k < 5; k++) sum += sv[r * 5 + k];
    CHECK_NEAR(sum, 1.0, 1e-6);
  }
  CHECK_OK(dml_rt_tensor_free(y));
  /* Reshape with a shape tensor (a value-dependent rule) */
  int64_t two = 2;
  float shp[2] = {6, -1};
  dml_rt_tensor_t shape = from_f(d, DML_DTYPE_I64, 1, &two, shp);
  dml_rt_tensor_t rin[2] = {x, shape};
  CHECK_OK(dml_rt_tensor_op("Reshape", rin, 2, NULL, 0, &y, 1));
  CHECK_OK(dml_rt_tensor_info(y, &info));
  CHECK(info.rank == 2 && info.dims[0] == 6 && info.dims[1] == 5);
  CHECK_OK(dml_rt_tensor_free(y));
  CHECK_OK(dml_rt_tensor_free(shape));
  CHECK_OK(dml_rt_tensor_free(x));
  CHECK_OK(dml_rt_tensor_free(w));

  /* Conv [1,2,5,5] * [3,2,3,3], pads 1, stride 2, with the edge values in X */
  int64_t dcx[4] = {1, 2, 5, 5}, dcw[4] = {3, 2, 3, 3}, dcb[1] = {3};
  float cx[50], cw[54], cb[3] = {0.5f, -1.0f, 0.0f};
  for (int i = 0; i < 50; i++) cx[i] = (float)((i * 7) % 11) - 5.0f;
  for (int i = 0; i < 54; i++) cw[i] = (float)((i * 5) % 7) * 0.25f - 0.75f;
  x = from_f(d, DML_DTYPE_F32, 4, dcx, cx);
  w = from_f(d, DML_DTYPE_F32, 4, dcw, cw);
  dml_rt_tensor_t bb = from_f(d, DML_DTYPE_F32, 1, dcb, cb);
  dml_attr_t ca[2];
  memset(ca, 0, sizeof ca);
  int64_t pads[4] = {1, 1, 1, 1}, strides[2] = {2, 2};
  ca[0].name = "pads", ca[0].kind = DML_ATTR_INTS, ca[0].n = 4, ca[0].ints = pads;
  ca[1].name = "strides", ca[1].kind = DML_ATTR_INTS, ca[1].n = 2, ca[1].ints = strides;
  dml_rt_tensor_t cin[3] = {x, w, bb};
  CHECK_OK(dml_rt_tensor_op("Conv", cin, 3, ca, 2, &y, 1));
  CHECK_OK(dml_rt_tensor_info(y, &info));
  CHECK(info.rank == 4 && info.dims[1] == 3 && info.dims[2] == 3 && info.dims[3] == 3);
  double cy[27];
  read_d(y, cy, 27);
  for (int m = 0; m < 3; m++)
    for (int oh = 0; oh < 3; oh++)
      for (int ow = 0; ow < 3; ow++) {
        double acc = cb[m];
        for (int c = 0; c < 2; c++)
          for (int kh = 0; kh < 3; kh++)
            for (int kw = 0; kw < 3; kw++) {
              int ih = oh * 2 - 1 + kh, iw = ow * 2 - 1 + kw;
              if (ih < 0 || ih >= 5 || iw < 0 || iw >= 5) continue;
              acc +=
                  (double)cx[c * 25 + ih * 5 + iw] * cw[((m * 2 + c) * 3 + kh) * 3 + kw];
            }
        CHECK_NEAR(cy[(m * 3 + oh) * 3 + ow], acc, 1e-5 * fmax(1, fabs(acc)));
      }
  /* a Conv whose W does not match X's channels */
  dml_rt_tensor_t cbad[2] = {x, bb};
  CHECK_ERROR(dml_rt_tensor_op("Conv", cbad, 2, NULL, 0, &y, 1),
              DML_STATUS_INVALID_ARGUMENT, "shape mismatch");
  dml_rt_tensor_t fr[] = {x, w, bb};
  for (size_t i = 0; i < 3; i++) CHECK_OK(dml_rt_tensor_free(fr[i]));
  /* the rest freed by closing the device */
  dml_rt_device_close(d);
}

/* Empty dims and more than 2^24 elements through eager ops. */
static void test_cpu_sizes(void) {
  dml_rt_device_t *d = NULL;
  CHECK_OK(dml_rt_device_open("cpu", &d));
  int64_t d03[2] = {0, 3}, d3[1] = {3}, d04[2] = {0, 4}, d45[2] = {4, 5}, d40[2] = {4, 0};
  dml_rt_tensor_t e, r, y, m, w, z;
  float three[3] = {1, 2, 3};
  CHECK_OK(dml_rt_tensor_zeros(d, DML_DTYPE_F32, 2, d03, &e));
  r = from_f(d, DML_DTYPE_F32, 1, d3, three);
  dml_rt_tensor_t in[2] = {e, r};
  CHECK_OK(dml_rt_tensor_op("Add", in, 2, NULL, 0, &y, 1));
  dml_rt_tensor_info_t info;
  CHECK_OK(dml_rt_tensor_info(y, &info));
  CHECK(info.rank == 2 && info.dims[0] == 0 && info.dims[1] == 3);
  CHECK_OK(dml_rt_tensor_free(y));
  CHECK_OK(dml_rt_tensor_zeros(d, DML_DTYPE_F32, 2, d04, &m));
  CHECK_OK(dml_rt_tensor_ones(d, DML_DTYPE_F32, 2, d45, &w));
  dml_rt_tensor_t mm[2] = {m, w};
  CHECK_OK(dml_rt_tensor_op("MatMul", mm, 2, NULL, 0, &y, 1));
  CHECK_OK(dml_rt_tensor_info(y, &info));
  CHECK(info.rank == 2 && info.dims[0] == 0 && info.dims[1] == 5);
  CHECK_OK(dml_rt_tensor_free(y));
  /* a sum over an empty axis is 0 */
  CHECK_OK(dml_rt_tensor_zeros(d, DML_DTYPE_F32, 2, d40, &z));
  dml_attr_t at[1];
  memset(at, 0, sizeof at);
  int64_t one = 1;
  at[0].name = "axes", at[0].kind = DML_ATTR_INTS, at[0].n = 1, at[0].ints = &one;
  CHECK_OK(dml_rt_tensor_op("ReduceSum", &z, 1, at, 1, &y, 1));
  double s[4] = {1, 1, 1, 1};
  read_d(y, s, 4);
  CHECK(s[0] == 0 && s[3] == 0);
  CHECK_OK(dml_rt_tensor_free(y));
  /* 2^24 + 1 elements: the last one is right */
  int64_t big = (1 << 24) + 1;
  dml_rt_tensor_t a, b;
  CHECK_OK(dml_rt_tensor_arange(d, DML_DTYPE_F64, 0, (double)big, 1, &a));
  CHECK_OK(dml_rt_tensor_full(d, DML_DTYPE_F64, 1, &one, 0.5, &b));
  dml_rt_tensor_t ab[2] = {a, b};
  CHECK_OK(dml_rt_tensor_op("Mul", ab, 2, NULL, 0, &y, 1));
  CHECK_OK(dml_rt_tensor_info(y, &info));
  CHECK(info.rank == 1 && info.dims[0] == big);
  int64_t ax = 0, st = -1, en = big + 1;
  dml_rt_tensor_t last;
  CHECK_OK(dml_rt_tensor_slice(y, 1, &ax, &st, &en, NULL, &last));
  double v = 0;
  read_d(last, &v, 1);
  CHECK(v == 8388608.0); /* (2^24 + 1 - 1) * 0.5 */
  dml_rt_tensor_t fr[] = {e, r, m, w, z, a, b, y, last};
  for (size_t i = 0; i < sizeof fr / sizeof fr[0]; i++)
    CHECK_OK(dml_rt_tensor_free(fr[i]));
  CHECK(dml_rt_device_bytes(d) == 0);
  dml_rt_device_close(d);
}

/* Ops with several outputs: MaxPool with indices, TopK, Split. */
static void test_cpu_multi_output(void) {
  dml_rt_device_t *d = NULL;
  CHECK_OK(dml_rt_device_open("cpu", &d));
  float xv[16];
  for (int i = 0; i < 16; i++) xv[i] = (float)((i * 7) % 16) - 8.0f;
  xv[5] = NAN;
  int64_t dx[4] = {1, 1, 4, 4};
  dml_rt_tensor_t x = from_f(d, DML_DTYPE_F32, 4, dx, xv), y[4];
  int64_t ks[2] = {2, 2}, st[2] = {2, 2};
  dml_attr_t pa[2];
  memset(pa, 0, sizeof pa);
  pa[0].name = "kernel_shape", pa[0].kind = DML_ATTR_INTS, pa[0].n = 2, pa[0].ints = ks;
  pa[1].name = "strides", pa[1].kind = DML_ATTR_INTS, pa[1].n = 2, pa[1].ints = st;
  CHECK_OK(dml_rt_tensor_op("MaxPool", &x, 1, pa, 2, y, 2));
  dml_rt_tensor_info_t i0, i1;
  CHECK_OK(dml_rt_tensor_info(y[0], &i0));
  CHECK_OK(dml_rt_tensor_info(y[1], &i1));
  CHECK(i0.rank == 4 && i0.dims[2] == 2 && i0.dims[3] == 2 && i0.dtype == DML_DTYPE_F32);
  CHECK(i1.rank == 4 && i1.dims[2] == 2 && i1.dtype == DML_DTYPE_I64);
  double mv[4], iv[4];
  read_d(y[0], mv, 4);
  read_d(y[1], iv, 4);
  for (int oh = 0; oh < 2; oh++)
    for (int ow = 0; ow < 2; ow++) {
      double m = -INFINITY;
      int nan = 0;
      for (int kh = 0; kh < 2; kh++)
        for (int kw = 0; kw < 2; kw++) {
          float v = xv[(oh * 2 + kh) * 4 + ow * 2 + kw];
          nan |= isnan(v);
          if (v > m) m = v;
        }
      double got = mv[oh * 2 + ow];
      if (!nan) CHECK(got == m);
      CHECK(iv[oh * 2 + ow] >= 0 && iv[oh * 2 + ow] < 16);
      if (!nan) CHECK(xv[(int)iv[oh * 2 + ow]] == got);
    }
  CHECK_OK(dml_rt_tensor_free(y[0]));
  CHECK_OK(dml_rt_tensor_free(y[1]));
  /* TopK k=3 of 16 values (NaN excluded: xv[5] made finite) */
  xv[5] = 100.0f;
  int64_t d16 = 16, d1 = 1;
  float kf = 3;
  dml_rt_tensor_t v = from_f(d, DML_DTYPE_F32, 1, &d16, xv);
  dml_rt_tensor_t k = from_f(d, DML_DTYPE_I64, 1, &d1, &kf);
  dml_rt_tensor_t tk[2] = {v, k};
  CHECK_OK(dml_rt_tensor_op("TopK", tk, 2, NULL, 0, y, 2));
  CHECK_OK(dml_rt_tensor_info(y[1], &i1));
  CHECK(i1.rank == 1 && i1.dims[0] == 3 && i1.dtype == DML_DTYPE_I64);
  double tv[3], ti[3];
  read_d(y[0], tv, 3);
  read_d(y[1], ti, 3);
  CHECK(tv[0] == 100.0 && ti[0] == 5 && tv[1] == 7.0 && tv[2] == 6.0);
  CHECK_OK(dml_rt_tensor_free(y[0]));
  CHECK_OK(dml_rt_tensor_free(y[1]));
  /* Split [16] into 3 equal-ish parts (6, 6, 4) and by sizes (10, 6) */
  dml_rt_tensor_t sp[2];
  CHECK_OK(dml_rt_tensor_op("Split", &v, 1, NULL, 0, y, 3));
  double part[6];
  int64_t want_n[3] = {6, 6, 4};
  for (int i = 0; i < 3; i++) {
    CHECK_OK(dml_rt_tensor_info(y[i], &i0));
    CHECK(i0.rank == 1 && i0.dims[0] == want_n[i]);
    read_d(y[i], part, i0.dims[0]);
    CHECK(part[0] == xv[6 * i]);
    CHECK_OK(dml_rt_tensor_free(y[i]));
  }
  float sizes[2] = {10, 6};
  int64_t d2 = 2;
  sp[0] = v;
  sp[1] = from_f(d, DML_DTYPE_I64, 1, &d2, sizes);
  CHECK_OK(dml_rt_tensor_op("Split", sp, 2, NULL, 0, y, 2));
  CHECK_OK(dml_rt_tensor_info(y[1], &i1));
  CHECK(i1.dims[0] == 6);
  read_d(y[1], part, 6);
  CHECK(part[0] == xv[10] && part[5] == xv[15]);
  CHECK_OK(dml_rt_tensor_free(y[0]));
  CHECK_OK(dml_rt_tensor_free(y[1]));
  CHECK_ERROR(dml_rt_tensor_op("Split", sp, 2, NULL, 0, y, 3),
              DML_STATUS_INVALID_ARGUMENT, "split has 2 values for 3 outputs");
  CHECK(dml_rt_device_num_storages(d) == 4); /* x, v, k, sizes: no output left behind */
  dml_rt_tensor_t fr[] = {x, v, k, sp[1]};
  for (size_t i = 0; i < 4; i++) CHECK_OK(dml_rt_tensor_free(fr[i]));
  CHECK(dml_rt_device_bytes(d) == 0);
  dml_rt_device_close(d);
}

static void test_cpu_basics(void) {
  dml_rt_device_t *d = NULL;
  CHECK_OK(dml_rt_device_open("cpu", &d));
  CHECK(!strcmp(dml_rt_device_name(d), "cpu"));
  check_basics(d);
  dml_rt_device_close(d);
  /* bad shapes; sizes past memory */
  CHECK_OK(dml_rt_device_open("cpu", &d));
  int64_t neg[2] = {2, -1}, huge[2] = {INT64_C(1) << 40, INT64_C(1) << 40};
  dml_rt_tensor_t t, t2;
  CHECK_ERROR(dml_rt_tensor_zeros(d, DML_DTYPE_F32, 2, neg, &t),
              DML_STATUS_INVALID_ARGUMENT, "negative dim 1 in [2,-1]");
  CHECK_ERROR(dml_rt_tensor_empty(d, DML_DTYPE_F32, 2, huge, &t),
              DML_STATUS_RESOURCE_EXHAUSTED, "size overflows");
  CHECK_ERROR(dml_rt_tensor_empty(d, DML_DTYPE_INVALID, 0, NULL, &t),
              DML_STATUS_INVALID_ARGUMENT, "invalid dtype");
  CHECK_ERROR(dml_rt_tensor_info(DML_RT_TENSOR_NONE, NULL), DML_STATUS_INVALID_ARGUMENT,
              "zero handle");
  /* closing a device frees its live tensors: their handles go stale */
  int64_t d8 = 8;
  CHECK_OK(dml_rt_tensor_ones(d, DML_DTYPE_F32, 1, &d8, &t));
  CHECK_ERROR(dml_rt_tensor_reshape(t, 0, NULL, &t2), DML_STATUS_INVALID_ARGUMENT,
              "tensor [8] (8 elements), new shape []");
  CHECK_OK(dml_rt_tensor_transpose(t, NULL, &t2)); /* a view, alive at close */
  CHECK(dml_rt_device_bytes(d) == 32);
  dml_rt_device_close(d);
  dml_rt_tensor_info_t info;
  CHECK_ERROR(dml_rt_tensor_info(t, &info), DML_STATUS_FAILED_PRECONDITION,
              "use after free");
  CHECK_ERROR(dml_rt_tensor_release(t2), DML_STATUS_FAILED_PRECONDITION,
              "use after free");
  CHECK_ERROR(dml_rt_device_open("tpu", &d), DML_STATUS_UNIMPLEMENTED, "no such device");
  CHECK_ERROR(dml_rt_device_open("vulkan:x", &d), DML_STATUS_INVALID_ARGUMENT,
              "must be a number");
  CHECK_ERROR(dml_rt_device_open("cuda:x", &d), DML_STATUS_INVALID_ARGUMENT,
              "must be a number");
}

/* A GPU device's tensors: "vulkan" (lavapipe in CI) or "cuda" (skipped
 * with the reason where no device opens). */
static void test_gpu(const char *name) {
  dml_rt_device_t *v = NULL, *cpu = NULL;
  dml_status_t s = dml_rt_device_open(name, &v);
  if (s) {
    char *m = dml_status_format(s);
    printf("SKIP %s: %s\n", name, m);
    free(m);
    dml_status_free(s);
    return;
  }
  printf("%s device: %s\n", name, dml_rt_device_name(v));
  uint64_t start = dml_rt_device_bytes(v);
  check_basics(v);
  CHECK(dml_rt_device_bytes(v) == start);
  /* copies cpu <-> vulkan, bits kept */
  CHECK_OK(dml_rt_device_open("cpu", &cpu));
  int64_t ne = N_EDGES;
  dml_rt_tensor_t c = from_f(cpu, DML_DTYPE_F32, 1, &ne, k_edges), g, g2, back;
  CHECK_OK(dml_rt_tensor_to_device(c, v, &g));
  CHECK(dml_rt_device_bytes(v) == start + (uint64_t)ne * 4);
  CHECK_OK(dml_rt_tensor_to_device(g, v, &g2)); /* on the device */
  CHECK_OK(dml_rt_tensor_to_device(g2, cpu, &back));
  double got[N_EDGES];
  read_d(back, got, ne);
  for (int i = 0; i < N_EDGES; i++) CHECK(same_bits_f((float)got[i], k_edges[i]));
  /* an op outside the device's eager library (every op on CUDA, Trilu
   * on Vulkan: tests/tensor/test_tensor_vulkan.c runs the library's) is a
   * clear error, never a CPU fallback */
  dml_rt_tensor_t in[2] = {g, g2}, y;
  char want[96];
  const char *op = strcmp(name, "vulkan") ? "Add" : "Trilu";
  snprintf(want, sizeof want, "eager op %s with 2 inputs is not implemented on %s", op,
           name);
  CHECK_ERROR(dml_rt_tensor_op(op, in, 2, NULL, 0, &y, 1), DML_STATUS_UNIMPLEMENTED,
              want);
  dml_rt_tensor_t mixed[2] = {g, c};
  CHECK_ERROR(dml_rt_tensor_op("Add", mixed, 2, NULL, 0, &y, 1),
              DML_STATUS_FAILED_PRECONDITION, "inputs on different devices");
  CHECK_OK(dml_rt_tensor_free(g));
  CHECK_OK(dml_rt_tensor_free(g2));
  CHECK(dml_rt_device_bytes(v) == start);
  CHECK_OK(dml_rt_tensor_free(c));
  CHECK_OK(dml_rt_tensor_free(back));
  /* a big tensor: allocated, and its bytes back at free */
  int64_t big[2] = {4096, 4097}; /* > 2^24 elements */
  dml_rt_tensor_t t;
  CHECK_OK(dml_rt_tensor_full(v, DML_DTYPE_F32, 2, big, -0.0, &t));
  CHECK(dml_rt_device_bytes(v) == start + 4096ull * 4097 * 4);
  int64_t ax = 1, st = 4096, en = 4097;
  dml_rt_tensor_t last;
  CHECK_OK(dml_rt_tensor_slice(t, 1, &ax, &st, &en, NULL, &last));
  float col[4096];
  int64_t dcol[2] = {4096, 1};
  dml_tensor_t h = host(DML_DTYPE_F32, 2, dcol, col);
  CHECK_OK(dml_rt_tensor_to_host(last, &h));
  CHECK(signbit(col[4095]) && col[4095] == 0);
  CHECK_OK(dml_rt_tensor_free(t));
  CHECK_OK(dml_rt_tensor_free(last));
  CHECK(dml_rt_device_bytes(v) == start);
  dml_rt_device_close(cpu);
  dml_rt_device_close(v);
}

static void test_vulkan(void) {
  test_gpu("vulkan");
}
static void test_cuda(void) {
  test_gpu("cuda");
}

int main(void) {
  RUN(test_cpu_basics);
  RUN(test_cpu_ew_ops);
  RUN(test_cpu_sizes);
  RUN(test_cpu_multi_output);
  RUN(test_cpu_every_elementwise);
  RUN(test_cpu_every_reduction);
  RUN(test_cpu_binary);
  RUN(test_cpu_structured);
  RUN(test_vulkan);
  RUN(test_cuda);
  return dml_test_finish();
}
