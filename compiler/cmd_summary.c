/*
 * cmd_summary.c — `dmlc summary MODEL.onnx|PKG`: a table of layers (nodes)
 * with output shapes and parameter counts, then total / trainable /
 * non-trainable parameters and the planned memory.
 *
 * Parameters are the elements of the weights a layer reads (each counted
 * once, at its first reader): trainable when flagged PARAM (the importer
 * flags float initializers so), non-trainable when flagged STATE
 * (BatchNormalization running statistics). Other constants (shapes, axes,
 * Dropout's ratio, folded constants) are not parameters. Initializers the
 * exporter shared between layers count once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_driver.h"
#include "dml_ir.h"
#include "dml_onnx.h"
#include "dml_passes.h"
#include "dml_rt.h"
#include "dmlc_cmds.h"

typedef struct {
  char name[160];
  char op[40];
  char shape[160];
  int64_t params;
} row_t;

typedef struct {
  row_t *rows;
  size_t n, cap;
  int64_t trainable, non_trainable;
  int64_t arena_bytes; /* -1 when not planned */
  uint64_t weights_bytes;
} summary_t;

static row_t *add_row(summary_t *s) {
  if (s->n == s->cap) {
    size_t nc = s->cap ? s->cap * 2 : 64;
    row_t *r = (row_t *)realloc(s->rows, nc * sizeof(row_t));
    if (!r) return NULL;
    s->rows = r;
    s->cap = nc;
  }
  row_t *r = &s->rows[s->n++];
  memset(r, 0, sizeof *r);
  return r;
}

/* "235,146" */
static const char *with_commas(int64_t v, char *buf, size_t cap) {
  char tmp[32];
  snprintf(tmp, sizeof tmp, "%lld", (long long)(v < 0 ? -v : v));
  size_t len = strlen(tmp), k = 0;
  if (v < 0 && k < cap - 1) buf[k++] = '-';
  for (size_t i = 0; i < len && k < cap - 1; i++) {
    if (i && (len - i) % 3 == 0 && k < cap - 1) buf[k++] = ',';
    buf[k++] = tmp[i];
  }
  buf[k] = 0;
  return buf;
}

/* "235.1K", "1.2M", "512" */
static const char *short_form(int64_t v, char *buf, size_t cap) {
  if (v < 1000)
    snprintf(buf, cap, "%lld", (long long)v);
  else if (v < 1000000)
    snprintf(buf, cap, "%.1fK", (double)v / 1e3);
  else if (v < 1000000000)
    snprintf(buf, cap, "%.1fM", (double)v / 1e6);
  else
    snprintf(buf, cap, "%.1fB", (double)v / 1e9);
  return buf;
}

static const char *bytes_str(double b, char *buf, size_t cap) {
  if (b < 1024)
    snprintf(buf, cap, "%.0f B", b);
  else if (b < 1024 * 1024)
    snprintf(buf, cap, "%.1f KiB", b / 1024);
  else
    snprintf(buf, cap, "%.1f MiB", b / (1024 * 1024));
  return buf;
}

/* ---- from an ONNX model: import + shape inference ---- */

static dml_status_t from_onnx(const char *path, int64_t bound, summary_t *s) {
  dml_ir_module_t *m = NULL;
  dml_onnx_import_options_t io;
  memset(&io, 0, sizeof io);
  io.batch_bound = bound;
  DML_RETURN_IF_ERROR(dml_onnx_import_file(path, &io, &m));
  dml_pass_options_t po;
  memset(&po, 0, sizeof po);
  dml_status_t st = dml_pass_run_pipeline(m, "shape-infer", &po);
  dml_ir_function_t *f = st ? NULL : dml_ir_module_find_function(m, "forward");
  if (!st && !f)
    st = dml_status_make(DML_STATUS_NOT_FOUND, "summary", "no forward function");
  s->arena_bytes = -1;
  for (uint32_t i = 0; i < m->n_globals; i++) m->globals[i]->user = NULL;
  for (dml_ir_node_t *n = f ? f->first : NULL; n && !st; n = n->next) {
    row_t *r = add_row(s);
    if (!r) {
      st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "summary", "out of memory");
      break;
    }
    snprintf(r->name, sizeof r->name, "%s", n->name && *n->name ? n->name : "-");
    snprintf(r->op, sizeof r->op, "%s", dml_op_name(n->op));
    size_t k = 0;
    for (uint32_t o = 0; o < n->n_outputs && k < sizeof r->shape; o++) {
      /* user-visible outputs only: read by a node or returned (not Dropout's
       * unused mask); a node's sole output is always shown */
      if (n->n_outputs > 1 && !dml_ir_value_num_uses(f, n->outputs[o])) continue;
      char t[128];
      dml_ir_type_str(m, &n->outputs[o]->type, t, sizeof t);
      /* Drop the dtype prefix "f32": the table shows shapes. */
      const char *br = strchr(t, '[');
      k += (size_t)snprintf(r->shape + k, sizeof r->shape - k, "%s%s", k ? " " : "",
                            br ? br : t);
    }
    for (uint32_t i = 0; i < n->n_inputs; i++) {
      dml_ir_value_t *v = n->inputs[i];
      if (!v || v->kind != DML_IR_VALUE_GLOBAL || v->user ||
          !(v->global_flags & (DML_IR_GLOBAL_PARAM | DML_IR_GLOBAL_STATE)))
        continue;
      v->user = (void *)1;
      int64_t cnt = dml_ir_type_numel_bound(m, &v->type);
      if (cnt < 0) continue;
      r->params += cnt;
      if (v->global_flags & DML_IR_GLOBAL_PARAM)
        s->trainable += cnt;
      else
        s->non_trainable += cnt;
    }
  }
  for (uint32_t i = 0; i < m->n_globals; i++) {
    m->globals[i]->user = NULL;
    s->weights_bytes += m->globals[i]->data_bytes;
  }
  dml_ir_module_release(m);
  return st;
}

