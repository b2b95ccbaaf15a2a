/*
 * test_layers_models.c — models built with the layer API (dml_layers.h),
 * weights set from PyTorch, outputs compared with PyTorch's.
 *
 *   - fashion_mlp: the MLP of ../shared/models/fashion_mlp.onnx (Flatten,
 *     Linear 784->256, ReLU, Dropout 0.2, Linear 256->128, ReLU, Linear
 *     128->10), layers named as PyTorch's nn.Sequential "net" so that the
 *     parameter names are the ONNX initializers' ("net.1.weight", ...); the
 *     weights are copied by name from the ONNX file and the outputs compared
 *     with PyTorch's saved outputs (fashion_mlp_io).
 *   - cnn and embed: tests/layers/gen_fixtures.py (PyTorch 1.13, eval mode).
 *
 * Tolerance: |dmlc - PyTorch| <= 1e-4 + 1e-4 * |PyTorch| per element (f32
 * on both sides, different summation orders; the largest differences seen
 * are printed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_onnx.h"
#include "layers_test_util.h"

#define ATOL 1e-4
#define RTOL 1e-4

/* The fashion_mlp architecture with PyTorch's module names. */
static dml_layers_model_t *build_fashion_mlp(void) {
  dml_layers_model_t *m = NULL;
  CHECK_OK(dml_layers_model_create(NULL, &m));
  if (!m) return NULL;
  dml_layers_tensor_t *x = NULL, *h = NULL;
  int64_t shape[2] = {-1, 784};
  dml_layers_dense_options_t d = dml_layers_dense_defaults();
  CHECK_OK(dml_layers_input(m, "input", DML_DTYPE_F32, 2, shape, &x));
  CHECK_OK(dml_layers_flatten(m, x, &h));
  d.name = "net.1";
  d.activation = DML_LAYERS_ACT_RELU;
  CHECK_OK(dml_layers_dense(m, h, 256, &d, &h));
  CHECK_OK(dml_layers_dropout(m, h, 0.2, "net.3", &h));
  d.name = "net.4";
  CHECK_OK(dml_layers_dense(m, h, 128, &d, &h));
  d.name = "net.6";
  d.activation = DML_LAYERS_ACT_NONE;
  CHECK_OK(dml_layers_dense(m, h, 10, &d, &h));
  CHECK_OK(dml_layers_output(m, h, "logits"));
  return m;
}

/* Runs `dmlc summary PKG` and returns its output (malloc'd). */
static char *run_summary(const char *pkg) {
  char cmd[2048], dmlc[1024];
  dml_test_path("DMLC_BUILD_DIR", "compiler/dmlc", dmlc, sizeof dmlc);
  snprintf(cmd, sizeof cmd, "'%s' summary '%s' 2>&1", dmlc, pkg);
  FILE *p = popen(cmd, "r");
  CHECK(p != NULL);
  if (!p) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *out = (char *)calloc(cap, 1);
  size_t r;
  while (out && (r = fread(out + n, 1, cap - 1 - n, p)) > 0) n += r;
  CHECK(pclose(p) == 0);
  return out;
}

/* Writes `t` to <build>/tests/layers/export_<tag>_<name>.npy. */
static void save_output_tensor(const char *tag, const char *name, const dml_tensor_t *t) {
  char rel[256], path[1024];
  snprintf(rel, sizeof rel, "tests/layers/export_%s_%s.npy", tag, name);
  CHECK_OK(
      dml_npy_write_file(dml_test_path("DMLC_BUILD_DIR", rel, path, sizeof path), t));
}

/* Writes `lm` as ONNX (dml_onnx_export_module) to
 * <build>/tests/layers/export_<tag>.onnx, imports that file back and
 * compiles it into a cpu session: the export round trip. */
