/* cmd_strip.c — `dmlc strip IN.dmlpkg -o OUT.dmlpkg`: a trained package
 * (forward, train_step, eval_step, the optimizer's state) into an
 * inference package holding forward alone, with only the weights forward
 * reads. Nothing else changes: forward's plan, its values' bytes and its
 * GPU kernels are copied, so it gives the same outputs bit for bit. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_file.h"
#include "dml_kpkg.h"
#include "dml_pkg.h"
#include "dml_rt.h"
#include "dmlc_cmds.h"

static const char *k_op = "dmlc.strip";

static void usage(FILE *f) {
  fprintf(f,
          "usage: dmlc strip IN.dmlpkg -o OUT.dmlpkg\n"
          "\n"
          "Writes an inference package: IN's forward function alone (a package from\n"
          "`dmlc train` also holds train_step and eval_step), the weights forward\n"
          "reads (the optimizer's state and anything only the training functions\n"
          "read are dropped), forward's kernels of each GPU target, and IN's meta\n"
          "with a line 'stripped-from: IN'. forward's plan and bytes are unchanged:\n"
          "it gives the same outputs bit for bit. IN is never written; OUT is\n"
          "replaced atomically and may not be IN. Prints both sizes.\n"
          "\n"
          "flags:\n"
          "  -o, --output FILE   the inference package (required)\n"
          "  -h, --help          this text\n");
}

/* A byte range of the weights forward reads. */
typedef struct range {
  uint64_t begin, end, to; /* [begin, end) of IN's weights; new offset of begin */
} range_t;

static int cmp_range(const void *a, const void *b) {
  const range_t *x = (const range_t *)a, *y = (const range_t *)b;
  return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* The new offset of IN's weights byte `off` (inside one of the ranges). */
static uint64_t new_offset(const range_t *r, size_t n, uint64_t off) {
  size_t lo = 0, hi = n;
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (r[mid].begin <= off)
      lo = mid;
    else
      hi = mid;
  }
  return r[lo].to + (off - r[lo].begin);
}

/* Builds OUT's bytes into writer `w` (its sections lent from the buffers
 * the caller frees: *graph_out, *weights_out, *meta_out, kern[]). */
typedef struct strip_bufs {
  void *graph, *weights, *meta, *kern[DML_PKG_MAX_SECTIONS];
  dml_pkg_value_t *values;
  dml_pkg_symbol_t *symbols;
  range_t *ranges;
  uint64_t weights_in, weights_out;
  uint32_t n_functions_in;
} strip_bufs_t;

