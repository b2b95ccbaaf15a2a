/*
 * cpu_dispatch.c — the CPU kernel table, dml_cpu_run(), and the helpers
 * shared by every kernel family (errors, axes, broadcasting).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cpu_index.h"
#include "cpu_internal.h"

/* ======================================================================
 * Errors
 * ====================================================================== */

static void op_label(const dml_cpu_call_t *c, char *buf, size_t cap) {
  snprintf(buf, cap, "rt.cpu.%s", dml_op_name(c->op));
}

static dml_status_t add_node(const dml_cpu_call_t *c, dml_status_t s) {
  if (c->node_name && c->node_name[0])
    s = dml_status_detail(s, "node '%s'", c->node_name);
  return s;
}

dml_status_t dml_cpu_error(const dml_cpu_call_t *c, dml_status_code_t code,
                           const char *fmt, ...) {
  char op[64], reason[512];
  op_label(c, op, sizeof op);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  return add_node(c, dml_status_make(code, op, "%s", reason));
}

dml_status_t dml_cpu_err_dtype(const dml_cpu_call_t *c, const char *what,
                               dml_dtype_t dt) {
  return dml_cpu_error(c, DML_STATUS_UNIMPLEMENTED, "%s dtype %s is not supported by %s",
                       what, dml_dtype_name(dt), dml_op_name(c->op));
}

static dml_status_t add_shapes(const dml_cpu_call_t *c, dml_status_t s) {
  char buf[160];
  for (uint32_t i = 0; i < c->n_inputs; i++) {
    const dml_tensor_t *t = &c->inputs[i];
    if (t->dtype == DML_DTYPE_INVALID) {
      s = dml_status_detail(s, "input %u: absent", i);
      continue;
    }
    s = dml_status_detail(s, "input %u: %s %s", i, dml_dtype_name(t->dtype),
                          dml_dims_str(t->dims, t->rank, buf, sizeof buf));
  }
  for (uint32_t i = 0; i < c->n_outputs; i++) {
    const dml_tensor_t *t = &c->outputs[i];
    s = dml_status_detail(s, "output %u: %s %s", i, dml_dtype_name(t->dtype),
                          dml_dims_str(t->dims, t->rank, buf, sizeof buf));
  }
  return s;
}

dml_status_t dml_cpu_err_shapes(const dml_cpu_call_t *c, const char *fmt, ...) {
  char op[64], reason[512];
  op_label(c, op, sizeof op);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  return add_shapes(
      c, add_node(c, dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "%s", reason)));
}

/* ======================================================================
 * Helpers
 * ====================================================================== */

int dml_cpu_norm_axis(int64_t a, int64_t rank, int64_t *out) {
  if (a < -rank || a >= rank) return -1;
  *out = a < 0 ? a + rank : a;
  return 0;
}

int64_t dml_cpu_read_ints(const dml_tensor_t *t, int64_t *out, int64_t cap) {
  if (!t || !(dml_dtype_is_int(t->dtype))) return -1;
  int64_t n = dml_cpu_numel(t);
  if (n < 0 || n > cap) return -1;
  if (n > 0 && !t->data) return -1;
  for (int64_t i = 0; i < n; i++) out[i] = dml_load_i64(t->dtype, t->data, (size_t)i);
  return n;
}

double dml_cpu_scalar_f64(const dml_tensor_t *t) {
  if (!t || !t->data || dml_cpu_numel(t) < 1) return 0.0;
  return dml_load_f64(t->dtype, t->data, 0);
}

void dml_cpu_strides(const int64_t *dims, int32_t rank, int64_t *strides) {
  int64_t s = 1;
  for (int32_t i = rank - 1; i >= 0; i--) {
    strides[i] = s;
    s *= dims[i];
  }
}