static dml_rt_session_t *layers_session_onnx(const dml_layers_model_t *lm,
                                             const char *tag,
                                             dml_rt_model_t **out_model) {
  *out_model = NULL;
  char rel[256], path[1024];
  snprintf(rel, sizeof rel, "tests/layers/export_%s.onnx", tag);
  dml_test_path("DMLC_BUILD_DIR", rel, path, sizeof path);
  dml_ir_module_t *ir = NULL, *back = NULL;
  CHECK_OK(dml_layers_model_to_ir(lm, &ir));
  if (!ir) return NULL;
  dml_status_t st = dml_onnx_export_module(ir, path, NULL);
  CHECK_OK(st);
  dml_ir_module_release(ir);
  if (st) return NULL;
  CHECK_OK(dml_onnx_import_file(path, NULL, &back));
  if (!back) return NULL;
  void *pkg = NULL;
  size_t size = 0;
  st = dml_compile_module_memory(back, "layers-onnx", NULL, &pkg, &size, NULL);
  dml_ir_module_release(back);
  CHECK_OK(st);
  if (st) return NULL;
  dml_rt_session_t *s = NULL;
  CHECK_OK(dml_rt_model_load_memory(pkg, size, out_model));
  free(pkg);
  if (*out_model) CHECK_OK(dml_rt_session_create(*out_model, "cpu", &s));
  return s;
}

/* Writes the session's output `name` to <build>/tests/layers/export_<tag>_<name>.npy
 * (tests/layers/check_export_ort.py runs ONNX Runtime on export_<tag>.onnx
 * and compares). */
static void save_output(dml_rt_session_t *s, const dml_rt_model_t *m, const char *tag,
                        const char *name) {
  char rel[256], path[1024];
  int32_t k = dml_rt_model_find_output(m, name);
  CHECK(k >= 0);
  dml_tensor_t o;
  if (k < 0 || dml_rt_session_get_output(s, (uint32_t)k, &o)) return;
  snprintf(rel, sizeof rel, "tests/layers/export_%s_%s.npy", tag, name);
  CHECK_OK(
      dml_npy_write_file(dml_test_path("DMLC_BUILD_DIR", rel, path, sizeof path), &o));
}

