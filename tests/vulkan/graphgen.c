/* graphgen.c — dml_graphgen: random whole graphs run on Vulkan and on the
 * CPU, compared (differential testing in the manner of NNSmith: Liu et al.,
 * "NNSmith: Generating Diverse and Valid Test Cases for Deep Learning
 * Compilers", ASPLOS 2023).
 *
 * Each seed gives one graph, reproducibly (its own xorshift stream): 1 or 2
 * f32 inputs of rank 2 to 4, dim 0 the symbol `batch` (bound 32, run at 1
 * and 3) or static, then 4 to 14 ops drawn from:
 *   - the unary elementwise ops of ops.def (DML_OPF_ELEMENTWISE, one f32
 *     input and output), each behind a guard that keeps it in its domain
 *     and well conditioned (Log(|x| + 0.5), Exp(Clip(x, -8, 8)), Sin and
 *     Cos likewise,
 *     Asin(0.9 tanh x), ...); the ones with jumps (Floor, Ceil, Round,
 *     Sign, Shrink, ThresholdedRelu) and those changing the dtype are left
 *     out: a one-ulp difference before a jump is not a bug;
 *   - Add, Sub, Mul, Div (by |y| + 1), Max, Min, Sum, Mean, PRelu with
 *     numpy broadcasting: a value of the same shape (a branch that rejoins,
 *     a residual), a broadcastable value (a reduction's keepdims result), a
 *     constant of broadcast shape, or the value itself;
 *   - Concat of 2 to 4 values (growing tensors: the value itself, earlier
 *     values, Slices of it), Split into 2 or 3 (shrinking), Slice with
 *     steps 1, 2 and -1, Reshape (merging, splitting, flattening dims; 0
 *     and -1 in the shape), Transpose, Pad (constant, reflect, edge),
 *     Gather (constant indices, negative ones), Tile, Expand, feeding the
 *     compute ops;
 *   - Conv (1-D and 2-D, 1x1 and 3x3, strides, pads, groups, depthwise,
 *     bias), MatMul (a constant, or two values: x and its transpose),
 *     Gemm (transB, alpha, beta, bias), BatchNormalization,
 *     LayerNormalization, ReduceSum/Mean/Max/Min (1 or 2 axes, keepdims),
 *     Softmax/LogSoftmax, Max/AveragePool, GlobalAverage/MaxPool;
 * operands are drawn with a bias to recent values, so values get several
 * consumers; the outputs are every value nothing reads and, half the time,
 * a value from the middle of the graph (a fused group's inner value).
 * Random constants, shapes and attributes. Graphs of seeds 3 mod 4 lean to
 * in-place candidates: chains of 2 elementwise ops (three times as often)
 * after a Concat whose result only the chain reads.
 *
 * A graph is compiled for cpu,vulkan (dml_compile_module_memory: the
 * compiler's own pipeline, fusion-aware memory plan included: no kernel's
 * result over a value it reads) or, for one seed in four (seeds 3 mod 4;
 * --plan), for the CPU alone and then given Vulkan kernels
 * (dml_compile_add_kernels): the CPU's memory plan puts results over dying
 * operands, so kernels run in place (issue 23's DenseNet block). Each
 * run counts the kernels planned in place (dml_kernel_in_place) per plan.
 * The package runs on both devices on the same random inputs in [-2, 2).
 * It passes when every output
 * has the CPU's shape and max |vulkan - cpu| <= 1e-4 * max(1, max |cpu|)
 * (norm-wise: f32 sums in other orders, the GPU's exp/tanh; NaN and inf
 * where the CPU has them). A target that refuses an op or form
 * (UNIMPLEMENTED) skips the graph, counted. Any other compile error, run
 * error or mismatch fails; the graph is then shrunk (outputs dropped,
 * values cut into fresh inputs, nodes bypassed, unread nodes removed,
 * while it fails the same way) and printed, and with --save DIR written
 * as DIR/graphgen_<seed>.dmlir, a regression test (--replay).
 *
 *   dml_graphgen [--seeds A:B] [--seconds S] [--save DIR] [--replay FILE]...
 *                [--replay-dir DIR] [--plan mix|fused|cpu]
 *                [--expect-in-place N] [--print-kernels] [--no-shrink] [-v]
 * --seeds A:B (default 0:20) runs seeds A..B-1; --seconds S stops starting
 * new seeds after S seconds; --replay runs saved graphs (each must pass,
 * in both plans), --replay-dir every *.dmlir of DIR; --plan fused or cpu
 * plans every graph (and replay) that way (mix: the default above);
 * --expect-in-place N fails a run whose CPU-planned graphs had fewer than
 * N kernels in place (CTest: it cannot silently stop exercising them);
 * --print-kernels prints each compiled graph's GPU kernels (dmlc compile
 * --print-kernels); -v each seed's result, plan and in-place kernels,
 * -v -v its IR too (large constants elided; -v -v -v in
 * full) and each kernel's device time. Exit status 0 when everything passed,
 * 1 on a failure, 77 without a Vulkan device. docs/kernels.md ("Random
 * graphs") gives the long run and what it found. A replayed graph whose
 * inputs use several symbols (tests/vulkan/graphs/symdims_attention.dmlir)
 * runs with every symbol at 1, the k-th at 3 + 4k, then each at its bound.
 *
 *   dml_graphgen --pack DIR [--target cuda|vulkan] [--seeds A:B] [--seconds S]
 *                [--max-mb M] [--ref-runs N] [--cuda-arch ptx|sm_90,...]
 * compiles each seed's graph for cpu,TARGET (no device needed; planned as
 * --plan says, the CPU fall-back allowed) into
 * DIR/graphgen_<seed>.dmlpkg with the CPU's outputs of its first N runs
 * here (DIR/graphgen_<seed>.r<run>.o<k>.npy; default all runs; the batch-3
 * outputs are the bulk of the bytes) and DIR/graphs.txt, for
 * dml_graphs_check (tests/cuda/graphs_check.c, runtime only) to run on
 * another machine's device (scripts/gpu_prepare.sh, scripts/gpu_check.sh);
 * --cuda-arch as dmlc compile's (default: PTX and sm_80/sm_90 cubins).
 * The runs, inputs and comparison are tests/graphgen_io.h's, shared by both.
 *
 *   dml_graphgen --onnx-dir DIR [--ort CMD] [--seeds A:B] [--seconds S]
 *                [--save DIR2] [--keep] [--no-shrink] [--replay FILE]...
 *                [--replay-dir DIR3] [-v]
 * the CPU against ONNX Runtime (no device needed): each seed's graph is
 * written as DIR/graphgen_<seed>.onnx (dmlc's exporter,
 * dml_onnx_export_module, opset 20: the standard ONNX ops, Pad and the
 * reductions in their 18+ forms) with each run's inputs and the CPU's
 * outputs (DIR/graphgen_<seed>.r<run>.i<k>.npy, .o<k>.npy) and a line of
 * DIR/graphs.txt. With --ort CMD (e.g. "python tests/vulkan/graphgen_ort.py")
 * `CMD 'DIR'` runs them with ONNX Runtime every 50 seeds and compares with
 * the same tolerance; a graph it fails (or that cannot be exported or run
 * here) is shrunk as above, each candidate exported into
 * DIR/shrink_<seed>/ and run by CMD (the shrunk one stays there), printed,
 * and with --save written as DIR2/graphgen_<seed>_ort.dmlir. The files of
 * passing graphs are removed unless --keep. --replay/--replay-dir with
 * --ort check saved graphs the same way (inputs as the Vulkan replay's).
 * Exit status 1 on a failure. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dml_codegen.h"
#include "dml_driver.h"
#include "dml_file.h"
#include "dml_ir_text.h"
#include "dml_kernel.h"
#include "dml_npy.h"
#include "dml_onnx.h"
#include "dml_ops.h"
#include "dml_pkg.h"
#include "dml_rt.h"
#include "graphgen_io.h"

#define GG_MAX_V 256
#define GG_MAX_N 160
#define GG_MAX_R 5
#define GG_MAX_OUT 6
#define GG_BOUND 32
#define GG_MAX_PER_SAMPLE 32768 /* elements of a value per batch row */

enum { GG_DEAD = 0, GG_INPUT, GG_NODE, GG_CONST };

typedef struct {
  int kind;
  int rank;
  int64_t d[GG_MAX_R]; /* d[0]: the batch (non-constants) */
  int i64;             /* constants: i64 data, else f32 */
  int64_t n;           /* constants: elements */
  void *data;          /* constants (owned by the graph's pool) */
  int priv;            /* read by one chain only: pick() never draws it */
} gg_val_t;

typedef struct {
  const char *op;
  int dead;
  int fixed;       /* a domain guard or the op it guards: never cut or bypassed */
  int n_in, in[8]; /* -1: absent (`_`) */
  int n_out, out[4];
  char attrs[160];
} gg_node_t;

typedef struct {
  int lean;      /* leans to in-place candidates (seeds 3 mod 4: gen_chain) */
  int sym;       /* dim 0 of every non-constant is `batch` */
  int64_t batch; /* the static batch when !sym */
  int nv, nn, n_outs;
  gg_val_t v[GG_MAX_V];
  gg_node_t n[GG_MAX_N];
  int outs[GG_MAX_OUT];
  uint64_t rng;
} gg_graph_t;

/* Constant data of every graph made for one seed (shrinking copies graphs
 * shallowly); freed after the seed. */
static void **g_pool;
static size_t g_pool_n, g_pool_cap;
static int g_verbose;
static int g_no_shrink;         /* --no-shrink */
static FILE *g_print_kernels;   /* --print-kernels: stdout */
static int g_show_in_place;     /* print each in-place kernel (-v, not while shrinking) */
static const char *g_cuda_arch; /* --cuda-arch (pack only) */

static void *pool_alloc(size_t bytes) {
  if (g_pool_n == g_pool_cap) {
    size_t cap = g_pool_cap ? 2 * g_pool_cap : 256;
    void **p = (void **)realloc(g_pool, cap * sizeof *p);
    if (!p) abort();
    g_pool = p;
    g_pool_cap = cap;
  }
  void *b = calloc(1, bytes ? bytes : 1);
  if (!b) abort();
  return g_pool[g_pool_n++] = b;
}

static void pool_free(void) {
  for (size_t i = 0; i < g_pool_n; i++) free(g_pool[i]);
  g_pool_n = 0;
}

/* ---- random numbers (xorshift64*, one stream per graph) ---- */

static uint64_t rnd(gg_graph_t *g) {
  g->rng ^= g->rng >> 12;
  g->rng ^= g->rng << 25;
  g->rng ^= g->rng >> 27;
  return g->rng * 2685821657736338717ull;
}
/* uniform in [lo, hi] */
static int64_t rint_(gg_graph_t *g, int64_t lo, int64_t hi) {
  return lo + (int64_t)(rnd(g) % (uint64_t)(hi - lo + 1));
}
static double runi(gg_graph_t *g) {
  return (double)(rnd(g) >> 11) * (1.0 / 9007199254740992.0);
}
static int chance(gg_graph_t *g, double p) {
  return runi(g) < p;
}

/* ---- building ---- */

static int64_t numel_row(const gg_val_t *v) { /* elements per batch row */
  int64_t n = 1;
  for (int i = 1; i < v->rank; i++) n *= v->d[i];
  return n;
}

static int new_val(gg_graph_t *g, int kind, int rank, const int64_t *d) {
  if (g->nv >= GG_MAX_V) return -1;
  gg_val_t *v = &g->v[g->nv];
  memset(v, 0, sizeof *v);
  v->kind = kind;
  v->rank = rank;
  for (int i = 0; i < rank; i++) v->d[i] = d[i];
  return g->nv++;
}

/* An f32 constant of dims d[0..rank), uniform in [lo, hi). */
static int new_const(gg_graph_t *g, int rank, const int64_t *d, double lo, double hi) {
  int id = new_val(g, GG_CONST, rank, d);
  if (id < 0) return -1;
  gg_val_t *v = &g->v[id];
  v->n = 1;
  for (int i = 0; i < rank; i++) v->n *= d[i];
  float *f = (float *)pool_alloc((size_t)v->n * 4);
  for (int64_t i = 0; i < v->n; i++) f[i] = (float)(lo + (hi - lo) * runi(g));
  v->data = f;
  return id;
}

static int new_scalar(gg_graph_t *g, double x) {
  int id = new_const(g, 0, NULL, 0, 0);
  if (id >= 0) ((float *)g->v[id].data)[0] = (float)x;
  return id;
}

static int new_i64(gg_graph_t *g, int n, const int64_t *x) {
  int64_t d = n;
  int id = new_val(g, GG_CONST, 1, &d);
  if (id < 0) return -1;
  gg_val_t *v = &g->v[id];
  v->i64 = 1;
  v->n = n;
  int64_t *p = (int64_t *)pool_alloc((size_t)n * 8);
  memcpy(p, x, (size_t)n * 8);
  v->data = p;
  return id;
}

/* Adds node `op` reading ins[0..n_in) with one result of dims d[0..rank);
 * returns the result, or -1 when the graph is full (or an input is -1
 * where one is required: a failed earlier step). */
static int add_node(gg_graph_t *g, const char *op, int n_in, const int *ins, int rank,
                    const int64_t *d, const char *fmt, ...) {
  if (g->nn >= GG_MAX_N) return -1;
  for (int i = 0; i < n_in; i++)
    if (ins[i] < -1) return -1;
  int out = new_val(g, GG_NODE, rank, d);
  if (out < 0) return -1;
  gg_node_t *n = &g->n[g->nn++];
  memset(n, 0, sizeof *n);
  n->op = op;
  n->n_in = n_in;
  for (int i = 0; i < n_in; i++) n->in[i] = ins[i];
  n->n_out = 1;
  n->out[0] = out;
  if (fmt) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(n->attrs, sizeof n->attrs, fmt, ap);
    va_end(ap);
  }
  return out;
}

