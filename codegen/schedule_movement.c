/* schedule_movement.c — the scheduler's data movement: Shape and Size,
 * Transpose, Tile, DepthToSpace, SpaceToDepth (one load per output element
 * at a mapped coordinate: the map_* kernel frame, also used by
 * ConvTranspose), Concat, Split, Slice and Pad (constant mode; Slice and
 * Pad with parameters fed at run time), Gather and GatherElements, the copy
 * kernel of a view that does not alias its input, and Assign's copy into
 * the weights buffer. f16/bf16 values move as their 16-bit words.
 * Moved from schedule.c unchanged. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dml_cpu.h"
#include "dml_ew.h"
#include "schedule_common.h"

/* Copy kernel for a view that does not alias its input. */
void dml_ksched_emit_copy(sched_t *s, uint32_t node) {
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *y = val(s, n->outputs[0]);
  dml_kernel_t *K = new_kernel(s, DML_KK_ELEMENTWISE);
  if (!K) return;
  group_t G = {.anchor = ANCHOR_NONE, .n = 1, .nodes = {node}};
  set_nodes(s, K, &G);
  dml_klin_t numel;
  type_numel(&y->type, &numel);
  K->local[0] = WG;
  K->items[0] = numel;
  lin_add(&K->bytes, numel, 2 * (int64_t)dml_dtype_size(y->type.dtype));
  const dml_kidx_t *gid = dml_ki_var(s->pool, DML_KVAR_GID_X);
  K->body =
      if_lt(s, gid, dml_ki_lin(s->pool, numel), store_at(s, y, gid, load_at(s, x, gid)));
}

/* Why Assign node `n` cannot be emitted, or NULL. */
const char *dml_ksched_assign_reject(sched_t *s, const dml_pkg_node_t *n) {
  const dml_pkg_value_t *gl = val(s, n->inputs[0]), *x = val(s, n->inputs[1]);
  dml_klin_t l;
  if (!gl || !x || gl->storage != DML_PKG_STORAGE_CONST)
    return "the target is not a global in the weights";
  if (gl->type.dtype != DML_DTYPE_F32 || x->type.dtype != DML_DTYPE_F32)
    return "only f32 is emitted";
  if (gl->offset % 4 || x->offset % 4) return "misaligned value";
  if (!same_shape(&gl->type, &x->type) || !type_numel(&gl->type, &l) || l.sym >= 0 ||
      l.more)
    return "the value's type is not the global's static type";
  if (gl->offset / 4 + (uint64_t)l.c > 0xffffffffull)
    return "the global lies beyond 32-bit indices";
  return NULL;
}

/* Copy kernel for an Assign whose value no open group computes:
 * weights[global + i] = value[i]. */
void dml_ksched_emit_assign_copy(sched_t *s, uint32_t node) {
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *gl = val(s, n->inputs[0]), *x = val(s, n->inputs[1]);
  dml_kernel_t *K = new_kernel(s, DML_KK_ELEMENTWISE);
  if (!K) return;
  group_t G = {.anchor = ANCHOR_NONE, .n = 1, .nodes = {node}};
  set_nodes(s, K, &G);
  dml_klin_t numel;
  type_numel(&gl->type, &numel);
  K->local[0] = WG;
  K->items[0] = numel;
  K->writes_weights = 1;
  lin_add(&K->bytes, numel, 8);
  const dml_kidx_t *gid = dml_ki_var(s->pool, DML_KVAR_GID_X);
  dml_kstmt_t *st = dml_ks_new(s->pool, DML_KS_STORE);
  if (st) {
    st->buf = DML_KBUF_WEIGHTS;
    st->dtype = kdt(gl);
    st->idx = at(s, gl, gid);
    st->val = load_at(s, x, gid);
  }
  K->body = if_lt(s, gid, dml_ki_lin(s->pool, numel), st);
}

/* Shape (start/end, ONNX Shape-15) and Size: one invocation stores the
 * dims of the input, i64, computed from the symbols' run-time values. */
