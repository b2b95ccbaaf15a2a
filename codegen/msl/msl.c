/* msl.c — SPIR-V -> Metal Shading Language through SPIRV-Cross's C API
 * (dml_codegen.h: binding layout). No Metal device exists here: the source
 * is checked by SPIRV-Cross's own translation and by golden files. */
#include <spirv_cross/spirv_cross_c.h>
#include <stdlib.h>
#include <string.h>

#include "dml_codegen.h"

typedef struct err_buf {
  char text[512];
} err_buf_t;

static void on_error(void *user, const char *msg) {
  err_buf_t *e = (err_buf_t *)user;
  if (!e->text[0]) snprintf(e->text, sizeof e->text, "%s", msg);
}

static int bind(spvc_compiler c, unsigned set, unsigned binding, unsigned buffer) {
  spvc_msl_resource_binding b;
  spvc_msl_resource_binding_init(&b);
  b.stage = SpvExecutionModelGLCompute;
  b.desc_set = set;
  b.binding = binding;
  b.msl_buffer = buffer;
  return spvc_compiler_msl_add_resource_binding(c, &b) == SPVC_SUCCESS;
}

/* 1 when the module declares OpCapability Int64: 64-bit integers in
 * buffers need MSL 2.3 (macOS 11 / iOS 14); other kernels stay MSL 2.1. */
static int uses_int64(const uint32_t *w, size_t n) {
  for (size_t i = 5; i < n;) {
    uint32_t op = w[i] & 0xffffu, len = w[i] >> 16;
    if (len == 0 || op == 14 /* OpMemoryModel */) break;
    if (op == 17 /* OpCapability */ && i + 1 < n && w[i + 1] == 11 /* Int64 */) return 1;
    i += len;
  }
  return 0;
}

/* The first lines of every emitted MSL source: IEEE arithmetic (NaN, the
 * infinities and -0 kept, no value-changing rewrites) where the source
 * itself can say so, MSL 3.2's math-mode pragma (macOS 15 / iOS 18).
 * Metal's default is fast math on Intel and AMD GPUs and "relaxed" (which
 * honors inf and NaN but still rewrites) on Apple silicon; a compiler
 * older than MSL 3.2 skips the #if and needs the loader's option instead:
 * MTLCompileOptions.fastMathEnabled = NO (mathMode = MTLMathModeSafe from
 * macOS 15 / iOS 18), or `metal -fno-fast-math` offline
 * (docs/embedding.md). Contraction into fma is left on, as in CUDA C: the
 * kernels that need it off carry SPIR-V NoContraction. */
const char dml_msl_header[] =
    "#if defined(__METAL_VERSION__) && __METAL_VERSION__ >= 320\n"
    "#pragma METAL fp math_mode(safe)\n"
    "#endif\n";

dml_status_t dml_codegen_msl(const uint32_t *words, size_t n_words,
                             const char *kernel_name, char **out_msl) {
  spvc_context ctx = NULL;
  if (spvc_context_create(&ctx) != SPVC_SUCCESS)
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen.metal",
                           "spvc_context_create");
  err_buf_t e;
  memset(&e, 0, sizeof e);
  spvc_context_set_error_callback(ctx, on_error, &e);
  spvc_parsed_ir ir = NULL;
  spvc_compiler comp = NULL;
  spvc_compiler_options opts = NULL;
  const char *src = NULL;
  int ok =
      spvc_context_parse_spirv(ctx, words, n_words, &ir) == SPVC_SUCCESS &&
      spvc_context_create_compiler(ctx, SPVC_BACKEND_MSL, ir,
                                   SPVC_CAPTURE_MODE_TAKE_OWNERSHIP,
                                   &comp) == SPVC_SUCCESS &&
      spvc_compiler_create_compiler_options(comp, &opts) == SPVC_SUCCESS &&
      spvc_compiler_options_set_uint(
          opts, SPVC_COMPILER_OPTION_MSL_VERSION,
          uses_int64(words, n_words) ? SPVC_MAKE_MSL_VERSION(2, 3, 0)
                                     : SPVC_MAKE_MSL_VERSION(2, 1, 0)) == SPVC_SUCCESS &&
      spvc_compiler_install_compiler_options(comp, opts) == SPVC_SUCCESS &&
      bind(comp, 0, 0, 0) && bind(comp, 0, 1, 1) &&
      bind(comp, SPVC_MSL_PUSH_CONSTANT_DESC_SET, SPVC_MSL_PUSH_CONSTANT_BINDING, 2) &&
      spvc_compiler_rename_entry_point(comp, "main", kernel_name,
                                       SpvExecutionModelGLCompute) == SPVC_SUCCESS &&
      spvc_compiler_compile(comp, &src) == SPVC_SUCCESS && src;
  dml_status_t s = DML_OK;
  if (!ok) {
    s = dml_status_detail(
        dml_status_make(DML_STATUS_INTERNAL, "codegen.metal",
                        "SPIRV-Cross could not translate kernel %s to MSL", kernel_name),
        "%s", e.text);
  } else {
    size_t nh = sizeof dml_msl_header - 1, ns = strlen(src);
    char *copy = (char *)malloc(nh + ns + 1);
    if (!copy) {
      s = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen.metal",
                          "out of memory");
    } else {
      memcpy(copy, dml_msl_header, nh);
      memcpy(copy + nh, src, ns + 1);
      *out_msl = copy;
    }
  }
  spvc_context_destroy(ctx);
  return s;
}
