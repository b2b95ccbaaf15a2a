/* test_tensor_vulkan.c — eager ops on Vulkan tensors (docs/tensor.md "Eager
 * ops on Vulkan"): every op of the eager kernel library (dml_eager_lib.h:
 * the f32 elementwise ops, Identity, the reductions, MatMul, Conv; Gemm
 * through MatMul; the compares, logic ops, Where, Clip, ArgMax/ArgMin and
 * the other dtypes in test_dtypes; Softmax and LogSoftmax in test_softmax;
 * Transpose, Slice, Expand, Concat and Gather bit for bit in test_move;
 * every elementwise op, reduction, MatMul, Gemm, Conv and those seven of
 * ops.def against the CPU on every_op's edge values, a
 * refusal failing unless k_not_on_device lists it, in test_table_ops) on
 * the default Vulkan device
 * (Mesa's lavapipe in CI) against the same op run eagerly on the CPU, on random values
 * and the edge values (NaN, +-inf, +-0, subnormals, +-1e+-30, huge), with broadcasting,
 * strided and negative-step views, empty dims and a row of 70,001 elements; then the
 * errors (shape mismatch naming the op and both shapes, use after free, an op outside the
 * library); and the device's bytes back at their starting level after every tensor is
 * freed.
 *
 * Agreement (the GPU against the CPU): both NaN; the same infinity; both
 * below the smallest normal with the same sign (the GPU may flush
 * subnormals, Vulkan allows it); else |gpu - cpu| <= rel |cpu| + abs by the
 * op's tolerance class (ops.def): exact 0, arithmetic 2.4e-7 relative +
 * 6e-8 absolute,
 * transcendental 2e-5 relative + 4e-6 absolute (docs/kernels.md's Vulkan
 * tolerances are within these). A GPU result is also accepted when it
 * agrees with the CPU's at the inputs with subnormals flushed to signed
 * zeros. Sin, Cos and Tan are compared for |x| <= 10 (the GPUs reduce
 * their arguments in f32). Exits 77 (skip) without a Vulkan device.
 * test_tensor_cuda.c runs these cases on CUDA: it includes this file with
 * TEST_GPU "cuda" and dml_eager_spirv renamed to the PTX library (the same
 * rows, MatMul and Conv included). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/every_op_edges.h"
#include "dml_cpu.h"
#include "dml_eager_lib.h"
#include "dml_ops.h"
#include "dml_tensor.h"
#include "dml_test.h"

#ifndef TEST_GPU
#define TEST_GPU "vulkan"
#define TEST_GPU_NO_LIB "this build has no eager kernel library (no glslang)"
#endif

static const float k_edges[] = {NAN,     INFINITY, -INFINITY, -0.0f,  0.0f,    1e-40f,
                                -1e-40f, 1e30f,    -1e30f,    1e-30f, -1e-30f, 3e38f,
                                -3e38f,  1.0f,     -1.0f,     0.5f,   -2.5f,   2.0f};
#define N_EDGES ((int)(sizeof k_edges / sizeof k_edges[0]))

static dml_rt_device_t *g_cpu, *g_vk;
static uint32_t g_rng = 12345u;

static float rnd(void) {
  g_rng = g_rng * 1664525u + 1013904223u;
  return ((float)(g_rng >> 8) / 16777216.0f) * 8.0f - 4.0f;
}

static float flush(float x) {
  return fabsf(x) < 1.17549435e-38f ? copysignf(0.0f, x) : x;
}

static int agree(float got, float want, dml_op_t op) {
  if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
  if (isinf(want) || isinf(got)) return got == want;
  if (fabsf(want) < 1.17549435e-38f && fabsf(got) < 1.17549435e-38f)
    return !signbit(got) == !signbit(want) || got == want;
  switch (dml_op_tol_class(op)) {
    case DML_TOL_EXACT: return got == want;
    case DML_TOL_ARITH: /* + 6e-8: HardSigmoid's alpha x + beta cancels near 0 */
      return fabs((double)got - want) <= 2.4e-7 * fabs((double)want) + 6e-8;
    default: return fabs((double)got - want) <= 2e-5 * fabs((double)want) + 4e-6;
  }
}

static dml_rt_tensor_t up(dml_rt_device_t *d, int32_t rank, const int64_t *dims,
                          const float *v) {
  dml_tensor_t h;
  memset(&h, 0, sizeof h);
  h.dtype = DML_DTYPE_F32;
  h.rank = rank;
  memcpy(h.dims, dims, sizeof(int64_t) * (size_t)rank);
  h.data = (void *)v;
  dml_rt_tensor_t t = DML_RT_TENSOR_NONE;
  CHECK_OK(dml_rt_tensor_from_host(d, &h, &t));
  return t;
}

/* t's elements (n of them) into a malloc'd array. */
static float *down(dml_rt_tensor_t t, int64_t *out_n) {
  dml_rt_tensor_info_t info;
  CHECK_OK(dml_rt_tensor_info(t, &info));
  int64_t n = 1;
  for (int32_t d = 0; d < info.rank; d++) n *= info.dims[d];
  float *p = (float *)malloc((size_t)(n > 0 ? n : 1) * 4);
  dml_tensor_t h;
  memset(&h, 0, sizeof h);
  h.dtype = info.dtype;
  h.rank = info.rank;
  memcpy(h.dims, info.dims, sizeof h.dims);
  h.data = p;
  CHECK_OK(dml_rt_tensor_to_host(t, &h));
  *out_n = n;
  return p;
}

static int g_mismatches;

/* Runs op `op` on the CPU tensors c[] and on their copies on Vulkan v[]
 * (the same views: `view` makes them) and compares; `xs` (n values, when
 * given) are input 0's elements for the Sin/Cos/Tan range rule. Returns the
 * elements compared. */
static int64_t compare(dml_op_t op, const dml_rt_tensor_t *c, const dml_rt_tensor_t *v,
                       uint32_t n_in, const dml_attr_t *attrs, uint32_t n_attrs,
                       const dml_rt_tensor_t *cflush, const char *what) {
  const char *name = dml_op_name(op);
  dml_rt_tensor_t yc = DML_RT_TENSOR_NONE, yv = DML_RT_TENSOR_NONE,
                  yf = DML_RT_TENSOR_NONE;
  CHECK_OK(dml_rt_tensor_op(name, c, n_in, attrs, n_attrs, &yc, 1));
  CHECK_OK(dml_rt_tensor_op(name, v, n_in, attrs, n_attrs, &yv, 1));
  if (cflush) CHECK_OK(dml_rt_tensor_op(name, cflush, n_in, attrs, n_attrs, &yf, 1));
  if (!yc.id || !yv.id) return 0;
  dml_rt_tensor_info_t ic, iv;
  CHECK_OK(dml_rt_tensor_info(yc, &ic));
  CHECK_OK(dml_rt_tensor_info(yv, &iv));
  CHECK(ic.rank == iv.rank && !memcmp(ic.dims, iv.dims, sizeof ic.dims));
  CHECK(iv.device == g_vk);
  int64_t n = 0, nv = 0, nf = 0;
  float *a = down(yc, &n), *b = down(yv, &nv), *f = yf.id ? down(yf, &nf) : NULL;
  CHECK(n == nv);
  /* the range rule reads input 0 at the same flat index (same shapes) */
  float *x0 = NULL;
  int64_t nx = 0;
  int trig = op == DML_OP_SIN || op == DML_OP_COS || op == DML_OP_TAN;
  if (trig) x0 = down(c[0], &nx);
  int bad = 0;
  for (int64_t i = 0; i < n && i < nv; i++) {
    if (trig && i < nx && fabsf(x0[i]) > 10) continue;
    if (agree(b[i], a[i], op) || (f && i < nf && agree(b[i], f[i], op))) continue;
    if (bad++ < 3)
      fprintf(stderr, "%s (%s) element %lld: " TEST_GPU " %.9g, cpu %.9g\n", name, what,
              (long long)i, b[i], a[i]);
  }
  if (bad) g_mismatches++;
  CHECK(bad == 0);
  free(a);
  free(b);
  free(f);
  free(x0);
  CHECK_OK(dml_rt_tensor_free(yc));
  CHECK_OK(dml_rt_tensor_free(yv));
  if (yf.id) CHECK_OK(dml_rt_tensor_free(yf));
  return n;
}

/* Whether row K is an f32 elementwise or reduction row of one or two f32
 * operands giving f32 (test_every_op, test_reductions), not one of the rows
 * test_dtypes takes (other dtypes, bool operands or outputs, Clip's scalar
 * bounds, Where's three operands). */
static int plain_f32(const dml_eager_kernel_t *K) {
  return K->dtype == DML_DTYPE_F32 && K->out_dtype == DML_DTYPE_F32 && K->n_inputs <= 2 &&
         K->op != DML_OP_CLIP;
}

/* Every kernel of the library on edge values, random values, broadcasting,
 * views, an empty tensor and a long row. */
static void test_every_op(void) {
  /* inputs: a [E, E] grid of edge pairs (binary ops see every pair), random
   * [3, 70001] */
  enum { E = N_EDGES };
  float ea[E * E], eb[E * E], fa[E * E], fb[E * E];
  for (int i = 0; i < E; i++)
    for (int j = 0; j < E; j++) {
      ea[i * E + j] = k_edges[i];
      eb[i * E + j] = k_edges[j];
      fa[i * E + j] = flush(k_edges[i]);
      fb[i * E + j] = flush(k_edges[j]);
    }
  int64_t de[2] = {E, E}, dr[2] = {3, 70001}, drow[1] = {70001}, dcol[2] = {3, 1},
          dempty[2] = {0, 5};
  float *ra = (float *)malloc(3 * 70001 * 4), *rb = (float *)malloc(3 * 70001 * 4);
  for (int i = 0; i < 3 * 70001; i++) ra[i] = rnd(), rb[i] = rnd();
  float row[70001], col[3] = {0.5f, -2.0f, 3.0f};
  for (int i = 0; i < 70001; i++) row[i] = rnd();
  dml_rt_tensor_t c[8], v[8];
  c[0] = up(g_cpu, 2, de, ea), v[0] = up(g_vk, 2, de, ea);
  c[1] = up(g_cpu, 2, de, eb), v[1] = up(g_vk, 2, de, eb);
  dml_rt_tensor_t f0 = up(g_cpu, 2, de, fa), f1 = up(g_cpu, 2, de, fb);
  c[2] = up(g_cpu, 2, dr, ra), v[2] = up(g_vk, 2, dr, ra);
  c[3] = up(g_cpu, 2, dr, rb), v[3] = up(g_vk, 2, dr, rb);
  c[4] = up(g_cpu, 1, drow, row), v[4] = up(g_vk, 1, drow, row);
  c[5] = up(g_cpu, 2, dcol, col), v[5] = up(g_vk, 2, dcol, col);
  c[6] = up(g_cpu, 2, dempty, NULL), v[6] = up(g_vk, 2, dempty, NULL);
  /* a negative-step, strided view: rows reversed, every other column */
  int64_t axes[2] = {0, 1}, st[2] = {-1, 0}, en[2] = {INT64_MIN, INT64_MAX},
          sp[2] = {-1, 2};
  CHECK_OK(dml_rt_tensor_slice(c[2], 2, axes, st, en, sp, &c[7]));
  CHECK_OK(dml_rt_tensor_slice(v[2], 2, axes, st, en, sp, &v[7]));
  dml_rt_tensor_t cs2[2], vs2[2];
  CHECK_OK(dml_rt_tensor_slice(c[3], 2, axes, st, en, sp, &cs2[0]));
  CHECK_OK(dml_rt_tensor_slice(v[3], 2, axes, st, en, sp, &vs2[0]));
  uint32_t n_ops = 0;
  for (uint32_t k = 0; k < dml_eager_spirv_count; k++) {
    const dml_eager_kernel_t *K = &dml_eager_spirv[k];
    dml_op_t op = K->op;
    if (k > 0 && dml_eager_spirv[k - 1].op == op) continue; /* a reduction's other form */
    if (K->kind == DML_EAGER_MATMUL || K->kind == DML_EAGER_CONV ||
        K->kind == DML_EAGER_GATHER || K->kind == DML_EAGER_NORM ||
        K->op == DML_OP_CONCAT || K->kind == DML_EAGER_POOLIDX)
      continue; /* below; Gather, Concat: test_move; the normalizations: test_norm_* */
    if (!plain_f32(K)) continue; /* test_dtypes */
    dml_attr_t fmod = {0};
    fmod.name = "fmod";
    fmod.kind = DML_ATTR_INT;
    fmod.i = 1;
    uint32_t na = op == DML_OP_MOD ? 1 : 0;
    n_ops++;
    if (K->n_inputs == 1) {
      dml_rt_tensor_t ff[1] = {f0};
      compare(op, &c[0], &v[0], 1, &fmod, na, ff, "edges");
      compare(op, &c[2], &v[2], 1, &fmod, na, NULL, "random [3,70001]");
      compare(op, &c[7], &v[7], 1, &fmod, na, NULL, "reversed strided view");
      compare(op, &c[6], &v[6], 1, &fmod, na, NULL, "empty [0,5]");
    } else {
      dml_rt_tensor_t ff[2] = {f0, f1};
      compare(op, &c[0], &v[0], 2, &fmod, na, ff, "edge pairs");
      compare(op, &c[2], &v[2], 2, &fmod, na, NULL, "random [3,70001]");
      dml_rt_tensor_t cb[2] = {c[2], c[4]}, vb[2] = {v[2], v[4]}; /* row broadcast */
      compare(op, cb, vb, 2, &fmod, na, NULL, "[3,70001] op [70001]");
      dml_rt_tensor_t cc[2] = {c[5], c[4]}, vc[2] = {v[5], v[4]}; /* outer */
      if (op != DML_OP_PRELU) /* PRelu's slope broadcasts to X only */
        compare(op, cc, vc, 2, &fmod, na, NULL, "[3,1] op [70001]");
      dml_rt_tensor_t cv[2] = {c[7], cs2[0]}, vv[2] = {v[7], vs2[0]};
      compare(op, cv, vv, 2, &fmod, na, NULL, "two reversed strided views");
      dml_rt_tensor_t ce[2] = {c[6], c[6]}, ve[2] = {v[6], v[6]};
      compare(op, ce, ve, 2, &fmod, na, NULL, "empty [0,5]");
    }
  }
  printf("%u ops of the eager library compared on " TEST_GPU
         " (%d calls with mismatches)\n",
         n_ops, g_mismatches);
  CHECK(n_ops >= 50); /* the f32 elementwise ops of ops.def, the reductions */
  for (int i = 0; i < 8; i++) {
    CHECK_OK(dml_rt_tensor_free(c[i]));
    CHECK_OK(dml_rt_tensor_free(v[i]));
  }
  CHECK_OK(dml_rt_tensor_free(cs2[0]));
  CHECK_OK(dml_rt_tensor_free(vs2[0]));
  CHECK_OK(dml_rt_tensor_free(f0));
  CHECK_OK(dml_rt_tensor_free(f1));
  free(ra);
  free(rb);
}

/* Reduction `op` of x (CPU c, Vulkan v) with attributes a (n) against the
 * CPU; sums may differ by 1e-5 of the reduced values' L1 norm (the CPU's
 * ReduceL1 with the same attributes; / the reduced count for Mean). */
static void compare_reduce(dml_op_t op, dml_rt_tensor_t c, dml_rt_tensor_t v,
                           const dml_attr_t *a, uint32_t n, const char *what) {
  const char *name = dml_op_name(op);
  dml_rt_tensor_t yc, yv, l1;
  CHECK_OK(dml_rt_tensor_op(name, &c, 1, a, n, &yc, 1));
  dml_status_t e = dml_rt_tensor_op(name, &v, 1, a, n, &yv, 1);
  CHECK_OK(e);
  if (e) return;
  CHECK_OK(dml_rt_tensor_op("ReduceL1", &c, 1, a, n, &l1, 1));
  int64_t nc, nv, nl, nx;
  float *pc = down(yc, &nc), *pv = down(yv, &nv), *pl = down(l1, &nl);
  float *px = down(c, &nx);
  CHECK(nc == nv && nc == nl);
  double len = nc ? (double)nx / (double)nc : 1;
  int bad = 0;
  for (int64_t i = 0; i < nc && i < nv; i++) {
    double slack = 1e-5 * pl[i] / (op == DML_OP_REDUCE_MEAN ? len : 1);
    int ok =
        agree(pv[i], pc[i], op) ||
        (isfinite(pc[i]) && fabs((double)pv[i] - pc[i]) <= slack + 1e-5 * fabs(pc[i]));
    if (!ok && bad++ < 3)
      fprintf(stderr, "%s (%s) element %lld: " TEST_GPU " %.9g, cpu %.9g\n", name, what,
              (long long)i, pv[i], pc[i]);
  }
  CHECK(bad == 0);
  free(pc);
  free(pv);
  free(pl);
  free(px);
  CHECK_OK(dml_rt_tensor_free(yc));
  CHECK_OK(dml_rt_tensor_free(yv));
  CHECK_OK(dml_rt_tensor_free(l1));
}

/* The reductions of the library over axes: rows of 70,001 (longer than a
 * workgroup and than 65,535) along the last axis and the first,
 * non-consecutive axes (a copy first), keepdims 0, the axes input form,
 * a reversed view, an empty reduced axis and edge values. */
static void test_reductions(void) {
  int64_t dr[2] = {3, 70001}, d3[3] = {4, 5, 6}, de[2] = {0, 5}, dg[2] = {3, N_EDGES};
  float *r = (float *)malloc(3 * 70001 * 4), r3[120], eg[3 * N_EDGES];
  for (int i = 0; i < 3 * 70001; i++) r[i] = rnd();
  for (int i = 0; i < 120; i++) r3[i] = rnd();
  for (int i = 0; i < 3 * N_EDGES; i++) eg[i] = k_edges[(i * 7 + i / N_EDGES) % N_EDGES];
  dml_rt_tensor_t c2 = up(g_cpu, 2, dr, r), v2 = up(g_vk, 2, dr, r);
  dml_rt_tensor_t c3 = up(g_cpu, 3, d3, r3), v3 = up(g_vk, 3, d3, r3);
  dml_rt_tensor_t ce = up(g_cpu, 2, de, NULL), ve = up(g_vk, 2, de, NULL);
  dml_rt_tensor_t cg = up(g_cpu, 2, dg, eg), vg = up(g_vk, 2, dg, eg);
  dml_rt_tensor_t cr, vr;
  int64_t ax0 = 0, st0 = -1, en0 = INT64_MIN, sp0 = -1;
  CHECK_OK(dml_rt_tensor_slice(c3, 1, &ax0, &st0, &en0, &sp0, &cr));
  CHECK_OK(dml_rt_tensor_slice(v3, 1, &ax0, &st0, &en0, &sp0, &vr));
  int64_t a1[1] = {1}, a0[1] = {0}, a02[2] = {0, -1}, a12[2] = {1, 2};
  dml_attr_t at[2];
  memset(at, 0, sizeof at);
  at[0].name = "axes";
  at[0].kind = DML_ATTR_INTS;
  at[1].name = "keepdims";
  at[1].kind = DML_ATTR_INT;
  at[1].i = 0;
  uint32_t n_red = 0;
  for (uint32_t k = 0; k < dml_eager_spirv_count; k++) {
    if (dml_eager_spirv[k].kind != DML_EAGER_REDUCE ||
        dml_eager_spirv[k].op == DML_OP_SOFTMAX ||
        dml_eager_spirv[k].op == DML_OP_LOG_SOFTMAX || /* test_softmax */
        dml_eager_spirv[k].dtype != DML_DTYPE_F32 ||
        dml_eager_spirv[k].out_dtype != DML_DTYPE_F32)
      continue; /* other dtypes, ArgMax/ArgMin: test_dtypes */
    dml_op_t op = dml_eager_spirv[k].op;
    if (k > 0 && dml_eager_spirv[k - 1].op == op) continue; /* its other form */
    n_red++;
    int prod = op == DML_OP_REDUCE_PROD;
    at[0].n = 1, at[0].ints = a1;
    if (!prod) compare_reduce(op, c2, v2, at, 1, "[3,70001] axis 1");
    compare_reduce(op, c3, v3, at, 2, "[4,5,6] axis 1, keepdims 0");
    compare_reduce(op, ce, ve, at, 1, "[0,5] axis 1");
    compare_reduce(op, cg, vg, at, 1, "edge values, axis 1");
    at[0].ints = a0;
    compare_reduce(op, ce, ve, at, 1, "[0,5] axis 0 (empty rows)");
    compare_reduce(op, c3, v3, at, 1, "[4,5,6] axis 0");
    compare_reduce(op, cr, vr, at, 1, "reversed view, axis 0");
    if (!prod) compare_reduce(op, c2, v2, at, 1, "[3,70001] axis 0");
    at[0].n = 2, at[0].ints = a02;
    compare_reduce(op, c3, v3, at, 1, "[4,5,6] axes 0, -1");
    compare_reduce(op, cr, vr, at, 2, "reversed view, axes 0, -1, keepdims 0");
    at[0].ints = a12;
    compare_reduce(op, c3, v3, at, 1, "[4,5,6] axes 1, 2");
    compare_reduce(op, c3, v3, NULL, 0, "[4,5,6] all axes");
    /* the axes input (opset 18) */
    int64_t dax = 1;
    dml_rt_tensor_t axc, axv, yc, yv;
    dml_tensor_t h;
    memset(&h, 0, sizeof h);
    h.dtype = DML_DTYPE_I64;
    h.rank = 1;
    h.dims[0] = 1;
    h.data = a1;
    CHECK_OK(dml_rt_tensor_from_host(g_cpu, &h, &axc));
    CHECK_OK(dml_rt_tensor_from_host(g_vk, &h, &axv));
    (void)dax;
    dml_rt_tensor_t ic[2] = {c3, axc}, iv[2] = {v3, axv};
    CHECK_OK(dml_rt_tensor_op(dml_op_name(op), ic, 2, NULL, 0, &yc, 1));
    CHECK_OK(dml_rt_tensor_op(dml_op_name(op), iv, 2, NULL, 0, &yv, 1));
    int64_t n1, n2;
    float *p1 = down(yc, &n1), *p2 = down(yv, &n2);
    CHECK(n1 == 24 && n2 == 24);
    for (int64_t i = 0; i < n1 && i < n2; i++)
      CHECK(agree(p2[i], p1[i], op) || fabs(p2[i] - p1[i]) <= 1e-5 * (1 + fabs(p1[i])));
    free(p1);
    free(p2);
    /* an absent axes input: every axis (Python's dmlc.ops.sum(x)) */
    dml_rt_tensor_t ycn = DML_RT_TENSOR_NONE, yvn = DML_RT_TENSOR_NONE;
    dml_rt_tensor_t icn[2] = {c3, DML_RT_TENSOR_NONE}, ivn[2] = {v3, DML_RT_TENSOR_NONE};
    CHECK_OK(dml_rt_tensor_op(dml_op_name(op), icn, 2, NULL, 0, &ycn, 1));
    CHECK_OK(dml_rt_tensor_op(dml_op_name(op), ivn, 2, NULL, 0, &yvn, 1));
    float *q1 = down(ycn, &n1), *q2 = down(yvn, &n2);
    CHECK(n1 == 1 && n2 == 1);
    if (n1 == 1 && n2 == 1)
      CHECK(agree(q2[0], q1[0], op) || fabs(q2[0] - q1[0]) <= 1e-5 * (1 + fabs(q1[0])));
    free(q1);
    free(q2);
    CHECK_OK(dml_rt_tensor_free(ycn));
    CHECK_OK(dml_rt_tensor_free(yvn));
    CHECK_OK(dml_rt_tensor_free(axc));
    CHECK_OK(dml_rt_tensor_free(axv));
    CHECK_OK(dml_rt_tensor_free(yc));
    CHECK_OK(dml_rt_tensor_free(yv));
  }
  printf("%u reductions of the eager library compared on " TEST_GPU "\n", n_red);
  CHECK(n_red >= 4); /* Sum, Mean, Max, Min at least */
  dml_rt_tensor_t all[10] = {c2, v2, c3, v3, ce, ve, cg, vg, cr, vr};
  for (int i = 0; i < 10; i++) CHECK_OK(dml_rt_tensor_free(all[i]));
  free(r);
}

/* > 2^24 elements: more than 65,535 workgroups of 256, so each invocation
 * takes several elements. */
static void test_big(void) {
  int64_t dims[2] = {4097, 4099};
  dml_rt_tensor_t a, b, y;
  CHECK_OK(dml_rt_tensor_full(g_vk, DML_DTYPE_F32, 2, dims, 1.5, &a));
  int64_t d1[1] = {4099};
  CHECK_OK(dml_rt_tensor_arange(g_cpu, DML_DTYPE_F32, 0, 4099, 1, &b));
  dml_rt_tensor_t bv;
  CHECK_OK(dml_rt_tensor_to_device(b, g_vk, &bv));
  (void)d1;
  dml_rt_tensor_t in[2] = {a, bv};
  CHECK_OK(dml_rt_tensor_op("Mul", in, 2, NULL, 0, &y, 1));
  int64_t n = 0;
  float *p = down(y, &n);
  CHECK(n == 4097LL * 4099);
  int bad = 0;
  for (int64_t i = 0; i < n; i++) bad += p[i] != 1.5f * (float)(i % 4099);
  CHECK(bad == 0);
  free(p);
  CHECK_OK(dml_rt_tensor_free(a));
  CHECK_OK(dml_rt_tensor_free(b));
  CHECK_OK(dml_rt_tensor_free(bv));
  CHECK_OK(dml_rt_tensor_free(y));
}

/* ---- MatMul and Conv (dml_eager_lib.h DML_EAGER_MATMUL, DML_EAGER_CONV) ---- */

/* Runs `op` on CPU tensors c[] and their Vulkan copies v[] and compares:
 * both NaN, the same infinity, or |gpu - cpu| <= 1e-5 (L1 + |cpu|) + 1e-30,
 * where L1 is the op on the inputs' absolute values (the sum of the
 * magnitudes of the products: the accumulating ops' tolerance, as for the
 * reductions). */
static void compare_acc(const char *op, const dml_rt_tensor_t *c,
                        const dml_rt_tensor_t *v, uint32_t n_in, const dml_attr_t *a,
                        uint32_t n_a, const char *what) {
  dml_rt_tensor_t yc = DML_RT_TENSOR_NONE, yv = DML_RT_TENSOR_NONE, yl,
                  ab[3] = {DML_RT_TENSOR_NONE, DML_RT_TENSOR_NONE, DML_RT_TENSOR_NONE};
  CHECK_OK(dml_rt_tensor_op(op, c, n_in, a, n_a, &yc, 1));
  dml_status_t e = dml_rt_tensor_op(op, v, n_in, a, n_a, &yv, 1);
  if (e) fprintf(stderr, "%s (%s) on vulkan failed\n", op, what);
  CHECK_OK(e);
  if (e || !yc.id) return;
  for (uint32_t i = 0; i < n_in; i++)
    if (c[i].id) CHECK_OK(dml_rt_tensor_op("Abs", &c[i], 1, NULL, 0, &ab[i], 1));
  CHECK_OK(dml_rt_tensor_op(op, ab, n_in, a, n_a, &yl, 1));
  dml_rt_tensor_info_t ic, iv;
  CHECK_OK(dml_rt_tensor_info(yc, &ic));
  CHECK_OK(dml_rt_tensor_info(yv, &iv));
  int same = ic.rank == iv.rank;
  for (int32_t d = 0; same && d < ic.rank; d++) same = ic.dims[d] == iv.dims[d];
  if (!same)
    fprintf(stderr, "%s (%s): rank %d on the cpu, %d on vulkan\n", op, what, (int)ic.rank,
            (int)iv.rank);
  CHECK(same);
  CHECK(iv.device == g_vk);
  int64_t n, nv, nl;
  float *pc = down(yc, &n), *pv = down(yv, &nv), *pl = down(yl, &nl);
  CHECK(n == nv && n == nl);
  int bad = 0;
  for (int64_t i = 0; i < n && i < nv; i++) {
    int ok;
    if (isnan(pc[i]) || isnan(pv[i]))
      ok = isnan(pc[i]) && isnan(pv[i]);
    else if (isinf(pc[i]) || isinf(pv[i]))
      ok = pc[i] == pv[i];
    else
      ok = fabs((double)pv[i] - pc[i]) <= 1e-5 * (fabs(pl[i]) + fabs(pc[i])) + 1e-30;
    if (!ok && bad++ < 3)
      fprintf(stderr, "%s (%s) element %lld: vulkan %.9g, cpu %.9g (L1 %g)\n", op, what,
              (long long)i, pv[i], pc[i], pl[i]);
  }
  if (bad) g_mismatches++;
  CHECK(bad == 0);
  free(pc);
  free(pv);
  free(pl);
  CHECK_OK(dml_rt_tensor_free(yc));
  CHECK_OK(dml_rt_tensor_free(yv));
  CHECK_OK(dml_rt_tensor_free(yl));
  for (uint32_t i = 0; i < n_in; i++)
    if (ab[i].id) CHECK_OK(dml_rt_tensor_free(ab[i]));
}

/* A pair of tensors (CPU, Vulkan) of `rank` dims holding `v` (random values
 * in [-s, s] when v is NULL). */
typedef struct pair {
  dml_rt_tensor_t c, v;
} pair_t;

static pair_t pair_new(int32_t rank, const int64_t *dims, const float *v, float s) {
  int64_t n = 1;
  for (int32_t d = 0; d < rank; d++) n *= dims[d];
  float *p = (float *)malloc((size_t)(n > 0 ? n : 1) * 4);
  for (int64_t i = 0; i < n; i++) p[i] = v ? v[i] : rnd() * (s / 4);
  pair_t r = {up(g_cpu, rank, dims, p), up(g_vk, rank, dims, p)};
  free(p);
  return r;
}

static void pair_free(pair_t *p) {
  CHECK_OK(dml_rt_tensor_free(p->c));
  CHECK_OK(dml_rt_tensor_free(p->v));
}

static void mm(pair_t a, pair_t b, const char *what) {
  dml_rt_tensor_t c[2] = {a.c, b.c}, v[2] = {a.v, b.v};
  compare_acc("MatMul", c, v, 2, NULL, 0, what);
}

#define D(...) ((const int64_t[]){__VA_ARGS__})

/* MatMul: tiles beyond one workgroup's block with ragged edges, K of
 * 70,001, broadcast batch dims, 1-D operands, empty M/N/K, transposed and
 * negative-step views, more blocks than 65,535 workgroups, edge values. */
static void test_matmul(void) {
  pair_t a = pair_new(2, D(130, 70), NULL, 4), b = pair_new(2, D(70, 129), NULL, 4);
  mm(a, b, "[130,70] @ [70,129]");
  /* views: A^T of a [70,130], B reversed along K with every other column */
  pair_t at = pair_new(2, D(70, 130), NULL, 4), bw = pair_new(2, D(70, 258), NULL, 4);
  pair_t atv, bsv;
  int64_t perm[2] = {1, 0}, axes[2] = {0, 1}, st[2] = {-1, 0},
          en[2] = {INT64_MIN, INT64_MAX}, sp[2] = {-1, 2};
  CHECK_OK(dml_rt_tensor_transpose(at.c, perm, &atv.c));
  CHECK_OK(dml_rt_tensor_transpose(at.v, perm, &atv.v));
  CHECK_OK(dml_rt_tensor_slice(bw.c, 2, axes, st, en, sp, &bsv.c));
  CHECK_OK(dml_rt_tensor_slice(bw.v, 2, axes, st, en, sp, &bsv.v));
  mm(atv, bsv, "transposed [130,70] @ reversed strided [70,129]");
  mm(atv, b, "transposed @ contiguous");
  /* an expanded A (row stride 0) and a B starting at an offset (rows 1..) */
  pair_t row = pair_new(2, D(1, 70), NULL, 4), rex, b2 = pair_new(2, D(71, 129), NULL, 4),
         b2s;
  int64_t dexp[2] = {130, 70}, ax0 = 0, one = 1, big = INT64_MAX, step1 = 1;
  CHECK_OK(dml_rt_tensor_expand(row.c, 2, dexp, &rex.c));
  CHECK_OK(dml_rt_tensor_expand(row.v, 2, dexp, &rex.v));
  CHECK_OK(dml_rt_tensor_slice(b2.c, 1, &ax0, &one, &big, &step1, &b2s.c));
  CHECK_OK(dml_rt_tensor_slice(b2.v, 1, &ax0, &one, &big, &step1, &b2s.v));
  mm(rex, b2s, "expanded [1,70]->[130,70] @ rows 1.. of [71,129]");
  pair_free(&rex);
  pair_free(&b2s);
  pair_free(&row);
  pair_free(&b2);
  pair_free(&atv);
  pair_free(&bsv);
  pair_free(&at);
  pair_free(&bw);
  pair_free(&a);
  pair_free(&b);
  /* K longer than a workgroup and than 65,535 */
  a = pair_new(2, D(3, 70001), NULL, 4), b = pair_new(2, D(70001, 2), NULL, 4);
  mm(a, b, "[3,70001] @ [70001,2]");
  pair_free(&a);
  pair_free(&b);
  /* broadcast batch dims: [2,1,5,7] @ [3,7,4] -> [2,3,5,4] */
  a = pair_new(4, D(2, 1, 5, 7), NULL, 4), b = pair_new(3, D(3, 7, 4), NULL, 4);
  mm(a, b, "[2,1,5,7] @ [3,7,4]");
  pair_free(&a);
  pair_free(&b);
  /* 1-D operands, M = N = 1 */
  pair_t v7 = pair_new(1, D(7), NULL, 4), m74 = pair_new(2, D(7, 4), NULL, 4),
         m57 = pair_new(2, D(5, 7), NULL, 4);
  mm(v7, m74, "[7] @ [7,4]");
  mm(m57, v7, "[5,7] @ [7]");
  mm(v7, v7, "[7] @ [7]");
  pair_free(&v7);
  pair_free(&m74);
  pair_free(&m57);
  a = pair_new(2, D(1, 300), NULL, 4), b = pair_new(2, D(300, 1), NULL, 4);
  mm(a, b, "[1,300] @ [300,1]");
  pair_free(&a);
  pair_free(&b);
  /* empty M, empty K (zeros), empty batch */
  pair_t e05 = pair_new(2, D(0, 5), NULL, 4), e53 = pair_new(2, D(5, 3), NULL, 4),
         e40 = pair_new(2, D(4, 0), NULL, 4), e03 = pair_new(2, D(0, 3), NULL, 4),
         e204 = pair_new(3, D(2, 0, 4), NULL, 4), e43 = pair_new(2, D(4, 3), NULL, 4);
  mm(e05, e53, "[0,5] @ [5,3]");
  mm(e40, e03, "[4,0] @ [0,3] (zeros)");
  mm(e204, e43, "[2,0,4] @ [4,3]");
  pair_free(&e05);
  pair_free(&e53);
  pair_free(&e40);
  pair_free(&e03);
  pair_free(&e204);
  pair_free(&e43);
  /* 70,000 batch items: more blocks than 65,535 workgroups (they loop) */
  a = pair_new(3, D(70000, 2, 3), NULL, 4), b = pair_new(2, D(3, 2), NULL, 4);
  mm(a, b, "[70000,2,3] @ [3,2]");
  pair_free(&a);
  pair_free(&b);
  /* edge values: row i of A (and column i of B) holds edge value i on
   * the diagonal among random values in [-1, 1] (which keep 3e38 * b
   * finite), so each output row shows one edge: NaN, +-inf, -0, subnormal,
   * huge */
  enum { E = N_EDGES };
  float ed[E * E];
  for (int i = 0; i < E; i++)
    for (int j = 0; j < E; j++) ed[i * E + j] = i == j ? k_edges[i] : rnd() / 4;
  pair_t ee = pair_new(2, D(E, E), ed, 1), r7 = pair_new(2, D(E, 7), NULL, 1),
         r5 = pair_new(2, D(5, E), NULL, 1);
  mm(ee, r7, "edge diagonal @ [E,7]");
  mm(r5, ee, "[5,E] @ edge diagonal");
  pair_free(&ee);
  pair_free(&r7);
  pair_free(&r5);
}

