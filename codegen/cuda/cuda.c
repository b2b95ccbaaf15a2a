/* cuda.c — kernel IR -> CUDA C -> PTX (clang-16) -> cubins (ptxas), and the
 * "kernels.cuda" package section (dml_codegen.h, docs/kernels.md "CUDA"). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "c_emit.h"
#include "cuda_internal.h"
#include "dml_codegen.h"
#include "dml_kpkg.h"
#include "kernel_sincos.h"

#define DML_SRC(...) #__VA_ARGS__

extern char **environ;

#define OP "codegen.cuda"

/* The built-in variables are locals the kernel defines from the PTX special
 * registers; the scalar functions are the prelude's (below). */
static const dml_cdialect_t k_cuda = {
    {"gid_x", "gid_y", "lid_x", "lid_y", "wg_x", "wg_y"},
    "pc.sym[%d]",
    "__builtin_nanf(\"\")",
    "__builtin_inff()",
    "(-__builtin_inff())",
    "f",
    {"(-", "__builtin_fabsf(", "dml_exp(", "dml_log(", "__builtin_sqrtf(", "dml_tanh(",
     "dml_sigmoid(", "__builtin_floorf(", "__builtin_ceilf(", "(1.0f / ", "dml_sin(",
     "dml_cos(", "(", "(", "(", "(", "__builtin_fmaxf(", "__builtin_fminf(", "dml_pow("},
    {"", "", "", "", "", "", "", "", "", "", "", "", " + ", " - ", " * ", " / ", ", ",
     ", ", ", "},
    {")", ")", ")", ")", ")", ")", ")", ")", ")", ")", ")", ")", ")", ")", ")", ")", ")",
     ")", ")"},
    "__syncthreads();",
    "unsigned",
    {"float", "long long", "int", "bool", "int", "int", "float", "float", "double", "int",
     "int", "unsigned", "unsigned long long"},
    0,
    "ll",
    "ull",
    "(",
    " != 0)",
    "(unsigned char)(",
    " ? 1 : 0)",
    "(int)(",
    "(unsigned char)(",
    "(signed char)(",
    "(unsigned)(",
    "(unsigned short)(",
    "(short)(",
    {[DML_KF_ABS] = "__builtin_fabs(",
     [DML_KF_SQRT] = "__builtin_sqrt(",
     [DML_KF_FLOOR] = "__builtin_floor(",
     [DML_KF_CEIL] = "__builtin_ceil(",
     [DML_KF_EXP] = "dml_exp64(",
     [DML_KF_LOG] = "dml_log64("},
    "dml_max(",
    "dml_min(",
    "dml_abs(",
    "dml_sign(",
    "((const float *)__builtin_assume_aligned(tile%u + ",
    ", 16))[",
    "dml_opaque(",
    "__builtin_bit_cast(float, (unsigned)(",
    "dml_cvt_h2f(",
    "#pragma unroll %d",
};

/* Added to the prelude of kernels with typed values (c_emit.h): integer
 * max/min/abs, sign of every dtype, dml_idiv, the truncated remainder
 * dml_fmod and ONNX Mod's dml_imod (the divisor's sign), as C++ overloads
 * (a divisor of 0 gives 0, of -1 gives -a and 0, as on the CPU); the
 * unsigned dml_udiv / dml_umod, the f64 overloads, and the macros of
 * c_emit.h's f16/bf16 helpers (which follow when the kernel holds f16 or
 * bf16 values). */
