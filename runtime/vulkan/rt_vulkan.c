/* rt_vulkan.c — the Vulkan backend (rt_backend.h). libvulkan.so.1 is opened
 * with dlopen at run time (the runtime links no GPU library); the headers
 * give only types (VK_NO_PROTOTYPES).
 *
 * Per session: one VkDevice on the chosen physical device and its first
 * compute queue; device-local buffers for the arena (the planned size) and
 * the weights (uploaded once); one host-visible staging buffer holding every
 * input and output at its bound; a pipeline per kernel, made through a
 * pipeline cache; a command buffer per symbol-value tuple (the batch),
 * recorded once — input copies, every dispatch with a compute->compute
 * barrier between, output copies, timestamps around each kernel — and
 * resubmitted on every run with those values.
 *
 * Sessions sharing a training package's globals (rt_backend.h open's
 * `share`) share the first one's VkDevice, queue and weights buffer: the
 * Assign kernels of train_step store into that buffer (binding 1) and
 * eval_step/forward read it. The owner keeps the device alive until the
 * last session using it is closed (`refs`). Every dispatch is followed by
 * a global memory barrier (all buffers, the weights included), and the
 * barriers' scopes reach across submissions, so a run reads what the
 * previous run (of any session on the device) wrote. */
#define VK_NO_PROTOTYPES
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vulkan/vulkan.h>

#include "dml_eager_lib.h"
#include "rt_backend.h"

#define OP "rt.vulkan"
#define MAX_DEVICES 16
#define MAX_CACHED_CMDS 4
/* The default limit of a fence wait (dml_rt_session_set_device_timeout),
 * seconds: a GPU, and a CPU-type device (lavapipe on a loaded machine runs
 * a large model's kernels for minutes: 120 s failed lraspp and vit_tiny). */
#define TIMEOUT_GPU_S 120.0
#define TIMEOUT_CPU_S 3600.0
/* A run first polls its fence for up to this long before it blocks in
 * vkWaitForFences: a blocked wait returns tens of microseconds after the
 * device finished (the thread is woken by the driver), which dominated
 * small runs (fashion_mlp at batch 1: kernels 15 us of a 77 us run). */
#define FENCE_SPIN_NS (2ull * 1000 * 1000)

/* ---- the loader and the process's instance ---- */

#define VK_INSTANCE_FNS(X)                    \
  X(vkDestroyInstance)                        \
  X(vkEnumeratePhysicalDevices)               \
  X(vkGetPhysicalDeviceProperties)            \
  X(vkGetPhysicalDeviceMemoryProperties)      \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkGetPhysicalDeviceFeatures)              \
  X(vkGetPhysicalDeviceFeatures2)             \
  X(vkGetPhysicalDeviceProperties2)           \
  X(vkEnumerateDeviceExtensionProperties)     \
  X(vkCreateDevice)                           \
  X(vkGetDeviceProcAddr)

#define VK_DEVICE_FNS(X)           \
  X(vkDestroyDevice)               \
  X(vkGetDeviceQueue)              \
  X(vkCreateBuffer)                \
  X(vkDestroyBuffer)               \
  X(vkGetBufferMemoryRequirements) \
  X(vkAllocateMemory)              \
  X(vkFreeMemory)                  \
  X(vkBindBufferMemory)            \
  X(vkMapMemory)                   \
  X(vkUnmapMemory)                 \
  X(vkCreateShaderModule)          \
  X(vkDestroyShaderModule)         \
  X(vkCreateDescriptorSetLayout)   \
  X(vkDestroyDescriptorSetLayout)  \
  X(vkCreatePipelineLayout)        \
  X(vkDestroyPipelineLayout)       \
  X(vkCreatePipelineCache)         \
  X(vkDestroyPipelineCache)        \
  X(vkCreateComputePipelines)      \
  X(vkDestroyPipeline)             \
  X(vkCreateDescriptorPool)        \
  X(vkDestroyDescriptorPool)       \
  X(vkAllocateDescriptorSets)      \
  X(vkUpdateDescriptorSets)        \
  X(vkCreateCommandPool)           \
  X(vkDestroyCommandPool)          \
  X(vkAllocateCommandBuffers)      \
  X(vkFreeCommandBuffers)          \
  X(vkBeginCommandBuffer)          \
  X(vkEndCommandBuffer)            \
  X(vkCmdBindPipeline)             \
  X(vkCmdBindDescriptorSets)       \
  X(vkCmdPushConstants)            \
  X(vkCmdDispatch)                 \
  X(vkCmdPipelineBarrier)          \
  X(vkCmdCopyBuffer)               \
  X(vkCmdFillBuffer)               \
  X(vkCmdResetQueryPool)           \
  X(vkCmdWriteTimestamp)           \
  X(vkCreateQueryPool)             \
  X(vkDestroyQueryPool)            \
  X(vkGetQueryPoolResults)         \
  X(vkCreateFence)                 \
  X(vkDestroyFence)                \
  X(vkResetFences)                 \
  X(vkWaitForFences)               \
  X(vkGetFenceStatus)              \
  X(vkQueueSubmit)                 \
  X(vkDeviceWaitIdle)

typedef struct vk_loader {
  void *lib;
  char error[512];
  VkInstance instance;
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
#define X(f) PFN_##f f;
  VK_INSTANCE_FNS(X)
#undef X
  uint32_t n_phys;
  VkPhysicalDevice phys[MAX_DEVICES];
  VkPhysicalDeviceProperties props[MAX_DEVICES];
  VkPhysicalDeviceMemoryProperties mem[MAX_DEVICES];
  uint32_t default_index;
} vk_loader_t;

static vk_loader_t g_vk;
static pthread_once_t g_vk_once = PTHREAD_ONCE_INIT;

static int kind_rank(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
  }
}

static const char *kind_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
  }
}

/* The name of a VkResult and what it means here ("VK_ERROR_INCOMPATIBLE_DRIVER:
 * no Vulkan driver (ICD) found or none compatible"), for error messages. */
static const char *vk_result_text(VkResult r) {
  switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_INCOMPLETE: return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY:
      return "VK_ERROR_OUT_OF_HOST_MEMORY: out of host memory";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
      return "VK_ERROR_OUT_OF_DEVICE_MEMORY: out of device memory";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST: device lost";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER:
      return "VK_ERROR_INCOMPATIBLE_DRIVER: no Vulkan driver (ICD) was found, or none "
             "supports Vulkan 1.1 (install one, e.g. Debian's mesa-vulkan-drivers, or "
             "check VK_ICD_FILENAMES / VK_DRIVER_FILES)";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_FORMAT_NOT_SUPPORTED: return "VK_ERROR_FORMAT_NOT_SUPPORTED";
    case VK_ERROR_UNKNOWN: return "VK_ERROR_UNKNOWN";
    case VK_ERROR_INVALID_SHADER_NV:
      return "VK_ERROR_INVALID_SHADER_NV: the driver rejected the kernel's SPIR-V";
    default: break;
  }
  return "an error code";
}

static void loader_init(void) {
  vk_loader_t *L = &g_vk;
  const char *path = getenv("DMLC_VULKAN_LOADER");
  if (!path || !*path) path = "libvulkan.so.1";
  L->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!L->lib) {
    const char *e = dlerror();
    snprintf(L->error, sizeof L->error,
             "the Vulkan loader '%s' could not be opened (%s); install a Vulkan driver "
             "(Debian: libvulkan1 and mesa-vulkan-drivers)",
             path, e ? e : "?");
    return;
  }
  L->vkGetInstanceProcAddr =
      (PFN_vkGetInstanceProcAddr)dlsym(L->lib, "vkGetInstanceProcAddr");
  if (!L->vkGetInstanceProcAddr) {
    snprintf(L->error, sizeof L->error, "'%s' has no vkGetInstanceProcAddr", path);
    return;
  }
  PFN_vkCreateInstance create =
      (PFN_vkCreateInstance)L->vkGetInstanceProcAddr(NULL, "vkCreateInstance");
  PFN_vkEnumerateInstanceVersion ver =
      (PFN_vkEnumerateInstanceVersion)L->vkGetInstanceProcAddr(
          NULL, "vkEnumerateInstanceVersion");
  uint32_t api = VK_API_VERSION_1_0;
  if (ver) ver(&api);
  if (!create || api < VK_API_VERSION_1_1) {
    snprintf(L->error, sizeof L->error,
             "the Vulkan loader '%s' does not offer Vulkan 1.1 (needed for SPIR-V 1.3)",
             path);
    return;
  }
  VkApplicationInfo app = {
      VK_STRUCTURE_TYPE_APPLICATION_INFO, NULL, "dmlc", 1, "dmlc", 1, VK_API_VERSION_1_1};
  VkInstanceCreateInfo ci = {
      VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, NULL, 0, &app, 0, NULL, 0, NULL};
  VkResult r = create(&ci, NULL, &L->instance);
  if (r != VK_SUCCESS) {
    snprintf(L->error, sizeof L->error, "vkCreateInstance failed (VkResult %d, %s)",
             (int)r, vk_result_text(r));
    return;
  }
#define X(f)                                                            \
  L->f = (PFN_##f)L->vkGetInstanceProcAddr(L->instance, #f);            \
  if (!L->f) {                                                          \
    snprintf(L->error, sizeof L->error, "the Vulkan loader lacks " #f); \
    return;                                                             \
  }
  VK_INSTANCE_FNS(X)
#undef X
  uint32_t n = MAX_DEVICES;
  r = L->vkEnumeratePhysicalDevices(L->instance, &n, L->phys);
  if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || n == 0) {
    snprintf(
        L->error, sizeof L->error,
        "no Vulkan device found (vkEnumeratePhysicalDevices: VkResult %d, %u devices)",
        (int)r, n);
    return;
  }
  L->n_phys = n;
  for (uint32_t i = 0; i < n; i++) {
    L->vkGetPhysicalDeviceProperties(L->phys[i], &L->props[i]);
    L->vkGetPhysicalDeviceMemoryProperties(L->phys[i], &L->mem[i]);
    if (kind_rank(L->props[i].deviceType) <
        kind_rank(L->props[L->default_index].deviceType))
      L->default_index = i;
  }
}

static dml_status_t loader_get(vk_loader_t **out) {
  pthread_once(&g_vk_once, loader_init);
  if (!g_vk.n_phys)
    return dml_status_make(DML_STATUS_NOT_FOUND, OP, "%s",
                           g_vk.error[0] ? g_vk.error : "no Vulkan device found");
  *out = &g_vk;
  return DML_OK;
}

static uint64_t device_local_bytes(const VkPhysicalDeviceMemoryProperties *mp) {
  uint64_t best = 0;
  for (uint32_t h = 0; h < mp->memoryHeapCount; h++)
    if ((mp->memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) &&
        mp->memoryHeaps[h].size > best)
      best = mp->memoryHeaps[h].size;
  return best;
}

dml_status_t dml_rt_vulkan_devices(dml_rt_device_info_t *out, uint32_t cap,
                                   uint32_t *out_n) {
  vk_loader_t *L = NULL;
  DML_RETURN_IF_ERROR(loader_get(&L));
  for (uint32_t i = 0; i < L->n_phys && i < cap; i++) {
    dml_rt_device_info_t *d = &out[i];
    memset(d, 0, sizeof *d);
    snprintf(d->id, sizeof d->id, "vulkan:%u", i);
    snprintf(d->name, sizeof d->name, "%s", L->props[i].deviceName);
    d->kind = kind_name(L->props[i].deviceType);
    d->memory_bytes = device_local_bytes(&L->mem[i]);
    d->api_major = VK_API_VERSION_MAJOR(L->props[i].apiVersion);
    d->api_minor = VK_API_VERSION_MINOR(L->props[i].apiVersion);
    d->api_patch = VK_API_VERSION_PATCH(L->props[i].apiVersion);
    d->is_default = i == L->default_index;
  }
  *out_n = L->n_phys;
  return DML_OK;
}

/* ---- a session's device ---- */

typedef struct vk_buf {
  VkBuffer buf;
  VkDeviceMemory mem;
  VkDeviceSize size;
  void *map; /* host-visible buffers only */
} vk_buf_t;

typedef struct vk_cmd {
  int64_t sym[DML_KPKG_MAX_SYMBOLS];
  uint32_t seg; /* the segment it runs (docs/kernels.md "Data-dependent output sizes") */
  /* the inputs it does not upload from the staging (bound on the device:
   * dml_rt_exec_t.dev_in) and whether it leaves the outputs on the device */
  uint64_t skip_in;
  int lazy;
  VkCommandBuffer cb;
  int used;
} vk_cmd_t;