static dml_attr_t ints_attr(const char *name, const int64_t *v, size_t n) {
  dml_attr_t a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.kind = DML_ATTR_INTS;
  a.ints = (int64_t *)v;
  a.n = n;
  return a;
}

static void conv(pair_t x, pair_t w, const pair_t *b, const dml_attr_t *a, uint32_t n_a,
                 const char *what) {
  dml_rt_tensor_t c[3] = {x.c, w.c, b ? b->c : DML_RT_TENSOR_NONE},
                  v[3] = {x.v, w.v, b ? b->v : DML_RT_TENSOR_NONE};
  compare_acc("Conv", c, v, b ? 3 : 2, a, n_a, what);
}

/* Conv: pads, strides, dilations, asymmetric pads, groups, depthwise, 1-D,
 * VALID, SAME_UPPER, SAME_LOWER, bias and none, an empty batch, a row of 70,001, a
 * transposed view (made contiguous on the device) and edge values. */
static void test_conv(void) {
  pair_t x = pair_new(4, D(2, 3, 9, 11), NULL, 4),
         w = pair_new(4, D(4, 3, 3, 3), NULL, 4), b = pair_new(1, D(4), NULL, 4);
  dml_attr_t a[4];
  a[0] = ints_attr("pads", D(1, 1, 1, 1), 4);
  conv(x, w, &b, a, 1, "[2,3,9,11] 3x3 pads 1, bias");
  conv(x, w, NULL, NULL, 0, "[2,3,9,11] 3x3, no bias");
  a[0] = ints_attr("pads", D(0, 1, 2, 1), 4);
  a[1] = ints_attr("strides", D(2, 2), 2);
  a[2] = ints_attr("dilations", D(2, 1), 2);
  conv(x, w, NULL, a, 3, "strides 2, dilations (2,1), pads (0,1,2,1)");
  dml_attr_t valid;
  memset(&valid, 0, sizeof valid);
  valid.name = "auto_pad";
  valid.kind = DML_ATTR_STRING;
  valid.s = "VALID";
  conv(x, w, &b, &valid, 1, "auto_pad VALID");
  /* SAME_UPPER and SAME_LOWER: odd total pads (the odd one at the end or
   * the beginning), with strides and dilations */
  dml_attr_t sp[3];
  sp[0] = valid;
  sp[1] = ints_attr("strides", D(2, 3), 2);
  sp[2] = ints_attr("dilations", D(1, 2), 2);
  sp[0].s = "SAME_UPPER";
  conv(x, w, &b, sp, 1, "auto_pad SAME_UPPER");
  conv(x, w, &b, sp, 3, "auto_pad SAME_UPPER, strides (2,3), dilations (1,2)");
  sp[0].s = "SAME_LOWER";
  conv(x, w, &b, sp, 1, "auto_pad SAME_LOWER");
  conv(x, w, &b, sp, 3, "auto_pad SAME_LOWER, strides (2,3), dilations (1,2)");
  /* a transposed view of X (H and W swapped) */
  pair_t xt = pair_new(4, D(2, 3, 11, 9), NULL, 4), xtv;
  int64_t perm[4] = {0, 1, 3, 2};
  CHECK_OK(dml_rt_tensor_transpose(xt.c, perm, &xtv.c));
  CHECK_OK(dml_rt_tensor_transpose(xt.v, perm, &xtv.v));
  conv(xtv, w, &b, NULL, 0, "transposed view of X");
  /* X from batch item 1 on: contiguous, at an element offset */
  pair_t xs1;
  int64_t ax0 = 0, one = 1, big = INT64_MAX, step1 = 1;
  CHECK_OK(dml_rt_tensor_slice(x.c, 1, &ax0, &one, &big, &step1, &xs1.c));
  CHECK_OK(dml_rt_tensor_slice(x.v, 1, &ax0, &one, &big, &step1, &xs1.v));
  conv(xs1, w, &b, NULL, 0, "X[1:] (an offset)");
  pair_free(&xs1);
  pair_free(&xtv);
  pair_free(&xt);
  pair_free(&x);
  pair_free(&w);
  pair_free(&b);
  /* groups 2 and depthwise */
  x = pair_new(4, D(1, 4, 7, 7), NULL, 4), w = pair_new(4, D(6, 2, 3, 3), NULL, 4);
  b = pair_new(1, D(6), NULL, 4);
  dml_attr_t g;
  memset(&g, 0, sizeof g);
  g.name = "group";
  g.kind = DML_ATTR_INT;
  g.i = 2;
  conv(x, w, &b, &g, 1, "group 2");
  pair_free(&x);
  pair_free(&w);
  pair_free(&b);
  x = pair_new(4, D(2, 5, 8, 8), NULL, 4), w = pair_new(4, D(5, 1, 3, 3), NULL, 4);
  b = pair_new(1, D(5), NULL, 4);
  g.i = 5;
  a[0] = g;
  a[1] = ints_attr("pads", D(1, 1, 1, 1), 4);
  conv(x, w, &b, a, 2, "depthwise, pads 1");
  pair_free(&x);
  pair_free(&w);
  pair_free(&b);
  /* 1-D; a row of 70,001 */
  x = pair_new(3, D(2, 3, 20), NULL, 4), w = pair_new(3, D(4, 3, 5), NULL, 4);
  a[0] = ints_attr("pads", D(2, 2), 2);
  conv(x, w, NULL, a, 1, "1-D [2,3,20] kernel 5 pads 2");
  a[0] = valid;
  a[0].s = "SAME_LOWER";
  a[1] = ints_attr("strides", D(3), 1);
  conv(x, w, NULL, a, 2, "1-D SAME_LOWER stride 3");
  pair_free(&x);
  pair_free(&w);
  x = pair_new(4, D(1, 2, 1, 70001), NULL, 4), w = pair_new(4, D(3, 2, 1, 3), NULL, 4);
  conv(x, w, NULL, NULL, 0, "[1,2,1,70001]");
  pair_free(&x);
  pair_free(&w);
  /* an empty batch */
  x = pair_new(4, D(0, 3, 5, 5), NULL, 4), w = pair_new(4, D(2, 3, 3, 3), NULL, 4);
  conv(x, w, NULL, NULL, 0, "empty batch");
  pair_free(&x);
  pair_free(&w);
  /* edge values in X (W in [-1, 1]), padded */
  enum { E = N_EDGES };
  float ed[2 * E * E];
  for (int i = 0; i < 2 * E * E; i++) ed[i] = k_edges[(i * 7 + i / E) % E];
  x = pair_new(4, D(1, 2, E, E), ed, 1), w = pair_new(4, D(3, 2, 2, 2), NULL, 1);
  a[0] = ints_attr("pads", D(1, 1, 1, 1), 4);
  conv(x, w, NULL, a, 1, "edge values");
  pair_free(&x);
  pair_free(&w);
  /* edge values in W (X in [-1, 1]), padded: a corner tap of +-inf (the
   * padding's zeros times it are NaN at the border, +-inf inside), a NaN
   * tap, subnormal and huge taps */
  float we[3 * 2 * 3 * 3];
  for (int i = 0; i < 3 * 2 * 3 * 3; i++) we[i] = rnd() / 4;
  we[0] = INFINITY;       /* oc 0, c 0, tap (0, 0) */
  we[18 + 8] = -INFINITY; /* oc 1, c 0, tap (2, 2) */
  we[36 + 9 + 4] = NAN;   /* oc 2, c 1, centre */
  we[2] = 1e-40f, we[18 + 3] = 3e38f, we[18 + 9 + 5] = -1e30f;
  x = pair_new(4, D(1, 2, 6, 6), NULL, 1), w = pair_new(4, D(3, 2, 3, 3), we, 1);
  conv(x, w, NULL, a, 1, "edge weights, pads 1");
  pair_free(&x);
  pair_free(&w);
}

/* Gemm (the MatMul kernel on transposed views, then alpha and beta C):
 * transA/transB, alpha and beta, C broadcast from [N] or full [M, N], no C,
 * beta 0 with a NaN C (left out, as the compiled path does), empty M. */
static void test_gemm(void) {
  pair_t a = pair_new(2, D(70, 130), NULL, 4), b = pair_new(2, D(129, 70), NULL, 4),
         cn = pair_new(1, D(129), NULL, 4), cmn = pair_new(2, D(130, 129), NULL, 4);
  dml_attr_t at[4];
  memset(at, 0, sizeof at);
  at[0].name = "transA", at[0].kind = DML_ATTR_INT, at[0].i = 1;
  at[1].name = "transB", at[1].kind = DML_ATTR_INT, at[1].i = 1;
  at[2].name = "alpha", at[2].kind = DML_ATTR_FLOAT, at[2].f = 0.3;
  at[3].name = "beta", at[3].kind = DML_ATTR_FLOAT, at[3].f = -2.5;
  dml_rt_tensor_t c3[3] = {a.c, b.c, cn.c}, v3[3] = {a.v, b.v, cn.v};
  compare_acc("Gemm", c3, v3, 3, at, 4, "transA, transB, alpha 0.3, beta -2.5, C [N]");
  c3[2] = cmn.c, v3[2] = cmn.v;
  compare_acc("Gemm", c3, v3, 3, at, 2, "transA, transB, C [M,N]");
  compare_acc("Gemm", c3, v3, 2, at, 3, "no C, alpha 0.3");
  float nan1 = NAN;
  pair_t cnan = pair_new(1, D(1), &nan1, 1);
  at[3].f = 0.0;
  c3[2] = cnan.c, v3[2] = cnan.v;
  compare_acc("Gemm", c3, v3, 3, at, 4, "beta 0, C NaN");
  pair_free(&cnan);
  pair_t e0 = pair_new(2, D(0, 70), NULL, 4), e1 = pair_new(2, D(70, 5), NULL, 4),
         ec = pair_new(1, D(5), NULL, 4);
  dml_rt_tensor_t ce[3] = {e0.c, e1.c, ec.c}, ve[3] = {e0.v, e1.v, ec.v};
  compare_acc("Gemm", ce, ve, 3, NULL, 0, "empty M");
  pair_free(&e0);
  pair_free(&e1);
  pair_free(&ec);
  pair_free(&a);
  pair_free(&b);
  pair_free(&cn);
  pair_free(&cmn);
}

/* The errors of MatMul and Conv on Vulkan. */
static void test_mm_errors(void) {
  int64_t d34[2] = {3, 4}, d56[2] = {5, 6};
  dml_rt_tensor_t a, b, y;
  CHECK_OK(dml_rt_tensor_zeros(g_vk, DML_DTYPE_F32, 2, d34, &a));
  CHECK_OK(dml_rt_tensor_zeros(g_vk, DML_DTYPE_F32, 2, d56, &b));
  dml_rt_tensor_t in[2] = {a, b};
  uint64_t before = dml_rt_device_bytes(g_vk);
  CHECK_ERROR(dml_rt_tensor_op("MatMul", in, 2, NULL, 0, &y, 1),
              DML_STATUS_INVALID_ARGUMENT, "MatMul: shape mismatch");
  CHECK_ERROR(dml_rt_tensor_op("MatMul", in, 2, NULL, 0, &y, 1),
              DML_STATUS_INVALID_ARGUMENT, "lhs [3,4], rhs [5,6]");
  CHECK(dml_rt_device_bytes(g_vk) == before);
  int64_t dx[4] = {1, 1, 5, 5}, dw[4] = {1, 1, 3, 3};
  dml_rt_tensor_t x, w;
  CHECK_OK(dml_rt_tensor_zeros(g_vk, DML_DTYPE_F32, 4, dx, &x));
  CHECK_OK(dml_rt_tensor_zeros(g_vk, DML_DTYPE_F32, 4, dw, &w));
  dml_rt_tensor_t cin[2] = {x, w};
  dml_attr_t same;
  memset(&same, 0, sizeof same);
  same.name = "auto_pad";
  same.kind = DML_ATTR_STRING;
  same.s = "SAME_UPPER";
  same.s = "SAME_MIDDLE";
  CHECK_ERROR(dml_rt_tensor_op("Conv", cin, 2, &same, 1, &y, 1), DML_STATUS_UNIMPLEMENTED,
              "auto_pad 'SAME_MIDDLE' is not supported");
  /* channels of X and W disagree: both shapes named */
  int64_t dw2[4] = {1, 2, 3, 3};
  dml_rt_tensor_t w2;
  CHECK_OK(dml_rt_tensor_zeros(g_vk, DML_DTYPE_F32, 4, dw2, &w2));
  dml_rt_tensor_t cin2[2] = {x, w2};
  CHECK_ERROR(dml_rt_tensor_op("Conv", cin2, 2, NULL, 0, &y, 1),
              DML_STATUS_INVALID_ARGUMENT, "[1,1,5,5]");
  CHECK_ERROR(dml_rt_tensor_op("Conv", cin2, 2, NULL, 0, &y, 1),
              DML_STATUS_INVALID_ARGUMENT, "[1,2,3,3]");
  CHECK_OK(dml_rt_tensor_free(w2));
  CHECK(dml_rt_device_bytes(g_vk) == before + 4 * 25 + 4 * 9);
  dml_rt_tensor_t i32;
  CHECK_OK(dml_rt_tensor_zeros(g_vk, DML_DTYPE_I32, 2, d34, &i32));
  dml_rt_tensor_t mi[2] = {i32, i32};
  CHECK_ERROR(dml_rt_tensor_op("MatMul", mi, 2, NULL, 0, &y, 1), DML_STATUS_UNIMPLEMENTED,
              "takes f32 and f64 operands of one dtype");
  CHECK_OK(dml_rt_tensor_free(i32));
  CHECK_OK(dml_rt_tensor_free(x));
  CHECK_OK(dml_rt_tensor_free(w));
  CHECK_OK(dml_rt_tensor_free(a));
  CHECK_OK(dml_rt_tensor_free(b));
}

/* ---- dtypes other than f32 (each typed row of the library) ---- */

/* Whether dt is one of the library's integer dtypes, and its range. */
static int int_dtype(dml_dtype_t dt, double *lo, double *hi) {
  switch (dt) {
    case DML_DTYPE_I32: *lo = INT32_MIN, *hi = INT32_MAX; return 1;
    case DML_DTYPE_I64: *lo = -9.2e18, *hi = 9.2e18; return 1;
    case DML_DTYPE_U8: *lo = 0, *hi = 255; return 1;
    case DML_DTYPE_I8: *lo = -128, *hi = 127; return 1;
    case DML_DTYPE_I16: *lo = -32768, *hi = 32767; return 1;
    case DML_DTYPE_U16: *lo = 0, *hi = 65535; return 1;
    case DML_DTYPE_U32: *lo = 0, *hi = UINT32_MAX; return 1;
    case DML_DTYPE_U64: *lo = 0, *hi = 1.8e19; return 1;
    default: return 0;
  }
}

/* Tensor of dtype dt on the CPU and on the GPU from f32 values `v` (n of
 * them, dims): the CPU's Cast of them (floats) or their integer parts
 * clamped to the dtype's range (integers), so both devices start from the
 * same bits. */
static pair_t typed_pair(dml_dtype_t dt, int32_t rank, const int64_t *dims,
                         const float *v) {
  int64_t n = 1;
  for (int32_t d = 0; d < rank; d++) n *= dims[d];
  pair_t r = {DML_RT_TENSOR_NONE, DML_RT_TENSOR_NONE};
  dml_rt_tensor_t f = up(g_cpu, rank, dims, v);
  double lo, hi;
  if (int_dtype(dt, &lo, &hi)) { /* exact integers */
    void *p = malloc((size_t)(n > 0 ? n : 1) * 8);
    for (int64_t i = 0; i < n; i++) {
      double x = isnan(v[i]) ? 0 : v[i];
      int64_t q = x >= 9.2e18 ? INT64_MAX : x <= -9.2e18 ? INT64_MIN : (int64_t)x;
      if (dt != DML_DTYPE_I64 && dt != DML_DTYPE_U64)
        q = q > hi ? (int64_t)hi : q < lo ? (int64_t)lo : q;
      switch (dt) {
        case DML_DTYPE_U16: ((uint16_t *)p)[i] = (uint16_t)q; break;
        case DML_DTYPE_U32: ((uint32_t *)p)[i] = (uint32_t)q; break;
        case DML_DTYPE_U64: /* 0 .. 1.8e19: beyond INT64_MAX too */
          ((uint64_t *)p)[i] = x <= 0 ? 0 : x >= 1.8e19 ? UINT64_MAX : (uint64_t)x;
          break;
        case DML_DTYPE_I32: ((int32_t *)p)[i] = (int32_t)q; break;
        case DML_DTYPE_U8: ((uint8_t *)p)[i] = (uint8_t)q; break;
        case DML_DTYPE_I8: ((int8_t *)p)[i] = (int8_t)q; break;
        case DML_DTYPE_I16: ((int16_t *)p)[i] = (int16_t)q; break;
        default: ((int64_t *)p)[i] = q; break;
      }
    }
    dml_tensor_t h;
    memset(&h, 0, sizeof h);
    h.dtype = dt;
    h.rank = rank;
    memcpy(h.dims, dims, sizeof(int64_t) * (size_t)rank);
    h.data = p;
    CHECK_OK(dml_rt_tensor_from_host(g_cpu, &h, &r.c));
    free(p);
  } else {
    dml_attr_t to;
    memset(&to, 0, sizeof to);
    to.name = "to";
    to.kind = DML_ATTR_INT;
    to.i = dml_dtype_onnx_code(dt);
    CHECK_OK(dml_rt_tensor_op("Cast", &f, 1, &to, 1, &r.c, 1));
  }
  CHECK_OK(dml_rt_tensor_to_device(r.c, g_vk, &r.v));
  CHECK_OK(dml_rt_tensor_free(f));
  return r;
}

/* Element i of a downloaded tensor of dtype dt as a double, and its bits. */
static double elem(const void *p, dml_dtype_t dt, int64_t i, uint64_t *bits) {
  switch (dt) {
    case DML_DTYPE_I32:
      *bits = (uint32_t)((const int32_t *)p)[i];
      return ((const int32_t *)p)[i];
    case DML_DTYPE_I64:
      *bits = (uint64_t)((const int64_t *)p)[i];
      return (double)((const int64_t *)p)[i];
    case DML_DTYPE_F32: {
      float f = ((const float *)p)[i];
      uint32_t u;
      memcpy(&u, &f, 4);
      *bits = u;
      return f;
    }
    case DML_DTYPE_BOOL:
    case DML_DTYPE_U8: *bits = ((const uint8_t *)p)[i]; return ((const uint8_t *)p)[i];
    case DML_DTYPE_I8:
      *bits = (uint8_t)((const int8_t *)p)[i];
      return ((const int8_t *)p)[i];
    case DML_DTYPE_I16:
      *bits = (uint16_t)((const int16_t *)p)[i];
      return ((const int16_t *)p)[i];
    case DML_DTYPE_U16: *bits = ((const uint16_t *)p)[i]; return ((const uint16_t *)p)[i];
    case DML_DTYPE_U32: *bits = ((const uint32_t *)p)[i]; return ((const uint32_t *)p)[i];
    case DML_DTYPE_U64:
      *bits = ((const uint64_t *)p)[i];
      return (double)((const uint64_t *)p)[i];
    case DML_DTYPE_F64: {
      double f = ((const double *)p)[i];
      memcpy(bits, &f, 8);
      return f;
    }
    default: { /* f16, bf16: the bits; the value from them */
      uint16_t h = ((const uint16_t *)p)[i];
      *bits = h;
      if (dt == DML_DTYPE_BF16) {
        uint32_t u = (uint32_t)h << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
      }
      int e = (h >> 10) & 31, m = h & 1023;
      double v = e == 0    ? ldexp(m, -24)
                 : e == 31 ? (m ? NAN : INFINITY)
                           : ldexp(m + 1024, e - 25);
      return h & 0x8000 ? -v : v;
    }
  }
}

/* The raw elements of t (its dtype's bytes) into a malloc'd array. */
static void *down_raw(dml_rt_tensor_t t, int64_t *out_n, dml_dtype_t *out_dt) {
  dml_rt_tensor_info_t info;
  CHECK_OK(dml_rt_tensor_info(t, &info));
  int64_t n = 1;
  for (int32_t d = 0; d < info.rank; d++) n *= info.dims[d];
  void *p = malloc((size_t)(n > 0 ? n : 1) * 8);
  dml_tensor_t h;
  memset(&h, 0, sizeof h);
  h.dtype = info.dtype;
  h.rank = info.rank;
  memcpy(h.dims, info.dims, sizeof h.dims);
  h.data = p;
  CHECK_OK(dml_rt_tensor_to_host(t, &h));
  *out_n = n;
  *out_dt = info.dtype;
  return p;
}

/* Runs `op` on CPU tensors c[] and GPU tensors v[] and compares: integers
 * bit for bit; f64 bit for bit but the transcendental ops (DML_OPF_TRANSC:
 * Exp) within 4 units in the last place of libm's (the kernel IR's f64 exp
 * is its own); f16 and bf16 within one unit in the last place (the GPU's
 * f32 arithmetic rounded to 16 bits; the CPU's f32 libm) or both NaN;
 * bf16 values below the smallest f32 normal agree with a zero of either
 * sign (the GPU may flush f32 subnormals). With acc (MatMul, Gemm, Conv),
 * f16/bf16 values also agree within 1e-5 of the sum of the products'
 * magnitudes plus that unit (the accumulation's order). */
static void compare_typed_l1(const char *op, const dml_rt_tensor_t *c,
                             const dml_rt_tensor_t *v, uint32_t n_in, const dml_attr_t *a,
                             uint32_t n_a, int acc, const char *what) {
  dml_rt_tensor_t yc = DML_RT_TENSOR_NONE, yv = DML_RT_TENSOR_NONE,
                  yl = DML_RT_TENSOR_NONE;
  CHECK_OK(dml_rt_tensor_op(op, c, n_in, a, n_a, &yc, 1));
  dml_status_t e = dml_rt_tensor_op(op, v, n_in, a, n_a, &yv, 1);
  if (e) fprintf(stderr, "%s (%s) on " TEST_GPU " failed\n", op, what);
  CHECK_OK(e);
  if (e || !yc.id) {
    if (yc.id) CHECK_OK(dml_rt_tensor_free(yc));
    return;
  }
  int64_t n = 0, nv = 0, nl = 0;
  dml_dtype_t dt, dv, dl = DML_DTYPE_F32;
  void *pc = down_raw(yc, &n, &dt), *pv = down_raw(yv, &nv, &dv), *pl = NULL;
  CHECK(n == nv && dt == dv);
  if (acc && (dt == DML_DTYPE_F16 || dt == DML_DTYPE_BF16)) {
    /* L1: the op on the operands' magnitudes (the CPU, in f32 so that it
     * cannot overflow a 16-bit float): the sum of the products' magnitudes */
    dml_rt_tensor_t ab[3] = {DML_RT_TENSOR_NONE, DML_RT_TENSOR_NONE, DML_RT_TENSOR_NONE};
    dml_attr_t to = {
        .name = "to", .kind = DML_ATTR_INT, .i = dml_dtype_onnx_code(DML_DTYPE_F32)};
    for (uint32_t i = 0; i < n_in && i < 3; i++)
      if (c[i].id) {
        dml_rt_tensor_t w;
        CHECK_OK(dml_rt_tensor_op("Cast", &c[i], 1, &to, 1, &w, 1));
        CHECK_OK(dml_rt_tensor_op("Abs", &w, 1, NULL, 0, &ab[i], 1));
        CHECK_OK(dml_rt_tensor_free(w));
      }
    CHECK_OK(dml_rt_tensor_op(op, ab, n_in, a, n_a, &yl, 1));
    for (uint32_t i = 0; i < 3; i++)
      if (ab[i].id) CHECK_OK(dml_rt_tensor_free(ab[i]));
    pl = down_raw(yl, &nl, &dl);
    CHECK(nl == n && dl == DML_DTYPE_F32);
  }
  int transc = 0; /* the op's tolerance class (ops.def): library functions */
  for (int o = 1; o < DML_OP_COUNT_; o++)
    if (!strcmp(dml_op_name((dml_op_t)o), op))
      transc = (dml_op_info((dml_op_t)o)->flags & DML_OPF_TRANSC) != 0;
  int bad = 0;
  for (int64_t i = 0; i < n && i < nv && dt == dv; i++) {
    uint64_t bc, bv;
    double xc = elem(pc, dt, i, &bc), xv = elem(pv, dt, i, &bv);
    int ok = bc == bv || (isnan(xc) && isnan(xv));
    if (!ok && dt == DML_DTYPE_F64 && transc) /* the GPU's f64 exp: libm's +- 4 ulp */
      ok = isfinite(xc) && fabs(xv - xc) <= 0x1p-50 * fabs(xc);
    if (!ok && (dt == DML_DTYPE_F16 || dt == DML_DTYPE_BF16)) {
      int64_t d = (int64_t)bc - (int64_t)bv;
      ok = ((bc ^ bv) & 0x8000) == 0 && d >= -1 && d <= 1 && !isnan(xc) && !isnan(xv);
      if (dt == DML_DTYPE_BF16 && fabs(xc) < 1.17549435e-38 && fabs(xv) < 1.17549435e-38)
        ok = 1;
      /* an accumulation: the two f32 sums (their k orders differ) may differ
       * by up to 1e-5 of the products' magnitudes before the one rounding,
       * more than a unit in the last place where the sum cancels: within
       * that plus the unit (2^-10 of |cpu| for f16, 2^-7 for bf16) */
      if (!ok && pl && i < nl && isfinite(xc) && isfinite(xv))
        ok = fabs(xv - xc) <= 1e-5 * ((const float *)pl)[i] +
                                  (dt == DML_DTYPE_F16 ? 0x1p-10 : 0x1p-7) * fabs(xc) +
                                  6e-8;
    }
    if (!ok && bad++ < 3)
      fprintf(stderr,
              "%s %s (%s) element %lld: " TEST_GPU " %.9g (0x%llx), cpu %.9g (0x%llx)\n",
              op, dml_dtype_name(dt), what, (long long)i, xv, (unsigned long long)bv, xc,
              (unsigned long long)bc);
  }
  if (bad) g_mismatches++;
  CHECK(bad == 0);
  free(pc);
  free(pv);
  free(pl);
  CHECK_OK(dml_rt_tensor_free(yc));
  CHECK_OK(dml_rt_tensor_free(yv));
  if (yl.id) CHECK_OK(dml_rt_tensor_free(yl));
}

/* compare_typed_l1 without the accumulation's allowance: bit for bit, or
 * one unit in the last place for f16/bf16. */
static void compare_typed(const char *op, const dml_rt_tensor_t *c,
                          const dml_rt_tensor_t *v, uint32_t n_in, const dml_attr_t *a,
                          uint32_t n_a, const char *what) {
  compare_typed_l1(op, c, v, n_in, a, n_a, 0, what);
}

/* Each typed row (op, dtype, output dtype) of the library against the CPU:
 * edge values (every pair for binary ops; integers: 0, +-1, the extremes,
 * whose sums wrap), random values, a row broadcast and a reversed strided
 * view (the 6-dim form), empty dims; Cast between f32, f16, bf16, i32 and
 * i64 (floats to integers from values within the integer's range: ONNX
 * leaves the others undefined); ReduceSum/Max/Min of i32 and i64 along
 * either axis of [3, 1000] and of a view. */
