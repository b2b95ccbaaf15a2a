/* schedule_common.h — what schedule.c (the pass over a function's nodes:
 * grouping and dispatch) and its op-family files schedule_elementwise.c,
 * schedule_gemm_conv.c, schedule_reduce.c and schedule_movement.c share:
 * the group of nodes one kernel holds, the GEMM and window shapes, small
 * helpers (value lookup, typed loads and stores at an element,
 * broadcasting, loops and guards, work estimates), and the forms each
 * family file gives the others. codegen/ only; the other schedule_*.c
 * files use schedule_internal.h and schedule_ops_util.h instead. */
#ifndef DML_SCHEDULE_COMMON_H_
#define DML_SCHEDULE_COMMON_H_

#include <stdio.h>
#include <string.h>

#include "schedule_internal.h"

#define WG 256 /* invocations per workgroup of 1-D kernels */

static inline const dml_pkg_value_t *val(const sched_t *s, uint32_t v) {
  return v == DML_PKG_NO_VALUE || v >= s->fn->n_values ? NULL : &s->fn->values[v];
}

static inline void unsupported(sched_t *s, uint32_t node, const char *fmt,
                               const char *arg) {
  const dml_pkg_node_t *n = &s->fn->nodes[node];
  if (s->refused) s->refused[node] = 1;
  if (!s->err)
    s->err = dml_status_make(DML_STATUS_UNIMPLEMENTED, "codegen.schedule",
                             "function '%s' has nodes no GPU kernel implements yet",
                             s->fn->name);
  char why[512];
  snprintf(why, sizeof why, fmt, arg ? arg : "");
  s->err = dml_status_detail(s->err, "node %u '%s' (%s): %s", node,
                             n->name ? n->name : "", n->op_name, why);
}

static inline int type_numel(const dml_type_t *t, dml_klin_t *out) {
  return dml_ksched_numel(t, out);
}

/* The kernel dtype of value v (f32 for dtypes kernels cannot hold: the
 * scheduler refuses those before building anything). */
static inline dml_kdtype_t kdt(const dml_pkg_value_t *v) {
  dml_kdtype_t t = DML_KT_F32;
  dml_kdtype_of(v->type.dtype, &t);
  return t;
}

/* 1 when kernels hold v's dtype and v is aligned to its element size. */
static inline int typed_ok(const dml_pkg_value_t *v) {
  dml_kdtype_t t;
  return dml_kdtype_of(v->type.dtype, &t) && v->offset % dml_kdtype_size(t) == 0;
}

/* Same dims (the dtype may differ). */
static inline int same_shape(const dml_type_t *a, const dml_type_t *b) {
  if (a->rank != b->rank) return 0;
  for (int32_t d = 0; d < a->rank; d++)
    if (a->dims[d].value != b->dims[d].value || a->dims[d].sym != b->dims[d].sym)
      return 0;
  return 1;
}

static inline const dml_kidx_t *dim_idx(sched_t *s, dml_dim_t d) {
  dml_klin_t l = {d.value, d.sym, 0, 0};
  return dml_ki_lin(s->pool, l);
}

static inline dml_kbuf_t buf_of(const dml_pkg_value_t *v) {
  return v->storage == DML_PKG_STORAGE_CONST ? DML_KBUF_WEIGHTS : DML_KBUF_ARENA;
}

/* Element index of value `v` at flat element `i` (in the view of v's
 * dtype: byte offset / element size). */
static inline const dml_kidx_t *at(sched_t *s, const dml_pkg_value_t *v,
                                   const dml_kidx_t *i) {
  return dml_ki_bin(s->pool, DML_KI_ADD,
                    dml_ki_const(s->pool, (int64_t)(v->offset / dml_kdtype_size(kdt(v)))),
                    i);
}

/* The dtype v's loads and stores use: kdt(v), or u16 for f16 and bf16 in
 * data-movement kernels (s->raw16). */
