/*
 * pass_manager.c — the pass table (expanded from passes.def), pipeline
 * parsing and running, and MLIR-style IR dumps between passes.
 *
 * A pipeline is "name,name,..." with the CLI names of passes.def; spaces
 * around names and empty entries are ignored. Every name (and the name given
 * to print_ir_after) is checked before any pass runs, so a typo never leaves
 * the module half transformed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_ir_text.h"
#include "dml_passes.h"

/* ==== the table ========================================================= */

static const dml_pass_info_t k_passes[] = {
#define DML_PASS(c_name, cli, summary) {cli, summary, dml_pass_##c_name},
#include "passes.def"
#undef DML_PASS
};

#define N_PASSES (sizeof(k_passes) / sizeof(k_passes[0]))

/* ",shape-infer,const-fold,..." — the default pipeline is passes.def's order;
 * dml_pass_default_pipeline() skips the leading comma. */
static const char k_default_pipeline[] =
#define DML_PASS(c_name, cli, summary) "," cli
#include "passes.def"
#undef DML_PASS
    ;

const dml_pass_info_t *dml_pass_list(size_t *out_count) {
  if (out_count) *out_count = N_PASSES;
  return k_passes;
}

const dml_pass_info_t *dml_pass_find(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < N_PASSES; i++)
    if (strcmp(k_passes[i].name, name) == 0) return &k_passes[i];
  return NULL;
}

const char *dml_pass_default_pipeline(void) {
  return k_default_pipeline + 1;
}

/* ==== pipeline parsing ================================================== */

/* Finds the pass whose name is the `len` characters at `s`. */
static const dml_pass_info_t *find_n(const char *s, size_t len) {
  for (size_t i = 0; i < N_PASSES; i++)
    if (strlen(k_passes[i].name) == len && memcmp(k_passes[i].name, s, len) == 0)
      return &k_passes[i];
  return NULL;
}

/* Splits `list` at commas and calls `fn` on every trimmed, non-empty entry.
 * Stops at the first non-OK status. */
typedef dml_status_t (*entry_fn)(const char *s, size_t len, void *ctx);
static dml_status_t for_each_entry(const char *list, entry_fn fn, void *ctx) {
  const char *p = list;
  while (p && *p) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    const char *s = p;
    while (len && (*s == ' ' || *s == '\t')) s++, len--;
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t')) len--;
    if (len) DML_RETURN_IF_ERROR(fn(s, len, ctx));
    p = e ? e + 1 : NULL;
  }
  return DML_OK;
}

static dml_status_t unknown_pass(const char *what, const char *s, size_t len) {
  /* "shape-infer, const-fold, ..." */
  char known[1024];
  size_t k = 0;
  known[0] = 0;
  for (size_t i = 0; i < N_PASSES && k < sizeof(known); i++)
    k += (size_t)snprintf(known + k, sizeof(known) - k, "%s%s", i ? ", " : "",
                          k_passes[i].name);
  return dml_status_detail(
      dml_status_make(DML_STATUS_INVALID_ARGUMENT, "passes", "unknown pass '%.*s' in %s",
                      (int)len, s, what),
      "valid passes: %s", known);
}

typedef struct {
  const dml_pass_info_t **passes;
  size_t n, cap;
} pass_vec_t;

static dml_status_t collect_pass(const char *s, size_t len, void *ctx) {
  pass_vec_t *v = (pass_vec_t *)ctx;
  const dml_pass_info_t *p = find_n(s, len);
  if (!p) return unknown_pass("the pipeline", s, len);
  if (v->n == v->cap) {
    size_t nc = v->cap ? v->cap * 2 : 8;
    const dml_pass_info_t **np =
        (const dml_pass_info_t **)realloc((void *)v->passes, nc * sizeof(*np));
    if (!np)
      return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "passes", "out of memory");
    v->passes = np;
    v->cap = nc;
  }
  v->passes[v->n++] = p;
  return DML_OK;
}

static dml_status_t check_dump_name(const char *s, size_t len, void *ctx) {
  (void)ctx;
  return find_n(s, len) ? DML_OK : unknown_pass("--print-ir-after", s, len);
}

typedef struct {
  const char *name;
  int found;
} name_query_t;

static dml_status_t match_name(const char *s, size_t len, void *ctx) {
  name_query_t *q = (name_query_t *)ctx;
  if (strlen(q->name) == len && memcmp(q->name, s, len) == 0) q->found = 1;
  return DML_OK;
}

/* 1 when the IR is to be dumped after pass `name`. */
static int wants_dump(const dml_pass_options_t *o, const char *name) {
  if (o->print_ir_after_all) return 1;
  if (!o->print_ir_after) return 0;
  name_query_t q = {name, 0};
  (void)for_each_entry(o->print_ir_after, match_name, &q);
  return q.found;
}

/* ==== running =========================================================== */

static dml_status_t dump_after(dml_ir_module_t *m, const dml_pass_options_t *o,
                               const char *name) {
  FILE *out = o->dump ? o->dump : stderr;
  dml_ir_print_options_t po;
  memset(&po, 0, sizeof(po));
  po.elide_elements_over = o->dump_elide_elements_over;
  po.print_locations = 0;
  if (fprintf(out, "// -----// IR Dump After %s //----- //\n", name) < 0)
    return dml_status_make(DML_STATUS_IO, "passes", "cannot write the IR dump");
  DML_RETURN_IF_ERROR(dml_ir_print_module(m, &po, out));
  if (fputc('\n', out) == EOF || fflush(out) == EOF)
    return dml_status_make(DML_STATUS_IO, "passes", "cannot write the IR dump");
  return DML_OK;
}

dml_status_t dml_pass_run_pipeline(dml_ir_module_t *m, const char *pipeline,
                                   dml_pass_options_t *o) {
  dml_pass_options_t defaults;
  if (!o) {
    memset(&defaults, 0, sizeof(defaults));
    o = &defaults;
  }
  if (o->print_ir_after)
    DML_RETURN_IF_ERROR(for_each_entry(o->print_ir_after, check_dump_name, NULL));
  pass_vec_t v = {NULL, 0, 0};
  dml_status_t s = for_each_entry(pipeline ? pipeline : "", collect_pass, &v);
  /* Types must stay known once shape inference has run. */
  int types_known = 0;
  for (size_t i = 0; !s && i < v.n; i++) {
    const dml_pass_info_t *p = v.passes[i];
    s = p->run(m, o);
    if (!s && strcmp(p->name, "shape-infer") == 0) types_known = 1;
    if (!s && o->verify_each) {
      s = dml_ir_verify(m, types_known);
      if (s) s = dml_status_annotate(s, "verifying the IR after pass '%s'", p->name);
    } else if (s) {
      s = dml_status_annotate(s, "running pass '%s'", p->name);
    }
    if (!s && wants_dump(o, p->name)) s = dump_after(m, o, p->name);
  }
  free((void *)v.passes);
  return s;
}
