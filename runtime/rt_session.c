/* rt_session.c — sessions: one arena per session, inputs bound by copy, the
 * globals (shared by sessions created with share_globals_with), and the CPU
 * executor that runs a function's plan node by node. */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dml_cpu.h"
#include "dml_kpkg.h"
#include "rt_backend.h"
#include "rt_internal.h"

/* The current values of a model's globals, shared by sessions. `data` is a
 * writable copy of the whole "weights" section (64-byte aligned, so every
 * value keeps its offset and alignment), or NULL when the model's own
 * weights are used read-only (no function assigns globals). */
typedef struct rt_globals {
  atomic_int refs;
  uint8_t *data;
  /* Sessions on a GPU device (rt_backend.h) share one device copy too:
   * device_newer after a run that assigned globals (dml_rt_session_global
   * reads the device copy back first), host_newer once
   * dml_rt_session_global has lent the host copy (uploaded before the next
   * run). Sessions sharing globals never run at the same time. */
  int device_newer, host_newer;
} rt_globals_t;

static void globals_release(rt_globals_t *g) {
  if (g && atomic_fetch_sub(&g->refs, 1) == 1) {
    free(g->data);
    free(g);
  }
}

struct dml_rt_session {
  const dml_rt_model_t *m;
  /* An If branch's or Loop body's session: its inputs are the node's
   * captures, whose symbols may be 0 (an empty data-dependent extent of the
   * caller: no detections), unlike a model input's. */
  int captures;
  rt_globals_t *globals;
  const uint8_t *weights; /* globals->data, or the model's weights */
  const dml_pkg_function_t *fn;
  uint32_t n_symbols;
  uint8_t *arena; /* 64-byte aligned, inside arena_alloc */
  void *arena_alloc;
  void *scratch;
  size_t scratch_bytes;
  dml_tensor_t *vals;    /* per value: dtype, rank, dims of the last run, data */
  dml_tensor_t *io;      /* per node: its inputs then its outputs */
  dml_cpu_call_t *calls; /* per node, pointing into io */
  uint8_t *bound;        /* per function input */
  int64_t (*in_dims)[DML_MAX_RANK]; /* per function input: bound dims */
  /* String tensors (docs/package-format.md "String tensors"): the heap of
   * string results (reset at each run; a branch session of If/Loop uses
   * its parent's, borrowed), and one heap per input holding the copy of a
   * bound string input's bytes. */
  dml_cpu_strheap_t *strheap;
  int strheap_borrowed;
  dml_cpu_strheap_t **in_heap;
  /* an input's previous heap, kept until the next run: the last run's
   * outputs may point into it (Identity, Gather, StringSplit of an input) */
  dml_cpu_strheap_t **in_heap_old;
  int64_t *sym;                /* per symbol: value during a run */
  int ran;                     /* a run has completed */
  uint64_t rng_seed, rng_step; /* dml_rt_session_set_seed */
  uint8_t timeout_set;         /* dml_rt_session_set_device_timeout */
  double timeout_s;
  /* Data-dependent dims: per node, 1 when it produces a symbol of this
   * function; per value, 1 when its type uses such a symbol. */
  uint8_t *node_produces;
  uint8_t *value_dynamic;
  /* GPU sessions: the next node whose dims gpu_value_dims has not taken
   * yet (it stops at a node whose kernel counts its dims on the device,
   * dml_rt_node_dims_on_device, until the backend reports them). */
  uint32_t gpu_next;
  /* GPU sessions: per node, 1 when the host runs it with the CPU kernel
   * before each device run (a shape value's producer, dml_pkg_host_value);
   * per value, 1 + its offset in host_buf when such a node computes it,
   * else 0. */
  uint8_t *host_node;
  /* GPU sessions: 1 for the nodes of the device's host entries (the CPU
   * fall-back's per-segment placement), which gpu_host_nodes runs */
  uint8_t *on_host;
  uint64_t *host_off;
  uint8_t *host_buf;
  /* A GPU backend (rt_backend.h), or NULL for the CPU executor below. */
  const dml_rt_backend_t *backend;
  void *backend_state;
  int assigns;             /* the function has Assign nodes (writes globals) */
  uint64_t *out_cap;       /* per io slot: planned bytes (dml_cpu.h output_capacity) */
  dml_rt_cpu_fuse_t *fuse; /* CPU node fusion (rt_cpu_fuse.c); NULL: none */
  /* Per node, 2 entries: an If's then and else sessions, a Loop's body
   * session (its branch functions, sharing this session's globals; on this
   * session's device when the package has device kernels for them, else on
   * the CPU), else NULL; region_runs: per entry, how many times it ran in
   * the current or last run (dml_rt_session_region). */
  dml_rt_session_t **branch;
  uint64_t *region_runs;
  /* The session on whose device (rt_backend.h open's `share`: its VkDevice
   * or CUDA context and its device copy of the weights) this session's
   * regions run: this one when it has a backend, else the one its caller
   * passed (this session is a region on the CPU whose caller or sibling is
   * on the device), else the first of its regions on the device; NULL
   * while none is. Not owned. */
  dml_rt_session_t *dev_of;
  uint64_t runs_done; /* completed runs since creation */
  uint8_t *sym_used;  /* per symbol: a value of fn uses it (or a derived one) */
  void *fuse_extra;   /* fuse->extra_bytes beside the arena */
  /* dml_rt_session_set_profiling: per node, its kernel's start and end in
   * the last run (CLOCK_MONOTONIC ns); NULL while profiling is off. */
  uint64_t *prof;
  int prof_ran; /* a run has completed with profiling on */
  /* The CPU fall-back (docs/kernels.md "CPU fall-back"): a session opened
   * on a GPU device for a function the package's kernels for that device
   * leave out runs with the CPU kernels (backend NULL); why, in words, else
   * NULL (dml_rt_session_fallback). */
  char *fallback;
  /* Device-resident inputs (dml_rt_session_set_input_device): per function
   * input the eager tensor the session owns (a view of the caller's, or a
   * dense copy on the device), else the zero handle; and their buffers and
   * offsets, resolved at each run (dml_rt_exec_t.dev_in). */
  dml_rt_tensor_t *dev_in;
  void **dev_in_buf;
  uint64_t *dev_in_off;
  /* An If branch's or Loop body's session on the device (run_loop): per
   * input, 1 when its caller bound it on the device (bind_on_device:
   * dev_in_buf / dev_in_off set by the caller, no eager tensor), and
   * region_lazy: its runs leave the outputs on the device (the caller
   * reads the few it needs on the host: region_output). */
  uint8_t *dev_raw;
  int region_lazy;
  /* Per io slot (as `io`), for the If and Loop nodes of the device's host
   * entries: 1 for a capture read from this session's device arena and an
   * If result written there by the region (dml_rt_gpu_region_handover,
   * the plan of what crosses agreeing); NULL when none. */
  uint8_t *cf_dev;
  /* Outputs left on the device (dml_rt_exec_t.outputs_lazy): a session
   * made on an eager device (on_device) leaves them there in its first run
   * and in every run after one whose outputs nothing read on the host
   * (host_read 0); a session made by name never does. out_pending: the
   * last run's outputs are on the device only (dml_rt_session_get_output
   * reads them back first). */
  int on_device, host_read, out_pending;
  uint64_t n_runs;
  dml_rt_transfer_stats_t xfer; /* dml_rt_session_transfer_stats */
};

static dml_status_t oom(void) {
  return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "rt.session", "out of memory");
}

static const char *type_str(const dml_rt_model_t *m, const dml_type_t *t, char *buf,
                            size_t cap) {
  size_t k = (size_t)snprintf(buf, cap, "%s[", dml_dtype_name(t->dtype));
  for (int32_t d = 0; d < t->rank && k < cap; d++) {
    const dml_dim_t *dim = &t->dims[d];
    const char *sep = d ? "," : "";
    if (dim->sym < 0)
      k += (size_t)snprintf(buf + k, cap - k, "%s%" PRId64, sep, dim->value);
    else if (dim->value == 1)
      k += (size_t)snprintf(buf + k, cap - k, "%s%s", sep,
                            m->graph->symbols[dim->sym].name);
    else
      k += (size_t)snprintf(buf + k, cap - k,
                            strpbrk(m->graph->symbols[dim->sym].name, "+-*/")
                                ? "%s%" PRId64 "*(%s)"
                                : "%s%" PRId64 "*%s",
                            sep, dim->value, m->graph->symbols[dim->sym].name);
  }
  if (k < cap) snprintf(buf + k, cap - k, "]");
  return buf;
}

/* Frees the eager tensor bound to input i on the device, if any, and
 * forgets a caller's binding on the device (bind_on_device). */
static void dev_in_drop(dml_rt_session_t *s, uint32_t i) {
  if (s->dev_raw) s->dev_raw[i] = 0;
  if (!s->dev_in || !s->dev_in[i].id) return;
  dml_status_free(dml_rt_tensor_free(s->dev_in[i]));
  s->dev_in[i] = DML_RT_TENSOR_NONE;
}

void dml_rt_session_release(dml_rt_session_t *s) {
  if (!s) return;
  for (uint32_t i = 0; s->dev_in && i < s->fn->n_inputs; i++) dev_in_drop(s, i);
  free(s->dev_in);
  free(s->dev_in_buf);
  free(s->dev_in_off);
  free(s->dev_raw);
  free(s->cf_dev);
  if (s->backend) s->backend->close(s->backend_state);
  dml_rt_cpu_fuse_free(s->fuse);
  free(s->fuse_extra);
  free(s->arena_alloc);
  free(s->scratch);
  free(s->vals);
  free(s->io);
  free(s->calls);
  free(s->bound);
  free(s->in_dims);
  free(s->sym);
  free(s->node_produces);
  free(s->value_dynamic);
  free(s->host_node);
  free(s->on_host);
  free(s->host_off);
  free(s->host_buf);
  free(s->out_cap);
  if (!s->strheap_borrowed) dml_cpu_strheap_release(s->strheap);
  for (uint32_t i = 0; s->in_heap && i < s->fn->n_inputs; i++)
    dml_cpu_strheap_release(s->in_heap[i]);
  for (uint32_t i = 0; s->in_heap_old && i < s->fn->n_inputs; i++)
    dml_cpu_strheap_release(s->in_heap_old[i]);
  free(s->in_heap);
  free(s->in_heap_old);
  for (uint32_t i = 0; s->branch && i < 2 * s->fn->n_nodes; i++)
    dml_rt_session_release(s->branch[i]);
  free(s->branch);
  free(s->region_runs);
  free(s->sym_used);
  free(s->prof);
  free(s->fallback);
  globals_release(s->globals);
  free(s);
}

/* The CPU fall-back: when `device` is a GPU device whose kernel section
 * exists but leaves function `f` out (the compiler placed it on the host,
 * listing why in the "placement" section), *out_why gets a malloc'd
 * sentence saying so. (Host entries among the function's kernels run
 * between the device's: gpu_host_nodes.) */
static dml_status_t host_placement(const dml_rt_model_t *m, const dml_pkg_function_t *f,
                                   const char *device, char **out_why) {
  *out_why = NULL;
  int vk = device && (!strcmp(device, "vulkan") || !strncmp(device, "vulkan:", 7));
  int cu = device && (!strcmp(device, "cuda") || !strncmp(device, "cuda:", 5));
  const dml_kpkg_t *table = vk ? m->kernels_spirv : cu ? m->kernels_cuda : NULL;
  const dml_kpkg_function_t *kf =
      table ? dml_kpkg_find_function(table, dml_rt_fn_index(m, f)) : NULL;
  if (!table || kf) return DML_OK;
  const char *target = vk ? "vulkan" : "cuda";
  /* the placement line "<target>\t<function>\t<why>\n" (untrusted bytes) */
  const dml_pkg_section_t *ps = dml_pkg_find_section(&m->pkg, "placement");
  const char *why = "", *p = ps ? (const char *)ps->data : NULL;
  size_t why_n = 0, left = ps ? (size_t)ps->size : 0;
  size_t tn = strlen(target), fnn = strlen(f->name);
  while (p && left) {
    const char *e = (const char *)memchr(p, '\n', left);
    size_t n = e ? (size_t)(e - p) : left;
    if (n > tn + fnn + 2 && !memcmp(p, target, tn) && p[tn] == '\t' &&
        !memcmp(p + tn + 1, f->name, fnn) && p[tn + 1 + fnn] == '\t') {
      why = p + tn + fnn + 2;
      why_n = n - tn - fnn - 2;
      break;
    }
    if (!e) break;
    left -= n + 1;
    p = e + 1;
  }
  size_t cap = why_n + fnn + 2 * tn + 128;
  char *w = (char *)malloc(cap);
  if (!w) return oom();
  snprintf(w, cap,
           "function '%s' runs on the host (CPU kernels): the package's %s kernels leave "
           "it out%s%.*s",
           f->name, target, why_n ? ": " : "", (int)why_n, why);
  for (char *c = w; *c; c++)
    if ((unsigned char)*c < 0x20) *c = ' '; /* no control bytes from the package */
  *out_why = w;
  return DML_OK;
}

/* 1 when node `i` is held by a host entry of `kf` (may be NULL). */
static int on_host_entry(const dml_kpkg_function_t *kf, uint32_t i) {
  for (uint32_t k = 0; kf && k < kf->n_kernels; k++) {
    const dml_kpkg_kernel_t *K = &kf->kernels[k];
    if (K->kind != DML_KPKG_KIND_HOST) continue;
    for (uint32_t j = 0; j < K->n_nodes; j++)
      if (K->nodes[j] == i) return 1;
  }
  return 0;
}

size_t dml_rt_model_placement(const dml_rt_model_t *m, const char **out_text) {
  const dml_pkg_section_t *ps = dml_pkg_find_section(&m->pkg, "placement");
  *out_text = ps ? (const char *)ps->data : NULL;
  return ps ? (size_t)ps->size : 0;
}

const char *dml_rt_session_fallback(const dml_rt_session_t *s) {
  return s ? s->fallback : NULL;
}

static dml_status_t plan_host_values(dml_rt_session_t *s);

/* 1 when symbol `i` is data-dependent and produced by function `f`. */
static int sym_is_node(const dml_rt_session_t *s, uint32_t i) {
  const dml_pkg_symbol_t *sy = &s->m->graph->symbols[i];
  return sy->origin == DML_PKG_SYMBOL_NODE &&
         &s->m->graph->functions[sy->function] == s->fn;
}

