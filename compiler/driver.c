/* driver.c — ONNX (or an IR module) -> default pass pipeline -> .dmlpkg
 * (dml_driver.h). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "dml_cpu.h"
#include "dml_driver.h"
#include "dml_ir.h"
#include "dml_onnx.h"
#include "dml_package_emit.h"
#include "dml_passes.h"
#include "dml_train.h"
#ifdef DMLC_HAVE_CODEGEN
#include "dml_codegen.h"
#endif

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

#ifdef DMLC_HAVE_CODEGEN
#define AVAILABLE_TARGETS "cpu, vulkan, metal, cuda"
#else
#define AVAILABLE_TARGETS \
  "cpu (this build has no GPU code generation: run scripts/setup.sh)"
#endif

const char *dml_compile_available_targets(void) {
  return AVAILABLE_TARGETS;
}

/* Checks the comma-separated target list and sets *want_spirv / *want_msl
 * / *want_cuda for vulkan / metal / cuda (the cpu plan is always in the
 * package). want_cuda may be NULL (cuda then still accepted). */
static dml_status_t check_targets3(const char *targets, int *want_spirv, int *want_msl,
                                   int *want_cuda) {
  const char *p = targets;
  int wc = 0;
  *want_spirv = *want_msl = 0;
  while (*p) {
    const char *e = strchr(p, ',');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    int is_vk = n == 6 && !strncmp(p, "vulkan", 6),
        is_mtl = n == 5 && !strncmp(p, "metal", 5),
        is_cuda = n == 4 && !strncmp(p, "cuda", 4);
#ifdef DMLC_HAVE_CODEGEN
    int built = is_vk || is_mtl || is_cuda;
#else
    int built = 0;
#endif
    if (built) {
      *want_spirv |= is_vk;
      *want_msl |= is_mtl;
      wc |= is_cuda;
    } else if (!(n == 3 && !strncmp(p, "cpu", 3))) {
      int known = is_vk || (n == 4 && !strncmp(p, "cuda", 4)) || is_mtl;
      return dml_status_detail(
          dml_status_make(DML_STATUS_UNIMPLEMENTED, "compile",
                          known ? "target '%.*s' is not implemented in this build of dmlc"
                                : "unknown target '%.*s'",
                          (int)n, p),
          "available targets: " AVAILABLE_TARGETS);
    }
    p += n;
    if (*p == ',') p++;
  }
  if (want_cuda) *want_cuda = wc;
  return DML_OK;
}

static dml_status_t check_targets(const char *targets, int *want_spirv, int *want_msl) {
  return check_targets3(targets, want_spirv, want_msl, NULL);
}

/* The CPU target runs every op of ops.def that has a reference kernel;
 * nodes without one are refused here, at compile time, listing every such
 * node. Random ops (Dropout in training mode included) run on Philox
 * streams (runtime/base/dml_philox.h). */