typedef struct vk_session {
  /* The session owning the VkDevice, its queue and the weights buffer: this
   * one, or the one whose globals it shares (then those fields are copies).
   * `refs` (the owner's) counts the sessions using the device. */
  struct vk_session *owner;
  atomic_int refs;
  /* The struct that created the VkDevice (this one, the owner's creator,
   * or the eager device a session was made on: rt_backend open's on_dev);
   * its dev_refs counts the structs using the device (destroyed at 0), its
   * qlock orders their vkQueueSubmit calls (sessions and an eager device
   * sharing a queue may run in different threads). */
  struct vk_session *creator;
  atomic_int dev_refs;
  pthread_mutex_t qlock;
  vk_loader_t *L;
  uint32_t phys_index;
  char desc[512];
#define X(f) PFN_##f f;
  VK_DEVICE_FNS(X)
#undef X
  VkDevice dev;
  VkQueue queue;
  uint32_t queue_family;
  double ts_period_ns; /* 0: no timestamps on this queue */
  vk_buf_t arena, weights, staging;
  uint64_t weights_size; /* the model's "weights" section, bytes */
  VkDescriptorSetLayout dsl;
  VkPipelineLayout layout;
  VkPipelineCache cache;
  VkDescriptorPool pool;
  VkDescriptorSet set;
  VkCommandPool cmd_pool;
  VkQueryPool queries;
  VkFence fence;
  double timeout_s; /* of a fence wait; 0: no limit (set per run) */
  int hung;         /* the fence of a submission whose wait timed out is pending */
  const dml_kpkg_function_t *kf;
  /* the spv_needs_t features enabled on the VkDevice this struct created
   * (bits int64 1, storage8 2, float64 4, int16 8, storage16 16): an eager
   * device's, every one the device has; a session's, those its kernels
   * need and those the package's other kernels need that the device has
   * (the sessions of its If/Loop regions run on its VkDevice) */
  unsigned eager_feats;
  /* the package's kernels for this target (create_device), or NULL */
  const dml_kpkg_t *pkg;
  /* the SignedZeroInfNanPreserve widths (szinp bits) the kernels declare
   * but the device lacks: stripped from each module (spirv_strip_szinp) */
  unsigned szinp_strip;
  /* the SignedZeroInfNanPreserve widths usable on the VkDevice (the float
   * controls extension enabled and the device has them) */
  unsigned szinp_has;
  VkPipeline *pipelines;
  /* Vulkan 1.1's vkCmdDispatchBase (NULL when the device lacks it), and per
   * kernel 1 when its grid can exceed maxComputeWorkGroupCount[0] at the
   * symbols' bounds: its pipeline then allows a base workgroup and record()
   * dispatches it in parts (lavapipe counts 65,535 workgroups per
   * dimension: an elementwise kernel over 2^24 + 1 elements needs 65,537) */
  PFN_vkCmdDispatchBase dispatch_base;
  uint8_t *split;
  /* the kernel DMLC_VULKAN_TEST_CORRUPT_KERNEL names (dispatch()), read
   * once when the pipelines are made; -1 for none */
  int64_t corrupt_kernel;
  uint32_t n_symbols;
  dml_rt_gpu_plan_t plan; /* staging regions, random state, dims slot, host entries */
  uint32_t n_segments;
  vk_cmd_t *cmds; /* MAX_CACHED_CMDS per segment */
  uint32_t n_cmds, next_cmd;
  double *kernel_ms;
  uint64_t *ts; /* n_kernels + 1 timestamps */
  int64_t last_sym[DML_KPKG_MAX_SYMBOLS];
  int ran;
  vk_buf_t check_buf;       /* run_kernel's arena staging (dmlc check) */
  VkCommandBuffer check_cb; /* run_kernel's command buffer */
} vk_session_t;

static dml_status_t vkfail(const char *what, VkResult r) {
  dml_status_code_t code =
      (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
          ? DML_STATUS_RESOURCE_EXHAUSTED
          : DML_STATUS_INTERNAL;
  return dml_status_make(code, OP, "%s failed (VkResult %d, %s)", what, (int)r,
                         vk_result_text(r));
}

#define VKCHECK(call, what)                        \
  do {                                             \
    VkResult r_ = (call);                          \
    if (r_ != VK_SUCCESS) return vkfail(what, r_); \
  } while (0)

static int find_memory(const VkPhysicalDeviceMemoryProperties *mp, uint32_t bits,
                       VkMemoryPropertyFlags want) {
  for (uint32_t i = 0; i < mp->memoryTypeCount; i++)
    if ((bits & (1u << i)) && (mp->memoryTypes[i].propertyFlags & want) == want)
      return (int)i;
  return -1;
}

static dml_status_t buf_create(vk_session_t *v, VkDeviceSize size,
                               VkBufferUsageFlags usage, int host, const char *what,
                               vk_buf_t *b) {
  if (size < 4) size = 4;
  size = (size + 3) & ~(VkDeviceSize)3;
  VkBufferCreateInfo bi = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                           NULL,
                           0,
                           size,
                           usage,
                           VK_SHARING_MODE_EXCLUSIVE,
                           0,
                           NULL};
  VKCHECK(v->vkCreateBuffer(v->dev, &bi, NULL, &b->buf), "vkCreateBuffer");
  b->size = size;
  VkMemoryRequirements req;
  v->vkGetBufferMemoryRequirements(v->dev, b->buf, &req);
  const VkPhysicalDeviceMemoryProperties *mp = &v->L->mem[v->phys_index];
  int type =
      host ? find_memory(mp, req.memoryTypeBits,
                         VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                             VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)
           : find_memory(mp, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  if (type < 0 && !host) type = find_memory(mp, req.memoryTypeBits, 0);
  if (type < 0)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                           "%s: no suitable memory type on %s", what, v->desc);
  VkDeviceSize heap = mp->memoryHeaps[mp->memoryTypes[type].heapIndex].size;
  /* DMLC_VULKAN_MAX_MEMORY (bytes) caps what a session may use of a heap. */
  const char *cap = getenv("DMLC_VULKAN_MAX_MEMORY");
  int capped = 0;
  if (cap && *cap) {
    unsigned long long c = strtoull(cap, NULL, 10);
    if (c < heap) heap = (VkDeviceSize)c, capped = 1;
  }
  if (req.size > heap)
    return dml_status_make(
        DML_STATUS_RESOURCE_EXHAUSTED, OP,
        "%s needs %" PRIu64 " bytes but %s %" PRIu64 " (%s)", what, (uint64_t)req.size,
        capped ? "DMLC_VULKAN_MAX_MEMORY allows" : "the device's memory heap has",
        (uint64_t)heap, v->desc);
  VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, req.size,
                             (uint32_t)type};
  VkResult r = v->vkAllocateMemory(v->dev, &ai, NULL, &b->mem);
  if (r != VK_SUCCESS)
    return dml_status_detail(vkfail("vkAllocateMemory", r),
                             "allocating %" PRIu64 " bytes for %s on %s",
                             (uint64_t)req.size, what, v->desc);
  VKCHECK(v->vkBindBufferMemory(v->dev, b->buf, b->mem, 0), "vkBindBufferMemory");
  if (host)
    VKCHECK(v->vkMapMemory(v->dev, b->mem, 0, VK_WHOLE_SIZE, 0, &b->map), "vkMapMemory");
  return DML_OK;
}

static void buf_destroy(vk_session_t *v, vk_buf_t *b) {
  if (b->map) v->vkUnmapMemory(v->dev, b->mem);
  if (b->buf) v->vkDestroyBuffer(v->dev, b->buf, NULL);
  if (b->mem) v->vkFreeMemory(v->dev, b->mem, NULL);
  memset(b, 0, sizeof *b);
}

/* Frees what belongs to session `v` alone (everything but the device, its
 * queue and the weights buffer, which are the owner's). */
static void session_free_own(vk_session_t *v) {
  if (v->dev) {
    pthread_mutex_lock(&v->creator->qlock);
    v->vkDeviceWaitIdle(v->dev);
    pthread_mutex_unlock(&v->creator->qlock);
    if (v->pipelines)
      for (uint32_t i = 0; v->kf && i < v->kf->n_kernels; i++)
        if (v->pipelines[i]) v->vkDestroyPipeline(v->dev, v->pipelines[i], NULL);
    if (v->fence) v->vkDestroyFence(v->dev, v->fence, NULL);
    if (v->queries) v->vkDestroyQueryPool(v->dev, v->queries, NULL);
    if (v->cmd_pool) v->vkDestroyCommandPool(v->dev, v->cmd_pool, NULL);
    if (v->pool) v->vkDestroyDescriptorPool(v->dev, v->pool, NULL);
    if (v->cache) v->vkDestroyPipelineCache(v->dev, v->cache, NULL);
    if (v->layout) v->vkDestroyPipelineLayout(v->dev, v->layout, NULL);
    if (v->dsl) v->vkDestroyDescriptorSetLayout(v->dev, v->dsl, NULL);
    buf_destroy(v, &v->arena);
    buf_destroy(v, &v->staging);
    buf_destroy(v, &v->check_buf);
  }
  v->fence = VK_NULL_HANDLE;
  v->queries = VK_NULL_HANDLE;
  v->cmd_pool = VK_NULL_HANDLE;
  v->pool = VK_NULL_HANDLE;
  v->cache = VK_NULL_HANDLE;
  v->layout = VK_NULL_HANDLE;
  v->dsl = VK_NULL_HANDLE;
  free(v->pipelines);
  free(v->split);
  free(v->cmds);
  v->cmds = NULL;
  dml_rt_gpu_plan_free(&v->plan);
  free(v->kernel_ms);
  free(v->ts);
  v->pipelines = NULL;
  v->kernel_ms = NULL;
  v->ts = NULL;
}

/* Drops one use of creator c's VkDevice: destroyed (and c freed) at the
 * last. */
static void dev_unref(vk_session_t *c) {
  if (atomic_fetch_sub(&c->dev_refs, 1) != 1) return;
  if (c->dev) {
    c->vkDeviceWaitIdle(c->dev);
    c->vkDestroyDevice(c->dev, NULL);
  }
  pthread_mutex_destroy(&c->qlock);
  free(c);
}

/* Makes v the creator of its own VkDevice (before create_device). */
static void dev_own(vk_session_t *v) {
  v->creator = v;
  atomic_init(&v->dev_refs, 1);
  pthread_mutex_init(&v->qlock, NULL);
}

static void vk_close(void *state) {
  vk_session_t *v = (vk_session_t *)state;
  if (!v) return;
  session_free_own(v);
  vk_session_t *o = v->owner;
  if (o != v) free(v);
  if (atomic_fetch_sub(&o->refs, 1) == 1) {
    vk_session_t *c = o->creator;
    if (o->dev) buf_destroy(o, &o->weights);
    if (c && c != o) free(o);
    if (c) dev_unref(c);
    if (!c) free(o); /* failed before it had a device */
  }
}

/* Picks the physical device of `device` ("vulkan" or "vulkan:N"). */
static dml_status_t pick_device(vk_loader_t *L, const char *device, uint32_t *out) {
  if (!strcmp(device, "vulkan")) {
    *out = L->default_index;
    return DML_OK;
  }
  const char *p = device + 7; /* after "vulkan:" */
  char *end = NULL;
  unsigned long n = strtoul(p, &end, 10);
  if (!*p || *end || n >= L->n_phys)
    return dml_status_make(DML_STATUS_NOT_FOUND, OP,
                           "no Vulkan device '%s' (%u device%s: vulkan:0..vulkan:%u; see "
                           "dmlc devices)",
                           device, L->n_phys, L->n_phys == 1 ? "" : "s", L->n_phys - 1);
  *out = (uint32_t)n;
  return DML_OK;
}

/* Device features the kernels' SPIR-V asks for (codegen/spirv/glsl.c):
 * OpCapability Int64 needs shaderInt64, Float64 shaderFloat64, Int16
 * shaderInt16, StorageBuffer8BitAccess VK_KHR_8bit_storage's
 * storageBuffer8BitAccess, StorageBuffer16BitAccess VK_KHR_16bit_storage's
 * storageBuffer16BitAccess (core in Vulkan 1.1); the execution mode
 * SignedZeroInfNanPreserve of width 16, 32, 64 (szinp bits 1, 2, 4)
 * VK_KHR_shader_float_controls' shaderSignedZeroInfNanPreserveFloat16/32/64
 * (core in Vulkan 1.2). */
