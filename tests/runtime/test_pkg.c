/* Tests for the .dmlpkg container, the graph section codec and CRC-32. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dml_pkg.h"
#include "dml_test.h"

/* ---- CRC-32 ---- */

static uint32_t crc_bitwise(const uint8_t *p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
  }
  return c ^ 0xFFFFFFFFu;
}

static void test_crc32_vectors(void) {
  CHECK(dml_crc32("", 0) == 0);
  CHECK(dml_crc32("a", 1) == 0xE8B7BE43u);
  CHECK(dml_crc32("abc", 3) == 0x352441C2u);
  CHECK(dml_crc32("123456789", 9) == 0xCBF43926u);
  const char *fox = "The quick brown fox jumps over the lazy dog";
  CHECK(dml_crc32(fox, strlen(fox)) == 0x414FA339u);
  /* Chaining equals one pass; slicing equals the bitwise definition at
   * every length and misalignment. */
  uint8_t buf[1031];
  uint32_t x = 12345;
  for (size_t i = 0; i < sizeof buf; i++) {
    x = x * 1103515245u + 12345u;
    buf[i] = (uint8_t)(x >> 16);
  }
  for (size_t n = 0; n < 40; n++)
    for (size_t off = 0; off < 4; off++)
      CHECK(dml_crc32(buf + off, n) == crc_bitwise(buf + off, n));
  CHECK(dml_crc32(buf, sizeof buf) == crc_bitwise(buf, sizeof buf));
  uint32_t c = dml_crc32_update(0, buf, 100);
  c = dml_crc32_update(c, buf + 100, 7);
  c = dml_crc32_update(c, buf + 107, sizeof buf - 107);
  CHECK(c == dml_crc32(buf, sizeof buf));
}

/* ---- container ---- */

static uint8_t g_weights[300];
static const char g_meta[] = "producer: dmlc 0.1.0\ntargets: cpu\n";

static void *make_pkg(size_t *out_size) {
  for (size_t i = 0; i < sizeof g_weights; i++) g_weights[i] = (uint8_t)(i * 7 + 1);
  dml_pkg_writer_t *w;
  CHECK_OK(dml_pkg_writer_create(&w));
  CHECK_OK(dml_pkg_writer_add_section(w, "meta", g_meta, strlen(g_meta), 8));
  CHECK_OK(dml_pkg_writer_add_section(w, "graph", "\1\2\3", 3, 8));
  CHECK_OK(dml_pkg_writer_add_section(w, "weights", g_weights, sizeof g_weights, 4096));
  void *bytes = NULL;
  CHECK_OK(dml_pkg_writer_finish_memory(w, &bytes, out_size));
  dml_pkg_writer_release(w);
  return bytes;
}

static void test_container_round_trip(void) {
  size_t size;
  uint8_t *b = (uint8_t *)make_pkg(&size);
  CHECK(size == 4096 + sizeof g_weights);
  CHECK(memcmp(b, "DMLPKG\0\0", 8) == 0);
  dml_pkg_t pkg;
  CHECK_OK(dml_pkg_parse(b, size, &pkg));
  CHECK(pkg.format_version == DML_PKG_FORMAT_VERSION && pkg.n_sections == 3 &&
        pkg.file_size == size);
  const dml_pkg_section_t *m = dml_pkg_find_section(&pkg, "meta");
  const dml_pkg_section_t *g = dml_pkg_find_section(&pkg, "graph");
  const dml_pkg_section_t *w = dml_pkg_find_section(&pkg, "weights");
  CHECK(m && g && w && !dml_pkg_find_section(&pkg, "kernels.ptx"));
  if (m && g && w) {
    CHECK(m->offset == DML_PKG_HEADER_REGION_BYTES(3) + 4); /* 156 -> 160 */
    CHECK(m->size == strlen(g_meta) && memcmp(m->data, g_meta, m->size) == 0);
    CHECK(g->offset % 8 == 0 && g->size == 3 && g->data[2] == 3);
    CHECK(w->offset == 4096 && w->alignment == 4096 && w->size == sizeof g_weights);
    CHECK(memcmp(w->data, g_weights, sizeof g_weights) == 0);
    CHECK(w->crc32 == dml_crc32(g_weights, sizeof g_weights));
  }
  free(b);
}

