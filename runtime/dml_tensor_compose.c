/*
 * dml_tensor_compose.c — eager ops on GPU devices composed of the eager
 * kernel library's kernels and the tensor API's views (docs/tensor.md
 * "Composed ops"): LayerNormalization, BatchNormalization (inference and
 * training mode), InstanceNormalization, MaxPool, AveragePool,
 * GlobalAveragePool, GlobalMaxPool, Pad, Tile, Split, Reshape, Squeeze,
 * Unsqueeze, Flatten, GatherElements, GatherND and Einsum (every device),
 * ScatterND and ScatterElements with their reductions, TopK,
 * ConvTranspose, and MatMul, Gemm, Conv of f16 and bf16 through f32.
 * Every step is a dml_rt_tensor_op of the library (so the same code runs on
 * Vulkan and on CUDA); shapes, strides and attributes are taken at
 * dispatch, nothing is compiled per shape. The output dims and the checks
 * are the ops' shape rules (dml_rt_eager_rule) and the CPU kernels' own
 * geometry (dml_cpu_pool_geometry, dml_cpu_pad_source,
 * dml_cpu_elements_check), so no formula of the CPU's is written twice.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_cpu.h"
#include "dml_einsum.h"
#include "dml_shape.h"
#include "dml_tensor_eager.h"

#define NONE DML_RT_TENSOR_NONE

/* Drops the caller's reference to *t (a tensor made here, or an input
 * retained here), then forgets it. */
static void drop(dml_rt_tensor_t *t) {
  if (t->id) dml_status_free(dml_rt_tensor_release(*t));
  *t = NONE;
}

static dml_status_t op1(const char *op, dml_rt_tensor_t a, const dml_attr_t *at,
                        uint32_t na, dml_rt_tensor_t *y) {
  *y = NONE;
  return dml_rt_tensor_op(op, &a, 1, at, na, y, 1);
}

static dml_status_t op2(const char *op, dml_rt_tensor_t a, dml_rt_tensor_t b,
                        dml_rt_tensor_t *y) {
  dml_rt_tensor_t in[2] = {a, b};
  *y = NONE;
  return dml_rt_tensor_op(op, in, 2, NULL, 0, y, 1);
}

/* *acc = op(*acc, b); the old *acc (owned by the caller) freed. */
static dml_status_t op2_into(const char *op, dml_rt_tensor_t *acc, dml_rt_tensor_t b) {
  dml_rt_tensor_t y;
  dml_status_t e = op2(op, *acc, b, &y);
  if (!e) {
    drop(acc);
    *acc = y;
  }
  return e;
}

static dml_attr_t int_attr(const char *name, int64_t v) {
  dml_attr_t a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.kind = DML_ATTR_INT;
  a.i = v;
  return a;
}

static dml_attr_t ints_attr(const char *name, const int64_t *v, size_t n) {
  dml_attr_t a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.kind = DML_ATTR_INTS;
  a.ints = v;
  a.n = n;
  return a;
}

/* UNIMPLEMENTED for an attribute outside `ok` (NULL-terminated). */
static dml_status_t only_attrs(dml_op_t id, const dml_attr_t *attrs, uint32_t n,
                               const char *const *ok) {
  for (uint32_t i = 0; i < n; i++) {
    if (!attrs[i].name) continue;
    int found = 0;
    for (size_t j = 0; ok[j] && !found; j++) found = !strcmp(attrs[i].name, ok[j]);
    if (!found)
      return dml_status_make(DML_STATUS_UNIMPLEMENTED, dml_op_name(id),
                             "attribute '%s' is not taken by the GPU's eager %s in this "
                             "version",
                             attrs[i].name, dml_op_name(id));
  }
  return DML_OK;
}

/* Error s of a CPU check run for op `id` on device dev restated as op
 * `id`'s with the device in its reason (as the shape rules' errors are). */
static dml_status_t on_dev(dml_status_t s, dml_op_t id, dml_rt_device_t *dev) {
  if (!s) return s;
  dml_status_t r = dml_status_make(dml_status_code(s), dml_op_name(id), "%s (on %s)",
                                   dml_status_reason(s), dml_rt_device_name(dev));
  if (dml_status_details(s)[0]) r = dml_status_detail(r, "%s", dml_status_details(s));
  dml_status_free(s);
  return r;
}

/* The prologue of every composed op `id` on device dev, in this order:
 * UNIMPLEMENTED for an attribute outside `ok` (only_attrs);
 * INVALID_ARGUMENT naming the inputs when one that `need` marks (bit j:
 * input j) is absent; the op's eager shape rule (dml_rt_eager_rule: its
 * dims checks, errors naming the op and the device) into y[0 .. n_out-1];
 * the infos of inputs 0 .. n_info-1 (at most n) into info[] (zeroed for an
 * absent one). */
static dml_status_t prologue(dml_rt_device_t *dev, dml_op_t id, const char *const *ok,
                             uint32_t need, const dml_rt_tensor_t *in, uint32_t n,
                             const dml_attr_t *attrs, uint32_t na, dml_tensor_t *y,
                             uint32_t n_out, dml_rt_tensor_info_t *info,
                             uint32_t n_info) {
  DML_RETURN_IF_ERROR(only_attrs(id, attrs, na, ok));
  for (uint32_t j = 0; j < 32; j++)
    if ((need >> j & 1u) && (j >= n || !in[j].id))
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, dml_op_name(id),
                             "input %u is required (%u inputs given)", j, n);
  DML_RETURN_IF_ERROR(dml_rt_eager_rule(dev, id, in, n, attrs, na, y, n_out));
  if (n_info) memset(info, 0, sizeof *info * n_info);
  for (uint32_t j = 0; j < n_info && j < n; j++)
    if (in[j].id) DML_RETURN_IF_ERROR(dml_rt_tensor_info(in[j], &info[j]));
  return DML_OK;
}

static int is_half(dml_dtype_t d) {
  return d == DML_DTYPE_F16 || d == DML_DTYPE_BF16;
}

static dml_status_t cast(dml_rt_tensor_t x, dml_dtype_t to, dml_rt_tensor_t *y) {
  dml_attr_t a = int_attr("to", dml_dtype_onnx_code(to));
  return op1("Cast", x, &a, 1, y);
}

/* Op `id` of f16 or bf16 operands (dtype dt) run on their f32 casts
 * (exact), output 0 cast back to dt (one rounding; f32 accumulation). */
static dml_status_t via_f32(dml_op_t id, dml_dtype_t dt, const dml_rt_tensor_t *in,
                            uint32_t n, const dml_attr_t *attrs, uint32_t na,
                            dml_rt_tensor_t *out) {
  dml_rt_tensor_t c[8], y = NONE;
  dml_status_t e = DML_OK;
  if (n > 8)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, dml_op_name(id),
                           "%u inputs: at most 8", n);
  for (uint32_t j = 0; j < n; j++) c[j] = NONE;
  for (uint32_t j = 0; j < n && !e; j++) {
    if (!in[j].id) continue;
    dml_rt_tensor_info_t ij;
    e = dml_rt_tensor_info(in[j], &ij);
    if (!e && ij.dtype != dt) {
      char a[96];
      e = dml_status_detail(
          dml_status_make(DML_STATUS_INVALID_ARGUMENT, dml_op_name(id), "dtype mismatch"),
          "input 0 %s, input %u %s%s", dml_dtype_name(dt), j, dml_dtype_name(ij.dtype),
          dml_dims_str(ij.dims, ij.rank, a, sizeof a));
    }
    if (!e) e = cast(in[j], DML_DTYPE_F32, &c[j]);
  }
  if (!e) e = dml_rt_tensor_op(dml_op_name(id), c, n, attrs, na, &y, 1);
  if (!e) e = cast(y, dt, out);
  for (uint32_t j = 0; j < n; j++) drop(&c[j]);
  drop(&y);
  return e;
}

/* The moments of x (f32 or f64, of dtype dt) over `axes`, kept as dims of
 * 1: *mean = ReduceMean(x), *dev = x - mean, *sd = sqrt(ReduceMean(dev^2)
 * + eps) (ReduceMean, Sub, Mul, ReduceMean, Add, Sqrt: 6 dispatches).
 * mean may be NULL (dropped). */
static dml_status_t moments(dml_rt_device_t *dev, dml_rt_tensor_t x, dml_dtype_t dt,
                            const int64_t *axes, uint32_t na, double eps,
                            dml_rt_tensor_t *mean_out, dml_rt_tensor_t *dev_out,
                            dml_rt_tensor_t *sd_out) {
  dml_attr_t a[2] = {ints_attr("axes", axes, na), int_attr("keepdims", 1)};
  dml_rt_tensor_t mean = NONE, d = NONE, sq = NONE, var = NONE, ep = NONE;
  dml_status_t e = op1("ReduceMean", x, a, 2, &mean);
  if (!e) e = op2("Sub", x, mean, &d);
  if (!e) e = op2("Mul", d, d, &sq);
  if (!e) e = op1("ReduceMean", sq, a, 2, &var);
  if (!e) e = dml_rt_tensor_full(dev, dt, 0, NULL, eps, &ep);
  if (!e) e = op2_into("Add", &var, ep);
  if (!e) {
    dml_rt_tensor_t s = NONE;
    e = op1("Sqrt", var, NULL, 0, &s);
    if (!e) {
      drop(&var);
      var = s;
    }
  }
  if (!e) {
    if (mean_out) *mean_out = mean, mean = NONE;
    *dev_out = d, *sd_out = var;
    d = var = NONE;
  }
  drop(&mean);
  drop(&d);
  drop(&sq);
  drop(&var);
  drop(&ep);
  return e;
}

/* (x - mean) / sqrt(mean((x - mean)^2) + eps) over `axes` (x f32 or f64):
 * moments, then Div (7 dispatches). */
static dml_status_t standardize(dml_rt_device_t *dev, dml_rt_tensor_t x, dml_dtype_t dt,
                                const int64_t *axes, uint32_t na, double eps,
                                dml_rt_tensor_t *out) {
  dml_rt_tensor_t d = NONE, sd = NONE;
  dml_status_t e = moments(dev, x, dt, axes, na, eps, NULL, &d, &sd);
  if (!e) e = op2("Div", d, sd, out);
  drop(&d);
  drop(&sd);
  return e;
}

/* A [C] tensor viewed as [C, 1, ..., 1] of rank r - 1 (broadcast along
 * dim 1 of an [N, C, ...] operand). */
static dml_status_t per_channel(dml_rt_tensor_t p, int32_t r, dml_rt_tensor_t *v) {
  dml_rt_tensor_info_t ip;
  DML_RETURN_IF_ERROR(dml_rt_tensor_info(p, &ip));
  int64_t dims[DML_MAX_RANK];
  dims[0] = ip.rank ? ip.dims[0] : 1;
  for (int32_t d = 1; d < r - 1; d++) dims[d] = 1;
  return dml_rt_tensor_reshape(p, r - 1 > 0 ? r - 1 : 1, dims, v);
}

/* Checks that in[j] (j in [first, last]) are [C]. */
static dml_status_t check_channels(dml_op_t id, const dml_rt_tensor_t *in, uint32_t first,
                                   uint32_t last, int64_t C, const char *what) {
  for (uint32_t j = first; j <= last; j++) {
    dml_rt_tensor_info_t ij;
    DML_RETURN_IF_ERROR(dml_rt_tensor_info(in[j], &ij));
    if (ij.rank != 1 || ij.dims[0] != C) {
      char b[96];
      return dml_status_detail(
          dml_status_make(DML_STATUS_INVALID_ARGUMENT, dml_op_name(id), "shape mismatch"),
          "%s must be [%lld]: input %u is %s", what, (long long)C, j,
          dml_dims_str(ij.dims, ij.rank, b, sizeof b));
    }
  }
  return DML_OK;
}

static dml_status_t layer_norm(dml_rt_device_t *dev, const dml_rt_tensor_t *in,
                               uint32_t n, const dml_attr_t *attrs, uint32_t na,
                               const dml_rt_tensor_info_t *x, dml_rt_tensor_t *out) {
  static const char *const ok[] = {"axis", "epsilon", "stash_type", NULL};
  dml_tensor_t y;
  DML_RETURN_IF_ERROR(
      prologue(dev, DML_OP_LAYER_NORMALIZATION, ok, 0, in, n, attrs, na, &y, 1, NULL, 0));
  if (n < 2 || !in[1].id)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "LayerNormalization",
                           "Scale (input 1) is required");
  int64_t axis = dml_attr_int(attrs, na, "axis", -1);
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis >= x->rank)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "LayerNormalization",
                           "axis out of range");
  int64_t axes[DML_MAX_RANK];
  uint32_t nax = 0;
  for (int64_t d = axis; d < x->rank; d++) axes[nax++] = d;
  dml_rt_tensor_t z = NONE;
  dml_status_t e = standardize(dev, in[0], x->dtype, axes, nax,
                               dml_attr_float(attrs, na, "epsilon", 1e-5), &z);
  if (!e) e = op2_into("Mul", &z, in[1]);
  if (!e && n > 2 && in[2].id) e = op2_into("Add", &z, in[2]);
  if (e) {
    drop(&z);
    return e;
  }
  *out = z;
  return DML_OK;
}

static dml_status_t batch_norm(dml_rt_device_t *dev, const dml_rt_tensor_t *in,
                               uint32_t n, const dml_attr_t *attrs, uint32_t na,
                               const dml_rt_tensor_info_t *x, dml_rt_tensor_t *out) {
  static const char *const ok[] = {"epsilon", "momentum", "training_mode", NULL};
  const dml_op_t id = DML_OP_BATCH_NORMALIZATION;
  DML_RETURN_IF_ERROR(only_attrs(id, attrs, na, ok));
  if (dml_attr_int(attrs, na, "training_mode", 0))
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, "BatchNormalization",
                           "training_mode 1 is not taken by the GPU's eager "
                           "BatchNormalization in this version (inference form only)");
  dml_tensor_t y;
  DML_RETURN_IF_ERROR(dml_rt_eager_rule(dev, id, in, n, attrs, na, &y, 1));
  if (n != 5 || x->rank < 2)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "BatchNormalization",
                           "X [N, C, ...], scale, B, mean, var: %u inputs of X rank %d",
                           n, (int)x->rank);
  DML_RETURN_IF_ERROR(check_channels(id, in, 1, 4, x->dims[1], "scale, B, mean and var"));
  /* the CPU's affine form (dml_cpu_bn_affine): a = (1 / sqrt(var + eps)) *
   * scale, shift = B - mean * a, y = x * a + shift */
  dml_rt_tensor_t ep = NONE, one = NONE, a = NONE, sh = NONE, t = NONE, av = NONE,
                  sv = NONE, yy = NONE;
  dml_status_t e = dml_rt_tensor_full(dev, x->dtype, 0, NULL,
                                      dml_attr_float(attrs, na, "epsilon", 1e-5), &ep);
  if (!e) e = dml_rt_tensor_full(dev, x->dtype, 0, NULL, 1.0, &one);
  if (!e) e = op2("Add", in[4], ep, &a);
  if (!e) {
    e = op1("Sqrt", a, NULL, 0, &t);
    if (!e) drop(&a);
  }
  if (!e) e = op2("Div", one, t, &a);
  if (!e) e = op2_into("Mul", &a, in[1]);
  drop(&t);
  if (!e) e = op2("Mul", in[3], a, &t);
  if (!e) e = op2("Sub", in[2], t, &sh);
  if (!e) e = per_channel(a, x->rank, &av);
  if (!e) e = per_channel(sh, x->rank, &sv);
  if (!e) e = op2("Mul", in[0], av, &yy);
  if (!e) e = op2_into("Add", &yy, sv);
  dml_rt_tensor_t all[] = {ep, one, a, sh, t, av, sv};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) drop(&all[i]);
  if (e) {
    drop(&yy);
    return e;
  }
  *out = yy;
  return DML_OK;
}

static dml_status_t instance_norm(dml_rt_device_t *dev, const dml_rt_tensor_t *in,
                                  uint32_t n, const dml_attr_t *attrs, uint32_t na,
                                  const dml_rt_tensor_info_t *x, dml_rt_tensor_t *out) {
  static const char *const ok[] = {"epsilon", NULL};
  const dml_op_t id = DML_OP_INSTANCE_NORMALIZATION;
  dml_tensor_t y;
  DML_RETURN_IF_ERROR(prologue(dev, id, ok, 0, in, n, attrs, na, &y, 1, NULL, 0));
  if (n != 3 || x->rank < 3)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "InstanceNormalization",
                           "X [N, C, spatial...], scale, B: %u inputs of X rank %d", n,
                           (int)x->rank);
  DML_RETURN_IF_ERROR(check_channels(id, in, 1, 2, x->dims[1], "scale and B"));
  int64_t axes[DML_MAX_RANK];
  uint32_t nax = 0;
  for (int64_t d = 2; d < x->rank; d++) axes[nax++] = d;
  dml_rt_tensor_t z = NONE, sv = NONE, bv = NONE;
  dml_status_t e = standardize(dev, in[0], x->dtype, axes, nax,
                               dml_attr_float(attrs, na, "epsilon", 1e-5), &z);
  if (!e) e = per_channel(in[1], x->rank, &sv);
  if (!e) e = per_channel(in[2], x->rank, &bv);
  if (!e) e = op2_into("Mul", &z, sv);
  if (!e) e = op2_into("Add", &z, bv);
  drop(&sv);
  drop(&bv);
  if (e) {
    drop(&z);
    return e;
  }
  *out = z;
  return DML_OK;
}

/* *out = t as a contiguous f32 tensor (t itself with one more reference
 * when it is one already; else a Cast and/or a copy on the device). */
static dml_status_t f32_dense(dml_rt_tensor_t t, dml_rt_tensor_t *out) {
  dml_rt_tensor_info_t it;
  *out = NONE;
  DML_RETURN_IF_ERROR(dml_rt_tensor_info(t, &it));
  if (it.dtype != DML_DTYPE_F32) return cast(t, DML_DTYPE_F32, out); /* contiguous */
  return dml_rt_tensor_contiguous(t, out);
}

/* LayerNormalization, InstanceNormalization and BatchNormalization
 * (inference) of f32, f16 or bf16 x by the library's normalization kernel
 * (dml_rt_eager_norm, one dispatch on x): scale and B made f32 and
 * contiguous first where they are not (a Cast or a copy of the parameter
 * each), BatchNormalization's four parameters concatenated into one [4C]
 * f32 tensor (buffer copies) for the kernel's two parameter bindings.
 * Sets *done; leaves it 0 where the kernel does not apply (x of another
 * dtype, a library without the kernel): the composition then runs. */
static dml_status_t norm_fused(dml_rt_device_t *dev, dml_op_t id,
                               const dml_rt_tensor_t *in, uint32_t n,
                               const dml_attr_t *attrs, uint32_t na,
                               const dml_rt_tensor_info_t *x, dml_rt_tensor_t *out,
                               int *done) {
  *done = 0;
  if (x->dtype != DML_DTYPE_F32 && !is_half(x->dtype)) return DML_OK;
  static const char *const ok_ln[] = {"axis", "epsilon", "stash_type", NULL};
  static const char *const ok_in[] = {"epsilon", NULL};
  static const char *const ok_bn[] = {"epsilon", "momentum", "training_mode", NULL};
  const int ln = id == DML_OP_LAYER_NORMALIZATION, bn = id == DML_OP_BATCH_NORMALIZATION;
  DML_RETURN_IF_ERROR(only_attrs(id, attrs, na, ln ? ok_ln : bn ? ok_bn : ok_in));
  if (bn && dml_attr_int(attrs, na, "training_mode", 0))
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, "BatchNormalization",
                           "training_mode 1 is not taken by the GPU's eager "
                           "BatchNormalization in this version (inference form only)");
  dml_tensor_t y;
  DML_RETURN_IF_ERROR(dml_rt_eager_rule(dev, id, in, n, attrs, na, &y, 1));
  dml_rt_eager_norm_t nm;
  memset(&nm, 0, sizeof nm);
  nm.eps = dml_attr_float(attrs, na, "epsilon", 1e-5);
  nm.scale = nm.bias = NONE;
  int64_t axis = 2;
  if (ln) {
    if (n < 2 || !in[1].id)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "LayerNormalization",
                             "Scale (input 1) is required");
    axis = dml_attr_int(attrs, na, "axis", -1);
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis >= x->rank)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "LayerNormalization",
                             "axis out of range");
  } else if (bn) {
    if (n != 5 || x->rank < 2)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "BatchNormalization",
                             "X [N, C, ...], scale, B, mean, var: %u inputs of X rank %d",
                             n, (int)x->rank);
    DML_RETURN_IF_ERROR(
        check_channels(id, in, 1, 4, x->dims[1], "scale, B, mean and var"));
  } else {
    if (n != 3 || x->rank < 3)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "InstanceNormalization",
                             "X [N, C, spatial...], scale, B: %u inputs of X rank %d", n,
                             (int)x->rank);
    DML_RETURN_IF_ERROR(check_channels(id, in, 1, 2, x->dims[1], "scale and B"));
  }
  /* Layer and Instance: scale and B of x's dtype, as the CPU's kernels
   * require (BatchNormalization's may differ: T1, T2 of ONNX) */
  for (uint32_t j = 1; j < n && j < 3 && !bn; j++) {
    if (!in[j].id) continue;
    dml_rt_tensor_info_t ij;
    DML_RETURN_IF_ERROR(dml_rt_tensor_info(in[j], &ij));
    if (ij.dtype != x->dtype)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, dml_op_name(id),
                             "dtype mismatch (on %s): X %s, input %u %s",
                             dml_rt_device_name(dev), dml_dtype_name(x->dtype), j,
                             dml_dtype_name(ij.dtype));
  }
  /* rows: the dims before `axis` (Instance, Batch: N * C, channel r % C) */
  nm.rows = 1, nm.len = 1;
  for (int32_t d = 0; d < x->rank; d++) {
    if (d < axis)
      nm.rows *= x->dims[d];
    else
      nm.len *= x->dims[d];
  }
  nm.channels = ln ? 1 : x->dims[1];
  nm.given = bn;
  dml_rt_tensor_t p[4] = {NONE, NONE, NONE, NONE}, pk = NONE, xc = NONE, t = NONE;
  dml_status_t e = DML_OK;
  if (ln) { /* scale and B broadcast to the normalized dims, dense f32 */
    for (uint32_t j = 1; j < 3 && j < n && !e; j++) {
      if (!in[j].id) continue;
      e = dml_rt_tensor_expand(in[j], x->rank - (int32_t)axis, x->dims + axis, &t);
      if (!e) e = f32_dense(t, &p[j - 1]);
      drop(&t);
    }
    nm.scale = p[0], nm.bias = p[1];
    nm.s_js = nm.b_js = 1;
  } else if (!bn) { /* [C] each */
    for (uint32_t j = 1; j < 3 && !e; j++) e = f32_dense(in[j], &p[j - 1]);
    nm.scale = p[0], nm.bias = p[1];
    nm.s_cs = nm.b_cs = 1;
  } else { /* scale, B, mean, var as one [4C] f32 tensor: B a view of it */
    for (uint32_t j = 1; j < 5 && !e; j++) e = f32_dense(in[j], &p[j - 1]);
    dml_attr_t a0 = int_attr("axis", 0);
    if (!e) e = dml_rt_tensor_op("Concat", p, 4, &a0, 1, &pk, 1);
    const int64_t C = x->dims[1], ax = 0, st = C, en = 2 * C;
    if (!e) e = dml_rt_tensor_slice(pk, 1, &ax, &st, &en, NULL, &t);
    nm.scale = pk, nm.bias = t;
    nm.s_cs = nm.b_cs = 1;
    nm.m_off = 2 * C, nm.v_off = 3 * C;
  }
  if (!e) e = dml_rt_tensor_contiguous(in[0], &xc);
  if (!e) e = dml_rt_eager_norm(dev, id, xc, &nm, out, done);
  for (int j = 0; j < 4; j++) drop(&p[j]);
  drop(&pk);
  drop(&t);
  drop(&xc);
  return e;
}

