/* gpu_rtdims_cases.h — run-time dims on the GPU backends (tests/vulkan,
 * tests/cuda): packages whose dims follow from shape inputs fed at run time
 * (data-dependent symbols, ir/dml_ir.h), each run on several data sets
 * whose shape values differ (the dims, hence the push constants, the grids
 * and the recorded command buffer or captured CUDA graph change between
 * runs), then on the first again (a cached recording), against the CPU
 * session of the same package: equal dims, values within GPU_TEST_TOL
 * scaled (exact for pure data movement, where the GPU copies the CPU's
 * floats). The forms: views over several data-dependent dims (Reshape,
 * Unsqueeze, Squeeze: copy kernels) and an elementwise chain over them;
 * Expand, Tile, OneHot (depth fed at run time); Split with run-time sizes;
 * Slice with starts/ends/axes/steps fed at run time over a dim of the
 * batch symbol too; Pad with run-time pads in modes constant and reflect;
 * ReduceSum/ReduceMax with axes fed at run time, with and without
 * keepdims, with an epilogue; NonZero, Compress, NonMaxSuppression and
 * Unique, whose kernels count their extents on the device, with consumers
 * of the counted dims (a Reshape, elementwise ops); Resize with scales fed
 * at run time (linear, cubic with exclude_outside and align_corners,
 * nearest with half_pixel_symmetric, cubic asymmetric with an A that is
 * not a float) and with sizes and roi fed at run time (cubic,
 * tf_crop_and_resize extrapolating, nearest floor with
 * pytorch_half_pixel, axes with keep_aspect_ratio_policy not_larger);
 * TopK with k fed at run time; the
 * generators Range (f32, i32, i64 scalars fed at run time, negative
 * deltas, empty results), ConstantOfShape (f32 and i32 values over a shape
 * of three run-time dims, zero dims included: an empty output, no
 * dispatch) and HannWindow/HammingWindow/BlackmanWindow (periodic and
 * symmetric, size fed at run time as i64 or i32), each into an elementwise
 * chain; shape values computed from the inputs by small static nodes the
 * host runs first (dml_pkg_host_value: Cast and Sub before a Range as in
 * HannWindow's expansion, Abs before Pad, Gather before ConstantOfShape).
 * Runtime only: compiling the IR is the caller's. */
#ifndef DML_GPU_RTDIMS_CASES_H_
#define DML_GPU_RTDIMS_CASES_H_

#include "gpu_test_util.h"

#define GPU_RT_MAX_INPUTS 6
#define GPU_RT_MAX_SETS 4

/* One data set: `batch` (the value of symbol batch for f32 inputs whose
 * dims use it) and, per integer input (i64 or i32, by input index), its
 * values; an f32 input listed in gpu_rt_f32_values takes those values,
 * else an f32 scalar (rank 0: Range's start, limit and delta) is
 * ints[i][0] / 64 (exact in f32), other f32 inputs are random. */
typedef struct gpu_rt_set {
  int64_t batch;
  int64_t ints[GPU_RT_MAX_INPUTS][8];
} gpu_rt_set_t;

typedef struct gpu_rt_case {
  const char *what;
  const char *ir;
  uint32_t kernels; /* kernels the scheduler makes */
  int n_sets;
  gpu_rt_set_t sets[GPU_RT_MAX_SETS];
} gpu_rt_case_t;

/* Values of f32 inputs that must not be random (Resize's scales and
 * roi): input `input` of data set `set` of the case named `what`. The
 * other f32 inputs are random in [-2, 2). */
typedef struct gpu_rt_f32s {
  const char *what;
  int set;
  uint32_t input;
  float v[8];
} gpu_rt_f32s_t;

static const gpu_rt_f32s_t gpu_rt_f32_values[] = {
    {"resize, scales fed at run time", 0, 1, {1.0f, 1.0f, 2.0f, 3.0f}},
    {"resize, scales fed at run time", 1, 1, {1.0f, 2.0f, 0.5f, 0.6f}},
    {"resize, scales fed at run time", 2, 1, {2.0f, 1.0f, 1.5f, 0.8f}},
    {"resize, sizes and roi fed at run time",
     0,
     2,
     {0.0f, 0.0f, 0.2f, 0.1f, 1.0f, 1.0f, 0.9f, 1.2f}},
    {"resize, sizes and roi fed at run time",
     1,
     2,
     {0.0f, 0.5f, -0.3f, 0.0f, 1.0f, 0.5f, 0.4f, 0.75f}},
    {"resize, sizes and roi fed at run time",
     2,
     2,
     {0.5f, 0.0f, 0.0f, 0.3f, 0.5f, 1.0f, 1.0f, 0.3f}},
};

