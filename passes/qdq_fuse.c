/*
 * qdq_fuse.c — QDQ patterns to integer ops (issue 19 part 2).
 *
 * Quantized ONNX models in the QDQ form (ONNX Runtime's quantize_static,
 * PyTorch's quantizers) compute every quantized layer as
 *
 *   DequantizeLinear(x) , DequantizeLinear(w) [, DequantizeLinear(b i32)]
 *     -> Conv | MatMul  [-> Relu | Clip]  -> QuantizeLinear
 *
 * in f32. This pass rewrites each such chain into one QLinearConv or
 * QLinearMatMul (ONNX opset 10) on the quantized tensors (a Gemm: a 1x1
 * QLinearConv between Reshapes; DQ(a) + DQ(b) -> Q: dmlc's QLinearAdd, the
 * chain's f32 operations in one pass), which the CPU runs
 * with int32 accumulation and the requantization in the epilogue
 * (runtime/cpu/cpu_qgemm.c). It also runs MaxPool directly on the quantized
 * tensor where DequantizeLinear -> MaxPool -> QuantizeLinear use the same
 * scale and zero point.
 *
 * Exactness (ONNX semantics up to the final rounding):
 *  - QLinearConv computes round((sum (x - zx)(w - zw) + B) * sx * sw / sy)
 *    + zy; the f32 chain computes the same sum of products of the
 *    dequantized values, rounded in f32 at each step. Only where the bias's
 *    scale is sx * sw[m] (as quantize_static writes it: the f32 product,
 *    checked to 2^-20 relative) and its zero point 0 does B fold in.
 *  - Relu and Clip(lo, hi) before QuantizeLinear are clamps of the
 *    quantized output: QuantizeLinear is monotone, so Q(max(v, 0)) =
 *    max(Q(v), Q(0)) = max(Q(v), zy), and Q(clip(v, lo, hi)) =
 *    clip(Q(v), Q(lo), Q(hi)). The range is the attribute
 *    `dml_clamp = [qlo, qhi]` on the QLinear node (dmlc's extension,
 *    honoured by its reference kernel, runtime/cpu/cpu_quant.c).
 *  - MaxPool commutes with the monotone DequantizeLinear (scale > 0), and
 *    QuantizeLinear(DequantizeLinear(q)) = q for the same scale/zero point.
 * Anything else (f32 bias, block quantization, a scale that is not a
 * positive finite constant, an intermediate value read elsewhere or a
 * function result) keeps its f32 form. Types must be known (runs after
 * shape-infer); it runs before const-fold, which would fold the weights'
 * DequantizeLinear into f32 constants. DMLC_NO_QDQ_FUSE=1 in the
 * environment turns it off (for A/B comparisons); so does a GPU target in
 * the package (dml_pass_options_t.fusion_aware): the GPU kernels have
 * neither dml_clamp nor QLinearAdd.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dml_passes.h"

static int is_q8(dml_dtype_t dt) {
  return dt == DML_DTYPE_U8 || dt == DML_DTYPE_I8;
}

/* A global with data (weights, scales, zero points); NULL otherwise. */
static const dml_ir_value_t *cst(const dml_ir_value_t *v) {
  if (!v || v->kind != DML_IR_VALUE_GLOBAL || !v->data ||
      (v->global_flags & DML_IR_GLOBAL_STATE) || !dml_type_is_static(&v->type))
    return NULL;
  return v;
}

static int64_t numel(const dml_type_t *t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->rank; i++) n *= t->dims[i].value;
  return n;
}

/* Defining node of v when it is `op`, v has exactly one use and is no
 * function result. */
static dml_ir_node_t *def_single(dml_ir_function_t *f, dml_ir_value_t *v, dml_op_t op) {
  if (!v || v->kind != DML_IR_VALUE_RESULT || !v->def || v->def->op != op) return NULL;
  if (dml_ir_value_num_uses(f, v) != 1) return NULL;
  for (uint32_t i = 0; i < f->n_results; i++)
    if (f->results[i] == v) return NULL;
  return v->def;
}

/* Defining DequantizeLinear of v (v may have other uses: it is read, not
 * removed). */
static dml_ir_node_t *def_dq(dml_ir_value_t *v) {
  if (!v || v->kind != DML_IR_VALUE_RESULT || !v->def ||
      v->def->op != DML_OP_DEQUANTIZE_LINEAR)
    return NULL;
  return v->def;
}