typedef struct spv_needs {
  int int64, storage8, float64, int16, storage16;
  unsigned szinp;
} spv_needs_t;

/* The szinp bit of a SignedZeroInfNanPreserve width (0: another width). */
static unsigned szinp_bit(uint32_t width) {
  return width == 16 ? 1u : width == 32 ? 2u : width == 64 ? 4u : 0u;
}

/* The needs of one module's SPIR-V (nw words at c), added to *n. */
static void spirv_words_needs(const uint8_t *c, size_t nw, spv_needs_t *n) {
  {
    /* after the 5-word header, capabilities come first (with extensions
     * and imports before the memory model), then the entry point and its
     * execution modes */
    for (size_t i = 5; i < nw;) {
      uint32_t w0;
      memcpy(&w0, c + 4 * i, 4);
      uint32_t op = w0 & 0xffffu, len = w0 >> 16;
      if (len == 0 || (op != 17 && op != 10 && op != 11 && op != 14 && op != 15 &&
                       op != 16 && op != 331))
        break;
      if (op == 16 /* OpExecutionMode */ && len == 4 && i + 3 < nw) {
        uint32_t mode[2];
        memcpy(mode, c + 4 * (i + 2), 8);
        if (mode[0] == 4461 /* SignedZeroInfNanPreserve */)
          n->szinp |= szinp_bit(mode[1]);
      }
      if (op == 17 /* OpCapability */ && i + 1 < nw) {
        uint32_t cap;
        memcpy(&cap, c + 4 * (i + 1), 4);
        if (cap == 11 /* Int64 */) n->int64 = 1;
        if (cap == 4448 /* StorageBuffer8BitAccess */) n->storage8 = 1;
        if (cap == 10 /* Float64 */) n->float64 = 1;
        if (cap == 22 /* Int16 */) n->int16 = 1;
        if (cap == 4433 /* StorageBuffer16BitAccess */) n->storage16 = 1;
      }
      i += len;
    }
  }
}

static unsigned spv_bits(const spv_needs_t *n) {
  return (n->int64 ? 1u : 0u) | (n->storage8 ? 2u : 0u) | (n->float64 ? 4u : 0u) |
         (n->int16 ? 8u : 0u) | (n->storage16 ? 16u : 0u);
}

static void spirv_needs(const dml_kpkg_function_t *kf, spv_needs_t *n) {
  memset(n, 0, sizeof *n);
  if (!kf) { /* a device for eager tensors: what its kernel library uses */
    for (uint32_t k = 0; k < dml_eager_spirv_count; k++)
      spirv_words_needs((const uint8_t *)dml_eager_spirv[k].words,
                        dml_eager_spirv[k].n_words, n);
    return;
  }
  for (uint32_t k = 0; k < kf->n_kernels; k++)
    spirv_words_needs(kf->kernels[k].code, kf->kernels[k].code_bytes / 4, n);
}

/* Removes from the module w (*nw words) the SignedZeroInfNanPreserve modes
 * of the widths in `strip` (szinp bits), and with them its OpCapability
 * SignedZeroInfNanPreserve and OpExtension "SPV_KHR_float_controls" when
 * no mode is left: the module a device without those float controls
 * accepts (its driver may then fold 0 * x to 0: docs/kernels.md). */
static void spirv_strip_szinp(uint32_t *w, size_t *nw, unsigned strip) {
  spv_needs_t have;
  memset(&have, 0, sizeof have);
  spirv_words_needs((const uint8_t *)w, *nw, &have);
  int none_left = (have.szinp & ~strip) == 0;
  size_t o = 5;
  int preamble = 1;
  for (size_t i = 5; i < *nw;) {
    uint32_t op = w[i] & 0xffffu, len = w[i] >> 16;
    if (len == 0 || i + len > *nw) len = (uint32_t)(*nw - i); /* copied as is */
    int drop = 0;
    if (preamble) {
      if (op == 16 && len == 4 && w[i + 2] == 4461 && (szinp_bit(w[i + 3]) & strip))
        drop = 1;
      if (none_left && op == 17 && len == 2 && w[i + 1] == 4466) drop = 1;
      if (none_left && op == 10 && len == 7 &&
          !memcmp(&w[i + 1], "SPV_KHR_float_controls", 23))
        drop = 1;
      if (op == 54 /* OpFunction */) preamble = 0;
    }
    if (!drop) {
      memmove(&w[o], &w[i], len * sizeof(uint32_t));
      o += len;
    }
    i += len;
  }
  *nw = o;
}

static int has_extension(vk_loader_t *L, VkPhysicalDevice pd, const char *name) {
  uint32_t n = 0;
  if (L->vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS || !n)
    return 0;
  VkExtensionProperties *e = (VkExtensionProperties *)calloc(n, sizeof *e);
  int found = 0;
  if (e && L->vkEnumerateDeviceExtensionProperties(pd, NULL, &n, e) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !found; i++) found = !strcmp(e[i].extensionName, name);
  free(e);
  return found;
}

/* 1 when device pd has the feature *bit of the feature structure `feat`
 * (its sType set, pNext NULL; `bit` points into it), read through
 * vkGetPhysicalDeviceFeatures2. */
static int has_feature(vk_loader_t *L, VkPhysicalDevice pd, void *feat,
                       const VkBool32 *bit) {
  VkPhysicalDeviceFeatures2 f2 = {
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, feat, {0}};
  L->vkGetPhysicalDeviceFeatures2(pd, &f2);
  return *bit == VK_TRUE;
}

/* 1 when device pd (properties pp) has storageBuffer16BitAccess, read into
 * *s16 (sType set, pNext NULL): core in Vulkan 1.1, the extension on 1.0
 * devices; 0 when `hidden` (DMLC_VULKAN_HIDE_FEATURES). *listed: the
 * device lists the extension. */
static int has_storage16(vk_loader_t *L, VkPhysicalDevice pd,
                         const VkPhysicalDeviceProperties *pp, int hidden,
                         VkPhysicalDevice16BitStorageFeatures *s16, int *listed) {
  *listed = has_extension(L, pd, VK_KHR_16BIT_STORAGE_EXTENSION_NAME);
  return !hidden && (*listed || pp->apiVersion >= VK_API_VERSION_1_1) &&
         has_feature(L, pd, s16, &s16->storageBuffer16BitAccess);
}

/* UNIMPLEMENTED: the kernels use `what` but the device lacks `feature`. */
static dml_status_t lacks(const vk_session_t *v, const char *what, const char *feature) {
  return dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                         "the kernels use %s but %s lacks the Vulkan feature %s", what,
                         v->desc, feature);
}

/* The session's command pool (resettable buffers) on its queue family and
 * its fence. */
static dml_status_t make_pool_fence(vk_session_t *v) {
  VkCommandPoolCreateInfo ci = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL,
                                VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                v->queue_family};
  VkFenceCreateInfo fc = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, NULL, 0};
  VkResult r = v->vkCreateCommandPool(v->dev, &ci, NULL, &v->cmd_pool);
  if (r == VK_SUCCESS) r = v->vkCreateFence(v->dev, &fc, NULL, &v->fence);
  return r != VK_SUCCESS ? vkfail("vkCreateCommandPool/vkCreateFence", r) : DML_OK;
}

/* Describes physical device v->phys_index in v->desc and creates the
 * session's VkDevice on it with its first compute queue and the features
 * the kernels (v->kf; NULL: the eager library's) use. */
