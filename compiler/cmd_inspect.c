/* cmd_inspect.c — `dmlc inspect PKG`: a package's container, meta, symbols,
 * inputs/outputs, size of the graph, weights and planned memory. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "dml_rt.h"
#include "dmlc_cmds.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: dmlc inspect PKG [--json]\n"
          "\n"
          "Verifies the package PKG (header, section CRCs, graph) and prints its format\n"
          "version, file size, sections (tag, offset, size, alignment, CRC-32), meta\n"
          "lines, targets, symbols with their bounds, inputs and outputs with symbolic\n"
          "shapes, node count, weight bytes and parameter count, and the planned arena.\n"
          "\n"
          "flags:\n"
          "  --json       one JSON object instead: package, format_version,\n"
          "               file_size, memory_mapped, sections [{tag, offset, size,\n"
          "               alignment, crc32}], meta {key: value}, targets, symbols\n"
          "               [{name, bound}], functions, inputs and outputs [{name,\n"
          "               dtype, shape, max_shape}] (a symbolic dim in shape is its\n"
          "               name, \"2*S\" for a multiple), nodes, weights_bytes,\n"
          "               trainable_params, other_constants, arena_bytes,\n"
          "               cpu_scratch_bytes (bytes and counts as integers),\n"
          "               host_functions [{target, function, why}] (the CPU\n"
          "               fall-back: functions a GPU target runs on the host)\n"
          "  -h, --help   this text\n");
}

/* "1.5 MiB" */
static const char *human(uint64_t b, char *buf, size_t cap) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)b;
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, u++;
  if (u == 0)
    snprintf(buf, cap, "%" PRIu64 " B", b);
  else
    snprintf(buf, cap, "%.1f %s", v, units[u]);
  return buf;
}

/* "235.1K" style counts. */
static const char *count_str(int64_t n, char *buf, size_t cap) {
  if (n < 1000)
    snprintf(buf, cap, "%" PRId64, n);
  else if (n < 1000000)
    snprintf(buf, cap, "%.1fK", (double)n / 1e3);
  else if (n < 1000000000)
    snprintf(buf, cap, "%.1fM", (double)n / 1e6);
  else
    snprintf(buf, cap, "%.1fB", (double)n / 1e9);
  return buf;
}

static void print_io(const dml_rt_model_t *m, int outputs) {
  uint32_t n = outputs ? dml_rt_model_num_outputs(m) : dml_rt_model_num_inputs(m);
  printf("%s:\n", outputs ? "outputs" : "inputs");
  for (uint32_t i = 0; i < n; i++) {
    dml_rt_io_info_t io;
    dml_status_t st = outputs ? dml_rt_model_output_info(m, i, &io)
                              : dml_rt_model_input_info(m, i, &io);
    if (st) {
      dmlc_report(st);
      continue;
    }
    char ts[256], bs[256];
    int symbolic = 0;
    for (int32_t d = 0; d < io.rank; d++) symbolic |= io.dim_symbol[d] != NULL;
    printf("  %s: %s", io.name, dml_rt_io_info_str(&io, ts, sizeof ts));
    if (symbolic)
      printf("  (at most %s%s)", dml_dtype_name(io.dtype),
             dml_dims_str(io.dim_bound, io.rank, bs, sizeof bs));
    printf("\n");
  }
}

/* A JSON array of an input's or output's dims: the static size, or the
 * symbol ("S", "2*S") when `bounds` is 0; the bounds when 1. */
static void json_dims(FILE *f, const dml_rt_io_info_t *io, int bounds) {
  fputc('[', f);
  for (int32_t d = 0; d < io->rank; d++) {
    if (d) fputs(", ", f);
    if (bounds || !io->dim_symbol[d]) {
      fprintf(f, "%" PRId64, bounds ? io->dim_bound[d] : io->dims[d]);
    } else if (io->dim_multiplier[d] == 1) {
      dmlc_json_str(f, io->dim_symbol[d]);
    } else {
      char b[160];
      snprintf(b, sizeof b, "%" PRId64 "*%s", io->dim_multiplier[d], io->dim_symbol[d]);
      dmlc_json_str(f, b);
    }
  }
  fputc(']', f);
}

