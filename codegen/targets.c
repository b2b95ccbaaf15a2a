/* targets.c — GPU targets' op lists and the package's kernel sections
 * (dml_codegen.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dml_codegen.h"
#include "dml_kpkg.h"

int dml_codegen_supports(const char *target, dml_op_t op) {
  /* Metal's kernels are translated from the same SPIR-V, CUDA's rendered
   * from the same kernel IR: one list. */
  if (!target ||
      (strcmp(target, "vulkan") && strcmp(target, "metal") && strcmp(target, "cuda")))
    return 0;
  return dml_kschedule_handles(op);
}

/* 1 when node `n` of `f` reads or writes a value of dtype `dt`. */
static int node_has_dtype(const dml_pkg_function_t *f, const dml_pkg_node_t *n,
                          dml_dtype_t dt) {
  for (uint32_t i = 0; i < n->n_inputs; i++)
    if (n->inputs[i] != DML_PKG_NO_VALUE && n->inputs[i] < f->n_values &&
        f->values[n->inputs[i]].type.dtype == dt)
      return 1;
  for (uint32_t i = 0; i < n->n_outputs; i++)
    if (n->outputs[i] != DML_PKG_NO_VALUE && n->outputs[i] < f->n_values &&
        f->values[n->outputs[i]].type.dtype == dt)
      return 1;
  return 0;
}

/* Metal has no 64-bit floats (MSL's double does not exist on Apple GPUs):
 * the metal target refuses every node holding an f64 value, listing them
 * by op. Vulkan (shaderFloat64) and CUDA hold f64. */
static dml_status_t check_dtypes(const char *target, const dml_pkg_graph_t *g,
                                 uint32_t f0, uint32_t f1) {
  if (strcmp(target, "metal")) return DML_OK;
  uint32_t count[DML_OP_COUNT_];
  memset(count, 0, sizeof count);
  for (uint32_t f = f0; f < f1; f++)
    for (uint32_t i = 0; i < g->functions[f].n_nodes; i++) {
      const dml_pkg_node_t *n = &g->functions[f].nodes[i];
      if ((unsigned)n->op < DML_OP_COUNT_ &&
          node_has_dtype(&g->functions[f], n, DML_DTYPE_F64))
        count[n->op]++;
    }
  dml_status_t s = DML_OK;
  for (int op = 0; op < DML_OP_COUNT_; op++) {
    if (!count[op]) continue;
    if (!s)
      s = dml_status_make(DML_STATUS_UNIMPLEMENTED, "codegen.metal",
                          "target 'metal' cannot hold f64 values (Metal has no 64-bit "
                          "floats; no CPU fall-back)");
    s = dml_status_detail(s, "%s: %u node%s with f64 values", dml_op_name((dml_op_t)op),
                          count[op], count[op] == 1 ? "" : "s");
  }
  return s;
}

/* String and float8 tensors are CPU only (no GPU kernel reads float8: the
 * CPU fall-back runs their nodes on the host): the first node that reads
 * or writes one is named (its op, the value). */
static dml_status_t check_no_strings(const char *target, const dml_pkg_graph_t *g,
                                     uint32_t f0, uint32_t f1) {
  for (uint32_t f = f0; f < f1; f++) {
    const dml_pkg_function_t *fn = &g->functions[f];
    for (uint32_t i = 0; i < fn->n_nodes; i++) {
      const dml_pkg_node_t *n = &fn->nodes[i];
      for (uint32_t j = 0; j < n->n_inputs + n->n_outputs; j++) {
        uint32_t v = j < n->n_inputs ? n->inputs[j] : n->outputs[j - n->n_inputs];
        if (v == DML_PKG_NO_VALUE || v >= fn->n_values ||
            (fn->values[v].type.dtype != DML_DTYPE_STRING &&
             !dml_dtype_is_float8(fn->values[v].type.dtype)))
          continue;
        int str = fn->values[v].type.dtype == DML_DTYPE_STRING;
        return dml_status_detail(
            dml_status_make(DML_STATUS_UNIMPLEMENTED,
                            !strcmp(target, "metal")  ? "codegen.metal"
                            : !strcmp(target, "cuda") ? "codegen.cuda"
                                                      : "codegen.vulkan",
                            "target '%s' cannot run %s tensors (CPU only; no CPU "
                            "fall-back): node '%s' (%s) %s %s value '%s'",
                            target, str ? "string" : "float8", n->name, n->op_name,
                            j < n->n_inputs ? "reads" : "writes",
                            str ? "string" : dml_dtype_name(fn->values[v].type.dtype),
                            fn->values[v].name),
            "compile for --target cpu to run this model");
      }
    }
  }
  return DML_OK;
}

