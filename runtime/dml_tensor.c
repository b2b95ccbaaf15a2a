/*
 * dml_tensor.c — eager tensors (dml_tensor.h, docs/tensor.md).
 *
 * A global table of slots (each allocated once and reused, so a slot's
 * address never changes) guarded by one mutex; a handle is (generation,
 * slot + 1) and a freed slot's generation moves on, so a stale handle is
 * refused before anything is read through it. A slot describes a view
 * (dtype, dims, strides, offset) of a storage: host memory on the CPU, a
 * device buffer (dml_rt_devmem_t, rt_backend.h) on Vulkan or CUDA. Storages are
 * reference counted by the live slots using them and return their bytes to
 * the device when the last goes.
 *
 * Eager ops on the CPU: the op's shape rule (dml_cpu_eager_outputs), the
 * kernel's scratch (dml_cpu_scratch_bytes, kept per device and grown), the
 * kernel (dml_cpu_run), the same calls the compiled CPU path makes per node.
 * On Vulkan and CUDA: the kernels of the device's eager library
 * (dml_eager_lib.h: dml_eager_spirv, dml_eager_ptx; the same rows), run
 * through the device's run_kernel (rt_backend.h).
 */
#include "dml_tensor.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_cpu.h"
#include "dml_eager_lib.h"
#include "dml_ew.h"
#include "dml_ops.h"
#include "dml_rt.h"
#include "dml_shape.h"
#include "dml_tensor_eager.h"
#include "rt_backend.h"

/* The one row of an empty eager library (its count 0; C has no empty
 * arrays): no op. */
#define NO_EAGER_KERNEL                                                      \
  {                                                                          \
    DML_OP_INVALID, 0, 0, 0, 0, {0, 0, 0},                                   \
        {{0, 0, -1, 0}, {0, 0, -1, 0}, {0, 0, -1, 0}}, 0, DML_DTYPE_INVALID, \
        DML_DTYPE_INVALID, 0                                                 \
  }
#ifndef DML_RT_HAVE_EAGER_SPIRV /* built without the GPU code generator */
const dml_eager_kernel_t dml_eager_spirv[] = {NO_EAGER_KERNEL};
const uint32_t dml_eager_spirv_count = 0;
#endif
#ifndef DML_RT_HAVE_EAGER_PTX /* no clang-16 or no CUDA backend in this build */
const dml_eager_kernel_t dml_eager_ptx[] = {NO_EAGER_KERNEL};
const uint32_t dml_eager_ptx_count = 0;
#endif

#define ALIGN 64

struct dml_rt_device {
  const dml_rt_devmem_t *mem;    /* NULL: the CPU */
  void *h;                       /* mem's device */
  const dml_eager_kernel_t *lib; /* its eager kernel library (dml_eager_lib.h) */
  uint32_t n_lib;
  /* the library's rows of each op, in order: lib_first[op], then
   * lib_next[row] until -1 (a lookup reads its op's rows only, however many
   * dtypes the library holds: LIB_ROWS) */
  int32_t lib_first[DML_OP_COUNT_];
  int32_t *lib_next;
  char name[512];
  char id[64]; /* the name it was opened with ("vulkan:0", "cuda") */
  uint64_t bytes, n_storages;
  dml_rt_transfer_stats_t xfer; /* dml_rt_device_transfer_stats */
  void *scratch;
  size_t scratch_bytes;
};

typedef struct storage {
  dml_rt_device_t *dev;
  void *host; /* CPU */
  void *buf;  /* device buffer */
  uint64_t bytes;
  int refs;
} storage_t;

typedef struct slot {
  uint32_t gen;
  int live;
  int refs;
  uint32_t next_free;
  dml_dtype_t dtype;
  int32_t rank;
  int64_t dims[DML_MAX_RANK], strides[DML_MAX_RANK];
  int64_t offset;
  storage_t *st;
} slot_t;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static slot_t **g_slots;
static uint32_t g_n, g_cap, g_free = UINT32_MAX;

/* ---- helpers ---- */

static void c_strides(const int64_t *dims, int32_t rank, int64_t *st) {
  int64_t s = 1;
  for (int32_t d = rank - 1; d >= 0; d--) {
    st[d] = s;
    s *= dims[d] > 0 ? dims[d] : 1;
  }
}

static int is_contig(const slot_t *s) {
  int64_t want = 1;
  for (int32_t d = s->rank - 1; d >= 0; d--) {
    if (s->dims[d] != 1 && s->strides[d] != want) return 0;
    want *= s->dims[d];
  }
  return 1;
}

static int64_t numel(const slot_t *s) {
  return dml_dims_numel(s->dims, s->rank);
}

static const char *dims_s(const int64_t *dims, int32_t rank, char *buf, size_t cap) {
  return dml_dims_str(dims, rank, buf, cap);
}

/* Copies the elements of the strided view (dims, strides in elements)
 * starting at `src` into `dst` in C order. */
static void strided_copy(uint8_t *dst, const uint8_t *src, size_t es, int32_t rank,
                         const int64_t *dims, const int64_t *strides) {
  if (dml_dims_numel(dims, rank) <= 0) return;
  if (rank == 0) {
    memcpy(dst, src, es);
    return;
  }
  int64_t idx[DML_MAX_RANK] = {0};
  int64_t inner = dims[rank - 1], is = strides[rank - 1];
  for (;;) {
    const uint8_t *p = src;
    for (int32_t d = 0; d < rank - 1; d++) p += idx[d] * strides[d] * (int64_t)es;
    if (is == 1) {
      memcpy(dst, p, (size_t)inner * es);
      dst += (size_t)inner * es;
    } else {
      for (int64_t i = 0; i < inner; i++, dst += es)
        memcpy(dst, p + i * is * (int64_t)es, es);
    }
    int32_t d = rank - 2;
    while (d >= 0 && ++idx[d] == dims[d]) idx[d--] = 0;
    if (d < 0) return;
  }
}

static dml_status_t oom(const char *op) {
  return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, op, "out of memory");
}

/* Error s restated as op `id`'s (its name as the op), its reason followed
 * by " (on <on>)" unless `on` is NULL, details kept; DML_OK passes. */
static dml_status_t restate(dml_status_t s, dml_op_t id, const char *on) {
  if (!s) return s;
  dml_status_t r = dml_status_make(dml_status_code(s), dml_op_name(id), "%s%s%s%s",
                                   dml_status_reason(s), on ? " (on " : "", on ? on : "",
                                   on ? ")" : "");
  if (dml_status_details(s)[0]) r = dml_status_detail(r, "%s", dml_status_details(s));
  dml_status_free(s);
  return r;
}

/* Error s of the CPU's shape rule or kernel (dml_cpu_eager_outputs,
 * dml_cpu_run: op "rt.cpu.<Op>" or "<Op>") for eager op `id` run on device
 * d, as its caller reads it (docs/tensor.md "Errors"): every device's eager
 * path reads the CPU's shape rule, so the error is given the op's name as
 * its op and the device in its reason ("axis out of range (on vulkan:0)"),
 * details kept. DML_OK passes through. */
static inline dml_status_t rule_err(dml_status_t s, dml_op_t id,
                                    const dml_rt_device_t *d) {
  return s ? restate(s, id, d->name) : DML_OK; /* no call on success */
}

/* Error s of a step of op `id` run as other ops (CastLike as Cast, Sum as
 * Add, ...) named by op `id`, reason and details kept. */
static dml_status_t as_op(dml_status_t s, dml_op_t id) {
  return s && strcmp(dml_status_op(s), dml_op_name(id)) ? restate(s, id, NULL) : s;
}

/* Resolves handle t (under the lock). */
static dml_status_t get_locked(dml_rt_tensor_t t, const char *op, slot_t **out) {
  uint32_t idx = (uint32_t)(t.id & 0xffffffffu), gen = (uint32_t)(t.id >> 32);
  if (!idx)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op,
                           "no tensor (the zero handle)");
  slot_t *s = idx - 1 < g_n ? g_slots[idx - 1] : NULL;
  if (!s)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op,
                           "not a tensor handle (id %#llx)", (unsigned long long)t.id);
  if (!s->live || s->gen != gen)
    return dml_status_detail(
        dml_status_make(DML_STATUS_FAILED_PRECONDITION, op, "use after free"),
        "tensor handle %#llx was freed (slot %u is at generation %u, the handle names "
        "%u)",
        (unsigned long long)t.id, idx - 1, s->gen, gen);
  *out = s;
  return DML_OK;
}

static dml_status_t get(dml_rt_tensor_t t, const char *op, slot_t **out) {
  pthread_mutex_lock(&g_lock);
  dml_status_t s = get_locked(t, op, out);
  pthread_mutex_unlock(&g_lock);
  return s;
}

static void storage_drop_locked(storage_t *st) {
  if (--st->refs > 0) return;
  dml_rt_device_t *d = st->dev;
  if (d->mem)
    d->mem->free(d->h, st->buf);
  else
    free(st->host);
  d->bytes -= st->bytes;
  d->n_storages--;
  free(st);
}

static void kill_locked(slot_t *s, uint32_t idx) {
  s->live = 0;
  s->gen++;
  storage_drop_locked(s->st);
  s->st = NULL;
  s->next_free = g_free;
  g_free = idx;
}

/* A new slot viewing `st` (which gains a reference). */
static dml_status_t new_slot(storage_t *st, dml_dtype_t dt, int32_t rank,
                             const int64_t *dims, const int64_t *strides, int64_t offset,
                             dml_rt_tensor_t *out) {
  pthread_mutex_lock(&g_lock);
  uint32_t idx;
  if (g_free != UINT32_MAX) {
    idx = g_free;
    g_free = g_slots[idx]->next_free;
  } else {
    if (g_n == g_cap) {
      uint32_t cap = g_cap ? g_cap * 2 : 256;
      slot_t **p = (slot_t **)realloc(g_slots, cap * sizeof *p);
      if (!p) {
        pthread_mutex_unlock(&g_lock);
        return oom("tensor.create");
      }
      g_slots = p;
      g_cap = cap;
    }
    slot_t *s = (slot_t *)calloc(1, sizeof *s);
    if (!s) {
      pthread_mutex_unlock(&g_lock);
      return oom("tensor.create");
    }
    s->gen = 1;
    idx = g_n;
    g_slots[g_n++] = s;
  }
  slot_t *s = g_slots[idx];
  s->live = 1;
  s->refs = 1;
  s->dtype = dt;
  s->rank = rank;
  /* dims and strides may be NULL at rank 0 */
  if (rank) memcpy(s->dims, dims, sizeof(int64_t) * (size_t)rank);
  if (strides && rank)
    memcpy(s->strides, strides, sizeof(int64_t) * (size_t)rank);
  else
    c_strides(dims, rank, s->strides);
  s->offset = offset;
  s->st = st;
  st->refs++;
  out->id = ((uint64_t)s->gen << 32) | (uint64_t)(idx + 1);
  pthread_mutex_unlock(&g_lock);
  return DML_OK;
}

static dml_status_t check_shape(const char *op, dml_dtype_t dt, int32_t rank,
                                const int64_t *dims, uint64_t *out_bytes) {
  if (!dml_dtype_size(dt))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "invalid dtype %d", (int)dt);
  if (rank < 0 || rank > DML_MAX_RANK || (rank && !dims))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "rank %d is not in 0..%d",
                           (int)rank, DML_MAX_RANK);
  for (int32_t d = 0; d < rank; d++)
    if (dims[d] < 0) {
      char b[160];
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "negative dim %d in %s",
                             (int)d, dims_s(dims, rank, b, sizeof b));
    }
  int64_t n = dml_dims_numel(dims, rank);
  if (n < 0 || (uint64_t)n > UINT64_MAX / 2 / dml_dtype_size(dt))
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, op, "size overflows");
  *out_bytes = (uint64_t)n * dml_dtype_size(dt);
  return DML_OK;
}

/* Counts a transfer of `bytes` on device d: host -> device (`kind` 0),
 * device -> host (1), device -> device (2). */
static void count_xfer(dml_rt_device_t *d, int kind, uint64_t bytes) {
  pthread_mutex_lock(&g_lock);
  if (kind == 0) d->xfer.to_device_bytes += bytes, d->xfer.to_device_count++;
  if (kind == 1) d->xfer.to_host_bytes += bytes, d->xfer.to_host_count++;
  if (kind == 2) d->xfer.on_device_bytes += bytes, d->xfer.on_device_count++;
  pthread_mutex_unlock(&g_lock);
}

/* A new storage of `bytes` on d, with its contents from `src` when given
 * (host bytes). */
static dml_status_t storage_new(dml_rt_device_t *d, uint64_t bytes, const void *src,
                                const char *op, storage_t **out) {
  storage_t *st = (storage_t *)calloc(1, sizeof *st);
  if (!st) return oom(op);
  st->dev = d;
  st->bytes = bytes;
  if (!d->mem) {
    size_t sz = (size_t)((bytes + ALIGN - 1) / ALIGN * ALIGN);
    st->host = aligned_alloc(ALIGN, sz ? sz : ALIGN);
    if (!st->host) {
      free(st);
      return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, op,
                             "cannot allocate %llu bytes", (unsigned long long)bytes);
    }
    if (src && bytes) memcpy(st->host, src, (size_t)bytes);
  } else {
    dml_status_t s = d->mem->alloc(d->h, bytes, &st->buf);
    if (!s && src) s = d->mem->write(d->h, st->buf, 0, src, bytes);
    if (!s && src && bytes) count_xfer(d, 0, bytes);
    if (s) {
      if (st->buf) d->mem->free(d->h, st->buf);
      free(st);
      return dml_status_annotate(s, "%s on %s", op, d->name);
    }
  }
  pthread_mutex_lock(&g_lock);
  d->bytes += bytes;
  d->n_storages++;
  pthread_mutex_unlock(&g_lock);
  *out = st;
  return DML_OK;
}

/* A new contiguous tensor on d from host bytes `src` (NULL: uninitialised). */
static dml_status_t make(dml_rt_device_t *d, dml_dtype_t dt, int32_t rank,
                         const int64_t *dims, const void *src, const char *op,
                         dml_rt_tensor_t *out) {
  if (!d) return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "no device");
  if (!out) return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "no output handle");
  uint64_t bytes = 0;
  DML_RETURN_IF_ERROR(check_shape(op, dt, rank, dims, &bytes));
  storage_t *st = NULL;
  DML_RETURN_IF_ERROR(storage_new(d, bytes, src, op, &st));
  st->refs = 0;
  dml_status_t s = new_slot(st, dt, rank, dims, NULL, 0, out);
  if (s) {
    st->refs = 1;
    pthread_mutex_lock(&g_lock);
    storage_drop_locked(st);
    pthread_mutex_unlock(&g_lock);
  }
  return s;
}

/* The tensor's elements in C order on the host: *out points into its CPU
 * storage (contiguous) or at a malloc'd copy (*owned 1, the caller frees). */
static dml_status_t host_dense(const slot_t *s, const char *op, void **out, int *owned) {
  size_t es = dml_dtype_size(s->dtype);
  int64_t n = numel(s);
  *owned = 0;
  if (!s->st->dev->mem && is_contig(s)) {
    *out = (uint8_t *)s->st->host + s->offset * (int64_t)es;
    return DML_OK;
  }
  void *dst = malloc(n > 0 ? (size_t)n * es : 1);
  if (!dst) return oom(op);
  const uint8_t *base = (const uint8_t *)s->st->host;
  void *tmp = NULL;
  if (s->st->dev->mem) { /* the device's bytes, then the view's elements */
    dml_rt_device_t *d = s->st->dev;
    if (is_contig(s)) {
      dml_status_t e =
          d->mem->read(d->h, s->st->buf, (uint64_t)s->offset * es, dst, (uint64_t)n * es);
      if (!e && n > 0) count_xfer(d, 1, (uint64_t)n * es);
      if (e) free(dst);
      if (!e) *out = dst, *owned = 1;
      return e;
    }
    tmp = malloc(s->st->bytes ? (size_t)s->st->bytes : 1);
    dml_status_t e = tmp ? d->mem->read(d->h, s->st->buf, 0, tmp, s->st->bytes) : oom(op);
    if (!e && s->st->bytes) count_xfer(d, 1, s->st->bytes);
    if (e) {
      free(tmp);
      free(dst);
      return e;
    }
    base = (const uint8_t *)tmp;
  }
  strided_copy((uint8_t *)dst, base + s->offset * (int64_t)es, es, s->rank, s->dims,
               s->strides);
  free(tmp);
  *out = dst;
  *owned = 1;
  return DML_OK;
}

/* ---- devices ---- */

dml_status_t dml_rt_device_open(const char *name, dml_rt_device_t **out) {
  const char *op = "tensor.device_open";
  if (!out) return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "no output");
  const char *colon = name ? strchr(name, ':') : NULL;
  if (colon && (!colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1)))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op,
                           "device '%s': the index after ':' must be a number", name);
  int vk = name && (!strcmp(name, "vulkan") || !strncmp(name, "vulkan:", 7));
  int cu = name && (!strcmp(name, "cuda") || !strncmp(name, "cuda:", 5));
  DML_RETURN_IF_ERROR(dml_rt_device_check_built(op, name));
  const dml_rt_devmem_t *mem = vk   ? dml_rt_vulkan_devmem()
                               : cu ? dml_rt_cuda_devmem()
                                    : NULL;
  dml_rt_device_t *d = (dml_rt_device_t *)calloc(1, sizeof *d);
  if (!d) return oom(op);
  d->mem = mem;
  if (mem) {
    dml_status_t s = mem->open(name, &d->h);
    if (s) {
      free(d);
      return s;
    }
    snprintf(d->name, sizeof d->name, "%s", mem->device_name(d->h));
    d->lib = cu ? dml_eager_ptx : dml_eager_spirv;
    d->n_lib = cu ? dml_eager_ptx_count : dml_eager_spirv_count;
  }
  for (int o = 0; o < DML_OP_COUNT_; o++) d->lib_first[o] = -1;
  if (d->n_lib) {
    d->lib_next = (int32_t *)malloc(sizeof(int32_t) * d->n_lib);
    if (!d->lib_next) {
      d->mem->close(d->h);
      free(d);
      return oom(op);
    }
    for (uint32_t k = d->n_lib; k-- > 0;) {
      uint32_t o = (uint32_t)d->lib[k].op;
      d->lib_next[k] = o < DML_OP_COUNT_ ? d->lib_first[o] : -1;
      if (o < DML_OP_COUNT_) d->lib_first[o] = (int32_t)k;
    }
  }
  if (!mem) {
    snprintf(d->name, sizeof d->name, "cpu");
  }
  snprintf(d->id, sizeof d->id, "%s", name ? name : "cpu");
  *out = d;
  return DML_OK;
}

void dml_rt_device_close(dml_rt_device_t *d) {
  if (!d) return;
  pthread_mutex_lock(&g_lock);
  for (uint32_t i = 0; i < g_n; i++)
    if (g_slots[i]->live && g_slots[i]->st->dev == d) kill_locked(g_slots[i], i);
  pthread_mutex_unlock(&g_lock);
  if (d->mem) d->mem->close(d->h);
  free(d->lib_next);
  free(d->scratch);
  free(d);
}

const char *dml_rt_device_name(const dml_rt_device_t *d) {
  return d ? d->name : "";
}

uint64_t dml_rt_device_bytes(const dml_rt_device_t *d) {
  pthread_mutex_lock(&g_lock);
  uint64_t b = d ? d->bytes : 0;
  pthread_mutex_unlock(&g_lock);
  return b;
}

void dml_rt_device_transfer_stats(const dml_rt_device_t *d,
                                  dml_rt_transfer_stats_t *out) {
  if (!out) return;
  pthread_mutex_lock(&g_lock);
  if (d)
    *out = d->xfer;
  else
    memset(out, 0, sizeof *out);
  pthread_mutex_unlock(&g_lock);
}

uint64_t dml_rt_device_num_storages(const dml_rt_device_t *d) {
  pthread_mutex_lock(&g_lock);
  uint64_t b = d ? d->n_storages : 0;
  pthread_mutex_unlock(&g_lock);
  return b;
}

/* ---- creation ---- */

dml_status_t dml_rt_tensor_empty(dml_rt_device_t *d, dml_dtype_t dtype, int32_t rank,
                                 const int64_t *dims, dml_rt_tensor_t *out) {
  return make(d, dtype, rank, dims, NULL, "tensor.empty", out);
}

