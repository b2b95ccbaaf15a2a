/*
 * dml_pkg.h — the .dmlpkg package format: container, graph section, CRC-32.
 *
 * A package is one little-endian file: a header, a table of tagged sections
 * ("meta", "graph", "weights", later "kernels.spirv", ...), each aligned and
 * CRC-32 checked, and a CRC-32 over the header and table. docs/package-format.md
 * gives the byte layouts; this header is the one implementation of them,
 * shared by the compiler's emitter (writes) and the runtime's loader (reads).
 *
 * Ownership:
 *   - dml_pkg_parse() allocates nothing; the dml_pkg_t it fills lends views
 *     into the bytes it was given, valid while those bytes are.
 *   - dml_pkg_file_open() hands the caller a mapping it must
 *     dml_pkg_file_close().
 *   - A dml_pkg_writer_t is created and released by the caller; section bytes
 *     passed to it are lent until finish or release.
 *   - dml_pkg_graph_decode() hands the caller a graph it must
 *     dml_pkg_graph_release(); every string, array and attribute in it is
 *     owned by the graph (nothing points into the input bytes).
 *     dml_pkg_graph_encode() hands the caller malloc'd bytes to free().
 *
 * Errors: bytes that are not a valid package are untrusted input, never a
 * crash: DATA_LOSS (op "pkg.load") for corrupt or truncated bytes, naming
 * the section and byte offset; UNIMPLEMENTED for a newer format version or
 * an op name this build does not know (named); IO (op "pkg.write" or
 * "pkg.load") for file system failures; RESOURCE_EXHAUSTED for allocation
 * failures.
 */
#ifndef DML_PKG_H_
#define DML_PKG_H_

#include <stddef.h>
#include <stdint.h>

#include "dml_ops.h"
#include "dml_status.h"
#include "dml_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ===================================================================== */
/* CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), as zlib's crc32() */
/* ===================================================================== */

/* Continues a CRC-32 over `n` more bytes: start with crc = 0, chain the
 * result (dml_crc32_update(dml_crc32_update(0, a, na), b, nb) equals the
 * CRC of a followed by b). dml_crc32_update(0, "123456789", 9) == 0xCBF43926. */
uint32_t dml_crc32_update(uint32_t crc, const void *data, size_t n);
/* CRC-32 of `n` bytes. */
uint32_t dml_crc32(const void *data, size_t n);

/* ===================================================================== */
/* Container: header, section table, sections                            */
/* ===================================================================== */

#define DML_PKG_MAGIC "DMLPKG\0\0" /* 8 bytes */
/* The version written. Readers accept 1..DML_PKG_FORMAT_VERSION: version 2
 * added the symbols' origin to the graph section (data-dependent dims). */
#define DML_PKG_FORMAT_VERSION 2u
#define DML_PKG_FORMAT_VERSION_MIN 1u
#define DML_PKG_TAG_BYTES 16    /* NUL-padded, at most 15 characters */
#define DML_PKG_HEADER_BYTES 32 /* fixed header, before the table */
#define DML_PKG_ENTRY_BYTES 40  /* one section table entry */
#define DML_PKG_MAX_SECTIONS 64
#define DML_PKG_MAX_ALIGNMENT (1u << 20)
#define DML_PKG_WEIGHTS_ALIGNMENT 4096u /* "weights" section: page aligned */
#define DML_PKG_WEIGHT_ALIGNMENT 64u    /* each weight inside "weights" */

/* Bytes of header + table + header CRC for `n_sections` sections; the first
 * section starts at or after this offset. */
#define DML_PKG_HEADER_REGION_BYTES(n_sections) \
  ((size_t)DML_PKG_HEADER_BYTES + (size_t)DML_PKG_ENTRY_BYTES * (n_sections) + 4u)

/* One section, as read from the table. `data` lends the section's bytes. */
typedef struct dml_pkg_section {
  char tag[DML_PKG_TAG_BYTES + 1]; /* NUL-terminated copy of the tag */
  uint64_t offset;                 /* from the start of the file */
  uint64_t size;                   /* bytes */
  uint32_t alignment;              /* power of two; offset % alignment == 0 */
  uint32_t crc32;                  /* of the section's bytes (verified) */
  const uint8_t *data;
} dml_pkg_section_t;

/* A parsed, verified package container. */
typedef struct dml_pkg {
  uint32_t format_version;
  uint32_t flags;
  uint64_t file_size;
  uint32_t header_crc32;
  uint32_t n_sections;
  dml_pkg_section_t sections[DML_PKG_MAX_SECTIONS];
} dml_pkg_t;

