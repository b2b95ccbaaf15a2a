/* test_tensor_cuda_mock.c — eager ops on CUDA tensors without a GPU: the
 * cases of test_tensor_vulkan.c (as test_tensor_cuda.c runs them) on the
 * mock driver of mock_cuda_driver.c (argv[1], through $DMLC_CUDA_DRIVER),
 * whose kernel launches this file runs on the host by the eager library's
 * contract (runtime/dml_eager_lib.h): for an elementwise row, each
 * invocation g < grid * 256 takes the elements g + it * stride (it <
 * iters) below n, reads input j at off_j + sum_d coord_d * stride_j_d
 * (32-bit arithmetic, the row's number of dims, elements of input j's
 * dtype, dml_eager_in_dtype) from the input pointer, and the value is the CPU's eager op
 * on the gathered elements; for a reduction row, the CPU's reduction of x [S0, S1, S2]
 * over axis 1 (the grid checked to cover its rows), Softmax/LogSoftmax rows the CPU's
 * op over axis 1 of x [S0, S1, 1]; for Gather rows emulate_gather, normalization rows
 * emulate_norm; for MatMul and Conv
 * rows, their sums by the contract (emulate_mm, emulate_conv). No PTX runs: what this
 * checks is everything around the kernels — dml_tensor.c's dims, strides, offsets, forms
 * and grids for CUDA, rt_cuda.c's modules, parameters, launches and the in-place reading
 * of two inputs (spans_in_place) — and the driver's view of memory: every allocation
 * freed and every module unloaded when the device closes, each kernel's module loaded
 * once. The kernels themselves run on a GPU in test_tensor_cuda (scripts/gpu_check.sh).
 * Skips (77) in a build without the PTX library. */
#include <dlfcn.h>
#include <stdint.h>

#define TEST_GPU "cuda"
#define TEST_GPU_NO_LIB "this build has no CUDA eager kernel library"
#define dml_eager_spirv dml_eager_ptx
#define dml_eager_spirv_count dml_eager_ptx_count
#define main tensor_cases_main
int tensor_cases_main(void);
#include "../tensor/test_tensor_vulkan.c"
#undef main

typedef int (*launch_fn)(const char *, const unsigned[3], const unsigned[3], void **);

static dml_rt_device_t *g_host; /* the emulator's CPU device */
static long long g_launches;

/* The CPU's eager op `op` (n_in inputs of dims/rank, input j of dtype
 * dts[j]; Clip's bounds, inputs 1 and 2, are scalars: their element 0)
 * into y. */
static int cpu_op(dml_op_t op, uint32_t n_in, void *const *xs, const dml_dtype_t *dts,
                  int32_t rank, const int64_t *dims, const dml_attr_t *attrs,
                  uint32_t n_attrs, void *y, int64_t ny) {
  dml_rt_tensor_t in[DML_EAGER_MAX_INPUTS], out;
  for (uint32_t j = 0; j < DML_EAGER_MAX_INPUTS; j++) in[j] = DML_RT_TENSOR_NONE;
  int bad = 0;
  for (uint32_t j = 0; j < n_in && !bad; j++) {
    dml_tensor_t h;
    memset(&h, 0, sizeof h);
    h.dtype = dts[j];
    h.rank = op == DML_OP_CLIP && j > 0 ? 0 : rank;
    memcpy(h.dims, dims, sizeof(int64_t) * (size_t)h.rank);
    h.data = xs[j];
    dml_status_t s = dml_rt_tensor_from_host(g_host, &h, &in[j]);
    bad = s != DML_OK;
    dml_status_free(s);
  }
  dml_status_t s =
      bad ? DML_OK : dml_rt_tensor_op(dml_op_name(op), in, n_in, attrs, n_attrs, &out, 1);
  if (!bad && s) {
    char *m = dml_status_format(s);
    fprintf(stderr, "mock launch: the CPU's %s: %s\n", dml_op_name(op), m ? m : "?");
    free(m);
    bad = 1;
  }
  dml_status_free(s);
  if (!bad) {
    dml_rt_tensor_info_t info;
    dml_status_free(dml_rt_tensor_info(out, &info));
    dml_tensor_t h;
    memset(&h, 0, sizeof h);
    h.dtype = info.dtype;
    h.rank = info.rank;
    memcpy(h.dims, info.dims, sizeof h.dims);
    h.data = y;
    int64_t n = 1;
    for (int32_t d = 0; d < info.rank; d++) n *= info.dims[d];
    s = n == ny ? dml_rt_tensor_to_host(out, &h) : DML_OK;
    bad = n != ny || s != DML_OK;
    dml_status_free(s);
    dml_status_free(dml_rt_tensor_free(out));
  }
  for (uint32_t j = 0; j < n_in; j++)
    if (in[j].id) dml_status_free(dml_rt_tensor_free(in[j]));
  return bad;
}