/* BatchNormalization with training_mode 1 (ONNX BatchNormalization-15,
 * "Output case #1") on a GPU, composed: the batch mean and the population
 * variance over every dim but 1 in two passes as the CPU's kernel
 * (ReduceSum / count, then ReduceSum of the squared deviations / count;
 * f32 statistics for f32, f16 and bf16 x, f64 for f64), Y by the inference
 * form (the fused kernel or its composition) with those statistics on x
 * and scale and B in that dtype (16-bit x: cast, Y cast back), and
 * the optional outputs running_mean = input_mean * momentum + mean * (1 -
 * momentum), running_var = input_var * momentum + var * (1 - momentum) in
 * the dtypes of inputs 3 and 4: 8 dispatches for the statistics, the
 * inference form's, and 3 (and a Cast where the dtypes differ) per running
 * output. */
static dml_status_t bn_train(dml_rt_device_t *dev, const dml_rt_tensor_t *in, uint32_t n,
                             const dml_attr_t *attrs, uint32_t na,
                             const dml_rt_tensor_info_t *x, dml_rt_tensor_t *out,
                             uint32_t n_out) {
  static const char *const ok[] = {"epsilon", "momentum", "training_mode", NULL};
  const dml_op_t id = DML_OP_BATCH_NORMALIZATION;
  DML_RETURN_IF_ERROR(only_attrs(id, attrs, na, ok));
  if (n_out < 1 || n_out > 3)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "BatchNormalization",
                           "training_mode 1 gives 1 to 3 outputs (Y, running_mean, "
                           "running_var), not %u",
                           n_out);
  if (!dml_dtype_is_float(x->dtype))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "BatchNormalization",
                           "X must be a float dtype, not %s", dml_dtype_name(x->dtype));
  dml_tensor_t y;
  DML_RETURN_IF_ERROR(dml_rt_eager_rule(dev, id, in, n, attrs, na, &y, 1));
  if (n != 5 || x->rank < 2)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "BatchNormalization",
                           "X [N, C, ...], scale, B, mean, var: %u inputs of X rank %d",
                           n, (int)x->rank);
  const int64_t C = x->dims[1];
  DML_RETURN_IF_ERROR(check_channels(id, in, 1, 4, C, "scale, B, mean and var"));
  for (uint32_t j = 1; j < 5; j++) {
    dml_rt_tensor_info_t ij;
    DML_RETURN_IF_ERROR(dml_rt_tensor_info(in[j], &ij));
    if (!dml_dtype_is_float(ij.dtype))
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "BatchNormalization",
                             "input %u must be a float dtype, not %s", j,
                             dml_dtype_name(ij.dtype));
  }
  const dml_dtype_t st = x->dtype == DML_DTYPE_F64 ? DML_DTYPE_F64 : DML_DTYPE_F32;
  const double mom = dml_attr_float(attrs, na, "momentum", 0.9);
  int64_t axes[DML_MAX_RANK];
  uint32_t nax = 0;
  for (int64_t d = 0; d < x->rank; d++)
    if (d != 1) axes[nax++] = d;
  const int64_t cnt = C ? dml_dims_numel(x->dims, x->rank) / C : 0;
  dml_attr_t ra[2] = {ints_attr("axes", axes, nax), int_attr("keepdims", 1)};
  dml_rt_tensor_t xs = NONE, ct = NONE, mean = NONE, d = NONE, var = NONE, bm = NONE,
                  bv = NONE;
  for (uint32_t o = 0; o < n_out; o++) out[o] = NONE;
  dml_status_t e = DML_OK;
  if (x->dtype != st) {
    e = cast(in[0], st, &xs);
  } else {
    e = dml_rt_tensor_retain(in[0]);
    if (!e) xs = in[0];
  }
  if (!e) e = dml_rt_tensor_full(dev, st, 0, NULL, (double)cnt, &ct);
  if (!e) e = op1("ReduceSum", xs, ra, 2, &mean);
  if (!e) e = op2_into("Div", &mean, ct);
  if (!e) e = op2("Sub", xs, mean, &d);
  if (!e) e = op2_into("Mul", &d, d);
  if (!e) e = op1("ReduceSum", d, ra, 2, &var);
  if (!e) e = op2_into("Div", &var, ct);
  if (!e) e = dml_rt_tensor_reshape(mean, 1, &C, &bm);
  if (!e) e = dml_rt_tensor_reshape(var, 1, &C, &bv);
  dml_attr_t ea[1];
  uint32_t nea = 0;
  for (uint32_t i = 0; i < na; i++)
    if (attrs[i].name && !strcmp(attrs[i].name, "epsilon") && !nea) ea[nea++] = attrs[i];
  /* Y: the inference form on X and its parameters in the statistics'
   * dtype (16-bit X: its f32 cast, Y rounded back once) */
  dml_rt_tensor_t bi[5] = {xs, NONE, NONE, bm, bv}, ys = NONE;
  for (uint32_t j = 1; j < 3 && !e; j++) {
    dml_rt_tensor_info_t ij;
    e = dml_rt_tensor_info(in[j], &ij);
    if (!e && ij.dtype != st) {
      e = cast(in[j], st, &bi[j]);
    } else if (!e) {
      e = dml_rt_tensor_retain(in[j]);
      if (!e) bi[j] = in[j];
    }
  }
  if (!e) e = dml_rt_tensor_op("BatchNormalization", bi, 5, ea, nea, &ys, 1);
  if (!e && x->dtype != st)
    e = cast(ys, x->dtype, &out[0]);
  else if (!e) {
    out[0] = ys;
    ys = NONE;
  }
  drop(&ys);
  drop(&bi[1]);
  drop(&bi[2]);
  for (uint32_t o = 1; o < n_out && !e; o++) { /* running_mean, running_var */
    dml_rt_tensor_info_t ip;
    dml_rt_tensor_t b = o == 1 ? bm : bv, bc = NONE, m = NONE, m1 = NONE, t = NONE;
    e = dml_rt_tensor_info(in[2 + o], &ip);
    if (!e && ip.dtype != st) e = cast(b, ip.dtype, &bc);
    if (!e) e = dml_rt_tensor_full(dev, ip.dtype, 0, NULL, mom, &m);
    if (!e) e = dml_rt_tensor_full(dev, ip.dtype, 0, NULL, 1.0 - mom, &m1);
    if (!e) e = op2("Mul", in[2 + o], m, &t);
    if (!e) e = op2_into("Mul", &m1, bc.id ? bc : b);
    if (!e) e = op2("Add", t, m1, &out[o]);
    drop(&bc);
    drop(&m);
    drop(&m1);
    drop(&t);
  }
  if (e)
    for (uint32_t o = 0; o < n_out; o++) drop(&out[o]);
  dml_rt_tensor_t all[] = {xs, ct, mean, d, var, bm, bv};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) drop(&all[i]);
  return e;
}

/* LayerNormalization with its optional outputs Mean and InvStdDev (n_out
 * 2 or 3; dims and dtype as the shape rule gives them, stash_type's): Y as
 * the op of one output (the fused kernel), the statistics composed on x
 * (f16/bf16 cast to f32 first): moments' 6 dispatches, Reciprocal for
 * InvStdDev, and a Cast to the stash dtype where it is not x's compute
 * dtype. The statistics are the two-pass mean and variance of the f32 (f64)
 * data, not shifted as the kernel's: they agree with Y's to rounding. */
static dml_status_t layer_norm_stats(dml_rt_device_t *dev, const dml_rt_tensor_t *in,
                                     uint32_t n, const dml_attr_t *attrs, uint32_t na,
                                     const dml_rt_tensor_info_t *x, dml_rt_tensor_t *out,
                                     uint32_t n_out) {
  const dml_op_t id = DML_OP_LAYER_NORMALIZATION;
  dml_tensor_t y[3];
  DML_RETURN_IF_ERROR(dml_rt_eager_rule(dev, id, in, n, attrs, na, y, n_out));
  int64_t axis = dml_attr_int(attrs, na, "axis", -1);
  if (axis < 0) axis += x->rank; /* in range: the rule checked it */
  int64_t axes[DML_MAX_RANK];
  uint32_t nax = 0;
  for (int64_t d = axis; d < x->rank; d++) axes[nax++] = d;
  const dml_dtype_t ct = x->dtype == DML_DTYPE_F64 ? DML_DTYPE_F64 : DML_DTYPE_F32;
  dml_rt_tensor_t xs = NONE, mean = NONE, d = NONE, sd = NONE, inv = NONE;
  for (uint32_t o = 0; o < n_out; o++) out[o] = NONE;
  dml_status_t e = dml_rt_tensor_op(dml_op_name(id), in, n, attrs, na, &out[0], 1);
  if (!e && x->dtype != ct) {
    e = cast(in[0], ct, &xs);
  } else if (!e) {
    e = dml_rt_tensor_retain(in[0]);
    if (!e) xs = in[0];
  }
  if (!e)
    e = moments(dev, xs, ct, axes, nax, dml_attr_float(attrs, na, "epsilon", 1e-5), &mean,
                &d, &sd);
  if (!e && n_out > 2) e = op1("Reciprocal", sd, NULL, 0, &inv);
  dml_rt_tensor_t st[2] = {mean, inv};
  for (uint32_t o = 1; o < n_out && !e; o++) {
    if (y[o].dtype == ct) {
      out[o] = st[o - 1];
      st[o - 1] = NONE;
    } else {
      e = cast(st[o - 1], y[o].dtype, &out[o]);
    }
  }
  drop(&st[0]);
  drop(&st[1]);
  drop(&xs);
  drop(&d);
  drop(&sd);
  if (e)
    for (uint32_t o = 0; o < n_out; o++) drop(&out[o]);
  return e;
}

/* ---- RNN, GRU, LSTM: composed per time step ---- */

/* Concat of parts[0 .. n-1] along `axis` (n >= 1), at most MAX_CAT
 * operands per Concat (groups concatenated first, then the groups: the
 * eager ops' input limit). */
#define MAX_CAT 16
static dml_status_t concat_many(const dml_rt_tensor_t *parts, uint32_t n, int64_t axis,
                                dml_rt_tensor_t *out) {
  dml_attr_t a = int_attr("axis", axis);
  *out = NONE;
  if (n <= MAX_CAT) return dml_rt_tensor_op("Concat", parts, n, &a, 1, out, 1);
  const uint32_t ng = (n + MAX_CAT - 1) / MAX_CAT;
  dml_rt_tensor_t *g = (dml_rt_tensor_t *)calloc(ng, sizeof *g);
  if (!g)
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "Concat", "out of memory");
  dml_status_t e = DML_OK;
  for (uint32_t i = 0; i < ng && !e; i++)
    e = concat_many(parts + i * MAX_CAT,
                    n - i * MAX_CAT < MAX_CAT ? n - i * MAX_CAT : MAX_CAT, axis, &g[i]);
  if (!e) e = concat_many(g, ng, axis, out);
  for (uint32_t i = 0; i < ng; i++) drop(&g[i]);
  free(g);
  return e;
}

/* A view of t's elements [lo, hi) along `axis`. */
static dml_status_t sl(dml_rt_tensor_t t, int64_t axis, int64_t lo, int64_t hi,
                       dml_rt_tensor_t *v) {
  *v = NONE;
  return dml_rt_tensor_slice(t, 1, &axis, &lo, &hi, NULL, v);
}

/* Element d of t along `axis` as a contiguous tensor of dims `dims` (rank
 * r: the same elements). */
static dml_status_t pick(dml_rt_tensor_t t, int64_t axis, int64_t d, int32_t r,
                         const int64_t *dims, dml_rt_tensor_t *out) {
  dml_rt_tensor_t v = NONE, c = NONE;
  *out = NONE;
  dml_status_t e = sl(t, axis, d, d + 1, &v);
  if (!e) e = dml_rt_tensor_contiguous(v, &c);
  if (!e) e = dml_rt_tensor_reshape(c, r, dims, out);
  drop(&v);
  drop(&c);
  return e;
}

/* One activation of an RNN (dml_cpu_rnn_activations) with its alpha and
 * beta as scalars of X's dtype on the device (Affine and ScaledTanh; NONE
 * for the table's ops, which take them as attributes). */
typedef struct {
  const dml_cpu_rnn_act_t *a;
  dml_rt_tensor_t alpha, beta;
} rnn_fn_t;

/* The operands of one direction of an RNN (rnn_dir). */
typedef struct {
  dml_op_t id;
  int64_t S, B, H, G;
  int lbr, input_forget, rev;
  dml_rt_tensor_t xw;       /* [S, B, G*H]: X W^T + the biases outside the recurrence */
  dml_rt_tensor_t rt;       /* [H, G*H]: R^T (GRU: its z and r columns, [H, 2H]) */
  dml_rt_tensor_t rht, rbh; /* GRU: R_h^T [H, H], Rb_h [H] (NONE without B) */
  dml_rt_tensor_t p[3];     /* LSTM: Pi, Po, Pf [H] (NONE without P) */
  dml_rt_tensor_t h, c;     /* the state [B, H] (c: LSTM) */
  dml_rt_tensor_t mask;     /* [S, B, 1] bool: t < sequence_lens[b] (NONE without) */
  dml_rt_tensor_t zero, one, cmin,
      cmax;                     /* scalars of X's dtype (cmin: NONE without clip) */
  const rnn_fn_t *fa, *ga, *ha; /* the activations f, g, h (RNN: f; GRU: f, g) */
} rnn_dir_t;

/* v clipped to [cmin, cmax] when clip is set (in place). */
static dml_status_t rnn_clip(const rnn_dir_t *r, dml_rt_tensor_t *v) {
  if (!r->cmin.id) return DML_OK;
  dml_rt_tensor_t in[3] = {*v, r->cmin, r->cmax}, y = NONE;
  dml_status_t e = dml_rt_tensor_op("Clip", in, 3, NULL, 0, &y, 1);
  if (!e) {
    drop(v);
    *v = y;
  }
  return e;
}

/* f(v) in place for activation f: a table op with alpha and beta as its
 * attributes "alpha" and "beta" (A0, A1 of ew_ops.def; 1 dispatch),
 * Affine alpha v + beta (Mul, Add) or ScaledTanh alpha tanh(beta v) (Mul,
 * Tanh, Mul), each step rounded to X's dtype (the CPU's kernel: double,
 * rounded once). */
static dml_status_t rnn_apply(const rnn_fn_t *f, dml_rt_tensor_t *v) {
  const dml_cpu_rnn_act_t *a = f->a;
  dml_rt_tensor_t y = NONE;
  dml_status_t e = DML_OK;
  if (a->form == DML_CPU_RNN_AFFINE) {
    e = op2("Mul", *v, f->alpha, &y);
    if (!e) e = op2_into("Add", &y, f->beta);
  } else if (a->form == DML_CPU_RNN_SCALED_TANH) {
    e = op2("Mul", *v, f->beta, &y);
    dml_rt_tensor_t t = NONE;
    if (!e) e = op1("Tanh", y, NULL, 0, &t);
    drop(&y);
    if (!e) e = op2("Mul", t, f->alpha, &y);
    drop(&t);
  } else {
    dml_attr_t at[2];
    memset(at, 0, sizeof at);
    at[0].name = "alpha", at[0].kind = DML_ATTR_FLOAT, at[0].f = a->alpha;
    at[1].name = "beta", at[1].kind = DML_ATTR_FLOAT, at[1].f = a->beta;
    e = op1(dml_op_name(a->op), *v, at, (uint32_t)a->n_params, &y);
  }
  if (!e) {
    drop(v);
    *v = y;
  } else {
    drop(&y);
  }
  return e;
}

/* f(clip(v)) in place */
static dml_status_t rnn_act(const rnn_dir_t *r, const rnn_fn_t *f, dml_rt_tensor_t *v) {
  dml_status_t e = rnn_clip(r, v);
  return e ? e : rnn_apply(f, v);
}

/* One step of direction r at time t: the new state into r->h (r->c),
 * the step's Y row [B, H] into *yt (0 where t >= sequence_lens[b], the
 * state then kept), as the CPU's rnn_dir. */
static dml_status_t rnn_step(rnn_dir_t *r, int64_t t, dml_rt_tensor_t *yt) {
  const int64_t H = r->H, GH = r->G * r->H, bgh[2] = {r->B, GH};
  dml_rt_tensor_t xv = NONE, xt = NONE, g = NONE, hn = NONE, cn = NONE;
  dml_rt_tensor_t q[8] = {NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE};
  *yt = NONE;
  dml_status_t e = sl(r->xw, 0, t, t + 1, &xv);
  if (!e) e = dml_rt_tensor_reshape(xv, 2, bgh, &xt);
  if (!e) e = op2("MatMul", r->h, r->rt, &g); /* [B, GH] (GRU: [B, 2H]) */
  if (r->id == DML_OP_RNN) {
    if (!e) e = op2_into("Add", &g, xt);
    if (!e) e = rnn_act(r, r->fa, &g);
    if (!e) hn = g, g = NONE;
  } else if (r->id == DML_OP_GRU) { /* gates z, r, h */
    /* q: 0 xt's z and r, 1 z, 2 r, 3 xt's h, 4 the recurrent h term, 5 r * H */
    if (!e) e = sl(xt, 1, 0, 2 * H, &q[0]);
    if (!e) e = op2_into("Add", &g, q[0]);
    if (!e) e = rnn_act(r, r->fa, &g);
    if (!e) e = sl(g, 1, 0, H, &q[1]);
    if (!e) e = sl(g, 1, H, 2 * H, &q[2]);
    if (!e) e = sl(xt, 1, 2 * H, 3 * H, &q[3]);
    if (r->lbr) { /* r (.) (H R_h^T + Rb_h) */
      if (!e) e = op2("MatMul", r->h, r->rht, &q[4]);
      if (!e && r->rbh.id) e = op2_into("Add", &q[4], r->rbh);
      if (!e) e = op2_into("Mul", &q[4], q[2]);
    } else { /* (r (.) H) R_h^T + Rb_h */
      if (!e) e = op2("Mul", q[2], r->h, &q[5]);
      if (!e) e = op2("MatMul", q[5], r->rht, &q[4]);
      if (!e && r->rbh.id) e = op2_into("Add", &q[4], r->rbh);
    }
    if (!e) e = op2("Add", q[3], q[4], &hn); /* h~ */
    if (!e) e = rnn_act(r, r->ga, &hn);
    /* (1 - z) h~ + z H */
    if (!e) e = op2("Sub", r->one, q[1], &q[6]);
    if (!e) e = op2_into("Mul", &hn, q[6]);
    if (!e) e = op2("Mul", q[1], r->h, &q[7]);
    if (!e) e = op2_into("Add", &hn, q[7]);
  } else { /* LSTM: gates i, o, f, c; peepholes Pi, Po, Pf */
    /* q: 0 i, 1 o, 2 f, 3 c~, 4 5 peephole terms, 6 tanh(C) */
    if (!e) e = op2_into("Add", &g, xt);
    for (int k = 0; k < 4 && !e; k++) {
      dml_rt_tensor_t v = NONE;
      e = sl(g, 1, k * H, (k + 1) * H, &v);
      if (!e) e = dml_rt_tensor_contiguous(v, &q[k]);
      drop(&v);
    }
    if (!e && r->p[0].id) e = op2("Mul", r->p[0], r->c, &q[4]);
    if (!e && r->p[0].id) e = op2_into("Add", &q[0], q[4]);
    if (!e) e = rnn_act(r, r->fa, &q[0]);
    if (r->input_forget) {
      if (!e) drop(&q[2]);
      if (!e) e = op2("Sub", r->one, q[0], &q[2]);
    } else {
      if (!e && r->p[2].id) e = op2("Mul", r->p[2], r->c, &q[5]);
      if (!e && r->p[2].id) e = op2_into("Add", &q[2], q[5]);
      if (!e) e = rnn_act(r, r->fa, &q[2]);
    }
    if (!e) e = rnn_act(r, r->ga, &q[3]);
    /* C = f C + i c~ */
    if (!e) e = op2("Mul", q[2], r->c, &cn);
    if (!e) e = op2_into("Mul", &q[3], q[0]);
    if (!e) e = op2_into("Add", &cn, q[3]);
    drop(&q[4]);
    if (!e && r->p[1].id) e = op2("Mul", r->p[1], cn, &q[4]);
    if (!e && r->p[1].id) e = op2_into("Add", &q[1], q[4]);
    if (!e) e = rnn_act(r, r->fa, &q[1]);
    if (!e) e = dml_rt_tensor_retain(cn);
    if (!e) q[6] = cn;
    if (!e) e = rnn_apply(r->ha, &q[6]); /* h(C): no clip, as the CPU's */
    if (!e) e = op2("Mul", q[1], q[6], &hn);
  }
  /* past sequence_lens[b]: Y 0, the state kept */
  if (!e && r->mask.id) {
    dml_rt_tensor_t mv = NONE, m = NONE, y = NONE, kept = NONE;
    const int64_t b1[2] = {r->B, 1};
    e = sl(r->mask, 0, t, t + 1, &mv);
    if (!e) e = dml_rt_tensor_reshape(mv, 2, b1, &m);
    dml_rt_tensor_t w1[3] = {m, hn, r->zero}, w2[3] = {m, hn, r->h};
    if (!e) e = dml_rt_tensor_op("Where", w1, 3, NULL, 0, &y, 1);
    if (!e) e = dml_rt_tensor_op("Where", w2, 3, NULL, 0, &kept, 1);
    if (!e) {
      drop(&hn);
      hn = kept, kept = NONE;
      *yt = y, y = NONE;
    }
    if (!e && cn.id) {
      dml_rt_tensor_t w3[3] = {m, cn, r->c};
      e = dml_rt_tensor_op("Where", w3, 3, NULL, 0, &kept, 1);
      if (!e) {
        drop(&cn);
        cn = kept, kept = NONE;
      }
    }
    drop(&mv);
    drop(&m);
    drop(&y);
    drop(&kept);
  } else if (!e) {
    e = dml_rt_tensor_retain(hn);
    if (!e) *yt = hn;
  }
  if (!e) {
    drop(&r->h);
    r->h = hn, hn = NONE;
    if (cn.id) {
      drop(&r->c);
      r->c = cn, cn = NONE;
    }
  }
  drop(&xv);
  drop(&xt);
  drop(&g);
  drop(&hn);
  drop(&cn);
  for (int k = 0; k < 8; k++) drop(&q[k]);
  return e;
}