void dml_ksched_emit_shape_size(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *y = val(s, n->outputs[0]);
  dml_kernel_t *K = new_kernel(s, DML_KK_ELEMENTWISE);
  if (!K) return;
  group_t G = {.anchor = ANCHOR_NONE, .n = 1, .nodes = {node}};
  set_nodes(s, K, &G);
  K->local[0] = 1;
  dml_kblock_t body = {0};
  int32_t rank = x->type.rank;
  if (n->op == DML_OP_SIZE) {
    dml_klin_t l;
    type_numel(&x->type, &l);
    dml_kblock_add(&body, store_at(s, y, dml_ki_const(p, 0),
                                   dml_kv_idx(p, DML_KT_I64, dml_ki_lin(p, l))));
  } else {
    int64_t start = dml_attr_int(n->attrs, n->n_attrs, "start", 0);
    int64_t end = dml_attr_int(n->attrs, n->n_attrs, "end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    if (start < 0) start = 0;
    if (end > rank) end = rank;
    for (int64_t d = start; d < end; d++)
      dml_kblock_add(&body,
                     store_at(s, y, dml_ki_const(p, d - start),
                              dml_kv_idx(p, DML_KT_I64, dim_idx(s, x->type.dims[d]))));
  }
  K->body = if_lt(s, dml_ki_var(p, DML_KVAR_GID_X), dml_ki_const(p, 1), body.first);
  dml_klin_t yl;
  if (type_numel(&y->type, &yl)) lin_add(&K->bytes, yl, 8);
}

/* ---- data movement: index maps ---- */

/* Reads constant integer input `v` (i64 or i32, rank <= 1, at most `max`
 * values) into `out`. NULL when it is, else why not. */
static const char *const_ints(sched_t *s, uint32_t v, int64_t *out, size_t max,
                              size_t *n) {
  const dml_pkg_value_t *c = val(s, v);
  if (!c || c->storage != DML_PKG_STORAGE_CONST || c->type.rank > 1 ||
      (c->type.dtype != DML_DTYPE_I64 && c->type.dtype != DML_DTYPE_I32))
    return "its shape parameters must be constants";
  size_t k = c->type.rank ? (size_t)c->type.dims[0].value : 1;
  size_t w = c->type.dtype == DML_DTYPE_I64 ? 8 : 4;
  if (k > max) return "too many parameter values";
  if (c->offset + w * k > s->weights_size) return "parameters outside the weights";
  for (size_t i = 0; i < k; i++) {
    if (w == 8) {
      memcpy(&out[i], s->weights + c->offset + 8 * i, 8);
    } else {
      int32_t t;
      memcpy(&t, s->weights + c->offset + 4 * i, 4);
      out[i] = t;
    }
  }
  *n = k;
  return NULL;
}

/* Why node `n` (inputs `in`, outputs `out` of its data operands) cannot be
 * an index-map kernel, or NULL: f32, aligned, at most one symbolic dim, no
 * result sharing memory with an operand. */

const char *dml_ksched_map_reject(sched_t *s, const dml_pkg_node_t *n, uint32_t n_in) {
  const dml_pkg_value_t *x0 = n_in && n->n_inputs ? val(s, n->inputs[0]) : NULL;
  for (uint32_t o = 0; o < n->n_outputs; o++) {
    const dml_pkg_value_t *y = val(s, n->outputs[o]);
    dml_klin_t l;
    if (!y) continue;
    if (!typed_ok(y)) return "only numeric and bool values (aligned) are emitted";
    if (x0 && y->type.dtype != x0->type.dtype) return "operands of mixed dtypes";
    if (!type_numel(&y->type, &l)) return TOO_MANY_SYMS;
    for (uint32_t i = 0; i < n_in && i < n->n_inputs; i++) {
      const dml_pkg_value_t *x = val(s, n->inputs[i]);
      if (x && overlap(x, y))
        return "its result overlaps its operands in the memory plan";
    }
  }
  for (uint32_t i = 0; i < n_in && i < n->n_inputs; i++) {
    const dml_pkg_value_t *x = val(s, n->inputs[i]);
    dml_klin_t l;
    if (!x) return "absent input";
    if (!typed_ok(x)) return "only numeric and bool values (aligned) are emitted";
    if (x0 && x->type.dtype != x0->type.dtype) return "operands of mixed dtypes";
    if (!type_numel(&x->type, &l)) return TOO_MANY_SYMS;
  }
  return NULL;
}

/* Why node `n` (f32 operands, see dml_ksched_map_reject) cannot be a kernel, or NULL. */
const char *dml_ksched_map_reject_f32(sched_t *s, const dml_pkg_node_t *n,
                                      uint32_t n_in) {
  const char *why = dml_ksched_map_reject(s, n, n_in);
  if (why) return why;
  for (uint32_t o = 0; o < n->n_outputs; o++) {
    const dml_pkg_value_t *y = val(s, n->outputs[o]);
    if (y && y->type.dtype != DML_DTYPE_F32) return "only f32 is emitted for this op";
  }
  for (uint32_t i = 0; i < n_in && i < n->n_inputs; i++)
    if (val(s, n->inputs[i])->type.dtype != DML_DTYPE_F32)
      return "only f32 is emitted for this op";
  return NULL;
}

/* A kernel of kind DML_KK_MOVE holding node `node`, one invocation per
 * element of `t`: sets `coord` to the element's coordinates and returns
 * the invocation id (NULL when out of memory). */
const dml_kidx_t *dml_ksched_map_kernel(sched_t *s, uint32_t node, const dml_type_t *t,
                                        dml_kernel_t **out_k, const dml_kidx_t **coord) {
  dml_kernel_t *K = new_kernel(s, DML_KK_MOVE);
  if (!K) return NULL;
  group_t G = {.anchor = ANCHOR_NONE, .n = 1, .nodes = {node}};
  set_nodes(s, K, &G);
  dml_klin_t numel;
  type_numel(t, &numel);
  K->local[0] = WG;
  K->items[0] = numel;
  lin_add(&K->bytes, numel, 8);
  const dml_kidx_t *gid = dml_ki_var(s->pool, DML_KVAR_GID_X);
  coords_of(s, t, gid, coord);
  *out_k = K;
  return gid;
}

/* Closes a map kernel: body under the bounds check of `t`'s element count. */
void dml_ksched_map_finish(sched_t *s, dml_kernel_t *K, const dml_type_t *t,
                           const dml_kidx_t *gid, dml_kstmt_t *body) {
  dml_klin_t numel;
  type_numel(t, &numel);
  K->body = if_lt(s, gid, dml_ki_lin(s->pool, numel), body);
}

/* x's element at coordinates `xc` (x->type.rank entries). */
static const dml_kval_t *load_coords(sched_t *s, const dml_pkg_value_t *x,
                                     const dml_kidx_t *const *xc) {
  return load_at(s, x, bcast_index(s, &x->type, &x->type, xc));
}

/* Transpose, Tile, DepthToSpace, SpaceToDepth: one load per output
 * element at a mapped coordinate (ONNX operator specs). */
static void emit_map1(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *y = val(s, n->outputs[0]);
  int32_t r = x->type.rank;
  const dml_kidx_t *xc[DML_MAX_RANK];
  if (n->op == DML_OP_TRANSPOSE) {
    size_t np = 0;
    const int64_t *perm = dml_attr_ints(n->attrs, n->n_attrs, "perm", &np);
    int seen[DML_MAX_RANK] = {0};
    if (perm && np != (size_t)r) {
      unsupported(s, node, "perm does not match the rank", NULL);
      return;
    }
    for (int32_t d = 0; d < r; d++) {
      int64_t pd = perm ? perm[d] : r - 1 - d;
      if (pd < 0 || pd >= r || seen[pd]++) {
        unsupported(s, node, "bad perm", NULL);
        return;
      }
    }
  }
  if ((n->op == DML_OP_DEPTH_TO_SPACE || n->op == DML_OP_SPACE_TO_DEPTH) &&
      (r != 4 || y->type.rank != 4 || x->type.dims[1].sym >= 0 ||
       y->type.dims[1].sym >= 0 ||
       dml_attr_int(n->attrs, n->n_attrs, "blocksize", 0) < 1)) {
    unsupported(s, node, "needs 4-D NCHW with static channels and a blocksize", NULL);
    return;
  }
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK];
  const dml_kidx_t *gid = dml_ksched_map_kernel(s, node, &y->type, &K, c);
  if (!gid) return;
  const dml_kval_t *v;
  switch (n->op) {
    case DML_OP_TRANSPOSE: {
      size_t np = 0;
      const int64_t *perm = dml_attr_ints(n->attrs, n->n_attrs, "perm", &np);
      for (int32_t d = 0; d < r; d++) xc[perm ? perm[d] : r - 1 - d] = c[d];
      v = load_coords(s, x, xc);
      break;
    }
    case DML_OP_TILE:
      for (int32_t d = 0; d < r; d++)
        xc[d] = dml_ki_bin(p, DML_KI_MOD, c[d], dim_idx(s, x->type.dims[d]));
      v = load_coords(s, x, xc);
      break;
    default: { /* DepthToSpace (DCR or CRD), SpaceToDepth */
      int64_t b = dml_attr_int(n->attrs, n->n_attrs, "blocksize", 1);
      const dml_kidx_t *B = dml_ki_const(p, b);
      xc[0] = c[0];
      if (n->op == DML_OP_DEPTH_TO_SPACE) {
        /* y (n, c, h*b + bh, w*b + bw) */
        const dml_kidx_t *bh = dml_ki_bin(p, DML_KI_MOD, c[2], B),
                         *bw = dml_ki_bin(p, DML_KI_MOD, c[3], B);
        const dml_kidx_t *bb =
            dml_ki_bin(p, DML_KI_ADD, dml_ki_bin(p, DML_KI_MUL, bh, B), bw);
        int crd = !strcmp(dml_attr_string(n->attrs, n->n_attrs, "mode", "DCR"), "CRD");
        xc[1] =
            crd ? dml_ki_bin(p, DML_KI_ADD,
                             dml_ki_bin(p, DML_KI_MUL, c[1], dml_ki_const(p, b * b)), bb)
                : dml_ki_bin(p, DML_KI_ADD,
                             dml_ki_bin(p, DML_KI_MUL, bb,
                                        dml_ki_const(p, y->type.dims[1].value)),
                             c[1]);
        xc[2] = dml_ki_bin(p, DML_KI_DIV, c[2], B);
        xc[3] = dml_ki_bin(p, DML_KI_DIV, c[3], B);
      } else {
        /* y channel = (bh*b + bw) * C + c (DCR) or c * b^2 + bh*b + bw
         * (CRD, SpaceToDepth-28) */
        int crd = !strcmp(dml_attr_string(n->attrs, n->n_attrs, "mode", "DCR"), "CRD");
        const dml_kidx_t *C = dml_ki_const(p, crd ? b * b : x->type.dims[1].value);
        const dml_kidx_t *bb = dml_ki_bin(p, crd ? DML_KI_MOD : DML_KI_DIV, c[1], C);
        xc[1] = dml_ki_bin(p, crd ? DML_KI_DIV : DML_KI_MOD, c[1], C);
        xc[2] = dml_ki_bin(p, DML_KI_ADD, dml_ki_bin(p, DML_KI_MUL, c[2], B),
                           dml_ki_bin(p, DML_KI_DIV, bb, B));
        xc[3] = dml_ki_bin(p, DML_KI_ADD, dml_ki_bin(p, DML_KI_MUL, c[3], B),
                           dml_ki_bin(p, DML_KI_MOD, bb, B));
      }
      v = load_coords(s, x, xc);
      break;
    }
  }
  dml_ksched_map_finish(s, K, &y->type, gid, store_at(s, y, gid, v));
}