/* Lists the ops without a CPU kernel, or OK. */
static dml_status_t check_cpu_ops(const dml_pkg_function_t *f) {
  dml_status_t st = DML_OK;
  char names[512];
  size_t k = 0;
  names[0] = 0;
  for (uint32_t i = 0; i < f->n_nodes; i++) {
    const dml_pkg_node_t *n = &f->nodes[i];
    if ((dml_op_info(n->op)->flags & DML_OPF_CONTROL_FLOW) || dml_cpu_supports(n->op))
      continue; /* If, Loop: run_if, run_loop */
    int seen = 0;
    for (uint32_t j = 0; j < i && !seen; j++)
      seen = f->nodes[j].op == n->op && !dml_cpu_supports(f->nodes[j].op);
    if (!seen && k < sizeof names)
      k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", k ? ", " : "",
                            n->op_name);
    if (!st) st = dml_status_make(DML_STATUS_UNIMPLEMENTED, "rt.session", "%s", "");
    st = dml_status_detail(st, "node '%s' (%s)", n->name, n->op_name);
  }
  if (!st) return DML_OK;
  dml_status_t r = dml_status_make(DML_STATUS_UNIMPLEMENTED, "rt.session",
                                   "no CPU kernel in this build for: %s", names);
  r = dml_status_detail(r, "%s", dml_status_details(st));
  dml_status_free(st);
  return r;
}

/* New globals for `m`: a writable copy of the weights when a function
 * assigns globals. */
static dml_status_t globals_create(const dml_rt_model_t *m, rt_globals_t **out) {
  rt_globals_t *g = (rt_globals_t *)calloc(1, sizeof(*g));
  if (!g) return oom();
  atomic_init(&g->refs, 1);
  if (m->has_assign && m->weights_size) {
    void *p = NULL;
    if (m->weights_size > SIZE_MAX - 64 ||
        posix_memalign(&p, 64, (size_t)m->weights_size) != 0) {
      free(g);
      return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "rt.session",
                             "cannot allocate %" PRIu64 " bytes for the globals",
                             m->weights_size);
    }
    memcpy(p, m->weights, (size_t)m->weights_size);
    g->data = (uint8_t *)p;
  }
  *out = g;
  return DML_OK;
}

dml_status_t dml_rt_session_create(const dml_rt_model_t *m, const char *device,
                                   dml_rt_session_t **out_session) {
  return dml_rt_session_create_function(m, device, NULL, NULL, out_session);
}

dml_status_t dml_rt_session_create_function(const dml_rt_model_t *m, const char *device,
                                            const char *function,
                                            dml_rt_session_t *share_globals_with,
                                            dml_rt_session_t **out_session) {
  return dml_rt_session_create_in(m, device, function, share_globals_with, NULL, NULL,
                                  out_session);
}

/* 1 when backend b runs on the devices of eager device memory `mem`. */
static int backend_of_mem(const dml_rt_backend_t *b, const dml_rt_devmem_t *mem) {
  return b && mem &&
         ((b == dml_rt_vulkan_backend() && mem == dml_rt_vulkan_devmem()) ||
          (b == dml_rt_cuda_backend() && mem == dml_rt_cuda_devmem()));
}

static dml_status_t create_session(const dml_rt_model_t *m, const char *device,
                                   const char *function,
                                   dml_rt_session_t *share_globals_with,
                                   const dml_rt_devmem_t *mem, void *on_dev,
                                   dml_rt_session_t *dev_of,
                                   dml_rt_session_t **out_session);

dml_status_t dml_rt_session_create_in(const dml_rt_model_t *m, const char *device,
                                      const char *function,
                                      dml_rt_session_t *share_globals_with,
                                      const dml_rt_devmem_t *mem, void *on_dev,
                                      dml_rt_session_t **out_session) {
  return create_session(m, device, function, share_globals_with, mem, on_dev, NULL,
                        out_session);
}

/* dml_rt_session_create_in; `dev_of` NULL, or (an If branch's or Loop
 * body's session) the session on whose device the new one runs when it
 * runs on one (its caller's dev_of: the caller, a sibling region). */
static dml_status_t create_session(const dml_rt_model_t *m, const char *device,
                                   const char *function,
                                   dml_rt_session_t *share_globals_with,
                                   const dml_rt_devmem_t *mem, void *on_dev,
                                   dml_rt_session_t *dev_of,
                                   dml_rt_session_t **out_session) {
  DML_RETURN_IF_ERROR(dml_rt_device_check_built("rt.session", device));
  const dml_rt_backend_t *backend = NULL;
  if (device && (!strcmp(device, "vulkan") || !strncmp(device, "vulkan:", 7)))
    backend = dml_rt_vulkan_backend();
  if (device && (!strcmp(device, "cuda") || !strncmp(device, "cuda:", 5)))
    backend = dml_rt_cuda_backend();
  if (on_dev && !backend_of_mem(backend, mem))
    return dml_status_make(DML_STATUS_FAILED_PRECONDITION, "rt.session",
                           "device '%s' is not a device of the eager device memory %s",
                           device ? device : "cpu", mem ? mem->name : "(none)");
  /* "kind:N": N a device index */
  const char *colon = device ? strchr(device, ':') : NULL;
  if (colon && (!colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1)))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "rt.session",
                           "device '%s': the index after ':' must be a number (e.g. "
                           "%.*s:0; see dmlc devices)",
                           device, (int)(colon - device), device);
  const dml_pkg_graph_t *gr = m->graph;
  const dml_pkg_function_t *f = m->fn;
  if (function) {
    f = NULL;
    for (uint32_t i = 0; i < gr->n_functions && !f; i++)
      if (strcmp(gr->functions[i].name, function) == 0) f = &gr->functions[i];
    if (!f) {
      char list[512];
      size_t k = 0;
      list[0] = 0;
      for (uint32_t i = 0; i < gr->n_functions && k < sizeof list; i++)
        k += (size_t)snprintf(list + k, sizeof list - k, "%s'%s'", i ? ", " : "",
                              gr->functions[i].name);
      return dml_status_make(DML_STATUS_NOT_FOUND, "rt.session",
                             "the package has no function '%s' (functions: %s)", function,
                             list);
    }
  }
  if (share_globals_with && share_globals_with->m != m)
    return dml_status_make(DML_STATUS_FAILED_PRECONDITION, "rt.session",
                           "share_globals_with is a session of another model");
  if (share_globals_with && m->has_assign && share_globals_with->backend != backend)
    return dml_status_make(
        DML_STATUS_FAILED_PRECONDITION, "rt.session",
        "share_globals_with runs on %s, this session on '%s': sessions sharing a "
        "training package's globals run on one device",
        dml_rt_session_device(share_globals_with), device ? device : "cpu");
  char *fallback = NULL;
  if (backend) {
    DML_RETURN_IF_ERROR(host_placement(m, f, device, &fallback));
    if (fallback) backend = NULL; /* the CPU fall-back */
  }
  dml_status_t cst = check_cpu_ops(f);
  if (cst) {
    free(fallback);
    return cst;
  }
  rt_globals_t *globals = NULL;
  if (share_globals_with) {
    globals = share_globals_with->globals;
    atomic_fetch_add(&globals->refs, 1);
  } else {
    dml_status_t gst = globals_create(m, &globals);
    if (gst) {
      free(fallback);
      return gst;
    }
  }
  dml_rt_session_t *s = (dml_rt_session_t *)calloc(1, sizeof(*s));
  if (!s) {
    free(fallback);
    globals_release(globals);
    return oom();
  }
  s->m = m;
  s->fallback = fallback;
  s->globals = globals;
  s->weights = globals->data ? globals->data : m->weights;
  s->fn = f;
  s->n_symbols = m->graph->n_symbols;
  size_t n_io = 0;
  for (uint32_t i = 0; i < f->n_nodes; i++)
    n_io += (size_t)f->nodes[i].n_inputs + f->nodes[i].n_outputs;
  void *scratch = NULL;
  /* calloc: zeroed pages come lazily from the OS, so a large arena costs
   * nothing until used; aligned to 64 by hand. */
  size_t ab = (size_t)f->arena_bytes;
  s->arena_alloc = ab <= SIZE_MAX - 64 ? calloc(1, ab + 64) : NULL;
  if (s->arena_alloc)
    s->arena = (uint8_t *)(((uintptr_t)s->arena_alloc + 63) & ~(uintptr_t)63);
  s->scratch_bytes = (size_t)m->fn_scratch[dml_rt_fn_index(m, f)];
  if (s->scratch_bytes && posix_memalign(&scratch, 64, s->scratch_bytes) != 0)
    scratch = NULL;
  s->scratch = scratch;
  s->vals = (dml_tensor_t *)calloc(f->n_values ? f->n_values : 1, sizeof(dml_tensor_t));
  s->io = (dml_tensor_t *)calloc(n_io ? n_io : 1, sizeof(dml_tensor_t));
  s->calls =
      (dml_cpu_call_t *)calloc(f->n_nodes ? f->n_nodes : 1, sizeof(dml_cpu_call_t));
  s->bound = (uint8_t *)calloc(f->n_inputs ? f->n_inputs : 1, 1);
  s->in_dims = calloc(f->n_inputs ? f->n_inputs : 1, sizeof(*s->in_dims));
  s->sym = (int64_t *)calloc(s->n_symbols ? s->n_symbols : 1, sizeof(int64_t));
  s->node_produces = (uint8_t *)calloc(f->n_nodes ? f->n_nodes : 1, 1);
  s->value_dynamic = (uint8_t *)calloc(f->n_values ? f->n_values : 1, 1);
  s->out_cap = (uint64_t *)calloc(n_io ? n_io : 1, sizeof(uint64_t));
  s->strheap = dml_cpu_strheap_create();
  s->in_heap = (dml_cpu_strheap_t **)calloc(f->n_inputs ? f->n_inputs : 1,
                                            sizeof(dml_cpu_strheap_t *));
  s->in_heap_old = (dml_cpu_strheap_t **)calloc(f->n_inputs ? f->n_inputs : 1,
                                                sizeof(dml_cpu_strheap_t *));
  s->dev_in =
      (dml_rt_tensor_t *)calloc(f->n_inputs ? f->n_inputs : 1, sizeof(dml_rt_tensor_t));
  s->dev_in_buf = (void **)calloc(f->n_inputs ? f->n_inputs : 1, sizeof(void *));
  s->dev_in_off = (uint64_t *)calloc(f->n_inputs ? f->n_inputs : 1, sizeof(uint64_t));
  s->dev_raw = (uint8_t *)calloc(f->n_inputs ? f->n_inputs : 1, 1);
  if (!s->dev_raw || !s->dev_in || !s->dev_in_buf || !s->dev_in_off || !s->out_cap ||
      !s->strheap || !s->in_heap || !s->in_heap_old || !s->arena ||
      (s->scratch_bytes && !s->scratch) || !s->vals || !s->io || !s->calls || !s->bound ||
      !s->in_dims || !s->sym || !s->node_produces || !s->value_dynamic) {
    dml_rt_session_release(s);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "rt.session",
                           "cannot allocate the %zu-byte arena and %zu-byte scratch", ab,
                           (size_t)m->fn_scratch[dml_rt_fn_index(m, f)]);
  }
  for (uint32_t i = 0; i < s->n_symbols; i++)
    if (sym_is_node(s, i)) s->node_produces[m->graph->symbols[i].node] = 1;
  s->sym_used = (uint8_t *)calloc(s->n_symbols ? s->n_symbols : 1, 1);
  if (!s->sym_used) {
    dml_rt_session_release(s);
    return oom();
  }
  for (uint32_t i = 0; i < f->n_values; i++)
    for (int32_t d = 0; d < f->values[i].type.rank; d++)
      if (f->values[i].type.dims[d].sym >= 0)
        s->sym_used[f->values[i].type.dims[d].sym] = 1;
  for (uint32_t i = s->n_symbols; i-- > 0;) { /* a derived symbol's sources precede it */
    const dml_pkg_symbol_t *sy = &m->graph->symbols[i];
    if (!s->sym_used[i] || sy->origin != DML_PKG_SYMBOL_DERIVED) continue;
    s->sym_used[sy->src[0]] = 1;
    if (sy->src[1] >= 0) s->sym_used[sy->src[1]] = 1;
  }
  for (uint32_t i = 0; i < f->n_values; i++)
    for (int32_t d = 0; d < f->values[i].type.rank; d++)
      if (f->values[i].type.dims[d].sym >= 0 &&
          m->graph->symbols[f->values[i].type.dims[d].sym].origin == DML_PKG_SYMBOL_NODE)
        s->value_dynamic[i] = 1;
  /* Value views: data fixed for the session's life; dims set per run. */
  for (uint32_t i = 0; i < f->n_values; i++) {
    const dml_pkg_value_t *v = &f->values[i];
    dml_tensor_t *t = &s->vals[i];
    t->dtype = v->type.dtype;
    t->rank = v->type.rank;
    if (v->storage == DML_PKG_STORAGE_CONST) {
      /* Read-only except a global that an Assign writes (cpu_state.c). */
      t->data = v->type.dtype == DML_DTYPE_STRING
                    ? (void *)dml_rt_model_string_const(m, v)
                    : (void *)(s->weights + v->offset);
      for (int32_t d = 0; d < v->type.rank; d++) t->dims[d] = v->type.dims[d].value;
    } else {
      t->data = s->arena + v->offset;
    }
  }
  dml_tensor_t *io = s->io;
  for (uint32_t i = 0; i < f->n_nodes; i++) {
    const dml_pkg_node_t *n = &f->nodes[i];
    dml_cpu_call_t *c = &s->calls[i];
    c->op = n->op;
    c->node_name = n->name;
    c->inputs = io;
    c->n_inputs = n->n_inputs;
    c->outputs = io + n->n_inputs;
    c->n_outputs = n->n_outputs;
    c->attrs = n->attrs;
    c->n_attrs = n->n_attrs;
    c->scratch = s->scratch;
    c->scratch_bytes = s->scratch_bytes;
    c->strings = s->strheap;
    c->rng_stream = i;
    /* Outputs whose dims the kernel computes from input values. */
    if (s->node_produces[i]) {
      for (uint32_t j = 0; j < n->n_outputs; j++)
        s->out_cap[(size_t)(io - s->io) + n->n_inputs + j] =
            n->outputs[j] == DML_PKG_NO_VALUE ? 0 : f->values[n->outputs[j]].bytes;
      c->output_capacity = s->out_cap + (io - s->io) + n->n_inputs;
    }
    io += n->n_inputs + n->n_outputs;
  }
  for (uint32_t i = 0; i < f->n_nodes; i++)
    if (f->nodes[i].op == DML_OP_ASSIGN) s->assigns = 1;
  if (!backend && !globals->data) {
    dml_status_t fst = dml_rt_cpu_fuse_plan(f, s->weights, &s->fuse);
    if (fst) {
      dml_rt_session_release(s);
      return fst;
    }
    if (s->fuse && s->fuse->extra_bytes &&
        (s->fuse->extra_bytes > SIZE_MAX ||
         posix_memalign(&s->fuse_extra, 64, (size_t)s->fuse->extra_bytes) != 0)) {
      s->fuse_extra = NULL;
      dml_rt_session_release(s);
      return oom();
    }
    for (uint32_t i = 0; s->fuse && i < f->n_values; i++) {
      if (s->fuse->value_offset[i])
        s->vals[i].data = s->arena + s->fuse->value_offset[i] - 1;
      if (s->fuse->value_extra[i])
        s->vals[i].data = (uint8_t *)s->fuse_extra + s->fuse->value_extra[i] - 1;
    }
  }
  /* nodes in the host entries of the device's kernels (the CPU fall-back)
   * run on the host: strings, If and Loop (the host reads cond / the trip
   * count and runs their branch and body sessions, on this device where the
   * package has kernels for them) and dims decided from data allowed there */
  const dml_kpkg_function_t *hkf =
      backend && backend == dml_rt_vulkan_backend() && m->kernels_spirv
          ? dml_kpkg_find_function(m->kernels_spirv, dml_rt_fn_index(m, f))
      : backend && backend == dml_rt_cuda_backend() && m->kernels_cuda
          ? dml_kpkg_find_function(m->kernels_cuda, dml_rt_fn_index(m, f))
          : NULL;
  if (hkf) {
    if (!(s->on_host = (uint8_t *)calloc(f->n_nodes ? f->n_nodes : 1, 1))) {
      dml_rt_session_release(s);
      return oom();
    }
    for (uint32_t i = 0; i < f->n_nodes; i++)
      s->on_host[i] = (uint8_t)on_host_entry(hkf, i);
  }
  for (uint32_t i = 0; backend && i < f->n_nodes; i++) {
    const dml_pkg_node_t *n = &f->nodes[i];
    if ((n->op != DML_OP_IF && n->op != DML_OP_LOOP) || (s->on_host && s->on_host[i]))
      continue;
    dml_rt_session_release(s);
    return dml_status_detail(
        dml_status_make(DML_STATUS_UNIMPLEMENTED, "rt.session",
                        "node '%s' (%s) %s at run time, which only the CPU executor "
                        "does; run this model on device cpu",
                        n->name, n->op_name,
                        n->op == DML_OP_LOOP
                            ? "runs its body a number of times known only"
                            : "chooses its branch"),
        "device '%s'", device);
  }
  for (uint32_t i = 0; backend && i < f->n_nodes; i++) {
    const dml_pkg_node_t *n = &f->nodes[i];
    if (s->on_host && s->on_host[i]) continue;
    for (uint32_t j = 0; j < n->n_inputs + n->n_outputs; j++) {
      uint32_t v = j < n->n_inputs ? n->inputs[j] : n->outputs[j - n->n_inputs];
      if (v == DML_PKG_NO_VALUE || f->values[v].type.dtype != DML_DTYPE_STRING) continue;
      dml_rt_session_release(s);
      return dml_status_detail(
          dml_status_make(DML_STATUS_UNIMPLEMENTED, "rt.session",
                          "node '%s' (%s) uses string tensors, which only the CPU runs; "
                          "run this model on device cpu",
                          n->name, n->op_name),
          "device '%s'", device);
    }
  }
  if (backend) {
    dml_status_t hst = plan_host_values(s);
    if (hst) {
      dml_rt_session_release(s);
      return hst;
    }
    /* A training package's sessions share the device copy of the globals;
     * an If branch's or Loop body's session uses its caller's device and
     * device copy of the weights (dev_of). */
    void *share = dev_of && dev_of->backend == backend ? dev_of->backend_state
                  : share_globals_with && m->has_assign
                      ? share_globals_with->backend_state
                      : NULL;
    dml_status_t st =
        backend->open(m, f, device, s->weights, share, on_dev, &s->backend_state);
    if (st) {
      dml_rt_session_release(s);
      return dml_status_annotate(st, "creating a session on '%s'", device);
    }
    s->backend = backend;
    s->on_device = on_dev != NULL;
  }
  s->dev_of = backend ? s : dev_of;
  for (uint32_t i = 0; i < f->n_nodes; i++) {
    if (f->nodes[i].op != DML_OP_IF && f->nodes[i].op != DML_OP_LOOP) continue;
    const dml_pkg_node_t *n = &f->nodes[i];
    int loop = n->op == DML_OP_LOOP;
    if (!s->branch && (!(s->branch = (dml_rt_session_t **)calloc(2 * (size_t)f->n_nodes,
                                                                 sizeof(*s->branch))) ||
                       !(s->region_runs = (uint64_t *)calloc(2 * (size_t)f->n_nodes,
                                                             sizeof(*s->region_runs))))) {
      dml_rt_session_release(s);
      return oom();
    }
    for (int b = 0; b < (loop ? 1 : 2); b++) {
      const char *an = loop ? "body_function" : b ? "else_function" : "then_function";
      /* A branch or body of a session asked for a GPU device runs there
       * when the package has kernels for its function, even when this
       * function is the CPU fall-back's whole (an If or Loop alone, no node
       * left for the device); else with the CPU kernels (its own
       * dml_rt_session_fallback says why). On the device it uses this
       * session's VkDevice / CUDA context and device copy of the weights
       * (dev_of: this session, else the first region on the device). */
      const char *fname = dml_attr_string(n->attrs, n->n_attrs, an, NULL);
      dml_status_t bst =
          fname ? create_session(m, device, fname, s, NULL, NULL, s->dev_of,
                                 &s->branch[2 * i + b])
                : dml_status_make(DML_STATUS_INVALID_ARGUMENT, "rt.session",
                                  "node '%s' (%s) has no string attribute %s", n->name,
                                  n->op_name, an);
      if (bst) {
        dml_rt_session_release(s);
        return dml_status_annotate(bst, "creating the session of %s of node '%s' (%s)",
                                   an, n->name, n->op_name);
      }
      dml_rt_session_t *br = s->branch[2 * i + b];
      if (!s->dev_of && br->backend) s->dev_of = br;
      br->captures = 1;
      /* string results of a branch live as long as the parent's run */
      if (!br->strheap_borrowed) dml_cpu_strheap_release(br->strheap);
      br->strheap = s->strheap;
      br->strheap_borrowed = 1;
      for (uint32_t k = 0; k < br->fn->n_nodes; k++) br->calls[k].strings = s->strheap;
    }
    /* captures and results handed over on the device (the backend's plan
     * of what crosses the host entry leaves them there) */
    if (s->backend && hkf && s->on_host && s->on_host[i] &&
        dml_rt_gpu_region_on_device(m, f, hkf, i)) {
      size_t n_io = 0;
      for (uint32_t q = 0; q < f->n_nodes; q++)
        n_io += (size_t)f->nodes[q].n_inputs + f->nodes[q].n_outputs;
      if (!s->cf_dev && !(s->cf_dev = (uint8_t *)calloc(n_io ? n_io : 1, 1))) {
        dml_rt_session_release(s);
        return oom();
      }
      uint8_t *slot = s->cf_dev + (s->calls[i].inputs - s->io);
      dml_status_t hst =
          dml_rt_gpu_region_handover(m, f, hkf, i, slot, slot + n->n_inputs);
      for (int b = 0; !hst && b < (loop ? 1 : 2); b++) {
        const dml_rt_session_t *br = s->branch[2 * i + b];
        if (br->backend != s->backend || !br->backend->arena_buffer ||
            !br->backend->copy_output || !br->backend->read_output)
          hst = dml_status_make(DML_STATUS_INTERNAL, "rt.session",
                                "node '%s' (%s): region '%s' is not on the session's "
                                "device, which the plan of its hand-over expects",
                                n->name, n->op_name, br->fn->name);
      }
      if (hst) {
        dml_rt_session_release(s);
        return hst;
      }
    }
  }
  *out_session = s;
  return DML_OK;
}

