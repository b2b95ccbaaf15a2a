/* fuzz_serve_json.c — libFuzzer target for dmlc serve's reader of KServe v2
 * inference requests (runtime/serve/dml_serve_json.h; untrusted bytes from
 * the network). The bytes are split into a skeleton and "data" spans; the
 * spans must lie in the body, in order and apart, the skeleton must be the
 * body with each span replaced by 0, and each span is read as FP32, INT8,
 * BOOL and FP64 into a buffer of a few values (the rest only counted). A
 * value read must be finite and, for INT8, in range.
 *
 * The binary tensor data extension's lengths too: the bytes up to a
 * newline within the first 24 are the Inference-Header-Content-Length
 * value and the rest the body; a value accepted must be digits only and
 * within the body; then the JSON part's first bytes pick dtypes, element
 * counts and binary_data_size values (matching, off by one, negative, NaN,
 * huge) taken from the binary part in turn: a take accepted must lie in
 * the region right after the previous one and match numel x size (BOOL
 * bytes 0 or 1); one refused must leave the offset. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dml_serve_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_binary(const uint8_t *data, size_t size) {
  const uint8_t *nl = (const uint8_t *)memchr(data, '\n', size < 24 ? size : 24);
  if (!nl) return;
  char hv[25];
  size_t hn = (size_t)(nl - data);
  memcpy(hv, data, hn);
  hv[hn] = 0;
  const uint8_t *body = nl + 1;
  size_t blen = size - hn - 1, jl = SIZE_MAX;
  if (dml_serve_binary_header_len(hv, blen, &jl)) {
    if (jl != SIZE_MAX) abort(); /* set on success only */
    return;
  }
  /* the value is a C string (MHD's): it ends at a NUL byte */
  size_t hl = strlen(hv);
  if (jl > blen || hl == 0 || strspn(hv, "0123456789") != hl) abort();
  const uint8_t *region = body + jl;
  size_t rlen = blen - jl, off = 0;
  static const dml_dtype_t dts[] = {DML_DTYPE_F32, DML_DTYPE_BOOL, DML_DTYPE_F64,
                                    DML_DTYPE_I16};
  for (size_t i = 0; i + 1 < jl && i < 32; i += 2) {
    dml_dtype_t dt = dts[body[i] & 3];
    size_t es = dml_dtype_size(dt);
    int64_t numel = body[i + 1];
    double declared;
    switch ((body[i] >> 2) % 6) {
      case 0: declared = (double)((size_t)numel * es); break;
      case 1: declared = (double)((size_t)numel * es) + 1; break;
      case 2: declared = -1; break;
      case 3: declared = NAN; break;
      case 4: declared = 1e300; break;
      default: declared = 9007199254740992.0; break;
    }
    size_t before = off, start = SIZE_MAX;
    char msg[256];
    const char *err = dml_serve_binary_take(region, rlen, &off, declared, numel, dt,
                                            &start, msg, sizeof msg);
    if (err) {
      if (off != before || start != SIZE_MAX || !*err) abort();
      continue;
    }
    if (start != before || off - start != (size_t)numel * es || off > rlen ||
        declared != (double)((size_t)numel * es))
      abort();
    if (dt == DML_DTYPE_BOOL)
      for (size_t k = start; k < off; k++)
        if (region[k] > 1) abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_binary(data, size);
  const char *body = (const char *)data;
  dml_serve_json_span_t spans[8];
  size_t ns = 0, skel_len = 0;
  char *skel = NULL;
  if (dml_serve_json_split(body, size, spans, 8, &ns, &skel, &skel_len)) {
    if (skel || ns) abort(); /* failure leaves nothing */
    /* still read the whole input as a data value */
    spans[0].elem = 0, spans[0].start = 0, spans[0].end = size;
    ns = 1;
  } else {
    size_t o = 0, from = 0;
    for (size_t s = 0; s < ns; s++) {
      if (spans[s].start < from || spans[s].end <= spans[s].start || spans[s].end > size)
        abort();
      size_t keep = spans[s].start - from;
      if (o + keep + 1 > skel_len || memcmp(skel + o, body + from, keep) ||
          skel[o + keep] != '0')
        abort();
      o += keep + 1;
      from = spans[s].end;
    }
    if (o + size - from != skel_len || memcmp(skel + o, body + from, size - from) ||
        skel[skel_len] != 0)
      abort();
  }
  static const dml_dtype_t dts[] = {DML_DTYPE_F32, DML_DTYPE_I8, DML_DTYPE_BOOL,
                                    DML_DTYPE_F64};
  for (size_t s = 0; s < ns; s++)
    for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
      double buf[4] = {0};
      int64_t count = 0;
      size_t err_at = 0;
      static const int64_t dims[3] = {2, 2, 1}; /* flat, or nested [[a,b],[c,d]] */
      const char *err =
          dml_serve_json_read_data(body + spans[s].start, spans[s].end - spans[s].start,
                                   dts[k], buf, 4, &count, dims, (int)(k % 3), &err_at);
      if (err && err_at != SIZE_MAX && err_at > spans[s].end - spans[s].start) abort();
      if (err || count < 0) continue;
      for (int64_t i = 0; i < count && i < 4; i++) {
        double v = dml_load_f64(dts[k], buf, (size_t)i);
        if (!isfinite(v)) abort();
        if (dts[k] == DML_DTYPE_I8 && (v < -128 || v > 127)) abort();
        if (dts[k] == DML_DTYPE_BOOL && v != 0 && v != 1) abort();
      }
    }
  free(skel);
  return 0;
}
