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
 *                [--only OP[,OP...]] [--dtypes DT[,DT...]] [-v]
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
  FAM_FORM,     /* the forms of k_forms (below) */
} family_t;

static int op_has_form(dml_op_t op);

/* The op's family and why not, from its ops.def facts. */
static family_t op_family(dml_op_t op, const char **why) {
  const dml_op_info_t *i = dml_op_info(op);
  *why = NULL;
  if (op_has_form(op)) return FAM_FORM;
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
  static const struct {
    dml_op_t op;
    const char *why;
  } k_why[] = {
      {DML_OP_SHAPE, "its value is the input's shape: folded to a constant (no kernel)"},
      {DML_OP_SIZE, "its value is the input's size: folded to a constant (no kernel)"},
      {DML_OP_CONSTANT_OF_SHAPE,
       "its input is a shape: folded to a constant (no kernel)"},
      {DML_OP_RANGE, "its output's size is its inputs' values (not generated)"},
      {DML_OP_DROPOUT, "the identity in inference (removed by the passes)"},
      {DML_OP_HANN_WINDOW, "its input is a size: folded to a constant (no kernel)"},
      {DML_OP_HAMMING_WINDOW, "its input is a size: folded to a constant (no kernel)"},
      {DML_OP_BLACKMAN_WINDOW, "its input is a size: folded to a constant (no kernel)"},
      {DML_OP_MEL_WEIGHT_MATRIX,
       "its inputs are sizes: folded to a constant (no kernel)"},
      {DML_OP_TF_IDF_VECTORIZER,
       "needs an n-gram vocabulary (attributes): not generated"},
      {DML_OP_TREE_ENSEMBLE, "needs a trained tree ensemble (attributes): not generated"},
  };
  for (size_t k = 0; k < sizeof k_why / sizeof k_why[0]; k++)
    if (k_why[k].op == op) {
      *why = k_why[k].why;
      return FAM_NONE;
    }
  if (i->flags & DML_OPF_STRINGS) {
    *why = "strings: CPU only";
    return FAM_NONE;
  }
  *why = "needs shape, index or attribute inputs of its own (no form in k_forms yet)";
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

/* A known failure: op (or "Op:form"), dtype name, backend, shape label
 * (NULL: every shape but the empty one), the reason (docs/kernels.md). */
typedef struct {
  const char *op, *dtype, *backend, *shape, *reason;
} known_t;
static const known_t k_known[] = {
    {NULL, NULL, NULL, NULL, NULL},
};

static const known_t *known(const char *op, const char *dt, const char *backend,
                            const char *shape) {
  for (size_t i = 0; k_known[i].op; i++)
    if (!strcmp(k_known[i].op, op) && !strcmp(k_known[i].dtype, dt) &&
        !strcmp(k_known[i].backend, backend) &&
        (!k_known[i].shape || !strcmp(k_known[i].shape, shape)))
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

#define k_edges eo_edges /* every_op_check.h */
#define N_EDGES EO_N_EDGES

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

/* ---- the forms of the ops whose operands the flags do not tell ----
 *
 * Each is the IR text of a one-node function (shape inference gives the
 * result types) with placeholders expanded per case (form_expand):
 *   $T             the dtype of the case (each of k_dtypes, or of `dtypes`)
 *   ${EXPR}        an integer: + - * / ( ) min(a, b) max(a, b) of the
 *                  numbers and R, L (the case's shape: random R in 1..5 and
 *                  L in 1..300, the empty R = 0, the row L = 70,001)
 *   ${i:N:LO:HI}   N seeded random integers in [LO, HI), comma-separated
 *                  (index, axis and shape constants; none when N is 0)
 * The function's float and data operands are its arguments (dml_rt_check
 * feeds them random and edge values; integer arguments get 0 or 1);
 * indices, shapes and the other constant operands are globals. `rows`: the
 * form also runs with L = 70,001 (its L is a row, a reduction's length or
 * a spatial extent). Add a form here to cover an op (docs/kernels.md). */
typedef struct {
  const char *op;     /* ops.def name */
  const char *form;   /* variant label (the case is "Op:form"), or NULL */
  const char *dtypes; /* comma-separated dtype names to try, NULL: k_dtypes */
  int rows;           /* 1: also L = 70,001 (f32) */
  const char *text;
} form_t;

#define FN1(X) "func @forward(" X ") -> (?[?]) {\n"
#define FN2(X) "func @forward(" X ") -> (?[?], ?[?]) {\n"
#define RET1 "  return %y\n}\n"
#define RET2 "  return %y, %z\n}\n"
#define UINTS "u8,u16,u32,u64"
#define QDT "u8,i8"
static const form_t k_forms[] = {
    /* data movement */
    {"Transpose", NULL, NULL, 1,
     FN1("%x: $T[R,3,L]") "  %y = Transpose(%x) {perm = [2, 0, 1]}\n" RET1},
    {"Slice", "step2", NULL, 1,
     "global @s : i64[2] = dense<[0, 1]>\nglobal @e : i64[2] = dense<[${R}, ${L}]>\n"
     "global @a : i64[2] = dense<[0, 1]>\nglobal @p : i64[2] = dense<[1, 2]>\n" FN1(
         "%x: $T[R,L]") "  %y = Slice(%x, @s, @e, @a, @p)\n" RET1},
    {"Slice", "reverse", NULL, 0,
     "global @s : i64[1] = dense<[-1]>\nglobal @e : i64[1] = dense<[${-L-1}]>\n"
     "global @a : i64[1] = dense<[1]>\nglobal @p : i64[1] = dense<[-1]>\n" FN1(
         "%x: $T[R,L]") "  %y = Slice(%x, @s, @e, @a, @p)\n" RET1},
    {"Gather", NULL, NULL, 1,
     "global @i : i64[2,3] = dense<[${i:6:-L:L}]>\n" FN1(
         "%x: $T[R,L]") "  %y = Gather(%x, @i) {axis = 1}\n" RET1},
    {"GatherElements", NULL, NULL, 1,
     "global @i : i64[${R},4] = dense<[${i:R*4:-L:L}]>\n" FN1(
         "%x: $T[R,L]") "  %y = GatherElements(%x, @i) {axis = 1}\n" RET1},
    {"GatherND", NULL, NULL, 1,
     "global @i : i64[${R},1] = dense<[${i:R:0:L}]>\n" FN1(
         "%x: $T[R,L]") "  %y = GatherND(%x, @i) {batch_dims = 1}\n" RET1},
    {"ScatterElements", NULL, NULL, 1,
     "global @i : i64[${R},1] = dense<[${i:R:-L:L}]>\n" FN1(
         "%x: $T[R,L], %u: $T[R,1]") "  %y = ScatterElements(%x, @i, %u) {axis = "
                                     "1}\n" RET1},
    {"ScatterElements", "add", NULL, 0,
     "global @i : i64[${R},3] = dense<[${i:R*3:0:L}]>\n" FN1(
         "%x: $T[R,L], %u: $T[R,3]") "  %y = ScatterElements(%x, @i, %u) {axis = 1, "
                                     "reduction = \"add\"}\n" RET1},
    {"ScatterElements", "max", NULL, 0,
     "global @i : i64[${R},3] = dense<[${i:R*3:0:L}]>\n" FN1(
         "%x: $T[R,L], %u: $T[R,3]") "  %y = ScatterElements(%x, @i, %u) {axis = 1, "
                                     "reduction = \"max\"}\n" RET1},
    {"ScatterND", NULL, NULL, 1,
     "global @i : i64[1,1] = dense<[${i:1:0:L}]>\n" FN1(
         "%x: $T[L,R], %u: $T[1,R]") "  %y = ScatterND(%x, @i, %u)\n" RET1},
    {"ScatterND", "mul", NULL, 0,
     "global @i : i64[3,1] = dense<[${i:3:0:L}]>\n" FN1(
         "%x: $T[L,R], %u: $T[3,R]") "  %y = ScatterND(%x, @i, %u) {reduction = "
                                     "\"mul\"}\n" RET1},
    {"ScatterND", "add,tuples", NULL, 1,
     "global @i : i64[${L},1] = dense<[${i:L:0:3}]>\n" FN1(
         "%x: $T[3,R], %u: $T[L,R]") "  %y = ScatterND(%x, @i, %u) {reduction = "
                                     "\"add\"}\n" RET1},
    {"ScatterND", "tuples", NULL, 1,
     "global @i : i64[${L},1] = dense<[${i:L:0:3}]>\n" FN1(
         "%x: $T[3,R], %u: $T[L,R]") "  %y = ScatterND(%x, @i, %u)\n" RET1},
    {"Concat", NULL, NULL, 1,
     FN1("%a: $T[R,L], %b: $T[R,3]") "  %y = Concat(%a, %b) {axis = 1}\n" RET1},
    {"Concat", "axis0", NULL, 0,
     FN1("%a: $T[R,L], %b: $T[2,L], %c: $T[1,L]") "  %y = Concat(%a, %b, %c) {axis = "
                                                  "0}\n" RET1},
    {"Split", NULL, NULL, 1,
     "global @s : i64[2] = dense<[${L/3}, ${L-L/3}]>\n" FN2(
         "%x: $T[R,L]") "  %y, %z = Split(%x, @s) {axis = 1}\n" RET2},
    {"Pad", "constant", NULL, 1,
     "global @p : i64[4] = dense<[1, 2, 0, ${-min(1, L)}]>\nglobal @v : $T[] = "
     "dense<[1]>\n" FN1(
         "%x: $T[R,L]") "  %y = Pad(%x, @p, @v) {mode = \"constant\"}\n" RET1},
    {"Pad", "reflect", NULL, 1,
     "global @p : i64[4] = dense<[0, ${min(2, L-1)}, 0, ${min(3, L-1)}]>\n" FN1(
         "%x: $T[R,L]") "  %y = Pad(%x, @p) {mode = \"reflect\"}\n" RET1},
    {"Pad", "edge", NULL, 0,
     "global @p : i64[4] = dense<[${min(R, 1)}, 2, 0, 3]>\n" FN1(
         "%x: $T[R,L]") "  %y = Pad(%x, @p) {mode = \"edge\"}\n" RET1},
    {"Pad", "wrap", NULL, 0,
     "global @p : i64[4] = dense<[0, ${min(2, L)}, 0, ${min(3, L)}]>\n" FN1(
         "%x: $T[R,L]") "  %y = Pad(%x, @p) {mode = \"wrap\"}\n" RET1},
    {"Tile", NULL, NULL, 1,
     "global @r : i64[2] = dense<[2, 3]>\n" FN1(
         "%x: $T[R,L]") "  %y = Tile(%x, @r)\n" RET1},
    {"Expand", NULL, NULL, 1,
     "global @s : i64[3] = dense<[2, ${R}, ${L}]>\n" FN1(
         "%x: $T[R,1]") "  %y = Expand(%x, @s)\n" RET1},
    {"DepthToSpace", "DCR", NULL, 1,
     FN1("%x: $T[R,8,3,L]") "  %y = DepthToSpace(%x) {blocksize = 2}\n" RET1},
    {"DepthToSpace", "CRD", NULL, 0,
     FN1("%x: $T[R,8,3,L]") "  %y = DepthToSpace(%x) {blocksize = 2, mode = "
                            "\"CRD\"}\n" RET1},
    {"SpaceToDepth", NULL, NULL, 1,
     FN1("%x: $T[R,2,4,${2*L}]") "  %y = SpaceToDepth(%x) {blocksize = 2}\n" RET1},
    {"ReverseSequence", NULL, NULL, 1,
     "global @n : i64[${R}] = dense<[${i:R:1:5}]>\n" FN1(
         "%x: $T[4,R,L]") "  %y = ReverseSequence(%x, @n) {batch_axis = 1, time_axis = "
                          "0}\n" RET1},
    {"Trilu", "upper", NULL, 1,
     "global @k : i64[] = dense<[1]>\n" FN1(
         "%x: $T[R,4,L]") "  %y = Trilu(%x, @k)\n" RET1},
    {"Trilu", "lower", NULL, 0,
     "global @k : i64[] = dense<[-1]>\n" FN1(
         "%x: $T[R,4,L]") "  %y = Trilu(%x, @k) {upper = 0}\n" RET1},
    {"Trilu", "lower,no k", NULL, 0,
     FN1("%x: $T[R,4,L]") "  %y = Trilu(%x) {upper = 0}\n" RET1},
    {"OneHot", NULL, NULL, 1,
     "global @i : i64[${R},3] = dense<[${i:R*3:-L:L}]>\nglobal @d : i64[] = "
     "dense<[${L}]>\n" FN1("%v: $T[2]") "  %y = OneHot(@i, @d, %v) {axis = -1}\n" RET1},
    {"EyeLike", NULL, NULL, 0, FN1("%x: $T[R,L]") "  %y = EyeLike(%x) {k = 1}\n" RET1},
    {"EyeLike", "dtype i64", NULL, 0,
     FN1("%x: $T[R,L]") "  %y = EyeLike(%x) {k = -2, dtype = 7}\n" RET1},
    {"NonZero", NULL, NULL, 1, FN1("%x: $T[R,L]") "  %y = NonZero(%x)\n" RET1},
    {"Compress", NULL, NULL, 0,
     "global @c : bool[3] = dense<[true, false, true]>\n" FN1(
         "%x: $T[R,3]") "  %y = Compress(%x, @c) {axis = 1}\n" RET1},
    {"Unique", NULL, NULL, 0, FN1("%x: $T[R,L]") "  %y = Unique(%x) {sorted = 1}\n" RET1},
    {"CumSum", NULL, NULL, 1,
     "global @a : i64[] = dense<[1]>\n" FN1(
         "%x: $T[R,L]") "  %y = CumSum(%x, @a)\n" RET1},
    {"CumSum", "exclusive,reverse", NULL, 0,
     "global @a : i64[] = dense<[-1]>\n" FN1(
         "%x: $T[R,L]") "  %y = CumSum(%x, @a) {exclusive = 1, reverse = 1}\n" RET1},
    {"CumSum", "axis0,exclusive", NULL, 0,
     "global @a : i64[] = dense<[0]>\n" FN1(
         "%x: $T[R,L]") "  %y = CumSum(%x, @a) {exclusive = 1}\n" RET1},
    {"CumProd", NULL, NULL, 1,
     "global @a : i64[] = dense<[1]>\n" FN1(
         "%x: $T[R,L]") "  %y = CumProd(%x, @a)\n" RET1},
    {"CumProd", "exclusive,reverse", NULL, 0,
     "global @a : i64[] = dense<[1]>\n" FN1(
         "%x: $T[R,L]") "  %y = CumProd(%x, @a) {exclusive = 1, reverse = 1}\n" RET1},
    {"TopK", "largest", NULL, 0,
     "global @k : i64[1] = dense<[${min(3, L)}]>\n" FN2(
         "%x: $T[R,L]") "  %y, %z = TopK(%x, @k) {axis = -1}\n" RET2},
    {"TopK", "smallest", NULL, 0,
     "global @k : i64[1] = dense<[${min(5, L)}]>\n" FN2(
         "%x: $T[R,L]") "  %y, %z = TopK(%x, @k) {axis = -1, largest = 0}\n" RET2},
    {"Resize", "nearest", NULL, 1,
     "global @s : f32[4] = dense<[1.0, 1.0, 2.0, 1.5]>\n" FN1(
         "%x: $T[R,2,3,L]") "  %y = Resize(%x, _, @s) {mode = \"nearest\"}\n" RET1},
    /* pooling */
    {"MaxPool", NULL, NULL, 1,
     FN1("%x: $T[R,2,5,L]") "  %y = MaxPool(%x) {kernel_shape = [2, 2], strides = [2, "
                            "2], "
                            "pads = [0, 0, 1, 1]}\n" RET1},
    {"MaxPool", "dilations,ceil_mode", NULL, 0,
     FN1("%x: $T[R,2,5,${L+4}]") "  %y = MaxPool(%x) {kernel_shape = [2, 3], strides = "
                                 "[1, 2], "
                                 "pads = [1, 1, 0, 1], dilations = [1, 2], ceil_mode = "
                                 "1}\n" RET1},
    {"MaxPool", "indices", NULL, 0,
     FN2("%x: $T[R,2,5,${L+1}]") "  %y, %z = MaxPool(%x) {kernel_shape = [3, 2], strides "
                                 "= [2, 1]}\n" RET2},
    {"AveragePool", NULL, NULL, 1,
     FN1("%x: $T[R,2,5,L]") "  %y = AveragePool(%x) {kernel_shape = [2, 2], strides = "
                            "[2, 2], "
                            "pads = [0, 0, 1, 1]}\n" RET1},
    {"AveragePool", "count_include_pad,ceil_mode", NULL, 0,
     FN1("%x: $T[R,2,5,${L+2}]") "  %y = AveragePool(%x) {kernel_shape = [3, 3], strides "
                                 "= [2, 2], "
                                 "pads = [1, 1, 1, 1], count_include_pad = 1, ceil_mode "
                                 "= 1}\n" RET1},
    {"AveragePool", "1d", NULL, 0,
     FN1("%x: $T[R,3,${L+2}]") "  %y = AveragePool(%x) {kernel_shape = [3], pads = [1, "
                               "0]}\n" RET1},
    {"GlobalAveragePool", NULL, NULL, 1,
     FN1("%x: $T[R,3,4,L]") "  %y = GlobalAveragePool(%x)\n" RET1},
    {"GlobalMaxPool", NULL, NULL, 1,
     FN1("%x: $T[R,3,4,L]") "  %y = GlobalMaxPool(%x)\n" RET1},
    /* convolution */
    /* C * kh * kw = 72 >= 64: on CUDA the f16/bf16 implicit-GEMM
     * tensor-core form (and the TF32 one with --allow-tf32) */
    {"Conv", NULL, NULL, 1,
     FN1("%x: $T[R,8,5,${L+2}], %w: $T[6,8,3,3], %b: $T[6]") "  %y = Conv(%x, %w, %b) "
                                                             "{pads = [1, 0, 1, "
                                                             "0]}\n" RET1},
    {"Conv", "igemm,strides,dilations,pads", "f16,bf16,f32", 0,
     FN1("%x: $T[R,16,9,${L+4}], %w: $T[12,16,3,3]") "  %y = Conv(%x, %w) {strides = [2, "
                                                     "1], dilations = [1, 2], pads = [1, "
                                                     "2, 0, 1]}\n" RET1},
    {"Conv", "igemm,1d", "f16,bf16,f32", 0,
     FN1("%x: $T[R,24,${L+2}], %w: $T[10,24,3], %b: $T[10]") "  %y = Conv(%x, %w, %b) "
                                                             "{strides = [2], pads = [1, "
                                                             "1]}\n" RET1},
    {"Conv", "groups,strides,dilations", NULL, 0,
     FN1("%x: $T[R,4,7,${L+4}], %w: $T[6,2,3,3]") "  %y = Conv(%x, %w) {group = 2, "
                                                  "strides = [2, 1], dilations = [1, "
                                                  "2]}\n" RET1},
    {"Conv", "depthwise", NULL, 0,
     FN1("%x: $T[R,4,5,L], %w: $T[4,1,3,3], %b: $T[4]") "  %y = Conv(%x, %w, %b) {group "
                                                        "= 4, pads = [1, 1, 1, "
                                                        "1]}\n" RET1},
    /* direct kernels (C * kh * kw < 64) whose channel loop carries the
     * unroll hint in f16/bf16 (conv_chan_unroll: 8 channels of a 1x1, 3 of a 1x3),
     * channels off that count; the f16 taps' bare conversion (h2f_arith) */
    {"Conv", "1x1,unroll", "f16,bf16,f32", 0,
     FN1("%x: $T[R,13,5,L], %w: $T[7,13,1,1], %b: $T[7]") "  %y = Conv(%x, %w, "
                                                          "%b)\n" RET1},
    {"Conv", "1x3,unroll,strides,pads", "f16,bf16,f32", 0,
     FN1("%x: $T[R,11,4,${L+2}], %w: $T[5,11,1,3]") "  %y = Conv(%x, %w) {strides = [1, "
                                                    "2], pads = [0, 1, 0, 1]}\n" RET1},
    {"Conv", "depthwise,strides,dilations", NULL, 0,
     FN1("%x: $T[R,6,9,${L+4}], %w: $T[6,1,3,3]") "  %y = Conv(%x, %w) {group = 6, "
                                                  "strides = [2, 2], dilations = [2, 1], "
                                                  "pads = [2, 1, 1, 1]}\n" RET1},
    {"Conv", "SAME_UPPER", NULL, 0,
     FN1("%x: $T[R,3,5,L], %w: $T[2,3,3,2]") "  %y = Conv(%x, %w) {auto_pad = "
                                             "\"SAME_UPPER\", strides = [2, 2]}\n" RET1},
    {"Conv", "channels", NULL, 1,
     FN1("%x: $T[R,L,3,3], %w: $T[2,L,2,2], %b: $T[2]") "  %y = Conv(%x, %w, %b)\n" RET1},
    {"Conv", "1d", NULL, 1,
     FN1("%x: $T[R,3,${L+2}], %w: $T[5,3,3]") "  %y = Conv(%x, %w)\n" RET1},
    {"ConvTranspose", NULL, NULL, 1,
     FN1("%x: $T[R,4,3,L], %w: $T[4,3,3,3], %b: $T[3]") "  %y = ConvTranspose(%x, %w, "
                                                        "%b) {strides = [2, 2], pads = "
                                                        "[1, 0, 1, 0], "
                                                        "output_padding = [1, "
                                                        "1]}\n" RET1},
    {"ConvTranspose", "channels", NULL, 1,
     FN1("%x: $T[R,L,2,2], %w: $T[L,2,2,2]") "  %y = ConvTranspose(%x, %w)\n" RET1},
    {"ConvTranspose", "groups,dilations", NULL, 0,
     FN1("%x: $T[R,4,3,L], %w: $T[4,2,2,3]") "  %y = ConvTranspose(%x, %w) {group = 2, "
                                             "dilations = [2, 1]}\n" RET1},
    /* matrix products */
    {"MatMul", NULL, NULL, 1,
     FN1("%a: $T[R,L], %b: $T[L,7]") "  %y = MatMul(%a, %b)\n" RET1},
    {"MatMul", "batched,broadcast", NULL, 1,
     FN1("%a: $T[2,1,R,L], %b: $T[3,L,5]") "  %y = MatMul(%a, %b)\n" RET1},
    {"MatMul", "vector", NULL, 0,
     FN1("%a: $T[L], %b: $T[R,L,3]") "  %y = MatMul(%a, %b)\n" RET1},
    {"Gemm", "transB,bias", NULL, 1,
     FN1("%a: $T[R,L], %b: $T[5,L], %c: $T[5]") "  %y = Gemm(%a, %b, %c) {transB = 1, "
                                                "alpha = 0.5, beta = 2.0}\n" RET1},
    {"Gemm", "transA", NULL, 0,
     FN1("%a: $T[L,R], %b: $T[L,4], %c: $T[R,1]") "  %y = Gemm(%a, %b, %c) {transA = "
                                                  "1}\n" RET1},
    {"Einsum", "matmul", NULL, 1,
     FN1("%a: $T[R,L], %b: $T[L,4]") "  %y = Einsum(%a, %b) {equation = "
                                     "\"ij,jk->ik\"}\n" RET1},
    {"Einsum", "batched,sum", NULL, 0,
     FN1("%a: $T[3,R,L], %b: $T[3,L]") "  %y = Einsum(%a, %b) {equation = "
                                       "\"bij,bj->b\"}\n" RET1},
    {"Einsum", "batched matmul", NULL, 0,
     FN1("%a: $T[R,2,L], %b: $T[R,L,4]") "  %y = Einsum(%a, %b) {equation = "
                                         "\"bij,bjk->bik\"}\n" RET1},
    {"Einsum", "diagonal", NULL, 0,
     FN1("%a: $T[${min(L, 40)},${min(L, 40)}]") "  %y = Einsum(%a) {equation = "
                                                "\"ii->i\"}\n" RET1},
    {"Einsum", "sum all", NULL, 1,
     FN1("%a: $T[R,L]") "  %y = Einsum(%a) {equation = \"ij->\"}\n" RET1},
    {"Einsum", "ellipsis transpose", NULL, 1,
     FN1("%a: $T[2,R,L]") "  %y = Einsum(%a) {equation = \"...ij->...ji\"}\n" RET1},
    {"Einsum", "implicit output", NULL, 1,
     FN1("%a: $T[R,L], %b: $T[L]") "  %y = Einsum(%a, %b) {equation = \"ij,j\"}\n" RET1},
    {"Einsum", "broadcast dim", NULL, 0,
     FN1("%a: $T[1,L], %b: $T[R,L,4]") "  %y = Einsum(%a, %b) {equation = "
                                       "\"ij,bjk->bji\"}\n" RET1},
    {"Det", NULL, NULL, 0, FN1("%x: $T[R,3,3]") "  %y = Det(%x)\n" RET1},
    {"Det", "4x4", NULL, 0, FN1("%x: $T[R,4,4]") "  %y = Det(%x)\n" RET1},
    /* normalizations */
    {"BatchNormalization", NULL, NULL, 1,
     "global @m : $T[3] = dense<[0.5, -1, 2]>\nglobal @v : $T[3] = dense<[0.25, 1, "
     "4]>\n" FN1(
         "%x: $T[R,3,4,L], %s: $T[3], %b: $T[3]") "  %y = BatchNormalization(%x, %s, %b, "
                                                  "@m, @v) {epsilon = 0.001}\n" RET1},
    {"LayerNormalization", NULL, NULL, 1,
     FN1("%x: $T[R,L], %s: $T[L], %b: $T[L]") "  %y = LayerNormalization(%x, %s, %b) "
                                              "{axis = -1, epsilon = 0.001}\n" RET1},
    {"LayerNormalization", "axis1", NULL, 0,
     FN1("%x: $T[R,3,L], %s: $T[3,L]") "  %y = LayerNormalization(%x, %s) {axis = "
                                       "1}\n" RET1},
    {"InstanceNormalization", NULL, NULL, 1,
     FN1("%x: $T[R,3,L], %s: $T[3], %b: $T[3]") "  %y = InstanceNormalization(%x, %s, "
                                                "%b) {epsilon = 0.001}\n" RET1},
    {"GroupNormalization", NULL, NULL, 1,
     FN1("%x: $T[R,4,L], %s: $T[4], %b: $T[4]") "  %y = GroupNormalization(%x, %s, %b) "
                                                "{num_groups = 2}\n" RET1},
    {"LpNormalization", "p2", NULL, 1,
     FN1("%x: $T[R,L]") "  %y = LpNormalization(%x) {axis = -1, p = 2}\n" RET1},
    {"LpNormalization", "p1,axis0", NULL, 0,
     FN1("%x: $T[R,L]") "  %y = LpNormalization(%x) {axis = 0, p = 1}\n" RET1},
    {"MeanVarianceNormalization", NULL, NULL, 0,
     FN1("%x: $T[R,3,2,L]") "  %y = MeanVarianceNormalization(%x)\n" RET1},
    {"MeanVarianceNormalization", "axes", NULL, 0,
     FN1("%x: $T[R,3,2,L]") "  %y = MeanVarianceNormalization(%x) {axes = [1, "
                            "-1]}\n" RET1},
    {"RMSNormalization", NULL, NULL, 1,
     FN1("%x: $T[R,L], %s: $T[L]") "  %y = RMSNormalization(%x, %s)\n" RET1},
    {"LRN", NULL, NULL, 0,
     FN1("%x: $T[R,5,3,L]") "  %y = LRN(%x) {size = 3, alpha = 0.001, beta = 0.75, bias "
                            "= 1.0}\n" RET1},
    /* integer and dtype ops */
    {"BitShift", "left", UINTS, 1,
     FN1("%x: $T[R,L], %s: $T[1,L]") "  %y = BitShift(%x, %s) {direction = "
                                     "\"LEFT\"}\n" RET1},
    {"BitShift", "right", UINTS, 0,
     FN1("%x: $T[R,L], %s: $T[1,L]") "  %y = BitShift(%x, %s) {direction = "
                                     "\"RIGHT\"}\n" RET1},
    {"BitwiseAnd", NULL, NULL, 1,
     FN1("%a: $T[R,L], %b: $T[1,L]") "  %y = BitwiseAnd(%a, %b)\n" RET1},
    {"BitwiseOr", NULL, NULL, 0,
     FN1("%a: $T[R,L], %b: $T[1,L]") "  %y = BitwiseOr(%a, %b)\n" RET1},
    {"BitwiseXor", NULL, NULL, 0,
     FN1("%a: $T[R,L], %b: $T[1,L]") "  %y = BitwiseXor(%a, %b)\n" RET1},
    {"BitwiseNot", NULL, NULL, 0, FN1("%a: $T[R,L]") "  %y = BitwiseNot(%a)\n" RET1},
    {"CastLike", "to f32", NULL, 1,
     FN1("%x: $T[R,L], %t: f32[1]") "  %y = CastLike(%x, %t)\n" RET1},
    {"CastLike", "to i32", NULL, 0,
     FN1("%x: $T[R,L], %t: i32[1]") "  %y = CastLike(%x, %t)\n" RET1},
    {"BitCast", "to i32", NULL, 0,
     FN1("%x: $T[R,L]") "  %y = BitCast(%x) {to = 6}\n" RET1},
    /* quantization */
    {"QuantizeLinear", "u8", NULL, 1,
     "global @s : f32[] = dense<[0.05]>\nglobal @z : u8[] = dense<[128]>\n" FN1(
         "%x: $T[R,L]") "  %y = QuantizeLinear(%x, @s, @z)\n" RET1},
    {"QuantizeLinear", "i8,per-axis", NULL, 0,
     "global @s : f32[3] = dense<[0.05, 0.1, 0.02]>\nglobal @z : i8[3] = dense<[0, -3, "
     "5]>\n" FN1("%x: $T[R,3,L]") "  %y = QuantizeLinear(%x, @s, @z) {axis = 1}\n" RET1},
    {"DequantizeLinear", NULL, NULL, 1,
     "global @s : f32[] = dense<[0.05]>\n" FN1(
         "%x: $T[R,L]") "  %y = DequantizeLinear(%x, @s)\n" RET1},
    {"DequantizeLinear", "zero_point", QDT, 0,
     "global @s : f32[] = dense<[0.05]>\nglobal @z : $T[] = dense<[3]>\n" FN1(
         "%x: $T[R,L]") "  %y = DequantizeLinear(%x, @s, @z)\n" RET1},
    {"DynamicQuantizeLinear", NULL, NULL, 1,
     FN1("%x: $T[R,L]") "  %y, %s, %z = DynamicQuantizeLinear(%x)\n" RET1},
    {"MatMulInteger", NULL, QDT, 1,
     "global @za : $T[] = dense<[3]>\n" FN1(
         "%a: $T[R,L], %b: $T[L,5]") "  %y = MatMulInteger(%a, %b, @za)\n" RET1},
    {"ConvInteger", NULL, QDT, 0,
     "global @zx : $T[] = dense<[1]>\n" FN1(
         "%x: $T[R,2,4,${L+1}], %w: $T[3,2,2,2]") "  %y = ConvInteger(%x, %w, "
                                                  "@zx)\n" RET1},
    {"ConvInteger", "channels", QDT, 1,
     "global @zx : $T[] = dense<[1]>\n" FN1(
         "%x: $T[R,L,3,3], %w: $T[2,L,2,2]") "  %y = ConvInteger(%x, %w, @zx)\n" RET1},
    {"QLinearMatMul", NULL, QDT, 1,
     "global @sa : f32[] = dense<[0.05]>\nglobal @za : $T[] = dense<[1]>\n"
     "global @sb : f32[] = dense<[0.1]>\nglobal @zb : $T[] = dense<[0]>\n"
     "global @sy : f32[] = dense<[0.02]>\nglobal @zy : $T[] = dense<[2]>\n" FN1(
         "%a: $T[R,L], %b: $T[L,4]") "  %y = QLinearMatMul(%a, @sa, @za, %b, @sb, @zb, "
                                     "@sy, @zy)\n" RET1},
    {"QLinearConv", NULL, QDT, 0,
     "global @sa : f32[] = dense<[0.05]>\nglobal @za : $T[] = dense<[1]>\n"
     "global @sb : f32[] = dense<[0.1]>\nglobal @zb : $T[] = dense<[0]>\n"
     "global @sy : f32[] = dense<[0.02]>\nglobal @zy : $T[] = dense<[2]>\n" FN1(
         "%x: $T[R,2,4,${L+2}], %w: $T[3,2,3,3]") "  %y = QLinearConv(%x, @sa, @za, %w, "
                                                  "@sb, @zb, @sy, @zy) {pads = [1, 0, 1, "
                                                  "0]}\n" RET1},
    {"QLinearAdd", NULL, QDT, 1,
     "global @sa : f32[] = dense<[0.05]>\nglobal @za : $T[] = dense<[1]>\n"
     "global @sb : f32[] = dense<[0.1]>\nglobal @zb : $T[] = dense<[0]>\n"
     "global @sy : f32[] = dense<[0.02]>\nglobal @zy : $T[] = dense<[2]>\n" FN1(
         "%a: $T[R,L], %b: $T[1,L]") "  %y = QLinearAdd(%a, @sa, @za, %b, @sb, @zb, @sy, "
                                     "@zy)\n" RET1},
    {"FakeQuantize", "range", NULL, 1,
     "global @r : f32[2] = dense<[-1.5, 2.0]>\n" FN1(
         "%x: $T[R,L]") "  %y = FakeQuantize(%x, @r)\n" RET1},
    {"FakeQuantize", "per-channel", NULL, 0,
     FN1("%x: $T[R,3,L]") "  %y = FakeQuantize(%x) {axis = 1}\n" RET1},
    /* sequence, attention, signal, losses, sampling */
    {"RNN", NULL, NULL, 0,
     FN1("%x: $T[3,R,4], %w: $T[1,5,4], %r: $T[1,5,5], %b: $T[1,10]") "  %y, %h = "
                                                                      "RNN(%x, %w, %r, "
                                                                      "%b) {hidden_size "
                                                                      "= 5}\n" RET1},
    {"GRU", NULL, NULL, 0,
     FN1("%x: $T[3,R,4], %w: $T[1,15,4], %r: $T[1,15,5], %b: $T[1,30]") "  %y, %h = "
                                                                        "GRU(%x, %w, %r, "
                                                                        "%b) "
                                                                        "{hidden_size = "
                                                                        "5}\n" RET1},
    {"LSTM", NULL, NULL, 0,
     FN1("%x: $T[3,R,4], %w: $T[1,20,4], %r: $T[1,20,5], %b: $T[1,40]") "  %y, %h, %c = "
                                                                        "LSTM(%x, %w, "
                                                                        "%r, %b) "
                                                                        "{hidden_size = "
                                                                        "5}\n" RET1},
    {"Attention", NULL, NULL, 1,
     FN1("%q: $T[R,2,3,8], %k: $T[R,2,L,8], %v: $T[R,2,L,8]") "  %y = Attention(%q, %k, "
                                                              "%v)\n" RET1},
    {"RotaryEmbedding", NULL, NULL, 0,
     "global @p : i64[${R},3] = dense<[${i:R*3:0:L}]>\n" FN1(
         "%x: $T[R,2,3,8], %c: $T[L,4], %s: $T[L,4]") "  %y = RotaryEmbedding(%x, %c, "
                                                      "%s, @p)\n" RET1},
    {"TensorScatter", NULL, NULL, 1,
     "global @w : i64[${R}] = dense<[${i:R:0:5}]>\n" FN1(
         "%p: $T[R,2,6,L], %u: $T[R,2,1,L]") "  %y = TensorScatter(%p, %u, @w)\n" RET1},
    {"DFT", NULL, NULL, 0, FN1("%x: $T[R,L,1]") "  %y = DFT(%x) {axis = 1}\n" RET1},
    {"STFT", NULL, NULL, 0,
     "global @s : i64[] = dense<[4]>\n" FN1(
         "%x: $T[R,${L+16},1], %w: $T[8]") "  %y = STFT(%x, @s, %w)\n" RET1},
    {"Col2Im", NULL, NULL, 0,
     "global @is : i64[2] = dense<[4, ${L+1}]>\nglobal @bs : i64[2] = dense<[2, "
     "2]>\n" FN1("%x: $T[R,8,${3*L}]") "  %y = Col2Im(%x, @is, @bs)\n" RET1},
    {"AffineGrid", NULL, NULL, 0,
     "global @s : i64[4] = dense<[${R}, 1, 4, ${L}]>\n" FN1(
         "%t: $T[R,2,3]") "  %y = AffineGrid(%t, @s)\n" RET1},
    {"GridSample", NULL, NULL, 0,
     FN1("%x: $T[R,2,4,5], %g: $T[R,3,L,2]") "  %y = GridSample(%x, %g)\n" RET1},
    {"DeformConv", NULL, NULL, 0,
     FN1("%x: $T[R,2,4,${L+2}], %w: $T[3,2,3,3], %o: $T[R,18,2,L]") "  %y = "
                                                                    "DeformConv(%x, %w, "
                                                                    "%o) {kernel_shape = "
                                                                    "[3, 3]}\n" RET1},
    {"NegativeLogLikelihoodLoss", NULL, NULL, 1,
     "global @t : i64[${R},${L}] = dense<[${i:R*L:0:5}]>\n" FN1(
         "%x: $T[R,5,L]") "  %y = NegativeLogLikelihoodLoss(%x, @t) {reduction = "
                          "\"mean\"}\n" RET1},
    {"SoftmaxCrossEntropyLoss", NULL, NULL, 1,
     "global @t : i64[${R},${L}] = dense<[${i:R*L:0:5}]>\n" FN1(
         "%x: $T[R,5,L]") "  %y = SoftmaxCrossEntropyLoss(%x, @t) {reduction = "
                          "\"none\"}\n" RET1},
    {"SoftmaxCrossEntropyLoss", "classes", NULL, 1,
     "global @t : i64[${R}] = dense<[${i:R:0:L}]>\n" FN1(
         "%x: $T[R,L]") "  %y = SoftmaxCrossEntropyLoss(%x, @t) {reduction = "
                        "\"mean\"}\n" RET1},
    {"SoftmaxCrossEntropyLoss", "classes,none", NULL, 1,
     "global @t : i64[${R}] = dense<[${i:R:0:L}]>\n" FN1(
         "%x: $T[R,L]") "  %y = SoftmaxCrossEntropyLoss(%x, @t) {reduction = "
                        "\"none\"}\n" RET1},
    {"NonMaxSuppression", NULL, NULL, 0,
     "global @m : i64[] = dense<[3]>\nglobal @iou : f32[] = dense<[0.5]>\n" FN1(
         "%b: $T[1,R,4], %s: $T[1,2,R]") "  %y = NonMaxSuppression(%b, %s, @m, "
                                         "@iou)\n" RET1},
    {"MaxUnpool", NULL, NULL, 1,
     FN1("%x: $T[R,2,4,${2*L}]") "  %p, %i = MaxPool(%x) {kernel_shape = [2, 2], strides "
                                 "= [2, 2]}\n"
                                 "  %y = MaxUnpool(%p, %i) {kernel_shape = [2, 2], "
                                 "strides = [2, 2]}\n" RET1},
    {"RoiAlign", NULL, NULL, 0,
     "global @r : $T[${R},4] = dense<[${i:R*4:0:6}]>\nglobal @b : i64[${R}] = "
     "dense<[${i:R:0:2}]>\n" FN1(
         "%x: $T[2,3,5,${L+4}]") "  %y = RoiAlign(%x, @r, @b) {output_height = 2, "
                                 "output_width = 3, sampling_ratio = 2}\n" RET1},
    {"MatMulWQ", "8-bit", "i8,u8", 1,
     FN1("%a: f32[R,L], %w: $T[1,L,32], %s: f32[${(L+31)/32},32]") "  %y = MatMulWQ(%a, "
                                                                   "%w, %s) {bits = 8, "
                                                                   "block_size = "
                                                                   "32}\n" RET1},
    {"MatMulWQ", "4-bit", "u8", 0,
     "global @z : i8[${(L+15)/16},32] = dense<[${i:(L+15)/16*32:-8:8}]>\n" FN1(
         "%a: f32[R,L], %w: $T[1,L,16], %s: f32[${(L+15)/16},32]") "  %y = MatMulWQ(%a, "
                                                                   "%w, %s, @z) {bits = "
                                                                   "4, block_size = "
                                                                   "16}\n" RET1},
    /* training */
    {"Adagrad", NULL, NULL, 0,
     "global @r : f32[] = dense<[0.1]>\nglobal @t : i64[] = dense<[3]>\n" FN2(
         "%x: $T[R,L], %g: $T[R,L], %h: $T[R,L]") "  %y, %z = Adagrad(@r, @t, %x, %g, "
                                                  "%h) {epsilon = 1e-06}\n" RET2},
    {"Momentum", NULL, NULL, 0,
     "global @r : f32[] = dense<[0.1]>\nglobal @t : i64[] = dense<[3]>\n" FN2(
         "%x: $T[R,L], %g: $T[R,L], %v: $T[R,L]") "  %y, %z = Momentum(@r, @t, %x, %g, "
                                                  "%v) {alpha = 0.9, beta = 1.0, mode = "
                                                  "\"standard\", "
                                                  "norm_coefficient = 0.01}\n" RET2},
    {"Adam", NULL, NULL, 0,
     "global @r : f32[] = dense<[0.1]>\nglobal @t : i64[] = dense<[3]>\n" FN2(
         "%x: $T[R,L], %g: $T[R,L], %v: $T[R,L], %h: $T[R,L]") "  %y, %z, %w = Adam(@r, "
                                                               "@t, %x, %g, %v, "
                                                               "%h)\n" RET2},
    {"ConvWeightGrad", NULL, NULL, 1,
     FN1("%d: $T[R,3,3,L], %x: $T[R,2,5,${L+2}]") "  %y = ConvWeightGrad(%d, %x) "
                                                  "{kernel_shape = [3, 3]}\n" RET1},
    {"ConvWeightGrad", "groups,strides,dilations,pads", NULL, 0,
     FN1("%d: $T[R,4,4,L], %x: $T[R,4,7,${L+2}]") "  %y = ConvWeightGrad(%d, %x) "
                                                  "{kernel_shape = [3, 3], group = 2, "
                                                  "strides = [2, 1], dilations = [1, 2], "
                                                  "pads = [1, 0, 1, 2]}\n" RET1},
    {"ConvWeightGrad", "depthwise", NULL, 0,
     FN1("%d: $T[R,4,5,L], %x: $T[R,4,5,L]") "  %y = ConvWeightGrad(%d, %x) "
                                             "{kernel_shape = [3, 3], group = 4, "
                                             "pads = [1, 1, 1, 1]}\n" RET1},
    {"ConvWeightGrad", "1d", NULL, 1,
     FN1("%d: $T[R,3,L], %x: $T[R,2,${L+2}]") "  %y = ConvWeightGrad(%d, %x) "
                                              "{kernel_shape = [3]}\n" RET1},
    {"ConvInputGrad", NULL, NULL, 1,
     FN1("%d: $T[R,3,2,L], %w: $T[3,2,3,3], %x: $T[R,2,5,${2*L+1}]") "  %y = "
                                                                     "ConvInputGrad(%d, "
                                                                     "%w, %x) {strides = "
                                                                     "[2, 2]}\n" RET1},
    {"ConvInputGrad", "groups,strides,dilations,pads", NULL, 0,
     FN1("%d: $T[R,6,3,${L+3}], %w: $T[6,2,3,3], %x: $T[R,4,7,${L+4}]") "  %y = "
                                                                        "ConvInputGrad(%"
                                                                        "d, %w, %x) "
                                                                        "{group = 2, "
                                                                        "strides = [2, "
                                                                        "1], dilations = "
                                                                        "[1, 2], "
                                                                        "pads = [1, 1, "
                                                                        "0, 2]}\n" RET1},
    {"ConvInputGrad", "SAME_UPPER", NULL, 0,
     FN1("%d: $T[R,2,3,L], %w: $T[2,3,3,2], %x: $T[R,3,5,${2*L}]") "  %y = "
                                                                   "ConvInputGrad(%d, "
                                                                   "%w, %x) {auto_pad = "
                                                                   "\"SAME_UPPER\", "
                                                                   "strides = [2, "
                                                                   "2]}\n" RET1},
    {"ConvInputGrad", "1d", NULL, 1,
     FN1("%d: $T[R,3,L], %w: $T[3,2,3], %x: $T[R,2,${2*L+2}]") "  %y = "
                                                               "ConvInputGrad(%d, %w, "
                                                               "%x) {strides = "
                                                               "[2]}\n" RET1},
    {"MaxPoolGrad", NULL, NULL, 1,
     FN1("%d: $T[R,2,2,${L}], %x: $T[R,2,5,${2*L+1}]") "  %y = MaxPoolGrad(%d, %x) "
                                                       "{kernel_shape = [3, 3], strides "
                                                       "= [2, 2]}\n" RET1},
    {"MaxPoolGrad", "pads,dilations", NULL, 0,
     FN1("%d: $T[R,2,6,L], %x: $T[R,2,6,${2*L}]") "  %y = MaxPoolGrad(%d, %x) "
                                                  "{kernel_shape = [2, 3], strides = [1, "
                                                  "2], dilations = [2, 1], pads = [1, 1, "
                                                  "1, "
                                                  "0]}\n" RET1},
    {"MaxPoolGrad", "1d", NULL, 0,
     FN1("%d: $T[R,3,L], %x: $T[R,3,${2*L}]") "  %y = MaxPoolGrad(%d, %x) "
                                              "{kernel_shape = [2], strides = "
                                              "[2]}\n" RET1},
    {"AveragePoolGrad", NULL, NULL, 1,
     FN1("%d: $T[R,2,2,${L}], %x: $T[R,2,5,${2*L+1}]") "  %y = AveragePoolGrad(%d, %x) "
                                                       "{kernel_shape = [3, 3], strides "
                                                       "= [2, 2]}\n" RET1},
    /* the divisor counts the in-bounds positions: smaller at the edges */
    {"AveragePoolGrad", "pads,dilations", NULL, 0,
     FN1("%d: $T[R,2,6,L], %x: $T[R,2,6,${2*L}]") "  %y = AveragePoolGrad(%d, %x) "
                                                  "{kernel_shape = [2, 3], strides = [1, "
                                                  "2], dilations = [2, 1], pads = [1, 1, "
                                                  "1, 0]}\n" RET1},
    {"AveragePoolGrad", "count_include_pad", NULL, 0,
     FN1("%d: $T[R,2,3,${L+1}], %x: $T[R,2,5,${2*L+1}]") "  %y = AveragePoolGrad(%d, %x) "
                                                         "{kernel_shape = [3, 3], "
                                                         "strides "
                                                         "= [2, 2], pads = [1, 1, 1, 1], "
                                                         "count_include_pad = 1}\n" RET1},
    /* 1-D, ceil_mode: the last window is cut by the end (2 of 3 in bounds) */
    {"AveragePoolGrad", "1d,ceil_mode", NULL, 0,
     FN1("%d: $T[R,3,${L+1}], %x: $T[R,3,${2*L+2}]") "  %y = AveragePoolGrad(%d, %x) "
                                                     "{kernel_shape = [3], strides = "
                                                     "[2], "
                                                     "ceil_mode = 1}\n" RET1},
    {"FakeQuantizeGrad", NULL, NULL, 0,
     "global @r : f32[2] = dense<[-1.5, 2.0]>\n" FN1(
         "%d: $T[R,L], %x: $T[R,L]") "  %y = FakeQuantizeGrad(%d, %x, @r)\n" RET1},
    {NULL, NULL, NULL, 0, NULL},
};

/* ---- form_expand: the placeholders of k_forms ---- */

typedef struct {
  const char *p;
  int64_t R, L;
  int bad;
} expr_t;

static int64_t expr_sum(expr_t *e);

static void expr_ws(expr_t *e) {
  while (*e->p == ' ') e->p++;
}

static int64_t expr_atom(expr_t *e) {
  expr_ws(e);
  const char *p = e->p;
  if (*p == '-') {
    e->p++;
    return -expr_atom(e);
  }
  if (*p == '(') {
    e->p++;
    int64_t v = expr_sum(e);
    expr_ws(e);
    if (*e->p == ')')
      e->p++;
    else
      e->bad = 1;
    return v;
  }
  if (*p >= '0' && *p <= '9') {
    char *end;
    int64_t v = strtoll(p, &end, 10);
    e->p = end;
    return v;
  }
  if (!strncmp(p, "min(", 4) || !strncmp(p, "max(", 4)) {
    int mn = p[1] == 'i';
    e->p += 4;
    int64_t a = expr_sum(e);
    expr_ws(e);
    if (*e->p == ',')
      e->p++;
    else
      e->bad = 1;
    int64_t b = expr_sum(e);
    expr_ws(e);
    if (*e->p == ')')
      e->p++;
    else
      e->bad = 1;
    return mn ? (a < b ? a : b) : (a > b ? a : b);
  }
  if (*p == 'R' || *p == 'L') {
    e->p++;
    return *p == 'R' ? e->R : e->L;
  }
  e->bad = 1;
  return 0;
}

static int64_t expr_prod(expr_t *e) {
  int64_t v = expr_atom(e);
  for (;;) {
    expr_ws(e);
    char c = *e->p;
    if (c != '*' && c != '/') return v;
    e->p++;
    int64_t b = expr_atom(e);
    if (c == '*')
      v *= b;
    else if (b)
      v /= b;
    else
      e->bad = 1;
  }
}

static int64_t expr_sum(expr_t *e) {
  int64_t v = expr_prod(e);
  for (;;) {
    expr_ws(e);
    char c = *e->p;
    if (c != '+' && c != '-') return v;
    e->p++;
    int64_t b = expr_prod(e);
    v = c == '+' ? v + b : v - b;
  }
}

static int is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_';
}

/* Expands form text `t` for dtype `dt` and shape (R, L) into `out` (the
 * integers of ${i:...} from urand()); a bare R or L (not part of a name) is
 * its value. 0 when the text is malformed or does not fit. */
static int form_expand(const char *t, dml_dtype_t dt, int64_t R, int64_t L, char *out,
                       size_t n) {
  size_t j = 0;
#define PUT(...)                                    \
  do {                                              \
    int k_ = snprintf(out + j, n - j, __VA_ARGS__); \
    if (k_ < 0 || (size_t)k_ >= n - j) return 0;    \
    j += (size_t)k_;                                \
  } while (0)
  for (const char *c = t; *c; c++) {
    if (c[0] == '$' && c[1] == 'T') {
      PUT("%s", dml_dtype_name(dt));
      c++;
    } else if (c[0] == '$' && c[1] == '{') {
      c++;
      expr_t e = {c + 1, R, L, 0};
      if (c[1] == 'i' && c[2] == ':') { /* ${i:N:LO:HI} */
        e.p = c + 3;
        int64_t cnt = expr_sum(&e);
        if (*e.p++ != ':') return 0;
        int64_t lo = expr_sum(&e);
        if (*e.p++ != ':') return 0;
        int64_t hi = expr_sum(&e);
        if (e.bad || *e.p != '}' || cnt < 0 || (cnt > 0 && hi <= lo)) return 0;
        for (int64_t k = 0; k < cnt; k++)
          PUT("%s%lld", k ? ", " : "",
              (long long)(lo + (int64_t)(urand() * (double)(hi - lo))));
      } else {
        int64_t v = expr_sum(&e);
        if (e.bad || *e.p != '}') return 0;
        PUT("%lld", (long long)v);
      }
      c = e.p;
    } else if ((*c == 'R' || *c == 'L') && (c == t || !is_ident_char(c[-1])) &&
               !is_ident_char(c[1])) {
      PUT("%lld", (long long)(*c == 'R' ? R : L));
    } else {
      if (j + 1 >= n) return 0;
      out[j++] = *c;
    }
  }
  out[j] = 0;
  return 1;
#undef PUT
}

static int op_has_form(dml_op_t op) {
  for (const form_t *f = k_forms; f->op; f++)
    if (!strcmp(f->op, dml_op_name(op))) return 1;
  return 0;
}

/* ---- the driver ---- */

typedef struct {
  const char *device, *compile_only, *only;
  const char *dtypes; /* --dtypes LIST: only these dtypes (NULL: all) */
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
static int pack_case(run_t *r, const char *status, dml_op_t op, const char *name,
                     dml_dtype_t dt, shape_t sh, const char *shape_what,
                     const known_t *kn, const void *bytes, size_t size,
                     const char *reason) {
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
          name, dml_dtype_name(dt), shape_what, (long long)sh.R, (long long)sh.L,
          k_class_name[dml_op_tol_class(op)], kn ? kn->reason : "-", file, why);
  return 1;
}

/* One op x dtype x shape on the device (dml_rt_check) and, for f32, the
 * CPU against f64. */
static void run_text(run_t *r, dml_op_t op, const char *name, family_t fam,
                     dml_dtype_t dt, shape_t sh, const char *shape_what,
                     const char *text) {
  const char *dn = dml_dtype_name(dt);
  if (r->dtypes && !in_list(r->dtypes, dn)) return;
  char targets[32];
  snprintf(targets, sizeof targets, "cpu,%s", backend_name(r));
  void *bytes = NULL;
  size_t size = 0;
  dml_status_t s = compile_text(text, NULL, &bytes, &size);
  if (s) { /* the dtype (or form) is not allowed for the op */
    if (r->verbose > 1)
      printf("  %s %s: not allowed: %s\n", name, dn, dml_status_reason(s));
    pack_case(r, "not_allowed", op, name, dt, sh, shape_what, NULL, NULL, 0,
              dml_status_reason(s));
    dml_status_free(s);
    r->c.n_notallowed++;
    return;
  }
  free(bytes);
  /* (an empty tensor has no values to disagree on, but its kernel compiles) */
  const known_t *kn = known(name, dn, backend_name(r), shape_what);
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
              op, name, dt, sh, shape_what, kn, NULL, 0, dml_status_reason(s));
    dml_status_free(s);
    return;
  }
  r->c.n_compiled++;
  if (!pack_case(r, "packed", op, name, dt, sh, shape_what, kn, bytes, size, NULL))
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
      fam != FAM_FORM && fam != FAM_ARG && !is_compare(op)) {
    int64_t n_out = sh.R * (fam == FAM_REDUCE ? 1 : sh.L);
    char where[256] = "";
    double w = cpu_vs_f64(op, fam, text, sh, n_out, where, sizeof where);
    if (w < 0) return; /* no f64 form */
    r->c.n_f64++;
    dml_tol_class_t c = dml_op_tol_class(op);
    const known_t *kf = known(name, "f32", "cpu-f64", shape_what);
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

/* A case of the families of case_text. */
static void run_case(run_t *r, dml_op_t op, family_t fam, dml_dtype_t dt, shape_t sh,
                     const char *shape_what) {
  char text[4096];
  if (case_text(op, fam, dt, sh, text, sizeof text))
    run_text(r, op, dml_op_name(op), fam, dt, sh, shape_what, text);
}

/* The cases of op's forms (k_forms): each dtype on the random shape `rnd`
 * (the op's further forms: the first dtype the compiler takes only),
 * and, on the first dtype the compiler takes (f32 but for the integer
 * forms), the empty R = 0 and the row L = 70,001 (R = 2) where the form
 * has rows. */
static void run_forms(run_t *r, dml_op_t op, shape_t rnd) {
  size_t cap = (size_t)8 << 20;
  char *text = (char *)malloc(cap);
  if (!text) return;
  int nth = 0; /* the op's first form runs every dtype, the others the first */
  for (const form_t *f = k_forms; f->op; f++) {
    if (strcmp(f->op, dml_op_name(op))) continue;
    nth++;
    char name[64];
    snprintf(name, sizeof name, "%s%s%s", f->op, f->form ? ":" : "",
             f->form ? f->form : "");
    int empty_done = 0;
    for (size_t d = 0; d < N_DTYPES + 4; d++) {
      static const dml_dtype_t extra[] = {DML_DTYPE_I16, DML_DTYPE_U16, DML_DTYPE_U32,
                                          DML_DTYPE_U64};
      dml_dtype_t dt = d < N_DTYPES ? k_dtypes[d] : extra[d - N_DTYPES];
      if (f->dtypes ? !in_list(f->dtypes, dml_dtype_name(dt)) : d >= N_DTYPES) continue;
      if (r->dtypes && !in_list(r->dtypes, dml_dtype_name(dt))) continue;
      int before = r->c.n_notallowed;
      if (!form_expand(f->text, dt, rnd.R, rnd.L, text, cap)) {
        r->c.n_fail++;
        printf("FAIL %s: the form's text does not expand\n", name);
        break;
      }
      run_text(r, op, name, FAM_FORM, dt, rnd, "random", text);
      if (empty_done || r->c.n_notallowed != before) continue;
      empty_done = 1;
      if (form_expand(f->text, dt, 0, rnd.L, text, cap))
        run_text(r, op, name, FAM_FORM, dt, (shape_t){0, rnd.L}, "empty", text);
      if (f->rows && form_expand(f->text, dt, 2, 70001, text, cap))
        run_text(r, op, name, FAM_FORM, dt, (shape_t){2, 70001}, "row 70001", text);
      if (nth > 1) break;
    }
  }
  free(text);
}

int main(int argc, char **argv) {
  run_t r;
  memset(&r, 0, sizeof r);
  setvbuf(stdout, NULL, _IOLBF, 0); /* each case's line as it ends (ctest logs) */
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
    else if (!strcmp(argv[i], "--dtypes") && i + 1 < argc)
      r.dtypes = argv[++i];
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
              "[--only OP[,OP...]] [--dtypes DT[,DT...]] [-v]\n");
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
    /* each op's own random sequence (the same with or without --only) */
    g_rng = (r.seed * 7919 + 1) ^ ((uint64_t)op * 0x9E3779B97F4A7C15ull);
    /* a random shape, an empty dim; a row longer than 65,535 (f32) */
    shape_t rnd = {1 + (int64_t)(urand() * 5), 1 + (int64_t)(urand() * 300)};
    if (fam == FAM_FORM) {
      run_forms(&r, (dml_op_t)op, rnd);
      continue;
    }
    /* the empty dim on the first dtype the compiler takes */
    int empty_done = 0;
    for (size_t d = 0; d < N_DTYPES; d++) {
      if (r.dtypes && !in_list(r.dtypes, dml_dtype_name(k_dtypes[d]))) continue;
      int before = r.c.n_notallowed;
      run_case(&r, (dml_op_t)op, fam, k_dtypes[d], rnd, "random");
      if (empty_done || r.c.n_notallowed != before) continue;
      empty_done = 1;
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
