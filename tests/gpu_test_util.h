/* gpu_test_util.h — the harness the GPU backend tests share (tests/vulkan,
 * tests/cuda): seeded random values, the IR text of every kernel form the
 * scheduler emits, a GPU session compared with the CPU session of the same
 * model on random inputs, and the reference models' saved input/output pairs.
 * Runtime only (test_cuda links dml_runtime alone): compiling is the
 * caller's (cg_package, cg_compile_model in tests/codegen/codegen_test_util.h).
 * Tolerance: |gpu - cpu| <= GPU_TEST_TOL * max(1, |cpu|) (f32 sums in another
 * order, and the GPU's exp/tanh/log). */
#ifndef DML_GPU_TEST_UTIL_H_
#define DML_GPU_TEST_UTIL_H_

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_npy.h"
#include "dml_rt.h"
#include "dml_test.h"

#define GPU_TEST_TOL 1e-4
#define GPU_TEST_HALF_GEMM_KERNELS 8
/* gpu_test_half_err's bound for GEMMs of f16/bf16 operands: one rounding
 * step of the dtype. */
#define GPU_TEST_HALF_ULPS 1.0

/* xorshift64 state of gpu_test_frand; gpu_test_seed sets it. */
static uint64_t gpu_test_rng_ = 0x243F6A8885A308D3ull;

/* Restarts the sequence of gpu_test_frand at `seed` (nonzero). */
static inline void gpu_test_seed(uint64_t seed) {
  gpu_test_rng_ = seed;
}

/* A uniform random value in [-1, 1) (xorshift64, 53 bits). */
static inline float gpu_test_frand(void) {
  gpu_test_rng_ ^= gpu_test_rng_ << 13, gpu_test_rng_ ^= gpu_test_rng_ >> 7,
      gpu_test_rng_ ^= gpu_test_rng_ << 17;
  return (float)((double)(gpu_test_rng_ >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

/* "dense<[v, v, ...]>" with n random values in [lo, lo + 2*scale); the
 * caller free()s. */
static inline char *gpu_test_dense(int n, double scale, double lo) {
  char *b = (char *)malloc((size_t)n * 24 + 16);
  size_t k = (size_t)sprintf(b, "dense<[");
  for (int i = 0; i < n; i++)
    k += (size_t)sprintf(b + k, "%s%.6f", i ? ", " : "",
                         lo + scale * (gpu_test_frand() + 1.0));
  sprintf(b + k, "]>");
  return b;
}

/* "dense<[v, v, ...]>" with n random integers in [lo, hi] (exact in f16 and
 * bf16 for |v| <= 256); the caller free()s. */
static inline char *gpu_test_dense_int(int n, int lo, int hi) {
  char *b = (char *)malloc((size_t)n * 8 + 16);
  size_t k = (size_t)sprintf(b, "dense<[");
  for (int i = 0; i < n; i++) {
    int v = lo + (int)floor(((double)gpu_test_frand() + 1.0) * 0.5 * (hi - lo + 1));
    k += (size_t)sprintf(b + k, "%s%d.0", i ? ", " : "", v > hi ? hi : v);
  }
  sprintf(b + k, "]>");
  return b;
}

/* The largest |a - b| / max(1, |b|) over two f32 tensors, and that times
 * 1e8 over two f64 tensors (so GPU_TEST_TOL, 1e-4, means 1e-12 for f64:
 * double arithmetic, and exp/log in double); for tensors of the integer
 * dtypes, bool, f16 and bf16 0 when they are equal bit for bit (the GPU
 * kernels round f16/bf16 results to nearest even as the CPU does); 1e9
 * when their dtypes or shapes differ, an f32/f64 value is NaN in one
 * tensor only (NaN in both counts as equal: ONNX's NaN propagation) or an
 * integer, bool, f16 or bf16 element differs. */
static inline double gpu_test_max_err(const dml_tensor_t *a, const dml_tensor_t *b) {
  if (a->rank != b->rank || a->dtype != b->dtype) return 1e9;
  for (int32_t d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d]) return 1e9;
  int64_t n = dml_dims_numel(a->dims, a->rank);
  int f64 = a->dtype == DML_DTYPE_F64;
  if (a->dtype != DML_DTYPE_F32 && !f64) {
    if (a->dtype <= DML_DTYPE_INVALID || a->dtype >= DML_DTYPE_COUNT_) return 1e9;
    return memcmp(a->data, b->data, (size_t)n * dml_dtype_size(a->dtype)) ? 1e9 : 0;
  }
  double worst = 0;
  for (int64_t i = 0; i < n; i++) {
    double x = f64 ? ((const double *)a->data)[i] : ((const float *)a->data)[i];
    double y = f64 ? ((const double *)b->data)[i] : ((const float *)b->data)[i];
    double e =
        (x == y || (isnan(x) && isnan(y)) ? 0.0 : fabs(x - y) / fmax(1.0, fabs(y))) *
        (f64 ? 1e8 : 1.0);
    if (!(e <= worst)) worst = isnan(e) ? 1e9 : e;
  }
  return worst;
}

/* max |a - b| / max(1, max |b|) over two f32 tensors (a norm-wise error,
 * for TF32 results); 1e9 when their dtypes or shapes differ or a value is
 * NaN; for two i64, i32 or bool tensors, gpu_test_max_err (exact). */
static inline double gpu_test_normwise_err(const dml_tensor_t *a, const dml_tensor_t *b) {
  if (a->dtype != DML_DTYPE_F32 && a->dtype == b->dtype) return gpu_test_max_err(a, b);
  if (a->rank != b->rank || a->dtype != DML_DTYPE_F32 || b->dtype != DML_DTYPE_F32)
    return 1e9;
  for (int32_t d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d]) return 1e9;
  int64_t n = dml_dims_numel(a->dims, a->rank);
  double diff = 0, scale = 1;
  for (int64_t i = 0; i < n; i++) {
    double x = ((const float *)a->data)[i], y = ((const float *)b->data)[i];
    if (!(fabs(x - y) <= diff)) diff = isnan(x - y) ? 1e18 : fabs(x - y);
    if (fabs(y) > scale) scale = fabs(y);
  }
  return diff / scale > 1e9 ? 1e9 : diff / scale;
}

/* For two f16 or bf16 tensors: the largest |a - b| / max(1, |b|) in units
 * of the dtype's relative rounding step (2^-10 for f16, 2^-7 for bf16), so
 * 1.0 is one unit in the last place of a value in [1, 2) (a GEMM whose f32
 * sum lands on the other side of a rounding boundary than the CPU's double
 * sum); 1e9 when their dtypes or shapes differ or a value is NaN. Other
 * dtypes: gpu_test_max_err. */
static inline double gpu_test_half_err(const dml_tensor_t *a, const dml_tensor_t *b) {
  if (a->dtype != b->dtype || (a->dtype != DML_DTYPE_F16 && a->dtype != DML_DTYPE_BF16))
    return gpu_test_max_err(a, b);
  if (a->rank != b->rank) return 1e9;
  for (int32_t d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d]) return 1e9;
  int64_t n = dml_dims_numel(a->dims, a->rank);
  int f16 = a->dtype == DML_DTYPE_F16;
  double step = f16 ? 1.0 / 1024.0 : 1.0 / 128.0, worst = 0;
  for (int64_t i = 0; i < n; i++) {
    uint16_t ha = ((const uint16_t *)a->data)[i], hb = ((const uint16_t *)b->data)[i];
    double x = f16 ? dml_f16_to_f32(ha) : dml_bf16_to_f32(ha);
    double y = f16 ? dml_f16_to_f32(hb) : dml_bf16_to_f32(hb);
    double e = x == y ? 0.0 : fabs(x - y) / fmax(1.0, fabs(y)) / step;
    if (!(e <= worst)) worst = isnan(e) ? 1e9 : e;
  }
  return worst;
}

/* Creates the "cpu" session `*cpu` and the `device` session `*dev` on `m`
 * (nothing when `m` is NULL); a failure is a failed CHECK and leaves NULL. */
static inline void gpu_test_open(dml_rt_model_t *m, const char *device,
                                 dml_rt_session_t **cpu, dml_rt_session_t **dev) {
  *cpu = *dev = NULL;
  if (m) CHECK_OK(dml_rt_session_create(m, "cpu", cpu));
  if (m) CHECK_OK(dml_rt_session_create(m, device, dev));
}

/* Releases what gpu_test_open made and the model. */
static inline void gpu_test_close(dml_rt_model_t *m, dml_rt_session_t *cpu,
                                  dml_rt_session_t *dev) {
  dml_rt_session_release(cpu);
  dml_rt_session_release(dev);
  dml_rt_model_release(m);
}

/* Runs `cpu` and `dev` (sessions of `m`) at symbol value `batch` on the same
 * random inputs (f32, f64, f16 and bf16 in [-2, 2), the last two rounded;
 * i64 and i32 in [-5, 5], so zeros and ties occur; i16 that times 3000,
 * u16 and u8 its 16/8-bit wrap, u32 and u64 its 32/64-bit wrap (0..5 and
 * the largest values); bool 0/1) and returns the largest error of `dev`'s
 * outputs against `cpu`'s: scaled per element (gpu_test_max_err) when
 * `normwise` is 0, norm-wise (gpu_test_normwise_err) when 1, f16/bf16 in
 * units of their rounding step (gpu_test_half_err) when 2; prints each
 * output above `tol`. */
