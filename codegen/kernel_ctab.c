/* kernel_ctab.c — kernel constant tables placed in the weights buffer
 * (dml_kplan_place_ctabs, dml_kernel.h; docs/kernels.md "Constant tables").
 *
 * A table of more than DML_KCTAB_INLINE_MAX entries (0: every table) is not
 * rendered as a shader constant array: its values are appended to the package's
 * "weights" section (the buffer every kernel already binds, binding 1 on
 * Vulkan, the `weights` parameter in CUDA) and each read `ctab<N>[i]` of
 * it becomes the load `weights.<dtype>[at + i]`, at its element offset.
 * Why: on lavapipe a dynamically indexed constant array costs in proportion
 * to its size, so a one-node Pad(reflect) of f32[2, 1200] (a table of
 * 1,201 entries) never finished; phone drivers
 * limit or slow large constant arrays too; even small tables were slower
 * as constants on lavapipe (17 entries: 2.4x), so none stays one unless
 * DML_KCTAB_INLINE_MAX is raised. */
#include <stdlib.h>
#include <string.h>

#include "kernel_internal.h"

#define OP "codegen.ctab"

/* A table already placed: its bytes at `off` (from pl->base). */
typedef struct placed {
  uint64_t off, size, hash;
} placed_t;

/* Per kernel: for each table, its element index in the weights' view of
 * its dtype, or -1 when it stays a constant. */
typedef struct place_ctx {
  dml_kpool_t *pool;
  const int64_t *at;
  uint32_t n;
} place_ctx_t;

static void pl_val(place_ctx_t *c, const dml_kval_t *cv);

static void pl_idx(place_ctx_t *c, const dml_kidx_t *i) {
  if (!i) return;
  pl_idx(c, i->a);
  pl_idx(c, i->b);
  if (i->kind == DML_KI_VAL) pl_val(c, i->val);
}

/* Rewrites in place (the node is the plan pool's, allocated writable): a
 * value visited again is a load by then, so a value shared by several
 * expressions is rewritten once. */
static void pl_val(place_ctx_t *c, const dml_kval_t *cv) {
  if (!cv) return;
  dml_kval_t *v = (dml_kval_t *)cv;
  pl_idx(c, v->idx); /* an index read from another table first */
  pl_val(c, v->a);
  pl_val(c, v->b);
  pl_val(c, v->c3);
  pl_val(c, v->d4);
  if (v->kind != DML_KV_CTAB || v->ctab >= c->n || c->at[v->ctab] < 0) return;
  v->idx = dml_ki_bin(c->pool, DML_KI_ADD, dml_ki_const(c->pool, c->at[v->ctab]), v->idx);
  v->kind = DML_KV_LOAD;
  v->buf = DML_KBUF_WEIGHTS;
  v->ctab = 0; /* dtype stays the table's: the i32 or f32 view */
}

static void pl_stmts(place_ctx_t *c, const dml_kstmt_t *s) {
  for (; s; s = s->next) {
    pl_idx(c, s->idx);
    pl_val(c, s->val);
    pl_idx(c, s->lhs);
    pl_idx(c, s->lo);
    pl_idx(c, s->hi);
    pl_stmts(c, s->body);
  }
}