/* RNN, GRU and LSTM on a GPU (ONNX RNN-14, GRU-14, LSTM-14), composed of
 * the library's kernels per time step, as the CPU's rnn_dir: per
 * direction X W^T of every step as one MatMul (+ the biases that add
 * outside the recurrence), then per step H R^T (one MatMul; GRU: two),
 * the gates by the elementwise kernels (Add, Mul, Sub, Clip, the
 * activations), sequence_lens by a [seq, batch] mask (Less) and Where; the
 * steps' rows and the directions concatenated at the end. f32 and f64 X.
 * The activations (`activations`, `activation_alpha`, `activation_beta`)
 * as the CPU's kernel reads them (dml_cpu_rnn_activations), each run by
 * rnn_apply: the formula table's op (Relu, Tanh, Sigmoid, LeakyRelu,
 * ThresholdedRelu, HardSigmoid, Elu, Softsign, Softplus; 1 dispatch),
 * Affine (2) or ScaledTanh (3). Errors: UNIMPLEMENTED for another dtype,
 * an activation name ONNX does not list, or an activation's kernel the
 * library lacks for X's dtype (that op's error); INVALID_ARGUMENT for the
 * shapes and attributes the CPU's kernel refuses. */
static dml_status_t rnn_op(dml_rt_device_t *dev, dml_op_t id, const dml_rt_tensor_t *in,
                           uint32_t n, const dml_attr_t *attrs, uint32_t na,
                           const dml_rt_tensor_info_t *x, dml_rt_tensor_t *out,
                           uint32_t n_out) {
  const char *opn = dml_op_name(id);
  static const char *const ok_rnn[] = {
      "activation_alpha", "activation_beta", "activations", "clip",
      "direction",        "hidden_size",     "layout",      NULL};
  static const char *const ok_gru[] = {
      "activation_alpha", "activation_beta", "activations",         "clip", "direction",
      "hidden_size",      "layout",          "linear_before_reset", NULL};
  static const char *const ok_lstm[] = {
      "activation_alpha", "activation_beta", "activations",  "clip", "direction",
      "hidden_size",      "layout",          "input_forget", NULL};
  const char *const *ok = id == DML_OP_RNN ? ok_rnn : id == DML_OP_GRU ? ok_gru : ok_lstm;
  dml_tensor_t yr[DML_MAX_EAGER_OUTPUTS];
  dml_rt_tensor_info_t it[8];
  DML_RETURN_IF_ERROR(prologue(dev, id, ok, 0, in, n, attrs, na, yr, n_out, it, 8));
  if (x->dtype != DML_DTYPE_F32 && x->dtype != DML_DTYPE_F64)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, opn,
                           "X of %s: the eager %s takes f32 and f64 (as the CPU's)",
                           dml_dtype_name(x->dtype), opn);
  const int64_t G = id == DML_OP_RNN ? 1 : id == DML_OP_GRU ? 3 : 4;
  const int nact = id == DML_OP_RNN ? 1 : id == DML_OP_GRU ? 2 : 3;
  const char *dir = dml_attr_string(attrs, na, "direction", "forward");
  const int D = dml_shape_rnn_directions(dir), rev_only = !strcmp(dir, "reverse");
  const int64_t layout = dml_attr_int(attrs, na, "layout", 0);
  const int64_t S = x->dims[layout ? 1 : 0], B = x->dims[layout ? 0 : 1], I = x->dims[2];
  const int64_t H = it[2].dims[2];
  const int has[8] = {1,
                      1,
                      1,
                      n > 3 && in[3].id,
                      n > 4 && in[4].id,
                      n > 5 && in[5].id,
                      n > 6 && in[6].id && id == DML_OP_LSTM,
                      n > 7 && in[7].id && id == DML_OP_LSTM};
  const int64_t s0 = layout ? B : D, s1 = layout ? D : B;
  int bad =
      dml_attr_int(attrs, na, "hidden_size", H) != H || it[1].dims[0] != D ||
      it[1].dims[1] != G * H || it[1].dims[2] != I || it[2].dims[0] != D ||
      it[2].dims[1] != G * H ||
      (has[3] && (it[3].rank != 2 || it[3].dims[0] != D || it[3].dims[1] != 2 * G * H)) ||
      (has[4] &&
       (it[4].rank != 1 || it[4].dims[0] != B || !dml_dtype_is_int(it[4].dtype))) ||
      (has[7] && (it[7].rank != 2 || it[7].dims[0] != D || it[7].dims[1] != 3 * H));
  for (int j = 5; j < 7; j++)
    bad |= has[j] && (it[j].rank != 3 || it[j].dims[0] != s0 || it[j].dims[1] != s1 ||
                      it[j].dims[2] != H);
  for (int j = 1; j < 8; j++) bad |= has[j] && j != 4 && it[j].dtype != x->dtype;
  if (bad)
    return dml_status_make(
        DML_STATUS_INVALID_ARGUMENT, opn,
        "shape mismatch: W must be [%d, %lld, %lld], R [%d, %lld, %lld], "
        "B [%d, %lld], sequence_lens an integer [%lld], the initial "
        "states [%lld, %lld, %lld], P [%d, %lld], all but "
        "sequence_lens of X's dtype (hidden_size %lld)",
        D, (long long)(G * H), (long long)I, D, (long long)(G * H), (long long)H, D,
        (long long)(2 * G * H), (long long)B, (long long)s0, (long long)s1, (long long)H,
        D, (long long)(3 * H), (long long)H);
  /* the activations, as the CPU's kernel reads them */
  dml_cpu_rnn_act_t av[DML_CPU_RNN_MAX_ACTS];
  {
    dml_cpu_call_t call;
    memset(&call, 0, sizeof call);
    call.op = id;
    call.attrs = attrs;
    call.n_attrs = na;
    DML_RETURN_IF_ERROR(on_dev(dml_cpu_rnn_activations(&call, D, av), id, dev));
  }
  const int has_clip = dml_attr_find(attrs, na, "clip") != NULL;
  const double clip = dml_attr_float(attrs, na, "clip", 0.0);
  if (has_clip && !(clip > 0))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, opn, "clip must be > 0");
  const dml_dtype_t dt = x->dtype;
  const int64_t GH = G * H;
  dml_status_t e = DML_OK;
  dml_rt_tensor_t xl = NONE, mask = NONE, zero = NONE, one = NONE, cmin = NONE,
                  cmax = NONE;
  dml_rt_tensor_t yd[2] = {NONE, NONE}, hd[2] = {NONE, NONE}, cd[2] = {NONE, NONE};
  rnn_fn_t fn[DML_CPU_RNN_MAX_ACTS];
  for (int i = 0; i < nact * D; i++) {
    fn[i].a = &av[i], fn[i].alpha = fn[i].beta = NONE;
    if (av[i].form == DML_CPU_RNN_OP || e) continue;
    e = dml_rt_tensor_full(dev, dt, 0, NULL, av[i].alpha, &fn[i].alpha);
    if (!e) e = dml_rt_tensor_full(dev, dt, 0, NULL, av[i].beta, &fn[i].beta);
  }
  dml_rt_tensor_t *ys = (dml_rt_tensor_t *)calloc(S > 0 ? (size_t)S : 1, sizeof *ys);
  if (!ys && !e) e = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, opn, "out of memory");
  for (uint32_t o = 0; o < n_out; o++) out[o] = NONE;
  /* X as [S, B, I] (layout 1: a transposed view) */
  if (e) {
  } else if (layout) {
    const int64_t perm[3] = {1, 0, 2};
    e = dml_rt_tensor_transpose(in[0], perm, &xl);
  } else {
    e = dml_rt_tensor_retain(in[0]);
    if (!e) xl = in[0];
  }
  if (!e) e = dml_rt_tensor_full(dev, dt, 0, NULL, 0.0, &zero);
  if (!e) e = dml_rt_tensor_full(dev, dt, 0, NULL, 1.0, &one);
  if (!e && has_clip) e = dml_rt_tensor_full(dev, dt, 0, NULL, -clip, &cmin);
  if (!e && has_clip) e = dml_rt_tensor_full(dev, dt, 0, NULL, clip, &cmax);
  if (!e && has[4] && S > 0 && B > 0) { /* mask [S, B, 1]: t < sequence_lens[b] */
    dml_rt_tensor_t ar = NONE, a2 = NONE, l2 = NONE, m = NONE;
    const int64_t s_1[2] = {S, 1}, one_b[2] = {1, B}, sb1[3] = {S, B, 1};
    e = dml_rt_tensor_arange(dev, it[4].dtype, 0, (double)S, 1, &ar);
    if (!e) e = dml_rt_tensor_reshape(ar, 2, s_1, &a2);
    if (!e) e = dml_rt_tensor_reshape(in[4], 2, one_b, &l2);
    if (!e) e = op2("Less", a2, l2, &m);
    if (!e) e = dml_rt_tensor_reshape(m, 3, sb1, &mask);
    drop(&ar);
    drop(&a2);
    drop(&l2);
    drop(&m);
  }
  for (int d = 0; d < D && !e; d++) {
    rnn_dir_t r;
    memset(&r, 0, sizeof r);
    r.id = id, r.S = S, r.B = B, r.H = H, r.G = G;
    r.lbr = id == DML_OP_GRU && dml_attr_int(attrs, na, "linear_before_reset", 0) != 0;
    r.input_forget = id == DML_OP_LSTM && dml_attr_int(attrs, na, "input_forget", 0) != 0;
    r.rev = rev_only || d == 1;
    r.mask = mask, r.zero = zero, r.one = one, r.cmin = cmin, r.cmax = cmax;
    r.fa = &fn[d * nact], r.ga = &fn[d * nact + (nact > 1)],
    r.ha = &fn[d * nact + (nact > 2) * 2];
    const int64_t gh_i[2] = {GH, I}, gh_h[2] = {GH, H}, bh[2] = {B, H},
                  two_gh[1] = {2 * GH}, p3[1] = {3 * H}, perm2[2] = {1, 0};
    dml_rt_tensor_t w = NONE, wt = NONE, rr = NONE, rt = NONE, bb = NONE, bs = NONE,
                    pp = NONE;
    /* X W^T [S, B, GH] */
    e = pick(in[1], 0, d, 2, gh_i, &w);
    if (!e) e = dml_rt_tensor_transpose(w, perm2, &wt);
    if (!e) e = op2("MatMul", xl, wt, &r.xw);
    /* R^T [H, GH] (GRU: z, r columns and R_h^T apart) */
    if (!e) e = pick(in[2], 0, d, 2, gh_h, &rr);
    if (!e) e = dml_rt_tensor_transpose(rr, perm2, &rt);
    if (!e && id == DML_OP_GRU) {
      e = sl(rt, 1, 0, 2 * H, &r.rt);
      if (!e) e = sl(rt, 1, 2 * H, 3 * H, &r.rht);
    } else if (!e) {
      e = dml_rt_tensor_retain(rt);
      if (!e) r.rt = rt;
    }
    /* the biases: Wb + Rb added to X W^T (GRU: Rb_h kept for the step) */
    if (!e && has[3]) {
      dml_rt_tensor_t wb = NONE, rb = NONE, t1 = NONE, t2 = NONE, t3 = NONE;
      e = pick(in[3], 0, d, 1, two_gh, &bb);
      if (!e) e = sl(bb, 0, 0, GH, &wb);
      if (!e) e = sl(bb, 0, GH, 2 * GH, &rb);
      if (!e && id == DML_OP_GRU) {
        dml_rt_tensor_t parts[2] = {NONE, NONE};
        e = sl(wb, 0, 0, 2 * H, &t1);
        if (!e) e = sl(rb, 0, 0, 2 * H, &t2);
        if (!e) e = op2("Add", t1, t2, &parts[0]);
        if (!e) e = sl(wb, 0, 2 * H, 3 * H, &parts[1]);
        if (!e) e = concat_many(parts, 2, 0, &bs);
        if (!e) e = sl(rb, 0, 2 * H, 3 * H, &t3);
        if (!e) e = dml_rt_tensor_contiguous(t3, &r.rbh);
        drop(&parts[0]);
        drop(&parts[1]);
      } else if (!e) {
        e = op2("Add", wb, rb, &bs);
      }
      if (!e) e = op2_into("Add", &r.xw, bs);
      drop(&wb);
      drop(&rb);
      drop(&t1);
      drop(&t2);
      drop(&t3);
    }
    if (!e && has[7]) { /* P: Pi, Po, Pf */
      e = pick(in[7], 0, d, 1, p3, &pp);
      for (int k = 0; k < 3 && !e; k++) e = sl(pp, 0, k * H, (k + 1) * H, &r.p[k]);
    }
    /* the initial states [B, H] */
    if (!e)
      e = has[5] ? pick(in[5], layout ? 1 : 0, d, 2, bh, &r.h)
                 : dml_rt_tensor_zeros(dev, dt, 2, bh, &r.h);
    if (!e && id == DML_OP_LSTM)
      e = has[6] ? pick(in[6], layout ? 1 : 0, d, 2, bh, &r.c)
                 : dml_rt_tensor_zeros(dev, dt, 2, bh, &r.c);
    for (int64_t step = 0; step < S && !e; step++) {
      const int64_t t = r.rev ? S - 1 - step : step;
      dml_rt_tensor_t yt = NONE;
      e = rnn_step(&r, t, &yt);
      const int64_t one_bh[3] = {1, B, H};
      if (!e) e = dml_rt_tensor_reshape(yt, 3, one_bh, &ys[t]);
      drop(&yt);
    }
    /* this direction's Y [S, B, H] (none for S = 0: zeros) */
    const int64_t sbh[3] = {S, B, H};
    if (!e)
      e = S > 0 ? concat_many(ys, (uint32_t)S, 0, &yd[d])
                : dml_rt_tensor_zeros(dev, dt, 3, sbh, &yd[d]);
    for (int64_t t = 0; t < S; t++) drop(&ys[t]);
    if (!e) {
      hd[d] = r.h, r.h = NONE;
      cd[d] = r.c, r.c = NONE;
    }
    drop(&w);
    drop(&wt);
    drop(&rr);
    drop(&rt);
    drop(&bb);
    drop(&bs);
    drop(&pp);
    drop(&r.xw);
    drop(&r.rt);
    drop(&r.rht);
    drop(&r.rbh);
    for (int k = 0; k < 3; k++) drop(&r.p[k]);
    drop(&r.h);
    drop(&r.c);
  }
  /* the outputs: Y [S, D, B, H] ([B, S, D, H]), the states [D, B, H] ([B, D, H]) */
  dml_rt_tensor_t parts[2] = {NONE, NONE};
  for (uint32_t o = 0; o < n_out && !e; o++) {
    const dml_rt_tensor_t *src = o == 0 ? yd : o == 1 ? hd : cd;
    for (int d = 0; d < D && !e; d++) {
      if (o == 0 && layout) { /* [S, B, H] -> [B, S, 1, H] */
        const int64_t perm[3] = {1, 0, 2}, d4[4] = {B, S, 1, H};
        dml_rt_tensor_t v = NONE, c = NONE;
        e = dml_rt_tensor_transpose(src[d], perm, &v);
        if (!e) e = dml_rt_tensor_contiguous(v, &c);
        if (!e) e = dml_rt_tensor_reshape(c, 4, d4, &parts[d]);
        drop(&v);
        drop(&c);
      } else if (o == 0) {
        const int64_t d4[4] = {S, 1, B, H};
        e = dml_rt_tensor_reshape(src[d], 4, d4, &parts[d]);
      } else {
        const int64_t d3[3] = {layout ? B : 1, layout ? 1 : B, H};
        e = dml_rt_tensor_reshape(src[d], 3, d3, &parts[d]);
      }
    }
    if (!e)
      e = concat_many(parts, (uint32_t)D, o == 0 ? (layout ? 2 : 1) : (layout ? 1 : 0),
                      &out[o]);
    drop(&parts[0]);
    drop(&parts[1]);
  }
  for (int d = 0; d < 2; d++) {
    drop(&yd[d]);
    drop(&hd[d]);
    drop(&cd[d]);
  }
  drop(&xl);
  drop(&mask);
  drop(&zero);
  drop(&one);
  drop(&cmin);
  drop(&cmax);
  for (int i = 0; i < nact * D; i++) {
    drop(&fn[i].alpha);
    drop(&fn[i].beta);
  }
  free(ys);
  if (e)
    for (uint32_t o = 0; o < n_out; o++) drop(&out[o]);
  return e;
}

/* A normalization: the library's kernel (norm_fused), else composed (f64
 * x; f16 and bf16 through f32). */
static dml_status_t normalization(dml_rt_device_t *dev, dml_op_t id,
                                  const dml_rt_tensor_t *in, uint32_t n,
                                  const dml_attr_t *attrs, uint32_t na,
                                  const dml_rt_tensor_info_t *x, dml_rt_tensor_t *out) {
  int fused = 0;
  dml_status_t e = norm_fused(dev, id, in, n, attrs, na, x, out, &fused);
  if (e || fused) return e;
  if (is_half(x->dtype)) return via_f32(id, x->dtype, in, n, attrs, na, out);
  if (id == DML_OP_LAYER_NORMALIZATION) return layer_norm(dev, in, n, attrs, na, x, out);
  if (id == DML_OP_BATCH_NORMALIZATION) return batch_norm(dev, in, n, attrs, na, x, out);
  return instance_norm(dev, in, n, attrs, na, x, out);
}

static dml_status_t global_pool(dml_rt_device_t *dev, dml_op_t id,
                                const dml_rt_tensor_t *in, const dml_attr_t *attrs,
                                uint32_t na, const dml_rt_tensor_info_t *x,
                                dml_rt_tensor_t *out) {
  static const char *const ok[] = {NULL};
  dml_tensor_t y;
  DML_RETURN_IF_ERROR(prologue(dev, id, ok, 0, in, 1, attrs, na, &y, 1, NULL, 0));
  if (x->rank < 2)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, dml_op_name(id),
                           "X must be [N, C, ...] (rank %d)", (int)x->rank);
  if (x->rank == 2) return op1("Identity", in[0], NULL, 0, out);
  int64_t axes[DML_MAX_RANK];
  uint32_t nax = 0;
  for (int64_t d = 2; d < x->rank; d++) axes[nax++] = d;
  dml_attr_t a[2] = {ints_attr("axes", axes, nax), int_attr("keepdims", 1)};
  return op1(id == DML_OP_GLOBAL_MAX_POOL ? "ReduceMax" : "ReduceMean", in[0], a, 2, out);
}

/* The lowest value of dtype dt (-inf for the floats): MaxPool's padding. */
static double lowest(dml_dtype_t dt) {
  switch (dt) {
    case DML_DTYPE_I64: return (double)INT64_MIN;
    case DML_DTYPE_I32: return (double)INT32_MIN;
    case DML_DTYPE_I16: return (double)INT16_MIN;
    case DML_DTYPE_I8: return (double)INT8_MIN;
    default: return dml_dtype_is_float(dt) ? -INFINITY : 0.0;
  }
}

/* x padded along every dim d by pb[d] before and pe[d] after (negative:
 * cropped) with the elements of `fill` (a one-element tensor of x's dtype):
 * per padded dim a Concat of fill expanded, x (a slice view where cropped)
 * and fill expanded. */
static dml_status_t pad_const(dml_rt_tensor_t x, const int64_t *pb, const int64_t *pe,
                              dml_rt_tensor_t fill, dml_rt_tensor_t *out) {
  dml_rt_tensor_info_t ix;
  DML_RETURN_IF_ERROR(dml_rt_tensor_info(x, &ix));
  const int32_t r = ix.rank;
  int64_t ones[DML_MAX_RANK];
  for (int32_t d = 0; d < r; d++) ones[d] = 1;
  dml_rt_tensor_t cur = NONE, f = NONE;
  dml_status_t e = dml_rt_tensor_reshape(fill, r, ones, &f);
  if (!e) e = dml_rt_tensor_retain(x);
  if (!e) cur = x;
  for (int32_t d = 0; d < r && !e; d++) {
    if (!pb[d] && !pe[d]) continue;
    dml_rt_tensor_info_t ic;
    e = dml_rt_tensor_info(cur, &ic);
    if (e) break;
    if (pb[d] < 0 || pe[d] < 0) { /* crop: a view */
      int64_t ax = d, st = pb[d] < 0 ? -pb[d] : 0,
              en = ic.dims[d] - (pe[d] < 0 ? -pe[d] : 0), one = 1;
      if (en < st) en = st;
      dml_rt_tensor_t v = NONE;
      e = dml_rt_tensor_slice(cur, 1, &ax, &st, &en, &one, &v);
      if (e) break;
      drop(&cur);
      cur = v;
      if (pb[d] <= 0 && pe[d] <= 0) continue;
      e = dml_rt_tensor_info(cur, &ic);
      if (e) break;
    }
    dml_rt_tensor_t parts[3], blk[2] = {NONE, NONE};
    uint32_t np = 0;
    for (int side = 0; side < 2 && !e; side++) {
      int64_t w = side ? pe[d] : pb[d];
      if (w <= 0) continue;
      int64_t dims[DML_MAX_RANK];
      memcpy(dims, ic.dims, sizeof(int64_t) * (size_t)r);
      dims[d] = w;
      e = dml_rt_tensor_expand(f, r, dims, &blk[side]);
    }
    if (!e) {
      if (blk[0].id) parts[np++] = blk[0];
      parts[np++] = cur;
      if (blk[1].id) parts[np++] = blk[1];
      dml_attr_t a = int_attr("axis", d);
      dml_rt_tensor_t y = NONE;
      e = dml_rt_tensor_op("Concat", parts, np, &a, 1, &y, 1);
      if (!e) {
        drop(&cur);
        cur = y;
      }
    }
    drop(&blk[0]);
    drop(&blk[1]);
  }
  drop(&f);
  if (!e) e = op1("Identity", cur, NULL, 0, out); /* contiguous, owned */
  drop(&cur);
  return e;
}

