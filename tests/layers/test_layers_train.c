/*
 * test_layers_train.c — models built with the layer API train through the
 * training build (passes/dml_train.h, dml_compile_options_t.train) like
 * imported ONNX models:
 *
 *   - fashion_mlp on Fashion-MNIST: one pass of Adam (lr 1e-3, batch 32)
 *     over the first 6,000 training images takes the accuracy on the first
 *     1,000 test images from chance to at least 75% (measured 77.3%;
 *     PyTorch 1.13 with the same model, data, optimizer and batches, eval
 *     mode, seeds 0-4: 76.9% to 78.0%, mean 77.4%; torch_train_reference.py).
 *     The trained parameters are then read from the training session by
 *     their names, written back into the layer model with
 *     dml_layers_set_param, compiled into an inference package, and give
 *     the same predictions as eval_step (the names are the same at every
 *     stage).
 *   - a CNN with every layer kind (conv, batch norm, pools, residual add,
 *     concat, GELU, dropout, layer norm, ...) and an embedding model: the
 *     eval_step's loss on a fixed batch falls by at least 10% over 15
 *     steps (measured: Adam 39%, momentum 18% for the CNN, whose eval loss
 *     uses BatchNorm's slowly moving running statistics; Adam 99% for the
 *     embedding model); BatchNorm's running statistics (STATE globals)
 *     move.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "dml_onnx.h"
#include "dml_train.h"
#include "layers_test_util.h"

/* Compiles `lm` with the training build into a model. */
static dml_rt_model_t *compile_train(const dml_layers_model_t *lm,
                                     const dml_train_config_t *cfg) {
  dml_ir_module_t *ir = NULL;
  CHECK_OK(dml_layers_model_to_ir(lm, &ir));
  if (!ir) return NULL;
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.train = cfg;
  void *pkg = NULL;
  size_t size = 0;
  dml_status_t st = dml_compile_module_memory(ir, "layers-train", &o, &pkg, &size, NULL);
  dml_ir_module_release(ir);
  CHECK_OK(st);
  dml_rt_model_t *m = NULL;
  if (!st) CHECK_OK(dml_rt_model_load_memory(pkg, size, &m));
  free(pkg);
  return m;
}

/* One step: binds input, target and (for train_step) lr; returns the loss
 * and, for eval_step, the correct count. */
static float step(dml_rt_session_t *s, const dml_tensor_t *x, const dml_tensor_t *y,
                  const dml_tensor_t *lr, int64_t *correct) {
  dml_rt_session_clear_inputs(s);
  CHECK_OK(dml_rt_session_set_input_by_name(s, "input", x));
  CHECK_OK(dml_rt_session_set_input_by_name(s, "target", y));
  if (lr) CHECK_OK(dml_rt_session_set_input_by_name(s, "lr", lr));
  CHECK_OK(dml_rt_session_run(s));
  dml_tensor_t lo;
  CHECK_OK(dml_rt_session_get_output(s, 0, &lo));
  if (correct) {
    dml_tensor_t c;
    CHECK_OK(dml_rt_session_get_output(s, 1, &c));
    *correct = c.data ? *(const int64_t *)c.data : -1;
  }
  return lo.data ? *(const float *)lo.data : NAN;
}

/* ---- Fashion-MNIST ---- */

static unsigned char *read_idx(const char *name, uint32_t magic, size_t want) {
  char path[1024];
  snprintf(path, sizeof path, "/usr/share/datasets/fashion-mnist/%s", name);
  gzFile f = gzopen(path, "rb");
  CHECK(f != NULL);
  if (!f) return NULL;
  unsigned char hdr[16];
  int hb = magic == 0x803 ? 16 : 8;
  unsigned char *data = (unsigned char *)malloc(want);
  int ok = gzread(f, hdr, (unsigned)hb) == hb &&
           ((uint32_t)hdr[2] << 8 | hdr[3]) == (magic & 0xffff) && data &&
           gzread(f, data, (unsigned)want) == (int)want;
  gzclose(f);
  CHECK(ok);
  if (!ok) {
    free(data);
    return NULL;
  }
  return data;
}

