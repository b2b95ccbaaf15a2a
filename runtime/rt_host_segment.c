/* rt_host_segment.c — the CPU fall-back's per-segment placement for the GPU
 * backends (rt_backend.h, docs/kernels.md "CPU fall-back"): which kernel
 * entries are host nodes, the values crossing between the device and the
 * host at each of them, and the segment-by-segment run both backends share
 * (dml_rt_gpu_run_segments). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dml_kpkg.h"
#include "rt_backend.h"

void dml_rt_gpu_host_free(dml_rt_host_plan_t *h) {
  free(h->is_host);
  free(h->down_at);
  free(h->up_at);
  free(h->regions);
  memset(h, 0, sizeof *h);
}

/* 1 when value v's bytes come from the host before kernel entry `k` runs:
 * a function input, a constant, or a host node's output (through the
 * views, which alias their input and are in no entry). */
static int host_source(const dml_pkg_function_t *f, const int32_t *producer,
                       const int32_t *entry, const uint8_t *is_host, uint32_t v) {
  for (int guard = 0; guard < 1 << 20; guard++) {
    if (f->values[v].storage == DML_PKG_STORAGE_CONST) return 1;
    int32_t p = producer[v];
    if (p < 0) return 1; /* an input */
    if (entry[p] >= 0) return is_host[entry[p]];
    const dml_pkg_node_t *n = &f->nodes[p]; /* a view in place */
    if (!n->n_inputs || n->inputs[0] == DML_PKG_NO_VALUE) return 1;
    v = n->inputs[0];
  }
  return 0;
}

/* 1 when a device kernel reads value v or a view of it, or it (or a view
 * of it) is an output of the function. */
static int device_reads(const dml_pkg_function_t *f, const int32_t *entry,
                        const uint8_t *is_host, uint32_t v, int depth) {
  if (depth > 64) return 1; /* a long chain of views: copy to be safe */
  for (uint32_t i = 0; i < f->n_outputs; i++)
    if (f->outputs[i] == v) return 1;
  for (uint32_t k = 0; k < f->n_nodes; k++) {
    const dml_pkg_node_t *n = &f->nodes[k];
    int reads = 0;
    for (uint32_t j = 0; j < n->n_inputs && !reads; j++) reads = n->inputs[j] == v;
    if (!reads) continue;
    if (entry[k] >= 0 && !is_host[entry[k]]) return 1;
    if (entry[k] < 0 && n->n_outputs && n->outputs[0] != DML_PKG_NO_VALUE &&
        device_reads(f, entry, is_host, n->outputs[0], depth + 1))
      return 1;
  }
  return 0;
}

/* 1 when a host node (in a host entry of the plan) reads value v or a
 * view of it. */
static int host_reads(const dml_pkg_function_t *f, const int32_t *entry,
                      const uint8_t *is_host, uint32_t v, int depth) {
  if (depth > 64) return 1; /* a long chain of views: keep it on the host too */
  for (uint32_t k = 0; k < f->n_nodes; k++) {
    const dml_pkg_node_t *n = &f->nodes[k];
    int reads = 0;
    for (uint32_t j = 0; j < n->n_inputs && !reads; j++) reads = n->inputs[j] == v;
    if (!reads) continue;
    if (entry[k] >= 0 && is_host[entry[k]]) return 1;
    if (entry[k] < 0 && n->n_outputs && n->outputs[0] != DML_PKG_NO_VALUE &&
        host_reads(f, entry, is_host, n->outputs[0], depth + 1))
      return 1;
  }
  return 0;
}

/* The kernel table (m->kernels_spirv or m->kernels_cuda) holding kf. */
static const dml_kpkg_t *table_of(const dml_rt_model_t *m,
                                  const dml_kpkg_function_t *kf) {
  const dml_kpkg_t *t[2] = {m->kernels_spirv, m->kernels_cuda};
  for (int i = 0; i < 2; i++)
    if (t[i] && kf >= t[i]->functions && kf < t[i]->functions + t[i]->n_functions)
      return t[i];
  return NULL;
}

