/* test_safetensors.c — the safetensors reader/writer (runtime/train):
 * round trips, a file laid out by hand as the format specifies, every
 * reject with its offset, atomic writes (a failed write leaves the previous
 * file intact). */
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dml_safetensors.h"
#include "dml_test.h"

static void test_round_trip(void) {
  float a[6] = {1, -2, 3.5f, 4, 5, 6};
  int64_t b[4] = {-1, 0, 1, INT64_MAX};
  uint8_t c = 7;
  dml_st_entry_t e[3] = {{"fc1.weight", {DML_DTYPE_F32, 2, {2, 3}, a}},
                         {"fc1.weight.exp_avg\"q\\", {DML_DTYPE_I64, 1, {4}, b}},
                         {"optimizer.step", {DML_DTYPE_U8, 0, {0}, &c}}};
  const char *k[] = {"epoch", "note"};
  const char *v[] = {"3", "tab\there \"quoted\" \xc3\xa9"};
  void *bytes;
  size_t n;
  CHECK_OK(dml_safetensors_write_memory(e, 3, k, v, 2, &bytes, &n));
  const uint8_t *p = (const uint8_t *)bytes;
  uint64_t hl = 0;
  for (int i = 7; i >= 0; i--) hl = hl << 8 | p[i];
  CHECK((8 + hl) % 8 == 0);
  CHECK(n == 8 + hl + sizeof a + sizeof b + 1);
  dml_safetensors_t *f = NULL;
  CHECK_OK(dml_safetensors_parse(bytes, n, &f));
  if (f) {
    CHECK(f->n_tensors == 3 && f->n_meta == 2);
    const dml_st_tensor_t *t = dml_safetensors_find(f, "fc1.weight");
    CHECK(t && t->tensor.dtype == DML_DTYPE_F32 && t->tensor.rank == 2 &&
          t->tensor.dims[0] == 2 && t->tensor.dims[1] == 3 && t->begin == 0 &&
          t->end == 24);
    CHECK(t && !memcmp(t->tensor.data, a, sizeof a));
    t = dml_safetensors_find(f, "fc1.weight.exp_avg\"q\\");
    CHECK(t && t->tensor.dtype == DML_DTYPE_I64 && !memcmp(t->tensor.data, b, sizeof b));
    t = dml_safetensors_find(f, "optimizer.step");
    CHECK(t && t->tensor.rank == 0 && *(const uint8_t *)t->tensor.data == 7);
    CHECK(!strcmp(dml_safetensors_meta(f, "epoch"), "3"));
    CHECK(!strcmp(dml_safetensors_meta(f, "note"), v[1]));
    CHECK(dml_safetensors_meta(f, "nope") == NULL);
    CHECK(dml_safetensors_find(f, "nope") == NULL);
  }
  dml_safetensors_release(f);
  free(bytes);
  /* bad writer arguments */
  dml_st_entry_t dup[2] = {e[0], e[0]};
  CHECK_ERROR(dml_safetensors_write_memory(dup, 2, NULL, NULL, 0, &bytes, &n),
              DML_STATUS_INVALID_ARGUMENT, "duplicate tensor name 'fc1.weight'");
  dml_st_entry_t meta = {"__metadata__", e[0].tensor};
  CHECK_ERROR(dml_safetensors_write_memory(&meta, 1, NULL, NULL, 0, &bytes, &n),
              DML_STATUS_INVALID_ARGUMENT, "reserved name");
}

/* Builds a file: 8-byte length, `header`, then `data_bytes` bytes 0..n-1. */
static uint8_t *make_file(const char *header, size_t data_bytes, size_t *out_n) {
  size_t hl = strlen(header), n = 8 + hl + data_bytes;
  uint8_t *b = (uint8_t *)malloc(n);
  for (int i = 0; i < 8; i++) b[i] = (uint8_t)((uint64_t)hl >> (8 * i));
  memcpy(b + 8, header, hl);
  for (size_t i = 0; i < data_bytes; i++) b[8 + hl + i] = (uint8_t)i;
  *out_n = n;
  return b;
}

/* A file laid out by hand as the format page shows (what Python's
 * safetensors.torch.save_file writes for {"a": tensor([[0.,1.],[2.,3.]])}
 * except for the data): whitespace and key order as the spec allows. */
