/*
 * cpu_bitwise.c — BitwiseAnd, BitwiseOr, BitwiseXor (numpy broadcasting)
 * and BitwiseNot (ONNX opset 18, "BitwiseAnd" ...): the bits of integer
 * operands of one dtype (u8..u64, i8..i64), the result of that dtype.
 */
#include "cpu_internal.h"

typedef struct {
  dml_op_t op;
  dml_dtype_t dt;
  const void *a, *b;
  void *o;
  int64_t sa, sb;
} bitwise_ctx_t;

static void bitwise_row(void *vctx, int64_t oo, const int64_t *offs, int64_t n) {
  const bitwise_ctx_t *g = (const bitwise_ctx_t *)vctx;
  for (int64_t i = 0; i < n; i++) {
    uint64_t x = (uint64_t)dml_load_i64(g->dt, g->a, (size_t)(offs[0] + i * g->sa));
    uint64_t y = (uint64_t)dml_load_i64(g->dt, g->b, (size_t)(offs[1] + i * g->sb));
    uint64_t r = g->op == DML_OP_BITWISE_AND  ? x & y
                 : g->op == DML_OP_BITWISE_OR ? x | y
                                              : x ^ y;
    dml_store_i64(g->dt, g->o, (size_t)(oo + i), (int64_t)r);
  }
}

dml_status_t dml_cpuk_Bitwise(const dml_cpu_call_t *c) {
  const dml_tensor_t *a = &c->inputs[0];
  dml_tensor_t *o = &c->outputs[0];
  dml_dtype_t dt = a->dtype;
  if (!dml_dtype_is_int(dt)) return dml_cpu_err_dtype(c, "input", dt);
  if (o->dtype != dt) return dml_cpu_err_dtype(c, "output", o->dtype);
  if (c->op == DML_OP_BITWISE_NOT) {
    int64_t n = dml_cpu_numel(a);
    if (dml_cpu_numel(o) != n)
      return dml_cpu_err_shapes(c, "output size differs from input");
    for (int64_t i = 0; i < n; i++)
      dml_store_i64(dt, o->data, (size_t)i,
                    (int64_t) ~(uint64_t)dml_load_i64(dt, a->data, (size_t)i));
    return DML_OK;
  }
  const dml_tensor_t *b = &c->inputs[1];
  if (b->dtype != dt) return dml_cpu_err_dtype(c, "input", b->dtype);
  dml_cpu_bcast_t bc;
  const dml_tensor_t *ins[2] = {a, b};
  if (dml_cpu_bcast_init(&bc, o->dims, o->rank, ins, 2))
    return dml_cpu_err_shapes(c, "inputs do not broadcast");
  bitwise_ctx_t g = {c->op,
                     dt,
                     a->data,
                     b->data,
                     o->data,
                     bc.rank ? bc.strides[0][bc.rank - 1] : 0,
                     bc.rank ? bc.strides[1][bc.rank - 1] : 0};
  dml_cpu_bcast_walk(&bc, bitwise_row, &g);
  return DML_OK;
}