int dml_rt_gpu_region_on_device(const dml_rt_model_t *m, const dml_pkg_function_t *f,
                                const dml_kpkg_function_t *kf, uint32_t node) {
  if (node >= f->n_nodes) return 0;
  const dml_pkg_node_t *n = &f->nodes[node];
  if (n->op != DML_OP_IF && n->op != DML_OP_LOOP) return 0;
  const dml_kpkg_t *table = table_of(m, kf);
  if (!table) return 0;
  const char *attr[2] = {n->op == DML_OP_LOOP ? "body_function" : "then_function",
                         n->op == DML_OP_LOOP ? NULL : "else_function"};
  for (int a = 0; a < 2; a++) {
    if (!attr[a]) continue;
    const char *name = dml_attr_string(n->attrs, n->n_attrs, attr[a], NULL);
    int found = 0;
    for (uint32_t i = 0; name && i < m->graph->n_functions && !found; i++)
      if (!strcmp(m->graph->functions[i].name, name))
        found = dml_kpkg_find_function(table, i) != NULL;
    if (!found) return 0;
  }
  return 1;
}

/* The maps of f's kernels kf: per value its producing node (-1: none),
 * per node its kernel entry (-1: none, a view in place), per entry 1 for
 * a host entry. */
static void host_maps(const dml_pkg_function_t *f, const dml_kpkg_function_t *kf,
                      int32_t *producer, int32_t *entry, uint8_t *is_host) {
  for (uint32_t v = 0; v < f->n_values; v++) producer[v] = -1;
  for (uint32_t i = 0; i < f->n_nodes; i++) {
    entry[i] = -1;
    for (uint32_t j = 0; j < f->nodes[i].n_outputs; j++)
      if (f->nodes[i].outputs[j] < f->n_values)
        producer[f->nodes[i].outputs[j]] = (int32_t)i;
  }
  for (uint32_t k = 0; k < kf->n_kernels; k++) {
    const dml_kpkg_kernel_t *K = &kf->kernels[k];
    is_host[k] = K->kind == DML_KPKG_KIND_HOST;
    for (uint32_t j = 0; j < K->n_nodes; j++)
      if (K->nodes[j] < f->n_nodes) entry[K->nodes[j]] = (int32_t)k;
  }
}

/* dml_rt_gpu_region_handover over the maps of host_maps. */
static void handover(const dml_rt_model_t *m, const dml_pkg_function_t *f,
                     const dml_kpkg_function_t *kf, const int32_t *producer,
                     const int32_t *entry, const uint8_t *is_host, uint32_t node,
                     uint8_t *in_dev, uint8_t *out_dev) {
  const dml_pkg_node_t *n = &f->nodes[node];
  memset(in_dev, 0, n->n_inputs ? n->n_inputs : 1);
  memset(out_dev, 0, n->n_outputs ? n->n_outputs : 1);
  if (entry[node] < 0 || !is_host[entry[node]] || n->n_inputs > 128 ||
      n->n_outputs > 128 || !dml_rt_gpu_region_on_device(m, f, kf, node))
    return;
  int loop = n->op == DML_OP_LOOP;
  int64_t n_car = loop ? dml_attr_int(n->attrs, n->n_attrs, "n_carried", 0) : 0;
  uint32_t first = loop ? 2 + (uint32_t)(n_car > 0 ? n_car : 0) : 1;
  for (uint32_t j = first; j < n->n_inputs; j++) {
    uint32_t v = n->inputs[j];
    if (v == DML_PKG_NO_VALUE || v >= f->n_values) continue;
    const dml_pkg_value_t *val = &f->values[v];
    if (val->type.dtype == DML_DTYPE_STRING || val->storage == DML_PKG_STORAGE_CONST)
      continue;
    in_dev[j] = !host_source(f, producer, entry, is_host, v);
  }
  for (uint32_t j = 0; !loop && j < n->n_outputs; j++) {
    uint32_t v = n->outputs[j];
    if (v == DML_PKG_NO_VALUE || v >= f->n_values) continue;
    if (f->values[v].type.dtype == DML_DTYPE_STRING) continue;
    out_dev[j] = !host_reads(f, entry, is_host, v, 0);
  }
}