static void test_hand_written(void) {
  size_t n;
  uint8_t *b = make_file(
      "{\"__metadata__\":{\"format\":\"pt\"},\"a\":{\"dtype\":\"F32\",\"shape\":[2,2],"
      "\"data_offsets\":[0,16]}, \"b\" : { \"data_offsets\" : [16, 20], \"shape\" : [ 2 "
      "], "
      "\"dtype\" : \"BF16\" } "
      ",\"\\u00e9\\ud83d\\ude00\":{\"dtype\":\"BOOL\",\"shape\":[0],"
      "\"data_offsets\":[20,20]}}    ",
      20, &n);
  dml_safetensors_t *f = NULL;
  CHECK_OK(dml_safetensors_parse(b, n, &f));
  if (f) {
    CHECK(f->n_tensors == 3);
    CHECK(!strcmp(dml_safetensors_meta(f, "format"), "pt"));
    const dml_st_tensor_t *t = dml_safetensors_find(f, "b");
    CHECK(t && t->tensor.dtype == DML_DTYPE_BF16 && t->begin == 16 &&
          ((const uint8_t *)t->tensor.data)[0] == 16);
    CHECK(dml_safetensors_find(f, "\xc3\xa9\xf0\x9f\x98\x80") != NULL);
  }
  dml_safetensors_release(f);
  free(b);
  /* an empty file body: "{}" */
  b = make_file("{}", 0, &n);
  CHECK_OK(dml_safetensors_parse(b, n, &f));
  CHECK(f && f->n_tensors == 0);
  dml_safetensors_release(f);
  free(b);
}

typedef struct {
  const char *header;
  size_t data;
  dml_status_code_t code;
  const char *substr;
} bad_t;

#define T1 "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}"