/* The checks of dml_codegen_check_ops over functions f0..f1-1 of `g`. */
static dml_status_t check_ops(const char *target, const dml_pkg_graph_t *g, uint32_t f0,
                              uint32_t f1) {
  DML_RETURN_IF_ERROR(check_no_strings(target, g, f0, f1));
  uint32_t count[DML_OP_COUNT_];
  memset(count, 0, sizeof count);
  for (uint32_t f = f0; f < f1; f++)
    for (uint32_t i = 0; i < g->functions[f].n_nodes; i++) {
      dml_op_t op = g->functions[f].nodes[i].op;
      if ((unsigned)op < DML_OP_COUNT_ && !dml_codegen_supports(target, op)) count[op]++;
    }
  dml_status_t s = DML_OK;
  for (int op = 0; op < DML_OP_COUNT_; op++) {
    if (!count[op]) continue;
    if (!s)
      s = dml_status_make(
          DML_STATUS_UNIMPLEMENTED,
          !strcmp(target, "metal")  ? "codegen.metal"
          : !strcmp(target, "cuda") ? "codegen.cuda"
                                    : "codegen.vulkan",
          "target '%s' cannot emit every op of the model (no CPU fall-back)", target);
    s = dml_status_detail(s, "%s: %u node%s", dml_op_name((dml_op_t)op), count[op],
                          count[op] == 1 ? "" : "s");
  }
  if (s) return s;
  return check_dtypes(target, g, f0, f1);
}

dml_status_t dml_codegen_check_ops(const char *target, const dml_pkg_graph_t *g) {
  return check_ops(target, g, 0, g->n_functions);
}

dml_status_t dml_codegen_check_function(const char *target, const dml_pkg_graph_t *g,
                                        uint32_t fn) {
  if (fn >= g->n_functions)
    return dml_status_make(DML_STATUS_OUT_OF_RANGE, "codegen", "function %u of %u", fn,
                           g->n_functions);
  return check_ops(target, g, fn, fn + 1);
}

void dml_codegen_fallback_release(dml_codegen_fallback_t *fb) {
  if (!fb) return;
  free(fb->text);
  memset(fb, 0, sizeof *fb);
}