static dml_status_t strip(const dml_pkg_t *pkg, const char *in_path, dml_pkg_writer_t *w,
                          strip_bufs_t *b) {
  const dml_pkg_section_t *gs = dml_pkg_find_section(pkg, "graph");
  const dml_pkg_section_t *ws = dml_pkg_find_section(pkg, "weights");
  if (!gs) return dml_status_make(DML_STATUS_DATA_LOSS, k_op, "no graph section");
  dml_pkg_graph_t *g = NULL;
  DML_RETURN_IF_ERROR(dml_pkg_graph_decode_version(
      gs->data, gs->size, pkg->format_version, ws ? ws->size : 0, &g));
  dml_status_t st = DML_OK;
  uint32_t fi = 0;
  while (fi < g->n_functions && strcmp(g->functions[fi].name, "forward")) fi++;
  b->n_functions_in = g->n_functions;
  if (fi == g->n_functions) {
    st = dml_status_make(DML_STATUS_NOT_FOUND, k_op,
                         "the package has no forward function");
    goto out;
  }
  const dml_pkg_function_t *f = &g->functions[fi];
  /* symbols: a data-dependent one of another function would be dangling */
  b->symbols = (dml_pkg_symbol_t *)calloc(g->n_symbols + 1, sizeof(dml_pkg_symbol_t));
  b->values = (dml_pkg_value_t *)calloc(f->n_values + 1, sizeof(dml_pkg_value_t));
  b->ranges = (range_t *)calloc(f->n_values + 1, sizeof(range_t));
  if (!b->symbols || !b->values || !b->ranges) {
    st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, k_op, "out of memory");
    goto out;
  }
  for (uint32_t i = 0; i < g->n_symbols; i++) {
    b->symbols[i] = g->symbols[i];
    if (g->symbols[i].origin != DML_PKG_SYMBOL_NODE) continue;
    if (g->symbols[i].function != fi) {
      st = dml_status_make(DML_STATUS_UNIMPLEMENTED, k_op,
                           "symbol '%s' is set at run time by a node of function '%s', "
                           "which strip drops; stripping such a package is not done",
                           g->symbols[i].name, g->functions[g->symbols[i].function].name);
      goto out;
    }
    b->symbols[i].function = 0;
  }
  /* forward's constants: their byte ranges, merged, packed 64-aligned */
  size_t nr = 0;
  for (uint32_t i = 0; i < f->n_values; i++) {
    b->values[i] = f->values[i];
    if (f->values[i].storage == DML_PKG_STORAGE_CONST && f->values[i].bytes)
      b->ranges[nr++] =
          (range_t){f->values[i].offset, f->values[i].offset + f->values[i].bytes, 0};
  }
  qsort(b->ranges, nr, sizeof(range_t), cmp_range);
  size_t nm = 0;
  for (size_t i = 0; i < nr; i++) {
    if (nm && b->ranges[i].begin <= b->ranges[nm - 1].end) {
      if (b->ranges[i].end > b->ranges[nm - 1].end)
        b->ranges[nm - 1].end = b->ranges[i].end;
    } else {
      b->ranges[nm++] = b->ranges[i];
    }
  }
  uint64_t at = 0;
  for (size_t i = 0; i < nm; i++) {
    at = (at + DML_PKG_WEIGHT_ALIGNMENT - 1) / DML_PKG_WEIGHT_ALIGNMENT *
         DML_PKG_WEIGHT_ALIGNMENT;
    b->ranges[i].to = at;
    at += b->ranges[i].end - b->ranges[i].begin;
  }
  b->weights_in = ws ? ws->size : 0;
  b->weights_out = at;
  if (at && !(b->weights = calloc(1, at))) {
    st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, k_op, "out of memory");
    goto out;
  }
  for (size_t i = 0; i < nm; i++)
    memcpy((uint8_t *)b->weights + b->ranges[i].to, ws->data + b->ranges[i].begin,
           b->ranges[i].end - b->ranges[i].begin);
  for (uint32_t i = 0; i < f->n_values; i++)
    if (b->values[i].storage == DML_PKG_STORAGE_CONST && b->values[i].bytes)
      b->values[i].offset = new_offset(b->ranges, nm, f->values[i].offset);
  /* the graph of forward alone */
  dml_pkg_function_t nf = *f;
  nf.values = b->values;
  dml_pkg_graph_t ng;
  memset(&ng, 0, sizeof ng);
  ng.n_symbols = g->n_symbols;
  ng.symbols = b->symbols;
  ng.n_functions = 1;
  ng.functions = &nf;
  size_t gsize = 0;
  st = dml_pkg_graph_encode(&ng, &b->graph, &gsize);
  for (uint32_t i = 0; i < pkg->n_sections && !st; i++) {
    const dml_pkg_section_t *sec = &pkg->sections[i];
    if (sec == gs) {
      st = dml_pkg_writer_add_section(w, "graph", b->graph, gsize, sec->alignment);
    } else if (sec == ws) {
      if (at)
        st = dml_pkg_writer_add_section(w, "weights", b->weights, at, sec->alignment);
    } else if (!strcmp(sec->tag, "meta")) {
      size_t n = sec->size;
      while (n && sec->data[n - 1] == 0) n--; /* tolerate a NUL ending */
      size_t cap = n + strlen(in_path) + 32;
      char *meta = (char *)malloc(cap);
      if (!meta) {
        st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, k_op, "out of memory");
        break;
      }
      int len = snprintf(meta, cap, "%.*s%sstripped-from: %s\n", (int)n,
                         (const char *)sec->data,
                         n && sec->data[n - 1] != '\n' ? "\n" : "", in_path);
      b->meta = meta;
      st = dml_pkg_writer_add_section(w, "meta", meta, (size_t)len, sec->alignment);
    } else if (!strncmp(sec->tag, "kernels.", 8)) {
      dml_kpkg_target_t t = 0;
      for (int k = DML_KPKG_TARGET_SPIRV; k <= DML_KPKG_TARGET_CUDA; k++)
        if (!strcmp(sec->tag, dml_kpkg_section_tag((dml_kpkg_target_t)k)))
          t = (dml_kpkg_target_t)k;
      if (!t) {
        st = dml_status_make(DML_STATUS_UNIMPLEMENTED, k_op,
                             "kernel section '%s' of an unknown target", sec->tag);
        break;
      }
      dml_kpkg_t *kp = NULL;
      st = dml_kpkg_decode(sec->data, sec->size, t, g, &kp);
      if (st) break;
      const dml_kpkg_function_t *kf = dml_kpkg_find_function(kp, fi);
      dml_kpkg_function_t one;
      if (kf) one = *kf, one.function = 0;
      dml_kpkg_t nk = {t, kf ? 1u : 0u, kf ? &one : NULL};
      size_t ksize = 0;
      st = dml_kpkg_encode(&nk, &b->kern[i], &ksize);
      dml_kpkg_release(kp);
      if (!st)
        st = dml_pkg_writer_add_section(w, sec->tag, b->kern[i], ksize, sec->alignment);
    } else {
      /* a section this dmlc does not know: readers ignore it; kept */
      st = dml_pkg_writer_add_section(w, sec->tag, sec->data, (size_t)sec->size,
                                      sec->alignment);
    }
  }
