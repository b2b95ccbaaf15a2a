/* schedule_spatial.c — the scheduler's spatial and quantized forms
 * (schedule_internal.h), each one kernel per node: Resize (and Upsample,
 * which the ONNX importer turns into Resize), GridSample, RoiAlign,
 * MaxUnpool, windows of any rank (3-D Conv, pools, MaxPool with Indices,
 * ConvInteger, QLinearConv), Pad's reflect/edge/wrap modes,
 * BatchNormalization in training mode, and the quantization ops
 * (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
 * MatMulInteger, QLinearMatMul), each one invocation per output element
 * unless said.
 *
 * Resize follows the CPU reference (runtime/cpu/cpu_resize.c) exactly: the
 * interpolation taps of every output coordinate (input index and weight,
 * up to 4 per dim) are computed here at compile time with the same double
 * formulas and stored in the kernel's constant tables (dml_kctab_t); the
 * kernel sums the products of its dims' taps (weights rounded to f32, the
 * sum in f32: results within a few ulp of the CPU's double sum). Resize
 * whose scales, sizes or roi are fed at run time (its output dims then
 * data-dependent symbols) or whose symbolic dims are resized computes the
 * same taps per invocation instead, in f64 (emit_resize_rt). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schedule_internal.h"
#include "schedule_ops_util.h"

#define WG 256

/* ---- helpers (the same as schedule.c's, on the public builders) ---- */

/* if (e == 0) body */
static dml_kstmt_t *if_zero(sched_t *s, const dml_kidx_t *e, dml_kstmt_t *body) {
  return if_lt(s, e, kc(s, 1), body);
}

static void lin_add(dml_klin_t *acc, dml_klin_t x, int64_t mul) {
  dml_ksched_lin_add(acc, x, mul);
}

/* A 1-D kernel of kind `kind` holding `node`, one invocation per element
 * of `t`; sets coord to the element's coordinates, returns the invocation
 * id (NULL when out of memory). */
static const dml_kidx_t *elem_kernel(sched_t *s, uint32_t node, dml_kernel_kind_t kind,
                                     const dml_type_t *t, dml_kernel_t **out_k,
                                     const dml_kidx_t **coord) {
  dml_kernel_t *K = dml_ksched_kernel(s, kind, node);
  if (!K) return NULL;
  dml_klin_t numel;
  numel_syms(t, &numel);
  K->local[0] = WG;
  K->items[0] = numel;
  const dml_kidx_t *gid = dml_ki_var(s->pool, DML_KVAR_GID_X);
  coords_of(s, t, gid, coord);
  *out_k = K;
  return gid;
}

/* body under the bounds check of t's element count */
static void elem_finish(sched_t *s, dml_kernel_t *K, const dml_type_t *t,
                        const dml_kidx_t *gid, dml_kstmt_t *body) {
  dml_klin_t numel;
  numel_syms(t, &numel);
  K->body = if_lt(s, gid, dml_ki_lin(s->pool, numel), body);
}

/* Reads constant input v (any float or integer dtype, rank <= 1, at most
 * max values) as doubles. NULL when it could, else why not. */
static const char *const_doubles(const sched_t *s, const dml_pkg_value_t *c, double *out,
                                 size_t max, size_t *n) {
  if (!c || c->storage != DML_PKG_STORAGE_CONST || c->type.rank > 1)
    return "its parameters must be constants";
  size_t k = c->type.rank ? (size_t)c->type.dims[0].value : 1;
  size_t w = dml_dtype_size(c->type.dtype);
  if (k > max) return "too many parameter values";
  if (!w || c->offset + w * k > s->weights_size) return "parameters outside the weights";
  for (size_t i = 0; i < k; i++) {
    const uint8_t *b = s->weights + c->offset + w * i;
    switch (c->type.dtype) {
      case DML_DTYPE_F32: {
        float f;
        memcpy(&f, b, 4);
        out[i] = f;
        break;
      }
      case DML_DTYPE_F64: memcpy(&out[i], b, 8); break;
      case DML_DTYPE_I64: {
        int64_t v;
        memcpy(&v, b, 8);
        out[i] = (double)v;
        break;
      }
      case DML_DTYPE_I32: {
        int32_t v;
        memcpy(&v, b, 4);
        out[i] = v;
        break;
      }
      default: return "parameters of an unsupported dtype";
    }
  }
  *n = k;
  return NULL;
}

/* ---- constant tables ---- */

typedef struct ctab_build {
  int32_t *i; /* grows */
  float *f;
  uint32_t ni, nf, cap_i, cap_f;
  int oom;
} ctab_build_t;

static uint32_t ctab_push_i(ctab_build_t *t, int32_t v) {
  if (t->ni == t->cap_i) {
    uint32_t cap = t->cap_i ? 2 * t->cap_i : 256;
    int32_t *p = (int32_t *)realloc(t->i, cap * sizeof *p);
    if (!p) {
      t->oom = 1;
      return 0;
    }
    t->i = p, t->cap_i = cap;
  }
  t->i[t->ni] = v;
  return t->ni++;
}

static uint32_t ctab_push_f(ctab_build_t *t, float v) {
  if (t->nf == t->cap_f) {
    uint32_t cap = t->cap_f ? 2 * t->cap_f : 256;
    float *p = (float *)realloc(t->f, cap * sizeof *p);
    if (!p) {
      t->oom = 1;
      return 0;
    }
    t->f = p, t->cap_f = cap;
  }
  t->f[t->nf] = v;
  return t->nf++;
}

/* Moves the tables into K (pool memory): table 0 the i32 entries, table
 * 1 the f32 ones (when any). 0 when out of memory. */
static int ctab_attach(sched_t *s, dml_kernel_t *K, ctab_build_t *t) {
  dml_kctab_t *c = (dml_kctab_t *)dml_kpool_alloc(s->pool, 2 * sizeof *c);
  int32_t *ci = (int32_t *)dml_kpool_alloc(s->pool, (t->ni ? t->ni : 1) * sizeof *ci);
  float *cf = (float *)dml_kpool_alloc(s->pool, (t->nf ? t->nf : 1) * sizeof *cf);
  if (!c || !ci || !cf || t->oom) return 0;
  if (t->ni) memcpy(ci, t->i, t->ni * sizeof *ci);
  if (t->nf) memcpy(cf, t->f, t->nf * sizeof *cf);
  c[0] = (dml_kctab_t){DML_KT_I32, t->ni ? t->ni : 1, NULL, ci};
  c[1] = (dml_kctab_t){DML_KT_F32, t->nf ? t->nf : 1, cf, NULL};
  K->ctabs = c;
  K->n_ctabs = t->nf ? 2 : 1;
  return 1;
}

/* ---- Resize ---- */

enum {
  CT_HALF_PIXEL,
  CT_HALF_PIXEL_SYM,
  CT_PYTORCH,
  CT_ALIGN,
  CT_ASYM,
  CT_TF_CROP,
  CT_TF_HALF_NN
};
enum { NM_ROUND_FLOOR, NM_ROUND_CEIL, NM_FLOOR, NM_CEIL };
enum { M_NEAREST, M_LINEAR, M_CUBIC };

#define TAPS 4

typedef struct resize_cfg {
  int mode, ct, nm, excl, have_scales;
  double A, extrap;
} resize_cfg_t;

/* The taps of output coordinate o of one dim (input length `in`, output
 * length `out`, scale `sc`, roi [rs, re]), as cpu_resize.c computes them:
 * idx[0] = -1 when tf_crop_and_resize extrapolates. Returns the taps the
 * coordinate needs (1 when it maps onto an input sample exactly). */