static dml_status_t filled(dml_rt_device_t *d, dml_dtype_t dt, int32_t rank,
                           const int64_t *dims, double v, const char *op,
                           dml_rt_tensor_t *out) {
  uint64_t bytes = 0;
  DML_RETURN_IF_ERROR(check_shape(op, dt, rank, dims, &bytes));
  if (d && !d->mem) { /* fill the new storage in place */
    DML_RETURN_IF_ERROR(make(d, dt, rank, dims, NULL, op, out));
    slot_t *s = NULL;
    DML_RETURN_IF_ERROR(get(*out, op, &s));
    size_t es = dml_dtype_size(dt);
    if (v == 0 && !signbit(v)) {
      memset(s->st->host, 0, (size_t)bytes);
    } else if (bytes) {
      uint8_t *p = (uint8_t *)s->st->host;
      dml_store_f64(dt, p, 0, v);
      for (size_t have = es; have < bytes; have *= 2)
        memcpy(p + have, p, have < bytes - have ? have : (size_t)bytes - have);
    }
    return DML_OK;
  }
  uint8_t *tmp = (uint8_t *)malloc(bytes ? (size_t)bytes : 1);
  if (!tmp) return oom(op);
  size_t es = dml_dtype_size(dt);
  if (bytes) dml_store_f64(dt, tmp, 0, v);
  for (size_t have = es; have < bytes; have *= 2)
    memcpy(tmp + have, tmp, have < bytes - have ? have : (size_t)bytes - have);
  dml_status_t s = make(d, dt, rank, dims, tmp, op, out);
  free(tmp);
  return s;
}

dml_status_t dml_rt_tensor_zeros(dml_rt_device_t *d, dml_dtype_t dtype, int32_t rank,
                                 const int64_t *dims, dml_rt_tensor_t *out) {
  return filled(d, dtype, rank, dims, 0.0, "tensor.zeros", out);
}

dml_status_t dml_rt_tensor_ones(dml_rt_device_t *d, dml_dtype_t dtype, int32_t rank,
                                const int64_t *dims, dml_rt_tensor_t *out) {
  return filled(d, dtype, rank, dims, 1.0, "tensor.ones", out);
}

dml_status_t dml_rt_tensor_full(dml_rt_device_t *d, dml_dtype_t dtype, int32_t rank,
                                const int64_t *dims, double value, dml_rt_tensor_t *out) {
  return filled(d, dtype, rank, dims, value, "tensor.full", out);
}

dml_status_t dml_rt_tensor_from_host(dml_rt_device_t *d, const dml_tensor_t *host,
                                     dml_rt_tensor_t *out) {
  const char *op = "tensor.from_host";
  if (!host) return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "no host tensor");
  uint64_t bytes = 0;
  DML_RETURN_IF_ERROR(check_shape(op, host->dtype, host->rank, host->dims, &bytes));
  if (bytes && !host->data)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "host data is NULL");
  return make(d, host->dtype, host->rank, host->dims, host->data, op, out);
}

/* Runs `op` on host tensors with the CPU kernels: the outputs are made on
 * d (in place on the CPU; through a host buffer then uploaded on a
 * device); their dtypes and dims are the op's eager rule's, or
 * fixed_out[0 .. n_out-1] where given. */
static dml_status_t run_host(dml_rt_device_t *d, dml_op_t opid, const dml_tensor_t *ins,
                             uint32_t n_in, const dml_attr_t *attrs, uint32_t n_attrs,
                             const dml_tensor_t *fixed_out, uint64_t rng_seed,
                             dml_rt_tensor_t *out, uint32_t n_out) {
  const char *opn = dml_op_name(opid);
  dml_tensor_t y[DML_MAX_EAGER_OUTPUTS];
  void *tmp[DML_MAX_EAGER_OUTPUTS] = {0};
  uint64_t cap[DML_MAX_EAGER_OUTPUTS];
  if (n_out < 1 || n_out > DML_MAX_EAGER_OUTPUTS)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, opn,
                           "eager ops write 1 to %d outputs, not %u",
                           DML_MAX_EAGER_OUTPUTS, n_out);
  memset(y, 0, sizeof y[0] * n_out);
  for (uint32_t i = 0; i < n_out; i++) cap[i] = UINT64_MAX;
  dml_cpu_call_t call;
  memset(&call, 0, sizeof call);
  call.op = opid;
  call.inputs = ins;
  call.n_inputs = n_in;
  call.outputs = y;
  call.n_outputs = n_out;
  call.attrs = attrs;
  call.n_attrs = n_attrs;
  call.rng_seed = rng_seed;
  if (fixed_out) {
    for (uint32_t i = 0; i < n_out; i++) y[i] = fixed_out[i];
  } else {
    call.output_capacity = cap;
    DML_RETURN_IF_ERROR(rule_err(dml_cpu_eager_outputs(&call), opid, d));
    call.output_capacity = NULL;
  }
  uint64_t bytes[DML_MAX_EAGER_OUTPUTS];
  for (uint32_t i = 0; i < n_out; i++)
    DML_RETURN_IF_ERROR(check_shape(opn, y[i].dtype, y[i].rank, y[i].dims, &bytes[i]));
  dml_status_t s = DML_OK;
  uint32_t made = 0; /* outputs made as tensors */
  for (uint32_t i = 0; i < n_out && !s; i++) {
    if (!d->mem) {
      slot_t *ys = NULL;
      s = make(d, y[i].dtype, y[i].rank, y[i].dims, NULL, opn, &out[i]);
      if (s) break;
      made++;
      s = get(out[i], opn, &ys);
      if (!s) y[i].data = ys->st->host;
    } else {
      tmp[i] = malloc(bytes[i] ? (size_t)bytes[i] : 1);
      if (!tmp[i]) s = oom(opn);
      y[i].data = tmp[i];
    }
  }
  size_t sb = s ? 0 : dml_cpu_scratch_bytes(&call);
  if (!s && sb > d->scratch_bytes) {
    void *p = aligned_alloc(ALIGN, (sb + ALIGN - 1) / ALIGN * ALIGN);
    if (!p) {
      s = oom(opn);
    } else {
      free(d->scratch);
      d->scratch = p;
      d->scratch_bytes = sb;
    }
  }
  call.scratch = d->scratch;
  call.scratch_bytes = d->scratch_bytes;
  if (!s) s = rule_err(dml_cpu_run(&call), opid, d);
  if (d->mem) /* upload the results */
    for (uint32_t i = 0; i < n_out && !s; i++) {
      s = make(d, y[i].dtype, y[i].rank, y[i].dims, tmp[i], opn, &out[i]);
      if (!s) made++;
    }
  if (s) /* the outputs made so far go */
    for (uint32_t i = 0; i < made; i++) dml_status_free(dml_rt_tensor_free(out[i]));
  for (uint32_t i = 0; i < n_out; i++) free(tmp[i]);
  return s;
}

dml_status_t dml_rt_tensor_arange(dml_rt_device_t *d, dml_dtype_t dtype, double start,
                                  double limit, double step, dml_rt_tensor_t *out) {
  const char *op = "tensor.arange";
  if (!d || !out) return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "no device");
  if (!dml_dtype_size(dtype) || dtype == DML_DTYPE_BOOL)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "invalid dtype %s",
                           dml_dtype_name(dtype));
  if (step == 0) return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "step is 0");
  uint8_t sc[3][8];
  dml_tensor_t in[3];
  double v[3] = {start, limit, step};
  for (int i = 0; i < 3; i++) {
    memset(&in[i], 0, sizeof in[i]);
    in[i].dtype = dtype;
    in[i].data = sc[i];
    dml_store_f64(dtype, sc[i], 0, v[i]);
  }
  return dml_status_annotate(run_host(d, DML_OP_RANGE, in, 3, NULL, 0, NULL, 0, out, 1),
                             "%s", op);
}

static dml_status_t random_t(dml_rt_device_t *d, dml_op_t opid, dml_dtype_t dt,
                             int32_t rank, const int64_t *dims, const char *n0, double v0,
                             const char *n1, double v1, uint64_t seed, const char *op,
                             dml_rt_tensor_t *out) {
  if (!d) return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "no device");
  uint64_t bytes = 0;
  DML_RETURN_IF_ERROR(check_shape(op, dt, rank, dims, &bytes));
  if (!dml_dtype_is_float(dt))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op,
                           "random tensors are float (f16, bf16, f32, f64), not %s",
                           dml_dtype_name(dt));
  dml_attr_t a[4];
  memset(a, 0, sizeof a);
  a[0].name = "shape", a[0].kind = DML_ATTR_INTS, a[0].n = (size_t)rank, a[0].ints = dims;
  a[1].name = "dtype", a[1].kind = DML_ATTR_INT, a[1].i = dml_dtype_onnx_code(dt);
  a[2].name = n0, a[2].kind = DML_ATTR_FLOAT, a[2].f = v0;
  a[3].name = n1, a[3].kind = DML_ATTR_FLOAT, a[3].f = v1;
  dml_tensor_t y;
  memset(&y, 0, sizeof y);
  y.dtype = dt;
  y.rank = rank;
  if (rank) memcpy(y.dims, dims, sizeof(int64_t) * (size_t)rank);
  return dml_status_annotate(run_host(d, opid, NULL, 0, a, 4, &y, seed, out, 1), "%s",
                             op);
}

dml_status_t dml_rt_tensor_random_uniform(dml_rt_device_t *d, dml_dtype_t dtype,
                                          int32_t rank, const int64_t *dims, double low,
                                          double high, uint64_t seed,
                                          dml_rt_tensor_t *out) {
  return random_t(d, DML_OP_RANDOM_UNIFORM, dtype, rank, dims, "low", low, "high", high,
                  seed, "tensor.random_uniform", out);
}

dml_status_t dml_rt_tensor_random_normal(dml_rt_device_t *d, dml_dtype_t dtype,
                                         int32_t rank, const int64_t *dims, double mean,
                                         double scale, uint64_t seed,
                                         dml_rt_tensor_t *out) {
  return random_t(d, DML_OP_RANDOM_NORMAL, dtype, rank, dims, "mean", mean, "scale",
                  scale, seed, "tensor.random_normal", out);
}

/* ---- reading ---- */

dml_status_t dml_rt_tensor_info(dml_rt_tensor_t t, dml_rt_tensor_info_t *out) {
  slot_t *s = NULL;
  pthread_mutex_lock(&g_lock);
  dml_status_t e = get_locked(t, "tensor.info", &s);
  if (!e) {
    memset(out, 0, sizeof *out);
    out->dtype = s->dtype;
    out->rank = s->rank;
    /* rank entries (a reused slot keeps a former tensor's beyond them) */
    memcpy(out->dims, s->dims, sizeof(int64_t) * (size_t)s->rank);
    memcpy(out->strides, s->strides, sizeof(int64_t) * (size_t)s->rank);
    out->offset = s->offset;
    out->contiguous = is_contig(s);
    out->refs = s->refs;
    out->device = s->st->dev;
  }
  pthread_mutex_unlock(&g_lock);
  return e;
}

dml_status_t dml_rt_tensor_to_host(dml_rt_tensor_t t, const dml_tensor_t *dst) {
  const char *op = "tensor.to_host";
  slot_t *s = NULL;
  DML_RETURN_IF_ERROR(get(t, op, &s));
  int same = dst && dst->dtype == s->dtype && dst->rank == s->rank;
  for (int32_t d = 0; same && d < s->rank; d++) same = dst->dims[d] == s->dims[d];
  if (!same) {
    char a[160], b[160];
    return dml_status_detail(
        dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "shape mismatch"),
        "tensor %s%s, host %s%s", dml_dtype_name(s->dtype),
        dims_s(s->dims, s->rank, a, sizeof a), dst ? dml_dtype_name(dst->dtype) : "none",
        dst ? dims_s(dst->dims, dst->rank, b, sizeof b) : "");
  }
  size_t es = dml_dtype_size(s->dtype);
  int64_t n = numel(s);
  if (n > 0 && !dst->data)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "host data is NULL");
  if (!s->st->dev->mem) {
    strided_copy((uint8_t *)dst->data,
                 (const uint8_t *)s->st->host + s->offset * (int64_t)es, es, s->rank,
                 s->dims, s->strides);
    return DML_OK;
  }
  void *p = NULL;
  int owned;
  DML_RETURN_IF_ERROR(host_dense(s, op, &p, &owned));
  if (n > 0) memcpy(dst->data, p, (size_t)n * es);
  if (owned) free(p);
  return DML_OK;
}

dml_status_t dml_rt_tensor_to_device(dml_rt_tensor_t t, dml_rt_device_t *d,
                                     dml_rt_tensor_t *out) {
  const char *op = "tensor.to_device";
  slot_t *s = NULL;
  DML_RETURN_IF_ERROR(get(t, op, &s));
  if (!d) return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "no device");
  if (d == s->st->dev && d->mem && is_contig(s)) { /* on the device */
    DML_RETURN_IF_ERROR(make(d, s->dtype, s->rank, s->dims, NULL, op, out));
    slot_t *o = NULL;
    dml_status_t e = get(*out, op, &o);
    size_t es = dml_dtype_size(s->dtype);
    if (!e)
      e = d->mem->copy(d->h, s->st->buf, (uint64_t)s->offset * es, o->st->buf, 0,
                       o->st->bytes);
    if (!e && o->st->bytes) count_xfer(d, 2, o->st->bytes);
    if (e) dml_rt_tensor_free(*out);
    return e;
  }
  void *p = NULL;
  int owned;
  DML_RETURN_IF_ERROR(host_dense(s, op, &p, &owned));
  dml_status_t e = make(d, s->dtype, s->rank, s->dims, p, op, out);
  if (owned) free(p);
  return e;
}

/* ---- views ---- */

static dml_status_t view(slot_t *s, int32_t rank, const int64_t *dims,
                         const int64_t *strides, int64_t offset, dml_rt_tensor_t *out) {
  return new_slot(s->st, s->dtype, rank, dims, strides, offset, out);
}

dml_status_t dml_rt_tensor_contiguous(dml_rt_tensor_t t, dml_rt_tensor_t *out) {
  const char *op = "tensor.contiguous";
  slot_t *s = NULL;
  DML_RETURN_IF_ERROR(get(t, op, &s));
  if (is_contig(s)) {
    DML_RETURN_IF_ERROR(dml_rt_tensor_retain(t));
    *out = t;
    return DML_OK;
  }
  return dml_status_annotate(dml_rt_tensor_to_device(t, s->st->dev, out), "%s", op);
}

/* Strides for `s` seen with dims nd[rank] without moving an element, when
 * they exist: each run of old dims merged or split into new ones must be
 * C-contiguous within itself (NumPy's _attempt_nocopy_reshape; size-1 dims
 * of `s` are dropped first). Returns 1 and sets ns, else 0. n > 0. */
static int nocopy_strides(const slot_t *s, int32_t rank, const int64_t *nd, int64_t *ns) {
  int64_t od[DML_MAX_RANK], os[DML_MAX_RANK];
  int32_t on = 0;
  for (int32_t d = 0; d < s->rank; d++)
    if (s->dims[d] != 1) od[on] = s->dims[d], os[on++] = s->strides[d];
  int32_t oi = 0, oj = 1, ni = 0, nj = 1;
  int64_t last = 1;
  while (ni < rank && oi < on) {
    int64_t np = nd[ni], opr = od[oi];
    while (np != opr) {
      if (np < opr) {
        if (nj >= rank) return 0;
        np *= nd[nj++];
      } else {
        if (oj >= on) return 0;
        opr *= od[oj++];
      }
    }
    for (int32_t k = oi; k < oj - 1; k++)
      if (os[k] != od[k + 1] * os[k + 1]) return 0;
    ns[nj - 1] = os[oj - 1];
    for (int32_t k = nj - 1; k > ni; k--) ns[k - 1] = ns[k] * nd[k];
    last = ns[ni];
    ni = nj++;
    oi = oj++;
  }
  for (int32_t k = ni; k < rank; k++) ns[k] = last; /* trailing size-1 dims */
  return oi >= on;
}

dml_status_t dml_rt_tensor_reshape(dml_rt_tensor_t t, int32_t rank, const int64_t *dims,
                                   dml_rt_tensor_t *out) {
  const char *op = "tensor.reshape";
  slot_t *s = NULL;
  DML_RETURN_IF_ERROR(get(t, op, &s));
  if (rank < 0 || rank > DML_MAX_RANK || (rank && !dims))
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "rank %d is not in 0..%d",
                           (int)rank, DML_MAX_RANK);
  int64_t nd[DML_MAX_RANK], known = 1, n = numel(s);
  int32_t infer = -1;
  char a[160], b[160];
  for (int32_t d = 0; d < rank; d++) {
    nd[d] = dims[d];
    if (dims[d] == -1 && infer < 0) {
      infer = d;
      continue;
    }
    if (dims[d] < 0) infer = DML_MAX_RANK, known = -1;
    known *= dims[d] > 0 ? dims[d] : 0;
  }
  if (infer >= 0 && infer < DML_MAX_RANK && known > 0 && n % known == 0)
    nd[infer] = n / known;
  int ok =
      infer < DML_MAX_RANK && dml_dims_numel(nd, rank) == n && (infer < 0 || known > 0);
  if (!ok)
    return dml_status_detail(
        dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "shape mismatch"),
        "tensor %s (%lld elements), new shape %s", dims_s(s->dims, s->rank, a, sizeof a),
        (long long)n, dims_s(dims, rank, b, sizeof b));
  if (is_contig(s)) return view(s, rank, nd, NULL, s->offset, out);
  int64_t ns[DML_MAX_RANK];
  if (n > 0 && nocopy_strides(s, rank, nd, ns))
    return view(s, rank, nd, ns, s->offset, out);
  DML_RETURN_IF_ERROR(dml_rt_tensor_to_device(t, s->st->dev, out));
  slot_t *o = NULL;
  DML_RETURN_IF_ERROR(get(*out, op, &o));
  o->rank = rank;
  memcpy(o->dims, nd, sizeof(int64_t) * (size_t)rank);
  c_strides(nd, rank, o->strides);
  return DML_OK;
}

dml_status_t dml_rt_tensor_slice(dml_rt_tensor_t t, uint32_t n_axes, const int64_t *axes,
                                 const int64_t *starts, const int64_t *ends,
                                 const int64_t *steps, dml_rt_tensor_t *out) {
  const char *op = "tensor.slice";
  slot_t *s = NULL;
  DML_RETURN_IF_ERROR(get(t, op, &s));
  int64_t dims[DML_MAX_RANK], st[DML_MAX_RANK], off = s->offset;
  memcpy(dims, s->dims, sizeof dims);
  memcpy(st, s->strides, sizeof st);
  int seen[DML_MAX_RANK] = {0};
  for (uint32_t i = 0; i < n_axes; i++) {
    int64_t ax = axes ? axes[i] : (int64_t)i;
    if (ax < 0) ax += s->rank;
    if (ax < 0 || ax >= s->rank || seen[ax])
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op,
                             "axis %lld is out of range for rank %d or repeated",
                             (long long)(axes ? axes[i] : (int64_t)i), (int)s->rank);
    seen[ax] = 1;
    int64_t n = s->dims[ax], k = steps ? steps[i] : 1, b = starts[i], e = ends[i];
    if (k == 0) return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "step is 0");
    if (b < 0) b += n;
    if (e < 0) e += n;
    int64_t cnt;
    if (k > 0) {
      b = b < 0 ? 0 : b > n ? n : b;
      e = e < 0 ? 0 : e > n ? n : e;
      cnt = e > b ? (e - b + k - 1) / k : 0;
    } else {
      b = b < 0 ? -1 : b > n - 1 ? n - 1 : b;
      e = e < -1 ? -1 : e > n - 1 ? n - 1 : e;
      cnt = b > e ? (b - e + (-k) - 1) / (-k) : 0;
    }
    if (cnt > 0) off += b * st[ax];
    dims[ax] = cnt;
    if (cnt > 1) st[ax] *= k; /* |k| < n here: no overflow */
  }
  return view(s, s->rank, dims, st, off, out);
}