static dml_layers_model_t *build_mlp(void) {
  dml_layers_model_t *m = NULL;
  dml_layers_model_options_t mo = {.seed = 0, .batch_bound = 32};
  CHECK_OK(dml_layers_model_create(&mo, &m));
  if (!m) return NULL;
  dml_layers_tensor_t *x = NULL, *h = NULL;
  int64_t shape[2] = {-1, 784};
  dml_layers_dense_options_t d = dml_layers_dense_defaults();
  d.activation = DML_LAYERS_ACT_RELU;
  CHECK_OK(dml_layers_input(m, "input", DML_DTYPE_F32, 2, shape, &x));
  CHECK_OK(dml_layers_dense(m, x, 256, &d, &h));
  CHECK_OK(dml_layers_dropout(m, h, 0.2, NULL, &h));
  CHECK_OK(dml_layers_dense(m, h, 128, &d, &h));
  CHECK_OK(dml_layers_dense(m, h, 10, NULL, &h));
  CHECK_OK(dml_layers_output(m, h, "logits"));
  return m;
}

enum { N_TRAIN = 6000, N_TEST = 1000, BATCH = 32 };

/* Runs inference session `s` (input 0: f32 [b, 784] pixels / 255, output
 * 0: 10 logits) over the N_TEST images in batches of BATCH (xb: a batch's
 * buffer) and returns how many argmaxes equal the labels. With `save`, the
 * first batch's input and logits go to <build>/tests/layers/<save>_input.npy
 * and <save>_logits.npy. */
static int64_t count_correct(dml_rt_session_t *s, const unsigned char *img,
                             const unsigned char *lab, float *xb, const char *save) {
  int64_t correct = 0;
  for (int start = 0; start < N_TEST; start += BATCH) {
    int b = N_TEST - start < BATCH ? N_TEST - start : BATCH;
    for (int i = 0; i < b * 784; i++) xb[i] = (float)img[start * 784 + i] / 255.0f;
    int64_t xd[2] = {b, 784};
    dml_tensor_t tx = dml_test_tensor(DML_DTYPE_F32, 2, xd, xb), o;
    dml_rt_session_clear_inputs(s);
    CHECK_OK(dml_rt_session_set_input(s, 0, &tx));
    CHECK_OK(dml_rt_session_run(s));
    CHECK_OK(dml_rt_session_get_output(s, 0, &o));
    if (start == 0 && save) {
      char rel[256], path[1024];
      snprintf(rel, sizeof rel, "tests/layers/%s_input.npy", save);
      CHECK_OK(dml_npy_write_file(dml_test_path("DMLC_BUILD_DIR", rel, path, sizeof path),
                                  &tx));
      snprintf(rel, sizeof rel, "tests/layers/%s_logits.npy", save);
      CHECK_OK(dml_npy_write_file(dml_test_path("DMLC_BUILD_DIR", rel, path, sizeof path),
                                  &o));
    }
    const float *lg = (const float *)o.data;
    for (int i = 0; lg && i < b; i++) {
      int best = 0;
      for (int k = 1; k < 10; k++)
        if (lg[i * 10 + k] > lg[i * 10 + best]) best = k;
      correct += best == lab[start + i];
    }
  }
  return correct;
}