/* Concat: output element from the input whose range along the axis holds
 * it (one bounds-checked store per input). */
static void emit_concat(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *y = val(s, n->outputs[0]);
  int32_t r = y->type.rank;
  int64_t axis = norm_axis(dml_attr_int(n->attrs, n->n_attrs, "axis", 0), r);
  if (axis < 0 || axis >= r) {
    unsupported(s, node, "axis out of range", NULL);
    return;
  }
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK];
  const dml_kidx_t *gid = dml_ksched_map_kernel(s, node, &y->type, &K, c);
  if (!gid) return;
  dml_kblock_t body = {0};
  const dml_kidx_t *off = dml_ki_const(p, 0);
  for (uint32_t i = 0; i < n->n_inputs; i++) {
    const dml_pkg_value_t *x = val(s, n->inputs[i]);
    const dml_kidx_t *end =
        dml_ki_bin(p, DML_KI_ADD, off, dim_idx(s, x->type.dims[axis]));
    const dml_kidx_t *xc[DML_MAX_RANK];
    for (int32_t d = 0; d < r; d++) xc[d] = c[d];
    xc[axis] = dml_ki_bin(p, DML_KI_SUB, c[axis], off);
    dml_kblock_add(
        &body, if_in(s, c[axis], off, end, store_at(s, y, gid, load_coords(s, x, xc))));
    off = end;
  }
  dml_ksched_map_finish(s, K, &y->type, gid, body.first);
}