dml_status_t dml_rt_session_device_memory(const dml_rt_session_t *s,
                                          dml_rt_device_memory_t *out) {
  if (!s || !out)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "rt.session",
                           "dml_rt_session_device_memory: %s is NULL",
                           !s ? "the session" : "out");
  memset(out, 0, sizeof *out);
  if (s->backend && s->backend->memory) s->backend->memory(s->backend_state, out);
  return DML_OK;
}

/* ---- inputs ---- */

static const char *hint(const char *sym) {
  return strcmp(sym, "batch") == 0 ? "recompile with --batch-bound"
                                   : "recompile with a larger bound for this symbol "
                                     "(dmlc compile --dim-bound NAME=N)";
}

/* Checks tensor `t` against input `k`'s type; fills vals (symbol values it
 * implies; -1 where it does not fix a symbol). */
static dml_status_t check_input(const dml_rt_session_t *s, uint32_t k,
                                const dml_tensor_t *t, int on_dev, int64_t *vals) {
  const dml_rt_model_t *m = s->m;
  const dml_pkg_value_t *v = &s->fn->values[s->fn->inputs[k]];
  char want[256], got[160];
  type_str(m, &v->type, want, sizeof want);
  if (t->dtype != v->type.dtype)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "rt.session",
                           "input '%s': dtype %s, expected %s", v->name,
                           dml_dtype_name(t->dtype), want);
  if (t->rank != v->type.rank)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "rt.session",
                           "input '%s': rank %d, expected %s", v->name, (int)t->rank,
                           want);
  for (uint32_t i = 0; i < s->n_symbols; i++) vals[i] = -1;
  for (int32_t d = 0; d < t->rank; d++) {
    const dml_dim_t *dim = &v->type.dims[d];
    int64_t x = t->dims[d];
    dml_dims_str(t->dims, t->rank, got, sizeof got);
    if (dim->sym < 0) {
      if (x != dim->value)
        return dml_status_make(
            DML_STATUS_INVALID_ARGUMENT, "rt.session",
            "input '%s': shape %s, expected %s (dim %d must be %" PRId64 ")", v->name,
            got, want, (int)d, dim->value);
      continue;
    }
    const dml_pkg_symbol_t *sy = &m->graph->symbols[dim->sym];
    if (x < 0 || x % dim->value != 0)
      return dml_status_make(
          DML_STATUS_INVALID_ARGUMENT, "rt.session",
          "input '%s': dim %d is %" PRId64 ", not a multiple of %" PRId64
          " (the dim is %" PRId64 "*%s; shape %s, expected %s)",
          v->name, (int)d, x, dim->value, dim->value, sy->name, got, want);
    int64_t sv = x / dim->value;
    if (sv < (s->captures ? 0 : 1))
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "rt.session",
                             "input '%s': %s %" PRId64
                             " is below 1 (shape %s, expected %s)",
                             v->name, sy->name, sv, got, want);
    if (sv > sy->bound && dim->value > 1)
      return dml_status_make(DML_STATUS_OUT_OF_RANGE, "rt.session",
                             "input '%s': %s %" PRId64
                             " exceeds the compiled bound %" PRId64 " (dim %d is %" PRId64
                             " = %" PRId64 "*%s, at most %" PRId64 "); %s",
                             v->name, sy->name, sv, sy->bound, (int)d, x, dim->value,
                             sy->name, dim->value * sy->bound, hint(sy->name));
    if (sv > sy->bound)
      return dml_status_make(DML_STATUS_OUT_OF_RANGE, "rt.session",
                             "input '%s': %s %" PRId64
                             " exceeds the compiled bound %" PRId64 "; %s",
                             v->name, sy->name, sv, sy->bound, hint(sy->name));
    if (vals[dim->sym] >= 0 && vals[dim->sym] != sv)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "rt.session",
                             "input '%s': shape %s gives %s two values (%" PRId64
                             " and %" PRId64 "); expected %s",
                             v->name, got, sy->name, vals[dim->sym], sv, want);
    vals[dim->sym] = sv;
  }
  if (!on_dev && dml_tensor_bytes(t) && !t->data)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "rt.session",
                           "input '%s': data is NULL", v->name);
  return DML_OK;
}

/* dml_rt_session_set_input, or (`view` not the zero handle) the binding of
 * an eager tensor on the session's device, which the session then owns
 * (dml_rt_session_set_input_device; freed on error). */
static dml_status_t set_input(dml_rt_session_t *s, uint32_t index, const dml_tensor_t *t,
                              dml_rt_tensor_t view);

dml_status_t dml_rt_session_set_input(dml_rt_session_t *s, uint32_t index,
                                      const dml_tensor_t *t) {
  return set_input(s, index, t, DML_RT_TENSOR_NONE);
}

dml_status_t dml_rt_session_set_input_device(dml_rt_session_t *s, uint32_t index,
                                             const dml_tensor_t *t,
                                             dml_rt_tensor_t view) {
  dml_status_t st = view.id ? set_input(s, index, t, view)
                            : dml_status_make(DML_STATUS_INVALID_ARGUMENT, "rt.session",
                                              "no tensor (the zero handle)");
  return st;
}

/* Checks t as input `index` and binds it: its bytes copied into the
 * arena, or (on_dev) only its dims recorded. */
static dml_status_t set_input_checked(dml_rt_session_t *s, uint32_t index,
                                      const dml_tensor_t *t, int on_dev);

static dml_status_t set_input(dml_rt_session_t *s, uint32_t index, const dml_tensor_t *t,
                              dml_rt_tensor_t view) {
  if (index < s->fn->n_inputs) dev_in_drop(s, index);
  dml_status_t st = set_input_checked(s, index, t, view.id != 0);
  if (view.id && st) dml_status_free(dml_rt_tensor_free(view));
  if (view.id && !st) s->dev_in[index] = view;
  return st;
}

