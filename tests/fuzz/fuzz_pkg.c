/* fuzz_pkg.c — libFuzzer target for the package loader (untrusted bytes).
 *
 * Input byte 0 picks the mode:
 *   even: the input is a whole .dmlpkg file (a real package starts with 'D');
 *   odd:  the rest is a "graph" section, wrapped into a package with valid
 *         CRCs and a "weights" section of 64 << ((byte0 >> 1) & 15) bytes
 *         (at most 1 MiB), so the fuzzer reaches the graph decoder without
 *         having to forge checksums.
 *   2:    the rest is a little-endian u32 n, n bytes of a "graph" section and
 *         the bytes of a "kernels.spirv" section, wrapped likewise (weights
 *         of 1 MiB), so the fuzzer reaches the kernel section decoder.
 *   4:    as 2, with a "kernels.cuda" section (the CUDA image container).
 *   6:    as 2, with a "strings" section (string constants, dml_pkg.h), so
 *         the fuzzer reaches the strings decoder and the string kernels.
 * Accepted packages are introspected through every accessor and, when their
 * arena is small, run on zero inputs at small symbol values. Any crash,
 * leak or sanitizer report is a bug. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dml_pkg.h"
#include "dml_rt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void exercise(dml_rt_model_t *m) {
  dml_rt_io_info_t io;
  dml_rt_value_info_t vi;
  dml_rt_node_info_t ni;
  dml_rt_section_info_t si;
  char buf[256];
  for (uint32_t i = 0; i < dml_rt_model_num_sections(m); i++)
    dml_status_free(dml_rt_model_section_info(m, i, &si));
  dml_rt_model_meta_get(m, "targets", buf, sizeof buf);
  for (uint32_t i = 0; i < dml_rt_model_num_symbols(m); i++) {
    const char *n;
    int64_t b;
    dml_status_free(dml_rt_model_symbol(m, i, &n, &b));
  }
  for (uint32_t i = 0; i < dml_rt_model_num_outputs(m); i++) {
    dml_status_free(dml_rt_model_output_info(m, i, &io));
    dml_rt_io_info_str(&io, buf, sizeof buf);
  }
  for (uint32_t k = 0; k < dml_rt_model_num_nodes(m); k++) {
    if (dml_rt_model_node_info(m, k, &ni)) continue;
    for (uint32_t j = 0; j < ni.n_inputs; j++)
      dml_status_free(dml_rt_model_node_input(m, k, j, &vi));
    for (uint32_t j = 0; j < ni.n_outputs; j++)
      dml_status_free(dml_rt_model_node_output(m, k, j, &vi));
    for (uint32_t j = 0; j < ni.n_attrs; j++) (void)dml_rt_model_node_attr(m, k, j);
  }
  if (dml_rt_model_arena_bytes(m) > (4 << 20) ||
      dml_rt_model_scratch_bytes(m) > (4 << 20))
    return;
  dml_rt_session_t *s = NULL;
  dml_status_t st = dml_rt_session_create(m, "cpu", &s);
  for (uint32_t i = 0; !st && i < dml_rt_model_num_inputs(m); i++) {
    st = dml_rt_model_input_info(m, i, &io);
    if (st) break;
    dml_tensor_t t;
    memset(&t, 0, sizeof t);
    t.dtype = io.dtype;
    t.rank = io.rank;
    for (int32_t d = 0; d < io.rank; d++)
      t.dims[d] = io.dim_symbol[d] ? io.dim_multiplier[d] *
                                         (io.dim_bound[d] > io.dim_multiplier[d] ? 2 : 1)
                                   : io.dims[d];
    size_t nb = dml_tensor_bytes(&t);
    if (nb == SIZE_MAX || nb > (1 << 20)) break;
    t.data = calloc(1, nb ? nb : 1);
    if (!t.data) break;
    st = dml_rt_session_set_input(s, i, &t);
    free(t.data);
  }
  if (!st) st = dml_rt_session_run(s);
  for (uint32_t i = 0; !st && i < dml_rt_model_num_outputs(m); i++) {
    dml_tensor_t out;
    st = dml_rt_session_get_output(s, i, &out);
  }
  dml_status_free(st);
  dml_rt_session_release(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  void *wrapped = NULL;
  const uint8_t *bytes = data;
  int kmode = size >= 5 && (data[0] == 2 || data[0] == 4 || data[0] == 6);
  if (size > 0 && ((data[0] & 1) || kmode)) {
    static uint8_t weights[1 << 20];
    if (!weights[0])
      for (size_t i = 0; i < sizeof weights; i++) weights[i] = (uint8_t)(i * 31 + 7);
    size_t wsize = kmode ? sizeof weights : (size_t)64 << ((data[0] >> 1) & 15);
    if (wsize > sizeof weights) wsize = sizeof weights;
    const uint8_t *graph = data + 1, *kern = NULL;
    size_t gsize = size - 1, ksize = 0;
    if (kmode) {
      size_t n = (size_t)data[1] | (size_t)data[2] << 8 | (size_t)data[3] << 16 |
                 (size_t)data[4] << 24;
      if (n > size - 5) return 0;
      graph = data + 5;
      gsize = n;
      kern = graph + n;
      ksize = size - 5 - n;
    }
    dml_pkg_writer_t *w = NULL;
    dml_status_t st = dml_pkg_writer_create(&w);
    if (!st) st = dml_pkg_writer_add_section(w, "meta", "producer: fuzz\n", 15, 8);
    if (!st) st = dml_pkg_writer_add_section(w, "graph", graph, gsize, 8);
    if (!st && kmode)
      st = dml_pkg_writer_add_section(w,
                                      data[0] == 6   ? "strings"
                                      : data[0] == 4 ? "kernels.cuda"
                                                     : "kernels.spirv",
                                      kern, ksize, 8);
    if (!st) st = dml_pkg_writer_add_section(w, "weights", weights, wsize, 4096);
    if (!st) st = dml_pkg_writer_finish_memory(w, &wrapped, &size);
    dml_pkg_writer_release(w);
    if (st) {
      dml_status_free(st);
      return 0;
    }
    bytes = (const uint8_t *)wrapped;
  }
  dml_rt_model_t *m = NULL;
  dml_status_t st = dml_rt_model_load_memory(bytes, size, &m);
  if (!st) exercise(m);
  dml_status_free(st);
  dml_rt_model_release(m);
  free(wrapped);
  return 0;
}