/* Split: one invocation per input element, stored into the output whose
 * range along the axis holds it. */
static void emit_split(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = val(s, n->inputs[0]);
  int32_t r = x->type.rank;
  int64_t axis = norm_axis(dml_attr_int(n->attrs, n->n_attrs, "axis", 0), r);
  if (axis < 0 || axis >= r) {
    unsupported(s, node, "axis out of range", NULL);
    return;
  }
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK];
  const dml_kidx_t *gid = dml_ksched_map_kernel(s, node, &x->type, &K, c);
  if (!gid) return;
  dml_kblock_t body = {0};
  const dml_kidx_t *off = dml_ki_const(p, 0);
  const dml_kval_t *v = load_at(s, x, gid);
  for (uint32_t o = 0; o < n->n_outputs; o++) {
    const dml_pkg_value_t *y = val(s, n->outputs[o]);
    if (!y) continue;
    const dml_kidx_t *end =
        dml_ki_bin(p, DML_KI_ADD, off, dim_idx(s, y->type.dims[axis]));
    const dml_kidx_t *yc[DML_MAX_RANK];
    for (int32_t d = 0; d < r; d++) yc[d] = c[d];
    yc[axis] = dml_ki_bin(p, DML_KI_SUB, c[axis], off);
    dml_kblock_add(&body,
                   if_in(s, c[axis], off, end,
                         store_at(s, y, bcast_index(s, &y->type, &y->type, yc), v)));
    off = end;
  }
  dml_ksched_map_finish(s, K, &x->type, gid, body.first);
}

static const char *emit_slice_rt(sched_t *s, uint32_t node);
static const char *emit_pad_rt(sched_t *s, uint32_t node);

/* Slice with constant starts/ends/axes/steps (inputs, or attributes before
 * opset 10; otherwise emit_slice_rt): x coordinate = start + c * step per sliced axis,
 * start clamped as the ONNX spec says. */