static inline dml_kdtype_t kdt_s(const sched_t *s, const dml_pkg_value_t *v) {
  dml_kdtype_t t = kdt(v);
  return s->raw16 && (t == DML_KT_F16 || t == DML_KT_BF16) ? DML_KT_U16 : t;
}

/* A load of value v at flat element i. */
static inline const dml_kval_t *load_at(sched_t *s, const dml_pkg_value_t *v,
                                        const dml_kidx_t *i) {
  return dml_kv_load_t(s->pool, buf_of(v), kdt_s(s, v), at(s, v, i));
}

/* A load of value v at element index i (at() applied) as an f32 value:
 * f16/bf16 words widen exactly (GEMM products and sums are f32 whatever
 * the operands' dtype). */
static inline const dml_kval_t *load_f32(sched_t *s, const dml_pkg_value_t *v,
                                         const dml_kidx_t *i) {
  if (kdt(v) == DML_KT_F32) return dml_kv_load(s->pool, buf_of(v), i);
  return dml_kv_cast(s->pool, DML_KT_F32, dml_kv_load_t(s->pool, buf_of(v), kdt(v), i));
}

/* load_f32 for an operand that only feeds f32 products and sums (a
 * convolution's taps): an f16 load marked dml_kval_t.arith, which CUDA
 * widens by the bare cvt.f32.f16 (the fma gives its canonical NaN for any
 * NaN operand, so dml_h2f's sign- and payload-keeping select changes no
 * result there). */
static inline const dml_kval_t *load_f32_arith(sched_t *s, const dml_pkg_value_t *v,
                                               const dml_kidx_t *i) {
  if (kdt(v) != DML_KT_F16) return load_f32(s, v, i);
  dml_kval_t *l = (dml_kval_t *)dml_kv_load_t(s->pool, buf_of(v), kdt(v), i);
  if (l) l->arith = 1; /* fresh from the pool: not yet shared */
  return dml_kv_cast(s->pool, DML_KT_F32, l);
}

/* A store of `val` into value y at flat element i. */
static inline dml_kstmt_t *store_at(sched_t *s, const dml_pkg_value_t *y,
                                    const dml_kidx_t *i, const dml_kval_t *val) {
  dml_kstmt_t *w = dml_ks_new(s->pool, DML_KS_STORE);
  if (w) {
    w->buf = DML_KBUF_ARENA;
    w->dtype = kdt_s(s, y);
    w->idx = at(s, y, i);
    w->val = val;
  }
  return w;
}

/* Flat index into `in` (broadcast to `out`, numpy rules) of the output
 * element with coordinates `coord` (out->rank entries). */
static inline const dml_kidx_t *bcast_index(sched_t *s, const dml_type_t *in,
                                            const dml_type_t *out,
                                            const dml_kidx_t *const *coord) {
  const dml_kidx_t *idx = dml_ki_const(s->pool, 0), *stride = dml_ki_const(s->pool, 1);
  for (int32_t d = in->rank - 1; d >= 0; d--) {
    int32_t od = out->rank - in->rank + d;
    if (!(in->dims[d].value == 1 && in->dims[d].sym < 0))
      idx = dml_ki_bin(s->pool, DML_KI_ADD, idx,
                       dml_ki_bin(s->pool, DML_KI_MUL, coord[od], stride));
    stride = dml_ki_bin(s->pool, DML_KI_MUL, stride, dim_idx(s, in->dims[d]));
  }
  return idx;
}

/* Coordinates of flat element `i` of `t` (row-major). */
static inline void coords_of(sched_t *s, const dml_type_t *t, const dml_kidx_t *i,
                             const dml_kidx_t **coord) {
  const dml_kidx_t *rest = i;
  for (int32_t d = t->rank - 1; d >= 0; d--) {
    const dml_kidx_t *e = dim_idx(s, t->dims[d]);
    coord[d] = d == 0 ? rest : dml_ki_bin(s->pool, DML_KI_MOD, rest, e);
    rest = dml_ki_bin(s->pool, DML_KI_DIV, rest, e);
  }
}

