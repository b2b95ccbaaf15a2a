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
    [DML_DTYPE_F8E4M3FN] = {"f8e4m3fn", 1, NULL},
    [DML_DTYPE_F8E4M3FNUZ] = {"f8e4m3fnuz", 1, NULL},
    [DML_DTYPE_F8E5M2] = {"f8e5m2", 1, NULL},
    [DML_DTYPE_F8E5M2FNUZ] = {"f8e5m2fnuz", 1, NULL},
    [DML_DTYPE_F8E8M0] = {"f8e8m0", 1, NULL},
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
int dml_dtype_is_float8(dml_dtype_t dt) {
  return dt >= DML_DTYPE_F8E4M3FN && dt <= DML_DTYPE_F8E8M0;
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

/* ==== float8 ==============================================================
 * The formats (ONNX docs/Float8.md, "Float8 types"; the OCP 8-bit floating
 * point specification for E4M3FN/E5M2 and E8M0; Graphcore's FNUZ types).
 * Conversion rules: onnx/reference/ops/op_cast.py (cast_to): with
 * saturate, onnx.numpy_helper.saturate_cast clips to [-max, max] and then
 * ml_dtypes converts (round to nearest even); without, ml_dtypes converts
 * alone (overflow gives inf or NaN as below). FLOAT8E8M0:
 * onnx.numpy_helper.to_float8e8m0. */

enum { F8_IEEE, F8_FN, F8_FNUZ };

typedef struct f8fmt {
  int mbits, bias, kind;
  double max; /* the largest finite value */
} f8fmt_t;

static const f8fmt_t *f8fmt(dml_dtype_t dt) {
  static const f8fmt_t k[4] = {
      {3, 7, F8_FN, 448.0},       /* E4M3FN: 1.75 * 2^8 (S.1111.111 is NaN) */
      {3, 8, F8_FNUZ, 240.0},     /* E4M3FNUZ: 1.875 * 2^7 */
      {2, 15, F8_IEEE, 57344.0},  /* E5M2: 1.75 * 2^15 (exponent 31 inf/NaN) */
      {2, 16, F8_FNUZ, 57344.0}}; /* E5M2FNUZ: 1.75 * 2^15 */
  return dt >= DML_DTYPE_F8E4M3FN && dt <= DML_DTYPE_F8E5M2FNUZ
             ? &k[dt - DML_DTYPE_F8E4M3FN]
             : NULL;
}

double dml_f8_max(dml_dtype_t dt) {
  if (dt == DML_DTYPE_F8E8M0) return ldexp(1.0, 127);
  const f8fmt_t *f = f8fmt(dt);
  return f ? f->max : 0.0;
}

double dml_f8_to_f64(dml_dtype_t dt, uint8_t b) {
  if (dt == DML_DTYPE_F8E8M0) return b == 0xff ? (double)NAN : ldexp(1.0, (int)b - 127);
  const f8fmt_t *f = f8fmt(dt);
  if (!f) return 0.0;
  double sign = (b & 0x80) ? -1.0 : 1.0;
  int m = f->mbits;
  int ebits = 7 - m;
  unsigned e = (b >> m) & ((1u << ebits) - 1), man = b & ((1u << m) - 1);
  if (f->kind == F8_FNUZ && b == 0x80) return -(double)NAN; /* negative, as ml_dtypes */
  if (f->kind == F8_FN && (b & 0x7f) == 0x7f) return copysign((double)NAN, sign);
  if (f->kind == F8_IEEE && e == (1u << ebits) - 1)
    return man ? copysign((double)NAN, sign) : sign * (double)INFINITY;
  if (e == 0) return sign * ldexp((double)man, 1 - f->bias - m);
  return sign * ldexp((double)(man + (1u << m)), (int)e - f->bias - m);
}

/* to_float8e8m0 (onnx/numpy_helper.py) on the bits of float32 `x`. */
static uint8_t f8e8m0_from_f32(float x, int saturate, dml_f8_round_t round) {
  uint32_t bits;
  memcpy(&bits, &x, 4);
  uint32_t e = (bits >> 23) & 0xffu;
  if (e == 0xffu) return 0xff; /* NaN, ±inf */
  int up = 0;
  if (round == DML_F8_ROUND_UP) {
    up = (bits & 0x7fffffu) != 0;
  } else if (round == DML_F8_ROUND_NEAREST) {
    int g = (bits & 0x400000u) != 0, r = (bits & 0x200000u) != 0,
        s = (bits & 0x1fffffu) != 0, lsb = e > 0;
    up = g && (r || s || lsb);
  }
  if (saturate && e == 0xfe) up = 0;
  return (uint8_t)(e + (uint32_t)up);
}

/* The pattern of finite |a| (the sign is the caller's), or -1 when |a|
 * rounds beyond the largest finite value. */
static int f8_encode_abs(const f8fmt_t *f, double a) {
  if (a == 0) return 0;
  int m = f->mbits, emin = 1 - f->bias, e;
  (void)frexp(a, &e);
  e -= 1; /* a = 1.x * 2^e */
  if (e < emin) e = emin;
  double n = rint(ldexp(a, m - e)); /* exact scaling; ties to even */
  if (ldexp(n, e - m) > f->max) return -1;
  if (n >= (double)(1u << (m + 1))) { /* rounded up to the next binade */
    n = ldexp(n, -1);
    e++;
  }
  unsigned ni = (unsigned)n;
  if (ni < (1u << m)) return (int)ni; /* subnormal (e == emin) or zero */
  return (int)(((unsigned)(e + f->bias) << m) | (ni - (1u << m)));
}

uint8_t dml_f8_from_f64(dml_dtype_t dt, double v, int saturate, dml_f8_round_t round) {
  if (dt == DML_DTYPE_F8E8M0) return f8e8m0_from_f32((float)v, saturate, round);
  const f8fmt_t *f = f8fmt(dt);
  if (!f) return 0;
  unsigned sign = signbit(v) ? 0x80u : 0u;
  if (isnan(v))
    return f->kind == F8_FNUZ ? 0x80 : (uint8_t)(sign | (f->kind == F8_FN ? 0x7f : 0x7e));
  int p = isinf(v) ? -1 : f8_encode_abs(f, fabs(v));
  if (p < 0) { /* beyond the largest finite value */
    if (saturate)
      p = f8_encode_abs(f, f->max);
    else if (f->kind == F8_IEEE)
      p = 0x7c; /* inf */
    else if (f->kind == F8_FN)
      p = 0x7f; /* NaN */
    else
      return 0x80; /* FNUZ NaN */
  }
  if (p == 0 && f->kind == F8_FNUZ) return 0; /* no -0 */
  return (uint8_t)(sign | (unsigned)p);
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
    case DML_DTYPE_F8E4M3FN:
    case DML_DTYPE_F8E4M3FNUZ:
    case DML_DTYPE_F8E5M2:
    case DML_DTYPE_F8E5M2FNUZ:
    case DML_DTYPE_F8E8M0: return dml_f8_to_f64(dt, ((const uint8_t *)p)[i]);
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
    case DML_DTYPE_F8E4M3FN:
    case DML_DTYPE_F8E4M3FNUZ:
    case DML_DTYPE_F8E5M2:
    case DML_DTYPE_F8E5M2FNUZ:
    case DML_DTYPE_F8E8M0:
      ((uint8_t *)p)[i] = dml_f8_from_f64(dt, v, 1, DML_F8_ROUND_UP);
      return;
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
      if (dml_dtype_is_float(dt) || dml_dtype_is_float8(dt))
        dml_store_f64(dt, p, i, (double)v);
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
    case DML_DTYPE_F8E4M3FN: return 17;
    case DML_DTYPE_F8E4M3FNUZ: return 18;
    case DML_DTYPE_F8E5M2: return 19;
    case DML_DTYPE_F8E5M2FNUZ: return 20;
    case DML_DTYPE_F8E8M0: return 24;
    default: return 0;
  }
}

dml_dtype_t dml_dtype_from_onnx_code(int64_t code) {
  for (int i = 1; i < DML_DTYPE_COUNT_; i++)
    if (code != 0 && dml_dtype_onnx_code((dml_dtype_t)i) == code) return (dml_dtype_t)i;
  return DML_DTYPE_INVALID;
}