int dml_cpu_bcast_init(dml_cpu_bcast_t *b, const int64_t *out_dims, int32_t out_rank,
                       const dml_tensor_t *const *ins, int n_in) {
  int64_t st[DML_CPU_BCAST_MAX_IN][DML_MAX_RANK];
  memset(b, 0, sizeof *b);
  b->n_in = n_in;
  if (out_rank < 0 || out_rank > DML_MAX_RANK || n_in > DML_CPU_BCAST_MAX_IN) return -1;
  for (int k = 0; k < n_in; k++) {
    const dml_tensor_t *t = ins[k];
    if (t->rank > out_rank || t->rank < 0) return -1;
    int32_t off = out_rank - t->rank;
    int64_t s = 1;
    for (int32_t d = out_rank - 1; d >= 0; d--) {
      if (d < off) {
        st[k][d] = 0;
        continue;
      }
      int64_t id = t->dims[d - off];
      if (id == out_dims[d]) {
        st[k][d] = id == 1 ? 0 : s;
      } else if (id == 1) {
        st[k][d] = 0;
      } else {
        return -1;
      }
      s *= id;
    }
  }
  /* Drop size-1 dims and merge dims where every input is contiguous across
   * the pair. */
  int32_t r = 0;
  for (int32_t d = 0; d < out_rank; d++) {
    if (out_dims[d] == 1) continue;
    if (r > 0) {
      int merge = 1;
      for (int k = 0; k < n_in; k++)
        if (b->strides[k][r - 1] != st[k][d] * out_dims[d]) merge = 0;
      if (merge) {
        b->dims[r - 1] *= out_dims[d];
        for (int k = 0; k < n_in; k++) b->strides[k][r - 1] = st[k][d];
        continue;
      }
    }
    b->dims[r] = out_dims[d];
    for (int k = 0; k < n_in; k++) b->strides[k][r] = st[k][d];
    r++;
  }
  if (r == 0) {
    /* Scalar (or all ones): one element. */
    b->dims[0] = 1;
    for (int k = 0; k < n_in; k++) b->strides[k][0] = 0;
    r = 1;
  }
  /* Zero-size outputs: keep the zero dim so loops do nothing. */
  for (int32_t d = 0; d < out_rank; d++)
    if (out_dims[d] == 0) {
      b->dims[0] = 0;
      break;
    }
  b->rank = r;
  return 0;
}

void dml_cpu_bcast_walk(const dml_cpu_bcast_t *b, dml_cpu_row_fn fn, void *ctx) {
  int32_t r = b->rank;
  int64_t total = 1;
  for (int32_t d = 0; d < r; d++) total *= b->dims[d];
  if (total <= 0) return;
  int64_t inner = b->dims[r - 1], outer = total / inner;
  int64_t idx[DML_MAX_RANK] = {0};
  int64_t offs[DML_CPU_BCAST_MAX_IN] = {0};
  for (int64_t o = 0; o < outer; o++) {
    for (int k = 0; k < b->n_in; k++) {
      int64_t off = 0;
      for (int32_t d = 0; d < r - 1; d++) off += idx[d] * b->strides[k][d];
      offs[k] = off;
    }
    fn(ctx, o * inner, offs, inner);
    for (int32_t d = r - 2; d >= 0; d--) {
      if (++idx[d] < b->dims[d]) break;
      idx[d] = 0;
    }
  }
}