static const char k_typed_prelude[] =
    "#define DML_INT_FNS(T)                                                   \\\n"
    "  DML_DEV T dml_max(T a, T b) { return a > b ? a : b; }                  \\\n"
    "  DML_DEV T dml_min(T a, T b) { return a < b ? a : b; }                  \\\n"
    "  DML_DEV T dml_abs(T a) { return a < 0 ? -a : a; }                      \\\n"
    "  DML_DEV T dml_sign(T a) { return (T)((a > 0) - (a < 0)); }             \\\n"
    "  DML_DEV T dml_idiv(T a, T b) { return b == 0 ? 0 : b == -1 ? -a : a / b; } \\\n"
    "  DML_DEV T dml_fmod(T a, T b) { return (b == 0 || b == -1) ? 0 : a % b; } \\\n"
    "  DML_DEV T dml_imod(T a, T b) {                                         \\\n"
    "    T r = dml_fmod(a, b);                                                \\\n"
    "    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;                 \\\n"
    "  }                                                                      \\\n"
    "  DML_DEV T dml_ipow(T a, T e) { /* wraps: unsigned products */          \\\n"
    "    if (e < 0) return a == 1 ? 1 : a == -1 ? ((e & 1) ? -1 : 1) : 0;     \\\n"
    "    unsigned long long r = 1, b = (unsigned long long)a;                 \\\n"
    "    while (e) {                                                          \\\n"
    "      if (e & 1) r *= b;                                                 \\\n"
    "      b *= b;                                                            \\\n"
    "      e >>= 1;                                                           \\\n"
    "    }                                                                    \\\n"
    "    return (T)r;                                                         \\\n"
    "  }\n"
    "DML_INT_FNS(long long)\n"
    "DML_INT_FNS(int)\n"
    "DML_DEV float dml_sign(float x) { return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x; }\n"
    "DML_FMOD_FN(DML_DEV, float, __builtin_nanf(\"\"), __builtin_fabsf, "
    "__builtin_isinf)\n"
    "DML_DEV double dml_sign(double x) { return x > 0.0 ? 1.0 : x < 0.0 ? -1.0 : x; }\n"
    "DML_FMOD_FN(DML_DEV, double, __builtin_nan(\"\"), __builtin_fabs, __builtin_isinf)\n"
    "DML_DEV double dml_abs(double a) { return __builtin_fabs(a); }\n"
    "#define DML_ORD_FNS(T)                                                   \\\n"
    "  DML_DEV T dml_max(T a, T b) { return a > b ? a : b; }                  \\\n"
    "  DML_DEV T dml_min(T a, T b) { return a < b ? a : b; }\n"
    "DML_ORD_FNS(double)\n"
    "/* unsigned (u32, u64): a divisor of 0 gives 0, as on the CPU */\n"
    "#define DML_UINT_FNS(T)                                                  \\\n"
    "  DML_ORD_FNS(T)                                                         \\\n"
    "  DML_DEV T dml_udiv(T a, T b) { return b == 0 ? 0 : a / b; }           \\\n"
    "  DML_DEV T dml_umod(T a, T b) { return b == 0 ? 0 : a % b; }\n"
    "DML_UINT_FNS(unsigned)\n"
    "DML_UINT_FNS(unsigned long long)\n"
    "#define DML_FN DML_DEV\n"
    "#define DML_U unsigned\n"
    "/* binary16 <-> f32 by the hardware (c_emit.h dml_cemit_half_helpers) */\n"
    "DML_DEV unsigned dml_cvt_f2h(float f) {\n"
    "  unsigned short h;\n"
    "  asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f));\n"
    "  return h;\n"
    "}\n"
    "/* dml_cvt_h2f is also the dialect's h2f_arith: a convolution tap's f16\n"
    " * load (a NaN canonical after the fma anyway), without dml_h2f's select */\n"
    "DML_DEV float dml_cvt_h2f(unsigned h) {\n"
    "  float f;\n"
    "  asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"((unsigned short)h));\n"
    "  return f;\n"
    "}\n"
    "#define DML_F2H_NATIVE(f) dml_cvt_f2h(f)\n"
    "#define DML_H2F_NATIVE(h) dml_cvt_h2f(h)\n"
    "#define DML_F2U(x) __builtin_bit_cast(unsigned, x)\n"
    "#define DML_U2F(x) __builtin_bit_cast(float, x)\n"
    "#define DML_DINF __builtin_inf()\n"
    "#define DML_DNAN __builtin_nan(\"\")\n"
    "#define DML_FLOOR __builtin_floor\n"
    "#define DML_EXP2I(k) __builtin_bit_cast(double, (unsigned long long)((k) + 1023) << "
    "52)\n"
    "#define DML_DEXP(x) ((int)(__builtin_bit_cast(unsigned long long, x) >> 52) - "
    "1023)\n";

/* dml_philox32 / dml_philox24 (c_emit.h): the word of element i of a
 * random stream and its 24 random bits, Philox4x32-10 as runtime/base/dml_philox.c
 * computes it (the 32x32 -> 64 products as 64-bit multiplies: PTX mul.wide.u32). */
static const char k_philox_prelude[] =
    "DML_DEV unsigned dml_philox32(unsigned i, unsigned stream, int s0, int s1, int t0,\n"
    "                              int t1) {\n"
    "  unsigned x0 = i >> 2, x1 = 0u, x2 = stream, x3 = (unsigned)t0;\n"
    "  unsigned k0 = (unsigned)s0, k1 = (unsigned)s1 ^ (unsigned)t1;\n"
    "#pragma unroll\n"
    "  for (int r = 0; r < 10; r++) {\n"
    "    if (r > 0) { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }\n"
    "    unsigned long long p0 = 0xD2511F53ull * x0, p1 = 0xCD9E8D57ull * x2;\n"
    "    unsigned y0 = (unsigned)(p1 >> 32) ^ x1 ^ k0;\n"
    "    unsigned y2 = (unsigned)(p0 >> 32) ^ x3 ^ k1;\n"
    "    x1 = (unsigned)p1;\n"
    "    x3 = (unsigned)p0;\n"
    "    x0 = y0;\n"
    "    x2 = y2;\n"
    "  }\n"
    "  unsigned j = i & 3u;\n"
    "  unsigned w = j == 0u ? x0 : j == 1u ? x1 : j == 2u ? x2 : x3;\n"
    "  return w;\n"
    "}\n"
    "DML_DEV int dml_philox24(unsigned i, unsigned stream, int s0, int s1, int t0,\n"
    "                         int t1) {\n"
    "  return (int)(dml_philox32(i, stream, s0, s1, t0, t1) >> 8);\n"
    "}\n";

/* Compiled with clang -nocudainc -nocudalib: no CUDA headers, no
 * libdevice. The attributes are clang's; the math is NVVM builtins (PTX
 * instructions) with the accuracy noted per function, well inside the
 * 1e-4 the GPU tests allow against the CPU's libm. */