/* A MatMul row's contract (dml_eager_lib.h DML_EAGER_MATMUL): parameters
 * (y, A, B, unused, words) for f32; (y, x, words) for f64, A and B both in
 * x at their offsets (the f64 rows read every operand from binding 1);
 * each of the grid's blocks takes blocks w + it * grid (it < iters) below
 * BLOCKS, block w = (b * MB + mb) * NB + nb, and writes Y[b, m, n] = sum
 * over k in order of A[a_off + batch offsets + m * a_sm + k * a_sk] *
 * B[...], in the row's dtype (32-bit index arithmetic, as the kernel's).
 * The unit row (max_len 1) reads k and n with stride 1. */
#define EMULATE_MM(name, T)                                                             \
  static int name(const dml_eager_kernel_t *E, const unsigned grid[3], void **params) { \
    const int one = E->dtype == DML_DTYPE_F64; /* every operand in binding 1 */         \
    T *y = (T *)(uintptr_t) * (unsigned long long *)params[0];                          \
    const T *A = (const T *)(uintptr_t) * (unsigned long long *)params[1];              \
    const T *B = (const T *)(uintptr_t) * (unsigned long long *)params[one ? 1 : 2];    \
    const unsigned *pc = (const unsigned *)params[one ? 2 : 4];                         \
    uint32_t M = pc[DML_EAGER_MM_M], N = pc[DML_EAGER_MM_N], K = pc[DML_EAGER_MM_K];    \
    uint32_t NB = pc[DML_EAGER_MM_NB], MB = pc[DML_EAGER_MM_MB],                        \
             blocks = pc[DML_EAGER_MM_BLOCKS], iters = pc[DML_EAGER_MM_ITERS];          \
    uint32_t a_sk = E->max_len ? 1u : pc[DML_EAGER_MM_A_SK],                            \
             b_sn = E->max_len ? 1u : pc[DML_EAGER_MM_B_SN];                            \
    const uint32_t TL = DML_EAGER_MM_TILE;                                              \
    if (grid[0] != pc[DML_EAGER_MM_GRID] || (uint64_t)grid[0] * iters < blocks ||       \
        NB != (N + TL - 1) / TL || MB != (M + TL - 1) / TL)                             \
      return 1;                                                                         \
    for (uint32_t w = 0; w < blocks; w++) {                                             \
      uint32_t nb = w % NB, mb = (w / NB) % MB, bi = w / NB / MB, rest = bi;            \
      uint32_t abase = pc[DML_EAGER_MM_A_OFF], bbase = pc[DML_EAGER_MM_B_OFF];          \
      for (int d = (int)DML_EAGER_MM_BATCH - 1; d >= 0; d--) {                          \
        uint32_t e = pc[DML_EAGER_MM_BDIMS + (uint32_t)d];                              \
        uint32_t cd = d == 0 ? rest : rest % e;                                         \
        rest /= e;                                                                      \
        abase += cd * pc[DML_EAGER_MM_A_BST + (uint32_t)d];                             \
        bbase += cd * pc[DML_EAGER_MM_B_BST + (uint32_t)d];                             \
      }                                                                                 \
      for (uint32_t m = mb * TL; m < M && m < mb * TL + TL; m++)                        \
        for (uint32_t n = nb * TL; n < N && n < nb * TL + TL; n++) {                    \
          T acc = 0;                                                                    \
          for (uint32_t k = 0; k < K; k++)                                              \
            acc += A[abase + m * pc[DML_EAGER_MM_A_SM] + k * a_sk] *                    \
                   B[bbase + k * pc[DML_EAGER_MM_B_SK] + n * b_sn];                     \
          y[(bi * M + m) * N + n] = acc;                                                \
        }                                                                               \
    }                                                                                   \
    return 0;                                                                           \
  }
EMULATE_MM(emulate_mm_f32, float)
EMULATE_MM(emulate_mm_f64, double)

static int emulate_mm(const dml_eager_kernel_t *E, const unsigned grid[3],
                      void **params) {
  return E->dtype == DML_DTYPE_F64 ? emulate_mm_f64(E, grid, params)
                                   : emulate_mm_f32(E, grid, params);
}

/* A Conv row's contract (DML_EAGER_CONV): parameters (y, X, W, bias,
 * words) for f32; (y, x, words) for f64, X, W and the bias in x at their
 * offsets; element i < n of Y [N, OC, OH, OW] (each taken once by the
 * grid's invocations g + it * stride) is the bias (when HAS_BIAS) plus the
 * sum over the group's channels and the window of X (0 in the padding)
 * times W, in the row's dtype in that order. */
