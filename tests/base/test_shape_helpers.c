/*
 * test_shape_helpers.c — the shape formulas of runtime/base/dml_shape.h
 * that ir/infer.c (compile time) and runtime/cpu/cpu_outdims.c (run time)
 * share: Pad, Tile, broadcasting (Expand), Reshape and Resize, on their
 * edges (zero dims, -1 and 0 with and without allowzero, negative pads,
 * int64 overflow, Resize's rounding). Expected values are exact (integer
 * extents); the Reshape and Resize ones were checked against ONNX 1.23's
 * reference implementation (onnx.reference, opset 19): Reshape [2,3,4] by
 * [0,-1] is [2,12]; [0,3] by [3,0] with allowzero is [3,0]; [0,3] by
 * [0,-1] and [2,3] by [6,0] are errors; Resize [4,6] to sizes [3,3] is
 * [2,3] (not_larger) and [4,6] (not_smaller), [3,7] to [5,5] is [2,5] and
 * [5,12], [2,3] to [3,4] not_smaller is [3,5] (4.5 rounds half up), scales
 * 0.5 and 1.5 of [5,3] give [2,4] (floor), 0.3 of 7 gives 2.
 */
#include <stdint.h>

#include "dml_shape.h"
#include "dml_test.h"

static void test_pad(void) {
  int64_t o = -7;
  CHECK(dml_shape_pad_extent(5, 1, 2, &o) == DML_SHAPE_OK && o == 8);
  CHECK(dml_shape_pad_extent(5, -2, -3, &o) == DML_SHAPE_OK && o == 0); /* all removed */
  CHECK(dml_shape_pad_extent(0, 0, 0, &o) == DML_SHAPE_OK && o == 0);
  CHECK(dml_shape_pad_extent(0, 3, 0, &o) == DML_SHAPE_OK && o == 3);
  o = -7;
  CHECK(dml_shape_pad_extent(5, -3, -3, &o) == DML_SHAPE_NEGATIVE && o == -7);
  CHECK(dml_shape_pad_extent(INT64_MAX, 1, 0, &o) == DML_SHAPE_OVERFLOW);
  CHECK(dml_shape_pad_extent(INT64_MAX - 1, 1, 0, &o) == DML_SHAPE_OK && o == INT64_MAX);
  /* exact: a begin pad past INT64_MAX that the end pad takes back is fine */
  CHECK(dml_shape_pad_extent(10, INT64_MAX, -INT64_MAX, &o) == DML_SHAPE_OK && o == 10);
  CHECK(dml_shape_pad_extent(10, INT64_MIN, INT64_MAX, &o) == DML_SHAPE_OK && o == 9);
  CHECK(dml_shape_pad_extent(0, INT64_MIN, INT64_MIN, &o) == DML_SHAPE_NEGATIVE);
}

static void test_tile(void) {
  int64_t o = -7;
  CHECK(dml_shape_tile_extent(3, 4, &o) == DML_SHAPE_OK && o == 12);
  CHECK(dml_shape_tile_extent(3, 0, &o) == DML_SHAPE_OK && o == 0);
  CHECK(dml_shape_tile_extent(0, 5, &o) == DML_SHAPE_OK && o == 0);
  CHECK(dml_shape_tile_extent(3, -1, &o) == DML_SHAPE_BAD_VALUE);
  CHECK(dml_shape_tile_extent(INT64_MAX / 2 + 1, 2, &o) == DML_SHAPE_OVERFLOW);
  CHECK(dml_shape_tile_extent(INT64_MAX, 1, &o) == DML_SHAPE_OK && o == INT64_MAX);
}

static void test_broadcast(void) {
  int64_t o = -7;
  CHECK(dml_shape_broadcast_extent(3, 3, &o) == DML_SHAPE_OK && o == 3);
  CHECK(dml_shape_broadcast_extent(1, 5, &o) == DML_SHAPE_OK && o == 5);
  CHECK(dml_shape_broadcast_extent(5, 1, &o) == DML_SHAPE_OK && o == 5);
  CHECK(dml_shape_broadcast_extent(1, 0, &o) == DML_SHAPE_OK && o == 0); /* empty */
  CHECK(dml_shape_broadcast_extent(0, 1, &o) == DML_SHAPE_OK && o == 0);
  CHECK(dml_shape_broadcast_extent(0, 0, &o) == DML_SHAPE_OK && o == 0);
  CHECK(dml_shape_broadcast_extent(0, 3, &o) == DML_SHAPE_BAD_VALUE);
  CHECK(dml_shape_broadcast_extent(2, 3, &o) == DML_SHAPE_BAD_VALUE);
}

