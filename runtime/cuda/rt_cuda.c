/* rt_cuda.c — the CUDA backend (rt_backend.h). libcuda.so.1 (the driver) is
 * opened with dlopen at run time: the runtime links no CUDA library and
 * needs no CUDA header (the few driver-API types are declared below, as
 * the CUDA driver API documents them).
 *
 * Per session: the device's primary context and one non-blocking stream;
 * device memory for the arena (the planned size) and the weights (uploaded
 * once), and pinned host staging holding every input and output at its
 * bound, all allocated once at open; one module per kernel, loaded from the
 * cubin matching the device's compute capability, else from the PTX (the
 * driver JIT-compiles it). Per symbol-value tuple (the batch): the plan
 * runs once eagerly with events around each kernel (the per-kernel times
 * dml_rt_session_kernel_info reports), then the whole plan — input copies,
 * every kernel, output copies — is captured into a CUDA graph that every
 * later run with those values replays with one launch. With the environment
 * variable DMLC_CUDA_PROFILE=1 at session creation every run is eager and
 * timed instead (per-kernel times of each run, for benchmarks; no graph).
 * DMLC_CUDA_FORCE_PTX=1 loads the PTX even where a cubin fits. Errors: op
 * "rt.cuda".
 *
 * Sessions sharing a training package's globals (rt_backend.h open's
 * `share`) use the first one's device copy of the weights: the Assign
 * kernels of train_step store into it and eval_step/forward read it. Every
 * session uses the device's primary context, so the pointer is valid in
 * all of them; the owner frees it when the last session using it closes.
 * Runs end with a stream synchronization, so a run (on any stream) sees
 * what the previous one wrote. */
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dml_eager_lib.h"
#include "rt_backend.h"

#define OP "rt.cuda"
#define MAX_DEVICES 16
#define MAX_GRAPHS 4

/* ---- driver API types (cuda.h's, by value) ---- */
typedef int CUresult; /* CUDA_SUCCESS = 0 */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
enum {
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  CU_STREAM_NON_BLOCKING = 1,
  CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
  CUDA_ERROR_NO_DEVICE = 100,
};

/* The driver functions, with the versioned symbol each resolves to. */
#define CU_FNS(X)                                                                       \
  X(cuInit, "cuInit", (unsigned))                                                       \
  X(cuDriverGetVersion, "cuDriverGetVersion", (int *))                                  \
  X(cuDeviceGetCount, "cuDeviceGetCount", (int *))                                      \
  X(cuDeviceGet, "cuDeviceGet", (CUdevice *, int))                                      \
  X(cuDeviceGetName, "cuDeviceGetName", (char *, int, CUdevice))                        \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", (int *, int, CUdevice))               \
  X(cuDeviceTotalMem, "cuDeviceTotalMem_v2", (size_t *, CUdevice))                      \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext *, CUdevice))      \
  X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", (CUdevice))              \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", (CUcontext))                                    \
  X(cuStreamCreate, "cuStreamCreate", (CUstream *, unsigned))                           \
  X(cuStreamDestroy, "cuStreamDestroy_v2", (CUstream))                                  \
  X(cuStreamSynchronize, "cuStreamSynchronize", (CUstream))                             \
  X(cuMemAlloc, "cuMemAlloc_v2", (CUdeviceptr *, size_t))                               \
  X(cuMemFree, "cuMemFree_v2", (CUdeviceptr))                                           \
  X(cuMemAllocHost, "cuMemAllocHost_v2", (void **, size_t))                             \
  X(cuMemFreeHost, "cuMemFreeHost", (void *))                                           \
  X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", (CUdeviceptr, const void *, size_t))               \
  X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2",                                          \
    (CUdeviceptr, const void *, size_t, CUstream))                                      \
  X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", (void *, CUdeviceptr, size_t, CUstream)) \
  X(cuModuleLoadData, "cuModuleLoadData", (CUmodule *, const void *))                   \
  X(cuModuleGetFunction, "cuModuleGetFunction", (CUfunction *, CUmodule, const char *)) \
  X(cuModuleUnload, "cuModuleUnload", (CUmodule))                                       \
  X(cuModuleGetGlobal, "cuModuleGetGlobal_v2",                                          \
    (CUdeviceptr *, size_t *, CUmodule, const char *))                                  \
  X(cuFuncSetAttribute, "cuFuncSetAttribute", (CUfunction, int, int))                   \
  X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", (void *, CUdeviceptr, size_t))                     \
  X(cuLaunchKernel, "cuLaunchKernel",                                                   \
    (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,  \
     CUstream, void **, void **))                                                       \
  X(cuEventCreate, "cuEventCreate", (CUevent *, unsigned))                              \
  X(cuEventDestroy, "cuEventDestroy_v2", (CUevent))                                     \
  X(cuEventRecord, "cuEventRecord", (CUevent, CUstream))                                \
  X(cuEventSynchronize, "cuEventSynchronize", (CUevent))                                \
  X(cuStreamBeginCapture, "cuStreamBeginCapture_v2", (CUstream, int))                   \
  X(cuStreamEndCapture, "cuStreamEndCapture", (CUstream, CUgraph *))                    \
  X(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags",                         \
    (CUgraphExec *, CUgraph, unsigned long long))                                       \
  X(cuGraphLaunch, "cuGraphLaunch", (CUgraphExec, CUstream))                            \
  X(cuGraphExecDestroy, "cuGraphExecDestroy", (CUgraphExec))                            \
  X(cuGraphDestroy, "cuGraphDestroy", (CUgraph))

typedef struct cu_device {
  char name[256];
  int cc_major, cc_minor, sms;
  int max_grid[3];
  size_t memory;
} cu_device_t;

typedef struct cu_driver {
  void *lib;
  char error[768];
  int version; /* cuDriverGetVersion: 1000 * major + 10 * minor */
  int n_devices;
  cu_device_t dev[MAX_DEVICES];
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
#define X(f, sym, params) CUresult(*f) params;
  CU_FNS(X)
#undef X
} cu_driver_t;

static cu_driver_t g_cu;
static pthread_once_t g_cu_once = PTHREAD_ONCE_INIT;

static const char *err_name(CUresult r) {
  const char *n = NULL;
  if (g_cu.cuGetErrorName && g_cu.cuGetErrorName(r, &n) == 0 && n) return n;
  return "unknown CUresult";
}

static void driver_init(void) {
  cu_driver_t *D = &g_cu;
  const char *path = getenv("DMLC_CUDA_DRIVER");
  if (!path || !*path) path = "libcuda.so.1";
  D->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!D->lib) {
    const char *e = dlerror();
    snprintf(D->error, sizeof D->error,
             "no CUDA driver found (%s could not be opened: %s); install the NVIDIA "
             "driver, or run on a machine with an NVIDIA GPU",
             path, e ? e : "?");
    return;
  }
#define X(f, sym, params)                                                               \
  *(void **)&D->f = dlsym(D->lib, sym);                                                 \
  if (!D->f) {                                                                          \
    snprintf(D->error, sizeof D->error, "the CUDA driver %s lacks %s (too old?)", path, \
             sym);                                                                      \
    return;                                                                             \
  }
  CU_FNS(X)
#undef X
  *(void **)&D->cuGetErrorName = dlsym(D->lib, "cuGetErrorName");
  *(void **)&D->cuEventElapsedTime = dlsym(D->lib, "cuEventElapsedTime_v2");
  if (!D->cuEventElapsedTime)
    *(void **)&D->cuEventElapsedTime = dlsym(D->lib, "cuEventElapsedTime");
  CUresult r = D->cuInit(0);
  if (r) {
    snprintf(D->error, sizeof D->error,
             r == CUDA_ERROR_NO_DEVICE
                 ? "no CUDA device found (cuInit: %s)"
                 : "the CUDA driver failed to initialize (cuInit: %s)",
             err_name(r));
    return;
  }
  D->cuDriverGetVersion(&D->version);
  int n = 0;
  r = D->cuDeviceGetCount(&n);
  if (r || n <= 0) {
    snprintf(D->error, sizeof D->error, "no CUDA device found (cuDeviceGetCount: %s, %d)",
             r ? err_name(r) : "CUDA_SUCCESS", n);
    return;
  }
  if (n > MAX_DEVICES) n = MAX_DEVICES;
  for (int i = 0; i < n; i++) {
    cu_device_t *d = &D->dev[i];
    CUdevice h;
    if (D->cuDeviceGet(&h, i) ||
        D->cuDeviceGetName(d->name, (int)sizeof d->name - 1, h) ||
        D->cuDeviceGetAttribute(&d->cc_major,
                                CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, h) ||
        D->cuDeviceGetAttribute(&d->cc_minor,
                                CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, h) ||
        D->cuDeviceGetAttribute(&d->sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, h) ||
        D->cuDeviceGetAttribute(&d->max_grid[0], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, h) ||
        D->cuDeviceGetAttribute(&d->max_grid[1], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, h) ||
        D->cuDeviceGetAttribute(&d->max_grid[2], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, h) ||
        D->cuDeviceTotalMem(&d->memory, h)) {
      snprintf(D->error, sizeof D->error, "querying CUDA device %d failed", i);
      return;
    }
  }
  D->n_devices = n;
}

