/* every_op.c — dml_every_op: the generated differential test of every op on
 * every backend (issue 15 item 4). From the op table (runtime/base/ops.def:
 * arity and flags), each op of a family the generator knows (below) becomes
 * one-node functions for every dtype the compiler accepts for it (f32, f16,
 * bf16, f64, i8, u8, i32, i64, bool: those ir/infer.c refuses are not
 * allowed), on random shapes, an empty dim, a row longer than 65,535 and,
 * for a few cheap ops, more than 2^24 elements; each is
 *   - compiled for cpu,<device> and checked by dml_rt_check (runtime/rt_check.c:
 *     the device's kernels against the CPU reference on random and edge
 *     inputs — NaN, +-inf, +-0, denormals, +-1e-30, +-1e15, +-3e38 — with
 *     the op's tolerance class, dml_op_tol_class of ops.def); a target
 *     refusing the form (UNIMPLEMENTED) is counted, not failed;
 *   - for f32, run on the CPU against the same function in f64 on the same
 *     inputs (random normal values times 10^U(-3, 3), and the edge values
 *     for one-input ops): scaled error |f32 - f64| / max(1, |f64|, m) within
 *     the class's tolerance, m = |the f64 function of |inputs|| for
 *     arithmetic and accumulating ops (the terms' size), NaN matching NaN,
 *     an infinity the same infinity, results below FLT_MIN none.
 * Ops of no family are listed with the reason (and counted); a case in
 * k_known (docs/kernels.md lists them) must fail, and the test fails when
 * it passes. Exit 0 when every case passes, 1 otherwise, 77 without the
 * device.
 *   dml_every_op [--device vulkan|cuda] [--compile-only cuda] [--no-big]
 *                [--pack DIR [--target cuda|vulkan]] [--seed S]
 *                [--only OP[,OP...]] [-v]
 * --compile-only T compiles every case for cpu,T (clang-16 to PTX for cuda)
 * without running it (the build machine has no GPU). --pack DIR does the
 * same for --target T (default cuda) and writes each compiled case's
 * package, DIR/eo_<id>.dmlpkg, and the manifest DIR/cases.tsv (every case
 * with its op, dtype, shape, tolerance class, known-failure reason and
 * status; the counts of ops and of the CPU's f32 against f64 run here;
 * columns in every_op_check.h) for dml_everyop_check (tests/cuda/
 * everyop_check.c) to run on a machine with the device and only the
 * runtime: its counts are the ones `--device T` prints here. The packages
 * hold no input values (dml_rt_check makes them from the seed). How a
 * checked case is counted is every_op_check.h's, shared with that checker. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_driver.h"
#include "dml_dtype.h"
#include "dml_ir_text.h"
#include "dml_ops.h"
#include "dml_package_emit.h"
#include "dml_passes.h"
#include "dml_rt.h"
#include "every_op_check.h"

/* ---- the op families the generator builds ---- */

typedef enum {
  FAM_NONE,
  FAM_UNARY,    /* elementwise, one input */
  FAM_BINARY,   /* elementwise, two inputs, broadcast [R, L] with [1, L] */
  FAM_VARIADIC, /* Max/Min/Sum/Mean of three inputs */
  FAM_WHERE,    /* Where(bool, x, y) */
  FAM_CLIP,     /* Clip(x, lo, hi), constant bounds */
  FAM_CAST,     /* Cast to f32 (to i32 from f32) */
  FAM_REDUCE,   /* ReduceX(x, axes = [-1]) keepdims */
  FAM_ARG,      /* ArgMax/ArgMin axis -1, keepdims */
  FAM_ROW,      /* Softmax, LogSoftmax, Hardmax, axis -1 */
} family_t;