static int resize_taps(const resize_cfg_t *c, int64_t in, int64_t out, double sc,
                       double rs, double re, int64_t o, int64_t *idx, double *w) {
  double len = c->have_scales ? sc * (double)in : (double)out;
  double xo;
  switch (c->ct) {
    case CT_HALF_PIXEL: xo = ((double)o + 0.5) / sc - 0.5; break;
    case CT_HALF_PIXEL_SYM: {
      double adj = (double)out / (sc * (double)in);
      double off = (double)in / 2.0 * (1.0 - adj);
      xo = off + ((double)o + 0.5) / sc - 0.5;
      break;
    }
    case CT_PYTORCH: xo = len > 1 ? ((double)o + 0.5) / sc - 0.5 : 0.0; break;
    case CT_ALIGN: xo = len == 1 ? 0.0 : (double)o * (double)(in - 1) / (len - 1); break;
    case CT_ASYM: xo = (double)o / sc; break;
    case CT_TF_HALF_NN: xo = ((double)o + 0.5) / sc; break;
    default:
      xo = len > 1 ? rs * (double)(in - 1) +
                         (double)o * (re - rs) * (double)(in - 1) / (len - 1)
                   : 0.5 * (rs + re) * (double)(in - 1);
      break;
  }
  for (int k = 0; k < TAPS; k++) idx[k] = 0, w[k] = 0.0;
  if (c->ct == CT_TF_CROP && (xo < 0 || xo > (double)(in - 1))) {
    idx[0] = -1;
    return 1;
  }
#define CLAMP(v) ((v) < 0 ? 0 : (v) > in - 1 ? in - 1 : (v))
  if (c->mode == M_NEAREST) {
    double f = floor(xo), frac = xo - f;
    int64_t i;
    switch (c->nm) {
      case NM_ROUND_FLOOR: i = (int64_t)(frac <= 0.5 ? f : f + 1); break;
      case NM_ROUND_CEIL: i = (int64_t)(frac < 0.5 ? f : f + 1); break;
      case NM_FLOOR: i = (int64_t)f; break;
      default: i = (int64_t)ceil(xo); break;
    }
    idx[0] = CLAMP(i);
    w[0] = 1.0;
    return 1;
  }
  double f = floor(xo), t = xo - f;
  int64_t i0 = (int64_t)f;
  if (c->mode == M_LINEAR) {
    idx[0] = CLAMP(i0);
    idx[1] = CLAMP(i0 + 1);
    w[0] = 1.0 - t;
    w[1] = t;
    return t != 0.0 ? 2 : 1;
  }
  double cf[4], x, A = c->A;
  x = t + 1;
  cf[0] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
  x = t;
  cf[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
  x = 1 - t;
  cf[2] = ((A + 2) * x - (A + 3)) * x * x + 1;
  x = 2 - t;
  cf[3] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
  int64_t ids[4] = {i0, i0 - 1, i0 + 1, i0 + 2};
  double ws[4] = {cf[1], cf[0], cf[2], cf[3]}, sum = 0.0;
  for (int k = 0; k < 4; k++) {
    if (c->excl && (ids[k] < 0 || ids[k] >= in)) ws[k] = 0.0;
    sum += ws[k];
  }
  if (c->excl && sum != 0.0)
    for (int k = 0; k < 4; k++) ws[k] /= sum;
  for (int k = 0; k < 4; k++) {
    idx[k] = CLAMP(ids[k]);
    w[k] = ws[k];
  }
#undef CLAMP
  return t != 0.0 ? 4 : 1;
}

static int str_index(const char *s, const char *const *names) {
  for (int i = 0; names[i]; i++)
    if (!strcmp(s, names[i])) return i;
  return -1;
}

/* ---- Resize with run-time scales, sizes or roi ---- */

/* 1 when the constant-table form cannot take Resize node n (scales and
 * sizes of mode c): its output dims are data-dependent symbols (scales or
 * sizes fed at run time), scales or tf_crop_and_resize's roi are not
 * constants, or a symbolic dim is resized or moved (the tables hold the
 * taps of one length). Then emit_resize_rt computes the taps per
 * invocation. */
static int resize_wants_rt(const sched_t *s, const resize_cfg_t *c,
                           const dml_pkg_value_t *x, const dml_pkg_value_t *y,
                           const dml_pkg_value_t *roi, const dml_pkg_value_t *scales) {
  if (data_dependent(s, &y->type)) return 1;
  if (scales && scales->storage != DML_PKG_STORAGE_CONST &&
      !(scales->type.rank == 1 && scales->type.dims[0].sym < 0 &&
        scales->type.dims[0].value == 0))
    return 1;
  if (c->ct == CT_TF_CROP && roi && roi->storage != DML_PKG_STORAGE_CONST) return 1;
  if (x->type.rank != y->type.rank) return 0;
  for (int32_t d = 0; d < x->type.rank; d++) {
    dml_dim_t a = x->type.dims[d], b = y->type.dims[d];
    if ((a.sym >= 0 || b.sym >= 0) &&
        (a.sym != b.sym || a.value != b.value || c->ct == CT_TF_CROP))
      return 1;
  }
  return 0;
}

/* reg = v as a new register (LET into b); the register's value. */
static const dml_kval_t *rt_let(sched_t *s, dml_kblock_t *b, uint32_t *n_regs,
                                const dml_kval_t *v) {
  uint32_t r = (*n_regs)++;
  dml_kblock_add(b, assign(s, DML_KS_LET, r, v));
  return v ? dml_kv_reg_t(s->pool, r, v->dtype) : NULL;
}

/* The f64 constant v exactly (constants hold a float: v as the sum of
 * three floats, 72 significant bits, each partial sum exact), for
 * attributes such as cubic_coeff_a that the CPU reads as doubles. */
static const dml_kval_t *rt_f64(dml_kpool_t *p, double v) {
  float hi = (float)v, mid = (float)(v - (double)hi);
  float lo = (float)(v - (double)hi - (double)mid);
  const dml_kval_t *c = dml_kv_fconst(p, DML_KT_F64, hi);
  if (mid != 0.0f) c = dml_kv_fn(p, DML_KF_ADD, c, dml_kv_fconst(p, DML_KT_F64, mid));
  if (lo != 0.0f) c = dml_kv_fn(p, DML_KF_ADD, c, dml_kv_fconst(p, DML_KT_F64, lo));
  return c;
}

/* min(max(v, lo), hi) of one dtype */
static const dml_kval_t *rt_clamp(dml_kpool_t *p, const dml_kval_t *v,
                                  const dml_kval_t *lo, const dml_kval_t *hi) {
  return dml_kv_fn(p, DML_KF_MIN, dml_kv_fn(p, DML_KF_MAX, v, lo), hi);
}

/* Integral f64 coordinate f as an i64, clamped to [-4, in + 4] in f64
 * first: a conversion of a far or non-finite double is not defined on the
 * devices, and the taps' pattern of inside and outside [0, in) is the same
 * there. */
static const dml_kval_t *rt_coord_i64(dml_kpool_t *p, const dml_kval_t *f,
                                      const dml_kval_t *in_f) {
  const dml_kval_t *fc =
      rt_clamp(p, f, dml_kv_fconst(p, DML_KT_F64, -4.0f),
               dml_kv_fn(p, DML_KF_ADD, in_f, dml_kv_fconst(p, DML_KT_F64, 4.0f)));
  return dml_kv_cast(p, DML_KT_I64, fc);
}

/* The input index of tap i + off: clamped to [0, in - 1], as cpu_resize.c
 * clamps its int64 indices. */
static const dml_kval_t *rt_tap_index(dml_kpool_t *p, const dml_kval_t *i,
                                      const dml_kval_t *in_i, int64_t off) {
  if (off) i = dml_kv_fn(p, DML_KF_ADD, i, dml_kv_iconst(p, DML_KT_I64, off));
  return rt_clamp(p, i, dml_kv_zero(p, DML_KT_I64),
                  dml_kv_fn(p, DML_KF_SUB, in_i, dml_kv_one(p, DML_KT_I64)));
}

/* Resize-18's `axes`: scales, sizes and roi then give only those dims, in
 * axes' order. The GPU paths read scales and roi per input dim, so with
 * scales (non-empty) or tf_crop_and_resize's roi only the identity (every
 * dim, in order) is emitted (the CPU has the general form); sizes alone
 * decide the output dims, which the kernels read as they are. */
static int resize_axes_identity(const dml_pkg_node_t *n, int32_t rank,
                                const dml_pkg_value_t *scales, int ct) {
  size_t na = 0;
  const int64_t *a = dml_attr_ints(n->attrs, n->n_attrs, "axes", &na);
  if (!a) return 1;
  int empty_scales = !scales || (scales->type.rank == 1 && scales->type.dims[0].sym < 0 &&
                                 scales->type.dims[0].value == 0);
  if (empty_scales && ct != CT_TF_CROP) return 1;
  if (na != (size_t)rank) return 0;
  for (size_t i = 0; i < na; i++)
    if (a[i] != (int64_t)i && a[i] != (int64_t)i - rank) return 0;
  return 1;
}

/* Resize whose scales, sizes (hence output dims) or roi are fed at run
 * time, or whose symbolic dims are resized: one invocation per output
 * element computes, per dim, its coordinate and taps from the dims (the
 * run-time values of the symbols) and the scales or roi loaded from
 * memory, with cpu_resize.c's formulas in f64 (so every input index is
 * the CPU's), then sums the products of the taps' f32 weights and the
 * input in f32 over nested loops (1 tap per dim where the coordinate is
 * an input sample, else 2 for linear, 4 for cubic), skipping products of
 * weight 0 as the CPU does. */
static void emit_resize_rt(sched_t *s, uint32_t node, const resize_cfg_t *cfg,
                           const dml_pkg_value_t *x, const dml_pkg_value_t *y,
                           const dml_pkg_value_t *roi, const dml_pkg_value_t *scales) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  resize_cfg_t c = *cfg;
  int32_t r = x->type.rank;
  const char *why = NULL;
  dml_klin_t ny, nx;
  c.have_scales = scales && !(scales->type.rank == 1 && scales->type.dims[0].sym < 0 &&
                              scales->type.dims[0].value == 0);
  if (dml_attr_int(n->attrs, n->n_attrs, "antialias", 0))
    why = "antialias=1 is not emitted (the CPU runs it)";
  else if (!resize_axes_identity(n, r, scales, c.ct))
    why = "axes other than every dim in order (Resize-18)";
  else if (y->type.dtype != x->type.dtype || !typed_ok(x) || !typed_ok(y))
    why = "only f32, i64, i32, u8 and i8 (aligned) are emitted";
  else if (x->type.dtype != DML_DTYPE_F32 &&
           (c.mode != M_NEAREST || x->type.dtype == DML_DTYPE_BOOL))
    why = "only f32 is emitted for linear and cubic";
  else if (x->type.rank != y->type.rank || r < 1)
    why = "output rank differs from input";
  else if (c.have_scales &&
           (scales->type.rank != 1 || scales->type.dims[0].sym >= 0 ||
            scales->type.dims[0].value != r || !dml_dtype_is_float(scales->type.dtype) ||
            !typed_ok(scales)))
    why = "scales must have one float per input dim";
  else if (c.ct == CT_TF_CROP &&
           (!roi || roi->type.rank != 1 || roi->type.dims[0].sym >= 0 ||
            roi->type.dims[0].value != 2 * (int64_t)r ||
            !dml_dtype_is_float(roi->type.dtype) || !typed_ok(roi)))
    why = "tf_crop_and_resize needs roi with 2 floats per dim";
  else if (!numel_syms(&y->type, &ny) || !numel_syms(&x->type, &nx) ||
           dml_ksched_sym_repeats(&x->type) || dml_ksched_sym_repeats(&y->type))
    why = "dims over too many symbols, or one symbol in two dims";
  for (int32_t d = 0; !why && d < r; d++)
    if (x->type.dims[d].sym < 0 && x->type.dims[d].value == 0) why = "an empty input";
  if (why) {
    dml_ksched_unsupported(s, node, why);
    return;
  }
  dml_kernel_t *K = dml_ksched_kernel(s, DML_KK_MOVE, node);
  if (!K) return;
  K->local[0] = WG;
  K->items[0] = ny;
  const dml_kidx_t *gid = dml_ki_var(p, DML_KVAR_GID_X);
  const dml_kidx_t *co[DML_MAX_RANK], *istr[DML_MAX_RANK];
  coords_of(s, &y->type, gid, co);
  istr[r - 1] = kc(s, 1);
  for (int32_t d = r - 2; d >= 0; d--)
    istr[d] = kmul(s, istr[d + 1], dim_idx(s, x->type.dims[d + 1]));
  const int T = c.mode == M_NEAREST ? 1 : c.mode == M_LINEAR ? 2 : 4;
  dml_kblock_t b = {0};
  uint32_t nr = 0;
  const dml_kval_t *outside = NULL;
  const dml_kval_t *tap_i[DML_MAX_RANK][TAPS], *tap_w[DML_MAX_RANK][TAPS],
      *n_taps[DML_MAX_RANK];
#define F64(v) dml_kv_fconst(p, DML_KT_F64, (float)(v))
#define FN(f, a, bb) dml_kv_fn(p, DML_KF_##f, a, bb)
  for (int32_t d = 0; d < r; d++) {
    const dml_kidx_t *in_x = dim_idx(s, x->type.dims[d]);
    const dml_kval_t *in = dml_kv_idx(p, DML_KT_F64, in_x),
                     *in_i = dml_kv_idx(p, DML_KT_I64, in_x),
                     *out = dml_kv_idx(p, DML_KT_F64, dim_idx(s, y->type.dims[d]));
    /* scale: scales[d], else out / in (in >= 1: guarded below); not read
     * by tf_crop_and_resize from sizes */
    const dml_kval_t *sc =
        c.have_scales
            ? rt_let(s, &b, &nr, dml_kv_cast(p, DML_KT_F64, load_at(s, scales, kc(s, d))))
        : c.ct != CT_TF_CROP ? rt_let(s, &b, &nr, FN(DIV, out, in))
                             : NULL;
    /* length_resized: scale * in with scales, else out (cpu_resize.c) */
    const dml_kval_t *len = !c.have_scales ? out
                            : c.ct == CT_PYTORCH || c.ct == CT_ALIGN || c.ct == CT_TF_CROP
                                ? rt_let(s, &b, &nr, FN(MUL, sc, in))
                                : NULL;
    const dml_kval_t *o = rt_let(s, &b, &nr, dml_kv_idx(p, DML_KT_F64, co[d]));
    const dml_kval_t *oh = FN(ADD, o, F64(0.5)), *in1 = FN(SUB, in, F64(1));
    const dml_kval_t *xo = NULL;
    switch (c.ct) {
      case CT_HALF_PIXEL: xo = FN(SUB, FN(DIV, oh, sc), F64(0.5)); break;
      case CT_HALF_PIXEL_SYM: {
        const dml_kval_t *adj = FN(DIV, out, FN(MUL, sc, in));
        const dml_kval_t *off = FN(MUL, FN(DIV, in, F64(2)), FN(SUB, F64(1), adj));
        xo = FN(SUB, FN(ADD, off, FN(DIV, oh, sc)), F64(0.5));
        break;
      }
      case CT_PYTORCH:
        xo = dml_kv_select(p, FN(GT, len, F64(1)), FN(SUB, FN(DIV, oh, sc), F64(0.5)),
                           F64(0));
        break;
      case CT_ALIGN:
        xo = dml_kv_select(p, FN(EQ, len, F64(1)), F64(0),
                           FN(DIV, FN(MUL, o, in1), FN(SUB, len, F64(1))));
        break;
      case CT_ASYM: xo = FN(DIV, o, sc); break;
      case CT_TF_HALF_NN: xo = FN(DIV, oh, sc); break;
      default: {
        const dml_kval_t *rs = rt_let(
                             s, &b, &nr,
                             dml_kv_cast(p, DML_KT_F64, load_at(s, roi, kc(s, d)))),
                         *re = rt_let(
                             s, &b, &nr,
                             dml_kv_cast(p, DML_KT_F64, load_at(s, roi, kc(s, r + d))));
        xo = dml_kv_select(
            p, FN(GT, len, F64(1)),
            FN(ADD, FN(MUL, rs, in1),
               FN(DIV, FN(MUL, FN(MUL, o, FN(SUB, re, rs)), in1), FN(SUB, len, F64(1)))),
            FN(MUL, FN(MUL, F64(0.5), FN(ADD, rs, re)), in1));
        break;
      }
    }
    xo = rt_let(s, &b, &nr, xo);
    if (c.ct == CT_TF_CROP) {
      const dml_kval_t *od = FN(OR, FN(LT, xo, F64(0)), FN(GT, xo, in1));
      outside = outside ? FN(OR, outside, od) : od;
    }
    const dml_kval_t *f = rt_let(s, &b, &nr, FN(FLOOR, xo, NULL));
    if (c.mode == M_NEAREST) {
      const dml_kval_t *frac = FN(SUB, xo, f), *f1 = FN(ADD, f, F64(1)), *i;
      switch (c.nm) {
        case NM_ROUND_FLOOR: i = dml_kv_select(p, FN(LE, frac, F64(0.5)), f, f1); break;
        case NM_ROUND_CEIL: i = dml_kv_select(p, FN(LT, frac, F64(0.5)), f, f1); break;
        case NM_FLOOR: i = f; break;
        default: i = FN(CEIL, xo, NULL); break;
      }
      tap_i[d][0] = rt_let(s, &b, &nr, rt_tap_index(p, rt_coord_i64(p, i, in), in_i, 0));
      continue;
    }
    const dml_kval_t *t = rt_let(s, &b, &nr, FN(SUB, xo, f));
    const dml_kval_t *i0 = rt_let(s, &b, &nr, rt_coord_i64(p, f, in));
    n_taps[d] =
        rt_let(s, &b, &nr,
               dml_kv_select(p, FN(EQ, t, F64(0)), dml_kv_iconst(p, DML_KT_I32, 1),
                             dml_kv_iconst(p, DML_KT_I32, T)));
    if (c.mode == M_LINEAR) {
      tap_i[d][0] = rt_let(s, &b, &nr, rt_tap_index(p, i0, in_i, 0));
      tap_i[d][1] = rt_let(s, &b, &nr, rt_tap_index(p, i0, in_i, 1));
      tap_w[d][0] = rt_let(s, &b, &nr, dml_kv_cast(p, DML_KT_F32, FN(SUB, F64(1), t)));
      tap_w[d][1] = rt_let(s, &b, &nr, dml_kv_cast(p, DML_KT_F32, t));
      continue;
    }
    /* cubic: taps i0, i0 - 1, i0 + 1, i0 + 2 with the coefficients of
     * t, t + 1, 1 - t, 2 - t (cpu_resize.c's cubic_coeffs) */
    const dml_kval_t *A = rt_let(s, &b, &nr, rt_f64(p, c.A)), *ws[4];
    static const int64_t offs[4] = {0, -1, 1, 2};
    const dml_kval_t *xs[4] = {t, FN(ADD, t, F64(1)), FN(SUB, F64(1), t),
                               FN(SUB, F64(2), t)};
    for (int k = 0; k < 4; k++) {
      const dml_kval_t *xv = xs[k];
      if (k == 0 || k == 2) /* ((A + 2) x - (A + 3)) x x + 1 */
        ws[k] = FN(
            ADD,
            FN(MUL,
               FN(MUL, FN(SUB, FN(MUL, FN(ADD, A, F64(2)), xv), FN(ADD, A, F64(3))), xv),
               xv),
            F64(1));
      else /* ((A x - 5 A) x + 8 A) x - 4 A */
        ws[k] = FN(SUB,
                   FN(MUL,
                      FN(ADD, FN(MUL, FN(SUB, FN(MUL, A, xv), FN(MUL, F64(5), A)), xv),
                         FN(MUL, F64(8), A)),
                      xv),
                   FN(MUL, F64(4), A));
      tap_i[d][k] = rt_let(s, &b, &nr, rt_tap_index(p, i0, in_i, offs[k]));
    }
    if (c.excl) {
      /* weights of taps outside [0, in) are 0, the others divided by their
       * sum (when not 0), in the CPU's order */
      const dml_kval_t *sum = NULL;
      for (int k = 0; k < 4; k++) {
        const dml_kval_t *id = FN(ADD, i0, dml_kv_iconst(p, DML_KT_I64, offs[k]));
        ws[k] = rt_let(
            s, &b, &nr,
            dml_kv_select(
                p, FN(OR, FN(LT, id, dml_kv_zero(p, DML_KT_I64)), FN(GE, id, in_i)),
                F64(0), ws[k]));
        sum = sum ? FN(ADD, sum, ws[k]) : ws[k];
      }
      sum = rt_let(s, &b, &nr, sum);
      for (int k = 0; k < 4; k++)
        ws[k] = dml_kv_select(p, FN(EQ, sum, F64(0)), ws[k], FN(DIV, ws[k], sum));
    }
    for (int k = 0; k < 4; k++)
      tap_w[d][k] = rt_let(s, &b, &nr, dml_kv_cast(p, DML_KT_F32, ws[k]));
  }
  const dml_kval_t *res;
  if (c.mode == M_NEAREST) {
    const dml_kidx_t *off = kc(s, 0);
    for (int32_t d = 0; d < r; d++)
      off = kadd(s, off, kmul(s, dml_ki_val(p, tap_i[d][0]), istr[d]));
    res = load_at(s, x, off);
    if (outside)
      res = dml_kv_select(p, outside,
                          dml_kv_cast(p, kdt(y), dml_kv_const(p, (float)c.extrap)), res);
    dml_kblock_add(&b, store_at(s, y, gid, res));
  } else {
    /* acc = sum over the tap loops of w * x, w the product of the dims'
     * f32 weights (in the CPU's order, dim 0 first); products of weight 0
     * skipped. Loop level d keeps the partial product and the partial
     * input offset (i64) of dims 0..d in registers. */
    uint32_t acc = nr++, wr[DML_MAX_RANK], orr[DML_MAX_RANK];
    for (int32_t d = 0; d < r; d++) wr[d] = nr++, orr[d] = nr++;
    dml_kblock_add(&b, assign(s, DML_KS_LET, acc, dml_kv_const(p, 0.0f)));
    const dml_kval_t *a = dml_kv_reg_t(p, acc, DML_KT_F32);
    const dml_kval_t *w = dml_kv_reg_t(p, wr[r - 1], DML_KT_F32);
    dml_kstmt_t *inner = assign(
        s, DML_KS_SET, acc,
        dml_kv_select(
            p, FN(EQ, w, dml_kv_const(p, 0.0f)), a,
            FN(ADD, a,
               FN(MUL, w,
                  load_at(s, x,
                          dml_ki_val(p, dml_kv_reg_t(p, orr[r - 1], DML_KT_I64)))))));
    for (int32_t d = r - 1; d >= 0; d--) {
      const dml_kval_t *kv =
          dml_kv_idx(p, DML_KT_I32, dml_ki_var(p, DML_KVAR_FIRST_LOOP + d));
      const dml_kval_t *ti = tap_i[d][T - 1], *tw = tap_w[d][T - 1];
      for (int k = T - 2; k >= 0; k--) {
        const dml_kval_t *is_k = FN(EQ, kv, dml_kv_iconst(p, DML_KT_I32, k));
        ti = dml_kv_select(p, is_k, tap_i[d][k], ti);
        tw = dml_kv_select(p, is_k, tap_w[d][k], tw);
      }
      const dml_kval_t *od = FN(MUL, ti, dml_kv_idx(p, DML_KT_I64, istr[d]));
      if (d > 0) {
        tw = FN(MUL, dml_kv_reg_t(p, wr[d - 1], DML_KT_F32), tw);
        od = FN(ADD, dml_kv_reg_t(p, orr[d - 1], DML_KT_I64), od);
      }
      dml_kblock_t lb = {0};
      dml_kblock_add(&lb, assign(s, DML_KS_LET, wr[d], tw));
      dml_kblock_add(&lb, assign(s, DML_KS_LET, orr[d], od));
      dml_kblock_add(&lb, inner);
      inner = for_loop(s, DML_KVAR_FIRST_LOOP + d, dml_ki_val(p, n_taps[d]), lb.first);
    }
    dml_kblock_add(&b, inner);
    res = a;
    if (outside) res = dml_kv_select(p, outside, dml_kv_const(p, (float)c.extrap), res);
    dml_kblock_add(&b, store_at(s, y, gid, res));
  }
#undef F64
#undef FN
  K->n_regs = nr;
  dml_kstmt_t *body = b.first;
  /* an empty input of a symbolic dim: nothing to read (the CPU refuses) */
  if (nx.sym >= 0) body = if_lt(s, kc(s, 0), dml_ki_lin(p, nx), body);
  K->body = if_lt(s, gid, dml_ki_lin(p, ny), body);
  int64_t terms = 1;
  for (int32_t d = 0; d < r; d++) terms *= T;
  K->flops = ny;
  K->flops.c *= 2 * terms + 16 * r;
  K->bytes = ny;
  K->bytes.c *= (terms + 1) * (int64_t)dml_kdtype_size(kdt(y));
}

/* Resize (ONNX opset 10..19, cpu_resize.c's forms): constant scales or
 * sizes (the output dims are static but for a batch dim resized by 1),
 * constant roi for tf_crop_and_resize; f32 for every mode, the other
 * kernel dtypes for nearest. */
