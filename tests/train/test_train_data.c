/* test_train_data.c — the data readers of `dmlc train` / `dmlc eval`
 * (compiler/dml_train_data.h): IDX (gzip and plain, folder layout), .npy
 * pairs, CSV, adaptation to a package's types, and their errors. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "dml_npy.h"
#include "dml_test.h"
#include "dml_train_data.h"

static char g_dir[128];

static void path_of(char *buf, size_t cap, const char *name) {
  snprintf(buf, cap, "%s/%s", g_dir, name);
}

/* Writes an IDX file: header for `type` and dims, then `data` (already
 * big-endian) of `n` bytes; gzipped when `gz`. */
static void write_idx(const char *name, uint8_t type, int rank, const uint32_t *dims,
                      const void *data, size_t n, int gz) {
  char p[256];
  path_of(p, sizeof p, name);
  uint8_t hdr[40] = {0, 0, type, (uint8_t)rank};
  for (int d = 0; d < rank; d++) {
    hdr[4 + 4 * d] = (uint8_t)(dims[d] >> 24);
    hdr[5 + 4 * d] = (uint8_t)(dims[d] >> 16);
    hdr[6 + 4 * d] = (uint8_t)(dims[d] >> 8);
    hdr[7 + 4 * d] = (uint8_t)dims[d];
  }
  if (gz) {
    gzFile f = gzopen(p, "wb");
    gzwrite(f, hdr, (unsigned)(4 + 4 * rank));
    if (n) gzwrite(f, data, (unsigned)n);
    gzclose(f);
  } else {
    FILE *f = fopen(p, "wb");
    fwrite(hdr, 1, (size_t)(4 + 4 * rank), f);
    if (n) fwrite(data, 1, n, f);
    fclose(f);
  }
}

static void test_idx(void) {
  uint8_t img[12] = {0, 255, 51, 102, 1, 2, 3, 4, 5, 6, 7, 8};
  uint32_t idims[3] = {3, 2, 2}, ldims[1] = {3};
  uint8_t lab[3] = {9, 0, 4};
  write_idx("train-images-idx3-ubyte.gz", 0x08, 3, idims, img, 12, 1);
  write_idx("train-labels-idx1-ubyte", 0x08, 1, ldims, lab, 3, 0);
  int16_t be[3] = {(int16_t)0x0100, (int16_t)0xFFFF, 0}; /* 1, -1, 0 big-endian */
  write_idx("t10k-images-idx3-ubyte", 0x08, 3, idims, img, 12, 0);
  write_idx("t10k-labels-idx1-ubyte.gz", 0x0B, 1, ldims, be, 6, 1);
  dml_data_t d;
  dml_data_options_t o;
  dml_data_options_init(&o);
  CHECK_OK(dml_data_load(g_dir, "train", &o, &d));
  CHECK(d.x.dtype == DML_DTYPE_F32 && d.x.rank == 3 && d.x.dims[0] == 3 &&
        d.x.dims[2] == 2);
  CHECK(d.y.dtype == DML_DTYPE_I64 && d.y.rank == 1 && d.y.dims[0] == 3);
  if (d.x.data && d.y.data) {
    const float *x = (const float *)d.x.data;
    CHECK(x[0] == 0.0f && x[1] == 1.0f && x[2] == (float)(51 / 255.0) &&
          x[11] == (float)(8 / 255.0));
    CHECK(((const int64_t *)d.y.data)[0] == 9 && ((const int64_t *)d.y.data)[2] == 4);
  }
  dml_data_free(&d);
  o.image_scale = 1.0;
  CHECK_OK(dml_data_load(g_dir, "test", &o, &d));
  CHECK(d.x.data && ((const float *)d.x.data)[1] == 255.0f);
  CHECK(d.y.data && ((const int64_t *)d.y.data)[0] == 1 &&
        ((const int64_t *)d.y.data)[1] == -1);
  dml_data_free(&d);
  /* two files, labels given first */
  char a[256], b[256], spec[600];
  path_of(a, sizeof a, "train-labels-idx1-ubyte");
  path_of(b, sizeof b, "train-images-idx3-ubyte.gz");
  snprintf(spec, sizeof spec, "%s,%s", a, b);
  CHECK_OK(dml_data_load(spec, NULL, NULL, &d));
  CHECK(d.x.rank == 3 && d.y.rank == 1);
  dml_data_free(&d);

  /* errors */
  dml_tensor_t t;
  write_idx("short.idx", 0x08, 3, idims, img, 11, 1);
  path_of(a, sizeof a, "short.idx");
  CHECK_ERROR(dml_data_read_idx(a, &t), DML_STATUS_DATA_LOSS,
              "the dims need 12 data bytes, the file has 11");
  write_idx("type.idx", 0x0A, 1, ldims, lab, 3, 0);
  path_of(a, sizeof a, "type.idx");
  CHECK_ERROR(dml_data_read_idx(a, &t), DML_STATUS_DATA_LOSS, "unknown type code");
  write_idx("rank.idx", 0x08, 0, ldims, NULL, 0, 0);
  path_of(a, sizeof a, "rank.idx");
  CHECK_ERROR(dml_data_read_idx(a, &t), DML_STATUS_DATA_LOSS, "rank must be 1..8");
  FILE *f = fopen(a, "wb");
  fputs("PK", f);
  fclose(f);
  CHECK_ERROR(dml_data_read_idx(a, &t), DML_STATUS_DATA_LOSS,
              "shorter than the 4-byte magic");
  uint32_t l2[1] = {2};
  write_idx("two-labels.idx", 0x08, 1, l2, lab, 2, 0);
  path_of(a, sizeof a, "train-images-idx3-ubyte.gz");
  path_of(b, sizeof b, "two-labels.idx");
  snprintf(spec, sizeof spec, "%s,%s", a, b);
  CHECK_ERROR(dml_data_load(spec, NULL, NULL, &d), DML_STATUS_INVALID_ARGUMENT,
              "has 3 rows but");
  path_of(a, sizeof a, "missing.idx");
  CHECK_ERROR(dml_data_read_idx(a, &t), DML_STATUS_NOT_FOUND, "missing.idx");
  CHECK_ERROR(dml_data_load("/nonexistent/folder", "train", NULL, &d),
              DML_STATUS_NOT_FOUND, "no such file or folder '/nonexistent/folder'");
  CHECK_ERROR(dml_data_load("/tmp", "train", NULL, &d), DML_STATUS_NOT_FOUND,
              "has no train-*images* and train-*labels* IDX files");
  CHECK_ERROR(dml_data_load("a.npy,b.idx", NULL, NULL, &d), DML_STATUS_INVALID_ARGUMENT,
              "must be .npy, or both IDX");
  CHECK_ERROR(dml_data_load("a,b,c", NULL, NULL, &d), DML_STATUS_INVALID_ARGUMENT,
              "at most two files");
}