/* The op's family and why not, from its ops.def facts. */
static family_t op_family(dml_op_t op, const char **why) {
  const dml_op_info_t *i = dml_op_info(op);
  *why = NULL;
  switch (op) { /* the few whose operands the flags do not tell */
    case DML_OP_WHERE: return FAM_WHERE;
    case DML_OP_CLIP: return FAM_CLIP;
    case DML_OP_CAST: return FAM_CAST;
    case DML_OP_ARG_MAX:
    case DML_OP_ARG_MIN: return FAM_ARG;
    case DML_OP_SOFTMAX:
    case DML_OP_LOG_SOFTMAX:
    case DML_OP_HARDMAX: return FAM_ROW;
    case DML_OP_BIT_SHIFT:
      *why = "needs a direction attribute and unsigned operands (not generated yet)";
      return FAM_NONE;
    case DML_OP_CAST_LIKE:
      *why = "its output dtype is its second input's (not generated yet)";
      return FAM_NONE;
    default: break;
  }
  if (i->flags & (DML_OPF_RANDOM | DML_OPF_CONTROL_FLOW | DML_OPF_COMPILE_ONLY |
                  DML_OPF_SIDE_EFFECT)) {
    *why = (i->flags & DML_OPF_RANDOM)         ? "random: checked by its own tests"
           : (i->flags & DML_OPF_CONTROL_FLOW) ? "control flow: no kernel"
           : (i->flags & DML_OPF_COMPILE_ONLY) ? "compile-only: no kernel"
                                               : "writes state: no result to compare";
    return FAM_NONE;
  }
  if (i->flags & DML_OPF_ELEMENTWISE) {
    if (i->min_inputs == 1 && i->max_inputs == 1) return FAM_UNARY;
    if (i->min_inputs == 2 && i->max_inputs == 2) return FAM_BINARY;
    if (i->max_inputs == -1) return FAM_VARIADIC;
  }
  if ((i->flags & DML_OPF_REDUCTION) && i->max_inputs == 2) return FAM_REDUCE;
  if (i->flags & DML_OPF_VIEW) {
    *why = "a view (no kernel: the bytes are the input's)";
    return FAM_NONE;
  }
  *why = "needs shape, index or attribute inputs of its own (no generator yet)";
  return FAM_NONE;
}

static int is_compare(dml_op_t op) {
  return op == DML_OP_EQUAL || op == DML_OP_LESS || op == DML_OP_LESS_OR_EQUAL ||
         op == DML_OP_GREATER || op == DML_OP_GREATER_OR_EQUAL || op == DML_OP_IS_INF ||
         op == DML_OP_IS_NAN;
}

static const dml_dtype_t k_dtypes[] = {DML_DTYPE_F32, DML_DTYPE_F16, DML_DTYPE_BF16,
                                       DML_DTYPE_F64, DML_DTYPE_I8,  DML_DTYPE_U8,
                                       DML_DTYPE_I32, DML_DTYPE_I64, DML_DTYPE_BOOL};
#define N_DTYPES (sizeof k_dtypes / sizeof k_dtypes[0])

/* A known failure: op, dtype name, backend, the reason (docs/kernels.md). */
typedef struct {
  const char *op, *dtype, *backend, *reason;
} known_t;
#define BF16_TRIG                                                                    \
  "the GPUs reduce huge arguments (bf16 edges up to 3e38) in f32; the check's move " \
  "of the inputs by two bf16 steps allows only part of it (sin(1e30) swings)"
static const known_t k_known[] = {
    {"Sin", "bf16", "vulkan", BF16_TRIG},
    {"Cos", "bf16", "vulkan", BF16_TRIG},
    {NULL, NULL, NULL, NULL},
};

static const known_t *known(const char *op, const char *dt, const char *backend) {
  for (size_t i = 0; k_known[i].op; i++)
    if (!strcmp(k_known[i].op, op) && !strcmp(k_known[i].dtype, dt) &&
        !strcmp(k_known[i].backend, backend))
      return &k_known[i];
  return NULL;
}

/* ---- IR text of one case ---- */

typedef struct {
  int64_t R, L; /* the input [R, L] */
} shape_t;

static void ty(char *b, size_t n, dml_dtype_t dt, int64_t R, int64_t L) {
  snprintf(b, n, "%s[%lld,%lld]", dml_dtype_name(dt), (long long)R, (long long)L);
}