static void test_fashion_mlp_trains(void) {
  unsigned char *tri = read_idx("train-images-idx3-ubyte.gz", 0x803, N_TRAIN * 784);
  unsigned char *trl = read_idx("train-labels-idx1-ubyte.gz", 0x801, N_TRAIN);
  unsigned char *tei = read_idx("t10k-images-idx3-ubyte.gz", 0x803, N_TEST * 784);
  unsigned char *tel = read_idx("t10k-labels-idx1-ubyte.gz", 0x801, N_TEST);
  dml_layers_model_t *lm = build_mlp();
  dml_train_config_t cfg;
  dml_train_config_init(&cfg);
  cfg.optimizer = DML_OPTIMIZER_ADAM;
  dml_rt_model_t *m = lm && tri && trl && tei && tel ? compile_train(lm, &cfg) : NULL;
  dml_rt_session_t *tr = NULL, *ev = NULL;
  if (m) CHECK_OK(dml_rt_session_create_function(m, "cpu", "train_step", NULL, &tr));
  if (tr) CHECK_OK(dml_rt_session_create_function(m, "cpu", "eval_step", tr, &ev));
  float *xb = (float *)malloc(BATCH * 784 * sizeof(float));
  int64_t yb[BATCH];
  float lr = 1e-3f;
  int64_t lr_dims[1] = {0};
  dml_tensor_t tlr = dml_test_tensor(DML_DTYPE_F32, 0, lr_dims, &lr);
  int64_t correct_before = 0, correct_after = 0;
  int32_t *pred = (int32_t *)calloc(N_TEST, sizeof(int32_t));
  for (int phase = 0; ev && xb && pred && phase < 3; phase++) {
    /* 0: eval before, 1: train one pass, 2: eval after */
    int n = phase == 1 ? N_TRAIN : N_TEST;
    const unsigned char *img = phase == 1 ? tri : tei, *lab = phase == 1 ? trl : tel;
    for (int start = 0; start < n; start += BATCH) {
      int b = n - start < BATCH ? n - start : BATCH;
      for (int i = 0; i < b * 784; i++) xb[i] = (float)img[start * 784 + i] / 255.0f;
      for (int i = 0; i < b; i++) yb[i] = lab[start + i];
      int64_t xd[2] = {b, 784}, yd[1] = {b}, c = 0;
      dml_tensor_t tx = dml_test_tensor(DML_DTYPE_F32, 2, xd, xb),
                   ty = dml_test_tensor(DML_DTYPE_I64, 1, yd, yb);
      if (phase == 1) {
        float loss = step(tr, &tx, &ty, &tlr, NULL);
        CHECK(loss == loss);
      } else {
        step(ev, &tx, &ty, NULL, &c);
        *(phase ? &correct_after : &correct_before) += c;
      }
    }
  }
  printf(
      "fashion_mlp (layers): test accuracy %.1f%% before, %.1f%% after one Adam pass "
      "over %d images\n",
      100.0 * (double)correct_before / N_TEST, 100.0 * (double)correct_after / N_TEST,
      N_TRAIN);
  CHECK(correct_before < 250); /* near chance */
  CHECK(correct_after >= 750);

  /* The trained parameters back into the layer model, by name. */
  for (size_t i = 0; tr && i < dml_layers_num_params(lm); i++) {
    dml_layers_param_info_t pi;
    CHECK_OK(dml_layers_param_info(lm, i, &pi));
    int32_t g = dml_rt_model_find_global(m, pi.name);
    CHECK(g >= 0);
    dml_tensor_t v;
    if (g >= 0 && !dml_rt_session_global(tr, (uint32_t)g, &v))
      CHECK_OK(dml_layers_set_param(lm, pi.name, v.data, dml_tensor_bytes(&v)));
  }
  dml_rt_model_t *im = NULL;
  dml_rt_session_t *is = tr ? layers_session(lm, &im) : NULL;
  int64_t correct_inf = is ? count_correct(is, tei, tel, xb, NULL) : 0;
  printf("inference package from the trained layer model: %.1f%%\n",
         100.0 * (double)correct_inf / N_TEST);
  CHECK(correct_inf == correct_after);

  /* The trained layer model as ONNX (dml_onnx_export_module), imported back:
   * the same accuracy; its first batch's input and logits are kept for
   * tests/layers/check_export_ort.py (ONNX Runtime on the same file). */
  char onnx_path[1024];
  dml_test_path("DMLC_BUILD_DIR", "tests/layers/export_trained_mlp.onnx", onnx_path,
                sizeof onnx_path);
  dml_ir_module_t *eir = NULL, *back = NULL;
  if (tr) CHECK_OK(dml_layers_model_to_ir(lm, &eir));
  if (eir) CHECK_OK(dml_onnx_export_module(eir, onnx_path, NULL));
  dml_ir_module_release(eir);
  if (eir) CHECK_OK(dml_onnx_import_file(onnx_path, NULL, &back));
  void *epkg = NULL;
  size_t esize = 0;
  dml_rt_model_t *em = NULL;
  dml_rt_session_t *es = NULL;
  if (back)
    CHECK_OK(dml_compile_module_memory(back, "trained-onnx", NULL, &epkg, &esize, NULL));
  dml_ir_module_release(back);
  if (epkg) CHECK_OK(dml_rt_model_load_memory(epkg, esize, &em));
  free(epkg);
  if (em) CHECK_OK(dml_rt_session_create(em, "cpu", &es));
  int64_t correct_onnx = es ? count_correct(es, tei, tel, xb, "export_trained_mlp") : 0;
  printf("the trained layer model exported to ONNX and imported back: %.1f%%\n",
         100.0 * (double)correct_onnx / N_TEST);
  CHECK(correct_onnx == correct_after);
  dml_rt_session_release(es);
  dml_rt_model_release(em);
  dml_rt_session_release(is);
  dml_rt_model_release(im);
  free(pred);
  free(xb);
  dml_rt_session_release(ev);
  dml_rt_session_release(tr);
  dml_rt_model_release(m);
  dml_layers_model_release(lm);
  free(tri);
  free(trl);
  free(tei);
  free(tel);
}