/* The real Fashion-MNIST test split, when the machine has it. */
static void test_fashion_mnist(void) {
  const char *dir = "/usr/share/datasets/fashion-mnist";
  struct stat sb;
  if (stat(dir, &sb) != 0) {
    printf("skip: %s absent\n", dir);
    return;
  }
  dml_data_t d;
  CHECK_OK(dml_data_load(dir, "test", NULL, &d));
  CHECK(d.x.rank == 3 && d.x.dims[0] == 10000 && d.x.dims[1] == 28 && d.x.dims[2] == 28);
  CHECK(d.y.rank == 1 && d.y.dims[0] == 10000);
  int count[10] = {0}, bad = 0;
  for (int i = 0; d.y.data && i < 10000; i++) {
    int64_t l = ((const int64_t *)d.y.data)[i];
    if (l < 0 || l > 9)
      bad++;
    else
      count[l]++;
  }
  CHECK(!bad);
  for (int c = 0; c < 10; c++) CHECK(count[c] == 1000); /* the test split is balanced */
  float mn = 1, mx = 0;
  for (int64_t i = 0; d.x.data && i < 10000 * 784; i++) {
    float v = ((const float *)d.x.data)[i];
    mn = v < mn ? v : mn;
    mx = v > mx ? v : mx;
  }
  CHECK(mn == 0.0f && mx == 1.0f);
  dml_data_free(&d);
}