/* The function of `op` on dtype `dt` and shape `sh` (0 when the family
 * has no form for it). */
static int case_text(dml_op_t op, family_t fam, dml_dtype_t dt, shape_t sh, char *t,
                     size_t n) {
  const char *name = dml_op_name(op);
  char tx[64], tb[64], ty_out[64];
  int64_t R = sh.R, L = sh.L;
  ty(tx, sizeof tx, dt, R, L);
  ty(tb, sizeof tb, dt, 1, L);
  dml_dtype_t odt = is_compare(op) ? DML_DTYPE_BOOL : dt;
  ty(ty_out, sizeof ty_out, odt, R, L);
  switch (fam) {
    case FAM_UNARY:
      snprintf(
          t, n,
          "func @forward(%%x: %s) -> (%s) {\n  %%y = %s(%%x) : %s\n  return %%y\n}\n", tx,
          ty_out, name, ty_out);
      return 1;
    case FAM_BINARY:
      snprintf(t, n,
               "func @forward(%%a: %s, %%b: %s) -> (%s) {\n  %%y = %s(%%a, %%b)%s : %s\n"
               "  return %%y\n}\n",
               tx, tb, ty_out, name,
               op == DML_OP_MOD && dml_dtype_is_float(dt) ? " {fmod = 1}" : "", ty_out);
      return 1;
    case FAM_VARIADIC:
      snprintf(t, n,
               "func @forward(%%a: %s, %%b: %s, %%c: %s) -> (%s) {\n"
               "  %%y = %s(%%a, %%b, %%c) : %s\n  return %%y\n}\n",
               tx, tb, tx, ty_out, name, ty_out);
      return 1;
    case FAM_WHERE: {
      char tc[64];
      ty(tc, sizeof tc, DML_DTYPE_BOOL, R, L);
      snprintf(t, n,
               "func @forward(%%c: %s, %%a: %s, %%b: %s) -> (%s) {\n"
               "  %%y = Where(%%c, %%a, %%b) : %s\n  return %%y\n}\n",
               tc, tx, tb, ty_out, ty_out);
      return 1;
    }
    case FAM_CLIP: {
      int fl = dml_dtype_is_float(dt);
      snprintf(t, n,
               "global @lo : %s[] = dense<[%s]>\nglobal @hi : %s[] = dense<[%s]>\n"
               "func @forward(%%x: %s) -> (%s) {\n  %%y = Clip(%%x, @lo, @hi) : %s\n"
               "  return %%y\n}\n",
               dml_dtype_name(dt), fl ? "-0.5" : "0", dml_dtype_name(dt),
               fl ? "2.0" : "1", tx, ty_out, ty_out);
      return 1;
    }
    case FAM_CAST: {
      dml_dtype_t to = dt == DML_DTYPE_F32 ? DML_DTYPE_I32 : DML_DTYPE_F32;
      char tt[64];
      ty(tt, sizeof tt, to, R, L);
      snprintf(t, n,
               "func @forward(%%x: %s) -> (%s) {\n  %%y = Cast(%%x) {to = %d} : %s\n"
               "  return %%y\n}\n",
               tx, tt, to == DML_DTYPE_I32 ? 6 : 1, tt);
      return 1;
    }
    case FAM_REDUCE: {
      char tr[64];
      ty(tr, sizeof tr, dt, R, 1);
      snprintf(
          t, n,
          "global @ax : i64[1] = dense<[-1]>\n"
          "func @forward(%%x: %s) -> (%s) {\n  %%y = %s(%%x, @ax) {keepdims = 1} : %s\n"
          "  return %%y\n}\n",
          tx, tr, name, tr);
      return 1;
    }
    case FAM_ARG: {
      char tr[64];
      ty(tr, sizeof tr, DML_DTYPE_I64, R, 1);
      snprintf(
          t, n,
          "func @forward(%%x: %s) -> (%s) {\n  %%y = %s(%%x) {axis = -1, keepdims = 1} "
          ": %s\n  return %%y\n}\n",
          tx, tr, name, tr);
      return 1;
    }
    case FAM_ROW:
      snprintf(t, n,
               "func @forward(%%x: %s) -> (%s) {\n  %%y = %s(%%x) {axis = -1} : %s\n"
               "  return %%y\n}\n",
               tx, ty_out, name, ty_out);
      return 1;
    default: return 0;
  }
}

