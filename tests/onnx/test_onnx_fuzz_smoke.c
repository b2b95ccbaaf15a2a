/*
 * test_onnx_fuzz_smoke.c — runs the libFuzzer target (tests/fuzz/fuzz_onnx.c)
 * over every prefix and many byte mutations of the fixtures, so the
 * "untrusted bytes never crash" promise is exercised on every build, not
 * only under -DDMLC_FUZZ=ON.
 */
#include "onnx_test_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void) { /* xorshift64 */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static void fuzz_file(const char *name, int mutations) {
  char path[1024];
  size_t len = 0;
  uint8_t *src = read_all(fixture(name, path, sizeof(path)), &len);
  CHECK(src != NULL);
  if (!src) return;
  uint8_t *buf = (uint8_t *)malloc(len + 1);
  CHECK(buf != NULL);
  if (buf) {
    for (size_t n = 0; n <= len; n++) LLVMFuzzerTestOneInput(src, n);
    for (int k = 0; k < mutations; k++) {
      memcpy(buf, src, len);
      int flips = 1 + (int)(rng() % 4);
      for (int j = 0; j < flips && len; j++)
        buf[rng() % len] ^= (uint8_t)(1u << (rng() % 8));
      if (rng() % 4 == 0 && len) buf[rng() % len] = (uint8_t)rng();
      LLVMFuzzerTestOneInput(buf, len);
    }
  }
  free(buf);
  free(src);
}

static void test_fixtures_mutated(void) {
  static const char *const files[] = {
      "typed_fields.onnx",  "constants.onnx", "opset7.onnx",    "opset11.onnx",
      "ops13.onnx",         "softmax12.onnx", "external.onnx",  "unsupported.onnx",
      "init_as_input.onnx", "if_outer.onnx",  "if_nested.onnx",
  };
  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) fuzz_file(files[i], 3000);
  CHECK(1); /* reaching here without a crash is the test */
}

int main(void) {
  RUN(test_fixtures_mutated);
  return dml_test_finish();
}