/* max(a, b) (`is_max`) or min(a, b) as the CPU computes them: for floats a
 * NaN operand gives NaN (runtime/cpu/cpu_elementwise.c, `(x > y || x != x)
 * ? x : y`; Relu `x < 0 ? 0 : x`), where GLSL's max/min (undefined for NaN:
 * 0 on lavapipe) and CUDA's fmaxf/fminf return the other operand; integers
 * keep DML_KF_MAX / DML_KF_MIN. */
static inline const dml_kval_t *nan_max(dml_kpool_t *p, const dml_kval_t *a,
                                        const dml_kval_t *b, int is_max) {
  if (!a || !b) return NULL;
  if (!dml_kdtype_is_float(a->dtype))
    return dml_kv_fn(p, is_max ? DML_KF_MAX : DML_KF_MIN, a, b);
  /* a constant (not NaN) bound b, as in Relu and Clip: one compare, a < b
   * ? b : a (a > b for min), false for a NaN a */
  if (b->kind == DML_KV_CONST && b->c == b->c)
    return dml_kv_select(p, dml_kv_fn(p, is_max ? DML_KF_LT : DML_KF_GT, a, b), b, a);
  const dml_kval_t *keep_a =
      dml_kv_fn(p, DML_KF_OR, dml_kv_fn(p, is_max ? DML_KF_GT : DML_KF_LT, a, b),
                dml_kv_fn(p, DML_KF_NOT, dml_kv_fn(p, DML_KF_EQ, a, a), NULL));
  return dml_kv_select(p, keep_a, a, b);
}

/* ---- groups ---- */

typedef enum { ANCHOR_NONE, ANCHOR_GEMM, ANCHOR_REDUCE, ANCHOR_CONV } anchor_t;

/* The nodes of one kernel: a fuse group of the IR (the fuse pass's
 * DML_FUSE_GROUP_ATTR, passes/fuse.c), or the part of one that the checks
 * below let this kernel take. */
typedef struct group {
  anchor_t anchor;
  int64_t gid;    /* the nodes' fuse group, -1 for a node of none */
  uint32_t first; /* anchor node (or first elementwise node) */
  uint32_t nodes[256];
  uint32_t n;
  const dml_type_t *out; /* every node's output type */
} group_t;

static inline int in_group(const group_t *G, uint32_t node) {
  for (uint32_t i = 0; i < G->n; i++)
    if (G->nodes[i] == node) return 1;
  return 0;
}

/* Counts, for every value produced in G, its consumers outside G
 * (s->n_uses_outside; schedule.c). */
void dml_ksched_count_outside(sched_t *s, const group_t *G);

/* Node producing value v in G, or -1. */
static inline int64_t producer_in(const sched_t *s, const group_t *G, uint32_t v) {
  for (uint32_t i = 0; i < G->n; i++) {
    const dml_pkg_node_t *n = &s->fn->nodes[G->nodes[i]];
    for (uint32_t o = 0; o < n->n_outputs; o++)
      if (n->outputs[o] == v) return G->nodes[i];
  }
  return -1;
}

static inline int overlap(const dml_pkg_value_t *a, const dml_pkg_value_t *b) {
  if (a->storage == DML_PKG_STORAGE_CONST || b->storage == DML_PKG_STORAGE_CONST)
    return 0;
  return a->offset < b->offset + b->bytes && b->offset < a->offset + a->bytes;
}

static inline dml_kernel_t *new_kernel(sched_t *s, dml_kernel_kind_t kind) {
  if (s->n_kernels == s->cap_kernels) {
    uint32_t cap = s->cap_kernels ? 2 * s->cap_kernels : 16;
    dml_kernel_t *k = (dml_kernel_t *)dml_kpool_alloc(s->pool, cap * sizeof *k);
    if (!k) return NULL;
    if (s->n_kernels) memcpy(k, s->kernels, s->n_kernels * sizeof *k);
    s->kernels = k;
    s->cap_kernels = cap;
  }
  dml_kernel_t *K = &s->kernels[s->n_kernels++];
  memset(K, 0, sizeof *K);
  K->kind = kind;
  snprintf(K->name, sizeof K->name, "k%u_%s", s->n_kernels - 1,
           dml_kernel_kind_name(kind));
  K->local[0] = K->local[1] = K->local[2] = 1;
  K->items[0].c = K->items[1].c = K->items[2].c = 1;
  K->items[0].sym = K->items[1].sym = K->items[2].sym = -1;
  K->flops.sym = K->bytes.sym = -1;
  return K;
}

