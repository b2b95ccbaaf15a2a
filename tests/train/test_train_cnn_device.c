/* test_train_cnn_device.c — `dmlc train --device DEV` of a CNN against the
 * same training on the CPU: tests/train/fcn_sym.onnx (make_fcn_sym.py: Conv
 * 3x3 pads 1, Relu, Conv 3x3 stride 2 with begin pads only, Relu, Conv 1x1,
 * GlobalAveragePool; cross-entropy, Adam lr 0.01), 2 epochs of 3 batches
 * of 4 (6 steps) on 12 images, compiled
 *   - statically (--input-shape x=[1:64]x3x16x16): on the device the Conv
 *     weight gradients run as ConvWeightGrad kernels and the input
 *     gradients as ConvTranspose kernels;
 *   - with symbolic H, W (--dim-bound H=32,W=32), trained at 16x16 and at
 *     21x17: the stride-2 Conv's input gradient is ConvInputGrad, its pads
 *     and every extent read at run time;
 * and $DMLC_SHARED_DIR/models/lenet5.onnx (Conv, Relu, MaxPool twice, three
 * Gemms: MaxPoolGrad on the device), static, on 12 images of 1x28x28; and
 * two ResNets on 12 images of 3x32x32 with SGD + momentum (TOL_SGDM):
 * tests/train/resnet_mini.onnx (ResNet-18's shape: BatchNormalization in
 * training mode, MaxPoolGrad, AveragePoolGrad) and
 * $DMLC_SHARED_DIR/models/resnet_small.onnx; and a BERT-class encoder,
 * tests/train/bert_tiny.onnx, on 12 rows of 8 token ids, the same way.
 * Every loss and accuracy of the history and every parameter and optimizer
 * state of the final checkpoint within TOL * max(1, |cpu|) (LeNet-5: 1e-3): the device's
 * sums run in another order (the weight gradient's in blocked partial sums,
 * docs/kernels.md), so the values differ in the last bits and Adam carries
 * that through the steps. `dmlc train --device` refuses a package with
 * nodes its device cannot run (no CPU fall-back in training), so a passing
 * run is one that ran every training node on the device. Skips (77) when
 * `dmlc devices` lists no such device.
 *   test_train_cnn_device [DEVICE [DMLC SOURCE_DIR]]  (default: vulkan,
 *       $DMLC_BUILD_DIR/compiler/dmlc and $DMLC_SOURCE_DIR) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dml_file.h"
#include "dml_npy.h"
#include "dml_safetensors.h"
#include "dml_test.h"
#include "train_history.h"

static const char *g_dmlc, *g_model, *g_dev, *g_src;
static char g_dir[] = "/tmp/dmlc_train_cnn_device.XXXXXX";

#define TOL 1e-4
/* The ResNets and the BERT-class encoder train with SGD + momentum 0.9
 * (velocity as optimizer state): measured 2.2e-7 (resnet_mini), 1.8e-7
 * (resnet_small) and 1.3e-7 (bert_tiny) on lavapipe.
 * With Adam (lr 0.01) their parameters differ by up to 9.3e-3, one step of
 * the learning rate: Adam's first update is lr * g / (|g| + eps), about
 * lr * sign(g), so a gradient element near 0 whose sign the summation
 * order flips (likely a sum that cancels) moves by 2 lr instead of ~0;
 * with plain SGD the same steps agree within 1.9e-7. bert_tiny shows it
 * plainly: its key bias has a gradient of exactly 0 in exact arithmetic
 * (Softmax ignores a constant per row), and with Adam (6 steps on other
 * random ids) one element of it ended at -2.1e-4 on the device and at
 * +1.2e-4 on the CPU. */
#define TOL_SGDM 1e-5

/* Writes x [n,ch,h,w] (an LCG in [-1, 1]) and labels y [n] (0..4) as .npy. */
static void write_data(const char *tag, int64_t n, int64_t ch, int64_t h, int64_t w,
                       uint32_t seed) {
  int64_t k = n * ch * h * w;
  float *x = (float *)malloc((size_t)k * sizeof(float));
  int64_t *y = (int64_t *)malloc((size_t)n * sizeof(int64_t));
  for (int64_t i = 0; i < k; i++) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = (float)((seed >> 8) * (1.0 / 16777216.0) * 2 - 1);
  }
  for (int64_t i = 0; i < n; i++) y[i] = (i * 7 + h) % 5;
  int64_t xd[4] = {n, ch, h, w};
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

/* Writes token ids [n, len] (an LCG in [0, vocab)) and labels y [n] (0..4)
 * as .npy. */