static void test_dtypes(void) {
  static const float fedge[] = {NAN,    INFINITY, -INFINITY, -0.0f, 0.0f,   6e-8f,
                                -3e-5f, 65504.0f, -7e4f,     1e30f, -3e38f, 1.0f,
                                -1.0f,  0.5f,     -2.5f,     2.0f,  1e-3f,  3.14159f};
  static const float iedge[] = {0.0f,    1.0f,     -1.0f,    2.0f,      -7.0f,  3e9f,
                                -3e9f,   2.1e9f,   -2.2e9f,  1e19f,     -1e19f, 100.0f,
                                -100.0f, 65535.0f, 12345.0f, -99999.0f, 5.0f,   9.0f};
  enum { E = (int)(sizeof fedge / sizeof fedge[0]), R = 3, L = 1000 };
  float pa[E * E], pb[E * E], ia[E * E], ib[E * E],
      *ra = (float *)malloc(R * L * 4), *rb = (float *)malloc(R * L * 4), rr[L];
  for (int i = 0; i < E; i++)
    for (int j = 0; j < E; j++) {
      pa[i * E + j] = fedge[i], pb[i * E + j] = fedge[j];
      ia[i * E + j] = iedge[i], ib[i * E + j] = iedge[j];
    }
  for (int i = 0; i < R * L; i++) ra[i] = rnd() * 250, rb[i] = rnd() * 250;
  for (int i = 0; i < L; i++) rr[i] = rnd() * 250;
  /* Where's conditions: 0, 1 and NaN (true) in turn */
  float cnd[E * E], cndr[R * L];
  for (int i = 0; i < E * E; i++) cnd[i] = i % 3 == 0 ? 0.0f : i % 3 == 1 ? 1.0f : NAN;
  for (int i = 0; i < R * L; i++) cndr[i] = cnd[i % (E * E)];
  int64_t de[2] = {E, E}, dr[2] = {R, L}, drow[1] = {L}, dz[2] = {0, 5};
  int64_t axes[2] = {0, 1}, st[2] = {-1, 0}, en[2] = {INT64_MIN, INT64_MAX},
          sp[2] = {-1, 2};
  uint32_t n_rows = 0;
  for (uint32_t k = 0; k < dml_eager_spirv_count; k++) {
    const dml_eager_kernel_t *K = &dml_eager_spirv[k];
    if (plain_f32(K) || K->kind == DML_EAGER_MATMUL || K->kind == DML_EAGER_CONV ||
        K->kind == DML_EAGER_GATHER || K->kind == DML_EAGER_NORM ||
        K->op == DML_OP_CONCAT || K->kind == DML_EAGER_POOLIDX)
      continue; /* Gather, Concat: test_move; the normalizations: test_norm_* */
    if (k > 0 && dml_eager_spirv[k - 1].op == K->op &&
        dml_eager_spirv[k - 1].n_inputs == K->n_inputs &&
        dml_eager_spirv[k - 1].dtype == K->dtype &&
        dml_eager_spirv[k - 1].out_dtype == K->out_dtype &&
        dml_eager_spirv[k - 1].select_last == K->select_last)
      continue; /* its other form: the runtime picks it below */
    n_rows++;
    dml_dtype_t dt = (dml_dtype_t)K->dtype, odt = (dml_dtype_t)K->out_dtype;
    double ilo, ihi, olo = 0, ohi = 0;
    int ints = int_dtype(dt, &ilo, &ihi);
    /* floats cast to integers: values within the integer's range */
    int in_range = K->op == DML_OP_CAST && !ints && int_dtype(odt, &olo, &ohi);
    const char *opn = dml_op_name(K->op);
    dml_attr_t to;
    memset(&to, 0, sizeof to);
    to.name = "to";
    to.kind = DML_ATTR_INT;
    to.i = dml_dtype_onnx_code(odt);
    uint32_t na = K->op == DML_OP_CAST ? 1 : 0;
    if (K->kind == DML_EAGER_REDUCE) {
      pair_t x = typed_pair(dt, 2, dr, ra), xe = typed_pair(dt, 2, de, ia), xv;
      CHECK_OK(dml_rt_tensor_slice(x.c, 2, axes, st, en, sp, &xv.c));
      CHECK_OK(dml_rt_tensor_slice(x.v, 2, axes, st, en, sp, &xv.v));
      dml_attr_t at[3];
      memset(at, 0, sizeof at);
      at[0] = ints_attr("axes", D(1), 1);
      at[1].name = "keepdims", at[1].kind = DML_ATTR_INT, at[1].i = 0;
      /* ArgMax/ArgMin: `axis` and the row's select_last_index (attributes
       * 0 and 2 with keepdims between); also the float edges (NaN, ties of
       * -0 and +0, the infinities) */
      int arg = K->op == DML_OP_ARG_MAX || K->op == DML_OP_ARG_MIN;
      if (arg) {
        at[0].name = "axis", at[0].kind = DML_ATTR_INT, at[0].i = 1;
        at[2].name = "select_last_index", at[2].kind = DML_ATTR_INT;
        at[2].i = K->select_last;
        pair_t xf = typed_pair(dt, 2, de, ints ? ia : pa);
        compare_typed(opn, &xf.c, &xf.v, 1, at, 3, "edges axis 1, keepdims 0");
        at[0].i = 0;
        compare_typed(opn, &xf.c, &xf.v, 1, at, 3, "edges axis 0, keepdims 0");
        at[0].i = 1;
        pair_free(&xf);
      }
      const uint32_t n1 = arg ? 3u : 1u, n2 = arg ? 3u : 2u;
      compare_typed(opn, &x.c, &x.v, 1, at, n1, "[3,1000] axis 1");
      compare_typed(opn, &xe.c, &xe.v, 1, at, n2, "edges (wrapping sums) axis 1");
      compare_typed(opn, &xv.c, &xv.v, 1, at, n1, "reversed strided view, axis 1");
      static const int64_t ax0[1] = {0};
      if (arg)
        at[0].i = 0;
      else
        at[0] = ints_attr("axes", ax0, 1);
      compare_typed(opn, &x.c, &x.v, 1, at, n1, "[3,1000] axis 0");
      compare_typed(
          opn, &x.c, &x.v, 1, arg ? at + 2 : NULL, arg ? 1u : 0u,
          arg ? "[3,1000] axis 0 (the default), keepdims 1" : "[3,1000] all axes");
      pair_free(&x);
      pair_free(&xe);
      pair_free(&xv);
      continue;
    }
    const float *ea = ints || in_range ? ia : pa, *eb = ints || in_range ? ib : pb;
    if (in_range) { /* within the integer's range (and f16's 65504): drop
                     * the edges beyond */
      static float cl[E * E];
      double lim = dt == DML_DTYPE_F16 ? 6e4 : 2e9;
      for (int i = 0; i < E * E; i++) {
        double x = ia[i] + (i % 3 ? 0.5 : -0.75);
        cl[i] = fabs(x) < lim && x > olo - 1 && x < ohi + 1 ? (float)x : 7.0f;
      }
      ea = cl;
    }
    /* operand j of its dtype (Where's condition: bool, whose values are 0,
     * 1 and NaN, true, in turn): the edges (every pair; Where: the
     * condition's pattern, x and y the edge pairs), random [3,1000] (the
     * others a [1000] row broadcast), reversed strided views, [0,5] */
    const uint32_t ni = K->n_inputs;
    const float *se[3] = {ea, eb, ea}, *sr[3] = {ra, rb, ra}, *sw[3] = {rr, rr, rr};
    if (K->op == DML_OP_WHERE) se[0] = cnd, se[2] = eb, sr[0] = cndr, sw[0] = cndr;
    pair_t pe[3], pr[3], pw[3], pv[3], pz[3];
    for (uint32_t j = 0; j < ni; j++) {
      dml_dtype_t jt = dml_eager_in_dtype(K, j);
      pe[j] = typed_pair(jt, 2, de, se[j]);
      pr[j] = typed_pair(jt, 2, dr, sr[j]);
      pw[j] = typed_pair(jt, 1, drow, sw[j]);
      pz[j] = typed_pair(jt, 2, dz, NULL);
      CHECK_OK(dml_rt_tensor_slice(pr[j].c, 2, axes, st, en, sp, &pv[j].c));
      CHECK_OK(dml_rt_tensor_slice(pr[j].v, 2, axes, st, en, sp, &pv[j].v));
    }
    dml_rt_tensor_t cc[3], vv[3];
#define TAKE(arr, j0)                                      \
  for (uint32_t j = 0; j < ni; j++) {                      \
    const pair_t *q_ = (int)j < (j0) ? &pr[j] : &(arr)[j]; \
    cc[j] = q_->c, vv[j] = q_->v;                          \
  }
    if (K->op == DML_OP_CLIP) { /* x with scalar bounds (min, max) */
      static const float fb[][2] = {{-1.0f, 0.5f}, {0.0f, 0.0f}, {-INFINITY, INFINITY},
                                    {NAN, 2.0f},   {-2.5f, NAN}, {1.0f, -1.0f}};
      static const float ib2[][2] = {{-7.0f, 100.0f}, {0.0f, 0.0f}, {5.0f, -5.0f}};
      int nb = ints ? 3 : 6;
      for (int b = 0; b < nb; b++) {
        const float *bd = ints ? ib2[b] : fb[b];
        pair_t lo = typed_pair(dt, 0, de, &bd[0]), hi = typed_pair(dt, 0, de, &bd[1]);
        char what[96];
        snprintf(what, sizeof what, "bounds %g, %g: ", (double)bd[0], (double)bd[1]);
        const pair_t *xs4[4] = {&pe[0], &pr[0], &pv[0], &pz[0]};
        static const char *const wn[4] = {"edges", "random [3,1000]",
                                          "reversed strided view", "empty [0,5]"};
        for (int c = 0; c < 4; c++) {
          dml_rt_tensor_t c3[3] = {xs4[c]->c, lo.c, hi.c},
                          v3[3] = {xs4[c]->v, lo.v, hi.v};
          char w2[160];
          snprintf(w2, sizeof w2, "%s%s", what, wn[c]);
          compare_typed(opn, c3, v3, ni, NULL, 0, w2);
          if (ni == 3) { /* a max without a min (the lowest value as the min) */
            c3[1] = v3[1] = DML_RT_TENSOR_NONE;
            snprintf(w2, sizeof w2, "%s%s, no min", what, wn[c]);
            compare_typed(opn, c3, v3, 3, NULL, 0, w2);
          }
        }
        if (ni == 3 && b == 0) { /* no bounds: the copy */
          compare_typed(opn, &pe[0].c, &pe[0].v, 1, NULL, 0, "edges, no bounds");
          compare_typed(opn, &pv[0].c, &pv[0].v, 1, NULL, 0, "a view, no bounds");
        }
        pair_free(&lo);
        pair_free(&hi);
      }
    } else {
      /* Mod: fmod 0 and 1; BitShift: direction LEFT and RIGHT (the words
       * DML_EAGER_PC_ATTR); Cast: its `to` */
      int two = K->op == DML_OP_MOD || K->op == DML_OP_BIT_SHIFT;
      for (int form = 0; form < (two ? 2 : 1); form++) {
        if (K->op == DML_OP_MOD) to.name = "fmod", to.i = form, na = 1;
        if (K->op == DML_OP_BIT_SHIFT) {
          to.name = "direction", to.kind = DML_ATTR_STRING, na = 1;
          to.s = form ? "RIGHT" : "LEFT";
        }
        TAKE(pe, 0);
        compare_typed(opn, cc, vv, ni, &to, na, ni > 1 ? "edge pairs" : "edges");
        TAKE(pw, 1);
        compare_typed(opn, cc, vv, ni, &to, na,
                      ni > 1 ? "[3,1000] with [1000] rows" : "random [3,1000]");
        TAKE(pv, 0);
        compare_typed(opn, cc, vv, ni, &to, na, "reversed strided views");
        TAKE(pz, 0);
        compare_typed(opn, cc, vv, ni, &to, na, "empty [0,5]");
      }
    }
#undef TAKE
    for (uint32_t j = 0; j < ni; j++) {
      pair_free(&pe[j]);
      pair_free(&pr[j]);
      pair_free(&pw[j]);
      pair_free(&pv[j]);
      pair_free(&pz[j]);
    }
  }
  printf(
      "%u typed rows (op, dtype, output dtype) of the eager library compared on " TEST_GPU
      "\n",
      n_rows);
  CHECK(n_rows >= 60);
  /* the f16 and bf16 reductions (through the f32 kernels: f32 accumulation,
   * one rounding) of values in [-4, 4) along either axis, all axes, a view */
  uint32_t n_half = 0;
  float *r4 = (float *)malloc(R * L * 4);
  for (int i = 0; i < R * L; i++) r4[i] = ra[i] / 62.5f;
  for (uint32_t k = 0; k < dml_eager_spirv_count; k++) {
    const dml_eager_kernel_t *K = &dml_eager_spirv[k];
    if (K->kind != DML_EAGER_REDUCE || K->dtype != DML_DTYPE_F32 ||
        K->op == DML_OP_SOFTMAX || K->op == DML_OP_LOG_SOFTMAX ||
        (k > 0 && dml_eager_spirv[k - 1].op == K->op))
      continue;
    for (int h = 0; h < 2; h++) {
      dml_dtype_t dt = h ? DML_DTYPE_BF16 : DML_DTYPE_F16;
      const char *opn = dml_op_name(K->op);
      pair_t x = typed_pair(dt, 2, dr, r4), xv;
      CHECK_OK(dml_rt_tensor_slice(x.c, 2, axes, st, en, sp, &xv.c));
      CHECK_OK(dml_rt_tensor_slice(x.v, 2, axes, st, en, sp, &xv.v));
      dml_attr_t at[2];
      memset(at, 0, sizeof at);
      int arg = K->op == DML_OP_ARG_MAX || K->op == DML_OP_ARG_MIN; /* `axis` */
      static const int64_t ax0[1] = {0}, ax1[1] = {1};
      at[0] = ints_attr("axes", ax1, 1);
      if (arg) at[0].name = "axis", at[0].kind = DML_ATTR_INT, at[0].i = 1;
      at[1].name = "keepdims", at[1].kind = DML_ATTR_INT, at[1].i = 0;
      compare_typed(opn, &x.c, &x.v, 1, at, 2, "[3,1000] axis 1, keepdims 0");
      compare_typed(opn, &xv.c, &xv.v, 1, at, 1, "reversed strided view, axis 1");
      at[0] = ints_attr("axes", ax0, 1);
      if (arg) at[0].name = "axis", at[0].kind = DML_ATTR_INT, at[0].i = 0;
      compare_typed(opn, &x.c, &x.v, 1, at, 1, "[3,1000] axis 0");
      compare_typed(opn, &x.c, &x.v, 1, NULL, 0,
                    arg ? "[3,1000] axis 0 (the default)" : "[3,1000] all axes");
      pair_free(&x);
      pair_free(&xv);
      n_half++;
    }
  }
  free(r4);
  printf("%u f16/bf16 reductions compared on " TEST_GPU "\n", n_half);
  CHECK(n_half >= 20);
  /* Cast to the operand's own dtype: a copy (the Identity kernel) */
  static const dml_dtype_t same[5] = {DML_DTYPE_F32, DML_DTYPE_F16, DML_DTYPE_BF16,
                                      DML_DTYPE_I32, DML_DTYPE_I64};
  for (int i = 0; i < 5; i++) {
    int isint = same[i] == DML_DTYPE_I32 || same[i] == DML_DTYPE_I64;
    pair_t x = typed_pair(same[i], 2, de, isint ? ia : pa), xs;
    CHECK_OK(dml_rt_tensor_slice(x.c, 2, axes, st, en, sp, &xs.c));
    CHECK_OK(dml_rt_tensor_slice(x.v, 2, axes, st, en, sp, &xs.v));
    dml_attr_t to;
    memset(&to, 0, sizeof to);
    to.name = "to";
    to.kind = DML_ATTR_INT;
    to.i = dml_dtype_onnx_code(same[i]);
    compare_typed("Cast", &xs.c, &xs.v, 1, &to, 1, "to its own dtype, a reversed view");
    pair_free(&x);
    pair_free(&xs);
  }
  /* the variadic ops of 3 operands (folded by the two-operand kernels of
   * Add, Max and Min; Mean's sum then divided by 3) and of 1, and CastLike
   * (Cast to its second operand's dtype), on other dtypes */
  {
    float pc3[E * E], ic3[E * E];
    for (int i = 0; i < E; i++)
      for (int j = 0; j < E; j++)
        pc3[i * E + j] = fedge[(i + j) % E], ic3[i * E + j] = iedge[(i + 2 * j) % E];
    static const struct {
      const char *op;
      dml_dtype_t dt;
    } vs[] = {{"Sum", DML_DTYPE_I32},  {"Max", DML_DTYPE_U16}, {"Min", DML_DTYPE_I64},
              {"Mean", DML_DTYPE_F16}, {"Sum", DML_DTYPE_F64}, {"Mean", DML_DTYPE_F64},
              {"Max", DML_DTYPE_F64},  {"Sum", DML_DTYPE_U64}, {"Min", DML_DTYPE_BF16},
              {"Sum", DML_DTYPE_F32},  {"Mean", DML_DTYPE_F32}};
    for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
      double lo, hi;
      int isint = int_dtype(vs[i].dt, &lo, &hi);
      pair_t p3[3] = {typed_pair(vs[i].dt, 2, de, isint ? ia : pa),
                      typed_pair(vs[i].dt, 2, de, isint ? ib : pb),
                      typed_pair(vs[i].dt, 1, D(E), isint ? ic3 : pc3)};
      dml_rt_tensor_t c3[3] = {p3[0].c, p3[1].c, p3[2].c},
                      v3[3] = {p3[0].v, p3[1].v, p3[2].v};
      compare_typed(vs[i].op, c3, v3, 3, NULL, 0, "3 operands, edges, a row broadcast");
      compare_typed(vs[i].op, c3, v3, 1, NULL, 0, "1 operand");
      compare_typed(vs[i].op, c3, v3, 2, NULL, 0, "2 operands");
      for (int j = 0; j < 3; j++) pair_free(&p3[j]);
    }
    static const dml_dtype_t cl[][2] = {{DML_DTYPE_I32, DML_DTYPE_F64},
                                        {DML_DTYPE_F32, DML_DTYPE_F16},
                                        {DML_DTYPE_F64, DML_DTYPE_F32},
                                        {DML_DTYPE_U16, DML_DTYPE_I64}};
    for (int i = 0; i < 4; i++) {
      double lo, hi;
      int isint = int_dtype(cl[i][0], &lo, &hi);
      pair_t x = typed_pair(cl[i][0], 2, de, isint ? ia : pa),
             like = typed_pair(cl[i][1], 1, D(1), pa);
      dml_rt_tensor_t c2[2] = {x.c, like.c}, v2[2] = {x.v, like.v};
      char what[64];
      snprintf(what, sizeof what, "%s like %s", dml_dtype_name(cl[i][0]),
               dml_dtype_name(cl[i][1]));
      compare_typed("CastLike", c2, v2, 2, NULL, 0, what);
      pair_free(&x);
      pair_free(&like);
    }
  }
  /* mixed dtypes: both named; an op without a kernel for the dtype */
  int64_t d2[1] = {2};
  dml_rt_tensor_t a, b, y;
  CHECK_OK(dml_rt_tensor_zeros(g_vk, DML_DTYPE_I32, 1, d2, &a));
  CHECK_OK(dml_rt_tensor_zeros(g_vk, DML_DTYPE_I64, 1, d2, &b));
  dml_rt_tensor_t ab[2] = {a, b};
  dml_status_t s = dml_rt_tensor_op("Add", ab, 2, NULL, 0, &y, 1);
  CHECK(s != DML_OK);
  if (s) {
    char *m = dml_status_format(s);
    CHECK(m && strstr(m, "i32") && strstr(m, "i64"));
    if (m && !(strstr(m, "i32") && strstr(m, "i64"))) fprintf(stderr, "got: %s\n", m);
    free(m);
    dml_status_free(s);
  }
  CHECK_ERROR(dml_rt_tensor_op("Exp", &a, 1, NULL, 0, &y, 1), DML_STATUS_UNIMPLEMENTED,
              "no eager kernel for Exp of i32");
  dml_attr_t to_f64;
  memset(&to_f64, 0, sizeof to_f64);
  to_f64.name = "to";
  to_f64.kind = DML_ATTR_INT;
  to_f64.i = dml_dtype_onnx_code(DML_DTYPE_STRING);
  CHECK_ERROR(dml_rt_tensor_op("Cast", &a, 1, &to_f64, 1, &y, 1),
              DML_STATUS_UNIMPLEMENTED, "no eager kernel for Cast of i32 to str");
  CHECK_OK(dml_rt_tensor_free(a));
  CHECK_OK(dml_rt_tensor_free(b));
  if (!strcmp(TEST_GPU, "vulkan")) { /* a device without shaderInt64 */
    setenv("DMLC_VULKAN_HIDE_FEATURES", "shaderInt64", 1);
    dml_rt_device_t *dh = NULL;
    dml_status_t so = dml_rt_device_open(TEST_GPU, &dh);
    unsetenv("DMLC_VULKAN_HIDE_FEATURES");
    CHECK_OK(so);
    if (!so) {
      dml_rt_tensor_t p64, p32, q;
      CHECK_OK(dml_rt_tensor_zeros(dh, DML_DTYPE_I64, 1, d2, &p64));
      CHECK_OK(dml_rt_tensor_zeros(dh, DML_DTYPE_I32, 1, d2, &p32));
      dml_rt_tensor_t pp[2] = {p64, p64}, qq[2] = {p32, p32};
      CHECK_ERROR(dml_rt_tensor_op("Add", pp, 2, NULL, 0, &q, 1),
                  DML_STATUS_UNIMPLEMENTED, "needs the Vulkan feature shaderInt64");
      CHECK_OK(dml_rt_tensor_op("Add", qq, 2, NULL, 0, &q, 1)); /* i32: no feature */
      CHECK_OK(dml_rt_tensor_free(q));
      CHECK_OK(dml_rt_tensor_free(p64));
      CHECK_OK(dml_rt_tensor_free(p32));
      dml_rt_device_close(dh);
    }
    /* without shaderFloat64: an f64 kernel refused naming the feature (the
     * library's f64 rows need it; lavapipe and the NVIDIA GPUs have it) */
    setenv("DMLC_VULKAN_HIDE_FEATURES", "shaderFloat64", 1);
    dh = NULL;
    so = dml_rt_device_open(TEST_GPU, &dh);
    unsetenv("DMLC_VULKAN_HIDE_FEATURES");
    CHECK_OK(so);
    if (!so) {
      dml_rt_tensor_t p64, p32, q;
      CHECK_OK(dml_rt_tensor_zeros(dh, DML_DTYPE_F64, 1, d2, &p64));
      CHECK_OK(dml_rt_tensor_zeros(dh, DML_DTYPE_F32, 1, d2, &p32));
      dml_rt_tensor_t pp[2] = {p64, p64}, qq[2] = {p32, p32};
      CHECK_ERROR(dml_rt_tensor_op("Add", pp, 2, NULL, 0, &q, 1),
                  DML_STATUS_UNIMPLEMENTED, "needs the Vulkan feature shaderFloat64");
      CHECK_OK(dml_rt_tensor_op("Add", qq, 2, NULL, 0, &q, 1));
      CHECK_OK(dml_rt_tensor_free(q));
      CHECK_OK(dml_rt_tensor_free(p64));
      CHECK_OK(dml_rt_tensor_free(p32));
      dml_rt_device_close(dh);
    }
    /* without byte buffers: a bool output refused naming the feature */
    setenv("DMLC_VULKAN_HIDE_FEATURES", "storageBuffer8BitAccess", 1);
    dh = NULL;
    so = dml_rt_device_open(TEST_GPU, &dh);
    unsetenv("DMLC_VULKAN_HIDE_FEATURES");
    CHECK_OK(so);
    if (!so) {
      dml_rt_tensor_t p32, q;
      CHECK_OK(dml_rt_tensor_zeros(dh, DML_DTYPE_I32, 1, d2, &p32));
      dml_rt_tensor_t qq[2] = {p32, p32};
      CHECK_ERROR(dml_rt_tensor_op("Equal", qq, 2, NULL, 0, &q, 1),
                  DML_STATUS_UNIMPLEMENTED,
                  "needs the Vulkan feature storageBuffer8BitAccess");
      CHECK_OK(dml_rt_tensor_op("Add", qq, 2, NULL, 0, &q, 1)); /* no bytes */
      CHECK_OK(dml_rt_tensor_free(q));
      CHECK_OK(dml_rt_tensor_free(p32));
      dml_rt_device_close(dh);
    }
  }
  free(ra);
  free(rb);
}

/* ---- Softmax, LogSoftmax and the data-movement ops ---- */

/* Softmax and LogSoftmax (the compiled path's row kernels): rows of
 * 70,001 (the workgroup-per-row form, past 65,535) with a row of -inf and
 * a row holding a NaN, 5,000 rows of 7 (one invocation per row), the axis
 * not last (moved last and back by the Identity kernel), a transposed
 * view, an empty tensor; against the CPU by the op's tolerance class; f16
 * and bf16 (the f32 kernel between two Casts) within one unit in the last
 * place plus that tolerance. */
static void test_softmax(void) {
  const int64_t L = 70001;
  float *xv = (float *)malloc((size_t)(4 * L) * 4);
  for (int64_t i = 0; i < 4 * L; i++) xv[i] = rnd() * 8;
  for (int64_t i = 0; i < L; i++) xv[i] = -INFINITY; /* row 0: every x -inf */
  xv[L + 17] = NAN;                                  /* row 1: one NaN */
  xv[2 * L + 5] = INFINITY;                          /* row 2: one +inf */
  pair_t big = pair_new(2, D(4, L), xv, 1);
  pair_t small = pair_new(2, D(5000, 7), NULL, 20);
  pair_t x3 = pair_new(3, D(3, 5, 4), NULL, 10);
  pair_t e0 = pair_new(2, D(0, 5), NULL, 1);
  dml_rt_tensor_t tc = DML_RT_TENSOR_NONE, tv = DML_RT_TENSOR_NONE;
  CHECK_OK(dml_rt_tensor_transpose(x3.c, NULL, &tc));
  CHECK_OK(dml_rt_tensor_transpose(x3.v, NULL, &tv));
  dml_attr_t ax;
  memset(&ax, 0, sizeof ax);
  ax.name = "axis";
  ax.kind = DML_ATTR_INT;
  for (int o = 0; o < 2; o++) {
    dml_op_t id = o ? DML_OP_LOG_SOFTMAX : DML_OP_SOFTMAX;
    CHECK(compare(id, &big.c, &big.v, 1, NULL, 0, NULL, "rows of 70,001") == 4 * L);
    ax.i = 0; /* columns of 4: the axis moved last */
    CHECK(compare(id, &big.c, &big.v, 1, &ax, 1, NULL, "[4, 70001] axis 0") == 4 * L);
    CHECK(compare(id, &small.c, &small.v, 1, NULL, 0, NULL, "5,000 rows of 7") ==
          5000 * 7);
    for (int a = -3; a < 3; a++) {
      ax.i = a;
      CHECK(compare(id, &x3.c, &x3.v, 1, &ax, 1, NULL, "[3, 5, 4]") == 60);
      CHECK(compare(id, &tc, &tv, 1, &ax, 1, NULL, "[4, 5, 3] transposed view") == 60);
    }
    CHECK(compare(id, &e0.c, &e0.v, 1, NULL, 0, NULL, "[0, 5]") == 0);
    /* f16 and bf16: through the f32 kernel (one rounding); within one
     * unit in the last place of the CPU's plus the transcendental
     * tolerance (LogSoftmax near 0: x - max - log(sum) cancels) */
    for (int h = 0; h < 2; h++) {
      dml_dtype_t hd = h ? DML_DTYPE_BF16 : DML_DTYPE_F16;
      pair_t xh = typed_pair(hd, 2, D(4, L), xv);
      dml_attr_t to;
      memset(&to, 0, sizeof to);
      to.name = "to";
      to.kind = DML_ATTR_INT;
      to.i = dml_dtype_onnx_code(DML_DTYPE_F32);
      for (int a = -1; a <= 0; a++) {
        ax.i = a;
        dml_rt_tensor_t yc, yv, fc, fv;
        CHECK_OK(dml_rt_tensor_op(dml_op_name(id), &xh.c, 1, &ax, 1, &yc, 1));
        CHECK_OK(dml_rt_tensor_op(dml_op_name(id), &xh.v, 1, &ax, 1, &yv, 1));
        dml_rt_tensor_info_t iv;
        CHECK_OK(dml_rt_tensor_info(yv, &iv));
        CHECK(iv.dtype == hd && iv.device == g_vk);
        CHECK_OK(dml_rt_tensor_op("Cast", &yc, 1, &to, 1, &fc, 1)); /* exact */
        CHECK_OK(dml_rt_tensor_op("Cast", &yv, 1, &to, 1, &fv, 1));
        int64_t nc = 0, nv = 0;
        float *pc = down(fc, &nc), *pv = down(fv, &nv);
        int bad = nc != nv;
        for (int64_t i = 0; i < nc && i < nv; i++) {
          int ok = agree(pv[i], pc[i], id) ||
                   fabs((double)pv[i] - pc[i]) <=
                       (h ? 0x1p-7 : 0x1p-10) * fabs((double)pc[i]) + 4e-6;
          if (!ok && bad++ < 3)
            fprintf(stderr, "%s %s axis %d element %lld: " TEST_GPU " %.9g, cpu %.9g\n",
                    dml_op_name(id), dml_dtype_name(hd), a, (long long)i, pv[i], pc[i]);
        }
        if (bad) g_mismatches++;
        CHECK(bad == 0);
        free(pc);
        free(pv);
        dml_rt_tensor_t all[4] = {yc, yv, fc, fv};
        for (int k = 0; k < 4; k++) CHECK_OK(dml_rt_tensor_free(all[k]));
      }
      pair_free(&xh);
    }
  }
  CHECK_OK(dml_rt_tensor_free(tc));
  CHECK_OK(dml_rt_tensor_free(tv));
  pair_free(&big);
  pair_free(&small);
  pair_free(&x3);
  pair_free(&e0);
  free(xv);
}

/* Runs op on the CPU tensors c[] and the device's v[] and checks the
 * results equal bit for bit (same dtype, dims and bytes): the ops that
 * only move data. */
static void compare_bits(const char *op, const dml_rt_tensor_t *c,
                         const dml_rt_tensor_t *v, uint32_t n, const dml_attr_t *a,
                         uint32_t na, const char *what) {
  dml_rt_tensor_t yc = DML_RT_TENSOR_NONE, yv = DML_RT_TENSOR_NONE;
  CHECK_OK(dml_rt_tensor_op(op, c, n, a, na, &yc, 1));
  CHECK_OK(dml_rt_tensor_op(op, v, n, a, na, &yv, 1));
  if (!yc.id || !yv.id) {
    fprintf(stderr, "%s (%s): no result\n", op, what);
    if (yc.id) CHECK_OK(dml_rt_tensor_free(yc));
    if (yv.id) CHECK_OK(dml_rt_tensor_free(yv));
    return;
  }
  dml_rt_tensor_info_t ic, iv;
  CHECK_OK(dml_rt_tensor_info(yc, &ic));
  CHECK_OK(dml_rt_tensor_info(yv, &iv));
  CHECK(iv.device == g_vk);
  CHECK(ic.dtype == iv.dtype && ic.rank == iv.rank &&
        !memcmp(ic.dims, iv.dims, sizeof(int64_t) * (size_t)ic.rank));
  int64_t nc = 0, nv = 0;
  dml_dtype_t dc, dv;
  void *pc = down_raw(yc, &nc, &dc), *pv = down_raw(yv, &nv, &dv);
  int same = nc == nv && dc == dv && !memcmp(pc, pv, (size_t)nc * dml_dtype_size(dc));
  if (!same) {
    g_mismatches++;
    fprintf(stderr, "%s (%s): " TEST_GPU " differs from the cpu\n", op, what);
  }
  CHECK(same);
  free(pc);
  free(pv);
  CHECK_OK(dml_rt_tensor_free(yc));
  CHECK_OK(dml_rt_tensor_free(yv));
}

static float *edge_values(int64_t n, int shift);

/* An i64 tensor of n values on the CPU and on the device. */
static pair_t i64_pair(uint32_t n, const int64_t *v) {
  dml_tensor_t h;
  memset(&h, 0, sizeof h);
  h.dtype = DML_DTYPE_I64;
  h.rank = 1;
  h.dims[0] = n;
  h.data = (void *)v;
  pair_t r;
  CHECK_OK(dml_rt_tensor_from_host(g_cpu, &h, &r.c));
  CHECK_OK(dml_rt_tensor_from_host(g_vk, &h, &r.v));
  return r;
}

/* Transpose, Slice, Expand and Concat (views copied by the Identity
 * kernel, Concat's spans by the device's copy) bit for bit against the
 * CPU: f32 edge values (NaN, subnormals, -0 kept), i64, u8 and f16; views
 * (transposed, negative steps) as inputs; empty inputs; Concat on every
 * axis; the errors of the shape rules. */
static void test_move(void) {
  static const dml_dtype_t dts[] = {DML_DTYPE_F32, DML_DTYPE_I64, DML_DTYPE_U8,
                                    DML_DTYPE_F16, DML_DTYPE_F64, DML_DTYPE_U16,
                                    DML_DTYPE_U32, DML_DTYPE_U64};
  float *ev = edge_values(2 * 3 * 4 * 5, 3);
  for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++) {
    dml_dtype_t dt = dts[t];
    char what[96];
    pair_t x = typed_pair(dt, 3, D(3, 4, 5), ev);
    pair_t y = typed_pair(dt, 3, D(3, 2, 5), ev + 7);
    pair_t z = typed_pair(dt, 3, D(3, 0, 5), ev);
    pair_t w = typed_pair(dt, 3, D(2, 4, 5), ev + 11);
    pair_t q = typed_pair(dt, 3, D(3, 4, 1), ev + 5);
    /* a reversed, strided view: x[::-1, :, ::2] */
    pair_t xr;
    int64_t st[2] = {-1, 0}, en[2] = {-4, 5}, sp[2] = {-1, 2}, axs[2] = {0, 2};
    CHECK_OK(dml_rt_tensor_slice(x.c, 2, axs, st, en, sp, &xr.c));
    CHECK_OK(dml_rt_tensor_slice(x.v, 2, axs, st, en, sp, &xr.v));
    /* Transpose: default perm, (2, 0, 1), of x and of the view */
    dml_attr_t pa = ints_attr("perm", D(2, 0, 1), 3);
    snprintf(what, sizeof what, "%s [3,4,5]", dml_dtype_name(dt));
    compare_bits("Transpose", &x.c, &x.v, 1, NULL, 0, what);
    compare_bits("Transpose", &x.c, &x.v, 1, &pa, 1, what);
    compare_bits("Transpose", &xr.c, &xr.v, 1, &pa, 1, what);
    compare_bits("Transpose", &z.c, &z.v, 1, &pa, 1, what);
    /* Slice: starts, ends, axes, steps (negative, clamped, i64) */
    pair_t s0 = i64_pair(2, D(-1, 1)), e0 = i64_pair(2, D(-100, 4)),
           a0 = i64_pair(2, D(2, -2)), p0 = i64_pair(2, D(-2, 2));
    dml_rt_tensor_t sc[5] = {x.c, s0.c, e0.c, a0.c, p0.c},
                    sv[5] = {x.v, s0.v, e0.v, a0.v, p0.v};
    compare_bits("Slice", sc, sv, 5, NULL, 0, what);
    compare_bits("Slice", sc, sv, 4, NULL, 0, what); /* steps absent */
    sc[0] = xr.c, sv[0] = xr.v;
    compare_bits("Slice", sc, sv, 5, NULL, 0, what);
    /* Expand: [3,4,1] to [2,3,4,6]; [3,1,5]-like broadcast both ways */
    pair_t sh = i64_pair(4, D(2, 3, 4, 6)), sh2 = i64_pair(2, D(4, 1));
    dml_rt_tensor_t ec[2] = {q.c, sh.c}, evv[2] = {q.v, sh.v};
    compare_bits("Expand", ec, evv, 2, NULL, 0, what);
    ec[1] = sh2.c, evv[1] = sh2.v;
    compare_bits("Expand", ec, evv, 2, NULL, 0, what);
    ec[0] = xr.c, evv[0] = xr.v;
    compare_bits("Expand", ec, evv, 2, NULL, 0, what);
    /* Concat: axis 1 (x, y, the empty z, the view's [3,4,3]... same dims
     * only: x, y, z), axis 0 (x, w), axis 2 (x, q), negative axis */
    dml_attr_t ca;
    memset(&ca, 0, sizeof ca);
    ca.name = "axis";
    ca.kind = DML_ATTR_INT;
    ca.i = 1;
    dml_rt_tensor_t cc[3] = {x.c, y.c, z.c}, cv[3] = {x.v, y.v, z.v};
    compare_bits("Concat", cc, cv, 3, &ca, 1, what);
    ca.i = 0;
    dml_rt_tensor_t cc0[3] = {w.c, x.c, w.c}, cv0[3] = {w.v, x.v, w.v};
    compare_bits("Concat", cc0, cv0, 3, &ca, 1, what);
    ca.i = -1;
    dml_rt_tensor_t cc2[2] = {q.c, x.c}, cv2[2] = {q.v, x.v};
    compare_bits("Concat", cc2, cv2, 2, &ca, 1, what);
    ca.i = 1;
    dml_rt_tensor_t cc3[2] = {z.c, z.c}, cv3[2] = {z.v, z.v};
    compare_bits("Concat", cc3, cv3, 2, &ca, 1, what); /* empty result */
    /* Gather: i64 indices (negative ones too; each within every axis) of
     * rank 1, 2 and 0, i32 indices, on every axis, of x and of the view;
     * no indices */
    static const int64_t iv[6] = {2, -1, 0, 0, 1, -3};
    pair_t g1 = i64_pair(6, iv), g0 = i64_pair(0, iv), g2, gs, g32;
    CHECK_OK(dml_rt_tensor_reshape(g1.c, 2, D(2, 3), &g2.c));
    CHECK_OK(dml_rt_tensor_reshape(g1.v, 2, D(2, 3), &g2.v));
    int64_t one = 1, sa = 0, s1 = 1, e1 = 2;
    CHECK_OK(dml_rt_tensor_slice(g1.c, 1, &sa, &s1, &e1, &one, &gs.c));
    CHECK_OK(dml_rt_tensor_slice(g1.v, 1, &sa, &s1, &e1, &one, &gs.v));
    dml_rt_tensor_t gsc = gs.c, gsv = gs.v; /* [1] -> a scalar */
    CHECK_OK(dml_rt_tensor_reshape(gsc, 0, NULL, &gs.c));
    CHECK_OK(dml_rt_tensor_reshape(gsv, 0, NULL, &gs.v));
    CHECK_OK(dml_rt_tensor_free(gsc));
    CHECK_OK(dml_rt_tensor_free(gsv));
    dml_attr_t cast32;
    memset(&cast32, 0, sizeof cast32);
    cast32.name = "to";
    cast32.kind = DML_ATTR_INT;
    cast32.i = dml_dtype_onnx_code(DML_DTYPE_I32);
    CHECK_OK(dml_rt_tensor_op("Cast", &g2.c, 1, &cast32, 1, &g32.c, 1));
    CHECK_OK(dml_rt_tensor_op("Cast", &g2.v, 1, &cast32, 1, &g32.v, 1));
    pair_t gi[4] = {g1, g2, gs, g32};
    for (int a = -1; a < 3; a++) {
      ca.i = a;
      for (int gk = 0; gk < 4; gk++) {
        dml_rt_tensor_t gc[2] = {x.c, gi[gk].c}, gv[2] = {x.v, gi[gk].v};
        compare_bits("Gather", gc, gv, 2, &ca, 1, what);
        gc[0] = xr.c, gv[0] = xr.v;
        compare_bits("Gather", gc, gv, 2, &ca, 1, what);
      }
    }
    ca.i = 0;
    {
      dml_rt_tensor_t gc[2] = {x.c, g0.c}, gv[2] = {x.v, g0.v};
      compare_bits("Gather", gc, gv, 2, &ca, 1, what); /* no indices */
    }
    pair_free(&g2);
    pair_free(&gs);
    pair_free(&g32);
    pair_free(&g0);
    pair_free(&g1);
    /* the shape rules' errors, as on the CPU */
    dml_rt_tensor_t yv = DML_RT_TENSOR_NONE;
    ca.i = 0;
    dml_status_t e = dml_rt_tensor_op("Concat", cv, 2, &ca, 1, &yv, 1);
    CHECK(e != NULL);
    dml_status_free(e);
    dml_attr_t bad = ints_attr("perm", D(0, 0, 1), 3);
    e = dml_rt_tensor_op("Transpose", &x.v, 1, &bad, 1, &yv, 1);
    CHECK(e != NULL);
    dml_status_free(e);
    pair_t pairs[] = {x, y, z, w, q, xr, s0, e0, a0, p0, sh, sh2};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) pair_free(&pairs[i]);
  }
  free(ev);
}

/* ---- every op of the op table on the device (issue 21's acceptance) ---- */

/* The ops the CPU runs eagerly (on the signatures test_table_ops tries)
 * that the device's eager library does not hold, and why: the one list of
 * them, docs/tensor.md "Not on this device" shows it (none now: CastLike
 * runs as Cast to its second operand's dtype). Any other refusal fails the
 * test; a listed op that runs fails it too. Ends with a NULL op. */
static const struct {
  const char *op, *why;
} k_not_on_device[] = {
    {NULL, NULL},
};

/* The formula table's unary ops (runtime/base/ew_ops.def DML_EW) and their
 * attributes (name, default; a string's second value), read from the
 * table: test_table_ops runs each op with attributes at other values too
 * (the device's kernels take them at dispatch). */
typedef struct ew_attr_spec {
  const char *name;
  double dflt;
  const char *second; /* a two-valued string's second value; NULL: a float */
} ew_attr_spec_t;
static const struct {
  dml_op_t op;
  ew_attr_spec_t a[4]; /* up to DML_EW_MAX_ATTRS, then a NULL name */
} k_ew_attr_ops[] = {
#define DML_EW_ATTR_F(nm, d, nonzero) {nm, d, NULL},
#define DML_EW_ATTR_S(nm, first, sec) {nm, 0, sec},
#define DML_EW(e, attrs, value, grad) {DML_OP_##e, {attrs{NULL, 0, NULL}}},
#include "ew_ops.def"
#undef DML_EW
#undef DML_EW_ATTR_F
#undef DML_EW_ATTR_S
};

/* Op o's attributes at values other than their defaults (floats 1.5 x the
 * default + 0.25, strings their second value) in at[]; their count (0: o
 * is not a table op with attributes). */
static uint32_t ew_other_attrs(dml_op_t o, dml_attr_t at[4]) {
  for (size_t i = 0; i < sizeof k_ew_attr_ops / sizeof k_ew_attr_ops[0]; i++) {
    if (k_ew_attr_ops[i].op != o) continue;
    uint32_t n = 0;
    for (; n < 4 && k_ew_attr_ops[i].a[n].name; n++) {
      const ew_attr_spec_t *sp = &k_ew_attr_ops[i].a[n];
      memset(&at[n], 0, sizeof at[n]);
      at[n].name = sp->name;
      if (sp->second) {
        at[n].kind = DML_ATTR_STRING;
        at[n].s = sp->second;
      } else {
        at[n].kind = DML_ATTR_FLOAT;
        at[n].f = 1.5 * sp->dflt + 0.25;
      }
    }
    return n;
  }
  return 0;
}

static const char *not_on_device(const char *op) {
  for (size_t i = 0; k_not_on_device[i].op; i++)
    if (!strcmp(k_not_on_device[i].op, op)) return k_not_on_device[i].why;
  return NULL;
}

/* n values cycling through every_op's edge values (every_op_edges.h),
 * offset by `shift`. */
static float *edge_values(int64_t n, int shift) {
  float *p = (float *)malloc((size_t)(n > 0 ? n : 1) * 4);
  for (int64_t i = 0; i < n; i++)
    p[i] = eo_edges[(size_t)(i * 7 + i / (int64_t)EO_N_EDGES + shift) % EO_N_EDGES];
  return p;
}