#define EMULATE_CONV(name, T)                                                            \
  static int name(const dml_eager_kernel_t *E, const unsigned grid[3],                   \
                  const unsigned block[3], void **params) {                              \
    const int one = E->dtype == DML_DTYPE_F64;                                           \
    T *y = (T *)(uintptr_t) * (unsigned long long *)params[0];                           \
    const T *X = (const T *)(uintptr_t) * (unsigned long long *)params[1];               \
    const T *W = (const T *)(uintptr_t) * (unsigned long long *)params[one ? 1 : 2];     \
    const T *Bi = (const T *)(uintptr_t) * (unsigned long long *)params[one ? 1 : 3];    \
    const unsigned *pc = (const unsigned *)params[one ? 2 : 4];                          \
    uint32_t n = pc[DML_EAGER_CV_N], stride = pc[DML_EAGER_CV_STRIDE],                   \
             iters = pc[DML_EAGER_CV_ITERS];                                             \
    if ((uint64_t)grid[0] * block[0] != stride || (uint64_t)iters * stride < n)          \
      return 1;                                                                          \
    uint32_t OW = pc[DML_EAGER_CV_OW], OH = pc[DML_EAGER_CV_OH],                         \
             OC = pc[DML_EAGER_CV_OC], CG = pc[DML_EAGER_CV_CG],                         \
             OCG = pc[DML_EAGER_CV_OCG], H = pc[DML_EAGER_CV_H],                         \
             Wd = pc[DML_EAGER_CV_W], KH = pc[DML_EAGER_CV_KH],                          \
             KW = pc[DML_EAGER_CV_KW], PH = pc[DML_EAGER_CV_PH],                         \
             PW = pc[DML_EAGER_CV_PW];                                                   \
    for (uint32_t i = 0; i < n; i++) {                                                   \
      uint32_t ow = i % OW, oh = i / OW % OH, oc = i / OW / OH % OC,                     \
               b = i / OW / OH / OC;                                                     \
      uint32_t g = oc / OCG;                                                             \
      T acc = pc[DML_EAGER_CV_HAS_BIAS] ? Bi[pc[DML_EAGER_CV_B_OFF] + oc] : (T)0;        \
      for (uint32_t c = 0; c < CG; c++)                                                  \
        for (uint32_t ki = 0; ki < KH; ki++)                                             \
          for (uint32_t kj = 0; kj < KW; kj++) {                                         \
            uint32_t ihp = oh * pc[DML_EAGER_CV_SH] + ki * pc[DML_EAGER_CV_DH],          \
                     iwp = ow * pc[DML_EAGER_CV_SW] + kj * pc[DML_EAGER_CV_DW];          \
            uint32_t chan = b * pc[DML_EAGER_CV_C] + g * CG + c;                         \
            T xv =                                                                       \
                ihp >= PH && ihp < PH + H && iwp >= PW && iwp < PW + Wd                  \
                    ? X[pc[DML_EAGER_CV_X_OFF] + (chan * H + ihp - PH) * Wd + iwp - PW]  \
                    : (T)0;                                                              \
            acc += xv * W[pc[DML_EAGER_CV_W_OFF] + ((oc * CG + c) * KH + ki) * KW + kj]; \
          }                                                                              \
      y[i] = acc;                                                                        \
    }                                                                                    \
    return 0;                                                                            \
  }
EMULATE_CONV(emulate_conv_f32, float)
EMULATE_CONV(emulate_conv_f64, double)

static int emulate_conv(const dml_eager_kernel_t *E, const unsigned grid[3],
                        const unsigned block[3], void **params) {
  return E->dtype == DML_DTYPE_F64 ? emulate_conv_f64(E, grid, block, params)
                                   : emulate_conv_f32(E, grid, block, params);
}

/* A Gather row's contract (dml_eager_lib.h DML_EAGER_GATHER): Y[p, k, q] =
 * X[p, j, q] with j the i64 index k (+ D when negative), 0 outside [0, D),
 * the elements moved as bytes; each element of Y written once by the grid
 * of `stride` invocations. */