static dml_status_t driver_get(cu_driver_t **out) {
  pthread_once(&g_cu_once, driver_init);
  if (!g_cu.n_devices)
    return dml_status_make(DML_STATUS_NOT_FOUND, OP, "%s",
                           g_cu.error[0] ? g_cu.error : "no CUDA device found");
  *out = &g_cu;
  return DML_OK;
}

dml_status_t dml_rt_cuda_devices(dml_rt_device_info_t *out, uint32_t cap,
                                 uint32_t *out_n) {
  cu_driver_t *D = NULL;
  DML_RETURN_IF_ERROR(driver_get(&D));
  for (int i = 0; i < D->n_devices && (uint32_t)i < cap; i++) {
    dml_rt_device_info_t *o = &out[i];
    memset(o, 0, sizeof *o);
    snprintf(o->id, sizeof o->id, "cuda:%d", i);
    snprintf(o->name, sizeof o->name, "%s", D->dev[i].name);
    o->kind = "CUDA GPU";
    o->memory_bytes = D->dev[i].memory;
    o->api_major = (uint32_t)D->dev[i].cc_major;
    o->api_minor = (uint32_t)D->dev[i].cc_minor;
    o->api_patch = (uint32_t)D->version;
    o->is_default = i == 0;
  }
  *out_n = (uint32_t)D->n_devices;
  return DML_OK;
}

/* ---- sessions ---- */

typedef struct cu_devmem cu_devmem_t; /* an eager device (below) */

typedef struct cu_graph {
  int used;
  uint32_t seg; /* the segment it runs (docs/kernels.md "Data-dependent output sizes") */
  /* the inputs it does not upload from the staging (bound on the device:
   * dml_rt_exec_t.dev_in) and whether it leaves the outputs on the device */
  uint64_t skip_in;
  int lazy;
  int64_t sym[DML_KPKG_MAX_SYMBOLS];
  CUgraphExec exec;
} cu_graph_t;

typedef struct cu_session {
  /* The session owning `weights` (this one, or the one whose globals it
   * shares; then `weights` is a copy of its pointer); the owner's `refs`
   * counts the sessions using it. */
  struct cu_session *owner;
  atomic_int refs;
  uint64_t weights_size;
  cu_driver_t *D;
  int ordinal;
  CUdevice dev;
  CUcontext ctx;
  CUstream stream;
  CUdeviceptr arena, weights;
  uint8_t *staging;                    /* pinned */
  uint64_t arena_bytes, staging_bytes; /* as allocated */
  const dml_kpkg_function_t *kf;
  CUmodule *modules;
  CUfunction *fns;
  unsigned *smem;  /* per kernel: dynamic shared memory, bytes */
  CUevent *events; /* n_kernels + 1 */
  double *kernel_ms;
  dml_rt_gpu_plan_t plan; /* staging regions, random state, dims slot, host entries */
  uint32_t n_symbols;
  int64_t last_sym[DML_KPKG_MAX_SYMBOLS];
  cu_graph_t *graphs; /* MAX_GRAPHS per segment */
  uint32_t n_graphs, next_graph;
  int ran;
  int profile; /* DMLC_CUDA_PROFILE: every run eager and timed */
  /* cuMemcpyDtoDAsync_v2 (NULL where the driver lacks it: no inputs or
   * outputs on the device) */
  CUresult (*dtod_async)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  char desc[512];
} cu_session_t;

#define CUCHECK(call, what)                                                             \
  do {                                                                                  \
    CUresult r_ = (call);                                                               \
    if (r_)                                                                             \
      return dml_status_make(DML_STATUS_INTERNAL, OP, "%s failed: %s (%d) on %s", what, \
                             err_name(r_), r_, c->desc);                                \
  } while (0)

static void cu_close(void *state) {
  cu_session_t *c = (cu_session_t *)state;
  if (!c) return;
  cu_driver_t *D = c->D;
  cu_session_t *o = c->owner;
  int last = atomic_fetch_sub(&o->refs, 1) == 1;
  if (c->ctx) {
    D->cuCtxSetCurrent(c->ctx);
    if (c->stream) D->cuStreamSynchronize(c->stream);
    for (uint32_t i = 0; c->graphs && i < c->n_graphs; i++)
      if (c->graphs[i].exec) D->cuGraphExecDestroy(c->graphs[i].exec);
    for (uint32_t i = 0; c->events && i <= c->kf->n_kernels; i++)
      if (c->events[i]) D->cuEventDestroy(c->events[i]);
    for (uint32_t i = 0; c->modules && i < c->kf->n_kernels; i++)
      if (c->modules[i]) D->cuModuleUnload(c->modules[i]);
    if (c->arena) D->cuMemFree(c->arena);
    /* the owner's weights, once no session uses them (same primary context) */
    if (last && o->weights) D->cuMemFree(o->weights);
    if (c->staging) D->cuMemFreeHost(c->staging);
    if (c->stream) D->cuStreamDestroy(c->stream);
    D->cuDevicePrimaryCtxRelease(c->dev);
  }
  free(c->graphs);
  c->graphs = NULL;
  dml_rt_gpu_plan_free(&c->plan);
  free(c->modules);
  free(c->fns);
  free(c->smem);
  free(c->events);
  free(c->kernel_ms);
  c->modules = NULL;
  c->fns = NULL;
  c->events = NULL;
  c->kernel_ms = NULL;
  c->ctx = NULL;
  if (c != o) free(c);
  if (last) free(o);
}

static dml_status_t pick_device(cu_driver_t *D, const char *device, int *out) {
  if (!strcmp(device, "cuda")) {
    *out = 0;
    return DML_OK;
  }
  const char *p = device + 5; /* after "cuda:" */
  char *end = NULL;
  unsigned long n = strtoul(p, &end, 10);
  if (!*p || *end || n >= (unsigned long)D->n_devices)
    return dml_status_make(DML_STATUS_NOT_FOUND, OP,
                           "no CUDA device '%s' (%d device%s: cuda:0..cuda:%d; see dmlc "
                           "devices)",
                           device, D->n_devices, D->n_devices == 1 ? "" : "s",
                           D->n_devices - 1);
  *out = (int)n;
  return DML_OK;
}

static const char *image_kind(uint32_t kind) {
  return kind == DML_KPKG_CUDA_PTX || kind == DML_KPKG_CUDA_PTX_ARCH ? "PTX" : "cubin";
}

/* Picks kernel K's image for compute capability sm (major*10+minor): an
 * architecture-specific image (sm_XXa) for exactly sm, cubin before PTX;
 * else the cubin of the same major with the highest minor <= the device's;
 * else PTX whose target is <= sm (dml_kpkg.h). DMLC_CUDA_FORCE_PTX=1 skips
 * cubins, DMLC_CUDA_PORTABLE=1 (or !allow_arch) architecture-specific
 * images. */