/* Scales: f32 constants, every element positive and finite. */
static int scales_ok(const dml_ir_value_t *s) {
  if (!cst(s) || s->type.dtype != DML_DTYPE_F32) return 0;
  const float *p = (const float *)s->data;
  for (int64_t i = 0; i < numel(&s->type); i++)
    if (!(p[i] > 0) || !isfinite(p[i])) return 0;
  return 1;
}

/* A Q/DQ node's quantization: input 0 q8 (or i32 for a bias), scale and
 * zero point (absent: 0 of the output dtype for Q, of x for DQ), per tensor
 * unless per_axis_n > 1 (then [n] along `axis`). Returns 0 when the node is
 * not of that form. */
typedef struct {
  dml_ir_value_t *scale, *zp; /* zp may be NULL: zero */
  dml_dtype_t dt;             /* the quantized dtype */
  int64_t n;                  /* scale elements */
} qparams_t;

static int qparams(const dml_ir_node_t *n, dml_dtype_t dt, int64_t per_axis_n,
                   int32_t axis, qparams_t *q) {
  const dml_attr_t *bs = dml_ir_node_attr(n, "block_size");
  if (n->n_inputs < 2 || (bs && bs->i != 0)) return 0;
  dml_ir_value_t *s = n->inputs[1], *z = n->n_inputs > 2 ? n->inputs[2] : NULL;
  if (!scales_ok(s)) return 0;
  int64_t ns = numel(&s->type);
  if (ns != 1) {
    if (per_axis_n <= 1 || ns != per_axis_n || s->type.rank != 1) return 0;
    const dml_ir_value_t *x = n->inputs[0];
    int64_t ax = 1;
    const dml_attr_t *a = dml_ir_node_attr(n, "axis");
    if (a) ax = a->i;
    if (ax < 0) ax += x->type.rank;
    if (ax != axis) return 0;
  }
  if (z) {
    if (!cst(z) || z->type.dtype != dt || numel(&z->type) != ns) return 0;
  }
  q->scale = s;
  q->zp = z;
  q->dt = dt;
  q->n = ns;
  return 1;
}

/* Zero point element i (0 when absent). */
static int64_t zp_at(const qparams_t *q, int64_t i) {
  if (!q->zp) return 0;
  const void *d = q->zp->data;
  switch (q->dt) {
    case DML_DTYPE_U8: return ((const uint8_t *)d)[i];
    case DML_DTYPE_I8: return ((const int8_t *)d)[i];
    case DML_DTYPE_I32: return ((const int32_t *)d)[i];
    default: return 0;
  }
}

/* The zero point operand: the node's, or a new constant 0 of dtype dt. */
static dml_status_t zp_value(dml_ir_module_t *m, const qparams_t *q,
                             dml_ir_value_t **out) {
  if (q->zp) {
    *out = q->zp;
    return DML_OK;
  }
  dml_type_t t = dml_type_static(q->dt, 0, NULL);
  uint8_t zero = 0;
  return dml_ir_module_add_constant(m, "qzp", &t, &zero, 1, out);
}

/* QuantizeLinear of a f32 value v as the kernel computes it (x / scale in
 * f32, rint, + zero point, saturation). */
static int64_t quantize(double v, float scale, int64_t zp, dml_dtype_t dt) {
  double lo = dt == DML_DTYPE_U8 ? 0 : -128, hi = dt == DML_DTYPE_U8 ? 255 : 127;
  double r = isinf(v) ? v : (double)(float)((float)v / scale);
  r = rint(r) + (double)zp;
  if (!(r >= lo)) r = lo;
  if (r > hi) r = hi;
  return (int64_t)r;
}

/* Value of a scalar f32 constant operand, or `dflt` when absent; 0 when it
 * is not a constant scalar. */
static int scalar_f(const dml_ir_value_t *v, double dflt, double *out) {
  if (!v) {
    *out = dflt;
    return 1;
  }
  if (!cst(v) || v->type.dtype != DML_DTYPE_F32 || numel(&v->type) != 1) return 0;
  *out = ((const float *)v->data)[0];
  return !isnan(*out);
}

