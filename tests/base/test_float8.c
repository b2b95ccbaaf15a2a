/* The float8 conversions of runtime/base/dml_dtype.c against a reference
 * computed outside dmlc (tests/base/float8_cases.txt, written by
 * gen_float8_cases.py from ml_dtypes and onnx.numpy_helper): every bit
 * pattern of each float8 type to f32, every pattern's value back with
 * saturate 0 and 1, the f32 edges (NaN, +-inf, -0, the largest finite value
 * and just above it, subnormals, halfway cases and their neighbours), f64
 * values just off the halfway points, and FLOAT8E8M0 in its three round
 * modes. A NaN is compared as "a NaN of the type" where the type has
 * several (the sign of E4M3FN/E5M2's NaN follows the input's; E5M2 keeps
 * no payload beyond its quiet bit, as ml_dtypes). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_dtype.h"
#include "dml_test.h"

static double f64_of(uint64_t b) {
  double d;
  memcpy(&d, &b, 8);
  return d;
}
static float f32_of(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}
static uint32_t bits_of(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
}

/* Equal patterns, or both NaN of dtype dt. */
static int same_f8(dml_dtype_t dt, uint8_t got, uint8_t want) {
  return got == want || (isnan(dml_f8_to_f64(dt, got)) && isnan(dml_f8_to_f64(dt, want)));
}

static void test_reference_file(void) {
  char path[1024];
  FILE *f = fopen(
      dml_test_path("DMLC_SOURCE_DIR", "tests/base/float8_cases.txt", path, sizeof path),
      "r");
  CHECK(f != NULL);
  if (!f) return;
  char line[256];
  long n_dec = 0, n_enc = 0, n_e8m0 = 0, bad = 0;
  while (fgets(line, sizeof line, f)) {
    char tag, name[32], mode[16];
    unsigned a, s0, s1;
    unsigned long long x;
    if (line[0] == '#' || line[0] == '\n') continue;
    tag = line[0];
    if (tag == 'd' && sscanf(line, "d %31s %x %llx", name, &a, &x) == 3) {
      dml_dtype_t dt = dml_dtype_from_name(name, strlen(name));
      CHECK(dml_dtype_is_float8(dt));
      float got = (float)dml_f8_to_f64(dt, (uint8_t)a), want = f32_of((uint32_t)x);
      int ok = isnan(want) ? isnan(got) && signbit(got) == signbit(want)
                           : bits_of(got) == bits_of(want);
      /* the value is exact in f32: the double is the float */
      ok = ok && (isnan(got) || dml_f8_to_f64(dt, (uint8_t)a) == (double)got);
      if (!ok && bad++ < 10)
        fprintf(stderr, "decode %s 0x%02x: got %a, want %a\n", name, a, got, want);
      n_dec++;
    } else if (tag == 'e' && sscanf(line, "e %31s %llx %x %x", name, &x, &s0, &s1) == 4) {
      dml_dtype_t dt = dml_dtype_from_name(name, strlen(name));
      double v = f64_of(x);
      uint8_t g0 = dml_f8_from_f64(dt, v, 0, DML_F8_ROUND_UP),
              g1 = dml_f8_from_f64(dt, v, 1, DML_F8_ROUND_UP);
      if ((!same_f8(dt, g0, (uint8_t)s0) || !same_f8(dt, g1, (uint8_t)s1)) && bad++ < 10)
        fprintf(stderr, "encode %s %a: got 0x%02x 0x%02x, want 0x%02x 0x%02x\n", name, v,
                g0, g1, s0, s1);
      /* the sign of a NaN follows the input's (E4M3FN, E5M2) */
      if (isnan(v) && dt != DML_DTYPE_F8E4M3FNUZ && dt != DML_DTYPE_F8E5M2FNUZ)
        CHECK(g0 == s0 && g1 == s1);
      n_enc++;
    } else if (tag == 'm' && sscanf(line, "m %15s %llx %x %x", mode, &x, &s0, &s1) == 4) {
      dml_f8_round_t r = !strcmp(mode, "up")     ? DML_F8_ROUND_UP
                         : !strcmp(mode, "down") ? DML_F8_ROUND_DOWN
                                                 : DML_F8_ROUND_NEAREST;
      CHECK(!strcmp(mode, "up") || !strcmp(mode, "down") || !strcmp(mode, "nearest"));
      double v = f32_of((uint32_t)x);
      uint8_t g0 = dml_f8_from_f64(DML_DTYPE_F8E8M0, v, 0, r),
              g1 = dml_f8_from_f64(DML_DTYPE_F8E8M0, v, 1, r);
      if ((g0 != s0 || g1 != s1) && bad++ < 10)
        fprintf(stderr, "encode f8e8m0 %s %a: got 0x%02x 0x%02x, want 0x%02x 0x%02x\n",
                mode, v, g0, g1, s0, s1);
      n_e8m0++;
    } else {
      fprintf(stderr, "bad line: %s", line);
      bad++;
    }
  }
  fclose(f);
  fprintf(stderr,
          "float8: %ld decodes, %ld encodes (x2 saturate), %ld e8m0 encodes (x2)\n",
          n_dec, n_enc, n_e8m0);
  CHECK(n_dec == 5 * 256);
  CHECK(n_enc > 4 * 256 && n_e8m0 > 300);
  CHECK(bad == 0);
}