dml_status_t dml_rt_gpu_region_handover(const dml_rt_model_t *m,
                                        const dml_pkg_function_t *f,
                                        const dml_kpkg_function_t *kf, uint32_t node,
                                        uint8_t *in_dev, uint8_t *out_dev) {
  if (node >= f->n_nodes)
    return dml_status_make(DML_STATUS_OUT_OF_RANGE, "rt.session", "node %u", node);
  int32_t *producer =
      (int32_t *)malloc((f->n_values ? f->n_values : 1) * sizeof(int32_t));
  int32_t *entry = (int32_t *)malloc((f->n_nodes ? f->n_nodes : 1) * sizeof(int32_t));
  uint8_t *is_host = (uint8_t *)calloc(kf->n_kernels ? kf->n_kernels : 1, 1);
  dml_status_t s = DML_OK;
  if (!producer || !entry || !is_host) {
    s = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "rt.session", "out of memory");
  } else {
    host_maps(f, kf, producer, entry, is_host);
    handover(m, f, kf, producer, entry, is_host, node, in_dev, out_dev);
  }
  free(producer);
  free(entry);
  free(is_host);
  return s;
}

dml_status_t dml_rt_gpu_plan_host(const char *op, const dml_rt_model_t *m,
                                  const dml_pkg_function_t *f,
                                  const dml_kpkg_function_t *kf, uint64_t align,
                                  uint64_t *io_staging_bytes, dml_rt_host_plan_t *out) {
  memset(out, 0, sizeof *out);
  uint32_t nk = kf->n_kernels;
  for (uint32_t k = 0; k < nk; k++)
    out->used |= kf->kernels[k].kind == DML_KPKG_KIND_HOST;
  if (!out->used) return DML_OK;
  dml_status_t s = DML_OK;
  uint32_t nv = f->n_values, nn = f->n_nodes;
  int32_t *producer = (int32_t *)malloc((nv ? nv : 1) * sizeof(int32_t));
  int32_t *entry = (int32_t *)malloc((nn ? nn : 1) * sizeof(int32_t));
  out->is_host = (uint8_t *)calloc(nk, 1);
  out->down_at = (uint32_t *)calloc(2 * (size_t)nk + 1, sizeof(uint32_t));
  out->up_at = (uint32_t *)calloc(2 * (size_t)nk + 1, sizeof(uint32_t));
  if (!producer || !entry || !out->is_host || !out->down_at || !out->up_at) {
    s = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, op, "out of memory");
    goto done;
  }
  host_maps(f, kf, producer, entry, out->is_host);
  out->first_gpu = nk;
  for (uint32_t k = 0; k < nk; k++)
    if (!out->is_host[k] && out->first_gpu == nk) out->first_gpu = k;
  if (out->first_gpu == nk) out->first_gpu = 0;
  /* per host entry: the values its nodes read that the device computed
   * (downloads, once each), then the values they write that the device
   * reads later or the function returns (uploads) */
  uint32_t cap = 16, n = 0;
  out->regions = (dml_rt_io_region_t *)malloc(cap * sizeof(dml_rt_io_region_t));
  if (!out->regions) {
    s = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, op, "out of memory");
    goto done;
  }
  for (uint32_t k = 0; !s && k < nk; k++) {
    const dml_kpkg_kernel_t *K = &kf->kernels[k];
    for (int up = 0; up < 2 && !s; up++) {
      uint32_t *at = up ? out->up_at : out->down_at;
      at[2 * k] = n;
      for (uint32_t j = 0; out->is_host[k] && !s && j < K->n_nodes; j++) {
        const dml_pkg_node_t *nd = &f->nodes[K->nodes[j]];
        uint32_t cnt = up ? nd->n_outputs : nd->n_inputs;
        /* an If or Loop whose regions run on the device: the captures
         * the device computed go to them on the device, the If's results
         * no host node reads come back there (dml_rt_gpu_region_handover) */
        uint8_t hand[256];
        int cf = (nd->op == DML_OP_IF || nd->op == DML_OP_LOOP) && nd->n_inputs <= 128 &&
                 nd->n_outputs <= 128;
        if (cf)
          handover(m, f, kf, producer, entry, out->is_host, K->nodes[j], hand,
                   hand + 128);
        for (uint32_t q = 0; q < cnt && !s; q++) {
          uint32_t v = up ? nd->outputs[q] : nd->inputs[q];
          if (v == DML_PKG_NO_VALUE || v >= nv) continue;
          if (cf && hand[up ? 128 + q : q]) continue;
          const dml_pkg_value_t *val = &f->values[v];
          if (val->type.dtype == DML_DTYPE_STRING ||
              val->storage == DML_PKG_STORAGE_CONST)
            continue; /* strings live on the host; constants on both */
          if (up ? !device_reads(f, entry, out->is_host, v, 0)
                 : host_source(f, producer, entry, out->is_host, v))
            continue;
          int dup = 0;
          for (uint32_t r = at[2 * k]; r < n && !dup; r++)
            dup = out->regions[r].value == v;
          if (dup) continue;
          int64_t b = dml_pkg_type_bytes_bound(&val->type, m->graph->symbols,
                                               m->graph->n_symbols);
          if (b < 0 || (uint64_t)b > val->bytes ||
              val->offset + (uint64_t)b > f->arena_bytes) {
            s = dml_status_make(DML_STATUS_DATA_LOSS, op, "bad size of '%s'", val->name);
            break;
          }
          if (n == cap) {
            dml_rt_io_region_t *r2 = (dml_rt_io_region_t *)realloc(
                out->regions, 2 * (size_t)cap * sizeof(dml_rt_io_region_t));
            if (!r2) {
              s = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, op, "out of memory");
              break;
            }
            out->regions = r2;
            cap *= 2;
          }
          dml_rt_io_region_t *r = &out->regions[n++];
          r->value = v;
          r->arena_offset = val->offset;
          r->bytes_bound = (uint64_t)b;
          r->staging_offset = (*io_staging_bytes + align - 1) & ~(align - 1);
          *io_staging_bytes = r->staging_offset + (uint64_t)b;
        }
      }
      at[2 * k + 1] = n;
    }
  }