static void test_fashion_mlp(void) {
  dml_layers_model_t *lm = build_fashion_mlp();
  if (!lm) return;
  int64_t tr = -1, nt = -1;
  dml_layers_param_counts(lm, &tr, &nt);
  CHECK(tr == 235146); /* the model card's count */
  CHECK(nt == 0);
  CHECK(dml_layers_num_params(lm) == 6);

  /* The IR: the batch symbol as the ONNX importer names it, PyTorch's keys. */
  dml_ir_module_t *ir = NULL;
  CHECK_OK(dml_layers_model_to_ir(lm, &ir));
  if (ir) {
    CHECK(ir->n_symbols == 1 && !strcmp(ir->symbols[0].name, "batch") &&
          ir->symbols[0].bound == 64);
    const dml_ir_value_t *w = dml_ir_module_find_global(ir, "net.1.weight");
    CHECK(w && w->global_flags == DML_IR_GLOBAL_PARAM && w->type.dims[0].value == 256 &&
          w->type.dims[1].value == 784);
    const dml_ir_value_t *r = dml_ir_module_find_global(ir, "net.3.ratio");
    CHECK(r && r->global_flags == 0 && *(const float *)r->data == 0.2f);
    dml_ir_function_t *f = dml_ir_module_find_function(ir, "forward");
    int gemm = 0, dropout = 0;
    for (dml_ir_node_t *n = f ? f->first : NULL; n; n = n->next) {
      if (n->op == DML_OP_GEMM) {
        gemm++;
        CHECK(dml_attr_int(n->attrs, n->n_attrs, "transB", 0) == 1);
      }
      if (n->op == DML_OP_DROPOUT) {
        dropout++;
        /* ONNX Dropout with ratio and no training_mode: inference form. */
        CHECK(n->n_inputs == 2 && n->inputs[1] == r);
      }
    }
    CHECK(gemm == 3 && dropout == 1);
    CHECK(f && f->n_results == 1 && !strcmp(f->results[0]->name, "logits"));
    CHECK(f && f->n_args == 1 && f->args[0]->type.dims[0].sym == 0);
  }
  dml_ir_module_release(ir);

  /* Weights by name from the ONNX model PyTorch exported. */
  char path[1024];
  dml_ir_module_t *onnx = NULL;
  CHECK_OK(dml_onnx_import_file(
      dml_test_path("DMLC_SHARED_DIR", "models/fashion_mlp.onnx", path, sizeof path),
      NULL, &onnx));
  for (size_t i = 0; onnx && i < dml_layers_num_params(lm); i++) {
    dml_layers_param_info_t pi;
    CHECK_OK(dml_layers_param_info(lm, i, &pi));
    const dml_ir_value_t *g = dml_ir_module_find_global(onnx, pi.name);
    CHECK(g != NULL);
    if (g) CHECK_OK(dml_layers_set_param(lm, pi.name, g->data, g->data_bytes));
  }
  dml_ir_module_release(onnx);

  dml_rt_model_t *rm = NULL;
  dml_rt_session_t *s = layers_session(lm, &rm);
  double worst = 0;
  for (int k = 0; s && k < 3; k++) {
    char rel[128];
    dml_tensor_t in, want;
    void *b1 = NULL, *b2 = NULL;
    snprintf(rel, sizeof rel, "models/fashion_mlp_io/input_%d.npy", k);
    CHECK_OK(dml_npy_read_file(dml_test_path("DMLC_SHARED_DIR", rel, path, sizeof path),
                               &in, &b1));
    snprintf(rel, sizeof rel, "models/fashion_mlp_io/output_%d.npy", k);
    CHECK_OK(dml_npy_read_file(dml_test_path("DMLC_SHARED_DIR", rel, path, sizeof path),
                               &want, &b2));
    if (b1 && b2) {
      dml_rt_session_clear_inputs(s);
      CHECK_OK(dml_rt_session_set_input_by_name(s, "input", &in));
      CHECK_OK(dml_rt_session_run(s));
      double w = layers_compare(s, rm, "logits", &want, ATOL, RTOL);
      if (w > worst) worst = w;
    }
    free(b1);
    free(b2);
  }
  printf("fashion_mlp: largest |dmlc - PyTorch| = %.3g\n", worst);
  dml_rt_session_release(s);
  dml_rt_model_release(rm);

  /* Exported to ONNX and imported back: PyTorch's answer again. */
  s = layers_session_onnx(lm, "fashion_mlp", &rm);
  if (s) {
    dml_tensor_t in, want;
    void *b1 = NULL, *b2 = NULL;
    CHECK_OK(dml_npy_read_file(
        dml_test_path("DMLC_SHARED_DIR", "models/fashion_mlp_io/input_0.npy", path,
                      sizeof path),
        &in, &b1));
    CHECK_OK(dml_npy_read_file(
        dml_test_path("DMLC_SHARED_DIR", "models/fashion_mlp_io/output_0.npy", path,
                      sizeof path),
        &want, &b2));
    if (b1 && b2) {
      CHECK_OK(dml_rt_session_set_input_by_name(s, "input", &in));
      CHECK_OK(dml_rt_session_run(s));
      printf("fashion_mlp (via ONNX export): largest |dmlc - PyTorch| = %.3g\n",
             layers_compare(s, rm, "logits", &want, ATOL, RTOL));
      save_output_tensor("fashion_mlp", "input", &in);
      save_output(s, rm, "fashion_mlp", "logits");
    }
    free(b1);
    free(b2);
  }
  dml_rt_session_release(s);
  dml_rt_model_release(rm);

  /* `dmlc summary` of the package from a file. */
  char pkg[1024];
  dml_test_path("DMLC_BUILD_DIR", "tests/layers/fashion_mlp_layers.dmlpkg", pkg,
                sizeof pkg);
  dml_ir_module_t *ir2 = NULL;
  CHECK_OK(dml_layers_model_to_ir(lm, &ir2));
  dml_compile_options_t co;
  memset(&co, 0, sizeof co);
  co.batch_bound = 32;
  dml_compile_report_t rep;
  if (ir2) CHECK_OK(dml_compile_module(ir2, "fashion_mlp_layers", pkg, &co, &rep));
  dml_ir_module_release(ir2);
  CHECK(rep.num_nodes == 6); /* Dropout folded away at inference */
  char *out = run_summary(pkg);
  if (out) {
    CHECK(strstr(out, "net.1 (Gemm)") != NULL);
    CHECK(strstr(out, "Total params: 235,146 (235.1K)") != NULL);
    CHECK(strstr(out, "Trainable params: 235,146") != NULL);
    CHECK(strstr(out, "Non-trainable params: 0") != NULL);
    if (!strstr(out, "Trainable params: 235,146")) fprintf(stderr, "%s\n", out);
  }
  free(out);
  dml_rt_model_t *pm = NULL;
  CHECK_OK(dml_rt_model_load_file(pkg, &pm));
  if (pm) {
    dml_rt_io_info_t ii;
    CHECK_OK(dml_rt_model_input_info(pm, 0, &ii));
    CHECK(ii.dim_bound[0] == 32 && ii.dim_symbol[0] &&
          !strcmp(ii.dim_symbol[0], "batch"));
    CHECK(dml_rt_model_param_count(pm) == 235146);
  }
  dml_rt_model_release(pm);
  remove(pkg);
  dml_layers_model_release(lm);
}