static void test_container_writer_errors(void) {
  dml_pkg_writer_t *w;
  CHECK_OK(dml_pkg_writer_create(&w));
  CHECK_ERROR(dml_pkg_writer_add_section(w, "", "x", 1, 8), DML_STATUS_INVALID_ARGUMENT,
              "1 to 15");
  CHECK_ERROR(dml_pkg_writer_add_section(w, "a-very-long-tag-name", "x", 1, 8),
              DML_STATUS_INVALID_ARGUMENT, "1 to 15");
  CHECK_ERROR(dml_pkg_writer_add_section(w, "meta", "x", 1, 12),
              DML_STATUS_INVALID_ARGUMENT, "power of two");
  CHECK_OK(dml_pkg_writer_add_section(w, "meta", "x", 1, 8));
  CHECK_ERROR(dml_pkg_writer_add_section(w, "meta", "x", 1, 8),
              DML_STATUS_INVALID_ARGUMENT, "added twice");
  dml_pkg_writer_release(w);
}

/* dml_pkg_writer_set_section: replaces an added section's bytes keeping
 * its alignment and place (the weights with kernel constant tables
 * appended, compiler/driver.c), adds a new tag, refuses NULL data. */
static void test_container_set_section(void) {
  static const uint8_t longer[100] = {9, 8, 7};
  dml_pkg_writer_t *w;
  CHECK_OK(dml_pkg_writer_create(&w));
  CHECK_OK(dml_pkg_writer_add_section(w, "meta", g_meta, strlen(g_meta), 8));
  CHECK_OK(dml_pkg_writer_add_section(w, "weights", g_weights, sizeof g_weights, 4096));
  CHECK_OK(dml_pkg_writer_add_section(w, "graph", "\1\2\3", 3, 8));
  CHECK_OK(dml_pkg_writer_set_section(w, "weights", longer, sizeof longer, 8));
  CHECK_OK(dml_pkg_writer_set_section(w, "extra", "ab", 2, 4));
  CHECK_ERROR(dml_pkg_writer_set_section(w, "graph", NULL, 3, 8),
              DML_STATUS_INVALID_ARGUMENT, "NULL data");
  void *bytes = NULL;
  size_t size = 0;
  CHECK_OK(dml_pkg_writer_finish_memory(w, &bytes, &size));
  dml_pkg_writer_release(w);
  dml_pkg_t pkg;
  CHECK_OK(dml_pkg_parse(bytes, size, &pkg));
  const dml_pkg_section_t *ws = dml_pkg_find_section(&pkg, "weights");
  const dml_pkg_section_t *ex = dml_pkg_find_section(&pkg, "extra");
  CHECK(pkg.n_sections == 4 && ws && ex);
  if (ws && ex) {
    CHECK(ws->alignment == 4096 && ws->offset % 4096 == 0 && ws->size == sizeof longer);
    CHECK(memcmp(ws->data, longer, sizeof longer) == 0);
    CHECK(ex->size == 2 && memcmp(ex->data, "ab", 2) == 0 && ex->offset > ws->offset);
    CHECK(dml_pkg_find_section(&pkg, "graph")->offset > ws->offset);
  }
  free(bytes);
}

/* Every single-byte corruption of the header and table, and every
 * truncation, is reported as an error (never a crash, never accepted). */