static dml_status_t set_input_checked(dml_rt_session_t *s, uint32_t index,
                                      const dml_tensor_t *t, int on_dev) {
  const dml_pkg_function_t *f = s->fn;
  if (index >= f->n_inputs)
    return dml_status_make(DML_STATUS_OUT_OF_RANGE, "rt.session",
                           "input index %" PRIu32 " out of range (the model has %" PRIu32
                           ")",
                           index, f->n_inputs);
  if (!t)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "rt.session", "NULL tensor");
  s->bound[index] = 0;
  int64_t *mine = s->sym; /* scratch use: s->sym is recomputed at every run */
  DML_RETURN_IF_ERROR(check_input(s, index, t, on_dev, mine));
  /* Agreement with the other bound inputs. */
  for (uint32_t j = 0; j < f->n_inputs; j++) {
    if (j == index || !s->bound[j]) continue;
    const dml_pkg_value_t *o = &f->values[f->inputs[j]];
    for (int32_t d = 0; d < o->type.rank; d++) {
      const dml_dim_t *dim = &o->type.dims[d];
      if (dim->sym < 0 || mine[dim->sym] < 0) continue;
      int64_t theirs = s->in_dims[j][d] / dim->value;
      if (theirs != mine[dim->sym]) {
        const char *sn = s->m->graph->symbols[dim->sym].name;
        return dml_status_make(
            DML_STATUS_INVALID_ARGUMENT, "rt.session",
            "input '%s' has %s = %" PRId64 " but input '%s' has %s = %" PRId64
            "; bind inputs of one size (dml_rt_session_clear_inputs unbinds "
            "them all)",
            f->values[f->inputs[index]].name, sn, mine[dim->sym], o->name, sn, theirs);
      }
    }
  }
  size_t nb = dml_tensor_bytes(t);
  if (on_dev) {
    /* copied on the device at each run (dml_rt_exec_t.dev_in) */
  } else if (t->dtype == DML_DTYPE_STRING) {
    /* the caller keeps its strings: copy their bytes into this input's heap */
    dml_cpu_strheap_release(s->in_heap_old[index]);
    s->in_heap_old[index] = s->in_heap[index];
    if (!(s->in_heap[index] = dml_cpu_strheap_create())) return oom();
    const dml_str_t *src = (const dml_str_t *)t->data;
    dml_str_t *dst = (dml_str_t *)(s->arena + f->values[f->inputs[index]].offset);
    for (size_t i = 0; i < nb / sizeof(dml_str_t); i++) {
      if (src[i].len && !src[i].data)
        return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "rt.session",
                               "input '%s': string element %zu has length %llu and no "
                               "data",
                               f->values[f->inputs[index]].name, i,
                               (unsigned long long)src[i].len);
      char *p = src[i].len <= SIZE_MAX
                    ? dml_cpu_strheap_alloc(s->in_heap[index], (size_t)src[i].len)
                    : NULL;
      if (!p) return oom();
      if (src[i].len) memcpy(p, src[i].data, (size_t)src[i].len);
      dst[i].data = p;
      dst[i].len = src[i].len;
    }
  } else if (nb) {
    memcpy(s->arena + f->values[f->inputs[index]].offset, t->data, nb);
  }
  memcpy(s->in_dims[index], t->dims, sizeof(s->in_dims[index]));
  s->bound[index] = 1;
  return DML_OK;
}

dml_status_t dml_rt_session_set_input_by_name(dml_rt_session_t *s, const char *name,
                                              const dml_tensor_t *t) {
  int32_t i = dml_rt_session_find_input(s, name ? name : "");
  if (i >= 0) return dml_rt_session_set_input(s, (uint32_t)i, t);
  char list[512];
  size_t k = 0;
  list[0] = 0;
  for (uint32_t j = 0; j < s->fn->n_inputs && k < sizeof list; j++)
    k += (size_t)snprintf(list + k, sizeof list - k, "%s'%s'", j ? ", " : "",
                          s->fn->values[s->fn->inputs[j]].name);
  return dml_status_make(DML_STATUS_NOT_FOUND, "rt.session",
                         "the model has no input named '%s' (inputs: %s)",
                         name ? name : "", list);
}

void dml_rt_session_clear_inputs(dml_rt_session_t *s) {
  memset(s->bound, 0, s->fn->n_inputs ? s->fn->n_inputs : 1);
  for (uint32_t i = 0; i < s->fn->n_inputs; i++) dev_in_drop(s, i);
}

int dml_rt_session_output_on_device_ok(const dml_rt_session_t *s,
                                       const dml_rt_devmem_t *mem, void *dev) {
  return s && backend_of_mem(s->backend, mem) && s->backend->uses_device &&
         s->backend->copy_output && s->backend->uses_device(s->backend_state, dev);
}

int dml_rt_session_input_on_device_ok(const dml_rt_session_t *s, uint32_t index,
                                      const dml_rt_devmem_t *mem, void *dev) {
  if (!dml_rt_session_output_on_device_ok(s, mem, dev) || index >= s->fn->n_inputs ||
      index >= 64)
    return 0;
  /* the host reads the input's data: a dims rule, a host value's node, a
   * node of the CPU fall-back's host entries */
  const dml_pkg_function_t *f = s->fn;
  uint32_t v = f->inputs[index];
  for (uint32_t k = 0; k < f->n_nodes; k++) {
    const dml_pkg_node_t *n = &f->nodes[k];
    int host = (s->host_node && s->host_node[k]) || (s->on_host && s->on_host[k]);
    for (uint32_t j = 0; j < n->n_inputs; j++) {
      if (n->inputs[j] != v) continue;
      if (host || (s->node_produces[k] && dml_cpu_output_dims_reads(n->op, j) > 0))
        return 0;
    }
  }
  return 1;
}

int64_t dml_rt_session_symbol_value(const dml_rt_session_t *s, uint32_t i) {
  if (i >= s->n_symbols) return -1;
  if (s->m->graph->symbols[i].origin == DML_PKG_SYMBOL_NODE)
    return s->ran && sym_is_node(s, i) ? s->sym[i] : -1;
  const dml_pkg_symbol_t *sy = &s->m->graph->symbols[i];
  if (sy->origin == DML_PKG_SYMBOL_DERIVED) {
    int64_t a = dml_rt_session_symbol_value(s, (uint32_t)sy->src[0]), b = 1, v = -1;
    if (sy->src[1] >= 0) b = dml_rt_session_symbol_value(s, (uint32_t)sy->src[1]);
    if (a < 0 || b < 0 || !dml_sym_derived_eval(sy->mul, sy->add, sy->div, a, b, &v))
      return -1;
    return v;
  }
  for (uint32_t j = 0; j < s->fn->n_inputs; j++) {
    if (!s->bound[j]) continue;
    const dml_pkg_value_t *v = &s->fn->values[s->fn->inputs[j]];
    for (int32_t d = 0; d < v->type.rank; d++)
      if (v->type.dims[d].sym == (int32_t)i)
        return s->in_dims[j][d] / v->type.dims[d].value;
  }
  return -1;
}

/* ---- run ---- */

/* Sets every derived symbol from its sources (set before it, in symbol
 * order). OUT_OF_RANGE when an input is too small for the model (a derived
 * extent below 1, e.g. a Conv window larger than the padded input) or the
 * formula leaves its bound (a corrupt package). */
static dml_status_t derive_symbols(dml_rt_session_t *s) {
  const dml_pkg_graph_t *g = s->m->graph;
  for (uint32_t i = 0; i < s->n_symbols; i++) {
    const dml_pkg_symbol_t *sy = &g->symbols[i];
    if (sy->origin != DML_PKG_SYMBOL_DERIVED) continue;
    int64_t a = s->sym[sy->src[0]], b = sy->src[1] >= 0 ? s->sym[sy->src[1]] : 1, v = 0;
    /* Only the symbols this function's values use: another function's (an
     * If's branch) may come from symbols this one does not set, or be
     * below 1 for inputs that only the untaken branch could not take. */
    if (!s->sym_used[i]) continue;
    if (!dml_sym_derived_eval(sy->mul, sy->add, sy->div, a, b, &v) || v < 1 ||
        v > sy->bound) {
      dml_status_t st = dml_status_make(
          DML_STATUS_OUT_OF_RANGE, "rt.session",
          "the input sizes give the derived extent %s = %" PRId64
          " (%s): an input is too small for the model (an extent below 1: a "
          "window larger than its padded input)",
          sy->name, v, v > sy->bound ? "above its bound" : "below 1");
      st = dml_status_detail(st, "%s = %" PRId64, g->symbols[sy->src[0]].name, a);
      if (sy->src[1] >= 0)
        st = dml_status_detail(st, "%s = %" PRId64, g->symbols[sy->src[1]].name, b);
      return st;
    }
    s->sym[i] = v;
  }
  return DML_OK;
}

/* Before node `k` runs (not a producer: its kernel checks its own
 * capacity): each output whose dims use data-dependent symbols fits the
 * bytes planned for it, which may be below its size at the bounds (dmlc
 * compile --dynamic-max-elements). */
static dml_status_t fits_plan(const dml_rt_session_t *s, uint32_t k) {
  const dml_pkg_node_t *n = &s->fn->nodes[k];
  for (uint32_t j = 0; j < n->n_outputs; j++) {
    uint32_t i = n->outputs[j];
    if (i == DML_PKG_NO_VALUE || !s->value_dynamic[i]) continue;
    const dml_pkg_value_t *v = &s->fn->values[i];
    size_t b = dml_tensor_bytes(&s->vals[i]);
    if (b != SIZE_MAX && b <= v->bytes) continue;
    char got[160];
    dml_dims_str(s->vals[i].dims, s->vals[i].rank, got, sizeof got);
    return dml_status_make(DML_STATUS_OUT_OF_RANGE, "rt.run",
                           "node #%" PRIu32
                           " '%s' (%s): output '%s' of shape %s needs %zu "
                           "bytes, above the %" PRIu64
                           " planned; recompile with a larger --dynamic-max-elements",
                           k, n->name, n->op_name, v->name, got, b, v->bytes);
  }
  return DML_OK;
}

/* Sets the symbols node `k` produces, each from its extent: on the host,
 * the dims of k's outputs that its kernel wrote (`words` NULL), or the
 * dims slot's words its kernel counted on the device; then re-evaluates
 * the dims of every value using such a symbol. Errors: INTERNAL for an
 * extent outside 0..the symbol's bound. */
static dml_status_t set_produced(dml_rt_session_t *s, uint32_t k, const uint32_t *words) {
  const dml_pkg_function_t *f = s->fn;
  const dml_pkg_node_t *n = &f->nodes[k];
  for (uint32_t i = 0; i < s->n_symbols && (!words || i < DML_KPKG_MAX_SYMBOLS); i++) {
    const dml_pkg_symbol_t *sy = &s->m->graph->symbols[i];
    if (!sym_is_node(s, i) || sy->node != k) continue;
    int64_t x = words ? (int64_t)words[i] : s->calls[k].outputs[sy->output].dims[sy->dim];
    if (x < 0 || x > sy->bound)
      return dml_status_make(DML_STATUS_INTERNAL, "rt.run",
                             "node #%" PRIu32 " '%s' (%s) %s extent %" PRId64
                             " for '%s'%s, outside 0..%" PRId64,
                             k, n->name, n->op_name, words ? "counted" : "wrote", x,
                             sy->name, words ? " on the device" : "", sy->bound);
    s->sym[i] = x;
  }
  for (uint32_t v = 0; v < f->n_values; v++)
    if (s->value_dynamic[v])
      DML_RETURN_IF_ERROR(
          dml_type_eval_dims(&f->values[v].type, s->sym, s->n_symbols, s->vals[v].dims));
  return DML_OK;
}

/* After node `k`, which produces data-dependent symbols, ran: reads the
 * extents its kernel wrote (dml_cpu.h: only shrinking), sets the symbols,
 * and re-evaluates the dims of every value that uses such a symbol. */
static dml_status_t take_produced_dims(dml_rt_session_t *s, uint32_t k) {
  const dml_pkg_function_t *f = s->fn;
  const dml_pkg_node_t *n = &f->nodes[k];
  DML_RETURN_IF_ERROR(set_produced(s, k, NULL));
  /* The dims the kernel wrote are the dims its outputs' types give. */
  for (uint32_t j = 0; j < n->n_outputs; j++) {
    const dml_tensor_t *w = &s->calls[k].outputs[j];
    if (n->outputs[j] == DML_PKG_NO_VALUE || w->dtype == DML_DTYPE_INVALID) continue;
    if (memcmp(w->dims, s->vals[n->outputs[j]].dims, sizeof(int64_t) * (size_t)w->rank))
      return dml_status_make(DML_STATUS_INTERNAL, "rt.run",
                             "node #%" PRIu32 " '%s' (%s) wrote dims for output %" PRIu32
                             " that its type does not give",
                             k, n->name, n->op_name, j);
  }
  return DML_OK;
}

/* 1 when the host holds value `v`'s data before a device run: a constant
 * (the weights) or an input of the function (bound into the host arena). */
static int host_holds(const dml_rt_session_t *s, uint32_t v) {
  dml_pkg_storage_t st = s->fn->values[v].storage;
  return st == DML_PKG_STORAGE_CONST || st == DML_PKG_STORAGE_INPUT;
}

/* GPU sessions: the nodes the host runs before each device run (docs/
 * kernels.md "Run-time dims"): the producers, back to the function's inputs
 * and constants, of every shape value a dims rule reads that the host does
 * not hold but can compute (dml_pkg_host_value: small static values such as
 * HannWindow's expansion `Range(0, Cast(size), 1)`), with a region of
 * host_buf for each of their outputs. The device computes these values too,
 * for its kernels; the host's copies only feed the dims rules. */
static dml_status_t plan_host_values(dml_rt_session_t *s) {
  const dml_pkg_function_t *f = s->fn;
  uint8_t *need = (uint8_t *)calloc(f->n_values ? f->n_values : 1, 1);
  s->host_node = (uint8_t *)calloc(f->n_nodes ? f->n_nodes : 1, 1);
  s->host_off = (uint64_t *)calloc(f->n_values ? f->n_values : 1, sizeof(uint64_t));
  if (!need || !s->host_node || !s->host_off) {
    free(need);
    return oom();
  }
  int any = 0;
  for (uint32_t k = 0; k < f->n_nodes; k++) {
    const dml_pkg_node_t *n = &f->nodes[k];
    if (!s->node_produces[k]) continue;
    for (uint32_t j = 0; j < n->n_inputs; j++) {
      uint32_t v = n->inputs[j];
      if (v != DML_PKG_NO_VALUE && dml_cpu_output_dims_reads(n->op, j) > 0 &&
          !host_holds(s, v) && dml_pkg_host_value(f, v))
        need[v] = any = 1;
    }
  }
  uint64_t total = 0;
  for (uint32_t k = f->n_nodes; any && k-- > 0;) {
    const dml_pkg_node_t *n = &f->nodes[k];
    int used = 0;
    for (uint32_t j = 0; j < n->n_outputs; j++)
      if (n->outputs[j] != DML_PKG_NO_VALUE && need[n->outputs[j]]) used = 1;
    if (!used) continue;
    s->host_node[k] = 1;
    for (uint32_t j = 0; j < n->n_inputs; j++)
      if (n->inputs[j] != DML_PKG_NO_VALUE && !host_holds(s, n->inputs[j]))
        need[n->inputs[j]] = 1;
    for (uint32_t j = 0; j < n->n_outputs; j++) {
      if (n->outputs[j] == DML_PKG_NO_VALUE) continue;
      total = (total + 63) & ~(uint64_t)63;
      s->host_off[n->outputs[j]] = total + 1;
      total += f->values[n->outputs[j]].bytes;
    }
  }
  free(need);
  if (!total) return DML_OK;
  s->host_buf = (uint8_t *)aligned_alloc(64, (size_t)((total + 63) & ~(uint64_t)63));
  if (!s->host_buf) return oom();
  return DML_OK;
}