dml_status_t dml_rt_tensor_transpose(dml_rt_tensor_t t, const int64_t *perm,
                                     dml_rt_tensor_t *out) {
  const char *op = "tensor.transpose";
  slot_t *s = NULL;
  DML_RETURN_IF_ERROR(get(t, op, &s));
  int64_t dims[DML_MAX_RANK], st[DML_MAX_RANK];
  int seen[DML_MAX_RANK] = {0};
  for (int32_t d = 0; d < s->rank; d++) {
    int64_t p = perm ? perm[d] : s->rank - 1 - d;
    if (p < 0 || p >= s->rank || seen[p])
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op,
                             "perm is not a permutation of 0..%d", (int)s->rank - 1);
    seen[p] = 1;
    dims[d] = s->dims[p];
    st[d] = s->strides[p];
  }
  return view(s, s->rank, dims, st, s->offset, out);
}

dml_status_t dml_rt_tensor_expand(dml_rt_tensor_t t, int32_t rank, const int64_t *dims,
                                  dml_rt_tensor_t *out) {
  const char *op = "tensor.expand";
  slot_t *s = NULL;
  DML_RETURN_IF_ERROR(get(t, op, &s));
  int64_t st[DML_MAX_RANK];
  int ok = rank >= s->rank && rank <= DML_MAX_RANK;
  for (int32_t d = 0; ok && d < rank; d++) {
    int32_t sd = d - (rank - s->rank);
    if (dims[d] < 0) ok = 0;
    if (sd < 0) {
      st[d] = 0;
    } else if (s->dims[sd] == dims[d]) {
      st[d] = s->strides[sd];
    } else if (s->dims[sd] == 1) {
      st[d] = 0;
    } else {
      ok = 0;
    }
  }
  if (!ok) {
    char a[160], b[160];
    return dml_status_detail(
        dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "shape mismatch"),
        "tensor %s does not broadcast to %s", dims_s(s->dims, s->rank, a, sizeof a),
        dims_s(dims, rank, b, sizeof b));
  }
  return view(s, rank, dims, st, s->offset, out);
}

/* ---- lifetime ---- */

dml_status_t dml_rt_tensor_retain(dml_rt_tensor_t t) {
  slot_t *s = NULL;
  pthread_mutex_lock(&g_lock);
  dml_status_t e = get_locked(t, "tensor.retain", &s);
  if (!e) s->refs++;
  pthread_mutex_unlock(&g_lock);
  return e;
}

dml_status_t dml_rt_tensor_release(dml_rt_tensor_t t) {
  slot_t *s = NULL;
  pthread_mutex_lock(&g_lock);
  dml_status_t e = get_locked(t, "tensor.release", &s);
  if (!e && --s->refs == 0) kill_locked(s, (uint32_t)(t.id & 0xffffffffu) - 1);
  pthread_mutex_unlock(&g_lock);
  return e;
}

dml_status_t dml_rt_tensor_free(dml_rt_tensor_t t) {
  slot_t *s = NULL;
  pthread_mutex_lock(&g_lock);
  dml_status_t e = get_locked(t, "tensor.free", &s);
  if (!e) kill_locked(s, (uint32_t)(t.id & 0xffffffffu) - 1);
  pthread_mutex_unlock(&g_lock);
  return e;
}

/* ---- eager ops ---- */

#define MAX_OP_INPUTS 16

/* Op names hashed once (FNV-1a, open addressing): dml_op_from_name's
 * linear scan was a tenth of a small op's time. */
#define OP_HASH 512
_Static_assert(DML_OP_COUNT_ < OP_HASH / 2, "the op hash needs room");
static dml_op_t g_op_hash[OP_HASH];
static pthread_once_t g_op_once = PTHREAD_ONCE_INIT;

static uint32_t fnv(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
  return h;
}

static void op_hash_init(void) {
  for (int i = 1; i < DML_OP_COUNT_; i++) {
    uint32_t h = fnv(dml_op_name((dml_op_t)i)) % OP_HASH;
    while (g_op_hash[h]) h = (h + 1) % OP_HASH;
    g_op_hash[h] = (dml_op_t)i;
  }
}

static dml_op_t op_lookup(const char *name) {
  pthread_once(&g_op_once, op_hash_init);
  for (uint32_t h = fnv(name) % OP_HASH; g_op_hash[h]; h = (h + 1) % OP_HASH)
    if (!strcmp(dml_op_name(g_op_hash[h]), name)) return g_op_hash[h];
  return DML_OP_INVALID;
}

/* ---- eager ops on a device (the eager kernel library, dml_eager_lib.h) ---- */

/* Each row j (int32_t) of device dev's library for op `id`, in order. */
#define LIB_ROWS(dev, id, j) \
  for (int32_t j = (dev)->lib_first[(id)]; j >= 0; j = (dev)->lib_next[j])

/* The library's most general kernel for op `id` with n_in operands of
 * dtype dt giving odt, or -1 (the callers then pick a narrower form that
 * fits). */
static int32_t eager_find_t(const dml_rt_device_t *dev, dml_op_t id, uint32_t n_in,
                            dml_dtype_t dt, dml_dtype_t odt) {
  int32_t best = -1; /* the most general form (largest max_len) */
  LIB_ROWS(dev, id, k)
  if (dev->lib[k].n_inputs == n_in && dev->lib[k].dtype == (uint32_t)dt &&
      dev->lib[k].out_dtype == (uint32_t)odt &&
      (best < 0 || dev->lib[k].max_len > dev->lib[best].max_len))
    best = (int32_t)k;
  return best;
}

static int32_t eager_find(const dml_rt_device_t *dev, dml_op_t id, uint32_t n_in) {
  return eager_find_t(dev, id, n_in, DML_DTYPE_F32, DML_DTYPE_F32);
}

/* Whether the library holds op `id` with n_in operands for any dtype. */
static int eager_has(const dml_rt_device_t *dev, dml_op_t id, uint32_t n_in) {
  LIB_ROWS(dev, id, k)
  if (dev->lib[k].n_inputs == n_in) return 1;
  return 0;
}

/* The attribute words of op `id` (dml_eager_attr_words: the f32 values
 * dml_eager_lib.h DML_EAGER_PC_ATTR lists) from `attrs`.
 * Errors: INVALID_ARGUMENT for a value the op does not accept
 * (dml_ew_attrs'; BitShift's direction other than LEFT and RIGHT). */
static dml_status_t eager_attr_values(dml_op_t id, const dml_attr_t *attrs,
                                      uint32_t n_attrs, float out[DML_EW_MAX_ATTRS]) {
  double av[DML_EW_MAX_ATTRS] = {0};
  if (id == DML_OP_IS_INF) {
    av[0] = dml_attr_int(attrs, n_attrs, "detect_positive", 1) != 0;
    av[1] = dml_attr_int(attrs, n_attrs, "detect_negative", 1) != 0;
  } else if (id == DML_OP_BIT_SHIFT) {
    const char *dir = dml_attr_string(attrs, n_attrs, "direction", "");
    if (strcmp(dir, "LEFT") && strcmp(dir, "RIGHT"))
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, dml_op_name(id),
                             "direction is \"%s\", not \"LEFT\" or \"RIGHT\"", dir);
    av[0] = !strcmp(dir, "LEFT");
  } else if (id == DML_OP_SHRINK) { /* ONNX Shrink's defaults */
    av[0] = dml_attr_float(attrs, n_attrs, "lambd", 0.5);
    av[1] = dml_attr_float(attrs, n_attrs, "bias", 0.0);
  } else {
    DML_RETURN_IF_ERROR(dml_ew_attrs(id, attrs, n_attrs, av));
  }
  for (int i = 0; i < DML_EW_MAX_ATTRS; i++) out[i] = (float)av[i];
  return DML_OK;
}

/* Why the library kernel (built with the op's default attributes, Cast's
 * `to` its row's; the ops of dml_eager_attr_words take theirs at dispatch,
 * DML_EAGER_PC_ATTR) does not compute op `id` with `attrs`, or NULL. */
static dml_status_t eager_attrs_check(dml_op_t id, const dml_attr_t *attrs,
                                      uint32_t n_attrs) {
  const char *opn = dml_op_name(id);
  if (dml_eager_attr_words(id)) { /* any value the op accepts */
    float av[DML_EW_MAX_ATTRS];
    return eager_attr_values(id, attrs, n_attrs, av);
  }
  for (uint32_t i = 0; i < n_attrs; i++) {
    if (id == DML_OP_CAST && attrs[i].name && !strcmp(attrs[i].name, "to"))
      continue; /* the kernel's out_dtype (its row was picked by it) */
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, opn,
                           "attribute '%s' is not taken by the GPU's eager kernel in "
                           "this version",
                           attrs[i].name ? attrs[i].name : "");
  }
  return DML_OK;
}

/* Runs elementwise op `id` on device tensors x[0 .. n_in-1] with the
 * library's kernel `k`: output dims from the op's shape rule (the CPU's,
 * dml_cpu_eager_outputs), inputs read in place through their strides (0 on
 * broadcast dims), dims merged where every operand allows it. */
static dml_status_t eager_gpu(dml_rt_device_t *dev, dml_op_t id, int32_t k,
                              slot_t *const *x, uint32_t n_in, const dml_attr_t *attrs,
                              uint32_t n_attrs, dml_rt_tensor_t *out) {
  const char *opn = dml_op_name(id);
  dml_tensor_t in[DML_EAGER_MAX_INPUTS], y;
  memset(in, 0, sizeof in);
  memset(&y, 0, sizeof y);
  for (uint32_t j = 0; j < n_in; j++) {
    in[j].dtype = x[j]->dtype;
    in[j].rank = x[j]->rank;
    memcpy(in[j].dims, x[j]->dims, sizeof(int64_t) * (size_t)x[j]->rank);
  }
  uint64_t cap = UINT64_MAX;
  dml_cpu_call_t call;
  memset(&call, 0, sizeof call);
  call.op = id;
  call.inputs = in;
  call.n_inputs = n_in;
  call.outputs = &y;
  call.n_outputs = 1;
  call.output_capacity = &cap;
  call.attrs = attrs;
  call.n_attrs = n_attrs;
  DML_RETURN_IF_ERROR(rule_err(dml_cpu_eager_outputs(&call), id, dev));
  if (y.dtype != (dml_dtype_t)dev->lib[k].out_dtype)
    return dml_status_make(
        DML_STATUS_UNIMPLEMENTED, opn, "the eager kernel writes %s; this op gives %s",
        dml_dtype_name((dml_dtype_t)dev->lib[k].out_dtype), dml_dtype_name(y.dtype));
  /* elements of each operand's dtype (its offsets and strides count them) */
  uint64_t es[DML_EAGER_MAX_INPUTS];
  for (uint32_t j = 0; j < n_in; j++)
    es[j] = dml_dtype_size(dml_eager_in_dtype(&dev->lib[k], j));
  /* dims and per-operand strides over y's index space (operand 0: y) */
  int32_t r = y.rank;
  int64_t dims[DML_MAX_RANK], st[1 + DML_EAGER_MAX_INPUTS][DML_MAX_RANK];
  c_strides(y.dims, r, st[0]);
  for (int32_t d = 0; d < r; d++) {
    dims[d] = y.dims[d];
    for (uint32_t j = 0; j < n_in; j++) {
      int32_t xd = d - (r - x[j]->rank);
      st[1 + j][d] = xd < 0 || x[j]->dims[xd] == 1 ? 0 : x[j]->strides[xd];
    }
  }
  /* merge dim d into d + 1 where every operand is linear across them; drop
   * dims of 1 */
  int64_t md[DML_MAX_RANK], ms[1 + DML_EAGER_MAX_INPUTS][DML_MAX_RANK];
  int32_t mr = 0;
  for (int32_t d = 0; d < r; d++) {
    if (dims[d] == 1) continue;
    int merge = mr > 0;
    for (uint32_t j = 0; merge && j <= n_in; j++)
      merge = ms[j][mr - 1] == st[j][d] * dims[d];
    if (merge) {
      md[mr - 1] *= dims[d];
      for (uint32_t j = 0; j <= n_in; j++) ms[j][mr - 1] = st[j][d];
      continue;
    }
    md[mr] = dims[d];
    for (uint32_t j = 0; j <= n_in; j++) ms[j][mr] = st[j][d];
    mr++;
  }
  if (mr > (int32_t)DML_EAGER_RANK) {
    char b[160];
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, opn,
                           "the GPU's eager kernels index %u dims; %s keeps %d after "
                           "merging (make the inputs contiguous)",
                           DML_EAGER_RANK, dims_s(y.dims, y.rank, b, sizeof b), (int)mr);
  }
  int64_t n = dml_dims_numel(y.dims, y.rank);
  if (n > (int64_t)UINT32_MAX)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, opn,
                           "%lld elements: the GPU's eager kernels index below 2^32",
                           (long long)n);
  DML_RETURN_IF_ERROR(make(dev, y.dtype, y.rank, y.dims, NULL, opn, out));
  if (n == 0) return DML_OK;
  slot_t *ys = NULL;
  dml_status_t e = get(*out, opn, &ys);
  /* binding 1: the inputs' common buffer, or the spans they read copied
   * into one temporary buffer (16-byte aligned each) */
  int shared = 1;
  for (uint32_t j = 1; j < n_in; j++)
    shared = shared && x[j]->st == x[0]->st && es[j] == es[0];
  uint32_t pc[DML_EAGER_PC_WORDS];
  memset(pc, 0, sizeof pc);
  dml_rt_devmem_copy_t cp[DML_EAGER_MAX_INPUTS];
  uint32_t n_cp = 0;
  uint64_t pack = 0;
  for (uint32_t j = 0; j < n_in && !e; j++) {
    int64_t lo = x[j]->offset, hi = x[j]->offset;
    for (int32_t d = 0; d < mr; d++) {
      int64_t span = ms[1 + j][d] * (md[d] - 1);
      if (span < 0)
        lo += span;
      else
        hi += span;
    }
    int64_t off = x[j]->offset;
    if (!shared) {
      cp[n_cp].src = x[j]->st->buf;
      cp[n_cp].src_off = (uint64_t)lo * es[j];
      cp[n_cp].dst_off = pack; /* 16-byte aligned: whole elements of any dtype */
      cp[n_cp].bytes = (uint64_t)(hi - lo + 1) * es[j];
      off = (int64_t)(pack / es[j]) + (x[j]->offset - lo);
      hi = (int64_t)(pack / es[j]) + (hi - lo);
      pack = (pack + cp[n_cp].bytes + 15) & ~(uint64_t)15;
      n_cp++;
    }
    if (hi > (int64_t)UINT32_MAX) {
      e = dml_status_make(DML_STATUS_UNIMPLEMENTED, opn,
                          "input %u reaches element %lld: the GPU's eager kernels index "
                          "below 2^32",
                          j, (long long)hi);
      break;
    }
    uint32_t w = DML_EAGER_PC_IN + j * DML_EAGER_PC_IN_WORDS;
    pc[w] = (uint32_t)off;
    /* dims right-aligned in the kernel's DML_EAGER_RANK; strides wrap
     * modulo 2^32 (a negative step's), as the kernel's indices do */
    for (int32_t d = 0; d < mr; d++)
      pc[w + 1 + (DML_EAGER_RANK - (uint32_t)mr) + (uint32_t)d] = (uint32_t)ms[1 + j][d];
  }
  for (uint32_t d = 0; d < DML_EAGER_RANK; d++)
    pc[DML_EAGER_PC_DIMS + d] = d < DML_EAGER_RANK - (uint32_t)mr
                                    ? 1u
                                    : (uint32_t)md[d - (DML_EAGER_RANK - (uint32_t)mr)];
  /* the form indexing the fewest dims that hold the merged ones (the
   * flat form has no index division: lavapipe scalarizes it) */
  LIB_ROWS(dev, id, j) {
    const dml_eager_kernel_t *E = &dev->lib[j];
    if (E->kind == DML_EAGER_EW && E->n_inputs == n_in && E->dtype == dev->lib[k].dtype &&
        E->out_dtype == dev->lib[k].out_dtype && E->max_len >= (mr ? mr : 1) &&
        E->max_len < dev->lib[k].max_len)
      k = (int32_t)j;
  }
  uint64_t groups = ((uint64_t)n + DML_EAGER_LOCAL - 1) / DML_EAGER_LOCAL;
  if (groups > 65535) groups = 65535;
  uint64_t stride = groups * DML_EAGER_LOCAL;
  pc[DML_EAGER_PC_N] = (uint32_t)n;
  pc[DML_EAGER_PC_STRIDE] = (uint32_t)stride;
  pc[DML_EAGER_PC_ITERS] = (uint32_t)(((uint64_t)n + stride - 1) / stride);
  if (!e && dml_eager_attr_words(id)) { /* the attribute values, f32 bits */
    float av[DML_EW_MAX_ATTRS];
    e = eager_attr_values(id, attrs, n_attrs, av);
    if (!e) memcpy(&pc[DML_EAGER_PC_ATTR], av, sizeof av);
  }
  if (!e)
    e = dev->mem->run_kernel(dev->h, (uint32_t)k, ys->st->buf,
                             shared ? x[0]->st->buf : NULL, cp, n_cp, pack, pc,
                             DML_EAGER_PC_WORDS, (uint32_t)groups);
  if (e) {
    dml_status_free(dml_rt_tensor_free(*out));
    return dml_status_annotate(e, "%s on %s", opn, dev->name);
  }
  return DML_OK;
}

/* Runs the library's row kernel of op `id` (kind DML_EAGER_REDUCE, the
 * dtype and select_last_index of row k's: a reduction over axis 1 of src
 * [outer, len, inner], contiguous from src's offset; Softmax/LogSoftmax
 * over rows of len, inner 1) into ys (contiguous, offset 0): the form for
 * rows of this length (the short-row form, one invocation per row, when
 * its grid fits one dispatch), its grid from the kernel's `items`. */
static dml_status_t run_rows(dml_rt_device_t *dev, dml_op_t id, int32_t k,
                             uint32_t sel_last, const slot_t *src, int64_t outer,
                             int64_t len, int64_t inner, const slot_t *ys) {
  const char *opn = dml_op_name(id);
  const int64_t n = outer * len * inner;
  dml_status_t e = DML_OK;
  int64_t sym[DML_EAGER_REDUCE_SYMS] = {outer, len, inner};
  /* the kernel for rows of this length: the short-row form (one
   * invocation per row) when it fits in one dispatch */
  LIB_ROWS(dev, id, j) /* any length first */
  if (dev->lib[j].kind == DML_EAGER_REDUCE && dev->lib[j].dtype == dev->lib[k].dtype &&
      dev->lib[j].select_last == sel_last && dev->lib[j].max_len > dev->lib[k].max_len)
    k = (int32_t)j;
  LIB_ROWS(dev, id, j) {
    const dml_eager_kernel_t *E = &dev->lib[j];
    if (E->kind == DML_EAGER_REDUCE && E->dtype == dev->lib[k].dtype &&
        E->select_last == sel_last && E->max_len >= len &&
        E->max_len < dev->lib[k].max_len && outer * inner <= (int64_t)65535 * E->local[0])
      k = (int32_t)j;
  }
  const dml_eager_kernel_t *K = &dev->lib[k];
  int64_t items = K->items[0].c;
  if (K->items[0].sym >= 0 && K->items[0].sym < (int32_t)DML_EAGER_REDUCE_SYMS)
    items *= sym[K->items[0].sym];
  for (uint32_t b = 0; b < DML_EAGER_REDUCE_SYMS; b++)
    if (K->items[0].more & (1u << b)) items *= sym[b];
  items += K->items[0].c0;
  uint64_t groups = items > 0 ? ((uint64_t)items + K->local[0] - 1) / K->local[0] : 0;
  /* a grid capped at 65,535 row workgroups: as many as there are rows */
  if (K->max_len > 256 && groups > (uint64_t)(outer * inner))
    groups = (uint64_t)(outer * inner);
  uint32_t pc[DML_EAGER_REDUCE_SYMS] = {(uint32_t)outer, (uint32_t)len, (uint32_t)inner};
  /* x at element 0 of binding 1 (the kernel's planned offset) */
  const uint64_t es = dml_dtype_size(src->dtype);
  dml_rt_devmem_copy_t cp = {src->st->buf, (uint64_t)src->offset * es, 0,
                             (uint64_t)n * es};
  if (!e && outer * inner > 0 && groups > 65535)
    e = dml_status_make(DML_STATUS_UNIMPLEMENTED, opn, "%llu workgroups",
                        (unsigned long long)groups);
  if (!e && outer * inner > 0)
    e = dev->mem->run_kernel(dev->h, (uint32_t)k, ys->st->buf,
                             src->offset ? NULL : src->st->buf, &cp, src->offset ? 1 : 0,
                             src->offset ? (uint64_t)n * es : 0, pc,
                             DML_EAGER_REDUCE_SYMS, (uint32_t)groups);
  return e;
}