/* ---- fixed-batch models ---- */

/* Trains `lm` for 15 steps on a fixed batch of 8 (input `x`, labels 0..7 mod
 * n_classes) and checks eval_step's loss falls. */
static void train_fixed(dml_layers_model_t *lm, const dml_tensor_t *x, int n_classes,
                        dml_optimizer_kind_t opt, float lr, const char *what) {
  dml_train_config_t cfg;
  dml_train_config_init(&cfg);
  cfg.optimizer = opt;
  dml_rt_model_t *m = compile_train(lm, &cfg);
  dml_rt_session_t *tr = NULL, *ev = NULL;
  if (m) CHECK_OK(dml_rt_session_create_function(m, "cpu", "train_step", NULL, &tr));
  if (tr) CHECK_OK(dml_rt_session_create_function(m, "cpu", "eval_step", tr, &ev));
  if (!ev) {
    dml_rt_session_release(tr);
    dml_rt_model_release(m);
    return;
  }
  int64_t y[8], yd[1] = {8}, none[1] = {0};
  for (int i = 0; i < 8; i++) y[i] = i % n_classes;
  dml_tensor_t ty = dml_test_tensor(DML_DTYPE_I64, 1, yd, y),
               tlr = dml_test_tensor(DML_DTYPE_F32, 0, none, &lr);
  float before = step(ev, x, &ty, NULL, NULL);
  for (int s = 0; s < 15; s++) step(tr, x, &ty, &tlr, NULL);
  float after = step(ev, x, &ty, NULL, NULL);
  printf("%s: eval loss %.4f -> %.4f after 15 %s steps\n", what, before, after,
         dml_optimizer_kind_name(opt));
  CHECK(after < 0.9f * before);
  /* BatchNorm's running statistics moved from their initial 0 / 1. */
  int32_t g = dml_rt_model_find_global(m, "batch_norm.running_mean");
  if (g >= 0) {
    dml_tensor_t v;
    CHECK_OK(dml_rt_session_global(tr, (uint32_t)g, &v));
    double sum = 0;
    for (int64_t i = 0; v.data && i < v.dims[0]; i++)
      sum += fabs(((const float *)v.data)[i]);
    CHECK(sum > 0);
  }
  dml_rt_session_release(ev);
  dml_rt_session_release(tr);
  dml_rt_model_release(m);
}