/* Value `v` as the host sees it before a device run: its own tensor, with
 * the data in host_buf when a host node computes it. */
static dml_tensor_t host_view(const dml_rt_session_t *s, uint32_t v) {
  dml_tensor_t t = s->vals[v];
  if (s->host_off[v]) t.data = s->host_buf + (s->host_off[v] - 1);
  return t;
}

/* Sets the inputs of node k's CPU call: an absent one zeroed, the others
 * the values' tensors (host_view's when `host`). */
static void call_inputs(dml_rt_session_t *s, uint32_t k, int host) {
  const dml_pkg_node_t *n = &s->fn->nodes[k];
  dml_tensor_t *io = (dml_tensor_t *)s->calls[k].inputs;
  for (uint32_t j = 0; j < n->n_inputs; j++) {
    if (n->inputs[j] == DML_PKG_NO_VALUE)
      memset(&io[j], 0, sizeof io[j]);
    else
      io[j] = host ? host_view(s, n->inputs[j]) : s->vals[n->inputs[j]];
  }
}

/* Runs host node `k` (plan_host_values) with its CPU kernel into host_buf. */
static dml_status_t run_on_host(dml_rt_session_t *s, uint32_t k) {
  const dml_pkg_node_t *n = &s->fn->nodes[k];
  dml_cpu_call_t *c = &s->calls[k];
  call_inputs(s, k, 1);
  for (uint32_t j = 0; j < n->n_outputs; j++) {
    if (n->outputs[j] == DML_PKG_NO_VALUE)
      memset(&c->outputs[j], 0, sizeof c->outputs[j]);
    else
      c->outputs[j] = host_view(s, n->outputs[j]);
  }
  dml_status_t st = dml_cpu_run(c);
  if (st)
    return dml_status_annotate(
        st, "computing shape value(s) of node #%" PRIu32 " '%s' (%s) of '%s' on the host",
        k, n->name, n->op_name, s->fn->name);
  return DML_OK;
}

/* GPU sessions (docs/kernels.md "Run-time dims"): the data-dependent
 * symbols of the function, computed on the host before the device runs,
 * from the shape rules of dml_cpu_output_dims() (the CPU's own), for each
 * producer in execution order from node s->gpu_next on. A shape input must
 * be a constant, an input of the function (the host has it before the
 * run) or a value the host computes from those first (plan_host_values:
 * those nodes run here, in execution order, with the CPU kernels); one
 * only the device computes is UNIMPLEMENTED, naming the node and the
 * value. Every value whose dims use such symbols must fit
 * the bytes planned for it (fits_plan), since the kernels write it at its
 * actual size. Stops at a node whose kernel counts its dims on the device
 * (docs/kernels.md "Data-dependent output sizes"): gpu_produced continues
 * once the backend has read them back. */
static dml_status_t gpu_value_dims(dml_rt_session_t *s) {
  const dml_pkg_function_t *f = s->fn;
  for (uint32_t k = s->gpu_next; k < f->n_nodes; k++, s->gpu_next = k) {
    const dml_pkg_node_t *n = &f->nodes[k];
    if (s->node_produces[k] && dml_rt_node_dims_on_device(s->m, f, k)) return DML_OK;
    /* a node of a host entry deciding dims from data: gpu_host_nodes runs
     * it and continues from there */
    if (s->node_produces[k] && s->on_host && s->on_host[k]) return DML_OK;
    if (s->host_node[k]) DML_RETURN_IF_ERROR(run_on_host(s, k));
    if (!s->node_produces[k]) {
      DML_RETURN_IF_ERROR(fits_plan(s, k));
      continue;
    }
    dml_cpu_call_t *c = &s->calls[k];
    dml_tensor_t *io = (dml_tensor_t *)c->inputs;
    for (uint32_t j = 0; j < n->n_inputs; j++) {
      if (n->inputs[j] == DML_PKG_NO_VALUE) {
        memset(&io[j], 0, sizeof io[j]);
        continue;
      }
      io[j] = host_view(s, n->inputs[j]);
      if (dml_cpu_output_dims_reads(n->op, j) != 0 && !host_holds(s, n->inputs[j]) &&
          !s->host_off[n->inputs[j]])
        return dml_status_make(
            DML_STATUS_UNIMPLEMENTED, "rt.run",
            "node #%" PRIu32
            " '%s' (%s): its output dims depend on the values of '%s', "
            "which the device computes during the run; GPU sessions take such shape "
            "values only from the function's inputs or constants, or small static "
            "values the host computes from those (the cpu device computes them)",
            k, n->name, n->op_name, f->values[n->inputs[j]].name);
    }
    for (uint32_t j = 0; j < n->n_outputs; j++) c->outputs[j] = s->vals[n->outputs[j]];
    dml_status_t st = dml_cpu_output_dims(c);
    if (st)
      return dml_status_annotate(
          st, "computing the dims of node #%" PRIu32 " '%s' (%s) of '%s'", k, n->name,
          n->op_name, f->name);
    DML_RETURN_IF_ERROR(take_produced_dims(s, k));
  }
  s->gpu_next = f->n_nodes;
  return DML_OK;
}

/* The backend's report (dml_rt_exec_t.produced) after the kernel holding
 * `nodes` ran: each node of dml_rt_node_dims_on_device sets its symbols
 * from the dims slot's words (within 0..bound, else INTERNAL), the dims of
 * every value using such symbols are re-evaluated, its outputs must fit the
 * bytes planned for them (its kernel stored only what fits: OUT_OF_RANGE
 * as on the CPU otherwise), and the nodes up to the next such node are
 * taken on the host (gpu_value_dims). */
static dml_status_t gpu_produced(void *ctx, const uint32_t *nodes, uint32_t n_nodes,
                                 const uint32_t *words) {
  dml_rt_session_t *s = (dml_rt_session_t *)ctx;
  const dml_pkg_function_t *f = s->fn;
  for (uint32_t j = 0; j < n_nodes; j++) {
    uint32_t k = nodes[j];
    if (k >= f->n_nodes || !s->node_produces[k] ||
        !dml_rt_node_dims_on_device(s->m, f, k))
      continue;
    const dml_pkg_node_t *n = &f->nodes[k];
    if (k != s->gpu_next)
      return dml_status_make(DML_STATUS_INTERNAL, "rt.run",
                             "node #%" PRIu32 " '%s' (%s) reported its dims out of order",
                             k, n->name, n->op_name);
    DML_RETURN_IF_ERROR(set_produced(s, k, words));
    DML_RETURN_IF_ERROR(fits_plan(s, k));
    s->gpu_next = k + 1;
    DML_RETURN_IF_ERROR(gpu_value_dims(s));
  }
  return DML_OK;
}

static dml_status_t run_if(dml_rt_session_t *s, uint32_t k);
static dml_status_t run_loop(dml_rt_session_t *s, uint32_t k);
static dml_rt_exec_t session_exec(dml_rt_session_t *s);

/* The backend's host entries (dml_rt_exec_t.host, the CPU fall-back):
 * runs `nodes` with the CPU kernels on the host arena, as the CPU executor
 * does (views planned in place have nothing to run): If and Loop with
 * their branches and bodies on the CPU; a node deciding dims from data
 * sets its symbols (take_produced_dims), and the dims of the nodes after
 * it are taken up to the next such node (gpu_value_dims), before the
 * device's next segment is recorded with them. */
static dml_status_t gpu_host_nodes(void *ctx, const uint32_t *nodes, uint32_t n_nodes) {
  dml_rt_session_t *s = (dml_rt_session_t *)ctx;
  const dml_pkg_function_t *f = s->fn;
  for (uint32_t q = 0; q < n_nodes; q++) {
    uint32_t k = nodes[q];
    if (k >= f->n_nodes)
      return dml_status_make(DML_STATUS_DATA_LOSS, "rt.run", "node %u", k);
    const dml_pkg_node_t *n = &f->nodes[k];
    int produces = s->node_produces[k];
    if (produces && k != s->gpu_next)
      return dml_status_make(DML_STATUS_INTERNAL, "rt.run",
                             "node #%" PRIu32
                             " '%s' (%s) decides dims on the host out of "
                             "order (the dims were taken up to node #%" PRIu32 ")",
                             k, n->name, n->op_name, s->gpu_next);
    dml_cpu_call_t *c = &s->calls[k];
    call_inputs(s, k, 0);
    for (uint32_t j = 0; j < n->n_outputs; j++) c->outputs[j] = s->vals[n->outputs[j]];
    if ((dml_op_info(n->op)->flags & DML_OPF_VIEW) && n->n_inputs && !produces &&
        c->inputs[0].data == c->outputs[0].data)
      continue;
    if (!produces) DML_RETURN_IF_ERROR(fits_plan(s, k));
    dml_status_t st = n->op == DML_OP_IF     ? run_if(s, k)
                      : n->op == DML_OP_LOOP ? run_loop(s, k)
                                             : dml_cpu_run(c);
    if (st)
      return dml_status_annotate(
          st, "running node #%" PRIu32 " '%s' (%s) of '%s' on the host", k, n->name,
          n->op_name, f->name);
    if (produces) {
      DML_RETURN_IF_ERROR(take_produced_dims(s, k));
      s->gpu_next = k + 1;
      DML_RETURN_IF_ERROR(gpu_value_dims(s));
    }
  }
  return DML_OK;
}

/* Binds input j of region session b to the bytes of a value on b's device
 * at byte `off` of buffer `buf` (a backend's arena_buffer: b's own, or its
 * caller's), with t's dtype and dims (t->data unused): copied on the
 * device into the input's region at b's next run, or nothing at all when
 * `buf` is b's arena and `off` the input's own offset (the value of the
 * previous run, in place). */
static dml_status_t bind_on_device(dml_rt_session_t *b, uint32_t j, const dml_tensor_t *t,
                                   void *buf, uint64_t off) {
  dev_in_drop(b, j);
  DML_RETURN_IF_ERROR(set_input_checked(b, j, t, 1));
  b->dev_raw[j] = 1;
  b->dev_in_buf[j] = buf;
  b->dev_in_off[j] = off;
  return DML_OK;
}

/* 1 when io slot `q` of node k of s is handed over on the device (cf_dev). */
static int cf_on_device(const dml_rt_session_t *s, uint32_t k, uint32_t q) {
  return s->cf_dev && s->cf_dev[(s->calls[k].inputs - s->io) + q];
}

/* Output j of the last run of region session b, read to the host alone
 * when the run left it on the device (region_lazy), counted in b's
 * transfer statistics; *out: its view in b's host arena. */
static dml_status_t region_output(dml_rt_session_t *b, uint32_t j, dml_tensor_t *out) {
  DML_RETURN_IF_ERROR(dml_rt_session_output_shape(b, j, out));
  if (b->out_pending) {
    dml_rt_exec_t e = session_exec(b);
    dml_status_t st = b->backend->read_output(b->backend_state, &e, j);
    if (st)
      return dml_status_annotate(st, "reading output %" PRIu32 " of '%s' from %s", j,
                                 b->fn->name, b->backend->device_name(b->backend_state));
    const dml_tensor_t *t = &b->vals[b->fn->outputs[j]];
    uint64_t nb = (uint64_t)dml_tensor_bytes(t);
    if (nb && t->dtype != DML_DTYPE_STRING) {
      b->xfer.to_host_bytes += nb;
      b->xfer.to_host_count++;
    }
  }
  *out = b->vals[b->fn->outputs[j]];
  return DML_OK;
}

/* Runs If node `k` (ops.def): reads cond, runs the taken branch's session
 * with the captures as its inputs and copies its results into the node's
 * outputs, with their dims (which set the node's data-dependent symbols,
 * take_produced_dims). A branch on the device reads the captures the
 * device computed from this session's device arena and writes the results
 * no host node reads into it, on the device (cf_dev); the others cross
 * through the host arenas. */
static dml_status_t run_if(dml_rt_session_t *s, uint32_t k) {
  const dml_pkg_node_t *n = &s->fn->nodes[k];
  dml_cpu_call_t *c = &s->calls[k];
  const dml_tensor_t *cond = &c->inputs[0];
  size_t esz = dml_dtype_size(cond->dtype);
  if (!esz || dml_tensor_bytes(cond) != esz)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "rt.run",
                           "node #%" PRIu32 " '%s' (If): cond must hold one element", k,
                           n->name);
  int taken = dml_load_f64(cond->dtype, cond->data, 0) != 0;
  dml_rt_session_t *b = s->branch[2 * k + (taken ? 0 : 1)];
  const char *which = taken ? "then_function" : "else_function";
  s->region_runs[2 * k + (taken ? 0 : 1)]++;
  b->timeout_set = s->timeout_set;
  b->timeout_s = s->timeout_s;
  /* a branch on the device keeps its results there (region_output) */
  b->region_lazy = b->backend && b->backend->read_output;
  /* this run's captures may have other dims than the last run's: unbind
   * those before binding (set_input checks each against the bound ones) */
  dml_rt_session_clear_inputs(b);
  dml_status_t st = DML_OK;
  for (uint32_t j = 1; j < n->n_inputs && !st; j++)
    st = cf_on_device(s, k, j)
             ? bind_on_device(b, j - 1, &c->inputs[j],
                              s->backend->arena_buffer(s->backend_state),
                              s->fn->values[n->inputs[j]].offset)
             : dml_rt_session_set_input(b, j - 1, &c->inputs[j]);
  if (!st) st = dml_rt_session_run(b);
  for (uint32_t j = 0; j < n->n_outputs && !st; j++) {
    if (n->outputs[j] == DML_PKG_NO_VALUE) continue;
    dml_tensor_t r;
    st = dml_rt_session_output_shape(b, j, &r);
    if (st) break;
    dml_tensor_t *o = &c->outputs[j];
    size_t nb = dml_tensor_bytes(&r);
    uint64_t cap = s->fn->values[n->outputs[j]].bytes;
    if (r.rank != o->rank || r.dtype != o->dtype)
      return dml_status_make(DML_STATUS_INTERNAL, "rt.run",
                             "node #%" PRIu32 " '%s' (If): %s returned output %" PRIu32
                             " of another dtype or rank than the node's",
                             k, n->name, which, j);
    if (nb == SIZE_MAX || nb > cap)
      return dml_status_make(DML_STATUS_OUT_OF_RANGE, "rt.run",
                             "node #%" PRIu32 " '%s' (If): output %" PRIu32
                             " needs %zu bytes, above the %" PRIu64
                             " planned; recompile with a larger --dynamic-max-elements",
                             k, n->name, j, nb, cap);
    if (cf_on_device(s, k, n->n_inputs + j)) {
      /* into this session's device arena, where its next kernels read it */
      st = dml_rt_session_copy_output_device(b, j,
                                             s->backend->arena_buffer(s->backend_state),
                                             s->fn->values[n->outputs[j]].offset);
    } else {
      st = b->backend ? region_output(b, j, &r) : dml_rt_session_get_output(b, j, &r);
      if (!st && nb) memcpy(o->data, r.data, nb);
    }
    if (!st) memcpy(o->dims, r.dims, sizeof(int64_t) * (size_t)r.rank);
  }
  if (st)
    return dml_status_annotate(st, "running %s '%s' of node #%" PRIu32 " '%s' (If)",
                               which, b->fn->name, k, n->name);
  return DML_OK;
}

