/*
 * test_cpu_fuse.c — the CPU executor's fusion (runtime/rt_cpu_fuse.c:
 * weights packed at load, Conv + BatchNormalization + Relu and Gemm + Relu
 * folded) on the reference models: the plan takes every such node and
 * chain (counted), and the fused sessions give the same bits as unfused
 * ones (DMLC_CPU_NO_FUSE) on each saved input, with 1 and 2 threads, and
 * 2 threads the same bits as 1. And a fused Gemm + Relu whose output is a
 * function output moved out of its dying input's buffer: a value made
 * after the chain does not take the buffer it moved to. And recurrent
 * nodes with constant W and R packed once, the same bits as unfused. And
 * elementwise chains run block by block, the same bits as unfused. And the
 * NCHWc layout pass on a MobileNet-like graph against the NCHW kernels.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dml_cpu.h"
#include "dml_driver.h"
#include "dml_ir_text.h"
#include "dml_npy.h"
#include "dml_package_emit.h"
#include "dml_passes.h"
#include "dml_rt.h"
#include "dml_test.h"
#include "rt_internal.h"

static void run_all(dml_rt_session_t *s, const char *name, float **outs, size_t *sizes) {
  for (int k = 0; k < 3; k++) {
    char rel[256], path[1024];
    snprintf(rel, sizeof rel, "models/%s_io/input_%d.npy", name, k);
    dml_test_path("DMLC_SHARED_DIR", rel, path, sizeof path);
    dml_tensor_t in, got;
    void *ib = NULL;
    CHECK_OK(dml_npy_read_file(path, &in, &ib));
    outs[k] = NULL;
    if (!ib) continue;
    CHECK_OK(dml_rt_session_set_input(s, 0, &in));
    CHECK_OK(dml_rt_session_run(s));
    CHECK_OK(dml_rt_session_get_output(s, 0, &got));
    sizes[k] = dml_tensor_bytes(&got);
    outs[k] = (float *)malloc(sizes[k]);
    memcpy(outs[k], got.data, sizes[k]);
    free(ib);
  }
}

static void check_model(const char *name, int want_heads, int want_folded) {
  char onnx[1024], pkg[1024], rel[256];
  snprintf(rel, sizeof rel, "models/%s.onnx", name);
  dml_test_path("DMLC_SHARED_DIR", rel, onnx, sizeof onnx);
  snprintf(pkg, sizeof pkg, "%s/test_cpu_fuse_%s_%d.dmlpkg",
           getenv("DMLC_BUILD_DIR") ? getenv("DMLC_BUILD_DIR") : ".", name,
           (int)getpid());
  dml_compile_report_t rep;
  CHECK_OK(dml_compile_onnx_file(onnx, pkg, NULL, &rep));
  dml_rt_model_t *m = NULL;
  CHECK_OK(dml_rt_model_load_file(pkg, &m));
  if (!m) return;
  unsetenv("DMLC_CPU_NO_FUSE");
  dml_rt_cpu_fuse_t *plan = NULL;
  CHECK_OK(dml_rt_cpu_fuse_plan(m->fn, m->weights, &plan));
  int heads = 0, folded = 0;
  for (uint32_t k = 0; plan && k < m->fn->n_nodes; k++) {
    heads += plan->role[k] == 1;
    folded += plan->role[k] == 2;
  }
  printf("%s: %d fused nodes, %d nodes folded into them\n", name, heads, folded);
  CHECK(heads == want_heads && folded == want_folded);
  dml_rt_cpu_fuse_free(plan);
  float *first[3] = {NULL, NULL, NULL}; /* 1 thread's fused outputs */
  size_t first_sz[3] = {0};
  for (int threads = 1; threads <= 2; threads++) {
    dml_cpu_set_num_threads(threads);
    dml_rt_session_t *a = NULL, *b = NULL;
    CHECK_OK(dml_rt_session_create(m, "cpu", &a));
    setenv("DMLC_CPU_NO_FUSE", "1", 1);
    CHECK_OK(dml_rt_session_create(m, "cpu", &b));
    unsetenv("DMLC_CPU_NO_FUSE");
    if (!a || !b) break;
    float *oa[3], *ob[3];
    size_t sa[3] = {0}, sb[3] = {0};
    run_all(a, name, oa, sa);
    run_all(b, name, ob, sb);
    for (int k = 0; k < 3; k++) {
      CHECK(oa[k] && ob[k] && sa[k] == sb[k]);
      if (oa[k] && ob[k] && sa[k] == sb[k]) CHECK(memcmp(oa[k], ob[k], sa[k]) == 0);
      /* Splitting over threads changes no element's sum order: same bits. */
      if (threads == 1) {
        first[k] = oa[k], first_sz[k] = sa[k];
        oa[k] = NULL;
      } else if (first[k] && oa[k]) {
        CHECK(first_sz[k] == sa[k] && memcmp(first[k], oa[k], sa[k]) == 0);
      }
      free(oa[k]);
      free(ob[k]);
    }
    dml_rt_session_release(a);
    dml_rt_session_release(b);
  }
  dml_cpu_set_num_threads(1);
  for (int k = 0; k < 3; k++) free(first[k]);
  dml_rt_model_release(m);
  unlink(pkg);
}

/* Every Conv and Gemm has constant weights, so each is a fused node (packed
 * weights) whether or not anything folds into it. */