/* Checks and parses a package's container: magic, format version, declared
 * file size against `size`, header CRC, every section's tag (NUL-padded,
 * unique), offset, size and alignment (within the file, after the header,
 * not overlapping) and CRC. Sections' contents are not interpreted.
 * Errors: DATA_LOSS naming the field and offset; UNIMPLEMENTED for a format
 * version outside DML_PKG_FORMAT_VERSION_MIN..DML_PKG_FORMAT_VERSION. */
dml_status_t dml_pkg_parse(const void *bytes, size_t size, dml_pkg_t *out_pkg);

/* The section tagged `tag`, or NULL. */
const dml_pkg_section_t *dml_pkg_find_section(const dml_pkg_t *pkg, const char *tag);

/* A package file's bytes in memory: mmap'ed read-only, or (where mmap fails)
 * read() into a 4096-byte aligned buffer. Either way `data` is page aligned,
 * so sections aligned in the file are aligned in memory. */
typedef struct dml_pkg_file {
  const uint8_t *data;
  size_t size;
  int mapped; /* 1: mmap'ed, 0: read into a heap buffer */
} dml_pkg_file_t;

/* Opens `path`. Errors: NOT_FOUND (no such file), IO (other open/read
 * failures, with strerror), RESOURCE_EXHAUSTED. */
dml_status_t dml_pkg_file_open(const char *path, dml_pkg_file_t *out_file);
/* Unmaps or frees; zeroes *f. Safe on a zeroed struct. */
void dml_pkg_file_close(dml_pkg_file_t *f);

/* ---- writer ---- */

typedef struct dml_pkg_writer dml_pkg_writer_t;

dml_status_t dml_pkg_writer_create(dml_pkg_writer_t **out_writer);
/* Adds a section. `tag`: 1..15 characters, unique in the package.
 * `alignment`: a power of two <= DML_PKG_MAX_ALIGNMENT (the section's file
 * offset is a multiple of it). `data` (may be NULL when size is 0) is lent
 * until finish or release. Errors: INVALID_ARGUMENT. */
dml_status_t dml_pkg_writer_add_section(dml_pkg_writer_t *w, const char *tag,
                                        const void *data, size_t size,
                                        uint32_t alignment);
/* Replaces the bytes of section `tag`, added before, with `data` (lent
 * as by add_section), keeping its alignment; adds it with `alignment` when
 * the writer has none of that tag. Errors: INVALID_ARGUMENT (as
 * add_section). */
dml_status_t dml_pkg_writer_set_section(dml_pkg_writer_t *w, const char *tag,
                                        const void *data, size_t size,
                                        uint32_t alignment);
/* Lays out and writes the package into one malloc'd buffer the caller
 * frees. */
dml_status_t dml_pkg_writer_finish_memory(dml_pkg_writer_t *w, void **out_bytes,
                                          size_t *out_size);
/* Writes the package to `path` atomically with dml_file_write_atomic_fn()
 * ("<path>.tmp.<pid>", fsync, rename, folder fsync; only a regular file is
 * replaced, keeping its mode); on any failure the temporary file is removed
 * and an existing `path` is left untouched. Errors: IO with the path and
 * strerror. */
dml_status_t dml_pkg_writer_finish_file(dml_pkg_writer_t *w, const char *path);
void dml_pkg_writer_release(dml_pkg_writer_t *w);

/* ===================================================================== */
/* "graph" section: symbols and functions with their execution plans      */
/* ===================================================================== */

/* Where a value's bytes live when its function runs. Stored values. */
typedef enum dml_pkg_storage {
  DML_PKG_STORAGE_INPUT = 1, /* function input, copied into the arena at `offset` */
  DML_PKG_STORAGE_ARENA = 2, /* node result in the arena at `offset` */
  DML_PKG_STORAGE_CONST = 3, /* weight/constant at `offset` in "weights" */
} dml_pkg_storage_t;

/* Value flags (stored). */
#define DML_PKG_VALUE_PARAM 0x1u /* trainable parameter */
#define DML_PKG_VALUE_STATE 0x2u /* mutable non-trainable state */
#define DML_PKG_VALUE_FLAGS_ALL 0x3u
/* A node input index meaning "absent optional input". */
#define DML_PKG_NO_VALUE 0xFFFFFFFFu