/* Sets every parameter from fixtures/<dir>/<name>.npy and checks the model's
 * parameter list is params.txt (PyTorch's state_dict keys and shapes). */
static void set_from_fixtures(dml_layers_model_t *m, const char *dir) {
  char rel[256], path[1024];
  snprintf(rel, sizeof rel, "tests/layers/fixtures/%s/params.txt", dir);
  FILE *f = fopen(dml_test_path("DMLC_SOURCE_DIR", rel, path, sizeof path), "r");
  CHECK(f != NULL);
  if (!f) return;
  char line[512];
  size_t i = 0;
  while (fgets(line, sizeof line, f)) {
    char key[256], shape[256];
    if (sscanf(line, "%255s %255s", key, shape) != 2) continue;
    dml_layers_param_info_t pi;
    CHECK_OK(dml_layers_param_info(m, i, &pi));
    if (i < dml_layers_num_params(m)) {
      CHECK(!strcmp(pi.name, key));
      char mine[256];
      size_t k = 0;
      for (int32_t d = 0; d < pi.rank; d++)
        k += (size_t)snprintf(mine + k, sizeof mine - k, "%s%lld", d ? "," : "",
                              (long long)pi.dims[d]);
      CHECK(!strcmp(mine, shape));
      if (strcmp(pi.name, key) || strcmp(mine, shape))
        fprintf(stderr, "param %zu: dmlc %s [%s], PyTorch %s [%s]\n", i, pi.name, mine,
                key, shape);
    }
    dml_tensor_t t;
    void *buf = NULL;
    CHECK_OK(layers_fixture(dir, key, &t, &buf));
    if (buf) CHECK_OK(dml_layers_set_param(m, key, buf, dml_tensor_bytes(&t)));
    free(buf);
    i++;
  }
  fclose(f);
  CHECK(i == dml_layers_num_params(m));
}

/* via: 0 the layers' IR, 1 through IR text, 2 through an ONNX file
 * (export, import). */
static void run_and_compare(dml_layers_model_t *lm, const char *dir,
                            const char *const *outputs, size_t n_out, int via) {
  dml_rt_model_t *rm = NULL;
  dml_rt_session_t *s =
      via == 2 ? layers_session_onnx(lm, dir, &rm) : layers_session_via(lm, via, &rm);
  dml_tensor_t in;
  void *ib = NULL;
  CHECK_OK(layers_fixture(dir, "input", &in, &ib));
  if (s && ib && via == 2) save_output_tensor(dir, "input", &in);
  if (s && ib) {
    CHECK_OK(dml_rt_session_set_input(s, 0, &in));
    CHECK_OK(dml_rt_session_run(s));
    for (size_t i = 0; i < n_out; i++) {
      char nm[64];
      dml_tensor_t want;
      void *wb = NULL;
      snprintf(nm, sizeof nm, "out_%s", outputs[i]);
      CHECK_OK(layers_fixture(dir, nm, &want, &wb));
      if (wb) {
        double w = layers_compare(s, rm, outputs[i], &want, ATOL, RTOL);
        printf("%s/%s%s: largest |dmlc - PyTorch| = %.3g\n", dir, outputs[i],
               via == 1   ? " (via IR text)"
               : via == 2 ? " (via ONNX export)"
                          : "",
               w);
        if (via == 2) save_output(s, rm, dir, outputs[i]);
      }
      free(wb);
    }
  }
  free(ib);
  dml_rt_session_release(s);
  dml_rt_model_release(rm);
}

