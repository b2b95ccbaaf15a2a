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

/* String tensors are CPU only: the first node that reads or writes one is
 * named (its op, the value). */
static dml_status_t check_no_strings(const char *target, const dml_pkg_graph_t *g,
                                     uint32_t f0, uint32_t f1) {
  for (uint32_t f = f0; f < f1; f++) {
    const dml_pkg_function_t *fn = &g->functions[f];
    for (uint32_t i = 0; i < fn->n_nodes; i++) {
      const dml_pkg_node_t *n = &fn->nodes[i];
      for (uint32_t j = 0; j < n->n_inputs + n->n_outputs; j++) {
        uint32_t v = j < n->n_inputs ? n->inputs[j] : n->outputs[j - n->n_inputs];
        if (v == DML_PKG_NO_VALUE || v >= fn->n_values ||
            fn->values[v].type.dtype != DML_DTYPE_STRING)
          continue;
        return dml_status_detail(
            dml_status_make(DML_STATUS_UNIMPLEMENTED,
                            !strcmp(target, "metal")  ? "codegen.metal"
                            : !strcmp(target, "cuda") ? "codegen.cuda"
                                                      : "codegen.vulkan",
                            "target '%s' cannot run string tensors (CPU only; no CPU "
                            "fall-back): node '%s' (%s) %s string value '%s'",
                            target, n->name, n->op_name,
                            j < n->n_inputs ? "reads" : "writes", fn->values[v].name),
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
                                      dml_status_t why) {
  /* one line: op, reason and details (their newlines turned into "; ") */
  const char *det = dml_status_details(why);
  size_t line = fb->text ? strlen(fb->text) : 0;
  int ok = fb_append(fb, "%s\t%s\t%s: %s%s", target, g->functions[fn].name,
                     dml_status_op(why), dml_status_reason(why), det && *det ? " (" : "");
  size_t at = fb->text ? strlen(fb->text) : 0;
  if (ok && det && *det) ok = fb_append(fb, "%s)", det);
  for (char *c = ok ? fb->text + at : NULL; c && *c; c++)
    if (*c == '\n' || *c == '\t') *c = ';';
  /* the strict error's words do not apply here */
  for (char *c = ok ? strstr(fb->text + line, " (no CPU fall-back)") : NULL; c;
       c = strstr(c, " (no CPU fall-back)"))
    memmove(c, c + 19, strlen(c + 19) + 1);
  for (char *c = ok ? strstr(fb->text + line, "; no CPU fall-back") : NULL; c;
       c = strstr(c, "; no CPU fall-back"))
    memmove(c, c + 18, strlen(c + 18) + 1);
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

dml_status_t dml_codegen_sections_fb(const dml_pkg_graph_t *g, const uint8_t *weights,
                                     uint64_t weights_size, int want_spirv, int want_msl,
                                     FILE *print, dml_codegen_fallback_t *fb,
                                     void **out_spirv, size_t *out_spirv_size,
                                     void **out_msl, size_t *out_msl_size) {
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
    /* With the fall-back, a function a target cannot emit is left out of
     * that target's section and recorded in fb (its reason) */
    int ws = want_spirv, wm = want_msl;
    if (fb && ws) {
      dml_status_t c = dml_codegen_check_function("vulkan", g, f);
      if (c) {
        ws = 0;
        s = dml_codegen_fallback_add(fb, "vulkan", g, f, c);
      }
    }
    if (fb && wm && !s) {
      dml_status_t c = dml_codegen_check_function("metal", g, f);
      if (c) {
        wm = 0;
        s = dml_codegen_fallback_add(fb, "metal", g, f, c);
      }
    }
    if (s) break;
    if (!ws && !wm && (want_spirv || want_msl)) continue;
    dml_kplan_t *p = NULL;
    s = dml_kschedule(g, f, weights, weights_size, &p);
    if (fb && falls_back(s)) {
      dml_status_t why = s;
      s = DML_OK;
      if (ws && wm)
        s = dml_codegen_fallback_add(
            fb, "vulkan", g, f,
            dml_status_make(dml_status_code(why), dml_status_op(why), "%s",
                            dml_status_reason(why)));
      if (!s)
        s = dml_codegen_fallback_add(fb, ws ? (wm ? "metal" : "vulkan") : "metal", g, f,
                                     why);
      continue;
    }
    if (s) break;
    if (print) dml_kplan_print(p, g, print);
    dml_kpkg_function_t *fs = ws ? &ks.functions[ks.n_functions] : NULL;
    dml_kpkg_function_t *fm = wm ? &km.functions[km.n_functions] : NULL;
    dml_kpkg_function_t *both[2] = {fs, fm};
    for (int t = 0; t < 2 && !s; t++) {
      if (!both[t]) continue;
      both[t]->function = f;
      both[t]->kernels = p->n_kernels ? (dml_kpkg_kernel_t *)calloc(
                                            p->n_kernels, sizeof(dml_kpkg_kernel_t))
                                      : NULL;
      if (p->n_kernels && !both[t]->kernels)
        s = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen", "out of memory");
      else
        both[t]->n_kernels = p->n_kernels;
    }
    if (!s) s = render(p, g->n_symbols, fs, fm);
    dml_kplan_release(p);
    if (s && fs) free_fn_code(fs);
    if (s && fm) free_fn_code(fm);
    if (fb && falls_back(s)) {
      /* a kernel neither target can render (Metal: f64 registers): the
       * function runs on the host for both */
      dml_status_t why = s;
      s = DML_OK;
      if (ws && wm)
        s = dml_codegen_fallback_add(
            fb, "vulkan", g, f,
            dml_status_make(dml_status_code(why), dml_status_op(why), "%s",
                            dml_status_reason(why)));
      if (!s)
        s = dml_codegen_fallback_add(fb, ws ? (wm ? "metal" : "vulkan") : "metal", g, f,
                                     why);
      continue;
    }
    if (fs) ks.n_functions++;
    if (fm) km.n_functions++;
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
                                 NULL, out_spirv, out_spirv_size, out_msl, out_msl_size);
}