/* ---- from a package ---- */

static void io_shape_str(const dml_rt_io_info_t *t, char *buf, size_t cap) {
  size_t k = (size_t)snprintf(buf, cap, "[");
  for (int32_t d = 0; d < t->rank && k < cap; d++) {
    if (t->dim_symbol[d]) {
      if (t->dim_multiplier[d] == 1)
        k += (size_t)snprintf(buf + k, cap - k, "%s%s", d ? "," : "", t->dim_symbol[d]);
      else
        k += (size_t)snprintf(buf + k, cap - k, "%s%lld*%s", d ? "," : "",
                              (long long)t->dim_multiplier[d], t->dim_symbol[d]);
    } else {
      k += (size_t)snprintf(buf + k, cap - k, "%s%lld", d ? "," : "",
                            (long long)t->dims[d]);
    }
  }
  if (k < cap) snprintf(buf + k, cap - k, "]");
}

static dml_status_t from_package(const char *path, summary_t *s) {
  dml_rt_model_t *m = NULL;
  DML_RETURN_IF_ERROR(dml_rt_model_load_file(path, &m));
  dml_status_t st = DML_OK;
  uint32_t nn = dml_rt_model_num_nodes(m);
  /* Constants are identified by their offset in the weights section. */
  uint64_t *seen = (uint64_t *)calloc((size_t)nn * 8 + 1, sizeof(uint64_t));
  size_t n_seen = 0;
  s->arena_bytes = dml_rt_model_arena_bytes(m);
  s->weights_bytes = dml_rt_model_weights_bytes(m);
  for (uint32_t i = 0; i < nn && !st; i++) {
    dml_rt_node_info_t ni;
    st = dml_rt_model_node_info(m, i, &ni);
    row_t *r = st ? NULL : add_row(s);
    if (!st && !r)
      st = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "summary", "out of memory");
    if (st) break;
    snprintf(r->name, sizeof r->name, "%s", *ni.name ? ni.name : "-");
    snprintf(r->op, sizeof r->op, "%s", ni.op_name);
    size_t k = 0;
    for (uint32_t o = 0; o < ni.n_outputs && !st && k < sizeof r->shape; o++) {
      if (ni.n_outputs > 1 && !dml_rt_model_node_output_used(m, i, o)) continue;
      dml_rt_value_info_t vi;
      st = dml_rt_model_node_output(m, i, o, &vi);
      char t[128];
      if (!st) io_shape_str(&vi.type, t, sizeof t);
      if (!st)
        k += (size_t)snprintf(r->shape + k, sizeof r->shape - k, "%s%s", k ? " " : "", t);
    }
    for (uint32_t in = 0; in < ni.n_inputs && !st; in++) {
      dml_rt_value_info_t vi;
      st = dml_rt_model_node_input(m, i, in, &vi);
      if (st || !vi.present || vi.storage != DML_RT_STORAGE_CONST ||
          !(vi.flags & (DML_RT_VALUE_PARAM | DML_RT_VALUE_STATE)))
        continue;
      int dup = 0;
      for (size_t j = 0; j < n_seen && !dup; j++) dup = seen[j] == vi.offset;
      if (dup || !seen) continue;
      if (n_seen < (size_t)nn * 8 + 1) seen[n_seen++] = vi.offset;
      r->params += vi.numel_bound;
      if (vi.flags & DML_RT_VALUE_PARAM)
        s->trainable += vi.numel_bound;
      else
        s->non_trainable += vi.numel_bound;
    }
  }
  free(seen);
  dml_rt_model_release(m);
  return st;
}

static int ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && !strcmp(s + a - b, suffix);
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: dmlc summary MODEL.onnx|PKG.dmlpkg [--batch-bound N] [--json]\n\n"
          "Prints every layer (node) with its output shapes (those a node reads or the\n"
          "model returns: not Dropout's unused mask) and parameter count, then\n"
          "total, trainable and non-trainable parameters (with a short form such as\n"
          "235.1K) and the memory: weights, and for a package the planned arena.\n\n"
          "  --batch-bound N   bound for symbolic dims when reading ONNX (default 64)\n"
          "  --json            one JSON object instead: model, layers [{name, op,\n"
          "                    output_shape (as the table's column), params}],\n"
          "                    total_params, trainable_params, non_trainable_params,\n"
          "                    weights_bytes, arena_bytes (null for ONNX: not planned)\n"
          "  -h, --help        this text\n");
}