static void json_io(FILE *f, const dml_rt_model_t *m, int outputs) {
  uint32_t n = outputs ? dml_rt_model_num_outputs(m) : dml_rt_model_num_inputs(m);
  fprintf(f, ", \"%s\": [", outputs ? "outputs" : "inputs");
  for (uint32_t i = 0, k = 0; i < n; i++) {
    dml_rt_io_info_t io;
    dml_status_t st = outputs ? dml_rt_model_output_info(m, i, &io)
                              : dml_rt_model_input_info(m, i, &io);
    if (st) {
      dmlc_report(st);
      continue;
    }
    fputs(k++ ? ", {\"name\": " : "{\"name\": ", f);
    dmlc_json_str(f, io.name);
    fputs(", \"dtype\": ", f);
    dmlc_json_str(f, dml_dtype_name(io.dtype));
    fputs(", \"shape\": ", f);
    json_dims(f, &io, 0);
    fputs(", \"max_shape\": ", f);
    json_dims(f, &io, 1);
    fputc('}', f);
  }
  fputc(']', f);
}

/* Calls fn(ctx, target, function, why) for each line of the placement
 * section (the CPU fall-back; untrusted bytes: fields cut at 255 bytes,
 * lines without three fields skipped). */
static void each_placement(const dml_rt_model_t *m,
                           void (*fn)(void *ctx, const char *t, const char *f,
                                      const char *why),
                           void *ctx) {
  const char *p;
  size_t left = dml_rt_model_placement(m, &p);
  while (p && left) {
    const char *e = (const char *)memchr(p, '\n', left);
    size_t n = e ? (size_t)(e - p) : left;
    const char *t1 = (const char *)memchr(p, '\t', n);
    const char *t2 =
        t1 ? (const char *)memchr(t1 + 1, '\t', n - (size_t)(t1 + 1 - p)) : NULL;
    if (t2) {
      char t[256], f[256], w[1024];
      snprintf(t, sizeof t, "%.*s", (int)(t1 - p < 255 ? t1 - p : 255), p);
      snprintf(f, sizeof f, "%.*s", (int)(t2 - t1 - 1 < 255 ? t2 - t1 - 1 : 255), t1 + 1);
      size_t wn = n - (size_t)(t2 + 1 - p);
      snprintf(w, sizeof w, "%.*s", (int)(wn < 1023 ? wn : 1023), t2 + 1);
      for (char *c = w; *c; c++)
        if ((unsigned char)*c < 0x20) *c = ' ';
      fn(ctx, t, f, w);
    }
    if (!e) break;
    left -= n + 1;
    p = e + 1;
  }
}

static void placement_text(void *ctx, const char *t, const char *f, const char *why) {
  int *k = (int *)ctx;
  if (!(*k)++) printf("on the host (the CPU fall-back):\n");
  printf("  %s, function '%s': %s\n", t, f, why);
}

static void placement_json(void *ctx, const char *t, const char *f, const char *why) {
  FILE *out = (FILE *)((void **)ctx)[0];
  int *k = (int *)((void **)ctx)[1];
  fputs((*k)++ ? ", {\"target\": " : "{\"target\": ", out);
  dmlc_json_str(out, t);
  fputs(", \"function\": ", out);
  dmlc_json_str(out, f);
  fputs(", \"why\": ", out);
  dmlc_json_str(out, why);
  fputc('}', out);
}