static int node1(gg_graph_t *g, const char *op, int a, const char *attrs) {
  if (a < 0) return -2;
  int r = add_node(g, op, 1, &a, g->v[a].rank, g->v[a].d, attrs ? "%s" : NULL, attrs);
  return r < 0 ? -2 : r;
}
static int node2(gg_graph_t *g, const char *op, int a, int b) {
  if (a < 0 || b < 0) return -2;
  const gg_val_t *x = &g->v[a], *y = &g->v[b];
  int64_t d[GG_MAX_R];
  int r = x->rank > y->rank ? x->rank : y->rank;
  for (int i = 0; i < r; i++) { /* numpy broadcasting, from the right */
    int ix = i - (r - x->rank), iy = i - (r - y->rank);
    int64_t dx = ix >= 0 ? x->d[ix] : 1, dy = iy >= 0 ? y->d[iy] : 1;
    d[i] = dx == 1 ? dy : dx;
  }
  int ins[2] = {a, b};
  int o = add_node(g, op, 2, ins, r, d, NULL);
  return o < 0 ? -2 : o;
}

/* Non-constant values (live), drawn with a bias to the most recent; -1
 * when none satisfies `ok`. */
typedef int (*gg_pred_t)(const gg_graph_t *g, int v, const void *arg);

static int pick(gg_graph_t *g, gg_pred_t ok, const void *arg, int exclude) {
  int cand[GG_MAX_V], n = 0;
  for (int i = 0; i < g->nv; i++)
    if ((g->v[i].kind == GG_INPUT || g->v[i].kind == GG_NODE) && i != exclude &&
        !g->v[i].priv && (!ok || ok(g, i, arg)))
      cand[n++] = i;
  if (!n) return -1;
  double r = runi(g);
  return cand[n - 1 - (int)((double)n * r * r)];
}

static int any_val(const gg_graph_t *g, int v, const void *arg) {
  (void)g, (void)v, (void)arg;
  return 1;
}
static int rank_at_least(const gg_graph_t *g, int v, const void *arg) {
  return g->v[v].rank >= *(const int *)arg;
}
static int rank_is(const gg_graph_t *g, int v, const void *arg) {
  return g->v[v].rank == *(const int *)arg;
}

/* ---- the op table ---- */

/* How a unary op's operand is kept in its domain (see the file comment). */
enum { DOM_ANY, DOM_POS, DOM_GE1, DOM_UNIT, DOM_CLIP8, DOM_TAN, DOM_SKIP };