static void test_container_corruption(void) {
  size_t size;
  uint8_t *b = (uint8_t *)make_pkg(&size);
  size_t region = DML_PKG_HEADER_REGION_BYTES(3);
  uint8_t *c = (uint8_t *)malloc(size);
  int accepted = 0;
  for (size_t i = 0; i < region; i++) {
    for (int f = 0; f < 3; f++) {
      static const uint8_t flips[3] = {0x01, 0x80, 0xFF};
      memcpy(c, b, size);
      c[i] ^= flips[f];
      dml_pkg_t pkg;
      dml_status_t st = dml_pkg_parse(c, size, &pkg);
      if (!st) accepted++;
      dml_status_free(st);
    }
  }
  CHECK(accepted == 0);
  /* A flipped byte in each section is caught by its CRC, naming it. */
  memcpy(c, b, size);
  c[4096 + 17] ^= 0x10;
  dml_pkg_t pkg;
  CHECK_ERROR(dml_pkg_parse(c, size, &pkg), DML_STATUS_DATA_LOSS, "section 'weights'");
  memcpy(c, b, size);
  c[region + 6] ^= 0x10;
  CHECK_ERROR(dml_pkg_parse(c, size, &pkg), DML_STATUS_DATA_LOSS, "section 'meta'");
  for (size_t n = 0; n < size; n += (n < region + 64 ? 1 : 97)) {
    dml_status_t st = dml_pkg_parse(b, n, &pkg);
    CHECK(st != DML_OK);
    if (st && n >= region) CHECK(dml_status_code(st) == DML_STATUS_DATA_LOSS);
    dml_status_free(st);
  }
  CHECK_ERROR(dml_pkg_parse(b, size - 1, &pkg), DML_STATUS_DATA_LOSS, "truncated");
  CHECK_ERROR(dml_pkg_parse("GARBAGE!GARBAGE!GARBAGE!GARBAGE!GARBAGE!", 40, &pkg),
              DML_STATUS_DATA_LOSS, "bad magic");
  /* A newer version with a valid CRC is UNIMPLEMENTED, not corrupt. */
  memcpy(c, b, size);
  c[8] = 3;
  uint32_t crc = dml_crc32(c, region - 4);
  for (int k = 0; k < 4; k++) c[region - 4 + k] = (uint8_t)(crc >> (8 * k));
  CHECK_ERROR(dml_pkg_parse(c, size, &pkg), DML_STATUS_UNIMPLEMENTED, "version 3");
  free(c);
  free(b);
}

static void test_container_file(void) {
  char path[256];
  snprintf(path, sizeof path, "/tmp/dml_test_pkg_%ld.dmlpkg", (long)getpid());
  dml_pkg_writer_t *w;
  CHECK_OK(dml_pkg_writer_create(&w));
  CHECK_OK(dml_pkg_writer_add_section(w, "weights", g_weights, sizeof g_weights, 4096));
  CHECK_OK(dml_pkg_writer_finish_file(w, path));
  dml_pkg_writer_release(w);
  dml_pkg_file_t f;
  CHECK_OK(dml_pkg_file_open(path, &f));
  CHECK(f.size == 4096 + sizeof g_weights && f.mapped == 1);
  CHECK(((uintptr_t)f.data & 4095) == 0);
  dml_pkg_t pkg;
  CHECK_OK(dml_pkg_parse(f.data, f.size, &pkg));
  dml_pkg_file_close(&f);
  /* A failed write (directory missing) leaves nothing behind and never
   * touches an existing file. */
  CHECK_OK(dml_pkg_writer_create(&w));
  CHECK_ERROR(dml_pkg_writer_finish_file(w, "/nonexistent-dir/x.dmlpkg"),
              DML_STATUS_NOT_FOUND, "/nonexistent-dir/x.dmlpkg.tmp.");
  /* Overwriting is atomic: the new file replaces the old one whole. */
  CHECK_OK(dml_pkg_writer_add_section(w, "meta", g_meta, strlen(g_meta), 8));
  CHECK_OK(dml_pkg_writer_finish_file(w, path));
  dml_pkg_writer_release(w);
  CHECK_OK(dml_pkg_file_open(path, &f));
  CHECK_OK(dml_pkg_parse(f.data, f.size, &pkg));
  CHECK(pkg.n_sections == 1 && strcmp(pkg.sections[0].tag, "meta") == 0);
  dml_pkg_file_close(&f);
  char tmp[300];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  struct stat sb;
  CHECK(stat(tmp, &sb) != 0);
  unlink(path);
  CHECK_ERROR(dml_pkg_file_open(path, &f), DML_STATUS_NOT_FOUND, "cannot open");
}

/* ---- graph section ---- */