/* MaxPool (Y) and AveragePool: X padded (pad_const: the dtype's lowest
 * value, 0), then one strided view of it per window tap folded by Max or
 * Add in the CPU's tap order, AveragePool's sums divided by the CPU's
 * divisors (dml_cpu_pool_geometry; a window without a counted position
 * gives 0). */
static dml_status_t pool(dml_rt_device_t *dev, dml_op_t id, const dml_rt_tensor_t *in,
                         const dml_attr_t *attrs, uint32_t na,
                         const dml_rt_tensor_info_t *x, dml_rt_tensor_t *out) {
  static const char *const okm[] = {"kernel_shape", "strides",   "dilations",     "pads",
                                    "auto_pad",     "ceil_mode", "storage_order", NULL};
  static const char *const oka[] = {
      "kernel_shape", "strides",   "dilations",         "pads",
      "auto_pad",     "ceil_mode", "count_include_pad", NULL};
  const int mx = id == DML_OP_MAX_POOL;
  dml_tensor_t y;
  DML_RETURN_IF_ERROR(
      prologue(dev, id, mx ? okm : oka, 0, in, 1, attrs, na, &y, 1, NULL, 0));
  if (x->rank < 3 || x->rank > DML_MAX_RANK)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, dml_op_name(id),
                           "X must be [N, C, spatial...] (rank %d)", (int)x->rank);
  const int32_t r = x->rank - 2;
  int64_t k[DML_MAX_RANK], s[DML_MAX_RANK], dl[DML_MAX_RANK], pb[DML_MAX_RANK],
      pe[DML_MAX_RANK];
  int64_t *cnt[DML_MAX_RANK];
  int64_t *heap = NULL;
  int64_t osz = 1;
  for (int32_t i = 0; i < r; i++) osz *= y.dims[2 + i];
  int64_t total = 0;
  for (int32_t i = 0; i < r; i++) total += y.dims[2 + i];
  if (!mx) { /* per-dim divisors */
    heap = (int64_t *)malloc((size_t)(total > 0 ? total : 1) * sizeof(int64_t));
    if (!heap)
      return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "tensor.op", "out of memory");
    int64_t at = 0;
    for (int32_t i = 0; i < r; i++) cnt[i] = heap + at, at += y.dims[2 + i];
  }
  dml_tensor_t xin;
  memset(&xin, 0, sizeof xin);
  xin.dtype = x->dtype;
  xin.rank = x->rank;
  memcpy(xin.dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
  dml_cpu_call_t call;
  memset(&call, 0, sizeof call);
  call.op = id;
  call.inputs = &xin;
  call.n_inputs = 1;
  call.outputs = &y;
  call.n_outputs = 1;
  call.attrs = attrs;
  call.n_attrs = na;
  dml_status_t e =
      on_dev(dml_cpu_pool_geometry(&call, k, s, dl, pb, pe,
                                   (int)dml_attr_int(attrs, na, "count_include_pad", 0),
                                   mx ? NULL : cnt),
             id, dev);
  if (e) {
    free(heap);
    return e;
  }
  if (dml_dims_numel(y.dims, y.rank) == 0) { /* no window */
    free(heap);
    return dml_rt_tensor_empty(dev, y.dtype, y.rank, y.dims, out);
  }
  /* padded extent: the last tap of the last window inside it */
  int64_t PB[DML_MAX_RANK] = {0}, PE[DML_MAX_RANK] = {0};
  int64_t ktot = 1;
  for (int32_t i = 0; i < r; i++) {
    int64_t last = (y.dims[2 + i] - 1) * s[i] + (k[i] - 1) * dl[i]; /* padded coord */
    PB[2 + i] = pb[i];
    PE[2 + i] = last + 1 - pb[i] - x->dims[2 + i];
    if (PE[2 + i] < 0) PE[2 + i] = 0;
    ktot *= k[i];
  }
  dml_rt_tensor_t fill = NONE, P = NONE, acc = NONE, prev = NONE;
  e = dml_rt_tensor_full(dev, x->dtype, 0, NULL, mx ? lowest(x->dtype) : 0.0, &fill);
  if (!e) e = pad_const(in[0], PB, PE, fill, &P);
  drop(&fill);
  int64_t kidx[DML_MAX_RANK] = {0};
  const char *fold = mx ? "Max" : "Add";
  for (int64_t t = 0; t < ktot && !e; t++) {
    int64_t axes[DML_MAX_RANK], st[DML_MAX_RANK], en[DML_MAX_RANK], sp[DML_MAX_RANK];
    for (int32_t i = 0; i < r; i++) {
      axes[i] = 2 + i;
      st[i] = kidx[i] * dl[i];
      en[i] = st[i] + (y.dims[2 + i] - 1) * s[i] + 1;
      sp[i] = s[i];
    }
    dml_rt_tensor_t v = NONE;
    e = dml_rt_tensor_slice(P, (uint32_t)r, axes, st, en, sp, &v);
    if (!e) {
      if (ktot == 1) {
        e = op1("Identity", v, NULL, 0, &acc);
        drop(&v);
      } else if (t == 0) {
        prev = v; /* the first tap waits for the second */
      } else if (t == 1) {
        e = op2(fold, prev, v, &acc);
        drop(&prev);
        drop(&v);
      } else {
        e = op2_into(fold, &acc, v);
        drop(&v);
      }
    }
    for (int32_t i = r - 1; i >= 0; i--) {
      if (++kidx[i] < k[i]) break;
      kidx[i] = 0;
    }
  }
  drop(&prev);
  drop(&P);
  if (!e && !mx) { /* the divisors, [1, 1, O...] */
    int64_t cd[DML_MAX_RANK], oi[DML_MAX_RANK] = {0};
    cd[0] = cd[1] = 1;
    for (int32_t i = 0; i < r; i++) cd[2 + i] = y.dims[2 + i];
    const size_t es = dml_dtype_size(x->dtype);
    void *hv = malloc((size_t)osz * es);
    if (!hv)
      e = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "tensor.op", "out of memory");
    for (int64_t o = 0; !e && o < osz; o++) {
      int64_t c = 1;
      for (int32_t i = 0; i < r; i++) c *= cnt[i][oi[i]];
      double dv = c > 0 ? (double)c : 1.0; /* no position: the sum 0 stays 0 */
      if (x->dtype == DML_DTYPE_F64)
        ((double *)hv)[o] = dv;
      else
        ((float *)hv)[o] = (float)dv;
      for (int32_t i = r - 1; i >= 0; i--) {
        if (++oi[i] < y.dims[2 + i]) break;
        oi[i] = 0;
      }
    }
    if (!e && x->dtype != DML_DTYPE_F64 && x->dtype != DML_DTYPE_F32)
      e = dml_status_make(DML_STATUS_UNIMPLEMENTED, "AveragePool",
                          "no eager AveragePool of %s in this version",
                          dml_dtype_name(x->dtype));
    dml_rt_tensor_t ct = NONE;
    if (!e) {
      dml_tensor_t h;
      memset(&h, 0, sizeof h);
      h.dtype = x->dtype;
      h.rank = x->rank;
      memcpy(h.dims, cd, sizeof(int64_t) * (size_t)x->rank);
      h.data = hv;
      e = dml_rt_tensor_from_host(dev, &h, &ct);
    }
    if (!e) e = op2_into("Div", &acc, ct);
    drop(&ct);
    free(hv);
  }
  free(heap);
  if (e) {
    drop(&acc);
    return e;
  }
  *out = acc;
  return DML_OK;
}

/* The int64 values of device tensor t (i64 or i32, rank 0 or 1, at most
 * max) into v; *n their count. */
/* MaxPool with its Indices output on a GPU: Y as pool() composes it, the
 * Indices by the library's index kernel (dml_rt_eager_pool_indices) over
 * the CPU's geometry (dml_cpu_pool_geometry); 1-D and 2-D, X of f32, f16,
 * bf16 or f64 (else UNIMPLEMENTED, as before). */
static dml_status_t max_pool_indices(dml_rt_device_t *dev, const dml_rt_tensor_t *in,
                                     const dml_attr_t *attrs, uint32_t na,
                                     const dml_rt_tensor_info_t *x,
                                     dml_rt_tensor_t *out) {
  const dml_op_t id = DML_OP_MAX_POOL;
  dml_tensor_t y;
  DML_RETURN_IF_ERROR(dml_rt_eager_rule(dev, id, in, 1, attrs, na, &y, 1));
  if (x->rank < 3 || x->rank > 5)
    return dml_status_make(
        DML_STATUS_UNIMPLEMENTED, "MaxPool",
        "the GPU's eager MaxPool computes Indices for 1-D, 2-D and 3-D "
        "windows only in this version (X of rank %d)",
        (int)x->rank);
  int64_t k[DML_MAX_RANK], s[DML_MAX_RANK], dl[DML_MAX_RANK], pb[DML_MAX_RANK],
      pe[DML_MAX_RANK];
  dml_tensor_t xin;
  memset(&xin, 0, sizeof xin);
  xin.dtype = x->dtype;
  xin.rank = x->rank;
  memcpy(xin.dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
  dml_cpu_call_t call;
  memset(&call, 0, sizeof call);
  call.op = id;
  call.inputs = &xin;
  call.n_inputs = 1;
  call.outputs = &y;
  call.n_outputs = 1;
  call.attrs = attrs;
  call.n_attrs = na;
  DML_RETURN_IF_ERROR(
      on_dev(dml_cpu_pool_geometry(&call, k, s, dl, pb, pe, 0, NULL), id, dev));
  int64_t order = dml_attr_int(attrs, na, "storage_order", 0);
  if (order != 0 && order != 1)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "MaxPool",
                           "storage_order must be 0 or 1 (on %s)",
                           dml_rt_device_name(dev));
  dml_rt_tensor_t xc = NONE, yv = NONE, iv = NONE;
  int done = 0;
  dml_status_t e = dml_rt_tensor_contiguous(in[0], &xc);
  if (!e)
    e = dml_rt_eager_pool_indices(dev, xc, y.dims, k, s, dl, pb, (int)order, &iv, &done);
  if (!e && !done)
    e = dml_status_make(DML_STATUS_UNIMPLEMENTED, "MaxPool",
                        "MaxPool's Indices output of %s is not computed by the GPU's "
                        "eager MaxPool in this version (the floats and the integers "
                        "but bool)",
                        dml_dtype_name(x->dtype));
  if (!e) e = pool(dev, id, in, attrs, na, x, &yv);
  drop(&xc);
  if (e) {
    drop(&iv);
    drop(&yv);
    return e;
  }
  out[0] = yv;
  out[1] = iv;
  return DML_OK;
}

static dml_status_t read_ints(dml_op_t id, dml_rt_tensor_t t, const char *what,
                              int64_t *v, uint32_t max, uint32_t *n) {
  dml_rt_tensor_info_t it;
  DML_RETURN_IF_ERROR(dml_rt_tensor_info(t, &it));
  int64_t cnt = it.rank ? it.dims[0] : 1;
  if ((it.dtype != DML_DTYPE_I64 && it.dtype != DML_DTYPE_I32) || it.rank > 1 ||
      cnt > (int64_t)max)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, dml_op_name(id),
                           "%s must be i64 or i32 of rank 1, at most %u values (got %s, "
                           "%lld values)",
                           what, max, dml_dtype_name(it.dtype), (long long)cnt);
  int32_t tmp32[2 * DML_MAX_RANK];
  dml_tensor_t h;
  memset(&h, 0, sizeof h);
  h.dtype = it.dtype;
  h.rank = it.rank;
  memcpy(h.dims, it.dims, sizeof h.dims);
  h.data = it.dtype == DML_DTYPE_I64 ? (void *)v : (void *)tmp32;
  DML_RETURN_IF_ERROR(dml_rt_tensor_to_host(t, &h));
  if (it.dtype == DML_DTYPE_I32)
    for (int64_t i = 0; i < cnt; i++) v[i] = tmp32[i];
  *n = (uint32_t)cnt;
  return DML_OK;
}

/* Pad (constant: pad_const with constant_value, the `value` attribute or
 * 0; reflect, edge, wrap: per padded dim a Gather of the CPU's source
 * coordinates, dml_cpu_pad_source, uploaded as i64). */
static dml_status_t pad(dml_rt_device_t *dev, const dml_rt_tensor_t *in, uint32_t n,
                        const dml_attr_t *attrs, uint32_t na,
                        const dml_rt_tensor_info_t *x, dml_rt_tensor_t *out) {
  static const char *const ok[] = {"mode", "pads", "value", NULL};
  const dml_op_t id = DML_OP_PAD;
  dml_tensor_t y;
  DML_RETURN_IF_ERROR(prologue(dev, id, ok, 0, in, n, attrs, na, &y, 1, NULL, 0));
  const int32_t r = x->rank;
  int64_t pads[2 * DML_MAX_RANK];
  uint32_t np = 0;
  size_t nap = 0;
  const int64_t *pa = dml_attr_ints(attrs, na, "pads", &nap);
  if (pa && nap <= 2 * DML_MAX_RANK) {
    memcpy(pads, pa, nap * sizeof(int64_t));
    np = (uint32_t)nap;
  } else if (n > 1 && in[1].id) {
    DML_RETURN_IF_ERROR(read_ints(id, in[1], "pads", pads, 2 * DML_MAX_RANK, &np));
  }
  if (np != 2 * (uint32_t)r)
    return dml_status_detail(
        dml_status_make(DML_STATUS_INVALID_ARGUMENT, "Pad", "shape mismatch"),
        "pads must have %d values (got %u)", 2 * (int)r, np);
  const char *mode = dml_attr_string(attrs, na, "mode", "constant");
  int m = !strcmp(mode, "constant")  ? 0
          : !strcmp(mode, "reflect") ? 1
          : !strcmp(mode, "edge")    ? 2
          : !strcmp(mode, "wrap")    ? 3
                                     : -1;
  if (m < 0)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, "Pad", "mode '%s' is not supported",
                           mode);
  if (r == 0) return op1("Identity", in[0], NULL, 0, out);
  if (m == 0) {
    dml_rt_tensor_t fill = NONE;
    dml_status_t e = DML_OK;
    dml_rt_tensor_info_t ic;
    if (dml_attr_find(attrs, na, "value")) {
      e = dml_rt_tensor_full(dev, x->dtype, 0, NULL,
                             dml_attr_float(attrs, na, "value", 0), &fill);
    } else if (n > 2 && in[2].id && !(e = dml_rt_tensor_info(in[2], &ic)) &&
               dml_dims_numel(ic.dims, ic.rank) >= 1) {
      dml_rt_tensor_t first = NONE;
      int64_t z[DML_MAX_RANK] = {0}, o[DML_MAX_RANK], one[DML_MAX_RANK], ax[DML_MAX_RANK];
      for (int32_t d = 0; d < ic.rank; d++) o[d] = 1, one[d] = 1, ax[d] = d;
      e = ic.rank ? dml_rt_tensor_slice(in[2], (uint32_t)ic.rank, ax, z, o, one, &first)
                  : dml_rt_tensor_retain(in[2]);
      if (!e && !ic.rank) first = in[2];
      if (!e)
        e = ic.dtype == x->dtype ? op1("Identity", first, NULL, 0, &fill)
                                 : cast(first, x->dtype, &fill);
      drop(&first);
    } else if (!e) {
      e = dml_rt_tensor_zeros(dev, x->dtype, 0, NULL, &fill);
    }
    if (!e) e = pad_const(in[0], pads, pads + r, fill, out);
    drop(&fill);
    return e;
  }
  dml_rt_tensor_t cur = in[0];
  dml_status_t e = dml_rt_tensor_retain(cur);
  if (e) return e;
  for (int32_t d = 0; d < r && !e; d++) {
    if (!pads[d] && !pads[r + d]) continue;
    const int64_t nd = x->dims[d], yd = y.dims[d];
    if (nd == 0 && yd > 0) {
      e = dml_status_detail(
          dml_status_make(DML_STATUS_INVALID_ARGUMENT, "Pad", "shape mismatch"),
          "cannot %s-pad an empty dim (dim %d)", mode, (int)d);
      break;
    }
    int64_t *map = (int64_t *)malloc((size_t)(yd > 0 ? yd : 1) * sizeof(int64_t));
    if (!map) {
      e = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "tensor.op", "out of memory");
      break;
    }
    for (int64_t o = 0; o < yd; o++) map[o] = dml_cpu_pad_source(m, o, pads[d], nd);
    dml_tensor_t h;
    memset(&h, 0, sizeof h);
    h.dtype = DML_DTYPE_I64;
    h.rank = 1;
    h.dims[0] = yd;
    h.data = map;
    dml_rt_tensor_t mt = NONE, g = NONE;
    e = dml_rt_tensor_from_host(dev, &h, &mt);
    free(map);
    dml_attr_t a = int_attr("axis", d);
    dml_rt_tensor_t gi[2] = {cur, mt};
    if (!e) e = dml_rt_tensor_op("Gather", gi, 2, &a, 1, &g, 1);
    drop(&mt);
    if (!e) {
      drop(&cur);
      cur = g;
    }
  }
  if (!e && cur.id == in[0].id) { /* nothing padded: a copy */
    e = op1("Identity", cur, NULL, 0, out);
    drop(&cur);
    return e;
  }
  if (e) {
    drop(&cur);
    return e;
  }
  *out = cur;
  return DML_OK;
}

/* Tile: per repeated dim d, x [A, n, B] viewed as [A, 1, n, B], expanded
 * to [A, reps, n, B] and copied (the Identity kernel). */
static dml_status_t tile(dml_rt_device_t *dev, const dml_rt_tensor_t *in, uint32_t n,
                         const dml_attr_t *attrs, uint32_t na,
                         const dml_rt_tensor_info_t *x, dml_rt_tensor_t *out) {
  static const char *const ok[] = {NULL};
  const dml_op_t id = DML_OP_TILE;
  dml_tensor_t y;
  DML_RETURN_IF_ERROR(prologue(dev, id, ok, 0, in, n, attrs, na, &y, 1, NULL, 0));
  int64_t reps[DML_MAX_RANK];
  uint32_t nr = 0;
  DML_RETURN_IF_ERROR(read_ints(id, in[1], "repeats", reps, DML_MAX_RANK, &nr));
  if (nr != (uint32_t)x->rank)
    return dml_status_detail(
        dml_status_make(DML_STATUS_INVALID_ARGUMENT, "Tile", "shape mismatch"),
        "repeats must have %d values (got %u)", (int)x->rank, nr);
  if (dml_dims_numel(y.dims, y.rank) == 0)
    return dml_rt_tensor_empty(dev, y.dtype, y.rank, y.dims, out);
  dml_rt_tensor_t cur = NONE;
  dml_status_t e = op1("Identity", in[0], NULL, 0, &cur);
  int64_t dims[DML_MAX_RANK];
  memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
  for (int32_t d = 0; d < x->rank && !e; d++) {
    if (reps[d] == 1) continue;
    int64_t A = 1, B = 1;
    for (int32_t i = 0; i < d; i++) A *= dims[i];
    for (int32_t i = d + 1; i < x->rank; i++) B *= dims[i];
    int64_t v4[4] = {A, 1, dims[d], B}, e4[4] = {A, reps[d], dims[d], B};
    dml_rt_tensor_t v = NONE, ex = NONE, c = NONE;
    e = dml_rt_tensor_reshape(cur, 4, v4, &v);
    if (!e) e = dml_rt_tensor_expand(v, 4, e4, &ex);
    if (!e) e = op1("Identity", ex, NULL, 0, &c);
    drop(&v);
    drop(&ex);
    dims[d] *= reps[d];
    if (!e) e = dml_rt_tensor_reshape(c, x->rank, dims, &v);
    drop(&c);
    if (!e) {
      drop(&cur);
      cur = v;
    }
  }
  if (e) {
    drop(&cur);
    return e;
  }
  *out = cur;
  return DML_OK;
}

/* Split: each part a slice of x along the axis, copied. */
static dml_status_t split(dml_rt_device_t *dev, const dml_rt_tensor_t *in, uint32_t n,
                          const dml_attr_t *attrs, uint32_t na,
                          const dml_rt_tensor_info_t *x, dml_rt_tensor_t *out,
                          uint32_t n_out) {
  static const char *const ok[] = {"axis", "split", "num_outputs", NULL};
  const dml_op_t id = DML_OP_SPLIT;
  dml_tensor_t y[DML_MAX_EAGER_OUTPUTS];
  DML_RETURN_IF_ERROR(prologue(dev, id, ok, 0, in, n, attrs, na, y, n_out, NULL, 0));
  int64_t axis = dml_attr_int(attrs, na, "axis", 0);
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis >= x->rank)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "Split", "axis out of range");
  dml_status_t e = DML_OK;
  int64_t at = 0;
  uint32_t i = 0;
  for (; i < n_out && !e; i++) {
    int64_t len = y[i].dims[axis], en = at + len, one = 1;
    dml_rt_tensor_t v = NONE;
    e = dml_rt_tensor_slice(in[0], 1, &axis, &at, &en, &one, &v);
    if (!e) e = op1("Identity", v, NULL, 0, &out[i]);
    drop(&v);
    at = en;
  }
  if (e)
    for (uint32_t j = 0; j < i; j++) drop(&out[j]);
  return e;
}

/* Reshape, Flatten, Squeeze, Unsqueeze: the shape rule's dims as
 * dml_rt_tensor_reshape gives them (a view where the strides allow, else a
 * contiguous copy). */
static dml_status_t reshape_op(dml_rt_device_t *dev, dml_op_t id,
                               const dml_rt_tensor_t *in, uint32_t n,
                               const dml_attr_t *attrs, uint32_t na,
                               dml_rt_tensor_t *out) {
  dml_tensor_t y;
  DML_RETURN_IF_ERROR(dml_rt_eager_rule(dev, id, in, n, attrs, na, &y, 1));
  return dml_rt_tensor_reshape(in[0], y.rank, y.dims, out);
}

