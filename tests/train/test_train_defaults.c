/* test_train_defaults.c — the C API and `dmlc train` share one set of
 * defaults (docs/training.md, "Defaults"): the same data with no options
 * gives the same history from both, epoch by epoch (every column but the
 * wall time, as "%.9g" text, so bit-identical losses).
 *   test_train_defaults [DMLC SHARED_DIR]  (default: $DMLC_BUILD_DIR/compiler/dmlc
 *                                          and $DMLC_SHARED_DIR, as CTest sets)
 * And the optimizer hyper-parameters and clipping thresholds set at fit
 * (dml_fit_options_t.hyper): a package compiled with beta1 0.9 and
 * clip_norm 1, fitted with beta1 0.8 and clip_norm 0.5, gives the history
 * of one compiled with 0.8 and 0.5, bit for bit.
 * The data: 300 28x28 IDX images whose label (0..3) is the brightest
 * quarter, written by this test. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dml_driver.h"
#include "dml_file.h"
#include "dml_test.h"
#include "dml_train.h"
#include "dml_train_data.h"
#include "dml_trainer.h"

static void be32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

static int write_idx(const char *dir, int n) {
  char path[512];
  size_t bytes = 16 + (size_t)n * 784;
  uint8_t *img = (uint8_t *)calloc(bytes, 1), *lab = (uint8_t *)calloc(8 + (size_t)n, 1);
  if (!img || !lab) return 0;
  be32(img, 0x803);
  be32(img + 4, (uint32_t)n);
  be32(img + 8, 28);
  be32(img + 12, 28);
  be32(lab, 0x801);
  be32(lab + 4, (uint32_t)n);
  uint32_t s = 1;
  for (int i = 0; i < n; i++) {
    uint8_t *im = img + 16 + (size_t)i * 784;
    for (int k = 0; k < 784; k++) {
      s = (s * 1103515245u + 12345u) & 0x7FFFFFFFu;
      im[k] = (uint8_t)((s >> 16) & 0x3F);
    }
    int l = (int)((s >> 8) % 4);
    for (int r = (l / 2) * 14; r < (l / 2) * 14 + 14; r++)
      for (int c = (l % 2) * 14; c < (l % 2) * 14 + 14; c++) im[r * 28 + c] += 150;
    lab[8 + i] = (uint8_t)l;
  }
  int ok = 1;
  snprintf(path, sizeof path, "%s/train-images-idx3-ubyte", dir);
  FILE *f = fopen(path, "wb");
  ok &= f && fwrite(img, 1, bytes, f) == bytes;
  if (f) fclose(f);
  snprintf(path, sizeof path, "%s/train-labels-idx1-ubyte", dir);
  f = fopen(path, "wb");
  ok &= f && fwrite(lab, 1, 8 + (size_t)n, f) == 8 + (size_t)n;
  if (f) fclose(f);
  free(img);
  free(lab);
  return ok;
}

/* The CSV without its `seconds` column (the 7th). */
static char *csv_without_seconds(const char *path) {
  uint8_t *bytes = NULL;
  size_t n = 0;
  CHECK_OK(dml_file_read_all("test", path, &bytes, &n));
  if (!bytes) return NULL;
  char *out = (char *)calloc(n + 1, 1);
  size_t o = 0;
  int col = 1;
  for (size_t i = 0; out && i < n; i++) {
    char c = (char)bytes[i];
    if (c == ',') col++;
    if (c == '\n') col = 1;
    if (col == 7) continue; /* field 7 and the comma before it */
    out[o++] = c;
  }
  free(bytes);
  return out;
}

static const char *g_dmlc, *g_shared;