static void emit_resize(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0), *roi = input(s, n, 1),
                        *scales = input(s, n, 2);
  const dml_pkg_value_t *y = n->n_outputs ? val(s, n->outputs[0]) : NULL;
  static const char *const modes[] = {"nearest", "linear", "cubic", NULL};
  static const char *const cts[] = {
      "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",   "align_corners",
      "asymmetric", "tf_crop_and_resize",   "tf_half_pixel_for_nn", NULL};
  static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                    "ceil", NULL};
  resize_cfg_t c;
  c.mode = str_index(dml_attr_string(n->attrs, n->n_attrs, "mode", "nearest"), modes);
  c.ct = str_index(dml_attr_string(n->attrs, n->n_attrs, "coordinate_transformation_mode",
                                   "half_pixel"),
                   cts);
  c.nm = str_index(
      dml_attr_string(n->attrs, n->n_attrs, "nearest_mode", "round_prefer_floor"), nms);
  c.A = dml_attr_float(n->attrs, n->n_attrs, "cubic_coeff_a", -0.75);
  c.excl = dml_attr_int(n->attrs, n->n_attrs, "exclude_outside", 0) != 0;
  c.extrap = dml_attr_float(n->attrs, n->n_attrs, "extrapolation_value", 0.0);
  if (x && y && c.mode >= 0 && c.ct >= 0 && c.nm >= 0 &&
      resize_wants_rt(s, &c, x, y, roi, scales)) {
    emit_resize_rt(s, node, &c, x, y, roi, scales);
    return;
  }
  const char *why = NULL;
  double sc[DML_MAX_RANK], rv[2 * DML_MAX_RANK];
  size_t nsc = 0, nroi = 0;
  if (!x || !y)
    why = "absent input";
  else if (c.mode < 0 || c.ct < 0 || c.nm < 0)
    why = "a mode the CPU reference does not have";
  else if (dml_attr_int(n->attrs, n->n_attrs, "antialias", 0))
    why = "antialias=1 is not emitted (the CPU runs it)";
  else if (!resize_axes_identity(n, x->type.rank, scales, c.ct))
    why = "axes other than every dim in order (Resize-18)";
  else if (y->type.dtype != x->type.dtype || !typed_ok(x) || !typed_ok(y))
    why = "only f32, i64, i32, u8 and i8 (aligned) are emitted";
  else if (x->type.dtype != DML_DTYPE_F32 &&
           (c.mode != M_NEAREST || x->type.dtype == DML_DTYPE_BOOL))
    why = "only f32 is emitted for linear and cubic";
  else if (x->type.rank != y->type.rank || x->type.rank < 1)
    why = "output rank differs from input";
  else if (data_dependent(s, &y->type))
    why = "a dim computed from run-time data";
  else if (scales && (why = const_doubles(s, scales, sc, DML_MAX_RANK, &nsc)) != NULL)
    why = "scales must be a constant";
  else if (c.ct == CT_TF_CROP &&
           (!roi || const_doubles(s, roi, rv, 2 * DML_MAX_RANK, &nroi) ||
            nroi != 2 * (size_t)x->type.rank))
    why = "tf_crop_and_resize needs a constant roi with 2 values per dim";
  c.have_scales = nsc > 0;
  if (!why && c.have_scales && nsc != (size_t)x->type.rank)
    why = "scales must have one value per input dim";
  int32_t r = x ? x->type.rank : 0;
  for (int32_t d = 0; !why && d < r; d++) {
    if (c.have_scales && !(sc[d] > 0)) why = "scales must be > 0";
    int sx = x->type.dims[d].sym, sy = y->type.dims[d].sym;
    if ((sx >= 0 || sy >= 0) &&
        (sx != sy || x->type.dims[d].value != y->type.dims[d].value ||
         (c.have_scales && sc[d] != 1.0) || c.ct == CT_TF_CROP))
      why = "a symbolic dim that is resized";
    if (!why && x->type.dims[d].value == 0) why = "an empty input";
  }
  if (why) {
    dml_ksched_unsupported(s, node, why);
    return;
  }
  /* taps per dim into the tables: i32 [idx of tap k of output o] at
   * ioff[d] + o * nt[d] + k, f32 weights at the same positions of the f32
   * table (not for nearest), and for tf_crop_and_resize the "outside"
   * flag of o at xoff[d] + o. A dim whose taps are the identity (o -> o,
   * weight 1) uses its coordinate directly. */
  ctab_build_t tb = {0};
  int ident[DML_MAX_RANK], nt[DML_MAX_RANK];
  uint32_t ioff[DML_MAX_RANK] = {0}, xoff[DML_MAX_RANK] = {0};
  int any_outside = 0;
  uint64_t entries = 0;
  for (int32_t d = 0; d < r; d++) {
    int64_t in = x->type.dims[d].value, out = y->type.dims[d].value;
    double sd = c.have_scales ? sc[d] : (double)out / (double)in;
    double rs = c.ct == CT_TF_CROP ? rv[d] : 0.0,
           re = c.ct == CT_TF_CROP ? rv[r + d] : 1.0;
    if (x->type.dims[d].sym >= 0) {
      /* same symbol, scale 1 (checked above): the identity at every length
       * up to the bound, or refused (tf_half_pixel_for_nn maps o to o + 1) */
      int32_t sy = x->type.dims[d].sym;
      int64_t b = (uint32_t)sy < s->g->n_symbols ? s->g->symbols[sy].bound : 1;
      for (int64_t len = 1; len <= b && len <= 64; len = len < 4 ? len + 1 : len * 2)
        for (int64_t o = 0; o < len; o++) {
          int64_t idx[TAPS];
          double w[TAPS];
          if (resize_taps(&c, len, len, 1.0, 0.0, 1.0, o, idx, w) != 1 || idx[0] != o ||
              w[0] != 1.0) {
            /* the run-time form computes the coordinates per length */
            emit_resize_rt(s, node, &c, x, y, roi, scales);
            return;
          }
        }
      ident[d] = 1, nt[d] = 1;
      continue;
    }
    int need = 1, id = in == out;
    for (int64_t o = 0; o < out; o++) {
      int64_t idx[TAPS];
      double w[TAPS];
      int k = resize_taps(&c, in, out, sd, rs, re, o, idx, w);
      need = k > need ? k : need;
      if (k != 1 || idx[0] != o || w[0] != 1.0) id = 0;
    }
    ident[d] = id;
    nt[d] = c.mode == M_NEAREST ? 1 : need;
    if (id) continue;
    entries += (uint64_t)out * (uint64_t)nt[d] * (c.mode == M_NEAREST ? 1 : 2) +
               (c.ct == CT_TF_CROP ? (uint64_t)out : 0);
  }
  uint64_t terms = 1;
  for (int32_t d = 0; d < r; d++) terms *= (uint64_t)nt[d];
  if (entries > DML_KCTAB_MAX_ENTRIES || terms > 64) {
    dml_ksched_unsupported(s, node, "output dims too large for the constant tables");
    return;
  }
  for (int32_t d = 0; d < r && !tb.oom; d++) {
    if (ident[d]) continue;
    int64_t in = x->type.dims[d].value, out = y->type.dims[d].value;
    double sd = c.have_scales ? sc[d] : (double)out / (double)in;
    double rs = c.ct == CT_TF_CROP ? rv[d] : 0.0,
           re = c.ct == CT_TF_CROP ? rv[r + d] : 1.0;
    ioff[d] = tb.ni;
    for (int64_t o = 0; o < out; o++) {
      int64_t idx[TAPS];
      double w[TAPS];
      resize_taps(&c, in, out, sd, rs, re, o, idx, w);
      for (int k = 0; k < nt[d]; k++) {
        ctab_push_i(&tb, (int32_t)(idx[0] < 0 ? 0 : idx[k]));
        if (c.mode != M_NEAREST) ctab_push_f(&tb, idx[0] < 0 ? 0.0f : (float)w[k]);
      }
    }
    if (c.ct == CT_TF_CROP) {
      xoff[d] = tb.ni;
      any_outside = 1;
      for (int64_t o = 0; o < out; o++) {
        int64_t idx[TAPS];
        double w[TAPS];
        resize_taps(&c, in, out, sd, rs, re, o, idx, w);
        ctab_push_i(&tb, idx[0] < 0);
        if (c.mode != M_NEAREST) ctab_push_f(&tb, 0.0f); /* keeps the tables aligned */
      }
    }
  }
  dml_kernel_t *K;
  const dml_kidx_t *co[DML_MAX_RANK];
  const dml_kidx_t *gid = elem_kernel(s, node, DML_KK_MOVE, &y->type, &K, co);
  if (!gid || !ctab_attach(s, K, &tb)) {
    free(tb.i);
    free(tb.f);
    return;
  }
  free(tb.i);
  free(tb.f);
  /* strides of x */
  const dml_kidx_t *istr[DML_MAX_RANK];
  istr[r - 1] = kc(s, 1);
  for (int32_t d = r - 2; d >= 0; d--)
    istr[d] = kmul(s, istr[d + 1], dim_idx(s, x->type.dims[d + 1]));
  /* sum over the tap combinations */
  const dml_kval_t *acc = NULL;
  int kk[DML_MAX_RANK] = {0};
  for (;;) {
    const dml_kidx_t *off = kc(s, 0);
    const dml_kval_t *w = NULL;
    for (int32_t d = 0; d < r; d++) {
      const dml_kidx_t *xi;
      if (ident[d]) {
        xi = co[d];
      } else {
        const dml_kidx_t *pos =
            kadd(s, kc(s, (int64_t)ioff[d] + kk[d]), kmul(s, co[d], kc(s, nt[d])));
        xi = dml_ki_val(p, dml_kv_ctab(p, 0, DML_KT_I32, pos));
        if (c.mode != M_NEAREST) {
          const dml_kval_t *wd = dml_kv_ctab(p, 1, DML_KT_F32, pos);
          w = w ? dml_kv_fn(p, DML_KF_MUL, w, wd) : wd;
        }
      }
      off = kadd(s, off, kmul(s, xi, istr[d]));
    }
    const dml_kval_t *term = load_at(s, x, off);
    if (w) term = dml_kv_fn(p, DML_KF_MUL, w, term);
    acc = acc ? dml_kv_fn(p, DML_KF_ADD, acc, term) : term;
    int32_t d = r - 1;
    for (; d >= 0; d--) {
      if (++kk[d] < nt[d]) break;
      kk[d] = 0;
    }
    if (d < 0) break;
  }
  if (any_outside) {
    const dml_kval_t *out = NULL;
    for (int32_t d = 0; d < r; d++) {
      if (ident[d]) continue;
      const dml_kval_t *f = dml_kv_fn(
          p, DML_KF_GT, dml_kv_ctab(p, 0, DML_KT_I32, kadd(s, kc(s, xoff[d]), co[d])),
          dml_kv_zero(p, DML_KT_I32));
      out = out ? dml_kv_fn(p, DML_KF_OR, out, f) : f;
    }
    if (out) acc = dml_kv_select(p, out, dml_kv_const(p, (float)c.extrap), acc);
  }
  elem_finish(s, K, &y->type, gid, store_at(s, y, gid, acc));
  dml_klin_t l = {0, -1, 0, 0};
  numel_syms(&y->type, &l);
  lin_add(&K->flops, l, 2 * (int64_t)terms);
  lin_add(&K->bytes, l, (int64_t)(terms + 1) * dml_kdtype_size(kdt(y)));
}

/* ---- quantized values (cpu_quant.c) ---- */

static int is_q8(const dml_pkg_value_t *v) {
  return v && (v->type.dtype == DML_DTYPE_U8 || v->type.dtype == DML_DTYPE_I8) &&
         typed_ok(v);
}

static int is_f32(const dml_pkg_value_t *v) {
  return v && v->type.dtype == DML_DTYPE_F32 && typed_ok(v);
}

static int64_t numel_static(const dml_pkg_value_t *v) {
  int64_t n = 1;
  for (int32_t d = 0; d < v->type.rank; d++) {
    if (v->type.dims[d].sym >= 0) return -1;
    n *= v->type.dims[d].value;
  }
  return n;
}

/* f32 v (an integer value or NaN) saturated to t's range (NaN to the
 * low end, as the CPU's stq) and converted to t (u8 or i8). */
static const dml_kval_t *sat_q(dml_kpool_t *p, const dml_kval_t *v, dml_kdtype_t t) {
  float lo = t == DML_KT_U8 ? 0.0f : -128.0f, hi = t == DML_KT_U8 ? 255.0f : 127.0f;
  v = dml_kv_select(p, dml_kv_fn(p, DML_KF_GE, v, dml_kv_const(p, lo)), v,
                    dml_kv_const(p, lo));
  v = dml_kv_fn(p, DML_KF_MIN, v, dml_kv_const(p, hi));
  return dml_kv_cast(p, t, v);
}

/* Index of the per-tensor or per-axis parameter `prm` (scale or zero
 * point) of x's element at coordinates co (cpu_quant.c's q_axis), or NULL
 * with *why set. */
static const dml_kidx_t *q_param(sched_t *s, const dml_pkg_node_t *n,
                                 const dml_pkg_value_t *x, const dml_pkg_value_t *prm,
                                 const dml_kidx_t *const *co, const char **why) {
  int64_t ns = numel_static(prm);
  if (ns < 0) {
    *why = "symbolic scale or zero point";
    return NULL;
  }
  if (prm->type.rank == 0 || ns == 1) return kc(s, 0);
  if (prm->type.rank != 1) {
    *why = "scale must be a scalar or 1-D (per axis)";
    return NULL;
  }
  int64_t ax = dml_attr_int(n->attrs, n->n_attrs, "axis", 1);
  if (ax < 0) ax += x->type.rank;
  if (ax < 0 || ax >= x->type.rank || x->type.dims[ax].sym >= 0 ||
      x->type.dims[ax].value != ns) {
    *why = "the scale's length does not match the axis";
    return NULL;
  }
  return co[ax];
}

/* ---- windows of any rank (Conv, ConvTranspose, MaxPool, AveragePool) ---- */

#define SP 3 /* spatial dims at most (NCDHW) */

typedef struct nwin {
  const dml_pkg_value_t *x, *w, *b, *y, *ind;
  /* ConvInteger (quant 1), QLinearConv (2): zero points, scales, i32 bias */
  const dml_pkg_value_t *zx, *zw, *xs, *ws, *ys, *zy, *bq;
  int r, transpose, is_max, incl, quant;
  int64_t C, M, group, storage_order;
  int64_t in[SP], out[SP], k[SP], s[SP], d[SP], pb[SP], pe[SP];
} nwin_t;

/* Window geometry of Conv/ConvTranspose (cpu_conv.c's conv_geo) and
 * MaxPool/AveragePool (cpu_pool.c's pool_geo), the output dims taken from
 * the graph (inference checked them). NULL when the node has a kernel,
 * else why not. */