/* forward(x: f32[batch,4]) -> z: Relu(Gemm(x, W, b)) */
static const uint32_t k_gemm_in[3] = {0, 1, 2}, k_gemm_out[1] = {3};
static const uint32_t k_relu_in[1] = {3}, k_relu_out[1] = {4};
static const uint32_t k_fn_in[1] = {0}, k_fn_out[1] = {4};
static const int64_t k_ints[3] = {1, -2, 3};
static const double k_floats[2] = {0.5, -1.25};
static const char *const k_strs[2] = {"a", "bc"};
static const int32_t k_tensor_data[6] = {1, 2, 3, 4, 5, 6};

static dml_pkg_symbol_t g_syms[1] = {
    {"batch", 64, DML_PKG_SYMBOL_INPUT, 0, 0, 0, 0, {-1, -1}, 1, 0, 1}};
static dml_pkg_value_t g_vals[5];
static dml_attr_t g_attrs[7];
static dml_pkg_node_t g_nodes[2];
static dml_pkg_function_t g_fn;
static dml_pkg_graph_t g_graph;

static dml_type_t ty(int32_t rank, const int64_t *v, const int32_t *s) {
  dml_type_t t;
  memset(&t, 0, sizeof t);
  t.dtype = DML_DTYPE_F32;
  t.rank = rank;
  for (int i = 0; i < rank; i++) {
    t.dims[i].value = v[i];
    t.dims[i].sym = s[i];
  }
  return t;
}

static void build_graph(void) {
  static const int64_t xv[2] = {1, 4}, wv[2] = {4, 3}, bv[1] = {3}, yv[2] = {1, 3};
  static const int32_t xs[2] = {0, -1}, ws[2] = {-1, -1}, bs[1] = {-1};
  memset(g_vals, 0, sizeof g_vals);
  g_vals[0] = (dml_pkg_value_t){"x", ty(2, xv, xs), DML_PKG_STORAGE_INPUT, 0, 0, 1024};
  g_vals[1] = (dml_pkg_value_t){
      "W", ty(2, wv, ws), DML_PKG_STORAGE_CONST, DML_PKG_VALUE_PARAM, 0, 48};
  g_vals[2] = (dml_pkg_value_t){
      "b", ty(1, bv, bs), DML_PKG_STORAGE_CONST, DML_PKG_VALUE_PARAM, 64, 12};
  g_vals[3] = (dml_pkg_value_t){"y", ty(2, yv, xs), DML_PKG_STORAGE_ARENA, 0, 1024, 768};
  g_vals[4] = (dml_pkg_value_t){"z", ty(2, yv, xs), DML_PKG_STORAGE_ARENA, 0, 1792, 768};
  memset(g_attrs, 0, sizeof g_attrs);
  g_attrs[0].name = "alpha", g_attrs[0].kind = DML_ATTR_FLOAT, g_attrs[0].f = 1.0;
  g_attrs[1].name = "transB", g_attrs[1].kind = DML_ATTR_INT, g_attrs[1].i = 0;
  g_attrs[2].name = "s", g_attrs[2].kind = DML_ATTR_STRING, g_attrs[2].s = "hello";
  g_attrs[3].name = "is", g_attrs[3].kind = DML_ATTR_INTS, g_attrs[3].n = 3,
  g_attrs[3].ints = k_ints;
  g_attrs[4].name = "fs", g_attrs[4].kind = DML_ATTR_FLOATS, g_attrs[4].n = 2,
  g_attrs[4].floats = k_floats;
  g_attrs[5].name = "ss", g_attrs[5].kind = DML_ATTR_STRINGS, g_attrs[5].n = 2,
  g_attrs[5].strings = k_strs;
  g_attrs[6].name = "t", g_attrs[6].kind = DML_ATTR_TENSOR;
  g_attrs[6].tensor = (dml_tensor_t){DML_DTYPE_I32, 2, {2, 3}, (void *)k_tensor_data};
  g_nodes[0] = (dml_pkg_node_t){DML_OP_INVALID, "Gemm", "fc",   3, k_gemm_in, 1,
                                k_gemm_out,     7,      g_attrs};
  g_nodes[1] =
      (dml_pkg_node_t){DML_OP_INVALID, "Relu", "", 1, k_relu_in, 1, k_relu_out, 0, NULL};
  g_fn = (dml_pkg_function_t){"forward", 2560, 5,       g_vals, 2,
                              g_nodes,   1,    k_fn_in, 1,      k_fn_out};
  g_graph = (dml_pkg_graph_t){1, g_syms, 1, &g_fn, NULL};
}