static void test_cnn_trains(void) {
  dml_layers_model_t *m = NULL;
  CHECK_OK(dml_layers_model_create(NULL, &m));
  if (!m) return;
  dml_layers_tensor_t *x = NULL, *h = NULL, *c2 = NULL, *a = NULL, *b = NULL, *t = NULL;
  int64_t shape[4] = {-1, 3, 12, 12};
  CHECK_OK(dml_layers_input(m, "input", DML_DTYPE_F32, 4, shape, &x));
  dml_layers_conv2d_options_t co = dml_layers_conv2d_defaults();
  co.same = 1;
  CHECK_OK(dml_layers_conv2d(m, x, 8, 3, 3, &co, &h));
  CHECK_OK(dml_layers_batch_norm(m, h, NULL, &h));
  CHECK_OK(dml_layers_relu(m, h, &h));
  CHECK_OK(dml_layers_max_pool2d(m, h, 2, 2, NULL, &h));
  co.groups = 2;
  co.activation = DML_LAYERS_ACT_ELU;
  CHECK_OK(dml_layers_conv2d(m, h, 8, 3, 3, &co, &c2));
  CHECK_OK(dml_layers_add(m, h, c2, &h));
  dml_layers_pool2d_options_t po = dml_layers_pool2d_defaults();
  po.strides[0] = po.strides[1] = 2;
  po.pads[0] = po.pads[1] = po.pads[2] = po.pads[3] = 1;
  CHECK_OK(dml_layers_avg_pool2d(m, h, 3, 3, &po, &a));
  CHECK_OK(dml_layers_max_pool2d(m, h, 3, 3, &po, &b));
  dml_layers_tensor_t *ab[2] = {a, b};
  CHECK_OK(dml_layers_concat(m, ab, 2, 1, &h));
  CHECK_OK(dml_layers_flatten(m, h, &t));
  dml_layers_dense_options_t d = dml_layers_dense_defaults();
  d.activation = DML_LAYERS_ACT_GELU;
  CHECK_OK(dml_layers_dense(m, t, 32, &d, &h));
  CHECK_OK(dml_layers_dropout(m, h, 0.1, NULL, &h));
  CHECK_OK(dml_layers_layer_norm(m, h, NULL, &h));
  CHECK_OK(dml_layers_leaky_relu(m, h, 0.1, &h));
  CHECK_OK(dml_layers_dense(m, h, 8, NULL, &h));
  CHECK_OK(dml_layers_output(m, h, "logits"));
  float *xs = (float *)malloc(8 * 3 * 12 * 12 * sizeof(float));
  for (int i = 0; xs && i < 8 * 3 * 12 * 12; i++)
    xs[i] = (float)((i * 7919) % 1000) / 1000.0f;
  int64_t xd[4] = {8, 3, 12, 12};
  dml_tensor_t tx = dml_test_tensor(DML_DTYPE_F32, 4, xd, xs);
  if (xs) {
    train_fixed(m, &tx, 8, DML_OPTIMIZER_ADAM, 1e-2f, "cnn (layers)");
    train_fixed(m, &tx, 8, DML_OPTIMIZER_MOMENTUM, 5e-2f, "cnn (layers)");
  }
  free(xs);
  dml_layers_model_release(m);
}

static void test_embedding_trains(void) {
  dml_layers_model_t *m = NULL;
  CHECK_OK(dml_layers_model_create(NULL, &m));
  if (!m) return;
  dml_layers_tensor_t *x = NULL, *h = NULL;
  int64_t shape[2] = {-1, 5};
  CHECK_OK(dml_layers_input(m, "input", DML_DTYPE_I64, 2, shape, &x));
  CHECK_OK(dml_layers_embedding(m, x, 20, 6, NULL, &h));
  dml_layers_norm_options_t no = dml_layers_norm_defaults();
  no.axis = 1;
  CHECK_OK(dml_layers_layer_norm(m, h, &no, &h));
  CHECK_OK(dml_layers_flatten(m, h, &h));
  CHECK_OK(dml_layers_dense(m, h, 4, NULL, &h));
  CHECK_OK(dml_layers_output(m, h, "logits"));
  int64_t idx[40], xd[2] = {8, 5};
  for (int i = 0; i < 40; i++) idx[i] = (i * 7) % 20;
  dml_tensor_t tx = dml_test_tensor(DML_DTYPE_I64, 2, xd, idx);
  train_fixed(m, &tx, 4, DML_OPTIMIZER_ADAM, 2e-2f, "embedding (layers)");
  dml_layers_model_release(m);
}

int main(void) {
  RUN(test_fashion_mlp_trains);
  RUN(test_cnn_trains);
  RUN(test_embedding_trains);
  return dml_test_finish();
}