static void test_fashion_mlp(void) {
  check_model("fashion_mlp", 3, 2); /* Gemm + Relu twice, then Gemm */
}
static void test_lenet5(void) {
  check_model("lenet5", 5, 4); /* Conv + Relu twice, Gemm + Relu twice, Gemm */
}
static void test_resnet_small(void) {
  /* 9 Conv + BatchNormalization; the stem's and each block's first + Relu;
   * each block's last (the fuse pass grouped the residual Add + Relu with
   * it) + Add + Relu; the final Gemm */
  check_model("resnet_small", 10, 19);
}

/* The package of the IR text `text` (`name` in its errors) after the
 * default pass pipeline, loaded; NULL, with a failed CHECK, where a step
 * fails. */
static dml_rt_model_t *model_of(const char *text, const char *name) {
  dml_ir_module_t *ir = NULL;
  void *bytes = NULL;
  size_t n = 0;
  CHECK_OK(dml_ir_parse(text, strlen(text), name, &ir));
  if (!ir) return NULL;
  dml_pass_options_t o;
  memset(&o, 0, sizeof o);
  CHECK_OK(dml_pass_run_pipeline(ir, dml_pass_default_pipeline(), &o));
  CHECK_OK(dml_package_emit_memory(ir, NULL, &bytes, &n));
  dml_ir_module_release(ir);
  dml_rt_model_t *m = NULL;
  if (bytes) CHECK_OK(dml_rt_model_load_memory(bytes, n, &m));
  free(bytes);
  return m;
}

/* Gemm + Relu where the Relu's output %gr is a function output that the
 * memory plan puts over the Gemm's dying input %a: the plan moves %gr into
 * the Gemm's output buffer, which the plan also gives %yr (made after the
 * chain, while %gr must still be returned). The fused node must move %gr
 * elsewhere: %gr = Relu(-x W + b) against a double reference, %yr = -y,
 * and the same bits as unfused. Before the fix %yr overwrote %gr. */
static void test_moved_output_kept(void) {
  static const double w[6][4] = {{0.5, -1.0, 0.25, 1.5},       {0.75, -0.5, -2.0, 1.0},
                                 {0.5, 0.25, -0.25, 2.0},      {1.25, -0.75, 0.125, -1.5},
                                 {0.625, 0.375, -0.875, 1.75}, {-1.25, 0.5, 1.0, -0.125}};
  static const double bias[4] = {0.5, -0.25, 0.125, 1.0};
  char text[2048], ws[512] = "", bs[128] = "";
  for (int k = 0; k < 24; k++)
    snprintf(ws + strlen(ws), sizeof ws - strlen(ws), "%s%g", k ? ", " : "",
             w[k / 4][k % 4]);
  for (int j = 0; j < 4; j++)
    snprintf(bs + strlen(bs), sizeof bs - strlen(bs), "%s%g", j ? ", " : "", bias[j]);
  snprintf(text, sizeof text,
           "global @w : f32[6,4] = dense<[%s]>\n"
           "global @b : f32[4] = dense<[%s]>\n"
           "func @forward(%%x: f32[5,6], %%y: f32[5,4]) -> (f32[5,4], f32[5,4]) {\n"
           "  %%a = Neg(%%x) : f32[5,6]\n"
           "  %%g = Gemm(%%a, @w, @b) : f32[5,4]\n"
           "  %%gr = Relu(%%g) : f32[5,4]\n"
           "  %%yr = Neg(%%y) : f32[5,4]\n"
           "  return %%gr, %%yr\n}\n",
           ws, bs);
  dml_rt_model_t *m = model_of(text, "moved.dmlir");
  if (!m) return;
  /* The case under test: the memory plan puts %gr over %a, %yr over %g. */
  const dml_pkg_function_t *f = m->fn;
  uint32_t va = f->nodes[1].inputs[0], vg = f->nodes[1].outputs[0], vgr = f->outputs[0],
           vyr = f->outputs[1];
  CHECK(f->nodes[1].op == DML_OP_GEMM && f->nodes[2].op == DML_OP_RELU);
  CHECK(f->values[vgr].offset == f->values[va].offset &&
        f->values[vyr].offset == f->values[vg].offset);
  unsetenv("DMLC_CPU_NO_FUSE");
  dml_rt_cpu_fuse_t *plan = NULL;
  CHECK_OK(dml_rt_cpu_fuse_plan(f, m->weights, &plan));
  CHECK(plan && plan->role[1] == 1 && plan->role[2] == 2);
  /* not into %g's buffer, which %yr takes */
  if (plan) CHECK(plan->value_offset[vgr] != f->values[vg].offset + 1);
  dml_rt_cpu_fuse_free(plan);

  float x[5 * 6], y[5 * 4];
  for (int i = 0; i < 30; i++) x[i] = 0.25f * (float)((i * 7) % 11) - 1.25f;
  for (int i = 0; i < 20; i++) y[i] = 0.5f * (float)(i % 5) - 1.0f;
  float got[2][2][20];
  for (int fused = 0; fused < 2; fused++) {
    if (!fused) setenv("DMLC_CPU_NO_FUSE", "1", 1);
    dml_rt_session_t *s = NULL;
    CHECK_OK(dml_rt_session_create(m, "cpu", &s));
    unsetenv("DMLC_CPU_NO_FUSE");
    if (!s) break;
    dml_tensor_t t;
    memset(&t, 0, sizeof t);
    t.dtype = DML_DTYPE_F32, t.rank = 2, t.dims[0] = 5, t.dims[1] = 6, t.data = x;
    CHECK_OK(dml_rt_session_set_input(s, 0, &t));
    t.dims[1] = 4, t.data = y;
    CHECK_OK(dml_rt_session_set_input(s, 1, &t));
    CHECK_OK(dml_rt_session_run(s));
    for (uint32_t k = 0; k < 2; k++) {
      dml_tensor_t out;
      memset(&out, 0, sizeof out);
      CHECK_OK(dml_rt_session_get_output(s, k, &out));
      CHECK(out.dtype == DML_DTYPE_F32 && dml_tensor_bytes(&out) == sizeof got[0][0]);
      if (out.data && dml_tensor_bytes(&out) == sizeof got[0][0])
        memcpy(got[fused][k], out.data, sizeof got[0][0]);
    }
    /* Relu(-x W + b) within 1e-6 relative to a double reference (f32
     * sums of 6 terms); -y exactly. */
    double worst = 0;
    for (int i = 0; i < 5; i++)
      for (int j = 0; j < 4; j++) {
        double r = bias[j];
        for (int k = 0; k < 6; k++) r += -(double)x[i * 6 + k] * w[k][j];
        r = r < 0 ? 0 : r;
        double e = fabs(got[fused][0][i * 4 + j] - r) / fmax(1.0, fabs(r));
        if (!(e <= worst)) worst = e;
        CHECK(got[fused][1][i * 4 + j] == -y[i * 4 + j]);
      }
    printf("Gemm + Relu, moved output (%s): max error %.2e vs double\n",
           fused ? "fused" : "unfused", worst);
    CHECK(worst <= 1e-6);
    dml_rt_session_release(s);
  }
  CHECK(memcmp(got[0], got[1], sizeof got[0]) == 0);
  dml_rt_model_release(m);
}