static void emit_slice(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *y = val(s, n->outputs[0]);
  int32_t r = x->type.rank;
  int64_t st[DML_MAX_RANK], en[DML_MAX_RANK], ax[DML_MAX_RANK], sp[DML_MAX_RANK];
  size_t ns = 0, ne = 0, na = 0, nsp = 0;
  const char *why = NULL;
  if (n->n_inputs >= 3) {
    why = const_ints(s, n->inputs[1], st, DML_MAX_RANK, &ns);
    if (!why) why = const_ints(s, n->inputs[2], en, DML_MAX_RANK, &ne);
    if (!why && n->n_inputs > 3 && n->inputs[3] != DML_PKG_NO_VALUE)
      why = const_ints(s, n->inputs[3], ax, DML_MAX_RANK, &na);
    if (!why && n->n_inputs > 4 && n->inputs[4] != DML_PKG_NO_VALUE)
      why = const_ints(s, n->inputs[4], sp, DML_MAX_RANK, &nsp);
  } else {
    const int64_t *a = dml_attr_ints(n->attrs, n->n_attrs, "starts", &ns);
    if (a && ns <= DML_MAX_RANK) memcpy(st, a, ns * sizeof *a);
    a = dml_attr_ints(n->attrs, n->n_attrs, "ends", &ne);
    if (a && ne <= DML_MAX_RANK) memcpy(en, a, ne * sizeof *a);
    a = dml_attr_ints(n->attrs, n->n_attrs, "axes", &na);
    if (a && na <= DML_MAX_RANK) memcpy(ax, a, na * sizeof *a);
    if (ns > DML_MAX_RANK || ne > DML_MAX_RANK || na > DML_MAX_RANK)
      why = "too many parameter values";
  }
  if (!why && (ns != ne || (na && na != ns) || (nsp && nsp != ns)))
    why = "starts, ends, axes and steps differ in length";
  int64_t start[DML_MAX_RANK] = {0}, step[DML_MAX_RANK];
  for (int32_t d = 0; d < r; d++) step[d] = 1;
  for (size_t i = 0; !why && i < ns; i++) {
    int64_t a = norm_axis(na ? ax[i] : (int64_t)i, r);
    if (a < 0 || a >= r) {
      why = "axis out of range";
      break;
    }
    if (x->type.dims[a].sym >= 0) {
      why = "a slice along a symbolic dim";
      break;
    }
    int64_t dim = x->type.dims[a].value, k = nsp ? sp[i] : 1, b = st[i];
    if (k == 0) {
      why = "step 0";
      break;
    }
    if (b < 0) b += dim;
    if (k > 0)
      b = b < 0 ? 0 : b > dim ? dim : b;
    else
      b = b < 0 ? 0 : b > dim - 1 ? dim - 1 : b;
    start[a] = b;
    step[a] = k;
  }
  if (why && n->n_inputs >= 3) {
    why = emit_slice_rt(s, node); /* the parameters read from memory */
    if (!why) return;
  }
  if (why) {
    unsupported(s, node, "%s", why);
    return;
  }
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK], *xc[DML_MAX_RANK];
  const dml_kidx_t *gid = dml_ksched_map_kernel(s, node, &y->type, &K, c);
  if (!gid) return;
  for (int32_t d = 0; d < r; d++) {
    const dml_kidx_t *sc = dml_ki_bin(p, DML_KI_MUL, c[d],
                                      dml_ki_const(p, step[d] < 0 ? -step[d] : step[d]));
    xc[d] = dml_ki_bin(p, step[d] < 0 ? DML_KI_SUB : DML_KI_ADD,
                       dml_ki_const(p, start[d]), sc);
  }
  dml_ksched_map_finish(s, K, &y->type, gid, store_at(s, y, gid, load_coords(s, x, xc)));
}

/* Pad, mode "constant" with constant pads (input, or attribute before
 * opset 11) and optional axes: the padding value, overwritten by x's
 * element where every coordinate falls inside x. */
static void emit_pad(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *y = val(s, n->outputs[0]);
  const dml_pkg_value_t *cv =
      n->n_inputs > 2 && n->inputs[2] != DML_PKG_NO_VALUE ? val(s, n->inputs[2]) : NULL;
  int32_t r = x->type.rank;
  int64_t pads[2 * DML_MAX_RANK], ax[DML_MAX_RANK];
  size_t np = 0, na = 0;
  const char *why = NULL;
  if (strcmp(dml_attr_string(n->attrs, n->n_attrs, "mode", "constant"), "constant"))
    why = "only mode 'constant' is emitted";
  else if (n->n_inputs > 1)
    why = const_ints(s, n->inputs[1], pads, 2 * DML_MAX_RANK, &np);
  else {
    const int64_t *a = dml_attr_ints(n->attrs, n->n_attrs, "pads", &np);
    if (a && np <= 2 * DML_MAX_RANK) memcpy(pads, a, np * sizeof *a);
  }
  if (!why && n->n_inputs > 3 && n->inputs[3] != DML_PKG_NO_VALUE)
    why = const_ints(s, n->inputs[3], ax, DML_MAX_RANK, &na);
  if (!why && n->n_inputs <= 1 && cv == NULL && np > 2 * DML_MAX_RANK)
    why = "too many pads";
  size_t nax = na ? na : (size_t)r;
  if (!why && np != 2 * nax) why = "pads do not match the rank";
  if (!why && cv && (cv->type.dtype != x->type.dtype || !typed_ok(cv)))
    why = "constant_value must be of the data's dtype";
  int64_t begin[DML_MAX_RANK] = {0};
  for (size_t i = 0; !why && i < nax; i++) {
    int64_t a = norm_axis(na ? ax[i] : (int64_t)i, r);
    if (a < 0 || a >= r)
      why = "axis out of range";
    else
      begin[a] = pads[i];
  }
  if (why && n->n_inputs > 1) {
    why = emit_pad_rt(s, node); /* pads read from memory, or another mode */
    if (!why) return;
  }
  if (why) {
    unsupported(s, node, "%s", why);
    return;
  }
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK], *xc[DML_MAX_RANK], *lhs[DML_MAX_RANK],
      *lo[DML_MAX_RANK];
  const dml_kidx_t *gid = dml_ksched_map_kernel(s, node, &y->type, &K, c);
  if (!gid) return;
  for (int32_t d = 0; d < r; d++) {
    /* lhs = c + max(-begin, 0) lies in [max(begin, 0), that + dim) */
    lhs[d] =
        dml_ki_bin(p, DML_KI_ADD, c[d], dml_ki_const(p, begin[d] < 0 ? -begin[d] : 0));
    lo[d] = dml_ki_const(p, begin[d] > 0 ? begin[d] : 0);
    xc[d] = dml_ki_bin(p, DML_KI_SUB, lhs[d], lo[d]);
  }
  const dml_kval_t *pad_v =
      cv ? load_at(s, cv, dml_ki_const(p, 0)) : dml_kv_zero(p, kdt_s(s, y));
  dml_kstmt_t *inner = store_at(s, y, gid, load_coords(s, x, xc));
  for (int32_t d = r - 1; d >= 0; d--)
    inner = if_in(s, lhs[d], lo[d],
                  dml_ki_bin(p, DML_KI_ADD, lo[d], dim_idx(s, x->type.dims[d])), inner);
  dml_kblock_t body = {0};
  dml_kblock_add(&body, store_at(s, y, gid, pad_v));
  dml_kblock_add(&body, inner);
  dml_ksched_map_finish(s, K, &y->type, gid, body.first);
}