static dml_status_t check_cpu_target(const dml_ir_module_t *m) {
  dml_status_t s = DML_OK;
  for (uint32_t fi = 0; fi < m->n_functions; fi++) {
    for (const dml_ir_node_t *n = m->functions[fi]->first; n; n = n->next) {
      const char *why = NULL;
      /* If: run by the executor (rt_session.c), not a kernel. */
      if (!dml_cpu_supports(n->op) && !(dml_op_info(n->op)->flags & DML_OPF_CONTROL_FLOW))
        why = "no CPU kernel";
      if (!why) continue;
      if (!s)
        s = dml_status_make(DML_STATUS_UNIMPLEMENTED, "compile",
                            "the cpu target cannot run every node of the model");
      s = dml_status_detail(s, "node '%s' (%s): %s", n->name ? n->name : "",
                            dml_op_name(n->op), why);
    }
  }
  return s;
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* Checks and completes the options (defaults filled in). */
static dml_status_t normalize_options(const dml_compile_options_t *opts,
                                      dml_compile_options_t *out) {
  dml_compile_options_t o;
  memset(&o, 0, sizeof o);
  if (opts) o = *opts;
  if (!o.targets || !*o.targets) o.targets = "cpu";
  if (o.batch_bound == 0) o.batch_bound = 64;
  if (o.batch_bound < 1 || o.batch_bound > (int64_t)1 << 31)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "compile",
                           "--batch-bound must be between 1 and 2^31, got %lld",
                           (long long)o.batch_bound);
  if (o.dynamic_dim_bound < 0 || o.dynamic_dim_bound > (int64_t)1 << 31)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "compile",
                           "--dynamic-dim-bound must be between 1 and 2^31, got %lld",
                           (long long)o.dynamic_dim_bound);
  if (o.dynamic_max_elements < 0 || o.dynamic_max_elements > (int64_t)1 << 40)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "compile",
                           "--dynamic-max-elements must be between 1 and 2^40, got %lld",
                           (long long)o.dynamic_max_elements);
  int ws, wm;
  DML_RETURN_IF_ERROR(check_targets(o.targets, &ws, &wm));
  *out = o;
  return DML_OK;
}

static void import_options(const dml_compile_options_t *o,
                           dml_onnx_import_options_t *io) {
  memset(io, 0, sizeof *io);
  io->batch_bound = o->batch_bound;
  io->bind = o->bind;
  io->n_bind = o->n_bind;
  io->input_shapes = o->input_shapes;
  io->n_input_shapes = o->n_input_shapes;
  io->dim_bounds = o->dim_bounds;
  io->n_dim_bounds = o->n_dim_bounds;
  io->input_ranges = o->input_ranges;
  io->n_input_ranges = o->n_input_ranges;
  io->sequence_inputs = o->sequence_inputs;
  io->n_sequence_inputs = o->n_sequence_inputs;
  io->optional_inputs = o->optional_inputs;
  io->n_optional_inputs = o->n_optional_inputs;
}

dml_status_t dml_compile_add_kernels(const char *targets, FILE *print_kernels,
                                     void **bytes, size_t *size) {
  return dml_compile_add_kernels_arch(targets, NULL, 0, print_kernels, bytes, size);
}

#ifdef DMLC_HAVE_CODEGEN
/* Generates the kernel sections of `targets` (want_* from check_targets3)
 * for graph `g` with its "weights" section and adds them to `w` (NULL when
 * only printing); the kernels' large constant tables are appended to the
 * weights, replacing `w`'s "weights" section (dml_kplan_place_ctabs,
 * docs/kernels.md "Constant tables"). The writer borrows the sections'
 * bytes: sec[0..3] hold them (malloc'd) until the caller has finished `w`
 * and frees them; so does
 * *fbs (the "placement" section's text, filled when cpu_fallback places
 * nodes on the host), released with dml_codegen_fallback_release. Each
 * host placement is also passed to `note` (may be NULL) as one line. */