/* Appends n pseudo-random values in [-1, 1) as a dense list to buf. */
static void dense_list(char *buf, size_t cap, int n, unsigned *rng) {
  for (int k = 0; k < n; k++) {
    *rng = *rng * 1664525u + 1013904223u;
    double v = (double)((*rng >> 8) & 0xffff) / 32768.0 - 1.0;
    size_t at = strlen(buf);
    snprintf(buf + at, cap - at, "%s%.6g", k ? ", " : "", v);
  }
}

/* A bidirectional LSTM and a GRU (linear_before_reset 0: its R_h packed
 * apart) with constant W, R and B: the executor packs W and R once
 * (dml_cpu_rnn_prepack; the plan marks each node), and fused sessions give
 * the same bits as unfused ones, with 1 and 2 threads, also with NaN and
 * inf in X. The GRU's Y is unused (only Y_h is returned). */
static void test_rnn_packed_session(void) {
  enum { S = 4, B = 3, I = 5, H = 7 };
  static char text[65536];
  char *w = (char *)calloc(4, 16384);
  if (!w) return;
  char *wl = w, *rl = w + 16384, *gw = w + 32768, *gr = w + 49152;
  unsigned rng = 7u;
  dense_list(wl, 16384, 2 * 4 * H * I, &rng);
  dense_list(rl, 16384, 2 * 4 * H * H, &rng);
  dense_list(gw, 16384, 3 * H * (2 * H), &rng);
  dense_list(gr, 16384, 3 * H * H, &rng);
  char bl[8192] = "", gb[4096] = "";
  dense_list(bl, sizeof bl, 2 * 8 * H, &rng);
  dense_list(gb, sizeof gb, 6 * H, &rng);
  snprintf(text, sizeof text,
           "global @W : f32[2,%d,%d] = dense<[%s]>\n"
           "global @R : f32[2,%d,%d] = dense<[%s]>\n"
           "global @Bl : f32[2,%d] = dense<[%s]>\n"
           "global @GW : f32[1,%d,%d] = dense<[%s]>\n"
           "global @GR : f32[1,%d,%d] = dense<[%s]>\n"
           "global @GB : f32[1,%d] = dense<[%s]>\n"
           "func @forward(%%x: f32[%d,%d,%d]) -> (f32[%d,2,%d,%d], f32[1,%d,%d]) {\n"
           "  %%y, %%yh, %%yc = LSTM(%%x, @W, @R, @Bl) {direction = \"bidirectional\", "
           "hidden_size = %d} : f32[%d,2,%d,%d], f32[2,%d,%d], f32[2,%d,%d]\n"
           "  %%t = Transpose(%%y) {perm = [0, 2, 1, 3]} : f32[%d,%d,2,%d]\n"
           "  %%r = Reshape(%%t, @shp) : f32[%d,%d,%d]\n"
           "  %%gy, %%gh = GRU(%%r, @GW, @GR, @GB) {hidden_size = %d} : "
           "f32[%d,1,%d,%d], f32[1,%d,%d]\n"
           "  return %%y, %%gh\n}\n",
           4 * H, I, wl, 4 * H, H, rl, 8 * H, bl, 3 * H, 2 * H, gw, 3 * H, H, gr, 6 * H,
           gb, S, B, I, S, B, H, B, H, H, S, B, H, B, H, B, H, S, B, H, S, B, 2 * H, H, S,
           B, H, B, H);
  /* the Reshape's shape */
  char shp[128];
  snprintf(shp, sizeof shp, "global @shp : i64[3] = dense<[%d, %d, %d]>\n", S, B, 2 * H);
  size_t tl = strlen(text);
  memmove(text + strlen(shp), text, tl + 1);
  memcpy(text, shp, strlen(shp));
  free(w);
  dml_rt_model_t *m = model_of(text, "rnn.dmlir");
  if (!m) return;
  const dml_pkg_function_t *f = m->fn;
  unsetenv("DMLC_CPU_NO_FUSE");
  dml_rt_cpu_fuse_t *plan = NULL;
  CHECK_OK(dml_rt_cpu_fuse_plan(f, m->weights, &plan));
  int packed = 0;
  for (uint32_t k = 0; plan && k < f->n_nodes; k++)
    if (f->nodes[k].op == DML_OP_LSTM || f->nodes[k].op == DML_OP_GRU)
      packed += plan->role[k] == 1 && plan->ep[k].packed != NULL;
  printf("recurrent nodes with packed weights: %d\n", packed);
  CHECK(packed == 2);
  dml_rt_cpu_fuse_free(plan);

  float x[S * B * I];
  for (int i = 0; i < S * B * I; i++) x[i] = 0.125f * (float)((i * 7) % 17) - 1.0f;
  float got[2][2][2][S * 2 * B * H]; /* [threads][fused][output] */
  for (int edges = 0; edges < 2; edges++) {
    if (edges) x[3] = NAN, x[S * B * I - 2] = INFINITY, x[I + 1] = -0.0f;
    memset(got, 0, sizeof got);
    for (int threads = 1; threads <= 2; threads++) {
      dml_cpu_set_num_threads(threads);
      for (int fused = 0; fused < 2; fused++) {
        if (!fused) setenv("DMLC_CPU_NO_FUSE", "1", 1);
        dml_rt_session_t *s = NULL;
        CHECK_OK(dml_rt_session_create(m, "cpu", &s));
        unsetenv("DMLC_CPU_NO_FUSE");
        if (!s) break;
        dml_tensor_t t;
        memset(&t, 0, sizeof t);
        t.dtype = DML_DTYPE_F32, t.rank = 3, t.dims[0] = S, t.dims[1] = B, t.dims[2] = I,
        t.data = x;
        CHECK_OK(dml_rt_session_set_input(s, 0, &t));
        CHECK_OK(dml_rt_session_run(s));
        for (uint32_t k = 0; k < 2; k++) {
          dml_tensor_t out;
          memset(&out, 0, sizeof out);
          CHECK_OK(dml_rt_session_get_output(s, k, &out));
          size_t want = (k ? (size_t)B * H : (size_t)S * 2 * B * H) * sizeof(float);
          CHECK(out.dtype == DML_DTYPE_F32 && dml_tensor_bytes(&out) == want);
          if (out.data && dml_tensor_bytes(&out) == want)
            memcpy(got[threads - 1][fused][k], out.data, want);
        }
        dml_rt_session_release(s);
      }
      CHECK(memcmp(got[threads - 1][0], got[threads - 1][1], sizeof got[0][0]) == 0);
    }
    CHECK(memcmp(got[0], got[1], sizeof got[0]) == 0);
    int nan_seen = 0;
    for (int i = 0; i < S * 2 * B * H; i++) nan_seen += isnan(got[0][1][0][i]);
    CHECK(edges ? nan_seen > 0 : nan_seen == 0);
  }
  dml_cpu_set_num_threads(1);
  dml_rt_model_release(m);
}

