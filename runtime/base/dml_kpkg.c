/* dml_kpkg.c — kernel sections of a package (dml_kpkg.h,
 * docs/package-format.md "Kernel sections"). */
#include "dml_kpkg.h"

#include <stdlib.h>
#include <string.h>

const char *dml_kpkg_section_tag(dml_kpkg_target_t t) {
  switch (t) {
    case DML_KPKG_TARGET_SPIRV: return "kernels.spirv";
    case DML_KPKG_TARGET_MSL: return "kernels.msl";
    case DML_KPKG_TARGET_CUDA: return "kernels.cuda";
  }
  return "";
}

int64_t dml_kpkg_lin_eval(dml_kpkg_lin_t l, const int64_t *sym, uint32_t n) {
  if (l.sym < 0 && !l.more) return l.c0 + l.c;
  int64_t t = l.c;
  for (int32_t i = -1; i < 32; i++) {
    int32_t k = i < 0 ? l.sym : i;
    if (i < 0 ? k < 0 : !(l.more >> i & 1u)) continue;
    if (k < 0 || (uint32_t)k >= n || sym[k] < 0 || __builtin_mul_overflow(t, sym[k], &t))
      return -1;
  }
  if (__builtin_add_overflow(t, l.c0, &t)) return -1;
  return t;
}

const dml_kpkg_function_t *dml_kpkg_find_function(const dml_kpkg_t *k, uint32_t fn) {
  if (!k) return NULL;
  for (uint32_t i = 0; i < k->n_functions; i++)
    if (k->functions[i].function == fn) return &k->functions[i];
  return NULL;
}

void dml_kpkg_release(dml_kpkg_t *k) {
  if (!k) return;
  for (uint32_t f = 0; f < k->n_functions; f++) {
    for (uint32_t i = 0; i < k->functions[f].n_kernels; i++)
      free(k->functions[f].kernels[i].nodes);
    free(k->functions[f].kernels);
  }
  free(k->functions);
  free(k);
}

/* ---- encode ---- */

typedef struct wr {
  uint8_t *p;
  size_t n, cap;
  int oom;
} wr_t;

static void wr_bytes(wr_t *w, const void *d, size_t n) {
  if (w->oom) return;
  if (w->n + n > w->cap) {
    size_t cap = w->cap ? w->cap : 4096;
    while (cap < w->n + n) cap *= 2;
    uint8_t *p = (uint8_t *)realloc(w->p, cap);
    if (!p) {
      w->oom = 1;
      return;
    }
    w->p = p;
    w->cap = cap;
  }
  if (n) memcpy(w->p + w->n, d, n);
  w->n += n;
}

static void wr_u32(wr_t *w, uint32_t v) {
  uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
  wr_bytes(w, b, 4);
}

static void wr_i64(wr_t *w, int64_t v) {
  wr_u32(w, (uint32_t)((uint64_t)v & 0xFFFFFFFFu));
  wr_u32(w, (uint32_t)((uint64_t)v >> 32));
}

static void wr_lin(wr_t *w, dml_kpkg_lin_t l) {
  wr_i64(w, l.c0);
  wr_i64(w, l.c);
  wr_u32(w, (uint32_t)l.sym);
  wr_u32(w, l.more);
}

dml_status_t dml_kpkg_encode(const dml_kpkg_t *k, void **out_bytes, size_t *out_size) {
  if (!k || !out_bytes || !out_size)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "pkg.write",
                           "dml_kpkg_encode: NULL argument");
  wr_t w = {0};
  wr_u32(&w, DML_KPKG_MAGIC);
  wr_u32(&w, DML_KPKG_VERSION);
  wr_u32(&w, (uint32_t)k->target);
  wr_u32(&w, k->n_functions);
  static const uint8_t zeros[4] = {0};
  for (uint32_t f = 0; f < k->n_functions; f++) {
    const dml_kpkg_function_t *fn = &k->functions[f];
    wr_u32(&w, fn->function);
    wr_u32(&w, fn->n_kernels);
    for (uint32_t i = 0; i < fn->n_kernels; i++) {
      const dml_kpkg_kernel_t *K = &fn->kernels[i];
      char name[DML_KPKG_NAME_BYTES] = {0};
      size_t nl = strnlen(K->name, DML_KPKG_NAME_BYTES - 1);
      memcpy(name, K->name, nl);
      wr_bytes(&w, name, DML_KPKG_NAME_BYTES);
      wr_u32(&w, K->kind);
      wr_u32(&w, K->n_nodes);
      for (uint32_t j = 0; j < K->n_nodes; j++) wr_u32(&w, K->nodes[j]);
      for (int d = 0; d < 3; d++) wr_u32(&w, K->local[d]);
      for (int d = 0; d < 3; d++) wr_lin(&w, K->items[d]);
      wr_lin(&w, K->flops);
      wr_lin(&w, K->bytes);
      wr_u32(&w, K->code_bytes);
      wr_bytes(&w, K->code, K->code_bytes);
      wr_bytes(&w, zeros, (4 - K->code_bytes % 4) % 4);
    }
  }
  if (w.oom) {
    free(w.p);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "pkg.write", "out of memory");
  }
  *out_bytes = w.p;
  *out_size = w.n;
  return DML_OK;
}