static int unary_domain(const char *name) {
  static const struct {
    const char *op;
    int dom;
  } t[] = {{"Sqrt", DOM_POS},
           {"Log", DOM_POS},
           {"Reciprocal", DOM_POS},
           {"Acosh", DOM_GE1},
           {"Asin", DOM_UNIT},
           {"Acos", DOM_UNIT},
           {"Atanh", DOM_UNIT},
           {"Exp", DOM_CLIP8},
           {"Cosh", DOM_CLIP8},
           {"Sinh", DOM_CLIP8},
           /* periodic: an argument's f32 rounding is the result's absolute
            * error (Sin of a row sum near 600: 1.2e-4; seed 7852 of the ORT
            * run, both sides 4e-5..8e-5 from float64) */
           {"Sin", DOM_CLIP8},
           {"Cos", DOM_CLIP8},
           {"Tan", DOM_TAN},
           {"Floor", DOM_SKIP},
           {"Ceil", DOM_SKIP},
           {"Round", DOM_SKIP},
           {"Sign", DOM_SKIP},
           {"Shrink", DOM_SKIP},
           {"ThresholdedRelu", DOM_SKIP},
           {"Not", DOM_SKIP},
           {"Cast", DOM_SKIP},
           {"IsInf", DOM_SKIP},
           {"IsNaN", DOM_SKIP}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    if (!strcmp(t[i].op, name)) return t[i].dom;
  return DOM_ANY;
}

static const char *g_unary[64];
static int g_n_unary;

/* The unary elementwise ops of ops.def the generator draws from. */
static void unary_table(void) {
  g_n_unary = 0;
  for (int op = 1; op < DML_OP_COUNT_ && g_n_unary < 64; op++) {
    const dml_op_info_t *in = dml_op_info((dml_op_t)op);
    if (in && (in->flags & DML_OPF_ELEMENTWISE) && in->min_inputs == 1 &&
        in->max_inputs == 1 && in->min_outputs == 1 && in->max_outputs == 1 &&
        unary_domain(in->name) != DOM_SKIP)
      g_unary[g_n_unary++] = in->name;
  }
}

/* Marks nodes [from, nn) fixed (shrinking keeps a guard with its op). */
static void fix_from(gg_graph_t *g, int from) {
  for (int i = from; i < g->nn; i++) g->n[i].fixed = 1;
}

static int gen_unary(gg_graph_t *g) {
  int a = pick(g, any_val, NULL, -1), nn = g->nn;
  const char *op = g_unary[rint_(g, 0, g_n_unary - 1)];
  switch (unary_domain(op)) {
    case DOM_POS:
      a = node2(g, "Add", node1(g, "Abs", a, NULL), new_scalar(g, 0.5));
      break;
    case DOM_GE1:
      a = node2(g, "Add", node1(g, "Abs", a, NULL), new_scalar(g, 1.5));
      break;
    case DOM_UNIT:
      a = node2(g, "Mul", node1(g, "Tanh", a, NULL), new_scalar(g, 0.9));
      break;
    case DOM_TAN:
      a = node2(g, "Mul", node1(g, "Tanh", a, NULL), new_scalar(g, 1.2));
      break;
    case DOM_CLIP8: {
      if (a < 0) return 0;
      int ins[3] = {a, new_scalar(g, -8.0), new_scalar(g, 8.0)};
      a = add_node(g, "Clip", 3, ins, g->v[a].rank, g->v[a].d, NULL);
      break;
    }
    default: break;
  }
  char attrs[64] = "";
  if (!strcmp(op, "LeakyRelu") || !strcmp(op, "Elu") || !strcmp(op, "Celu"))
    snprintf(attrs, sizeof attrs, "alpha = %.3f", 0.05 + runi(g));
  int ok = node1(g, op, a, attrs[0] ? attrs : NULL) >= 0;
  if (unary_domain(op) != DOM_ANY) fix_from(g, nn);
  return ok;
}

/* v2's dims broadcast with v's (same rank, equal or 1 each, the batch
 * equal). */
static int bcast_with(const gg_graph_t *g, int v2, const void *arg) {
  int v = *(const int *)arg;
  const gg_val_t *x = &g->v[v], *y = &g->v[v2];
  if (x->rank != y->rank || x->d[0] != y->d[0]) return 0;
  for (int i = 1; i < x->rank; i++)
    if (x->d[i] != y->d[i] && x->d[i] != 1 && y->d[i] != 1) return 0;
  return 1;
}

static int gen_binary(gg_graph_t *g) {
  static const char *ops[] = {"Add", "Sub", "Mul",  "Div",   "Max",
                              "Min", "Sum", "Mean", "PRelu", "Add"};
  const char *op = ops[rint_(g, 0, 9)];
  int a = pick(g, any_val, NULL, -1), b = -1;
  const gg_val_t *x = &g->v[a];
  double r = runi(g);
  int prelu = !strcmp(op, "PRelu");
  if (!prelu && r < 0.45) b = pick(g, bcast_with, &a, a);
  if (b < 0 && (prelu || r < 0.8)) { /* a constant of a broadcast shape */
    int64_t lo = prelu ? 1 : 0, hi = x->rank - 1;
    if (hi < lo) lo = hi = x->rank; /* a rank-0/1 value: a constant of its own rank */
    int k = (int)rint_(g, lo, hi);
    int64_t d[GG_MAX_R];
    for (int i = 0; i < k; i++) {
      d[i] = x->d[x->rank - k + i];
      if (chance(g, 0.4)) d[i] = 1;
    }
    /* a rank-1 value [batch] (a reduction's): its symbolic batch (-1 here)
     * as 1 in the constant (seed 2577 aborted making a constant of -1) */
    if (k == x->rank && d[0] < 0) d[0] = 1;
    b = new_const(g, k, d, prelu ? 0.0 : -1.5, prelu ? 0.5 : 1.5);
  }
  if (b < 0) b = chance(g, 0.5) ? a : node1(g, "Tanh", a, NULL);
  if (b < 0) return 0;
  int div = !strcmp(op, "Div"), nn = g->nn;
  if (div && g->v[b].kind == GG_CONST) /* a constant divisor: in [0.5, 2) */
    b = new_const(g, g->v[b].rank, g->v[b].d, 0.5, 2.0);
  else if (div)
    b = node2(g, "Add", node1(g, "Abs", b, NULL), new_scalar(g, 1.0));
  if (b < 0) return 0;
  if (!prelu && !div && chance(g, 0.3)) {
    int t = a;
    a = b, b = t;
  }
  /* the result keeps a non-constant's batch: a constant never has more dims */
  if (g->v[a].kind == GG_CONST && g->v[b].kind == GG_CONST) return 0;
  int ok = node2(g, op, a, b) >= 0;
  if (div) fix_from(g, nn);
  return ok;
}

/* same dims as v except along `axis` */
typedef struct {
  int v, axis;
} gg_cat_t;
static int cat_with(const gg_graph_t *g, int v2, const void *arg) {
  const gg_cat_t *c = (const gg_cat_t *)arg;
  const gg_val_t *x = &g->v[c->v], *y = &g->v[v2];
  if (x->rank != y->rank) return 0;
  for (int i = 0; i < x->rank; i++)
    if (i != c->axis && x->d[i] != y->d[i]) return 0;
  return 1;
}

/* Slice of `a` along `axis` keeping [s, e) with step 1 (or -1, reversed). */
static int slice_of(gg_graph_t *g, int a, int axis, int64_t s, int64_t e, int rev) {
  const gg_val_t *x = &g->v[a];
  int64_t d[GG_MAX_R], dim = x->d[axis];
  memcpy(d, x->d, sizeof d);
  d[axis] = e - s;
  int64_t st = rev ? e - 1 : s, en = rev ? (s == 0 ? -dim - 1 : s - 1) : e;
  int64_t ax = chance(g, 0.3) ? axis - x->rank : axis, step = rev ? -1 : 1;
  if (!rev && e == dim && chance(g, 0.3)) en = INT64_MAX; /* clamped */
  int ins[5] = {a, new_i64(g, 1, &st), new_i64(g, 1, &en), new_i64(g, 1, &ax),
                new_i64(g, 1, &step)};
  return add_node(g, "Slice", 5, ins, x->rank, d, NULL);
}

static int gen_concat(gg_graph_t *g) {
  int two = 2;
  int a = pick(g, rank_at_least, &two, -1);
  if (a < 0) return 0;
  gg_cat_t c = {a, (int)rint_(g, 1, g->v[a].rank - 1)};
  int ins[4] = {a}, n = 1, want = (int)rint_(g, 2, 4);
  while (n < want) {
    int b = chance(g, 0.6) ? pick(g, cat_with, &c, -1) : -1;
    if (b < 0) {
      int64_t dim = g->v[a].d[c.axis];
      if (dim >= 2 && chance(g, 0.5)) {
        int64_t s = rint_(g, 0, dim - 1), e = rint_(g, s + 1, dim);
        b = slice_of(g, a, c.axis, s, e, chance(g, 0.3));
      } else {
        b = chance(g, 0.5) ? a : node1(g, "Sigmoid", a, NULL);
      }
    }
    if (b < 0) return 0;
    ins[n++] = b;
  }
  for (int i = n - 1; i > 0; i--) { /* shuffled */
    int j = (int)rint_(g, 0, i), t = ins[i];
    ins[i] = ins[j], ins[j] = t;
  }
  int64_t d[GG_MAX_R];
  memcpy(d, g->v[a].d, sizeof d);
  d[c.axis] = 0;
  for (int i = 0; i < n; i++) d[c.axis] += g->v[ins[i]].d[c.axis];
  if (numel_row(&g->v[a]) / g->v[a].d[c.axis] * d[c.axis] > GG_MAX_PER_SAMPLE) return 0;
  int axis = chance(g, 0.2) ? c.axis - g->v[a].rank : c.axis;
  return add_node(g, "Concat", n, ins, g->v[a].rank, d, "axis = %d", axis) >= 0;
}

static int splittable(const gg_graph_t *g, int v, const void *arg) {
  (void)arg;
  for (int i = 1; i < g->v[v].rank; i++)
    if (g->v[v].d[i] >= 2) return 1;
  return 0;
}

static int gen_split(gg_graph_t *g) {
  int a = pick(g, splittable, NULL, -1);
  if (a < 0) return 0;
  const gg_val_t *x = &g->v[a];
  int axis;
  do axis = (int)rint_(g, 1, x->rank - 1);
  while (x->d[axis] < 2);
  int64_t dim = x->d[axis], sz[3];
  int parts = dim >= 3 && chance(g, 0.5) ? 3 : 2;
  int64_t left = dim;
  for (int i = 0; i < parts - 1; i++) {
    sz[i] = rint_(g, 1, left - (parts - 1 - i));
    left -= sz[i];
  }
  sz[parts - 1] = left;
  int ins[2] = {a, new_i64(g, parts, sz)};
  int64_t d[GG_MAX_R];
  memcpy(d, x->d, sizeof d);
  d[axis] = sz[0];
  int o = add_node(g, "Split", 2, ins, x->rank, d, "axis = %d", axis);
  if (o < 0) return 0;
  gg_node_t *n = &g->n[g->nn - 1];
  for (int i = 1; i < parts; i++) {
    d[axis] = sz[i];
    int v = new_val(g, GG_NODE, g->v[a].rank, d);
    if (v < 0) return 0;
    n->out[n->n_out++] = v;
  }
  return 1;
}

static int gen_slice(gg_graph_t *g) {
  int a = pick(g, splittable, NULL, -1);
  if (a < 0) return 0;
  const gg_val_t *x = &g->v[a];
  int axis;
  do axis = (int)rint_(g, 1, x->rank - 1);
  while (x->d[axis] < 2);
  int64_t dim = x->d[axis];
  if (chance(g, 0.3)) { /* step 2 */
    int64_t s = rint_(g, 0, dim - 1), e = rint_(g, s + 1, dim), step = 2;
    int64_t ax = axis, d[GG_MAX_R];
    memcpy(d, x->d, sizeof d);
    d[axis] = (e - s + 1) / 2;
    int64_t en = chance(g, 0.3) ? e - dim : e; /* negative ends count from the end */
    if (en == 0) en = e;
    int ins[5] = {a, new_i64(g, 1, &s), new_i64(g, 1, &en), new_i64(g, 1, &ax),
                  new_i64(g, 1, &step)};
    return add_node(g, "Slice", 5, ins, x->rank, d, NULL) >= 0;
  }
  int64_t s = rint_(g, 0, dim - 1), e = rint_(g, s + 1, dim);
  return slice_of(g, a, axis, s, e, chance(g, 0.3)) >= 0;
}

static int gen_reshape(gg_graph_t *g) {
  int two = 2;
  int a = pick(g, rank_at_least, &two, -1);
  if (a < 0) return 0;
  const gg_val_t *x = &g->v[a];
  int64_t d[GG_MAX_R];
  int r = 0;
  d[r++] = x->d[0];
  double c = runi(g);
  if (x->rank >= 3 && c < 0.4) { /* merge dims i, i + 1 */
    int i = (int)rint_(g, 1, x->rank - 2);
    for (int k = 1; k < x->rank; k++) {
      if (k == i + 1) continue;
      d[r++] = k == i ? x->d[i] * x->d[i + 1] : x->d[k];
    }
  } else if (x->rank <= 4 && c < 0.8) { /* split a dim with a factor */
    int i = (int)rint_(g, 1, x->rank - 1);
    int64_t f = 0;
    for (int64_t t = 2; t < x->d[i]; t++)
      if (x->d[i] % t == 0 && (!f || chance(g, 0.5))) f = t;
    if (!f) return 0;
    for (int k = 1; k < x->rank; k++) {
      if (k == i) {
        d[r++] = f;
        d[r++] = x->d[i] / f;
      } else {
        d[r++] = x->d[k];
      }
    }
  } else { /* flatten */
    if (x->rank == 2) return 0;
    d[r++] = numel_row(x);
  }
  int64_t sh[GG_MAX_R];
  sh[0] = 0; /* copy the batch */
  int minus = r > 1 && chance(g, 0.4) ? (int)rint_(g, 1, r - 1) : -1;
  for (int k = 1; k < r; k++) sh[k] = k == minus ? -1 : d[k];
  int ins[2] = {a, new_i64(g, r, sh)};
  return add_node(g, "Reshape", 2, ins, r, d, NULL) >= 0;
}

static int gen_transpose(gg_graph_t *g) {
  int three = 3;
  int a = pick(g, rank_at_least, &three, -1);
  if (a < 0) return 0;
  const gg_val_t *x = &g->v[a];
  int perm[GG_MAX_R], id = 1;
  for (int i = 0; i < x->rank; i++) perm[i] = i;
  while (id) {
    for (int i = x->rank - 1; i > 1; i--) {
      int j = (int)rint_(g, 1, i), t = perm[i];
      perm[i] = perm[j], perm[j] = t;
    }
    id = 1;
    for (int i = 0; i < x->rank; i++) id &= perm[i] == i;
  }
  int64_t d[GG_MAX_R];
  char attrs[64];
  int len = snprintf(attrs, sizeof attrs, "perm = [0");
  d[0] = x->d[0];
  for (int i = 1; i < x->rank; i++) {
    d[i] = x->d[perm[i]];
    len += snprintf(attrs + len, sizeof attrs - (size_t)len, ", %d", perm[i]);
  }
  snprintf(attrs + len, sizeof attrs - (size_t)len, "]");
  return add_node(g, "Transpose", 1, &a, x->rank, d, "%s", attrs) >= 0;
}

static int conv_ok(const gg_graph_t *g, int v, const void *arg) {
  (void)arg;
  return g->v[v].rank == 3 || g->v[v].rank == 4;
}

static int gen_conv(gg_graph_t *g) {
  int a = pick(g, conv_ok, NULL, -1);
  if (a < 0) return 0;
  const gg_val_t *x = &g->v[a];
  int sp = x->rank - 2;
  int64_t C = x->d[1], k = chance(g, 0.5) ? 1 : 3, s = chance(g, 0.25) ? 2 : 1;
  int64_t p = k == 3 && chance(g, 0.8) ? 1 : 0, grp = 1, M = rint_(g, 1, 32);
  if (C > 1 && chance(g, 0.2)) { /* depthwise */
    grp = C;
    M = C * rint_(g, 1, 2);
  } else if (C % 2 == 0 && chance(g, 0.15)) {
    grp = 2;
    M = 2 * rint_(g, 1, 12);
  }
  int64_t d[GG_MAX_R] = {x->d[0], M}, wd[GG_MAX_R] = {M, C / grp, k, k};
  for (int i = 0; i < sp; i++) {
    int64_t o = (x->d[2 + i] + 2 * p - k) / s + 1;
    if (x->d[2 + i] + 2 * p < k || o < 1) return 0;
    d[2 + i] = o;
  }
  double sc = 1.5 / sqrt((double)(C / grp * k * (sp == 2 ? k : 1)));
  int ins[3] = {a, new_const(g, x->rank, wd, -sc, sc), -1};
  if (chance(g, 0.5)) ins[2] = new_const(g, 1, &M, -0.5, 0.5);
  if (sp == 2)
    return add_node(g, "Conv", 3, ins, 4, d,
                    "kernel_shape = [%lld, %lld], pads = [%lld, %lld, %lld, %lld], "
                    "strides = [%lld, %lld], group = %lld",
                    (long long)k, (long long)k, (long long)p, (long long)p, (long long)p,
                    (long long)p, (long long)s, (long long)s, (long long)grp) >= 0;
  return add_node(g, "Conv", 3, ins, 3, d,
                  "kernel_shape = [%lld], pads = [%lld, %lld], strides = [%lld], group = "
                  "%lld",
                  (long long)k, (long long)p, (long long)p, (long long)s,
                  (long long)grp) >= 0;
}

static int gen_matmul(gg_graph_t *g) {
  int two = 2, three = 3;
  if (chance(g, 0.3)) { /* x (N, M, K) times its transpose (N, K, M) */
    int a = pick(g, rank_is, &three, -1);
    if (a < 0) return 0;
    const gg_val_t *x = &g->v[a];
    if (x->d[1] * x->d[1] > GG_MAX_PER_SAMPLE) return 0;
    int64_t td[3] = {x->d[0], x->d[2], x->d[1]}, d[3] = {x->d[0], x->d[1], x->d[1]};
    int t = add_node(g, "Transpose", 1, &a, 3, td, "perm = [0, 2, 1]");
    if (t < 0) return 0;
    int ins[2] = {a, t};
    return add_node(g, "MatMul", 2, ins, 3, d, NULL) >= 0;
  }
  int a = pick(g, rank_at_least, &two, -1);
  if (a < 0) return 0;
  const gg_val_t *x = &g->v[a];
  int64_t K = x->d[x->rank - 1], M = rint_(g, 1, 48), wd[2] = {K, M}, d[GG_MAX_R];
  memcpy(d, x->d, sizeof d);
  d[x->rank - 1] = M;
  double sc = 1.5 / sqrt((double)K);
  int ins[2] = {a, new_const(g, 2, wd, -sc, sc)};
  return add_node(g, "MatMul", 2, ins, x->rank, d, NULL) >= 0;
}

static int gen_gemm(gg_graph_t *g) {
  int two = 2;
  int a = pick(g, rank_is, &two, -1);
  if (a < 0) return 0;
  const gg_val_t *x = &g->v[a];
  int64_t K = x->d[1], M = rint_(g, 1, 48);
  int tb = chance(g, 0.5);
  int64_t wd[2] = {tb ? M : K, tb ? K : M}, d[2] = {x->d[0], M};
  double sc = 1.5 / sqrt((double)K), alpha = 0.5 + runi(g), beta = 0.5 + runi(g);
  int ins[3] = {a, new_const(g, 2, wd, -sc, sc), -1};
  int n_in = 2;
  if (chance(g, 0.6)) {
    ins[2] = new_const(g, 1, &M, -0.5, 0.5);
    n_in = 3;
  }
  return add_node(g, "Gemm", n_in, ins, 2, d, "transB = %d, alpha = %.3f, beta = %.3f",
                  tb, alpha, beta) >= 0;
}

static int gen_norm(gg_graph_t *g) {
  int two = 2;
  int a = pick(g, rank_at_least, &two, -1);
  if (a < 0) return 0;
  const gg_val_t *x = &g->v[a];
  if (chance(g, 0.5)) {
    int64_t C = x->d[1];
    int ins[5] = {a, new_const(g, 1, &C, 0.5, 1.5), new_const(g, 1, &C, -0.3, 0.3),
                  new_const(g, 1, &C, -0.5, 0.5), new_const(g, 1, &C, 0.5, 2.0)};
    return add_node(g, "BatchNormalization", 5, ins, x->rank, x->d, "epsilon = %.3g",
                    chance(g, 0.5) ? 1e-5 : 1e-3) >= 0;
  }
  int axis = (int)rint_(g, 1, x->rank - 1);
  int ins[3] = {a, new_const(g, x->rank - axis, x->d + axis, 0.5, 1.5), -1};
  int n_in = 2;
  if (chance(g, 0.5)) {
    ins[2] = new_const(g, x->rank - axis, x->d + axis, -0.3, 0.3);
    n_in = 3;
  }
  return add_node(g, "LayerNormalization", n_in, ins, x->rank, x->d, "axis = %d",
                  chance(g, 0.5) ? axis : axis - x->rank) >= 0;
}

static int gen_reduce(gg_graph_t *g) {
  static const char *ops[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"};
  int two = 2;
  int a = pick(g, rank_at_least, &two, -1);
  if (a < 0) return 0;
  const gg_val_t *x = &g->v[a];
  int ax0 = (int)rint_(g, 1, x->rank - 1), ax1 = -1;
  if (x->rank >= 3 && chance(g, 0.4)) {
    do ax1 = (int)rint_(g, 1, x->rank - 1);
    while (ax1 == ax0);
  }
  int keep = chance(g, 0.5);
  int64_t d[GG_MAX_R];
  int r = 0;
  for (int i = 0; i < x->rank; i++) {
    if (i == ax0 || i == ax1) {
      if (keep) d[r++] = 1;
    } else {
      d[r++] = x->d[i];
    }
  }
  char axes[32];
  if (ax1 >= 0)
    snprintf(axes, sizeof axes, "[%d, %d]", ax0, ax1);
  else
    snprintf(axes, sizeof axes, "[%d]", chance(g, 0.3) ? ax0 - x->rank : ax0);
  return add_node(g, ops[rint_(g, 0, 3)], 1, &a, r, d, "axes = %s, keepdims = %d", axes,
                  keep) >= 0;
}

static int gen_softmax(gg_graph_t *g) {
  int two = 2;
  int a = pick(g, rank_at_least, &two, -1);
  if (a < 0) return 0;
  int rank = g->v[a].rank, axis = (int)rint_(g, 1, rank - 1);
  char attrs[32];
  snprintf(attrs, sizeof attrs, "axis = %d", chance(g, 0.5) ? axis - rank : axis);
  return node1(g, chance(g, 0.7) ? "Softmax" : "LogSoftmax", a, attrs) >= 0;
}

static int gen_pool(gg_graph_t *g) {
  int four = 4;
  int a = pick(g, rank_is, &four, -1);
  if (a < 0) return 0;
  const gg_val_t *x = &g->v[a];
  if (chance(g, 0.3)) {
    int64_t d[4] = {x->d[0], x->d[1], 1, 1};
    return add_node(g, chance(g, 0.5) ? "GlobalAveragePool" : "GlobalMaxPool", 1, &a, 4,
                    d, NULL) >= 0;
  }
  int64_t k = rint_(g, 2, 3), s = rint_(g, 1, 2), p = chance(g, 0.3) ? 1 : 0;
  int64_t d[4] = {x->d[0], x->d[1]};
  for (int i = 0; i < 2; i++) {
    if (x->d[2 + i] + 2 * p < k) return 0;
    d[2 + i] = (x->d[2 + i] + 2 * p - k) / s + 1;
  }
  int avg = chance(g, 0.5);
  char extra[40] = "";
  if (avg && p)
    snprintf(extra, sizeof extra, ", count_include_pad = %d", (int)rint_(g, 0, 1));
  return add_node(
             g, avg ? "AveragePool" : "MaxPool", 1, &a, 4, d,
             "kernel_shape = [%lld, %lld], strides = [%lld, %lld], pads = [%lld, %lld, "
             "%lld, %lld]%s",
             (long long)k, (long long)k, (long long)s, (long long)s, (long long)p,
             (long long)p, (long long)p, (long long)p, extra) >= 0;
}

/* Pad (constant, reflect or edge) of the non-batch dims: data movement
 * that feeds compute, with reads past the edges. */
static int gen_pad(gg_graph_t *g) {
  int two = 2;
  int a = pick(g, rank_at_least, &two, -1);
  if (a < 0) return 0;
  const gg_val_t *x = &g->v[a];
  static const char *modes[] = {"constant", "reflect", "edge"};
  int mode = (int)rint_(g, 0, 2);
  int64_t pads[2 * GG_MAX_R] = {0}, d[GG_MAX_R];
  memcpy(d, x->d, sizeof d);
  for (int i = 1; i < x->rank; i++) {
    int64_t most = mode == 1 ? x->d[i] - 1 : 3; /* reflect: below the dim */
    if (most > 3) most = 3;
    if (most < 0 || chance(g, 0.4)) continue;
    pads[i] = rint_(g, 0, most);
    pads[x->rank + i] = rint_(g, 0, most);
    d[i] += pads[i] + pads[x->rank + i];
  }
  int ins[3] = {a, new_i64(g, 2 * x->rank, pads), -1};
  int n_in = 2;
  if (mode == 0 && chance(g, 0.5)) {
    ins[2] = new_scalar(g, runi(g) * 2 - 1);
    n_in = 3;
  }
  return add_node(g, "Pad", n_in, ins, x->rank, d, "mode = \"%s\"", modes[mode]) >= 0;
}

/* Gather along a non-batch axis with constant indices (negative ones,
 * repeats). */
static int gen_gather(gg_graph_t *g) {
  int two = 2;
  int a = pick(g, rank_at_least, &two, -1);
  if (a < 0) return 0;
  const gg_val_t *x = &g->v[a];
  int axis = (int)rint_(g, 1, x->rank - 1);
  int64_t dim = x->d[axis], n = rint_(g, 1, 12), idx[12], d[GG_MAX_R];
  for (int i = 0; i < n; i++) idx[i] = rint_(g, -dim, dim - 1);
  memcpy(d, x->d, sizeof d);
  d[axis] = n;
  int ins[2] = {a, new_i64(g, (int)n, idx)};
  return add_node(g, "Gather", 2, ins, x->rank, d, "axis = %d", axis) >= 0;
}

/* Tile (repeats of the non-batch dims) or Expand of a dim of extent 1. */
static int gen_tile(gg_graph_t *g) {
  int two = 2;
  int a = pick(g, rank_at_least, &two, -1);
  if (a < 0) return 0;
  const gg_val_t *x = &g->v[a];
  int64_t rep[GG_MAX_R], d[GG_MAX_R];
  memcpy(d, x->d, sizeof d);
  int ones = 0;
  for (int i = 1; i < x->rank; i++) ones += x->d[i] == 1;
  if (ones && chance(g, 0.6)) { /* Expand: each dim of 1 to 2..6 */
    int64_t sh[GG_MAX_R];
    sh[0] = 1; /* broadcasts with the batch */
    for (int i = 1; i < x->rank; i++) {
      sh[i] = x->d[i] == 1 ? rint_(g, 2, 6) : (chance(g, 0.3) ? 1 : x->d[i]);
      if (x->d[i] == 1) d[i] = sh[i];
    }
    int ins[2] = {a, new_i64(g, x->rank, sh)};
    return add_node(g, "Expand", 2, ins, x->rank, d, NULL) >= 0;
  }
  rep[0] = 1;
  for (int i = 1; i < x->rank; i++) {
    rep[i] = chance(g, 0.5) ? rint_(g, 1, 3) : 1;
    d[i] *= rep[i];
  }
  int ins[2] = {a, new_i64(g, x->rank, rep)};
  return add_node(g, "Tile", 2, ins, x->rank, d, NULL) >= 0;
}

/* A chain of 1 to 3 elementwise ops (BatchNormalization, Relu, Sigmoid,
 * Tanh, Mul/Add of a per-channel constant) on the newest value, which it
 * is then usually the only reader of, half the time after a Concat: the
 * form a memory plan may put in place (a DenseNet block's Concat ->
 * BatchNorm -> Relu). In a graph that leans to in-place candidates
 * (g->lean) always after a Concat, of 2 ops, and the chain stays that
 * value's last reader (priv): the CPU's plan (mem-plan without fusion
 * awareness) may then put the chain's result, one kernel, over it. */
static int gen_concat(gg_graph_t *g);

static int gen_chain(gg_graph_t *g) {
  if (g->lean || chance(g, 0.5)) gen_concat(g); /* after a kernel it cannot join */
  int a = -1;
  for (int v = g->nv - 1; v >= 0 && a < 0; v--)
    if ((g->v[v].kind == GG_NODE || g->v[v].kind == GG_INPUT) && !g->v[v].priv) a = v;
  if (a < 0 || g->v[a].rank < 2) return 0;
  int len = g->lean ? 2 : (int)rint_(g, 1, 3);
  if (g->lean && g->v[a].kind == GG_NODE) g->v[a].priv = 1;
  for (int i = 0; i < len && a >= 0; i++) {
    const gg_val_t *x = &g->v[a];
    int64_t C = x->d[1], cd[GG_MAX_R];
    switch (rint_(g, 0, 4)) {
      case 0: {
        int ins[5] = {a, new_const(g, 1, &C, 0.5, 1.5), new_const(g, 1, &C, -0.3, 0.3),
                      new_const(g, 1, &C, -0.5, 0.5), new_const(g, 1, &C, 0.5, 2.0)};
        a = add_node(g, "BatchNormalization", 5, ins, x->rank, x->d, NULL);
        break;
      }
      case 1: a = node1(g, "Relu", a, NULL); break;
      case 2: a = node1(g, chance(g, 0.5) ? "Sigmoid" : "Tanh", a, NULL); break;
      default: /* per channel: [C, 1, ...] */
        cd[0] = C;
        for (int k = 1; k < x->rank - 1; k++) cd[k] = 1;
        a = node2(g, chance(g, 0.5) ? "Mul" : "Add", a,
                  new_const(g, x->rank - 1, cd, -1.5, 1.5));
        break;
    }
  }
  return a >= 0;
}

typedef int (*gg_gen_fn)(gg_graph_t *g);

/* A step's weight in graph g: gen_chain's tripled when g leans to in-place
 * candidates. */
static int weight_of(const gg_graph_t *g, gg_gen_fn fn, int weight) {
  return g->lean && fn == gen_chain ? 3 * weight : weight;
}

/* Generates graph `seed` into *g. */
static void generate(gg_graph_t *g, uint64_t seed) {
  static const struct {
    gg_gen_fn fn;
    int weight;
  } gens[] = {{gen_unary, 14},  {gen_binary, 14}, {gen_concat, 8},    {gen_split, 5},
              {gen_slice, 5},   {gen_reshape, 6}, {gen_transpose, 5}, {gen_conv, 8},
              {gen_matmul, 6},  {gen_gemm, 3},    {gen_norm, 5},      {gen_reduce, 6},
              {gen_softmax, 4}, {gen_pool, 4},    {gen_chain, 10},    {gen_pad, 3},
              {gen_gather, 3},  {gen_tile, 3}};
  memset(g, 0, sizeof *g);
  g->lean = seed % 4 == 3;
  int total = 0;
  for (size_t i = 0; i < sizeof gens / sizeof gens[0]; i++)
    total += weight_of(g, gens[i].fn, gens[i].weight);
  g->rng = (seed + 1) * 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < 4; i++) rnd(g);
  g->sym = chance(g, 0.75);
  g->batch = g->sym ? -1 : rint_(g, 1, 2);
  int n_in = chance(g, 0.4) ? 2 : 1;
  for (int i = 0; i < n_in; i++) {
    int64_t d[GG_MAX_R] = {g->batch};
    int rank = (int)rint_(g, 2, 4);
    if (i == 1 && chance(g, 0.5)) { /* the first input's shape */
      rank = g->v[0].rank;
      memcpy(d, g->v[0].d, sizeof d);
    } else { /* elements per row log-uniform in [8, 24576] */
      int64_t row = (int64_t)exp(log(8.0) + runi(g) * (log(24576.0) - log(8.0)));
      if (rank == 2) {
        d[1] = row;
      } else {
        d[1] = rint_(g, 1, rank == 3 ? 48 : 32);
        int64_t sp = row / d[1] > 1 ? row / d[1] : 1;
        if (rank == 3) {
          d[2] = sp;
        } else {
          d[2] = (int64_t)sqrt((double)sp) + rint_(g, -2, 2);
          if (d[2] < 1) d[2] = 1;
          d[3] = sp / d[2] > 1 ? sp / d[2] : 1;
        }
      }
    }
    new_val(g, GG_INPUT, rank, d);
  }
  int want = (int)rint_(g, 4, 14), made = 0;
  for (int tries = 0; made < want && tries < 200; tries++) {
    int r = (int)rint_(g, 1, total), i = 0;
    while (r > weight_of(g, gens[i].fn, gens[i].weight)) {
      r -= weight_of(g, gens[i].fn, gens[i].weight);
      i++;
    }
    int nv = g->nv, nn = g->nn, priv[GG_MAX_V];
    for (int v = 0; v < nv; v++) priv[v] = g->v[v].priv;
    if (gens[i].fn(g)) {
      int big = 0; /* keep values small enough for the CPU and lavapipe */
      for (int v = nv; v < g->nv; v++)
        if (g->v[v].kind == GG_NODE && numel_row(&g->v[v]) > GG_MAX_PER_SAMPLE) big = 1;
      if (!big) {
        made++;
        continue;
      }
    }
    g->nv = nv; /* undo a partial step */
    g->nn = nn;
    for (int v = 0; v < nv; v++) g->v[v].priv = priv[v];
  }
  /* outputs: every value nothing reads, and maybe one from the middle */
  int used[GG_MAX_V] = {0};
  for (int i = 0; i < g->nn; i++)
    for (int k = 0; k < g->n[i].n_in; k++)
      if (g->n[i].in[k] >= 0) used[g->n[i].in[k]] = 1;
  for (int v = g->nv - 1; v >= 0 && g->n_outs < GG_MAX_OUT - 1; v--)
    if (g->v[v].kind == GG_NODE && !used[v]) g->outs[g->n_outs++] = v;
  if (chance(g, 0.5)) {
    int v = pick(g, any_val, NULL, -1);
    int dup = 0;
    for (int i = 0; i < g->n_outs; i++) dup |= g->outs[i] == v;
    if (v >= 0 && g->v[v].kind == GG_NODE && !dup) g->outs[g->n_outs++] = v;
  }
  if (!g->n_outs) g->outs[g->n_outs++] = 0; /* (no op applied) */
}

/* ---- IR text ---- */

typedef struct {
  char *b;
  size_t n, cap;
} gg_sb_t;

static void sb_printf(gg_sb_t *s, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int k = vsnprintf(s->b ? s->b + s->n : NULL, s->b ? s->cap - s->n : 0, fmt, ap);
    va_end(ap);
    if (k < 0) abort();
    if (s->b && s->n + (size_t)k < s->cap) {
      s->n += (size_t)k;
      return;
    }
    size_t cap = (s->cap + (size_t)k + 1) * 2;
    char *b = (char *)realloc(s->b, cap);
    if (!b) abort();
    s->b = b;
    s->cap = cap;
  }
}