/* Elementwise chains run block by block (dml_rt_cpu_run_chain): GELU as
 * the exporters write it (Div, Erf, Mul, Add, Mul over x = -input) and a
 * residual Add + Relu (after a Transpose), over 3 x 9000 values (blocks of 8192: a
 * partial one), with NaN, inf, -0, subnormal and huge inputs; the erf value also a
 * function output (kept in the arena, not a block buffer). The plan makes
 * the 5 GELU nodes and the 2 residual nodes one chain each, and the fused
 * session gives the same bits as the unfused one, with 1 and 2 threads. */
static void test_elementwise_chain(void) {
  enum { R = 3, C = 9000 };
  const char *text =
      "global @s2 : f32[1] = dense<[1.41421353816986084]>\n"
      "global @half : f32[1] = dense<[0.5]>\n"
      "global @one : f32[1] = dense<[1.0]>\n"
      "func @forward(%in: f32[3,9000], %res: f32[9000,3]) -> (f32[9000,3], f32[3,9000], "
      "f32[3,9000]) {\n"
      "  %x = Neg(%in) : f32[3,9000]\n"
      "  %d = Div(%x, @s2) : f32[3,9000]\n"
      "  %e = Erf(%d) : f32[3,9000]\n"
      "  %h = Mul(%x, @half) : f32[3,9000]\n"
      "  %a = Add(%e, @one) : f32[3,9000]\n"
      "  %g = Mul(%h, %a) : f32[3,9000]\n"
      "  %t = Transpose(%g) {perm = [1, 0]} : f32[9000,3]\n"
      "  %r = Add(%t, %res) : f32[9000,3]\n"
      "  %y = Relu(%r) : f32[9000,3]\n"
      "  return %y, %e, %g\n}\n";
  dml_rt_model_t *m = model_of(text, "chain.dmlir");
  if (!m) return;
  const dml_pkg_function_t *f = m->fn;
  unsetenv("DMLC_CPU_NO_FUSE");
  dml_rt_cpu_fuse_t *plan = NULL;
  CHECK_OK(dml_rt_cpu_fuse_plan(f, m->weights, &plan));
  uint32_t lens[4] = {0}, nch = 0, slots = 0;
  for (uint32_t k = 0; plan && k < f->n_nodes; k++) {
    if (plan->chain_len[k] && nch < 4) lens[nch++] = plan->chain_len[k];
    slots += plan->chain_slot[k] != 0;
  }
  printf("elementwise chains: %u (%u, %u nodes), %u values in block buffers\n", nch,
         lens[0], lens[1], slots);
  /* Neg + the GELU chain (6 nodes) and Add + Relu; %d, %h, %a (and %x) in
   * block buffers, %e and %g (function outputs) in the arena */
  CHECK(nch == 2 && lens[0] >= 5 && lens[1] == 2 && slots >= 3);
  dml_rt_cpu_fuse_free(plan);

  float *in = (float *)malloc(sizeof(float) * R * C * 2), *res = in + R * C;
  float *got = (float *)calloc((size_t)4 * 3 * R * C, sizeof(float));
  if (!in || !got) {
    free(in);
    free(got);
    dml_rt_model_release(m);
    return;
  }
  unsigned rng = 5u;
  for (int i = 0; i < 2 * R * C; i++) {
    rng = rng * 1664525u + 1013904223u;
    in[i] = ((float)(rng >> 8) / 16777216.0f - 0.5f) * 12.0f;
  }
  const float edge[] = {NAN,    INFINITY, -INFINITY, -0.0f, 0.0f,
                        1e-40f, -1e-40f,  3e38f,     -3e38f};
  for (int i = 0; i < 9; i++) in[i * 977] = edge[i], res[i * 1231 + 5] = edge[i];
  size_t one = (size_t)R * C * sizeof(float);
  for (int threads = 1; threads <= 2; threads++) {
    dml_cpu_set_num_threads(threads);
    for (int fused = 0; fused < 2; fused++) {
      if (!fused) setenv("DMLC_CPU_NO_FUSE", "1", 1);
      dml_rt_session_t *s = NULL;
      CHECK_OK(dml_rt_session_create(m, "cpu", &s));
      unsetenv("DMLC_CPU_NO_FUSE");
      if (!s) break;
      dml_tensor_t t;
      memset(&t, 0, sizeof t);
      t.dtype = DML_DTYPE_F32, t.rank = 2, t.dims[0] = R, t.dims[1] = C, t.data = in;
      CHECK_OK(dml_rt_session_set_input(s, 0, &t));
      t.dims[0] = C, t.dims[1] = R, t.data = res;
      CHECK_OK(dml_rt_session_set_input(s, 1, &t));
      CHECK_OK(dml_rt_session_run(s));
      for (uint32_t k = 0; k < 3; k++) {
        dml_tensor_t out;
        memset(&out, 0, sizeof out);
        CHECK_OK(dml_rt_session_get_output(s, k, &out));
        CHECK(out.dtype == DML_DTYPE_F32 && dml_tensor_bytes(&out) == one);
        if (out.data && dml_tensor_bytes(&out) == one)
          memcpy((char *)got + ((size_t)(2 * (threads - 1) + fused) * 3 + k) * one,
                 out.data, one);
      }
      dml_rt_session_release(s);
    }
  }
  for (int q = 1; q < 4; q++) CHECK(memcmp(got, (char *)got + q * 3 * one, 3 * one) == 0);
  /* GELU against double: 1e-6 relative to 1 + |ref| (f32 steps) */
  double worst = 0;
  int nan_seen = 0;
  for (int i = 0; i < R * C; i++) {
    double x = -(double)in[i];
    double ref = x * 0.5 * (1.0 + erf(x / 1.4142135623730951));
    float g = got[2 * R * C + i];
    if (isnan(ref) || isinf(ref) || fabs(x) > 1e30) {
      nan_seen += isnan(g);
      continue;
    }
    double e = fabs(g - ref) / (1.0 + fabs(ref));
    if (!(e <= worst)) worst = e;
  }
  printf("GELU chain: max error %.2e vs double\n", worst);
  CHECK(worst <= 1e-6 && nan_seen >= 1);
  dml_cpu_set_num_threads(1);
  free(in);
  free(got);
  dml_rt_model_release(m);
}