static const char k_prelude[] =
    "/* dmlc CUDA prelude: no CUDA headers (compiled with -nocudainc -nocudalib) */\n"
    "#define __global__ __attribute__((global))\n"
    "#define __device__ __attribute__((device))\n"
    "#define __shared__ __attribute__((shared))\n"
    "#define DML_DEV static __device__ __attribute__((always_inline)) inline\n"
    "typedef struct dml_syms { unsigned sym[DML_NSYM]; } dml_syms_t;\n"
    "/* x, which the compiler cannot see as a constant (c_emit.h opaque_pre):\n"
    " * no min/max instruction made of a select with a zero arm */\n"
    "DML_DEV float dml_opaque(float x) {\n"
    "  __asm__(\"\" : \"+f\"(x));\n"
    "  return x;\n"
    "}\n"
    "DML_DEV double dml_opaque(double x) {\n"
    "  __asm__(\"\" : \"+d\"(x));\n"
    "  return x;\n"
    "}\n"
    "/* exp(x) = 2^h * 2^l with h = fl(x*log2 e) and l its rounding error (fma):\n"
    " * ex2.approx's 2^-22.5 relative error, not x*log2 e's rounding */\n"
    "DML_DEV float dml_exp(float x) {\n"
    "  float h = x * 1.44269504f;\n"
    "  float l = __builtin_fabsf(x) < 88.0f\n"
    "                ? __builtin_fmaf(x, 1.44269504f, -h) + x * 1.92596299e-8f : 0.0f;\n"
    "  return __nvvm_ex2_approx_f(h) * (1.0f + l * 0.693147181f);\n"
    "}\n"
    "/* lg2.approx: absolute error of log below 2^-22 * ln 2 */\n"
    "DML_DEV float dml_log(float x) { return __nvvm_lg2_approx_f(x) * 0.693147181f; }\n"
    "DML_DEV float dml_sigmoid(float x) { return 1.0f / (1.0f + dml_exp(-x)); }\n"
    "/* odd Taylor series below 0.125 (error < 1e-9), else 1 - 2/(e^2|x| + 1) */\n"
    "DML_DEV float dml_tanh(float x) {\n"
    "  float a = __builtin_fabsf(x);\n"
    "  if (a < 0.125f) {\n"
    "    float x2 = x * x;\n"
    "    return x * (1.0f + x2 * (-0.333333333f + x2 * (0.133333333f + x2 * "
    "-0.0539682540f)));\n"
    "  }\n"
    "  float t = 1.0f - 2.0f / (dml_exp(2.0f * a) + 1.0f);\n"
    "  return x < 0.0f ? -t : t;\n"
    "}\n"
    "/* dml_sin, dml_cos: codegen/kernel_sincos.h, as in GLSL and MSL */\n"
    "#define DML_SC_FN DML_DEV\n"
    "#define DML_SC_U unsigned\n"
    "#define DML_SC_F2U(x) __builtin_bit_cast(unsigned, x)\n"
    "#define DML_SC_MULHI(a, b) ((unsigned)((unsigned long long)(a) * (b) >> 32))\n"
    "#define DML_SC_FLOOR(x) __builtin_floorf(x)\n"
    "#define DML_SC_PRECISE\n" DML_SINCOS_SRC
    "\n"
    "/* as C's powf for finite operands: negative bases need integral exponents */\n"
    "DML_DEV float dml_pow(float a, float b) {\n"
    "  if (b == 0.0f) return 1.0f;\n"
    "  float r = __nvvm_ex2_approx_f(b * __nvvm_lg2_approx_f(__builtin_fabsf(a)));\n"
    "  if (a < 0.0f) {\n"
    "    if (__builtin_floorf(b) != b) return __builtin_nanf(\"\");\n"
    "    if (__builtin_fmodf(b, 2.0f) != 0.0f) r = -r;\n"
    "  }\n"
    "  return r;\n"
    "}\n";

const dml_cdialect_t *dml_cuda_dialect(void) {
  return &k_cuda;
}

const char *dml_cuda_prelude(void) {
  return k_prelude;
}

void dml_cuda_typed_helpers(dml_sb_t *b, const dml_kernel_t *k) {
  uint32_t views = dml_kernel_views(k), dts = dml_kernel_dtypes(k);
  if (!(views & DML_KVIEW_TYPED)) return;
  dml_sb_printf(
      b, "%s%s%s", dml_c_fmod_macro, k_typed_prelude,
      dts & ((1u << DML_KT_F16) | (1u << DML_KT_BF16)) ? dml_cemit_half_helpers : "");
  if (dts & (1u << DML_KT_F64)) dml_cemit_f64_math(b, "");
}

void dml_cuda_typed_views(dml_sb_t *b, const dml_kernel_t *k) {
  static const char *const elem[DML_KT_COUNT_] = {
      "", "long long", "int",   "unsigned char",  "",         "signed char",       "",
      "", "double",    "short", "unsigned short", "unsigned", "unsigned long long"};
  uint32_t views = dml_kernel_views(k);
  for (int buf = 0; buf < 2; buf++)
    for (int t = DML_KT_I64; t < DML_KT_COUNT_; t++)
      if (views & DML_KVIEW(buf, t))
        dml_sb_printf(b, "  %s%s *%s = (%s%s *)%s;\n", buf ? "const " : "", elem[t],
                      dml_cemit_view((dml_kbuf_t)buf, (dml_kdtype_t)t),
                      buf ? "const " : "", elem[t], buf ? "weights" : "arena");
}