static dml_status_t kernel_sections(const char *targets, int want_spirv, int want_msl,
                                    int want_cuda, const char *cuda_arch, int allow_tf32,
                                    FILE *print_kernels, const dml_pkg_graph_t *g,
                                    const uint8_t *weights, uint64_t weights_size,
                                    int cpu_fallback,
                                    void (*note)(void *ctx, const char *line),
                                    void *note_ctx, dml_pkg_writer_t *w, void *sec[4],
                                    dml_codegen_fallback_t *fbs) {
  void *sp = NULL, *ms = NULL, *cu = NULL;
  size_t sp_n = 0, ms_n = 0, cu_n = 0;
  dml_status_t s = DML_OK;
  dml_kctab_place_t ct;
  dml_kctab_place_init(&ct, weights_size);
  sec[3] = NULL;
  dml_codegen_fallback_t *fb = cpu_fallback ? fbs : NULL;
  /* Run-time If and Loop (ops.def) need the host between the device's
   * kernels: it reads cond / the trip count and runs the branch or body
   * (its own kernels on the device), which is a host entry of the CPU
   * fall-back. Without the fall-back every such node is named. */
  for (uint32_t fi = 0;
       !fb && (want_spirv || want_msl || want_cuda) && fi < g->n_functions; fi++)
    for (uint32_t k = 0; k < g->functions[fi].n_nodes; k++) {
      const dml_pkg_node_t *n = &g->functions[fi].nodes[k];
      if (n->op != DML_OP_IF && n->op != DML_OP_LOOP) continue;
      if (!s)
        s = dml_status_make(DML_STATUS_UNIMPLEMENTED, "compile",
                            "target '%s': run-time control flow (an If whose cond is "
                            "only known at run time and whose branches' shapes differ, "
                            "a Loop whose number of iterations is only known at run "
                            "time) runs on the cpu target only without the CPU fall-back "
                            "(with it, the host reads cond or the trip count and the "
                            "device runs the branch or body; binding cond or the trip "
                            "count with --bind imports it unrolled)",
                            targets);
      s = dml_status_detail(s, "node '%s' (%s) of function '%s'", n->name, n->op_name,
                            g->functions[fi].name);
    }
  if (!s && (want_spirv || want_msl || !want_cuda))
    s = dml_codegen_sections_fb(g, weights, weights_size, want_spirv, want_msl,
                                print_kernels, fb, &ct, &sp, &sp_n, &ms, &ms_n);
  if (!s && want_cuda)
    s = dml_codegen_cuda_section_fb(g, weights, weights_size, cuda_arch, allow_tf32,
                                    want_spirv || want_msl ? NULL : print_kernels, fb,
                                    &ct, &cu, &cu_n);
  if (w && !s && ct.size) { /* the weights, then the tables */
    uint64_t n = 0;
    sec[3] = dml_kctab_place_weights(&ct, weights, weights_size, &n);
    s = !sec[3] ? dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "compile",
                                  "out of memory (%llu bytes of weights and constant "
                                  "tables)",
                                  (unsigned long long)(ct.base + ct.size))
                : dml_pkg_writer_set_section(w, "weights", sec[3], (size_t)n,
                                             DML_PKG_WEIGHTS_ALIGNMENT);
  }
  dml_kctab_place_release(&ct);
  if (w && !s && want_spirv)
    s = dml_pkg_writer_add_section(w, "kernels.spirv", sp, sp_n, 8);
  if (w && !s && want_msl) s = dml_pkg_writer_add_section(w, "kernels.msl", ms, ms_n, 8);
  if (w && !s && want_cuda)
    s = dml_pkg_writer_add_section(w, "kernels.cuda", cu, cu_n, 8);
  if (w && !s && fbs->n_host)
    s = dml_pkg_writer_add_section(w, "placement", fbs->text, strlen(fbs->text), 1);
  for (char *l = !s && note ? fbs->text : NULL; l && *l;) {
    char *e = strchr(l, '\n');
    if (e) *e = 0;
    note(note_ctx, l);
    if (!e) break;
    *e = '\n';
    l = e + 1;
  }
  sec[0] = sp;
  sec[1] = ms;
  sec[2] = cu;
  return s;
}
#endif

dml_status_t dml_compile_add_kernels_arch(const char *targets, const char *cuda_arch,
                                          int allow_tf32, FILE *print_kernels,
                                          void **bytes, size_t *size) {
  return dml_compile_add_kernels_fb(targets, cuda_arch, allow_tf32, 0, NULL, NULL,
                                    print_kernels, bytes, size);
}