/* acc += mul * x. A work estimate holds one product of symbols: a term
 * over other symbols than acc's is left out (an estimate for dmlc bench,
 * never a launch count). */
static inline void lin_add(dml_klin_t *acc, dml_klin_t x, int64_t mul) {
  if (x.sym < 0 && !x.more) {
    acc->c0 += mul * (x.c + x.c0);
  } else {
    acc->c0 += mul * x.c0;
    if ((acc->sym < 0 && !acc->more) || (acc->sym == x.sym && acc->more == x.more)) {
      acc->sym = x.sym;
      acc->more = x.more;
      acc->c += mul * x.c;
    }
  }
}

static inline void set_nodes(sched_t *s, dml_kernel_t *K, const group_t *G) {
  K->n_nodes = G->n;
  K->nodes = (uint32_t *)dml_kpool_alloc(s->pool, (G->n ? G->n : 1) * sizeof(uint32_t));
  if (K->nodes) memcpy(K->nodes, G->nodes, G->n * sizeof(uint32_t));
  for (uint32_t i = 0; i < G->n; i++) s->group_of[G->nodes[i]] = s->n_kernels;
}

static inline dml_kstmt_t *if_lt(sched_t *s, const dml_kidx_t *lhs, const dml_kidx_t *hi,
                                 dml_kstmt_t *body) {
  dml_kstmt_t *st = dml_ks_new(s->pool, DML_KS_IF_LT);
  if (st) {
    st->lhs = lhs;
    st->hi = hi;
    st->body = body;
  }
  return st;
}

static inline dml_kstmt_t *for_loop(sched_t *s, int32_t var, const dml_kidx_t *hi,
                                    dml_kstmt_t *body) {
  dml_kstmt_t *st = dml_ks_new(s->pool, DML_KS_FOR);
  if (st) {
    st->var = var;
    st->hi = hi;
    st->step = 1;
    st->body = body;
  }
  return st;
}

static inline dml_kstmt_t *assign(sched_t *s, dml_kstmt_kind_t k, uint32_t reg,
                                  const dml_kval_t *v) {
  dml_kstmt_t *st = dml_ks_new(s->pool, k);
  if (st) {
    st->reg = reg;
    st->val = v;
  }
  return st;
}

/* ---- GEMM ---- */

typedef struct gemm_shape {
  const dml_pkg_value_t *a, *b, *c, *y; /* one dtype: f32, f16 or bf16 */
  int ta, tb;
  double alpha, beta;
  dml_klin_t m; /* rows of the result */
  int64_t n, k; /* N static; K = k, or k * symbol ksym when ksym >= 0 */
  int32_t ksym; /* the symbol of a symbolic K (a weight gradient's batch), or -1 */
  /* A batched MatMul's tiled form (emit_matmul_batched): nb.c > 0 counts the
   * [M, K] x [K, N] products (A, B and Y of equal batch dims, each matrix
   * contiguous); bat is the workgroup's product (set by emit_gemm_tiled). */
  dml_klin_t nb;
  const dml_kidx_t *bat;
} gemm_shape_t;