static inline double gpu_test_compare_with(dml_rt_model_t *m, dml_rt_session_t *cpu,
                                           dml_rt_session_t *dev, int64_t batch,
                                           int normwise, double tol) {
  dml_rt_session_clear_inputs(cpu);
  dml_rt_session_clear_inputs(dev);
  for (uint32_t i = 0; i < dml_rt_model_num_inputs(m); i++) {
    dml_rt_io_info_t io;
    CHECK_OK(dml_rt_model_input_info(m, i, &io));
    dml_tensor_t t;
    memset(&t, 0, sizeof t);
    t.dtype = io.dtype;
    t.rank = io.rank;
    for (int32_t d = 0; d < io.rank; d++)
      t.dims[d] = io.dim_symbol[d] ? io.dim_multiplier[d] * batch : io.dims[d];
    int64_t n = dml_dims_numel(t.dims, t.rank);
    void *x = malloc((size_t)(n ? n : 1) * 8);
    for (int64_t k = 0; x && k < n; k++) {
      float r = gpu_test_frand();
      int64_t v = (int64_t)floor(5.5 * ((double)r + 1.0)) - 5;
      if (io.dtype == DML_DTYPE_I64)
        ((int64_t *)x)[k] = v;
      else if (io.dtype == DML_DTYPE_I32)
        ((int32_t *)x)[k] = (int32_t)v;
      else if (io.dtype == DML_DTYPE_BOOL)
        ((uint8_t *)x)[k] = r > 0;
      else if (io.dtype == DML_DTYPE_U8) /* 0..5 and 251..255 */
        ((uint8_t *)x)[k] = (uint8_t)v;
      else if (io.dtype == DML_DTYPE_I8)
        ((int8_t *)x)[k] = (int8_t)(v * 25);
      else if (io.dtype == DML_DTYPE_I16)
        ((int16_t *)x)[k] = (int16_t)(v * 3000);
      else if (io.dtype == DML_DTYPE_U16)
        ((uint16_t *)x)[k] = (uint16_t)v;
      else if (io.dtype == DML_DTYPE_U32)
        ((uint32_t *)x)[k] = (uint32_t)v;
      else if (io.dtype == DML_DTYPE_U64)
        ((uint64_t *)x)[k] = (uint64_t)v;
      else if (io.dtype == DML_DTYPE_F64)
        ((double *)x)[k] = 2.0 * (double)r + (double)gpu_test_frand() * 1e-9;
      else if (io.dtype == DML_DTYPE_F16)
        ((uint16_t *)x)[k] = dml_f32_to_f16(2.0f * r);
      else if (io.dtype == DML_DTYPE_BF16)
        ((uint16_t *)x)[k] = dml_f32_to_bf16(2.0f * r);
      else
        ((float *)x)[k] = 2.0f * r;
    }
    t.data = x;
    CHECK_OK(dml_rt_session_set_input(cpu, i, &t));
    CHECK_OK(dml_rt_session_set_input(dev, i, &t));
    free(x);
  }
  CHECK_OK(dml_rt_session_run(cpu));
  CHECK_OK(dml_rt_session_run(dev));
  double worst = 0;
  for (uint32_t o = 0; o < dml_rt_model_num_outputs(m); o++) {
    dml_tensor_t a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    CHECK_OK(dml_rt_session_get_output(dev, o, &a));
    CHECK_OK(dml_rt_session_get_output(cpu, o, &b));
    double e = normwise == 2 ? gpu_test_half_err(&a, &b)
               : normwise    ? gpu_test_normwise_err(&a, &b)
                             : gpu_test_max_err(&a, &b);
    if (e > tol)
      fprintf(stderr, "  output %u at batch %lld: error %.3g\n", o, (long long)batch, e);
    if (e > worst) worst = e;
  }
  return worst;
}

/* gpu_test_compare_with, scaled per element, printing above GPU_TEST_TOL. */
static inline double gpu_test_compare_at(dml_rt_model_t *m, dml_rt_session_t *cpu,
                                         dml_rt_session_t *dev, int64_t batch) {
  return gpu_test_compare_with(m, cpu, dev, batch, 0, GPU_TEST_TOL);
}

/* One kernel form (`what`) on `cpu` and `dev`, sessions of `m` (nothing
 * when either is NULL): gpu_test_compare_at within GPU_TEST_TOL at each of
 * the `nb` batches, then `want_kernels` kernels on `dev`, each reported with
 * a name, >= 1 node, flops >= 0, bytes > 0 and, when `timed`, ms >= 0. */
static inline void gpu_test_check_form(const char *what, dml_rt_model_t *m,
                                       dml_rt_session_t *cpu, dml_rt_session_t *dev,
                                       const int64_t *batches, int nb,
                                       uint32_t want_kernels, int timed) {
  if (!cpu || !dev) return;
  for (int i = 0; i < nb; i++) {
    double e = gpu_test_compare_at(m, cpu, dev, batches[i]);
    printf("%-40s batch %3lld: %u kernels, max scaled error %.2e\n", what,
           (long long)batches[i], dml_rt_session_num_kernels(dev), e);
    CHECK(e <= GPU_TEST_TOL);
  }
  CHECK(dml_rt_session_num_kernels(dev) == want_kernels);
  for (uint32_t k = 0; k < dml_rt_session_num_kernels(dev); k++) {
    dml_rt_kernel_info_t ki;
    CHECK_OK(dml_rt_session_kernel_info(dev, k, &ki));
    CHECK(ki.name && ki.n_nodes >= 1 && ki.flops >= 0 && ki.bytes > 0);
    if (timed) CHECK(ki.ms >= 0);
  }
}

/* The reference model `name` (sessions `cpu` and `dev`; nothing when either
 * is NULL) on its saved pairs models_dir/<name>_io/{input,output}_<i>.npy,
 * i < n_pairs: `dev` runs `dev_runs` times on each input (a second run
 * replays a captured graph), then its output is checked against the saved
 * one and the CPU's within GPU_TEST_TOL. `label` names the package. */
static inline void gpu_test_check_saved(const char *label, const char *models_dir,
                                        const char *name, int n_pairs,
                                        dml_rt_session_t *cpu, dml_rt_session_t *dev,
                                        int dev_runs) {
  for (int i = 0; cpu && dev && i < n_pairs; i++) {
    char path[2048];
    dml_tensor_t x, want, a, b;
    void *xb = NULL, *wb = NULL;
    snprintf(path, sizeof path, "%s/%s_io/input_%d.npy", models_dir, name, i);
    CHECK_OK(dml_npy_read_file(path, &x, &xb));
    snprintf(path, sizeof path, "%s/%s_io/output_%d.npy", models_dir, name, i);
    CHECK_OK(dml_npy_read_file(path, &want, &wb));
    if (xb && wb) {
      for (int rep = 0; rep < dev_runs; rep++) {
        CHECK_OK(dml_rt_session_set_input(dev, 0, &x));
        CHECK_OK(dml_rt_session_run(dev));
      }
      CHECK_OK(dml_rt_session_set_input(cpu, 0, &x));
      CHECK_OK(dml_rt_session_run(cpu));
      memset(&a, 0, sizeof a);
      memset(&b, 0, sizeof b);
      CHECK_OK(dml_rt_session_get_output(dev, 0, &a));
      CHECK_OK(dml_rt_session_get_output(cpu, 0, &b));
      double es = gpu_test_max_err(&a, &want), ec = gpu_test_max_err(&a, &b);
      printf("%s input_%d (batch %lld) on %s: vs saved %.2e, vs cpu %.2e\n", label, i,
             (long long)x.dims[0], dml_rt_session_device(dev), es, ec);
      CHECK(es <= GPU_TEST_TOL && ec <= GPU_TEST_TOL);
    }
    free(xb);
    free(wb);
  }
}

/* When `s` (a device listing's status) is an error: prints "SKIP: <what>:
 * <message>", frees `s` and returns 77 (CTest's skip code); else 0. */
static inline int gpu_test_skip(dml_status_t s, const char *what) {
  if (!s) return 0;
  char *msg = dml_status_format(s);
  printf("SKIP: %s: %s\n", what, msg ? msg : "?");
  free(msg);
  dml_status_free(s);
  return 77;
}

/* Called once per kernel form with a label, the IR text (symbol batch with
 * a bound of at least 16) and the number of kernels the scheduler makes of
 * it. */
typedef void (*gpu_test_form_fn)(const char *what, const char *text,
                                 uint32_t want_kernels);

/* The elementwise chain with broadcasting over f32[batch,3,w] (Add, Mul,
 * Sigmoid, Max, Clip, LeakyRelu, Abs, Sqrt, Div, Sub, HardSigmoid, Softplus,
 * Pow: 2 kernels); the caller free()s. w = 4096 makes the kernel large
 * enough for the scheduler's unrolled form (several elements per
 * invocation). */
static inline char *gpu_test_elementwise_chain(int w) {
  char *b = gpu_test_dense(w, 1.0, -1.0), *c = gpu_test_dense(3, 1.0, 0.5);
  size_t cap = 8192 + strlen(b);
  char *text = (char *)malloc(cap);
  if (text)
    snprintf(
        text, cap,
        "sym batch <= 16\n"
        "global @b : f32[%d] = %s\n"
        "global @c : f32[3,1] = %s\n"
        "global @lo : f32[] = dense<[-0.5]>\n"
        "global @hi : f32[] = dense<[0.75]>\n"
        "func @forward(%%x: f32[batch,3,%d], %%y: f32[batch,3,%d]) -> (f32[batch,3,%d], "
        "f32[batch,3,%d]) {\n"
        "  %%a = Add(%%x, @b) : f32[batch,3,%d]\n"
        "  %%m = Mul(%%a, @c) : f32[batch,3,%d]\n"
        "  %%s = Sigmoid(%%m) : f32[batch,3,%d]\n"
        "  %%mx = Max(%%s, %%y, %%a) : f32[batch,3,%d]\n"
        "  %%cl = Clip(%%mx, @lo, @hi) : f32[batch,3,%d]\n"
        "  %%lr = LeakyRelu(%%m) {alpha = 0.1} : f32[batch,3,%d]\n"
        "  %%ab = Abs(%%lr) : f32[batch,3,%d]\n"
        "  %%sq = Sqrt(%%ab) : f32[batch,3,%d]\n"
        "  %%d = Div(%%sq, @c) : f32[batch,3,%d]\n"
        "  %%sub = Sub(%%d, %%cl) : f32[batch,3,%d]\n"
        "  %%hs = HardSigmoid(%%sub) : f32[batch,3,%d]\n"
        "  %%sp = Softplus(%%y) : f32[batch,3,%d]\n"
        "  %%pw = Pow(%%sp, @c) : f32[batch,3,%d]\n"
        "  %%o = Add(%%hs, %%pw) : f32[batch,3,%d]\n"
        "  return %%o, %%cl\n}\n",
        w, b, c, w, w, w, w, w, w, w, w, w, w, w, w, w, w, w, w, w, w);
  free(b), free(c);
  return text;
}

/* The typed kernel forms (values of dtype i64, i32 and bool; compared
 * element-exactly):
 * - compares, logic, Where, casts between f32, i64, i32 and bool, integer
 *   arithmetic (Div and Mod by zero give 0, as on the CPU; Mod with the
 *   divisor's sign and fmod), Abs/Neg/Sign/Max/Clip on i64 (11 kernels:
 *   the scheduler fuses chains, not independent nodes);
 * - ArgMax/ArgMin (ties, select_last_index, keepdims), OneHot with negative
 *   and out-of-range labels, Shape and Size of a symbolic value, Expand to
 *   a computed shape, integer ReduceSum/Max/Min, a view of an i64 value
 *   (12 kernels);
 * - Gemm with a typed epilogue (Greater -> Cast to i64 and f32 -> Mul: one
 *   kernel). */