static int emulate_gather(const dml_eager_kernel_t *E, const unsigned grid[3],
                          const unsigned block[3], void **params) {
  char *y = (char *)(uintptr_t) * (unsigned long long *)params[0];
  const char *x = (const char *)(uintptr_t) * (unsigned long long *)params[1];
  const unsigned *pc = (const unsigned *)params[2];
  const size_t es = dml_dtype_size((dml_dtype_t)E->dtype);
  const uint64_t n = pc[DML_EAGER_GA_N], stride = pc[DML_EAGER_GA_STRIDE],
                 iters = pc[DML_EAGER_GA_ITERS], Q = pc[DML_EAGER_GA_Q],
                 K = pc[DML_EAGER_GA_K], D = pc[DML_EAGER_GA_D];
  if ((uint64_t)grid[0] * block[0] != stride || iters * stride < n || !Q || !K) return 1;
  const int64_t *ind = (const int64_t *)(x + (size_t)pc[DML_EAGER_GA_I_OFF] * 8);
  const char *xs = x + (size_t)pc[DML_EAGER_GA_X_OFF] * es;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t q = i % Q, r = i / Q, k = r % K, p = r / K;
    int64_t j = ind[k] < 0 ? ind[k] + (int64_t)D : ind[k];
    if (j >= 0 && (uint64_t)j < D)
      memcpy(y + i * es, xs + ((p * D + (uint64_t)j) * Q + q) * es, es);
    else
      memset(y + i * es, 0, es);
  }
  return 0;
}

/* A normalization row's contract (dml_eager_lib.h DML_EAGER_NORM):
 * parameters (y, x, scale, B, words); GRID blocks of 256 (a row each) or,
 * in the per-row form (max_len's DML_EAGER_NM_FORM_PER_ROW), of
 * DML_EAGER_NM_ROW_LOCAL (an invocation per row, rows shorter than
 * DML_EAGER_NM_SHORT) taking the ROWS rows in TURNS turns; row r of LEN
 * elements of x (the row's dtype, widened to f32) at X_OFF + r * LEN into
 * y at r * LEN, channel c = r % C; the statistics of the row (the shifted
 * two-pass mean and variance; in double here, a serial f32 sum of a long
 * row drifting past the tests' tolerance, where the kernels' trees do not)
 * or the channel's mean and var (DML_EAGER_NM_FORM_GIVEN: the affine form
 * of dml_cpu_bn_affine), scale and B (f32) at their offsets and strides. */
static float nm_ld(dml_dtype_t dt, const void *x, uint64_t i) {
  if (dt == DML_DTYPE_F16) return dml_f16_to_f32(((const uint16_t *)x)[i]);
  if (dt == DML_DTYPE_BF16) return dml_bf16_to_f32(((const uint16_t *)x)[i]);
  return ((const float *)x)[i];
}
static void nm_st(dml_dtype_t dt, void *y, uint64_t i, float v) {
  if (dt == DML_DTYPE_F16)
    ((uint16_t *)y)[i] = dml_f32_to_f16(v);
  else if (dt == DML_DTYPE_BF16)
    ((uint16_t *)y)[i] = dml_f32_to_bf16(v);
  else
    ((float *)y)[i] = v;
}
static int emulate_norm(const dml_eager_kernel_t *E, const unsigned grid[3],
                        const unsigned block[3], void **params) {
  void *y = (void *)(uintptr_t) * (unsigned long long *)params[0];
  const void *x = (const void *)(uintptr_t) * (unsigned long long *)params[1];
  const float *S = (const float *)(uintptr_t) * (unsigned long long *)params[2];
  const float *B = (const float *)(uintptr_t) * (unsigned long long *)params[3];
  const unsigned *pc = (const unsigned *)params[4];
  const dml_dtype_t dt = (dml_dtype_t)E->dtype;
  const uint64_t R = pc[DML_EAGER_NM_ROWS], L = pc[DML_EAGER_NM_LEN],
                 C = pc[DML_EAGER_NM_C];
  float eps;
  memcpy(&eps, &pc[DML_EAGER_NM_EPS], 4);
  const int per_row = (E->max_len & DML_EAGER_NM_FORM_PER_ROW) != 0;
  const uint64_t rows_per_block = per_row ? DML_EAGER_NM_ROW_LOCAL : 1;
  if (grid[0] != pc[DML_EAGER_NM_GRID] ||
      block[0] != (per_row ? DML_EAGER_NM_ROW_LOCAL : 256u) ||
      (uint64_t)grid[0] * rows_per_block * pc[DML_EAGER_NM_TURNS] < R || !C ||
      (per_row && L >= DML_EAGER_NM_SHORT))
    return 1;
  for (uint64_t r = 0; r < R; r++) {
    uint64_t c = r % C, xb = pc[DML_EAGER_NM_X_OFF] + r * L, yb = r * L;
    uint64_t sb = pc[DML_EAGER_NM_S_OFF] + c * pc[DML_EAGER_NM_S_CS],
             bb = pc[DML_EAGER_NM_B_OFF] + c * pc[DML_EAGER_NM_B_CS];
    if (E->max_len & DML_EAGER_NM_FORM_GIVEN) { /* BatchNormalization */
      float a = (1.0f / sqrtf(S[pc[DML_EAGER_NM_V_OFF] + c] + eps)) * S[sb];
      float off = B[bb] - S[pc[DML_EAGER_NM_M_OFF] + c] * a;
      for (uint64_t j = 0; j < L; j++)
        nm_st(dt, y, yb + j, nm_ld(dt, x, xb + j) * a + off);
      continue;
    }
    double x0 = L ? nm_ld(dt, x, xb) : 0.0, mean = 0, ss = 0;
    for (uint64_t j = 0; j < L; j++) mean += nm_ld(dt, x, xb + j) - x0;
    mean /= (double)L;
    for (uint64_t j = 0; j < L; j++) {
      double d = nm_ld(dt, x, xb + j) - x0 - mean;
      ss += d * d;
    }
    double inv = 1.0 / sqrt(ss / (double)L + eps);
    for (uint64_t j = 0; j < L; j++) {
      double v =
          (nm_ld(dt, x, xb + j) - x0 - mean) * inv * S[sb + j * pc[DML_EAGER_NM_S_JS]];
      if (pc[DML_EAGER_NM_HAS_B]) v += B[bb + j * pc[DML_EAGER_NM_B_JS]];
      nm_st(dt, y, yb + j, (float)v);
    }
  }
  return 0;
}