static dml_status_t pick_image(const cu_session_t *c, const dml_kpkg_kernel_t *K, int sm,
                               int allow_arch, dml_kpkg_cuda_image_t *out) {
  dml_kpkg_cuda_image_t im[DML_KPKG_CUDA_MAX_IMAGES];
  uint32_t n = 0;
  DML_RETURN_IF_ERROR(dml_kpkg_cuda_images(K->code, K->code_bytes, im, &n));
  int best = -1, ptx = -1, arch = -1;
  const char *force_ptx = getenv("DMLC_CUDA_FORCE_PTX");
  int use_cubins = !(force_ptx && *force_ptx && strcmp(force_ptx, "0"));
  const char *portable = getenv("DMLC_CUDA_PORTABLE");
  int use_arch = allow_arch && !(portable && *portable && strcmp(portable, "0"));
  for (uint32_t i = 0; i < n; i++) {
    int s = (int)im[i].sm;
    if (use_arch && s == sm &&
        ((im[i].kind == DML_KPKG_CUDA_CUBIN_ARCH && use_cubins) ||
         (im[i].kind == DML_KPKG_CUDA_PTX_ARCH && arch < 0)))
      arch = (int)i;
    if (im[i].kind == DML_KPKG_CUDA_CUBIN && use_cubins && s / 10 == sm / 10 && s <= sm &&
        (best < 0 || s > (int)im[best].sm))
      best = (int)i;
    if (im[i].kind == DML_KPKG_CUDA_PTX && s <= sm && (ptx < 0 || s > (int)im[ptx].sm))
      ptx = (int)i;
  }
  if (best < 0) best = ptx;
  if (arch >= 0) best = arch;
  if (best >= 0) {
    *out = im[best];
    return DML_OK;
  }
  char have[256] = "";
  size_t at = 0;
  for (uint32_t i = 0; i < n && at < sizeof have - 32; i++)
    at += (size_t)snprintf(have + at, sizeof have - at, "%s%s sm_%u%s", i ? ", " : "",
                           image_kind(im[i].kind), im[i].sm,
                           im[i].kind >= DML_KPKG_CUDA_PTX_ARCH ? "a" : "");
  int has_ptx = 0;
  for (uint32_t i = 0; i < n; i++) has_ptx |= im[i].kind == DML_KPKG_CUDA_PTX;
  return dml_status_detail(
      dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                      has_ptx ? "package has no kernels for compute capability %d.%d and "
                                "its PTX targets a newer architecture"
                              : "package has no kernels for compute capability %d.%d and "
                                "no PTX",
                      sm / 10, sm % 10),
      "kernel %s has: %s; recompile with dmlc compile --target cuda --cuda-arch sm_%d",
      K->name, have, sm);
}

/* A kernel that needs dynamic shared memory says how much in a global
 * "<name>_dynamic_smem" (u32, bytes) of its module (docs/kernels.md); the
 * function is then allowed that much (cuFuncSetAttribute) and launched with
 * it. Errors: DATA_LOSS for a malformed global; RESOURCE_EXHAUSTED when
 * the device allows a block less. */
static dml_status_t dynamic_smem(cu_session_t *c, uint32_t k, const char *name) {
  char sym[DML_KPKG_NAME_BYTES + 32];
  snprintf(sym, sizeof sym, "%s_dynamic_smem", name);
  CUdeviceptr at = 0;
  size_t size = 0;
  c->smem[k] = 0;
  if (c->D->cuModuleGetGlobal(&at, &size, c->modules[k], sym)) return DML_OK; /* none */
  unsigned bytes = 0;
  if (size != sizeof bytes || c->D->cuMemcpyDtoH(&bytes, at, sizeof bytes))
    return dml_status_make(DML_STATUS_DATA_LOSS, OP, "kernel %s: unreadable %s", name,
                           sym);
  int optin = 0;
  if (c->D->cuDeviceGetAttribute(
          &optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, c->dev) ||
      (unsigned)optin < bytes)
    return dml_status_make(
        DML_STATUS_RESOURCE_EXHAUSTED, OP,
        "kernel %s needs %u bytes of shared memory per block; %s allows %d", name, bytes,
        c->desc, optin);
  CUresult r = c->D->cuFuncSetAttribute(
      c->fns[k], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)bytes);
  if (r)
    return dml_status_make(DML_STATUS_INTERNAL, OP,
                           "cuFuncSetAttribute of %s failed: %s (%d)", name, err_name(r),
                           r);
  c->smem[k] = bytes;
  return DML_OK;
}

/* Loads image `im` into module k (PTX NUL-terminated for the JIT, a cubin
 * copied to an aligned buffer). Returns the driver's result; *out_oom on
 * allocation failure. */
static CUresult load_image(cu_session_t *c, uint32_t k, const dml_kpkg_cuda_image_t *im,
                           int *out_oom) {
  int ptx = im->kind == DML_KPKG_CUDA_PTX || im->kind == DML_KPKG_CUDA_PTX_ARCH;
  /* an aligned copy: the image sits at a 4-byte offset of the package */
  char *copy = (char *)malloc((size_t)im->size + 1);
  *out_oom = !copy;
  if (!copy) return (CUresult)2;
  memcpy(copy, im->data, im->size);
  if (ptx) copy[im->size] = 0;
  CUresult r = c->D->cuModuleLoadData(&c->modules[k], copy);
  free(copy);
  return r;
}

/* One module per kernel. An architecture-specific image the driver cannot
 * load (e.g. PTX ISA 8.0 on a driver older than CUDA 12) falls back to the
 * kernel's portable images when it has any. */
static dml_status_t load_modules(cu_session_t *c, int sm, int *n_cubin, int *n_ptx,
                                 int *n_arch) {
  const dml_kpkg_function_t *kf = c->kf;
  *n_cubin = *n_ptx = *n_arch = 0;
  for (uint32_t k = 0; k < kf->n_kernels; k++) {
    const dml_kpkg_kernel_t *K = &kf->kernels[k];
    if (K->kind == DML_KPKG_KIND_HOST) continue; /* host nodes: no code */
    dml_kpkg_cuda_image_t im;
    DML_RETURN_IF_ERROR(pick_image(c, K, sm, 1, &im));
    int oom = 0;
    CUresult r = load_image(c, k, &im, &oom);
    if (r && !oom && im.kind >= DML_KPKG_CUDA_PTX_ARCH) {
      dml_kpkg_cuda_image_t alt;
      dml_status_t s = pick_image(c, K, sm, 0, &alt);
      int portable = s == DML_OK;
      dml_status_free(s);
      if (portable) {
        im = alt;
        r = load_image(c, k, &im, &oom);
      }
    }
    if (oom) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
    if (r)
      return dml_status_make(
          DML_STATUS_INTERNAL, OP,
          "cuModuleLoadData of kernel %s (%s sm_%u%s) failed: %s (%d) on %s", K->name,
          image_kind(im.kind), im.sm, im.kind >= DML_KPKG_CUDA_PTX_ARCH ? "a" : "",
          err_name(r), r, c->desc);
    int ptx = im.kind == DML_KPKG_CUDA_PTX || im.kind == DML_KPKG_CUDA_PTX_ARCH;
    *n_ptx += ptx;
    *n_cubin += !ptx;
    *n_arch += im.kind >= DML_KPKG_CUDA_PTX_ARCH;
    r = c->D->cuModuleGetFunction(&c->fns[k], c->modules[k], K->name);
    if (r)
      return dml_status_make(DML_STATUS_DATA_LOSS, OP,
                             "kernel %s: its module has no entry point of that name (%s)",
                             K->name, err_name(r));
    DML_RETURN_IF_ERROR(dynamic_smem(c, k, K->name));
  }
  return DML_OK;
}

static int devmem_ordinal(const cu_devmem_t *d);