static uint64_t fnv1a(const uint8_t *b, uint64_t n) {
  uint64_t h = 1469598103934665603ull;
  for (uint64_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* The byte offset (from pl->base) of `n` bytes `b` in pl, appended unless
 * an equal table is there already (a table shared by the targets' plans or
 * by kernels). -1 when out of memory. */
static int64_t pl_put(dml_kctab_place_t *pl, const uint8_t *b, uint64_t n) {
  uint64_t h = fnv1a(b, n);
  const placed_t *e = (const placed_t *)pl->entries_;
  for (uint32_t i = 0; i < pl->n_entries_; i++)
    if (e[i].hash == h && e[i].size == n && memcmp(pl->bytes + e[i].off, b, n) == 0)
      return (int64_t)e[i].off;
  uint64_t off = (pl->size + DML_KCTAB_ALIGN - 1) / DML_KCTAB_ALIGN * DML_KCTAB_ALIGN;
  if (off + n > pl->cap) {
    uint64_t cap = pl->cap ? 2 * pl->cap : 65536;
    while (cap < off + n) cap *= 2;
    uint8_t *nb = (uint8_t *)realloc(pl->bytes, (size_t)cap);
    if (!nb) return -1;
    pl->bytes = nb;
    pl->cap = cap;
  }
  if (pl->n_entries_ % 64 == 0) {
    placed_t *ne =
        (placed_t *)realloc(pl->entries_, (pl->n_entries_ + 64) * sizeof(placed_t));
    if (!ne) return -1;
    pl->entries_ = ne;
  }
  memset(pl->bytes + pl->size, 0, (size_t)(off - pl->size));
  memcpy(pl->bytes + off, b, (size_t)n);
  pl->size = off + n;
  ((placed_t *)pl->entries_)[pl->n_entries_++] = (placed_t){off, n, h};
  return (int64_t)off;
}

void dml_kctab_place_init(dml_kctab_place_t *pl, uint64_t weights_size) {
  memset(pl, 0, sizeof *pl);
  pl->base = (weights_size + DML_PKG_WEIGHT_ALIGNMENT - 1) / DML_PKG_WEIGHT_ALIGNMENT *
             DML_PKG_WEIGHT_ALIGNMENT;
}

void dml_kctab_place_release(dml_kctab_place_t *pl) {
  free(pl->bytes);
  free(pl->entries_);
  memset(pl, 0, sizeof *pl);
}

dml_status_t dml_kplan_place_ctabs(struct dml_kplan *p, dml_kctab_place_t *pl) {
  if (!p || !pl) return DML_OK;
  for (uint32_t k = 0; k < p->n_kernels; k++) {
    dml_kernel_t *K = &p->kernels[k];
    uint32_t nt = K->n_ctabs, moved = 0;
    if (!nt) continue;
    int64_t at[8];
    if (nt > sizeof at / sizeof at[0])
      return dml_status_make(DML_STATUS_INTERNAL, OP, "kernel %s: %u constant tables",
                             K->name, nt);
    dml_kctab_t *tabs = (dml_kctab_t *)dml_kpool_alloc(p->pool_, nt * sizeof *tabs);
    if (!tabs) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
    for (uint32_t t = 0; t < nt; t++) {
      const dml_kctab_t *c = &K->ctabs[t];
      tabs[t] = *c;
      at[t] = -1;
      if (c->n <= DML_KCTAB_INLINE_MAX) continue;
      /* both dtypes are 4-byte words (an i32 view, an f32 view) */
      const uint8_t *src =
          c->dtype == DML_KT_I32 ? (const uint8_t *)c->i : (const uint8_t *)c->f;
      int64_t off = pl_put(pl, src, (uint64_t)c->n * 4u);
      if (off < 0)
        return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
      uint64_t elem = (pl->base + (uint64_t)off) / 4u;
      if (elem + c->n > UINT32_MAX)
        return dml_status_make(
            DML_STATUS_UNIMPLEMENTED, OP,
            "kernel %s: a constant table of %u entries placed after %llu bytes of "
            "weights is beyond the kernels' 32-bit element indices",
            K->name, c->n, (unsigned long long)pl->base);
      at[t] = (int64_t)elem;
      tabs[t].n = 0; /* not rendered */
      tabs[t].f = NULL;
      tabs[t].i = NULL;
      moved++;
    }
    if (!moved) continue;
    place_ctx_t c = {p->pool_, at, nt};
    pl_stmts(&c, K->body);
    if (K->gemm) pl_stmts(&c, K->gemm->epilogue);
    if (p->pool_->failed)
      return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
    K->ctabs = tabs;
  }
  return DML_OK;
}

uint8_t *dml_kctab_place_weights(const dml_kctab_place_t *pl, const uint8_t *weights,
                                 uint64_t weights_size, uint64_t *out_size) {
  *out_size = 0;
  if (!pl->size || pl->base < weights_size || pl->base + pl->size > SIZE_MAX) return NULL;
  uint64_t n = pl->base + pl->size;
  uint8_t *b = (uint8_t *)malloc((size_t)n);
  if (!b) return NULL;
  if (weights_size) memcpy(b, weights, (size_t)weights_size);
  memset(b + weights_size, 0, (size_t)(pl->base - weights_size));
  memcpy(b + pl->base, pl->bytes, (size_t)pl->size);
  *out_size = n;
  return b;
}
