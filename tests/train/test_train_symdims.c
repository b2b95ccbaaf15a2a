/* test_train_symdims.c — `dmlc train` on a fully-convolutional model whose
 * image size is symbolic, at two image sizes from one package (issue 14):
 * tests/train/fcn_sym.onnx (make_fcn_sym.py: Conv 3x3 stride 1, Relu, Conv
 * 3x3 stride 2 with begin pads only, Relu, Conv 1x1, GlobalAveragePool;
 * cross-entropy, Adam) compiled with --dim-bound H=32,W=32 trains 2 epochs
 * on 16x16 images, writes a checkpoint, and a run resumed from it trains 2
 * more on 21x17 images (odd extents: the stride-2 Conv's input gradient
 * has output_padding 1 there, 0 at 16). The same steps with packages
 * compiled statically per size (--input-shape x=[1:64]x3x16x16, then
 * x=[1:64]x3x21x17 resumed from the static run's checkpoint) give the same
 * history and final checkpoint: every loss and accuracy of the CSVs and
 * every parameter and optimizer state within 1e-6 * max(1, |x|) (bit-equal
 * when written; the tolerance leaves room for kernels that differ between
 * a static and a symbolic plan). Then the C API on the trained package:
 * evaluate at both sizes (the 21x17 loss equals the static package's) and
 * predict. Errors: data over the bound (CLI: the symbol and the bound are
 * named), two arrays binding one symbol to two values (C API, a two-input
 * model of IR text).
 *   test_train_symdims [DMLC SOURCE_DIR]  (default: $DMLC_BUILD_DIR/compiler/
 *                                          dmlc and $DMLC_SOURCE_DIR) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dml_driver.h"
#include "dml_file.h"
#include "dml_ir_text.h"
#include "dml_npy.h"
#include "dml_safetensors.h"
#include "dml_test.h"
#include "dml_train.h"
#include "dml_trainer.h"
#include "train_history.h"

static const char *g_dmlc, *g_model;
static char g_dir[] = "/tmp/dmlc_train_symdims.XXXXXX";

#define TOL 1e-6

/* Writes x [n,3,h,w] (an LCG in [-1, 1]) and labels y [n] (0..4) as .npy. */
static void write_data(const char *tag, int64_t n, int64_t h, int64_t w, uint32_t seed) {
  int64_t k = n * 3 * h * w;
  float *x = (float *)malloc((size_t)k * sizeof(float));
  int64_t *y = (int64_t *)malloc((size_t)n * sizeof(int64_t));
  for (int64_t i = 0; i < k; i++) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = (float)((seed >> 8) * (1.0 / 16777216.0) * 2 - 1);
  }
  for (int64_t i = 0; i < n; i++) y[i] = (i * 7 + h) % 5;
  int64_t xd[4] = {n, 3, h, w};
  dml_tensor_t tx = dml_test_tensor(DML_DTYPE_F32, 4, xd, x);
  dml_tensor_t ty = dml_test_tensor(DML_DTYPE_I64, 1, xd, y);
  char p[600];
  snprintf(p, sizeof p, "%s/x%s.npy", g_dir, tag);
  CHECK_OK(dml_npy_write_file(p, &tx));
  snprintf(p, sizeof p, "%s/y%s.npy", g_dir, tag);
  CHECK_OK(dml_npy_write_file(p, &ty));
  free(x);
  free(y);
}

/* `dmlc train` of the model with `shape` (--dim-bound or --input-shape) on
 * data `tag`, to epoch `epochs`, resuming from `resume` (or not), with
 * checkpoints into DIR/<name> and the history DIR/<name>.csv. Returns the
 * exit status; stderr goes to DIR/<name>.err (printed on a failure, but
 * for run e1's, which is meant to fail). */