static inline void gpu_test_typed_forms(gpu_test_form_fn each) {
  each("typed elementwise",
       "sym batch <= 16\n"
       "global @k : i64[] = dense<[3]>\n"
       "global @nk : i32[4] = dense<[-3, 2, 0, 5]>\n"
       "global @half : f32[] = dense<[0.5]>\n"
       "global @lo : i64[] = dense<[-2]>\n"
       "global @hi : i64[] = dense<[4]>\n"
       "func @forward(%x: f32[batch,4], %y: f32[batch,4], %a: i64[batch,4], "
       "%b: i32[batch,4], %p: bool[batch,4]) -> (bool[batch,4], i64[batch,4], "
       "f32[batch,4], i32[batch,4], bool[batch,4], i64[batch,4], f32[batch,4], "
       "i32[batch,4], i64[batch,4]) {\n"
       "  %g = Greater(%x, %y) : bool[batch,4]\n"
       "  %c = Cast(%g) {to = 7} : i64[batch,4]\n"
       "  %s = Add(%c, %a) : i64[batch,4]\n"
       "  %m = Mod(%s, @k) : i64[batch,4]\n"
       "  %f = Cast(%m) {to = 1} : f32[batch,4]\n"
       "  %w = Where(%g, %f, %x) : f32[batch,4]\n"
       "  %d = Div(%b, @nk) : i32[batch,4]\n"
       "  %fm = Mod(%b, @nk) {fmod = 1} : i32[batch,4]\n"
       "  %md = Mod(%b, @nk) : i32[batch,4]\n"
       "  %e = Sub(%d, %fm) : i32[batch,4]\n"
       "  %q = Mul(%e, %md) : i32[batch,4]\n"
       "  %lt = Less(%x, @half) : bool[batch,4]\n"
       "  %eq = Equal(%lt, %p) : bool[batch,4]\n"
       "  %n = Not(%eq) : bool[batch,4]\n"
       "  %o = Or(%n, %g) : bool[batch,4]\n"
       "  %an = And(%o, %p) : bool[batch,4]\n"
       "  %xo = Xor(%an, %lt) : bool[batch,4]\n"
       "  %ai = Abs(%a) : i64[batch,4]\n"
       "  %ng = Neg(%ai) : i64[batch,4]\n"
       "  %sg = Sign(%a) : i64[batch,4]\n"
       "  %mx = Max(%ng, %sg, %a) : i64[batch,4]\n"
       "  %cl = Clip(%mx, @lo, @hi) : i64[batch,4]\n"
       "  %ge = GreaterOrEqual(%cl, %a) : bool[batch,4]\n"
       "  %le = LessOrEqual(%b, @nk) : bool[batch,4]\n"
       "  %bf = Cast(%le) {to = 1} : f32[batch,4]\n"
       "  %sf = Sign(%y) : f32[batch,4]\n"
       "  %tf = Mul(%bf, %sf) : f32[batch,4]\n"
       "  %fi = Cast(%tf) {to = 6} : i32[batch,4]\n"
       "  %i2 = Cast(%y) {to = 7} : i64[batch,4]\n"
       "  %wi = Where(%ge, %i2, %cl) : i64[batch,4]\n"
       "  return %xo, %m, %w, %q, %ge, %wi, %tf, %fi, %sg\n}\n",
       11);
  each("argmax, onehot, shape, size, int reductions",
       "sym batch <= 16\n"
       "global @vals : f32[2] = dense<[-0.5, 2.0]>\n"
       "global @d : i64[] = dense<[4]>\n"
       "global @ci : i64[1,4] = dense<[1, 0, 3, 2]>\n"
       "global @ax : i64[1] = dense<[1]>\n"
       "func @forward(%x: f32[batch,4], %a: i64[batch,4], %b: i32[batch,4], "
       "%l: i64[batch]) -> (i64[batch], i64[1,4], f32[batch,4], i64[2], i64[], "
       "f32[batch,4], i64[4], i32[batch,1], i64[batch], bool[batch,4], i64[batch,1], "
       "i64[batch,1]) {\n"
       "  %am = ArgMax(%x) {axis = 1, keepdims = 0} : i64[batch]\n"
       "  %an = ArgMin(%a) {axis = 0, keepdims = 1, select_last_index = 1} : i64[1,4]\n"
       "  %oh = OneHot(%l, @d, @vals) {axis = 1} : f32[batch,4]\n"
       "  %sh = Shape(%x) : i64[2]\n"
       "  %sz = Size(%x) : i64[]\n"
       "  %ex = Expand(@ci, %sh) : i64[batch,4]\n"
       "  %e3 = Cast(%ex) {to = 1} : f32[batch,4]\n"
       "  %m = Mul(%e3, %oh) : f32[batch,4]\n"
       "  %rs = ReduceSum(%a) {axes = [0], keepdims = 0} : i64[4]\n"
       "  %rm = ReduceMax(%b) {axes = [1], keepdims = 1} : i32[batch,1]\n"
       "  %rn = ReduceMin(%a) {axes = [1], keepdims = 0} : i64[batch]\n"
       "  %ms = Add(%rn, %am) : i64[batch]\n"
       "  %eq = Equal(%ex, %a) : bool[batch,4]\n"
       "  %ai = ArgMax(%a) {axis = -1, keepdims = 1} : i64[batch,1]\n"
       "  %al = ArgMax(%a) {axis = 1, keepdims = 0, select_last_index = 1} : i64[batch]\n"
       "  %u = Unsqueeze(%al, @ax) : i64[batch,1]\n"
       "  return %am, %an, %oh, %sh, %sz, %m, %rs, %rm, %ms, %eq, %ai, %u\n}\n",
       12);
  /* u8 and i8: i32 in registers, stores wrap modulo 256 as on the CPU */
  each("u8 and i8 arithmetic, compares, casts, reductions",
       "sym batch <= 16\n"
       "global @c : u8[4] = dense<[3, 250, 0, 7]>\n"
       "global @lo : i8[] = dense<[-20]>\n"
       "global @hi : i8[] = dense<[90]>\n"
       "func @forward(%u: u8[batch,4], %v: u8[batch,4], %s: i8[batch,4], "
       "%x: f32[batch,4]) -> (u8[batch,4], u8[batch,4], bool[batch,4], i8[batch,4], "
       "f32[batch,4], u8[batch,4], i64[batch], i8[batch,1], u8[batch,4]) {\n"
       "  %a = Add(%u, %v) : u8[batch,4]\n"
       "  %m = Mul(%a, @c) : u8[batch,4]\n"
       "  %d = Div(%u, @c) : u8[batch,4]\n"
       "  %sb = Sub(%d, %v) : u8[batch,4]\n"
       "  %g = Greater(%u, %v) : bool[batch,4]\n"
       "  %n = Neg(%s) : i8[batch,4]\n"
       "  %cl = Clip(%n, @lo, @hi) : i8[batch,4]\n"
       "  %f = Cast(%cl) {to = 1} : f32[batch,4]\n"
       "  %fx = Add(%f, %x) : f32[batch,4]\n"
       "  %cu = Cast(%fx) {to = 2} : u8[batch,4]\n"
       "  %am = ArgMax(%u) {axis = 1, keepdims = 0} : i64[batch]\n"
       "  %rs = ReduceSum(%s) {axes = [1], keepdims = 1} : i8[batch,1]\n"
       "  %mx = ReduceMax(%u) {axes = [0], keepdims = 1} : u8[1,4]\n"
       "  %sh = Shape(%u) : i64[2]\n"
       "  %e = Expand(%mx, %sh) : u8[batch,4]\n"
       "  return %m, %sb, %g, %cl, %fx, %cu, %am, %rs, %e\n}\n",
       9);
  /* f16/bf16 (16-bit words computed in f32, rounded per op as the CPU
   * rounds each node's result: exact), f64 (native), i16/u16 (i32 in
   * registers, stores wrap), u32/u64 (unsigned division, modulo, compares),
   * casts between them, integer Pow with a float exponent, and data
   * movement (f16/bf16 moved as 16-bit words: NaN payloads, signaling NaNs,
   * subnormals and -0 bit for bit) and reductions of these dtypes */
  each("f16, bf16, f64, 16-bit and unsigned values",
       "sym batch <= 16\n"
       "global @hc : f16[4] = dense<[0.5, -1.5, 2.25, 1000.0]>\n"
       "global @three : f32[] = dense<[3.0]>\n"
       "global @k : u32[] = dense<[3]>\n"
       "func @forward(%h: f16[batch,4], %b: bf16[batch,4], %d: f64[batch,4], "
       "%s: i16[batch,4], %w: u16[batch,4], %u: u32[batch,4], %q: u64[batch,4], "
       "%x: f32[batch,4]) -> (f16[batch,4], bf16[batch,4], f16[batch,4], f64[batch,4], "
       "f16[batch,4], i16[batch,4], i16[batch,4], u16[batch,4], u32[batch,4], "
       "u32[batch,4], bool[batch,4], u64[batch,4], u64[batch,4], f32[batch,4], "
       "f16[batch,4], i32[batch,4], i16[batch,4]) {\n"
       "  %ha = Add(%h, @hc) : f16[batch,4]\n"
       "  %hm = Mul(%ha, %h) : f16[batch,4]\n"
       "  %hx = Max(%hm, %h) : f16[batch,4]\n"
       "  %hf = Cast(%x) {to = 10} : f16[batch,4]\n"
       "  %hs = Sub(%hx, %hf) : f16[batch,4]\n"
       "  %bf = Cast(%x) {to = 16} : bf16[batch,4]\n"
       "  %bm = Mul(%b, %bf) : bf16[batch,4]\n"
       "  %bh = Cast(%bm) {to = 10} : f16[batch,4]\n"
       "  %df = Cast(%h) {to = 11} : f64[batch,4]\n"
       "  %dm = Mul(%d, %df) : f64[batch,4]\n"
       "  %da = Abs(%dm) : f64[batch,4]\n"
       "  %dq = Sqrt(%da) : f64[batch,4]\n"
       "  %dn = Min(%dq, %d) : f64[batch,4]\n"
       "  %dh = Cast(%dn) {to = 10} : f16[batch,4]\n"
       "  %s2 = Mul(%s, %s) : i16[batch,4]\n"
       "  %sm = Mod(%s2, %s) : i16[batch,4]\n"
       "  %w2 = Add(%w, %w) : u16[batch,4]\n"
       "  %wd = Div(%w2, %w) : u16[batch,4]\n"
       "  %wu = Cast(%s) {to = 4} : u16[batch,4]\n"
       "  %wm = Max(%wd, %wu) : u16[batch,4]\n"
       "  %u2 = Sub(%u, @k) : u32[batch,4]\n"
       "  %ud = Div(%u2, @k) : u32[batch,4]\n"
       "  %um = Mod(%u2, %u) : u32[batch,4]\n"
       "  %ug = Greater(%u, %u2) : bool[batch,4]\n"
       "  %q2 = Mul(%q, %q) : u64[batch,4]\n"
       "  %qd = Div(%q2, %q) : u64[batch,4]\n"
       "  %qm = Min(%qd, %q2) : u64[batch,4]\n"
       "  %cu = Cast(%u) {to = 1} : f32[batch,4]\n"
       "  %sel = Where(%ug, %hs, %bh) : f16[batch,4]\n"
       "  %pi = Cast(%s) {to = 6} : i32[batch,4]\n"
       "  %pw = Pow(%pi, @three) : i32[batch,4]\n"
       "  %p16 = Pow(%s, %pi) : i16[batch,4]\n"
       "  return %hs, %bm, %bh, %dn, %dh, %sm, %s2, %wm, %ud, %um, %ug, %qm, %q2, %cu, "
       "%sel, %pw, %p16\n}\n",
       12);
  each("f16, f64 and u32 moves and reductions, f64 exp and log",
       "sym batch <= 16\n"
       "global @ax : i64[1] = dense<[1]>\n"
       "global @ex : f64[8] = dense<[-745.0, -700.0, -1.0, 0.0, 1e-10, 1.0, 50.0, "
       "709.0]>\n"
       "global @hn : f16[8] = dense<0x017c01fe0100ff7b0080007c003c557e>\n"
       "global @bn : bf16[8] = dense<0x817fc1ff01007f7f0080807f803fa57f>\n"
       "global @lx : f64[8] = dense<[1e-310, 1e-300, 0.3, 0.7071067811865476, 1.0, "
       "1.0000001, 2.5, 1e300]>\n"
       "func @forward(%h: f16[batch,4], %d: f64[batch,4], %u: u32[batch,4], "
       "%s: i16[batch,4], %g: i64[batch,4]) -> (f16[4,batch], f16[batch,8], f64[batch], "
       "i64[batch], u32[batch], u32[1,4], i16[batch], f64[batch], f64[batch,4], f64[8], "
       "f64[8], f16[batch,4], bf16[batch,4]) {\n"
       "  %t = Transpose(%h) {perm = [1, 0]} : f16[4,batch]\n"
       "  %c = Concat(%h, %h) {axis = 1} : f16[batch,8]\n"
       "  %dm = ReduceMax(%d) {axes = [1], keepdims = 0} : f64[batch]\n"
       "  %am = ArgMax(%d) {axis = 1, keepdims = 0} : i64[batch]\n"
       "  %us = ReduceSum(%u) {axes = [1], keepdims = 0} : u32[batch]\n"
       "  %un = ReduceMin(%u) {axes = [0], keepdims = 1} : u32[1,4]\n"
       "  %sx = ReduceMax(%s, @ax) {keepdims = 0} : i16[batch]\n"
       "  %ls = ReduceLogSumExp(%d, @ax) {keepdims = 0} : f64[batch]\n"
       "  %da = Abs(%d) : f64[batch,4]\n"
       "  %de = Exp(%da) : f64[batch,4]\n"
       "  %dl = Log(%de) : f64[batch,4]\n"
       "  %eb = Exp(@ex) : f64[8]\n"
       "  %lb = Log(@lx) : f64[8]\n"
       "  %gh = Gather(@hn, %g) {axis = 0} : f16[batch,4]\n"
       "  %gb = Gather(@bn, %g) {axis = 0} : bf16[batch,4]\n"
       "  return %t, %c, %dm, %am, %us, %un, %sx, %ls, %dl, %eb, %lb, %gh, %gb\n}\n",
       13);
  each("gemm with a typed epilogue",
       "sym batch <= 16\n"
       "global @w : f32[8,6] = dense<[0.1, -0.2, 0.3, 0.4, -0.5, 0.6, -0.7, 0.8, 0.2, "
       "-0.1, 0.5, -0.3, 0.9, -0.4, 0.6, 0.1, -0.6, 0.2, 0.3, -0.8, 0.4, 0.7, -0.2, 0.5, "
       "-0.9, 0.1, 0.8, -0.5, 0.2, 0.3, 0.6, -0.3, -0.1, 0.4, 0.7, -0.6, 0.5, 0.9, -0.4, "
       "0.2, -0.7, 0.1, -0.3, 0.6, 0.8, -0.2, 0.4, -0.5]>\n"
       "global @z : f32[] = dense<[0.0]>\n"
       "func @forward(%x: f32[batch,8]) -> (i64[batch,6], f32[batch,6]) {\n"
       "  %g = Gemm(%x, @w) : f32[batch,6]\n"
       "  %b = Greater(%g, @z) : bool[batch,6]\n"
       "  %c = Cast(%b) {to = 7} : i64[batch,6]\n"
       "  %f = Cast(%b) {to = 1} : f32[batch,6]\n"
       "  %m = Mul(%f, %g) : f32[batch,6]\n"
       "  return %c, %m\n}\n",
       1);
  /* Dropout in inference (training_mode false, training_mode absent, or
   * ratio 0 in training mode): the data, a bool mask all true; 4 kernels
   * (the passes drop the maskless Dropout without training_mode, an
   * identity). */
  each("dropout, inference",
       "sym batch <= 16\n"
       "global @r : f32[] = dense<[0.5]>\n"
       "global @z : f32[] = dense<[0.0]>\n"
       "global @f : bool[] = dense<[false]>\n"
       "global @t : bool[] = dense<[true]>\n"
       "func @forward(%x: f32[batch,4]) -> (f32[batch,4], bool[batch,4], f32[batch,4], "
       "bool[batch,4], f32[batch,4]) {\n"
       "  %r = Relu(%x) : f32[batch,4]\n"
       "  %y, %m = Dropout(%r, @r, @f) : f32[batch,4], bool[batch,4]\n"
       "  %y2, %m2 = Dropout(%y, @z, @t) : f32[batch,4], bool[batch,4]\n"
       "  %y3 = Dropout(%y2) : f32[batch,4]\n"
       "  %o = Add(%y3, %x) : f32[batch,4]\n"
       "  return %y, %m, %y2, %m2, %o\n}\n",
       4);
}