done:
  free(producer);
  free(entry);
  if (s) dml_rt_gpu_host_free(out);
  return s;
}

uint32_t dml_rt_gpu_segment_end_host(const dml_rt_dims_region_t *d,
                                     const dml_rt_host_plan_t *h, uint32_t n_kernels,
                                     uint32_t begin) {
  for (uint32_t k = begin; k < n_kernels; k++) {
    if (h->used && h->is_host[k]) return k;
    if (d->used && d->produces[k]) return k + 1;
  }
  return n_kernels;
}

uint32_t dml_rt_gpu_segments_host(const dml_rt_dims_region_t *d,
                                  const dml_rt_host_plan_t *h, uint32_t n_kernels) {
  uint32_t n = dml_rt_gpu_segments(d, n_kernels);
  for (uint32_t k = 0; h->used && k < n_kernels; k++) n += 2u * h->is_host[k];
  return n;
}

dml_status_t dml_rt_gpu_plan(const char *op, const char *target, const dml_rt_model_t *m,
                             const dml_pkg_function_t *f, const dml_kpkg_function_t *kf,
                             uint64_t align, dml_rt_gpu_plan_t *out,
                             uint64_t *out_staging_bytes) {
  memset(out, 0, sizeof *out);
  uint64_t st = 0;
  DML_RETURN_IF_ERROR(
      dml_rt_gpu_plan_io(op, target, m, f, align, &out->inputs, &out->outputs, &st));
  out->n_inputs = f->n_inputs;
  out->n_outputs = f->n_outputs;
  dml_rt_gpu_plan_rng(f, align, &st, &out->rng);
  DML_RETURN_IF_ERROR(
      dml_rt_gpu_plan_dims(op, m, f, kf, align, &out->rng, &st, &out->dims));
  DML_RETURN_IF_ERROR(dml_rt_gpu_plan_host(op, m, f, kf, align, &st, &out->host));
  *out_staging_bytes = st;
  return DML_OK;
}

void dml_rt_gpu_plan_free(dml_rt_gpu_plan_t *p) {
  dml_rt_gpu_dims_free(&p->dims);
  dml_rt_gpu_host_free(&p->host);
  free(p->inputs);
  free(p->outputs);
  p->inputs = p->outputs = NULL;
}

int64_t dml_rt_gpu_io_bytes(const dml_rt_exec_t *e, uint32_t value) {
  dml_type_t t = e->fn->values[value].type;
  /* strings live in the host arena (dml_str_t descriptors pointing into the
   * session's string heaps): no copy moves them, or the device's stale
   * bytes would overwrite what the host nodes wrote */
  if (t.dtype == DML_DTYPE_STRING) return 0;
  int64_t dims[DML_MAX_RANK];
  if (dml_type_eval_dims(&t, e->sym, e->n_symbols, dims)) return -1;
  int64_t n = dml_dims_numel(dims, t.rank);
  return n < 0 ? -1 : n * (int64_t)dml_dtype_size(t.dtype);
}