dml_status_t dml_codegen_cuda(const dml_kernel_t *k, uint32_t n_symbols,
                              char **out_text) {
  if (n_symbols > DML_KPKG_MAX_SYMBOLS)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                           "%u symbols exceed the %u kernel parameter words", n_symbols,
                           DML_KPKG_MAX_SYMBOLS);
  DML_RETURN_IF_ERROR(dml_cemit_check_ctabs(k, OP));
  dml_sb_t b = {0};
  dml_sb_printf(&b, "// dmlc kernel %s (%s)\n#define DML_NSYM %u\n%s", k->name,
                dml_kernel_kind_name(k->kind), n_symbols ? n_symbols : 1, k_prelude);
  dml_cuda_typed_helpers(&b, k);
  uint32_t views = dml_kernel_views(k);
  if (views & DML_KVIEW_RAND) dml_sb_printf(&b, "%s", k_philox_prelude);
  dml_cemit_ctabs(&b, &k_cuda, k);
  /* the eager library's further operands (DML_KBUF_IN2/IN3, f32): both
   * pointers after weights when the kernel reads either, as rt_cuda.c's
   * run_kernel_bufs passes them */
  int extra = (views & (DML_KVIEW_IN2 | DML_KVIEW_IN3)) != 0;
  dml_sb_printf(
      &b,
      "extern \"C\" __global__ void __attribute__((launch_bounds(%u)))\n"
      "%s(float *__restrict__ arena, %sfloat *__restrict__ weights, %s"
      "dml_syms_t pc) {\n",
      k->local[0] * k->local[1] * k->local[2], k->name, k->writes_weights ? "" : "const ",
      extra ? "const float *__restrict__ in2, const float *__restrict__ in3, " : "");
  if (extra) dml_sb_printf(&b, "  (void)in2, (void)in3;\n");
  dml_sb_printf(&b,
                "  const unsigned lid_x = __nvvm_read_ptx_sreg_tid_x();\n"
                "  const unsigned lid_y = __nvvm_read_ptx_sreg_tid_y();\n"
                "  const unsigned wg_x = __nvvm_read_ptx_sreg_ctaid_x();\n"
                "  const unsigned wg_y = __nvvm_read_ptx_sreg_ctaid_y();\n"
                "  const unsigned gid_x = wg_x * %uu + lid_x;\n"
                "  const unsigned gid_y = wg_y * %uu + lid_y;\n"
                "  (void)gid_x, (void)gid_y, (void)arena, (void)weights, (void)pc;\n",
                k->local[0], k->local[1]);
  /* typed views: pointer casts of the same buffers */
  dml_cuda_typed_views(&b, k);
  for (uint32_t t = 0; t < k->n_tiles; t++)
    dml_sb_printf(&b, "  __shared__ __attribute__((aligned(16))) %s tile%u[%u];\n",
                  k_cuda.type[k->tile_dtype[t]], t, k->tile_elems[t]);
  dml_cemit_regs(&b, &k_cuda, k);
  dml_cemit_stmts(&b, &k_cuda, k->body, 1);
  dml_sb_printf(&b, "}\n");
  if (b.oom) {
    free(b.p);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  }
  *out_text = b.p;
  return DML_OK;
}

/* ---- tools ---- */

static int executable(const char *p) {
  return p && *p && access(p, X_OK) == 0;
}

/* `name` found in $PATH (copied into buf), or NULL. */
static const char *in_path(const char *name, char *buf, size_t cap) {
  const char *path = getenv("PATH");
  if (!path) return NULL;
  while (*path) {
    const char *e = strchr(path, ':');
    size_t n = e ? (size_t)(e - path) : strlen(path);
    if (n && (size_t)snprintf(buf, cap, "%.*s/%s", (int)n, path, name) < cap &&
        executable(buf))
      return buf;
    path += n;
    if (*path == ':') path++;
  }
  return NULL;
}

#ifndef DMLC_CLANG_CUDA_DEFAULT
#define DMLC_CLANG_CUDA_DEFAULT ""
#endif

const char *dml_codegen_cuda_clang(void) {
  static char buf[4096];
  const char *e = getenv("DMLC_CLANG");
  if (e && *e) return executable(e) ? e : NULL;
  if (executable(DMLC_CLANG_CUDA_DEFAULT)) return DMLC_CLANG_CUDA_DEFAULT;
  return in_path("clang-16", buf, sizeof buf);
}

const char *dml_codegen_cuda_ptxas(void) {
  static char buf[4096];
  const char *e = getenv("DMLC_PTXAS");
  if (e) return executable(e) ? e : NULL; /* DMLC_PTXAS= (empty): none */
  if (executable("/usr/local/cuda/bin/ptxas")) return "/usr/local/cuda/bin/ptxas";
  return in_path("ptxas", buf, sizeof buf);
}

/* A private temporary directory and the files the tools read and write. */
typedef struct tmp {
  char dir[512];
  char src[600], ptx[600], bin[600], err[600];
} tmp_t;

static dml_status_t tmp_open(tmp_t *t) {
  const char *base = getenv("TMPDIR");
  if (!base || !*base) base = "/tmp";
  snprintf(t->dir, sizeof t->dir, "%s/dmlc-cuda-XXXXXX", base);
  if (!mkdtemp(t->dir))
    return dml_status_make(DML_STATUS_IO, OP,
                           "cannot create a temporary directory in %s: %s", base,
                           strerror(errno));
  snprintf(t->src, sizeof t->src, "%s/k.cu", t->dir);
  snprintf(t->ptx, sizeof t->ptx, "%s/k.ptx", t->dir);
  snprintf(t->bin, sizeof t->bin, "%s/k.cubin", t->dir);
  snprintf(t->err, sizeof t->err, "%s/log.txt", t->dir);
  return DML_OK;
}

static void tmp_close(tmp_t *t) {
  unlink(t->src);
  unlink(t->ptx);
  unlink(t->bin);
  unlink(t->err);
  rmdir(t->dir);
}

static dml_status_t write_file(const char *path, const void *d, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return dml_status_make(DML_STATUS_IO, OP, "cannot write %s: %s", path,
                           strerror(errno));
  size_t w = fwrite(d, 1, n, f);
  if (fclose(f) != 0 || w != n)
    return dml_status_make(DML_STATUS_IO, OP, "cannot write %s", path);
  return DML_OK;
}

/* The whole file (NUL-terminated besides), or NULL. */
static char *read_file(const char *path, size_t *out_n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *p = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (n + 65536 + 1 > cap) {
      cap = cap ? cap * 2 : 65536 * 2;
      char *q = (char *)realloc(p, cap);
      if (!q) {
        free(p);
        fclose(f);
        return NULL;
      }
      p = q;
    }
    size_t r = fread(p + n, 1, 65536, f);
    n += r;
    if (r < 65536) break;
  }
  fclose(f);
  p[n] = 0;
  if (out_n) *out_n = n;
  return p;
}

/* Runs argv (argv[0] a path) with stdout and stderr into t->err; an error
 * with the tool's exit status and output when it fails. */