/* The CNN of gen_fixtures.py's cnn(), layer for layer. */
static void test_cnn(void) {
  dml_layers_model_t *m = NULL;
  CHECK_OK(dml_layers_model_create(NULL, &m));
  if (!m) return;
  dml_layers_tensor_t *x = NULL, *h = NULL, *c2 = NULL, *a = NULL, *b = NULL, *c = NULL,
                      *gap = NULL, *d = NULL, *ln = NULL, *sig = NULL, *lg = NULL,
                      *t = NULL;
  int64_t shape[4] = {-1, 3, 12, 12};
  CHECK_OK(dml_layers_input(m, "input", DML_DTYPE_F32, 4, shape, &x));
  dml_layers_conv2d_options_t co = dml_layers_conv2d_defaults();
  co.pads[0] = co.pads[1] = co.pads[2] = co.pads[3] = 1;
  co.in_channels = 3;
  CHECK_OK(dml_layers_conv2d(m, x, 8, 3, 3, &co, &h)); /* conv2d */
  CHECK_OK(dml_layers_batch_norm(m, h, NULL, &h));     /* batch_norm */
  CHECK_OK(dml_layers_relu(m, h, &h));
  CHECK_OK(dml_layers_max_pool2d(m, h, 2, 2, NULL, &h)); /* [B,8,6,6] */
  co = dml_layers_conv2d_defaults();
  co.same = 1;
  co.dilations[0] = co.dilations[1] = 2;
  co.groups = 2;
  CHECK_OK(dml_layers_conv2d(m, h, 8, 3, 3, &co, &c2)); /* conv2d_1 */
  CHECK_OK(dml_layers_add(m, h, c2, &h));
  CHECK_OK(dml_layers_elu(m, h, 1.0, &h));
  dml_layers_pool2d_options_t po = dml_layers_pool2d_defaults();
  po.strides[0] = po.strides[1] = 2;
  po.pads[0] = po.pads[1] = po.pads[2] = po.pads[3] = 1;
  po.ceil_mode = 1;
  CHECK_OK(dml_layers_avg_pool2d(m, h, 3, 3, &po, &a));
  CHECK_OK(dml_layers_max_pool2d(m, h, 3, 3, &po, &b));
  dml_layers_tensor_t *ab[2] = {a, b};
  CHECK_OK(dml_layers_concat(m, ab, 2, 1, &c)); /* [B,16,4,4] */
  CHECK_OK(dml_layers_global_avg_pool2d(m, c, &gap));
  CHECK_OK(dml_layers_flatten(m, gap, &gap));
  CHECK_OK(dml_layers_tanh(m, gap, &gap));
  CHECK_OK(dml_layers_flatten(m, c, &t));
  dml_layers_dense_options_t dop = dml_layers_dense_defaults();
  dop.activation = DML_LAYERS_ACT_GELU;
  CHECK_OK(dml_layers_dense(m, t, 32, &dop, &d)); /* dense */
  CHECK_OK(dml_layers_dropout(m, d, 0.3, NULL, &d));
  CHECK_OK(dml_layers_layer_norm(m, d, NULL, &ln)); /* layer_norm */
  CHECK_OK(dml_layers_sigmoid(m, ln, &sig));
  CHECK_OK(dml_layers_leaky_relu(m, ln, 0.2, &t));
  CHECK_OK(dml_layers_dense(m, t, 10, NULL, &lg)); /* dense_1 */
  dml_layers_tensor_t *probs = NULL, *logp = NULL;
  CHECK_OK(dml_layers_softmax(m, lg, -1, &probs));
  CHECK_OK(dml_layers_log_softmax(m, lg, 1, &logp));
  CHECK_OK(dml_layers_output(m, lg, "logits"));
  CHECK_OK(dml_layers_output(m, probs, "probs"));
  CHECK_OK(dml_layers_output(m, logp, "logp"));
  CHECK_OK(dml_layers_output(m, gap, "gap"));
  CHECK_OK(dml_layers_output(m, sig, "sig"));

  dml_layers_shape_t sh;
  CHECK_OK(dml_layers_tensor_shape(c, &sh));
  CHECK(sh.rank == 4 && sh.dims[0] == -1 && sh.batch_multiple[0] == 1 &&
        sh.dims[1] == 16 && sh.dims[2] == 4 && sh.dims[3] == 4);
  CHECK(!strcmp(dml_layers_tensor_name(c), "concat"));
  int64_t tr = 0, nt = 0;
  dml_layers_param_counts(m, &tr, &nt);
  CHECK(tr == 224 + 16 + 296 + 8224 + 64 + 330);
  CHECK(nt == 16);

  set_from_fixtures(m, "cnn");
  static const char *const outs[5] = {"logits", "probs", "logp", "gap", "sig"};
  run_and_compare(m, "cnn", outs, 5, 0);
  run_and_compare(m, "cnn", outs, 5, 1); /* the IR text round-trips */
  run_and_compare(m, "cnn", outs, 5, 2); /* and the ONNX export */

  /* BatchNorm's running statistics are STATE; summary counts them as
   * non-trainable. */
  dml_ir_module_t *ir = NULL;
  CHECK_OK(dml_layers_model_to_ir(m, &ir));
  if (ir) {
    const dml_ir_value_t *rv = dml_ir_module_find_global(ir, "batch_norm.running_var");
    CHECK(rv && rv->global_flags == DML_IR_GLOBAL_STATE);
    dml_ir_function_t *f = dml_ir_module_find_function(ir, "forward");
    for (dml_ir_node_t *n = f ? f->first : NULL; n; n = n->next)
      if (n->op == DML_OP_BATCH_NORMALIZATION)
        CHECK_NEAR(dml_attr_float(n->attrs, n->n_attrs, "momentum", 0), 0.9, 1e-7);
    char pkg[1024];
    dml_test_path("DMLC_BUILD_DIR", "tests/layers/cnn_layers.dmlpkg", pkg, sizeof pkg);
    CHECK_OK(dml_compile_module(ir, "cnn", pkg, NULL, NULL));
    char *out = run_summary(pkg);
    if (out) {
      CHECK(strstr(out, "Trainable params: 9,154") != NULL);
      CHECK(strstr(out, "Non-trainable params: 16") != NULL);
      CHECK(strstr(out, "batch_norm (BatchNormalization)") != NULL);
    }
    free(out);
    remove(pkg);
  }
  dml_ir_module_release(ir);
  dml_layers_model_release(m);
}

