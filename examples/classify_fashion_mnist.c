/*
 * classify_fashion_mnist.c — the main job on real data, through the C API.
 *
 *   classify_fashion_mnist MODEL.dmlpkg [DATASET_DIR] [--batch N]
 *
 * Reads the 10,000 Fashion-MNIST test images and labels (IDX format,
 * gzip'd, as Debian's dataset-fashion-mnist ships them in
 * /usr/share/datasets/fashion-mnist), scales pixels to [0,1] (byte / 255),
 * feeds each 28x28 image row by row as the model's input asks ([B,784] for
 * an MLP, [B,1,28,28] for a CNN such as lenet5), runs the package in
 * batches (default: the package's batch bound, at most 64; the last batch
 * is partial), takes the argmax of the logits, and prints the accuracy.
 *
 * IDX format: big-endian u32 magic (0x00000803 images, 0x00000801 labels),
 * u32 dims..., then the bytes (http://yann.lecun.com/exdb/mnist/).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "dml_rt.h"

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Reads a gzip'd IDX file; checks the magic and returns the payload. */
static unsigned char *read_idx(const char *path, uint32_t magic, uint32_t ndims,
                               uint32_t *dims, size_t *out_n) {
  gzFile f = gzopen(path, "rb");
  if (!f) {
    fprintf(stderr, "error: idx: cannot open '%s'\n", path);
    return NULL;
  }
  unsigned char hdr[16];
  size_t hbytes = 4 + 4 * (size_t)ndims;
  if (gzread(f, hdr, (unsigned)hbytes) != (int)hbytes || be32(hdr) != magic) {
    fprintf(stderr, "error: idx: '%s' is not an IDX file with magic 0x%08x\n", path,
            magic);
    gzclose(f);
    return NULL;
  }
  size_t n = 1;
  for (uint32_t i = 0; i < ndims; i++) {
    dims[i] = be32(hdr + 4 + 4 * i);
    if (dims[i] == 0 || dims[i] > 1u << 20) {
      fprintf(stderr, "error: idx: '%s' has an implausible dim %u\n", path, dims[i]);
      gzclose(f);
      return NULL;
    }
    n *= dims[i];
  }
  unsigned char *data = (unsigned char *)malloc(n);
  if (!data || gzread(f, data, (unsigned)n) != (int)n) {
    fprintf(stderr, "error: idx: '%s' is truncated (expected %zu bytes)\n", path, n);
    free(data);
    gzclose(f);
    return NULL;
  }
  gzclose(f);
  *out_n = n;
  return data;
}

static int report(dml_status_t s) {
  char *msg = dml_status_format(s);
  fprintf(stderr, "%s\n", msg ? msg : "error");
  free(msg);
  dml_status_free(s);
  return 1;
}

int main(int argc, char **argv) {
  const char *pkg = NULL, *dir = "/usr/share/datasets/fashion-mnist";
  int64_t batch = 0; /* 0: the package's bound, at most 64 */
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      printf(
          "usage: classify_fashion_mnist MODEL.dmlpkg [DATASET_DIR] [--batch N]\n\n"
          "Classifies the 10,000 Fashion-MNIST test images (default DATASET_DIR:\n"
          "/usr/share/datasets/fashion-mnist) with a package whose input is\n"
          "[B,784] or [B,1,28,28], and prints the accuracy.\n");
      return 0;
    }
    if (!strcmp(argv[i], "--batch") && i + 1 < argc)
      batch = atoll(argv[++i]);
    else if (!pkg)
      pkg = argv[i];
    else
      dir = argv[i];
  }
  if (!pkg || batch < 0) {
    fprintf(stderr,
            "usage: classify_fashion_mnist MODEL.dmlpkg [DATASET_DIR] [--batch N]\n");
    return 2;
  }
  char ipath[1024], lpath[1024];
  snprintf(ipath, sizeof ipath, "%s/t10k-images-idx3-ubyte.gz", dir);
  snprintf(lpath, sizeof lpath, "%s/t10k-labels-idx1-ubyte.gz", dir);
  uint32_t idims[3], ldims[1];
  size_t ni = 0, nl = 0;
  unsigned char *images = read_idx(ipath, 0x803, 3, idims, &ni);
  unsigned char *labels = images ? read_idx(lpath, 0x801, 1, ldims, &nl) : NULL;
  if (!images || !labels || idims[0] != ldims[0] || idims[1] * idims[2] != 784) {
    if (images && labels) fprintf(stderr, "error: idx: images and labels disagree\n");
    free(images);
    free(labels);
    return 1;
  }
  const int64_t count = idims[0];

  dml_rt_model_t *model = NULL;
  dml_rt_session_t *sess = NULL;
  dml_status_t s = dml_rt_model_load_file(pkg, &model);
  if (!s) s = dml_rt_session_create(model, "cpu", &sess);
  /* The input's layout: [B,784] or [B,1,28,28] (same bytes per image). */
  dml_rt_io_info_t info;
  memset(&info, 0, sizeof info);
  if (!s) s = dml_rt_model_input_info(model, 0, &info);
  int image_rank = info.rank == 2 ? 2 : 4;
  if (!s && !((info.rank == 2 && info.dims[1] == 784) ||
              (info.rank == 4 && info.dims[1] == 1 && info.dims[2] == 28 &&
               info.dims[3] == 28)))
    s = dml_status_make(DML_STATUS_INVALID_ARGUMENT, "classify",
                        "the model's input '%s' is neither [B,784] nor [B,1,28,28]",
                        info.name);
  if (!s && batch == 0)
    batch = info.dim_symbol[0] && info.dim_bound[0] < 64 ? info.dim_bound[0] : 64;
  if (!s && !info.dim_symbol[0]) batch = info.dims[0]; /* a static batch */
  float *x = (float *)malloc(sizeof(float) * 784 * (size_t)(batch > 0 ? batch : 1));
  int64_t correct = 0;
  for (int64_t start = 0; !s && start < count; start += batch) {
    int64_t b = count - start < batch ? count - start : batch;
    for (int64_t i = 0; i < b * 784; i++) x[i] = images[start * 784 + i] / 255.0f;
    dml_tensor_t in = {DML_DTYPE_F32, image_rank, {b, 784}, x};
    if (image_rank == 4) {
      in.dims[1] = 1;
      in.dims[2] = in.dims[3] = 28;
    }
    dml_tensor_t out;
    s = dml_rt_session_set_input(sess, 0, &in);
    if (!s) s = dml_rt_session_run(sess);
    if (!s) s = dml_rt_session_get_output(sess, 0, &out);
    if (s) break;
    if (out.dtype != DML_DTYPE_F32 || out.rank != 2 || out.dims[0] != b) {
      s = dml_status_make(DML_STATUS_INVALID_ARGUMENT, "classify",
                          "expected f32 logits of shape [%lld,classes]", (long long)b);
      break;
    }
    const float *logits = (const float *)out.data;
    int64_t classes = out.dims[1];
    for (int64_t r = 0; r < b; r++) {
      int64_t best = 0;
      for (int64_t c = 1; c < classes; c++)
        if (logits[r * classes + c] > logits[r * classes + best]) best = c;
      correct += best == labels[start + r];
    }
  }
  free(x);
  free(images);
  free(labels);
  dml_rt_session_release(sess);
  dml_rt_model_release(model);
  if (s) return report(s);
  printf("Fashion-MNIST test set: %lld images, %lld correct, accuracy %.2f%%\n",
         (long long)count, (long long)correct, 100.0 * (double)correct / (double)count);
  return 0;
}