static dml_status_t add_i64(dml_ir_module_t *m, const int64_t *v, int64_t n,
                            dml_ir_value_t **out) {
  dml_type_t t = dml_type_static(DML_DTYPE_I64, 1, &n);
  return dml_ir_module_add_constant(m, "qshape", &t, v, (size_t)n * 8, out);
}

/* Gemm(DQ(x) [N, K], DQ(w), [DQ(B i32 [M])]) with alpha = beta = 1, transA =
 * 0 -> Reshape(x, [0, K, 1, 1]), QLinearConv with w as [M, K, 1, 1] (a new
 * constant, transposed when transB = 0), Reshape(y, [0, M]): the same sums
 * and requantization as a 1x1 convolution, so the int8 kernels and the bias
 * folding of QLinearConv apply (QLinearMatMul has no bias). */
static dml_status_t gemm_as_conv(dml_ir_module_t *m, dml_ir_function_t *f,
                                 dml_ir_node_t *qn, dml_ir_node_t *act,
                                 dml_ir_node_t *core, const qparams_t *qy, int64_t qlo,
                                 int64_t qhi, int *done) {
  const dml_attr_t *al = dml_ir_node_attr(core, "alpha"),
                   *be = dml_ir_node_attr(core, "beta");
  if ((al && al->f != 1.0) || (be && be->f != 1.0) ||
      dml_attr_int(core->attrs, core->n_attrs, "transA", 0) != 0)
    return DML_OK;
  int tb = dml_attr_int(core->attrs, core->n_attrs, "transB", 0) != 0;
  dml_ir_node_t *dx = def_dq(core->inputs[0]), *dw = def_dq(core->inputs[1]);
  dml_ir_node_t *db =
      core->n_inputs > 2 && core->inputs[2] ? def_dq(core->inputs[2]) : NULL;
  if (!dx || !dw || (core->n_inputs > 2 && core->inputs[2] && !db)) return DML_OK;
  dml_ir_value_t *xq = dx->inputs[0], *wq = dw->inputs[0];
  if (!is_q8(xq->type.dtype) || !is_q8(wq->type.dtype) || !cst(wq) ||
      wq->type.rank != 2 || xq->type.rank != 2 || xq->type.dims[1].sym >= 0)
    return DML_OK;
  int64_t M = wq->type.dims[tb ? 0 : 1].value, K = wq->type.dims[tb ? 1 : 0].value;
  if (xq->type.dims[1].value != K || M * K == 0) return DML_OK;
  qparams_t qx, qw;
  if (!qparams(dx, xq->type.dtype, 1, 0, &qx) ||
      !qparams(dw, wq->type.dtype, M, tb ? 0 : 1, &qw))
    return DML_OK;
  float sx = ((const float *)qx.scale->data)[0];
  const float *sw = (const float *)qw.scale->data;
  if (db) {
    dml_ir_value_t *bq = db->inputs[0];
    qparams_t qb;
    if (bq->type.dtype != DML_DTYPE_I32 || bq->type.rank != 1 ||
        bq->type.dims[0].value != M || !qparams(db, DML_DTYPE_I32, M, 0, &qb))
      return DML_OK;
    for (int64_t i = 0; i < qb.n; i++) {
      double want = (double)sx * sw[qw.n == 1 ? 0 : i];
      double got = ((const float *)qb.scale->data)[i];
      if (zp_at(&qb, i) != 0 || fabs(got - want) > want * 0x1p-20) return DML_OK;
    }
  }
  /* w as [M, K, 1, 1]. */
  int64_t wd[4] = {M, K, 1, 1};
  dml_type_t wt = dml_type_static(wq->type.dtype, 4, wd);
  uint8_t *buf = (uint8_t *)dml_ir_alloc(m, (size_t)(M * K));
  if (!buf)
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "passes", "out of memory");
  const uint8_t *src = (const uint8_t *)wq->data;
  for (int64_t i = 0; i < M; i++)
    for (int64_t k = 0; k < K; k++) buf[i * K + k] = tb ? src[i * K + k] : src[k * M + i];
  dml_ir_value_t *w4, *s1, *s2, *zx, *zw, *zyv;
  DML_RETURN_IF_ERROR(
      dml_ir_module_add_constant(m, "qw", &wt, buf, (size_t)(M * K), &w4));
  int64_t sh1[4] = {0, K, 1, 1}, sh2[2] = {0, M};
  DML_RETURN_IF_ERROR(add_i64(m, sh1, 4, &s1));
  DML_RETURN_IF_ERROR(add_i64(m, sh2, 2, &s2));
  DML_RETURN_IF_ERROR(zp_value(m, &qx, &zx));
  DML_RETURN_IF_ERROR(zp_value(m, &qw, &zw));
  DML_RETURN_IF_ERROR(zp_value(m, qy, &zyv));
  dml_ir_value_t *y = qn->outputs[0];
  dml_ir_node_t *r1, *cv, *r2;
  dml_ir_value_t *r1in[2] = {xq, s1};
  DML_RETURN_IF_ERROR(dml_ir_node_create(f, DML_OP_RESHAPE, NULL, 2, r1in, 1, qn, &r1));
  dml_type_t t1 = xq->type;
  t1.rank = 4;
  t1.dims[2].value = t1.dims[3].value = 1;
  t1.dims[2].sym = t1.dims[3].sym = -1;
  r1->outputs[0]->type = t1;
  dml_ir_value_t *ins[9] = {
      r1->outputs[0],           qx.scale, zx, w4, qw.scale, zw, qy->scale, zyv,
      db ? db->inputs[0] : NULL};
  DML_RETURN_IF_ERROR(dml_ir_node_create(f, DML_OP_QLINEAR_CONV, core->name, db ? 9 : 8,
                                         ins, 1, qn, &cv));
  dml_type_t t2 = t1;
  t2.dtype = y->type.dtype;
  t2.dims[1] = y->type.dims[1];
  cv->outputs[0]->type = t2;
  int64_t lo0 = y->type.dtype == DML_DTYPE_U8 ? 0 : -128;
  if (qlo > lo0 || qhi < lo0 + 255) {
    int64_t r[2] = {qlo, qhi};
    DML_RETURN_IF_ERROR(dml_ir_node_set_attr_ints(cv, "dml_clamp", r, 2));
  }
  dml_ir_value_t *r2in[2] = {cv->outputs[0], s2};
  DML_RETURN_IF_ERROR(dml_ir_node_create(f, DML_OP_RESHAPE, NULL, 2, r2in, 1, qn, &r2));
  r2->outputs[0]->type = y->type;
  r2->outputs[0]->name = y->name;
  dml_ir_value_replace_all_uses(f, y, r2->outputs[0]);
  dml_ir_node_erase(qn);
  if (act) dml_ir_node_erase(act);
  dml_ir_node_erase(core);
  *done = 1;
  return DML_OK;
}