/* Parses, runs the default pipeline, emits the package and adds the
 * kernels of `targets` (NULL: none). */
static dml_status_t compile_text(const char *text, const char *targets, void **bytes,
                                 size_t *size) {
  dml_ir_module_t *m = NULL;
  dml_status_t s = dml_ir_parse(text, strlen(text), "every_op.dmlir", &m);
  dml_pass_options_t o;
  memset(&o, 0, sizeof o);
  if (!s) s = dml_pass_run_pipeline(m, dml_pass_default_pipeline(), &o);
  *bytes = NULL;
  *size = 0;
  if (!s) s = dml_package_emit_memory(m, NULL, bytes, size);
  dml_ir_module_release(m);
  if (!s && targets) s = dml_compile_add_kernels(targets, NULL, bytes, size);
  if (s) {
    free(*bytes);
    *bytes = NULL;
  }
  return s;
}

/* ---- CPU f32 against f64 ---- */

static uint64_t g_rng = 1;
static double urand(void) { /* [0, 1): splitmix64 */
  uint64_t z = (g_rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (double)((z ^ (z >> 31)) >> 11) / 9007199254740992.0;
}

static const float k_edges[] = {NAN,     INFINITY, -INFINITY, 0.0f,    -0.0f, 1e-40f,
                                -1e-40f, 1.4e-45f, 1e-30f,    -1e-30f, 1e30f, -1e30f,
                                1e15f,   -1e15f,   1.0f,      -1.0f,   0.5f,  -0.5f,
                                3e38f,   -3e38f,   2.0f,      -2.0f,   88.0f, -100.0f};
#define N_EDGES (sizeof k_edges / sizeof k_edges[0])

/* Runs `text` (its f64 form when f64 is set: the same text with f64 for
 * f32) on the CPU on inputs `in` (doubles, converted), output 0 into out
 * (doubles). 0 when it did not compile or run. */
static int cpu_run(const char *text, int f64, int n_in, double *const *in,
                   const shape_t *in_shapes, const dml_dtype_t *in_dt, int64_t n_out,
                   double *out) {
  char t2[4096];
  size_t j = 0;
  for (const char *c = text; *c && j + 4 < sizeof t2; c++) {
    if (f64 && c[0] == 'f' && c[1] == '3' && c[2] == '2') {
      memcpy(t2 + j, "f64", 3);
      j += 3;
      c += 2;
    } else {
      t2[j++] = *c;
    }
  }
  t2[j] = 0;
  void *bytes = NULL;
  size_t size = 0;
  dml_status_t s = compile_text(t2, NULL, &bytes, &size);
  if (s) {
    dml_status_free(s);
    return 0;
  }
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *ss = NULL;
  s = dml_rt_model_load_memory(bytes, size, &m);
  free(bytes);
  if (!s) s = dml_rt_session_create(m, "cpu", &ss);
  void *bufs[4] = {NULL, NULL, NULL, NULL};
  for (int i = 0; !s && i < n_in; i++) {
    dml_dtype_t dt = in_dt[i] == DML_DTYPE_F32 && f64 ? DML_DTYPE_F64 : in_dt[i];
    int64_t cnt = in_shapes[i].R * in_shapes[i].L;
    bufs[i] = calloc((size_t)(cnt ? cnt : 1), dml_dtype_size(dt));
    for (int64_t e = 0; e < cnt; e++) dml_store_f64(dt, bufs[i], (size_t)e, in[i][e]);
    dml_tensor_t tt;
    memset(&tt, 0, sizeof tt);
    tt.dtype = dt;
    tt.rank = 2;
    tt.dims[0] = in_shapes[i].R;
    tt.dims[1] = in_shapes[i].L;
    tt.data = bufs[i];
    s = dml_rt_session_set_input(ss, (uint32_t)i, &tt);
  }
  if (!s) s = dml_rt_session_run(ss);
  dml_tensor_t y;
  memset(&y, 0, sizeof y);
  if (!s) s = dml_rt_session_get_output(ss, 0, &y);
  int ok = !s;
  if (ok)
    for (int64_t e = 0; e < n_out; e++) out[e] = dml_load_f64(y.dtype, y.data, (size_t)e);
  if (s) {
    fprintf(stderr, "  cpu run (%s): %s\n", f64 ? "f64" : "f32", dml_status_reason(s));
    dml_status_free(s);
  }
  for (int i = 0; i < 4; i++) free(bufs[i]);
  dml_rt_session_release(ss);
  dml_rt_model_release(m);
  return ok;
}

static const double k_class_tol[] = {0.0, 1e-5, 1e-4, 1e-4};
static const char *const k_class_name[] = {"exact", "arithmetic", "transcendental",
                                           "accumulating"};

/* The CPU's f32 against f64 for an f32 case; returns the worst scaled
 * error (INFINITY for a NaN/inf mismatch), -1 when f64 is not compiled. */
static double cpu_vs_f64(dml_op_t op, family_t fam, const char *text, shape_t sh,
                         int64_t n_out, char *where, size_t wn) {
  int n_in = fam == FAM_BINARY ? 2 : fam == FAM_VARIADIC || fam == FAM_WHERE ? 3 : 1;
  shape_t shp[3] = {sh, {1, sh.L}, sh};
  dml_dtype_t dts[3] = {DML_DTYPE_F32, DML_DTYPE_F32, DML_DTYPE_F32};
  if (fam == FAM_WHERE) {
    dts[0] = DML_DTYPE_BOOL;
    shp[1] = sh;
    shp[2] = (shape_t){1, sh.L};
  }
  double *in[3] = {NULL, NULL, NULL}, *ain[3] = {NULL, NULL, NULL};
  for (int i = 0; i < n_in; i++) {
    int64_t cnt = shp[i].R * shp[i].L;
    in[i] = (double *)calloc((size_t)(cnt ? cnt : 1), sizeof(double));
    ain[i] = (double *)calloc((size_t)(cnt ? cnt : 1), sizeof(double));
    for (int64_t e = 0; e < cnt; e++) {
      double v;
      if (dts[i] == DML_DTYPE_BOOL)
        v = urand() < 0.5;
      else if (n_in == 1 && e < (int64_t)N_EDGES && fam != FAM_REDUCE && fam != FAM_ROW)
        v = k_edges[e];
      else {
        double g = sqrt(-2.0 * log(1.0 - urand())) * cos(6.283185307179586 * urand());
        v = (float)(g * pow(10.0, -3.0 + 6.0 * urand()));
      }
      in[i][e] = v;
      ain[i][e] = dts[i] == DML_DTYPE_BOOL ? v : fabs(v);
    }
  }
  double *o32 = (double *)calloc((size_t)(n_out ? n_out : 1), sizeof(double));
  double *o64 = (double *)calloc((size_t)(n_out ? n_out : 1), sizeof(double));
  double *om = (double *)calloc((size_t)(n_out ? n_out : 1), sizeof(double));
  double worst = -1;
  dml_tol_class_t cls = dml_op_tol_class(op);
  int scaled = cls == DML_TOL_ARITH || cls == DML_TOL_ACCUM;
  if (cpu_run(text, 0, n_in, in, shp, dts, n_out, o32) &&
      cpu_run(text, 1, n_in, in, shp, dts, n_out, o64) &&
      (!scaled || cpu_run(text, 1, n_in, ain, shp, dts, n_out, om))) {
    worst = 0;
    for (int64_t e = 0; e < n_out; e++) {
      double g = o32[e], r = (double)(float)o64[e], err;
      if (isnan(g) || isnan(r))
        err = isnan(g) && isnan(r) ? 0 : INFINITY;
      else if (isinf(g) || isinf(r))
        err = g == r ? 0 : INFINITY;
      else if (fabs(g - r) < FLT_MIN)
        err = 0;
      else {
        double m = fmax(1.0, fabs(o64[e]));
        if (scaled && isfinite(om[e])) m = fmax(m, fabs(om[e]));
        err = fabs(g - r) / m;
      }
      if (err > worst) {
        worst = err;
        snprintf(where, wn, "element %lld: f32 %.9g, f64 %.17g", (long long)e, g, o64[e]);
      }
    }
  }
  for (int i = 0; i < 3; i++) {
    free(in[i]);
    free(ain[i]);
  }
  free(o32);
  free(o64);
  free(om);
  return worst;
}

/* ---- the driver ---- */

typedef struct {
  const char *device, *compile_only, *only;
  const char *pack;   /* --pack DIR: write each case's package and the manifest */
  FILE *manifest;     /* DIR/cases.tsv (every_op_check.h) */
  int n_cases;        /* cases listed in the manifest (their ids) */
  int64_t pack_bytes; /* the packages' bytes */
  int big, verbose;
  uint64_t seed;
  eo_counts_t c;
} run_t;

static const char *backend_name(const run_t *r) {
  return r->compile_only ? r->compile_only : r->device;
}

/* 1 when `name` is in the comma-separated list `only`. */
static int in_list(const char *only, const char *name) {
  size_t n = strlen(name);
  for (const char *p = only; *p;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == n && !strncmp(p, name, n)) return 1;
    if (!e) break;
    p = e + 1;
  }
  return 0;
}