static dml_status_t create_device(vk_session_t *v) {
  vk_loader_t *L = v->L;
  const VkPhysicalDeviceProperties *p = &L->props[v->phys_index];
  snprintf(v->desc, sizeof v->desc, "vulkan:%u (%s, %s, Vulkan %u.%u.%u)", v->phys_index,
           p->deviceName, kind_name(p->deviceType), VK_API_VERSION_MAJOR(p->apiVersion),
           VK_API_VERSION_MINOR(p->apiVersion), VK_API_VERSION_PATCH(p->apiVersion));
  uint32_t nq = 0;
  L->vkGetPhysicalDeviceQueueFamilyProperties(L->phys[v->phys_index], &nq, NULL);
  VkQueueFamilyProperties qf[32];
  if (nq > 32) nq = 32;
  L->vkGetPhysicalDeviceQueueFamilyProperties(L->phys[v->phys_index], &nq, qf);
  uint32_t fam = UINT32_MAX;
  for (uint32_t i = 0; i < nq && fam == UINT32_MAX; i++)
    if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) fam = i;
  if (fam == UINT32_MAX)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, OP, "%s has no compute queue",
                           v->desc);
  v->queue_family = fam;
  const VkPhysicalDeviceProperties *pp = &L->props[v->phys_index];
  if (qf[fam].timestampValidBits && pp->limits.timestampPeriod > 0)
    v->ts_period_ns = pp->limits.timestampPeriod;
  VkPhysicalDeviceFeatures have, want;
  VkPhysicalDevice pd = L->phys[v->phys_index];
  L->vkGetPhysicalDeviceFeatures(pd, &have);
  memset(&want, 0, sizeof want);
  /* Kernels are untrusted bytes: out-of-bounds accesses stay in bounds.
   * DMLC_VULKAN_ROBUST_ACCESS=0 turns this off for packages the caller
   * trusts (robust access adds a bounds check to every buffer access). */
  const char *robust = getenv("DMLC_VULKAN_ROBUST_ACCESS");
  want.robustBufferAccess =
      robust && strcmp(robust, "0") == 0 ? VK_FALSE : have.robustBufferAccess;
  /* Typed kernels: 64-bit integers and byte (bool) views, enabled only
   * when the package's kernels use them. */
  spv_needs_t need;
  spirv_needs(v->kf, &need);
  /* The package's other functions (an If's branches, a Loop's body, the
   * functions of a training package) may run on this VkDevice too
   * (rt_backend.h open's `share`): the features their kernels use are
   * enabled as well where the device has them (a missing one fails only
   * the session whose kernels need it, at its open). */
  spv_needs_t pkg_need;
  memset(&pkg_need, 0, sizeof pkg_need);
  for (uint32_t i = 0; v->kf && v->pkg && i < v->pkg->n_functions; i++) {
    spv_needs_t fn_need;
    spirv_needs(&v->pkg->functions[i], &fn_need);
    pkg_need.int64 |= fn_need.int64;
    pkg_need.storage8 |= fn_need.storage8;
    pkg_need.float64 |= fn_need.float64;
    pkg_need.int16 |= fn_need.int16;
    pkg_need.storage16 |= fn_need.storage16;
    pkg_need.szinp |= fn_need.szinp;
  }
  /* DMLC_VULKAN_HIDE_FEATURES (a comma-separated list of shaderInt64,
   * shaderFloat64, shaderInt16, storageBuffer8BitAccess and
   * storageBuffer16BitAccess) makes a device look as if it lacked them, to
   * exercise the errors below on a device that has them. */
  const char *hide = getenv("DMLC_VULKAN_HIDE_FEATURES");
  if (hide && strstr(hide, "shaderInt64")) have.shaderInt64 = VK_FALSE;
  if (hide && strstr(hide, "shaderFloat64")) have.shaderFloat64 = VK_FALSE;
  if (hide && strstr(hide, "shaderInt16")) have.shaderInt16 = VK_FALSE;
  int hide8 = hide && strstr(hide, "storageBuffer8BitAccess");
  int hide16 = hide && strstr(hide, "storageBuffer16BitAccess");
  VkPhysicalDevice8BitStorageFeaturesKHR s8q = {
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES_KHR, NULL, 0, 0, 0};
  if (!v->kf) { /* eager tensors: every typed feature the device has, for the
                 * library's kernels (one needing a missing feature is refused
                 * when it runs) and for the packages of the sessions made on
                 * this device (rt_backend open's on_dev) */
    need.int64 = have.shaderInt64;
    need.float64 = have.shaderFloat64;
    need.int16 = have.shaderInt16;
    need.storage8 = !hide8 && has_extension(L, pd, VK_KHR_8BIT_STORAGE_EXTENSION_NAME) &&
                    has_feature(L, pd, &s8q, &s8q.storageBuffer8BitAccess);
    VkPhysicalDevice16BitStorageFeatures q16 = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES, NULL, 0, 0, 0, 0};
    int listed = 0;
    need.storage16 = has_storage16(L, pd, pp, hide16, &q16, &listed);
  } else {
    need.int64 |= pkg_need.int64 && have.shaderInt64;
    need.float64 |= pkg_need.float64 && have.shaderFloat64;
    need.int16 |= pkg_need.int16 && have.shaderInt16;
    need.storage8 |= pkg_need.storage8 && !hide8 &&
                     has_extension(L, pd, VK_KHR_8BIT_STORAGE_EXTENSION_NAME) &&
                     has_feature(L, pd, &s8q, &s8q.storageBuffer8BitAccess);
    VkPhysicalDevice16BitStorageFeatures q16 = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES, NULL, 0, 0, 0, 0};
    int listed = 0;
    need.storage16 |=
        pkg_need.storage16 && has_storage16(L, pd, pp, hide16, &q16, &listed);
    need.szinp |= pkg_need.szinp;
  }
  v->eager_feats = spv_bits(&need);
  if (need.int64 && !have.shaderInt64)
    return lacks(v, "64-bit integers (i64 values)", "shaderInt64");
  if (need.float64 && !have.shaderFloat64)
    return lacks(v, "64-bit floats (f64 values)", "shaderFloat64");
  if (need.int16 && !have.shaderInt16)
    return lacks(v, "16-bit integer arithmetic", "shaderInt16");
  want.shaderInt64 = need.int64 ? VK_TRUE : VK_FALSE;
  want.shaderFloat64 = need.float64 ? VK_TRUE : VK_FALSE;
  want.shaderInt16 = need.int16 ? VK_TRUE : VK_FALSE;
  VkPhysicalDevice8BitStorageFeaturesKHR s8 = {
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES_KHR, NULL, 0, 0, 0};
  VkPhysicalDevice16BitStorageFeatures s16 = {
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES, NULL, 0, 0, 0, 0};
  const char *ext[3];
  uint32_t n_ext = 0;
  void *chain = NULL;
  if (need.szinp) {
    /* float controls (VK_KHR_shader_float_controls, a property: nothing to
     * enable but the extension); the widths the device lacks are stripped
     * from the modules (DMLC_VULKAN_HIDE_FEATURES may name
     * shaderSignedZeroInfNanPreserveFloat16/32/64) */
    unsigned has = 0;
    if (has_extension(L, pd, VK_KHR_SHADER_FLOAT_CONTROLS_EXTENSION_NAME)) {
      VkPhysicalDeviceFloatControlsPropertiesKHR fc;
      memset(&fc, 0, sizeof fc);
      fc.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES_KHR;
      VkPhysicalDeviceProperties2 p2 = {
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &fc, {0}};
      L->vkGetPhysicalDeviceProperties2(pd, &p2);
      has = (fc.shaderSignedZeroInfNanPreserveFloat16 ? 1u : 0u) |
            (fc.shaderSignedZeroInfNanPreserveFloat32 ? 2u : 0u) |
            (fc.shaderSignedZeroInfNanPreserveFloat64 ? 4u : 0u);
      if (hide && strstr(hide, "shaderSignedZeroInfNanPreserveFloat16")) has &= ~1u;
      if (hide && strstr(hide, "shaderSignedZeroInfNanPreserveFloat32")) has &= ~2u;
      if (hide && strstr(hide, "shaderSignedZeroInfNanPreserveFloat64")) has &= ~4u;
    }
    v->szinp_strip = need.szinp & ~has;
    if (need.szinp & has) ext[n_ext++] = VK_KHR_SHADER_FLOAT_CONTROLS_EXTENSION_NAME;
    v->szinp_has = need.szinp & has ? has : 0;
  }
  if (need.storage8) {
    if (hide8 || !has_extension(L, pd, VK_KHR_8BIT_STORAGE_EXTENSION_NAME) ||
        !has_feature(L, pd, &s8, &s8.storageBuffer8BitAccess))
      return lacks(v, "byte (bool) buffers",
                   "storageBuffer8BitAccess (VK_KHR_8bit_storage)");
    s8.pNext = NULL;
    s8.storageBuffer8BitAccess = VK_TRUE;
    s8.uniformAndStorageBuffer8BitAccess = VK_FALSE;
    s8.storagePushConstant8 = VK_FALSE;
    ext[n_ext++] = VK_KHR_8BIT_STORAGE_EXTENSION_NAME;
    chain = &s8;
  }
  if (need.storage16) {
    int listed = 0;
    if (!has_storage16(L, pd, pp, hide16, &s16, &listed))
      return lacks(v, "16-bit (f16, bf16, i16, u16) buffers",
                   "storageBuffer16BitAccess (VK_KHR_16bit_storage)");
    s16.pNext = chain;
    s16.storageBuffer16BitAccess = VK_TRUE;
    s16.uniformAndStorageBuffer16BitAccess = VK_FALSE;
    s16.storagePushConstant16 = VK_FALSE;
    s16.storageInputOutput16 = VK_FALSE;
    if (listed) ext[n_ext++] = VK_KHR_16BIT_STORAGE_EXTENSION_NAME;
    chain = &s16;
  }
  float prio = 1.0f;
  VkDeviceQueueCreateInfo qi = {
      VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, fam, 1, &prio};
  VkDeviceCreateInfo di = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                           chain,
                           0,
                           1,
                           &qi,
                           0,
                           NULL,
                           n_ext,
                           n_ext ? ext : NULL,
                           &want};
  VKCHECK(L->vkCreateDevice(L->phys[v->phys_index], &di, NULL, &v->dev),
          "vkCreateDevice");
#define X(f)                                          \
  v->f = (PFN_##f)L->vkGetDeviceProcAddr(v->dev, #f); \
  if (!v->f) return dml_status_make(DML_STATUS_INTERNAL, OP, "the driver lacks " #f);
  VK_DEVICE_FNS(X)
#undef X
  if (L->props[v->phys_index].apiVersion >= VK_API_VERSION_1_1)
    v->dispatch_base =
        (PFN_vkCmdDispatchBase)L->vkGetDeviceProcAddr(v->dev, "vkCmdDispatchBase");
  v->vkGetDeviceQueue(v->dev, fam, 0, &v->queue);
  return DML_OK;
}

/* Sets v->timeout_s for a run: e's (dml_rt_session_set_device_timeout),
 * else DMLC_VULKAN_TIMEOUT_S, else TIMEOUT_GPU_S or TIMEOUT_CPU_S by the
 * device's type. Errors: INVALID_ARGUMENT for a DMLC_VULKAN_TIMEOUT_S that is
 * not a number of seconds >= 0. */
static dml_status_t set_timeout(vk_session_t *v, const dml_rt_exec_t *e) {
  if (e && e->timeout_set) {
    v->timeout_s = e->timeout_s > 0 ? e->timeout_s : 0;
    return DML_OK;
  }
  const char *env = getenv("DMLC_VULKAN_TIMEOUT_S");
  if (env && *env) {
    char *end = NULL;
    double t = strtod(env, &end);
    if (end == env || *end || !(t >= 0 && t <= 1e9))
      return dml_status_make(
          DML_STATUS_INVALID_ARGUMENT, OP,
          "DMLC_VULKAN_TIMEOUT_S='%s' is not a number of seconds in [0, "
          "1e9] (0: no limit)",
          env);
    v->timeout_s = t;
    return DML_OK;
  }
  v->timeout_s = v->L->props[v->phys_index].deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU
                     ? TIMEOUT_CPU_S
                     : TIMEOUT_GPU_S;
  return DML_OK;
}

/* Runs `cb` once and waits, at most v->timeout_s (0: no limit). After a
 * wait that timed out, the next call first waits (as long) for that
 * submission, whose fence and buffers are still in use. */
static dml_status_t submit_wait(vk_session_t *v, VkCommandBuffer cb) {
  uint64_t limit = v->timeout_s > 0 ? (uint64_t)(v->timeout_s * 1e9) : UINT64_MAX;
  if (v->hung) {
    VkResult h = v->vkWaitForFences(v->dev, 1, &v->fence, VK_TRUE, limit);
    if (h == VK_TIMEOUT)
      return dml_status_make(DML_STATUS_INTERNAL, OP,
                             "the device is still running a submission that did not "
                             "finish in time (%s); waited %g s more",
                             v->desc, v->timeout_s);
    if (h != VK_SUCCESS) return vkfail("vkWaitForFences", h);
    v->hung = 0;
  }
  VKCHECK(v->vkResetFences(v->dev, 1, &v->fence), "vkResetFences");
  VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, 1, &cb, 0, NULL};
  pthread_mutex_lock(&v->creator->qlock);
  VkResult sr = v->vkQueueSubmit(v->queue, 1, &si, v->fence);
  pthread_mutex_unlock(&v->creator->qlock);
  VKCHECK(sr, "vkQueueSubmit");
  VkResult r = v->vkGetFenceStatus(v->dev, v->fence);
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  while (r == VK_NOT_READY) {
    clock_gettime(CLOCK_MONOTONIC, &t);
    if ((uint64_t)(t.tv_sec - t0.tv_sec) * 1000000000ull + (uint64_t)t.tv_nsec -
            (uint64_t)t0.tv_nsec >
        FENCE_SPIN_NS)
      break;
    r = v->vkGetFenceStatus(v->dev, v->fence);
  }
  if (r == VK_NOT_READY) r = v->vkWaitForFences(v->dev, 1, &v->fence, VK_TRUE, limit);
  if (r == VK_TIMEOUT) {
    v->hung = 1;
    return dml_status_make(
        DML_STATUS_INTERNAL, OP,
        "the device did not finish within %g s (%s); "
        "DMLC_VULKAN_TIMEOUT_S or dml_rt_session_set_device_timeout sets "
        "the limit (0: none)",
        v->timeout_s, v->desc);
  }
  if (r != VK_SUCCESS) return vkfail("vkWaitForFences", r);
  return DML_OK;
}

/* Copies `bytes` bytes of buffer src at soff to buffer dst at doff in one
 * submission, and waits. The barriers order the copy after every earlier
 * kernel, transfer and host write on the queue (of any session on the
 * device), and host reads and later kernels after it. */
static dml_status_t copies_wait(vk_session_t *v, uint32_t n, const VkBuffer *src,
                                const VkBuffer *dst, const VkBufferCopy *c);

static dml_status_t copy_wait(vk_session_t *v, VkBuffer src, uint64_t soff, VkBuffer dst,
                              uint64_t doff, uint64_t bytes) {
  VkBufferCopy c = {soff, doff, bytes};
  return copies_wait(v, 1, &src, &dst, &c);
}

/* copy_wait of n copies (c[i] from src[i] to dst[i]) in one submission;
 * nothing for n 0. */