static void sb_type(gg_sb_t *s, const gg_graph_t *g, const gg_val_t *v) {
  sb_printf(s, "%s[", v->i64 ? "i64" : "f32");
  for (int i = 0; i < v->rank; i++) {
    if (i) sb_printf(s, ",");
    if (i == 0 && v->kind != GG_CONST && g->sym)
      sb_printf(s, "batch");
    else
      sb_printf(s, "%lld", (long long)v->d[i]);
  }
  sb_printf(s, "]");
}

static void sb_ref(gg_sb_t *s, const gg_graph_t *g, int v) {
  if (v < 0)
    sb_printf(s, "_");
  else
    sb_printf(s, g->v[v].kind == GG_CONST ? "@c%d" : "%%v%d", v);
}

/* Which values live nodes read (and the outputs): uses[v] counts them. */
static void count_uses(const gg_graph_t *g, int *uses) {
  memset(uses, 0, sizeof(int) * GG_MAX_V);
  for (int i = 0; i < g->nn; i++)
    if (!g->n[i].dead)
      for (int k = 0; k < g->n[i].n_in; k++)
        if (g->n[i].in[k] >= 0) uses[g->n[i].in[k]]++;
  for (int i = 0; i < g->n_outs; i++) uses[g->outs[i]]++;
}

/* The graph as IR text (malloc'd); `header` (may be NULL) becomes
 * comment lines. */
static char *to_text_elided(const gg_graph_t *g, const char *header, int elide);
static char *to_text(const gg_graph_t *g, const char *header) {
  return to_text_elided(g, header, 0);
}

/* As to_text; `elide` prints constants over 16 elements as dense<elided>
 * (for the terminal: such text does not parse). */