/* The CPU kernels' operand check of GatherElements and ScatterElements
 * (dml_cpu_elements_check: indices i32 or i64 of data's rank, dims within
 * data's off the axis) on data x and indices ii, dims only; the axis,
 * normalized, in *axis. Errors name op `id` and device dev. */
static dml_status_t elements_check(dml_rt_device_t *dev, dml_op_t id,
                                   const dml_rt_tensor_info_t *x,
                                   const dml_rt_tensor_info_t *ii,
                                   const dml_attr_t *attrs, uint32_t na, dml_tensor_t *y,
                                   int64_t *axis) {
  dml_tensor_t ci[2];
  memset(ci, 0, sizeof ci);
  ci[0].dtype = x->dtype, ci[0].rank = x->rank;
  memcpy(ci[0].dims, x->dims, sizeof ci[0].dims);
  ci[1].dtype = ii->dtype, ci[1].rank = ii->rank;
  memcpy(ci[1].dims, ii->dims, sizeof ci[1].dims);
  dml_cpu_call_t call;
  memset(&call, 0, sizeof call);
  call.op = id;
  call.inputs = ci;
  call.n_inputs = 2;
  call.outputs = y;
  call.n_outputs = 1;
  call.attrs = attrs;
  call.n_attrs = na;
  *axis = 0;
  return on_dev(dml_cpu_elements_check(&call, axis), id, dev);
}

/* GatherElements: the indices checked on the device (ReduceMin and
 * ReduceMax read back: an index outside [-n, n) is OUT_OF_RANGE as on the
 * CPU), made non-negative (Mod), turned into x's flat element numbers
 * (Mul, Add of aranges broadcast along each dim) and gathered from x
 * flattened (Gather, axis 0). */
static dml_status_t gather_elements(dml_rt_device_t *dev, const dml_rt_tensor_t *in,
                                    uint32_t n, const dml_attr_t *attrs, uint32_t na,
                                    const dml_rt_tensor_info_t *x, dml_rt_tensor_t *out) {
  static const char *const ok[] = {"axis", NULL};
  const dml_op_t id = DML_OP_GATHER_ELEMENTS;
  dml_tensor_t y;
  dml_rt_tensor_info_t it[2];
  DML_RETURN_IF_ERROR(prologue(dev, id, ok, 0x3, in, n, attrs, na, &y, 1, it, 2));
  const dml_rt_tensor_info_t ii = it[1];
  int64_t axis = 0;
  DML_RETURN_IF_ERROR(elements_check(dev, id, x, &ii, attrs, na, &y, &axis));
  const int32_t r = x->rank;
  if (dml_dims_numel(ii.dims, ii.rank) == 0)
    return dml_rt_tensor_empty(dev, x->dtype, ii.rank, ii.dims, out);
  const int64_t N = x->dims[axis];
  int64_t xs[DML_MAX_RANK];
  xs[r - 1] = 1;
  for (int32_t d = r - 2; d >= 0; d--) xs[d] = xs[d + 1] * x->dims[d + 1];
  dml_rt_tensor_t idx = NONE, nt = NONE, lin = NONE, xf = NONE;
  dml_status_t e = DML_OK;
  if (ii.dtype == DML_DTYPE_I64) { /* Mod below makes the first new tensor */
    e = dml_rt_tensor_retain(in[1]);
    if (!e) idx = in[1];
  } else {
    e = cast(in[1], DML_DTYPE_I64, &idx);
  }
  if (!e) e = dml_rt_eager_index_range(dev, "GatherElements", idx, N);
  if (!e) e = dml_rt_tensor_full(dev, DML_DTYPE_I64, 0, NULL, (double)N, &nt);
  if (!e) e = op2_into("Mod", &idx, nt); /* fmod 0: the non-negative remainder */
  drop(&nt);
  if (!e && xs[axis] != 1) {
    e = dml_rt_tensor_full(dev, DML_DTYPE_I64, 0, NULL, (double)xs[axis], &nt);
    if (!e) e = op2_into("Mul", &idx, nt);
    drop(&nt);
  }
  lin = idx;
  idx = NONE;
  for (int32_t d = 0; d < r && !e; d++) {
    if (d == axis || ii.dims[d] == 1) continue;
    dml_rt_tensor_t ar = NONE, v = NONE;
    int64_t vd[DML_MAX_RANK];
    for (int32_t i = 0; i < r; i++) vd[i] = i == d ? ii.dims[d] : 1;
    e = dml_rt_tensor_arange(dev, DML_DTYPE_I64, 0, (double)(ii.dims[d] * xs[d]),
                             (double)xs[d], &ar);
    if (!e) e = dml_rt_tensor_reshape(ar, r, vd, &v);
    if (!e) e = op2_into("Add", &lin, v);
    drop(&ar);
    drop(&v);
  }
  int64_t nx = dml_dims_numel(x->dims, r);
  if (!e) e = dml_rt_tensor_reshape(in[0], 1, &nx, &xf);
  dml_rt_tensor_t gi[2] = {xf, lin};
  dml_attr_t a0 = int_attr("axis", 0);
  if (!e) e = dml_rt_tensor_op("Gather", gi, 2, &a0, 1, out, 1);
  dml_rt_tensor_t all[] = {idx, nt, lin, xf};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) drop(&all[i]);
  return e;
}

/* ---- GatherND and ScatterND (ONNX GatherND-13, ScatterND-18) ---- */

/* The indices tensor t (i64 or i32, any device) read back to the host as
 * i64 values (*out, malloc'd; *n their count). */
static dml_status_t indices_host(dml_op_t id, dml_rt_tensor_t t, int64_t **out,
                                 int64_t *n) {
  dml_rt_tensor_info_t it;
  *out = NULL;
  DML_RETURN_IF_ERROR(dml_rt_tensor_info(t, &it));
  if (it.dtype != DML_DTYPE_I64 && it.dtype != DML_DTYPE_I32)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, dml_op_name(id),
                           "indices must be i64 or i32, not %s",
                           dml_dtype_name(it.dtype));
  *n = dml_dims_numel(it.dims, it.rank);
  int64_t *v = (int64_t *)malloc((size_t)(*n > 0 ? *n : 1) * 8);
  void *raw = it.dtype == DML_DTYPE_I32 ? malloc((size_t)(*n > 0 ? *n : 1) * 4) : v;
  if (!v || !raw) {
    free(v);
    if (raw != v) free(raw);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, dml_op_name(id),
                           "out of host memory for %lld indices", (long long)*n);
  }
  dml_tensor_t h;
  memset(&h, 0, sizeof h);
  h.dtype = it.dtype;
  h.rank = it.rank;
  memcpy(h.dims, it.dims, sizeof h.dims);
  h.data = raw;
  dml_status_t e = dml_rt_tensor_to_host(t, &h);
  if (raw != v) {
    for (int64_t i = 0; i < *n; i++) v[i] = ((const int32_t *)raw)[i];
    free(raw);
  }
  if (e) {
    free(v);
    return e;
  }
  *out = v;
  return DML_OK;
}

/* The row of tuple `tup` (m indices) into dims d[0 .. m-1] (row-major), or
 * OUT_OF_RANGE as the CPU's kernels name it (value, its position `pos`,
 * the range of dim 0... as cpu_index.c's nd_offset/index_oob). */
static dml_status_t nd_row(dml_op_t id, dml_rt_device_t *dev, const int64_t *tup,
                           int64_t m, const int64_t *d, int64_t pos, int64_t *row) {
  int64_t r = 0;
  for (int64_t k = 0; k < m; k++) {
    int64_t v = tup[k], n = d[k];
    if (v < -n || v >= n)
      return dml_status_make(DML_STATUS_OUT_OF_RANGE, dml_op_name(id),
                             "index %lld (at position %lld) is out of range [-%lld, "
                             "%lld] (on %s)",
                             (long long)v, (long long)(pos + k), (long long)n,
                             (long long)(n - 1), dml_rt_device_name(dev));
    r = r * n + (v < 0 ? v + n : v);
  }
  *row = r;
  return DML_OK;
}

/* *y = Gather(rows, i64 host values idx[0 .. k-1], axis 0), reshaped to
 * dims od (rank orank). */
static dml_status_t gather_rows(dml_rt_device_t *dev, dml_rt_tensor_t rows,
                                const int64_t *idx, int64_t k, int32_t orank,
                                const int64_t *od, dml_rt_tensor_t *y) {
  dml_tensor_t h;
  memset(&h, 0, sizeof h);
  h.dtype = DML_DTYPE_I64;
  h.rank = 1;
  h.dims[0] = k;
  h.data = (void *)idx;
  dml_rt_tensor_t it = NONE, g = NONE;
  dml_status_t e = dml_rt_tensor_from_host(dev, &h, &it);
  dml_rt_tensor_t gin[2] = {rows, it};
  if (!e) e = dml_rt_tensor_op("Gather", gin, 2, NULL, 0, &g, 1);
  if (!e) e = dml_rt_tensor_reshape(g, orank, od, y);
  drop(&it);
  drop(&g);
  return e;
}

/* GatherND (batch_dims b) on any device: the indices read back, each tuple
 * turned into a row of data viewed as [rows, slice] on the host (its range
 * checked as the CPU checks it), those rows gathered (the Gather kernel or
 * the CPU's Gather: an exact copy) and reshaped to indices[:-1] +
 * data[b+m:]. */
static dml_status_t gather_nd(dml_rt_device_t *dev, const dml_rt_tensor_t *in, uint32_t n,
                              const dml_attr_t *attrs, uint32_t na,
                              const dml_rt_tensor_info_t *x, dml_rt_tensor_t *out) {
  static const char *const ok[] = {"batch_dims", NULL};
  const dml_op_t id = DML_OP_GATHER_ND;
  DML_RETURN_IF_ERROR(only_attrs(id, attrs, na, ok));
  if (n != 2 || !in[1].id)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "GatherND",
                           "data and indices are required (%u inputs)", n);
  dml_rt_tensor_info_t ii;
  DML_RETURN_IF_ERROR(dml_rt_tensor_info(in[1], &ii));
  int64_t b = dml_attr_int(attrs, na, "batch_dims", 0);
  const int32_t r = x->rank, q = ii.rank;
  char a1[96], a2[96];
  dml_dims_str(x->dims, x->rank, a1, sizeof a1);
  dml_dims_str(ii.dims, ii.rank, a2, sizeof a2);
#define ND_SHAPE(...)                                                                   \
  dml_status_detail(dml_status_make(DML_STATUS_INVALID_ARGUMENT, "GatherND",            \
                                    "shape mismatch (on %s)", dml_rt_device_name(dev)), \
                    __VA_ARGS__)
  if (r < 1 || q < 1 || b < 0 || b >= q || b >= r)
    return ND_SHAPE("data %s, indices %s: batch_dims %lld must be below both ranks", a1,
                    a2, (long long)b);
  const int64_t m = ii.dims[q - 1];
  if (m < 1 || m > r - b)
    return ND_SHAPE(
        "data %s, indices %s: the indices' last dim %lld must be in [1, %lld]", a1, a2,
        (long long)m, (long long)(r - b));
  for (int64_t d = 0; d < b; d++)
    if (ii.dims[d] != x->dims[d])
      return ND_SHAPE("data %s, indices %s: batch dim %lld differs", a1, a2,
                      (long long)d);
  int64_t od[DML_MAX_RANK], nb = 1, per_b = 1, slice = 1, blk = 1;
  int32_t orank = 0;
  if ((q - 1) + (r - (int32_t)(b + m)) > DML_MAX_RANK)
    return ND_SHAPE("data %s, indices %s: the output has more than %d dims", a1, a2,
                    DML_MAX_RANK);
  for (int32_t d = 0; d < q - 1; d++) od[orank++] = ii.dims[d];
  for (int32_t d = (int32_t)(b + m); d < r; d++) od[orank++] = x->dims[d];
#undef ND_SHAPE
  for (int64_t d = 0; d < b; d++) nb *= x->dims[d];
  for (int32_t d = (int32_t)b; d < q - 1; d++) per_b *= ii.dims[d];
  for (int64_t d = b; d < b + m; d++) blk *= x->dims[d];
  for (int32_t d = (int32_t)(b + m); d < r; d++) slice *= x->dims[d];
  const int64_t T = nb * per_b;
  if (T == 0 || slice == 0 || dml_dims_numel(x->dims, x->rank) == 0) {
    if (T > 0 && slice > 0) /* tuples into an empty data: out of range */
      return dml_status_make(DML_STATUS_OUT_OF_RANGE, "GatherND",
                             "indices into an empty data %s (on %s)", a1,
                             dml_rt_device_name(dev));
    return dml_rt_tensor_zeros(dev, x->dtype, orank, od, out);
  }
  int64_t *iv = NULL, ni = 0;
  DML_RETURN_IF_ERROR(indices_host(id, in[1], &iv, &ni));
  int64_t *rows = (int64_t *)malloc((size_t)T * 8);
  dml_status_t e = rows ? DML_OK
                        : dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "GatherND",
                                          "out of host memory");
  for (int64_t t = 0; t < T && !e; t++) {
    int64_t rw = 0;
    e = nd_row(id, dev, iv + t * m, m, x->dims + b, t * m, &rw);
    rows[t] = (t / per_b) * blk + rw;
  }
  free(iv);
  dml_rt_tensor_t xr = NONE;
  const int64_t rd[2] = {nb * blk, slice};
  if (!e) e = dml_rt_tensor_reshape(in[0], 2, rd, &xr);
  if (!e) e = gather_rows(dev, xr, rows, T, orank, od, out);
  drop(&xr);
  free(rows);
  return e;
}

/* The scatter reduction `red` ("add", "mul", "max", "min") of d and u
 * (the same dims and dtype dt) as the CPU's reduce_elem writes it
 * (runtime/cpu/cpu_index.c): add Add, mul Mul, max u > d ? u : d, min
 * u < d ? u : d (a NaN update leaves d, a NaN d stays; a -0 / +0 tie
 * keeps d); bool: add and max Or, mul and min And. */
static dml_status_t scatter_reduce(const char *red, dml_dtype_t dt, dml_rt_tensor_t d,
                                   dml_rt_tensor_t u, dml_rt_tensor_t *y) {
  const int b = dt == DML_DTYPE_BOOL, mx = !strcmp(red, "max");
  if (!strcmp(red, "add")) return op2(b ? "Or" : "Add", d, u, y);
  if (!strcmp(red, "mul")) return op2(b ? "And" : "Mul", d, u, y);
  if (b) return op2(mx ? "Or" : "And", d, u, y);
  dml_rt_tensor_t c = NONE;
  dml_status_t e = op2(mx ? "Greater" : "Less", u, d, &c);
  dml_rt_tensor_t w[3] = {c, u, d};
  *y = NONE;
  if (!e) e = dml_rt_tensor_op("Where", w, 3, NULL, 0, y, 1);
  drop(&c);
  return e;
}

/* The scatter op `id`'s attribute `reduction` (default "none") into *red:
 * DML_OK for one the scatter ops take (none, add, mul, max, min), else
 * UNIMPLEMENTED worded as the CPU's kernels word it. */
static dml_status_t scatter_reduction(dml_op_t id, const dml_attr_t *attrs, uint32_t na,
                                      const char **red) {
  static const char *const ok[] = {"none", "add", "mul", "max", "min"};
  *red = dml_attr_string(attrs, na, "reduction", "none");
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
    if (!strcmp(*red, ok[i])) return DML_OK;
  return dml_status_make(DML_STATUS_UNIMPLEMENTED, dml_op_name(id),
                         "reduction '%s' is not supported", *red);
}

/* The rows of data2 [R, S] with the update rows of upd2 [T, S] applied in
 * order t = 0 .. T-1 to rows dst[t] (in [0, R), checked by the caller), as
 * the CPU's ScatterND and ScatterElements kernels apply them; *out is [R,
 * S] of data2's dtype dt.
 * - reduction none: each row mapped on the host to the last update written
 *   there or to itself; [data2; upd2] concatenated and gathered by that
 *   map (an exact copy): 1 Concat (buffer copies) and 1 Gather.
 * - add, mul, max, min: in rounds, deterministic and in the CPU's order:
 *   round k applies, to every row hit at least k + 1 times, its (k+1)-th
 *   update: the rows and their updates gathered ([c_k, S] each), reduced
 *   (scatter_reduce: 1 or 2 dispatches), written back by the map above
 *   (a Concat of [cur; result] and a Gather). Rounds = the most updates
 *   hitting one row (1 without duplicates); each round 2 Gathers, the
 *   reduction, a Concat and a Gather, and 3 small uploads (the host's
 *   work: O(R + T) in all, updates bucketed by round). The result is
 *   the CPU's sequence of roundings (f32: bit for bit), whatever order the
 *   device runs invocations in: no atomics. */
static dml_status_t scatter_rows(dml_rt_device_t *dev, dml_op_t id, dml_rt_tensor_t data2,
                                 dml_rt_tensor_t upd2, const int64_t *dst, int64_t R,
                                 int64_t T, int64_t S, const char *red, dml_dtype_t dt,
                                 dml_rt_tensor_t *out) {
  const int64_t rd[2] = {R, S};
  const int none = !strcmp(red, "none");
  const size_t nR = (size_t)(R > 0 ? R : 1), nT = (size_t)(T > 0 ? T : 1);
  int64_t *map = (int64_t *)malloc(nR * 8), *cnt = (int64_t *)calloc(nR, 8);
  int64_t *round = (int64_t *)malloc(nT * 8), *order = (int64_t *)malloc(nT * 8);
  int64_t *rows = (int64_t *)malloc(nT * 8), *ups = (int64_t *)malloc(nT * 8);
  int64_t *first = (int64_t *)calloc(nT + 1, 8); /* round k: order[first[k] ..] */
  dml_status_t e =
      map && cnt && round && order && rows && ups && first
          ? DML_OK
          : dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, dml_op_name(id),
                            "out of host memory for %lld rows", (long long)R);
  dml_rt_tensor_t cur = NONE;
  int64_t K = 0;
  for (int64_t t = 0; t < T && !e; t++) {
    round[t] = none ? 0 : cnt[dst[t]]++;
    if (round[t] + 1 > K) K = round[t] + 1;
    first[round[t] + 1]++;
  }
  for (int64_t k = 0; k < K && !e; k++) first[k + 1] += first[k];
  for (int64_t t = 0; t < T && !e; t++) /* updates by round, in order */
    order[first[round[t]]++] = t;
  for (int64_t k = K; k > 0 && !e; k--) first[k] = first[k - 1]; /* restored */
  if (!e) first[0] = 0;
  for (int64_t i = 0; i < R && !e; i++) map[i] = i;
  if (!e) e = dml_rt_tensor_retain(data2);
  if (!e) cur = data2;
  for (int64_t k = 0; k < K && !e; k++) {
    dml_rt_tensor_t a = NONE, b = NONE, c = NONE, cat = NONE, nxt = NONE;
    const int64_t ck = first[k + 1] - first[k];
    for (int64_t j = 0; j < ck; j++) {
      const int64_t t = order[first[k] + j];
      rows[j] = dst[t];
      ups[j] = t;
      map[dst[t]] = R + j; /* none: the last update wins */
    }
    if (none) {
      e = dml_rt_tensor_retain(upd2);
      if (!e) c = upd2;
    } else {
      const int64_t cd[2] = {ck, S};
      e = gather_rows(dev, cur, rows, ck, 2, cd, &a);
      if (!e) e = gather_rows(dev, upd2, ups, ck, 2, cd, &b);
      if (!e) e = scatter_reduce(red, dt, a, b, &c);
    }
    dml_rt_tensor_t parts[2] = {cur, c};
    dml_attr_t a0 = int_attr("axis", 0);
    if (!e) e = dml_rt_tensor_op("Concat", parts, 2, &a0, 1, &cat, 1);
    if (!e) e = gather_rows(dev, cat, map, R, 2, rd, &nxt);
    if (!e) {
      drop(&cur);
      cur = nxt;
    }
    for (int64_t j = 0; j < ck; j++) map[rows[j]] = rows[j]; /* reset */
    drop(&a);
    drop(&b);
    drop(&c);
    drop(&cat);
  }
  if (!e)
    *out = cur;
  else
    drop(&cur);
  free(map);
  free(cnt);
  free(round);
  free(order);
  free(rows);
  free(ups);
  free(first);
  return e;
}

/* ScatterND (ONNX ScatterND-18: reduction none, add, mul, max, min) on a
 * GPU: the indices read back, every tuple checked as the CPU's kernel
 * checks them (OUT_OF_RANGE naming the index and its position) and turned
 * into a row of data viewed as [rows, slice], then scatter_rows. */
static dml_status_t scatter_nd(dml_rt_device_t *dev, const dml_rt_tensor_t *in,
                               uint32_t n, const dml_attr_t *attrs, uint32_t na,
                               const dml_rt_tensor_info_t *x, dml_rt_tensor_t *out) {
  static const char *const ok[] = {"reduction", NULL};
  const dml_op_t id = DML_OP_SCATTER_ND;
  const char *red = NULL;
  dml_tensor_t y;
  dml_rt_tensor_info_t it[3];
  DML_RETURN_IF_ERROR(prologue(dev, id, ok, 0x7, in, n, attrs, na, &y, 1, it, 3));
  DML_RETURN_IF_ERROR(scatter_reduction(id, attrs, na, &red));
  const dml_rt_tensor_info_t ii = it[1], iu = it[2];
  const int32_t r = x->rank, q = ii.rank;
  const int64_t m = q ? ii.dims[q - 1] : 0;
  int64_t ed[2 * DML_MAX_RANK], T = 1, R = 1, slice = 1;
  int32_t er = 0;
  for (int32_t d = 0; d < q - 1; d++) ed[er++] = ii.dims[d], T *= ii.dims[d];
  for (int32_t d = (int32_t)m; d < r; d++) ed[er++] = x->dims[d], slice *= x->dims[d];
  for (int64_t d = 0; d < m && d < r; d++) R *= x->dims[d];
  int same =
      r >= 1 && q >= 1 && m >= 1 && m <= r && er == iu.rank && iu.dtype == x->dtype;
  for (int32_t d = 0; d < er && same; d++) same = ed[d] == iu.dims[d];
  if (!same) {
    char a1[96], a2[96], a3[96];
    return dml_status_detail(
        dml_status_make(DML_STATUS_INVALID_ARGUMENT, "ScatterND",
                        "shape mismatch (on %s)", dml_rt_device_name(dev)),
        "data %s%s, indices %s, updates %s%s: updates must be indices[:-1] + data[m:] "
        "of data's dtype, m (the indices' last dim) in [1, rank]",
        dml_dtype_name(x->dtype), dml_dims_str(x->dims, x->rank, a1, sizeof a1),
        dml_dims_str(ii.dims, ii.rank, a2, sizeof a2), dml_dtype_name(iu.dtype),
        dml_dims_str(iu.dims, iu.rank, a3, sizeof a3));
  }
  if (T == 0) return op1("Identity", in[0], NULL, 0, out); /* a new tensor */
  int64_t *iv = NULL, ni = 0;
  DML_RETURN_IF_ERROR(indices_host(id, in[1], &iv, &ni));
  int64_t *dst = (int64_t *)malloc((size_t)T * 8);
  dml_status_t e = dst ? DML_OK
                       : dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "ScatterND",
                                         "out of host memory");
  /* every index checked first, as the CPU's kernel does */
  for (int64_t t = 0; t < T && !e; t++)
    e = nd_row(id, dev, iv + t * m, m, x->dims, t * m, &dst[t]);
  free(iv);
  if (!e && slice == 0) { /* nothing moves: the indices checked only */
    free(dst);
    return op1("Identity", in[0], NULL, 0, out);
  }
  dml_rt_tensor_t d2 = NONE, u2 = NONE, y2 = NONE;
  const int64_t dd[2] = {R, slice}, ud[2] = {T, slice};
  if (!e) e = dml_rt_tensor_reshape(in[0], 2, dd, &d2);
  if (!e) e = dml_rt_tensor_reshape(in[2], 2, ud, &u2);
  if (!e) e = scatter_rows(dev, id, d2, u2, dst, R, T, slice, red, x->dtype, &y2);
  if (!e) e = dml_rt_tensor_reshape(y2, x->rank, x->dims, out);
  drop(&d2);
  drop(&u2);
  drop(&y2);
  free(dst);
  return e;
}