/* The RNNs' directions (shape inference's and the eager rule's). */
static void test_rnn_directions(void) {
  CHECK(dml_shape_rnn_directions("forward") == 1);
  CHECK(dml_shape_rnn_directions("reverse") == 1);
  CHECK(dml_shape_rnn_directions("bidirectional") == 2);
  CHECK(dml_shape_rnn_directions("Forward") == 0);
  CHECK(dml_shape_rnn_directions("") == 0);
  CHECK(dml_shape_rnn_directions(NULL) == 0);
}

#define RESHAPE(in, shape, allowzero, out, bad)                       \
  dml_shape_reshape(in, (int32_t)(sizeof(in) / sizeof(in[0])), shape, \
                    (int32_t)(sizeof(shape) / sizeof(shape[0])), allowzero, out, &bad)

static void test_reshape(void) {
  int64_t o[8] = {0};
  int32_t bad = 99;
  /* entries */
  CHECK(dml_shape_reshape_entry(-1, 0, 2, 0) == DML_SHAPE_RESHAPE_INFER);
  CHECK(dml_shape_reshape_entry(-2, 0, 2, 0) == DML_SHAPE_RESHAPE_NEGATIVE);
  CHECK(dml_shape_reshape_entry(INT64_MIN, 0, 2, 1) == DML_SHAPE_RESHAPE_NEGATIVE);
  CHECK(dml_shape_reshape_entry(0, 1, 2, 0) == DML_SHAPE_RESHAPE_COPY);
  CHECK(dml_shape_reshape_entry(0, 2, 2, 0) == DML_SHAPE_RESHAPE_NO_DIM);
  CHECK(dml_shape_reshape_entry(0, 2, 2, 1) == DML_SHAPE_RESHAPE_DIM);
  CHECK(dml_shape_reshape_entry(7, 5, 2, 0) == DML_SHAPE_RESHAPE_DIM);
  /* [2,3,4] by [0,-1] -> [2,12] */
  {
    int64_t in[] = {2, 3, 4}, s[] = {0, -1};
    CHECK(RESHAPE(in, s, 0, o, bad) == DML_SHAPE_OK && o[0] == 2 && o[1] == 12);
    CHECK(bad == -1);
  }
  /* [0,3] by [3,0] allowzero -> [3,0]; without allowzero 0 copies 3: 9 != 0 */
  {
    int64_t in[] = {0, 3}, s[] = {3, 0};
    CHECK(RESHAPE(in, s, 1, o, bad) == DML_SHAPE_OK && o[0] == 3 && o[1] == 0);
    CHECK(RESHAPE(in, s, 0, o, bad) == DML_SHAPE_RESHAPE_MISMATCH);
  }
  /* [0,3] by [0,-1]: the -1 is ambiguous (the others make 0) */
  {
    int64_t in[] = {0, 3}, s[] = {0, -1};
    CHECK(RESHAPE(in, s, 0, o, bad) == DML_SHAPE_RESHAPE_INFER_ZERO && bad == 1);
  }
  /* [0,3] by [-1] -> [0]; by [-1,0] with allowzero: ambiguous */
  {
    int64_t in[] = {0, 3}, s1[] = {-1}, s2[] = {-1, 0};
    CHECK(RESHAPE(in, s1, 0, o, bad) == DML_SHAPE_OK && o[0] == 0);
    CHECK(RESHAPE(in, s2, 1, o, bad) == DML_SHAPE_RESHAPE_INFER_ZERO && bad == 0);
  }
  /* [2,3] by [6,0]: 0 copies 3, 18 != 6 */
  {
    int64_t in[] = {2, 3}, s[] = {6, 0};
    CHECK(RESHAPE(in, s, 0, o, bad) == DML_SHAPE_RESHAPE_MISMATCH);
  }
  /* two -1, a negative entry, a 0 past the input's rank, not divisible */
  {
    int64_t in[] = {2, 3}, s1[] = {-1, -1}, s2[] = {6, -3}, s3[] = {6, 1, 0},
            s4[] = {4, -1};
    CHECK(RESHAPE(in, s1, 0, o, bad) == DML_SHAPE_RESHAPE_TWO_INFER && bad == 1);
    CHECK(RESHAPE(in, s2, 0, o, bad) == DML_SHAPE_RESHAPE_BAD_ENTRY && bad == 1);
    CHECK(RESHAPE(in, s3, 0, o, bad) == DML_SHAPE_RESHAPE_BAD_ENTRY && bad == 2);
    CHECK(RESHAPE(in, s3, 1, o, bad) == DML_SHAPE_RESHAPE_MISMATCH); /* 0 != 6 */
    CHECK(RESHAPE(in, s4, 0, o, bad) == DML_SHAPE_RESHAPE_INDIVISIBLE && bad == 1);
  }
  /* rank 0: a scalar reshapes to [] and [1] and [-1] */
  {
    int64_t in[1] = {1}, s[] = {-1};
    CHECK(dml_shape_reshape(in, 0, s, 0, 0, o, &bad) == DML_SHAPE_OK);
    CHECK(dml_shape_reshape(in, 0, s, 1, 0, o, &bad) == DML_SHAPE_OK && o[0] == 1);
  }
  /* overflow of the known product */
  {
    int64_t in[] = {2}, s[] = {INT64_MAX, 2, -1};
    CHECK(RESHAPE(in, s, 0, o, bad) == DML_SHAPE_OVERFLOW && bad == 1);
  }
}