/* 1 when Loop body session b keeps its carried value j on the device from
 * one iteration to the next: b runs on a GPU backend that can bind its own
 * arena (arena_buffer, read_output), the value is no string and no
 * constant, and the body's output 1+j is input 2+j's bytes (in place) or
 * overlaps no input's bytes (then a copy on the device moves it, and no
 * other carried value's copy overwrites it first: inputs live for the
 * whole function, so only an output aliasing an input could). */
static int carried_on_device(const dml_rt_session_t *b, uint32_t j) {
  const dml_pkg_function_t *f = b->fn;
  if (!b->backend || !b->backend->arena_buffer || !b->backend->read_output ||
      2 + j >= f->n_inputs || 1 + j >= f->n_outputs)
    return 0;
  const dml_pkg_value_t *in = &f->values[f->inputs[2 + j]];
  const dml_pkg_value_t *out = &f->values[f->outputs[1 + j]];
  if (in->type.dtype == DML_DTYPE_STRING || out->storage == DML_PKG_STORAGE_CONST ||
      in->storage == DML_PKG_STORAGE_CONST)
    return 0;
  if (in->offset == out->offset && in->bytes == out->bytes) return 1;
  for (uint32_t i = 0; i < f->n_inputs; i++) {
    const dml_pkg_value_t *x = &f->values[f->inputs[i]];
    if (x->storage != DML_PKG_STORAGE_CONST && x->offset < out->offset + out->bytes &&
        out->offset < x->offset + x->bytes)
      return 0;
  }
  return 1;
}

/* Runs Loop node `k` (ops.def): the body's session once per iteration
 * while iter < M and cond, the carried values kept in the node's outputs
 * (fed back as the body's inputs), each iteration's scan elements appended
 * to the scan outputs (all of one shape, within the bytes planned); then
 * the scan outputs' dims [count, element dims]. A body on the device
 * (docs/kernels.md "Control flow: the regions on the device") takes the
 * initial carried values and the captures from the host in its first
 * iteration; after that its carried values stay on the device (each
 * iteration's outputs copied on the device into the next one's inputs)
 * and its captures stay in place, only the iteration number and cond
 * going up and the loop's condition (and the scan elements) coming down
 * per iteration; the final carried values come down once. */
static dml_status_t run_loop(dml_rt_session_t *s, uint32_t k) {
  const dml_pkg_node_t *n = &s->fn->nodes[k];
  dml_cpu_call_t *c = &s->calls[k];
  dml_rt_session_t *b = s->branch[2 * k];
  int64_t n_car = dml_attr_int(n->attrs, n->n_attrs, "n_carried", 0);
  uint32_t n_scan = n->n_outputs - (uint32_t)n_car;
  const dml_tensor_t *mt = &c->inputs[0], *ct = &c->inputs[1];
  for (int j = 0; j < 2; j++) {
    const dml_tensor_t *t = j ? ct : mt;
    if (t->dtype != DML_DTYPE_INVALID && dml_tensor_bytes(t) != dml_dtype_size(t->dtype))
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "rt.run",
                             "node #%" PRIu32 " '%s' (Loop): %s must hold one element", k,
                             n->name, j ? "cond" : "M");
  }
  int64_t trips =
      mt->dtype != DML_DTYPE_INVALID ? dml_load_i64(mt->dtype, mt->data, 0) : INT64_MAX;
  uint8_t cond =
      ct->dtype != DML_DTYPE_INVALID ? dml_load_f64(ct->dtype, ct->data, 0) != 0 : 1;
  /* A Scan run as this Loop (onnx_loop.c mark_scan_lengths): every scan
   * input must have the trip count's length along its axis. */
  size_t n_sl = 0, n_sa = 0;
  const int64_t *sl = dml_attr_ints(n->attrs, n->n_attrs, "scan_length_inputs", &n_sl);
  const int64_t *sa = dml_attr_ints(n->attrs, n->n_attrs, "scan_length_axes", &n_sa);
  for (size_t j = 0; sl && sa && n_sa == n_sl && j < n_sl; j++) {
    if (sl[j] < 0 || sl[j] >= n->n_inputs) continue; /* a constant */
    const dml_tensor_t *x = &c->inputs[sl[j]];
    if (sa[j] < 0 || sa[j] >= x->rank || x->dims[sa[j]] == trips) continue;
    return dml_status_detail(
        dml_status_make(
            DML_STATUS_INVALID_ARGUMENT, "rt.run",
            "node #%" PRIu32
            " '%s' (Loop, from an ONNX Scan or SequenceMap): scan input %zu has "
            "length %" PRId64 " along axis %" PRId64 ", scan input 0 has %" PRId64,
            k, n->name, j, x->dims[sa[j]], sa[j], trips),
        "ONNX Scan and SequenceMap need their scan inputs (sequences) of one length");
  }
  /* Carried values start as the initial ones, in the node's outputs. */
  for (int64_t j = 0; j < n_car; j++) {
    dml_tensor_t *o = &c->outputs[j];
    const dml_tensor_t *i0 = &c->inputs[2 + j];
    size_t nb = dml_tensor_bytes(i0);
    if (nb && o->data != i0->data) memmove(o->data, i0->data, nb);
  }
  /* the body on the device keeps its outputs there (region_output) */
  int dev = b->backend && b->backend->arena_buffer && b->backend->read_output;
  b->region_lazy = dev;
  int64_t count = 0;
  b->timeout_set = s->timeout_set;
  b->timeout_s = s->timeout_s;
  /* the last run's inputs may have other dims (as in run_if) */
  dml_rt_session_clear_inputs(b);
  dml_status_t st = DML_OK;
  for (int64_t it = 0; it < trips && cond && !st; it++) {
    s->region_runs[2 * k]++;
    dml_tensor_t itv = {DML_DTYPE_I64, 0, {0}, &it};
    dml_tensor_t cv = {DML_DTYPE_BOOL, 0, {0}, &cond};
    st = dml_rt_session_set_input(b, 0, &itv);
    if (!st) st = dml_rt_session_set_input(b, 1, &cv);
    for (int64_t j = 0; j < n_car && !st; j++) {
      uint32_t jj = (uint32_t)j;
      if (it > 0 && dev && carried_on_device(b, jj)) {
        /* the previous iteration's output 1+j, on the device */
        dml_tensor_t r;
        st = dml_rt_session_output_shape(b, 1 + jj, &r);
        if (!st)
          st = bind_on_device(b, 2 + jj, &r, b->backend->arena_buffer(b->backend_state),
                              b->fn->values[b->fn->outputs[1 + jj]].offset);
      } else {
        st = dml_rt_session_set_input(b, 2 + jj, &c->outputs[j]);
      }
    }
    for (uint32_t j = 2 + (uint32_t)n_car; j < n->n_inputs && !st; j++) {
      if (it > 0 && dev && b->fn->values[b->fn->inputs[j]].type.dtype != DML_DTYPE_STRING)
        st = bind_on_device(b, j, &c->inputs[j],
                            b->backend->arena_buffer(b->backend_state),
                            b->fn->values[b->fn->inputs[j]].offset);
      else if (it == 0 && cf_on_device(s, k, j)) /* from the caller's device arena */
        st = bind_on_device(b, j, &c->inputs[j],
                            s->backend->arena_buffer(s->backend_state),
                            s->fn->values[n->inputs[j]].offset);
      else
        st = dml_rt_session_set_input(b, j, &c->inputs[j]);
    }
    if (!st) st = dml_rt_session_run(b);
    if (st) break;
    dml_tensor_t r;
    st = region_output(b, 0, &r);
    if (st) break;
    cond = dml_load_f64(r.dtype, r.data, 0) != 0;
    int last = !(it + 1 < trips && cond);
    for (int64_t j = 0; j < n_car && !st; j++) {
      /* the carried values stay on the device until the last iteration */
      if (dev && !last && carried_on_device(b, (uint32_t)j)) continue;
      st = region_output(b, 1 + (uint32_t)j, &r);
      size_t nb = st ? 0 : dml_tensor_bytes(&r);
      if (nb) memcpy(c->outputs[j].data, r.data, nb);
    }
    for (uint32_t j = 0; j < n_scan && !st; j++) {
      st = region_output(b, 1 + (uint32_t)n_car + j, &r);
      if (st) break;
      dml_tensor_t *o = &c->outputs[n_car + j];
      if (count > 0 && memcmp(o->dims + 1, r.dims, sizeof(int64_t) * (size_t)r.rank))
        return dml_status_make(DML_STATUS_UNIMPLEMENTED, "rt.run",
                               "node #%" PRIu32 " '%s' (Loop): scan output %" PRIu32
                               " changes shape at iteration %" PRId64,
                               k, n->name, j, it);
      memcpy(o->dims + 1, r.dims, sizeof(int64_t) * (size_t)r.rank);
      size_t nb = dml_tensor_bytes(&r);
      uint64_t cap = s->fn->values[n->outputs[n_car + j]].bytes;
      if (nb && (uint64_t)(count + 1) > cap / nb)
        return dml_status_make(DML_STATUS_OUT_OF_RANGE, "rt.run",
                               "node #%" PRIu32 " '%s' (Loop): scan output %" PRIu32
                               " needs more than the %" PRIu64
                               " bytes planned at iteration %" PRId64
                               "; recompile with a larger --dynamic-dim-bound or "
                               "--dynamic-max-elements",
                               k, n->name, j, cap, it);
      if (nb) memcpy((uint8_t *)o->data + (size_t)count * nb, r.data, nb);
    }
    if (st) break;
    count++;
  }
  if (st)
    return dml_status_annotate(
        st, "running iteration %" PRId64 " of body '%s' of node #%" PRIu32 " '%s' (Loop)",
        count, b->fn->name, k, n->name);
  for (uint32_t j = 0; j < n_scan; j++) {
    /* A scan output typed with the trip count's dim (ir/infer.c
     * loop_trip_dim) has that length already; a data-dependent one gets
     * the count. */
    dml_tensor_t *o = &c->outputs[n_car + j];
    dml_dim_t d0 = s->fn->values[n->outputs[n_car + j]].type.dims[0];
    if (!(d0.sym >= 0 && sym_is_node(s, (uint32_t)d0.sym)) && o->dims[0] != count)
      return dml_status_make(DML_STATUS_INTERNAL, "rt.run",
                             "node #%" PRIu32 " '%s' (Loop): scan output %" PRIu32
                             " is typed with %" PRId64 " elements but %" PRId64
                             " iterations ran",
                             k, n->name, j, o->dims[0], count);
    o->dims[0] = count;
  }
  return DML_OK;
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Counts the download of every output of the last run (at its dims) in
 * the session's transfer statistics. */
static void count_downloads(dml_rt_session_t *s) {
  for (uint32_t j = 0; j < s->fn->n_outputs; j++) {
    const dml_tensor_t *t = &s->vals[s->fn->outputs[j]];
    uint64_t nb = (uint64_t)dml_tensor_bytes(t);
    if (!nb || t->dtype == DML_DTYPE_STRING) continue; /* strings stay on the host */
    s->xfer.to_host_bytes += nb;
    s->xfer.to_host_count++;
  }
}

/* The exec of session s's function over its arena, symbols, seed and
 * timeout: a run's (which adds its step, the callbacks and the device
 * inputs), or the last run's, for the backend's read_outputs and
 * copy_output. */
static dml_rt_exec_t session_exec(dml_rt_session_t *s) {
  dml_rt_exec_t e;
  memset(&e, 0, sizeof e);
  e.m = s->m;
  e.fn = s->fn;
  e.arena = s->arena;
  e.sym = s->sym;
  e.n_symbols = s->n_symbols;
  e.rng_seed = s->rng_seed;
  e.ctx = s;
  e.timeout_set = s->timeout_set;
  e.timeout_s = s->timeout_s;
  return e;
}