/* ---- decode ---- */

typedef struct rd {
  const uint8_t *p;
  size_t n, at;
  const char *tag;
  dml_status_t err;
} rd_t;

static int rd_fail(rd_t *r, const char *what) {
  if (!r->err)
    r->err =
        dml_status_make(DML_STATUS_DATA_LOSS, "pkg.load",
                        "section '%s' is corrupt: %s at byte %zu", r->tag, what, r->at);
  return 0;
}

static int rd_u32(rd_t *r, uint32_t *v, const char *what) {
  if (r->err) return 0;
  if (r->n - r->at < 4) return rd_fail(r, what);
  const uint8_t *b = r->p + r->at;
  *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
  r->at += 4;
  return 1;
}

static int rd_i64(rd_t *r, int64_t *v, const char *what) {
  uint32_t lo, hi;
  if (!rd_u32(r, &lo, what) || !rd_u32(r, &hi, what)) return 0;
  *v = (int64_t)((uint64_t)hi << 32 | lo);
  return 1;
}

static int rd_lin(rd_t *r, dml_kpkg_lin_t *l, uint32_t n_symbols, const char *what) {
  uint32_t sym, more;
  if (!rd_i64(r, &l->c0, what) || !rd_i64(r, &l->c, what) || !rd_u32(r, &sym, what) ||
      !rd_u32(r, &more, what))
    return 0;
  l->sym = (int32_t)sym;
  l->more = more;
  const int64_t lim = (int64_t)1 << 40;
  if (l->c0 < 0 || l->c < 0 || l->c0 >= lim || l->c >= lim ||
      (l->sym != -1 && (l->sym < 0 || (uint32_t)l->sym >= n_symbols)) ||
      (n_symbols < 32 && (more >> n_symbols) != 0))
    return rd_fail(r, what);
  return 1;
}