static int train(const char *name, const char *shape, const char *tag, int epochs,
                 const char *resume) {
  char cmd[4096], res[700] = "";
  if (resume) snprintf(res, sizeof res, "--resume '%s/%s'", g_dir, resume);
  snprintf(cmd, sizeof cmd,
           "'%s' train '%s' %s --data '%s/x%s.npy,%s/y%s.npy' --epochs %d --batch-size 4 "
           "--validate-on none --optimizer adam --lr 0.01 --checkpoint-every 2 "
           "--checkpoint-dir '%s/%s' -o '%s/%s.dmlpkg' --history '%s/%s.csv' %s --quiet "
           ">/dev/null 2>'%s/%s.err'",
           g_dmlc, g_model, shape, g_dir, tag, g_dir, tag, epochs, g_dir, name, g_dir,
           name, g_dir, name, res, g_dir, name);
  int rc = system(cmd);
  if (rc && strcmp(name, "e1")) { /* e1 is meant to fail */
    char p[600];
    snprintf(p, sizeof p, "%s/%s.err", g_dir, name);
    uint8_t *e = NULL;
    size_t n = 0;
    dml_status_free(dml_file_read_all("test", p, &e, &n));
    fprintf(stderr, "dmlc train (%s) exited %d: %.*s\n", name, rc, (int)n,
            e ? (const char *)e : "");
    free(e);
  }
  return rc;
}

static int near(double a, double b) {
  return fabs(a - b) <= TOL * fmax(1.0, fabs(b));
}

static void compare_histories(const char *a, const char *b, int want_rows) {
  double la[8], aa[8], lb[8], ab[8];
  int na = dml_test_read_history(g_dir, a, la, aa, 8),
      nb = dml_test_read_history(g_dir, b, lb, ab, 8);
  CHECK(na == want_rows && nb == want_rows);
  for (int i = 0; i < na && i < nb; i++) {
    if (!near(la[i], lb[i]) || !near(aa[i], ab[i]))
      fprintf(stderr, "%s vs %s, row %d: loss %.9g / %.9g, accuracy %g / %g\n", a, b, i,
              la[i], lb[i], aa[i], ab[i]);
    CHECK(near(la[i], lb[i]) && near(aa[i], ab[i]));
    CHECK(isfinite(la[i]));
  }
}

/* Every tensor of checkpoints a and b (the same names) within TOL;
 * returns the largest scaled difference. */
static double compare_checkpoints(const char *a, const char *b) {
  char pa[600], pb[600];
  snprintf(pa, sizeof pa, "%s/%s", g_dir, a);
  snprintf(pb, sizeof pb, "%s/%s", g_dir, b);
  dml_safetensors_t *fa = NULL, *fb = NULL;
  void *ba = NULL, *bb = NULL;
  CHECK_OK(dml_safetensors_read_file(pa, &fa, &ba));
  CHECK_OK(dml_safetensors_read_file(pb, &fb, &bb));
  double worst = 0;
  if (fa && fb) {
    CHECK(fa->n_tensors == fb->n_tensors && fa->n_tensors > 0);
    for (uint32_t i = 0; i < fa->n_tensors; i++) {
      const dml_tensor_t *x = &fa->tensors[i].tensor;
      const dml_st_tensor_t *o = dml_safetensors_find(fb, fa->tensors[i].name);
      CHECK(o != NULL);
      if (!o) continue;
      int64_t n = dml_dims_numel(x->dims, x->rank);
      CHECK(n == dml_dims_numel(o->tensor.dims, o->tensor.rank));
      for (int64_t k = 0; k < n; k++) {
        double u = dml_load_f64(x->dtype, x->data, (size_t)k);
        double v = dml_load_f64(o->tensor.dtype, o->tensor.data, (size_t)k);
        double e = fabs(u - v) / fmax(1.0, fabs(v));
        if (!(e <= worst)) worst = e;
      }
    }
  }
  dml_safetensors_release(fa);
  dml_safetensors_release(fb);
  free(ba);
  free(bb);
  return worst;
}

static void load_npy(const char *file, dml_tensor_t *t, void **buf) {
  char p[600];
  snprintf(p, sizeof p, "%s/%s", g_dir, file);
  CHECK_OK(dml_npy_read_file(p, t, buf));
}