/* Runs reduction `id` (attributes axes, keepdims, noop_with_empty_axes) on
 * device tensor `xh` (slot x) with the library's kernel `k` (the compiled
 * path's kernel for x [S0, S1, S2] reduced over axis 1): x is viewed as
 * [outer, reduced, inner] when it is contiguous and its reduced axes are
 * consecutive, else first copied (the Identity kernel) with its kept axes
 * before its reduced ones. */
static dml_status_t eager_reduce(dml_rt_device_t *dev, dml_op_t id, int32_t k,
                                 dml_rt_tensor_t xh, slot_t *x, const dml_attr_t *attrs,
                                 uint32_t n_attrs, dml_rt_tensor_t *out) {
  const char *opn = dml_op_name(id);
  dml_tensor_t in, y;
  memset(&in, 0, sizeof in);
  memset(&y, 0, sizeof y);
  in.dtype = x->dtype;
  in.rank = x->rank;
  memcpy(in.dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
  /* the rule reads x's dims only (dml_cpu_output_dims_reads), but refuses
   * an input without data: its elements stay on the device, a host address
   * that is never read stands in */
  if (dml_cpu_output_dims_reads(id, 0) > 0) /* -1: no value rule (ArgMax's) */
    return dml_status_make(DML_STATUS_INTERNAL, opn, "the shape rule reads x's values");
  in.data = x;
  uint64_t cap = UINT64_MAX;
  dml_cpu_call_t call;
  memset(&call, 0, sizeof call);
  call.op = id;
  call.inputs = &in;
  call.n_inputs = 1;
  call.outputs = &y;
  call.n_outputs = 1;
  call.output_capacity = &cap;
  call.attrs = attrs;
  call.n_attrs = n_attrs;
  /* the shape rule's checks */
  DML_RETURN_IF_ERROR(rule_err(dml_cpu_eager_outputs(&call), id, dev));
  /* ArgMax/ArgMin: one axis (`axis`, default 0), the row of their
   * select_last_index */
  const int arg = id == DML_OP_ARG_MAX || id == DML_OP_ARG_MIN;
  for (uint32_t i = 0; i < n_attrs; i++)
    if (attrs[i].name &&
        (arg ? strcmp(attrs[i].name, "axis") && strcmp(attrs[i].name, "keepdims") &&
                   strcmp(attrs[i].name, "select_last_index")
             : strcmp(attrs[i].name, "axes") && strcmp(attrs[i].name, "keepdims") &&
                   strcmp(attrs[i].name, "noop_with_empty_axes")))
      return dml_status_make(DML_STATUS_UNIMPLEMENTED, opn,
                             "attribute '%s' is not taken by the GPU's eager kernel in "
                             "this version",
                             attrs[i].name);
  uint32_t sel_last = 0;
  if (arg) {
    sel_last = dml_attr_int(attrs, n_attrs, "select_last_index", 0) != 0;
    int32_t ka = -1;
    LIB_ROWS(dev, id, j)
    if (dev->lib[j].kind == DML_EAGER_REDUCE && dev->lib[j].dtype == dev->lib[k].dtype &&
        dev->lib[j].select_last == sel_last)
      ka = (int32_t)j;
    if (ka < 0)
      return dml_status_make(DML_STATUS_UNIMPLEMENTED, opn,
                             "no eager kernel for select_last_index %u", sel_last);
    k = ka;
  }
  const dml_attr_t *ax = dml_attr_find(attrs, n_attrs, "axes");
  int red[DML_MAX_RANK] = {0}, n_red = 0;
  for (size_t i = 0; ax && ax->kind == DML_ATTR_INTS && i < ax->n; i++) {
    int64_t a = ax->ints[i] < 0 ? ax->ints[i] + x->rank : ax->ints[i];
    if (a >= 0 && a < x->rank && !red[a]) red[a] = 1, n_red++;
  }
  if (arg) { /* the shape rule checked the axis */
    int64_t a = dml_attr_int(attrs, n_attrs, "axis", 0);
    if (a < 0) a += x->rank;
    if (a >= 0 && a < x->rank) red[a] = 1, n_red = 1;
  }
  if (!n_red) {
    if (dml_attr_int(attrs, n_attrs, "noop_with_empty_axes", 0)) { /* y = x */
      int32_t ki = eager_find_t(dev, DML_OP_IDENTITY, 1, x->dtype, x->dtype);
      if (ki < 0)
        return dml_status_make(DML_STATUS_UNIMPLEMENTED, opn, "no Identity kernel");
      return eager_gpu(dev, DML_OP_IDENTITY, ki, &x, 1, NULL, 0, out);
    }
    for (int32_t d = 0; d < x->rank; d++) red[d] = 1;
    n_red = x->rank;
  }
  int64_t outer = 1, len = 1, inner = 1;
  int32_t first = -1, last = -1;
  for (int32_t d = 0; d < x->rank; d++)
    if (red[d]) {
      if (first < 0) first = d;
      last = d;
    }
  int direct = is_contig(x) && (first < 0 || last - first + 1 == n_red);
  dml_rt_tensor_t tmp = DML_RT_TENSOR_NONE;
  slot_t *src = x;
  if (!direct) { /* kept axes first, reduced ones last, made contiguous */
    int64_t perm[DML_MAX_RANK];
    int32_t np = 0;
    for (int32_t d = 0; d < x->rank; d++)
      if (!red[d]) perm[np++] = d;
    for (int32_t d = 0; d < x->rank; d++)
      if (red[d]) perm[np++] = d;
    dml_rt_tensor_t view;
    DML_RETURN_IF_ERROR(dml_rt_tensor_transpose(xh, perm, &view));
    dml_status_t e = dml_rt_tensor_op("Identity", &view, 1, NULL, 0, &tmp, 1);
    dml_status_free(dml_rt_tensor_free(view));
    DML_RETURN_IF_ERROR(e);
    e = get(tmp, opn, &src);
    if (e) {
      dml_status_free(dml_rt_tensor_free(tmp));
      return e;
    }
    for (int32_t d = 0; d < x->rank; d++) *(red[d] ? &len : &outer) *= x->dims[d];
  } else {
    for (int32_t d = 0; d < x->rank; d++)
      *(d < first ? &outer : d > last ? &inner : &len) *= x->dims[d];
  }
  int64_t n = dml_dims_numel(x->dims, x->rank);
  dml_status_t e = DML_OK;
  if (n > (int64_t)UINT32_MAX)
    e = dml_status_make(DML_STATUS_UNIMPLEMENTED, opn,
                        "%lld elements: the GPU's eager kernels index below 2^32",
                        (long long)n);
  if (!e) e = make(dev, y.dtype, y.rank, y.dims, NULL, opn, out);
  if (e) {
    if (tmp.id) dml_status_free(dml_rt_tensor_free(tmp));
    return e;
  }
  slot_t *ys = NULL;
  e = get(*out, opn, &ys);
  if (!e) e = run_rows(dev, id, k, sel_last, src, outer, len, inner, ys);
  if (tmp.id) dml_status_free(dml_rt_tensor_free(tmp));
  if (e) {
    dml_status_free(dml_rt_tensor_free(*out));
    return dml_status_annotate(e, "%s on %s", opn, dev->name);
  }
  return DML_OK;
}

/* The output dims of op `id` by its shape rule (dml_cpu_eager_outputs) on
 * device tensors x[0 .. n-1]: the inputs whose values the rule reads
 * (dml_cpu_output_dims_reads: Expand's shape, Slice's starts, ...) read
 * back to the host, the others' slots standing in for their data (MatMul,
 * Gemm, Conv, Softmax: dims only, every element stays on the device); its
 * errors name the op and device `dev` (rule_err). At most MAX_OP_INPUTS
 * inputs (INVALID_ARGUMENT beyond). */
static dml_status_t rule_dims_n(const dml_rt_device_t *dev, dml_op_t id, slot_t *const *x,
                                uint32_t n, const dml_attr_t *attrs, uint32_t n_attrs,
                                dml_tensor_t *y, uint32_t n_out) {
  const char *opn = dml_op_name(id);
  dml_tensor_t in[MAX_OP_INPUTS];
  void *owned[MAX_OP_INPUTS] = {0};
  uint64_t cap[DML_MAX_EAGER_OUTPUTS];
  memset(in, 0, sizeof in);
  if (n_out < 1 || n_out > DML_MAX_EAGER_OUTPUTS)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, opn, "%u outputs: 1 to %d", n_out,
                           DML_MAX_EAGER_OUTPUTS);
  memset(y, 0, sizeof *y * n_out);
  for (uint32_t i = 0; i < n_out; i++) cap[i] = UINT64_MAX;
  if (n > MAX_OP_INPUTS)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, opn, "%u inputs: at most %d", n,
                           MAX_OP_INPUTS);
  dml_status_t e = DML_OK;
  for (uint32_t j = 0; j < n && !e; j++) {
    if (!x[j]) continue; /* absent optional input */
    in[j].dtype = x[j]->dtype;
    in[j].rank = x[j]->rank;
    memcpy(in[j].dims, x[j]->dims, sizeof(int64_t) * (size_t)x[j]->rank);
    in[j].data = x[j];
    if (dml_cpu_output_dims_reads(id, j) > 0) {
      int own = 0;
      e = host_dense(x[j], opn, &in[j].data, &own);
      if (own) owned[j] = in[j].data;
    }
  }
  dml_cpu_call_t call;
  memset(&call, 0, sizeof call);
  call.op = id;
  call.inputs = in;
  call.n_inputs = n;
  call.outputs = y;
  call.n_outputs = n_out;
  call.output_capacity = cap;
  call.attrs = attrs;
  call.n_attrs = n_attrs;
  if (!e) e = rule_err(dml_cpu_eager_outputs(&call), id, dev);
  for (uint32_t j = 0; j < n; j++) free(owned[j]);
  return e;
}

static dml_status_t rule_dims(const dml_rt_device_t *dev, dml_op_t id, slot_t *const *x,
                              uint32_t n, const dml_attr_t *attrs, uint32_t n_attrs,
                              dml_tensor_t *y) {
  return rule_dims_n(dev, id, x, n, attrs, n_attrs, y, 1);
}

dml_status_t dml_rt_eager_rule(dml_rt_device_t *dev, dml_op_t id,
                               const dml_rt_tensor_t *h, uint32_t n,
                               const dml_attr_t *attrs, uint32_t n_attrs, dml_tensor_t *y,
                               uint32_t n_out) {
  slot_t *x[MAX_OP_INPUTS] = {0};
  if (n > MAX_OP_INPUTS)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, dml_op_name(id),
                           "%u inputs: at most %d", n, MAX_OP_INPUTS);
  for (uint32_t j = 0; j < n; j++)
    if (h[j].id) DML_RETURN_IF_ERROR(get(h[j], dml_op_name(id), &x[j]));
  return rule_dims_n(dev, id, x, n, attrs, n_attrs, y, n_out);
}

dml_status_t dml_rt_eager_as_op(dml_status_t s, dml_op_t id) {
  return as_op(s, id);
}

/* Runs Softmax or LogSoftmax (opset 13: `axis`, default -1) on device
 * tensor xh (slot x, f32) with the library's row kernel `k` (the compiled
 * path's kernel, dml_eager_lib.h): over rows of the axis made contiguous,
 * x itself when the axis is last and x is contiguous, else a copy with the
 * axis moved last (the Identity kernel), the result moved back the same
 * way (a second copy). */
static dml_status_t eager_softmax(dml_rt_device_t *dev, dml_op_t id, int32_t k,
                                  dml_rt_tensor_t xh, slot_t *x, const dml_attr_t *attrs,
                                  uint32_t n_attrs, dml_rt_tensor_t *out) {
  const char *opn = dml_op_name(id);
  for (uint32_t i = 0; i < n_attrs; i++)
    if (attrs[i].name && strcmp(attrs[i].name, "axis"))
      return dml_status_make(DML_STATUS_UNIMPLEMENTED, opn,
                             "attribute '%s' is not taken by the GPU's eager kernel in "
                             "this version",
                             attrs[i].name);
  dml_tensor_t y;
  DML_RETURN_IF_ERROR(rule_dims(dev, id, &x, 1, attrs, n_attrs, &y));
  const int32_t r = x->rank;
  int64_t a = dml_attr_int(attrs, n_attrs, "axis", -1);
  if (a < 0) a += r;
  if (r > 0 && (a < 0 || a >= r)) /* the shape rule's check, kept here too */
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, opn, "axis out of range");
  const int64_t n = numel(x), len = r ? x->dims[a] : 1, outer = len ? n / len : 0;
  if (n > (int64_t)UINT32_MAX)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, opn,
                           "%lld elements: the GPU's eager kernels index below 2^32",
                           (long long)n);
  const int moved = r > 0 && a != r - 1;
  int64_t perm[DML_MAX_RANK], inv[DML_MAX_RANK], pd[DML_MAX_RANK];
  int32_t np = 0;
  for (int32_t d = 0; d < r; d++)
    if (d != a) perm[np++] = d;
  if (r > 0) perm[np++] = a;
  for (int32_t d = 0; d < r; d++) inv[perm[d]] = d, pd[d] = x->dims[perm[d]];
  dml_rt_tensor_t xt = DML_RT_TENSOR_NONE, yt = DML_RT_TENSOR_NONE;
  slot_t *src = x, *ys = NULL;
  *out = DML_RT_TENSOR_NONE;
  dml_status_t e = DML_OK;
  if (n > 0 && (moved || !is_contig(x))) { /* rows contiguous: the axis last */
    dml_rt_tensor_t v = DML_RT_TENSOR_NONE;
    e = dml_rt_tensor_transpose(xh, perm, &v);
    if (!e) e = dml_rt_tensor_op("Identity", &v, 1, NULL, 0, &xt, 1);
    if (v.id) dml_status_free(dml_rt_tensor_free(v));
    if (!e) e = get(xt, opn, &src);
  }
  if (!e)
    e = moved ? make(dev, y.dtype, r, pd, NULL, opn, &yt)
              : make(dev, y.dtype, y.rank, y.dims, NULL, opn, out);
  if (!e) e = get(moved ? yt : *out, opn, &ys);
  if (!e && n > 0) e = run_rows(dev, id, k, 0, src, outer, len, 1, ys);
  if (!e && moved) { /* the axis back in place */
    dml_rt_tensor_t v = DML_RT_TENSOR_NONE;
    e = dml_rt_tensor_transpose(yt, inv, &v);
    if (!e) e = dml_rt_tensor_op("Identity", &v, 1, NULL, 0, out, 1);
    if (v.id) dml_status_free(dml_rt_tensor_free(v));
  }
  if (e && out->id) dml_status_free(dml_rt_tensor_free(*out));
  if (xt.id) dml_status_free(dml_rt_tensor_free(xt));
  if (yt.id) dml_status_free(dml_rt_tensor_free(yt));
  if (e) *out = DML_RT_TENSOR_NONE;
  return e ? dml_status_annotate(e, "%s on %s", opn, dev->name) : DML_OK;
}

/* Reads the int64 values of device tensor x (i64 or i32, rank 0 or 1, at
 * most DML_MAX_RANK of them: Slice's starts/ends/axes/steps, Expand's
 * shape) into v; *n their count. */
static dml_status_t small_ints(const slot_t *x, const char *opn, const char *what,
                               int64_t *v, uint32_t *n) {
  int64_t cnt = numel(x);
  if ((x->dtype != DML_DTYPE_I64 && x->dtype != DML_DTYPE_I32) || x->rank > 1 ||
      cnt > DML_MAX_RANK)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, opn,
                           "%s must be i64 or i32 of rank 1, at most %d values (got %s, "
                           "%lld values)",
                           what, DML_MAX_RANK, dml_dtype_name(x->dtype), (long long)cnt);
  void *p = NULL;
  int own = 0;
  DML_RETURN_IF_ERROR(host_dense(x, opn, &p, &own));
  for (int64_t i = 0; i < cnt; i++)
    v[i] = x->dtype == DML_DTYPE_I64 ? ((const int64_t *)p)[i] : ((const int32_t *)p)[i];
  if (own) free(p);
  *n = (uint32_t)cnt;
  return DML_OK;
}

/* Concat on device tensors (the shape rule's dims y): each input's
 * elements moved as whole spans by the device's copy (a view with the axis
 * outermost made contiguous first by the Identity kernel where the axis is
 * not the outermost dim above 1, or the input is not contiguous); with
 * dims above 1 before the axis, the spans fill a temporary [L, P, Q] that
 * the Identity kernel reads back as [P, L, Q]. */
static void reach(int64_t off, int32_t rank, const int64_t *dims, const int64_t *st,
                  int64_t *lo, int64_t *hi);
static dml_status_t below_2_32(const char *opn, const char *what, int64_t lo, int64_t hi);

static dml_status_t eager_concat(dml_rt_device_t *dev, const dml_rt_tensor_t *h,
                                 slot_t *const *x, uint32_t n, const dml_tensor_t *y,
                                 int64_t axis, dml_rt_tensor_t *out) {
  const char *opn = "Concat";
  const int32_t r = y->rank;
  if (axis < 0) axis += r;
  int64_t P = 1, Q = 1, L = r ? y->dims[axis] : 1;
  for (int32_t d = 0; d < r; d++)
    if (d < axis)
      P *= y->dims[d];
    else if (d > axis)
      Q *= y->dims[d];
  const uint64_t es = dml_dtype_size(y->dtype);
  dml_rt_tensor_t t = DML_RT_TENSOR_NONE;
  *out = DML_RT_TENSOR_NONE;
  /* P > 1: each input copied into its slice of y by the slice-copy kernel
   * (dml_eager_lib.h DML_EAGER_PC_OUT), one dispatch per input */
  const int32_t kc = P > 1 ? eager_find_t(dev, DML_OP_CONCAT, 1, y->dtype, y->dtype) : -1;
  if (kc >= 0 && dev->lib[kc].max_len == 3 && P * L * Q <= (int64_t)UINT32_MAX) {
    dml_status_t e = make(dev, y->dtype, y->rank, y->dims, NULL, opn, out);
    slot_t *ys = NULL;
    if (!e) e = get(*out, opn, &ys);
    int64_t at = 0; /* y's slices before input j along the axis */
    for (uint32_t j = 0; j < n && !e; j++) {
      const int64_t Lj = x[j]->rank ? x[j]->dims[axis] : 1, m = P * Lj * Q;
      if (m == 0) continue;
      const int64_t d3[3] = {P, Lj, Q};
      int64_t s3[3];
      dml_rt_tensor_t c = DML_RT_TENSOR_NONE;
      const slot_t *cs = x[j];
      if (!nocopy_strides(x[j], 3, d3, s3)) { /* a view that does not merge */
        e = dml_rt_tensor_op("Identity", &h[j], 1, NULL, 0, &c, 1);
        slot_t *c2 = NULL;
        if (!e) e = get(c, opn, &c2);
        cs = c2;
        s3[0] = Lj * Q, s3[1] = Q, s3[2] = 1;
      }
      int64_t lo = 0, hi = 0;
      if (!e) reach(cs->offset, 3, d3, s3, &lo, &hi);
      if (!e) e = below_2_32(opn, "an input", lo, hi);
      if (!e) {
        uint32_t pc[DML_EAGER_PC_WORDS];
        memset(pc, 0, sizeof pc);
        uint64_t groups = ((uint64_t)m + DML_EAGER_LOCAL - 1) / DML_EAGER_LOCAL;
        if (groups > 65535) groups = 65535;
        const uint64_t stride = groups * DML_EAGER_LOCAL;
        pc[DML_EAGER_PC_N] = (uint32_t)m;
        pc[DML_EAGER_PC_STRIDE] = (uint32_t)stride;
        pc[DML_EAGER_PC_ITERS] = (uint32_t)(((uint64_t)m + stride - 1) / stride);
        for (uint32_t d = 0; d < DML_EAGER_RANK; d++) pc[DML_EAGER_PC_DIMS + d] = 1;
        const int64_t os[3] = {L * Q, Q, 1};
        pc[DML_EAGER_PC_IN] = (uint32_t)cs->offset;
        pc[DML_EAGER_PC_OUT] = (uint32_t)(at * Q);
        for (uint32_t d = 0; d < 3; d++) {
          const uint32_t k = DML_EAGER_RANK - 3 + d;
          pc[DML_EAGER_PC_DIMS + k] = (uint32_t)d3[d];
          pc[DML_EAGER_PC_IN + 1 + k] = (uint32_t)s3[d]; /* wraps as the kernel's */
          pc[DML_EAGER_PC_OUT + 1 + k] = (uint32_t)os[d];
        }
        e = dev->mem->run_kernel(dev->h, (uint32_t)kc, ys->st->buf, cs->st->buf, NULL, 0,
                                 0, pc, DML_EAGER_PC_WORDS, (uint32_t)groups);
      }
      at += Lj;
      if (c.id) dml_status_free(dml_rt_tensor_free(c));
    }
    if (e && out->id) {
      dml_status_free(dml_rt_tensor_free(*out));
      *out = DML_RT_TENSOR_NONE;
    }
    return e;
  }
  /* P 1: the spans go to y itself */
  const int64_t td[3] = {L, P, Q};
  dml_status_t e = P == 1 ? make(dev, y->dtype, y->rank, y->dims, NULL, opn, out)
                          : make(dev, y->dtype, 3, td, NULL, opn, &t);
  if (e) return e;
  slot_t *ts = NULL;
  e = get(P == 1 ? *out : t, opn, &ts);
  int64_t at = 0; /* elements of the inputs before input j */
  for (uint32_t j = 0; j < n && !e; j++) {
    int64_t m = numel(x[j]);
    if (m == 0) continue;
    dml_rt_tensor_t c = DML_RT_TENSOR_NONE;
    const slot_t *cs = x[j];
    if (P > 1 || !is_contig(x[j])) { /* the axis outermost, contiguous */
      int64_t perm[DML_MAX_RANK];
      int32_t np = 0;
      perm[np++] = axis;
      for (int32_t d = 0; d < r; d++)
        if (d != axis) perm[np++] = d;
      dml_rt_tensor_t v = DML_RT_TENSOR_NONE;
      e = dml_rt_tensor_transpose(h[j], perm, &v);
      if (!e) e = dml_rt_tensor_op("Identity", &v, 1, NULL, 0, &c, 1);
      if (v.id) dml_status_free(dml_rt_tensor_free(v));
      slot_t *c2 = NULL;
      if (!e) e = get(c, opn, &c2);
      cs = c2;
    }
    if (!e)
      e = dev->mem->copy(dev->h, cs->st->buf, (uint64_t)cs->offset * es, ts->st->buf,
                         (uint64_t)at * es, (uint64_t)m * es);
    at += m;
    if (c.id) dml_status_free(dml_rt_tensor_free(c));
  }
  if (!e && P > 1) { /* t [L, P, Q] read as [P, L, Q] */
    dml_rt_tensor_t v = DML_RT_TENSOR_NONE;
    const int64_t perm[3] = {1, 0, 2};
    e = dml_rt_tensor_transpose(t, perm, &v);
    if (!e) e = dml_rt_tensor_op("Identity", &v, 1, NULL, 0, out, 1);
    if (v.id) dml_status_free(dml_rt_tensor_free(v));
    slot_t *o = NULL;
    if (!e) e = get(*out, opn, &o);
    if (!e) { /* [P, L, Q] contiguous is y's layout */
      o->rank = y->rank;
      memcpy(o->dims, y->dims, sizeof(int64_t) * (size_t)y->rank);
      c_strides(y->dims, y->rank, o->strides);
    }
  }
  if (e && out->id) dml_status_free(dml_rt_tensor_free(*out));
  if (t.id) dml_status_free(dml_rt_tensor_free(t));
  if (e) *out = DML_RT_TENSOR_NONE;
  return e;
}