static void write_ids(const char *tag, int64_t n, int64_t len, int64_t vocab,
                      uint32_t seed) {
  int64_t k = n * len;
  int64_t *x = (int64_t *)malloc((size_t)k * sizeof(int64_t));
  int64_t *y = (int64_t *)malloc((size_t)n * sizeof(int64_t));
  for (int64_t i = 0; i < k; i++) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = (int64_t)((seed >> 8) % (uint32_t)vocab);
  }
  for (int64_t i = 0; i < n; i++) y[i] = (i * 7) % 5;
  int64_t xd[2] = {n, len};
  dml_tensor_t tx = dml_test_tensor(DML_DTYPE_I64, 2, xd, x);
  dml_tensor_t ty = dml_test_tensor(DML_DTYPE_I64, 1, xd, y);
  char p[600];
  snprintf(p, sizeof p, "%s/x%s.npy", g_dir, tag);
  CHECK_OK(dml_npy_write_file(p, &tx));
  snprintf(p, sizeof p, "%s/y%s.npy", g_dir, tag);
  CHECK_OK(dml_npy_write_file(p, &ty));
  free(x);
  free(y);
}

/* `dmlc train` of the model with `shape` on data `tag` on device `dev`,
 * the last checkpoint into DIR/<name>, the history DIR/<name>.csv.
 * Returns the exit status (stderr printed on a failure). */
static int train(const char *model, const char *name, const char *shape, const char *tag,
                 const char *dev, const char *opt) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "'%s' train '%s' %s --data '%s/x%s.npy,%s/y%s.npy' --epochs 2 --batch-size 4 "
           "--validate-on none --optimizer %s --lr 0.01 --checkpoint-every 2 "
           "--checkpoint-dir '%s/%s' -o '%s/%s.dmlpkg' --history '%s/%s.csv' --device %s "
           "--quiet >/dev/null 2>'%s/%s.err'",
           g_dmlc, model, shape, g_dir, tag, g_dir, tag, opt, g_dir, name, g_dir, name,
           g_dir, name, dev, g_dir, name);
  int rc = system(cmd);
  if (rc) {
    char p[600];
    snprintf(p, sizeof p, "%s/%s.err", g_dir, name);
    uint8_t *e = NULL;
    size_t n = 0;
    dml_status_free(dml_file_read_all("test", p, &e, &n));
    fprintf(stderr, "dmlc train (%s, %s) exited %d: %.*s\n", name, dev, rc, (int)n,
            e ? (const char *)e : "");
    free(e);
  }
  return rc;
}

static double scaled(double a, double b) {
  return fabs(a - b) / fmax(1.0, fabs(b));
}

/* The largest scaled difference of histories a (device) and b (CPU). */
static double compare_histories(const char *a, const char *b) {
  double la[8], aa[8], lb[8], ab[8], worst = 0;
  int na = dml_test_read_history(g_dir, a, la, aa, 8),
      nb = dml_test_read_history(g_dir, b, lb, ab, 8);
  CHECK(na == 2 && nb == 2);
  for (int i = 0; i < na && i < nb; i++) {
    double e = fmax(scaled(la[i], lb[i]), scaled(aa[i], ab[i]));
    if (!(e <= worst)) worst = e;
    printf("%s vs %s, epoch %d: loss %.9g / %.9g, accuracy %g / %g\n", a, b, i + 1, la[i],
           lb[i], aa[i], ab[i]);
    CHECK(isfinite(la[i]));
  }
  return worst;
}

/* The largest scaled difference of checkpoints a and b (the same names). */
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
        double e = scaled(dml_load_f64(x->dtype, x->data, (size_t)k),
                          dml_load_f64(o->tensor.dtype, o->tensor.data, (size_t)k));
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

/* Trains `shape` on data `tag` with optimizer `opt` on the CPU (run
 * c<name>) and the device (run d<name>) and compares them. */
static void check_same(const char *model, const char *name, const char *shape,
                       const char *tag, const char *opt, double tol) {
  char cn[64], dn[64], cc[128], dc[128];
  snprintf(cn, sizeof cn, "c%s", name);
  snprintf(dn, sizeof dn, "d%s", name);
  CHECK(train(model, cn, shape, tag, "cpu", opt) == 0);
  CHECK(train(model, dn, shape, tag, g_dev, opt) == 0);
  snprintf(cc, sizeof cc, "%s/epoch-0002.safetensors", cn);
  snprintf(dc, sizeof dc, "%s/epoch-0002.safetensors", dn);
  double wh = compare_histories(dn, cn), wc = compare_checkpoints(dc, cc);
  printf(
      "%s %s (%s) on %s vs cpu: largest scaled difference %g (history), %g (parameters "
      "and optimizer state), tolerance %g\n",
      strrchr(model, '/') + 1, shape, opt, g_dev, wh, wc, tol);
  CHECK(wh <= tol && wc <= tol);
}

static void test_static(void) {
  write_data("16", 12, 3, 16, 16, 1);
  check_same(g_model, "s16", "--input-shape 'x=[1:64]x3x16x16'", "16", "adam", TOL);
}

/* One package for any H, W <= 32, trained at 16x16 and at 21x17 (odd
 * extents: the stride-2 Conv's input gradient has output_padding 1). */
static void test_symbolic(void) {
  write_data("21", 10, 3, 21, 17, 2);
  check_same(g_model, "y16", "--dim-bound H=32,W=32", "16", "adam", TOL);
  check_same(g_model, "y21", "--dim-bound H=32,W=32", "21", "adam", TOL);
}