static char *to_text_elided(const gg_graph_t *g, const char *header, int elide) {
  gg_sb_t s = {0};
  int uses[GG_MAX_V];
  count_uses(g, uses);
  if (header) {
    const char *p = header;
    while (*p) {
      const char *e = strchr(p, '\n');
      int len = e ? (int)(e - p) : (int)strlen(p);
      sb_printf(&s, "// %.*s\n", len, p);
      p += len + (e ? 1 : 0);
    }
  }
  if (g->sym) sb_printf(&s, "sym batch <= %d\n", GG_BOUND);
  for (int v = 0; v < g->nv; v++) {
    const gg_val_t *x = &g->v[v];
    if (x->kind != GG_CONST || !uses[v]) continue;
    sb_printf(&s, "global @c%d : ", v);
    sb_type(&s, g, x);
    sb_printf(&s, " = dense<");
    if (elide && !x->i64 && x->n > 16) {
      sb_printf(&s, "elided");
    } else if (x->i64 || x->n <= 16) {
      sb_printf(&s, "[");
      for (int64_t i = 0; i < x->n; i++) {
        if (x->i64)
          sb_printf(&s, "%s%lld", i ? ", " : "", (long long)((int64_t *)x->data)[i]);
        else
          sb_printf(&s, "%s%.9g", i ? ", " : "", (double)((float *)x->data)[i]);
      }
      sb_printf(&s, "]");
    } else {
      sb_printf(&s, "0x");
      const uint8_t *b = (const uint8_t *)x->data;
      for (int64_t i = 0; i < x->n * 4; i++) sb_printf(&s, "%02x", b[i]);
    }
    sb_printf(&s, ">\n");
  }
  sb_printf(&s, "func @forward(");
  int first = 1;
  for (int v = 0; v < g->nv; v++) {
    if (g->v[v].kind != GG_INPUT || !uses[v]) continue;
    sb_printf(&s, "%s%%v%d: ", first ? "" : ", ", v);
    sb_type(&s, g, &g->v[v]);
    first = 0;
  }
  sb_printf(&s, ") -> (");
  for (int i = 0; i < g->n_outs; i++) {
    if (i) sb_printf(&s, ", ");
    sb_type(&s, g, &g->v[g->outs[i]]);
  }
  sb_printf(&s, ") {\n");
  for (int i = 0; i < g->nn; i++) {
    const gg_node_t *n = &g->n[i];
    if (n->dead) continue;
    sb_printf(&s, "  ");
    for (int k = 0; k < n->n_out; k++) sb_printf(&s, "%s%%v%d", k ? ", " : "", n->out[k]);
    sb_printf(&s, " = %s(", n->op);
    for (int k = 0; k < n->n_in; k++) {
      if (k) sb_printf(&s, ", ");
      sb_ref(&s, g, n->in[k]);
    }
    sb_printf(&s, ")");
    if (n->attrs[0]) sb_printf(&s, " {%s}", n->attrs);
    sb_printf(&s, " : ");
    for (int k = 0; k < n->n_out; k++) {
      if (k) sb_printf(&s, ", ");
      sb_type(&s, g, &g->v[n->out[k]]);
    }
    sb_printf(&s, "\n");
  }
  sb_printf(&s, "  return ");
  for (int i = 0; i < g->n_outs; i++) {
    if (i) sb_printf(&s, ", ");
    sb_ref(&s, g, g->outs[i]);
  }
  sb_printf(&s, "\n}\n");
  return s.b;
}

static int live_nodes(const gg_graph_t *g) {
  int n = 0;
  for (int i = 0; i < g->nn; i++) n += !g->n[i].dead;
  return n;
}

/* ---- running ---- */

enum { GG_PASS, GG_REFUSED, GG_FAIL };

/* The first line of `s`'s message and its first detail, into why (freed). */
static void status_line(dml_status_t s, const char *stage, char *why, size_t cap) {
  char *msg = dml_status_format(s);
  const char *m = msg ? msg : "?";
  const char *nl = strchr(m, '\n');
  const char *nl2 = nl ? strchr(nl + 1, '\n') : NULL;
  int len = nl2 ? (int)(nl2 - m) : (int)strlen(m);
  snprintf(why, cap, "%s: %.*s", stage, len, m);
  for (char *p = why; *p; p++)
    if (*p == '\n') *p = ';';
  free(msg);
  dml_status_free(s);
}

/* ---- the memory plan (--plan) ---- */

/* How a graph's package is planned: GG_PLAN_FUSED compiled for cpu,TARGET
 * (the compiler's pipeline: a package with a GPU target is planned
 * fusion-aware, so no kernel's result lands on a value it reads);
 * GG_PLAN_CPU compiled for the CPU alone, then the target's kernels added
 * (dml_compile_add_kernels): the CPU's plan puts a result over a dying
 * operand (an elementwise chain over a Concat's result: issue 23's
 * DenseNet block), so kernels run in place. GG_PLAN_MIX (the default): the
 * CPU plan for seeds 3 (mod 4), the fused one for the others. */
enum { GG_PLAN_MIX, GG_PLAN_FUSED, GG_PLAN_CPU };
static int g_plan = GG_PLAN_MIX; /* --plan */

/* 1 when seed's graph is planned for the CPU alone (GG_PLAN_CPU). */
static int cpu_planned(uint64_t seed) {
  return g_plan == GG_PLAN_CPU || (g_plan == GG_PLAN_MIX && seed % 4 == 3);
}

static const char *plan_name(int cpu_plan) {
  return cpu_plan ? "cpu plan" : "fused plan";
}

/* The kernels of `target` (placed as the compiler places them:
 * dml_codegen_place, the nodes of the CPU fall-back left out) of every
 * function of package `bytes` that write their result over memory they
 * read (dml_kernel_in_place): *in_place at the same offset, *partly another
 * way; *total kernels in all. With `print`, one line per such kernel. -1
 * when the package cannot be read or scheduled (why says), else 0. */
static int count_in_place(const void *bytes, size_t n, const char *target, int print,
                          int *in_place, int *partly, int *total, char *why, size_t cap) {
  dml_pkg_t pkg;
  dml_pkg_graph_t *g = NULL;
  *in_place = *partly = *total = 0;
  dml_status_t s = dml_pkg_parse(bytes, n, &pkg);
  const dml_pkg_section_t *gs = s ? NULL : dml_pkg_find_section(&pkg, "graph");
  const dml_pkg_section_t *ws = s ? NULL : dml_pkg_find_section(&pkg, "weights");
  if (!s && (!gs || !ws))
    s = dml_status_make(DML_STATUS_DATA_LOSS, "graphgen", "no graph or weights section");
  if (!s) s = dml_pkg_graph_decode(gs->data, gs->size, ws->size, &g);
  for (uint32_t f = 0; !s && f < g->n_functions; f++) {
    dml_kplan_t *p = NULL;
    dml_status_t host_why = DML_OK;
    uint32_t n_host = 0;
    char where[128];
    s = dml_codegen_place(target, g, f, ws->data, ws->size, &p, &n_host, &host_why, where,
                          sizeof where);
    dml_status_free(host_why);
    if (s) break;
    const dml_pkg_function_t *fn = &g->functions[f];
    for (uint32_t k = 0; p && k < p->n_kernels; k++) {
      const dml_kernel_t *K = &p->kernels[k];
      if (K->kind == DML_KK_HOST) continue;
      int ip = dml_kernel_in_place(p, g, k);
      (*total)++;
      *in_place += ip == 1;
      *partly += ip == 2;
      if (!ip || !print) continue;
      printf("  kernel %s %s:", K->name, ip == 1 ? "in place" : "overlaps its operands");
      for (uint32_t i = 0; i < K->n_nodes; i++)
        printf(" %s", fn->nodes[K->nodes[i]].op_name);
      printf("\n");
    }
    dml_kplan_release(p);
  }
  dml_pkg_graph_release(g);
  if (s) {
    status_line(s, "count in place", why, cap);
    return -1;
  }
  return 0;
}

/* What compile_text found: in-place kernels (count_in_place). */
typedef struct {
  int in_place, partly, kernels;
} gg_plan_info_t;

/* Compiles IR `text` into a package for cpu,`target` planned as cpu_plan
 * says (1: for the CPU alone, then the target's kernels added; 0:
 * fusion-aware, the compiler's pipeline), with the CPU fall-back when
 * `fallback` (else a refusal is an error: the GPU kernels are under test),
 * and counts its in-place kernels into *info (may be NULL). GG_PASS with
 * *bytes (malloc'd) and *n; GG_REFUSED (the target refused an op or form)
 * or GG_FAIL, `why` saying which. */
static int compile_text(const char *text, const char *target, int cpu_plan, int fallback,
                        void **bytes, size_t *n, gg_plan_info_t *info, char *why,
                        size_t cap) {
  *bytes = NULL;
  *n = 0;
  if (info) memset(info, 0, sizeof *info);
  dml_ir_module_t *mod = NULL;
  dml_status_t s = dml_ir_parse(text, strlen(text), "graphgen.dmlir", &mod);
  if (s) {
    status_line(s, "parse", why, cap);
    return GG_FAIL;
  }
  char targets[64];
  snprintf(targets, sizeof targets, "cpu,%s", target);
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.targets = cpu_plan ? "cpu" : targets;
  o.no_cpu_fallback = !fallback;
  o.print_kernels = g_print_kernels;
  o.cuda_arch = g_cuda_arch;
  s = dml_compile_module_memory(mod, "graphgen", &o, bytes, n, NULL);
  dml_ir_module_release(mod);
  if (!s && cpu_plan)
    s = dml_compile_add_kernels_fb(target, g_cuda_arch, 0, fallback, NULL, NULL,
                                   g_print_kernels, bytes, n);
  if (s) {
    int refused = dml_status_code(s) == DML_STATUS_UNIMPLEMENTED;
    status_line(s, "compile", why, cap);
    free(*bytes);
    *bytes = NULL;
    return refused ? GG_REFUSED : GG_FAIL;
  }
  if (info && count_in_place(*bytes, *n, target, g_show_in_place, &info->in_place,
                             &info->partly, &info->kernels, why, cap)) {
    free(*bytes);
    *bytes = NULL;
    return GG_FAIL;
  }
  return GG_PASS;
}

/* Compiles `text` for cpu,vulkan (planned as cpu_plan says: compile_text)
 * and compares the two devices at batch 1 and 3 (or the static batch).
 * GG_PASS, GG_REFUSED (the target refused an op or form: `why` says which)
 * or GG_FAIL (`why` says how); *info (may be NULL) as compile_text's. */
static int check_text(const char *text, uint64_t input_seed, int cpu_plan,
                      gg_plan_info_t *info, char *why, size_t cap) {
  why[0] = 0;
  void *bytes = NULL;
  size_t n = 0;
  int c = compile_text(text, "vulkan", cpu_plan, 0, &bytes, &n, info, why, cap);
  if (c != GG_PASS) return c;
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *cpu = NULL, *vk = NULL;
  dml_status_t s = dml_rt_model_load_memory(bytes, n, &m);
  free(bytes);
  if (!s) s = dml_rt_session_create(m, "cpu", &cpu);
  if (!s) s = dml_rt_session_create(m, "vulkan", &vk);
  int result = GG_PASS;
  if (s) {
    status_line(s, "session", why, cap);
    result = GG_FAIL;
  }
  uint64_t rs = gg_input_stream(input_seed);
  gg_syms_t syms;
  gg_syms_of(m, &syms);
  for (int bi = 0; result == GG_PASS && bi < gg_max_runs(&syms); bi++) {
    int any_sym = 0;
    dml_rt_session_clear_inputs(cpu);
    dml_rt_session_clear_inputs(vk);
    for (uint32_t i = 0; i < dml_rt_model_num_inputs(m); i++) {
      dml_tensor_t t;
      if (gg_input(m, i, bi, &syms, &rs, &t, &any_sym)) abort();
      s = dml_rt_session_set_input(cpu, i, &t);
      if (!s) s = dml_rt_session_set_input(vk, i, &t);
      free(t.data);
      if (s) break;
    }
    if (bi == 1 && !any_sym) break; /* one static batch */
    if (s) {
      status_line(s, "set_input", why, cap);
      result = GG_FAIL;
      break;
    }
    if ((s = dml_rt_session_run(cpu))) {
      status_line(s, "run cpu", why, cap);
      result = GG_FAIL;
      break;
    }
    if ((s = dml_rt_session_run(vk))) {
      status_line(s, "run vulkan", why, cap);
      result = GG_FAIL;
      break;
    }
    for (uint32_t k = 0; g_verbose > 1 && k < dml_rt_session_num_kernels(vk); k++) {
      dml_rt_kernel_info_t ki;
      if (!dml_rt_session_kernel_info(vk, k, &ki))
        printf("  run %d: kernel %s: %.3f ms\n", bi, ki.name, ki.ms);
    }
    for (uint32_t oi = 0; oi < dml_rt_model_num_outputs(m); oi++) {
      dml_tensor_t a, b;
      memset(&a, 0, sizeof a);
      memset(&b, 0, sizeof b);
      if ((s = dml_rt_session_get_output(vk, oi, &a)) ||
          (s = dml_rt_session_get_output(cpu, oi, &b))) {
        status_line(s, "get_output", why, cap);
        result = GG_FAIL;
        break;
      }
      double e = gg_out_err(&a, &b);
      if (!(e <= GG_TOL)) {
        char rn[64];
        snprintf(why, cap, "mismatch: output %u %s%s: error %.3g", oi,
                 bi < 2 ? "at " : "with ", gg_run_name(bi, rn, sizeof rn), e);
        result = GG_FAIL;
        break;
      }
    }
  }
  dml_rt_session_release(cpu);
  dml_rt_session_release(vk);
  dml_rt_model_release(m);
  return result;
}