static dml_status_t run_tool(tmp_t *t, char *const argv[], const char *what) {
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa))
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP,
                           "posix_spawn: out of memory");
  posix_spawn_file_actions_addopen(&fa, 1, t->err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc)
    return dml_status_make(DML_STATUS_IO, OP, "cannot start %s (%s): %s", what, argv[0],
                           strerror(rc));
  int st = 0;
  while (waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR)
      return dml_status_make(DML_STATUS_IO, OP, "waitpid(%s): %s", what, strerror(errno));
  }
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return DML_OK;
  size_t n = 0;
  char *log = read_file(t->err, &n);
  dml_status_t s =
      WIFEXITED(st)
          ? dml_status_make(DML_STATUS_INTERNAL, OP, "%s (%s) failed with exit status %d",
                            what, argv[0], WEXITSTATUS(st))
          : dml_status_make(DML_STATUS_INTERNAL, OP, "%s (%s) was killed by signal %d",
                            what, argv[0], WTERMSIG(st));
  if (log && n) s = dml_status_detail(s, "%.4000s", log);
  free(log);
  return s;
}

static dml_status_t ptx_in(tmp_t *t, const char *clang, const char *src, int sm,
                           char **out_ptx, size_t *out_n) {
  DML_RETURN_IF_ERROR(write_file(t->src, src, strlen(src)));
  char arch[64], cpath[600];
  snprintf(arch, sizeof arch, "--cuda-gpu-arch=sm_%d", sm);
  /* an empty CUDA path: the output must not depend on a toolkit's presence */
  snprintf(cpath, sizeof cpath, "--cuda-path=%s", t->dir);
  char *argv[] = {(char *)clang,
                  "-x",
                  "cuda",
                  "--cuda-device-only",
                  arch,
                  cpath,
                  "-nocudainc",
                  "-nocudalib",
                  "-O3",
                  "-S",
                  "-Wno-unknown-cuda-version",
                  "-Xclang",
                  "-target-feature",
                  "-Xclang",
                  "+ptx78",
                  "-o",
                  t->ptx,
                  t->src,
                  NULL};
  unlink(t->ptx);
  DML_RETURN_IF_ERROR(run_tool(t, argv, "clang (CUDA C -> PTX)"));
  char *ptx = read_file(t->ptx, out_n);
  if (!ptx)
    return dml_status_make(DML_STATUS_IO, OP, "cannot read clang's output %s", t->ptx);
  *out_ptx = ptx;
  return DML_OK;
}

/* A cubin of `ptx` for sm_<sm> (sm_<sm>a with `arch_specific`). */
static dml_status_t cubin_in(tmp_t *t, const char *ptxas, const char *ptx, size_t n,
                             int sm, int arch_specific, void **out, size_t *out_n) {
  DML_RETURN_IF_ERROR(write_file(t->ptx, ptx, n));
  char arch[64];
  snprintf(arch, sizeof arch, "-arch=sm_%d%s", sm, arch_specific ? "a" : "");
  char *argv[] = {(char *)ptxas, arch, "-O3", "-o", t->bin, t->ptx, NULL};
  unlink(t->bin);
  DML_RETURN_IF_ERROR(run_tool(t, argv, "ptxas (PTX -> cubin)"));
  char *bin = read_file(t->bin, out_n);
  if (!bin)
    return dml_status_make(DML_STATUS_IO, OP, "cannot read ptxas's output %s", t->bin);
  *out = bin;
  return DML_OK;
}

static dml_status_t no_clang(void) {
  return dml_status_detail(
      dml_status_make(
          DML_STATUS_FAILED_PRECONDITION, OP,
          "clang-16 not found: the cuda target compiles CUDA C to PTX with it"),
      "install Debian's clang-16 (scripts/setup.sh) or set DMLC_CLANG to a clang >= 16");
}

dml_status_t dml_codegen_cuda_ptx(const char *src, int sm, char **out_ptx) {
  const char *clang = dml_codegen_cuda_clang();
  if (!clang) return no_clang();
  tmp_t t;
  DML_RETURN_IF_ERROR(tmp_open(&t));
  size_t n = 0;
  dml_status_t s = ptx_in(&t, clang, src, sm, out_ptx, &n);
  tmp_close(&t);
  return s;
}

dml_status_t dml_codegen_cuda_cubin(const char *ptx, int sm, void **out, size_t *out_n) {
  const char *ptxas = dml_codegen_cuda_ptxas();
  if (!ptxas)
    return dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                           "ptxas not found (DMLC_PTXAS, /usr/local/cuda/bin, PATH)");
  tmp_t t;
  DML_RETURN_IF_ERROR(tmp_open(&t));
  dml_status_t s = cubin_in(&t, ptxas, ptx, strlen(ptx), sm, 0, out, out_n);
  tmp_close(&t);
  return s;
}

/* ---- the section ---- */

/* Parses --cuda-arch: NULL/"" = PTX for sm_80 and, when ptxas is found,
 * cubins for sm_80 and sm_90; "ptx" = PTX only; else a list "sm_80,sm_90"
 * (cubins for each, ptxas required; PTX for the lowest). */