static void test_npy(void) {
  float x[6] = {1, 2, 3, 4, 5, 6};
  int32_t y[3] = {0, 1, 2};
  dml_tensor_t tx = {DML_DTYPE_F32, 2, {3, 2}, x}, ty = {DML_DTYPE_I32, 1, {3}, y};
  char a[256], b[256], spec[600];
  path_of(a, sizeof a, "x.npy");
  path_of(b, sizeof b, "y.npy");
  CHECK_OK(dml_npy_write_file(a, &tx));
  CHECK_OK(dml_npy_write_file(b, &ty));
  snprintf(spec, sizeof spec, "%s,%s", a, b);
  dml_data_t d;
  CHECK_OK(dml_data_load(spec, NULL, NULL, &d));
  CHECK(d.x.dims[0] == 3 && d.y.dtype == DML_DTYPE_I32 && d.x.data &&
        !memcmp(d.x.data, x, sizeof x));
  /* adapt: i32 labels -> i64 target [N]; x as is */
  dml_rt_io_info_t xi, yi;
  memset(&xi, 0, sizeof xi);
  memset(&yi, 0, sizeof yi);
  xi.name = "input", xi.dtype = DML_DTYPE_F32, xi.rank = 2, xi.dims[0] = -1,
  xi.dims[1] = 2;
  yi.name = "target", yi.dtype = DML_DTYPE_I64, yi.rank = 1, yi.dims[0] = -1;
  xi.dim_symbol[0] = "batch";
  xi.dim_multiplier[0] = 1;
  CHECK_OK(dml_data_adapt(&d, &xi, &yi));
  CHECK(d.y.dtype == DML_DTYPE_I64 && ((const int64_t *)d.y.data)[2] == 2);
  /* one-hot for a float [N, 3] target */
  yi.dtype = DML_DTYPE_F32, yi.rank = 2, yi.dims[1] = 3;
  CHECK_OK(dml_data_adapt(&d, &xi, &yi));
  CHECK(d.y.dtype == DML_DTYPE_F32 && d.y.rank == 2 && d.y.dims[1] == 3);
  const float want[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  CHECK(d.y.data && !memcmp(d.y.data, want, sizeof want));
  /* x of another row size */
  xi.dims[1] = 3;
  CHECK_ERROR(dml_data_adapt(&d, &xi, &yi), DML_STATUS_INVALID_ARGUMENT,
              "the data's x is f32[3,2] but the package's 'input' is f32[batch,3]");
  dml_data_free(&d);
  ty.dims[0] = 2;
  CHECK_OK(dml_npy_write_file(b, &ty));
  CHECK_ERROR(dml_data_load(spec, NULL, NULL, &d), DML_STATUS_INVALID_ARGUMENT,
              "with the same N");
  path_of(b, sizeof b, "nope.npy");
  snprintf(spec, sizeof spec, "%s,%s", a, b);
  CHECK_ERROR(dml_data_load(spec, NULL, NULL, &d), DML_STATUS_NOT_FOUND, "nope.npy");
}

static void test_csv(void) {
  const char *text = "a, b ,label\r\n1,2,0\r\n\r\n 3.5 , -4e1 ,1\r\n5,6,2";
  dml_data_t d;
  CHECK_OK(dml_data_parse_csv(text, strlen(text), "t.csv", -1, &d));
  CHECK(d.x.rank == 2 && d.x.dims[0] == 3 && d.x.dims[1] == 2 &&
        d.y.dtype == DML_DTYPE_I64);
  if (d.x.data) {
    const float *x = (const float *)d.x.data;
    CHECK(x[2] == 3.5f && x[3] == -40.0f && x[5] == 6.0f);
    CHECK(((const int64_t *)d.y.data)[2] == 2);
  }
  dml_data_free(&d);
  /* label first, float labels -> f32 */
  text = "0.5,1,2\n1.5,3,4\n";
  CHECK_OK(dml_data_parse_csv(text, strlen(text), "t.csv", 0, &d));
  CHECK(d.y.dtype == DML_DTYPE_F32 && ((const float *)d.y.data)[1] == 1.5f &&
        ((const float *)d.x.data)[0] == 1.0f);
  /* a float label cannot be a class index */
  dml_rt_io_info_t xi, yi;
  memset(&xi, 0, sizeof xi);
  memset(&yi, 0, sizeof yi);
  xi.name = "input", xi.dtype = DML_DTYPE_F32, xi.rank = 2, xi.dims[0] = -1,
  xi.dims[1] = 2;
  yi.name = "target", yi.dtype = DML_DTYPE_I64, yi.rank = 1, yi.dims[0] = -1;
  CHECK_ERROR(dml_data_adapt(&d, &xi, &yi), DML_STATUS_INVALID_ARGUMENT,
              "label 0.5 (element 0) is not an integer class index");
  dml_data_free(&d);
  /* the file reader */
  char p[256];
  path_of(p, sizeof p, "d.csv");
  FILE *f = fopen(p, "w");
  fputs("x1,x2,y\n1,2,1\n3,4,0\n", f);
  fclose(f);
  CHECK_OK(dml_data_load(p, NULL, NULL, &d));
  CHECK(d.x.dims[0] == 2 && d.y.dtype == DML_DTYPE_I64);
  dml_data_free(&d);
  /* errors name the file and line */
  text = "1,2,3\n4,x,6\n";
  CHECK_ERROR(dml_data_parse_csv(text, strlen(text), "t.csv", -1, &d),
              DML_STATUS_DATA_LOSS, "t.csv:2: column 2 is not a number ('x')");
  text = "1,2,3\n4,5\n";
  CHECK_ERROR(dml_data_parse_csv(text, strlen(text), "t.csv", -1, &d),
              DML_STATUS_DATA_LOSS, "t.csv:2: 2 columns, the first row has 3");
  text = "1,,3\n";
  CHECK_ERROR(dml_data_parse_csv(text, strlen(text), "t.csv", -1, &d),
              DML_STATUS_DATA_LOSS, "t.csv:1: column 2 is not a number");
  text = "a,b\n";
  CHECK_ERROR(dml_data_parse_csv(text, strlen(text), "t.csv", -1, &d),
              DML_STATUS_DATA_LOSS, "no data rows");
  text = "1\n2\n";
  CHECK_ERROR(dml_data_parse_csv(text, strlen(text), "t.csv", -1, &d),
              DML_STATUS_DATA_LOSS, "1 column; need features and a label");
  text = "1,2\n";
  CHECK_ERROR(dml_data_parse_csv(text, strlen(text), "t.csv", 5, &d),
              DML_STATUS_INVALID_ARGUMENT, "label column 5 outside the 2 columns");
}

int main(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/dmlc_train_data.%ld", (long)getpid());
  mkdir(g_dir, 0755);
  RUN(test_idx);
  RUN(test_fashion_mnist);
  RUN(test_npy);
  RUN(test_csv);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
  return dml_test_finish();
}