/* Hand-checked anchors of ONNX's Cast-19 table (onnx/defs/operator_sets19,
 * "Cast ... saturate"), independent of the file. */
static void test_anchors(void) {
  const dml_dtype_t e4 = DML_DTYPE_F8E4M3FN, e4z = DML_DTYPE_F8E4M3FNUZ,
                    e5 = DML_DTYPE_F8E5M2, e5z = DML_DTYPE_F8E5M2FNUZ;
  CHECK(dml_f8_max(e4) == 448 && dml_f8_max(e4z) == 240 && dml_f8_max(e5) == 57344 &&
        dml_f8_max(e5z) == 57344 && dml_f8_max(DML_DTYPE_F8E8M0) == ldexp(1, 127));
  /* +inf: saturate gives the largest finite value; else inf or NaN */
  CHECK(dml_f8_from_f64(e4, INFINITY, 1, 0) == 0x7e);
  CHECK(dml_f8_from_f64(e4, INFINITY, 0, 0) == 0x7f);
  CHECK(dml_f8_from_f64(e4z, -INFINITY, 1, 0) == 0xff);
  CHECK(dml_f8_from_f64(e4z, -INFINITY, 0, 0) == 0x80);
  CHECK(dml_f8_from_f64(e5, INFINITY, 1, 0) == 0x7b);
  CHECK(dml_f8_from_f64(e5, -INFINITY, 0, 0) == 0xfc);
  CHECK(dml_f8_from_f64(e5z, INFINITY, 0, 0) == 0x80);
  /* 464 is halfway between 448 and 480 (NaN): ties to even keeps 448 */
  CHECK(dml_f8_from_f64(e4, 464, 0, 0) == 0x7e && dml_f8_from_f64(e4, 465, 0, 0) == 0x7f);
  /* FNUZ has no -0 */
  CHECK(dml_f8_from_f64(e4z, -0.0, 0, 0) == 0 && dml_f8_from_f64(e5z, -1e-30, 1, 0) == 0);
  CHECK(dml_f8_from_f64(e4, -0.0, 0, 0) == 0x80);
  /* smallest subnormals: 2^-9, 2^-10, 2^-16, 2^-17 */
  CHECK(dml_f8_to_f64(e4, 1) == ldexp(1, -9) && dml_f8_to_f64(e4z, 1) == ldexp(1, -10));
  CHECK(dml_f8_to_f64(e5, 1) == ldexp(1, -16) && dml_f8_to_f64(e5z, 1) == ldexp(1, -17));
  CHECK(isnan(dml_f8_to_f64(e4z, 0x80)) && dml_f8_to_f64(e5, 0x7c) == INFINITY);
  /* E8M0: 1.5 rounds up to 2 (0x80), down to 1 (0x7f) */
  CHECK(dml_f8_from_f64(DML_DTYPE_F8E8M0, 1.5, 1, DML_F8_ROUND_UP) == 0x80);
  CHECK(dml_f8_from_f64(DML_DTYPE_F8E8M0, 1.5, 1, DML_F8_ROUND_DOWN) == 0x7f);
  CHECK(dml_f8_to_f64(DML_DTYPE_F8E8M0, 0x7f) == 1.0 &&
        isnan(dml_f8_to_f64(DML_DTYPE_F8E8M0, 0xff)));
  /* not a float8 dtype */
  CHECK(dml_f8_from_f64(DML_DTYPE_F32, 1.0, 1, 0) == 0 &&
        dml_f8_to_f64(DML_DTYPE_I8, 1) == 0.0);
  /* ONNX codes and names */
  CHECK(dml_dtype_onnx_code(e4) == 17 && dml_dtype_onnx_code(e5z) == 20 &&
        dml_dtype_onnx_code(DML_DTYPE_F8E8M0) == 24);
  CHECK(dml_dtype_from_onnx_code(19) == e5 &&
        dml_dtype_from_onnx_code(21) == DML_DTYPE_INVALID &&
        dml_dtype_from_onnx_code(0) == DML_DTYPE_INVALID);
  CHECK(dml_dtype_size(e4) == 1 && !dml_dtype_is_float(e4) && dml_dtype_is_float8(e4));
  CHECK(dml_dtype_npy_descr(e4) == NULL);
}

int main(void) {
  RUN(test_reference_file);
  RUN(test_anchors);
  return dml_test_finish();
}