/* Where a symbol's run-time value comes from. Stored (version 2). */
typedef enum dml_pkg_symbol_origin {
  DML_PKG_SYMBOL_INPUT = 0, /* a dim of a function input (as in version 1) */
  /* A data-dependent dim: dim `dim` of output `output` of node `node` of
   * function `function`, whose kernel writes its actual extent (0..bound)
   * at run time. That dim is exactly 1 * this symbol. */
  DML_PKG_SYMBOL_NODE = 1,
  /* A derived dim: floor((mul * S[src[0]] * S[src[1]] + add) / div)
   * (dml_sym_derived_eval; src[1] = -1: no second factor) of earlier INPUT
   * or DERIVED symbols, e.g. a Conv's output height over a symbolic input
   * height. The runtime computes it from its sources. */
  DML_PKG_SYMBOL_DERIVED = 2,
} dml_pkg_symbol_origin_t;

typedef struct dml_pkg_symbol {
  const char *name;
  int64_t bound; /* inclusive upper bound, >= 1 */
  dml_pkg_symbol_origin_t origin;
  uint32_t function, node, output, dim; /* origin NODE: the producer */
  int32_t src[2];                       /* origin DERIVED: the formula */
  int64_t mul, add, div;
} dml_pkg_symbol_t;

typedef struct dml_pkg_value {
  const char *name; /* may be "" for intermediates */
  dml_type_t type;  /* dims symbolic as in the IR; rank >= 0 */
  dml_pkg_storage_t storage;
  uint32_t flags;  /* DML_PKG_VALUE_* */
  uint64_t offset; /* arena offset (INPUT, ARENA) or "weights" offset (CONST) */
  uint64_t bytes;  /* reserved bytes: >= the value's bytes at the bounds */
} dml_pkg_value_t;

typedef struct dml_pkg_node {
  dml_op_t op;         /* resolved from op_name by decode; ignored by encode */
  const char *op_name; /* "Gemm" (ops.def spelling) */
  const char *name;    /* may be "" */
  uint32_t n_inputs;
  const uint32_t *inputs; /* value indices or DML_PKG_NO_VALUE */
  uint32_t n_outputs;
  const uint32_t *outputs; /* value indices */
  uint32_t n_attrs;
  const dml_attr_t *attrs;
} dml_pkg_node_t;

/* Integer node attribute that the compiler's `fuse` pass (passes/fuse.c)
 * gives the nodes of one GPU kernel: the group's number (0, 1, ... per
 * function in execution order); groups of one node carry none. The GPU
 * scheduler reads it; the CPU executor ignores it. */
#define DML_FUSE_GROUP_ATTR "fuse_group"

typedef struct dml_pkg_function {
  const char *name; /* "forward", "train_step", ... */
  uint64_t arena_bytes;
  uint32_t n_values;
  const dml_pkg_value_t *values;
  uint32_t n_nodes;
  const dml_pkg_node_t *nodes; /* in execution order */
  uint32_t n_inputs;
  const uint32_t *inputs; /* value indices, storage INPUT */
  uint32_t n_outputs;
  const uint32_t *outputs; /* value indices */
} dml_pkg_function_t;

typedef struct dml_pkg_graph {
  uint32_t n_symbols;
  const dml_pkg_symbol_t *symbols;
  uint32_t n_functions;
  const dml_pkg_function_t *functions;
  struct dml_pkg_pool *pool_; /* owns a decoded graph's memory; NULL when built by hand */
} dml_pkg_graph_t;

/* Serializes `g` (built by hand; node `op` fields are ignored, `op_name` is
 * written) into malloc'd bytes the caller frees, in the layout of format
 * version DML_PKG_FORMAT_VERSION. Does not validate: run
 * dml_pkg_graph_decode() on the result to check it. Errors:
 * INVALID_ARGUMENT (rank out of range, NULL string, unknown attr kind),
 * RESOURCE_EXHAUSTED. */
dml_status_t dml_pkg_graph_encode(const dml_pkg_graph_t *g, void **out_bytes,
                                  size_t *out_size);

/* Parses and validates a "graph" section of `size` bytes. `weights_size` is
 * the size of the package's "weights" section (0 if absent). Checks every
 * count, string, dtype, rank, dim, symbol index, storage kind, flag, offset
 * and size (arena values inside arena_bytes, constants static, 64-byte
 * aligned and inside the weights), op name and arity, value index, attr kind
 * and payload; that each node result is defined once, before use, and does
 * not overlap the node's inputs in the arena (except a view op's result at
 * its input's exact offset); that function inputs are exactly the INPUT
 * values and that every symbol a function uses is fixed by an input's dim
 * or, for a NODE symbol, by its producer: a node of that function, earlier
 * than every other node whose outputs use the symbol, whose output dim is
 * exactly 1 * symbol, and no input uses it. Reads the current layout
 * (DML_PKG_FORMAT_VERSION).
 * Errors: DATA_LOSS naming the function, value or node and the byte offset;
 * UNIMPLEMENTED naming an unknown op; RESOURCE_EXHAUSTED. */