static void test_two_sizes_one_package(void) {
  write_data("16", 12, 16, 16, 1);
  write_data("21", 10, 21, 17, 2);
  /* one package (symbolic H, W) at 16x16, then resumed at 21x17 */
  const char *sym = "--dim-bound H=32,W=32";
  CHECK(train("s1", sym, "16", 2, NULL) == 0);
  CHECK(train("s2", sym, "21", 4, "s1/epoch-0002.safetensors") == 0);
  /* the same steps with a package per size */
  CHECK(train("t1", "--input-shape 'x=[1:64]x3x16x16'", "16", 2, NULL) == 0);
  CHECK(train("t2", "--input-shape 'x=[1:64]x3x21x17'", "21", 4,
              "t1/epoch-0002.safetensors") == 0);
  compare_histories("s1", "t1", 2);
  compare_histories("s2", "t2", 2);
  double w1 =
      compare_checkpoints("s1/epoch-0002.safetensors", "t1/epoch-0002.safetensors");
  double w2 =
      compare_checkpoints("s2/epoch-0004.safetensors", "t2/epoch-0004.safetensors");
  printf(
      "largest scaled difference of the globals, symbolic vs static: %g after "
      "16x16, %g after 21x17\n",
      w1, w2);
  CHECK(w1 <= TOL && w2 <= TOL);

  /* the trained package: evaluate at both sizes, predict */
  char p[600];
  snprintf(p, sizeof p, "%s/s2.dmlpkg", g_dir);
  dml_rt_model_t *m = NULL, *ms = NULL;
  dml_trainer_t *t = NULL, *ts = NULL;
  CHECK_OK(dml_rt_model_load_file(p, &m));
  snprintf(p, sizeof p, "%s/t2.dmlpkg", g_dir);
  CHECK_OK(dml_rt_model_load_file(p, &ms));
  if (m) CHECK_OK(dml_trainer_create(m, "cpu", &t));
  if (ms) CHECK_OK(dml_trainer_create(ms, "cpu", &ts));
  dml_dataset_t a, b;
  void *bufs[4] = {NULL, NULL, NULL, NULL};
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  load_npy("x16.npy", &a.x, &bufs[0]);
  load_npy("y16.npy", &a.y, &bufs[1]);
  load_npy("x21.npy", &b.x, &bufs[2]);
  load_npy("y21.npy", &b.y, &bufs[3]);
  if (t && ts && bufs[3]) {
    double la = NAN, lb = NAN, lbs = NAN, acc = NAN;
    CHECK_OK(dml_trainer_evaluate(t, &a, 4, &la, &acc));
    CHECK(isfinite(la) && acc >= 0 && acc <= 1);
    CHECK_OK(dml_trainer_evaluate(t, &b, 3, &lb, NULL));
    CHECK_OK(dml_trainer_evaluate(ts, &b, 3, &lbs, NULL));
    CHECK(isfinite(lb) && near(lb, lbs));
    /* the static 21x17 package refuses 16x16 data, naming the dim */
    CHECK_ERROR(dml_trainer_evaluate(ts, &a, 4, NULL, NULL), DML_STATUS_INVALID_ARGUMENT,
                "x is f32[12,3,16,16], the package's 'x' is f32[N,3,21,17]");
    dml_tensor_t y;
    void *ybuf = NULL;
    CHECK_OK(dml_trainer_predict(t, &a.x, 0, &y, &ybuf));
    CHECK(ybuf && y.rank == 2 && y.dims[0] == 12 && y.dims[1] == 5);
    free(ybuf);
  }
  for (int i = 0; i < 4; i++) free(bufs[i]);
  dml_trainer_release(t);
  dml_trainer_release(ts);
  dml_rt_model_release(m);
  dml_rt_model_release(ms);
}

/* Images over the bound: the symbol and its bound are named. */
static void test_over_bound(void) {
  write_data("33", 4, 33, 20, 3);
  CHECK(train("e1", "--dim-bound H=32,W=32", "33", 1, NULL) != 0);
  char p[600];
  snprintf(p, sizeof p, "%s/e1.err", g_dir);
  uint8_t *e = NULL;
  size_t n = 0;
  CHECK_OK(dml_file_read_all("test", p, &e, &n));
  char *text = e ? (char *)realloc(e, n + 1) : NULL;
  if (text) text[n] = 0;
  CHECK(text && strstr(text, "symbol H = 33 exceeds its compiled bound 32") &&
        strstr(text, "--dim-bound H=33"));
  free(text);
}

/* Two inputs sharing symbol L: arrays of one data set must agree on it,
 * and the message names both arrays, the symbol and its bound. */
