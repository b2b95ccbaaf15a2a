/* gpu_check_util.h — the little the runtime-only checkers of the GPU
 * machine share (dml_graphs_check: tests/cuda/graphs_check.c,
 * dml_everyop_check: tests/cuda/everyop_check.c): a monotonic clock, a
 * status as one line, a JSON string, the device's name. Runtime API only. */
#ifndef DML_GPU_CHECK_UTIL_H_
#define DML_GPU_CHECK_UTIL_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dml_rt.h"

/* Seconds of CLOCK_MONOTONIC. */
static inline double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A status's first line and its first detail, ';'-joined (frees s). */
static inline void status_text(dml_status_t s, const char *stage, char *why, size_t cap) {
  char *msg = dml_status_format(s);
  const char *m = msg ? msg : "?";
  const char *nl = strchr(m, '\n');
  const char *nl2 = nl ? strchr(nl + 1, '\n') : NULL;
  int len = nl2 ? (int)(nl2 - m) : (int)strlen(m);
  snprintf(why, cap, "%s: %.*s", stage, len, m);
  for (char *p = why; *p; p++)
    if (*p == '\n') *p = ';';
  free(msg);
  dml_status_free(s);
}

/* `s` as a JSON string into f. */
static inline void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

/* `device` ("cuda[:N]", "vulkan[:N]"; anything else is the CPU) by its
 * name as `dmlc devices` lists it, into `name`; returns 0, or 77 when it is
 * absent (`name` then says why). */
static inline int device_name(const char *device, char *name, size_t cap) {
  dml_rt_device_info_t devs[16];
  uint32_t nd = 0;
  dml_status_t s = DML_OK;
  int cuda = !strncmp(device, "cuda", 4), vk = !strncmp(device, "vulkan", 6);
  if (!cuda && !vk) {
    snprintf(name, cap, "cpu");
    return 0;
  }
  s = cuda ? dml_rt_cuda_devices(devs, 16, &nd) : dml_rt_vulkan_devices(devs, 16, &nd);
  if (s || !nd) {
    char why[512];
    if (s)
      status_text(s, "devices", why, sizeof why);
    else
      snprintf(why, sizeof why, "none listed");
    snprintf(name, cap, "%s", why);
    return 77;
  }
  const char *colon = strchr(device, ':');
  for (uint32_t i = 0; i < nd && i < 16; i++)
    if (colon ? !strcmp(devs[i].id, device) : devs[i].is_default || (cuda && i == 0)) {
      snprintf(name, cap, "%s (%s)", devs[i].name, devs[i].id);
      return 0;
    }
  snprintf(name, cap, "no device %s among the %u listed", device, nd);
  return 77;
}

#endif /* DML_GPU_CHECK_UTIL_H_ */