static const char *nwin_reject(sched_t *s, const dml_pkg_node_t *n, nwin_t *o) {
  memset(o, 0, sizeof *o);
  o->quant = n->op == DML_OP_CONV_INTEGER ? 1 : n->op == DML_OP_QLINEAR_CONV ? 2 : 0;
  int conv = n->op == DML_OP_CONV || n->op == DML_OP_CONV_TRANSPOSE || o->quant;
  o->transpose = n->op == DML_OP_CONV_TRANSPOSE;
  o->is_max = n->op == DML_OP_MAX_POOL;
  o->x = input(s, n, 0);
  o->y = n->n_outputs ? val(s, n->outputs[0]) : NULL;
  o->ind = n->n_outputs > 1 ? val(s, n->outputs[1]) : NULL;
  if (o->quant == 1) {
    o->w = input(s, n, 1), o->zx = input(s, n, 2), o->zw = input(s, n, 3);
  } else if (o->quant == 2) {
    o->xs = input(s, n, 1), o->zx = input(s, n, 2), o->w = input(s, n, 3);
    o->ws = input(s, n, 4), o->zw = input(s, n, 5), o->ys = input(s, n, 6);
    o->zy = input(s, n, 7), o->bq = input(s, n, 8);
    if (!o->xs || !o->zx || !o->ws || !o->zw || !o->ys || !o->zy) return "absent input";
  } else if (conv) {
    o->w = input(s, n, 1), o->b = input(s, n, 2);
  }
  if (!o->x || !o->y || (conv && !o->w)) return "absent input";
  int32_t rank = o->x->type.rank;
  if (rank < 3 || rank > 2 + SP || o->y->type.rank != rank)
    return "only 1-D, 2-D and 3-D windows are emitted";
  o->r = rank - 2;
  if (o->quant) {
    if (!is_q8(o->x) || !is_q8(o->w) ||
        (o->zx && (o->zx->type.dtype != o->x->type.dtype || !typed_ok(o->zx))) ||
        (o->zw && (o->zw->type.dtype != o->w->type.dtype || !typed_ok(o->zw))))
      return "x and w must be u8 or i8, zero points of their dtype";
    if (o->quant == 1
            ? (o->y->type.dtype != DML_DTYPE_I32 || !typed_ok(o->y))
            : (!is_q8(o->y) || o->zy->type.dtype != o->y->type.dtype ||
               !typed_ok(o->zy) || !is_f32(o->xs) || !is_f32(o->ws) || !is_f32(o->ys)))
      return o->quant == 1 ? "y must be i32"
                           : "y must be of y_zero_point's dtype, scales f32";
    if (o->bq && (o->bq->type.dtype != DML_DTYPE_I32 || !typed_ok(o->bq)))
      return "B must be i32";
    int64_t M = o->y->type.dims[1].value;
    const dml_pkg_value_t *one[4] = {o->zx, o->xs, o->ys, o->zy},
                          *perm[2] = {o->zw, o->ws};
    for (int i = 0; i < 4; i++)
      if (one[i] && numel_static(one[i]) != 1)
        return "x's and y's scales and zero points must be scalars";
    for (int i = 0; i < 2; i++)
      if (perm[i] && numel_static(perm[i]) != 1 && numel_static(perm[i]) != M)
        return "w's scale and zero point must be scalars or [M]";
    if (o->bq && numel_static(o->bq) != M) return "B must be [M]";
  } else {
    if (!typed_ok(o->x) || !typed_ok(o->y) || o->y->type.dtype != o->x->type.dtype)
      return "only f32, i64, i32, u8 and i8 (aligned) are emitted";
    if (o->x->type.dtype != DML_DTYPE_F32 &&
        (!o->is_max || !dml_dtype_is_int(o->x->type.dtype)))
      return "only f32 is emitted (and the integer dtypes for MaxPool)";
    if ((o->w && (o->w->type.dtype != DML_DTYPE_F32 || !typed_ok(o->w))) ||
        (o->b && (o->b->type.dtype != DML_DTYPE_F32 || !typed_ok(o->b))))
      return "only f32 weights and bias are emitted";
  }
  if (o->ind && (o->ind->type.dtype != DML_DTYPE_I64 || !typed_ok(o->ind) ||
                 o->ind->type.rank != rank))
    return "Indices must be i64 of Y's shape";
  const dml_dim_t *xd = o->x->type.dims, *yd = o->y->type.dims;
  for (int32_t i = 1; i < rank; i++)
    if (xd[i].sym >= 0 || yd[i].sym >= 0) return "symbolic channel or spatial dim";
  if (xd[0].sym != yd[0].sym || xd[0].value != yd[0].value) return "batch mismatch";
  if (o->ind && !(o->ind->type.dims[0].sym == yd[0].sym &&
                  o->ind->type.dims[0].value == yd[0].value))
    return "Indices must be i64 of Y's shape";
  o->C = xd[1].value, o->M = yd[1].value;
  o->group = conv ? dml_attr_int(n->attrs, n->n_attrs, "group", 1) : 1;
  size_t nks = 0, ns = 0, nd = 0, np = 0, nop = 0;
  const int64_t *ks = dml_attr_ints(n->attrs, n->n_attrs, "kernel_shape", &nks);
  const int64_t *st = dml_attr_ints(n->attrs, n->n_attrs, "strides", &ns);
  const int64_t *dl = dml_attr_ints(n->attrs, n->n_attrs, "dilations", &nd);
  const int64_t *pads = dml_attr_ints(n->attrs, n->n_attrs, "pads", &np);
  const int64_t *opad = dml_attr_ints(n->attrs, n->n_attrs, "output_padding", &nop);
  size_t r = (size_t)o->r;
  if ((ks && nks != r) || (st && ns != r) || (dl && nd != r) || (pads && np != 2 * r) ||
      (opad && nop != r))
    return "kernel_shape/strides/dilations/pads have the wrong length";
  if (conv) {
    const dml_dim_t *wd = o->w->type.dims;
    if (o->w->type.rank != rank) return "weights of another rank";
    for (int32_t i = 0; i < rank; i++)
      if (wd[i].sym >= 0) return "symbolic weight dims";
    if (o->group < 1 || o->C % o->group || o->M % o->group) return "bad group";
    if (o->transpose ? (wd[0].value != o->C || wd[1].value * o->group != o->M)
                     : (wd[0].value != o->M || wd[1].value * o->group != o->C))
      return "weights do not match the channels and group";
    if (o->b && (o->b->type.rank != 1 || o->b->type.dims[0].value != o->M))
      return "bias must be [M]";
  } else {
    if (!ks) return "kernel_shape is missing";
    if (o->M != o->C) return "channel mismatch";
    o->storage_order = dml_attr_int(n->attrs, n->n_attrs, "storage_order", 0);
    if (o->storage_order != 0 && o->storage_order != 1)
      return "storage_order must be 0 or 1";
    o->incl = !o->is_max && dml_attr_int(n->attrs, n->n_attrs, "count_include_pad", 0);
  }
  const char *ap = dml_attr_string(n->attrs, n->n_attrs, "auto_pad", "NOTSET");
  int su = !strcmp(ap, "SAME_UPPER"), sl = !strcmp(ap, "SAME_LOWER"),
      valid = !strcmp(ap, "VALID");
  if (!su && !sl && !valid && strcmp(ap, "NOTSET")) return "unknown auto_pad";
  int oshape = dml_attr_find(n->attrs, n->n_attrs, "output_shape") != NULL;
  for (int i = 0; i < o->r; i++) {
    o->in[i] = xd[2 + i].value, o->out[i] = yd[2 + i].value;
    o->k[i] = conv ? o->w->type.dims[2 + i].value : ks[i];
    if (conv && ks && ks[i] != o->k[i]) return "kernel_shape differs from W";
    o->s[i] = st ? st[i] : 1, o->d[i] = dl ? dl[i] : 1;
    if (o->k[i] < 1 || o->s[i] < 1 || o->d[i] < 1)
      return "kernel_shape, strides and dilations must be >= 1";
    int64_t ek = (o->k[i] - 1) * o->d[i] + 1;
    if (o->transpose) {
      int64_t full = o->s[i] * (o->in[i] - 1) + (opad ? opad[i] : 0) + ek;
      if (pads && !su && !sl && !oshape) {
        o->pb[i] = pads[i];
      } else if (!valid) {
        int64_t total = full - o->out[i];
        if (total < 0) total = 0;
        o->pb[i] = su ? total / 2 : total - total / 2;
      }
    } else if (su || sl) {
      int64_t e = (o->in[i] + o->s[i] - 1) / o->s[i];
      int64_t total = (e - 1) * o->s[i] + ek - o->in[i];
      if (total < 0) total = 0;
      o->pb[i] = su ? total / 2 : total - total / 2;
      o->pe[i] = total - o->pb[i];
    } else if (!valid) {
      o->pb[i] = pads ? pads[i] : 0;
      o->pe[i] = pads ? pads[r + i] : 0;
    }
    if (o->pb[i] < 0 || o->pe[i] < 0) return "negative pads";
  }
  return NULL;
}

/* One Conv, ConvTranspose, MaxPool (with Indices) or AveragePool kernel:
 * one invocation per output element, counted loops over the input
 * channels of its group (convolutions) and the window positions, each
 * position checked against the input's bounds (the padding never read;
 * Conv's padded taps add 0 * w, as the CPU's).
 * Sums in f32 in the CPU's order of window positions; MaxPool keeps the
 * first maximum (strictly greater replaces) as the CPU does, its Indices
 * the flat offset into X (spatial offset row-major, or column-major for
 * storage_order 1), 0 for a window wholly in the padding. */
static void emit_nwin(sched_t *s, uint32_t node, const nwin_t *o) {
  dml_kpool_t *p = s->pool;
  int conv = o->w != NULL, r = o->r;
  dml_kernel_t *K;
  const dml_kidx_t *co[DML_MAX_RANK];
  const dml_kidx_t *gid =
      elem_kernel(s, node, conv ? DML_KK_CONV : DML_KK_POOL, &o->y->type, &K, co);
  if (!gid) return;
  dml_kdtype_t t = kdt(o->y);
  int64_t in_sz = 1, k_sz = 1, iters = 1, nest = 1;
  for (int i = 0; i < r; i++) in_sz *= o->in[i], k_sz *= o->k[i];
  /* registers: 0 acc, 1 count (excl), 2 count (incl), 3 best index, 4 cond,
   * 5 the tap's input value (Conv; 0 on a padded tap) */
  K->n_regs = 6;
  /* Conv (float) adds 0 * w on a padded tap, as the CPU's zero padding
   * (and ONNX Runtime's im2col): NaN for an infinite or NaN weight */
  int zpad = conv && !o->transpose && !o->quant;
  int32_t v = DML_KVAR_FIRST_LOOP, vc = v + SP; /* window vars v .. v+r-1, channel vc */
  int64_t cg = o->C / o->group, mg = o->M / o->group;
  /* a convolution's loop iterations per output element (channels, then
   * the window's loops); past DML_KLOOP_MAX a workgroup per output
   * element, invocation t taking channels t, t + 256, ..., a tree sum */
  for (int i = 0; i < r; i++) nest *= o->k[i], iters += nest;
  int coop = conv && cg * iters > DML_KLOOP_MAX;
  const dml_kidx_t *cv = dml_ki_var(p, vc);
  if (coop) {
    dml_klin_t rows;
    numel_syms(&o->y->type, &rows);
    gid = dml_krow_setup(s, K, rows, vc + 1, 0);
    coords_of(s, &o->y->type, gid, co);
    cv = kadd(s, kmul(s, cv, kc(s, DML_KROW_WG)), dml_ki_var(p, DML_KVAR_LID_X));
  } else {
    K->local[0] = 64;
  }
  /* the input channel: convolutions loop over their group's, pools read
   * their own */
  const dml_kidx_t *ch = co[1];
  if (conv)
    ch = kadd(s, kmul(s, dml_ki_bin(p, DML_KI_DIV, co[1], kc(s, mg)), kc(s, cg)), cv);
  const dml_kidx_t *plane =
      kmul(s, kadd(s, kmul(s, co[0], kc(s, o->C)), ch), kc(s, in_sz));
  /* per spatial dim: the input coordinate and its bounds test */
  const dml_kidx_t *xi[SP], *lhs[SP], *lo[SP], *hi[SP], *kv[SP];
  for (int i = 0; i < r; i++) {
    kv[i] = dml_ki_var(p, v + i);
    const dml_kidx_t *oc = co[2 + i];
    if (!o->transpose) {
      /* t = o*s + k*d lies in [pb, pb + in): x at t - pb */
      lhs[i] = kadd(s, kmul(s, oc, kc(s, o->s[i])), kmul(s, kv[i], kc(s, o->d[i])));
      lo[i] = kc(s, o->pb[i]);
      hi[i] = kc(s, o->pb[i] + o->in[i]);
      xi[i] = dml_ki_bin(p, DML_KI_SUB, lhs[i], lo[i]);
    } else {
      /* o + pb = i*s + k*d: t = o + pb + (k_max - k)*d - (k_max*d) ... as
       * unsigned: u = o + pb + (K-1-k)*d lies in [(K-1)*d, (K-1)*d + in*s)
       * and (u - (K-1)*d) % s == 0 (checked below); x at that / s */
      int64_t span = (o->k[i] - 1) * o->d[i];
      const dml_kidx_t *u = kadd(
          s, kadd(s, oc, kc(s, o->pb[i])),
          kmul(s, dml_ki_bin(p, DML_KI_SUB, kc(s, o->k[i] - 1), kv[i]), kc(s, o->d[i])));
      lhs[i] = u;
      lo[i] = kc(s, span);
      hi[i] = kc(s, span + o->in[i] * o->s[i]);
      xi[i] =
          dml_ki_bin(p, DML_KI_DIV, dml_ki_bin(p, DML_KI_SUB, u, lo[i]), kc(s, o->s[i]));
    }
  }
  const dml_kidx_t *off = kc(s, 0), *cm = kc(s, 0), *cmul = kc(s, 1);
  for (int i = 0; i < r; i++) {
    off = kadd(s, kmul(s, off, kc(s, o->in[i])), xi[i]);
    cm = kadd(s, cm, kmul(s, xi[i], cmul));
    cmul = kmul(s, cmul, kc(s, o->in[i]));
  }
  const dml_kval_t *xv = load_at(s, o->x, kadd(s, plane, off));
  dml_kblock_t in_body = {0};
  dml_kstmt_t *tap_sum = NULL; /* zpad: acc += xr * w at every position */
  if (conv) {
    /* w[m, c, k...] (Conv) or w[c, m % mg, k...] (ConvTranspose) */
    const dml_kidx_t *wi =
        o->transpose
            ? kadd(s, kmul(s, ch, kc(s, mg)), dml_ki_bin(p, DML_KI_MOD, co[1], kc(s, mg)))
            : kadd(s, kmul(s, co[1], kc(s, cg)), cv);
    for (int i = 0; i < r; i++) wi = kadd(s, kmul(s, wi, kc(s, o->k[i])), kv[i]);
    const dml_kval_t *wv = load_at(s, o->w, wi), *prod;
    if (o->quant) {
      const dml_kval_t *xq = dml_kv_cast(p, DML_KT_I32, xv),
                       *wq = dml_kv_cast(p, DML_KT_I32, wv);
      if (o->zx)
        xq = dml_kv_fn(p, DML_KF_SUB, xq,
                       dml_kv_cast(p, DML_KT_I32, load_at(s, o->zx, kc(s, 0))));
      if (o->zw)
        wq = dml_kv_fn(
            p, DML_KF_SUB, wq,
            dml_kv_cast(p, DML_KT_I32,
                        load_at(s, o->zw, numel_static(o->zw) == 1 ? kc(s, 0) : co[1])));
      prod = dml_kv_fn(p, DML_KF_MUL, xq, wq);
    } else {
      prod = dml_kv_fn(p, DML_KF_MUL, zpad ? dml_kv_reg_t(p, 5, t) : xv, wv);
    }
    dml_kstmt_t *sum = assign(
        s, DML_KS_SET, 0,
        dml_kv_fn(p, DML_KF_ADD, dml_kv_reg_t(p, 0, o->quant ? DML_KT_I32 : t), prod));
    if (zpad) { /* xr = x in the bounds; the sum after them (below) */
      dml_kblock_add(&in_body, assign(s, DML_KS_SET, 5, xv));
      tap_sum = sum;
    } else {
      dml_kblock_add(&in_body, sum);
    }
  } else if (o->is_max) {
    const dml_kval_t *acc = dml_kv_reg_t(p, 0, t), *best = dml_kv_reg_t(p, 3, DML_KT_I64);
    const dml_kval_t *cond =
        dml_kv_fn(p, DML_KF_OR, dml_kv_fn(p, DML_KF_GT, xv, acc),
                  dml_kv_fn(p, DML_KF_LT, best, dml_kv_zero(p, DML_KT_I64)));
    /* NaN propagates, the first NaN of the window wins (as on the CPU) */
    if (dml_kdtype_is_float(t))
      cond = dml_kv_fn(
          p, DML_KF_OR, cond,
          dml_kv_fn(p, DML_KF_AND,
                    dml_kv_fn(p, DML_KF_NOT, dml_kv_fn(p, DML_KF_EQ, xv, xv), NULL),
                    dml_kv_fn(p, DML_KF_EQ, acc, acc)));
    dml_kblock_add(&in_body, assign(s, DML_KS_LET, 4, cond));
    const dml_kval_t *c4 = dml_kv_reg_t(p, 4, DML_KT_BOOL);
    dml_kblock_add(&in_body, assign(s, DML_KS_SET, 0, dml_kv_select(p, c4, xv, acc)));
    if (o->ind)
      dml_kblock_add(
          &in_body,
          assign(
              s, DML_KS_SET, 3,
              dml_kv_select(p, c4, dml_kv_idx(p, DML_KT_I64, o->storage_order ? cm : off),
                            best)));
    else
      dml_kblock_add(&in_body,
                     assign(s, DML_KS_SET, 3,
                            dml_kv_select(p, c4, dml_kv_zero(p, DML_KT_I64), best)));
  } else {
    dml_kblock_add(&in_body, assign(s, DML_KS_SET, 0,
                                    dml_kv_fn(p, DML_KF_ADD, dml_kv_reg(p, 0), xv)));
    dml_kblock_add(&in_body, assign(s, DML_KS_SET, 1,
                                    dml_kv_fn(p, DML_KF_ADD, dml_kv_reg(p, 1),
                                              dml_kv_const(p, 1.0f))));
  }
  dml_kstmt_t *inner = in_body.first;
  for (int i = r - 1; i >= 0; i--) {
    if (o->transpose) /* the stride divides u - (K-1)*d */
      inner = if_zero(s,
                      dml_ki_bin(p, DML_KI_MOD, dml_ki_bin(p, DML_KI_SUB, lhs[i], lo[i]),
                                 kc(s, o->s[i])),
                      inner);
    inner = if_in(s, lhs[i], lo[i], hi[i], inner);
  }
  dml_kblock_t pos = {0};
  if (zpad) dml_kblock_add(&pos, assign(s, DML_KS_SET, 5, dml_kv_zero(p, t)));
  dml_kblock_add(&pos, inner);
  dml_kblock_add(&pos, tap_sum);
  if (o->incl) { /* positions inside the padded input */
    dml_kstmt_t *cnt =
        assign(s, DML_KS_SET, 2,
               dml_kv_fn(p, DML_KF_ADD, dml_kv_reg(p, 2), dml_kv_const(p, 1.0f)));
    for (int i = r - 1; i >= 0; i--)
      cnt = if_in(s, lhs[i], NULL, kc(s, o->pb[i] + o->in[i] + o->pe[i]), cnt);
    dml_kblock_add(&pos, cnt);
  }
  dml_kstmt_t *loops = pos.first;
  for (int i = r - 1; i >= 0; i--) loops = for_loop(s, v + i, kc(s, o->k[i]), loops);
  if (coop)
    loops = for_loop(s, vc, kc(s, (cg + DML_KROW_WG - 1) / DML_KROW_WG),
                     cg % DML_KROW_WG ? if_lt(s, cv, kc(s, cg), loops) : loops);
  else if (conv)
    loops = for_loop(s, vc, kc(s, cg), loops);
  dml_kblock_t body = {0}, tail = {0};
  const dml_kval_t *init =
      o->quant    ? dml_kv_zero(p, DML_KT_I32)
      : o->is_max ? (t == DML_KT_F32 ? dml_kv_const(p, -INFINITY) : dml_kv_zero(p, t))
                  : dml_kv_const(p, 0.0f);
  dml_kblock_add(&body, assign(s, DML_KS_LET, 0, init));
  dml_kblock_add(&body, assign(s, DML_KS_LET, 1, dml_kv_const(p, 0.0f)));
  dml_kblock_add(&body, assign(s, DML_KS_LET, 2, dml_kv_const(p, 0.0f)));
  dml_kblock_add(&body, assign(s, DML_KS_LET, 3, dml_kv_iconst(p, DML_KT_I64, -1)));
  dml_kblock_add(&body, assign(s, DML_KS_LET, 4, dml_kv_zero(p, DML_KT_BOOL)));
  dml_kblock_add(&body, assign(s, DML_KS_LET, 5, dml_kv_zero(p, zpad ? t : DML_KT_F32)));
  dml_kblock_add(&body, loops);
  const dml_kdtype_t at = o->quant ? DML_KT_I32 : t;
  if (coop) {
    K->tile_dtype[0] = at;
    dml_krow_combine(s, &body, DML_KF_ADD, at, 0, 0);
  }
  const dml_kval_t *res = dml_kv_reg_t(p, 0, at);
  if (conv && o->b) res = dml_kv_fn(p, DML_KF_ADD, res, load_at(s, o->b, co[1]));
  if (o->quant == 2) {
    /* round_even((acc + B) * x_scale * w_scale / y_scale) + y_zero_point,
     * saturated (the factor in f32 where the CPU has double) */
    if (o->bq) res = dml_kv_fn(p, DML_KF_ADD, res, load_at(s, o->bq, co[1]));
    const dml_kval_t *f = dml_kv_fn(
        p, DML_KF_DIV,
        dml_kv_fn(p, DML_KF_MUL, load_at(s, o->xs, kc(s, 0)),
                  load_at(s, o->ws, numel_static(o->ws) == 1 ? kc(s, 0) : co[1])),
        load_at(s, o->ys, kc(s, 0)));
    res = dml_kv_fn(p, DML_KF_ADD,
                    dml_kv_round_even(
                        p, dml_kv_fn(p, DML_KF_MUL, dml_kv_cast(p, DML_KT_F32, res), f)),
                    dml_kv_cast(p, DML_KT_F32, load_at(s, o->zy, kc(s, 0))));
    res = sat_q(p, res, t);
  }
  if (!conv && !o->is_max) {
    /* the CPU divides by the count (0 for an empty window gives 0) */
    const dml_kval_t *n = dml_kv_reg(p, o->incl ? 2 : 1);
    res = dml_kv_select(p, dml_kv_fn(p, DML_KF_GT, n, dml_kv_const(p, 0.0f)),
                        dml_kv_fn(p, DML_KF_DIV, res, n), dml_kv_const(p, 0.0f));
  }
  dml_kblock_add(&tail, store_at(s, o->y, gid, res));
  if (o->ind) {
    const dml_kval_t *best = dml_kv_reg_t(p, 3, DML_KT_I64);
    const dml_kval_t *sp =
        dml_kv_select(p, dml_kv_fn(p, DML_KF_LT, best, dml_kv_zero(p, DML_KT_I64)),
                      dml_kv_zero(p, DML_KT_I64), best);
    const dml_kval_t *base =
        dml_kv_idx(p, DML_KT_I64,
                   kmul(s, kadd(s, kmul(s, co[0], kc(s, o->C)), co[1]), kc(s, in_sz)));
    dml_kblock_add(&tail, store_at(s, o->ind, gid, dml_kv_fn(p, DML_KF_ADD, base, sp)));
  }
  if (coop) {
    dml_klin_t rows;
    numel_syms(&o->y->type, &rows);
    dml_kblock_add(&body, if_lt(s, dml_ki_var(p, DML_KVAR_LID_X), kc(s, 1), tail.first));
    K->body = dml_krow_finish(s, rows, vc + 1, body.first);
  } else {
    if (body.last) body.last->next = tail.first;
    elem_finish(s, K, &o->y->type, gid, body.first);
  }
  dml_klin_t l = {0, -1, 0, 0};
  numel_syms(&o->y->type, &l);
  lin_add(&K->flops, l, (conv ? 2 * cg : 1) * k_sz);
  dml_klin_t xl = {0, -1, 0, 0};
  if (numel_syms(&o->x->type, &xl)) lin_add(&K->bytes, xl, dml_kdtype_size(t));
  lin_add(&K->bytes, l, dml_kdtype_size(t) + (o->ind ? 8 : 0));
  if (conv) lin_add(&K->bytes, (dml_klin_t){o->M * cg * k_sz, -1, 0, 0}, 4);
}