static dml_status_t cu_open(const dml_rt_model_t *m, const dml_pkg_function_t *f,
                            const char *device, const uint8_t *weights, void *share,
                            void *on_dev, void **out_state) {
  const dml_pkg_graph_t *g = m->graph;
  const dml_kpkg_function_t *kf = NULL;
  DML_RETURN_IF_ERROR(
      dml_rt_gpu_kernels_for(OP, "CUDA", "cuda", m, f, m->kernels_cuda, &kf));
  cu_driver_t *D = NULL;
  DML_RETURN_IF_ERROR(driver_get(&D));
  cu_session_t *c = (cu_session_t *)calloc(1, sizeof *c);
  if (!c) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  c->owner = c;
  atomic_init(&c->refs, 1);
  c->weights_size = m->weights_size;
  c->D = D;
  c->kf = kf;
  c->n_symbols = g->n_symbols;
  const char *prof = getenv("DMLC_CUDA_PROFILE");
  c->profile = prof && *prof && strcmp(prof, "0") != 0;
  dml_status_t s = pick_device(D, device, &c->ordinal);
  cu_session_t *o = share ? ((cu_session_t *)share)->owner : NULL;
  if (!s && o && o->ordinal != c->ordinal)
    s = dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                        "'%s' is not the device of the session whose globals it shares "
                        "(%s): sessions sharing globals run on one device",
                        device, o->desc);
  /* an eager device of the same ordinal: the same primary context */
  if (!s && on_dev && devmem_ordinal((const cu_devmem_t *)on_dev) != c->ordinal)
    s = dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                        "'%s' is not the eager device's (cuda:%d)", device,
                        devmem_ordinal((const cu_devmem_t *)on_dev));
  *(void **)&c->dtod_async = dlsym(D->lib, "cuMemcpyDtoDAsync_v2");
  const cu_device_t *dv = s ? NULL : &D->dev[c->ordinal];
  if (!s) {
    snprintf(c->desc, sizeof c->desc, "cuda:%d (%s, compute capability %d.%d)",
             c->ordinal, dv->name, dv->cc_major, dv->cc_minor);
    c->modules = (CUmodule *)calloc(kf->n_kernels ? kf->n_kernels : 1, sizeof(CUmodule));
    c->fns = (CUfunction *)calloc(kf->n_kernels ? kf->n_kernels : 1, sizeof(CUfunction));
    c->smem = (unsigned *)calloc(kf->n_kernels ? kf->n_kernels : 1, sizeof(unsigned));
    c->events = (CUevent *)calloc(kf->n_kernels + 1, sizeof(CUevent));
    c->kernel_ms = (double *)calloc(kf->n_kernels + 1, sizeof(double));
    if (!c->smem || !c->modules || !c->fns || !c->events || !c->kernel_ms)
      s = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  }
  CUresult r = 0;
  const char *what = NULL;
  if (!s) {
    if ((r = D->cuDeviceGet(&c->dev, c->ordinal))) what = "cuDeviceGet";
    if (!r && (r = D->cuDevicePrimaryCtxRetain(&c->ctx, c->dev)))
      what = "cuDevicePrimaryCtxRetain";
    if (!r && (r = D->cuCtxSetCurrent(c->ctx))) what = "cuCtxSetCurrent";
    if (!r && (r = D->cuStreamCreate(&c->stream, CU_STREAM_NON_BLOCKING)))
      what = "cuStreamCreate";
    if (r)
      s = dml_status_make(DML_STATUS_INTERNAL, OP, "%s failed: %s (%d) on %s", what,
                          err_name(r), r, c->desc);
  }
  uint64_t staging = 0;
  /* staging regions 256-byte aligned */
  if (!s) s = dml_rt_gpu_plan(OP, "CUDA", m, f, kf, 256, &c->plan, &staging);
  if (!s) {
    c->n_graphs = MAX_GRAPHS *
                  dml_rt_gpu_segments_host(&c->plan.dims, &c->plan.host, kf->n_kernels);
    c->graphs = (cu_graph_t *)calloc(c->n_graphs, sizeof(cu_graph_t));
    if (!c->graphs)
      s = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  }
  if (!s) {
    c->arena_bytes = c->plan.dims.arena_bytes ? c->plan.dims.arena_bytes : 4;
    c->staging_bytes = staging ? staging : 4;
    if ((r = D->cuMemAlloc(&c->arena, c->arena_bytes))) what = "cuMemAlloc (the arena)";
    if (o) {
      /* the shared globals: the owner's device copy */
      atomic_fetch_add(&o->refs, 1);
      c->owner = o;
      c->weights = o->weights;
    } else if (!r &&
               (r = D->cuMemAlloc(&c->weights, m->weights_size ? m->weights_size : 4))) {
      what = "cuMemAlloc (the weights)";
    }
    if (!r && (r = D->cuMemAllocHost((void **)&c->staging, staging ? staging : 4)))
      what = "cuMemAllocHost (input/output staging)";
    if (!r && !o && m->weights_size &&
        (r = D->cuMemcpyHtoD(c->weights, weights, m->weights_size)))
      what = "cuMemcpyHtoD (the weights)";
    for (uint32_t i = 0; !r && i <= kf->n_kernels; i++)
      if ((r = D->cuEventCreate(&c->events[i], 0))) what = "cuEventCreate";
    if (r)
      s = dml_status_make(
          r == 2 ? DML_STATUS_RESOURCE_EXHAUSTED : DML_STATUS_INTERNAL, OP,
          "%s failed: %s (%d) on %s (arena %" PRIu64 " bytes, weights %" PRIu64 " bytes)",
          what, err_name(r), r, c->desc, (uint64_t)f->arena_bytes,
          (uint64_t)m->weights_size);
  }
  int n_cubin = 0, n_ptx = 0, n_arch = 0;
  if (!s)
    s = load_modules(c, dv->cc_major * 10 + dv->cc_minor, &n_cubin, &n_ptx, &n_arch);
  if (s) {
    cu_close(c);
    return s;
  }
  size_t dl = strlen(c->desc);
  snprintf(c->desc + dl, sizeof c->desc - dl,
           ", %d kernel%s from cubins, %d from PTX, %d architecture-specific (sm_%d%da)",
           n_cubin, n_cubin == 1 ? "" : "s", n_ptx, n_arch, dv->cc_major, dv->cc_minor);
  *out_state = c;
  return DML_OK;
}

/* The mask of the inputs of e bound on the device (dml_rt_exec_t.dev_in:
 * never uploaded from the staging; at most 64, rt_session.c's rule). */
static uint64_t skip_in(const dml_rt_exec_t *e) {
  uint64_t m = 0;
  for (uint32_t i = 0; e->dev_in && i < e->fn->n_inputs && i < 64; i++)
    if (e->dev_in[i]) m |= (uint64_t)1 << i;
  return m;
}

/* Copies the n regions at x on the stream, at the run's sizes: staging ->
 * device arena (`up`: inputs, values the host computed) or device arena ->
 * staging (outputs, values the host reads); `what` names them in errors. */
static dml_status_t copy_regions(cu_session_t *c, const dml_rt_exec_t *e,
                                 const dml_rt_io_region_t *x, uint32_t n, int up,
                                 uint64_t skip, const char *what) {
  cu_driver_t *D = c->D;
  for (uint32_t i = 0; i < n; i++, x++) {
    if (i < 64 && (skip >> i & 1u)) continue;
    int64_t nb = dml_rt_gpu_io_bytes(e, x->value);
    if (nb <= 0) continue;
    if (up)
      CUCHECK(D->cuMemcpyHtoDAsync(c->arena + x->arena_offset,
                                   c->staging + x->staging_offset, (size_t)nb, c->stream),
              what);
    else
      CUCHECK(D->cuMemcpyDtoHAsync(c->staging + x->staging_offset,
                                   c->arena + x->arena_offset, (size_t)nb, c->stream),
              what);
  }
  return DML_OK;
}

/* Copies host entry k's regions (dml_rt_host_plan_t) on the stream:
 * downloads (device arena -> staging) or uploads (staging -> device
 * arena). */
static dml_status_t host_copies(cu_session_t *c, const dml_rt_exec_t *e, uint32_t k,
                                int up) {
  const uint32_t *at = up ? c->plan.host.up_at : c->plan.host.down_at;
  return copy_regions(c, e, c->plan.host.regions + at[2 * k], at[2 * k + 1] - at[2 * k],
                      up, 0,
                      up ? "cuMemcpyHtoDAsync (values the host computed)"
                         : "cuMemcpyDtoHAsync (values the host reads)");
}

/* Enqueues segment [b, end) of the plan for the symbol values of `e` on
 * the stream: the input copies before the first segment on the device,
 * the values a host entry just before it wrote, each kernel (with events
 * around each when `timed`), then the dims slot's copy to the staging
 * after a segment ending with a kernel that counts dims on the device, the
 * values the host entry after it reads, or the output copies after the
 * last. `host_io` 0 (cu_run_kernel) leaves out the host entries' copies. */