static dml_status_t parse_arch(const char *spec, int *ptx_sm, int *sms, int *n_sms,
                               const char **ptxas) {
  *n_sms = 0;
  *ptx_sm = 80;
  *ptxas = dml_codegen_cuda_ptxas();
  if (!spec || !*spec) {
    if (*ptxas) {
      sms[0] = 80;
      sms[1] = 90;
      *n_sms = 2;
    }
    return DML_OK;
  }
  if (!strcmp(spec, "ptx")) return DML_OK;
  const char *p = spec;
  while (*p) {
    int sm = 0, used = 0;
    if (sscanf(p, "sm_%d%n", &sm, &used) != 1 || sm < 50 || sm > 199 ||
        (p[used] && p[used] != ',') || *n_sms >= 8)
      return dml_status_detail(
          dml_status_make(DML_STATUS_INVALID_ARGUMENT, "compile", "bad --cuda-arch '%s'",
                          spec),
          "expected 'ptx' or a comma-separated list of up to 8 of sm_50 .. sm_199, "
          "e.g. sm_80,sm_90");
    sms[(*n_sms)++] = sm;
    p += used;
    if (*p == ',') p++;
  }
  if (!*ptxas)
    return dml_status_detail(
        dml_status_make(DML_STATUS_FAILED_PRECONDITION, "compile",
                        "--cuda-arch %s needs ptxas, which was not found", spec),
        "looked in DMLC_PTXAS, /usr/local/cuda/bin and PATH; '--cuda-arch ptx' "
        "stores PTX only");
  *ptx_sm = sms[0];
  for (int i = 1; i < *n_sms; i++)
    if (sms[i] < *ptx_sm) *ptx_sm = sms[i];
  return DML_OK;
}

typedef struct wbuf {
  uint8_t *p;
  size_t n, cap;
  int oom;
} wbuf_t;

static void w_bytes(wbuf_t *w, const void *d, size_t n) {
  if (w->oom) return;
  if (w->n + n + 4 > w->cap) {
    size_t cap = w->cap ? w->cap : 65536;
    while (cap < w->n + n + 4) cap *= 2;
    uint8_t *p = (uint8_t *)realloc(w->p, cap);
    if (!p) {
      w->oom = 1;
      return;
    }
    w->p = p;
    w->cap = cap;
  }
  memcpy(w->p + w->n, d, n);
  w->n += n;
}

static void w_u32(wbuf_t *w, uint32_t v) {
  uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
  w_bytes(w, b, 4);
}

static void w_image(wbuf_t *w, uint32_t kind, int sm, const void *d, size_t n) {
  static const uint8_t zeros[4] = {0};
  w_u32(w, kind);
  w_u32(w, (uint32_t)sm);
  w_u32(w, (uint32_t)n);
  w_bytes(w, d, n);
  w_bytes(w, zeros, (4 - n % 4) % 4);
}

/* The sm_90a (wgmma) images of tensor-core kernel K: its PTX and, with
 * `cubin`, ptxas's cubin for sm_90a, appended to `w`. */
static dml_status_t add_sm90a(tmp_t *t, const char *clang, const char *ptxas,
                              const dml_kernel_t *K, uint32_t n_symbols, int cubin,
                              wbuf_t *w) {
  char *src = NULL, *ptx = NULL, *ptx90a = NULL;
  size_t n = 0;
  DML_RETURN_IF_ERROR(dml_codegen_cuda_wgmma(K, n_symbols, &src));
  dml_status_t s = ptx_in(t, clang, src, 90, &ptx, &n);
  free(src);
  if (!s) s = dml_codegen_cuda_sm90a_ptx(ptx, &ptx90a);
  free(ptx);
  if (s) return s;
  n = strlen(ptx90a);
  w_image(w, DML_KPKG_CUDA_PTX_ARCH, 90, ptx90a, n);
  if (cubin) {
    void *bin = NULL;
    size_t bn = 0;
    s = cubin_in(t, ptxas, ptx90a, n, 90, 1, &bin, &bn);
    if (!s) w_image(w, DML_KPKG_CUDA_CUBIN_ARCH, 90, bin, bn);
    free(bin);
  }
  free(ptx90a);
  return s;
}

/* One kernel's code: the CUDA image container (dml_kpkg.h). A tensor-core
 * kernel gets (`mma`: 0 the plain form, 1 the TF32 tensor-core form, 2
 * the f16/bf16 one, 3 the f16/bf16 attention form) that form for ptx_sm
 * and `sms` and, with `sm90a`, the wgmma form besides where it applies
 * (GEMMs only: dml_codegen_cuda_wgmma_applies). */
static dml_status_t build_kernel(tmp_t *t, const char *clang, const char *ptxas,
                                 const dml_kernel_t *K, uint32_t n_symbols, int mma,
                                 int sm90a, int ptx_sm, const int *sms, int n_sms,
                                 uint8_t **out, uint32_t *out_n) {
  char *src = NULL, *ptx = NULL;
  size_t ptx_n = 0;
  DML_RETURN_IF_ERROR(mma == 3   ? dml_codegen_cuda_attn(K, n_symbols, &src)
                      : mma == 2 ? dml_codegen_cuda_mma16(K, n_symbols, &src)
                      : mma      ? dml_codegen_cuda_mma(K, n_symbols, &src)
                                 : dml_codegen_cuda(K, n_symbols, &src));
  dml_status_t s = ptx_in(t, clang, src, ptx_sm, &ptx, &ptx_n);
  free(src);
  if (s) return s;
  wbuf_t w = {0};
  w_u32(&w, DML_KPKG_CUDA_MAGIC);
  int cubin90 = 0;
  for (int i = 0; i < n_sms; i++) cubin90 |= sms[i] == 90;
  sm90a = (mma == 1 || mma == 2) && sm90a && dml_codegen_cuda_wgmma_applies(K);
  w_u32(&w, (uint32_t)(1 + n_sms + (sm90a ? 1 + cubin90 : 0)));
  w_image(&w, DML_KPKG_CUDA_PTX, ptx_sm, ptx, ptx_n);
  for (int i = 0; !s && i < n_sms; i++) {
    void *bin = NULL;
    size_t bn = 0;
    s = cubin_in(t, ptxas, ptx, ptx_n, sms[i], 0, &bin, &bn);
    if (!s) w_image(&w, DML_KPKG_CUDA_CUBIN, sms[i], bin, bn);
    free(bin);
  }
  free(ptx);
  if (!s && sm90a) s = add_sm90a(t, clang, ptxas, K, n_symbols, cubin90, &w);
  if (!s && (w.oom || w.n > DML_KPKG_MAX_CODE_BYTES))
    s = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP,
                        "kernel %s: out of memory or code over %u bytes", K->name,
                        DML_KPKG_MAX_CODE_BYTES);
  if (s) {
    free(w.p);
    return dml_status_annotate(s, "kernel %s", K->name);
  }
  *out = w.p;
  *out_n = (uint32_t)w.n;
  return DML_OK;
}