dml_status_t dml_pkg_graph_decode(const void *bytes, size_t size, uint64_t weights_size,
                                  dml_pkg_graph_t **out_graph);
/* As dml_pkg_graph_decode(), for the layout of package format
 * `format_version` (the container's header field): version 1's symbols have
 * no origin (all are INPUT). Errors as above; UNIMPLEMENTED for a version
 * this build does not read. */
dml_status_t dml_pkg_graph_decode_version(const void *bytes, size_t size,
                                          uint32_t format_version, uint64_t weights_size,
                                          dml_pkg_graph_t **out_graph);
void dml_pkg_graph_release(dml_pkg_graph_t *g);

/* Bytes of `type` at the symbols' bounds (numel * dtype size); -1 on
 * overflow, unknown rank, or a bad symbol index. */
int64_t dml_pkg_type_bytes_bound(const dml_type_t *type, const dml_pkg_symbol_t *symbols,
                                 uint32_t n_symbols);

/* Shape values the host computes (GPU sessions, docs/kernels.md "Run-time
 * dims"): 1 when the host can compute value `v` of `f` before the device
 * runs, from the function's inputs and constants alone: `v` is a constant
 * or an input, or the output of a node (Cast, Sub, Div, ... of scalars:
 * HannWindow's expansion `Range(0, Cast(size), 1)`) that draws no random
 * numbers, has no side effect (Assign), is no Dropout, whose outputs have
 * static dims, whose inputs and outputs take at most
 * DML_PKG_HOST_VALUE_MAX_BYTES bytes each (the value's planned `bytes`),
 * and whose inputs the host can compute, visiting at most DML_PKG_HOST_VALUE_MAX_NODES
 * nodes in all. The GPU scheduler accepts such values as shape inputs and
 * the session runs those nodes with the CPU kernels before the device run
 * (the device computes them too, for the kernels that read them). 0 for an
 * absent or out-of-range `v`. */
#define DML_PKG_HOST_VALUE_MAX_BYTES 4096
#define DML_PKG_HOST_VALUE_MAX_NODES 64
int dml_pkg_host_value(const dml_pkg_function_t *f, uint32_t v);

/* The node of `f` producing value `v`; UINT32_MAX when none (an input, a
 * constant, an absent or out-of-range `v`). */
uint32_t dml_pkg_producer(const dml_pkg_function_t *f, uint32_t v);

/* ---- "strings" section (docs/package-format.md "String tensors") ----
 * The elements of every CONST value of dtype string: the value's bytes in
 * "weights" are reserved (zeros, never read); its elements are here, in a
 * table keyed by the value's weights offset:
 *   strings := u32 n_tables, table[n_tables]     weights_offset increasing
 *   table   := u64 weights_offset, u64 count, u64 len[count],
 *              the count strings' bytes, concatenated
 * The whole section is consumed. */
typedef struct dml_pkg_strtab {
  uint64_t weights_offset;
  uint64_t count;
  dml_str_t *elems; /* decode: malloc'd descriptors into the section's bytes */
} dml_pkg_strtab_t;

/* Encodes `n` tables (sorted by weights_offset) into a malloc'd buffer. */
dml_status_t dml_pkg_strings_encode(const dml_pkg_strtab_t *tabs, uint32_t n,
                                    uint8_t **out, size_t *out_size);
/* Decodes the section (untrusted bytes: every count and length is checked
 * against the bytes left before use; DATA_LOSS names the byte). The
 * descriptors point into `bytes`, which must outlive the tables. */
dml_status_t dml_pkg_strings_decode(const void *bytes, size_t size,
                                    dml_pkg_strtab_t **out_tabs, uint32_t *out_n);
void dml_pkg_strings_release(dml_pkg_strtab_t *tabs, uint32_t n);
/* The table of weights offset `weights_offset`, or NULL. */
const dml_pkg_strtab_t *dml_pkg_strings_find(const dml_pkg_strtab_t *tabs, uint32_t n,
                                             uint64_t weights_offset);

#ifdef __cplusplus
}
#endif
#endif /* DML_PKG_H_ */