out:
  dml_pkg_graph_release(g);
  return st;
}

int dmlc_cmd_strip(int argc, char **argv) {
  const char *in = NULL, *out = NULL, *v;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      return 0;
    } else if ((v = dmlc_flag_value(argc, argv, &i, "-o")) ||
               (v = dmlc_flag_value(argc, argv, &i, "--output"))) {
      if (!*v) return dmlc_usage_error("strip", "-o needs a file");
      out = v;
    } else if (argv[i][0] == '-') {
      return dmlc_usage_error("strip", "unknown flag '%s'", argv[i]);
    } else if (!in) {
      in = argv[i];
    } else {
      return dmlc_usage_error("strip", "more than one package given");
    }
  }
  if (!in || !out) return dmlc_usage_error("strip", "give IN.dmlpkg and -o OUT.dmlpkg");
  if (!strcmp(in, out) || dml_file_same(in, out))
    return dmlc_usage_error(
        "strip", "-o '%s' is the input package; strip never overwrites it", out);
  dml_pkg_file_t file;
  memset(&file, 0, sizeof file);
  dml_pkg_t pkg;
  dml_pkg_writer_t *w = NULL;
  strip_bufs_t b;
  memset(&b, 0, sizeof b);
  dml_status_t st = dml_pkg_file_open(in, &file);
  if (!st) st = dml_pkg_parse(file.data, file.size, &pkg);
  if (!st) st = dml_pkg_writer_create(&w);
  if (!st) st = strip(&pkg, in, w, &b);
  if (!st) st = dml_pkg_writer_finish_file(w, out);
  /* what was written loads (the graph, kernels and weights checked) */
  dml_rt_model_t *m = NULL;
  if (!st) st = dml_rt_model_load_file(out, &m);
  if (!st) {
    printf("wrote %s: %" PRIu64 " bytes (from %zu bytes of %s: %" PRIu32
           " functions -> forward; weights %" PRIu64 " -> %" PRIu64 " bytes)\n",
           out, dml_rt_model_file_size(m), file.size, in, b.n_functions_in, b.weights_in,
           b.weights_out);
  }
  dml_rt_model_release(m);
  dml_pkg_writer_release(w);
  dml_pkg_file_close(&file);
  free(b.graph);
  free(b.weights);
  free(b.meta);
  for (int i = 0; i < DML_PKG_MAX_SECTIONS; i++) free(b.kern[i]);
  free(b.values);
  free(b.symbols);
  free(b.ranges);
  return st ? dmlc_report(dml_status_annotate(st, "dmlc strip %s", in)) : 0;
}
