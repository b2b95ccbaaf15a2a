/* rt_check.c — dml_rt_check (dml_rt.h): each GPU kernel of a package run
 * alone on the device against the CPU reference kernels of its nodes, on
 * random and edge inputs, then the whole function end to end. The device
 * runs a kernel through its backend's run_kernel (rt_backend.h); the
 * reference is dml_cpu_run() of each node on a copy of the same arena
 * bytes, so both read exactly the same inputs. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__) || defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include "dml_cpu.h"
#include "dml_dtype.h"
#include "rt_backend.h"
#include "rt_internal.h"

#define OP "rt.check"

/* The relative move of each input element in the sensitivity run. */
#define PERT_REL (1.0 / 4194304.0) /* 2^-22: two f32 ulp */

/* The relative move of an input of dtype dt: two steps of its dtype where
 * 2^-22 is below them (f16 2^-9, bf16 2^-6; 2^-22 would round away, and
 * an element whose result swings with its inputs, sin(1e30) say, got no
 * allowance). A kernel's inputs all move by the largest of its float
 * inputs' (chk_t's pert). */
static double pert_rel(dml_dtype_t dt) {
  return dt == DML_DTYPE_BF16 ? 1.0 / 64 : dt == DML_DTYPE_F16 ? 1.0 / 512 : PERT_REL;
}

/* ---- tolerance classes (documented in dml_rt.h and docs/kernels.md) ---- */

enum { CLS_EXACT, CLS_ARITH, CLS_TRANS, CLS_ACCUM, CLS_E2E };

static const char *const k_class_name[] = {"exact", "arithmetic", "transcendental",
                                           "accumulating", "end-to-end"};
static const double k_class_tol[] = {0.0, 1e-5, 1e-4, 1e-4, 1e-3};

/* The tolerance class of an op: its ops.def flags (dml_op_tol_class). */
static int op_class(dml_op_t op) {
  switch (dml_op_tol_class(op)) {
    case DML_TOL_EXACT: return CLS_EXACT;
    case DML_TOL_ARITH: return CLS_ARITH;
    case DML_TOL_TRANSC: return CLS_TRANS;
    default: return CLS_ACCUM;
  }
}

/* 1 when input `j` of `op` takes values from a valid domain only: what the
 * op reads for its output's shape, indices, coordinates, quantization
 * parameters, ratios. Such inputs (and every integer or bool input) get
 * the values the function computes, not random ones. */
static int domain_input(dml_op_t op, uint32_t j) {
  if (dml_cpu_output_dims_reads(op, j) == 1) return 1;
  switch (op) {
    case DML_OP_GRID_SAMPLE:
    case DML_OP_ROI_ALIGN:
    case DML_OP_RESIZE: return j >= 1;
    case DML_OP_QUANTIZE_LINEAR:
    case DML_OP_DEQUANTIZE_LINEAR:
    case DML_OP_DYNAMIC_QUANTIZE_LINEAR:
    case DML_OP_QLINEAR_MAT_MUL:
    case DML_OP_QLINEAR_CONV:
    case DML_OP_MAT_MUL_INTEGER:
    case DML_OP_MAT_MUL_WQ:
    case DML_OP_CONV_INTEGER:
    case DML_OP_MULTINOMIAL:
    case DML_OP_MEL_WEIGHT_MATRIX:
    case DML_OP_STFT:
    case DML_OP_DFT: return 1;
    case DML_OP_DROPOUT:
    case DML_OP_ONE_HOT:
    case DML_OP_BERNOULLI: return j >= 1 || op == DML_OP_BERNOULLI;
    default: return 0;
  }
}

/* ---- random numbers ---- */