/* Appends printf-formatted text to fb->text. 0 when out of memory. */
static int fb_append(dml_codegen_fallback_t *fb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return 0;
  size_t len = fb->text ? strlen(fb->text) : 0;
  char *t = (char *)realloc(fb->text, len + (size_t)n + 1);
  if (!t) return 0;
  fb->text = t;
  va_start(ap, fmt);
  vsnprintf(t + len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return 1;
}

dml_status_t dml_codegen_fallback_add(dml_codegen_fallback_t *fb, const char *target,
                                      const dml_pkg_graph_t *g, uint32_t fn,
                                      const char *where, dml_status_t why) {
  /* one line: op, reason and details (their newlines turned into "; ") */
  const char *det = dml_status_details(why);
  size_t line = fb->text ? strlen(fb->text) : 0;
  int ok = fb_append(fb, "%s\t%s\t%s: %s: %s%s", target, g->functions[fn].name,
                     where ? where : "whole function", dml_status_op(why),
                     dml_status_reason(why), det && *det ? " (" : "");
  size_t at = fb->text ? strlen(fb->text) : 0;
  if (ok && det && *det) {
    /* the details' lines joined by "; " (no tab, no newline) */
    size_t dn = strlen(det);
    char *d = (char *)malloc(2 * dn + 1), *o = d;
    for (const char *c = det; d && *c; c++) {
      if (*c == '\n') {
        if (c[1]) *o++ = ';', *o++ = ' ';
      } else {
        *o++ = *c == '\t' ? ' ' : *c;
      }
    }
    if (d) *o = 0;
    ok = d && fb_append(fb, "%s)", d);
    free(d);
  }
  for (char *c = ok ? fb->text + at : NULL; c && *c; c++)
    if (*c == '\n' || *c == '\t') *c = ' ';
  /* the strict error's words do not apply here */
  for (char *c =
           ok ? strstr(fb->text + line, "compile for --target cpu to run this model")
              : NULL;
       c; c = strstr(c, "compile for --target cpu to run this model")) {
    char *from = c, *to = c + 42;
    if (from >= fb->text + line + 2 && from[-2] == ';' && from[-1] == ' ')
      from -= 2; /* the "; " before it */
    else if (to[0] == ';' && to[1] == ' ')
      to += 2; /* the "; " after it */
    memmove(from, to, strlen(to) + 1);
  }
  for (char *c = ok ? strstr(fb->text + line, " (no CPU fall-back)") : NULL; c;
       c = strstr(c, " (no CPU fall-back)"))
    memmove(c, c + 19, strlen(c + 19) + 1);
  for (char *c = ok ? strstr(fb->text + line, "; no CPU fall-back") : NULL; c;
       c = strstr(c, "; no CPU fall-back"))
    memmove(c, c + 18, strlen(c + 18) + 1);
  for (char *c = ok ? strstr(fb->text + line, " ()") : NULL; c; c = strstr(c, " ()"))
    memmove(c, c + 3, strlen(c + 3) + 1);
  if (ok) ok = fb_append(fb, "\n");
  dml_status_free(why);
  if (!ok)
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen", "out of memory");
  fb->n_host++;
  return DML_OK;
}

static void to_lin(dml_klin_t l, dml_kpkg_lin_t *o) {
  o->c0 = l.c0;
  o->c = l.c;
  o->sym = l.sym;
  o->more = l.more;
}

/* Renders the kernels of plan `p` into target tables' function `f`. */
static dml_status_t render(const dml_kplan_t *p, uint32_t n_symbols,
                           dml_kpkg_function_t *fs, dml_kpkg_function_t *fm) {
  for (uint32_t i = 0; i < p->n_kernels; i++) {
    const dml_kernel_t *K = &p->kernels[i];
    dml_kpkg_function_t *fns[2] = {fs, fm};
    for (int t = 0; t < 2; t++) {
      if (!fns[t]) continue;
      dml_kpkg_kernel_t *o = &fns[t]->kernels[i];
      snprintf(o->name, sizeof o->name, "%s", K->name);
      o->kind = (uint32_t)K->kind;
      o->n_nodes = K->n_nodes;
      o->nodes = (uint32_t *)malloc(K->n_nodes * sizeof(uint32_t));
      if (!o->nodes)
        return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen", "out of memory");
      memcpy(o->nodes, K->nodes, K->n_nodes * sizeof(uint32_t));
      memcpy(o->local, K->local, sizeof o->local);
      for (int d = 0; d < 3; d++) to_lin(K->items[d], &o->items[d]);
      to_lin(K->flops, &o->flops);
      to_lin(K->bytes, &o->bytes);
    }
    char *glsl = NULL;
    uint32_t *words = NULL;
    size_t nw = 0;
    if (K->kind == DML_KK_HOST) continue; /* host nodes: no code (dml_kpkg.h) */
    DML_RETURN_IF_ERROR(dml_codegen_glsl(K, n_symbols, &glsl));
    dml_status_t s = dml_codegen_spirv(glsl, K->name, &words, &nw);
    free(glsl);
    if (s) return s;
    if (fm && (dml_kernel_dtypes(K) & (1u << DML_KT_F64))) {
      /* f64 registers in a kernel of f32 values (Resize with run-time
       * scales computes its coordinates in f64): check_dtypes saw no f64
       * value, but Metal cannot run it either */
      free(words);
      return dml_status_make(DML_STATUS_UNIMPLEMENTED, "codegen.metal",
                             "target 'metal' cannot run kernel %s: it computes in f64 "
                             "(Metal has no 64-bit floats; no CPU fall-back)",
                             K->name);
    }
    if (fm) {
      char *msl = NULL;
      s = dml_codegen_msl(words, nw, K->name, &msl);
      if (s) {
        free(words);
        return s;
      }
      fm->kernels[i].code = (const uint8_t *)msl;
      fm->kernels[i].code_bytes = (uint32_t)strlen(msl);
    }
    if (fs) {
      fs->kernels[i].code = (const uint8_t *)words;
      fs->kernels[i].code_bytes = (uint32_t)(nw * 4);
    } else {
      free(words);
    }
  }
  return DML_OK;
}

static void free_fn_code(dml_kpkg_function_t *f) {
  for (uint32_t i = 0; i < f->n_kernels; i++) {
    free((void *)f->kernels[i].code);
    free(f->kernels[i].nodes);
  }
  free(f->kernels);
  memset(f, 0, sizeof *f);
}

static void free_kpkg_code(dml_kpkg_t *k) {
  for (uint32_t f = 0; f < k->n_functions; f++) free_fn_code(&k->functions[f]);
  free(k->functions);
}

/* 1 when `s` is an error the CPU fall-back takes over (the target cannot
 * emit something: UNIMPLEMENTED); other errors stop the compile. */
static int falls_back(dml_status_t s) {
  return s && dml_status_code(s) == DML_STATUS_UNIMPLEMENTED;
}

/* 1 when node `n` of `f` is one `target` cannot run at all: an op outside
 * its list, string or float8 tensors, f64 values on metal. */
static int node_refused(const char *target, const dml_pkg_function_t *f,
                        const dml_pkg_node_t *n) {
  if ((unsigned)n->op < DML_OP_COUNT_ && !dml_codegen_supports(target, n->op)) return 1;
  if (node_has_dtype(f, n, DML_DTYPE_STRING)) return 1;
  for (int dt = DML_DTYPE_F8E4M3FN; dt <= DML_DTYPE_F8E8M0; dt++)
    if (node_has_dtype(f, n, (dml_dtype_t)dt)) return 1; /* float8: CPU only */
  return !strcmp(target, "metal") && node_has_dtype(f, n, DML_DTYPE_F64);
}

/* Why per-segment placement does not apply to host nodes `host` of
 * function `fi` in plan `p`, or NULL: a host node that writes a global; a
 * host node inside a kernel. (Host nodes may run If and Loop, whose
 * branches and bodies run on the CPU, and decide data-dependent dims: the
 * runtime sets the symbols before it records the device's next segment.) */
static const char *segments_reject(const dml_pkg_graph_t *g, uint32_t fi,
                                   const uint8_t *host, const dml_kplan_t *p) {
  const dml_pkg_function_t *f = &g->functions[fi];
  uint32_t gpu = 0;
  for (uint32_t k = 0; k < p->n_kernels; k++) {
    const dml_kernel_t *K = &p->kernels[k];
    if (K->kind != DML_KK_HOST) gpu++;
    for (uint32_t j = 0; j < K->n_nodes; j++)
      if ((K->kind == DML_KK_HOST) != (host[K->nodes[j]] != 0))
        return "a kernel holds a node of the host";
  }
  if (!gpu) return "no node of the function runs on the device";
  for (uint32_t i = 0; i < f->n_nodes; i++) {
    if (!host[i]) continue;
    const dml_pkg_node_t *nd = &f->nodes[i];
    if (nd->op == DML_OP_ASSIGN) return "a host node writes a global";
    /* the values a host node reads or writes may cross between the device
     * and the host: each needs a size at the bounds within its planned
     * bytes (the runtime copies them at the run's sizes) */
    for (uint32_t q = 0; q < nd->n_inputs + nd->n_outputs; q++) {
      uint32_t v = q < nd->n_inputs ? nd->inputs[q] : nd->outputs[q - nd->n_inputs];
      if (v == DML_PKG_NO_VALUE || v >= f->n_values) continue;
      const dml_pkg_value_t *val = &f->values[v];
      if (val->type.dtype == DML_DTYPE_STRING || val->storage == DML_PKG_STORAGE_CONST)
        continue;
      int64_t b = dml_pkg_type_bytes_bound(&val->type, g->symbols, g->n_symbols);
      if (b < 0 || (uint64_t)b > val->bytes || val->offset + (uint64_t)b > f->arena_bytes)
        return "a value crossing between the host and the device has no size at the "
               "bounds";
    }
  }
  return NULL;
}

/* Where `target` runs function `fi` (the CPU fall-back). *out_plan gets
 * the plan: the device's kernels, with host entries (DML_KK_HOST) for the
 * nodes placed on the host (per-segment placement; *out_n_host of them,
 * *out_why saying why) or none (*out_n_host 0, *out_why OK); or NULL
 * when the whole function runs on the host (*out_why says why). Errors:
 * the scheduler's other than UNIMPLEMENTED; RESOURCE_EXHAUSTED. */
dml_status_t dml_codegen_place(const char *target, const dml_pkg_graph_t *g, uint32_t fi,
                               const uint8_t *weights, uint64_t weights_size,
                               dml_kplan_t **out_plan, uint32_t *out_n_host,
                               dml_status_t *out_why, char *where, size_t where_cap) {
  const dml_pkg_function_t *f = &g->functions[fi];
  uint32_t nn = f->n_nodes;
  *out_plan = NULL;
  *out_n_host = 0;
  *out_why = DML_OK;
  uint8_t *host = (uint8_t *)calloc(nn ? nn : 1, 1);
  uint8_t *refused = (uint8_t *)calloc(nn ? nn : 1, 1);
  if (!host || !refused) {
    free(host);
    free(refused);
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen", "out of memory");
  }
  uint32_t n_host = 0;
  for (uint32_t i = 0; i < nn; i++)
    n_host += host[i] = (uint8_t)node_refused(target, f, &f->nodes[i]);
  /* why: the target's op/dtype check, then each scheduling round's refusals */
  dml_status_t why = dml_codegen_check_function(target, g, fi);
  dml_kplan_t *p = NULL;
  dml_status_t s = DML_OK;
  for (int round = 0; round < 16; round++) {
    memset(refused, 0, nn ? nn : 1);
    s = dml_kschedule_host(g, fi, weights, weights_size, n_host ? host : NULL, refused,
                           &p);
    if (!s || !falls_back(s)) break;
    uint32_t more = 0;
    for (uint32_t i = 0; i < nn; i++)
      if (refused[i] && !host[i]) host[i] = 1, more++;
    if (!why) {
      why = s;
    } else {
      const char *d = dml_status_details(s);
      while (d && *d) { /* the scheduler's reasons, one detail each */
        const char *e = strchr(d, '\n');
        int len = e ? (int)(e - d) : (int)strlen(d);
        if (len) why = dml_status_detail(why, "%.*s", len, d);
        d += len + (e ? 1 : 0);
      }
      dml_status_free(s);
    }
    s = DML_OK;
    if (!more) break; /* refused without naming a node: the whole function */
    n_host += more;
  }
  if (s) { /* not the fall-back's: the compile stops */
    dml_status_free(why);
    free(host);
    free(refused);
    return s;
  }
  if (p && !n_host) { /* the device runs it all */
    free(host);
    free(refused);
    dml_status_free(why);
    *out_plan = p;
    return DML_OK;
  }
  const char *rej = p ? segments_reject(g, fi, host, p) : "the scheduler refused it";
  if (!why) /* cannot happen: host nodes come with reasons */
    why = dml_status_make(DML_STATUS_UNIMPLEMENTED, "codegen", "nodes on the host");
  *out_why = why;
  if (rej) {
    dml_kplan_release(p);
    snprintf(where, where_cap, "whole function (per-segment placement: %s)", rej);
  } else {
    /* name them (the first 16) */
    char list[768];
    size_t at = 0;
    uint32_t named = 0;
    list[0] = 0;
    for (uint32_t i = 0; i < nn && at < sizeof list; i++) {
      if (!host[i]) continue;
      if (named++ == 16) {
        snprintf(list + at, sizeof list - at, ", ... (%u more)", n_host - 16);
        break;
      }
      int k = snprintf(list + at, sizeof list - at, "%s%u '%.40s' (%s)",
                       named > 1 ? ", " : "", i, f->nodes[i].name ? f->nodes[i].name : "",
                       f->nodes[i].op_name);
      if (k < 0) break;
      at += (size_t)k;
    }
    *out_why = dml_status_detail(why, "host nodes: %s", list);
    *out_plan = p;
    *out_n_host = n_host;
    snprintf(where, where_cap, "%u of %u nodes on the host, the rest on the device",
             n_host, nn);
  }
  free(host);
  free(refused);
  return DML_OK;
}

dml_status_t dml_codegen_sections_fb(const dml_pkg_graph_t *g, const uint8_t *weights,
                                     uint64_t weights_size, int want_spirv, int want_msl,
                                     FILE *print, dml_codegen_fallback_t *fb,
                                     dml_kctab_place_t *ctabs, void **out_spirv,
                                     size_t *out_spirv_size, void **out_msl,
                                     size_t *out_msl_size) {
  if (!fb && want_spirv) DML_RETURN_IF_ERROR(dml_codegen_check_ops("vulkan", g));
  if (!fb && want_msl) DML_RETURN_IF_ERROR(dml_codegen_check_ops("metal", g));
  dml_kpkg_t ks = {DML_KPKG_TARGET_SPIRV, 0, NULL}, km = {DML_KPKG_TARGET_MSL, 0, NULL};
  dml_status_t s = DML_OK;
  uint32_t nf = g->n_functions;
  if (nf) {
    ks.functions = (dml_kpkg_function_t *)calloc(nf, sizeof *ks.functions);
    km.functions = (dml_kpkg_function_t *)calloc(nf, sizeof *km.functions);
    if (!ks.functions || !km.functions)
      s = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen", "out of memory");
  }
  for (uint32_t f = 0; !s && f < nf; f++) {
    if (!want_spirv && !want_msl) { /* --print-kernels alone */
      dml_kplan_t *p = NULL;
      s = dml_kschedule(g, f, weights, weights_size, &p);
      if (!s && print) dml_kplan_print(p, g, print);
      dml_kplan_release(p);
      if (s) s = dml_status_annotate(s, "function '%s'", g->functions[f].name);
      continue;
    }
    /* each target: its placement (the CPU fall-back: with fb, what it
     * cannot emit runs on the host, recorded in fb), then its kernels */
    int printed = 0;
    for (int t = 0; t < 2 && !s; t++) {
      if (!(t ? want_msl : want_spirv)) continue;
      const char *tgt = t ? "metal" : "vulkan";
      dml_kpkg_t *table = t ? &km : &ks;
      dml_kplan_t *p = NULL;
      dml_status_t why = DML_OK;
      uint32_t n_host = 0;
      char where[128] = "whole function";
      s = fb ? dml_codegen_place(tgt, g, f, weights, weights_size, &p, &n_host, &why,
                                 where, sizeof where)
             : dml_kschedule(g, f, weights, weights_size, &p);
      if (s) break;
      if (!p) { /* the whole function on the host */
        s = dml_codegen_fallback_add(fb, tgt, g, f, where, why);
        continue;
      }
      s = dml_kplan_place_ctabs(p, ctabs); /* large tables into the weights */
      if (s) {
        dml_kplan_release(p);
        dml_status_free(why);
        break;
      }
      if (print && !printed) dml_kplan_print(p, g, print);
      printed = 1;
      dml_kpkg_function_t *e = &table->functions[table->n_functions];
      e->function = f;
      e->kernels = p->n_kernels ? (dml_kpkg_kernel_t *)calloc(p->n_kernels,
                                                              sizeof(dml_kpkg_kernel_t))
                                : NULL;
      if (p->n_kernels && !e->kernels)
        s = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen", "out of memory");
      else
        e->n_kernels = p->n_kernels;
      if (!s) s = render(p, g->n_symbols, t ? NULL : e, t ? e : NULL);
      dml_kplan_release(p);
      if (s) free_fn_code(e);
      if (fb && falls_back(s)) {
        /* a kernel the target cannot render (Metal: f64 registers): the
         * function runs on the host */
        dml_status_free(why);
        why = s;
        s = dml_codegen_fallback_add(fb, tgt, g, f, "whole function", why);
        continue;
      }
      if (!s) table->n_functions++;
      if (!s && why)
        s = dml_codegen_fallback_add(fb, tgt, g, f, where, why);
      else
        dml_status_free(why);
    }
    if (s) s = dml_status_annotate(s, "function '%s'", g->functions[f].name);
  }
  if (!s && want_spirv) s = dml_kpkg_encode(&ks, out_spirv, out_spirv_size);
  if (!s && want_msl) s = dml_kpkg_encode(&km, out_msl, out_msl_size);
  if (s && want_spirv && *out_spirv) {
    free(*out_spirv);
    *out_spirv = NULL;
  }
  free_kpkg_code(&ks);
  free_kpkg_code(&km);
  return s;
}

dml_status_t dml_codegen_sections(const dml_pkg_graph_t *g, const uint8_t *weights,
                                  uint64_t weights_size, int want_spirv, int want_msl,
                                  FILE *print, void **out_spirv, size_t *out_spirv_size,
                                  void **out_msl, size_t *out_msl_size) {
  return dml_codegen_sections_fb(g, weights, weights_size, want_spirv, want_msl, print,
                                 NULL, NULL, out_spirv, out_spirv_size, out_msl,
                                 out_msl_size);
}
