/* cmd_devices.c — `dmlc devices`: the devices sessions can run on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_rt.h"
#include "dmlc_cmds.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: dmlc devices [--json]\n\n"
          "Lists the devices `dmlc run --device` and `dmlc bench --device` take: cpu,\n"
          "and each Vulkan device (libvulkan.so.1 opened at run time; the variable\n"
          "DMLC_VULKAN_LOADER names another loader) with its name, kind, device-local\n"
          "memory and Vulkan version. `vulkan` alone means the device marked default:\n"
          "a discrete GPU, else an integrated one, else a virtual one, else a CPU\n"
          "implementation such as Mesa's lavapipe. Then each CUDA device (libcuda.so.1\n"
          "opened at run time; DMLC_CUDA_DRIVER names another driver file) with its\n"
          "name, compute capability and memory; `cuda` alone means cuda:0.\n\n"
          "  --json       one JSON object instead: devices [{id, backend (cpu,\n"
          "               vulkan, cuda), name, kind, memory_bytes, version (Vulkan\n"
          "               API; for CUDA the compute capability), driver (CUDA's\n"
          "               driver version), default}], and vulkan_error, cuda_error\n"
          "               (why that backend has no device; null when it has)\n"
          "  -h, --help   this text\n");
}

/* One device of `dmlc devices --json`. */
static void json_device(FILE *f, const dml_rt_device_info_t *d, const char *backend) {
  fputs(", {\"id\": ", f);
  dmlc_json_str(f, d->id);
  fprintf(f, ", \"backend\": \"%s\", \"name\": ", backend);
  dmlc_json_str(f, d->name);
  fputs(", \"kind\": ", f);
  dmlc_json_str(f, d->kind);
  fprintf(f, ", \"memory_bytes\": %llu, ", (unsigned long long)d->memory_bytes);
  if (!strcmp(backend, "cuda"))
    fprintf(f, "\"version\": \"%u.%u\", \"driver\": \"%u.%u\"", d->api_major,
            d->api_minor, d->api_patch / 1000, d->api_patch % 1000 / 10);
  else
    fprintf(f, "\"version\": \"%u.%u.%u\", \"driver\": null", d->api_major, d->api_minor,
            d->api_patch);
  fprintf(f, ", \"default\": %s}", d->is_default ? "true" : "false");
}

/* `dmlc devices --json`: the listing as one JSON object. */
static int print_json(FILE *f) {
  dml_rt_device_info_t d[16];
  uint32_t n = 0;
  char *err[2] = {NULL, NULL};
  fputs(
      "{\"devices\": [{\"id\": \"cpu\", \"backend\": \"cpu\", \"name\": \"the reference "
      "CPU kernels\", \"kind\": \"CPU\", \"memory_bytes\": null, \"version\": null, "
      "\"driver\": null, \"default\": true}",
      f);
  for (int b = 0; b < 2; b++) {
    dml_status_t s =
        b ? dml_rt_cuda_devices(d, 16, &n) : dml_rt_vulkan_devices(d, 16, &n);
    if (s) {
      err[b] = dml_status_format(s);
      dml_status_free(s);
      if (err[b] && !strncmp(err[b], "error: ", 7)) /* the reason alone */
        memmove(err[b], err[b] + 7, strlen(err[b] + 7) + 1);
      continue;
    }
    for (uint32_t i = 0; i < n && i < 16; i++)
      json_device(f, &d[i], b ? "cuda" : "vulkan");
  }
  fputs("], \"vulkan_error\": ", f);
  dmlc_json_str(f, err[0]);
  fputs(", \"cuda_error\": ", f);
  dmlc_json_str(f, err[1]);
  fputs("}\n", f);
  free(err[0]);
  free(err[1]);
  return 0;
}

int dmlc_cmd_devices(int argc, char **argv) {
  int json = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(argv[i], "--json")) {
      json = 1;
      continue;
    }
    return dmlc_usage_error("devices", "unknown argument '%s'", argv[i]);
  }
  if (json) return print_json(stdout);
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