static uint64_t rnd_u64(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static double rnd_unit(uint64_t *s) { /* [0, 1) */
  return (double)(rnd_u64(s) >> 11) / 9007199254740992.0;
}

static double rnd_normal(uint64_t *s) {
  double u = rnd_unit(s), v = rnd_unit(s);
  return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
}

/* ---- element access ---- */

static double get_elem(dml_dtype_t dt, const uint8_t *p, int64_t i) {
  switch (dt) {
    case DML_DTYPE_F32: {
      float x;
      memcpy(&x, p + 4 * i, 4);
      return x;
    }
    case DML_DTYPE_F64: {
      double x;
      memcpy(&x, p + 8 * i, 8);
      return x;
    }
    case DML_DTYPE_F16: {
      uint16_t h;
      memcpy(&h, p + 2 * i, 2);
      return dml_f16_to_f32(h);
    }
    case DML_DTYPE_BF16: {
      uint16_t h;
      memcpy(&h, p + 2 * i, 2);
      return dml_bf16_to_f32(h);
    }
    case DML_DTYPE_I8: return ((const int8_t *)p)[i];
    case DML_DTYPE_U8:
    case DML_DTYPE_BOOL: return p[i];
    case DML_DTYPE_I16: {
      int16_t x;
      memcpy(&x, p + 2 * i, 2);
      return x;
    }
    case DML_DTYPE_U16: {
      uint16_t x;
      memcpy(&x, p + 2 * i, 2);
      return x;
    }
    case DML_DTYPE_I32: {
      int32_t x;
      memcpy(&x, p + 4 * i, 4);
      return x;
    }
    case DML_DTYPE_U32: {
      uint32_t x;
      memcpy(&x, p + 4 * i, 4);
      return x;
    }
    case DML_DTYPE_I64: {
      int64_t x;
      memcpy(&x, p + 8 * i, 8);
      return (double)x;
    }
    case DML_DTYPE_U64: {
      uint64_t x;
      memcpy(&x, p + 8 * i, 8);
      return (double)x;
    }
    default: return 0;
  }
}

static void put_float(dml_dtype_t dt, uint8_t *p, int64_t i, double v) {
  float f = (float)v;
  uint16_t h;
  switch (dt) {
    case DML_DTYPE_F32: memcpy(p + 4 * i, &f, 4); break;
    case DML_DTYPE_F64: memcpy(p + 8 * i, &v, 8); break;
    case DML_DTYPE_F16:
      h = dml_f32_to_f16(f);
      memcpy(p + 2 * i, &h, 2);
      break;
    case DML_DTYPE_BF16:
      h = dml_f32_to_bf16(f);
      memcpy(p + 2 * i, &h, 2);
      break;
    default: break;
  }
}

enum { MAP_FLUSH, MAP_ABS, MAP_PERT_UP, MAP_PERT_DOWN };

/* Flushes a denormal element to a zero of its sign (MAP_FLUSH), clears its
 * sign bit (MAP_ABS), or moves it by `rel` (relative) up or down
 * (MAP_PERT_*). */
static void map_float(dml_dtype_t dt, uint8_t *p, int64_t i, int how, double rel) {
  double x = get_elem(dt, p, i);
  if (how == MAP_ABS) {
    put_float(dt, p, i, fabs(x));
    return;
  }
  if (how != MAP_FLUSH) {
    put_float(dt, p, i, x * (how == MAP_PERT_UP ? 1.0 + rel : 1.0 - rel));
    return;
  }
  double lo = dt == DML_DTYPE_F64   ? DBL_MIN
              : dt == DML_DTYPE_F16 ? 6.103515625e-05
                                    : FLT_MIN;
  if (x != 0 && fabs(x) < lo) put_float(dt, p, i, signbit(x) ? -0.0 : 0.0);
}

/* Flush-to-zero mode of the calling thread (a device may flush denormal
 * inputs, intermediates and results, as Vulkan and CUDA allow): x86's
 * MXCSR FTZ and DAZ bits, AArch64's FPCR.FZ. ftz_enter returns the mode to
 * restore; elsewhere only the inputs are flushed (map_inputs). CPU worker
 * threads (dml_cpu_set_num_threads above 1) keep their own mode. */
#if defined(__SSE2__) || defined(__x86_64__)
static uint64_t ftz_enter(void) {
  unsigned old = _mm_getcsr();
  _mm_setcsr(old | 0x8040u); /* FTZ | DAZ */
  return old;
}
static void ftz_leave(uint64_t old) {
  _mm_setcsr((unsigned)old);
}
#elif defined(__aarch64__)
static uint64_t ftz_enter(void) {
  uint64_t old, fz;
  __asm__ volatile("mrs %0, fpcr" : "=r"(old));
  fz = old | (1ull << 24);
  __asm__ volatile("msr fpcr, %0" : : "r"(fz));
  return old;
}
static void ftz_leave(uint64_t old) {
  __asm__ volatile("msr fpcr, %0" : : "r"(old));
}
#else
static uint64_t ftz_enter(void) {
  return 0;
}
static void ftz_leave(uint64_t old) {
  (void)old;
}
#endif

/* ---- the check's state ---- */

typedef struct chk {
  const dml_rt_model_t *m;
  const dml_pkg_function_t *f;
  const uint8_t *weights;
  const dml_rt_backend_t *be;
  void *bs;
  dml_rt_session_t *s;
  uint32_t n_symbols;
  int64_t *sym;
  int64_t (*dims)[DML_MAX_RANK]; /* per value: this run's dims */
  uint8_t *produces;             /* per node: produces a data-dependent symbol */
  uint8_t *need_graph;           /* per value: kernels take its computed values */
  uint8_t **graph;               /* per value: those values (malloc'd) */
  void *scratch;
  size_t scratch_bytes;
  dml_tensor_t *io;
  uint64_t *cap;
  uint32_t max_io;
  uint64_t rng, seed, step;
  double pert; /* this kernel's relative move of its inputs (pert_rel) */
  /* arenas: base (the inputs made), dev (the device's), ref, flush and mag
   * (the CPU's on the inputs as made, with denormals flushed, on |inputs|) */
  uint8_t *a_alloc[6], *a[6];
  const void **over;                /* per value: data replacing a constant's (mag run) */
  const dml_tensor_t *const *given; /* the caller's function inputs */
  uint32_t n_given;
  char mismatch[160]; /* a count the CPU and device disagree on */
} chk_t;

enum { A_BASE, A_DEV, A_REF, A_FLUSH, A_MAG, A_PERT, N_ARENAS };

static dml_status_t oom(void) {
  return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
}

static int64_t numel_of(const chk_t *c, uint32_t v) {
  return dml_dims_numel(c->dims[v], c->f->values[v].type.rank);
}

static dml_tensor_t view(const chk_t *c, uint32_t v, uint8_t *arena) {
  const dml_pkg_value_t *pv = &c->f->values[v];
  dml_tensor_t t;
  memset(&t, 0, sizeof t);
  t.dtype = pv->type.dtype;
  t.rank = pv->type.rank;
  memcpy(t.dims, c->dims[v], sizeof t.dims);
  if (pv->storage == DML_PKG_STORAGE_CONST)
    t.data = (void *)(c->over && c->over[v] ? c->over[v] : c->weights + pv->offset);
  else
    t.data = arena + pv->offset;
  return t;
}

/* Runs node k with its CPU kernel on `arena`. */
static dml_status_t ref_node(chk_t *c, uint32_t k, uint8_t *arena) {
  const dml_pkg_node_t *n = &c->f->nodes[k];
  dml_tensor_t *in = c->io, *out = c->io + n->n_inputs;
  for (uint32_t j = 0; j < n->n_inputs; j++) {
    if (n->inputs[j] == DML_PKG_NO_VALUE)
      memset(&in[j], 0, sizeof in[j]);
    else
      in[j] = view(c, n->inputs[j], arena);
  }
  for (uint32_t j = 0; j < n->n_outputs; j++) {
    if (n->outputs[j] == DML_PKG_NO_VALUE) {
      memset(&out[j], 0, sizeof out[j]);
      c->cap[j] = 0;
    } else {
      out[j] = view(c, n->outputs[j], arena);
      c->cap[j] = c->f->values[n->outputs[j]].bytes;
    }
  }
  if ((dml_op_info(n->op)->flags & DML_OPF_VIEW) && n->n_inputs && !c->produces[k] &&
      in[0].data == out[0].data)
    return DML_OK; /* a view planned in place holds its bytes */
  dml_cpu_call_t call;
  memset(&call, 0, sizeof call);
  call.op = n->op;
  call.node_name = n->name;
  call.inputs = in;
  call.n_inputs = n->n_inputs;
  call.outputs = out;
  call.n_outputs = n->n_outputs;
  call.attrs = n->attrs;
  call.n_attrs = n->n_attrs;
  call.scratch = c->scratch;
  call.scratch_bytes = c->scratch_bytes;
  call.rng_seed = c->seed;
  call.rng_counter = c->step;
  call.rng_stream = k;
  if (c->produces[k]) call.output_capacity = c->cap;
  dml_status_t st = dml_cpu_run(&call);
  if (st)
    return dml_status_annotate(st, "the CPU reference of node #%" PRIu32 " '%s' (%s)", k,
                               n->name, n->op_name);
  for (uint32_t j = 0; c->produces[k] && j < n->n_outputs && !c->mismatch[0]; j++)
    if (n->outputs[j] != DML_PKG_NO_VALUE &&
        memcmp(out[j].dims, c->dims[n->outputs[j]],
               sizeof(int64_t) * (size_t)out[j].rank))
      snprintf(c->mismatch, sizeof c->mismatch,
               "node '%s' (%s): the device and the CPU give output %" PRIu32
               " different dims",
               n->name, n->op_name, j);
  return DML_OK;
}

/* ---- comparing ---- */

/* The scaled error of device value d against reference r (dml_rt.h). */
static double elem_err(double d, double r, double mag) {
  if (isnan(d) || isnan(r)) return isnan(d) && isnan(r) ? 0 : INFINITY;
  if (isinf(d) || isinf(r)) return d == r ? 0 : INFINITY;
  double diff = fabs(d - r);
  if (diff < FLT_MIN) return 0;
  double s = fabs(r) > 1 ? fabs(r) : 1;
  if (isfinite(mag) && fabs(mag) > s) s = fabs(mag);
  return diff / s;
}

typedef struct kstate {
  dml_rt_check_kernel_t *out;
  int have; /* an element has been compared */
} kstate_t;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The sensitivity of element i of value v: |pert - ref| / rel, how
 * much the result moves when the inputs move (the size of the terms that
 * cancel in it); 0 when not finite. */
static double sens_at(dml_dtype_t dt, const uint8_t *pert, const uint8_t *ref, int64_t i,
                      double rel) {
  double x = fabs(get_elem(dt, pert, i) - get_elem(dt, ref, i)) / rel;
  return isfinite(x) ? x : 0;
}

/* Compares value v of the device arena with the reference arenas (flush,
 * mag, pert may be NULL) and keeps the worst element in ks. The magnitude
 * an element is scaled by is the largest of mag's (the result on
 * |inputs|), its sensitivity and the median of the value's nonzero
 * sensitivities (the moves of the inputs have random signs, so one
 * element's may cancel by chance; Relu's zeros have none). RESOURCE_EXHAUSTED when out of
 * memory. */
static dml_status_t compare_value(const chk_t *c, kstate_t *ks, uint32_t v,
                                  const uint8_t *dev, const uint8_t *ref,
                                  const uint8_t *flush, const uint8_t *mag,
                                  const uint8_t *pert, const char *inputs, uint32_t it) {
  const dml_pkg_value_t *pv = &c->f->values[v];
  dml_dtype_t dt = pv->type.dtype;
  int64_t n = numel_of(c, v);
  const uint8_t *pd = dev + pv->offset, *pr = ref + pv->offset;
  const uint8_t *pp = pert ? pert + pv->offset : NULL;
  dml_rt_check_kernel_t *o = ks->out;
  double med = 0;
  if (pp && n > 0) {
    double *all = (double *)malloc((size_t)n * sizeof(double));
    if (!all) return oom();
    int64_t nz = 0;
    for (int64_t i = 0; i < n; i++) {
      double x = sens_at(dt, pp, pr, i, c->pert);
      if (x > 0) all[nz++] = x;
    }
    qsort(all, (size_t)nz, sizeof(double), cmp_double);
    med = nz ? all[nz / 2] : 0;
    free(all);
  }
  for (int64_t i = 0; i < n; i++) {
    double d = get_elem(dt, pd, i), r = get_elem(dt, pr, i);
    double mg = mag ? fabs(get_elem(dt, mag + pv->offset, i)) : NAN;
    if (pp) {
      double sens = sens_at(dt, pp, pr, i, c->pert);
      if (sens < med) sens = med;
      if (!(mg >= sens)) mg = sens;
    }
    double e = elem_err(d, r, mg);
    if (e > 0 && flush) {
      double r2 = get_elem(dt, flush + pv->offset, i);
      double e2 = elem_err(d, r2, mg);
      if (e2 < e) e = e2, r = r2;
    }
    if (ks->have && !(e > o->worst)) continue;
    ks->have = 1;
    o->worst = e;
    snprintf(o->value, sizeof o->value, "%s", pv->name[0] ? pv->name : "(unnamed)");
    o->index = i;
    o->rank = pv->type.rank;
    int64_t rem = i;
    for (int32_t d2 = pv->type.rank - 1; d2 >= 0; d2--) {
      int64_t ext = c->dims[v][d2] > 0 ? c->dims[v][d2] : 1;
      o->coords[d2] = rem % ext;
      rem /= ext;
    }
    o->device_value = d;
    o->cpu_value = r;
    o->inputs = inputs;
    o->iteration = it;
  }
  return DML_OK;
}

/* ---- inputs ---- */

static const double k_edges[] = {NAN,   INFINITY, -INFINITY, -0.0,  0.0,
                                 1e-40, -1e-40,   1.4e-45,   1e-30, -1e-30,
                                 1e15,  -1e15,    1.0,       -1.0,  0.5};
static const double k_huge[] = {3e38, -3e38};

/* The edge values left for a kernel casting floats to integers (ONNX
 * leaves a cast of NaN, an infinity or a value out of the integer type's
 * range undefined): nothing negative, huge or not finite. */
static const double k_edges_cast[] = {0.0, -0.0, 1e-40, 1.4e-45, 1e-30, 0.5, 1.0};

/* Fills value v in arena `a` with random (edge 0) or edge (edge 1)
 * values; `huge` allows +-3e38; `cast` (the kernel casts floats to
 * integers) keeps them in [0, 100) and to k_edges_cast. */
static void fill_float(chk_t *c, uint32_t v, uint8_t *a, int edge, int huge, int cast) {
  const dml_pkg_value_t *pv = &c->f->values[v];
  int64_t n = numel_of(c, v);
  double scale = pow(10.0, -3.0 + 6.0 * rnd_unit(&c->rng));
  uint8_t *p = a + pv->offset;
  size_t ne = sizeof k_edges / sizeof k_edges[0], nh = huge ? 2 : 0;
  size_t nc = sizeof k_edges_cast / sizeof k_edges_cast[0];
  for (int64_t i = 0; i < n; i++) {
    double x = cast ? 100.0 * rnd_unit(&c->rng) : rnd_normal(&c->rng) * scale;
    if (edge && (rnd_u64(&c->rng) & 3) == 0) {
      size_t w = (size_t)(rnd_u64(&c->rng) % (cast ? nc : ne + nh));
      x = cast ? k_edges_cast[w] : w < ne ? k_edges[w] : k_huge[w - ne];
    }
    put_float(pv->type.dtype, p, i, x);
  }
}

/* 1 when a node of kernel K turns float values into an integer type: a
 * Cast, or an elementwise op with a float input and an integer output
 * (Pow of an integer base by a float exponent). */
static int casts_to_int(const chk_t *c, const dml_kpkg_kernel_t *K) {
  for (uint32_t i = 0; i < K->n_nodes; i++) {
    const dml_pkg_node_t *n = &c->f->nodes[K->nodes[i]];
    if (!(dml_op_info(n->op)->flags & DML_OPF_ELEMENTWISE) && n->op != DML_OP_CAST_LIKE)
      continue;
    if (!n->n_outputs || n->outputs[0] == DML_PKG_NO_VALUE ||
        !dml_dtype_is_int(c->f->values[n->outputs[0]].type.dtype))
      continue;
    for (uint32_t j = 0; j < n->n_inputs; j++)
      if (n->inputs[j] != DML_PKG_NO_VALUE &&
          dml_dtype_is_float(c->f->values[n->inputs[j]].type.dtype))
        return 1;
  }
  return 0;
}

/* Random data for a function input `t` (its data, dtype and dims set):
 * normal float values, integers 0 for one element (an axis, a count),
 * else in [0, 2), bools 0/1. */
static void fill_function_input(chk_t *c, const dml_tensor_t *t) {
  int64_t n = dml_dims_numel(t->dims, t->rank);
  uint8_t *p = (uint8_t *)t->data;
  for (int64_t i = 0; i < n; i++) {
    if (dml_dtype_is_float(t->dtype)) {
      put_float(t->dtype, p, i, rnd_normal(&c->rng));
      continue;
    }
    uint64_t b = n == 1 ? 0 : rnd_u64(&c->rng) & 1;
    size_t es = dml_dtype_size(t->dtype);
    memset(p + (size_t)i * es, 0, es);
    p[(size_t)i * es] = (uint8_t)b; /* little-endian 0 or 1 */
  }
}

/* ---- the check ---- */

static void chk_free(chk_t *c) {
  for (int i = 0; i < N_ARENAS; i++) free(c->a_alloc[i]);
  for (uint32_t v = 0; c->graph && v < c->f->n_values; v++) free(c->graph[v]);
  free(c->graph);
  free(c->need_graph);
  free(c->produces);
  free(c->dims);
  free(c->sym);
  free(c->scratch);
  free(c->io);
  free(c->cap);
  free((void *)c->over);
}

static dml_status_t chk_init(chk_t *c) {
  const dml_pkg_function_t *f = c->f;
  const dml_rt_model_t *m = c->m;
  c->n_symbols = m->graph->n_symbols;
  c->sym = (int64_t *)calloc(c->n_symbols ? c->n_symbols : 1, sizeof(int64_t));
  c->dims = calloc(f->n_values ? f->n_values : 1, sizeof(*c->dims));
  c->produces = (uint8_t *)calloc(f->n_nodes ? f->n_nodes : 1, 1);
  c->need_graph = (uint8_t *)calloc(f->n_values ? f->n_values : 1, 1);
  c->graph = (uint8_t **)calloc(f->n_values ? f->n_values : 1, sizeof(uint8_t *));
  c->over = (const void **)calloc(f->n_values ? f->n_values : 1, sizeof(void *));
  uint32_t mx = 1;
  for (uint32_t k = 0; k < f->n_nodes; k++)
    if (f->nodes[k].n_inputs + f->nodes[k].n_outputs > mx)
      mx = f->nodes[k].n_inputs + f->nodes[k].n_outputs;
  c->max_io = mx;
  c->io = (dml_tensor_t *)calloc(mx, sizeof(dml_tensor_t));
  c->cap = (uint64_t *)calloc(mx, sizeof(uint64_t));
  c->scratch_bytes = (size_t)m->fn_scratch[dml_rt_fn_index(m, f)];
  if (c->scratch_bytes) c->scratch = malloc(c->scratch_bytes);
  if (!c->sym || !c->dims || !c->produces || !c->need_graph || !c->graph || !c->over ||
      !c->io || !c->cap || (c->scratch_bytes && !c->scratch))
    return oom();
  for (int i = 0; i < N_ARENAS; i++) {
    if (f->arena_bytes > SIZE_MAX - 64) return oom();
    c->a_alloc[i] = (uint8_t *)calloc(1, (size_t)f->arena_bytes + 64);
    if (!c->a_alloc[i]) return oom();
    c->a[i] = (uint8_t *)(((uintptr_t)c->a_alloc[i] + 63) & ~(uintptr_t)63);
  }
  for (uint32_t i = 0; i < c->n_symbols; i++) {
    const dml_pkg_symbol_t *sy = &m->graph->symbols[i];
    if (sy->origin == DML_PKG_SYMBOL_NODE && &m->graph->functions[sy->function] == f &&
        sy->node < f->n_nodes)
      c->produces[sy->node] = 1;
  }
  /* Which values kernels take as computed: integer and bool values, and
   * those read at a domain input. */
  for (uint32_t k = 0; k < f->n_nodes; k++) {
    const dml_pkg_node_t *n = &f->nodes[k];
    for (uint32_t j = 0; j < n->n_inputs; j++) {
      uint32_t v = n->inputs[j];
      if (v == DML_PKG_NO_VALUE || f->values[v].storage == DML_PKG_STORAGE_CONST)
        continue;
      if (!dml_dtype_is_float(f->values[v].type.dtype) || domain_input(n->op, j))
        c->need_graph[v] = 1;
    }
  }
  return DML_OK;
}

/* Saves value v's bytes of `arena` when kernels take it as computed. */
static dml_status_t save_graph_value(chk_t *c, uint32_t v, const uint8_t *arena) {
  if (!c->need_graph[v]) return DML_OK;
  const dml_pkg_value_t *pv = &c->f->values[v];
  size_t b = (size_t)numel_of(c, v) * dml_dtype_size(pv->type.dtype);
  free(c->graph[v]);
  c->graph[v] = (uint8_t *)malloc(b ? b : 1);
  if (!c->graph[v]) return oom();
  memcpy(c->graph[v], arena + pv->offset, b);
  return DML_OK;
}

/* One iteration's function inputs at symbol values `syms` (input symbols
 * only), bound to the device session and placed in the reference arena;
 * then the device runs the whole function. */
static dml_status_t run_whole(chk_t *c, const int64_t *syms) {
  const dml_pkg_function_t *f = c->f;
  dml_rt_session_clear_inputs(c->s);
  memset(c->a[A_REF], 0, (size_t)f->arena_bytes);
  for (uint32_t i = 0; i < f->n_inputs; i++) {
    const dml_pkg_value_t *pv = &f->values[f->inputs[i]];
    const dml_tensor_t *given = i < c->n_given ? c->given[i] : NULL;
    if (given) {
      DML_RETURN_IF_ERROR(dml_status_annotate(dml_rt_session_set_input(c->s, i, given),
                                              "the given input '%s'", pv->name));
      memcpy(c->a[A_REF] + pv->offset, given->data, dml_tensor_bytes(given));
      continue;
    }
    dml_tensor_t t;
    memset(&t, 0, sizeof t);
    t.dtype = pv->type.dtype;
    t.rank = pv->type.rank;
    for (int32_t d = 0; d < t.rank; d++)
      t.dims[d] = pv->type.dims[d].sym < 0
                      ? pv->type.dims[d].value
                      : pv->type.dims[d].value * syms[pv->type.dims[d].sym];
    t.data = c->a[A_REF] + pv->offset;
    fill_function_input(c, &t);
    DML_RETURN_IF_ERROR(dml_rt_session_set_input(c->s, i, &t));
  }
  /* set_input copies; the reference arena keeps the same bytes */
  dml_rt_session_set_seed(c->s, c->seed, c->step);
  DML_RETURN_IF_ERROR(dml_rt_session_run(c->s));
  for (uint32_t i = 0; i < c->n_symbols; i++)
    c->sym[i] = dml_rt_session_symbol_value(c->s, i);
  for (uint32_t v = 0; v < f->n_values; v++) {
    const dml_pkg_value_t *pv = &f->values[v];
    if (pv->storage == DML_PKG_STORAGE_CONST) {
      for (int32_t d = 0; d < pv->type.rank; d++) c->dims[v][d] = pv->type.dims[d].value;
      continue;
    }
    DML_RETURN_IF_ERROR(dml_type_eval_dims(&pv->type, c->sym, c->n_symbols, c->dims[v]));
  }
  return DML_OK;
}

/* The symbol values the caller's inputs fix (syms[] otherwise unchanged;
 * set_input checks them). */
static void given_symbols(const chk_t *c, int64_t *syms) {
  for (uint32_t i = 0; i < c->n_given && i < c->f->n_inputs; i++) {
    const dml_tensor_t *t = c->given[i];
    const dml_pkg_value_t *pv = &c->f->values[c->f->inputs[i]];
    if (!t || t->rank != pv->type.rank) continue;
    for (int32_t d = 0; d < t->rank; d++) {
      const dml_dim_t *dim = &pv->type.dims[d];
      if (dim->sym >= 0 && (uint32_t)dim->sym < c->n_symbols && dim->value > 0)
        syms[dim->sym] = t->dims[d] / dim->value;
    }
  }
}

/* The reference of the whole function on the reference arena (inputs
 * placed by run_whole), keeping the values kernels take as computed, and
 * the end-to-end comparison of the outputs. */
static dml_status_t ref_whole(chk_t *c, kstate_t *e2e, uint32_t it) {
  const dml_pkg_function_t *f = c->f;
  uint8_t *a = c->a[A_REF];
  c->mismatch[0] = 0;
  for (uint32_t i = 0; i < f->n_inputs; i++)
    DML_RETURN_IF_ERROR(save_graph_value(c, f->inputs[i], a));
  for (uint32_t k = 0; k < f->n_nodes; k++) {
    DML_RETURN_IF_ERROR(ref_node(c, k, a));
    const dml_pkg_node_t *n = &f->nodes[k];
    for (uint32_t j = 0; j < n->n_outputs; j++)
      if (n->outputs[j] != DML_PKG_NO_VALUE)
        DML_RETURN_IF_ERROR(save_graph_value(c, n->outputs[j], a));
  }
  /* the device's outputs, at their arena offsets of the device arena */
  uint8_t *dev = c->a[A_DEV];
  for (uint32_t i = 0; i < f->n_outputs; i++) {
    dml_tensor_t t;
    DML_RETURN_IF_ERROR(dml_rt_session_get_output(c->s, i, &t));
    const dml_pkg_value_t *pv = &f->values[f->outputs[i]];
    size_t b = dml_tensor_bytes(&t);
    if (pv->storage != DML_PKG_STORAGE_CONST && b <= pv->bytes)
      memcpy(dev + pv->offset, t.data, b);
  }
  for (uint32_t i = 0; i < f->n_outputs; i++)
    DML_RETURN_IF_ERROR(
        compare_value(c, e2e, f->outputs[i], dev, a, NULL, NULL, NULL, "function", it));
  if (c->mismatch[0]) {
    e2e->out->worst = INFINITY;
    snprintf(e2e->out->note, sizeof e2e->out->note, "%s", c->mismatch);
  }
  return DML_OK;
}

/* Node range of kernel K: 1 when node k is one of its nodes. */
static int in_kernel(const dml_kpkg_kernel_t *K, uint32_t k) {
  for (uint32_t i = 0; i < K->n_nodes; i++)
    if (K->nodes[i] == k) return 1;
  return 0;
}

/* Kernel K's inputs (values its nodes read that none of them computes,
 * not constants) and outputs (values its nodes compute that another node
 * reads or the function returns): in[v] / outv[v] set to 1. */
static void kernel_io(const chk_t *c, const dml_kpkg_kernel_t *K, uint8_t *in,
                      uint8_t *outv) {
  const dml_pkg_function_t *f = c->f;
  memset(in, 0, f->n_values);
  memset(outv, 0, f->n_values);
  /* outv 2: computed inside, not yet known to be read outside */
  for (uint32_t i = 0; i < K->n_nodes; i++) {
    const dml_pkg_node_t *n = &f->nodes[K->nodes[i]];
    for (uint32_t j = 0; j < n->n_inputs; j++) {
      uint32_t v = n->inputs[j];
      if (v != DML_PKG_NO_VALUE && !outv[v] &&
          f->values[v].storage != DML_PKG_STORAGE_CONST)
        in[v] = 1;
    }
    for (uint32_t j = 0; j < n->n_outputs; j++)
      if (n->outputs[j] != DML_PKG_NO_VALUE) outv[n->outputs[j]] = 2;
  }
  for (uint32_t k = 0; k < f->n_nodes; k++) {
    if (in_kernel(K, k)) continue;
    const dml_pkg_node_t *n = &f->nodes[k];
    for (uint32_t j = 0; j < n->n_inputs; j++)
      if (n->inputs[j] != DML_PKG_NO_VALUE && outv[n->inputs[j]]) outv[n->inputs[j]] = 1;
  }
  for (uint32_t i = 0; i < f->n_outputs; i++)
    if (outv[f->outputs[i]]) outv[f->outputs[i]] = 1;
  for (uint32_t v = 0; v < f->n_values; v++) outv[v] = outv[v] == 1;
}

/* Kernel k: its tolerance class and its nodes' ops. */
static void kernel_describe(const chk_t *c, const dml_kpkg_kernel_t *K,
                            dml_rt_check_kernel_t *o, int *cls) {
  *cls = CLS_EXACT;
  size_t w = 0;
  o->ops[0] = 0;
  for (uint32_t i = 0; i < K->n_nodes; i++) {
    const dml_pkg_node_t *n = &c->f->nodes[K->nodes[i]];
    int k = op_class(n->op);
    if (k > *cls) *cls = k;
    if (w < sizeof o->ops)
      w += (size_t)snprintf(o->ops + w, sizeof o->ops - w, "%s%s", i ? "," : "",
                            n->op_name);
  }
  snprintf(o->name, sizeof o->name, "%s", K->name);
  o->tol_class = k_class_name[*cls];
  o->tolerance = k_class_tol[*cls];
}

/* Raises a tolerance of kernel K for the dtypes of its outputs and of the
 * values its nodes make inside it (a 16-bit GEMM result rounded once and
 * then Cast to an f32 output differs from the CPU's by the 16-bit
 * rounding), and for the CUDA TF32 GEMMs. */
static double dtype_tol(const chk_t *c, const dml_kpkg_kernel_t *K, const uint8_t *outv,
                        const char *name, double t) {
  for (uint32_t v = 0; v < c->f->n_values; v++) {
    int made = outv[v] != 0;
    for (uint32_t i = 0; !made && i < K->n_nodes; i++) {
      const dml_pkg_node_t *n = &c->f->nodes[K->nodes[i]];
      for (uint32_t j = 0; j < n->n_outputs; j++) made |= n->outputs[j] == v;
    }
    if (!made) continue;
    if (c->f->values[v].type.dtype == DML_DTYPE_F16 && t < 2e-3) t = 2e-3;
    if (c->f->values[v].type.dtype == DML_DTYPE_BF16 && t < 1.6e-2) t = 1.6e-2;
  }
  size_t n = strlen(name);
  if (n >= 5 && !strcmp(name + n - 5, "_tf32") && t < 5e-3) t = 5e-3;
  return t;
}

/* Makes kernel K's inputs in the base arena: computed values where a
 * domain or dtype asks for them, else random (edge 0) or edge values. */
static dml_status_t make_inputs(chk_t *c, const uint8_t *in, int edge, int cls,
                                int cast) {
  const dml_pkg_function_t *f = c->f;
  uint8_t *base = c->a[A_BASE];
  /* Bytes nothing writes read as NaN (0xFF bytes): an output the device
   * leaves unwritten shows. */
  memset(base, 0xFF, (size_t)f->arena_bytes);
  for (uint32_t v = 0; v < f->n_values; v++) {
    if (!in[v]) continue;
    const dml_pkg_value_t *pv = &f->values[v];
    if (c->need_graph[v]) {
      if (!c->graph[v])
        return dml_status_make(DML_STATUS_INTERNAL, OP, "value '%s' was not computed",
                               pv->name);
      memcpy(base + pv->offset, c->graph[v],
             (size_t)numel_of(c, v) * dml_dtype_size(pv->type.dtype));
    } else {
      fill_float(c, v, base, edge, cls != CLS_ACCUM, cast);
    }
  }
  return DML_OK;
}

/* Maps the float inputs of `in` in arena a (map_float's `how`; with
 * MAP_PERT_UP the direction is drawn per element). */
static void map_inputs(chk_t *c, const uint8_t *in, uint8_t *a, int how) {
  for (uint32_t v = 0; v < c->f->n_values; v++) {
    const dml_pkg_value_t *pv = &c->f->values[v];
    if (!in[v] || c->need_graph[v] || !dml_dtype_is_float(pv->type.dtype)) continue;
    int64_t n = numel_of(c, v);
    for (int64_t i = 0; i < n; i++)
      map_float(pv->type.dtype, a + pv->offset, i,
                how == MAP_PERT_UP && (rnd_u64(&c->rng) & 1) ? MAP_PERT_DOWN : how,
                c->pert);
  }
}

static dml_status_t ref_kernel(chk_t *c, const dml_kpkg_kernel_t *K, uint8_t *a) {
  for (uint32_t i = 0; i < K->n_nodes; i++)
    DML_RETURN_IF_ERROR(ref_node(c, K->nodes[i], a));
  return DML_OK;
}

/* Copies of the float constants read by kernel K's nodes mapped as
 * map_inputs does (|x| for the magnitude run, moved for the sensitivity
 * run), in c->over; freed by consts_free. */
static dml_status_t consts_map(chk_t *c, const dml_kpkg_kernel_t *K, int how) {
  const dml_pkg_function_t *f = c->f;
  for (uint32_t i = 0; i < K->n_nodes; i++) {
    const dml_pkg_node_t *n = &f->nodes[K->nodes[i]];
    for (uint32_t j = 0; j < n->n_inputs; j++) {
      uint32_t v = n->inputs[j];
      if (v == DML_PKG_NO_VALUE || c->over[v]) continue;
      const dml_pkg_value_t *pv = &f->values[v];
      if (pv->storage != DML_PKG_STORAGE_CONST || !dml_dtype_is_float(pv->type.dtype))
        continue;
      int64_t ne = numel_of(c, v);
      size_t b = (size_t)ne * dml_dtype_size(pv->type.dtype);
      uint8_t *p = (uint8_t *)malloc(b ? b : 1);
      if (!p) return oom();
      memcpy(p, c->weights + pv->offset, b);
      for (int64_t e = 0; e < ne; e++)
        map_float(pv->type.dtype, p, e,
                  how == MAP_PERT_UP && (rnd_u64(&c->rng) & 1) ? MAP_PERT_DOWN : how,
                  c->pert);
      c->over[v] = p;
    }
  }
  return DML_OK;
}

static void consts_free(chk_t *c) {
  for (uint32_t v = 0; v < c->f->n_values; v++) {
    free((void *)c->over[v]);
    c->over[v] = NULL;
  }
}

/* One round of kernel k: inputs made (edge or not), run on the device and
 * on the CPU, outputs compared. */
static dml_status_t kernel_round(chk_t *c, uint32_t k, const dml_kpkg_kernel_t *K,
                                 const uint8_t *in, const uint8_t *outv, int cls,
                                 int edge, uint32_t it, kstate_t *ks) {
  const dml_pkg_function_t *f = c->f;
  size_t ab = (size_t)f->arena_bytes;
  DML_RETURN_IF_ERROR(make_inputs(c, in, edge, cls, casts_to_int(c, K)));
  memcpy(c->a[A_DEV], c->a[A_BASE], ab);
  memcpy(c->a[A_REF], c->a[A_BASE], ab);
  dml_rt_exec_t e = {c->m, f, c->a[A_DEV], c->sym, c->n_symbols, c->seed, c->step, NULL,
                     NULL, 0, 0.0,         NULL,   NULL,         NULL,    0};
  dml_status_t st = c->be->run_kernel(c->bs, &e, k);
  if (st) return dml_status_annotate(st, "running kernel %s alone", K->name);
  DML_RETURN_IF_ERROR(ref_kernel(c, K, c->a[A_REF]));
  uint8_t *flush = NULL, *mag = NULL;
  if (edge) {
    flush = c->a[A_FLUSH];
    memcpy(flush, c->a[A_BASE], ab);
    map_inputs(c, in, flush, MAP_FLUSH);
    uint64_t mode = ftz_enter();
    st = ref_kernel(c, K, flush);
    ftz_leave(mode);
    DML_RETURN_IF_ERROR(st);
  }
  if (cls == CLS_ACCUM) {
    mag = c->a[A_MAG];
    memcpy(mag, c->a[A_BASE], ab);
    map_inputs(c, in, mag, MAP_ABS);
    dml_status_t s2 = consts_map(c, K, MAP_ABS);
    if (!s2) s2 = ref_kernel(c, K, mag);
    consts_free(c);
    DML_RETURN_IF_ERROR(s2);
  }
  uint8_t *pert = NULL;
  c->pert = PERT_REL;
  for (uint32_t v = 0; v < f->n_values; v++)
    if (in[v] && !c->need_graph[v] && dml_dtype_is_float(f->values[v].type.dtype))
      c->pert = fmax(c->pert, pert_rel(f->values[v].type.dtype));
  for (uint32_t i = 0; i < K->n_nodes; i++) {
    const dml_pkg_node_t *n = &f->nodes[K->nodes[i]];
    for (uint32_t j = 0; j < n->n_inputs; j++)
      if (n->inputs[j] != DML_PKG_NO_VALUE &&
          f->values[n->inputs[j]].storage == DML_PKG_STORAGE_CONST &&
          dml_dtype_is_float(f->values[n->inputs[j]].type.dtype))
        c->pert = fmax(c->pert, pert_rel(f->values[n->inputs[j]].type.dtype));
  }
  if (cls != CLS_EXACT) {
    pert = c->a[A_PERT];
    memcpy(pert, c->a[A_BASE], ab);
    map_inputs(c, in, pert, MAP_PERT_UP);
    dml_status_t s2 = consts_map(c, K, MAP_PERT_UP);
    if (!s2) s2 = ref_kernel(c, K, pert);
    consts_free(c);
    DML_RETURN_IF_ERROR(s2);
  }
  for (uint32_t v = 0; v < f->n_values; v++)
    if (outv[v])
      DML_RETURN_IF_ERROR(compare_value(c, ks, v, c->a[A_DEV], c->a[A_REF], flush, mag,
                                        pert, edge ? "edge" : "random", it));
  return DML_OK;
}

void dml_rt_check_report_free(dml_rt_check_report_t *r) {
  if (!r) return;
  free(r->kernels);
  free(r);
}

dml_status_t dml_rt_check(const dml_rt_model_t *m, const char *device,
                          const dml_rt_check_options_t *opt,
                          dml_rt_check_report_t **out) {
  if (!device || !strcmp(device, "cpu"))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "device '%s': the check compares a GPU device (vulkan, "
                           "cuda) with the CPU reference kernels; the cpu is the "
                           "reference itself",
                           device ? device : "cpu");
  chk_t c;
  memset(&c, 0, sizeof c);
  c.m = m;
  c.seed = opt ? opt->seed : 0;
  uint32_t iters = opt && opt->iterations ? opt->iterations : 3;
  c.rng = c.seed ^ 0x6A09E667F3BCC908ull;
  if (opt && opt->inputs) {
    c.given = opt->inputs;
    c.n_given = opt->n_inputs;
  }
  DML_RETURN_IF_ERROR(dml_rt_session_create(m, device, &c.s));
  dml_rt_session_backend(c.s, &c.be, &c.bs, &c.f, &c.weights);
  dml_status_t st = DML_OK;
  dml_rt_check_report_t *r = NULL;
  uint8_t *in = NULL, *outv = NULL;
  int64_t *syms = NULL;
  if (!c.be || !c.be->run_kernel)
    st = dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                         "device '%s' cannot run a kernel alone", device);
  if (!st) st = chk_init(&c);
  const dml_kpkg_function_t *kf = NULL;
  if (!st) {
    const dml_kpkg_t *table =
        !strcmp(c.be->name, "cuda") ? m->kernels_cuda : m->kernels_spirv;
    kf = dml_kpkg_find_function(table, dml_rt_fn_index(m, c.f));
    if (!kf) st = dml_status_make(DML_STATUS_INTERNAL, OP, "no kernel table");
  }
  if (!st) {
    r = (dml_rt_check_report_t *)calloc(1, sizeof *r);
    if (r)
      r->kernels =
          (dml_rt_check_kernel_t *)calloc(kf->n_kernels + 1, sizeof(*r->kernels));
    in = (uint8_t *)malloc(c.f->n_values ? c.f->n_values : 1);
    outv = (uint8_t *)malloc(c.f->n_values ? c.f->n_values : 1);
    syms = (int64_t *)calloc(c.n_symbols ? c.n_symbols : 1, sizeof(int64_t));
    if (!r || !r->kernels || !in || !outv || !syms) st = oom();
  }
  if (!st) {
    snprintf(r->device, sizeof r->device, "%s", dml_rt_session_device(c.s));
    r->n_kernels = kf->n_kernels + 1;
    r->seed = c.seed;
    r->iterations = iters;
  }
  int *cls = NULL;
  if (!st) {
    cls = (int *)calloc(kf->n_kernels + 1, sizeof(int));
    if (!cls) st = oom();
  }
  kstate_t *ks = NULL;
  if (!st) {
    ks = (kstate_t *)calloc(kf->n_kernels + 1, sizeof(kstate_t));
    if (!ks) st = oom();
  }
  int tf32 = 0;
  for (uint32_t k = 0; !st && k < kf->n_kernels; k++) {
    const dml_kpkg_kernel_t *K = &kf->kernels[k];
    dml_rt_check_kernel_t *o = &r->kernels[k];
    ks[k].out = o;
    kernel_describe(&c, K, o, &cls[k]);
    size_t nl = strlen(K->name);
    if (nl >= 5 && !strcmp(K->name + nl - 5, "_tf32")) tf32 = 1;
    o->checked = 1;
    if (K->kind == DML_KPKG_KIND_HOST) { /* the CPU fall-back: no device kernel */
      o->checked = 0;
      snprintf(o->note, sizeof o->note,
               "host nodes (the CPU fall-back): the CPU kernels");
    }
    for (uint32_t i = 0; i < K->n_nodes && o->checked; i++)
      if (dml_rt_node_dims_on_device(m, c.f, K->nodes[i])) {
        o->checked = 0;
        snprintf(o->note, sizeof o->note,
                 "counts an output size on the device: checked end to end only");
      }
    kernel_io(&c, K, in, outv);
    o->tolerance = dtype_tol(&c, K, outv, K->name, o->tolerance);
    int any = 0;
    for (uint32_t v = 0; v < c.f->n_values; v++) any |= outv[v];
    if (o->checked && !any) {
      o->checked = 0;
      snprintf(o->note, sizeof o->note,
               "writes no value another node reads (globals only): checked end to end "
               "only");
    }
  }
  dml_rt_check_kernel_t *eo = r ? &r->kernels[r->n_kernels - 1] : NULL;
  if (!st) {
    snprintf(eo->name, sizeof eo->name, "end-to-end");
    snprintf(eo->ops, sizeof eo->ops, "%s (%" PRIu32 " nodes)", c.f->name, c.f->n_nodes);
    eo->tol_class = k_class_name[CLS_E2E];
    eo->tolerance = tf32 ? 5e-3 : k_class_tol[CLS_E2E];
    /* f16/bf16 values inside (dmlc compile --precision): the device and the
     * CPU round at other places, each rounding 2^-11 / 2^-8 relative, and
     * those differences pass through the layers: 1e-2 and 4e-2, the
     * tolerances test_vulkan_precision holds against f32 */
    for (uint32_t v = 0; v < c.f->n_values; v++) {
      dml_dtype_t dt = c.f->values[v].type.dtype;
      if (dt == DML_DTYPE_F16 && eo->tolerance < 1e-2) eo->tolerance = 1e-2;
      if (dt == DML_DTYPE_BF16 && eo->tolerance < 4e-2) eo->tolerance = 4e-2;
    }
    eo->checked = 1;
    ks[kf->n_kernels].out = eo;
  }
  for (uint32_t it = 0; !st && it < iters; it++) {
    c.step = it;
    /* symbol values: the bounds first, then random ones in [1, bound] */
    for (uint32_t i = 0; i < c.n_symbols; i++) {
      int64_t b = m->graph->symbols[i].bound;
      syms[i] = it == 0 || b < 1 ? b : 1 + (int64_t)(rnd_u64(&c.rng) % (uint64_t)b);
    }
    given_symbols(&c, syms);
    st = run_whole(&c, syms);
    if (st && it > 0) { /* sizes the model does not take: at the bounds */
      dml_status_free(st);
      for (uint32_t i = 0; i < c.n_symbols; i++) syms[i] = m->graph->symbols[i].bound;
      given_symbols(&c, syms);
      st = run_whole(&c, syms);
    }
    if (st) {
      st = dml_status_annotate(st, "running the whole function on %s", device);
      if (!c.n_given)
        st = dml_status_detail(st,
                               "the function's inputs were random; a model that needs "
                               "other values (token ids, shapes, axes) needs them given "
                               "(dmlc check --input NAME=FILE.npy)");
      break;
    }
    st = ref_whole(&c, &ks[kf->n_kernels], it);
    if (st && !c.n_given)
      st = dml_status_detail(st,
                             "the function's inputs were random; a model that needs "
                             "other values (token ids, shapes, axes) needs them given "
                             "(dmlc check --input NAME=FILE.npy)");
    if (st) break;
    for (uint32_t k = 0; !st && k < kf->n_kernels; k++) {
      if (!r->kernels[k].checked) continue;
      kernel_io(&c, &kf->kernels[k], in, outv);
      for (int edge = 0; !st && edge < 2; edge++)
        st = kernel_round(&c, k, &kf->kernels[k], in, outv, cls[k], edge, it, &ks[k]);
    }
  }
  for (uint32_t k = 0; !st && k < r->n_kernels; k++) {
    dml_rt_check_kernel_t *o = &r->kernels[k];
    if (!o->inputs) o->inputs = "";
    o->passed = o->checked && !(o->worst > o->tolerance);
    if (o->checked && !o->passed) r->n_failed++;
  }
  free(ks);
  free(cls);
  free(in);
  free(outv);
  free(syms);
  chk_free(&c);
  dml_rt_session_release(c.s);
  if (st) {
    dml_rt_check_report_free(r);
    return st;
  }
  *out = r;
  return DML_OK;
}