/* ---- data movement with parameters read at run time ---- */

/* Why input `v` cannot be a run-time parameter of `n` values, or NULL: a
 * 1-D i64 or i32 value of static length n (a constant is read from the
 * weights like any other). */
static const char *param_reject(sched_t *s, uint32_t v, int64_t n) {
  const dml_pkg_value_t *p = val(s, v);
  if (!p || p->type.rank != 1 || p->type.dims[0].sym >= 0 ||
      (p->type.dtype != DML_DTYPE_I64 && p->type.dtype != DML_DTYPE_I32) || !typed_ok(p))
    return "its parameters must be 1-D i64 or i32 values of static length";
  if (n >= 0 && p->type.dims[0].value != n)
    return "starts, ends, axes and steps differ in length";
  return NULL;
}

/* max(lo, min(v, hi)) on i64 values. */
static const dml_kval_t *clamp_i64(dml_kpool_t *p, const dml_kval_t *v,
                                   const dml_kval_t *lo, const dml_kval_t *hi) {
  return dml_kv_fn(p, DML_KF_MAX, lo, dml_kv_fn(p, DML_KF_MIN, v, hi));
}

/* Slice (opset 10+) whose starts, axes or steps are fed at run time, or
 * that slices a symbolic dim: the output's dims are symbols the runtime
 * computes before the device runs (dims_reject); the kernel reads starts,
 * axes and steps from memory (the inputs were copied to the device with
 * the others; constants from the weights) and maps each output
 * coordinate c of dim d to start_d + c * step_d, where entry i with axis
 * a_i == d (negative axes counted from the rank) gives start_d = starts[i]
 * clamped as the ONNX spec and the CPU's shape rule say (negative from the
 * end, then into [0, dim] for a positive step, [-1, dim - 1] for a
 * negative one) and step_d = steps[i]; other dims keep start 0, step 1.
 * Ends only shape the output. NULL, or why not. */
static const char *emit_slice_rt(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *y = val(s, n->outputs[0]);
  int32_t r = x->type.rank;
  if (n->n_inputs < 3) return "a slice along a symbolic dim";
  const char *why = param_reject(s, n->inputs[1], -1);
  if (why) return why;
  int64_t ne = val(s, n->inputs[1])->type.dims[0].value;
  if (ne > DML_MAX_RANK) return "too many parameter values";
  why = param_reject(s, n->inputs[2], ne);
  const dml_pkg_value_t *ax = NULL, *sp = NULL;
  if (!why && n->n_inputs > 3 && n->inputs[3] != DML_PKG_NO_VALUE) {
    why = param_reject(s, n->inputs[3], ne);
    ax = val(s, n->inputs[3]);
  }
  if (!why && n->n_inputs > 4 && n->inputs[4] != DML_PKG_NO_VALUE) {
    why = param_reject(s, n->inputs[4], ne);
    sp = val(s, n->inputs[4]);
  }
  if (why) return why;
  const dml_pkg_value_t *st = val(s, n->inputs[1]);
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK] = {0}, *xc[DML_MAX_RANK] = {0};
  const dml_kidx_t *gid = dml_ksched_map_kernel(s, node, &y->type, &K, c);
  if (!gid) return NULL;
  const dml_kval_t *zero = dml_kv_zero(p, DML_KT_I64), *one = dml_kv_one(p, DML_KT_I64);
  for (int32_t d = 0; d < r; d++) {
    const dml_kval_t *X = dml_kv_idx(p, DML_KT_I64, dim_idx(s, x->type.dims[d]));
    const dml_kval_t *start = zero, *step = one;
    int any = 0;
    for (int64_t i = 0; i < ne; i++) {
      const dml_kval_t *hit = NULL;
      if (ax) {
        const dml_kval_t *a = param_i64(s, ax, i);
        hit = dml_kv_fn(p, DML_KF_OR,
                        dml_kv_fn(p, DML_KF_EQ, a, dml_kv_iconst(p, DML_KT_I64, d)),
                        dml_kv_fn(p, DML_KF_EQ, a, dml_kv_iconst(p, DML_KT_I64, d - r)));
      } else if (i != d) {
        continue;
      }
      const dml_kval_t *k = sp ? param_i64(s, sp, i) : one;
      const dml_kval_t *b = param_i64(s, st, i);
      /* clamp first (starts may be INT64_MIN/MAX), negative from the end */
      b = clamp_i64(p, b,
                    dml_kv_fn(p, DML_KF_SUB, dml_kv_fn(p, DML_KF_NEG, X, NULL), one), X);
      b = dml_kv_select(p, dml_kv_fn(p, DML_KF_LT, b, zero),
                        dml_kv_fn(p, DML_KF_ADD, b, X), b);
      b = dml_kv_select(p, dml_kv_fn(p, DML_KF_GT, k, zero), clamp_i64(p, b, zero, X),
                        clamp_i64(p, b, dml_kv_fn(p, DML_KF_NEG, one, NULL),
                                  dml_kv_fn(p, DML_KF_SUB, X, one)));
      start = hit ? dml_kv_select(p, hit, b, start) : b;
      step = hit ? dml_kv_select(p, hit, k, step) : k;
      any = 1;
    }
    if (!any) {
      xc[d] = c[d];
      continue;
    }
    /* start + c * step lies in [0, dim) for every output coordinate */
    xc[d] = dml_ki_val(
        p, dml_kv_fn(p, DML_KF_ADD, start,
                     dml_kv_fn(p, DML_KF_MUL, dml_kv_idx(p, DML_KT_I64, c[d]), step)));
  }
  dml_ksched_map_finish(s, K, &y->type, gid, store_at(s, y, gid, load_coords(s, x, xc)));
  return NULL;
}