/* The IR of GEMMs of random f16 and bf16 operands (inputs in [-2, 2),
 * weights in [-1, 1), rounded): an f16 Gemm with a bias (small-M K-split
 * at batch <= 64, K = 200), an f16 MatMul of 300 x 256 x 136 (register
 * tiles; on CUDA sm_80+ the f16 tensor-core form), a bf16 Gemm with a
 * transposed B of 256 x 72 x 96 (tensor cores too), an f16 Gemm with a
 * transposed A of 136 x 64 x 40 and a bias (tensor cores, K off the 32-step)
 * and a bf16 MatMul with a Relu epilogue.
 * Their f32 sums may round to the other neighbour of the CPU's double sum:
 * compare within GPU_TEST_HALF_ULPS (gpu_test_compare_with mode 2). The
 * caller free()s. */
static inline char *gpu_test_half_gemm_random(void) {
  size_t cap = 400000;
  char *text = (char *)malloc(cap);
  if (!text) return NULL;
  char *w = gpu_test_dense(200 * 40, 0.5, -0.5), *c = gpu_test_dense(40, 1.0, -1.0),
       *wb = gpu_test_dense(136 * 48, 0.5, -0.5);
  snprintf(
      text, cap,
      "sym batch <= 64\n"
      "global @w : f16[200,40] = %s\n"
      "global @c : f16[40] = %s\n"
      "global @wb : bf16[136,48] = %s\n"
      "func @forward(%%x: f16[batch,200], %%a: f16[300,256], %%b: f16[256,136], "
      "%%p: bf16[256,96], %%q: bf16[72,96], %%r: bf16[batch,136], %%e: f16[40,136], "
      "%%f: f16[40,64], %%d: f16[64]) -> (f16[batch,40], f16[300,136], bf16[256,72], "
      "bf16[batch,48], f16[136,64]) {\n"
      "  %%g = Gemm(%%x, @w, @c) : f16[batch,40]\n"
      "  %%t = MatMul(%%a, %%b) : f16[300,136]\n"
      "  %%u = Gemm(%%p, %%q) {transB = 1} : bf16[256,72]\n"
      "  %%v = MatMul(%%r, @wb) : bf16[batch,48]\n"
      "  %%o = Relu(%%v) : bf16[batch,48]\n"
      "  %%z = Gemm(%%e, %%f, %%d) {transA = 1, beta = 0.5} : f16[136,64]\n"
      "  return %%g, %%t, %%u, %%o, %%z\n}\n",
      w, c, wb);
  free(w), free(c), free(wb);
  return text;
}

/* GEMMs of f16 and bf16 values (codegen/schedule.c: loads widened to f32,
 * f32 products and sums, the result rounded to the dtype once): the
 * small-M K-split (f16 Gemm with alpha, beta and a bias, then an f16 Mul),
 * its transposed-B form (bf16), the 64x64 register-blocked tiles of a
 * static M (f16 MatMul, M = 150, K = 37 off the tile multiples) and a
 * batched MatMul (bf16). The operands are integers (random inputs times 4,
 * floored, and integer weights), so every f32 sum is exact and the GPU's
 * results equal the CPU's (a double sum rounded once) bit for bit; sums
 * above 2048 (f16) and 256 (bf16) still round. Random f16 operands, whose
 * f32 sums may round differently from the CPU's double ones, are compared
 * within a tolerance by gpu_test_half_gemm_random. */