static void test_same_history(void) {
  const char *shared = g_shared;
  char dir[] = "/tmp/dmlc_train_defaults.XXXXXX", model[1024], cmd[4096], a[600], b[600];
  if (!mkdtemp(dir)) {
    CHECK(0);
    return;
  }
  snprintf(model, sizeof model, "%s/models/fashion_mlp_untrained.onnx", shared);
  CHECK(write_idx(dir, 300));
  snprintf(a, sizeof a, "%s/cli.csv", dir);
  snprintf(b, sizeof b, "%s/capi.csv", dir);

  /* the CLI with no training options */
  snprintf(
      cmd, sizeof cmd,
      "'%s' train '%s' --data '%s' -o '%s/cli.dmlpkg' --history '%s' --quiet >/dev/null",
      g_dmlc, model, dir, dir, a);
  CHECK(system(cmd) == 0);

  /* the C API with its defaults (the batch bound is the CLI's 64) */
  uint8_t *onnx = NULL;
  size_t onnx_size = 0;
  void *pkg = NULL;
  size_t pkg_size = 0;
  dml_rt_model_t *m = NULL;
  dml_trainer_t *t = NULL;
  dml_data_t data;
  memset(&data, 0, sizeof data);
  dml_train_config_t cfg;
  dml_train_config_init(&cfg);
  dml_compile_options_t copts;
  memset(&copts, 0, sizeof copts);
  copts.batch_bound = 64;
  copts.train = &cfg;
  dml_compile_report_t rep;
  CHECK_OK(dml_file_read_all("test", model, &onnx, &onnx_size));
  if (onnx) {
    char base[1024];
    snprintf(base, sizeof base, "%s/models", shared);
    CHECK_OK(dml_compile_onnx_memory(onnx, onnx_size, base, model, &copts, &pkg,
                                     &pkg_size, &rep));
  }
  if (pkg) CHECK_OK(dml_rt_model_load_memory(pkg, pkg_size, &m));
  if (m) CHECK_OK(dml_trainer_create(m, "cpu", &t));
  if (t) {
    dml_rt_io_info_t xi, yi;
    dml_trainer_io_info(t, &xi, &yi);
    dml_data_options_t dopt;
    dml_data_options_init(&dopt);
    CHECK_OK(dml_data_load(dir, "train", &dopt, &data));
    CHECK_OK(dml_data_adapt(&data, &xi, &yi));
    dml_dataset_t tr = {.x = data.x, .y = data.y};
    dml_fit_options_t o;
    dml_fit_options_init(&o);
    o.verbose = 0;
    dml_history_t h;
    memset(&h, 0, sizeof h);
    CHECK_OK(dml_trainer_fit(t, &tr, &o, &h));
    CHECK(h.n_epochs == 10 && !strcmp(h.validation, "split"));
    CHECK_OK(dml_history_write_csv(&h, b));
    dml_history_free(&h);
  }
  char *ca = csv_without_seconds(a), *cb = csv_without_seconds(b);
  CHECK(ca && cb && !strcmp(ca, cb));
  if (ca && cb && strcmp(ca, cb)) fprintf(stderr, "CLI:\n%s\nC API:\n%s\n", ca, cb);
  /* 10 epochs and a header; the split validates */
  int lines = 0;
  for (const char *p = ca; p && *p; p++) lines += *p == '\n';
  CHECK(lines == 11);
  CHECK(ca && strstr(ca, "\n10,") && strstr(ca, ",split\n"));
  free(ca);
  free(cb);
  dml_data_free(&data);
  dml_trainer_release(t);
  dml_rt_model_release(m);
  free(pkg);
  free(onnx);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

/* Compiles fashion_mlp_untrained with `cfg` and opens a trainer. */
static dml_trainer_t *open_trainer(const dml_train_config_t *cfg, dml_rt_model_t **m,
                                   void **pkg) {
  char model[1024], base[1024];
  snprintf(model, sizeof model, "%s/models/fashion_mlp_untrained.onnx", g_shared);
  snprintf(base, sizeof base, "%s/models", g_shared);
  uint8_t *onnx = NULL;
  size_t onnx_size = 0, pkg_size = 0;
  dml_compile_options_t copts;
  memset(&copts, 0, sizeof copts);
  copts.batch_bound = 64;
  copts.train = cfg;
  dml_compile_report_t rep;
  dml_trainer_t *t = NULL;
  *m = NULL;
  *pkg = NULL;
  CHECK_OK(dml_file_read_all("test", model, &onnx, &onnx_size));
  if (onnx)
    CHECK_OK(dml_compile_onnx_memory(onnx, onnx_size, base, model, &copts, pkg, &pkg_size,
                                     &rep));
  free(onnx);
  if (*pkg) CHECK_OK(dml_rt_model_load_memory(*pkg, pkg_size, m));
  if (*m) CHECK_OK(dml_trainer_create(*m, "cpu", &t));
  return t;
}

static void fit_csv(dml_trainer_t *t, const dml_dataset_t *d, const dml_fit_hyper_t *h,
                    const char *csv) {
  dml_fit_options_t o;
  dml_fit_options_init(&o);
  o.verbose = 0;
  o.epochs = 3;
  if (h) o.hyper = *h;
  dml_history_t hist;
  memset(&hist, 0, sizeof hist);
  CHECK_OK(dml_trainer_fit(t, d, &o, &hist));
  CHECK_OK(dml_history_write_csv(&hist, csv));
  dml_history_free(&hist);
}

static void test_hyper_at_fit(void) {
  char dir[] = "/tmp/dmlc_train_hyper.XXXXXX", a[600], b[600], cmd[700];
  if (!mkdtemp(dir)) {
    CHECK(0);
    return;
  }
  CHECK(write_idx(dir, 300));
  snprintf(a, sizeof a, "%s/compiled.csv", dir);
  snprintf(b, sizeof b, "%s/at_fit.csv", dir);
  dml_data_t data;
  memset(&data, 0, sizeof data);
  dml_train_config_t ca, cb;
  dml_train_config_init(&ca);
  ca.beta1 = 0.8;
  ca.clip_norm = 0.5;
  dml_train_config_init(&cb);
  cb.clip_norm = 1;
  dml_rt_model_t *ma = NULL, *mb = NULL;
  void *pa = NULL, *pb = NULL;
  dml_trainer_t *ta = open_trainer(&ca, &ma, &pa), *tb = open_trainer(&cb, &mb, &pb);
  if (ta && tb) {
    dml_rt_io_info_t xi, yi;
    dml_trainer_io_info(ta, &xi, &yi);
    dml_data_options_t dopt;
    dml_data_options_init(&dopt);
    CHECK_OK(dml_data_load(dir, "train", &dopt, &data));
    CHECK_OK(dml_data_adapt(&data, &xi, &yi));
    dml_dataset_t tr = {.x = data.x, .y = data.y};
    /* the compiled values, read back */
    dml_fit_hyper_t h;
    dml_trainer_hyper(tb, &h);
    CHECK(h.beta1 == (double)0.9f && h.beta2 == (double)0.999f &&
          h.epsilon == (double)1e-8f && h.clip_norm == 1);
    CHECK(isnan(h.momentum) && isnan(h.alpha) && isnan(h.weight_decay) &&
          isnan(h.clip_value));
    /* errors before any step: a value the package lacks, out of range */
    dml_fit_hyper_t bad = h;
    dml_fit_options_t o;
    dml_fit_options_init(&o);
    o.verbose = 0;
    o.hyper.weight_decay = 0.01;
    CHECK_ERROR(dml_trainer_fit(tb, &tr, &o, NULL), DML_STATUS_FAILED_PRECONDITION,
                "hyper-parameter weight_decay is not a run-time value of this package");
    o.hyper.weight_decay = NAN;
    o.hyper.beta1 = 1;
    CHECK_ERROR(dml_trainer_fit(tb, &tr, &o, NULL), DML_STATUS_INVALID_ARGUMENT,
                "hyper-parameter beta1 = 1 is out of range [0, 1)");
    CHECK(dml_trainer_step(tb) == 0);
    /* set at fit == compiled, bit for bit */
    fit_csv(ta, &tr, NULL, a);
    dml_fit_hyper_t set;
    dml_fit_options_init(&o);
    set = o.hyper;
    set.beta1 = 0.8;
    set.clip_norm = 0.5;
    fit_csv(tb, &tr, &set, b);
    dml_trainer_hyper(tb, &bad);
    CHECK(bad.beta1 == (double)0.8f && bad.clip_norm == 0.5);
    char *sa = csv_without_seconds(a), *sb = csv_without_seconds(b);
    CHECK(sa && sb && !strcmp(sa, sb));
    if (sa && sb && strcmp(sa, sb))
      fprintf(stderr, "compiled:\n%s\nat fit:\n%s\n", sa, sb);
    free(sa);
    free(sb);
  }
  dml_data_free(&data);
  dml_trainer_release(ta);
  dml_trainer_release(tb);
  dml_rt_model_release(ma);
  dml_rt_model_release(mb);
  free(pa);
  free(pb);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

int main(int argc, char **argv) {
  char dmlc[1024];
  const char *build = getenv("DMLC_BUILD_DIR");
  snprintf(dmlc, sizeof dmlc, "%s/compiler/dmlc", build ? build : "build");
  g_dmlc = dmlc;
  g_shared = getenv("DMLC_SHARED_DIR");
  if (argc >= 3) {
    g_dmlc = argv[1];
    g_shared = argv[2];
  }
  if (!g_shared) {
    fprintf(stderr,
            "usage: test_train_defaults DMLC SHARED_DIR (or set DMLC_SHARED_DIR)\n");
    return 2;
  }
  RUN(test_same_history);
  RUN(test_hyper_at_fit);
  return dml_test_finish();
}