dml_status_t dml_rt_gpu_check_kernel(const char *op, const dml_kpkg_function_t *kf,
                                     uint32_t k) {
  if (k >= kf->n_kernels)
    return dml_status_make(DML_STATUS_OUT_OF_RANGE, op, "kernel %u of %u", k,
                           kf->n_kernels);
  if (kf->kernels[k].kind == DML_KPKG_KIND_HOST)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, op,
                           "kernel entry %u (%s) holds host nodes (the CPU fall-back): "
                           "nothing runs on the device",
                           k, kf->kernels[k].name);
  return DML_OK;
}

void dml_rt_gpu_staging_copy(const dml_rt_io_region_t *x, uint32_t n, uint8_t *st,
                             const dml_rt_exec_t *e, int to_staging) {
  for (uint32_t i = 0; i < n; i++, x++) {
    int64_t nb = dml_rt_gpu_io_bytes(e, x->value);
    if (nb <= 0) continue;
    if (to_staging)
      memcpy(st + x->staging_offset, e->arena + x->arena_offset, (size_t)nb);
    else
      memcpy(e->arena + x->arena_offset, st + x->staging_offset, (size_t)nb);
  }
}

dml_status_t dml_rt_gpu_run_segments(const char *op, const dml_rt_gpu_run_t *g,
                                     const dml_rt_exec_t *e) {
  const dml_rt_gpu_plan_t *p = g->plan;
  const dml_rt_host_plan_t *h = &p->host;
  for (uint32_t i = 0; i < p->n_inputs; i++) /* those bound on the device: no */
    if (!e->dev_in || !e->dev_in[i])
      dml_rt_gpu_staging_copy(p->inputs + i, 1, g->staging, e, 1);
  if (p->rng.used) dml_rt_gpu_rng_words(e, g->staging + p->rng.staging_offset);
  uint32_t nk = g->kf->n_kernels;
  for (uint32_t seg = 0, b = 0;; seg++) {
    if (h->used && b < nk && h->is_host[b]) {
      /* host nodes (the CPU fall-back): the values they read came to the
       * staging at the end of the segment before */
      if (!e->host)
        return dml_status_make(DML_STATUS_UNIMPLEMENTED, op,
                               "kernel entry %u holds host nodes and this run has no "
                               "host executor",
                               b);
      const dml_rt_io_region_t *r = h->regions;
      struct timespec t0, t1;
      clock_gettime(CLOCK_MONOTONIC, &t0);
      dml_rt_gpu_staging_copy(r + h->down_at[2 * b],
                              h->down_at[2 * b + 1] - h->down_at[2 * b], g->staging, e,
                              0);
      DML_RETURN_IF_ERROR(
          e->host(e->ctx, g->kf->kernels[b].nodes, g->kf->kernels[b].n_nodes));
      /* to the device at the next segment's start */
      dml_rt_gpu_staging_copy(r + h->up_at[2 * b], h->up_at[2 * b + 1] - h->up_at[2 * b],
                              g->staging, e, 1);
      clock_gettime(CLOCK_MONOTONIC, &t1);
      g->kernel_ms[b] =
          (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
      b++;
      continue; /* b == nk: an empty segment copies the uploads and outputs */
    }
    uint32_t end = dml_rt_gpu_segment_end_host(&p->dims, h, nk, b);
    DML_RETURN_IF_ERROR(g->run_segment(g->state, e, seg, b, end));
    /* after a kernel that counted dims (the last one too: the output copies
     * follow in a segment of their own) the session sets them for the rest */
    if (dml_rt_gpu_segment_produces(&p->dims, b, end)) {
      DML_RETURN_IF_ERROR(
          dml_rt_gpu_take_dims(e, g->kf, end - 1, g->staging + p->dims.staging_offset));
    } else if (end == nk) {
      break;
    }
    b = end; /* a host entry, or the segment after the dims */
  }
  if (!e->outputs_lazy)
    dml_rt_gpu_staging_copy(p->outputs, p->n_outputs, g->staging, e, 0);
  return DML_OK;
}