int dml_cpu_broadcast_copy(const dml_tensor_t *src, dml_tensor_t *dst) {
  dml_cpu_bcast_t b;
  const dml_tensor_t *ins[1] = {src};
  if (dml_cpu_bcast_init(&b, dst->dims, dst->rank, ins, 1)) return -1;
  size_t es = dml_dtype_size(dst->dtype);
  int64_t total = dml_cpu_numel(dst);
  if (total <= 0) return 0;
  int32_t r = b.rank;
  int64_t inner = b.dims[r - 1], is = b.strides[0][r - 1];
  int64_t idx[DML_MAX_RANK] = {0};
  const char *s = (const char *)src->data;
  char *d = (char *)dst->data;
  int64_t outer = total / inner;
  for (int64_t o = 0; o < outer; o++) {
    int64_t off = 0;
    for (int32_t k = 0; k < r - 1; k++) off += idx[k] * b.strides[0][k];
    if (is == 1) {
      memcpy(d, s + (size_t)off * es, (size_t)inner * es);
      d += (size_t)inner * es;
    } else if (es == 4) {
      uint32_t v;
      memcpy(&v, s + (size_t)off * es, 4);
      uint32_t *dd = (uint32_t *)(void *)d;
      for (int64_t i = 0; i < inner; i++) dd[i] = v;
      d += (size_t)inner * 4;
    } else {
      for (int64_t i = 0; i < inner; i++, d += es) memcpy(d, s + (size_t)off * es, es);
    }
    for (int32_t k = r - 2; k >= 0; k--) {
      if (++idx[k] < b.dims[k]) break;
      idx[k] = 0;
    }
  }
  return 0;
}

/* ======================================================================
 * The table
 * ====================================================================== */

typedef struct {
  dml_cpu_kernel_fn run;
  dml_cpu_scratch_fn scratch;
} entry_t;

#define K(op, fn) [DML_OP_##op] = {dml_cpuk_##fn, NULL}
#define KS(op, fn) [DML_OP_##op] = {dml_cpuk_##fn, dml_cpus_##fn}