/* One manifest line (--pack; the columns of EO_MANIFEST_COLUMNS), the
 * package `bytes` (NULL: none) written beside it. 0 on a write error. */
static int pack_case(run_t *r, const char *status, dml_op_t op, dml_dtype_t dt,
                     shape_t sh, const char *shape_what, const known_t *kn,
                     const void *bytes, size_t size, const char *reason) {
  if (!r->manifest) return 1;
  int id = r->n_cases++;
  char file[32] = "-", path[4096];
  if (bytes) {
    snprintf(file, sizeof file, "eo_%04d.dmlpkg", id);
    snprintf(path, sizeof path, "%s/%s", r->pack, file);
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(bytes, 1, size, f) == size;
    if (f && fclose(f)) ok = 0;
    if (!ok) {
      printf("FAIL --pack: cannot write %s\n", path);
      return 0;
    }
    r->pack_bytes += (int64_t)size;
  }
  /* the reason on one line, without tabs */
  char why[512];
  snprintf(why, sizeof why, "%s", reason && reason[0] ? reason : "-");
  for (char *p = why; *p; p++)
    if (*p == '\t' || *p == '\n' || *p == '\r') *p = ' ';
  fprintf(r->manifest, "%d\t%s\t%s\t%s\t%s\t%lld\t%lld\t%s\t%s\t%s\t%s\n", id, status,
          dml_op_name(op), dml_dtype_name(dt), shape_what, (long long)sh.R,
          (long long)sh.L, k_class_name[dml_op_tol_class(op)], kn ? kn->reason : "-",
          file, why);
  return 1;
}