static dml_status_t enqueue(cu_session_t *c, const dml_rt_exec_t *e, uint32_t b,
                            uint32_t end, int timed, int host_io) {
  cu_driver_t *D = c->D;
  const dml_kpkg_function_t *kf = c->kf;
  const cu_device_t *dv = &D->dev[c->ordinal];
  uint32_t first = c->plan.host.used ? c->plan.host.first_gpu : 0;
  if (b == first)
    DML_RETURN_IF_ERROR(copy_regions(c, e, c->plan.inputs, c->plan.n_inputs, 1,
                                     skip_in(e), "cuMemcpyHtoDAsync (inputs)"));
  /* this run's seed and step (cu_run writes the staging) */
  if (b == first && c->plan.rng.used)
    CUCHECK(D->cuMemcpyHtoDAsync(c->arena + c->plan.rng.arena_offset,
                                 c->staging + c->plan.rng.staging_offset,
                                 DML_PHILOX_SLOT_BYTES, c->stream),
            "cuMemcpyHtoDAsync (random state)");
  struct {
    unsigned sym[DML_KPKG_MAX_SYMBOLS];
  } syms;
  memset(&syms, 0, sizeof syms);
  for (uint32_t i = 0; i < e->n_symbols && i < DML_KPKG_MAX_SYMBOLS; i++)
    syms.sym[i] = (unsigned)e->sym[i];
  void *params[3] = {&c->arena, &c->weights, &syms};
  /* the host wrote */
  if (host_io && c->plan.host.used && b > 0 && c->plan.host.is_host[b - 1])
    DML_RETURN_IF_ERROR(host_copies(c, e, b - 1, 1));
  if (timed) CUCHECK(D->cuEventRecord(c->events[b], c->stream), "cuEventRecord");
  for (uint32_t k = b; k < end; k++) {
    const dml_kpkg_kernel_t *K = &kf->kernels[k];
    unsigned grid[3];
    for (int d = 0; d < 3; d++) {
      int64_t items = dml_kpkg_lin_eval(K->items[d], e->sym, e->n_symbols);
      int64_t n = items <= 0 ? 0 : (items + K->local[d] - 1) / K->local[d];
      if (n > dv->max_grid[d])
        return dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                               "kernel %s needs %" PRId64
                               " blocks along dim %d; %s allows %d",
                               K->name, n, d, c->desc, dv->max_grid[d]);
      grid[d] = (unsigned)n;
    }
    if (grid[0] && grid[1] && grid[2]) {
      CUresult r = D->cuLaunchKernel(c->fns[k], grid[0], grid[1], grid[2], K->local[0],
                                     K->local[1], K->local[2], c->smem[k], c->stream,
                                     params, NULL);
      if (r)
        return dml_status_make(
            DML_STATUS_INTERNAL, OP,
            "cuLaunchKernel of %s (grid %u,%u,%u block %u,%u,%u) failed: "
            "%s (%d) on %s",
            K->name, grid[0], grid[1], grid[2], K->local[0], K->local[1], K->local[2],
            err_name(r), r, c->desc);
    }
    if (timed) CUCHECK(D->cuEventRecord(c->events[k + 1], c->stream), "cuEventRecord");
  }
  if (host_io && c->plan.host.used && end < kf->n_kernels && c->plan.host.is_host[end])
    DML_RETURN_IF_ERROR(host_copies(c, e, end, 0)); /* what the host nodes read */
  int produces = dml_rt_gpu_segment_produces(&c->plan.dims, b, end);
  if (produces)
    CUCHECK(D->cuMemcpyDtoHAsync(c->staging + c->plan.dims.staging_offset,
                                 c->arena + c->plan.dims.arena_offset,
                                 DML_KPKG_DIMS_SLOT_BYTES, c->stream),
            "cuMemcpyDtoHAsync (device-produced dims)");
  if (!produces && end == kf->n_kernels && !e->outputs_lazy)
    DML_RETURN_IF_ERROR(copy_regions(c, e, c->plan.outputs, c->plan.n_outputs, 0, 0,
                                     "cuMemcpyDtoHAsync (outputs)"));
  return DML_OK;
}

/* The graph for segment `seg` and the symbol values of `e`, or NULL when
 * none is captured yet (the segment then runs eager and timed, and
 * captures one). */
static cu_graph_t *graph_for(cu_session_t *c, const dml_rt_exec_t *e, uint32_t seg) {
  for (uint32_t i = 0; i < c->n_graphs; i++)
    if (c->graphs[i].used && c->graphs[i].seg == seg &&
        c->graphs[i].skip_in == skip_in(e) && c->graphs[i].lazy == e->outputs_lazy &&
        !memcmp(c->graphs[i].sym, e->sym, e->n_symbols * sizeof(int64_t)))
      return &c->graphs[i];
  return NULL;
}

static dml_status_t capture(cu_session_t *c, const dml_rt_exec_t *e, uint32_t seg,
                            uint32_t b, uint32_t end) {
  cu_driver_t *D = c->D;
  cu_graph_t *G = &c->graphs[c->next_graph];
  c->next_graph = (c->next_graph + 1) % c->n_graphs;
  if (G->exec) D->cuGraphExecDestroy(G->exec);
  memset(G, 0, sizeof *G);
  CUCHECK(D->cuStreamBeginCapture(c->stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
          "cuStreamBeginCapture");
  dml_status_t s = enqueue(c, e, b, end, 0, 1);
  CUgraph graph = NULL;
  CUresult r = D->cuStreamEndCapture(c->stream, &graph);
  if (s) {
    if (graph) D->cuGraphDestroy(graph);
    return s;
  }
  CUCHECK(r, "cuStreamEndCapture");
  r = D->cuGraphInstantiateWithFlags(&G->exec, graph, 0);
  D->cuGraphDestroy(graph);
  CUCHECK(r, "cuGraphInstantiateWithFlags");
  memcpy(G->sym, e->sym, e->n_symbols * sizeof(int64_t));
  G->seg = seg;
  G->skip_in = skip_in(e);
  G->lazy = e->outputs_lazy;
  G->used = 1;
  return DML_OK;
}

/* dml_rt_gpu_run_t.run_segment: segment `seg` ([b, end)) from its graph,
 * or (none captured for these symbol values, or DMLC_CUDA_PROFILE) eagerly
 * with per-kernel events, then captured for the later runs; the stream is
 * synchronized. */
static dml_status_t cu_segment(void *state, const dml_rt_exec_t *e, uint32_t seg,
                               uint32_t b, uint32_t end) {
  cu_session_t *c = (cu_session_t *)state;
  cu_driver_t *D = c->D;
  cu_graph_t *G = c->profile ? NULL : graph_for(c, e, seg);
  if (G) {
    CUCHECK(D->cuGraphLaunch(G->exec, c->stream), "cuGraphLaunch");
  } else {
    /* First run with these sizes: eager with per-kernel events, then the
     * graph every later run replays. */
    DML_RETURN_IF_ERROR(enqueue(c, e, b, end, 1, 1));
    CUCHECK(D->cuStreamSynchronize(c->stream),
            "running the kernels (cuStreamSynchronize)");
    for (uint32_t k = b; k < end; k++) {
      float ms = -1.0f;
      if (!D->cuEventElapsedTime ||
          D->cuEventElapsedTime(&ms, c->events[k], c->events[k + 1]))
        ms = -1.0f;
      c->kernel_ms[k] = ms;
    }
    if (!c->profile) DML_RETURN_IF_ERROR(capture(c, e, seg, b, end));
  }
  CUCHECK(D->cuStreamSynchronize(c->stream), "running the kernels (cuStreamSynchronize)");
  return DML_OK;
}

/* Runs the plan segment by segment (dml_rt_gpu_run_segments), each
 * segment through cu_segment. */
static dml_status_t cu_run(void *state, const dml_rt_exec_t *e) {
  cu_session_t *c = (cu_session_t *)state;
  cu_driver_t *D = c->D;
  c->ran = 0;
  CUCHECK(D->cuCtxSetCurrent(c->ctx), "cuCtxSetCurrent");
  /* the inputs bound on the device, into the arena ahead of the kernels on
   * the stream */
  for (uint32_t i = 0; e->dev_in && i < c->plan.n_inputs; i++) {
    if (!e->dev_in[i]) continue;
    int64_t nb = dml_rt_gpu_io_bytes(e, c->plan.inputs[i].value);
    if (nb <= 0) continue;
    /* already in place (the previous run's value: rt_backend.h arena_buffer) */
    if ((CUdeviceptr)(uintptr_t)e->dev_in[i] + e->dev_in_off[i] ==
        c->arena + c->plan.inputs[i].arena_offset)
      continue;
    if (!c->dtod_async)
      return dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                             "the CUDA driver lacks cuMemcpyDtoDAsync_v2");
    CUCHECK(c->dtod_async(c->arena + c->plan.inputs[i].arena_offset,
                          (CUdeviceptr)(uintptr_t)e->dev_in[i] + e->dev_in_off[i],
                          (size_t)nb, c->stream),
            "cuMemcpyDtoDAsync (an input on the device)");
  }
  const dml_rt_gpu_run_t g = {c->kf, &c->plan, c->staging, c->kernel_ms, cu_segment, c};
  DML_RETURN_IF_ERROR(dml_rt_gpu_run_segments(OP, &g, e));
  memcpy(c->last_sym, e->sym, e->n_symbols * sizeof(int64_t));
  c->ran = 1;
  return DML_OK;
}

/* rt_backend.h run_kernel: the host arena in (synchronous copies), kernel
 * k alone on the stream (eager, untimed), the arena back out. */