/* ScatterElements (ONNX ScatterElements-18: `axis`, reduction none, add,
 * mul, max, min) on a GPU: the checks of the CPU's kernel
 * (dml_cpu_elements_check; updates of the indices' dims and data's dtype),
 * the indices read back and each checked (OUT_OF_RANGE naming the index
 * and its position, as the CPU) and turned into an element number of data,
 * then scatter_rows on data viewed as [numel, 1] and the updates as [n, 1]
 * in C order (the CPU's order). */
static dml_status_t scatter_elements(dml_rt_device_t *dev, const dml_rt_tensor_t *in,
                                     uint32_t n, const dml_attr_t *attrs, uint32_t na,
                                     const dml_rt_tensor_info_t *x,
                                     dml_rt_tensor_t *out) {
  static const char *const ok[] = {"axis", "reduction", NULL};
  const dml_op_t id = DML_OP_SCATTER_ELEMENTS;
  const char *red = NULL;
  DML_RETURN_IF_ERROR(scatter_reduction(id, attrs, na, &red));
  dml_tensor_t y;
  dml_rt_tensor_info_t it[3];
  DML_RETURN_IF_ERROR(prologue(dev, id, ok, 0x7, in, n, attrs, na, &y, 1, it, 3));
  const dml_rt_tensor_info_t ii = it[1], iu = it[2];
  int64_t axis = 0;
  DML_RETURN_IF_ERROR(elements_check(dev, id, x, &ii, attrs, na, &y, &axis));
  const int32_t r = x->rank;
  if (iu.dtype != x->dtype || iu.rank != ii.rank ||
      memcmp(iu.dims, ii.dims, sizeof(int64_t) * (size_t)r)) {
    char a1[96], a2[96], a3[96];
    return dml_status_detail(
        dml_status_make(DML_STATUS_INVALID_ARGUMENT, "ScatterElements",
                        "shape mismatch (on %s)", dml_rt_device_name(dev)),
        "data %s%s, indices %s, updates %s%s: updates must have the indices' shape and "
        "data's dtype",
        dml_dtype_name(x->dtype), dml_dims_str(x->dims, x->rank, a1, sizeof a1),
        dml_dims_str(ii.dims, ii.rank, a2, sizeof a2), dml_dtype_name(iu.dtype),
        dml_dims_str(iu.dims, iu.rank, a3, sizeof a3));
  }
  const int64_t T = dml_dims_numel(ii.dims, r), R = dml_dims_numel(x->dims, r),
                N = x->dims[axis];
  if (T == 0) return op1("Identity", in[0], NULL, 0, out); /* a new tensor */
  int64_t *iv = NULL, ni = 0;
  DML_RETURN_IF_ERROR(indices_host(id, in[1], &iv, &ni));
  dml_status_t e = DML_OK;
  for (int64_t t = 0; t < T && !e; t++) /* every index first, as the CPU */
    if (iv[t] < -N || iv[t] >= N)
      e = dml_status_make(DML_STATUS_OUT_OF_RANGE, "ScatterElements",
                          "index %lld (at position %lld) is out of range [-%lld, %lld] "
                          "(on %s)",
                          (long long)iv[t], (long long)t, (long long)N,
                          (long long)(N - 1), dml_rt_device_name(dev));
  int64_t xs[DML_MAX_RANK], idx[DML_MAX_RANK] = {0};
  xs[r - 1] = 1;
  for (int32_t d = r - 2; d >= 0; d--) xs[d] = xs[d + 1] * x->dims[d + 1];
  for (int64_t t = 0; t < T && !e; t++) { /* element numbers, in place */
    int64_t v = iv[t] < 0 ? iv[t] + N : iv[t], off = 0;
    for (int32_t d = 0; d < r; d++) off += (d == axis ? v : idx[d]) * xs[d];
    iv[t] = off;
    for (int32_t d = r - 1; d >= 0 && ++idx[d] == ii.dims[d]; d--) idx[d] = 0;
  }
  dml_rt_tensor_t d2 = NONE, u2 = NONE, y2 = NONE;
  const int64_t dd[2] = {R, 1}, ud[2] = {T, 1};
  if (!e) e = dml_rt_tensor_reshape(in[0], 2, dd, &d2);
  if (!e) e = dml_rt_tensor_reshape(in[2], 2, ud, &u2);
  if (!e) e = scatter_rows(dev, id, d2, u2, iv, R, T, 1, red, x->dtype, &y2);
  if (!e) e = dml_rt_tensor_reshape(y2, r, x->dims, out);
  drop(&d2);
  drop(&u2);
  drop(&y2);
  free(iv);
  return e;
}

/* ---- TopK (ONNX TopK-11) ---- */

/* An i64 (or bool: 0/1 bytes) tensor of the n host values v on dev. */
static dml_status_t host_vec(dml_rt_device_t *dev, dml_dtype_t dt, const void *v,
                             int64_t n, dml_rt_tensor_t *out) {
  dml_tensor_t h;
  memset(&h, 0, sizeof h);
  h.dtype = dt;
  h.rank = 1;
  h.dims[0] = n;
  h.data = (void *)v;
  *out = NONE;
  return dml_rt_tensor_from_host(dev, &h, out);
}

/* The element of dtype dt that orders last for TopK (largest: the lowest
 * value, -inf for floats; smallest: the highest, +inf) expanded to
 * [rows, w] (a view of one element). */
static dml_status_t topk_pad(dml_rt_device_t *dev, dml_dtype_t dt, int largest,
                             int64_t rows, int64_t w, dml_rt_tensor_t *out) {
  uint8_t b[16] = {0};
  if (dml_dtype_is_float(dt)) {
    dml_store_f64(dt, b, 0, largest ? -INFINITY : INFINITY);
  } else {
    const size_t bits = 8 * dml_dtype_size(dt);
    const int uns = dt == DML_DTYPE_U8 || dt == DML_DTYPE_U16 || dt == DML_DTYPE_U32 ||
                    dt == DML_DTYPE_U64;
    const uint64_t top = bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
    uint64_t v = uns ? (largest ? 0 : top) : largest ? (top >> 1) + 1 : top >> 1;
    memcpy(b, &v, dml_dtype_size(dt)); /* little-endian: the low bytes */
  }
  dml_rt_tensor_t one = NONE;
  dml_status_t e = host_vec(dev, dt, b, 1, &one);
  const int64_t d[2] = {rows, w};
  if (!e) e = dml_rt_tensor_expand(one, 2, d, out);
  drop(&one);
  return e;
}

/* *b = (pv, pk) orders before (v, k) in TopK's order: a strictly better
 * value, or an equal one (not worse: no NaN is left) with the smaller key
 * (Greater or Less, GreaterOrEqual or LessOrEqual, Less, And, Or: 5
 * dispatches). */
static dml_status_t topk_first(int largest, dml_rt_tensor_t pv, dml_rt_tensor_t pk,
                               dml_rt_tensor_t v, dml_rt_tensor_t k, dml_rt_tensor_t *b) {
  dml_rt_tensor_t gt = NONE, ge = NONE, kl = NONE;
  *b = NONE;
  dml_status_t e = op2(largest ? "Greater" : "Less", pv, v, &gt);
  if (!e) e = op2(largest ? "GreaterOrEqual" : "LessOrEqual", pv, v, &ge);
  if (!e) e = op2("Less", pk, k, &kl);
  if (!e) e = op2_into("And", &ge, kl);
  if (!e) e = op2("Or", gt, ge, b);
  drop(&gt);
  drop(&ge);
  drop(&kl);
  return e;
}

/* *t reshaped to dims d (rank r): a view of the contiguous tensor. */
static dml_status_t topk_reshape(dml_rt_tensor_t *t, int32_t r, const int64_t *d) {
  dml_rt_tensor_t y = NONE;
  dml_status_t e = dml_rt_tensor_reshape(*t, r, d, &y);
  if (!e) {
    drop(t);
    *t = y;
  }
  return e;
}

/* One compare-exchange stage of a bitonic sort of the rows of *v and
 * *key ([R, L], L a power of two) in TopK's order: element i against i ^
 * j, ascending ("first" first) within blocks of `size` whose bit is 0
 * (kh and dm: host scratch of L values): 2 Gathers, topk_first, a Xor
 * with the direction and 2 Wheres (10 dispatches, 2 uploads of L). */
static dml_status_t topk_stage(dml_rt_device_t *dev, int largest, dml_rt_tensor_t *v,
                               dml_rt_tensor_t *key, int64_t L, int64_t size, int64_t j,
                               int64_t *kh, uint8_t *dm) {
  for (int64_t i = 0; i < L; i++) {
    kh[i] = i ^ j;
    dm[i] = ((i & size) == 0) != ((i & j) == 0); /* takes the later one */
  }
  dml_rt_tensor_t pi = NONE, msk = NONE, pv = NONE, pk = NONE, b = NONE, tk = NONE,
                  nv = NONE, nk = NONE;
  dml_attr_t a1 = int_attr("axis", 1);
  dml_status_t e = host_vec(dev, DML_DTYPE_I64, kh, L, &pi);
  if (!e) e = host_vec(dev, DML_DTYPE_BOOL, dm, L, &msk);
  dml_rt_tensor_t g1[2] = {*v, pi}, g2[2] = {*key, pi};
  if (!e) e = dml_rt_tensor_op("Gather", g1, 2, &a1, 1, &pv, 1);
  if (!e) e = dml_rt_tensor_op("Gather", g2, 2, &a1, 1, &pk, 1);
  if (!e) e = topk_first(largest, pv, pk, *v, *key, &b);
  if (!e) e = op2("Xor", b, msk, &tk);
  dml_rt_tensor_t w1[3] = {tk, pv, *v}, w2[3] = {tk, pk, *key};
  if (!e) e = dml_rt_tensor_op("Where", w1, 3, NULL, 0, &nv, 1);
  if (!e) e = dml_rt_tensor_op("Where", w2, 3, NULL, 0, &nk, 1);
  if (!e) {
    drop(v);
    drop(key);
    *v = nv;
    *key = nk;
    nv = nk = NONE;
  }
  dml_rt_tensor_t all[] = {pi, msk, pv, pk, b, tk, nv, nk};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) drop(&all[i]);
  return e;
}

/* TopK (`axis`, `largest`, `sorted`; K the input 1) on a GPU, composed: x
 * with the axis moved last viewed as [rows, n]; the values to sort v (f16
 * and bf16 cast to f32, exact) padded to N = the next power of two by the
 * element that orders last, each with a key: its index j (pads 4N + j); a
 * NaN (it orders above every number, as the CPU's topk_before) becomes
 * +inf with key j - 2N (largest: before a +inf) or j + 2N (smallest:
 * after one, before the pads). Then a bitonic sort of (v, key) along the
 * rows in the order "larger (smaller) value first, ties by the smaller
 * key" (the CPU's: equal values keep the lower index first), per stage a
 * Gather of the partners' values and keys, Greater, Less, GreaterOrEqual
 * (LessOrEqual), And, Or, Xor with the stage's direction mask and two
 * Wheres (10 dispatches, 2 small uploads); log2 N (log2 N + 1) / 2 stages.
 * The first K keys give the Indices (Mod 2N), the Values are gathered from
 * x by them (GatherElements: the elements' own bits), both moved back to
 * the axis. Integer dtypes the compares take (i32, i64, u8, i8, i16). */
static dml_status_t top_k(dml_rt_device_t *dev, const dml_rt_tensor_t *in, uint32_t n,
                          const dml_attr_t *attrs, uint32_t na,
                          const dml_rt_tensor_info_t *x, dml_rt_tensor_t *out,
                          uint32_t n_out) {
  static const char *const ok[] = {"axis", "largest", "sorted", NULL};
  const dml_op_t id = DML_OP_TOP_K;
  dml_tensor_t ys[2];
  DML_RETURN_IF_ERROR(prologue(dev, id, ok, 0x3, in, n, attrs, na, ys, 2, NULL, 0));
  if (n_out < 1 || n_out > 2)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "TopK",
                           "TopK has 1 or 2 outputs (Values, Indices), not %u", n_out);
  if (!dml_dtype_is_float(x->dtype) && !dml_dtype_is_int(x->dtype))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "TopK",
                           "X must be a float or integer dtype, not %s",
                           dml_dtype_name(x->dtype));
  const int32_t r = x->rank;
  int64_t axis = dml_attr_int(attrs, na, "axis", -1);
  if (axis < 0) axis += r; /* the rule checked it */
  const int largest = dml_attr_int(attrs, na, "largest", 1) != 0;
  const int64_t len = x->dims[axis], K = ys[0].dims[axis];
  const int64_t rows = len ? dml_dims_numel(x->dims, r) / len : 0;
  for (uint32_t i = 0; i < n_out; i++) out[i] = NONE;
  if (K == 0 || rows == 0) {
    dml_status_t e = dml_rt_tensor_empty(dev, x->dtype, r, ys[0].dims, &out[0]);
    if (!e && n_out > 1)
      e = dml_rt_tensor_empty(dev, DML_DTYPE_I64, r, ys[1].dims, &out[1]);
    if (e)
      for (uint32_t i = 0; i < n_out; i++) drop(&out[i]);
    return e;
  }
  int64_t perm[DML_MAX_RANK], inv[DML_MAX_RANK], pd[DML_MAX_RANK];
  int32_t np = 0;
  for (int32_t d = 0; d < r; d++)
    if (d != axis) perm[np++] = d;
  perm[np++] = axis;
  for (int32_t d = 0; d < r; d++) inv[perm[d]] = d, pd[d] = x->dims[perm[d]];
  int64_t N = 1;
  while (N < len) N *= 2;
  const int fl = dml_dtype_is_float(x->dtype);
  const dml_dtype_t vt = is_half(x->dtype) ? DML_DTYPE_F32 : x->dtype;
  int64_t *kh = (int64_t *)malloc((size_t)N * 3 * 8);
  uint8_t *dm = (uint8_t *)malloc((size_t)N);
  dml_status_t e =
      kh && dm ? DML_OK
               : dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "TopK",
                                 "out of host memory for %lld keys", (long long)N);
  dml_rt_tensor_t xt = NONE, x2 = NONE, v = NONE, pad = NONE, key = NONE, t = NONE,
                  t2 = NONE, nan = NONE, inf = NONE;
  const int64_t d2[2] = {rows, len}, dN[2] = {rows, N};
  if (!e) e = dml_rt_tensor_transpose(in[0], perm, &xt);
  if (!e) e = dml_rt_tensor_reshape(xt, 2, d2, &x2);
  if (!e && vt != x->dtype)
    e = cast(x2, vt, &v);
  else if (!e)
    e = dml_rt_tensor_contiguous(x2, &v);
  if (!e && N > len) { /* the pads */
    e = topk_pad(dev, vt, largest, rows, N - len, &pad);
    dml_rt_tensor_t parts[2] = {v, pad};
    dml_attr_t a1 = int_attr("axis", 1);
    if (!e) e = dml_rt_tensor_op("Concat", parts, 2, &a1, 1, &t, 1);
    if (!e) {
      drop(&v);
      v = t;
      t = NONE;
    }
  }
  for (int64_t j = 0; j < N && !e; j++) {
    kh[j] = j < len ? j : 4 * N + j;
    kh[N + j] = j + (largest ? -2 * N : 2 * N);
  }
  if (!e) e = host_vec(dev, DML_DTYPE_I64, kh, N, &t);
  if (!e) e = dml_rt_tensor_expand(t, 2, dN, &t2);
  if (!e) e = dml_rt_tensor_contiguous(t2, &key);
  drop(&t);
  drop(&t2);
  if (!e && fl) { /* NaN: +inf, keyed before (largest) or after a +inf */
    e = op1("IsNaN", v, NULL, 0, &nan);
    if (!e) e = dml_rt_tensor_full(dev, vt, 0, NULL, INFINITY, &inf);
    dml_rt_tensor_t w[3] = {nan, inf, v};
    if (!e) e = dml_rt_tensor_op("Where", w, 3, NULL, 0, &t, 1);
    if (!e) {
      drop(&v);
      v = t;
      t = NONE;
    }
    if (!e) e = host_vec(dev, DML_DTYPE_I64, kh + N, N, &t2);
    dml_rt_tensor_t wk[3] = {nan, t2, key};
    if (!e) e = dml_rt_tensor_op("Where", wk, 3, NULL, 0, &t, 1);
    if (!e) {
      drop(&key);
      key = t;
      t = NONE;
    }
    drop(&t2);
    drop(&nan);
    drop(&inf);
  }
  dml_attr_t a1 = int_attr("axis", 1);
  /* chunks of P (K rounded up to a power of two) sorted, then halved:
   * each pair of sorted chunks A, B gives its best P elements as the
   * bitonic sequence best(A[i], B[P-1-i]) (B a reversed view), merged by
   * log2 P stages; N / P chunks per row become one */
  int64_t P = 1;
  while (P < K) P *= 2;
  const int64_t dc[2] = {rows * (N / P), P};
  if (!e) e = topk_reshape(&v, 2, dc);
  if (!e) e = topk_reshape(&key, 2, dc);
  for (int64_t size = 2; size <= P && !e; size *= 2)
    for (int64_t j = size / 2; j > 0 && !e; j /= 2)
      e = topk_stage(dev, largest, &v, &key, P, size, j, kh, dm);
  for (int64_t W = N; W > P && !e; W /= 2) {
    const int64_t M = rows * (W / (2 * P)), d3[3] = {M, 2, P}, d2m[2] = {M, P};
    const int64_t ax[2] = {1, 2}, s0[2] = {0, 0}, e0[2] = {1, P}, st1[2] = {1, 1},
                  s1[2] = {1, P - 1}, e1[2] = {2, -P - 1}, stm[2] = {1, -1};
    dml_rt_tensor_t p[2] = {v, key}, av[2] = {NONE, NONE}, bv[2] = {NONE, NONE},
                    t3 = NONE, ts = NONE, b = NONE, c[2] = {NONE, NONE};
    for (int q = 0; q < 2 && !e; q++) {
      e = dml_rt_tensor_reshape(p[q], 3, d3, &t3);
      if (!e) e = dml_rt_tensor_slice(t3, 2, ax, s0, e0, st1, &ts);
      if (!e) e = dml_rt_tensor_reshape(ts, 2, d2m, &av[q]);
      drop(&ts);
      if (!e) e = dml_rt_tensor_slice(t3, 2, ax, s1, e1, stm, &ts);
      if (!e) e = dml_rt_tensor_reshape(ts, 2, d2m, &bv[q]);
      drop(&ts);
      drop(&t3);
    }
    if (!e) e = topk_first(largest, bv[0], bv[1], av[0], av[1], &b);
    dml_rt_tensor_t w1[3] = {b, bv[0], av[0]}, w2[3] = {b, bv[1], av[1]};
    if (!e) e = dml_rt_tensor_op("Where", w1, 3, NULL, 0, &c[0], 1);
    if (!e) e = dml_rt_tensor_op("Where", w2, 3, NULL, 0, &c[1], 1);
    if (!e) {
      drop(&v);
      drop(&key);
      v = c[0];
      key = c[1];
      c[0] = c[1] = NONE;
    }
    dml_rt_tensor_t all[] = {av[0], av[1], bv[0], bv[1], b, c[0], c[1]};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) drop(&all[i]);
    for (int64_t j = P / 2; j > 0 && !e; j /= 2)
      e = topk_stage(dev, largest, &v, &key, P, P, j, kh, dm);
  }
  const int64_t dr[2] = {rows, P};
  if (!e) e = topk_reshape(&key, 2, dr);
  /* the first K keys: Indices; Values gathered from x by them */
  dml_rt_tensor_t ks = NONE, idx = NONE, m2 = NONE, vals = NONE;
  const int64_t ax1 = 1, st0 = 0, en = K, one = 1;
  if (!e) e = dml_rt_tensor_slice(key, 1, &ax1, &st0, &en, &one, &ks);
  if (!e) e = dml_rt_tensor_full(dev, DML_DTYPE_I64, 0, NULL, (double)(2 * N), &m2);
  if (!e) e = op2("Mod", ks, m2, &idx); /* fmod 0: the non-negative remainder */
  dml_rt_tensor_t ge_in[2] = {x2, idx};
  if (!e && n_out > 0) e = dml_rt_tensor_op("GatherElements", ge_in, 2, &a1, 1, &vals, 1);
  pd[r - 1] = K;
  for (uint32_t o = 0; o < n_out && !e; o++) {
    dml_rt_tensor_t src = o ? idx : vals, rs = NONE, tr = NONE;
    e = dml_rt_tensor_reshape(src, r, pd, &rs);
    if (!e) e = dml_rt_tensor_transpose(rs, inv, &tr);
    if (!e) e = dml_rt_tensor_contiguous(tr, &out[o]);
    drop(&rs);
    drop(&tr);
  }
  if (e)
    for (uint32_t o = 0; o < n_out; o++) drop(&out[o]);
  dml_rt_tensor_t all[] = {xt, x2, v, pad, key, ks, idx, m2, vals};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) drop(&all[i]);
  free(kh);
  free(dm);
  return e;
}