/* The class of a failure, for shrinking: graphs fail "the same way" when
 * their reasons start alike (mismatch / run vulkan / compile ...). */
static int same_failure(const char *a, const char *b) {
  size_t k = 0;
  while (a[k] && a[k] != ':' && a[k] == b[k]) k++;
  return a[k] == ':' && b[k] == ':';
}

static int ort_check_text(const char *text, uint64_t seed, char *why, size_t cap);
static const char *g_ort_cmd; /* --ort CMD: check against ONNX Runtime instead */

/* Checks graph g of `seed` (against ONNX Runtime with --ort, else Vulkan
 * against the CPU, planned as cpu_planned(seed) says); *info (may be
 * NULL) as compile_text's. */
static int check_graph(const gg_graph_t *g, uint64_t seed, gg_plan_info_t *info,
                       char *why, size_t cap) {
  char *text = to_text(g, NULL);
  if (info) memset(info, 0, sizeof *info);
  int r = g_ort_cmd ? ort_check_text(text, seed, why, cap)
                    : check_text(text, seed, cpu_planned(seed), info, why, cap);
  free(text);
  return r;
}

/* Removes nodes whose results nothing reads (repeatedly). */
static void dce(gg_graph_t *g) {
  int uses[GG_MAX_V], changed = 1;
  while (changed) {
    changed = 0;
    count_uses(g, uses);
    for (int i = g->nn - 1; i >= 0; i--) {
      gg_node_t *n = &g->n[i];
      if (n->dead) continue;
      int any = 0;
      for (int k = 0; k < n->n_out; k++) any |= uses[n->out[k]] > 0;
      if (!any) {
        n->dead = 1;
        changed = 1;
      }
    }
  }
}

static void replace_uses(gg_graph_t *g, int from, int to) {
  for (int i = 0; i < g->nn; i++)
    for (int k = 0; k < g->n[i].n_in; k++)
      if (g->n[i].in[k] == from) g->n[i].in[k] = to;
  for (int i = 0; i < g->n_outs; i++)
    if (g->outs[i] == from) g->outs[i] = to;
}

static int try_candidate(gg_graph_t *g, gg_graph_t *cand, uint64_t seed, const char *why0,
                         int *checks) {
  char why[512];
  dce(cand);
  (*checks)++;
  if (check_graph(cand, seed, NULL, why, sizeof why) == GG_FAIL &&
      same_failure(why, why0)) {
    memcpy(g, cand, sizeof *g);
    return 1;
  }
  return 0;
}

/* Shrinks failing graph *g while it fails as `why0` says: drops outputs,
 * cuts values into fresh inputs (removing what computed them), bypasses
 * nodes whose result has an operand's shape. */