dml_status_t dml_compile_add_kernels_fb(const char *targets, const char *cuda_arch,
                                        int allow_tf32, int cpu_fallback,
                                        void (*note)(void *ctx, const char *line),
                                        void *note_ctx, FILE *print_kernels, void **bytes,
                                        size_t *size) {
  int want_spirv = 0, want_msl = 0, want_cuda = 0;
  DML_RETURN_IF_ERROR(
      check_targets3(targets ? targets : "cpu", &want_spirv, &want_msl, &want_cuda));
  if (!want_spirv && !want_msl && !want_cuda && !print_kernels) return DML_OK;
#ifdef DMLC_HAVE_CODEGEN
  dml_pkg_t pkg;
  DML_RETURN_IF_ERROR(dml_pkg_parse(*bytes, *size, &pkg));
  const dml_pkg_section_t *gs = dml_pkg_find_section(&pkg, "graph");
  const dml_pkg_section_t *ws = dml_pkg_find_section(&pkg, "weights");
  if (!gs)
    return dml_status_make(DML_STATUS_INTERNAL, "compile",
                           "emitted package has no graph");
  dml_pkg_graph_t *g = NULL;
  DML_RETURN_IF_ERROR(dml_pkg_graph_decode(gs->data, gs->size, ws ? ws->size : 0, &g));
  dml_status_t s = DML_OK;
  dml_pkg_writer_t *w = NULL;
  if (want_spirv || want_msl || want_cuda) s = dml_pkg_writer_create(&w);
  for (uint32_t i = 0; w && !s && i < pkg.n_sections; i++)
    s = dml_pkg_writer_add_section(w, pkg.sections[i].tag, pkg.sections[i].data,
                                   (size_t)pkg.sections[i].size,
                                   pkg.sections[i].alignment);
  void *sec[4] = {NULL, NULL, NULL, NULL};
  dml_codegen_fallback_t fbs = {0, NULL};
  if (!s)
    s = kernel_sections(targets, want_spirv, want_msl, want_cuda, cuda_arch, allow_tf32,
                        print_kernels, g, ws ? ws->data : NULL, ws ? ws->size : 0,
                        cpu_fallback, note, note_ctx, w, sec, &fbs);
  dml_pkg_graph_release(g);
  void *nb = NULL;
  size_t nn = 0;
  if (w && !s) s = dml_pkg_writer_finish_memory(w, &nb, &nn);
  dml_pkg_writer_release(w);
  dml_codegen_fallback_release(&fbs); /* after the writer, which lent its bytes */
  for (int i = 0; i < 4; i++) free(sec[i]);
  if (!s && nb) {
    free(*bytes);
    *bytes = nb;
    *size = nn;
  }
  return s;
#else
  (void)bytes;
  (void)size;
  (void)allow_tf32;
  (void)cuda_arch;
  return dml_status_make(DML_STATUS_UNIMPLEMENTED, "compile",
                         "--print-kernels: this build has no GPU code generation (run "
                         "scripts/setup.sh)");
#endif
}

/* Reports the stage that begins to opts->progress, if any. */
static void stage(const dml_compile_options_t *o, const char *what) {
  if (o && o->progress) o->progress(o->progress_ctx, what);
}

/* The package emitter's add_sections hook of a compile with GPU targets or
 * --print-kernels: the kernels are generated from the graph the emitter
 * built from the module (and decoded to check it), and written with the
 * rest of the package in one go. */
typedef struct kernels_hook {
  const dml_compile_options_t *o;
  void *sec[4]; /* the sections' bytes (the weights with the kernels' constant
                   tables last), freed after the package is written */
  dml_codegen_fallback_t fbs; /* the placement text, likewise */
} kernels_hook_t;