/* One op x dtype x shape on the device (dml_rt_check) and, for f32, the
 * CPU against f64. */
static void run_case(run_t *r, dml_op_t op, family_t fam, dml_dtype_t dt, shape_t sh,
                     const char *shape_what) {
  char text[4096];
  if (!case_text(op, fam, dt, sh, text, sizeof text)) return;
  const char *name = dml_op_name(op), *dn = dml_dtype_name(dt);
  char targets[32];
  snprintf(targets, sizeof targets, "cpu,%s", backend_name(r));
  void *bytes = NULL;
  size_t size = 0;
  dml_status_t s = compile_text(text, NULL, &bytes, &size);
  if (s) { /* the dtype (or form) is not allowed for the op */
    if (r->verbose > 1)
      printf("  %s %s: not allowed: %s\n", name, dn, dml_status_reason(s));
    pack_case(r, "not_allowed", op, dt, sh, shape_what, NULL, NULL, 0,
              dml_status_reason(s));
    dml_status_free(s);
    r->c.n_notallowed++;
    return;
  }
  free(bytes);
  /* (an empty tensor has no values to disagree on, but its kernel compiles) */
  const known_t *kn = known(name, dn, backend_name(r));
  if (kn && !strcmp(shape_what, "empty")) kn = NULL;
  s = compile_text(text, targets, &bytes, &size);
  if (s) {
    int refused = dml_status_code(s) == DML_STATUS_UNIMPLEMENTED;
    if (refused) {
      r->c.n_refused++;
      if (r->verbose)
        printf("  %s %s %s: refused: %s\n", name, dn, shape_what, dml_status_reason(s));
    } else if (kn) {
      r->c.n_known++;
      if (r->verbose)
        printf("  known %s %s %s: %s\n%s\n", name, dn, shape_what, kn->reason,
               r->verbose > 1 ? dml_status_details(s) : "");
    } else {
      r->c.n_fail++;
      printf("FAIL %s %s %s: compile for %s: %s\n", name, dn, shape_what, targets,
             dml_status_reason(s));
    }
    pack_case(r,
              refused ? "refused"
              : kn    ? "known"
                      : "fail",
              op, dt, sh, shape_what, kn, NULL, 0, dml_status_reason(s));
    dml_status_free(s);
    return;
  }
  r->c.n_compiled++;
  if (!pack_case(r, "packed", op, dt, sh, shape_what, kn, bytes, size, NULL))
    r->c.n_fail++;
  if (!r->compile_only) {
    dml_rt_model_t *m = NULL;
    char what[512] = "";
    int passed = 0;
    s = dml_rt_model_load_memory(bytes, size, &m);
    if (s)
      snprintf(what, sizeof what, "%s", dml_status_reason(s));
    else
      passed = eo_check_model(m, r->device, r->seed, what, sizeof what);
    eo_count_checked(&r->c, passed, kn ? kn->reason : NULL, name, dn, shape_what,
                     r->device, what, r->verbose);
    dml_status_free(s);
    dml_rt_model_release(m);
  }
  free(bytes);
  /* the CPU's f32 against f64 (once per op, on the random shape) */
  if (dt == DML_DTYPE_F32 && !strcmp(shape_what, "random") && fam != FAM_CAST &&
      fam != FAM_ARG && !is_compare(op)) {
    int64_t n_out = sh.R * (fam == FAM_REDUCE ? 1 : sh.L);
    char where[256] = "";
    double w = cpu_vs_f64(op, fam, text, sh, n_out, where, sizeof where);
    if (w < 0) return; /* no f64 form */
    r->c.n_f64++;
    dml_tol_class_t c = dml_op_tol_class(op);
    const known_t *kf = known(name, "f32", "cpu-f64");
    int ok = w <= k_class_tol[c];
    if (kf && ok) {
      r->c.n_f64_fail++;
      printf("FAIL %s f32 cpu vs f64: listed as a known failure (%s) but passes\n", name,
             kf->reason);
    } else if (!kf && !ok) {
      r->c.n_f64_fail++;
      printf("FAIL %s f32 cpu vs f64 (%s, tol %g): error %.3g, %s\n", name,
             k_class_name[c], k_class_tol[c], w, where);
    } else if (r->verbose) {
      printf("  cpu vs f64 %s: %.3g (%s)\n", name, w, k_class_name[c]);
    }
  }
}