static dml_status_t copies_wait(vk_session_t *v, uint32_t n, const VkBuffer *src,
                                const VkBuffer *dst, const VkBufferCopy *c) {
  if (!n) return DML_OK;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  VkCommandBufferAllocateInfo ai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL,
                                    v->cmd_pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
  VKCHECK(v->vkAllocateCommandBuffers(v->dev, &ai, &cb), "vkAllocateCommandBuffers");
  VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
                                 VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL};
  v->vkBeginCommandBuffer(cb, &bi);
  VkMemoryBarrier before = {VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL,
                            VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT |
                                VK_ACCESS_TRANSFER_WRITE_BIT |
                                VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_HOST_WRITE_BIT,
                            VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
  v->vkCmdPipelineBarrier(cb,
                          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT |
                              VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                          VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &before, 0, NULL, 0,
                          NULL);
  for (uint32_t i = 0; i < n; i++) v->vkCmdCopyBuffer(cb, src[i], dst[i], 1, &c[i]);
  VkMemoryBarrier after = {
      VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL, VK_ACCESS_TRANSFER_WRITE_BIT,
      VK_ACCESS_HOST_READ_BIT | VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
  v->vkCmdPipelineBarrier(
      cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
      VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &after, 0,
      NULL, 0, NULL);
  VkResult r = v->vkEndCommandBuffer(cb);
  dml_status_t s = r != VK_SUCCESS ? vkfail("vkEndCommandBuffer", r) : submit_wait(v, cb);
  v->vkFreeCommandBuffers(v->dev, v->cmd_pool, 1, &cb);
  return s;
}

/* Copies the weights buffer's first `size` bytes from `src` (upload) or,
 * with `src` NULL, into `dst` (download), through a host-visible staging
 * buffer (copy_wait: a whole number of words, within both buffers). */
static dml_status_t transfer_weights(vk_session_t *v, const uint8_t *src, uint8_t *dst,
                                     uint64_t size) {
  if (!size) return DML_OK;
  vk_buf_t tmp = {0};
  dml_status_t s = buf_create(
      v, size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, 1,
      "the weights' staging", &tmp);
  if (!s) {
    if (src) memcpy(tmp.map, src, (size_t)size);
    uint64_t n = (size + 3) & ~(uint64_t)3;
    if (n > tmp.size) n = tmp.size;
    if (n > v->weights.size) n = v->weights.size;
    s = src ? copy_wait(v, tmp.buf, 0, v->weights.buf, 0, n)
            : copy_wait(v, v->weights.buf, 0, tmp.buf, 0, n);
  }
  if (!s && !src && dst) memcpy(dst, tmp.map, (size_t)size);
  buf_destroy(v, &tmp);
  return s;
}

/* Makes the session's descriptor set layout (n_bindings <=
 * DML_EAGER_BINDINGS storage buffers at bindings 0.., for the compute
 * stage), its pipeline layout (pc_bytes of push constants), a descriptor
 * pool and its one set (v->dsl, layout, pool, set). */
static dml_status_t make_layout(vk_session_t *v, uint32_t n_bindings, uint32_t pc_bytes) {
  VkDescriptorSetLayoutBinding b[DML_EAGER_BINDINGS];
  for (uint32_t i = 0; i < n_bindings; i++) {
    VkDescriptorSetLayoutBinding x = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                                      VK_SHADER_STAGE_COMPUTE_BIT, NULL};
    b[i] = x;
  }
  VkDescriptorSetLayoutCreateInfo dl = {
      VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, NULL, 0, n_bindings, b};
  VKCHECK(v->vkCreateDescriptorSetLayout(v->dev, &dl, NULL, &v->dsl),
          "vkCreateDescriptorSetLayout");
  VkPushConstantRange pc = {VK_SHADER_STAGE_COMPUTE_BIT, 0, pc_bytes};
  VkPipelineLayoutCreateInfo pl = {
      VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, NULL, 0, 1, &v->dsl, 1, &pc};
  VKCHECK(v->vkCreatePipelineLayout(v->dev, &pl, NULL, &v->layout),
          "vkCreatePipelineLayout");
  VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, DML_EAGER_BINDINGS};
  VkDescriptorPoolCreateInfo dp = {
      VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, NULL, 0, 1, 1, &ps};
  VKCHECK(v->vkCreateDescriptorPool(v->dev, &dp, NULL, &v->pool),
          "vkCreateDescriptorPool");
  VkDescriptorSetAllocateInfo da = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, NULL,
                                    v->pool, 1, &v->dsl};
  VKCHECK(v->vkAllocateDescriptorSets(v->dev, &da, &v->set), "vkAllocateDescriptorSets");
  return DML_OK;
}

static dml_status_t make_pipelines(vk_session_t *v, const dml_pkg_graph_t *g) {
  /* binding 0 the arena, 1 the weights; push constants: the symbols */
  DML_RETURN_IF_ERROR(make_layout(v, 2, 4 * (v->n_symbols ? v->n_symbols : 1)));
  VkPipelineCacheCreateInfo cc = {VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO, NULL, 0,
                                  0, NULL};
  VKCHECK(v->vkCreatePipelineCache(v->dev, &cc, NULL, &v->cache),
          "vkCreatePipelineCache");
  VkDescriptorBufferInfo bufs[2] = {{v->arena.buf, 0, VK_WHOLE_SIZE},
                                    {v->weights.buf, 0, VK_WHOLE_SIZE}};
  VkWriteDescriptorSet w[2];
  for (int i = 0; i < 2; i++) {
    VkWriteDescriptorSet x = {
        VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, v->set,   (uint32_t)i, 0, 1,
        VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,      NULL, &bufs[i], NULL};
    w[i] = x;
  }
  v->vkUpdateDescriptorSets(v->dev, 2, w, 0, NULL);
  uint32_t nk = v->kf->n_kernels;
  v->pipelines = (VkPipeline *)calloc(nk ? nk : 1, sizeof(VkPipeline));
  v->split = (uint8_t *)calloc(nk ? nk : 1, 1);
  if (!v->pipelines || !v->split)
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  const char *corrupt = getenv("DMLC_VULKAN_TEST_CORRUPT_KERNEL");
  v->corrupt_kernel = -1;
  for (uint32_t i = 0; corrupt && i < nk; i++)
    if (!strcmp(corrupt, v->kf->kernels[i].name)) v->corrupt_kernel = i;
  const VkPhysicalDeviceLimits *lim = &v->L->props[v->phys_index].limits;
  int64_t bounds[DML_KPKG_MAX_SYMBOLS];
  uint32_t nb = g->n_symbols < DML_KPKG_MAX_SYMBOLS ? g->n_symbols : DML_KPKG_MAX_SYMBOLS;
  for (uint32_t i = 0; i < nb; i++) bounds[i] = g->symbols[i].bound;
  for (uint32_t i = 0; i < nk; i++) {
    const dml_kpkg_kernel_t *K = &v->kf->kernels[i];
    if (K->kind == DML_KPKG_KIND_HOST) continue; /* host nodes: no pipeline */
    if (K->local[0] > lim->maxComputeWorkGroupSize[0] ||
        K->local[1] > lim->maxComputeWorkGroupSize[1] ||
        K->local[2] > lim->maxComputeWorkGroupSize[2] ||
        K->local[0] * K->local[1] * K->local[2] > lim->maxComputeWorkGroupInvocations)
      return dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                             "kernel %s: workgroup %ux%ux%u exceeds the limits of %s",
                             K->name, K->local[0], K->local[1], K->local[2], v->desc);
    uint32_t *code = (uint32_t *)malloc(K->code_bytes);
    if (!code) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
    memcpy(code, K->code, K->code_bytes);
    size_t nw = K->code_bytes / 4;
    if (v->szinp_strip) spirv_strip_szinp(code, &nw, v->szinp_strip);
    VkShaderModuleCreateInfo sm = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, NULL, 0,
                                   nw * 4, code};
    VkShaderModule mod = VK_NULL_HANDLE;
    VkResult r = v->vkCreateShaderModule(v->dev, &sm, NULL, &mod);
    free(code);
    if (r != VK_SUCCESS)
      return dml_status_detail(vkfail("vkCreateShaderModule", r), "kernel %s", K->name);
    int64_t items = dml_kpkg_lin_eval(K->items[0], bounds, nb);
    v->split[i] =
        v->dispatch_base && (items < 0 || (items + K->local[0] - 1) / K->local[0] >
                                              (int64_t)lim->maxComputeWorkGroupCount[0]);
    VkComputePipelineCreateInfo ci = {
        VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        NULL,
        v->split[i] ? VK_PIPELINE_CREATE_DISPATCH_BASE_BIT : 0,
        {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0,
         VK_SHADER_STAGE_COMPUTE_BIT, mod, "main", NULL},
        v->layout,
        VK_NULL_HANDLE,
        -1};
    r = v->vkCreateComputePipelines(v->dev, v->cache, 1, &ci, NULL, &v->pipelines[i]);
    v->vkDestroyShaderModule(v->dev, mod, NULL);
    if (r != VK_SUCCESS)
      return dml_status_detail(vkfail("vkCreateComputePipelines", r), "kernel %s",
                               K->name);
  }
  return DML_OK;
}

/* Session v uses the VkDevice and queue of o (a session whose globals it
 * shares, or an eager device); its kernels' SignedZeroInfNanPreserve
 * widths that the device was not opened with are stripped. */
static void use_device_of(vk_session_t *v, const vk_session_t *o) {
  memcpy(v->desc, o->desc, sizeof v->desc);
#define X(f) v->f = o->f;
  VK_DEVICE_FNS(X)
#undef X
  v->dispatch_base = o->dispatch_base;
  v->dev = o->dev;
  v->queue = o->queue;
  v->queue_family = o->queue_family;
  v->ts_period_ns = o->ts_period_ns;
  v->creator = o->creator;
  spv_needs_t need;
  spirv_needs(v->kf, &need);
  v->szinp_strip = need.szinp & ~o->creator->szinp_has;
}

static dml_status_t vk_open(const dml_rt_model_t *m, const dml_pkg_function_t *f,
                            const char *device, const uint8_t *weights, void *share,
                            void *on_dev, void **out_state) {
  const dml_pkg_graph_t *g = m->graph;
  const dml_kpkg_function_t *kf = NULL;
  DML_RETURN_IF_ERROR(
      dml_rt_gpu_kernels_for(OP, "Vulkan", "vulkan", m, f, m->kernels_spirv, &kf));
  vk_loader_t *L = NULL;
  DML_RETURN_IF_ERROR(loader_get(&L));
  vk_session_t *v = (vk_session_t *)calloc(1, sizeof *v);
  if (!v) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  v->owner = v;
  v->corrupt_kernel = -1;
  atomic_init(&v->refs, 1);
  v->L = L;
  v->kf = kf;
  v->n_symbols = g->n_symbols;
  v->weights_size = m->weights_size;
  v->pkg = m->kernels_spirv;
  dml_status_t s = pick_device(L, device, &v->phys_index);
  if (!s) s = set_timeout(v, NULL); /* the default, for the uploads of open */
  vk_session_t *o = share ? ((vk_session_t *)share)->owner : NULL;
  vk_session_t *d = on_dev ? ((vk_session_t *)on_dev)->creator : NULL;
  if (!s && o && o->phys_index != v->phys_index)
    s = dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                        "'%s' is not the device of the session whose globals it shares "
                        "(%s): sessions sharing globals run on one device",
                        device, o->desc);
  if (!s && !o && d && d->phys_index != v->phys_index)
    s = dml_status_make(DML_STATUS_FAILED_PRECONDITION, OP,
                        "'%s' is not the eager device's (%s)", device, d->desc);
  if (!s && o) {
    /* The owner's device, queue and weights (the shared globals). */
    atomic_fetch_add(&o->refs, 1);
    v->owner = o;
    use_device_of(v, o);
    v->weights = o->weights;
    spv_needs_t need;
    spirv_needs(kf, &need);
    unsigned miss = spv_bits(&need) & ~o->creator->eager_feats;
    if (miss)
      s = dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                          "the kernels need the Vulkan feature %s, which the VkDevice of "
                          "the session whose device it shares (%s) was not opened with",
                          miss & 1u   ? "shaderInt64"
                          : miss & 2u ? "storageBuffer8BitAccess"
                          : miss & 4u ? "shaderFloat64"
                          : miss & 8u ? "shaderInt16"
                                      : "storageBuffer16BitAccess",
                          o->desc);
  } else if (!s && d) {
    /* The eager device's VkDevice and queue; weights of its own. */
    atomic_fetch_add(&d->dev_refs, 1);
    use_device_of(v, d);
    spv_needs_t need;
    spirv_needs(kf, &need);
    unsigned miss = spv_bits(&need) & ~d->eager_feats;
    if (miss)
      s = dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                          "the package's kernels need the Vulkan feature %s, which the "
                          "eager device %s was not opened with; create the session by "
                          "name (dml_rt_session_create)",
                          miss & 1u   ? "shaderInt64"
                          : miss & 2u ? "storageBuffer8BitAccess"
                          : miss & 4u ? "shaderFloat64"
                          : miss & 8u ? "shaderInt16"
                                      : "storageBuffer16BitAccess",
                          d->desc);
  } else if (!s) {
    dev_own(v);
    s = create_device(v);
  }
  uint64_t staging = 0;
  /* staging regions 16-byte aligned */
  if (!s) s = dml_rt_gpu_plan(OP, "Vulkan", m, f, kf, 16, &v->plan, &staging);
  if (!s) {
    v->n_segments = dml_rt_gpu_segments_host(&v->plan.dims, &v->plan.host, kf->n_kernels);
    v->n_cmds = MAX_CACHED_CMDS * v->n_segments;
    v->cmds = (vk_cmd_t *)calloc(v->n_cmds, sizeof(vk_cmd_t));
    if (!v->cmds) s = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  }
  const VkBufferUsageFlags dev_use = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
  if (!s) s = buf_create(v, v->plan.dims.arena_bytes, dev_use, 0, "the arena", &v->arena);
  if (!s && !o)
    s = buf_create(v, m->weights_size, dev_use, 0, "the weights", &v->weights);
  if (!s)
    s = buf_create(v, staging,
                   VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, 1,
                   "the input/output staging", &v->staging);
  if (!s) s = make_pool_fence(v);
  if (!s && v->ts_period_ns > 0) {
    VkQueryPoolCreateInfo qi = {VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                NULL,
                                0,
                                VK_QUERY_TYPE_TIMESTAMP,
                                kf->n_kernels + 1,
                                0};
    if (v->vkCreateQueryPool(v->dev, &qi, NULL, &v->queries) != VK_SUCCESS)
      v->ts_period_ns = 0;
  }
  if (!s) {
    v->kernel_ms = (double *)calloc(kf->n_kernels + 1, sizeof(double));
    v->ts = (uint64_t *)calloc(kf->n_kernels + 1, sizeof(uint64_t));
    if (!v->kernel_ms || !v->ts)
      s = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  }
  if (!s && !o) s = transfer_weights(v, weights, NULL, m->weights_size);
  if (!s) s = make_pipelines(v, g);
  if (s) {
    vk_close(v);
    return s;
  }
  *out_state = v;
  return DML_OK;
}