static dml_status_t add_kernels_hook(void *ctx, const dml_pkg_graph_t *g,
                                     const uint8_t *weights, uint64_t weights_size,
                                     dml_pkg_writer_t *w) {
  kernels_hook_t *kh = (kernels_hook_t *)ctx;
  const dml_compile_options_t *o = kh->o;
  int want_spirv = 0, want_msl = 0, want_cuda = 0;
  DML_RETURN_IF_ERROR(check_targets3(o->targets ? o->targets : "cpu", &want_spirv,
                                     &want_msl, &want_cuda));
  stage(o, "generating GPU kernels");
#ifdef DMLC_HAVE_CODEGEN
  return kernel_sections(o->targets ? o->targets : "cpu", want_spirv, want_msl, want_cuda,
                         o->cuda_arch, o->allow_tf32, o->print_kernels, g, weights,
                         weights_size, !o->no_cpu_fallback && !o->train, o->note,
                         o->note_ctx, w, kh->sec, &kh->fbs);
#else
  (void)g;
  (void)weights;
  (void)weights_size;
  (void)w;
  return dml_status_make(DML_STATUS_UNIMPLEMENTED, "compile",
                         "--print-kernels: this build has no GPU code generation (run "
                         "scripts/setup.sh)");
#endif
}

/* Runs the default pipeline on `m`, then emits it to `out_path`, or into
 * memory when out_path is NULL. Fills *out_report (may be NULL) except
 * package_bytes and compile_ms. */
static dml_status_t optimize_and_emit(dml_ir_module_t *m, const dml_compile_options_t *o,
                                      const char *source_name, const char *out_path,
                                      void **out_bytes, size_t *out_size,
                                      dml_compile_report_t *out_report) {
  dml_pass_options_t po;
  memset(&po, 0, sizeof po);
  m->dynamic_dim_bound = o->dynamic_dim_bound;
  m->dynamic_max_elements = o->dynamic_max_elements;
  po.print_ir_after = o->print_ir_after;
  po.print_ir_after_all = o->print_ir_after_all;
  po.dump = o->dump;
  po.dump_elide_elements_over = 16;
  po.verify_each = 1;
  int gpu_s = 0, gpu_m = 0, gpu_c = 0;
  if (!check_targets3(o->targets ? o->targets : "cpu", &gpu_s, &gpu_m, &gpu_c))
    po.fusion_aware = gpu_s || gpu_m || gpu_c;
  dml_status_t s = DML_OK;
  if (o->precision && strcmp(o->precision, "f32")) {
    if (!strcmp(o->precision, "f16"))
      po.precision = DML_DTYPE_F16;
    else if (!strcmp(o->precision, "bf16"))
      po.precision = DML_DTYPE_BF16;
    else
      return dml_status_detail(
          dml_status_make(DML_STATUS_INVALID_ARGUMENT, "compile",
                          "--precision '%s': not f32, f16 or bf16", o->precision),
          "f16 and bf16 store GPU kernels' values in 16 bits");
    if (!po.fusion_aware)
      return dml_status_detail(
          dml_status_make(DML_STATUS_INVALID_ARGUMENT, "compile",
                          "--precision %s needs a GPU target (--target vulkan, metal or "
                          "cuda)",
                          o->precision),
          "16-bit storage is for the GPU kernels; a CPU-only package keeps the model's "
          "f32 (compile without --precision)");
    if (o->train)
      return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "compile",
                             "--precision %s: training packages keep f32", o->precision);
  }
  if (o->train) {
    /* Clean forward first (shape chains folded), then the training
     * functions, then the whole pipeline over every function. */
    dml_pass_options_t pre;
    memset(&pre, 0, sizeof pre);
    pre.verify_each = 1;
    stage(o, "building the training functions");
    s = dml_pass_run_pipeline(m, "shape-infer,expand-gradient,const-fold,cse,dce", &pre);
    if (!s) s = dml_train_build(m, o->train);
  }
  stage(o, "optimizing (passes)");
  if (!s) s = dml_pass_run_pipeline(m, dml_pass_default_pipeline(), &po);
  if (s && dml_status_code(s) == DML_STATUS_UNIMPLEMENTED && dml_status_reason(s) &&
      strstr(dml_status_reason(s), "depends on run-time data"))
    s = dml_status_detail(s,
                          "where the output rank itself depends on that data, compile "
                          "the graph input as a constant: dmlc compile --bind "
                          "NAME=FILE.npy");

  if (!s) s = check_cpu_target(m);
  if (!s) {
    dml_package_emit_options_t eo;
    memset(&eo, 0, sizeof eo);
    eo.source_name = source_name;
    eo.targets = o->targets;
    eo.batch_bound = o->batch_bound;
    eo.command_line = o->command_line;
    int ws = 0, wm = 0, wc = 0;
    s = check_targets3(o->targets, &ws, &wm, &wc);
    if (!s && o->cuda_arch && !wc)
      s = dml_status_make(DML_STATUS_INVALID_ARGUMENT, "compile",
                          "--cuda-arch needs --target cuda");
    if (!s && o->allow_tf32 && !wc)
      s = dml_status_make(DML_STATUS_INVALID_ARGUMENT, "compile",
                          "--allow-tf32 needs --target cuda");
    stage(o, "writing the package");
    kernels_hook_t kh = {o, {NULL, NULL, NULL, NULL}, {0, NULL}};
    if (!s && (ws || wm || wc || o->print_kernels)) {
      eo.add_sections = add_kernels_hook;
      eo.add_sections_ctx = &kh;
    }
    if (!s)
      s = out_path ? dml_package_emit(m, &eo, out_path)
                   : dml_package_emit_memory(m, &eo, out_bytes, out_size);
    for (int i = 0; i < 4; i++) free(kh.sec[i]);
    dml_codegen_fallback_release(&kh.fbs);
  }
  if (!s && out_report) {
    memset(out_report, 0, sizeof *out_report);
    dml_ir_function_t *f = dml_ir_module_find_function(m, "forward");
    out_report->num_nodes = f ? dml_ir_function_num_nodes(f) : 0;
    out_report->arena_bytes = po.out_arena_bytes;
    for (uint32_t i = 0; i < m->n_globals; i++) {
      out_report->num_weights++;
      out_report->weight_bytes += (uint64_t)m->globals[i]->data_bytes;
    }
  }
  return s;
}