int main(int argc, char **argv) {
  run_t r;
  memset(&r, 0, sizeof r);
  r.device = "vulkan";
  r.big = 1;
  const char *target = "cuda";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--device") && i + 1 < argc)
      r.device = argv[++i];
    else if (!strcmp(argv[i], "--compile-only") && i + 1 < argc)
      r.compile_only = argv[++i];
    else if (!strcmp(argv[i], "--pack") && i + 1 < argc)
      r.pack = argv[++i];
    else if (!strcmp(argv[i], "--target") && i + 1 < argc)
      target = argv[++i];
    else if (!strcmp(argv[i], "--only") && i + 1 < argc)
      r.only = argv[++i];
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
      r.seed = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--no-big"))
      r.big = 0;
    else if (!strcmp(argv[i], "-v"))
      r.verbose++;
    else {
      fprintf(stderr,
              "usage: dml_every_op [--device vulkan|cuda] [--compile-only cuda] "
              "[--pack DIR [--target cuda|vulkan]] [--no-big] [--seed S] "
              "[--only OP[,OP...]] [-v]\n");
      return 2;
    }
  }
  if (r.pack) { /* compile every case for cpu,<target> and write them down */
    char path[4096];
    r.compile_only = target;
    snprintf(path, sizeof path, "%s/cases.tsv", r.pack);
    r.manifest = fopen(path, "w");
    if (!r.manifest) {
      fprintf(stderr, "dml_every_op: cannot write %s (does the folder exist?)\n", path);
      return 2;
    }
    fprintf(r.manifest,
            "# dml_every_op --pack: the cases of every_op compiled for cpu,%s; run them "
            "with dml_everyop_check DIR --device %s\n# target %s\n# seed %llu\n"
            "# big %d\n# only %s\n# columns " EO_MANIFEST_COLUMNS "\n",
            target, target, target, (unsigned long long)r.seed, r.big,
            r.only ? r.only : "-");
  }
  if (!r.compile_only) {
    dml_rt_device_info_t d[16];
    uint32_t n = 0;
    dml_status_t s = !strncmp(r.device, "cuda", 4) ? dml_rt_cuda_devices(d, 16, &n)
                                                   : dml_rt_vulkan_devices(d, 16, &n);
    if (s || n == 0) {
      printf("no %s device: skipped\n", r.device);
      dml_status_free(s);
      return 77;
    }
  }
  g_rng = r.seed * 7919 + 1;
  for (int op = 1; op < DML_OP_COUNT_; op++) {
    const char *why = NULL;
    family_t fam = op_family((dml_op_t)op, &why);
    if (r.only && !in_list(r.only, dml_op_name((dml_op_t)op))) continue;
    r.c.n_ops++;
    if (fam == FAM_NONE) {
      if (r.verbose) printf("  not covered: %s: %s\n", dml_op_name((dml_op_t)op), why);
      continue;
    }
    r.c.n_covered++;
    /* a random shape, an empty dim; a row longer than 65,535 (f32) */
    shape_t rnd = {1 + (int64_t)(urand() * 5), 1 + (int64_t)(urand() * 300)};
    for (size_t d = 0; d < N_DTYPES; d++) {
      run_case(&r, (dml_op_t)op, fam, k_dtypes[d], rnd, "random");
      run_case(&r, (dml_op_t)op, fam, k_dtypes[d], (shape_t){0, 7}, "empty");
    }
    run_case(&r, (dml_op_t)op, fam, DML_DTYPE_F32, (shape_t){2, 70001}, "row 70001");
    /* more than 2^24 elements: a few cheap ops */
    if (r.big && (op == DML_OP_RELU || op == DML_OP_ADD || op == DML_OP_REDUCE_SUM ||
                  op == DML_OP_REDUCE_MAX))
      run_case(&r, (dml_op_t)op, fam, DML_DTYPE_F32, (shape_t){1, (1 << 24) + 3},
               "2^24+3");
  }
  eo_print_counts(&r.c, backend_name(&r), r.compile_only ? " (compiled only)" : "");
  if (r.manifest) {
    fprintf(r.manifest, "# ops %d %d\n# cpu_f64 %d %d\n# end %d cases\n", r.c.n_ops,
            r.c.n_covered, r.c.n_f64, r.c.n_f64_fail, r.n_cases);
    int bad = fclose(r.manifest) != 0;
    printf("packed into %s: %d cases listed in cases.tsv, %d packages of %.1f MB%s\n",
           r.pack, r.n_cases, r.c.n_compiled, (double)r.pack_bytes / 1e6,
           bad ? " (cases.tsv: write error)" : "");
    if (bad) return 1;
  }
  return r.c.n_fail || r.c.n_f64_fail ? 1 : 0;
}