/* SiLU as the exporters write it (x * Sigmoid(x): EfficientNet, RegNet's
 * blocks) is an elementwise chain whose Sigmoid runs the vectorized kernel
 * (dml_cpu_sigmoid_f32): over 5 x 3001 values (two blocks of 8192, the
 * second partial; 3001 not a multiple of the 64-value step) with NaN, inf,
 * -0, subnormal, huge and below -87 inputs, the plan makes one chain of the
 * two nodes, the fused session gives the same bits as the unfused one with
 * 1 and 2 threads, Sigmoid (a function output too) within 1e-6 relative of
 * double for x >= -87 and libm's expf(x) below, SiLU within 1e-6 relative
 * to 1 + |ref|. */
static void test_silu_chain(void) {
  enum { R = 5, C = 3001 };
  const char *text =
      "func @forward(%x: f32[5,3001]) -> (f32[5,3001], f32[5,3001]) {\n"
      "  %s = Sigmoid(%x) : f32[5,3001]\n"
      "  %y = Mul(%x, %s) : f32[5,3001]\n"
      "  return %y, %s\n}\n";
  dml_rt_model_t *m = model_of(text, "silu.dmlir");
  if (!m) return;
  unsetenv("DMLC_CPU_NO_FUSE");
  dml_rt_cpu_fuse_t *plan = NULL;
  CHECK_OK(dml_rt_cpu_fuse_plan(m->fn, m->weights, &plan));
  uint32_t nch = 0, len = 0;
  for (uint32_t k = 0; plan && k < m->fn->n_nodes; k++)
    if (plan->chain_len[k]) nch++, len = plan->chain_len[k];
  printf("SiLU: %u chain of %u nodes\n", nch, len);
  CHECK(nch == 1 && len == 2);
  dml_rt_cpu_fuse_free(plan);

  size_t one = (size_t)R * C * sizeof(float);
  float *in = (float *)malloc(one),
        *got = (float *)calloc((size_t)4 * 2 * R * C, sizeof(float));
  if (!in || !got) {
    free(in);
    free(got);
    dml_rt_model_release(m);
    return;
  }
  unsigned rng = 11u;
  for (int i = 0; i < R * C; i++) {
    rng = rng * 1664525u + 1013904223u;
    in[i] = ((float)(rng >> 8) / 16777216.0f - 0.5f) * 24.0f;
  }
  const float edge[] = {NAN,     INFINITY, -INFINITY, -0.0f,  0.0f,   1e-40f,
                        -1e-40f, 3e38f,    -3e38f,    -90.0f, -87.2f, -120.0f};
  for (int i = 0; i < 12; i++) in[i * 1201 + 3] = edge[i];
  for (int threads = 1; threads <= 2; threads++) {
    dml_cpu_set_num_threads(threads);
    for (int fused = 0; fused < 2; fused++) {
      if (!fused) setenv("DMLC_CPU_NO_FUSE", "1", 1);
      dml_rt_session_t *s = NULL;
      CHECK_OK(dml_rt_session_create(m, "cpu", &s));
      unsetenv("DMLC_CPU_NO_FUSE");
      if (!s) break;
      dml_tensor_t t;
      memset(&t, 0, sizeof t);
      t.dtype = DML_DTYPE_F32, t.rank = 2, t.dims[0] = R, t.dims[1] = C, t.data = in;
      CHECK_OK(dml_rt_session_set_input(s, 0, &t));
      CHECK_OK(dml_rt_session_run(s));
      for (uint32_t k = 0; k < 2; k++) {
        dml_tensor_t out;
        memset(&out, 0, sizeof out);
        CHECK_OK(dml_rt_session_get_output(s, k, &out));
        CHECK(out.dtype == DML_DTYPE_F32 && dml_tensor_bytes(&out) == one);
        if (out.data && dml_tensor_bytes(&out) == one)
          memcpy((char *)got + ((size_t)(2 * (threads - 1) + fused) * 2 + k) * one,
                 out.data, one);
      }
      dml_rt_session_release(s);
    }
  }
  for (int q = 1; q < 4; q++) CHECK(memcmp(got, (char *)got + q * 2 * one, 2 * one) == 0);
  double ws = 0, wy = 0;
  int bad = 0;
  for (int i = 0; i < R * C; i++) {
    double x = in[i], sg = 1.0 / (1.0 + exp(-x)), ref = x * sg;
    float y = got[i], sv = got[R * C + i];
    if (isnan(x)) {
      bad += !isnan(y) || !isnan(sv);
      continue;
    }
    if (x >= -87)
      ws = fmax(ws, fabs(sv - sg) / sg);
    else
      bad += sv != expf(in[i]);
    if (isinf(x)) /* +inf * 1 = inf; -inf * 0 = NaN, as ONNX Runtime gives */
      bad += x > 0 ? y != INFINITY : !isnan(y);
    else
      wy = fmax(wy, fabs(y - ref) / (1.0 + fabs(ref)));
  }
  printf("SiLU chain: sigmoid max error %.2e relative, SiLU %.2e vs double\n", ws, wy);
  CHECK(ws <= 1e-6 && wy <= 1e-6 && bad == 0);
  dml_cpu_set_num_threads(1);
  free(in);
  free(got);
  dml_rt_model_release(m);
}