/* `dmlc inspect --json`: the facts of the text form as one JSON object. */
static void print_json(FILE *f, const char *pkg, const dml_rt_model_t *m) {
  fputs("{\"package\": ", f);
  dmlc_json_str(f, pkg);
  fprintf(f,
          ", \"format_version\": %" PRIu32 ", \"file_size\": %" PRIu64
          ", \"memory_mapped\": %s, \"sections\": [",
          dml_rt_model_format_version(m), dml_rt_model_file_size(m),
          dml_rt_model_is_mapped(m) ? "true" : "false");
  for (uint32_t i = 0, k = 0; i < dml_rt_model_num_sections(m); i++) {
    dml_rt_section_info_t s;
    if (dml_rt_model_section_info(m, i, &s)) continue;
    fputs(k++ ? ", {\"tag\": " : "{\"tag\": ", f);
    dmlc_json_str(f, s.tag);
    fprintf(f,
            ", \"offset\": %" PRIu64 ", \"size\": %" PRIu64 ", \"alignment\": %" PRIu32
            ", \"crc32\": %" PRIu32 "}",
            s.offset, s.size, s.alignment, s.crc32);
  }
  fputs("], \"meta\": {", f);
  int k = 0;
  for (const char *p = dml_rt_model_meta(m); *p;) {
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    const char *colon = memchr(p, ':', len);
    if (colon) { /* "key: value" (docs/package-format.md); others skipped */
      char key[128], val[4096];
      snprintf(key, sizeof key, "%.*s", (int)(colon - p), p);
      const char *vb = colon + 1 + (colon + 1 < p + len && colon[1] == ' ');
      snprintf(val, sizeof val, "%.*s", (int)(p + len - vb), vb);
      fputs(k++ ? ", " : "", f);
      dmlc_json_str(f, key);
      fputs(": ", f);
      dmlc_json_str(f, val);
    }
    p += len + (eol ? 1 : 0);
  }
  char targets[256];
  if (!dml_rt_model_meta_get(m, "targets", targets, sizeof targets))
    snprintf(targets, sizeof targets, "cpu");
  fputs("}, \"targets\": [", f);
  k = 0;
  for (char *t = strtok(targets, ", "); t; t = strtok(NULL, ", ")) {
    fputs(k++ ? ", " : "", f);
    dmlc_json_str(f, t);
  }
  fputs("], \"symbols\": [", f);
  k = 0;
  for (uint32_t i = 0; i < dml_rt_model_num_symbols(m); i++) {
    const char *name;
    int64_t bound;
    if (dml_rt_model_symbol(m, i, &name, &bound)) continue;
    fputs(k++ ? ", {\"name\": " : "{\"name\": ", f);
    dmlc_json_str(f, name);
    fprintf(f, ", \"bound\": %" PRId64 "}", bound);
  }
  fputs("], \"functions\": [", f);
  for (uint32_t i = 0; i < dml_rt_model_num_functions(m); i++) {
    fputs(i ? ", " : "", f);
    dmlc_json_str(f, dml_rt_model_function_name(m, i));
  }
  fputs("], \"host_functions\": [", f);
  int nh = 0;
  void *pctx[2] = {f, &nh};
  each_placement(m, placement_json, pctx);
  fputc(']', f);
  json_io(f, m, 0);
  json_io(f, m, 1);
  fprintf(f,
          ", \"nodes\": %" PRIu32 ", \"weights_bytes\": %" PRIu64
          ", \"trainable_params\": %" PRId64 ", \"other_constants\": %" PRId64
          ", \"arena_bytes\": %" PRId64 ", \"cpu_scratch_bytes\": %" PRId64 "}\n",
          dml_rt_model_num_nodes(m), dml_rt_model_weights_bytes(m),
          dml_rt_model_param_count(m), dml_rt_model_const_count(m),
          dml_rt_model_arena_bytes(m), dml_rt_model_scratch_bytes(m));
}