static void test_inconsistent_binding(void) {
  static const char *k_text =
      "sym batch <= 8\nsym L <= 16\n"
      "global @w : f32[1] param = dense<[0.5]>\n"
      "func @forward(%a: f32[batch,L], %b: f32[batch,L]) -> (?[?]) {\n"
      "  %p = Mul(%a, %b)\n  %q = Mul(%p, @w)\n"
      "  %y = ReduceMean(%q) {axes = [1], keepdims = 1}\n  return %y\n}\n";
  dml_ir_module_t *mod = NULL;
  CHECK_OK(dml_ir_parse(k_text, strlen(k_text), "two_l.dmlir", &mod));
  if (!mod) return;
  dml_train_config_t cfg;
  dml_train_config_init(&cfg);
  cfg.loss = DML_LOSS_MSE;
  cfg.optimizer = DML_OPTIMIZER_SGD;
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.train = &cfg;
  void *pkg = NULL;
  size_t size = 0;
  dml_rt_model_t *m = NULL;
  dml_trainer_t *t = NULL;
  CHECK_OK(dml_compile_module_memory(mod, "two_l.dmlir", &o, &pkg, &size, NULL));
  dml_ir_module_release(mod);
  if (pkg) CHECK_OK(dml_rt_model_load_memory(pkg, size, &m));
  if (m) CHECK_OK(dml_trainer_create(m, "cpu", &t));
  if (t) {
    static float av[4 * 6], bv[4 * 7], cv[4 * 7], yv[4];
    int64_t ad[2] = {4, 6}, bd[2] = {4, 7}, yd[2] = {4, 1};
    dml_dataset_t d;
    memset(&d, 0, sizeof d);
    d.n_inputs = 2;
    d.inputs[0] = dml_test_tensor(DML_DTYPE_F32, 2, ad, av);
    d.inputs[1] = dml_test_tensor(DML_DTYPE_F32, 2, bd, bv);
    d.y = dml_test_tensor(DML_DTYPE_F32, 2, yd, yv);
    CHECK_ERROR(dml_trainer_evaluate(t, &d, 0, NULL, NULL), DML_STATUS_INVALID_ARGUMENT,
                "input 'b' dim 1 gives symbol L = 7 but input 'a' dim 1 gives L = 6");
    CHECK_ERROR(dml_trainer_evaluate(t, &d, 0, NULL, NULL), DML_STATUS_INVALID_ARGUMENT,
                "bound 16");
    /* one size per data set, any size within the bound */
    double l = NAN;
    d.inputs[1] = dml_test_tensor(DML_DTYPE_F32, 2, ad, bv);
    CHECK_OK(dml_trainer_evaluate(t, &d, 0, &l, NULL));
    CHECK(isfinite(l));
    d.inputs[0] = dml_test_tensor(DML_DTYPE_F32, 2, bd, cv); /* [4, 7]: cv's size */
    d.inputs[1] = dml_test_tensor(DML_DTYPE_F32, 2, bd, bv);
    dml_fit_options_t fo;
    dml_fit_options_init(&fo);
    fo.epochs = 1;
    fo.batch_size = 2;
    fo.validation_split = 0;
    fo.verbose = 0;
    CHECK_OK(dml_trainer_fit(t, &d, &fo, NULL));
  }
  dml_trainer_release(t);
  dml_rt_model_release(m);
  free(pkg);
}

int main(int argc, char **argv) {
  char dmlc_path[1024], model[1024], cmd[1200];
  const char *build = getenv("DMLC_BUILD_DIR"), *src = getenv("DMLC_SOURCE_DIR");
  snprintf(dmlc_path, sizeof dmlc_path, "%s/compiler/dmlc", build ? build : "build");
  g_dmlc = dmlc_path;
  if (argc >= 3) {
    g_dmlc = argv[1];
    src = argv[2];
  }
  if (!src) {
    fprintf(stderr,
            "usage: test_train_symdims DMLC SOURCE_DIR (or set DMLC_SOURCE_DIR)\n");
    return 2;
  }
  snprintf(model, sizeof model, "%s/tests/train/fcn_sym.onnx", src);
  g_model = model;
  if (!mkdtemp(g_dir)) {
    perror("mkdtemp");
    return 1;
  }
  RUN(test_two_sizes_one_package);
  RUN(test_over_bound);
  RUN(test_inconsistent_binding);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
  return dml_test_finish();
}