/* Concat's slice-copy row (op Concat, one operand, max_len 3): element i
 * of the index space [D3, D4, D5] read from x at operand 0's offset and
 * strides and written to y at the DML_EAGER_PC_OUT offset and strides, as
 * bytes of the row's dtype; each element taken once by the grid. */
static int emulate_concat(const dml_eager_kernel_t *E, const unsigned grid[3],
                          const unsigned block[3], void **params) {
  char *y = (char *)(uintptr_t) * (unsigned long long *)params[0];
  const char *x = (const char *)(uintptr_t) * (unsigned long long *)params[1];
  const unsigned *pc = (const unsigned *)params[2];
  const size_t es = dml_dtype_size((dml_dtype_t)E->dtype);
  const uint32_t n = pc[DML_EAGER_PC_N], stride = pc[DML_EAGER_PC_STRIDE],
                 iters = pc[DML_EAGER_PC_ITERS];
  if (E->max_len != 3 || (uint64_t)grid[0] * block[0] != stride ||
      (uint64_t)iters * stride < n)
    return 1;
  const uint32_t r0 = DML_EAGER_RANK - 3;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t q = i % pc[DML_EAGER_PC_DIMS + r0 + 2],
             rest = i / pc[DML_EAGER_PC_DIMS + r0 + 2],
             l = rest % pc[DML_EAGER_PC_DIMS + r0 + 1],
             p = rest / pc[DML_EAGER_PC_DIMS + r0 + 1];
    uint32_t xi = pc[DML_EAGER_PC_IN] + p * pc[DML_EAGER_PC_IN + 1 + r0] +
                  l * pc[DML_EAGER_PC_IN + 2 + r0] + q * pc[DML_EAGER_PC_IN + 3 + r0];
    uint32_t yi = pc[DML_EAGER_PC_OUT] + p * pc[DML_EAGER_PC_OUT + 1 + r0] +
                  l * pc[DML_EAGER_PC_OUT + 2 + r0] + q * pc[DML_EAGER_PC_OUT + 3 + r0];
    memcpy(y + (size_t)yi * es, x + (size_t)xi * es, es);
  }
  return 0;
}

/* MaxPool's Indices row (DML_EAGER_POOLIDX): each window's taps in
 * order, the CPU's rule (the first tap inside X, then a greater value or a
 * NaN over a number), the index nc * H * W plus the offset, row- or
 * column-major. */