static const gpu_rt_case_t gpu_rt_cases[] = {
    {"reshape, exp, unsqueeze",
     "func @forward(%x: f32[2,3,4], %sh: i64[3], %ax: i64[1]) -> (f32[?], f32[?]) {\n"
     "  %r = Reshape(%x, %sh) : f32[?]\n"
     "  %e = Exp(%r) : f32[?]\n"
     "  %u = Unsqueeze(%e, %ax) : f32[?]\n"
     "  return %r, %u\n}\n",
     3,
     3,
     {{0, {{0}, {4, 3, 2}, {0}}},
      {0, {{0}, {2, 12, -1}, {3}}},
      {0, {{0}, {0, 0, 4}, {-1}}}}},
    {"squeeze, slice of a batch",
     "sym batch <= 16\n"
     "func @forward(%x: f32[batch,1,6], %sq: i64[1], %st: i64[2], %en: i64[2], %ax: "
     "i64[2], %sp: i64[2]) -> (f32[?]) {\n"
     "  %q = Squeeze(%x, %sq) : f32[?]\n"
     "  %s = Slice(%q, %st, %en, %ax, %sp) : f32[?]\n"
     "  return %s\n}\n",
     2,
     3,
     {{3, {{0}, {1}, {1, 0}, {5, 100}, {1, 0}, {2, 1}}},
      {5, {{0}, {-2}, {-1, 4}, {-100, -1000}, {0, -1}, {-2, -1}}},
      {1, {{0}, {1}, {INT64_MIN, 2}, {INT64_MAX, 3}, {-1, 0}, {1, 1}}}}},
    {"expand, tile, onehot",
     "global @v : f32[2] = dense<[-1.0, 2.5]>\n"
     "func @forward(%x: f32[3,1], %es: i64[2], %tr: i64[2], %ind: i64[4], %d: i64[]) "
     "-> (f32[?], f32[?], f32[?]) {\n"
     "  %e = Expand(%x, %es) : f32[?]\n"
     "  %t = Tile(%x, %tr) : f32[?]\n"
     "  %o = OneHot(%ind, %d, @v) {axis = 0} : f32[?]\n"
     "  return %e, %t, %o\n}\n",
     3,
     3,
     {{0, {{0}, {3, 5}, {2, 3}, {0, -1, 3, 7}, {4}}},
      {0, {{0}, {1, 1}, {1, 1}, {1, -3, 0, 2}, {3}}},
      {0, {{0}, {3, 4}, {3, 2}, {5, 4, -6, 0}, {6}}}}},
    {"split, pad constant and reflect",
     "global @cv : f32[] = dense<[0.5]>\n"
     "func @forward(%x: f32[6,4], %sp: i64[2], %p: i64[4]) -> (f32[?], f32[?], f32[?], "
     "f32[?]) {\n"
     "  %a, %b = Split(%x, %sp) {axis = 0} : f32[?], f32[?]\n"
     "  %c = Pad(%x, %p, @cv) : f32[?]\n"
     "  %r = Pad(%x, %p) {mode = \"reflect\"} : f32[?]\n"
     "  return %a, %b, %c, %r\n}\n",
     3,
     3,
     {{0, {{0}, {2, 4}, {1, 2, 0, 1}}},
      {0, {{0}, {0, 6}, {0, -1, 3, 0}}},
      {0, {{0}, {5, 1}, {2, 0, -2, 3}}}}},
    {"reductions over axes fed at run time",
     "sym batch <= 16\n"
     "func @forward(%x: f32[batch,4,5], %a: i64[1], %b: i64[2]) -> (f32[?], f32[?]) {\n"
     "  %s = ReduceSum(%x, %a) {keepdims = 1} : f32[?]\n"
     "  %t = Relu(%s) : f32[?]\n"
     "  %m = ReduceMax(%x, %b) {keepdims = 0} : f32[?]\n"
     "  return %t, %m\n}\n",
     2,
     3,
     {{2, {{0}, {1}, {0, 2}}}, {3, {{0}, {-1}, {-1, 1}}}, {1, {{0}, {0}, {1, 0}}}}},
    /* dims counted on the device (docs/kernels.md "Data-dependent output
     * sizes"): NonZero and Compress (axis 0 and flattened, a condition
     * shorter than the axis) store their counts in the dims
     * slot, the backend reads them back between segments, and a Reshape
     * (its dims computed on the host from the counted ones), an Add and an
     * Exp consume them; none selected, all selected */
    {"nonzero, compress and consumers",
     "global @sh : i64[1] = dense<[-1]>\n"
     "func @forward(%x: i64[2,4], %c: i64[5], %f: f32[6,3]) -> (i64[?], i64[?], "
     "f32[?], f32[?]) {\n"
     "  %nz = NonZero(%x) : i64[?]\n"
     "  %r = Reshape(%nz, @sh) : i64[?]\n"
     "  %a = Add(%r, %r) : i64[?]\n"
     "  %cb = Cast(%c) {to = 9} : bool[5]\n"
     "  %y = Compress(%f, %cb) {axis = 0} : f32[?]\n"
     "  %e = Exp(%y) : f32[?]\n"
     "  %z = Compress(%f, %cb) : f32[?]\n"
     "  return %nz, %a, %e, %z\n}\n",
     7,
     4,
     {{0, {{0, 3, 0, -1, 2, 0, 0, 7}, {1, 0, 1, 1, 0}}},
      {0, {{0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}}},
      {0, {{1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 1, 1, 1}}},
      {0, {{0, 0, 0, 0, 0, 0, 0, 9}, {0, 0, 0, 0, 4}}}}},
    /* NonZero and Compress over more elements than the workgroup's 256
     * invocations (shares of several elements, offsets from the shared
     * counts): the zeros of a Relu over a symbolic batch, a condition from
     * a compare, along axis 1 and flattened */
    {"nonzero, compress of many elements",
     "sym batch <= 16\n"
     "global @z : f32[] = dense<[0.0]>\n"
     "func @forward(%x: f32[batch,300], %f: f32[3,700], %c: f32[700]) -> (i64[?], "
     "f32[?], "
     "f32[?]) {\n"
     "  %r = Relu(%x) : f32[batch,300]\n"
     "  %nz = NonZero(%r) : i64[?]\n"
     "  %g = Greater(%c, @z) : bool[700]\n"
     "  %y = Compress(%f, %g) {axis = 1} : f32[?]\n"
     "  %w = Compress(%f, %g) : f32[?]\n"
     "  return %nz, %y, %w\n}\n",
     5,
     3,
     {{1, {{0}}}, {7, {{0}}}, {16, {{0}}}}},
    /* NonMaxSuppression (corner boxes in either order with a score
     * threshold, center boxes without), max_output_boxes_per_class fed at
     * run time (0, 2, more than the boxes, 1), a consumer of the count */
    {"nonmaxsuppression",
     "global @iou : f32[1] = dense<[0.3]>\n"
     "global @thr : f32[1] = dense<[0.0]>\n"
     "func @forward(%b: f32[2,6,4], %s: f32[2,3,6], %m: i64[1]) -> (i64[?], i64[?]) {\n"
     "  %y = NonMaxSuppression(%b, %s, %m, @iou, @thr) : i64[?]\n"
     "  %c = NonMaxSuppression(%b, %s, %m, @iou) {center_point_box = 1} : i64[?]\n"
     "  %a = Add(%y, %y) : i64[?]\n"
     "  return %a, %c\n}\n",
     3,
     4,
     {{0, {{0}, {0}, {0}}},
      {0, {{0}, {0}, {2}}},
      {0, {{0}, {0}, {10}}},
      {0, {{0}, {0}, {1}}}}},
    /* Unique: sorted and not, all four outputs, on i64 elements; sorted
     * along axis 1 of an f32 [2,4] (a Cast of i64 values: duplicate
     * columns); its count consumed by a Neg */
    {"unique",
     "func @forward(%x: i64[8], %m: i64[2,4]) -> (i64[?], i64[?], i64[8], i64[?], "
     "i64[?], "
     "i64[?], i64[8], i64[?], f32[?], i64[4]) {\n"
     "  %y, %i, %v, %c = Unique(%x) : i64[?], i64[?], i64[8], i64[?]\n"
     "  %uy, %ui, %uv, %uc = Unique(%x) {sorted = 0} : i64[?], i64[?], i64[8], i64[?]\n"
     "  %f = Cast(%m) {to = 1} : f32[2,4]\n"
     "  %ay, %ai, %av, %ac = Unique(%f) {axis = 1} : f32[?], i64[?], i64[4], i64[?]\n"
     "  %n = Neg(%ay) : f32[?]\n"
     "  return %y, %i, %v, %c, %uy, %ui, %uv, %uc, %n, %av\n}\n",
     5,
     4,
     {{0, {{3, 1, 3, -2, 1, 0, 3, 7}, {1, 2, 1, 2, 5, 0, 5, 0}}},
      {0, {{4, 4, 4, 4, 4, 4, 4, 4}, {0, 0, 0, 0, 0, 0, 0, 0}}},
      {0, {{8, 7, 6, 5, 4, 3, 2, 1}, {1, 2, 3, 4, 5, 6, 7, 8}}},
      {0, {{-1, 2, -1, 2, 0, 0, 9, -9}, {3, 3, 1, 1, 3, 3, 1, 1}}}}},
    {"resize, scales fed at run time",
     "func @forward(%x: f32[2,3,4,5], %s: f32[4]) -> (f32[?], f32[?], f32[?], f32[?]) {\n"
     "  %a = Resize(%x, _, %s) {mode = \"linear\"} : f32[?]\n"
     "  %b = Resize(%x, _, %s) {mode = \"cubic\", cubic_coeff_a = -0.5, exclude_outside "
     "= "
     "1, coordinate_transformation_mode = \"align_corners\"} : f32[?]\n"
     "  %c = Resize(%x, _, %s) {coordinate_transformation_mode = "
     "\"half_pixel_symmetric\", nearest_mode = \"round_prefer_ceil\"} : f32[?]\n"
     "  %d = Resize(%x, _, %s) {mode = \"cubic\", cubic_coeff_a = -0.3, "
     "coordinate_transformation_mode = \"asymmetric\"} : f32[?]\n"
     "  return %a, %b, %c, %d\n}\n",
     4,
     3,
     {{0, {{0}}}, {0, {{0}}}, {0, {{0}}}}},
    {"resize, sizes and roi fed at run time",
     "func @forward(%x: f32[2,3,4,5], %z: i64[4], %r: f32[8], %a2: i64[2]) -> (f32[?], "
     "f32[?], f32[?], f32[?]) {\n"
     "  %a = Resize(%x, _, _, %z) {mode = \"cubic\"} : f32[?]\n"
     "  %b = Resize(%x, %r, _, %z) {mode = \"linear\", coordinate_transformation_mode = "
     "\"tf_crop_and_resize\", extrapolation_value = 2.5} : f32[?]\n"
     "  %c = Resize(%x, _, _, %z) {coordinate_transformation_mode = "
     "\"pytorch_half_pixel\", nearest_mode = \"floor\"} : f32[?]\n"
     "  %d = Resize(%x, _, _, %a2) {mode = \"linear\", axes = [2, 3], "
     "keep_aspect_ratio_policy = \"not_larger\"} : f32[?]\n"
     "  return %a, %b, %c, %d\n}\n",
     4,
     3,
     {{0, {{0}, {2, 3, 8, 10}, {0}, {6, 20}}},
      {0, {{0}, {1, 3, 3, 7}, {0}, {2, 2}}},
      {0, {{0}, {2, 1, 4, 1}, {0}, {9, 1}}}}},
    {"topk with k fed at run time",
     "sym batch <= 16\n"
     "func @forward(%x: f32[batch,6], %k: i64[1]) -> (f32[?], i64[?]) {\n"
     "  %v, %i = TopK(%x, %k) {axis = 1, largest = 0} : f32[?], i64[?]\n"
     "  return %v, %i\n}\n",
     1,
     3,
     {{3, {{0}, {2}}}, {5, {{0}, {6}}}, {1, {{0}, {1}}}}},
    {"range f32, i32, i64 fed at run time",
     "global @lim : i64[] = dense<[50]>\n"
     "func @forward(%s: f32[], %l: f32[], %d: f32[], %a: i32[], %b: i32[], %c: i64[]) -> "
     "(f32[?], i32[?], i64[?]) {\n"
     "  %r = Range(%s, %l, %d) : f32[?]\n"
     "  %e = Cos(%r) : f32[?]\n"
     "  %k = Range(%b, %a, %a) : i32[?]\n"
     "  %m = Range(%c, @lim, %c) : i64[?]\n"
     "  return %e, %k, %m\n}\n",
     4,
     4,
     {{0, {{32}, {592}, {48}, {-3}, {40}, {7}}},
      {0, {{640}, {-192}, {-32}, {4}, {-9}, {-2}}},
      {0, {{64}, {64}, {128}, {1}, {1}, {1}}},
      {0, {{-128}, {19200}, {8}, {-1}, {3}, {3}}}}},
    {"constantofshape f32 and i32, zero dims",
     "func @forward(%sh: i64[3], %t: i64[2]) -> (f32[?], i32[?]) {\n"
     "  %c = ConstantOfShape(%sh) {value = tensor<f32[1]> dense<[1.5]>} : f32[?]\n"
     "  %e = Mul(%c, %c) : f32[?]\n"
     "  %i = ConstantOfShape(%t) {value = tensor<i32[1]> dense<[-7]>} : i32[?]\n"
     "  return %e, %i\n}\n",
     3,
     3,
     {{0, {{2, 3, 4}, {5, 1}}}, {0, {{3, 0, 2}, {0, 4}}}, {0, {{1, 1, 1}, {17, 33}}}}},
    {"hann, hamming, blackman windows fed at run time",
     "func @forward(%n: i64[], %m: i32[]) -> (f32[?], f32[?], f32[?], f32[?]) {\n"
     "  %h = HannWindow(%n) : f32[?]\n"
     "  %g = HammingWindow(%m) {periodic = 0} : f32[?]\n"
     "  %b = BlackmanWindow(%n) {periodic = 0} : f32[?]\n"
     "  %w = BlackmanWindow(%m) : f32[?]\n"
     "  %s = Exp(%w) : f32[?]\n"
     "  return %h, %g, %b, %s\n}\n",
     5,
     3,
     {{0, {{10}, {7}}}, {0, {{2}, {1000}}}, {0, {{333}, {0}}}}},
    {"shape values the host computes first",
     "global @one : f32[] = dense<[1.0]>\n"
     "global @zero : f32[] = dense<[0.0]>\n"
     "global @tab : i64[4] = dense<[2, 3, 5, 0]>\n"
     "func @forward(%n: i32[], %x: f32[2,3], %p: i64[4], %i: i64[2]) -> (f32[?], f32[?], "
     "i64[?]) {\n"
     "  %nf = Cast(%n) {to = 1} : f32[]\n"
     "  %lim = Sub(%nf, @one) : f32[]\n"
     "  %r = Range(@zero, %lim, @one) : f32[?]\n"
     "  %c = Cos(%r) : f32[?]\n"
     "  %a = Abs(%p) : i64[4]\n"
     "  %y = Pad(%x, %a) : f32[?]\n"
     "  %g = Gather(@tab, %i) : i64[2]\n"
     "  %k = ConstantOfShape(%g) {value = tensor<i64[1]> dense<[9]>} : i64[?]\n"
     "  return %c, %y, %k\n}\n",
     7,
     3,
     {{0, {{12}, {0}, {1, -2, 0, 3}, {0, 1}}},
      {0, {{1}, {0}, {0, 0, 0, 0}, {3, 2}}},
      {0, {{0}, {0}, {-1, -1, -1, -1}, {-2, 1}}}}},
};