/* Pad (opset 11+, no axes input) with pads fed at run time, or in mode
 * edge, reflect or wrap: output coordinate c of dim d reads x at
 * t = c - pads[d] (pads read from memory, a constant from the weights),
 * mapped as the CPU's kernel does (cpu_shape.c): constant: the padding
 * value where some t falls outside [0, dim); edge: t clamped into
 * [0, dim - 1]; wrap: t mod dim; reflect: t mod 2 (dim - 1), then
 * 2 (dim - 1) - t past the end. Every load is bounds-checked (an empty
 * dim stores zeros, where the CPU refuses to pad it). NULL, or why not. */
static const char *emit_pad_rt(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *y = val(s, n->outputs[0]);
  const dml_pkg_value_t *cv =
      n->n_inputs > 2 && n->inputs[2] != DML_PKG_NO_VALUE ? val(s, n->inputs[2]) : NULL;
  int32_t r = x->type.rank;
  const char *mode = dml_attr_string(n->attrs, n->n_attrs, "mode", "constant");
  int m = !strcmp(mode, "constant")  ? 0
          : !strcmp(mode, "edge")    ? 1
          : !strcmp(mode, "reflect") ? 2
          : !strcmp(mode, "wrap")    ? 3
                                     : -1;
  if (m < 0) return "unknown mode";
  if (n->n_inputs < 2 || n->inputs[1] == DML_PKG_NO_VALUE)
    return "pads in an attribute with mode other than 'constant'";
  if (n->n_inputs > 3 && n->inputs[3] != DML_PKG_NO_VALUE)
    return "an axes input with pads fed at run time";
  const char *why = param_reject(s, n->inputs[1], 2 * (int64_t)r);
  if (why) return why;
  if (m == 0 && cv && (cv->type.dtype != x->type.dtype || !typed_ok(cv)))
    return "constant_value must be of the data's dtype";
  const dml_pkg_value_t *pads = val(s, n->inputs[1]);
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK] = {0}, *xc[DML_MAX_RANK] = {0};
  const dml_kidx_t *gid = dml_ksched_map_kernel(s, node, &y->type, &K, c);
  if (!gid) return NULL;
  const dml_kval_t *zero = dml_kv_zero(p, DML_KT_I64), *one = dml_kv_one(p, DML_KT_I64);
  for (int32_t d = 0; d < r; d++) {
    const dml_kval_t *X = dml_kv_idx(p, DML_KT_I64, dim_idx(s, x->type.dims[d]));
    const dml_kval_t *t =
        dml_kv_fn(p, DML_KF_SUB, dml_kv_idx(p, DML_KT_I64, c[d]), param_i64(s, pads, d));
    if (m == 1) {
      t = clamp_i64(p, t, zero, dml_kv_fn(p, DML_KF_SUB, X, one));
    } else if (m == 3) {
      t = dml_kv_fn(p, DML_KF_IMOD, t, X);
    } else if (m == 2) {
      const dml_kval_t *per = dml_kv_fn(p, DML_KF_MUL, dml_kv_iconst(p, DML_KT_I64, 2),
                                        dml_kv_fn(p, DML_KF_SUB, X, one));
      t = dml_kv_fn(p, DML_KF_IMOD, t, per);
      t = dml_kv_select(p, dml_kv_fn(p, DML_KF_GE, t, X),
                        dml_kv_fn(p, DML_KF_SUB, per, t), t);
    }
    xc[d] = dml_ki_val(p, t); /* negative: a huge index, outside [0, dim) */
  }
  dml_kstmt_t *inner = store_at(s, y, gid, load_coords(s, x, xc));
  for (int32_t d = r - 1; d >= 0; d--)
    inner = if_lt(s, xc[d], dim_idx(s, x->type.dims[d]), inner);
  const dml_kval_t *pad_v =
      m == 0 && cv ? load_at(s, cv, dml_ki_const(p, 0)) : dml_kv_zero(p, kdt(y));
  dml_kblock_t body = {0};
  dml_kblock_add(&body, store_at(s, y, gid, pad_v));
  dml_kblock_add(&body, inner);
  dml_ksched_map_finish(s, K, &y->type, gid, body.first);
  return NULL;
}