static dml_status_t cu_run_kernel(void *state, const dml_rt_exec_t *e, uint32_t k) {
  cu_session_t *c = (cu_session_t *)state;
  cu_driver_t *D = c->D;
  DML_RETURN_IF_ERROR(dml_rt_gpu_check_kernel(OP, c->kf, k));
  CUCHECK(D->cuCtxSetCurrent(c->ctx), "cuCtxSetCurrent");
  /* enqueue copies the inputs from the staging before the first kernel:
   * the same bytes as the arena's */
  if (k == (c->plan.host.used ? c->plan.host.first_gpu : 0))
    dml_rt_gpu_staging_copy(c->plan.inputs, c->plan.n_inputs, c->staging, e, 1);
  if (c->plan.rng.used) dml_rt_gpu_rng_words(e, c->staging + c->plan.rng.staging_offset);
  if (e->fn->arena_bytes)
    CUCHECK(
        D->cuMemcpyHtoDAsync(c->arena, e->arena, (size_t)e->fn->arena_bytes, c->stream),
        "cuMemcpyHtoDAsync (arena)");
  if (c->plan.rng.used)
    CUCHECK(D->cuMemcpyHtoDAsync(c->arena + c->plan.rng.arena_offset,
                                 c->staging + c->plan.rng.staging_offset,
                                 DML_PHILOX_SLOT_BYTES, c->stream),
            "cuMemcpyHtoDAsync (random state)");
  DML_RETURN_IF_ERROR(enqueue(c, e, k, k + 1, 0, 0));
  CUCHECK(D->cuStreamSynchronize(c->stream), "running the kernel (cuStreamSynchronize)");
  if (e->fn->arena_bytes)
    CUCHECK(
        D->cuMemcpyDtoHAsync(e->arena, c->arena, (size_t)e->fn->arena_bytes, c->stream),
        "cuMemcpyDtoHAsync (arena)");
  CUCHECK(D->cuStreamSynchronize(c->stream), "cuStreamSynchronize (arena)");
  return DML_OK;
}

static dml_status_t cu_read_globals(void *state, uint8_t *dst) {
  cu_session_t *c = (cu_session_t *)state;
  cu_driver_t *D = c->D;
  if (!c->weights_size) return DML_OK;
  CUCHECK(D->cuCtxSetCurrent(c->ctx), "cuCtxSetCurrent");
  CUCHECK(D->cuMemcpyDtoHAsync(dst, c->weights, c->weights_size, c->stream),
          "cuMemcpyDtoHAsync (reading the globals)");
  CUCHECK(D->cuStreamSynchronize(c->stream), "cuStreamSynchronize (reading the globals)");
  return DML_OK;
}

static dml_status_t cu_write_globals(void *state, const uint8_t *src) {
  cu_session_t *c = (cu_session_t *)state;
  cu_driver_t *D = c->D;
  if (!c->weights_size) return DML_OK;
  CUCHECK(D->cuCtxSetCurrent(c->ctx), "cuCtxSetCurrent");
  CUCHECK(D->cuMemcpyHtoDAsync(c->weights, src, c->weights_size, c->stream),
          "cuMemcpyHtoDAsync (writing the globals)");
  CUCHECK(D->cuStreamSynchronize(c->stream), "cuStreamSynchronize (writing the globals)");
  return DML_OK;
}

static uint32_t cu_num_kernels(void *state) {
  return ((cu_session_t *)state)->kf->n_kernels;
}

static dml_status_t cu_kernel_info(void *state, uint32_t i, dml_rt_kernel_info_t *out) {
  cu_session_t *c = (cu_session_t *)state;
  return dml_rt_kernel_info_fill(OP, c->kf, i, c->ran, c->kernel_ms, c->last_sym,
                                 c->n_symbols, out);
}

static const char *cu_device_name(void *state) {
  return ((cu_session_t *)state)->desc;
}

/* rt_backend.h uses_device: an eager device of the session's context. */
static int cu_uses_device(void *state, void *dev);

/* rt_backend.h read_outputs: the outputs from the device arena to the
 * staging on the stream, synchronized, then to e->arena. */
static dml_status_t cu_read_outputs(void *state, const dml_rt_exec_t *e) {
  cu_session_t *c = (cu_session_t *)state;
  cu_driver_t *D = c->D;
  CUCHECK(D->cuCtxSetCurrent(c->ctx), "cuCtxSetCurrent");
  DML_RETURN_IF_ERROR(copy_regions(c, e, c->plan.outputs, c->plan.n_outputs, 0, 0,
                                   "cuMemcpyDtoHAsync (outputs)"));
  CUCHECK(D->cuStreamSynchronize(c->stream), "cuStreamSynchronize (outputs)");
  dml_rt_gpu_staging_copy(c->plan.outputs, c->plan.n_outputs, c->staging, e, 0);
  return DML_OK;
}

/* rt_backend.h read_output: output i alone from the device arena to the
 * staging on the stream, synchronized, then to e->arena. */
static dml_status_t cu_read_output(void *state, const dml_rt_exec_t *e, uint32_t i) {
  cu_session_t *c = (cu_session_t *)state;
  cu_driver_t *D = c->D;
  if (i >= c->plan.n_outputs)
    return dml_status_make(DML_STATUS_OUT_OF_RANGE, OP, "output %u of %u", i,
                           c->plan.n_outputs);
  CUCHECK(D->cuCtxSetCurrent(c->ctx), "cuCtxSetCurrent");
  DML_RETURN_IF_ERROR(
      copy_regions(c, e, c->plan.outputs + i, 1, 0, 0, "cuMemcpyDtoHAsync (an output)"));
  CUCHECK(D->cuStreamSynchronize(c->stream), "cuStreamSynchronize (an output)");
  dml_rt_gpu_staging_copy(c->plan.outputs + i, 1, c->staging, e, 0);
  return DML_OK;
}

/* rt_backend.h arena_buffer: the device arena's pointer. */
static void *cu_arena_buffer(void *state) {
  return (void *)(uintptr_t)((cu_session_t *)state)->arena;
}

/* rt_backend.h copy_output: output i from the device arena to device
 * pointer dst + dst_off (a tensor's), on the stream, synchronized. */
static dml_status_t cu_copy_output(void *state, const dml_rt_exec_t *e, uint32_t i,
                                   void *dst, uint64_t dst_off) {
  cu_session_t *c = (cu_session_t *)state;
  cu_driver_t *D = c->D;
  if (i >= c->plan.n_outputs)
    return dml_status_make(DML_STATUS_OUT_OF_RANGE, OP, "output %u of %u", i,
                           c->plan.n_outputs);
  int64_t nb = dml_rt_gpu_io_bytes(e, c->plan.outputs[i].value);
  if (nb <= 0) return DML_OK;
  if (!c->dtod_async)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                           "the CUDA driver lacks cuMemcpyDtoDAsync_v2");
  CUCHECK(D->cuCtxSetCurrent(c->ctx), "cuCtxSetCurrent");
  CUCHECK(
      c->dtod_async((CUdeviceptr)(uintptr_t)dst + dst_off,
                    c->arena + c->plan.outputs[i].arena_offset, (size_t)nb, c->stream),
      "cuMemcpyDtoDAsync (an output to the device)");
  CUCHECK(D->cuStreamSynchronize(c->stream), "cuStreamSynchronize (an output)");
  return DML_OK;
}

/* rt_backend.h memory: the arena, the weights when this session owns
 * them, the pinned staging; no device context of its own (the primary
 * context). */
static void cu_memory(void *state, dml_rt_device_memory_t *out) {
  const cu_session_t *c = (const cu_session_t *)state;
  memset(out, 0, sizeof *out);
  out->arena_bytes = c->arena_bytes;
  out->weights_bytes = c->owner == c ? (c->weights_size ? c->weights_size : 4) : 0;
  out->staging_bytes = c->staging_bytes;
}

static const dml_rt_backend_t k_cuda = {
    "cuda",           cu_open,        cu_run,          cu_read_globals,
    cu_write_globals, cu_num_kernels, cu_kernel_info,  cu_device_name,
    cu_close,         cu_run_kernel,  cu_uses_device,  cu_read_outputs,
    cu_copy_output,   cu_memory,      cu_arena_buffer, cu_read_output};

const dml_rt_backend_t *dml_rt_cuda_backend(void) {
  return &k_cuda;
}

/* ---- device memory for eager tensors (rt_backend.h dml_rt_devmem_t) ----
 * The device's primary context (made current on the calling thread by
 * every call), cuMemAlloc'd buffers and the synchronous cuMemcpy calls
 * (they return once the copy is complete). Eager ops run the kernels of
 * the PTX library (dml_eager_lib.h dml_eager_ptx): a module per kernel,
 * loaded on its first use (the driver JIT-compiles the PTX) and kept until
 * the device closes; each op is launched on the context's default stream
 * and waited for. */

struct cu_devmem {
  cu_driver_t *D;
  CUdevice dev;
  CUcontext ctx;
  CUresult (*dtod)(CUdeviceptr, CUdeviceptr, size_t); /* cuMemcpyDtoD_v2 */
  char desc[512];
  int ordinal;
  CUmodule *modules; /* per row of dml_eager_ptx; NULL until loaded */
  CUfunction *fns;
};

static int devmem_ordinal(const cu_devmem_t *d) {
  return d->ordinal;
}