/* `dmlc summary --json`: the table and totals as one JSON object. */
static void print_json(FILE *f, const char *path, const summary_t *s) {
  fputs("{\"model\": ", f);
  dmlc_json_str(f, path);
  fputs(", \"layers\": [", f);
  for (size_t i = 0; i < s->n; i++) {
    fputs(i ? ", {\"name\": " : "{\"name\": ", f);
    dmlc_json_str(f, strcmp(s->rows[i].name, "-") ? s->rows[i].name : "");
    fputs(", \"op\": ", f);
    dmlc_json_str(f, s->rows[i].op);
    fputs(", \"output_shape\": ", f);
    dmlc_json_str(f, s->rows[i].shape);
    fprintf(f, ", \"params\": %lld}", (long long)s->rows[i].params);
  }
  fprintf(f,
          "], \"total_params\": %lld, \"trainable_params\": %lld, "
          "\"non_trainable_params\": %lld, \"weights_bytes\": %llu, \"arena_bytes\": ",
          (long long)(s->trainable + s->non_trainable), (long long)s->trainable,
          (long long)s->non_trainable, (unsigned long long)s->weights_bytes);
  if (s->arena_bytes >= 0)
    fprintf(f, "%lld}\n", (long long)s->arena_bytes);
  else
    fputs("null}\n", f);
}

int dmlc_cmd_summary(int argc, char **argv) {
  const char *path = NULL;
  int64_t bound = 64;
  int json = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(argv[i], "--json")) {
      json = 1;
    } else if (!strcmp(argv[i], "--batch-bound") && i + 1 < argc) {
      const char *v = argv[++i];
      char *end;
      bound = strtoll(v, &end, 10);
      if (*end || bound < 1 || bound > (int64_t)1 << 31) {
        return dmlc_usage_error("summary",
                                "--batch-bound needs an integer in 1..2^31, got '%s'", v);
      }
    } else if (argv[i][0] == '-' || path) {
      return dmlc_usage_error("summary", "unexpected argument '%s'", argv[i]);
    } else {
      path = argv[i];
    }
  }
  if (!path) return dmlc_usage_error("summary", "no model or package given");
  summary_t s;
  memset(&s, 0, sizeof s);
  dml_status_t st =
      ends_with(path, ".onnx") ? from_onnx(path, bound, &s) : from_package(path, &s);
  if (st) {
    free(s.rows);
    return dmlc_report(st);
  }
  if (json) {
    print_json(stdout, path, &s);
    free(s.rows);
    return 0;
  }
  int wn = 20, ws = 12;
  for (size_t i = 0; i < s.n; i++) {
    int l = (int)(strlen(s.rows[i].name) + strlen(s.rows[i].op) + 3);
    if (l > wn) wn = l;
    if ((int)strlen(s.rows[i].shape) > ws) ws = (int)strlen(s.rows[i].shape);
  }
  if (wn > 60) wn = 60;
  printf("Model: %s\n", path);
  printf("%-*s  %-*s  %12s\n", wn, "Layer (op)", ws, "Output shape", "Params");
  int width = wn + ws + 16;
  for (int i = 0; i < width; i++) putchar('=');
  putchar('\n');
  char a[48], b[48];
  for (size_t i = 0; i < s.n; i++) {
    char label[256];
    snprintf(label, sizeof label, "%s (%s)", s.rows[i].name, s.rows[i].op);
    if ((int)strlen(label) > wn) { /* keep the columns aligned: "...tail (Op)" */
      size_t keep = (size_t)wn - 3;
      memmove(label + 3, label + strlen(label) - keep, keep + 1);
      memcpy(label, "...", 3);
    }
    printf("%-*s  %-*s  %12s\n", wn, label, ws, s.rows[i].shape,
           with_commas(s.rows[i].params, a, sizeof a));
  }
  for (int i = 0; i < width; i++) putchar('=');
  putchar('\n');
  int64_t total = s.trainable + s.non_trainable;
  printf("Total params: %s (%s)\n", with_commas(total, a, sizeof a),
         short_form(total, b, sizeof b));
  printf("Trainable params: %s (%s)\n", with_commas(s.trainable, a, sizeof a),
         short_form(s.trainable, b, sizeof b));
  printf("Non-trainable params: %s (%s)\n", with_commas(s.non_trainable, a, sizeof a),
         short_form(s.non_trainable, b, sizeof b));
  printf("Weights: %s\n", bytes_str((double)s.weights_bytes, a, sizeof a));
  if (s.arena_bytes >= 0)
    printf("Planned arena (activations at the batch bound): %s\n",
           bytes_str((double)s.arena_bytes, a, sizeof a));
  else
    printf("Planned arena: compile to a package to plan memory\n");
  free(s.rows);
  return 0;
}