static int emulate_poolidx(const dml_eager_kernel_t *E, const unsigned grid[3],
                           const unsigned block[3], void **params) {
  int64_t *y = (int64_t *)(uintptr_t) * (unsigned long long *)params[0];
  const char *x = (const char *)(uintptr_t) * (unsigned long long *)params[1];
  const unsigned *pc = (const unsigned *)params[2];
  const dml_dtype_t dt = (dml_dtype_t)E->dtype;
  const uint64_t n = pc[DML_EAGER_PI_N], stride = pc[DML_EAGER_PI_STRIDE],
                 iters = pc[DML_EAGER_PI_ITERS];
  if ((uint64_t)grid[0] * block[0] != stride || iters * stride < n) return 1;
  const uint64_t Dd = pc[DML_EAGER_PI_D], H = pc[DML_EAGER_PI_H], W = pc[DML_EAGER_PI_W],
                 OD = pc[DML_EAGER_PI_OD], OH = pc[DML_EAGER_PI_OH],
                 OW = pc[DML_EAGER_PI_OW];
  for (uint64_t i = 0; i < n; i++) {
    uint64_t ow = i % OW, oh = i / OW % OH, od = i / OW / OH % OD, nc = i / OW / OH / OD,
             pos = 0;
    double acc = 0;
    int64_t iacc = 0;
    int found = 0;
    const int isint = dml_dtype_is_int(dt), isu64 = dt == DML_DTYPE_U64;
    for (uint64_t kk = 0; kk < pc[DML_EAGER_PI_KD]; kk++)
      for (uint64_t ki = 0; ki < pc[DML_EAGER_PI_KH]; ki++)
        for (uint64_t kj = 0; kj < pc[DML_EAGER_PI_KW]; kj++) {
          uint64_t idp = od * pc[DML_EAGER_PI_SD] + kk * pc[DML_EAGER_PI_DD],
                   ihp = oh * pc[DML_EAGER_PI_SH] + ki * pc[DML_EAGER_PI_DH],
                   iwp = ow * pc[DML_EAGER_PI_SW] + kj * pc[DML_EAGER_PI_DW];
          if (idp < pc[DML_EAGER_PI_PD] || idp >= pc[DML_EAGER_PI_PD] + Dd ||
              ihp < pc[DML_EAGER_PI_PH] || ihp >= pc[DML_EAGER_PI_PH] + H ||
              iwp < pc[DML_EAGER_PI_PW] || iwp >= pc[DML_EAGER_PI_PW] + W)
            continue;
          uint64_t off =
              ((idp - pc[DML_EAGER_PI_PD]) * H + (ihp - pc[DML_EAGER_PI_PH])) * W +
              (iwp - pc[DML_EAGER_PI_PW]);
          uint64_t at = pc[DML_EAGER_PI_X_OFF] + nc * Dd * H * W + off;
          /* the integers compared exactly in their dtype (u64 unsigned) */
          if (isint) {
            int64_t iv = dml_load_i64(dt, x, (size_t)at);
            if (!found || (isu64 ? (uint64_t)iv > (uint64_t)iacc : iv > iacc))
              iacc = iv, pos = off;
            found = 1;
            continue;
          }
          /* f16, bf16 widened to f32; f64 as the CPU reads it */
          double v = dt == DML_DTYPE_F16    ? dml_f16_to_f32(((const uint16_t *)x)[at])
                     : dt == DML_DTYPE_BF16 ? dml_bf16_to_f32(((const uint16_t *)x)[at])
                     : dt == DML_DTYPE_F32  ? ((const float *)x)[at]
                                            : dml_load_f64(dt, x, (size_t)at);
          if (!found || v > acc || (v != v && acc == acc)) acc = v, pos = off;
          found = 1;
        }
    if (pc[DML_EAGER_PI_ORDER]) pos = pos / (W * H) + pos / W % H * Dd + pos % W * Dd * H;
    y[i] = (int64_t)(nc * Dd * H * W + pos);
  }
  return 0;
}