static inline void gpu_test_half_gemm_forms(gpu_test_form_fn each) {
  size_t cap = 40000;
  char *text = (char *)malloc(cap);
  CHECK(text != NULL);
  if (!text) return;
  char *w = gpu_test_dense_int(37 * 24, -16, 16), *c = gpu_test_dense_int(24, -50, 50),
       *wb = gpu_test_dense_int(24 * 37, -9, 9),
       *r = gpu_test_dense_int(3 * 5 * 7, -9, 9);
  snprintf(text, cap,
           "sym batch <= 16\n"
           "global @w : f16[37,24] = %s\n"
           "global @c : f16[24] = %s\n"
           "global @wb : bf16[24,37] = %s\n"
           "global @r : bf16[3,5,7] = %s\n"
           "global @four : f16[] = dense<[4.0]>\n"
           "global @fourb : bf16[] = dense<[4.0]>\n"
           "global @s : f16[] = dense<[0.3]>\n"
           "func @forward(%%h: f16[batch,37], %%a: f16[150,37], %%b: bf16[batch,37], "
           "%%q: bf16[3,batch,5]) -> (f16[batch,24], f16[batch,24], f16[150,24], "
           "bf16[batch,24], bf16[3,batch,7]) {\n"
           "  %%hm = Mul(%%h, @four) : f16[batch,37]\n"
           "  %%hi = Floor(%%hm) : f16[batch,37]\n"
           "  %%g = Gemm(%%hi, @w, @c) {alpha = 0.5, beta = 2.0} : f16[batch,24]\n"
           "  %%gs = Mul(%%g, @s) : f16[batch,24]\n"
           "  %%am = Mul(%%a, @four) : f16[150,37]\n"
           "  %%ai = Floor(%%am) : f16[150,37]\n"
           "  %%t = MatMul(%%ai, @w) : f16[150,24]\n"
           "  %%bm = Mul(%%b, @fourb) : bf16[batch,37]\n"
           "  %%bi = Floor(%%bm) : bf16[batch,37]\n"
           "  %%u = Gemm(%%bi, @wb) {transB = 1} : bf16[batch,24]\n"
           "  %%qm = Mul(%%q, @fourb) : bf16[3,batch,5]\n"
           "  %%qi = Floor(%%qm) : bf16[3,batch,5]\n"
           "  %%v = MatMul(%%qi, @r) : bf16[3,batch,7]\n"
           "  return %%g, %%gs, %%t, %%u, %%v\n}\n",
           w, c, wb, r);
  free(w), free(c), free(wb), free(r);
  each("f16 and bf16 gemm: K-split, tiles, batched", text, GPU_TEST_HALF_GEMM_KERNELS);
  free(text);
}

/* The GEMM kernel's forms (codegen/schedule.c), appended to
 * gpu_test_kernel_forms: the small-M K-split (K and N off its chunk and
 * column multiples, transB, beta, a static M), the 64x64 and 128x128
 * register-blocked tiles of a static M (transA/transB, alpha/beta, biases
 * broadcast along either dim, M, N and K off the tile multiples with a
 * residual/Relu/Mul epilogue, and on them: no bounds checks), and the
 * 256x64 and 64x64 tiles of a symbolic M (M = 37 or 9 times the batch, a
 * transposed A with M = batch), and the tiles of a static M with a symbolic
 * K. Bounds up to 64. */
static inline void gpu_test_gemm_forms(gpu_test_form_fn each) {
  size_t cap = 200000;
  char *text = (char *)malloc(cap);
  CHECK(text != NULL);
  if (!text) return;
  char *w = gpu_test_dense(100 * 70, 0.5, -0.5), *b = gpu_test_dense(70, 1.0, -1.0);
  snprintf(text, cap,
           "sym batch <= 64\n"
           "global @w : f32[100,70] = %s\n"
           "global @b : f32[70] = %s\n"
           "func @forward(%%x: f32[batch,100], %%wt: f32[70,100], %%s: f32[5,19], "
           "%%t: f32[19,40]) -> (f32[batch,70], f32[batch,70], f32[5,40]) {\n"
           "  %%g = Gemm(%%x, @w, @b) : f32[batch,70]\n"
           "  %%r = Relu(%%g) : f32[batch,70]\n"
           "  %%h = Gemm(%%x, %%wt, @b) {transB = 1, beta = 0.5} : f32[batch,70]\n"
           "  %%e = Exp(%%h) : f32[batch,70]\n"
           "  %%q = MatMul(%%s, %%t) : f32[5,40]\n"
           "  return %%r, %%e, %%q\n}\n",
           w, b);
  free(w), free(b);
  each("gemm small M, K-split", text, 3);

  char *c = gpu_test_dense(150, 1.0, -1.0), *v = gpu_test_dense(70, 1.0, -0.5);
  snprintf(text, cap,
           "global @c : f32[150,1] = %s\n"
           "global @v : f32[70] = %s\n"
           "func @forward(%%a: f32[37,150], %%b: f32[70,37], %%r: f32[150,70]) -> "
           "(f32[150,70], f32[150,70]) {\n"
           "  %%g = Gemm(%%a, %%b, @c) {transA = 1, transB = 1, alpha = 0.5, beta = 2.0} "
           ": f32[150,70]\n"
           "  %%s = Add(%%g, %%r) : f32[150,70]\n"
           "  %%o = Relu(%%s) : f32[150,70]\n"
           "  %%m = Mul(%%o, @v) : f32[150,70]\n"
           "  return %%m, %%g\n}\n",
           c, v);
  free(c), free(v);
  each("gemm 64x64 tiles, ^T, edges", text, 1);
  each("gemm 128x128 tiles, edges",
       "func @forward(%a: f32[1200,21], %b: f32[21,1700], %bias: f32[1700]) -> "
       "(f32[1200,1700]) {\n"
       "  %y = MatMul(%a, %b) : f32[1200,1700]\n"
       "  %z = Add(%y, %bias) : f32[1200,1700]\n"
       "  %t = Tanh(%z) : f32[1200,1700]\n"
       "  return %t\n}\n",
       1);
  each("gemm 128x128 tiles, ^T, exact",
       "func @forward(%a: f32[16,1024], %b: f32[2048,16], %c: f32[1024,2048]) -> "
       "(f32[1024,2048]) {\n"
       "  %g = Gemm(%a, %b, %c) {transA = 1, transB = 1, beta = -1.5} : "
       "f32[1024,2048]\n"
       "  return %g\n}\n",
       1);
  each("gemm 256x64 tiles, symbolic M",
       "sym batch <= 64\n"
       "func @forward(%x: f32[batch,37,20], %w: f32[20,72]) -> (f32[batch,37,72]) {\n"
       "  %y = MatMul(%x, %w) : f32[batch,37,72]\n"
       "  %s = Sigmoid(%y) : f32[batch,37,72]\n"
       "  return %s\n}\n",
       1);
  char *w2 = gpu_test_dense(45 * 33, 0.5, -0.5), *b2 = gpu_test_dense(33, 1.0, -1.0);
  snprintf(text, cap,
           "sym batch <= 64\n"
           "global @w : f32[45,33] = %s\n"
           "global @b : f32[33] = %s\n"
           "func @forward(%%x: f32[batch,9,45], %%z: f32[45,batch]) -> "
           "(f32[batch,9,33], f32[batch,33]) {\n"
           "  %%g = MatMul(%%x, @w) : f32[batch,9,33]\n"
           "  %%r = Relu(%%g) : f32[batch,9,33]\n"
           "  %%h = Gemm(%%z, @w, @b) {transA = 1, alpha = 2.0} : f32[batch,33]\n"
           "  return %%r, %%h\n}\n",
           w2, b2);
  free(w2), free(b2);
  each("gemm 64x64 tiles, symbolic M", text, 2);
  free(text);
  /* a static M above the small form's with a symbolic K (weight gradients
   * dY^T X of a training package: K = batch, 3 * batch) */
  each("gemm 64x64 tiles, symbolic K",
       "sym batch <= 64\n"
       "func @forward(%x: f32[batch,100], %dy: f32[batch,70], %a: f32[130,3*batch], "
       "%c: f32[3*batch,40]) -> (f32[100,70], f32[130,40]) {\n"
       "  %gw = Gemm(%x, %dy) {transA = 1, alpha = 0.5} : f32[100,70]\n"
       "  %mm = MatMul(%a, %c) : f32[130,40]\n"
       "  %r = Relu(%mm) : f32[130,40]\n"
       "  return %gw, %r\n}\n",
       2);
}

/* RNN, GRU and LSTM (one kernel each): a bidirectional LSTM with
 * peepholes, input_forget, clip, initial states, scaled activations and a
 * symbolic batch (Y, Y_h, Y_c); a reverse GRU in layout 1 with
 * sequence_lens (a row shorter than the sequence, Y's tail zero) and the
 * reset gate applied before R; a forward GRU with linear_before_reset and
 * hardsigmoid/softsign; a bidirectional RNN with leakyrelu/scaledtanh per
 * direction. */
static inline void gpu_test_rnn_forms(gpu_test_form_fn each) {
  size_t cap = 65536;
  char *text = (char *)malloc(cap);
  CHECK(text != NULL);
  if (!text) return;
  char *lw = gpu_test_dense(160, 0.5, -0.5), *lr = gpu_test_dense(200, 0.5, -0.5),
       *lb = gpu_test_dense(80, 0.5, -0.5), *lp = gpu_test_dense(30, 0.5, -0.5),
       *gw = gpu_test_dense(36, 0.5, -0.5), *gr = gpu_test_dense(48, 0.5, -0.5),
       *gb = gpu_test_dense(24, 0.5, -0.5), *hw = gpu_test_dense(27, 0.5, -0.5),
       *hr = gpu_test_dense(27, 0.5, -0.5), *rw = gpu_test_dense(36, 0.5, -0.5),
       *rr = gpu_test_dense(72, 0.3, -0.3), *rb = gpu_test_dense(24, 0.5, -0.5);
  snprintf(
      text, cap,
      "sym batch <= 16\n"
      "global @lw : f32[2,20,4] = %s\n"
      "global @lr : f32[2,20,5] = %s\n"
      "global @lb : f32[2,40] = %s\n"
      "global @lp : f32[2,15] = %s\n"
      "global @gw : f32[1,12,3] = %s\n"
      "global @gr : f32[1,12,4] = %s\n"
      "global @gb : f32[1,24] = %s\n"
      "global @sl : i32[3] = dense<[4, 1, 2]>\n"
      "global @hw : f32[1,9,3] = %s\n"
      "global @hr : f32[1,9,3] = %s\n"
      "global @rw : f32[2,6,3] = %s\n"
      "global @rr : f32[2,6,6] = %s\n"
      "global @rb : f32[2,12] = %s\n"
      "func @forward(%%x: f32[3,batch,4], %%h0: f32[2,batch,5], %%c0: f32[2,batch,5], "
      "%%g: f32[3,4,3], %%u: f32[2,batch,3], %%v: f32[4,batch,3]) -> (f32[3,2,batch,5], "
      "f32[2,batch,5], f32[2,batch,5], f32[3,4,1,4], f32[3,1,4], f32[2,1,batch,3], "
      "f32[1,batch,3], f32[4,2,batch,6], f32[2,batch,6]) {\n"
      "  %%y, %%yh, %%yc = LSTM(%%x, @lw, @lr, @lb, _, %%h0, %%c0, @lp) {hidden_size = "
      "5, "
      "direction = \"bidirectional\", input_forget = 1, clip = 3.0, activations = "
      "[\"sigmoid\", \"tanh\", \"tanh\", \"hardsigmoid\", \"scaledtanh\", \"softsign\"], "
      "activation_alpha = [0.3, 0.8], activation_beta = [0.4, 1.1]} : f32[3,2,batch,5], "
      "f32[2,batch,5], f32[2,batch,5]\n"
      "  %%gy, %%gh = GRU(%%g, @gw, @gr, @gb, @sl) {hidden_size = 4, direction = "
      "\"reverse\", layout = 1} : f32[3,4,1,4], f32[3,1,4]\n"
      "  %%hy, %%hh = GRU(%%u, @hw, @hr) {hidden_size = 3, linear_before_reset = 1, "
      "activations = [\"hardsigmoid\", \"softsign\"]} : f32[2,1,batch,3], "
      "f32[1,batch,3]\n"
      "  %%ry, %%rh = RNN(%%v, @rw, @rr, @rb) {hidden_size = 6, direction = "
      "\"bidirectional\", activations = [\"leakyrelu\", \"scaledtanh\"], "
      "activation_alpha = "
      "[0.1, 0.9], activation_beta = [1.2]} : f32[4,2,batch,6], f32[2,batch,6]\n"
      "  return %%y, %%yh, %%yc, %%gy, %%gh, %%hy, %%hh, %%ry, %%rh\n}\n",
      lw, lr, lb, lp, gw, gr, gb, hw, hr, rw, rr, rb);
  free(lw), free(lr), free(lb), free(lp), free(gw), free(gr), free(gb), free(hw),
      free(hr);
  free(rw), free(rr), free(rb);
  each("rnn, gru, lstm", text, 4);
  free(text);
}