static void test_embedding(void) {
  dml_layers_model_t *m = NULL;
  dml_layers_model_options_t mo = {.seed = 3, .batch_bound = 8};
  CHECK_OK(dml_layers_model_create(&mo, &m));
  if (!m) return;
  dml_layers_tensor_t *x = NULL, *h = NULL;
  int64_t shape[2] = {-1, 5};
  CHECK_OK(dml_layers_input(m, "tokens", DML_DTYPE_I64, 2, shape, &x));
  CHECK_OK(dml_layers_embedding(m, x, 20, 6, NULL, &h)); /* [B,5,6] */
  dml_layers_norm_options_t no = dml_layers_norm_defaults();
  no.axis = 1;
  CHECK_OK(dml_layers_layer_norm(m, h, &no, &h)); /* over [5,6] */
  CHECK_OK(dml_layers_flatten(m, h, &h));
  CHECK_OK(dml_layers_dense(m, h, 4, NULL, &h));
  CHECK_OK(dml_layers_activation(m, h, DML_LAYERS_ACT_TANH, NULL, &h));
  CHECK_OK(dml_layers_output(m, h, "out"));
  set_from_fixtures(m, "embed");
  static const char *const outs[1] = {"out"};
  run_and_compare(m, "embed", outs, 1, 0);
  run_and_compare(m, "embed", outs, 1, 2); /* through the ONNX export */
  dml_layers_model_release(m);
}

/* to_ir gives independent copies: compiling one leaves the model usable,
 * and later set_param calls show in later copies only. */