static void test_rejects(void) {
  static const bad_t k[] = {
      {"[]", 0, DML_STATUS_DATA_LOSS, "expected '{'"},
      {"{\"a\":1}", 0, DML_STATUS_DATA_LOSS, "expected '{'"},
      {T1, 4, DML_STATUS_DATA_LOSS, "expected ',', found the end"},
      {T1 "}x", 4, DML_STATUS_DATA_LOSS, "bytes after the JSON object"},
      {T1 ",}", 4, DML_STATUS_DATA_LOSS, "expected a string"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, DML_STATUS_DATA_LOSS,
       "lacks data_offsets"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":1}}", 4,
       DML_STATUS_DATA_LOSS, "unexpected key 'x'"},
      {"{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}"
       "}",
       4, DML_STATUS_DATA_LOSS, "duplicate key 'dtype'"},
      {"{\"a\":{\"dtype\":\"F33\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
       DML_STATUS_DATA_LOSS, "unknown dtype 'F33'"},
      {"{\"a\":{\"dtype\":\"F8_E4M3\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
       DML_STATUS_UNIMPLEMENTED, "dtype F8_E4M3 is not supported"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[01],\"data_offsets\":[0,4]}}", 4,
       DML_STATUS_DATA_LOSS, "leading zero"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4,
       DML_STATUS_DATA_LOSS, "expected a non-negative integer"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1.0],\"data_offsets\":[0,4]}}", 4,
       DML_STATUS_DATA_LOSS, "fraction or exponent"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[99999999999999999999],\"data_offsets\":[0,4]"
       "}}",
       4, DML_STATUS_DATA_LOSS, "integer too large"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}",
       4, DML_STATUS_DATA_LOSS, "rank above 8"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904,4],\"data_offsets\":[0,"
       "4]}}",
       4, DML_STATUS_DATA_LOSS, "element count overflows"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", 4,
       DML_STATUS_DATA_LOSS, "span 4 bytes, its dtype and shape need 8"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,8]}}", 4,
       DML_STATUS_DATA_LOSS, "outside the 4-byte buffer"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", 4,
       DML_STATUS_DATA_LOSS, "outside"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8,
       DML_STATUS_DATA_LOSS, "starts at buffer byte 4, expected 0"},
      {T1 ",\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[2,6]}}", 6,
       DML_STATUS_DATA_LOSS, "starts at buffer byte 2, expected 4"},
      {T1 "}", 5, DML_STATUS_DATA_LOSS, "cover 4 bytes of the 5-byte buffer"},
      {T1 ",\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8,
       DML_STATUS_DATA_LOSS, "duplicate tensor name 'a'"},
      {"{\"\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
       DML_STATUS_DATA_LOSS, "empty tensor name"},
      {"{\"__metadata__\":{\"k\":1}}", 0, DML_STATUS_DATA_LOSS, "expected a string"},
      {"{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}", 0, DML_STATUS_DATA_LOSS,
       "duplicate metadata key 'k'"},
      {"{\"__metadata__\":{},\"__metadata__\":{}}", 0, DML_STATUS_DATA_LOSS,
       "duplicate \"__metadata__\""},
      {"{\"__metadata__\":{\"k\":\"\\x\"}}", 0, DML_STATUS_DATA_LOSS, "bad escape '\\x'"},
      {"{\"__metadata__\":{\"k\":\"\\ud800\"}}", 0, DML_STATUS_DATA_LOSS,
       "high surrogate without a low surrogate"},
      {"{\"__metadata__\":{\"k\":\"\\udc00\"}}", 0, DML_STATUS_DATA_LOSS,
       "lone low surrogate"},
      {"{\"__metadata__\":{\"k\":\"\\u00zz\"}}", 0, DML_STATUS_DATA_LOSS,
       "bad hex digit"},
      {"{\"__metadata__\":{\"k\":\"\\u0000\"}}", 0, DML_STATUS_DATA_LOSS,
       "NUL character"},
      {"{\"__metadata__\":{\"k\":\"\xc0\xaf\"}}", 0, DML_STATUS_DATA_LOSS,
       "invalid UTF-8"},
      {"{\"__metadata__\":{\"k\":\"\xed\xa0\x80\"}}", 0, DML_STATUS_DATA_LOSS,
       "invalid UTF-8"},
      {"{\"__metadata__\":{\"k\":\"a\nb\"}}", 0, DML_STATUS_DATA_LOSS,
       "control character 0x0a"},
      {"{\"__metadata__\":{\"k\":\"abc", 0, DML_STATUS_DATA_LOSS, "unterminated string"},
      {"{", 0, DML_STATUS_DATA_LOSS, "cannot hold a JSON object"},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    size_t n;
    uint8_t *b = make_file(k[i].header, k[i].data, &n);
    dml_safetensors_t *f = NULL;
    dml_status_t st = dml_safetensors_parse(b, n, &f);
    if (!st) {
      fprintf(stderr, "case %zu accepted: %s\n", i, k[i].header);
      dml_safetensors_release(f);
      CHECK(0);
    } else {
      char *msg = dml_status_format(st);
      if (dml_status_code(st) != k[i].code || !strstr(msg, k[i].substr) ||
          !strstr(msg, "at byte offset ")) {
        fprintf(stderr, "case %zu: %s\n  got %s\n", i, k[i].header, msg);
        CHECK(0);
      }
      free(msg);
      dml_status_free(st);
    }
    free(b);
  }
  /* the length prefix itself */
  uint8_t b[16] = {0};
  dml_safetensors_t *f;
  CHECK_ERROR(dml_safetensors_parse(b, 7, &f), DML_STATUS_DATA_LOSS, "too short");
  b[0] = 9; /* 9 header bytes but 8 follow */
  CHECK_ERROR(dml_safetensors_parse(b, 16, &f), DML_STATUS_DATA_LOSS,
              "header length 9 exceeds the file");
  memset(b, 0xFF, 8);
  CHECK_ERROR(dml_safetensors_parse(b, 16, &f), DML_STATUS_DATA_LOSS,
              "exceeds the limit of 100000000 bytes");
  /* every truncation of a valid file is rejected, never read past */
  size_t n;
  uint8_t *full = make_file(T1 "}", 4, &n);
  for (size_t cut = 0; cut < n; cut++) {
    uint8_t *c = (uint8_t *)malloc(cut ? cut : 1);
    memcpy(c, full, cut);
    dml_status_t st = dml_safetensors_parse(c, cut, &f);
    CHECK(st && dml_status_code(st) == DML_STATUS_DATA_LOSS);
    dml_status_free(st);
    free(c);
  }
  free(full);
}