#define GPU_RT_N_CASES ((int)(sizeof gpu_rt_cases / sizeof gpu_rt_cases[0]))

/* Binds data set `set` of case `c` to `cpu` and `dev` (sessions of `m`):
 * f32 inputs random in [-2, 2) at the set's batch, integer inputs from the
 * set (their static length, 0-D ones one value). */
static inline void gpu_rt_bind(dml_rt_model_t *m, const gpu_rt_case_t *c, int set,
                               dml_rt_session_t *cpu, dml_rt_session_t *dev) {
  const gpu_rt_set_t *S = &c->sets[set];
  dml_rt_session_clear_inputs(cpu);
  dml_rt_session_clear_inputs(dev);
  for (uint32_t i = 0; i < dml_rt_model_num_inputs(m) && i < GPU_RT_MAX_INPUTS; i++) {
    dml_rt_io_info_t io;
    CHECK_OK(dml_rt_model_input_info(m, i, &io));
    dml_tensor_t t;
    memset(&t, 0, sizeof t);
    t.dtype = io.dtype;
    t.rank = io.rank;
    for (int32_t d = 0; d < io.rank; d++)
      t.dims[d] = io.dim_symbol[d] ? io.dim_multiplier[d] * S->batch : io.dims[d];
    int64_t n = dml_dims_numel(t.dims, t.rank);
    const float *f32v = NULL;
    for (size_t j = 0; j < sizeof gpu_rt_f32_values / sizeof gpu_rt_f32_values[0]; j++)
      if (!strcmp(gpu_rt_f32_values[j].what, c->what) &&
          gpu_rt_f32_values[j].set == set && gpu_rt_f32_values[j].input == i)
        f32v = gpu_rt_f32_values[j].v;
    void *x = malloc((size_t)(n ? n : 1) * 8);
    for (int64_t k = 0; x && k < n; k++) {
      if (io.dtype == DML_DTYPE_I64)
        ((int64_t *)x)[k] = k < 8 ? S->ints[i][k] : 0;
      else if (io.dtype == DML_DTYPE_I32)
        ((int32_t *)x)[k] = k < 8 ? (int32_t)S->ints[i][k] : 0;
      else if (f32v)
        ((float *)x)[k] = k < 8 ? f32v[k] : 0.0f;
      else if (io.rank == 0)
        ((float *)x)[k] = (float)S->ints[i][0] / 64.0f;
      else
        ((float *)x)[k] = 2.0f * gpu_test_frand();
    }
    t.data = x;
    CHECK_OK(dml_rt_session_set_input(cpu, i, &t));
    CHECK_OK(dml_rt_session_set_input(dev, i, &t));
    free(x);
  }
}