dml_status_t dml_rt_eager_index_range(dml_rt_device_t *dev, const char *opn,
                                      dml_rt_tensor_t ind, int64_t n) {
  dml_rt_tensor_t lo = DML_RT_TENSOR_NONE, hi = DML_RT_TENSOR_NONE;
  int64_t v[2] = {0, 0};
  dml_status_t e = dml_rt_tensor_op("ReduceMin", &ind, 1, NULL, 0, &lo, 1);
  if (!e) e = dml_rt_tensor_op("ReduceMax", &ind, 1, NULL, 0, &hi, 1);
  for (int i = 0; i < 2 && !e; i++) {
    dml_rt_tensor_info_t info;
    e = dml_rt_tensor_info(i ? hi : lo, &info);
    dml_tensor_t h;
    memset(&h, 0, sizeof h);
    h.dtype = DML_DTYPE_I64;
    h.rank = info.rank;
    memcpy(h.dims, info.dims, sizeof h.dims);
    h.data = &v[i];
    if (!e) e = dml_rt_tensor_to_host(i ? hi : lo, &h);
  }
  if (lo.id) dml_status_free(dml_rt_tensor_free(lo));
  if (hi.id) dml_status_free(dml_rt_tensor_free(hi));
  if (e) return e;
  if (v[0] < -n || v[1] >= n)
    return dml_status_make(DML_STATUS_OUT_OF_RANGE, opn,
                           "index %lld is out of range [-%lld, %lld] (on %s)",
                           (long long)(v[0] < -n ? v[0] : v[1]), (long long)n,
                           (long long)(n - 1), dev->name);
  return DML_OK;
}

/* Runs Gather (`axis`, default 0) on device tensors h[0] (x, slot xs[0])
 * and h[1] (the indices, i64 or i32) with the library's Gather kernel `k`
 * for x's dtype (dml_eager_lib.h DML_EAGER_GATHER): the output dims and
 * errors are the shape rule's; x and the indices are made contiguous
 * (the Identity kernel; i32 indices cast to i64) and copied into the
 * kernel's one input buffer (its binding 1). */
static dml_status_t eager_gather(dml_rt_device_t *dev, int32_t k,
                                 const dml_rt_tensor_t *h, slot_t *const *xs,
                                 const dml_attr_t *attrs, uint32_t n_attrs,
                                 dml_rt_tensor_t *out) {
  const char *opn = "Gather";
  for (uint32_t i = 0; i < n_attrs; i++)
    if (attrs[i].name && strcmp(attrs[i].name, "axis"))
      return dml_status_make(DML_STATUS_UNIMPLEMENTED, opn,
                             "attribute '%s' is not taken by the GPU's eager Gather in "
                             "this version",
                             attrs[i].name);
  if (xs[1]->dtype != DML_DTYPE_I64 && xs[1]->dtype != DML_DTYPE_I32)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, opn,
                           "indices must be i64 or i32, not %s",
                           dml_dtype_name(xs[1]->dtype));
  dml_tensor_t y;
  DML_RETURN_IF_ERROR(rule_dims(dev, DML_OP_GATHER, xs, 2, attrs, n_attrs, &y));
  const slot_t *x = xs[0], *ind = xs[1];
  const int32_t r = x->rank;
  int64_t a = dml_attr_int(attrs, n_attrs, "axis", 0);
  if (a < 0) a += r;
  if (a < 0 || a >= r) /* the shape rule's check, kept here too */
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, opn, "axis out of range");
  int64_t Q = 1, D = x->dims[a];
  for (int32_t d = (int32_t)a + 1; d < r; d++) Q *= x->dims[d];
  const int64_t nk = numel(ind), nx = numel(x), n = dml_dims_numel(y.dims, y.rank);
  const uint64_t es = dml_dtype_size(x->dtype);
  dml_rt_tensor_t xc = DML_RT_TENSOR_NONE, ic = DML_RT_TENSOR_NONE;
  dml_status_t e = DML_OK;
  *out = DML_RT_TENSOR_NONE;
  if (n > 0 && !is_contig(x)) {
    e = dml_rt_tensor_op("Identity", &h[0], 1, NULL, 0, &xc, 1);
    slot_t *t = NULL;
    if (!e) e = get(xc, opn, &t);
    if (!e) x = t;
  }
  if (!e && n > 0 && (ind->dtype != DML_DTYPE_I64 || !is_contig(ind))) {
    dml_attr_t to;
    memset(&to, 0, sizeof to);
    to.name = "to";
    to.kind = DML_ATTR_INT;
    to.i = dml_dtype_onnx_code(DML_DTYPE_I64);
    e = ind->dtype == DML_DTYPE_I64
            ? dml_rt_tensor_op("Identity", &h[1], 1, NULL, 0, &ic, 1)
            : dml_rt_tensor_op("Cast", &h[1], 1, &to, 1, &ic, 1);
    slot_t *t = NULL;
    if (!e) e = get(ic, opn, &t);
    if (!e) ind = t;
  }
  /* the indices' range, checked on the device (ReduceMin and ReduceMax:
   * two values read back): out of range is an error, as on the CPU */
  if (!e && n > 0 && nk > 0) e = dml_rt_eager_index_range(dev, opn, ic.id ? ic : h[1], D);
  /* binding 1: x at element 0, the indices at the next 16-byte boundary */
  const uint64_t ioff = ((uint64_t)nx * es + 15) & ~(uint64_t)15;
  if (!e && (n > (int64_t)UINT32_MAX || ioff / 8 + (uint64_t)nk > UINT32_MAX))
    e = dml_status_make(DML_STATUS_UNIMPLEMENTED, opn,
                        "x %lld, indices %lld, y %lld elements: the GPU's eager kernels "
                        "index below 2^32",
                        (long long)nx, (long long)nk, (long long)n);
  if (!e) e = make(dev, y.dtype, y.rank, y.dims, NULL, opn, out);
  slot_t *ys = NULL;
  if (!e) e = get(*out, opn, &ys);
  if (!e && n > 0) {
    dml_rt_devmem_copy_t cp[2];
    uint32_t n_cp = 0;
    if (nx > 0)
      cp[n_cp++] = (dml_rt_devmem_copy_t){x->st->buf, (uint64_t)x->offset * es, 0,
                                          (uint64_t)nx * es};
    cp[n_cp++] = (dml_rt_devmem_copy_t){ind->st->buf, (uint64_t)ind->offset * 8, ioff,
                                        (uint64_t)nk * 8};
    uint64_t groups = ((uint64_t)n + DML_EAGER_LOCAL - 1) / DML_EAGER_LOCAL;
    if (groups > 65535) groups = 65535;
    uint64_t stride = groups * DML_EAGER_LOCAL;
    uint32_t pc[DML_EAGER_GA_WORDS];
    pc[DML_EAGER_GA_N] = (uint32_t)n;
    pc[DML_EAGER_GA_STRIDE] = (uint32_t)stride;
    pc[DML_EAGER_GA_ITERS] = (uint32_t)(((uint64_t)n + stride - 1) / stride);
    pc[DML_EAGER_GA_Q] = (uint32_t)Q;
    pc[DML_EAGER_GA_K] = (uint32_t)nk;
    pc[DML_EAGER_GA_D] = (uint32_t)D;
    pc[DML_EAGER_GA_X_OFF] = 0;
    pc[DML_EAGER_GA_I_OFF] = (uint32_t)(ioff / 8);
    e = dev->mem->run_kernel(dev->h, (uint32_t)k, ys->st->buf, NULL, cp, n_cp,
                             ioff + (uint64_t)nk * 8, pc, DML_EAGER_GA_WORDS,
                             (uint32_t)groups);
  }
  if (e && out->id) dml_status_free(dml_rt_tensor_free(*out));
  if (xc.id) dml_status_free(dml_rt_tensor_free(xc));
  if (ic.id) dml_status_free(dml_rt_tensor_free(ic));
  if (e) *out = DML_RT_TENSOR_NONE;
  return e ? dml_status_annotate(e, "%s on %s", opn, dev->name) : DML_OK;
}

/* The data-movement ops on device tensors: Transpose, Slice and Expand as
 * a view of input 0 (dml_rt_tensor_transpose, _slice, _expand: strides
 * only) copied by the Identity kernel (the eager library's strided copy;
 * the elements move unchanged, any dtype the library's Identity holds),
 * Concat by eager_concat; the output dims and the errors are the op's
 * shape rule's (the CPU's), Slice's and Expand's value inputs read back to
 * the host. */
static dml_status_t eager_move(dml_rt_device_t *dev, dml_op_t id,
                               const dml_rt_tensor_t *h, slot_t *const *x, uint32_t n,
                               const dml_attr_t *attrs, uint32_t n_attrs,
                               dml_rt_tensor_t *out) {
  const char *opn = dml_op_name(id);
  for (uint32_t i = 0; i < n_attrs; i++)
    if (attrs[i].name && (id == DML_OP_TRANSPOSE ? strcmp(attrs[i].name, "perm")
                          : id == DML_OP_CONCAT  ? strcmp(attrs[i].name, "axis")
                                                 : 1))
      return dml_status_make(DML_STATUS_UNIMPLEMENTED, opn,
                             "attribute '%s' is not taken by the GPU's eager %s in this "
                             "version",
                             attrs[i].name, opn);
  for (uint32_t j = 0; j < n; j++)
    if (!x[j] && (id == DML_OP_CONCAT || id == DML_OP_EXPAND || j < 3))
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, opn, "input %u is absent", j);
  dml_tensor_t y;
  DML_RETURN_IF_ERROR(rule_dims(dev, id, x, n, attrs, n_attrs, &y));
  if (id == DML_OP_CONCAT)
    return dml_status_annotate(
        eager_concat(dev, h, x, n, &y, dml_attr_int(attrs, n_attrs, "axis", 0), out),
        "%s on %s", opn, dev->name);
  dml_rt_tensor_t v = DML_RT_TENSOR_NONE;
  dml_status_t e = DML_OK;
  if (id == DML_OP_TRANSPOSE) {
    const dml_attr_t *pa = dml_attr_find(attrs, n_attrs, "perm");
    e = dml_rt_tensor_transpose(h[0], pa && pa->kind == DML_ATTR_INTS ? pa->ints : NULL,
                                &v);
  } else if (id == DML_OP_EXPAND) {
    e = dml_rt_tensor_expand(h[0], y.rank, y.dims, &v);
  } else { /* Slice-13: data, starts, ends, [axes], [steps] */
    int64_t sv[4][DML_MAX_RANK];
    uint32_t cnt[4] = {0, 0, 0, 0};
    static const char *const what[4] = {"starts", "ends", "axes", "steps"};
    for (uint32_t j = 1; j < n && j < 5 && !e; j++)
      if (x[j]) e = small_ints(x[j], opn, what[j - 1], sv[j - 1], &cnt[j - 1]);
    if (!e)
      e = dml_rt_tensor_slice(h[0], cnt[0], n > 3 && x[3] ? sv[2] : NULL, sv[0], sv[1],
                              n > 4 && x[4] ? sv[3] : NULL, &v);
  }
  slot_t *vs = NULL;
  if (!e) e = get(v, opn, &vs);
  if (!e && (vs->rank != y.rank ||
             memcmp(vs->dims, y.dims, sizeof(int64_t) * (size_t)y.rank))) {
    char a[160], b[160];
    e = dml_status_make(DML_STATUS_INTERNAL, opn, "the view is %s, the shape rule's %s",
                        dims_s(vs->dims, vs->rank, a, sizeof a),
                        dims_s(y.dims, y.rank, b, sizeof b));
  }
  if (!e) e = dml_rt_tensor_op("Identity", &v, 1, NULL, 0, out, 1);
  if (v.id) dml_status_free(dml_rt_tensor_free(v));
  return e ? dml_status_annotate(e, "%s on %s", opn, dev->name) : DML_OK;
}

/* The lowest and highest element that slot x reaches over dims/strides
 * (its own, or a subset) from its offset. */
static void reach(int64_t off, int32_t rank, const int64_t *dims, const int64_t *st,
                  int64_t *lo, int64_t *hi) {
  *lo = *hi = off;
  for (int32_t d = 0; d < rank; d++) {
    if (dims[d] <= 0) continue;
    int64_t span = st[d] * (dims[d] - 1);
    if (span < 0)
      *lo += span;
    else
      *hi += span;
  }
}

static dml_status_t below_2_32(const char *opn, const char *what, int64_t lo,
                               int64_t hi) {
  if (lo < 0 || hi > (int64_t)UINT32_MAX)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, opn,
                           "%s reaches element %lld: the GPU's eager kernels index "
                           "below 2^32",
                           what, (long long)(lo < 0 ? lo : hi));
  return DML_OK;
}

/* Runs eager kernel k (an f64 MatMul or Conv row: every operand at
 * binding 1) on operands x[0 .. n-1] (NULL: absent), each one's elements
 * lo[j] .. hi[j] copied into one packed buffer (16-byte aligned spans;
 * none when they share one storage), the word pc[offw[j]] (operand j's
 * element offset) rebased to its place there; y at binding 0. */
static dml_status_t run_packed(dml_rt_device_t *dev, uint32_t k, const slot_t *ys,
                               const slot_t *const *x, uint32_t n, const int64_t *lo,
                               const int64_t *hi, const uint32_t *offw, uint32_t *pc,
                               uint32_t n_pc, uint32_t groups) {
  const uint64_t es = dml_dtype_size(x[0]->dtype);
  int shared = 1;
  for (uint32_t j = 1; j < n; j++) shared = shared && (!x[j] || x[j]->st == x[0]->st);
  if (shared)
    return dev->mem->run_kernel(dev->h, k, ys->st->buf, x[0]->st->buf, NULL, 0, 0, pc,
                                n_pc, groups);
  dml_rt_devmem_copy_t cp[4];
  uint32_t n_cp = 0;
  uint64_t pack = 0;
  for (uint32_t j = 0; j < n && j < 4; j++) {
    if (!x[j]) continue;
    cp[n_cp].src = x[j]->st->buf;
    cp[n_cp].src_off = (uint64_t)lo[j] * es;
    cp[n_cp].dst_off = pack;
    cp[n_cp].bytes = (uint64_t)(hi[j] - lo[j] + 1) * es;
    pc[offw[j]] = (uint32_t)(pack / es + (uint64_t)(x[j]->offset - lo[j]));
    pack = (pack + cp[n_cp].bytes + 15) & ~(uint64_t)15;
    n_cp++;
  }
  if (pack / es > UINT32_MAX)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, dml_op_name(dev->lib[k].op),
                           "the operands reach %llu elements: the GPU's eager kernels "
                           "index below 2^32",
                           (unsigned long long)(pack / es));
  return dev->mem->run_kernel(dev->h, k, ys->st->buf, NULL, cp, n_cp, pack, pc, n_pc,
                              groups);
}