/* Appends "global @NAME : f32[DIMS] = dense<[...]>" of n values drawn from
 * rng (scaled by sc, plus add). */
static void global_f32(char *buf, size_t cap, const char *name, const char *dims, int n,
                       double sc, double add, unsigned *rng) {
  size_t at = strlen(buf);
  snprintf(buf + at, cap - at, "global @%s : f32[%s] = dense<[", name, dims);
  for (int k = 0; k < n; k++) {
    *rng = *rng * 1664525u + 1013904223u;
    double v = ((double)((*rng >> 8) & 0xffff) / 32768.0 - 1.0) * sc + add;
    at = strlen(buf);
    snprintf(buf + at, cap - at, "%s%.6g", k ? ", " : "", v);
  }
  at = strlen(buf);
  snprintf(buf + at, cap - at, "]>\n");
}

/* The NCHWc layout pass (rt_cpu_fuse.c, DMLC_CPU_NCHWC=1) on a
 * MobileNet-like graph: depthwise 3x3 (strides 1 and 2) and 5x5, pointwise
 * 16 -> 32 -> 48 -> 48 with BatchNormalization + Relu, a residual Add
 * folded into the last pointwise Conv, GlobalAveragePool + Flatten, and a
 * middle value also returned (so it stays NCHW: a run edge inside the
 * graph). The plan puts all 6 Convs on the NCHWc kernels and keeps the 4
 * values read only by them blocked; the outputs, with 1 and 2 threads and
 * NaN / inf / -0 / subnormal inputs, are within 1e-5 x (1 + |ref|) of the
 * NCHW session's (DMLC_CPU_NCHWC=0; the kernels sum in the same order, so
 * the bits are reported too). Skipped where dml_cpu_nchwc_available() is 0
 * with the variable set (no AVX-512). */