dml_status_t dml_compile_onnx_file(const char *onnx_path, const char *out_path,
                                   const dml_compile_options_t *opts,
                                   dml_compile_report_t *out_report) {
  dml_compile_options_t o;
  DML_RETURN_IF_ERROR(normalize_options(opts, &o));

  double t0 = now_ms();
  dml_ir_module_t *m = NULL;
  dml_onnx_import_options_t io;
  import_options(&o, &io);
  stage(&o, "reading the ONNX model");
  DML_RETURN_IF_ERROR(dml_onnx_import_file(onnx_path, &io, &m));

  dml_status_t s =
      optimize_and_emit(m, &o, base_name(onnx_path), out_path, NULL, NULL, out_report);
  if (!s && out_report) {
    struct stat st;
    if (stat(out_path, &st) == 0) out_report->package_bytes = (uint64_t)st.st_size;
    out_report->compile_ms = now_ms() - t0;
  }
  dml_ir_module_release(m);
  if (s) s = dml_status_annotate(s, "compiling '%s'", onnx_path);
  return s;
}

dml_status_t dml_compile_onnx_memory(const void *data, size_t len, const char *base_dir,
                                     const char *source_name,
                                     const dml_compile_options_t *opts,
                                     void **out_package, size_t *out_size,
                                     dml_compile_report_t *out_report) {
  if (!out_package || !out_size)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "compile",
                           "dml_compile_onnx_memory: NULL output argument");
  dml_compile_options_t o;
  DML_RETURN_IF_ERROR(normalize_options(opts, &o));

  double t0 = now_ms();
  dml_ir_module_t *m = NULL;
  dml_onnx_import_options_t io;
  import_options(&o, &io);
  stage(&o, "reading the ONNX model");
  DML_RETURN_IF_ERROR(dml_onnx_import_memory(data, len, base_dir, &io, &m));

  void *bytes = NULL;
  size_t size = 0;
  dml_status_t s = optimize_and_emit(m, &o, source_name, NULL, &bytes, &size, out_report);
  dml_ir_module_release(m);
  if (s) {
    if (source_name) s = dml_status_annotate(s, "compiling '%s'", source_name);
    return s;
  }
  if (out_report) {
    out_report->package_bytes = (uint64_t)size;
    out_report->compile_ms = now_ms() - t0;
  }
  *out_package = bytes;
  *out_size = size;
  return DML_OK;
}