/* Case `c` on `cpu` and `dev` (sessions of `m`; nothing when either is
 * NULL): each data set, then the first again, compared with the CPU
 * (gpu_test_max_err within GPU_TEST_TOL: equal dims, values within the
 * tolerance), then the kernel count. */
static inline void gpu_rt_check(const gpu_rt_case_t *c, dml_rt_model_t *m,
                                dml_rt_session_t *cpu, dml_rt_session_t *dev) {
  if (!cpu || !dev) return;
  for (int r = 0; r <= c->n_sets; r++) {
    int set = r % c->n_sets;
    gpu_rt_bind(m, c, set, cpu, dev);
    CHECK_OK(dml_rt_session_run(cpu));
    CHECK_OK(dml_rt_session_run(dev));
    double worst = 0;
    for (uint32_t o = 0; o < dml_rt_model_num_outputs(m); o++) {
      dml_tensor_t a, b;
      memset(&a, 0, sizeof a);
      memset(&b, 0, sizeof b);
      CHECK_OK(dml_rt_session_get_output(dev, o, &a));
      CHECK_OK(dml_rt_session_get_output(cpu, o, &b));
      double e = gpu_test_max_err(&a, &b);
      if (e > GPU_TEST_TOL)
        fprintf(stderr, "  output %u of set %d: error %.3g\n", o, set, e);
      if (e > worst) worst = e;
    }
    printf("%-40s set %d: %u kernels, max scaled error %.2e\n", c->what, set,
           dml_rt_session_num_kernels(dev), worst);
    CHECK(worst <= GPU_TEST_TOL);
  }
  CHECK(dml_rt_session_num_kernels(dev) == c->kernels);
}

#endif /* DML_GPU_RTDIMS_CASES_H_ */