static void emit_window(sched_t *s, uint32_t node) {
  nwin_t o;
  const char *why = nwin_reject(s, &s->fn->nodes[node], &o);
  if (why)
    dml_ksched_unsupported(s, node, why);
  else
    emit_nwin(s, node, &o);
}

/* ---- Pad's reflect, edge and wrap modes ---- */

/* Pad (ONNX opset 2..19) in mode reflect, edge or wrap with constant pads
 * (input 1, or the attribute before opset 11): each padded dim maps the
 * output coordinate to an input one through a constant table computed as
 * cpu_shape.c's Pad does (negative pads crop); dims without pads (the
 * batch dim) read their own coordinate. Every kernel dtype. */
static void emit_pad_mode(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0);
  const dml_pkg_value_t *y = n->n_outputs ? val(s, n->outputs[0]) : NULL;
  const char *mode = dml_attr_string(n->attrs, n->n_attrs, "mode", "constant");
  int m = !strcmp(mode, "reflect") ? 1
          : !strcmp(mode, "edge")  ? 2
          : !strcmp(mode, "wrap")  ? 3
                                   : 0;
  double pv[2 * DML_MAX_RANK];
  int64_t pads[2 * DML_MAX_RANK];
  size_t np = 0;
  const char *why = NULL;
  if (!x || !y)
    why = "absent input";
  else if (!m)
    why = "a mode the CPU reference does not have";
  else if (y->type.dtype != x->type.dtype || !typed_ok(x) || !typed_ok(y))
    why = "only f32, i64, i32, bool, u8 and i8 (aligned) are emitted";
  else if (data_dependent(s, &y->type))
    why = "a dim computed from run-time data";
  else if (n->n_inputs > 3 && n->inputs[3] != DML_PKG_NO_VALUE)
    why = "the axes input";
  else if (n->n_inputs > 1) {
    why = const_doubles(s, input(s, n, 1), pv, 2 * DML_MAX_RANK, &np);
    for (size_t i = 0; !why && i < np; i++) pads[i] = (int64_t)pv[i];
  } else {
    const int64_t *a = dml_attr_ints(n->attrs, n->n_attrs, "pads", &np);
    if (!a || np > 2 * DML_MAX_RANK)
      why = "pads must be given";
    else
      memcpy(pads, a, np * sizeof *a);
  }
  int32_t r = x ? x->type.rank : 0;
  if (!why && np != 2 * (size_t)r) why = "pads do not match the rank";
  uint64_t entries = 0;
  for (int32_t d = 0; !why && d < r; d++) {
    int padded = pads[d] || pads[r + d];
    if (padded && (x->type.dims[d].sym >= 0 || y->type.dims[d].sym >= 0))
      why = "pads on a symbolic dim";
    else if (padded && x->type.dims[d].value == 0)
      why = "cannot pad an empty dim";
    else if (padded)
      entries += (uint64_t)y->type.dims[d].value;
  }
  if (!why && entries > DML_KCTAB_MAX_ENTRIES)
    why = "output dims too large for the constant tables";
  if (why) {
    dml_ksched_unsupported(s, node, why);
    return;
  }
  ctab_build_t tb = {0};
  uint32_t off[DML_MAX_RANK] = {0};
  for (int32_t d = 0; d < r; d++) {
    if (!pads[d] && !pads[r + d]) continue;
    off[d] = tb.ni;
    int64_t nn = x->type.dims[d].value;
    for (int64_t o = 0; o < y->type.dims[d].value; o++) {
      int64_t i = o - pads[d];
      if (i < 0 || i >= nn) {
        if (m == 2) {
          i = i < 0 ? 0 : nn - 1;
        } else if (m == 3) {
          i = ((i % nn) + nn) % nn;
        } else if (nn == 1) {
          i = 0;
        } else {
          int64_t per = 2 * (nn - 1);
          i = ((i % per) + per) % per;
          if (i >= nn) i = per - i;
        }
      }
      ctab_push_i(&tb, (int32_t)i);
    }
  }
  dml_kernel_t *K;
  const dml_kidx_t *co[DML_MAX_RANK], *xc[DML_MAX_RANK];
  const dml_kidx_t *gid = elem_kernel(s, node, DML_KK_MOVE, &y->type, &K, co);
  if (!gid || !ctab_attach(s, K, &tb)) {
    free(tb.i);
    free(tb.f);
    return;
  }
  free(tb.i);
  free(tb.f);
  for (int32_t d = 0; d < r; d++)
    xc[d] =
        !pads[d] && !pads[r + d]
            ? co[d]
            : dml_ki_val(p, dml_kv_ctab(p, 0, DML_KT_I32, kadd(s, kc(s, off[d]), co[d])));
  const dml_kidx_t *xi = kc(s, 0);
  for (int32_t d = 0; d < r; d++)
    xi = kadd(s, kmul(s, xi, dim_idx(s, x->type.dims[d])), xc[d]);
  elem_finish(s, K, &y->type, gid, store_at(s, y, gid, load_at(s, x, xi)));
  dml_klin_t l = {0, -1, 0, 0};
  numel_syms(&y->type, &l);
  lin_add(&K->bytes, l, 2 * (int64_t)dml_kdtype_size(kdt(y)));
}

/* ---- quantization (cpu_quant.c) ---- */

/* QuantizeLinear (f32 x: y = saturate(round_even(x / y_scale) +
 * y_zero_point), y of the zero point's dtype) and DequantizeLinear (u8,
 * i8 or i32 x: y = f32(x - x_zero_point) * x_scale), per tensor or per
 * axis: one invocation per element. */
static void emit_quant(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  int q = n->op == DML_OP_QUANTIZE_LINEAR;
  const dml_pkg_value_t *x = input(s, n, 0), *sc = input(s, n, 1), *zp = input(s, n, 2);
  const dml_pkg_value_t *y = n->n_outputs ? val(s, n->outputs[0]) : NULL;
  const char *why = NULL;
  dml_klin_t l = {0, -1, 0, 0};
  if (!x || !sc || !y)
    why = "absent input";
  else if (!is_f32(sc))
    why = "the scale must be f32";
  else if (q && !is_f32(x))
    why = "only f32 x is emitted";
  else if (q && !is_q8(y))
    why = "y must be u8 or i8";
  else if (q && zp && zp->type.dtype != y->type.dtype)
    why = "y must have the zero point's dtype";
  else if (!q && !is_q8(x) && !(x->type.dtype == DML_DTYPE_I32 && typed_ok(x)))
    why = "x must be u8, i8 or i32";
  else if (!q && (!is_f32(y) || (zp && zp->type.dtype != x->type.dtype)))
    why = "y must be f32 and the zero point of x's dtype";
  else if (zp && !typed_ok(zp))
    why = "misaligned zero point";
  else if (!numel_syms(&y->type, &l) || data_dependent(s, &y->type))
    why = "dims over too many symbols, or computed from run-time data";
  dml_kernel_t *K = NULL;
  const dml_kidx_t *co[DML_MAX_RANK], *si = NULL, *zi = NULL;
  if (!why) {
    coords_of(s, &x->type, dml_ki_var(p, DML_KVAR_GID_X), co);
    si = q_param(s, n, x, sc, co, &why);
    if (!why && zp) zi = q_param(s, n, x, zp, co, &why);
  }
  if (why) {
    dml_ksched_unsupported(s, node, why);
    return;
  }
  const dml_kidx_t *gid = elem_kernel(s, node, DML_KK_ELEMENTWISE, &y->type, &K, co);
  if (!gid) return;
  const dml_kval_t *xv = load_at(s, x, gid), *scale = load_at(s, sc, si), *v;
  if (q) {
    v = dml_kv_round_even(p, dml_kv_fn(p, DML_KF_DIV, xv, scale));
    if (zp)
      v = dml_kv_fn(p, DML_KF_ADD, v, dml_kv_cast(p, DML_KT_F32, load_at(s, zp, zi)));
    v = sat_q(p, v, kdt(y));
  } else {
    const dml_kval_t *xi = dml_kv_cast(p, DML_KT_I32, xv);
    if (zp)
      xi = dml_kv_fn(p, DML_KF_SUB, xi, dml_kv_cast(p, DML_KT_I32, load_at(s, zp, zi)));
    v = dml_kv_fn(p, DML_KF_MUL, dml_kv_cast(p, DML_KT_F32, xi), scale);
  }
  elem_finish(s, K, &y->type, gid, store_at(s, y, gid, v));
  lin_add(&K->flops, l, 3);
  lin_add(&K->bytes, l, 5);
}

/* DynamicQuantizeLinear (opset 11), as cpu_quant.c, in one workgroup of
 * DQ_WG invocations: each folds a strided share of x into min(0, min x)
 * and max(0, max x) (NaN skipped), the partials meet in shared tiles,
 * every invocation folds them (min and max are exact, so the order does
 * not matter) into scale = (max - min) / 255 and the zero point
 * saturate(round_even(0 - min / scale)) (0 when scale is 0), then
 * quantizes its share: saturate(round_even(x / scale) + zero point), the
 * zero point when scale is 0. Invocation 0 stores scale and zero point. */
#define DQ_WG 256
static void emit_dynquant(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0);
  const dml_pkg_value_t *y = n->n_outputs > 0 ? val(s, n->outputs[0]) : NULL,
                        *ys = n->n_outputs > 1 ? val(s, n->outputs[1]) : NULL,
                        *yz = n->n_outputs > 2 ? val(s, n->outputs[2]) : NULL;
  dml_klin_t l = {0, -1, 0, 0};
  const char *why = NULL;
  if (!x || !y || !ys || !yz)
    why = "the three outputs are emitted together";
  else if (!is_f32(x) || !is_f32(ys) || y->type.dtype != DML_DTYPE_U8 || !typed_ok(y) ||
           yz->type.dtype != DML_DTYPE_U8 || !typed_ok(yz))
    why = "x and y_scale must be f32, y and y_zero_point u8";
  else if (!numel_syms(&x->type, &l) || data_dependent(s, &x->type))
    why = "dims over too many symbols, or computed from run-time data";
  if (why) {
    dml_ksched_unsupported(s, node, why);
    return;
  }
  dml_kernel_t *K = dml_ksched_kernel(s, DML_KK_REDUCE, node);
  if (!K) return;
  K->local[0] = DQ_WG;
  K->items[0] = (dml_klin_t){DQ_WG, -1, 0, 0};
  K->n_tiles = 2;
  K->tile_elems[0] = K->tile_elems[1] = DQ_WG;
  K->n_regs = 5;
  const dml_kidx_t *lid = dml_ki_var(p, DML_KVAR_LID_X), *N = dml_ki_lin(p, l);
  int32_t vi = DML_KVAR_FIRST_LOOP, vj = vi + 1, vo = vi + 2;
  const dml_kidx_t *steps =
      dml_ki_bin(p, DML_KI_DIV, kadd(s, N, kc(s, DQ_WG - 1)), kc(s, DQ_WG));
  const dml_kval_t *mn = dml_kv_reg(p, 0), *mx = dml_kv_reg(p, 1);
  dml_kblock_t b = {0}, share = {0}, fold = {0}, quant = {0};
  /* partials */
  const dml_kidx_t *e = kadd(s, kmul(s, dml_ki_var(p, vi), kc(s, DQ_WG)), lid);
  const dml_kval_t *xv = load_at(s, x, e);
  dml_kblock_add(&share,
                 assign(s, DML_KS_SET, 0,
                        dml_kv_select(p, dml_kv_fn(p, DML_KF_LT, xv, mn), xv, mn)));
  dml_kblock_add(&share,
                 assign(s, DML_KS_SET, 1,
                        dml_kv_select(p, dml_kv_fn(p, DML_KF_GT, xv, mx), xv, mx)));
  dml_kblock_add(&b, assign(s, DML_KS_LET, 0, dml_kv_const(p, 0.0f)));
  dml_kblock_add(&b, assign(s, DML_KS_LET, 1, dml_kv_const(p, 0.0f)));
  dml_kblock_add(&b, for_loop(s, vi, steps, if_lt(s, e, N, share.first)));
  for (uint32_t t = 0; t < 2; t++) {
    dml_kstmt_t *ts = dml_ks_new(p, DML_KS_TILE_STORE);
    if (ts) {
      ts->tile = t;
      ts->idx = lid;
      ts->val = dml_kv_reg(p, t);
    }
    dml_kblock_add(&b, ts);
  }
  dml_kblock_add(&b, dml_ks_new(p, DML_KS_BARRIER));
  /* every invocation folds the partials */
  const dml_kval_t *a = dml_kv_tile(p, 0, dml_ki_var(p, vj)),
                   *c = dml_kv_tile(p, 1, dml_ki_var(p, vj));
  dml_kblock_add(&fold, assign(s, DML_KS_SET, 0,
                               dml_kv_select(p, dml_kv_fn(p, DML_KF_LT, a, mn), a, mn)));
  dml_kblock_add(&fold, assign(s, DML_KS_SET, 1,
                               dml_kv_select(p, dml_kv_fn(p, DML_KF_GT, c, mx), c, mx)));
  dml_kblock_add(&b, for_loop(s, vj, kc(s, DQ_WG), fold.first));
  dml_kblock_add(&b, assign(s, DML_KS_LET, 2,
                            dml_kv_fn(p, DML_KF_DIV, dml_kv_fn(p, DML_KF_SUB, mx, mn),
                                      dml_kv_const(p, 255.0f))));
  const dml_kval_t *sr = dml_kv_reg(p, 2);
  const dml_kval_t *pos = dml_kv_fn(p, DML_KF_GT, sr, dml_kv_const(p, 0.0f));
  const dml_kval_t *z = dml_kv_round_even(
      p,
      dml_kv_fn(p, DML_KF_SUB, dml_kv_const(p, 0.0f), dml_kv_fn(p, DML_KF_DIV, mn, sr)));
  z = dml_kv_select(p, pos, z, dml_kv_const(p, 0.0f));
  z = dml_kv_fn(p, DML_KF_MAX, dml_kv_fn(p, DML_KF_MIN, z, dml_kv_const(p, 255.0f)),
                dml_kv_const(p, 0.0f));
  dml_kblock_add(&b, assign(s, DML_KS_LET, 3, z));
  const dml_kval_t *zr = dml_kv_reg(p, 3);
  dml_kblock_t st0 = {0};
  dml_kblock_add(&st0, store_at(s, ys, kc(s, 0), sr));
  dml_kblock_add(&st0, store_at(s, yz, kc(s, 0), dml_kv_cast(p, DML_KT_U8, zr)));
  dml_kblock_add(&b, if_lt(s, lid, kc(s, 1), st0.first));
  /* the elements */
  const dml_kidx_t *eo = kadd(s, kmul(s, dml_ki_var(p, vo), kc(s, DQ_WG)), lid);
  const dml_kval_t *v = dml_kv_fn(
      p, DML_KF_ADD,
      dml_kv_round_even(p, dml_kv_fn(p, DML_KF_DIV, load_at(s, x, eo), sr)), zr);
  v = dml_kv_select(p, pos, v, zr);
  dml_kblock_add(&quant, store_at(s, y, eo, sat_q(p, v, DML_KT_U8)));
  dml_kblock_add(&b, for_loop(s, vo, steps, if_lt(s, eo, N, quant.first)));
  K->body = b.first;
  lin_add(&K->flops, l, 5);
  lin_add(&K->bytes, l, 9);
}

