/* dml_crc32.c — table-driven CRC-32 (IEEE 802.3; reflected polynomial
 * 0xEDB88320, initial and final XOR 0xFFFFFFFF), the checksum of zlib,
 * PNG and gzip. The runtime links no zlib, so it carries its own. */
#include <pthread.h>

#include "dml_pkg.h"

/* Slicing-by-4 tables, computed once per process. */
static uint32_t g_table[4][256];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void init_tables(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    g_table[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = g_table[0][i];
    for (int t = 1; t < 4; t++) {
      c = g_table[0][c & 0xffu] ^ (c >> 8);
      g_table[t][i] = c;
    }
  }
}

uint32_t dml_crc32_update(uint32_t crc, const void *data, size_t n) {
  pthread_once(&g_once, init_tables);
  const uint8_t *p = (const uint8_t *)data;
  uint32_t c = crc ^ 0xFFFFFFFFu;
  while (n >= 4) {
    c ^= (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
    c = g_table[3][c & 0xffu] ^ g_table[2][(c >> 8) & 0xffu] ^
        g_table[1][(c >> 16) & 0xffu] ^ g_table[0][c >> 24];
    p += 4;
    n -= 4;
  }
  while (n--) c = g_table[0][(c ^ *p++) & 0xffu] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t dml_crc32(const void *data, size_t n) {
  return dml_crc32_update(0, data, n);
}