static void barrier(vk_session_t *v, VkCommandBuffer cb, VkPipelineStageFlags src,
                    VkAccessFlags sa, VkPipelineStageFlags dst, VkAccessFlags da) {
  VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL, sa, da};
  v->vkCmdPipelineBarrier(cb, src, dst, 0, 1, &mb, 0, NULL, 0, NULL);
}

/* Records kernel `k`'s dispatch for the symbol values of `e` (its pipeline
 * bound; the descriptor set and push constants already are).
 *
 * A testing aid: when the environment variable
 * DMLC_VULKAN_TEST_CORRUPT_KERNEL names kernel `k` ("k3_gemm"; read once
 * per session, v->corrupt_kernel), its
 * result is made wrong on purpose: the first element of its last node's
 * first output is overwritten with the bits 0x42F6E979 (123.456f) after the
 * dispatch. The tests of `dmlc check` use it to prove the check fails on a
 * wrong kernel; never set it otherwise. */
static dml_status_t dispatch(vk_session_t *v, const dml_rt_exec_t *e, VkCommandBuffer cb,
                             uint32_t k) {
  const dml_kpkg_kernel_t *K = &v->kf->kernels[k];
  const VkPhysicalDeviceLimits *lim = &v->L->props[v->phys_index].limits;
  uint32_t groups[3];
  for (int d = 0; d < 3; d++) {
    int64_t items = dml_kpkg_lin_eval(K->items[d], e->sym, e->n_symbols);
    int64_t gcount = items <= 0 ? 0 : (items + K->local[d] - 1) / K->local[d];
    /* x beyond the limit: dispatched in parts below (32-bit ids) */
    if (d == 0 && v->split[k] && gcount <= (int64_t)UINT32_MAX) {
      groups[d] = (uint32_t)gcount;
      continue;
    }
    if (gcount > (int64_t)lim->maxComputeWorkGroupCount[d])
      return dml_status_make(
          DML_STATUS_UNIMPLEMENTED, OP,
          "kernel %s needs %" PRId64 " workgroups along dim %d; %s allows %u", K->name,
          gcount, d, v->desc, lim->maxComputeWorkGroupCount[d]);
    groups[d] = (uint32_t)gcount;
  }
  v->vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, v->pipelines[k]);
  uint32_t max0 = lim->maxComputeWorkGroupCount[0];
  if (groups[0] && groups[1] && groups[2] && groups[0] > max0) {
    /* gl_WorkGroupID.x (and the global ids) count from the base */
    for (uint64_t base = 0; base < groups[0]; base += max0)
      v->dispatch_base(cb, (uint32_t)base, 0, 0,
                       groups[0] - base < max0 ? (uint32_t)(groups[0] - base) : max0,
                       groups[1], groups[2]);
  } else if (groups[0] && groups[1] && groups[2]) {
    v->vkCmdDispatch(cb, groups[0], groups[1], groups[2]);
  }
  if (v->corrupt_kernel == (int64_t)k && K->n_nodes) {
    const dml_pkg_node_t *n = &e->fn->nodes[K->nodes[K->n_nodes - 1]];
    uint32_t o = n->n_outputs ? n->outputs[0] : DML_PKG_NO_VALUE;
    if (o != DML_PKG_NO_VALUE && e->fn->values[o].bytes >= 4 &&
        e->fn->values[o].offset % 4 == 0) {
      barrier(v, cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
              VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
      v->vkCmdFillBuffer(cb, v->arena.buf, e->fn->values[o].offset, 4, 0x42F6E979u);
      barrier(v, cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
              VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
              VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                  VK_ACCESS_TRANSFER_READ_BIT);
    }
  }
  return DML_OK;
}

/* Records the copies of the n regions at x, at the run's sizes: staging ->
 * device arena (`up`: inputs, values the host computed) or device arena ->
 * staging (outputs, values the host reads). */
static void copy_regions(vk_session_t *v, const dml_rt_exec_t *e, VkCommandBuffer cb,
                         const dml_rt_io_region_t *x, uint32_t n, int up, uint64_t skip) {
  for (uint32_t i = 0; i < n; i++, x++) {
    if (i < 64 && (skip >> i & 1u)) continue;
    int64_t nb = dml_rt_gpu_io_bytes(e, x->value);
    if (nb <= 0) continue;
    VkBufferCopy c = {up ? x->staging_offset : x->arena_offset,
                      up ? x->arena_offset : x->staging_offset, (VkDeviceSize)nb};
    v->vkCmdCopyBuffer(cb, up ? v->staging.buf : v->arena.buf,
                       up ? v->arena.buf : v->staging.buf, 1, &c);
  }
}

/* The mask of the inputs of e bound on the device (dml_rt_exec_t.dev_in:
 * never uploaded from the staging; at most 64, rt_session.c's rule). */
static uint64_t skip_in(const dml_rt_exec_t *e) {
  uint64_t m = 0;
  for (uint32_t i = 0; e->dev_in && i < e->fn->n_inputs && i < 64; i++)
    if (e->dev_in[i]) m |= (uint64_t)1 << i;
  return m;
}

/* Records the copies of host entry k's regions (dml_rt_host_plan_t):
 * downloads (device arena -> staging) or uploads (staging -> device
 * arena). */
static void host_copies(vk_session_t *v, const dml_rt_exec_t *e, VkCommandBuffer cb,
                        uint32_t k, int up) {
  const uint32_t *at = up ? v->plan.host.up_at : v->plan.host.down_at;
  copy_regions(v, e, cb, v->plan.host.regions + at[2 * k], at[2 * k + 1] - at[2 * k], up,
               0);
}

/* Records segment [b, end) of the plan for the symbol values of `e`: the
 * input copies before the first segment, the kernels, the dims slot's copy
 * to the staging after a segment ending with a kernel that counts dims on
 * the device, the output copies after the last. */
static dml_status_t record(vk_session_t *v, const dml_rt_exec_t *e, uint32_t b,
                           uint32_t end, VkCommandBuffer cb) {
  VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL, 0,
                                 NULL};
  VKCHECK(v->vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
  const dml_kpkg_function_t *kf = v->kf;
  if (v->queries) v->vkCmdResetQueryPool(cb, v->queries, b, end - b + 1);
  if (b == v->plan.host.first_gpu) { /* 0 unless the function starts on the host */
    copy_regions(v, e, cb, v->plan.inputs, v->plan.n_inputs, 1, skip_in(e));
    if (v->plan.rng.used) {
      /* this run's seed and step (written to the staging before each submit) */
      VkBufferCopy c = {v->plan.rng.staging_offset, v->plan.rng.arena_offset,
                        DML_PHILOX_SLOT_BYTES};
      v->vkCmdCopyBuffer(cb, v->staging.buf, v->arena.buf, 1, &c);
    }
  }
  /* what the host nodes wrote */
  if (v->plan.host.used && b > 0 && v->plan.host.is_host[b - 1])
    host_copies(v, e, cb, b - 1, 1);
  /* Transfers before (inputs) and, across submissions, the previous
   * segment's kernels and copies. */
  barrier(v, cb, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
          VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
              VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT,
          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  v->vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, v->layout, 0, 1, &v->set,
                             0, NULL);
  uint32_t pcv[DML_KPKG_MAX_SYMBOLS] = {0};
  for (uint32_t i = 0; i < e->n_symbols; i++) pcv[i] = (uint32_t)e->sym[i];
  v->vkCmdPushConstants(cb, v->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                        4 * (e->n_symbols ? e->n_symbols : 1), pcv);
  if (v->queries)
    v->vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, v->queries, b);
  for (uint32_t k = b; k < end; k++) {
    DML_RETURN_IF_ERROR(dispatch(v, e, cb, k));
    if (v->queries)
      v->vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, v->queries, k + 1);
    /* The next kernel reads what this one wrote (and may overwrite what
     * it read: the planner reuses memory). */
    barrier(v, cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT,
            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                VK_ACCESS_TRANSFER_READ_BIT);
  }
  if (v->plan.host.used && end < kf->n_kernels && v->plan.host.is_host[end])
    host_copies(v, e, cb, end, 0); /* what the host nodes read */
  if (dml_rt_gpu_segment_produces(&v->plan.dims, b, end)) {
    VkBufferCopy c = {v->plan.dims.arena_offset, v->plan.dims.staging_offset,
                      DML_KPKG_DIMS_SLOT_BYTES};
    v->vkCmdCopyBuffer(cb, v->arena.buf, v->staging.buf, 1, &c);
  }
  if (end == kf->n_kernels && !dml_rt_gpu_segment_produces(&v->plan.dims, b, end) &&
      !e->outputs_lazy)
    copy_regions(v, e, cb, v->plan.outputs, v->plan.n_outputs, 0, 0);
  barrier(v, cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
          VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  VKCHECK(v->vkEndCommandBuffer(cb), "vkEndCommandBuffer");
  return DML_OK;
}

/* The command buffer recorded for segment `seg` ([b, end)) and the symbol
 * values of `e` (recorded on first use; the least recently recorded of the
 * cache is reused). */
static dml_status_t command_for(vk_session_t *v, const dml_rt_exec_t *e, uint32_t seg,
                                uint32_t b, uint32_t end, VkCommandBuffer *out) {
  for (uint32_t i = 0; i < v->n_cmds; i++) {
    vk_cmd_t *c = &v->cmds[i];
    if (c->used && c->seg == seg && c->skip_in == skip_in(e) &&
        c->lazy == e->outputs_lazy &&
        !memcmp(c->sym, e->sym, e->n_symbols * sizeof(int64_t))) {
      *out = c->cb;
      return DML_OK;
    }
  }
  vk_cmd_t *c = &v->cmds[v->next_cmd];
  v->next_cmd = (v->next_cmd + 1) % v->n_cmds;
  if (!c->cb) {
    VkCommandBufferAllocateInfo ai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      NULL, v->cmd_pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      1};
    VKCHECK(v->vkAllocateCommandBuffers(v->dev, &ai, &c->cb), "vkAllocateCommandBuffers");
  }
  c->used = 0;
  DML_RETURN_IF_ERROR(record(v, e, b, end, c->cb));
  memcpy(c->sym, e->sym, e->n_symbols * sizeof(int64_t));
  c->seg = seg;
  c->skip_in = skip_in(e);
  c->lazy = e->outputs_lazy;
  c->used = 1;
  *out = c->cb;
  return DML_OK;
}

/* dml_rt_gpu_run_t.run_segment: the command buffer of segment `seg`
 * ([b, end)) submitted and waited for, with the kernels' times from the
 * timestamp queries (-1 without them). */
static dml_status_t vk_segment(void *state, const dml_rt_exec_t *e, uint32_t seg,
                               uint32_t b, uint32_t end) {
  vk_session_t *v = (vk_session_t *)state;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  DML_RETURN_IF_ERROR(command_for(v, e, seg, b, end, &cb));
  DML_RETURN_IF_ERROR(submit_wait(v, cb));
  if (v->queries) {
    uint64_t *ts = v->ts;
    VkResult r = v->vkGetQueryPoolResults(v->dev, v->queries, b, end - b + 1,
                                          (end - b + 1) * sizeof(uint64_t), ts + b,
                                          sizeof(uint64_t), VK_QUERY_RESULT_64_BIT);
    for (uint32_t k = b; k < end; k++)
      v->kernel_ms[k] = r == VK_SUCCESS && ts[k + 1] >= ts[k]
                            ? (double)(ts[k + 1] - ts[k]) * v->ts_period_ns / 1e6
                            : -1.0;
  } else {
    for (uint32_t k = b; k < end; k++) v->kernel_ms[k] = -1.0;
  }
  return DML_OK;
}

/* The copies of the inputs of e bound on the device (dml_rt_exec_t.dev_in)
 * into the arena, in one submission, waited for. */