/* MatMulInteger (i32 y = (A - a_zero_point) (B - b_zero_point)) and
 * QLinearMatMul (y = saturate(round_even(acc * a_scale * b_scale /
 * y_scale) + y_zero_point), the factor in f32 where the CPU has double):
 * A [.., M, K] and B [.., K, N] of u8/i8 with numpy batch broadcasting,
 * zero points and scales per tensor, per row of A ([M]) or per column of B
 * ([N]); one invocation per output element with a loop over K. */
/* One output element of MatMulInteger / QLinearMatMul: A's row at a0, B's
 * column n from b0, the zero points as i32 values (NULL: 0). */
typedef struct {
  const dml_pkg_value_t *a, *b;
  const dml_kval_t *za, *zb;
  const dml_kidx_t *a0, *b0, *n;
  int64_t N;
} qmm_ctx_t;

/* (a[k] - za) * (b[k, n] - zb) in i32 (dml_krow_value_fn). */
static const dml_kval_t *qmm_term(sched_t *s, const dml_kidx_t *k, void *ctx) {
  dml_kpool_t *p = s->pool;
  const qmm_ctx_t *c = ctx;
  const dml_kval_t *av = dml_kv_cast(p, DML_KT_I32, load_at(s, c->a, kadd(s, c->a0, k))),
                   *bv = dml_kv_cast(
                       p, DML_KT_I32,
                       load_at(s, c->b,
                               kadd(s, kmul(s, kadd(s, c->b0, k), kc(s, c->N)), c->n)));
  if (c->za) av = dml_kv_fn(p, DML_KF_SUB, av, c->za);
  if (c->zb) bv = dml_kv_fn(p, DML_KF_SUB, bv, c->zb);
  return dml_kv_fn(p, DML_KF_MUL, av, bv);
}

static void emit_qmatmul(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  int ql = n->op == DML_OP_QLINEAR_MAT_MUL;
  const dml_pkg_value_t *a = input(s, n, 0), *b = input(s, n, ql ? 3 : 1);
  const dml_pkg_value_t *za = input(s, n, ql ? 2 : 2), *zb = input(s, n, ql ? 5 : 3);
  const dml_pkg_value_t *as = ql ? input(s, n, 1) : NULL,
                        *bs = ql ? input(s, n, 4) : NULL,
                        *ys = ql ? input(s, n, 6) : NULL,
                        *zy = ql ? input(s, n, 7) : NULL;
  const dml_pkg_value_t *y = n->n_outputs ? val(s, n->outputs[0]) : NULL;
  const char *why = NULL;
  dml_klin_t l = {0, -1, 0, 0};
  if (!a || !b || !y || (ql && (!as || !bs || !ys || !zy || !za || !zb)))
    why = "absent input";
  else if (!is_q8(a) || !is_q8(b) ||
           (za && (za->type.dtype != a->type.dtype || !typed_ok(za))) ||
           (zb && (zb->type.dtype != b->type.dtype || !typed_ok(zb))))
    why = "A and B must be u8 or i8, zero points of their dtype";
  else if (ql ? (!is_q8(y) || zy->type.dtype != y->type.dtype || !typed_ok(zy) ||
                 !is_f32(as) || !is_f32(bs) || !is_f32(ys))
              : (y->type.dtype != DML_DTYPE_I32 || !typed_ok(y)))
    why = ql ? "y must be u8/i8 of y_zero_point's dtype, scales f32" : "y must be i32";
  else if (a->type.rank < 2 || b->type.rank < 2 || y->type.rank < 2)
    why = "A and B must be at least 2-D";
  else if (!numel_syms(&y->type, &l) || data_dependent(s, &y->type))
    why = "dims over too many symbols, or computed from run-time data";
  int32_t ar = a ? a->type.rank : 0, br = b ? b->type.rank : 0, yr = y ? y->type.rank : 0;
  int64_t M = 0, K = 0, N = 0;
  const dml_kidx_t *Mx = NULL; /* M may be symbolic (a sequence): its run-time value */
  if (!why) {
    const dml_dim_t *ad = a->type.dims, *bd = b->type.dims;
    if (ad[ar - 1].sym >= 0 || bd[br - 2].sym >= 0 || bd[br - 1].sym >= 0)
      why = "symbolic K or N";
    M = ad[ar - 2].sym < 0 ? ad[ar - 2].value : -1, K = ad[ar - 1].value,
    N = bd[br - 1].value;
    Mx = dim_idx(s, ad[ar - 2]);
    if (!why && bd[br - 2].value != K) why = "inner dims differ";
  }
  const dml_pkg_value_t *rows[2] = {za, as}, *cols[2] = {zb, bs};
  for (int i = 0; !why && i < 2; i++) {
    int64_t nr = rows[i] ? numel_static(rows[i]) : 1,
            nc = cols[i] ? numel_static(cols[i]) : 1;
    if ((nr != 1 && nr != M) || (nc != 1 && nc != N))
      why =
          "zero points and scales must be per tensor, per row of A (a static M) or per "
          "column of B";
  }
  if (!why && ys && (numel_static(ys) != 1 || numel_static(zy) != 1))
    why = "y_scale and y_zero_point must be scalars";
  if (why) {
    dml_ksched_unsupported(s, node, why);
    return;
  }
  dml_kernel_t *Kr = dml_ksched_kernel(s, DML_KK_GEMM, node);
  if (!Kr) return;
  dml_kdot_t dot;
  const dml_kidx_t *co[DML_MAX_RANK];
  const dml_kidx_t *gid =
      dml_kdot_setup(s, Kr, &y->type, K, DML_KVAR_FIRST_LOOP + 1, &dot);
  coords_of(s, &y->type, gid, co);
  const dml_kidx_t *m = co[yr - 2], *nn = co[yr - 1];
  /* batch offsets (broadcast dims of size 1 read 0) */
  const dml_kidx_t *ab = kc(s, 0), *bb = kc(s, 0);
  for (int32_t d = 0; d < yr - 2; d++) {
    int32_t da = d - (yr - ar), db = d - (yr - br);
    if (da >= 0)
      ab = kadd(
          s, kmul(s, ab, dim_idx(s, a->type.dims[da])),
          a->type.dims[da].value == 1 && a->type.dims[da].sym < 0 ? kc(s, 0) : co[d]);
    if (db >= 0)
      bb = kadd(
          s, kmul(s, bb, dim_idx(s, b->type.dims[db])),
          b->type.dims[db].value == 1 && b->type.dims[db].sym < 0 ? kc(s, 0) : co[d]);
  }
#define PIDX(v, row) (numel_static(v) == 1 ? kc(s, 0) : (row) ? m : nn)
  qmm_ctx_t qc = {a,
                  b,
                  za ? dml_kv_cast(p, DML_KT_I32, load_at(s, za, PIDX(za, 1))) : NULL,
                  zb ? dml_kv_cast(p, DML_KT_I32, load_at(s, zb, PIDX(zb, 0))) : NULL,
                  kmul(s, kadd(s, kmul(s, ab, Mx), m), kc(s, K)),
                  kmul(s, bb, kc(s, K)),
                  nn,
                  N};
  dml_kblock_t body = {0};
  dml_kdot_sum(s, Kr, &dot, &body, kc(s, K), DML_KVAR_FIRST_LOOP,
               dml_kv_zero(p, DML_KT_I32), qmm_term, &qc, 0);
  const dml_kval_t *acc = dml_kv_reg_t(p, 0, DML_KT_I32), *res = acc;
  if (ql) {
    const dml_kval_t *f = dml_kv_fn(p, DML_KF_DIV,
                                    dml_kv_fn(p, DML_KF_MUL, load_at(s, as, PIDX(as, 1)),
                                              load_at(s, bs, PIDX(bs, 0))),
                                    load_at(s, ys, kc(s, 0)));
    res = dml_kv_fn(p, DML_KF_ADD,
                    dml_kv_round_even(
                        p, dml_kv_fn(p, DML_KF_MUL, dml_kv_cast(p, DML_KT_F32, acc), f)),
                    dml_kv_cast(p, DML_KT_F32, load_at(s, zy, kc(s, 0))));
    res = sat_q(p, res, kdt(y));
  }
#undef PIDX
  dml_kdot_finish(s, Kr, &dot, gid, &body, store_at(s, y, gid, res));
  lin_add(&Kr->flops, l, 2 * K);
  lin_add(&Kr->bytes, l, 2 * K + 4);
}

/* ---- GridSample ---- */

/* A statement list with registers handed out in order: let() stores a
 * value in a new register and returns that register (so a value used
 * several times is computed once). */
typedef struct regs {
  sched_t *s;
  dml_kblock_t *b;
  uint32_t n;
} regs_t;

static const dml_kval_t *let(regs_t *r, const dml_kval_t *v) {
  if (!v) return NULL;
  uint32_t k = r->n++;
  dml_kblock_add(r->b, assign(r->s, DML_KS_LET, k, v));
  return dml_kv_reg_t(r->s->pool, k, v->dtype);
}

#define F1(f, a) dml_kv_fn(p, DML_KF_##f, a, NULL)
#define F2(f, a, b) dml_kv_fn(p, DML_KF_##f, a, b)
#define KF(c) dml_kv_const(p, (float)(c))

/* cpu_sample.c's gs_reflect: x reflected into [lo, hi] (f32). */
static const dml_kval_t *gs_reflect(regs_t *r, const dml_kval_t *x, double lo,
                                    double hi) {
  dml_kpool_t *p = r->s->pool;
  const dml_kval_t *rng = KF(hi - lo);
  const dml_kval_t *dl = let(r, F2(SUB, KF(lo), x)), *dh = let(r, F2(SUB, x, KF(hi)));
  /* below lo */
  const dml_kval_t *nl = let(r, F1(FLOOR, F2(DIV, dl, rng)));
  const dml_kval_t *rl = F2(SUB, dl, F2(MUL, nl, rng));
  const dml_kval_t *el =
      F2(EQ, F2(SUB, nl, F2(MUL, KF(2), F1(FLOOR, F2(MUL, nl, KF(0.5))))), KF(0));
  const dml_kval_t *vl = dml_kv_select(p, el, F2(ADD, KF(lo), rl), F2(SUB, KF(hi), rl));
  /* above hi */
  const dml_kval_t *nh = let(r, F1(FLOOR, F2(DIV, dh, rng)));
  const dml_kval_t *rh = F2(SUB, dh, F2(MUL, nh, rng));
  const dml_kval_t *eh =
      F2(EQ, F2(SUB, nh, F2(MUL, KF(2), F1(FLOOR, F2(MUL, nh, KF(0.5))))), KF(0));
  const dml_kval_t *vh = dml_kv_select(p, eh, F2(SUB, KF(hi), rh), F2(ADD, KF(lo), rh));
  return let(r, dml_kv_select(p, F2(LT, x, KF(lo)), vl,
                              dml_kv_select(p, F2(GT, x, KF(hi)), vh, x)));
}

typedef struct gs_ctx {
  regs_t *r;
  const dml_pkg_value_t *x;
  const dml_kidx_t *base; /* element index of X's (n, c) plane */
  int64_t H, W;
  int pad; /* 0 zeros, 1 border, 2 reflection */
  double border[4];
} gs_ctx_t;

static const dml_kval_t *iclamp(dml_kpool_t *p, const dml_kval_t *v, int64_t hi) {
  return F2(MAX, F2(MIN, v, dml_kv_iconst(p, DML_KT_I32, hi)),
            dml_kv_zero(p, DML_KT_I32));
}

/* cpu_sample.c's gs_pixel: X at integer (row, col) (i32 values) under the
 * padding rule; never an access outside the plane. */
static const dml_kval_t *gs_pixel(gs_ctx_t *g, const dml_kval_t *row,
                                  const dml_kval_t *col) {
  sched_t *s = g->r->s;
  dml_kpool_t *p = s->pool;
  const dml_kval_t *inb = NULL;
  if (g->pad == 0) {
    inb = F2(AND,
             F2(AND, F2(GE, col, dml_kv_zero(p, DML_KT_I32)),
                F2(LT, col, dml_kv_iconst(p, DML_KT_I32, g->W))),
             F2(AND, F2(GE, row, dml_kv_zero(p, DML_KT_I32)),
                F2(LT, row, dml_kv_iconst(p, DML_KT_I32, g->H))));
  } else if (g->pad == 2) {
    col = dml_kv_cast(
        p, DML_KT_I32,
        gs_reflect(g->r, dml_kv_cast(p, DML_KT_F32, col), g->border[0], g->border[2]));
    row = dml_kv_cast(
        p, DML_KT_I32,
        gs_reflect(g->r, dml_kv_cast(p, DML_KT_F32, row), g->border[1], g->border[3]));
  }
  const dml_kval_t *ci = iclamp(p, col, g->W - 1), *ri = iclamp(p, row, g->H - 1);
  const dml_kidx_t *off = kadd(
      s, g->base, kadd(s, kmul(s, dml_ki_val(p, ri), kc(s, g->W)), dml_ki_val(p, ci)));
  const dml_kval_t *v = load_at(s, g->x, off);
  return inb ? dml_kv_select(p, inb, v, KF(0)) : v;
}

/* cpu_sample.c's cubic_coeffs (Keys, A = -0.75) of t, into cf[4]. */
static void gs_cubic(regs_t *r, const dml_kval_t *t, const dml_kval_t **cf) {
  dml_kpool_t *p = r->s->pool;
  const double A = -0.75;
  const dml_kval_t *x = let(r, F1(ABS, t));
  const dml_kval_t *x1 = let(r, F2(ADD, x, KF(1))), *y1 = let(r, F2(SUB, KF(1), x)),
                   *x2 = let(r, F2(SUB, KF(2), x));
  cf[0] = let(
      r,
      F2(SUB,
         F2(MUL, F2(ADD, F2(MUL, F2(SUB, F2(MUL, KF(A), x1), KF(5 * A)), x1), KF(8 * A)),
            x1),
         KF(4 * A)));
  cf[1] = let(
      r,
      F2(ADD, F2(MUL, F2(MUL, F2(SUB, F2(MUL, KF(A + 2), x), KF(A + 3)), x), x), KF(1)));
  cf[2] =
      let(r, F2(ADD, F2(MUL, F2(MUL, F2(SUB, F2(MUL, KF(A + 2), y1), KF(A + 3)), y1), y1),
                KF(1)));
  cf[3] = let(
      r,
      F2(SUB,
         F2(MUL, F2(ADD, F2(MUL, F2(SUB, F2(MUL, KF(A), x2), KF(5 * A)), x2), KF(8 * A)),
            x2),
         KF(4 * A)));
}

/* GridSample (ONNX opset 16, cpu_sample.c): X [N,C,H,W] f32, grid
 * [N,Ho,Wo,2]; modes bilinear, nearest (round half to even), bicubic;
 * padding zeros, border, reflection; align_corners. One invocation per
 * output element, in f32 where the CPU computes in double. */
