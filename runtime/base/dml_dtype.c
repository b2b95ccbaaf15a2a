#include "dml_dtype.h"

#include <math.h>
#include <string.h>

static const struct {
  const char *name;
  size_t size;
  const char *npy;
} k_dtypes[DML_DTYPE_COUNT_] = {
    [DML_DTYPE_INVALID] = {"invalid", 0, NULL},
    [DML_DTYPE_F32] = {"f32", 4, "<f4"},
    [DML_DTYPE_F16] = {"f16", 2, "<f2"},
    [DML_DTYPE_BF16] = {"bf16", 2, NULL},
    [DML_DTYPE_F64] = {"f64", 8, "<f8"},
    [DML_DTYPE_I8] = {"i8", 1, "|i1"},
    [DML_DTYPE_U8] = {"u8", 1, "|u1"},
    [DML_DTYPE_I16] = {"i16", 2, "<i2"},
    [DML_DTYPE_U16] = {"u16", 2, "<u2"},
    [DML_DTYPE_I32] = {"i32", 4, "<i4"},
    [DML_DTYPE_U32] = {"u32", 4, "<u4"},
    [DML_DTYPE_I64] = {"i64", 8, "<i8"},
    [DML_DTYPE_U64] = {"u64", 8, "<u8"},
    [DML_DTYPE_BOOL] = {"bool", 1, "|b1"},
    [DML_DTYPE_STRING] = {"str", sizeof(dml_str_t), NULL},
};

static int valid(dml_dtype_t dt) {
  return (int)dt > 0 && (int)dt < DML_DTYPE_COUNT_;
}

size_t dml_dtype_size(dml_dtype_t dt) {
  return valid(dt) ? k_dtypes[dt].size : 0;
}
const char *dml_dtype_name(dml_dtype_t dt) {
  return valid(dt) ? k_dtypes[dt].name : "invalid";
}
dml_dtype_t dml_dtype_from_name(const char *name, size_t len) {
  for (int i = 1; i < DML_DTYPE_COUNT_; i++) {
    const char *n = k_dtypes[i].name;
    if (strlen(n) == len && memcmp(n, name, len) == 0) return (dml_dtype_t)i;
  }
  return DML_DTYPE_INVALID;
}
int dml_dtype_is_float(dml_dtype_t dt) {
  return dt == DML_DTYPE_F32 || dt == DML_DTYPE_F16 || dt == DML_DTYPE_BF16 ||
         dt == DML_DTYPE_F64;
}
int dml_dtype_is_signed_int(dml_dtype_t dt) {
  return dt == DML_DTYPE_I8 || dt == DML_DTYPE_I16 || dt == DML_DTYPE_I32 ||
         dt == DML_DTYPE_I64;
}
int dml_dtype_is_string(dml_dtype_t dt) {
  return dt == DML_DTYPE_STRING;
}

int dml_dtype_is_int(dml_dtype_t dt) {
  return dml_dtype_is_signed_int(dt) || dt == DML_DTYPE_U8 || dt == DML_DTYPE_U16 ||
         dt == DML_DTYPE_U32 || dt == DML_DTYPE_U64;
}
const char *dml_dtype_npy_descr(dml_dtype_t dt) {
  return valid(dt) ? k_dtypes[dt].npy : NULL;
}
dml_dtype_t dml_dtype_from_npy_descr(const char *d, size_t len) {
  for (int i = 1; i < DML_DTYPE_COUNT_; i++) {
    const char *n = k_dtypes[i].npy;
    if (!n) continue;
    size_t nl = strlen(n);
    if (nl != len) continue;
    /* '|' and '<' are interchangeable for one-byte types; '=' means native
     * (little-endian on every machine we support). */
    if ((d[0] == n[0] || (k_dtypes[i].size == 1 && (d[0] == '|' || d[0] == '<')) ||
         d[0] == '=') &&
        memcmp(d + 1, n + 1, nl - 1) == 0)
      return (dml_dtype_t)i;
  }
  return DML_DTYPE_INVALID;
}

/* binary16: 1 sign, 5 exponent, 10 mantissa bits. */
float dml_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else { /* subnormal: normalize */
      exp = 127 - 15 + 1;
      while (!(man & 0x400u)) {
        man <<= 1;
        exp--;
      }
      man &= 0x3ffu;
      bits = sign | (exp << 23) | (man << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

uint16_t dml_f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t man = x & 0x7fffffu;
  if (exp == 0xff) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
  int32_t e = (int32_t)exp - 127 + 15;
  if (e >= 0x1f) return (uint16_t)(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return sign;
    man |= 0x800000u;
    uint32_t shift = (uint32_t)(14 - e);
    uint32_t half = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) half++;
    return (uint16_t)(sign | half);
  }
  uint32_t half = ((uint32_t)e << 10) | (man >> 13);
  uint32_t rem = man & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) half++;
  return (uint16_t)(sign | half);
}

float dml_bf16_to_f32(uint16_t b) {
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

uint16_t dml_f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40);
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;
  return (uint16_t)(x >> 16);
}