static dml_status_t device_inputs(vk_session_t *v, const dml_rt_exec_t *e) {
  VkBuffer src[64], dst[64];
  VkBufferCopy c[64];
  uint32_t n = 0;
  for (uint32_t i = 0; e->dev_in && i < v->plan.n_inputs && i < 64; i++) {
    const vk_buf_t *b = (const vk_buf_t *)e->dev_in[i];
    int64_t nb = b ? dml_rt_gpu_io_bytes(e, v->plan.inputs[i].value) : 0;
    if (nb <= 0) continue;
    /* already in place (the previous run's value: rt_backend.h arena_buffer) */
    if (b == &v->arena && e->dev_in_off[i] == v->plan.inputs[i].arena_offset) continue;
    if (e->dev_in_off[i] + (uint64_t)nb > b->size)
      return dml_status_make(DML_STATUS_OUT_OF_RANGE, OP,
                             "input %u: %" PRId64 " bytes at %" PRIu64
                             " exceed its tensor's buffer (%" PRIu64 " bytes)",
                             i, nb, e->dev_in_off[i], (uint64_t)b->size);
    src[n] = b->buf;
    dst[n] = v->arena.buf;
    VkBufferCopy r = {e->dev_in_off[i], v->plan.inputs[i].arena_offset, (VkDeviceSize)nb};
    c[n++] = r;
  }
  return copies_wait(v, n, src, dst, c);
}

/* rt_backend.h uses_device: the eager device's VkDevice is the session's. */
static int vk_uses_device(void *state, void *dev) {
  return dev && ((vk_session_t *)dev)->dev == ((vk_session_t *)state)->dev;
}

/* Outputs [first, first + count) from the device arena to the staging
 * (one submission, waited for), then to e->arena. */
static dml_status_t read_some(vk_session_t *v, const dml_rt_exec_t *e, uint32_t first,
                              uint32_t count) {
  VkBuffer *src = (VkBuffer *)malloc((count + 1) * sizeof(VkBuffer));
  VkBuffer *dst = (VkBuffer *)malloc((count + 1) * sizeof(VkBuffer));
  VkBufferCopy *c = (VkBufferCopy *)malloc((count + 1) * sizeof(VkBufferCopy));
  uint32_t n = 0;
  for (uint32_t i = first; src && dst && c && i < first + count; i++) {
    const dml_rt_io_region_t *x = &v->plan.outputs[i];
    int64_t nb = dml_rt_gpu_io_bytes(e, x->value);
    if (nb <= 0) continue;
    src[n] = v->arena.buf;
    dst[n] = v->staging.buf;
    VkBufferCopy r = {x->arena_offset, x->staging_offset, (VkDeviceSize)nb};
    c[n++] = r;
  }
  dml_status_t s = !src || !dst || !c ? dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP,
                                                        "out of memory")
                                      : copies_wait(v, n, src, dst, c);
  free(src);
  free(dst);
  free(c);
  if (!s)
    dml_rt_gpu_staging_copy(v->plan.outputs + first, count, (uint8_t *)v->staging.map, e,
                            0);
  return s;
}

/* rt_backend.h read_outputs: every output (read_some). */
static dml_status_t vk_read_outputs(void *state, const dml_rt_exec_t *e) {
  vk_session_t *v = (vk_session_t *)state;
  return read_some(v, e, 0, v->plan.n_outputs);
}

/* rt_backend.h read_output: output i alone (read_some). */
static dml_status_t vk_read_output(void *state, const dml_rt_exec_t *e, uint32_t i) {
  vk_session_t *v = (vk_session_t *)state;
  if (i >= v->plan.n_outputs)
    return dml_status_make(DML_STATUS_OUT_OF_RANGE, OP, "output %u of %u", i,
                           v->plan.n_outputs);
  return read_some(v, e, i, 1);
}

/* rt_backend.h arena_buffer: the device arena's vk_buf_t. */
static void *vk_arena_buffer(void *state) {
  return &((vk_session_t *)state)->arena;
}

/* rt_backend.h copy_output: output i from the device arena into buffer
 * dst (a tensor's, on this VkDevice) at dst_off, waited for. */
static dml_status_t vk_copy_output(void *state, const dml_rt_exec_t *e, uint32_t i,
                                   void *dst, uint64_t dst_off) {
  vk_session_t *v = (vk_session_t *)state;
  const vk_buf_t *b = (const vk_buf_t *)dst;
  if (i >= v->plan.n_outputs || !b)
    return dml_status_make(DML_STATUS_OUT_OF_RANGE, OP, "output %u of %u", i,
                           v->plan.n_outputs);
  int64_t nb = dml_rt_gpu_io_bytes(e, v->plan.outputs[i].value);
  if (nb <= 0) return DML_OK;
  if (dst_off + (uint64_t)nb > b->size)
    return dml_status_make(DML_STATUS_OUT_OF_RANGE, OP,
                           "output %u: %" PRId64 " bytes at %" PRIu64
                           " exceed the tensor's buffer (%" PRIu64 " bytes)",
                           i, nb, dst_off, (uint64_t)b->size);
  return copy_wait(v, v->arena.buf, v->plan.outputs[i].arena_offset, b->buf, dst_off,
                   (uint64_t)nb);
}

/* rt_backend.h memory: the arena, the weights when this session owns
 * them, the staging; whether it created the VkDevice. */
static void vk_memory(void *state, dml_rt_device_memory_t *out) {
  const vk_session_t *v = (const vk_session_t *)state;
  memset(out, 0, sizeof *out);
  out->arena_bytes = (uint64_t)v->arena.size;
  out->weights_bytes = v->owner == v ? (uint64_t)v->weights.size : 0;
  out->staging_bytes = (uint64_t)v->staging.size;
  out->opened_device = v->creator == v;
}

/* Runs the plan segment by segment (dml_rt_gpu_run_segments), each
 * segment through vk_segment. */
static dml_status_t vk_run(void *state, const dml_rt_exec_t *e) {
  vk_session_t *v = (vk_session_t *)state;
  v->ran = 0;
  DML_RETURN_IF_ERROR(set_timeout(v, e));
  DML_RETURN_IF_ERROR(device_inputs(v, e));
  const dml_rt_gpu_run_t g = {v->kf,        &v->plan,   (uint8_t *)v->staging.map,
                              v->kernel_ms, vk_segment, v};
  DML_RETURN_IF_ERROR(dml_rt_gpu_run_segments(OP, &g, e));
  memcpy(v->last_sym, e->sym, e->n_symbols * sizeof(int64_t));
  v->ran = 1;
  return DML_OK;
}

/* rt_backend.h run_kernel: the host arena in through a host-visible buffer
 * of the device arena's size (made on first use, kept), kernel k alone,
 * the arena back out, in one submission. */