/* ---- ConvTranspose (ONNX ConvTranspose-11) ---- */

/* ConvTranspose's geometry: X [N, C, S...] (r = rank - 2 spatial dims), W
 * [C, M / group, k...]; per spatial dim the stride, dilation,
 * output_padding and the begin and end pads, and Y's dims: explicit pads
 * (default 0) or VALID give s * (S - 1) + op + (k - 1) * d + 1 - pb - pe;
 * output_shape (its last r values) or SAME_UPPER / SAME_LOWER (S * s) fix
 * Y's dims and the pads follow, as the CPU's kernel takes them (cpu_conv.c
 * conv_geo: total = full - out, begin total / 2 for SAME_UPPER, else total
 * - total / 2). */
typedef struct {
  int32_t r;
  int64_t group, s[DML_MAX_RANK], d[DML_MAX_RANK], op[DML_MAX_RANK], k[DML_MAX_RANK],
      pb[DML_MAX_RANK], pe[DML_MAX_RANK];
  int32_t yrank;
  int64_t y[DML_MAX_RANK];
} convt_geo_t;

static dml_status_t convt_geometry(dml_rt_device_t *dev, const dml_rt_tensor_t *in,
                                   uint32_t n, const dml_attr_t *attrs, uint32_t na,
                                   convt_geo_t *g) {
  static const char *const ok[] = {"auto_pad",     "dilations",      "group",
                                   "kernel_shape", "output_padding", "output_shape",
                                   "pads",         "strides",        NULL};
  const dml_op_t id = DML_OP_CONV_TRANSPOSE;
  DML_RETURN_IF_ERROR(only_attrs(id, attrs, na, ok));
  if (n < 2 || n > 3 || !in[0].id || !in[1].id)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "ConvTranspose",
                           "X, W and the optional B: %u inputs", n);
  dml_rt_tensor_info_t x, w, b;
  DML_RETURN_IF_ERROR(dml_rt_tensor_info(in[0], &x));
  DML_RETURN_IF_ERROR(dml_rt_tensor_info(in[1], &w));
  memset(&b, 0, sizeof b);
  if (n > 2 && in[2].id) DML_RETURN_IF_ERROR(dml_rt_tensor_info(in[2], &b));
  memset(g, 0, sizeof *g);
  g->r = x.rank - 2;
  g->group = dml_attr_int(attrs, na, "group", 1);
  char a1[96], a2[96];
  dml_dims_str(x.dims, x.rank, a1, sizeof a1);
  dml_dims_str(w.dims, w.rank, a2, sizeof a2);
#define CT_SHAPE(...)                                                                   \
  dml_status_detail(dml_status_make(DML_STATUS_INVALID_ARGUMENT, "ConvTranspose",       \
                                    "shape mismatch (on %s)", dml_rt_device_name(dev)), \
                    "X %s, W %s: " __VA_ARGS__)
  if (x.rank < 3 || w.rank != x.rank)
    return CT_SHAPE("X and W must have the same rank >= 3", a1, a2);
  if (g->group < 1 || x.dims[1] % g->group || w.dims[0] != x.dims[1])
    return CT_SHAPE("W's first dim must be X's channels, divided by group %lld", a1, a2,
                    (long long)g->group);
  const int64_t M = w.dims[1] * g->group;
  if (b.rank && (b.rank != 1 || b.dims[0] != M))
    return CT_SHAPE("B must be [%lld]", a1, a2, (long long)M);
  const int32_t r = g->r;
  size_t ns = 0, nd = 0, np = 0, nop = 0, nk = 0, nos = 0;
  const int64_t *st = dml_attr_ints(attrs, na, "strides", &ns);
  const int64_t *dl = dml_attr_ints(attrs, na, "dilations", &nd);
  const int64_t *pads = dml_attr_ints(attrs, na, "pads", &np);
  const int64_t *opad = dml_attr_ints(attrs, na, "output_padding", &nop);
  const int64_t *ks = dml_attr_ints(attrs, na, "kernel_shape", &nk);
  const int64_t *os = dml_attr_ints(attrs, na, "output_shape", &nos);
  if ((st && ns != (size_t)r) || (dl && nd != (size_t)r) ||
      (pads && np != 2 * (size_t)r) || (opad && nop != (size_t)r) ||
      (ks && nk != (size_t)r) || (os && nos < (size_t)r))
    return CT_SHAPE(
        "strides, dilations, output_padding, kernel_shape (%d values), pads "
        "(%d) or output_shape do not fit",
        a1, a2, (int)r, 2 * (int)r);
  const char *ap = dml_attr_string(attrs, na, "auto_pad", "NOTSET");
  const int upper = !strcmp(ap, "SAME_UPPER"), lower = !strcmp(ap, "SAME_LOWER"),
            valid = !strcmp(ap, "VALID");
  if (!upper && !lower && !valid && strcmp(ap, "NOTSET"))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "ConvTranspose",
                           "auto_pad '%s' is not valid", ap);
  g->yrank = x.rank;
  g->y[0] = x.dims[0];
  g->y[1] = M;
  for (int32_t i = 0; i < r; i++) {
    g->s[i] = st ? st[i] : 1;
    g->d[i] = dl ? dl[i] : 1;
    g->op[i] = opad ? opad[i] : 0;
    g->k[i] = w.dims[2 + i];
    if (ks && ks[i] != g->k[i]) return CT_SHAPE("kernel_shape differs from W", a1, a2);
    if (g->s[i] < 1 || g->d[i] < 1 || g->op[i] < 0 ||
        (g->op[i] >= g->s[i] && g->op[i] >= g->d[i]))
      return CT_SHAPE(
          "strides and dilations must be >= 1, output_padding below one of "
          "them",
          a1, a2);
    const int64_t full =
        g->s[i] * (x.dims[2 + i] - 1) + g->op[i] + (g->k[i] - 1) * g->d[i] + 1;
    if (os || upper || lower) {
      g->y[2 + i] = os ? os[nos - (size_t)r + (size_t)i] : x.dims[2 + i] * g->s[i];
      int64_t total = full - g->y[2 + i];
      if (total < 0) total = 0;
      g->pb[i] = upper ? total / 2 : total - total / 2;
      g->pe[i] = total - g->pb[i];
    } else {
      g->pb[i] = pads && !valid ? pads[i] : 0;
      g->pe[i] = pads && !valid ? pads[r + i] : 0;
      g->y[2 + i] = full - g->pb[i] - g->pe[i];
    }
    if (g->y[2 + i] < 0 || g->pb[i] < 0 || g->pe[i] < 0)
      return CT_SHAPE("spatial dim %d: output %lld", a1, a2, (int)i,
                      (long long)g->y[2 + i]);
  }
#undef CT_SHAPE
  return DML_OK;
}

dml_status_t dml_rt_eager_conv_transpose_dims(dml_rt_device_t *dev,
                                              const dml_rt_tensor_t *in, uint32_t n,
                                              const dml_attr_t *attrs, uint32_t na,
                                              dml_tensor_t *y) {
  convt_geo_t g;
  dml_status_t e = convt_geometry(dev, in, n, attrs, na, &g);
  if (e) return e;
  dml_rt_tensor_info_t x;
  DML_RETURN_IF_ERROR(dml_rt_tensor_info(in[0], &x));
  memset(y, 0, sizeof *y);
  y->dtype = x.dtype;
  y->rank = g.yrank;
  memcpy(y->dims, g.y, sizeof(int64_t) * (size_t)g.yrank);
  return DML_OK;
}

/* A 3-D Conv on a GPU (the library's Conv kernel is 1-D or 2-D) as a sum
 * over the KD depth taps of 2-D Convs: x [N, C, D, H, W], w [M, C/g, KD,
 * KH, KW], pads (begin d, h, w, end d, h, w; >= 0), strides st, dilations
 * dl, group g, bias b (NONE: none). x is padded along D with zeros (Pad's
 * constant mode, pad_const: 1 Concat) when pads[0] or pads[3] are set; for
 * tap kd the depth slice kd dl0, kd dl0 + st0, ... (OD of them: a strided
 * view) is moved beside N ([N OD, C, H, W], 1 copy) and convolved with
 * w[:, :, kd] (1 copy; the 2-D strides, dilations and pads, b on the first
 * tap only: 1 Conv), the taps added in kd order (1 Add each after the
 * first); the sum [N OD, M, OH, OW] is moved back to [N, M, OD, OH, OW] (1
 * copy). 4 KD dispatches, 5 KD with the depth pad (+1); the sums in the
 * Conv kernel's order within a tap, the taps added one by one: f32 sums
 * that differ from the CPU's direct kernel by rounding only. op `id`
 * names the errors (Conv, ConvTranspose); the caller checked the shapes
 * (an output of no depth is INTERNAL). */
static dml_status_t conv3d_by_taps(dml_rt_device_t *dev, dml_op_t id, dml_rt_tensor_t x,
                                   dml_rt_tensor_t w, dml_rt_tensor_t b,
                                   const int64_t *pads, const int64_t *st,
                                   const int64_t *dl, int64_t group,
                                   dml_rt_tensor_t *out) {
  dml_rt_tensor_info_t ix, iw;
  *out = NONE;
  DML_RETURN_IF_ERROR(dml_rt_tensor_info(x, &ix));
  DML_RETURN_IF_ERROR(dml_rt_tensor_info(w, &iw));
  const int64_t N = ix.dims[0], C = ix.dims[1], H = ix.dims[3], W = ix.dims[4],
                M = iw.dims[0], KD = iw.dims[2];
  const int64_t span = ix.dims[2] + pads[0] + pads[3] - dl[0] * (KD - 1);
  const int64_t OD = span > 0 && st[0] > 0 ? (span - 1) / st[0] + 1 : 0;
  if (OD <= 0 || KD <= 0)
    return dml_status_make(DML_STATUS_INTERNAL, dml_op_name(id),
                           "3-D Conv of no output depth (%lld)", (long long)OD);
  dml_rt_tensor_t xp = NONE, fill = NONE, acc = NONE;
  dml_status_t e = DML_OK;
  if (pads[0] || pads[3]) {
    int64_t pb[5] = {0, 0, pads[0], 0, 0}, pe[5] = {0, 0, pads[3], 0, 0};
    e = dml_rt_tensor_full(dev, ix.dtype, 0, NULL, 0.0, &fill);
    if (!e) e = pad_const(x, pb, pe, fill, &xp);
  } else {
    e = dml_rt_tensor_retain(x);
    if (!e) xp = x;
  }
  const int64_t perm[5] = {0, 2, 1, 3, 4}, x4[4] = {N * OD, C, H, W},
                w4[4] = {M, iw.dims[1], iw.dims[3], iw.dims[4]};
  const int64_t p2[4] = {pads[1], pads[2], pads[4], pads[5]}, d2[2] = {dl[1], dl[2]},
                s2[2] = {st[1], st[2]};
  dml_attr_t ca[4] = {ints_attr("pads", p2, 4), ints_attr("dilations", d2, 2),
                      ints_attr("strides", s2, 2), int_attr("group", group)};
  for (int64_t kd = 0; kd < KD && !e; kd++) {
    dml_rt_tensor_t v = NONE, vt = NONE, vc = NONE, v4 = NONE, wk = NONE, wc = NONE,
                    wk4 = NONE, y = NONE;
    const int64_t ax = 2, lo = kd * dl[0], hi = lo + (OD - 1) * st[0] + 1, step = st[0];
    e = dml_rt_tensor_slice(xp, 1, &ax, &lo, &hi, &step, &v);
    if (!e) e = dml_rt_tensor_transpose(v, perm, &vt);
    if (!e) e = dml_rt_tensor_contiguous(vt, &vc);
    if (!e) e = dml_rt_tensor_reshape(vc, 4, x4, &v4);
    if (!e) e = sl(w, 2, kd, kd + 1, &wk);
    if (!e) e = dml_rt_tensor_contiguous(wk, &wc);
    if (!e) e = dml_rt_tensor_reshape(wc, 4, w4, &wk4);
    dml_rt_tensor_t cin[3] = {v4, wk4, b};
    const uint32_t nin = kd == 0 && b.id ? 3u : 2u;
    if (!e) e = dml_rt_tensor_op("Conv", cin, nin, ca, 4, &y, 1);
    if (!e && acc.id) {
      e = op2_into("Add", &acc, y);
    } else if (!e) {
      acc = y, y = NONE;
    }
    dml_rt_tensor_t all[] = {v, vt, vc, v4, wk, wc, wk4, y};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) drop(&all[i]);
  }
  if (!e) { /* [N OD, M, OH, OW] -> [N, M, OD, OH, OW] */
    dml_rt_tensor_info_t ia;
    dml_rt_tensor_t a5 = NONE, at = NONE;
    e = dml_rt_tensor_info(acc, &ia);
    const int64_t d5[5] = {N, OD, M, ia.dims[2], ia.dims[3]};
    if (!e) e = dml_rt_tensor_reshape(acc, 5, d5, &a5);
    if (!e) e = dml_rt_tensor_transpose(a5, perm, &at);
    if (!e) e = op1("Identity", at, NULL, 0, out);
    drop(&a5);
    drop(&at);
  }
  drop(&xp);
  drop(&fill);
  drop(&acc);
  return e;
}

/* Conv of X [N, C, D, H, W] (3-D; f32 and f64, f16 and bf16 through f32)
 * on a GPU: the op's eager rule (its attributes: auto_pad, pads, strides,
 * dilations, group, kernel_shape; the channels and the window checked
 * there), the pads resolved as the 2-D kernel's caller resolves them
 * (VALID 0, SAME_UPPER / SAME_LOWER by dml_shape_same_pad_begin), then
 * conv3d_by_taps. An empty output is zeros of the rule's dims (no
 * dispatch). Errors: the rule's; INVALID_ARGUMENT for a negative pad. */
static dml_status_t conv3d(dml_rt_device_t *dev, const dml_rt_tensor_t *in, uint32_t n,
                           const dml_attr_t *attrs, uint32_t na,
                           const dml_rt_tensor_info_t *x, dml_rt_tensor_t *out) {
  static const char *const ok[] = {"auto_pad", "dilations", "group", "kernel_shape",
                                   "pads",     "strides",   NULL};
  const dml_op_t id = DML_OP_CONV;
  dml_tensor_t y;
  dml_rt_tensor_info_t it[2];
  DML_RETURN_IF_ERROR(prologue(dev, id, ok, 0x3, in, n, attrs, na, &y, 1, it, 2));
  if (dml_dims_numel(y.dims, y.rank) == 0)
    return dml_rt_tensor_zeros(dev, y.dtype, y.rank, y.dims, out);
  size_t ns = 0, nd = 0, np = 0;
  const int64_t *sa = dml_attr_ints(attrs, na, "strides", &ns);
  const int64_t *da = dml_attr_ints(attrs, na, "dilations", &nd);
  const int64_t *pa = dml_attr_ints(attrs, na, "pads", &np);
  const char *ap = dml_attr_string(attrs, na, "auto_pad", "NOTSET");
  const int upper = !strcmp(ap, "SAME_UPPER"), lower = !strcmp(ap, "SAME_LOWER"),
            valid = !strcmp(ap, "VALID");
  int64_t st[3], dl[3], pads[6];
  for (int i = 0; i < 3; i++) { /* the rule checked the lengths */
    st[i] = sa && ns == 3 ? sa[i] : 1;
    dl[i] = da && nd == 3 ? da[i] : 1;
    pads[i] = pa && np == 6 && !valid ? pa[i] : 0;
    pads[3 + i] = pa && np == 6 && !valid ? pa[3 + i] : 0;
    if (upper || lower) {
      int64_t total = 0;
      pads[i] = dml_shape_same_pad_begin(
          x->dims[2 + i], (it[1].dims[2 + i] - 1) * dl[i] + 1, st[i], upper, &total);
      pads[3 + i] = total - pads[i];
    }
    if (pads[i] < 0 || pads[3 + i] < 0)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "Conv",
                             "pads must be >= 0 (spatial dim %d: %lld, %lld)", i,
                             (long long)pads[i], (long long)pads[3 + i]);
  }
  return conv3d_by_taps(dev, id, in[0], in[1], n > 2 ? in[2] : NONE, pads, st, dl,
                        dml_attr_int(attrs, na, "group", 1), out);
}

/* ConvTranspose (1-D to 3-D) on a GPU as a Conv: X with s - 1 zeros
 * inserted between its elements along each spatial dim (a view [.., S, 1,
 * ..] padded with zeros to [.., S, s, ..] by Pad, reshaped and cut to (S -
 * 1) * s + 1), W [C, M/g, k...] regrouped to [M, C/g, k...] and flipped
 * along its spatial dims (views), then Conv with dilations d, group g and
 * pads d * (k - 1) - pb, d * (k - 1) - pe + output_padding (a negative pad
 * crops X first), B its bias. The sums are the Conv kernel's over the
 * zero-inserted window: the inserted zeros add 0 * W, so an infinite or
 * NaN weight gives NaN where the CPU's direct kernel skips those taps. */
static dml_status_t conv_transpose(dml_rt_device_t *dev, const dml_rt_tensor_t *in,
                                   uint32_t n, const dml_attr_t *attrs, uint32_t na,
                                   const dml_rt_tensor_info_t *x, dml_rt_tensor_t *out) {
  convt_geo_t g;
  DML_RETURN_IF_ERROR(convt_geometry(dev, in, n, attrs, na, &g));
  const int32_t r = g.r;
  if (r > 3)
    return dml_status_make(
        DML_STATUS_UNIMPLEMENTED, "ConvTranspose",
        "the GPU's eager ConvTranspose is 1-D, 2-D or 3-D (X of rank 3 to 5, "
        "not %d) in this version",
        (int)x->rank);
  if (dml_dims_numel(g.y, g.yrank) == 0)
    return dml_rt_tensor_zeros(dev, x->dtype, g.yrank, g.y, out);
  dml_rt_tensor_info_t w;
  DML_RETURN_IF_ERROR(dml_rt_tensor_info(in[1], &w));
  dml_rt_tensor_t xu = NONE, t = NONE, wt = NONE, wf = NONE;
  dml_status_t e = DML_OK;
  /* X with zeros inserted: [N, C, S0, 1, S1, 1] padded at the ends of the
   * 1s, then [N, C, S0 s0, S1 s1] cut to (S - 1) s + 1 */
  int any_s = 0;
  for (int32_t i = 0; i < r; i++) any_s |= g.s[i] > 1;
  if (any_s) {
    int64_t vd[DML_MAX_RANK], pads[2 * DML_MAX_RANK], ud[DML_MAX_RANK];
    int32_t vr = 2 + 2 * r;
    memset(pads, 0, sizeof pads);
    vd[0] = x->dims[0], vd[1] = x->dims[1];
    ud[0] = x->dims[0], ud[1] = x->dims[1];
    for (int32_t i = 0; i < r; i++) {
      vd[2 + 2 * i] = x->dims[2 + i], vd[3 + 2 * i] = 1;
      pads[vr + 3 + 2 * i] = g.s[i] - 1; /* the end pad of the 1 */
      ud[2 + i] = x->dims[2 + i] * g.s[i];
    }
    e = dml_rt_tensor_reshape(in[0], vr, vd, &t);
    if (!e) {
      dml_tensor_t ph;
      memset(&ph, 0, sizeof ph);
      ph.dtype = DML_DTYPE_I64;
      ph.rank = 1;
      ph.dims[0] = 2 * vr;
      ph.data = pads;
      dml_rt_tensor_t pt = NONE, pu = NONE;
      e = dml_rt_tensor_from_host(dev, &ph, &pt);
      dml_rt_tensor_t pin[2] = {t, pt};
      if (!e) e = dml_rt_tensor_op("Pad", pin, 2, NULL, 0, &pu, 1);
      drop(&pt);
      drop(&t);
      if (!e) e = dml_rt_tensor_reshape(pu, x->rank, ud, &t);
      drop(&pu);
    }
    int64_t ax[DML_MAX_RANK], sb[DML_MAX_RANK], se[DML_MAX_RANK];
    for (int32_t i = 0; i < r; i++)
      ax[i] = 2 + i, sb[i] = 0, se[i] = (x->dims[2 + i] - 1) * g.s[i] + 1;
    if (!e) e = dml_rt_tensor_slice(t, (uint32_t)r, ax, sb, se, NULL, &xu);
    drop(&t);
  } else {
    e = dml_rt_tensor_retain(in[0]);
    if (!e) xu = in[0];
  }
  /* the Conv's pads; a negative one crops X */
  int64_t cp[2 * DML_MAX_RANK], ax[DML_MAX_RANK], cb[DML_MAX_RANK], ce[DML_MAX_RANK];
  int crop = 0;
  for (int32_t i = 0; i < r && !e; i++) {
    int64_t ext = (x->dims[2 + i] - 1) * g.s[i] + 1;
    int64_t b0 = g.d[i] * (g.k[i] - 1) - g.pb[i],
            e0 = g.d[i] * (g.k[i] - 1) - g.pe[i] + g.op[i];
    ax[i] = 2 + i;
    cb[i] = b0 < 0 ? -b0 : 0;
    ce[i] = e0 < 0 ? ext + e0 : ext;
    crop |= b0 < 0 || e0 < 0;
    cp[i] = b0 < 0 ? 0 : b0;
    cp[r + i] = e0 < 0 ? 0 : e0;
  }
  if (!e && crop) {
    e = dml_rt_tensor_slice(xu, (uint32_t)r, ax, cb, ce, NULL, &t);
    drop(&xu);
    xu = t;
    t = NONE;
  }
  /* W [C, M/g, k...] -> [g, C/g, M/g, k...] -> [g, M/g, C/g, k...] -> [M, C/g, k...],
   * flipped */
  if (!e) {
    int64_t gd[DML_MAX_RANK + 1], perm[DML_MAX_RANK + 1], md[DML_MAX_RANK];
    const int64_t G = g.group, Cg = w.dims[0] / G, Mg = w.dims[1];
    gd[0] = G, gd[1] = Cg, gd[2] = Mg;
    perm[0] = 0, perm[1] = 2, perm[2] = 1;
    md[0] = G * Mg, md[1] = Cg;
    for (int32_t i = 0; i < r; i++)
      gd[3 + i] = g.k[i], perm[3 + i] = 3 + i, md[2 + i] = g.k[i];
    e = dml_rt_tensor_reshape(in[1], 3 + r, gd, &t);
    if (!e) e = dml_rt_tensor_transpose(t, perm, &wt);
    drop(&t);
    if (!e) e = dml_rt_tensor_reshape(wt, 2 + r, md, &t);
    drop(&wt);
    int64_t st[DML_MAX_RANK], en[DML_MAX_RANK], sp[DML_MAX_RANK];
    for (int32_t i = 0; i < r; i++) st[i] = -1, en[i] = INT64_MIN, sp[i] = -1;
    if (!e) e = dml_rt_tensor_slice(t, (uint32_t)r, ax, st, en, sp, &wf);
    drop(&t);
  }
  if (!e) {
    dml_attr_t ca[3];
    int64_t dd[DML_MAX_RANK];
    for (int32_t i = 0; i < r; i++) dd[i] = g.d[i];
    ca[0] = ints_attr("pads", cp, 2 * (size_t)r);
    ca[1] = ints_attr("dilations", dd, (size_t)r);
    ca[2] = int_attr("group", g.group);
    dml_rt_tensor_t cin[3] = {xu, wf, n > 2 ? in[2] : NONE};
    const int64_t one3[3] = {1, 1, 1};
    if (r == 3) /* the library's Conv is 1-D or 2-D: a sum of 2-D ones */
      e = conv3d_by_taps(dev, DML_OP_CONV_TRANSPOSE, xu, wf, cin[2], cp, one3, dd,
                         g.group, out);
    else
      e = dml_rt_tensor_op("Conv", cin, n > 2 && in[2].id ? 3u : 2u, ca, 3, out, 1);
  }
  drop(&xu);
  drop(&wf);
  return e;
}

