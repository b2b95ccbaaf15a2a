/*
 * fuzz_onnx.c — libFuzzer target for the ONNX importer.
 *
 * Feeds arbitrary bytes to dml_onnx_import_memory() with no base directory
 * (so external data is refused, never read) and releases whatever comes
 * back, then reads the same bytes as an onnx.SequenceProto of tensors
 * (dml_onnx_sequence_read_memory, the conformance runner's reader). Any
 * crash, leak or sanitizer report is a bug: both treat their input as
 * untrusted.
 */
#include <stddef.h>
#include <stdint.h>

#include "dml_onnx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dml_ir_module_t *m = NULL;
  dml_onnx_import_options_t opts = {0};
  dml_status_t st = dml_onnx_import_memory(data, size, NULL, &opts, &m);
  dml_status_free(st);
  dml_ir_module_release(m);
  size_t n = 0;
  dml_tensor_t *elems = NULL;
  void **bufs = NULL;
  st = dml_onnx_sequence_read_memory(data, size, &n, &elems, &bufs);
  if (!st) dml_onnx_sequence_free(n, elems, bufs);
  dml_status_free(st);
  return 0;
}