static const entry_t k_table[DML_OP_COUNT_] = {
/* the formula table's ops (runtime/base/ew_ops.def) */
#define DML_EW(e, attrs, value, grad) K(e, EwTable),
#include "ew_ops.def"
#undef DML_EW
    K(ABS, Unary),
    K(NEG, Unary),
    K(RELU, Unary),
    K(SIGMOID, Unary),
    K(TANH, Unary),
    K(SQRT, Unary),
    K(EXP, Unary),
    K(LOG, Unary),
    K(RECIPROCAL, Unary),
    K(FLOOR, Unary),
    K(CEIL, Unary),
    K(ROUND, Unary),
    K(SIGN, Unary),
    K(SIN, Unary),
    K(COS, Unary),
    K(NOT, Unary),
    K(CAST, Cast),
    K(CLIP, Clip),
    K(IDENTITY, View),
    K(ADD, Binary),
    K(SUB, Binary),
    K(MUL, Binary),
    K(DIV, Binary),
    K(POW, Binary),
    K(MOD, Binary),
    K(PRELU, PRelu),
    K(EQUAL, Binary),
    K(LESS, Binary),
    K(LESS_OR_EQUAL, Binary),
    K(GREATER, Binary),
    K(GREATER_OR_EQUAL, Binary),
    K(AND, Binary),
    K(OR, Binary),
    K(XOR, Binary),
    K(MAX, Variadic),
    K(MIN, Variadic),
    K(SUM, Variadic),
    K(MEAN, Variadic),
    K(WHERE, Where),
    KS(MATMUL, MatMul),
    KS(GEMM, Gemm),
    KS(CONV, Conv),
    KS(CONV_TRANSPOSE, ConvTranspose),
    K(MAX_POOL, MaxPool),
    K(AVERAGE_POOL, AveragePool),
    K(GLOBAL_AVERAGE_POOL, GlobalPool),
    K(GLOBAL_MAX_POOL, GlobalPool),
    K(BATCH_NORMALIZATION, BatchNormalization),
    K(LAYER_NORMALIZATION, LayerNormalization),
    K(RMS_NORMALIZATION, RMSNormalization),
    KS(ATTENTION, Attention),
    K(ROTARY_EMBEDDING, RotaryEmbedding),
    K(BITWISE_AND, Bitwise),
    K(BITWISE_OR, Bitwise),
    K(BITWISE_XOR, Bitwise),
    K(BITWISE_NOT, Bitwise),
    K(LP_NORMALIZATION, LpNormalization),
    K(GROUP_NORMALIZATION, GroupNormalization),
    K(INSTANCE_NORMALIZATION, InstanceNormalization),
    K(SOFTMAX, Softmax),
    K(LOG_SOFTMAX, Softmax),
    KS(REDUCE_SUM, Reduce),
    KS(REDUCE_MEAN, Reduce),
    KS(REDUCE_MAX, Reduce),
    KS(REDUCE_MIN, Reduce),
    KS(REDUCE_PROD, Reduce),
    K(ARG_MAX, ArgReduce),
    K(ARG_MIN, ArgReduce),
    K(RESHAPE, View),
    K(FLATTEN, View),
    K(SQUEEZE, View),
    K(UNSQUEEZE, View),
    K(TRANSPOSE, Transpose),
    K(CONCAT, Concat),
    K(SPLIT, Split),
    K(SLICE, Slice),
    K(GATHER, Gather),
    K(SHAPE, Shape),
    K(SIZE, Size),
    K(EXPAND, Expand),
    K(TILE, Tile),
    KS(PAD, Pad),
    K(CONSTANT_OF_SHAPE, ConstantOfShape),
    K(RANGE, Range),
    KS(RESIZE, Resize),
    K(DROPOUT, Dropout),
    K(GATHER_ELEMENTS, GatherElements),
    K(SCATTER_ELEMENTS, ScatterElements),
    K(GATHER_ND, GatherND),
    K(SCATTER_ND, ScatterND),
    K(ONE_HOT, OneHot),
    K(DEPTH_TO_SPACE, DepthToSpace),
    K(SPACE_TO_DEPTH, SpaceToDepth),
    KS(TOP_K, TopK),
    K(REVERSE_SEQUENCE, ReverseSequence),
    KS(EINSUM, Einsum),
    KS(DET, Det),
    K(MAX_UNPOOL, MaxUnpool),
    K(GRID_SAMPLE, GridSample),
    K(ROI_ALIGN, RoiAlign),
    KS(RNN, RNN),
    KS(GRU, GRU),
    KS(LSTM, LSTM),
    K(NEGATIVE_LOG_LIKELIHOOD_LOSS, NegativeLogLikelihoodLoss),
    KS(SOFTMAX_CROSS_ENTROPY_LOSS, SoftmaxCrossEntropyLoss),
    K(QUANTIZE_LINEAR, QuantizeLinear),
    K(DEQUANTIZE_LINEAR, DequantizeLinear),
    K(FAKE_QUANTIZE, FakeQuantize),
    K(FAKE_QUANTIZE_GRAD, FakeQuantizeGrad),
    K(DYNAMIC_QUANTIZE_LINEAR, DynamicQuantizeLinear),
    K(MAT_MUL_INTEGER, MatMulInteger),
    K(CONV_INTEGER, ConvInteger),
    K(QLINEAR_MAT_MUL, QLinearMatMul),
    KS(QLINEAR_CONV, QLinearConv),
    K(QLINEAR_ADD, QLinearAdd),
    KS(MAT_MUL_WQ, MatMulWQ),
    K(NON_ZERO, NonZero),
    KS(UNIQUE, Unique),
    K(COMPRESS, Compress),
    KS(NON_MAX_SUPPRESSION, NonMaxSuppression),
    K(HANN_WINDOW, Window),
    K(HAMMING_WINDOW, Window),
    K(BLACKMAN_WINDOW, Window),
    K(DFT, DFT),
    K(STFT, STFT),
    K(COL2_IM, Col2Im),
    K(AFFINE_GRID, AffineGrid),
    K(DEFORM_CONV, DeformConv),
    K(MEL_WEIGHT_MATRIX, MelWeightMatrix),
    KS(TF_IDF_VECTORIZER, TfIdfVectorizer),
    K(SHRINK, Unary2),
    K(IS_INF, IsSpecial),
    K(IS_NAN, IsSpecial),
    K(BIT_SHIFT, BitShift),
    K(CAST_LIKE, CastLike),
    K(HARDMAX, Hardmax),
    K(REDUCE_L1, Reduce2),
    K(REDUCE_L2, Reduce2),
    K(REDUCE_LOG_SUM, Reduce2),
    K(REDUCE_LOG_SUM_EXP, Reduce2),
    K(REDUCE_SUM_SQUARE, Reduce2),
    K(CUM_SUM, CumSum),
    K(CUM_PROD, CumProd),
    K(BIT_CAST, BitCast),
    K(TENSOR_SCATTER, TensorScatter),
    K(TRILU, Trilu),
    K(EYE_LIKE, EyeLike),
    K(LRN, LRN),
    K(MEAN_VARIANCE_NORMALIZATION, MeanVarianceNormalization),
    K(ADAGRAD, Optimizer),
    K(MOMENTUM, Optimizer),
    K(ADAM, Optimizer),
    K(ASSIGN, Assign),
    KS(CONV_WEIGHT_GRAD, ConvWeightGrad),
    KS(CONV_INPUT_GRAD, ConvInputGrad),
    K(MAX_POOL_GRAD, MaxPoolGrad),
    K(AVERAGE_POOL_GRAD, AveragePoolGrad),
    K(RANDOM_UNIFORM, RandomUniform),
    K(RANDOM_NORMAL, RandomNormal),
    K(RANDOM_UNIFORM_LIKE, RandomUniform),
    K(RANDOM_NORMAL_LIKE, RandomNormal),
    K(BERNOULLI, Bernoulli),
    K(MULTINOMIAL, Multinomial),
    K(STRING_CONCAT, StringConcat),
    K(STRING_SPLIT, StringSplit),
    K(STRING_NORMALIZER, StringNormalizer),
    K(REGEX_FULL_MATCH, RegexFullMatch),
    K(LABEL_ENCODER, LabelEncoder),
    KS(TREE_ENSEMBLE, TreeEnsemble),
};