dml_status_t dml_kpkg_decode(const void *bytes, size_t size, dml_kpkg_target_t target,
                             const dml_pkg_graph_t *g, dml_kpkg_t **out_kpkg) {
  rd_t r = {(const uint8_t *)bytes, size, 0, dml_kpkg_section_tag(target), DML_OK};
  if (!g || !out_kpkg)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "pkg.load",
                           "dml_kpkg_decode: NULL argument");
  if (!bytes) r.n = 0;
  dml_kpkg_t *k = (dml_kpkg_t *)calloc(1, sizeof *k);
  if (!k)
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "pkg.load", "out of memory");
  k->target = target;
  uint32_t magic = 0, version = 0, tgt = 0, nf = 0;
  if (rd_u32(&r, &magic, "header") && magic != DML_KPKG_MAGIC) rd_fail(&r, "bad magic");
  if (rd_u32(&r, &version, "header") && version != DML_KPKG_VERSION)
    rd_fail(&r, "unknown version");
  if (rd_u32(&r, &tgt, "header") && tgt != (uint32_t)target) rd_fail(&r, "wrong target");
  if (rd_u32(&r, &nf, "function count") && nf > g->n_functions)
    rd_fail(&r, "more functions than the graph has");
  if (!r.err && nf) {
    k->functions = (dml_kpkg_function_t *)calloc(nf, sizeof *k->functions);
    if (!k->functions) {
      dml_kpkg_release(k);
      return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "pkg.load", "out of memory");
    }
  }
  uint32_t n_symbols = g->n_symbols;
  for (uint32_t f = 0; !r.err && f < nf; f++) {
    dml_kpkg_function_t *fn = &k->functions[f];
    uint32_t nk = 0;
    if (!rd_u32(&r, &fn->function, "function index")) break;
    if (fn->function >= g->n_functions) {
      rd_fail(&r, "function index out of range");
      break;
    }
    for (uint32_t j = 0; j < f; j++)
      if (k->functions[j].function == fn->function) rd_fail(&r, "function listed twice");
    /* each kernel takes at least 172 bytes */
    if (!rd_u32(&r, &nk, "kernel count")) break;
    if (nk > DML_KPKG_MAX_KERNELS || nk > (r.n - r.at) / 172) {
      rd_fail(&r, "kernel count beyond the section");
      break;
    }
    k->n_functions = f + 1;
    const dml_pkg_function_t *gf = &g->functions[fn->function];
    fn->kernels = nk ? (dml_kpkg_kernel_t *)calloc(nk, sizeof *fn->kernels) : NULL;
    uint8_t *held = (uint8_t *)calloc(gf->n_nodes ? gf->n_nodes : 1, 1);
    if ((nk && !fn->kernels) || !held) {
      free(held);
      dml_kpkg_release(k);
      return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "pkg.load", "out of memory");
    }
    fn->n_kernels = nk;
    int64_t last = -1;
    for (uint32_t i = 0; !r.err && i < nk; i++) {
      dml_kpkg_kernel_t *K = &fn->kernels[i];
      if (r.n - r.at < DML_KPKG_NAME_BYTES) {
        rd_fail(&r, "kernel name");
        break;
      }
      memcpy(K->name, r.p + r.at, DML_KPKG_NAME_BYTES);
      if (K->name[DML_KPKG_NAME_BYTES - 1] || !K->name[0]) rd_fail(&r, "kernel name");
      r.at += DML_KPKG_NAME_BYTES;
      if (!rd_u32(&r, &K->kind, "kernel kind") || !rd_u32(&r, &K->n_nodes, "node count"))
        break;
      if (K->kind < 1 || K->kind > DML_KPKG_KIND_HOST) rd_fail(&r, "unknown kernel kind");
      if (K->n_nodes == 0 || K->n_nodes > gf->n_nodes || K->n_nodes > (r.n - r.at) / 4) {
        rd_fail(&r, "node count");
        break;
      }
      K->nodes = (uint32_t *)malloc(K->n_nodes * sizeof(uint32_t));
      if (!K->nodes) {
        r.err =
            dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "pkg.load", "out of memory");
        break;
      }
      for (uint32_t j = 0; j < K->n_nodes && rd_u32(&r, &K->nodes[j], "node index");
           j++) {
        if ((int64_t)K->nodes[j] <= last || K->nodes[j] >= gf->n_nodes) {
          rd_fail(&r, "node indices out of range or not increasing");
          break;
        }
        last = K->nodes[j];
        held[K->nodes[j]] = 1;
      }
      uint64_t prod = 1;
      for (int d = 0; d < 3 && rd_u32(&r, &K->local[d], "workgroup size"); d++) {
        if (K->local[d] < 1 || K->local[d] > DML_KPKG_MAX_LOCAL)
          rd_fail(&r, "workgroup size");
        prod *= K->local[d];
      }
      if (!r.err && prod > DML_KPKG_MAX_LOCAL) rd_fail(&r, "workgroup size");
      for (int d = 0; d < 3; d++) rd_lin(&r, &K->items[d], n_symbols, "invocation count");
      rd_lin(&r, &K->flops, n_symbols, "flop estimate");
      rd_lin(&r, &K->bytes, n_symbols, "byte estimate");
      if (!rd_u32(&r, &K->code_bytes, "code size")) break;
      size_t padded = ((size_t)K->code_bytes + 3) & ~(size_t)3;
      if (K->kind == DML_KPKG_KIND_HOST) { /* host nodes: no code */
        if (K->code_bytes) rd_fail(&r, "code size (a host entry has no code)");
        K->code = NULL;
        continue;
      }
      if (K->code_bytes == 0 || K->code_bytes > DML_KPKG_MAX_CODE_BYTES ||
          padded > r.n - r.at) {
        rd_fail(&r, "code size");
        break;
      }
      K->code = r.p + r.at;
      if (target == DML_KPKG_TARGET_SPIRV) {
        if (K->code_bytes % 4 || K->code_bytes < 20 ||
            !(K->code[0] == 0x03 && K->code[1] == 0x02 && K->code[2] == 0x23 &&
              K->code[3] == 0x07))
          rd_fail(&r, "not a SPIR-V module");
      } else if (target == DML_KPKG_TARGET_CUDA) {
        dml_kpkg_cuda_image_t im[DML_KPKG_CUDA_MAX_IMAGES];
        uint32_t ni = 0;
        dml_status_t cs = dml_kpkg_cuda_images(K->code, K->code_bytes, im, &ni);
        if (cs) {
          rd_fail(&r, dml_status_reason(cs));
          dml_status_free(cs);
        }
      } else if (memchr(K->code, 0, K->code_bytes)) {
        rd_fail(&r, "NUL byte in MSL source");
      }
      r.at += padded;
    }
    for (uint32_t j = 0; !r.err && j < gf->n_nodes; j++) {
      const dml_op_info_t *info = dml_op_info(gf->nodes[j].op);
      if (!held[j] && !(info && (info->flags & DML_OPF_VIEW)))
        rd_fail(&r, "a node that is not a view is in no kernel");
    }
    free(held);
  }
  if (!r.err && r.at != r.n) rd_fail(&r, "trailing bytes");
  if (r.err) {
    dml_kpkg_release(k);
    return r.err;
  }
  *out_kpkg = k;
  return DML_OK;
}