/* Range, ConstantOfShape and the windows with static outputs (their inputs
 * constants, as the conformance runner binds shape inputs): f32, f64 and
 * i32 Range with positive and negative deltas, periodic and symmetric
 * Hann/Hamming/Blackman windows (f32 against the CPU's double within the
 * comparison's tolerance), ConstantOfShape of f32 and i64;
 * one consumer keeps a batch-dependent output. */
static inline void gpu_test_generator_forms(gpu_test_form_fn each) {
  each("range, constantofshape, windows",
       "sym batch <= 16\n"
       "global @s : f32[] = dense<[1.5]>\n"
       "global @l : f32[] = dense<[5.0]>\n"
       "global @d : f32[] = dense<[0.5]>\n"
       "global @si : i32[] = dense<[10]>\n"
       "global @li : i32[] = dense<[-3]>\n"
       "global @di : i32[] = dense<[-3]>\n"
       "global @sd : f64[] = dense<[0.25]>\n"
       "global @ld : f64[] = dense<[1.3]>\n"
       "global @dd : f64[] = dense<[0.25]>\n"
       "global @n10 : i64[] = dense<[10]>\n"
       "global @n9 : i32[] = dense<[9]>\n"
       "global @sh : i64[2] = dense<[2, 3]>\n"
       "func @forward(%x: f32[batch,7]) -> (f32[batch,7], i32[5], f64[5], f32[10], "
       "f32[9], "
       "f32[10], f32[9], i64[2,3], f32[2,3]) {\n"
       "  %r = Range(@s, @l, @d) : f32[7]\n"
       "  %y = Mul(%x, %r) : f32[batch,7]\n"
       "  %ri = Range(@si, @li, @di) : i32[5]\n"
       "  %rd = Range(@sd, @ld, @dd) : f64[5]\n"
       "  %h = HannWindow(@n10) : f32[10]\n"
       "  %hm = HammingWindow(@n9) {periodic = 0} : f32[9]\n"
       "  %b = BlackmanWindow(@n10) {periodic = 1} : f32[10]\n"
       "  %bs = BlackmanWindow(@n9) {periodic = 0} : f32[9]\n"
       "  %c = ConstantOfShape(@sh) {value = tensor<i64[1]> dense<[-7]>} : i64[2,3]\n"
       "  %cf = ConstantOfShape(@sh) {value = tensor<f32[1]> dense<[2.5]>} : f32[2,3]\n"
       "  return %y, %ri, %rd, %h, %hm, %b, %bs, %c, %cf\n}\n",
       9);
}

/* Every kernel form the scheduler emits, in this order (the weights are
 * drawn from gpu_test_frand as each form is made, so a caller drawing in
 * `each` sees the same values each run): the elementwise chain with
 * broadcasting (gpu_test_elementwise_chain at width 4 and, when `unrolled`,
 * at width 4096); Gemm with epilogues, softmax, a reduction, LogSoftmax;
 * MatMul 3-D with a residual and a transposed Gemm; reductions and softmax
 * on axis 1; Conv (groups, strides, dilations, pads, SAME_UPPER) with bias
 * and a BatchNormalization + Relu epilogue, MaxPool, AveragePool with and
 * without the pads counted, global pools; Gemm/MatMul with a symbolic K;
 * then gpu_test_typed_forms and the GEMM forms (gpu_test_gemm_forms); then
 * the activations and functions of
 * codegen/kernel_math.c (Elu ... Atanh, Erf, Round; with Sign and f32 Mod) in
 * chains; ReduceL1/L2/LogSum/LogSumExp/SumSquare/Prod; data movement
 * (Transpose, Concat, Split, Slice with a negative step and clamped ends,
 * Pad with a negative pad and a constant_value, Tile, Expand,
 * DepthToSpace DCR/CRD, SpaceToDepth DCR/CRD); LayerNormalization (with Mean and
 * InvStdDev, and over two axes with a broadcast scale) and
 * InstanceNormalization; 1-D Conv + Relu, MaxPool and AveragePool, Hardmax
 * on a middle axis, inference Dropout; Transpose/Pad/Concat/Slice of i64,
 * i32 and bool; 2-D ConvTranspose (groups, strides, asymmetric pads,
 * output_padding, dilations) and 1-D (output_shape with SAME_UPPER); MatMul
 * with a batched right operand (a weight and an input); Gather and
 * GatherElements with negative indices; NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss (weights, ignore_index, log_prob, reductions none,
 * sum and mean); then gpu_test_generator_forms and gpu_test_rnn_forms. A text that cannot
 * be allocated is a failed CHECK. */
