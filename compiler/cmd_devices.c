/* cmd_devices.c — `dmlc devices`: the devices sessions can run on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_rt.h"
#include "dmlc_cmds.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: dmlc devices\n\n"
          "Lists the devices `dmlc run --device` and `dmlc bench --device` take: cpu,\n"
          "and each Vulkan device (libvulkan.so.1 opened at run time; the variable\n"
          "DMLC_VULKAN_LOADER names another loader) with its name, kind, device-local\n"
          "memory and Vulkan version. `vulkan` alone means the device marked default:\n"
          "a discrete GPU, else an integrated one, else a virtual one, else a CPU\n"
          "implementation such as Mesa's lavapipe. Then each CUDA device (libcuda.so.1\n"
          "opened at run time; DMLC_CUDA_DRIVER names another driver file) with its\n"
          "name, compute capability and memory; `cuda` alone means cuda:0.\n\n"
          "  -h, --help   this text\n");
}

int dmlc_cmd_devices(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      return 0;
    }
    return dmlc_usage_error("devices", "unknown argument '%s'", argv[i]);
  }
  printf("cpu          the reference CPU kernels (always available)\n");
  dml_rt_device_info_t d[16];
  uint32_t n = 0;
  dml_status_t s = dml_rt_vulkan_devices(d, 16, &n);
  if (s) {
    char *msg = dml_status_format(s);
    printf("vulkan       not available: %s\n", msg ? msg : "?");
    free(msg);
    dml_status_free(s);
  } else {
    for (uint32_t i = 0; i < n && i < 16; i++)
      printf("%-12s %s (%s), %.1f GiB device-local memory, Vulkan %u.%u.%u%s\n", d[i].id,
             d[i].name, d[i].kind, (double)d[i].memory_bytes / (1024.0 * 1024.0 * 1024.0),
             d[i].api_major, d[i].api_minor, d[i].api_patch,
             d[i].is_default ? "  [default for 'vulkan']" : "");
  }
  s = dml_rt_cuda_devices(d, 16, &n);
  if (s) {
    char *msg = dml_status_format(s);
    printf("cuda         not available: %s\n", msg ? msg : "?");
    free(msg);
    dml_status_free(s);
    return 0;
  }
  for (uint32_t i = 0; i < n && i < 16; i++)
    printf("%-12s %s, compute capability %u.%u, %.1f GiB memory, CUDA driver %u.%u%s\n",
           d[i].id, d[i].name, d[i].api_major, d[i].api_minor,
           (double)d[i].memory_bytes / (1024.0 * 1024.0 * 1024.0), d[i].api_patch / 1000,
           d[i].api_patch % 1000 / 10, d[i].is_default ? "  [default for 'cuda']" : "");
  return 0;
}
