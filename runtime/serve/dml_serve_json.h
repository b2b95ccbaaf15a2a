/* dml_serve_json.h — reading the tensors of a KServe v2 inference request
 * (docs/serving.md) without a JSON tree of its data.
 *
 * A JSON tree of a request's "data" arrays costs ~40 bytes per body byte
 * (cJSON: a 64-byte item per number). dml_serve_json_split copies the
 * request into a skeleton where each input's "data" value is replaced by 0
 * (small: it is parsed into a tree) and gives where each data value lies
 * in the body; dml_serve_json_read_data then reads one data value's
 * numbers straight into the tensor buffer. Peak memory: the body, the
 * skeleton and the tensors. Bounds-checked on every byte; no allocation
 * but the skeleton. */
#ifndef DML_SERVE_JSON_H
#define DML_SERVE_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "dml_dtype.h"

/* Where the "data" value of the inputs array's element `elem` lies in the
 * body: bytes [start, end). */
typedef struct {
  size_t elem, start, end;
} dml_serve_json_span_t;

/* Splits body[0, n) when it is {..., "inputs": [{..., "data": V, ...},
 * ...], ...} (whitespace anywhere, keys in any order): *skeleton (malloc'd,
 * NUL-terminated, *skel_len bytes; the caller frees it) is the body with
 * every such V replaced by `0` and spans[0, *n_spans) where each V was, in
 * body order. Returns 0, or -1 when the body is not of that form, is
 * malformed, nests deeper than 64 levels, has more than max_spans data
 * values, or memory runs out (then *skeleton is NULL and the caller reads
 * the whole body another way, which reports what is wrong). */
int dml_serve_json_split(const char *body, size_t n, dml_serve_json_span_t *spans,
                         size_t max_spans, size_t *n_spans, char **skeleton,
                         size_t *skel_len);

/* Reads the JSON value p[0, n) (numbers, true/false for BOOL, or arrays of
 * them; JSON's number grammar, RFC 8259 6) into dst as dtype dt, row-major:
 * the first `cap` values are stored (dml_store_f64 / dml_store_i64), all
 * are counted in *count. The value is the tensor of shape dims[0, rank)
 * either flat (one array of values; or a bare value for rank 0) or nested
 * as the shape (KServe v2): every value at depth `rank`, and each array at
 * depth d (1-based) holding dims[d-1] elements; values at other depths,
 * or arrays of other lengths, are refused (so [[392 values], [392
 * values]] is not a [1,784] tensor). The caller checks *count against the
 * shape's element count. Values are checked as dml_serve_json_check_value
 * does. Returns NULL, or the message of the first bad value or structure;
 * *err_at is then the offset in p of the malformed byte, or SIZE_MAX when
 * the JSON is well formed but a value or the nesting is wrong. */
const char *dml_serve_json_read_data(const char *p, size_t n, dml_dtype_t dt, void *dst,
                                     int64_t cap, int64_t *count, const int64_t *dims,
                                     int rank, size_t *err_at);

/* Whether the JSON number (or boolean, is_bool) v can be an element of a
 * tensor of dtype dt: booleans only in BOOL; floats finite in dt (below
 * the value halfway between the largest finite one and the next power of
 * two, where round-to-nearest goes to inf, IEEE 754-2019 4.3.1: f16 65520,
 * bf16 (2 - 2^-8)*2^127, f32 (2 - 2^-24)*2^127); integers integral and in
 * dt's range. NULL, or the message. */
const char *dml_serve_json_check_value(dml_dtype_t dt, double v, int is_bool);

/* ---- the binary tensor data extension (KServe v2 / Triton) ----------
 * A request with the header "Inference-Header-Content-Length: J" is J
 * bytes of JSON followed by the raw bytes of the inputs whose
 * "parameters" say {"binary_data_size": N}, in the order of the "inputs"
 * array: each N bytes, row-major, little-endian, BOOL one byte (0 or 1)
 * per value. */

/* Reads the header's value: decimal digits only (no sign, no space, at most
 * 19), at most body_len. Sets *out_json_len and returns NULL, or returns
 * the message. */
const char *dml_serve_binary_header_len(const char *value, size_t body_len,
                                        size_t *out_json_len);

/* Takes the next input's binary data: `declared` (binary_data_size, as
 * read from JSON: integral, >= 0) must equal numel x dml_dtype_size(dt) and
 * fit in region[*offset, region_len). Sets *out_start to its offset in the
 * region, advances *offset and returns NULL; else returns the message
 * (written into msg[0, cap)), *offset unchanged. BOOL bytes must be 0 or
 * 1. numel >= 0. */
const char *dml_serve_binary_take(const unsigned char *region, size_t region_len,
                                  size_t *offset, double declared, int64_t numel,
                                  dml_dtype_t dt, size_t *out_start, char *msg,
                                  size_t cap);

#endif