/* Kernel row k's contract on the host; 0 or a CUresult (1: invalid). */
static int emulate(const char *entry, const unsigned grid[3], const unsigned block[3],
                   void **params) {
  unsigned k = 0;
  if (sscanf(entry, "dml_eager_%u", &k) != 1 || k >= dml_eager_ptx_count) return 1;
  const dml_eager_kernel_t *E = &dml_eager_ptx[k];
  if (block[0] != E->local[0] || block[1] != E->local[1] || block[2] != E->local[2] ||
      grid[1] != 1 || grid[2] != 1 || !grid[0])
    return 1;
  g_launches++;
  if (E->kind == DML_EAGER_MATMUL) return emulate_mm(E, grid, params);
  if (E->kind == DML_EAGER_CONV) return emulate_conv(E, grid, block, params);
  if (E->kind == DML_EAGER_GATHER) return emulate_gather(E, grid, block, params);
  if (E->kind == DML_EAGER_NORM) return emulate_norm(E, grid, block, params);
  if (E->op == DML_OP_CONCAT) return emulate_concat(E, grid, block, params);
  if (E->kind == DML_EAGER_POOLIDX) return emulate_poolidx(E, grid, block, params);
  char *y = (char *)(uintptr_t) * (unsigned long long *)params[0];
  const char *x = (const char *)(uintptr_t) * (unsigned long long *)params[1];
  const unsigned *pc = (const unsigned *)params[2];
  dml_dtype_t dts[DML_EAGER_MAX_INPUTS]; /* each operand's dtype (Where's bool) */
  size_t ess[DML_EAGER_MAX_INPUTS];      /* and its elements' bytes */
  for (uint32_t j = 0; j < DML_EAGER_MAX_INPUTS; j++)
    dts[j] = dml_eager_in_dtype(E, j), ess[j] = dml_dtype_size(dts[j]);
  dml_attr_t cast_to; /* Cast's to */
  memset(&cast_to, 0, sizeof cast_to);
  cast_to.name = "to";
  cast_to.kind = DML_ATTR_INT;
  cast_to.i = dml_dtype_onnx_code((dml_dtype_t)E->out_dtype);
  if (E->kind == DML_EAGER_REDUCE) {
    int64_t S[3] = {pc[0], pc[1], pc[2]}, rows = S[0] * S[2];
    /* one invocation per row (a grid counted in rows), or one block per
     * row (a constant grid of 65,535 blocks: as many as there are rows,
     * looping over the others) */
    if (E->items[0].c ? (int64_t)grid[0] * block[0] < rows
                      : (int64_t)grid[0] < (rows < 65535 ? rows : 65535))
      return 1;
    int64_t axis = 1;
    dml_attr_t a[3];
    memset(a, 0, sizeof a);
    a[0].name = "axes";
    a[0].kind = DML_ATTR_INTS;
    a[0].n = 1;
    a[0].ints = &axis;
    a[1].name = "keepdims";
    a[1].kind = DML_ATTR_INT;
    a[1].i = 1;
    /* ArgMax/ArgMin: `axis` and the row's select_last_index */
    int arg = E->op == DML_OP_ARG_MAX || E->op == DML_OP_ARG_MIN;
    if (arg) a[0].name = "axis", a[0].kind = DML_ATTR_INT, a[0].i = 1;
    a[2].name = "select_last_index";
    a[2].kind = DML_ATTR_INT;
    a[2].i = E->select_last;
    void *xs[1] = {(void *)x};
    dml_dtype_t dt = (dml_dtype_t)E->dtype;
    if (E->op == DML_OP_SOFTMAX || E->op == DML_OP_LOG_SOFTMAX) {
      /* x [S0, S1, S2 = 1] over axis 1, y as x */
      a[0].name = "axis", a[0].kind = DML_ATTR_INT, a[0].i = 1;
      return S[2] != 1 || cpu_op(E->op, 1, xs, &dt, 3, S, a, 1, y, rows * S[1]);
    }
    return cpu_op(E->op, 1, xs, &dt, 3, S, a, arg ? 3u : 2u, y, rows);
  }
  uint32_t n = pc[DML_EAGER_PC_N], stride = pc[DML_EAGER_PC_STRIDE],
           iters = pc[DML_EAGER_PC_ITERS];
  if ((uint64_t)grid[0] * block[0] != stride || (uint64_t)iters * stride < n) return 1;
  const int lo = (int)(DML_EAGER_RANK - (uint32_t)E->max_len);
  char *g[DML_EAGER_MAX_INPUTS] = {NULL};
  for (uint32_t j = 0; j < E->n_inputs; j++)
    g[j] = (char *)malloc((size_t)n * ess[j] + ess[j]);
  uint8_t *done = (uint8_t *)calloc((size_t)n + 1, 1);
  for (uint64_t gid = 0; gid < stride; gid++)
    for (uint32_t it = 0; it < iters; it++) {
      uint32_t i = (uint32_t)(gid + (uint64_t)it * stride);
      if (i >= n) continue;
      uint32_t coord[DML_EAGER_RANK] = {0}, rest = i;
      for (int d = (int)DML_EAGER_RANK - 1; d >= lo; d--) {
        uint32_t e = pc[DML_EAGER_PC_DIMS + (uint32_t)d];
        coord[d] = d == lo ? rest : rest % e;
        rest /= e;
      }
      for (uint32_t j = 0; j < E->n_inputs; j++) {
        uint32_t w = DML_EAGER_PC_IN + j * DML_EAGER_PC_IN_WORDS, idx = pc[w];
        for (int d = lo; d < (int)DML_EAGER_RANK; d++)
          idx += coord[d] * pc[w + 1 + (uint32_t)d];
        memcpy(g[j] + (size_t)i * ess[j], x + (size_t)idx * ess[j], ess[j]);
      }
      done[i]++;
    }
  int bad = 0;
  for (uint32_t i = 0; i < n; i++) bad |= done[i] != 1;
  /* Clip's bounds: every element read is the scalar's (stride 0) */
  for (uint32_t j = 1; E->op == DML_OP_CLIP && j < E->n_inputs && !bad; j++)
    for (uint32_t i = 1; i < n; i++)
      bad |= memcmp(g[j] + (size_t)i * ess[j], g[j], ess[j]);
  int64_t dn = n;
  if (!bad && E->op == DML_OP_IDENTITY) memcpy(y, g[0], (size_t)n * ess[0]);
  if (!bad && E->op != DML_OP_IDENTITY) {
    void *gv[DML_EAGER_MAX_INPUTS];
    for (uint32_t j = 0; j < DML_EAGER_MAX_INPUTS; j++) gv[j] = g[j];
    /* the attributes of the ops of dml_eager_attr_words: the words
     * DML_EAGER_PC_ATTR (f32 bits, dml_eager_lib.h) */
    float w[DML_EW_MAX_ATTRS];
    memcpy(w, &pc[DML_EAGER_PC_ATTR], sizeof w);
    dml_attr_t at[4], use[4];
    uint32_t na = ew_other_attrs(E->op, at), nu = 0;
    for (uint32_t i = 0; i < na; i++) {
      at[i].f = w[i];
      if (at[i].kind == DML_ATTR_FLOAT || w[i] != 0) use[nu++] = at[i];
    }
    memset(use + nu, 0, sizeof(dml_attr_t) * (4 - nu));
    if (E->op == DML_OP_MOD) {
      use[nu].name = "fmod", use[nu].kind = DML_ATTR_INT, use[nu++].i = w[0] != 0;
    } else if (E->op == DML_OP_IS_INF) {
      use[nu].name = "detect_positive", use[nu].kind = DML_ATTR_INT;
      use[nu++].i = w[0] != 0;
      use[nu].name = "detect_negative", use[nu].kind = DML_ATTR_INT;
      use[nu++].i = w[1] != 0;
    } else if (E->op == DML_OP_BIT_SHIFT) {
      use[nu].name = "direction", use[nu].kind = DML_ATTR_STRING;
      use[nu++].s = w[0] != 0 ? "LEFT" : "RIGHT";
    } else if (E->op == DML_OP_SHRINK) {
      use[nu].name = "lambd", use[nu].kind = DML_ATTR_FLOAT, use[nu++].f = w[0];
      use[nu].name = "bias", use[nu].kind = DML_ATTR_FLOAT, use[nu++].f = w[1];
    }
    bad = dml_eager_attr_words(E->op)
              ? cpu_op(E->op, E->n_inputs, gv, dts, 1, &dn, use, nu, y, dn)
              : cpu_op(E->op, E->n_inputs, gv, dts, 1, &dn, &cast_to,
                       E->op == DML_OP_CAST ? 1 : 0, y, dn);
  }
  for (uint32_t j = 0; j < E->n_inputs; j++) free(g[j]);
  free(done);
  return bad;
}