static void test_nchwc_layout(void) {
  enum { N = 2, H = 18, W = 17 };
  setenv("DMLC_CPU_NCHWC", "1", 1);
  int avail = dml_cpu_nchwc_available();
  unsetenv("DMLC_CPU_NCHWC");
  if (!avail) {
    printf("NCHWc: not available on this CPU (no AVX-512): skipped\n");
    return;
  }
  static char text[1 << 20];
  text[0] = 0;
  unsigned rng = 11u;
  struct {
    const char *tag;
    int cin, cout, k, group;
  } L[6] = {{"a", 16, 16, 3, 16}, {"b", 16, 32, 1, 1}, {"c", 32, 32, 3, 32},
            {"d", 32, 48, 1, 1},  {"e", 48, 48, 1, 1}, {"f", 48, 48, 5, 48}};
  for (int l = 0; l < 6; l++) {
    char name[16], dims[64];
    snprintf(name, sizeof name, "%sw", L[l].tag);
    snprintf(dims, sizeof dims, "%d,%d,%d,%d", L[l].cout, L[l].cin / L[l].group, L[l].k,
             L[l].k);
    global_f32(text, sizeof text, name, dims,
               L[l].cout * L[l].cin / L[l].group * L[l].k * L[l].k, 1.5 / L[l].k, 0.0,
               &rng);
    const char *sfx[4] = {"g", "b", "m", "v"};
    for (int j = 0; j < 4; j++) {
      snprintf(name, sizeof name, "%s%s", L[l].tag, sfx[j]);
      snprintf(dims, sizeof dims, "%d", L[l].cout);
      global_f32(text, sizeof text, name, dims, L[l].cout, j == 3 ? 0.2 : 0.3,
                 j == 0 || j == 3 ? 1.0 : 0.0, &rng);
    }
  }
  global_f32(text, sizeof text, "ebias", "48", 48, 0.5, 0.0, &rng);
  size_t at = strlen(text);
  snprintf(
      text + at, sizeof text - at,
      "func @forward(%%x: f32[2,16,18,17]) -> (f32[2,48], f32[2,32,9,9]) {\n"
      "  %%a = Conv(%%x, @aw) {group = 16, kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : "
      "f32[2,16,18,17]\n"
      "  %%an = BatchNormalization(%%a, @ag, @ab, @am, @av) : f32[2,16,18,17]\n"
      "  %%ar = Relu(%%an) : f32[2,16,18,17]\n"
      "  %%b = Conv(%%ar, @bw) {kernel_shape = [1, 1]} : f32[2,32,18,17]\n"
      "  %%bn = BatchNormalization(%%b, @bg, @bb, @bm, @bv) : f32[2,32,18,17]\n"
      "  %%br = Relu(%%bn) : f32[2,32,18,17]\n"
      "  %%c = Conv(%%br, @cw) {group = 32, kernel_shape = [3, 3], pads = [1, 1, 1, 1], "
      "strides = [2, 2]} : f32[2,32,9,9]\n"
      "  %%cn = BatchNormalization(%%c, @cg, @cb, @cm, @cv) : f32[2,32,9,9]\n"
      "  %%cr = Relu(%%cn) : f32[2,32,9,9]\n"
      "  %%d = Conv(%%cr, @dw) {kernel_shape = [1, 1]} : f32[2,48,9,9]\n"
      "  %%dn = BatchNormalization(%%d, @dg, @db, @dm, @dv) : f32[2,48,9,9]\n"
      "  %%dr = Relu(%%dn) : f32[2,48,9,9]\n"
      "  %%e = Conv(%%dr, @ew, @ebias) {kernel_shape = [1, 1]} : f32[2,48,9,9]\n"
      "  %%en = BatchNormalization(%%e, @eg, @eb, @em, @ev) : f32[2,48,9,9]\n"
      "  %%ea = Add(%%en, %%dr) : f32[2,48,9,9]\n"
      "  %%er = Relu(%%ea) : f32[2,48,9,9]\n"
      "  %%f = Conv(%%er, @fw) {group = 48, kernel_shape = [5, 5], pads = [2, 2, 2, 2]} "
      ": "
      "f32[2,48,9,9]\n"
      "  %%fn = BatchNormalization(%%f, @fg, @fb, @fm, @fv) : f32[2,48,9,9]\n"
      "  %%fr = Relu(%%fn) : f32[2,48,9,9]\n"
      "  %%g = GlobalAveragePool(%%fr) : f32[2,48,1,1]\n"
      "  %%y = Flatten(%%g) {axis = 1} : f32[2,48]\n"
      "  return %%y, %%cr\n}\n");
  dml_rt_model_t *m = model_of(text, "nchwc.dmlir");
  if (!m) return;
  const dml_pkg_function_t *f = m->fn;
  unsetenv("DMLC_CPU_NO_FUSE");
  setenv("DMLC_CPU_NCHWC", "1", 1);
  dml_rt_cpu_fuse_t *plan = NULL;
  CHECK_OK(dml_rt_cpu_fuse_plan(f, m->weights, &plan));
  unsetenv("DMLC_CPU_NCHWC");
  int heads = 0, xin = 0, yout = 0, res = 0;
  for (uint32_t k = 0; plan && k < f->n_nodes; k++) {
    if (!plan->ep[k].nchwc) continue;
    heads++;
    xin += (plan->ep[k].nchwc & DML_CPU_NCHWC_X) != 0;
    yout += (plan->ep[k].nchwc & DML_CPU_NCHWC_Y) != 0;
    res += plan->residual[k] != 0;
  }
  printf(
      "NCHWc: %d Convs on the blocked kernels, %d read a blocked X, %d write a blocked "
      "Y, %d with a residual\n",
      heads, xin, yout, res);
  /* a (NCHW X), b, c (NCHW Y: returned), d (NCHW X), e (residual), f (NCHW Y:
   * GlobalAveragePool) */
  CHECK(heads == 6 && xin == 4 && yout == 4 && res == 1);
  dml_rt_cpu_fuse_free(plan);

  float x[N * 16 * H * W];
  for (int i = 0; i < N * 16 * H * W; i++) x[i] = 0.125f * (float)((i * 7) % 17) - 1.0f;
  const float edge[] = {NAN, INFINITY, -INFINITY, -0.0f, 1e-40f, 3e30f};
  float got[2][2][N * 32 * 9 * 9 + N * 48]; /* [threads][nchwc] */
  for (int edges = 0; edges < 2; edges++) {
    if (edges)
      for (int i = 0; i < 6; i++) x[(i * 1013 + 77) % (N * 16 * H * W)] = edge[i];
    memset(got, 0, sizeof got);
    for (int threads = 1; threads <= 2; threads++) {
      dml_cpu_set_num_threads(threads);
      for (int nc = 0; nc < 2; nc++) {
        setenv("DMLC_CPU_NCHWC", nc ? "1" : "0", 1);
        dml_rt_session_t *s = NULL;
        CHECK_OK(dml_rt_session_create(m, "cpu", &s));
        unsetenv("DMLC_CPU_NCHWC");
        if (!s) break;
        dml_tensor_t t;
        memset(&t, 0, sizeof t);
        t.dtype = DML_DTYPE_F32, t.rank = 4, t.dims[0] = N, t.dims[1] = 16, t.dims[2] = H;
        t.dims[3] = W, t.data = x;
        CHECK_OK(dml_rt_session_set_input(s, 0, &t));
        CHECK_OK(dml_rt_session_run(s));
        size_t off = 0;
        for (uint32_t k = 0; k < 2; k++) {
          dml_tensor_t out;
          memset(&out, 0, sizeof out);
          CHECK_OK(dml_rt_session_get_output(s, k, &out));
          size_t want = (k ? (size_t)N * 32 * 9 * 9 : (size_t)N * 48) * sizeof(float);
          CHECK(out.dtype == DML_DTYPE_F32 && dml_tensor_bytes(&out) == want);
          if (out.data && dml_tensor_bytes(&out) == want)
            memcpy((char *)got[threads - 1][nc] + off, out.data, want);
          off += want;
        }
        dml_rt_session_release(s);
      }
    }
    double worst = 0;
    int nan_ref = 0, same_bits = 1, bad = 0;
    for (int q = 0; q < 2; q++)
      for (int i = 0; i < N * 32 * 9 * 9 + N * 48; i++) {
        float r = got[0][0][i], g = got[q][1][i];
        same_bits &= memcmp(&r, &g, sizeof r) == 0;
        if (isnan(r) || isinf(r)) {
          nan_ref += isnan(r);
          bad += isnan(r) ? !isnan(g) : g != r;
          continue;
        }
        double e = fabs((double)g - r) / (1.0 + fabs(r));
        if (!(e <= worst)) worst = e;
      }
    printf(
        "NCHWc session vs NCHW%s: max error %.2e relative to 1 + |ref|, %d NaN in the "
        "reference, same bits: %s\n",
        edges ? " (edge inputs)" : "", worst, nan_ref, same_bits ? "yes" : "no");
    CHECK(worst <= 1e-5 && bad == 0);
    CHECK(memcmp(got[0][1], got[1][1], sizeof got[0][1]) == 0); /* 2 threads = 1 */
    CHECK(edges ? nan_ref > 0 : nan_ref == 0);
  }
  dml_cpu_set_num_threads(1);
  dml_rt_model_release(m);
}

int main(void) {
  RUN(test_rnn_packed_session);
  RUN(test_nchwc_layout);
  RUN(test_moved_output_kept);
  RUN(test_elementwise_chain);
  RUN(test_silu_chain);
  RUN(test_fashion_mlp);
  RUN(test_lenet5);
  RUN(test_resnet_small);
  return dml_test_finish();
}
