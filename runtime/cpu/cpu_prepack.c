/*
 * cpu_prepack.c — dml_cpu_run_fused and the packing of constant weights
 * (dml_cpu.h): the entry points the CPU executor's fusion
 * (runtime/rt_cpu_fuse.c) calls instead of dml_cpu_run for Conv, Gemm and
 * MatMul nodes with constant weights.
 */
#include "cpu_internal.h"

dml_status_t dml_cpu_run_fused(const dml_cpu_call_t *c, const dml_cpu_epilogue_t *ep) {
  if (!c) return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "rt.cpu", "call is NULL");
  if (c->op == DML_OP_QLINEAR_CONV) {
    /* Packed weights only (the requantization is the op's own epilogue). */
    if (ep && (ep->scale || ep->shift || ep->relu || ep->residual))
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "QLinearConv takes packed weights only");
    if (!ep || !ep->packed) return dml_cpu_run(c);
    size_t need = dml_cpus_QLinearConv(c, 1);
    if (need > 0 && (!c->scratch || c->scratch_bytes < need))
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "scratch of %zu bytes given, %zu needed", c->scratch_bytes,
                           need);
    if (c->n_inputs < 8 || c->n_outputs < 1 || !c->inputs || !c->outputs)
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "needs 8 inputs and an output");
    return dml_cpu_qlinear_conv(c, ep->packed);
  }
  if (c->op == DML_OP_RNN || c->op == DML_OP_GRU || c->op == DML_OP_LSTM) {
    /* Packed W and R only (the gate math is the op's own epilogue). */
    if (ep && (ep->scale || ep->shift || ep->relu || ep->residual))
      return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                           "a recurrent op takes packed weights only");
    if (!ep || !ep->packed) return dml_cpu_run(c);
    DML_RETURN_IF_ERROR(dml_cpu_run_checks(c));
    return dml_cpu_rnn_packed(c, ep->packed);
  }
  if (c->op != DML_OP_CONV && c->op != DML_OP_GEMM && c->op != DML_OP_MATMUL)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "a fused epilogue needs a Conv, Gemm or MatMul");
  if (!ep || (!ep->scale && !ep->shift && !ep->relu && !ep->packed && !ep->residual &&
              !ep->nchwc))
    return dml_cpu_run(c);
  if (c->n_inputs < 2 || c->n_outputs < 1 || !c->inputs || !c->outputs)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT, "needs 2 inputs and an output");
  if (c->inputs[0].dtype != DML_DTYPE_F32)
    return dml_cpu_err_dtype(c, "fused input", c->inputs[0].dtype);
  if ((!ep->scale) != (!ep->shift))
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "a fused epilogue has both scale and shift or neither");
  if (ep->scale && c->op != DML_OP_CONV)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "a per-channel scale is fused into Conv only");
  if (ep->residual && c->op != DML_OP_CONV)
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "a residual is fused into Conv only");
  if (c->op == DML_OP_CONV && ep->nchwc) return dml_cpu_nchwc_conv(c, ep);
  /* The minimum, one thread's, as dml_cpu_run checks. */
  size_t need = c->op == DML_OP_CONV   ? dml_cpus_Conv(c, 1)
                : c->op == DML_OP_GEMM ? dml_cpus_Gemm(c, 1)
                                       : dml_cpus_MatMul(c, 1);
  if (need > 0 && (!c->scratch || c->scratch_bytes < need))
    return dml_cpu_error(c, DML_STATUS_INVALID_ARGUMENT,
                         "scratch of %zu bytes given, %zu needed", c->scratch_bytes,
                         need);
  if (c->op == DML_OP_CONV) return dml_cpu_conv_ep(c, ep);
  if (c->op == DML_OP_GEMM) return dml_cpu_gemm_ep(c, ep);
  return dml_cpu_matmul_ep(c, ep);
}

/* The GEMM B operand of a Gemm/MatMul weight: N, K and trans_b; 0 when it
 * has none (not 2-D f32). */
static int b_operand(dml_op_t op, const dml_tensor_t *w, const dml_attr_t *attrs,
                     uint32_t n_attrs, int64_t *N, int64_t *K, int *tb) {
  if (w->dtype != DML_DTYPE_F32 || w->rank != 2) return 0;
  *tb = op == DML_OP_GEMM && dml_attr_int(attrs, n_attrs, "transB", 0) != 0;
  *N = *tb ? w->dims[0] : w->dims[1];
  *K = *tb ? w->dims[1] : w->dims[0];
  return 1;
}

size_t dml_cpu_prepack_bytes(dml_op_t op, const dml_tensor_t *w, const dml_attr_t *attrs,
                             uint32_t n_attrs) {
  int64_t N, K;
  int tb;
  if (!w) return 0;
  if (op == DML_OP_QLINEAR_CONV)
    return dml_cpu_qconv_prepack_bytes(w, dml_attr_int(attrs, n_attrs, "group", 1));
  if (op == DML_OP_CONV)
    return dml_cpu_conv_prepack_floats(w, dml_attr_int(attrs, n_attrs, "group", 1)) *
           sizeof(float);
  if ((op == DML_OP_GEMM || op == DML_OP_MATMUL) &&
      b_operand(op, w, attrs, n_attrs, &N, &K, &tb))
    return dml_cpu_sgemm_packed_b_floats(N, K) * sizeof(float);
  return 0;
}

void dml_cpu_prepack(dml_op_t op, const dml_tensor_t *w, const dml_attr_t *attrs,
                     uint32_t n_attrs, void *dst) {
  int64_t N, K;
  int tb;
  if (dml_cpu_prepack_bytes(op, w, attrs, n_attrs) == 0) return;
  if (op == DML_OP_QLINEAR_CONV)
    dml_cpu_qconv_prepack(w, dml_attr_int(attrs, n_attrs, "group", 1), dst);
  else if (op == DML_OP_CONV)
    dml_cpu_conv_prepack(w, dml_attr_int(attrs, n_attrs, "group", 1), (float *)dst);
  else if (b_operand(op, w, attrs, n_attrs, &N, &K, &tb))
    dml_cpu_sgemm_pack_b(tb, N, K, (const float *)w->data, w->dims[1], (float *)dst);
}