static void emit_grid_sample(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0), *grid = input(s, n, 1);
  const dml_pkg_value_t *y = n->n_outputs ? val(s, n->outputs[0]) : NULL;
  const char *mode = dml_attr_string(n->attrs, n->n_attrs, "mode", "bilinear");
  const char *pm = dml_attr_string(n->attrs, n->n_attrs, "padding_mode", "zeros");
  int align = dml_attr_int(n->attrs, n->n_attrs, "align_corners", 0) != 0;
  int md = !strcmp(mode, "bilinear") || !strcmp(mode, "linear") ? 0
           : !strcmp(mode, "nearest")                           ? 1
           : !strcmp(mode, "bicubic") || !strcmp(mode, "cubic") ? 2
                                                                : -1;
  int pad = !strcmp(pm, "zeros")        ? 0
            : !strcmp(pm, "border")     ? 1
            : !strcmp(pm, "reflection") ? 2
                                        : -1;
  const char *why = NULL;
  if (!x || !grid || !y)
    why = "absent input";
  else if (md < 0 || pad < 0)
    why = "a mode the CPU reference does not have";
  else if (!is_f32(x) || !is_f32(grid) || !is_f32(y))
    why = "only f32 is emitted";
  else if (x->type.rank != 4 || grid->type.rank != 4 || y->type.rank != 4)
    why = "only 2-D (X [N,C,H,W]) is emitted";
  else if (data_dependent(s, &y->type))
    why = "a dim computed from run-time data";
  for (int d = 1; !why && d < 4; d++)
    if (x->type.dims[d].sym >= 0 || grid->type.dims[d].sym >= 0 ||
        y->type.dims[d].sym >= 0)
      why = "symbolic channel or spatial dim";
  if (why) {
    dml_ksched_unsupported(s, node, why);
    return;
  }
  int64_t C = x->type.dims[1].value, H = x->type.dims[2].value, W = x->type.dims[3].value;
  int64_t Ho = y->type.dims[2].value, Wo = y->type.dims[3].value;
  if (H == 0 || W == 0) {
    dml_ksched_unsupported(s, node, "X has an empty spatial dim");
    return;
  }
  dml_kernel_t *K;
  const dml_kidx_t *co[DML_MAX_RANK];
  const dml_kidx_t *gid = elem_kernel(s, node, DML_KK_MOVE, &y->type, &K, co);
  if (!gid) return;
  dml_kblock_t b = {0};
  regs_t r = {s, &b, 0};
  gs_ctx_t g = {&r, x, NULL, H, W, pad, {0}};
  double xmin = align ? 0 : -0.5, xmax = align ? (double)W - 1 : (double)W - 0.5;
  double ymin = align ? 0 : -0.5, ymax = align ? (double)H - 1 : (double)H - 0.5;
  g.border[0] = xmin, g.border[1] = ymin, g.border[2] = xmax, g.border[3] = ymax;
  g.base = kmul(s, kadd(s, kmul(s, co[0], kc(s, C)), co[1]), kc(s, H * W));
  const dml_kidx_t *gi = kmul(
      s, kadd(s, kmul(s, kadd(s, kmul(s, co[0], kc(s, Ho)), co[2]), kc(s, Wo)), co[3]),
      kc(s, 2));
  const dml_kval_t *nx = let(&r, load_at(s, grid, gi)),
                   *ny = let(&r, load_at(s, grid, kadd(s, gi, kc(s, 1))));
  const dml_kval_t *fx, *fy;
  if (align) {
    fx = F2(MUL, F2(DIV, F2(ADD, nx, KF(1)), KF(2)), KF(W - 1));
    fy = F2(MUL, F2(DIV, F2(ADD, ny, KF(1)), KF(2)), KF(H - 1));
  } else {
    fx = F2(DIV, F2(SUB, F2(MUL, F2(ADD, nx, KF(1)), KF(W)), KF(1)), KF(2));
    fy = F2(DIV, F2(SUB, F2(MUL, F2(ADD, ny, KF(1)), KF(H)), KF(1)), KF(2));
  }
  fx = let(&r, fx), fy = let(&r, fy);
  if (md == 1)
    fx = let(&r, dml_kv_round_even(p, fx)), fy = let(&r, dml_kv_round_even(p, fy));
  const dml_kval_t *out =
      let(&r, F2(OR, F2(OR, F2(LT, fx, KF(xmin)), F2(GT, fx, KF(xmax))),
                 F2(OR, F2(LT, fy, KF(ymin)), F2(GT, fy, KF(ymax)))));
  if (pad == 1) {
    fx = let(&r, dml_kv_select(p, out, F2(MAX, F2(MIN, fx, KF(W - 1)), KF(0)), fx));
    fy = let(&r, dml_kv_select(p, out, F2(MAX, F2(MIN, fy, KF(H - 1)), KF(0)), fy));
  } else if (pad == 2) {
    fx = let(&r, dml_kv_select(p, out, gs_reflect(&r, fx, xmin, xmax), fx));
    fy = let(&r, dml_kv_select(p, out, gs_reflect(&r, fy, ymin, ymax), fy));
  }
  /* NaN or inf coordinates give NaN. |f| <= FLT_MAX, not f - f == 0:
   * clang contracts CUDA code across statements (-ffp-contract=fast), so
   * `f - f` with f = a * b became fma(a, b, -f), a's rounding error, which
   * is not 0 (NaN for align_corners = 1, whose f is a product, on the
   * H200) */
  const dml_kval_t *finite = let(
      &r, F2(AND, F2(LE, F1(ABS, fx), KF(FLT_MAX)), F2(LE, F1(ABS, fy), KF(FLT_MAX))));
  const dml_kval_t *v;
  if (md == 1) {
    v = gs_pixel(&g, dml_kv_cast(p, DML_KT_I32, fy), dml_kv_cast(p, DML_KT_I32, fx));
  } else if (md == 0) {
    const dml_kval_t *x1f = let(&r, F1(FLOOR, fx)), *y1f = let(&r, F1(FLOOR, fy));
    const dml_kval_t *x1 = let(&r, dml_kv_cast(p, DML_KT_I32, x1f)),
                     *y1 = let(&r, dml_kv_cast(p, DML_KT_I32, y1f));
    const dml_kval_t *one = dml_kv_one(p, DML_KT_I32);
    const dml_kval_t *x2 = let(&r, F2(ADD, x1, one)), *y2 = let(&r, F2(ADD, y1, one));
    const dml_kval_t *p11 = let(&r, gs_pixel(&g, y1, x1)),
                     *p12 = let(&r, gs_pixel(&g, y1, x2));
    const dml_kval_t *p21 = let(&r, gs_pixel(&g, y2, x1)),
                     *p22 = let(&r, gs_pixel(&g, y2, x2));
    const dml_kval_t *dx2 = F2(SUB, F2(ADD, x1f, KF(1)), fx), *dx1 = F2(SUB, fx, x1f);
    const dml_kval_t *dy2 = F2(SUB, F2(ADD, y1f, KF(1)), fy), *dy1 = F2(SUB, fy, y1f);
    dx2 = let(&r, dx2), dx1 = let(&r, dx1);
    v = F2(ADD, F2(MUL, dy2, F2(ADD, F2(MUL, dx2, p11), F2(MUL, dx1, p12))),
           F2(MUL, dy1, F2(ADD, F2(MUL, dx2, p21), F2(MUL, dx1, p22))));
  } else {
    const dml_kval_t *x0f = let(&r, F2(SUB, F1(FLOOR, fx), KF(1))),
                     *y0f = let(&r, F2(SUB, F1(FLOOR, fy), KF(1)));
    const dml_kval_t *x0 = let(&r, dml_kv_cast(p, DML_KT_I32, x0f)),
                     *y0 = let(&r, dml_kv_cast(p, DML_KT_I32, y0f));
    const dml_kval_t *cx[4], *cy[4], *rows[4];
    gs_cubic(&r, F2(SUB, F2(SUB, fx, x0f), KF(1)), cx);
    gs_cubic(&r, F2(SUB, F2(SUB, fy, y0f), KF(1)), cy);
    for (int h = 0; h < 4; h++) {
      const dml_kval_t *row = let(&r, F2(ADD, y0, dml_kv_iconst(p, DML_KT_I32, h)));
      const dml_kval_t *acc = NULL;
      for (int w = 0; w < 4; w++) {
        const dml_kval_t *t = F2(
            MUL, cx[w], gs_pixel(&g, row, F2(ADD, x0, dml_kv_iconst(p, DML_KT_I32, w))));
        acc = acc ? F2(ADD, acc, t) : t;
      }
      rows[h] = let(&r, acc);
    }
    v = F2(ADD,
           F2(ADD, F2(ADD, F2(MUL, cy[0], rows[0]), F2(MUL, cy[1], rows[1])),
              F2(MUL, cy[2], rows[2])),
           F2(MUL, cy[3], rows[3]));
  }
  v = dml_kv_select(p, finite, v, KF(NAN));
  dml_kblock_add(&b, store_at(s, y, gid, v));
  K->n_regs = r.n;
  elem_finish(s, K, &y->type, gid, b.first);
  dml_klin_t l = {0, -1, 0, 0};
  numel_syms(&y->type, &l);
  lin_add(&K->flops, l, md == 2 ? 80 : 20);
  lin_add(&K->bytes, l, md == 2 ? 72 : md == 0 ? 24 : 12);
}

#undef F1
#undef F2
#undef KF

/* ---- RoiAlign ---- */

/* RoiAlign (ONNX opset 16, cpu_sample.c): X [N,C,H,W] f32, rois [R,4]
 * f32, batch_indices [R] i64/i32; modes avg and max, half_pixel or
 * output_half_pixel, sampling_ratio (0: ceil(roi / bins) samples per bin,
 * a loop bound read from the data). One invocation per output element in
 * f32 where the CPU computes in double. A batch index outside [0, N) (an
 * error on the CPU) is clamped instead of reading outside X. */
static void emit_roi_align(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0), *rois = input(s, n, 1), *bi = input(s, n, 2);
  const dml_pkg_value_t *y = n->n_outputs ? val(s, n->outputs[0]) : NULL;
  const char *mode = dml_attr_string(n->attrs, n->n_attrs, "mode", "avg");
  const char *ctm = dml_attr_string(n->attrs, n->n_attrs,
                                    "coordinate_transformation_mode", "half_pixel");
  int is_max = !strcmp(mode, "max"), half = !strcmp(ctm, "half_pixel");
  int64_t oh = dml_attr_int(n->attrs, n->n_attrs, "output_height", 1),
          ow = dml_attr_int(n->attrs, n->n_attrs, "output_width", 1),
          sr = dml_attr_int(n->attrs, n->n_attrs, "sampling_ratio", 0);
  double scale = dml_attr_float(n->attrs, n->n_attrs, "spatial_scale", 1.0);
  const char *why = NULL;
  if (!x || !rois || !bi || !y)
    why = "absent input";
  else if ((!is_max && strcmp(mode, "avg")) ||
           (!half && strcmp(ctm, "output_half_pixel")))
    why = "a mode the CPU reference does not have";
  else if (!is_f32(x) || !is_f32(rois) || !is_f32(y) ||
           (bi->type.dtype != DML_DTYPE_I64 && bi->type.dtype != DML_DTYPE_I32) ||
           !typed_ok(bi))
    why = "X and rois must be f32, batch_indices i64 or i32";
  else if (x->type.rank != 4 || rois->type.rank != 2 || y->type.rank != 4 || oh < 1 ||
           ow < 1 || sr < 0)
    why = "X must be [N,C,H,W] and rois [R,4]";
  else if (data_dependent(s, &y->type))
    why = "a dim computed from run-time data";
  for (int d = 1; !why && d < 4; d++)
    if (x->type.dims[d].sym >= 0 || y->type.dims[d].sym >= 0)
      why = "symbolic channel or spatial dim";
  if (why) {
    dml_ksched_unsupported(s, node, why);
    return;
  }
  int64_t C = x->type.dims[1].value, H = x->type.dims[2].value, W = x->type.dims[3].value;
  if (H == 0 || W == 0) {
    dml_ksched_unsupported(s, node, "X has an empty spatial dim");
    return;
  }
#define F1(f, a) dml_kv_fn(p, DML_KF_##f, a, NULL)
#define F2(f, a, b) dml_kv_fn(p, DML_KF_##f, a, b)
#define KF(c) dml_kv_const(p, (float)(c))
#define KI(c) dml_kv_iconst(p, DML_KT_I32, c)
  dml_kernel_t *K;
  const dml_kidx_t *co[DML_MAX_RANK];
  const dml_kidx_t *gid = elem_kernel(s, node, DML_KK_MOVE, &y->type, &K, co);
  if (!gid) return;
  dml_kblock_t b = {0};
  regs_t r = {s, &b, 0};
  /* the roi */
  const dml_kidx_t *ri = kmul(s, co[0], kc(s, 4));
  double off = half ? 0.5 : 0.0;
  const dml_kval_t *c4[4];
  for (int k = 0; k < 4; k++)
    c4[k] = let(&r, F2(SUB, F2(MUL, load_at(s, rois, kadd(s, ri, kc(s, k))), KF(scale)),
                       KF(off)));
  const dml_kval_t *rw = F2(SUB, c4[2], c4[0]), *rh = F2(SUB, c4[3], c4[1]);
  if (!half) rw = F2(MAX, rw, KF(1)), rh = F2(MAX, rh, KF(1));
  rw = let(&r, rw), rh = let(&r, rh);
  const dml_kval_t *bh = let(&r, F2(DIV, rh, KF(oh))), *bw = let(&r, F2(DIV, rw, KF(ow)));
  const dml_kval_t *gh =
      sr > 0 ? KI(sr) : dml_kv_cast(p, DML_KT_I32, F1(CEIL, F2(DIV, rh, KF(oh))));
  const dml_kval_t *gw =
      sr > 0 ? KI(sr) : dml_kv_cast(p, DML_KT_I32, F1(CEIL, F2(DIV, rw, KF(ow))));
  gh = let(&r, F2(MAX, gh, KI(0))), gw = let(&r, F2(MAX, gw, KI(0)));
  const dml_kval_t *ghf = let(&r, dml_kv_cast(p, DML_KT_F32, gh)),
                   *gwf = let(&r, dml_kv_cast(p, DML_KT_F32, gw));
  const dml_kval_t *count = let(&r, F2(MAX, F2(MUL, ghf, gwf), KF(1)));
  /* the batch index, clamped; X's plane */
  const dml_kval_t *nmax =
      x->type.dims[0].sym >= 0
          ? F2(SUB, dml_kv_idx(p, DML_KT_I32, dim_idx(s, x->type.dims[0])), KI(1))
          : KI(x->type.dims[0].value - 1);
  const dml_kval_t *bv = let(
      &r,
      F2(MAX, F2(MIN, dml_kv_cast(p, DML_KT_I32, load_at(s, bi, co[0])), nmax), KI(0)));
  const dml_kidx_t *base =
      kmul(s, kadd(s, kmul(s, dml_ki_val(p, bv), kc(s, C)), co[1]), kc(s, H * W));
  const dml_kval_t *acc = let(&r, KF(0)), *have = let(&r, dml_kv_zero(p, DML_KT_BOOL));
  /* the samples: loops iy < gh, ix < gw (bounds from the data) */
  int32_t viy = DML_KVAR_FIRST_LOOP, vix = viy + 1;
  dml_kblock_t inner = {0};
  regs_t ri2 = {s, &inner, r.n}; /* the loop body's registers follow */
  const dml_kval_t *iyf = dml_kv_idx(p, DML_KT_F32, dml_ki_var(p, viy)),
                   *ixf = dml_kv_idx(p, DML_KT_F32, dml_ki_var(p, vix));
  const dml_kval_t *yy =
      let(&ri2, F2(ADD, F2(ADD, c4[1], F2(MUL, dml_kv_idx(p, DML_KT_F32, co[2]), bh)),
                   F2(DIV, F2(MUL, F2(ADD, iyf, KF(0.5)), bh), ghf)));
  const dml_kval_t *xx =
      let(&ri2, F2(ADD, F2(ADD, c4[0], F2(MUL, dml_kv_idx(p, DML_KT_F32, co[3]), bw)),
                   F2(DIV, F2(MUL, F2(ADD, ixf, KF(0.5)), bw), gwf)));
  const dml_kval_t *inside =
      let(&ri2, F1(NOT, F2(OR, F2(OR, F2(LT, yy, KF(-1)), F2(GT, yy, KF(H))),
                           F2(OR, F2(LT, xx, KF(-1)), F2(GT, xx, KF(W))))));
  const dml_kval_t *sy0 = let(&ri2, F2(MAX, yy, KF(0))),
                   *sx0 = let(&ri2, F2(MAX, xx, KF(0)));
  /* (int64_t)sy truncates; sy >= 0 so floor; clamp for the cast of huge values */
  const dml_kval_t *ylr = let(&ri2,
                              dml_kv_cast(p, DML_KT_I32, F2(MIN, F1(FLOOR, sy0), KF(H)))),
                   *xlr = let(&ri2,
                              dml_kv_cast(p, DML_KT_I32, F2(MIN, F1(FLOOR, sx0), KF(W))));
  const dml_kval_t *ytop = let(&ri2, F2(GE, ylr, KI(H - 1))),
                   *xtop = let(&ri2, F2(GE, xlr, KI(W - 1)));
  /* (clamped again: a NaN coordinate converts to any integer) */
  const dml_kval_t *yl = let(&ri2,
                             iclamp(p, dml_kv_select(p, ytop, KI(H - 1), ylr), H - 1)),
                   *xl = let(&ri2,
                             iclamp(p, dml_kv_select(p, xtop, KI(W - 1), xlr), W - 1));
  const dml_kval_t *yh =
      let(&ri2, iclamp(p, dml_kv_select(p, ytop, KI(H - 1), F2(ADD, ylr, KI(1))), H - 1));
  const dml_kval_t *xh =
      let(&ri2, iclamp(p, dml_kv_select(p, xtop, KI(W - 1), F2(ADD, xlr, KI(1))), W - 1));
  const dml_kval_t *sy = dml_kv_select(p, ytop, dml_kv_cast(p, DML_KT_F32, yl), sy0),
                   *sx = dml_kv_select(p, xtop, dml_kv_cast(p, DML_KT_F32, xl), sx0);
  const dml_kval_t *ly = let(&ri2, F2(SUB, sy, dml_kv_cast(p, DML_KT_F32, yl))),
                   *lx = let(&ri2, F2(SUB, sx, dml_kv_cast(p, DML_KT_F32, xl)));
  const dml_kval_t *hy = let(&ri2, F2(SUB, KF(1), ly)),
                   *hx = let(&ri2, F2(SUB, KF(1), lx));
  const dml_kval_t *wgt[4] = {F2(MUL, hy, hx), F2(MUL, hy, lx), F2(MUL, ly, hx),
                              F2(MUL, ly, lx)};
  const dml_kval_t *ys2[4] = {yl, yl, yh, yh}, *xs2[4] = {xl, xh, xl, xh}, *v[4];
  for (int k = 0; k < 4; k++) {
    const dml_kval_t *w = let(&ri2, dml_kv_select(p, inside, wgt[k], KF(0)));
    const dml_kidx_t *pi =
        kadd(s, base,
             kadd(s, kmul(s, dml_ki_val(p, ys2[k]), kc(s, W)), dml_ki_val(p, xs2[k])));
    /* the CPU skips a zero weight (0 * inf would be NaN) */
    v[k] = let(&ri2,
               dml_kv_select(p, F2(EQ, w, KF(0)), KF(0), F2(MUL, w, load_at(s, x, pi))));
  }
  if (is_max) {
    const dml_kval_t *m = F2(MAX, F2(MAX, v[0], v[1]), F2(MAX, v[2], v[3]));
    dml_kblock_add(&inner, assign(s, DML_KS_SET, acc->reg,
                                  dml_kv_select(p, have, F2(MAX, acc, m), m)));
    dml_kblock_add(&inner, assign(s, DML_KS_SET, have->reg, dml_kv_one(p, DML_KT_BOOL)));
  } else {
    dml_kblock_add(
        &inner, assign(s, DML_KS_SET, acc->reg,
                       F2(ADD, acc, F2(ADD, F2(ADD, F2(ADD, v[0], v[1]), v[2]), v[3]))));
  }
  dml_kblock_add(&b, for_loop(s, viy, dml_ki_val(p, gh),
                              for_loop(s, vix, dml_ki_val(p, gw), inner.first)));
  dml_kblock_add(&b, store_at(s, y, gid, is_max ? acc : F2(DIV, acc, count)));
  K->n_regs = ri2.n;
  elem_finish(s, K, &y->type, gid, b.first);
  dml_klin_t l = {0, -1, 0, 0};
  numel_syms(&y->type, &l);
  lin_add(&K->flops, l, 40);
  lin_add(&K->bytes, l, 20);