static int type_eq(const dml_type_t *a, const dml_type_t *b) {
  if (a->dtype != b->dtype || a->rank != b->rank) return 0;
  for (int32_t i = 0; i < a->rank; i++)
    if (a->dims[i].value != b->dims[i].value || a->dims[i].sym != b->dims[i].sym)
      return 0;
  return 1;
}

static void test_graph_round_trip(void) {
  build_graph();
  void *bytes;
  size_t size;
  CHECK_OK(dml_pkg_graph_encode(&g_graph, &bytes, &size));
  dml_pkg_graph_t *g = NULL;
  CHECK_OK(dml_pkg_graph_decode(bytes, size, 128, &g));
  if (g) {
    CHECK(g->n_symbols == 1 && strcmp(g->symbols[0].name, "batch") == 0 &&
          g->symbols[0].bound == 64);
    CHECK(g->n_functions == 1);
    const dml_pkg_function_t *f = &g->functions[0];
    CHECK(strcmp(f->name, "forward") == 0 && f->arena_bytes == 2560);
    CHECK(f->n_values == 5 && f->n_nodes == 2 && f->n_inputs == 1 && f->n_outputs == 1);
    for (uint32_t i = 0; i < 5; i++) {
      CHECK(strcmp(f->values[i].name, g_vals[i].name) == 0);
      CHECK(type_eq(&f->values[i].type, &g_vals[i].type));
      CHECK(f->values[i].storage == g_vals[i].storage &&
            f->values[i].flags == g_vals[i].flags);
      CHECK(f->values[i].offset == g_vals[i].offset &&
            f->values[i].bytes == g_vals[i].bytes);
    }
    const dml_pkg_node_t *n = &f->nodes[0];
    CHECK(n->op == DML_OP_GEMM && strcmp(n->name, "fc") == 0 && n->n_inputs == 3);
    CHECK(f->nodes[1].op == DML_OP_RELU && strcmp(f->nodes[1].name, "") == 0);
    CHECK(n->n_attrs == 7);
    if (n->n_attrs == 7) {
      const dml_attr_t *a = n->attrs;
      CHECK(a[0].kind == DML_ATTR_FLOAT && a[0].f == 1.0);
      CHECK(a[1].kind == DML_ATTR_INT && a[1].i == 0);
      CHECK(a[2].kind == DML_ATTR_STRING && strcmp(a[2].s, "hello") == 0);
      CHECK(a[3].n == 3 && a[3].ints[1] == -2 && ((uintptr_t)a[3].ints & 7) == 0);
      CHECK(a[4].n == 2 && a[4].floats[1] == -1.25);
      CHECK(a[5].n == 2 && strcmp(a[5].strings[1], "bc") == 0);
      CHECK(a[6].tensor.dtype == DML_DTYPE_I32 && a[6].tensor.rank == 2 &&
            a[6].tensor.dims[1] == 3 && ((const int32_t *)a[6].tensor.data)[5] == 6);
    }
  }
  dml_pkg_graph_release(g);
  /* Every truncation fails cleanly; every byte flip fails or decodes. */
  for (size_t n = 0; n < size; n++) {
    dml_pkg_graph_t *t = NULL;
    dml_status_t st = dml_pkg_graph_decode(bytes, n, 128, &t);
    CHECK(st != DML_OK);
    dml_status_free(st);
  }
  uint8_t *c = (uint8_t *)malloc(size);
  for (size_t i = 0; i < size; i++) {
    memcpy(c, bytes, size);
    c[i] ^= 0xFF;
    dml_pkg_graph_t *t = NULL;
    dml_status_t st = dml_pkg_graph_decode(c, size, 128, &t);
    if (!st) dml_pkg_graph_release(t);
    dml_status_free(st);
  }
  free(c);
  free(bytes);
}

