/* spirv.c — GLSL compute -> SPIR-V through glslang's C interface, validated
 * with SPIRV-Tools (dml_codegen.h). */
#include <glslang/Include/glslang_c_interface.h>
#include <glslang/Public/resource_limits_c.h>
#include <pthread.h>
#include <spirv-tools/libspirv.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dml_codegen.h"

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_init_ok;
/* glslang's process state is global; compiles are serialized. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static void finalize(void) {
  glslang_finalize_process();
}

static void init_once(void) {
  g_init_ok = glslang_initialize_process() != 0;
  if (g_init_ok) atexit(finalize);
}

static dml_status_t fail(const char *kernel, const char *what, const char *log) {
  return dml_status_detail(dml_status_make(DML_STATUS_INTERNAL, "codegen.vulkan",
                                           "kernel %s: %s", kernel, what),
                           "%.2000s", log ? log : "");
}

/* Validates `words` for Vulkan 1.1 with SPIRV-Tools' spvValidate. */
static dml_status_t validate(const uint32_t *words, size_t n, const char *kernel) {
  spv_context ctx = spvContextCreate(SPV_ENV_VULKAN_1_1);
  if (!ctx)
    return dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen.vulkan",
                           "spvContextCreate");
  spv_const_binary_t bin = {words, n};
  spv_diagnostic diag = NULL;
  spv_result_t r = spvValidate(ctx, &bin, &diag);
  dml_status_t s = DML_OK;
  if (r != SPV_SUCCESS)
    s = fail(kernel, "SPIR-V failed spvValidate", diag && diag->error ? diag->error : "");
  spvDiagnosticDestroy(diag);
  spvContextDestroy(ctx);
  return s;
}

/* Adds `OpExecutionMode main SignedZeroInfNanPreserve 64` after the module's
 * 32-bit one (glsl.c declares that through GL_EXT_spirv_intrinsics, where
 * glslang keeps only one of a mode) when the module uses doubles
 * (OpCapability Float64). *w (n words) is replaced by a longer copy; 0 when
 * nothing was to add or added, -1 out of memory. */
static int add_f64_preserve(uint32_t **w, size_t *n) {
  size_t at = 0;
  int f64 = 0;
  for (size_t i = 5; i < *n;) {
    uint32_t op = (*w)[i] & 0xffffu, len = (*w)[i] >> 16;
    if (len == 0 || i + len > *n) return 0;
    if (op == 17 /* OpCapability */ && (*w)[i + 1] == 10 /* Float64 */) f64 = 1;
    if (op == 16 /* OpExecutionMode */ && len == 4 &&
        (*w)[i + 2] == 4461 /* SignedZeroInfNanPreserve */ && (*w)[i + 3] == 32)
      at = i + len;
    if (op == 54 /* OpFunction */) break;
    i += len;
  }
  if (!f64 || !at) return 0;
  uint32_t *c = (uint32_t *)malloc((*n + 4) * sizeof(uint32_t));
  if (!c) return -1;
  memcpy(c, *w, at * sizeof(uint32_t));
  uint32_t mode[4] = {(4u << 16) | 16u, (*w)[at - 3], 4461u, 64u};
  memcpy(c + at, mode, sizeof mode);
  memcpy(c + at + 4, *w + at, (*n - at) * sizeof(uint32_t));
  free(*w);
  *w = c;
  *n += 4;
  return 0;
}

dml_status_t dml_codegen_spirv(const char *glsl, const char *kernel_name,
                               uint32_t **out_words, size_t *out_n_words) {
  pthread_once(&g_once, init_once);
  if (!g_init_ok)
    return dml_status_make(DML_STATUS_INTERNAL, "codegen.vulkan",
                           "glslang_initialize_process failed");
  glslang_input_t in;
  memset(&in, 0, sizeof in);
  in.language = GLSLANG_SOURCE_GLSL;
  in.stage = GLSLANG_STAGE_COMPUTE;
  in.client = GLSLANG_CLIENT_VULKAN;
  in.client_version = GLSLANG_TARGET_VULKAN_1_1;
  in.target_language = GLSLANG_TARGET_SPV;
  in.target_language_version = GLSLANG_TARGET_SPV_1_3;
  in.code = glsl;
  in.default_version = 450;
  in.default_profile = GLSLANG_NO_PROFILE;
  in.messages =
      (glslang_messages_t)(GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT);
  in.resource = glslang_default_resource();
  dml_status_t s = DML_OK;
  pthread_mutex_lock(&g_lock);
  glslang_shader_t *sh = glslang_shader_create(&in);
  glslang_program_t *prog = NULL;
  if (!sh) {
    s = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen.vulkan",
                        "glslang_shader_create");
  } else if (!glslang_shader_preprocess(sh, &in) || !glslang_shader_parse(sh, &in)) {
    s = fail(kernel_name, "glslang rejected the generated GLSL",
             glslang_shader_get_info_log(sh));
  } else {
    prog = glslang_program_create();
    glslang_program_add_shader(prog, sh);
    if (!glslang_program_link(prog,
                              GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT)) {
      s = fail(kernel_name, "glslang failed to link", glslang_program_get_info_log(prog));
    } else {
      glslang_spv_options_t o;
      memset(&o, 0, sizeof o);
      o.disable_optimizer = false; /* glslang runs SPIRV-Tools' optimizer */
      o.strip_debug_info = true;
      glslang_program_SPIRV_generate_with_options(prog, GLSLANG_STAGE_COMPUTE, &o);
      size_t n = glslang_program_SPIRV_get_size(prog);
      uint32_t *w = n ? (uint32_t *)malloc(n * sizeof(uint32_t)) : NULL;
      if (!w) {
        s = fail(kernel_name, "glslang produced no SPIR-V",
                 glslang_program_SPIRV_get_messages(prog));
      } else {
        glslang_program_SPIRV_get(prog, w);
        if (add_f64_preserve(&w, &n))
          s = dml_status_make(DML_STATUS_RESOURCE_EXHAUSTED, "codegen.vulkan",
                              "out of memory");
        else
          s = validate(w, n, kernel_name);
        if (s) {
          free(w);
        } else {
          *out_words = w;
          *out_n_words = n;
        }
      }
    }
  }
  if (prog) glslang_program_delete(prog);
  if (sh) glslang_shader_delete(sh);
  pthread_mutex_unlock(&g_lock);
  return s;
}
