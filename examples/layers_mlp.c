/*
 * layers_mlp.c — the C layer API end to end: build the Fashion-MNIST MLP in
 * C, compile it into a package and classify test images with it.
 *
 *   layers_mlp [DATASET_DIR] [-n N] [--seed S] [-o MODEL.dmlpkg]
 *
 * The model is the architecture of ../shared/models/fashion_mlp.onnx:
 * Flatten, Linear 784->256, ReLU, Dropout 0.2, Linear 256->128, ReLU,
 * Linear 128->10 (235,146 parameters), built with dml_layers.h and
 * initialized as PyTorch would (seeded Philox, dml_layers.h). It is NOT
 * trained, so its accuracy is about chance (10%); compiling it with
 * dml_compile_options_t.train adds train_step / eval_step (docs/layers.md,
 * "Training"). The example prints the parameters, compiles
 * the model (into MODEL.dmlpkg with -o, else in memory), runs the first N
 * (default 1000) test images of DATASET_DIR (default
 * /usr/share/datasets/fashion-mnist; Debian's dataset-fashion-mnist) in
 * batches of up to 64, pixels scaled to [0,1], and prints the accuracy.
 *
 * IDX format: big-endian u32 magic (0x00000803 images, 0x00000801 labels),
 * u32 dims..., then the bytes (http://yann.lecun.com/exdb/mnist/); gzip'd.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "dml_driver.h"
#include "dml_layers.h"
#include "dml_rt.h"

static int report(dml_status_t s) {
  char *msg = dml_status_format(s);
  fprintf(stderr, "%s\n", msg ? msg : "error");
  free(msg);
  dml_status_free(s);
  return 1;
}

/* Reads a gzip'd IDX file of `ndims` dims with `magic`; malloc'd payload. */
static unsigned char *read_idx(const char *path, uint32_t magic, uint32_t ndims,
                               uint32_t *dims, size_t *out_n) {
  gzFile f = gzopen(path, "rb");
  if (!f) {
    fprintf(stderr, "error: idx: cannot open '%s'\n", path);
    return NULL;
  }
  unsigned char hdr[16];
  int hbytes = (int)(4 + 4 * ndims);
  size_t n = 1;
  int ok = gzread(f, hdr, (unsigned)hbytes) == hbytes &&
           ((uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 |
            hdr[3]) == magic;
  for (uint32_t i = 0; ok && i < ndims; i++) {
    const unsigned char *p = hdr + 4 + 4 * i;
    dims[i] = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    ok = dims[i] > 0 && dims[i] <= 1u << 20;
    n *= dims[i];
  }
  unsigned char *data = ok ? (unsigned char *)malloc(n) : NULL;
  if (!data || gzread(f, data, (unsigned)n) != (int)n) {
    fprintf(stderr, "error: idx: '%s' is not a complete IDX file with magic 0x%08x\n",
            path, magic);
    free(data);
    data = NULL;
  }
  gzclose(f);
  *out_n = n;
  return data;
}

/* The MLP; layers named as PyTorch's nn.Sequential "net", so the parameters
 * are "net.1.weight", ... as in fashion_mlp.onnx. */
static dml_status_t build(dml_layers_model_t *m) {
  dml_layers_tensor_t *x = NULL, *h = NULL;
  int64_t shape[2] = {-1, 784};
  DML_RETURN_IF_ERROR(dml_layers_input(m, "input", DML_DTYPE_F32, 2, shape, &x));
  DML_RETURN_IF_ERROR(dml_layers_flatten(m, x, &h));
  dml_layers_dense_options_t d = dml_layers_dense_defaults();
  d.name = "net.1";
  d.activation = DML_LAYERS_ACT_RELU;
  DML_RETURN_IF_ERROR(dml_layers_dense(m, h, 256, &d, &h));
  DML_RETURN_IF_ERROR(dml_layers_dropout(m, h, 0.2, "net.3", &h));
  d.name = "net.4";
  DML_RETURN_IF_ERROR(dml_layers_dense(m, h, 128, &d, &h));
  d.name = "net.6";
  d.activation = DML_LAYERS_ACT_NONE;
  DML_RETURN_IF_ERROR(dml_layers_dense(m, h, 10, &d, &h));
  return dml_layers_output(m, h, "logits");
}

int main(int argc, char **argv) {
  const char *dir = "/usr/share/datasets/fashion-mnist", *out_path = NULL;
  long n_images = 1000;
  unsigned long long seed = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      printf("usage: layers_mlp [DATASET_DIR] [-n N] [--seed S] [-o MODEL.dmlpkg]\n");
      return 0;
    } else if (!strcmp(argv[i], "-n") && i + 1 < argc) {
      n_images = strtol(argv[++i], NULL, 10);
    } else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
      seed = strtoull(argv[++i], NULL, 10);
    } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
      out_path = argv[++i];
    } else if (argv[i][0] != '-') {
      dir = argv[i];
    } else {
      fprintf(stderr, "error: layers_mlp: unexpected argument '%s'\n", argv[i]);
      return 2;
    }
  }
  if (n_images < 1) {
    fprintf(stderr, "error: layers_mlp: -n needs a positive count\n");
    return 2;
  }

  /* 1. Build. */
  dml_layers_model_t *lm = NULL;
  dml_layers_model_options_t mo = {.seed = seed, .batch_bound = 64};
  dml_status_t s = dml_layers_model_create(&mo, &lm);
  if (!s) s = build(lm);
  if (s) {
    dml_layers_model_release(lm);
    return report(s);
  }
  printf("%-16s %-12s %s\n", "parameter", "shape", "kind");
  for (size_t i = 0; i < dml_layers_num_params(lm); i++) {
    dml_layers_param_info_t pi;
    if (dml_layers_param_info(lm, i, &pi)) continue;
    char shape[64];
    size_t k = 0;
    for (int32_t d = 0; d < pi.rank; d++)
      k += (size_t)snprintf(shape + k, sizeof shape - k, "%s%lld", d ? "x" : "",
                            (long long)pi.dims[d]);
    printf("%-16s %-12s %s\n", pi.name, shape,
           pi.flags & DML_IR_GLOBAL_PARAM ? "trainable" : "state");
  }
  int64_t trainable = 0, state = 0;
  dml_layers_param_counts(lm, &trainable, &state);
  printf("trainable parameters: %lld, non-trainable: %lld\n", (long long)trainable,
         (long long)state);

  /* 2. Compile: IR module -> default pipeline -> package. */
  dml_ir_module_t *ir = NULL;
  void *pkg = NULL;
  size_t pkg_size = 0;
  dml_compile_report_t rep;
  s = dml_layers_model_to_ir(lm, &ir);
  dml_layers_model_release(lm);
  if (!s && out_path) s = dml_compile_module(ir, "layers_mlp", out_path, NULL, &rep);
  if (!s && !out_path)
    s = dml_compile_module_memory(ir, "layers_mlp", NULL, &pkg, &pkg_size, &rep);
  dml_ir_module_release(ir);
  if (s) return report(s);
  printf("compiled: %u nodes, arena %lld bytes, package %llu bytes%s%s\n", rep.num_nodes,
         (long long)rep.arena_bytes, (unsigned long long)rep.package_bytes,
         out_path ? " -> " : "", out_path ? out_path : "");

  /* 3. Run on test images. */
  dml_rt_model_t *rm = NULL;
  dml_rt_session_t *sess = NULL;
  s = out_path ? dml_rt_model_load_file(out_path, &rm)
               : dml_rt_model_load_memory(pkg, pkg_size, &rm);
  free(pkg);
  if (!s) s = dml_rt_session_create(rm, "cpu", &sess);
  if (s) {
    dml_rt_model_release(rm);
    return report(s);
  }
  char ipath[1024], lpath[1024];
  snprintf(ipath, sizeof ipath, "%s/t10k-images-idx3-ubyte.gz", dir);
  snprintf(lpath, sizeof lpath, "%s/t10k-labels-idx1-ubyte.gz", dir);
  uint32_t idims[3], ldims[1];
  size_t ni = 0, nl = 0;
  unsigned char *images = read_idx(ipath, 0x803, 3, idims, &ni);
  unsigned char *labels = read_idx(lpath, 0x801, 1, ldims, &nl);
  int rc = 1;
  float *batch = (float *)malloc(64 * 784 * sizeof(float));
  if (images && labels && batch && idims[1] * idims[2] == 784 && ldims[0] == idims[0]) {
    if ((unsigned long)n_images > idims[0]) n_images = (long)idims[0];
    long correct = 0;
    rc = 0;
    for (long start = 0; start < n_images && !rc; start += 64) {
      long b = n_images - start < 64 ? n_images - start : 64;
      for (long i = 0; i < b * 784; i++)
        batch[i] = (float)images[(size_t)start * 784 + (size_t)i] / 255.0f;
      dml_tensor_t in = {DML_DTYPE_F32, 2, {b, 784}, batch};
      dml_tensor_t out;
      dml_rt_session_clear_inputs(sess);
      s = dml_rt_session_set_input_by_name(sess, "input", &in);
      if (!s) s = dml_rt_session_run(sess);
      if (!s) s = dml_rt_session_get_output(sess, 0, &out);
      if (s) {
        rc = report(s);
        break;
      }
      const float *logits = (const float *)out.data;
      for (long i = 0; i < b; i++) {
        int best = 0;
        for (int c = 1; c < 10; c++)
          if (logits[i * 10 + c] > logits[i * 10 + best]) best = c;
        correct += best == labels[start + i];
      }
    }
    if (!rc)
      printf(
          "untrained accuracy on %ld test images: %.2f%% (%ld correct; chance is 10%%)\n",
          n_images, 100.0 * (double)correct / (double)n_images, correct);
  } else if (images && labels) {
    fprintf(stderr, "error: layers_mlp: '%s' does not hold 28x28 images with labels\n",
            dir);
  }
  free(batch);
  free(images);
  free(labels);
  dml_rt_session_release(sess);
  dml_rt_model_release(rm);
  return rc;
}