dml_status_t dml_rt_session_run(dml_rt_session_t *s) {
  const dml_pkg_function_t *f = s->fn;
  dml_status_t st = DML_OK;
  for (uint32_t j = 0; j < f->n_inputs; j++) {
    if (s->bound[j]) continue;
    const char *name = f->values[f->inputs[j]].name;
    if (!st)
      st = dml_status_make(DML_STATUS_FAILED_PRECONDITION, "rt.run",
                           "input '%s' is not set", name);
    else
      st = dml_status_detail(st, "input '%s' is not set either", name);
  }
  if (st) return dml_status_detail(st, "bind every input with dml_rt_session_set_input");
  s->ran = 0;
  s->prof_ran = 0;
  if (s->region_runs)
    memset(s->region_runs, 0, 2 * (size_t)f->n_nodes * sizeof(uint64_t));
  if (s->prof) memset(s->prof, 0, 2 * (size_t)f->n_nodes * sizeof(uint64_t));
  if (!s->strheap_borrowed) dml_cpu_strheap_reset(s->strheap);
  for (uint32_t j = 0; j < f->n_inputs; j++) {
    dml_cpu_strheap_release(s->in_heap_old[j]);
    s->in_heap_old[j] = NULL;
  }
  uint64_t step = s->rng_step++; /* this run's step (dml_philox.h) */
  for (uint32_t k = 0; k < f->n_nodes; k++) {
    s->calls[k].rng_seed = s->rng_seed;
    s->calls[k].rng_counter = step;
  }
  /* Symbol values from the inputs (set_input made them agree). */
  for (uint32_t i = 0; i < s->n_symbols; i++) s->sym[i] = 0;
  for (uint32_t j = 0; j < f->n_inputs; j++) {
    const dml_pkg_value_t *v = &f->values[f->inputs[j]];
    for (int32_t d = 0; d < v->type.rank; d++)
      if (v->type.dims[d].sym >= 0)
        s->sym[v->type.dims[d].sym] = s->in_dims[j][d] / v->type.dims[d].value;
  }
  /* Data-dependent symbols start at their bounds: their producers' outputs
   * are passed at the bounds, and later values are re-evaluated once the
   * producer has written the actual extent. */
  for (uint32_t i = 0; i < s->n_symbols; i++)
    if (sym_is_node(s, i)) s->sym[i] = s->m->graph->symbols[i].bound;
  DML_RETURN_IF_ERROR(derive_symbols(s));
  /* Actual dims of every value (<= its dims at the bounds). */
  for (uint32_t i = 0; i < f->n_values; i++) {
    if (f->values[i].storage == DML_PKG_STORAGE_CONST) continue;
    DML_RETURN_IF_ERROR(
        dml_type_eval_dims(&f->values[i].type, s->sym, s->n_symbols, s->vals[i].dims));
  }
  if (s->backend) {
    rt_globals_t *g = s->globals;
    if (g->host_newer && g->data) {
      st = s->backend->write_globals(s->backend_state, g->data);
      if (st)
        return dml_status_annotate(st, "uploading the globals to %s",
                                   s->backend->device_name(s->backend_state));
      g->host_newer = 0;
    }
    s->gpu_next = 0;
    DML_RETURN_IF_ERROR(gpu_value_dims(s));
    int any_dev = 0;
    for (uint32_t j = 0; j < f->n_inputs; j++) {
      if (s->dev_raw[j]) { /* bound by the caller (bind_on_device) */
        any_dev = 1;
        continue;
      }
      s->dev_in_buf[j] = NULL;
      if (!s->dev_in[j].id) continue;
      st = dml_rt_tensor_buffer(s->dev_in[j], "rt.run", &s->dev_in_buf[j],
                                &s->dev_in_off[j]);
      if (st)
        return dml_status_annotate(st, "input '%s' (bound on the device)",
                                   f->values[f->inputs[j]].name);
      any_dev = 1;
    }
    int lazy = s->backend->read_outputs &&
               ((s->on_device && (!s->n_runs || !s->host_read)) || s->region_lazy);
    dml_rt_exec_t e = session_exec(s);
    e.rng_step = step;
    e.produced = gpu_produced;
    e.host = gpu_host_nodes;
    e.dev_in = any_dev ? (void *const *)s->dev_in_buf : NULL;
    e.dev_in_off = any_dev ? s->dev_in_off : NULL;
    e.outputs_lazy = lazy;
    s->out_pending = 0;
    s->host_read = 0;
    s->n_runs++;
    st = s->backend->run(s->backend_state, &e);
    if (!st && s->gpu_next < f->n_nodes)
      st = dml_status_make(
          DML_STATUS_INTERNAL, "rt.run",
          "the device did not report the dims of node #%" PRIu32 " '%s' (%s)",
          s->gpu_next, f->nodes[s->gpu_next].name, f->nodes[s->gpu_next].op_name);
    if (s->assigns && g->data) g->device_newer = 1;
    if (st)
      return dml_status_annotate(st, "running '%s' on %s", f->name,
                                 s->backend->device_name(s->backend_state));
    for (uint32_t j = 0; j < f->n_inputs; j++) {
      const dml_tensor_t *t = &s->vals[f->inputs[j]];
      uint64_t nb = (uint64_t)dml_tensor_bytes(t);
      if (!nb || t->dtype == DML_DTYPE_STRING) continue; /* strings stay on the host */
      if (s->dev_raw[j] && s->dev_in_off[j] == f->values[f->inputs[j]].offset &&
          s->dev_in_buf[j] == s->backend->arena_buffer(s->backend_state)) {
        /* in place from the previous run (bind_on_device): nothing moved */
      } else if (s->dev_in_buf[j]) {
        s->xfer.on_device_bytes += nb;
        s->xfer.on_device_count++;
      } else {
        s->xfer.to_device_bytes += nb;
        s->xfer.to_device_count++;
      }
    }
    if (lazy)
      s->out_pending = 1;
    else
      count_downloads(s);
    s->ran = 1;
    s->runs_done++;
    return DML_OK;
  }
  for (uint32_t k = 0; k < f->n_nodes; k++) {
    const dml_pkg_node_t *n = &f->nodes[k];
    dml_cpu_call_t *c = &s->calls[k];
    dml_tensor_t *io = (dml_tensor_t *)c->inputs;
    for (uint32_t j = 0; j < n->n_inputs; j++) {
      if (n->inputs[j] == DML_PKG_NO_VALUE)
        memset(&io[j], 0, sizeof io[j]); /* absent: dtype INVALID, data NULL */
      else
        io[j] = s->vals[n->inputs[j]];
    }
    for (uint32_t j = 0; j < n->n_outputs; j++) c->outputs[j] = s->vals[n->outputs[j]];
    /* A view planned in place already holds its bytes (one whose dims
     * depend on its shape input runs to set them). */
    if ((dml_op_info(n->op)->flags & DML_OPF_VIEW) && n->n_inputs &&
        !s->node_produces[k] && io[0].data == c->outputs[0].data)
      continue;
    if (!s->node_produces[k]) DML_RETURN_IF_ERROR(fits_plan(s, k));
    int role = s->fuse ? s->fuse->role[k] : 0;
    if (role == 2) continue; /* folded into the node before it */
    if (s->prof) s->prof[2 * k] = now_ns();
    if (role == 1 && s->fuse->chain_len[k]) {
      st = dml_rt_cpu_run_chain(s->fuse, f, k, s->vals, s->calls);
    } else if (role == 1) {
      if (s->fuse->final_value[k] != n->outputs[0]) /* a chain: its last output */
        c->outputs[0] = s->vals[s->fuse->final_value[k]];
      dml_cpu_epilogue_t ep = s->fuse->ep[k];
      if (s->fuse->residual[k])
        ep.residual = (const float *)s->vals[s->fuse->residual[k] - 1].data;
      if (ep.nchwc) dml_rt_cpu_nchwc_work(s->fuse, &ep);
      st = dml_cpu_run_fused(c, &ep);
    } else if (n->op == DML_OP_IF) {
      st = run_if(s, k);
    } else if (n->op == DML_OP_LOOP) {
      st = run_loop(s, k);
    } else {
      st = dml_cpu_run(c); /* checks its scratch: sized at the bounds at load */
    }
    if (s->prof) s->prof[2 * k + 1] = now_ns();
    if (st)
      return dml_status_annotate(st, "running node #%" PRIu32 " '%s' (%s) of '%s'", k,
                                 n->name, n->op_name, f->name);
    if (s->node_produces[k]) DML_RETURN_IF_ERROR(take_produced_dims(s, k));
  }
  /* A node folded into a fused kernel shares that kernel's span. */
  for (uint32_t k = 1; s->prof && s->fuse && k < f->n_nodes; k++)
    if (s->fuse->role[k] == 2)
      memcpy(&s->prof[2 * k], &s->prof[2 * (k - 1)], 2 * sizeof(uint64_t));
  s->prof_ran = s->prof != NULL;
  s->ran = 1;
  s->runs_done++;
  return DML_OK;
}

dml_status_t dml_rt_session_set_profiling(dml_rt_session_t *s, int on) {
  if (s->backend)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, "rt.session",
                           "per-node times are recorded on the cpu; a session on %s "
                           "reports its kernels' device times "
                           "(dml_rt_session_kernel_info)",
                           s->backend->device_name(s->backend_state));
  free(s->prof);
  s->prof = NULL;
  s->prof_ran = 0;
  if (on && !(s->prof = (uint64_t *)calloc(2 * (size_t)s->fn->n_nodes + 1, 8)))
    return oom();
  return DML_OK;
}

dml_status_t dml_rt_session_node_time(const dml_rt_session_t *s, uint32_t node,
                                      uint64_t *start_ns, uint64_t *end_ns) {
  if (node >= s->fn->n_nodes)
    return dml_status_make(DML_STATUS_OUT_OF_RANGE, "rt.session",
                           "node %" PRIu32 " of %" PRIu32, node, s->fn->n_nodes);
  if (!s->prof || !s->prof_ran)
    return dml_status_make(DML_STATUS_FAILED_PRECONDITION, "rt.session",
                           "no run with profiling on (dml_rt_session_set_profiling)");
  *start_ns = s->prof[2 * node];
  *end_ns = s->prof[2 * node + 1];
  return DML_OK;
}

void dml_rt_session_backend(const dml_rt_session_t *s,
                            const dml_rt_backend_t **out_backend, void **out_state,
                            const dml_pkg_function_t **out_fn,
                            const uint8_t **out_weights) {
  *out_backend = s->backend;
  *out_state = s->backend_state;
  *out_fn = s->fn;
  *out_weights = s->weights;
}

const char *dml_rt_session_device(const dml_rt_session_t *s) {
  if (s->fallback) return "cpu (the CPU fall-back: dml_rt_session_fallback)";
  return s->backend ? s->backend->device_name(s->backend_state) : "cpu";
}

uint32_t dml_rt_session_num_regions(const dml_rt_session_t *s) {
  uint32_t n = 0;
  for (uint32_t i = 0; s && s->branch && i < 2 * s->fn->n_nodes; i++) n += !!s->branch[i];
  return n;
}

dml_status_t dml_rt_session_region(const dml_rt_session_t *s, uint32_t i,
                                   dml_rt_region_info_t *out) {
  if (!s || !out)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "rt.session",
                           "dml_rt_session_region: %s is NULL",
                           s ? "out" : "the session");
  uint32_t n = 0;
  for (uint32_t j = 0; s->branch && j < 2 * s->fn->n_nodes; j++) {
    if (!s->branch[j] || n++ != i) continue;
    const dml_pkg_node_t *nd = &s->fn->nodes[j / 2];
    out->node = nd->name;
    out->op = nd->op_name;
    out->role = nd->op == DML_OP_LOOP ? "body" : j % 2 ? "else" : "then";
    out->function = s->branch[j]->fn->name;
    out->session = s->branch[j];
    out->runs = s->region_runs[j];
    out->runs_total = s->branch[j]->runs_done;
    return DML_OK;
  }
  return dml_status_make(DML_STATUS_OUT_OF_RANGE, "rt.session",
                         "region %u: the session has %u (dml_rt_session_num_regions)", i,
                         n);
}

uint32_t dml_rt_session_num_kernels(const dml_rt_session_t *s) {
  return s->backend ? s->backend->num_kernels(s->backend_state) : 0;
}

dml_status_t dml_rt_session_kernel_info(const dml_rt_session_t *s, uint32_t i,
                                        dml_rt_kernel_info_t *out) {
  if (!s->backend)
    return dml_status_make(DML_STATUS_OUT_OF_RANGE, "rt.session",
                           "kernel %u: a cpu session runs no GPU kernels", i);
  return s->backend->kernel_info(s->backend_state, i, out);
}

void dml_rt_session_set_seed(dml_rt_session_t *s, uint64_t seed, uint64_t step) {
  s->rng_seed = seed;
  s->rng_step = step;
}

void dml_rt_session_set_device_timeout(dml_rt_session_t *s, double seconds) {
  if (!s) return;
  s->timeout_set = seconds >= 0; /* NaN and < 0: the default */
  s->timeout_s = seconds >= 0 ? seconds : 0;
}

dml_status_t dml_rt_session_output_shape(dml_rt_session_t *s, uint32_t index,
                                         dml_tensor_t *out_view) {
  if (index >= s->fn->n_outputs)
    return dml_status_make(DML_STATUS_OUT_OF_RANGE, "rt.session",
                           "output index %" PRIu32 " out of range (the model has %" PRIu32
                           ")",
                           index, s->fn->n_outputs);
  if (!s->ran)
    return dml_status_make(DML_STATUS_FAILED_PRECONDITION, "rt.session",
                           "no outputs yet: dml_rt_session_run has not completed");
  *out_view = s->vals[s->fn->outputs[index]];
  out_view->data = NULL;
  return DML_OK;
}

dml_status_t dml_rt_session_get_output(dml_rt_session_t *s, uint32_t index,
                                       dml_tensor_t *out_view) {
  DML_RETURN_IF_ERROR(dml_rt_session_output_shape(s, index, out_view));
  s->host_read = 1;
  if (s->out_pending) { /* the outputs stayed on the device: read them back now */
    dml_rt_exec_t e = session_exec(s);
    dml_status_t st = s->backend->read_outputs(s->backend_state, &e);
    if (st)
      return dml_status_annotate(st, "reading the outputs of '%s' from %s", s->fn->name,
                                 s->backend->device_name(s->backend_state));
    s->out_pending = 0;
    count_downloads(s);
  }
  *out_view = s->vals[s->fn->outputs[index]];
  return DML_OK;
}

dml_status_t dml_rt_session_copy_output_device(dml_rt_session_t *s, uint32_t index,
                                               void *dst, uint64_t dst_off) {
  dml_tensor_t t;
  DML_RETURN_IF_ERROR(dml_rt_session_output_shape(s, index, &t));
  if (!s->backend || !s->backend->copy_output)
    return dml_status_make(DML_STATUS_FAILED_PRECONDITION, "rt.session",
                           "the session does not run on a GPU device");
  if (t.dtype == DML_DTYPE_STRING)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, "rt.session",
                           "output '%s' holds strings, which live on the host: read "
                           "it with dml_rt_session_get_output",
                           s->fn->values[s->fn->outputs[index]].name);
  dml_rt_exec_t e = session_exec(s);
  dml_status_t st = s->backend->copy_output(s->backend_state, &e, index, dst, dst_off);
  if (st)
    return dml_status_annotate(st, "copying output %" PRIu32 " of '%s' on %s", index,
                               s->fn->name, s->backend->device_name(s->backend_state));
  uint64_t nb = (uint64_t)dml_tensor_bytes(&t);
  if (nb) {
    s->xfer.on_device_bytes += nb;
    s->xfer.on_device_count++;
  }
  return DML_OK;
}