static void shrink(gg_graph_t *g, uint64_t seed, const char *why0) {
  gg_graph_t *c = (gg_graph_t *)malloc(sizeof *c);
  if (!c) abort();
  int progress = 1, checks = 0;
  while (progress && checks < 400) {
    progress = 0;
    for (int i = 0; g->n_outs > 1 && i < g->n_outs; i++) {
      memcpy(c, g, sizeof *c);
      c->outs[i] = c->outs[--c->n_outs];
      if (try_candidate(g, c, seed, why0, &checks)) progress = 1, i--;
    }
    for (int i = 0; i < g->nn; i++) { /* cut operand k of node i */
      for (int k = 0; k < g->n[i].n_in && !g->n[i].dead && !g->n[i].fixed; k++) {
        int v = g->n[i].in[k];
        if (v < 0 || g->v[v].kind != GG_NODE) continue;
        memcpy(c, g, sizeof *c);
        int nv = new_val(c, GG_INPUT, c->v[v].rank, c->v[v].d);
        if (nv < 0) continue;
        replace_uses(c, v, nv);
        if (try_candidate(g, c, seed, why0, &checks)) progress = 1;
      }
    }
    for (int i = g->nn - 1; i >= 0; i--) { /* bypass node i */
      const gg_node_t *n = &g->n[i];
      if (n->dead || n->fixed || n->n_out != 1) continue;
      const gg_val_t *o = &g->v[n->out[0]];
      for (int k = 0; k < n->n_in; k++) {
        int v = n->in[k];
        if (v < 0 || g->v[v].kind == GG_CONST || g->v[v].rank != o->rank ||
            memcmp(g->v[v].d, o->d, sizeof o->d[0] * (size_t)o->rank))
          continue;
        memcpy(c, g, sizeof *c);
        c->n[i].dead = 1;
        replace_uses(c, n->out[0], v);
        if (try_candidate(g, c, seed, why0, &checks)) {
          progress = 1;
          break;
        }
      }
    }
  }
  free(c);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Shrinks failing graph *g of `seed` (unless --no-shrink) while it fails as
 * why (updated) says, prints it and with `save` writes it as
 * save/graphgen_<seed>.dmlir. */
static void shrink_and_report(gg_graph_t *g, uint64_t seed, char *why, size_t cap,
                              const char *save) {
  int before = live_nodes(g);
  if (!g_no_shrink) shrink(g, seed, why);
  char header[768];
  check_graph(g, seed, NULL, why, cap);
  snprintf(
      header, sizeof header, "dml_graphgen%s seed %llu%s, shrunk from %d to %d nodes\n%s",
      g_ort_cmd ? " --ort" : "", (unsigned long long)seed,
      g_ort_cmd || !cpu_planned(seed) ? "" : " (--plan cpu)", before, live_nodes(g), why);
  char *text = to_text(g, header), *shown = to_text_elided(g, header, 1);
  printf("%s", shown);
  free(shown);
  if (save) {
    char path[1024];
    snprintf(path, sizeof path, "%s/graphgen_%llu%s.dmlir", save,
             (unsigned long long)seed, g_ort_cmd ? "_ort" : "");
    FILE *f = fopen(path, "w");
    if (f) {
      fputs(text, f);
      fclose(f);
      printf("saved %s\n", path);
    } else {
      printf("cannot write %s\n", path);
    }
  }
  free(text);
}

/* In-place kernels of the compiled graphs of each plan (run_seeds). */
typedef struct {
  int graphs, compiled, with_in_place, in_place, partly, kernels;
} gg_plan_count_t;

static int g_expect_in_place; /* --expect-in-place N */

static int run_seeds(uint64_t a, uint64_t b, double seconds, const char *save) {
  gg_graph_t *g = (gg_graph_t *)malloc(sizeof *g);
  if (!g) abort();
  int pass = 0, refused = 0, fail = 0, nodes = 0;
  gg_plan_count_t pc[2]; /* [cpu_plan] */
  memset(pc, 0, sizeof pc);
  double t0 = now_s();
  for (uint64_t seed = a; seed < b; seed++) {
    if (seconds > 0 && now_s() - t0 > seconds) {
      printf("stopped after %.0f s, before seed %llu\n", now_s() - t0,
             (unsigned long long)seed);
      break;
    }
    generate(g, seed);
    dce(g);
    nodes += live_nodes(g);
    char why[512], plan[96] = "";
    double t1 = now_s();
    gg_plan_info_t info;
    int cp = !g_ort_cmd && cpu_planned(seed);
    g_show_in_place = g_verbose > 0;
    int r = check_graph(g, seed, &info, why, sizeof why);
    if (r == GG_FAIL && strstr(why, "did not finish within")) {
      /* the runtime's device timeout: on a loaded machine, lavapipe can
       * take that long; a graph fails only when it does so twice */
      printf("seed %llu: %s; once more\n", (unsigned long long)seed, why);
      r = check_graph(g, seed, &info, why, sizeof why);
    }
    g_show_in_place = 0;
    pc[cp].graphs++;
    if (info.kernels) {
      pc[cp].compiled++;
      pc[cp].with_in_place += info.in_place > 0;
      pc[cp].in_place += info.in_place;
      pc[cp].partly += info.partly;
      pc[cp].kernels += info.kernels;
      snprintf(plan, sizeof plan, ", %s: %d of %d kernels in place%s", plan_name(cp),
               info.in_place, info.kernels, info.partly ? ", some overlapping" : "");
    }
    if (g_verbose || r == GG_FAIL)
      printf("seed %llu: %d nodes%s, %s%s%s (%.2f s)\n", (unsigned long long)seed,
             live_nodes(g), plan,
             r == GG_PASS      ? "pass"
             : r == GG_REFUSED ? "refused"
                               : "FAIL",
             why[0] ? ": " : "", why, now_s() - t1);
    if (g_verbose > 1) {
      char *text = to_text_elided(g, NULL, g_verbose < 3);
      fputs(text, stdout);
      free(text);
    }
    if (r == GG_PASS) pass++;
    if (r == GG_REFUSED) refused++;
    if (r == GG_FAIL) {
      fail++;
      shrink_and_report(g, seed, why, sizeof why, save);
    }
    pool_free();
  }
  printf(
      "graphgen: %d passed, %d refused by the target, %d failed (%d nodes in all, %.1f "
      "s)\n",
      pass, refused, fail, nodes, now_s() - t0);
  for (int cp = 1; !g_ort_cmd && cp >= 0; cp--)
    if (pc[cp].graphs)
      printf(
          "graphgen: %s: %d graphs, %d compiled: %d of their %d kernels in place (in %d "
          "graphs), %d overlapping their operands otherwise\n",
          plan_name(cp), pc[cp].graphs, pc[cp].compiled, pc[cp].in_place, pc[cp].kernels,
          pc[cp].with_in_place, pc[cp].partly);
  int few = !g_ort_cmd && pc[1].in_place < g_expect_in_place;
  if (few)
    printf("graphgen: FAIL: %d kernels in place, fewer than --expect-in-place %d\n",
           pc[1].in_place, g_expect_in_place);
  free(g);
  return fail || few ? 1 : 0;
}

/* --pack DIR --target T: for each seed, the graph compiled for cpu,T into
 * DIR/graphgen_<seed>.dmlpkg, run on the CPU here on graphgen_io.h's inputs,
 * each run's outputs as DIR/graphgen_<seed>.r<run>.o<k>.npy, and a line of
 * DIR/graphs.txt ("<seed> packed <runs> <outputs> <nodes> <runs with saved
 * outputs> cpu-plan|fused-plan <kernels in place>", "<seed> refused <why>"
 * or "<seed> fail <why>"): what
 * dml_graphs_check runs on another machine (tests/cuda/graphs_check.c).
 * Saves the outputs of the first `ref_runs` runs only. Stops starting seeds
 * after `seconds` (0: no limit) or once the files written pass `max_mb` MB
 * (0: no limit).
 * Exit status 1 when a graph failed here (a compile error other than a
 * refusal, or the CPU's run). */
static int write_file(const char *path, const void *bytes, size_t n) {
  const void *parts[1] = {bytes};
  dml_status_t s = dml_file_write_atomic("graphgen", path, parts, &n, 1);
  if (s) {
    char why[512];
    status_line(s, "write", why, sizeof why);
    printf("%s: %s\n", path, why);
    return -1;
  }
  return 0;
}

static int pack_one(uint64_t seed, const char *dir, const char *target, int ref_runs,
                    FILE *list, uint64_t *bytes_out, int *in_place) {
  gg_graph_t *g = (gg_graph_t *)malloc(sizeof *g);
  if (!g) abort();
  generate(g, seed);
  dce(g);
  int nodes = live_nodes(g);
  char *text = to_text(g, NULL);
  free(g);
  char why[512] = "", path[1024];
  void *bytes = NULL;
  size_t n = 0;
  gg_plan_info_t info;
  int cp = cpu_planned(seed);
  int c = compile_text(text, target, cp, 1, &bytes, &n, &info, why, sizeof why);
  free(text);
  if (c != GG_PASS) {
    fprintf(list, "%llu %s %s\n", (unsigned long long)seed,
            c == GG_REFUSED ? "refused" : "fail", why);
    pool_free();
    return c;
  }
  *in_place += info.in_place;
  snprintf(path, sizeof path, "%s/graphgen_%llu.dmlpkg", dir, (unsigned long long)seed);
  int bad = write_file(path, bytes, n);
  *bytes_out += n;
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *cpu = NULL;
  dml_status_t s = dml_rt_model_load_memory(bytes, n, &m);
  free(bytes);
  if (!s) s = dml_rt_session_create(m, "cpu", &cpu);
  gg_syms_t syms;
  gg_syms_of(m, &syms);
  uint64_t rs = gg_input_stream(seed);
  int runs = 0;
  for (int r = 0; !s && !bad && r < gg_max_runs(&syms); r++) {
    int any_sym = 0;
    dml_rt_session_clear_inputs(cpu);
    for (uint32_t i = 0; !s && i < dml_rt_model_num_inputs(m); i++) {
      dml_tensor_t t;
      if (gg_input(m, i, r, &syms, &rs, &t, &any_sym)) abort();
      s = dml_rt_session_set_input(cpu, i, &t);
      free(t.data);
    }
    if (r == 1 && !any_sym) break; /* one static batch */
    if (!s) s = dml_rt_session_run(cpu);
    for (uint32_t k = 0; !s && !bad && r < ref_runs && k < dml_rt_model_num_outputs(m);
         k++) {
      dml_tensor_t t;
      memset(&t, 0, sizeof t);
      if ((s = dml_rt_session_get_output(cpu, k, &t))) break;
      void *npy = NULL;
      size_t nb = 0;
      if ((s = dml_npy_write_memory(&t, &npy, &nb))) break;
      snprintf(path, sizeof path, "%s/graphgen_%llu.r%d.o%u.npy", dir,
               (unsigned long long)seed, r, k);
      bad = write_file(path, npy, nb);
      *bytes_out += nb;
      free(npy);
    }
    runs++;
  }
  if (s) status_line(s, "run cpu", why, sizeof why);
  if (bad && !why[0]) snprintf(why, sizeof why, "cannot write %.400s", path);
  if (s || bad)
    fprintf(list, "%llu fail %s\n", (unsigned long long)seed, why);
  else
    fprintf(list, "%llu packed %d %u %d %d %s %d\n", (unsigned long long)seed, runs,
            dml_rt_model_num_outputs(m), nodes, runs < ref_runs ? runs : ref_runs,
            cp ? "cpu-plan" : "fused-plan", info.in_place);
  dml_rt_session_release(cpu);
  dml_rt_model_release(m);
  pool_free();
  if (s || bad) printf("seed %llu: FAIL: %s\n", (unsigned long long)seed, why);
  return s || bad ? GG_FAIL : GG_PASS;
}

static int pack_seeds(uint64_t a, uint64_t b, double seconds, double max_mb, int ref_runs,
                      const char *dir, const char *target) {
  char path[1024];
  snprintf(path, sizeof path, "%s/graphs.txt", dir);
  FILE *list = fopen(path, "w");
  if (!list) {
    printf("dml_graphgen: cannot write %s (does the folder exist?)\n", path);
    return 1;
  }
  setvbuf(list, NULL, _IOLBF, 0);
  fprintf(list,
          "# dml_graphgen --pack %s --target %s --seeds %llu:%llu --ref-runs %d: <seed> "
          "packed <runs> <outputs> <nodes> <runs with saved outputs> cpu-plan|fused-plan "
          "<kernels in place> | <seed> refused|fail <why>\n",
          dir, target, (unsigned long long)a, (unsigned long long)b, ref_runs);
  int c[3] = {0, 0, 0}, in_place = 0;
  uint64_t bytes = 0;
  double t0 = now_s();
  uint64_t seed = a;
  for (; seed < b; seed++) {
    if (seconds > 0 && now_s() - t0 > seconds) break;
    if (max_mb > 0 && (double)bytes > max_mb * 1e6) break;
    int r = pack_one(seed, dir, target, ref_runs, list, &bytes, &in_place);
    c[r]++;
    if (g_verbose)
      printf("seed %llu: %s\n", (unsigned long long)seed,
             r == GG_PASS      ? "packed"
             : r == GG_REFUSED ? "refused"
                               : "FAIL");
  }
  if (seed < b)
    fprintf(list, "# stopped before seed %llu (%s)\n", (unsigned long long)seed,
            seconds > 0 && now_s() - t0 > seconds ? "--seconds" : "--max-mb");
  fclose(list);
  printf(
      "graphgen --pack %s: %d packed for cpu,%s (%d kernels in place), %d refused by the "
      "target, %d failed here; seeds %llu:%llu, %.1f MB, %.1f s\n",
      dir, c[GG_PASS], target, in_place, c[GG_REFUSED], c[GG_FAIL], (unsigned long long)a,
      (unsigned long long)seed, (double)bytes / 1e6, now_s() - t0);
  return c[GG_FAIL] ? 1 : 0;
}

/* ---- the CPU against ONNX Runtime on the exported ONNX (--ort) ---- */

/* The opset the graphs are written at: Gelu-20 is the newest form the
 * generator draws (Pad and the reductions take their 18+ forms). */
#define GG_ONNX_OPSET 20
#define GG_ORT_CHUNK 50 /* seeds written before each run of the script */

static const char *g_ort_dir; /* --onnx-dir */

/* Writes `name`'s npy of t as DIR/<name>.r<run>.<io><k>.npy; 0 or -1 (why
 * says). */
static int write_npy(const char *dir, const char *name, int run, char io, uint32_t k,
                     const dml_tensor_t *t, char *why, size_t cap) {
  void *npy = NULL;
  size_t nb = 0;
  dml_status_t s = dml_npy_write_memory(t, &npy, &nb);
  if (s) {
    status_line(s, "npy", why, cap);
    return -1;
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.r%d.%c%u.npy", dir, name, run, io, k);
  int bad = write_file(path, npy, nb);
  free(npy);
  if (bad) snprintf(why, cap, "write: cannot write %.400s", path);
  return bad;
}

/* Graph `text` exported as DIR/<name>.onnx (dml_onnx_export_module at
 * GG_ONNX_OPSET), compiled for the CPU and run on graphgen_io.h's runs and
 * inputs (stream of input_seed), each run's inputs and outputs written as
 * DIR/<name>.r<run>.i<k>.npy and .o<k>.npy, and a line of `list`:
 * "<name> exported <runs> <inputs> <outputs> <nodes>". GG_PASS, or GG_FAIL
 * with `why` ("parse: ", "export: ", "compile: ", "run cpu: ", ...: the
 * exporter refusing an op the generator draws is a failure). counts gets
 * the runs written, the inputs and the outputs. */
static int export_onnx(const char *text, uint64_t input_seed, const char *dir,
                       const char *name, int nodes, FILE *list, int counts[3], char *why,
                       size_t cap) {
  why[0] = 0;
  int *runs = &counts[0];
  counts[0] = counts[1] = counts[2] = 0;
  dml_ir_module_t *mod = NULL;
  dml_status_t s = dml_ir_parse(text, strlen(text), "graphgen.dmlir", &mod);
  if (s) {
    status_line(s, "parse", why, cap);
    return GG_FAIL;
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.onnx", dir, name);
  dml_onnx_export_options_t eo;
  memset(&eo, 0, sizeof eo);
  eo.opset = GG_ONNX_OPSET;
  eo.producer = "dml_graphgen";
  s = dml_onnx_export_module(mod, path, &eo);
  if (s) {
    dml_ir_module_release(mod);
    status_line(s, "export", why, cap);
    return GG_FAIL;
  }
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.targets = "cpu";
  void *bytes = NULL;
  size_t n = 0;
  s = dml_compile_module_memory(mod, "graphgen", &o, &bytes, &n, NULL);
  dml_ir_module_release(mod);
  if (s) {
    status_line(s, "compile", why, cap);
    return GG_FAIL;
  }
  dml_rt_model_t *m = NULL;
  dml_rt_session_t *cpu = NULL;
  s = dml_rt_model_load_memory(bytes, n, &m);
  free(bytes);
  if (!s) s = dml_rt_session_create(m, "cpu", &cpu);
  gg_syms_t syms;
  gg_syms_of(m, &syms);
  uint64_t rs = gg_input_stream(input_seed);
  int bad = 0;
  const char *stage = "session";
  if (!s) {
    counts[1] = (int)dml_rt_model_num_inputs(m);
    counts[2] = (int)dml_rt_model_num_outputs(m);
  }
  for (int r = 0; !s && !bad && r < gg_max_runs(&syms); r++) {
    int any_sym = 0;
    dml_tensor_t in[16];
    uint32_t n_in = dml_rt_model_num_inputs(m);
    if (n_in > 16) {
      snprintf(why, cap, "inputs: %u inputs", n_in);
      bad = 1;
      break;
    }
    dml_rt_session_clear_inputs(cpu);
    stage = "set_input";
    for (uint32_t i = 0; i < n_in; i++) {
      if (gg_input(m, i, r, &syms, &rs, &in[i], &any_sym)) abort();
      if (!s) s = dml_rt_session_set_input(cpu, i, &in[i]);
    }
    if (r == 1 && !any_sym) { /* one static batch */
      for (uint32_t i = 0; i < n_in; i++) free(in[i].data);
      break;
    }
    for (uint32_t i = 0; !s && !bad && i < n_in; i++)
      bad = write_npy(dir, name, r, 'i', i, &in[i], why, cap);
    for (uint32_t i = 0; i < n_in; i++) free(in[i].data);
    if (!s && !bad) {
      stage = "run cpu";
      s = dml_rt_session_run(cpu);
    }
    for (uint32_t k = 0; !s && !bad && k < dml_rt_model_num_outputs(m); k++) {
      dml_tensor_t t;
      memset(&t, 0, sizeof t);
      stage = "get_output";
      if (!(s = dml_rt_session_get_output(cpu, k, &t)))
        bad = write_npy(dir, name, r, 'o', k, &t, why, cap);
    }
    if (!s && !bad) (*runs)++;
  }
  if (s) status_line(s, stage, why, cap);
  if (!s && !bad)
    fprintf(list, "%s exported %d %u %u %d\n", name, *runs, dml_rt_model_num_inputs(m),
            dml_rt_model_num_outputs(m), nodes);
  dml_rt_session_release(cpu);
  dml_rt_model_release(m);
  return s || bad ? GG_FAIL : GG_PASS;
}

/* Runs `g_ort_cmd 'DIR'` (tests/vulkan/graphgen_ort.py: ONNX Runtime on
 * each graph DIR/graphs.txt lists, compared with the saved CPU outputs),
 * echoing its lines when `echo`; each "<name>: pass ..." or "<name>: FAIL:
 * <why>" line calls `on_result`. Returns the script's exit status (-1 when
 * it could not be started). */
typedef void (*gg_ort_result_fn)(void *arg, const char *name, int pass, const char *why);

static int run_ort_script(const char *dir, int echo, gg_ort_result_fn on_result,
                          void *arg) {
  char cmd[2048];
  if (strchr(dir, '\'')) return -1;
  snprintf(cmd, sizeof cmd, "%s '%s'", g_ort_cmd, dir);
  fflush(stdout);
  FILE *p = popen(cmd, "r");
  if (!p) return -1;
  char line[4096];
  while (fgets(line, sizeof line, p)) {
    if (echo) fputs(line, stdout);
    line[strcspn(line, "\n")] = 0;
    char *colon = strstr(line, ": ");
    if (!colon || strchr(line, ' ') < colon) continue; /* not "<name>: ..." */
    *colon = 0;
    const char *rest = colon + 2;
    if (!strncmp(rest, "pass", 4))
      on_result(arg, line, 1, "");
    else if (!strncmp(rest, "FAIL: ", 6))
      on_result(arg, line, 0, rest + 6);
  }
  int st = pclose(p);
  return st == -1 ? -1 : WEXITSTATUS(st);
}

typedef struct {
  const char *name;
  int found, pass;
  char *why;
  size_t cap;
} gg_one_t;

static void one_result(void *arg, const char *name, int pass, const char *why) {
  gg_one_t *o = (gg_one_t *)arg;
  if (strcmp(name, o->name)) return;
  o->found = 1;
  o->pass = pass;
  snprintf(o->why, o->cap, "%s", why);
}

/* One graph `text` against ONNX Runtime: exported as <onnx-dir>/sub/name
 * with the inputs of stream input_seed and run there by the script (the
 * files stay). GG_PASS or GG_FAIL (why says). */
static int ort_check_named(const char *text, uint64_t input_seed, const char *sub,
                           const char *name, char *why, size_t cap) {
  char dir[1024], path[1100];
  snprintf(dir, sizeof dir, "%s/%s", g_ort_dir, sub);
  if (mkdir(dir, 0777) && errno != EEXIST) {
    snprintf(why, cap, "write: cannot make %.400s", dir);
    return GG_FAIL;
  }
  snprintf(path, sizeof path, "%s/graphs.txt", dir);
  FILE *list = fopen(path, "w");
  if (!list) {
    snprintf(why, cap, "write: cannot write %.400s", path);
    return GG_FAIL;
  }
  int counts[3];
  int r = export_onnx(text, input_seed, dir, name, 0, list, counts, why, cap);
  fclose(list);
  if (r != GG_PASS) return r;
  gg_one_t one = {name, 0, 0, why, cap};
  int st = run_ort_script(dir, g_verbose > 1, one_result, &one);
  if (!one.found) {
    snprintf(why, cap, "ort script: no result for %s (exit status %d)", name, st);
    return GG_FAIL;
  }
  return one.pass ? GG_PASS : GG_FAIL;
}

/* The shrinker's check under --ort: `text` exported into
 * <onnx-dir>/shrink_<seed>/ (the last candidate checked, the shrunk graph,
 * stays there). */
static int ort_check_text(const char *text, uint64_t seed, char *why, size_t cap) {
  char sub[64], name[64];
  snprintf(sub, sizeof sub, "shrink_%llu", (unsigned long long)seed);
  snprintf(name, sizeof name, "graphgen_%llu", (unsigned long long)seed);
  return ort_check_named(text, seed, sub, name, why, cap);
}

/* The files export_onnx wrote for `name` (runs, inputs, outputs). */
static void remove_exported(const char *dir, const char *name, int runs, int n_in,
                            int n_out) {
  char path[1100];
  snprintf(path, sizeof path, "%s/%s.onnx", dir, name);
  unlink(path);
  for (int r = 0; r < runs; r++) {
    for (int k = 0; k < n_in; k++) {
      snprintf(path, sizeof path, "%s/%s.r%d.i%d.npy", dir, name, r, k);
      unlink(path);
    }
    for (int k = 0; k < n_out; k++) {
      snprintf(path, sizeof path, "%s/%s.r%d.o%d.npy", dir, name, r, k);
      unlink(path);
    }
  }
}

typedef struct {
  uint64_t seed;
  int state;     /* GG_PASS: exported (then the script's verdict), GG_FAIL */
  int counts[3]; /* runs, inputs, outputs written */
  int reported;
  char why[512];
} gg_chunk_t;

typedef struct {
  gg_chunk_t *c;
  int n;
} gg_chunk_set_t;

static void chunk_result(void *arg, const char *name, int pass, const char *why) {
  gg_chunk_set_t *cs = (gg_chunk_set_t *)arg;
  unsigned long long seed;
  if (sscanf(name, "graphgen_%llu", &seed) != 1) return;
  for (int i = 0; i < cs->n; i++)
    if (cs->c[i].seed == seed && cs->c[i].state == GG_PASS) {
      cs->c[i].reported = 1;
      if (!pass) {
        cs->c[i].state = GG_FAIL;
        snprintf(cs->c[i].why, sizeof cs->c[i].why, "%s", why);
      }
    }
}

/* --ort CMD --onnx-dir DIR: each seed's graph exported as ONNX with the
 * CPU's inputs and outputs (export_onnx), GG_ORT_CHUNK seeds at a time,
 * then the script runs them with ONNX Runtime; a graph whose export, CPU
 * run or ONNX Runtime's outputs fail is shrunk (the same check on each
 * candidate), printed and saved (--save). The files of passing graphs are
 * removed (--keep keeps them). Exit status 1 on a failure. */
static int g_keep; /* --keep */

static int ort_seeds(uint64_t a, uint64_t b, double seconds, const char *save) {
  gg_graph_t *g = (gg_graph_t *)malloc(sizeof *g);
  gg_chunk_t *c = (gg_chunk_t *)calloc(GG_ORT_CHUNK, sizeof *c);
  if (!g || !c) abort();
  int pass = 0, fail = 0, nodes = 0, stopped = 0;
  double t0 = now_s();
  for (uint64_t c0 = a; c0 < b && !stopped; c0 += GG_ORT_CHUNK) {
    char path[1100];
    snprintf(path, sizeof path, "%s/graphs.txt", g_ort_dir);
    /* without --ort, one list of every seed for the script to run later */
    FILE *list = fopen(path, g_ort_cmd || c0 == a ? "w" : "a");
    if (!list) {
      printf("dml_graphgen: cannot write %s\n", path);
      free(g), free(c);
      return 1;
    }
    if (g_ort_cmd || c0 == a)
      fprintf(list,
              "# dml_graphgen --onnx-dir: <name> exported <runs> <inputs> <outputs> "
              "<nodes> (opset %d)\n",
              GG_ONNX_OPSET);
    int n = 0;
    for (uint64_t seed = c0; seed < b && seed < c0 + GG_ORT_CHUNK; seed++) {
      if (seconds > 0 && now_s() - t0 > seconds) {
        printf("stopped after %.0f s, before seed %llu\n", now_s() - t0,
               (unsigned long long)seed);
        stopped = 1;
        break;
      }
      gg_chunk_t *e = &c[n++];
      memset(e, 0, sizeof *e);
      e->seed = seed;
      generate(g, seed);
      dce(g);
      char name[64];
      snprintf(name, sizeof name, "graphgen_%llu", (unsigned long long)seed);
      char *text = to_text(g, NULL);
      e->state = export_onnx(text, seed, g_ort_dir, name, live_nodes(g), list, e->counts,
                             e->why, sizeof e->why);
      free(text);
      nodes += live_nodes(g);
      if (e->state == GG_FAIL)
        printf("graphgen_%llu: FAIL: %s\n", (unsigned long long)seed, e->why);
      pool_free();
    }
    fclose(list);
    gg_chunk_set_t cs = {c, n};
    int exported = 0;
    for (int i = 0; i < n; i++) exported += c[i].state == GG_PASS;
    if (exported && g_ort_cmd) {
      int st = run_ort_script(g_ort_dir, 1, chunk_result, &cs);
      for (int i = 0; i < n; i++)
        if (c[i].state == GG_PASS && !c[i].reported) {
          c[i].state = GG_FAIL;
          snprintf(c[i].why, sizeof c[i].why,
                   "ort script: no result (exit status %d; is CMD right?)", st);
        }
    }
    for (int i = 0; i < n; i++) {
      if (c[i].state == GG_PASS) {
        pass++;
      } else if (!g_ort_cmd) { /* exporting only: not shrunk with the script */
        fail++;
      } else {
        fail++;
        generate(g, c[i].seed);
        dce(g);
        shrink_and_report(g, c[i].seed, c[i].why, sizeof c[i].why, save);
        pool_free();
      }
      char name[64];
      snprintf(name, sizeof name, "graphgen_%llu", (unsigned long long)c[i].seed);
      if (g_ort_cmd && !g_keep && c[i].state == GG_PASS)
        remove_exported(g_ort_dir, name, c[i].counts[0], c[i].counts[1], c[i].counts[2]);
    }
  }
  if (g_ort_cmd)
    printf(
        "graphgen --ort: %d passed, %d failed against ONNX Runtime (opset %d, %d nodes "
        "in "
        "all, %.1f s)\n",
        pass, fail, GG_ONNX_OPSET, nodes, now_s() - t0);
  else
    printf("graphgen --onnx-dir %s: %d exported (opset %d), %d failed here (%.1f s)\n",
           g_ort_dir, pass, GG_ONNX_OPSET, fail, now_s() - t0);
  free(g);
  free(c);
  return fail ? 1 : 0;
}

/* A saved graph: must pass (its comment names the failure it once had), on
 * Vulkan in both plans (--plan mix, the default) or the one --plan names;
 * under --ort against ONNX Runtime, exported as <onnx-dir>/replay/<name>. */
static int replay(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    printf("replay %s: cannot open\n", path);
    return 1;
  }
  gg_sb_t s = {0};
  char buf[4096];
  size_t k;
  while ((k = fread(buf, 1, sizeof buf, f)) > 0) sb_printf(&s, "%.*s", (int)k, buf);
  fclose(f);
  char why[512] = "cannot read", name[256];
  const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  snprintf(name, sizeof name, "%.*s", (int)strcspn(base, ". "), base);
  if (!s.b || g_ort_dir) {
    int r = !s.b ? GG_FAIL : ort_check_named(s.b, 0, "replay", name, why, sizeof why);
    free(s.b);
    printf("replay %s: %s%s%s\n", path,
           r == GG_PASS      ? "pass"
           : r == GG_REFUSED ? "refused"
                             : "FAIL",
           why[0] ? ": " : "", why);
    return r != GG_PASS;
  }
  int bad = 0;
  for (int cp = 0; cp < 2; cp++) {
    if ((cp && g_plan == GG_PLAN_FUSED) || (!cp && g_plan == GG_PLAN_CPU)) continue;
    gg_plan_info_t info;
    g_show_in_place = g_verbose > 0;
    int r = check_text(s.b, 0, cp, &info, why, sizeof why);
    g_show_in_place = 0;
    printf("replay %s (%s: %d of %d kernels in place): %s%s%s\n", path, plan_name(cp),
           info.in_place, info.kernels,
           r == GG_PASS      ? "pass"
           : r == GG_REFUSED ? "refused"
                             : "FAIL",
           why[0] ? ": " : "", why);
    bad |= r != GG_PASS;
  }
  free(s.b);
  return bad;
}

static int replay_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) {
    printf("replay: cannot open %s\n", dir);
    return 1;
  }
  char *names[256];
  int n = 0, bad = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < 256) {
    size_t len = strlen(e->d_name);
    if (len > 6 && !strcmp(e->d_name + len - 6, ".dmlir")) names[n++] = strdup(e->d_name);
  }
  closedir(d);
  for (int i = 0; i < n; i++) { /* in name order */
    for (int j = i + 1; j < n; j++)
      if (strcmp(names[j], names[i]) < 0) {
        char *t = names[i];
        names[i] = names[j], names[j] = t;
      }
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    bad |= replay(path);
    free(names[i]);
  }
  printf("replayed %d saved graphs from %s\n", n, dir);
  return bad;
}