static int cu_uses_device(void *state, void *dev) {
  const cu_session_t *c = (const cu_session_t *)state;
  return dev && c->dtod_async && ((const cu_devmem_t *)dev)->ctx == c->ctx;
}

#define DMCHECK(call, what)                                                          \
  do {                                                                               \
    CUresult r_ = (call);                                                            \
    if (r_)                                                                          \
      return dml_status_make(r_ == 2 /* CUDA_ERROR_OUT_OF_MEMORY */                  \
                                 ? DML_STATUS_RESOURCE_EXHAUSTED                     \
                                 : DML_STATUS_INTERNAL,                              \
                             OP, "%s failed: %s (%d) on %s", what, err_name(r_), r_, \
                             m->desc);                                               \
  } while (0)

static dml_status_t cdm_open(const char *device, void **out) {
  cu_driver_t *D = NULL;
  DML_RETURN_IF_ERROR(driver_get(&D));
  int ordinal = 0;
  DML_RETURN_IF_ERROR(pick_device(D, device, &ordinal));
  cu_devmem_t *m = (cu_devmem_t *)calloc(1, sizeof *m);
  if (!m) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  m->D = D;
  m->ordinal = ordinal;
  const cu_device_t *dv = &D->dev[ordinal];
  snprintf(m->desc, sizeof m->desc, "cuda:%d (%s, compute capability %d.%d)", ordinal,
           dv->name, dv->cc_major, dv->cc_minor);
  *(void **)&m->dtod = dlsym(D->lib, "cuMemcpyDtoD_v2");
  CUresult r = D->cuDeviceGet(&m->dev, ordinal);
  const char *what = "cuDeviceGet";
  if (!r) {
    what = "cuDevicePrimaryCtxRetain";
    r = D->cuDevicePrimaryCtxRetain(&m->ctx, m->dev);
  }
  if (r || !m->dtod) {
    dml_status_t s =
        m->dtod ? dml_status_make(DML_STATUS_INTERNAL, OP, "%s failed: %s (%d) on %s",
                                  what, err_name(r), r, m->desc)
                : dml_status_make(DML_STATUS_INTERNAL, OP,
                                  "the CUDA driver lacks cuMemcpyDtoD_v2");
    if (m->ctx) D->cuDevicePrimaryCtxRelease(m->dev);
    free(m);
    return s;
  }
  *out = m;
  return DML_OK;
}

static void cdm_close(void *dev) {
  cu_devmem_t *m = (cu_devmem_t *)dev;
  if (!m) return;
  if (m->modules) {
    m->D->cuCtxSetCurrent(m->ctx);
    for (uint32_t k = 0; k < dml_eager_ptx_count; k++)
      if (m->modules[k]) m->D->cuModuleUnload(m->modules[k]);
  }
  free(m->modules);
  free(m->fns);
  m->D->cuDevicePrimaryCtxRelease(m->dev);
  free(m);
}

static const char *cdm_name(void *dev) {
  return ((cu_devmem_t *)dev)->desc;
}

static dml_status_t cdm_alloc(void *dev, uint64_t bytes, void **out) {
  cu_devmem_t *m = (cu_devmem_t *)dev;
  CUdeviceptr p = 0;
  DMCHECK(m->D->cuCtxSetCurrent(m->ctx), "cuCtxSetCurrent");
  DMCHECK(m->D->cuMemAlloc(&p, bytes ? (size_t)bytes : 4), "cuMemAlloc (a tensor)");
  *out = (void *)(uintptr_t)p;
  return DML_OK;
}

static void cdm_free(void *dev, void *buf) {
  cu_devmem_t *m = (cu_devmem_t *)dev;
  if (!buf) return;
  m->D->cuCtxSetCurrent(m->ctx);
  m->D->cuMemFree((CUdeviceptr)(uintptr_t)buf);
}

static dml_status_t cdm_write(void *dev, void *buf, uint64_t off, const void *src,
                              uint64_t bytes) {
  cu_devmem_t *m = (cu_devmem_t *)dev;
  if (!bytes) return DML_OK;
  DMCHECK(m->D->cuCtxSetCurrent(m->ctx), "cuCtxSetCurrent");
  DMCHECK(m->D->cuMemcpyHtoD((CUdeviceptr)(uintptr_t)buf + off, src, (size_t)bytes),
          "cuMemcpyHtoD");
  return DML_OK;
}

static dml_status_t cdm_read(void *dev, void *buf, uint64_t off, void *dst,
                             uint64_t bytes) {
  cu_devmem_t *m = (cu_devmem_t *)dev;
  if (!bytes) return DML_OK;
  DMCHECK(m->D->cuCtxSetCurrent(m->ctx), "cuCtxSetCurrent");
  DMCHECK(m->D->cuMemcpyDtoH(dst, (CUdeviceptr)(uintptr_t)buf + off, (size_t)bytes),
          "cuMemcpyDtoH");
  return DML_OK;
}

static dml_status_t cdm_copy(void *dev, void *src, uint64_t soff, void *dst,
                             uint64_t doff, uint64_t bytes) {
  cu_devmem_t *m = (cu_devmem_t *)dev;
  if (!bytes) return DML_OK;
  DMCHECK(m->D->cuCtxSetCurrent(m->ctx), "cuCtxSetCurrent");
  DMCHECK(m->dtod((CUdeviceptr)(uintptr_t)dst + doff, (CUdeviceptr)(uintptr_t)src + soff,
                  (size_t)bytes),
          "cuMemcpyDtoD");
  return DML_OK;
}

/* Kernel k of the PTX library, its module loaded on first use. */
static dml_status_t cdm_function(cu_devmem_t *m, uint32_t k, CUfunction *out) {
  if (!m->fns) {
    m->modules = (CUmodule *)calloc(dml_eager_ptx_count, sizeof *m->modules);
    m->fns = (CUfunction *)calloc(dml_eager_ptx_count, sizeof *m->fns);
    if (!m->modules || !m->fns) {
      free(m->modules);
      free(m->fns);
      m->modules = NULL;
      m->fns = NULL;
      return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
    }
  }
  if (!m->fns[k]) {
    const dml_eager_kernel_t *E = &dml_eager_ptx[k];
    char name[64];
    snprintf(name, sizeof name, DML_EAGER_PTX_ENTRY, k);
    CUresult r = m->D->cuModuleLoadData(&m->modules[k], (const char *)E->words);
    if (r)
      return dml_status_make(r == 2 ? DML_STATUS_RESOURCE_EXHAUSTED : DML_STATUS_INTERNAL,
                             OP,
                             "cuModuleLoadData of eager kernel %u (%s, PTX for sm_80) "
                             "failed: %s (%d) on %s",
                             k, dml_op_name(E->op), err_name(r), r, m->desc);
    r = m->D->cuModuleGetFunction(&m->fns[k], m->modules[k], name);
    if (r) {
      m->D->cuModuleUnload(m->modules[k]);
      m->modules[k] = NULL;
      m->fns[k] = NULL;
      return dml_status_make(DML_STATUS_DATA_LOSS, OP,
                             "eager kernel %u: its module has no entry point %s (%s)", k,
                             name, err_name(r));
    }
  }
  *out = m->fns[k];
  return DML_OK;
}

/* The start of an eager launch of kernel k of dml_eager_ptx over `groups`
 * blocks: the device's grid limit checked, its context current, the
 * kernel's function in *fn and the parameter words pc[0 .. n_pc-1]
 * (n_pc <= DML_KPKG_MAX_SYMBOLS, checked by the caller) zero-padded into
 * words. */
static dml_status_t cdm_begin(cu_devmem_t *m, uint32_t k, uint32_t groups,
                              const uint32_t *pc, uint32_t n_pc, CUfunction *fn,
                              unsigned words[DML_KPKG_MAX_SYMBOLS]) {
  const cu_device_t *dv = &m->D->dev[m->ordinal];
  if (groups > (uint32_t)dv->max_grid[0])
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                           "eager kernel %u needs %u blocks; %s allows %d", k, groups,
                           m->desc, dv->max_grid[0]);
  DMCHECK(m->D->cuCtxSetCurrent(m->ctx), "cuCtxSetCurrent");
  DML_RETURN_IF_ERROR(cdm_function(m, k, fn));
  memset(words, 0, sizeof(unsigned) * DML_KPKG_MAX_SYMBOLS);
  memcpy(words, pc, sizeof(unsigned) * n_pc);
  return DML_OK;
}

/* Launches eager kernel k (function fn, `params`) over `groups` blocks of
 * its local size on the default stream and waits for it (nothing for 0
 * groups). */