static dml_status_t vk_run_kernel(void *state, const dml_rt_exec_t *e, uint32_t k) {
  vk_session_t *v = (vk_session_t *)state;
  DML_RETURN_IF_ERROR(dml_rt_gpu_check_kernel(OP, v->kf, k));
  DML_RETURN_IF_ERROR(set_timeout(v, e));
  if (!v->check_buf.buf)
    DML_RETURN_IF_ERROR(
        buf_create(v, v->plan.dims.arena_bytes,
                   VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, 1,
                   "the arena's staging (dmlc check)", &v->check_buf));
  if (!v->check_cb) {
    VkCommandBufferAllocateInfo ai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      NULL, v->cmd_pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      1};
    VKCHECK(v->vkAllocateCommandBuffers(v->dev, &ai, &v->check_cb),
            "vkAllocateCommandBuffers");
  }
  uint8_t *st = (uint8_t *)v->check_buf.map;
  memset(st, 0, (size_t)v->plan.dims.arena_bytes);
  memcpy(st, e->arena, (size_t)e->fn->arena_bytes);
  if (v->plan.rng.used) dml_rt_gpu_rng_words(e, st + v->plan.rng.arena_offset);
  VkCommandBuffer cb = v->check_cb;
  VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
                                 VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL};
  VKCHECK(v->vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
  VkBufferCopy c = {0, 0, v->plan.dims.arena_bytes};
  barrier(v, cb, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
          VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT |
              VK_ACCESS_SHADER_READ_BIT,
          VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
  v->vkCmdCopyBuffer(cb, v->check_buf.buf, v->arena.buf, 1, &c);
  barrier(v, cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  v->vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, v->layout, 0, 1, &v->set,
                             0, NULL);
  uint32_t pcv[DML_KPKG_MAX_SYMBOLS] = {0};
  for (uint32_t i = 0; i < e->n_symbols && i < DML_KPKG_MAX_SYMBOLS; i++)
    pcv[i] = (uint32_t)e->sym[i];
  v->vkCmdPushConstants(cb, v->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                        4 * (e->n_symbols ? e->n_symbols : 1), pcv);
  dml_status_t s = dispatch(v, e, cb, k);
  barrier(v, cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
          VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
          VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
  v->vkCmdCopyBuffer(cb, v->arena.buf, v->check_buf.buf, 1, &c);
  barrier(v, cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
          VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  VKCHECK(v->vkEndCommandBuffer(cb), "vkEndCommandBuffer");
  if (s) return s;
  DML_RETURN_IF_ERROR(submit_wait(v, cb));
  memcpy(e->arena, st, (size_t)e->fn->arena_bytes);
  return DML_OK;
}

static dml_status_t vk_read_globals(void *state, uint8_t *dst) {
  vk_session_t *v = (vk_session_t *)state;
  return transfer_weights(v, NULL, dst, v->weights_size);
}

static dml_status_t vk_write_globals(void *state, const uint8_t *src) {
  vk_session_t *v = (vk_session_t *)state;
  return transfer_weights(v, src, NULL, v->weights_size);
}

static uint32_t vk_num_kernels(void *state) {
  return ((vk_session_t *)state)->kf->n_kernels;
}

static dml_status_t vk_kernel_info(void *state, uint32_t i, dml_rt_kernel_info_t *out) {
  vk_session_t *v = (vk_session_t *)state;
  return dml_rt_kernel_info_fill(OP, v->kf, i, v->ran, v->kernel_ms, v->last_sym,
                                 v->n_symbols, out);
}

static const char *vk_device_name(void *state) {
  return ((vk_session_t *)state)->desc;
}

static const dml_rt_backend_t k_vulkan = {
    "vulkan",         vk_open,        vk_run,          vk_read_globals,
    vk_write_globals, vk_num_kernels, vk_kernel_info,  vk_device_name,
    vk_close,         vk_run_kernel,  vk_uses_device,  vk_read_outputs,
    vk_copy_output,   vk_memory,      vk_arena_buffer, vk_read_output};

const dml_rt_backend_t *dml_rt_vulkan_backend(void) {
  return &k_vulkan;
}

/* ---- device memory for eager tensors (rt_backend.h dml_rt_devmem_t) ----
 * A VkDevice opened without a package: device-local buffers, filled and
 * read through a host-visible staging buffer made per transfer, and copies
 * between buffers; each transfer is recorded, submitted and waited for
 * (vkCmdCopyBuffer between a barrier after every earlier command of the
 * queue and one before host reads and later shaders). */

static dml_status_t dm_open(const char *device, void **out) {
  vk_loader_t *L = NULL;
  DML_RETURN_IF_ERROR(loader_get(&L));
  vk_session_t *v = (vk_session_t *)calloc(1, sizeof *v);
  if (!v) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  v->owner = v;
  atomic_init(&v->refs, 1);
  v->L = L;
  dml_status_t s = pick_device(L, device, &v->phys_index);
  if (!s) s = set_timeout(v, NULL); /* the default, for the uploads of open */
  if (!s) {
    dev_own(v);
    s = create_device(v);
  }
  if (!s) s = make_pool_fence(v);
  if (s) {
    vk_close(v);
    return s;
  }
  *out = v;
  return DML_OK;
}

static const char *dm_name(void *dev) {
  return ((vk_session_t *)dev)->desc;
}

static dml_status_t dm_alloc(void *dev, uint64_t bytes, void **out) {
  vk_session_t *v = (vk_session_t *)dev;
  vk_buf_t *b = (vk_buf_t *)calloc(1, sizeof *b);
  if (!b) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  dml_status_t s =
      buf_create(v, bytes,
                 VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                     VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                 0, "a tensor", b);
  if (s) {
    buf_destroy(v, b);
    free(b);
    return s;
  }
  *out = b;
  return DML_OK;
}

static void dm_free(void *dev, void *buf) {
  if (!buf) return;
  buf_destroy((vk_session_t *)dev, (vk_buf_t *)buf);
  free(buf);
}

/* Copies `bytes` bytes from src at soff to dst at doff on the device, and
 * waits. */
static dml_status_t dm_xfer(vk_session_t *v, const vk_buf_t *src, uint64_t soff,
                            const vk_buf_t *dst, uint64_t doff, uint64_t bytes) {
  if (!bytes) return DML_OK;
  if (soff + bytes > src->size || doff + bytes > dst->size)
    return dml_status_make(DML_STATUS_OUT_OF_RANGE, OP,
                           "copy of %" PRIu64 " bytes at %" PRIu64 " -> %" PRIu64
                           " exceeds a buffer (%" PRIu64 ", %" PRIu64 " bytes)",
                           bytes, soff, doff, (uint64_t)src->size, (uint64_t)dst->size);
  return copy_wait(v, src->buf, soff, dst->buf, doff, bytes);
}

static dml_status_t dm_staged(vk_session_t *v, vk_buf_t *b, uint64_t off, const void *src,
                              void *dst, uint64_t bytes) {
  if (!bytes) return DML_OK;
  vk_buf_t tmp = {0};
  dml_status_t s = buf_create(
      v, bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, 1,
      "a tensor's staging", &tmp);
  if (!s && src) {
    memcpy(tmp.map, src, (size_t)bytes);
    s = dm_xfer(v, &tmp, 0, b, off, bytes);
  } else if (!s && dst) {
    s = dm_xfer(v, b, off, &tmp, 0, bytes);
    if (!s) memcpy(dst, tmp.map, (size_t)bytes);
  }
  buf_destroy(v, &tmp);
  return s;
}

static dml_status_t dm_write(void *dev, void *buf, uint64_t off, const void *src,
                             uint64_t bytes) {
  return dm_staged((vk_session_t *)dev, (vk_buf_t *)buf, off, src, NULL, bytes);
}

static dml_status_t dm_read(void *dev, void *buf, uint64_t off, void *dst,
                            uint64_t bytes) {
  return dm_staged((vk_session_t *)dev, (vk_buf_t *)buf, off, NULL, dst, bytes);
}

static dml_status_t dm_copy(void *dev, void *src, uint64_t soff, void *dst, uint64_t doff,
                            uint64_t bytes) {
  return dm_xfer((vk_session_t *)dev, (vk_buf_t *)src, soff, (vk_buf_t *)dst, doff,
                 bytes);
}

/* ---- the eager kernel library (dml_eager_lib.h) ----
 * Its pipelines are made on a kernel's first use and kept until the device
 * closes (v->pipelines, dml_eager_spirv_count entries); one descriptor set
 * (binding 0 the output, binding 1 the input or the temporary input
 * buffer) is rewritten per call, which is safe because each call waits for
 * the device. */

static dml_status_t dm_eager_layout(vk_session_t *v) {
  if (v->layout) return DML_OK;
  DML_RETURN_IF_ERROR(make_layout(v, DML_EAGER_BINDINGS, 4 * DML_EAGER_PC_MAX));
  VkCommandBufferAllocateInfo ai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL,
                                    v->cmd_pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
  VKCHECK(v->vkAllocateCommandBuffers(v->dev, &ai, &v->check_cb),
          "vkAllocateCommandBuffers");
  v->pipelines = (VkPipeline *)calloc(dml_eager_spirv_count ? dml_eager_spirv_count : 1,
                                      sizeof(VkPipeline));
  if (!v->pipelines)
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
  return DML_OK;
}

static dml_status_t dm_eager_pipeline(vk_session_t *v, uint32_t k) {
  if (v->pipelines[k]) return DML_OK;
  const dml_eager_kernel_t *E = &dml_eager_spirv[k];
  spv_needs_t need;
  memset(&need, 0, sizeof need);
  spirv_words_needs((const uint8_t *)E->words, E->n_words, &need);
  unsigned miss = spv_bits(&need) & ~v->eager_feats;
  if (miss)
    return dml_status_make(DML_STATUS_UNIMPLEMENTED, OP,
                           "eager kernel %s of %s needs the Vulkan feature %s, which %s "
                           "lacks",
                           dml_op_name(E->op), dml_dtype_name((dml_dtype_t)E->dtype),
                           miss & 1u   ? "shaderInt64"
                           : miss & 2u ? "storageBuffer8BitAccess"
                           : miss & 4u ? "shaderFloat64"
                           : miss & 8u ? "shaderInt16"
                                       : "storageBuffer16BitAccess",
                           v->desc);
  size_t nw = E->n_words;
  uint32_t *code = NULL;
  if (v->szinp_strip) {
    code = (uint32_t *)malloc(nw * 4);
    if (!code) return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, OP, "out of memory");
    memcpy(code, E->words, nw * 4);
    spirv_strip_szinp(code, &nw, v->szinp_strip);
  }
  VkShaderModuleCreateInfo sm = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, NULL, 0,
                                 nw * 4, code ? code : E->words};
  VkShaderModule mod = VK_NULL_HANDLE;
  VkResult r = v->vkCreateShaderModule(v->dev, &sm, NULL, &mod);
  free(code);
  if (r != VK_SUCCESS)
    return dml_status_detail(vkfail("vkCreateShaderModule", r), "eager kernel %s",
                             dml_op_name(E->op));
  VkComputePipelineCreateInfo ci = {
      VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      NULL,
      0,
      {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0,
       VK_SHADER_STAGE_COMPUTE_BIT, mod, "main", NULL},
      v->layout,
      VK_NULL_HANDLE,
      -1};
  r = v->vkCreateComputePipelines(v->dev, VK_NULL_HANDLE, 1, &ci, NULL, &v->pipelines[k]);
  v->vkDestroyShaderModule(v->dev, mod, NULL);
  if (r != VK_SUCCESS)
    return dml_status_detail(vkfail("vkCreateComputePipelines", r), "eager kernel %s",
                             dml_op_name(E->op));
  return DML_OK;
}

/* Records and runs kernel k with bind[i] at binding i: first the copies
 * into a temporary buffer of pack_bytes (then bound at binding 1), and
 * waits for the device. */
static dml_status_t dm_dispatch(vk_session_t *v, uint32_t k,
                                const vk_buf_t *const bind_in[DML_EAGER_BINDINGS],
                                const dml_rt_devmem_copy_t *copies, uint32_t n_copies,
                                uint64_t pack_bytes, const uint32_t *pc, uint32_t n_pc,
                                uint32_t groups) {
  if (k >= dml_eager_spirv_count || n_pc > DML_EAGER_PC_MAX)
    return dml_status_make(DML_STATUS_OUT_OF_RANGE, OP,
                           "eager kernel %u of %u (%u push-constant words)", k,
                           dml_eager_spirv_count, n_pc);
  const VkPhysicalDeviceLimits *lim = &v->L->props[v->phys_index].limits;
  if (groups > lim->maxComputeWorkGroupCount[0])
    return dml_status_make(DML_STATUS_OUT_OF_RANGE, OP,
                           "%u workgroups exceed the %u of %s", groups,
                           lim->maxComputeWorkGroupCount[0], v->desc);
  DML_RETURN_IF_ERROR(dm_eager_layout(v));
  DML_RETURN_IF_ERROR(dm_eager_pipeline(v, k));
  vk_buf_t pack = {0};
  const vk_buf_t *bind[DML_EAGER_BINDINGS];
  memcpy(bind, bind_in, sizeof bind);
  if (n_copies) {
    for (uint32_t i = 0; i < n_copies; i++) {
      const vk_buf_t *b = (const vk_buf_t *)copies[i].src;
      if (copies[i].src_off + copies[i].bytes > b->size ||
          copies[i].dst_off + copies[i].bytes > pack_bytes)
        return dml_status_make(DML_STATUS_OUT_OF_RANGE, OP,
                               "eager input copy %u exceeds a buffer", i);
    }
    DML_RETURN_IF_ERROR(
        buf_create(v, pack_bytes,
                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                   0, "an eager op's inputs", &pack));
    bind[1] = &pack;
  }
  VkDescriptorBufferInfo bi[DML_EAGER_BINDINGS];
  VkWriteDescriptorSet w[DML_EAGER_BINDINGS];
  for (uint32_t i = 0; i < DML_EAGER_BINDINGS; i++) {
    VkDescriptorBufferInfo d = {bind[i]->buf, 0, VK_WHOLE_SIZE};
    bi[i] = d;
    VkWriteDescriptorSet x = {
        VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, v->set, i,   0, 1,
        VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,      NULL, &bi[i], NULL};
    w[i] = x;
  }
  v->vkUpdateDescriptorSets(v->dev, DML_EAGER_BINDINGS, w, 0, NULL);
  VkCommandBuffer cb = v->check_cb;
  VkCommandBufferBeginInfo cbi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
                                  VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL};
  v->vkBeginCommandBuffer(cb, &cbi);
  /* after every earlier command and host write of the queue */
  barrier(v, cb,
          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
              VK_PIPELINE_STAGE_HOST_BIT,
          VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
              VK_ACCESS_HOST_WRITE_BIT,
          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
              VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
  for (uint32_t i = 0; i < n_copies; i++) {
    if (!copies[i].bytes) continue;
    VkBufferCopy c = {copies[i].src_off, copies[i].dst_off, copies[i].bytes};
    v->vkCmdCopyBuffer(cb, ((const vk_buf_t *)copies[i].src)->buf, pack.buf, 1, &c);
  }
  if (n_copies)
    barrier(v, cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
  v->vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, v->pipelines[k]);
  v->vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, v->layout, 0, 1, &v->set,
                             0, NULL);
  v->vkCmdPushConstants(cb, v->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4 * n_pc, pc);
  if (groups) v->vkCmdDispatch(cb, groups, 1, 1);
  /* before host reads, transfers and later shaders */
  barrier(v, cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
          VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT |
              VK_PIPELINE_STAGE_TRANSFER_BIT,
          VK_ACCESS_HOST_READ_BIT | VK_ACCESS_SHADER_READ_BIT |
              VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT);
  VkResult r = v->vkEndCommandBuffer(cb);
  dml_status_t s = r != VK_SUCCESS ? vkfail("vkEndCommandBuffer", r) : submit_wait(v, cb);
  buf_destroy(v, &pack);
  return s;
}

static dml_status_t dm_run_kernel(void *dev, uint32_t k, void *out, void *in,
                                  const dml_rt_devmem_copy_t *copies, uint32_t n_copies,
                                  uint64_t pack_bytes, const uint32_t *pc, uint32_t n_pc,
                                  uint32_t groups) {
  const vk_buf_t *o = (const vk_buf_t *)out, *x = in ? (const vk_buf_t *)in : o;
  const vk_buf_t *bind[DML_EAGER_BINDINGS] = {o, x, o, o};
  return dm_dispatch((vk_session_t *)dev, k, bind, copies, n_copies, pack_bytes, pc, n_pc,
                     groups);
}

static dml_status_t dm_run_kernel_bufs(void *dev, uint32_t k, void *const *bufs,
                                       uint32_t n_bufs, const uint32_t *pc, uint32_t n_pc,
                                       uint32_t groups) {
  if (!n_bufs || n_bufs > DML_EAGER_BINDINGS || !bufs[0])
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, OP,
                           "eager kernel %u: %u buffers (1 to %u, an output first)", k,
                           n_bufs, DML_EAGER_BINDINGS);
  const vk_buf_t *bind[DML_EAGER_BINDINGS];
  for (uint32_t i = 0; i < DML_EAGER_BINDINGS; i++)
    bind[i] = (const vk_buf_t *)(i < n_bufs && bufs[i] ? bufs[i] : bufs[0]);
  return dm_dispatch((vk_session_t *)dev, k, bind, NULL, 0, 0, pc, n_pc, groups);
}

/* Destroys the eager pipelines, then the device (after every buffer is
 * freed). */
static void dm_close(void *dev) {
  vk_session_t *v = (vk_session_t *)dev;
  if (v && v->dev && v->pipelines) {
    v->vkDeviceWaitIdle(v->dev);
    for (uint32_t i = 0; i < dml_eager_spirv_count; i++)
      if (v->pipelines[i]) v->vkDestroyPipeline(v->dev, v->pipelines[i], NULL);
  }
  vk_close(dev);
}

static const dml_rt_devmem_t k_vulkan_devmem = {
    "vulkan", dm_open, dm_close, dm_name,       dm_alloc,          dm_free,
    dm_write, dm_read, dm_copy,  dm_run_kernel, dm_run_kernel_bufs};

const dml_rt_devmem_t *dml_rt_vulkan_devmem(void) {
  return &k_vulkan_devmem;
}