/* GEMM kernels. Three forms, chosen by the shape (docs/kernels.md "GEMM"):
 *
 * - small M (at most GEMM_SMALL_M rows at the symbols' bounds, e.g. batch-1
 *   inference): a K-split dot product. A workgroup of 32 x 8 invocations
 *   covers 32 columns and 8 rows; invocation (x, y) sums rows 0..7 of the
 *   block over the y-th of 8 contiguous K chunks in registers, the 8
 *   partial sums meet in shared memory, and invocation (x, y) finishes row y
 *   (epilogue included). With a transposed B ([N, K]) the 32 invocations of
 *   a column interleave over K instead, so that loads are coalesced
 *   (emit_gemm_small_tb).
 * - otherwise register-blocked tiles: a workgroup of `threads` invocations
 *   computes a BM x BN block of C, each invocation a TM x TN micro-tile held
 *   in registers. Per K step of BK, the block's A (stored transposed:
 *   tile0[k][m], so the inner loop reads rows contiguously) and B
 *   (tile1[k][n]) slices are staged in shared memory from registers loaded
 *   during the previous step's arithmetic (one tile pair, two barriers per
 *   step). The micro-tile's rows and columns are two groups of 4 adjacent
 *   ones (e.g. columns 4tx..4tx+3 and 4tx+BN/2..), so shared reads are
 *   conflict-free and vectorizable. The inner K step is unrolled in the IR.
 *   Bounds checks are emitted only for the dims that need them (M symbolic
 *   or not a multiple of BM, N % BN, K symbolic or K % BK). Workgroups are 1-D; the
 * grid's x counts row blocks, so a symbolic M uses a form with BM == threads (groups =
 * ceil(M / BM) with items = M), a static M any form. */

#define GEMM_SMALL_M 64 /* at most this many rows: the K-split form */

/* Largest value of count `l` at the symbols' bounds (saturating). */
static inline int64_t lin_max(const sched_t *s, dml_klin_t l) {
  int64_t t = l.c;
  for (int32_t i = -1; i < 32; i++) {
    int32_t k = i < 0 ? l.sym : i;
    if (i < 0 ? k < 0 : !(l.more >> i & 1u)) continue;
    int64_t b = (uint32_t)k < s->g->n_symbols ? s->g->symbols[k].bound : 1;
    if (__builtin_mul_overflow(t, b, &t)) return INT64_MAX;
  }
  return t > INT64_MAX - l.c0 ? INT64_MAX : t + l.c0;
}

/* Appends the statements of `x` to `b`. */
static inline void block_append(dml_kblock_t *b, const dml_kblock_t *x) {
  if (!x->first) return;
  if (b->last)
    b->last->next = x->first;
  else
    b->first = x->first;
  b->last = x->last;
}

/* ---- convolution and pooling (2-D, NCHW) ---- */

typedef struct win_shape {
  const dml_pkg_value_t *x, *w, *b, *y;
  int64_t C, H, W, M, OH, OW, kh, kw, group;
  int64_t stride[2], dil[2], pad[2]; /* pad: top, left */
  dml_klin_t n;                      /* batch */
  /* Input height and width as dims: symbolic ones (an image size bounded
   * at compile time) are read from the run-time symbol values; sym_sp: any
   * spatial dim of x or y is symbolic (H, W, OH, OW above are then 0). */
  dml_dim_t hd, wd;
  int sym_sp;
} win_shape_t;

/* An integer input's element `i` as an i64 kernel value (`v` i64 or
 * i32: a run-time parameter the kernel reads, e.g. axes fed at run time). */
static inline const dml_kval_t *param_i64(sched_t *s, const dml_pkg_value_t *v,
                                          int64_t i) {
  return dml_kv_cast(s->pool, DML_KT_I64, load_at(s, v, dml_ki_const(s->pool, i)));
}

/* if (lo <= lhs < hi) body */
static inline dml_kstmt_t *if_in(sched_t *s, const dml_kidx_t *lhs, const dml_kidx_t *lo,
                                 const dml_kidx_t *hi, dml_kstmt_t *body) {
  dml_kstmt_t *st = if_lt(s, lhs, hi, body);
  if (st && lo && !(lo->kind == DML_KI_CONST && lo->c == 0)) st->lo = lo;
  return st;
}

static inline int64_t norm_axis(int64_t a, int32_t rank) {
  return a < 0 ? a + rank : a;
}

/* ---- schedule_elementwise.c (described there, at each definition) ---- */