void dml_rt_session_transfer_stats(const dml_rt_session_t *s,
                                   dml_rt_transfer_stats_t *out) {
  if (!out) return;
  if (s)
    *out = s->xfer;
  else
    memset(out, 0, sizeof *out);
}

/* ---- the session's function and globals ---- */

uint32_t dml_rt_session_num_inputs(const dml_rt_session_t *s) {
  return s->fn->n_inputs;
}
uint32_t dml_rt_session_num_outputs(const dml_rt_session_t *s) {
  return s->fn->n_outputs;
}

dml_status_t dml_rt_session_input_info(const dml_rt_session_t *s, uint32_t i,
                                       dml_rt_io_info_t *out_info) {
  return dml_rt_fn_io_info("rt.session", s->m, s->fn, 0, i, out_info);
}

dml_status_t dml_rt_session_output_info(const dml_rt_session_t *s, uint32_t i,
                                        dml_rt_io_info_t *out_info) {
  return dml_rt_fn_io_info("rt.session", s->m, s->fn, 1, i, out_info);
}

int32_t dml_rt_session_find_input(const dml_rt_session_t *s, const char *name) {
  return dml_rt_fn_find_io(s->fn, 0, name);
}

int32_t dml_rt_session_find_output(const dml_rt_session_t *s, const char *name) {
  return dml_rt_fn_find_io(s->fn, 1, name);
}

dml_status_t dml_rt_session_global(dml_rt_session_t *s, uint32_t i,
                                   dml_tensor_t *out_view) {
  const dml_rt_model_t *m = s->m;
  if (i >= m->n_globals)
    return dml_rt_index_out_of_range("rt.session", "global", i, m->n_globals);
  rt_globals_t *g = s->globals;
  if (s->backend && g->data) {
    /* The device copy is the current one after a training run; the caller
     * may write the view, so the next run uploads the host copy. */
    if (g->device_newer) {
      DML_RETURN_IF_ERROR(dml_status_annotate(
          s->backend->read_globals(s->backend_state, g->data),
          "reading the globals back from %s", s->backend->device_name(s->backend_state)));
      g->device_newer = 0;
    }
    g->host_newer = 1;
  }
  const dml_pkg_value_t *v = m->globals[i].value;
  memset(out_view, 0, sizeof(*out_view));
  out_view->dtype = v->type.dtype;
  out_view->rank = v->type.rank;
  for (int32_t d = 0; d < v->type.rank; d++) out_view->dims[d] = v->type.dims[d].value;
  out_view->data = (void *)(s->weights + m->globals[i].offset);
  return DML_OK;
}

int dml_rt_session_globals_writable(const dml_rt_session_t *s) {
  return s->globals->data != NULL;
}

dml_status_t dml_rt_kernel_info_fill(const char *op, const dml_kpkg_function_t *kf,
                                     uint32_t i, int ran, const double *kernel_ms,
                                     const int64_t *sym, uint32_t n_symbols,
                                     dml_rt_kernel_info_t *out) {
  if (i >= kf->n_kernels)
    return dml_status_make(DML_STATUS_OUT_OF_RANGE, op, "kernel %u of %u", i,
                           kf->n_kernels);
  if (!ran)
    return dml_status_make(DML_STATUS_FAILED_PRECONDITION, op,
                           "no run has completed yet");
  const dml_kpkg_kernel_t *K = &kf->kernels[i];
  out->name = K->name;
  out->n_nodes = K->n_nodes;
  out->nodes = K->nodes;
  out->ms = kernel_ms[i];
  out->flops = (double)dml_kpkg_lin_eval(K->flops, sym, n_symbols);
  out->bytes = (double)dml_kpkg_lin_eval(K->bytes, sym, n_symbols);
  return DML_OK;
}

/* 1 when `t` has a dim of a data-dependent symbol. */
static int uses_node_symbol(const dml_rt_model_t *m, const dml_type_t *t) {
  for (int32_t d = 0; d < t->rank; d++)
    if (t->dims[d].sym >= 0 && (uint32_t)t->dims[d].sym < m->graph->n_symbols &&
        m->graph->symbols[t->dims[d].sym].origin == DML_PKG_SYMBOL_NODE)
      return 1;
  return 0;
}

dml_status_t dml_rt_gpu_plan_io(const char *op, const char *target,
                                const dml_rt_model_t *m, const dml_pkg_function_t *f,
                                uint64_t align, dml_rt_io_region_t **out_inputs,
                                dml_rt_io_region_t **out_outputs, uint64_t *out_bytes) {
  dml_rt_io_region_t *in = (dml_rt_io_region_t *)calloc(f->n_inputs ? f->n_inputs : 1,
                                                        sizeof(dml_rt_io_region_t));
  dml_rt_io_region_t *out = (dml_rt_io_region_t *)calloc(f->n_outputs ? f->n_outputs : 1,
                                                         sizeof(dml_rt_io_region_t));
  dml_status_t s = DML_OK;
  uint64_t at = 0;
  if (!in || !out)
    s = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, op, "out of memory");
  for (int pass = 0; !s && pass < 2; pass++) {
    uint32_t n = pass ? f->n_outputs : f->n_inputs;
    const uint32_t *idx = pass ? f->outputs : f->inputs;
    dml_rt_io_region_t *r = pass ? out : in;
    for (uint32_t i = 0; !s && i < n; i++) {
      const dml_pkg_value_t *val = &f->values[idx[i]];
      int64_t b =
          dml_pkg_type_bytes_bound(&val->type, m->graph->symbols, m->graph->n_symbols);
      /* A value whose dims come from data may be planned below its size at
       * the bounds (--dynamic-max-elements); a run checks its actual size
       * against the plan before the device runs (gpu_value_dims). */
      if (b > 0 && (uint64_t)b > val->bytes && uses_node_symbol(m, &val->type))
        b = (int64_t)val->bytes;
      if (val->type.dtype == DML_DTYPE_STRING)
        b = 0; /* stays in the host arena (dml_rt_gpu_io_bytes): no staging */
      if (val->storage == DML_PKG_STORAGE_CONST)
        s = dml_status_make(DML_STATUS_UNIMPLEMENTED, op,
                            "output '%s' is a constant; not run on %s yet", val->name,
                            target);
      else if (b < 0 || (uint64_t)b > val->bytes ||
               val->offset + (uint64_t)b > f->arena_bytes)
        s = dml_status_make(DML_STATUS_DATA_LOSS, op, "bad size of '%s'", val->name);
      else {
        r[i].value = idx[i];
        r[i].arena_offset = val->offset;
        r[i].staging_offset = at;
        r[i].bytes_bound = (uint64_t)b;
        at += ((uint64_t)b + align - 1) & ~(align - 1);
      }
    }
  }
  if (s) {
    free(in);
    free(out);
    return s;
  }
  *out_inputs = in;
  *out_outputs = out;
  *out_bytes = at;
  return DML_OK;
}

void dml_rt_gpu_plan_rng(const dml_pkg_function_t *f, uint64_t align,
                         uint64_t *io_staging_bytes, dml_rt_rng_region_t *out) {
  memset(out, 0, sizeof *out);
  out->arena_bytes = f->arena_bytes;
  for (uint32_t i = 0; i < f->n_nodes && !out->used; i++)
    out->used = f->nodes[i].op == DML_OP_DROPOUT ||
                (dml_op_info(f->nodes[i].op)->flags & DML_OPF_RANDOM) != 0;
  if (!out->used) return;
  out->arena_offset = dml_philox_slot_offset(f->arena_bytes);
  out->arena_bytes = out->arena_offset + DML_PHILOX_SLOT_BYTES;
  out->staging_offset = (*io_staging_bytes + align - 1) & ~(align - 1);
  *io_staging_bytes = out->staging_offset + DML_PHILOX_SLOT_BYTES;
}

void dml_rt_gpu_rng_words(const dml_rt_exec_t *e, uint8_t *dst) {
  uint32_t w[4];
  dml_philox_slot_words(e->rng_seed, e->rng_step, w);
  for (int i = 0; i < 4; i++)
    for (int b = 0; b < 4; b++) dst[4 * i + b] = (uint8_t)(w[i] >> (8 * b));
}

dml_status_t dml_rt_gpu_kernels_for(const char *op, const char *target, const char *flag,
                                    const dml_rt_model_t *m, const dml_pkg_function_t *f,
                                    const dml_kpkg_t *table,
                                    const dml_kpkg_function_t **out_kf) {
  const dml_kpkg_function_t *kf = dml_kpkg_find_function(table, dml_rt_fn_index(m, f));
  if (!kf)
    return dml_status_make(DML_STATUS_FAILED_PRECONDITION, op,
                           "the package has no %s kernels for function '%s': compile it "
                           "with dmlc compile --target %s (a training package: dmlc "
                           "compile --train --target %s, or dmlc train --device %s)",
                           target, f->name, flag, flag, flag);
  if (m->graph->n_symbols > DML_KPKG_MAX_SYMBOLS)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, op, "%u symbols exceed %u",
                           m->graph->n_symbols, DML_KPKG_MAX_SYMBOLS);
  /* Nodes outside every kernel are views the plan keeps in place. */
  uint32_t k = 0, j = 0;
  for (uint32_t i = 0; i < f->n_nodes; i++) {
    while (k < kf->n_kernels && j >= kf->kernels[k].n_nodes) k++, j = 0;
    if (k < kf->n_kernels && kf->kernels[k].nodes[j] == i) {
      j++;
      continue;
    }
    const dml_pkg_node_t *n = &f->nodes[i];
    if (!n->n_inputs || !n->n_outputs || n->inputs[0] == DML_PKG_NO_VALUE ||
        f->values[n->inputs[0]].storage == DML_PKG_STORAGE_CONST ||
        f->values[n->inputs[0]].offset != f->values[n->outputs[0]].offset)
      return dml_status_make(DML_STATUS_DATA_LOSS, op,
                             "node %u '%s' (%s) is in no %s kernel and does not alias "
                             "its input",
                             i, n->name, n->op_name, target);
  }
  /* The kernels hold every numeric dtype and bool (codegen/dml_kernel.h). */
  for (uint32_t i = 0; i < f->n_values; i++) {
    dml_dtype_t dt = f->values[i].type.dtype;
    if ((dt <= DML_DTYPE_INVALID || dt >= DML_DTYPE_COUNT_) &&
        f->values[i].storage != DML_PKG_STORAGE_CONST)
      return dml_status_make(DML_STATUS_UNIMPLEMENTED, op,
                             "value '%s' is %s; the %s backend runs numeric and bool "
                             "values only",
                             f->values[i].name, dml_dtype_name(dt), target);
  }
  *out_kf = kf;
  return DML_OK;
}

int dml_rt_node_dims_on_device(const dml_rt_model_t *m, const dml_pkg_function_t *f,
                               uint32_t node) {
  const dml_pkg_graph_t *g = m->graph;
  if (node >= f->n_nodes || dml_cpu_output_dims_reads(f->nodes[node].op, 0) >= 0)
    return 0;
  for (uint32_t i = 0; i < g->n_symbols; i++) {
    const dml_pkg_symbol_t *sy = &g->symbols[i];
    if (sy->origin == DML_PKG_SYMBOL_NODE && &g->functions[sy->function] == f &&
        sy->node == node)
      return 1;
  }
  return 0;
}

dml_status_t dml_rt_gpu_plan_dims(const char *op, const dml_rt_model_t *m,
                                  const dml_pkg_function_t *f,
                                  const dml_kpkg_function_t *kf, uint64_t align,
                                  const dml_rt_rng_region_t *rng,
                                  uint64_t *io_staging_bytes, dml_rt_dims_region_t *out) {
  memset(out, 0, sizeof *out);
  out->arena_bytes = rng->arena_bytes;
  for (uint32_t k = 0; k < kf->n_kernels; k++) {
    const dml_kpkg_kernel_t *K = &kf->kernels[k];
    int p = 0;
    for (uint32_t j = 0; j < K->n_nodes && !p; j++)
      p = dml_rt_node_dims_on_device(m, f, K->nodes[j]);
    if (!p) continue;
    if (!out->produces) {
      out->produces = (uint8_t *)calloc(kf->n_kernels, 1);
      if (!out->produces)
        return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, op, "out of memory");
    }
    out->produces[k] = 1;
    out->used = 1;
  }
  if (!out->used) return DML_OK;
  out->arena_offset = dml_kpkg_dims_slot_offset(f->arena_bytes);
  if (out->arena_bytes < out->arena_offset + DML_KPKG_DIMS_SLOT_BYTES)
    out->arena_bytes = out->arena_offset + DML_KPKG_DIMS_SLOT_BYTES;
  out->staging_offset = (*io_staging_bytes + align - 1) & ~(align - 1);
  *io_staging_bytes = out->staging_offset + DML_KPKG_DIMS_SLOT_BYTES;
  return DML_OK;
}

void dml_rt_gpu_dims_free(dml_rt_dims_region_t *d) {
  free(d->produces);
  d->produces = NULL;
  d->used = 0;
}

uint32_t dml_rt_gpu_segment_end(const dml_rt_dims_region_t *d, uint32_t n_kernels,
                                uint32_t begin) {
  for (uint32_t k = begin; d->used && k < n_kernels; k++)
    if (d->produces[k]) return k + 1;
  return n_kernels;
}

int dml_rt_gpu_segment_produces(const dml_rt_dims_region_t *d, uint32_t b, uint32_t end) {
  return end > b && d->used && d->produces[end - 1];
}

uint32_t dml_rt_gpu_segments(const dml_rt_dims_region_t *d, uint32_t n_kernels) {
  uint32_t n = 1;
  for (uint32_t k = 0; d->used && k < n_kernels; k++) n += d->produces[k];
  return n;
}

dml_status_t dml_rt_gpu_take_dims(const dml_rt_exec_t *e, const dml_kpkg_function_t *kf,
                                  uint32_t k, const uint8_t *src) {
  uint32_t w[DML_KPKG_MAX_SYMBOLS];
  for (uint32_t i = 0; i < DML_KPKG_MAX_SYMBOLS; i++)
    w[i] = (uint32_t)src[4 * i] | (uint32_t)src[4 * i + 1] << 8 |
           (uint32_t)src[4 * i + 2] << 16 | (uint32_t)src[4 * i + 3] << 24;
  if (!e->produced) return DML_OK;
  return e->produced(e->ctx, kf->kernels[k].nodes, kf->kernels[k].n_nodes, w);
}