static int g_table_ops, g_table_refused;

/* Runs op `op` on the CPU tensors in[].c and on the device's in[].v and
 * compares. Returns 0 when the CPU refuses these operands (another
 * signature is tried), else 1: the device's refusal fails unless the op is
 * in k_not_on_device; its result must equal the CPU's: integers and bool
 * bit for bit, f16/bf16 within one unit in the last place (compare_typed),
 * f32 by the op's tolerance class (agree; also against the CPU on the
 * inputs with subnormals flushed, `fl`), accumulating ops (acc: reductions,
 * MatMul, Gemm, Conv) within 1e-5 of |cpu| plus the op on the inputs'
 * absolute values. */
static int table_case(const char *op, const pair_t *in, const dml_rt_tensor_t *fl,
                      uint32_t n, const dml_attr_t *a, uint32_t na, int acc,
                      const char *what) {
  dml_rt_tensor_t c[5], v[5], yc = DML_RT_TENSOR_NONE, yv = DML_RT_TENSOR_NONE;
  for (uint32_t j = 0; j < n && j < 5; j++) c[j] = in[j].c, v[j] = in[j].v;
  dml_status_t e = dml_rt_tensor_op(op, c, n, a, na, &yc, 1);
  if (e) {
    dml_status_free(e);
    return 0;
  }
  e = dml_rt_tensor_op(op, v, n, a, na, &yv, 1);
  g_table_ops++;
  if (e) {
    const char *why = not_on_device(op);
    char *m = dml_status_format(e);
    if (why) {
      g_table_refused++;
      printf("  %s (%s): not on " TEST_GPU " (listed: %s)\n", op, what, why);
    } else {
      fprintf(stderr, "%s (%s): the CPU runs it, " TEST_GPU " refuses: %s\n", op, what,
              m ? m : "?");
    }
    CHECK(why != NULL);
    free(m);
    dml_status_free(e);
    CHECK_OK(dml_rt_tensor_free(yc));
    return 1;
  }
  if (not_on_device(op) && !na) { /* listed but runs: the list is stale */
    fprintf(stderr, "%s runs on " TEST_GPU ": drop it from k_not_on_device\n", op);
    CHECK(0);
  }
  dml_rt_tensor_info_t ic, iv;
  CHECK_OK(dml_rt_tensor_info(yc, &ic));
  CHECK_OK(dml_rt_tensor_info(yv, &iv));
  CHECK(ic.dtype == iv.dtype && ic.rank == iv.rank &&
        !memcmp(ic.dims, iv.dims, sizeof(int64_t) * (size_t)ic.rank));
  if (ic.dtype != DML_DTYPE_F32) {
    CHECK_OK(dml_rt_tensor_free(yc));
    CHECK_OK(dml_rt_tensor_free(yv));
    compare_typed(op, c, v, n, a, na, what);
    return 1;
  }
  dml_rt_tensor_t yf = DML_RT_TENSOR_NONE, yl = DML_RT_TENSOR_NONE;
  if (fl) CHECK_OK(dml_rt_tensor_op(op, fl, n, a, na, &yf, 1));
  if (acc) {
    dml_rt_tensor_t ab[5]; /* as c: up to 5 operands (BatchNormalization) */
    CHECK(n <= 5);
    for (uint32_t j = 0; j < n && j < 5; j++)
      CHECK_OK(dml_rt_tensor_op("Abs", &c[j], 1, NULL, 0, &ab[j], 1));
    CHECK_OK(dml_rt_tensor_op(op, ab, n, a, na, &yl, 1));
    for (uint32_t j = 0; j < n && j < 5; j++) CHECK_OK(dml_rt_tensor_free(ab[j]));
  }
  int64_t nc = 0, nv = 0, nf = 0, nl = 0;
  float *pc = down(yc, &nc), *pv = down(yv, &nv), *pf = yf.id ? down(yf, &nf) : NULL,
        *pl = yl.id ? down(yl, &nl) : NULL;
  dml_op_t id = DML_OP_INVALID;
  for (int o = 1; o < DML_OP_COUNT_; o++)
    if (!strcmp(dml_op_name((dml_op_t)o), op)) id = (dml_op_t)o;
  int trig = id == DML_OP_SIN || id == DML_OP_COS || id == DML_OP_TAN;
  float *x0 = NULL;
  int64_t nx = 0;
  if (trig) x0 = down(c[0], &nx);
  int bad = 0;
  for (int64_t i = 0; i < nc && i < nv; i++) {
    if (trig && i < nx && fabsf(x0[i]) > 10) continue;
    int ok = agree(pv[i], pc[i], id) || (pf && i < nf && agree(pv[i], pf[i], id));
    if (!ok && acc && isfinite(pc[i]) && isfinite(pv[i]))
      ok = fabs((double)pv[i] - pc[i]) <=
           1e-5 * (fabs(pc[i]) + (pl && i < nl ? fabs(pl[i]) : 0)) + 1e-30;
    if (!ok && bad++ < 3)
      fprintf(stderr, "%s (%s) element %lld: " TEST_GPU " %.9g, cpu %.9g\n", op, what,
              (long long)i, pv[i], pc[i]);
  }
  if (bad) g_mismatches++;
  CHECK(bad == 0);
  free(pc);
  free(pv);
  free(pf);
  free(pl);
  free(x0);
  dml_rt_tensor_t all[4] = {yc, yv, yf, yl};
  for (int i = 0; i < 4; i++)
    if (all[i].id) CHECK_OK(dml_rt_tensor_free(all[i]));
  return 1;
}

/* Issue 21's acceptance on this device: every elementwise op and reduction
 * of the op table (ops.def's DML_OPF_ELEMENTWISE and DML_OPF_REDUCTION
 * flags; the variadic ops with two operands, Clip with scalar bounds), and
 * MatMul, Gemm, Conv, Softmax, LogSoftmax, Transpose, Slice, Expand, Concat
 * and Gather, on every_op's edge values (binary ops: every pair),
 * run eagerly on the CPU and on the device and compared; the first operand
 * signature the CPU runs (f32; Where's bool condition; bool; u8) is the one
 * the device must run, unless k_not_on_device lists the op. main checks the
 * device's memory back at its start afterwards. */
static void test_table_ops(void) {
  enum { E = (int)EO_N_EDGES };
  static float ga[E * E], gb[E * E], gc[E * E], fa[E * E], fb[E * E], fc[E * E],
      cnd[E * E], u8v[E * E];
  for (int i = 0; i < E; i++)
    for (int j = 0; j < E; j++) {
      ga[i * E + j] = eo_edges[i], gb[i * E + j] = eo_edges[j];
      gc[i * E + j] = eo_edges[(i + j) % E]; /* the variadic ops' third operand */
      fa[i * E + j] = flush(eo_edges[i]), fb[i * E + j] = flush(eo_edges[j]);
      fc[i * E + j] = flush(gc[i * E + j]);
      cnd[i * E + j] = (float)((i + j) % 2);
      u8v[i * E + j] = (float)((i * 3 + j) % 8);
    }
  int64_t dg[2] = {E, E};
  /* signatures: operand dtypes (Where's condition: bool) */
  static const dml_dtype_t sigs[3] = {DML_DTYPE_F32, DML_DTYPE_BOOL, DML_DTYPE_U8};
  int n_ops = 0, n_table = 0;
  for (int o = 1; o < DML_OP_COUNT_; o++) {
    const dml_op_info_t *info = dml_op_info((dml_op_t)o);
    if (!info) continue;
    const char *op = info->name;
    int ew = (info->flags & DML_OPF_ELEMENTWISE) != 0;
    int red = (info->flags & DML_OPF_REDUCTION) != 0;
    int before = g_table_ops;
    if (red) { /* [3, 24] of edges: all axes; axis 1 with keepdims 0 */
      float *xv = edge_values(3 * E, 0), *xf = (float *)malloc(3 * E * 4);
      for (int i = 0; i < 3 * E; i++) xf[i] = flush(xv[i]);
      pair_t x = pair_new(2, D(3, E), xv, 1);
      dml_rt_tensor_t xfl = up(g_cpu, 2, D(3, E), xf);
      dml_attr_t at[2];
      memset(at, 0, sizeof at);
      int arg = o == DML_OP_ARG_MAX || o == DML_OP_ARG_MIN; /* `axis`, default 0 */
      static const int64_t ax1[1] = {1};
      at[0] = ints_attr("axes", ax1, 1);
      if (arg) at[0].name = "axis", at[0].kind = DML_ATTR_INT, at[0].i = 1;
      at[1].name = "keepdims", at[1].kind = DML_ATTR_INT, at[1].i = 0;
      int acc = o != DML_OP_REDUCE_MAX && o != DML_OP_REDUCE_MIN && !arg;
      table_case(op, &x, &xfl, 1, NULL, 0, acc,
                 arg ? "edges [3,24], axis 0" : "edges [3,24], all axes");
      table_case(op, &x, &xfl, 1, at, 2, acc, "edges [3,24], axis 1, keepdims 0");
      pair_free(&x);
      CHECK_OK(dml_rt_tensor_free(xfl));
      free(xv);
      free(xf);
    } else if (ew) {
      uint32_t n = info->max_inputs < 0 ? 2u : (uint32_t)info->max_inputs;
      uint32_t nv = info->max_inputs < 0 ? 3u : n; /* variadic: 1 to 3 operands */
      for (int sg = 0; sg < 3 && g_table_ops == before; sg++) {
        pair_t in[3];
        dml_rt_tensor_t fl[3];
        int has_fl = sigs[sg] == DML_DTYPE_F32;
        for (uint32_t j = 0; j < nv; j++) {
          dml_dtype_t jt = o == DML_OP_WHERE && j == 0 ? DML_DTYPE_BOOL : sigs[sg];
          const float *src = sigs[sg] == DML_DTYPE_U8                    ? u8v
                             : jt == DML_DTYPE_BOOL && o == DML_OP_WHERE ? cnd
                             : j == 2 && nv > n                          ? gc
                             : j % 2                                     ? gb
                                                                         : ga;
          const float *fsrc = j == 2 && nv > n ? fc : j % 2 ? fb : fa;
          int scalar = o == DML_OP_CLIP && j > 0; /* Clip-13's bounds */
          float bound = j == 1 ? -1.0f : 0.5f;
          in[j] = scalar ? typed_pair(jt, 0, dg, &bound) : typed_pair(jt, 2, dg, src);
          if (has_fl) {
            if (jt == DML_DTYPE_F32)
              fl[j] = scalar ? up(g_cpu, 0, dg, &bound) : up(g_cpu, 2, dg, fsrc);
            else
              CHECK_OK(dml_rt_tensor_contiguous(in[j].c, &fl[j]));
          }
        }
        dml_attr_t at;
        memset(&at, 0, sizeof at);
        at.kind = DML_ATTR_INT;
        char what[64];
        snprintf(what, sizeof what, "edge %s, %s", n > 1 ? "pairs" : "values",
                 dml_dtype_name(sigs[sg]));
        /* the default attributes; then Cast's `to` (f16), Mod's fmod = 1 */
        table_case(op, in, has_fl ? fl : NULL, n, NULL, 0, 0, what);
        if (nv > n) { /* the variadic ops' other arities (folded on the device) */
          char w2[96];
          snprintf(w2, sizeof w2, "%s, 3 operands", what);
          table_case(op, in, has_fl ? fl : NULL, 3, NULL, 0, 0, w2);
          snprintf(w2, sizeof w2, "%s, 1 operand", what);
          table_case(op, in, has_fl ? fl : NULL, 1, NULL, 0, 0, w2);
        }
        if (o == DML_OP_SHRINK) { /* lambd and bias, taken at dispatch */
          dml_attr_t sa[2];
          memset(sa, 0, sizeof sa);
          sa[0].name = "lambd", sa[0].kind = DML_ATTR_FLOAT, sa[0].f = 1.0;
          sa[1].name = "bias", sa[1].kind = DML_ATTR_FLOAT, sa[1].f = 0.25;
          char w2[96];
          snprintf(w2, sizeof w2, "%s, lambd 1, bias 0.25", what);
          table_case(op, in, has_fl ? fl : NULL, n, sa, 2, 0, w2);
          sa[0].f = 0.0, sa[1].f = -1.5; /* the boundaries at 0, a negative bias */
          snprintf(w2, sizeof w2, "%s, lambd 0, bias -1.5", what);
          table_case(op, in, has_fl ? fl : NULL, n, sa, 2, 0, w2);
        }
        if (o == DML_OP_BIT_SHIFT) { /* its direction has no default */
          at.name = "direction", at.kind = DML_ATTR_STRING, at.s = "LEFT";
          table_case(op, in, NULL, n, &at, 1, 0, "direction LEFT");
          at.s = "RIGHT";
          table_case(op, in, NULL, n, &at, 1, 0, "direction RIGHT");
          at.kind = DML_ATTR_INT;
        }
        if (o == DML_OP_IS_INF) /* each sign alone */
          for (int k = 0; k < 2; k++) {
            at.name = k ? "detect_negative" : "detect_positive", at.i = 0;
            char w2[96];
            snprintf(w2, sizeof w2, "%s, %s 0", what, at.name);
            table_case(op, in, has_fl ? fl : NULL, n, &at, 1, 0, w2);
          }
        dml_attr_t eat[4];
        uint32_t ne = ew_other_attrs((dml_op_t)o, eat);
        if (ne) { /* the formula table's attributes at other values */
          char w2[160];
          int len = snprintf(w2, sizeof w2, "%s,", what);
          for (uint32_t i = 0; i < ne && len > 0 && (size_t)len < sizeof w2; i++)
            len += eat[i].kind == DML_ATTR_STRING
                       ? snprintf(w2 + len, sizeof w2 - (size_t)len, " %s %s",
                                  eat[i].name, eat[i].s)
                       : snprintf(w2 + len, sizeof w2 - (size_t)len, " %s %g",
                                  eat[i].name, eat[i].f);
          table_case(op, in, has_fl ? fl : NULL, n, eat, ne, 0, w2);
        }
        if (o == DML_OP_CAST || o == DML_OP_MOD) {
          at.name = o == DML_OP_CAST ? "to" : "fmod";
          at.i = o == DML_OP_CAST ? dml_dtype_onnx_code(DML_DTYPE_F16) : 1;
          char w2[96];
          snprintf(w2, sizeof w2, "%s, %s %d", what, at.name, (int)at.i);
          table_case(op, in, has_fl ? fl : NULL, n, &at, 1, 0, w2);
        }
        for (uint32_t j = 0; j < nv; j++) {
          if (has_fl) CHECK_OK(dml_rt_tensor_release(fl[j]));
          pair_free(&in[j]);
        }
      }
    } else if (o == DML_OP_MATMUL || o == DML_OP_GEMM) {
      float *av = edge_values(4 * E, 0), *bv = edge_values(E * 3, 5),
            *cv = edge_values(3, 11);
      pair_t in[3] = {pair_new(2, D(4, E), av, 1), pair_new(2, D(E, 3), bv, 1),
                      pair_new(1, D(3), cv, 1)};
      table_case(op, in, NULL, o == DML_OP_GEMM ? 3u : 2u, NULL, 0, 1,
                 "edges [4,24] x [24,3]");
      for (int j = 0; j < 3; j++) pair_free(&in[j]);
      free(av);
      free(bv);
      free(cv);
    } else if (o == DML_OP_CONV) {
      float *xv = edge_values(2 * 6 * 4, 0), *wv = edge_values(3 * 2 * 3 * 3, 3),
            *bv = edge_values(3, 17);
      pair_t in[3] = {pair_new(4, D(1, 2, 6, 4), xv, 1),
                      pair_new(4, D(3, 2, 3, 3), wv, 1), pair_new(1, D(3), bv, 1)};
      dml_attr_t pads = ints_attr("pads", D(1, 1, 1, 1), 4);
      table_case(op, in, NULL, 3, &pads, 1, 1, "edges X [1,2,6,4], W [3,2,3,3], pads 1");
      for (int j = 0; j < 3; j++) pair_free(&in[j]);
      free(xv);
      free(wv);
      free(bv);
    } else if (o == DML_OP_SOFTMAX || o == DML_OP_LOG_SOFTMAX || o == DML_OP_TRANSPOSE ||
               o == DML_OP_SLICE || o == DML_OP_EXPAND || o == DML_OP_CONCAT ||
               o == DML_OP_GATHER) {
      /* edges [3, 24]; Softmax over each axis, Slice x[1:-1, ::-2] (i64
       * starts, ends, axes, steps), Expand to [2, 3, 24], Concat of x and
       * x on axis 1, Gather of rows 2, -1, 0 */
      float *xv = edge_values(3 * E, 0);
      pair_t in[5] = {pair_new(2, D(3, E), xv, 1), i64_pair(2, D(1, -1)),
                      i64_pair(2, D(-1, INT64_MIN)), i64_pair(2, D(0, 1)),
                      i64_pair(2, D(1, -2))};
      dml_attr_t at;
      memset(&at, 0, sizeof at);
      at.name = "axis";
      at.kind = DML_ATTR_INT;
      if (o == DML_OP_SOFTMAX || o == DML_OP_LOG_SOFTMAX) {
        table_case(op, in, NULL, 1, NULL, 0, 0, "edges [3,24], axis -1");
        table_case(op, in, NULL, 1, &at, 1, 0, "edges [3,24], axis 0");
      } else if (o == DML_OP_TRANSPOSE) {
        table_case(op, in, NULL, 1, NULL, 0, 0, "edges [3,24]");
      } else if (o == DML_OP_SLICE) {
        table_case(op, in, NULL, 5, NULL, 0, 0, "edges [3,24], [1:-1, ::-2]");
      } else if (o == DML_OP_EXPAND) {
        pair_t ex[2] = {in[0], i64_pair(3, D(2, 3, E))};
        table_case(op, ex, NULL, 2, NULL, 0, 0, "edges [3,24] to [2,3,24]");
        pair_free(&ex[1]);
      } else if (o == DML_OP_CONCAT) {
        pair_t cc[2] = {in[0], in[0]};
        at.i = 1;
        table_case(op, cc, NULL, 2, &at, 1, 0, "edges [3,24] twice, axis 1");
      } else {
        pair_t gi[2] = {in[0], i64_pair(3, D(2, -1, 0))};
        table_case(op, gi, NULL, 2, NULL, 0, 0, "edges [3,24], rows 2, -1, 0");
        pair_free(&gi[1]);
      }
      for (int j = 0; j < 5; j++) pair_free(&in[j]);
      free(xv);
    } else {
      continue;
    }
    n_table++;
    if (g_table_ops > before)
      n_ops++;
    else
      printf("  %s: the CPU runs none of the operands tried\n", op);
  }
  printf(
      "%d of the op table's %d elementwise ops, reductions, MatMul, Gemm, Conv, Softmax, "
      "LogSoftmax, Transpose, Slice, Expand, Concat and Gather run "
      "on the cpu and on " TEST_GPU
      " (%d calls, %d refused as listed in "
      "k_not_on_device)\n",
      n_ops, n_table, g_table_ops, g_table_refused);
  CHECK(n_ops == n_table && n_ops >= 86); /* each op of the table ran on the CPU */
}

/* ---- the composed ops (dml_tensor_compose.c, docs/tensor.md "Composed
 * ops") ---- */

/* n random values in [-4, 4) with the edge values eo_edges[first ..
 * first + n_edges - 1] at every `every`-th position from `at`. */
static float *mixed_values(int64_t n, int64_t at, int64_t every, int first, int n_edges) {
  float *p = (float *)malloc((size_t)(n > 0 ? n : 1) * 4);
  for (int64_t i = 0; i < n; i++) p[i] = rnd();
  for (int64_t i = at, k = 0; every > 0 && i < n; i += every, k++)
    p[i] = eo_edges[(size_t)(first + k % n_edges) % EO_N_EDGES];
  return p;
}

/* x's values with subnormals flushed to signed zeros, on the CPU. */
static dml_rt_tensor_t flushed(int32_t rank, const int64_t *dims, const float *v) {
  int64_t n = 1;
  for (int32_t d = 0; d < rank; d++) n *= dims[d];
  float *p = (float *)malloc((size_t)(n > 0 ? n : 1) * 4);
  for (int64_t i = 0; i < n; i++) p[i] = flush(v[i]);
  dml_rt_tensor_t t = up(g_cpu, rank, dims, p);
  free(p);
  return t;
}

/* table_case on inputs in[] (flushed copies of f32 inputs made here),
 * failing when the CPU refuses. */
static void composed_case(const char *op, const pair_t *in, uint32_t n,
                          const dml_attr_t *a, uint32_t na, int acc, const char *what) {
  dml_rt_tensor_t fl[5];
  for (uint32_t j = 0; j < n; j++) {
    fl[j] = DML_RT_TENSOR_NONE;
    dml_rt_tensor_info_t ij;
    CHECK_OK(dml_rt_tensor_info(in[j].c, &ij));
    if (ij.dtype == DML_DTYPE_F32) {
      int64_t cnt = 0;
      float *p = down(in[j].c, &cnt);
      fl[j] = flushed(ij.rank, ij.dims, p);
      free(p);
    } else {
      CHECK_OK(dml_rt_tensor_contiguous(in[j].c, &fl[j]));
    }
  }
  int ran = table_case(op, in, fl, n, a, na, acc, what);
  if (!ran) fprintf(stderr, "%s (%s): the cpu refuses it\n", op, what);
  CHECK(ran);
  for (uint32_t j = 0; j < n; j++) CHECK_OK(dml_rt_tensor_release(fl[j]));
}

/* pair p's tensors transposed (perm NULL: reversed dims), views on both
 * devices; p keeps its own */
static pair_t pair_transposed(pair_t p) {
  pair_t r;
  CHECK_OK(dml_rt_tensor_transpose(p.c, NULL, &r.c));
  CHECK_OK(dml_rt_tensor_transpose(p.v, NULL, &r.v));
  return r;
}

/* pair p's 1-D tensors reversed (a negative-step slice view on both) */
static pair_t pair_reversed(pair_t p) {
  pair_t r;
  const int64_t ax = 0, st = -1, en = INT64_MIN, step = -1;
  CHECK_OK(dml_rt_tensor_slice(p.c, 1, &ax, &st, &en, &step, &r.c));
  CHECK_OK(dml_rt_tensor_slice(p.v, 1, &ax, &st, &en, &step, &r.v));
  return r;
}

/* The fused normalization kernels (dml_eager_lib.h DML_EAGER_NORM) against
 * the CPU beyond test_norm_pool's cases: rows longer than 65,535 elements
 * (the workgroup's strided loops), more rows than 65,535 workgroups (the
 * rows' turns; rows of 3 in the per-row form), x a transposed view, scale and B reversed
 * views and a broadcast [1] scale, no B, an empty x, BatchNormalization of rank 2 (rows
 * of 1) and of rows of 70,001, f16 and bf16 with B; each by the accumulating ops'
 * tolerance. */
static void test_norm_fused(void) {
  float *xl = mixed_values(2 * 70001, 70001, 0, 0, 0);
  float *sl = mixed_values(70001, 0, 0, 0, 0), *bl = mixed_values(70001, 0, 0, 0, 0);
  pair_t l[3] = {pair_new(2, D(2, 70001), xl, 1), pair_new(1, D(70001), sl, 1),
                 pair_new(1, D(70001), bl, 1)};
  composed_case("LayerNormalization", l, 3, NULL, 0, 1, "[2,70001]");
  for (int j = 0; j < 3; j++) pair_free(&l[j]);
  /* 70,000 rows of 3: two turns of 65,535 workgroups; each row's values
   * apart (-2, 0, 2 plus [-1, 1)), so that no row is ill-conditioned (the
   * CPU's f32 rows subtract the mean rounded to f32), an edge value in
   * every 7,919th row */
  float *xr = mixed_values(70000 * 3, 3, 7919, 0, 9);
  for (int64_t i = 0; i < 70000 * 3; i++)
    if ((i - 3) % 7919) xr[i] = rnd() * 0.25f + (float)(i % 3) * 2 - 2;
  pair_t r[3] = {pair_new(2, D(70000, 3), xr, 1), pair_new(1, D(3), sl, 1),
                 pair_new(1, D(3), bl, 1)};
  composed_case("LayerNormalization", r, 3, NULL, 0, 1, "[70000,3]");
  composed_case("LayerNormalization", r, 2, NULL, 0, 1, "[70000,3], no B");
  for (int j = 0; j < 3; j++) pair_free(&r[j]);
  /* rows of 3 take the per-row form (shorter than DML_EAGER_NM_SHORT,
   * test_norm_short); 70,000 rows of 64 the workgroup form's turns */
  float *x64 = (float *)malloc((size_t)70000 * 64 * 4);
  for (int64_t i = 0; i < 70000 * 64; i++)
    x64[i] = i % 9973 == 5 ? eo_edges[(size_t)(i / 9973) % 9]
                           : rnd() * 0.25f + (float)(i % 3) * 2 - 2;
  pair_t r64[3] = {pair_new(2, D(70000, 64), x64, 1), pair_new(1, D(64), sl, 1),
                   pair_new(1, D(64), bl, 1)};
  composed_case("LayerNormalization", r64, 3, NULL, 0, 1, "[70000,64]");
  for (int j = 0; j < 3; j++) pair_free(&r64[j]);
  free(x64);
  /* x a transposed view of [300, 5], scale and B reversed views */
  float *xt = mixed_values(300 * 5, 2, 301, 0, 9);
  pair_t base[3] = {pair_new(2, D(300, 5), xt, 1), pair_new(1, D(300), sl, 1),
                    pair_new(1, D(300), bl, 1)};
  pair_t v[3] = {pair_transposed(base[0]), pair_reversed(base[1]),
                 pair_reversed(base[2])};
  composed_case("LayerNormalization", v, 3, NULL, 0, 1, "[300,5] transposed, reversed");
  /* a [1] scale broadcast over the row */
  pair_t one = pair_new(1, D(1), sl + 5, 1);
  pair_t vb[3] = {v[0], one, v[2]};
  composed_case("LayerNormalization", vb, 3, NULL, 0, 1, "scale [1]");
  /* InstanceNormalization of [1, 5, 300] made of the transposed view, its
   * scale and B reversed views of [5] */
  pair_t p5[2] = {pair_new(1, D(5), sl, 1), pair_new(1, D(5), bl, 1)};
  pair_t iv[3] = {{DML_RT_TENSOR_NONE, DML_RT_TENSOR_NONE},
                  pair_reversed(p5[0]),
                  pair_reversed(p5[1])};
  CHECK_OK(dml_rt_tensor_reshape(v[0].c, 3, D(1, 5, 300), &iv[0].c));
  CHECK_OK(dml_rt_tensor_reshape(v[0].v, 3, D(1, 5, 300), &iv[0].v));
  composed_case("InstanceNormalization", iv, 3, NULL, 0, 1, "[1,5,300] of a view");
  for (int j = 0; j < 3; j++) {
    pair_free(&v[j]);
    pair_free(&base[j]);
    pair_free(&iv[j]);
  }
  for (int j = 0; j < 2; j++) pair_free(&p5[j]);
  pair_free(&one);
  /* an empty x */
  pair_t e[2] = {pair_new(2, D(0, 5), NULL, 1), pair_new(1, D(5), sl, 1)};
  composed_case("LayerNormalization", e, 2, NULL, 0, 1, "[0,5]");
  for (int j = 0; j < 2; j++) pair_free(&e[j]);
  /* BatchNormalization: rank 2 (rows of 1), rows of 70,001; its mean a
   * reversed view */
  float pv[4][3] = {{0.5f, -2.0f, 1.25f},
                    {0.1f, -0.3f, 7.0f},
                    {0.2f, -1.0f, 3.0f},
                    {1.0f, 0.01f, 4.0f}};
  float *bx = mixed_values(4 * 3, 1, 5, 0, 9);
  pair_t b2[5] = {pair_new(2, D(4, 3), bx, 1), pair_new(1, D(3), pv[0], 1),
                  pair_new(1, D(3), pv[1], 1), pair_new(1, D(3), pv[2], 1),
                  pair_new(1, D(3), pv[3], 1)};
  composed_case("BatchNormalization", b2, 5, NULL, 0, 1, "[4,3]");
  pair_t b3[5] = {pair_new(3, D(1, 3, 70001), NULL, 4), b2[1], b2[2],
                  pair_reversed(b2[3]), b2[4]};
  composed_case("BatchNormalization", b3, 5, NULL, 0, 1, "[1,3,70001], mean reversed");
  pair_t i3[3] = {b3[0], b2[1], b2[2]};
  composed_case("InstanceNormalization", i3, 3, NULL, 0, 1, "[1,3,70001]");
  pair_free(&b3[0]);
  pair_free(&b3[3]);
  for (int j = 0; j < 5; j++) pair_free(&b2[j]);
  /* a scale of another dtype than x: refused as the CPU refuses it */
  {
    pair_t hx = typed_pair(DML_DTYPE_F16, 2, D(5, 300), xl),
           fs = pair_new(1, D(300), sl, 1);
    dml_rt_tensor_t y, hv[2] = {hx.v, fs.v};
    CHECK_ERROR(dml_rt_tensor_op("LayerNormalization", hv, 2, NULL, 0, &y, 1),
                DML_STATUS_INVALID_ARGUMENT, "dtype mismatch");
    pair_free(&hx);
    pair_free(&fs);
  }
  /* f16 and bf16 LayerNormalization with B, x holding the edge values */
  static const dml_dtype_t hdt[2] = {DML_DTYPE_F16, DML_DTYPE_BF16};
  float *xh = mixed_values(5 * 300, 300, 97, 0, 10);
  for (int h = 0; h < 2; h++) {
    char w[96];
    snprintf(w, sizeof w, "%s [5,300] with B", dml_dtype_name(hdt[h]));
    pair_t t[3] = {typed_pair(hdt[h], 2, D(5, 300), xh),
                   typed_pair(hdt[h], 1, D(300), sl), typed_pair(hdt[h], 1, D(300), bl)};
    composed_case("LayerNormalization", t, 3, NULL, 0, 1, w);
    for (int j = 0; j < 3; j++) pair_free(&t[j]);
  }
  free(xh);
  free(bx);
  free(xt);
  free(xr);
  free(xl);
  free(sl);
  free(bl);
}

/* The normalization kernels' per-row form (rows shorter than
 * DML_EAGER_NM_SHORT, dml_eager_lib.h DML_EAGER_NM_FORM_PER_ROW: one
 * invocation per row) and the workgroup form around it, against the CPU:
 * LayerNormalization rows of 1, 2, 63, 64 and 65 with the edge values (NaN,
 * +-inf, -0, subnormals) in some rows, InstanceNormalization of spatial
 * extents 1, 2 and 63, BatchNormalization of rows of 1 (rank 2), 2, 63 and
 * 65, 70,000 x 64 rows of 1 (more than 65,535 workgroups of the per-row
 * form: two turns), f16 and bf16 rows of 2 and 63; the library holds both
 * forms of each dtype. */
static void test_norm_short(void) {
  static const dml_dtype_t kdt[3] = {DML_DTYPE_F32, DML_DTYPE_F16, DML_DTYPE_BF16};
  for (int d = 0; d < 3; d++)
    for (int64_t form = 0; form < 4; form++) {
      int have = 0;
      for (uint32_t k = 0; k < dml_eager_spirv_count; k++)
        have |= dml_eager_spirv[k].kind == DML_EAGER_NORM &&
                dml_eager_spirv[k].dtype == (uint32_t)kdt[d] &&
                dml_eager_spirv[k].max_len == form;
      if (!have)
        fprintf(stderr, "no normalization row of %s, form %lld\n", dml_dtype_name(kdt[d]),
                (long long)form);
      CHECK(have);
    }
  static const int64_t lens[5] = {1, 2, 63, 64, 65};
  float *sl = mixed_values(65, 0, 0, 0, 0), *bl = mixed_values(65, 0, 0, 0, 0);
  for (int i = 0; i < 5; i++) {
    const int64_t L = lens[i], R = 37;
    /* rows apart in value (no ill-conditioned row), an edge value (NaN,
     * +-inf, +-0, subnormals, 1e-30: the first 9; the large finite ones
     * overflow the f32 statistics where the CPU's double do not) in every
     * 11th element (whole rows of them for L = 1) */
    float *x = mixed_values(R * L, 3, 11, 0, 9);
    for (int64_t j = 0; j < R * L; j++)
      if ((j - 3) % 11) x[j] = rnd() * 0.25f + (float)(j % 3) * 2 - 2;
    char w[64];
    snprintf(w, sizeof w, "[%lld,%lld]", (long long)R, (long long)L);
    pair_t t[3] = {pair_new(2, D(R, L), x, 1), pair_new(1, D(L), sl, 1),
                   pair_new(1, D(L), bl, 1)};
    composed_case("LayerNormalization", t, 3, NULL, 0, 1, w);
    composed_case("LayerNormalization", t, 2, NULL, 0, 1, w);
    /* BatchNormalization of [37, 1, L]: rows of L, one channel; of [R, L]
     * (rank 2): rows of 1, L channels */
    float pv[4] = {0.75f, -0.5f, 0.25f, 2.0f};
    pair_t bp[4];
    for (int j = 0; j < 4; j++) bp[j] = pair_new(1, D(1), &pv[j], 1);
    pair_t b3[5] = {{DML_RT_TENSOR_NONE, DML_RT_TENSOR_NONE}, bp[0], bp[1], bp[2], bp[3]};
    CHECK_OK(dml_rt_tensor_reshape(t[0].c, 3, D(R, 1, L), &b3[0].c));
    CHECK_OK(dml_rt_tensor_reshape(t[0].v, 3, D(R, 1, L), &b3[0].v));
    composed_case("BatchNormalization", b3, 5, NULL, 0, 1, w);
    pair_t i3[3] = {b3[0], bp[0], bp[1]};
    composed_case("InstanceNormalization", i3, 3, NULL, 0, 1, w);
    pair_free(&b3[0]);
    for (int j = 0; j < 4; j++) pair_free(&bp[j]);
    float *pl = mixed_values(4 * L, 0, 0, 0, 0);
    for (int64_t j = 0; j < L; j++) pl[3 * L + j] = fabsf(pl[3 * L + j]) + 0.5f;
    pair_t b2[5] = {t[0], pair_new(1, D(L), pl, 1), pair_new(1, D(L), pl + L, 1),
                    pair_new(1, D(L), pl + 2 * L, 1), pair_new(1, D(L), pl + 3 * L, 1)};
    composed_case("BatchNormalization", b2, 5, NULL, 0, 1, w);
    for (int j = 1; j < 5; j++) pair_free(&b2[j]);
    free(pl);
    for (int j = 0; j < 3; j++) pair_free(&t[j]);
    /* f16 and bf16 rows (f32 statistics) */
    for (int h = 1; h < 3 && (L == 2 || L == 63); h++) {
      char wh[80];
      snprintf(wh, sizeof wh, "%s %s", dml_dtype_name(kdt[h]), w);
      pair_t th[3] = {typed_pair(kdt[h], 2, D(R, L), x), typed_pair(kdt[h], 1, D(L), sl),
                      typed_pair(kdt[h], 1, D(L), bl)};
      composed_case("LayerNormalization", th, 3, NULL, 0, 1, wh);
      for (int j = 0; j < 3; j++) pair_free(&th[j]);
    }
    free(x);
  }
  /* 70,000 x 64 rows of 1: 4,480,000 rows, 70,000 workgroups of 64 rows,
   * two turns of 65,535 */
  {
    float *x = mixed_values((int64_t)70000 * 64, 5, 9973, 0, 9);
    float *pl = mixed_values(4 * 64, 0, 0, 0, 0);
    for (int j = 0; j < 64; j++) pl[3 * 64 + j] = fabsf(pl[3 * 64 + j]) + 0.5f;
    pair_t b2[5] = {pair_new(2, D(70000, 64), x, 1), pair_new(1, D(64), pl, 1),
                    pair_new(1, D(64), pl + 64, 1), pair_new(1, D(64), pl + 128, 1),
                    pair_new(1, D(64), pl + 192, 1)};
    composed_case("BatchNormalization", b2, 5, NULL, 0, 1, "[70000,64], rows of 1");
    for (int j = 0; j < 5; j++) pair_free(&b2[j]);
    free(pl);
    free(x);
  }
  free(sl);
  free(bl);
}