/* ==== modules from other frontends ====================================== */

/* Checks the options of a module compile and applies the batch bound. */
static dml_status_t module_options(dml_ir_module_t *m, const dml_compile_options_t *opts,
                                   dml_compile_options_t *o) {
  if (!m)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "compile",
                           "dml_compile_module: NULL module");
  if (opts && (opts->n_bind || opts->n_input_shapes || opts->n_sequence_inputs ||
               opts->n_optional_inputs || opts->n_dim_bounds || opts->n_input_ranges))
    return dml_status_detail(
        dml_status_make(DML_STATUS_INVALID_ARGUMENT, "compile",
                        "ONNX import options (bind, input_shapes, sequence_inputs, "
                        "optional_inputs) do not apply to an IR module"),
        "nor do dim_bounds and input_ranges (an IR module's symbols carry their "
        "bounds)");
  int64_t want = opts ? opts->batch_bound : 0;
  DML_RETURN_IF_ERROR(normalize_options(opts, o));
  int64_t largest = 0;
  for (uint32_t i = 0; i < m->n_symbols; i++) {
    if (m->symbols[i].flags & (DML_IR_SYMBOL_DATA_DEPENDENT | DML_IR_SYMBOL_DERIVED))
      continue;
    if (want) m->symbols[i].bound = want;
    if (m->symbols[i].bound > largest) largest = m->symbols[i].bound;
  }
  o->batch_bound = want ? want : largest;
  return DML_OK;
}

dml_status_t dml_compile_module(dml_ir_module_t *module, const char *source_name,
                                const char *out_path, const dml_compile_options_t *opts,
                                dml_compile_report_t *out_report) {
  if (!out_path)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "compile",
                           "dml_compile_module: NULL output path");
  double t0 = now_ms();
  dml_compile_options_t o;
  DML_RETURN_IF_ERROR(module_options(module, opts, &o));
  dml_status_t s =
      optimize_and_emit(module, &o, source_name, out_path, NULL, NULL, out_report);
  if (!s && out_report) {
    struct stat st;
    if (stat(out_path, &st) == 0) out_report->package_bytes = (uint64_t)st.st_size;
    out_report->compile_ms = now_ms() - t0;
  }
  if (s && source_name) s = dml_status_annotate(s, "compiling '%s'", source_name);
  return s;
}

dml_status_t dml_compile_module_memory(dml_ir_module_t *module, const char *source_name,
                                       const dml_compile_options_t *opts,
                                       void **out_package, size_t *out_size,
                                       dml_compile_report_t *out_report) {
  if (!out_package || !out_size)
    return dml_status_make(DML_STATUS_INVALID_ARGUMENT, "compile",
                           "dml_compile_module_memory: NULL output argument");
  double t0 = now_ms();
  dml_compile_options_t o;
  DML_RETURN_IF_ERROR(module_options(module, opts, &o));
  void *bytes = NULL;
  size_t size = 0;
  dml_status_t s =
      optimize_and_emit(module, &o, source_name, NULL, &bytes, &size, out_report);
  if (s) {
    if (source_name) s = dml_status_annotate(s, "compiling '%s'", source_name);
    return s;
  }
  if (out_report) {
    out_report->package_bytes = (uint64_t)size;
    out_report->compile_ms = now_ms() - t0;
  }
  *out_package = bytes;
  *out_size = size;
  return DML_OK;
}