/* Rewrites the chain ending at QuantizeLinear `qn`; 1 when done. */
static dml_status_t fuse_one(dml_ir_module_t *m, dml_ir_function_t *f, dml_ir_node_t *qn,
                             int *done) {
  *done = 0;
  dml_ir_value_t *y = qn->outputs[0];
  if (!is_q8(y->type.dtype) || qn->inputs[0]->type.dtype != DML_DTYPE_F32) return DML_OK;
  qparams_t qy;
  if (!qparams(qn, y->type.dtype, 1, 0, &qy)) return DML_OK;
  int64_t zy = zp_at(&qy, 0), lo0 = y->type.dtype == DML_DTYPE_U8 ? 0 : -128;
  int64_t qlo = lo0, qhi = lo0 + 255;
  float sy = ((const float *)qy.scale->data)[0];

  /* Relu / Clip between the core op and Q. */
  dml_ir_value_t *v = qn->inputs[0];
  dml_ir_node_t *act = NULL, *core;
  if ((act = def_single(f, v, DML_OP_RELU)) || (act = def_single(f, v, DML_OP_CLIP))) {
    double lo = 0, hi = INFINITY;
    if (act->op == DML_OP_CLIP) {
      if (dml_ir_node_attr(act, "min") || dml_ir_node_attr(act, "max")) return DML_OK;
      if (!scalar_f(act->n_inputs > 1 ? act->inputs[1] : NULL, -INFINITY, &lo) ||
          !scalar_f(act->n_inputs > 2 ? act->inputs[2] : NULL, INFINITY, &hi) || lo > hi)
        return DML_OK;
    }
    int64_t a = quantize(lo, sy, zy, y->type.dtype),
            b = quantize(hi, sy, zy, y->type.dtype);
    qlo = a > qlo ? a : qlo;
    qhi = b < qhi ? b : qhi;
    v = act->inputs[0];
  }
  if (!(core = def_single(f, v, DML_OP_CONV)) &&
      !(core = def_single(f, v, DML_OP_MATMUL)) &&
      !(core = def_single(f, v, DML_OP_MAX_POOL)) &&
      !(core = def_single(f, v, DML_OP_GEMM)) && !(core = def_single(f, v, DML_OP_ADD)))
    return DML_OK;
  if (core->op == DML_OP_ADD) {
    /* DQ(a) + DQ(b) of one type, per tensor -> QLinearAdd (the same f32
     * operations in one pass). */
    dml_ir_node_t *da = def_dq(core->inputs[0]), *dbn = def_dq(core->inputs[1]);
    qparams_t qa, qb;
    if (!da || !dbn || !is_q8(da->inputs[0]->type.dtype) ||
        !is_q8(dbn->inputs[0]->type.dtype) ||
        !dml_type_equal(&da->inputs[0]->type, &dbn->inputs[0]->type) ||
        !qparams(da, da->inputs[0]->type.dtype, 1, 0, &qa) ||
        !qparams(dbn, dbn->inputs[0]->type.dtype, 1, 0, &qb))
      return DML_OK;
    dml_ir_value_t *za, *zb, *zyv;
    DML_RETURN_IF_ERROR(zp_value(m, &qa, &za));
    DML_RETURN_IF_ERROR(zp_value(m, &qb, &zb));
    DML_RETURN_IF_ERROR(zp_value(m, &qy, &zyv));
    dml_ir_value_t *ins[8] = {da->inputs[0], qa.scale, za,       dbn->inputs[0],
                              qb.scale,      zb,       qy.scale, zyv};
    dml_ir_node_t *nn;
    DML_RETURN_IF_ERROR(
        dml_ir_node_create(f, DML_OP_QLINEAR_ADD, core->name, 8, ins, 1, qn, &nn));
    if (qlo > lo0 || qhi < lo0 + 255) {
      int64_t r[2] = {qlo, qhi};
      DML_RETURN_IF_ERROR(dml_ir_node_set_attr_ints(nn, "dml_clamp", r, 2));
    }
    nn->outputs[0]->type = y->type;
    nn->outputs[0]->name = y->name;
    dml_ir_value_replace_all_uses(f, y, nn->outputs[0]);
    dml_ir_node_erase(qn);
    if (act) dml_ir_node_erase(act);
    dml_ir_node_erase(core);
    *done = 1;
    return DML_OK;
  }
  if (core->op == DML_OP_GEMM)
    return gemm_as_conv(m, f, qn, act, core, &qy, qlo, qhi, done);
  if (core->op == DML_OP_MAX_POOL) {
    /* Same scale and zero point on both sides, one output, no act. */
    dml_ir_node_t *dx = def_dq(core->inputs[0]);
    qparams_t qx;
    if (act || core->n_outputs != 1 || !dx ||
        !qparams(dx, dx->inputs[0]->type.dtype, 1, 0, &qx) || qx.dt != qy.dt ||
        ((const float *)qx.scale->data)[0] != sy || zp_at(&qx, 0) != zy)
      return DML_OK;
    dml_ir_node_t *nn;
    DML_RETURN_IF_ERROR(dml_ir_node_create(f, DML_OP_MAX_POOL, core->name, 1,
                                           &dx->inputs[0], 1, qn, &nn));
    for (uint32_t i = 0; i < core->n_attrs; i++)
      DML_RETURN_IF_ERROR(dml_ir_node_set_attr(nn, &core->attrs[i]));
    nn->outputs[0]->type = y->type;
    nn->outputs[0]->name = y->name;
    dml_ir_value_replace_all_uses(f, y, nn->outputs[0]);
    dml_ir_node_erase(qn);
    dml_ir_node_erase(core);
    *done = 1;
    return DML_OK;
  }
  int conv = core->op == DML_OP_CONV;
  dml_ir_node_t *dx = def_dq(core->inputs[0]), *dw = def_dq(core->inputs[1]);
  dml_ir_node_t *db =
      conv && core->n_inputs > 2 && core->inputs[2] ? def_dq(core->inputs[2]) : NULL;
  if (!dx || !dw || (conv && core->n_inputs > 2 && core->inputs[2] && !db)) return DML_OK;
  dml_ir_value_t *xq = dx->inputs[0], *wq = dw->inputs[0];
  if (!is_q8(xq->type.dtype) || !is_q8(wq->type.dtype) || !cst(wq)) return DML_OK;
  int32_t wr = wq->type.rank;
  if (wr < 1 || xq->type.rank < 1) return DML_OK;
  /* Per-channel weights: Conv's axis 0 ([M]), MatMul's last axis ([N], a
   * 2-D B). */
  int64_t M = conv ? wq->type.dims[0].value : wq->type.dims[wr - 1].value;
  if (!conv && wr != 2) M = 1;
  qparams_t qx, qw;
  if (!qparams(dx, xq->type.dtype, 1, 0, &qx) ||
      !qparams(dw, wq->type.dtype, M, conv ? 0 : wr - 1, &qw))
    return DML_OK;
  float sx = ((const float *)qx.scale->data)[0];
  const float *sw = (const float *)qw.scale->data;
  if (db) {
    /* B: i32 [M], zero point 0, scale sx * sw[m]. */
    dml_ir_value_t *bq = db->inputs[0];
    qparams_t qb;
    if (bq->type.dtype != DML_DTYPE_I32 || bq->type.rank != 1 ||
        bq->type.dims[0].value != wq->type.dims[0].value ||
        !qparams(db, DML_DTYPE_I32, bq->type.dims[0].value, 0, &qb))
      return DML_OK;
    for (int64_t i = 0; i < qb.n; i++) {
      double want = (double)sx * sw[qw.n == 1 ? 0 : i];
      double got = ((const float *)qb.scale->data)[i];
      if (zp_at(&qb, i) != 0 || fabs(got - want) > want * 0x1p-20) return DML_OK;
    }
  }
  dml_ir_value_t *zx, *zw, *zyv;
  DML_RETURN_IF_ERROR(zp_value(m, &qx, &zx));
  DML_RETURN_IF_ERROR(zp_value(m, &qw, &zw));
  DML_RETURN_IF_ERROR(zp_value(m, &qy, &zyv));
  dml_ir_value_t *ins[9] = {
      xq, qx.scale, zx, wq, qw.scale, zw, qy.scale, zyv, db ? db->inputs[0] : NULL};
  dml_ir_node_t *nn;
  DML_RETURN_IF_ERROR(
      dml_ir_node_create(f, conv ? DML_OP_QLINEAR_CONV : DML_OP_QLINEAR_MAT_MUL,
                         core->name, db ? 9 : 8, ins, 1, qn, &nn));
  if (conv)
    for (uint32_t i = 0; i < core->n_attrs; i++)
      DML_RETURN_IF_ERROR(dml_ir_node_set_attr(nn, &core->attrs[i]));
  if (qlo > lo0 || qhi < lo0 + 255) {
    int64_t r[2] = {qlo, qhi};
    DML_RETURN_IF_ERROR(dml_ir_node_set_attr_ints(nn, "dml_clamp", r, 2));
  }
  nn->outputs[0]->type = y->type;
  nn->outputs[0]->name = y->name;
  dml_ir_value_replace_all_uses(f, y, nn->outputs[0]);
  dml_ir_node_erase(qn);
  if (act) dml_ir_node_erase(act);
  dml_ir_node_erase(core);
  *done = 1;
  return DML_OK;
}

dml_status_t dml_pass_qdq_fuse(dml_ir_module_t *m, dml_pass_options_t *o) {
  /* The GPU targets' QLinearConv does not read dml_clamp and they have no
   * QLinearAdd: a package with a GPU target (fusion_aware) keeps the QDQ
   * form. */
  if (getenv("DMLC_NO_QDQ_FUSE") || (o && o->fusion_aware)) return DML_OK;
  for (uint32_t i = 0; i < m->n_functions; i++) {
    dml_ir_function_t *f = m->functions[i];
    for (dml_ir_node_t *n = f->first; n;) {
      dml_ir_node_t *next = n->next;
      if (n->op == DML_OP_QUANTIZE_LINEAR && n->n_outputs == 1 && n->n_inputs >= 2 &&
          n->inputs[0]->type.rank != DML_RANK_UNKNOWN) {
        int done;
        DML_RETURN_IF_ERROR(fuse_one(m, f, n, &done));
      }
      n = next;
    }
  }
  return DML_OK;
}