static dml_status_t encode_decode(void) {
  void *bytes;
  size_t size;
  DML_RETURN_IF_ERROR(dml_pkg_graph_encode(&g_graph, &bytes, &size));
  dml_pkg_graph_t *g = NULL;
  dml_status_t st = dml_pkg_graph_decode(bytes, size, 128, &g);
  dml_pkg_graph_release(g);
  free(bytes);
  return st;
}

static void test_graph_validation(void) {
  build_graph();
  CHECK_OK(encode_decode());
  g_nodes[1].op_name = "FancyOp";
  CHECK_ERROR(encode_decode(), DML_STATUS_UNIMPLEMENTED, "unknown op 'FancyOp'");
  build_graph();
  g_nodes[1].op_name = "Gradient"; /* compile-only (ops.def): never in a package */
  CHECK_ERROR(encode_decode(), DML_STATUS_DATA_LOSS,
              "node '' uses op 'Gradient', which exists only inside the compiler");
  build_graph();
  g_vals[1].offset = 32; /* weights must be 64-byte aligned */
  CHECK_ERROR(encode_decode(), DML_STATUS_DATA_LOSS, "constant 'W'");
  build_graph();
  g_vals[2].offset = 128; /* past the end of "weights" */
  CHECK_ERROR(encode_decode(), DML_STATUS_DATA_LOSS, "constant 'b'");
  build_graph();
  g_vals[4].offset = 2048; /* 2048 + 768 > arena */
  CHECK_ERROR(encode_decode(), DML_STATUS_DATA_LOSS, "value 'z'");
  build_graph();
  g_vals[3].bytes = 700; /* < bound bytes 64*3*4 */
  CHECK_ERROR(encode_decode(), DML_STATUS_DATA_LOSS, "value 'y'");
  build_graph();
  g_vals[4].offset = 1024 + 256; /* Relu output overlaps its input */
  CHECK_ERROR(encode_decode(), DML_STATUS_DATA_LOSS, "overlaps input 'y'");
  build_graph();
  static const uint32_t bad_in[1] = {4};
  g_nodes[1].inputs = bad_in; /* z used before defined (by itself) */
  CHECK_ERROR(encode_decode(), DML_STATUS_DATA_LOSS, "used before it is defined");
  build_graph();
  static const uint32_t absent[3] = {0, DML_PKG_NO_VALUE, 2};
  g_nodes[0].inputs = absent;
  CHECK_ERROR(encode_decode(), DML_STATUS_DATA_LOSS, "absent but required");
  build_graph();
  g_nodes[0].n_inputs = 1; /* Gemm needs 2..3 */
  CHECK_ERROR(encode_decode(), DML_STATUS_DATA_LOSS, "arity");
  build_graph();
  g_syms[0].bound = 0;
  CHECK_ERROR(encode_decode(), DML_STATUS_DATA_LOSS, "symbol #0 'batch'");
  g_syms[0].bound = 64;
  build_graph();
  g_vals[0].type.dims[0].sym = -1; /* batch no longer fixed by any input */
  CHECK_ERROR(encode_decode(), DML_STATUS_UNIMPLEMENTED, "symbol 'batch'");
  build_graph();
  g_vals[1].type.dtype = (dml_dtype_t)99;
  CHECK_ERROR(encode_decode(), DML_STATUS_DATA_LOSS, "invalid dtype 99");
  build_graph();
  g_vals[3].storage = DML_PKG_STORAGE_INPUT;
  CHECK_ERROR(encode_decode(), DML_STATUS_DATA_LOSS, "INPUT values");
}

int main(void) {
  RUN(test_crc32_vectors);
  RUN(test_container_round_trip);
  RUN(test_container_writer_errors);
  RUN(test_container_set_section);
  RUN(test_container_corruption);
  RUN(test_container_file);
  RUN(test_graph_round_trip);
  RUN(test_graph_validation);
  return dml_test_finish();
}