static dml_status_t cdm_launch(cu_devmem_t *m, uint32_t k, CUfunction fn, void **params,
                               uint32_t groups) {
  const dml_eager_kernel_t *E = &dml_eager_ptx[k];
  CUresult r = 0;
  const char *what = "cuLaunchKernel";
  if (groups) {
    r = m->D->cuLaunchKernel(fn, groups, 1, 1, E->local[0], E->local[1], E->local[2], 0,
                             NULL, params, NULL);
    if (!r) {
      what = "cuStreamSynchronize (after an eager kernel)";
      r = m->D->cuStreamSynchronize(NULL);
    }
  }
  if (r)
    return dml_status_make(
        r == 2 ? DML_STATUS_RESOURCE_EXHAUSTED : DML_STATUS_INTERNAL, OP,
        "%s of eager kernel %u (%s, %u blocks of %u) failed: %s (%d) on %s", what, k,
        dml_op_name(E->op), groups, E->local[0], err_name(r), r, m->desc);
  return DML_OK;
}

/* The inputs' spans (copies[], the Vulkan path's packing) read in place
 * instead: one address space holds every buffer, so the kernel's input
 * pointer can be the lowest span's start `*out_base` and each offset word
 * re-based onto it, where every span then ends below element 2^32 (the
 * kernels' 32-bit indices). A single span at pack offset 0 needs no
 * offset word (the reductions' input at element 0); an elementwise
 * kernel's span j is input j's, whose offset is word DML_EAGER_PC_IN + j *
 * DML_EAGER_PC_IN_WORDS. Returns 0 (pack them) when it does not apply. */
static int spans_in_place(const dml_eager_kernel_t *E, const dml_rt_devmem_copy_t *cp,
                          uint32_t n, uint32_t *pc, uint32_t n_pc,
                          CUdeviceptr *out_base) {
  if (n == 1 && cp[0].dst_off == 0) {
    *out_base = (CUdeviceptr)(uintptr_t)cp[0].src + cp[0].src_off;
    return 1;
  }
  if (E->kind != DML_EAGER_EW || n != E->n_inputs || n > DML_EAGER_MAX_INPUTS ||
      n_pc < DML_EAGER_PC_WORDS)
    return 0;
  CUdeviceptr base = 0;
  uint64_t ess[DML_EAGER_MAX_INPUTS]; /* each operand's elements' bytes */
  for (uint32_t j = 0; j < n; j++) {
    ess[j] = dml_dtype_size(dml_eager_in_dtype(E, j));
    CUdeviceptr at = (CUdeviceptr)(uintptr_t)cp[j].src + cp[j].src_off;
    if (!ess[j] || (at | cp[j].dst_off) % ess[j]) return 0;
    if (!j || at < base) base = at;
  }
  /* the base must be whole elements away from every span's start */
  for (uint32_t j = 0; j < n; j++)
    if (((CUdeviceptr)(uintptr_t)cp[j].src + cp[j].src_off - base) % ess[j]) return 0;
  uint32_t off[DML_EAGER_MAX_INPUTS];
  for (uint32_t j = 0; j < n; j++) {
    const uint64_t es = ess[j];
    CUdeviceptr at = (CUdeviceptr)(uintptr_t)cp[j].src + cp[j].src_off;
    uint32_t w = DML_EAGER_PC_IN + j * DML_EAGER_PC_IN_WORDS;
    /* the element of the span the offset names, then the span's end */
    uint64_t in_span = (uint64_t)pc[w] - cp[j].dst_off / es;
    uint64_t start = (at - base) / es, end = start + (cp[j].bytes + es - 1) / es;
    if ((uint64_t)pc[w] < cp[j].dst_off / es || end > UINT32_MAX) return 0;
    off[j] = (uint32_t)(start + in_span);
  }
  for (uint32_t j = 0; j < n; j++)
    pc[DML_EAGER_PC_IN + j * DML_EAGER_PC_IN_WORDS] = off[j];
  *out_base = base;
  return 1;
}

/* rt_backend.h run_kernel: kernel k of dml_eager_ptx with parameters (out,
 * in, pc) over `groups` blocks of the kernel's local size, on the default
 * stream, waited for; copies[] are read in place where spans_in_place
 * allows, else packed into a temporary buffer as the contract says. */
static dml_status_t cdm_run_kernel(void *dev, uint32_t k, void *out, void *in,
                                   const dml_rt_devmem_copy_t *copies, uint32_t n_copies,
                                   uint64_t pack_bytes, const uint32_t *pc, uint32_t n_pc,
                                   uint32_t groups) {
  cu_devmem_t *m = (cu_devmem_t *)dev;
  if (k >= dml_eager_ptx_count || n_pc > DML_KPKG_MAX_SYMBOLS)
    return dml_status_make(DML_STATUS_OUT_OF_RANGE, OP,
                           "eager kernel %u of %u, %u parameter words", k,
                           dml_eager_ptx_count, n_pc);
  const dml_eager_kernel_t *E = &dml_eager_ptx[k];
  CUfunction fn = NULL;
  unsigned words[DML_KPKG_MAX_SYMBOLS];
  DML_RETURN_IF_ERROR(cdm_begin(m, k, groups, pc, n_pc, &fn, words));
  CUdeviceptr y = (CUdeviceptr)(uintptr_t)out, x = (CUdeviceptr)(uintptr_t)in, pack = 0;
  if (n_copies && spans_in_place(E, copies, n_copies, words, n_pc, &x)) n_copies = 0;
  if (n_copies) { /* the inputs' spans packed into one temporary buffer */
    DMCHECK(m->D->cuMemAlloc(&pack, pack_bytes ? (size_t)pack_bytes : 4),
            "cuMemAlloc (an eager op's inputs)");
    for (uint32_t i = 0; i < n_copies; i++) {
      CUresult r =
          copies[i].bytes
              ? m->dtod(pack + copies[i].dst_off,
                        (CUdeviceptr)(uintptr_t)copies[i].src + copies[i].src_off,
                        (size_t)copies[i].bytes)
              : 0;
      if (r) {
        m->D->cuMemFree(pack);
        DMCHECK(r, "cuMemcpyDtoD (an eager op's inputs)");
      }
    }
    x = pack;
  }
  void *params[3] = {&y, &x, words};
  dml_status_t s = cdm_launch(m, k, fn, params, groups);
  if (pack) m->D->cuMemFree(pack);
  return s;
}

/* rt_backend.h run_kernel_bufs: kernel k of dml_eager_ptx (MatMul, Conv)
 * with parameters (bufs[0], bufs[1], bufs[2], bufs[3], pc): the CUDA
 * renderer's arena, weights, in2, in3 (an absent one is bufs[0], not
 * read), over `groups` blocks on the default stream, waited for. */
static dml_status_t cdm_run_kernel_bufs(void *dev, uint32_t k, void *const *bufs,
                                        uint32_t n_bufs, const uint32_t *pc,
                                        uint32_t n_pc, uint32_t groups) {
  cu_devmem_t *m = (cu_devmem_t *)dev;
  if (k >= dml_eager_ptx_count || n_pc > DML_KPKG_MAX_SYMBOLS || !n_bufs ||
      n_bufs > DML_EAGER_BINDINGS)
    return dml_status_make(DML_STATUS_OUT_OF_RANGE, OP,
                           "eager kernel %u of %u, %u buffers, %u parameter words", k,
                           dml_eager_ptx_count, n_bufs, n_pc);
  CUfunction fn = NULL;
  unsigned words[DML_KPKG_MAX_SYMBOLS];
  DML_RETURN_IF_ERROR(cdm_begin(m, k, groups, pc, n_pc, &fn, words));
  CUdeviceptr p[DML_EAGER_BINDINGS];
  for (uint32_t i = 0; i < DML_EAGER_BINDINGS; i++)
    p[i] = (CUdeviceptr)(uintptr_t)(i < n_bufs && bufs[i] ? bufs[i] : bufs[0]);
  void *params[DML_EAGER_BINDINGS + 1] = {&p[0], &p[1], &p[2], &p[3], words};
  return cdm_launch(m, k, fn, params, groups);
}

/* In a build without the PTX library (dml_eager_ptx_count 0) dml_tensor.c
 * finds no kernel and answers UNIMPLEMENTED for ops on CUDA tensors,
 * saying why. */
static const dml_rt_devmem_t k_cuda_devmem = {
    "cuda",    cdm_open, cdm_close, cdm_name,       cdm_alloc,          cdm_free,
    cdm_write, cdm_read, cdm_copy,  cdm_run_kernel, cdm_run_kernel_bufs};

const dml_rt_devmem_t *dml_rt_cuda_devmem(void) {
  return &k_cuda_devmem;
}