/* Places data-movement node `i` (dml_kschedule's switch). */
void dml_ksched_emit_move(sched_t *s, uint32_t i) {
  const dml_pkg_node_t *n = &s->fn->nodes[i];
  uint32_t n_in = n->op == DML_OP_CONCAT ? n->n_inputs : 1;
  const char *why = dml_ksched_map_reject(s, n, n_in);
  if (why) {
    unsupported(s, i, "%s", why);
    return;
  }
  s->raw16 = 1;
  switch (n->op) {
    case DML_OP_CONCAT: emit_concat(s, i); break;
    case DML_OP_SPLIT: emit_split(s, i); break;
    case DML_OP_SLICE: emit_slice(s, i); break;
    case DML_OP_PAD: emit_pad(s, i); break;
    default: emit_map1(s, i); break;
  }
  s->raw16 = 0;
}

int dml_ksched_move_op(dml_op_t op) {
  switch (op) {
    case DML_OP_TRANSPOSE:
    case DML_OP_TILE:
    case DML_OP_DEPTH_TO_SPACE:
    case DML_OP_SPACE_TO_DEPTH:
    case DML_OP_CONCAT:
    case DML_OP_SPLIT:
    case DML_OP_SLICE:
    case DML_OP_PAD: return 1;
    default: return 0;
  }
}

/* ---- Gather, GatherElements: data-driven indices ---- */

/* Gather (ONNX Gather-13) and GatherElements (-13) with i64/i32 indices of
 * any origin: one invocation per output element loads its index, counts a
 * negative one from the end of the axis (static or symbolic: the run-time
 * extent), and loads x there when
 * the index lies in [0, dim); an index out of range (an error on the CPU)
 * gives 0 (the default of the dtype) instead of an access outside x. */
const dml_kidx_t *dml_ksched_gather_index(dml_kpool_t *p, const dml_kval_t *iv,
                                          dml_kdtype_t it, const dml_kidx_t *D) {
  const dml_kval_t *nv =
      dml_kv_select(p, dml_kv_fn(p, DML_KF_LT, iv, dml_kv_zero(p, it)),
                    dml_kv_fn(p, DML_KF_ADD, iv, dml_kv_idx(p, it, D)), iv);
  return dml_ki_val(p, nv);
}

void dml_ksched_emit_gather(sched_t *s, uint32_t node) {
  dml_kpool_t *p = s->pool;
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  const char *why = dml_ksched_map_reject(s, n, 1);
  const dml_pkg_value_t *x = val(s, n->inputs[0]), *ind = val(s, n->inputs[1]);
  const dml_pkg_value_t *y = val(s, n->outputs[0]);
  int elements = n->op == DML_OP_GATHER_ELEMENTS;
  int32_t r = x ? x->type.rank : 0;
  int64_t axis = norm_axis(dml_attr_int(n->attrs, n->n_attrs, "axis", 0), r);
  dml_klin_t l;
  if (!why && (!ind || !typed_ok(ind) ||
               (ind->type.dtype != DML_DTYPE_I64 && ind->type.dtype != DML_DTYPE_I32)))
    why = "indices must be i64 or i32";
  if (!why && !type_numel(&ind->type, &l)) why = TOO_MANY_SYMS;
  if (!why && overlap(ind, y))
    why = "its result overlaps its operands in the memory plan";
  if (!why && (axis < 0 || axis >= r)) why = "axis out of range";
  if (!why && (elements ? ind->type.rank != r || y->type.rank != r
                        : y->type.rank != r + ind->type.rank - 1))
    why = "output rank does not match";
  if (why) {
    unsupported(s, node, "%s", why);
    return;
  }
  dml_kernel_t *K;
  const dml_kidx_t *c[DML_MAX_RANK], *ic[DML_MAX_RANK], *xc[DML_MAX_RANK];
  const dml_kidx_t *gid = dml_ksched_map_kernel(s, node, &y->type, &K, c);
  if (!gid) return;
  int32_t q = ind->type.rank;
  const dml_kidx_t *iflat;
  if (elements) {
    iflat = gid;
  } else {
    for (int32_t d = 0; d < q; d++) ic[d] = c[axis + d];
    iflat = bcast_index(s, &ind->type, &ind->type, ic);
  }
  dml_kdtype_t it = kdt(ind);
  /* the axis' extent: static, or a product of symbols' run-time values
   * (Gather over a sequence of symbolic length) */
  const dml_kidx_t *D = dim_idx(s, x->type.dims[axis]);
  const dml_kidx_t *xi = dml_ksched_gather_index(p, load_at(s, ind, iflat), it, D);
  for (int32_t d = 0; d < r; d++)
    xc[d] = d < axis ? c[d] : d == axis ? xi : c[elements ? d : d + q - 1];
  dml_kblock_t body = {0};
  dml_kblock_add(&body, store_at(s, y, gid, dml_kv_zero(p, kdt_s(s, y))));
  dml_kblock_add(&body, if_lt(s, xi, D, store_at(s, y, gid, load_coords(s, x, xc))));
  dml_ksched_map_finish(s, K, &y->type, gid, body.first);
}