double dml_load_f64(dml_dtype_t dt, const void *p, size_t i) {
  switch (dt) {
    case DML_DTYPE_F32: return ((const float *)p)[i];
    case DML_DTYPE_F16: return dml_f16_to_f32(((const uint16_t *)p)[i]);
    case DML_DTYPE_BF16: return dml_bf16_to_f32(((const uint16_t *)p)[i]);
    case DML_DTYPE_F64: return ((const double *)p)[i];
    case DML_DTYPE_I8: return ((const int8_t *)p)[i];
    case DML_DTYPE_U8: return ((const uint8_t *)p)[i];
    case DML_DTYPE_I16: return ((const int16_t *)p)[i];
    case DML_DTYPE_U16: return ((const uint16_t *)p)[i];
    case DML_DTYPE_I32: return ((const int32_t *)p)[i];
    case DML_DTYPE_U32: return ((const uint32_t *)p)[i];
    case DML_DTYPE_I64: return (double)((const int64_t *)p)[i];
    case DML_DTYPE_U64: return (double)((const uint64_t *)p)[i];
    case DML_DTYPE_BOOL: return ((const uint8_t *)p)[i] ? 1.0 : 0.0;
    default: return 0.0;
  }
}

int64_t dml_load_i64(dml_dtype_t dt, const void *p, size_t i) {
  switch (dt) {
    case DML_DTYPE_I8: return ((const int8_t *)p)[i];
    case DML_DTYPE_U8: return ((const uint8_t *)p)[i];
    case DML_DTYPE_I16: return ((const int16_t *)p)[i];
    case DML_DTYPE_U16: return ((const uint16_t *)p)[i];
    case DML_DTYPE_I32: return ((const int32_t *)p)[i];
    case DML_DTYPE_U32: return ((const uint32_t *)p)[i];
    case DML_DTYPE_I64: return ((const int64_t *)p)[i];
    case DML_DTYPE_U64: return (int64_t)((const uint64_t *)p)[i];
    case DML_DTYPE_BOOL: return ((const uint8_t *)p)[i] ? 1 : 0;
    default: {
      double v = dml_load_f64(dt, p, i);
      if (v != v) return 0;
      if (v >= 9.2233720368547758e18) return INT64_MAX;
      if (v <= -9.2233720368547758e18) return INT64_MIN;
      return (int64_t)v;
    }
  }
}

void dml_store_f64(dml_dtype_t dt, void *p, size_t i, double v) {
  switch (dt) {
    case DML_DTYPE_F32: ((float *)p)[i] = (float)v; return;
    case DML_DTYPE_F16: ((uint16_t *)p)[i] = dml_f32_to_f16((float)v); return;
    case DML_DTYPE_BF16: ((uint16_t *)p)[i] = dml_f32_to_bf16((float)v); return;
    case DML_DTYPE_F64: ((double *)p)[i] = v; return;
    case DML_DTYPE_BOOL: ((uint8_t *)p)[i] = v != 0.0; return;
    default: {
      int64_t iv;
      if (v != v)
        iv = 0;
      else if (v >= 9.2233720368547758e18)
        iv = INT64_MAX;
      else if (v <= -9.2233720368547758e18)
        iv = INT64_MIN;
      else
        iv = (int64_t)v;
      dml_store_i64(dt, p, i, iv);
      return;
    }
  }
}

void dml_store_i64(dml_dtype_t dt, void *p, size_t i, int64_t v) {
  switch (dt) {
    case DML_DTYPE_I8: ((int8_t *)p)[i] = (int8_t)v; return;
    case DML_DTYPE_U8: ((uint8_t *)p)[i] = (uint8_t)v; return;
    case DML_DTYPE_I16: ((int16_t *)p)[i] = (int16_t)v; return;
    case DML_DTYPE_U16: ((uint16_t *)p)[i] = (uint16_t)v; return;
    case DML_DTYPE_I32: ((int32_t *)p)[i] = (int32_t)v; return;
    case DML_DTYPE_U32: ((uint32_t *)p)[i] = (uint32_t)v; return;
    case DML_DTYPE_I64: ((int64_t *)p)[i] = v; return;
    case DML_DTYPE_U64: ((uint64_t *)p)[i] = (uint64_t)v; return;
    case DML_DTYPE_BOOL: ((uint8_t *)p)[i] = v != 0; return;
    default:
      if (dml_dtype_is_float(dt)) dml_store_f64(dt, p, i, (double)v);
      return;
  }
}

int dml_dtype_onnx_code(dml_dtype_t dt) {
  switch (dt) {
    case DML_DTYPE_F32: return 1;
    case DML_DTYPE_U8: return 2;
    case DML_DTYPE_I8: return 3;
    case DML_DTYPE_U16: return 4;
    case DML_DTYPE_I16: return 5;
    case DML_DTYPE_I32: return 6;
    case DML_DTYPE_I64: return 7;
    case DML_DTYPE_BOOL: return 9;
    case DML_DTYPE_F16: return 10;
    case DML_DTYPE_F64: return 11;
    case DML_DTYPE_U32: return 12;
    case DML_DTYPE_U64: return 13;
    case DML_DTYPE_BF16: return 16;
    case DML_DTYPE_STRING: return 8;
    default: return 0;
  }
}