/* One kernel to build: its plan entry, form (build_kernel's `mma`) and
 * table entry; `st` its result. */
typedef struct kjob {
  const dml_kernel_t *K;
  int mode;
  dml_kpkg_kernel_t *o;
  dml_status_t st;
} kjob_t;

typedef struct kpool {
  kjob_t *jobs;
  uint32_t n, next;
  pthread_mutex_t mu;
  const char *clang, *ptxas;
  uint32_t n_symbols;
  int sm90a, ptx_sm, n_sms;
  const int *sms;
} kpool_t;

static void *kpool_main(void *arg) {
  kpool_t *p = (kpool_t *)arg;
  tmp_t t;
  dml_status_t open_st = tmp_open(&t);
  for (;;) {
    pthread_mutex_lock(&p->mu);
    uint32_t i = p->next < p->n ? p->next++ : p->n;
    pthread_mutex_unlock(&p->mu);
    if (i >= p->n) break;
    kjob_t *j = &p->jobs[i];
    if (open_st) {
      j->st =
          dml_status_make(dml_status_code(open_st), OP, "%s", dml_status_reason(open_st));
      continue;
    }
    uint8_t *code = NULL;
    j->st = build_kernel(&t, p->clang, p->ptxas, j->K, p->n_symbols, j->mode, p->sm90a,
                         p->ptx_sm, p->sms, p->n_sms, &code, &j->o->code_bytes);
    j->o->code = code;
  }
  if (open_st)
    dml_status_free(open_st);
  else
    tmp_close(&t);
  return NULL;
}

/* Parallel clang/ptxas runs: DMLC_CUDA_JOBS (1..256) or the online CPUs
 * (at most 64). */
static uint32_t kpool_threads(uint32_t n_jobs) {
  const char *e = getenv("DMLC_CUDA_JOBS");
  char *end = NULL;
  long v = e && *e ? strtol(e, &end, 10) : 0;
  if (!(e && *e && !*end && v >= 1 && v <= 256)) {
    v = sysconf(_SC_NPROCESSORS_ONLN);
    if (v < 1) v = 1;
    if (v > 64) v = 64;
  }
  return (uint32_t)v < n_jobs ? (uint32_t)v : n_jobs;
}

/* Builds the jobs (build_kernel each, on kpool_threads threads, each with
 * its own temporary directory); the kernels' code does not depend on the
 * thread count. Returns the error of the first job that failed (in job
 * order, so the message does not depend on scheduling), the others freed. */
static dml_status_t kpool_run(kpool_t *p) {
  uint32_t nt = kpool_threads(p->n);
  pthread_t th[256];
  uint32_t started = 0;
  p->next = 0;
  pthread_mutex_init(&p->mu, NULL);
  for (uint32_t i = 1; i < nt; i++) {
    if (pthread_create(&th[started], NULL, kpool_main, p)) break; /* fewer threads */
    started++;
  }
  kpool_main(p); /* this thread works too */
  for (uint32_t i = 0; i < started; i++) pthread_join(th[i], NULL);
  pthread_mutex_destroy(&p->mu);
  dml_status_t s = DML_OK;
  for (uint32_t i = 0; i < p->n; i++) {
    if (!p->jobs[i].st) continue;
    if (!s)
      s = p->jobs[i].st;
    else
      dml_status_free(p->jobs[i].st);
    p->jobs[i].st = DML_OK;
  }
  return s;
}

static void free_table(dml_kpkg_t *k) {
  for (uint32_t f = 0; f < k->n_functions; f++) {
    for (uint32_t i = 0; i < k->functions[f].n_kernels; i++) {
      free((void *)k->functions[f].kernels[i].code);
      free(k->functions[f].kernels[i].nodes);
    }
    free(k->functions[f].kernels);
  }
  free(k->functions);
}

static void to_lin(dml_klin_t l, dml_kpkg_lin_t *o) {
  o->c0 = l.c0;
  o->c = l.c;
  o->sym = l.sym;
  o->more = l.more;
}

dml_status_t dml_codegen_cuda_section(const dml_pkg_graph_t *g, const uint8_t *weights,
                                      uint64_t weights_size, const char *cuda_arch,
                                      int allow_tf32, FILE *print, void **out_bytes,
                                      size_t *out_size) {
  return dml_codegen_cuda_section_fb(g, weights, weights_size, cuda_arch, allow_tf32,
                                     print, NULL, NULL, out_bytes, out_size);
}