/* ---- Einsum (ONNX Einsum-12), composed ---- */

/* An Einsum operand: a tensor (the caller's reference) and its dims'
 * labels (dml_einsum_t label ids). */
typedef struct {
  dml_rt_tensor_t t;
  int32_t rank;
  int8_t lab[DML_MAX_RANK];
} ein_op_t;

/* Sums o's dims whose labels `sum` marks (ReduceSum, keepdims 0). */
static dml_status_t ein_sum_out(ein_op_t *o, const uint8_t *sum) {
  int64_t axes[DML_MAX_RANK];
  uint32_t na = 0;
  int32_t nr = 0;
  for (int32_t d = 0; d < o->rank; d++) {
    if (sum[o->lab[d]])
      axes[na++] = d;
    else
      o->lab[nr++] = o->lab[d];
  }
  if (!na) return DML_OK;
  dml_attr_t a[2] = {ints_attr("axes", axes, na), int_attr("keepdims", 0)};
  dml_rt_tensor_t y = NONE;
  DML_RETURN_IF_ERROR(op1("ReduceSum", o->t, a, 2, &y));
  drop(&o->t);
  o->t = y;
  o->rank = nr;
  return DML_OK;
}

/* o's dims permuted to the labels ls[0 .. n-1] (each one of o's), each
 * expanded to size[] (broadcast dims of 1), reshaped to [g[0], g[1], g[2]]
 * (the products of the sizes of the label groups n0, n1, n2). */
static dml_status_t ein_pack(const ein_op_t *o, const int8_t *ls, int n0, int n1, int n2,
                             const int64_t *size, dml_rt_tensor_t *out) {
  int64_t perm[DML_MAX_RANK], full[DML_MAX_RANK], g[3] = {1, 1, 1};
  const int n = n0 + n1 + n2;
  for (int i = 0; i < n; i++) {
    for (int32_t d = 0; d < o->rank; d++)
      if (o->lab[d] == ls[i]) perm[i] = d;
    full[i] = size[ls[i]];
    g[i < n0 ? 0 : i < n0 + n1 ? 1 : 2] *= full[i];
  }
  dml_rt_tensor_t t = NONE, x = NONE;
  dml_status_t e = dml_rt_tensor_transpose(o->t, perm, &t);
  if (!e) e = dml_rt_tensor_expand(t, n, full, &x);
  if (!e) e = dml_rt_tensor_reshape(x, 3, g, out);
  drop(&t);
  drop(&x);
  return e;
}

/* a := a (x) b over the labels neither `need`s (contracted by MatMul):
 * the shared labels kept are batch dims, each operand's own ones the
 * rows and columns; a's labels become batch, a's own, b's own. */
static dml_status_t ein_contract(ein_op_t *a, const ein_op_t *b, const uint8_t *need,
                                 const int64_t *size) {
  uint8_t ina[DML_EINSUM_MAX_LABELS] = {0}, inb[DML_EINSUM_MAX_LABELS] = {0};
  for (int32_t d = 0; d < a->rank; d++) ina[a->lab[d]] = 1;
  for (int32_t d = 0; d < b->rank; d++) inb[b->lab[d]] = 1;
  int8_t bat[DML_MAX_RANK], ak[DML_MAX_RANK], bk[DML_MAX_RANK], ct[DML_MAX_RANK];
  int nb = 0, na = 0, nbk = 0, nc = 0;
  for (int32_t d = 0; d < a->rank; d++) {
    int8_t l = a->lab[d];
    if (inb[l] && need[l])
      bat[nb++] = l;
    else if (inb[l])
      ct[nc++] = l;
    else
      ak[na++] = l;
  }
  for (int32_t d = 0; d < b->rank; d++)
    if (!ina[b->lab[d]]) bk[nbk++] = b->lab[d];
  if (nb + na + nbk > DML_MAX_RANK)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, "Einsum",
                           "an intermediate of %d dims (at most %d)", nb + na + nbk,
                           DML_MAX_RANK);
  int8_t la[DML_MAX_RANK], lb[DML_MAX_RANK];
  memcpy(la, bat, (size_t)nb);
  memcpy(la + nb, ak, (size_t)na);
  memcpy(la + nb + na, ct, (size_t)nc);
  memcpy(lb, bat, (size_t)nb);
  memcpy(lb + nb, ct, (size_t)nc);
  memcpy(lb + nb + nc, bk, (size_t)nbk);
  dml_rt_tensor_t A = NONE, B = NONE, Y = NONE, R = NONE;
  dml_status_t e = ein_pack(a, la, nb, na, nc, size, &A);
  if (!e) e = ein_pack(b, lb, nb, nc, nbk, size, &B);
  if (!e) e = op2("MatMul", A, B, &Y);
  int64_t yd[DML_MAX_RANK];
  int8_t yl[DML_MAX_RANK];
  int yr = 0;
  for (int i = 0; i < nb; i++) yl[yr] = bat[i], yd[yr++] = size[bat[i]];
  for (int i = 0; i < na; i++) yl[yr] = ak[i], yd[yr++] = size[ak[i]];
  for (int i = 0; i < nbk; i++) yl[yr] = bk[i], yd[yr++] = size[bk[i]];
  if (!e) e = dml_rt_tensor_reshape(Y, yr, yd, &R);
  drop(&A);
  drop(&B);
  drop(&Y);
  if (e) return e;
  drop(&a->t);
  a->t = R;
  a->rank = yr;
  memcpy(a->lab, yl, (size_t)yr);
  return DML_OK;
}

/* o's repeated labels (a subscript twice in one operand: a diagonal,
 * `ii->i`, `bii->bi`) taken: for each repeat at dims d1 < d2 (equal
 * extents n, checked by the caller), o viewed with the other dims first
 * and d1, d2 last, reshaped to [..., n * n] (a copy unless the strides
 * allow a view) and sliced with step n + 1 (a view of the diagonal),
 * the label kept once, last. */
static dml_status_t ein_diag(ein_op_t *o) {
  for (;;) {
    int32_t d1 = -1, d2 = -1;
    for (int32_t i = 0; i < o->rank && d2 < 0; i++)
      for (int32_t j = i + 1; j < o->rank && d2 < 0; j++)
        if (o->lab[i] == o->lab[j]) d1 = i, d2 = j;
    if (d2 < 0) return DML_OK;
    dml_rt_tensor_info_t ti;
    DML_RETURN_IF_ERROR(dml_rt_tensor_info(o->t, &ti));
    int64_t perm[DML_MAX_RANK], rd[DML_MAX_RANK];
    int8_t nl[DML_MAX_RANK];
    int32_t k = 0;
    for (int32_t d = 0; d < o->rank; d++)
      if (d != d1 && d != d2) nl[k] = o->lab[d], rd[k] = ti.dims[d], perm[k++] = d;
    const int64_t n = ti.dims[d1];
    perm[k] = d1, perm[k + 1] = d2;
    rd[k] = n * n;
    nl[k] = o->lab[d1];
    dml_rt_tensor_t t = NONE, r = NONE, v = NONE;
    const int64_t ax = k, st = 0, en = n * n, step = n + 1;
    dml_status_t e = dml_rt_tensor_transpose(o->t, perm, &t);
    if (!e) e = dml_rt_tensor_reshape(t, k + 1, rd, &r);
    if (!e) e = dml_rt_tensor_slice(r, 1, &ax, &st, &en, &step, &v);
    drop(&t);
    drop(&r);
    if (e) return e;
    drop(&o->t);
    o->t = v;
    o->rank = k + 1;
    memcpy(o->lab, nl, (size_t)o->rank);
  }
}

/* Einsum on any device: the equation parsed once (dml_einsum_parse, the
 * CPU kernel's and shape inference's parser: explicit and implicit
 * output, ellipsis broadcasting); each operand's labels found in no other
 * operand nor the output summed (ReduceSum); the operands folded left to
 * right by one MatMul each over their shared labels no later operand nor
 * the output needs (the others batch dims; views transposed, expanded,
 * reshaped: copies where the strides do not allow a view), then the
 * result transposed to the output's order and expanded. A subscript
 * repeated in one operand (diagonals, traces) is first taken by ein_diag
 * (a strided view of the diagonal), its extents equal. */
static dml_status_t einsum(dml_rt_device_t *dev, const dml_rt_tensor_t *in, uint32_t n,
                           const dml_attr_t *attrs, uint32_t na, dml_rt_tensor_t *out) {
  static const char *const ok[] = {"equation", NULL};
  const dml_op_t id = DML_OP_EINSUM;
  DML_RETURN_IF_ERROR(only_attrs(id, attrs, na, ok));
  const char *eq = dml_attr_string(attrs, na, "equation", NULL);
  if (!eq)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "Einsum",
                           "attribute 'equation' is required");
  if (n < 1 || n > DML_EINSUM_MAX_IN)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "Einsum", "%u inputs (1 to %d)",
                           n, DML_EINSUM_MAX_IN);
  dml_rt_tensor_info_t info[DML_EINSUM_MAX_IN];
  int32_t ranks[DML_EINSUM_MAX_IN];
  for (uint32_t k = 0; k < n; k++) {
    if (!in[k].id)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "Einsum", "input %u is absent",
                             k);
    DML_RETURN_IF_ERROR(dml_rt_tensor_info(in[k], &info[k]));
    ranks[k] = info[k].rank;
    if (info[k].dtype != info[0].dtype)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "Einsum",
                             "dtype mismatch: input 0 %s, input %u %s",
                             dml_dtype_name(info[0].dtype), k,
                             dml_dtype_name(info[k].dtype));
  }
  dml_einsum_t E;
  char why[200];
  if (dml_einsum_parse(eq, (int)n, ranks, &E, why, sizeof why))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "Einsum",
                           "equation \"%s\": %s (on %s)", eq, why,
                           dml_rt_device_name(dev));
  /* each label's extent (1 broadcasts, as the CPU's kernel) */
  int64_t size[DML_EINSUM_MAX_LABELS];
  for (int l = 0; l < E.n_labels; l++) size[l] = -1;
  for (uint32_t k = 0; k < n; k++)
    for (int32_t d = 0; d < info[k].rank; d++) {
      int l = E.in_labels[k][d];
      int64_t v = info[k].dims[d];
      for (int32_t d2 = 0; d2 < d; d2++)
        if (E.in_labels[k][d2] == l && info[k].dims[d2] != v)
          return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "Einsum",
                                 "shape mismatch (on %s): subscript '%c' repeats in "
                                 "input %u with extents %lld and %lld (a diagonal "
                                 "takes equal ones)",
                                 dml_rt_device_name(dev), E.letter[l], k,
                                 (long long)info[k].dims[d2], (long long)v);
      if (size[l] < 0 || size[l] == 1)
        size[l] = v;
      else if (v != size[l] && v != 1)
        return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "Einsum",
                               "shape mismatch (on %s): subscript '%c' has extents %lld "
                               "and %lld",
                               dml_rt_device_name(dev), E.letter[l], (long long)size[l],
                               (long long)v);
    }
  for (int l = 0; l < E.n_labels; l++)
    if (size[l] < 0) size[l] = 1;
  /* every operand with its diagonals taken (labels unique in each) */
  ein_op_t ops[DML_EINSUM_MAX_IN];
  memset(ops, 0, sizeof ops);
  dml_status_t e = DML_OK;
  for (uint32_t k = 0; k < n && !e; k++) {
    e = dml_rt_tensor_retain(in[k]);
    if (e) break;
    ops[k].t = in[k];
    ops[k].rank = info[k].rank;
    memcpy(ops[k].lab, E.in_labels[k], (size_t)info[k].rank);
    e = ein_diag(&ops[k]);
  }
  /* uses[l]: the operands holding label l; in the output */
  int uses[DML_EINSUM_MAX_LABELS] = {0};
  uint8_t in_out[DML_EINSUM_MAX_LABELS] = {0};
  for (uint32_t k = 0; k < n; k++)
    for (int32_t d = 0; d < ops[k].rank; d++) uses[ops[k].lab[d]]++;
  for (int32_t d = 0; d < E.out_rank; d++) in_out[E.out_labels[d]] = 1;
  uint8_t drop_l[DML_EINSUM_MAX_LABELS];
  for (int l = 0; l < E.n_labels; l++) drop_l[l] = !in_out[l] && uses[l] == 1;
  ein_op_t cur = ops[0];
  ops[0].t = NONE;
  if (!e) e = ein_sum_out(&cur, drop_l);
  for (uint32_t k = 1; k < n && !e; k++) {
    e = ein_sum_out(&ops[k], drop_l);
    /* the labels the output or a later operand needs */
    uint8_t need[DML_EINSUM_MAX_LABELS];
    memcpy(need, in_out, sizeof need);
    for (uint32_t j = k + 1; j < n; j++)
      for (int32_t d = 0; d < ops[j].rank; d++) need[ops[j].lab[d]] = 1;
    if (!e) e = ein_contract(&cur, &ops[k], need, size);
  }
  for (uint32_t k = 0; k < n; k++) drop(&ops[k].t);
  /* the output's order and extents */
  if (!e) {
    int64_t perm[DML_MAX_RANK], od[DML_MAX_RANK];
    dml_rt_tensor_t t = NONE, x = NONE;
    for (int32_t i = 0; i < E.out_rank; i++) {
      od[i] = size[E.out_labels[i]];
      perm[i] = -1;
      for (int32_t d = 0; d < cur.rank; d++)
        if (cur.lab[d] == E.out_labels[i]) perm[i] = d;
    }
    if (cur.rank != E.out_rank)
      e = dml_status_make(DML_STATUS_INTERNAL, "Einsum",
                          "equation \"%s\": %d dims left for an output of %d", eq,
                          (int)cur.rank, (int)E.out_rank);
    if (!e) e = dml_rt_tensor_transpose(cur.t, perm, &t);
    if (!e) e = dml_rt_tensor_expand(t, E.out_rank, od, &x);
    if (!e) e = dml_rt_tensor_contiguous(x, out);
    drop(&t);
    drop(&x);
  }
  drop(&cur.t);
  return e;
}

dml_status_t dml_rt_eager_einsum(dml_rt_device_t *dev, const dml_rt_tensor_t *in,
                                 uint32_t n, const dml_attr_t *attrs, uint32_t na,
                                 dml_rt_tensor_t *out, uint32_t n_out) {
  if (n_out != 1)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "Einsum",
                           "Einsum has 1 output, not %u", n_out);
  dml_status_t e = einsum(dev, in, n, attrs, na, out);
  return e ? dml_status_annotate(dml_rt_eager_as_op(e, DML_OP_EINSUM),
                                 "Einsum on %s (composed)", dml_rt_device_name(dev))
           : DML_OK;
}

dml_status_t dml_rt_eager_gather_nd(dml_rt_device_t *dev, const dml_rt_tensor_t *in,
                                    uint32_t n, const dml_attr_t *attrs, uint32_t na,
                                    dml_rt_tensor_t *out, uint32_t n_out) {
  if (n_out != 1)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "GatherND",
                           "GatherND has 1 output, not %u", n_out);
  if (n < 1 || !in[0].id)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "GatherND",
                           "input 0 is required");
  dml_rt_tensor_info_t x;
  DML_RETURN_IF_ERROR(dml_rt_tensor_info(in[0], &x));
  dml_status_t e = gather_nd(dev, in, n, attrs, na, &x, out);
  return e ? dml_status_annotate(dml_rt_eager_as_op(e, DML_OP_GATHER_ND),
                                 "GatherND on %s (composed)", dml_rt_device_name(dev))
           : DML_OK;
}

dml_status_t dml_rt_eager_composed(dml_rt_device_t *dev, dml_op_t id,
                                   const dml_rt_tensor_t *in, uint32_t n_in,
                                   const dml_attr_t *attrs, uint32_t n_attrs,
                                   dml_rt_tensor_t *out, uint32_t n_out, int *done) {
  *done = 0;
  int numeric = 0; /* f16/bf16 run through f32 */
  switch (id) {
    case DML_OP_LAYER_NORMALIZATION:
    case DML_OP_BATCH_NORMALIZATION:
    case DML_OP_INSTANCE_NORMALIZATION:
    case DML_OP_MAX_POOL:
    case DML_OP_AVERAGE_POOL:
    case DML_OP_GLOBAL_AVERAGE_POOL:
    case DML_OP_GLOBAL_MAX_POOL: numeric = 1; break;
    case DML_OP_PAD:
    case DML_OP_TILE:
    case DML_OP_SPLIT:
    case DML_OP_RESHAPE:
    case DML_OP_FLATTEN:
    case DML_OP_SQUEEZE:
    case DML_OP_UNSQUEEZE:
    case DML_OP_GATHER_ELEMENTS:
    case DML_OP_SCATTER_ND:
    case DML_OP_SCATTER_ELEMENTS:
    case DML_OP_TOP_K:
    case DML_OP_RNN:
    case DML_OP_GRU:
    case DML_OP_LSTM:
    case DML_OP_CONV_TRANSPOSE: break;
    case DML_OP_MATMUL:
    case DML_OP_GEMM:
    case DML_OP_CONV: numeric = 2; break;
    default: return DML_OK;
  }
  if (n_in < 1 || !in[0].id) return DML_OK; /* the caller's errors */
  dml_rt_tensor_info_t x;
  DML_RETURN_IF_ERROR(dml_rt_tensor_info(in[0], &x));
  const int conv3 = id == DML_OP_CONV && x.rank == 5;             /* composed: conv3d */
  if (numeric == 2 && !is_half(x.dtype) && !conv3) return DML_OK; /* the library's */
  *done = 1;
  const char *opn = dml_op_name(id);
  dml_status_t e = DML_OK;
  if (id == DML_OP_MAX_POOL && n_out == 2)
    e = max_pool_indices(dev, in, attrs, n_attrs, &x, out);
  else if (id == DML_OP_BATCH_NORMALIZATION &&
           dml_attr_int(attrs, n_attrs, "training_mode", 0))
    e = bn_train(dev, in, n_in, attrs, n_attrs, &x, out, n_out);
  else if (id == DML_OP_TOP_K)
    e = top_k(dev, in, n_in, attrs, n_attrs, &x, out, n_out);
  else if (id == DML_OP_RNN || id == DML_OP_GRU || id == DML_OP_LSTM)
    e = rnn_op(dev, id, in, n_in, attrs, n_attrs, &x, out, n_out);
  else if (id == DML_OP_LAYER_NORMALIZATION && (n_out == 2 || n_out == 3))
    e = layer_norm_stats(dev, in, n_in, attrs, n_attrs, &x, out, n_out);
  else if (id != DML_OP_SPLIT && n_out != 1)
    e = dml_status_make(DML_STATUS_UNIMPLEMENTED, opn,
                        "%u outputs: the GPU's eager %s gives its first output only in "
                        "this version",
                        n_out, opn);
  else if (id == DML_OP_LAYER_NORMALIZATION || id == DML_OP_BATCH_NORMALIZATION ||
           id == DML_OP_INSTANCE_NORMALIZATION)
    e = normalization(dev, id, in, n_in, attrs, n_attrs, &x, out);
  else if (numeric && is_half(x.dtype))
    e = via_f32(id, x.dtype, in, n_in, attrs, n_attrs, out);
  else if (conv3)
    e = conv3d(dev, in, n_in, attrs, n_attrs, &x, out);
  else if (id == DML_OP_GLOBAL_AVERAGE_POOL || id == DML_OP_GLOBAL_MAX_POOL)
    e = global_pool(dev, id, in, attrs, n_attrs, &x, out);
  else if (id == DML_OP_MAX_POOL || id == DML_OP_AVERAGE_POOL)
    e = pool(dev, id, in, attrs, n_attrs, &x, out);
  else if (id == DML_OP_PAD)
    e = pad(dev, in, n_in, attrs, n_attrs, &x, out);
  else if (id == DML_OP_TILE)
    e = tile(dev, in, n_in, attrs, n_attrs, &x, out);
  else if (id == DML_OP_SPLIT)
    e = split(dev, in, n_in, attrs, n_attrs, &x, out, n_out);
  else if (id == DML_OP_GATHER_ELEMENTS)
    e = gather_elements(dev, in, n_in, attrs, n_attrs, &x, out);
  else if (id == DML_OP_SCATTER_ND)
    e = scatter_nd(dev, in, n_in, attrs, n_attrs, &x, out);
  else if (id == DML_OP_SCATTER_ELEMENTS)
    e = scatter_elements(dev, in, n_in, attrs, n_attrs, &x, out);
  else if (id == DML_OP_CONV_TRANSPOSE)
    e = conv_transpose(dev, in, n_in, attrs, n_attrs, &x, out);
  else
    e = reshape_op(dev, id, in, n_in, attrs, n_attrs, out);
  if (e)
    return dml_status_annotate(dml_rt_eager_as_op(e, id), "%s on %s (composed)", opn,
                               dml_rt_device_name(dev));
  return DML_OK;
}