/* LeNet-5 of the shared models (Conv, Relu, MaxPool twice, three Gemms):
 * its MaxPoolGrad kernels too. Left out (said) without the shared folder. */
static void test_lenet5(void) {
  const char *shared = getenv("DMLC_SHARED_DIR");
  char model[1024];
  snprintf(model, sizeof model, "%s/models/lenet5.onnx", shared ? shared : "../shared");
  if (access(model, R_OK) != 0) {
    printf("lenet5: %s not found, left out\n", model);
    return;
  }
  write_data("l", 12, 1, 28, 28, 3);
  /* its first losses are large (15: untrained logits against labels
   * 0..4) and Adam's first steps normalize the gradients, so the rounding
   * of the Gemm and Conv sums moves the parameters by up to 1e-4 (measured
   * 9.5e-5 on lavapipe): a looser tolerance */
  check_same(model, "l5", "", "l", "adam", 1e-3);
}

/* tests/train/resnet_mini.onnx (make_resnet_mini.py: ResNet-18's shape
 * with 8/16 channels at 32x32: Conv 7x7 stride 2, BatchNormalization,
 * Relu, MaxPool, two residual blocks, the second's shortcut AveragePool
 * 2x2 stride 2 then Conv 1x1, GlobalAveragePool, Gemm): BatchNormalization
 * in training mode (batch statistics, running mean/variance updated: state
 * in the checkpoint), MaxPoolGrad and AveragePoolGrad on the device. */
static void test_resnet_mini(void) {
  char model[1024];
  snprintf(model, sizeof model, "%s/tests/train/resnet_mini.onnx", g_src);
  write_data("r", 12, 3, 32, 32, 4);
  check_same(model, "rm", "", "r", "momentum", TOL_SGDM);
}

/* $DMLC_SHARED_DIR/models/resnet_small.onnx (stem + 3 residual blocks of
 * 16/32/64 channels, BatchNormalization, GlobalAveragePool, Gemm) on the
 * same images. Left out (said) without the shared folder. */
static void test_resnet_small(void) {
  const char *shared = getenv("DMLC_SHARED_DIR");
  char model[1024];
  snprintf(model, sizeof model, "%s/models/resnet_small.onnx",
           shared ? shared : "../shared");
  if (access(model, R_OK) != 0) {
    printf("resnet_small: %s not found, left out\n", model);
    return;
  }
  check_same(model, "rs", "", "r", "momentum", TOL_SGDM);
}

/* tests/train/bert_tiny.onnx (make_bert_tiny.py: one BERT encoder layer of
 * width 16, 2 heads, over 8 tokens of a 50-word vocabulary; LayerNorm,
 * GELU as Erf, mean pooling, Gemm) on 12 rows of token ids: the
 * embedding's gradient (a ScatterND over the symbolic [N, 8] ids),
 * attention's and LayerNormalization's on the device. */
static void test_bert_tiny(void) {
  char model[1024];
  snprintf(model, sizeof model, "%s/tests/train/bert_tiny.onnx", g_src);
  write_ids("b", 12, 8, 50, 5);
  check_same(model, "bt", "", "b", "momentum", TOL_SGDM);
}

int main(int argc, char **argv) {
  char dmlc_path[1024], model[1024], cmd[1400];
  const char *build = getenv("DMLC_BUILD_DIR"), *src = getenv("DMLC_SOURCE_DIR");
  snprintf(dmlc_path, sizeof dmlc_path, "%s/compiler/dmlc", build ? build : "build");
  g_dmlc = dmlc_path;
  g_dev = argc >= 2 ? argv[1] : "vulkan";
  if (argc >= 4) {
    g_dmlc = argv[2];
    src = argv[3];
  }
  if (!src) {
    fprintf(stderr,
            "usage: test_train_cnn_device [DEVICE [DMLC SOURCE_DIR]] (or set "
            "DMLC_SOURCE_DIR)\n");
    return 2;
  }
  /* the device's backend must be listed by `dmlc devices` */
  char backend[32];
  snprintf(backend, sizeof backend, "%.*s", (int)strcspn(g_dev, ":"), g_dev);
  snprintf(cmd, sizeof cmd, "'%s' devices --json | grep -q '\"backend\": \"%s\"'", g_dmlc,
           backend);
  if (system(cmd) != 0) {
    printf("SKIP: no %s device (dmlc devices)\n", g_dev);
    return 77;
  }
  g_src = src;
  snprintf(model, sizeof model, "%s/tests/train/fcn_sym.onnx", src);
  g_model = model;
  if (!mkdtemp(g_dir)) {
    perror("mkdtemp");
    return 1;
  }
  RUN(test_static);
  RUN(test_symbolic);
  RUN(test_lenet5);
  RUN(test_resnet_mini);
  RUN(test_resnet_small);
  RUN(test_bert_tiny);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
  return dml_test_finish();
}