static uint32_t le32(const uint8_t *b) {
  return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
         (uint32_t)b[3] << 24;
}

static dml_status_t cuda_bad(const char *what, uint32_t at) {
  return dml_status_make(DML_STATUS_DATA_LOSS, "pkg.load",
                         "CUDA code: %s (byte %u of the kernel's code)", what, at);
}

dml_status_t dml_kpkg_cuda_images(const uint8_t *code, uint32_t size,
                                  dml_kpkg_cuda_image_t out[DML_KPKG_CUDA_MAX_IMAGES],
                                  uint32_t *n_out) {
  *n_out = 0;
  if (!code || size < 8) return cuda_bad("truncated header", 0);
  if (le32(code) != DML_KPKG_CUDA_MAGIC) return cuda_bad("bad magic", 0);
  uint32_t n = le32(code + 4), at = 8;
  if (n < 1 || n > DML_KPKG_CUDA_MAX_IMAGES) return cuda_bad("image count", 4);
  for (uint32_t i = 0; i < n; i++) {
    if (size - at < 12) return cuda_bad("truncated image header", at);
    dml_kpkg_cuda_image_t *im = &out[i];
    im->kind = le32(code + at);
    im->sm = le32(code + at + 4);
    im->size = le32(code + at + 8);
    if (im->kind < DML_KPKG_CUDA_PTX || im->kind > DML_KPKG_CUDA_CUBIN_ARCH)
      return cuda_bad("unknown image kind", at);
    if (im->sm < 50 || im->sm > 199)
      return cuda_bad("architecture out of 50..199", at + 4);
    at += 12;
    uint64_t padded = ((uint64_t)im->size + 3) & ~(uint64_t)3;
    if (im->size == 0 || padded > size - at) return cuda_bad("image size", at - 4);
    im->data = code + at;
    if (im->kind == DML_KPKG_CUDA_PTX || im->kind == DML_KPKG_CUDA_PTX_ARCH) {
      if (memchr(im->data, 0, im->size)) return cuda_bad("NUL byte in PTX", at);
      static const char tgt[] = ".target sm_";
      int found = 0;
      for (uint32_t j = 0; !found && j + sizeof tgt - 1 <= im->size; j++)
        found = !memcmp(im->data + j, tgt, sizeof tgt - 1);
      if (!found) return cuda_bad("PTX without a .target", at);
    } else if (im->size < 52 || memcmp(im->data,
                                       "\x7f"
                                       "ELF",
                                       4)) {
      return cuda_bad("cubin is not an ELF image", at);
    }
    for (uint64_t j = im->size; j < padded; j++)
      if (code[at + j]) return cuda_bad("nonzero padding", (uint32_t)(at + j));
    at += (uint32_t)padded;
  }
  if (at != size) return cuda_bad("trailing bytes", at);
  *n_out = n;
  return DML_OK;
}