int dml_cpu_supports(dml_op_t op) {
  return (int)op > 0 && (int)op < DML_OP_COUNT_ && k_table[op].run != NULL;
}

/* Checks the call's arity and tensor descriptors before any kernel runs. */
static dml_status_t check_call(const dml_cpu_call_t *c) {
  const dml_op_info_t *info = dml_op_info(c->op);
  if (!info || !dml_cpu_supports(c->op))
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, "rt.cpu",
                           "no CPU kernel for op %d (%s)", (int)c->op,
                           dml_op_name(c->op));
  if ((int)c->n_inputs < info->min_inputs ||
      (info->max_inputs >= 0 && (int)c->n_inputs > info->max_inputs))
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "%u inputs given, expected %d..%d", c->n_inputs,
                         info->min_inputs, info->max_inputs);
  if ((int)c->n_outputs < info->min_outputs ||
      (info->max_outputs >= 0 && (int)c->n_outputs > info->max_outputs))
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "%u outputs given, expected %d..%d", c->n_outputs,
                         info->min_outputs, info->max_outputs);
  if (c->n_inputs && !c->inputs)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "inputs array is NULL");
  if (!c->outputs)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "outputs array is NULL");
  for (uint32_t i = 0; i < c->n_inputs; i++) {
    const dml_tensor_t *t = &c->inputs[i];
    if (t->dtype == DML_DTYPE_INVALID) {
      /* Absent optional input. Required ones must be present (variadic
       * ops require all). */
      if ((int)i < info->min_inputs || info->max_inputs < 0)
        return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                             "required input %u is absent", i);
      continue;
    }
    if ((int)t->dtype < 0 || t->dtype >= DML_DTYPE_COUNT_ || t->rank < 0 ||
        t->rank > DML_MAX_RANK)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "input %u has a bad dtype (%d) or rank (%d)", i, (int)t->dtype,
                           (int)t->rank);
    if (dml_tensor_bytes(t) == SIZE_MAX)
      return dml_cpu_err_shapes(c, "input %u has a negative or overflowing shape", i);
    if (!t->data && dml_tensor_bytes(t) > 0)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "input %u has no data", i);
  }
  for (uint32_t i = 0; i < c->n_outputs; i++) {
    const dml_tensor_t *t = &c->outputs[i];
    if (t->dtype == DML_DTYPE_INVALID) {
      if ((int)i < info->min_outputs)
        return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                             "required output %u is absent", i);
      continue;
    }
    if ((int)t->dtype < 0 || t->dtype >= DML_DTYPE_COUNT_ || t->rank < 0 ||
        t->rank > DML_MAX_RANK)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "output %u has a bad dtype (%d) or rank (%d)", i,
                           (int)t->dtype, (int)t->rank);
    if (dml_tensor_bytes(t) == SIZE_MAX)
      return dml_cpu_err_shapes(c, "output %u has a negative or overflowing shape", i);
    if (!t->data && dml_tensor_bytes(t) > 0)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "output %u has no data", i);
  }
  return DML_OK;
}