dml_status_t dml_codegen_cuda_section_fb(const dml_pkg_graph_t *g, const uint8_t *weights,
                                         uint64_t weights_size, const char *cuda_arch,
                                         int allow_tf32, FILE *print,
                                         dml_codegen_fallback_t *fb,
                                         dml_kctab_place_t *ctabs, void **out_bytes,
                                         size_t *out_size) {
  if (!fb) DML_RETURN_IF_ERROR(dml_codegen_check_ops("cuda", g));
  int ptx_sm = 80, sms[8], n_sms = 0;
  const char *ptxas = NULL;
  DML_RETURN_IF_ERROR(parse_arch(cuda_arch, &ptx_sm, sms, &n_sms, &ptxas));
  /* the wgmma form of TF32 and f16/bf16 GEMMs (sm_90a images) unless --cuda-arch lists
   * architectures without sm_90 */
  int sm90a = n_sms == 0;
  for (int i = 0; i < n_sms; i++) sm90a |= sms[i] == 90;
  const char *clang = dml_codegen_cuda_clang();
  if (!clang) return no_clang();
  dml_kpkg_t k = {DML_KPKG_TARGET_CUDA, 0, NULL};
  dml_status_t s = DML_OK;
  if (g->n_functions) {
    k.functions = (dml_kpkg_function_t *)calloc(g->n_functions, sizeof *k.functions);
    if (!k.functions)
      s = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  }
  for (uint32_t f = 0; !s && f < g->n_functions; f++) {
    dml_kplan_t *p = NULL;
    /* the CPU fall-back (dml_codegen_sections_fb): what the target cannot
     * emit runs on the host, per segment (DML_KK_HOST entries between the
     * device's kernels) or the whole function (left out of the section);
     * recorded in fb */
    dml_status_t why = DML_OK;
    uint32_t n_host = 0;
    char where[128] = "whole function";
    s = fb ? dml_codegen_place("cuda", g, f, weights, weights_size, &p, &n_host, &why,
                               where, sizeof where)
           : dml_kschedule(g, f, weights, weights_size, &p);
    if (s) break;
    if (!p) {
      s = dml_codegen_fallback_add(fb, "cuda", g, f, where, why);
      continue;
    }
    if (why) s = dml_codegen_fallback_add(fb, "cuda", g, f, where, why);
    if (!s) s = dml_kplan_place_ctabs(p, ctabs); /* large tables into the weights */
    if (s) {
      dml_kplan_release(p);
      break;
    }
    if (print) dml_kplan_print(p, g, print);
    dml_kpkg_function_t *fn = &k.functions[k.n_functions];
    k.n_functions++;
    fn->function = f;
    if (p->n_kernels) {
      fn->kernels = (dml_kpkg_kernel_t *)calloc(p->n_kernels, sizeof *fn->kernels);
      if (!fn->kernels)
        s = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
      else
        fn->n_kernels = p->n_kernels;
    }
    kpool_t pool = {0};
    pool.clang = clang;
    pool.ptxas = ptxas;
    pool.n_symbols = g->n_symbols;
    pool.sm90a = sm90a;
    pool.ptx_sm = ptx_sm;
    pool.sms = sms;
    pool.n_sms = n_sms;
    if (!s && p->n_kernels) {
      pool.jobs = (kjob_t *)calloc(p->n_kernels, sizeof *pool.jobs);
      if (!pool.jobs)
        s = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
    }
    for (uint32_t i = 0; !s && i < p->n_kernels; i++) {
      const dml_kernel_t *K = &p->kernels[i];
      dml_kpkg_kernel_t *o = &fn->kernels[i];
      /* TF32 tensor cores (sm_80+) replace the GEMM main loop when allowed */
      int mma = allow_tf32 && ptx_sm >= 80 && dml_codegen_cuda_mma_applies(K);
      /* f16/bf16 GEMMs and implicit-GEMM convolutions: tensor cores always
       * (sm_80+; f32 accumulation) */
      int h16 = !mma && ptx_sm >= 80 && dml_codegen_cuda_mma16_applies(K);
      /* fused f16/bf16 attention: tensor cores (sm_80+; cuda_attn.c) */
      int fa = !mma && !h16 && ptx_sm >= 80 && dml_codegen_cuda_attn_applies(K);
      if (fa)
        snprintf(o->name, sizeof o->name, "%.20s_fa_%s", K->name,
                 K->attn->dtype == DML_KT_BF16 ? "bf16" : "f16");
      else if (h16)
        snprintf(o->name, sizeof o->name, "%.20s_mma_%s", K->name,
                 K->gemm->dtype == DML_KT_BF16 ? "bf16" : "f16");
      else
        snprintf(o->name, sizeof o->name, mma ? "%s_tf32" : "%s", K->name);
      o->kind = (uint32_t)K->kind;
      o->n_nodes = K->n_nodes;
      o->nodes = (uint32_t *)malloc(K->n_nodes * sizeof(uint32_t));
      if (!o->nodes) {
        s = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
        break;
      }
      memcpy(o->nodes, K->nodes, K->n_nodes * sizeof(uint32_t));
      uint32_t local[3];
      dml_klin_t items[3];
      memcpy(local, K->local, sizeof local);
      memcpy(items, K->items, sizeof items);
      if (mma) dml_codegen_cuda_mma_geometry(K, local, items);
      if (h16) dml_codegen_cuda_mma16_geometry(K, local, items);
      if (fa) dml_codegen_cuda_attn_geometry(K, local, items);
      memcpy(o->local, local, sizeof o->local);
      for (int d = 0; d < 3; d++) to_lin(items[d], &o->items[d]);
      to_lin(K->flops, &o->flops);
      to_lin(K->bytes, &o->bytes);
      if (K->kind == DML_KK_HOST) continue; /* host nodes: no code (dml_kpkg.h) */
      kjob_t *j = &pool.jobs[pool.n++];
      j->K = K;
      j->mode = fa ? 3 : h16 ? 2 : mma;
      j->o = o;
    }
    /* the code of every kernel of the function: clang and ptxas in parallel */
    if (!s && pool.n) s = kpool_run(&pool);
    free(pool.jobs);
    if (s) s = dml_status_annotate(s, "function '%s'", g->functions[f].name);
    dml_kplan_release(p);
  }
  if (!s) s = dml_kpkg_encode(&k, out_bytes, out_size);
  free_table(&k);
  return s;
}