dml_status_t dml_rt_eager_norm(dml_rt_device_t *dev, dml_op_t id, dml_rt_tensor_t x,
                               const dml_rt_eager_norm_t *nm, dml_rt_tensor_t *out,
                               int *done) {
  const char *opn = dml_op_name(id);
  *done = 0;
  slot_t *xs = NULL, *ss = NULL, *bs = NULL;
  DML_RETURN_IF_ERROR(get(x, opn, &xs));
  DML_RETURN_IF_ERROR(get(nm->scale, opn, &ss));
  if (nm->bias.id) DML_RETURN_IF_ERROR(get(nm->bias, opn, &bs));
  const dml_op_t row =
      nm->given ? DML_OP_BATCH_NORMALIZATION : DML_OP_LAYER_NORMALIZATION;
  /* the form: a workgroup per row, or an invocation per short row */
  const int per_row = nm->len < DML_EAGER_NM_SHORT;
  const int64_t form = (nm->given ? DML_EAGER_NM_FORM_GIVEN : 0) |
                       (per_row ? DML_EAGER_NM_FORM_PER_ROW : 0);
  int32_t k = -1;
  LIB_ROWS(dev, row, kk)
  if (dev->lib[kk].kind == DML_EAGER_NORM && dev->lib[kk].dtype == (uint32_t)xs->dtype &&
      dev->lib[kk].max_len == form)
    k = (int32_t)kk;
  if (k < 0 || !dev->mem->run_kernel_bufs) return DML_OK; /* composed instead */
  *done = 1;
  if (!is_contig(xs) || ss->dtype != DML_DTYPE_F32 || (bs && bs->dtype != DML_DTYPE_F32))
    return dml_status_make(DML_STATUS_INTERNAL, opn,
                           "the normalization kernel takes a contiguous x and f32 "
                           "parameters");
  const int64_t n = numel(xs);
  /* what x, scale and B reach (elements of their storages) */
  int64_t hi_x = xs->offset + n - 1, C = nm->channels > 0 ? nm->channels : 1;
  int64_t hi_s = ss->offset + (C - 1) * nm->s_cs + (nm->len - 1) * nm->s_js;
  if (nm->given) {
    int64_t hm = ss->offset + (nm->m_off > nm->v_off ? nm->m_off : nm->v_off) + C - 1;
    hi_s = hm > hi_s ? hm : hi_s;
  }
  int64_t hi_b = bs ? bs->offset + (C - 1) * nm->b_cs + (nm->len - 1) * nm->b_js : 0;
  dml_status_t e = DML_OK;
  if (n > 0 && (hi_x > (int64_t)UINT32_MAX || hi_s > (int64_t)UINT32_MAX ||
                hi_b > (int64_t)UINT32_MAX || nm->s_cs < 0 || nm->s_js < 0 ||
                nm->b_cs < 0 || nm->b_js < 0))
    e = dml_status_make(DML_STATUS_UNIMPLEMENTED, opn,
                        "x or its parameters reach element %lld: the GPU's eager kernels "
                        "index below 2^32 (on %s)",
                        (long long)(hi_x > hi_s ? hi_x : hi_s), dev->name);
  if (!e) e = make(dev, xs->dtype, xs->rank, xs->dims, NULL, opn, out);
  if (e || n == 0) return e;
  slot_t *ys = NULL;
  e = get(*out, opn, &ys);
  uint32_t pc[DML_EAGER_NM_WORDS];
  memset(pc, 0, sizeof pc);
  /* workgroups: one per row, or one per DML_EAGER_NM_ROW_LOCAL rows */
  const uint64_t per_wg = per_row ? DML_EAGER_NM_ROW_LOCAL : 1;
  const uint64_t wgs = ((uint64_t)nm->rows + per_wg - 1) / per_wg;
  uint64_t grid = wgs > 65535 ? 65535 : wgs;
  float ef = (float)nm->eps;
  pc[DML_EAGER_NM_ROWS] = (uint32_t)nm->rows;
  pc[DML_EAGER_NM_LEN] = (uint32_t)nm->len;
  pc[DML_EAGER_NM_GRID] = (uint32_t)grid;
  pc[DML_EAGER_NM_TURNS] = (uint32_t)((wgs + grid - 1) / grid);
  pc[DML_EAGER_NM_C] = (uint32_t)C;
  pc[DML_EAGER_NM_X_OFF] = (uint32_t)xs->offset;
  pc[DML_EAGER_NM_S_OFF] = (uint32_t)ss->offset;
  pc[DML_EAGER_NM_S_CS] = (uint32_t)nm->s_cs;
  pc[DML_EAGER_NM_S_JS] = (uint32_t)nm->s_js;
  pc[DML_EAGER_NM_B_OFF] = bs ? (uint32_t)bs->offset : (uint32_t)ss->offset;
  pc[DML_EAGER_NM_B_CS] = bs ? (uint32_t)nm->b_cs : 0u;
  pc[DML_EAGER_NM_B_JS] = bs ? (uint32_t)nm->b_js : 0u;
  pc[DML_EAGER_NM_HAS_B] = bs ? 1u : 0u;
  pc[DML_EAGER_NM_M_OFF] = (uint32_t)(ss->offset + nm->m_off);
  pc[DML_EAGER_NM_V_OFF] = (uint32_t)(ss->offset + nm->v_off);
  memcpy(&pc[DML_EAGER_NM_EPS], &ef, 4);
  /* an absent B: scale's buffer at binding 3, not added (HAS_B 0) */
  void *bufs[4] = {ys ? ys->st->buf : NULL, xs->st->buf, ss->st->buf,
                   bs ? bs->st->buf : ss->st->buf};
  if (!e)
    e = dev->mem->run_kernel_bufs(dev->h, (uint32_t)k, bufs, 4, pc, DML_EAGER_NM_WORDS,
                                  (uint32_t)grid);
  if (e) {
    dml_status_free(dml_rt_tensor_free(*out));
    return dml_status_annotate(e, "%s on %s", opn, dev->name);
  }
  return DML_OK;
}

dml_status_t dml_rt_eager_pool_indices(dml_rt_device_t *dev, dml_rt_tensor_t x,
                                       const int64_t *ydims, const int64_t *k,
                                       const int64_t *s, const int64_t *d,
                                       const int64_t *pb, int order, dml_rt_tensor_t *out,
                                       int *done) {
  const char *opn = "MaxPool";
  *done = 0;
  slot_t *xs = NULL;
  DML_RETURN_IF_ERROR(get(x, opn, &xs));
  int32_t kr = eager_find_t(dev, DML_OP_MAX_POOL, 1, xs->dtype, DML_DTYPE_I64);
  if (kr < 0 || dev->lib[kr].kind != DML_EAGER_POOLIDX || xs->rank < 3 || xs->rank > 5)
    return DML_OK;
  *done = 1;
  if (!is_contig(xs))
    return dml_status_make(DML_STATUS_INTERNAL, opn,
                           "the index kernel takes a contiguous X");
  int64_t yd[DML_MAX_RANK];
  memcpy(yd, ydims, sizeof(int64_t) * (size_t)xs->rank);
  const int64_t n = dml_dims_numel(yd, xs->rank);
  if (n > (int64_t)UINT32_MAX || xs->offset + numel(xs) > (int64_t)UINT32_MAX)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, opn,
                           "%lld indices: the GPU's eager kernels index below 2^32",
                           (long long)n);
  DML_RETURN_IF_ERROR(make(dev, DML_DTYPE_I64, xs->rank, yd, NULL, opn, out));
  if (n == 0) return DML_OK;
  slot_t *ys = NULL;
  dml_status_t e = get(*out, opn, &ys);
  uint32_t pc[DML_EAGER_PI_WORDS];
  memset(pc, 0, sizeof pc);
  uint64_t groups = ((uint64_t)n + DML_EAGER_LOCAL - 1) / DML_EAGER_LOCAL;
  if (groups > 65535) groups = 65535;
  const uint64_t stride = groups * DML_EAGER_LOCAL;
  /* the spatial dims right-aligned to (D, H, W): 2-D as D = 1, 1-D as D =
   * H = 1 (a missing dim: extent 1, window 1, stride 1, no pad) */
  const int sp = xs->rank - 2;
  static const uint32_t w_ext[3] = {DML_EAGER_PI_D, DML_EAGER_PI_H, DML_EAGER_PI_W},
                        w_out[3] = {DML_EAGER_PI_OD, DML_EAGER_PI_OH, DML_EAGER_PI_OW},
                        w_k[3] = {DML_EAGER_PI_KD, DML_EAGER_PI_KH, DML_EAGER_PI_KW},
                        w_s[3] = {DML_EAGER_PI_SD, DML_EAGER_PI_SH, DML_EAGER_PI_SW},
                        w_p[3] = {DML_EAGER_PI_PD, DML_EAGER_PI_PH, DML_EAGER_PI_PW},
                        w_d[3] = {DML_EAGER_PI_DD, DML_EAGER_PI_DH, DML_EAGER_PI_DW};
  pc[DML_EAGER_PI_N] = (uint32_t)n;
  pc[DML_EAGER_PI_STRIDE] = (uint32_t)stride;
  pc[DML_EAGER_PI_ITERS] = (uint32_t)(((uint64_t)n + stride - 1) / stride);
  for (int a = 0; a < 3; a++) {
    const int j = a - (3 - sp); /* spatial index, < 0: missing */
    pc[w_ext[a]] = j < 0 ? 1u : (uint32_t)xs->dims[2 + j];
    pc[w_out[a]] = j < 0 ? 1u : (uint32_t)yd[2 + j];
    pc[w_k[a]] = j < 0 ? 1u : (uint32_t)k[j];
    pc[w_s[a]] = j < 0 ? 1u : (uint32_t)s[j];
    pc[w_p[a]] = j < 0 ? 0u : (uint32_t)pb[j];
    pc[w_d[a]] = j < 0 ? 1u : (uint32_t)d[j];
  }
  pc[DML_EAGER_PI_X_OFF] = (uint32_t)xs->offset;
  pc[DML_EAGER_PI_ORDER] = order ? 1u : 0u;
  if (!e)
    e = dev->mem->run_kernel(dev->h, (uint32_t)kr, ys->st->buf, xs->st->buf, NULL, 0, 0,
                             pc, DML_EAGER_PI_WORDS, (uint32_t)groups);
  if (e) {
    dml_status_free(dml_rt_tensor_free(*out));
    return dml_status_annotate(e, "%s on %s", opn, dev->name);
  }
  return DML_OK;
}

/* Runs MatMul (numpy matmul, f32) on device tensors a, b with the
 * library's kernel `k` (dml_eager_lib.h DML_EAGER_MATMUL): the operands
 * are read in place through their offsets and strides (views included);
 * the batch dims (broadcast, stride 0) are merged where both operands
 * allow it. */
static dml_status_t eager_matmul(dml_rt_device_t *dev, int32_t k, slot_t *a, slot_t *b,
                                 dml_rt_tensor_t *out) {
  const char *opn = "MatMul";
  slot_t *x[2] = {a, b};
  dml_tensor_t y;
  DML_RETURN_IF_ERROR(rule_dims(dev, DML_OP_MATMUL, x, 2, NULL, 0, &y));
  /* A as [..., M, K] (1-D: [1, K]), B as [..., K, N] (1-D: [K, 1]) */
  int64_t M = a->rank >= 2 ? a->dims[a->rank - 2] : 1;
  int64_t K = a->dims[a->rank - 1];
  int64_t N = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
  int64_t a_sm = a->rank >= 2 ? a->strides[a->rank - 2] : 0,
          a_sk = a->strides[a->rank - 1];
  int64_t b_sk = b->rank >= 2 ? b->strides[b->rank - 2] : b->strides[0];
  int64_t b_sn = b->rank >= 2 ? b->strides[b->rank - 1] : 0;
  /* a dim of 1 has any stride: 1 lets the unit-stride kernel take it */
  if (K == 1) a_sk = 1;
  if (N == 1) b_sn = 1;
  int32_t abr = a->rank > 2 ? a->rank - 2 : 0, bbr = b->rank > 2 ? b->rank - 2 : 0;
  int32_t br = abr > bbr ? abr : bbr;
  /* batch dims of y (its leading br dims), each operand's stride (0 where
   * it broadcasts), merged where both are linear across, dims of 1
   * dropped; y's batch is contiguous */
  int64_t md[DML_MAX_RANK], mas[DML_MAX_RANK], mbs[DML_MAX_RANK];
  int32_t mr = 0;
  int64_t batch = 1;
  for (int32_t d = 0; d < br; d++) {
    int64_t dim = y.dims[d];
    batch *= dim;
    int32_t ad = d - (br - abr), bd = d - (br - bbr);
    int64_t as = ad < 0 || a->dims[ad] == 1 ? 0 : a->strides[ad];
    int64_t bs = bd < 0 || b->dims[bd] == 1 ? 0 : b->strides[bd];
    if (dim == 1) continue;
    if (mr > 0 && mas[mr - 1] == as * dim && mbs[mr - 1] == bs * dim) {
      md[mr - 1] *= dim;
      mas[mr - 1] = as;
      mbs[mr - 1] = bs;
      continue;
    }
    md[mr] = dim, mas[mr] = as, mbs[mr] = bs;
    mr++;
  }
  if (mr > (int32_t)DML_EAGER_MM_BATCH)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, opn,
                           "the GPU's eager MatMul indexes %u batch dims; these operands "
                           "keep %d after merging (make them contiguous)",
                           DML_EAGER_MM_BATCH, (int)mr);
  int64_t n = dml_dims_numel(y.dims, y.rank);
  int64_t nb = (N + DML_EAGER_MM_TILE - 1) / DML_EAGER_MM_TILE,
          mb = (M + DML_EAGER_MM_TILE - 1) / DML_EAGER_MM_TILE;
  int64_t blocks = batch * mb * nb, lo = 0, hi = 0;
  dml_status_t e = DML_OK;
  if (n > (int64_t)UINT32_MAX || blocks > (int64_t)UINT32_MAX ||
      K > (int64_t)UINT32_MAX - 16)
    e = dml_status_make(DML_STATUS_UNIMPLEMENTED, opn,
                        "%lld elements, %lld blocks: the GPU's eager kernels index below "
                        "2^32",
                        (long long)n, (long long)blocks);
  if (!e && n > 0 && K > 0) { /* what each operand reaches */
    reach(a->offset, a->rank, a->dims, a->strides, &lo, &hi);
    e = below_2_32(opn, "A", lo, hi);
    if (!e) reach(b->offset, b->rank, b->dims, b->strides, &lo, &hi);
    if (!e) e = below_2_32(opn, "B", lo, hi);
  }
  if (!e) e = make(dev, y.dtype, y.rank, y.dims, NULL, opn, out);
  if (e || n == 0) return e;
  slot_t *ys = NULL;
  e = get(*out, opn, &ys);
  uint32_t pc[DML_EAGER_MM_WORDS];
  memset(pc, 0, sizeof pc);
  uint64_t grid = blocks > 65535 ? 65535 : (uint64_t)blocks;
  pc[DML_EAGER_MM_M] = (uint32_t)M;
  pc[DML_EAGER_MM_N] = (uint32_t)N;
  pc[DML_EAGER_MM_K] = (uint32_t)K;
  pc[DML_EAGER_MM_NB] = (uint32_t)nb;
  pc[DML_EAGER_MM_MB] = (uint32_t)mb;
  pc[DML_EAGER_MM_BLOCKS] = (uint32_t)blocks;
  pc[DML_EAGER_MM_GRID] = (uint32_t)grid;
  pc[DML_EAGER_MM_ITERS] = (uint32_t)(((uint64_t)blocks + grid - 1) / grid);
  /* offsets and strides wrap modulo 2^32 (a negative step's), as the
   * kernel's indices do */
  pc[DML_EAGER_MM_A_OFF] = (uint32_t)a->offset;
  pc[DML_EAGER_MM_A_SM] = (uint32_t)a_sm;
  pc[DML_EAGER_MM_A_SK] = (uint32_t)a_sk;
  pc[DML_EAGER_MM_B_OFF] = (uint32_t)b->offset;
  pc[DML_EAGER_MM_B_SK] = (uint32_t)b_sk;
  pc[DML_EAGER_MM_B_SN] = (uint32_t)b_sn;
  for (uint32_t d = 0; d < DML_EAGER_MM_BATCH; d++) {
    int32_t src = (int32_t)d - ((int32_t)DML_EAGER_MM_BATCH - mr); /* right-aligned */
    pc[DML_EAGER_MM_BDIMS + d] = src < 0 ? 1u : (uint32_t)md[src];
    pc[DML_EAGER_MM_A_BST + d] = src < 0 ? 0u : (uint32_t)mas[src];
    pc[DML_EAGER_MM_B_BST + d] = src < 0 ? 0u : (uint32_t)mbs[src];
  }
  /* the unit-stride form when the rows are contiguous */
  const uint32_t kdt = dev->lib[k].dtype;
  LIB_ROWS(dev, DML_OP_MATMUL, j)
  if (dev->lib[j].kind == DML_EAGER_MATMUL && dev->lib[j].dtype == kdt &&
      dev->lib[j].max_len == (a_sk == 1 && b_sn == 1 ? 1 : 0))
    k = (int32_t)j;
  void *bufs[3] = {ys ? ys->st->buf : NULL, a->st->buf, b->st->buf};
  if (!e && kdt == DML_DTYPE_F64) { /* A and B in binding 1 */
    int64_t lo2[2], hi2[2];
    reach(a->offset, a->rank, a->dims, a->strides, &lo2[0], &hi2[0]);
    reach(b->offset, b->rank, b->dims, b->strides, &lo2[1], &hi2[1]);
    const slot_t *ab[2] = {a, b};
    const uint32_t offw[2] = {DML_EAGER_MM_A_OFF, DML_EAGER_MM_B_OFF};
    e = run_packed(dev, (uint32_t)k, ys, ab, 2, lo2, hi2, offw, pc, DML_EAGER_MM_WORDS,
                   (uint32_t)grid);
  } else if (!e) {
    e = dev->mem->run_kernel_bufs(dev->h, (uint32_t)k, bufs, 3, pc, DML_EAGER_MM_WORDS,
                                  (uint32_t)grid);
  }
  if (e) {
    dml_status_free(dml_rt_tensor_free(*out));
    return dml_status_annotate(e, "%s on %s", opn, dev->name);
  }
  return DML_OK;
}

/* Runs Conv (f32, NCHW 2-D or NCW 1-D; any auto_pad) on device
 * tensors h[0] X, h[1] W and h[2] the optional bias with the library's
 * kernel `k` (dml_eager_lib.h DML_EAGER_CONV); a view among them is first
 * made contiguous on the device (the Identity kernel). */