/* LayerNormalization with its optional outputs Mean and InvStdDev (2 and
 * 3 outputs) on the CPU and the device: the same dims ([.., 1, ..] from
 * `axis` on) and dtype (stash_type's, f32), values within the accumulating
 * ops' tolerance (agree), each also against the CPU on subnormals flushed;
 * Y as the one-output op gives it. */
static void ln_stats_case(const pair_t *in, uint32_t n, const dml_attr_t *a, uint32_t na,
                          uint32_t n_out, const char *what) {
  dml_rt_tensor_t c[3], v[3], fl[3], yc[3], yv[3], yf[3], y1;
  for (uint32_t j = 0; j < n; j++) {
    c[j] = in[j].c, v[j] = in[j].v;
    dml_rt_tensor_info_t ij;
    CHECK_OK(dml_rt_tensor_info(in[j].c, &ij));
    int64_t cnt = 0;
    float *p = down(in[j].c, &cnt);
    fl[j] = flushed(ij.rank, ij.dims, p);
    free(p);
  }
  CHECK_OK(dml_rt_tensor_op("LayerNormalization", c, n, a, na, yc, n_out));
  CHECK_OK(dml_rt_tensor_op("LayerNormalization", fl, n, a, na, yf, n_out));
  CHECK_OK(dml_rt_tensor_op("LayerNormalization", v, n, a, na, yv, n_out));
  CHECK_OK(dml_rt_tensor_op("LayerNormalization", v, n, a, na, &y1, 1));
  int bad = 0;
  for (uint32_t o = 0; o < n_out; o++) {
    dml_rt_tensor_info_t ic, iv;
    CHECK_OK(dml_rt_tensor_info(yc[o], &ic));
    CHECK_OK(dml_rt_tensor_info(yv[o], &iv));
    CHECK(ic.dtype == DML_DTYPE_F32 && iv.dtype == DML_DTYPE_F32 && ic.rank == iv.rank &&
          !memcmp(ic.dims, iv.dims, sizeof(int64_t) * (size_t)ic.rank));
    int64_t nc = 0, nv = 0, nf = 0, n1 = 0;
    float *pc = down(yc[o], &nc), *pv = down(yv[o], &nv), *pf = down(yf[o], &nf);
    float *p1 = o == 0 ? down(y1, &n1) : NULL;
    for (int64_t i = 0; i < nc && i < nv; i++) {
      int ok = agree(pv[i], pc[i], DML_OP_LAYER_NORMALIZATION) ||
               (i < nf && agree(pv[i], pf[i], DML_OP_LAYER_NORMALIZATION));
      if (p1 && i < n1 && memcmp(&p1[i], &pv[i], 4)) ok = 0; /* Y: the op's */
      if (!ok && bad++ < 3)
        fprintf(stderr,
                "LayerNormalization (%s) output %u element %lld: " TEST_GPU
                " %.9g, cpu %.9g\n",
                what, o, (long long)i, pv[i], pc[i]);
    }
    free(pc);
    free(pv);
    free(pf);
    free(p1);
    CHECK_OK(dml_rt_tensor_free(yc[o]));
    CHECK_OK(dml_rt_tensor_free(yf[o]));
    CHECK_OK(dml_rt_tensor_free(yv[o]));
  }
  CHECK_OK(dml_rt_tensor_free(y1));
  for (uint32_t j = 0; j < n; j++) CHECK_OK(dml_rt_tensor_release(fl[j]));
  if (bad) g_mismatches++;
  CHECK(bad == 0);
}

/* LayerNormalization's Mean and InvStdDev (ln_stats_case): rows of 1, 63
 * and 65 with the edge values, axis 1 of a rank-3 x, no B, 2 outputs; an
 * f16 x (f32 statistics: the dtype only, its values by test_dtypes' f16
 * tolerance elsewhere); a stash_type that names no float dtype refused on
 * both devices. */
static void test_ln_stats(void) {
  static const int64_t lens[3] = {1, 63, 65};
  float *sl = mixed_values(65 * 4, 0, 0, 0, 0), *bl = mixed_values(65 * 4, 0, 0, 0, 0);
  for (int i = 0; i < 3; i++) {
    const int64_t L = lens[i], R = 23;
    float *x = mixed_values(R * L, 2, 7, 0, 9); /* test_norm_short's edges */
    char w[64];
    snprintf(w, sizeof w, "[%lld,%lld]", (long long)R, (long long)L);
    pair_t t[3] = {pair_new(2, D(R, L), x, 1), pair_new(1, D(L), sl, 1),
                   pair_new(1, D(L), bl, 1)};
    ln_stats_case(t, 3, NULL, 0, 3, w);
    ln_stats_case(t, 2, NULL, 0, 2, w);
    for (int j = 0; j < 3; j++) pair_free(&t[j]);
    free(x);
  }
  {
    float *x = mixed_values(3 * 4 * 65, 1, 13, 0, 9);
    dml_attr_t ax;
    memset(&ax, 0, sizeof ax);
    ax.name = "axis", ax.kind = DML_ATTR_INT, ax.i = 1;
    pair_t t[3] = {pair_new(3, D(3, 4, 65), x, 1), pair_new(2, D(4, 65), sl, 1),
                   pair_new(1, D(65), bl, 1)};
    ln_stats_case(t, 3, &ax, 1, 3, "[3,4,65] axis 1");
    /* the statistics' dims: [3, 1, 1] */
    dml_rt_tensor_t y[3];
    dml_rt_tensor_t v[3] = {t[0].v, t[1].v, t[2].v};
    CHECK_OK(dml_rt_tensor_op("LayerNormalization", v, 3, &ax, 1, y, 3));
    dml_rt_tensor_info_t im;
    CHECK_OK(dml_rt_tensor_info(y[2], &im));
    CHECK(im.rank == 3 && im.dims[0] == 3 && im.dims[1] == 1 && im.dims[2] == 1);
    for (int o = 0; o < 3; o++) CHECK_OK(dml_rt_tensor_free(y[o]));
    /* stash_type 7 (int64): refused on both */
    dml_attr_t bad[2] = {ax, ax};
    bad[1].name = "stash_type", bad[1].i = 7;
    dml_rt_tensor_t c[3] = {t[0].c, t[1].c, t[2].c};
    CHECK_ERROR(dml_rt_tensor_op("LayerNormalization", c, 3, bad, 2, y, 3),
                DML_STATUS_INVALID_ARGUMENT, "stash_type");
    CHECK_ERROR(dml_rt_tensor_op("LayerNormalization", v, 3, bad, 2, y, 3),
                DML_STATUS_INVALID_ARGUMENT, "stash_type");
    for (int j = 0; j < 3; j++) pair_free(&t[j]);
    free(x);
  }
  { /* f16 x: Y f16, Mean and InvStdDev f32 (stash_type 1) on both */
    float *x = mixed_values(5 * 63, 0, 0, 0, 0);
    pair_t th[2] = {typed_pair(DML_DTYPE_F16, 2, D(5, 63), x),
                    typed_pair(DML_DTYPE_F16, 1, D(63), sl)};
    for (int dev = 0; dev < 2; dev++) {
      dml_rt_tensor_t in[2] = {dev ? th[0].v : th[0].c, dev ? th[1].v : th[1].c}, y[3];
      CHECK_OK(dml_rt_tensor_op("LayerNormalization", in, 2, NULL, 0, y, 3));
      dml_rt_tensor_info_t i0, i1, i2;
      CHECK_OK(dml_rt_tensor_info(y[0], &i0));
      CHECK_OK(dml_rt_tensor_info(y[1], &i1));
      CHECK_OK(dml_rt_tensor_info(y[2], &i2));
      CHECK(i0.dtype == DML_DTYPE_F16 && i1.dtype == DML_DTYPE_F32 &&
            i2.dtype == DML_DTYPE_F32 && i1.rank == 2 && i1.dims[0] == 5 &&
            i1.dims[1] == 1);
      for (int o = 0; o < 3; o++) CHECK_OK(dml_rt_tensor_free(y[o]));
    }
    for (int j = 0; j < 2; j++) pair_free(&th[j]);
    free(x);
  }
  free(sl);
  free(bl);
}

/* RNN, GRU or LSTM `op` with n_out outputs on the CPU (its kernel) and on
 * the device (composed per time step, dml_tensor_compose.c rnn_op): the
 * same dims and dtype, f32 values within the accumulating ops' tolerance
 * (agree, else g_rnn_rel of |cpu| + g_rnn_abs for tiny values). */
static int64_t g_rnn_calls, g_rnn_elems;
/* rnn_case's relative and absolute tolerances, and the largest relative
 * difference seen above the absolute one (test_rnn_acts prints it) */
static const double g_rnn_rel = 2e-5, g_rnn_abs = 4e-6;
static double g_rnn_worst;

static void rnn_case(const char *op, const pair_t *in, uint32_t n, const dml_attr_t *a,
                     uint32_t na, uint32_t n_out, const char *what) {
  g_rnn_calls++;
  dml_rt_tensor_t c[8], v[8], yc[3], yv[3];
  for (uint32_t j = 0; j < n; j++) c[j] = in[j].c, v[j] = in[j].v;
  CHECK_OK(dml_rt_tensor_op(op, c, n, a, na, yc, n_out));
  dml_status_t e = dml_rt_tensor_op(op, v, n, a, na, yv, n_out);
  if (e) {
    char *m = dml_status_format(e);
    fprintf(stderr, "%s (%s): " TEST_GPU " refuses: %s\n", op, what, m ? m : "?");
    free(m);
    dml_status_free(e);
    CHECK(0);
    for (uint32_t o = 0; o < n_out; o++) CHECK_OK(dml_rt_tensor_free(yc[o]));
    return;
  }
  int bad = 0;
  for (uint32_t o = 0; o < n_out; o++) {
    dml_rt_tensor_info_t ic, iv;
    CHECK_OK(dml_rt_tensor_info(yc[o], &ic));
    CHECK_OK(dml_rt_tensor_info(yv[o], &iv));
    CHECK(ic.dtype == iv.dtype && ic.rank == iv.rank &&
          !memcmp(ic.dims, iv.dims, sizeof(int64_t) * (size_t)ic.rank));
    int64_t nc = 0, nv = 0;
    float *pc = down(yc[o], &nc), *pv = down(yv[o], &nv);
    CHECK(nc == nv);
    g_rnn_elems += nc;
    for (int64_t i = 0; i < nc && i < nv; i++) {
      const double dif = fabs((double)pv[i] - pc[i]);
      int ok = agree(pv[i], pc[i], DML_OP_LAYER_NORMALIZATION) ||
               (isfinite(pc[i]) && isfinite(pv[i]) &&
                dif <= g_rnn_rel * fabs(pc[i]) + g_rnn_abs);
      if (isfinite(pc[i]) && isfinite(pv[i]) && dif > g_rnn_abs &&
          dif / fabs(pc[i]) > g_rnn_worst)
        g_rnn_worst = dif / fabs(pc[i]);
      if (!ok && bad++ < 3)
        fprintf(stderr, "%s (%s) output %u element %lld: " TEST_GPU " %.9g, cpu %.9g\n",
                op, what, o, (long long)i, pv[i], pc[i]);
    }
    free(pc);
    free(pv);
    CHECK_OK(dml_rt_tensor_free(yc[o]));
    CHECK_OK(dml_rt_tensor_free(yv[o]));
  }
  if (bad) g_mismatches++;
  CHECK(bad == 0);
}

static dml_attr_t s_attr(const char *name, const char *v) {
  dml_attr_t a;
  memset(&a, 0, sizeof a);
  a.name = name, a.kind = DML_ATTR_STRING, a.s = v;
  return a;
}
static dml_attr_t i_attr(const char *name, int64_t v) {
  dml_attr_t a;
  memset(&a, 0, sizeof a);
  a.name = name, a.kind = DML_ATTR_INT, a.i = v;
  return a;
}
static dml_attr_t f_attr(const char *name, double v) {
  dml_attr_t a;
  memset(&a, 0, sizeof a);
  a.name = name, a.kind = DML_ATTR_FLOAT, a.f = v;
  return a;
}

/* RNN, GRU and LSTM on the device against the CPU (rnn_case): seq 5,
 * batch 3, input 4, hidden 6 (and 70 steps once: the Concat tree), each
 * direction, B, sequence_lens (3, 1 and 0 steps: Y 0 past them, the
 * state kept), initial_h, initial_c, P, clip, GRU's linear_before_reset 0
 * and 1, LSTM's input_forget, layout 0 and 1, 1 to 3 outputs (the
 * other activations: test_rnn_acts). */
static void test_rnn(void) {
  static const char *const ops[3] = {"RNN", "GRU", "LSTM"};
  static const char *const dirs[3] = {"forward", "reverse", "bidirectional"};
  const int64_t S = 5, B = 3, I = 4, H = 6;
  const float lens[3] = {3, 1, 0};
  for (int k = 0; k < 3; k++) {
    const int64_t G = k == 0 ? 1 : k == 1 ? 3 : 4;
    for (int di = 0; di < 3; di++)
      for (int layout = 0; layout < 2; layout++) {
        const int64_t D = di == 2 ? 2 : 1;
        pair_t p[8];
        p[0] =
            layout ? pair_new(3, D(B, S, I), NULL, 4) : pair_new(3, D(S, B, I), NULL, 4);
        p[1] = pair_new(3, D(D, G * H, I), NULL, 2);
        p[2] = pair_new(3, D(D, G * H, H), NULL, 2);
        p[3] = pair_new(2, D(D, 2 * G * H), NULL, 2);
        p[4] = typed_pair(DML_DTYPE_I32, 1, D(B), lens);
        p[5] =
            layout ? pair_new(3, D(B, D, H), NULL, 4) : pair_new(3, D(D, B, H), NULL, 4);
        p[6] =
            layout ? pair_new(3, D(B, D, H), NULL, 4) : pair_new(3, D(D, B, H), NULL, 4);
        p[7] = pair_new(2, D(D, 3 * H), NULL, 2);
        const uint32_t n_in = k == 2 ? 8 : 6, n_out = k == 2 ? 3 : 2;
        dml_attr_t a[5] = {s_attr("direction", dirs[di]), i_attr("layout", layout),
                           i_attr("hidden_size", H), f_attr("clip", 0.9),
                           i_attr(k == 1 ? "linear_before_reset" : "input_forget", 1)};
        char w[96];
        snprintf(w, sizeof w, "%s, layout %d", dirs[di], layout);
        /* X, W, R only; Y only */
        rnn_case(ops[k], p, 3, a, 3, 1, w);
        /* every input, every output */
        snprintf(w, sizeof w, "%s, layout %d, every input", dirs[di], layout);
        rnn_case(ops[k], p, n_in, a, 3, n_out, w);
        /* clip, linear_before_reset / input_forget (RNN: clip only) */
        snprintf(w, sizeof w, "%s, layout %d, clip%s", dirs[di], layout,
                 k == 1   ? ", linear_before_reset"
                 : k == 2 ? ", input_forget"
                          : "");
        rnn_case(ops[k], p, n_in, a, k ? 5 : 4, n_out, w);
        /* no sequence_lens, B or P: absent inputs */
        pair_t q[8];
        memcpy(q, p, sizeof q);
        q[3].c = q[3].v = q[4].c = q[4].v = q[7].c = q[7].v = DML_RT_TENSOR_NONE;
        snprintf(w, sizeof w, "%s, layout %d, initial states only", dirs[di], layout);
        rnn_case(ops[k], q, n_in, a, 3, n_out, w);
        for (int j = 0; j < 8; j++) pair_free(&p[j]);
      }
  }
  /* 70 steps: the steps' rows concatenated in a tree of Concats */
  {
    pair_t p[3] = {pair_new(3, D(70, 2, 3), NULL, 4), pair_new(3, D(1, 9, 3), NULL, 2),
                   pair_new(3, D(1, 9, 3), NULL, 2)};
    rnn_case("GRU", p, 3, NULL, 0, 2, "70 steps");
    for (int j = 0; j < 3; j++) pair_free(&p[j]);
  }
  /* an activation ONNX does not list: refused on both, as the CPU words it */
  {
    pair_t p[3] = {pair_new(3, D(S, B, I), NULL, 4), pair_new(3, D(1, H, I), NULL, 2),
                   pair_new(3, D(1, H, H), NULL, 2)};
    const char *swish[1] = {"Swish"};
    dml_attr_t a;
    memset(&a, 0, sizeof a);
    a.name = "activations", a.kind = DML_ATTR_STRINGS, a.strings = swish, a.n = 1;
    dml_rt_tensor_t c[3] = {p[0].c, p[1].c, p[2].c}, v[3] = {p[0].v, p[1].v, p[2].v}, y;
    CHECK_ERROR(dml_rt_tensor_op("RNN", c, 3, &a, 1, &y, 1), DML_STATUS_UNIMPLEMENTED,
                "activation 'Swish' is not supported");
    CHECK_ERROR(dml_rt_tensor_op("RNN", v, 3, &a, 1, &y, 1), DML_STATUS_UNIMPLEMENTED,
                "activation 'Swish' is not supported");
    a.n = 2; /* two for one direction */
    const char *two[2] = {"Relu", "Tanh"};
    a.strings = two;
    CHECK_ERROR(dml_rt_tensor_op("RNN", v, 3, &a, 1, &y, 1), DML_STATUS_INVALID_ARGUMENT,
                "activations has 2 entries, expected 1");
    /* W of the wrong shape: refused on both */
    pair_t wb = pair_new(3, D(1, H + 1, I), NULL, 2);
    dml_rt_tensor_t cb[3] = {p[0].c, wb.c, p[2].c}, vb[3] = {p[0].v, wb.v, p[2].v};
    CHECK_ERROR(dml_rt_tensor_op("RNN", cb, 3, NULL, 0, &y, 1),
                DML_STATUS_INVALID_ARGUMENT, "");
    CHECK_ERROR(dml_rt_tensor_op("RNN", vb, 3, NULL, 0, &y, 1),
                DML_STATUS_INVALID_ARGUMENT, "");
    pair_free(&wb);
    for (int j = 0; j < 3; j++) pair_free(&p[j]);
  }
  printf("RNN, GRU, LSTM: %lld calls compared on the cpu and on " TEST_GPU
         " (%lld output elements)\n",
         (long long)g_rnn_calls, (long long)g_rnn_elems);
}

/* RNN, GRU and LSTM with the activations ONNX lists (dml_tensor_compose.c
 * rnn_apply) against the CPU's kernel (rnn_case): every one of the 11 as
 * RNN's f in each direction (bidirectional: a second one for the reverse
 * direction), alpha and beta from activation_alpha/activation_beta taken
 * in order by the activations that take them (missing ones: the ONNX op's
 * defaults), with B and initial_h, and with clip; GRU's f and g and LSTM's
 * f, g and h in mixes of them, one list for both directions or one per
 * direction. X and initial_h in [-1, 1], W and B in [-0.5, 0.5], R in
 * [-0.25, 0.25]: with unbounded gate activations (LeakyRelu, Affine, Elu
 * as GRU's z: (1 - z) h~ + z h) larger values make the recurrence expand,
 * and the CPU's per-step double arithmetic (one rounding) and the
 * composition's f32 rounding per op then part by up to 2e-2 after 5 steps
 * (seen with X in [-4, 4], R in [-2, 2]); with these, within rnn_case's
 * tolerance (2e-5 of |cpu| + 4e-6) over 14 seeds tried. The random
 * sequence is put back after these cases. */
static void test_rnn_acts(void) {
  static const char *const names[11] = {
      "Tanh",       "Relu",        "Sigmoid", "Affine",   "LeakyRelu", "ThresholdedRelu",
      "ScaledTanh", "HardSigmoid", "Elu",     "Softsign", "Softplus"};
  static const char *const dirs[3] = {"forward", "reverse", "bidirectional"};
  static const double alpha[4] = {0.7, 0.3, 1.4, 0.2}, beta[4] = {0.4, -0.2, 0.6, 0.1};
  const int64_t S = 5, B = 3, I = 4, H = 6;
  const int64_t before = g_rnn_calls;
  const uint32_t rng_saved = g_rng;
  g_rnn_worst = 0;
  dml_attr_t a[6];
  memset(a, 0, sizeof a);
  a[1].name = "activation_alpha", a[1].kind = DML_ATTR_FLOATS, a[1].floats = alpha;
  a[2].name = "activation_beta", a[2].kind = DML_ATTR_FLOATS, a[2].floats = beta;
  a[0].name = "activations", a[0].kind = DML_ATTR_STRINGS;
  for (int di = 0; di < 3; di++) {
    const int64_t D = di == 2 ? 2 : 1;
    a[3].name = "direction", a[3].kind = DML_ATTR_STRING, a[3].s = dirs[di];
    a[4].name = "clip", a[4].kind = DML_ATTR_FLOAT, a[4].f = 1.5;
    pair_t x = pair_new(3, D(S, B, I), NULL, 1), h0 = pair_new(3, D(D, B, H), NULL, 1);
    for (int k = 0; k < 3; k++) {
      const int64_t G = k == 0 ? 1 : k == 1 ? 3 : 4, nact = k == 0 ? 1 : k == 1 ? 2 : 3;
      pair_t p[8] = {x,
                     pair_new(3, D(D, G * H, I), NULL, 0.5f),
                     pair_new(3, D(D, G * H, H), NULL, 0.25f),
                     pair_new(2, D(D, 2 * G * H), NULL, 0.5f),
                     {DML_RT_TENSOR_NONE, DML_RT_TENSOR_NONE},
                     h0};
      const char *list[6];
      const int rounds = k == 0 ? 11 : 4;
      for (int t = 0; t < rounds; t++) {
        /* RNN: names[t] (reverse direction: another); GRU, LSTM: a mix */
        for (int j = 0; j < 6; j++) list[j] = names[(t + j * 4 + k * 3) % 11];
        if (k == 0) list[0] = names[t];
        const size_t n = (size_t)(nact * D);
        a[0].strings = list, a[0].n = n;
        a[1].n = (size_t)(t % 2 ? 4 : 1), a[2].n = (size_t)(t % 3 ? 4 : 0);
        char w[160];
        int at = snprintf(w, sizeof w, "%s, %s:", dirs[di], k == 0 ? "RNN" : "mix");
        for (size_t j = 0; j < n && at > 0 && at < (int)sizeof w; j++)
          at += snprintf(w + at, sizeof w - (size_t)at, " %s", list[j]);
        const char *op = k == 0 ? "RNN" : k == 1 ? "GRU" : "LSTM";
        rnn_case(op, p, 6, a, 4, 2, w);
        if (t % 4 == 0) { /* with clip; one list for both directions */
          if (D == 2) a[0].n = (size_t)nact;
          rnn_case(op, p, 3, a, 5, 1, w);
        }
      }
      for (int j = 1; j < 4; j++) pair_free(&p[j]);
    }
    pair_free(&x);
    pair_free(&h0);
  }
  /* f64: the CPU runs LeakyRelu; the library has no f64 LeakyRelu kernel,
   * so the device refuses it with that op's error */
  {
    float xf[2 * 1 * 2], wf[1 * 2 * 2], rf[1 * 2 * 2];
    for (int i = 0; i < 4; i++)
      xf[i] = (float)i / 4 - 0.3f, wf[i] = 0.5f - (float)i / 8, rf[i] = (float)i / 16;
    pair_t p[3] = {typed_pair(DML_DTYPE_F64, 3, D(2, 1, 2), xf),
                   typed_pair(DML_DTYPE_F64, 3, D(1, 2, 2), wf),
                   typed_pair(DML_DTYPE_F64, 3, D(1, 2, 2), rf)};
    const char *lr[1] = {"LeakyRelu"};
    a[0].strings = lr, a[0].n = 1;
    dml_rt_tensor_t c[3] = {p[0].c, p[1].c, p[2].c}, v[3] = {p[0].v, p[1].v, p[2].v}, y;
    CHECK_OK(dml_rt_tensor_op("RNN", c, 3, a, 1, &y, 1));
    CHECK_OK(dml_rt_tensor_free(y));
    CHECK_ERROR(dml_rt_tensor_op("RNN", v, 3, a, 1, &y, 1), DML_STATUS_UNIMPLEMENTED,
                "no eager kernel for LeakyRelu of f64");
    for (int j = 0; j < 3; j++) pair_free(&p[j]);
  }
  printf("RNN activations: %lld calls compared on the cpu and on " TEST_GPU
         " (largest relative difference of those above 4e-6: %.3g)\n",
         (long long)(g_rnn_calls - before), g_rnn_worst);
  g_rng = rng_saved;
}

/* GatherND's eager result on the CPU device (composed of Gather) against
 * the CPU's own GatherND kernel (dml_cpu_run), byte for byte. */
static void gather_nd_kernel_ref(dml_rt_tensor_t x, dml_rt_tensor_t ind, int64_t b,
                                 dml_rt_tensor_t y, const char *what) {
  dml_tensor_t t[3];
  void *buf[3];
  dml_rt_tensor_t all[3] = {x, ind, y};
  for (int i = 0; i < 3; i++) {
    dml_rt_tensor_info_t info;
    int64_t n = 0;
    dml_dtype_t dt;
    CHECK_OK(dml_rt_tensor_info(all[i], &info));
    buf[i] = down_raw(all[i], &n, &dt);
    memset(&t[i], 0, sizeof t[i]);
    t[i].dtype = info.dtype;
    t[i].rank = info.rank;
    memcpy(t[i].dims, info.dims, sizeof t[i].dims);
    t[i].data = buf[i];
  }
  size_t bytes = dml_tensor_bytes(&t[2]);
  void *ref = calloc(bytes ? bytes : 1, 1);
  dml_tensor_t yr = t[2];
  yr.data = ref;
  dml_attr_t a;
  memset(&a, 0, sizeof a);
  a.name = "batch_dims", a.kind = DML_ATTR_INT, a.i = b;
  dml_cpu_call_t call;
  memset(&call, 0, sizeof call);
  call.op = DML_OP_GATHER_ND;
  call.inputs = t;
  call.n_inputs = 2;
  call.outputs = &yr;
  call.n_outputs = 1;
  call.attrs = &a;
  call.n_attrs = 1;
  CHECK_OK(dml_cpu_run(&call));
  int same = !memcmp(ref, buf[2], bytes);
  if (!same)
    fprintf(stderr, "GatherND (%s): the eager op differs from the kernel\n", what);
  CHECK(same);
  free(ref);
  for (int i = 0; i < 3; i++) free(buf[i]);
}

/* GatherND on the CPU (composed) against the CPU's kernel and on the GPU
 * against the CPU, bit for bit; ScatterND (the CPU's kernel) on the GPU
 * against the CPU. */
static void nd_case(const char *op, pair_t x, pair_t ind, const pair_t *upd, int64_t b,
                    const char *what) {
  dml_attr_t a;
  memset(&a, 0, sizeof a);
  a.name = "batch_dims", a.kind = DML_ATTR_INT, a.i = b;
  int g = !strcmp(op, "GatherND");
  dml_rt_tensor_t c[3] = {x.c, ind.c, upd ? upd->c : DML_RT_TENSOR_NONE},
                  v[3] = {x.v, ind.v, upd ? upd->v : DML_RT_TENSOR_NONE};
  compare_typed(op, c, v, g ? 2u : 3u, &a, g && b ? 1u : 0u, what);
  if (g) {
    dml_rt_tensor_t y;
    CHECK_OK(dml_rt_tensor_op(op, c, 2, &a, 1, &y, 1));
    gather_nd_kernel_ref(x.c, ind.c, b, y, what);
    CHECK_OK(dml_rt_tensor_free(y));
  }
}

/* GatherND (batch_dims 0 and 1, tuples of 1 to rank indices, negative
 * indices, i32 indices, f32 edge values, i64, u8 and f16 data, a transposed
 * view, empty indices) and ScatterND (duplicate indices: the last update
 * wins, as on the CPU; negative indices, slices, i64 data, a view); the
 * errors: an index out of range OUT_OF_RANGE naming the op and the index,
 * shapes (the reductions: test_scatter_red). */
static void test_nd(void) {
  float *xv = mixed_values(5 * 4 * 3, 0, 1, 0, EO_N_EDGES); /* every edge */
  pair_t x = pair_new(3, D(5, 4, 3), xv, 1);
  static const int64_t i2[] = {0, 1, -1, -2, 2, 3, 1, 0}, i1[] = {4, -5, 2};
  pair_t ind2 = i64_pair(8, i2), ind1 = i64_pair(3, i1);
  pair_t t2 = {DML_RT_TENSOR_NONE, DML_RT_TENSOR_NONE}, t1 = t2;
  CHECK_OK(dml_rt_tensor_reshape(ind2.c, 2, D(4, 2), &t2.c));
  CHECK_OK(dml_rt_tensor_reshape(ind2.v, 2, D(4, 2), &t2.v));
  CHECK_OK(dml_rt_tensor_reshape(ind1.c, 2, D(3, 1), &t1.c));
  CHECK_OK(dml_rt_tensor_reshape(ind1.v, 2, D(3, 1), &t1.v));
  nd_case("GatherND", x, t2, NULL, 0, "[5,4,3] by [4,2]");
  nd_case("GatherND", x, t1, NULL, 0, "[5,4,3] by [3,1]");
  /* whole elements: [2, 3] tuples of 3 */
  static const int64_t i3[] = {0, 0, 0, 4, 3, 2, -1, -1, -1, 2, 1, 0, 1, 2, 1, 3, 0, 2};
  pair_t ind3 = i64_pair(18, i3), t3;
  CHECK_OK(dml_rt_tensor_reshape(ind3.c, 3, D(2, 3, 3), &t3.c));
  CHECK_OK(dml_rt_tensor_reshape(ind3.v, 3, D(2, 3, 3), &t3.v));
  nd_case("GatherND", x, t3, NULL, 0, "[5,4,3] by [2,3,3]");
  /* batch_dims 1: data [5, 4, 3], indices [5, 1] */
  static const int64_t ib[] = {3, 0, -1, 2, 1};
  pair_t indb = i64_pair(5, ib), tb;
  CHECK_OK(dml_rt_tensor_reshape(indb.c, 2, D(5, 1), &tb.c));
  CHECK_OK(dml_rt_tensor_reshape(indb.v, 2, D(5, 1), &tb.v));
  nd_case("GatherND", x, tb, NULL, 1, "[5,4,3] by [5,1], batch_dims 1");
  /* i32 indices, a transposed view of x */
  pair_t i32p = {DML_RT_TENSOR_NONE, DML_RT_TENSOR_NONE};
  dml_attr_t to;
  memset(&to, 0, sizeof to);
  to.name = "to", to.kind = DML_ATTR_INT, to.i = 6; /* INT32 */
  CHECK_OK(dml_rt_tensor_op("Cast", &t2.c, 1, &to, 1, &i32p.c, 1));
  CHECK_OK(dml_rt_tensor_op("Cast", &t2.v, 1, &to, 1, &i32p.v, 1));
  pair_t xt = pair_transposed(x); /* [3, 4, 5] */
  nd_case("GatherND", xt, i32p, NULL, 0, "transposed [3,4,5] by i32 [4,2]");
  /* i64, u8 and f16 data */
  static const dml_dtype_t dts[3] = {DML_DTYPE_I64, DML_DTYPE_U8, DML_DTYPE_F16};
  for (int d = 0; d < 3; d++) {
    char w[64];
    snprintf(w, sizeof w, "%s [5,4,3] by [4,2]", dml_dtype_name(dts[d]));
    pair_t tx = typed_pair(dts[d], 3, D(5, 4, 3), xv);
    nd_case("GatherND", tx, t2, NULL, 0, w);
    /* ScatterND of the same dtype: rows 1 and -4 (the same row: the
     * second update wins) and 0 */
    static const int64_t is[] = {1, -4, 0};
    pair_t sind = i64_pair(3, is), st;
    CHECK_OK(dml_rt_tensor_reshape(sind.c, 2, D(3, 1), &st.c));
    CHECK_OK(dml_rt_tensor_reshape(sind.v, 2, D(3, 1), &st.v));
    float uv[36];
    for (int i = 0; i < 36; i++) uv[i] = (float)(i * 3 % 17) - 5.0f;
    pair_t up = typed_pair(dts[d], 3, D(3, 4, 3), uv);
    snprintf(w, sizeof w, "%s [5,4,3] at [3,1], a duplicate row", dml_dtype_name(dts[d]));
    nd_case("ScatterND", tx, st, &up, 0, w);
    pair_free(&up);
    pair_free(&st);
    pair_free(&sind);
    pair_free(&tx);
  }
  /* ScatterND of f32 edge values: single elements (tuples of 3) and a
   * transposed data */
  float uv[6] = {1.5f, -2.0f, 0.0f, -0.0f, 1e30f, -3.25f};
  pair_t u6 = pair_new(2, D(2, 3), uv, 1);
  nd_case("ScatterND", x, t3, &u6, 0, "[5,4,3] at [2,3,3]");
  pair_t u2 = pair_new(3, D(4, 5, 1), NULL, 4);
  pair_t ux = {DML_RT_TENSOR_NONE, DML_RT_TENSOR_NONE};
  CHECK_OK(dml_rt_tensor_reshape(u2.c, 2, D(4, 5), &ux.c));
  CHECK_OK(dml_rt_tensor_reshape(u2.v, 2, D(4, 5), &ux.v));
  nd_case("ScatterND", xt, t2, &ux, 0, "transposed [3,4,5] at [4,2]");
  /* empty indices: [0, 2] gives [0, 3] */
  pair_t e0 = pair_new(2, D(0, 2), NULL, 1), ei;
  CHECK_OK(dml_rt_tensor_op("Cast", &e0.c, 1,
                            &(dml_attr_t){.name = "to", .kind = DML_ATTR_INT, .i = 7}, 1,
                            &ei.c, 1));
  CHECK_OK(dml_rt_tensor_op("Cast", &e0.v, 1,
                            &(dml_attr_t){.name = "to", .kind = DML_ATTR_INT, .i = 7}, 1,
                            &ei.v, 1));
  nd_case("GatherND", x, ei, NULL, 0, "[5,4,3] by [0,2]");
  /* the errors, on both devices */
  static const int64_t bad[] = {0, 1, 5, 0};
  pair_t ibad = i64_pair(4, bad), tbad;
  CHECK_OK(dml_rt_tensor_reshape(ibad.c, 2, D(2, 2), &tbad.c));
  CHECK_OK(dml_rt_tensor_reshape(ibad.v, 2, D(2, 2), &tbad.v));
  dml_rt_tensor_t y, in[3];
  for (int dv = 0; dv < 2; dv++) {
    in[0] = dv ? x.v : x.c, in[1] = dv ? tbad.v : tbad.c;
    CHECK_ERROR(dml_rt_tensor_op("GatherND", in, 2, NULL, 0, &y, 1),
                DML_STATUS_OUT_OF_RANGE,
                "index 5 (at position 2) is out of range [-5, 4]");
    in[2] = dv ? u6.v : u6.c;
    CHECK_ERROR(dml_rt_tensor_op("ScatterND", in, 3, NULL, 0, &y, 1),
                DML_STATUS_OUT_OF_RANGE, "index 5 (at position 2)");
    in[1] = dv ? t1.v : t1.c;
    dml_attr_t bd;
    memset(&bd, 0, sizeof bd);
    bd.name = "batch_dims", bd.kind = DML_ATTR_INT, bd.i = 2;
    CHECK_ERROR(dml_rt_tensor_op("GatherND", in, 2, &bd, 1, &y, 1),
                DML_STATUS_INVALID_ARGUMENT, "batch_dims 2 must be below both ranks");
  }
  pair_t frees[] = {x,    ind2, ind1, t2, t1, ind3, t3, indb, tb,
                    i32p, xt,   u6,   u2, ux, e0,   ei, ibad, tbad};
  for (size_t i = 0; i < sizeof frees / sizeof frees[0]; i++) pair_free(&frees[i]);
  free(xv);
}