int dmlc_cmd_inspect(int argc, char **argv) {
  const char *pkg = NULL;
  int json = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(argv[i], "--json")) {
      json = 1;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return dmlc_usage_error("inspect", "unknown flag '%s'", argv[i]);
    } else if (!pkg) {
      pkg = argv[i];
    } else {
      return dmlc_usage_error("inspect", "more than one package given");
    }
  }
  if (!pkg) return dmlc_usage_error("inspect", "no package given");
  dml_rt_model_t *m = NULL;
  dml_status_t st = dml_rt_model_load_file(pkg, &m);
  if (st) return dmlc_report(st);
  if (json) {
    print_json(stdout, pkg, m);
    dml_rt_model_release(m);
    return 0;
  }
  char h[32], c1[32], c2[32];

  printf("package: %s\n", pkg);
  printf("format version: %" PRIu32 "\n", dml_rt_model_format_version(m));
  printf("file size: %" PRIu64 " bytes (%s)%s\n", dml_rt_model_file_size(m),
         human(dml_rt_model_file_size(m), h, sizeof h),
         dml_rt_model_is_mapped(m) ? ", memory-mapped" : "");
  printf("sections:\n  %-16s %12s %12s %6s  %s\n", "tag", "offset", "size", "align",
         "crc32");
  for (uint32_t i = 0; i < dml_rt_model_num_sections(m); i++) {
    dml_rt_section_info_t s;
    if (dml_rt_model_section_info(m, i, &s)) continue;
    printf("  %-16s %12" PRIu64 " %12" PRIu64 " %6" PRIu32 "  0x%08" PRIx32 "\n", s.tag,
           s.offset, s.size, s.alignment, s.crc32);
  }
  const char *meta = dml_rt_model_meta(m);
  printf("meta:\n");
  for (const char *p = meta; *p;) {
    const char *eol = strchr(p, '\n');
    int len = eol ? (int)(eol - p) : (int)strlen(p);
    printf("  %.*s\n", len, p);
    p += len + (eol ? 1 : 0);
  }
  char targets[256];
  if (!dml_rt_model_meta_get(m, "targets", targets, sizeof targets))
    snprintf(targets, sizeof targets, "cpu");
  printf("targets: %s\n", targets);
  uint32_t ns = dml_rt_model_num_symbols(m);
  printf("symbols:%s\n", ns ? "" : " (none: all shapes static)");
  for (uint32_t i = 0; i < ns; i++) {
    const char *name;
    int64_t bound;
    if (!dml_rt_model_symbol(m, i, &name, &bound))
      printf("  %s <= %" PRId64 "\n", name, bound);
  }
  printf("functions:");
  for (uint32_t i = 0; i < dml_rt_model_num_functions(m); i++)
    printf("%s %s", i ? "," : "", dml_rt_model_function_name(m, i));
  printf("\n");
  int nh = 0;
  each_placement(m, placement_text, &nh);
  print_io(m, 0);
  print_io(m, 1);
  printf("nodes: %" PRIu32 "\n", dml_rt_model_num_nodes(m));
  uint64_t wb = dml_rt_model_weights_bytes(m);
  printf("weights: %" PRIu64 " bytes (%s)\n", wb, human(wb, h, sizeof h));
  printf(
      "parameters: %" PRId64 " (%s) trainable, %" PRId64 " (%s) other constants\n",
      dml_rt_model_param_count(m), count_str(dml_rt_model_param_count(m), c1, sizeof c1),
      dml_rt_model_const_count(m), count_str(dml_rt_model_const_count(m), c2, sizeof c2));
  int64_t ab = dml_rt_model_arena_bytes(m), sb = dml_rt_model_scratch_bytes(m);
  printf("arena: %" PRId64 " bytes (%s) planned at the bounds\n", ab,
         human((uint64_t)ab, h, sizeof h));
  printf("cpu scratch: %" PRId64 " bytes (%s) at the bounds\n", sb,
         human((uint64_t)sb, h, sizeof h));
  dml_rt_model_release(m);
  return 0;
}