#undef F1
#undef F2
#undef KF
#undef KI
}

/* ---- MaxUnpool ---- */

#define UNPOOL_MAX_WORK (1 << 24)

/* MaxUnpool (ONNX opset 11, cpu_index.c) without output_shape: Y =
 * zeros, Y[I[i]] = X[i] (the last i wins). A scatter has no place in one
 * invocation per output element, so each output element scans every
 * (X, I) pair for its flat index: numel(X) * numel(Y) work, refused above
 * UNPOOL_MAX_WORK at the bounds. Indices outside Y (an error on the CPU)
 * are never matched. */
static void emit_max_unpool(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0), *ind = input(s, n, 1), *os = input(s, n, 2);
  const dml_pkg_value_t *y = n->n_outputs ? val(s, n->outputs[0]) : NULL;
  const char *why = NULL;
  dml_klin_t lx = {0, -1, 0, 0}, ly = {0, -1, 0, 0};
  if (!x || !ind || !y)
    why = "absent input";
  else if (os)
    why = "the output_shape input";
  else if (!typed_ok(x) || !typed_ok(y) || y->type.dtype != x->type.dtype ||
           (ind->type.dtype != DML_DTYPE_I64 && ind->type.dtype != DML_DTYPE_I32) ||
           !typed_ok(ind))
    why = "X of a kernel dtype and I of i64 or i32";
  else if (!numel_of(&x->type, &lx) || !numel_of(&y->type, &ly) ||
           data_dependent(s, &y->type))
    why = "more than one symbolic dim";
  if (!why) {
    int64_t b = 1;
    if (lx.sym >= 0 && (uint32_t)lx.sym < s->g->n_symbols)
      b = s->g->symbols[lx.sym].bound;
    int64_t nx = lx.c * b + lx.c0, ny = ly.c * b + ly.c0;
    if (nx > 0 && ny > UNPOOL_MAX_WORK / nx) why = "too large for the gather form";
  }
  if (why) {
    dml_ksched_unsupported(s, node, why);
    return;
  }
  dml_kernel_t *K;
  const dml_kidx_t *co[DML_MAX_RANK];
  const dml_kidx_t *gid = elem_kernel(s, node, DML_KK_MOVE, &y->type, &K, co);
  if (!gid) return;
  dml_kdtype_t t = kdt(y);
  int32_t vi = DML_KVAR_FIRST_LOOP;
  const dml_kidx_t *i = dml_ki_var(p, vi);
  const dml_kval_t *hit =
      dml_kv_fn(p, DML_KF_EQ, dml_kv_cast(p, DML_KT_I64, load_at(s, ind, i)),
                dml_kv_idx(p, DML_KT_I64, gid));
  dml_kblock_t b = {0};
  K->n_regs = 1;
  dml_kblock_add(&b, assign(s, DML_KS_LET, 0, dml_kv_zero(p, t)));
  dml_kblock_add(
      &b,
      for_loop(s, vi, dml_ki_lin(p, lx),
               assign(s, DML_KS_SET, 0,
                      dml_kv_select(p, hit, load_at(s, x, i), dml_kv_reg_t(p, 0, t)))));
  dml_kblock_add(&b, store_at(s, y, gid, dml_kv_reg_t(p, 0, t)));
  elem_finish(s, K, &y->type, gid, b.first);
  lin_add(&K->bytes, ly, (int64_t)dml_kdtype_size(t));
}

/* ---- BatchNormalization in training mode ---- */

/* BatchNormalization with training_mode = 1 (ONNX opset 14/15, as
 * cpu_norm.c): per channel c the batch mean over every dim but 1, then the
 * population variance of x - mean (two passes, f32 sums where the CPU has
 * double), y = x * a + (B - mean * a) with a = scale / sqrt(var + epsilon),
 * and the optional running_mean = input_mean * momentum + mean * (1 -
 * momentum), running_var likewise. One invocation per channel looping
 * over its N x spatial elements. */
static void emit_bn_train(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0);
  const dml_pkg_value_t *y = n->n_outputs > 0 ? val(s, n->outputs[0]) : NULL,
                        *rm = n->n_outputs > 1 ? val(s, n->outputs[1]) : NULL,
                        *rv = n->n_outputs > 2 ? val(s, n->outputs[2]) : NULL;
  const dml_pkg_value_t *prm[4];
  const char *why = NULL;
  for (int i = 0; i < 4; i++) prm[i] = input(s, n, (uint32_t)i + 1);
  if (!x || !y || !prm[0] || !prm[1] || !prm[2] || !prm[3])
    why = "absent input";
  else if (!dml_attr_int(n->attrs, n->n_attrs, "training_mode", 0))
    why = "running_mean/running_var need training_mode=1";
  else if (!is_f32(x) || !is_f32(y) || (rm && !is_f32(rm)) || (rv && !is_f32(rv)))
    why = "only f32 is emitted";
  else if (x->type.rank < 2 || x->type.dims[1].sym >= 0)
    why = "needs a static channel dim";
  else if (data_dependent(s, &x->type))
    why = "a dim computed from run-time data";
  int64_t C = x ? x->type.dims[1].value : 0, sp = 1;
  for (int i = 0; !why && i < 4; i++)
    if (!is_f32(prm[i]) || prm[i]->type.rank != 1 || prm[i]->type.dims[0].sym >= 0 ||
        prm[i]->type.dims[0].value != C)
      why = "scale, B, mean and var must be f32 [C]";
  for (int32_t d = 2; !why && d < x->type.rank; d++) {
    if (x->type.dims[d].sym >= 0) why = "symbolic spatial dim";
    sp *= x->type.dims[d].value;
  }
  if (why) {
    dml_ksched_unsupported(s, node, why);
    return;
  }
  dml_kernel_t *K = dml_ksched_kernel(s, DML_KK_NORM, node);
  if (!K) return;
  K->local[0] = 64;
  K->items[0] = (dml_klin_t){C, -1, 0, 0};
  const dml_kidx_t *ch = dml_ki_var(p, DML_KVAR_GID_X), *N = dim_idx(s, x->type.dims[0]);
  int32_t vn = DML_KVAR_FIRST_LOOP, vi = vn + 1;
  /* x[(n * C + c) * sp + i] */
  const dml_kidx_t *xi =
      kadd(s, kmul(s, kadd(s, kmul(s, dml_ki_var(p, vn), kc(s, C)), ch), kc(s, sp)),
           dml_ki_var(p, vi));
  const dml_kval_t *xv = load_at(s, x, xi);
  double eps = dml_attr_float(n->attrs, n->n_attrs, "epsilon", 1e-5);
  double mom = dml_attr_float(n->attrs, n->n_attrs, "momentum", 0.9);
  dml_kblock_t b = {0};
  regs_t r = {s, &b, 0};
  const dml_kval_t *sum = let(&r, dml_kv_const(p, 0.0f));
  dml_kblock_add(&b, for_loop(s, vn, N,
                              for_loop(s, vi, kc(s, sp),
                                       assign(s, DML_KS_SET, sum->reg,
                                              dml_kv_fn(p, DML_KF_ADD, sum, xv)))));
  const dml_kval_t *cnt = let(&r, dml_kv_idx(p, DML_KT_F32, kmul(s, N, kc(s, sp))));
  const dml_kval_t *mean = let(&r, dml_kv_fn(p, DML_KF_DIV, sum, cnt));
  const dml_kval_t *ss = let(&r, dml_kv_const(p, 0.0f));
  const dml_kval_t *dv = dml_kv_fn(p, DML_KF_SUB, xv, mean);
  dml_kblock_add(&b,
                 for_loop(s, vn, N,
                          for_loop(s, vi, kc(s, sp),
                                   assign(s, DML_KS_SET, ss->reg,
                                          dml_kv_fn(p, DML_KF_ADD, ss,
                                                    dml_kv_fn(p, DML_KF_MUL, dv, dv))))));
  const dml_kval_t *var = let(&r, dml_kv_fn(p, DML_KF_DIV, ss, cnt));
  const dml_kval_t *a = let(
      &r, dml_kv_fn(p, DML_KF_DIV, load_at(s, prm[0], ch),
                    dml_kv_fn(p, DML_KF_SQRT,
                              dml_kv_fn(p, DML_KF_ADD, var, dml_kv_const(p, (float)eps)),
                              NULL)));
  const dml_kval_t *off = let(&r, dml_kv_fn(p, DML_KF_SUB, load_at(s, prm[1], ch),
                                            dml_kv_fn(p, DML_KF_MUL, mean, a)));
  dml_kblock_add(
      &b, for_loop(s, vn, N,
                   for_loop(s, vi, kc(s, sp),
                            store_at(s, y, xi,
                                     dml_kv_fn(p, DML_KF_ADD,
                                               dml_kv_fn(p, DML_KF_MUL, xv, a), off)))));
  const dml_kval_t *km = dml_kv_const(p, (float)mom),
                   *k1 = dml_kv_const(p, (float)(1 - mom));
  if (rm)
    dml_kblock_add(
        &b, store_at(s, rm, ch,
                     dml_kv_fn(p, DML_KF_ADD,
                               dml_kv_fn(p, DML_KF_MUL, load_at(s, prm[2], ch), km),
                               dml_kv_fn(p, DML_KF_MUL, mean, k1))));
  if (rv)
    dml_kblock_add(
        &b, store_at(s, rv, ch,
                     dml_kv_fn(p, DML_KF_ADD,
                               dml_kv_fn(p, DML_KF_MUL, load_at(s, prm[3], ch), km),
                               dml_kv_fn(p, DML_KF_MUL, var, k1))));
  K->n_regs = r.n;
  K->body = if_lt(s, ch, kc(s, C), b.first);
  dml_klin_t l = {0, -1, 0, 0};
  numel_syms(&x->type, &l);
  lin_add(&K->flops, l, 6);
  lin_add(&K->bytes, l, 12);
}

/* ---- entry points ---- */

int dml_ksched_spatial_handles(dml_op_t op) {
  switch (op) {
    case DML_OP_MAX_UNPOOL:
    case DML_OP_ROI_ALIGN:
    case DML_OP_GRID_SAMPLE:
    case DML_OP_RESIZE:
    case DML_OP_QUANTIZE_LINEAR:
    case DML_OP_DEQUANTIZE_LINEAR:
    case DML_OP_DYNAMIC_QUANTIZE_LINEAR:
    case DML_OP_MAT_MUL_INTEGER:
    case DML_OP_QLINEAR_MAT_MUL:
    case DML_OP_CONV_INTEGER:
    case DML_OP_QLINEAR_CONV: return 1;
    default: return 0;
  }
}

int dml_ksched_spatial_claims(const sched_t *s, uint32_t node) {
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = input(s, n, 0);
  switch (n->op) {
    case DML_OP_RESIZE:
    case DML_OP_QUANTIZE_LINEAR:
    case DML_OP_DEQUANTIZE_LINEAR:
    case DML_OP_DYNAMIC_QUANTIZE_LINEAR:
    case DML_OP_MAT_MUL_INTEGER:
    case DML_OP_QLINEAR_MAT_MUL:
    case DML_OP_CONV_INTEGER:
    case DML_OP_QLINEAR_CONV:
    case DML_OP_GRID_SAMPLE:
    case DML_OP_ROI_ALIGN:
    case DML_OP_MAX_UNPOOL: return 1;
    /* schedule.c has the inference form (an elementwise op) */
    case DML_OP_BATCH_NORMALIZATION:
      return dml_attr_int(n->attrs, n->n_attrs, "training_mode", 0) != 0 ||
             (n->n_outputs > 1 &&
              (n->outputs[1] != DML_PKG_NO_VALUE ||
               (n->n_outputs > 2 && n->outputs[2] != DML_PKG_NO_VALUE)));
    case DML_OP_PAD: /* pads fed at run time: schedule.c (emit_pad_rt) */
      return strcmp(dml_attr_string(n->attrs, n->n_attrs, "mode", "constant"),
                    "constant") != 0 &&
             !(n->n_outputs && n->outputs[0] != DML_PKG_NO_VALUE &&
               data_dependent(s, &s->fn->values[n->outputs[0]].type));
    /* schedule.c has the 1-D and 2-D f32, f16 and bf16 forms (with fused
     * epilogues) */
    case DML_OP_CONV:
    case DML_OP_CONV_TRANSPOSE:
    case DML_OP_AVERAGE_POOL: return x && x->type.rank == 5;
    case DML_OP_MAX_POOL:
      return x && (x->type.rank == 5 || dml_dtype_is_int(x->type.dtype) ||
                   (n->n_outputs > 1 && n->outputs[1] != DML_PKG_NO_VALUE));
    default: return 0;
  }
}

void dml_ksched_spatial_emit(sched_t *s, uint32_t node) {
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  switch (n->op) {
    case DML_OP_RESIZE: emit_resize(s, node); break;
    case DML_OP_PAD: emit_pad_mode(s, node); break;
    case DML_OP_GRID_SAMPLE: emit_grid_sample(s, node); break;
    case DML_OP_ROI_ALIGN: emit_roi_align(s, node); break;
    case DML_OP_MAX_UNPOOL: emit_max_unpool(s, node); break;
    case DML_OP_BATCH_NORMALIZATION: emit_bn_train(s, node); break;
    case DML_OP_QUANTIZE_LINEAR:
    case DML_OP_DEQUANTIZE_LINEAR: emit_quant(s, node); break;
    case DML_OP_DYNAMIC_QUANTIZE_LINEAR: emit_dynquant(s, node); break;
    case DML_OP_MAT_MUL_INTEGER:
    case DML_OP_QLINEAR_MAT_MUL: emit_qmatmul(s, node); break;
    case DML_OP_CONV_INTEGER:
    case DML_OP_QLINEAR_CONV: emit_window(s, node); break;
    case DML_OP_CONV:
    case DML_OP_CONV_TRANSPOSE:
    case DML_OP_AVERAGE_POOL:
    case DML_OP_MAX_POOL: emit_window(s, node); break;
    default: dml_ksched_unsupported(s, node, "no GPU kernel for this op"); break;
  }
}