dml_status_t dml_cpu_run_checks(const dml_cpu_call_t *c) {
  if (!c) return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "rt.cpu", "call is NULL");
  if (c->output_capacity && dml_op_info(c->op) && dml_cpu_supports(c->op))
    DML_RETURN_IF_ERROR(dml_cpu_value_dims(c));
  DML_RETURN_IF_ERROR(check_call(c));
  const entry_t *e = &k_table[c->op];
  if (e->scratch) {
    size_t need = e->scratch(c, 1); /* the minimum: one thread */
    if (need == SIZE_MAX) return dml_cpu_err_shapes(c, "scratch size overflows");
    if (need > 0 && (!c->scratch || c->scratch_bytes < need))
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "scratch of %zu bytes given, %zu needed", c->scratch_bytes,
                           need);
  }
  return DML_OK;
}

dml_status_t dml_cpu_run(const dml_cpu_call_t *c) {
  if (!c) return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "rt.cpu", "call is NULL");
  if (c->output_capacity && dml_op_info(c->op) && dml_cpu_supports(c->op))
    DML_RETURN_IF_ERROR(dml_cpu_value_dims(c));
  DML_RETURN_IF_ERROR(check_call(c));
  dml_status_t sst = DML_OK;
  if (dml_cpu_strings_route(c, &sst)) return sst;
  const entry_t *e = &k_table[c->op];
  if (e->scratch) {
    size_t need = e->scratch(c, 1); /* the minimum: one thread */
    if (need == SIZE_MAX) return dml_cpu_err_shapes(c, "scratch size overflows");
    if (need > 0 && (!c->scratch || c->scratch_bytes < need))
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "scratch of %zu bytes given, %zu needed", c->scratch_bytes,
                           need);
  }
  return e->run(c);
}

size_t dml_cpu_scratch_bytes(const dml_cpu_call_t *c) {
  if (!c || !dml_cpu_supports(c->op)) return 0;
  const entry_t *e = &k_table[c->op];
  if (!e->scratch) return 0;
  /* Sizers read only shapes and attributes; guard against bad arity. */
  const dml_op_info_t *info = dml_op_info(c->op);
  if ((int)c->n_inputs < info->min_inputs || (int)c->n_outputs < info->min_outputs ||
      !c->inputs || !c->outputs)
    return 0;
  for (uint32_t i = 0; i < c->n_inputs; i++)
    if (c->inputs[i].rank < 0 || c->inputs[i].rank > DML_MAX_RANK) return 0;
  for (uint32_t i = 0; i < c->n_outputs; i++)
    if (c->outputs[i].rank < 0 || c->outputs[i].rank > DML_MAX_RANK) return 0;
  size_t n = e->scratch(c, dml_cpu_num_threads());
  return n == SIZE_MAX ? 0 : n;
}