static dml_status_t eager_conv(dml_rt_device_t *dev, int32_t k, const dml_rt_tensor_t *h,
                               slot_t *const *x, uint32_t n_in, const dml_attr_t *attrs,
                               uint32_t n_attrs, dml_rt_tensor_t *out) {
  const char *opn = "Conv";
  dml_tensor_t y;
  slot_t *in[3] = {x[0], x[1], n_in > 2 ? x[2] : NULL};
  DML_RETURN_IF_ERROR(rule_dims(dev, DML_OP_CONV, in, n_in, attrs, n_attrs, &y));
  for (uint32_t i = 0; i < n_attrs; i++) {
    const char *an = attrs[i].name ? attrs[i].name : "";
    if (strcmp(an, "auto_pad") && strcmp(an, "dilations") && strcmp(an, "group") &&
        strcmp(an, "kernel_shape") && strcmp(an, "pads") && strcmp(an, "strides"))
      return dml_status_make(DML_STATUS_UNIMPLEMENTED, opn,
                             "attribute '%s' is not taken by the GPU's eager kernel in "
                             "this version",
                             an);
  }
  const char *ap = dml_attr_string(attrs, n_attrs, "auto_pad", "NOTSET");
  int valid = !strcmp(ap, "VALID"), upper = !strcmp(ap, "SAME_UPPER"),
      lower = !strcmp(ap, "SAME_LOWER");
  if (!valid && !upper && !lower && strcmp(ap, "NOTSET")) /* the shape rule refuses it */
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, opn, "auto_pad '%s' is not valid",
                           ap);
  if (x[0]->rank != 4 && x[0]->rank != 3)
    return dml_status_make(
        DML_STATUS_UNIMPLEMENTED, opn,
        "the GPU's eager Conv kernel is 1-D or 2-D (X of rank 3 or 4, not %d; 3-D is "
        "composed of it, beyond 3-D is not done)",
        (int)x[0]->rank);
  int r = x[0]->rank - 2; /* spatial dims; 1-D as H = 1 */
  size_t ns = 0, nd = 0, np = 0;
  const int64_t *st = dml_attr_ints(attrs, n_attrs, "strides", &ns);
  const int64_t *dl = dml_attr_ints(attrs, n_attrs, "dilations", &nd);
  const int64_t *pads = dml_attr_ints(attrs, n_attrs, "pads", &np);
  int64_t S[2] = {1, 1}, D[2] = {1, 1}, P[2] = {0, 0};
  for (int i = 0; i < r; i++) { /* the rule checked their lengths */
    int j = i + 2 - r;
    if (st && ns == (size_t)r) S[j] = st[i];
    if (dl && nd == (size_t)r) D[j] = dl[i];
    if (pads && np == 2 * (size_t)r && !valid) P[j] = pads[i];
  }
  for (int i = 0; i < r && (upper || lower); i++) { /* SAME: the pads follow */
    int j = i + 2 - r;
    int64_t ek = (x[1]->dims[x[1]->rank - r + i] - 1) * D[j] + 1;
    P[j] =
        dml_shape_same_pad_begin(x[0]->dims[x[0]->rank - r + i], ek, S[j], upper, NULL);
  }
  int64_t group = dml_attr_int(attrs, n_attrs, "group", 1);
  int64_t n = dml_dims_numel(y.dims, y.rank);
  /* contiguous operands (a view through the Identity kernel) */
  dml_rt_tensor_t c[3] = {DML_RT_TENSOR_NONE, DML_RT_TENSOR_NONE, DML_RT_TENSOR_NONE};
  slot_t *cs[3] = {NULL, NULL, NULL};
  dml_status_t e = DML_OK;
  for (uint32_t j = 0; j < 3 && !e; j++) {
    if (!in[j]) continue;
    if (is_contig(in[j]) || n == 0) {
      cs[j] = in[j];
      continue;
    }
    e = dml_rt_tensor_op("Identity", &h[j], 1, NULL, 0, &c[j], 1);
    if (!e) e = get(c[j], opn, &cs[j]);
  }
  for (uint32_t j = 0; j < 3 && !e && n > 0; j++) {
    if (!cs[j]) continue;
    int64_t lo = 0, hi = 0, cst[DML_MAX_RANK];
    c_strides(cs[j]->dims, cs[j]->rank, cst);
    reach(cs[j]->offset, cs[j]->rank, cs[j]->dims, cst, &lo, &hi);
    e = below_2_32(opn, j == 0 ? "X" : j == 1 ? "W" : "B", lo, hi);
  }
  if (!e && n > (int64_t)UINT32_MAX)
    e = dml_status_make(DML_STATUS_UNIMPLEMENTED, opn,
                        "%lld elements: the GPU's eager kernels index below 2^32",
                        (long long)n);
  if (!e) e = make(dev, y.dtype, y.rank, y.dims, NULL, opn, out);
  if (!e && n > 0) {
    slot_t *ys = NULL;
    e = get(*out, opn, &ys);
    uint32_t pc[DML_EAGER_CV_WORDS];
    memset(pc, 0, sizeof pc);
    const slot_t *X = cs[0], *W = cs[1];
    int64_t C = X->dims[1], OC = W->dims[0];
    uint64_t groups = ((uint64_t)n + DML_EAGER_LOCAL - 1) / DML_EAGER_LOCAL;
    if (groups > 65535) groups = 65535;
    uint64_t stride = groups * DML_EAGER_LOCAL;
    pc[DML_EAGER_CV_N] = (uint32_t)n;
    pc[DML_EAGER_CV_STRIDE] = (uint32_t)stride;
    pc[DML_EAGER_CV_ITERS] = (uint32_t)(((uint64_t)n + stride - 1) / stride);
    pc[DML_EAGER_CV_C] = (uint32_t)C;
    pc[DML_EAGER_CV_OC] = (uint32_t)OC;
    pc[DML_EAGER_CV_OH] = (uint32_t)(r == 2 ? y.dims[2] : 1);
    pc[DML_EAGER_CV_OW] = (uint32_t)y.dims[y.rank - 1];
    pc[DML_EAGER_CV_CG] = (uint32_t)(C / group);
    pc[DML_EAGER_CV_OCG] = (uint32_t)(OC / group);
    pc[DML_EAGER_CV_H] = (uint32_t)(r == 2 ? X->dims[2] : 1);
    pc[DML_EAGER_CV_W] = (uint32_t)X->dims[X->rank - 1];
    pc[DML_EAGER_CV_KH] = (uint32_t)(r == 2 ? W->dims[2] : 1);
    pc[DML_EAGER_CV_KW] = (uint32_t)W->dims[W->rank - 1];
    pc[DML_EAGER_CV_SH] = (uint32_t)S[0];
    pc[DML_EAGER_CV_SW] = (uint32_t)S[1];
    pc[DML_EAGER_CV_PH] = (uint32_t)P[0];
    pc[DML_EAGER_CV_PW] = (uint32_t)P[1];
    pc[DML_EAGER_CV_DH] = (uint32_t)D[0];
    pc[DML_EAGER_CV_DW] = (uint32_t)D[1];
    pc[DML_EAGER_CV_X_OFF] = (uint32_t)X->offset;
    pc[DML_EAGER_CV_W_OFF] = (uint32_t)W->offset;
    pc[DML_EAGER_CV_B_OFF] = cs[2] ? (uint32_t)cs[2]->offset : 0u;
    pc[DML_EAGER_CV_HAS_BIAS] = cs[2] ? 1u : 0u;
    void *bufs[4] = {ys ? ys->st->buf : NULL, X->st->buf, W->st->buf,
                     cs[2] ? cs[2]->st->buf : NULL};
    if (!e && dev->lib[k].dtype == DML_DTYPE_F64) { /* X, W, B in binding 1 */
      int64_t lo3[3] = {0, 0, 0}, hi3[3] = {0, 0, 0};
      for (uint32_t j = 0; j < 3; j++)
        if (cs[j]) lo3[j] = cs[j]->offset, hi3[j] = cs[j]->offset + numel(cs[j]) - 1;
      const slot_t *xwb[3] = {cs[0], cs[1], cs[2]};
      const uint32_t offw[3] = {DML_EAGER_CV_X_OFF, DML_EAGER_CV_W_OFF,
                                DML_EAGER_CV_B_OFF};
      e = run_packed(dev, (uint32_t)k, ys, xwb, 3, lo3, hi3, offw, pc, DML_EAGER_CV_WORDS,
                     (uint32_t)groups);
    } else if (!e) {
      e = dev->mem->run_kernel_bufs(dev->h, (uint32_t)k, bufs, 4, pc, DML_EAGER_CV_WORDS,
                                    (uint32_t)groups);
    }
    if (e) dml_status_free(dml_rt_tensor_free(*out));
  }
  for (uint32_t j = 0; j < 3; j++)
    if (c[j].id) dml_status_free(dml_rt_tensor_free(c[j]));
  return e ? dml_status_annotate(e, "%s on %s", opn, dev->name) : DML_OK;
}

/* Runs Gemm (f32) on device tensors h[0] A, h[1] B and the optional h[2] C
 * as the compiled path computes it (codegen/schedule.c gemm_result):
 * alpha * (op(A) op(B)) + beta * C, each step rounded to f32, with op()
 * a transposed view (no copy) read by the MatMul kernel, alpha's product
 * and beta's an eager Mul by an f32 scalar (skipped when they are 1), C
 * left out when beta is 0 and added by the eager Add (broadcast). */
static dml_status_t eager_gemm(dml_rt_device_t *dev, const dml_rt_tensor_t *h,
                               slot_t *const *x, uint32_t n_in, const dml_attr_t *attrs,
                               uint32_t n_attrs, dml_rt_tensor_t *out) {
  const char *opn = "Gemm";
  dml_tensor_t y;
  slot_t *in[3] = {x[0], x[1], n_in > 2 ? x[2] : NULL};
  const dml_dtype_t gdt = x[0]->dtype; /* f32 or f64 (f16, bf16: through f32) */
  for (uint32_t j = 0; j < 3; j++)
    if (in[j] && (in[j]->dtype != gdt || (gdt != DML_DTYPE_F32 && gdt != DML_DTYPE_F64)))
      return dml_status_make(DML_STATUS_UNIMPLEMENTED, opn,
                             "the GPU's eager kernels take f32 or f64 operands of one "
                             "dtype in this version (input %u is %s, input 0 %s)",
                             j, dml_dtype_name(in[j]->dtype), dml_dtype_name(gdt));
  DML_RETURN_IF_ERROR(rule_dims(dev, DML_OP_GEMM, in, n_in, attrs, n_attrs, &y));
  for (uint32_t i = 0; i < n_attrs; i++) {
    const char *an = attrs[i].name ? attrs[i].name : "";
    if (strcmp(an, "alpha") && strcmp(an, "beta") && strcmp(an, "transA") &&
        strcmp(an, "transB"))
      return dml_status_make(DML_STATUS_UNIMPLEMENTED, opn,
                             "attribute '%s' is not taken by the GPU's eager Gemm", an);
  }
  /* f32 as the compiled kernel's constants */
  float alpha = (float)dml_attr_float(attrs, n_attrs, "alpha", 1.0);
  float beta = (float)dml_attr_float(attrs, n_attrs, "beta", 1.0);
  int ta = dml_attr_int(attrs, n_attrs, "transA", 0) != 0;
  int tb = dml_attr_int(attrs, n_attrs, "transB", 0) != 0;
  dml_rt_tensor_t t[8];
  for (int i = 0; i < 8; i++) t[i] = DML_RT_TENSOR_NONE;
  /* t: 0 op(A), 1 op(B), 2 the product, 3 alpha, 4 alpha * product,
   * 5 beta, 6 beta * C, 7 the result */
  dml_status_t e = DML_OK;
  const int64_t swap[2] = {1, 0};
  e = ta ? dml_rt_tensor_transpose(h[0], swap, &t[0]) : dml_rt_tensor_retain(h[0]);
  if (!e && !ta) t[0] = h[0];
  if (!e)
    e = tb ? dml_rt_tensor_transpose(h[1], swap, &t[1]) : dml_rt_tensor_retain(h[1]);
  if (!e && !tb) t[1] = h[1];
  if (!e) e = dml_rt_tensor_op("MatMul", t, 2, NULL, 0, &t[2], 1);
  dml_rt_tensor_t r = t[2];
  if (!e && alpha != 1.0f) {
    e = dml_rt_tensor_full(dev, gdt, 0, NULL, alpha, &t[3]);
    dml_rt_tensor_t m[2] = {t[2], t[3]};
    if (!e) e = dml_rt_tensor_op("Mul", m, 2, NULL, 0, &t[4], 1);
    r = t[4];
  }
  if (!e && in[2] && beta != 0.0f) {
    dml_rt_tensor_t cb = h[2];
    if (beta != 1.0f) {
      e = dml_rt_tensor_full(dev, gdt, 0, NULL, beta, &t[5]);
      dml_rt_tensor_t m[2] = {h[2], t[5]};
      if (!e) e = dml_rt_tensor_op("Mul", m, 2, NULL, 0, &t[6], 1);
      cb = t[6];
    }
    dml_rt_tensor_t a2[2] = {r, cb};
    if (!e) e = dml_rt_tensor_op("Add", a2, 2, NULL, 0, &t[7], 1);
    r = t[7];
  }
  if (!e) e = dml_rt_tensor_retain(r);
  if (!e) *out = r;
  for (int i = 0; i < 8; i++)
    if (t[i].id) dml_status_free(dml_rt_tensor_release(t[i]));
  return e ? dml_status_annotate(e, "%s on %s", opn, dev->name) : DML_OK;
}

/* Variadic op `id` (Sum, Max, Min, Mean) of in[0 .. n-1] on device dev
 * by the library's two-operand kernels: folded in input order as the CPU
 * folds (cpu_elementwise.c dml_cpuk_Variadic: Sum and Mean by Add, Max and
 * Min by themselves; one operand: its copy), then Mean's sum divided by n
 * (f64: times 1/n, as the CPU). Each step's result is freed once the next
 * exists. */
static dml_status_t eager_fold(dml_rt_device_t *dev, dml_op_t id, dml_dtype_t dt,
                               const dml_rt_tensor_t *in, uint32_t n,
                               dml_rt_tensor_t *out) {
  const char *opn = dml_op_name(id);
  if (id == DML_OP_MEAN && !dml_dtype_is_float(dt))
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, opn,
                           "input dtype %s is not supported by Mean (on %s)",
                           dml_dtype_name(dt), dev->name);
  const char *pair = id == DML_OP_MAX || id == DML_OP_MIN ? opn : "Add";
  dml_rt_tensor_t acc = DML_RT_TENSOR_NONE;
  dml_status_t e = n == 1 ? dml_rt_tensor_op("Identity", in, 1, NULL, 0, &acc, 1)
                          : dml_rt_tensor_op(pair, in, 2, NULL, 0, &acc, 1);
  for (uint32_t i = 2; i < n && !e; i++) {
    dml_rt_tensor_t two[2] = {acc, in[i]}, next = DML_RT_TENSOR_NONE;
    e = dml_rt_tensor_op(pair, two, 2, NULL, 0, &next, 1);
    if (!e) {
      dml_status_free(dml_rt_tensor_free(acc));
      acc = next;
    }
  }
  if (!e && id == DML_OP_MEAN && n > 1) {
    /* f64: the CPU's product by 1/n, bit for bit; the narrower floats: the
     * quotient by n, which is the CPU's double product rounded once */
    const int f64 = dt == DML_DTYPE_F64;
    dml_rt_tensor_t cnt = DML_RT_TENSOR_NONE, q = DML_RT_TENSOR_NONE;
    e = dml_rt_tensor_full(dev, dt, 0, NULL, f64 ? 1.0 / (double)n : (double)n, &cnt);
    dml_rt_tensor_t two[2] = {acc, cnt};
    if (!e) e = dml_rt_tensor_op(f64 ? "Mul" : "Div", two, 2, NULL, 0, &q, 1);
    if (cnt.id) dml_status_free(dml_rt_tensor_free(cnt));
    if (!e) {
      dml_status_free(dml_rt_tensor_free(acc));
      acc = q;
    }
  }
  if (e) {
    if (acc.id) dml_status_free(dml_rt_tensor_free(acc));
    return dml_status_annotate(as_op(e, id), "%s of %u operands on %s", opn, n,
                               dev->name);
  }
  *out = acc;
  return DML_OK;
}

/* Runs one-input op `opn` on device tensor x (f16 or bf16, dtype dt) as
 * Cast(op(Cast(x, f32)), dt): the f32 kernel on x's exact f32 values, its
 * result rounded once to dt (an i64 result, ArgMax's, as it is). */
static dml_status_t eager_via_f32(dml_rt_device_t *dev, const char *opn,
                                  dml_rt_tensor_t x, dml_dtype_t dt,
                                  const dml_attr_t *attrs, uint32_t n_attrs,
                                  dml_rt_tensor_t *out) {
  dml_attr_t to;
  memset(&to, 0, sizeof to);
  to.name = "to";
  to.kind = DML_ATTR_INT;
  to.i = dml_dtype_onnx_code(DML_DTYPE_F32);
  dml_rt_tensor_t x32 = DML_RT_TENSOR_NONE, y32 = DML_RT_TENSOR_NONE;
  dml_status_t e = dml_rt_tensor_op("Cast", &x, 1, &to, 1, &x32, 1);
  if (!e) e = dml_rt_tensor_op(opn, &x32, 1, attrs, n_attrs, &y32, 1);
  slot_t *ys = NULL;
  if (!e) e = get(y32, opn, &ys);
  if (!e && ys->dtype == DML_DTYPE_F32) {
    to.i = dml_dtype_onnx_code(dt);
    e = dml_rt_tensor_op("Cast", &y32, 1, &to, 1, out, 1);
  } else if (!e) {
    *out = y32;
    y32 = DML_RT_TENSOR_NONE;
  }
  if (x32.id) dml_status_free(dml_rt_tensor_free(x32));
  if (y32.id) dml_status_free(dml_rt_tensor_free(y32));
  return e ? dml_status_annotate(e, "%s of %s on %s", opn, dml_dtype_name(dt), dev->name)
           : DML_OK;
}