/* Values for the scatter reductions and TopK: NaN, +-inf, +-0, huge,
 * tiny normal and ordinary values, ties (no subnormals: a GPU may flush
 * them in Add and Mul, which the CPU does not). */
static const float k_sc_edges[] = {NAN,    INFINITY, -INFINITY, 0.0f,   -0.0f, 1e30f,
                                   -1e30f, 1e-30f,   3e38f,     -3e38f, 1.0f,  -1.0f,
                                   0.5f,   2.0f,     -2.0f,     88.0f,  1.0f,  -0.0f};
#define SC_N (sizeof k_sc_edges / sizeof k_sc_edges[0])

static float *sc_values(int64_t n, int shift) {
  float *p = (float *)malloc((size_t)(n > 0 ? n : 1) * 4);
  for (int64_t i = 0; i < n; i++)
    p[i] = i % 3 == 2 ? (float)((i * 7 + shift) % 9) - 4.0f /* ties */
                      : k_sc_edges[(size_t)(i * 5 + i / (int64_t)SC_N + shift) % SC_N];
  return p;
}

static dml_attr_t int_attr_t(const char *name, int64_t v) {
  dml_attr_t a;
  memset(&a, 0, sizeof a);
  a.name = name, a.kind = DML_ATTR_INT, a.i = v;
  return a;
}

static dml_attr_t str_attr(const char *name, const char *v) {
  dml_attr_t a;
  memset(&a, 0, sizeof a);
  a.name = name, a.kind = DML_ATTR_STRING, a.s = v;
  return a;
}

static pair_t i64_shaped(int32_t rank, const int64_t *dims, const int64_t *v) {
  int64_t n = 1;
  for (int32_t d = 0; d < rank; d++) n *= dims[d];
  pair_t f = i64_pair((uint32_t)n, v), r;
  CHECK_OK(dml_rt_tensor_reshape(f.c, rank, dims, &r.c));
  CHECK_OK(dml_rt_tensor_reshape(f.v, rank, dims, &r.v));
  pair_free(&f);
  return r;
}

/* ScatterND's and ScatterElements' reductions on the GPU against the CPU's
 * kernels: duplicate indices (a row hit 4 times, negative forms of the
 * same row; a row hit 40 times), every reduction, f32 edge values (bit for bit: the CPU's
 * order of roundings), i64, u8, i32, f16 (one unit in the last place),
 * bool, a transposed data, empty updates; the errors (an index out of
 * range, an unknown reduction) on both devices. */
static void test_scatter_red(void) {
  static const char *const reds[] = {"none", "add", "mul", "max", "min"};
  float *xv = sc_values(5 * 4 * 3, 0), *uv = sc_values(6 * 4 * 3, 7);
  static const int64_t rows[] = {1, -4, 0, 1, 4, 1}; /* row 1 four times */
  pair_t ind = i64_shaped(2, D(6, 1), rows);
  static const int64_t el[] = {0, 0, 0, 4, 3, 2, -5, -4, -3, 0, 0, 0, 4, 3, 2, 0, 0, 0};
  pair_t ind3 = i64_shaped(2, D(6, 3), el); /* element [0,0,0] three times */
  static const dml_dtype_t dts[] = {DML_DTYPE_F32, DML_DTYPE_I64, DML_DTYPE_U8,
                                    DML_DTYPE_I32, DML_DTYPE_F16, DML_DTYPE_BOOL};
  for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
    pair_t x = typed_pair(dts[d], 3, D(5, 4, 3), xv);
    pair_t u = typed_pair(dts[d], 3, D(6, 4, 3), uv);
    pair_t u1 = typed_pair(dts[d], 1, D(6), uv + 11);
    for (size_t k = 0; k < sizeof reds / sizeof reds[0]; k++) {
      dml_attr_t a = str_attr("reduction", reds[k]);
      char w[96];
      dml_rt_tensor_t c[3] = {x.c, ind.c, u.c}, v[3] = {x.v, ind.v, u.v};
      snprintf(w, sizeof w, "%s [5,4,3] at [6,1], %s", dml_dtype_name(dts[d]), reds[k]);
      compare_typed("ScatterND", c, v, 3, &a, 1, w);
      dml_rt_tensor_t c3[3] = {x.c, ind3.c, u1.c}, v3[3] = {x.v, ind3.v, u1.v};
      snprintf(w, sizeof w, "%s [5,4,3] at [6,3], %s", dml_dtype_name(dts[d]), reds[k]);
      compare_typed("ScatterND", c3, v3, 3, &a, 1, w);
    }
    pair_free(&x);
    pair_free(&u);
    pair_free(&u1);
  }
  /* a transposed data [3, 4, 5] (rows of [4, 5]), f32 add */
  pair_t x = pair_new(3, D(5, 4, 3), xv, 1), xt = pair_transposed(x);
  float *uv2 = sc_values(6 * 4 * 5, 3);
  static const int64_t r3[] = {2, -1, 0, 2, 2, 1};
  pair_t ux = pair_new(3, D(6, 4, 5), uv2, 1), it = i64_shaped(2, D(6, 1), r3);
  dml_attr_t add = str_attr("reduction", "add"), mul = str_attr("reduction", "mul");
  {
    dml_rt_tensor_t c[3] = {xt.c, it.c, ux.c}, v[3] = {xt.v, it.v, ux.v};
    compare_typed("ScatterND", c, v, 3, &add, 1, "transposed [3,4,5] at [6,1], add");
    compare_typed("ScatterND", c, v, 3, &mul, 1, "transposed [3,4,5] at [6,1], mul");
  }
  /* one row hit 40 times (as 2 and -3): 40 rounds, f32 add, mul and max */
  {
    int64_t many[40];
    for (int i = 0; i < 40; i++) many[i] = i % 2 ? 2 : -3;
    float *mv = sc_values(40 * 4 * 3, 5);
    pair_t im = i64_shaped(2, D(40, 1), many), um = pair_new(3, D(40, 4, 3), mv, 1);
    dml_attr_t mx = str_attr("reduction", "max");
    dml_rt_tensor_t c[3] = {x.c, im.c, um.c}, v[3] = {x.v, im.v, um.v};
    compare_typed("ScatterND", c, v, 3, &add, 1, "[5,4,3], row 2 hit 40 times, add");
    compare_typed("ScatterND", c, v, 3, &mul, 1, "[5,4,3], row 2 hit 40 times, mul");
    compare_typed("ScatterND", c, v, 3, &mx, 1, "[5,4,3], row 2 hit 40 times, max");
    pair_free(&im);
    pair_free(&um);
    free(mv);
  }
  /* empty updates: indices [0, 1], updates [0, 4, 3] */
  static const int64_t none1[1] = {0};
  pair_t ie = i64_shaped(2, D(0, 1), none1), ue = pair_new(3, D(0, 4, 3), NULL, 1);
  {
    dml_rt_tensor_t c[3] = {x.c, ie.c, ue.c}, v[3] = {x.v, ie.v, ue.v};
    compare_typed("ScatterND", c, v, 3, &add, 1, "[5,4,3] at [0,1], add");
  }
  /* ScatterElements: data [5, 4] (x's first 20), indices [3, 4] along
   * axis 0 with duplicates in every column, along axis 1 (-1) with
   * duplicates in rows; every reduction; f32, i64, f16, bool */
  static const int64_t e0[] = {0, 4, -1, 2, 0, 4, 4, 2, 0, -5, 1, 2};
  static const int64_t e1[] = {3, 3, -1, 0, 0, 1, 0, 0, 2, 2, -2, 1};
  pair_t ie0 = i64_shaped(2, D(3, 4), e0), ie1 = i64_shaped(2, D(3, 4), e1);
  for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
    if (dts[d] == DML_DTYPE_U8 || dts[d] == DML_DTYPE_I32) continue;
    pair_t xd = typed_pair(dts[d], 2, D(5, 4), xv + 20);
    pair_t ud = typed_pair(dts[d], 2, D(3, 4), uv + 30);
    for (size_t k = 0; k < sizeof reds / sizeof reds[0]; k++)
      for (int ax = 0; ax < 2; ax++) {
        dml_attr_t a[2] = {str_attr("reduction", reds[k]),
                           int_attr_t("axis", ax ? -1 : 0)};
        char w[96];
        snprintf(w, sizeof w, "%s [5,4] axis %d, %s", dml_dtype_name(dts[d]), ax ? -1 : 0,
                 reds[k]);
        pair_t ii = ax ? ie1 : ie0;
        dml_rt_tensor_t c[3] = {xd.c, ii.c, ud.c}, v[3] = {xd.v, ii.v, ud.v};
        compare_typed("ScatterElements", c, v, 3, a, 2, w);
      }
    pair_free(&xd);
    pair_free(&ud);
  }
  /* ScatterElements of a transposed data, and empty indices */
  {
    pair_t xs = pair_new(2, D(4, 5), xv, 1), xst = pair_transposed(xs); /* [5, 4] */
    pair_t us = pair_new(2, D(3, 4), uv, 1);
    dml_rt_tensor_t c[3] = {xst.c, ie0.c, us.c}, v[3] = {xst.v, ie0.v, us.v};
    compare_typed("ScatterElements", c, v, 3, &add, 1, "transposed [5,4], add");
    pair_t iz = i64_shaped(2, D(0, 4), none1), uz = pair_new(2, D(0, 4), NULL, 1);
    dml_rt_tensor_t cz[3] = {xst.c, iz.c, uz.c}, vz[3] = {xst.v, iz.v, uz.v};
    compare_typed("ScatterElements", cz, vz, 3, &mul, 1, "[5,4] by [0,4], mul");
    pair_t fr[] = {xs, xst, us, iz, uz};
    for (size_t i = 0; i < sizeof fr / sizeof fr[0]; i++) pair_free(&fr[i]);
  }
  /* the errors, on both devices */
  static const int64_t bad[] = {0, 7, 1};
  pair_t ib = i64_shaped(2, D(3, 1), bad), ub = pair_new(3, D(3, 4, 3), NULL, 1);
  static const int64_t bade[] = {0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5};
  pair_t ibe = i64_shaped(2, D(3, 4), bade), ube = pair_new(2, D(3, 4), NULL, 1);
  pair_t x54 = pair_new(2, D(5, 4), xv, 1);
  dml_attr_t bogus = str_attr("reduction", "xor");
  for (int dv = 0; dv < 2; dv++) {
    dml_rt_tensor_t y, in[3] = {dv ? x.v : x.c, dv ? ib.v : ib.c, dv ? ub.v : ub.c};
    CHECK_ERROR(dml_rt_tensor_op("ScatterND", in, 3, &add, 1, &y, 1),
                DML_STATUS_OUT_OF_RANGE,
                "index 7 (at position 1) is out of range [-5, 4]");
    CHECK_ERROR(dml_rt_tensor_op("ScatterND", in, 3, &bogus, 1, &y, 1),
                DML_STATUS_UNIMPLEMENTED, "reduction 'xor'");
    dml_rt_tensor_t ie_[3] = {dv ? x54.v : x54.c, dv ? ibe.v : ibe.c, dv ? ube.v : ube.c};
    dml_attr_t a1 = int_attr_t("axis", 1);
    CHECK_ERROR(dml_rt_tensor_op("ScatterElements", ie_, 3, &a1, 1, &y, 1),
                DML_STATUS_OUT_OF_RANGE,
                "index 4 (at position 4) is out of range [-4, 3]");
  }
  pair_t frees[] = {ind, ind3, x, xt, ux, it, ie, ue, ie0, ie1, ib, ub, ibe, ube, x54};
  for (size_t i = 0; i < sizeof frees / sizeof frees[0]; i++) pair_free(&frees[i]);
  free(xv);
  free(uv);
  free(uv2);
}

/* TopK on the GPU against the CPU, Values and Indices bit for bit. */
static void topk_case(pair_t x, int64_t k, int64_t axis, int largest, const char *what) {
  int64_t kv[1] = {k};
  pair_t kp = i64_pair(1, kv);
  dml_attr_t a[2] = {int_attr_t("axis", axis), int_attr_t("largest", largest)};
  dml_rt_tensor_t yc[2] = {DML_RT_TENSOR_NONE, DML_RT_TENSOR_NONE},
                  yv[2] = {yc[0], yc[1]};
  dml_rt_tensor_t c[2] = {x.c, kp.c}, v[2] = {x.v, kp.v};
  CHECK_OK(dml_rt_tensor_op("TopK", c, 2, a, 2, yc, 2));
  dml_status_t e = dml_rt_tensor_op("TopK", v, 2, a, 2, yv, 2);
  if (e) fprintf(stderr, "TopK (%s) on " TEST_GPU " failed\n", what);
  CHECK_OK(e);
  for (int o = 0; o < 2 && !e; o++) {
    int64_t nc = 0, nv = 0;
    dml_dtype_t dc, dv;
    dml_rt_tensor_info_t ic, iv;
    CHECK_OK(dml_rt_tensor_info(yc[o], &ic));
    CHECK_OK(dml_rt_tensor_info(yv[o], &iv));
    CHECK(ic.rank == iv.rank &&
          !memcmp(ic.dims, iv.dims, sizeof(int64_t) * (size_t)ic.rank));
    void *pc = down_raw(yc[o], &nc, &dc), *pv = down_raw(yv[o], &nv, &dv);
    int same = nc == nv && dc == dv && !memcmp(pc, pv, (size_t)nc * dml_dtype_size(dc));
    if (!same) {
      g_mismatches++;
      fprintf(stderr, "TopK (%s) output %d: " TEST_GPU " differs from the cpu\n", what,
              o);
      for (int64_t i = 0, shown = 0; i < nc && i < nv && shown < 4; i++) {
        uint64_t bc, bv;
        double xc = elem(pc, dc, i, &bc), xg = elem(pv, dv, i, &bv);
        if (bc != bv)
          fprintf(stderr, "  element %lld: gpu %g, cpu %g\n", (long long)i, xg, xc),
              shown++;
      }
    }
    CHECK(same);
    free(pc);
    free(pv);
  }
  for (int o = 0; o < 2; o++) {
    if (yc[o].id) CHECK_OK(dml_rt_tensor_free(yc[o]));
    if (yv[o].id) CHECK_OK(dml_rt_tensor_free(yv[o]));
  }
  pair_free(&kp);
}

/* TopK: largest and smallest, K from 0 to the axis' extent, rows of 1,
 * 17 (padded to 32), 300 and 5000 with NaN, +-inf, +-0 and ties (lower
 * index first), the axis first, last and in the middle, a transposed view, i64,
 * i32, u8, f16 and bf16; K out of range on both devices. */
static void test_topk(void) {
  float *xv = sc_values(3 * 300, 1);
  for (int largest = 0; largest < 2; largest++) {
    pair_t x = pair_new(2, D(3, 300), xv, 1);
    topk_case(x, 300, -1, largest, "[3,300] K 300");
    topk_case(x, 7, 1, largest, "[3,300] K 7");
    topk_case(x, 1, 1, largest, "[3,300] K 1");
    topk_case(x, 0, 1, largest, "[3,300] K 0");
    topk_case(x, 2, 0, largest, "[3,300] axis 0, K 2");
    pair_free(&x);
    pair_t x3 = pair_new(3, D(4, 17, 5), xv, 1);
    topk_case(x3, 17, 1, largest, "[4,17,5] axis 1, K 17");
    topk_case(x3, 5, -2, largest, "[4,17,5] axis -2, K 5");
    pair_t x3t = pair_transposed(x3); /* [5, 17, 4] */
    topk_case(x3t, 3, 2, largest, "transposed [5,17,4] axis 2, K 3");
    pair_free(&x3t);
    pair_free(&x3);
    float *lv = sc_values(2 * 5000, largest);
    pair_t xl = pair_new(2, D(2, 5000), lv, 1);
    topk_case(xl, 10, 1, largest, "[2,5000] K 10");
    pair_free(&xl);
    free(lv);
    pair_t x1 = pair_new(2, D(6, 1), xv, 1);
    topk_case(x1, 1, 1, largest, "[6,1] K 1");
    pair_free(&x1);
    static const dml_dtype_t dts[] = {DML_DTYPE_I64, DML_DTYPE_I32, DML_DTYPE_U8,
                                      DML_DTYPE_F16, DML_DTYPE_BF16};
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
      float big[40];
      for (int i = 0; i < 40; i++) big[i] = xv[i] * 3.0f; /* NaN: 0 in integers */
      big[3] = 1e30f, big[4] = -1e30f; /* the integers' extremes (clamped) */
      pair_t xd = typed_pair(dts[d], 2, D(2, 20), big);
      char w[64];
      snprintf(w, sizeof w, "%s [2,20] K 9", dml_dtype_name(dts[d]));
      topk_case(xd, 9, 1, largest, w);
      pair_free(&xd);
    }
  }
  pair_t x = pair_new(2, D(3, 5), xv, 1);
  int64_t kv[1] = {6};
  pair_t kp = i64_pair(1, kv);
  for (int dv = 0; dv < 2; dv++) {
    dml_rt_tensor_t y[2], in[2] = {dv ? x.v : x.c, dv ? kp.v : kp.c};
    CHECK_ERROR(dml_rt_tensor_op("TopK", in, 2, NULL, 0, y, 2),
                DML_STATUS_INVALID_ARGUMENT, "K = 6 is out of range");
  }
  pair_free(&x);
  pair_free(&kp);
  free(xv);
}

/* Outputs c and v (any float dtype) within tol * (1 + |cpu|), or both
 * NaN, or the same infinity. */
static void compare_tol(dml_rt_tensor_t c, dml_rt_tensor_t v, double tol,
                        const char *what) {
  int64_t nc = 0, nv = 0;
  dml_dtype_t dc, dv;
  void *pc = down_raw(c, &nc, &dc), *pv = down_raw(v, &nv, &dv);
  CHECK(nc == nv && dc == dv);
  int bad = 0;
  for (int64_t i = 0; i < nc && i < nv && dc == dv; i++) {
    uint64_t bc, bv;
    double xc = elem(pc, dc, i, &bc), xv = elem(pv, dv, i, &bv);
    int ok = isnan(xc) || isnan(xv)   ? isnan(xc) && isnan(xv)
             : isinf(xc) || isinf(xv) ? xc == xv
                                      : fabs(xv - xc) <= tol * (1 + fabs(xc));
    if (!ok && bad++ < 3)
      fprintf(stderr, "%s element %lld: " TEST_GPU " %.9g, cpu %.9g\n", what,
              (long long)i, xv, xc);
  }
  if (bad) g_mismatches++;
  CHECK(bad == 0);
  free(pc);
  free(pv);
}

/* One BatchNormalization in training mode on the CPU and the GPU with
 * n_out outputs: Y within 1e-4 (1 + |y|) (16-bit Y: 1e-2), running_mean
 * and running_var within 1e-5 (1 + |v|) of the CPU's (f32 statistics on
 * the GPU, the CPU's double); with three outputs on the CPU, running_mean
 * also against the batch mean computed here in double (within 1e-6, a
 * 16-bit running_mean within its rounding). */
static void bn_train_case(pair_t *in, const dml_attr_t *a, uint32_t na, uint32_t n_out,
                          double mom, const char *what) {
  dml_rt_tensor_t c[5], v[5], yc[3], yv[3];
  for (int i = 0; i < 5; i++) c[i] = in[i].c, v[i] = in[i].v;
  for (int i = 0; i < 3; i++) yc[i] = yv[i] = DML_RT_TENSOR_NONE;
  CHECK_OK(dml_rt_tensor_op("BatchNormalization", c, 5, a, na, yc, n_out));
  dml_status_t e = dml_rt_tensor_op("BatchNormalization", v, 5, a, na, yv, n_out);
  if (e)
    fprintf(stderr, "BatchNormalization training (%s) on " TEST_GPU " failed\n", what);
  CHECK_OK(e);
  dml_rt_tensor_info_t ix;
  CHECK_OK(dml_rt_tensor_info(c[0], &ix));
  for (uint32_t o = 0; o < n_out && !e; o++) {
    char w[128];
    snprintf(w, sizeof w, "BatchNormalization training (%s) output %u", what, o);
    dml_rt_tensor_info_t io;
    CHECK_OK(dml_rt_tensor_info(yv[o], &io));
    CHECK(io.device == g_vk);
    int half = io.dtype == DML_DTYPE_F16 || io.dtype == DML_DTYPE_BF16;
    compare_tol(yc[o], yv[o], half ? 1e-2 : o ? 1e-5 : 1e-4, w);
  }
  if (n_out > 1 && !e) { /* the CPU's running_mean against a double mean */
    int64_t nx = 0, nm = 0, nr = 0;
    dml_dtype_t dx, dm, dr;
    void *px = down_raw(c[0], &nx, &dx), *pm = down_raw(c[3], &nm, &dm),
         *pr = down_raw(yc[1], &nr, &dr);
    const int64_t C = ix.dims[1], sp = C ? nx / (ix.dims[0] * C) : 0;
    for (int64_t ch = 0; ch < C; ch++) {
      double s = 0, cnt = 0;
      uint64_t b;
      for (int64_t nn = 0; nn < ix.dims[0]; nn++)
        for (int64_t i = 0; i < sp; i++, cnt++)
          s += elem(px, dx, (nn * C + ch) * sp + i, &b);
      double want = elem(pm, dm, ch, &b) * mom + s / cnt * (1 - mom),
             got = elem(pr, dr, ch, &b);
      const double tol = dr == DML_DTYPE_BF16  ? 8e-3 /* a 16-bit store */
                         : dr == DML_DTYPE_F16 ? 1e-3
                                               : 1e-6;
      int ok = isnan(want) ? isnan(got) : fabs(got - want) <= tol * (1 + fabs(want));
      if (!ok)
        fprintf(stderr, "%s: cpu running_mean[%lld] %.9g, want %.9g\n", what,
                (long long)ch, got, want);
      CHECK(ok);
    }
    free(px);
    free(pm);
    free(pr);
  }
  for (uint32_t o = 0; o < n_out; o++) {
    if (yc[o].id) CHECK_OK(dml_rt_tensor_free(yc[o]));
    if (yv[o].id) CHECK_OK(dml_rt_tensor_free(yv[o]));
  }
}

/* BatchNormalization with training_mode 1 (ONNX "Output case #1"): Y and
 * the running statistics on the GPU against the CPU's kernel: X [4, 3, 5,
 * 7] with -0, a huge value and a NaN channel, momentum and epsilon given
 * or not, Y only and all three outputs, rows of 1 (X [6, 3]: the
 * composed inference form) and of 200 (the fused kernel), f16 X with f32
 * parameters (rows of 100 and of 1), bf16 X and parameters, f64 X; 4
 * outputs refused on the GPU. */
static void test_bn_train(void) {
  float *xv = mixed_values(4 * 3 * 200, 0, 0, 0, 0);
  for (int i = 0; i < 4 * 3 * 200; i++) xv[i] = xv[i] * 2.0f + (float)(i % 3);
  float pv[3 * 4] = {1.5f,  -0.5f, 2.0f, 0.1f, -0.2f, 0.3f,
                     0.25f, -1.0f, 3.0f, 1.0f, 0.5f,  2.5f}; /* scale, B, mean, var */
  dml_attr_t tm = int_attr_t("training_mode", 1), all3[3];
  all3[0] = tm;
  memset(&all3[1], 0, sizeof all3[1]);
  all3[1].name = "momentum", all3[1].kind = DML_ATTR_FLOAT, all3[1].f = 0.8;
  memset(&all3[2], 0, sizeof all3[2]);
  all3[2].name = "epsilon", all3[2].kind = DML_ATTR_FLOAT, all3[2].f = 1e-3;
  static const struct {
    int32_t rank;
    int64_t dims[4];
    dml_dtype_t dt;
    const char *what;
  } cases[] = {
      {4, {4, 3, 5, 7}, DML_DTYPE_F32, "[4,3,5,7]"},
      {2, {6, 3, 0, 0}, DML_DTYPE_F32, "[6,3]"},
      {3, {4, 3, 200, 0}, DML_DTYPE_F32, "[4,3,200]"},
      {3, {2, 3, 100, 0}, DML_DTYPE_F16, "f16 [2,3,100]"},
      {2, {6, 3, 0, 0}, DML_DTYPE_F16, "f16 [6,3]"},
      {3, {2, 3, 70, 0}, DML_DTYPE_BF16, "bf16 [2,3,70], bf16 parameters"},
      {4, {4, 3, 5, 7}, DML_DTYPE_F64, "f64 [4,3,5,7]"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    float *x = (float *)malloc(sizeof(float) * 4 * 3 * 200);
    memcpy(x, xv, sizeof(float) * 4 * 3 * 200);
    if (k == 0) x[1] = -0.0f, x[2] = 1e6f;
    pair_t in[5];
    in[0] = cases[k].dt == DML_DTYPE_F32
                ? pair_new(cases[k].rank, cases[k].dims, x, 1)
                : typed_pair(cases[k].dt, cases[k].rank, cases[k].dims, x);
    for (int j = 0; j < 4; j++)
      in[1 + j] = cases[k].dt == DML_DTYPE_F64 || cases[k].dt == DML_DTYPE_BF16
                      ? typed_pair(cases[k].dt, 1, D(3), pv + 3 * j)
                      : pair_new(1, D(3), pv + 3 * j, 1);
    bn_train_case(in, all3, 3, 3, 0.8, cases[k].what);
    bn_train_case(in, &tm, 1, 3, 0.9, cases[k].what);
    bn_train_case(in, all3, 3, 1, 0.8, cases[k].what);
    if (k == 0) { /* a NaN in channel 1: that channel NaN on both */
      pair_t xn;
      x[5 * 7 + 3] = NAN;
      xn = pair_new(cases[k].rank, cases[k].dims, x, 1);
      pair_t nin[5] = {xn, in[1], in[2], in[3], in[4]};
      bn_train_case(nin, all3, 3, 3, 0.8, "[4,3,5,7] with a NaN");
      dml_rt_tensor_t y[4], vin[5] = {xn.v, in[1].v, in[2].v, in[3].v, in[4].v};
      CHECK_ERROR(dml_rt_tensor_op("BatchNormalization", vin, 5, &tm, 1, y, 4),
                  DML_STATUS_INVALID_ARGUMENT, "1 to 3 outputs");
      pair_free(&xn);
    }
    for (int j = 0; j < 5; j++) pair_free(&in[j]);
    free(x);
  }
  free(xv);
}

/* MaxPool with its Indices on the GPU (Y composed, Indices by the index
 * kernel) against the CPU, the Indices bit for bit: windows with pads, strides,
 * dilations, ceil_mode, SAME_UPPER, 1-D, storage_order 1, edge values (NaN
 * wins over numbers, ties keep the first, -inf everywhere), f16, bf16, f64,
 * the integers, 3-D windows, a transposed view. */
static void pool_idx_case(pair_t x, const dml_attr_t *a, uint32_t na, const char *what) {
  dml_rt_tensor_t yc[2], yv[2];
  CHECK_OK(dml_rt_tensor_op("MaxPool", &x.c, 1, a, na, yc, 2));
  dml_status_t e = dml_rt_tensor_op("MaxPool", &x.v, 1, a, na, yv, 2);
  if (e) fprintf(stderr, "MaxPool with Indices (%s) on " TEST_GPU " failed\n", what);
  CHECK_OK(e);
  if (e) {
    CHECK_OK(dml_rt_tensor_free(yc[0]));
    CHECK_OK(dml_rt_tensor_free(yc[1]));
    return;
  }
  for (int o = 0; o < 2; o++) {
    int64_t n1 = 0, n2 = 0;
    dml_dtype_t d1, d2;
    void *p1 = down_raw(yc[o], &n1, &d1), *p2 = down_raw(yv[o], &n2, &d2);
    int same = n1 == n2 && d1 == d2;
    for (int64_t i = 0; i < n1 && same; i++) { /* Y: any NaN for a NaN */
      uint64_t b1, b2;
      double v1 = elem(p1, d1, i, &b1), v2 = elem(p2, d2, i, &b2);
      /* Y: any NaN for a NaN; a tie of -0 and +0 may keep either sign (the
       * composed Max fold); the Indices bit for bit */
      same = b1 == b2 || (o == 0 && !int_dtype(d1, &(double){0}, &(double){0}) &&
                          ((isnan(v1) && isnan(v2)) || v1 == v2));
      if (!same)
        fprintf(stderr,
                "MaxPool (%s) output %d element %lld: cpu %.9g (0x%llx), " TEST_GPU
                " %.9g (0x%llx)\n",
                what, o, (long long)i, v1, (unsigned long long)b1, v2,
                (unsigned long long)b2);
    }
    if (!same) fprintf(stderr, "MaxPool (%s): output %d differs\n", what, o);
    CHECK(same);
    free(p1);
    free(p2);
    CHECK_OK(dml_rt_tensor_free(yc[o]));
    CHECK_OK(dml_rt_tensor_free(yv[o]));
  }
}

/* A pair of [1,1,1,n] tensors of 8-byte integer dtype dt (i64 or u64) from
 * raw values. */
static pair_t int64_row_pair(dml_dtype_t dt, int64_t n, const void *v) {
  dml_tensor_t h;
  memset(&h, 0, sizeof h);
  h.dtype = dt;
  h.rank = 4;
  h.dims[0] = h.dims[1] = h.dims[2] = 1;
  h.dims[3] = n;
  h.data = (void *)v;
  pair_t r;
  CHECK_OK(dml_rt_tensor_from_host(g_cpu, &h, &r.c));
  CHECK_OK(dml_rt_tensor_from_host(g_vk, &h, &r.v));
  return r;
}

static void test_pool_indices(void) {
  float *xv = mixed_values(2 * 3 * 9 * 11, 0, 3, 0, EO_N_EDGES);
  for (int i = 40; i < 60; i++) xv[i] = 2.0f;        /* ties */
  for (int i = 100; i < 140; i++) xv[i] = -INFINITY; /* -inf windows */
  pair_t x = pair_new(4, D(2, 3, 9, 11), xv, 1);
  static const int64_t k33[2] = {3, 3}, s22[2] = {2, 2}, p1[4] = {1, 1, 1, 1},
                       d22[2] = {2, 2}, p0121[4] = {0, 1, 2, 1}, k2[2] = {2, 2};
  dml_attr_t a[5];
  memset(a, 0, sizeof a);
  a[0] = ints_attr("kernel_shape", k33, 2);
  a[1] = ints_attr("strides", s22, 2);
  a[2] = ints_attr("pads", p1, 4);
  pool_idx_case(x, a, 3, "3x3, strides 2, pads 1");
  a[3].name = "storage_order", a[3].kind = DML_ATTR_INT, a[3].i = 1;
  pool_idx_case(x, a, 4, "3x3, strides 2, pads 1, storage_order 1");
  a[3].name = "ceil_mode", a[3].kind = DML_ATTR_INT, a[3].i = 1;
  pool_idx_case(x, a, 4, "3x3, strides 2, pads 1, ceil_mode");
  a[1] = ints_attr("dilations", d22, 2);
  a[2] = ints_attr("pads", p0121, 4);
  pool_idx_case(x, a, 3, "3x3, dilations 2, pads 0 1 2 1");
  a[0] = ints_attr("kernel_shape", k2, 2);
  pool_idx_case(x, a, 1, "2x2");
  a[1] = ints_attr("strides", s22, 2);
  memset(&a[2], 0, sizeof a[2]);
  a[2].name = "auto_pad", a[2].kind = DML_ATTR_STRING, a[2].s = "SAME_UPPER";
  a[0] = ints_attr("kernel_shape", k33, 2);
  pool_idx_case(x, a, 3, "3x3, strides 2, SAME_UPPER");
  pair_t xt = pair_transposed(x); /* [11, 9, 3, 2] */
  a[0] = ints_attr("kernel_shape", k2, 2);
  pool_idx_case(xt, a, 1, "a transposed view, 2x2");
  /* 1-D: [2, 3, 99] */
  pair_t x1 = pair_new(3, D(2, 3, 99), xv, 1);
  static const int64_t k5[1] = {5}, s3[1] = {3}, p22[2] = {2, 2};
  a[0] = ints_attr("kernel_shape", k5, 1);
  a[1] = ints_attr("strides", s3, 1);
  a[2] = ints_attr("pads", p22, 2);
  pool_idx_case(x1, a, 3, "1-D 5, strides 3, pads 2");
  /* f16, bf16, f64 */
  static const dml_dtype_t dts[3] = {DML_DTYPE_F16, DML_DTYPE_BF16, DML_DTYPE_F64};
  a[0] = ints_attr("kernel_shape", k33, 2);
  a[1] = ints_attr("strides", s22, 2);
  a[2] = ints_attr("pads", p1, 4);
  for (int d = 0; d < 3; d++) {
    char w[64];
    snprintf(w, sizeof w, "%s 3x3, strides 2, pads 1", dml_dtype_name(dts[d]));
    pair_t t = typed_pair(dts[d], 4, D(2, 3, 9, 11), xv);
    pool_idx_case(t, a, 3, w);
    pair_free(&t);
  }
  /* the integers (ties keep the first; negative values 0 for the
   * unsigned; values past 2^53 below) */
  static const dml_dtype_t its[8] = {DML_DTYPE_I8,  DML_DTYPE_I16, DML_DTYPE_I32,
                                     DML_DTYPE_I64, DML_DTYPE_U8,  DML_DTYPE_U16,
                                     DML_DTYPE_U32, DML_DTYPE_U64};
  float *xi = (float *)malloc((size_t)2 * 3 * 9 * 11 * 4);
  for (int i = 0; i < 2 * 3 * 9 * 11; i++)
    xi[i] = (float)((int)(rnd() * 5) + (i % 17 == 0 ? 100 : 0) - (i % 13 == 0 ? 120 : 0));
  for (int d = 0; d < 8; d++) {
    char w[64];
    snprintf(w, sizeof w, "%s 3x3, strides 2, pads 1", dml_dtype_name(its[d]));
    pair_t t = typed_pair(its[d], 4, D(2, 3, 9, 11), xi);
    pool_idx_case(t, a, 3, w);
    a[3].name = "storage_order", a[3].kind = DML_ATTR_INT, a[3].i = 1;
    pool_idx_case(t, a, 4, w);
    pair_free(&t);
  }
  /* i64 and u64 past 2^53: compared as integers on every device (a double
   * ties 2^53 and 2^53 + 1); Y's bits and the Indices against the CPU's */
  {
    static const int64_t xs[8] = {(1LL << 53), (1LL << 53) + 1, INT64_MAX - 1,
                                  INT64_MAX,   INT64_MIN,       -5,
                                  3,           (1LL << 53) + 3};
    static const uint64_t xu[8] = {
        UINT64_MAX - 1, UINT64_MAX,      (1ULL << 63), (1ULL << 63) + 1, 0, 3,
        (1ULL << 53),   (1ULL << 53) + 1};
    static const int64_t k12[2] = {1, 2}, s12[2] = {1, 2};
    dml_attr_t c[2];
    memset(c, 0, sizeof c);
    c[0] = ints_attr("kernel_shape", k12, 2);
    c[1] = ints_attr("strides", s12, 2);
    pair_t t = int64_row_pair(DML_DTYPE_I64, 8, xs);
    pool_idx_case(t, c, 2, "i64 past 2^53, 1x2");
    pair_free(&t);
    t = int64_row_pair(DML_DTYPE_U64, 8, xu);
    pool_idx_case(t, c, 2, "u64 past 2^63, 1x2");
    pair_free(&t);
  }
  /* 3-D windows: [2, 3, 5, 6, 7] (1260 elements: the 594 values above
   * repeated, no new random numbers, so later tests' data stay as they
   * were; reading 1260 of the 594 went past the buffers) */
  enum { N3 = 2 * 3 * 5 * 6 * 7, N2 = 2 * 3 * 9 * 11 };
  float *xv3 = (float *)malloc(N3 * sizeof(float)),
        *xi3 = (float *)malloc(N3 * sizeof(float));
  for (int i = 0; i < N3; i++) xv3[i] = xv[i % N2], xi3[i] = xi[i % N2];
  pair_t x3 = pair_new(5, D(2, 3, 5, 6, 7), xv3, 1);
  static const int64_t k323[3] = {3, 2, 3}, s212[3] = {2, 1, 2},
                       p3[6] = {1, 0, 1, 1, 1, 0}, d3[3] = {1, 2, 1}, k222[3] = {2, 2, 2};
  dml_attr_t b[5];
  memset(b, 0, sizeof b);
  b[0] = ints_attr("kernel_shape", k323, 3);
  b[1] = ints_attr("strides", s212, 3);
  b[2] = ints_attr("pads", p3, 6);
  pool_idx_case(x3, b, 3, "3-D 3x2x3, strides 2 1 2, pads");
  b[3].name = "storage_order", b[3].kind = DML_ATTR_INT, b[3].i = 1;
  pool_idx_case(x3, b, 4, "3-D 3x2x3, storage_order 1");
  b[3].name = "ceil_mode";
  pool_idx_case(x3, b, 4, "3-D 3x2x3, ceil_mode");
  b[1] = ints_attr("dilations", d3, 3);
  pool_idx_case(x3, b, 3, "3-D 3x2x3, dilations 1 2 1, pads");
  b[0] = ints_attr("kernel_shape", k222, 3);
  pool_idx_case(x3, b, 1, "3-D 2x2x2");
  {
    pair_t t = typed_pair(DML_DTYPE_I32, 5, D(2, 3, 5, 6, 7), xi3);
    b[1] = ints_attr("strides", s212, 3);
    b[3].name = "storage_order", b[3].i = 1;
    pool_idx_case(t, b, 4, "3-D i32 2x2x2, storage_order 1");
    pair_free(&t);
    t = typed_pair(DML_DTYPE_F16, 5, D(2, 3, 5, 6, 7), xv3);
    pool_idx_case(t, b, 2, "3-D f16 2x2x2, strides");
    pair_free(&t);
  }
  pair_free(&x3);
  free(xv3);
  free(xi3);
  free(xi);
  pair_free(&x);
  pair_free(&xt);
  pair_free(&x1);
  free(xv);
}

/* ConvTranspose on the GPU (a Conv of the zero-inserted X) against the
 * CPU's kernel: strides with output_padding, pads that crop, group 2 with
 * dilations, bias or none, 1-D, SAME_UPPER and output_shape, an X view;
 * the errors. Finite values (an infinite weight gives NaN on the GPU where
 * the CPU skips the inserted zeros). */
static void test_conv_transpose(void) {
  dml_attr_t a[6];
  memset(a, 0, sizeof a);
  static const int64_t s22[2] = {2, 2}, p1[4] = {1, 1, 1, 1}, op1[2] = {1, 1},
                       d22[2] = {2, 2}, s3[1] = {3}, p31[2] = {3, 1}, os[2] = {8, 8},
                       p0120[4] = {0, 1, 2, 0};
  pair_t x = pair_new(4, D(1, 2, 5, 4), NULL, 4), w = pair_new(4, D(2, 3, 3, 3), NULL, 4),
         b = pair_new(1, D(3), NULL, 4);
  dml_rt_tensor_t c[3] = {x.c, w.c, b.c}, v[3] = {x.v, w.v, b.v};
  a[0] = ints_attr("strides", s22, 2);
  a[1] = ints_attr("pads", p1, 4);
  a[2] = ints_attr("output_padding", op1, 2);
  compare_acc("ConvTranspose", c, v, 3, a, 3, "strides 2, pads 1, output_padding 1, B");
  compare_acc("ConvTranspose", c, v, 2, a, 2, "strides 2, pads 1, no B");
  a[1] = ints_attr("pads", p0120, 4);
  compare_acc("ConvTranspose", c, v, 3, a, 2, "strides 2, pads 0 1 2 0");
  compare_acc("ConvTranspose", c, v, 2, NULL, 0, "defaults");
  /* an X view: [1, 2, 4, 5] transposed to [1, 2, 5, 4]... as [5, 4, 2, 1] reversed */
  pair_t xb = pair_new(4, D(4, 5, 2, 1), NULL, 4), xt = pair_transposed(xb);
  dml_rt_tensor_t ct[2] = {xt.c, w.c}, vt[2] = {xt.v, w.v};
  compare_acc("ConvTranspose", ct, vt, 2, a, 1, "an X view, strides 2");
  /* group 2, dilations 2 */
  pair_t xg = pair_new(4, D(2, 4, 3, 3), NULL, 4),
         wg = pair_new(4, D(4, 1, 2, 2), NULL, 4);
  dml_rt_tensor_t cg[2] = {xg.c, wg.c}, vg[2] = {xg.v, wg.v};
  a[0] = ints_attr("dilations", d22, 2);
  memset(&a[1], 0, sizeof a[1]);
  a[1].name = "group", a[1].kind = DML_ATTR_INT, a[1].i = 2;
  compare_acc("ConvTranspose", cg, vg, 2, a, 2, "group 2, dilations 2");
  /* 1-D, strides 3, pads 3 1 (a crop at the start) */
  pair_t x1 = pair_new(3, D(2, 3, 7), NULL, 4), w1 = pair_new(3, D(3, 2, 3), NULL, 4);
  dml_rt_tensor_t c1[2] = {x1.c, w1.c}, v1[2] = {x1.v, w1.v};
  a[0] = ints_attr("strides", s3, 1);
  a[1] = ints_attr("pads", p31, 2);
  compare_acc("ConvTranspose", c1, v1, 2, a, 2, "1-D, strides 3, pads 3 1");
  /* SAME_UPPER and output_shape */
  pair_t xs = pair_new(4, D(1, 1, 4, 4), NULL, 4),
         ws = pair_new(4, D(1, 1, 3, 3), NULL, 4);
  dml_rt_tensor_t cs[2] = {xs.c, ws.c}, vs[2] = {xs.v, ws.v};
  a[0] = ints_attr("strides", s22, 2);
  memset(&a[1], 0, sizeof a[1]);
  a[1].name = "auto_pad", a[1].kind = DML_ATTR_STRING, a[1].s = "SAME_UPPER";
  compare_acc("ConvTranspose", cs, vs, 2, a, 2, "SAME_UPPER, strides 2");
  a[1] = ints_attr("output_shape", os, 2);
  compare_acc("ConvTranspose", cs, vs, 2, a, 2, "output_shape 8 8, strides 2");
  /* 3-D (a sum of 2-D Convs over the depth taps): strides, pads (a crop
   * in depth), output_padding, B; group 2 with dilations; an X view. The
   * random sequence is put back after these cases: the later tests keep
   * their data (test_half_mm's f16 Conv, an f16 round-trip check without
   * a magnitude term, fails on other data near a cancellation: 0xecf
   * against the CPU's 0xecd, 4e-4) */
  const uint32_t rng_saved = g_rng;
  pair_t x3 = pair_new(5, D(2, 2, 3, 4, 3), NULL, 4),
         w3 = pair_new(5, D(2, 3, 3, 2, 3), NULL, 4), b3 = pair_new(1, D(3), NULL, 4);
  dml_rt_tensor_t c3[3] = {x3.c, w3.c, b3.c}, v3[3] = {x3.v, w3.v, b3.v};
  static const int64_t s212[3] = {2, 1, 2}, p3[6] = {1, 0, 2, 0, 1, 1},
                       op3[3] = {1, 0, 1}, d3[3] = {2, 1, 2};
  memset(a, 0, sizeof a);
  a[0] = ints_attr("strides", s212, 3);
  a[1] = ints_attr("pads", p3, 6);
  a[2] = ints_attr("output_padding", op3, 3);
  compare_acc("ConvTranspose", c3, v3, 3, a, 3,
              "3-D, strides 2 1 2, pads, output_padding, B");
  compare_acc("ConvTranspose", c3, v3, 2, NULL, 0, "3-D, defaults");
  pair_t x3g = pair_new(5, D(1, 4, 3, 3, 2), NULL, 4),
         w3g = pair_new(5, D(4, 1, 2, 2, 2), NULL, 4);
  pair_t x3t = pair_transposed(x3g); /* [2, 3, 3, 4, 1] */
  dml_rt_tensor_t c3g[2] = {x3g.c, w3g.c}, v3g[2] = {x3g.v, w3g.v};
  memset(a, 0, sizeof a);
  a[0] = ints_attr("dilations", d3, 3);
  a[1].name = "group", a[1].kind = DML_ATTR_INT, a[1].i = 2;
  compare_acc("ConvTranspose", c3g, v3g, 2, a, 2, "3-D, group 2, dilations 2 1 2");
  pair_t w3t = pair_new(5, D(3, 2, 2, 2, 1), NULL, 4);
  dml_rt_tensor_t c3t[2] = {x3t.c, w3t.c}, v3t[2] = {x3t.v, w3t.v};
  compare_acc("ConvTranspose", c3t, v3t, 2, NULL, 0, "3-D, an X view");
  g_rng = rng_saved;
  /* the errors, on both devices */
  dml_rt_tensor_t y, bad[2] = {xs.c, w.c}, badv[2] = {xs.v, w.v};
  CHECK_ERROR(dml_rt_tensor_op("ConvTranspose", bad, 2, NULL, 0, &y, 1),
              DML_STATUS_INVALID_ARGUMENT, "ConvTranspose: shape mismatch");
  CHECK_ERROR(dml_rt_tensor_op("ConvTranspose", badv, 2, NULL, 0, &y, 1),
              DML_STATUS_INVALID_ARGUMENT, "ConvTranspose: shape mismatch");
  pair_t all[] = {x,  w,  b,  xb, xt, xg,  wg,  x1,  w1,
                  xs, ws, x3, w3, b3, x3g, w3g, x3t, w3t};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) pair_free(&all[i]);
}

