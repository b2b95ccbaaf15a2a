/* mock_cuda_driver.c — a stand-in libcuda.so.1 for tests without a GPU
 * (test_tensor_cuda_mock, through $DMLC_CUDA_DRIVER): the driver-API
 * functions runtime/cuda/rt_cuda.c resolves, over host memory. One device
 * ("dmlc mock CUDA device", compute capability 9.0); cuMemAlloc is an
 * aligned malloc (a device pointer is a host address), the copies are
 * memcpy, a module is the PTX text it was given (its one `.entry` name
 * kept), and cuLaunchKernel calls the launch function the test registered
 * with dml_mock_cuda_set_launch (it runs the kernel's contract on the
 * host; no PTX is executed). dml_mock_cuda_stats reports live allocations,
 * modules loaded and alive, and the most loads of one entry point, so the
 * test can check that device memory returns to its starting level and that
 * each kernel's module is loaded once per device. Sessions' streams,
 * events and graphs are accepted and do nothing. Not thread-safe (the
 * tests use one thread). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

/* What a launch sees: the entry point, grid and block, the kernel's
 * parameter pointers (as cuLaunchKernel's kernelParams). Returns 0 or a
 * CUresult. */
typedef int (*dml_mock_launch_fn)(const char *entry, const unsigned grid[3],
                                  const unsigned block[3], void **params);

/* The exported test hooks (declared here: the test looks them up with
 * dlsym). */
void dml_mock_cuda_set_launch(dml_mock_launch_fn fn);
void dml_mock_cuda_stats(long long *live_allocs, long long *live_bytes,
                         int *modules_loaded, int *modules_live, int *max_loads);

#define MAX_ALLOCS 4096
#define MAX_MODULES 1024

typedef struct module {
  int live;
  char entry[128];
} module_t;

static struct {
  dml_mock_launch_fn launch;
  void *ptr[MAX_ALLOCS];
  size_t size[MAX_ALLOCS];
  long long live, bytes;
  module_t mod[MAX_MODULES];
  int n_mod, loaded;
} g;

void dml_mock_cuda_set_launch(dml_mock_launch_fn fn) {
  g.launch = fn;
}

void dml_mock_cuda_stats(long long *live_allocs, long long *live_bytes,
                         int *modules_loaded, int *modules_live, int *max_loads) {
  int alive = 0, most = 0;
  for (int i = 0; i < g.n_mod; i++) {
    alive += g.mod[i].live;
    int n = 0;
    for (int j = 0; j < g.n_mod; j++) n += !strcmp(g.mod[i].entry, g.mod[j].entry);
    if (n > most) most = n;
  }
  *live_allocs = g.live;
  *live_bytes = g.bytes;
  *modules_loaded = g.loaded;
  *modules_live = alive;
  *max_loads = most;
}

/* The driver API (the declarations rt_cuda.c uses; -Wmissing-prototypes
 * wants one before each definition). */
#define API(ret, name, params) \
  ret name params;             \
  ret name params