dml_status_t dml_rt_tensor_op(const char *op, const dml_rt_tensor_t *inputs,
                              uint32_t n_inputs, const dml_attr_t *attrs,
                              uint32_t n_attrs, dml_rt_tensor_t *outputs,
                              uint32_t n_outputs) {
  dml_op_t id = op ? op_lookup(op) : DML_OP_INVALID;
  if (id == DML_OP_INVALID)
    return dml_status_make(DML_STATUS_NOT_FOUND, "tensor.op", "no op named '%s'",
                           op ? op : "(null)");
  const char *opn = dml_op_name(id);
  if (n_inputs > MAX_OP_INPUTS || (n_inputs && !inputs) || !outputs || n_outputs < 1 ||
      n_outputs > DML_MAX_EAGER_OUTPUTS)
    return dml_status_make(
        DML_STATUS_INVALID_ARGUMENT, opn,
        "eager ops take at most %d inputs and write 1 to %d outputs (got "
        "%u, %u)",
        MAX_OP_INPUTS, DML_MAX_EAGER_OUTPUTS, n_inputs, n_outputs);
  dml_tensor_t in[MAX_OP_INPUTS];
  slot_t *xs[MAX_OP_INPUTS] = {0};
  void *owned[MAX_OP_INPUTS] = {0};
  dml_rt_device_t *dev = NULL;
  dml_status_t s = DML_OK;
  memset(in, 0, sizeof in[0] * n_inputs);
  for (uint32_t i = 0; i < n_inputs && !s; i++) {
    if (!inputs[i].id) continue; /* absent optional input */
    slot_t *x = NULL;
    s = get(inputs[i], opn, &x);
    if (s) {
      s = dml_status_detail(s, "input %u", i);
      break;
    }
    if (dev && x->st->dev != dev) {
      s = dml_status_make(DML_STATUS_FAILED_PRECONDITION, opn,
                          "inputs on different devices: %s and %s (input %u); copy with "
                          "dml_rt_tensor_to_device",
                          dev->name, x->st->dev->name, i);
      break;
    }
    dev = x->st->dev;
    xs[i] = x;
    if (dev->mem) continue; /* below */
    in[i].dtype = x->dtype;
    in[i].rank = x->rank;
    memcpy(in[i].dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    int own = 0;
    s = host_dense(x, opn, &in[i].data, &own);
    if (own) owned[i] = in[i].data;
  }
  if (!s && !dev)
    s = dml_status_make(DML_STATUS_INVALID_ARGUMENT, opn,
                        "no input tensor tells the device (eager ops without inputs: use "
                        "the creation calls)");
  if (!s && (id == DML_OP_GATHER_ND || id == DML_OP_EINSUM)) {
    /* composed on every device (dml_tensor_compose.c) */
    for (uint32_t i = 0; i < n_inputs; i++) free(owned[i]);
    return id == DML_OP_EINSUM ? dml_rt_eager_einsum(dev, inputs, n_inputs, attrs,
                                                     n_attrs, outputs, n_outputs)
                               : dml_rt_eager_gather_nd(dev, inputs, n_inputs, attrs,
                                                        n_attrs, outputs, n_outputs);
  }
  dml_attr_t rattrs[8];
  int64_t axes_v[DML_MAX_RANK];
  /* a reduction's absent axes input (DML_RT_TENSOR_NONE): every axis, or y =
   * x with noop_with_empty_axes, as the one-input form (the CPU's rule) */
  if (!s && dev->mem && n_inputs == 2 && xs[0] && !xs[1] &&
      (dml_op_info(id)->flags & DML_OPF_REDUCTION))
    n_inputs = 1;
  if (!s && dev->mem && n_inputs == 2 && xs[0] && xs[1] &&
      (dml_op_info(id)->flags & DML_OPF_REDUCTION) && xs[1]->dtype == DML_DTYPE_I64 &&
      xs[1]->rank == 1 && xs[1]->dims[0] <= DML_MAX_RANK && n_attrs < 8) {
    /* a reduction's axes input (opset 18): read back, passed as the
     * attribute the kernel's caller takes */
    void *p = NULL;
    int own = 0;
    s = host_dense(xs[1], opn, &p, &own);
    if (!s) {
      if (xs[1]->dims[0] > 0) memcpy(axes_v, p, (size_t)xs[1]->dims[0] * 8);
      if (own) free(p);
      if (n_attrs > 0) memcpy(rattrs, attrs, sizeof *attrs * n_attrs);
      memset(&rattrs[n_attrs], 0, sizeof rattrs[0]);
      rattrs[n_attrs].name = "axes";
      rattrs[n_attrs].kind = DML_ATTR_INTS;
      rattrs[n_attrs].n = (size_t)xs[1]->dims[0];
      rattrs[n_attrs].ints = axes_v;
      attrs = rattrs;
      n_attrs++;
      n_inputs = 1;
    }
  }
  if (!s && dev->mem) { /* the device's eager kernel library */
    /* the ops composed of the library's kernels (dml_tensor_compose.c) */
    if (dev->mem->run_kernel && dev->n_lib) {
      int done = 0;
      s = dml_rt_eager_composed(dev, id, inputs, n_inputs, attrs, n_attrs, outputs,
                                n_outputs, &done);
      if (done || s) return s;
    }
    /* Gemm: the MatMul kernel on transposed views, then alpha and beta C
     * by the elementwise kernels */
    if (id == DML_OP_GEMM && (n_inputs == 2 || n_inputs == 3) && xs[0] && xs[1] &&
        n_outputs == 1 && eager_find(dev, DML_OP_MATMUL, 2) >= 0 &&
        dev->mem->run_kernel_bufs)
      return eager_gemm(dev, inputs, xs, n_inputs, attrs, n_attrs, outputs);
    /* Clip-13: no bounds is a copy; a max without a min is Clip with the
     * dtype's lowest value (-inf) as the min, the same result for every x
     * (NaN kept); a min without a max the two-operand row */
    if (id == DML_OP_CLIP && xs[0] && n_outputs == 1) {
      while (n_inputs > 1 && !xs[n_inputs - 1]) n_inputs--;
      if (n_inputs == 1) {
        int32_t ki = eager_find_t(dev, DML_OP_IDENTITY, 1, xs[0]->dtype, xs[0]->dtype);
        if (ki >= 0) return eager_gpu(dev, DML_OP_IDENTITY, ki, xs, 1, NULL, 0, outputs);
      } else if (n_inputs == 3 && !xs[1] &&
                 eager_find_t(dev, DML_OP_CLIP, 3, xs[0]->dtype, xs[0]->dtype) >= 0) {
        dml_dtype_t cd = xs[0]->dtype;
        double lowest = cd == DML_DTYPE_I64       ? (double)INT64_MIN
                        : cd == DML_DTYPE_I32     ? (double)INT32_MIN
                        : cd == DML_DTYPE_I16     ? (double)INT16_MIN
                        : cd == DML_DTYPE_I8      ? (double)INT8_MIN
                        : !dml_dtype_is_float(cd) ? 0.0 /* unsigned */
                                                  : -INFINITY;
        dml_rt_tensor_t lo = DML_RT_TENSOR_NONE;
        s = dml_rt_tensor_full(dev, xs[0]->dtype, 0, NULL, lowest, &lo);
        if (s) return s;
        dml_rt_tensor_t in3[3] = {inputs[0], lo, inputs[2]};
        s = dml_rt_tensor_op(opn, in3, 3, attrs, n_attrs, outputs, 1);
        dml_status_free(dml_rt_tensor_free(lo));
        return s;
      }
    }
    /* CastLike: Cast to the second operand's dtype (its values unread) */
    if (id == DML_OP_CAST_LIKE && n_inputs == 2 && xs[0] && xs[1] && n_outputs == 1 &&
        n_attrs < 8) {
      if (n_attrs > 0) memcpy(rattrs, attrs, sizeof *attrs * n_attrs);
      memset(&rattrs[n_attrs], 0, sizeof rattrs[0]);
      rattrs[n_attrs].name = "to";
      rattrs[n_attrs].kind = DML_ATTR_INT;
      rattrs[n_attrs].i = dml_dtype_onnx_code(xs[1]->dtype);
      return dml_status_annotate(
          as_op(dml_rt_tensor_op("Cast", inputs, 1, rattrs, n_attrs + 1, outputs, 1), id),
          "CastLike to %s on %s (its Cast)", dml_dtype_name(xs[1]->dtype), dev->name);
    }
    /* the variadic ops but for two operands of a dtype with their kernel:
     * folded by the two-operand kernels */
    if ((id == DML_OP_SUM || id == DML_OP_MAX || id == DML_OP_MIN || id == DML_OP_MEAN) &&
        n_outputs == 1 && !n_attrs && n_inputs >= 1 &&
        (n_inputs != 2 || eager_find_t(dev, id, 2, xs[0] ? xs[0]->dtype : DML_DTYPE_F32,
                                       xs[0] ? xs[0]->dtype : DML_DTYPE_F32) < 0)) {
      int all = 1;
      for (uint32_t i = 0; i < n_inputs; i++) all = all && xs[i];
      if (all) return eager_fold(dev, id, xs[0]->dtype, inputs, n_inputs, outputs);
    }
    /* f16 and bf16 reductions, Softmax and LogSoftmax: x cast to f32
     * (exact), the f32 kernel (f32 accumulation), its result cast back
     * (ArgMax/ArgMin's i64 kept) */
    if (((dml_op_info(id)->flags & DML_OPF_REDUCTION) || id == DML_OP_SOFTMAX ||
         id == DML_OP_LOG_SOFTMAX) &&
        n_inputs == 1 && xs[0] && n_outputs == 1 &&
        (xs[0]->dtype == DML_DTYPE_F16 || xs[0]->dtype == DML_DTYPE_BF16) &&
        eager_find_t(dev, id, 1, xs[0]->dtype, xs[0]->dtype) < 0 &&
        eager_has(dev, id, 1) &&
        eager_find_t(dev, DML_OP_CAST, 1, xs[0]->dtype, DML_DTYPE_F32) >= 0 &&
        eager_find_t(dev, DML_OP_CAST, 1, DML_DTYPE_F32, xs[0]->dtype) >= 0)
      return eager_via_f32(dev, opn, inputs[0], xs[0]->dtype, attrs, n_attrs, outputs);
    /* Transpose, Slice, Expand, Concat: views and copies (eager_move) */
    if ((id == DML_OP_TRANSPOSE || id == DML_OP_SLICE || id == DML_OP_EXPAND ||
         id == DML_OP_CONCAT) &&
        n_inputs >= 1 && xs[0] && n_outputs == 1 && dev->mem->run_kernel &&
        dev->mem->copy && eager_find(dev, DML_OP_IDENTITY, 1) >= 0)
      return eager_move(dev, id, inputs, xs, n_inputs, attrs, n_attrs, outputs);
    /* Gather: its kernel for x's dtype, i64 (or i32) indices */
    if (id == DML_OP_GATHER && n_inputs == 2 && xs[0] && xs[1] && n_outputs == 1 &&
        dev->mem->run_kernel) {
      int32_t kg = eager_find_t(dev, DML_OP_GATHER, 2, xs[0]->dtype, xs[0]->dtype);
      if (kg >= 0) return eager_gather(dev, kg, inputs, xs, attrs, n_attrs, outputs);
    }
    /* Conv's kernel takes the bias as an optional third operand */
    int conv = id == DML_OP_CONV && (n_inputs == 2 || n_inputs == 3);
    /* the operands' dtype (Where: x's, its condition is bool), the
     * output's (Cast: `to`; the compares, IsNaN, IsInf: bool) */
    uint32_t d0 = id == DML_OP_WHERE && n_inputs == 3 ? 1u : 0u;
    dml_dtype_t dt = xs[d0] ? xs[d0]->dtype : DML_DTYPE_F32, odt = dt;
    if (id == DML_OP_EQUAL || id == DML_OP_LESS || id == DML_OP_LESS_OR_EQUAL ||
        id == DML_OP_GREATER || id == DML_OP_GREATER_OR_EQUAL || id == DML_OP_IS_NAN ||
        id == DML_OP_IS_INF)
      odt = DML_DTYPE_BOOL;
    if (id == DML_OP_ARG_MAX || id == DML_OP_ARG_MIN) odt = DML_DTYPE_I64;
    if (id == DML_OP_CAST) {
      int64_t to = dml_attr_int(attrs, n_attrs, "to", 0);
      odt = DML_DTYPE_INVALID;
      for (int d = 1; d < DML_DTYPE_COUNT_ && to; d++)
        if (dml_dtype_onnx_code((dml_dtype_t)d) == to) odt = (dml_dtype_t)d;
    }
    if (id == DML_OP_CAST && odt == dt && n_inputs == 1 && xs[0] && n_outputs == 1) {
      /* a Cast to its own dtype: the strided copy */
      int32_t ki = eager_find_t(dev, DML_OP_IDENTITY, 1, dt, dt);
      if (ki >= 0) return eager_gpu(dev, DML_OP_IDENTITY, ki, xs, 1, NULL, 0, outputs);
    }
    /* MatMul and Conv: the row of the operands' dtype (f32, f64), else
     * the f32 one (whose dtype check below names the operand) */
    int32_t k = id == DML_OP_MATMUL || conv
                    ? eager_find_t(dev, id, conv ? 3u : n_inputs, dt, dt)
                    : eager_find_t(dev, id, n_inputs, dt, odt);
    if (k < 0 && (id == DML_OP_MATMUL || conv))
      k = eager_find(dev, id, conv ? 3u : n_inputs);
    if (k < 0 && eager_has(dev, id, n_inputs) &&
        dev->mem->run_kernel) /* the op is there, not for this dtype */
      return dml_status_detail(
          dml_status_make(DML_STATUS_UNIMPLEMENTED, opn,
                          "no eager kernel for %s of %s%s%s on %s in this version", opn,
                          dml_dtype_name(dt), odt != dt ? " to " : "",
                          odt != dt ? dml_dtype_name(odt) : "", dev->name),
          "the eager library holds f32 for every op it has (bool for And, Or, Xor, "
          "Not; bool out for IsNaN, IsInf); f16, bf16, f64, i8, i16, i32, i64, u8, "
          "u16, u32 and u64 for Identity, Add, Sub, Mul, Mod, Max, Min, Abs, Neg and "
          "Relu (signed only), the compares, Clip and Where (f16, bf16: also Div, Exp, "
          "Sqrt, Sigmoid, Tanh; f64: Div, Exp, Sqrt, Sigmoid, Tanh), Cast between any "
          "two of those and f32; u8, u16, u32, u64 for BitShift; bool for Identity, "
          "Equal and "
          "Where; ReduceSum, ReduceMax, ReduceMin, ArgMax, ArgMin of each but f16 and "
          "bf16, whose reductions run through f32; Sum, Max, Min and Mean of any "
          "count folded by Add, Max, Min (docs/tensor.md)");
    for (uint32_t i = 0; i < n_inputs && k >= 0; i++)
      if (!xs[i] && !(conv && i == 2)) k = -1; /* absent optional input */
    if (k >= 0 && !dev->mem->run_kernel_bufs &&
        (dev->lib[k].kind == DML_EAGER_MATMUL || dev->lib[k].kind == DML_EAGER_CONV))
      k = -1; /* a backend without per-operand bindings */
    if (!dev->mem->run_kernel || k < 0) {
      s = dml_status_detail(
          dml_status_make(DML_STATUS_UNIMPLEMENTED, opn,
                          "eager op %s with %u inputs is not implemented on %s yet", opn,
                          n_inputs, dev->name),
          "%s; copy the tensors with dml_rt_tensor_to_device and run it on the CPU",
          !dev->mem->run_kernel
              ? "this device has no eager kernel library in this version"
          : dev->n_lib ? "the eager library holds the elementwise ops, Identity, "
                         "the reductions, Softmax, LogSoftmax, MatMul, Gemm, Conv and "
                         "Gather, Transpose, Slice, Expand, Concat as copies, and the "
                         "normalizations (fused), pools, Pad, Tile, Split, the reshape "
                         "family, GatherElements, GatherND, ScatterND, "
                         "ScatterElements, TopK, Einsum, BatchNormalization's training "
                         "mode and ConvTranspose composed of them, only (docs/tensor.md)"
          : dev->lib == dml_eager_ptx
              ? "this build has no CUDA eager kernel library (it is made where the "
                "code generator and clang-16 are; a runtime-only build takes it with "
                "-DDMLC_EAGER_PTX_C=dml_eager_ptx.c, docs/tensor.md)"
              : "this build has no eager kernel library (built without the GPU code "
                "generator, glslang)");
    } else if (n_outputs != 1) {
      s = dml_status_make(DML_STATUS_INVALID_ARGUMENT, opn, "%s has 1 output, not %u",
                          opn, n_outputs);
    } else {
      /* every operand of the kernel's dtype (MatMul, Conv: f32) */
      for (uint32_t i = 0; i < n_inputs && !s; i++)
        if (xs[i] && xs[i]->dtype != dml_eager_in_dtype(&dev->lib[k], i)) {
          char a[160], b[160];
          s = dev->lib[k].kind == DML_EAGER_MATMUL || dev->lib[k].kind == DML_EAGER_CONV
                  ? dml_status_make(DML_STATUS_UNIMPLEMENTED, opn,
                                    "the GPU's eager %s takes f32 and f64 operands of "
                                    "one dtype (f16, bf16 through f32) in this version "
                                    "(input %u is %s, the kernel %s)",
                                    opn, i, dml_dtype_name(xs[i]->dtype),
                                    dml_dtype_name((dml_dtype_t)dev->lib[k].dtype))
                  : dml_status_detail(
                        dml_status_make(DML_STATUS_INVALID_ARGUMENT, opn,
                                        "dtype mismatch"),
                        "input %u %s%s, input %u %s%s (the kernel "
                        "takes %s)",
                        d0, dml_dtype_name(xs[d0]->dtype),
                        dims_s(xs[d0]->dims, xs[d0]->rank, a, sizeof a), i,
                        dml_dtype_name(xs[i]->dtype),
                        dims_s(xs[i]->dims, xs[i]->rank, b, sizeof b),
                        dml_dtype_name(dml_eager_in_dtype(&dev->lib[k], i)));
        }
      if (!s && dev->lib[k].kind == DML_EAGER_MATMUL)
        return eager_matmul(dev, k, xs[0], xs[1], outputs);
      if (!s && dev->lib[k].kind == DML_EAGER_CONV)
        return eager_conv(dev, k, inputs, xs, n_inputs, attrs, n_attrs, outputs);
      if (!s && dev->lib[k].kind == DML_EAGER_REDUCE &&
          (id == DML_OP_SOFTMAX || id == DML_OP_LOG_SOFTMAX))
        return eager_softmax(dev, id, k, inputs[0], xs[0], attrs, n_attrs, outputs);
      if (!s && dev->lib[k].kind == DML_EAGER_REDUCE)
        return eager_reduce(dev, id, k, inputs[0], xs[0], attrs, n_attrs, outputs);
      if (!s) s = eager_attrs_check(id, attrs, n_attrs);
      if (!s) s = eager_gpu(dev, id, k, xs, n_inputs, attrs, n_attrs, outputs);
    }
    return s;
  }
  /* ConvTranspose: the CPU's kernel with the output dims of its eager rule
   * (dml_tensor_compose.c; the CPU's rules have none) */
  dml_tensor_t fixed[3];
  int has_fixed = 0;
  if (!s && id == DML_OP_CONV_TRANSPOSE && n_outputs == 1) {
    s = dml_rt_eager_conv_transpose_dims(dev, inputs, n_inputs, attrs, n_attrs,
                                         &fixed[0]);
    has_fixed = !s;
  }
  /* BatchNormalization in training mode with running_mean and running_var:
   * the CPU's kernel with Y of X's dims and dtype and the running outputs
   * [C] of inputs 3's and 4's dtypes (ONNX; the CPU's rules give Y only),
   * which the kernel checks again */
  if (!s && id == DML_OP_BATCH_NORMALIZATION && n_outputs > 1 && n_outputs <= 3 &&
      dml_attr_int(attrs, n_attrs, "training_mode", 0)) {
    if (n_inputs != 5 || in[0].rank < 2)
      s = dml_status_make(DML_STATUS_INVALID_ARGUMENT, opn,
                          "X [N, C, ...], scale, B, mean, var: %u inputs of X rank %d",
                          n_inputs, n_inputs ? (int)in[0].rank : 0);
    for (uint32_t i = 0; i < n_outputs && !s; i++) {
      memset(&fixed[i], 0, sizeof fixed[i]);
      fixed[i].dtype = in[i ? 2 + i : 0].dtype;
      fixed[i].rank = i ? 1 : in[0].rank;
      if (i)
        fixed[i].dims[0] = in[0].dims[1];
      else
        memcpy(fixed[i].dims, in[0].dims, sizeof fixed[i].dims);
    }
    has_fixed = !s;
  }
  if (!s)
    s = run_host(dev, id, in, n_inputs, attrs, n_attrs, has_fixed ? fixed : NULL, 0,
                 outputs, n_outputs);
  for (uint32_t i = 0; i < n_inputs; i++) free(owned[i]);
  return s;
}

/* ---- host data ---- */

dml_status_t dml_rt_tensor_host_data(dml_rt_tensor_t t, void **out) {
  const char *op = "tensor.host_data";
  slot_t *s = NULL;
  DML_RETURN_IF_ERROR(get(t, op, &s));
  if (s->st->dev->mem)
    return dml_status_detail(
        dml_status_make(DML_STATUS_FAILED_PRECONDITION, op,
                        "the tensor is on device %s, not in host memory",
                        s->st->dev->name),
        "copy it to the cpu with dml_rt_tensor_to_device");
  *out = (uint8_t *)s->st->host + s->offset * (int64_t)dml_dtype_size(s->dtype);
  return DML_OK;
}

/* ---- sessions ---- */

dml_status_t dml_rt_session_create_on_device(const dml_rt_model_t *m, dml_rt_device_t *d,
                                             const char *function,
                                             dml_rt_session_t *share_globals_with,
                                             dml_rt_session_t **out) {
  const char *op = "tensor.session_create";
  if (!m || !out)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "no model or no output");
  if (!d) return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "no device");
  return dml_rt_session_create_in(m, d->id, function, share_globals_with, d->mem,
                                  d->mem ? d->h : NULL, out);
}

dml_status_t dml_rt_tensor_buffer(dml_rt_tensor_t t, const char *op, void **out_buf,
                                  uint64_t *out_off) {
  pthread_mutex_lock(&g_lock);
  slot_t *s = NULL;
  dml_status_t e = get_locked(t, op, &s);
  if (!e && !s->st->dev->mem)
    e = dml_status_make(DML_STATUS_FAILED_PRECONDITION, op,
                        "the tensor is in host memory, not on a GPU device");
  if (!e) {
    *out_buf = s->st->buf;
    *out_off = (uint64_t)s->offset * dml_dtype_size(s->dtype);
  }
  pthread_mutex_unlock(&g_lock);
  return e;
}

/* A dense tensor on x's device holding x's elements, made on the device
 * (a view of x's storage when x is contiguous; the eager Identity kernel's
 * strided copy otherwise), or UNIMPLEMENTED where the device's library has
 * no Identity kernel for its dtype. */
static dml_status_t dense_on_device(const slot_t *x, dml_rt_tensor_t t,
                                    dml_rt_tensor_t *out) {
  if (is_contig(x))
    return new_slot(x->st, x->dtype, x->rank, x->dims, x->strides, x->offset, out);
  dml_status_t e = dml_rt_tensor_op("Identity", &t, 1, NULL, 0, out, 1);
  if (!e) {
    slot_t *o = NULL;
    if (!get(*out, "tensor.session_set_input", &o) && numel(o) > 0)
      count_xfer(o->st->dev, 2, (uint64_t)numel(o) * dml_dtype_size(o->dtype));
  }
  return e;
}

dml_status_t dml_rt_session_set_input_tensor(dml_rt_session_t *s, uint32_t index,
                                             dml_rt_tensor_t t) {
  const char *op = "tensor.session_set_input";
  slot_t *x = NULL;
  DML_RETURN_IF_ERROR(get(t, op, &x));
  dml_tensor_t h;
  memset(&h, 0, sizeof h);
  h.dtype = x->dtype;
  h.rank = x->rank;
  memcpy(h.dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
  dml_rt_device_t *d = x->st->dev;
  if (d->mem && dml_rt_session_input_on_device_ok(s, index, d->mem, d->h)) {
    /* on the session's device: a copy on the device at each run */
    dml_rt_tensor_t v = DML_RT_TENSOR_NONE;
    dml_status_t e = dense_on_device(x, t, &v);
    if (!e) return dml_rt_session_set_input_device(s, index, &h, v);
    if (dml_status_code(e) != DML_STATUS_UNIMPLEMENTED) return e;
    dml_status_free(e); /* no device-side copy of this view: through the host */
  }
  int owned = 0;
  DML_RETURN_IF_ERROR(host_dense(x, op, &h.data, &owned));
  dml_status_t e = dml_rt_session_set_input(s, index, &h);
  if (owned) free(h.data);
  return e;
}

dml_status_t dml_rt_session_get_output_tensor(dml_rt_session_t *s, uint32_t index,
                                              dml_rt_device_t *d, dml_rt_tensor_t *out) {
  const char *op = "tensor.session_get_output";
  if (!d) return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "no device");
  if (!out) return dml_status_make(DML_STATUS_INVALID_ARGUMENT, op, "no output handle");
  if (d->mem && dml_rt_session_output_on_device_ok(s, d->mem, d->h)) {
    /* on the session's device: a copy on the device, no host round trip */
    dml_tensor_t y;
    DML_RETURN_IF_ERROR(dml_rt_session_output_shape(s, index, &y));
    DML_RETURN_IF_ERROR(make(d, y.dtype, y.rank, y.dims, NULL, op, out));
    void *buf = NULL;
    uint64_t off = 0;
    dml_status_t e = dml_rt_tensor_buffer(*out, op, &buf, &off);
    if (!e) e = dml_rt_session_copy_output_device(s, index, buf, off);
    if (!e && dml_tensor_bytes(&y)) count_xfer(d, 2, (uint64_t)dml_tensor_bytes(&y));
    if (e) dml_status_free(dml_rt_tensor_free(*out));
    if (e) *out = DML_RT_TENSOR_NONE;
    return e;
  }
  dml_tensor_t y;
  DML_RETURN_IF_ERROR(dml_rt_session_get_output(s, index, &y));
  dml_status_t e = make(d, y.dtype, y.rank, y.dims, y.data, op, out);
  return e;
}