static inline void gpu_test_kernel_forms(gpu_test_form_fn each, int unrolled) {
  char text[16384];
  for (int u = 0; u <= (unrolled ? 1 : 0); u++) {
    char *chain = gpu_test_elementwise_chain(u ? 4096 : 4);
    CHECK(chain != NULL);
    if (chain)
      each(u ? "elementwise chain+broadcast, unrolled" : "elementwise chain+broadcast",
           chain, 2);
    free(chain);
  }

  char *w = gpu_test_dense(48, 0.5, -0.5), *bias = gpu_test_dense(6, 0.5, -0.5),
       *sc = gpu_test_dense(6, 1.0, 0.5);
  snprintf(
      text, sizeof text,
      "sym batch <= 16\n"
      "global @w : f32[8,6] param = %s\n"
      "global @b : f32[6] param = %s\n"
      "global @s : f32[6] = %s\n"
      "func @forward(%%x: f32[batch,8]) -> (f32[batch,6], f32[batch,6], f32[batch,1], "
      "f32[batch,6]) {\n"
      "  %%g = Gemm(%%x, @w, @b) : f32[batch,6]\n"
      "  %%r = Relu(%%g) : f32[batch,6]\n"
      "  %%m = Mul(%%r, @s) : f32[batch,6]\n"
      "  %%t = Tanh(%%m) : f32[batch,6]\n"
      "  %%sm = Softmax(%%t) {axis = 1} : f32[batch,6]\n"
      "  %%red = ReduceMean(%%m) {axes = [1], keepdims = 1} : f32[batch,1]\n"
      "  %%e = Exp(%%red) : f32[batch,1]\n"
      "  %%ls = LogSoftmax(%%r) {axis = -1} : f32[batch,6]\n"
      "  return %%sm, %%t, %%e, %%ls\n}\n",
      w, bias, sc);
  free(w), free(bias), free(sc);
  each("gemm+epilogue, softmax", text, 4);

  char *mw = gpu_test_dense(42, 0.5, -0.5), *w2 = gpu_test_dense(30, 0.5, -0.5),
       *mc = gpu_test_dense(5, 1.0, -1.0);
  snprintf(
      text, sizeof text,
      "sym batch <= 16\n"
      "global @w : f32[7,6] = %s\n"
      "global @w2 : f32[5,6] = %s\n"
      "global @c : f32[5] = %s\n"
      "func @forward(%%x: f32[batch,5,7], %%r: f32[batch,5,6], %%z: f32[6,batch]) -> "
      "(f32[batch,5,6], f32[batch,5]) {\n"
      "  %%mm = MatMul(%%x, @w) : f32[batch,5,6]\n"
      "  %%res = Add(%%mm, %%r) : f32[batch,5,6]\n"
      "  %%o = Relu(%%res) : f32[batch,5,6]\n"
      "  %%g = Gemm(%%z, @w2, @c) {transA = 1, transB = 1, alpha = 0.5, beta = 2.0} : "
      "f32[batch,5]\n"
      "  return %%o, %%g\n}\n",
      mw, w2, mc);
  free(mw), free(w2), free(mc);
  each("matmul 3-D+residual, gemm^T", text, 2);

  each("reductions, softmax axis 1",
       "sym batch <= 16\n"
       "func @forward(%x: f32[batch,4,5]) -> (f32[4], f32[batch,1,5], f32[batch,4], "
       "f32[batch,4,1], f32[batch,4,5]) {\n"
       "  %s = ReduceSum(%x) {axes = [0, 2], keepdims = 0} : f32[4]\n"
       "  %mx = ReduceMax(%x) {axes = [1], keepdims = 1} : f32[batch,1,5]\n"
       "  %mn = ReduceMin(%x) {axes = [-1], keepdims = 0} : f32[batch,4]\n"
       "  %me = ReduceMean(%x) {axes = [2], keepdims = 1} : f32[batch,4,1]\n"
       "  %ng = Neg(%me) : f32[batch,4,1]\n"
       "  %sm = Softmax(%x) {axis = 1} : f32[batch,4,5]\n"
       "  return %s, %mx, %mn, %ng, %sm\n}\n",
       5);

  char *w1 = gpu_test_dense(4 * 2 * 3 * 3, 0.3, -0.3), *b1 = gpu_test_dense(4, 0.5, -0.5);
  char *cw2 = gpu_test_dense(6 * 2 * 2 * 2, 0.3, -0.3),
       *csc = gpu_test_dense(6, 0.5, 0.5), *bb = gpu_test_dense(6, 0.5, -0.5);
  char *mu = gpu_test_dense(6, 0.2, -0.2), *var = gpu_test_dense(6, 0.5, 0.5);
  snprintf(text, sizeof text,
           "sym batch <= 16\n"
           "global @w1 : f32[4,2,3,3] = %s\n"
           "global @b1 : f32[4] = %s\n"
           "global @w2 : f32[6,2,2,2] = %s\n"
           "global @sc : f32[6] = %s\n"
           "global @bb : f32[6] = %s\n"
           "global @mu : f32[6] = %s\n"
           "global @var : f32[6] = %s\n"
           "func @forward(%%x: f32[batch,2,9,8]) -> (f32[batch,4,5,4], f32[batch,6,4,3], "
           "f32[batch,4,3,2], f32[batch,4,3,2], f32[batch,4,3,3], f32[batch,6,1,1], "
           "f32[batch,4,1,1]) {\n"
           "  %%c1 = Conv(%%x, @w1, @b1) {pads = [1, 1, 1, 1], strides = [2, 2]} : "
           "f32[batch,4,5,4]\n"
           "  %%c2 = Conv(%%c1, @w2, _) {group = 2, dilations = [2, 1], auto_pad = "
           "\"SAME_UPPER\"} : "
           "f32[batch,6,5,4]\n"
           "  %%bn = BatchNormalization(%%c2, @sc, @bb, @mu, @var) {epsilon = 0.001} : "
           "f32[batch,6,5,4]\n"
           "  %%r = Relu(%%bn) : f32[batch,6,5,4]\n"
           "  %%mp = MaxPool(%%r) {kernel_shape = [2, 2], strides = [1, 1]} : "
           "f32[batch,6,4,3]\n"
           "  %%ap = AveragePool(%%c1) {kernel_shape = [3, 3], pads = [1, 0, 0, 0], "
           "strides = [2, 2]} : "
           "f32[batch,4,3,2]\n"
           "  %%ai = AveragePool(%%c1) {kernel_shape = [3, 3], pads = [1, 0, 0, 0], "
           "strides = [2, 2], "
           "count_include_pad = 1} : f32[batch,4,3,2]\n"
           "  %%m2 = MaxPool(%%c1) {kernel_shape = [3, 2], pads = [1, 1, 1, 1], strides "
           "= [2, 2]} : "
           "f32[batch,4,3,3]\n"
           "  %%ga = GlobalAveragePool(%%r) : f32[batch,6,1,1]\n"
           "  %%gm = GlobalMaxPool(%%c1) : f32[batch,4,1,1]\n"
           "  return %%c1, %%mp, %%ap, %%ai, %%m2, %%ga, %%gm\n}\n",
           w1, b1, cw2, csc, bb, mu, var);
  free(w1), free(b1), free(cw2), free(csc), free(bb), free(mu), free(var);
  each("conv+bn+relu, pools", text, 8);
  /* K = the batch (a weight gradient dY^T X), and K = 3 * batch over
   * several 16-wide K tiles, transB with alpha and an epilogue, MatMul */
  each("gemm, matmul with a symbolic K",
       "sym batch <= 16\n"
       "func @forward(%dy: f32[batch,5], %x: f32[batch,7], %a: f32[4,3*batch], "
       "%b: f32[6,3*batch], %c: f32[3*batch,6]) -> (f32[5,7], f32[4,6], f32[4,6]) {\n"
       "  %gw = Gemm(%dy, %x) {transA = 1} : f32[5,7]\n"
       "  %g2 = Gemm(%a, %b) {transB = 1, alpha = 0.5} : f32[4,6]\n"
       "  %r = Relu(%g2) : f32[4,6]\n"
       "  %mm = MatMul(%a, %c) : f32[4,6]\n"
       "  return %gw, %r, %mm\n}\n",
       3);
  gpu_test_typed_forms(each);
  gpu_test_gemm_forms(each);
  gpu_test_half_gemm_forms(each);

  char *sl = gpu_test_dense(4, 0.3, 0.0);
  snprintf(text, sizeof text,
           "sym batch <= 16\n"
           "global @sl : f32[4] = %s\n"
           "global @half : f32[4] = dense<[0.5, -1.5, 2.5, 0.25]>\n"
           "func @forward(%%x: f32[batch,3,4], %%y: f32[batch,3,4]) -> (f32[batch,3,4], "
           "f32[batch,3,4], f32[batch,3,4], f32[batch,3,4], f32[batch,3,4]) {\n"
           "  %%a = Elu(%%x) {alpha = 0.7} : f32[batch,3,4]\n"
           "  %%b = Selu(%%a) : f32[batch,3,4]\n"
           "  %%c = Celu(%%b) {alpha = 1.5} : f32[batch,3,4]\n"
           "  %%d = Softsign(%%c) : f32[batch,3,4]\n"
           "  %%e = HardSwish(%%d) : f32[batch,3,4]\n"
           "  %%f = PRelu(%%e, @sl) : f32[batch,3,4]\n"
           "  %%g = Erf(%%x) : f32[batch,3,4]\n"
           "  %%h = Sign(%%g) : f32[batch,3,4]\n"
           "  %%i = Atan(%%y) : f32[batch,3,4]\n"
           "  %%j = Asin(%%g) : f32[batch,3,4]\n"
           "  %%k = Acos(%%g) : f32[batch,3,4]\n"
           "  %%s1 = Sinh(%%x) : f32[batch,3,4]\n"
           "  %%s2 = Cosh(%%s1) : f32[batch,3,4]\n"
           "  %%s3 = Asinh(%%s1) : f32[batch,3,4]\n"
           "  %%s4 = Acosh(%%s2) : f32[batch,3,4]\n"
           "  %%s5 = Atanh(%%d) : f32[batch,3,4]\n"
           "  %%s6 = Tan(%%d) : f32[batch,3,4]\n"
           "  %%t = ThresholdedRelu(%%x) {alpha = 0.25} : f32[batch,3,4]\n"
           "  %%u = Shrink(%%y) {lambd = 0.5, bias = 0.25} : f32[batch,3,4]\n"
           "  %%m = Mul(%%x, @half) : f32[batch,3,4]\n"
           "  %%r = Round(%%m) : f32[batch,3,4]\n"
           "  %%w = Sum(%%f, %%h, %%i, %%k, %%j) : f32[batch,3,4]\n"
           "  %%v = Mean(%%s3, %%s4, %%s5, %%s6) : f32[batch,3,4]\n"
           "  %%md = Mod(%%x, @half) {fmod = 1} : f32[batch,3,4]\n"
           "  %%z = Add(%%t, %%u) : f32[batch,3,4]\n"
           "  return %%w, %%v, %%z, %%r, %%md\n}\n",
           sl);
  free(sl);
  each("activations, erf/atan/round", text, 15);

  /* NaN inputs through the ops whose GPU forms once dropped them (GLSL
   * max/min, CUDA fmaxf/fminf return the other operand): Relu, LeakyRelu,
   * Elu, Clip, Max, Min, also as a GEMM epilogue; the CPU propagates NaN
   * (columns 0 and 3 of %a, and the rows of %g they reach) */
  each(
      "NaN through relu, clip, max, min",
      "sym batch <= 16\n"
      "global @n : f32[4] = dense<0x0000c07f0000803f000000c00000c07f>\n"
      "global @lo : f32[] = dense<[-0.5]>\n"
      "global @hi : f32[] = dense<[0.75]>\n"
      "global @w : f32[4,3] = dense<[0.5, -1.0, 0.25, 1.5, 0.75, -0.5, -2.0, 1.0, 0.5, "
      "0.25, -0.25, 2.0]>\n"
      "func @forward(%x: f32[batch,4], %y: f32[batch,2]) -> (f32[batch,4], f32[batch,4], "
      "f32[batch,4], f32[batch,4], f32[batch,4], f32[batch,4], f32[batch,3], "
      "f32[batch,2]) {\n"
      "  %a = Add(%x, @n) : f32[batch,4]\n"
      "  %r = Relu(%a) : f32[batch,4]\n"
      "  %l = LeakyRelu(%a) {alpha = 0.1} : f32[batch,4]\n"
      "  %e = Elu(%a) : f32[batch,4]\n"
      "  %c = Clip(%a, @lo, @hi) : f32[batch,4]\n"
      "  %m = Max(%x, %a) : f32[batch,4]\n"
      "  %i = Min(%a, %x) : f32[batch,4]\n"
      "  %g = Gemm(%a, @w) : f32[batch,3]\n"
      "  %gr = Relu(%g) : f32[batch,3]\n"
      "  %yr = Relu(%y) : f32[batch,2]\n"
      "  return %r, %l, %e, %c, %m, %i, %gr, %yr\n}\n",
      4);

  each("reductions l1/l2/lse/prod",
       "sym batch <= 16\n"
       "func @forward(%x: f32[batch,4,5]) -> (f32[4], f32[batch,1,5], f32[batch,4], "
       "f32[batch,4,1], f32[batch,1,1], f32[batch,4]) {\n"
       "  %l1 = ReduceL1(%x) {axes = [0, 2], keepdims = 0} : f32[4]\n"
       "  %l2 = ReduceL2(%x) {axes = [1], keepdims = 1} : f32[batch,1,5]\n"
       "  %ab = Abs(%x) : f32[batch,4,5]\n"
       "  %ls = ReduceLogSum(%ab) {axes = [-1], keepdims = 0} : f32[batch,4]\n"
       "  %sc = Mul(%x, %x) : f32[batch,4,5]\n"
       "  %big = Add(%sc, %x) : f32[batch,4,5]\n"
       "  %lse = ReduceLogSumExp(%big) {axes = [2], keepdims = 1} : f32[batch,4,1]\n"
       "  %sq = ReduceSumSquare(%x) {axes = [1, 2], keepdims = 1} : f32[batch,1,1]\n"
       "  %pr = ReduceProd(%x) {axes = [2], keepdims = 0} : f32[batch,4]\n"
       "  %ng = Neg(%pr) : f32[batch,4]\n"
       "  return %l1, %l2, %ls, %lse, %sq, %ng\n}\n",
       8);

  each("data movement",
       "sym batch <= 16\n"
       "global @st : i64[2] = dense<[1, -1]>\n"
       "global @en : i64[2] = dense<[4, -100]>\n"
       "global @ax : i64[2] = dense<[1, 2]>\n"
       "global @sp : i64[2] = dense<[2, -2]>\n"
       "global @sz : i64[2] = dense<[3, 4]>\n"
       "global @pads : i64[6] = dense<[0, 1, -1, 0, 2, 1]>\n"
       "global @pv : f32[] = dense<[0.5]>\n"
       "global @rep : i64[3] = dense<[1, 2, 1]>\n"
       "global @shape : i64[3] = dense<[3, 2, 4]>\n"
       "func @forward(%x: f32[batch,5,4], %z: f32[batch,2,4], %v: f32[2,1], "
       "%w: f32[batch,8,2,3]) -> (f32[4,batch,5], f32[batch,3,4], f32[batch,4,4], "
       "f32[batch,2,2], f32[batch,5,4], f32[batch,4,4], f32[3,2,4], f32[batch,8,2,3], "
       "f32[batch,2,4,6], f32[batch,8,2,3]) {\n"
       "  %t = Transpose(%x) {perm = [2, 0, 1]} : f32[4,batch,5]\n"
       "  %c = Concat(%z, %x) {axis = 1} : f32[batch,7,4]\n"
       "  %a, %b = Split(%c, @sz) {axis = 1} : f32[batch,3,4], f32[batch,4,4]\n"
       "  %s = Slice(%x, @st, @en, @ax, @sp) : f32[batch,2,2]\n"
       "  %p = Pad(%z, @pads, @pv) : f32[batch,5,4]\n"
       "  %ti = Tile(%z, @rep) : f32[batch,4,4]\n"
       "  %e = Expand(%v, @shape) : f32[3,2,4]\n"
       "  %d = DepthToSpace(%w) {blocksize = 2, mode = \"CRD\"} : f32[batch,2,4,6]\n"
       "  %q = SpaceToDepth(%d) {blocksize = 2} : f32[batch,8,2,3]\n"
       "  %d2 = DepthToSpace(%q) {blocksize = 2} : f32[batch,2,4,6]\n"
       "  %q2 = SpaceToDepth(%d) {blocksize = 2, mode = \"CRD\"} : f32[batch,8,2,3]\n"
       "  return %t, %a, %b, %s, %p, %ti, %e, %q, %d2, %q2\n}\n",
       11);

  char *lsc = gpu_test_dense(6, 0.5, 0.5), *lb = gpu_test_dense(6, 0.5, -0.5),
       *ls2 = gpu_test_dense(6, 0.5, 0.5), *ic = gpu_test_dense(3, 0.5, 0.5),
       *ib = gpu_test_dense(3, 0.5, -0.5);
  snprintf(
      text, sizeof text,
      "sym batch <= 16\n"
      "global @sc : f32[6] = %s\n"
      "global @b : f32[6] = %s\n"
      "global @s2 : f32[6,1] = %s\n"
      "global @ic : f32[3] = %s\n"
      "global @ib : f32[3] = %s\n"
      "func @forward(%%x: f32[batch,4,6], %%z: f32[batch,3,2,5]) -> (f32[batch,4,6], "
      "f32[batch,4,1], f32[batch,4,1], f32[batch,4,6], f32[batch,3,2,5]) {\n"
      "  %%y, %%m, %%i = LayerNormalization(%%x, @sc, @b) {epsilon = 0.001} : "
      "f32[batch,4,6], f32[batch,4,1], f32[batch,4,1]\n"
      "  %%t = Transpose(%%x) {perm = [0, 2, 1]} : f32[batch,6,4]\n"
      "  %%y2 = LayerNormalization(%%t, @s2) {axis = 1} : f32[batch,6,4]\n"
      "  %%u = Transpose(%%y2) {perm = [0, 2, 1]} : f32[batch,4,6]\n"
      "  %%in = InstanceNormalization(%%z, @ic, @ib) {epsilon = 0.01} : "
      "f32[batch,3,2,5]\n"
      "  return %%y, %%m, %%i, %%u, %%in\n}\n",
      lsc, lb, ls2, ic, ib);
  free(lsc), free(lb), free(ls2), free(ic), free(ib);
  each("layernorm, instancenorm", text, 5);

  char *w1d = gpu_test_dense(4 * 2 * 3, 0.3, -0.3), *b1d = gpu_test_dense(4, 0.5, -0.5);
  snprintf(
      text, sizeof text,
      "sym batch <= 16\n"
      "global @w : f32[4,2,3] = %s\n"
      "global @b : f32[4] = %s\n"
      "func @forward(%%x: f32[batch,2,9], %%h: f32[batch,3,5]) -> (f32[batch,4,5], "
      "f32[batch,4,2], f32[batch,4,4], f32[batch,3,5], f32[batch,3,5]) {\n"
      "  %%c = Conv(%%x, @w, @b) {pads = [1, 1], strides = [2]} : f32[batch,4,5]\n"
      "  %%r = Relu(%%c) : f32[batch,4,5]\n"
      "  %%mp = MaxPool(%%r) {kernel_shape = [2], strides = [2]} : f32[batch,4,2]\n"
      "  %%ap = AveragePool(%%c) {kernel_shape = [3], pads = [1, 0]} : f32[batch,4,4]\n"
      "  %%hm = Hardmax(%%h) {axis = 1} : f32[batch,3,5]\n"
      "  %%dr = Dropout(%%h) : f32[batch,3,5]\n"
      "  return %%r, %%mp, %%ap, %%hm, %%dr\n}\n",
      w1d, b1d);
  free(w1d), free(b1d);
  each("conv1d+pools, hardmax, dropout", text, 5);

  each("typed data movement",
       "sym batch <= 16\n"
       "global @pads : i64[4] = dense<[0, 1, 0, 2]>\n"
       "global @pv : i64[] = dense<[-7]>\n"
       "global @st : i64[1] = dense<[-1]>\n"
       "global @en : i64[1] = dense<[-100]>\n"
       "global @sp : i64[1] = dense<[-2]>\n"
       "global @ax : i64[1] = dense<[1]>\n"
       "func @forward(%a: i64[batch,4], %b: i32[batch,4], %p: bool[batch,4]) -> "
       "(i64[4,batch], i64[batch,7], i32[batch,8], bool[batch,2]) {\n"
       "  %t = Transpose(%a) {perm = [1, 0]} : i64[4,batch]\n"
       "  %pd = Pad(%a, @pads, @pv) : i64[batch,7]\n"
       "  %c = Concat(%b, %b) {axis = 1} : i32[batch,8]\n"
       "  %s = Slice(%p, @st, @en, @ax, @sp) : bool[batch,2]\n"
       "  return %t, %pd, %c, %s\n}\n",
       4);

  char *tw = gpu_test_dense(4 * 3 * 3 * 2, 0.3, -0.3), *tb = gpu_test_dense(6, 0.5, -0.5),
       *tw1 = gpu_test_dense(2 * 2 * 3, 0.3, -0.3),
       *bm = gpu_test_dense(2 * 5 * 3, 0.5, -0.5);
  snprintf(
      text, sizeof text,
      "sym batch <= 16\n"
      "global @w : f32[4,3,3,2] = %s\n"
      "global @b : f32[6] = %s\n"
      "global @w1 : f32[2,2,3] = %s\n"
      "global @bm : f32[2,5,3] = %s\n"
      "func @forward(%%x: f32[batch,4,3,4], %%z: f32[batch,2,5], %%a: f32[batch,2,4,5], "
      "%%q: f32[batch,2,5,3]) -> (f32[batch,6,7,8], f32[batch,2,12], f32[batch,2,4,3], "
      "f32[batch,2,4,3]) {\n"
      "  %%t = ConvTranspose(%%x, @w, @b) {group = 2, strides = [2, 2], pads = [1, 0, 0, "
      "1], output_padding = [1, 0], dilations = [1, 2]} : f32[batch,6,7,8]\n"
      "  %%t1 = ConvTranspose(%%z, @w1) {strides = [3], output_shape = [12], auto_pad = "
      "\"SAME_UPPER\"} : f32[batch,2,12]\n"
      "  %%m = MatMul(%%a, @bm) : f32[batch,2,4,3]\n"
      "  %%m2 = MatMul(%%a, %%q) : f32[batch,2,4,3]\n"
      "  return %%t, %%t1, %%m, %%m2\n}\n",
      tw, tb, tw1, bm);
  free(tw), free(tb), free(tw1), free(bm);
  each("convtranspose, batched matmul", text, 4);

  each("gather, losses",
       "sym batch <= 16\n"
       "global @gi : i64[2,2] = dense<[2, -1, 0, 3]>\n"
       "global @ge : i32[3,2] = dense<[1, 0, 3, 3, 0, -2]>\n"
       "global @lab : i64[4] = dense<[0, 2, 1, 2]>\n"
       "global @lab2 : i64[2,2] = dense<[1, -100, 0, 2]>\n"
       "global @w : f32[3] = dense<[0.5, 1.0, 2.0]>\n"
       "func @forward(%x: f32[batch,4], %e: f32[3,4], %sc: f32[4,3], %s3: f32[2,3,2]) -> "
       "(f32[batch,2,2], f32[3,2], f32[4], f32[], f32[], f32[2,3,2], f32[2,2]) {\n"
       "  %g = Gather(%x, @gi) {axis = 1} : f32[batch,2,2]\n"
       "  %ge = GatherElements(%e, @ge) {axis = 1} : f32[3,2]\n"
       "  %n1 = NegativeLogLikelihoodLoss(%sc, @lab) {reduction = \"none\"} : f32[4]\n"
       "  %n2 = NegativeLogLikelihoodLoss(%sc, @lab, @w) : f32[]\n"
       "  %c1, %lp = SoftmaxCrossEntropyLoss(%s3, @lab2, @w) {ignore_index = -100, "
       "reduction = \"sum\"} : f32[], f32[2,3,2]\n"
       "  %c2 = SoftmaxCrossEntropyLoss(%s3, @lab2) {ignore_index = -100, reduction = "
       "\"none\"} : f32[2,2]\n"
       "  return %g, %ge, %n1, %n2, %c1, %lp, %c2\n}\n",
       6);
  gpu_test_generator_forms(each);
  gpu_test_rnn_forms(each);
}

#endif /* DML_GPU_TEST_UTIL_H_ */