API(CUresult, cuInit, (unsigned f)) {
  (void)f;
  return 0;
}
API(CUresult, cuDriverGetVersion, (int *v)) {
  *v = 12040;
  return 0;
}
API(CUresult, cuDeviceGetCount, (int *n)) {
  *n = 1;
  return 0;
}
API(CUresult, cuDeviceGet, (int *d, int i)) {
  *d = i;
  return i == 0 ? 0 : 101; /* CUDA_ERROR_INVALID_DEVICE */
}
API(CUresult, cuDeviceGetName, (char *name, int len, int d)) {
  (void)d;
  snprintf(name, (size_t)len, "dmlc mock CUDA device");
  return 0;
}
API(CUresult, cuDeviceGetAttribute, (int *v, int attr, int d)) {
  (void)d;
  switch (attr) {
    case 5: *v = 2147483647; break; /* max grid x */
    case 6:
    case 7: *v = 65535; break; /* max grid y, z */
    case 16: *v = 132; break;  /* SMs */
    case 75: *v = 9; break;    /* compute capability */
    case 76: *v = 0; break;
    case 97: *v = 232448; break; /* shared memory opt-in */
    default: *v = 0;
  }
  return 0;
}
API(CUresult, cuDeviceTotalMem_v2, (size_t * b, int d)) {
  (void)d;
  *b = (size_t)80 << 30;
  return 0;
}
API(CUresult, cuDevicePrimaryCtxRetain, (void **ctx, int d)) {
  (void)d;
  *ctx = (void *)&g;
  return 0;
}
API(CUresult, cuDevicePrimaryCtxRelease_v2, (int d)) {
  (void)d;
  return 0;
}
API(CUresult, cuCtxSetCurrent, (void *ctx)) {
  return ctx == (void *)&g ? 0 : 201; /* CUDA_ERROR_INVALID_CONTEXT */
}
API(CUresult, cuStreamCreate, (void **s, unsigned f)) {
  (void)f;
  *s = (void *)&g.launch;
  return 0;
}
API(CUresult, cuStreamDestroy_v2, (void *s)) {
  (void)s;
  return 0;
}
API(CUresult, cuStreamSynchronize, (void *s)) {
  (void)s;
  return 0;
}
API(CUresult, cuMemAlloc_v2, (CUdeviceptr * p, size_t n)) {
  for (int i = 0; i < MAX_ALLOCS; i++)
    if (!g.ptr[i]) {
      g.ptr[i] = aligned_alloc(256, (n + 255) / 256 * 256);
      if (!g.ptr[i]) return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
      g.size[i] = n;
      g.live++;
      g.bytes += (long long)n;
      *p = (CUdeviceptr)(uintptr_t)g.ptr[i];
      return 0;
    }
  return 2;
}
API(CUresult, cuMemFree_v2, (CUdeviceptr p)) {
  for (int i = 0; i < MAX_ALLOCS; i++)
    if (g.ptr[i] && (CUdeviceptr)(uintptr_t)g.ptr[i] == p) {
      free(g.ptr[i]);
      g.ptr[i] = NULL;
      g.live--;
      g.bytes -= (long long)g.size[i];
      return 0;
    }
  return 1; /* CUDA_ERROR_INVALID_VALUE: not an allocation */
}
API(CUresult, cuMemAllocHost_v2, (void **p, size_t n)) {
  *p = malloc(n ? n : 1);
  return *p ? 0 : 2;
}
API(CUresult, cuMemFreeHost, (void *p)) {
  free(p);
  return 0;
}
API(CUresult, cuMemcpyHtoD_v2, (CUdeviceptr d, const void *s, size_t n)) {
  memcpy((void *)(uintptr_t)d, s, n);
  return 0;
}
API(CUresult, cuMemcpyHtoDAsync_v2, (CUdeviceptr d, const void *s, size_t n, void *st)) {
  (void)st;
  memcpy((void *)(uintptr_t)d, s, n);
  return 0;
}
API(CUresult, cuMemcpyDtoHAsync_v2, (void *d, CUdeviceptr s, size_t n, void *st)) {
  (void)st;
  memcpy(d, (const void *)(uintptr_t)s, n);
  return 0;
}
API(CUresult, cuMemcpyDtoH_v2, (void *d, CUdeviceptr s, size_t n)) {
  memcpy(d, (const void *)(uintptr_t)s, n);
  return 0;
}
API(CUresult, cuMemcpyDtoD_v2, (CUdeviceptr d, CUdeviceptr s, size_t n)) {
  memmove((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
  return 0;
}
API(CUresult, cuMemcpyDtoDAsync_v2, (CUdeviceptr d, CUdeviceptr s, size_t n, void *st)) {
  (void)st;
  memmove((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
  return 0;
}
/* A module: the name after ".entry " in the PTX text. */
API(CUresult, cuModuleLoadData, (void **m, const void *image)) {
  const char *e = strstr((const char *)image, ".entry ");
  if (!e || g.n_mod == MAX_MODULES) return 200; /* CUDA_ERROR_INVALID_IMAGE */
  module_t *M = &g.mod[g.n_mod++];
  size_t n = strcspn(e + 7, "( \n");
  if (n >= sizeof M->entry) n = sizeof M->entry - 1;
  memcpy(M->entry, e + 7, n);
  M->entry[n] = 0;
  M->live = 1;
  g.loaded++;
  *m = M;
  return 0;
}
API(CUresult, cuModuleGetFunction, (void **f, void *m, const char *name)) {
  module_t *M = (module_t *)m;
  if (!M || !M->live || strcmp(M->entry, name)) return 500; /* CUDA_ERROR_NOT_FOUND */
  *f = M;
  return 0;
}
API(CUresult, cuModuleUnload, (void *m)) {
  module_t *M = (module_t *)m;
  if (!M || !M->live) return 400; /* CUDA_ERROR_INVALID_HANDLE */
  M->live = 0;
  return 0;
}
API(CUresult, cuModuleGetGlobal_v2,
    (CUdeviceptr * p, size_t *n, void *m, const char *s)) {
  (void)p, (void)n, (void)m, (void)s;
  return 500;
}
API(CUresult, cuFuncSetAttribute, (void *f, int a, int v)) {
  (void)f, (void)a, (void)v;
  return 0;
}
API(CUresult, cuLaunchKernel,
    (void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
     unsigned bz, unsigned smem, void *st, void **params, void **extra)) {
  (void)smem, (void)st, (void)extra;
  module_t *M = (module_t *)f;
  if (!M || !M->live || !g.launch) return 400;
  const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  return g.launch(M->entry, grid, block, params);
}
API(CUresult, cuEventCreate, (void **e, unsigned f)) {
  (void)f;
  *e = (void *)&g.n_mod;
  return 0;
}
API(CUresult, cuEventDestroy_v2, (void *e)) {
  (void)e;
  return 0;
}
API(CUresult, cuEventRecord, (void *e, void *s)) {
  (void)e, (void)s;
  return 0;
}
API(CUresult, cuEventSynchronize, (void *e)) {
  (void)e;
  return 0;
}
API(CUresult, cuStreamBeginCapture_v2, (void *s, int m)) {
  (void)s, (void)m;
  return 801; /* CUDA_ERROR_NOT_SUPPORTED */
}
API(CUresult, cuStreamEndCapture, (void *s, void **gr)) {
  (void)s, (void)gr;
  return 801;
}
API(CUresult, cuGraphInstantiateWithFlags, (void **e, void *gr, unsigned long long f)) {
  (void)e, (void)gr, (void)f;
  return 801;
}
API(CUresult, cuGraphLaunch, (void *e, void *s)) {
  (void)e, (void)s;
  return 801;
}
API(CUresult, cuGraphExecDestroy, (void *e)) {
  (void)e;
  return 0;
}
API(CUresult, cuGraphDestroy, (void *gr)) {
  (void)gr;
  return 0;
}
API(CUresult, cuGetErrorName, (CUresult r, const char **s)) {
  *s = r == 0 ? "CUDA_SUCCESS" : "CUDA_ERROR (mock)";
  return 0;
}