/* 3-D Conv on the GPU (dml_tensor_compose.c conv3d: a sum of 2-D Convs
 * over the depth taps) against the CPU's direct kernel: pads (symmetric,
 * asymmetric, in depth too), strides, dilations, bias or none, group 2,
 * depthwise, VALID, SAME_UPPER, SAME_LOWER, an X view, an empty batch,
 * edge values in X (W within 1/16 so no sum of 16 finite products
 * overflows in either order) and in W (one infinite, NaN or huge tap per
 * output channel, X in [-1, 1]); f16 and bf16 of exact small values (the
 * sums exact in f32: both devices give the same bits); the errors. The
 * random sequence is put back after these cases (the later tests keep
 * their data). */
static void test_conv3d(void) {
  const uint32_t rng_saved = g_rng;
  dml_attr_t a[4];
  memset(a, 0, sizeof a);
  pair_t x = pair_new(5, D(2, 3, 5, 6, 7), NULL, 4),
         w = pair_new(5, D(4, 3, 3, 3, 2), NULL, 4), b = pair_new(1, D(4), NULL, 4);
  a[0] = ints_attr("pads", D(1, 1, 1, 1, 1, 1), 6);
  conv(x, w, &b, a, 1, "3-D [2,3,5,6,7] 3x3x2 pads 1, B");
  conv(x, w, NULL, NULL, 0, "3-D, no pads, no B");
  a[0] = ints_attr("pads", D(1, 0, 2, 0, 1, 1), 6);
  a[1] = ints_attr("strides", D(2, 1, 2), 3);
  a[2] = ints_attr("dilations", D(2, 1, 1), 3);
  conv(x, w, &b, a, 3, "3-D strides (2,1,2), dilations (2,1,1), pads (1,0,2,0,1,1)");
  a[1] = ints_attr("strides", D(3, 2, 1), 3);
  conv(x, w, NULL, a, 2, "3-D strides (3,2,1), pads (1,0,2,0,1,1)");
  dml_attr_t ap;
  memset(&ap, 0, sizeof ap);
  ap.name = "auto_pad", ap.kind = DML_ATTR_STRING, ap.s = "VALID";
  conv(x, w, &b, &ap, 1, "3-D auto_pad VALID");
  a[0] = ap;
  a[1] = ints_attr("strides", D(2, 2, 3), 3);
  a[2] = ints_attr("dilations", D(1, 2, 1), 3);
  a[0].s = "SAME_UPPER";
  conv(x, w, &b, a, 3, "3-D SAME_UPPER, strides (2,2,3), dilations (1,2,1)");
  a[0].s = "SAME_LOWER";
  conv(x, w, &b, a, 3, "3-D SAME_LOWER, strides (2,2,3), dilations (1,2,1)");
  /* an X view: [2,3,7,6,5] with its spatial dims reversed */
  pair_t xb = pair_new(5, D(2, 3, 7, 6, 5), NULL, 4), xv;
  const int64_t perm[5] = {0, 1, 4, 3, 2};
  CHECK_OK(dml_rt_tensor_transpose(xb.c, perm, &xv.c));
  CHECK_OK(dml_rt_tensor_transpose(xb.v, perm, &xv.v));
  conv(xv, w, &b, NULL, 0, "3-D, a transposed X view");
  pair_free(&xv);
  pair_free(&xb);
  pair_free(&x);
  pair_free(&w);
  pair_free(&b);
  /* group 2; depthwise with pads */
  dml_attr_t g;
  memset(&g, 0, sizeof g);
  g.name = "group", g.kind = DML_ATTR_INT, g.i = 2;
  x = pair_new(5, D(1, 4, 4, 5, 5), NULL, 4), w = pair_new(5, D(6, 2, 2, 3, 3), NULL, 4);
  b = pair_new(1, D(6), NULL, 4);
  a[0] = g;
  a[1] = ints_attr("strides", D(2, 2, 2), 3);
  conv(x, w, &b, a, 2, "3-D group 2, strides 2");
  pair_free(&x);
  pair_free(&w);
  pair_free(&b);
  x = pair_new(5, D(2, 3, 4, 4, 4), NULL, 4), w = pair_new(5, D(3, 1, 3, 3, 3), NULL, 4);
  g.i = 3;
  a[0] = g;
  a[1] = ints_attr("pads", D(1, 1, 1, 1, 1, 1), 6);
  conv(x, w, NULL, a, 2, "3-D depthwise, pads 1");
  pair_free(&x);
  /* an empty batch: zeros of the rule's dims */
  x = pair_new(5, D(0, 3, 4, 4, 4), NULL, 4);
  pair_t wf = pair_new(5, D(2, 3, 3, 3, 3), NULL, 4);
  conv(x, wf, NULL, NULL, 0, "3-D, an empty batch");
  pair_free(&x);
  pair_free(&w);
  pair_free(&wf);
  /* edge values in X (W within 1/16), padded */
  enum { E = N_EDGES };
  float ed[2 * 4 * E * 3];
  for (int i = 0; i < 2 * 4 * E * 3; i++) ed[i] = k_edges[(i * 7 + i / E) % E];
  x = pair_new(5, D(1, 2, 4, E, 3), ed, 1),
  w = pair_new(5, D(3, 2, 2, 2, 2), NULL, 0.0625f);
  a[0] = ints_attr("pads", D(1, 1, 1, 1, 1, 1), 6);
  conv(x, w, NULL, a, 1, "3-D edge values, pads 1");
  pair_free(&x);
  pair_free(&w);
  /* edge values in W (X in [-1, 1]), padded: the padding's zeros times an
   * infinite tap are NaN, as on the CPU */
  float we[3 * 2 * 2 * 2 * 2];
  for (int i = 0; i < 3 * 16; i++) we[i] = rnd() / 4;
  we[0] = INFINITY;       /* oc 0, c 0, tap (0, 0, 0) */
  we[16 + 7] = -INFINITY; /* oc 1, c 0, tap (1, 1, 1) */
  we[32 + 8 + 3] = NAN;   /* oc 2, c 1 */
  we[2] = 1e-40f, we[16 + 3] = 3e38f, we[32 + 5] = -1e30f;
  x = pair_new(5, D(1, 2, 3, 4, 5), NULL, 1), w = pair_new(5, D(3, 2, 2, 2, 2), we, 1);
  conv(x, w, NULL, a, 1, "3-D edge weights, pads 1");
  pair_free(&x);
  pair_free(&w);
  /* f16 and bf16 (through f32): small multiples of 1/2, exact sums */
  {
    float xv16[2 * 3 * 4 * 5 * 6], wv16[4 * 3 * 2 * 3 * 2], bv16[4];
    for (int i = 0; i < (int)(sizeof xv16 / 4); i++)
      xv16[i] = (float)((i * 7) % 9 - 4) / 2;
    for (int i = 0; i < (int)(sizeof wv16 / 4); i++)
      wv16[i] = (float)((i * 5) % 7 - 3) / 2;
    for (int i = 0; i < 4; i++) bv16[i] = (float)i - 1.5f;
    static const dml_dtype_t hdt[2] = {DML_DTYPE_F16, DML_DTYPE_BF16};
    for (int h = 0; h < 2; h++) {
      pair_t hx = typed_pair(hdt[h], 5, D(2, 3, 4, 5, 6), xv16),
             hw = typed_pair(hdt[h], 5, D(4, 3, 2, 3, 2), wv16),
             hb = typed_pair(hdt[h], 1, D(4), bv16);
      dml_attr_t ha[2] = {ints_attr("pads", D(1, 0, 1, 0, 1, 1), 6),
                          ints_attr("strides", D(1, 2, 2), 3)};
      char wh[96];
      snprintf(wh, sizeof wh, "3-D %s X [2,3,4,5,6], W [4,3,2,3,2]",
               dml_dtype_name(hdt[h]));
      compare_typed("Conv", (dml_rt_tensor_t[]){hx.c, hw.c, hb.c},
                    (dml_rt_tensor_t[]){hx.v, hw.v, hb.v}, 3, ha, 2, wh);
      pair_free(&hx);
      pair_free(&hw);
      pair_free(&hb);
    }
  }
  /* the errors, on both devices: W's channels disagree with X's */
  x = pair_new(5, D(1, 3, 4, 4, 4), NULL, 4), w = pair_new(5, D(2, 2, 2, 2, 2), NULL, 4);
  dml_rt_tensor_t y, bc[2] = {x.c, w.c}, bv[2] = {x.v, w.v};
  CHECK_ERROR(dml_rt_tensor_op("Conv", bc, 2, NULL, 0, &y, 1),
              DML_STATUS_INVALID_ARGUMENT, "Conv: shape mismatch");
  CHECK_ERROR(dml_rt_tensor_op("Conv", bv, 2, NULL, 0, &y, 1),
              DML_STATUS_INVALID_ARGUMENT, "Conv: shape mismatch");
  CHECK_ERROR(dml_rt_tensor_op("Conv", bv, 2, NULL, 0, &y, 1),
              DML_STATUS_INVALID_ARGUMENT, "[1,3,4,4,4]");
  pair_free(&x);
  pair_free(&w);
  g_rng = rng_saved;
}

/* Einsum: the eager op on the CPU (composed) against the CPU's Einsum
 * kernel (dml_cpu_run, double sums) within 1e-5 of the sum of the
 * products' magnitudes (the kernel on the inputs' absolute values), and on
 * the GPU against the CPU (compare_acc). */
static void einsum_case(const char *eq, const pair_t *in, uint32_t n) {
  dml_attr_t a;
  memset(&a, 0, sizeof a);
  a.name = "equation", a.kind = DML_ATTR_STRING, a.s = eq;
  dml_rt_tensor_t c[4], v[4], ab[4], y;
  for (uint32_t j = 0; j < n; j++) c[j] = in[j].c, v[j] = in[j].v;
  compare_acc("Einsum", c, v, n, &a, 1, eq);
  CHECK_OK(dml_rt_tensor_op("Einsum", c, n, &a, 1, &y, 1));
  dml_tensor_t t[5];
  void *buf[5];
  for (uint32_t j = 0; j <= n; j++) {
    dml_rt_tensor_info_t info;
    int64_t cnt = 0;
    dml_dtype_t dt;
    if (j < n) CHECK_OK(dml_rt_tensor_op("Abs", &c[j], 1, NULL, 0, &ab[j], 1));
    CHECK_OK(dml_rt_tensor_info(j < n ? c[j] : y, &info));
    buf[j] = down_raw(j < n ? c[j] : y, &cnt, &dt);
    memset(&t[j], 0, sizeof t[j]);
    t[j].dtype = info.dtype;
    t[j].rank = info.rank;
    memcpy(t[j].dims, info.dims, sizeof t[j].dims);
    t[j].data = buf[j];
  }
  int64_t ny = (int64_t)(dml_tensor_bytes(&t[n]) / 4);
  float *ref = (float *)calloc((size_t)(ny ? ny : 1), 4),
        *mag = (float *)calloc((size_t)(ny ? ny : 1), 4);
  dml_tensor_t yr = t[n];
  yr.data = ref;
  dml_cpu_call_t call;
  memset(&call, 0, sizeof call);
  call.op = DML_OP_EINSUM;
  call.inputs = t;
  call.n_inputs = n;
  call.outputs = &yr;
  call.n_outputs = 1;
  call.attrs = &a;
  call.n_attrs = 1;
  size_t sb = dml_cpu_scratch_bytes(&call);
  call.scratch = aligned_alloc(64, (sb + 64) / 64 * 64);
  call.scratch_bytes = sb;
  CHECK_OK(dml_cpu_run(&call));
  for (uint32_t j = 0; j < n; j++) { /* the magnitudes: |inputs| */
    int64_t cnt = 0;
    dml_dtype_t dt;
    free(buf[j]);
    buf[j] = down_raw(ab[j], &cnt, &dt);
    t[j].data = buf[j];
  }
  yr.data = mag;
  CHECK_OK(dml_cpu_run(&call));
  free(call.scratch);
  int bad = 0;
  const float *got = (const float *)buf[n];
  for (int64_t i = 0; i < ny; i++)
    if (!(fabsf(got[i] - ref[i]) <= 1e-5f * (fabsf(ref[i]) + mag[i]) + 1e-30f) &&
        bad++ < 3)
      fprintf(stderr, "Einsum %s element %lld: eager %.9g, kernel %.9g\n", eq,
              (long long)i, got[i], ref[i]);
  CHECK(bad == 0);
  free(ref);
  free(mag);
  for (uint32_t j = 0; j <= n; j++) free(buf[j]);
  for (uint32_t j = 0; j < n; j++) CHECK_OK(dml_rt_tensor_free(ab[j]));
  CHECK_OK(dml_rt_tensor_free(y));
}

/* Einsum composed on every device: matrix products, batches, transposes,
 * sums, dot and outer products, broadcast ellipsis, the implicit output,
 * three operands, attention's scores, a label summed within one operand,
 * views; the errors (a diagonal: UNIMPLEMENTED; an ill-formed equation,
 * extents that differ). */
static void test_einsum(void) {
  pair_t A = pair_new(2, D(3, 4), NULL, 4), B = pair_new(2, D(4, 5), NULL, 4),
         C = pair_new(2, D(5, 2), NULL, 4), a3 = pair_new(3, D(2, 3, 4), NULL, 4),
         b3 = pair_new(3, D(2, 4, 5), NULL, 4), v4 = pair_new(1, D(4), NULL, 4),
         w4 = pair_new(1, D(4), NULL, 4), e1 = pair_new(4, D(2, 1, 3, 4), NULL, 4),
         e2 = pair_new(3, D(5, 4, 2), NULL, 4), q = pair_new(4, D(2, 3, 5, 8), NULL, 4),
         k = pair_new(4, D(2, 3, 7, 8), NULL, 4);
  pair_t AB[2] = {A, B}, ABC[3] = {A, B, C}, ab[2] = {a3, b3}, vw[2] = {v4, w4},
         ee[2] = {e1, e2}, qk[2] = {q, k};
  einsum_case("ij,jk->ik", AB, 2);
  einsum_case("ij,jk", AB, 2);
  einsum_case("ij,jk->ki", AB, 2);
  einsum_case("bij,bjk->bik", ab, 2);
  einsum_case("ij->ji", &A, 1);
  einsum_case("ij->", &A, 1);
  einsum_case("ij->i", &A, 1);
  einsum_case("i,i->", vw, 2);
  einsum_case("i,j->ij", vw, 2);
  einsum_case("...ij,...jk->...ik", ee, 2);
  einsum_case("ij,jk,kl->il", ABC, 3);
  einsum_case("bhqd,bhkd->bhqk", qk, 2);
  einsum_case("ij,jk->k", AB, 2);
  pair_t At = pair_transposed(A); /* [4, 3] */
  pair_t tv[2] = {At, B};
  einsum_case("ji,jk->ik", tv, 2);
  /* diagonals: a subscript repeated in one operand */
  pair_t S3 = pair_new(2, D(3, 3), NULL, 4), bS = pair_new(3, D(2, 3, 3), NULL, 4),
         iji = pair_new(3, D(3, 4, 3), NULL, 4), v3 = pair_new(1, D(3), NULL, 4),
         i4 = pair_new(4, D(2, 2, 2, 5), NULL, 4), z0 = pair_new(2, D(0, 0), NULL, 4);
  pair_t S3t = pair_transposed(S3), sv[2] = {S3, v3}, sb[2] = {bS, S3};
  einsum_case("ii->i", &S3, 1);
  einsum_case("ii->", &S3, 1);
  einsum_case("ii", &S3, 1);
  einsum_case("ii->i", &S3t, 1);
  einsum_case("bii->bi", &bS, 1);
  einsum_case("bii->b", &bS, 1);
  einsum_case("iji->ji", &iji, 1);
  einsum_case("iiij->ji", &i4, 1);
  einsum_case("ii,i->i", sv, 2);
  einsum_case("bii,jj->bij", sb, 2);
  einsum_case("ii->i", &z0, 1);
  /* the errors, on both devices */
  dml_attr_t a;
  memset(&a, 0, sizeof a);
  a.name = "equation", a.kind = DML_ATTR_STRING;
  dml_rt_tensor_t y, sq[2] = {At.c, At.v}, mm[2][2] = {{A.c, A.c}, {A.v, A.v}};
  for (int dv = 0; dv < 2; dv++) {
    a.s = "ii->i"; /* [4, 3]: a diagonal of unequal extents */
    CHECK_ERROR(dml_rt_tensor_op("Einsum", &sq[dv], 1, &a, 1, &y, 1),
                DML_STATUS_INVALID_ARGUMENT, "subscript 'i' repeats in input 0 with");
    a.s = "ij,jk->ik"; /* [3,4] x [3,4]: j is 4 and 3 */
    CHECK_ERROR(dml_rt_tensor_op("Einsum", mm[dv], 2, &a, 1, &y, 1),
                DML_STATUS_INVALID_ARGUMENT, "subscript 'j' has extents 4 and 3");
    a.s = "ij->k";
    CHECK_ERROR(dml_rt_tensor_op("Einsum", &sq[dv], 1, &a, 1, &y, 1),
                DML_STATUS_INVALID_ARGUMENT, "Einsum");
  }
  pair_t all[] = {A, B,  C,  a3, b3,  v4, w4, e1, e2, q,
                  k, At, S3, bS, iji, v3, i4, z0, S3t};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) pair_free(&all[i]);
}

/* LayerNormalization, BatchNormalization (inference), InstanceNormalization,
 * the global pools, MaxPool (Y) and AveragePool against the CPU: rows
 * longer than a workgroup (300 > 256), rows holding NaN, +-inf, -0 and
 * subnormals (each its own row: such a row is NaN, or its subnormals may be
 * flushed on the GPU), the pools' paddings, strides, dilations, ceil_mode,
 * auto_pad and both count_include_pad; f16 and bf16 through f32 (one unit in
 * the last place). The normalizations keep their statistics in f32 (the
 * CPU's in double): values of |x| > 1e19, whose squares overflow f32, are
 * left out of them. */
static void test_norm_pool(void) {
  /* LayerNormalization: x [5, 300], specials in rows 1 to 3 */
  float *xv = mixed_values(5 * 300, 300, 97, 0, 9); /* NaN .. -1e-30 */
  float *sv = mixed_values(300, 0, 0, 0, 0), *bv = mixed_values(300, 0, 0, 0, 0);
  pair_t ln[3] = {pair_new(2, D(5, 300), xv, 1), pair_new(1, D(300), sv, 1),
                  pair_new(1, D(300), bv, 1)};
  composed_case("LayerNormalization", ln, 3, NULL, 0, 1, "[5,300], axis -1");
  composed_case("LayerNormalization", ln, 2, NULL, 0, 1, "[5,300], no B");
  dml_attr_t at[4];
  memset(at, 0, sizeof at);
  at[0].name = "epsilon", at[0].kind = DML_ATTR_FLOAT, at[0].f = 0.25;
  composed_case("LayerNormalization", ln, 3, at, 1, 1, "[5,300], epsilon 0.25");
  for (int j = 0; j < 3; j++) pair_free(&ln[j]);
  /* axis 1 of [2, 3, 4, 5] (the normalized block [4, 5] and its scale) */
  float *x4 = mixed_values(120, 50, 0, 0, 0);
  pair_t ln4[3] = {pair_new(4, D(2, 3, 4, 5), x4, 1), pair_new(3, D(3, 4, 5), x4, 1),
                   pair_new(1, D(5), x4 + 7, 1)};
  at[0].name = "axis", at[0].kind = DML_ATTR_INT, at[0].i = 1;
  composed_case("LayerNormalization", ln4, 3, at, 1, 1, "[2,3,4,5], axis 1");
  for (int j = 0; j < 3; j++) pair_free(&ln4[j]);
  /* BatchNormalization: X [2, 3, 17, 19], var > 0 */
  float *bx = mixed_values(2 * 3 * 17 * 19, 5, 61, 0, 18);
  /* NaN .. -1e-30 only (the statistics' and the f16/bf16 cases' inputs) */
  float *sx = mixed_values(2 * 3 * 17 * 19, 5, 200, 0, 10);
  float pv[4][3] = {{0.5f, -2.0f, 1.25f},
                    {0.1f, -0.3f, 7.0f},
                    {0.2f, -1.0f, 3.0f},
                    {1.0f, 0.01f, 4.0f}};
  pair_t bn[5] = {pair_new(4, D(2, 3, 17, 19), bx, 1), pair_new(1, D(3), pv[0], 1),
                  pair_new(1, D(3), pv[1], 1), pair_new(1, D(3), pv[2], 1),
                  pair_new(1, D(3), pv[3], 1)};
  composed_case("BatchNormalization", bn, 5, NULL, 0, 1, "[2,3,17,19], edges");
  at[0].name = "epsilon", at[0].kind = DML_ATTR_FLOAT, at[0].f = 1e-3;
  composed_case("BatchNormalization", bn, 5, at, 1, 1, "[2,3,17,19], epsilon 1e-3");
  /* InstanceNormalization: [2, 3, 300] (rows of 300), specials in rows */
  float *ix = mixed_values(2 * 3 * 300, 300, 211, 0, 9);
  pair_t in3[3] = {pair_new(3, D(2, 3, 300), ix, 1), bn[1], bn[2]};
  composed_case("InstanceNormalization", in3, 3, NULL, 0, 1, "[2,3,300]");
  pair_free(&in3[0]);
  pair_t in4[3] = {pair_new(4, D(2, 3, 17, 19), sx, 1), bn[1], bn[2]};
  composed_case("InstanceNormalization", in4, 3, NULL, 0, 1, "[2,3,17,19], edges");
  pair_free(&in4[0]);
  /* the global pools: every edge value (GlobalMaxPool exact) */
  pair_t gx = pair_new(4, D(2, 3, 17, 19), bx, 1);
  composed_case("GlobalMaxPool", &gx, 1, NULL, 0, 0, "[2,3,17,19], edges");
  composed_case("GlobalAveragePool", &bn[0], 1, NULL, 0, 1, "[2,3,17,19], edges");
  pair_free(&gx);
  float *lx = mixed_values(2 * 2 * 700, 3, 101, 0, 9);
  pair_t g1 = pair_new(3, D(2, 2, 700), lx, 1);
  composed_case("GlobalAveragePool", &g1, 1, NULL, 0, 1, "[2,2,700]");
  composed_case("GlobalMaxPool", &g1, 1, NULL, 0, 0, "[2,2,700]");
  /* the window pools */
  dml_attr_t pa[6];
  memset(pa, 0, sizeof pa);
  static const int64_t k33[2] = {3, 3}, s22[2] = {2, 2}, p1[4] = {1, 1, 1, 1},
                       d22[2] = {2, 2}, p0121[4] = {0, 1, 2, 1}, k2[2] = {2, 2};
  struct {
    const char *what;
    const int64_t *k, *s, *p, *d;
    const char *auto_pad;
    int ceil;
  } pc[] = {
      {"3x3, strides 2, pads 1", k33, s22, p1, NULL, NULL, 0},
      {"3x3, strides 2, pads 1, ceil_mode", k33, s22, p1, NULL, NULL, 1},
      {"3x3, dilations 2, pads 0 1 2 1", k33, NULL, p0121, d22, NULL, 0},
      {"2x2, strides 2", k2, s22, NULL, NULL, NULL, 0},
      {"3x3, strides 2, SAME_UPPER", k33, s22, NULL, NULL, "SAME_UPPER", 0},
      {"3x3, strides 2, SAME_LOWER", k33, s22, NULL, NULL, "SAME_LOWER", 0},
  };
  for (size_t c = 0; c < sizeof pc / sizeof pc[0]; c++) {
    uint32_t na = 0;
    pa[na++] = ints_attr("kernel_shape", pc[c].k, 2);
    if (pc[c].s) pa[na++] = ints_attr("strides", pc[c].s, 2);
    if (pc[c].p) pa[na++] = ints_attr("pads", pc[c].p, 4);
    if (pc[c].d) pa[na++] = ints_attr("dilations", pc[c].d, 2);
    if (pc[c].auto_pad) {
      memset(&pa[na], 0, sizeof pa[na]);
      pa[na].name = "auto_pad", pa[na].kind = DML_ATTR_STRING,
      pa[na++].s = pc[c].auto_pad;
    }
    if (pc[c].ceil) {
      memset(&pa[na], 0, sizeof pa[na]);
      pa[na].name = "ceil_mode", pa[na].kind = DML_ATTR_INT, pa[na++].i = 1;
    }
    composed_case("MaxPool", &bn[0], 1, pa, na, 0, pc[c].what);
    composed_case("AveragePool", &bn[0], 1, pa, na, 1, pc[c].what);
    memset(&pa[na], 0, sizeof pa[na]);
    pa[na].name = "count_include_pad", pa[na].kind = DML_ATTR_INT, pa[na].i = 1;
    char w[96];
    snprintf(w, sizeof w, "%s, count_include_pad", pc[c].what);
    composed_case("AveragePool", &bn[0], 1, pa, na + 1, 1, w);
  }
  /* 1-D windows over rows of 700 */
  static const int64_t k5[1] = {5}, s3[1] = {3}, p22[2] = {2, 2};
  pa[0] = ints_attr("kernel_shape", k5, 1);
  pa[1] = ints_attr("strides", s3, 1);
  pa[2] = ints_attr("pads", p22, 2);
  composed_case("MaxPool", &g1, 1, pa, 3, 0, "1-D [2,2,700], 5, strides 3, pads 2");
  composed_case("AveragePool", &g1, 1, pa, 3, 1, "1-D [2,2,700], 5, strides 3, pads 2");
  pair_free(&g1);
  /* f16 and bf16 (through f32) */
  static const dml_dtype_t hdt[2] = {DML_DTYPE_F16, DML_DTYPE_BF16};
  for (int h = 0; h < 2; h++) {
    char w[96];
    pair_t t[5];
    for (int j = 0; j < 5; j++)
      t[j] = j == 0 ? typed_pair(hdt[h], 4, D(2, 3, 17, 19), sx)
                    : typed_pair(hdt[h], 1, D(3), pv[j - 1]);
    snprintf(w, sizeof w, "%s [2,3,17,19]", dml_dtype_name(hdt[h]));
    composed_case("BatchNormalization", t, 5, NULL, 0, 1, w);
    composed_case("InstanceNormalization", t, 3, NULL, 0, 1, w);
    composed_case("GlobalAveragePool", t, 1, NULL, 0, 1, w);
    composed_case("GlobalMaxPool", t, 1, NULL, 0, 0, w);
    pa[0] = ints_attr("kernel_shape", k33, 2);
    pa[1] = ints_attr("strides", s22, 2);
    pa[2] = ints_attr("pads", p1, 4);
    composed_case("MaxPool", t, 1, pa, 3, 0, w);
    composed_case("AveragePool", t, 1, pa, 3, 1, w);
    pair_t l[2] = {typed_pair(hdt[h], 2, D(5, 300), xv),
                   typed_pair(hdt[h], 1, D(300), sv)};
    composed_case("LayerNormalization", l, 2, NULL, 0, 1, w);
    for (int j = 0; j < 5; j++) pair_free(&t[j]);
    for (int j = 0; j < 2; j++) pair_free(&l[j]);
  }
  /* f64 and the integers: MaxPool and GlobalMaxPool select values (bit
   * for bit); BatchNormalization and AveragePool of f64 (the f64
   * kernels) within 1e-15 relative of the CPU's double */
  static const dml_dtype_t odt[4] = {DML_DTYPE_F64, DML_DTYPE_I32, DML_DTYPE_U8,
                                     DML_DTYPE_I64};
  for (int o = 0; o < 4; o++) {
    char w[96];
    snprintf(w, sizeof w, "%s [2,3,17,19]", dml_dtype_name(odt[o]));
    pair_t t = typed_pair(odt[o], 4, D(2, 3, 17, 19), sx);
    pa[0] = ints_attr("kernel_shape", k33, 2);
    pa[1] = ints_attr("strides", s22, 2);
    pa[2] = ints_attr("pads", p1, 4);
    compare_typed("MaxPool", &t.c, &t.v, 1, pa, 3, w);
    compare_typed("GlobalMaxPool", &t.c, &t.v, 1, NULL, 0, w);
    if (odt[o] == DML_DTYPE_F64) {
      pair_t q[5];
      q[0] = t;
      for (int j = 1; j < 5; j++) q[j] = typed_pair(odt[o], 1, D(3), pv[j - 1]);
      const char *ops[2] = {"BatchNormalization", "AveragePool"};
      for (int k = 0; k < 2; k++) {
        dml_rt_tensor_t c5[5], v5[5], yc, yv;
        for (int j = 0; j < 5; j++) c5[j] = q[j].c, v5[j] = q[j].v;
        CHECK_OK(dml_rt_tensor_op(ops[k], c5, k ? 1u : 5u, pa, k ? 3u : 0u, &yc, 1));
        CHECK_OK(dml_rt_tensor_op(ops[k], v5, k ? 1u : 5u, pa, k ? 3u : 0u, &yv, 1));
        int64_t n1 = 0, n2 = 0;
        dml_dtype_t d1, d2;
        double *a1 = (double *)down_raw(yc, &n1, &d1),
               *a2 = (double *)down_raw(yv, &n2, &d2);
        int bad = 0;
        for (int64_t i = 0; i < n1 && i < n2; i++) {
          int ok = (isnan(a1[i]) && isnan(a2[i])) || a1[i] == a2[i] ||
                   fabs(a1[i] - a2[i]) <= 1e-15 * fabs(a1[i]);
          if (!ok && bad++ < 3)
            fprintf(stderr, "%s (%s) element %lld: " TEST_GPU " %.17g, cpu %.17g\n",
                    ops[k], w, (long long)i, a2[i], a1[i]);
        }
        if (bad) g_mismatches++;
        CHECK(n1 == n2 && d1 == d2 && bad == 0);
        free(a1);
        free(a2);
        CHECK_OK(dml_rt_tensor_free(yc));
        CHECK_OK(dml_rt_tensor_free(yv));
      }
      for (int j = 1; j < 5; j++) pair_free(&q[j]);
    }
    pair_free(&t);
  }
  for (int j = 0; j < 5; j++) pair_free(&bn[j]);
  /* the errors */
  dml_rt_tensor_t y[2];
  pair_t e4 = pair_new(4, D(1, 2, 5, 5), NULL, 1);
  pa[0] = ints_attr("kernel_shape", k2, 2);
  { /* Indices of a 4-D window: not in the index kernel */
    pair_t e6 = pair_new(6, D(1, 1, 2, 2, 2, 2), NULL, 1);
    static const int64_t k2222[4] = {2, 2, 2, 2};
    dml_attr_t k4 = ints_attr("kernel_shape", k2222, 4);
    CHECK_ERROR(dml_rt_tensor_op("MaxPool", &e6.v, 1, &k4, 1, y, 2),
                DML_STATUS_UNIMPLEMENTED, "1-D, 2-D and 3-D windows only");
    pair_free(&e6);
  }
  pa[0] = ints_attr("kernel_shape", k5, 1);
  CHECK_ERROR(dml_rt_tensor_op("MaxPool", &e4.v, 1, pa, 1, y, 1),
              DML_STATUS_INVALID_ARGUMENT, "have the wrong length");
  dml_rt_tensor_t b5[5] = {e4.v, e4.v, e4.v, e4.v, e4.v};
  CHECK_ERROR(dml_rt_tensor_op("BatchNormalization", b5, 5, NULL, 0, y, 1),
              DML_STATUS_INVALID_ARGUMENT, "scale, B, mean and var must be [2]");
  pair_free(&e4);
  free(xv);
  free(sv);
  free(bv);
  free(x4);
  free(bx);
  free(sx);
  free(ix);
  free(lx);
}