int main(int argc, char **argv) {
  uint64_t a = 0, b = 20;
  double seconds = 0, max_mb = 0;
  int ref_runs = 3;
  const char *save = NULL, *pack = NULL, *target = "vulkan";
  const char *replay_files[64], *replay_dirs[16];
  int n_replay_files = 0, n_replay_dirs = 0, seeds = 0;
  setvbuf(stdout, NULL, _IOLBF, 0); /* a crash keeps what was printed */
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--seeds") && i + 1 < argc) {
      unsigned long long x, y;
      if (sscanf(argv[++i], "%llu:%llu", &x, &y) != 2 || y < x) {
        fprintf(stderr, "dml_graphgen: --seeds wants A:B with A <= B\n");
        return 2;
      }
      a = x, b = y, seeds = 1;
    } else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
      seconds = atof(argv[++i]);
    } else if (!strcmp(argv[i], "--save") && i + 1 < argc) {
      save = argv[++i];
    } else if (!strcmp(argv[i], "--pack") && i + 1 < argc) {
      pack = argv[++i];
    } else if (!strcmp(argv[i], "--target") && i + 1 < argc) {
      target = argv[++i];
    } else if (!strcmp(argv[i], "--cuda-arch") && i + 1 < argc) {
      g_cuda_arch = argv[++i];
    } else if (!strcmp(argv[i], "--ref-runs") && i + 1 < argc) {
      ref_runs = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--max-mb") && i + 1 < argc) {
      max_mb = atof(argv[++i]);
    } else if (!strcmp(argv[i], "--replay") && i + 1 < argc && n_replay_files < 64) {
      replay_files[n_replay_files++] = argv[++i];
    } else if (!strcmp(argv[i], "--replay-dir") && i + 1 < argc && n_replay_dirs < 16) {
      replay_dirs[n_replay_dirs++] = argv[++i];
    } else if (!strcmp(argv[i], "--onnx-dir") && i + 1 < argc) {
      g_ort_dir = argv[++i];
    } else if (!strcmp(argv[i], "--ort") && i + 1 < argc) {
      g_ort_cmd = argv[++i];
    } else if (!strcmp(argv[i], "--plan") && i + 1 < argc) {
      const char *pl = argv[++i];
      if (!strcmp(pl, "mix")) {
        g_plan = GG_PLAN_MIX;
      } else if (!strcmp(pl, "fused")) {
        g_plan = GG_PLAN_FUSED;
      } else if (!strcmp(pl, "cpu")) {
        g_plan = GG_PLAN_CPU;
      } else {
        fprintf(stderr, "dml_graphgen: --plan wants mix, fused or cpu\n");
        return 2;
      }
    } else if (!strcmp(argv[i], "--expect-in-place") && i + 1 < argc) {
      g_expect_in_place = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--keep")) {
      g_keep = 1;
    } else if (!strcmp(argv[i], "--no-shrink")) {
      g_no_shrink = 1;
    } else if (!strcmp(argv[i], "--print-kernels")) {
      g_print_kernels = stdout;
    } else if (!strcmp(argv[i], "-v")) {
      g_verbose++;
    } else {
      fprintf(
          stderr,
          "usage: dml_graphgen [--seeds A:B] [--seconds S] [--save DIR] [--replay "
          "FILE]... [--replay-dir DIR] [--plan mix|fused|cpu] [--expect-in-place N] "
          "[--print-kernels] [--no-shrink] [-v]\n"
          "       dml_graphgen --pack DIR [--target cuda|vulkan] [--seeds A:B] "
          "[--seconds S] [--max-mb M] [--ref-runs N] [--cuda-arch A] [--plan P] [-v]\n"
          "       dml_graphgen --onnx-dir DIR [--ort CMD] [--seeds A:B] [--seconds S] "
          "[--save DIR] [--keep] [--no-shrink] [--replay FILE]... [--replay-dir DIR] "
          "[-v]\n");
      return 2;
    }
  }
  unary_table();
  if (g_ort_cmd && !g_ort_dir) {
    fprintf(stderr, "dml_graphgen: --ort needs --onnx-dir DIR\n");
    return 2;
  }
  if (g_ort_dir) { /* the CPU only: no device needed */
    if ((n_replay_files || n_replay_dirs) && !g_ort_cmd) {
      fprintf(stderr, "dml_graphgen: --replay with --onnx-dir needs --ort CMD\n");
      return 2;
    }
    if (mkdir(g_ort_dir, 0777) && errno != EEXIST) {
      printf("dml_graphgen: cannot make %s\n", g_ort_dir);
      return 1;
    }
    int bad = 0;
    for (int i = 0; i < n_replay_files; i++) bad |= replay(replay_files[i]);
    for (int i = 0; i < n_replay_dirs; i++) bad |= replay_dir(replay_dirs[i]);
    if (seeds || !(n_replay_files + n_replay_dirs)) bad |= ort_seeds(a, b, seconds, save);
    free(g_pool);
    return bad ? 1 : 0;
  }
  if (pack) { /* compile only: no device needed */
    int r = pack_seeds(a, b, seconds, max_mb, ref_runs, pack, target);
    free(g_pool);
    return r;
  }
  dml_rt_device_info_t devs[16];
  uint32_t nd = 0;
  dml_status_t s = dml_rt_vulkan_devices(devs, 16, &nd);
  if (s || !nd) {
    char *msg = s ? dml_status_format(s) : NULL;
    printf("SKIP: no Vulkan device: %s\n", msg ? msg : "none listed");
    free(msg);
    dml_status_free(s);
    return 77;
  }
  for (uint32_t i = 0; i < nd && i < 16; i++)
    if (devs[i].is_default) printf("Vulkan device: %s\n", devs[i].name);
  int bad = 0;
  for (int i = 0; i < n_replay_files; i++) bad |= replay(replay_files[i]);
  for (int i = 0; i < n_replay_dirs; i++) bad |= replay_dir(replay_dirs[i]);
  if (seeds || !(n_replay_files + n_replay_dirs)) bad |= run_seeds(a, b, seconds, save);
  free(g_pool);
  return bad ? 1 : 0;
}