static void test_to_ir_copies(void) {
  dml_layers_model_t *m = NULL;
  CHECK_OK(dml_layers_model_create(NULL, &m));
  if (!m) return;
  dml_layers_tensor_t *x = NULL, *y = NULL;
  int64_t shape[2] = {-1, 2};
  CHECK_OK(dml_layers_input(m, "x", DML_DTYPE_F32, 2, shape, &x));
  CHECK_OK(dml_layers_dense(m, x, 1, NULL, &y));
  CHECK_OK(dml_layers_output(m, y, "y"));
  CHECK_OK(dml_layers_output(m, y, "y_again")); /* through an Identity */
  CHECK_OK(dml_layers_output(m, x, "x_out"));   /* an input, too */
  float w[2] = {2.0f, -1.0f}, b[1] = {0.5f};
  CHECK_OK(dml_layers_set_param(m, "dense.weight", w, sizeof w));
  CHECK_OK(dml_layers_set_param(m, "dense.bias", b, sizeof b));
  float xin[4] = {1, 2, 3, 4};
  dml_tensor_t xt = {DML_DTYPE_F32, 2, {2, 2}, xin};
  for (int round = 0; round < 2; round++) {
    dml_rt_model_t *rm = NULL;
    dml_rt_session_t *s = layers_session(m, &rm);
    if (s) {
      CHECK_OK(dml_rt_session_set_input(s, 0, &xt));
      CHECK_OK(dml_rt_session_run(s));
      dml_tensor_t o;
      for (uint32_t k = 0; k < 2; k++) {
        CHECK_OK(dml_rt_session_get_output(s, k, &o));
        const float *v = (const float *)o.data;
        float s0 = round ? 3.5f : 0.5f, s1 = round ? 5.5f : 2.5f;
        CHECK(o.rank == 2 && o.dims[0] == 2 && o.dims[1] == 1);
        CHECK_NEAR(v[0], s0, 1e-6);
        CHECK_NEAR(v[1], s1, 1e-6);
      }
      CHECK_OK(dml_rt_session_get_output(s, 2, &o));
      CHECK(o.rank == 2 && ((const float *)o.data)[3] == 4.0f);
    }
    dml_rt_session_release(s);
    dml_rt_model_release(rm);
    b[0] = 3.5f;
    CHECK_OK(dml_layers_set_param(m, "dense.bias", b, sizeof b));
  }
  float back[1] = {0};
  CHECK_OK(dml_layers_get_param(m, "dense.bias", back, sizeof back));
  CHECK(back[0] == 3.5f);
  dml_layers_model_release(m);
}

/* dml_onnx_export_module's refusals: nothing is written. */
static void test_export_errors(void) {
  dml_ir_module_t *m = NULL;
  dml_ir_function_t *f = NULL;
  dml_ir_value_t *x = NULL, *y = NULL;
  CHECK_OK(dml_ir_module_create(&m));
  if (!m) return;
  int64_t d2[1] = {2};
  dml_type_t t = dml_type_static(DML_DTYPE_F32, 1, d2);
  CHECK_OK(dml_ir_function_create(m, "forward", &f));
  CHECK_OK(dml_ir_function_add_arg(f, "x", &t, &x));
  CHECK_OK(dml_ir_function_add_arg(f, "y", &t, &y));
  dml_ir_value_t *in[2] = {x, y};
  dml_ir_node_t *n = NULL;
  CHECK_OK(dml_ir_node_create(f, DML_OP_ASSIGN, "assign_w", 2, in, 0, NULL, &n));
  char path[1024];
  dml_test_path("DMLC_BUILD_DIR", "tests/layers/export_refused.onnx", path, sizeof path);
  remove(path);
  dml_status_t st = dml_onnx_export_module(m, path, NULL);
  CHECK(st && dml_status_code(st) == DML_STATUS_UNIMPLEMENTED &&
        strstr(dml_status_details(st), "node Assign 'assign_w'") &&
        strstr(dml_status_details(st), "opset 18"));
  dml_status_free(st);
  FILE *fp = fopen(path, "rb");
  CHECK(fp == NULL); /* nothing written */
  if (fp) fclose(fp);
  dml_ir_node_erase(n);
  /* a result of unknown dtype */
  dml_ir_node_t *add = NULL;
  CHECK_OK(dml_ir_node_create(f, DML_OP_ADD, "add", 2, in, 1, NULL, &add));
  if (add) CHECK_OK(dml_ir_function_set_results(f, 1, add->outputs));
  st = dml_onnx_export_module(m, path, NULL);
  CHECK(st && dml_status_code(st) == DML_STATUS_FAILED_PRECONDITION &&
        strstr(dml_status_details(st), "run shape inference first"));
  dml_status_free(st);
  dml_onnx_export_options_t o = {.opset = 12};
  st = dml_onnx_export_module(m, path, &o);
  CHECK(st && dml_status_code(st) == DML_STATUS_INVALID_ARGUMENT);
  dml_status_free(st);
  dml_ir_module_release(m);
}

int main(void) {
  RUN(test_export_errors);
  RUN(test_fashion_mlp);
  RUN(test_cnn);
  RUN(test_embedding);
  RUN(test_to_ir_copies);
  return dml_test_finish();
}