static void test_resize(void) {
  int64_t o = -7;
  CHECK(dml_shape_resize_scaled(5, 0.5, &o) == DML_SHAPE_OK && o == 2);
  CHECK(dml_shape_resize_scaled(3, 1.5, &o) == DML_SHAPE_OK && o == 4);
  CHECK(dml_shape_resize_scaled(7, 0.3, &o) == DML_SHAPE_OK && o == 2);
  CHECK(dml_shape_resize_scaled(0, 2.0, &o) == DML_SHAPE_OK && o == 0);
  CHECK(dml_shape_resize_scaled(1, 1e-30, &o) == DML_SHAPE_OK && o == 0);
  CHECK(dml_shape_resize_scaled(5, 0.0, &o) == DML_SHAPE_BAD_VALUE);
  CHECK(dml_shape_resize_scaled(5, -1.0, &o) == DML_SHAPE_BAD_VALUE);
  CHECK(dml_shape_resize_scaled(5, NAN, &o) == DML_SHAPE_BAD_VALUE);
  CHECK(dml_shape_resize_scaled(5, INFINITY, &o) == DML_SHAPE_BAD_VALUE);
  CHECK(dml_shape_resize_scaled(INT64_MAX / 2, 4.0, &o) == DML_SHAPE_OVERFLOW);
  /* keep_aspect_ratio_policy */
  {
    int64_t in[] = {4, 6}, sz[] = {3, 3};
    double s = dml_shape_resize_aspect_scale(in, sz, 2, 0);
    CHECK(s == 0.5);
    CHECK(dml_shape_resize_aspect_extent(4, s) == 2 &&
          dml_shape_resize_aspect_extent(6, s) == 3);
    s = dml_shape_resize_aspect_scale(in, sz, 2, 1);
    CHECK(s == 0.75);
    CHECK(dml_shape_resize_aspect_extent(4, s) == 3 &&
          dml_shape_resize_aspect_extent(6, s) == 5);
  }
  {
    int64_t in[] = {3, 7}, sz[] = {5, 5};
    double s = dml_shape_resize_aspect_scale(in, sz, 2, 0);
    CHECK(dml_shape_resize_aspect_extent(3, s) == 2 &&
          dml_shape_resize_aspect_extent(7, s) == 5);
    s = dml_shape_resize_aspect_scale(in, sz, 2, 1);
    CHECK(dml_shape_resize_aspect_extent(3, s) == 5 &&
          dml_shape_resize_aspect_extent(7, s) == 12);
  }
  {
    int64_t in[] = {2, 3}, sz[] = {3, 4};
    double s = dml_shape_resize_aspect_scale(in, sz, 2, 1); /* 1.5: 3 * 1.5 = 4.5 -> 5 */
    CHECK(dml_shape_resize_aspect_extent(2, s) == 3 &&
          dml_shape_resize_aspect_extent(3, s) == 5);
  }
}

int main(void) {
  RUN(test_pad);
  RUN(test_tile);
  RUN(test_broadcast);
  RUN(test_rnn_directions);
  RUN(test_reshape);
  RUN(test_resize);
  return dml_test_finish();
}