int dml_ksched_ew_op(dml_op_t op);
const char *dml_ksched_ew_reject(sched_t *s, const dml_pkg_node_t *n);
void dml_ksched_emit_chain(sched_t *s, dml_kernel_t *K, const group_t *G, dml_kblock_t *b,
                           const dml_kval_t *acc, const dml_kidx_t *const *coord,
                           const dml_kidx_t *flat);
void dml_ksched_emit_ew_group(sched_t *s, const group_t *G);
const char *dml_ksched_dropout_reject(sched_t *s, const dml_pkg_node_t *n,
                                      int *out_training);
void dml_ksched_emit_dropout(sched_t *s, uint32_t node, int training);
void dml_ksched_emit_random(sched_t *s, uint32_t node);
const char *dml_ksched_gen_reject(sched_t *s, const dml_pkg_node_t *n, double *cval);
void dml_ksched_emit_generator(sched_t *s, uint32_t node, double cval);

/* ---- schedule_gemm_conv.c (described there, at each definition) ---- */

const char *dml_ksched_gemm_reject(sched_t *s, const dml_pkg_node_t *n, gemm_shape_t *o);
void dml_ksched_attach_gemm(sched_t *s, dml_kernel_t *K, const group_t *G,
                            const gemm_shape_t *gs);
void dml_ksched_emit_gemm_group(sched_t *s, const group_t *G, const gemm_shape_t *gs);
const char *dml_ksched_win_reject(sched_t *s, const dml_pkg_node_t *n, win_shape_t *o);
void dml_ksched_emit_conv_group(sched_t *s, const group_t *G, const win_shape_t *ws);
void dml_ksched_emit_pool(sched_t *s, uint32_t node, const win_shape_t *ws);
void dml_ksched_emit_conv_transpose(sched_t *s, uint32_t node);
void dml_ksched_emit_conv_input_grad(sched_t *s, uint32_t node);
void dml_ksched_emit_pool_grad(sched_t *s, uint32_t node, const win_shape_t *ws);
void dml_ksched_emit_conv_wgrad(sched_t *s, uint32_t node, const win_shape_t *ws);
const char *dml_ksched_emit_matmul_batched(sched_t *s, uint32_t node);

/* ---- schedule_reduce.c (described there, at each definition) ---- */

const char *dml_ksched_reduce_axes(sched_t *s, const dml_pkg_node_t *n, int32_t rank,
                                   int *red);
void dml_ksched_emit_reduce_group(sched_t *s, const group_t *G, const int *red);
void dml_ksched_emit_softmax(sched_t *s, uint32_t node);
void dml_ksched_emit_hardmax(sched_t *s, uint32_t node);
void dml_ksched_emit_loss(sched_t *s, uint32_t node);

/* ---- schedule_movement.c (described there, at each definition) ---- */

void dml_ksched_emit_copy(sched_t *s, uint32_t node);
const char *dml_ksched_assign_reject(sched_t *s, const dml_pkg_node_t *n);
void dml_ksched_emit_assign_copy(sched_t *s, uint32_t node);
void dml_ksched_emit_shape_size(sched_t *s, uint32_t node);
const char *dml_ksched_map_reject(sched_t *s, const dml_pkg_node_t *n, uint32_t n_in);
const char *dml_ksched_map_reject_f32(sched_t *s, const dml_pkg_node_t *n, uint32_t n_in);
const dml_kidx_t *dml_ksched_map_kernel(sched_t *s, uint32_t node, const dml_type_t *t,
                                        dml_kernel_t **out_k, const dml_kidx_t **coord);
void dml_ksched_map_finish(sched_t *s, dml_kernel_t *K, const dml_type_t *t,
                           const dml_kidx_t *gid, dml_kstmt_t *body);
void dml_ksched_emit_move(sched_t *s, uint32_t i);
int dml_ksched_move_op(dml_op_t op);
void dml_ksched_emit_gather(sched_t *s, uint32_t node);

#endif /* DML_SCHEDULE_COMMON_H_ */