/* Pad (constant with constant_value, the `value` attribute or 0; reflect,
 * edge and wrap with pads beyond the dim, negative pads cropping), Tile
 * (repeats 0 included), Split (sizes, equal parts), Reshape, Flatten,
 * Squeeze, Unsqueeze (views where the strides allow: no new storage) and
 * GatherElements (negative indices; an index out of range OUT_OF_RANGE as
 * on the CPU) bit for bit against the CPU: f32 edge values, i64, u8, f16,
 * f64; views as inputs. */
static void test_move_ops(void) {
  static const dml_dtype_t dts[] = {DML_DTYPE_F32, DML_DTYPE_I64, DML_DTYPE_U8,
                                    DML_DTYPE_F16, DML_DTYPE_F64};
  float *ev = edge_values(3 * 4 * 5, 2);
  for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++) {
    dml_dtype_t dt = dts[t];
    char what[128];
    pair_t x = typed_pair(dt, 3, D(3, 4, 5), ev);
    pair_t xt; /* a transposed view [5, 4, 3] */
    CHECK_OK(dml_rt_tensor_transpose(x.c, NULL, &xt.c));
    CHECK_OK(dml_rt_tensor_transpose(x.v, NULL, &xt.v));
    float cvf = -1.5f;
    pair_t cv = typed_pair(dt, 0, D(1), &cvf);
    static const int64_t pads_a[6] = {1, 0, 2, 0, 3, 1}, pads_b[6] = {0, -1, 7, 2, 0, -2},
                         pads_c[6] = {5, 9, 0, 4, 11, 3};
    const int64_t *pads[3] = {pads_a, pads_b, pads_c};
    static const char *const modes[4] = {"constant", "reflect", "edge", "wrap"};
    for (int pi = 0; pi < 3; pi++) {
      pair_t pp = i64_pair(6, pads[pi]);
      for (int m = 0; m < 4; m++) {
        dml_attr_t ma;
        memset(&ma, 0, sizeof ma);
        ma.name = "mode", ma.kind = DML_ATTR_STRING, ma.s = modes[m];
        for (int v = 0; v < 2; v++) { /* x, then its transposed view */
          pair_t src = v ? xt : x;
          dml_rt_tensor_t c3[3] = {src.c, pp.c, cv.c}, v3[3] = {src.v, pp.v, cv.v};
          snprintf(what, sizeof what, "%s %s, pads %d%s", dml_dtype_name(dt), modes[m],
                   pi, v ? ", transposed view" : "");
          compare_bits("Pad", c3, v3, m == 0 ? 3u : 2u, &ma, 1, what);
          if (m == 0) { /* no constant_value: 0 */
            snprintf(what, sizeof what, "%s constant 0, pads %d", dml_dtype_name(dt), pi);
            compare_bits("Pad", c3, v3, 2, &ma, 1, what);
          }
        }
      }
      pair_free(&pp);
    }
    /* Tile */
    static const int64_t r1[3] = {2, 1, 3}, r2[3] = {1, 0, 2}, r3[3] = {1, 1, 1};
    const int64_t *reps[3] = {r1, r2, r3};
    for (int ri = 0; ri < 3; ri++) {
      pair_t rp = i64_pair(3, reps[ri]);
      for (int v = 0; v < 2; v++) {
        pair_t src = v ? xt : x;
        dml_rt_tensor_t c2[2] = {src.c, rp.c}, v2[2] = {src.v, rp.v};
        snprintf(what, sizeof what, "%s repeats %d%s", dml_dtype_name(dt), ri,
                 v ? ", transposed view" : "");
        compare_bits("Tile", c2, v2, 2, NULL, 0, what);
      }
      pair_free(&rp);
    }
    /* Split: sizes [1, 3] on axis 1, equal parts on axis 2 (5 = 2 + 2 + 1) */
    for (int sp = 0; sp < 2; sp++) {
      pair_t sz = i64_pair(2, D(1, 3));
      dml_attr_t sa[2];
      memset(sa, 0, sizeof sa);
      sa[0].name = "axis", sa[0].kind = DML_ATTR_INT, sa[0].i = sp ? 2 : 1;
      sa[1].name = "num_outputs", sa[1].kind = DML_ATTR_INT, sa[1].i = 3;
      dml_rt_tensor_t c2[2] = {x.c, sz.c}, v2[2] = {x.v, sz.v}, yc[3], yv[3];
      uint32_t no = sp ? 3u : 2u;
      CHECK_OK(dml_rt_tensor_op("Split", c2, sp ? 1u : 2u, sa, sp ? 2u : 1u, yc, no));
      CHECK_OK(dml_rt_tensor_op("Split", v2, sp ? 1u : 2u, sa, sp ? 2u : 1u, yv, no));
      for (uint32_t o = 0; o < no; o++) {
        dml_rt_tensor_t one_c = yc[o], one_v = yv[o];
        snprintf(what, sizeof what, "%s part %u", dml_dtype_name(dt), o);
        compare_bits("Identity", &one_c, &one_v, 1, NULL, 0, what);
        CHECK_OK(dml_rt_tensor_free(yc[o]));
        CHECK_OK(dml_rt_tensor_free(yv[o]));
      }
      pair_free(&sz);
    }
    /* the reshape family: views of a contiguous x (no storage made) */
    {
      pair_t shp = i64_pair(2, D(-1, 10)), ax = i64_pair(2, D(0, 3));
      dml_rt_tensor_t c2[2] = {x.c, shp.c}, v2[2] = {x.v, shp.v};
      snprintf(what, sizeof what, "%s Reshape [-1, 10]", dml_dtype_name(dt));
      compare_bits("Reshape", c2, v2, 2, NULL, 0, what);
      compare_bits("Flatten", c2, v2, 1, NULL, 0, what);
      dml_rt_tensor_t cu[2] = {x.c, ax.c}, vu[2] = {x.v, ax.v};
      compare_bits("Unsqueeze", cu, vu, 2, NULL, 0, what);
      uint64_t ns = dml_rt_device_num_storages(g_vk);
      dml_rt_tensor_t y = DML_RT_TENSOR_NONE, z = DML_RT_TENSOR_NONE;
      CHECK_OK(dml_rt_tensor_op("Unsqueeze", vu, 2, NULL, 0, &y, 1));
      CHECK(dml_rt_device_num_storages(g_vk) == ns); /* a view */
      CHECK_OK(dml_rt_tensor_op("Squeeze", &y, 1, NULL, 0, &z, 1));
      CHECK(dml_rt_device_num_storages(g_vk) == ns);
      dml_rt_tensor_info_t iz;
      CHECK_OK(dml_rt_tensor_info(z, &iz));
      CHECK(iz.rank == 3 && iz.dims[0] == 3 && iz.dims[1] == 4 && iz.dims[2] == 5);
      CHECK_OK(dml_rt_tensor_free(y));
      CHECK_OK(dml_rt_tensor_free(z));
      dml_rt_tensor_t ct[2] = {xt.c, shp.c}, vt[2] = {xt.v, shp.v}; /* a copy */
      snprintf(what, sizeof what, "%s Reshape of a transposed view", dml_dtype_name(dt));
      compare_bits("Reshape", ct, vt, 2, NULL, 0, what);
      pair_free(&shp);
      pair_free(&ax);
    }
    /* GatherElements: axis 0 of x and of its transposed view, axis 2;
     * negative indices */
    static const int64_t i0[2 * 4 * 5] = {0, 2,  -1, 1,  -3, 2, 1, 0, 0, 1,  -2, 2, 1, 0,
                                          2, 1,  0,  -1, 2,  2, 1, 1, 0, 2,  -3, 0, 0, 1,
                                          2, -1, 2,  1,  0,  0, 1, 2, 2, -2, 1,  0};
    for (int gc = 0; gc < 3; gc++) {
      int64_t iv[2 * 4 * 5];
      for (int i = 0; i < 40; i++) iv[i] = gc == 2 ? i0[i] + i % 2 : i0[i];
      dml_tensor_t h;
      memset(&h, 0, sizeof h);
      h.dtype = DML_DTYPE_I64;
      h.rank = 3;
      h.dims[0] = gc == 2 ? 3 : 2, h.dims[1] = 4, h.dims[2] = gc == 0 ? 5 : 3;
      h.data = iv;
      pair_t ind;
      CHECK_OK(dml_rt_tensor_from_host(g_cpu, &h, &ind.c));
      CHECK_OK(dml_rt_tensor_from_host(g_vk, &h, &ind.v));
      dml_attr_t ga;
      memset(&ga, 0, sizeof ga);
      ga.name = "axis", ga.kind = DML_ATTR_INT, ga.i = gc == 2 ? 2 : 0;
      pair_t src = gc == 1 ? xt : x;
      dml_rt_tensor_t c2[2] = {src.c, ind.c}, v2[2] = {src.v, ind.v};
      snprintf(what, sizeof what, "%s GatherElements axis %d%s", dml_dtype_name(dt),
               (int)ga.i, gc == 1 ? ", transposed view" : "");
      compare_bits("GatherElements", c2, v2, 2, &ga, 1, what);
      pair_free(&ind);
    }
    pair_free(&cv);
    pair_free(&xt);
    pair_free(&x);
  }
  free(ev);
  /* the errors: an index out of range, on both devices */
  pair_t x = pair_new(2, D(3, 4), NULL, 1), bad = i64_pair(2, D(1, 4)),
         neg = i64_pair(2, D(-5, 0));
  dml_rt_tensor_t y, xb[2];
  dml_attr_t ga;
  memset(&ga, 0, sizeof ga);
  ga.name = "axis", ga.kind = DML_ATTR_INT, ga.i = 1;
  dml_rt_tensor_t xi_c, xi_v; /* [3, 2] indices */
  CHECK_OK(dml_rt_tensor_expand(bad.c, 2, D(3, 2), &xi_c));
  CHECK_OK(dml_rt_tensor_expand(bad.v, 2, D(3, 2), &xi_v));
  xb[0] = x.c, xb[1] = xi_c;
  CHECK_ERROR(dml_rt_tensor_op("GatherElements", xb, 2, &ga, 1, &y, 1),
              DML_STATUS_OUT_OF_RANGE, "index 4");
  xb[0] = x.v, xb[1] = xi_v;
  CHECK_ERROR(dml_rt_tensor_op("GatherElements", xb, 2, &ga, 1, &y, 1),
              DML_STATUS_OUT_OF_RANGE, "index 4 is out of range [-4, 3]");
  CHECK_OK(dml_rt_tensor_free(xi_v));
  CHECK_OK(dml_rt_tensor_expand(neg.v, 2, D(3, 2), &xi_v));
  xb[1] = xi_v;
  CHECK_ERROR(dml_rt_tensor_op("GatherElements", xb, 2, &ga, 1, &y, 1),
              DML_STATUS_OUT_OF_RANGE, "index -5 is out of range");
  /* Gather: the same check on the device (an index out of range was 0
   * there before) */
  pair_t g3 = i64_pair(3, D(2, 3, 0)), gm = i64_pair(2, D(-4, 1));
  xb[0] = x.c, xb[1] = g3.c;
  CHECK_ERROR(dml_rt_tensor_op("Gather", xb, 2, NULL, 0, &y, 1), DML_STATUS_OUT_OF_RANGE,
              "index 3");
  xb[0] = x.v, xb[1] = g3.v;
  CHECK_ERROR(dml_rt_tensor_op("Gather", xb, 2, NULL, 0, &y, 1), DML_STATUS_OUT_OF_RANGE,
              "error: Gather: index 3 is out of range [-3, 2] (on " TEST_GPU);
  xb[1] = gm.v;
  CHECK_ERROR(dml_rt_tensor_op("Gather", xb, 2, NULL, 0, &y, 1), DML_STATUS_OUT_OF_RANGE,
              "index -4 is out of range [-3, 2]");
  xb[1] = gm.v; /* in range on axis 1 */
  dml_attr_t g1 = ga;
  CHECK_OK(dml_rt_tensor_op("Gather", xb, 2, &g1, 1, &y, 1));
  CHECK_OK(dml_rt_tensor_free(y));
  pair_free(&g3);
  pair_free(&gm);
  CHECK_OK(dml_rt_tensor_free(xi_c));
  CHECK_OK(dml_rt_tensor_free(xi_v));
  pair_free(&x);
  pair_free(&bad);
  pair_free(&neg);
}

/* MatMul, Gemm and Conv of f16 and bf16 operands (through f32: f32
 * accumulation, one rounding) against the CPU within one unit in the last
 * place plus 1e-5 of the products' magnitudes (compare_typed_l1): K of
 * 300 (longer than a workgroup), Gemm's transB and alpha, Conv with pads,
 * strides and a bias. */
static void test_half_mm(void) {
  static const dml_dtype_t hdt[2] = {DML_DTYPE_F16, DML_DTYPE_BF16};
  float *av = mixed_values(7 * 300, 0, 0, 0, 0), *bv = mixed_values(300 * 5, 0, 0, 0, 0);
  float *cv = mixed_values(5, 0, 0, 0, 0);
  for (int h = 0; h < 2; h++) {
    char w[96];
    snprintf(w, sizeof w, "%s [7,300] x [300,5]", dml_dtype_name(hdt[h]));
    pair_t m[3] = {typed_pair(hdt[h], 2, D(7, 300), av),
                   typed_pair(hdt[h], 2, D(300, 5), bv), typed_pair(hdt[h], 1, D(5), cv)};
    compare_typed_l1("MatMul", (dml_rt_tensor_t[]){m[0].c, m[1].c},
                     (dml_rt_tensor_t[]){m[0].v, m[1].v}, 2, NULL, 0, 1, w);
    pair_t bt = typed_pair(hdt[h], 2, D(5, 300), bv);
    dml_attr_t ga[2];
    memset(ga, 0, sizeof ga);
    ga[0].name = "transB", ga[0].kind = DML_ATTR_INT, ga[0].i = 1;
    ga[1].name = "alpha", ga[1].kind = DML_ATTR_FLOAT, ga[1].f = 0.5;
    compare_typed_l1("Gemm", (dml_rt_tensor_t[]){m[0].c, bt.c, m[2].c},
                     (dml_rt_tensor_t[]){m[0].v, bt.v, m[2].v}, 3, ga, 2, 1, w);
    pair_t cx = typed_pair(hdt[h], 4, D(1, 3, 10, 70), av),
           cw = typed_pair(hdt[h], 4, D(4, 3, 3, 3), bv),
           cb = typed_pair(hdt[h], 1, D(4), cv);
    dml_attr_t ca[2] = {ints_attr("pads", D(1, 1, 1, 1), 4),
                        ints_attr("strides", D(1, 2), 2)};
    snprintf(w, sizeof w, "%s X [1,3,10,70], W [4,3,3,3]", dml_dtype_name(hdt[h]));
    compare_typed_l1("Conv", (dml_rt_tensor_t[]){cx.c, cw.c, cb.c},
                     (dml_rt_tensor_t[]){cx.v, cw.v, cb.v}, 3, ca, 2, 1, w);
    for (int j = 0; j < 3; j++) pair_free(&m[j]);
    pair_free(&bt);
    pair_free(&cx);
    pair_free(&cw);
    pair_free(&cb);
  }
  /* f64: the f64 kernels (every operand packed into binding 1 unless they
   * share a storage): equal to the CPU's double sums within 1e-13 of the
   * sum of the products' magnitudes (the order of the k sum differs) */
  {
    pair_t a = typed_pair(DML_DTYPE_F64, 2, D(7, 300), av),
           b = typed_pair(DML_DTYPE_F64, 2, D(300, 5), bv),
           c = typed_pair(DML_DTYPE_F64, 1, D(5), cv),
           bt = typed_pair(DML_DTYPE_F64, 2, D(5, 300), bv),
           cx = typed_pair(DML_DTYPE_F64, 4, D(1, 3, 10, 70), av),
           cw = typed_pair(DML_DTYPE_F64, 4, D(4, 3, 3, 3), bv),
           cb = typed_pair(DML_DTYPE_F64, 1, D(4), cv);
    pair_t at; /* a transposed view of bt: a strided B */
    CHECK_OK(dml_rt_tensor_transpose(bt.c, NULL, &at.c));
    CHECK_OK(dml_rt_tensor_transpose(bt.v, NULL, &at.v));
    dml_attr_t ga[2];
    memset(ga, 0, sizeof ga);
    ga[0].name = "transB", ga[0].kind = DML_ATTR_INT, ga[0].i = 1;
    ga[1].name = "alpha", ga[1].kind = DML_ATTR_FLOAT, ga[1].f = 0.5;
    dml_attr_t ca[2] = {ints_attr("pads", D(1, 1, 1, 1), 4),
                        ints_attr("strides", D(1, 2), 2)};
    struct {
      const char *op, *what;
      dml_rt_tensor_t c[3], v[3];
      uint32_t n, na;
      const dml_attr_t *a;
    } cs[] = {
        {"MatMul", "f64 [7,300] x [300,5]", {a.c, b.c}, {a.v, b.v}, 2, 0, NULL},
        {"MatMul",
         "f64 [7,300] x a transposed view",
         {a.c, at.c},
         {a.v, at.v},
         2,
         0,
         NULL},
        {"MatMul",
         "f64 A x A^T (one storage)",
         {a.c, DML_RT_TENSOR_NONE},
         {a.v, DML_RT_TENSOR_NONE},
         2,
         0,
         NULL},
        {"Gemm", "f64 transB, alpha 0.5", {a.c, bt.c, c.c}, {a.v, bt.v, c.v}, 3, 2, ga},
        {"Conv",
         "f64 X [1,3,10,70], W [4,3,3,3]",
         {cx.c, cw.c, cb.c},
         {cx.v, cw.v, cb.v},
         3,
         2,
         ca},
        {"Conv", "f64, no bias", {cx.c, cw.c}, {cx.v, cw.v}, 2, 2, ca},
    };
    pair_t aT;
    CHECK_OK(dml_rt_tensor_transpose(a.c, NULL, &aT.c));
    CHECK_OK(dml_rt_tensor_transpose(a.v, NULL, &aT.v));
    cs[2].c[1] = aT.c, cs[2].v[1] = aT.v;
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
      dml_rt_tensor_t yc = DML_RT_TENSOR_NONE, yv = DML_RT_TENSOR_NONE,
                      yl = DML_RT_TENSOR_NONE, ab[3];
      CHECK_OK(dml_rt_tensor_op(cs[i].op, cs[i].c, cs[i].n, cs[i].a, cs[i].na, &yc, 1));
      dml_status_t e =
          dml_rt_tensor_op(cs[i].op, cs[i].v, cs[i].n, cs[i].a, cs[i].na, &yv, 1);
      if (e) fprintf(stderr, "%s (%s) on " TEST_GPU " failed\n", cs[i].op, cs[i].what);
      CHECK_OK(e);
      if (e) {
        CHECK_OK(dml_rt_tensor_free(yc));
        continue;
      }
      for (uint32_t j = 0; j < cs[i].n; j++)
        CHECK_OK(dml_rt_tensor_op("Abs", &cs[i].c[j], 1, NULL, 0, &ab[j], 1));
      CHECK_OK(dml_rt_tensor_op(cs[i].op, ab, cs[i].n, cs[i].a, cs[i].na, &yl, 1));
      int64_t n = 0, nv = 0, nl = 0;
      dml_dtype_t d1, d2, d3;
      double *pc = (double *)down_raw(yc, &n, &d1),
             *pv = (double *)down_raw(yv, &nv, &d2),
             *pl = (double *)down_raw(yl, &nl, &d3);
      CHECK(n == nv && n == nl && d1 == DML_DTYPE_F64 && d2 == DML_DTYPE_F64);
      int bad = 0;
      for (int64_t k = 0; k < n && k < nv; k++)
        if (!(fabs(pv[k] - pc[k]) <= 1e-13 * (fabs(pl[k]) + fabs(pc[k])) + 1e-300) &&
            bad++ < 3)
          fprintf(stderr, "%s (%s) element %lld: " TEST_GPU " %.17g, cpu %.17g\n",
                  cs[i].op, cs[i].what, (long long)k, pv[k], pc[k]);
      if (bad) g_mismatches++;
      CHECK(bad == 0);
      free(pc);
      free(pv);
      free(pl);
      for (uint32_t j = 0; j < cs[i].n; j++) CHECK_OK(dml_rt_tensor_free(ab[j]));
      CHECK_OK(dml_rt_tensor_free(yc));
      CHECK_OK(dml_rt_tensor_free(yv));
      CHECK_OK(dml_rt_tensor_free(yl));
    }
    pair_t all[] = {a, b, c, bt, at, aT, cx, cw, cb};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) pair_free(&all[i]);
  }
  free(av);
  free(bv);
  free(cv);
}

static void test_errors(void) {
  int64_t d34[2] = {3, 4}, d56[2] = {5, 6};
  dml_rt_tensor_t a, b, y;
  CHECK_OK(dml_rt_tensor_zeros(g_vk, DML_DTYPE_F32, 2, d34, &a));
  CHECK_OK(dml_rt_tensor_zeros(g_vk, DML_DTYPE_F32, 2, d56, &b));
  dml_rt_tensor_t in[2] = {a, b};
  uint64_t before = dml_rt_device_bytes(g_vk);
  /* the op and the device it ran on, not the CPU's shape rule it borrows
   * (rt.cpu.Add) */
  CHECK_ERROR(dml_rt_tensor_op("Add", in, 2, NULL, 0, &y, 1), DML_STATUS_INVALID_ARGUMENT,
              "error: Add: shape mismatch (on " TEST_GPU);
  CHECK_ERROR(dml_rt_tensor_op("Add", in, 2, NULL, 0, &y, 1), DML_STATUS_INVALID_ARGUMENT,
              "[3,4]");
  CHECK_ERROR(dml_rt_tensor_op("Add", in, 2, NULL, 0, &y, 1), DML_STATUS_INVALID_ARGUMENT,
              "[5,6]");
  CHECK(dml_rt_device_bytes(g_vk) == before); /* no output left behind */
  dml_attr_t ax5 = {0};
  ax5.name = "axis";
  ax5.kind = DML_ATTR_INT;
  ax5.i = 5;
  CHECK_ERROR(dml_rt_tensor_op("ArgMax", &a, 1, &ax5, 1, &y, 1),
              DML_STATUS_INVALID_ARGUMENT,
              "error: ArgMax: axis out of range (on " TEST_GPU);
  dml_attr_t axes5 = ints_attr("axes", D(5), 1);
  CHECK_ERROR(dml_rt_tensor_op("ReduceSum", &a, 1, &axes5, 1, &y, 1),
              DML_STATUS_INVALID_ARGUMENT, "error: ReduceSum: ");
  CHECK_ERROR(dml_rt_tensor_op("ReduceSum", &a, 1, &axes5, 1, &y, 1),
              DML_STATUS_INVALID_ARGUMENT, "(on " TEST_GPU);
  /* an op outside the library: a clear error, never a CPU fallback */
  CHECK_ERROR(dml_rt_tensor_op("LpNormalization", &a, 1, NULL, 0, &y, 1),
              DML_STATUS_UNIMPLEMENTED,
              "eager op LpNormalization with 1 inputs is not implemented on " TEST_GPU);
  /* an attribute value the op does not accept (the formula table's
   * attributes are taken at dispatch: test_table_ops runs other values) */
  dml_attr_t alpha = {0};
  alpha.name = "alpha";
  alpha.kind = DML_ATTR_FLOAT;
  alpha.f = 0.0;
  CHECK_ERROR(dml_rt_tensor_op("Celu", &a, 1, &alpha, 1, &y, 1),
              DML_STATUS_INVALID_ARGUMENT, "alpha must not be 0");
  CHECK(dml_rt_device_bytes(g_vk) == before);
  /* a dtype without a kernel of the op (Exp of u32) */
  dml_rt_tensor_t u32;
  CHECK_OK(dml_rt_tensor_zeros(g_vk, DML_DTYPE_U32, 2, d34, &u32));
  CHECK_ERROR(dml_rt_tensor_op("Exp", &u32, 1, NULL, 0, &y, 1), DML_STATUS_UNIMPLEMENTED,
              "no eager kernel for Exp of u32");
  CHECK_OK(dml_rt_tensor_free(u32));
  /* use after free */
  CHECK_OK(dml_rt_tensor_free(b));
  CHECK_ERROR(dml_rt_tensor_op("Add", in, 2, NULL, 0, &y, 1),
              DML_STATUS_FAILED_PRECONDITION, "use after free");
  CHECK_OK(dml_rt_tensor_free(a));
}

/* A short chain in a loop: y = relu(x * w + b), outputs freed each turn. */
static void test_chain(void) {
  int64_t d[2] = {64, 33}, dw[1] = {33};
  float x[64 * 33], w[33], bb[33];
  for (int i = 0; i < 64 * 33; i++) x[i] = rnd();
  for (int i = 0; i < 33; i++) w[i] = rnd(), bb[i] = rnd();
  dml_rt_tensor_t xv = up(g_vk, 2, d, x), wv = up(g_vk, 1, dw, w),
                  bv = up(g_vk, 1, dw, bb);
  for (int it = 0; it < 20; it++) {
    dml_rt_tensor_t t1, t2, t3;
    dml_rt_tensor_t m[2] = {xv, wv};
    CHECK_OK(dml_rt_tensor_op("Mul", m, 2, NULL, 0, &t1, 1));
    dml_rt_tensor_t s[2] = {t1, bv};
    CHECK_OK(dml_rt_tensor_op("Add", s, 2, NULL, 0, &t2, 1));
    CHECK_OK(dml_rt_tensor_op("Relu", &t2, 1, NULL, 0, &t3, 1));
    if (it == 19) {
      int64_t n;
      float *p = down(t3, &n);
      int bad = 0;
      for (int i = 0; i < 64 * 33; i++) {
        float want = x[i] * w[i % 33] + bb[i % 33];
        want = want < 0 ? 0 : want;
        bad += p[i] != want;
      }
      CHECK(bad == 0);
      free(p);
    }
    CHECK_OK(dml_rt_tensor_free(t1));
    CHECK_OK(dml_rt_tensor_free(t2));
    CHECK_OK(dml_rt_tensor_free(t3));
  }
  CHECK_OK(dml_rt_tensor_free(xv));
  CHECK_OK(dml_rt_tensor_free(wv));
  CHECK_OK(dml_rt_tensor_free(bv));
}

int main(void) {
  dml_status_t s = dml_rt_device_open(TEST_GPU, &g_vk);
  if (s) {
    char *m = dml_status_format(s);
    printf("SKIP: no " TEST_GPU " device: %s\n", m ? m : "?");
    free(m);
    dml_status_free(s);
    return 77;
  }
  if (!dml_eager_spirv_count) {
    printf("SKIP: " TEST_GPU_NO_LIB "\n");
    dml_rt_device_close(g_vk);
    return 77;
  }
  printf(TEST_GPU " device: %s\n", dml_rt_device_name(g_vk));
  CHECK_OK(dml_rt_device_open("cpu", &g_cpu));
  /* TEST_TENSOR_ONLY=name: run the tests whose name holds it (a quicker
   * loop while working on one op family; test_tensor_cuda_mock's count of
   * loaded modules, at least 50, then fails: it needs every case) */
  const char *only = getenv("TEST_TENSOR_ONLY");
#define RUN_IF(fn) \
  if (!only || strstr(#fn, only)) RUN(fn)
  uint64_t start = dml_rt_device_bytes(g_vk), start_n = dml_rt_device_num_storages(g_vk);
  RUN_IF(test_every_op);
  CHECK(dml_rt_device_bytes(g_vk) == start);
  RUN_IF(test_reductions);
  CHECK(dml_rt_device_bytes(g_vk) == start);
  RUN_IF(test_matmul);
  CHECK(dml_rt_device_bytes(g_vk) == start);
  RUN_IF(test_conv);
  CHECK(dml_rt_device_bytes(g_vk) == start);
  RUN_IF(test_gemm);
  CHECK(dml_rt_device_bytes(g_vk) == start);
  RUN_IF(test_mm_errors);
  RUN_IF(test_dtypes);
  CHECK(dml_rt_device_bytes(g_vk) == start);
  RUN_IF(test_softmax);
  CHECK(dml_rt_device_bytes(g_vk) == start);
  RUN_IF(test_move);
  CHECK(dml_rt_device_bytes(g_vk) == start);
  RUN_IF(test_table_ops);
  CHECK(dml_rt_device_bytes(g_vk) == start);
  RUN_IF(test_norm_pool);
  CHECK(dml_rt_device_bytes(g_vk) == start);
  RUN_IF(test_norm_fused);
  CHECK(dml_rt_device_bytes(g_vk) == start);
  RUN_IF(test_norm_short);
  CHECK(dml_rt_device_bytes(g_vk) == start);
  RUN_IF(test_ln_stats);
  CHECK(dml_rt_device_bytes(g_vk) == start);
  RUN_IF(test_rnn);
  CHECK(dml_rt_device_bytes(g_vk) == start);
  RUN_IF(test_rnn_acts);
  CHECK(dml_rt_device_bytes(g_vk) == start);
  RUN_IF(test_nd);
  CHECK(dml_rt_device_bytes(g_vk) == start);
  RUN_IF(test_scatter_red);
  CHECK(dml_rt_device_bytes(g_vk) == start);
  RUN_IF(test_topk);
  CHECK(dml_rt_device_bytes(g_vk) == start);
  RUN_IF(test_bn_train);
  CHECK(dml_rt_device_bytes(g_vk) == start);
  RUN_IF(test_conv_transpose);
  CHECK(dml_rt_device_bytes(g_vk) == start);
  RUN_IF(test_conv3d);
  CHECK(dml_rt_device_bytes(g_vk) == start);
  RUN_IF(test_pool_indices);
  CHECK(dml_rt_device_bytes(g_vk) == start);
  RUN_IF(test_einsum);
  CHECK(dml_rt_device_bytes(g_vk) == start);
  RUN_IF(test_move_ops);
  CHECK(dml_rt_device_bytes(g_vk) == start);
  RUN_IF(test_half_mm);
  CHECK(dml_rt_device_bytes(g_vk) == start);
  RUN_IF(test_big);
  RUN_IF(test_errors);
  RUN_IF(test_chain);
  CHECK(dml_rt_device_bytes(g_vk) == start);
  CHECK(dml_rt_device_num_storages(g_vk) == start_n);
  printf("device bytes: %llu at the start, %llu at the end\n", (unsigned long long)start,
         (unsigned long long)dml_rt_device_bytes(g_vk));
  dml_rt_device_close(g_cpu);
  dml_rt_device_close(g_vk);
  return dml_test_finish();
}