static char g_dir[256];

static int count_tmp_files(void) {
  DIR *d = opendir(g_dir);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (strstr(e->d_name, ".tmp.")) n++;
  if (d) closedir(d);
  return n;
}

static void test_files_atomic(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/dmlc_st_test.%ld", (long)getpid());
  mkdir(g_dir, 0755);
  char path[300];
  snprintf(path, sizeof path, "%s/ckpt.safetensors", g_dir);
  float small[4] = {1, 2, 3, 4};
  dml_st_entry_t e = {"w", {DML_DTYPE_F32, 1, {4}, small}};
  CHECK_OK(dml_safetensors_write_file(path, &e, 1, NULL, NULL, 0));
  dml_safetensors_t *f = NULL;
  void *bytes = NULL;
  CHECK_OK(dml_safetensors_read_file(path, &f, &bytes));
  CHECK(f && f->n_tensors == 1 && !memcmp(f->tensors[0].tensor.data, small, 16));
  dml_safetensors_release(f);
  free(bytes);
  struct stat before;
  CHECK(stat(path, &before) == 0);

  /* A write that fails half way (the file size limit makes write() fail
   * with EFBIG after 4096 bytes) leaves the previous file as it was and no
   * temporary file behind. */
  enum { BIG = 1 << 16 };
  float *big = (float *)calloc(BIG, sizeof(float));
  for (int i = 0; i < BIG; i++) big[i] = (float)i;
  dml_st_entry_t eb = {"w", {DML_DTYPE_F32, 1, {BIG}, big}};
  struct rlimit old, lim;
  getrlimit(RLIMIT_FSIZE, &old);
  lim = old;
  lim.rlim_cur = 4096;
  signal(SIGXFSZ, SIG_IGN);
  CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
  dml_status_t st = dml_safetensors_write_file(path, &eb, 1, NULL, NULL, 0);
  setrlimit(RLIMIT_FSIZE, &old);
  CHECK(st && dml_status_code(st) == DML_STATUS_IO);
  char *msg = dml_status_format(st);
  CHECK(msg && strstr(msg, "writing") && strstr(msg, ".tmp."));
  free(msg);
  dml_status_free(st);
  CHECK(count_tmp_files() == 0);
  CHECK_OK(dml_safetensors_read_file(path, &f, &bytes));
  CHECK(f && f->n_tensors == 1 && f->tensors[0].tensor.dims[0] == 4 &&
        !memcmp(f->tensors[0].tensor.data, small, 16));
  dml_safetensors_release(f);
  free(bytes);
  /* without the limit the big write replaces it */
  CHECK_OK(dml_safetensors_write_file(path, &eb, 1, NULL, NULL, 0));
  CHECK_OK(dml_safetensors_read_file(path, &f, &bytes));
  CHECK(f && f->tensors[0].tensor.dims[0] == BIG &&
        !memcmp(f->tensors[0].tensor.data, big, sizeof(float) * BIG));
  dml_safetensors_release(f);
  free(bytes);
  free(big);

  /* errors name the path */
  char bad[300];
  snprintf(bad, sizeof bad, "%s/no/such/dir/x.safetensors", g_dir);
  CHECK_ERROR(dml_safetensors_write_file(bad, &e, 1, NULL, NULL, 0), DML_STATUS_NOT_FOUND,
              "no/such/dir/x.safetensors.tmp.");
  CHECK_ERROR(dml_safetensors_read_file(bad, &f, &bytes), DML_STATUS_NOT_FOUND,
              "no/such/dir/x.safetensors");
  /* a corrupt file on disk: DATA_LOSS annotated with the path */
  FILE *fp = fopen(path, "r+b");
  if (fp) {
    fseek(fp, 8, SEEK_SET);
    fputc('[', fp);
    fclose(fp);
  }
  CHECK_ERROR(dml_safetensors_read_file(path, &f, &bytes), DML_STATUS_DATA_LOSS,
              "ckpt.safetensors");
  unlink(path);
  rmdir(g_dir);
}

int main(void) {
  RUN(test_round_trip);
  RUN(test_hand_written);
  RUN(test_rejects);
  RUN(test_files_atomic);
  return dml_test_finish();
}
