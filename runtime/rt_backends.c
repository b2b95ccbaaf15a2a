/*
 * rt_backends.c — the device backends this build of the runtime holds
 * (CMake options DMLC_WITH_VULKAN and DMLC_WITH_CUDA, docs/embedding.md
 * "Backends"), the stand-ins of those left out, and the one error for a
 * device the build lacks (sessions and eager tensors both return it).
 *
 * DML_RT_HAVE_VULKAN / DML_RT_HAVE_CUDA are defined when the backend's
 * file is compiled in; DML_RT_VULKAN_OPTED_OUT when Vulkan was left out by
 * -DDMLC_WITH_VULKAN=OFF (rather than for want of its headers).
 */
#include <string.h>

#include "dml_rt.h"
#include "rt_backend.h"

#ifdef DML_RT_HAVE_VULKAN
#define VK_DEVICES ", vulkan[:N]"
#else
#define VK_DEVICES ""
#ifdef DML_RT_VULKAN_OPTED_OUT
#define VK_WHY "configured with -DDMLC_WITH_VULKAN=OFF"
#else
#define VK_WHY "vulkan/vulkan.h was not found at build time; Debian: libvulkan-dev"
#endif
#endif
#ifdef DML_RT_HAVE_CUDA
#define CU_DEVICES ", cuda[:N]"
#else
#define CU_DEVICES ""
#define CU_WHY "configured with -DDMLC_WITH_CUDA=OFF"
#endif

const char *dml_rt_built_devices(void) {
  return "cpu" VK_DEVICES CU_DEVICES;
}

/* 1 when `device` is "kind" or "kind:..." */
static int is_kind(const char *device, const char *kind) {
  size_t n = strlen(kind);
  return !strncmp(device, kind, n) && (device[n] == 0 || device[n] == ':');
}

dml_status_t dml_rt_device_check_built(const char *op, const char *device) {
  if (!device || !strcmp(device, "cpu")) return DML_OK;
  const char *why = NULL;
  if (is_kind(device, "vulkan")) {
#ifdef DML_RT_HAVE_VULKAN
    return DML_OK;
#else
    why = "this build has no Vulkan backend (" VK_WHY ")";
#endif
  } else if (is_kind(device, "cuda")) {
#ifdef DML_RT_HAVE_CUDA
    return DML_OK;
#else
    why = "this build has no CUDA backend (" CU_WHY ")";
#endif
  }
  if (why)
    return dml_status_detail(
        dml_status_make(DML_STATUS_UNIMPLEMENTED, op,
                        "device '%s' is not available in this build", device),
        "%s; devices of this build: %s", why, dml_rt_built_devices());
  return dml_status_make(DML_STATUS_UNIMPLEMENTED, op,
                         "device '%s' is not available: no such device (devices of this "
                         "build: %s; see dmlc devices)",
                         device, dml_rt_built_devices());
}

#ifndef DML_RT_HAVE_VULKAN
const dml_rt_backend_t *dml_rt_vulkan_backend(void) {
  return NULL;
}

const dml_rt_devmem_t *dml_rt_vulkan_devmem(void) {
  return NULL;
}

dml_status_t dml_rt_vulkan_devices(dml_rt_device_info_t *out, uint32_t cap,
                                   uint32_t *out_n) {
  (void)out;
  (void)cap;
  (void)out_n;
  return dml_status_make(DML_STATUS_UNIMPLEMENTED, "rt.vulkan",
                         "this build has no Vulkan backend (" VK_WHY ")");
}
#endif

#ifndef DML_RT_HAVE_CUDA
const dml_rt_backend_t *dml_rt_cuda_backend(void) {
  return NULL;
}

const dml_rt_devmem_t *dml_rt_cuda_devmem(void) {
  return NULL;
}

dml_status_t dml_rt_cuda_devices(dml_rt_device_info_t *out, uint32_t cap,
                                 uint32_t *out_n) {
  (void)out;
  (void)cap;
  (void)out_n;
  return dml_status_make(DML_STATUS_UNIMPLEMENTED, "rt.cuda",
                         "this build has no CUDA backend (" CU_WHY ")");
}
#endif