int main(int argc, char **argv) {
  if (!dml_eager_ptx_count) {
    printf("SKIP: " TEST_GPU_NO_LIB "\n");
    return 77;
  }
  if (argc != 2) {
    fprintf(stderr, "usage: test_tensor_cuda_mock MOCK_DRIVER.so\n");
    return 2;
  }
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  void (*set_launch)(launch_fn) = NULL;
  void (*stats)(long long *, long long *, int *, int *, int *) = NULL;
  if (h) {
    *(void **)&set_launch = dlsym(h, "dml_mock_cuda_set_launch");
    *(void **)&stats = dlsym(h, "dml_mock_cuda_stats");
  }
  if (!set_launch || !stats) {
    fprintf(stderr, "cannot load the mock driver %s: %s\n", argv[1], dlerror());
    return 1;
  }
  set_launch(emulate);
  setenv("DMLC_CUDA_DRIVER", argv[1], 1);
  CHECK_OK(dml_rt_device_open("cpu", &g_host));
  int rc = tensor_cases_main(); /* opens and closes the cuda device */
  if (rc == 77) return 77;      /* no cuda device (a build without CUDA) */
  long long live = -1, bytes = -1;
  int loaded = 0, alive = -1, most = 0;
  stats(&live, &bytes, &loaded, &alive, &most);
  printf(
      "mock driver: %lld launches, %d modules loaded (at most %d of one kernel), %d "
      "alive and %lld allocations (%lld bytes) left after the device closed\n",
      g_launches, loaded, most, alive, live, bytes);
  int bad = live != 0 || bytes != 0 || alive != 0 || most != 1 || loaded < 50;
  if (bad) fprintf(stderr, "FAILED: the mock driver's memory or modules\n");
  dml_rt_device_close(g_host);
  return rc || bad ? 1 : 0;
}
